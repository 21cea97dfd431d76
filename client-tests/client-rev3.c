// SPDX-License-Identifier: GPL-2.0
/*
 * Revision 3 (docs/abi.md D58-D64): KEVENT_POSIX_TIMER with its setting in
 * a KEVENT_CTL_EXT entry (clock, nanoseconds, ABSTIME, expiry counts, re-arm
 * and disarm by MODIFY, KEVENT_CTL_QUERY), KEVENT_USER made ready by READY,
 * and the type in the search key.  The tests of the rules that hold from
 * revision 3 on are KTEST_REVS(..., 3, KTEST_OPEN); those that say what a
 * queue below revision 3 keeps (the new calls refused, the old answers for
 * types 8 and 9, id-only matching) are [1, 2].  The take13 KEVENT_TIMER on
 * a revision-3 queue is client-timer's __rev3 instances.
 *
 * The clock-set test (a CLOCK_REALTIME step moving an ABSTIME timer) sets
 * the machine's clock: named clock_set_* as every such test, it runs only
 * with KEVENT_TEST_CLOCK_SET=1, which only the guest boot of its own sets
 * (tests/vm/README.md), skips loudly everywhere else, and puts the clock
 * back before it checks anything.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ktest.h"

#define NSEC 1000000000ULL
#define HOUR_MS (3600u * 1000u)
#define BROKEN_DONE ((__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE))

static __u64 clock_ns(clockid_t c)
{
	struct timespec ts;

	cr_assert_eq(clock_gettime(c, &ts), 0, "clock_gettime(%d)", (int)c);
	return (__u64)ts.tv_sec * NSEC + (__u64)ts.tv_nsec;
}

static struct kevent_timespec kts(__u64 ns)
{
	struct kevent_timespec t = { .tv_sec = (__s64)(ns / NSEC), .tv_nsec = (__u32)(ns % NSEC) };

	return t;
}

static __u64 kts_ns(struct kevent_timespec t)
{
	return (__u64)t.tv_sec * NSEC + t.tv_nsec;
}

/* A POSIX timer entry: value and interval in ns, cookie in user[0]. */
static struct ukevent_ext ptimer(__u32 id, __u32 clock, __u32 flags, __u64 value_ns,
				 __u64 interval_ns, __u32 req_flags, __u32 cookie)
{
	struct ukevent_ext e;

	memset(&e, 0, sizeof(e));
	e.ev = kt_uk(KEVENT_POSIX_TIMER, id, 0, KEVENT_TIMER_FIRED, req_flags, cookie);
	e.ext.timer.clock = clock;
	e.ext.timer.flags = flags;
	e.ext.timer.value = kts(value_ns);
	e.ext.timer.interval = kts(interval_ns);
	return e;
}

/* A user event entry (no extension). */
static struct ukevent_ext uevent(__u32 id, __u32 req_flags, __u32 cookie)
{
	struct ukevent_ext e;

	memset(&e, 0, sizeof(e));
	e.ev = kt_uk(KEVENT_USER, id, 0, 0, req_flags, cookie);
	return e;
}

/* One EXT entry; asserts the call returns want. */
static void ext1(int kfd, unsigned int cmd, struct ukevent_ext *e, int want)
{
	int r = kt_ctl_ext(kfd, cmd, 1, e);

	cr_assert_eq(r, want, "CTL_EXT(cmd %u, type %u id %u) = %d (%s), want %d", cmd,
		     e->ev.type, e->ev.id.raw[0], r, r < 0 ? strerror(-r) : "-", want);
}

/* ADD of one EXT entry that must be registered (ADD answers nothing). */
static void ext_add(int kfd, struct ukevent_ext e)
{
	ext1(kfd, KEVENT_CTL_ADD, &e, 0);
}

/* ADD of one EXT entry that must fail with -EINVAL, that entry only. */
static void ext_add_einval(int kfd, struct ukevent_ext e, const char *what)
{
	unsigned int before = kt_queue_kevents(kfd);
	int r = kt_ctl_ext(kfd, KEVENT_CTL_ADD, 1, &e);

	cr_assert_eq(r, 1, "%s: ADD returned %d (%s), want 1 answered entry", what, r,
		     r < 0 ? strerror(-r) : "-");
	cr_assert_eq(e.ev.ret_flags, BROKEN_DONE, "%s: ret_flags %#x", what, e.ev.ret_flags);
	cr_assert_eq((int)e.ev.ret_data[1], -EINVAL, "%s: ret_data[1] %d, want -EINVAL", what,
		     (int)e.ev.ret_data[1]);
	cr_assert_eq(kt_queue_kevents(kfd), before, "%s: registered anyway", what);
}

/* READY of one user event with a value; asserts it matched. */
static void trigger(int kfd, __u32 id, __u32 cookie, __u32 value)
{
	struct ukevent uk = kt_uk(KEVENT_USER, id, 0, value, 0, cookie);

	kt_ctl1(kfd, KEVENT_CTL_READY, &uk, 1);
	cr_assert_eq(uk.ret_flags, (__u32)KEVENT_RET_DONE, "READY ret_flags %#x", uk.ret_flags);
}

/* QUERY of one entry through EXT: the entry as written back. */
static struct ukevent_ext query(int kfd, struct ukevent_ext key, int want)
{
	key.ev.ret_flags = 0;
	key.ev.ret_data[0] = key.ev.ret_data[1] = 0;
	memset(&key.ext, 0, sizeof(key.ext));	/* an output for a timer, zero for the rest */
	ext1(kfd, KEVENT_CTL_QUERY, &key, want);
	return key;
}

static void check_fired(struct ukevent ev, __u32 cookie, __u32 count, const char *what)
{
	cr_assert_eq(ev.type, (__u32)KEVENT_POSIX_TIMER, "%s: type %u", what, ev.type);
	cr_assert_eq(ev.user[0], cookie, "%s: cookie %u", what, ev.user[0]);
	cr_assert_eq(ev.ret_flags, (__u32)KEVENT_RET_DONE, "%s: ret_flags %#x", what, ev.ret_flags);
	if (count)
		cr_assert_eq(ev.ret_data[0], count, "%s: expiry count %u, want %u", what,
			     ev.ret_data[0], count);
	cr_assert_eq(ev.ret_data[1], 0u, "%s: ret_data[1] %u", what, ev.ret_data[1]);
}

