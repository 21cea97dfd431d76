// SPDX-License-Identifier: GPL-2.0
/*
 * Queue overflow of the inode backends, for real: the group's queue limit
 * (/proc/sys/fs/{inotify,fanotify}/max_queued_events, read by the kernel
 * when a group is created) is lowered to 16 just around korigins_start()
 * and restored at once; then more events than that are made while the
 * reactor does not run (KORIGINS_NO_THREAD).  Nothing may be lost
 * silently: every inode kevent of the group fires (ret_data[1] =
 * -EOVERFLOW), a watched file whose removal event was dropped turns BROKEN,
 * one line is logged per overflow with the counter, and the origin works on
 * afterwards.  Needs root (the sysctl); skips with the reason otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/fanotify.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <criterion/criterion.h>

#include "origins.h"
#include "recorder.h"

#define WAIT_MS 5000	/* a bound against hangs, never asserted on */
#define QLIMIT	16

static char dir[256];
static char sysctl_path[64];
static char saved[32];
static int logged;
static char last_line[256];

static void capture_log(const char *line)
{
	logged++;
	snprintf(last_line, sizeof(last_line), "%s", line);
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -errno;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	close(fd);
	return ok ? 0 : -EIO;
}

static void restore_limit(void)
{
	if (saved[0] && write_str(sysctl_path, saved) < 0)
		cr_log_error("could not restore %s to %s", sysctl_path, saved);
	saved[0] = '\0';
}

/* Starts the origins in manual mode with a QLIMIT-event queue. */
static void start_small_queue(enum korigins_inode_backend be, const char *name)
{
	struct korigins_config cfg = {
		.flags = KORIGINS_NO_THREAD, .inode_backend = be, .log = capture_log,
	};
	struct korigins_stats st;
	char lim[16];
	FILE *f;
	int err, lockfd;

	if (geteuid() != 0)
		cr_skip_test("needs root: lowers /proc/sys/fs/%s/max_queued_events", name);
	if (be == KORIGINS_INODE_FANOTIFY) {
		int fan = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME | FAN_REPORT_FID,
					O_RDONLY);

		if (fan < 0)
			cr_skip_test("fanotify with FID reporting: %s", strerror(errno));
		close(fan);
	}
	/* Every run (both suites, other build dirs) changes the sysctl in turn. */
	lockfd = open("/tmp/korigins-overflow-test.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0600);
	cr_assert_geq(lockfd, 0, "lock file: %s", strerror(errno));
	cr_assert_eq(flock(lockfd, LOCK_EX), 0);
	snprintf(sysctl_path, sizeof(sysctl_path), "/proc/sys/fs/%s/max_queued_events", name);
	f = fopen(sysctl_path, "re");
	if (!f)
		cr_skip_test("%s: %s", sysctl_path, strerror(errno));	/* exit closes lockfd */
	if (!fgets(saved, sizeof(saved), f))
		saved[0] = '\0';
	fclose(f);
	saved[strcspn(saved, "\n")] = '\0';
	if (!saved[0])
		cr_skip_test("%s unreadable", sysctl_path);
	snprintf(lim, sizeof(lim), "%d", QLIMIT);
	err = write_str(sysctl_path, lim);
	if (err) {
		saved[0] = '\0';
		cr_skip_test("cannot write %s: %s", sysctl_path, strerror(-err));
	}
	/* The limit is read when the group is created, i.e. in here. */
	rec_setup_cfg(&cfg);
	restore_limit();
	flock(lockfd, LOCK_UN);
	close(lockfd);
	korigins_stats(&st);
	cr_assert_eq(st.inode_backend, (__u32)be, "backend %s", name);
	snprintf(dir, sizeof(dir), "/tmp/korigins-ovfXXXXXX");
	cr_assert_neq(mkdtemp(dir), NULL, "mkdtemp: %s", strerror(errno));
}

static void fini(void)
{
	char cmd[300];

	restore_limit();
	if (dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			cr_log_warn("could not remove %s", dir);
		dir[0] = '\0';
	}
	rec_teardown();
}

/* An inode kevent on a queue of revision rev (0: 1). */
static int add_inode_rev(struct kitem *k, unsigned int rev, const char *path, int flags,
			 __u32 event)
{
	struct ukevent uk = { .type = KEVENT_INODE, .event = event };
	struct kcaller self = rec_self();
	struct korigin_result res;
	int fd = open(path, flags), err;

	cr_assert_geq(fd, 0, "open %s: %s", path, strerror(errno));
	uk.id.raw[0] = (__u32)fd;
	err = rec_add_rev(k, rev, &uk, &self, &res);
	korigins_sync_closer();
	close(fd);
	return err;
}

static int add_inode(struct kitem *k, const char *path, int flags, __u32 event)
{
	return add_inode_rev(k, 0, path, flags, event);
}

