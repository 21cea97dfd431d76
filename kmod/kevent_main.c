// SPDX-License-Identifier: GPL-2.0
/*
 * kevent.ko: the Aug 23 2006 (take13) kevent queue as a misc device,
 * /dev/kevent, with the ioctl transport of include/uapi/linux/kevent.h and
 * the semantics of docs/abi.md (D1-D25).  One open = one queue.
 *
 * LOCKING
 *  - queue->ctl_mutex serialises everything that changes the table of
 *    registered kevents: CTL, SET_ABI, the reaping of delivered ONESHOT
 *    kevents and release.  Origin attach/modify/detach run under it and may
 *    sleep; nothing a client controls is waited on (design.md B3).
 *  - queue->ready_lock (a spinlock, always irqsave: the hrtimer origin fires
 *    in hard-irq context) covers the ready list, ready_num, the zombie list,
 *    every kevent's flags and ret_* fields, the ring index and the list of
 *    parked waiters.  A fire hands events to the oldest satisfiable waiter
 *    under it (D16), so a waiter always takes the lock once after waking
 *    before it may return: that keeps its stack frame and task alive while
 *    the waker still touches them.
 *  - Order: ctl_mutex -> ready_lock -> (poll_wq lock, task pi lock).
 *    Origins call kevent_fire() holding at most their own spinlock (the
 *    inode mark's lock) and never a lock of the queue: poll re-checks run
 *    in a kworker, hrtimers in hard irq, fsnotify in the caller of the
 *    filesystem operation.  See kevent_origins.c and kevent_inode.c.
 *  - A delivered ONESHOT kevent becomes a zombie (off every list but the
 *    table, invisible to MODIFY/REMOVE) until someone holding ctl_mutex
 *    reaps it: the fire path that hands it to a waiter may run in irq.
 *  - No user memory is touched under either lock: arrays are copied into
 *    kernel buffers first (D9, D10).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/compat.h>
#include <linux/sched/signal.h>
#include <linux/debugfs.h>
#include <linux/pagemap.h>
#include <linux/hrtimer.h>

#include "kevent_priv.h"

#define KEVENT_QUEUE_MAX	(KEVENT_MAX_EVENTS - 1)	/* A4 */

struct kevent_queue {
	struct mutex ctl_mutex;
	unsigned int kevent_num;	/* registered, incl. zombies; ctl_mutex */
	bool ctl_seen;			/* a CTL ran: SET_ABI is -EBUSY (A12) */
	bool strict;			/* KEVENT_ABI_STRICT */
	/* KEVENT_IOC_FAULT: the ADD allocation that fails, counted from 1; 0 none */
	u64 fault_add;			/* ctl_mutex */
	struct list_head table[1 << KEVENT_HASH_BITS];

	spinlock_t ready_lock;
	struct list_head ready;		/* FIFO of KEV_READY kevents */
	unsigned int ready_num;
	struct list_head zombies;	/* delivered ONESHOT, to be freed */
	struct list_head waiters;	/* parked GET_EVENTS, arrival order */
	unsigned int parked_num;	/* on waiters (INFO queue_parked); ready_lock */
	unsigned int ring_index;	/* ours; never read back from the page */
	struct page *pages[KEVENT_RING_PAGES];

	wait_queue_head_t poll_wq;	/* poll() on the kevent fd */
};