/* D64: INFO names the new types and features on a revision-3 queue, and only there. */
KTEST_REVS(rev3, info_bits_on_revision_3_only, 3, KTEST_OPEN)
{
	const __u32 types = (1u << KEVENT_POSIX_TIMER) | (1u << KEVENT_USER);
	const __u32 feats = KEVENT_FEAT_POSIX_TIMER | KEVENT_FEAT_USER;
	int kfd = kt_open(O_RDWR), r1 = open(kt_device(), O_RDWR), r2 = open(kt_device(), O_RDWR);
	struct kevent_info i;

	cr_assert(r1 >= 0 && r2 >= 0);
	cr_assert_eq(kevent_set_abi(r2, 2, 0), 0, "SET_ABI(2): %s", strerror(errno));
	kt_info(kfd, &i);
	cr_assert_geq(i.abi_revision, 3u);
	cr_assert_eq(i.queue_revision, (__u32)kt_rev(), "the queue of this instance");
	cr_assert_eq(i.supported_types & types, types, "rev 3 supported_types %#x", i.supported_types);
	cr_assert_eq(i.features & feats, feats, "rev 3 features %#x", i.features);
	for (int q = 0; q < 2; q++) {
		kt_info(q ? r2 : r1, &i);
		cr_assert_eq(i.queue_revision, (__u32)q + 1);
		cr_assert_eq(i.supported_types & types, 0u, "rev %d supported_types %#x", q + 1,
			     i.supported_types);
		cr_assert_eq(i.features & feats, 0u, "rev %d features %#x", q + 1, i.features);
	}
	close(r1);
	close(r2);
	close(kfd);
}

/* D64: below revision 3, types 8 and 9 keep take13's -EINVAL (A3) and revision 2's -ENOSYS (D51). */
KTEST_REVS(rev3, new_types_unchanged_below_revision_3, 1, 2)
{
	int kfd = kt_open(O_RDWR), want = kt_rev() == 1 ? -EINVAL : -ENOSYS;
	struct ukevent uk[2] = {
		kt_uk(KEVENT_POSIX_TIMER, 1, 0, KEVENT_TIMER_FIRED, 0, 1),
		kt_uk(KEVENT_USER, 1, 0, 0, 0, 2),
	};

	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 2, uk), 2, "both entries answered");
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(uk[i].ret_flags, BROKEN_DONE);
		cr_assert_eq((int)uk[i].ret_data[1], want, "type %u on revision %d: %d, want %d",
			     uk[i].type, kt_rev(), (int)uk[i].ret_data[1], want);
	}
	cr_assert_eq(kt_queue_kevents(kfd), 0u);
	close(kfd);
}

/*
 * D60, D61, D64: below revision 3 KEVENT_CTL_EXT is -EINVAL on the header
 * (nothing read or written), and cmd 4 (QUERY) is an unknown cmd (D25).
 * ioc_flags 0 at the VER1 size is KEVENT_IOC_CTL on every revision.  Only a
 * backend that serves revision 3 states this rule: an older one answers the
 * grown wrapper's non-zero tail -E2BIG, as before revision 3 existed.
 */
KTEST_REVS(rev3, ctl_ext_refused_below_revision_3, 1, 2)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent_ext e = ptimer(1, KEVENT_CLOCK_MONOTONIC, 0, NSEC, 0, 0, 1), copy = e;
	struct ukevent uk[2] = { kt_uk_timer(HOUR_MS, 0, 1), kt_uk_timer(HOUR_MS, 0, 2) };
	struct kevent_ctl_ext_arg a = { .cmd = KEVENT_CTL_ADD, .num = 1,
					.events = (__u64)(uintptr_t)uk };

	if (kt_backend_info()->abi_revision < 3)
		cr_skip_test("the %s backend serves revision %u: the refusal of KEVENT_CTL_EXT "
			     "on lower queues is a rule of backends serving revision 3 (D60)",
			     kt_backend_name(kt_backend()), kt_backend_info()->abi_revision);
	cr_assert_eq(kt_ctl_ext(kfd, KEVENT_CTL_ADD, 1, &e), -EINVAL);
	cr_assert_eq(memcmp(&e, &copy, sizeof(e)), 0, "the refused call wrote the array");
	cr_assert_eq(kt_queue_kevents(kfd), 0u);
	cr_assert_eq(kt_ioctl(kfd, KEVENT_IOC_CTL_EXT, &a), 0, "ioc_flags 0: plain KEVENT_IOC_CTL");
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	cr_assert_eq(kt_ctl_ext(kfd, KEVENT_CTL_QUERY, 1, &e), -EINVAL, "QUERY through EXT");
	errno = 0;
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_QUERY, 1, &uk[0]), -1);
	cr_assert_eq(errno, EINVAL, "cmd 4 on revision %d: %s", kt_rev(), strerror(errno));
	close(kfd);
}

/* D60: on revision 3 the wrapper's unknown ioc_flags, __pad and the plain entry of type 8. */
KTEST_REVS(rev3, ctl_ext_header_checks, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent_ext e = ptimer(1, KEVENT_CLOCK_MONOTONIC, 0, 3600 * NSEC, 0, 0, 1);
	struct ukevent plain = e.ev;

	cr_assert_eq(kt_ctl_ext_raw(kfd, KEVENT_CTL_ADD, 1, &e, KEVENT_CTL_EXT | 0x2, 0), -EINVAL);
	cr_assert_eq(kt_ctl_ext_raw(kfd, KEVENT_CTL_ADD, 1, &e, KEVENT_CTL_EXT, 1), -EINVAL);
	cr_assert_eq(kt_queue_kevents(kfd), 0u);
	/* D58: a POSIX timer without its setting (a 40-byte entry) fails that entry. */
	kt_ctl1(kfd, KEVENT_CTL_ADD, &plain, 1);
	cr_assert_eq(plain.ret_flags, BROKEN_DONE);
	cr_assert_eq((int)plain.ret_data[1], -EINVAL);
	cr_assert_eq(kt_queue_kevents(kfd), 0u);
	/* QUERY needs EXT entries: -EINVAL for the whole call through KEVENT_IOC_CTL. */
	ext_add(kfd, e);
	plain = e.ev;
	errno = 0;
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_QUERY, 1, &plain), -1);
	cr_assert_eq(errno, EINVAL, "QUERY without EXT: %s", strerror(errno));
	close(kfd);
}