static void touch(const char *sub, int i)
{
	char f[300];
	int fd;

	snprintf(f, sizeof(f), "%s/%s/f%d", dir, sub, i);
	fd = open(f, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	cr_assert_geq(fd, 0, "create %s: %s", f, strerror(errno));
	close(fd);
}

static void overflow_fires_everything(void)
{
	struct kitem busy, idle, file, notes, del;
	struct korigins_stats st;
	char a[300], b[300], f[300];
	int i, fd;

	snprintf(a, sizeof(a), "%s/busy", dir);
	snprintf(b, sizeof(b), "%s/idle", dir);
	snprintf(f, sizeof(f), "%s/idle/watched", dir);
	cr_assert_eq(mkdir(a, 0700), 0);
	cr_assert_eq(mkdir(b, 0700), 0);
	fd = open(f, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(add_inode(&busy, a, O_RDONLY | O_DIRECTORY, KEVENT_INODE_CREATE), 0);
	cr_assert_eq(add_inode(&idle, b, O_RDONLY | O_DIRECTORY, KEVENT_INODE_CREATE), 0);
	cr_assert_eq(add_inode(&file, f, O_RDONLY, KEVENT_INODE_REMOVE), 0);
	/* D68: revision-4 kevents on the same objects, every bit asked */
	cr_assert_eq(add_inode_rev(&notes, 4, b, O_RDONLY | O_DIRECTORY, 0xff), 0);
	cr_assert_eq(add_inode_rev(&del, 4, f, O_RDONLY, 0xff), 0);
	rec_idle(10);	/* nothing pending: the queue starts empty */
	cr_assert_eq(rec_fires(&busy) + rec_fires(&idle) + rec_fires(&file), 0);

	/* Fill the queue, then the events that would be lost. */
	for (i = 0; i < 4 * QLIMIT; i++)
		touch("busy", i);
	cr_assert_eq(unlink(f), 0);
	touch("idle", 0);

	cr_assert_geq(rec_wait_fires(&idle, 1, WAIT_MS), 1, "the idle directory's kevent did not fire");
	cr_assert_geq(rec_wait_fires(&file, 1, WAIT_MS), 1, "the removed file's kevent did not fire");
	cr_assert_geq(rec_wait_fires(&busy, 1, WAIT_MS), 1);
	korigins_stats(&st);
	cr_expect_eq(st.inode_overflows, 1, "overflows counted: %llu",
		     (unsigned long long)st.inode_overflows);
	cr_expect_eq(idle.last.ret_flags, 0);
	cr_expect_eq(idle.last.ret_data[0], KEVENT_INODE_CREATE, "event & (CREATE|REMOVE)");
	cr_expect_eq(idle.last.ret_data[1], (__u32)-EOVERFLOW);
	cr_expect_eq(busy.last.ret_data[1], (__u32)-EOVERFLOW,
		     "the overflow is the last thing in the queue");
	cr_expect_eq(file.last.ret_flags, KEVENT_RET_BROKEN, "the removal was dropped, not lost");
	cr_expect_eq(file.last.ret_data[1], (__u32)-ENOENT);
	cr_expect(file.stopped);
	cr_assert_geq(rec_wait_fires(&notes, 1, WAIT_MS), 1);
	cr_expect_eq(notes.last.ret_data[0], 0xffu & ~(__u32)KEVENT_INODE_DELETE,
		     "revision 4: every note but DELETE, %#x", notes.last.ret_data[0]);
	cr_expect_eq(notes.last.ret_data[1], (__u32)-EOVERFLOW);
	cr_assert_geq(rec_wait_fires(&del, 1, WAIT_MS), 1);
	cr_expect_eq(del.last.ret_flags, 0, "DELETE asked: no BROKEN");
	cr_expect_eq(del.last.ret_data[0], KEVENT_INODE_DELETE, "%#x", del.last.ret_data[0]);
	cr_expect_eq(logged, 1, "one log line per overflow, got %d", logged);
	cr_expect_neq(strstr(last_line, "overflow (1 so far)"), NULL, "log line: %s", last_line);

	/* The origin goes on as before. */
	cr_assert(rec_dequeue(&idle, NULL));
	touch("idle", 1);
	cr_assert_geq(rec_wait_fires(&idle, 2, WAIT_MS), 2);
	cr_expect_eq(idle.last.ret_data[0], KEVENT_INODE_CREATE);
	cr_expect_eq(idle.last.ret_data[1], 0, "an ordinary event after the overflow");
	cr_expect_eq(logged, 1);

	/* A second overflow is counted and logged again. */
	cr_assert(rec_dequeue(&busy, NULL));
	for (i = 4 * QLIMIT; i < 8 * QLIMIT; i++)
		touch("busy", i);
	cr_assert_geq(rec_wait_fires(&idle, 3, WAIT_MS), 3, "second overflow");
	korigins_stats(&st);
	cr_expect_eq(st.inode_overflows, 2);
	cr_expect_eq(logged, 2);
	cr_expect_neq(strstr(last_line, "overflow (2 so far)"), NULL, "log line: %s", last_line);

	rec_remove(&busy);
	rec_remove(&idle);
	rec_remove(&file);
	rec_remove(&notes);
	rec_remove(&del);
	cr_expect_eq(busy.violations + idle.violations + file.violations + notes.violations +
		     del.violations, 0);
}

static void init_inotify(void)
{
	start_small_queue(KORIGINS_INODE_INOTIFY, "inotify");
}

static void init_fanotify(void)
{
	start_small_queue(KORIGINS_INODE_FANOTIFY, "fanotify");
}

TestSuite(overflow_inotify, .init = init_inotify, .fini = fini);
TestSuite(overflow_fanotify, .init = init_fanotify, .fini = fini);

Test(overflow_inotify, every_kevent_fires) { overflow_fires_everything(); }
Test(overflow_fanotify, every_kevent_fires) { overflow_fires_everything(); }
