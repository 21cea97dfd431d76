// SPDX-License-Identifier: GPL-2.0
/*
 * client-m32: the 32-bit (-m32, static) client.  Exercises INFO, CTL and
 * GET_EVENTS through the compat path (D28) with libkevent compiled in, and
 * revision 2's RING_INIT, WAIT, COMMIT and GET_EVENTS VER1 (D48, D53-D55).
 * No Criterion: prints TAP itself and accepts the two options the guest
 * harness passes, --tap=FILE and --filter GLOB (matched against
 * "m32/<name>", as Criterion matches "suite/test").  Test names carry the
 * ABI revision like the Criterion suite: m32/<name>__rev1.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>
#include <time.h>
#include <linux/magic.h>
#include <unistd.h>

#include "libkevent.h"

_Static_assert(sizeof(void *) == 4, "client-m32 must be built with -m32");
_Static_assert(sizeof(struct ukevent) == 40, "ukevent is 40 bytes on i386");
_Static_assert(sizeof(struct kevent_get_events_arg) == KEVENT_GET_EVENTS_ARG_SIZE_VER1,
	       "no compat split of the wrapper");

static FILE *tap;
static const char *filter;
static const char *dev;
static char why[256];

#define CHECK(cond, ...)							\
	do {									\
		if (!(cond)) {							\
			snprintf(why, sizeof(why), __VA_ARGS__);		\
			return -1;						\
		}								\
	} while (0)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static struct ukevent uk_of(unsigned int type, __u32 id0, unsigned int event, unsigned int req,
			    __u32 cookie)
{
	struct ukevent u;

	memset(&u, 0, sizeof(u));
	u.id.raw[0] = id0;
	u.type = type;
	u.event = event;
	u.req_flags = req;
	u.user[0] = cookie;
	u.user[1] = ~cookie;
	return u;
}

static int t_info(void)
{
	int kfd = open(dev, O_RDWR | O_CLOEXEC);
	struct kevent_info i;

	CHECK(kfd >= 0, "open %s: %s", dev, strerror(errno));
	CHECK(kevent_info(kfd, &i) == 0, "INFO: %s", strerror(errno));
	CHECK(i.size == sizeof(i), "size %u, want %zu: the backend fills this header's INFO",
	      i.size, sizeof(i));
	CHECK(i.abi_revision >= 1, "revision %u: a backend serves revision 1", i.abi_revision);
	CHECK(i.ukevent_size == 40 && i.mukevent_size == 16, "record sizes %u %u", i.ukevent_size,
	      i.mukevent_size);
	CHECK(i.ring_slots == KEVENT_MAX_EVENTS && i.max_kevents == 4095, "ring %u max %u",
	      i.ring_slots, i.max_kevents);
	CHECK(i.backend == KEVENT_BACKEND_CUSE || i.backend == KEVENT_BACKEND_MODULE ||
	      i.backend == KEVENT_BACKEND_FUSE, "backend %u", i.backend);
	close(kfd);
	return 0;
}

static int t_add_get_timer(void)
{
	int kfd = open(dev, O_RDWR | O_CLOEXEC);
	struct ukevent uk = uk_of(KEVENT_TIMER, 40, KEVENT_TIMER_FIRED, KEVENT_REQ_ONESHOT, 0), out[2];
	static int anchor;

	CHECK(kfd >= 0, "open: %s", strerror(errno));
	uk.ptr = &anchor;	/* a 32-bit ptr covers user[0] only (D29) */
	uk.user[1] = 0x5a5a5a5a;
	CHECK(kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &uk) == 0, "ADD: %s", strerror(errno));
	CHECK(kevent_get_events(kfd, 0, 2, 0, out, 0) == 0, "a 40 ms timer fired at once");
	int n = kevent_get_events(kfd, 1, 2, 5000000000ULL, out, 0);	/* 5 s: above 2^32 ns */
	CHECK(n == 1, "GET_EVENTS: %d (%s)", n, strerror(errno));
	CHECK(out[0].ptr == &anchor, "ptr cookie changed");
	CHECK(out[0].user[1] == 0x5a5a5a5a, "user[1] changed: %#x", out[0].user[1]);
	CHECK(out[0].id.raw[0] == 40 && out[0].type == KEVENT_TIMER, "id %u type %u",
	      out[0].id.raw[0], out[0].type);
	CHECK(out[0].ret_flags == KEVENT_RET_DONE, "ret_flags %#x", out[0].ret_flags);
	close(kfd);
	return 0;
}

