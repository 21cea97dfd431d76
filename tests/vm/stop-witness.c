// SPDX-License-Identifier: GPL-2.0
/*
 * D20 at the daemon's SIGTERM.  runner.sh starts this just before it stops
 * the CUSE backend: two GET_EVENTS calls park on two queues, one with an
 * event ready but below its min_nr, one with nothing.  Once INFO's
 * live_waiters shows both parked, it prints "parked" and the runner sends
 * the SIGTERM.  The daemon must answer the first call with what is ready
 * (1 event) and the second with ENODEV, not with a silent 0 that would
 * look like a timeout; a call after that fails too (ENODEV, or ECONNABORTED
 * when the kernel still had it queued as the daemon exited; on the fuse
 * backend also ENOTCONN, abi.md section 9).  tests/fuse/native.py runs it
 * the same way before it stops the daemon serving a FUSE file.
 * Exit 0 pass, 1 fail, 77 not the daemon (CUSE or fuse).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libkevent.h>

#define COOKIE	0x5717u

struct parked {
	int fd;
	unsigned int min_nr;
	int ret, err;
	struct ukevent out[4];
};

static void *park(void *arg)
{
	struct parked *p = arg;

	p->ret = kevent_get_events(p->fd, p->min_nr, 4, KEVENT_TIMEOUT_INFINITE, p->out, 0);
	p->err = errno;
	return NULL;
}

static int fail(const char *what)
{
	fprintf(stderr, "stop-witness: %s: %s\n", what, strerror(errno));
	return 1;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Polls INFO (every 10 ms, up to 10 s) until pred(info) holds. */
static int wait_info(int fd, int (*pred)(const struct kevent_info *, __u64), __u64 arg)
{
	struct kevent_info info;

	for (int i = 0; i < 1000; i++) {
		if (kevent_info(fd, &info) < 0)
			return -1;
		if (pred(&info, arg))
			return 0;
		sleep_ms(10);
	}
	errno = ETIMEDOUT;
	return -1;
}

static int one_ready(const struct kevent_info *i, __u64 arg)
{
	(void)arg;
	return i->queue_ready >= 1;
}

static int waiters_at_least(const struct kevent_info *i, __u64 n)
{
	return i->live_waiters >= n;
}

static int open_dev(const char *dev)
{
	return open(dev, O_RDWR | O_CLOEXEC);
}

int main(int argc, char **argv)
{
	const char *dev = getenv("KEVENT_DEVICE") ? getenv("KEVENT_DEVICE") : KEVENT_DEVICE_DEFAULT;
	struct parked some = { .min_nr = 2 }, none = { .min_nr = 1 };
	struct ukevent timer = { .type = KEVENT_TIMER, .event = KEVENT_TIMER_FIRED,
				 .req_flags = KEVENT_REQ_ONESHOT, .id.raw = { 1, 0 } };
	struct kevent_info info;
	pthread_t t1, t2;
	int probe, rc = 0, fuse;

	(void)argv;
	if (argc > 1) {
		printf("usage: stop-witness (inside the guest, started by runner.sh before the\n"
		       "daemon's SIGTERM; prints \"parked\" when it may be sent)\n");
		return 0;
	}
	probe = open_dev(dev);
	if (probe >= 0 && kevent_info(probe, &info) < 0 && errno == EPERM) {
		/* fuse refusing this caller's memory (abi.md 7.1, 9): no call parks. */
		printf("stop-witness: INFO fails EPERM (fuse without process memory for this "
		       "caller, abi.md 9): nothing can park: skip\n");
		return 77;
	}
	if (probe < 0 || kevent_info(probe, &info) < 0)
		return fail("open/INFO");
	fuse = info.backend == KEVENT_BACKEND_FUSE;
	if (info.backend != KEVENT_BACKEND_CUSE && !fuse) {
		printf("stop-witness: backend %u is not the daemon (D20 is its rule): skip\n",
		       info.backend);
		return 77;
	}
	some.fd = open_dev(dev);
	none.fd = open_dev(dev);
	if (some.fd < 0 || none.fd < 0)
		return fail("open");
	timer.user[0] = COOKIE;
	if (kevent_ctl(some.fd, KEVENT_CTL_ADD, 1, &timer) != 0)
		return fail("ADD of a 1 ms timer");
	if (wait_info(some.fd, one_ready, 0))
		return fail("the timer did not become ready");
	if (pthread_create(&t1, NULL, park, &some) || pthread_create(&t2, NULL, park, &none))
		return fail("pthread_create");
	if (wait_info(probe, waiters_at_least, info.live_waiters + 2))
		return fail("two calls did not park");
	printf("parked\n");
	fflush(stdout);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	if (some.ret != 1 || some.out[0].user[0] != COOKIE) {
		fprintf(stderr, "stop-witness: the call with an event ready got %d (%s), want 1\n",
			some.ret, some.ret < 0 ? strerror(some.err) : "events");
		rc = 1;
	}
	if (none.ret != -1 || none.err != ENODEV) {
		fprintf(stderr, "stop-witness: the call with nothing ready got %d (%s), want ENODEV\n",
			none.ret, none.ret < 0 ? strerror(none.err) : "no error");
		rc = 1;
	}
	/* ENODEV from the stopping daemon, or ECONNABORTED from the kernel when
	 * the call was still queued as the daemon exited (docs/abi.md 7.1);
	 * ENOTCONN on fuse once the connection is gone (abi.md section 9). */
	if (kevent_info(probe, &info) != -1 || (errno != ENODEV && errno != ECONNABORTED &&
						 (errno != ENOTCONN || !fuse))) {
		fprintf(stderr, "stop-witness: INFO after the SIGTERM: %s, want ENODEV or ECONNABORTED\n",
			strerror(errno));
		rc = 1;
	}
	if (!rc)
		printf("stop-witness: parked calls answered 1 event and ENODEV; later calls ENODEV\n");
	return rc;
}
