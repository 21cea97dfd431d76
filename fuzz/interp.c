// SPDX-License-Identifier: GPL-2.0
/*
 * The one interpreter of fuzz programs (prog.h): the loop over operations,
 * each operation's fields, the model calls and the comparisons that do not
 * depend on what runs the program; the executor (interp.h) does the real
 * calls.  After every operation the model and the executor's view are
 * compared: every queue's INFO field by field, its poll() mask, its ring
 * (index and the slots written), every byte of user memory written.
 */
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"

#define UKSZ	sizeof(struct ukevent)
#define E	(KR.e)

struct kf_run KR;

static const char *const op_names[KF_OP_NR] = {
	"OPEN", "CLOSE", "POKE", "RAW", "FAULT", "CTL", "GET", "INFO",
	"SETABI", "IOCTL", "FIRE", "BREAK", "CLOCK", "RUN", "INTR", "PUT", "EXEC",
	"FIRES", "UID",
};

const char *kf_op_name(unsigned int op)
{
	return op < KF_OP_NR ? op_names[op] : "end";
}

void kf_at(unsigned int step, unsigned int op)
{
	KR.step = step;
	KR.op = op;
}

/* The first difference of a program stops it; the executor may stop more. */
void kf_differs(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (KR.failed)
		return;
	KR.failed = true;
	n = snprintf(KR.why, sizeof(KR.why), "step %u (%s): ", KR.step, kf_op_name(KR.op));
	va_start(ap, fmt);
	vsnprintf(KR.why + n, sizeof(KR.why) - (size_t)n, fmt, ap);
	va_end(ap);
	if (E->differs)
		E->differs(KR.why);
}

/* ---- checks after every operation ---- */

void kf_check_arena(size_t lo, size_t hi)
{
	if (!memcmp(KR.arena + lo, KR.m.arena + lo, hi - lo))
		return;
	for (size_t i = lo; i < hi; i++)
		if (KR.arena[i] != KR.m.arena[i]) {
			kf_differs("user memory byte %zu (entry %zu, offset %zu): got %#x, "
				   "expected %#x", i, i / UKSZ, i % UKSZ, KR.arena[i],
				   KR.m.arena[i]);
			return;
		}
}

/* The index and the slots written since the last check (D3). */
static void check_ring(const struct mq *q)
{
	unsigned int n = q->ring_dirty < KEVENT_MAX_EVENTS ? q->ring_dirty : KEVENT_MAX_EVENTS;
	__u32 idx = __atomic_load_n((const __u32 *)q->ring, __ATOMIC_ACQUIRE);

	EXPECT_EQ("ring index (D3)", idx, q->ring_idx);
	for (unsigned int i = 1; i <= n && !KR.failed; i++) {
		unsigned int s = (q->ring_idx + KEVENT_MAX_EVENTS - i) % KEVENT_MAX_EVENTS;
		const struct mukevent *g = (const void *)(q->ring + KEVENT_RING_SLOT_OFFSET(s));
		const struct mukevent *e = (const void *)(q->img + KEVENT_RING_SLOT_OFFSET(s));

		if (memcmp(g, e, sizeof(*g)))
			kf_differs("ring slot %u: got id %u/%u flags %#x pad %#x, expected "
				   "%u/%u %#x", s, g->id.raw[0], g->id.raw[1], g->ret_flags,
				   g->__pad, e->id.raw[0], e->id.raw[1], e->ret_flags);
	}
}

/* Every byte, headers and padding included (section 5.1), at release. */
static void check_ring_full(const struct mq *q)
{
	if (memcmp(q->ring, q->img, KEVENT_RING_SIZE))
		for (size_t i = 0; i < KEVENT_RING_SIZE; i++)
			if (q->ring[i] != q->img[i]) {
				kf_differs("ring byte %zu: got %#x, expected %#x", i, q->ring[i],
					   q->img[i]);
				return;
			}
}

void kf_check_info(unsigned int slot, unsigned int uid, const struct kevent_info *got,
		   size_t usize)
{
	struct kevent_info exp;

	m_info(&KR.m, (int)slot, uid, usize, &exp);
	if (E->info_expect)
		E->info_expect(got, &exp);
	if (!memcmp(got, &exp, exp.size))
		return;
	for (size_t i = 0; i < exp.size; i += 4)
		if (memcmp((const char *)got + i, (const char *)&exp + i, 4)) {
			__u32 g, e;

			memcpy(&g, (const char *)got + i, 4);
			memcpy(&e, (const char *)&exp + i, 4);
			kf_differs("INFO byte %zu (%s): got %u, expected %u", i,
				   i < offsetof(struct kevent_info, limits) ? "header" :
				   i < offsetof(struct kevent_info, live_queues) ? "limits" :
				   "live/parked", g, e);
			return;
		}
}