/* D58, D59: each clock fires a relative timer once, with count 1, ret_data[1] 0. */
KTEST_REVS(rev3, each_clock_fires, 3, KTEST_OPEN)
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
KTEST_REVS(rev3, ready_before_expiry_delivers_count_0, 3, KTEST_OPEN)
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
KTEST_REVS(rev3, ns_expiries_never_early, 3, KTEST_OPEN)
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
KTEST_REVS(rev3, absolute_expiry, 3, KTEST_OPEN)
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

/* The grid points v, v + i, ... at or before t: D58's count from ADD up to t. */
static __u32 points_by(__u64 v, __u64 i, __u64 t)
{
	return t < v ? 0 : (__u32)((t - v) / i + 1);
}

/*
 * D58: an absolute first expiry already past is not answered by ADD; it
 * fires through the ready list at once with every grid point passed, on
 * each clock.  The first expiry 10.5 s back with a 1 s interval: 11 points
 * (10.5, 9.5, ... 0.5 s back) until the clock reaches the next one; the
 * count is bounded by the points before the ADD and after the dequeue.  A
 * one-expiry timer already past: count 1, and only once.
 */
KTEST_REVS(rev3, past_absolute_counts_grid_points, 3, KTEST_OPEN)
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
KTEST_REVS(rev3, expiry_count_after_delay, 3, KTEST_OPEN)
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
KTEST_REVS(rev3, modify_rearms_and_disarms, 3, KTEST_OPEN)
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
	cr_assert_eq(kt_queue_ready(kfd), 0u, "re-armed timer still on the ready list");
	cr_assert_eq(kt_get(kfd, 1, 4, 0, out), 0, "pending expiries delivered after re-arm");
	cr_assert_eq(kt_get(kfd, 1, 4, KT_MS(5000), out), 1, "re-armed timer did not fire");
	cr_assert_geq(kt_now_ns() - t0, 300 * 1000000ULL, "fired before the new setting");
	check_fired(out[0], 5, 1, "re-armed");

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
KTEST_REVS(rev3, query_reports_setting, 3, KTEST_OPEN)
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
KTEST_REVS(rev3, bad_settings_einval, 3, KTEST_OPEN)
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
KTEST_REVS(rev3, modify_checks_setting_as_add, 3, KTEST_OPEN)
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

/* D60: ext must be all zero for every type but KEVENT_POSIX_TIMER; written back as passed. */
KTEST_REVS(rev3, ext_of_other_types_must_be_zero, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent_ext e;

	for (int w = 0; w < 5; w++) {
		e = uevent(1, 0, 1);
		e.ext.__raw[w] = 1ULL << (w * 13);
		ext_add_einval(kfd, e, "user event with a non-zero ext");
		memset(&e, 0, sizeof(e));
		e.ev = kt_uk_timer(HOUR_MS, 0, 2);
		e.ext.__raw[w] = 1;
		ext_add_einval(kfd, e, "take13 timer with a non-zero ext");
	}
	memset(&e, 0, sizeof(e));
	e.ev = kt_uk_timer(HOUR_MS, 0, 2);
	ext_add(kfd, e);
	e = uevent(1, 0, 1);
	ext_add(kfd, e);
	for (int w = 0; w < 5; w++)
		cr_assert_eq(e.ext.__raw[w], 0ULL, "ext written back as passed");
	cr_assert_eq(kt_queue_kevents(kfd), 2u);
	close(kfd);
}

/* D62: a user event is never ready at ADD (ALWAYS_QUEUE: no effect); LEVEL fails the entry. */
KTEST_REVS(rev3, user_add_flags, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);

	ext_add_einval(kfd, uevent(1, KEVENT_REQ_LEVEL, 1), "user event with KEVENT_REQ_LEVEL");
	ext_add(kfd, uevent(2, KEVENT_REQ_ALWAYS_QUEUE, 2));
	/* Through the 40-byte entry too: a user event needs no extension. */
	struct ukevent plain = kt_uk(KEVENT_USER, 3, 0, 0xffffffffu, 0, 3);

	kt_add_queued(kfd, plain);
	cr_assert_eq(kt_queue_kevents(kfd), 2u);
	cr_assert_eq(kt_queue_ready(kfd), 0u, "a user event ready without a trigger");
	kt_assert_quiet(kfd, 50, "an untriggered user event");
	close(kfd);
}

struct trig {
	int kfd;
	__u32 value;
};

static void *trigger_thread(void *p)
{
	struct trig *t = p;

	kt_await_parked(t->kfd, 1, 10000);
	trigger(t->kfd, 7, 70, t->value);
	return NULL;
}

/* D62: a user event triggered from another thread wakes a parked GET_EVENTS. */
KTEST_REVS(rev3, user_event_from_thread, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct trig t = { kfd, 0xa5a5 };
	pthread_t th;

	ext_add(kfd, uevent(7, 0, 70));
	kt_assert_quiet(kfd, 20, "an untriggered user event");
	cr_assert_eq(pthread_create(&th, NULL, trigger_thread, &t), 0);
	struct ukevent ev = kt_get_one(kfd, "the user event");

	pthread_join(th, NULL);
	cr_assert_eq(ev.type, (__u32)KEVENT_USER);
	cr_assert_eq(ev.id.raw[0], 7u);
	cr_assert_eq(ev.user[0], 70u);
	cr_assert_eq(ev.ret_flags, (__u32)KEVENT_RET_DONE);
	cr_assert_eq(ev.ret_data[0], 0xa5a5u, "value %#x", ev.ret_data[0]);
	cr_assert_eq(ev.ret_data[1], 1u, "trigger count %u", ev.ret_data[1]);
	close(kfd);
}

/* D62: a child process holding the queue's fd (fork) triggers it. */
KTEST_REVS(rev3, user_event_from_child_process, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), st;
	pid_t pid;

	ext_add(kfd, uevent(7, 0, 70));
	pid = fork();
	cr_assert(pid >= 0, "fork");
	if (pid == 0) {
		struct ukevent uk = kt_uk(KEVENT_USER, 7, 0, 0x100, 0, 70);

		_exit(kevent_ctl(kfd, KEVENT_CTL_READY, 1, &uk) == 1 &&
		      uk.ret_flags == KEVENT_RET_DONE ? 0 : 1);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child's READY failed (status %#x)", st);
	struct ukevent ev = kt_get_one(kfd, "the user event the child triggered");

	cr_assert_eq(ev.type, (__u32)KEVENT_USER);
	cr_assert_eq(ev.ret_data[0], 0x100u);
	cr_assert_eq(ev.ret_data[1], 1u);
	close(kfd);
}

