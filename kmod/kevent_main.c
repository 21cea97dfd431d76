// SPDX-License-Identifier: GPL-2.0
/*
 * kevent.ko: the Aug 23 2006 (take13) kevent queue as a misc device,
 * /dev/kevent, with the ioctl transport of include/uapi/linux/kevent.h and
 * the semantics of docs/abi.md: revision 1 (D1-D39) on every queue,
 * revision 2 (D40-D57: the take26 ring in the caller's memory, WAIT,
 * COMMIT, CTL_READY, timespec timeouts, LEVEL, ALWAYS_QUEUE, opt-in EINTR)
 * and revision 3 (D58-D64: POSIX timers, user events, KEVENT_IOC_CTL_EXT,
 * QUERY, the type in the search key) and revision 4 (D65-D69: DISPATCH,
 * the source's count in ret_data[1], the inode notes, the check that a
 * kevent's fd still names its file at delivery) on a queue that selects
 * it with SET_ABI.  One open = one queue.
 *
 * LOCKING
 *  - queue->ctl_mutex serialises everything that changes the table of
 *    registered kevents: CTL, SET_ABI, the reaping of delivered ONESHOT
 *    kevents, the LEVEL re-checks (D43) and release.  Origin
 *    attach/modify/detach/level run under it and may sleep; nothing a
 *    client controls is waited on (design.md B3).  It is also the per-queue
 *    ring lock of D53: RING_INIT, the copy of a WAIT (from taking the slots
 *    to the ring_kidx store) and COMMIT hold it, so ring_kidx never moves
 *    back; a WAIT parks without it.
 *  - queue->ready_lock (a spinlock, always irqsave: the hrtimer origin fires
 *    in hard-irq context) covers the ready list, ready_num, the zombie list,
 *    every kevent's flags and ret_* fields, the ring index and the list of
 *    parked waiters.  A fire hands events to the oldest satisfiable waiter
 *    under it (D16), so a waiter always takes the lock once after waking
 *    before it may return: that keeps its stack frame and task alive while
 *    the waker still touches them.
 *  - Order: ctl_mutex -> ready_lock -> (poll_wq lock, task pi lock).
 *    Origins call kevent_fire() holding at most their own spinlock (the
 *    inode mark's lock, a watched file's wait-queue head lock) and never a
 *    lock of the queue: a keyed poll wakeup that answers by itself, and any
 *    wakeup of a TCP or AF_UNIX socket or a pipe, fire in the waker, other
 *    poll re-checks run in a kworker, hrtimers in hard irq, fsnotify in the
 *    caller of the filesystem operation.  See kevent_origins.c and
 *    kevent_inode.c.
 *  - A delivered ONESHOT kevent becomes a zombie (off every list but the
 *    table, invisible to MODIFY/REMOVE) until someone holding ctl_mutex
 *    reaps it: the fire path that hands it to a waiter may run in irq.
 *  - A kevent a WAIT took is in flight (KEV_INFLIGHT) until its ring copy
 *    ends: then freed if ONESHOT, or put back at the head on a fault
 *    (D41).  A REMOVE in between unhooks it and leaves the free to the WAIT.
 *  - No user memory is touched under ready_lock: arrays move through
 *    kernel buffers (D9, D10); only the ring (and CTL's arrays) are
 *    written under ctl_mutex, in the caller's context (copy_to_user).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/file.h>
#include <linux/fdtable.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/compat.h>
#include <linux/sched/signal.h>
#include <linux/debugfs.h>
#include <linux/pagemap.h>
#include <linux/hrtimer.h>
#include <linux/nospec.h>

#include "kevent_priv.h"

#define KEVENT_QUEUE_MAX	(KEVENT_MAX_EVENTS - 1)	/* A4 */

struct kevent_queue {
	struct mutex ctl_mutex;
	unsigned int kevent_num;	/* registered, incl. zombies; ctl_mutex */
	bool ctl_seen;			/* a CTL or RING_INIT ran: SET_ABI is -EBUSY (A12) */
	u32 revision;			/* SET_ABI level, 1 until SET_ABI(2); INFO only */
	u32 rules;			/* KR_*: what the revision means, tested by name */
	u32 abi_flags;			/* KEVENT_ABI_* */
	/* KEVENT_IOC_FAULT: the ADD allocation that fails, counted from 1; 0 none */
	u64 fault_add;			/* ctl_mutex */
	struct list_head table[1 << KEVENT_HASH_BITS];

	spinlock_t ready_lock;
	struct list_head ready;		/* FIFO of KEV_READY kevents */
	unsigned int ready_num;
	struct list_head zombies;	/* delivered ONESHOT, to be freed */
	struct list_head level;		/* dequeued KEVENT_REQ_LEVEL kevents (D43) */
	struct list_head waiters;	/* parked GET_EVENTS, arrival order */
	unsigned int parked_num;	/* on waiters (INFO queue_parked); ready_lock */
	unsigned int ring_index;	/* ours; never read back from the page */
	struct page *pages[KEVENT_RING_PAGES];
	unsigned int ring_free;		/* take26 ring: slots not yet handed out */
	bool wake_latched;		/* CTL_READY num 0 found no waiter */

	/*
	 * The take26 ring in the caller's memory (revision 2, docs/abi.md
	 * 5.7), under ctl_mutex: every write to it happens in WAIT or COMMIT
	 * holding it, so ring_kidx never moves back (design.md, abi.md D40).
	 */
	struct kevent_uring __user *uring;
	bool ring_inited;		/* RING_INIT ran: -EBUSY after */
	u32 ring_num, ring_kidx, ring_uidx, ring_over;
	bool ring_full;			/* kidx == uidx and every slot published */
	u32 ring_faults;		/* INFO ring_faults */

	wait_queue_head_t poll_wq;	/* poll() on the kevent fd */
};

/*
 * A GET_EVENTS or WAIT call, parked or not.  A WAIT (kevs set) takes at
 * most the ring's free slots and keeps the kevents it took in flight
 * (KEV_INFLIGHT) until their ring copy is confirmed, so a fault can put
 * them back (D41).
 */
struct kevent_waiter {
	struct list_head node;		/* queue->waiters */
	struct task_struct *task;
	unsigned int min_nr, max_nr;
	struct ukevent *buf;
	struct kevent **kevs;		/* WAIT only: what it took, in order */
	struct file **files;		/* KR_DATA: each record's source (D67) */
	unsigned int got;
	bool zombies;			/* got ONESHOT kevents: reap after */
	bool done;			/* served by a fire; release order */
};

struct kevent_stats kevent_stats;
struct workqueue_struct *kevent_wq;
static struct kmem_cache *kevent_cache;
static struct kmem_cache *kevent_queue_cache;
static struct dentry *kevent_debugfs;

static bool fault_inject;
module_param(fault_inject, bool, 0444);
MODULE_PARM_DESC(fault_inject, "answer KEVENT_IOC_FAULT (test suites only)");

static_assert(PAGE_SIZE == KEVENT_RING_PAGE_SIZE);
static_assert(sizeof(struct ukevent) == 40);
static_assert(sizeof(struct mukevent) == 16);
static_assert(sizeof(struct kevent_mring) <= KEVENT_RING_PAGE_SIZE);
static_assert(sizeof(struct kevent_info) == KEVENT_INFO_SIZE_VER2);
static_assert(sizeof(struct kevent_ctl_arg) == KEVENT_CTL_ARG_SIZE_VER0);
static_assert(sizeof(struct kevent_ctl_ext_arg) == KEVENT_CTL_ARG_SIZE_VER1);
static_assert(sizeof(struct ukevent_ext) == 2 * sizeof(struct ukevent));
static_assert(sizeof(struct kevent_timer_spec) == 40);
/* D59: the clock ids are Linux's, handed to hrtimer_init as they are. */
static_assert(KEVENT_CLOCK_REALTIME == CLOCK_REALTIME &&
	      KEVENT_CLOCK_MONOTONIC == CLOCK_MONOTONIC &&
	      KEVENT_CLOCK_BOOTTIME == CLOCK_BOOTTIME);
static_assert(sizeof(struct kevent_get_events_arg) == KEVENT_GET_EVENTS_ARG_SIZE_VER1);
static_assert(sizeof(struct kevent_set_abi) == KEVENT_SET_ABI_SIZE_VER0);
static_assert(sizeof(struct kevent_fault) == KEVENT_FAULT_SIZE_VER0);
static_assert(sizeof(struct kevent_ring_init) == KEVENT_RING_INIT_SIZE_VER0);
static_assert(sizeof(struct kevent_wait_arg) == KEVENT_WAIT_ARG_SIZE_VER0);
static_assert(sizeof(struct kevent_commit_arg) == KEVENT_COMMIT_ARG_SIZE_VER0);
static_assert(offsetof(struct kevent_uring, event) == KEVENT_URING_HDR_SIZE);

/* ---- buffers -------------------------------------------------------- */

static struct ukevent *kevent_buf_alloc(unsigned int n)
{
	struct ukevent *buf = kvmalloc_array(n, sizeof(*buf), GFP_KERNEL);

	if (buf)
		atomic_inc(&kevent_stats.buffers);
	return buf;
}

static void kevent_buf_free(struct ukevent *buf)
{
	if (!buf)
		return;
	kvfree(buf);
	atomic_dec(&kevent_stats.buffers);
}

/* A user address from a wrapper struct: 32-bit callers give 32-bit ones. */
static int kevent_uaddr(u64 addr, bool compat, void __user **out)
{
	if (compat) {
		if (addr >> 32)
			return -EFAULT;
		*out = compat_ptr((compat_uptr_t)addr);
		return 0;
	}
	*out = u64_to_user_ptr(addr);
	return 0;
}

/*
 * D10: may GET_EVENTS write len bytes at ubuf?  A write probe that writes
 * nothing: look the pages up for writing (faulting them in if needed) and
 * let go at once.  A read-only or unmapped range is -EFAULT.  The lockless
 * GUP walk costs far less than a fault-in per page when the buffer is hot.
 */
static int kevent_probe_writable(void __user *ubuf, size_t len)
{
	unsigned long start = (unsigned long)ubuf & PAGE_MASK;
	unsigned long end = PAGE_ALIGN((unsigned long)ubuf + len);
	struct page *pages[16];
	int n, got;

	if (!access_ok(ubuf, len))
		return -EFAULT;
	while (start < end) {
		n = min_t(unsigned long, (end - start) >> PAGE_SHIFT, ARRAY_SIZE(pages));
		got = get_user_pages_fast(start, n, FOLL_WRITE, pages);
		if (got <= 0)
			return -EFAULT;
		release_pages(pages, got);
		start += (unsigned long)got << PAGE_SHIFT;
	}
	return 0;
}

