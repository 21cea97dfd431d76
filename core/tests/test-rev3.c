// SPDX-License-Identifier: GPL-2.0
/*
 * Revision 3 (docs/abi.md D58-D64) on the core: KEVENT_IOC_CTL_EXT,
 * KEVENT_POSIX_TIMER's grid counts, QUERY, KEVENT_USER and the type in
 * the search key.  The test origin serves POSIX_TIMER: ktest_fire(id, n)
 * says "grid point n is due"; the clock is the fixture's.
 */
#include "helpers.h"

struct fixture F;

#define MS	1000000ull

static void rev3_setup(void)
{
	struct kevent_set_abi a = { 3, 0, 0 };

	ktest_origin_reset();
	fx_config();
	F.cfg.origins[KEVENT_POSIX_TIMER] = &ktest_origin_ops;
	fx_start();
	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_SET_ABI, &a, NULL), 0);
}

TestSuite(rev3, .init = rev3_setup, .fini = fx_teardown);

/* The entry array lives in the fixture's user memory. */
static struct ukevent_ext *E(unsigned int i)
{
	return (struct ukevent_ext *)F.uk + i;
}

static int ctl_ext_q(struct kqueue *q, __u32 cmd, __u32 num, __u32 ioc_flags, __u32 pad)
{
	struct kevent_ctl_ext_arg a = {
		cmd, num, ktest_mem_addr(&F.mem, 0), ioc_flags, pad
	};

	return fx_ioctl_q(q, KEVENT_IOC_CTL_EXT, &a, NULL);
}

static int ctl_ext(__u32 cmd, __u32 num)
{
	return ctl_ext_q(F.q, cmd, num, KEVENT_CTL_EXT, 0);
}

static struct ukevent_ext timer_ext(__u64 id, __u32 clock, __u32 flags, __u64 value, __u64 interval)
{
	struct ukevent_ext e;

	memset(&e, 0, sizeof(e));
	e.ev = uk_make(KEVENT_POSIX_TIMER, id, KEVENT_TIMER_FIRED, 0, (__u32)id);
	e.ext.timer.clock = clock;
	e.ext.timer.flags = flags;
	e.ext.timer.value.tv_sec = (__s64)(value / 1000000000ull);
	e.ext.timer.value.tv_nsec = (__u32)(value % 1000000000ull);
	e.ext.timer.interval.tv_sec = (__s64)(interval / 1000000000ull);
	e.ext.timer.interval.tv_nsec = (__u32)(interval % 1000000000ull);
	return e;
}

static struct ukevent *OUT(void)
{
	return F.uk + 200;
}

CORE_TEST(rev3, D60_ctl_ext_whole_call_checks)
{
	struct kqueue *q2;
	struct kevent_set_abi two = { 2, 0, 0 };

	*E(0) = timer_ext(1, KEVENT_CLOCK_MONOTONIC, 0, 10 * MS, 0);
	cr_assert_eq(ctl_ext_q(F.q, KEVENT_CTL_ADD, 1, 0x2, 0), -EINVAL, "unknown ioc_flags bit");
	cr_assert_eq(ctl_ext_q(F.q, KEVENT_CTL_ADD, 1, KEVENT_CTL_EXT, 1), -EINVAL, "__pad");
	cr_assert_eq(ctl_ext_q(F.q, KEVENT_CTL_QUERY, 1, 0, 0), -EINVAL, "QUERY needs EXT");
	cr_assert_eq(fx_ctl(KEVENT_CTL_QUERY, 1, F.uk), -EINVAL, "QUERY needs EXT (VER0)");
	cr_assert_eq(ktest_attach_calls(), 0, "nothing read");
	cr_assert_eq(kqueue_open(F.core, &F.me, NULL, &q2), 0);
	cr_assert_eq(fx_ioctl_q(q2, KEVENT_IOC_SET_ABI, &two, NULL), 0);
	cr_assert_eq(ctl_ext_q(q2, KEVENT_CTL_ADD, 1, KEVENT_CTL_EXT, 0), -EINVAL,
		     "EXT below revision 3");
	cr_assert_eq(ctl_ext_q(q2, KEVENT_CTL_QUERY, 1, KEVENT_CTL_EXT, 0), -EINVAL,
		     "cmd 4 is unknown on revision 2");
	kqueue_release(q2);
}