#define SKIPPED 77

static int t_add_compaction_poll(void)
{
	int kfd = open(dev, O_RDWR | O_CLOEXEC), p[2];
	struct ukevent uk[3], out[2];
	struct kevent_info info;

	CHECK(kfd >= 0 && kevent_info(kfd, &info) == 0, "open/INFO: %s", strerror(errno));
	if (!(info.features & KEVENT_FEAT_FD_ORIGINS)) {
		snprintf(why, sizeof(why), "fd origins not usable by this caller (INFO features %#x)",
			 info.features);
		close(kfd);
		return SKIPPED;
	}
	CHECK(pipe(p) == 0, "setup: %s", strerror(errno));
	uk[0] = uk_of(KEVENT_POLL, (__u32)p[0], KEVENT_POLL_POLLIN, 0, 1);
	uk[1] = uk_of(KEVENT_POLL, (__u32)p[1], KEVENT_POLL_POLLOUT, 0, 2);
	uk[2] = uk_of(KEVENT_AIO, 1, 1, 0, 3);
	int r = kevent_ctl(kfd, KEVENT_CTL_ADD, 3, uk);
	CHECK(r == 2, "ADD returned %d (%s), want 2", r, strerror(errno));
	CHECK(uk[0].user[0] == 2 && uk[0].ret_flags == KEVENT_RET_DONE &&
	      uk[0].ret_data[0] == KEVENT_POLL_POLLOUT, "entry 0: cookie %u flags %#x data %#x",
	      uk[0].user[0], uk[0].ret_flags, uk[0].ret_data[0]);
	CHECK(uk[1].user[0] == 3 && uk[1].ret_flags == (KEVENT_RET_BROKEN | KEVENT_RET_DONE) &&
	      uk[1].ret_data[1] == (__u32)-EINVAL, "entry 1: cookie %u flags %#x data[1] %d",
	      uk[1].user[0], uk[1].ret_flags, (int)uk[1].ret_data[1]);
	CHECK(write(p[1], "x", 1) == 1, "write");
	r = kevent_get_events(kfd, 1, 2, KEVENT_TIMEOUT_INFINITE, out, 0);
	CHECK(r == 1 && out[0].user[0] == 1 && out[0].ret_data[0] == KEVENT_POLL_POLLIN,
	      "GET: %d cookie %u data %#x", r, out[0].user[0], out[0].ret_data[0]);
	close(kfd);
	close(p[0]);
	close(p[1]);
	return 0;
}

