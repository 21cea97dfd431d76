// SPDX-License-Identifier: GPL-2.0
/*
 * Queues and kevents: the take13 control calls, the ready FIFO, the ring
 * writer and parked waiters.
 *
 * LOCKING (acquire in this order; never the other way round)
 *  1. q->ctl, the control lock: serialises every call that changes the
 *     queue (ADD/MODIFY/REMOVE/GET_EVENTS dequeue, SET_ABI, release, the
 *     serving of waiters), as the 2006 ctl_mutex did.  It protects the
 *     kevent table, kevent_num (written under it, read atomically by
 *     kdisp_plan), the waiter list and ctl_seen/dead/abi_flags.  Origin
 *     attach/modify/detach and user-memory access run under it.
 *  2. origin locks (origin.h): korigin_fire() arrives holding one.
 *  3. q->lock, the ready lock: the ready FIFO, ready_num, the ring and its
 *     dirty range (ring_flush), kitem flags and pending results (also a
 *     fire held while attach() runs, KITEM_ATTACHING/HELD, D3), kitem
 *     req_flags, wait_min and notify.
 *     Nothing blocking and no callback runs under it.
 *  4. core->lock (core.c): deadline heap and work list.
 * notify() and complete() are called with none of these held, and so is
 * the transport's ring_written() (ring_flush).
 *
 * Lifetimes: a kitem is freed only under q->ctl after detach(), which
 * (origin.h) guarantees no korigin_fire() on it is running or will start,
 * so the fire path needs no RCU and no reference.  A queue is reference
 * counted (the transport, each waiter, the work list); kqueue_release()
 * empties it and drops the transport's reference.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define UKSZ		sizeof(struct ukevent)
#define TABLE_MIN	16u
#define TABLE_MAX	2048u
#define RSLOTS_MIN	16u
#define TAKE_ON_STACK	64u	/* GET_EVENTS batches up to this need no malloc */

/* ---- kitem origin accessors (origin.h) ---- */

const struct ukevent *korigin_ukevent(const struct kitem *k)
{
	return &k->uk;
}

void *korigin_data(const struct kitem *k)
{
	return k->odata;
}

void korigin_set_data(struct kitem *k, void *data)
{
	k->odata = data;
}

unsigned int korigin_revision(const struct kitem *k)
{
	return k->q->revision;
}

int korigin_inode_notes(const struct kitem *k)
{
	return kq_rule(k->q, KR_INODE_NOTES);
}

int korigin_counts(const struct kitem *k)
{
	return kq_rule(k->q, KR_DATA) && k->kt->data;
}

int korigin_always_queue(const struct kitem *k)
{
	return kq_rule(k->q, KR_ALWAYS_QUEUE) && k->kt->always_queue &&
	       (k->uk.req_flags & KEVENT_REQ_ALWAYS_QUEUE);
}

/* ---- queue lifetime ---- */

void kqueue_get(struct kqueue *q)
{
	atomic_fetch_add(&q->refs, 1);
}

void kqueue_put(struct kqueue *q)
{
	struct kcore *core = q->core;

	if (atomic_fetch_sub(&q->refs, 1) != 1)
		return;
	kuid_uncharge(q->uid, KEVENT_LIMIT_QUEUES);
	pthread_mutex_destroy(&q->ctl);
	pthread_mutex_destroy(&q->lock);
	free(q->rslots);
	free(q->table);
	free(q);
	atomic_fetch_sub(&core->n_queues, 1);
}

static struct klist *table_new(struct kcore *core, unsigned int n)
{
	struct klist *t = kcore_alloc(core, n * sizeof(*t));
	unsigned int i;

	if (t)
		for (i = 0; i < n; i++)
			klist_init(&t[i]);
	return t;
}

int kqueue_open(struct kcore *core, const struct kcaller *owner, void *ring,
		struct kqueue **ret)
{
	struct kqueue *q;
	struct kuid *u;
	int err;

	u = kcore_uid_get(core, owner->uid);
	if (!u)
		return -ENOMEM;
	err = kuid_charge(core, u, KEVENT_LIMIT_QUEUES);
	if (err)
		return -EMFILE;
	q = kcore_alloc(core, sizeof(*q));
	if (q)
		q->table = table_new(core, TABLE_MIN);
	if (q && q->table)
		q->rslots = kcore_alloc(core, RSLOTS_MIN * sizeof(*q->rslots));
	if (!q || !q->table || !q->rslots) {
		if (q)
			free(q->table);
		free(q);
		kuid_uncharge(u, KEVENT_LIMIT_QUEUES);
		return -ENOMEM;
	}
	q->core = core;
	q->owner = *owner;
	q->uid = u;
	q->revision = 1;	/* 2006 programs never call SET_ABI */
	q->rules = kr_rules_of(1);
	q->deliver_hooks = ktypes_deliver(q->rules);
	q->ring = ring;
	q->nbuckets = TABLE_MIN;
	q->rcap = RSLOTS_MIN;
	q->wait_min = UINT_MAX;
	atomic_init(&q->refs, 1);
	atomic_init(&q->kevent_num, 0);
	atomic_init(&q->due, false);
	pthread_mutex_init(&q->ctl, NULL);
	pthread_mutex_init(&q->lock, NULL);
	klist_init(&q->waiters);
	klist_init(&q->level);
	klist_init(&q->work_node);
	atomic_fetch_add(&core->n_queues, 1);
	*ret = q;
	return 0;
}

unsigned int kqueue_poll(struct kqueue *q)
{
	unsigned int mask;

	pthread_mutex_lock(&q->lock);
	mask = q->ready_num || q->latched ? POLLIN | POLLRDNORM : 0;	/* D50 */
	pthread_mutex_unlock(&q->lock);
	return mask;
}

void kqueue_set_notify(struct kqueue *q, void (*notify)(void *ctx), void *ctx)
{
	pthread_mutex_lock(&q->lock);
	q->notify = notify;
	q->notify_ctx = ctx;
	pthread_mutex_unlock(&q->lock);
}

void kqueue_set_transport(struct kqueue *q, const struct ktransport *t, void *file)
{
	q->t = t;
	q->tfile = file;
}

/* ---- the kevent table: buckets in insertion order (oldest first, D6) ---- */

static unsigned int key_hash(const struct ukevent *uk, unsigned int nbuckets)
{
	__u64 cookie = (__u64)uk->user[0] | (__u64)uk->user[1] << 32;
	__u64 h = uk->id.raw_u64 * 0x9e3779b97f4a7c15ull;

	h ^= cookie * 0xc2b2ae3d27d4eb4full;
	return (unsigned int)(h >> 40) & (nbuckets - 1);
}

/* D7; D63: the type is part of the key on a revision-3 queue. */
static bool key_equal(const struct kqueue *q, const struct ukevent *a, const struct ukevent *b)
{
	return a->id.raw[0] == b->id.raw[0] && a->id.raw[1] == b->id.raw[1] &&
	       a->user[0] == b->user[0] && a->user[1] == b->user[1] &&
	       (!kq_rule(q, KR_TYPE_KEY) || a->type == b->type);
}

/* Rehash into twice the buckets; keeps going with the old table on ENOMEM. */
static void table_grow(struct kqueue *q)
{
	unsigned int n = q->nbuckets * 2, b;
	struct klist *t = table_new(q->core, n);
	struct klist *pos, *tmp;

	if (!t)
		return;
	for (b = 0; b < q->nbuckets; b++) {
		klist_for_each_safe(pos, tmp, &q->table[b]) {
			struct kitem *k = klist_entry(pos, struct kitem, tnode);

			klist_add_tail(&k->tnode, &t[key_hash(&k->uk, n)]);
		}
	}
	free(q->table);
	q->table = t;
	q->nbuckets = n;
}

static void table_link(struct kqueue *q, struct kitem *k)
{
	unsigned int num = atomic_load(&q->kevent_num) + 1;

	if (num > 2 * q->nbuckets && q->nbuckets < TABLE_MAX)
		table_grow(q);
	klist_add_tail(&k->tnode, &q->table[key_hash(&k->uk, q->nbuckets)]);
	atomic_store(&q->kevent_num, num);
	atomic_fetch_add(&q->core->n_kevents, 1);
}

static struct kitem *table_find(struct kqueue *q, const struct ukevent *uk)
{
	struct klist *head = &q->table[key_hash(uk, q->nbuckets)];
	struct klist *pos, *tmp;

	klist_for_each_safe(pos, tmp, head) {
		struct kitem *k = klist_entry(pos, struct kitem, tnode);

		if (key_equal(q, &k->uk, uk))
			return k;
	}
	return NULL;
}

/* ---- the ready FIFO (q->lock held) ---- */

/*
 * Squeezes out the holes REMOVE left, keeping the order: in place (dst is
 * q->rslots: every slot written was read already), or into a new array
 * where positions start again at 0.
 */
static void rslots_compact(struct kqueue *q, struct kitem **dst, unsigned int dcap)
{
	unsigned int mask = q->rcap - 1, head = q->rhead, i, j;

	j = dst == q->rslots ? head : 0;
	q->rhead = j;
	for (i = head; i != q->rtail; i++) {
		struct kitem *k = q->rslots[i & mask];

		if (k) {
			k->rpos = j;
			dst[j++ & (dcap - 1)] = k;
		}
	}
	q->rtail = j;
}

