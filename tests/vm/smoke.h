/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The smoke device's one ioctl, shared by smoke-cuse.c and smoke-client.c.
 * It exists only to prove that the guest path (cuse.ko, /dev/cuse, devtmpfs,
 * a libfuse3 CUSE server, a client ioctl) works before the real daemon does.
 */
#ifndef KEVENT_VM_SMOKE_H
#define KEVENT_VM_SMOKE_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* A magic far from the kevent one, so the two can never be confused. */
#define SMOKE_IOC_MAGIC		0xB7
/* _IOR makes it a restricted CUSE ioctl: no retry protocol needed. */
#define SMOKE_IOC_PING		_IOR(SMOKE_IOC_MAGIC, 1, __u32)
/* What PING answers: "kvsm" read as a little-endian word. */
#define SMOKE_PING_ANSWER	0x6d73766bu

#define SMOKE_DEFAULT_NAME	"kevent-smoke"

#endif
