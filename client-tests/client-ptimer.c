// SPDX-License-Identifier: GPL-2.0
/*
 * KEVENT_POSIX_TIMER, from revision 3 on (docs/abi.md D58-D61): its setting
 * in a KEVENT_CTL_EXT entry (clock, nanoseconds, ABSTIME), expiry counts,
 * re-arm and disarm by MODIFY, KEVENT_CTL_QUERY, the checks at ADD and at
 * MODIFY.  The take13 KEVENT_TIMER is client-timer's.
 *
 * The clock-set test (a CLOCK_REALTIME step moving an ABSTIME timer) sets
 * the machine's clock: named clock_set_* as every such test, it runs only
 * with KEVENT_TEST_CLOCK_SET=1, which only the guest boot of its own sets
 * (tests/vm/README.md), skips loudly everywhere else, and puts the clock
 * back before it checks anything.
 */
#include <fcntl.h>
#include <unistd.h>

#include "ktest.h"

/* D58, D59: each clock fires a relative timer once, with count 1, ret_data[1] 0. */
KTEST_REVS(ptimer, each_clock_fires, 3, KTEST_OPEN)
{
	static const __u32 clocks[] = { KEVENT_CLOCK_MONOTONIC, KEVENT_CLOCK_REALTIME,
					KEVENT_CLOCK_BOOTTIME };
	int kfd = kt_open(O_RDWR);

	for (unsigned int c = 0; c < 3; c++) {
		const __u64 after = 20 * 1000000ULL + 123457;	/* 20.123457 ms */
		__u64 t0 = kt_now_ns();

		ext_add(kfd, ptimer(c, clocks[c], 0, after, 0, 0, 10 + c));
		struct ukevent ev = kt_get_one(kfd, "a 20 ms POSIX timer");
		__u64 t1 = kt_now_ns();

		check_fired(ev, 10 + c, 1, "one expiry");
		cr_assert_eq(ev.id.raw[0], c);
		cr_assert_geq(t1 - t0, after, "clock %u fired %llu ns after ADD, set %llu",
			      clocks[c], (unsigned long long)(t1 - t0), (unsigned long long)after);
		/* One expiry only (interval 0): registered, disarmed (D58). */
		kt_assert_quiet(kfd, 60, "a one-expiry timer fired again");
		cr_assert_eq(kt_queue_kevents(kfd), c + 1);
	}
	close(kfd);
}

/*
 * D58, D49: a POSIX timer made ready by READY before any grid point passed
 * is delivered with count 0 (the daemon's core said 1, the module 0: found
 * by the lockstep fuzzer, corpus/lockstep-ptimer-ready-count-0); it stays
 * armed, and its first expiry is still to come.
 */
KTEST_REVS(ptimer, ready_before_expiry_delivers_count_0, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent_ext e = ptimer(7, KEVENT_CLOCK_MONOTONIC, 0, 3600 * NSEC, 0, 0, 70), q;
	struct ukevent uk = e.ev, ev;

	ext_add(kfd, e);
	kt_ctl1(kfd, KEVENT_CTL_READY, &uk, 1);
	cr_assert_eq(uk.ret_flags, (__u32)KEVENT_RET_DONE, "READY ret_flags %#x", uk.ret_flags);
	ev = kt_get_one(kfd, "a POSIX timer made ready by READY");
	check_fired(ev, 70, 0, "READY before any expiry");
	cr_assert_eq(ev.ret_data[0], 0u, "count %u before any grid point, want 0", ev.ret_data[0]);
	q = query(kfd, e, 1);
	cr_assert_eq(q.ev.ret_data[0], 0u, "QUERY: %u pending", q.ev.ret_data[0]);
	cr_assert_gt(kts_ns(q.ext.timer.value), 3000 * NSEC, "still armed for about 1 h");
	close(kfd);
}

#define PREC_N 60		/* expiries per round */
#define PREC_ROUNDS 3
#define PREC_STEP_NS 1500000ULL	/* 1.5 ms between expiries */

/*
 * D58, D59: nanosecond expiries.  PREC_N expiries 1.5 ms apart, each off
 * any millisecond boundary by a different number of nanoseconds (ABSTIME,
 * CLOCK_MONOTONIC, ONESHOT), in PREC_ROUNDS rounds: every one comes, once,
 * and none is dequeued before its expiry (a backend rounding to the
 * millisecond below would serve some early).  How late they come is a
 * speed, measured against timerfds for the same instants by
 * bench/daemon/ptimer.c (bench-daemon-ptimer), not asserted here.
 */
