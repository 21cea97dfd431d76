// SPDX-License-Identifier: GPL-2.0
/*
 * The inode origin (A3 extension, A7, B8): id.raw[0] = an fd open for
 * reading; CREATE when an entry is created in a watched directory, REMOVE
 * when an entry is removed from it or the watched file itself goes away.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ktest.h"

#define I(x) KEVENT_INODE_##x

static void mkdir_tmp(char *dir)
{
	strcpy(dir, "/tmp/kt-inode-XXXXXX");
	cr_assert(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
}

/* A directory fd to watch, asserted. */
static int open_dir(const char *dir)
{
	int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	cr_assert(d >= 0, "open %s: %s", dir, strerror(errno));
	return d;
}

/* Creates dir/name (path receives it); returns the fd open with flags, asserted. */
static int create_in(const char *dir, const char *name, char *path, size_t len, int flags)
{
	snprintf(path, len, "%s/%s", dir, name);
	int f = open(path, O_CREAT | flags | O_CLOEXEC, 0600);

	cr_assert(f >= 0, "create %s: %s", path, strerror(errno));
	return f;
}

KTEST(inode, dir_create)
{
	kt_require_type(KEVENT_INODE);
	int kfd = kt_open(O_RDWR);
	char dir[64], path[128];

	mkdir_tmp(dir);
	int d = open_dir(dir);
	kt_add_queued(kfd, kt_uk(KEVENT_INODE, (__u32)d, 0, I(CREATE), 0, 1));
	kt_assert_quiet(kfd, 100, "untouched directory");
	int f = create_in(dir, "a", path, sizeof(path), O_WRONLY);
	struct ukevent e = kt_get_one(kfd, "file created");
	cr_assert_eq(e.type, (__u32)KEVENT_INODE);
	cr_assert_eq(e.id.raw[0], (__u32)d);
	cr_assert_eq(e.user[0], 1u);
	cr_assert_eq(e.ret_flags, (__u32)KEVENT_RET_DONE, "CREATE ret_flags %#x", e.ret_flags);
	/* Writing to it is no CREATE. */
	kt_get(kfd, 0, 4, 0, (struct ukevent[4]){ 0 });
	cr_assert_eq(write(f, "x", 1), 1);
	close(f);
	kt_assert_quiet(kfd, 200, "write to an existing file");
	/* A second creation re-fires (non-ONESHOT). */
	snprintf(path, sizeof(path), "%s/b", dir);
	cr_assert_eq(mkdir(path, 0700), 0);
	kt_get_one(kfd, "directory created");
	rmdir(path);
	snprintf(path, sizeof(path), "%s/a", dir);
	unlink(path);
	close(d);
	rmdir(dir);
	close(kfd);
}

KTEST(inode, dir_remove)
{
	kt_require_type(KEVENT_INODE);
	int kfd = kt_open(O_RDWR);
	char dir[64], path[128];

	mkdir_tmp(dir);
	int f = create_in(dir, "victim", path, sizeof(path), O_WRONLY);
	close(f);
	int d = open_dir(dir);
	kt_add_queued(kfd, kt_uk(KEVENT_INODE, (__u32)d, 0, I(REMOVE), KEVENT_REQ_ONESHOT, 2));
	char other[128];
	f = create_in(dir, "new", other, sizeof(other), O_WRONLY);
	close(f);
	kt_assert_quiet(kfd, 200, "a creation is no REMOVE");
	cr_assert_eq(unlink(path), 0);
	struct ukevent e = kt_get_one(kfd, "entry removed");
	cr_assert_eq(e.user[0], 2u);
	cr_assert(e.ret_flags & KEVENT_RET_DONE);
	unlink(other);
	close(d);
	rmdir(dir);
	close(kfd);
}

/* The watched file itself removed (the daemon keeps a handle, not the file: A7). */
KTEST(inode, file_remove)
{
	kt_require_type(KEVENT_INODE);
	int kfd = kt_open(O_RDWR);
	char dir[64], path[128];

	mkdir_tmp(dir);
	int f = create_in(dir, "watched", path, sizeof(path), O_RDWR);
	kt_add_queued(kfd, kt_uk(KEVENT_INODE, (__u32)f, 0, I(REMOVE), 0, 3));
	close(f);	/* no open file of it is left anywhere */
	kt_assert_quiet(kfd, 200, "file untouched");
	cr_assert_eq(unlink(path), 0);
	struct ukevent e = kt_get_one(kfd, "watched file removed");
	cr_assert_eq(e.user[0], 3u);
	cr_assert(e.ret_flags & KEVENT_RET_DONE, "ret_flags %#x", e.ret_flags);
	rmdir(dir);
	close(kfd);
}