static int t_modify_remove(void)
{
	int kfd = open(dev, O_RDWR | O_CLOEXEC);
	struct ukevent a = uk_of(KEVENT_TIMER, 3600000, KEVENT_TIMER_FIRED, 0, 7), uk[2];
	struct kevent_info i;

	CHECK(kfd >= 0, "open");
	CHECK(kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &a) == 0, "ADD");
	uk[0] = a;
	uk[1] = uk_of(KEVENT_TIMER, 1, KEVENT_TIMER_FIRED, 0, 8);
	CHECK(kevent_ctl(kfd, KEVENT_CTL_MODIFY, 2, uk) == -1 && errno == EINVAL,
	      "MODIFY num 2 > kevent_num 1: %s", strerror(errno));
	CHECK(kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &uk[1]) == 0, "second ADD");
	uk[1].id.raw[0] = 2;
	CHECK(kevent_ctl(kfd, KEVENT_CTL_MODIFY, 2, uk) == 0, "MODIFY: %s", strerror(errno));
	CHECK(uk[0].ret_flags == KEVENT_RET_DONE, "MODIFY match %#x", uk[0].ret_flags);
	CHECK(uk[1].ret_flags == (KEVENT_RET_BROKEN | KEVENT_RET_DONE), "MODIFY no match %#x",
	      uk[1].ret_flags);
	uk[0] = a;
	CHECK(kevent_ctl(kfd, KEVENT_CTL_REMOVE, 1, uk) == 0, "REMOVE");
	CHECK(uk[0].ret_flags == KEVENT_RET_DONE, "REMOVE %#x", uk[0].ret_flags);
	CHECK(kevent_info(kfd, &i) == 0 && i.queue_kevents == 1, "queue_kevents %u", i.queue_kevents);
	close(kfd);
	return 0;
}

static int t_errors(void)
{
	int kfd = open(dev, O_RDWR | O_CLOEXEC);
	struct ukevent out[2];

	CHECK(kfd >= 0, "open");
	CHECK(kevent_ctl(kfd, 7, 1, out) == -1 && errno == EINVAL, "unknown cmd: %s", strerror(errno));
	CHECK(kevent_ctl(kfd, KEVENT_CTL_ADD, 4096, (void *)16) == -1 &&
	      (errno == EINVAL || errno == E2BIG), "ADD 4096: %s", strerror(errno));
	CHECK(kevent_get_events(kfd, 2, 1, 0, out, 0) == -1 && errno == EINVAL, "min > max: %s",
	      strerror(errno));
	CHECK(kevent_get_events(kfd, 0, 1, 0, (void *)16, 0) == -1 && errno == EFAULT,
	      "bad buffer: %s", strerror(errno));
	CHECK(kevent_ctl(-1, KEVENT_CTL_ADD, 1, out) == -1 && errno == EBADF, "bad fd: %s",
	      strerror(errno));
	CHECK(ioctl(kfd, _IOC(_IOC_WRITE, KEVENT_IOC_MAGIC, 0x33, 16), out) == -1 && errno == ENOTTY,
	      "unknown nr: %s", strerror(errno));
	struct kevent_get_events_arg g = { .max_nr = 1, .events = (__u64)(uintptr_t)out,
					   .ioc_flags = 2 };
	CHECK(ioctl(kfd, KEVENT_IOC_GET_EVENTS, &g) == -1 && errno == EINVAL, "ioc_flags 2: %s",
	      strerror(errno));
	/* D28: a user address above 4 GiB from a 32-bit caller faults. */
	struct kevent_ctl_arg c = { .cmd = KEVENT_CTL_ADD, .num = 1, .events = 1ULL << 40 };
	CHECK(ioctl(kfd, KEVENT_IOC_CTL, &c) == -1 && errno == EFAULT, "address above 4 GiB: %s",
	      strerror(errno));
	close(kfd);
	return 0;
}

static int t_nonblock_and_timeout(void)
{
	int kfd = open(dev, O_RDWR | O_CLOEXEC);
	struct ukevent out[2], uk = uk_of(KEVENT_TIMER, 3600000, KEVENT_TIMER_FIRED, 0, 1);
	uint64_t t0;

	CHECK(kfd >= 0, "open");
	CHECK(kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &uk) == 0, "ADD");
	t0 = now_ns();
	CHECK(kevent_get_events(kfd, 1, 2, 100000000ULL, out, 0) == 0, "timeout");
	CHECK(now_ns() - t0 >= 95000000ULL, "100 ms timeout returned after %llu ns",
	      (unsigned long long)(now_ns() - t0));
	CHECK(fcntl(kfd, F_SETFL, O_NONBLOCK) == 0, "fcntl");
	/* No timeout and nothing ready: a call that waited would not return 0. */
	CHECK(kevent_get_events(kfd, 1, 2, KEVENT_TIMEOUT_INFINITE, out, 0) == 0, "non-blocking");
	close(kfd);
	return 0;
}

