// SPDX-License-Identifier: GPL-2.0
/*
 * Loose mode (header byte 0 bit 7): the same programs against a core in
 * normal mode (its worker thread, the real clock) with allocation failures
 * injected.  Neither can be predicted by the model, so this mode checks
 * only what must hold whatever the timing and whichever allocation failed:
 * no crash or sanitizer report, complete() exactly once with a sane result,
 * the counters agree with INFO and poll of every queue, GET_EVENTS returns
 * at most max_nr and at most what was ready, and nothing is left at the end.
 * It reaches what deterministic mode cannot: the worker, waits in place,
 * every -ENOMEM path (D19).
 *
 * Differences in the meaning of operations (prog.h): UID arms "the n-th
 * allocation from now fails" with n = its first byte; CLOCK and RUN only
 * call kcore_run_deadlines(); parked waiters never time out (INFINITE),
 * waits in place last at most LOOSE_WAIT_NS; types 4 and 5 have no origin.
 */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kfuzz.h"
#include "model.h"
#include "test-origin.h"
#include "test-uaccess.h"

#define LOOSE_WAIT_NS	200000ull
#define UKSZ		sizeof(struct ukevent)

struct lq {
	struct kqueue *kq;
	unsigned char *ring;
	unsigned int owner;
};

struct lw {
	bool used, put;
	struct kwaiter *kw;
	atomic_int done;
	__u32 max_nr;
};

static struct {
	struct kcore *core;
	struct ktest_mem mem;
	unsigned char *arena;
	struct lq q[KF_NQ];
	struct lw w[KF_NW];
	atomic_uint countdown;
	unsigned int ours[KF_NUID][KEVENT_LIMIT_NR];
	unsigned char arg[0x3fff + 2];
	unsigned char reply[KEVENT_IOC_ARG_MAX];
} L;

static int l_alloc_fail(void *ctx)
{
	unsigned int n = atomic_load(&L.countdown);

	/* the worker allocates too: count down atomically */
	while (n && !atomic_compare_exchange_weak(&L.countdown, &n, n - 1))
		;
	return n == 1;
}

static void l_complete(void *ctx, int result)
{
	struct lw *w = ctx;

	if (atomic_fetch_add(&w->done, 1))
		kf_fail("loose: waiter %td completed twice", w - L.w);
	if (result < -4095 || (result > 0 && (__u32)result > w->max_nr))
		kf_fail("loose: waiter %td completed with %d (max_nr %u)", w - L.w, result,
			w->max_nr);
}

static struct kcaller l_caller(unsigned int uid)
{
	return (struct kcaller){ .tid = 100 + (pid_t)uid, .tgid = 100 + (pid_t)uid,
				 .uid = (uid_t)uid, .gid = (gid_t)uid };
}

static bool l_alive(const struct lw *w)
{
	return w->used && !(atomic_load(&w->done) && w->put);
}

/* ---- checks: only what holds whatever the timing ---- */

/* What l_check_queue() adds up over the open queues. */
struct lsum {
	unsigned long long kev, rdy;
	unsigned long long kev3;	/* kevents on revision-3 queues */
};

static void l_check_queue(const struct lq *q, struct lsum *s)
{
	struct kcaller c = l_caller(q->owner);
	struct kdisp_plan plan;
	struct kevent_info info;
	unsigned int mask;

	if (kdisp_plan(q->kq, KEVENT_IOC_INFO, NULL, 0, &c, &plan) ||
	    kdisp_execute(q->kq, &plan, &c, &L.mem.ua, &info, NULL, NULL))
		kf_fail("loose: INFO failed");
	mask = kqueue_poll(q->kq);
	/*
	 * D50: on a revision-2 queue a READY with num 0 and no waiter latches
	 * a wake that raises POLLIN with nothing ready; whether one is latched
	 * here depends on the timing (it wakes a waiter if one is parked), and
	 * the public API does not show it.
	 */
	if (!!mask != !!info.queue_ready &&
	    !(mask && (m_rules_of(info.queue_revision) & M_RULE(MR_READY))))
		kf_fail("loose: poll %#x with %u ready", mask, info.queue_ready);
	if (info.queue_ready > info.queue_kevents || info.queue_kevents >= KEVENT_MAX_EVENTS)
		kf_fail("loose: %u ready of %u kevents", info.queue_ready, info.queue_kevents);
	if (q->ring && *(const __u32 *)q->ring >= KEVENT_MAX_EVENTS)
		kf_fail("loose: ring index %u", *(const __u32 *)q->ring);
	s->kev += info.queue_kevents;
	s->rdy += info.queue_ready;
	if (m_rules_of(info.queue_revision) & M_RULE(MR_USER))
		s->kev3 += info.queue_kevents;
}