/* ukevent slots that hold n pointers (kevents, files) after a call's records. */
#define KQ_PTR_SLOTS(n) \
	DIV_ROUND_UP((size_t)(n) * sizeof(void *), sizeof(struct ukevent))
static_assert(sizeof(struct ukevent) % __alignof__(void *) == 0);

/* ---- ready list, ring, waiters (ready_lock held) --------------------- */

static void kq_ring_write(struct kevent_queue *q, const struct kevent *k)
{
	unsigned int idx = q->ring_index;
	struct kevent_mring *page = page_address(q->pages[idx / KEVENTS_ON_PAGE]);
	struct kevent_mring *page0 = page_address(q->pages[0]);
	struct mukevent *m = &page->event[idx % KEVENTS_ON_PAGE];

	m->id = k->uk.id;
	m->ret_flags = k->uk.ret_flags;
	m->__pad = 0;
	idx = (idx + 1) % KEVENT_MAX_EVENTS;
	q->ring_index = idx;
	/* Readers acquire the index, then read the slots before it. */
	smp_store_release(&page0->index, idx);
}

/* D65: whether a delivery disarms k (a ONESHOT one is freed instead). */
static bool kq_dispatches(const struct kevent *k)
{
	return (k->rules & KR_DISPATCH) &&
	       (k->uk.req_flags & (KEVENT_REQ_DISPATCH | KEVENT_REQ_ONESHOT)) ==
		       KEVENT_REQ_DISPATCH;
}

/*
 * D43: a LEVEL kevent just dequeued is checked at the next dequeue; D65:
 * not a disarmed one, which MODIFY's re-check re-arms.
 */
static void kq_level_note(struct kevent_queue *q, struct kevent *k)
{
	if (!(k->rules & KR_LEVEL) || (k->flags & (KEV_LEVELQ | KEV_DISARMED)) ||
	    (k->uk.req_flags & (KEVENT_REQ_LEVEL | KEVENT_REQ_ONESHOT)) != KEVENT_REQ_LEVEL)
		return;
	k->flags |= KEV_LEVELQ;
	list_add_tail(&k->lnode, &q->level);
}

static void kq_level_forget(struct kevent *k)
{
	if (k->flags & KEV_LEVELQ) {
		list_del_init(&k->lnode);
		k->flags &= ~KEV_LEVELQ;
	}
}

/*
 * D67: a reference to the source whose count k's record will carry, or
 * NULL (ready_lock held): no count below revision 4, for a type without
 * one, or for a BROKEN record (it keeps its -errno).
 */
static struct file *kq_data_hold(struct kevent *k)
{
	if (!(k->rules & (KR_DATA | KR_FD_CHECK)) || !k->origin->data_hold ||
	    (k->uk.ret_flags & KEVENT_RET_BROKEN))
		return NULL;
	return k->origin->data_hold(k);
}

/*
 * D69: whether fd names f in the calling thread's table.  Under RCU with
 * no reference taken: only the pointer is compared, and f is held by the
 * caller, so no other file can have its address meanwhile.
 */
static bool kq_fd_names(unsigned int fd, const struct file *f)
{
	bool same;

	rcu_read_lock();
	same = files_lookup_fd_raw(current->files, fd) == f;
	rcu_read_unlock();
	return same;
}

/*
 * D69, then D67, in the caller's context with no queue spinlock: each
 * record w took is checked against the caller's table (a stale one is
 * BROKEN -EBADF, no bit, not counted, and keeps its file reference for
 * kq_stale_stop), then counted (a pipe's count takes the pipe's own lock),
 * and the references dropped.  A WAIT whose ring copy faults does it again
 * at its next delivery.  True when a record was stale.
 */
static bool kq_data_count(struct kevent_queue *q, struct kevent_waiter *w)
{
	u32 rules = READ_ONCE(q->rules);
	const struct kevent_origin *o;
	struct ukevent *out;
	bool stale = false;
	unsigned int i;

	if (!w->files)
		return false;
	for (i = 0; i < w->got; i++) {
		if (!w->files[i])
			continue;
		out = &w->buf[i];
		o = kevent_origin_get(out->type, rules);
		if ((rules & KR_FD_CHECK) && o->holds &&
		    !kq_fd_names(out->id.raw[0], w->files[i])) {
			out->ret_flags = KEVENT_RET_BROKEN | KEVENT_RET_DONE;
			out->ret_data[0] = 0;
			out->ret_data[1] = (u32)-EBADF;
			stale = true;
			continue;
		}
		if (rules & KR_DATA)
			out->ret_data[1] = o->data_count(w->files[i], out);
		fput(w->files[i]);
		w->files[i] = NULL;
	}
	return stale;
}

static struct kevent *kq_find(struct kevent_queue *q, const struct ukevent *uk);

/*
 * D69 (ctl_mutex held): each kevent whose record kq_data_count found stale
 * leaves its origin for good: its reports are dropped from now on (its
 * origin stops at the next one), a result that came since the take is
 * dropped too, and MODIFY asks its origin nothing (kq_modify_one).  A WAIT
 * knows its kevents; a GET_EVENTS finds each by its key, unless REMOVE
 * took it meanwhile (ONESHOT ones are zombies: freed anyway).
 */
static void kq_stale_stop(struct kevent_queue *q, struct kevent_waiter *w)
{
	const struct kevent_origin *o;
	unsigned long irqflags;
	struct kevent *k;
	unsigned int i;

	lockdep_assert_held(&q->ctl_mutex);
	for (i = 0; i < w->got; i++) {
		if (!w->files[i])
			continue;
		o = kevent_origin_get(w->buf[i].type, READ_ONCE(q->rules));
		k = w->kevs ? w->kevs[i] : kq_find(q, &w->buf[i]);
		if (k && k->origin == o && o->holds(k, w->files[i])) {
			spin_lock_irqsave(&q->ready_lock, irqflags);
			k->flags |= KEV_STALE;
			k->flags &= ~KEV_HELD;
			if (k->flags & KEV_READY) {
				list_del_init(&k->rnode);
				q->ready_num--;
				k->flags &= ~KEV_READY;
			}
			spin_unlock_irqrestore(&q->ready_lock, irqflags);
		}
		fput(w->files[i]);
		w->files[i] = NULL;
	}
}

/*
 * Take up to w->max_nr ready kevents, FIFO, into w->buf; a WAIT no more
 * than the ring's free slots, and it keeps them in flight.  Returns how
 * many.
 */
static unsigned int kq_take(struct kevent_queue *q, struct kevent_waiter *w)
{
	unsigned int n = 0, max = w->max_nr;
	struct kevent *k;

	lockdep_assert_held(&q->ready_lock);
	if (w->kevs)
		max = min(max, q->ring_free);
	while (n < max && !list_empty(&q->ready)) {
		k = list_first_entry(&q->ready, struct kevent, rnode);
		list_del_init(&k->rnode);
		q->ready_num--;
		k->flags &= ~KEV_READY;
		w->buf[n] = k->uk;
		if (k->origin->deliver)
			k->origin->deliver(k, &w->buf[n]);
		if (w->files)
			w->files[n] = kq_data_hold(k);
		if (kq_dispatches(k))
			k->flags |= KEV_DISARMED;	/* D65: until MODIFY re-arms it */
		if (w->kevs) {
			w->kevs[n] = k;
			k->flags |= KEV_INFLIGHT;
		} else if (k->uk.req_flags & KEVENT_REQ_ONESHOT) {
			/* take13 frees it once read; the CTL lock does that. */
			k->flags |= KEV_ZOMBIE;
			list_add_tail(&k->rnode, &q->zombies);
			w->zombies = true;
		}
		kq_level_note(q, k);
		n++;
	}
	if (w->kevs)
		q->ring_free -= n;
	return n;
}

/* D50: a latched READY wake ends the next call's wait before it starts. */
static bool kq_unlatch(struct kevent_queue *q)
{
	bool latched = q->wake_latched;

	lockdep_assert_held(&q->ready_lock);
	q->wake_latched = false;
	return latched;
}

/* w leaves the parked list, served; its task may return once it relocks. */
static void kq_waiter_done(struct kevent_queue *q, struct kevent_waiter *w)
{
	struct task_struct *task = w->task;

	list_del_init(&w->node);
	q->parked_num--;
	smp_store_release(&w->done, true);
	wake_up_process(task);
}

/*
 * D16: the oldest waiter whose min_nr is met takes up to its max_nr; a
 * WAIT needs a free ring slot too.
 */
static void kq_serve(struct kevent_queue *q)
{
	struct kevent_waiter *w, *tmp;

	list_for_each_entry_safe(w, tmp, &q->waiters, node) {
		if (!q->ready_num)
			break;
		if (q->ready_num < w->min_nr || (w->kevs && !q->ring_free))
			continue;
		w->got = kq_take(q, w);
		kq_waiter_done(q, w);
	}
}

/* k becomes ready (ready_lock held; the caller wakes poll() after). */
static void kq_enqueue(struct kevent_queue *q, struct kevent *k)
{
	/* D3: the ring advances only when a kevent becomes ready. */
	kq_ring_write(q, k);
	list_add_tail(&k->rnode, &q->ready);
	k->flags |= KEV_READY;
	q->ready_num++;
	kq_serve(q);
}

/*
 * Wakes poll()/select()/epoll on the kevent fd, when anyone waits there:
 * a fire whose queue nobody polls (a GET_EVENTS or WAIT reader parks on
 * the waiters list, not here) costs no poll_wq lock.  wq_has_sleeper()'s
 * full barrier orders the caller's ready_num (or wake_latched) store
 * before the look at the wait queue; it pairs with the smp_mb() in
 * kevent_poll() between poll_wait() and the load of ready_num, so either
 * the waker sees the poller's entry or the poller sees ready_num.
 */
static void kq_wake_poll(struct kevent_queue *q)
{
	if (wq_has_sleeper(&q->poll_wq))
		wake_up_poll(&q->poll_wq, EPOLLIN | EPOLLRDNORM);
}

/*
 * D50: CTL_READY with num 0.  The oldest parked GET_EVENTS or WAIT takes
 * what is ready now (possibly nothing) and returns; 1.  With nobody
 * parked the wake is latched for the next call and poll(); 0.
 */
static long kq_wake_one(struct kevent_queue *q)
{
	struct kevent_waiter *w;
	unsigned long irqflags;
	long ret = 1;

	spin_lock_irqsave(&q->ready_lock, irqflags);
	if (list_empty(&q->waiters)) {
		q->wake_latched = true;
		ret = 0;
	} else {
		w = list_first_entry(&q->waiters, struct kevent_waiter, node);
		w->got = kq_take(q, w);
		kq_waiter_done(q, w);
	}
	spin_unlock_irqrestore(&q->ready_lock, irqflags);
	if (!ret)
		kq_wake_poll(q);
	return ret;
}

