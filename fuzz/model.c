// SPDX-License-Identifier: GPL-2.0
/*
 * The shadow model (model.h).  Each function restates one rule of
 * docs/abi.md or kcore.h's decisions block; the rule is named beside it.
 * Single-threaded: the harness runs the core in deterministic mode, where
 * nothing happens between two calls.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"
#include "test-origin.h"

#define UKSZ		sizeof(struct ukevent)
#define NO_DEADLINE	KEVENT_TIMEOUT_INFINITE

/* ---- revisions: each a row of named rules ---- */

/*
 * The revisions the modelled core serves (A12).  Not the header's
 * KEVENT_ABI_REVISION: a header that names a later revision must not change
 * what the model expects until the model learns that revision's rules.
 */
#define M_REV_LOWEST	1
#define M_REV_HIGHEST	4

#define M_REV2	(M_RULE(MR_RING) | M_RULE(MR_ALWAYS_QUEUE) | M_RULE(MR_LEVEL) | \
		 M_RULE(MR_EINTR) | M_RULE(MR_TIMESPEC) | M_RULE(MR_READY) | \
		 M_RULE(MR_ENOSYS))					/* D40-D57 */
#define M_REV3	(M_RULE(MR_POSIX_TIMER) | M_RULE(MR_EXT) | M_RULE(MR_QUERY) | \
		 M_RULE(MR_USER) | M_RULE(MR_TYPE_KEY))			/* D58-D64 */
#define M_REV4	(M_RULE(MR_DISPATCH) | M_RULE(MR_DATA) | M_RULE(MR_INODE_NOTES) | \
		 M_RULE(MR_FD_CHECK))	/* D65-D69 */

static const unsigned int m_rows[M_REV_HIGHEST + 1] = {
	[1] = 0,			/* take13 (D40) */
	[2] = M_REV2,
	[3] = M_REV2 | M_REV3,
	[4] = M_REV2 | M_REV3 | M_REV4,
};

bool m_rev_served(unsigned int rev)
{
	return rev >= M_REV_LOWEST && rev <= M_REV_HIGHEST;
}

unsigned int m_rules_of(unsigned int rev)
{
	return m_rev_served(rev) ? m_rows[rev] : 0;
}

static bool m_rule(const struct mq *q, enum m_rule r)
{
	return (q->rules >> r) & 1u;
}

/* ---- lists ---- */

static void ml_init(struct mlink *h)
{
	h->next = h->prev = h;
}

static void ml_add_tail(struct mlink *n, struct mlink *h)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

static void ml_del(struct mlink *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	ml_init(n);
}

/* ---- configuration ---- */

static __u32 norm_max(unsigned int v)
{
	return (!v || v >= KEVENT_MAX_EVENTS) ? KEVENT_MAX_EVENTS - 1 : v;
}

void m_init(struct model *m, const unsigned char *hdr, __u64 base)
{
	memset(m, 0, sizeof(*m));
	m->mask = hdr[KF_HDR_ORIGINS] & ((1u << KEVENT_MAX) - 1);
	m->caps[KEVENT_LIMIT_KEVENTS] = hdr[KF_HDR_CAP_KEVENTS];
	m->caps[KEVENT_LIMIT_TIMERS] = hdr[KF_HDR_CAP_TIMERS];
	m->caps[KEVENT_LIMIT_FD_KEVENTS] = hdr[KF_HDR_CAP_FD];
	m->caps[KEVENT_LIMIT_MARKS] = hdr[KF_HDR_CAP_MARKS];
	m->caps[KEVENT_LIMIT_PARKED] = hdr[KF_HDR_CAP_PARKED];
	m->caps[KEVENT_LIMIT_RUNNING] = hdr[KF_HDR_CAP_PARKED];
	m->caps[KEVENT_LIMIT_QUEUES] = hdr[KF_HDR_CAP_QUEUES];
	m->max_ctl = norm_max(kf_path_max[hdr[KF_HDR_PATH] & 0xf]);
	m->max_get = norm_max(kf_path_max[hdr[KF_HDR_PATH] >> 4]);
	m->base = base;
	m->dirty_lo = KF_ARENA;
	ml_init(&m->objs);
}

/* ---- per-uid charges (D18) ---- */

static bool charge(struct model *m, unsigned int uid, int res)
{
	if (m->caps[res] && m->used[uid][res] >= m->caps[res])
		return false;
	m->used[uid][res]++;
	return true;
}

static void uncharge(struct model *m, unsigned int uid, int res)
{
	m->used[uid][res]--;
}

/* kcore_uid_charge(): a transport's own use of a per-uid resource. */
int m_uid_charge(struct model *m, unsigned int uid, unsigned int limit)
{
	if (limit >= KEVENT_LIMIT_NR || limit == KEVENT_LIMIT_EXPIRIES)
		return -EINVAL;
	if (!charge(m, uid, (int)limit))
		return -ENOSPC;
	m->ours[uid][limit]++;
	return 0;
}

void m_uid_uncharge(struct model *m, unsigned int uid, unsigned int limit)
{
	uncharge(m, uid, (int)limit);
	m->ours[uid][limit]--;
}

/* D18: which extra resource a kevent of this type is charged. */
static int type_res(__u32 type)
{
	switch (type) {
	case KEVENT_TIMER:
	case KEVENT_POSIX_TIMER:	/* D58 */
		return KEVENT_LIMIT_TIMERS;
	case KEVENT_POLL:
	case KEVENT_SOCKET:
		return KEVENT_LIMIT_FD_KEVENTS;
	case KEVENT_INODE:
		return KEVENT_LIMIT_MARKS;
	default:
		return -1;
	}
}

/* ---- simulated user memory, as test-uaccess.c defines it ---- */

static bool span_ok(const struct model *m, __u64 uaddr, size_t len, __u64 lo, __u64 hi)
{
	if (uaddr < m->base || uaddr - m->base > KF_ARENA ||
	    len > KF_ARENA - (uaddr - m->base))
		return false;
	return !(lo < hi && uaddr < hi && uaddr + len > lo);
}

static void mark_dirty(struct model *m, size_t off, size_t len)
{
	if (off < m->dirty_lo)
		m->dirty_lo = off;
	if (off + len > m->dirty_hi)
		m->dirty_hi = off + len;
}

void m_poke(struct model *m, size_t off, const void *src, size_t len)
{
	memcpy(m->arena + off, src, len);
	mark_dirty(m, off, len);
}

static bool m_read(const struct model *m, void *dst, __u64 uaddr, size_t len)
{
	if (!span_ok(m, uaddr, len, m->rlo, m->rhi))
		return false;
	memcpy(dst, m->arena + (uaddr - m->base), len);
	return true;
}

bool m_late_fault(const struct model *m, unsigned long nth, __u64 uaddr, size_t len)
{
	return m->llo < m->lhi && nth >= m->late_after && uaddr < m->lhi && uaddr + len > m->llo;
}

static bool m_write(struct model *m, __u64 uaddr, const void *src, size_t len)
{
	unsigned long nth = m->nwrites++;

	if (m_late_fault(m, nth, uaddr, len) || !span_ok(m, uaddr, len, m->wlo, m->whi))
		return false;
	m_poke(m, (size_t)(uaddr - m->base), src, len);
	return true;
}

/* ---- queues and kevents ---- */

int m_open(struct model *m, int slot, unsigned int uid, unsigned char *ring, bool notify)
{
	struct mq *q;

	if (!charge(m, uid, KEVENT_LIMIT_QUEUES))
		return -EMFILE;		/* D18 */
	q = calloc(1, sizeof(*q));
	if (!q)
		abort();
	q->slot = slot;
	q->owner = uid;
	q->revision = 1;
	q->rules = m_rules_of(1);
	q->ring = ring;
	q->notify = notify;
	ml_init(&q->reg);
	ml_init(&q->rdy);
	ml_add_tail(&q->obj, &m->objs);
	m->slot[slot] = q;
	return 0;
}

static int enqueue(struct model *m, struct mq *q, struct mkev *k, __u32 rflags,
		   __u32 d0, __u32 d1);