static int t_ring(void)
{
	int kfd = open(dev, O_RDWR | O_CLOEXEC);
	struct kevent_ring r;
	struct ukevent uk = uk_of(KEVENT_TIMER, 30, KEVENT_TIMER_FIRED, KEVENT_REQ_ONESHOT, 1), out[2];
	struct mukevent m[2];

	CHECK(kfd >= 0, "open");
	CHECK(kevent_ring_map(kfd, &r) == 0, "kevent_ring_map: %s", strerror(errno));
	CHECK(kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &uk) == 0, "ADD");
	CHECK(kevent_get_events(kfd, 1, 2, 5000000000ULL, out, 0) == 1, "GET");
	CHECK(kevent_ring_read(&r, m, 2) == 1, "ring: index %u", kevent_ring_index(&r));
	CHECK(m[0].id.raw[0] == 30 && m[0].ret_flags == KEVENT_RET_DONE, "slot id %u flags %#x",
	      m[0].id.raw[0], m[0].ret_flags);
	kevent_ring_unmap(&r);
	close(kfd);
	return 0;
}

/*
 * Revision 2 from a 32-bit caller (D48, D53-D55): kevent_init, READY, a
 * timespec wait into a ring in 32-bit memory, a wrapping commit.
 */
static int t_ring_wait_commit(void)
{
	static struct {
		struct kevent_uring r;
		struct ukevent slot[4];
	} ring;
	struct ukevent uk[3];
	struct timespec t = { 5, 0 };
	struct kevent_info i;
	int kfd, n;

	setenv("KEVENT_DEVICE", dev, 1);
	kfd = kevent_init(&ring.r, 4, 0);
	if (kfd < 0 && (errno == EINVAL || errno == EPERM)) {
		snprintf(why, sizeof(why), "revision 2 or a process-memory ring not served here: %s",
			 strerror(errno));
		return SKIPPED;
	}
	CHECK(kfd >= 0, "kevent_init: %s", strerror(errno));
	kevent_info(kfd, &i);
	CHECK(i.queue_revision == 2, "queue revision %u", i.queue_revision);
	for (int k = 0; k < 3; k++)
		uk[k] = uk_of(KEVENT_TIMER, 3600000, KEVENT_TIMER_FIRED, 0, (__u32)k);
	CHECK(kevent_ctl(kfd, KEVENT_CTL_ADD, 3, uk) == 0, "ADD: %s", strerror(errno));
	for (int k = 0; k < 3; k++)
		uk[k] = uk_of(KEVENT_TIMER, 3600000, KEVENT_TIMER_FIRED, 0, (__u32)k);
	CHECK(kevent_ctl(kfd, KEVENT_CTL_READY, 3, uk) == 3, "READY: %s", strerror(errno));
	n = kevent_wait(kfd, 3, 0, t, 0);
	CHECK(n == 3, "wait: %d (%s)", n, n < 0 ? strerror(errno) : "-");
	CHECK(ring.r.ring_kidx == 3 && ring.r.event[2].user[0] == 2 && ring.r.event[2].user[1] == ~2u,
	      "ring_kidx %u, slot 2 cookie %u", ring.r.ring_kidx, ring.r.event[2].user[0]);
	CHECK(kevent_commit(kfd, 3, 0) == 3, "commit: %s", strerror(errno));
	CHECK(kevent_ctl(kfd, KEVENT_CTL_READY, 3, uk) == 3, "READY again");
	CHECK(kevent_wait(kfd, 3, 3, t, 0) == 3, "wait across the wrap");
	CHECK(kevent_commit(kfd, 2, 0) == 3 && ring.r.ring_over == 1, "wrapping commit: over %u",
	      ring.r.ring_over);
	close(kfd);
	return 0;
}