static void rslots_push(struct kqueue *q, struct kitem *k)
{
	if (q->rtail - q->rhead == q->rcap)
		rslots_compact(q, q->rslots, q->rcap);
	k->rpos = q->rtail++;
	q->rslots[k->rpos & (q->rcap - 1)] = k;
}

/*
 * Before an ADD entry (q->ctl held): room for every kevent to be ready at
 * once, so the fire path never allocates.
 */
static int rslots_reserve(struct kqueue *q, unsigned int need)
{
	unsigned int cap = q->rcap;
	struct kitem **n, **old;

	if (need < cap)
		return 0;
	while (cap <= need)
		cap *= 2;
	n = kcore_alloc(q->core, cap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	pthread_mutex_lock(&q->lock);
	old = q->rslots;
	/* compacting into n: the old order is kept and old[] is only read */
	rslots_compact(q, n, cap);
	q->rslots = n;
	q->rcap = cap;
	pthread_mutex_unlock(&q->lock);
	free(old);
	return 0;
}

/* ---- the ring (q->lock held) ---- */

/* Returns the slot's byte offset, or 0 when there is no ring. */
static size_t ring_write(struct kqueue *q, const struct kitem *k)
{
	unsigned int slot = q->ring_idx;
	struct mukevent *m;

	if (!q->ring)
		return 0;
	m = (struct mukevent *)((char *)q->ring + KEVENT_RING_SLOT_OFFSET(slot));
	m->id = k->uk.id;
	m->ret_flags = k->rflags;
	m->__pad = 0;
	q->ring_idx = (slot + 1) % KEVENT_MAX_EVENTS;
	/* Readers acquire the index, then read the slots before it. */
	__atomic_store_n((__u32 *)q->ring, q->ring_idx, __ATOMIC_RELEASE);
	return KEVENT_RING_SLOT_OFFSET(slot);
}

/*
 * The transport's ring_written() may block (kcore.h), so it never runs
 * under a core lock: a ring write marks its bytes dirty under q->lock and
 * whoever holds no core lock next tells the transport.  A fire on an
 * origin thread does it right after; a fire inside a control call (a held
 * fire let go after attach(), an origin firing from modify()) holds
 * q->ctl, so kqueue_ctl() does it after dropping q->ctl.
 */
static _Thread_local const struct kqueue *ring_in_ctl;

static bool ring_hooked(const struct kqueue *q)
{
	return q->ring && q->t && q->t->ring_written;
}

/* q->lock held: bytes [off, off + len) and the index word changed. */
static void ring_dirty_locked(struct kqueue *q, size_t off, size_t len)
{
	if (!q->ring_hi || off < q->ring_lo)
		q->ring_lo = off;
	if (off + len > q->ring_hi)
		q->ring_hi = off + len;
}

/* No core lock held: tell the transport what was written since last time. */
static void ring_flush(struct kqueue *q)
{
	size_t lo, hi;

	if (!ring_hooked(q))
		return;
	pthread_mutex_lock(&q->lock);
	lo = q->ring_lo;
	hi = q->ring_hi;
	q->ring_lo = q->ring_hi = 0;
	pthread_mutex_unlock(&q->lock);
	if (hi)
		q->t->ring_written(q->tfile, lo, hi - lo);
}

/* k's pending result goes onto the ready list, unless it is there already. */
static void push_locked(struct kqueue *q, struct kitem *k, struct enqueue_effects *fx)
{
	size_t off;

	if (k->flags & KITEM_READY)
		return;
	k->flags |= KITEM_READY;
	rslots_push(q, k);
	q->ready_num++;
	/*
	 * D32: every kevent that becomes ready wakes the watchers, as take13's
	 * wake_up() on each requeue did: an edge-triggered epoll user that
	 * stops at a short GET_EVENTS count must still see the next one.
	 */
	if (q->notify) {
		fx->notify = q->notify;
		fx->notify_ctx = q->notify_ctx;
	}
	atomic_fetch_add(&q->core->n_ready, 1);
	off = ring_write(q, k);
	if (off && ring_hooked(q)) {
		ring_dirty_locked(q, off, sizeof(struct mukevent));
		fx->ring = true;
	}
	fx->schedule = q->ready_num >= q->wait_min;
}

/* k's result data: res, or res merged with the pending one by its type (D68). */
static void merge_locked(struct kitem *k, const struct korigin_result *res)
{
	struct korigin_result r = *res;

	if (k->kt->merge && (k->flags & (KITEM_READY | KITEM_HELD)))
		k->kt->merge(k, &r);
	k->rdata[0] = r.ret_data[0];
	k->rdata[1] = r.ret_data[1];
}

/*
 * k has a result: rebuild its pending ret_flags (D21) and put it on the
 * ready list unless it is there already (then the result merges, A9).
 * D65: a disarmed DISPATCH kevent keeps it (merged the same way) until
 * MODIFY re-arms it.  Returns 1 when the origin must stop reporting k.
 */
int enqueue_locked(struct kqueue *q, struct kitem *k, const struct korigin_result *res,
		   struct enqueue_effects *fx)
{
	bool broken = res->ret_flags & KEVENT_RET_BROKEN;
	bool stop = broken || (k->uk.req_flags & KEVENT_REQ_ONESHOT);

	merge_locked(k, res);
	k->rflags = KEVENT_RET_DONE | (broken ? KEVENT_RET_BROKEN : 0);
	if (stop)
		k->flags |= KITEM_STOPPED;
	if (k->flags & KITEM_DISARMED)
		k->flags |= KITEM_HELD;
	else
		push_locked(q, k, fx);
	return stop;
}

/* D65: MODIFY re-arms a disarmed kevent; a result it held becomes ready now. */
static void rearm_locked(struct kqueue *q, struct kitem *k, struct enqueue_effects *fx)
{
	if (!(k->flags & KITEM_DISARMED))
		return;
	k->flags &= ~KITEM_DISARMED;
	if (k->flags & KITEM_HELD) {
		k->flags &= ~KITEM_HELD;
		push_locked(q, k, fx);
	}
}

/* A fire while k is inside attach(): keep the last result, as a merge does (A9). */
int hold_locked(struct kitem *k, const struct korigin_result *res)
{
	bool stop = (res->ret_flags & KEVENT_RET_BROKEN) || (k->uk.req_flags & KEVENT_REQ_ONESHOT);

	merge_locked(k, res);
	k->flags |= KITEM_HELD | (stop ? KITEM_STOPPED : 0);
	k->rflags = res->ret_flags & KEVENT_RET_BROKEN;
	return stop;
}

void enqueue_effects_run(struct kqueue *q, const struct enqueue_effects *fx)
{
	if (fx->ring && ring_in_ctl != q)
		ring_flush(q);
	if (fx->schedule)
		kcore_schedule(q->core, q);
	if (fx->notify)
		fx->notify(fx->notify_ctx);
}

int korigin_fire(struct kitem *k, const struct korigin_result *res)
{
	struct kqueue *q = k->q;
	struct enqueue_effects fx = { 0 };
	int stop;

	if (k->kt->fire && !(res->ret_flags & KEVENT_RET_BROKEN))
		return k->kt->fire(k, res);
	pthread_mutex_lock(&q->lock);
	if (k->flags & KITEM_STOPPED) {
		pthread_mutex_unlock(&q->lock);
		return 1;
	}
	if (k->flags & KITEM_ATTACHING) {
		stop = hold_locked(k, res);
		pthread_mutex_unlock(&q->lock);
		return stop;
	}
	stop = enqueue_locked(q, k, res, &fx);
	pthread_mutex_unlock(&q->lock);
	enqueue_effects_run(q, &fx);
	return stop;
}

/*
 * attach() returned 0: k is registered, so a fire it held moves k onto the
 * ready list now (one ring slot, one notify).  Had ADD answered the entry
 * instead, the held fire is simply dropped with k: D3 says a ready-at-ADD
 * entry never advances the ring.
 */
static void attach_done(struct kqueue *q, struct kitem *k)
{
	struct enqueue_effects fx = { 0 };

	pthread_mutex_lock(&q->lock);
	k->flags &= ~KITEM_ATTACHING;
	if (k->flags & KITEM_HELD) {
		struct korigin_result res = {
			k->rflags & KEVENT_RET_BROKEN, { k->rdata[0], k->rdata[1] }
		};

		k->flags &= ~KITEM_HELD;
		enqueue_locked(q, k, &res, &fx);
	}
	pthread_mutex_unlock(&q->lock);
	enqueue_effects_run(q, &fx);
}

/* ---- kevents: create and destroy (q->ctl held) ---- */

static void kitem_free(struct kitem *k)
{
	kuid_uncharge(k->uid, KEVENT_LIMIT_KEVENTS);
	if (k->res >= 0)
		kuid_uncharge(k->uid, k->res);
	free(k);
}

/* KEVENT_IOC_FAULT's ADD_ENOMEM: true once, on the armed occasion. */
static bool fault_add_now(struct kqueue *q)
{
	return q->fault_add && --q->fault_add == 0;
}

static int kitem_new(struct kqueue *q, const struct ukevent *uk,
		     const struct korigin_ops *ops, const struct kcaller *caller,
		     struct kitem **ret)
{
	struct kcore *core = q->core;
	struct kuid *u = caller->uid == q->owner.uid ? q->uid : kcore_uid_get(core, caller->uid);
	const struct ktype *kt = ktype_of(uk->type);
	int res = kt->limit;
	struct kitem *k;

	if (!u)
		return -ENOMEM;
	if (kuid_charge(core, u, KEVENT_LIMIT_KEVENTS))
		return -ENOSPC;
	if (res >= 0 && kuid_charge(core, u, res)) {
		kuid_uncharge(u, KEVENT_LIMIT_KEVENTS);
		return -ENOSPC;
	}
	k = fault_add_now(q) ? NULL : kcore_alloc(core, sizeof(*k) + kt->priv_size);
	if (!k) {
		kuid_uncharge(u, KEVENT_LIMIT_KEVENTS);
		if (res >= 0)
			kuid_uncharge(u, res);
		return -ENOMEM;
	}
	k->q = q;
	k->kt = kt;
	k->ops = ops;
	k->uk = *uk;
	k->uid = u;
	k->res = res;
	klist_init(&k->tnode);
	klist_init(&k->rnode);
	klist_init(&k->lnode);
	*ret = k;
	return 0;
}

/* Takes k off the ready list if it is there (q->lock held). */
void unready_locked(struct kqueue *q, struct kitem *k)
{
	k->flags &= ~KITEM_HELD;	/* D65: a disarmed kevent's pending result too */
	if (!(k->flags & KITEM_READY))
		return;
	q->rslots[k->rpos & (q->rcap - 1)] = NULL;
	k->flags &= ~KITEM_READY;
	q->ready_num--;
	atomic_fetch_sub(&q->core->n_ready, 1);
}

static void kitem_unready(struct kqueue *q, struct kitem *k)
{
	pthread_mutex_lock(&q->lock);
	unready_locked(q, k);
	pthread_mutex_unlock(&q->lock);
}

/* Detach from the origin, drop any pending readiness (D4), free. */
static void kitem_destroy(struct kqueue *q, struct kitem *k)
{
	k->ops->detach(k);
	kitem_unready(q, k);
	klist_del(&k->lnode);	/* off q->level (D43), if it was there */
	klist_del(&k->tnode);
	atomic_store(&q->kevent_num, atomic_load(&q->kevent_num) - 1);
	atomic_fetch_sub(&q->core->n_kevents, 1);
	kitem_free(k);
}

/* ---- the control calls (q->ctl held) ---- */

static bool req_flags_refused(const struct kqueue *q, const struct ukevent *uk)
{
	__u32 known = KEVENT_REQ_ONESHOT;

	if (kq_rule(q, KR_ALWAYS_QUEUE))
		known |= KEVENT_REQ_ALWAYS_QUEUE;	/* D42 */
	if (kq_rule(q, KR_LEVEL))
		known |= KEVENT_REQ_LEVEL;		/* D43 */
	if (kq_rule(q, KR_DISPATCH))
		known |= KEVENT_REQ_DISPATCH;		/* D65 */
	return (q->abi_flags & KEVENT_ABI_STRICT) && (uk->req_flags & ~known);
}

static void entry_fail(struct ukevent *uk, int err)
{
	uk->ret_flags = KEVENT_RET_BROKEN | KEVENT_RET_DONE;
	uk->ret_data[1] = (__u32)err;
}

/* D43: level-triggered delivery exists for the types that say so (POLL, SOCKET). */
static bool level_refused(const struct kqueue *q, const struct ukevent *uk, __u32 type)
{
	const struct ktype *kt = ktype_of(type);

	return kq_rule(q, KR_LEVEL) && (uk->req_flags & KEVENT_REQ_LEVEL) &&
	       !(kt && kt->level);
}

/*
 * The origin of a type on q.  A type whose rules q lacks (types 8 and 9
 * below revision 3, D64) is answered as before it existed (A3, D51).
 */
static const struct korigin_ops *type_ops(const struct kqueue *q, __u32 type)
{
	const struct ktype *kt = ktype_of(type);

	if (!kt || !kq_rules(q, kt->needs))
		return NULL;
	return kt->ops ? kt->ops : kcore_origin(q->core, type);
}

static bool ext_zero(const struct ukevent_ext *e)
{
	unsigned int i;

	for (i = 0; i < 5; i++)
		if (e->ext.__raw[i])
			return false;
	return true;
}

/* D60: whether the entry's type reads a setting from the ext. */
static bool has_setting(const struct ukevent *uk)
{
	const struct ktype *kt = ktype_of(uk->type);

	return kt && kt->ext_check;
}

/*
 * D58-D60: an entry's extension.  e is NULL for a 40-byte entry.  A type
 * with a setting checks it (ktype.ext_check), every other type needs an
 * all-zero ext.  Returns 1 when the entry carries a setting to apply.
 */
static int ext_check(const struct ukevent *uk, const struct ukevent_ext *e, bool add)
{
	if (has_setting(uk))
		return ktype_of(uk->type)->ext_check(uk, e, add);
	return e && !ext_zero(e) ? -EINVAL : 0;
}

/* D60: REMOVE and READY read no setting; other types' ext must be zero. */
static int ext_foreign(const struct kqueue *q, const struct ukevent *uk,
		       const struct ukevent_ext *e)
{
	return kq_rule(q, KR_EXT) && e && !has_setting(uk) && !ext_zero(e) ? -EINVAL : 0;
}

/* One ADD entry: 0 registered; 1 answered in *uk (ready now or failed). */
static int add_one(struct kqueue *q, struct ukevent *uk, const struct ukevent_ext *e,
		   const struct kcaller *caller)
{
	const struct korigin_ops *ops = type_ops(q, uk->type);
	struct korigin_result res = { 0 };
	struct kitem *k;
	int err, set = 0;

	uk->ret_flags = 0;
	if (!ops) {
		/* A3; D51: revision 2 says ENOSYS, per entry (never whole-call). */
		entry_fail(uk, kq_rule(q, KR_ENOSYS) ? -ENOSYS : -EINVAL);
		return 1;
	}
	if (req_flags_refused(q, uk) || level_refused(q, uk, uk->type)) {
		entry_fail(uk, -EINVAL);
		return 1;
	}
	if (kq_rule(q, KR_EXT)) {
		set = ext_check(uk, e, true);
		if (set < 0) {
			entry_fail(uk, set);
			return 1;
		}
	}
	err = rslots_reserve(q, atomic_load(&q->kevent_num) + 1);
	if (!err)
		err = kitem_new(q, uk, ops, caller, &k);
	if (err) {
		entry_fail(uk, err);
		return 1;
	}
	if (set)
		k->kt->setup(k, e);	/* k is not yet visible */
	k->flags = KITEM_ATTACHING;	/* k is not yet visible: no lock needed */
	err = ops->attach(k, caller, &res);
	if (err == 0) {
		table_link(q, k);
		attach_done(q, k);
		return 0;
	}
	kitem_free(k);	/* a fire it held goes with it (D3) */
	if (err < 0) {
		entry_fail(uk, err);
		return 1;
	}
	/* Ready at once: answered, not registered (take13), DONE set (D5). */
	uk->ret_flags = KEVENT_RET_DONE | (res.ret_flags & KEVENT_RET_BROKEN);
	uk->ret_data[0] = res.ret_data[0];
	uk->ret_data[1] = res.ret_data[1];
	return 1;
}

/* The entries of one CTL: 40-byte ukevents, or 80-byte ukevent_exts (D60). */
struct ctl_entries {
	unsigned char *buf;
	size_t esz;
	bool ext;
};

static struct ukevent *entry_at(const struct ctl_entries *es, unsigned int i)
{
	return (struct ukevent *)(es->buf + (size_t)i * es->esz);
}

static struct ukevent_ext *ext_at(const struct ctl_entries *es, unsigned int i)
{
	return es->ext ? (struct ukevent_ext *)entry_at(es, i) : NULL;
}

/* Compacts ready and failed entries, whole, to the front; returns their count. */
static unsigned int ctl_add(struct kqueue *q, const struct ctl_entries *es, unsigned int num,
			    const struct kcaller *caller)
{
	struct ukevent_ext tmp;
	unsigned int i, out = 0;

	for (i = 0; i < num; i++) {
		memcpy(&tmp, entry_at(es, i), es->esz);
		if (add_one(q, &tmp.ev, es->ext ? &tmp : NULL, caller))
			memcpy(entry_at(es, out++), &tmp, es->esz);
	}
	return out;
}

static void remove_one(struct kqueue *q, struct ukevent *uk, const struct ukevent_ext *e)
{
	struct kitem *k;
	int err = ext_foreign(q, uk, e);

	if (err < 0) {
		entry_fail(uk, err);
		return;
	}
	k = table_find(q, uk);
	if (!k) {
		uk->ret_flags = KEVENT_RET_BROKEN | KEVENT_RET_DONE;
		return;
	}
	kitem_destroy(q, k);
	uk->ret_flags = KEVENT_RET_DONE;
}

static void modify_one(struct kqueue *q, struct ukevent *uk, const struct ukevent_ext *e)
{
	struct kitem *k = table_find(q, uk);
	struct korigin_result res = { 0 };
	struct enqueue_effects fx = { 0 };
	int r = 0, set = 0;
	bool stale;

	if (!k) {
		uk->ret_flags = KEVENT_RET_BROKEN | KEVENT_RET_DONE;
		return;
	}
	if (kq_rule(q, KR_EXT))
		set = ext_check(uk, e, false);
	if (set < 0 || req_flags_refused(q, uk) || level_refused(q, uk, k->uk.type)) {
		entry_fail(uk, set < 0 ? set : -EINVAL);
		return;
	}
	if (set)
		k->kt->rearm(k, e);
	pthread_mutex_lock(&q->lock);
	k->uk.event = uk->event;
	k->uk.req_flags = uk->req_flags;
	stale = k->flags & KITEM_STALE;
	if (!stale)
		k->flags &= ~KITEM_STOPPED;
	rearm_locked(q, k, &fx);
	pthread_mutex_unlock(&q->lock);
	enqueue_effects_run(q, &fx);
	fx = (struct enqueue_effects){ 0 };
	/* D69: a stale kevent left its origin for good: no source to look at */
	if (stale) {
		uk->ret_flags = KEVENT_RET_DONE;
		return;
	}
	if (k->ops->modify)
		r = k->ops->modify(k, &res);
	if (r < 0) {
		entry_fail(uk, r);
		return;
	}
	uk->ret_flags = KEVENT_RET_DONE;
	if (r == 0)
		return;
	pthread_mutex_lock(&q->lock);
	enqueue_locked(q, k, &res, &fx);
	pthread_mutex_unlock(&q->lock);
	enqueue_effects_run(q, &fx);
}

/* D49: mark a registered kevent ready; one already ready keeps its result. */
static int ready_one(struct kqueue *q, struct ukevent *uk, const struct ukevent_ext *e)
{
	struct kitem *k;
	struct korigin_result res = { 0, { 0, 0 } };
	struct enqueue_effects fx = { 0 };
	int err = ext_foreign(q, uk, e);

	if (err < 0) {
		entry_fail(uk, err);
		return 0;
	}
	k = table_find(q, uk);
	if (!k) {
		uk->ret_flags = KEVENT_RET_BROKEN | KEVENT_RET_DONE;
		return 0;
	}
	uk->ret_flags = KEVENT_RET_DONE;
	pthread_mutex_lock(&q->lock);
	if (k->kt->ready)
		k->kt->ready(k, uk->event, &fx);
	else if (!(k->flags & (KITEM_READY | KITEM_HELD)))	/* D65: held is pending */
		enqueue_locked(q, k, &res, &fx);
	pthread_mutex_unlock(&q->lock);
	enqueue_effects_run(q, &fx);
	return 1;
}

/* D61: read a kevent's setting (a POSIX timer's); no state changes.  1: matched. */
static int query_one(struct kqueue *q, struct ukevent_ext *e)
{
	struct kitem *k = table_find(q, &e->ev);

	if (!k) {
		e->ev.ret_flags = KEVENT_RET_BROKEN | KEVENT_RET_DONE;	/* D38 */
		return 0;
	}
	if (!k->kt->query) {
		entry_fail(&e->ev, -EINVAL);
		return 1;
	}
	pthread_mutex_lock(&q->lock);
	k->kt->query(k, e);
	pthread_mutex_unlock(&q->lock);
	return 1;
}

/* D50: READY with num 0 wakes the oldest waiter, or latches the wake. */
static int ready_wake(struct kqueue *q)
{
	struct kwaiter *w;

	if (klist_empty(&q->waiters)) {
		pthread_mutex_lock(&q->lock);
		q->latched = true;
		pthread_mutex_unlock(&q->lock);
		return 0;
	}
	w = klist_entry(q->waiters.next, struct kwaiter, qnode);
	atomic_fetch_or(&w->flags, KWAIT_WOKEN);
	atomic_store(&q->due, true);
	return 1;
}

/*
 * D50: a GET_EVENTS or WAIT clears the latch; true if it was set.  *ready
 * is the ready count, read in the same lock section (q->ctl held: until
 * the caller dequeues, the count only grows).
 */
static bool latch_take(struct kqueue *q, unsigned int *ready)
{
	bool was;

	pthread_mutex_lock(&q->lock);
	was = q->latched;
	q->latched = false;
	*ready = q->ready_num;
	pthread_mutex_unlock(&q->lock);
	return was;
}

static int ctl_checks(const struct kqueue *q, __u32 cmd, __u32 num)
{
	unsigned int have = atomic_load(&q->kevent_num);

	if (cmd == KEVENT_CTL_ADD)
		return have + num >= KEVENT_MAX_EVENTS ? -EINVAL : 0;
	return num > have ? -EINVAL : 0;
}

static int ctl_locked(struct kqueue *q, const struct kevent_ctl_ext_arg *arg,
		      const struct kcaller *caller, const struct kuaccess *ua)
{
	struct ctl_entries es = { NULL, UKSZ, (arg->ioc_flags & KEVENT_CTL_EXT) != 0 };
	size_t len, back;
	unsigned int i;
	int ret = 0;

	q->ctl_seen = true;
	if (!arg->num)
		return arg->cmd == KEVENT_CTL_READY ? ready_wake(q) : 0;
	ret = ctl_checks(q, arg->cmd, arg->num);
	if (ret)
		return ret;
	if (es.ext)
		es.esz = sizeof(struct ukevent_ext);
	len = (size_t)arg->num * es.esz;
	es.buf = kcore_alloc_raw(q->core, len);
	if (!es.buf)
		return -ENOMEM;
	/* D9: the whole array first, so a read fault has no effect at all. */
	if (ua->read(ua->ctx, es.buf, arg->events, len)) {
		free(es.buf);
		return -EFAULT;
	}
	back = len;
	if (arg->cmd == KEVENT_CTL_ADD) {
		ret = (int)ctl_add(q, &es, arg->num, caller);
		back = (size_t)ret * es.esz;
	} else {
		for (i = 0; i < arg->num; i++) {
			struct ukevent *uk = entry_at(&es, i);

			if (arg->cmd == KEVENT_CTL_REMOVE)
				remove_one(q, uk, ext_at(&es, i));
			else if (arg->cmd == KEVENT_CTL_READY)
				ret += ready_one(q, uk, ext_at(&es, i));
			else if (arg->cmd == KEVENT_CTL_QUERY)
				ret += query_one(q, ext_at(&es, i));
			else
				modify_one(q, uk, ext_at(&es, i));
		}
	}
	if (back && ua->write(ua->ctx, arg->events, es.buf, back))
		ret = -EFAULT;
	free(es.buf);
	return ret;
}

/* ---- dequeue ---- */

/* Writes n records; on a fault, as many whole leading records as possible. */
static int write_out(const struct kuaccess *ua, __u64 uaddr,
		     const struct ukevent *buf, unsigned int n)
{
	unsigned int i;

	if (!ua->write(ua->ctx, uaddr, buf, n * UKSZ))
		return (int)n;
	for (i = 0; i < n; i++)
		if (ua->write(ua->ctx, uaddr + i * UKSZ, &buf[i], UKSZ))
			break;
	return i ? (int)i : -EFAULT;
}

/* D65: whether delivering k disarms it (a ONESHOT one is freed instead). */
static inline bool dispatches(bool rule, const struct kitem *k)
{
	return rule && (k->uk.req_flags & (KEVENT_REQ_DISPATCH | KEVENT_REQ_ONESHOT)) ==
		       KEVENT_REQ_DISPATCH;
}

/*
 * D43: a LEVEL kevent just dequeued is checked at the next dequeue (q->ctl
 * held).  ONESHOT ones never get here: they are freed at their delivery.
 * D65: nor do disarmed ones: MODIFY's re-check is the one that re-arms.
 */
static void level_note(struct kqueue *q, struct kitem *k)
{
	if (kq_rule(q, KR_LEVEL) && (k->uk.req_flags & KEVENT_REQ_LEVEL) && k->ops->level &&
	    !dispatches(kq_rule(q, KR_DISPATCH), k) && klist_empty(&k->lnode))
		klist_add_tail(&k->lnode, &q->level);
}

/*
 * D43, at the start of a dequeue (q->ctl held, before it decides to wait):
 * every LEVEL kevent dequeued before is polled by its origin, which fires it
 * again when its condition still holds.  Each is checked once; the dequeue
 * that takes it lists it again.  MODIFY may have cleared LEVEL meanwhile.
 * Ring bytes those fires write are told to the transport by the caller
 * once it dropped q->ctl (ring_flush, as kqueue_ctl does): returns true
 * when there may be some.
 */
static bool level_check(struct kqueue *q)
{
	struct klist pending, *pos, *tmp;
	const struct kqueue *outer = ring_in_ctl;

	if (klist_empty(&q->level))
		return false;
	ring_in_ctl = q;
	klist_init(&pending);
	klist_add_tail(&pending, &q->level);	/* take the whole list over */
	klist_del(&q->level);
	klist_for_each_safe(pos, tmp, &pending) {
		struct kitem *k = klist_entry(pos, struct kitem, lnode);

		klist_del(&k->lnode);
		if (k->uk.req_flags & KEVENT_REQ_LEVEL)
			k->ops->level(k);
	}
	ring_in_ctl = outer;
	return true;
}

/*
 * D10: probe the output before anything leaves the ready list.  Read and
 * write back the same bytes (through buf, len bytes of scratch), so an
 * unmapped and a read-only buffer both fault here, as the module's
 * fault-in does; the transport's probe does the same without the copies.
 */
static int probe_out(const struct kuaccess *ua, __u64 uaddr, void *buf, size_t len)
{
	if (ua->probe)
		return ua->probe(ua->ctx, uaddr, len) ? -EFAULT : 0;
	if (ua->read(ua->ctx, buf, uaddr, len) || ua->write(ua->ctx, uaddr, buf, len))
		return -EFAULT;
	return 0;
}

/*
 * A dequeue's view of the ready FIFO, read once per call (q->lock held):
 * the stores of the records could alias q's fields, so the compiler would
 * read them again for every kevent.  A queue that serves no type with a
 * deliver hook (below revision 3) pays one compare per kevent for them.
 */
struct take_cursor {
	struct kitem **slots;
	unsigned int mask, head;
	bool hooks;		/* a type q serves has a deliver hook (ktype.h) */
	bool level;		/* revision 2: LEVEL kevents are re-checked (D43) */
	bool dispatch;		/* revision 4: DISPATCH kevents are disarmed (D65) */
};

static struct take_cursor take_begin(const struct kqueue *q)
{
	struct take_cursor c = { q->rslots, q->rcap - 1, q->rhead,
				 q->deliver_hooks, kq_rule(q, KR_LEVEL),
				 kq_rule(q, KR_DISPATCH) };

	return c;
}

/*
 * The next ready kevent, its record written to *out (q->lock held, one is
 * left).  A type's deliver hook may make the record (D58: a POSIX timer
 * counts from its grid at this clock reading); D62: a user event's pending
 * result is cleared by being taken (the next trigger starts a new one).
 */
static inline struct kitem *take_one(struct kqueue *q, struct take_cursor *c,
				     struct ukevent *out)
{
	struct kitem *k;

	/* the FIFO is an array: fetch a kitem a few places ahead */
	__builtin_prefetch(c->slots[(c->head + 8) & c->mask], 1);
	while (!(k = c->slots[c->head++ & c->mask]))
		;	/* a hole REMOVE left: ready_num says a kitem follows */
	k->flags &= ~KITEM_READY;
	if (dispatches(c->dispatch, k))
		k->flags |= KITEM_DISARMED;	/* D65: until MODIFY re-arms it */
	*out = k->uk;
	out->ret_flags = k->rflags;
	out->ret_data[0] = k->rdata[0];
	out->ret_data[1] = k->rdata[1];
	if (c->hooks && k->kt->deliver && !(k->rflags & KEVENT_RET_BROKEN))
		k->kt->deliver(k, out);
	return k;
}

/*
 * D67: the counts of the n records just taken, read from their sources at
 * this delivery (q->ctl held, q->lock dropped: ktype.h data).  A BROKEN
 * record keeps its -errno.
 */
static void take_data(struct kitem *const *ks, struct ukevent *buf, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (ks[i]->kt->data && !(buf[i].ret_flags & KEVENT_RET_BROKEN))
			ks[i]->kt->data(ks[i], &buf[i]);
}

/*
 * O11: the counts of a parked GET_EVENTS taken on the core's worker, read
 * later on the caller's uid lane (kwaiter_counts): a count may wait on a
 * lock the client holds (a pipe's mutex, a TCP socket's lock), and the
 * worker serves every uid.  Each record keeps a pin of its source; one
 * whose type gives none (or with no memory for the list) is counted now.
 */
static void take_data_later(struct kwaiter *w, struct kitem *const *ks, struct ukevent *buf,
			    unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct kcount_pin *pin = NULL;

		if (!ks[i]->kt->data || (buf[i].ret_flags & KEVENT_RET_BROKEN))
			continue;
		/* the list only once a record pins: transient, not injectable */
		if (!w->pins && ks[i]->kt->data_pin)
			w->pins = malloc(n * sizeof(*w->pins));
		if (w->pins && ks[i]->kt->data_pin)
			pin = ks[i]->kt->data_pin(ks[i]);
		if (!pin) {
			ks[i]->kt->data(ks[i], &buf[i]);
			continue;
		}
		w->pins[w->npins].idx = i;
		w->pins[w->npins++].pin = pin;
	}
}

