// SPDX-License-Identifier: GPL-2.0
/*
 * Readiness events/s of the SOCKET origin (core + origins in process) next
 * to plain epoll (EPOLLET), same run, interleaved: the 2006 epoll_bench
 * shape.  Producer: 2,000 AF_UNIX socket pairs and one writer thread that
 * writes one byte to a random pair, as fast as it can.  Consumer: one
 * thread that takes readiness in batches (GET_EVENTS at batch 4095, or
 * epoll_wait at 4095) and reads each ready socket empty.  Figure: events
 * delivered to the consumer per second; ratio = origins / epoll.  Second
 * figure, steadier on a loaded machine: the receiving side's CPU per event
 * (the process's CPU less the writer thread's), ratio = epoll / origins.
 *
 * Usage: bench-origins-sockets [runs [seconds]]
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "common.h"
#include "../stats.h"

#define PAIRS 2000
#define BATCH (KEVENT_MAX_EVENTS - 1)

static int sv[PAIRS][2];
static atomic_int stop;
static double writer_cpu;	/* s of CPU the writer thread used, set as it ends */

static double cpu_s(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* One run: events/s, and the CPU the receiving side spent per event. */
struct rate {
	double per_s, cpu_ns;
};

static void *writer(void *arg)
{
	__u32 x = 2463534242u;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		if (write(sv[x % PAIRS][1], "x", 1) < 0 && errno != EAGAIN)
			break;
	}
	writer_cpu = cpu_s(RUSAGE_THREAD);
	return NULL;
}

static void drain(int fd)
{
	char buf[256];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

/*
 * The receiving side's CPU per event: the process's CPU since c0 minus the
 * writer's (it spins for the whole run whatever the reader does), taken
 * after the writer is joined and before the drain.  Less sensitive to
 * other load on the machine than events/s, which counts only what the
 * scheduler let the reader do.
 */
static struct rate rate_of(__u64 events, __u64 ns, double c0)
{
	struct rate r = { (double)events / ((double)ns / 1e9), 0 };

	if (events)
		r.cpu_ns = (cpu_s(RUSAGE_SELF) - c0 - writer_cpu) * 1e9 / (double)events;
	return r;
}

static void start_writer(pthread_t *th)
{
	atomic_store(&stop, 0);
	pthread_create(th, NULL, writer, NULL);
}

static void stop_writer(pthread_t th)
{
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
}

/* Between runs: what the writer left, read away. */
static void drain_all(void)
{
	int i;

	for (i = 0; i < PAIRS; i++)
		drain(sv[i][0]);
}

static struct rate run_epoll(double seconds)
{
	static struct epoll_event evs[BATCH];
	int ep = epoll_create1(0), i, n;
	__u64 events = 0, t0, end;
	pthread_t th;

	for (i = 0; i < PAIRS; i++) {
		struct epoll_event e = { .events = EPOLLIN | EPOLLET, .data.u32 = (__u32)i };

		epoll_ctl(ep, EPOLL_CTL_ADD, sv[i][0], &e);
	}
	double c0 = cpu_s(RUSAGE_SELF);

	start_writer(&th);
	t0 = bench_now_ns();
	end = t0 + (__u64)(seconds * 1e9);
	while (bench_now_ns() < end) {
		n = epoll_wait(ep, evs, BATCH, 100);
		for (i = 0; i < n; i++)
			drain(sv[evs[i].data.u32][0]);
		events += n > 0 ? (__u64)n : 0;
	}
	end = bench_now_ns();
	stop_writer(th);
	{
		struct rate r = rate_of(events, end - t0, c0);

		close(ep);
		drain_all();
		return r;
	}
}

static struct rate run_origins(double seconds)
{
	static struct ukevent uk[PAIRS], out[BATCH];
	struct kcore_config cfg = { .backend = KEVENT_BACKEND_CORE };
	struct kcaller me = bench_self();
	struct kcore *core;
	struct kqueue *q;
	__u64 events = 0, t0, end;
	pthread_t th;
	int i, n;

	kcore_new(&cfg, &core);
	kqueue_open(core, &me, NULL, &q);
	for (i = 0; i < PAIRS; i++) {
		uk[i] = (struct ukevent){ .id.raw = { (__u32)sv[i][0], 0 },
					  .type = KEVENT_SOCKET, .event = KEVENT_SOCKET_RECV };
		uk[i].user[0] = (__u32)i;
	}
	if (bench_ctl(q, KEVENT_CTL_ADD, uk, PAIRS) != 0)
		fprintf(stderr, "ADD failed or ready at ADD\n");
	double c0 = cpu_s(RUSAGE_SELF);

	start_writer(&th);
	t0 = bench_now_ns();
	end = t0 + (__u64)(seconds * 1e9);
	while (bench_now_ns() < end) {
		n = bench_get(q, 1, BATCH, 100000000ull, out);
		for (i = 0; i < n; i++)
			drain(sv[out[i].user[0]][0]);
		events += n > 0 ? (__u64)n : 0;
	}
	end = bench_now_ns();
	stop_writer(th);
	{
		struct rate r = rate_of(events, end - t0, c0);

		kqueue_release(q);
		kcore_free(core);
		korigins_sync_closer();
		drain_all();
		return r;
	}
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 5, i;
	double seconds = argc > 2 ? atof(argv[2]) : 2.0, ep[16], org[16], epc[16], orgc[16];
	struct korigins_config ocfg = { 0 };

	if (runs < 1 || runs > 16)
		runs = 5;
	bench_me = bench_self();
	for (i = 0; i < PAIRS; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv[i]) < 0) {
			perror("socketpair");
			return 1;
		}
	}
	if (korigins_start(&ocfg) < 0)
		return 1;
	for (i = 0; i < runs; i++) {
		struct rate e = run_epoll(seconds), o = run_origins(seconds);

		ep[i] = e.per_s, epc[i] = e.cpu_ns;
		org[i] = o.per_s, orgc[i] = o.cpu_ns;
	}
	printf("# %d AF_UNIX pairs, one random writer, %d interleaved runs of %.1f s\n",
	       PAIRS, runs, seconds);
	printf("epoll ET events/s   %10.0f (median)\n", bench_median(ep, runs));
	printf("origins events/s    %10.0f (median)\n", bench_median(org, runs));
	printf("ratio origins/epoll %10.2f\n", bench_median(org, runs) / bench_median(ep, runs));
	printf("# CPU of the receiving side per event (process minus the writer thread)\n");
	printf("epoll ET cpu ns/event   %8.0f (median)\n", bench_median(epc, runs));
	printf("origins cpu ns/event    %8.0f (median)\n", bench_median(orgc, runs));
	printf("cpu ratio epoll/origins %8.2f\n", bench_median(epc, runs) / bench_median(orgc, runs));
	korigins_stop();
	return 0;
}
