// SPDX-License-Identifier: GPL-2.0
/*
 * KEVENT_INODE through the recorder: both backends (fanotify, inotify) on
 * both filesystems (tmpfs at /dev/shm, ext4 at /var/tmp or /tmp); a
 * combination that is not available here skips with the reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <criterion/criterion.h>

#include "origins.h"
#include "recorder.h"

#define WAIT_MS 5000

static char dir[256];
static int backend;

static void need_fs(const char *base, long magic, const char *name)
{
	struct statfs sfs;

	if (statfs(base, &sfs) < 0 || sfs.f_type != magic)
		cr_skip_test("%s is not %s here: this combination is not tested", base, name);
	snprintf(dir, sizeof(dir), "%s/korigins-inodeXXXXXX", base);
	cr_assert_neq(mkdtemp(dir), NULL, "mkdtemp in %s: %s", base, strerror(errno));
}

static void start(enum korigins_inode_backend be)
{
	struct korigins_config cfg = { .inode_backend = be };
	struct korigins_stats st;

	rec_setup_cfg(&cfg);
	korigins_stats(&st);
	cr_assert_eq(st.inode_backend, (__u32)be, "backend %d not available", be);
	backend = be;
}

static void rm_tree(void)
{
	char cmd[300];

	if (!dir[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		cr_log_warn("could not remove %s", dir);
	dir[0] = '\0';
}

static void fini(void)
{
	rm_tree();
	rec_teardown();
}

static int add_inode(struct kitem *k, int fd, __u32 event, struct korigin_result *res)
{
	struct ukevent uk = {
		.id.raw = { (__u32)fd, 0 },
		.type = KEVENT_INODE,
		.event = event,
	};
	struct kcaller self = rec_self();

	return rec_add(k, &uk, &self, res);
}

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static void create_and_remove(void)
{
	struct korigin_result res;
	struct korigins_stats st;
	struct kitem k;
	char f[300];
	int dfd = open(dir, O_RDONLY | O_DIRECTORY), fd;

	cr_assert_geq(dfd, 0);
	cr_assert_eq(add_inode(&k, dfd, KEVENT_INODE_CREATE | KEVENT_INODE_REMOVE, &res), 0);
	korigins_sync_closer();
	korigins_stats(&st);
	cr_expect_eq(st.closer_pending, 0);
	cr_expect_eq(st.inode_objects, 1);
	path_of(f, sizeof(f), "a");
	fd = open(f, O_CREAT | O_WRONLY, 0600);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_geq(rec_wait_fires(&k, 1, WAIT_MS), 1);
	cr_expect_eq(k.last.ret_data[0], KEVENT_INODE_CREATE);
	cr_assert(rec_dequeue(&k, NULL));
	cr_assert_eq(unlink(f), 0);
	cr_assert_geq(rec_wait_fires(&k, 2, WAIT_MS), 2);
	cr_expect_eq(k.last.ret_data[0], KEVENT_INODE_REMOVE);
	cr_expect_eq(k.last.ret_flags, 0);
	cr_assert(rec_dequeue(&k, NULL));
	path_of(f, sizeof(f), "sub");
	cr_assert_eq(mkdir(f, 0700), 0);
	cr_assert_geq(rec_wait_fires(&k, 3, WAIT_MS), 3, "mkdir is a CREATE too");
	cr_expect_eq(k.last.ret_data[0], KEVENT_INODE_CREATE);
	rec_remove(&k);
	cr_expect_eq(k.violations, 0);
	close(dfd);
}

static void mask_filters(void)
{
	struct korigin_result res;
	struct kitem k;
	char f[300];
	int dfd = open(dir, O_RDONLY | O_DIRECTORY), fd;

	cr_assert_geq(dfd, 0);
	cr_assert_eq(add_inode(&k, dfd, KEVENT_INODE_REMOVE, &res), 0);
	path_of(f, sizeof(f), "b");
	fd = open(f, O_CREAT | O_WRONLY, 0600);
	cr_assert_geq(fd, 0);
	close(fd);
	rec_idle(30);
	cr_expect_eq(rec_fires(&k), 0, "CREATE was not asked for");
	cr_assert_eq(unlink(f), 0);
	cr_assert_eq(rec_wait_fires(&k, 1, WAIT_MS), 1);
	cr_expect_eq(k.last.ret_data[0], KEVENT_INODE_REMOVE);
	rec_remove(&k);
	close(dfd);
}

/* MODIFY changes which events fire from then on (the mark stays). */
static void modify_changes_mask(void)
{
	struct korigin_result res;
	struct kitem k;
	char f[300];
	int dfd = open(dir, O_RDONLY | O_DIRECTORY), fd;

	cr_assert_geq(dfd, 0);
	cr_assert_eq(add_inode(&k, dfd, KEVENT_INODE_CREATE, &res), 0);
	cr_assert_eq(rec_modify(&k, KEVENT_INODE_REMOVE, 0, &res), 0);
	path_of(f, sizeof(f), "m");
	fd = open(f, O_CREAT | O_WRONLY, 0600);
	cr_assert_geq(fd, 0);
	close(fd);
	rec_idle(30);
	cr_expect_eq(rec_fires(&k), 0, "CREATE was modified away");
	cr_assert_eq(unlink(f), 0);
	cr_assert_eq(rec_wait_fires(&k, 1, WAIT_MS), 1, "REMOVE was modified in");
	cr_expect_eq(k.last.ret_data[0], KEVENT_INODE_REMOVE);
	rec_remove(&k);
	close(dfd);
}

