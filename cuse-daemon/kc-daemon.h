/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The daemon's shared state and its three parts: kc-main.c (start and
 * stop), kc-cuse.c (the CUSE front end: files, poll, the ioctl flow, the
 * struct ktransport it gives the core) and kc-req.c (one ioctl request's
 * state machine and its one reply, design.md B1).
 */
#ifndef KC_DAEMON_H
#define KC_DAEMON_H

#define FUSE_USE_VERSION 312

#include <pthread.h>
#include <stdatomic.h>
#include <cuse_lowlevel.h>

#include "kcore.h"
#include "kc-opts.h"
#include "kc-shm.h"
#include "kc-xfer.h"

struct kc_queue;

struct kc_daemon {
	struct kc_opts opts;
	struct kcore *core;
	struct kc_shmdir shm;
	struct kx_paths paths;		/* process memory or retry (kc-xfer.c) */
	atomic_int stopping;		/* D20: parked calls answered ENODEV */
	atomic_ullong seq;		/* trace numbers */
};

extern struct kc_daemon kd;

/* kc-cuse.c */
extern const struct cuse_lowlevel_ops kc_cuse_ops;
void kc_cuse_init(void);
/* Release every open queue (D20); returns how many there were. */
unsigned int kc_cuse_release_all(void);

#endif /* KC_DAEMON_H */
