/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private structures of the queue core, shared by core.c (engine, limits,
 * worker), queue.c (queues, kevents, ring, waiters) and dispatch.c.
 * The lock order is written in queue.c's LOCKING block.
 */
#ifndef KEVENT_CORE_INTERNAL_H
#define KEVENT_CORE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

#include "kcore.h"
#include "list.h"
#include "ktype.h"
#include "rules.h"

/* Per-uid use of each KEVENT_LIMIT_* resource (B7); lives until kcore_free. */
struct kuid {
	struct kuid *next;		/* hash chain: set before publication, then fixed */
	uid_t uid;
	atomic_uint used[KEVENT_LIMIT_NR];	/* EXPIRIES: in the window below */
	_Atomic __u64 exp_window;	/* budget window of used[EXPIRIES] (B7) */
};

struct kcore {
	struct kcore_config cfg;
	const struct korigin_ops *origins[KEVENT_MAX];	/* cfg override, else global */

	atomic_ullong n_queues, n_kevents, n_waiters, n_ready;

	pthread_mutex_t uid_lock;	/* leaf: serialises inserts into uids[] */
	_Atomic(struct kuid *) uids[64];	/* insert-only chains, read lock-free */

	/* The worker: deadlines and queues that need their waiters served. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct kwaiter **heap;		/* min-heap on deadline */
	size_t heap_len, heap_cap;
	struct klist work;		/* kqueue.work_node */
	bool stop, have_thread;
	unsigned int busy;		/* threads serving a queue now */
	pthread_cond_t idle;		/* the worker finished a pass */
	pthread_t thread;
	/*
	 * D48: the clock watch, started with the first ABSTIME CLOCK_REALTIME
	 * deadline.  clock_fd is a CLOCK_REALTIME timerfd armed with
	 * TFD_TIMER_CANCEL_ON_SET; its thread re-bases the realtime deadlines
	 * in the heap when the clock is set.  Under lock.
	 */
	int clock_fd;			/* -1: not started */
	bool have_clock_thread;
	pthread_t clock_thread;
};

/* kitem.flags, under the queue's ready lock */
#define KITEM_READY	0x1	/* on the ready list */
#define KITEM_STOPPED	0x2	/* ONESHOT fired or BROKEN: ignore fires */
#define KITEM_ATTACHING	0x4	/* inside attach(): fires are held (D3) */
#define KITEM_HELD	0x8	/* a fire held in rflags/rdata until ADD decides, */
				/* or (DISARMED) until MODIFY re-arms (D65) */
#define KITEM_DISARMED	0x10	/* KEVENT_REQ_DISPATCH delivered: no delivery until MODIFY */
#define KITEM_STALE	0x20	/* D69: delivered -EBADF; STOPPED for good, MODIFY too */

struct kitem {
	/* What a GET_EVENTS pass reads and writes, together (64 bytes). */
	struct ukevent uk;		/* as registered; req_flags under q->lock */
	__u32 rflags, rdata[2];		/* pending or held result, under q->lock */
	unsigned int flags;		/* KITEM_*, under q->lock */
	struct kqueue *q;
	/* The rest. */
	const struct ktype *kt;		/* its type's descriptor (ktype.h) */
	const struct korigin_ops *ops;
	void *odata;
	struct klist tnode;		/* hash bucket, under q->ctl */
	unsigned int rpos;		/* position in q->rslots while READY */
	struct klist rnode;		/* a private list of one dequeue pass */
	struct klist lnode;		/* q->level (dequeued LEVEL kevent, D43), under q->ctl */
	struct kuid *uid;		/* charged for KEVENTS and res */
	int res;			/* the extra KEVENT_LIMIT_* charged, or -1 */
	__u64 priv[];			/* the type's private data (ktype.priv_size) */
};

struct kqueue {
	struct kcore *core;
	struct kcaller owner;
	struct kuid *uid;
	void *ring;
	atomic_int refs;

