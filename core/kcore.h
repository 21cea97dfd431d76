/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The queue core's API for transports (cuse-daemon/, the fuzzer, tests).
 * No libfuse and no origin code behind it; origins plug in via origin.h.
 *
 * Errors are -errno.  The one positive sentinel is KDISP_PARKED.
 *
 * THE TRANSPORT CONTRACT.  A transport (the CUSE daemon, a FUSE-file front
 * end, a test) owns the file and moves the caller's memory; the core owns
 * the ABI.  Everything a transport may limit or add for one call is in one
 * struct kdisp_ctx, handed to kdisp_plan_ctx() and kept by the plan for
 * kdisp_execute(); a transport never edits the caller's wrapper bytes or a
 * reply after the fact.  NULL (kdisp_plan()) means "no transport limits"
 * (in-process users: tests, the fuzzer, benchmarks).
 *  - Limits: ctx->max_ctl_num / max_get_nr are the most entries the path
 *    this call takes can move (0: no limit of its own).  The core applies
 *    min(ctx, kcore_config): a CTL above it fails whole with -E2BIG after the
 *    -EINVAL checks (design.md B4), a GET_EVENTS max_nr/min_nr above it is
 *    clamped (D12, a legal short return), and INFO reports it.
 *  - O_NONBLOCK: ctx->nonblock joins KEVENT_GET_NONBLOCK to GET_EVENTS'
 *    ioc_flags (A11).
 *  - INFO: features = kcore_config.features | ctx->features (the bits that
 *    depend on the caller: PROCESS_VM or RETRY_PATH, FD_ORIGINS) | STRICT
 *    (SET_ABI's strict mode) | FAULT_INJECT when on | RING_SHM when the
 *    transport has a ring_shm hook.  backend from kcore_config;
 *    supported_types = the types with an origin; limits[] = the caps of
 *    kcore_config.caps and the caller's uid's use; live_* = the counters.
 *  - KEVENT_IOC_RING_SHM is validated like every command (direction, size
 *    against KEVENT_RING_SHM_SIZE_VER0 and KEVENT_IOC_ARG_MAX); then
 *    ktransport.ring_shm names the ring (path; it may refuse with
 *    -errno) and the core fills size, flags and length and copies it out
 *    with a zero tail.  Without the hook it is -ENOTTY, as in the module.
 *  - Ranges: a plan names up to KDISP_RANGES user ranges phase 2 reads
 *    (in[]) and writes (out[]); a transport moves them generically.
 *  - Ring: ktransport.ring_written(file, off, len) runs after the core wrote
 *    ring bytes [off, off + len) and the index word (bytes [0, 4)), with no
 *    core lock held (it may block: a page-cache store can wait on a page
 *    lock an in-flight READ holds).  Calls for one queue may run
 *    concurrently and out of order, from origin threads (still inside
 *    korigin_fire(), so that origin's lock is held: the hook must not call
 *    back into the core for this queue, and a store that can wait long
 *    stalls that origin, so such a transport hands it to a thread of its
 *    own and wakes pollers after it) or from a CTL's thread after it
 *    dropped the control lock.  Several writes may come as one range, and a
 *    range may cover more than changed (writes across the wrap: the whole
 *    ring).  The hook copies from the ring memory at call time, so every write is
 *    covered by a call that started after it.  Bound per queue with
 *    kqueue_set_transport().
 *  - Readiness: kqueue_set_notify() (below), for poll wake-ups.
 *  - A transport may have no retry path and no ring of its own: every
 *    field and hook above is optional.
 *
 * Decisions taken by the core (binding for every transport):
 *  - Origins: korigin_register() fills one global table (call it at start,
 *    before kcore_new()).  kcore_config.origins[] overrides it per core;
 *    tests install core/test-origin.h that way.  A type with no origin, or
 *    type >= KEVENT_MAX, fails that ADD entry with -EINVAL (A3).
 *  - SET_ABI: only before the first CTL on the queue (any CTL that passed
 *    kdisp_plan counts, num = 0 too), -EBUSY after; revision must be
 *    KCORE_REV_LOWEST .. KCORE_REV_HIGHEST (internal.h), flags within
 *    KEVENT_ABI_FLAGS (EINTR with revision 2 only), __reserved 0,
 *    else -EINVAL.  KEVENT_ABI_STRICT: unknown req_flags bits fail that ADD
 *    or MODIFY entry with -EINVAL.
 *  - kdisp_plan() reads the queue's kevent count without its lock for the
 *    whole-call checks; kdisp_execute() repeats them under the control lock.
 *  - User memory: ua->read/write may run with the queue's control lock held
 *    and, for a parked waiter, on the core's worker thread.  A transport
 *    whose user memory can block (design.md B3) gives a ua over private buffers
 *    and copies to the client in complete().
 *  - GET_EVENTS copy faults (D10): the n entries about to be copied are read
 *    through ua and written back unchanged first (a probe: the plan's in
 *    range covers the out range), so an unmapped or read-only buffer is
 *    -EFAULT with nothing dequeued.  A write fault after
 *    the dequeue returns the count of entries that could be written, or
 *    -EFAULT if none; the rest is lost.
 *  - CTL copy faults (D9): the whole array is read in one ua->read first;
 *    ADD writes back the compacted prefix, MODIFY/REMOVE the whole array,
 *    in one ua->write; a fault there is -EFAULT with the effects kept.
 *  - MODIFY: event and req_flags replaced, the origin re-evaluates; a
 *    pending readiness stays pending.  Entry written back DONE, plus BROKEN
 *    (ret_data[1] = -errno) when the origin refused; BROKEN alone, with
 *    ret_data untouched, when nothing matched (take13).
 *  - A BROKEN non-ONESHOT kevent stays registered (take13) until REMOVE.
 *  - Waiters complete on the worker thread (normal mode) or inside
 *    kcore_run_deadlines() (deterministic mode), or inline in a later
 *    GET_EVENTS/CTL/release on the same queue; kwaiter_interrupt() only
 *    marks and schedules, so it is safe from a transport's interrupt
 *    callback that holds the request lock complete() takes.
 *  - Deterministic mode with wr == NULL: a GET_EVENTS that would wait
 *    returns what is ready at once (nothing else could wake it).
 *  - Per-uid charges (D18): queues to the owner at open (-EMFILE); KEVENTS
 *    and, by type, TIMERS (timer), FD_KEVENTS (poll, socket), MARKS
 *    (inode) to the uid of the ADD caller (entry -ENOSPC); PARKED to the
 *    GET_EVENTS caller (-EAGAIN); RUNNING through kcore_running_enter().
 *  - notify() runs on the thread of korigin_fire(), with that origin's
 *    lock held (but no core lock): it must only signal, never block.
 *  - No RCU (design.md C5): the origin -> queue hand-off needs no
 *    protection because detach() guarantees no fire is running (queue.c
 *    LOCKING), and the per-uid lookup many threads read walks insert-only
 *    chains published with release stores (core.c).  So the TSan build
 *    (-Db_sanitize=thread) checks exactly the code that ships, with no
 *    suppression file.  Criterion cannot run under TSan, so core/tests
 *    builds the same tests against core/tests/tap-shim.h there.
 */
#ifndef KEVENT_CORE_KCORE_H
#define KEVENT_CORE_KCORE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/kevent.h>

#include "origin.h"

struct kcore;	/* one engine: limits, counters, clock, waiter deadlines */
struct kqueue;	/* one open of /dev/kevent */
struct kwaiter;	/* a parked GET_EVENTS */

struct kcore_config {
	__u32 backend;		/* KEVENT_BACKEND_* that INFO reports */
	__u32 features;		/* KEVENT_FEAT_* every caller of this core gets */
	__u32 max_ctl_num;	/* largest CTL batch (0: 4095); kdisp_ctx may lower it */
	__u32 max_get_nr;	/* largest GET_EVENTS batch (0: 4095) */
	__u32 caps[KEVENT_LIMIT_NR];	/* per-uid caps (B7); 0: no cap */
	/*
	 * Deterministic mode (tests, fuzzer): no background thread at all;
	 * deadlines run only from kcore_run_deadlines(), the clock is clock_ns.
	 */
	int deterministic;
	__u64 (*clock_ns)(void *ctx);	/* NULL: CLOCK_MONOTONIC */
	void *clock_ctx;
	/* Per-core origin table: a non-NULL entry overrides korigin_register(). */
	const struct korigin_ops *origins[KEVENT_MAX];
	/* Fault injection: returns non-zero to make the next allocation fail. */
	int (*alloc_fail)(void *ctx);
	void *alloc_fail_ctx;
	/* Answer KEVENT_IOC_FAULT (tests through the device); else -ENOTTY. */
	int fault_inject;
	/* ---- KEVENT_IOC_DRAIN (answered with fault_inject) ---- */
	/* Returns once the origins handled every source event pending now; NULL: nothing to wait for. */
	void (*drain_origins)(void);
};

int kcore_new(const struct kcore_config *cfg, struct kcore **ret);
/* The SET_ABI revisions this core serves (INFO's abi_lowest .. abi_revision). */
void kcore_revisions(unsigned int *lowest, unsigned int *highest);
/* All queues must have been released. */
void kcore_free(struct kcore *core);

/* Live objects, for tests, INFO and the fuzzer's leak checks. */
struct kcore_counters {
	__u64 queues, kevents, waiters, ready;
};
void kcore_counters(const struct kcore *core, struct kcore_counters *out);

/*
 * Deterministic mode: complete every waiter whose deadline has passed, and
 * serve every queue an origin fire or an interrupt scheduled.  Harmless in
 * normal mode (the worker does the same).
 */
void kcore_run_deadlines(struct kcore *core);

/*
 * Test hook: serve all scheduled work and wait until the worker is idle, so
 * every completion due so far has been delivered and the counters are final.
 */
void kcore_sync(struct kcore *core);

/*
 * The RUNNING cap (B7, D18): a transport brackets each request it runs on
 * a worker with these.  enter() returns 0 or -EAGAIN at the caller's cap.
 */
int kcore_running_enter(struct kcore *core, const struct kcaller *caller);
void kcore_running_exit(struct kcore *core, const struct kcaller *caller);

/*
 * A use of a per-uid resource the core does not count itself (the core
 * already charges QUEUES, KEVENTS, TIMERS, FD_KEVENTS, MARKS and PARKED).
 * EXPIRIES is a budget, not a count: -EINVAL (korigin_expiry_charge).
 */
int kcore_uid_charge(struct kcore *core, uid_t uid, unsigned int limit);
void kcore_uid_uncharge(struct kcore *core, uid_t uid, unsigned int limit);
/* The uid's current use of limit (INFO, tests). */
unsigned int kcore_uid_used(struct kcore *core, uid_t uid, unsigned int limit);

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
 * (with what is ready) before it returns.  After it returns no notify() is
 * running (each ran inside a korigin_fire() that detach() waited for); a
 * complete() that another thread started before the release may still be
 * finishing, and the queue's memory lives until its waiters' kwaiter_put().
 * A transport keeps the queue open while its own calls run (D17).
 */
void kqueue_release(struct kqueue *q);

/* poll() on the queue: POLLIN|POLLRDNORM while the ready list is not empty. */
unsigned int kqueue_poll(struct kqueue *q);
/* Called (from any thread, no core lock held) each time a kevent becomes ready (D32). */
void kqueue_set_notify(struct kqueue *q, void (*notify)(void *ctx), void *ctx);

/* What a transport adds to the core; static, shared by all its files. */
struct ktransport {
	/* KEVENT_IOC_RING_SHM: fill reply->path (the rest is the core's); 0 or -errno. */
	int (*ring_shm)(void *file, const struct kcaller *caller, struct kevent_ring_shm *reply);
	/* Ring bytes [off, off + len) and the index word changed; no core lock held. */
	void (*ring_written)(void *file, size_t off, size_t len);
};

/*
 * Bind q to its transport: file is the transport's per-open state, passed
 * to t's hooks.  Call before the queue is used (no lock protects it).
 */
void kqueue_set_transport(struct kqueue *q, const struct ktransport *t, void *file);

/* One call as its transport sees it (see THE TRANSPORT CONTRACT above). */
struct kdisp_ctx {
	const struct ktransport *t;	/* NULL: no hooks */
	void *file;			/* t's per-open state */
	__u32 max_ctl_num;		/* this call's path moves at most this many; 0: no limit */
	__u32 max_get_nr;
	__u32 features;			/* KEVENT_FEAT_* for this caller (path, FD_ORIGINS) */
	int nonblock;			/* the open file has O_NONBLOCK (A11) */
	/*
	 * Revision 2 (D53): the kevent_uring is written through the call's
	 * ua at the moment the call completes, so ua must reach the caller's
	 * memory directly for RING_INIT, WAIT and COMMIT (no private buffers).
	 * A caller whose memory the transport cannot write has no
	 * KEVENT_FEAT_URING in features: those calls fail -EPERM.
	 */
};

/* User memory of the caller: process memory, a fetched buffer, or simulated. */
struct kuaccess {
	int (*read)(void *ctx, void *dst, __u64 uaddr, size_t len);		/* 0 or -EFAULT */
	int (*write)(void *ctx, __u64 uaddr, const void *src, size_t len);	/* 0 or -EFAULT */
	void *ctx;
	/*
	 * Optional (NULL: the core reads the bytes and writes them back).
	 * The D10 probe of an output range: exactly what read() of
	 * [uaddr, uaddr + len) followed, if it succeeded, by write() of the
	 * same bytes back would do and return, without moving the bytes.  A
	 * transport whose read and write are copies offers it so the probe
	 * costs a check instead of two copies on every GET_EVENTS.
	 */
	int (*probe)(void *ctx, __u64 uaddr, size_t len);			/* 0 or -EFAULT */
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

#define KDISP_RANGES 4

struct kdisp_plan {
	const struct kdisp_ctx *ctx;	/* from kdisp_plan_ctx(); must outlive execute */
	unsigned int cmd;
	unsigned int nr;		/* _IOC_NR(cmd) */
	union {
		struct kevent_ctl_ext_arg ctl;	/* VER0 callers: ioc_flags 0 */
		struct kevent_get_events_arg get;
		struct kevent_set_abi set_abi;
		struct kevent_fault fault;
		struct kevent_ring_init ring_init;
		struct kevent_wait_arg wait;
		struct kevent_commit_arg commit;
	} arg;				/* normalised: zero-extended to our size */
	/* WAIT and timespec GET_EVENTS: the timeout as relative ns (D48). */
	__u64 timeout_ns;
	/* ABSTIME on CLOCK_REALTIME: the deadline itself, ns; else 0 (D48). */
	__u64 rt_deadline;
	/*
	 * User bytes phase 2 reads (in) and writes (out), each non-empty, in
	 * the order the call touches them.  A range may appear in both.
	 * Entries past nin and nout are left unset.
	 */
	struct kdisp_range in[KDISP_RANGES];
	unsigned int nin;
	struct kdisp_range out[KDISP_RANGES];
	unsigned int nout;
	size_t reply_len;		/* wrapper bytes to copy back (INFO, RING_SHM) */
};

int kdisp_plan_ctx(struct kqueue *q, const struct kdisp_ctx *ctx, unsigned int cmd,
		   const void *arg, size_t arg_len, const struct kcaller *caller,
		   struct kdisp_plan *plan);
/* No transport limits or hooks (in-process users). */
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
 * A parked KEVENT_IOC_WAIT given a kwait_req completes with this result
 * when it is due: the transport then calls kwaiter_wait_copy() (on the
 * thread where it may touch the caller's memory, the daemon's uid lane), so
 * the slots are chosen and written when the call completes (docs/abi.md
 * D53) and never on the core's worker.
 */
#define KDISP_WAIT_DUE 1000001
/* Copies what is ready into the ring through ua; the WAIT's result. */
int kwaiter_wait_copy(struct kwaiter *w, const struct kuaccess *ua);

/*
 * Phase 2: run the call.  Returns the ioctl's result (>= 0), -errno, or
 * KDISP_PARKED.  reply receives plan->reply_len bytes for INFO/RING_SHM.
 * wr may be NULL: the call then never parks (it waits in place, for
 * in-process users only).  With wr set, waiter must not be NULL.
 * complete() of other, parked calls on the same queue may run inline on
 * the calling thread before this returns (D16 serves older waiters first).
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

/*
 * O11: a parked GET_EVENTS completed on the core's worker on a queue with
 * D67's counts leaves its records' counts to read: the transport calls
 * kwaiter_counts() before it moves the result to the caller, on the thread
 * where it may wait on the caller (the daemon's uid lane), through the ua
 * the events were written with.  0, or -EFAULT when ua failed (the result
 * is lost as a late copy fault is, D10).
 */
bool kwaiter_has_counts(const struct kwaiter *w);
int kwaiter_counts(struct kwaiter *w, const struct kuaccess *ua);
void kwaiter_put(struct kwaiter *w);

#endif /* KEVENT_CORE_KCORE_H */
