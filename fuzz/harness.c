// SPDX-License-Identifier: GPL-2.0
/*
 * The in-process fuzz target: LLVMFuzzerTestOneInput() runs one program
 * (prog.h) through the interpreter (interp.c) with this file's executor: a
 * deterministic core called through kdisp_plan()/kdisp_execute(),
 * simulated user memory, the test origin and the racing origin.  The first
 * difference from the shadow model (model.h) aborts, naming the step.
 * Every user-memory access the core makes is checked against the ranges
 * kdisp_plan() announced, since a transport fetches exactly those (kcore.h).
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp.h"
#include "test-origin.h"
#include "test-uaccess.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define UKSZ	sizeof(struct ukevent)

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
	unsigned char arena[KF_ARENA] __attribute__((aligned(64)));
	struct ktest_mem mem;
	struct kcore *core;
	__u64 now;
	bool trace;				/* KFUZZ_TRACE set: log every call */
	struct kf_deferred def;
	struct kf_ua call_ua;
	struct kf_ua wait_ua[KF_NW];
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

/* A difference, or a broken invariant: the input fails here. */
static void kf_abort(const char *why)
{
	fprintf(stderr, "kfuzz: %s\n", why);
	abort();
}

void kf_fail(const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	kf_differs("%s", msg);	/* aborts: kf_abort() */
	abort();
}

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
	if (m_late_fault(&KR.m, K.nwrites++, a, len))
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
		kf_fail("waiter %td completed twice", w - KR.m.w);
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

/* ---- checks after every step: this executor's own ---- */

