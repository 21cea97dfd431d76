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
 * Baseline (like for like): as many bare CLOCK_MONOTONIC timerfds, same
 * period, phases spread the same way, all on one epoll, read by one thread
 * in batches and sampled with the same stride.  The core's per-uid expiry
 * budget (D18) is set to twice the offered rate (at least the default
 * 100,000/s) and printed, so no expiry is merged by the budget.
 *
 * Output: per case the median over the runs of p50 and p99 (µs) of both,
 * and the ratio of the p99s (target: <= 2); then "cdf" lines, the quantiles
 * of the last run of each, for the report's plot.
 *
 * Usage: bench-origins-timer [runs [samples [max_timers [min_timers]]]]
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/timerfd.h>

#include "common.h"

#define PER_Q 4000

struct run {
	__u64 p50, p99;
	unsigned int n;		/* samples, sorted in the caller's array */
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

/*
 * The like-for-like baseline: ntimers bare CLOCK_MONOTONIC timerfds of the
 * same period, phases spread evenly over one period, all on one epoll, read
 * by one consumer in batches; sampled with the same stride as the origin.
 */
static struct run run_bare(unsigned int ntimers, __u64 period_ns, unsigned int samples,
			   __u64 *lat)
{
	static struct epoll_event evs[KEVENT_MAX_EVENTS];
	unsigned int stride = ntimers * 3 / samples ? ntimers * 3 / samples : 1, n = 0, i;
	__u64 t0 = bench_now_ns() + period_ns, *first = calloc(ntimers, sizeof(*first));
	__u64 sample_from = t0 + period_ns, ticks;
	int *tfd = calloc(ntimers, sizeof(*tfd)), ep = epoll_create1(0), got, j;
	struct run r;

	for (i = 0; i < ntimers; i++) {
		__u64 t = t0 + period_ns * i / ntimers;
		struct itimerspec its = {
			.it_value = { (time_t)(t / 1000000000u), (long)(t % 1000000000u) },
			.it_interval = { (time_t)(period_ns / 1000000000u),
					 (long)(period_ns % 1000000000u) },
		};
		struct epoll_event e = { .events = EPOLLIN, .data.u32 = i };

		first[i] = t;
		tfd[i] = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
		if (tfd[i] < 0) {
			fprintf(stderr, "timerfd_create %u: %s\n", i, strerror(errno));
			exit(1);
		}
		epoll_ctl(ep, EPOLL_CTL_ADD, tfd[i], &e);
		timerfd_settime(tfd[i], TFD_TIMER_ABSTIME, &its, NULL);
	}
	while (n < samples) {
		got = epoll_wait(ep, evs, KEVENT_MAX_EVENTS, 2000);
		__u64 now = bench_now_ns();

		if (got <= 0)
			break;
		for (j = 0; j < got; j++) {
			i = evs[j].data.u32;
			if (read(tfd[i], &ticks, sizeof(ticks)) != sizeof(ticks))
				continue;
			if (now >= sample_from && n < samples && i % stride == 0)
				lat[n++] = (now - first[i]) % period_ns;
		}
	}
	for (i = 0; i < ntimers; i++)
		close(tfd[i]);
	close(ep);
	r.p50 = bench_quantile(lat, n, 0.5);
	r.p99 = bench_quantile(lat, n, 0.99);
	r.n = n;
	free(tfd);
	free(first);
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

static struct run run_origins(unsigned int ntimers, __u64 period_ns, unsigned int samples,
			      __u64 *lat, unsigned int budget)
{
	struct kcore_config cfg = { .backend = KEVENT_BACKEND_CORE };
	struct kcaller me = bench_self();
	struct orun o = { .ntimers = ntimers, .period_ns = period_ns };
	__u64 sample_from, ev;
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
	cfg.caps[KEVENT_LIMIT_EXPIRIES] = budget;
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
	r.n = n;
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

/* The lateness CDF of one run's sorted samples: "cdf <timers> <who> q..." (us). */
static void print_cdf(unsigned int ntimers, const char *who, const __u64 *lat, unsigned int n)
{
	static const double q[] = { 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8,
				    0.9, 0.95, 0.98, 0.99, 0.995, 0.999 };
	size_t i;

	printf("cdf %u %s", ntimers, who);
	for (i = 0; i < sizeof(q) / sizeof(q[0]); i++)
		printf(" %.3f:%.1f", q[i], n ? lat[(size_t)(q[i] * (n - 1))] / 1e3 : 0.0);
	printf("\n");
}

static void raise_nofile(unsigned int want)
{
	struct rlimit rl = { want, want };

	if (setrlimit(RLIMIT_NOFILE, &rl))
		fprintf(stderr, "# RLIMIT_NOFILE %u: %s (the baseline needs one fd per timer)\n",
			want, strerror(errno));
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
	__u64 *lat_o, *lat_b;
	size_t c;
	int err;

	if (runs < 1 || runs > 16)
		runs = 5;
	if (samples < 10)
		samples = 10;
	lat_o = calloc(samples, sizeof(*lat_o));
	lat_b = calloc(samples, sizeof(*lat_b));
	bench_me = bench_self();
	raise_nofile(max_timers + 64);
	err = korigins_start(&ocfg);
	if (err) {
		fprintf(stderr, "korigins_start: %s\n", strerror(-err));
		return 1;
	}
	printf("# timer lateness, median of %u interleaved runs, %u samples each (us);\n"
	       "# baseline: as many bare timerfds, same period and phases, on one epoll\n",
	       runs, samples);
	printf("%-8s %-7s %9s %9s %9s %9s %7s %11s %11s\n", "timers", "period", "org p50",
	       "org p99", "fd p50", "fd p99", "p99 x", "offered/s", "budget/s");
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct run org[16], bare[16];
		__u64 period_ns = cases[c].period_ms * 1000000u, op99, bp99;
		/* Per-uid expiry budget (D18) twice the offered rate: no merging. */
		unsigned int offered = (unsigned int)(cases[c].n * 1000u / cases[c].period_ms);
		unsigned int budget = 2 * offered > 100000 ? 2 * offered : 100000, i;

		if (cases[c].n > max_timers || cases[c].n < min_timers)
			continue;
		for (i = 0; i < runs; i++) {
			bare[i] = run_bare(cases[c].n, period_ns, samples, lat_b);
			org[i] = run_origins(cases[c].n, period_ns, samples, lat_o, budget);
		}
		op99 = median_of(org, runs, 1);
		bp99 = median_of(bare, runs, 1);
		printf("%-8u %4llums %9.1f %9.1f %9.1f %9.1f %7.2f %11u %11u\n", cases[c].n,
		       (unsigned long long)cases[c].period_ms,
		       median_of(org, runs, 0) / 1e3, op99 / 1e3,
		       median_of(bare, runs, 0) / 1e3, bp99 / 1e3,
		       bp99 ? (double)op99 / (double)bp99 : 0.0, offered, budget);
		print_cdf(cases[c].n, "origin", lat_o, org[runs - 1].n);
		print_cdf(cases[c].n, "timerfd", lat_b, bare[runs - 1].n);
		fflush(stdout);
	}
	korigins_stop();
	free(lat_o);
	free(lat_b);
	return 0;
}
