// SPDX-License-Identifier: GPL-2.0
/*
 * The in-process fuzz target: LLVMFuzzerTestOneInput() runs one program
 * (prog.h) against a deterministic core and the shadow model (model.h) and
 * aborts on the first difference, naming the step.  Every user-memory
 * access the core makes is checked against the ranges kdisp_plan()
 * announced, since a transport fetches exactly those (kcore.h).
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kfuzz.h"
#include "model.h"
#include "test-origin.h"
#include "test-uaccess.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define UKSZ	sizeof(struct ukevent)
#define ARGMAX	(0x3fff + 2)

/* A struct kuaccess that holds the core to the plan's ranges. */
struct kf_ua {
	struct kuaccess ua;
	struct kdisp_range in, out;
	const char *who;
	bool direct;	/* a ring call (D53): no planned range, the model says -EFAULT */
};

/* A plan whose execution an EXEC operation does later. */
struct kf_deferred {
	bool valid;
	unsigned int slot, uid;
	bool park;
	struct mq *q;
	struct kdisp_plan plan;
	struct margs ma;
};

struct kf {
	struct model m;				/* large: static, not on the stack */
	unsigned char arena[KF_ARENA] __attribute__((aligned(64)));
	struct ktest_mem mem;
	struct kcore *core;
	__u64 now;
	unsigned int step, op;
	bool trace;				/* KFUZZ_TRACE set: log every call */
	struct kf_deferred def;
	struct kf_ua call_ua;
	struct kf_ua wait_ua[KF_NW];
	unsigned char arg[ARGMAX];
	unsigned char reply[KEVENT_IOC_ARG_MAX];
	unsigned int alloc_countdown;		/* n > 0: the n-th allocation fails */
	unsigned long nwrites;			/* user-memory writes the core made */
};

static struct kf K;

/*
 * KFUZZ_ERRNO_LOG=FILE: every -errno the dispatcher returned, and every
 * -errno an ADD put in an entry's ret_data[1], appended as "IOCTL WHERE N"
 * lines for docs/check-man.py's run-time comparison with the ERRORS
 * sections.  (MODIFY/REMOVE entries are left out: an unmatched one keeps
 * the caller's ret_data, D38, and the fuzzer's are random.)
 */
static void note_errno(unsigned int nr, const char *where, int err)
{
	static const char *path;
	static bool looked;
	FILE *f;

	if (!looked) {
		path = getenv("KFUZZ_ERRNO_LOG");
		looked = true;
	}
	if (!path || err >= 0 || err < -4095)
		return;
	f = fopen(path, "a");
	if (f) {
		fprintf(f, "%u %s %d\n", nr, where, -err);
		fclose(f);
	}
}

static void note_add_entries(const struct kdisp_plan *plan, int got)
{
	static struct ukevent_ext uk[KEVENT_MAX_EVENTS];
	/* D60: KEVENT_CTL_EXT entries are 80 bytes */
	size_t esz = plan->arg.ctl.ioc_flags & KEVENT_CTL_EXT ? sizeof(uk[0]) : sizeof(uk[0].ev);

	if (plan->nr != KEVENT_IOC_NR_CTL || plan->arg.ctl.cmd != KEVENT_CTL_ADD || got <= 0 ||
	    got > KEVENT_MAX_EVENTS || !getenv("KFUZZ_ERRNO_LOG"))
		return;
	__u64 off = plan->arg.ctl.events - (__u64)(uintptr_t)K.mem.base;
	size_t len = (size_t)got * esz;

	/* Straight from the arena: the accessor would count (and may fault). */
	if (plan->arg.ctl.events < (__u64)(uintptr_t)K.mem.base || off > K.mem.len ||
	    len > K.mem.len - off)
		return;
	memcpy(uk, K.mem.base + off, len);
	for (int i = 0; i < got; i++) {
		const struct ukevent *e = (const void *)((const char *)uk + (size_t)i * esz);

		if (e->ret_flags & KEVENT_RET_BROKEN)
			note_errno(plan->nr, "entry", (int)e->ret_data[1]);
	}
}

