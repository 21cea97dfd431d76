// SPDX-License-Identifier: GPL-2.0
/*
 * kmod-smoke: raw ioctls on /dev/kevent of the kernel module
 * (KEVENT_DEVICE overrides the path), depending on nothing but the uapi
 * header.  The client suite in client-tests/ is the conformance test and
 * runs on the module in every guest boot; this program keeps only what that
 * suite cannot express, each for the reason given:
 *
 *   cuse_device_refused   /dev/cuse and a CUSE device (KMOD_SMOKE_CUSE) as
 *                         POLL sources are refused (B3): a module-only
 *                         refusal (files owned by cuse.ko; the daemon takes
 *                         /dev/cuse) of a device the native fuse host lacks;
 *   teardown_under_fire   20 queues closed with 1 ms timers and ready
 *                         pipes live, and
 *   stress                four threads hammering CTL, GET_EVENTS and poll
 *                         while the fd is closed: races whose only verdict
 *                         is the guest's kernel log check (slub_debug, no
 *                         BUG or WARNING), not a client assertion;
 *   readonly_output       a read-only GET_EVENTS buffer is refused up front
 *                         with the event kept (D10): the module alone can
 *                         probe it, the daemon's paths differ (abi.md O7);
 *   compat_high_address and rev2_compat_ring (built -m32 as kmod-smoke32):
 *                         GET_EVENTS and RING_INIT addresses above 4 GiB
 *                         (D28), which client-m32 does not send (it pins
 *                         the CTL one).
 *
 * Off the module it exits 77: the client suite covers the daemon.  Prints
 * one "PASS|FAIL|SKIP <name> [reason]" line per test, then "N passed, N
 * failed, N skipped"; exit 0 only when nothing failed.  "kmod-smoke bench"
 * prints the per-ioctl cost and the GET_EVENTS batch-64 drain rate instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <pthread.h>
#include <linux/kevent.h>

static const char *dev;
static int npass, nfail, nskip;
static char why[256];
static struct kevent_info info0;

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			snprintf(why, sizeof(why), __VA_ARGS__);	\
			return -1;					\
		}							\
	} while (0)

#define SKIP(...)							\
	do {								\
		snprintf(why, sizeof(why), __VA_ARGS__);		\
		return 1;						\
	} while (0)

static int kopen(void)
{
	int fd = open(dev, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "open %s: %s\n", dev, strerror(errno));
		exit(2);
	}
	return fd;
}

static int ctl(int fd, unsigned int cmd, unsigned int num, struct ukevent *uk)
{
	struct kevent_ctl_arg a = { .cmd = cmd, .num = num,
				    .events = (uintptr_t)uk };
	int ret = ioctl(fd, KEVENT_IOC_CTL, &a);

	return ret < 0 ? -errno : ret;
}

static int getev(int fd, unsigned int min, unsigned int max, uint64_t ns,
		 struct ukevent *buf, unsigned int ioc_flags)
{
	struct kevent_get_events_arg a = { .min_nr = min, .max_nr = max,
					   .timeout_ns = ns,
					   .events = (uintptr_t)buf,
					   .ioc_flags = ioc_flags };
	int ret = ioctl(fd, KEVENT_IOC_GET_EVENTS, &a);

	return ret < 0 ? -errno : ret;
}

static int kinfo(int fd, struct kevent_info *info)
{
	memset(info, 0, sizeof(*info));
	return ioctl(fd, KEVENT_IOC_INFO, info) < 0 ? -errno : 0;
}

static struct ukevent mk(unsigned int type, uint32_t id0, uint32_t event,
			 uint32_t req, uint32_t cookie)
{
	struct ukevent uk;

	memset(&uk, 0, sizeof(uk));
	uk.id.raw[0] = id0;
	uk.type = type;
	uk.event = event;
	uk.req_flags = req;
	uk.user[0] = cookie;
	uk.user[1] = ~cookie;
	return uk;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* ------------------------------------------------------------------ */

