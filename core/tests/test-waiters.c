// SPDX-License-Identifier: GPL-2.0
/* Parked GET_EVENTS: completion, deadlines, interrupts, D16 order, release, 10,000 waiters. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "helpers.h"

struct fixture F;

TestSuite(waiters, .init = fx_setup, .fini = fx_teardown);

#define OUT (&F.uk[KEVENT_MAX_EVENTS])

struct done {
	int calls;
	int result;
	int order;
};

static int completions;

static void on_complete(void *ctx, int result)
{
	struct done *d = ctx;

	d->calls++;
	d->result = result;
	d->order = ++completions;
}

/* Parks a GET_EVENTS; returns the waiter. */
static struct kwaiter *park_q(struct kqueue *q, __u32 min_nr, __u32 max_nr, __u64 timeout,
			      struct ukevent *out, struct done *d)
{
	struct kevent_get_events_arg a = {
		.min_nr = min_nr, .max_nr = max_nr, .timeout_ns = timeout,
		.events = (__u64)(uintptr_t)out,
	};
	struct kwait_req wr = { &F.mem.ua, on_complete, d };
	struct kwaiter *w = NULL;
	struct kdisp_plan plan;

	cr_assert_eq(kdisp_plan(q, KEVENT_IOC_GET_EVENTS, &a, sizeof(a), &F.me, &plan), 0);
	cr_assert_eq(kdisp_execute(q, &plan, &F.me, &F.mem.ua, NULL, &wr, &w), KDISP_PARKED);
	cr_assert(w);
	return w;
}

static struct kwaiter *park(__u32 min_nr, __u32 max_nr, __u64 timeout, struct ukevent *out,
			    struct done *d)
{
	return park_q(F.q, min_nr, max_nr, timeout, out, d);
}

CORE_TEST(waiters, completes_when_min_nr_is_ready)
{
	struct done d = { 0 };
	struct kwaiter *w;

	fx_add_n(0, 3, 0);
	w = park(2, 3, KEVENT_TIMEOUT_INFINITE, OUT, &d);
	cr_assert_eq(fx_counters().waiters, 1);
	ktest_fire(0, 0);
	kcore_run_deadlines(F.core);
	cr_assert_eq(d.calls, 0, "one of two is not enough");
	ktest_fire(1, 0);
	cr_assert_eq(d.calls, 0, "deterministic: nothing runs behind the test's back");
	kcore_run_deadlines(F.core);
	cr_assert_eq(d.calls, 1);
	cr_assert_eq(d.result, 2);
	cr_assert_eq(OUT[0].id.raw_u64, 0);
	cr_assert_eq(OUT[1].id.raw_u64, 1);
	kwaiter_interrupt(w);
	kcore_run_deadlines(F.core);
	cr_assert_eq(d.calls, 1, "interrupt after completion is a no-op");
	kwaiter_put(w);
}

static __u32 queue_parked(struct kqueue *q)
{
	struct kevent_info info;
	struct kdisp_plan plan;

	cr_assert_eq(kdisp_plan(q, KEVENT_IOC_INFO, NULL, 0, &F.me, &plan), 0);
	cr_assert_eq(kdisp_execute(q, &plan, &F.me, &F.mem.ua, &info, NULL, NULL), 0);
	return info.queue_parked;
}

/* INFO queue_parked counts this queue's parked calls, from park to serve. */
CORE_TEST(waiters, info_counts_parked_calls_of_the_queue)
{
	struct done d = { 0 }, e = { 0 };
	struct kwaiter *w, *v;

	fx_add_n(0, 2, 0);
	cr_assert_eq(queue_parked(F.q), 0);
	w = park(1, 2, KEVENT_TIMEOUT_INFINITE, OUT, &d);
	v = park(2, 2, KEVENT_TIMEOUT_INFINITE, OUT + 2, &e);
	cr_assert_eq(queue_parked(F.q), 2);
	ktest_fire(0, 0);
	kcore_run_deadlines(F.core);
	cr_assert_eq(d.calls, 1);
	cr_assert_eq(queue_parked(F.q), 1, "the served one left the count");
	kwaiter_interrupt(v);
	kcore_run_deadlines(F.core);
	cr_assert_eq(e.calls, 1);
	cr_assert_eq(queue_parked(F.q), 0);
	kwaiter_put(w);
	kwaiter_put(v);
}