CORE_TEST(rev3, D58_count_from_grid_indexes)
{
	*E(0) = timer_ext(1, KEVENT_CLOCK_MONOTONIC, 0, 10 * MS, 10 * MS);
	cr_assert_eq(ctl_ext(KEVENT_CTL_ADD, 1), 0, "never answered by ADD");
	F.now += 35 * MS;	/* points 0, 1, 2 passed; the origin was late */
	cr_assert_eq(ktest_fire(1, 0), 1);
	cr_assert_eq(fx_get(1, 4, OUT()), 1);
	cr_assert_eq(OUT()[0].ret_data[0], 3, "the points passed by the dequeue's clock");
	cr_assert_eq(OUT()[0].ret_data[1], 0);
	ktest_fire(1, 2);	/* a point delivered already: dropped */
	cr_assert_eq(fx_get(1, 4, OUT()), 0);
	F.now += 10 * MS;
	ktest_fire(1, 3);
	F.now += 100 * MS;	/* a budget deferral or a late reactor: no fire meanwhile */
	cr_assert_eq(fx_get(1, 4, OUT()), 1);
	cr_assert_eq(OUT()[0].ret_data[0], 11, "points 3..13");
}

CORE_TEST(rev3, D58_one_expiry_then_disarmed_and_oneshot)
{
	*E(0) = timer_ext(1, KEVENT_CLOCK_MONOTONIC, 0, 5 * MS, 0);
	*E(1) = timer_ext(2, KEVENT_CLOCK_BOOTTIME, 0, 5 * MS, 1 * MS);
	E(1)->ev.req_flags = KEVENT_REQ_ONESHOT;
	cr_assert_eq(ctl_ext(KEVENT_CTL_ADD, 2), 0);
	F.now += 50 * MS;
	ktest_fire(1, 0);
	ktest_fire(2, 0);
	cr_assert_eq(fx_get(1, 4, OUT()), 2);
	cr_assert_eq(OUT()[0].ret_data[0], 1, "interval {0, 0}: one expiry");
	cr_assert_eq(OUT()[1].ret_data[0], 46, "5 ms + k * 1 ms up to 50 ms");
	cr_assert_eq(fx_counters().kevents, 1, "ONESHOT freed at delivery");
	*E(0) = timer_ext(1, KEVENT_CLOCK_MONOTONIC, 0, 0, 0);
	E(0)->ev.event = 0;
	cr_assert_eq(ctl_ext(KEVENT_CTL_QUERY, 1), 1);
	cr_assert_eq(E(0)->ext.timer.value.tv_sec, 0);
	cr_assert_eq(E(0)->ext.timer.value.tv_nsec, 0, "disarmed after its one expiry");
	cr_assert_eq(E(0)->ev.ret_data[0], 0, "nothing pending");
}

CORE_TEST(rev3, D58_abstime_in_the_past_fires_through_the_ready_list)
{
	*E(0) = timer_ext(1, KEVENT_CLOCK_REALTIME, KEVENT_TIMER_ABSTIME, F.now - 10 * MS, 1 * MS);
	cr_assert_eq(ctl_ext(KEVENT_CTL_ADD, 1), 0, "not answered by ADD");
	ktest_fire(1, 10);
	cr_assert_eq(fx_get(1, 4, OUT()), 1);
	cr_assert_eq(OUT()[0].ret_data[0], 11, "points 0..10 passed");
}

CORE_TEST(rev3, D58_realtime_clock_set_forward_then_back)
{
	__u64 t0 = F.now;

	*E(0) = timer_ext(1, KEVENT_CLOCK_REALTIME, KEVENT_TIMER_ABSTIME, t0 + 30 * MS, MS);
	cr_assert_eq(ctl_ext(KEVENT_CTL_ADD, 1), 0);
	F.now = t0 + 100 * MS;	/* clock_settime forward: every point passed fires */
	ktest_fire(1, 70);
	cr_assert_eq(fx_get(1, 4, OUT()), 1);
	cr_assert_eq(OUT()[0].ret_data[0], 71, "points 0..70 counted");
	F.now = t0 + 1 * MS;	/* set back: the timer waits longer */
	memset(E(0), 0, sizeof(*E(0)));
	E(0)->ev = uk_make(KEVENT_POSIX_TIMER, 1, 0, 0, 1);
	cr_assert_eq(ctl_ext(KEVENT_CTL_QUERY, 1), 1);
	cr_assert_eq(E(0)->ev.ret_data[0], 0, "nothing pending");
	cr_assert_eq(E(0)->ext.timer.value.tv_nsec, 100 * MS, "to point 71, not point 0");
	ktest_fire(1, 5);	/* a point delivered already is not due again */
	cr_assert_eq(fx_get(1, 4, OUT()), 0);
}

/*
 * A 4-slot ring at ra and a 10 ms POSIX timer, 35 ms after its ADD and
 * fired (points 0..2 passed); the ring's first slot faults from now on.
 */