KTEST_REVS(ptimer, ns_expiries_never_early, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);

	kt_require_room(KEVENT_LIMIT_TIMERS, PREC_N);
	for (unsigned int r = 0; r < PREC_ROUNDS; r++) {
		struct ukevent_ext e[PREC_N];
		__u64 sched[PREC_N], base = kt_now_ns() + 20000000ULL;
		unsigned char seen[PREC_N] = { 0 };
		unsigned int got = 0;

		for (unsigned int i = 0; i < PREC_N; i++) {
			sched[i] = base + i * PREC_STEP_NS + 333333 + 7 * i;
			e[i] = ptimer(i, KEVENT_CLOCK_MONOTONIC, KEVENT_TIMER_ABSTIME, sched[i], 0,
				      KEVENT_REQ_ONESHOT, i);
		}
		cr_assert_eq(kt_ctl_ext(kfd, KEVENT_CTL_ADD, PREC_N, e), 0, "ADD of %u timers", PREC_N);
		while (got < PREC_N) {
			struct ukevent out[PREC_N];
			/* A generous wait: only a lost expiry sits out a minute. */
			int k = kt_get(kfd, 1, PREC_N, KT_MS(60000), out);
			__u64 now = kt_now_ns();

			cr_assert_gt(k, 0, "round %u: %u of %u expiries came (GET_EVENTS %d)", r, got,
				     PREC_N, k);
			for (int j = 0; j < k; j++) {
				__u32 i = out[j].user[0];

				cr_assert_lt(i, PREC_N);
				cr_assert(!seen[i], "timer %u delivered twice", i);
				seen[i] = 1;
				check_fired(out[j], i, 1, "nanosecond timer");
				/* Never early: nanoseconds honoured, not rounded down to a ms. */
				cr_assert_geq(now, sched[i], "timer %u dequeued %llu ns before its expiry",
					      i, (unsigned long long)(sched[i] - now));
			}
			got += (unsigned int)k;
		}
		cr_assert_eq(kt_queue_kevents(kfd), 0u, "ONESHOT timers freed at delivery");
	}
	close(kfd);
}

/* D58: an ABSTIME expiry on MONOTONIC and REALTIME is not served before that time. */
KTEST_REVS(ptimer, absolute_expiry, 3, KTEST_OPEN)
{
	static const struct { __u32 kc; clockid_t c; } cl[] = {
		{ KEVENT_CLOCK_MONOTONIC, CLOCK_MONOTONIC }, { KEVENT_CLOCK_REALTIME, CLOCK_REALTIME },
		{ KEVENT_CLOCK_BOOTTIME, CLOCK_BOOTTIME },
	};
	int kfd = kt_open(O_RDWR);

	for (unsigned int i = 0; i < 3; i++) {
		__u64 at = clock_ns(cl[i].c) + 40000000ULL + 4321;

		ext_add(kfd, ptimer(i, cl[i].kc, KEVENT_TIMER_ABSTIME, at, 0, KEVENT_REQ_ONESHOT, i));
		struct ukevent ev = kt_get_one(kfd, "an absolute expiry 40 ms ahead");
		__u64 now = clock_ns(cl[i].c);

		check_fired(ev, i, 1, "absolute");
		cr_assert_geq(now, at, "clock %u: dequeued %llu ns before the absolute expiry",
			      cl[i].kc, (unsigned long long)(at - now));
		cr_assert_eq(kt_queue_kevents(kfd), 0u, "ONESHOT freed at delivery");
	}
	close(kfd);
}

/*
 * D58: an absolute first expiry already past is not answered by ADD; it
 * fires through the ready list at once with every grid point passed, on
 * each clock.  The first expiry 10.5 s back with a 1 s interval: 11 points
 * (10.5, 9.5, ... 0.5 s back) until the clock reaches the next one; the
 * count is bounded by the points before the ADD and after the dequeue.  A
 * one-expiry timer already past: count 1, and only once.
 */
KTEST_REVS(ptimer, past_absolute_counts_grid_points, 3, KTEST_OPEN)
{
	static const struct { __u32 kc; clockid_t c; } cl[] = {
		{ KEVENT_CLOCK_MONOTONIC, CLOCK_MONOTONIC }, { KEVENT_CLOCK_REALTIME, CLOCK_REALTIME },
		{ KEVENT_CLOCK_BOOTTIME, CLOCK_BOOTTIME },
	};
	const __u64 back = 10 * NSEC + NSEC / 2;
	int kfd = kt_open(O_RDWR);

	for (unsigned int i = 0; i < 3; i++) {
		__u64 t0 = clock_ns(cl[i].c);

		if (t0 <= back)
			cr_skip_test("clock %u reads %llu ns: no absolute time 10.5 s back", cl[i].kc,
				     (unsigned long long)t0);
		ext_add(kfd, ptimer(i, cl[i].kc, KEVENT_TIMER_ABSTIME, t0 - back, NSEC, 0, i));
		struct ukevent ev = kt_get_one(kfd, "a past absolute expiry");
		__u64 t1 = clock_ns(cl[i].c);

		check_fired(ev, i, 0, "grid points passed");
		cr_assert_geq(ev.ret_data[0], points_by(t0 - back, NSEC, t0), "clock %u: count %u",
			      cl[i].kc, ev.ret_data[0]);
		cr_assert_leq(ev.ret_data[0], points_by(t0 - back, NSEC, t1), "clock %u: count %u",
			      cl[i].kc, ev.ret_data[0]);
		kt_remove(kfd, ev);
		ext_add(kfd, ptimer(10 + i, cl[i].kc, KEVENT_TIMER_ABSTIME, t0 - back, 0, 0, 10 + i));
		check_fired(kt_get_one(kfd, "a past one-expiry timer"), 10 + i, 1, "one expiry");
	}
	kt_assert_quiet(kfd, 20, "a past one-expiry timer fired twice");
	cr_assert_eq(kt_queue_kevents(kfd), 3u, "one-expiry timers stay registered");
	close(kfd);
}

