// SPDX-License-Identifier: GPL-2.0
/* KEVENT_TIMER through the recorder (abi.md A9). */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include <criterion/criterion.h>

#include "origins.h"
#include "recorder.h"

#define WAIT_MS 5000	/* a bound against hangs, never asserted on */

static __u32 now_ms32(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u32)((__u64)ts.tv_sec * 1000 + (__u64)ts.tv_nsec / 1000000);
}

static struct ukevent timer_ev(__u32 period_ms, __u32 req_flags)
{
	struct ukevent uk = {
		.id.raw = { period_ms, 0 },
		.type = KEVENT_TIMER,
		.event = KEVENT_TIMER_FIRED,
		.req_flags = req_flags,
	};
	return uk;
}

static void setup_threaded(void)
{
	rec_setup(0);
}

static void setup_manual(void)
{
	rec_setup(KORIGINS_NO_THREAD);
}

TestSuite(timer, .init = setup_threaded, .fini = rec_teardown);
TestSuite(timer_manual, .init = setup_manual, .fini = rec_teardown);

static void check_invalid(struct ukevent uk)
{
	struct kcaller self = rec_self();
	struct korigin_result res;
	struct kitem k;

	cr_expect_eq(rec_add(&k, &uk, &self, &res), -EINVAL,
		     "period %u event %#x", uk.id.raw[0], uk.event);
}

Test(timer, invalid_period_and_event)
{
	struct ukevent uk = timer_ev(0, 0);

	check_invalid(uk);
	uk = timer_ev(10, 0);
	uk.event = 0;
	check_invalid(uk);
	uk.event = 0x2;		/* some bit, but not KEVENT_TIMER_FIRED */
	check_invalid(uk);
}

/* Never ready at ADD; first expiry at least one period after it. */
static void first_expiry_after_one_period(void)
{
	struct ukevent uk = timer_ev(30, KEVENT_REQ_ONESHOT);
	struct kcaller self = rec_self();
	struct korigin_result res;
	struct kitem k;
	__u32 t0 = now_ms32();

	cr_assert_eq(rec_add(&k, &uk, &self, &res), 0);
	cr_assert_eq(rec_wait_fires(&k, 1, WAIT_MS), 1);
	cr_expect_eq(k.last.ret_flags, 0);
	cr_expect_geq((__u32)(k.last.ret_data[0] - t0), 30,
		      "fired %u ms after ADD", (__u32)(k.last.ret_data[0] - t0));
	cr_expect_leq((__u32)(now_ms32() - k.last.ret_data[0]), WAIT_MS,
		      "ret_data[0] is CLOCK_MONOTONIC ms");
	rec_remove(&k);
	cr_expect_eq(k.violations, 0);
}

Test(timer, first_expiry_one_period_after_add)
{
	first_expiry_after_one_period();
}

Test(timer_manual, first_expiry_one_period_after_add)
{
	first_expiry_after_one_period();
}

/* Periodic: fires again after each dequeue, each time later. */
static void periodic(void)
{
	struct ukevent uk = timer_ev(5, 0);
	struct kcaller self = rec_self();
	struct korigin_result res, got;
	struct korigins_stats st;
	struct kitem k;
	__u32 prev = now_ms32();
	unsigned int i;

	cr_assert_eq(rec_add(&k, &uk, &self, &res), 0);
	for (i = 1; i <= 3; i++) {
		cr_assert_geq(rec_wait_fires(&k, i, WAIT_MS), i);
		cr_assert(rec_dequeue(&k, &got));
		cr_expect_geq((__u32)(got.ret_data[0] - prev), 5);
		prev = got.ret_data[0];
		i = rec_fires(&k);
	}
	korigins_stats(&st);
	cr_expect_eq(st.timers, 1, "a periodic timer stays armed");
	rec_remove(&k);
	korigins_stats(&st);
	cr_expect_eq(st.timers, 0);
	cr_expect_eq(k.violations, 0);
}

Test(timer, periodic_rearms)
{
	periodic();
}

Test(timer_manual, periodic_rearms)
{
	periodic();
}

Test(timer, oneshot_stops_after_first_expiry)
{
	struct ukevent uk = timer_ev(2, KEVENT_REQ_ONESHOT);
	struct kcaller self = rec_self();
	struct korigin_result res;
	struct korigins_stats st;
	struct kitem k;

	cr_assert_eq(rec_add(&k, &uk, &self, &res), 0);
	cr_assert_eq(rec_wait_fires(&k, 1, WAIT_MS), 1);
	korigins_stats(&st);
	cr_expect_eq(st.timers, 0, "ONESHOT left the heap at its expiry");
	rec_dequeue(&k, NULL);
	rec_idle(30);
	cr_expect_eq(rec_fires(&k), 1, "a ONESHOT timer fired again");
	rec_remove(&k);
	cr_expect_eq(k.violations, 0);
}

/* Not dequeued: later expiries merge into the pending one, last time wins. */
Test(timer, merge_while_ready_keeps_last_time)
{
	struct ukevent uk = timer_ev(2, 0);
	struct kcaller self = rec_self();
	struct korigin_result res, got;
	struct kitem k;
	__u32 first;

	cr_assert_eq(rec_add(&k, &uk, &self, &res), 0);
	cr_assert_eq(rec_wait_fires(&k, 1, WAIT_MS), 1);
	first = k.last.ret_data[0];
	cr_assert_geq(rec_wait_fires(&k, 4, WAIT_MS), 4);
	rec_remove(&k);
	cr_expect_eq(k.queued, 1, "expiries while ready must merge");
	cr_assert(rec_dequeue(&k, &got));
	cr_expect_geq((__u32)(got.ret_data[0] - first), 6, "the pending result is the last expiry");
	cr_expect_eq(k.violations, 0);
}