static void m3_deliver(struct mkev *k, struct ukevent *out);
static bool m4_counts(const struct mq *q, const struct ukevent *uk);
static __u32 m4_count(const struct model *m, const struct ukevent *uk, __u32 fired);
static void m4_data(const struct model *m, const struct mq *q, struct ukevent *out);
static void m4_fd_check(const struct model *m, const struct mq *q, struct mkev *k,
			struct ukevent *out);

static void unready(struct mq *q, struct mkev *k)
{
	k->held = false;	/* D65: what a disarmed kevent held goes too */
	if (!k->ready)
		return;
	ml_del(&k->rdy);
	q->nrdy--;
	k->ready = false;
}

/* kitem_destroy: detach (where the racing origin may fire), unready, free. */
void m_open_undo(struct model *m, int slot)
{
	struct mq *q = m->slot[slot];

	uncharge(m, q->owner, KEVENT_LIMIT_QUEUES);
	ml_del(&q->obj);
	m->slot[slot] = NULL;
	free(q);
}

static void destroy(struct model *m, struct mq *q, struct mkev *k)
{
	if (k->race && (k->uk.event & KF_RO_FIRE_DETACH) && !k->cstop)
		enqueue(m, q, k, 0, k->uk.id.raw[0], 0);
	unready(q, k);
	ml_del(&k->reg);
	q->nreg--;
	if (k->user) {
		/* D62: no origin to detach */
	} else if (k->race) {
		m->race_attached--;
	} else {
		m->attached--;
		m->detach_calls++;
	}
	uncharge(m, k->uid, KEVENT_LIMIT_KEVENTS);
	if (k->res >= 0)
		uncharge(m, k->uid, k->res);
	free(k);
}

static unsigned int wait_min(const struct model *m, const struct mq *q)
{
	unsigned int i, min = UINT_MAX;

	for (i = 0; i < KF_NW; i++)
		if (m->w[i].used && m->w[i].parked && m->w[i].q == q && m->w[i].min_nr < min)
			min = m->w[i].min_nr;
	return min;
}

/* D3, section 5.2: only a move onto the ready list writes a ring slot. */
static void ring_advance(struct mq *q, const struct mkev *k)
{
	struct mukevent mk = { .id = k->uk.id, .ret_flags = k->rflags };

	if (!q->ring)
		return;
	memcpy(q->img + KEVENT_RING_SLOT_OFFSET(q->ring_idx), &mk, sizeof(mk));
	q->ring_idx = (q->ring_idx + 1) % KEVENT_MAX_EVENTS;
	memcpy(q->img, &q->ring_idx, sizeof(q->ring_idx));
	q->ring_dirty++;
}

/* k's pending result joins the ready FIFO, unless it is there already. */
static void push(struct model *m, struct mq *q, struct mkev *k)
{
	if (k->ready)
		return;
	k->ready = true;
	ml_add_tail(&k->rdy, &q->rdy);
	q->nrdy++;
	if (q->notify)
		q->notify_exp++;	/* D32: each kevent that becomes ready */
	ring_advance(q, k);
	if (q->nrdy >= wait_min(m, q))
		q->scheduled = true;
}

/*
 * k has a result (origin.h korigin_fire): D21 rebuilds ret_flags; a kevent
 * already ready merges (A9); a disarmed one keeps it, merged alike, until
 * MODIFY (D65).  Returns 1 when the origin must stop.
 */
/*
 * D68: an inode kevent of a revision-4 queue reports every bit since its
 * last delivery: a result pending (ready or held) is ORed in, and its
 * ret_data[1] (D36's -EOVERFLOW) stays while the new one has none.
 * Below revision 4 (and for every other type): the latest result, A9.
 */
static void m4_inode_merge(const struct mq *q, const struct mkev *k, __u32 *d0, __u32 *d1)
{
	if (k->uk.type != KEVENT_INODE || !m_rule(q, MR_INODE_NOTES) || !(k->ready || k->held))
		return;
	*d0 |= k->rdata[0];
	if (!*d1)
		*d1 = k->rdata[1];
}

static int enqueue(struct model *m, struct mq *q, struct mkev *k, __u32 rflags,
		   __u32 d0, __u32 d1)
{
	bool broken = rflags & KEVENT_RET_BROKEN;
	bool stop = broken || (k->uk.req_flags & KEVENT_REQ_ONESHOT);

	m4_inode_merge(q, k, &d0, &d1);

	k->rflags = KEVENT_RET_DONE | (broken ? KEVENT_RET_BROKEN : 0);
	k->rdata[0] = d0;
	k->rdata[1] = d1;
	if (stop)
		k->cstop = true;
	if (k->disarmed)
		k->held = true;
	else
		push(m, q, k);
	return stop;
}

/* D65: a delivered DISPATCH kevent is disarmed; a ONESHOT one is freed instead. */
static void m4_delivered(const struct mq *q, struct mkev *k)
{
	if (m_rule(q, MR_DISPATCH) &&
	    (k->uk.req_flags & (KEVENT_REQ_DISPATCH | KEVENT_REQ_ONESHOT)) == KEVENT_REQ_DISPATCH)
		k->disarmed = true;
}

/* D65: any matched MODIFY re-arms; what came while disarmed is ready now. */
static void m4_rearm(struct model *m, struct mq *q, struct mkev *k)
{
	if (!k->disarmed)
		return;
	k->disarmed = false;
	if (k->held) {
		k->held = false;
		push(m, q, k);
	}
}

unsigned int m_fire(struct model *m, __u64 id, __u32 rflags, __u32 d0, __u32 d1)
{
	unsigned int fired = 0;

	m_for_each_kevent(m, q, k) {
		if (k->uk.id.raw_u64 != id || k->ostop)
			continue;
		fired++;
		if (k->cstop || enqueue(m, q, k, rflags, d0, d1))
			k->ostop = true;
	}
	return fired;
}

/*
 * A source's activity reaches the kevents on its file: tag 0, the files
 * the fd numbers name; else the old file tag (m4_fd_replaced).
 */
static unsigned int fire_file(struct model *m, unsigned int tag,
			      __u32 (*bits)(void *ctx, const struct ukevent *uk), void *ctx)
{
	unsigned int fired = 0;

	m_for_each_kevent(m, q, k) {
		__u32 b = k->ostop || k->fdgone != tag ? 0 : bits(ctx, &k->uk);

		/* D68: below revision 4 an inode kevent's notes are unknown bits */
		if (k->uk.type == KEVENT_INODE && !m_rule(q, MR_INODE_NOTES))
			b &= KEVENT_INODE_CREATE | KEVENT_INODE_REMOVE;
		if (!b)
			continue;
		fired++;
		/* A6: a stopped kevent hears nothing until MODIFY re-arms it. */
		if (k->cstop || enqueue(m, q, k, 0, b, 0))
			k->ostop = true;
	}
	return fired;
}

unsigned int m_fire_each(struct model *m, __u32 (*bits)(void *ctx, const struct ukevent *uk),
			 void *ctx)
{
	return fire_file(m, 0, bits, ctx);
}

unsigned int m4_fire_old(struct model *m, unsigned int tag,
			 __u32 (*bits)(void *ctx, const struct ukevent *uk), void *ctx)
{
	return tag ? fire_file(m, tag, bits, ctx) : 0;
}

/* A racing origin: korigin_fire() on stopped kevents too; counts the 0s. */
unsigned int m_fire_stopped(struct model *m, __u64 id, __u32 d0)
{
	unsigned int going = 0;

	m_for_each_kevent(m, q, k)
		if (k->uk.id.raw_u64 == id && !k->race && !k->user && !k->cstop &&
		    !enqueue(m, q, k, 0, d0, 0))
			going++;
	return going;
}

/* ---- dequeue (section 2.5, D10) ---- */

/* Whole leading records as far as they can be written. */
static int write_out(struct model *m, __u64 uaddr, const struct ukevent *buf, unsigned int n)
{
	unsigned int i;

	if (m_write(m, uaddr, buf, n * UKSZ))
		return (int)n;
	for (i = 0; i < n; i++)
		if (!m_write(m, uaddr + i * UKSZ, &buf[i], UKSZ))
			break;
	return i ? (int)i : -EFAULT;
}

