// SPDX-License-Identifier: GPL-2.0
/*
 * bench-kqueue-scale: the kqueue front (libkqueue-kevent) against the same
 * loop written on epoll, level-triggered, with and without what libkqueue
 * does on Linux to fill a read event's data, from 100 to 4,000 sockets,
 * every reader in the same run.
 *
 * N connected AF_UNIX stream pairs (socketpair: the 2006 comparison's shape,
 * bench/sockets/epoll2006.c, so its epoll LT row reads beside that table;
 * TCP loopback would add the TCP stack's own per-byte work, ACKs and
 * softirqs, to every reader alike and hide the readers' difference in it).
 * One writer thread writes one byte to a pair chosen at random as fast as
 * it can; the reader takes readiness at batch 64 and reads each ready
 * socket empty.  Figure: events delivered to the reader per second, and
 * the reader thread's CPU per event.  Readers:
 *   lt      epoll_wait, level-triggered: the baseline
 *   kqueue  kevent() on a kqueue, EVFILT_READ level (no EV_CLEAR), on the
 *           highest revision the device serves (INFO + SET_ABI)
 *   rev1    the same loop with KQUEUE_KEVENT_REVISION=1: the front's
 *           revision-1 path (level triggering done in the library)
 *   get     the device underneath without the front: poll kevents on a
 *           revision-1 queue taken by kevent_get_events (what the front's
 *           own cost is measured against)
 *   ltcount epoll LT with an ioctl(SIOCINQ) per delivered event before the
 *           drain: libkqueue's way on Linux (its EVFILT_READ copyout asks
 *           each socket's bytes for the kevent's data), so the front, whose
 *           data the device counts (abi.md D67), is also set beside a
 *           reader that gets the same answer
 * A round runs every reader once at every N; the readers' order rotates
 * from round to round and the N go forward and backward in turn, so a
 * drift of the machine's load favours no reader and no N.  Each reader gets
 * a fresh queue (epoll fd, kqueue, device fd) per run, its registration not
 * timed.  Ratios: medians over the rounds of the rates, and the medians of
 * the per-round ratios (both readers of a ratio under the same load).
 *
 * Usage: bench-kqueue-scale [rounds [seconds [N...]]]
 *        (default 5 1.0 100 500 1000 2000 4000; device: $KEVENT_DEVICE)
 * Lines scripts/bench collects, columns lt kqueue rev1 get ltcount:
 *   "kqrow <backend> <N> ..."   events/s, medians over the rounds
 *   "kqcpu <backend> <N> ..."   reader CPU ns per event, medians
 *   "kqusr <backend> <N> ..."   the part of it in user space (getrusage)
 *   "kqround <backend> <N> <kqueue/lt> <rev1/lt> <get/lt> <kqueue/rev1>
 *            <kqueue/ltcount>"
 *                               medians of the per-round ratios
 *   "kqcalls <backend> <N> ..." the reader's waits (epoll_wait, kevent(),
 *                               GET_EVENTS) per event
 *   "kqctxt <backend> <N> ..."  context switches per event, machine-wide
 *                               (/proc/stat: meaningful where nothing else
 *                               runs, as in the guest)
 * KEVENT_KQSCALE_READERS (e.g. "lt,kqueue") limits the readers, for perf;
 * KEVENT_KQSCALE_GET_RDHUP=1 makes the get reader ask what the front asks
 * of a socket's EVFILT_READ on revision 2 and later (POLLIN | POLLRDHUP on
 * a revision-2 queue), to tell the device's part of the front's cost from
 * the library's; KEVENT_KQSCALE_GET_ABI=R puts its queue on revision R
 * (4: D67's count and D69's check in every record) and
 * KEVENT_KQSCALE_GET_LEVEL=1 adds KEVENT_REQ_LEVEL (D43, revision 2 on),
 * so the front's device path can be taken apart rule by rule.
 * KEVENT_KQSCALE_PIN=1 keeps the reader on CPU 0 and the writer on CPU 1
 * (with two CPUs or more), so no run finds them sharing one CPU.
 * Exit 0 when it measured, 77 without a device.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/event.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/sockios.h>

#include <libkevent.h>
#include "../pairs.h"
#include "../stats.h"

#define MAX_N	4000
#define MAX_NS	8
#define MAX_RUNS 16
#define BATCH	64
#define WAIT_MS	100

enum { R_LT, R_KQ, R_KQ1, R_GET, R_LTC, NREADERS };
static const char *const reader_names[NREADERS] = { "lt", "kqueue", "rev1", "get", "ltcount" };

static int sv[MAX_N][2];
static int npairs;
static atomic_int stop;
static const char *dev;
static bool pin;	/* KEVENT_KQSCALE_PIN=1 */

