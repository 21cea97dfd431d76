// SPDX-License-Identifier: GPL-2.0
/*
 * The timer origin (A9): period id.raw[0] in ms, ONESHOT vs periodic,
 * ret_data[0] = CLOCK_MONOTONIC ms mod 2^32 at the expiry, merged expiries
 * keep the last time, period 0 and an event without FIRED fail -EINVAL.
 */
#include <fcntl.h>
#include <unistd.h>

#include "ktest.h"

static __s32 ms_diff(__u32 later, __u32 earlier)
{
	return (__s32)(later - earlier);	/* modulo 2^32 */
}

KTEST(timer, oneshot_fires_once)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent uk = kt_uk_timer(50, KEVENT_REQ_ONESHOT, 1), out[2];

	__u32 t_add = kt_now_ms32();
	kt_add_queued(kfd, uk);
	/* Not ready at once; unless this process was descheduled for the whole period. */
	int r0 = kt_get(kfd, 1, 2, 0, out);
	__s32 t_r0 = ms_diff(kt_now_ms32(), t_add);
	cr_assert(r0 == 0 || (r0 == 1 && t_r0 >= 49), "a 50 ms timer fired within %d ms (%d)", t_r0, r0);
	if (r0 == 0)
		cr_assert_eq(kt_get(kfd, 1, 2, KT_MS(5000), out), 1, "a 50 ms timer did not fire within 5 s");
	__u32 t_got = kt_now_ms32();
	cr_assert_eq(out[0].type, (__u32)KEVENT_TIMER);
	cr_assert_eq(out[0].id.raw[0], 50u);
	cr_assert_eq(out[0].user[0], 1u);
	cr_assert_eq(out[0].ret_flags, (__u32)KEVENT_RET_DONE, "ret_flags %#x", out[0].ret_flags);
	__s32 d = ms_diff(out[0].ret_data[0], t_add);
	cr_assert(d >= 49, "expiry stamp %u is %d ms after ADD, want >= 50 (CLOCK_MONOTONIC ms)",
		  out[0].ret_data[0], d);
	cr_assert(ms_diff(t_got, out[0].ret_data[0]) >= -1, "expiry stamp %u after the read at %u",
		  out[0].ret_data[0], t_got);
	cr_assert_eq(kt_queue_kevents(kfd), 0u, "a delivered ONESHOT timer stays registered");
	cr_assert_eq(kt_get(kfd, 1, 2, KT_MS(300), out), 0, "a ONESHOT timer fired twice");
	kt_add_queued(kfd, kt_uk_timer(3600000, 0, 99));	/* so that REMOVE num 1 is legal */
	struct ukevent r = uk;
	kt_ctl1(kfd, KEVENT_CTL_REMOVE, &r, 0);
	cr_assert_eq(r.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE));
	close(kfd);
}

KTEST(timer, periodic_refires)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent out[2];
	__u32 stamp[4], back[4];

	/*
	 * The i-th delivery is of the (i+1)-th expiry or a later one, so its
	 * stamp is at least ADD + 30 (i+1) ms; after a dequeue only a later
	 * expiry can fire, so each stamp is a later grid point than the
	 * previous delivery's (a whole period on, 1 ms for the truncation); and
	 * no stamp lies after its delivery.  Not "after the previous
	 * GET_EVENTS was called": a grid point passed before that call but
	 * seen by a backend that runs late (a loaded machine) is delivered with
	 * its own time, after the call (A9 stamps the grid point).
	 */
	__u32 t_add = kt_now_ms32();
	kt_add_queued(kfd, kt_uk_timer(30, 0, 2));
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(kt_get(kfd, 1, 2, KT_MS(5000), out), 1, "periodic expiry %d missing", i);
		back[i] = kt_now_ms32();
		cr_assert_eq(out[0].user[0], 2u);
		stamp[i] = out[0].ret_data[0];
	}
	for (int i = 0; i < 4; i++) {
		__s32 d = ms_diff(stamp[i], t_add);
		cr_assert(d >= 30 * (i + 1) - 1, "delivery %d stamped %d ms after ADD (period 30)", i, d);
		cr_assert(ms_diff(back[i], stamp[i]) >= -1, "delivery %d stamped after it returned", i);
		if (i)
			cr_assert(ms_diff(stamp[i], stamp[i - 1]) >= 29,
				  "delivery %d stamped %d ms after the previous one (period 30): "
				  "an expiry delivered twice", i, ms_diff(stamp[i], stamp[i - 1]));
	}
	cr_assert_eq(kt_queue_kevents(kfd), 1u, "a periodic timer must stay registered");
	struct ukevent r = kt_uk_timer(30, 0, 2);
	kt_remove(kfd, r);
	/* A pending fire is dropped with it, and no later one comes. */
	cr_assert_eq(kt_get(kfd, 1, 2, KT_MS(200), out), 0, "a removed timer fired");
	close(kfd);
}