/*
 * D48 through the compat path: GET_EVENTS VER1 (KEVENT_GET_TIMESPEC) and a
 * WAIT that park, relative, absolute (CLOCK_REALTIME) and without a
 * timeout, and the events they deliver.
 */
static int t_timespec_parked(void)
{
	static struct {
		struct kevent_uring r;
		struct ukevent slot[4];
	} ring;
	struct ukevent out[2], uk;
	struct timespec rel = { 0, 100000000 }, bad = { 0, 1000000000 }, past = { 1, 0 };
	struct timespec zero = { 0, 0 }, five = { 5, 0 }, abs;
	uint64_t t0;
	int kfd, n;

	setenv("KEVENT_DEVICE", dev, 1);
	kfd = kevent_init(&ring.r, 4, 0);
	if (kfd < 0 && (errno == EINVAL || errno == EPERM)) {
		snprintf(why, sizeof(why), "revision 2 or a process-memory ring not served here: %s",
			 strerror(errno));
		return SKIPPED;
	}
	CHECK(kfd >= 0, "kevent_init: %s", strerror(errno));
	CHECK(kevent_get_events_ts(kfd, 1, 2, bad, out, 0) == -1 && errno == EINVAL,
	      "tv_nsec 10^9: want EINVAL");
	CHECK(kevent_get_events_ts(kfd, 1, 2, past, out, KEVENT_FLAGS_ABSTIME) == 0,
	      "a deadline in 1970: %s", strerror(errno));
	t0 = now_ns();
	CHECK(kevent_get_events_ts(kfd, 1, 2, rel, out, 0) == 0, "relative 100 ms: %s",
	      strerror(errno));
	CHECK(now_ns() - t0 >= 95000000ULL, "100 ms timeout returned after %llu ns",
	      (unsigned long long)(now_ns() - t0));
	clock_gettime(CLOCK_REALTIME, &abs);
	abs.tv_nsec += 100000000;
	if (abs.tv_nsec >= 1000000000) {
		abs.tv_sec++;
		abs.tv_nsec -= 1000000000;
	}
	t0 = now_ns();
	CHECK(kevent_get_events_ts(kfd, 1, 2, abs, out, KEVENT_FLAGS_ABSTIME) == 0,
	      "absolute now + 100 ms: %s", strerror(errno));
	CHECK(now_ns() - t0 >= 90000000ULL, "realtime deadline 100 ms ahead returned after %llu ns",
	      (unsigned long long)(now_ns() - t0));
	uk = uk_of(KEVENT_TIMER, 30, KEVENT_TIMER_FIRED, KEVENT_REQ_ONESHOT, 4);
	CHECK(kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &uk) == 0, "ADD");
	n = kevent_get_events_ts(kfd, 1, 2, zero, out, KEVENT_FLAGS_NO_TIMEOUT);
	CHECK(n == 1 && out[0].user[0] == 4 && out[0].user[1] == ~4u,
	      "NO_TIMEOUT GET_EVENTS: %d, cookie %u", n, out[0].user[0]);
	uk = uk_of(KEVENT_TIMER, 30, KEVENT_TIMER_FIRED, KEVENT_REQ_ONESHOT, 5);
	CHECK(kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &uk) == 0, "ADD");
	n = kevent_wait(kfd, 2, 0, five, 0);
	CHECK(n == 1 && ring.r.ring_kidx == 1 && ring.r.event[0].user[0] == 5,
	      "parked WAIT: %d, ring_kidx %u, slot 0 cookie %u", n, ring.r.ring_kidx,
	      ring.r.event[0].user[0]);
	CHECK(kevent_commit(kfd, 1, 0) == 1, "commit: %s", strerror(errno));
	close(kfd);
	return 0;
}

struct test {
	const char *name;
	int (*fn)(void);
};