static void check_waiters(void)
{
	unsigned int i;

	for (i = 0; i < KF_NW; i++) {
		struct mw *w = &KR.m.w[i];

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
	m_counters(&KR.m, &exp);
	EXPECT_EQ("live queues", got.queues, exp.queues);
	EXPECT_EQ("live kevents", got.kevents, exp.kevents);
	EXPECT_EQ("live waiters", got.waiters, exp.waiters);
	EXPECT_EQ("ready kevents", got.ready, exp.ready);
	EXPECT_EQ("attached to the test origin", ktest_attached(), KR.m.attached);
	EXPECT_EQ("attach calls", ktest_attach_calls(), KR.m.attach_calls);
	EXPECT_EQ("detach calls", ktest_detach_calls(), KR.m.detach_calls);
	EXPECT_EQ("attached to the racing origin", race_attached, KR.m.race_attached);
	EXPECT_EQ("user-memory writes", K.nwrites, KR.m.nwrites);
	for (u = 0; u < KF_NUID; u++)
		for (l = 0; l < KEVENT_LIMIT_NR; l++)
			if (kcore_uid_used(K.core, u, l) != KR.m.used[u][l])
				kf_fail("uid %u limit %u used %u, expected %u", u, l,
					kcore_uid_used(K.core, u, l), KR.m.used[u][l]);
}

static void core_check(void)
{
	check_waiters();
	check_counters();
}

/* INFO through the dispatcher, as any client would ask it. */
static int core_info(unsigned int slot, struct kevent_info *info)
{
	struct kqueue *kq = KR.m.slot[slot]->kq;
	struct kcaller c = caller_of(KR.m.slot[slot]->owner);
	struct kdisp_plan plan;
	int err = kdisp_plan(kq, KEVENT_IOC_INFO, NULL, 0, &c, &plan);

	return err ? err : kdisp_execute(kq, &plan, &c, &K.mem.ua, info, NULL, NULL);
}

static unsigned int core_poll(unsigned int slot)
{
	return kqueue_poll(KR.m.slot[slot]->kq);
}

static void core_queue_seen(unsigned int slot, const struct kevent_info *info,
			    unsigned int mask)
{
	const struct mq *q = KR.m.slot[slot];

	EXPECT_EQ("notify calls", q->notify_seen, q->notify_exp);
}

/* ---- operations ---- */

static void core_open(unsigned int slot, unsigned int uid, unsigned int flags)
{
	struct kcaller owner;
	unsigned char *ring = NULL;
	struct kqueue *kq;
	int exp, got;

	if (flags & KF_OPEN_RING) {
		ring = aligned_alloc(4096, KEVENT_RING_SIZE);
		if (!ring)
			abort();
		memset(ring, 0, KEVENT_RING_SIZE);
	}
	owner = caller_of(uid);
	exp = m_open(&KR.m, (int)slot, uid, ring, flags & KF_OPEN_NOTIFY);
	K.alloc_countdown = (flags >> KF_OPEN_ENOMEM_SHIFT) & 3;
	got = kqueue_open(K.core, &owner, ring, &kq);
	/* An allocation of open() failed: it must fail cleanly (D19 spirit). */
	if (!exp && !K.alloc_countdown && (flags >> KF_OPEN_ENOMEM_SHIFT) & 3) {
		exp = -ENOMEM;
		m_open_undo(&KR.m, (int)slot);
	}
	K.alloc_countdown = 0;
	EXPECT_EQ("kqueue_open", got, exp);
	if (got) {
		free(ring);
		return;
	}
	KR.m.slot[slot]->kq = kq;
	if (flags & KF_OPEN_NOTIFY)
		kqueue_set_notify(kq, kf_notify, KR.m.slot[slot]);
}

static void core_release(unsigned int slot)
{
	struct mq *q = KR.m.slot[slot];

	if (K.def.valid && K.def.q == q)
		K.def.valid = false;
	kqueue_release(q->kq);
	free(q->ring);
}

/* The simulated accessor fails exactly in [lo, hi), bit0: writes, else reads. */
static void core_fault(unsigned int which, __u64 lo, __u64 hi)
{
	*(which & 1 ? &K.mem.wfault_lo : &K.mem.rfault_lo) = lo;
	*(which & 1 ? &K.mem.wfault_hi : &K.mem.rfault_hi) = hi;
}

static int free_waiter_slot(void)
{
	int i;

	for (i = 0; i < KF_NW; i++)
		if (!KR.m.w[i].used)
			return i;
	return -1;
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
	struct mq *q = KR.m.slot[slot];
	struct kcaller c = caller_of(uid);
	struct kwaiter *kw = NULL;
	struct kwait_req wr;
	unsigned int ready = q->nrdy;
	int exp, got, wslot;

	wslot = park ? free_waiter_slot() : -1;
	exp = m_execute(&KR.m, (int)slot, uid, ma, wslot);
	ua_set(&K.call_ua, plan, "the call");
	if (wslot >= 0) {
		wr = (struct kwait_req){ &K.wait_ua[wslot].ua, kf_complete, &KR.m.w[wslot] };
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
		fprintf(stderr, "kfuzz: step %u: execute %d\n", KR.step, got);
	check_get_bound(ma, got, ready);
	if (got == KDISP_PARKED)
		KR.m.w[wslot].kw = kw;
	else if (ma->nr == KEVENT_IOC_NR_INFO)
		kf_check_info_reply(slot, uid, K.reply, ma->usize);
}

/* Phase 1 on the real core (the model's is exp), then run or defer it. */
static void core_ioctl(const struct kf_ioc *io, unsigned char *arg, int exp, struct margs *ma)
{
	struct mq *q = KR.m.slot[io->slot];
	struct kcaller c = caller_of(io->uid);
	struct kdisp_plan plan;
	int got;

	got = kdisp_plan(q->kq, io->cmd, io->arg_null ? NULL : arg, io->arg_len, &c, &plan);
	EXPECT_EQ("kdisp_plan", got, exp);
	note_errno(_IOC_NR(io->cmd), "call", got);
	if (K.trace)
		fprintf(stderr, "kfuzz: step %u: cmd %#x on q%u: plan %d\n", KR.step, io->cmd,
			io->slot, got);
	if (got)
		return;
	if (ma->nr == KEVENT_IOC_NR_INFO)
		EXPECT_EQ("INFO reply_len", plan.reply_len, ma->usize);
	if (!io->defer) {
		execute(io->slot, io->uid, &plan, ma, io->park);
		return;
	}
	K.def = (struct kf_deferred){ true, io->slot, io->uid, io->park, q, plan, *ma };
}

static void core_exec_deferred(void)
{
	struct kf_deferred *d = &K.def;

	/* The kernel holds the file during an ioctl: a release drops the plan. */
	if (!d->valid)
		return;
	d->valid = false;
	execute(d->slot, d->uid, &d->plan, &d->ma, d->park);
}

static void core_fire(unsigned int id0, unsigned int id1, __u32 data, bool broken)
{
	__u64 id = (__u64)id1 << 32 | id0;
	unsigned int exp, got;

	if (broken) {
		exp = m_fire(&KR.m, id, KEVENT_RET_BROKEN, 0, (__u32)-(int)data);
		got = ktest_break(id, -(int)data);
	} else {
		exp = m_fire(&KR.m, id, 0, data, 0);
		got = ktest_fire(id, data);
	}
	EXPECT_EQ("kevents fired", got, exp);
	if (K.trace)
		fprintf(stderr, "kfuzz: step %u: fired %u\n", KR.step, got);
}

static void core_fire_stopped(unsigned int id0, unsigned int id1, __u32 data)
{
	__u64 id = (__u64)id1 << 32 | id0;
	unsigned int exp, got;

	exp = m_fire_stopped(&KR.m, id, data);
	got = ktest_fire_stopped(id, data);
	EXPECT_EQ("racing fires that kept going", got, exp);
}

static void core_uid(unsigned int uid, unsigned int limit, unsigned int act)
{
	struct kcaller who = caller_of(uid);
	int exp;

	switch (act) {
	case 0:
		EXPECT_EQ("kcore_uid_charge", kcore_uid_charge(K.core, uid, limit),
			  m_uid_charge(&KR.m, uid, limit));
		break;
	case 1:
		if (limit < KEVENT_LIMIT_NR && KR.m.ours[uid][limit]) {
			m_uid_uncharge(&KR.m, uid, limit);
			kcore_uid_uncharge(K.core, uid, limit);
		}
		break;
	case 2:
		/* D18: the running cap is -EAGAIN, not -ENOSPC */
		exp = m_uid_charge(&KR.m, uid, KEVENT_LIMIT_RUNNING);
		EXPECT_EQ("kcore_running_enter", kcore_running_enter(K.core, &who),
			  exp == -ENOSPC ? -EAGAIN : exp);
		break;
	default:
		if (KR.m.ours[uid][KEVENT_LIMIT_RUNNING]) {
			m_uid_uncharge(&KR.m, uid, KEVENT_LIMIT_RUNNING);
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
			while (KR.m.ours[u][l]) {
				m_uid_uncharge(&KR.m, u, l);
				kcore_uid_uncharge(K.core, u, l);
			}
}

static void core_run(void)
{
	m_run(&KR.m);
	kcore_run_deadlines(K.core);
}

static void core_clock(__u32 us)
{
	K.now += (__u64)us * 1000;
	KR.m.now = K.now;
	core_run();
}

static void core_intr(unsigned int w)
{
	kwaiter_interrupt(KR.m.w[w].kw);
}

static void core_put(unsigned int w)
{
	kwaiter_put(KR.m.w[w].kw);
}

/* ---- one program ---- */

static void core_start(const uint8_t *hdr)
{
	struct kcore_config cfg;
	unsigned int t;
	int err;

	K.trace = getenv("KFUZZ_TRACE") != NULL;
	K.nwrites = 0;
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
	memcpy(cfg.caps, KR.m.caps, sizeof(cfg.caps));
	for (t = 0; t < KEVENT_MAX; t++)
		if (KR.m.mask & (1u << t))
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
static void core_finish(void)
{
	struct kcore_counters cnt;
	unsigned int i, l;

	kf_check_all();
	for (i = 0; i < KF_NW; i++)
		if (KR.m.w[i].used && !KR.m.w[i].put) {
			m_put(&KR.m, (int)i);
			kwaiter_put(KR.m.w[i].kw);
		}
	core_run();
	uncharge_ours();
	kf_check_all();
	kcore_counters(K.core, &cnt);
	if (cnt.queues || cnt.kevents || cnt.waiters || cnt.ready)
		kf_fail("live objects left: %llu queues %llu kevents %llu waiters %llu ready",
			(unsigned long long)cnt.queues, (unsigned long long)cnt.kevents,
			(unsigned long long)cnt.waiters, (unsigned long long)cnt.ready);
	for (i = 0; i < KF_NUID; i++)
		for (l = 0; l < KEVENT_LIMIT_NR; l++)
			EXPECT_EQ("uid charge left", kcore_uid_used(K.core, i, l), 0);
	EXPECT_EQ("still attached", ktest_attached(), 0);
}

static void core_teardown(void)
{
	kcore_free(K.core);
	K.core = NULL;
}

/* The in-process executor (interp.h). */
static const struct kf_exec in_process = {
	.start = core_start,
	.finish = core_finish,
	.teardown = core_teardown,
	.open = core_open,
	.release = core_release,
	.fault = core_fault,
	.ioctl = core_ioctl,
	.fire = core_fire,
	.clock = core_clock,
	.run = core_run,
	.intr = core_intr,
	.put = core_put,
	.exec = core_exec_deferred,
	.fires = core_fire_stopped,
	.uid = core_uid,
	.check = core_check,
	.info = core_info,
	.poll = core_poll,
	.queue_seen = core_queue_seen,
	.differs = kf_abort,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < KF_HDR_LEN)
		return 0;
	KR.e = &in_process;
	KR.arena = K.arena;
	if (data[KF_HDR_ORIGINS] & KF_HDR_LOOSE) {
		memset(K.arena, 0, sizeof(K.arena));
		kf_loose_run(data, size, K.arena);
		return 0;
	}
	kf_run_program(data, size);
	return 0;
}
