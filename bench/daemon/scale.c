// SPDX-License-Identifier: GPL-2.0
/*
 * bench-daemon-scale: the daemon at scale, through any /dev/kevent served
 * by kevent-cuse ($KEVENT_DEVICE; scripts/bench runs it on fuse natively,
 * with $KEVENT_BENCH_DAEMON_PID naming the daemon whose RSS it reads).
 *  1. 1,000 queues x 1,000 timer kevents (one hour, never due): the
 *     daemon's RSS growth per kevent, ADD per kevent (batches of 1,000);
 *  2. 1,000 blocked waiters, one thread each in GET_EVENTS on its own
 *     queue: the daemon's RSS growth per parked call, and the time from
 *     making one kevent ready on every queue until every waiter returned;
 *  3. REMOVE per kevent (batches of 1,000), then a second fill and the
 *     teardown: close() of the 1,000 queues until the daemon's INFO shows
 *     them gone.
 * No target: scale figures for the report.  The caps must allow it
 * (--max-kevents, --max-timers, --max-queues, --max-parked: scripts/bench
 * passes 0, no cap).  Exit 0 when it measured, 77 without a device.
 *
 * Usage: bench-daemon-scale [queues [per_queue]]   (default 1000 1000)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <libkevent.h>

static const char *dev;
static int nq = 1000, per_q = 1000;
static int *fds;
static struct ukevent *arr;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "bench-daemon-scale: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The daemon's VmRSS in KiB, or -1 without its pid. */
static long daemon_rss_kib(void)
{
	const char *pid = getenv("KEVENT_BENCH_DAEMON_PID");
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	if (!pid)
		return -1;
	snprintf(path, sizeof(path), "/proc/%s/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static void fill_arr(int q, __u32 cookie_base)
{
	for (int i = 0; i < per_q; i++) {
		memset(&arr[i], 0, sizeof(arr[i]));
		arr[i].type = KEVENT_TIMER;
		arr[i].event = KEVENT_TIMER_FIRED;
		arr[i].id.raw[0] = 3600000;
		arr[i].user[0] = (__u32)q;
		arr[i].user[1] = cookie_base + (__u32)i;
	}
}

/* Open the queues and ADD per_q timers to each; seconds per kevent. */
static double fill_all(void)
{
	double t = 0, t0;

	for (int q = 0; q < nq; q++) {
		fds[q] = open(dev, O_RDWR | O_CLOEXEC);
		if (fds[q] < 0)
			die("open");
		fill_arr(q, 0);
		t0 = now_s();
		if (kevent_ctl(fds[q], KEVENT_CTL_ADD, (unsigned int)per_q, arr))
			die("ADD");
		t += now_s() - t0;
	}
	return t / ((double)nq * per_q);
}

static double remove_all(void)
{
	double t = 0, t0;

	for (int q = 0; q < nq; q++) {
		fill_arr(q, 0);
		t0 = now_s();
		if (kevent_ctl(fds[q], KEVENT_CTL_REMOVE, (unsigned int)per_q, arr))
			die("REMOVE");
		t += now_s() - t0;
	}
	return t / ((double)nq * per_q);
}

static __u64 live_queues(void)
{
	struct kevent_info info;
	int fd = open(dev, O_RDWR | O_CLOEXEC);

	if (fd < 0 || kevent_info(fd, &info))
		die("INFO");
	close(fd);
	return info.live_queues - 1;	/* not this probe */
}

static void *waiter(void *arg)
{
	struct ukevent out;
	int fd = *(int *)arg;

	if (kevent_get_events(fd, 1, 1, KEVENT_TIMEOUT_INFINITE, &out, 0) != 1)
		fprintf(stderr, "bench-daemon-scale: a waiter returned without its event\n");
	return NULL;
}

static __u32 parked(void)
{
	struct kevent_info info;

	if (kevent_info(fds[0], &info))
		die("INFO");
	return info.limits[KEVENT_LIMIT_PARKED].used;
}

/* 1,000 threads parked in GET_EVENTS; RSS per parked call and wake time. */
static void waiters(long *rss_kib, double *wake_s)
{
	pthread_t *th = calloc((size_t)nq, sizeof(*th));
	pthread_attr_t at;
	long before = daemon_rss_kib();
	double t0;

	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	for (int q = 0; q < nq; q++)
		if (pthread_create(&th[q], &at, waiter, &fds[q]))
			die("pthread_create");
	for (int i = 0; i < 5000 && parked() < (__u32)nq; i++)
		usleep(1000);
	*rss_kib = daemon_rss_kib() - before;
	t0 = now_s();
	for (int q = 0; q < nq; q++) {
		struct ukevent uk = { .type = KEVENT_TIMER, .event = KEVENT_TIMER_FIRED,
				      .req_flags = KEVENT_REQ_ONESHOT };

		uk.id.raw[0] = 1;
		uk.user[1] = 0xfffffff0u;
		if (kevent_ctl(fds[q], KEVENT_CTL_ADD, 1, &uk))
			die("ADD of the wake timer");
	}
	for (int q = 0; q < nq; q++)
		pthread_join(th[q], NULL);
	*wake_s = now_s() - t0;
	free(th);
}

int main(int argc, char **argv)
{
	struct rlimit rl = { 4096, 4096 };
	long rss0, rss1, wrss;
	double add, rem, wake, t0, teardown;

	dev = getenv("KEVENT_DEVICE") ? getenv("KEVENT_DEVICE") : KEVENT_DEVICE_DEFAULT;
	if (argc > 1)
		nq = atoi(argv[1]);
	if (argc > 2)
		per_q = atoi(argv[2]);
	if (nq < 1 || nq > 2000 || per_q < 1 || per_q > KEVENT_MAX_EVENTS - 2)
		return fprintf(stderr, "usage: %s [queues<=2000 [per_queue<=4094]]\n", argv[0]), 1;
	if (access(dev, F_OK))
		return printf("bench-daemon-scale: no %s: skip\n", dev), 77;
	setrlimit(RLIMIT_NOFILE, &rl);
	fds = calloc((size_t)nq, sizeof(*fds));
	arr = calloc((size_t)per_q, sizeof(*arr));
	rss0 = daemon_rss_kib();
	add = fill_all();
	rss1 = daemon_rss_kib();
	printf("# daemon: %d queues x %d kevents: ADD %.0f ns per kevent (batches of %d)", nq, per_q,
	       add * 1e9, per_q);
	if (rss0 >= 0)
		printf("; daemon RSS %ld -> %ld KiB, %.1f bytes per kevent", rss0, rss1,
		       (double)(rss1 - rss0) * 1024 / ((double)nq * per_q));
	printf("\n");
	waiters(&wrss, &wake);
	printf("# daemon: %d blocked waiters (one per queue): RSS +%ld KiB (%.0f bytes per parked call); "
	       "all woken %.1f ms after the first wake ADD\n", nq, wrss, (double)wrss * 1024 / nq,
	       wake * 1e3);
	rem = remove_all();
	printf("# daemon: REMOVE %.0f ns per kevent (batches of %d)\n", rem * 1e9, per_q);
	for (int q = 0; q < nq; q++) {
		fill_arr(q, 0);
		if (kevent_ctl(fds[q], KEVENT_CTL_ADD, (unsigned int)per_q, arr))
			die("ADD (refill)");
	}
	t0 = now_s();
	for (int q = 0; q < nq; q++)
		close(fds[q]);
	while (live_queues() > 0 && now_s() - t0 < 60)
		usleep(1000);
	teardown = now_s() - t0;
	printf("# daemon: teardown of %d queues x %d kevents (close until INFO shows none): %.1f ms "
	       "(%.0f ns per kevent); daemon RSS after %ld KiB\n", nq, per_q, teardown * 1e3,
	       teardown * 1e9 / ((double)nq * per_q), daemon_rss_kib());
	return 0;
}