/* kevent_fire with ready_lock held; *wake: poll() must be woken after. */
static bool kq_fire_locked(struct kevent *k, u32 ret_flags, u32 data0, u32 data1,
			   bool *wake)
{
	*wake = false;
	if (k->flags & (KEV_DEAD | KEV_ZOMBIE | KEV_STALE))
		return true;	/* D69: a stale kevent left its origin */
	/* D21: rebuilt on every fire; a merge keeps the latest (A9). */
	k->uk.ret_flags = KEVENT_RET_DONE | ret_flags;
	k->uk.ret_data[0] = data0;
	k->uk.ret_data[1] = data1;
	if (k->flags & KEV_DISARMED) {
		k->flags |= KEV_HELD;	/* D65: merged alike, ready at the re-arm */
	} else if (!(k->flags & KEV_READY)) {
		kq_enqueue(k->q, k);
		*wake = true;
	}
	return (k->uk.req_flags & KEVENT_REQ_ONESHOT) || (ret_flags & KEVENT_RET_BROKEN);
}

bool kevent_fire(struct kevent *k, u32 ret_flags, u32 data0, u32 data1)
{
	struct kevent_queue *q = k->q;
	unsigned long irqflags;
	bool stop, wake;

	spin_lock_irqsave(&q->ready_lock, irqflags);
	stop = kq_fire_locked(k, ret_flags, data0, data1, &wake);
	spin_unlock_irqrestore(&q->ready_lock, irqflags);
	if (wake)
		kq_wake_poll(q);
	return stop;
}

/*
 * D68: a report that adds to the one pending (ready, or held by D65) rather
 * than replacing it: an inode kevent of a queue with the notes reports
 * every bit since its last delivery.  A pending ret_data[1] stays when the
 * new report has none.
 */
bool kevent_fire_merged(struct kevent *k, u32 ret_flags, u32 data0, u32 data1)
{
	struct kevent_queue *q = k->q;
	unsigned long irqflags;
	bool stop, wake;

	spin_lock_irqsave(&q->ready_lock, irqflags);
	if (k->flags & (KEV_READY | KEV_HELD)) {
		data0 |= k->uk.ret_data[0];
		if (!data1)
			data1 = k->uk.ret_data[1];
	}
	stop = kq_fire_locked(k, ret_flags, data0, data1, &wake);
	spin_unlock_irqrestore(&q->ready_lock, irqflags);
	if (wake)
		kq_wake_poll(q);
	return stop;
}

/*
 * D58: grid points first_idx .. first_idx + n - 1 passed; each is counted
 * once, whether this callback or a dequeue's clock reading sees it first.
 * The delivered count is built at the dequeue (the origin's deliver).
 */
bool kevent_ptimer_fire(struct kevent *k, u64 first_idx, u64 n)
{
	struct kevent_queue *q = k->q;
	u64 end = first_idx + n;
	unsigned long irqflags;
	bool stop, wake = false;

	spin_lock_irqsave(&q->ready_lock, irqflags);
	if (end > k->ptimer.seen) {
		k->ptimer.pending += end - max(k->ptimer.seen, first_idx);
		k->ptimer.seen = end;
	}
	stop = kq_fire_locked(k, 0, 0, 0, &wake);
	spin_unlock_irqrestore(&q->ready_lock, irqflags);
	if (wake)
		kq_wake_poll(q);
	return stop;
}

/* ---- the table (ctl_mutex held) -------------------------------------- */

static struct list_head *kq_bucket(struct kevent_queue *q, const struct kevent_id *id)
{
	return &q->table[hash_32(id->raw[0], KEVENT_HASH_BITS)];
}

static void kq_free_kevent(struct kevent_queue *q, struct kevent *k)
{
	list_del(&k->hnode);
	q->kevent_num--;
	kmem_cache_free(kevent_cache, k);
	atomic_dec(&kevent_stats.kevents);
}

/* Free the ONESHOT kevents GET_EVENTS delivered. */
static void kq_reap(struct kevent_queue *q)
{
	struct kevent *k, *tmp;
	unsigned long irqflags;
	LIST_HEAD(dead);

	lockdep_assert_held(&q->ctl_mutex);
	spin_lock_irqsave(&q->ready_lock, irqflags);
	list_splice_init(&q->zombies, &dead);
	spin_unlock_irqrestore(&q->ready_lock, irqflags);
	list_for_each_entry_safe(k, tmp, &dead, rnode) {
		list_del_init(&k->rnode);
		k->origin->detach(k);
		kq_free_kevent(q, k);
	}
}

/* The LEVEL kevents kq_level_check() takes off the list per ready_lock hold. */
#define KQ_LEVEL_CHUNK 32

/*
 * D43, at the start of a dequeue on a revision-2 queue (ctl_mutex held):
 * every LEVEL kevent dequeued before is polled again and fires when its
 * condition still holds.  Those listed now are checked once each; one that
 * a parked waiter takes meanwhile is listed again behind them.  They leave
 * the list a chunk per ready_lock hold (taking the lock per kevent was
 * most of the check's cost) and are polled after it: only ctl_mutex
 * holders unlink entries or free kevents, so the last one stays listed
 * until reached and every one taken stays alive.
 */
static void kq_level_check(struct kevent_queue *q)
{
	struct kevent *chunk[KQ_LEVEL_CHUNK], *k, *last;
	unsigned long irqflags;
	unsigned int n, i;
	bool more;

	lockdep_assert_held(&q->ctl_mutex);
	/* Nothing listed (the common case): no lock (see kq_level_check_unlocked). */
	if (list_empty_careful(&q->level))
		return;
	spin_lock_irqsave(&q->ready_lock, irqflags);
	more = !list_empty(&q->level);
	last = more ? list_last_entry(&q->level, struct kevent, lnode) : NULL;
	spin_unlock_irqrestore(&q->ready_lock, irqflags);
	while (more) {
		spin_lock_irqsave(&q->ready_lock, irqflags);
		for (n = 0; more && n < KQ_LEVEL_CHUNK; n++) {
			k = list_first_entry(&q->level, struct kevent, lnode);
			more = k != last;
			kq_level_forget(k);
			chunk[n] = k;
		}
		spin_unlock_irqrestore(&q->ready_lock, irqflags);
		for (i = 0; i < n; i++) {
			k = chunk[i];
			if ((k->uk.req_flags & KEVENT_REQ_LEVEL) && k->origin->level)
				k->origin->level(k);
		}
	}
}

/* A dequeue without ctl_mutex: the check takes it only when needed. */
static void kq_level_check_unlocked(struct kevent_queue *q)
{
	if (!(READ_ONCE(q->rules) & KR_LEVEL) || list_empty_careful(&q->level))
		return;
	mutex_lock(&q->ctl_mutex);
	kq_level_check(q);
	mutex_unlock(&q->ctl_mutex);
}

/*
 * D6, D7: the oldest kevent with this id and cookie, not yet delivered;
 * on a revision-3 queue its type must match too (D63).
 */
static struct kevent *kq_find(struct kevent_queue *q, const struct ukevent *uk)
{
	bool typed = q->rules & KR_TYPE_KEY;
	struct kevent *k;

	list_for_each_entry(k, kq_bucket(q, &uk->id), hnode) {
		if ((!typed || k->uk.type == uk->type) &&
		    k->uk.id.raw[0] == uk->id.raw[0] &&
		    k->uk.id.raw[1] == uk->id.raw[1] &&
		    k->uk.user[0] == uk->user[0] &&
		    k->uk.user[1] == uk->user[1] &&
		    !(READ_ONCE(k->flags) & KEV_ZOMBIE))
			return k;
	}
	return NULL;
}

/* KEVENT_ABI_STRICT: req_flags bits the queue's rules do not know. */
static bool kq_req_refused(const struct kevent_queue *q, const struct ukevent *uk)
{
	u32 known = KEVENT_REQ_ONESHOT;

	if (q->rules & KR_ALWAYS_QUEUE)
		known |= KEVENT_REQ_ALWAYS_QUEUE;
	if (q->rules & KR_LEVEL)
		known |= KEVENT_REQ_LEVEL;
	if (q->rules & KR_DISPATCH)
		known |= KEVENT_REQ_DISPATCH;	/* D65 */
	return (q->abi_flags & KEVENT_ABI_STRICT) && (uk->req_flags & ~known);
}

/* D43: LEVEL, where it is a rule, needs a type that can re-check. */
static bool kq_level_refused(const struct kevent_queue *q,
			     const struct kevent_origin *origin,
			     const struct ukevent *uk)
{
	return (q->rules & KR_LEVEL) && (uk->req_flags & KEVENT_REQ_LEVEL) && !origin->level;
}

static void kq_fail(struct ukevent *uk, int err)
{
	uk->ret_flags = KEVENT_RET_BROKEN | KEVENT_RET_DONE;
	uk->ret_data[1] = (u32)err;
}

/* KEVENT_IOC_FAULT's ADD_ENOMEM: true once, on the armed occasion. */
static bool kq_fault_add_now(struct kevent_queue *q)
{
	return q->fault_add && --q->fault_add == 0;
}

/* D60: an EXT entry's ext is all zero unless its type has a setting. */
static bool kq_ext_dirty(const struct ukevent_ext *x)
{
	return x && memchr_inv(&x->ext, 0, sizeof(x->ext));
}

/*
 * D58-D60: what an entry's extension must be for this type: a type with
 * a setting needs one, in an EXT entry.  x is the whole entry of an EXT
 * call (x->ev is uk), NULL for a 40-byte one.
 */
static int kq_ext_check(const struct kevent_origin *origin, const struct ukevent_ext *x)
{
	if (origin->setting)
		return x ? origin->setting->check(x) : -EINVAL;
	return kq_ext_dirty(x) ? -EINVAL : 0;
}