/*
 * D62: triggers before a delivery merge: values OR-ed, triggers counted;
 * delivery clears both, so the event comes again only after a new trigger
 * (kqueue's EV_CLEAR), once per delivery.
 */
KTEST_REVS(rev3, user_values_merge_and_clear, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent out[4];

	ext_add(kfd, uevent(7, 0, 70));
	trigger(kfd, 7, 70, 0x1);
	trigger(kfd, 7, 70, 0x4);
	trigger(kfd, 7, 70, 0x4);
	trigger(kfd, 7, 70, 0);
	cr_assert_eq(kt_queue_ready(kfd), 1u, "one ready kevent for four triggers");
	cr_assert_eq(kt_get(kfd, 1, 4, KT_MS(5000), out), 1, "merged triggers: one delivery");
	cr_assert_eq(out[0].ret_data[0], 0x5u, "OR of the values: %#x", out[0].ret_data[0]);
	cr_assert_eq(out[0].ret_data[1], 4u, "trigger count %u", out[0].ret_data[1]);
	kt_assert_quiet(kfd, 100, "a delivered user event came again without a trigger");
	cr_assert_eq(kt_queue_kevents(kfd), 1u, "non-ONESHOT stays registered");

	trigger(kfd, 7, 70, 0x8);
	struct ukevent ev = kt_get_one(kfd, "re-triggered user event");

	cr_assert_eq(ev.ret_data[0], 0x8u, "cleared at delivery: %#x", ev.ret_data[0]);
	cr_assert_eq(ev.ret_data[1], 1u);
	kt_assert_quiet(kfd, 100, "a delivered user event came again without a trigger");
	close(kfd);
}

/* D62: ONESHOT is freed at its delivery; MODIFY keeps a pending trigger. */
KTEST_REVS(rev3, user_oneshot_freed_modify_keeps_trigger, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent_ext keep = uevent(8, 0, 80);

	ext_add(kfd, uevent(7, KEVENT_REQ_ONESHOT, 70));
	ext_add(kfd, keep);
	trigger(kfd, 7, 70, 0x2);
	struct ukevent ev = kt_get_one(kfd, "ONESHOT user event");

	cr_assert_eq(ev.user[0], 70u);
	cr_assert_eq(ev.ret_data[0], 0x2u);
	cr_assert_eq(kt_queue_kevents(kfd), 1u, "ONESHOT user event not freed");
	struct ukevent uk = kt_uk(KEVENT_USER, 7, 0, 1, 0, 70);

	kt_ctl1(kfd, KEVENT_CTL_READY, &uk, 0);
	cr_assert_eq(uk.ret_flags, BROKEN_DONE, "READY of a freed user event matched");

	trigger(kfd, 8, 80, 0x30);
	keep.ev.req_flags = KEVENT_REQ_ONESHOT;
	ext1(kfd, KEVENT_CTL_MODIFY, &keep, 0);
	cr_assert_eq(keep.ev.ret_flags, (__u32)KEVENT_RET_DONE);
	ev = kt_get_one(kfd, "user event triggered before MODIFY");
	cr_assert_eq(ev.user[0], 80u);
	cr_assert_eq(ev.ret_data[0], 0x30u);
	cr_assert_eq(ev.ret_data[1], 1u);
	cr_assert_eq(kt_queue_kevents(kfd), 0u, "MODIFY to ONESHOT: freed at delivery");
	close(kfd);
}

/*
 * D63: on revision 3 READY, QUERY, MODIFY and REMOVE match (type, id,
 * cookie): a POSIX timer and a user event with the same id and cookie, the
 * timer the older, are told apart.
 */
KTEST_REVS(rev3, type_in_the_key, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent_ext t = ptimer(5, KEVENT_CLOCK_MONOTONIC, 0, 3600 * NSEC, 0, 0, 50);
	struct ukevent_ext u = uevent(5, 0, 50);

	ext_add(kfd, t);
	ext_add(kfd, u);
	trigger(kfd, 5, 50, 0x9);	/* type USER: the user event, not the older timer */
	struct ukevent ev = kt_get_one(kfd, "the user event");

	cr_assert_eq(ev.type, (__u32)KEVENT_USER, "READY matched type %u", ev.type);
	cr_assert_eq(ev.ret_data[0], 0x9u);
	cr_assert_eq(ev.ret_data[1], 1u);
	struct ukevent_ext q = query(kfd, u, 1);	/* type USER: the user event */

	cr_assert_eq(q.ev.ret_flags, BROKEN_DONE, "QUERY of the user event's key");
	q = query(kfd, t, 1);
	cr_assert_eq(q.ev.ret_flags, (__u32)KEVENT_RET_DONE, "QUERY of the timer's key");
	/* MODIFY by the user event's key without KEVENT_TIMER_FIRED: the timer would refuse it */
	struct ukevent m = u.ev;

	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &m, 0);
	cr_assert_eq(m.ret_flags, (__u32)KEVENT_RET_DONE, "MODIFY matched type %s",
		     m.ret_flags & KEVENT_RET_BROKEN ? "POSIX_TIMER" : "USER");
	struct ukevent r = u.ev;	/* REMOVE by the user event's key */

	kt_remove(kfd, r);
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	q = query(kfd, t, 1);
	cr_assert_eq(q.ev.ret_flags, (__u32)KEVENT_RET_DONE, "the timer was removed");
	r = u.ev;
	kt_ctl1(kfd, KEVENT_CTL_REMOVE, &r, 0);
	cr_assert_eq(r.ret_flags, BROKEN_DONE, "a second user event REMOVE matched the timer");
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	close(kfd);
}

/*
 * D7, D63: below revision 3 matching compares id and cookie only: a take13
 * timer and a POLL kevent with the same id (the timer's period is the fd's
 * number) and cookie, the timer the older, are one key: a REMOVE naming
 * the POLL removes the timer.  On revision 3 (type_in_the_key) it would not.
 */