/* The watched file removed while the client still holds its fd: BROKEN. */
static void watched_file_removed(void)
{
	struct korigin_result res;
	struct kitem k;
	char f[300];
	int fd;

	path_of(f, sizeof(f), "c");
	fd = open(f, O_CREAT | O_RDWR, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(add_inode(&k, fd, KEVENT_INODE_REMOVE, &res), 0);
	cr_assert_eq(unlink(f), 0);
	cr_assert_eq(rec_wait_fires(&k, 1, WAIT_MS), 1, "removal must be seen with the fd still open");
	cr_expect_eq(k.last.ret_flags, KEVENT_RET_BROKEN);
	cr_expect_eq(k.last.ret_data[0], KEVENT_INODE_REMOVE);
	cr_expect_eq((int)k.last.ret_data[1], -ENOENT);
	cr_expect(k.stopped);
	rec_remove(&k);
	close(fd);
}

/*
 * The watched directory removed while the client holds its fd: Linux sends
 * nothing to the directory itself until its last reference goes (rmdir
 * sends no attribute event), so the kevent turns BROKEN at the client's
 * close(), which is possible only because the daemon keeps no duplicate.
 */
static void watched_dir_removed(void)
{
	struct korigin_result res;
	struct kitem k;
	char d[300];
	int dfd;

	path_of(d, sizeof(d), "gone");
	cr_assert_eq(mkdir(d, 0700), 0);
	dfd = open(d, O_RDONLY | O_DIRECTORY);
	cr_assert_geq(dfd, 0);
	cr_assert_eq(add_inode(&k, dfd, KEVENT_INODE_CREATE | KEVENT_INODE_REMOVE, &res), 0);
	korigins_sync_closer();
	cr_assert_eq(rmdir(d), 0);
	rec_idle(30);
	cr_expect_eq(rec_fires(&k), 0, "rmdir alone reaches the directory only at its last close");
	close(dfd);
	cr_assert_eq(rec_wait_fires(&k, 1, WAIT_MS), 1, "last close of the removed directory");
	cr_expect_eq(k.last.ret_flags, KEVENT_RET_BROKEN);
	cr_expect_eq(k.last.ret_data[0], KEVENT_INODE_REMOVE);
	cr_expect_eq((int)k.last.ret_data[1], -ENOENT);
	rec_remove(&k);
}

static void refused_fds(void)
{
	struct korigin_result res;
	struct kitem k;
	char f[300];
	int fd, p[2];

	fd = open(dir, O_PATH | O_DIRECTORY);
	cr_assert_geq(fd, 0);
	cr_expect_eq(add_inode(&k, fd, KEVENT_INODE_CREATE, &res), -EINVAL, "O_PATH (B8)");
	close(fd);
	path_of(f, sizeof(f), "w");
	fd = open(f, O_CREAT | O_WRONLY, 0600);
	cr_assert_geq(fd, 0);
	cr_expect_eq(add_inode(&k, fd, KEVENT_INODE_REMOVE, &res), -EINVAL, "not open for reading");
	close(fd);
	cr_assert_eq(pipe(p), 0);
	cr_expect_eq(add_inode(&k, p[0], KEVENT_INODE_CREATE, &res), -EINVAL, "a pipe");
	close(p[0]);
	close(p[1]);
	cr_expect_eq(add_inode(&k, 987654, KEVENT_INODE_CREATE, &res), -EBADF);
}

/* Two kevents on one directory share one mark; both fire. */
static void shared_mark(void)
{
	struct korigin_result res;
	struct korigins_stats st;
	struct kitem a, b;
	char f[300];
	int d1 = open(dir, O_RDONLY | O_DIRECTORY), d2 = open(dir, O_RDONLY | O_DIRECTORY), fd;

	cr_assert(d1 >= 0 && d2 >= 0);
	cr_assert_eq(add_inode(&a, d1, KEVENT_INODE_CREATE, &res), 0);
	cr_assert_eq(add_inode(&b, d2, KEVENT_INODE_CREATE, &res), 0);
	korigins_stats(&st);
	cr_expect_eq(st.inode_objects, 1);
	cr_expect_eq(st.inode_watches, 2);
	path_of(f, sizeof(f), "s");
	fd = open(f, O_CREAT | O_WRONLY, 0600);
	close(fd);
	cr_expect_eq(rec_wait_fires(&a, 1, WAIT_MS), 1);
	cr_expect_eq(rec_wait_fires(&b, 1, WAIT_MS), 1);
	rec_remove(&a);
	rec_remove(&b);
	korigins_stats(&st);
	cr_expect_eq(st.inode_objects, 0);
	close(d1);
	close(d2);
}

/*
 * The kernel's marks (fanotify) or watches (inotify) on inode ino, counted
 * from /proc/self/fdinfo of this process's notification fds: what the
 * daemon leaves in the kernel, not what it counts.
 */
static int kernel_marks_on(ino_t ino)
{
	char want[40], link[64], path[64], line[512];
	int n = 0;

	snprintf(want, sizeof(want), " ino:%lx ", (unsigned long)ino);
	for (int fd = 0; fd < 1024; fd++) {
		ssize_t len;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, link, sizeof(link) - 1);
		if (len < 0)
			continue;
		link[len] = '\0';
		if (!strstr(link, "fanotify") && !strstr(link, "inotify"))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			n += strstr(line, want) != NULL;
		if (f)
			fclose(f);
	}
	return n;
}