static const struct test tests[] = {
	{ "info__rev1", t_info },
	{ "add_get_timer__rev1", t_add_get_timer },
	{ "add_compaction_poll__rev1", t_add_compaction_poll },
	{ "modify_remove__rev1", t_modify_remove },
	{ "errors__rev1", t_errors },
	{ "nonblock_and_timeout__rev1", t_nonblock_and_timeout },
	{ "ring__rev1", t_ring },
	{ "ring_wait_commit__rev2", t_ring_wait_commit },
	{ "timespec_parked__rev2", t_timespec_parked },
};
#define NTESTS ((int)(sizeof(tests) / sizeof(tests[0])))

static int selected(int k)
{
	char full[128];

	snprintf(full, sizeof(full), "m32/%s", tests[k].name);
	return !filter || !fnmatch(filter, full, FNM_EXTMATCH);	/* Criterion's @(a|b) too */
}

/* fuse refusing this caller's memory: INFO fails EPERM (abi.md 7.1, 9). */
static int fuse_without_process_memory(void)
{
	int kfd = open(dev, O_RDWR | O_CLOEXEC);
	struct kevent_info i;
	struct statfs sf;
	int r;

	if (kfd < 0)
		return 0;
	r = kevent_info(kfd, &i) && errno == EPERM && !fstatfs(kfd, &sf) &&
	    sf.f_type == FUSE_SUPER_MAGIC;
	close(kfd);
	return r;
}

int main(int argc, char **argv)
{
	const char *tapfile = NULL;
	int planned = 0, n = 0, pass = 0, fail = 0, skip = 0;

	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--tap=", 6))
			tapfile = argv[i] + 6;
		else if (!strcmp(argv[i], "--tap"))
			tapfile = "-";
		else if (!strcmp(argv[i], "--filter") && i + 1 < argc)
			filter = argv[++i];
		else if (!strncmp(argv[i], "--filter=", 9))
			filter = argv[i] + 9;
		else if (!strcmp(argv[i], "--list")) {
			for (int k = 0; k < NTESTS; k++)
				printf("m32/%s\n", tests[k].name);
			return 0;
		}
	}
	tap = tapfile && strcmp(tapfile, "-") ? fopen(tapfile, "w") : stdout;
	if (!tap) {
		perror(tapfile);
		return 2;
	}
	dev = getenv("KEVENT_DEVICE");
	if (!dev || !*dev)
		dev = KEVENT_DEVICE_DEFAULT;
	int have_dev = access(dev, F_OK) == 0;
	int noproc = have_dev && fuse_without_process_memory();
	for (int k = 0; k < NTESTS; k++)
		planned += selected(k);
	fprintf(tap, "TAP version 13\n1..%d\n# client-m32 (i386, static)\n", planned);
	for (int k = 0; k < NTESTS; k++) {
		if (!selected(k))
			continue;
		n++;
		if (!have_dev) {
			skip++;
			fprintf(tap, "ok %d - m32::%s  # SKIP no %s: run through tests/vm/guest\n", n,
				tests[k].name, dev);
			continue;
		}
		if (noproc) {
			skip++;
			fprintf(tap, "ok %d - m32::%s  # SKIP fuse without process memory for this "
				"caller: every ioctl fails EPERM, no retry path (abi.md 9, B4)\n", n,
				tests[k].name);
			continue;
		}
		why[0] = 0;
		fflush(tap);
		int r = tests[k].fn();

		if (r == 0) {
			pass++;
			fprintf(tap, "ok %d - m32::%s\n", n, tests[k].name);
		} else if (r == SKIPPED) {
			skip++;
			fprintf(tap, "ok %d - m32::%s  # SKIP %s\n", n, tests[k].name, why);
		} else {
			fail++;
			fprintf(tap, "not ok %d - m32::%s\n  # %s\n", n, tests[k].name, why);
		}
		fflush(tap);
	}
	fprintf(tap, "# m32: %d tested, %d passed, %d failed, %d skipped\n", n, pass, fail, skip);
	if (tap != stdout)
		fclose(tap);
	return fail ? 1 : 0;
}
