/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A front end of the daemon: how its open files reach the kernel.  main()
 * picks one from the options (kd.front) and nothing tests which one it
 * was: the start, the files (kc-file.c) and the requests (kc-req.c) call
 * through it, as the VFS calls through a file's file_operations.  A front
 * end is one file filling one of these: kc_front_cuse (kc-cuse.c, the CUSE
 * device) and kc_front_fuse (kc-fuse.c, DIR/kevent in a FUSE mount, its
 * ring pages kept by kc-fring.c).
 *
 * A NULL hook means the front end has nothing to do there: the caller goes
 * on as if it had returned 0 (the ring hooks: no per-queue state, nothing
 * to carry, run fn now).
 */
#ifndef KC_FRONT_H
#define KC_FRONT_H

#include <stddef.h>

#include <linux/kevent.h>

struct kc_front {
	const char *name;		/* "CUSE", "FUSE": the session's log lines */
	const char *ctl;		/* the kernel's device the session opens */
	const char *ctl_missing;	/* said when ctl does not exist: what to load */
	__u32 backend;			/* KEVENT_BACKEND_* that INFO reports */
	__u32 features;			/* KEVENT_FEAT_* the front end gives every caller */
	int no_retry;			/* no FUSE_IOCTL_RETRY: process memory or nothing (B4) */

	/* What is served, for messages: the device's name or the mount's directory. */
	const char *(*where)(void);
	/* Options this front end cannot serve, before ctl is tried: 0 or an exit status. */
	int (*check)(void);
	/* ctl is usable; before the ring directory is chosen: 0 or an exit status. */
	int (*preflight)(void);
	/* Set the session up, kc_session_run() it, tear it down: the exit status. */
	int (*serve)(void);

	/*
	 * One queue's ring as the front end shows it to the caller; live is
	 * the core's ring (the RING_SHM object), node the file's node id (0
	 * when the front end has none).  0 or -errno.
	 */
	int (*ring_new)(unsigned long node, const void *live, void **ring);
	/* The queue is gone: live must never be read again. */
	void (*ring_free)(void *ring);
	/* The core's ring_written(): no core lock held, maybe an origin's; only marks. */
	void (*ring_written)(void *ring, size_t off, size_t len);
	/*
	 * Run fn(arg) once the ring as it is now is what the caller sees (a
	 * GET_EVENTS reply, a poll wake-up): 0 when deferred, 1 when the
	 * caller must run fn itself now.  fn must not block.
	 */
	int (*ring_after)(void *ring, void (*fn)(void *), void *arg);
};

extern const struct kc_front kc_front_cuse;
extern const struct kc_front kc_front_fuse;

#endif /* KC_FRONT_H */