/* ADD of one entry: 0 queued (nothing to write back), 1 write it back. */
static int kq_add_one(struct kevent_queue *q, struct ukevent *uk,
		      const struct ukevent_ext *x)
{
	const struct kevent_origin *origin;
	struct kevent *k;
	int ret;

	/*
	 * Only ret_flags is cleared: a failed entry keeps the caller's
	 * ret_data[0] (abi.md section 4, take13; the core does the same).
	 */
	uk->ret_flags = 0;
	origin = kevent_origin_get(uk->type, q->rules);
	if (!origin) {
		/* A3; D51: take26's -ENOSYS, per entry, before any flag check (core/queue.c) */
		kq_fail(uk, (q->rules & KR_ENOSYS) ? -ENOSYS : -EINVAL);
		return 1;
	}
	ret = kq_ext_check(origin, x);
	if (!ret && (kq_req_refused(q, uk) || kq_level_refused(q, origin, uk)))
		ret = -EINVAL;
	if (ret) {
		kq_fail(uk, ret);
		return 1;
	}
	k = kq_fault_add_now(q) ? NULL : kmem_cache_zalloc(kevent_cache, GFP_KERNEL);
	if (!k) {
		kq_fail(uk, -ENOMEM);	/* D19 */
		return 1;
	}
	atomic_inc(&kevent_stats.kevents);
	INIT_LIST_HEAD(&k->rnode);
	INIT_LIST_HEAD(&k->lnode);
	k->q = q;
	k->rules = q->rules;
	k->origin = origin;
	k->uk = *uk;
	k->uk.ret_data[0] = 0;	/* an origin's answer starts from {0, 0} */
	k->uk.ret_data[1] = 0;
	if (origin->setting)
		origin->setting->store(k, x);	/* checked; attach() arms it */

	ret = origin->attach(k);
	if (ret) {
		if (ret > 0) {
			/* Ready at ADD: answered, not kept (take13, D5). */
			uk->ret_flags = KEVENT_RET_DONE;
			uk->ret_data[0] = k->uk.ret_data[0];
			uk->ret_data[1] = k->uk.ret_data[1];
		} else {
			kq_fail(uk, ret);
		}
		kmem_cache_free(kevent_cache, k);
		atomic_dec(&kevent_stats.kevents);
		return 1;
	}
	list_add_tail(&k->hnode, kq_bucket(q, &uk->id));
	q->kevent_num++;
	return 0;
}

static void kq_remove_one(struct kevent_queue *q, struct ukevent *uk)
{
	unsigned long irqflags;
	struct kevent *k = kq_find(q, uk);
	bool inflight;

	uk->ret_flags = KEVENT_RET_DONE;
	if (!k) {
		uk->ret_flags |= KEVENT_RET_BROKEN;
		return;
	}
	spin_lock_irqsave(&q->ready_lock, irqflags);
	if (k->flags & KEV_ZOMBIE) {
		/* Delivered to a waiter meanwhile: it is gone for the caller. */
		spin_unlock_irqrestore(&q->ready_lock, irqflags);
		uk->ret_flags |= KEVENT_RET_BROKEN;
		return;
	}
	k->flags |= KEV_DEAD;
	kq_level_forget(k);
	if (k->flags & KEV_READY) {
		/* Its pending readiness is dropped; its ring slot stays (D4). */
		list_del_init(&k->rnode);
		q->ready_num--;
		k->flags &= ~KEV_READY;
	}
	inflight = k->flags & KEV_INFLIGHT;
	spin_unlock_irqrestore(&q->ready_lock, irqflags);
	k->origin->detach(k);
	if (inflight) {
		/* A WAIT holds it until its ring copy ends; that one frees it. */
		list_del(&k->hnode);
		q->kevent_num--;
		return;
	}
	kq_free_kevent(q, k);
}

/*
 * D61: a new setting replaces the old; whatever was pending is dropped
 * (the kevent leaves the ready list; a take13 ring slot stays, D4).
 */
static void kq_setting_rearm(struct kevent_queue *q, struct kevent *k,
			     const struct ukevent_ext *x)
{
	unsigned long irqflags;

	k->origin->detach(k);	/* the origin is idle after this */
	spin_lock_irqsave(&q->ready_lock, irqflags);
	if (k->flags & KEV_READY) {
		list_del_init(&k->rnode);
		q->ready_num--;
		k->flags &= ~KEV_READY;
	}
	k->origin->setting->reset(k);
	spin_unlock_irqrestore(&q->ready_lock, irqflags);
	k->origin->setting->arm(k, x);
}

/*
 * D65: MODIFY re-arms a disarmed kevent (ready_lock held); a result it held
 * becomes ready now, unless a new setting discards it (D61).  True when it
 * did: poll() must be woken.
 */
static bool kq_rearm(struct kevent_queue *q, struct kevent *k, bool discard)
{
	bool held = k->flags & KEV_HELD;

	if (!(k->flags & KEV_DISARMED))
		return false;
	k->flags &= ~(KEV_DISARMED | KEV_HELD);
	if (!held || discard || (k->flags & KEV_READY))
		return false;
	kq_enqueue(q, k);
	return true;
}

static void kq_modify_one(struct kevent_queue *q, struct ukevent *uk,
			  const struct ukevent_ext *x)
{
	unsigned long irqflags;
	struct kevent *k = kq_find(q, uk);
	bool wake, stale;
	int ret;

	if (!k) {
		uk->ret_flags = KEVENT_RET_BROKEN | KEVENT_RET_DONE;
		return;
	}
	ret = x ? kq_ext_check(k->origin, x) : 0;
	/* D58, D61: a type may check the new event before it is replaced. */
	if (!ret && k->origin->modify_check)
		ret = k->origin->modify_check(k, uk);
	if (kq_req_refused(q, uk) || kq_level_refused(q, k->origin, uk))
		ret = -EINVAL;
	if (ret) {
		kq_fail(uk, ret);
		return;
	}
	spin_lock_irqsave(&q->ready_lock, irqflags);
	if (k->flags & KEV_ZOMBIE) {
		/* Delivered to a waiter meanwhile: it is gone for the caller. */
		spin_unlock_irqrestore(&q->ready_lock, irqflags);
		uk->ret_flags = KEVENT_RET_BROKEN | KEVENT_RET_DONE;
		return;
	}
	/*
	 * The new mask and flags take effect even when the origin refuses
	 * them (a timer without FIRED then stops), as in core/queue.c.  A
	 * pending result keeps its ret_flags: the next fire rebuilds them.
	 */
	k->uk.event = uk->event;
	k->uk.req_flags = uk->req_flags;
	wake = kq_rearm(q, k, x && k->origin->setting);
	stale = k->flags & KEV_STALE;
	spin_unlock_irqrestore(&q->ready_lock, irqflags);
	if (wake)
		kq_wake_poll(q);
	/* D69: a stale kevent left its origin for good: no source to look at */
	if (stale) {
		uk->ret_flags = KEVENT_RET_DONE;
		return;
	}

	if (x && k->origin->setting) {
		kq_setting_rearm(q, k, x);
		uk->ret_flags = KEVENT_RET_DONE;
		return;
	}
	ret = k->origin->modify(k);
	if (ret)
		kq_fail(uk, ret);
	else
		uk->ret_flags = KEVENT_RET_DONE;
}

/*
 * D49: a matched kevent not on the ready list goes there with DONE and
 * ret_data {0, 0}; one already ready keeps its place and result.  1 when
 * matched.  A type that merges triggers (KEVENT_USER, D62) merges instead.
 */
static int kq_ready_one(struct kevent_queue *q, struct ukevent *uk)
{
	struct kevent *k = kq_find(q, uk);
	unsigned long irqflags;
	bool wake = false, user;

	uk->ret_flags = KEVENT_RET_DONE;
	if (!k) {
		uk->ret_flags |= KEVENT_RET_BROKEN;	/* D38: the rest as passed */
		return 0;
	}
	user = k->origin->ready_merges;
	spin_lock_irqsave(&q->ready_lock, irqflags);
	if (!(k->flags & (KEV_READY | KEV_HELD | KEV_ZOMBIE | KEV_DEAD))) {
		/* D62: a user event carries the trigger's value, one trigger. */
		k->uk.ret_flags = KEVENT_RET_DONE;
		k->uk.ret_data[0] = user ? uk->event : 0;
		k->uk.ret_data[1] = user ? 1 : 0;
		if (k->flags & KEV_DISARMED) {
			k->flags |= KEV_HELD;	/* D65: ready at the re-arm */
		} else {
			kq_enqueue(q, k);
			wake = true;
		}
	} else if (user && (k->flags & (KEV_READY | KEV_HELD))) {
		/* D62: merged into the pending result (OR, saturating count). */
		k->uk.ret_data[0] |= uk->event;
		if (k->uk.ret_data[1] != U32_MAX)
			k->uk.ret_data[1]++;
	}
	spin_unlock_irqrestore(&q->ready_lock, irqflags);
	if (wake)
		kq_wake_poll(q);
	return 1;
}

/*
 * D61: QUERY of one EXT entry.  A type with a setting (a POSIX timer)
 * reports it as it stands now in ext and ret_data[0]; nothing changes.
 * Another type: -EINVAL.  1 when matched.
 */
static int kq_query_one(struct kevent_queue *q, struct ukevent_ext *x)
{
	struct kevent *k = kq_find(q, &x->ev);
	unsigned long irqflags;
	u32 data0;

	x->ev.ret_flags = KEVENT_RET_DONE | KEVENT_RET_BROKEN;	/* D38 */
	if (!k)
		return 0;
	if (!k->origin->setting) {
		kq_fail(&x->ev, -EINVAL);
		return 1;
	}
	spin_lock_irqsave(&q->ready_lock, irqflags);
	if (k->flags & KEV_ZOMBIE) {
		spin_unlock_irqrestore(&q->ready_lock, irqflags);
		return 0;
	}
	data0 = k->origin->setting->query(k, x);
	spin_unlock_irqrestore(&q->ready_lock, irqflags);
	x->ev.ret_flags = KEVENT_RET_DONE;
	x->ev.ret_data[0] = data0;
	x->ev.ret_data[1] = 0;
	return 1;
}

/*
 * D25, D60: the whole-call checks on the header, before the array is
 * read.  KEVENT_CTL_EXT and QUERY need their rules (revision 3), QUERY
 * needs EXT entries.
 */
static int kq_ctl_header(const struct kevent_ctl_ext_arg *a, u32 rules)
{
	/* The rule a command needs: without it the command is unknown (D25). */
	static const u32 cmd_rule[] = {
		[KEVENT_CTL_ADD] = 0,
		[KEVENT_CTL_REMOVE] = 0,
		[KEVENT_CTL_MODIFY] = 0,
		[KEVENT_CTL_READY] = KR_READY,
		[KEVENT_CTL_QUERY] = KR_QUERY,
	};
	bool ext = a->ioc_flags & KEVENT_CTL_EXT;

	if ((a->ioc_flags & ~KEVENT_CTL_IOC_FLAGS) || a->__pad || (ext && !(rules & KR_EXT)))
		return -EINVAL;
	if (a->cmd >= ARRAY_SIZE(cmd_rule) || (cmd_rule[a->cmd] & ~rules) ||
	    a->num > KEVENT_MAX_EVENTS)
		return -EINVAL;
	if (a->cmd == KEVENT_CTL_QUERY && !ext)
		return -EINVAL;
	return 0;
}

/*
 * D60 for REMOVE and READY: they read no setting, and an entry of a type
 * without one must carry a zero ext (the entry's type: matched or not).
 */
static bool kq_ext_refused(const struct kevent_queue *q, const struct ukevent *uk,
			   const struct ukevent_ext *x)
{
	const struct kevent_origin *origin;

	if (!kq_ext_dirty(x))
		return false;
	origin = kevent_origin_get(uk->type, q->rules);
	return !origin || !origin->setting;
}