static int take(struct model *m, struct mq *q, unsigned int max_nr, __u64 uaddr)
{
	unsigned int n = q->nrdy < max_nr ? q->nrdy : max_nr, i, nfree = 0;
	struct mkev **gone;
	struct ukevent *buf;
	int ret;

	if (!n)
		return 0;
	buf = malloc(n * UKSZ);
	gone = malloc(n * sizeof(*gone));
	if (!buf || !gone)
		abort();
	/* D10: read and write back, so a read-only buffer faults here too */
	if (!m_read(m, buf, uaddr, n * UKSZ) || !m_write(m, uaddr, buf, n * UKSZ)) {
		free(buf);
		free(gone);
		return -EFAULT;		/* nothing dequeued */
	}
	for (i = 0; i < n; i++) {
		struct mkev *k = ml_entry(q->rdy.next, struct mkev, rdy);

		ml_del(&k->rdy);
		q->nrdy--;
		k->ready = false;
		buf[i] = k->uk;
		m3_deliver(k, &buf[i]);
		m4_fd_check(m, q, k, &buf[i]);
		m4_data(m, q, &buf[i]);
		m4_delivered(q, k);	/* D10: a late fault loses it disarmed */
		if (k->uk.req_flags & KEVENT_REQ_ONESHOT)
			gone[nfree++] = k;
	}
	ret = write_out(m, uaddr, buf, n);
	for (i = 0; i < nfree; i++)
		destroy(m, q, gone[i]);
	free(buf);
	free(gone);
	return ret;
}

/* ---- waiters (D16) ---- */

static void serve(struct model *m, struct mq *q)
{
	unsigned int i, j, n = 0;
	struct mw *order[KF_NW], *t;

	for (i = 0; i < KF_NW; i++)
		if (m->w[i].used && m->w[i].parked && m->w[i].q == q)
			order[n++] = &m->w[i];
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && order[j - 1]->arrival > order[j]->arrival; j--) {
			t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (i = 0; i < n; i++) {
		struct mw *w = order[i];

		if (!q->dead && !w->expired && !w->intr && !w->woken && q->nrdy < w->min_nr)
			continue;
		w->parked = false;
		/* D47: an EINTR queue answers a signal with EINTR, nothing taken */
		w->exp_result = w->intr && (q->abi_flags & KEVENT_ABI_EINTR) ? -EINTR :
				take(m, q, w->max_nr, w->events);
		w->exp_done = true;
		uncharge(m, w->uid, KEVENT_LIMIT_PARKED);
	}
}

bool m_waiter_alive(const struct mw *w)
{
	return w->used && !(w->exp_done && w->put);
}

void m_run(struct model *m)
{
	struct mlink *o;
	unsigned int i;

	for (i = 0; i < KF_NW; i++) {
		struct mw *w = &m->w[i];

		if (w->used && w->parked && w->deadline != NO_DEADLINE && w->deadline <= m->now) {
			w->expired = true;
			w->q->scheduled = true;
		}
	}
	for (o = m->objs.next; o != &m->objs; o = o->next) {
		struct mq *q = ml_entry(o, struct mq, obj);

		if (!q->scheduled)
			continue;
		q->scheduled = false;
		if (!q->dead)
			serve(m, q);
	}
}

void m_intr(struct model *m, int wi)
{
	struct mw *w = &m->w[wi];

	w->intr = true;
	w->q->scheduled = true;
}

void m_put(struct model *m, int wi)
{
	m->w[wi].put = true;
}

/* Queue objects whose last reference went: transport, waiters, work list. */
void m_reap(struct model *m)
{
	struct mlink *o, *next;
	unsigned int i;

	for (o = m->objs.next; o != &m->objs; o = next) {
		struct mq *q = ml_entry(o, struct mq, obj);
		bool held = q->slot >= 0 || q->scheduled;

		next = o->next;
		for (i = 0; i < KF_NW && !held; i++)
			held = m->w[i].q == q && m_waiter_alive(&m->w[i]);
		if (held)
			continue;
		uncharge(m, q->owner, KEVENT_LIMIT_QUEUES);
		ml_del(&q->obj);
		free(q);
	}
}

/* kqueue_release: waiters first (with what is ready), then every kevent. */
void m_release(struct model *m, int slot)
{
	struct mq *q = m->slot[slot];

	q->dead = true;
	serve(m, q);
	while (q->reg.next != &q->reg)
		destroy(m, q, ml_entry(q->reg.next, struct mkev, reg));
	q->notify = false;
	q->ring = NULL;
	q->slot = -1;
	m->slot[slot] = NULL;
}

/* ---- the wrapper checks of section 2.3 and D24 ---- */

struct mcmd {
	unsigned int dir;
	size_t ver0;
	size_t known;	/* the struct size the model knows; 0: ver0 */
};

static const struct mcmd mcmds[] = {
	[KEVENT_IOC_NR_INFO] = { _IOC_READ, KEVENT_INFO_SIZE_VER0 },	/* VER1 grew it */
	[KEVENT_IOC_NR_CTL] = { _IOC_WRITE, KEVENT_CTL_ARG_SIZE_VER0, KEVENT_CTL_ARG_SIZE_VER1 },
	[KEVENT_IOC_NR_GET_EVENTS] = { _IOC_WRITE, KEVENT_GET_EVENTS_ARG_SIZE_VER0,
				       KEVENT_GET_EVENTS_ARG_SIZE_VER1 },
	[KEVENT_IOC_NR_RING_SHM] = { _IOC_READ, KEVENT_RING_SHM_SIZE_VER0 },
	[KEVENT_IOC_NR_SET_ABI] = { _IOC_WRITE, KEVENT_SET_ABI_SIZE_VER0 },
	[KEVENT_IOC_NR_FAULT] = { 0, 0 },	/* not offered without fault_inject */
	[KEVENT_IOC_NR_RING_INIT] = { _IOC_WRITE, KEVENT_RING_INIT_SIZE_VER0 },
	[KEVENT_IOC_NR_WAIT] = { _IOC_WRITE, KEVENT_WAIT_ARG_SIZE_VER0 },
	[KEVENT_IOC_NR_COMMIT] = { _IOC_WRITE, KEVENT_COMMIT_ARG_SIZE_VER0 },
};

/* D25: the whole-call checks on the header. */
static int ctl_checks(const struct mq *q, const struct kevent_ctl_ext_arg *a)
{
	if (a->cmd == KEVENT_CTL_ADD)
		return q->nreg + a->num >= KEVENT_MAX_EVENTS ? -EINVAL : 0;
	return a->num > q->nreg ? -EINVAL : 0;
}

/* ---- revision 3 (D58-D64): the model's own functions ---- */

/* D61, D49: the last cmd a queue of this revision knows. */
static __u32 m3_last_cmd(const struct mq *q)
{
	if (m_rule(q, MR_QUERY))
		return KEVENT_CTL_QUERY;
	return m_rule(q, MR_READY) ? KEVENT_CTL_READY : KEVENT_CTL_MODIFY;
}

/* D60: the VER1 header's own checks, before the array. */
static int m3_plan_ext(const struct mq *q, const struct kevent_ctl_ext_arg *a)
{
	if ((a->ioc_flags & ~(__u32)KEVENT_CTL_EXT) || a->__pad)
		return -EINVAL;
	if ((a->ioc_flags & KEVENT_CTL_EXT) && !m_rule(q, MR_EXT))
		return -EINVAL;
	return a->cmd == KEVENT_CTL_QUERY && !(a->ioc_flags & KEVENT_CTL_EXT) ? -EINVAL : 0;
}

/* D60, B4: an EXT entry is two 40-byte entries of a path's limit. */
static __u32 m3_max_ctl(const struct model *m, const struct kevent_ctl_ext_arg *a)
{
	if ((a->ioc_flags & KEVENT_CTL_EXT) && m->max_ctl < KEVENT_MAX_EVENTS - 1)
		return m->max_ctl / 2;
	return m->max_ctl;
}