/* What one run measured. */
struct sample {
	double rate;	/* events/s; negative: -errno */
	double cpu_ns;	/* reader thread CPU per event */
	double usr_ns;	/* the part of it in user space */
	double calls;	/* waits per event */
	double ctxt;	/* context switches per event, machine-wide */
};

/* Context switches so far, machine-wide (/proc/stat's ctxt line). */
static double ctxt_now(void)
{
	unsigned long long c = 0;
	char line[512];
	FILE *f = fopen("/proc/stat", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "ctxt %llu", &c) == 1)
			break;
	if (f)
		fclose(f);
	return (double)c;
}

/* KEVENT_KQSCALE_PIN=1: the calling thread on cpu (no effect with one CPU). */
static void pin_to(int cpu)
{
	cpu_set_t set;

	if (!pin || sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		perror("bench-kqueue-scale: sched_setaffinity");
}

static void *writer(void *arg)
{
	unsigned int x = BENCH_XORSHIFT_SEED;

	(void)arg;
	pin_to(1);
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		if (write(sv[bench_next_pair(&x, (unsigned int)npairs)][1], "x", 1) < 0 && errno != EAGAIN)
			break;
	return NULL;
}

static void drain_all(void)
{
	for (int i = 0; i < npairs; i++)
		bench_drain(sv[i][0]);
}

/* One wait of a reader: the events it handled (each socket drained), or -errno. */
typedef int (*wait_fn)(int fd);

static int wait_epoll(int fd)
{
	static struct epoll_event ev[BATCH];
	int n = epoll_wait(fd, ev, BATCH, WAIT_MS);

	for (int i = 0; i < n; i++)
		bench_drain(sv[ev[i].data.u32][0]);
	return n < 0 ? -errno : n;
}

/* The last data wait_epoll_count() read (volatile: the ioctl is the point). */
static volatile int ltcount_data;

/* libkqueue's EVFILT_READ on Linux: the bytes waiting, asked per event, are the data. */
static int wait_epoll_count(int fd)
{
	static struct epoll_event ev[BATCH];
	int n = epoll_wait(fd, ev, BATCH, WAIT_MS);

	for (int i = 0; i < n; i++) {
		int s = sv[ev[i].data.u32][0], bytes = 0;

		if (ioctl(s, SIOCINQ, &bytes) == 0)
			ltcount_data = bytes;
		bench_drain(s);
	}
	return n < 0 ? -errno : n;
}

static int wait_kqueue(int fd)
{
	static struct kevent ev[BATCH];
	const struct timespec ts = { 0, WAIT_MS * 1000000L };
	int n = kevent(fd, NULL, 0, ev, BATCH, &ts);

	for (int i = 0; i < n; i++)
		bench_drain(sv[(unsigned int)(uintptr_t)ev[i].udata][0]);
	return n < 0 ? -errno : n;
}

static int wait_get(int fd)
{
	static struct ukevent uk[BATCH];
	int n = kevent_get_events(fd, 1, BATCH, WAIT_MS * 1000000ull, uk, 0);

	for (int i = 0; i < n; i++)
		bench_drain(sv[uk[i].user[0]][0]);
	return n < 0 ? -errno : n;
}

/* The calling thread's user-space CPU so far, seconds (tick-granular: a sum over a run). */
static double thread_user_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) < 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
}

