// SPDX-License-Identifier: GPL-2.0
/*
 * bench-epoll2006: the 2006 epoll_bench comparison on any /dev/kevent.
 * N connected AF_UNIX stream pairs; one writer thread writes one byte to a
 * pair chosen at random, as fast as it can; the reader takes readiness in
 * batches and reads each ready socket empty.  Figure: events delivered to
 * the reader per second.  Readers, interleaved within one run:
 *   epoll LT    epoll_wait, level-triggered
 *   epoll ET    epoll_wait, EPOLLET
 *   kevent      KEVENT_SOCKET/RECV kevents (KEVENT_POLL/POLLIN where the
 *               backend has no socket origin) taken by kevent_get_events
 * The device is $KEVENT_DEVICE (default /dev/kevent); its backend is
 * printed from INFO.  Ratios are kevent over each epoll reader, medians of
 * the interleaved runs; ns/event at each N over ns/event at the smallest N
 * shows whether the cost per event stays flat.
 *
 * The 2006 thread's figures (its machine, kevent take13-era): kevent 59,794
 * events/s, epoll LT 57,428, epoll ET 78,265.  Printed for reference only.
 *
 * Usage: bench-epoll2006 [runs [seconds [N...]]]   (default 5 1.0 100 1000 2000 4000)
 * Output lines "row <backend> <N> <lt> <et> <kevent>" (events/s) are what
 * scripts/bench collects.  Exit 0 when it measured, 77 without a device.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libkevent.h>
#include "../stats.h"

#define MAX_N	4000
#define MAX_RUNS 16
#define BATCH	(KEVENT_MAX_EVENTS - 1)

static int sv[MAX_N][2];
static int npairs;
static atomic_int stop;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *writer(void *arg)
{
	unsigned int x = 2463534242u;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		if (write(sv[x % (unsigned int)npairs][1], "x", 1) < 0 && errno != EAGAIN)
			break;
	}
	return NULL;
}

static void drain(int fd)
{
	char buf[256];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
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
	for (int i = 0; i < npairs; i++)
		drain(sv[i][0]);
}

static double run_epoll(double seconds, int et)
{
	static struct epoll_event evs[BATCH];
	int ep = epoll_create1(EPOLL_CLOEXEC), n;
	unsigned long long events = 0;
	double t0, end;
	pthread_t th;

	for (int i = 0; i < npairs; i++) {
		struct epoll_event e = { .events = EPOLLIN | (et ? EPOLLET : 0),
					 .data.u32 = (unsigned int)i };

		epoll_ctl(ep, EPOLL_CTL_ADD, sv[i][0], &e);
	}
	start_writer(&th);
	t0 = now_s();
	end = t0 + seconds;
	while (now_s() < end) {
		n = epoll_wait(ep, evs, BATCH, 100);
		for (int i = 0; i < n; i++)
			drain(sv[evs[i].data.u32][0]);
		events += n > 0 ? (unsigned long long)n : 0;
	}
	end = now_s();
	stop_writer(th);
	close(ep);
	return (double)events / (end - t0);
}

/* A fresh queue per run (as epoll gets a fresh epoll fd): ADD all, drain, close. */
static double run_kevent(const char *dev, double seconds, __u32 type)
{
	static struct ukevent uk[MAX_N], out[BATCH];
	unsigned long long events = 0;
	int fd = open(dev, O_RDWR | O_CLOEXEC), n;
	double t0, end;
	pthread_t th;

	if (fd < 0)
		return -errno;
	for (int i = 0; i < npairs; i++) {
		memset(&uk[i], 0, sizeof(uk[i]));
		uk[i].type = type;
		uk[i].event = type == KEVENT_SOCKET ? KEVENT_SOCKET_RECV : KEVENT_POLL_POLLIN;
		uk[i].id.raw[0] = (__u32)sv[i][0];
		uk[i].user[0] = (__u32)i;
	}
	if (kevent_ctl(fd, KEVENT_CTL_ADD, (unsigned int)npairs, uk) < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	start_writer(&th);
	t0 = now_s();
	end = t0 + seconds;
	while (now_s() < end) {
		n = kevent_get_events(fd, 1, BATCH, 100000000ull, out, 0);
		for (int i = 0; i < n; i++)
			drain(sv[out[i].user[0]][0]);
		events += n > 0 ? (unsigned long long)n : 0;
	}
	end = now_s();
	stop_writer(th);
	close(fd);
	return (double)events / (end - t0);
}

static const char *backend_name(__u32 b)
{
	switch (b) {
	case KEVENT_BACKEND_CUSE: return "cuse";
	case KEVENT_BACKEND_MODULE: return "module";
	case KEVENT_BACKEND_FUSE: return "fuse";
	case KEVENT_BACKEND_CORE: return "core";
	default: return "unknown";
	}
}

/* Does this backend take a SOCKET kevent on an AF_UNIX socket? */
static __u32 pick_type(const char *dev)
{
	struct ukevent uk = { .type = KEVENT_SOCKET, .event = KEVENT_SOCKET_RECV };
	int fd = open(dev, O_RDWR | O_CLOEXEC), ok;

	uk.id.raw[0] = (__u32)sv[0][0];
	ok = fd >= 0 && kevent_ctl(fd, KEVENT_CTL_ADD, 1, &uk) == 0 &&
	     !(uk.ret_flags & KEVENT_RET_BROKEN);
	if (fd >= 0)
		close(fd);
	return ok ? KEVENT_SOCKET : KEVENT_POLL;
}

static int measure(const char *dev, const char *be, int n, int runs, double seconds, double *base)
{
	double lt[MAX_RUNS], et[MAX_RUNS], kv[MAX_RUNS], mlt, met, mkv;
	__u32 type;

	npairs = n;
	type = pick_type(dev);
	for (int r = 0; r < runs; r++) {
		lt[r] = run_epoll(seconds, 0);
		et[r] = run_epoll(seconds, 1);
		kv[r] = run_kevent(dev, seconds, type);
		if (kv[r] < 0) {
			fprintf(stderr, "bench-epoll2006: kevent at N=%d: %s\n", n, strerror((int)-kv[r]));
			return 1;
		}
	}
	mlt = bench_median(lt, runs), met = bench_median(et, runs), mkv = bench_median(kv, runs);
	if (*base == 0)
		*base = 1e9 / mkv;
	printf("N=%-5d %-6s epoll LT %9.0f  ET %9.0f  kevent %9.0f (%s)  kevent/LT %.2f  kevent/ET %.2f  ns/event %.0f (%.2fx smallest N)\n",
	       n, be, mlt, met, mkv, type == KEVENT_SOCKET ? "socket" : "poll", mkv / mlt, mkv / met,
	       1e9 / mkv, 1e9 / mkv / *base);
	printf("row %s %d %.0f %.0f %.0f\n", be, n, mlt, met, mkv);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	const char *dev = getenv("KEVENT_DEVICE") ? getenv("KEVENT_DEVICE") : KEVENT_DEVICE_DEFAULT;
	int runs = argc > 1 ? atoi(argv[1]) : 5, ns[8] = { 100, 1000, 2000, 4000 }, nn = 4;
	double seconds = argc > 2 ? atof(argv[2]) : 1.0, base = 0;
	struct rlimit rl = { 2 * MAX_N + 64, 2 * MAX_N + 64 };
	struct kevent_info info;
	int fd;

	if (argc > 3) {
		nn = 0;
		for (int i = 3; i < argc && nn < 8; i++)
			ns[nn++] = atoi(argv[i]);
	}
	if (runs < 1 || runs > MAX_RUNS)
		runs = 5;
	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0 || kevent_info(fd, &info)) {
		printf("bench-epoll2006: no kevent device at %s: %s: skip\n", dev, strerror(errno));
		return 77;
	}
	close(fd);
	if (setrlimit(RLIMIT_NOFILE, &rl))
		perror("bench-epoll2006: RLIMIT_NOFILE");
	for (int i = 0; i < MAX_N; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv[i]) < 0) {
			perror("socketpair");
			return 1;
		}
	}
	printf("# 2006 epoll_bench shape on %s (%s): AF_UNIX pairs, one random writer, %d interleaved runs of %.1f s per reader\n",
	       dev, backend_name(info.backend), runs, seconds);
	printf("# 2006 reference (not this machine): kevent 59794, epoll LT 57428, epoll ET 78265 events/s\n");
	for (int i = 0; i < nn; i++) {
		if (ns[i] < 1 || ns[i] > MAX_N)
			continue;
		if (measure(dev, backend_name(info.backend), ns[i], runs, seconds, &base))
			return 1;
	}
	return 0;
}