static int plan_ctl(const struct model *m, const struct mq *q, const struct kevent_ctl_ext_arg *a)
{
	if (a->cmd > m3_last_cmd(q) || a->num > KEVENT_MAX_EVENTS)
		return -EINVAL;
	if (m3_plan_ext(q, a))
		return -EINVAL;
	if (!a->num)
		return 0;
	if (ctl_checks(q, a))
		return -EINVAL;
	return a->num > m3_max_ctl(m, a) ? -E2BIG : 0;	/* B4 */
}

/* D48, restated from its list of -EINVAL cases: does ts with flags fail? */
static bool timespec_refused(const struct kevent_timespec *ts, __u32 flags)
{
	const __u32 abs = KEVENT_FLAGS_ABSTIME, mono = KEVENT_FLAGS_MONOTONIC;
	const __u32 none = KEVENT_FLAGS_NO_TIMEOUT;
	bool zero = ts->tv_sec == 0 && ts->tv_nsec == 0;

	return ts->tv_sec < 0 || ts->tv_nsec >= 1000000000u || ts->__pad != 0 ||
	       (flags & ~(abs | mono | none)) != 0 ||
	       ((flags & mono) && !(flags & abs)) ||
	       ((flags & none) && (flags != none || !zero));
}

/* D48: the relative ns a valid timespec stands for (~0: no timeout). */
static int timeout_ns_of(const struct model *m, const struct kevent_timespec *ts, __u32 flags,
			 __u64 *ns)
{
	/* Seconds this large saturate just below "no timeout". */
	const __u64 sec_cap = KEVENT_TIMEOUT_INFINITE / 1000000000ull - 1;
	__u64 deadline, now;
	struct timespec rt;

	if (timespec_refused(ts, flags))
		return -EINVAL;
	if (flags == KEVENT_FLAGS_NO_TIMEOUT) {
		*ns = KEVENT_TIMEOUT_INFINITE;
		return 0;
	}
	deadline = (__u64)ts->tv_sec < sec_cap ?
		   (__u64)ts->tv_sec * 1000000000ull + ts->tv_nsec : KEVENT_TIMEOUT_INFINITE - 1;
	if (!(flags & KEVENT_FLAGS_ABSTIME)) {
		*ns = deadline;
		return 0;
	}
	clock_gettime(CLOCK_REALTIME, &rt);
	now = (flags & KEVENT_FLAGS_MONOTONIC) ? m->now :
	      (__u64)rt.tv_sec * 1000000000ull + (__u64)rt.tv_nsec;
	*ns = deadline > now ? deadline - now : 0;	/* already past: no wait */
	return 0;
}

/* D12: min > max is an error, a max above the path's maximum a short return. */
static int plan_get(const struct model *m, const struct mq *q, size_t usize,
		    struct kevent_get_events_arg *a)
{
	const struct kevent_timespec *ts = &a->timeout_ts;

	if (a->ioc_flags & ~(__u32)KEVENT_GET_IOC_FLAGS)
		return -EINVAL;
	/* D48: timeout_ts only with KEVENT_GET_TIMESPEC (revision 2, VER1). */
	if (!(a->ioc_flags & KEVENT_GET_TIMESPEC)) {
		if (ts->tv_sec || ts->tv_nsec || ts->__pad)
			return -E2BIG;
	} else if (!m_rule(q, MR_TIMESPEC) || usize < KEVENT_GET_EVENTS_ARG_SIZE_VER1 ||
		   a->timeout_ns) {
		return -EINVAL;
	} else {
		int err = timeout_ns_of(m, ts, a->flags, &a->timeout_ns);

		if (err)
			return err;
	}
	if (a->min_nr > a->max_nr)
		return -EINVAL;
	if (a->max_nr > m->max_get)
		a->max_nr = m->max_get;
	if (a->min_nr > a->max_nr)
		a->min_nr = a->max_nr;
	return 0;
}

static int plan_set_abi(const struct kevent_set_abi *a)
{
	if (a->__reserved || (a->flags & ~(__u32)KEVENT_ABI_FLAGS) || !m_rev_served(a->revision))
		return -EINVAL;
	/* D47: the EINTR opt-in is a revision-2 rule. */
	if ((a->flags & KEVENT_ABI_EINTR) && !(m_rules_of(a->revision) & M_RULE(MR_EINTR)))
		return -EINVAL;
	return 0;
}

/* D40, D53, D55: the revision-2 calls' whole-call checks (no transport: no EPERM). */
static int plan_rev2(const struct model *m, const struct mq *q, struct margs *out)
{
	const struct kevent_ring_init *r = &out->a.ring_init;
	struct kevent_wait_arg *w = &out->a.wait;
	__u64 ns;

	if (!m_rule(q, MR_RING))
		return -EINVAL;
	if (out->nr == KEVENT_IOC_NR_RING_INIT)
		return r->flags || !r->ring != !r->num || r->num == 1 ||
		       r->num > KEVENT_URING_MAX || (r->ring & 7) ? -EINVAL : 0;
	if (out->nr != KEVENT_IOC_NR_WAIT)
		return 0;
	if (w->ioc_flags & ~(__u32)KEVENT_GET_NONBLOCK)
		return -EINVAL;
	return timeout_ns_of(m, &w->timeout, w->flags, &ns);
}

static bool zero(const unsigned char *p, size_t len)
{
	while (len--)
		if (*p++)
			return false;
	return true;
}

int m_plan(struct model *m, int slot, unsigned int cmd, const void *arg, size_t arg_len,
	   struct margs *out)
{
	unsigned int nr = _IOC_NR(cmd);
	size_t usize = _IOC_SIZE(cmd), ksize;

	memset(out, 0, sizeof(*out));
	out->nr = nr;
	out->usize = usize;
	if (_IOC_TYPE(cmd) != KEVENT_IOC_MAGIC || nr >= sizeof(mcmds) / sizeof(mcmds[0]))
		return -ENOTTY;
	if (_IOC_DIR(cmd) != mcmds[nr].dir || nr == KEVENT_IOC_NR_RING_SHM ||
	    nr == KEVENT_IOC_NR_FAULT ||
	    (nr >= KEVENT_IOC_NR_RING_INIT && !m_rule(m->slot[slot], MR_RING)))	/* D40 */
		return -ENOTTY;	/* RING_SHM: the CUSE daemon's own (kcore.h) */
	ksize = mcmds[nr].known ? mcmds[nr].known : mcmds[nr].ver0;
	if (usize < mcmds[nr].ver0)
		return -EINVAL;
	if (usize > KEVENT_IOC_ARG_MAX)
		return -E2BIG;
	if (mcmds[nr].dir == _IOC_READ)
		return 0;
	if (!arg || arg_len != usize)
		return -EINVAL;
	/* 2.3: a short struct reads as zero, a longer one needs a zero tail. */
	memcpy(&out->a, arg, usize < ksize ? usize : ksize);
	if (usize > ksize && !zero((const unsigned char *)arg + ksize, usize - ksize))
		return -E2BIG;
	if (nr == KEVENT_IOC_NR_CTL)
		return plan_ctl(m, m->slot[slot], &out->a.ctl);
	if (nr == KEVENT_IOC_NR_GET_EVENTS)
		return plan_get(m, m->slot[slot], usize, &out->a.get);
	if (nr >= KEVENT_IOC_NR_RING_INIT)
		return plan_rev2(m, m->slot[slot], out);
	return plan_set_abi(&out->a.set_abi);
}

/* ---- CTL (section 2.4) ---- */

static void entry_fail(struct ukevent *uk, int err)
{
	uk->ret_flags = KEVENT_RET_BROKEN | KEVENT_RET_DONE;
	uk->ret_data[1] = (__u32)err;
}