/* The writer runs for `seconds` while wait() drains; nothing is ready at entry. */
static struct sample measure(wait_fn wait, int fd, double seconds)
{
	struct sample s = { 0 };
	unsigned long long events = 0, calls = 0;
	double t0, t, c0, u0, x0;
	pthread_t th;
	int n = 0;

	atomic_store(&stop, 0);
	pthread_create(&th, NULL, writer, NULL);
	x0 = ctxt_now();
	c0 = bench_clock_s(CLOCK_THREAD_CPUTIME_ID);
	u0 = thread_user_s();
	t0 = bench_clock_s(CLOCK_MONOTONIC);
	do {
		n = wait(fd);
		calls++;
		events += n > 0 ? (unsigned long long)n : 0;
		t = bench_clock_s(CLOCK_MONOTONIC);
	} while (n >= 0 && t - t0 < seconds);
	s.cpu_ns = events ? (bench_clock_s(CLOCK_THREAD_CPUTIME_ID) - c0) * 1e9 / (double)events : 0;
	s.usr_ns = events ? (thread_user_s() - u0) * 1e9 / (double)events : 0;
	s.calls = events ? (double)calls / (double)events : 0;
	s.ctxt = events ? (ctxt_now() - x0) / (double)events : 0;
	s.rate = n < 0 ? n : (double)events / (t - t0);
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	drain_all();
	return s;
}

static int setup_epoll(void)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);

	for (int i = 0; ep >= 0 && i < npairs; i++) {
		struct epoll_event e = { .events = EPOLLIN, .data.u32 = (unsigned int)i };

		if (epoll_ctl(ep, EPOLL_CTL_ADD, sv[i][0], &e) < 0) {
			close(ep);
			return -errno;
		}
	}
	return ep < 0 ? -errno : ep;
}

/*
 * A kqueue on revision cap (NULL: the highest served), every pair's
 * EVFILT_READ in one changelist.  EAGAIN: a daemon is still releasing the
 * last run's queue (its caps count it until then).
 */
static int setup_kqueue(const char *cap)
{
	static struct kevent ch[MAX_N];
	int kq, r;

	if (cap)
		setenv("KQUEUE_KEVENT_REVISION", cap, 1);
	else
		unsetenv("KQUEUE_KEVENT_REVISION");
	while ((kq = kqueue()) < 0 && errno == EAGAIN)
		usleep(1000);
	if (kq < 0)
		return -errno;
	for (int i = 0; i < npairs; i++)
		EV_SET(&ch[i], sv[i][0], EVFILT_READ, EV_ADD, 0, 0, (void *)(uintptr_t)i);
	while ((r = kevent(kq, ch, npairs, NULL, 0, NULL)) < 0 && errno == EAGAIN)
		usleep(1000);
	if (r < 0) {
		r = -errno;
		close(kq);
		return r;
	}
	return kq;
}

/* An environment knob of the get reader: its number, or def when unset. */
static unsigned int get_knob(const char *name, unsigned int def)
{
	const char *v = getenv(name);

	return v && *v ? (unsigned int)atoi(v) : def;
}

/*
 * A revision-1 device queue, a POLLIN poll kevent per pair (cookie: its
 * index); with KEVENT_KQSCALE_GET_RDHUP=1 a revision-2 queue and
 * POLLIN | POLLRDHUP, as the front asks; KEVENT_KQSCALE_GET_ABI and
 * KEVENT_KQSCALE_GET_LEVEL as the top comment says.
 */