CORE_TEST(waiters, waiter_timeout_returns_what_is_ready)
{
	struct done d = { 0 }, e = { 0 };
	struct kwaiter *w, *v;

	fx_add_n(0, 3, 0);
	w = park(3, 3, 5000000, OUT, &d);
	v = park(3, 3, 9000000, OUT + 3, &e);
	ktest_fire(2, 7);
	F.now += 4999999;
	kcore_run_deadlines(F.core);
	cr_assert_eq(d.calls, 0, "not yet");
	F.now += 1;
	kcore_run_deadlines(F.core);
	cr_assert_eq(d.calls, 1);
	cr_assert_eq(d.result, 1, "the timeout returns what is ready");
	cr_assert_eq(OUT[0].ret_data[0], 7);
	cr_assert_eq(e.calls, 0);
	F.now += 4000000;
	kcore_run_deadlines(F.core);
	cr_assert_eq(e.calls, 1);
	cr_assert_eq(e.result, 0, "nothing ready: 0, not an error");
	kwaiter_put(w);
	kwaiter_put(v);
}

CORE_TEST(waiters, waiter_interrupted_returns_ready_not_eintr)
{
	struct done d = { 0 };
	struct kwaiter *w;

	fx_add_n(0, 3, 0);
	w = park(3, 3, KEVENT_TIMEOUT_INFINITE, OUT, &d);
	ktest_fire(1, 0);
	kwaiter_interrupt(w);
	kcore_run_deadlines(F.core);
	cr_assert_eq(d.calls, 1);
	cr_assert_eq(d.result, 1, "D22: what is ready, never -EINTR");
	kwaiter_put(w);
	w = park(1, 3, KEVENT_TIMEOUT_INFINITE, OUT, &d);
	kwaiter_interrupt(w);
	kwaiter_interrupt(w);
	kcore_run_deadlines(F.core);
	cr_assert_eq(d.calls, 2, "complete() exactly once");
	cr_assert_eq(d.result, 0);
	kwaiter_put(w);
}

CORE_TEST(waiters, close_with_waiters)
{
	struct done d[3] = { { 0 } };
	struct kwaiter *w[3];
	unsigned int i;

	fx_add_n(0, 3, KEVENT_REQ_ONESHOT);
	for (i = 0; i < 3; i++)
		w[i] = park(1, 1, KEVENT_TIMEOUT_INFINITE, OUT + i, &d[i]);
	ktest_fire(0, 0);
	kqueue_release(F.q);
	F.q = NULL;
	for (i = 0; i < 3; i++)
		cr_assert_eq(d[i].calls, 1, "waiter %u completed by release", i);
	cr_assert_eq(d[0].result, 1, "the oldest takes what is ready");
	cr_assert_eq(d[1].result, 0);
	cr_assert_eq(d[2].result, 0);
	cr_assert_eq(fx_counters().kevents, 0);
	cr_assert_eq(fx_counters().queues, 1, "the handles keep the queue memory");
	for (i = 0; i < 3; i++) {
		kwaiter_interrupt(w[i]);
		kwaiter_put(w[i]);
	}
	kcore_run_deadlines(F.core);
	cr_assert_eq(fx_counters().queues, 0);
}

CORE_TEST(waiters, D16_oldest_waiter_whose_min_is_met)
{
	struct done a = { 0 }, b = { 0 }, c = { 0 };
	struct kwaiter *wa, *wb, *wc;

	fx_add_n(0, 5, 0);
	wa = park(3, 3, KEVENT_TIMEOUT_INFINITE, OUT, &a);
	wb = park(1, 1, KEVENT_TIMEOUT_INFINITE, OUT + 3, &b);
	wc = park(1, 1, KEVENT_TIMEOUT_INFINITE, OUT + 4, &c);
	ktest_fire(0, 0);
	kcore_run_deadlines(F.core);
	cr_assert_eq(a.calls, 0, "min 3 not met");
	cr_assert_eq(b.calls, 1, "the oldest whose min is met");
	cr_assert_eq(c.calls, 0, "the rest keep waiting");
	ktest_fire(1, 0);
	ktest_fire(2, 0);
	ktest_fire(3, 0);
	ktest_fire(4, 0);
	kcore_run_deadlines(F.core);
	cr_assert_eq(a.calls, 1);
	cr_assert_eq(a.result, 3);
	cr_assert_eq(c.calls, 1, "then the next one");
	cr_assert(a.order < c.order, "arrival order");
	cr_assert_eq(OUT[4].id.raw_u64, 4);
	kwaiter_put(wa);
	kwaiter_put(wb);
	kwaiter_put(wc);
}