Test(timer, modify_without_fired_bit_fails)
{
	struct ukevent uk = timer_ev(1000, 0);
	struct kcaller self = rec_self();
	struct korigin_result res;
	struct korigins_stats st;
	struct kitem k;

	cr_assert_eq(rec_add(&k, &uk, &self, &res), 0);
	cr_expect_eq(rec_modify(&k, 0, 0, &res), -EINVAL);
	korigins_stats(&st);
	cr_expect_eq(st.timers, 0);
	cr_expect_eq(rec_modify(&k, KEVENT_TIMER_FIRED, 0, &res), 0);
	korigins_stats(&st);
	cr_expect_eq(st.timers, 1);
	rec_remove(&k);
}

/* REMOVE while the reactor is firing: no fire after detach returns. */
Test(timer, remove_races_firing)
{
	enum { N = 200, ROUNDS = 20 };
	struct kitem *k = calloc(N, sizeof(*k));
	struct kcaller self = rec_self();
	struct korigin_result res;
	unsigned int r, i, fired = 0;

	cr_assert(k);
	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < N; i++) {
			struct ukevent uk = timer_ev(1, 0);

			cr_assert_eq(rec_add(&k[i], &uk, &self, &res), 0);
		}
		rec_wait_fires(&k[N - 1], 1, WAIT_MS);
		for (i = 0; i < N; i++) {
			rec_remove(&k[i]);
			fired += k[i].fires;
			cr_assert_eq(k[i].violations, 0, "fire after REMOVE");
		}
	}
	cr_expect_gt(fired, 0, "the race needs firing timers");
	free(k);
}

/* Many timers, one timerfd: each ONESHOT fires exactly once. */
Test(timer, ten_thousand_oneshots)
{
	enum { N = 10000 };
	struct kitem *k = calloc(N, sizeof(*k));
	struct kcaller self = rec_self();
	struct korigin_result res;
	struct korigins_stats st;
	unsigned int i;

	cr_assert(k);
	for (i = 0; i < N; i++) {
		struct ukevent uk = timer_ev(1 + i % 50, KEVENT_REQ_ONESHOT);

		cr_assert_eq(rec_add(&k[i], &uk, &self, &res), 0);
	}
	for (i = 0; i < N; i++)
		cr_assert_eq(rec_wait_fires(&k[i], 1, WAIT_MS), 1, "timer %u", i);
	rec_idle(60);
	korigins_stats(&st);
	cr_expect_eq(st.timers, 0);
	for (i = 0; i < N; i++) {
		cr_expect_eq(k[i].fires, 1, "timer %u fired %u times", i, k[i].fires);
		rec_remove(&k[i]);
		cr_expect_eq(k[i].violations, 0);
	}
	free(k);
}

/*
 * Batching: timers that are all due when the reactor gets to the timerfd
 * expire in one pass (one wake), each on its own grid point, none early;
 * a backlog larger than one pass's bound still drains completely, over a
 * few wakes.  The reactor is run by hand only after every deadline passed,
 * so no assertion depends on how fast this machine is.
 */
static void due_together(unsigned int n, int one_wake)
{
	struct kitem *k = calloc(n, sizeof(*k));
	__u32 *t_add = calloc(n, sizeof(*t_add));
	struct kcaller self = rec_self();
	struct korigin_result res;
	struct korigins_stats st0, st;
	struct timespec nap = { 0, 40 * 1000000 };
	unsigned int i;

	cr_assert(k && t_add);
	korigins_stats(&st0);
	for (i = 0; i < n; i++) {
		struct ukevent uk = timer_ev(20, KEVENT_REQ_ONESHOT);

		t_add[i] = now_ms32();
		cr_assert_eq(rec_add(&k[i], &uk, &self, &res), 0);
	}
	while (nanosleep(&nap, &nap) != 0)
		;
	for (i = 0; i < n; i++) {
		cr_assert_eq(rec_wait_fires(&k[i], 1, WAIT_MS), 1, "timer %u", i);
		cr_expect_geq((__u32)(k[i].last.ret_data[0] - t_add[i]), 20,
			      "timer %u stamped %u ms after ADD", i,
			      (__u32)(k[i].last.ret_data[0] - t_add[i]));
	}
	korigins_stats(&st);
	cr_expect_eq(st.timer_expiries - st0.timer_expiries, n);
	if (one_wake)
		cr_expect_eq(st.timer_wakes - st0.timer_wakes, 1,
			     "%u timers due together took %llu wakes", n,
			     (unsigned long long)(st.timer_wakes - st0.timer_wakes));
	else
		cr_expect_geq(st.timer_wakes - st0.timer_wakes, 2,
			      "a pass is bounded, so that other sources get their turn");
	cr_expect_eq(st.timers, 0);
	for (i = 0; i < n; i++) {
		cr_expect_eq(k[i].fires, 1, "timer %u fired %u times", i, k[i].fires);
		rec_remove(&k[i]);
		cr_expect_eq(k[i].violations, 0);
	}
	free(t_add);
	free(k);
}

Test(timer_manual, due_together_expire_in_one_wake)
{
	due_together(1000, 1);
}

Test(timer_manual, backlog_beyond_one_pass_drains)
{
	due_together(10000, 0);
}
