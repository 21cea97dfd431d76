// SPDX-License-Identifier: GPL-2.0
/*
 * Concurrency: several producer threads fire through the
 * test origin while several consumers drain with blocking GET_EVENTS and a
 * churn thread adds and removes kevents; nothing may be lost or duplicated.
 * Normal mode: the worker thread completes the waiters.  Run under TSan in
 * the tsan build (see core/meson.build).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "helpers.h"

struct fixture F;

enum { NQ = 2, PER_Q = 4000, ROUNDS = 3, PRODUCERS = 3, CONSUMERS = 3, BATCH = 64 };

static void fx_setup_threaded(void)
{
	ktest_origin_reset();
	fx_config();
	F.cfg.deterministic = 0;
	F.cfg.clock_ns = NULL;
	fx_start();
}

TestSuite(threads, .init = fx_setup_threaded, .fini = fx_teardown, .timeout = 240);

struct stress {
	struct kqueue *q[NQ];
	atomic_uint recv[NQ][ROUNDS * PER_Q];
	atomic_uint fired[NQ][PER_Q];		/* refire test: fires per kevent */
	atomic_uint armed[NQ][PER_Q];		/* refire test: 1 while pending */
	atomic_ulong received, expected;
	atomic_int stop, stop_producers;
	int round;
	pthread_barrier_t start, end;
	int refire;
};

static struct stress S;

static __u64 id_of(int q, unsigned int i)
{
	return ((__u64)(q + 1) << 32) | i;
}

/* CTL from a thread: its own simulated memory. */
static int ctl_on(struct kqueue *q, __u32 cmd, struct ukevent *arr, unsigned int n)
{
	struct ktest_mem m;
	struct kevent_ctl_arg a = { cmd, n, (__u64)(uintptr_t)arr };
	struct kdisp_plan plan;
	struct kcaller me = F.me;
	int ret;

	ktest_mem_init(&m, arr, n * sizeof(*arr));
	ret = kdisp_plan(q, KEVENT_IOC_CTL, &a, sizeof(a), &me, &plan);
	if (!ret)
		ret = kdisp_execute(q, &plan, &me, &m.ua, NULL, NULL, NULL);
	return ret;
}

static void add_round(int round, __u32 req)
{
	static struct ukevent uk[PER_Q];
	unsigned int i;
	int q;

	for (q = 0; q < NQ; q++) {
		for (i = 0; i < PER_Q; i++)
			uk[i] = uk_make(KEVENT_TIMER, id_of(q, round * PER_Q + i),
					KEVENT_TIMER_FIRED, req, i);
		cr_assert_eq(ctl_on(S.q[q], KEVENT_CTL_ADD, uk, PER_Q), 0);
	}
}

static void *producer(void *arg)
{
	unsigned int p = (unsigned int)(uintptr_t)arg, i;
	int q, r;

	for (r = 0; r < ROUNDS; r++) {
		pthread_barrier_wait(&S.start);
		for (i = p; i < PER_Q; i += PRODUCERS)
			for (q = 0; q < NQ; q++)
				ktest_fire(id_of(q, S.round * PER_Q + i), i);
		pthread_barrier_wait(&S.end);
	}
	return NULL;
}

static void *refire_producer(void *arg)
{
	unsigned int p = (unsigned int)(uintptr_t)arg, i;
	int q;

	pthread_barrier_wait(&S.start);
	while (!atomic_load(&S.stop_producers)) {
		for (i = p; i < PER_Q; i += PRODUCERS) {
			for (q = 0; q < NQ; q++) {
				unsigned int zero = 0;

				if (!atomic_compare_exchange_strong(&S.armed[q][i], &zero, 1))
					continue;
				atomic_fetch_add(&S.fired[q][i], 1);
				atomic_fetch_add(&S.expected, 1);
				cr_assert_eq(ktest_fire(id_of(q, i), i), 1);
			}
		}
	}
	pthread_barrier_wait(&S.end);
	return NULL;
}

static void consume_batch(int q, const struct ukevent *out, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		__u64 id = out[i].id.raw_u64;
		unsigned int idx = (unsigned int)id;

		cr_assert_eq(id >> 32, (__u64)(q + 1), "event from the wrong queue");
		cr_assert(idx < ROUNDS * PER_Q);
		cr_assert_eq(out[i].user[0], idx % PER_Q, "cookie");
		atomic_fetch_add(&S.recv[q][idx], 1);
		if (S.refire)
			atomic_store(&S.armed[q][idx], 0);
	}
	atomic_fetch_add(&S.received, (unsigned long)n);
}