/*
 * Every kevent of the test origin's types is attached to it, but a
 * revision-3 queue can also hold user events (KEVENT_USER, D62), which have
 * no source and so no origin: there the attached count can only be bounded
 * (this mode keeps no model to say how many of them are user events).
 */
static void l_check_attached(unsigned long long kevents, const struct lsum *s)
{
	unsigned long long att = ktest_attached();

	if (att > kevents || att + s->kev3 < kevents)
		kf_fail("loose: %llu attached, %llu kevents (%llu on revision-3 queues)",
			att, kevents, s->kev3);
}

static void l_check(void)
{
	unsigned long long waiters = 0, open = 0;
	struct lsum s = { 0 };
	struct kcore_counters c;
	unsigned int i;

	kcore_sync(L.core);
	for (i = 0; i < KF_NQ; i++)
		if (L.q[i].kq) {
			l_check_queue(&L.q[i], &s);
			open++;
		}
	for (i = 0; i < KF_NW; i++) {
		waiters += l_alive(&L.w[i]);
		if (L.w[i].used && !l_alive(&L.w[i]))
			L.w[i].used = false;
	}
	kcore_counters(L.core, &c);
	if (c.kevents != s.kev || c.ready != s.rdy || c.waiters != waiters || c.queues < open)
		kf_fail("loose: counters %llu/%llu/%llu/%llu, queues say %llu/%llu/%llu/%llu",
			(unsigned long long)c.kevents, (unsigned long long)c.ready,
			(unsigned long long)c.waiters, (unsigned long long)c.queues,
			s.kev, s.rdy, waiters, open);
	l_check_attached(c.kevents, &s);
}

/* ---- operations ---- */

static void l_open(struct kf_cur *c)
{
	unsigned int slot, uid, flags;
	struct kcaller owner;
	struct lq *q;

	if (!kf_u8(c, &slot) || !kf_u8(c, &uid) || !kf_u8(c, &flags))
		return;
	q = &L.q[slot % KF_NQ];
	if (q->kq)
		return;
	q->owner = uid % KF_NUID;
	q->ring = NULL;
	if (flags & KF_OPEN_RING) {
		q->ring = aligned_alloc(4096, KEVENT_RING_SIZE);
		if (!q->ring)
			abort();
		memset(q->ring, 0, KEVENT_RING_SIZE);
	}
	owner = l_caller(q->owner);
	if (kqueue_open(L.core, &owner, q->ring, &q->kq)) {
		free(q->ring);
		q->ring = NULL;
		q->kq = NULL;
	}
}

static void l_release(struct lq *q)
{
	kqueue_release(q->kq);
	free(q->ring);
	q->kq = NULL;
	q->ring = NULL;
}

static int l_free_waiter(void)
{
	int i;

	for (i = 0; i < KF_NW; i++)
		if (!L.w[i].used)
			return i;
	return -1;
}