static bool strict_refused(const struct mq *q, const struct ukevent *uk)
{
	__u32 known = KEVENT_REQ_ONESHOT;

	if (m_rule(q, MR_ALWAYS_QUEUE))	/* D42 */
		known |= KEVENT_REQ_ALWAYS_QUEUE;
	if (m_rule(q, MR_LEVEL))	/* D43 */
		known |= KEVENT_REQ_LEVEL;
	if (m_rule(q, MR_DISPATCH))	/* D65 */
		known |= KEVENT_REQ_DISPATCH;
	return q->strict && (uk->req_flags & ~known);
}

/* D43: KEVENT_REQ_LEVEL on a type other than POLL and SOCKET (revision 2). */
static bool level_refused(const struct mq *q, const struct ukevent *uk, __u32 type)
{
	return m_rule(q, MR_LEVEL) && (uk->req_flags & KEVENT_REQ_LEVEL) &&
	       type != KEVENT_POLL && type != KEVENT_SOCKET;
}

static void uncharge_kevent(struct model *m, unsigned int uid, int res)
{
	uncharge(m, uid, KEVENT_LIMIT_KEVENTS);
	if (res >= 0)
		uncharge(m, uid, res);
}

static void registered(struct model *m, struct mq *q, struct mkev *k)
{
	ml_add_tail(&k->reg, &q->reg);
	q->nreg++;
	m->attached++;
}

/* ADD through a real origin (m->org): D5, D31 as below. */
static int add_real(struct model *m, struct mq *q, struct mkev *k, struct ukevent *uk)
{
	__u32 rdata[2] = { 0, 0 };
	int r = m->org->attach(m->org->ctx, uk, rdata);

	if (!r) {
		registered(m, q, k);
		return 0;
	}
	uncharge_kevent(m, k->uid, k->res);
	free(k);
	if (r < 0) {
		entry_fail(uk, r);
		return 1;
	}
	uk->ret_flags = KEVENT_RET_DONE;
	uk->ret_data[0] = rdata[0];
	uk->ret_data[1] = rdata[1];
	if (m4_counts(q, uk))	/* D67: the answer is a delivery */
		uk->ret_data[1] = m4_count(m, uk, rdata[0]);
	return 1;
}

/* D64: types 8 and 9 exist on revision 3 only; KEVENT_USER is the core's own (D62). */
static bool m3_type_served(const struct model *m, const struct mq *q, __u32 type)
{
	if (type >= KEVENT_MAX)
		return false;
	if (type == KEVENT_POSIX_TIMER && !m_rule(q, MR_POSIX_TIMER))
		return false;
	if (type == KEVENT_USER && !m_rule(q, MR_USER))
		return false;
	return type == KEVENT_USER || (m->mask & (1u << type));
}

static bool m3_ext_zero(const struct ukevent_ext *e)
{
	return zero((const unsigned char *)&e->ext, sizeof(e->ext));
}

/* D59: a setting the core refuses. */
bool m3_spec_refused(const struct kevent_timer_spec *s)
{
	const struct kevent_timespec *v = &s->value, *i = &s->interval;
	__u64 ins = (__u64)i->tv_sec * 1000000000ull + i->tv_nsec;

	if (s->clock != KEVENT_CLOCK_REALTIME && s->clock != KEVENT_CLOCK_MONOTONIC &&
	    s->clock != KEVENT_CLOCK_BOOTTIME)
		return true;
	if (s->flags & ~(__u32)KEVENT_TIMER_ABSTIME)
		return true;
	if (v->tv_sec < 0 || v->tv_nsec >= 1000000000u || v->__pad ||
	    i->tv_sec < 0 || i->tv_nsec >= 1000000000u || i->__pad)
		return true;
	return i->tv_sec == 0 && ins && ins < KEVENT_TIMER_MIN_INTERVAL_NS;
}

/*
 * D58, D60 (revision 3): e is NULL for a 40-byte entry.  Another type's
 * ext must be zero; a POSIX timer's ADD needs a setting, with FIRED.
 */
static bool m3_ext_refused(const struct mq *q, const struct ukevent *uk,
			   const struct ukevent_ext *e, bool add)
{
	if (!m_rule(q, MR_EXT))
		return false;
	if (uk->type != KEVENT_POSIX_TIMER)
		return e && !m3_ext_zero(e);
	if (!e)		/* D61: a 40-byte MODIFY checks event as ADD does */
		return add || !(uk->event & KEVENT_TIMER_FIRED);
	return !(uk->event & KEVENT_TIMER_FIRED) || m3_spec_refused(&e->ext.timer);
}

/* D60: REMOVE and READY read no setting: only another type's ext is checked. */
static bool m3_ext_foreign(const struct mq *q, const struct ukevent *uk,
			   const struct ukevent_ext *e)
{
	return m_rule(q, MR_EXT) && e && uk->type != KEVENT_POSIX_TIMER && !m3_ext_zero(e);
}

/* A model kevent of uk for uid, holding res (-1: none), on no list yet. */
static struct mkev *mkev_new(const struct ukevent *uk, unsigned int uid, int res)
{
	struct mkev *k = calloc(1, sizeof(*k));

	if (!k)
		abort();
	k->uk = *uk;
	k->uid = uid;
	k->res = res;
	return k;
}

/* D62: a user event (charged) registers with the core alone: no origin hears of it. */
static int m3_add_user(struct mq *q, const struct ukevent *uk, unsigned int uid)
{
	struct mkev *k = mkev_new(uk, uid, -1);

	k->user = true;
	k->ostop = true;	/* FIRE operations never reach it */
	ml_add_tail(&k->reg, &q->reg);
	q->nreg++;
	return 0;
}

/* D62: a trigger; one already ready (or held, D65) ORs its value in and counts it. */
static void m3_user_trigger(struct model *m, struct mq *q, struct mkev *k, __u32 value)
{
	if (!k->ready && !k->held) {
		enqueue(m, q, k, 0, value, 1);
		return;
	}
	k->rdata[0] |= value;
	if (k->rdata[1] != 0xffffffffu)
		k->rdata[1]++;
}

/* D59, D61: a setting takes effect; the grid starts again, nothing pending. */
static void m3_arm(struct mkev *k, const struct kevent_timer_spec *spec)
{
	k->ptimer = true;
	k->spec = *spec;
	k->armed = spec->value.tv_sec || spec->value.tv_nsec;
	k->fresh = k->armed;
	k->pend = 0;
	k->ostop = true;	/* FIRE operations never reach it */
}

/* D58, D62: what a delivery reports; a POSIX timer's count is read and cleared. */
static void m3_deliver(struct mkev *k, struct ukevent *out)
{
	if (k->ptimer) {
		k->rflags = KEVENT_RET_DONE;
		k->rdata[0] = k->pend;
		k->rdata[1] = 0;
		k->pend = 0;
	}
	out->ret_flags = k->rflags;
	out->ret_data[0] = k->rdata[0];
	out->ret_data[1] = k->rdata[1];
}

/* D67: POLL and SOCKET records carry their source's count on revision 4. */
static bool m4_counts(const struct mq *q, const struct ukevent *uk)
{
	return m_rule(q, MR_DATA) && (uk->type == KEVENT_POLL || uk->type == KEVENT_SOCKET);
}

/*
 * D67: the count, read at this delivery, for the bits the record reports:
 * a real source's (device mode), or the test origin's, which is 0 for no
 * bit and id.raw[1] ^ bits otherwise (core/test-origin.h).  BROKEN keeps
 * its -errno.
 */
static __u32 m4_count(const struct model *m, const struct ukevent *uk, __u32 fired)
{
	if (m->org)
		return m->org->count ? m->org->count(m->org->ctx, uk, fired) : 0;
	return fired ? uk->id.raw[1] ^ fired : 0;
}

static void m4_data(const struct model *m, const struct mq *q, struct ukevent *out)
{
	if (m4_counts(q, out) && !(out->ret_flags & KEVENT_RET_BROKEN))
		out->ret_data[1] = m4_count(m, out, out->ret_data[0]);
}

/*
 * D69: does the kevent's fd still name its file?  In process, the test
 * origin's KTEST_STALE_FD in its event as it stands says no (the racing
 * origin checks nothing); on a device, a kevent whose fd number the
 * executor gave another file or closed (m4_fd_replaced): stale either way.
 */