/* Pins not read (the call failed, or the handle goes): released, no count. */
static void kwaiter_drop_pins(struct kwaiter *w)
{
	for (unsigned int i = 0; i < w->npins; i++)
		if (w->pins[i].pin)
			w->pins[i].pin->put(w->pins[i].pin, NULL);
	free(w->pins);
	w->pins = NULL;
	w->npins = 0;
}

bool kwaiter_has_counts(const struct kwaiter *w)
{
	return w->npins > 0;
}

int kwaiter_counts(struct kwaiter *w, const struct kuaccess *ua)
{
	int ret = 0;

	for (unsigned int i = 0; i < w->npins && !ret; i++) {
		__u64 at = w->events + (__u64)w->pins[i].idx * UKSZ;
		struct kcount_pin *pin = w->pins[i].pin;
		struct ukevent uk;

		w->pins[i].pin = NULL;
		if (ua->read(ua->ctx, &uk, at, UKSZ)) {
			pin->put(pin, NULL);
			ret = -EFAULT;
			break;
		}
		pin->put(pin, &uk);
		if (ua->write(ua->ctx, at, &uk, UKSZ))
			ret = -EFAULT;
	}
	kwaiter_drop_pins(w);
	return ret;
}

/*
 * D69: k's id no longer names its file in the caller's table.  The record
 * says so instead of the old file's state (no bit, no count), and k leaves
 * its origin for good: a result that came since the take is dropped, and
 * its fires are ignored from now on, whatever MODIFY does (modify_one).
 */