/* B3: /dev/cuse (and KMOD_SMOKE_CUSE, a CUSE device) refused as a source. */
static int t_cuse_refused(void)
{
	const char *paths[2] = { "/dev/cuse", getenv("KMOD_SMOKE_CUSE") };
	struct ukevent uk;
	int fd = kopen(), i, xfd, tried = 0;

	for (i = 0; i < 2; i++) {
		if (!paths[i])
			continue;
		xfd = open(paths[i], O_RDWR | O_CLOEXEC);
		if (xfd < 0)
			continue;
		tried++;
		uk = mk(KEVENT_POLL, xfd, POLLIN, 0, 3);
		CHECK(ctl(fd, KEVENT_CTL_ADD, 1, &uk) == 1 && (int)uk.ret_data[1] == -EINVAL,
		      "%s not refused: %d", paths[i], (int)uk.ret_data[1]);
		printf("# refused %s\n", paths[i]);
		close(xfd);
	}
	close(fd);
	if (!tried)
		SKIP("no /dev/cuse to open");
	return 0;
}

/* teardown under fire: fast timers, ready pipes, close with all of it live */
static int t_teardown(void)
{
	int round, n;

	for (round = 0; round < 20; round++) {
		int fd = kopen(), p[2];
		struct ukevent uk[64];
		struct ukevent out[64];

		CHECK(pipe(p) == 0, "pipe");
		for (n = 0; n < 32; n++)
			uk[n] = mk(KEVENT_TIMER, 1, KEVENT_TIMER_FIRED, n & 1, n);
		for (; n < 64; n++)
			uk[n] = mk(KEVENT_POLL, p[0], POLLIN, n & 1, n);
		CHECK(ctl(fd, KEVENT_CTL_ADD, 64, uk) == 0, "ADD");
		CHECK(write(p[1], "x", 1) == 1, "write");
		usleep(2000);
		getev(fd, 1, 64, 1000000, out, 0);
		if (round & 1)
			CHECK(ctl(fd, KEVENT_CTL_REMOVE, 16, uk) == 0, "REMOVE");
		close(p[0]);
		close(p[1]);
		close(fd);
	}
	return 0;
}


/* Concurrency: CTL, GET_EVENTS, origin fires and fd closes at once. */
struct stress_arg {
	int fd, p[2];
	volatile int *stop;
	unsigned long ops;
};

static void *stress_ctl(void *v)
{
	struct stress_arg *a = v;
	struct ukevent uk[16];
	int i;

	while (!*a->stop) {
		for (i = 0; i < 16; i++)
			uk[i] = mk(KEVENT_TIMER, 1 + (i & 3), KEVENT_TIMER_FIRED,
				   i & 1 ? KEVENT_REQ_ONESHOT : 0, i);
		ctl(a->fd, KEVENT_CTL_ADD, 16, uk);
		for (i = 0; i < 16; i++)
			uk[i] = mk(KEVENT_TIMER, 1 + (i & 3), KEVENT_TIMER_FIRED,
				   i & 1 ? KEVENT_REQ_ONESHOT : 0, i);
		ctl(a->fd, KEVENT_CTL_MODIFY, 4, uk);
		ctl(a->fd, KEVENT_CTL_REMOVE, 16, uk);
		a->ops++;
	}
	return NULL;
}

static void *stress_get(void *v)
{
	struct stress_arg *a = v;
	struct ukevent out[64];

	while (!*a->stop) {
		getev(a->fd, 1 + (a->ops & 7), 64, 1000000, out, 0);
		a->ops++;
	}
	return NULL;
}

static void *stress_poll(void *v)
{
	struct stress_arg *a = v;
	struct ukevent uk[4];
	int p[2], i;

	while (!*a->stop) {
		if (pipe(p))
			break;
		for (i = 0; i < 4; i++)
			uk[i] = mk(KEVENT_POLL, p[i & 1], i & 1 ? POLLOUT : POLLIN,
				   i & 2 ? KEVENT_REQ_ONESHOT : 0, 100 + i);
		ctl(a->fd, KEVENT_CTL_ADD, 4, uk);
		if (write(p[1], "x", 1) != 1)
			break;
		/* the client closes while the kevents still watch */
		close(p[0]);
		close(p[1]);
		for (i = 0; i < 4; i++)
			uk[i] = mk(KEVENT_POLL, p[i & 1], i & 1 ? POLLOUT : POLLIN,
				   i & 2 ? KEVENT_REQ_ONESHOT : 0, 100 + i);
		if (a->ops & 1)
			ctl(a->fd, KEVENT_CTL_REMOVE, 1, uk);
		a->ops++;
	}
	return NULL;
}

