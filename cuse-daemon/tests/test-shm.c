// SPDX-License-Identifier: GPL-2.0
/*
 * Ring objects and their permissions on the real /dev/shm (design.md B5).
 * Needs root (ownership, ACLs, setuid children); skips loudly without it.
 */
#include <criterion/criterion.h>
#include <acl/libacl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/acl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>

#include "kc-shm.h"

#define UID_A 41234
#define UID_B 41235

static char dir[64];

static void setup(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root: ownership and ACL checks on /dev/shm");
	snprintf(dir, sizeof(dir), "/dev/shm/kcuse-test-%d", (int)getpid());
}

static void rm_tree(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd)) {
		/* Left behind: named after our pid, harmless. */
	}
}

TestSuite(shm, .init = setup, .fini = rm_tree);

static char *acl_text(const char *path)
{
	acl_t acl = acl_get_file(path, ACL_TYPE_ACCESS);
	char *t;

	cr_assert_not_null(acl, "acl_get_file: %s", strerror(errno));
	t = acl_to_any_text(acl, NULL, ',', TEXT_NUMERIC_IDS);
	acl_free(acl);
	return t;
}

/* Run fn as uid in a child; returns its exit status. */
static int as_uid(uid_t uid, int (*fn)(const char *), const char *arg)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		if (setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
			_exit(100);
		_exit(fn(arg));
	}
	cr_assert_gt(pid, 0);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static int try_open_ro(const char *p)
{
	int fd = open(p, O_RDONLY);

	return fd < 0 ? (errno == EACCES ? 1 : 2) : 0;
}

static int try_open_rw(const char *p)
{
	int fd = open(p, O_RDWR);

	return fd < 0 ? (errno == EACCES ? 1 : 2) : 0;
}

/* The reader must not be able to make its object writable (measured risk). */
static int try_fchmod(const char *p)
{
	int fd = open(p, O_RDONLY);

	if (fd < 0)
		return 3;
	return fchmod(fd, 0666) ? (errno == EPERM ? 1 : 2) : 0;
}

static int try_list(const char *p)
{
	int fd = open(p, O_RDONLY | O_DIRECTORY);

	if (fd < 0)
		return errno == EACCES ? 1 : 2;
	return 0;
}

Test(shm, directory_is_root_0711_on_tmpfs)
{
	struct kc_shmdir d;
	unsigned int removed = 99;
	struct statfs sfs;
	struct stat st;

	cr_assert_eq(kc_shmdir_open(&d, dir, &removed), 0);
	cr_assert_eq(removed, 0);
	cr_assert_eq(stat(dir, &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0711);
	cr_assert_eq(st.st_uid, 0);
	cr_assert_eq(statfs(dir, &sfs), 0);
	cr_assert_eq(sfs.f_type, TMPFS_MAGIC);
	cr_assert_eq(as_uid(UID_A, try_list, dir), 1);
	kc_shmdir_close(&d, 1);
	cr_assert_eq(stat(dir, &st), -1);
}

Test(shm, stale_objects_removed_at_start)
{
	struct kc_shmdir d;
	unsigned int removed;
	char p[128];
	int fd;

	cr_assert_eq(mkdir(dir, 0700), 0);
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/ring-%d", dir, i);
		fd = open(p, O_CREAT | O_WRONLY, 0600);
		cr_assert_geq(fd, 0);
		close(fd);
	}
	snprintf(p, sizeof(p), "%s/unrelated", dir);
	close(open(p, O_CREAT | O_WRONLY, 0600));
	cr_assert_eq(kc_shmdir_open(&d, dir, &removed), 0);
	cr_assert_eq(removed, 3);
	cr_assert_eq(access(p, F_OK), 0, "only ring objects are swept");
	snprintf(p, sizeof(p), "%s/ring-1", dir);
	cr_assert_eq(access(p, F_OK), -1);
	kc_shmdir_close(&d, 0);
}

/*
 * One daemon per directory: a second open while the first holds it is
 * -EBUSY and sweeps nothing (its sweep would unlink the live rings); once
 * the first is closed the directory is free again.
 */
Test(shm, second_open_of_a_live_directory_is_ebusy)
{
	struct kc_shmdir a, b;
	struct kc_ring ra;
	unsigned int removed = 7;

	cr_assert_eq(kc_shmdir_open(&a, dir, &removed), 0);
	cr_assert_eq(kc_ring_create(&a, &ra), 0);
	removed = 7;
	cr_assert_eq(kc_shmdir_open(&b, dir, &removed), -EBUSY);
	cr_assert_eq(removed, 7, "a refused open reported a sweep");
	cr_assert_eq(access(ra.path, F_OK), 0, "the refused open swept the live ring");
	kc_ring_destroy(&a, &ra);
	kc_shmdir_close(&a, 0);
	cr_assert_eq(kc_shmdir_open(&b, dir, &removed), 0, "free after the close");
	kc_shmdir_close(&b, 1);
}

