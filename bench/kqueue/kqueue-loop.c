// SPDX-License-Identifier: GPL-2.0
/*
 * A kqueue event loop on 2,000 AF_UNIX socket pairs through libkqueue-kevent,
 * next to the same loop on libkevent directly (poll kevents on the same
 * device) and on epoll (EPOLLET), same run, interleaved.  Producer: one
 * writer thread writing one byte to a random pair as fast as it can.
 * Consumer: one thread taking readiness in batches of 1,024 and reading
 * each ready socket empty.  Figure: events delivered to the consumer per
 * second; the ratios say what the front costs over raw libkevent on the
 * same backend, and both over epoll.
 *
 * Usage: bench-kqueue-loop [runs [seconds]]   (device: $KEVENT_DEVICE)
 * Exit 77 without the device.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/event.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libkevent.h>
#include "../pairs.h"

#define PAIRS 2000
#define BATCH 1024

static int sv[PAIRS][2];
static atomic_int stop;

static void *writer(void *arg)
{
	unsigned int x = BENCH_XORSHIFT_SEED;

	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		if (write(sv[bench_next_pair(&x, PAIRS)][1], "x", 1) < 0 && errno != EAGAIN)
			break;
	return NULL;
}

static double now(void)
{
	return bench_clock_s(CLOCK_MONOTONIC);
}

static void drain_all(void)
{
	for (int i = 0; i < PAIRS; i++)
		bench_drain(sv[i][0]);
}

/* One loop: wait() returns how many events it handled (draining each). */
static double run(int (*wait)(void *), void *ctx, double seconds)
{
	pthread_t th;
	unsigned long events = 0;
	double t0, t;

	drain_all();
	atomic_store(&stop, 0);
	pthread_create(&th, NULL, writer, NULL);
	t0 = now();
	do {
		int n = wait(ctx);

		if (n < 0) {
			perror("wait");
			exit(1);
		}
		events += (unsigned long)n;
		t = now();
	} while (t - t0 < seconds);
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	return (double)events / (t - t0);
}

static int epoll_wait_once(void *ctx)
{
	static struct epoll_event ev[BATCH];
	int n = epoll_wait(*(int *)ctx, ev, BATCH, 100);

	for (int i = 0; i < n; i++)
		bench_drain(ev[i].data.fd);
	return n;
}

static int kevent_wait_once(void *ctx)
{
	static struct ukevent uk[BATCH];
	int n = kevent_get_events(*(int *)ctx, 1, BATCH, 100000000ull, uk, 0);

	for (int i = 0; i < n; i++)
		bench_drain((int)uk[i].id.raw[0]);
	return n;
}

static int kqueue_wait_once(void *ctx)
{
	static struct kevent ev[BATCH];
	struct timespec ts = { 0, 100000000 };
	int n = kevent(*(int *)ctx, NULL, 0, ev, BATCH, &ts);

	for (int i = 0; i < n; i++)
		bench_drain((int)ev[i].ident);
	return n;
}

static int setup_kevent(const char *dev)
{
	int kfd = open(dev, O_RDWR | O_CLOEXEC);

	for (int i = 0; kfd >= 0 && i < PAIRS; i++) {
		struct ukevent uk;

		memset(&uk, 0, sizeof(uk));
		uk.id.raw[0] = (__u32)sv[i][0];
		uk.type = KEVENT_POLL;
		uk.event = KEVENT_POLL_POLLIN;
		int r;

		/* EAGAIN: the daemon is still releasing the last queue (D18 caps). */
		while ((r = kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &uk)) < 0 && errno == EAGAIN)
			usleep(1000);
		while (r == 1 && !(uk.ret_flags & KEVENT_RET_BROKEN)) {
			bench_drain(sv[i][0]);	/* ready at ADD (D31): not registered yet */
			uk.ret_flags = 0;
			r = kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &uk);
		}
		if (r != 0) {
			fprintf(stderr, "kevent_ctl ADD %d: %s\n", i, strerror(errno));
			exit(1);
		}
	}
	return kfd;
}

static int setup_kqueue(unsigned short flags)
{
	int kq = kqueue();

	for (int i = 0; kq >= 0 && i < PAIRS; i++) {
		struct kevent c;

		int r;

		EV_SET(&c, sv[i][0], EVFILT_READ, EV_ADD | flags, 0, 0, NULL);
		while ((r = kevent(kq, &c, 1, NULL, 0, NULL)) < 0 && errno == EAGAIN)
			usleep(1000);
		if (r < 0) {
			perror("kevent EV_ADD");
			exit(1);
		}
	}
	return kq;
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 3;
	double seconds = argc > 2 ? atof(argv[2]) : 1.0;
	const char *dev = bench_device();
	double sum[4] = { 0 };
	int ep, kfd, kq_level, kq_clear;

	if (access(dev, R_OK | W_OK) != 0) {
		printf("1..0 # SKIP no %s (KEVENT_DEVICE)\n", dev);
		return 77;
	}
	if (bench_open_pairs(sv, PAIRS, "bench-kqueue-loop"))
		return 1;
	ep = epoll_create1(EPOLL_CLOEXEC);
	for (int i = 0; i < PAIRS; i++) {
		struct epoll_event e = { .events = EPOLLIN | EPOLLET, .data.fd = sv[i][0] };

		epoll_ctl(ep, EPOLL_CTL_ADD, sv[i][0], &e);
	}
	for (int r = 0; r < runs; r++) {
		/* One device queue at a time: the daemon serves only the one measured. */
		double e = run(epoll_wait_once, &ep, seconds), k, q, l;

		kfd = setup_kevent(dev);
		k = run(kevent_wait_once, &kfd, seconds);
		close(kfd);
		usleep(300000);	/* the daemon releases 2,000 duplicates: not timed */
		kq_clear = setup_kqueue(EV_CLEAR);
		q = run(kqueue_wait_once, &kq_clear, seconds);
		close(kq_clear);
		usleep(300000);
		kq_level = setup_kqueue(0);
		l = run(kqueue_wait_once, &kq_level, seconds);
		close(kq_level);
		usleep(300000);
		if (kfd < 0 || kq_clear < 0 || kq_level < 0) {
			perror("device");
			return 1;
		}

		printf("run %d: epoll %.0f/s  libkevent %.0f/s  kqueue EV_CLEAR %.0f/s  kqueue level %.0f/s\n",
		       r + 1, e, k, q, l);
		sum[0] += e;
		sum[1] += k;
		sum[2] += q;
		sum[3] += l;
	}
	printf("mean events/s: epoll %.0f, libkevent %.0f, kqueue EV_CLEAR %.0f, kqueue level %.0f\n",
	       sum[0] / runs, sum[1] / runs, sum[2] / runs, sum[3] / runs);
	printf("ratio kqueue EV_CLEAR / libkevent: %.3f; kqueue level / libkevent: %.3f\n",
	       sum[2] / sum[1], sum[3] / sum[1]);
	printf("ratio libkevent / epoll: %.3f; kqueue EV_CLEAR / epoll: %.3f\n",
	       sum[1] / sum[0], sum[2] / sum[0]);
	return 0;
}