/*
 * D58: the count of a periodic timer read after a deliberate delay.
 * Points v + k i from ADD (between a and b) read at the dequeue (between
 * g0 and g1): at least floor((g0 - b) / i) and at most floor((g1 - a) / i);
 * the next delivery counts the points after the first dequeue, and the
 * two together never more than all points up to the second.
 */
KTEST_REVS(ptimer, expiry_count_after_delay, 3, KTEST_OPEN)
{
	const __u64 iv = 10000000ULL;	/* 10 ms */
	int kfd = kt_open(O_RDWR);
	struct ukevent out[4];

	__u64 a = kt_now_ns();
	ext_add(kfd, ptimer(1, KEVENT_CLOCK_MONOTONIC, 0, iv, iv, 0, 3));
	__u64 b = kt_now_ns();
	kt_sleep_ms(205);
	__u64 g0 = kt_now_ns();
	cr_assert_eq(kt_get(kfd, 1, 4, KT_MS(5000), out), 1);
	__u64 g1 = kt_now_ns();
	__u32 c1 = out[0].ret_data[0];

	check_fired(out[0], 3, 0, "first delivery");
	cr_assert_geq(c1, (__u32)((g0 - b) / iv), "count %u after %llu ms", c1,
		      (unsigned long long)((g0 - b) / 1000000));
	cr_assert_leq(c1, (__u32)((g1 - a) / iv), "count %u within %llu ms", c1,
		      (unsigned long long)((g1 - a) / 1000000));
	kt_sleep_ms(105);
	__u64 h0 = kt_now_ns();
	cr_assert_eq(kt_get(kfd, 1, 4, KT_MS(5000), out), 1);
	__u64 h1 = kt_now_ns();
	__u32 c2 = out[0].ret_data[0];

	check_fired(out[0], 3, 0, "second delivery");
	cr_assert_geq(c2, (__u32)((h0 - g1) / iv), "second count %u", c2);
	cr_assert_leq(c2, (__u32)((h1 - g0) / iv) + 1, "second count %u", c2);
	cr_assert_geq(c1 + c2, (__u32)((h0 - b) / iv), "total %u", c1 + c2);
	cr_assert_leq(c1 + c2, (__u32)((h1 - a) / iv), "total %u", c1 + c2);
	close(kfd);
}

/*
 * D61: MODIFY with a setting re-arms (pending expiries discarded, the
 * kevent off the ready list, a new grid from the MODIFY), value {0, 0}
 * disarms; MODIFY through KEVENT_IOC_CTL keeps the setting.
 */
KTEST_REVS(ptimer, modify_rearms_and_disarms, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent_ext e = ptimer(1, KEVENT_CLOCK_MONOTONIC, 0, 2000000, 2000000, 0, 5);
	struct ukevent out[4];

	ext_add(kfd, e);
	cr_assert(kt_wait_ready(kfd, 1, 5000), "a 2 ms timer not ready within 5 s");
	kt_sleep_ms(20);	/* several expiries pending */
	e.ext.timer.value = kts(300 * 1000000ULL);
	e.ext.timer.interval = kts(0);
	__u64 t0 = kt_now_ns();
	ext1(kfd, KEVENT_CTL_MODIFY, &e, 0);
	cr_assert_eq(e.ev.ret_flags, (__u32)KEVENT_RET_DONE, "MODIFY ret_flags %#x", e.ev.ret_flags);
	__u32 ready = kt_queue_ready(kfd);
	int early = kt_get(kfd, 1, 4, 0, out);

	/*
	 * Only while the new setting has not come due: a caller stalled 300 ms
	 * (a loaded machine) rightly finds the re-armed expiry itself.
	 */
	if (kt_now_ns() - t0 < 300 * 1000000ULL) {
		cr_assert_eq(ready, 0u, "re-armed timer still on the ready list");
		cr_assert_eq(early, 0, "pending expiries delivered after re-arm");
	}
	if (early == 1) {
		check_fired(out[0], 5, 1, "re-armed, taken late");
	} else {
		cr_assert_eq(kt_get(kfd, 1, 4, KT_MS(5000), out), 1, "re-armed timer did not fire");
		cr_assert_geq(kt_now_ns() - t0, 300 * 1000000ULL, "fired before the new setting");
		check_fired(out[0], 5, 1, "re-armed");
	}

	/* Re-arm periodic, then disarm: nothing more, still registered. */
	e.ext.timer.value = kts(2000000);
	e.ext.timer.interval = kts(2000000);
	ext1(kfd, KEVENT_CTL_MODIFY, &e, 0);
	cr_assert(kt_wait_ready(kfd, 1, 5000), "re-armed periodic timer not ready");
	e.ext.timer.value = kts(0);
	ext1(kfd, KEVENT_CTL_MODIFY, &e, 0);
	cr_assert_eq(kt_queue_ready(kfd), 0u, "disarmed timer still ready");
	kt_assert_quiet(kfd, 100, "a disarmed timer fired");
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	struct ukevent_ext q = query(kfd, e, 1);

	cr_assert_eq(kts_ns(q.ext.timer.value), 0ULL, "disarmed QUERY value");

	/* A plain MODIFY replaces event and req_flags only: the setting stays. */
	e.ext.timer.value = kts(3600 * NSEC);
	e.ext.timer.interval = kts(7 * NSEC);
	ext1(kfd, KEVENT_CTL_MODIFY, &e, 0);
	struct ukevent plain = e.ev;

	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &plain, 0);
	cr_assert_eq(plain.ret_flags, (__u32)KEVENT_RET_DONE);
	q = query(kfd, e, 1);
	cr_assert_eq(kts_ns(q.ext.timer.interval), 7 * NSEC, "plain MODIFY changed the interval");
	cr_assert_gt(kts_ns(q.ext.timer.value), 3590 * NSEC, "plain MODIFY changed the expiry");
	close(kfd);
}