static void ring_timer_faulting(__u64 ra)
{
	struct kevent_ring_init ri = { ra, 4, 0 };

	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_RING_INIT, &ri, NULL), 0);
	*E(0) = timer_ext(1, KEVENT_CLOCK_MONOTONIC, 0, 10 * MS, 10 * MS);
	cr_assert_eq(ctl_ext(KEVENT_CTL_ADD, 1), 0);
	F.now += 35 * MS;
	ktest_fire(1, 2);
	F.mem.wfault_lo = ra + KEVENT_URING_HDR_SIZE;
	F.mem.wfault_hi = F.mem.wfault_lo + 1;
	F.mem.wfault_after = F.mem.writes;
}

/* D41 with D58: a WAIT whose ring write faults delivers the same count later. */
CORE_TEST(rev3, D58_count_survives_a_faulted_wait)
{
	unsigned char *ring = (unsigned char *)(F.uk + 400);
	__u64 ra = ktest_mem_addr(&F.mem, 400 * sizeof(struct ukevent));
	struct kevent_wait_arg w = { .num = 4, .ioc_flags = KEVENT_GET_NONBLOCK };
	struct ukevent got;

	ring_timer_faulting(ra);
	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_WAIT, &w, NULL), -EFAULT);
	F.mem.wfault_lo = F.mem.wfault_hi = 0;
	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_WAIT, &w, NULL), 1);
	memcpy(&got, ring + KEVENT_URING_HDR_SIZE, sizeof(got));
	cr_assert_eq(got.ret_data[0], 3, "points 0..2, not 1");
}

/* The fixture's write, with one timer fire (point hook_point) before it. */
static int (*hook_next)(void *ctx, __u64 uaddr, const void *src, size_t len);
static __u32 hook_point;
static unsigned int hook_fired;

static int fire_then_write(void *ctx, __u64 uaddr, const void *src, size_t len)
{
	if (hook_point) {
		F.now += 10 * MS;
		hook_fired = ktest_fire(1, hook_point);	/* no assert: q->ctl is held */
		hook_point = 0;
	}
	return hook_next(ctx, uaddr, src, len);
}

/*
 * D41 with D58: the timer fires again while the faulting WAIT has it in
 * flight (a timer fire takes no control lock), so it is ready again when
 * the requeue comes: the faulted count still goes back, none lost.
 */
CORE_TEST(rev3, D58_count_survives_a_refire_during_a_faulted_wait)
{
	unsigned char *ring = (unsigned char *)(F.uk + 400);
	__u64 ra = ktest_mem_addr(&F.mem, 400 * sizeof(struct ukevent));
	struct kevent_wait_arg w = { .num = 4, .ioc_flags = KEVENT_GET_NONBLOCK };
	struct ukevent got;
	struct kcore_counters c;

	ring_timer_faulting(ra);
	hook_next = F.mem.ua.write;
	hook_point = 3;
	F.mem.ua.write = fire_then_write;
	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_WAIT, &w, NULL), -EFAULT);
	F.mem.ua.write = hook_next;
	cr_assert_eq(hook_fired, 1u, "the re-fire while in flight");
	F.mem.wfault_lo = F.mem.wfault_hi = 0;
	kcore_counters(F.core, &c);
	cr_assert_eq(c.ready, 1, "ready once, not twice");
	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_WAIT, &w, NULL), 1);
	memcpy(&got, ring + KEVENT_URING_HDR_SIZE, sizeof(got));
	cr_assert_eq(got.ret_data[0], 4, "points 0..3, not only the re-fired one: %u",
		     got.ret_data[0]);
}

CORE_TEST(rev3, D59_invalid_settings_fail_the_entry)
{
	unsigned int i;

	*E(0) = timer_ext(1, 2, 0, MS, 0);			/* clock */
	*E(1) = timer_ext(2, KEVENT_CLOCK_MONOTONIC, 2, MS, 0);	/* flag */
	*E(2) = timer_ext(3, KEVENT_CLOCK_MONOTONIC, 0, MS, 50000);	/* < 100 us */
	*E(3) = timer_ext(4, KEVENT_CLOCK_MONOTONIC, 0, MS, 0);
	E(3)->ext.timer.value.tv_nsec = 1000000000u;
	*E(4) = timer_ext(5, KEVENT_CLOCK_MONOTONIC, 0, MS, 0);
	E(4)->ev.event = 0;					/* no FIRED */
	*E(5) = timer_ext(6, KEVENT_CLOCK_MONOTONIC, 0, MS, 0);
	E(5)->ev.req_flags = KEVENT_REQ_LEVEL;
	cr_assert_eq(ctl_ext(KEVENT_CTL_ADD, 6), 6);
	for (i = 0; i < 6; i++) {
		cr_assert_eq(E(i)->ev.ret_flags, KEVENT_RET_BROKEN | KEVENT_RET_DONE, "entry %u", i);
		cr_assert_eq((int)E(i)->ev.ret_data[1], -EINVAL, "entry %u", i);
	}
	F.uk[0] = uk_make(KEVENT_POSIX_TIMER, 7, KEVENT_TIMER_FIRED, 0, 7);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 1, F.uk), 1, "a 40-byte entry has no setting");
	cr_assert_eq((int)F.uk[0].ret_data[1], -EINVAL);
	cr_assert_eq(fx_counters().kevents, 0);
}

