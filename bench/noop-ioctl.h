/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one ioctl answer of the two no-op servers (bench/daemon/noop-cuse.c,
 * bench/fuse/noop-fuse.c), the floors the daemon's per-ioctl cost is
 * measured against: the transfers kevent-cuse's process-memory path makes
 * for one entry and nothing else.  CTL reads the wrapper and the entry;
 * GET_EVENTS reads the wrapper and the entry, writes the entry back and
 * answers 1.  Include after <fuse_lowlevel.h>.
 */
#ifndef KEVENT_BENCH_NOOP_IOCTL_H
#define KEVENT_BENCH_NOOP_IOCTL_H

#include <errno.h>
#include <stdint.h>
#include <sys/uio.h>

#include <linux/kevent.h>

static inline int noop_peek(pid_t pid, __u64 addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

static inline int noop_poke(pid_t pid, __u64 addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_writev(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

static inline void noop_answer(fuse_req_t req, unsigned int cmd, void *arg)
{
	pid_t pid = fuse_req_ctx(req)->pid;
	__u64 uarg = (__u64)(uintptr_t)arg;
	struct kevent_get_events_arg get;
	struct kevent_ctl_arg ctl;
	struct ukevent uk;
	size_t size = _IOC_SIZE(cmd);

	/*
	 * GET_EVENTS by number: libkevent's 2006 call sends the 32-byte VER0
	 * wrapper, a revision-2 one the 48-byte VER1; read as many bytes as
	 * the command names, as the daemon does.
	 */
	if (_IOC_TYPE(cmd) == KEVENT_IOC_MAGIC && _IOC_NR(cmd) == KEVENT_IOC_NR_GET_EVENTS &&
	    size >= KEVENT_GET_EVENTS_ARG_SIZE_VER0 && size <= sizeof(get))
		cmd = KEVENT_IOC_GET_EVENTS;
	switch (cmd) {
	case KEVENT_IOC_CTL:
		if (noop_peek(pid, uarg, &ctl, sizeof(ctl)) ||
		    noop_peek(pid, ctl.events, &uk, sizeof(uk)))
			break;
		fuse_reply_ioctl(req, 0, NULL, 0);
		return;
	case KEVENT_IOC_GET_EVENTS:
		if (noop_peek(pid, uarg, &get, size) ||
		    noop_peek(pid, get.events, &uk, sizeof(uk)) ||
		    noop_poke(pid, get.events, &uk, sizeof(uk)))
			break;
		fuse_reply_ioctl(req, 1, NULL, 0);
		return;
	default:
		fuse_reply_err(req, ENOTTY);
		return;
	}
	fuse_reply_err(req, EFAULT);
}

#endif