/* Phase 2 with the limits of this mode: no timeouts, short waits in place. */
static void l_execute(struct lq *q, unsigned int uid, struct kdisp_plan *plan, bool park)
{
	struct kcaller c = l_caller(uid);
	struct lsum s = { 0 };
	struct kwaiter *kw = NULL;
	struct kwait_req wr;
	int wslot = -1, got;
	__u32 max = 0;

	if (plan->nr == KEVENT_IOC_NR_GET_EVENTS) {
		wslot = park ? l_free_waiter() : -1;
		max = plan->arg.get.max_nr;
		if (wslot >= 0)
			plan->arg.get.timeout_ns = KEVENT_TIMEOUT_INFINITE;
		else if (plan->arg.get.timeout_ns > LOOSE_WAIT_NS)
			plan->arg.get.timeout_ns = LOOSE_WAIT_NS;
	}
	if (wslot >= 0) {
		memset(&L.w[wslot], 0, sizeof(L.w[wslot]));
		L.w[wslot].max_nr = max;
		wr = (struct kwait_req){ &L.mem.ua, l_complete, &L.w[wslot] };
	}
	kcore_sync(L.core);
	l_check_queue(q, &s);
	got = kdisp_execute(q->kq, plan, &c, &L.mem.ua, L.reply, wslot >= 0 ? &wr : NULL, &kw);
	if (got == KDISP_PARKED) {
		if (wslot < 0)
			kf_fail("loose: parked without a kwait_req");
		L.w[wslot].used = true;
		L.w[wslot].kw = kw;
		return;
	}
	/* Nothing fires while we are in the call: only what was ready can come. */
	if (plan->nr == KEVENT_IOC_NR_GET_EVENTS && got > 0 &&
	    ((__u32)got > max || (unsigned long long)got > s.rdy))
		kf_fail("loose: GET_EVENTS returned %d, max_nr %u, %llu ready", got, max, s.rdy);
}

static void l_ioctl(unsigned int slot, unsigned int uid, unsigned int cmd,
		    const void *arg, size_t len, bool park)
{
	struct lq *q = &L.q[slot];
	struct kcaller c = l_caller(uid);
	struct kdisp_plan plan;

	if (!q->kq || kdisp_plan(q->kq, cmd, arg, len, &c, &plan))
		return;
	l_execute(q, uid, &plan, park);
}

static void l_put(void *ctx, size_t off, const void *src, size_t len)
{
	memcpy(L.arena + off, src, len);
}

static void l_struct(struct kf_cur *c, unsigned int op)
{
	struct kf_ioc io;

	if (!kf_decode_ioc(c, op, &io, L.arg, (__u64)(uintptr_t)L.arena))
		return;
	l_ioctl(io.slot, io.uid, io.cmd, io.arg_null ? NULL : L.arg, io.arg_len, io.park);
}

static void l_waiter(struct kf_cur *c, bool intr)
{
	unsigned int i;
	struct lw *w;

	if (!kf_u8(c, &i))
		return;
	w = &L.w[i % KF_NW];
	if (!w->used || w->put)
		return;
	if (intr) {
		kwaiter_interrupt(w->kw);
	} else {
		w->put = true;
		kwaiter_put(w->kw);
	}
}

static void l_fire(struct kf_cur *c, unsigned int op)
{
	unsigned int id0, id1, err;
	__u32 data = 0;
	__u64 id;

	if (!kf_u8(c, &id0) || !kf_u8(c, &id1))
		return;
	if (op == KF_OP_BREAK ? !kf_u8(c, &err) : !kf_u32(c, &data))
		return;
	id = (__u64)id1 << 32 | id0;
	if (op == KF_OP_BREAK)
		ktest_break(id, -(int)err);
	else if (op == KF_OP_FIRES)
		ktest_fire_stopped(id, data);
	else
		ktest_fire(id, data);
}

static bool l_op(struct kf_cur *c, unsigned int step)
{
	unsigned int op, a, b;
	__u32 x, y;

	if (!kf_u8(c, &op))
		return false;
	op %= KF_OP_NR;
	kf_at(step, op);
	switch (op) {
	case KF_OP_OPEN: l_open(c); break;
	case KF_OP_CLOSE:
		if (kf_u8(c, &a) && L.q[a % KF_NQ].kq)
			l_release(&L.q[a % KF_NQ]);
		break;
	case KF_OP_POKE:
	case KF_OP_RAW:
		kf_decode_poke(c, op, l_put, NULL);
		break;
	case KF_OP_FAULT:
		if (!kf_u8(c, &a) || !kf_u32(c, &x) || !kf_u32(c, &y))
			break;
		if (a & 1) {
			L.mem.wfault_lo = x < y ? (__u64)(uintptr_t)L.arena + x : 0;
			L.mem.wfault_hi = x < y ? (__u64)(uintptr_t)L.arena + y : 0;
		} else {
			L.mem.rfault_lo = x < y ? (__u64)(uintptr_t)L.arena + x : 0;
			L.mem.rfault_hi = x < y ? (__u64)(uintptr_t)L.arena + y : 0;
		}
		break;
	case KF_OP_CTL:
	case KF_OP_GET:
	case KF_OP_INFO:
	case KF_OP_SETABI:
	case KF_OP_IOCTL:
		l_struct(c, op);
		break;
	case KF_OP_FIRE:
	case KF_OP_BREAK:
	case KF_OP_FIRES:
		l_fire(c, op);
		break;
	case KF_OP_CLOCK:
		if (kf_u32(c, &x))
			kcore_run_deadlines(L.core);
		break;
	case KF_OP_RUN: kcore_run_deadlines(L.core); break;
	case KF_OP_INTR: l_waiter(c, true); break;
	case KF_OP_PUT: l_waiter(c, false); break;
	case KF_OP_EXEC: break;
	default:
		if (kf_u8(c, &a) && kf_u8(c, &b) && kf_u8(c, &op))
			atomic_store(&L.countdown, a);
		break;
	}
	return true;
}