/*
 * Expiries while the kevent is ready merge into one; the last time is kept.
 * Each round lets 30 periods pass unread, waits until the kevent is ready
 * and takes exactly one event.  Its stamp, counted from the end of the
 * previous take (or from before the ADD), is about 300 ms where the last
 * time is kept and about 10 ms where the first one is; a backend whose
 * timer thread a loaded machine starves for the whole 300 ms sees only
 * the first expiry, so up to MERGE_ROUNDS rounds: a backend keeping the
 * first time never shows 150 ms, one keeping the last shows it in the
 * first round where its timers ran.  Five rounds were not enough beside
 * nineteen client programs and stress-ng (load 40 on two cores: best 18
 * and 121 ms); a correct backend ends in its first round, a wrong one
 * costs the whole 6 s.
 */
#define MERGE_ROUNDS 20
KTEST(timer, merged_expiries_keep_last_time)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent out[4];
	__s32 best = -1;

	__u32 from = kt_now_ms32();
	kt_add_queued(kfd, kt_uk_timer(10, 0, 3));
	for (int r = 0; r < MERGE_ROUNDS && best < 150; r++) {
		kt_sleep_ms(300);	/* the subject: 30 periods pass unread */
		cr_assert(kt_wait_ready(kfd, 1, 10000), "round %d: the periodic timer not ready", r);
		cr_assert_eq(kt_get(kfd, 0, 4, 0, out), 1, "round %d: merged expiries must give one event", r);
		__s32 d = ms_diff(out[0].ret_data[0], from);
		cr_log_info("round %d: stamp %d ms after the previous take", r, d);
		best = d > best ? d : best;
		from = kt_now_ms32();
	}
	cr_assert(best >= 150, "stamps at most %d ms after the previous take, after 300 ms of 10 ms "
		  "expiries in each of %d rounds: not the last expiry", best, MERGE_ROUNDS);
	close(kfd);
}

/*
 * A9: the grid starts at the backend's clock read during the ADD (in ns);
 * a report is its point truncated to ms.  So the first expiry's stamp lies
 * in [ms read before the ADD + period, ms read after it + period].  Ten
 * ADDs: a stamp 1 ms off the grid hides only behind an ADD that crossed a
 * millisecond boundary, which cannot happen every time.  A backend that
 * sees the expiry late (a loaded machine) reports the latest grid point
 * reached, as for merged expiries, so any point ADD + k * period is right.
 */
KTEST(timer, first_expiry_between_add_bounds)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent out[2];

	for (__u32 i = 0; i < 10; i++) {
		__u32 before = kt_now_ms32();
		kt_add_queued(kfd, kt_uk_timer(10, KEVENT_REQ_ONESHOT, i));
		__u32 after = kt_now_ms32();
		cr_assert_eq(kt_get(kfd, 1, 2, KT_MS(5000), out), 1, "ADD %u: no expiry", i);
		__u32 stamp = out[0].ret_data[0];
		__s32 lo = ms_diff(stamp, before), span = ms_diff(after, before);
		cr_assert(lo >= 10 && lo % 10 <= span,
			  "ADD %u between %u and %u ms, period 10: expiry stamped %u, "
			  "want within [%u + 10k, %u + 10k], k >= 1", i, before, after, stamp,
			  before, after);
	}
	close(kfd);
}

/*
 * A9: a MODIFY without FIRED is refused (-EINVAL) and stops the timer; a
 * valid MODIFY restarts it on a new grid from the MODIFY's time, so its
 * first stamp lies in [ms before the MODIFY + period, ms after + period],
 * or a whole number of periods later where a loaded machine lets the
 * backend see the expiry late (it reports the latest grid point reached).
 */