static const char *const op_names[KF_OP_NR] = {
	"OPEN", "CLOSE", "POKE", "RAW", "FAULT", "CTL", "GET", "INFO",
	"SETABI", "IOCTL", "FIRE", "BREAK", "CLOCK", "RUN", "INTR", "PUT", "EXEC",
	"FIRES", "UID",
};

void kf_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "kfuzz: step %u (%s): ", K.step,
		K.op < KF_OP_NR ? op_names[K.op] : "end");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

void kf_at(unsigned int step, unsigned int op)
{
	K.step = step;
	K.op = op;
}

#define EXPECT_EQ(what, got, exp) do {					\
	long long g_ = (long long)(got), e_ = (long long)(exp);		\
	if (g_ != e_)							\
		kf_fail("%s: got %lld, expected %lld", what, g_, e_);	\
} while (0)

/* ---- the plan-checking user-memory accessor ---- */

static bool within(const struct kdisp_range *r, __u64 a, size_t len)
{
	return a >= r->addr && len <= r->len && a - r->addr <= r->len - len;
}

static int ua_read(void *ctx, void *dst, __u64 a, size_t len)
{
	struct kf_ua *u = ctx;

	if (!within(&u->in, a, len) && u->direct)
		return -EFAULT;
	if (!within(&u->in, a, len))
		kf_fail("%s read %zu bytes at %#llx outside the plan's in range",
			u->who, len, (unsigned long long)a);
	return K.mem.ua.read(K.mem.ua.ctx, dst, a, len);
}

static int ua_write(void *ctx, __u64 a, const void *src, size_t len)
{
	struct kf_ua *u = ctx;

	if (!within(&u->out, a, len) && u->direct)
		return -EFAULT;
	if (!within(&u->out, a, len))
		kf_fail("%s wrote %zu bytes at %#llx outside the plan's out range",
			u->who, len, (unsigned long long)a);
	/* The late window is ours, not ktest_mem's: see fuzz/README.md. */
	if (m_late_fault(&K.m, K.nwrites++, a, len))
		return -EFAULT;
	return K.mem.ua.write(K.mem.ua.ctx, a, src, len);
}

static void ua_set(struct kf_ua *u, const struct kdisp_plan *p, const char *who)
{
	u->ua = (struct kuaccess){ ua_read, ua_write, u };
	/* The core plans at most one range per direction today. */
	u->in = p->nin ? p->in[0] : (struct kdisp_range){ 0, 0 };
	u->out = p->nout ? p->out[0] : (struct kdisp_range){ 0, 0 };
	u->who = who;
	/*
	 * RING_INIT, WAIT and COMMIT reach the ring in the caller's memory
	 * directly (D53) and plan no range for it: in process, every ring
	 * access faults, as the model has it (a ring never registers here).
	 */
	u->direct = p->nr >= KEVENT_IOC_NR_RING_INIT && p->nr <= KEVENT_IOC_NR_COMMIT;
}

/* ---- callbacks from the core ---- */

static int kf_alloc_fail(void *ctx)
{
	return K.alloc_countdown && --K.alloc_countdown == 0;
}

static __u64 kf_clock(void *ctx)
{
	return *(__u64 *)ctx;
}

static void kf_notify(void *ctx)
{
	struct mq *q = ctx;

	q->notify_seen++;
}

static void kf_complete(void *ctx, int result)
{
	struct mw *w = ctx;

	if (w->real_done)
		kf_fail("waiter %td completed twice", w - K.m.w);
	w->real_done = true;
	w->real_result = result;
	note_errno(KEVENT_IOC_NR_GET_EVENTS, "call", result);
}

/*
 * The racing origin (prog.h): fires from inside attach/modify/detach.
 * Keeps its copy of id.raw[0] and event in the kevent's data pointer, since
 * it may read the ukevent only in attach() and modify() (origin.h).
 */
static unsigned long race_attached;

static void race_fire(struct kitem *k, __u32 d0)
{
	struct korigin_result res = { 0, { d0, 0 } };

	korigin_fire(k, &res);
}

static int race_answer(const struct ukevent *uk, __u32 fail, __u32 ready,
		       struct korigin_result *res, __u32 d0)
{
	if (uk->event & fail)
		return -EIO;
	if (uk->event & ready) {
		res->ret_data[0] = d0;
		return 1;
	}
	return 0;
}

