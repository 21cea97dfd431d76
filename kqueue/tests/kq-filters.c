// SPDX-License-Identifier: GPL-2.0-only
/*
 * Conformance of libkqueue-kevent: EVFILT_TIMER, EVFILT_USER,
 * EVFILT_SIGNAL, EVFILT_PROC and EVFILT_VNODE.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kqt.h"
#include "libkevent.h"

/* ---- EVFILT_TIMER ---- */

KQT(timer, fires_with_data_one_and_ev_clear)
{
	int kq = kqt_kqueue();
	struct kevent want, e;

	/* One shot: one expiry, however loaded the machine is. */
	kqt_ok(kq, 1, EVFILT_TIMER, EV_ADD | EV_ONESHOT, 0, 20, (void *)9);
	e = kqt_get(kq, "20 ms timer");
	EV_SET(&want, 1, EVFILT_TIMER, EV_ADD | EV_ONESHOT | EV_CLEAR, 0, 1, (void *)9);
	kqt_same(&want, &e, "timer event");
}

KQT(timer, data_counts_expirations_since_last)
{
	int kq = kqt_kqueue();
	struct kevent e;

	kqt_ok(kq, 1, EVFILT_TIMER, EV_ADD, 0, 10, NULL);
	usleep(100000);
	e = kqt_get(kq, "10 ms timer after 100 ms");
	cr_assert_geq(e.data, 2, "data %ld: several expirations merged", (long)e.data);
}

KQT(timer, periodic_fires_again)
{
	int kq = kqt_kqueue();

	kqt_ok(kq, 1, EVFILT_TIMER, EV_ADD, 0, 10, NULL);
	kqt_get(kq, "first");
	kqt_get(kq, "second");
	kqt_get(kq, "third");
}

KQT(timer, oneshot_fires_once_and_is_gone)
{
	int kq = kqt_kqueue();
	struct kevent e;

	kqt_ok(kq, 1, EVFILT_TIMER, EV_ADD | EV_ONESHOT, 0, 10, NULL);
	e = kqt_get(kq, "oneshot");
	cr_assert_eq(e.flags, EV_ADD | EV_ONESHOT | EV_CLEAR);
	cr_assert_eq(e.data, 1);
	kqt_quiet(kq, 50, "no second expiry");
	cr_assert_eq(kqt_change(kq, 1, EVFILT_TIMER, EV_DELETE, 0, 0, NULL), -ENOENT);
}

KQT(timer, units_seconds_to_nanoseconds)
{
	int kq = kqt_kqueue();
	static const unsigned int units[] = { NOTE_MSECONDS, NOTE_USECONDS, NOTE_NSECONDS };
	static const intptr_t amount[] = { 5, 5000, 5000000 };

	for (int i = 0; i < 3; i++) {
		kqt_ok(kq, (uintptr_t)(10 + i), EVFILT_TIMER, EV_ADD | EV_ONESHOT, units[i], amount[i], NULL);
		cr_assert_eq(kqt_get(kq, "5 ms in its unit").ident, (uintptr_t)(10 + i));
	}
}

static long ms_since(const struct timespec *t0);

/*
 * A timer never fires early, so the clock judges it: a caller stalled for
 * a second by a loaded machine may find the timer already fired, and that
 * is no error, but one that fired before a second had passed is.
 */
KQT(timer, seconds_unit_is_seconds)
{
	int kq = kqt_kqueue();
	struct timespec t0;
	struct kevent e;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	kqt_ok(kq, 1, EVFILT_TIMER, EV_ADD | EV_ONESHOT, NOTE_SECONDS, 1, NULL);
	e = kqt_get(kq, "one second");
	ms = ms_since(&t0);
	cr_assert(ms >= 1000, "1 s is not 1 ms: fired after %ld ms", ms);
	cr_assert_eq(e.data, 1);
}

KQT(timer, abstime_fires_at_the_wall_clock_time)
{
	int kq = kqt_kqueue();
	struct timespec now;
	struct kevent e;

	clock_gettime(CLOCK_REALTIME, &now);
	kqt_ok(kq, 1, EVFILT_TIMER, EV_ADD | EV_ONESHOT, NOTE_ABSTIME | NOTE_USECONDS,
	       (intptr_t)(now.tv_sec * 1000000 + now.tv_nsec / 1000 + 30000), NULL);
	e = kqt_get(kq, "absolute deadline");
	cr_assert_eq(e.data, 1);
}

KQT(timer, absolute_is_abstime)
{
	int kq = kqt_kqueue();
	struct timespec now;

	/* macOS's and libkqueue's name for FreeBSD's NOTE_ABSTIME: the same bit here. */
	cr_assert_eq(NOTE_ABSOLUTE, NOTE_ABSTIME);
	clock_gettime(CLOCK_REALTIME, &now);
	kqt_ok(kq, 1, EVFILT_TIMER, EV_ADD | EV_ONESHOT, NOTE_ABSOLUTE | NOTE_USECONDS,
	       (intptr_t)(now.tv_sec * 1000000 + now.tv_nsec / 1000 + 30000), NULL);
	cr_assert_eq(kqt_get(kq, "absolute deadline").data, 1);
}

KQT(timer, abstime_in_the_past_fires_at_once)
{
	int kq = kqt_kqueue();

	kqt_ok(kq, 1, EVFILT_TIMER, EV_ADD | EV_ONESHOT, NOTE_ABSTIME | NOTE_SECONDS, 1, NULL);
	cr_assert_eq(kqt_get(kq, "1970").data, 1);
}

/*
 * FreeBSD's filt_timerattach makes a timer EV_CLEAR unless it is absolute:
 * a NOTE_ABSTIME timer is level-triggered, reported by every call once its
 * time has passed, with data 1, until it is deleted.
 */
KQT(timer, abstime_is_level_triggered)
{
	int kq = kqt_kqueue();
	struct kevent e;

	kqt_ok(kq, 1, EVFILT_TIMER, EV_ADD, NOTE_ABSTIME | NOTE_SECONDS, 1, NULL);
	e = kqt_get(kq, "1970");
	cr_assert(e.flags == EV_ADD && e.data == 1, "flags %#x data %ld", e.flags, (long)e.data);
	e = kqt_get(kq, "1970, still");
	cr_assert(e.flags == EV_ADD && e.data == 1, "flags %#x data %ld", e.flags, (long)e.data);
	kqt_ok(kq, 1, EVFILT_TIMER, EV_DELETE, 0, 0, NULL);
	kqt_quiet(kq, 30, "deleted");
}