static void take_stale(struct kqueue *q, struct kitem *k, struct ukevent *out, int err)
{
	out->ret_flags = KEVENT_RET_BROKEN | KEVENT_RET_DONE;
	out->ret_data[0] = 0;
	out->ret_data[1] = (__u32)err;
	pthread_mutex_lock(&q->lock);
	k->flags |= KITEM_STOPPED | KITEM_STALE;
	unready_locked(q, k);
	pthread_mutex_unlock(&q->lock);
}

/*
 * D69, then D67: each record just taken is checked against the caller's
 * file table before its count is read (a stale one is not counted); a
 * parked call's counts are read later on its uid lane (O11, later).
 * Outside q->lock (q->ctl held): the check may cost a system call.
 */
static void take_deliver(struct kqueue *q, struct kitem *const *ks, struct ukevent *buf,
			 unsigned int n, const struct kcaller *caller, struct kwaiter *later)
{
	unsigned int i;
	int err;

	if (kq_rule(q, KR_FD_CHECK))
		for (i = 0; i < n; i++)
			if (ks[i]->kt->fd_check && !(buf[i].ret_flags & KEVENT_RET_BROKEN) &&
			    (err = ks[i]->kt->fd_check(ks[i], caller)) < 0)
				take_stale(q, ks[i], &buf[i], err);
	if (kq_rule(q, KR_DATA) && later)
		take_data_later(later, ks, buf, n);
	else if (kq_rule(q, KR_DATA))
		take_data(ks, buf, n);
}