static void race_keep(struct kitem *k, const struct ukevent *uk)
{
	korigin_set_data(k, (void *)(uintptr_t)((__u64)uk->id.raw[0] << 32 | uk->event));
}

static int race_attach(struct kitem *k, const struct kcaller *c, struct korigin_result *res)
{
	const struct ukevent *uk = korigin_ukevent(k);
	int r;

	race_keep(k, uk);
	if (uk->event & KF_RO_FIRE_ATTACH)
		race_fire(k, uk->id.raw[0]);
	r = race_answer(uk, KTEST_FAIL_ATTACH, KTEST_READY_AT_ADD, res, uk->id.raw[0]);
	if (!r)
		race_attached++;
	return r;
}

static int race_modify(struct kitem *k, struct korigin_result *res)
{
	const struct ukevent *uk = korigin_ukevent(k);

	race_keep(k, uk);
	if (uk->event & KF_RO_FIRE_MODIFY)
		race_fire(k, uk->id.raw[0]);
	return race_answer(uk, KTEST_FAIL_MODIFY, KTEST_READY_AT_MODIFY, res, 1);
}

static void race_detach(struct kitem *k)
{
	__u64 kept = (__u64)(uintptr_t)korigin_data(k);

	/* A fire that got in just before the detach took the origin's lock. */
	if ((__u32)kept & KF_RO_FIRE_DETACH)
		race_fire(k, (__u32)(kept >> 32));
	if (!race_attached)
		kf_fail("racing origin: detach without attach");
	race_attached--;
}

static const struct korigin_ops race_ops = {
	.name = "kfuzz-racing",
	.attach = race_attach,
	.modify = race_modify,
	.detach = race_detach,
};

static struct kcaller caller_of(unsigned int uid)
{
	return (struct kcaller){ .tid = 100 + (pid_t)uid, .tgid = 100 + (pid_t)uid,
				 .uid = (uid_t)uid, .gid = (gid_t)uid };
}

/* ---- checks after every step ---- */

static void check_arena(size_t lo, size_t hi)
{
	size_t i;

	if (!memcmp(K.arena + lo, K.m.arena + lo, hi - lo))
		return;
	for (i = lo; i < hi; i++)
		if (K.arena[i] != K.m.arena[i])
			kf_fail("user memory byte %zu: got %#x, expected %#x",
				i, K.arena[i], K.m.arena[i]);
}

static void check_slot(const struct mq *q, unsigned int s)
{
	const struct mukevent *got = (const void *)(q->ring + KEVENT_RING_SLOT_OFFSET(s));
	const struct mukevent *exp = (const void *)(q->img + KEVENT_RING_SLOT_OFFSET(s));

	if (memcmp(got, exp, sizeof(*got)))
		kf_fail("ring slot %u: got id %u/%u flags %#x pad %#x, expected %u/%u %#x",
			s, got->id.raw[0], got->id.raw[1], got->ret_flags, got->__pad,
			exp->id.raw[0], exp->id.raw[1], exp->ret_flags);
}

/* The index and the slots written since the last check (D3). */
static void check_ring(const struct mq *q)
{
	unsigned int n = q->ring_dirty < KEVENT_MAX_EVENTS ? q->ring_dirty : KEVENT_MAX_EVENTS;
	unsigned int idx = __atomic_load_n((__u32 *)q->ring, __ATOMIC_ACQUIRE), i;

	EXPECT_EQ("ring index (D3)", idx, q->ring_idx);
	for (i = 1; i <= n; i++)
		check_slot(q, (q->ring_idx + KEVENT_MAX_EVENTS - i) % KEVENT_MAX_EVENTS);
}

/* Every byte, headers and padding included (section 5.1). */
static void check_ring_full(const struct mq *q)
{
	size_t i;

	if (!memcmp(q->ring, q->img, KEVENT_RING_SIZE))
		return;
	for (i = 0; i < KEVENT_RING_SIZE; i++)
		if (q->ring[i] != q->img[i])
			kf_fail("ring byte %zu: got %#x, expected %#x", i, q->ring[i], q->img[i]);
}