static bool m4_stale(const struct model *m, const struct mkev *k)
{
	if (m->org)
		return k->fdgone;
	return !k->race && (k->uk.event & KTEST_STALE_FD);
}

/*
 * D69, before D67's count: a POLL or SOCKET record of a stale kevent
 * (m4_stale) is BROKEN|DONE {0, -EBADF}, and the kevent stops for good.
 */
static void m4_fd_check(const struct model *m, const struct mq *q, struct mkev *k,
			struct ukevent *out)
{
	if (!m_rule(q, MR_FD_CHECK) ||
	    (out->type != KEVENT_POLL && out->type != KEVENT_SOCKET) ||
	    (out->ret_flags & KEVENT_RET_BROKEN) || !m4_stale(m, k))
		return;
	out->ret_flags = KEVENT_RET_BROKEN | KEVENT_RET_DONE;
	out->ret_data[0] = 0;
	out->ret_data[1] = (__u32)-EBADF;
	k->cstop = k->stale = true;
}

unsigned int m4_fd_replaced(struct model *m, bool (*on)(void *ctx, const struct ukevent *uk),
			    void *ctx, unsigned int tag)
{
	unsigned int n = 0;

	m_for_each_kevent(m, q, k) {
		if ((k->uk.type != KEVENT_POLL && k->uk.type != KEVENT_SOCKET) ||
		    k->fdgone || !on(ctx, &k->uk))
			continue;
		k->fdgone = tag;
		n++;
	}
	return n;
}

unsigned int m3_timer_expire(struct model *m, bool (*due)(void *ctx, struct mkev *k), void *ctx)
{
	unsigned int n = 0;

	m_for_each_kevent(m, q, k) {
		if (!k->ptimer || !k->armed || !due(ctx, k))
			continue;
		n++;
		if (k->pend != 0xffffffffu)
			k->pend++;
		if (!k->spec.interval.tv_sec && !k->spec.interval.tv_nsec)
			k->armed = false;	/* D58: one expiry */
		enqueue(m, q, k, 0, 0, 0);	/* ready already: only counted */
	}
	return n;
}

/* One ADD entry: 0 registered, 1 answered in *uk (D5, D19, D31, A3). */
static int add_one(struct model *m, struct mq *q, struct ukevent *uk,
		   const struct ukevent_ext *e, unsigned int uid)
{
	int res = type_res(uk->type);
	struct mkev *k;

	uk->ret_flags = 0;
	if (!m3_type_served(m, q, uk->type)) {
		/* A3; D51: ENOSYS per entry on revision 2 */
		entry_fail(uk, m_rule(q, MR_ENOSYS) ? -ENOSYS : -EINVAL);
		return 1;
	}
	if (strict_refused(q, uk) || level_refused(q, uk, uk->type) ||
	    m3_ext_refused(q, uk, e, true)) {
		entry_fail(uk, -EINVAL);
		return 1;
	}
	if (!charge(m, uid, KEVENT_LIMIT_KEVENTS)) {
		entry_fail(uk, -ENOSPC);
		return 1;
	}
	if (uk->type == KEVENT_USER)
		return m3_add_user(q, uk, uid);
	if (res >= 0 && !charge(m, uid, res)) {
		uncharge(m, uid, KEVENT_LIMIT_KEVENTS);
		entry_fail(uk, -ENOSPC);
		return 1;
	}
	k = mkev_new(uk, uid, res);
	k->race = (1u << uk->type) & KF_RO_TYPES;
	/* The racing origin never hears of FIRE operations. */
	k->ostop = k->race;
	if (!k->race)
		m->attach_calls++;
	if (uk->type == KEVENT_POSIX_TIMER)
		m3_arm(k, &e->ext.timer);	/* m3_ext_refused: e is there */
	if (m->org)
		return add_real(m, q, k, uk);
	if (uk->event & (KTEST_FAIL_ATTACH | KTEST_READY_AT_ADD)) {
		/* Not registered: a fire from inside attach() is dropped, no ring slot (D3). */
		free(k);
		uncharge_kevent(m, uid, res);
		if (uk->event & KTEST_FAIL_ATTACH) {
			entry_fail(uk, -EIO);
			return 1;
		}
		uk->ret_flags = KEVENT_RET_DONE;
		uk->ret_data[0] = uk->id.raw[0];
		uk->ret_data[1] = m4_counts(q, uk) ? m4_count(m, uk, uk->ret_data[0]) : 0;	/* D67 */
		return 1;
	}
	ml_add_tail(&k->reg, &q->reg);
	q->nreg++;
	if (k->race)
		m->race_attached++;
	else
		m->attached++;
	/* Registered: the fire held during attach() enqueues it now (D3). */
	if (k->race && (uk->event & KF_RO_FIRE_ATTACH))
		enqueue(m, q, k, 0, uk->id.raw[0], 0);
	else if (!k->race && (uk->event & KTEST_FIRE_IN_ATTACH) && enqueue(m, q, k, 0, 7, 0))
		k->ostop = true;	/* the test origin heard "stop" in attach() */
	return 0;
}

/* D6, D7: the oldest kevent with the same id and cookie; D63: and type on revision 3. */
static struct mkev *find(struct mq *q, const struct ukevent *uk)
{
	mq_for_each_kevent(q, k)
		if (k->uk.id.raw[0] == uk->id.raw[0] && k->uk.id.raw[1] == uk->id.raw[1] &&
		    k->uk.user[0] == uk->user[0] && k->uk.user[1] == uk->user[1] &&
		    (!m_rule(q, MR_TYPE_KEY) || k->uk.type == uk->type))
			return k;
	return NULL;
}

static void remove_one(struct model *m, struct mq *q, struct ukevent *uk,
		       const struct ukevent_ext *e)
{
	struct mkev *k;

	if (m3_ext_foreign(q, uk, e)) {
		entry_fail(uk, -EINVAL);
		return;
	}
	k = find(q, uk);
	if (!k) {
		uk->ret_flags = KEVENT_RET_BROKEN | KEVENT_RET_DONE;
		return;
	}
	destroy(m, q, k);
	uk->ret_flags = KEVENT_RET_DONE;
}

/*
 * MODIFY through a real origin: re-armed (A6), ready at once if the source
 * is.  A kevent whose fd number names another file or none
 * (m4_fd_replaced) is re-armed on its own old file, which the device holds
 * (A7): that file is asked.
 */
static void modify_real(struct model *m, struct mq *q, struct mkev *k, struct ukevent *uk)
{
	__u32 rdata[2] = { 0, 0 };
	int r;

	if (k->fdgone)
		r = m->org->modify_old ? m->org->modify_old(m->org->ctx, &k->uk, k->fdgone, rdata) : 0;
	else
		r = m->org->modify(m->org->ctx, &k->uk, rdata);
	if (r < 0) {
		entry_fail(uk, r);
		return;
	}
	k->ostop = false;
	uk->ret_flags = KEVENT_RET_DONE;
	if (r > 0 && enqueue(m, q, k, 0, rdata[0], rdata[1]))
		k->ostop = true;
}

