/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The queue core's API for transports (cuse-daemon/, the fuzzer, tests).
 * No libfuse and no origin code behind it; origins plug in via origin.h.
 *
 * Errors are -errno.  The one positive sentinel is KDISP_PARKED.
 */
#ifndef KEVENT_CORE_KCORE_H
#define KEVENT_CORE_KCORE_H

#include <stddef.h>
#include <linux/kevent.h>

#include "origin.h"

struct kcore;	/* one engine: limits, counters, clock, waiter deadlines */
struct kqueue;	/* one open of /dev/kevent */
struct kwaiter;	/* a parked GET_EVENTS */

struct kcore_config {
	__u32 backend;		/* KEVENT_BACKEND_* that INFO reports */
	__u32 features;		/* KEVENT_FEAT_* the transport provides */
	__u32 max_ctl_num;	/* largest CTL batch the transport moves (4095, B4: 3276) */
	__u32 max_get_nr;	/* largest GET_EVENTS batch it moves */
	__u32 caps[KEVENT_LIMIT_NR];	/* per-uid caps (B7); 0: no cap */
	/*
	 * Deterministic mode (tests, fuzzer): no background thread at all;
	 * deadlines run only from kcore_run_deadlines(), the clock is clock_ns.
	 */
	int deterministic;
	__u64 (*clock_ns)(void *ctx);	/* NULL: CLOCK_MONOTONIC */
	void *clock_ctx;
};

int kcore_new(const struct kcore_config *cfg, struct kcore **ret);
/* All queues must have been released. */
void kcore_free(struct kcore *core);

/* Live objects, for tests, INFO and the fuzzer's leak checks. */
struct kcore_counters {
	__u64 queues, kevents, waiters, ready;
};
void kcore_counters(const struct kcore *core, struct kcore_counters *out);

/* Deterministic mode: complete every waiter whose deadline has passed. */
void kcore_run_deadlines(struct kcore *core);

/*
 * open(): a new queue owned by owner.  ring is KEVENT_RING_SIZE bytes of
 * zeroed memory the transport provides (shared memory for CUSE, plain pages
 * in tests), written by the core and never read back; NULL for no ring.
 * Fails -EMFILE when the owner's queue cap is reached (docs/abi.md D18).
 */
int kqueue_open(struct kcore *core, const struct kcaller *owner, void *ring,
		struct kqueue **ret);
/*
 * release(): every kevent detached and freed, every parked waiter completed
 * (with what is ready) before it returns.
 */
void kqueue_release(struct kqueue *q);

/* poll() on the queue: POLLIN|POLLRDNORM while the ready list is not empty. */
unsigned int kqueue_poll(struct kqueue *q);
/* Called (from any thread, no core lock held) when the queue becomes ready. */
void kqueue_set_notify(struct kqueue *q, void (*notify)(void *ctx), void *ctx);

/* User memory of the caller: process memory, a fetched buffer, or simulated. */
struct kuaccess {
	int (*read)(void *ctx, void *dst, __u64 uaddr, size_t len);		/* 0 or -EFAULT */
	int (*write)(void *ctx, __u64 uaddr, const void *src, size_t len);	/* 0 or -EFAULT */
	void *ctx;
};

/*
 * Phase 1 of an ioctl: the number, the wrapper struct's bytes (arg_len =
 * _IOC_SIZE(cmd) bytes as the caller passed them) and the caller.  Runs the
 * whole-call checks (A1, A4, D24, D25) and says which user ranges phase 2
 * will read and write, so a transport can fetch them first.
 */
struct kdisp_range {
	__u64 addr;
	__u64 len;
};

struct kdisp_plan {
	unsigned int cmd;
	unsigned int nr;		/* _IOC_NR(cmd) */
	union {
		struct kevent_ctl_arg ctl;
		struct kevent_get_events_arg get;
		struct kevent_set_abi set_abi;
	} arg;				/* normalised: zero-extended to our size */
	struct kdisp_range in;		/* user bytes phase 2 reads (len 0: none) */
	struct kdisp_range out;		/* user bytes phase 2 writes */
	size_t reply_len;		/* wrapper bytes to copy back (INFO, RING_SHM) */
};

int kdisp_plan(struct kqueue *q, unsigned int cmd, const void *arg, size_t arg_len,
	       const struct kcaller *caller, struct kdisp_plan *plan);

/*
 * How a GET_EVENTS that has to wait completes.  complete() is called exactly
 * once, from any thread, with no core lock held, after the events were
 * written through ua; result is the count or -errno.  ua must stay valid
 * until then.
 */
struct kwait_req {
	const struct kuaccess *ua;
	void (*complete)(void *ctx, int result);
	void *ctx;
};

#define KDISP_PARKED 1000000	/* execute parked the call: *waiter is set */

/*
 * Phase 2: run the call.  Returns the ioctl's result (>= 0), -errno, or
 * KDISP_PARKED.  reply receives plan->reply_len bytes for INFO/RING_SHM.
 * wr may be NULL: the call then never parks (it waits in place, for
 * in-process users only).
 */
int kdisp_execute(struct kqueue *q, const struct kdisp_plan *plan,
		  const struct kcaller *caller, const struct kuaccess *ua,
		  void *reply, const struct kwait_req *wr, struct kwaiter **waiter);

/*
 * The transport saw an interrupt (signal, SIGKILL) for a parked waiter: it
 * completes at once with what is ready (2006 rule: no -EINTR).  A no-op once
 * it has completed.  The handle stays valid until kwaiter_put().
 */
void kwaiter_interrupt(struct kwaiter *w);
void kwaiter_put(struct kwaiter *w);

#endif /* KEVENT_CORE_KCORE_H */