static void check_info(struct mq *q, unsigned int uid, const struct kevent_info *got,
		       size_t usize)
{
	struct kevent_info exp;

	m_info(&K.m, q->slot, uid, usize, &exp);
	if (memcmp(got, &exp, exp.size)) {
		fprintf(stderr, "INFO got/expected: kevents %u/%u ready %u/%u parked %u/%u"
			" live q %llu/%llu k %llu/%llu w %llu/%llu\n",
			got->queue_kevents, exp.queue_kevents, got->queue_ready, exp.queue_ready,
			got->queue_parked, exp.queue_parked,
			(unsigned long long)got->live_queues, (unsigned long long)exp.live_queues,
			(unsigned long long)got->live_kevents, (unsigned long long)exp.live_kevents,
			(unsigned long long)got->live_waiters, (unsigned long long)exp.live_waiters);
		kf_fail("INFO differs from the model");
	}
}

/* INFO through the dispatcher, as any client would ask it. */
static void check_queue(struct mq *q)
{
	struct kcaller c = caller_of(q->owner);
	struct kdisp_plan plan;
	struct kevent_info info;
	unsigned int mask;

	EXPECT_EQ("INFO plan", kdisp_plan(q->kq, KEVENT_IOC_INFO, NULL, 0, &c, &plan), 0);
	EXPECT_EQ("INFO", kdisp_execute(q->kq, &plan, &c, &K.mem.ua, &info, NULL, NULL), 0);
	check_info(q, q->owner, &info, sizeof(info));
	mask = kqueue_poll(q->kq);
	EXPECT_EQ("poll mask", mask, q->nrdy || q->latched ? POLLIN | POLLRDNORM : 0);	/* D50 */
	EXPECT_EQ("notify calls", q->notify_seen, q->notify_exp);
	if (q->ring)
		check_ring(q);
	q->ring_dirty = 0;
}

static void check_waiters(void)
{
	unsigned int i;

	for (i = 0; i < KF_NW; i++) {
		struct mw *w = &K.m.w[i];

		if (!w->used)
			continue;
		if (w->real_done != w->exp_done)
			kf_fail("waiter %u: completed %d, model says %d", i, w->real_done,
				w->exp_done);
		if (w->real_done)
			EXPECT_EQ("waiter result", w->real_result, w->exp_result);
		if (w->real_done && w->put)
			w->used = false;
	}
}

static void check_counters(void)
{
	struct kcore_counters got, exp;
	unsigned int u, l;

	kcore_counters(K.core, &got);
	m_counters(&K.m, &exp);
	EXPECT_EQ("live queues", got.queues, exp.queues);
	EXPECT_EQ("live kevents", got.kevents, exp.kevents);
	EXPECT_EQ("live waiters", got.waiters, exp.waiters);
	EXPECT_EQ("ready kevents", got.ready, exp.ready);
	EXPECT_EQ("attached to the test origin", ktest_attached(), K.m.attached);
	EXPECT_EQ("attach calls", ktest_attach_calls(), K.m.attach_calls);
	EXPECT_EQ("detach calls", ktest_detach_calls(), K.m.detach_calls);
	EXPECT_EQ("attached to the racing origin", race_attached, K.m.race_attached);
	EXPECT_EQ("user-memory writes", K.nwrites, K.m.nwrites);
	for (u = 0; u < KF_NUID; u++)
		for (l = 0; l < KEVENT_LIMIT_NR; l++)
			if (kcore_uid_used(K.core, u, l) != K.m.used[u][l])
				kf_fail("uid %u limit %u used %u, expected %u", u, l,
					kcore_uid_used(K.core, u, l), K.m.used[u][l]);
}

static void check_all(void)
{
	unsigned int i;

	m_reap(&K.m);
	check_waiters();
	check_counters();
	for (i = 0; i < KF_NQ; i++)
		if (K.m.slot[i])
			check_queue(K.m.slot[i]);
	if (K.m.dirty_lo < K.m.dirty_hi)
		check_arena(K.m.dirty_lo, K.m.dirty_hi);
	K.m.dirty_lo = KF_ARENA;
	K.m.dirty_hi = 0;
}

/* ---- operations ---- */