/*
 * D61: QUERY writes back the clock, flags 0, the time left (at most the
 * setting, at least 1 ns), the interval, ret_data {pending, 0}; {0, 0} when
 * disarmed; another type BROKEN with -EINVAL; no match as D38; no state change.
 */
KTEST_REVS(ptimer, query_reports_setting, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent_ext t = ptimer(1, KEVENT_CLOCK_BOOTTIME, 0, 10 * NSEC + 5, 2 * NSEC + 7, 0, 1);
	struct ukevent_ext d = ptimer(2, KEVENT_CLOCK_REALTIME, KEVENT_TIMER_ABSTIME, 0, 0, 0, 2);
	struct ukevent_ext u = uevent(3, 0, 3), f = ptimer(4, KEVENT_CLOCK_MONOTONIC, 0, 1000000,
								1000000, 0, 4);

	ext_add(kfd, t);
	ext_add(kfd, d);
	ext_add(kfd, u);
	ext_add(kfd, f);

	struct ukevent_ext q = query(kfd, t, 1);
	cr_assert_eq(q.ev.ret_flags, (__u32)KEVENT_RET_DONE, "ret_flags %#x", q.ev.ret_flags);
	cr_assert_eq(q.ext.timer.clock, (__u32)KEVENT_CLOCK_BOOTTIME);
	cr_assert_eq(q.ext.timer.flags, 0u);
	cr_assert_leq(kts_ns(q.ext.timer.value), 10 * NSEC + 5, "time left above the setting");
	cr_assert_gt(kts_ns(q.ext.timer.value), 5 * NSEC, "time left %llu ns",
		     (unsigned long long)kts_ns(q.ext.timer.value));
	cr_assert_lt(q.ext.timer.value.tv_nsec, (__u32)NSEC);
	cr_assert_eq(q.ext.timer.value.__pad, 0u);
	cr_assert_eq(q.ext.timer.interval.tv_sec, 2);
	cr_assert_eq(q.ext.timer.interval.tv_nsec, 7u);
	cr_assert_eq(q.ev.ret_data[0], 0u);
	cr_assert_eq(q.ev.ret_data[1], 0u);

	q = query(kfd, d, 1);	/* value {0, 0}: disarmed whatever the flags (D59) */
	cr_assert_eq(q.ev.ret_flags, (__u32)KEVENT_RET_DONE);
	cr_assert_eq(q.ext.timer.clock, (__u32)KEVENT_CLOCK_REALTIME);
	cr_assert_eq(q.ext.timer.flags, 0u, "QUERY writes flags 0");
	cr_assert_eq(kts_ns(q.ext.timer.value), 0ULL);
	cr_assert_eq(kts_ns(q.ext.timer.interval), 0ULL);

	q = query(kfd, u, 1);
	cr_assert_eq(q.ev.ret_flags, BROKEN_DONE);
	cr_assert_eq((int)q.ev.ret_data[1], -EINVAL);

	struct ukevent_ext miss = ptimer(99, KEVENT_CLOCK_MONOTONIC, 0, 0, 0, 0, 99);
	miss.ev.ret_data[0] = 0x1234;
	miss.ev.ret_data[1] = 0x5678;
	ext1(kfd, KEVENT_CTL_QUERY, &miss, 0);
	cr_assert_eq(miss.ev.ret_flags, BROKEN_DONE);
	cr_assert_eq(miss.ev.ret_data[0], 0x1234u, "D38: as passed");
	cr_assert_eq(miss.ev.ret_data[1], 0x5678u, "D38: as passed");

	/* Pending points are counted and left pending: QUERY changes nothing. */
	cr_assert(kt_wait_ready(kfd, 1, 5000), "a 1 ms timer not ready");
	kt_sleep_ms(10);
	q = query(kfd, f, 1);
	__u32 pending = q.ev.ret_data[0];
	cr_assert_geq(pending, 1u, "ready timer, QUERY pending %u", pending);
	cr_assert_geq(kts_ns(q.ext.timer.value), 1ULL, "armed: at least 1 ns left");
	cr_assert_leq(kts_ns(q.ext.timer.value), 1000000ULL);
	cr_assert_eq(kt_queue_ready(kfd), 1u, "QUERY took the timer off the ready list");
	struct ukevent ev = kt_get_one(kfd, "the queried timer");
	check_fired(ev, 4, 0, "after QUERY");
	cr_assert_geq(ev.ret_data[0], pending, "QUERY consumed expiries");

	/* Whole call: num above the queue's kevents, as MODIFY. */
	struct ukevent_ext many[5] = { t, t, t, t, t };
	cr_assert_eq(kt_ctl_ext(kfd, KEVENT_CTL_QUERY, 5, many), -EINVAL);
	close(kfd);
}