/* B8: an O_PATH fd is refused per entry; a bad fd is -EBADF. */
KTEST(inode, opath_and_bad_fd_refused)
{
	kt_require_type(KEVENT_INODE);
	int kfd = kt_open(O_RDWR);
	char dir[64];

	mkdir_tmp(dir);
	int op = open(dir, O_PATH | O_CLOEXEC);
	int dead = dup(op);
	close(dead);
	cr_assert(op >= 0);
	struct ukevent uk[2] = { kt_uk(KEVENT_INODE, (__u32)op, 0, I(CREATE), 0, 1),
				 kt_uk(KEVENT_INODE, (__u32)dead, 0, I(CREATE), 0, 2) };
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 2, uk), 2);
	cr_assert_eq(uk[0].ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE),
		     "O_PATH fd accepted (B8): ret_flags %#x", uk[0].ret_flags);
	cr_assert((int)uk[0].ret_data[1] < 0, "O_PATH: ret_data[1] %d", (int)uk[0].ret_data[1]);
	cr_assert_eq(uk[1].ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE));
	cr_assert_eq(uk[1].ret_data[1], (__u32)-EBADF, "bad fd: %d", (int)uk[1].ret_data[1]);
	close(op);
	rmdir(dir);
	close(kfd);
}

/* B8: an fd not open for reading, and one of neither a file nor a directory, are refused. */
KTEST(inode, write_only_and_pipe_refused)
{
	kt_require_type(KEVENT_INODE);
	int kfd = kt_open(O_RDWR), p[2];
	char dir[64], path[128];

	mkdir_tmp(dir);
	int w = create_in(dir, "w", path, sizeof(path), O_WRONLY);
	kt_pipe(p);
	struct ukevent uk[2] = { kt_uk(KEVENT_INODE, (__u32)w, 0, I(REMOVE), 0, 1),
				 kt_uk(KEVENT_INODE, (__u32)p[0], 0, I(CREATE), 0, 2) };
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 2, uk), 2, "both answered by ADD");
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(uk[i].ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE),
			     "%s accepted: ret_flags %#x", i ? "pipe" : "O_WRONLY", uk[i].ret_flags);
		cr_assert_eq(uk[i].ret_data[1], (__u32)-EINVAL, "%s: ret_data[1] %d",
			     i ? "pipe" : "O_WRONLY", (int)uk[i].ret_data[1]);
	}
	cr_assert_eq(kt_queue_kevents(kfd), 0u, "a refused entry registered");
	close(p[0]);
	close(p[1]);
	close(w);
	unlink(path);
	rmdir(dir);
	close(kfd);
}

/*
 * abi.md 9: a watched file removed while the client holds its fd is seen at
 * once; a watched directory removed while held, at the client's close():
 * both turn BROKEN with REMOVE and -ENOENT.
 */
KTEST(inode, removed_while_held_breaks)
{
	kt_require_type(KEVENT_INODE);
	int kfd = kt_open(O_RDWR);
	char dir[64], path[128], sub[128];

	mkdir_tmp(dir);
	int f = create_in(dir, "f", path, sizeof(path), O_RDWR);
	kt_add_queued(kfd, kt_uk(KEVENT_INODE, (__u32)f, 0, I(REMOVE), 0, 1));
	cr_assert_eq(unlink(path), 0);
	struct ukevent e = kt_get_one(kfd, "watched file removed, its fd held");
	cr_assert_eq(e.user[0], 1u);
	cr_assert_eq(e.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE), "file: ret_flags %#x",
		     e.ret_flags);
	cr_assert_eq(e.ret_data[0], (__u32)I(REMOVE), "file: ret_data[0] %#x", e.ret_data[0]);
	cr_assert_eq(e.ret_data[1], (__u32)-ENOENT, "file: ret_data[1] %d", (int)e.ret_data[1]);
	snprintf(sub, sizeof(sub), "%s/d", dir);
	cr_assert_eq(mkdir(sub, 0700), 0);
	int d = open_dir(sub);
	kt_add_queued(kfd, kt_uk(KEVENT_INODE, (__u32)d, 0, I(REMOVE), 0, 2));
	cr_assert_eq(rmdir(sub), 0);
	close(d);
	e = kt_get_one(kfd, "watched directory removed, then its fd closed");
	cr_assert_eq(e.user[0], 2u);
	cr_assert_eq(e.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE), "dir: ret_flags %#x",
		     e.ret_flags);
	cr_assert_eq(e.ret_data[0], (__u32)I(REMOVE), "dir: ret_data[0] %#x", e.ret_data[0]);
	cr_assert_eq(e.ret_data[1], (__u32)-ENOENT, "dir: ret_data[1] %d", (int)e.ret_data[1]);
	close(f);
	rmdir(dir);
	close(kfd);
}

