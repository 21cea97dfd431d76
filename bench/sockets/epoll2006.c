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
 *   ring        the same kevents on a revision-2 queue, taken through its
 *               ring in process memory: kevent_wait() copies them into a
 *               struct kevent_uring of RING_SLOTS slots, the reader reads
 *               the slots and gives them back with kevent_commit()
 *               (docs/abi.md D53-D55) lazily, as take26's ring is meant to
 *               be used: once half the ring is read, not after every wait
 *               (a commit per wait would be two syscalls per wake where
 *               epoll makes one).  The commit point keeps at least BATCH
 *               slots free, so a wait is never short of room; each wait
 *               names the last committed index (D55's old_uidx).
 * Every reader takes at most BATCH (64) events per call.  The order of the
 * readers rotates from round to round, so a drift of the machine's load
 * does not favour one; the N interleave the same way (see run_all), so it
 * does not favour an N either.  The device is $KEVENT_DEVICE (default /dev/kevent);
 * its backend is printed from INFO.  Ratios are kevent (and ring) over each
 * epoll reader, medians of the interleaved runs; ns/event at each N over
 * ns/event at the smallest N shows whether the cost per event stays flat.
 * A backend that refuses the ring (revision 1 only, or a daemon that cannot
 * write this process's memory: EPERM, D53) gets ring 0 and a note.
 *
 * The 2006 thread's figures (its machine, kevent take13-era): kevent 59,794
 * events/s, epoll LT 57,428, epoll ET 78,265.  Printed for reference only.
 *
 * Usage: bench-epoll2006 [runs [seconds [N...]]]   (default 5 1.0 100 1000 2000 4000)
 * Output lines "row <backend> <N> <lt> <et> <kevent> <ring>" (events/s, ring 0
 * when not measured) and "cpu ..." (the reader thread's CPU ns per event,
 * medians, same columns) are what scripts/bench collects; "wcpu ..." (the
 * writer thread's CPU ns per event: a wake-up callback runs inside the
 * writer's write()), "scpu ..." (every CPU's busy time per event from
 * /proc/stat: kworkers and interrupts included, meaningful where nothing
 * else runs, as in the guest) and "ctxt ..." (context switches per event,
 * machine-wide) follow with the same columns.
 * "rounds <backend> <N> <kevent/LT> <kevent/ET>" are the medians of the
 * per-round ratios (both readers of a ratio ran in the same round, under
 * the same load), as the ring line gives them for the ring.
 * "calls ..." gives the reader's calls per event (epoll_wait, GET_EVENTS, or
 * WAIT plus COMMIT), the syscalls a wake costs beside its read()s.
 * "writes ..." gives the writer's one-byte writes per event (the bytes a
 * reader's drain takes per event, which a cost per event includes) and
 * "refused ..." its writes refused with EAGAIN (a full socket) per event;
 * "events ..." the events delivered at that N, summed over the runs.
 * KEVENT_E2006_READERS (e.g. "lt,kevent"; lt, et, kevent, ring) limits the
 * readers, for profiling one of them; KEVENT_E2006_COMMIT_EACH=1 makes the
 * ring reader commit after every wait, to measure what the lazy commit saves.
 * Exit 0 when it measured, 77 without a device.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libkevent.h>
#include "../pairs.h"
#include "../stats.h"

#define MAX_N	4000
#define MAX_RUNS 16
#define BATCH	64
#define RING_SLOTS (4 * BATCH)
#define RING_COMMIT (RING_SLOTS / 2)	/* commit once this many slots are read */

static int sv[MAX_N][2];
static int npairs;
static atomic_int stop;

static double now_s(void)
{
	return bench_clock_s(CLOCK_MONOTONIC);
}

/* The reader thread's CPU time (its syscalls' kernel work included). */
static double cpu_s(void)
{
	return bench_clock_s(CLOCK_THREAD_CPUTIME_ID);
}

/*
 * The last run's reader CPU ns per event: steadier than events/s, which
 * also follows how the writer thread is scheduled.  On a daemon backend
 * the daemon's share is not in it (another process), so it is printed,
 * never compared there.
 */
static double last_cpu_ns;

/* The writer thread's CPU seconds in its last run (it stores them at exit). */
static double writer_cpu_s;

/* The writer's bytes written (one per write) and refused writes, same run. */
static unsigned long long writer_writes, writer_eagain;

/* The last run's writer CPU, machine busy CPU ns and context switches per event. */
static double last_wcpu_ns, last_scpu_ns, last_ctxt;

/* The last run's writes per event: bytes a reader's drain takes per event. */
static double last_wpe, last_refused;

/* The last run's events (for a total over the runs at one N). */
static unsigned long long last_events;

/* The reader's wait calls (and commits) in its last run, and per event. */
static unsigned long long run_calls;
static double last_calls;

/* Machine-wide busy CPU seconds and context switches so far (/proc/stat). */
struct sys_mark {
	double busy_s;
	double ctxt;
};

static struct sys_mark sys_now(void)
{
	struct sys_mark m = { 0, 0 };
	unsigned long long v[8] = { 0 }, c;
	char line[512];
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		return m;
	while (fgets(line, sizeof(line), f)) {
		/* "cpu " sums every CPU; the "cpuN" lines that follow are each one's. */
		if (!strncmp(line, "cpu ", 4) &&
		    sscanf(line, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
			   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8)
			/* user nice system idle iowait irq softirq steal: busy = all but idle, iowait */
			m.busy_s = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) /
				   (double)sysconf(_SC_CLK_TCK);
		else if (sscanf(line, "ctxt %llu", &c) == 1)
			m.ctxt = (double)c;
	}
	fclose(f);
	return m;
}

static struct sys_mark run_sys0;
static double run_c0;

/* A measured run starts: the reader's and the machine's clocks. */
static void run_begin(void)
{
	run_sys0 = sys_now();
	run_c0 = cpu_s();
	run_calls = 0;
}

/* A measured run ended with events delivered: the per-event costs (the writer's after stop_writer). */
static void run_end(unsigned long long events)
{
	struct sys_mark s = sys_now();
	double e = events ? (double)events : 0;

	last_cpu_ns = e ? (cpu_s() - run_c0) * 1e9 / e : 0;
	last_scpu_ns = e ? (s.busy_s - run_sys0.busy_s) * 1e9 / e : 0;
	last_ctxt = e ? (s.ctxt - run_sys0.ctxt) / e : 0;
	last_calls = e ? (double)run_calls / e : 0;
	last_events = events;
}

static void writer_cost(unsigned long long events)
{
	last_wcpu_ns = events ? writer_cpu_s * 1e9 / (double)events : 0;
	last_wpe = events ? (double)writer_writes / (double)events : 0;
	last_refused = events ? (double)writer_eagain / (double)events : 0;
}

static void *writer(void *arg)
{
	unsigned int x = BENCH_XORSHIFT_SEED;
	unsigned long long ok = 0, again = 0;
	double c0 = cpu_s();

	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (write(sv[bench_next_pair(&x, (unsigned int)npairs)][1], "x", 1) == 1)
			ok++;
		else if (errno == EAGAIN)
			again++;
		else
			break;
	}
	writer_cpu_s = cpu_s() - c0;
	writer_writes = ok;
	writer_eagain = again;
	return NULL;
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
		bench_drain(sv[i][0]);
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
	run_begin();
	t0 = now_s();
	end = t0 + seconds;
	while (now_s() < end) {
		n = epoll_wait(ep, evs, BATCH, 100);
		run_calls++;
		for (int i = 0; i < n; i++)
			bench_drain(sv[evs[i].data.u32][0]);
		events += n > 0 ? (unsigned long long)n : 0;
	}
	end = now_s();
	run_end(events);
	stop_writer(th);
	writer_cost(events);
	close(ep);
	return (double)events / (end - t0);
}