/* n kevents were taken through c (q->lock held). */
static void take_end(struct kqueue *q, const struct take_cursor *c, unsigned int n)
{
	q->rhead = c->head;
	q->ready_num -= n;
	atomic_fetch_sub(&q->core->n_ready, n);
}

/*
 * Takes up to max_nr ready kevents in FIFO order and copies them to uaddr.
 * later: a parked call completed on the core's worker, whose counts are
 * read on its uid lane (O11); NULL: read now.
 * ready: the ready count the caller read under the q->ctl it still holds;
 * only a dequeue (q->ctl held) takes kevents off the FIFO, so at least
 * that many are still there, the first of them in the same order, and the
 * count costs no lock section of its own.
 */
static int take_events(struct kqueue *q, unsigned int max_nr, __u64 uaddr,
		       const struct kuaccess *ua, unsigned int ready,
		       const struct kcaller *caller, struct kwaiter *later)
{
	struct ukevent small[TAKE_ON_STACK], *buf = small;
	struct kitem *ksmall[TAKE_ON_STACK], **ks = NULL;
	bool data = kq_rule(q, KR_DATA) || kq_rule(q, KR_FD_CHECK);
	struct klist done, *pos, *tmp;
	struct take_cursor c;
	unsigned int n, i;
	int ret;

	n = ready < max_nr ? ready : max_nr;
	if (!n)
		return 0;
	/* D67, D69: which kitem each record is, for its count and check; one allocation */
	if (n > TAKE_ON_STACK &&
	    !(buf = kcore_alloc_raw(q->core, n * (UKSZ + (data ? sizeof(*ks) : 0)))))
		return -ENOMEM;
	if (data)
		ks = buf == small ? ksmall : (struct kitem **)(buf + n);
	if (probe_out(ua, uaddr, buf, n * UKSZ)) {
		if (buf != small)
			free(buf);
		return -EFAULT;
	}
	klist_init(&done);
	pthread_mutex_lock(&q->lock);
	c = take_begin(q);
	for (i = 0; i < n; i++) {
		struct kitem *k = take_one(q, &c, &buf[i]);

		if (ks)
			ks[i] = k;
		if (k->uk.req_flags & KEVENT_REQ_ONESHOT)
			klist_add_tail(&k->rnode, &done);
		else if (c.level)
			level_note(q, k);
	}
	take_end(q, &c, n);
	pthread_mutex_unlock(&q->lock);
	if (ks)
		take_deliver(q, ks, buf, n, caller, later);
	ret = write_out(ua, uaddr, buf, n);
	if (ret < 0 && later)
		kwaiter_drop_pins(later);	/* D10: nothing delivered */
	/* ONESHOT: freed after the copy (lost with it on a late fault, D10). */
	klist_for_each_safe(pos, tmp, &done) {
		struct kitem *k = klist_entry(pos, struct kitem, rnode);

		klist_del(&k->rnode);
		kitem_destroy(q, k);
	}
	if (buf != small)
		free(buf);
	return ret;
}