/*
 * D58, D59: the i-th refused POSIX timer entry (id, cookie), made from a
 * valid one-second setting: an interval below 100 us, an unknown clock or
 * flag, a bad timespec, event without KEVENT_TIMER_FIRED, KEVENT_REQ_LEVEL.
 * Returns what is wrong with it, NULL past the last one.
 */
static const char *bad_setting(unsigned int i, __u32 id, __u32 cookie, struct ukevent_ext *e)
{
	static const __u32 bad_clocks[] = { 2, 3, 4, 5, 6, 8, 11, 0xffffffffu };
	const unsigned int nclocks = sizeof(bad_clocks) / sizeof(bad_clocks[0]);

	*e = ptimer(id, KEVENT_CLOCK_MONOTONIC, 0, NSEC, NSEC, 0, cookie);
	if (i < nclocks) {
		e->ext.timer.clock = bad_clocks[i];
		return "unknown clock";
	}
	switch (i - nclocks) {
	case 0: e->ext.timer.interval = kts(KEVENT_TIMER_MIN_INTERVAL_NS - 1); return "interval 99999 ns";
	case 1: e->ext.timer.interval = kts(1); return "interval 1 ns";
	case 2: e->ext.timer.flags = 0x2; return "flags 0x2";
	case 3: e->ext.timer.flags = 0x80000000u; return "flags bit 31";
	case 4: e->ext.timer.value.tv_nsec = (__u32)NSEC; return "value tv_nsec 10^9";
	case 5: e->ext.timer.value.tv_sec = -1; return "value tv_sec -1";
	case 6: e->ext.timer.value.__pad = 1; return "value __pad 1";
	case 7: e->ext.timer.interval.tv_nsec = (__u32)NSEC; return "interval tv_nsec 10^9";
	case 8: e->ext.timer.interval.tv_sec = -1; return "interval tv_sec -1";
	case 9: e->ext.timer.interval.__pad = 1; return "interval __pad 1";
	case 10: e->ev.event = 0x2; return "event without KEVENT_TIMER_FIRED";
	case 11: e->ev.req_flags = KEVENT_REQ_LEVEL; return "KEVENT_REQ_LEVEL";
	default: return NULL;
	}
}

/* D58, D59: each refused setting fails its ADD entry -EINVAL; exactly 100 us is allowed. */
KTEST_REVS(ptimer, bad_settings_einval, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent_ext e;
	const char *what;

	for (unsigned int i = 0; (what = bad_setting(i, 2, 2, &e)); i++)
		ext_add_einval(kfd, e, what);
	e = ptimer(1, KEVENT_CLOCK_MONOTONIC, 0, 3600 * NSEC, KEVENT_TIMER_MIN_INTERVAL_NS, 0, 1);
	ext_add(kfd, e);	/* exactly the minimum is allowed */
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	close(kfd);
}

/*
 * D59, D61: MODIFY checks a new setting as ADD does, each refusal failing
 * that entry -EINVAL (FIRED and LEVEL too, D58); the old setting stays.
 */