KTEST_REVS(rev3, key_without_type_below_revision_3, 1, 2)
{
	int kfd = kt_open(O_RDWR), p[2], hi;

	kt_pipe(p);
	hi = fcntl(p[0], F_DUPFD_CLOEXEC, 600);	/* a period of 600+ ms */
	cr_assert(hi >= 600, "F_DUPFD: %s", strerror(errno));
	struct ukevent tm = kt_uk(KEVENT_TIMER, (__u32)hi, 0, KEVENT_TIMER_FIRED, 0, 40);
	struct ukevent pl = kt_uk_poll(hi, KEVENT_POLL_POLLIN, 0, 40);

	kt_add_queued(kfd, tm);
	kt_add_queued(kfd, pl);
	kt_remove(kfd, pl);	/* the oldest of that id and cookie: the timer */
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	kt_write1(p[1]);
	struct ukevent ev = kt_get_one(kfd, "the POLL kevent left");

	cr_assert_eq(ev.type, (__u32)KEVENT_POLL, "the kevent left is type %u", ev.type);
	close(hi);
	close(p[0]);
	close(p[1]);
	close(kfd);
}

/*
 * D58: a CLOCK_REALTIME step moves an ABSTIME realtime timer (every grid
 * point passed fires at once, counted) and neither a relative realtime
 * timer nor a monotonic one.  Sets the clock: only with
 * KEVENT_TEST_CLOCK_SET=1 (the guest's boot of its own); restored after.
 */
KTEST_REVS(rev3, clock_set_moves_abstime_timer, 3, KTEST_OPEN)
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

/*
 * D41, D58, D62: a WAIT whose kevent_uring store faults hands a POSIX timer
 * and a user event back with their results, in order: the next delivery
 * carries the same expiry count, the same OR of values and trigger count,
 * each once.  A faulted WAIT delivered nothing, so a periodic timer that
 * kept firing meanwhile counts every point since its last delivered one:
 * the faulted count plus the points passed since (here: all since ADD).
 */
KTEST_REVS(rev3, faulting_ring_requeues_counts, 3, KTEST_OPEN)
{
	const __u64 iv = 50000000ULL;	/* 50 ms */
	int kfd = kt_open(O_RDWR);
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* slots 0 and 1 on the first page, slots 2 .. 7 on the second */
	struct kevent_uring *r = (struct kevent_uring *)(m + pg - 8 - 2 * 40);
	struct kevent_ring_init ri = { .ring = (__u64)(uintptr_t)r, .num = 8 };
	const struct timespec nowait = { 0, 0 };
	struct ukevent out[8];
	struct kevent_info i;

	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	cr_assert_neq(m, MAP_FAILED);
	memset(m, 0, 2 * pg);
	cr_assert_eq(kt_ioctl(kfd, KEVENT_IOC_RING_INIT, &ri), 0, "RING_INIT");

	/* one expiry, freed at delivery: count 1 */
	ext_add(kfd, ptimer(1, KEVENT_CLOCK_MONOTONIC, 0, 1000000, 0, KEVENT_REQ_ONESHOT, 1));
	cr_assert(kt_wait_ready(kfd, 1, 5000), "the one-shot timer never expired");
	ext_add(kfd, uevent(2, 0, 2));
	trigger(kfd, 2, 2, 0x1);
	trigger(kfd, 2, 2, 0x4);
	__u64 a = kt_now_ns();
	ext_add(kfd, ptimer(3, KEVENT_CLOCK_MONOTONIC, 0, iv, iv, 0, 3));
	__u64 b = kt_now_ns();
	cr_assert(kt_wait_ready(kfd, 3, 5000), "the periodic timer never expired");

	munmap(m + pg, pg);
	cr_assert_eq(kevent_wait(kfd, 8, 0, nowait, 0), -1, "slot 2 is unmapped");
	cr_assert_eq(errno, EFAULT, "WAIT: %s, want EFAULT", strerror(errno));
	cr_assert_eq(r->ring_kidx, 0u, "nothing published");
	kt_info(kfd, &i);
	cr_assert_eq(i.ring_faults, 1u, "INFO counts the fault");
	cr_assert_eq(kt_queue_ready(kfd), 3u, "nothing lost: all still ready");
	cr_assert_eq(kt_queue_kevents(kfd), 3u, "the one-shot timer freed by a faulted WAIT");
	kt_sleep_ms(120);	/* the periodic timer keeps firing while requeued */

	cr_assert_eq(kevent_wait(kfd, 2, 0, nowait, 0), 2, "the mapped slots: %s",
		     strerror(errno));
	check_fired(r->event[0], 1, 1, "the requeued one-shot timer");
	cr_assert_eq(r->event[1].type, (__u32)KEVENT_USER, "second: type %u", r->event[1].type);
	cr_assert_eq(r->event[1].user[0], 2u, "in order: the user event second");
	cr_assert_eq(r->event[1].ret_data[0], 0x5u, "OR of the values: %#x",
		     r->event[1].ret_data[0]);
	cr_assert_eq(r->event[1].ret_data[1], 2u, "trigger count %u", r->event[1].ret_data[1]);
	cr_assert_eq(kt_queue_kevents(kfd), 2u, "the one-shot timer freed at its delivery");

	__u64 g0 = kt_now_ns();
	cr_assert_eq(kt_get(kfd, 1, 8, KT_MS(5000), out), 1, "GET_EVENTS takes the rest");
	__u64 g1 = kt_now_ns();

	check_fired(out[0], 3, 0, "the requeued periodic timer");
	cr_assert_geq(out[0].ret_data[0], (__u32)((g0 - b) / iv), "count %u: points lost",
		      out[0].ret_data[0]);
	cr_assert_leq(out[0].ret_data[0], (__u32)((g1 - a) / iv), "count %u: points doubled",
		      out[0].ret_data[0]);
	kt_remove(kfd, kt_uk(KEVENT_POSIX_TIMER, 3, 0, KEVENT_TIMER_FIRED, 0, 3));
	kt_assert_quiet(kfd, 20, "the user event came twice");
	munmap(m, pg);
	close(kfd);
}

/*
 * D60: ADD compacts the answered EXT entries to the front whole, 80 bytes
 * each, ext included, and writes every one of them back: a failed POSIX
 * timer and a failed user event behind two registered entries.
 */
