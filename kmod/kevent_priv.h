/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kevent.ko internals shared by the queue (kevent_main.c) and the origins
 * (kevent_origins.c).  See kevent_main.c for the LOCKING rules.
 */
#ifndef KEVENT_KMOD_PRIV_H
#define KEVENT_KMOD_PRIV_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/hrtimer.h>
#include <linux/workqueue.h>
#include <linux/wait.h>
#include <linux/poll.h>
#include <linux/atomic.h>
#include <linux/math64.h>
#include <linux/kevent.h>

#include "kevent_rules.h"

#define KEVENT_HASH_BITS	8	/* take13: 256 buckets on id.raw[0] */

/*
 * The revisions this module serves (INFO's abi_revision, SET_ABI's range).
 * Raised in the commit that implements a level, never by the header alone
 * (docs/abi-change.md 3).
 */
#define KQ_REV_HIGHEST		4

/* kevent.flags, under queue->ready_lock */
#define KEV_READY	0x1	/* on queue->ready */
#define KEV_ZOMBIE	0x2	/* ONESHOT delivered: invisible, waits for reaping */
#define KEV_DEAD	0x4	/* being removed: origin reports are dropped */
#define KEV_INFLIGHT	0x8	/* taken by a WAIT, its ring copy not yet done */
#define KEV_LEVELQ	0x10	/* on queue->level: re-checked at the next dequeue */
#define KEV_DISARMED	0x20	/* DISPATCH delivered: not made ready until MODIFY (D65) */
#define KEV_HELD	0x40	/* DISARMED with a result: ready at the re-arm (D65) */
#define KEV_STALE	0x80	/* D69: delivered -EBADF; its reports are dropped for good */

struct kevent_queue;
struct kevent;

/*
 * D58-D61: a type whose EXT entries carry a setting (the POSIX timer).
 * check: ADD and MODIFY, before anything changes.  store: ADD, before
 * attach() arms it.  reset: a MODIFY with a new setting, the origin
 * detached, ready_lock held: drop what is pending.  arm: after reset, the
 * new setting.  query: ready_lock held, fill x->ext from the state now
 * and return QUERY's ret_data[0], changing nothing.
 */
struct kevent_setting_ops {
	int (*check)(const struct ukevent_ext *x);
	void (*store)(struct kevent *k, const struct ukevent_ext *x);
	void (*reset)(struct kevent *k);
	void (*arm)(struct kevent *k, const struct ukevent_ext *x);
	u32 (*query)(struct kevent *k, struct ukevent_ext *x);
};

/*
 * One per type (kevent_types[] in kevent_origins.c): what the queue asks
 * of a type goes through here, so CTL, INFO and the dispatch name no type.
 */
struct kevent_origin {
	const char *name;
	u32 rule;			/* KR_*: the type exists only under it; 0 always */
	u32 feature;			/* KEVENT_FEAT_* INFO reports with the type (D64) */
	/* D60: NULL, an EXT entry's ext must be all zero (a 40-byte one is fine). */
	const struct kevent_setting_ops *setting;
	/* D62: READY merges a trigger into a pending result, not just marks it. */
	bool ready_merges;
	/*
	 * MODIFY, before the new event and req_flags replace the old ones
	 * (D58, D61): 0 or -errno (the entry fails, nothing changes).  NULL:
	 * no check of its own.
	 */
	int (*modify_check)(const struct kevent *k, const struct ukevent *uk);
	/*
	 * ADD: 0 registered and waiting; 1 ready now (k->uk.ret_data filled,
	 * the kevent is not kept and detach() is not called); <0 -errno.
	 * With kevent_always_queue(k) an origin keeps a kevent that is ready
	 * now, fires it itself and returns 0 (abi.md D42): the queue links it
	 * before any dequeue can reap it (that needs ctl_mutex).
	 */
	int (*attach)(struct kevent *k);
	/*
	 * MODIFY (event and req_flags replaced): 0 or -errno (the entry is
	 * BROKEN, the kevent stays).  Found ready, the origin fires it itself.
	 */
	int (*modify)(struct kevent *k);
	/* Stop watching; no report for k runs or starts once it returns. */
	void (*detach)(struct kevent *k);
	/*
	 * KEVENT_REQ_LEVEL (abi.md D43), ctl_mutex held, process context:
	 * poll the source now and fire k if its condition still holds.  NULL:
	 * the type takes no LEVEL (the entry fails -EINVAL).
	 */
	void (*level)(struct kevent *k);
	/*
	 * Revision 3 (D58, D62), ready_lock held, any context: fill what a
	 * dequeue delivers (out is a copy of k->uk) and clear the pending
	 * result; undeliver puts a delivered result back (a WAIT whose ring
	 * write faulted, D41).  NULL: out is k->uk as it stands.
	 */
	void (*deliver)(struct kevent *k, struct ukevent *out);
	void (*undeliver)(struct kevent *k, const struct ukevent *out);
	/*
	 * D67 (KR_DATA): the count a delivered record carries in ret_data[1].
	 * data_hold, ready_lock held, any context (a fire may hand k to a
	 * parked waiter from irq): a reference to k's source, taken with the
	 * record, since k may be removed before its count is read.
	 * data_count, process context, no queue spinlock, after the take: the
	 * count for out's bits, read without sleeping; the caller drops the
	 * reference.  NULL: ret_data[1] is the result's.
	 */
	struct file *(*data_hold)(struct kevent *k);
	u32 (*data_count)(struct file *f, const struct ukevent *out);
	/*
	 * D69 (KR_FD_CHECK): the record's id must still name the file
	 * data_hold gives, in the delivering caller's table; holds(k, f) says
	 * whether k is the kevent of that file (ctl_mutex held).  NULL: no
	 * check.
	 */
	bool (*holds)(const struct kevent *k, const struct file *f);
};