/* ---- revision 2: the kevent_uring (D41, D53-D55), q->ctl held ---- */

static void serve_waiters_locked(struct kqueue *q, struct klist *done);
static void complete_done(struct klist *done);
static void inplace_complete(void *ctx, int result);

static unsigned int uring_free(const struct kqueue *q)
{
	return q->uring ? q->unum - q->used : 0;
}

/* One aligned 32-bit store of a ring word (ring_kidx at 0, ring_over at 4). */
static int uring_word(struct kqueue *q, const struct kuaccess *ua, unsigned int off, __u32 v)
{
	return ua->write(ua->ctx, q->uring + off, &v, sizeof(v));
}

/* Slots [first, first + n) of the ring from buf; wraps at most once. */
static int uring_slots(struct kqueue *q, const struct kuaccess *ua, unsigned int first,
		       const struct ukevent *buf, unsigned int n)
{
	unsigned int a = n < q->unum - first ? n : q->unum - first;
	__u64 base = q->uring + KEVENT_URING_HDR_SIZE;

	if (ua->write(ua->ctx, base + (__u64)first * UKSZ, buf, a * UKSZ))
		return -EFAULT;
	if (n > a && ua->write(ua->ctx, base, buf + a, (n - a) * UKSZ))
		return -EFAULT;
	return 0;
}

/*
 * D41: put the kevents of a faulted copy back at the head of the ready
 * list, in their order.  One that re-fired meanwhile is on the list
 * already, with the newer result: it stays where it is.  A POSIX timer's
 * count goes back either way (a timer fires without q->ctl, so it can
 * re-fire while the copy runs): the faulted WAIT delivered nothing (D58).
 * A user event cannot: its trigger is a CTL, and q->ctl is held.  A type
 * that merges (D68) adds the result taken (out) to the newer one.
 */
static void uring_requeue(struct kqueue *q, struct kitem **ks, const struct ukevent *out,
			  unsigned int n)
{
	unsigned int i, back = 0;

	pthread_mutex_lock(&q->lock);
	for (i = n; i-- > 0;) {
		struct kitem *k = ks[i];

		if (k->kt->undeliver)
			k->kt->undeliver(k);	/* D58: a POSIX timer's count goes back */
		if (k->kt->merge && (k->flags & (KITEM_READY | KITEM_HELD))) {
			struct korigin_result taken = {
				0, { out[i].ret_data[0], out[i].ret_data[1] }
			};

			if (k->kt->merge(k, &taken)) {
				k->rdata[0] = taken.ret_data[0];
				k->rdata[1] = taken.ret_data[1];
			}
		}
		/* D65: not delivered, so not disarmed; a result it held is newer */
		k->flags &= ~(KITEM_DISARMED | KITEM_HELD);
		if (k->flags & KITEM_READY)
			continue;
		if (q->rtail - q->rhead == q->rcap)
			rslots_compact(q, q->rslots, q->rcap);
		k->rpos = --q->rhead;
		q->rslots[k->rpos & (q->rcap - 1)] = k;
		k->flags |= KITEM_READY;
		back++;
	}
	q->ready_num += back;
	atomic_fetch_add(&q->core->n_ready, back);
	pthread_mutex_unlock(&q->lock);
}

/*
 * D55: dequeue up to min(num, free, ready) kevents, write their slots and
 * then ring_kidx; ONESHOT ones are freed only once ring_kidx is stored
 * (D41).  Returns the count, or -EFAULT with everything requeued.
 */
static int uring_copy(struct kqueue *q, unsigned int num, const struct kuaccess *ua,
		      const struct kcaller *caller)
{
	struct ukevent small[TAKE_ON_STACK], *buf = small;
	struct kitem *ksmall[TAKE_ON_STACK], **ks = ksmall;
	struct take_cursor c;
	unsigned int n = uring_free(q), i, kidx;
	int ret;

	if (num < n)
		n = num;
	pthread_mutex_lock(&q->lock);
	if (q->ready_num < n)
		n = q->ready_num;
	pthread_mutex_unlock(&q->lock);
	if (!n)
		return 0;
	if (n > TAKE_ON_STACK) {
		buf = kcore_alloc_raw(q->core, n * UKSZ);
		ks = kcore_alloc_raw(q->core, n * sizeof(*ks));
		if (!buf || !ks) {
			free(buf);
			free(ks);
			return -ENOMEM;
		}
	}
	pthread_mutex_lock(&q->lock);
	c = take_begin(q);
	for (i = 0; i < n; i++)
		ks[i] = take_one(q, &c, &buf[i]);
	take_end(q, &c, n);
	pthread_mutex_unlock(&q->lock);
	take_deliver(q, ks, buf, n, caller, NULL);	/* D67, D69: a faulted WAIT does it again */
	kidx = (q->kidx + n) % q->unum;
	/* slots first, then the index that publishes them (D53) */
	if (uring_slots(q, ua, q->kidx, buf, n) || uring_word(q, ua, 0, kidx)) {
		uring_requeue(q, ks, buf, n);
		q->ufaults++;
		ret = -EFAULT;
	} else {
		q->kidx = kidx;
		q->used += n;
		for (i = 0; i < n; i++) {
			if (ks[i]->uk.req_flags & KEVENT_REQ_ONESHOT)
				kitem_destroy(q, ks[i]);
			else
				level_note(q, ks[i]);
		}
		ret = (int)n;
	}
	if (buf != small) {
		free(buf);
		free(ks);
	}
	return ret;
}

int kwaiter_wait_copy(struct kwaiter *w, const struct kuaccess *ua)
{
	struct kqueue *q = w->q;
	int n;

	pthread_mutex_lock(&q->ctl);
	n = uring_copy(q, w->max_nr, ua, &w->caller);
	pthread_mutex_unlock(&q->ctl);
	return n;
}

int kqueue_ring_init(struct kqueue *q, const struct kevent_ring_init *arg,
		     const struct kuaccess *ua)
{
	size_t len = KEVENT_URING_SIZE(arg->num);
	unsigned char *probe = NULL;
	int ret = 0;

	pthread_mutex_lock(&q->ctl);
	if (q->uring_set) {
		ret = -EBUSY;
		goto out;
	}
	if (arg->ring) {
		/* D41: the whole ring writable before it is ours (read, write back) */
		probe = malloc(len);	/* transient: not an injectable allocation */
		if (!probe) {
			ret = -ENOMEM;
			goto out;
		}
		if (ua->read(ua->ctx, probe, arg->ring, len) ||
		    ua->write(ua->ctx, arg->ring, probe, len)) {
			ret = -EFAULT;
			goto out;
		}
		q->uring = arg->ring;
		q->unum = arg->num;
		q->kidx = q->uidx = q->used = q->over = 0;
		if (uring_word(q, ua, 0, 0) || uring_word(q, ua, 4, 0)) {
			q->uring = 0;
			q->unum = 0;
			ret = -EFAULT;
			goto out;
		}
	}
	q->uring_set = true;
	q->ctl_seen = true;	/* O2: SET_ABI is -EBUSY after it */
out:
	pthread_mutex_unlock(&q->ctl);
	free(probe);
	return ret;
}

/* D54: the slots commit(new_uidx, over) frees, or -errno. */
static int commit_count(const struct kqueue *q, __u32 nu, __u32 over, bool *wrap)
{
	unsigned int f;

	*wrap = false;
	if (nu >= q->unum)
		return -EINVAL;
	if (over == q->over - 1 && over != q->over)
		return nu < q->uidx ? 0 : -EOVERFLOW;
	if (over != q->over)
		return -EOVERFLOW;
	if (nu > q->uidx)
		f = nu - q->uidx;
	else if (nu < q->uidx)
		f = q->unum - q->uidx + nu;
	else
		f = q->used == q->unum ? q->unum : 0;
	if (f > q->used)
		return -EINVAL;
	*wrap = f && q->uidx + f >= q->unum;
	return (int)f;
}