static void op_open(struct kf_cur *c)
{
	unsigned int slot, uid, flags;
	struct kcaller owner;
	unsigned char *ring = NULL;
	struct kqueue *kq;
	int exp, got;

	if (!kf_u8(c, &slot) || !kf_u8(c, &uid) || !kf_u8(c, &flags))
		return;
	slot %= KF_NQ;
	uid %= KF_NUID;
	if (K.m.slot[slot])
		return;
	if (flags & KF_OPEN_RING) {
		ring = aligned_alloc(4096, KEVENT_RING_SIZE);
		if (!ring)
			abort();
		memset(ring, 0, KEVENT_RING_SIZE);
	}
	owner = caller_of(uid);
	exp = m_open(&K.m, (int)slot, uid, ring, flags & KF_OPEN_NOTIFY);
	K.alloc_countdown = (flags >> KF_OPEN_ENOMEM_SHIFT) & 3;
	got = kqueue_open(K.core, &owner, ring, &kq);
	/* An allocation of open() failed: it must fail cleanly (D19 spirit). */
	if (!exp && !K.alloc_countdown && (flags >> KF_OPEN_ENOMEM_SHIFT) & 3) {
		exp = -ENOMEM;
		m_open_undo(&K.m, (int)slot);
	}
	K.alloc_countdown = 0;
	EXPECT_EQ("kqueue_open", got, exp);
	if (got) {
		free(ring);
		return;
	}
	K.m.slot[slot]->kq = kq;
	if (flags & KF_OPEN_NOTIFY)
		kqueue_set_notify(kq, kf_notify, K.m.slot[slot]);
}

static void release_slot(unsigned int slot)
{
	struct mq *q = K.m.slot[slot];
	unsigned char *ring = q->ring;

	if (ring)
		check_ring_full(q);
	if (K.def.valid && K.def.q == q)
		K.def.valid = false;
	m_release(&K.m, (int)slot);
	kqueue_release(q->kq);
	free(ring);
}

static void op_close(struct kf_cur *c)
{
	unsigned int slot;

	if (!kf_u8(c, &slot))
		return;
	slot %= KF_NQ;
	if (K.m.slot[slot])
		release_slot(slot);
}

static void put_both(void *ctx, size_t off, const void *src, size_t len)
{
	memcpy(K.arena + off, src, len);
	m_poke(&K.m, off, src, len);
}

static void op_fault(struct kf_cur *c)
{
	unsigned int which;
	__u32 lo, hi;
	__u64 a, b;

	if (!kf_u8(c, &which) || !kf_u32(c, &lo) || !kf_u32(c, &hi))
		return;
	a = lo < hi ? kf_uaddr((__u64)(uintptr_t)K.arena, lo) : 0;
	b = lo < hi ? kf_uaddr((__u64)(uintptr_t)K.arena, hi) : 0;
	if ((which & 3) == 3) {
		K.m.llo = a;
		K.m.lhi = b;
		K.m.late_after = K.nwrites + (which >> 2);
	} else if (which & 1) {
		K.mem.wfault_lo = K.m.wlo = a;
		K.mem.wfault_hi = K.m.whi = b;
	} else {
		K.mem.rfault_lo = K.m.rlo = a;
		K.mem.rfault_hi = K.m.rhi = b;
	}
}

static int free_waiter_slot(void)
{
	int i;

	for (i = 0; i < KF_NW; i++)
		if (!K.m.w[i].used)
			return i;
	return -1;
}

static void check_reply(struct mq *q, unsigned int uid, const struct margs *ma)
{
	size_t i;

	check_info(q, uid, (const struct kevent_info *)K.reply, ma->usize);
	/* copy_struct_to_user: the caller's larger struct gets a zero tail. */
	for (i = sizeof(struct kevent_info); i < ma->usize; i++)
		if (K.reply[i])
			kf_fail("INFO reply byte %zu not zeroed", i);
}

/* GET_EVENTS never returns more than max_nr nor more than were ready. */
static void check_get_bound(const struct margs *ma, int got, unsigned int ready)
{
	if (ma->nr != KEVENT_IOC_NR_GET_EVENTS || got < 0 || got == KDISP_PARKED)
		return;
	if ((unsigned int)got > ma->a.get.max_nr || (unsigned int)got > ready)
		kf_fail("GET_EVENTS returned %d: max_nr %u, %u ready", got,
			ma->a.get.max_nr, ready);
}