static int t_stress(void)
{
	volatile int stop = 0;
	struct stress_arg a[4];
	pthread_t t[4];
	void *(*fn[4])(void *) = { stress_ctl, stress_get, stress_poll, stress_get };
	int round, i, fd;
	unsigned long ops = 0;

	for (round = 0; round < 3; round++) {
		fd = kopen();
		stop = 0;
		for (i = 0; i < 4; i++) {
			a[i] = (struct stress_arg){ .fd = fd, .stop = &stop };
			pthread_create(&t[i], NULL, fn[i], &a[i]);
		}
		usleep(700000);
		/* close while everything runs: the file lives until the ioctls end */
		if (round == 2)
			close(fd);
		stop = 1;
		for (i = 0; i < 4; i++) {
			pthread_join(t[i], NULL);
			ops += a[i].ops;
		}
		if (round != 2)
			close(fd);
	}
	CHECK(ops > 100, "only %lu operations", ops);
	return 0;
}

/* D10 and docs/abi.md O7: a read-only output range is refused up front. */
static int t_readonly_out(void)
{
	int fd = kopen();
	struct ukevent uk = mk(KEVENT_TIMER, 2, KEVENT_TIMER_FIRED, KEVENT_REQ_ONESHOT, 3);
	struct ukevent out[2];
	void *ro;
	int ret;

	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(ro != MAP_FAILED, "mmap");
	CHECK(ctl(fd, KEVENT_CTL_ADD, 1, &uk) == 0, "ADD");
	usleep(30000);
	ret = getev(fd, 1, 2, 0, ro, 0);
	CHECK(ret == -EFAULT, "read-only buffer: %d", ret);
	ret = getev(fd, 1, 2, 5000000000ull, out, 0);
	CHECK(ret == 1 && out[0].user[0] == 3, "event lost: %d", ret);
	munmap(ro, 4096);
	close(fd);
	return 0;
}

/* D28: a 32-bit caller's GET_EVENTS address above 4 GiB is -EFAULT. */
static int t_compat_addr(void)
{
	int fd = kopen();
	struct ukevent uk;
	struct kevent_get_events_arg g = { .min_nr = 0, .max_nr = 1 };

	if (sizeof(void *) != 4)
		SKIP("64-bit build");
	g.events = (1ull << 32) | (uintptr_t)&uk;
	CHECK(ioctl(fd, KEVENT_IOC_GET_EVENTS, &g) < 0 && errno == EFAULT,
	      "GET_EVENTS high address: %s", strerror(errno));
	close(fd);
	return 0;
}

/* ---- revision 2 --------------------------------------------------- */

static int kopen2(unsigned int flags)
{
	int fd = kopen();
	struct kevent_set_abi a = { .revision = 2, .flags = flags };

	if (ioctl(fd, KEVENT_IOC_SET_ABI, &a) < 0) {
		close(fd);
		return -errno;
	}
	return fd;
}

static int ring_init(int fd, void *ring, unsigned int num)
{
	struct kevent_ring_init a = { .ring = (uintptr_t)ring, .num = num };

	return ioctl(fd, KEVENT_IOC_RING_INIT, &a) < 0 ? -errno : 0;
}

static int kwait(int fd, unsigned int num, unsigned int old_uidx, int64_t sec,
		 uint32_t nsec, unsigned int flags)
{
	struct kevent_wait_arg a = { .num = num, .old_uidx = old_uidx,
				     .timeout = { .tv_sec = sec, .tv_nsec = nsec },
				     .flags = flags };
	int ret = ioctl(fd, KEVENT_IOC_WAIT, &a);

	return ret < 0 ? -errno : ret;
}

static int kcommit(int fd, unsigned int new_uidx, unsigned int over)
{
	struct kevent_commit_arg a = { .new_uidx = new_uidx, .over = over };
	int ret = ioctl(fd, KEVENT_IOC_COMMIT, &a);

	return ret < 0 ? -errno : ret;
}