KTEST_REVS(rev3, ext_compaction_moves_whole_entries, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent_ext in[4] = {
		ptimer(1, KEVENT_CLOCK_MONOTONIC, 0, 3600 * NSEC, 0, 0, 1),
		ptimer(2, 5, 0, 123 * NSEC + 456, 7 * NSEC + 8, 0, 2),	/* clock 5: refused */
		uevent(3, 0, 3),
		uevent(4, 0, 4),
	}, e[4];

	in[3].ext.__raw[4] = 0x5a5a5a5a00000001ULL;	/* a user event's ext must be zero */
	memcpy(e, in, sizeof(e));
	cr_assert_eq(kt_ctl_ext(kfd, KEVENT_CTL_ADD, 4, e), 2, "two entries answered");
	for (int i = 0; i < 2; i++) {
		const struct ukevent_ext *want = &in[2 * i + 1];

		cr_assert_eq(e[i].ev.user[0], want->ev.user[0], "entry %d is cookie %u", i,
			     e[i].ev.user[0]);
		cr_assert_eq(e[i].ev.ret_flags, BROKEN_DONE, "entry %d ret_flags %#x", i,
			     e[i].ev.ret_flags);
		cr_assert_eq((int)e[i].ev.ret_data[1], -EINVAL, "entry %d ret_data[1]", i);
		cr_assert_eq(memcmp(&e[i].ext, &want->ext, sizeof(want->ext)), 0,
			     "entry %d: the ext of cookie %u did not move with it", i, want->ev.user[0]);
	}
	cr_assert_eq(kt_queue_kevents(kfd), 2u);
	close(kfd);
}

/*
 * D60: an unknown ioc_flags bit, __pad != 0 and QUERY without EXT entries
 * fail the whole call -EINVAL on the header, before the array is read: the
 * array here is an unreadable page, which a call that reads it fails EFAULT.
 */