CORE_TEST(waiters, D16_new_call_does_not_overtake_a_due_waiter)
{
	struct done a = { 0 };
	struct kwaiter *wa;

	fx_add_n(0, 2, 0);
	wa = park(1, 1, KEVENT_TIMEOUT_INFINITE, OUT, &a);
	ktest_fire(0, 0);
	/* the worker has not run: a new non-blocking call serves the parked one first */
	cr_assert_eq(fx_get(1, 1, OUT + 1), 0);
	cr_assert_eq(a.calls, 1);
	cr_assert_eq(a.result, 1);
	kwaiter_put(wa);
}

CORE_TEST(waiters, ten_thousand_parked_on_one_queue)
{
	enum { N = 10000, E = 4000 };
	struct done *d = calloc(N, sizeof(*d));
	struct kwaiter **w = calloc(N, sizeof(*w));
	struct ukevent *out = calloc(N, sizeof(*out));
	unsigned int i;

	cr_assert(d && w && out);
	ktest_mem_init(&F.mem, out, N * sizeof(*out));
	F.uk = realloc(F.uk, NSLOTS * sizeof(*F.uk));
	for (i = 0; i < N; i++)
		w[i] = park(1, 1, KEVENT_TIMEOUT_INFINITE, &out[i], &d[i]);
	cr_assert_eq(fx_counters().waiters, N);
	cr_assert_eq(kcore_uid_used(F.core, F.me.uid, KEVENT_LIMIT_PARKED), N);
	ktest_mem_init(&F.mem, F.uk, NSLOTS * sizeof(*F.uk));
	fx_add_n(0, E, KEVENT_REQ_ONESHOT);
	ktest_mem_init(&F.mem, out, N * sizeof(*out));
	for (i = 0; i < E; i++)
		ktest_fire(i, i);
	kcore_run_deadlines(F.core);
	for (i = 0; i < N; i++) {
		if (i < E) {
			cr_assert_eq(d[i].calls, 1);
			cr_assert_eq(d[i].result, 1);
			cr_assert_eq(out[i].id.raw_u64, i, "waiter %u in arrival order", i);
		} else {
			cr_assert_eq(d[i].calls, 0);
		}
	}
	kqueue_release(F.q);
	F.q = NULL;
	for (i = E; i < N; i++)
		cr_assert_eq(d[i].calls, 1);
	for (i = 0; i < N; i++)
		kwaiter_put(w[i]);
	ktest_mem_init(&F.mem, F.uk, NSLOTS * sizeof(*F.uk));
	free(d);
	free(w);
	free(out);
}

CORE_TEST(waiters, ten_thousand_parked_across_queues)
{
	enum { Q = 100, PER = 100 };
	struct kqueue *qs[Q];
	struct done *d = calloc(Q * PER, sizeof(*d));
	struct kwaiter **w = calloc(Q * PER, sizeof(*w));
	unsigned int i, j;

	cr_assert(d && w);
	for (i = 0; i < Q; i++) {
		cr_assert_eq(kqueue_open(F.core, &F.me, NULL, &qs[i]), 0);
		for (j = 0; j < PER; j++)
			w[i * PER + j] = park_q(qs[i], 1, 1, 1000000ull * (j + 1), OUT,
						&d[i * PER + j]);
	}
	cr_assert_eq(fx_counters().waiters, Q * PER);
	F.now += 50 * 1000000ull;
	kcore_run_deadlines(F.core);
	for (i = 0; i < Q * PER; i++)
		cr_assert_eq(d[i].calls, (i % PER) < 50 ? 1 : 0, "waiter %u", i);
	F.now += 50 * 1000000ull;
	kcore_run_deadlines(F.core);
	for (i = 0; i < Q * PER; i++) {
		cr_assert_eq(d[i].calls, 1);
		cr_assert_eq(d[i].result, 0);
		kwaiter_put(w[i]);
	}
	for (i = 0; i < Q; i++)
		kqueue_release(qs[i]);
	free(d);
	free(w);
}