KTEST_REVS(ptimer, modify_checks_setting_as_add, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent_ext e = ptimer(1, KEVENT_CLOCK_MONOTONIC, 0, 3600 * NSEC, 7 * NSEC, 0, 1);
	const char *what;

	ext_add(kfd, e);
	for (unsigned int i = 0; (what = bad_setting(i, 1, 1, &e)); i++) {
		ext1(kfd, KEVENT_CTL_MODIFY, &e, 0);
		cr_assert_eq(e.ev.ret_flags, BROKEN_DONE, "MODIFY, %s: ret_flags %#x", what,
			     e.ev.ret_flags);
		cr_assert_eq((int)e.ev.ret_data[1], -EINVAL, "MODIFY, %s: ret_data[1] %d", what,
			     (int)e.ev.ret_data[1]);
	}
	e = query(kfd, ptimer(1, KEVENT_CLOCK_MONOTONIC, 0, 0, 0, 0, 1), 1);
	cr_assert_eq(e.ext.timer.clock, (__u32)KEVENT_CLOCK_MONOTONIC);
	cr_assert_eq(kts_ns(e.ext.timer.interval), 7 * NSEC, "a refused MODIFY changed the interval");
	cr_assert_gt(kts_ns(e.ext.timer.value), 3500 * NSEC, "a refused MODIFY re-armed the timer");
	close(kfd);
}

/*
 * D58: a CLOCK_REALTIME step moves an ABSTIME realtime timer (every grid
 * point passed fires at once, counted) and neither a relative realtime
 * timer nor a monotonic one.  Sets the clock: only with
 * KEVENT_TEST_CLOCK_SET=1 (the guest's boot of its own); restored after.
 */
KTEST_REVS(ptimer, clock_set_moves_abstime_timer, 3, KTEST_OPEN)
{
	/* Under Criterion's timeout, which follows the wall clock. */
	const __u64 step = 40 * NSEC;
	int kfd;

	kt_require_clock_set();
	kfd = kt_open(O_RDWR);
	__u64 rt = clock_ns(CLOCK_REALTIME), mono = kt_now_ns();

	/* Fires 10 s ahead, then every 6 s: the step passes 6 points (10 s, 16 s, ... 40 s). */
	ext_add(kfd, ptimer(1, KEVENT_CLOCK_REALTIME, KEVENT_TIMER_ABSTIME, rt + 10 * NSEC,
			    6 * NSEC, 0, 1));
	ext_add(kfd, ptimer(2, KEVENT_CLOCK_REALTIME, 0, 20 * NSEC, 0, 0, 2));
	ext_add(kfd, ptimer(3, KEVENT_CLOCK_MONOTONIC, 0, 20 * NSEC, 0, 0, 3));
	kt_assert_quiet(kfd, 50, "before the step");

	struct timespec to = { (time_t)((rt + step) / NSEC), (long)((rt + step) % NSEC) };
	cr_assert_eq(clock_settime(CLOCK_REALTIME, &to), 0, "clock_settime: %s", strerror(errno));
	struct ukevent out[4];
	int n = kt_get(kfd, 1, 4, KT_MS(5000), out);
	/* Put the clock back where it would be: the original plus the time elapsed. */
	__u64 back = rt + (kt_now_ns() - mono);

	to.tv_sec = (time_t)(back / NSEC);
	to.tv_nsec = (long)(back % NSEC);
	cr_assert_eq(clock_settime(CLOCK_REALTIME, &to), 0, "restoring the clock");
	cr_assert_eq(n, 1, "after a 40 s step: %d events, want the ABSTIME timer only", n);
	cr_assert_eq(out[0].user[0], 1u, "fired: cookie %u", out[0].user[0]);
	cr_assert_geq(out[0].ret_data[0], 6u, "points passed by the step: %u", out[0].ret_data[0]);
	cr_assert_leq(out[0].ret_data[0], 7u, "points passed by the step: %u", out[0].ret_data[0]);
	close(kfd);
}

/* A MODIFY entry that must fail -EINVAL, 40 bytes (e NULL: uk) or EXT. */
static void modify_einval(int kfd, struct ukevent uk, struct ukevent_ext *e, const char *what)
{
	if (e) {
		ext1(kfd, KEVENT_CTL_MODIFY, e, 0);
		uk = e->ev;
	} else {
		kt_ctl1(kfd, KEVENT_CTL_MODIFY, &uk, 0);
	}
	cr_assert_eq(uk.ret_flags, BROKEN_DONE, "%s: ret_flags %#x", what, uk.ret_flags);
	cr_assert_eq((int)uk.ret_data[1], -EINVAL, "%s: ret_data[1] %d", what, (int)uk.ret_data[1]);
}

/*
 * D58, D60-D62: MODIFY refuses what ADD refuses: a POSIX timer's event
 * without KEVENT_TIMER_FIRED through a 40-byte entry, KEVENT_REQ_LEVEL on a
 * POSIX timer or a user event (40 and 80 bytes), a non-zero ext on any
 * other type.  A refused MODIFY changes nothing: the user event asked for
 * ONESHOT stays registered after its delivery.
 */