/* A7: the inode kevent does not keep the client's directory fd open. */
KTEST(inode, survives_client_close)
{
	kt_require_type(KEVENT_INODE);
	int kfd = kt_open(O_RDWR);
	char dir[64], path[128];

	mkdir_tmp(dir);
	int d = open_dir(dir);
	kt_add_queued(kfd, kt_uk(KEVENT_INODE, (__u32)d, 0, I(CREATE), 0, 4));
	close(d);
	cr_assert_eq(kt_queue_kevents(kfd), 1u, "close() removed the inode kevent");
	int f = create_in(dir, "c", path, sizeof(path), O_WRONLY);
	close(f);
	struct ukevent e = kt_get_one(kfd, "create after the client closed its fd");
	cr_assert_eq(e.user[0], 4u);
	unlink(path);
	rmdir(dir);
	close(kfd);
}

/*
 * Revision 1 is take13 (D40): ALWAYS_QUEUE (D42) and LEVEL (D43) are
 * unknown bits there; an INODE kevent with them is an ordinary one (A1).
 */
static void inode_with_req_flags(__u32 req_flags, __u32 cookie)
{
	kt_require_type(KEVENT_INODE);
	int kfd = kt_open(O_RDWR);
	char dir[64], path[128];

	mkdir_tmp(dir);
	int d = open_dir(dir);
	struct ukevent uk = kt_uk(KEVENT_INODE, (__u32)d, 0, I(CREATE), req_flags, cookie);

	kt_add_queued(kfd, uk);
	cr_assert_eq(kt_queue_ready(kfd), 0u, "ready at ADD");
	int f = create_in(dir, "a", path, sizeof(path), O_WRONLY);
	struct ukevent e = kt_get_one(kfd, "file created");

	cr_assert_eq(e.user[0], cookie);
	cr_assert_eq(e.ret_data[0], (__u32)I(CREATE), "ret_data[0] %#x", e.ret_data[0]);
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &uk, 0);	/* checked as at ADD */
	cr_assert_eq(uk.ret_flags, (__u32)KEVENT_RET_DONE, "MODIFY: %#x, ret_data[1] %d",
		     uk.ret_flags, (int)uk.ret_data[1]);
	close(f);
	unlink(path);
	close(d);
	rmdir(dir);
	close(kfd);
}

/* D42: ALWAYS_QUEUE on revision 1: no effect. */
KTEST_REVS(inode, always_queue_ignored_on_rev1, 1, 1)
{
	inode_with_req_flags(KEVENT_REQ_ALWAYS_QUEUE, 5);
}

/* D43: LEVEL on revision 1 is accepted (not -EINVAL, as on revision 2). */
KTEST_REVS(inode, level_ignored_on_rev1, 1, 1)
{
	inode_with_req_flags(KEVENT_REQ_LEVEL, 6);
}

/*
 * A write lease on path through a new O_RDONLY fd, tried until ms pass:
 * 0 once it is granted (and released), -EAGAIN while another open file
 * description of the file exists, another -errno where leases do not work.
 */
static int write_lease_within(const char *path, unsigned int ms)
{
	int r = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	__u64 end = kt_now_ns() + KT_MS(ms);

	cr_assert(r >= 0, "open %s: %s", path, strerror(errno));
	for (;;) {
		if (fcntl(r, F_SETLEASE, F_WRLCK) == 0) {
			fcntl(r, F_SETLEASE, F_UNLCK);
			err = 0;
			break;
		}
		err = -errno;
		if (err != -EAGAIN || kt_now_ns() >= end)
			break;
		kt_sleep_ms(2);
	}
	close(r);
	return err;
}