/* ADD the kevent the reader watches on every pair (cookie: the pair's index). */
static int add_sockets(int fd, __u32 type)
{
	static struct ukevent uk[MAX_N];

	for (int i = 0; i < npairs; i++) {
		memset(&uk[i], 0, sizeof(uk[i]));
		uk[i].type = type;
		uk[i].event = type == KEVENT_SOCKET ? KEVENT_SOCKET_RECV : KEVENT_POLL_POLLIN;
		uk[i].id.raw[0] = (__u32)sv[i][0];
		uk[i].user[0] = (__u32)i;
	}
	return kevent_ctl(fd, KEVENT_CTL_ADD, (unsigned int)npairs, uk) < 0 ? -errno : 0;
}

/* A fresh queue per run (as epoll gets a fresh epoll fd): ADD all, drain, close. */
static double run_kevent(const char *dev, double seconds, __u32 type)
{
	static struct ukevent out[BATCH];
	unsigned long long events = 0;
	int fd = open(dev, O_RDWR | O_CLOEXEC), n;
	double t0, end;
	pthread_t th;

	if (fd < 0)
		return -errno;
	n = add_sockets(fd, type);
	if (n < 0) {
		close(fd);
		return n;
	}
	start_writer(&th);
	run_begin();
	t0 = now_s();
	end = t0 + seconds;
	while (now_s() < end) {
		n = kevent_get_events(fd, 1, BATCH, 100000000ull, out, 0);
		run_calls++;
		for (int i = 0; i < n; i++)
			bench_drain(sv[out[i].user[0]][0]);
		events += n > 0 ? (unsigned long long)n : 0;
	}
	end = now_s();
	run_end(events);
	stop_writer(th);
	writer_cost(events);
	close(fd);
	return (double)events / (end - t0);
}