/* The last kevent on an object gone: its mark leaves the kernel too. */
static void unmark_leaves_no_kernel_mark(void)
{
	struct korigin_result res;
	struct stat st;
	struct kitem a;
	char f[300];
	int fd;

	path_of(f, sizeof(f), "unmarked");
	fd = open(f, O_CREAT | O_RDWR, 0600);
	cr_assert(fd >= 0 && fstat(fd, &st) == 0);
	cr_assert_eq(add_inode(&a, fd, KEVENT_INODE_REMOVE, &res), 0);
	cr_assert_eq(kernel_marks_on(st.st_ino), 1, "no kernel mark on the watched file");
	rec_remove(&a);
	cr_assert_eq(kernel_marks_on(st.st_ino), 0, "the kernel mark outlived the kevent");
	close(fd);
}

static int add_rev4(struct kitem *k, int fd, __u32 event)
{
	struct ukevent uk = {
		.id.raw = { (__u32)fd, 0 },
		.type = KEVENT_INODE,
		.event = event,
	};
	struct kcaller self = rec_self();
	struct korigin_result res;

	return rec_add_rev(k, 4, &uk, &self, &res);
}

/* The next report of k, asserted: ret_flags 0, ret_data {want, 0}. */
static void next_note(struct kitem *k, unsigned int *n, __u32 want, const char *what)
{
	unsigned int want_fires = ++*n;

	cr_assert_geq(rec_wait_fires(k, want_fires, WAIT_MS), want_fires, "%s: no report", what);
	cr_expect_eq(k->last.ret_flags, 0u, "%s: ret_flags %#x", what, k->last.ret_flags);
	cr_expect_eq(k->last.ret_data[0], want, "%s: %#x, want %#x", what, k->last.ret_data[0],
		     want);
	cr_expect_eq(k->last.ret_data[1], 0u, "%s: ret_data[1] %d", what, (int)k->last.ret_data[1]);
	rec_dequeue(k, NULL);
}

/*
 * D68 on a file: a revision-1 kevent first (the object's mark without the
 * notes), then a revision-4 one on the same object widens it.  The
 * revision-1 kevent, asking every bit, hears only the removal, BROKEN;
 * the revision-4 one every note and DELETE.
 */