/*
 * The entries of one call, 40 or 80 bytes each (D60); returns what the
 * call returns and *n, how many entries to write back from the front.
 */
static long kq_ctl_entries(struct kevent_queue *q, u32 cmd, u32 num, void *buf,
			   size_t esz, unsigned int *n)
{
	struct ukevent_ext *x;
	struct ukevent *uk;
	unsigned int i;
	long ret = 0;

	*n = cmd == KEVENT_CTL_ADD ? 0 : num;
	for (i = 0; i < num; i++) {
		uk = buf + i * esz;
		x = esz == sizeof(*x) ? (struct ukevent_ext *)uk : NULL;
		switch (cmd) {
		case KEVENT_CTL_ADD:
			/* Answered entries move to the front, whole (D60). */
			if (kq_add_one(q, uk, x)) {
				if (*n != i)
					memcpy(buf + *n * esz, uk, esz);
				(*n)++;
			}
			ret = *n;
			break;
		case KEVENT_CTL_REMOVE:
			if (kq_ext_refused(q, uk, x))
				kq_fail(uk, -EINVAL);
			else
				kq_remove_one(q, uk);
			break;
		case KEVENT_CTL_MODIFY:
			kq_modify_one(q, uk, x);
			break;
		case KEVENT_CTL_READY:
			if (kq_ext_refused(q, uk, x))
				kq_fail(uk, -EINVAL);
			else
				ret += kq_ready_one(q, uk);
			break;
		case KEVENT_CTL_QUERY:
			ret += kq_query_one(q, x);
			break;
		}
	}
	return ret;
}

static long kq_ctl(struct kevent_queue *q, const struct kevent_ctl_ext_arg *a,
		   bool compat)
{
	size_t esz = (a->ioc_flags & KEVENT_CTL_EXT) ? sizeof(struct ukevent_ext) :
						       sizeof(struct ukevent);
	unsigned int n = 0;
	void __user *uarr;
	void *buf;
	long ret;
	int uerr;

	ret = kq_ctl_header(a, READ_ONCE(q->rules));
	if (ret)
		return ret;
	uerr = kevent_uaddr(a->events, compat, &uarr);
	mutex_lock(&q->ctl_mutex);
	kq_reap(q);
	if (a->num && a->cmd == KEVENT_CTL_ADD) {
		if (q->kevent_num + a->num >= KEVENT_MAX_EVENTS)
			ret = -EINVAL;
	} else if (a->num > q->kevent_num) {
		ret = -EINVAL;
	}
	if (ret)
		goto out_unlock;
	/* A CTL that passed the whole-call checks ends SET_ABI's window. */
	q->ctl_seen = true;
	if (!a->num) {
		/* D50: READY with num 0 wakes a waiter, the one exception to D25. */
		if (a->cmd == KEVENT_CTL_READY)
			ret = kq_wake_one(q);
		goto out_unlock;
	}
	ret = uerr;
	if (ret)
		goto out_unlock;

	buf = kevent_buf_alloc(a->num * (esz / sizeof(struct ukevent)));
	if (!buf) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	/* D9, D60: the whole array is read before any entry takes effect. */
	if (copy_from_user(buf, uarr, (size_t)a->num * esz)) {
		ret = -EFAULT;
		goto out_free;
	}
	ret = kq_ctl_entries(q, a->cmd, a->num, buf, esz, &n);
	/* D9: registrations stay even when the write-back faults. */
	if (n && copy_to_user(uarr, buf, (size_t)n * esz))
		ret = -EFAULT;
out_free:
	kevent_buf_free(buf);
out_unlock:
	mutex_unlock(&q->ctl_mutex);
	return ret;
}

/* ---- GET_EVENTS ------------------------------------------------------- */

/*
 * When a blocked call gives up: never, or at expires on clock (an absolute
 * hrtimer: a CLOCK_REALTIME deadline follows clock_settime, as take26's
 * hrtimer did).
 */
struct kq_deadline {
	bool forever;
	clockid_t clock;
	ktime_t expires;
};

/* D8: ~0 waits forever; so does anything beyond ktime's range. */
static void kq_deadline_ns(struct kq_deadline *dl, u64 timeout_ns, bool *now)
{
	*now = !timeout_ns;
	dl->forever = timeout_ns == KEVENT_TIMEOUT_INFINITE || timeout_ns >= KTIME_MAX;
	dl->clock = CLOCK_MONOTONIC;
	if (!dl->forever)
		dl->expires = ktime_add_safe(ktime_get(), ns_to_ktime(timeout_ns));
}

/*
 * Revision 2 timeouts (docs/abi.md D48): relative CLOCK_MONOTONIC, or an
 * absolute CLOCK_REALTIME (ABSTIME) or CLOCK_MONOTONIC (ABSTIME|MONOTONIC)
 * deadline, or none (NO_TIMEOUT, timespec 0).  *now: a relative 0, the
 * call does not block.
 */
static int kq_deadline_ts(struct kq_deadline *dl, const struct kevent_timespec *ts,
			  u32 flags, bool *now)
{
	ktime_t t;

	*now = false;
	if ((flags & ~KEVENT_FLAGS_ALL) || ts->__pad || ts->tv_sec < 0 ||
	    ts->tv_nsec >= NSEC_PER_SEC)
		return -EINVAL;
	if ((flags & KEVENT_FLAGS_MONOTONIC) && !(flags & KEVENT_FLAGS_ABSTIME))
		return -EINVAL;
	dl->forever = flags & KEVENT_FLAGS_NO_TIMEOUT;
	if (dl->forever) {
		if (ts->tv_sec || ts->tv_nsec || (flags & KEVENT_FLAGS_ABSTIME))
			return -EINVAL;
		return 0;
	}
	t = ktime_set(ts->tv_sec, ts->tv_nsec);	/* saturates at KTIME_MAX */
	if (flags & KEVENT_FLAGS_ABSTIME) {
		dl->clock = (flags & KEVENT_FLAGS_MONOTONIC) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
		dl->expires = t;
		return 0;
	}
	*now = !t;
	dl->clock = CLOCK_MONOTONIC;
	dl->expires = ktime_add_safe(ktime_get(), t);
	return 0;
}

/*
 * Sleeps until w is served, the deadline passes or a signal is pending.
 * Returns -EINTR for a signal, else 0.
 */
static int kq_wait(struct kevent_waiter *w, const struct kq_deadline *dl)
{
	ktime_t expires = dl->expires;
	bool expired = false;
	int ret = 0;

	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (smp_load_acquire(&w->done) || expired)
			break;
		if (signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		if (!schedule_hrtimeout_range_clock(dl->forever ? NULL : &expires, 0,
						    HRTIMER_MODE_ABS, dl->clock))
			expired = true;
	}
	__set_current_state(TASK_RUNNING);
	return ret;
}

/*
 * Parks w (ready_lock held, irqflags saved by the caller) and sleeps with
 * every lock dropped; returns with ready_lock held again and w off the
 * list.  Not served: -EINTR when a signal ended the wait on a queue that
 * asked for it (KEVENT_ABI_EINTR, D47; never -ERESTARTSYS: the call is not
 * restarted), else 0 and the caller takes what is ready (D22).
 */
static int kq_park(struct kevent_queue *q, struct kevent_waiter *w,
		   const struct kq_deadline *dl, unsigned long *irqflags,
		   bool ctl_held)
{
	int ret;

	list_add_tail(&w->node, &q->waiters);
	q->parked_num++;
	atomic_inc(&kevent_stats.waiters);
	spin_unlock_irqrestore(&q->ready_lock, *irqflags);
	if (ctl_held)
		mutex_unlock(&q->ctl_mutex);

	ret = kq_wait(w, dl);

	if (ctl_held)
		mutex_lock(&q->ctl_mutex);
	/* Always relock: a waker may still be using w (LOCKING). */
	spin_lock_irqsave(&q->ready_lock, *irqflags);
	atomic_dec(&kevent_stats.waiters);
	if (w->done)
		return 0;
	list_del(&w->node);
	q->parked_num--;
	if (ret && (READ_ONCE(q->abi_flags) & KEVENT_ABI_EINTR))
		return -EINTR;
	return 0;
}

static long kq_get_events(struct kevent_queue *q, struct file *file,
			  const struct kevent_get_events_arg *a, bool compat)
{
	struct kevent_waiter w = { .task = current };
	struct kq_deadline dl;
	unsigned long irqflags;
	void __user *ubuf;
	size_t len, left;
	bool now, data, stale;
	long ret;

	if (a->ioc_flags & ~KEVENT_GET_IOC_FLAGS)
		return -EINVAL;
	if (a->ioc_flags & KEVENT_GET_TIMESPEC) {
		/* D48 only; the ns field must then be 0. */
		if (!(READ_ONCE(q->rules) & KR_TIMESPEC) || a->timeout_ns)
			return -EINVAL;
		ret = kq_deadline_ts(&dl, &a->timeout_ts, a->flags, &now);
		if (ret)
			return ret;
	} else {
		/*
		 * The VER1 tail is read only with KEVENT_GET_TIMESPEC: without
		 * it a non-zero timeout_ts is a newer caller's request this call
		 * would not honour (2.3 rule 2, as the core answers).
		 */
		if (a->timeout_ts.tv_sec || a->timeout_ts.tv_nsec || a->timeout_ts.__pad)
			return -E2BIG;
		kq_deadline_ns(&dl, a->timeout_ns, &now);
	}
	if (a->min_nr > a->max_nr)
		return -EINVAL;		/* D12 */
	if (!a->max_nr)
		return 0;
	w.max_nr = min_t(u32, a->max_nr, KEVENT_QUEUE_MAX);
	w.min_nr = min_t(u32, a->min_nr, w.max_nr);
	ret = kevent_uaddr(a->events, compat, &ubuf);
	if (ret)
		return ret;
	len = (size_t)w.max_nr * sizeof(struct ukevent);
	/* D10: an unusable output range fails before anything is dequeued. */
	if (kevent_probe_writable(ubuf, len))
		return -EFAULT;
	/* D67, D69: with room for each record's source after the records */
	data = READ_ONCE(q->rules) & (KR_DATA | KR_FD_CHECK);
	w.buf = kevent_buf_alloc(w.max_nr + (data ? KQ_PTR_SLOTS(w.max_nr) : 0));
	if (!w.buf)
		return -ENOMEM;
	if (data)
		w.files = (struct file **)(w.buf + w.max_nr);

	now = now || !w.min_nr || (file->f_flags & O_NONBLOCK) ||
	      (a->ioc_flags & KEVENT_GET_NONBLOCK);
	kq_level_check_unlocked(q);
	ret = 0;
	spin_lock_irqsave(&q->ready_lock, irqflags);
	now |= kq_unlatch(q);
	if (!now && q->ready_num < w.min_nr)
		ret = kq_park(q, &w, &dl, &irqflags, false);
	if (!w.done && !ret)
		w.got = kq_take(q, &w);
	spin_unlock_irqrestore(&q->ready_lock, irqflags);
	stale = kq_data_count(q, &w);

	if (w.zombies || stale) {
		mutex_lock(&q->ctl_mutex);
		if (stale)
			kq_stale_stop(q, &w);
		if (w.zombies)
			kq_reap(q);
		mutex_unlock(&q->ctl_mutex);
	}
	if (ret)
		goto out;
	ret = w.got;
	if (w.got) {
		len = (size_t)w.got * sizeof(struct ukevent);
		left = copy_to_user(ubuf, w.buf, len);
		if (left) {
			/* D10: what was taken is lost; report what arrived. */
			ret = (len - left) / sizeof(struct ukevent);
			if (!ret)
				ret = -EFAULT;
		}
	}
out:
	kevent_buf_free(w.buf);
	return ret;
}