KTEST_REVS(ptimer, modify_refuses_as_add, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent_ext t = ptimer(1, KEVENT_CLOCK_MONOTONIC, 0, 3600 * NSEC, 0, 0, 1);
	struct ukevent_ext u = uevent(2, 0, 2), k, e;
	struct ukevent uk;

	memset(&k, 0, sizeof(k));
	k.ev = kt_uk_timer(HOUR_MS, 0, 3);
	ext_add(kfd, t);
	ext_add(kfd, u);
	ext_add(kfd, k);
	uk = t.ev;
	uk.event = 0x2;
	modify_einval(kfd, uk, NULL, "40-byte MODIFY of a POSIX timer without FIRED");
	uk = t.ev;
	uk.req_flags = KEVENT_REQ_LEVEL;
	modify_einval(kfd, uk, NULL, "40-byte MODIFY of a POSIX timer to LEVEL");
	uk = u.ev;
	uk.req_flags = KEVENT_REQ_LEVEL | KEVENT_REQ_ONESHOT;
	modify_einval(kfd, uk, NULL, "40-byte MODIFY of a user event to LEVEL");
	e = u;
	e.ev.req_flags = KEVENT_REQ_LEVEL | KEVENT_REQ_ONESHOT;
	modify_einval(kfd, e.ev, &e, "EXT MODIFY of a user event to LEVEL");
	for (int w = 0; w < 5; w++) {
		e = u;
		e.ev.req_flags = KEVENT_REQ_ONESHOT;
		e.ext.__raw[w] = 1ULL << (w * 13);
		modify_einval(kfd, e.ev, &e, "MODIFY of a user event with a non-zero ext");
		e = k;
		e.ext.__raw[w] = 1;
		modify_einval(kfd, e.ev, &e, "MODIFY of a take13 timer with a non-zero ext");
	}
	e = k;
	ext1(kfd, KEVENT_CTL_MODIFY, &e, 0);
	cr_assert_eq(e.ev.ret_flags, (__u32)KEVENT_RET_DONE, "EXT MODIFY of a take13 timer, zero ext");
	trigger(kfd, 2, 2, 0x1);
	uk = kt_get_one(kfd, "the user event");
	cr_assert_eq(uk.user[0], 2u);
	cr_assert_eq(kt_queue_kevents(kfd), 3u, "a refused MODIFY made the user event ONESHOT");
	e = query(kfd, t, 1);
	cr_assert_gt(kts_ns(e.ext.timer.value), 3500 * NSEC, "the POSIX timer changed");
	close(kfd);
}

/*
 * D60, D61: REMOVE and READY read no setting: a POSIX timer's ext is not
 * checked there (nor by QUERY, which overwrites it), while a user event or
 * a take13 timer with a non-zero ext fails that entry -EINVAL, untouched.
 */
KTEST_REVS(ptimer, remove_and_ready_read_no_setting, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent_ext t = ptimer(1, KEVENT_CLOCK_MONOTONIC, 0, 3600 * NSEC, 0, 0, 1);
	struct ukevent_ext u = uevent(2, 0, 2), k, e;

	memset(&k, 0, sizeof(k));
	k.ev = kt_uk_timer(HOUR_MS, 0, 3);
	ext_add(kfd, t);
	ext_add(kfd, u);
	ext_add(kfd, k);
	t.ext.timer.clock = 5;	/* garbage as a setting: 5 is no clock, __pad set */
	t.ext.timer.flags = 0x80;
	t.ext.timer.interval.__pad = 1;
	e = t;
	ext1(kfd, KEVENT_CTL_READY, &e, 1);
	cr_assert_eq(e.ev.ret_flags, (__u32)KEVENT_RET_DONE, "READY of a POSIX timer: %#x",
		     e.ev.ret_flags);
	check_fired(kt_get_one(kfd, "the timer made ready"), 1, 0, "READY before any expiry");
	e = t;
	ext1(kfd, KEVENT_CTL_QUERY, &e, 1);
	cr_assert_eq(e.ev.ret_flags, (__u32)KEVENT_RET_DONE, "QUERY: %#x", e.ev.ret_flags);
	cr_assert_eq(e.ext.timer.clock, (__u32)KEVENT_CLOCK_MONOTONIC, "QUERY overwrites the ext");
	for (int i = 0; i < 2; i++) {
		e = i ? k : u;
		e.ext.__raw[1] = 1;
		ext1(kfd, KEVENT_CTL_READY, &e, 0);
		cr_assert_eq(e.ev.ret_flags, BROKEN_DONE, "READY, cookie %u, non-zero ext", e.ev.user[0]);
		cr_assert_eq((int)e.ev.ret_data[1], -EINVAL);
		e = i ? k : u;
		e.ext.__raw[3] = 1;
		ext1(kfd, KEVENT_CTL_REMOVE, &e, 0);
		cr_assert_eq(e.ev.ret_flags, BROKEN_DONE, "REMOVE, cookie %u, non-zero ext",
			     e.ev.user[0]);
		cr_assert_eq((int)e.ev.ret_data[1], -EINVAL);
	}
	cr_assert_eq(kt_queue_ready(kfd), 0u, "a refused READY made a kevent ready");
	cr_assert_eq(kt_queue_kevents(kfd), 3u, "a refused REMOVE removed a kevent");
	e = t;
	ext1(kfd, KEVENT_CTL_REMOVE, &e, 0);
	cr_assert_eq(e.ev.ret_flags, (__u32)KEVENT_RET_DONE, "REMOVE of a POSIX timer: %#x",
		     e.ev.ret_flags);
	cr_assert_eq(kt_queue_kevents(kfd), 2u);
	close(kfd);
}