static void *consumer(void *arg)
{
	unsigned int c = (unsigned int)(uintptr_t)arg, turn = c;
	struct ukevent out[BATCH];
	struct ktest_mem m;
	struct kcaller me = F.me;

	ktest_mem_init(&m, out, sizeof(out));
	while (!atomic_load(&S.stop)) {
		int q = (int)(turn++ % NQ), n;
		struct kevent_get_events_arg a = {
			.min_nr = 1, .max_nr = BATCH, .timeout_ns = 2000000,
			.events = (__u64)(uintptr_t)out,
		};
		struct kdisp_plan plan;

		cr_assert_eq(kdisp_plan(S.q[q], KEVENT_IOC_GET_EVENTS, &a, sizeof(a), &me, &plan), 0);
		n = kdisp_execute(S.q[q], &plan, &me, &m.ua, NULL, NULL, NULL);
		cr_assert(n >= 0, "GET_EVENTS: %d", n);
		consume_batch(q, out, n);
	}
	return NULL;
}

/* Adds and removes kevents nobody fires, concurrently with everything else. */
static void *churn(void *arg)
{
	struct ukevent uk[32];
	unsigned int i;

	(void)arg;
	while (!atomic_load(&S.stop)) {
		for (i = 0; i < 32; i++)
			uk[i] = uk_make(KEVENT_TIMER, 0xc0000000ull + i, 1, 0, i);
		cr_assert_eq(ctl_on(S.q[0], KEVENT_CTL_ADD, uk, 32), 0);
		for (i = 0; i < 32; i++)
			uk[i] = uk_make(KEVENT_TIMER, 0xc0000000ull + i, 1, 0, i);
		cr_assert_eq(ctl_on(S.q[0], KEVENT_CTL_REMOVE, uk, 32), 0);
		for (i = 0; i < 32; i++)
			cr_assert_eq(uk[i].ret_flags, KEVENT_RET_DONE);
	}
	return NULL;
}

static void wait_received(unsigned long want)
{
	unsigned long spins = 0;

	while (atomic_load(&S.received) < want) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
		cr_assert(++spins < 200000, "events lost: %lu of %lu",
			  atomic_load(&S.received), want);
	}
}

static void start_threads(pthread_t *t, void *(*prod)(void *))
{
	unsigned int i;

	for (i = 0; i < PRODUCERS; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, prod, (void *)(uintptr_t)i), 0);
	for (i = 0; i < CONSUMERS; i++)
		cr_assert_eq(pthread_create(&t[PRODUCERS + i], NULL, consumer,
					    (void *)(uintptr_t)i), 0);
	cr_assert_eq(pthread_create(&t[PRODUCERS + CONSUMERS], NULL, churn, NULL), 0);
}

static void open_queues(void)
{
	int q;

	memset(&S, 0, sizeof(S));
	kqueue_release(F.q);
	F.q = NULL;
	for (q = 0; q < NQ; q++)
		cr_assert_eq(kqueue_open(F.core, &F.me, NULL, &S.q[q]), 0);
	pthread_barrier_init(&S.start, NULL, PRODUCERS + 1);
	pthread_barrier_init(&S.end, NULL, PRODUCERS + 1);
}

static void stop_threads(pthread_t *t)
{
	unsigned int i;
	int q;

	atomic_store(&S.stop, 1);
	for (i = 0; i < PRODUCERS + CONSUMERS + 1; i++)
		pthread_join(t[i], NULL);
	for (q = 0; q < NQ; q++)
		kqueue_release(S.q[q]);
	pthread_barrier_destroy(&S.start);
	pthread_barrier_destroy(&S.end);
}