/* kcore.h MODIFY: event and req_flags replaced, the origin re-evaluates. */
static void modify_one(struct model *m, struct mq *q, struct ukevent *uk,
		       const struct ukevent_ext *e)
{
	struct mkev *k = find(q, uk);

	if (!k) {
		uk->ret_flags = KEVENT_RET_BROKEN | KEVENT_RET_DONE;
		return;
	}
	if (m3_ext_refused(q, uk, e, false) || strict_refused(q, uk) ||
	    level_refused(q, uk, k->uk.type)) {
		entry_fail(uk, -EINVAL);
		return;
	}
	k->uk.event = uk->event;
	k->uk.req_flags = uk->req_flags;
	k->cstop = k->stale;	/* D69: a stale kevent stays stopped */
	if (k->ptimer && e)
		k->held = false;	/* D61: a new setting discards what was pending */
	m4_rearm(m, q, k);
	if (k->stale) {
		uk->ret_flags = KEVENT_RET_DONE;	/* D69: its origin is not asked */
		return;
	}
	if (k->ptimer) {
		/* D61: an EXT entry re-arms and discards what was pending */
		if (e) {
			unready(q, k);
			m3_arm(k, &e->ext.timer);
		}
		uk->ret_flags = KEVENT_RET_DONE;
		return;
	}
	if (k->user) {
		uk->ret_flags = KEVENT_RET_DONE;	/* D62: a pending trigger stays */
		return;
	}
	if (m->org)
		return modify_real(m, q, k, uk);
	if (k->race && (uk->event & KF_RO_FIRE_MODIFY))
		enqueue(m, q, k, 0, uk->id.raw[0], 0);
	if (uk->event & KTEST_FAIL_MODIFY) {
		entry_fail(uk, -EIO);
		return;
	}
	k->ostop = k->race;
	uk->ret_flags = KEVENT_RET_DONE;
	if (uk->event & KTEST_READY_AT_MODIFY)
		enqueue(m, q, k, 0, 1, 0);
}

/* D49: matched as MODIFY matches; ready with DONE and {0, 0} unless ready already. */
static int ready_one(struct model *m, struct mq *q, struct ukevent *uk,
		     const struct ukevent_ext *e)
{
	struct mkev *k;

	if (m3_ext_foreign(q, uk, e)) {
		entry_fail(uk, -EINVAL);
		return 0;
	}
	k = find(q, uk);
	if (!k) {
		uk->ret_flags = KEVENT_RET_BROKEN | KEVENT_RET_DONE;
		return 0;
	}
	uk->ret_flags = KEVENT_RET_DONE;
	if (k->user)
		m3_user_trigger(m, q, k, uk->event);
	else if (!k->ready && !k->held)	/* D65: a held result is pending too */
		enqueue(m, q, k, 0, 0, 0);
	return 1;
}

/*
 * D61: QUERY matches as MODIFY; only a POSIX timer has a setting to read
 * (device mode: kfuzz's cores serve none).  An armed timer's time left is
 * M3_LEFT_ANY: the caller knows its window.  Returns 1 for a match.
 */
static int m3_query_one(struct mq *q, struct ukevent_ext *e)
{
	struct mkev *k = find(q, &e->ev);
	struct kevent_timer_spec *t = &e->ext.timer;

	if (!k) {
		e->ev.ret_flags = KEVENT_RET_BROKEN | KEVENT_RET_DONE;	/* D38 */
		return 0;
	}
	if (!k->ptimer) {
		entry_fail(&e->ev, -EINVAL);
		return 1;
	}
	memset(t, 0, sizeof(*t));
	t->clock = k->spec.clock;
	if (k->armed)
		t->value.tv_nsec = M3_LEFT_ANY;
	t->interval = k->spec.interval;
	e->ev.ret_flags = KEVENT_RET_DONE;
	e->ev.ret_data[0] = k->pend;
	e->ev.ret_data[1] = 0;
	return 1;
}

/* D50: the oldest parked waiter wakes (returns 1), or the wake is latched. */
static int ready_wake(struct model *m, struct mq *q)
{
	struct mw *oldest = NULL;
	unsigned int i;

	for (i = 0; i < KF_NW; i++) {
		struct mw *w = &m->w[i];

		if (w->used && w->parked && w->q == q && (!oldest || w->arrival < oldest->arrival))
			oldest = w;
	}
	if (!oldest) {
		q->latched = true;
		return 0;
	}
	oldest->woken = true;
	return 1;
}

static int ctl(struct model *m, struct mq *q, unsigned int uid, const struct kevent_ctl_ext_arg *a)
{
	bool ext = a->ioc_flags & KEVENT_CTL_EXT;	/* D60: 80-byte entries */
	size_t esz = ext ? sizeof(struct ukevent_ext) : UKSZ;
	size_t len = (size_t)a->num * esz, back = len;
	unsigned char *uks;
	unsigned int i, out = 0;
	int ret = 0;

	q->ctl_seen = true;	/* O2 */
	if (!a->num)
		return a->cmd == KEVENT_CTL_READY ? ready_wake(m, q) : 0;
	if (ctl_checks(q, a))
		return -EINVAL;
	uks = malloc(len);
	if (!uks)
		abort();
	if (!m_read(m, uks, a->events, len)) {
		free(uks);
		return -EFAULT;		/* D9: no effect */
	}
	for (i = 0; i < a->num; i++) {
		struct ukevent_ext en;
		struct ukevent *uk = &en.ev;
		const struct ukevent_ext *e = ext ? &en : NULL;

		memcpy(&en, uks + i * esz, esz);
		if (a->cmd == KEVENT_CTL_ADD) {
			if (add_one(m, q, uk, e, uid))
				memcpy(uks + out++ * esz, &en, esz);
			continue;
		}
		if (a->cmd == KEVENT_CTL_REMOVE)
			remove_one(m, q, uk, e);
		else if (a->cmd == KEVENT_CTL_READY)
			ret += ready_one(m, q, uk, e);
		else if (a->cmd == KEVENT_CTL_QUERY)
			ret += m3_query_one(q, &en);
		else
			modify_one(m, q, uk, e);
		memcpy(uks + i * esz, &en, esz);
	}
	if (a->cmd == KEVENT_CTL_ADD) {
		ret = (int)out;
		back = out * esz;
	}
	if (back && !m_write(m, a->events, uks, back))
		ret = -EFAULT;		/* D9: effects kept */
	free(uks);
	return ret;
}

/* ---- GET_EVENTS (section 2.5) ---- */

static __u64 deadline_of(const struct model *m, __u64 timeout)
{
	if (timeout == KEVENT_TIMEOUT_INFINITE || m->now + timeout < m->now)
		return NO_DEADLINE;	/* D8 */
	return m->now + timeout;
}

static int get_events(struct model *m, struct mq *q, unsigned int uid,
		      const struct kevent_get_events_arg *a, int wslot)
{
	struct mw *w;

	bool latched;

	serve(m, q);
	if (!a->max_nr)
		return 0;
	latched = q->latched;	/* D50: any GET_EVENTS past this point clears it */
	q->latched = false;
	if (wslot < 0 || (a->ioc_flags & KEVENT_GET_NONBLOCK) || !a->min_nr ||
	    !a->timeout_ns || q->nrdy >= a->min_nr || latched)
		return take(m, q, a->max_nr, a->events);
	if (!charge(m, uid, KEVENT_LIMIT_PARKED))
		return -EAGAIN;		/* D18 */
	w = &m->w[wslot];
	memset(w, 0, sizeof(*w));
	w->used = true;
	w->parked = true;
	w->q = q;
	w->uid = uid;
	w->min_nr = a->min_nr;
	w->max_nr = a->max_nr;
	w->events = a->events;
	w->deadline = deadline_of(m, a->timeout_ns);
	w->arrival = ++m->arrival;
	return KDISP_PARKED;
}

/* ---- the kevent_uring of revision 2 (D53-D55), device mode ---- */

/* D53: the whole ring writable (read, write back), then kidx and over 0. */
static int uring_init(struct model *m, struct mq *q, const struct kevent_ring_init *r)
{
	size_t len = KEVENT_URING_SIZE(r->num);
	static const __u32 zero32;
	unsigned char *probe;

	if (q->uring_set)
		return -EBUSY;
	if (r->ring) {
		probe = malloc(len);
		if (!probe)
			abort();
		if (!m_read(m, probe, r->ring, len) || !m_write(m, r->ring, probe, len)) {
			free(probe);
			return -EFAULT;
		}
		free(probe);
		if (!m_write(m, r->ring, &zero32, 4) || !m_write(m, r->ring + 4, &zero32, 4))
			return -EFAULT;
		q->uring = r->ring;
		q->unum = r->num;
		q->kidx = q->uidx = q->over = 0;
		q->ufull = false;
	}
	q->uring_set = q->ctl_seen = true;
	return 0;
}

/* Published slots not yet committed. */
static __u32 uring_used(const struct mq *q)
{
	return q->ufull ? q->unum : (q->kidx + q->unum - q->uidx) % q->unum;
}