/* ---- the take26 ring: RING_INIT, WAIT, COMMIT (revision 2) -------- */

static long kq_ring_init(struct kevent_queue *q, const struct kevent_ring_init *a,
			 bool compat)
{
	void __user *uring = NULL;
	unsigned long irqflags;
	long ret;

	if (a->flags || !a->ring != !a->num || a->num == 1 ||
	    a->num > KEVENT_URING_MAX || (a->ring & 7))
		return -EINVAL;
	mutex_lock(&q->ctl_mutex);
	/* A second RING_INIT is -EBUSY whatever its ring, as in the core (D53). */
	ret = -EBUSY;
	if (q->ring_inited)
		goto out;
	if (a->num) {
		ret = kevent_uaddr(a->ring, compat, &uring);
		if (ret)
			goto out;
		/* The whole ring must be writable now (D41 handles later faults). */
		ret = -EFAULT;
		if (kevent_probe_writable(uring, KEVENT_URING_SIZE(a->num)))
			goto out;
	}
	ret = 0;
	q->ring_inited = true;
	q->ctl_seen = true;
	if (!a->num)
		goto out;
	/* Both words start at 0 in the caller's view too. */
	if (put_user(0, &((struct kevent_uring __user *)uring)->ring_over) ||
	    put_user(0, &((struct kevent_uring __user *)uring)->ring_kidx)) {
		q->ring_inited = false;
		ret = -EFAULT;
		goto out;
	}
	q->uring = uring;
	q->ring_num = a->num;
	q->ring_kidx = q->ring_uidx = q->ring_over = 0;
	q->ring_full = false;
	spin_lock_irqsave(&q->ready_lock, irqflags);
	q->ring_free = a->num;
	spin_unlock_irqrestore(&q->ready_lock, irqflags);
out:
	mutex_unlock(&q->ctl_mutex);
	return ret;
}

/* Published slots not yet committed (ctl_mutex). */
static u32 kq_ring_used(const struct kevent_queue *q)
{
	if (q->ring_full)
		return q->ring_num;
	return (q->ring_kidx + q->ring_num - q->ring_uidx) % q->ring_num;
}

/*
 * The WAIT's copy went through: ONESHOT kevents are freed now, a kevent
 * REMOVEd while in flight (KEV_DEAD) too; the rest stay registered.
 */
static void kq_inflight_done(struct kevent_queue *q, struct kevent_waiter *w)
{
	unsigned long irqflags;
	LIST_HEAD(dead);
	struct kevent *k, *tmp;
	bool zombies = false;
	unsigned int i;

	spin_lock_irqsave(&q->ready_lock, irqflags);
	for (i = 0; i < w->got; i++) {
		k = w->kevs[i];
		k->flags &= ~KEV_INFLIGHT;
		if (k->flags & KEV_DEAD) {
			list_add_tail(&k->rnode, &dead);
			continue;
		}
		if (!(w->buf[i].req_flags & KEVENT_REQ_ONESHOT))
			continue;
		if (k->flags & KEV_READY) {
			/* Marked ready again while in flight (CTL_READY): gone now. */
			list_del_init(&k->rnode);
			q->ready_num--;
			k->flags &= ~KEV_READY;
		}
		k->flags |= KEV_ZOMBIE;
		list_add_tail(&k->rnode, &q->zombies);
		zombies = true;
	}
	spin_unlock_irqrestore(&q->ready_lock, irqflags);
	list_for_each_entry_safe(k, tmp, &dead, rnode) {
		list_del_init(&k->rnode);
		kmem_cache_free(kevent_cache, k);
		atomic_dec(&kevent_stats.kevents);
	}
	if (zombies)
		kq_reap(q);
}

/*
 * D41: the ring write faulted.  Every kevent taken goes back to the head
 * of the ready list in its order (one that re-fired meanwhile is on the
 * list already, with its newer result, and keeps its place), its slots are
 * free again, nothing is lost.
 */
static void kq_inflight_requeue(struct kevent_queue *q, struct kevent_waiter *w)
{
	unsigned long irqflags;
	LIST_HEAD(dead);
	struct kevent *k, *tmp;
	unsigned int i;

	spin_lock_irqsave(&q->ready_lock, irqflags);
	for (i = w->got; i-- > 0;) {
		k = w->kevs[i];
		k->flags &= ~KEV_INFLIGHT;
		if (k->flags & KEV_DEAD) {
			list_add_tail(&k->rnode, &dead);
			continue;
		}
		/* Revision 3: counts and values taken go back to the kevent. */
		if (k->origin->undeliver)
			k->origin->undeliver(k, &w->buf[i]);
		/* D65: not delivered, so not disarmed; a result it held is newer. */
		k->flags &= ~(KEV_DISARMED | KEV_HELD);
		if (k->flags & KEV_READY)
			continue;
		list_add(&k->rnode, &q->ready);
		k->flags |= KEV_READY;
		q->ready_num++;
	}
	q->ring_free += w->got;
	kq_serve(q);
	spin_unlock_irqrestore(&q->ready_lock, irqflags);
	list_for_each_entry_safe(k, tmp, &dead, rnode) {
		list_del_init(&k->rnode);
		kmem_cache_free(kevent_cache, k);
		atomic_dec(&kevent_stats.kevents);
	}
	kq_wake_poll(q);
}

/*
 * Copy what w took into the caller's ring at kidx (ctl_mutex held, in the
 * caller's context): the slots first, then ring_kidx as one aligned 32-bit
 * store that publishes them.  Returns the count, or -EFAULT after D41's
 * requeue.
 */
static long kq_ring_copy(struct kevent_queue *q, struct kevent_waiter *w)
{
	struct kevent_uring __user *r = q->uring;
	u32 idx = q->ring_kidx, n = w->got, first = min(n, q->ring_num - idx);
	u32 next = (idx + n) % q->ring_num;

	lockdep_assert_held(&q->ctl_mutex);
	if (copy_to_user(&r->event[idx], w->buf, (size_t)first * sizeof(struct ukevent)) ||
	    copy_to_user(&r->event[0], w->buf + first,
			 (size_t)(n - first) * sizeof(struct ukevent)))
		goto fault;
	smp_wmb();	/* slots before the index that publishes them */
	if (put_user(next, &r->ring_kidx))
		goto fault;
	q->ring_kidx = next;
	if (next == q->ring_uidx)
		q->ring_full = true;
	kq_inflight_done(q, w);
	return n;
fault:
	q->ring_faults++;
	kq_inflight_requeue(q, w);
	return -EFAULT;
}

static long kq_wait_ring(struct kevent_queue *q, struct file *file,
			 const struct kevent_wait_arg *a)
{
	struct kevent_waiter w = { .task = current, .min_nr = 1 };
	struct kq_deadline dl;
	unsigned long irqflags;
	bool now, data;
	long ret;

	if (a->ioc_flags & ~KEVENT_GET_NONBLOCK)
		return -EINVAL;
	ret = kq_deadline_ts(&dl, &a->timeout, a->flags, &now);
	if (ret)
		return ret;
	now = now || (file->f_flags & O_NONBLOCK) || (a->ioc_flags & KEVENT_GET_NONBLOCK);

	mutex_lock(&q->ctl_mutex);
	/*
	 * Zombies come from GET_EVENTS on this queue (which reaps its own) or
	 * a ring copy (reaped at its end): an unlocked look skips the lock
	 * when there are none; one added just after waits for the next reap,
	 * as it would had it come a moment later.
	 */
	if (!list_empty_careful(&q->zombies))
		kq_reap(q);
	ret = -EINVAL;
	if (!q->uring || a->old_uidx >= q->ring_num)
		goto out_unlock;
	ret = 0;
	if (!a->num || a->old_uidx != q->ring_uidx)
		goto out_unlock;
	w.max_nr = min(a->num, q->ring_num);
	/* One allocation per WAIT: the records, the kevents taken, their sources (D67, D69). */
	data = q->rules & (KR_DATA | KR_FD_CHECK);
	ret = -ENOMEM;
	w.buf = kevent_buf_alloc(w.max_nr + KQ_PTR_SLOTS(w.max_nr) * (data ? 2 : 1));
	if (!w.buf)
		goto out_unlock;
	w.kevs = (struct kevent **)(w.buf + w.max_nr);
	if (data)
		w.files = (struct file **)(w.buf + w.max_nr + KQ_PTR_SLOTS(w.max_nr));
	kq_level_check(q);
	ret = 0;
	spin_lock_irqsave(&q->ready_lock, irqflags);
	now |= kq_unlatch(q);
	if (!now && !(q->ready_num && q->ring_free))
		ret = kq_park(q, &w, &dl, &irqflags, true);
	if (!w.done && !ret)
		w.got = kq_take(q, &w);
	spin_unlock_irqrestore(&q->ready_lock, irqflags);
	if (kq_data_count(q, &w))
		kq_stale_stop(q, &w);	/* ctl_mutex held, the kevents in flight */
	if (w.got)
		ret = kq_ring_copy(q, &w);
	kevent_buf_free(w.buf);
out_unlock:
	mutex_unlock(&q->ctl_mutex);
	return ret;
}

/*
 * D54, take26's commit with the backend's uidx U, lap count K and used
 * count u: with over == K it frees up to new_uidx (a move to or behind U
 * wraps, and only a full ring can be freed whole by new_uidx == U); over
 * == K - 1 behind U is a commit another thread already made (0).  A wrap
 * stores K + 1 in the ring before anything changes here.
 */
