// SPDX-License-Identifier: GPL-2.0
/*
 * Timer lateness of the TIMER origin (core + origins in process) next to a
 * bare timerfd, measured in the same run, interleaved.
 *
 * Producer: N periodic timers of period P whose phases are spread evenly
 * over one period (timer i is added at t0 + i*P/N).  Consumer: a thread
 * woken by the queues' notify (eventfd + epoll, as the daemon is), draining
 * the queues that were notified (as the daemon serves each queue's own
 * waiters) with non-blocking GET_EVENTS at batch 4095.  Lateness of an
 * event = (time it is in the consumer's hands - time of ADD) mod P; the ADD
 * time is taken just before the CTL, so it slightly overstates lateness.
 * Only every stride-th timer is sampled, so that the samples spread over
 * at least three periods and every phase.
 * Baseline: one bare CLOCK_MONOTONIC timerfd of period 10 ms (also for the
 * 1 s case: a bare timerfd's lateness does not depend on its period, and
 * 2,000 expiries of 1 s would take half an hour) read through epoll_wait,
 * lateness = (read time - t0) mod 10 ms, at most 500 samples a run.
 *
 * Output: per case the median over the runs of p50 and p99 (µs) of both,
 * and the ratio of the p99s.  Target: ratio <= 2.
 *
 * Usage: bench-origins-timer [runs [samples [max_timers [min_timers]]]]
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>

#include "common.h"

#define PER_Q 4000

struct run {
	__u64 p50, p99;
};

static int bench_evfd;

/* ctx: the queue's "has news" flag; the consumer drains flagged queues. */
static void bench_notify(void *ctx)
{
	__u64 one = 1;

	atomic_store((atomic_int *)ctx, 1);
	if (write(bench_evfd, &one, sizeof(one)) < 0)
		return;
}

static int watch_fd(int fd)
{
	int ep = epoll_create1(0);
	struct epoll_event e = { .events = EPOLLIN };

	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
	return ep;
}

static void wait_ep(int ep)
{
	struct epoll_event e;

	epoll_wait(ep, &e, 1, 2000);
}

static struct run run_bare(__u64 period_ns, unsigned int samples)
{
	int tfd = timerfd_create(CLOCK_MONOTONIC, 0);
	__u64 *lat = calloc(samples, sizeof(*lat)), t0 = bench_now_ns() + period_ns, ticks;
	struct itimerspec its = {
		.it_value = { (time_t)(t0 / 1000000000u), (long)(t0 % 1000000000u) },
		.it_interval = { (time_t)(period_ns / 1000000000u), (long)(period_ns % 1000000000u) },
	};
	struct run r;
	unsigned int n = 0;
	int ep = watch_fd(tfd);

	timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
	while (n < samples) {
		wait_ep(ep);
		if (read(tfd, &ticks, sizeof(ticks)) != sizeof(ticks))
			break;
		lat[n++] = (bench_now_ns() - t0) % period_ns;
	}
	close(tfd);
	close(ep);
	r.p50 = bench_quantile(lat, n, 0.5);
	r.p99 = bench_quantile(lat, n, 0.99);
	free(lat);
	return r;
}

struct orun {
	unsigned int stride;	/* sample timers i % stride == 0 only */
	struct kcore *core;
	struct kqueue **q;
	atomic_int *news;	/* per queue: notified since last drained */
	unsigned int nq, ntimers;
	__u64 period_ns, *add_ns;
	struct ukevent *uk, *out;
};

/*
 * Timer i is added at t0 + i*P/N, one CTL each, its ADD time taken just
 * before: a batch would make the later entries' grids start after the
 * recorded time and show up as lateness.
 */
static void orun_add_spread(struct orun *o)
{
	__u64 t0 = bench_now_ns();
	unsigned int i = 0;

	while (i < o->ntimers) {
		__u64 now = bench_now_ns(), due = t0 + o->period_ns * i / o->ntimers;

		if (now < due) {
			if (due - now > 20000)
				usleep((useconds_t)((due - now) / 1000));
			continue;
		}
		o->uk[i] = (struct ukevent){
			.id.raw = { (__u32)(o->period_ns / 1000000u), 0 },
			.type = KEVENT_TIMER, .event = KEVENT_TIMER_FIRED,
		};
		o->uk[i].user[0] = i;
		o->add_ns[i] = bench_now_ns();
		if (bench_ctl(o->q[i / PER_Q], KEVENT_CTL_ADD, o->uk + i, 1) != 0)
			fprintf(stderr, "ADD failed\n");
		i++;
	}
}

/* One GET_EVENTS on queue i; samples what it got.  Returns how many. */
static int orun_take(struct orun *o, unsigned int i, __u64 *lat, unsigned int *n,
		     unsigned int samples, __u64 sample_from)
{
	int got = bench_get(o->q[i], 0, KEVENT_MAX_EVENTS - 1, 0, o->out), j;
	__u64 now = bench_now_ns();

	for (j = 0; j < got; j++) {
		__u32 t = o->out[j].user[0];

		if (now >= sample_from && *n < samples && t % o->stride == 0)
			lat[(*n)++] = (now - o->add_ns[t]) % o->period_ns;
	}
	return got;
}