/*
 * D61: QUERY reports the timer's own clock (a relative REALTIME timer is
 * measured on MONOTONIC, D58, but is a REALTIME timer); the time left to
 * the next grid point not passed, pending points included; the points
 * passed and not delivered, so none of those delivered; {0, 0} once a
 * one-expiry timer's point passed.  A periodic ABSTIME timer started
 * 10.5 s back with a 1 s interval: about 11 points pending, the next about
 * 0.5 s ahead.
 */
KTEST_REVS(ptimer, query_counts_from_the_last_delivery, 3, KTEST_OPEN)
{
	const __u64 back = 10 * NSEC + NSEC / 2;
	int kfd = kt_open(O_RDWR);
	struct ukevent_ext r = ptimer(1, KEVENT_CLOCK_REALTIME, 0, 3600 * NSEC, 0, 0, 1), q;
	__u64 t0 = clock_ns(CLOCK_MONOTONIC), v = t0 - back;
	struct ukevent_ext p = ptimer(2, KEVENT_CLOCK_MONOTONIC, KEVENT_TIMER_ABSTIME, v, NSEC, 0, 2);
	struct ukevent_ext o = ptimer(3, KEVENT_CLOCK_MONOTONIC, KEVENT_TIMER_ABSTIME, v, 0, 0, 3);

	cr_assert_gt(t0, back, "CLOCK_MONOTONIC reads %llu ns", (unsigned long long)t0);
	ext_add(kfd, r);
	q = query(kfd, r, 1);
	cr_assert_eq(q.ext.timer.clock, (__u32)KEVENT_CLOCK_REALTIME, "relative REALTIME: clock %u",
		     q.ext.timer.clock);
	cr_assert_gt(kts_ns(q.ext.timer.value), 3500 * NSEC);

	ext_add(kfd, p);
	ext_add(kfd, o);
	cr_assert(kt_wait_ready(kfd, 2, 5000), "past absolute timers not ready within 5 s");
	q = query(kfd, o, 1);
	cr_assert_eq(q.ev.ret_data[0], 1u, "one-expiry timer: %u pending", q.ev.ret_data[0]);
	cr_assert_eq(kts_ns(q.ext.timer.value), 0ULL, "one-expiry timer past its point: %llu ns left",
		     (unsigned long long)kts_ns(q.ext.timer.value));

	__u64 q0 = clock_ns(CLOCK_MONOTONIC);
	q = query(kfd, p, 1);
	__u64 q1 = clock_ns(CLOCK_MONOTONIC), left = kts_ns(q.ext.timer.value);
	__u32 n0 = points_by(v, NSEC, q0), n1 = points_by(v, NSEC, q1);

	cr_assert(q.ev.ret_data[0] >= n0 && q.ev.ret_data[0] <= n1, "%u pending, want %u .. %u",
		  q.ev.ret_data[0], n0, n1);
	cr_assert(left > 0 && left <= NSEC, "%llu ns left, interval 1 s", (unsigned long long)left);
	if (n0 == n1)	/* no point passed during the QUERY: the next one is v + n0 s */
		cr_assert(left >= v + n0 * NSEC - q1 && left <= v + n0 * NSEC - q0,
			  "%llu ns left, the next point is %llu ns after the QUERY",
			  (unsigned long long)left, (unsigned long long)(v + n0 * NSEC - q1));

	/* A 10 ms grid from 1 s back: delivered, then points pass again. */
	const __u64 iv = 10000000ULL;
	struct ukevent out[4];

	kt_remove(kfd, p.ev);
	kt_remove(kfd, o.ev);
	v = clock_ns(CLOCK_MONOTONIC) - NSEC - iv / 2;
	p = ptimer(4, KEVENT_CLOCK_MONOTONIC, KEVENT_TIMER_ABSTIME, v, iv, 0, 4);
	ext_add(kfd, p);
	cr_assert_eq(kt_get(kfd, 1, 1, KT_MS(5000), out), 1);
	__u32 got = out[0].ret_data[0];

	check_fired(out[0], 4, 0, "the 10 ms timer");
	cr_assert(kt_wait_ready(kfd, 1, 5000), "the 10 ms timer did not fire again");
	q = query(kfd, p, 1);
	__u64 q2 = clock_ns(CLOCK_MONOTONIC);

	cr_assert_geq(q.ev.ret_data[0], 1u, "ready again, QUERY: %u pending", q.ev.ret_data[0]);
	cr_assert_leq(got + q.ev.ret_data[0], points_by(v, iv, q2),
		      "%u delivered + %u pending, more than the %u points passed", got,
		      q.ev.ret_data[0], points_by(v, iv, q2));
	close(kfd);
}