/* Phase 2 on the real core and on the model. */
static void execute(unsigned int slot, unsigned int uid, struct kdisp_plan *plan,
		    const struct margs *ma, bool park)
{
	struct mq *q = K.m.slot[slot];
	struct kcaller c = caller_of(uid);
	struct kwaiter *kw = NULL;
	struct kwait_req wr;
	unsigned int ready = q->nrdy;
	int exp, got, wslot;

	wslot = park ? free_waiter_slot() : -1;
	exp = m_execute(&K.m, (int)slot, uid, ma, wslot);
	ua_set(&K.call_ua, plan, "the call");
	if (wslot >= 0) {
		wr = (struct kwait_req){ &K.wait_ua[wslot].ua, kf_complete, &K.m.w[wslot] };
		/* The accessor a parked waiter uses later: the plan of its call. */
		ua_set(&K.wait_ua[wslot], plan, "a parked GET_EVENTS");
	}
	memset(K.reply, 0xa5, sizeof(K.reply));
	got = kdisp_execute(q->kq, plan, &c, &K.call_ua.ua, K.reply,
			    wslot >= 0 ? &wr : NULL, &kw);
	EXPECT_EQ("kdisp_execute", got, exp);
	note_errno(plan->nr, "call", got);
	note_add_entries(plan, got);
	if (K.trace)
		fprintf(stderr, "kfuzz: step %u: execute %d\n", K.step, got);
	check_get_bound(ma, got, ready);
	if (got == KDISP_PARKED)
		K.m.w[wslot].kw = kw;
	else if (ma->nr == KEVENT_IOC_NR_INFO)
		check_reply(q, uid, ma);
}

/* Plan one ioctl on the real core and on the model, then run or defer it. */
static void do_ioctl(unsigned int slot, unsigned int uid, unsigned int cmd,
		     const void *arg, size_t arg_len, bool park, bool defer)
{
	struct mq *q = K.m.slot[slot];
	struct kcaller c = caller_of(uid);
	struct kdisp_plan plan;
	struct margs ma;
	int exp, got;

	if (!q)
		return;
	exp = m_plan(&K.m, (int)slot, cmd, arg, arg_len, &ma);
	got = kdisp_plan(q->kq, cmd, arg, arg_len, &c, &plan);
	EXPECT_EQ("kdisp_plan", got, exp);
	note_errno(_IOC_NR(cmd), "call", got);
	if (K.trace)
		fprintf(stderr, "kfuzz: step %u: cmd %#x on q%u: plan %d\n", K.step, cmd, slot, got);
	if (got)
		return;
	if (ma.nr == KEVENT_IOC_NR_INFO)
		EXPECT_EQ("INFO reply_len", plan.reply_len, ma.usize);
	if (!defer) {
		execute(slot, uid, &plan, &ma, park);
		return;
	}
	K.def = (struct kf_deferred){ true, slot, uid, park, q, plan, ma };
}

static void op_exec(void)
{
	struct kf_deferred *d = &K.def;

	/* The kernel holds the file during an ioctl: a release drops the plan. */
	if (!d->valid)
		return;
	d->valid = false;
	execute(d->slot, d->uid, &d->plan, &d->ma, d->park);
}

static void op_ioc(struct kf_cur *c, unsigned int op)
{
	struct kf_ioc io;

	if (kf_decode_ioc(c, op, &io, K.arg, (__u64)(uintptr_t)K.arena))
		do_ioctl(io.slot, io.uid, io.cmd, io.arg_null ? NULL : K.arg, io.arg_len,
			 io.park, io.defer);
}

static void op_fire(struct kf_cur *c, bool broken)
{
	unsigned int id0, id1, err;
	__u32 data = 0;
	__u64 id;
	unsigned int exp, got;

	if (!kf_u8(c, &id0) || !kf_u8(c, &id1))
		return;
	if (broken ? !kf_u8(c, &err) : !kf_u32(c, &data))
		return;
	id = (__u64)id1 << 32 | id0;
	if (broken) {
		exp = m_fire(&K.m, id, KEVENT_RET_BROKEN, 0, (__u32)-(int)err);
		got = ktest_break(id, -(int)err);
	} else {
		exp = m_fire(&K.m, id, 0, data, 0);
		got = ktest_fire(id, data);
	}
	EXPECT_EQ("kevents fired", got, exp);
	if (K.trace)
		fprintf(stderr, "kfuzz: step %u: fired %u\n", K.step, got);
}