struct kevent_waiter {
	struct list_head node;		/* queue->waiters */
	struct task_struct *task;
	unsigned int min_nr, max_nr;
	struct ukevent *buf;
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
static_assert(sizeof(struct kevent_info) == KEVENT_INFO_SIZE_VER1);
static_assert(sizeof(struct kevent_ctl_arg) == KEVENT_CTL_ARG_SIZE_VER0);
static_assert(sizeof(struct kevent_get_events_arg) == KEVENT_GET_EVENTS_ARG_SIZE_VER0);
static_assert(sizeof(struct kevent_set_abi) == KEVENT_SET_ABI_SIZE_VER0);
static_assert(sizeof(struct kevent_fault) == KEVENT_FAULT_SIZE_VER0);

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

/* Take up to max ready kevents, FIFO, into buf; returns how many. */
static unsigned int kq_take(struct kevent_queue *q, struct ukevent *buf,
			    unsigned int max, bool *zombies)
{
	unsigned int n = 0;
	struct kevent *k;

	lockdep_assert_held(&q->ready_lock);
	while (n < max && !list_empty(&q->ready)) {
		k = list_first_entry(&q->ready, struct kevent, rnode);
		list_del_init(&k->rnode);
		q->ready_num--;
		k->flags &= ~KEV_READY;
		buf[n++] = k->uk;
		if (k->uk.req_flags & KEVENT_REQ_ONESHOT) {
			/* take13 frees it once read; the CTL lock does that. */
			k->flags |= KEV_ZOMBIE;
			list_add_tail(&k->rnode, &q->zombies);
			*zombies = true;
		}
	}
	return n;
}

/* D16: the oldest waiter whose min_nr is met takes up to its max_nr. */
static void kq_serve(struct kevent_queue *q)
{
	struct kevent_waiter *w, *tmp;
	struct task_struct *task;

	list_for_each_entry_safe(w, tmp, &q->waiters, node) {
		if (!q->ready_num)
			break;
		if (q->ready_num < w->min_nr)
			continue;
		w->got = kq_take(q, w->buf, w->max_nr, &w->zombies);
		list_del_init(&w->node);
		q->parked_num--;
		task = w->task;
		smp_store_release(&w->done, true);
		wake_up_process(task);
	}
}

bool kevent_fire(struct kevent *k, u32 ret_flags, u32 data0, u32 data1)
{
	struct kevent_queue *q = k->q;
	unsigned long irqflags;
	bool stop, wake = false;

	spin_lock_irqsave(&q->ready_lock, irqflags);
	if (k->flags & (KEV_DEAD | KEV_ZOMBIE)) {
		spin_unlock_irqrestore(&q->ready_lock, irqflags);
		return true;
	}
	/* D21: rebuilt on every fire; a merge keeps the latest (A9). */
	k->uk.ret_flags = KEVENT_RET_DONE | ret_flags;
	k->uk.ret_data[0] = data0;
	k->uk.ret_data[1] = data1;
	stop = (k->uk.req_flags & KEVENT_REQ_ONESHOT) ||
	       (ret_flags & KEVENT_RET_BROKEN);
	if (!(k->flags & KEV_READY)) {
		/* D3: the ring advances only when a kevent becomes ready. */
		kq_ring_write(q, k);
		list_add_tail(&k->rnode, &q->ready);
		k->flags |= KEV_READY;
		q->ready_num++;
		kq_serve(q);
		wake = true;
	}
	spin_unlock_irqrestore(&q->ready_lock, irqflags);
	if (wake)
		wake_up_poll(&q->poll_wq, EPOLLIN | EPOLLRDNORM);
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

/* D6, D7: the oldest kevent with this id and cookie, not yet delivered. */
static struct kevent *kq_find(struct kevent_queue *q, const struct ukevent *uk)
{
	struct kevent *k;

	list_for_each_entry(k, kq_bucket(q, &uk->id), hnode) {
		if (k->uk.id.raw[0] == uk->id.raw[0] &&
		    k->uk.id.raw[1] == uk->id.raw[1] &&
		    k->uk.user[0] == uk->user[0] &&
		    k->uk.user[1] == uk->user[1] &&
		    !(READ_ONCE(k->flags) & KEV_ZOMBIE))
			return k;
	}
	return NULL;
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

/* ADD of one entry: 0 queued (nothing to write back), 1 write it back. */
static int kq_add_one(struct kevent_queue *q, struct ukevent *uk)
{
	const struct kevent_origin *origin;
	struct kevent *k;
	int ret;

	uk->ret_flags = 0;
	uk->ret_data[0] = 0;
	uk->ret_data[1] = 0;
	if (q->strict && (uk->req_flags & ~KEVENT_REQ_ONESHOT)) {
		kq_fail(uk, -EINVAL);
		return 1;
	}
	origin = kevent_origin_get(uk->type);
	if (!origin) {
		kq_fail(uk, -EINVAL);
		return 1;
	}
	k = kq_fault_add_now(q) ? NULL : kmem_cache_zalloc(kevent_cache, GFP_KERNEL);
	if (!k) {
		kq_fail(uk, -ENOMEM);	/* D19 */
		return 1;
	}
	atomic_inc(&kevent_stats.kevents);
	INIT_LIST_HEAD(&k->rnode);
	k->q = q;
	k->origin = origin;
	k->uk = *uk;

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
	if (k->flags & KEV_READY) {
		/* Its pending readiness is dropped; its ring slot stays (D4). */
		list_del_init(&k->rnode);
		q->ready_num--;
		k->flags &= ~KEV_READY;
	}
	spin_unlock_irqrestore(&q->ready_lock, irqflags);
	k->origin->detach(k);
	kq_free_kevent(q, k);
}

static void kq_modify_one(struct kevent_queue *q, struct ukevent *uk)
{
	unsigned long irqflags;
	struct kevent *k = kq_find(q, uk);
	int ret;

	if (!k) {
		uk->ret_flags = KEVENT_RET_BROKEN | KEVENT_RET_DONE;
		return;
	}
	if (q->strict && (uk->req_flags & ~KEVENT_REQ_ONESHOT)) {
		kq_fail(uk, -EINVAL);
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
	spin_unlock_irqrestore(&q->ready_lock, irqflags);

	ret = k->origin->modify(k);
	if (ret)
		kq_fail(uk, ret);
	else
		uk->ret_flags = KEVENT_RET_DONE;
}

static long kq_ctl(struct kevent_queue *q, const struct kevent_ctl_arg *a,
		   bool compat)
{
	struct ukevent *buf;
	void __user *uarr;
	unsigned int i, n = 0;
	long ret = 0;
	int uerr;

	/* D25: whole-call checks on the header, before the array is read. */
	if (a->cmd > KEVENT_CTL_MODIFY || a->num > KEVENT_MAX_EVENTS)
		return -EINVAL;
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
	if (!a->num)
		goto out_unlock;
	ret = uerr;
	if (ret)
		goto out_unlock;

	buf = kevent_buf_alloc(a->num);
	if (!buf) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	/* D9: the whole array is read before any entry takes effect. */
	if (copy_from_user(buf, uarr, (size_t)a->num * sizeof(*buf))) {
		ret = -EFAULT;
		goto out_free;
	}
	switch (a->cmd) {
	case KEVENT_CTL_ADD:
		for (i = 0; i < a->num; i++) {
			if (kq_add_one(q, &buf[i]))
				buf[n++] = buf[i];	/* compact to the front */
		}
		ret = n;
		break;
	case KEVENT_CTL_REMOVE:
		for (i = 0; i < a->num; i++)
			kq_remove_one(q, &buf[i]);
		n = a->num;
		break;
	case KEVENT_CTL_MODIFY:
		for (i = 0; i < a->num; i++)
			kq_modify_one(q, &buf[i]);
		n = a->num;
		break;
	}
	/* D9: registrations stay even when the write-back faults. */
	if (n && copy_to_user(uarr, buf, (size_t)n * sizeof(*buf)))
		ret = -EFAULT;
out_free:
	kevent_buf_free(buf);
out_unlock:
	mutex_unlock(&q->ctl_mutex);
	return ret;
}

/* ---- GET_EVENTS ------------------------------------------------------- */

static void kq_wait(struct kevent_queue *q, struct kevent_waiter *w, u64 timeout_ns)
{
	ktime_t expires, *exp = NULL;
	bool expired = false;

	/* D8: ~0 waits forever; so does anything beyond ktime's range. */
	if (timeout_ns != KEVENT_TIMEOUT_INFINITE && timeout_ns < KTIME_MAX) {
		expires = ktime_add_safe(ktime_get(), ns_to_ktime(timeout_ns));
		exp = &expires;
	}
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (smp_load_acquire(&w->done) || expired ||
		    signal_pending(current))
			break;
		if (!schedule_hrtimeout(exp, HRTIMER_MODE_ABS))
			expired = true;
	}
	__set_current_state(TASK_RUNNING);
}

static long kq_get_events(struct kevent_queue *q, struct file *file,
			  const struct kevent_get_events_arg *a, bool compat)
{
	struct kevent_waiter w = { .task = current };
	unsigned long irqflags;
	void __user *ubuf;
	size_t len, left;
	bool now;
	long ret;

	if (a->ioc_flags & ~KEVENT_GET_IOC_FLAGS)
		return -EINVAL;
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
	w.buf = kevent_buf_alloc(w.max_nr);
	if (!w.buf)
		return -ENOMEM;

	now = !w.min_nr || !a->timeout_ns || (file->f_flags & O_NONBLOCK) ||
	      (a->ioc_flags & KEVENT_GET_NONBLOCK);
	spin_lock_irqsave(&q->ready_lock, irqflags);
	if (now || q->ready_num >= w.min_nr) {
		w.got = kq_take(q, w.buf, w.max_nr, &w.zombies);
	} else {
		list_add_tail(&w.node, &q->waiters);
		q->parked_num++;
		atomic_inc(&kevent_stats.waiters);
		spin_unlock_irqrestore(&q->ready_lock, irqflags);

		kq_wait(q, &w, a->timeout_ns);

		/* Always relock: a waker may still be using w (LOCKING). */
		spin_lock_irqsave(&q->ready_lock, irqflags);
		atomic_dec(&kevent_stats.waiters);
		if (!w.done) {
			/* Timeout or signal: what is ready, no -EINTR (D22). */
			list_del(&w.node);
			q->parked_num--;
			w.got = kq_take(q, w.buf, w.max_nr, &w.zombies);
		}
	}
	spin_unlock_irqrestore(&q->ready_lock, irqflags);

	if (w.zombies) {
		mutex_lock(&q->ctl_mutex);
		kq_reap(q);
		mutex_unlock(&q->ctl_mutex);
	}
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
	kevent_buf_free(w.buf);
	return ret;
}

/* ---- INFO, SET_ABI ------------------------------------------------- */

static void kq_info(struct kevent_queue *q, struct kevent_info *info, size_t usize)
{
	memset(info, 0, sizeof(*info));
	info->size = min(usize, sizeof(*info));
	info->abi_revision = KEVENT_ABI_REVISION;
	info->backend = KEVENT_BACKEND_MODULE;
	info->features = KEVENT_FEAT_RING_MMAP | KEVENT_FEAT_FD_ORIGINS |
			 KEVENT_FEAT_STRICT |
			 (fault_inject ? KEVENT_FEAT_FAULT_INJECT : 0);
	info->supported_types = BIT(KEVENT_TIMER) | BIT(KEVENT_POLL) |
				BIT(KEVENT_SOCKET) | BIT(KEVENT_INODE);
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
}

static long kq_set_abi(struct kevent_queue *q, const struct kevent_set_abi *a)
{
	long ret = 0;

	/* A12: every revision served, 1 .. INFO's abi_revision. */
	if (a->revision < 1 || a->revision > KEVENT_ABI_REVISION ||
	    (a->flags & ~KEVENT_ABI_FLAGS) || a->__reserved)
		return -EINVAL;
	mutex_lock(&q->ctl_mutex);
	if (q->ctl_seen)
		ret = -EBUSY;
	else
		q->strict = a->flags & KEVENT_ABI_STRICT;
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

static long kevent_do_ioctl(struct file *file, unsigned int cmd,
			    void __user *uarg, bool compat)
{
	struct kevent_queue *q = file->private_data;
	size_t usize = _IOC_SIZE(cmd);
	union {
		struct kevent_info info;
		struct kevent_ctl_arg ctl;
		struct kevent_get_events_arg get;
		struct kevent_set_abi set_abi;
		struct kevent_fault fault;
		struct kevent_drain drain;	/* KEVENT_IOC_DRAIN */
	} a;
	int ret;

	if (_IOC_TYPE(cmd) != KEVENT_IOC_MAGIC)
		return -ENOTTY;

	switch (_IOC_NR(cmd)) {
	case KEVENT_IOC_NR_INFO:
		ret = kevent_arg_size(cmd, _IOC_READ, KEVENT_INFO_SIZE_VER0);
		if (ret)
			return ret;
		/* copy_struct_to_user: an older caller gets its own size. */
		kq_info(q, &a.info, usize);
		if (copy_to_user(uarg, &a.info, a.info.size))
			return -EFAULT;
		/* A newer caller's fields beyond ours read as zero. */
		if (usize > sizeof(a.info) &&
		    clear_user(uarg + sizeof(a.info), usize - sizeof(a.info)))
			return -EFAULT;
		return 0;

	case KEVENT_IOC_NR_CTL:
		ret = kevent_arg_size(cmd, _IOC_WRITE, KEVENT_CTL_ARG_SIZE_VER0);
		if (!ret)
			ret = copy_struct_from_user(&a.ctl, sizeof(a.ctl), uarg, usize);
		if (ret)
			return ret;
		return kq_ctl(q, &a.ctl, compat);

	case KEVENT_IOC_NR_GET_EVENTS:
		ret = kevent_arg_size(cmd, _IOC_WRITE, KEVENT_GET_EVENTS_ARG_SIZE_VER0);
		if (!ret)
			ret = copy_struct_from_user(&a.get, sizeof(a.get), uarg, usize);
		if (ret)
			return ret;
		return kq_get_events(q, file, &a.get, compat);

	case KEVENT_IOC_NR_SET_ABI:
		ret = kevent_arg_size(cmd, _IOC_WRITE, KEVENT_SET_ABI_SIZE_VER0);
		if (!ret)
			ret = copy_struct_from_user(&a.set_abi, sizeof(a.set_abi),
						    uarg, usize);
		if (ret)
			return ret;
		return kq_set_abi(q, &a.set_abi);

	case KEVENT_IOC_NR_FAULT:
		if (!fault_inject)
			return -ENOTTY;
		ret = kevent_arg_size(cmd, _IOC_WRITE, KEVENT_FAULT_SIZE_VER0);
		if (!ret)
			ret = copy_struct_from_user(&a.fault, sizeof(a.fault), uarg, usize);
		if (ret)
			return ret;
		return kq_fault(q, &a.fault);

	/* ---- begin KEVENT_IOC_DRAIN (tests only) ---- */
	case KEVENT_IOC_NR_DRAIN:
		/* A wake-up queues the poll re-check on kevent_wq: run what is queued. */
		if (!fault_inject)
			return -ENOTTY;
		ret = kevent_arg_size(cmd, _IOC_WRITE, KEVENT_DRAIN_SIZE_VER0);
		if (!ret)
			ret = copy_struct_from_user(&a.drain, sizeof(a.drain), uarg, usize);
		if (ret)
			return ret;
		if (a.drain.__reserved)
			return -EINVAL;
		flush_workqueue(kevent_wq);
		return 0;
	/* ---- end KEVENT_IOC_DRAIN ---- */

	case KEVENT_IOC_NR_RING_SHM:	/* CUSE only: the module maps for real */
	default:
		return -ENOTTY;
	}
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
	return READ_ONCE(q->ready_num) ? EPOLLIN | EPOLLRDNORM : 0;
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
	INIT_LIST_HEAD(&q->waiters);
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
		kevent_misc.minor, KEVENT_ABI_REVISION);
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