static void notes_widen_shared(void)
{
	struct korigin_result res;
	struct korigins_stats st;
	struct kitem old, k;
	unsigned int n = 0;
	char f[300], g[300], h[300];
	int fd;

	path_of(f, sizeof(f), "n");
	path_of(g, sizeof(g), "n2");
	path_of(h, sizeof(h), "n3");
	fd = open(f, O_CREAT | O_RDWR, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "ab", 2), 2);
	cr_assert_eq(add_inode(&old, fd, 0xff, &res), 0);
	cr_assert_eq(add_rev4(&k, fd, KEVENT_INODE_NOTES), 0);
	korigins_stats(&st);
	cr_expect_eq(st.inode_objects, 1, "one object for both");
	cr_assert_eq(write(fd, "c", 1), 1);
	next_note(&k, &n, KEVENT_INODE_WRITE | KEVENT_INODE_EXTEND, "append");
	cr_assert_eq(pwrite(fd, "x", 1, 0), 1);
	next_note(&k, &n, KEVENT_INODE_WRITE, "overwrite");
	cr_assert_eq(fchmod(fd, 0640), 0);
	next_note(&k, &n, KEVENT_INODE_ATTRIB, "chmod");
	cr_assert_eq(link(f, g), 0);
	next_note(&k, &n, KEVENT_INODE_LINK, "link");
	cr_assert_eq(rename(f, h), 0);
	next_note(&k, &n, KEVENT_INODE_RENAME, "rename");
	cr_assert_eq(unlink(g), 0);
	next_note(&k, &n, KEVENT_INODE_LINK, "unlink of the other name");
	cr_expect_eq(rec_fires(&old), 0u, "revision 1 heard a note");
	cr_assert_eq(unlink(h), 0);
	next_note(&k, &n, KEVENT_INODE_DELETE, "removed, fd open");
	cr_assert_eq(write(fd, "y", 1), 1);
	cr_expect_eq(rec_wait_fires(&k, n + 1, 200), n, "a report after DELETE");
	cr_assert_eq(rec_wait_fires(&old, 1, WAIT_MS), 1u);
	cr_expect_eq(old.last.ret_flags, KEVENT_RET_BROKEN);
	cr_expect_eq(old.last.ret_data[0], KEVENT_INODE_REMOVE);
	cr_expect_eq(k.violations + old.violations, 0u);
	rec_remove(&old);
	rec_remove(&k);
	close(fd);
}

/* D68 on a directory: entries are WRITE, a subdirectory LINK too, chmod ATTRIB. */
static void notes_dir(void)
{
	struct kitem k;
	unsigned int n = 0;
	char f[300];
	int dfd = open(dir, O_RDONLY | O_DIRECTORY), fd;

	cr_assert_geq(dfd, 0);
	cr_assert_eq(add_rev4(&k, dfd, KEVENT_INODE_NOTES), 0);
	path_of(f, sizeof(f), "e");
	fd = open(f, O_CREAT | O_WRONLY, 0600);
	cr_assert_geq(fd, 0);
	next_note(&k, &n, KEVENT_INODE_WRITE, "file created");
	cr_assert_eq(write(fd, "x", 1), 1);
	close(fd);
	cr_assert_eq(unlink(f), 0);
	next_note(&k, &n, KEVENT_INODE_WRITE, "file written, then removed: the removal only");
	path_of(f, sizeof(f), "sd");
	cr_assert_eq(mkdir(f, 0700), 0);
	next_note(&k, &n, KEVENT_INODE_WRITE | KEVENT_INODE_LINK, "subdirectory");
	cr_assert_eq(fchmod(dfd, 0750), 0);
	next_note(&k, &n, KEVENT_INODE_ATTRIB, "chmod");
	cr_assert_eq(rmdir(f), 0);
	next_note(&k, &n, KEVENT_INODE_WRITE | KEVENT_INODE_LINK, "subdirectory removed");
	cr_expect_eq(k.violations, 0u);
	rec_remove(&k);
	close(dfd);
}

#define INODE_SUITE(name, be, base, magic, fsname)				\
	static void init_##name(void)						\
	{									\
		start(be);							\
		need_fs(base, magic, fsname);					\
	}									\
	TestSuite(name, .init = init_##name, .fini = fini);			\
	Test(name, create_and_remove) { create_and_remove(); }			\
	Test(name, mask_filters) { mask_filters(); }				\
	Test(name, modify_changes_mask) { modify_changes_mask(); }		\
	Test(name, watched_file_removed) { watched_file_removed(); }		\
	Test(name, watched_dir_removed) { watched_dir_removed(); }		\
	Test(name, refused_fds) { refused_fds(); }				\
	Test(name, shared_mark) { shared_mark(); }				\
	Test(name, unmark_leaves_no_kernel_mark) { unmark_leaves_no_kernel_mark(); } \
	Test(name, notes_widen_shared) { notes_widen_shared(); }		\
	Test(name, notes_dir) { notes_dir(); }

INODE_SUITE(fanotify_tmpfs, KORIGINS_INODE_FANOTIFY, "/dev/shm", TMPFS_MAGIC, "tmpfs")
INODE_SUITE(inotify_tmpfs, KORIGINS_INODE_INOTIFY, "/dev/shm", TMPFS_MAGIC, "tmpfs")
INODE_SUITE(fanotify_ext4, KORIGINS_INODE_FANOTIFY, "/var/tmp", EXT4_SUPER_MAGIC, "ext4")
INODE_SUITE(inotify_ext4, KORIGINS_INODE_INOTIFY, "/var/tmp", EXT4_SUPER_MAGIC, "ext4")