static void op_fire_stopped(struct kf_cur *c)
{
	unsigned int id0, id1, exp, got;
	__u32 data;
	__u64 id;

	if (!kf_u8(c, &id0) || !kf_u8(c, &id1) || !kf_u32(c, &data))
		return;
	id = (__u64)id1 << 32 | id0;
	exp = m_fire_stopped(&K.m, id, data);
	got = ktest_fire_stopped(id, data);
	EXPECT_EQ("racing fires that kept going", got, exp);
}

static void op_uid(struct kf_cur *c)
{
	unsigned int uid, limit, act;
	struct kcaller who;
	int exp;

	if (!kf_u8(c, &uid) || !kf_u8(c, &limit) || !kf_u8(c, &act))
		return;
	uid %= KF_NUID;
	limit %= KEVENT_LIMIT_NR + 1;	/* one beyond: -EINVAL */
	who = caller_of(uid);
	switch (act % 4) {
	case 0:
		EXPECT_EQ("kcore_uid_charge", kcore_uid_charge(K.core, uid, limit),
			  m_uid_charge(&K.m, uid, limit));
		break;
	case 1:
		if (limit < KEVENT_LIMIT_NR && K.m.ours[uid][limit]) {
			m_uid_uncharge(&K.m, uid, limit);
			kcore_uid_uncharge(K.core, uid, limit);
		}
		break;
	case 2:
		/* D18: the running cap is -EAGAIN, not -ENOSPC */
		exp = m_uid_charge(&K.m, uid, KEVENT_LIMIT_RUNNING);
		EXPECT_EQ("kcore_running_enter", kcore_running_enter(K.core, &who),
			  exp == -ENOSPC ? -EAGAIN : exp);
		break;
	default:
		if (K.m.ours[uid][KEVENT_LIMIT_RUNNING]) {
			m_uid_uncharge(&K.m, uid, KEVENT_LIMIT_RUNNING);
			kcore_running_exit(K.core, &who);
		}
		break;
	}
}

/* Gives back what UID operations took, before the leak check. */
static void uncharge_ours(void)
{
	unsigned int u, l;

	for (u = 0; u < KF_NUID; u++)
		for (l = 0; l < KEVENT_LIMIT_NR; l++)
			while (K.m.ours[u][l]) {
				m_uid_uncharge(&K.m, u, l);
				kcore_uid_uncharge(K.core, u, l);
			}
}

static void run_deadlines(void)
{
	m_run(&K.m);
	kcore_run_deadlines(K.core);
}

static void op_clock(struct kf_cur *c)
{
	__u32 us;

	if (!kf_u32(c, &us))
		return;
	K.now += (__u64)us * 1000;
	K.m.now = K.now;
	run_deadlines();
}

static void op_waiter(struct kf_cur *c, bool intr)
{
	unsigned int i;
	struct mw *w;

	if (!kf_u8(c, &i))
		return;
	w = &K.m.w[i % KF_NW];
	/* The handle is the transport's until it puts it. */
	if (!w->used || w->put)
		return;
	if (intr) {
		m_intr(&K.m, (int)(i % KF_NW));
		kwaiter_interrupt(w->kw);
	} else {
		m_put(&K.m, (int)(i % KF_NW));
		kwaiter_put(w->kw);
	}
}

static bool run_op(struct kf_cur *c)
{
	unsigned int op;

	if (!kf_u8(c, &op))
		return false;
	K.op = op % KF_OP_NR;
	switch (K.op) {
	case KF_OP_OPEN: op_open(c); break;
	case KF_OP_CLOSE: op_close(c); break;
	case KF_OP_POKE:
	case KF_OP_RAW: kf_decode_poke(c, K.op, put_both, NULL); break;
	case KF_OP_FAULT: op_fault(c); break;
	case KF_OP_CTL:
	case KF_OP_GET:
	case KF_OP_INFO:
	case KF_OP_SETABI:
	case KF_OP_IOCTL: op_ioc(c, K.op); break;
	case KF_OP_FIRE: op_fire(c, false); break;
	case KF_OP_BREAK: op_fire(c, true); break;
	case KF_OP_CLOCK: op_clock(c); break;
	case KF_OP_RUN: run_deadlines(); break;
	case KF_OP_INTR: op_waiter(c, true); break;
	case KF_OP_PUT: op_waiter(c, false); break;
	case KF_OP_EXEC: op_exec(); break;
	case KF_OP_FIRES: op_fire_stopped(c); break;
	default: op_uid(c); break;
	}
	return true;
}