	pthread_mutex_t ctl;		/* serialises control calls (2006) */
	struct klist *table;		/* buckets, under ctl */
	unsigned int nbuckets;
	atomic_uint kevent_num;		/* written under ctl */
	bool ctl_seen, dead;		/* under ctl */
	unsigned int abi_flags;		/* KEVENT_ABI_*, under ctl */
	unsigned int revision;		/* SET_ABI level, 1 until set; under ctl */
	krules rules;			/* kr_rules_of(revision); under ctl, read atomically */
	bool deliver_hooks;		/* ktypes_deliver(rules), under ctl */
	/* Revision 2: the kevent_uring (D53, D54), under ctl. */
	bool uring_set;			/* RING_INIT accepted (a ring, or none) */
	__u64 uring;			/* user address; 0: no ring */
	__u32 unum, kidx, uidx, used, over, ufaults;
	bool latched;			/* READY(0) with no waiter (D50), under lock */
	/* KEVENT_IOC_FAULT: the ADD allocation that fails, counted from 1; 0 none */
	__u64 fault_add;		/* under ctl */
	struct klist waiters;		/* parked, arrival order, under ctl */
	struct klist level;		/* dequeued KEVENT_REQ_LEVEL kevents (D43), under ctl */
	atomic_bool due;		/* a waiter expired or was interrupted */

	pthread_mutex_t lock;		/* the ready lock */
	/*
	 * The ready FIFO: an array of positions [rhead, rtail) (free-running,
	 * masked by rcap - 1) holding kitems or NULL where one was removed.
	 * A kevent is ready at most once, so rcap > kevent_num always leaves
	 * room after compaction; it grows under q->ctl before an ADD.
	 */
	struct kitem **rslots;
	unsigned int rcap, rhead, rtail;
	unsigned int ready_num;
	unsigned int ring_idx;		/* private copy: never read back */
	unsigned int wait_min;		/* smallest min_nr parked; UINT_MAX none */
	void (*notify)(void *ctx);
	void *notify_ctx;
	const struct ktransport *t;	/* set before use; read-only after */
	void *tfile;
	size_t ring_lo, ring_hi;	/* ring bytes not yet told to t (hi 0: none) */

	struct klist work_node;		/* core->work, under core->lock */
	bool work_pending;		/* under core->lock */
};

/* kwaiter.flags (atomic) */
#define KWAIT_EXPIRED		0x1
#define KWAIT_INTERRUPTED	0x2
#define KWAIT_WOKEN		0x4	/* KEVENT_CTL_READY with num 0 (D50) */

struct kwaiter {
	struct kqueue *q;		/* holds a reference */
	struct klist qnode;		/* q->waiters, under q->ctl */
	size_t heap_idx;		/* in core->heap, under core->lock */
	__u64 deadline;			/* core clock ns; ~0: none */
	__u64 rt_deadline;		/* ABSTIME CLOCK_REALTIME ns (D48); 0: none */
	__u32 min_nr, max_nr;
	__u64 events;
	struct kwait_req req;
	struct kcaller caller;		/* D69: whose file table its records are checked in */
	struct kuid *uid;		/* charged KEVENT_LIMIT_PARKED */
	atomic_uint flags;
	atomic_int refs;		/* the core's and the transport's */
	bool parked;			/* under q->ctl */
	bool is_wait;			/* KEVENT_IOC_WAIT: max_nr is its num */
	int result;
	struct klist done_node;		/* private to one service pass */
	/* O11: counts of the result still to read (kwaiter_counts) */
	struct { unsigned int idx; struct kcount_pin *pin; } *pins;
	unsigned int npins;
};

#define KHEAP_NONE ((size_t)-1)

/*
 * Whether q follows rule r (rules.h).  The plan of a call reads it without
 * q->ctl (kdisp_plan), so it is an atomic load; SET_ABI stores it under
 * q->ctl before the first CTL and never again (D40).
 */
static inline bool kq_rule(const struct kqueue *q, enum krule r)
{
	return (__atomic_load_n(&q->rules, __ATOMIC_RELAXED) >> r) & 1u;
}

/* Whether q follows every rule of set. */
static inline bool kq_rules(const struct kqueue *q, krules set)
{
	return (__atomic_load_n(&q->rules, __ATOMIC_RELAXED) & set) == set;
}

