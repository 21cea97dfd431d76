// SPDX-License-Identifier: GPL-2.0
/*
 * bench-daemon-ioctl: the per-ioctl cost of kevent-cuse next to
 * noop-cuse, a CUSE server making the same transfers and nothing else
 * (process_vm_readv of the wrapper and the entry, process_vm_writev of the
 * GET_EVENTS result).  Measured in one run, interleaved: KEVENT_IOC_CTL with
 * one entry (an ADD of a timer and its REMOVE, each timed) and GET_EVENTS
 * taking one ready event (a poll kevent on a pipe, made ready and settled
 * before the timed call).  Within a round the kevent and noop calls
 * alternate one by one and a round's figure is its median call; prints the
 * medians over the rounds and their ratios, and the per-round scatter;
 * the client is pinned to one CPU.  Target: within 1.2x (the daemon is
 * transport-bound).
 *
 * Then the batch effect: 4095 one-shot 1 ms timers made ready at once and
 * drained by GET_EVENTS at batch 1, 64 and 4095, the three interleaved in
 * every round (events/s, median of the drain rounds, default 5; the ratio
 * to batch 1 is the median of the per-round ratios); target: batch 64
 * delivers at least 30x batch 1.
 *
 * Runs on the device it is given (KEVENT_DEVICE), on either front end of
 * the daemon: on CUSE (in the guest) next to noop-cuse, taken from the
 * directory of this program; on fuse (kevent-cuse --fuse, natively as
 * root) next to noop-fuse (bench/fuse/noop-fuse.c, taken from ../fuse/),
 * a one-file FUSE filesystem mounted on a temporary directory whose ioctl
 * handler makes the same transfers.  scripts/bench runs it on CUSE in the
 * one guest boot of all guest benchmarks, with two vCPUs so that the guest
 * boots with clocksource=tsc (design.md C4), and on fuse on the host; it
 * puts the figures in bench/results/REPORT.md:
 *   scripts/bench            (or: scripts/bench --quick, a short pass)
 * Usage: bench-daemon-ioctl [rounds [iterations [drain_rounds]]]   (default 15 300 5)
 * drain_rounds 0 leaves the batch effect out.
 * Exit 0 when it measured (a benchmark, not a test: a missed target is
 * printed, not failed), 77 off kevent-cuse or without the process-memory path.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libkevent.h>
#include "../stats.h"

#define MAX_ROUNDS 64
#define DRAIN_N	4095
#define MAX_DRAIN_ROUNDS 9
#define NOOP_DEV "/dev/kevent-noop"

static const char *noop_name = "noop-cuse";
static char noop_path[PATH_MAX] = NOOP_DEV;	/* the no-op server's file */
static char noop_mnt[64];			/* fuse: its mount point */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

#define MAX_ITERS 10000

static int rounds = 15, iters = 300, drain_rounds = 5;
static int noop_fd = -1;			/* the no-op server's file, open */
static double tk[MAX_ITERS], tn[MAX_ITERS];	/* one round's calls: kevent, noop */

