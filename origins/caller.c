// SPDX-License-Identifier: GPL-2.0
/* A caller's thread group and file table (design.md B2); see caller.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/kcmp.h>

#include "caller.h"

pid_t kcaller_tgid_of(pid_t tid)
{
	char path[32], buf[1024], *p;
	ssize_t n;
	long v;
	int fd;

	if (tid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	/* Tgid: is on the fourth line; 1 KiB always reaches it. */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = '\0';
	p = strstr(buf, "\nTgid:");
	if (!p)
		return -EPROTO;
	v = strtol(p + 6, NULL, 10);
	return v > 0 ? (pid_t)v : -EPROTO;
}

int kcaller_same_files(pid_t tgid, pid_t tid)
{
	long r;

	if (tgid == tid)
		return 1;
	r = syscall(SYS_kcmp, tgid, tid, KCMP_FILES, 0, 0);
	if (r < 0)
		return -errno;
	return r == 0;
}

pid_t kcaller_files_tgid(const struct kcaller *c)
{
	pid_t tgid = c->tgid;

	if (!tgid && c->tid)
		tgid = kcaller_tgid_of(c->tid);
	if (tgid <= 0)
		return -EPERM;	/* invisible in our pid namespace (B2) */
	if (c->tid && kcaller_same_files(tgid, c->tid) != 1)
		return -EPERM;
	return tgid;
}