/*
 * A7: an INODE kevent keeps a file handle, not an open file.  Once the
 * client closed the fd it watched (open O_RDWR), no open file of it is
 * left, which a write lease shows: the kernel grants one only while no
 * other open file description has the file open for writing.  The daemon
 * closes its duplicate on a thread of its own (B3), so this waits for the
 * lease, bounded.
 */
KTEST(inode, watched_file_not_kept_open)
{
	kt_require_type(KEVENT_INODE);
	int kfd = kt_open(O_RDWR), err;
	char dir[64], path[128];

	mkdir_tmp(dir);
	int f = create_in(dir, "w", path, sizeof(path), O_RDWR);

	close(f);
	err = write_lease_within(path, 0);
	if (err)
		cr_skip_test("no write lease on %s before the kevent: %s", path, strerror(-err));
	f = open(path, O_RDWR | O_CLOEXEC);
	cr_assert(f >= 0);
	kt_add_queued(kfd, kt_uk(KEVENT_INODE, (__u32)f, 0, I(REMOVE), 0, 7));
	close(f);
	err = write_lease_within(path, 10000);
	cr_assert_eq(err, 0, "the watched file is still open somewhere: %s", strerror(-err));
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	unlink(path);
	struct ukevent e = kt_get_one(kfd, "the watched file removed");

	cr_assert_eq(e.user[0], 7u);
	rmdir(dir);
	close(kfd);
}

/*
 * From revision 2 on: no LEVEL on INODE (D43), every watcher fires (D44).
 */

/* D43: an INODE kevent takes no LEVEL, at ADD nor at MODIFY. */
KTEST_REVS(inode, level_on_inode_einval_at_add_and_modify, 2, KTEST_OPEN)
{
	int kfd, d;
	struct ukevent uk;
	char dir[] = "/tmp/kt-rev2-XXXXXX";

	kt_require_type(KEVENT_INODE);
	kfd = kt_open(O_RDWR);
	cr_assert(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(d, 0);
	uk = kt_uk(KEVENT_INODE, (__u32)d, 0, KEVENT_INODE_CREATE, KEVENT_REQ_LEVEL, 1);
	kt_ctl1(kfd, KEVENT_CTL_ADD, &uk, 1);
	cr_assert_eq(uk.ret_data[1], (__u32)-EINVAL, "ADD: %d", (int)uk.ret_data[1]);
	uk = kt_uk(KEVENT_INODE, (__u32)d, 0, KEVENT_INODE_CREATE, 0, 1);
	kt_add_queued(kfd, uk);
	uk.req_flags = KEVENT_REQ_LEVEL;
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &uk, 0);
	cr_assert_eq(uk.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE), "MODIFY: %#x",
		     uk.ret_flags);
	cr_assert_eq(uk.ret_data[1], (__u32)-EINVAL, "MODIFY: %d", (int)uk.ret_data[1]);
	close(kfd);
	close(d);
	rmdir(dir);
}

