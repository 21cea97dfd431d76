// SPDX-License-Identifier: GPL-2.0
/*
 * kevent-device-fuzz: random and mutated ioctl sequences at any /dev/kevent
 * (the CUSE daemon or the module), then a health check.  It cannot see
 * inside the backend, so it checks what a client can: no call hangs, the
 * backend answers a fresh queue correctly afterwards, and the live-object
 * counters INFO reports are back to what they were before (and the
 * daemon's open-fd count, when its pid is given).  Where INFO says
 * revision 2 is served, a quarter of the steps are its calls: SET_ABI(2)
 * or the highest revision, RING_INIT, WAIT, COMMIT, CTL READY and the
 * timespec GET_EVENTS; entries carry DISPATCH now and then (D65).
 *
 *   kevent-device-fuzz [-d DEV] [-n ITERATIONS] [-s SEED] [-p DAEMON_PID]
 *
 * DEV defaults to $KEVENT_DEVICE, else /dev/kevent.  Without -n and -s it
 * makes a short deterministic run (DEFAULT_ITERATIONS, DEFAULT_SEED): what
 * every guest boot runs, so a failure replays with the same sequence; a
 * campaign gives its own (-s with the time, say).  Without -p it finds a
 * kevent-cuse process itself.  A progress line every tenth of the run
 * says how far a run that was killed got.  Exit 0: the backend
 * survived and a fresh queue works; 1: a check failed; 77: no device.
 * Nothing here waits for more than KF_MAX_WAIT_MS per call, so a hang is a
 * backend bug (run it under timeout(1)).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/kevent.h>

#define NFD		4
#define MAX_NUM		64		/* entries in a sane array */
#define KF_MAX_WAIT_MS	20
#define DEFAULT_ITERATIONS 500
#define DEFAULT_SEED	1
#define UKSZ		sizeof(struct ukevent)

static const char *dev;
/* INFO's abi_revision at start: the highest SET_ABI revision served (A12). */
static __u32 rev_highest;
static int fds[NFD] = { -1, -1, -1, -1 };
static int pipefd[2] = { -1, -1 };
static unsigned char *page_rw, *page_ro, *page_gone;	/* user memory of every kind */
static long pagesz;
static unsigned long long rng_state;
static unsigned long calls, errors_seen[160];
/* Per KEVENT_IOC_NR_*: calls that succeeded, and those that returned > 0. */
static unsigned long nr_ok[KEVENT_IOC_NR_COMMIT + 1], nr_pos[KEVENT_IOC_NR_COMMIT + 1];
/* Any wrapper struct: as large as _IOC_SIZE can say, so no size overruns it. */
static unsigned char big[0x4000 + 64];

static unsigned int rnd(unsigned int n)
{
	/* xorshift64*: reproducible from -s, no libc state */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return n ? (unsigned int)((rng_state * 2685821657736338717ull) >> 33) % n : 0;
}

