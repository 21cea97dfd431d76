// SPDX-License-Identifier: GPL-2.0
/*
 * Many blocked callers at once.  A blocked GET_EVENTS is a parked record
 * on the CUSE daemon, not a busy worker (D32, B3): 1000 of them, one per
 * thread, on one queue, leave the device answering other calls, and each
 * is woken by exactly one event.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "ktest.h"

enum { BLOCKED = 1000 };

static int sc_kfd;
static unsigned int sc_seen[BLOCKED];
static int sc_bad[BLOCKED];	/* per thread: its GET_EVENTS result when not 1 */

static void *blocked_get(void *arg)
{
	int t = (int)(intptr_t)arg;
	struct ukevent out;
	int n;

	/* D18 EAGAIN: a thread may arrive while others are still being parked. */
	for (int tries = 0; tries < 10000; tries++) {
		n = kevent_get_events(sc_kfd, 1, 1, KT_MS(120000), &out, 0);
		if (n >= 0 || errno != EAGAIN)
			break;
		kt_sleep_ms(1 + tries % 10);
	}
	if (n == 1 && out.user[0] < BLOCKED)
		__atomic_fetch_add(&sc_seen[out.user[0]], 1, __ATOMIC_RELAXED);
	else
		sc_bad[t] = n < 0 ? -errno : 1000 + n;
	return NULL;
}

/*
 * This uid's parked calls, where the backend counts them (INFO's per-uid
 * use of its parked cap); the test runs as a uid of its own, so they are
 * its own.  live_waiters would be every test's beside it.
 */
static unsigned int parked_now(int fd)
{
	struct kevent_info i;

	kt_info(fd, &i);
	return i.limits[KEVENT_LIMIT_PARKED].used;
}

/* Bounded wait (30 s) until this uid's parked count is n; the count. */
static unsigned int parked_reaches(int fd, unsigned int n)
{
	unsigned int got;

	for (int i = 0; (got = parked_now(fd)) != n && i < 1500; i++)
		kt_sleep_ms(20);
	return got;
}

KTEST(scale, thousand_blocked_callers)
{
	/* 1000 parked calls and 1000 timers: caps of its own uid (ktest.h). */
	kt_own_uid();
	int probe = kt_open(O_RDWR);
	pthread_t *t = calloc(BLOCKED, sizeof(*t));
	pthread_attr_t attr;
	int counted = kt_backend_info()->limits[KEVENT_LIMIT_PARKED].cap != 0;

	cr_assert(t);
	kt_require_room(KEVENT_LIMIT_TIMERS, BLOCKED);
	kt_require_room(KEVENT_LIMIT_PARKED, BLOCKED);
	sc_kfd = kt_open(O_RDWR);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (int i = 0; i < BLOCKED; i++)
		cr_assert_eq(pthread_create(&t[i], &attr, blocked_get, (void *)(intptr_t)i), 0,
			     "thread %d", i);
	kt_await_parked(sc_kfd, BLOCKED, 60000);
	if (counted)
		cr_assert_eq(parked_reaches(probe, BLOCKED), BLOCKED, "the uid's parked calls: %u of %d",
			     parked_now(probe), BLOCKED);
	/* The device still answers while every one of them waits. */
	int other = kt_open(O_RDWR);
	struct ukevent out[1];
	kt_add_queued(other, kt_uk_timer(1, KEVENT_REQ_ONESHOT, 7));
	cr_assert_eq(kt_get(other, 1, 1, KT_MS(30000), out), 1, "a second queue starved by 1000 waiters");
	close(other);
	/* One ONESHOT event per caller, each taken by exactly one of them. */
	for (int i = 0; i < BLOCKED; i++)
		kt_add_queued(sc_kfd, kt_uk_timer(1 + (unsigned)(i % 7), KEVENT_REQ_ONESHOT, (__u32)i));
	for (int i = 0; i < BLOCKED; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < BLOCKED; i++) {
		cr_assert_eq(sc_bad[i], 0, "caller %d: GET_EVENTS %s%d", i, sc_bad[i] < 0 ? "errno " : "returned ",
			     sc_bad[i] < 0 ? -sc_bad[i] : sc_bad[i] - 1000);
		cr_assert_eq(sc_seen[i], 1u, "event %d delivered %u times", i, sc_seen[i]);
	}
	cr_assert_eq(kt_queue_kevents(sc_kfd), 0u);
	cr_assert_eq(kt_queue_parked(sc_kfd), 0u, "callers left parked on the queue");
	if (counted)
		cr_assert_eq(parked_reaches(probe, 0), 0u, "the uid's parked calls left: %u",
			     parked_now(probe));
	pthread_attr_destroy(&attr);
	free(t);
	close(sc_kfd);
	close(probe);
}