int kqueue_commit(struct kqueue *q, const struct kevent_commit_arg *arg,
		  const struct kuaccess *ua)
{
	struct klist done;
	bool wrap;
	int f;

	klist_init(&done);
	pthread_mutex_lock(&q->ctl);
	if (!q->uring) {
		pthread_mutex_unlock(&q->ctl);
		return 0;
	}
	f = commit_count(q, arg->new_uidx, arg->over, &wrap);
	/* the ring_over store first: a fault frees nothing (D54) */
	if (f > 0 && wrap && uring_word(q, ua, 4, q->over + 1))
		f = -EFAULT;
	if (f > 0) {
		q->over += wrap;
		q->uidx = (q->uidx + (unsigned int)f) % q->unum;
		q->used -= (unsigned int)f;
		atomic_store(&q->due, true);	/* a WAIT on a full ring (D55) */
		serve_waiters_locked(q, &done);
	}
	pthread_mutex_unlock(&q->ctl);
	complete_done(&done);
	return f;
}

/* ---- waiters ---- */

static void wait_min_update(struct kqueue *q)
{
	unsigned int m = UINT_MAX;
	struct klist *pos, *tmp;

	klist_for_each_safe(pos, tmp, &q->waiters) {
		struct kwaiter *w = klist_entry(pos, struct kwaiter, qnode);

		if (w->min_nr < m)
			m = w->min_nr;
	}
	pthread_mutex_lock(&q->lock);
	q->wait_min = m;
	pthread_mutex_unlock(&q->lock);
}

static unsigned int ready_now(struct kqueue *q)
{
	unsigned int n;

	pthread_mutex_lock(&q->lock);
	n = q->ready_num;
	pthread_mutex_unlock(&q->lock);
	return n;
}

/*
 * D16: in arrival order, every waiter that is due (min_nr met, expired,
 * interrupted, or the queue going away) takes its events and moves to
 * *done; complete_done() then reports them with no lock held.
 */
static void serve_waiters_locked(struct kqueue *q, struct klist *done)
{
	struct klist *pos, *tmp;
	/* a locked exchange only when set: every GET_EVENTS passes here */
	bool due = atomic_load_explicit(&q->due, memory_order_relaxed) &&
		   atomic_exchange(&q->due, false);
	unsigned int wait_min;

	if (klist_empty(&q->waiters))
		return;
	pthread_mutex_lock(&q->lock);
	wait_min = q->wait_min;
	pthread_mutex_unlock(&q->lock);
	/* Cheap exit: a GET_EVENTS with 10,000 parked must not walk them all. */
	if (!q->dead && !due && ready_now(q) < wait_min)
		return;
	klist_for_each_safe(pos, tmp, &q->waiters) {
		struct kwaiter *w = klist_entry(pos, struct kwaiter, qnode);
		unsigned int ready = ready_now(q);

		/* nothing left to hand out and nobody expired: the rest wait */
		if (!q->dead && !due && !ready)
			break;
		unsigned int flags = atomic_load(&w->flags);

		if (!q->dead && !flags &&
		    (w->is_wait ? !ready || !uring_free(q) : ready < w->min_nr))
			continue;
		klist_del(&w->qnode);
		w->parked = false;
		kcore_heap_del(q->core, w);
		if ((flags & KWAIT_INTERRUPTED) && (q->abi_flags & KEVENT_ABI_EINTR))
			w->result = -EINTR;	/* D47: nothing dequeued */
		else if (w->is_wait && w->req.complete != inplace_complete)
			w->result = KDISP_WAIT_DUE;	/* the transport copies (kcore.h) */
		else if (w->is_wait)
			w->result = uring_copy(q, w->max_nr, w->req.ua, &w->caller);
		else
			w->result = take_events(q, w->max_nr, w->events, w->req.ua, ready,
						&w->caller,
						w->req.complete != inplace_complete ? w : NULL);
		kuid_uncharge(w->uid, KEVENT_LIMIT_PARKED);
		klist_add_tail(&w->done_node, done);
	}
	wait_min_update(q);
}

static void complete_done(struct klist *done)
{
	struct klist *pos, *tmp;

	klist_for_each_safe(pos, tmp, done) {
		struct kwaiter *w = klist_entry(pos, struct kwaiter, done_node);

		klist_del(&w->done_node);
		w->req.complete(w->req.ctx, w->result);
		kwaiter_put(w);
	}
}

void kqueue_service(struct kqueue *q)
{
	struct klist done;

	klist_init(&done);
	pthread_mutex_lock(&q->ctl);
	if (!q->dead)
		serve_waiters_locked(q, &done);
	pthread_mutex_unlock(&q->ctl);
	complete_done(&done);
}

void kwaiter_interrupt(struct kwaiter *w)
{
	atomic_fetch_or(&w->flags, KWAIT_INTERRUPTED);
	atomic_store(&w->q->due, true);
	kcore_schedule(w->q->core, w->q);
}

void kwaiter_put(struct kwaiter *w)
{
	struct kqueue *q = w->q;

	if (atomic_fetch_sub(&w->refs, 1) != 1)
		return;
	atomic_fetch_sub(&q->core->n_waiters, 1);
	kwaiter_drop_pins(w);
	free(w);
	kqueue_put(q);
}

static __u64 deadline_of(const struct kcore *core, __u64 timeout_ns)
{
	__u64 now;

	if (timeout_ns == KEVENT_TIMEOUT_INFINITE)
		return KEVENT_TIMEOUT_INFINITE;
	now = kcore_now(core);
	return now + timeout_ns < now ? KEVENT_TIMEOUT_INFINITE : now + timeout_ns;
}

static int waiter_new(struct kqueue *q, const struct kevent_get_events_arg *arg,
		      __u64 rt_deadline, const struct kcaller *caller,
		      const struct kwait_req *wr, struct kwaiter **ret)
{
	struct kcore *core = q->core;
	struct kuid *u = kcore_uid_get(core, caller->uid);
	struct kwaiter *w;

	if (!u)
		return -ENOMEM;
	if (kuid_charge(core, u, KEVENT_LIMIT_PARKED))
		return -EAGAIN;
	w = kcore_alloc(core, sizeof(*w));
	if (!w) {
		kuid_uncharge(u, KEVENT_LIMIT_PARKED);
		return -ENOMEM;
	}
	kqueue_get(q);
	w->q = q;
	w->uid = u;
	w->heap_idx = KHEAP_NONE;
	w->deadline = deadline_of(core, arg->timeout_ns);
	w->rt_deadline = rt_deadline;	/* kcore_heap_add() re-bases deadline on it */
	w->min_nr = arg->min_nr;
	w->max_nr = arg->max_nr;
	w->events = arg->events;
	w->req = *wr;
	w->caller = *caller;	/* D69: a parked call is checked for its caller */
	atomic_init(&w->refs, 2);
	klist_init(&w->qnode);
	klist_init(&w->done_node);
	atomic_fetch_add(&core->n_waiters, 1);
	*ret = w;
	return 0;
}

/* Drops a waiter that never became visible. */
static void waiter_abandon(struct kwaiter *w)
{
	kuid_uncharge(w->uid, KEVENT_LIMIT_PARKED);
	atomic_store(&w->refs, 1);
	kwaiter_put(w);
}

/*
 * Parks w unless min_nr is met meanwhile: 1 parked, 0 not needed (w
 * abandoned), -errno.
 */
static int park(struct kqueue *q, struct kwaiter *w)
{
	int err;

	bool free_slot = !w->is_wait || uring_free(q);	/* D55 waits for space too */

	pthread_mutex_lock(&q->lock);
	if (q->ready_num >= w->min_nr && free_slot) {
		pthread_mutex_unlock(&q->lock);
		waiter_abandon(w);
		return 0;
	}
	if (w->min_nr < q->wait_min)
		q->wait_min = w->min_nr;
	pthread_mutex_unlock(&q->lock);
	klist_add_tail(&w->qnode, &q->waiters);
	w->parked = true;
	if (w->deadline == KEVENT_TIMEOUT_INFINITE)
		return 1;
	err = kcore_heap_add(q->core, w);
	if (err) {
		klist_del(&w->qnode);
		wait_min_update(q);
		waiter_abandon(w);
		return err;
	}
	return 1;
}

struct inplace {
	pthread_mutex_t m;
	pthread_cond_t c;
	bool done;
	int result;
};

static void inplace_complete(void *ctx, int result)
{
	struct inplace *ip = ctx;

	pthread_mutex_lock(&ip->m);
	ip->done = true;
	ip->result = result;
	pthread_cond_signal(&ip->c);
	pthread_mutex_unlock(&ip->m);
}

static int inplace_wait(struct inplace *ip, struct kwaiter *w)
{
	pthread_mutex_lock(&ip->m);
	while (!ip->done)
		pthread_cond_wait(&ip->c, &ip->m);
	pthread_mutex_unlock(&ip->m);
	kwaiter_put(w);
	pthread_cond_destroy(&ip->c);
	pthread_mutex_destroy(&ip->m);
	return ip->result;
}

static bool must_not_wait(const struct kqueue *q, const struct kevent_get_events_arg *arg,
			  const struct kwait_req *wr)
{
	return (arg->ioc_flags & KEVENT_GET_NONBLOCK) || !arg->min_nr ||
	       !arg->timeout_ns || (!wr && q->core->cfg.deterministic);
}