static void l_start(const uint8_t *hdr, unsigned char *arena)
{
	struct kcore_config cfg;
	unsigned int t;

	memset(&L.q, 0, sizeof(L.q));
	memset(&L.w, 0, sizeof(L.w));
	atomic_store(&L.countdown, 0);
	L.arena = arena;
	ktest_mem_init(&L.mem, arena, KF_ARENA);
	ktest_origin_reset();
	memset(&cfg, 0, sizeof(cfg));
	cfg.backend = KEVENT_BACKEND_CORE;
	cfg.alloc_fail = l_alloc_fail;
	cfg.max_ctl_num = kf_path_max[hdr[KF_HDR_PATH] & 0xf];
	cfg.max_get_nr = kf_path_max[hdr[KF_HDR_PATH] >> 4];
	cfg.caps[KEVENT_LIMIT_KEVENTS] = hdr[KF_HDR_CAP_KEVENTS];
	cfg.caps[KEVENT_LIMIT_TIMERS] = hdr[KF_HDR_CAP_TIMERS];
	cfg.caps[KEVENT_LIMIT_FD_KEVENTS] = hdr[KF_HDR_CAP_FD];
	cfg.caps[KEVENT_LIMIT_MARKS] = hdr[KF_HDR_CAP_MARKS];
	cfg.caps[KEVENT_LIMIT_PARKED] = hdr[KF_HDR_CAP_PARKED];
	cfg.caps[KEVENT_LIMIT_QUEUES] = hdr[KF_HDR_CAP_QUEUES];
	for (t = 0; t < 4; t++)
		if (hdr[KF_HDR_ORIGINS] & (1u << t))
			cfg.origins[t] = &ktest_origin_ops;
	if (kcore_new(&cfg, &L.core))
		kf_fail("loose: kcore_new");
}

static void l_finish(void)
{
	struct kcore_counters c;
	unsigned int i, l;

	atomic_store(&L.countdown, 0);
	for (i = 0; i < KF_NQ; i++)
		if (L.q[i].kq)
			l_release(&L.q[i]);
	for (i = 0; i < KF_NW; i++)
		if (L.w[i].used && !L.w[i].put) {
			L.w[i].put = true;
			kwaiter_put(L.w[i].kw);
		}
	l_check();
	kcore_run_deadlines(L.core);
	kcore_sync(L.core);
	kcore_counters(L.core, &c);
	if (c.queues || c.kevents || c.waiters || c.ready)
		kf_fail("loose: left %llu queues %llu kevents %llu waiters %llu ready",
			(unsigned long long)c.queues, (unsigned long long)c.kevents,
			(unsigned long long)c.waiters, (unsigned long long)c.ready);
	for (i = 0; i < KF_NUID; i++)
		for (l = 0; l < KEVENT_LIMIT_NR; l++)
			if (kcore_uid_used(L.core, i, l))
				kf_fail("loose: uid %u limit %u still charged %u", i, l,
					kcore_uid_used(L.core, i, l));
	kcore_free(L.core);
	L.core = NULL;
}

void kf_loose_run(const uint8_t *data, size_t size, unsigned char *arena)
{
	struct kf_cur c = { data + KF_HDR_LEN, size - KF_HDR_LEN };
	unsigned int step;

	kf_at(0, KF_OP_NR);
	l_start(data, arena);
	for (step = 0; step < KF_MAX_STEPS && l_op(&c, step); step++)
		l_check();
	kf_at(step, KF_OP_NR);
	l_finish();
}
