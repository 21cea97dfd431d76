/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The boundary between the queue core (core/) and the event origins
 * (origins/).  One struct korigin_ops per ukevent.type; the core calls it,
 * the origin answers and later reports activity with korigin_fire().
 *
 * LOCKING (the contract both sides rely on)
 *  - attach(), modify() and detach() are called by the core with the queue's
 *    control mutex held and never with a core spinlock or the ready lock
 *    held.  They may block briefly (pidfd_getfd, epoll_ctl) but must never
 *    wait on anything a client controls (design.md B3).
 *  - korigin_fire() may be called from any thread (normally the reactor)
 *    between a successful attach() and the return of detach().  The origin
 *    calls it with its own lock held; the core takes only its ready lock
 *    inside.  Lock order: origin lock -> core ready lock.
 *  - detach() is called exactly once for every attach() that returned 0.
 *    When it returns, no korigin_fire() for that kevent is running and none
 *    will start: the core frees the kevent right after.
 *  - The ukevent returned by korigin_ukevent() may be read in attach() and
 *    modify() only; an origin that needs event/req_flags on its own thread
 *    keeps a copy, updated in modify().
 */
#ifndef KEVENT_CORE_ORIGIN_H
#define KEVENT_CORE_ORIGIN_H

#include <sys/types.h>
#include <time.h>
#include <linux/kevent.h>

/* Who asked: from the FUSE request context, or the process itself in tests. */
struct kcaller {
	pid_t tid;	/* the calling thread; 0: not visible in our pid namespace */
	pid_t tgid;	/* its thread group (mapped from tid by the transport) */
	uid_t uid;
	gid_t gid;
};

/* A registered kevent, opaque to origins. */
struct kitem;

/* What an origin reports about a kevent. */
struct korigin_result {
	__u32 ret_flags;	/* 0, or KEVENT_RET_BROKEN when the source failed */
	__u32 ret_data[2];	/* type specific (A8, A9); [1] = -errno if BROKEN */
};

/*
 * What count() needs, held past the dequeue by a record whose count is read
 * later, on the caller's uid lane (docs/abi.md O11: the count may wait on a
 * lock the client holds, and a parked GET_EVENTS is taken on the core's
 * shared worker).  put() reads the count for out->ret_data[0] into
 * out->ret_data[1] (out NULL: no count) and frees the pin; it may block on
 * the source, so it runs only where the caller's own work may wait.
 */
struct kcount_pin {
	void (*put)(struct kcount_pin *pin, struct ukevent *out);
};

struct korigin_ops {
	const char *name;
	/*
	 * ADD.  Returns 0: registered, waiting (detach() will follow later);
	 * 1: ready now, *res filled; the kevent is not kept (take13) and
	 * detach() is not called; < 0: -errno, the entry fails BROKEN|DONE.
	 */
	int (*attach)(struct kitem *k, const struct kcaller *caller, struct korigin_result *res);
	/*
	 * MODIFY of a registered kevent: event and req_flags were replaced.
	 * Returns 0: keep waiting; 1: ready now (*res filled; the core puts it
	 * on the ready list and keeps it registered); < 0: -errno, BROKEN.
	 * NULL: the core treats MODIFY as "keep waiting".
	 */
	int (*modify)(struct kitem *k, struct korigin_result *res);
	/* Stop watching and free the origin's state for k (see LOCKING). */
	void (*detach)(struct kitem *k);
	/*
	 * KEVENT_REQ_LEVEL (abi.md D43), called as modify() is, when a dequeue
	 * starts on k's queue after k was dequeued: poll the source now and
	 * korigin_fire() k if its condition still holds.  NULL: the type takes
	 * no LEVEL (the core takes it only on the types whose struct ktype
	 * has level set: POLL and SOCKET, core/types.c).
	 */
	void (*level)(struct kitem *k);
	/*
	 * D67: the count a delivered record of k carries in ret_data[1] on a
	 * queue with the rule (korigin_counts), for the bits it reports
	 * (fired, its ret_data[0]), read from the source now and saturated at
	 * 2^32 - 1.  Called through the type's descriptor (ktype.h data)
	 * between a successful attach() and detach(), with the queue's
	 * control mutex held and no core lock; it may take the origin's lock.
	 * NULL: the records carry 0.
	 */
	__u32 (*count)(struct kitem *k, __u32 fired);
	/*
	 * O11: what count() needs, taken now without blocking (the core's
	 * worker calls it, q->ctl held), for a count read later by the pin's
	 * put().  NULL return (or no op): the core calls count() at once.
	 */
	struct kcount_pin *(*count_pin)(struct kitem *k);
	/*
	 * D69: whether k's id still names, in the file table of caller (the
	 * thread a record of k is delivered to), the file attach() took: 0
	 * yes, or the origin cannot tell (it logs what is not ordinary);
	 * -EBADF no (closed, or the number is another file).  Called through
	 * the type's descriptor (ktype.h fd_check) between a successful
	 * attach() and detach(), q's control mutex held, no core lock.  NULL:
	 * never stale.
	 */
	int (*fd_check)(struct kitem *k, const struct kcaller *caller);
};