/*
 * An absolute timer disabled and enabled again keeps its deadline on the
 * wall clock: a clock set past it fires it.  It sets CLOCK_REALTIME, so it
 * runs only where KEVENT_TEST_CLOCK_SET=1 (the guest boot of its own,
 * tests/vm/README.md), and puts the clock back.  Under Criterion's timeout,
 * which follows the wall clock: a 40 s step.
 */
KQT(timer, clock_set_abstime_enabled_again_stays_absolute)
{
	const char *v = getenv("KEVENT_TEST_CLOCK_SET");
	int kq = kqt_kqueue(), n;
	struct timespec rt, mono, now, to;
	struct kevent e;

	if (!v || strcmp(v, "1"))
		cr_skip_test("sets CLOCK_REALTIME: only where KEVENT_TEST_CLOCK_SET=1");
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	kqt_ok(kq, 1, EVFILT_TIMER, EV_ADD | EV_ONESHOT, NOTE_ABSTIME | NOTE_SECONDS,
	       (intptr_t)rt.tv_sec + 20, NULL);
	kqt_ok(kq, 1, EVFILT_TIMER, EV_DISABLE, 0, 0, NULL);
	kqt_ok(kq, 1, EVFILT_TIMER, EV_ENABLE, 0, 0, NULL);
	to = rt;
	to.tv_sec += 40;
	cr_assert_eq(clock_settime(CLOCK_REALTIME, &to), 0, "clock_settime: %s", strerror(errno));
	n = kqt_wait(kq, &e, 1, 5000);
	/* Back where it would be: the original plus the time elapsed. */
	clock_gettime(CLOCK_MONOTONIC, &now);
	to.tv_sec = rt.tv_sec + (now.tv_sec - mono.tv_sec);
	to.tv_nsec = rt.tv_nsec + (now.tv_nsec - mono.tv_nsec);
	if (to.tv_nsec < 0) {
		to.tv_nsec += 1000000000;
		to.tv_sec--;
	} else if (to.tv_nsec >= 1000000000) {
		to.tv_nsec -= 1000000000;
		to.tv_sec++;
	}
	cr_assert_eq(clock_settime(CLOCK_REALTIME, &to), 0, "restoring the clock");
	cr_assert_eq(n, 1, "a 40 s step past the deadline: no event");
	cr_assert_eq(e.ident, 1u);
}

KQT(timer, new_period_takes_effect_at_once)
{
	int kq = kqt_kqueue();

	kqt_ok(kq, 1, EVFILT_TIMER, EV_ADD, 0, 3600000, (void *)1);
	kqt_ok(kq, 1, EVFILT_TIMER, EV_ADD, 0, 10, (void *)2);
	cr_assert_eq(kqt_get(kq, "the 10 ms period, not the hour").udata, (void *)2);
}

KQT(timer, delete_stops_it)
{
	int kq = kqt_kqueue();

	kqt_ok(kq, 1, EVFILT_TIMER, EV_ADD, 0, 10, NULL);
	kqt_ok(kq, 1, EVFILT_TIMER, EV_DELETE, 0, 0, NULL);
	kqt_quiet(kq, 50, "deleted timer");
}

KQT(timer, negative_period_is_einval)
{
	int kq = kqt_kqueue();

	cr_assert_eq(kqt_change(kq, 1, EVFILT_TIMER, EV_ADD, 0, -1, NULL), -EINVAL);
}

KQT(timer, zero_period_fires)
{
	int kq = kqt_kqueue();

	kqt_ok(kq, 1, EVFILT_TIMER, EV_ADD | EV_ONESHOT, 0, 0, NULL);
	kqt_get(kq, "zero: at once");
}

KQT(timer, enabled_again_counts_afresh)
{
	int kq = kqt_kqueue();
	struct timespec t0;
	struct kevent e;
	long ms;

	kqt_ok(kq, 1, EVFILT_TIMER, EV_ADD | EV_DISABLE, 0, 500, NULL);
	usleep(1100000);	/* two expiries while disabled; 0.5 s of margin after */
	kqt_quiet(kq, 0, "disabled");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	kqt_ok(kq, 1, EVFILT_TIMER, EV_ENABLE, 0, 0, NULL);
	e = kqt_get(kq, "enabled");
	ms = ms_since(&t0);
	/*
	 * The two expirations while disabled are dropped: data counts the
	 * periods since the enable only (a caller the machine stalls past the
	 * next expiry may rightly find it fired at once, and more than one).
	 */
	cr_assert(e.data >= 1 && e.data <= ms / 500 + 1, "data %ld %ld ms after the enable",
		  (long)e.data, ms);
	cr_assert_eq(e.flags, EV_ADD | EV_CLEAR);
}

KQT(timer, dispatch_fires_once_until_enabled)
{
	int kq = kqt_kqueue();

	kqt_ok(kq, 1, EVFILT_TIMER, EV_ADD | EV_DISPATCH, 0, 10, NULL);
	kqt_get(kq, "first");
	kqt_quiet(kq, 50, "dispatched");
	kqt_ok(kq, 1, EVFILT_TIMER, EV_ENABLE, 0, 0, NULL);
	kqt_get(kq, "enabled");
	kqt_quiet(kq, 50, "dispatched again");
}