struct kevent_pwq;
struct socket;

struct kevent {
	struct list_head hnode;		/* queue->table bucket, ctl_mutex */
	struct list_head rnode;		/* queue->ready or ->zombies, ready_lock */
	struct list_head lnode;		/* queue->level (KEV_LEVELQ), ready_lock */
	struct kevent_queue *q;
	u32 rules;			/* KR_*: the queue's, fixed before its first ADD */
	const struct kevent_origin *origin;
	struct ukevent uk;		/* ret_* under ready_lock once registered */
	unsigned int flags;		/* KEV_*, ready_lock */
	union {
		struct {
			struct hrtimer hrt;
			ktime_t period;
		} timer;
		struct {
			struct file *file;	/* held: A7 */
			struct socket *sock;	/* the file's, NULL if none; fixed */
			/*
			 * The wait-queue head attach hooked, when it hooked
			 * exactly one: a socket's or pipe's, whose lock orders
			 * every poll-and-fire of a kevent polled in the waker
			 * (kevent_origins.c, "polling in the waker").
			 */
			wait_queue_head_t *whead;
			struct list_head pwqs;	/* attach/detach only, ctl_mutex */
			struct work_struct work;	/* re-check off the waker */
			__poll_t want;		/* kernel poll bits that matter */
			u32 event;		/* copy of uk.event for the work */
			bool socket;
			bool pipe;		/* a pipe(2) end; fixed */
			bool stopped;		/* ONESHOT fired, BROKEN, or ADD undecided */
			bool freed;		/* POLLFREE seen */
		} poll;
		/*
		 * KEVENT_POSIX_TIMER (D58, D59): grid first + n * interval on
		 * the hrtimer's own clock base (a relative CLOCK_REALTIME
		 * setting runs on CLOCK_MONOTONIC, as Linux maps it).  seen
		 * and pending under ready_lock; the rest under ctl_mutex, and
		 * read by the callback only while the hrtimer is armed.
		 */
		struct {
			struct hrtimer hrt;
			struct kevent_timer_spec spec;	/* as set; clock for QUERY */
			ktime_t first;			/* absolute, on the base */
			u64 interval;			/* ns; 0: one expiry */
			u64 seen;			/* grid points counted */
			u64 pending;			/* counted, not delivered */
			bool armed;
		} ptimer;
		void *priv;			/* inode: its struct kevent_imark */
	};
};

/* Module-wide counters, exported in debugfs; all must read 0 before rmmod. */
struct kevent_stats {
	atomic_t queues;
	atomic_t kevents;
	atomic_t pwqs;
	atomic_t pages;
	atomic_t buffers;
	atomic_t waiters;
	atomic_t imarks;
};
extern struct kevent_stats kevent_stats;

/* D42: ALWAYS_QUEUE is a request flag only where the rule is (revision 2). */
static inline bool kevent_always_queue(const struct kevent *k)
{
	return (k->rules & KR_ALWAYS_QUEUE) && (k->uk.req_flags & KEVENT_REQ_ALWAYS_QUEUE);
}

extern struct workqueue_struct *kevent_wq;
extern const struct file_operations kevent_fops;

/*
 * Origin -> queue: k had matching activity (or failed, ret_flags has
 * KEVENT_RET_BROKEN).  Any context, no origin lock needed.  Returns true when
 * the origin must stop reporting k (ONESHOT or BROKEN).
 */
bool kevent_fire(struct kevent *k, u32 ret_flags, u32 data0, u32 data1);
bool kevent_fire_merged(struct kevent *k, u32 ret_flags, u32 data0, u32 data1);

/*
 * The POSIX timer's callback: grid points first_idx .. first_idx + n - 1
 * passed (hrtimer_forward's count); counted once each, then k fires.
 */
bool kevent_ptimer_fire(struct kevent *k, u64 first_idx, u64 n);

/* Grid points of k's timer at or before now (ready_lock or ctl_mutex). */
static inline u64 kevent_ptimer_index(const struct kevent *k, ktime_t now)
{
	const typeof(k->ptimer) *p = &k->ptimer;

	if (!p->armed || ktime_before(now, p->first))
		return 0;
	if (!p->interval)
		return 1;
	return div64_u64(ktime_sub(now, p->first), p->interval) + 1;
}

/* The types a queue with these rules may register (A3, D51, D64). */
const struct kevent_origin *kevent_origin_get(u32 type, u32 rules);
/* INFO (D64): those types as a bit set, their features added to *features. */
u32 kevent_origin_types(u32 rules, u32 *features);

/* design.md B3: fd kinds whose poll could wait on a client-run server. */
bool kevent_file_refused(struct file *f);

extern const struct kevent_origin kevent_inode_origin;
int kevent_inode_init(void);
void kevent_inode_exit(void);
int kevent_origins_init(void);
void kevent_origins_exit(void);

#endif /* KEVENT_KMOD_PRIV_H */