CORE_TEST(rev3, D60_ext_of_other_types_and_whole_entry_compaction)
{
	memset(E(0), 0, 3 * sizeof(struct ukevent_ext));
	*E(0) = timer_ext(1, KEVENT_CLOCK_MONOTONIC, 0, MS, 0);
	E(1)->ev = uk_make(KEVENT_USER, 2, 0, 0, 2);
	E(1)->ext.__raw[4] = 0x55;				/* must be zero */
	E(2)->ev = uk_make(KEVENT_USER, 3, 0, 0, 3);
	cr_assert_eq(ctl_ext(KEVENT_CTL_ADD, 3), 1);
	cr_assert_eq(E(0)->ev.id.raw[0], 2, "the failed entry moved to the front, whole");
	cr_assert_eq((int)E(0)->ev.ret_data[1], -EINVAL);
	cr_assert_eq(E(0)->ext.__raw[4], 0x55, "its ext came with it, as passed");
	cr_assert_eq(fx_counters().kevents, 2);
}

CORE_TEST(rev3, D61_query_modify_rearm_and_disarm)
{
	*E(0) = timer_ext(1, KEVENT_CLOCK_MONOTONIC, 0, 10 * MS, 10 * MS);
	cr_assert_eq(ctl_ext(KEVENT_CTL_ADD, 1), 0);
	F.now += 25 * MS;
	ktest_fire(1, 1);
	memset(E(0), 0, sizeof(*E(0)));
	E(0)->ev = uk_make(KEVENT_POSIX_TIMER, 1, 0, 0, 1);
	cr_assert_eq(ctl_ext(KEVENT_CTL_QUERY, 1), 1);
	cr_assert_eq(E(0)->ev.ret_flags, KEVENT_RET_DONE);
	cr_assert_eq(E(0)->ev.ret_data[0], 2, "two points passed, not delivered");
	cr_assert_eq(E(0)->ext.timer.clock, KEVENT_CLOCK_MONOTONIC);
	cr_assert_eq(E(0)->ext.timer.flags, 0);
	cr_assert_eq(E(0)->ext.timer.value.tv_nsec, 5 * MS, "time left to 30 ms");
	cr_assert_eq(E(0)->ext.timer.interval.tv_nsec, 10 * MS);
	cr_assert_eq(fx_counters().ready, 1, "QUERY changes nothing");
	*E(0) = timer_ext(1, KEVENT_CLOCK_MONOTONIC, 0, 100 * MS, 0);
	cr_assert_eq(ctl_ext(KEVENT_CTL_MODIFY, 1), 0);
	cr_assert_eq(E(0)->ev.ret_flags, KEVENT_RET_DONE);
	cr_assert_eq(fx_counters().ready, 0, "pending expiries discarded");
	ktest_fire(1, 0);
	F.now += 100 * MS;
	cr_assert_eq(fx_get(1, 4, OUT()), 1, "the new grid's point 0");
	cr_assert_eq(OUT()[0].ret_data[0], 1);
	*E(0) = timer_ext(1, KEVENT_CLOCK_MONOTONIC, 0, 0, 0);
	cr_assert_eq(ctl_ext(KEVENT_CTL_MODIFY, 1), 0, "value {0, 0}: disarmed");
	cr_assert_eq(ctl_ext(KEVENT_CTL_QUERY, 1), 1);
	cr_assert_eq(E(0)->ext.timer.value.tv_nsec, 0);
	E(0)->ev = uk_make(KEVENT_USER, 9, 0, 0, 9);
	cr_assert_eq(ctl_ext(KEVENT_CTL_QUERY, 1), 0, "no match (D38)");
	cr_assert_eq(E(0)->ev.ret_flags, KEVENT_RET_BROKEN | KEVENT_RET_DONE);
}