/* D28 for the ring: a 32-bit caller's ring address above 4 GiB is -EFAULT. */
static int t_rev2_compat(void)
{
	int fd;
	struct kevent_ring_init a = { .num = 4 };
	static uint64_t ring[64];

	if (sizeof(void *) != 4)
		SKIP("64-bit build");
	fd = kopen2(0);
	CHECK(fd >= 0, "SET_ABI(2): %d", fd);
	a.ring = (1ull << 32) | (uintptr_t)ring;
	CHECK(ioctl(fd, KEVENT_IOC_RING_INIT, &a) < 0 && errno == EFAULT,
	      "RING_INIT high address: %s", strerror(errno));
	CHECK(ring_init(fd, ring, 4) == 0, "RING_INIT");
	CHECK(kwait(fd, 4, 0, 0, 0, 0) == 0, "WAIT, nothing ready");
	close(fd);
	return 0;
}

/* ------------------------------------------------------------------ */

static void run(const char *name, int (*fn)(void))
{
	int r;

	why[0] = 0;
	r = fn();
	if (r == 0) {
		npass++;
		printf("PASS %s\n", name);
	} else if (r > 0) {
		nskip++;
		printf("SKIP %s %s\n", name, why);
	} else {
		nfail++;
		printf("FAIL %s %s (errno %s)\n", name, why, strerror(errno));
	}
	fflush(stdout);
}

/* Each eventfd written once: N new edges for whatever watches them. */
static int bench_produce(const int *efd, int n)
{
	uint64_t one = 1;
	int i;

	for (i = 0; i < n; i++)
		if (write(efd[i], &one, 8) != 8)
			return -1;
	return 0;
}

static int bench_await_ready(int fd, int n)
{
	struct kevent_info info;
	int i;

	for (i = 0; i < 2000; i++) {
		kinfo(fd, &info);
		if (info.queue_ready == (uint32_t)n)
			return 0;
		usleep(1000);
	}
	return -1;
}

/* Revision 2: the same N eventfds drained through the ring, WAIT + COMMIT. */
static void bench_ring(const int *efd, int n, int batch, int rounds)
{
	enum { NUM = 4096 };
	struct kevent_uring *r = calloc(1, KEVENT_URING_SIZE(NUM));
	struct ukevent *uk = calloc(n, sizeof(*uk));
	uint64_t t0, drain = 0, events = 0;
	unsigned int uidx = 0;
	int fd = kopen2(0), i, k;

	if (fd < 0 || ring_init(fd, r, NUM)) {
		printf("bench ring: revision 2 not served (%d)\n", fd);
		return;
	}
	for (i = 0; i < n; i++) {
		uint64_t v;

		/* the GET_EVENTS bench left them readable: ready at ADD otherwise */
		if (read(efd[i], &v, sizeof(v)) < 0 && errno != EAGAIN)
			break;
		uk[i] = mk(KEVENT_POLL, efd[i], POLLIN, 0, i);
	}
	if (ctl(fd, KEVENT_CTL_ADD, n, uk) != 0) {
		printf("bench ring: ADD failed\n");
		return;
	}
	for (k = 0; k < rounds; k++) {
		int got = 0;

		if (bench_produce(efd, n) || bench_await_ready(fd, n))
			break;
		t0 = now_ns();
		while (got < n) {
			int m = kwait(fd, batch, uidx, 1, 0, 0);

			if (m <= 0)
				break;
			uidx = __atomic_load_n(&r->ring_kidx, __ATOMIC_ACQUIRE);
			if (kcommit(fd, uidx, __atomic_load_n(&r->ring_over, __ATOMIC_ACQUIRE)) != m)
				break;
			got += m;
		}
		drain += now_ns() - t0;
		events += got;
	}
	printf("bench WAIT+COMMIT batch %d: %.0f events/s (%llu events)\n",
	       batch, events / (drain / 1e9), (unsigned long long)events);
	close(fd);
	free(uk);
	free(r);
}

/* The same N eventfds, edge-triggered, drained with epoll_wait. */
static void bench_epoll(const int *efd, int n, int batch, int rounds)
{
	struct epoll_event ev[64], e = { .events = EPOLLIN | EPOLLET };
	uint64_t t0, drain = 0, events = 0;
	int ep = epoll_create1(EPOLL_CLOEXEC), i, k;

	if (batch > 64)
		batch = 64;
	for (i = 0; i < n; i++) {
		e.data.u32 = i;
		epoll_ctl(ep, EPOLL_CTL_ADD, efd[i], &e);
	}
	epoll_wait(ep, ev, 64, 0);
	for (k = 0; k < rounds; k++) {
		int got = 0;

		/* all N are ready once written: epoll's list fills in the write */
		while (epoll_wait(ep, ev, 64, 0) > 0)
			;
		if (bench_produce(efd, n))
			break;
		t0 = now_ns();
		while (got < n) {
			int m = epoll_wait(ep, ev, batch, 1000);

			if (m <= 0)
				break;
			got += m;
		}
		drain += now_ns() - t0;
		events += got;
	}
	printf("bench epoll_wait batch %d: %.0f events/s (%llu events)\n",
	       batch, events / (drain / 1e9), (unsigned long long)events);
	close(ep);
}