KTEST(timer, modify_restart_new_grid)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent uk = kt_uk_timer(100, 0, 6), m, out[2];

	kt_add_queued(kfd, uk);
	m = uk;
	m.event = 0;
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &m, 0);
	__u32 refused = kt_now_ms32();	/* the refusal took effect by now */
	cr_assert_eq(m.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE), "ret_flags %#x",
		     m.ret_flags);
	cr_assert_eq((int)m.ret_data[1], -EINVAL, "ret_data[1] %d", (int)m.ret_data[1]);
	int n = kt_get(kfd, 1, 2, KT_MS(350), out);
	/*
	 * An expiry before the refused MODIFY took effect (the caller or the
	 * device stalled past the first one: a loaded machine) rightly comes.
	 */
	if (n == 1 && ms_diff(out[0].ret_data[0], refused) <= 0)
		n = kt_get(kfd, 1, 2, KT_MS(350), out);
	cr_assert_eq(n, 0, "a refused MODIFY did not stop the timer");
	m = uk;
	__u32 before = kt_now_ms32();
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &m, 0);
	__u32 after = kt_now_ms32();
	cr_assert_eq(m.ret_flags, (__u32)KEVENT_RET_DONE, "ret_flags %#x", m.ret_flags);
	cr_assert_eq(kt_get(kfd, 1, 2, KT_MS(5000), out), 1, "the restarted timer did not fire");
	__u32 stamp = out[0].ret_data[0];
	__s32 lo = ms_diff(stamp, before), span = ms_diff(after, before);
	cr_assert(lo >= 100 && lo % 100 <= span,
		  "MODIFY between %u and %u ms, period 100: first stamp %u, want within "
		  "[%u + 100k, %u + 100k], k >= 1", before, after, stamp, before, after);
	close(kfd);
}

/* A9: stamps are points of the timer's grid, so they differ by whole periods. */
KTEST(timer, stamps_on_the_grid)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent out[4];
	__u32 first = 0;

	kt_add_queued(kfd, kt_uk_timer(20, 0, 4));
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(kt_get(kfd, 1, 4, KT_MS(5000), out), 1, "expiry %d", i);
		if (i == 0)
			first = out[0].ret_data[0];
		__s32 d = ms_diff(out[0].ret_data[0], first);
		cr_assert(d >= 0 && d % 20 == 0, "stamp %d is %d ms after the first: not on a 20 ms grid", i, d);
		kt_sleep_ms(7 + 11 * (unsigned)i);	/* read late by varying amounts */
	}
	close(kfd);
}

KTEST(timer, period_zero_einval)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent uk[2] = { kt_uk_timer(0, 0, 1), kt_uk_timer(0, KEVENT_REQ_ONESHOT, 2) };

	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 2, uk), 2);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(uk[i].ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE));
		cr_assert_eq(uk[i].ret_data[1], (__u32)-EINVAL, "period 0: ret_data[1] %d",
			     (int)uk[i].ret_data[1]);
	}
	cr_assert_eq(kt_queue_kevents(kfd), 0u);
	close(kfd);
}

KTEST(timer, event_without_fired_einval)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent uk[2] = { kt_uk(KEVENT_TIMER, 10, 0, 0, 0, 1),
				 kt_uk(KEVENT_TIMER, 10, 0, 0x6, 0, 2) };

	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 2, uk), 2);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(uk[i].ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE));
		cr_assert_eq(uk[i].ret_data[1], (__u32)-EINVAL, "event %#x: ret_data[1] %d", uk[i].event,
			     (int)uk[i].ret_data[1]);
	}
	/* Extra bits beside FIRED are accepted. */
	struct ukevent ok = kt_uk(KEVENT_TIMER, 20, 0, KEVENT_MASK_ALL, KEVENT_REQ_ONESHOT, 3);
	kt_add_queued(kfd, ok);
	cr_assert_eq(kt_get(kfd, 1, 2, KT_MS(5000), uk), 1);
	close(kfd);
}

/* A timer is never ready at ADD, even with 1 ms; 1 ms timers are legal. */
KTEST(timer, one_ms_granularity)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent out[8];

	for (int i = 0; i < 4; i++)
		kt_add_queued(kfd, kt_uk_timer(1, KEVENT_REQ_ONESHOT, (__u32)i));
	int got = 0;
	while (got < 4) {
		int n = kt_get(kfd, 1, 8, KT_MS(5000), out);
		cr_assert(n > 0, "1 ms timers: %d of 4 fired", got);
		got += n;
	}
	cr_assert_eq(got, 4);
	close(kfd);
}