KTEST_REVS(rev3, ext_header_refused_before_array, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	long pg = sysconf(_SC_PAGESIZE);
	void *none = mmap(NULL, (size_t)pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ukevent_ext *bad = none;

	cr_assert_neq(none, MAP_FAILED);
	ext_add(kfd, uevent(1, 0, 1));
	cr_assert_eq(kt_ctl_ext_raw(kfd, KEVENT_CTL_ADD, 1, bad, KEVENT_CTL_EXT | 0x2, 0), -EINVAL,
		     "unknown ioc_flags bit");
	cr_assert_eq(kt_ctl_ext_raw(kfd, KEVENT_CTL_MODIFY, 1, bad, KEVENT_CTL_EXT, 1), -EINVAL,
		     "__pad 1");
	cr_assert_eq(kt_ctl_ext_raw(kfd, KEVENT_CTL_QUERY, 1, bad, 0, 0), -EINVAL,
		     "QUERY of 40-byte entries");
	cr_assert_eq(kt_ctl_ext(kfd, KEVENT_CTL_QUERY, 1, bad), -EFAULT, "the array is unreadable");
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	munmap(none, (size_t)pg);
	close(kfd);
}

/*
 * D60, B4: where a path limits a CTL batch (INFO max_ctl_num, counted in
 * 40-byte entries) an EXT call carries at most half as many entries;
 * above that it fails E2BIG whole, before any effect.  Only a limited path
 * shows it: the CUSE retry path (the guest's Yama boot).
 */
KTEST_REVS(rev3, ext_batch_half_of_max_ctl_num, 3, KTEST_OPEN)
{
	unsigned int max = kt_backend_info()->max_ctl_num, half = max / 2;
	struct ukevent_ext *e;
	int kfd;

	if (!max || max >= KEVENT_MAX_EVENTS - 1)
		cr_skip_test("max_ctl_num %u: this caller's path takes every batch the ABI allows, "
			     "so D60's half batch cannot show (the CUSE retry path limits it)", max);
	kt_require_room(KEVENT_LIMIT_KEVENTS, half + 1);
	kfd = kt_open(O_RDWR);
	e = calloc(half + 1, sizeof(*e));
	cr_assert(e);
	for (unsigned int i = 0; i <= half; i++)
		e[i] = uevent(i, 0, i);
	cr_assert_eq(kt_ctl_ext(kfd, KEVENT_CTL_ADD, half + 1, e), -E2BIG,
		     "%u EXT entries above half of max_ctl_num %u", half + 1, max);
	cr_assert_eq(kt_queue_kevents(kfd), 0u, "a refused batch had an effect");
	cr_assert_eq(kt_ctl_ext(kfd, KEVENT_CTL_ADD, half, e), 0, "%u EXT entries", half);
	cr_assert_eq(kt_queue_kevents(kfd), half);
	free(e);
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
KTEST_REVS(rev3, modify_refuses_as_add, 3, KTEST_OPEN)
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
KTEST_REVS(rev3, remove_and_ready_read_no_setting, 3, KTEST_OPEN)
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
KTEST_REVS(rev3, query_counts_from_the_last_delivery, 3, KTEST_OPEN)
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

/*
 * A kevent_uring that WAIT fills (D53, D55); slots [kidx, kidx + n) hold
 * what the last WAIT copied.  Never committed: a test takes fewer kevents
 * than it has slots.
 */
struct uring {
	int kfd;
	struct kevent_uring *r;
	unsigned int num, kidx;
};

static void uring_open(struct uring *u, int kfd, unsigned int num)
{
	struct kevent_ring_init ri = { .num = num };

	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	u->kfd = kfd;
	u->num = num;
	u->kidx = 0;
	u->r = calloc(1, KEVENT_URING_SIZE(num));
	cr_assert(u->r);
	ri.ring = (__u64)(uintptr_t)u->r;
	cr_assert_eq(kt_ioctl(kfd, KEVENT_IOC_RING_INIT, &ri), 0, "RING_INIT");
}

/* A WAIT that does not block: what is ready now, into out (at most max). */
static int uring_take(struct uring *u, struct ukevent *out, unsigned int max)
{
	static const struct timespec now;
	int n = kevent_wait(u->kfd, max, 0, now, 0);

	cr_assert_geq(n, 0, "WAIT: %s", strerror(errno));
	cr_assert_eq(u->r->ring_kidx, u->kidx + (unsigned int)n, "ring_kidx after %d kevents", n);
	for (int i = 0; i < n; i++)
		out[i] = u->r->event[u->kidx + (unsigned int)i];
	u->kidx += (unsigned int)n;
	return n;
}

/* The one kevent of cookie c among n. */
static struct ukevent pick(const struct ukevent *ev, int n, __u32 c)
{
	for (int i = 0; i < n; i++)
		if (ev[i].user[0] == c)
			return ev[i];
	cr_assert_fail("no kevent of cookie %u among %d", c, n);
	return ev[0];
}

/*
 * D55 with D58 and D62: WAIT dequeues by the rules of GET_EVENTS.  A
 * periodic POSIX timer's count is its grid points (11 or so from 10.5 s
 * back); a ONESHOT one is freed at delivery; one made ready by READY
 * before any expiry counts 0 and stays armed.  A user event carries the OR
 * of its triggers and their count, is cleared by the WAIT that delivers
 * it (not delivered again; the next trigger starts anew), and a ONESHOT
 * one is freed.
 */
KTEST_REVS(rev3, wait_dequeues_as_get_events, 3, KTEST_OPEN)
{
	const __u64 back = 10 * NSEC + NSEC / 2;
	int kfd = kt_open(O_RDWR);
	struct uring u;
	struct ukevent ev[8], x;
	__u64 t0 = clock_ns(CLOCK_MONOTONIC), v = t0 - back;
	struct ukevent_ext r = ptimer(3, KEVENT_CLOCK_MONOTONIC, 0, 3600 * NSEC, 0, 0, 3);

	uring_open(&u, kfd, 32);
	cr_assert_gt(t0, back, "CLOCK_MONOTONIC reads %llu ns", (unsigned long long)t0);
	ext_add(kfd, ptimer(1, KEVENT_CLOCK_MONOTONIC, KEVENT_TIMER_ABSTIME, v, NSEC, 0, 1));
	ext_add(kfd, ptimer(2, KEVENT_CLOCK_MONOTONIC, KEVENT_TIMER_ABSTIME, v, 0,
			    KEVENT_REQ_ONESHOT, 2));
	ext_add(kfd, r);
	ext_add(kfd, uevent(4, KEVENT_REQ_ONESHOT, 4));
	ext_add(kfd, uevent(5, 0, 5));
	cr_assert(kt_wait_ready(kfd, 2, 5000), "past absolute timers not ready within 5 s");
	kt_ctl1(kfd, KEVENT_CTL_READY, &r.ev, 1);
	trigger(kfd, 4, 4, 0x40);
	trigger(kfd, 5, 5, 0x1);
	trigger(kfd, 5, 5, 0x2);

	int n = uring_take(&u, ev, 8);
	__u64 t1 = clock_ns(CLOCK_MONOTONIC);

	cr_assert_eq(n, 5, "WAIT took %d kevents, 5 ready", n);
	x = pick(ev, n, 1);
	check_fired(x, 1, 0, "periodic timer through WAIT");
	cr_assert(x.ret_data[0] >= points_by(v, NSEC, t0) && x.ret_data[0] <= points_by(v, NSEC, t1),
		  "count %u through WAIT, want %u .. %u", x.ret_data[0], points_by(v, NSEC, t0),
		  points_by(v, NSEC, t1));
	check_fired(pick(ev, n, 2), 2, 1, "ONESHOT one-expiry timer through WAIT");
	x = pick(ev, n, 3);
	check_fired(x, 3, 0, "READY before any expiry, through WAIT");
	cr_assert_eq(x.ret_data[0], 0u, "count %u of a timer made ready by READY", x.ret_data[0]);
	x = pick(ev, n, 4);
	cr_assert(x.type == KEVENT_USER && x.ret_data[0] == 0x40 && x.ret_data[1] == 1,
		  "ONESHOT user event: type %u {%#x, %u}", x.type, x.ret_data[0], x.ret_data[1]);
	x = pick(ev, n, 5);
	cr_assert(x.ret_data[0] == 0x3 && x.ret_data[1] == 2, "user event {%#x, %u}, want {0x3, 2}",
		  x.ret_data[0], x.ret_data[1]);
	cr_assert_eq(kt_queue_kevents(kfd), 3u, "ONESHOT kevents not freed by WAIT");
	kt_remove(kfd, kt_uk(KEVENT_POSIX_TIMER, 1, 0, KEVENT_TIMER_FIRED, 0, 1));
	cr_assert_gt(kts_ns(query(kfd, r, 1).ext.timer.value), 3500 * NSEC, "READY disarmed it");

	cr_assert_eq(uring_take(&u, ev, 8), 0, "a user event delivered by WAIT came again");
	trigger(kfd, 5, 5, 0x8);
	cr_assert_eq(uring_take(&u, ev, 8), 1);
	cr_assert(ev[0].user[0] == 5 && ev[0].ret_data[0] == 0x8 && ev[0].ret_data[1] == 1,
		  "re-triggered user event: cookie %u {%#x, %u}, want {0x8, 1}", ev[0].user[0],
		  ev[0].ret_data[0], ev[0].ret_data[1]);
	close(kfd);
	free(u.r);
}

/*
 * D49, D62: READY meeting a kevent already ready.  A POSIX timer keeps its
 * pending count, nothing merged (not 0, not one more; one delivery); a
 * ONESHOT one is still freed at it.  A user event merges the trigger into
 * its pending result, also after a MODIFY, which keeps the pending trigger.
 */
KTEST_REVS(rev3, ready_meets_ready_kevents, 3, KTEST_OPEN)
{
	const __u64 back = 10 * NSEC + NSEC / 2;
	int kfd = kt_open(O_RDWR);
	__u64 t0 = clock_ns(CLOCK_MONOTONIC), v = t0 - back;
	struct ukevent_ext p = ptimer(1, KEVENT_CLOCK_MONOTONIC, KEVENT_TIMER_ABSTIME, v, NSEC, 0, 1);
	struct ukevent_ext o = ptimer(2, KEVENT_CLOCK_MONOTONIC, KEVENT_TIMER_ABSTIME, v, 0,
				      KEVENT_REQ_ONESHOT, 2);
	struct ukevent_ext u = uevent(3, 0, 3);
	struct ukevent out[4];

	cr_assert_gt(t0, back, "CLOCK_MONOTONIC reads %llu ns", (unsigned long long)t0);
	ext_add(kfd, p);
	ext_add(kfd, o);
	cr_assert(kt_wait_ready(kfd, 2, 5000), "past absolute timers not ready within 5 s");
	kt_ctl1(kfd, KEVENT_CTL_READY, &p.ev, 1);
	kt_ctl1(kfd, KEVENT_CTL_READY, &o.ev, 1);
	cr_assert(p.ev.ret_flags == KEVENT_RET_DONE && o.ev.ret_flags == KEVENT_RET_DONE,
		  "READY ret_flags %#x %#x", p.ev.ret_flags, o.ev.ret_flags);
	cr_assert_eq(kt_queue_ready(kfd), 2u);
	cr_assert_eq(kt_get(kfd, 1, 4, KT_MS(5000), out), 2, "one delivery each");
	__u64 t1 = clock_ns(CLOCK_MONOTONIC);
	struct ukevent x = pick(out, 2, 1);

	check_fired(x, 1, 0, "periodic timer READY while ready");
	cr_assert(x.ret_data[0] >= points_by(v, NSEC, t0) && x.ret_data[0] <= points_by(v, NSEC, t1),
		  "count %u, want %u .. %u", x.ret_data[0], points_by(v, NSEC, t0),
		  points_by(v, NSEC, t1));
	check_fired(pick(out, 2, 2), 2, 1, "ONESHOT timer READY while ready");
	cr_assert_eq(kt_queue_kevents(kfd), 1u, "the ONESHOT timer not freed");
	kt_remove(kfd, p.ev);

	ext_add(kfd, u);
	trigger(kfd, 3, 3, 0x1);
	u.ev.req_flags = KEVENT_REQ_ONESHOT;
	ext1(kfd, KEVENT_CTL_MODIFY, &u, 0);
	trigger(kfd, 3, 3, 0x10);
	cr_assert_eq(kt_get(kfd, 1, 4, KT_MS(5000), out), 1, "one delivery of a merged user event");
	cr_assert(out[0].ret_data[0] == 0x11 && out[0].ret_data[1] == 2,
		  "triggers around a MODIFY: {%#x, %u}, want {0x11, 2}", out[0].ret_data[0],
		  out[0].ret_data[1]);
	cr_assert_eq(kt_queue_kevents(kfd), 0u, "the user event made ONESHOT not freed");
	close(kfd);
}

/*
 * D41, D58, D62: a WAIT whose ring store faults delivered nothing; every
 * kevent goes back in its order, and a later WAIT delivers each once: a
 * ONESHOT user event and a user event with the triggers before the fault
 * merged with those since, a one-expiry timer (count 1, not ONESHOT: it
 * stays) and a ONESHOT periodic timer counting every point since the ADD;
 * the ONESHOT ones are freed by that WAIT, not by the faulted one.
 */
KTEST_REVS(rev3, faulted_wait_keeps_results, 3, KTEST_OPEN)
{
	const __u64 back = 10 * NSEC + NSEC / 2;
	int kfd = kt_open(O_RDWR);
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);
	/* slot 0 on the first page, slots 1 .. 7 on the second */
	struct kevent_uring *r = (struct kevent_uring *)(m + pg - 8 - 40);
	struct kevent_ring_init ri = { .ring = (__u64)(uintptr_t)r, .num = 8 };
	static const struct timespec nowait;
	__u64 t0 = clock_ns(CLOCK_MONOTONIC), v = t0 - back;

	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	cr_assert_neq(m, MAP_FAILED);
	cr_assert_gt(t0, back, "CLOCK_MONOTONIC reads %llu ns", (unsigned long long)t0);
	cr_assert_eq(kt_ioctl(kfd, KEVENT_IOC_RING_INIT, &ri), 0, "RING_INIT");
	ext_add(kfd, uevent(1, KEVENT_REQ_ONESHOT, 1));
	ext_add(kfd, uevent(2, 0, 2));
	trigger(kfd, 1, 1, 0x1);
	trigger(kfd, 2, 2, 0x2);
	ext_add(kfd, ptimer(3, KEVENT_CLOCK_MONOTONIC, KEVENT_TIMER_ABSTIME, v, 0, 0, 3));
	cr_assert(kt_wait_ready(kfd, 3, 5000), "the past one-expiry timer not ready within 5 s");
	ext_add(kfd, ptimer(4, KEVENT_CLOCK_MONOTONIC, KEVENT_TIMER_ABSTIME, v, NSEC,
			    KEVENT_REQ_ONESHOT, 4));
	cr_assert(kt_wait_ready(kfd, 4, 5000), "the past periodic timer not ready within 5 s");

	cr_assert_eq(munmap(m + pg, (size_t)pg), 0);
	cr_assert_eq(kevent_wait(kfd, 8, 0, nowait, 0), -1, "slot 1 is unmapped");
	cr_assert_eq(errno, EFAULT, "WAIT: %s, want EFAULT", strerror(errno));
	cr_assert_eq(r->ring_kidx, 0u, "nothing published");
	cr_assert_eq(kt_queue_ready(kfd), 4u, "nothing lost: all still ready");
	cr_assert_eq(kt_queue_kevents(kfd), 4u, "a ONESHOT kevent freed by a faulted WAIT");
	trigger(kfd, 1, 1, 0x10);
	trigger(kfd, 2, 2, 0x20);
	cr_assert_eq(mmap(m + pg, (size_t)pg, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0), (void *)(m + pg));

	cr_assert_eq(kevent_wait(kfd, 8, 0, nowait, 0), 4, "WAIT after the fault: %s",
		     strerror(errno));
	__u64 t1 = clock_ns(CLOCK_MONOTONIC);

	for (unsigned int i = 0; i < 4; i++)
		cr_assert_eq(r->event[i].user[0], i + 1, "slot %u: cookie %u, not in order", i,
			     r->event[i].user[0]);
	cr_assert(r->event[0].ret_data[0] == 0x11 && r->event[0].ret_data[1] == 2,
		  "ONESHOT user event {%#x, %u}, want {0x11, 2}", r->event[0].ret_data[0],
		  r->event[0].ret_data[1]);
	cr_assert(r->event[1].ret_data[0] == 0x22 && r->event[1].ret_data[1] == 2,
		  "user event {%#x, %u}, want {0x22, 2}", r->event[1].ret_data[0],
		  r->event[1].ret_data[1]);
	check_fired(r->event[2], 3, 1, "the one-expiry timer after the fault");
	check_fired(r->event[3], 4, 0, "the periodic timer after the fault");
	cr_assert(r->event[3].ret_data[0] >= points_by(v, NSEC, t0) &&
		  r->event[3].ret_data[0] <= points_by(v, NSEC, t1), "count %u, want %u .. %u",
		  r->event[3].ret_data[0], points_by(v, NSEC, t0), points_by(v, NSEC, t1));
	cr_assert_eq(kt_queue_kevents(kfd), 2u, "the ONESHOT kevents freed at their delivery");
	cr_assert_eq(kevent_wait(kfd, 4, 0, nowait, 0), 0, "delivered twice");
	munmap(m, 2 * (size_t)pg);
	close(kfd);
}
