// SPDX-License-Identifier: GPL-2.0
/* Request identity: thread id -> thread group id, file-table check. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/kcmp.h>

#include "kc-caller.h"

pid_t kc_tgid_of(pid_t tid)
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

int kc_same_files(pid_t tgid, pid_t tid)
{
	long r;

	if (tgid == tid)
		return 1;
	r = syscall(SYS_kcmp, tgid, tid, KCMP_FILES, 0, 0);
	if (r < 0)
		return -errno;
	return r == 0;
}

void kc_caller_fill(struct kcaller *c, uid_t uid, gid_t gid, pid_t tid)
{
	c->tid = tid > 0 ? tid : 0;
	c->tgid = 0;	/* resolved where it is needed (kc_caller_tgid, fd origins) */
	c->uid = uid;
	c->gid = gid;
}

pid_t kc_caller_tgid(const struct kcaller *c)
{
	pid_t tgid = c->tgid ? c->tgid : c->tid ? kc_tgid_of(c->tid) : 0;

	return tgid > 0 ? tgid : 0;
}