static long kq_commit(struct kevent_queue *q, const struct kevent_commit_arg *a)
{
	u32 nu = a->new_uidx, u, f;
	unsigned long irqflags;
	bool wrap;
	long ret;

	mutex_lock(&q->ctl_mutex);
	ret = 0;
	if (!q->uring)
		goto out;
	ret = -EINVAL;
	if (nu >= q->ring_num)
		goto out;
	if (a->over != q->ring_over) {
		ret = a->over == q->ring_over - 1 && nu < q->ring_uidx ? 0 : -EOVERFLOW;
		goto out;
	}
	u = kq_ring_used(q);
	if (nu == q->ring_uidx)
		f = q->ring_full ? q->ring_num : 0;
	else
		f = (nu + q->ring_num - q->ring_uidx) % q->ring_num;
	wrap = f && nu <= q->ring_uidx;
	ret = -EINVAL;
	if (f > u)
		goto out;	/* passes the kernel index */
	ret = 0;
	if (!f)
		goto out;
	if (wrap) {
		ret = -EFAULT;
		if (put_user(q->ring_over + 1, &q->uring->ring_over))
			goto out;
		q->ring_over++;
	}
	q->ring_uidx = nu;
	q->ring_full = false;
	/* Freed slots may let a WAIT parked on a full ring go on. */
	spin_lock_irqsave(&q->ready_lock, irqflags);
	q->ring_free += f;
	kq_serve(q);
	spin_unlock_irqrestore(&q->ready_lock, irqflags);
	ret = f;
out:
	mutex_unlock(&q->ctl_mutex);
	return ret;
}

/* ---- INFO, SET_ABI ------------------------------------------------- */

static void kq_info(struct kevent_queue *q, struct kevent_info *info, size_t usize)
{
	u32 rules;

	memset(info, 0, sizeof(*info));
	info->size = min(usize, sizeof(*info));
	info->abi_revision = KQ_REV_HIGHEST;
	info->backend = KEVENT_BACKEND_MODULE;
	/* copy_to_user reaches every caller's memory: a ring always works. */
	info->features = KEVENT_FEAT_RING_MMAP | KEVENT_FEAT_FD_ORIGINS |
			 KEVENT_FEAT_STRICT | KEVENT_FEAT_URING |
			 (fault_inject ? KEVENT_FEAT_FAULT_INJECT : 0);
	info->ukevent_size = sizeof(struct ukevent);
	info->mukevent_size = sizeof(struct mukevent);
	info->ring_page_size = KEVENT_RING_PAGE_SIZE;
	info->ring_slots_per_page = KEVENTS_ON_PAGE;
	info->ring_pages = KEVENT_RING_PAGES;
	info->ring_slots = KEVENT_MAX_EVENTS;
	info->max_kevents = KEVENT_QUEUE_MAX;
	info->max_ctl_num = KEVENT_QUEUE_MAX;
	info->max_get_nr = KEVENT_QUEUE_MAX;
	info->queue_kevents = READ_ONCE(q->kevent_num);
	info->queue_ready = READ_ONCE(q->ready_num);
	/* The module has no per-uid caps (B7 is about the shared daemon). */
	info->live_queues = atomic_read(&kevent_stats.queues);
	info->live_kevents = atomic_read(&kevent_stats.kevents);
	info->live_waiters = atomic_read(&kevent_stats.waiters);
	/* Counted under ready_lock with the waiter on the list: parked. */
	info->queue_parked = READ_ONCE(q->parked_num);
	info->abi_lowest = KEVENT_ABI_REVISION_LOWEST;
	/* The ring words under ctl_mutex: one consistent view. */
	mutex_lock(&q->ctl_mutex);
	info->queue_revision = q->revision;
	rules = q->rules;
	info->queue_abi_flags = q->abi_flags;
	info->ring_num = q->ring_num;
	info->ring_kidx = q->ring_kidx;
	info->ring_uidx = q->ring_uidx;
	info->ring_over = q->ring_over;
	info->ring_faults = q->ring_faults;
	mutex_unlock(&q->ctl_mutex);
	/* D64: a type of a later revision, and its feature, where its rule is. */
	info->supported_types = kevent_origin_types(rules, &info->features);
}

static long kq_set_abi(struct kevent_queue *q, const struct kevent_set_abi *a)
{
	long ret = 0;
	u32 rules;

	/* A12: every revision served, abi_lowest .. INFO's abi_revision. */
	if (kevent_rules_of(a->revision, &rules) ||
	    (a->flags & ~KEVENT_ABI_FLAGS) || a->__reserved)
		return -EINVAL;
	/* D47: the EINTR opt-in is a revision-2 rule. */
	if ((a->flags & KEVENT_ABI_EINTR) && !(rules & KR_EINTR))
		return -EINVAL;
	mutex_lock(&q->ctl_mutex);
	if (q->ctl_seen) {
		ret = -EBUSY;
	} else {
		WRITE_ONCE(q->revision, a->revision);
		WRITE_ONCE(q->rules, rules);
		WRITE_ONCE(q->abi_flags, a->flags);
	}
	mutex_unlock(&q->ctl_mutex);
	return ret;
}

static long kq_fault(struct kevent_queue *q, const struct kevent_fault *a)
{
	if (a->__reserved || a->kind > KEVENT_FAULT_ADD_ENOMEM)
		return -EINVAL;
	mutex_lock(&q->ctl_mutex);
	q->fault_add = a->kind == KEVENT_FAULT_ADD_ENOMEM ? (u64)a->skip + 1 : 0;
	mutex_unlock(&q->ctl_mutex);
	return 0;
}

/* ---- ioctl dispatch (D24) ---------------------------------------------- */

/* Every argument struct the table copies in, and INFO's output. */
union kevent_ioc_arg {
	struct kevent_info info;
	struct kevent_ctl_ext_arg ctl;	/* VER0 fields + D60's tail */
	struct kevent_get_events_arg get;
	struct kevent_set_abi set_abi;
	struct kevent_fault fault;
	struct kevent_ring_init ring_init;
	struct kevent_wait_arg wait;
	struct kevent_commit_arg commit;
	struct kevent_drain drain;	/* KEVENT_IOC_DRAIN */
};

/* One ioctl call, as its handler sees it: the argument is copied in. */
struct kevent_ioc_call {
	struct file *file;
	struct kevent_queue *q;
	void __user *uarg;
	size_t usize;			/* _IOC_SIZE: the caller's struct size */
	bool compat;
	union kevent_ioc_arg *a;
};

/*
 * A row per ioctl number.  The dispatcher applies the row in the order the
 * ABI fixes (D24, D40): an unknown number, a test-only one without
 * fault_inject or one whose rule the queue lacks is -ENOTTY before any
 * check of the size; then the direction, VER0 and KEVENT_IOC_ARG_MAX; then
 * a _IOC_WRITE argument is copied in (copy_struct_from_user: a larger
 * caller's tail must be zero).
 */
struct kevent_ioc {
	unsigned int dir;		/* _IOC_READ or _IOC_WRITE */
	size_t ver0;			/* the smallest size accepted */
	size_t ksize;			/* what this module knows (copied in) */
	u32 rule;			/* KR_*: unknown without it (D40); 0 any */
	bool test_only;			/* answered with fault_inject only */
	long (*handler)(const struct kevent_ioc_call *c);
};

static int kevent_arg_size(unsigned int cmd, unsigned int dir, size_t ver0)
{
	size_t usize = _IOC_SIZE(cmd);

	if (_IOC_DIR(cmd) != dir)
		return -ENOTTY;
	if (usize < ver0)
		return -EINVAL;
	if (usize > KEVENT_IOC_ARG_MAX)
		return -E2BIG;
	return 0;
}

static long kevent_ioc_info(const struct kevent_ioc_call *c)
{
	struct kevent_info *info = &c->a->info;

	/* copy_struct_to_user: an older caller gets its own size. */
	kq_info(c->q, info, c->usize);
	if (copy_to_user(c->uarg, info, info->size))
		return -EFAULT;
	/* A newer caller's fields beyond ours read as zero. */
	if (c->usize > sizeof(*info) &&
	    clear_user(c->uarg + sizeof(*info), c->usize - sizeof(*info)))
		return -EFAULT;
	return 0;
}

static long kevent_ioc_ctl(const struct kevent_ioc_call *c)
{
	return kq_ctl(c->q, &c->a->ctl, c->compat);
}

static long kevent_ioc_get_events(const struct kevent_ioc_call *c)
{
	/* 2.3 rule 6, D48: the timespec needs the VER1 field. */
	if ((c->a->get.ioc_flags & KEVENT_GET_TIMESPEC) &&
	    c->usize < KEVENT_GET_EVENTS_ARG_SIZE_VER1)
		return -EINVAL;
	return kq_get_events(c->q, c->file, &c->a->get, c->compat);
}

static long kevent_ioc_set_abi(const struct kevent_ioc_call *c)
{
	return kq_set_abi(c->q, &c->a->set_abi);
}

static long kevent_ioc_fault(const struct kevent_ioc_call *c)
{
	return kq_fault(c->q, &c->a->fault);
}

static long kevent_ioc_ring_init(const struct kevent_ioc_call *c)
{
	return kq_ring_init(c->q, &c->a->ring_init, c->compat);
}

static long kevent_ioc_wait(const struct kevent_ioc_call *c)
{
	return kq_wait_ring(c->q, c->file, &c->a->wait);
}

static long kevent_ioc_commit(const struct kevent_ioc_call *c)
{
	return kq_commit(c->q, &c->a->commit);
}

/* ---- begin KEVENT_IOC_DRAIN (tests only) ---- */
static long kevent_ioc_drain(const struct kevent_ioc_call *c)
{
	if (c->a->drain.__reserved)
		return -EINVAL;
	/* A wake-up queues the poll re-check on kevent_wq: run what is queued. */
	flush_workqueue(kevent_wq);
	return 0;
}
/* ---- end KEVENT_IOC_DRAIN ---- */

#define KEVENT_IOC(d, name, type, r, t, fn) {				\
	.dir = (d), .ver0 = KEVENT_##name##_SIZE_VER0,			\
	.ksize = sizeof(type), .rule = (r), .test_only = (t),		\
	.handler = (fn) }

/*
 * KEVENT_IOC_RING_SHM has no row: it is CUSE's (the module maps for
 * real), so here it is unknown like any number without one.
 */