/* D44: every INODE kevent watching one directory fires, in one queue and in two. */
KTEST_REVS(inode, inode_activity_readies_every_watcher, 2, KTEST_OPEN)
{
	int a, b, d, f;
	char dir[] = "/tmp/kt-rev2-XXXXXX", path[64];
	struct ukevent out[4];

	kt_require_type(KEVENT_INODE);
	a = kt_open(O_RDWR);
	b = kt_open(O_RDWR);
	cr_assert(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(d, 0);
	kt_add_queued(a, kt_uk(KEVENT_INODE, (__u32)d, 0, KEVENT_INODE_CREATE, 0, 1));
	kt_add_queued(b, kt_uk(KEVENT_INODE, (__u32)d, 0, KEVENT_INODE_CREATE, 0x2, 2));
	kt_add_queued(a, kt_uk(KEVENT_INODE, (__u32)d, 0, KEVENT_INODE_CREATE, 0, 3));
	snprintf(path, sizeof(path), "%s/x", dir);
	f = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	cr_assert_geq(f, 0);
	cr_assert(kt_wait_ready(a, 2, 5000), "both kevents of one queue");
	cr_assert(kt_wait_ready(b, 1, 5000), "and the other queue's");
	cr_assert_eq(kt_get(a, 0, 4, 0, out), 2);
	cr_assert_eq(kt_get(b, 0, 4, 0, out), 1);
	close(f);
	unlink(path);
	close(a);
	close(b);
	close(d);
	rmdir(dir);
}

/*
 * Revision 4, D68: the notes WRITE, EXTEND, ATTRIB, LINK, RENAME and
 * DELETE (kqueue's EVFILT_VNODE).  Each test waits for one report per
 * step, so no two steps merge unless the test means them to.
 */

/* One report of cookie with ret_data[0] == want, DONE only, ret_data[1] 0. */
static void expect_notes(int kfd, __u32 cookie, __u32 want, const char *what)
{
	struct ukevent e = kt_get_one(kfd, what);

	cr_assert_eq(e.user[0], cookie, "%s: cookie %u", what, e.user[0]);
	cr_assert_eq(e.ret_flags, (__u32)KEVENT_RET_DONE, "%s: ret_flags %#x", what, e.ret_flags);
	cr_assert_eq(e.ret_data[0], want, "%s: ret_data[0] %#x, want %#x", what, e.ret_data[0],
		     want);
	cr_assert_eq(e.ret_data[1], 0u, "%s: ret_data[1] %d", what, (int)e.ret_data[1]);
}

/* D68: every note of a file, each alone; an overwrite that does not grow it is WRITE only. */
KTEST_REVS(inode, notes_on_a_file, 4, KTEST_OPEN)
{
	kt_require_type(KEVENT_INODE);
	int kfd = kt_open(O_RDWR);
	char dir[64], path[128], other[128], moved[128];

	mkdir_tmp(dir);
	int f = create_in(dir, "f", path, sizeof(path), O_RDWR);

	cr_assert_eq(write(f, "abcd", 4), 4);	/* before ADD: the size EXTEND starts from */
	kt_add_queued(kfd, kt_uk(KEVENT_INODE, (__u32)f, 0, I(NOTES), 0, 1));
	cr_assert_eq(write(f, "e", 1), 1);
	expect_notes(kfd, 1, I(WRITE) | I(EXTEND), "append");
	cr_assert_eq(pwrite(f, "x", 1, 0), 1);
	expect_notes(kfd, 1, I(WRITE), "overwrite within the size");
	cr_assert_eq(ftruncate(f, 64), 0);
	expect_notes(kfd, 1, I(WRITE) | I(EXTEND), "truncate that grows");
	cr_assert_eq(ftruncate(f, 2), 0);
	expect_notes(kfd, 1, I(WRITE), "truncate that shrinks");
	cr_assert_eq(pwrite(f, "yz", 2, 0), 2);
	expect_notes(kfd, 1, I(WRITE), "overwrite after a shrink, to the same size");
	cr_assert_eq(fchmod(f, 0640), 0);
	expect_notes(kfd, 1, I(ATTRIB), "chmod");
	snprintf(other, sizeof(other), "%s/hard", dir);
	cr_assert_eq(link(path, other), 0, "link: %s", strerror(errno));
	expect_notes(kfd, 1, I(LINK), "link");
	cr_assert_eq(unlink(other), 0);
	expect_notes(kfd, 1, I(LINK), "unlink of the other name");
	snprintf(moved, sizeof(moved), "%s/moved", dir);
	cr_assert_eq(rename(path, moved), 0);
	expect_notes(kfd, 1, I(RENAME), "rename");
	kt_assert_quiet(kfd, 200, "nothing else");
	close(f);
	unlink(moved);
	rmdir(dir);
	close(kfd);
}

/*
 * D68: the notes of a directory: an entry created or removed is WRITE, a
 * subdirectory also LINK; a file inside written is nothing; chmod ATTRIB,
 * rename RENAME, and its removal DELETE (at the client's close, abi.md 9).
 */
KTEST_REVS(inode, notes_on_a_directory, 4, KTEST_OPEN)
{
	kt_require_type(KEVENT_INODE);
	int kfd = kt_open(O_RDWR);
	char top[64], dir[128], moved[128], path[192], sub[192];
	struct ukevent uk;

	mkdir_tmp(top);
	snprintf(dir, sizeof(dir), "%s/d", top);
	cr_assert_eq(mkdir(dir, 0700), 0);
	int d = open_dir(dir);

	uk = kt_uk(KEVENT_INODE, (__u32)d, 0, I(CREATE) | I(REMOVE) | I(NOTES), 0, 2);
	kt_add_queued(kfd, uk);
	int f = create_in(dir, "a", path, sizeof(path), O_WRONLY);
	expect_notes(kfd, 2, I(CREATE) | I(WRITE), "file created");
	cr_assert_eq(write(f, "x", 1), 1);
	close(f);
	kt_assert_quiet(kfd, 200, "a file inside written");
	snprintf(sub, sizeof(sub), "%s/s", dir);
	cr_assert_eq(mkdir(sub, 0700), 0);
	expect_notes(kfd, 2, I(CREATE) | I(WRITE) | I(LINK), "subdirectory created");
	cr_assert_eq(fchmod(d, 0750), 0);
	expect_notes(kfd, 2, I(ATTRIB), "chmod with a subdirectory more");
	cr_assert_eq(rmdir(sub), 0);
	expect_notes(kfd, 2, I(REMOVE) | I(WRITE) | I(LINK), "subdirectory removed");
	cr_assert_eq(unlink(path), 0);
	expect_notes(kfd, 2, I(REMOVE) | I(WRITE), "file removed");
	snprintf(moved, sizeof(moved), "%s/e", top);
	cr_assert_eq(rename(dir, moved), 0);
	expect_notes(kfd, 2, I(RENAME), "directory renamed");
	cr_assert_eq(rmdir(moved), 0);
	close(d);
	expect_notes(kfd, 2, I(DELETE), "directory removed, then its fd closed");
	cr_assert_eq(kt_queue_kevents(kfd), 1u, "DELETE is no BROKEN: still registered");
	rmdir(top);
	close(kfd);
}

/*
 * D68: a file unlinked while the client keeps its fd open: DELETE, without
 * BROKEN; the kevent stays registered, hears nothing more, and REMOVE
 * finds it.
 */
KTEST_REVS(inode, notes_delete_while_the_fd_is_open, 4, KTEST_OPEN)
{
	kt_require_type(KEVENT_INODE);
	int kfd = kt_open(O_RDWR);
	char dir[64], path[128];
	struct ukevent uk;

	mkdir_tmp(dir);
	int f = create_in(dir, "f", path, sizeof(path), O_RDWR);

	uk = kt_uk(KEVENT_INODE, (__u32)f, 0, I(REMOVE) | I(DELETE) | I(WRITE), 0, 3);
	kt_add_queued(kfd, uk);
	cr_assert_eq(unlink(path), 0);
	expect_notes(kfd, 3, I(DELETE), "unlinked, fd open");
	cr_assert_eq(kt_queue_kevents(kfd), 1u, "DELETE is no BROKEN: still registered");
	cr_assert_eq(write(f, "x", 1), 1);
	kt_assert_quiet(kfd, 200, "a write after DELETE");
	kt_remove(kfd, uk);
	cr_assert_eq(kt_queue_kevents(kfd), 0u);
	close(f);
	rmdir(dir);
	close(kfd);
}

/*
 * D68: what comes while a kevent is ready adds up (ORed) until it is
 * delivered, CREATE and REMOVE too.  The backends report the events of one
 * source in order, so a later chmod of another watched file, once its
 * kevent is ready, says the earlier ones were reported.
 */
KTEST_REVS(inode, notes_merge_until_delivered, 4, KTEST_OPEN)
{
	kt_require_type(KEVENT_INODE);
	int kfd = kt_open(O_RDWR);
	char dir[64], wdir[128], path[128], bpath[128], epath[192];
	struct ukevent out[4];
	__u32 got[4] = { 0 };

	mkdir_tmp(dir);
	snprintf(wdir, sizeof(wdir), "%s/w", dir);
	cr_assert_eq(mkdir(wdir, 0700), 0);
	int d = open_dir(wdir);
	int f = create_in(dir, "f", path, sizeof(path), O_RDWR);
	int b = create_in(dir, "barrier", bpath, sizeof(bpath), O_RDWR);

	kt_add_queued(kfd, kt_uk(KEVENT_INODE, (__u32)f, 0, I(NOTES), 0, 1));
	kt_add_queued(kfd, kt_uk(KEVENT_INODE, (__u32)d, 0, I(CREATE) | I(REMOVE) | I(WRITE), 0, 2));
	kt_add_queued(kfd, kt_uk(KEVENT_INODE, (__u32)b, 0, I(ATTRIB), 0, 3));
	cr_assert_eq(write(f, "abc", 3), 3);
	cr_assert_eq(fchmod(f, 0640), 0);
	int e = create_in(wdir, "e", epath, sizeof(epath), O_WRONLY);

	close(e);
	cr_assert_eq(unlink(epath), 0);
	cr_assert_eq(fchmod(b, 0640), 0);
	cr_assert(kt_wait_ready(kfd, 3, 5000), "three kevents ready");
	cr_assert_eq(kt_get(kfd, 0, 4, 0, out), 3);
	for (int i = 0; i < 3; i++) {
		cr_assert(out[i].user[0] >= 1 && out[i].user[0] <= 3, "cookie %u", out[i].user[0]);
		got[out[i].user[0]] = out[i].ret_data[0];
	}
	cr_assert_eq(got[1], I(WRITE) | I(EXTEND) | I(ATTRIB), "file: ret_data[0] %#x", got[1]);
	cr_assert_eq(got[2], I(CREATE) | I(REMOVE) | I(WRITE), "directory: ret_data[0] %#x",
		     got[2]);
	cr_assert_eq(got[3], I(ATTRIB), "barrier: ret_data[0] %#x", got[3]);
	close(f);
	close(b);
	close(d);
	unlink(path);
	unlink(bpath);
	rmdir(wdir);
	rmdir(dir);
	close(kfd);
}

/*
 * D68: below revision 4 the notes are unknown bits: asked, they are never
 * reported; a directory reports CREATE alone, a removed file BROKEN with
 * REMOVE and -ENOENT, DELETE asked or not (take13 sees nothing new).
 */
KTEST_REVS(inode, notes_unknown_below_revision_4, 1, 3)
{
	kt_require_type(KEVENT_INODE);
	int kfd = kt_open(O_RDWR);
	char dir[64], wdir[128], path[128], other[128], moved[128], sub[192];

	mkdir_tmp(dir);
	snprintf(wdir, sizeof(wdir), "%s/w", dir);
	cr_assert_eq(mkdir(wdir, 0700), 0);
	int d = open_dir(wdir);
	int f = create_in(dir, "f", path, sizeof(path), O_RDWR);

	kt_add_queued(kfd, kt_uk(KEVENT_INODE, (__u32)d, 0, 0xff, 0, 1));
	kt_add_queued(kfd, kt_uk(KEVENT_INODE, (__u32)f, 0, 0xff, 0, 2));
	cr_assert_eq(write(f, "abc", 3), 3);
	cr_assert_eq(pwrite(f, "x", 1, 0), 1);
	cr_assert_eq(fchmod(f, 0640), 0);
	snprintf(other, sizeof(other), "%s/hard", dir);
	cr_assert_eq(link(path, other), 0, "link: %s", strerror(errno));
	cr_assert_eq(unlink(other), 0);
	snprintf(moved, sizeof(moved), "%s/moved", dir);
	cr_assert_eq(rename(path, moved), 0);
	cr_assert_eq(fchmod(d, 0750), 0);
	kt_assert_quiet(kfd, 300, "a note below revision 4");
	snprintf(sub, sizeof(sub), "%s/s", wdir);
	cr_assert_eq(mkdir(sub, 0700), 0);
	expect_notes(kfd, 1, I(CREATE), "subdirectory created: CREATE alone");
	cr_assert_eq(unlink(moved), 0);
	struct ukevent e = kt_get_one(kfd, "watched file removed, fd open");

	cr_assert_eq(e.user[0], 2u);
	cr_assert_eq(e.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE), "ret_flags %#x",
		     e.ret_flags);
	cr_assert_eq(e.ret_data[0], (__u32)I(REMOVE), "ret_data[0] %#x", e.ret_data[0]);
	cr_assert_eq(e.ret_data[1], (__u32)-ENOENT, "ret_data[1] %d", (int)e.ret_data[1]);
	close(f);
	close(d);
	rmdir(sub);
	rmdir(wdir);
	rmdir(dir);
	close(kfd);
}