KQT(timer, two_timers_are_two_idents)
{
	int kq = kqt_kqueue();
	struct kevent ev[2];
	int n = 0;

	kqt_ok(kq, 1, EVFILT_TIMER, EV_ADD | EV_ONESHOT, 0, 10, NULL);
	kqt_ok(kq, 2, EVFILT_TIMER, EV_ADD | EV_ONESHOT, 0, 10, NULL);
	while (n < 2)
		n += kqt_wait(kq, ev + n, 2 - n, 10000);
	cr_assert_neq(ev[0].ident, ev[1].ident);
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* data is the number of periods passed since the last report, no more. */
KQT(timer, count_follows_the_clock)
{
	int kq = kqt_kqueue();
	struct timespec t0, t1;
	struct kevent e;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	kqt_ok(kq, 1, EVFILT_TIMER, EV_ADD, 0, 20, NULL);
	usleep(300000);
	/* The first report is read after t1: the second counts from then at most. */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	e = kqt_get(kq, "20 ms timer after 300 ms");
	ms = ms_since(&t0);
	cr_assert(e.data >= 14 && e.data <= ms / 20 + 1, "data %ld after %ld ms", (long)e.data, ms);
	usleep(100000);
	e = kqt_get(kq, "100 ms later");
	ms = ms_since(&t1);
	cr_assert(e.data >= 4 && e.data <= ms / 20 + 2, "data %ld %ld ms after a report",
		  (long)e.data, ms);
}

/*
 * A period below the device's minimum interval (kqueue-kevent(3): 100 us)
 * is a timer all the same, on every revision.
 */
KQT(timer, period_under_100_us_fires_and_counts)
{
	int kq = kqt_kqueue();
	struct kevent e;

	kqt_ok(kq, 1, EVFILT_TIMER, EV_ADD, NOTE_USECONDS, 50, NULL);
	usleep(20000);
	e = kqt_get(kq, "50 us timer after 20 ms");
	cr_assert_geq(e.data, 2, "data %ld", (long)e.data);
	kqt_get(kq, "again");
	kqt_ok(kq, 1, EVFILT_TIMER, EV_DELETE, 0, 0, NULL);
	kqt_quiet(kq, 20, "deleted");
}

/* A new period moves the timer between the device and the library and back. */
KQT(timer, new_period_across_the_minimum_interval)
{
	int kq = kqt_kqueue();
	struct kevent e;

	kqt_ok(kq, 1, EVFILT_TIMER, EV_ADD, 0, 3600000, (void *)1);
	kqt_ok(kq, 1, EVFILT_TIMER, EV_ADD, NOTE_NSECONDS, 60000, (void *)2);
	e = kqt_get(kq, "the 60 us period");
	cr_assert_eq(e.udata, (void *)2);
	kqt_ok(kq, 1, EVFILT_TIMER, EV_ADD, 0, 3600000, (void *)3);
	kqt_quiet(kq, 50, "back to an hour: nothing pending");
	kqt_ok(kq, 1, EVFILT_TIMER, EV_ADD, 0, 10, (void *)4);
	e = kqt_get(kq, "the 10 ms period");
	cr_assert(e.udata == (void *)4 && e.data >= 1, "udata %p data %ld", e.udata, (long)e.data);
}

/* ---- EVFILT_USER ---- */

KQT(user, added_is_quiet)
{
	int kq = kqt_kqueue();

	kqt_ok(kq, 1, EVFILT_USER, EV_ADD, 0, 0, NULL);
	kqt_quiet(kq, 30, "not triggered");
}

KQT(user, trigger_reports_it)
{
	int kq = kqt_kqueue();
	struct kevent want, e;

	kqt_ok(kq, 1, EVFILT_USER, EV_ADD | EV_CLEAR, 0, 0, (void *)3);
	kqt_ok(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER, 0, (void *)3);
	e = kqt_get(kq, "triggered");
	EV_SET(&want, 1, EVFILT_USER, EV_ADD | EV_CLEAR, 0, 0, (void *)3);
	kqt_same(&want, &e, "user event");
}

/* A trigger is a change: it sets the knote's udata, NULL included (FreeBSD). */
KQT(user, trigger_sets_udata)
{
	int kq = kqt_kqueue();

	kqt_ok(kq, 1, EVFILT_USER, EV_ADD | EV_CLEAR, 0, 0, (void *)1);
	kqt_ok(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER, 0, (void *)5);
	cr_assert_eq(kqt_get(kq, "triggered with udata 5").udata, (void *)5);
	kqt_ok(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	cr_assert_null(kqt_get(kq, "triggered with no udata").udata);
}

/*
 * A user event comes back with EV_ADD like every other filter's, as macOS
 * and libkqueue's user filter return it (FreeBSD drops EV_ADD from all).
 */
KQT(user, returned_event_keeps_ev_add)
{
	int kq = kqt_kqueue();
	struct kevent e;

	kqt_ok(kq, 1, EVFILT_USER, EV_ADD | EV_DISPATCH, 0, 0, NULL);
	kqt_ok(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	e = kqt_get(kq, "triggered");
	cr_assert_eq(e.flags, EV_ADD | EV_DISPATCH, "flags %#x", e.flags);
}

KQT(user, clear_resets_the_trigger)
{
	int kq = kqt_kqueue();

	kqt_ok(kq, 1, EVFILT_USER, EV_ADD | EV_CLEAR, 0, 0, NULL);
	kqt_ok(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	kqt_get(kq, "once");
	kqt_quiet(kq, 30, "cleared");
	kqt_ok(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	kqt_get(kq, "triggered again");
}

KQT(user, without_clear_stays_triggered)
{
	int kq = kqt_kqueue();

	kqt_ok(kq, 1, EVFILT_USER, EV_ADD, 0, 0, NULL);
	kqt_ok(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	kqt_get(kq, "first");
	kqt_get(kq, "still triggered (level)");
}

KQT(user, fflags_or_and_copy)
{
	int kq = kqt_kqueue();
	struct kevent e;

	kqt_ok(kq, 1, EVFILT_USER, EV_ADD | EV_CLEAR, NOTE_FFCOPY | 0x11, 0, NULL);
	kqt_ok(kq, 1, EVFILT_USER, 0, NOTE_FFOR | 0x100, 0, NULL);
	kqt_ok(kq, 1, EVFILT_USER, 0, NOTE_FFAND | 0x110, 0, NULL);
	kqt_ok(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	e = kqt_get(kq, "fflags");
	cr_assert_eq(e.fflags, 0x110u, "fflags %#x", e.fflags);
	kqt_ok(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER | NOTE_FFCOPY | 0x7, 0, NULL);
	cr_assert_eq(kqt_get(kq, "copied").fflags, 0x7u);
}

KQT(user, ffnop_keeps_the_flags_and_data_is_passed)
{
	int kq = kqt_kqueue();
	struct kevent e;

	kqt_ok(kq, 1, EVFILT_USER, EV_ADD | EV_CLEAR, NOTE_FFCOPY | 0x5, 0, NULL);
	kqt_ok(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER | NOTE_FFNOP | 0xf0, 42, NULL);
	e = kqt_get(kq, "ffnop");
	cr_assert_eq(e.fflags, 0x5u);
	cr_assert_eq(e.data, 42);
}

KQT(user, trigger_of_nothing_is_enoent)
{
	int kq = kqt_kqueue();

	cr_assert_eq(kqt_change(kq, 77, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL), -ENOENT);
}

KQT(user, oneshot_is_gone_after_delivery)
{
	int kq = kqt_kqueue();

	kqt_ok(kq, 1, EVFILT_USER, EV_ADD | EV_ONESHOT, 0, 0, NULL);
	kqt_ok(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	kqt_get(kq, "once");
	cr_assert_eq(kqt_change(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL), -ENOENT);
}

KQT(user, dispatch_until_enabled)
{
	int kq = kqt_kqueue();

	kqt_ok(kq, 1, EVFILT_USER, EV_ADD | EV_DISPATCH | EV_CLEAR, 0, 0, NULL);
	kqt_ok(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	kqt_get(kq, "first");
	kqt_ok(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	kqt_quiet(kq, 30, "disabled by dispatch");
	kqt_ok(kq, 1, EVFILT_USER, EV_ENABLE, 0, 0, NULL);
	kqt_get(kq, "pending trigger after enable");
}

/*
 * EV_ENABLE with nothing pending, then a trigger: reported.  On a
 * revision-4 queue the enable is what re-arms the user kevent the device
 * disarmed at the first delivery (abi.md D65).
 */
KQT(user, dispatch_enabled_with_nothing_pending_then_triggered)
{
	int kq = kqt_kqueue();

	kqt_ok(kq, 1, EVFILT_USER, EV_ADD | EV_DISPATCH | EV_CLEAR, 0, 0, NULL);
	kqt_ok(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	kqt_get(kq, "first");
	kqt_ok(kq, 1, EVFILT_USER, EV_ENABLE, 0, 0, NULL);
	kqt_quiet(kq, 30, "enabled, nothing pending");
	kqt_ok(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	kqt_get(kq, "triggered after the enable");
	kqt_ok(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	kqt_quiet(kq, 30, "dispatched again");
}

KQT(user, delete_drops_a_trigger)
{
	int kq = kqt_kqueue();

	kqt_ok(kq, 1, EVFILT_USER, EV_ADD, 0, 0, NULL);
	kqt_ok(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	kqt_ok(kq, 1, EVFILT_USER, EV_DELETE, 0, 0, NULL);
	kqt_quiet(kq, 30, "deleted");
}

KQT(user, add_with_trigger_fires)
{
	int kq = kqt_kqueue();

	kqt_ok(kq, 1, EVFILT_USER, EV_ADD | EV_CLEAR, NOTE_TRIGGER, 0, NULL);
	cr_assert_eq(kqt_get(kq, "triggered at add").fflags, 0u);
}

static void *trigger_later(void *arg)
{
	int kq = *(int *)arg;

	usleep(50000);
	kqt_ok(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	return NULL;
}

KQT(user, trigger_from_another_thread_wakes_a_waiter)
{
	int kq = kqt_kqueue();
	pthread_t t;
	struct kevent e;

	kqt_ok(kq, 1, EVFILT_USER, EV_ADD | EV_CLEAR, 0, 0, NULL);
	pthread_create(&t, NULL, trigger_later, &kq);
	cr_assert_eq(kevent(kq, NULL, 0, &e, 1, NULL), 1, "woken: %s", strerror(errno));
	cr_assert_eq(e.filter, EVFILT_USER);
	pthread_join(t, NULL);
}

/* A trigger with no kevent() call after it: the kqueue fd reads ready. */
KQT(user, trigger_makes_the_kqueue_fd_readable)
{
	int kq = kqt_kqueue();
	struct pollfd pf = { .fd = kq, .events = POLLIN };
	struct kevent e;

	kqt_ok(kq, 7, EVFILT_USER, EV_ADD | EV_CLEAR, 0, 0, NULL);
	cr_assert_eq(poll(&pf, 1, 0), 0, "readable before any trigger");
	kqt_ok(kq, 7, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	cr_assert_eq(poll(&pf, 1, 10000), 1, "not readable 10 s after the trigger");
	e = kqt_get(kq, "the trigger");
	cr_assert_eq(e.ident, 7);
	kqt_quiet(kq, 50, "one trigger, one event");
}

/*
 * kqueue-kevent(3): on a queue whose revision serves KEVENT_USER each user
 * knote is a device kevent and a trigger makes it ready there; below that
 * revision the library alone holds it.  INFO on the kqueue fd tells.
 */
KQT(user, carried_by_the_device_from_revision_3)
{
	int kq = kqt_kqueue();
	unsigned int highest, rev = kqt_revision(kq, &highest);
	struct kevent_info a, b, c, d;
	bool dev;

	(void)highest;
	cr_assert_eq(kevent_info(kq, &a), 0);
	dev = rev >= 3 && (a.features & KEVENT_FEAT_USER);
	cr_assert_eq(dev, rev >= 3, "revision %u queue, features %#x", rev, a.features);
	kqt_ok(kq, 1, EVFILT_USER, EV_ADD | EV_CLEAR, 0, 0, NULL);
	cr_assert_eq(kevent_info(kq, &b), 0);
	cr_assert_eq(b.queue_kevents, a.queue_kevents + (dev ? 1 : 0),
		     "revision %u: %u device kevents after EV_ADD, %u before", rev,
		     b.queue_kevents, a.queue_kevents);
	kqt_ok(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	cr_assert_eq(kevent_info(kq, &c), 0);
	if (dev)
		cr_assert_eq(c.queue_ready, b.queue_ready + 1, "trigger: %u ready, %u before",
			     c.queue_ready, b.queue_ready);
	kqt_get(kq, "the trigger");
	kqt_ok(kq, 1, EVFILT_USER, EV_DELETE, 0, 0, NULL);
	cr_assert_eq(kevent_info(kq, &d), 0);
	cr_assert_eq(d.queue_kevents, a.queue_kevents, "EV_DELETE left %u device kevents of %u",
		     d.queue_kevents, a.queue_kevents);
}

/* Triggers before a collection are one event; one after it is another. */
KQT(user, triggers_before_a_collection_are_one_event)
{
	int kq = kqt_kqueue();
	struct kevent e[4];

	kqt_ok(kq, 3, EVFILT_USER, EV_ADD | EV_CLEAR, 0, 0, NULL);
	for (int i = 0; i < 3; i++)
		kqt_ok(kq, 3, EVFILT_USER, 0, NOTE_TRIGGER | NOTE_FFOR | (1u << i), 0, NULL);
	cr_assert_eq(kqt_wait(kq, e, 4, 10000), 1);
	cr_assert_eq(e[0].fflags, 7u, "fflags %#x", e[0].fflags);
	kqt_quiet(kq, 50, "merged triggers");
	kqt_ok(kq, 3, EVFILT_USER, 0, NOTE_TRIGGER, 5, NULL);
	cr_assert_eq(kqt_wait(kq, e, 4, 10000), 1);
	cr_assert(e[0].fflags == 7u && e[0].data == 5, "fflags %#x data %ld", e[0].fflags,
		  (long)e[0].data);
	kqt_quiet(kq, 50, "one trigger after the collection");
}

/* More user events than a device queue holds (4095): each still works. */
KQT(user, more_than_a_device_queue_holds)
{
	enum { N = 4200, BATCH = 200 };
	int kq = kqt_kqueue();
	struct kevent ch[BATCH], e[4];
	int n = 0;

	for (int i = 0; i < N; i += BATCH) {
		for (int j = 0; j < BATCH; j++)
			EV_SET(&ch[j], (uintptr_t)(i + j + 1), EVFILT_USER, EV_ADD | EV_CLEAR, 0, 0, NULL);
		cr_assert_eq(kevent(kq, ch, BATCH, NULL, 0, NULL), 0, "adding %d..: %s", i + 1,
			     strerror(errno));
	}
	kqt_ok(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	kqt_ok(kq, N, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	while (n < 2) {
		int k = kqt_wait(kq, e + n, 4 - n, 10000);

		cr_assert_gt(k, 0, "%d of the 2 triggered events in 10 s", n);
		n += k;
	}
	cr_assert_eq(n, 2);
	cr_assert(e[0].ident + e[1].ident == 1 + N, "idents %lu and %lu", (unsigned long)e[0].ident,
		  (unsigned long)e[1].ident);
	kqt_quiet(kq, 20, "two triggers, two events");
}

/* A user event and a timer with the same ident are two kevents. */
KQT(user, same_ident_as_a_timer_is_another_kevent)
{
	int kq = kqt_kqueue();
	struct kevent e;

	kqt_ok(kq, 9, EVFILT_TIMER, EV_ADD | EV_ONESHOT, 0, 60000, NULL);
	kqt_ok(kq, 9, EVFILT_USER, EV_ADD | EV_CLEAR, 0, 0, NULL);
	kqt_ok(kq, 9, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	e = kqt_get(kq, "the user event");
	cr_assert_eq(e.filter, EVFILT_USER);
	kqt_ok(kq, 9, EVFILT_USER, EV_DELETE, 0, 0, NULL);
	kqt_ok(kq, 9, EVFILT_TIMER, EV_DELETE, 0, 0, NULL);
	cr_assert_eq(kqt_change(kq, 9, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL), -ENOENT);
}

/* ---- EVFILT_SIGNAL ---- */

KQT(signal, delivery_is_counted)
{
	int kq = kqt_kqueue();
	struct kevent want, e;

	signal(SIGUSR1, SIG_IGN);
	kqt_ok(kq, SIGUSR1, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL);
	kill(getpid(), SIGUSR1);
	e = kqt_get(kq, "SIGUSR1");
	EV_SET(&want, SIGUSR1, EVFILT_SIGNAL, EV_ADD | EV_CLEAR, 0, 1, NULL);
	kqt_same(&want, &e, "signal event");
}

KQT(signal, only_new_deliveries_after_a_report)
{
	int kq = kqt_kqueue();

	signal(SIGUSR2, SIG_IGN);
	kqt_ok(kq, SIGUSR2, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL);
	kill(getpid(), SIGUSR2);
	kqt_get(kq, "first");
	kqt_quiet(kq, 30, "cleared");
	kill(getpid(), SIGUSR2);
	cr_assert_eq(kqt_get(kq, "second").data, 1);
}

KQT(signal, two_kqueues_both_see_one_delivery)
{
	int a = kqt_kqueue(), b = kqt_kqueue();

	signal(SIGUSR1, SIG_IGN);
	kqt_ok(a, SIGUSR1, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL);
	kqt_ok(b, SIGUSR1, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL);
	kill(getpid(), SIGUSR1);
	cr_assert_eq(kqt_get(a, "a").data, 1);
	cr_assert_eq(kqt_get(b, "b").data, 1);
}

KQT(signal, pending_before_add_is_reported)
{
	int kq = kqt_kqueue();
	sigset_t m;

	sigemptyset(&m);
	sigaddset(&m, SIGUSR2);
	sigprocmask(SIG_BLOCK, &m, NULL);
	kill(getpid(), SIGUSR2);	/* pending, blocked */
	kqt_ok(kq, SIGUSR2, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL);
	cr_assert_eq(kqt_get(kq, "pending signal").data, 1);
}

KQT(signal, receipt_stays_across_a_modify)
{
	int kq = kqt_kqueue();
	struct kevent c, r;

	signal(SIGUSR1, SIG_IGN);
	EV_SET(&c, SIGUSR1, EVFILT_SIGNAL, EV_ADD | EV_RECEIPT, 0, 0, NULL);
	cr_assert_eq(kevent(kq, &c, 1, &r, 1, NULL), 1);
	kqt_ok(kq, SIGUSR1, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL);
	kill(getpid(), SIGUSR1);
	cr_assert(kqt_get(kq, "signal").flags & EV_RECEIPT);
}

KQT(signal, bad_number_is_einval)
{
	int kq = kqt_kqueue();

	cr_assert_eq(kqt_change(kq, 0, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL), -EINVAL);
	cr_assert_eq(kqt_change(kq, 1000, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL), -EINVAL);
}

KQT(signal, delete_stops_reports)
{
	int kq = kqt_kqueue();

	signal(SIGUSR1, SIG_IGN);
	kqt_ok(kq, SIGUSR1, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL);
	kqt_ok(kq, SIGUSR1, EVFILT_SIGNAL, EV_DELETE, 0, 0, NULL);
	kill(getpid(), SIGUSR1);
	kqt_quiet(kq, 50, "deleted");
}

/*
 * A signal sent to the calling thread alone (pthread_kill(), raise()) is
 * reported as one sent to the process is: FreeBSD counts it at its
 * generation, whichever thread it is sent to.
 */
KQT(signal, sent_to_the_calling_thread_is_counted)
{
	int kq = kqt_kqueue();
	struct kevent e;

	signal(SIGUSR2, SIG_IGN);
	kqt_ok(kq, SIGUSR2, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL);
	cr_assert_eq(pthread_kill(pthread_self(), SIGUSR2), 0);
	e = kqt_get(kq, "SIGUSR2 to this thread");
	cr_assert(e.ident == SIGUSR2 && e.data == 1, "ident %lu data %ld",
		  (unsigned long)e.ident, (long)e.data);
	cr_assert_eq(raise(SIGUSR2), 0);
	cr_assert_eq(kqt_get(kq, "raise()").data, 1);
}

KQT(signal, wakes_a_blocked_kevent)
{
	int kq = kqt_kqueue();
	struct kevent e;
	pid_t child;

	signal(SIGUSR1, SIG_IGN);
	kqt_ok(kq, SIGUSR1, EVFILT_SIGNAL, EV_ADD, 0, 0, NULL);
	child = fork();
	if (child == 0) {
		usleep(50000);
		kill(getppid(), SIGUSR1);
		_exit(0);
	}
	cr_assert_eq(kevent(kq, NULL, 0, &e, 1, NULL), 1);
	cr_assert_eq(e.ident, (uintptr_t)SIGUSR1);
	waitpid(child, NULL, 0);
}

KQT(signal, disabled_counts_for_later)
{
	int kq = kqt_kqueue();

	signal(SIGUSR1, SIG_IGN);
	kqt_ok(kq, SIGUSR1, EVFILT_SIGNAL, EV_ADD | EV_DISABLE, 0, 0, NULL);
	kill(getpid(), SIGUSR1);
	kqt_quiet(kq, 50, "disabled");
	kqt_ok(kq, SIGUSR1, EVFILT_SIGNAL, EV_ENABLE, 0, 0, NULL);
	cr_assert_eq(kqt_get(kq, "enabled").data, 1);
}

/* ---- EVFILT_PROC ---- */

KQT(proc, exit_status_of_a_child)
{
	int kq = kqt_kqueue(), go[2];
	pid_t child;
	struct kevent e;
	char c = 0;

	kqt_pipe(go);
	child = fork();
	if (child == 0) {
		if (read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(7);
	}
	kqt_ok(kq, (uintptr_t)child, EVFILT_PROC, EV_ADD, NOTE_EXIT, 0, (void *)5);
	cr_assert_eq(write(go[1], &c, 1), 1);
	e = kqt_get(kq, "child exit");
	cr_assert_eq(e.ident, (uintptr_t)child);
	cr_assert_eq(e.fflags, NOTE_EXIT);
	cr_assert_eq(e.flags, EV_ADD | EV_ONESHOT | EV_CLEAR | EV_EOF, "flags %#x", e.flags);
	cr_assert_eq(e.udata, (void *)5);
	cr_assert(WIFEXITED((int)e.data) && WEXITSTATUS((int)e.data) == 7, "data %#lx", (long)e.data);
	/* Not reaped by the front: the parent still can. */
	int st;
	cr_assert_eq(waitpid(child, &st, 0), child);
}

KQT(proc, killed_child_reports_the_signal)
{
	int kq = kqt_kqueue();
	pid_t child = fork();
	struct kevent e;

	if (child == 0) {
		pause();
		_exit(0);
	}
	kqt_ok(kq, (uintptr_t)child, EVFILT_PROC, EV_ADD, NOTE_EXIT, 0, NULL);
	kill(child, SIGKILL);
	e = kqt_get(kq, "killed");
	cr_assert(WIFSIGNALED((int)e.data) && WTERMSIG((int)e.data) == SIGKILL, "data %#lx", (long)e.data);
	waitpid(child, NULL, 0);
}

KQT(proc, exit_is_reported_once)
{
	int kq = kqt_kqueue();
	pid_t child = fork();

	if (child == 0)
		_exit(0);
	kqt_ok(kq, (uintptr_t)child, EVFILT_PROC, EV_ADD, NOTE_EXIT, 0, NULL);
	kqt_get(kq, "exit");
	kqt_quiet(kq, 30, "once");
	waitpid(child, NULL, 0);
}

KQT(proc, two_kqueues_both_see_the_status)
{
	int a = kqt_kqueue(), b = kqt_kqueue();
	pid_t child = fork();

	if (child == 0) {
		usleep(50000);
		_exit(64);
	}
	kqt_ok(a, (uintptr_t)child, EVFILT_PROC, EV_ADD, NOTE_EXIT, 0, NULL);
	kqt_ok(b, (uintptr_t)child, EVFILT_PROC, EV_ADD, NOTE_EXIT, 0, NULL);
	cr_assert_eq(kqt_get(a, "a").data, 64 << 8);
	cr_assert_eq(kqt_get(b, "b").data, 64 << 8);
	waitpid(child, NULL, 0);
}

/* A knote that asks for no NOTE_EXIT is dropped at the exit, unreported
 * (FreeBSD's filt_proc), also when a later EV_ADD took NOTE_EXIT away. */
KQT(proc, exit_without_note_exit_is_dropped)
{
	int kq = kqt_kqueue();
	pid_t child = fork();
	siginfo_t si;

	if (child == 0) {
		pause();
		_exit(0);
	}
	kqt_ok(kq, (uintptr_t)child, EVFILT_PROC, EV_ADD, NOTE_EXIT, 0, NULL);
	kill(child, SIGKILL);
	cr_assert_eq(waitid(P_PID, (id_t)child, &si, WEXITED | WNOWAIT), 0);
	/* Exited, not reaped: the EV_ADD makes the knote looked at by the next call. */
	kqt_ok(kq, (uintptr_t)child, EVFILT_PROC, EV_ADD, 0, 0, NULL);
	kqt_quiet(kq, 50, "no NOTE_EXIT asked");
	cr_assert_eq(kqt_change(kq, (uintptr_t)child, EVFILT_PROC, EV_DELETE, 0, 0, NULL), -ENOENT,
		     "the knote went at the exit");
	waitpid(child, NULL, 0);
}

KQT(proc, no_such_process_is_esrch)
{
	int kq = kqt_kqueue();
	pid_t child = fork();

	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);	/* reaped: the pid names nobody now */
	cr_assert_eq(kqt_change(kq, (uintptr_t)child, EVFILT_PROC, EV_ADD, NOTE_EXIT, 0, NULL), -ESRCH);
}

KQT(proc, note_track_is_enotsup)
{
	int kq = kqt_kqueue();

	cr_assert_eq(kqt_change(kq, (uintptr_t)getpid(), EVFILT_PROC, EV_ADD, NOTE_EXIT | NOTE_TRACK, 0, NULL),
		     -ENOTSUP);
}

/* ---- EVFILT_VNODE ---- */

static int vnode_file(char *path, size_t len)
{
	return kqt_tmpfile(path, len, 4);
}

KQT(vnode, write_is_note_write)
{
	char path[64];
	int kq = kqt_kqueue(), fd = vnode_file(path, sizeof(path));
	struct kevent want, e;

	kqt_ok(kq, (uintptr_t)fd, EVFILT_VNODE, EV_ADD | EV_CLEAR, NOTE_WRITE, 0, NULL);
	pwrite(fd, "x", 1, 0);
	e = kqt_get(kq, "write");
	EV_SET(&want, fd, EVFILT_VNODE, EV_ADD | EV_CLEAR, NOTE_WRITE, 0, NULL);
	kqt_same(&want, &e, "vnode write");
	unlink(path);
}

KQT(vnode, growth_is_note_extend)
{
	char path[64];
	int kq = kqt_kqueue(), fd = vnode_file(path, sizeof(path));
	struct kevent e;

	/* Only NOTE_WRITE asked: the growing write's whole hint comes back. */
	kqt_ok(kq, (uintptr_t)fd, EVFILT_VNODE, EV_ADD | EV_CLEAR, NOTE_WRITE, 0, NULL);
	lseek(fd, 0, SEEK_END);
	kqt_write(fd, 10);
	e = kqt_get(kq, "append");
	cr_assert_eq(e.fflags, NOTE_WRITE | NOTE_EXTEND, "fflags %#x", e.fflags);
	unlink(path);
}

KQT(vnode, chmod_is_note_attrib)
{
	char path[64];
	int kq = kqt_kqueue(), fd = vnode_file(path, sizeof(path));

	kqt_ok(kq, (uintptr_t)fd, EVFILT_VNODE, EV_ADD | EV_CLEAR, NOTE_ATTRIB, 0, NULL);
	fchmod(fd, 0600);
	cr_assert_eq(kqt_get(kq, "chmod").fflags, NOTE_ATTRIB);
	unlink(path);
}

/*
 * A note the knote did not ask for wakes nothing, and must not leave a
 * dispatch knote disarmed either: on a revision-4 queue the device
 * disarmed the inode kevent when it reported the write (abi.md D65), and
 * the front re-arms it, so the later chmod is reported.
 */
KQT(vnode, dispatch_unasked_note_leaves_it_armed)
{
	char path[64];
	int kq = kqt_kqueue(), fd = vnode_file(path, sizeof(path));
	struct pollfd pf = { .fd = kq, .events = POLLIN };

	kqt_ok(kq, (uintptr_t)fd, EVFILT_VNODE, EV_ADD | EV_CLEAR | EV_DISPATCH, NOTE_ATTRIB, 0,
	       NULL);
	pwrite(fd, "x", 1, 0);
	cr_assert_eq(poll(&pf, 1, 10000), 1, "the write's report never came");
	kqt_quiet(kq, 50, "a write, not asked");
	fchmod(fd, 0600);
	cr_assert_eq(kqt_get(kq, "chmod").fflags, NOTE_ATTRIB);
	unlink(path);
}

KQT(vnode, unlink_is_note_delete)
{
	char path[64];
	int kq = kqt_kqueue(), fd = vnode_file(path, sizeof(path));

	kqt_ok(kq, (uintptr_t)fd, EVFILT_VNODE, EV_ADD | EV_ONESHOT, NOTE_DELETE, 0, NULL);
	unlink(path);
	cr_assert_eq(kqt_get(kq, "unlink").fflags, NOTE_DELETE);
}

KQT(vnode, rename_is_note_rename)
{
	char path[64], to[80];
	int kq = kqt_kqueue(), fd = vnode_file(path, sizeof(path));

	snprintf(to, sizeof(to), "%s.moved", path);
	kqt_ok(kq, (uintptr_t)fd, EVFILT_VNODE, EV_ADD | EV_CLEAR, NOTE_RENAME, 0, NULL);
	cr_assert_eq(rename(path, to), 0);
	cr_assert_eq(kqt_get(kq, "rename").fflags, NOTE_RENAME);
	unlink(to);
}

KQT(vnode, link_is_note_link)
{
	char path[64], to[80];
	int kq = kqt_kqueue(), fd = vnode_file(path, sizeof(path));

	snprintf(to, sizeof(to), "%s.link", path);
	kqt_ok(kq, (uintptr_t)fd, EVFILT_VNODE, EV_ADD | EV_CLEAR, NOTE_LINK, 0, NULL);
	cr_assert_eq(link(path, to), 0);
	cr_assert_eq(kqt_get(kq, "link").fflags, NOTE_LINK);
	unlink(to);
	unlink(path);
}

KQT(vnode, directory_entry_is_note_write)
{
	char dir[] = "/tmp/kqt-dir-XXXXXX", f[64];
	int kq = kqt_kqueue(), fd;

	cr_assert_not_null(mkdtemp(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	kqt_ok(kq, (uintptr_t)fd, EVFILT_VNODE, EV_ADD | EV_CLEAR, NOTE_WRITE, 0, NULL);
	snprintf(f, sizeof(f), "%s/a", dir);
	close(open(f, O_CREAT | O_WRONLY, 0600));
	cr_assert_eq(kqt_get(kq, "entry created").fflags, NOTE_WRITE);
	unlink(f);
	rmdir(dir);
}

/* FreeBSD's mkdir: the parent's NOTE_WRITE|NOTE_LINK, one hint. */
KQT(vnode, subdirectory_is_note_write_and_link)
{
	char dir[] = "/tmp/kqt-dir-XXXXXX", sub[64];
	int kq = kqt_kqueue(), fd;

	cr_assert_not_null(mkdtemp(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	kqt_ok(kq, (uintptr_t)fd, EVFILT_VNODE, EV_ADD | EV_CLEAR, NOTE_LINK, 0, NULL);
	snprintf(sub, sizeof(sub), "%s/s", dir);
	cr_assert_eq(mkdir(sub, 0700), 0);
	cr_assert_eq(kqt_get(kq, "subdirectory created").fflags, NOTE_WRITE | NOTE_LINK);
	cr_assert_eq(rmdir(sub), 0);
	cr_assert_eq(kqt_get(kq, "subdirectory removed").fflags, NOTE_WRITE | NOTE_LINK);
	close(fd);
	rmdir(dir);
}

/* NOTE_DELETE is an ordinary note: the knote stays until EV_DELETE. */
KQT(vnode, note_delete_keeps_the_knote)
{
	char path[64];
	int kq = kqt_kqueue(), fd = vnode_file(path, sizeof(path));

	kqt_ok(kq, (uintptr_t)fd, EVFILT_VNODE, EV_ADD | EV_CLEAR, NOTE_DELETE, 0, NULL);
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(kqt_get(kq, "unlink").fflags, NOTE_DELETE);
	kqt_quiet(kq, 50, "nothing more");
	kqt_ok(kq, (uintptr_t)fd, EVFILT_VNODE, EV_DELETE, 0, 0, NULL);
}

KQT(vnode, unasked_notes_are_filtered)
{
	char path[64];
	int kq = kqt_kqueue(), fd = vnode_file(path, sizeof(path));

	kqt_ok(kq, (uintptr_t)fd, EVFILT_VNODE, EV_ADD | EV_CLEAR, NOTE_DELETE, 0, NULL);
	pwrite(fd, "x", 1, 0);
	kqt_quiet(kq, 50, "NOTE_WRITE not asked for");
	unlink(path);
	cr_assert_eq(kqt_get(kq, "delete").fflags, NOTE_DELETE);
}

KQT(vnode, notes_accumulate_until_delivered)
{
	char path[64];
	int kq = kqt_kqueue(), fd = vnode_file(path, sizeof(path));
	struct kevent e;

	kqt_ok(kq, (uintptr_t)fd, EVFILT_VNODE, EV_ADD | EV_CLEAR, NOTE_WRITE | NOTE_ATTRIB, 0, NULL);
	pwrite(fd, "x", 1, 0);
	fchmod(fd, 0644);
	usleep(50000);
	e = kqt_get(kq, "both");
	if (e.fflags != (NOTE_WRITE | NOTE_ATTRIB))
		e.fflags |= kqt_get(kq, "the second note").fflags;
	cr_assert_eq(e.fflags, NOTE_WRITE | NOTE_ATTRIB, "fflags %#x", e.fflags);
	unlink(path);
}

KQT(vnode, rename_over_a_watched_file_is_note_delete)
{
	char path[64], src[80];
	int kq = kqt_kqueue(), fd = vnode_file(path, sizeof(path));

	snprintf(src, sizeof(src), "%s.src", path);
	close(open(src, O_CREAT | O_WRONLY, 0600));
	kqt_ok(kq, (uintptr_t)fd, EVFILT_VNODE, EV_ADD | EV_ONESHOT, NOTE_DELETE, 0, NULL);
	cr_assert_eq(rename(src, path), 0);
	cr_assert_eq(kqt_get(kq, "replaced").fflags, NOTE_DELETE);
	unlink(path);
}

KQT(vnode, ftruncate_growth_is_note_extend)
{
	char path[64];
	int kq = kqt_kqueue(), fd = vnode_file(path, sizeof(path));

	kqt_ok(kq, (uintptr_t)fd, EVFILT_VNODE, EV_ADD | EV_ONESHOT, NOTE_EXTEND, 0, NULL);
	cr_assert_eq(ftruncate(fd, 8192), 0);
	cr_assert(kqt_get(kq, "grown").fflags & NOTE_EXTEND);
	unlink(path);
}

/* The size is compared when the write happened, not when a later change is read. */
KQT(vnode, growth_after_a_chmod_is_note_extend)
{
	char path[64];
	int kq = kqt_kqueue(), fd = vnode_file(path, sizeof(path));
	struct kevent e;

	kqt_ok(kq, (uintptr_t)fd, EVFILT_VNODE, EV_ADD | EV_CLEAR, NOTE_WRITE | NOTE_EXTEND | NOTE_ATTRIB,
	       0, NULL);
	cr_assert_eq(fchmod(fd, 0640), 0);
	lseek(fd, 0, SEEK_END);
	kqt_write(fd, 10);
	e = kqt_get(kq, "chmod, then append");
	cr_assert_eq(e.fflags, NOTE_ATTRIB | NOTE_WRITE | NOTE_EXTEND, "fflags %#x", e.fflags);
	unlink(path);
}

/* FreeBSD: only a vnode takes EVFILT_VNODE; a pipe, a socket or an anonymous inode is EINVAL. */
KQT(vnode, pipe_is_einval)
{
	int kq = kqt_kqueue(), p[2];

	kqt_pipe(p);
	cr_assert_eq(kqt_change(kq, (uintptr_t)p[0], EVFILT_VNODE, EV_ADD, NOTE_ATTRIB, 0, NULL), -EINVAL);
	cr_assert_eq(kqt_change(kq, (uintptr_t)p[1], EVFILT_VNODE, EV_ADD, NOTE_WRITE, 0, NULL), -EINVAL);
}

KQT(vnode, socket_is_einval)
{
	int kq = kqt_kqueue(), sv[2], efd = eventfd(0, EFD_CLOEXEC);

	kqt_socketpair(sv);
	cr_assert_eq(kqt_change(kq, (uintptr_t)sv[0], EVFILT_VNODE, EV_ADD, NOTE_ATTRIB, 0, NULL), -EINVAL);
	cr_assert_geq(efd, 0);
	cr_assert_eq(kqt_change(kq, (uintptr_t)efd, EVFILT_VNODE, EV_ADD, NOTE_ATTRIB, 0, NULL), -EINVAL,
		     "an eventfd (anonymous inode)");
}

KQT(vnode, named_fifo_is_watched)
{
	char path[64];
	int kq = kqt_kqueue(), fd;

	snprintf(path, sizeof(path), "/tmp/kqt-fifo-%d", (int)getpid());
	unlink(path);
	cr_assert_eq(mkfifo(path, 0600), 0, "mkfifo: %s", strerror(errno));
	fd = open(path, O_RDWR | O_CLOEXEC);	/* O_RDWR: no wait for a peer */
	cr_assert_geq(fd, 0);
	kqt_ok(kq, (uintptr_t)fd, EVFILT_VNODE, EV_ADD | EV_CLEAR, NOTE_ATTRIB, 0, NULL);
	cr_assert_eq(chmod(path, 0640), 0);
	cr_assert_eq(kqt_get(kq, "chmod of the fifo").fflags, NOTE_ATTRIB);
	unlink(path);
}

KQT(vnode, bad_fd_is_ebadf)
{
	int kq = kqt_kqueue();

	cr_assert_eq(kqt_change(kq, 99999, EVFILT_VNODE, EV_ADD, NOTE_WRITE, 0, NULL), -EBADF);
}