CORE_TEST(rev3, D62_user_events_merge_or_and_count)
{
	struct ukevent *u = F.uk;

	u[0] = uk_make(KEVENT_USER, 1, 0, 0, 1);
	u[1] = uk_make(KEVENT_USER, 2, 0, KEVENT_REQ_ONESHOT, 2);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 2, u), 0);
	u[0].event = 0x1;
	cr_assert_eq(fx_ctl(KEVENT_CTL_READY, 1, u), 1);
	u[0].event = 0x4;
	cr_assert_eq(fx_ctl(KEVENT_CTL_READY, 1, u), 1);
	cr_assert_eq(fx_get(1, 4, OUT()), 1);
	cr_assert_eq(OUT()[0].ret_data[0], 0x5, "values ORed");
	cr_assert_eq(OUT()[0].ret_data[1], 2, "two triggers");
	cr_assert_eq(fx_get(1, 4, OUT()), 0, "cleared by delivery");
	u[0].event = 0x8;
	cr_assert_eq(fx_ctl(KEVENT_CTL_READY, 2, u), 2);
	cr_assert_eq(fx_get(1, 4, OUT()), 2);
	cr_assert_eq(OUT()[0].ret_data[0], 0x8);
	cr_assert_eq(OUT()[0].ret_data[1], 1);
	cr_assert_eq(fx_counters().kevents, 1, "the ONESHOT one freed at delivery");
	u[0].req_flags = KEVENT_REQ_LEVEL;
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 1, u), 1, "LEVEL refused");
	cr_assert_eq((int)u[0].ret_data[1], -EINVAL);
}

CORE_TEST(rev3, D63_the_type_is_part_of_the_key)
{
	struct ukevent *u = F.uk;

	u[0] = uk_make(KEVENT_TIMER, 1, KEVENT_TIMER_FIRED, 0, 1);
	u[1] = uk_make(KEVENT_USER, 1, 0, 0, 1);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 2, u), 0);
	u[0] = uk_make(KEVENT_USER, 1, 0, 0, 1);
	cr_assert_eq(fx_ctl(KEVENT_CTL_REMOVE, 1, u), 0);
	cr_assert_eq(u[0].ret_flags, KEVENT_RET_DONE);
	cr_assert_eq(ktest_attached(), 1, "the older timer with the same id stays");
	u[0] = uk_make(KEVENT_POLL, 1, 0, 0, 1);
	cr_assert_eq(fx_ctl(KEVENT_CTL_REMOVE, 1, u), 0);
	cr_assert_eq(u[0].ret_flags, KEVENT_RET_BROKEN | KEVENT_RET_DONE, "another type: no match");
}

Test(rev3, D64_info_and_lower_revisions)
{
	struct kevent_info info;
	struct kqueue *q1;
	struct ukevent *u = F.uk;

	memset(&info, 0, sizeof(info));
	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_INFO, NULL, &info), 0);
	cr_assert_eq(info.abi_revision, 4, "the core serves up to revision 4 (D66)");
	cr_assert_eq(info.queue_revision, 3);
	cr_assert(info.supported_types & (1u << KEVENT_POSIX_TIMER));
	cr_assert(info.supported_types & (1u << KEVENT_USER));
	cr_assert(info.features & KEVENT_FEAT_POSIX_TIMER);
	cr_assert(info.features & KEVENT_FEAT_USER);
	cr_assert_eq(kqueue_open(F.core, &F.me, NULL, &q1), 0);
	memset(&info, 0, sizeof(info));
	cr_assert_eq(fx_ioctl_q(q1, KEVENT_IOC_INFO, NULL, &info), 0);
	cr_assert_eq(info.supported_types & (3u << KEVENT_POSIX_TIMER), 0, "revision 1: as before");
	cr_assert_eq(info.features & (KEVENT_FEAT_POSIX_TIMER | KEVENT_FEAT_USER), 0);
	u[0] = uk_make(KEVENT_USER, 1, 0, 0, 1);
	cr_assert_eq(fx_ctl_q(q1, KEVENT_CTL_ADD, 1, u), 1);
	cr_assert_eq((int)u[0].ret_data[1], -EINVAL, "A3 on revision 1");
	/* D7 on revision 1: the type is not compared */
	u[0] = uk_make(KEVENT_TIMER, 1, KEVENT_TIMER_FIRED, 0, 1);
	cr_assert_eq(fx_ctl_q(q1, KEVENT_CTL_ADD, 1, u), 0);
	u[0].type = KEVENT_POLL;
	cr_assert_eq(fx_ctl_q(q1, KEVENT_CTL_REMOVE, 1, u), 0);
	cr_assert_eq(u[0].ret_flags, KEVENT_RET_DONE);
	kqueue_release(q1);
	fx_finish();
}