void kf_check_info_reply(unsigned int slot, unsigned int uid, const unsigned char *reply,
			 size_t usize)
{
	kf_check_info(slot, uid, (const struct kevent_info *)reply, usize);
	/* copy_struct_to_user: the caller's larger struct gets a zero tail. */
	for (size_t i = sizeof(struct kevent_info); i < usize; i++)
		if (reply[i]) {
			kf_differs("INFO reply byte %zu not zeroed", i);
			return;
		}
}

/* INFO as any client would ask it, poll, the ring. */
static void check_queue(unsigned int slot)
{
	struct mq *q = KR.m.slot[slot];
	struct kevent_info info;
	unsigned int mask;
	int err = E->info(slot, &info);

	if (err) {
		kf_differs("INFO of q%u: %s", slot, strerror(-err));
		return;
	}
	kf_check_info(slot, q->owner, &info, sizeof(info));
	mask = E->poll(slot);
	EXPECT_EQ("poll mask (2.9, D50)", mask, q->nrdy || q->latched ? POLLIN | POLLRDNORM : 0);
	if (E->queue_seen)
		E->queue_seen(slot, &info, mask);
	if (q->ring)
		check_ring(q);
	q->ring_dirty = 0;
}

void kf_check_all(void)
{
	m_reap(&KR.m);
	if (E->check)
		E->check();
	for (unsigned int i = 0; i < KF_NQ && !KR.failed; i++)
		if (KR.m.slot[i])
			check_queue(i);
	if (KR.m.dirty_lo < KR.m.dirty_hi) {
		kf_check_arena(KR.m.dirty_lo, KR.m.dirty_hi);
		if (E->mem_seen)
			E->mem_seen(KR.m.dirty_lo, KR.m.dirty_hi);
	}
	KR.m.dirty_lo = KF_ARENA;
	KR.m.dirty_hi = 0;
}

/* ---- operations: one place each ---- */

/* An operation the executor has no form for: its fields skipped whole. */
static bool no_form(struct kf_cur *c, bool form, size_t len)
{
	uint8_t b[16];

	if (!form)
		kf_bytes(c, b, len);
	return !form;
}

static void op_open(struct kf_cur *c)
{
	unsigned int slot, uid, flags;

	if (!kf_u8(c, &slot) || !kf_u8(c, &uid) || !kf_u8(c, &flags))
		return;
	slot %= KF_NQ;
	if (!KR.m.slot[slot])
		E->open(slot, uid % KF_NUID, flags);
}

static void release_slot(unsigned int slot)
{
	const struct mq *q = KR.m.slot[slot];

	if (q->ring)
		check_ring_full(q);
	E->release(slot);
	m_release(&KR.m, (int)slot);
}

static void op_close(struct kf_cur *c)
{
	unsigned int slot;

	if (!kf_u8(c, &slot) || !KR.m.slot[slot % KF_NQ])
		return;
	release_slot(slot % KF_NQ);
	if (E->closed)
		E->closed();
}

void kf_put_both(void *ctx, size_t off, const void *src, size_t len)
{
	(void)ctx;
	memcpy(KR.arena + off, src, len);
	m_poke(&KR.m, off, src, len);
}

static void op_fault(struct kf_cur *c)
{
	unsigned int which;
	__u32 lo, hi;
	__u64 a, b;

	if (no_form(c, E->fault, 9) ||
	    !kf_u8(c, &which) || !kf_u32(c, &lo) || !kf_u32(c, &hi))
		return;
	a = lo < hi ? kf_uaddr((__u64)(uintptr_t)KR.arena, lo) : 0;
	b = lo < hi ? kf_uaddr((__u64)(uintptr_t)KR.arena, hi) : 0;
	if ((which & 3) == 3) {
		/* the late window counts the writes from here (equal: checked) */
		KR.m.llo = a;
		KR.m.lhi = b;
		KR.m.late_after = KR.m.nwrites + (which >> 2);
		return;
	}
	*(which & 1 ? &KR.m.wlo : &KR.m.rlo) = a;
	*(which & 1 ? &KR.m.whi : &KR.m.rhi) = b;
	E->fault(which, a, b);
}

static void op_ioc(struct kf_cur *c, unsigned int op)
{
	struct kf_ioc io;
	struct margs ma;
	int exp;

	if (!kf_decode_ioc(c, op, &io, KR.arg, (__u64)(uintptr_t)KR.arena) ||
	    !KR.m.slot[io.slot] || (E->ioc_args && !E->ioc_args(&io, KR.arg)))
		return;
	exp = m_plan(&KR.m, (int)io.slot, io.cmd, io.arg_null ? NULL : KR.arg, io.arg_len, &ma);
	E->ioctl(&io, KR.arg, exp, &ma);
}