static void die(const char *what)
{
	fprintf(stderr, "kevent-device-fuzz: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void fail(const char *what)
{
	fprintf(stderr, "kevent-device-fuzz: FAIL: %s\n", what);
	exit(1);
}

static long do_ioctl(int fd, unsigned long cmd, void *arg)
{
	long r = ioctl(fd, cmd, arg);

	calls++;
	if (r < 0 && errno > 0 && errno < 160)
		errors_seen[errno]++;
	if (r >= 0 && _IOC_TYPE(cmd) == KEVENT_IOC_MAGIC && _IOC_NR(cmd) <= KEVENT_IOC_NR_COMMIT) {
		nr_ok[_IOC_NR(cmd)]++;
		nr_pos[_IOC_NR(cmd)] += r > 0;
	}
	return r;
}

/* ---- user memory: valid, read-only, unmapped, misaligned, NULL ---- */

static void setup_memory(void)
{
	pagesz = sysconf(_SC_PAGESIZE);
	/* 64 usable pages, then 64 of guard: an overrun faults, never corrupts us */
	page_rw = mmap(NULL, 128 * pagesz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page_rw != MAP_FAILED && mprotect(page_rw + 64 * pagesz, 64 * pagesz, PROT_NONE))
		die("mprotect");
	page_ro = mmap(NULL, pagesz, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	page_gone = mmap(NULL, pagesz, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page_rw == MAP_FAILED || page_ro == MAP_FAILED || page_gone == MAP_FAILED)
		die("mmap");
	munmap(page_gone, pagesz);
	if (pipe(pipefd))
		die("pipe");
}

static __u64 pick_addr(size_t len)
{
	switch (rnd(10)) {
	case 0:
		return 0;
	case 1:
		return (__u64)(uintptr_t)page_ro;
	case 2:
		return (__u64)(uintptr_t)page_gone;
	case 3:	/* runs off the end of the mapping */
		return (__u64)(uintptr_t)(page_rw + 64 * pagesz - UKSZ / 2);
	case 4:
		return ~0ull - 7;
	default:	/* misaligned or not, inside */
		return (__u64)(uintptr_t)(page_rw + rnd((unsigned int)(32 * pagesz - len)));
	}
}

/*
 * A ukevent array that is mostly sane, so calls get past the whole-call
 * checks.  dst may be misaligned on purpose: each entry is built aligned
 * and copied (a misaligned store is undefined behaviour, and UBSan says so).
 */
static void fill_ukevents(void *dst, unsigned int n)
{
	struct ukevent uk;
	unsigned int i;

	for (i = 0; i < n; i++) {
		memset(&uk, 0, sizeof(uk));
		uk.type = rnd(4) ? (rnd(2) ? KEVENT_TIMER : KEVENT_POLL) : rnd(8);
		uk.id.raw[0] = uk.type == KEVENT_POLL ? (__u32)pipefd[rnd(2)] : 1 + rnd(5);
		uk.id.raw[1] = rnd(3);
		uk.event = rnd(5) ? (uk.type == KEVENT_TIMER ? KEVENT_TIMER_FIRED :
				     KEVENT_POLL_POLLIN | KEVENT_POLL_POLLOUT) : rnd(0x10000);
		/* D65: DISPATCH on its own too, so revision-4 queues disarm and re-arm */
		uk.req_flags = rnd(3) ? 0 : rnd(3) == 0 ? KEVENT_REQ_ONESHOT :
			       rnd(2) ? KEVENT_REQ_DISPATCH : rnd(0x1000);
		uk.user[0] = rnd(4);
		memcpy((char *)dst + (size_t)i * sizeof(uk), &uk, sizeof(uk));
	}
}

/* ---- the operations ---- */

static int any_fd(void)
{
	int i = (int)rnd(NFD);

	if (fds[i] < 0)
		fds[i] = open(dev, rnd(4) ? O_RDWR : O_RDONLY | O_NONBLOCK);
	return fds[i];
}

static unsigned int pick_size(unsigned int ver0)
{
	switch (rnd(12)) {
	case 0:
		return rnd(ver0);		/* short */
	case 1:
		return ver0 + 1 + rnd(64);	/* longer, tail may be dirty */
	case 2:
		return KEVENT_IOC_ARG_MAX + rnd(3);
	case 3:
		return rnd(0x4000);
	default:
		return ver0;
	}
}

/*
 * Revision 3 (D58-D62): 80-byte entries, POSIX timers with mostly sane and
 * sometimes wild settings, user events; short timers fire while the
 * program runs.
 */
static void fill_ext(void *dst, unsigned int n)
{
	struct ukevent_ext e;
	unsigned int i;

	for (i = 0; i < n; i++) {
		memset(&e, 0, sizeof(e));
		fill_ukevents(&e.ev, 1);
		if (rnd(2))
			e.ev.type = rnd(2) ? KEVENT_POSIX_TIMER : KEVENT_USER;
		if (e.ev.type == KEVENT_POSIX_TIMER && rnd(4)) {
			e.ev.event = KEVENT_TIMER_FIRED;
			e.ext.timer.clock = rnd(3) ? KEVENT_CLOCK_MONOTONIC :
					    (rnd(2) ? KEVENT_CLOCK_REALTIME : KEVENT_CLOCK_BOOTTIME);
			e.ext.timer.flags = rnd(4) ? 0 : KEVENT_TIMER_ABSTIME;
			e.ext.timer.value.tv_nsec = rnd(5) ? 100000 * (1 + rnd(50)) : 0;
			e.ext.timer.interval.tv_nsec = rnd(2) ? 100000 * rnd(30) : 0;
		} else if (!rnd(4)) {
			e.ext.__raw[rnd(5)] = (__u64)rnd(0x10000) << rnd(48);
		}
		memcpy((char *)dst + (size_t)i * sizeof(e), &e, sizeof(e));
	}
}

static void op_ctl_ext(int fd)
{
	struct kevent_ctl_ext_arg a;
	unsigned int n = 1 + rnd(MAX_NUM / 2);
	struct ukevent_ext *e = (void *)(page_rw + rnd(UKSZ) + 32 * pagesz);

	memset(&a, 0, sizeof(a));
	fill_ext(e, n);
	a.cmd = rnd(8) ? rnd(5) : rnd(10);
	a.num = rnd(10) ? n : (rnd(2) ? 4096 + rnd(3) : 1638 + rnd(2));
	a.events = rnd(6) ? (__u64)(uintptr_t)e : pick_addr(n * sizeof(*e));
	a.ioc_flags = rnd(8) ? KEVENT_CTL_EXT : rnd(4);
	a.__pad = rnd(16) ? 0 : 1;
	do_ioctl(fd, KEVENT_IOC_CTL_EXT, &a);
}

static void op_ctl(int fd)
{
	struct kevent_ctl_arg *a = (void *)big;
	unsigned int size = pick_size(KEVENT_CTL_ARG_SIZE_VER0), n = 1 + rnd(MAX_NUM);
	struct ukevent *uk = (void *)(page_rw + rnd(UKSZ) + 32 * pagesz);

	if (!rnd(4)) {
		op_ctl_ext(fd);
		return;
	}
	memset(big, 0, sizeof(big));
	size &= 0x3fff;
	fill_ukevents(uk, n);
	a->cmd = rnd(8) ? rnd(3) : rnd(10);
	a->num = rnd(10) ? n : (rnd(2) ? 4096 + rnd(3) : 3276 + rnd(2));
	a->events = rnd(6) ? (__u64)(uintptr_t)uk : pick_addr(n * UKSZ);
	if (size > sizeof(*a) && !rnd(3))
		big[size - 1] = (unsigned char)rnd(256);
	do_ioctl(fd, _IOC(_IOC_WRITE, KEVENT_IOC_MAGIC, KEVENT_IOC_NR_CTL, size), big);
}

static void op_get(int fd)
{
	struct kevent_get_events_arg a = { 0 };
	unsigned int max = rnd(MAX_NUM + 1);

	memset(big, 0, sizeof(big));
	a.max_nr = rnd(12) ? max : 4096 + rnd(10000);
	a.min_nr = rnd(3) ? 0 : rnd(max + 2);
	a.timeout_ns = rnd(2) ? 0 : (__u64)rnd(KF_MAX_WAIT_MS) * 1000000;
	a.events = rnd(5) ? (__u64)(uintptr_t)page_rw : pick_addr(max * UKSZ);
	a.flags = rnd(4) ? 0 : rnd(0x10000);
	a.ioc_flags = rnd(6) ? KEVENT_GET_NONBLOCK * rnd(2) : rnd(16);
	if (a.max_nr > MAX_NUM && a.events == (__u64)(uintptr_t)page_rw)
		a.max_nr = MAX_NUM;	/* page_rw holds 64 pages: never overrun */
	memcpy(big, &a, sizeof(a));
	do_ioctl(fd, rnd(8) ? KEVENT_IOC_GET_EVENTS :
		 _IOC(_IOC_WRITE, KEVENT_IOC_MAGIC, KEVENT_IOC_NR_GET_EVENTS,
		      pick_size(KEVENT_GET_EVENTS_ARG_SIZE_VER0) & 0x3fff),
		 rnd(20) ? (void *)big : (void *)page_gone);
}

static void op_other(int fd)
{
	unsigned char *buf = big;
	struct kevent_set_abi *s = (void *)buf;
	struct kevent_fault *f = (void *)buf;
	void *ring;

	memset(buf, 0, sizeof(big));
	switch (rnd(7)) {
	case 0:
		do_ioctl(fd, KEVENT_IOC_INFO, buf);
		break;
	case 1:
		do_ioctl(fd, _IOC(_IOC_READ, KEVENT_IOC_MAGIC, KEVENT_IOC_NR_INFO,
				  pick_size(KEVENT_INFO_SIZE_VER0) & 0x3fff),
			 rnd(10) ? (void *)buf : (void *)page_ro);
		break;
	case 2:
		do_ioctl(fd, KEVENT_IOC_RING_SHM, buf);
		break;
	case 3:
		/* mostly a served revision, sometimes one outside 1..highest */
		s->revision = rnd(4) ? 1 + rnd(rev_highest) : rnd(2) ? 0 : rev_highest + 1;
		s->flags = rnd(3);
		do_ioctl(fd, KEVENT_IOC_SET_ABI, buf);
		break;
	case 4:	/* any number at all */
		do_ioctl(fd, (unsigned long)rnd(0xffffffffu) | (rnd(2) ? 0xbe00u : 0), buf);
		break;
	case 5:	/* ENOTTY unless the backend was started with fault injection */
		f->kind = rnd(3);
		f->skip = rnd(8);
		do_ioctl(fd, KEVENT_IOC_FAULT, buf);
		break;
	default:
		ring = mmap(NULL, KEVENT_RING_SIZE, PROT_READ, MAP_SHARED, fd, 0);
		if (ring != MAP_FAILED)
			munmap(ring, KEVENT_RING_SIZE);
		break;
	}
}

/* ---- revision 2 (docs/abi.md D40-D57) ---- */

/* A timespec and KEVENT_FLAGS_* that never wait past KF_MAX_WAIT_MS. */
static void pick_timeout(struct kevent_timespec *ts, __u32 *flags, __u32 *ioc_flags)
{
	struct timespec now;
	__u64 ns = (__u64)rnd(KF_MAX_WAIT_MS) * 1000000;

	memset(ts, 0, sizeof(*ts));
	*flags = 0;
	switch (rnd(8)) {
	case 0:	/* absolute, on the clock the flags name */
	case 1:
		*flags = KEVENT_FLAGS_ABSTIME | (rnd(2) ? KEVENT_FLAGS_MONOTONIC : 0);
		clock_gettime(*flags & KEVENT_FLAGS_MONOTONIC ? CLOCK_MONOTONIC : CLOCK_REALTIME,
			      &now);
		ns += (__u64)now.tv_sec * 1000000000ull + (__u64)now.tv_nsec;
		break;
	case 2:	/* none: only with NONBLOCK, so it never blocks */
		*flags = KEVENT_FLAGS_NO_TIMEOUT;
		*ioc_flags |= KEVENT_GET_NONBLOCK;
		return;
	case 3:	/* anything at all (mostly EINVAL, a few past deadlines) */
		*flags = rnd(16);
		ts->tv_sec = rnd(3) ? 0 : (__s64)rnd(3) - 1;
		ts->tv_nsec = rnd(2) ? rnd(1000) : 999999999u + rnd(3);
		ts->__pad = !rnd(8);
		if (*flags & ~(__u32)KEVENT_FLAGS_ABSTIME)
			*ioc_flags |= KEVENT_GET_NONBLOCK;
		return;
	default:
		break;
	}
	ts->tv_sec = (__s64)(ns / 1000000000ull);
	ts->tv_nsec = (__u32)(ns % 1000000000ull);
}

/* Where rings live: page_rw's pages 40..55, clear of the CTL and GET arrays. */
static __u64 ring_addr(unsigned int num)
{
	if (!rnd(8))
		return pick_addr(KEVENT_URING_SIZE(num));
	return (__u64)(uintptr_t)(page_rw + 40 * pagesz + (rnd(8) ? 0 : 8 * rnd(4) + rnd(2) * 4));
}

static void op_rev2(int fd)
{
	struct kevent_ring_init ri = { 0 };
	struct kevent_wait_arg w = { 0 };
	struct kevent_commit_arg c = { 0 };
	struct kevent_get_events_arg g = { 0 };
	struct kevent_ctl_arg *a = (void *)big;
	struct kevent_set_abi sa = { 0 };
	struct ukevent *uk = (void *)(page_rw + 32 * pagesz);
	unsigned int n = rnd(MAX_NUM + 1);

	switch (rnd(6)) {
	case 0:	/* most queues get past D40: revision 2, or the highest (D66) */
		sa.revision = rnd(8) ? (rnd(2) ? 2 : rev_highest) : 1 + rnd(rev_highest + 1);
		do_ioctl(fd, KEVENT_IOC_SET_ABI, &sa);
		break;
	case 1:
		ri.num = rnd(8) ? 2 + rnd(255) : rnd(3) ? rnd(2) : KEVENT_URING_MAX + rnd(2);
		ri.ring = rnd(10) ? ring_addr(ri.num < 256 ? ri.num : 256) : 0;
		ri.flags = rnd(10) ? 0 : 1 + rnd(4);
		do_ioctl(fd, KEVENT_IOC_RING_INIT, &ri);
		break;
	case 2:
		w.num = rnd(10) ? n : ~0u - rnd(2);
		w.old_uidx = rnd(3) ? rnd(4) : rnd(0x10000);
		w.ioc_flags = rnd(6) ? KEVENT_GET_NONBLOCK * rnd(2) : rnd(8);
		pick_timeout(&w.timeout, &w.flags, &w.ioc_flags);
		do_ioctl(fd, rnd(10) ? KEVENT_IOC_WAIT :
			 _IOC(_IOC_WRITE, KEVENT_IOC_MAGIC, KEVENT_IOC_NR_WAIT,
			      pick_size(KEVENT_WAIT_ARG_SIZE_VER0) & 0x3fff), &w);
		break;
	case 3:
		c.new_uidx = rnd(4) ? rnd(8) : rnd(0x10000);
		c.over = rnd(4) ? rnd(3) : rnd(0x10000);
		do_ioctl(fd, KEVENT_IOC_COMMIT, &c);
		break;
	case 4:	/* READY, of listed kevents or (num 0) a wake (D49, D50) */
		memset(big, 0, sizeof(big));
		fill_ukevents(uk, n ? n : 1);
		a->cmd = KEVENT_CTL_READY;
		a->num = rnd(3) ? n : 0;
		a->events = rnd(6) ? (__u64)(uintptr_t)uk : pick_addr(n * UKSZ);
		do_ioctl(fd, KEVENT_IOC_CTL, a);
		break;
	default:	/* GET_EVENTS VER1 with a timespec (D48) */
		g.max_nr = n;
		g.min_nr = rnd(3) ? 0 : rnd(n + 2);
		g.events = rnd(5) ? (__u64)(uintptr_t)page_rw : pick_addr(n * UKSZ);
		g.ioc_flags = KEVENT_GET_TIMESPEC | (rnd(6) ? KEVENT_GET_NONBLOCK * rnd(2) : rnd(8));
		g.timeout_ns = rnd(20) ? 0 : rnd(1000);
		pick_timeout(&g.timeout_ts, &g.flags, &g.ioc_flags);
		do_ioctl(fd, rnd(10) ? KEVENT_IOC_GET_EVENTS :
			 _IOC(_IOC_WRITE, KEVENT_IOC_MAGIC, KEVENT_IOC_NR_GET_EVENTS,
			      KEVENT_GET_EVENTS_ARG_SIZE_VER0), &g);
		break;
	}
}

/* A child that uses the inherited queues for a moment, then exits. */
static void op_fork(void)
{
	pid_t pid = fork();
	int i, st;

	if (pid < 0)
		return;
	if (!pid) {
		for (i = 0; i < 20; i++)
			op_ctl(any_fd());
		_exit(0);
	}
	if (rnd(2))
		waitpid(pid, &st, 0);	/* else reaped later, maybe after a close */
}

/* Where the time goes, per kind of step: a slow backend path shows here. */
enum { K_CLOSE, K_FORK, K_WRITE, K_OTHER, K_GET, K_CTL, K_REV2, K_NR };
static const char *const kind_name[K_NR] = { "close", "fork", "pipe write", "other", "get", "ctl",
					      "rev2" };
static double kind_secs[K_NR];
static unsigned long kind_steps[K_NR];

static double now_secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int step_kind(unsigned int r)
{
	if (r == 0)
		return K_CLOSE;
	if (r == 1)
		return K_FORK;
	if (r == 2)
		return K_WRITE;
	if (r <= 5)
		return K_OTHER;
	if (r <= 10)
		return K_GET;
	return r <= 19 ? K_CTL : K_REV2;	/* 20..25: revision 2 is served */
}

static void one_step(void)
{
	int fd = any_fd(), i = (int)rnd(NFD), kind;
	double t0;

	if (fd < 0)
		return;
	kind = step_kind(rnd(rev_highest >= 2 ? 26 : 20));
	t0 = now_secs();
	switch (kind) {
	case K_CLOSE:
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
		break;
	case K_FORK:
		op_fork();
		break;
	case K_WRITE:
		if (write(pipefd[1], "x", 1) < 0 && errno != EAGAIN)
			die("write");
		break;
	case K_OTHER:
		op_other(fd);
		break;
	case K_GET:
		op_get(fd);
		break;
	case K_REV2:
		op_rev2(fd);
		break;
	default:
		op_ctl(fd);
		break;
	}
	kind_secs[kind] += now_secs() - t0;
	kind_steps[kind]++;
}

/* ---- checks ---- */

static int count_fds(pid_t pid)
{
	char path[64];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static int info_of(int fd, struct kevent_info *info)
{
	memset(info, 0, sizeof(*info));
	return (int)ioctl(fd, KEVENT_IOC_INFO, info);
}

/* A fresh queue works: INFO, a 1 ms ONESHOT timer, its event within 2 s. */
static void check_fresh_queue(void)
{
	struct ukevent uk = { 0 };
	struct kevent_ctl_arg c = { KEVENT_CTL_ADD, 1, (__u64)(uintptr_t)&uk };
	struct kevent_get_events_arg g = { 1, 1, 2000000000ull, (__u64)(uintptr_t)&uk, 0, 0 };
	struct kevent_info info;
	int fd = open(dev, O_RDWR);

	if (fd < 0)
		die("open of a fresh queue");
	if (info_of(fd, &info) || info.abi_revision != rev_highest ||
	    info.queue_kevents)
		fail("INFO on a fresh queue");
	uk.type = KEVENT_TIMER;
	uk.event = KEVENT_TIMER_FIRED;
	uk.req_flags = KEVENT_REQ_ONESHOT;
	uk.id.raw[0] = 1;
	uk.user[0] = 0xfeed;
	if (ioctl(fd, KEVENT_IOC_CTL, &c) != 0)
		fail("ADD of a timer on a fresh queue");
	memset(&uk, 0, sizeof(uk));
	if (ioctl(fd, KEVENT_IOC_GET_EVENTS, &g) != 1 || uk.user[0] != 0xfeed ||
	    !(uk.ret_flags & KEVENT_RET_DONE))
		fail("the timer of a fresh queue did not fire");
	close(fd);
}

/* The backend's live objects, seen from a queue of our own (counted too). */
static void live_objects(struct kevent_info *info)
{
	int fd = open(dev, O_RDONLY);

	if (fd < 0 || info_of(fd, info))
		die("INFO");
	close(fd);
}

static bool back_to(const struct kevent_info *before, const struct kevent_info *after,
		    pid_t daemon, int fds_before)
{
	return after->live_queues <= before->live_queues &&
	       after->live_kevents <= before->live_kevents &&
	       after->live_waiters <= before->live_waiters &&
	       (!daemon || count_fds(daemon) <= fds_before);
}

static void close_all(void)
{
	int i, st;

	for (i = 0; i < NFD; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
	while (waitpid(-1, &st, 0) > 0)
		;
}

/* The kevent-cuse process, if there is one (0: none, e.g. the module). */
static pid_t find_daemon(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t pid = 0;

	while (d && !pid && (de = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strcmp(comm, "kevent-cuse\n"))
			pid = (pid_t)atoi(de->d_name);
		fclose(f);
	}
	if (d)
		closedir(d);
	return pid;
}

int main(int argc, char **argv)
{
	unsigned long iterations = DEFAULT_ITERATIONS, i;
	struct kevent_info before, after;
	pid_t daemon = 0;
	int opt, fd, fds_before = -1, tries;

	dev = getenv("KEVENT_DEVICE") ? getenv("KEVENT_DEVICE") : "/dev/kevent";
	rng_state = DEFAULT_SEED;
	while ((opt = getopt(argc, argv, "d:n:s:p:")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'n': iterations = strtoul(optarg, NULL, 0); break;
		case 's': rng_state = strtoull(optarg, NULL, 0) | 1; break;
		case 'p': daemon = (pid_t)atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-d DEV] [-n N] [-s SEED] [-p DAEMON_PID]\n",
				argv[0]);
			return 2;
		}
	}
	printf("kevent-device-fuzz: %s, %lu iterations, seed %llu\n", dev, iterations, rng_state);
	fd = open(dev, O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "kevent-device-fuzz: %s: %s (skipped)\n", dev, strerror(errno));
		return 77;
	}
	close(fd);
	if (!daemon)
		daemon = find_daemon();
	live_objects(&before);
	rev_highest = before.abi_revision;
	if (rev_highest < 1)
		die("INFO abi_revision 0: a backend serves revision 1 at least");
	if (daemon)
		fds_before = count_fds(daemon);
	signal(SIGPIPE, SIG_IGN);
	setup_memory();
	fcntl(pipefd[1], F_SETFL, O_NONBLOCK);
	for (i = 0; i < iterations; i++) {
		one_step();
		if (iterations >= 10 && (i + 1) % (iterations / 10) == 0) {
			printf("kevent-device-fuzz: step %lu/%lu, %lu calls\n", i + 1, iterations, calls);
			fflush(stdout);
		}
	}
	close_all();
	check_fresh_queue();
	/* Releases are asynchronous on CUSE: give the daemon a moment. */
	for (tries = 0; tries < 50; tries++) {
		live_objects(&after);
		if (back_to(&before, &after, daemon, fds_before))
			break;
		usleep(100000);
	}
	printf("kevent-device-fuzz: %lu calls; live queues %llu -> %llu, kevents %llu -> %llu,"
	       " waiters %llu -> %llu\n", calls,
	       (unsigned long long)before.live_queues, (unsigned long long)after.live_queues,
	       (unsigned long long)before.live_kevents, (unsigned long long)after.live_kevents,
	       (unsigned long long)before.live_waiters, (unsigned long long)after.live_waiters);
	for (i = 0; i < K_NR; i++)
		printf("  %-10s %5lu steps, %8.3f s\n", kind_name[i], kind_steps[i], kind_secs[i]);
	printf("  answered (> 0): ctl %lu (%lu), get %lu (%lu), set_abi %lu, ring_init %lu,"
	       " wait %lu (%lu), commit %lu (%lu)\n",
	       nr_ok[KEVENT_IOC_NR_CTL], nr_pos[KEVENT_IOC_NR_CTL],
	       nr_ok[KEVENT_IOC_NR_GET_EVENTS], nr_pos[KEVENT_IOC_NR_GET_EVENTS],
	       nr_ok[KEVENT_IOC_NR_SET_ABI], nr_ok[KEVENT_IOC_NR_RING_INIT],
	       nr_ok[KEVENT_IOC_NR_WAIT], nr_pos[KEVENT_IOC_NR_WAIT],
	       nr_ok[KEVENT_IOC_NR_COMMIT], nr_pos[KEVENT_IOC_NR_COMMIT]);
	for (i = 1; i < 160; i++)
		if (errors_seen[i])
			printf("  errno %lu (%s): %lu\n", i, strerror((int)i), errors_seen[i]);
	if (daemon)
		printf("kevent-device-fuzz: daemon fds %d -> %d\n", fds_before, count_fds(daemon));
	if (tries == 50)
		fail("live objects or daemon fds did not return to the baseline");
	printf("kevent-device-fuzz: PASS\n");
	return 0;
}
