/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The daemon's shared state and its parts: kc-main.c (start and stop),
 * kc-file.c (the open files both front ends share: queues, poll, the ioctl
 * flow, the struct ktransport it gives the core), the front ends behind
 * struct kc_front (kc-front.h: kc-cuse.c for CUSE, kc-fuse.c for a FUSE
 * mount), and kc-req.c (one ioctl request's state machine and its one
 * reply, design.md B1).
 */
#ifndef KC_DAEMON_H
#define KC_DAEMON_H

#define FUSE_USE_VERSION 312

#include <pthread.h>
#include <stdatomic.h>
#include <cuse_lowlevel.h>

#include "kcore.h"
#include "kc-front.h"
#include "kc-opts.h"
#include "kc-shm.h"
#include "kc-xfer.h"

struct kc_queue;

struct kc_daemon {
	struct kc_opts opts;
	const struct kc_front *front;	/* chosen once in main() */
	struct kcore *core;
	struct kc_shmdir shm;
	struct kx_paths paths;		/* process memory or retry (kc-xfer.c) */
	atomic_int stopping;		/* D20: parked calls answered ENODEV */
	atomic_ullong seq;		/* trace numbers */
};

extern struct kc_daemon kd;

/* sysexits.h values, named here so the man page can list them. */
#define KC_EXIT_USAGE		64
#define KC_EXIT_UNAVAILABLE	69
#define KC_EXIT_OSERR		71
#define KC_EXIT_NOPERM		77

/*
 * kc-main.c: what a front end's serve() runs once its session exists (and
 * the process is daemonised): the core and the origins, the session loop,
 * and at its end the D20 stop.  Returns the exit status; the caller tears
 * the session down.
 */
int kc_session_run(struct fuse_session *se);

/* kc-file.c: the open files, shared by both front ends. */
void kc_files_init(void);
/* Release every open queue (D20); returns how many there were. */
unsigned int kc_files_release_all(void);
/* A new queue of the caller; node: the file's node id (0: the front end has none). */
void kc_file_open(fuse_req_t req, struct fuse_file_info *fi, unsigned long node);
void kc_file_release(fuse_req_t req, struct fuse_file_info *fi);
/*
 * Run fn(arg) once the ring as it is now is what the caller sees (the
 * front end's ring_after); 1 when the caller must run it now.
 */
int kc_file_ring_after(void *file, void (*fn)(void *), void *arg);
/* The front end's ring of an open file (what its ring_new made). */
void *kc_file_front_ring(const struct fuse_file_info *fi);
void kc_file_poll(fuse_req_t req, struct fuse_file_info *fi, struct fuse_pollhandle *ph);
void kc_file_ioctl(fuse_req_t req, int cmd, void *arg, struct fuse_file_info *fi,
		   unsigned int flags, const void *in_buf, size_t in_bufsz, size_t out_bufsz);

#endif /* KC_DAEMON_H */