CORE_TEST(waiters, parked_cap_is_eagain)
{
	struct done d = { 0 };
	struct kwaiter *w;
	struct kevent_get_events_arg a = { .min_nr = 1, .max_nr = 1, .timeout_ns = ~0ull };
	struct kwait_req wr = { &F.mem.ua, on_complete, &d };
	struct kdisp_plan plan;
	struct kwaiter *w2 = NULL;

	kqueue_release(F.q);
	kcore_free(F.core);
	F.cfg.caps[KEVENT_LIMIT_PARKED] = 1;
	fx_start();
	w = park(1, 1, KEVENT_TIMEOUT_INFINITE, OUT, &d);
	a.events = (__u64)(uintptr_t)OUT;
	cr_assert_eq(kdisp_plan(F.q, KEVENT_IOC_GET_EVENTS, &a, sizeof(a), &F.me, &plan), 0);
	cr_assert_eq(kdisp_execute(F.q, &plan, &F.me, &F.mem.ua, NULL, &wr, &w2), -EAGAIN);
	kwaiter_interrupt(w);
	kcore_run_deadlines(F.core);
	kwaiter_put(w);
	cr_assert_eq(kdisp_execute(F.q, &plan, &F.me, &F.mem.ua, NULL, &wr, &w2), KDISP_PARKED,
		     "the charge is returned on completion");
	kwaiter_interrupt(w2);
	kcore_run_deadlines(F.core);
	kwaiter_put(w2);
}

CORE_TEST(waiters, enomem_on_park_is_clean)
{
	struct kevent_get_events_arg a = { .min_nr = 1, .max_nr = 1, .timeout_ns = 1000 };
	struct done d = { 0 };
	struct kwait_req wr = { &F.mem.ua, on_complete, &d };
	struct kdisp_plan plan;
	struct kwaiter *w = NULL;
	long n;

	a.events = (__u64)(uintptr_t)OUT;
	cr_assert_eq(kdisp_plan(F.q, KEVENT_IOC_GET_EVENTS, &a, sizeof(a), &F.me, &plan), 0);
	for (n = 0; n < 2; n++) {
		F.alloc_countdown = n;	/* 0: the waiter, 1: the deadline heap */
		cr_assert_eq(kdisp_execute(F.q, &plan, &F.me, &F.mem.ua, NULL, &wr, &w), -ENOMEM);
		cr_assert_eq(fx_counters().waiters, 0);
	}
	F.alloc_countdown = -1;
}

/* ---- normal mode: the worker thread, in-place waits ---- */

static void fx_setup_threaded(void)
{
	ktest_origin_reset();
	fx_config();
	F.cfg.deterministic = 0;
	F.cfg.clock_ns = NULL;
	fx_start();
}

TestSuite(waiters_threaded, .init = fx_setup_threaded, .fini = fx_teardown, .timeout = 60);

struct sync_done {
	pthread_mutex_t m;
	pthread_cond_t c;
	int calls, result;
};

static void on_sync_complete(void *ctx, int result)
{
	struct sync_done *s = ctx;

	pthread_mutex_lock(&s->m);
	s->calls++;
	s->result = result;
	pthread_cond_signal(&s->c);
	pthread_mutex_unlock(&s->m);
}

static void sync_wait(struct sync_done *s)
{
	pthread_mutex_lock(&s->m);
	while (!s->calls)
		pthread_cond_wait(&s->c, &s->m);
	pthread_mutex_unlock(&s->m);
}

CORE_TEST(waiters_threaded, worker_completes_on_fire_and_deadline)
{
	struct sync_done s = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 };
	struct sync_done t = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 };
	struct kevent_get_events_arg a = { .min_nr = 1, .max_nr = 2, .timeout_ns = ~0ull };
	struct kwait_req wr = { &F.mem.ua, on_sync_complete, &s };
	struct kdisp_plan plan;
	struct kwaiter *w = NULL;

	fx_add_n(0, 2, 0);
	a.events = (__u64)(uintptr_t)OUT;
	cr_assert_eq(kdisp_plan(F.q, KEVENT_IOC_GET_EVENTS, &a, sizeof(a), &F.me, &plan), 0);
	cr_assert_eq(kdisp_execute(F.q, &plan, &F.me, &F.mem.ua, NULL, &wr, &w), KDISP_PARKED);
	ktest_fire(1, 5);
	sync_wait(&s);
	cr_assert_eq(s.result, 1);
	cr_assert_eq(OUT[0].ret_data[0], 5);
	kwaiter_put(w);
	/* a 1 ms deadline runs on the worker too */
	a.timeout_ns = 1000000;
	wr.ctx = &t;
	cr_assert_eq(kdisp_plan(F.q, KEVENT_IOC_GET_EVENTS, &a, sizeof(a), &F.me, &plan), 0);
	cr_assert_eq(kdisp_execute(F.q, &plan, &F.me, &F.mem.ua, NULL, &wr, &w), KDISP_PARKED);
	sync_wait(&t);
	cr_assert_eq(t.result, 0);
	kwaiter_put(w);
}