/*
 * The revision-2 ring: a fresh queue from kevent_init() (it opens
 * $KEVENT_DEVICE, as dev is), ADD all, then wait, read the new slots, and
 * commit what was read once RING_COMMIT slots are (see the top comment).
 * Returns events/s, or -errno (-EPERM, -ENOTTY, -EINVAL: no ring here).
 */
static double run_ring(double seconds, __u32 type)
{
	static struct kevent_uring *ring;
	const struct timespec tmo = { .tv_nsec = 100000000 };
	unsigned long long events = 0;
	unsigned int uidx = 0, ridx = 0, unread = 0, kidx, over;
	const char *each = getenv("KEVENT_E2006_COMMIT_EACH");
	unsigned int commit_at = each && *each == '1' ? 1 : RING_COMMIT;
	double t0, end;
	pthread_t th;
	int fd, n;

	if (!ring && !(ring = aligned_alloc(8, KEVENT_URING_SIZE(RING_SLOTS))))
		return -ENOMEM;
	memset(ring, 0, KEVENT_URING_SIZE(RING_SLOTS));
	fd = kevent_init(ring, RING_SLOTS, 0);
	if (fd < 0)
		return -errno;
	n = add_sockets(fd, type);
	if (n < 0) {
		close(fd);
		return n;
	}
	start_writer(&th);
	run_begin();
	t0 = now_s();
	end = t0 + seconds;
	while (now_s() < end) {
		/* uidx: the last committed index, which D55 wants as old_uidx. */
		n = kevent_wait(fd, BATCH, uidx, tmo, 0);
		run_calls++;
		if (n <= 0)
			continue;
		kidx = __atomic_load_n(&ring->ring_kidx, __ATOMIC_ACQUIRE);
		for (int i = 0; i < n; i++)
			bench_drain(sv[ring->event[(ridx + (unsigned int)i) % RING_SLOTS].user[0]][0]);
		ridx = kidx;
		unread += (unsigned int)n;
		events += (unsigned long long)n;
		if (unread < commit_at)
			continue;
		over = __atomic_load_n(&ring->ring_over, __ATOMIC_ACQUIRE);
		run_calls++;
		if (kevent_commit(fd, kidx, over) != (int)unread)
			break;	/* cannot happen with one reader */
		uidx = kidx;
		unread = 0;
	}
	end = now_s();
	run_end(events);
	stop_writer(th);
	writer_cost(events);
	close(fd);
	return (double)events / (end - t0);
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

enum { R_LT, R_ET, R_KEVENT, R_RING, NREADERS };

/* KEVENT_E2006_READERS, when set, names the readers to run. */
static int reader_on(int r)
{
	static const char *const names[NREADERS] = { "lt", "et", "kevent", "ring" };
	const char *want = getenv("KEVENT_E2006_READERS");
	char list[64];

	if (!want || !*want)
		return 1;
	snprintf(list, sizeof(list), ",%s,", want);
	for (const char *p = strstr(list, names[r]); p; p = strstr(p + 1, names[r]))
		if (p[-1] == ',' && p[strlen(names[r])] == ',')
			return 1;
	return 0;
}

/* One run of reader r; a negative result is -errno. */
static double run_reader(int r, const char *dev, double seconds, __u32 type)
{
	switch (r) {
	case R_LT: return run_epoll(seconds, 0);
	case R_ET: return run_epoll(seconds, 1);
	case R_KEVENT: return run_kevent(dev, seconds, type);
	default: return run_ring(seconds, type);
	}
}

#define MAX_NS 8

/* One N's figures, run by run (a run: every reader once). */
struct nsamples {
	double v[NREADERS][MAX_RUNS], cpu[NREADERS][MAX_RUNS], wcpu[NREADERS][MAX_RUNS];
	double scpu[NREADERS][MAX_RUNS], ctxt[NREADERS][MAX_RUNS], calls[NREADERS][MAX_RUNS];
	double wpe[NREADERS][MAX_RUNS], ref[NREADERS][MAX_RUNS];
	unsigned long long tot[NREADERS];
};

static struct nsamples res[MAX_NS];
static int ring_err;

/*
 * Run r at N=n: every reader once, the order rotating with r.  The ring is
 * dropped (ring_err set) at its first refusal; any other failure ends the
 * benchmark (1).
 */
static int measure_run(const char *dev, struct nsamples *s, int n, int r, double seconds,
		       __u32 type)
{
	npairs = n;
	for (int k = 0; k < NREADERS; k++) {
		int who = (r + k) % NREADERS;

		s->cpu[who][r] = s->wcpu[who][r] = s->scpu[who][r] = s->ctxt[who][r] = 0;
		s->calls[who][r] = s->wpe[who][r] = s->ref[who][r] = 0;
		if ((who == R_RING && ring_err) || !reader_on(who)) {
			s->v[who][r] = 0;
			continue;
		}
		s->v[who][r] = run_reader(who, dev, seconds, type);
		s->cpu[who][r] = last_cpu_ns;
		s->wcpu[who][r] = last_wcpu_ns;
		s->scpu[who][r] = last_scpu_ns;
		s->ctxt[who][r] = last_ctxt;
		s->calls[who][r] = last_calls;
		s->wpe[who][r] = last_wpe;
		s->ref[who][r] = last_refused;
		s->tot[who] += s->v[who][r] > 0 ? last_events : 0;
		if (s->v[who][r] >= 0)
			continue;
		if (who != R_RING) {
			fprintf(stderr, "bench-epoll2006: kevent at N=%d: %s\n", n,
				strerror((int)-s->v[who][r]));
			return 1;
		}
		ring_err = (int)-s->v[who][r];
		s->v[who][r] = 0;
		printf("# revision-2 ring not measured on this backend: kevent_init: %s\n",
		       strerror(ring_err));
	}
	return 0;
}

/*
 * N=n's lines from its runs: medians of the rates and costs, and the
 * per-round ratios ring/LT, ring/ET, kevent/LT, kevent/ET (both readers of
 * a ratio ran in the same round, so under the same load).
 */
static void report(const char *be, struct nsamples *s, int n, int runs, __u32 type, double *base)
{
	double rl[MAX_RUNS], re[MAX_RUNS], kl[MAX_RUNS], ke[MAX_RUNS];
	double m[NREADERS], mc[NREADERS], mw[NREADERS], ms[NREADERS], mx[NREADERS];
	double mk[NREADERS], mp[NREADERS], mr[NREADERS];
	double (*v)[MAX_RUNS] = s->v;
	unsigned long long *tot = s->tot;

	for (int r = 0; r < runs; r++) {
		rl[r] = v[R_LT][r] > 0 ? v[R_RING][r] / v[R_LT][r] : 0;
		re[r] = v[R_ET][r] > 0 ? v[R_RING][r] / v[R_ET][r] : 0;
		kl[r] = v[R_LT][r] > 0 ? v[R_KEVENT][r] / v[R_LT][r] : 0;
		ke[r] = v[R_ET][r] > 0 ? v[R_KEVENT][r] / v[R_ET][r] : 0;
	}
	/* bench_median sorts in place: the per-round ratios are taken above. */
	for (int k = 0; k < NREADERS; k++) {
		m[k] = bench_median(v[k], runs);
		mc[k] = bench_median(s->cpu[k], runs);
		mw[k] = bench_median(s->wcpu[k], runs);
		ms[k] = bench_median(s->scpu[k], runs);
		mx[k] = bench_median(s->ctxt[k], runs);
		mk[k] = bench_median(s->calls[k], runs);
		mp[k] = bench_median(s->wpe[k], runs);
		mr[k] = bench_median(s->ref[k], runs);
	}
	if (*base == 0 && m[R_KEVENT] > 0)
		*base = 1e9 / m[R_KEVENT];
	printf("N=%-5d %-6s epoll LT %9.0f  ET %9.0f  kevent %9.0f (%s)  kevent/LT %.2f  kevent/ET %.2f  ns/event %.0f (%.2fx smallest N)\n",
	       n, be, m[R_LT], m[R_ET], m[R_KEVENT], type == KEVENT_SOCKET ? "socket" : "poll",
	       m[R_KEVENT] / m[R_LT], m[R_KEVENT] / m[R_ET], 1e9 / m[R_KEVENT],
	       1e9 / m[R_KEVENT] / *base);
	if (!ring_err)
		printf("N=%-5d %-6s ring %9.0f  ring/LT %.2f  ring/ET %.2f  ring/kevent %.2f  (per-round medians: ring/LT %.2f  ring/ET %.2f)\n",
		       n, be, m[R_RING], m[R_RING] / m[R_LT], m[R_RING] / m[R_ET],
		       m[R_RING] / m[R_KEVENT], bench_median(rl, runs), bench_median(re, runs));
	printf("N=%-5d %-6s reader CPU ns/event: epoll LT %.0f  ET %.0f  kevent %.0f  ring %.0f\n",
	       n, be, mc[R_LT], mc[R_ET], mc[R_KEVENT], mc[R_RING]);
	printf("row %s %d %.0f %.0f %.0f %.0f\n", be, n, m[R_LT], m[R_ET], m[R_KEVENT], m[R_RING]);
	printf("cpu %s %d %.0f %.0f %.0f %.0f\n", be, n, mc[R_LT], mc[R_ET], mc[R_KEVENT], mc[R_RING]);
	printf("N=%-5d %-6s per-round medians: kevent/LT %.2f  kevent/ET %.2f\n", n, be,
	       bench_median(kl, runs), bench_median(ke, runs));
	printf("rounds %s %d %.3f %.3f\n", be, n, bench_median(kl, runs), bench_median(ke, runs));
	printf("N=%-5d %-6s writer CPU ns/event: epoll LT %.0f  ET %.0f  kevent %.0f  ring %.0f\n",
	       n, be, mw[R_LT], mw[R_ET], mw[R_KEVENT], mw[R_RING]);
	printf("N=%-5d %-6s machine busy CPU ns/event: epoll LT %.0f  ET %.0f  kevent %.0f  ring %.0f\n",
	       n, be, ms[R_LT], ms[R_ET], ms[R_KEVENT], ms[R_RING]);
	printf("N=%-5d %-6s context switches/event: epoll LT %.2f  ET %.2f  kevent %.2f  ring %.2f\n",
	       n, be, mx[R_LT], mx[R_ET], mx[R_KEVENT], mx[R_RING]);
	printf("wcpu %s %d %.0f %.0f %.0f %.0f\n", be, n, mw[R_LT], mw[R_ET], mw[R_KEVENT], mw[R_RING]);
	printf("scpu %s %d %.0f %.0f %.0f %.0f\n", be, n, ms[R_LT], ms[R_ET], ms[R_KEVENT], ms[R_RING]);
	printf("ctxt %s %d %.3f %.3f %.3f %.3f\n", be, n, mx[R_LT], mx[R_ET], mx[R_KEVENT], mx[R_RING]);
	printf("calls %s %d %.3f %.3f %.3f %.3f\n", be, n, mk[R_LT], mk[R_ET], mk[R_KEVENT], mk[R_RING]);
	printf("writes %s %d %.3f %.3f %.3f %.3f\n", be, n, mp[R_LT], mp[R_ET], mp[R_KEVENT], mp[R_RING]);
	printf("refused %s %d %.3f %.3f %.3f %.3f\n", be, n, mr[R_LT], mr[R_ET], mr[R_KEVENT], mr[R_RING]);
	printf("events %s %d %llu %llu %llu %llu\n", be, n, tot[R_LT], tot[R_ET], tot[R_KEVENT], tot[R_RING]);
	fflush(stdout);
}

/*
 * Every run at every N.  By default the N interleave: run r goes through
 * them forward when r is even and backward when it is odd (100, 1,000,
 * 2,000, 4,000, then 4,000 ... 100), so a drift of the host's load over
 * the benchmark falls on every N alike instead of showing as a growth with
 * N; the lines of every N print at the end.  KEVENT_E2006_SEQUENTIAL=1 runs
 * all the runs of one N before the next and prints its lines as it ends
 * (for profiling one N at a time, bench/sockets/guest-profile.sh).
 */
static int run_all(const char *dev, const char *be, const int *ns, int nn, int runs,
		   double seconds)
{
	const char *seq = getenv("KEVENT_E2006_SEQUENTIAL");
	__u32 type = pick_type(dev);
	double base = 0;

	if (seq && *seq == '1') {
		for (int i = 0; i < nn; i++) {
			for (int r = 0; r < runs; r++)
				if (measure_run(dev, &res[i], ns[i], r, seconds, type))
					return 1;
			report(be, &res[i], ns[i], runs, type, &base);
		}
		return 0;
	}
	for (int r = 0; r < runs; r++)
		for (int j = 0; j < nn; j++) {
			int i = r % 2 ? nn - 1 - j : j;

			if (measure_run(dev, &res[i], ns[i], r, seconds, type))
				return 1;
		}
	for (int i = 0; i < nn; i++)
		report(be, &res[i], ns[i], runs, type, &base);
	return 0;
}

int main(int argc, char **argv)
{
	const char *dev = bench_device();
	int runs = argc > 1 ? atoi(argv[1]) : 5, ns[MAX_NS] = { 100, 1000, 2000, 4000 }, nn = 4;
	double seconds = argc > 2 ? atof(argv[2]) : 1.0;
	struct kevent_info info;

	if (argc > 3) {
		nn = 0;
		for (int i = 3; i < argc && nn < MAX_NS; i++)
			if (atoi(argv[i]) >= 1 && atoi(argv[i]) <= MAX_N)
				ns[nn++] = atoi(argv[i]);
	}
	if (runs < 1 || runs > MAX_RUNS)
		runs = 5;
	if (bench_probe(dev, &info, "bench-epoll2006"))
		return 77;
	if (bench_open_pairs(sv, MAX_N, "bench-epoll2006"))
		return 1;
	printf("# 2006 epoll_bench shape on %s (%s): AF_UNIX pairs, one random writer, %d interleaved runs of %.1f s per reader, batch %d\n",
	       dev, bench_backend_name(info.backend), runs, seconds, BATCH);
	printf("# 2006 reference (not this machine): kevent 59794, epoll LT 57428, epoll ET 78265 events/s\n");
	return run_all(dev, bench_backend_name(info.backend), ns, nn, runs, seconds);
}