CORE_TEST(threads, oneshot_nothing_lost_nothing_duplicated)
{
	pthread_t t[PRODUCERS + CONSUMERS + 1];
	unsigned int i;
	int q, r;

	open_queues();
	start_threads(t, producer);
	for (r = 0; r < ROUNDS; r++) {
		S.round = r;
		add_round(r, KEVENT_REQ_ONESHOT);
		pthread_barrier_wait(&S.start);
		pthread_barrier_wait(&S.end);
		wait_received((unsigned long)(r + 1) * NQ * PER_Q);
	}
	stop_threads(t);
	cr_assert_eq(atomic_load(&S.received), (unsigned long)ROUNDS * NQ * PER_Q);
	for (q = 0; q < NQ; q++)
		for (i = 0; i < ROUNDS * PER_Q; i++)
			cr_assert_eq(atomic_load(&S.recv[q][i]), 1, "queue %d kevent %u", q, i);
	cr_assert_eq(fx_counters().kevents, 0, "every ONESHOT was freed after copy-out");
}

CORE_TEST(threads, refire_after_dequeue_exact_count)
{
	pthread_t t[PRODUCERS + CONSUMERS + 1];
	struct timespec ts = { 0, 300 * 1000000 };
	unsigned long total = 0;
	unsigned int i;
	int q;

	open_queues();
	S.refire = 1;
	add_round(0, 0);
	start_threads(t, refire_producer);
	pthread_barrier_wait(&S.start);
	nanosleep(&ts, NULL);
	atomic_store(&S.stop_producers, 1);
	pthread_barrier_wait(&S.end);
	/* producers are done: the consumers drain what they fired */
	wait_received(atomic_load(&S.expected));
	stop_threads(t);
	for (q = 0; q < NQ; q++) {
		for (i = 0; i < PER_Q; i++) {
			cr_assert_eq(atomic_load(&S.recv[q][i]), atomic_load(&S.fired[q][i]),
				     "queue %d kevent %u", q, i);
			total += atomic_load(&S.fired[q][i]);
		}
	}
	cr_assert(total >= NQ * PER_Q, "every kevent fired at least once (%lu)", total);
	cr_assert_eq(atomic_load(&S.received), total);
}

static void *hammer(void *arg)
{
	unsigned int i;

	(void)arg;
	while (!atomic_load(&S.stop))
		for (i = 0; i < 100; i++)
			ktest_fire(id_of(0, i), i);
	return NULL;
}

static atomic_int closed_calls;

static void on_closed(void *ctx, int result)
{
	cr_assert(result >= 0 && result <= 100, "result %d", result);
	atomic_fetch_add(&closed_calls, 1);
	(void)ctx;
}

CORE_TEST(threads, close_while_origins_fire_with_waiters_parked)
{
	enum { W = 50, H = 2 };
	static struct ukevent out[1000];
	struct kwaiter *w[W];
	struct ktest_mem m;
	pthread_t t[H];
	unsigned int i;

	open_queues();
	for (i = 0; i < 100; i++)
		F.uk[i] = uk_make(KEVENT_TIMER, id_of(0, i), KEVENT_TIMER_FIRED, 0, i);
	cr_assert_eq(ctl_on(S.q[0], KEVENT_CTL_ADD, F.uk, 100), 0);
	ktest_mem_init(&m, out, sizeof(out));
	for (i = 0; i < W; i++) {
		struct kevent_get_events_arg a = {
			.min_nr = 1000, .max_nr = 1000, .timeout_ns = KEVENT_TIMEOUT_INFINITE,
			.events = (__u64)(uintptr_t)out,
		};
		struct kwait_req wr = { &m.ua, on_closed, NULL };
		struct kdisp_plan plan;

		cr_assert_eq(kdisp_plan(S.q[0], KEVENT_IOC_GET_EVENTS, &a, sizeof(a), &F.me, &plan), 0);
		cr_assert_eq(kdisp_execute(S.q[0], &plan, &F.me, &m.ua, NULL, &wr, &w[i]),
			     KDISP_PARKED);
	}
	for (i = 0; i < H; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, hammer, NULL), 0);
	while (fx_counters().ready < 50)
		sched_yield();
	kqueue_release(S.q[0]);
	cr_assert_eq(atomic_load(&closed_calls), W, "every waiter completed once, by release");
	cr_assert_eq(ktest_attached(), 0, "every kevent detached while firing went on");
	atomic_store(&S.stop, 1);
	for (i = 0; i < H; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < W; i++) {
		kwaiter_interrupt(w[i]);
		kwaiter_put(w[i]);
	}
	kqueue_release(S.q[1]);
	pthread_barrier_destroy(&S.start);
	pthread_barrier_destroy(&S.end);
	cr_assert_eq(atomic_load(&closed_calls), W);
}