static int setup_get(void)
{
	static struct ukevent uk[MAX_N];
	bool rdhup = get_knob("KEVENT_KQSCALE_GET_RDHUP", 0) == 1;
	bool level = get_knob("KEVENT_KQSCALE_GET_LEVEL", 0) == 1;
	unsigned int abi = get_knob("KEVENT_KQSCALE_GET_ABI", rdhup || level ? 2 : 1);
	int fd = open(dev, O_RDWR | O_CLOEXEC), r;

	if (fd < 0)
		return -errno;
	if (abi > 1 && kevent_set_abi(fd, abi, 0) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	for (int i = 0; i < npairs; i++) {
		memset(&uk[i], 0, sizeof(uk[i]));
		uk[i].type = KEVENT_POLL;
		uk[i].event = KEVENT_POLL_POLLIN | (rdhup ? KEVENT_POLL_POLLRDHUP : 0);
		uk[i].req_flags = level ? KEVENT_REQ_LEVEL : 0;
		uk[i].id.raw[0] = (__u32)sv[i][0];
		uk[i].user[0] = (__u32)i;
	}
	while ((r = kevent_ctl(fd, KEVENT_CTL_ADD, (unsigned int)npairs, uk)) < 0 && errno == EAGAIN)
		usleep(1000);
	if (r != 0) {
		r = r < 0 ? -errno : -EIO;
		close(fd);
		return r;
	}
	return fd;
}

/* One run of reader r on a fresh queue. */
static struct sample run_reader(int r, double seconds)
{
	static const wait_fn waits[NREADERS] = { wait_epoll, wait_kqueue, wait_kqueue, wait_get,
						 wait_epoll_count };
	struct sample s = { 0 };
	int fd;

	switch (r) {
	case R_LT:
	case R_LTC: fd = setup_epoll(); break;
	case R_KQ: fd = setup_kqueue(NULL); break;
	case R_KQ1: fd = setup_kqueue("1"); break;
	default: fd = setup_get(); break;
	}
	if (fd < 0) {
		s.rate = fd;
		return s;
	}
	s = measure(waits[r], fd, seconds);
	close(fd);
	return s;
}

/* KEVENT_KQSCALE_READERS, when set, names the readers to run. */
static int reader_on(int r)
{
	const char *want = getenv("KEVENT_KQSCALE_READERS");
	char list[64], name[16];

	if (!want || !*want)
		return 1;
	snprintf(list, sizeof(list), ",%s,", want);
	snprintf(name, sizeof(name), ",%s,", reader_names[r]);
	return strstr(list, name) != NULL;
}

/* One N's samples, reader by reader, round by round. */
struct nsamples {
	struct sample s[NREADERS][MAX_RUNS];
};

static struct nsamples res[MAX_NS];

/* Round `round` at N=n: every reader once, the order rotating with the round. */
static int measure_round(struct nsamples *ns, int n, int round, double seconds)
{
	npairs = n;
	for (int k = 0; k < NREADERS; k++) {
		int who = (round + k) % NREADERS;
		struct sample *s = &ns->s[who][round];

		memset(s, 0, sizeof(*s));
		if (!reader_on(who))
			continue;
		*s = run_reader(who, seconds);
		if (s->rate < 0) {
			fprintf(stderr, "bench-kqueue-scale: %s at N=%d: %s\n", reader_names[who], n,
				strerror((int)-s->rate));
			return 1;
		}
	}
	return 0;
}

/* The median over the rounds of one field of reader r's samples. */
static double med(const struct nsamples *ns, int r, int rounds, size_t off)
{
	double v[MAX_RUNS];

	for (int i = 0; i < rounds; i++)
		v[i] = *(const double *)((const char *)&ns->s[r][i] + off);
	return bench_median(v, rounds);
}

/* The median over the rounds of reader a's rate over reader b's in the same round. */
static double round_ratio(const struct nsamples *ns, int a, int b, int rounds)
{
	double v[MAX_RUNS];

	for (int i = 0; i < rounds; i++)
		v[i] = ns->s[b][i].rate > 0 ? ns->s[a][i].rate / ns->s[b][i].rate : 0;
	return bench_median(v, rounds);
}

static void print_line(const char *tag, const char *be, int n, const double *v, int decimals)
{
	printf("%s %s %d", tag, be, n);
	for (int r = 0; r < NREADERS; r++)
		printf(" %.*f", decimals, v[r]);
	printf("\n");
}

static void report(const char *be, const struct nsamples *ns, int n, int rounds)
{
	double rate[NREADERS], cpu[NREADERS], usr[NREADERS], calls[NREADERS], ctxt[NREADERS];

	for (int r = 0; r < NREADERS; r++) {
		rate[r] = med(ns, r, rounds, offsetof(struct sample, rate));
		cpu[r] = med(ns, r, rounds, offsetof(struct sample, cpu_ns));
		usr[r] = med(ns, r, rounds, offsetof(struct sample, usr_ns));
		calls[r] = med(ns, r, rounds, offsetof(struct sample, calls));
		ctxt[r] = med(ns, r, rounds, offsetof(struct sample, ctxt));
	}
	printf("N=%-5d %-6s epoll LT %8.0f  kqueue %8.0f  rev1 %8.0f  get_events %8.0f  "
	       "LT+count %8.0f  kqueue/LT %.2f  rev1/LT %.2f  kqueue/rev1 %.2f  "
	       "(per round: kqueue/LT %.2f  rev1/LT %.2f  kqueue/LT+count %.2f)\n",
	       n, be, rate[R_LT], rate[R_KQ], rate[R_KQ1], rate[R_GET], rate[R_LTC],
	       rate[R_LT] > 0 ? rate[R_KQ] / rate[R_LT] : 0, rate[R_LT] > 0 ? rate[R_KQ1] / rate[R_LT] : 0,
	       rate[R_KQ1] > 0 ? rate[R_KQ] / rate[R_KQ1] : 0, round_ratio(ns, R_KQ, R_LT, rounds),
	       round_ratio(ns, R_KQ1, R_LT, rounds), round_ratio(ns, R_KQ, R_LTC, rounds));
	print_line("kqrow", be, n, rate, 0);
	print_line("kqcpu", be, n, cpu, 0);
	print_line("kqusr", be, n, usr, 0);
	print_line("kqcalls", be, n, calls, 4);
	print_line("kqctxt", be, n, ctxt, 3);
	printf("kqround %s %d %.3f %.3f %.3f %.3f %.3f\n", be, n, round_ratio(ns, R_KQ, R_LT, rounds),
	       round_ratio(ns, R_KQ1, R_LT, rounds), round_ratio(ns, R_GET, R_LT, rounds),
	       round_ratio(ns, R_KQ, R_KQ1, rounds), round_ratio(ns, R_KQ, R_LTC, rounds));
	fflush(stdout);
}

/* Every round at every N, forward and backward in turn; the lines at the end. */
static int run_all(const char *be, const int *ns, int nn, int rounds, double seconds)
{
	for (int r = 0; r < rounds; r++)
		for (int j = 0; j < nn; j++) {
			int i = r % 2 ? nn - 1 - j : j;

			if (measure_round(&res[i], ns[i], r, seconds))
				return 1;
		}
	for (int i = 0; i < nn; i++)
		report(be, &res[i], ns[i], rounds);
	return 0;
}

/* The N from argv[3..] (1..MAX_N each), else the default five. */
static int parse_ns(int argc, char **argv, int *ns)
{
	static const int def[] = { 100, 500, 1000, 2000, 4000 };
	int nn = 0;

	for (int i = 3; i < argc && nn < MAX_NS; i++)
		if (atoi(argv[i]) >= 1 && atoi(argv[i]) <= MAX_N)
			ns[nn++] = atoi(argv[i]);
	if (nn)
		return nn;
	memcpy(ns, def, sizeof(def));
	return (int)(sizeof(def) / sizeof(def[0]));
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5, ns[MAX_NS], nn = parse_ns(argc, argv, ns);
	double seconds = argc > 2 ? atof(argv[2]) : 1.0;
	struct kevent_info info;

	dev = bench_device();
	if (rounds < 1 || rounds > MAX_RUNS)
		rounds = 5;
	if (bench_probe(dev, &info, "bench-kqueue-scale"))
		return 77;
	if (bench_open_pairs(sv, MAX_N, "bench-kqueue-scale"))
		return 1;
	pin = get_knob("KEVENT_KQSCALE_PIN", 0) == 1;
	pin_to(0);
	printf("# kqueue front on %s (%s, serves revision %u): AF_UNIX pairs, one random writer, "
	       "%d interleaved rounds of %.1f s per reader, batch %d\n",
	       dev, bench_backend_name(info.backend), info.abi_revision, rounds, seconds, BATCH);
	return run_all(bench_backend_name(info.backend), ns, nn, rounds, seconds);
}