static void die(const char *what)
{
	fprintf(stderr, "bench-daemon-ioctl: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* CUSE: noop-cuse NAME makes /dev/NAME; fuse: noop-fuse MNT serves MNT/kevent. */
static pid_t start_noop(int fuse)
{
	char self[PATH_MAX], path[PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pid_t pid;

	if (n < 0)
		die("readlink /proc/self/exe");
	self[n] = '\0';
	if (fuse) {
		noop_name = "noop-fuse";
		strcpy(noop_mnt, "/tmp/kevent-noop-fuse.XXXXXX");
		if (!mkdtemp(noop_mnt))
			die("mkdtemp");
		snprintf(noop_path, sizeof(noop_path), "%s/kevent", noop_mnt);
		snprintf(path, sizeof(path), "%s/../fuse/noop-fuse", dirname(self));
	} else {
		snprintf(path, sizeof(path), "%s/noop-cuse", dirname(self));
	}
	pid = fork();
	if (pid == 0) {
		if (fuse)
			execl(path, path, noop_mnt, (char *)NULL);
		else
			execl(path, path, NOOP_DEV + 5, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 250 && access(noop_path, F_OK); i++)
		usleep(20000);
	if (access(noop_path, F_OK))
		die("the no-op server did not make its file");
	return pid;
}

/* Pin to the CPU this thread runs on; -1 when it cannot. */
static int pin_here(void)
{
	int cpu = sched_getcpu();
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu < 0 ? 0 : cpu, &set);
	return cpu >= 0 && !sched_setaffinity(0, sizeof(set), &set) ? cpu : -1;
}

static void stop_noop(pid_t pid)
{
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	if (noop_mnt[0])
		rmdir(noop_mnt);
}

static struct ukevent timer(__u32 cookie)
{
	struct ukevent uk = { .type = KEVENT_TIMER, .event = KEVENT_TIMER_FIRED,
			      .id.raw = { 3600000, 0 } };

	uk.user[0] = cookie;
	return uk;
}

/* One CTL pair (ADD and its REMOVE) on file f: ns per call. */
static double ctl_pair(int f, __u32 cookie)
{
	struct ukevent uk = timer(cookie), keep = uk;
	double t0 = now_ns();

	if (kevent_ctl(f, KEVENT_CTL_ADD, 1, &uk) || kevent_ctl(f, KEVENT_CTL_REMOVE, 1, &keep))
		die(f == noop_fd ? "noop CTL" : "CTL");
	return (now_ns() - t0) / 2;
}

/*
 * One round of CTL: kevent and noop alternate call pair by call pair, the
 * order flipping with each pair, so the same moment's load lands on both;
 * *k and *n are the median pairs (a pair that was preempted is an outlier
 * the median drops, where a mean of the round kept it).
 */
static void ctl_round(int fd, double *k, double *n)
{
	for (int i = 0; i < iters; i++) {
		if (i & 1) {
			tn[i] = ctl_pair(noop_fd, (__u32)i);
			tk[i] = ctl_pair(fd, (__u32)i);
		} else {
			tk[i] = ctl_pair(fd, (__u32)i);
			tn[i] = ctl_pair(noop_fd, (__u32)i);
		}
	}
	*k = bench_median(tk, iters);
	*n = bench_median(tn, iters);
}

static int queue_ready(int fd)
{
	struct kevent_info info;

	if (kevent_info(fd, &info))
		die("INFO");
	return (int)info.queue_ready;
}

/* ns of one GET_EVENTS taking one ready event on kevent (noop < 0) or noop. */
static double get_one(int fd, int noop, const int *p)
{
	struct ukevent out;
	double t0, t;
	char c;

	if (noop < 0) {
		if (write(p[1], "x", 1) != 1)
			die("write");
		while (!queue_ready(fd))
			;
	}
	/* Let the daemon finish the last INFO (and the reactor its fire)
	 * before the clock starts: both sides start from an idle server. */
	usleep(500);
	t0 = now_ns();
	if (kevent_get_events(noop >= 0 ? noop : fd, 1, 1, 0, &out, 0) != 1)
		die("GET_EVENTS");
	t = now_ns() - t0;
	if (noop < 0 && read(p[0], &c, 1) != 1)
		die("read");
	return t;
}

/* One round of GET_EVENTS, alternating call by call as ctl_round(). */
static void get_round(int fd, const int *p, double *k, double *n)
{
	for (int i = 0; i < iters; i++) {
		if (i & 1) {
			tn[i] = get_one(fd, noop_fd, p);
			tk[i] = get_one(fd, -1, p);
		} else {
			tk[i] = get_one(fd, -1, p);
			tn[i] = get_one(fd, noop_fd, p);
		}
	}
	*k = bench_median(tk, iters);
	*n = bench_median(tn, iters);
}

/* events/s of draining DRAIN_N ready kevents at batch b (b <= 4095). */
static double drain_round(int fd, unsigned int b)
{
	static struct ukevent uk[DRAIN_N], out[DRAIN_N];
	unsigned int got = 0;
	double t0;
	int n;

	for (unsigned int i = 0; i < DRAIN_N; i++) {
		uk[i] = timer(i);
		uk[i].id.raw[0] = 1;
		uk[i].req_flags = KEVENT_REQ_ONESHOT;
	}
	if (kevent_ctl(fd, KEVENT_CTL_ADD, DRAIN_N, uk))
		die("ADD of the drain timers");
	while (queue_ready(fd) < DRAIN_N)
		usleep(1000);
	t0 = now_ns();
	while (got < DRAIN_N) {
		n = kevent_get_events(fd, 1, b, 0, out, 0);
		if (n <= 0)
			die("GET_EVENTS (drain)");
		got += (unsigned int)n;
	}
	return DRAIN_N / ((now_ns() - t0) / 1e9);
}

/*
 * Each round drains once at every batch size, the order rotating from round
 * to round, so the ratio to batch 1 is taken within a round (the same load
 * on both sides) and a slow minute of the host moves both.  Printed: the
 * median rate per batch, and the median and range of the per-round ratios.
 */
static void drain_bench(const char *dev)
{
	static const unsigned int batch[] = { 1, 64, 4095 };
	double rate[3][MAX_DRAIN_ROUNDS], ratio[3][MAX_DRAIN_ROUNDS], med[3], x[3];
	int fd = open(dev, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die("open");
	for (int r = 0; r < drain_rounds; r++) {
		for (int k = 0; k < 3; k++) {
			int b = (r + k) % 3;

			rate[b][r] = drain_round(fd, batch[b]);
		}
		for (int b = 0; b < 3; b++)
			ratio[b][r] = rate[b][r] / rate[0][r];
	}
	close(fd);
	for (int b = 0; b < 3; b++) {
		med[b] = bench_median(rate[b], drain_rounds);
		x[b] = bench_median(ratio[b], drain_rounds);	/* sorts: [0] min, [n-1] max */
	}
	printf("# drain of %d ready kevents through GET_EVENTS, %d rounds, batches interleaved\n",
	       DRAIN_N, drain_rounds);
	for (int b = 0; b < 3; b++)
		printf("batch %-4u %10.0f events/s   %6.1fx batch 1\n", batch[b], med[b], x[b]);
	printf("round ratios batch 64 over batch 1 median %.1f min %.1f max %.1f\n",
	       x[1], ratio[1][0], ratio[1][drain_rounds - 1]);
	if (x[1] < 30)
		printf("# batch 64 below the target of 30x batch 1\n");
}

int main(int argc, char **argv)
{
	const char *dev = getenv("KEVENT_DEVICE") ? getenv("KEVENT_DEVICE") : KEVENT_DEVICE_DEFAULT;
	double kc[MAX_ROUNDS], nc[MAX_ROUNDS], kg[MAX_ROUNDS], ng[MAX_ROUNDS], rc[MAX_ROUNDS],
		rg[MAX_ROUNDS], mkc, mnc, mkg, mng;
	struct kevent_info info;
	struct ukevent pk;
	int fd, p[2], cpu;
	pid_t pid;

	if (argc > 1 && argv[1][0] == '-') {
		printf("usage: %s [rounds [iterations [drain_rounds]]] (in the guest, CUSE backend; see the source)\n",
		       argv[0]);
		return 0;
	}
	if (argc > 1)
		rounds = atoi(argv[1]);
	if (argc > 2)
		iters = atoi(argv[2]);
	if (argc > 3)
		drain_rounds = atoi(argv[3]);
	if (rounds < 1 || rounds > MAX_ROUNDS || iters < 10 || iters > MAX_ITERS ||
	    drain_rounds < 0 || drain_rounds > MAX_DRAIN_ROUNDS) {
		fprintf(stderr, "bench-daemon-ioctl: want rounds 1..%d, iterations 10..%d, drain_rounds 0..%d\n",
			MAX_ROUNDS, MAX_ITERS, MAX_DRAIN_ROUNDS);
		return 2;
	}
	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0 || kevent_info(fd, &info))
		return perror("bench-daemon-ioctl: open"), 77;
	if ((info.backend != KEVENT_BACKEND_CUSE && info.backend != KEVENT_BACKEND_FUSE) ||
	    !(info.features & KEVENT_FEAT_PROCESS_VM) || !(info.features & KEVENT_FEAT_FD_ORIGINS)) {
		printf("bench-daemon-ioctl: not kevent-cuse on its process-memory path: skip\n");
		return 77;
	}
	pid = start_noop(info.backend == KEVENT_BACKEND_FUSE);
	noop_fd = open(noop_path, O_RDWR | O_CLOEXEC);
	if (noop_fd < 0 || pipe2(p, O_CLOEXEC))
		die("open of the no-op server's file");
	memset(&pk, 0, sizeof(pk));
	pk.type = KEVENT_POLL;
	pk.event = KEVENT_POLL_POLLIN;
	pk.id.raw[0] = (__u32)p[0];
	if (kevent_ctl(fd, KEVENT_CTL_ADD, 1, &pk))
		die("ADD poll");
	/*
	 * Interleaved call by call (ctl_round, get_round), the order of the
	 * two kinds flipping every round; the client pinned to the CPU it
	 * starts on, so its caches and its wake-ups do not move between the
	 * sides (the servers are left to the scheduler: both alike).
	 */
	cpu = pin_here();
	for (int r = 0; r < rounds; r++) {
		if (r & 1) {
			get_round(fd, p, &kg[r], &ng[r]);
			ctl_round(fd, &kc[r], &nc[r]);
		} else {
			ctl_round(fd, &kc[r], &nc[r]);
			get_round(fd, p, &kg[r], &ng[r]);
		}
		rc[r] = kc[r] / nc[r];
		rg[r] = kg[r] / ng[r];
	}
	close(noop_fd);
	stop_noop(pid);
	mkc = bench_median(kc, rounds), mnc = bench_median(nc, rounds);
	mkg = bench_median(kg, rounds), mng = bench_median(ng, rounds);
	printf("# per-ioctl cost, kevent-cuse (%s) vs %s (same transfers), median of %d rounds of %d calls alternating one by one, median call per round; client pinned to CPU %d\n",
	       info.backend == KEVENT_BACKEND_FUSE ? "fuse" : "cuse", noop_name, rounds, iters, cpu);
	printf("CTL (1 entry)      kevent %8.1f us   noop %8.1f us   ratio %.2f%s\n", mkc / 1e3,
	       mnc / 1e3, mkc / mnc, mkc / mnc > 1.2 ? "  (above the 1.2 target)" : "");
	printf("GET_EVENTS (1)     kevent %8.1f us   noop %8.1f us   ratio %.2f%s\n", mkg / 1e3,
	       mng / 1e3, mkg / mng, mkg / mng > 1.2 ? "  (above the 1.2 target)" : "");
	/* The per-round ratios: the scatter within this boot. */
	bench_sort(rc, rounds);
	bench_sort(rg, rounds);
	printf("round ratios CTL median %.2f min %.2f max %.2f; GET_EVENTS median %.2f min %.2f max %.2f\n",
	       rc[rounds / 2], rc[0], rc[rounds - 1], rg[rounds / 2], rg[0], rg[rounds - 1]);
	if (drain_rounds)
		drain_bench(dev);
	return 0;
}