bool m_wait_blocks(const struct model *m, int slot, const struct margs *a)
{
	const struct mq *q = m->slot[slot];
	const struct kevent_wait_arg *w = &a->a.wait;
	__u64 ns;

	if (!q->uring || w->old_uidx >= q->unum || !w->num || w->old_uidx != q->uidx ||
	    (w->ioc_flags & KEVENT_GET_NONBLOCK) || q->latched)
		return false;
	if (timeout_ns_of(m, &w->timeout, w->flags, &ns) || !ns)
		return false;
	return !(q->nrdy && uring_used(q) < q->unum);
}

/* D55: n = min(num, free slots, ready) into the ring at kidx, then ring_kidx. */
static int uring_wait(struct model *m, struct mq *q, const struct kevent_wait_arg *w)
{
	__u32 n, i, next;

	serve(m, q);
	if (!q->uring || w->old_uidx >= q->unum)
		return -EINVAL;
	if (!w->num || w->old_uidx != q->uidx)
		return 0;
	q->latched = false;	/* D50: a WAIT takes the wake as a GET_EVENTS does */
	n = w->num < q->unum ? w->num : q->unum;
	if (n > q->unum - uring_used(q))
		n = q->unum - uring_used(q);
	if (n > q->nrdy)
		n = q->nrdy;
	for (i = 0; i < n; i++) {
		struct mkev *k = ml_entry(q->rdy.next, struct mkev, rdy);
		struct ukevent uk = k->uk;
		__u32 s = (q->kidx + i) % q->unum;

		ml_del(&k->rdy);
		q->nrdy--;
		k->ready = false;
		m3_deliver(k, &uk);
		m4_fd_check(m, q, k, &uk);
		m4_data(m, q, &uk);
		if (!m_write(m, q->uring + 8 + (__u64)s * UKSZ, &uk, UKSZ))
			abort();	/* RING_INIT checked it; the arena stays mapped */
		m4_delivered(q, k);
		if (k->uk.req_flags & KEVENT_REQ_ONESHOT)
			destroy(m, q, k);
	}
	if (!n)
		return 0;
	next = (q->kidx + n) % q->unum;
	if (!m_write(m, q->uring, &next, 4))
		abort();
	q->kidx = next;
	q->ufull = next == q->uidx;
	return (int)n;
}

/* D54, with U = uidx, K = over, u = used. */
static int uring_commit(struct model *m, struct mq *q, const struct kevent_commit_arg *c)
{
	__u32 nu = c->new_uidx, u, f, k1;

	if (!q->uring)
		return 0;
	if (nu >= q->unum)
		return -EINVAL;
	if (c->over != q->over)
		return c->over == q->over - 1 && nu < q->uidx ? 0 : -EOVERFLOW;
	u = uring_used(q);
	f = nu == q->uidx ? (q->ufull ? q->unum : 0) : (nu + q->unum - q->uidx) % q->unum;
	if (f > u)
		return -EINVAL;
	if (!f)
		return 0;
	if (nu <= q->uidx) {
		k1 = q->over + 1;
		if (!m_write(m, q->uring + 4, &k1, 4))
			return -EFAULT;
		q->over = k1;
	}
	q->uidx = nu;
	q->ufull = false;
	serve(m, q);
	return (int)f;
}

int m_execute(struct model *m, int slot, unsigned int uid, const struct margs *a, int wslot)
{
	struct mq *q = m->slot[slot];
	int ret;

	switch (a->nr) {
	case KEVENT_IOC_NR_INFO:
		return 0;
	case KEVENT_IOC_NR_CTL:
		ret = ctl(m, q, uid, &a->a.ctl);
		serve(m, q);	/* the call's effects may satisfy a waiter */
		return ret;
	case KEVENT_IOC_NR_GET_EVENTS:
		return get_events(m, q, uid, &a->a.get, wslot);
	case KEVENT_IOC_NR_RING_INIT:
		if (m->org)
			return uring_init(m, q, &a->a.ring_init);
		/*
		 * D53: ring calls reach the caller's memory directly; the
		 * harness's accessor holds only planned ranges and these plan
		 * none, so a ring never registers here (D41: -EFAULT).
		 */
		if (q->uring_set)
			return -EBUSY;
		if (a->a.ring_init.ring)
			return -EFAULT;
		q->uring_set = q->ctl_seen = true;
		return 0;
	case KEVENT_IOC_NR_WAIT:
		if (m->org)
			return uring_wait(m, q, &a->a.wait);
		serve(m, q);
		return -EINVAL;		/* D55: no ring */
	case KEVENT_IOC_NR_COMMIT:
		if (m->org)
			return uring_commit(m, q, &a->a.commit);
		return 0;		/* D54: no ring */
	default:
		if (q->ctl_seen)
			return -EBUSY;	/* A12 */
		q->strict = a->a.set_abi.flags & KEVENT_ABI_STRICT;
		q->revision = a->a.set_abi.revision;
		q->rules = m_rules_of(q->revision);
		q->abi_flags = a->a.set_abi.flags;
		return 0;
	}
}

/* ---- INFO (section 2.6) ---- */

void m_counters(const struct model *m, struct kcore_counters *out)
{
	const struct mlink *o;
	unsigned int i;

	memset(out, 0, sizeof(*out));
	for (o = m->objs.next; o != &m->objs; o = o->next) {
		const struct mq *q = ml_entry(o, struct mq, obj);

		out->queues++;
		out->kevents += q->nreg;
		out->ready += q->nrdy;
	}
	for (i = 0; i < KF_NW; i++)
		out->waiters += m_waiter_alive(&m->w[i]);
}

void m_info(struct model *m, int slot, unsigned int uid, size_t usize, struct kevent_info *out)
{
	const struct mq *q = m->slot[slot];
	struct kcore_counters c;
	unsigned int i;

	m_counters(m, &c);
	memset(out, 0, sizeof(*out));
	out->size = usize < sizeof(*out) ? (__u32)usize : sizeof(*out);
	out->abi_revision = M_REV_HIGHEST;
	out->backend = KEVENT_BACKEND_CORE;
	out->features = KEVENT_FEAT_STRICT | KEVENT_FEAT_URING;
	for (i = 0; i < KEVENT_MAX; i++)
		if (m3_type_served(m, q, i))
			out->supported_types |= 1u << i;
	/* D64: the revision-3 features, on revision-3 queues only */
	if (out->supported_types & (1u << KEVENT_POSIX_TIMER))
		out->features |= KEVENT_FEAT_POSIX_TIMER;
	if (out->supported_types & (1u << KEVENT_USER))
		out->features |= KEVENT_FEAT_USER;
	out->ukevent_size = UKSZ;
	out->mukevent_size = sizeof(struct mukevent);
	out->ring_page_size = KEVENT_RING_PAGE_SIZE;
	out->ring_slots_per_page = KEVENTS_ON_PAGE;
	out->ring_pages = KEVENT_RING_PAGES;
	out->ring_slots = KEVENT_MAX_EVENTS;
	out->max_kevents = KEVENT_MAX_EVENTS - 1;
	out->max_ctl_num = m->max_ctl;
	out->max_get_nr = m->max_get;
	out->queue_kevents = q->nreg;
	out->queue_ready = q->nrdy;
	for (i = 0; i < KEVENT_LIMIT_NR; i++) {
		out->limits[i].cap = m->caps[i];
		out->limits[i].used = m->used[uid][i];
	}
	out->live_queues = c.queues;
	out->live_kevents = c.kevents;
	out->live_waiters = c.waiters;
	for (i = 0; i < KF_NW; i++)
		out->queue_parked += m->w[i].used && m->w[i].parked && m->w[i].q == q;
	out->abi_lowest = M_REV_LOWEST;
	out->queue_revision = q->revision;
	out->queue_abi_flags = q->abi_flags;
	out->ring_num = q->unum;
	out->ring_kidx = q->kidx;
	out->ring_uidx = q->uidx;
	out->ring_over = q->over;
}