static const struct kevent_ioc kevent_iocs[] = {
	[KEVENT_IOC_NR_INFO] = KEVENT_IOC(_IOC_READ, INFO, struct kevent_info,
					  0, false, kevent_ioc_info),
	/* D60: KEVENT_IOC_CTL_EXT is the VER1 size of the same number. */
	[KEVENT_IOC_NR_CTL] = KEVENT_IOC(_IOC_WRITE, CTL_ARG, struct kevent_ctl_ext_arg,
					 0, false, kevent_ioc_ctl),
	[KEVENT_IOC_NR_GET_EVENTS] = KEVENT_IOC(_IOC_WRITE, GET_EVENTS_ARG,
						struct kevent_get_events_arg,
						0, false, kevent_ioc_get_events),
	[KEVENT_IOC_NR_SET_ABI] = KEVENT_IOC(_IOC_WRITE, SET_ABI, struct kevent_set_abi,
					     0, false, kevent_ioc_set_abi),
	[KEVENT_IOC_NR_FAULT] = KEVENT_IOC(_IOC_WRITE, FAULT, struct kevent_fault,
					   0, true, kevent_ioc_fault),
	[KEVENT_IOC_NR_RING_INIT] = KEVENT_IOC(_IOC_WRITE, RING_INIT, struct kevent_ring_init,
					       KR_RING, false, kevent_ioc_ring_init),
	[KEVENT_IOC_NR_WAIT] = KEVENT_IOC(_IOC_WRITE, WAIT_ARG, struct kevent_wait_arg,
					  KR_RING, false, kevent_ioc_wait),
	[KEVENT_IOC_NR_COMMIT] = KEVENT_IOC(_IOC_WRITE, COMMIT_ARG, struct kevent_commit_arg,
					    KR_RING, false, kevent_ioc_commit),
	/* ---- begin KEVENT_IOC_DRAIN (tests only) ---- */
	[KEVENT_IOC_NR_DRAIN] = KEVENT_IOC(_IOC_WRITE, DRAIN, struct kevent_drain,
					   0, true, kevent_ioc_drain),
	/* ---- end KEVENT_IOC_DRAIN ---- */
};

static long kevent_do_ioctl(struct file *file, unsigned int cmd,
			    void __user *uarg, bool compat)
{
	struct kevent_queue *q = file->private_data;
	const struct kevent_ioc *ioc;
	union kevent_ioc_arg a;
	struct kevent_ioc_call c = {
		.file = file, .q = q, .uarg = uarg, .usize = _IOC_SIZE(cmd),
		.compat = compat, .a = &a,
	};
	unsigned int nr = _IOC_NR(cmd);
	int ret;

	if (_IOC_TYPE(cmd) != KEVENT_IOC_MAGIC || nr >= ARRAY_SIZE(kevent_iocs))
		return -ENOTTY;
	/* The caller picks the row, and the row a function pointer. */
	ioc = &kevent_iocs[array_index_nospec(nr, ARRAY_SIZE(kevent_iocs))];
	if (!ioc->handler || (ioc->test_only && !fault_inject))
		return -ENOTTY;
	/* D40: a number whose rule the queue lacks is unknown there. */
	if (ioc->rule && !(READ_ONCE(q->rules) & ioc->rule))
		return -ENOTTY;
	ret = kevent_arg_size(cmd, ioc->dir, ioc->ver0);
	if (ret)
		return ret;
	if (ioc->dir == _IOC_WRITE) {
		ret = copy_struct_from_user(&a, ioc->ksize, uarg, c.usize);
		if (ret)
			return ret;
	}
	return ioc->handler(&c);
}

static long kevent_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	return kevent_do_ioctl(file, cmd, (void __user *)arg, false);
}

#ifdef CONFIG_COMPAT
/* The wrapper structs have one layout for -m32 and -m64 (tests/abi/). */
static long kevent_compat_ioctl(struct file *file, unsigned int cmd,
				unsigned long arg)
{
	return kevent_do_ioctl(file, cmd, compat_ptr(arg), true);
}
#endif

/* ---- file operations ------------------------------------------------- */

static __poll_t kevent_poll(struct file *file, poll_table *pt)
{
	struct kevent_queue *q = file->private_data;

	poll_wait(file, &q->poll_wq, pt);
	/* Our wait-queue entry before the load: pairs with kq_wake_poll(). */
	smp_mb();
	/* D50: a latched READY wake reads as readable too (take26). */
	return READ_ONCE(q->ready_num) || READ_ONCE(q->wake_latched) ?
	       EPOLLIN | EPOLLRDNORM : 0;
}

/* D23 after the kernel's own EACCES: private, writable, offset, length. */
static int kevent_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct kevent_queue *q = file->private_data;
	unsigned long len = vma->vm_end - vma->vm_start;
	unsigned long i;
	int ret;

	/*
	 * VM_MAYSHARE, not VM_SHARED: the kernel drops VM_SHARED from a
	 * MAP_SHARED mapping of an O_RDONLY file (it can never be written).
	 */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	if (vma->vm_pgoff)
		return -EINVAL;
	if (len > KEVENT_RING_SIZE)
		return -EINVAL;
	/* No mprotect(PROT_WRITE) later, no mremap growth past the ring. */
	vma->vm_flags &= ~VM_MAYWRITE;
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	for (i = 0; i < len >> PAGE_SHIFT; i++) {
		ret = vm_insert_page(vma, vma->vm_start + (i << PAGE_SHIFT),
				     q->pages[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static void kevent_queue_free(struct kevent_queue *q)
{
	int i;

	for (i = 0; i < KEVENT_RING_PAGES; i++) {
		if (q->pages[i]) {
			__free_page(q->pages[i]);
			atomic_dec(&kevent_stats.pages);
		}
	}
	kmem_cache_free(kevent_queue_cache, q);
	atomic_dec(&kevent_stats.queues);
}

static int kevent_open(struct inode *inode, struct file *file)
{
	struct kevent_queue *q;
	int i;

	q = kmem_cache_zalloc(kevent_queue_cache, GFP_KERNEL);
	if (!q)
		return -ENOMEM;
	atomic_inc(&kevent_stats.queues);
	mutex_init(&q->ctl_mutex);
	spin_lock_init(&q->ready_lock);
	for (i = 0; i < ARRAY_SIZE(q->table); i++)
		INIT_LIST_HEAD(&q->table[i]);
	INIT_LIST_HEAD(&q->ready);
	INIT_LIST_HEAD(&q->zombies);
	INIT_LIST_HEAD(&q->level);
	INIT_LIST_HEAD(&q->waiters);
	q->revision = 1;	/* until SET_ABI: every 2006 program */
	q->rules = 0;		/* revision 1's row (kevent_rules.c) */
	init_waitqueue_head(&q->poll_wq);
	/* A10: every ring page exists from open (order-0, not slab). */
	for (i = 0; i < KEVENT_RING_PAGES; i++) {
		q->pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!q->pages[i]) {
			kevent_queue_free(q);
			return -ENOMEM;
		}
		atomic_inc(&kevent_stats.pages);
	}
	file->private_data = q;
	pr_debug("queue %p opened by pid %d\n", q, task_tgid_nr(current));
	return 0;
}

static int kevent_release(struct inode *inode, struct file *file)
{
	struct kevent_queue *q = file->private_data;
	unsigned long irqflags;
	struct kevent *k, *tmp;
	int i;

	/* No ioctl runs: the file's last reference is gone (D17). */
	mutex_lock(&q->ctl_mutex);
	for (i = 0; i < ARRAY_SIZE(q->table); i++) {
		list_for_each_entry_safe(k, tmp, &q->table[i], hnode) {
			spin_lock_irqsave(&q->ready_lock, irqflags);
			if (k->flags & (KEV_READY | KEV_ZOMBIE))
				list_del_init(&k->rnode);
			kq_level_forget(k);
			k->flags |= KEV_DEAD;
			spin_unlock_irqrestore(&q->ready_lock, irqflags);
			k->origin->detach(k);
			kq_free_kevent(q, k);
		}
	}
	WARN_ON(q->kevent_num || !list_empty(&q->waiters));
	mutex_unlock(&q->ctl_mutex);
	pr_debug("queue %p released\n", q);
	kevent_queue_free(q);
	return 0;
}

/* No .read/.write: the VFS answers -EINVAL, as in 2006 (D15). */
const struct file_operations kevent_fops = {
	.owner		= THIS_MODULE,
	.open		= kevent_open,
	.release	= kevent_release,
	.unlocked_ioctl	= kevent_ioctl,
#ifdef CONFIG_COMPAT
	.compat_ioctl	= kevent_compat_ioctl,
#endif
	.poll		= kevent_poll,
	.mmap		= kevent_mmap,
	.llseek		= noop_llseek,
};

static struct miscdevice kevent_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "kevent",
	.fops	= &kevent_fops,
	.mode	= 0666,
};

/* ---- module --------------------------------------------------------- */

static void kevent_debugfs_init(void)
{
	kevent_debugfs = debugfs_create_dir("kevent", NULL);
	debugfs_create_atomic_t("queues", 0444, kevent_debugfs, &kevent_stats.queues);
	debugfs_create_atomic_t("kevents", 0444, kevent_debugfs, &kevent_stats.kevents);
	debugfs_create_atomic_t("pwqs", 0444, kevent_debugfs, &kevent_stats.pwqs);
	debugfs_create_atomic_t("pages", 0444, kevent_debugfs, &kevent_stats.pages);
	debugfs_create_atomic_t("buffers", 0444, kevent_debugfs, &kevent_stats.buffers);
	debugfs_create_atomic_t("waiters", 0444, kevent_debugfs, &kevent_stats.waiters);
	debugfs_create_atomic_t("imarks", 0444, kevent_debugfs, &kevent_stats.imarks);
}

static int __init kevent_init(void)
{
	int ret = -ENOMEM;

	kevent_cache = kmem_cache_create("kevent", sizeof(struct kevent), 0,
					 SLAB_HWCACHE_ALIGN, NULL);
	kevent_queue_cache = kmem_cache_create("kevent_queue",
					       sizeof(struct kevent_queue), 0,
					       SLAB_HWCACHE_ALIGN, NULL);
	kevent_wq = alloc_workqueue("kevent", 0, 0);
	if (!kevent_cache || !kevent_queue_cache || !kevent_wq)
		goto out;
	ret = kevent_origins_init();
	if (ret)
		goto out;
	ret = misc_register(&kevent_misc);
	if (ret) {
		kevent_origins_exit();
		goto out;
	}
	kevent_debugfs_init();
	pr_info("/dev/kevent registered (minor %d), ABI revision %d\n",
		kevent_misc.minor, KQ_REV_HIGHEST);
	return 0;
out:
	if (kevent_wq)
		destroy_workqueue(kevent_wq);
	kmem_cache_destroy(kevent_queue_cache);
	kmem_cache_destroy(kevent_cache);
	return ret;
}

static void __exit kevent_exit(void)
{
	misc_deregister(&kevent_misc);
	debugfs_remove_recursive(kevent_debugfs);
	destroy_workqueue(kevent_wq);
	kevent_origins_exit();
	/* With slub_debug, a leftover object is reported here (C6). */
	kmem_cache_destroy(kevent_queue_cache);
	kmem_cache_destroy(kevent_cache);
}

module_init(kevent_init);
module_exit(kevent_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kevent (take13, Aug 23 2006) queue as /dev/kevent");