/* ---- one program ---- */

static void start(const uint8_t *hdr)
{
	struct kcore_config cfg;
	unsigned int t;
	int err;

	K.trace = getenv("KFUZZ_TRACE") != NULL;
	K.nwrites = 0;
	memset(K.arena, 0, sizeof(K.arena));
	m_init(&K.m, hdr, (__u64)(uintptr_t)K.arena);
	ktest_mem_init(&K.mem, K.arena, sizeof(K.arena));
	ktest_origin_reset();
	K.now = 0;
	K.def.valid = false;
	memset(&cfg, 0, sizeof(cfg));
	cfg.backend = KEVENT_BACKEND_CORE;
	cfg.deterministic = 1;
	cfg.clock_ns = kf_clock;
	cfg.clock_ctx = &K.now;
	cfg.alloc_fail = kf_alloc_fail;
	K.alloc_countdown = 0;
	cfg.max_ctl_num = kf_path_max[hdr[KF_HDR_PATH] & 0xf];
	cfg.max_get_nr = kf_path_max[hdr[KF_HDR_PATH] >> 4];
	memcpy(cfg.caps, K.m.caps, sizeof(cfg.caps));
	for (t = 0; t < KEVENT_MAX; t++)
		if (K.m.mask & (1u << t))
			cfg.origins[t] = (KF_RO_TYPES & (1u << t)) ? &race_ops : &ktest_origin_ops;
	race_attached = 0;
	err = kcore_new(&cfg, &K.core);
	if (err)
		kf_fail("kcore_new: %d", err);
	/* Every uid's record now, so no later call allocates one by surprise. */
	for (t = 0; t < KF_NUID; t++)
		kcore_uid_used(K.core, t, 0);
}

/* The end of every program: nothing may be left (the leak check). */
static void finish(void)
{
	struct kcore_counters cnt;
	unsigned int i, l;

	K.op = KF_OP_NR;
	for (i = 0; i < KF_NQ; i++)
		if (K.m.slot[i])
			release_slot(i);
	check_all();
	for (i = 0; i < KF_NW; i++)
		if (K.m.w[i].used && !K.m.w[i].put) {
			m_put(&K.m, (int)i);
			kwaiter_put(K.m.w[i].kw);
		}
	run_deadlines();
	uncharge_ours();
	check_all();
	kcore_counters(K.core, &cnt);
	if (cnt.queues || cnt.kevents || cnt.waiters || cnt.ready)
		kf_fail("live objects left: %llu queues %llu kevents %llu waiters %llu ready",
			(unsigned long long)cnt.queues, (unsigned long long)cnt.kevents,
			(unsigned long long)cnt.waiters, (unsigned long long)cnt.ready);
	for (i = 0; i < KF_NUID; i++)
		for (l = 0; l < KEVENT_LIMIT_NR; l++)
			EXPECT_EQ("uid charge left", kcore_uid_used(K.core, i, l), 0);
	EXPECT_EQ("still attached", ktest_attached(), 0);
	check_arena(0, KF_ARENA);
	kcore_free(K.core);
	K.core = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kf_cur c = { data + KF_HDR_LEN, size - KF_HDR_LEN };

	if (size < KF_HDR_LEN)
		return 0;
	if (data[KF_HDR_ORIGINS] & KF_HDR_LOOSE) {
		memset(K.arena, 0, sizeof(K.arena));
		kf_loose_run(data, size, K.arena);
		return 0;
	}
	start(data);
	for (K.step = 0; K.step < KF_MAX_STEPS && run_op(&c); K.step++)
		check_all();
	finish();
	return 0;
}