static void op_fire(struct kf_cur *c, bool broken)
{
	unsigned int id0, id1, err;
	__u32 data;

	if (!kf_u8(c, &id0) || !kf_u8(c, &id1))
		return;
	if (broken ? !kf_u8(c, &err) : !kf_u32(c, &data))
		return;
	E->fire(id0, id1, broken ? err : data, broken);
}

static void op_fire_stopped(struct kf_cur *c)
{
	unsigned int id0, id1;
	__u32 data;

	if (no_form(c, E->fires, 6) || !kf_u8(c, &id0) || !kf_u8(c, &id1) || !kf_u32(c, &data))
		return;
	E->fires(id0, id1, data);
}

static void op_clock(struct kf_cur *c)
{
	__u32 us;

	if (!no_form(c, E->clock, 4) && kf_u32(c, &us))
		E->clock(us);
}

/* INTR, PUT: a parked waiter's handle, the transport's until it puts it. */
static void op_waiter(struct kf_cur *c, bool intr)
{
	unsigned int i;
	struct mw *w;

	if (no_form(c, intr ? E->intr != NULL : E->put != NULL, 1) || !kf_u8(c, &i))
		return;
	w = &KR.m.w[i % KF_NW];
	if (!w->used || w->put)
		return;
	if (intr) {
		m_intr(&KR.m, (int)(i % KF_NW));
		E->intr(i % KF_NW);
	} else {
		m_put(&KR.m, (int)(i % KF_NW));
		E->put(i % KF_NW);
	}
}

static void op_uid(struct kf_cur *c)
{
	unsigned int uid, limit, act;

	if (no_form(c, E->uid, 3) || !kf_u8(c, &uid) || !kf_u8(c, &limit) || !kf_u8(c, &act))
		return;
	/* limit: one beyond the last is -EINVAL */
	E->uid(uid % KF_NUID, limit % (KEVENT_LIMIT_NR + 1), act % 4);
}

static bool run_op(struct kf_cur *c)
{
	unsigned int op;

	if (!kf_u8(c, &op))
		return false;
	KR.op = op % KF_OP_NR;
	switch (KR.op) {
	case KF_OP_OPEN: op_open(c); break;
	case KF_OP_CLOSE: op_close(c); break;
	case KF_OP_POKE:
	case KF_OP_RAW: kf_decode_poke(c, KR.op, kf_put_both, NULL); break;
	case KF_OP_FAULT: op_fault(c); break;
	case KF_OP_CTL:
	case KF_OP_GET:
	case KF_OP_INFO:
	case KF_OP_SETABI:
	case KF_OP_IOCTL: op_ioc(c, KR.op); break;
	case KF_OP_FIRE: op_fire(c, false); break;
	case KF_OP_BREAK: op_fire(c, true); break;
	case KF_OP_CLOCK: op_clock(c); break;
	case KF_OP_RUN: if (E->run) E->run(); break;
	case KF_OP_INTR: op_waiter(c, true); break;
	case KF_OP_PUT: op_waiter(c, false); break;
	case KF_OP_EXEC: if (E->exec) E->exec(); break;
	case KF_OP_FIRES: op_fire_stopped(c); break;
	default: op_uid(c); break;
	}
	return true;
}

/* ---- one program ---- */

/* The model's objects: whatever a difference left behind. */
static void free_model(void)
{
	for (int i = 0; i < KF_NW; i++)
		KR.m.w[i].used = false;
	while (KR.m.objs.next != &KR.m.objs) {
		struct mlink *o = KR.m.objs.next;

		o->prev->next = o->next;
		o->next->prev = o->prev;
		free((char *)o - offsetof(struct mq, obj));
	}
}

bool kf_run_program(const uint8_t *data, size_t size)
{
	struct kf_cur c = { data + KF_HDR_LEN, size - KF_HDR_LEN };

	memset(KR.arena, 0, KF_ARENA);
	m_init(&KR.m, data, (__u64)(uintptr_t)KR.arena);
	KR.failed = false;
	KR.why[0] = '\0';
	E->start(data);
	for (KR.step = 0; KR.step < KF_MAX_STEPS && !KR.failed && run_op(&c); KR.step++) {
		KR.ops++;
		kf_check_all();
	}
	KR.op = KF_OP_NR;
	for (unsigned int i = 0; i < KF_NQ; i++)
		if (KR.m.slot[i])
			release_slot(i);
	E->finish();
	if (!KR.failed)
		kf_check_arena(0, KF_ARENA);
	E->teardown();
	free_model();
	return KR.failed;
}