/*
 * Drains the queues that were notified.  The notify is an edge (ready list
 * empty -> not empty), and a GET_EVENTS may leave kevents that came in while
 * it ran, so each is drained until a GET_EVENTS returns none.
 */
static unsigned int orun_drain(struct orun *o, __u64 *lat, unsigned int n, unsigned int samples,
			       __u64 sample_from)
{
	unsigned int i;

	for (i = 0; i < o->nq; i++) {
		if (!atomic_exchange(&o->news[i], 0))
			continue;
		while (orun_take(o, i, lat, &n, samples, sample_from) > 0)
			;
	}
	return n;
}

static struct run run_origins(unsigned int ntimers, __u64 period_ns, unsigned int samples)
{
	struct kcore_config cfg = { .backend = KEVENT_BACKEND_CORE };
	struct kcaller me = bench_self();
	struct orun o = { .ntimers = ntimers, .period_ns = period_ns };
	__u64 *lat = calloc(samples, sizeof(*lat)), sample_from, ev;
	unsigned int i, n = 0;
	struct run r;
	int ep;

	/* Samples spread over at least 3 periods and over all phases. */
	o.stride = ntimers * 3 / samples ? ntimers * 3 / samples : 1;
	o.nq = (ntimers + PER_Q - 1) / PER_Q;
	o.q = calloc(o.nq, sizeof(*o.q));
	o.news = calloc(o.nq, sizeof(*o.news));
	o.add_ns = calloc(ntimers, sizeof(*o.add_ns));
	o.uk = calloc(ntimers, sizeof(*o.uk));
	o.out = calloc(KEVENT_MAX_EVENTS, sizeof(*o.out));
	bench_evfd = eventfd(0, EFD_NONBLOCK);
	ep = watch_fd(bench_evfd);
	kcore_new(&cfg, &o.core);
	for (i = 0; i < o.nq; i++) {
		kqueue_open(o.core, &me, NULL, &o.q[i]);
		kqueue_set_notify(o.q[i], bench_notify, &o.news[i]);
	}
	orun_add_spread(&o);
	sample_from = bench_now_ns() + period_ns;	/* all phases running */
	while (n < samples) {
		wait_ep(ep);
		if (read(bench_evfd, &ev, sizeof(ev)) < 0 && errno != EAGAIN)
			break;
		n = orun_drain(&o, lat, n, samples, sample_from);
	}
	for (i = 0; i < o.nq; i++)
		kqueue_release(o.q[i]);
	kcore_free(o.core);
	close(bench_evfd);
	close(ep);
	r.p50 = bench_quantile(lat, n, 0.5);
	r.p99 = bench_quantile(lat, n, 0.99);
	free(lat);
	free(o.q);
	free(o.news);
	free(o.add_ns);
	free(o.uk);
	free(o.out);
	return r;
}

static __u64 median_of(struct run *r, unsigned int n, int p99)
{
	__u64 v[16];
	unsigned int i;

	for (i = 0; i < n; i++)
		v[i] = p99 ? r[i].p99 : r[i].p50;
	return bench_quantile(v, n, 0.5);
}

int main(int argc, char **argv)
{
	static const struct { unsigned int n; __u64 period_ms; } cases[] = {
		{ 1, 10 }, { 1000, 10 }, { 10000, 10 }, { 100000, 1000 },
	};
	unsigned int runs = argc > 1 ? (unsigned int)atoi(argv[1]) : 5;
	unsigned int samples = argc > 2 ? (unsigned int)atoi(argv[2]) : 2000;
	unsigned int max_timers = argc > 3 ? (unsigned int)atoi(argv[3]) : 100000;
	unsigned int min_timers = argc > 4 ? (unsigned int)atoi(argv[4]) : 0;
	struct korigins_config ocfg = { 0 };
	size_t c;
	int err;

	if (runs < 1 || runs > 16)
		runs = 5;
	bench_me = bench_self();
	err = korigins_start(&ocfg);
	if (err) {
		fprintf(stderr, "korigins_start: %s\n", strerror(-err));
		return 1;
	}
	printf("# timer lateness, median of %u interleaved runs, %u samples each (us)\n",
	       runs, samples);
	printf("%-8s %-7s %9s %9s %9s %9s %7s\n", "timers", "period", "org p50", "org p99",
	       "fd p50", "fd p99", "p99 x");
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct run org[16], bare[16];
		__u64 period_ns = cases[c].period_ms * 1000000u, op99, bp99;
		unsigned int i;

		if (cases[c].n > max_timers || cases[c].n < min_timers)
			continue;
		for (i = 0; i < runs; i++) {
			bare[i] = run_bare(10000000u, samples < 500 ? samples : 500);
			org[i] = run_origins(cases[c].n, period_ns, samples);
		}
		op99 = median_of(org, runs, 1);
		bp99 = median_of(bare, runs, 1);
		printf("%-8u %4llums %9.1f %9.1f %9.1f %9.1f %7.2f\n", cases[c].n,
		       (unsigned long long)cases[c].period_ms,
		       median_of(org, runs, 0) / 1e3, op99 / 1e3,
		       median_of(bare, runs, 0) / 1e3, bp99 / 1e3,
		       bp99 ? (double)op99 / (double)bp99 : 0.0);
		fflush(stdout);
	}
	korigins_stop();
	return 0;
}