/*
 * The revisions this core serves (A12, docs/abi-change.md 3): SET_ABI accepts
 * KCORE_REV_LOWEST .. KCORE_REV_HIGHEST and INFO reports them.  Raised to a
 * new KEVENT_ABI_REVISION together with the core's rules for it.
 */
#define KCORE_REV_LOWEST	1
#define KCORE_REV_HIGHEST	4

/* core.c */
void *kcore_alloc(struct kcore *core, size_t len);
void *kcore_alloc_raw(struct kcore *core, size_t len);
__u64 kcore_now(const struct kcore *core);
__u64 kcore_clock(const struct kcore *core, clockid_t clock);
struct kuid *kcore_uid_get(struct kcore *core, uid_t uid);
int kuid_charge(struct kcore *core, struct kuid *u, int res);
void kuid_uncharge(struct kuid *u, int res);
unsigned int kuid_expiry_rate(const struct kcore *core, struct kuid *u);
const struct korigin_ops *kcore_origin(const struct kcore *core, __u32 type);
void kcore_schedule(struct kcore *core, struct kqueue *q);
int kcore_heap_add(struct kcore *core, struct kwaiter *w);
void kcore_heap_del(struct kcore *core, struct kwaiter *w);

/* queue.c: the ready list, for the types' hooks (ktype.h) too */

/* What an enqueue leaves to do after q->lock is dropped. */
struct enqueue_effects {
	void (*notify)(void *ctx);
	void *notify_ctx;
	bool schedule;
	bool ring;			/* ring bytes to tell the transport */
};

/*
 * k has a result (q->lock held): on the ready list, or merged into the
 * pending one (A9).  1: the origin must stop reporting k.
 */
int enqueue_locked(struct kqueue *q, struct kitem *k, const struct korigin_result *res,
		   struct enqueue_effects *fx);
/* A fire while k is inside attach() (q->lock held), held until ADD decides (D3). */
int hold_locked(struct kitem *k, const struct korigin_result *res);
/* What enqueue_locked left to do, with no core lock held. */
void enqueue_effects_run(struct kqueue *q, const struct enqueue_effects *fx);
/* Takes k off the ready list if it is there (q->lock held). */
void unready_locked(struct kqueue *q, struct kitem *k);

/* types.c: whether a type served under rules has a deliver hook. */
bool ktypes_deliver(krules rules);

/* queue.c */
void kqueue_get(struct kqueue *q);
void kqueue_put(struct kqueue *q);
void kqueue_service(struct kqueue *q);
int kqueue_ctl(struct kqueue *q, const struct kevent_ctl_ext_arg *arg,
	       const struct kcaller *caller, const struct kuaccess *ua);
/* rt_deadline: an ABSTIME CLOCK_REALTIME deadline in ns (D48), 0 none. */
int kqueue_get_events(struct kqueue *q, const struct kevent_get_events_arg *arg,
		      __u64 rt_deadline, const struct kcaller *caller,
		      const struct kuaccess *ua, const struct kwait_req *wr,
		      struct kwaiter **waiter);
int kqueue_set_abi(struct kqueue *q, const struct kevent_set_abi *arg);
int kqueue_ring_init(struct kqueue *q, const struct kevent_ring_init *arg,
		     const struct kuaccess *ua);
int kqueue_commit(struct kqueue *q, const struct kevent_commit_arg *arg,
		  const struct kuaccess *ua);
/* WAIT with its timeout normalised to timeout_ns (relative, ~0 forever). */
struct kwait_arg {
	__u32 num, old_uidx;
	__u64 timeout_ns;
	int nonblock;
	__u64 rt_deadline;	/* as kqueue_get_events() */
};
int kqueue_wait(struct kqueue *q, const struct kwait_arg *arg, const struct kcaller *caller,
		const struct kuaccess *ua, const struct kwait_req *wr, struct kwaiter **waiter);
int kqueue_fault(struct kqueue *q, const struct kevent_fault *arg);
void kqueue_fill_info(struct kqueue *q, const struct kcaller *caller,
		      struct kevent_info *info);

#endif /* KEVENT_CORE_INTERNAL_H */