/* 1: parked (*ret set), 0: min_nr met meanwhile, -errno (q->ctl held). */
static int park_new(struct kqueue *q, const struct kevent_get_events_arg *arg,
		    __u64 rt_deadline, bool is_wait, const struct kcaller *caller,
		    const struct kwait_req *wr, struct kwaiter **ret)
{
	struct kwaiter *w = NULL;
	int err = waiter_new(q, arg, rt_deadline, caller, wr, &w);

	if (err)
		return err;
	w->is_wait = is_wait;
	err = park(q, w);
	if (err == 1)
		*ret = w;
	return err;
}

/*
 * No wait request, normal mode: park an internal waiter and sleep on it
 * with q->ctl dropped.  1: done, *result set and q->ctl released (done
 * reported); 0: no need to wait after all; -errno.
 */
static int wait_in_place(struct kqueue *q, const struct kevent_get_events_arg *arg,
			 __u64 rt_deadline, bool is_wait, const struct kcaller *caller,
			 const struct kuaccess *ua, struct klist *done, int *result)
{
	struct inplace ip = { .done = false };
	struct kwait_req wr = { ua, inplace_complete, &ip };
	struct kwaiter *w = NULL;
	int ret;

	pthread_mutex_init(&ip.m, NULL);
	pthread_cond_init(&ip.c, NULL);
	ret = park_new(q, arg, rt_deadline, is_wait, caller, &wr, &w);
	if (ret == 1) {
		pthread_mutex_unlock(&q->ctl);
		ring_flush(q);	/* what level_check() wrote (a blocking call: cost is no matter) */
		complete_done(done);
		*result = inplace_wait(&ip, w);
		return 1;
	}
	pthread_cond_destroy(&ip.c);
	pthread_mutex_destroy(&ip.m);
	return ret;
}

int kqueue_get_events(struct kqueue *q, const struct kevent_get_events_arg *arg,
		      __u64 rt_deadline, const struct kcaller *caller,
		      const struct kuaccess *ua, const struct kwait_req *wr,
		      struct kwaiter **waiter)
{
	struct klist done;
	int ret = 0, result;
	unsigned int ready;
	bool latched, lvl = false;

	klist_init(&done);
	pthread_mutex_lock(&q->ctl);
	serve_waiters_locked(q, &done);	/* D16: older waiters first */
	if (!arg->max_nr)
		goto out;
	lvl = level_check(q);
	latched = latch_take(q, &ready);	/* D50: any GET_EVENTS clears a latched wake */
	if (!must_not_wait(q, arg, wr) && !latched && ready < arg->min_nr) {
		if (!wr) {
			ret = wait_in_place(q, arg, rt_deadline, false, caller, ua, &done,
					    &result);
			if (ret == 1)
				return result;
		} else {
			ret = park_new(q, arg, rt_deadline, false, caller, wr, waiter);
			if (ret == 1)
				ret = KDISP_PARKED;
		}
		if (ret)
			goto out;
		ready = ready_now(q);	/* min_nr was met meanwhile */
	}
	ret = take_events(q, arg->max_nr, arg->events, ua, ready, caller, NULL);
out:
	pthread_mutex_unlock(&q->ctl);
	if (lvl)
		ring_flush(q);
	complete_done(&done);
	return ret;
}

/* D55: old_uidx, then wait for a ready kevent and a free slot, then copy. */
int kqueue_wait(struct kqueue *q, const struct kwait_arg *arg, const struct kcaller *caller,
		const struct kuaccess *ua, const struct kwait_req *wr, struct kwaiter **waiter)
{
	struct kevent_get_events_arg g = {
		.min_nr = 1, .max_nr = arg->num, .timeout_ns = arg->timeout_ns,
	};
	struct klist done;
	int ret = 0, result;
	unsigned int ready;
	bool nowait, lvl = false;

	klist_init(&done);
	pthread_mutex_lock(&q->ctl);
	serve_waiters_locked(q, &done);	/* D16: older waiters first */
	if (!q->uring || arg->old_uidx >= q->unum) {
		ret = -EINVAL;
		goto out;
	}
	if (!arg->num || arg->old_uidx != q->uidx)
		goto out;
	if (g.max_nr > q->unum)
		g.max_nr = q->unum;
	lvl = level_check(q);
	nowait = arg->nonblock || !arg->timeout_ns || (!wr && q->core->cfg.deterministic);
	if (!latch_take(q, &ready) && !nowait && !(ready && uring_free(q))) {
		if (!wr) {
			ret = wait_in_place(q, &g, arg->rt_deadline, true, caller, ua, &done,
					    &result);
			if (ret == 1)
				return result;
		} else {
			ret = park_new(q, &g, arg->rt_deadline, true, caller, wr, waiter);
			if (ret == 1)
				ret = KDISP_PARKED;
		}
		if (ret)
			goto out;
	}
	ret = uring_copy(q, g.max_nr, ua, caller);
out:
	pthread_mutex_unlock(&q->ctl);
	if (lvl)
		ring_flush(q);
	complete_done(&done);
	return ret;
}

int kqueue_ctl(struct kqueue *q, const struct kevent_ctl_ext_arg *arg,
	       const struct kcaller *caller, const struct kuaccess *ua)
{
	struct klist done;
	int ret;

	klist_init(&done);
	pthread_mutex_lock(&q->ctl);
	ring_in_ctl = q;
	ret = ctl_locked(q, arg, caller, ua);
	serve_waiters_locked(q, &done);
	ring_in_ctl = NULL;
	pthread_mutex_unlock(&q->ctl);
	ring_flush(q);
	complete_done(&done);
	return ret;
}

int kqueue_fault(struct kqueue *q, const struct kevent_fault *arg)
{
	pthread_mutex_lock(&q->ctl);
	q->fault_add = arg->kind == KEVENT_FAULT_ADD_ENOMEM ? (__u64)arg->skip + 1 : 0;
	pthread_mutex_unlock(&q->ctl);
	return 0;
}

int kqueue_set_abi(struct kqueue *q, const struct kevent_set_abi *arg)
{
	int ret = 0;

	pthread_mutex_lock(&q->ctl);
	if (q->ctl_seen)
		ret = -EBUSY;
	else {
		q->abi_flags = arg->flags;
		q->revision = arg->revision;
		__atomic_store_n(&q->rules, kr_rules_of(arg->revision), __ATOMIC_RELAXED);
		q->deliver_hooks = ktypes_deliver(q->rules);
	}
	pthread_mutex_unlock(&q->ctl);
	return ret;
}

/*
 * INFO queue_parked: waiters on q's list.  A waiter joins the list under
 * q->ctl once an event that makes it due will be handed to it, so a test
 * that sees it counted knows the call is parked, not merely on its way.
 */
static unsigned int parked_now(struct kqueue *q)
{
	struct klist *pos, *tmp;
	unsigned int n = 0;

	pthread_mutex_lock(&q->ctl);
	klist_for_each_safe(pos, tmp, &q->waiters)
		n++;
	pthread_mutex_unlock(&q->ctl);
	return n;
}

void kqueue_fill_info(struct kqueue *q, const struct kcaller *caller,
		      struct kevent_info *info)
{
	struct kcore *core = q->core;
	struct kuid *u = kcore_uid_get(core, caller->uid);
	unsigned int i;

	/* D64: a type and its feature bit on the queues whose rules serve it */
	for (i = 0; i < KEVENT_MAX; i++)
		if (type_ops(q, i)) {
			info->supported_types |= 1u << i;
			info->features |= ktype_of(i)->feature;
		}
	for (i = 0; i < KEVENT_LIMIT_NR; i++) {
		info->limits[i].cap = core->cfg.caps[i];
		info->limits[i].used = u ? atomic_load(&u->used[i]) : 0;
	}
	if (u)
		info->limits[KEVENT_LIMIT_EXPIRIES].used = kuid_expiry_rate(core, u);
	info->queue_kevents = atomic_load(&q->kevent_num);
	info->queue_ready = ready_now(q);
	info->live_queues = atomic_load(&core->n_queues);
	info->live_kevents = atomic_load(&core->n_kevents);
	info->live_waiters = atomic_load(&core->n_waiters);
	info->queue_parked = parked_now(q);
	info->abi_lowest = KCORE_REV_LOWEST;
	pthread_mutex_lock(&q->ctl);
	info->queue_revision = q->revision;
	info->queue_abi_flags = q->abi_flags;
	info->ring_num = q->unum;
	info->ring_kidx = q->kidx;
	info->ring_uidx = q->uidx;
	info->ring_over = q->over;
	info->ring_faults = q->ufaults;
	pthread_mutex_unlock(&q->ctl);
}

void kqueue_release(struct kqueue *q)
{
	struct klist done;
	unsigned int b;

	klist_init(&done);
	pthread_mutex_lock(&q->ctl);
	q->dead = true;
	serve_waiters_locked(q, &done);
	for (b = 0; b < q->nbuckets; b++)
		while (!klist_empty(&q->table[b]))
			kitem_destroy(q, klist_entry(q->table[b].next, struct kitem, tnode));
	pthread_mutex_lock(&q->lock);
	q->notify = NULL;
	pthread_mutex_unlock(&q->lock);
	pthread_mutex_unlock(&q->ctl);
	complete_done(&done);
	kqueue_put(q);
}