struct firer {
	pthread_barrier_t *b;
};

static void *fire_later(void *arg)
{
	struct firer *f = arg;

	pthread_barrier_wait(f->b);
	ktest_fire(0, 42);
	return NULL;
}

CORE_TEST(waiters_threaded, in_place_wait_without_wait_request)
{
	pthread_barrier_t b;
	struct firer f = { &b };
	pthread_t t;

	fx_add_n(0, 1, 0);
	pthread_barrier_init(&b, NULL, 2);
	cr_assert_eq(pthread_create(&t, NULL, fire_later, &f), 0);
	pthread_barrier_wait(&b);
	cr_assert_eq(fx_get_q(F.q, 1, 1, KEVENT_TIMEOUT_INFINITE, OUT), 1);
	cr_assert_eq(OUT[0].ret_data[0], 42);
	pthread_join(t, NULL);
	pthread_barrier_destroy(&b);
	cr_assert_eq(fx_get_q(F.q, 1, 1, 2000000, OUT), 0, "in-place timeout");
}

static atomic_int tt_calls;
static atomic_int tt_events;

static void on_tt_complete(void *ctx, int result)
{
	(void)ctx;
	atomic_fetch_add(&tt_events, result);
	atomic_fetch_add(&tt_calls, 1);
}

CORE_TEST(waiters_threaded, ten_thousand_parked_served_by_the_worker)
{
	enum { N = 10000, E = 4000 };
	struct ukevent *out = calloc(N, sizeof(*out));
	struct kwaiter **w = calloc(N, sizeof(*w));
	struct ktest_mem m;
	unsigned int i, spins = 0;

	cr_assert(out && w);
	ktest_mem_init(&m, out, N * sizeof(*out));
	fx_add_n(0, E, KEVENT_REQ_ONESHOT);
	for (i = 0; i < N; i++) {
		struct kevent_get_events_arg a = {
			.min_nr = 1, .max_nr = 1, .timeout_ns = KEVENT_TIMEOUT_INFINITE,
			.events = (__u64)(uintptr_t)&out[i],
		};
		struct kwait_req wr = { &m.ua, on_tt_complete, NULL };
		struct kdisp_plan plan;

		cr_assert_eq(kdisp_plan(F.q, KEVENT_IOC_GET_EVENTS, &a, sizeof(a), &F.me, &plan), 0);
		cr_assert_eq(kdisp_execute(F.q, &plan, &F.me, &m.ua, NULL, &wr, &w[i]), KDISP_PARKED);
	}
	for (i = 0; i < E; i++)
		ktest_fire(i, i);
	while (atomic_load(&tt_calls) < E) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
		cr_assert(++spins < 100000, "completions: %d", atomic_load(&tt_calls));
	}
	kcore_sync(F.core);
	cr_assert_eq(atomic_load(&tt_calls), E, "exactly the first %d completed", E);
	for (i = 0; i < E; i++)
		cr_assert_eq(out[i].id.raw_u64, i, "waiter %u got event %u (arrival order)", i, i);
	kqueue_release(F.q);
	F.q = NULL;
	cr_assert_eq(atomic_load(&tt_calls), N);
	cr_assert_eq(atomic_load(&tt_events), E);
	for (i = 0; i < N; i++)
		kwaiter_put(w[i]);
	free(out);
	free(w);
}

static void *blocked_get(void *arg)
{
	int *ret = arg;

	*ret = fx_get_q(F.q, 1, 4, KEVENT_TIMEOUT_INFINITE, OUT);
	return NULL;
}

CORE_TEST(waiters_threaded, release_completes_an_in_place_wait)
{
	struct kqueue *q = F.q;
	pthread_t t;
	int ret = -1;

	fx_add_n(0, 2, 0);
	cr_assert_eq(pthread_create(&t, NULL, blocked_get, &ret), 0);
	while (fx_counters().waiters == 0)
		sched_yield();
	F.q = NULL;
	kqueue_release(q);
	pthread_join(t, NULL);
	cr_assert_eq(ret, 0, "what is ready: nothing, and no error");
}