Test(shm, refuses_foreign_or_symlinked_directory)
{
	struct kc_shmdir d;
	unsigned int removed;
	char link[80];

	cr_assert_eq(mkdir(dir, 0711), 0);
	cr_assert_eq(chown(dir, UID_A, UID_A), 0);
	cr_assert_eq(kc_shmdir_open(&d, dir, &removed), -EPERM);
	cr_assert_eq(chown(dir, 0, 0), 0);
	snprintf(link, sizeof(link), "%s/lnk", dir);
	cr_assert_eq(symlink("/tmp", link), 0);
	cr_assert_lt(kc_shmdir_open(&d, link, &removed), 0);
}

/*
 * The directory of the per-instance ones: made 0711 and checked like them,
 * and two instances in it sweep and remove only their own.
 */
Test(shm, parent_holds_instances_apart)
{
	struct kc_shmdir a, b;
	struct kc_ring ra, rb;
	unsigned int removed;
	char pa[96], pb[96], lnk[96];
	struct stat st;

	cr_assert_eq(kc_shmdir_parent(dir), 0);
	cr_assert_eq(kc_shmdir_parent(dir), 0, "adopted when it exists");
	cr_assert_eq(stat(dir, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0711);
	snprintf(pa, sizeof(pa), "%s/cuse-a", dir);
	snprintf(pb, sizeof(pb), "%s/fuse-b", dir);
	cr_assert_eq(kc_shmdir_open(&a, pa, &removed), 0);
	cr_assert_eq(kc_ring_create(&a, &ra), 0);
	cr_assert_eq(kc_shmdir_open(&b, pb, &removed), 0);
	cr_assert_eq(removed, 0, "b's start swept something");
	cr_assert_eq(kc_ring_create(&b, &rb), 0);
	kc_shmdir_close(&a, 1);
	cr_assert_eq(access(ra.path, F_OK), -1, "a's object outlived its stop");
	cr_assert_eq(access(rb.path, F_OK), 0, "a's stop removed b's object");
	cr_assert_eq(access(dir, F_OK), 0, "the parent stays");
	kc_ring_destroy(&b, &rb);
	kc_shmdir_close(&b, 1);
	cr_assert_eq(chown(dir, UID_A, UID_A), 0);
	cr_assert_eq(kc_shmdir_parent(dir), -EPERM, "someone else's parent");
	cr_assert_eq(chown(dir, 0, 0), 0);
	snprintf(lnk, sizeof(lnk), "%s/lnk", dir);
	cr_assert_eq(symlink("/dev/shm", lnk), 0);
	cr_assert_lt(kc_shmdir_parent(lnk), 0, "a symlink");
}

Test(shm, refuses_non_tmpfs)
{
	struct kc_shmdir d;
	unsigned int removed;
	char other[64];
	struct statfs sfs;

	snprintf(other, sizeof(other), "/var/tmp/kcuse-test-%d", (int)getpid());
	if (statfs("/var/tmp", &sfs) || sfs.f_type == TMPFS_MAGIC)
		cr_skip_test("/var/tmp is tmpfs or missing: no non-tmpfs directory to try");
	cr_assert_eq(kc_shmdir_open(&d, other, &removed), -EXDEV);
	rmdir(other);
}

Test(shm, ring_object_acl_and_access)
{
	struct kc_shmdir d;
	struct kc_ring r;
	unsigned int removed;
	struct stat st;
	char *t;

	cr_assert_eq(kc_shmdir_open(&d, dir, &removed), 0);
	cr_assert_eq(kc_ring_create(&d, &r), 0);
	cr_assert_eq(strncmp(r.path, dir, strlen(dir)), 0);
	cr_assert_lt(strlen(r.path), sizeof(((struct kevent_ring_shm *)0)->path));
	cr_assert_eq(lstat(r.path, &st), 0);
	cr_assert(S_ISREG(st.st_mode));
	cr_assert_eq(st.st_uid, 0);
	cr_assert_eq(st.st_size, KEVENT_RING_SIZE);
	cr_assert_geq(st.st_blocks * 512, KEVENT_RING_SIZE, "fully allocated up front");
	for (size_t i = 0; i < KEVENT_RING_SIZE; i += 997)
		cr_assert_eq(((unsigned char *)r.mem)[i], 0);

	/* Before any RING_SHM caller: nobody but the daemon. */
	cr_assert_eq(as_uid(UID_A, try_open_ro, r.path), 1);

	cr_assert_eq(kc_ring_grant(&d, &r, UID_A), 0);
	cr_assert_eq(kc_ring_grant(&d, &r, UID_A), 0);	/* idempotent */
	t = acl_text(r.path);
	cr_assert_str_eq(t, "user::r--,user:41234:r--,group::---,mask::r--,other::---");
	acl_free(t);
	cr_assert_eq(as_uid(UID_A, try_open_ro, r.path), 0);
	cr_assert_eq(as_uid(UID_A, try_open_rw, r.path), 1);
	cr_assert_eq(as_uid(UID_A, try_fchmod, r.path), 1);
	cr_assert_eq(as_uid(UID_B, try_open_ro, r.path), 1, "another uid must not read it");

	cr_assert_eq(kc_ring_grant(&d, &r, UID_B), 0);
	cr_assert_eq(as_uid(UID_B, try_open_ro, r.path), 0);
	cr_assert_eq(as_uid(UID_B, try_open_rw, r.path), 1);

	kc_ring_destroy(&d, &r);
	cr_assert_eq(access(r.path, F_OK), -1, "unlinked at release");
	kc_shmdir_close(&d, 1);
}

Test(shm, grant_table_is_bounded)
{
	struct kc_shmdir d;
	struct kc_ring r;
	unsigned int removed;

	cr_assert_eq(kc_shmdir_open(&d, dir, &removed), 0);
	cr_assert_eq(kc_ring_create(&d, &r), 0);
	for (unsigned int i = 0; i < KC_RING_MAX_UIDS; i++)
		cr_assert_eq(kc_ring_grant(&d, &r, 50000 + i), 0);
	cr_assert_eq(kc_ring_grant(&d, &r, 60000), -ENOSPC);
	cr_assert_eq(kc_ring_grant(&d, &r, 50000), 0);
	kc_ring_destroy(&d, &r);
	kc_shmdir_close(&d, 1);
}

Test(shm, objects_are_distinct_per_queue)
{
	struct kc_shmdir d;
	struct kc_ring a, b;
	unsigned int removed;

	cr_assert_eq(kc_shmdir_open(&d, dir, &removed), 0);
	cr_assert_eq(kc_ring_create(&d, &a), 0);
	cr_assert_eq(kc_ring_create(&d, &b), 0);
	cr_assert_str_neq(a.path, b.path);
	((unsigned char *)a.mem)[0] = 1;
	cr_assert_eq(((unsigned char *)b.mem)[0], 0);
	kc_ring_destroy(&d, &a);
	kc_ring_destroy(&d, &b);
	kc_shmdir_close(&d, 1);
}

Test(shm, full_tmpfs_fails_open_with_enomem)
{
	struct kc_shmdir d;
	struct kc_ring r;
	unsigned int removed;

	cr_assert_eq(mkdir(dir, 0711), 0);
	if (mount("kcuse-test", dir, "tmpfs", 0, "size=16k,mode=0711"))
		cr_skip_test("cannot mount a small tmpfs here (%s): tmpfs-full case untested",
			     strerror(errno));
	cr_assert_eq(kc_shmdir_open(&d, dir, &removed), 0);
	cr_assert_eq(kc_ring_create(&d, &r), -ENOMEM);
	cr_assert_eq(access(r.path, F_OK), -1, "nothing left behind");
	kc_shmdir_close(&d, 0);
	umount(dir);
}

/* The ring directory is made, never its parents; a path too long for
 * kevent_ring_shm.path with its object names is refused before any mkdir. */
Test(shm, missing_parent_and_long_path_refused)
{
	struct kc_shmdir d;
	unsigned int removed;
	char deep[96], longp[200];
	struct stat st;

	snprintf(deep, sizeof(deep), "%s/no/such", dir);
	cr_assert_eq(kc_shmdir_open(&d, deep, &removed), -ENOENT);
	memset(longp, 'a', sizeof(longp) - 1);
	longp[sizeof(longp) - 1] = 0;
	memcpy(longp, dir, strlen(dir));
	longp[strlen(dir)] = '/';
	cr_assert_eq(kc_shmdir_open(&d, longp, &removed), -ENAMETOOLONG);
	cr_assert_neq(stat(dir, &st), 0, "nothing was made for either");
}
