// SPDX-License-Identifier: MIT
/*
 * dir-watcher: watch a directory with an inode kevent.
 *
 * KEVENT_INODE takes a descriptor of the directory opened for reading (not
 * O_PATH) in id.raw[0]; KEVENT_INODE_CREATE fires when an entry is created
 * in it, KEVENT_INODE_REMOVE when one is removed, and ret_data[0] says which.
 * The kevent is not ONESHOT, so it stays registered and fires again on the
 * next change.  The program creates a file in the directory, waits for
 * CREATE, removes the file, waits for REMOVE, and checks that nothing else
 * arrived.  Changes made while the kevent is already ready merge into the
 * pending event, so it waits for each event before the next change.
 *
 * Usage: dir-watcher [DIR]  (default: a new directory under $TMPDIR or /tmp)
 * Exit status: 0 as expected, 1 on a wrong event, 77 without /dev/kevent.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* O_CLOEXEC, accept4(), pipe2() under -std=c11 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libkevent.h>

#define COOKIE 0x1d1e

/* Wait up to ms for one event; 0 when nothing came. */
static int wait_one(int kfd, struct ukevent *ev, unsigned int ms)
{
	int n = kevent_get_events(kfd, 1, 1, (__u64)ms * 1000000, ev, 0);

	if (n < 0) {
		perror("dir-watcher: kevent_get_events");
		exit(1);
	}
	return n;
}

static int expect(int kfd, __u32 bit, const char *what, const char *path)
{
	struct ukevent ev;

	if (!wait_one(kfd, &ev, 5000)) {
		fprintf(stderr, "dir-watcher: no %s event within 5 s\n", what);
		return 1;
	}
	printf("event: cookie %#x, ret_flags %#x, ret_data[0] %#x (%s) for %s\n",
	       ev.user[0], ev.ret_flags, ev.ret_data[0],
	       ev.ret_data[0] == KEVENT_INODE_CREATE ? "CREATE" :
	       ev.ret_data[0] == KEVENT_INODE_REMOVE ? "REMOVE" : "?", path);
	/* BROKEN would mean the directory itself went away (-ENOENT). */
	if (ev.type != KEVENT_INODE || ev.user[0] != COOKIE ||
	    ev.ret_flags != KEVENT_RET_DONE || ev.ret_data[0] != bit) {
		fprintf(stderr, "dir-watcher: wanted %s, got something else\n", what);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *dev = getenv("KEVENT_DEVICE"), *tmp = getenv("TMPDIR");
	char dir[4096], path[4200];
	struct kevent_info info;
	struct ukevent uk, ev;
	int kfd, dfd, fd, made = 0, bad;

	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		printf("usage: %s [DIR]\n"
		       "Watches DIR (default: a new temporary directory) with a\n"
		       "KEVENT_INODE kevent, creates and removes a file in it and\n"
		       "checks the CREATE and REMOVE events.\n", argv[0]);
		return strcmp(argv[1], "--help") == 0 ? 0 : 2;
	}
	kfd = open(dev ? dev : KEVENT_DEVICE_DEFAULT, O_RDWR | O_CLOEXEC);
	if (kfd == -1) {
		int e = errno;

		perror("dir-watcher: open kevent device");
		return e == ENOENT || e == ENODEV || e == ENXIO ? 77 : 1;
	}
	/* INODE is an extension of this project: ask the backend first. */
	if (kevent_info(kfd, &info) == -1 || !(info.supported_types & (1u << KEVENT_INODE)) ||
	    !(info.features & KEVENT_FEAT_FD_ORIGINS)) {
		fprintf(stderr, "dir-watcher: inode kevents not available here\n");
		return 77;
	}

	if (argc == 2) {
		snprintf(dir, sizeof(dir), "%s", argv[1]);
	} else {
		snprintf(dir, sizeof(dir), "%s/dir-watcher-XXXXXX", tmp ? tmp : "/tmp");
		if (!mkdtemp(dir)) {
			perror("dir-watcher: mkdtemp");
			return 1;
		}
		made = 1;
	}
	snprintf(path, sizeof(path), "%s/.dir-watcher.%d", dir, (int)getpid());

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);	/* O_PATH is refused */
	if (dfd == -1) {
		perror(dir);
		return 1;
	}
	memset(&uk, 0, sizeof(uk));
	uk.type = KEVENT_INODE;
	uk.id.raw[0] = (__u32)dfd;
	uk.event = KEVENT_INODE_CREATE | KEVENT_INODE_REMOVE;
	uk.user[0] = COOKIE;
	struct ukevent watch = uk;	/* for REMOVE: id + cookie */
	/* 0: registered.  An inode kevent is never ready at ADD; 1 is a failure. */
	if (kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &uk) != 0) {
		fprintf(stderr, "dir-watcher: ADD failed: %s\n",
			strerror(uk.ret_flags ? -(int)uk.ret_data[1] : errno));
		return 1;
	}
	printf("watching %s\n", dir);

	bad = wait_one(kfd, &ev, 100);	/* an untouched directory is quiet */
	fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	if (fd == -1 || write(fd, "x", 1) != 1 || close(fd) == -1) {
		perror(path);
		return 1;
	}
	bad |= expect(kfd, KEVENT_INODE_CREATE, "CREATE", path);
	bad |= wait_one(kfd, &ev, 200);	/* writing to the file is no CREATE */
	if (unlink(path) == -1) {
		perror(path);
		return 1;
	}
	bad |= expect(kfd, KEVENT_INODE_REMOVE, "REMOVE", path);
	bad |= wait_one(kfd, &ev, 200);
	if (bad)
		fprintf(stderr, "dir-watcher: wrong or unexpected events\n");

	/* A kevent holds its file: REMOVE it, then close the directory. */
	if (kevent_ctl(kfd, KEVENT_CTL_REMOVE, 1, &watch) == -1 ||
	    watch.ret_flags != KEVENT_RET_DONE) {
		fprintf(stderr, "dir-watcher: REMOVE failed\n");
		bad = 1;
	}
	close(dfd);
	if (made)
		rmdir(dir);
	close(kfd);
	printf("dir-watcher: %s\n", bad ? "FAILED" : "ok");
	return bad ? 1 : 0;
}
