// SPDX-License-Identifier: GPL-2.0
/*
 * Taking a client's fd (design.md B2, B3): map the caller to its thread group,
 * classify the fd through /proc without touching the file, duplicate it
 * with pidfd_open + pidfd_getfd, and classify the duplicate again through
 * /proc/self (the client may have replaced the fd in between).
 *
 * Refused, per entry with -EINVAL: files on FUSE mounts (fuse, fuseblk,
 * fuse.*), CUSE-served character devices (/sys/class/cuse), kevent devices
 * (the module's misc device), epoll fds, signalfds (abi.md D39: their poll
 * reports the polling task's signals).  A file is only stat()ed after its
 * mount was found not to be FUSE, so no request ever reaches a server the
 * client controls.
 *
 * No locks: this runs before any origin state is touched.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "caller.h"
#include "internal.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

static void kfd_proc_path(char *buf, size_t len, pid_t pid, const char *what, int fd)
{
	if (pid)
		snprintf(buf, len, "/proc/%d/%s/%d", (int)pid, what, fd);
	else
		snprintf(buf, len, "/proc/self/%s/%d", what, fd);
}

/* fdinfo: open flags and mount id. */
static int kfd_fdinfo(pid_t pid, int fd, unsigned int *flags, int *mnt_id)
{
	char path[64], line[256];
	FILE *f;
	int seen = 0;

	kfd_proc_path(path, sizeof(path), pid, "fdinfo", fd);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -EBADF : -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "flags: %o", flags) == 1)
			seen |= 1;
		else if (sscanf(line, "mnt_id: %d", mnt_id) == 1)
			seen |= 2;
	}
	fclose(f);
	return seen == 3 ? 0 : -EBADF;
}

static int kfd_fuse_type(const char *fstype)
{
	return !strcmp(fstype, "fuse") || !strcmp(fstype, "fuseblk") ||
	       !strncmp(fstype, "fuse.", 5);
}

/* 1 if mount mnt_id of pid is a FUSE mount, 0 if not or not visible. */
static int kfd_on_fuse(pid_t pid, int mnt_id)
{
	char path[64], *line = NULL, *sep, fstype[64];
	size_t len = 0;
	FILE *f;
	int id, fuse = 0;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/mountinfo");
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &len, f) > 0) {
		if (sscanf(line, "%d", &id) != 1 || id != mnt_id)
			continue;
		sep = strstr(line, " - ");
		if (sep && sscanf(sep + 3, "%63s", fstype) == 1)
			fuse = kfd_fuse_type(fstype);
		break;
	}
	free(line);
	fclose(f);
	return fuse;
}

/* A character device served by CUSE, or a kevent device of the module. */
static int kfd_refused_chrdev(dev_t rdev)
{
	char path[64], target[256];
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/dev/char/%u:%u", major(rdev), minor(rdev));
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return 0;
	target[n] = '\0';
	if (strstr(target, "/cuse/"))
		return 1;
	n = (ssize_t)strlen(target);
	return n >= 7 && !strcmp(target + n - 7, "/kevent");
}

/*
 * Anon-inode kinds refused by name: epoll (B3), and signalfd (D39), whose
 * poll looks at the signals of the task that polls, here the daemon's.
 */
static int kfd_refused_anon(const char *target)
{
	return !strcmp(target, "anon_inode:[eventpoll]") ||
	       !strcmp(target, "anon_inode:[signalfd]");
}

static int kfd_classify_path(const char *link_path, struct kfd_info *info)
{
	struct stat st;

	if (stat(link_path, &st) < 0)
		return errno == ENOENT ? -EBADF : -errno;
	if (S_ISREG(st.st_mode))
		info->kind = KFD_REGULAR;
	else if (S_ISDIR(st.st_mode))
		info->kind = KFD_DIRECTORY;
	else if (S_ISSOCK(st.st_mode))
		info->kind = KFD_SOCKET;
	else if (S_ISFIFO(st.st_mode))
		info->kind = KFD_PIPE;
	else if (S_ISCHR(st.st_mode) && kfd_refused_chrdev(st.st_rdev))
		return -EINVAL;
	return 0;
}

int kfd_classify(pid_t pid, int fd, struct kfd_info *info)
{
	char path[64], target[256];
	ssize_t n;
	int mnt_id = -1, err;

	memset(info, 0, sizeof(*info));
	kfd_proc_path(path, sizeof(path), pid, "fd", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return errno == ENOENT ? -EBADF : -errno;
	target[n] = '\0';
	err = kfd_fdinfo(pid, fd, &info->flags, &mnt_id);
	if (err)
		return err;
	if (kfd_refused_anon(target))
		return -EINVAL;
	if (!strncmp(target, "socket:[", 8)) {
		info->kind = KFD_SOCKET;
		return 0;
	}
	if (!strncmp(target, "pipe:[", 6)) {
		info->kind = KFD_PIPE;
		return 0;
	}
	/* pipefs and anon_inodefs: kernel-internal, never FUSE, no stat needed. */
	if (target[0] != '/')
		return 0;
	err = kfd_on_fuse(pid, mnt_id);
	if (err)
		return err < 0 ? err : -EINVAL;
	return kfd_classify_path(path, info);
}

static int kfd_getfd(pid_t tgid, int fd)
{
	int pidfd, dup, err;

	pidfd = (int)syscall(SYS_pidfd_open, tgid, 0);
	if (pidfd < 0)
		return errno == ESRCH ? -ESRCH : -errno;
	dup = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	err = errno;
	close(pidfd);
	return dup < 0 ? -err : dup;
}

/*
 * Returns a duplicate (close it with kcloser_close) of the caller's fd,
 * classified in *info, or -errno: -EPERM (caller invisible, other file
 * table, pidfd_getfd refused), -EBADF, -EINVAL (a refused kind).
 */
int kfd_take(const struct kcaller *caller, int fd, struct kfd_info *info)
{
	struct kfd_info again;
	pid_t tgid = kcaller_files_tgid(caller);
	int dup, err;

	if (tgid < 0)
		return tgid;
	if (fd < 0)
		return -EBADF;
	err = kfd_classify(tgid, fd, info);
	if (err)
		return err;
	dup = kfd_getfd(tgid, fd);
	if (dup < 0)
		return dup;
	err = kfd_classify(0, dup, &again);
	if (!err && again.kind != info->kind)
		err = -EINVAL;	/* replaced between the two looks */
	if (err) {
		kcloser_close(caller->uid, dup);
		return err == -EBADF ? -EINVAL : err;
	}
	return dup;
}