/* MODIFY of a timer: the kevent stays a timer and keeps firing (DONE). */
KTEST(timer, modify_keeps_timer)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent uk = kt_uk_timer(40, 0, 4), out[2];

	kt_add_queued(kfd, uk);
	uk.req_flags = KEVENT_REQ_ONESHOT;
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &uk, 0);
	cr_assert_eq(uk.ret_flags, (__u32)KEVENT_RET_DONE);
	cr_assert_eq(kt_get(kfd, 1, 2, KT_MS(5000), out), 1);
	cr_assert_eq(kt_queue_kevents(kfd), 0u, "MODIFY to ONESHOT not applied");
	close(kfd);
}

/*
 * Revision 1 is take13 (D40): ALWAYS_QUEUE (D42) and LEVEL (D43) are
 * unknown bits there and a timer with them is an ordinary timer (A1).
 */

/* D42: ALWAYS_QUEUE on revision 1: registered, not ready at ADD, fires once as ONESHOT. */
KTEST_REVS(timer, always_queue_ignored_on_rev1, 1, 1)
{
	int kfd = kt_open(O_RDWR);

	kt_add_queued(kfd, kt_uk_timer(20, KEVENT_REQ_ONESHOT | KEVENT_REQ_ALWAYS_QUEUE, 1));
	cr_assert_eq(kt_get_one(kfd, "a 20 ms timer").user[0], 1u);
	cr_assert_eq(kt_queue_kevents(kfd), 0u, "ONESHOT freed at its delivery");
	close(kfd);
}

/* D43: LEVEL on revision 1 is accepted (not -EINVAL, as on revision 2) and the timer fires. */
KTEST_REVS(timer, level_ignored_on_rev1, 1, 1)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent uk = kt_uk_timer(20, KEVENT_REQ_LEVEL, 2);

	kt_add_queued(kfd, uk);
	cr_assert_eq(kt_get_one(kfd, "a 20 ms timer").user[0], 2u);
	uk.event = KEVENT_TIMER_FIRED;
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &uk, 0);	/* checked as at ADD */
	cr_assert_eq(uk.ret_flags, (__u32)KEVENT_RET_DONE, "MODIFY with LEVEL: %#x, ret_data[1] %d",
		     uk.ret_flags, (int)uk.ret_data[1]);
	kt_remove(kfd, uk);
	close(kfd);
}

/*
 * From revision 2 on: a timer takes no LEVEL (D43).
 */

/* D43: KEVENT_REQ_LEVEL exists for POLL and SOCKET only: a timer with it fails per entry. */
KTEST_REVS(timer, level_on_a_timer_einval, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent uk = kt_uk_timer(HOUR, KEVENT_REQ_LEVEL, 1);

	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &uk), 1, "answered by ADD");
	cr_assert_eq(uk.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE));
	cr_assert_eq(uk.ret_data[1], (__u32)-EINVAL, "ret_data[1] %d", (int)uk.ret_data[1]);
	cr_assert_eq(kt_queue_kevents(kfd), 0u);
	close(kfd);
}

/* ---- validations at MODIFY as at ADD ---- */

/* D43: LEVEL on a timer is -EINVAL at MODIFY as at ADD; the kevent keeps its setting. */
KTEST_REVS(timer, modify_level_on_a_timer_einval, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent t = kt_uk_timer(HOUR, 0, 1), m = t, out[4];

	kt_add_queued(kfd, t);
	m.req_flags = KEVENT_REQ_LEVEL;
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &m, 0);
	cr_assert_eq(m.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE), "%#x", m.ret_flags);
	cr_assert_eq(m.ret_data[1], (__u32)-EINVAL, "%d", (int)m.ret_data[1]);
	kt_ctl1(kfd, KEVENT_CTL_READY, &t, 1);
	cr_assert_eq(kt_get(kfd, 0, 4, 0, out), 1);
	cr_assert_eq(kt_get(kfd, 0, 4, 0, out), 0, "the refused LEVEL did not take effect");
	close(kfd);
}