static int bench(void)
{
	enum { N = 1024, BATCH = 64, ROUNDS = 20, LOOPS = 10000 };
	int fd = kopen(), efd[N], i, r, got;
	struct ukevent *uk = calloc(N, sizeof(*uk)), out[BATCH];
	struct kevent_info info;
	uint64_t t0, t, drain = 0, events = 0;
	struct rlimit rl = { N + 64, N + 64 };

	setrlimit(RLIMIT_NOFILE, &rl);
	t0 = now_ns();
	for (i = 0; i < LOOPS; i++)
		kinfo(fd, &info);
	t = now_ns() - t0;
	printf("bench ioctl INFO: %.2f us/call (%d calls)\n", t / 1e3 / LOOPS, LOOPS);
	t0 = now_ns();
	for (i = 0; i < LOOPS; i++)
		getev(fd, 0, 1, 0, out, 0);
	t = now_ns() - t0;
	printf("bench ioctl GET_EVENTS(empty): %.2f us/call\n", t / 1e3 / LOOPS);

	for (i = 0; i < N; i++) {
		efd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (efd[i] < 0) {
			printf("bench: eventfd %d: %s\n", i, strerror(errno));
			return 1;
		}
		uk[i] = mk(KEVENT_POLL, efd[i], POLLIN, 0, i);
	}
	if (ctl(fd, KEVENT_CTL_ADD, N, uk) != 0) {
		printf("bench: ADD failed\n");
		return 1;
	}
	for (r = 0; r < ROUNDS; r++) {
		uint64_t one = 1;

		/* producer: make N events ready, then drain at batch 64 */
		for (i = 0; i < N; i++)
			if (write(efd[i], &one, 8) != 8)
				return 1;
		for (i = 0; i < 2000; i++) {
			kinfo(fd, &info);
			if (info.queue_ready == N)
				break;
			usleep(1000);
		}
		t0 = now_ns();
		got = 0;
		while (got < N) {
			int n = getev(fd, 1, BATCH, 1000000000ull, out, 0);

			if (n <= 0)
				break;
			got += n;
		}
		drain += now_ns() - t0;
		events += got;
	}
	printf("bench GET_EVENTS batch %d: %.0f events/s (%llu events, %d rounds of %d)\n",
	       BATCH, events / (drain / 1e9), (unsigned long long)events, ROUNDS, N);
	close(fd);
	bench_ring(efd, N, BATCH, ROUNDS);
	bench_epoll(efd, N, BATCH, ROUNDS);
	return 0;
}

int main(int argc, char **argv)
{
	int fd;

	dev = getenv("KEVENT_DEVICE");
	if (!dev)
		dev = "/dev/kevent";
	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = kopen();
	if (kinfo(fd, &info0)) {
		printf("FAIL info %s\n", strerror(errno));
		return 1;
	}
	close(fd);
	printf("# %s: backend %u features %#x types %#x\n", dev, info0.backend,
	       info0.features, info0.supported_types);
	if (argc > 1 && !strcmp(argv[1], "bench"))
		return bench();
	if (info0.backend != KEVENT_BACKEND_MODULE) {
		printf("kmod-smoke: backend %u is not the module; the client suite covers it\n",
		       info0.backend);
		return 77;
	}

	run("cuse_device_refused", t_cuse_refused);
	run("teardown_under_fire", t_teardown);
	run("stress", t_stress);
	run("readonly_output", t_readonly_out);
	run("compat_high_address", t_compat_addr);
	run("rev2_compat_ring", t_rev2_compat);
	printf("%d passed, %d failed, %d skipped\n", npass, nfail, nskip);
	return nfail ? 1 : 0;
}