/*
 * Origin -> core: k's source had activity that matches its event mask (or
 * failed: res->ret_flags has KEVENT_RET_BROKEN).  If k is not on the ready
 * list, the core writes its ring slot, appends it and wakes waiters; if it is,
 * the result replaces the pending one (merge, A9).  Returns 1 when the origin
 * must stop reporting k (ONESHOT fired or BROKEN; detach() still follows),
 * else 0.
 */
int korigin_fire(struct kitem *k, const struct korigin_result *res);

/*
 * B7: charges one expiry of timer k to the budget of the uid that added it
 * (KEVENT_LIMIT_EXPIRIES per second, spent in windows of
 * KORIGIN_BUDGET_WINDOW_NS).  Returns 0 when charged, so the timer fires;
 * else the budget is spent and the return value is the time (on now_ns's
 * clock) the next window opens: the origin moves the timer on to a grid point at or
 * after it, and the expiries in between merge (A9).  Call it from one
 * thread at a time (the reactor).
 */
#define KORIGIN_BUDGET_WINDOW_NS	100000000ull	/* a tenth of the per-second cap */
__u64 korigin_expiry_charge(struct kitem *k, __u64 now_ns);

/* The kevent as the caller passed it (see LOCKING for when to read it). */
const struct ukevent *korigin_ukevent(const struct kitem *k);

/* The revision of k's queue (fixed before its first ADD; D40). */
unsigned int korigin_revision(const struct kitem *k);

/*
 * D68: k's queue is of a revision with KEVENT_INODE's notes (WRITE ..
 * DELETE); below it those event bits are unknown and never reported.
 */
int korigin_inode_notes(const struct kitem *k);

/*
 * D42: k asks for KEVENT_REQ_ALWAYS_QUEUE on a revision-2 queue.  An origin
 * that finds such a k ready in attach() keeps it registered, reports the
 * readiness with korigin_fire() (held until ADD decides) and returns 0:
 * the core then queues it instead of answering it by ADD.
 */
int korigin_always_queue(const struct kitem *k);

/*
 * D67: k's records carry its source's count in ret_data[1] (its queue's
 * revision has the rule and its type's descriptor a data hook).  Then an
 * attach() that answers 1 fills ret_data[1] with count() itself: the core
 * cannot ask the origin for k once attach() returned 1.
 */
int korigin_counts(const struct kitem *k);

/*
 * Revision 3, KEVENT_POSIX_TIMER (D58, D61).  The core keeps each timer's
 * grid (first + k * interval on clock) and counts its expiries from grid
 * indexes at delivery; the origin only fires the points that come due.
 * korigin_grid() may be called in attach() and modify() (a MODIFY that
 * re-armed set a new gen; one that did not keeps it).  first 0: disarmed.
 */
struct korigin_grid {
	clockid_t clock;	/* relative REALTIME is measured on MONOTONIC */
	int abs_realtime;	/* ABSTIME on REALTIME: moves with clock_settime */
	__u64 first_ns;		/* the first expiry on clock; 0: disarmed */
	__u64 interval_ns;	/* 0: one expiry */
	__u32 gen;
};
void korigin_grid(const struct kitem *k, struct korigin_grid *g);
/*
 * Grid point index (0 = first_ns) of setting gen is due.  A fire of an
 * older gen or of a point already delivered is dropped.  Returns 1 when the
 * origin must stop (ONESHOT fired), else 0.  Plain korigin_fire() on a
 * POSIX timer means "point ret_data[0] of the current gen is due".
 */
int korigin_timer_fire(struct kitem *k, __u32 gen, __u64 index);

/* One pointer of private state per kevent, owned by the origin. */
void *korigin_data(const struct kitem *k);
void korigin_set_data(struct kitem *k, void *data);

/* The origin table: the core dispatches ADD on ukevent.type through it. */
int korigin_register(__u32 type, const struct korigin_ops *ops);

#endif /* KEVENT_CORE_ORIGIN_H */
