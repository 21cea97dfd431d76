// SPDX-License-Identifier: MIT
/*
 * timer: a periodic and a one-shot timer kevent on one queue.
 *
 * Registers a 50 ms periodic timer and a 120 ms KEVENT_REQ_ONESHOT timer
 * with one kevent_ctl(KEVENT_CTL_ADD) call, then waits with
 * kevent_get_events() and prints every expiry.  The self-check: the
 * periodic timer keeps firing (delivery k at least k periods after the ADD,
 * stamps whole periods apart), the one-shot timer fires exactly once,
 * no sooner than 120 ms after the ADD, and then it is gone from the queue.
 *
 * The lines between the "man:" marks are shown in kevent_ctl(2) and
 * kevent_get_events(2); docs/check-man.py keeps the pages identical.
 *
 * Build: cc -o timer timer.c $(pkg-config --cflags --libs libkevent)
 * Exit status: 0 as expected, 1 on a wrong event, 77 without /dev/kevent.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* O_CLOEXEC, accept4(), pipe2() under -std=c11 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libkevent.h>

#define PERIODIC_MS	50
#define ONESHOT_MS	120
#define WANT_TICKS	6
#define COOKIE_PERIODIC	1
#define COOKIE_ONESHOT	2

/* CLOCK_MONOTONIC in ms, truncated to 32 bits: what timers put in ret_data[0]. */
static __u32 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u32)((__u64)ts.tv_sec * 1000 + (__u64)ts.tv_nsec / 1000000);
}

/* The stamps wrap after 49 days: always compare differences. */
static int ms_after(__u32 later, __u32 earlier)
{
	return (int)(later - earlier);
}

static void timer_kevent(struct ukevent *uk, __u32 period_ms, __u32 flags, __u32 cookie)
{
	memset(uk, 0, sizeof(*uk));
	uk->type = KEVENT_TIMER;
	uk->event = KEVENT_TIMER_FIRED;	/* required, or the entry fails -EINVAL */
	uk->id.raw[0] = period_ms;	/* the timer's id is its period */
	uk->req_flags = flags;
	uk->user[0] = cookie;		/* returned as is: how we tell them apart */
}

int main(int argc, char **argv)
{
	const char *dev = getenv("KEVENT_DEVICE");
	struct ukevent uk[2], ev[8], periodic;
	struct kevent_info info;
	int kfd, ticks = 0, oneshots = 0;
	__u32 t_add, last = 0;

	if (argc > 1) {
		printf("usage: %s\n"
		       "Runs a %d ms periodic and a %d ms one-shot timer kevent and\n"
		       "checks what kevent_get_events() returns.  Device: $KEVENT_DEVICE\n"
		       "or %s.  Exit 0 pass, 1 fail, 77 no device.\n",
		       argv[0], PERIODIC_MS, ONESHOT_MS, KEVENT_DEVICE_DEFAULT);
		return strcmp(argv[1], "--help") == 0 ? 0 : 2;
	}
	if (dev == NULL)
		dev = KEVENT_DEVICE_DEFAULT;

	/* Every open() of the device is a new, empty queue. */
	kfd = open(dev, O_RDWR | O_CLOEXEC);
	if (kfd == -1) {
		int e = errno;

		fprintf(stderr, "timer: open %s: %s\n", dev, strerror(e));
		return e == ENOENT || e == ENODEV || e == ENXIO ? 77 : 1;
	}

	/* man: add */
	timer_kevent(&uk[0], PERIODIC_MS, 0, COOKIE_PERIODIC);
	timer_kevent(&uk[1], ONESHOT_MS, KEVENT_REQ_ONESHOT, COOKIE_ONESHOT);
	periodic = uk[0];	/* ADD may compact results over the array: keep a copy */
	t_add = now_ms();
	/* ADD returns how many entries it answered at once (failed ones here). */
	int n = kevent_ctl(kfd, KEVENT_CTL_ADD, 2, uk);
	if (n != 0) {
		fprintf(stderr, "timer: ADD returned %d (errno %s, ret_data[1] %d)\n", n,
			n < 0 ? strerror(errno) : "-", n > 0 ? (int)uk[0].ret_data[1] : 0);
		return 1;
	}
	/* man: end */

	while (ticks < WANT_TICKS) {
		/* man: get */
		/* Block until one kevent is ready (at most 5 s), take up to 8. */
		int got = kevent_get_events(kfd, 1, 8, 5000000000ULL, ev, 0);
		__u32 t_got = now_ms();

		if (got <= 0) {
			fprintf(stderr, "timer: kevent_get_events: %s\n",
				got < 0 ? strerror(errno) : "no expiry within 5 s");
			return 1;
		}
		/* man: end */
		for (int i = 0; i < got; i++) {
			__u32 stamp = ev[i].ret_data[0];	/* ms at the expiry */

			printf("%-8s timer (%u ms): expired at %u ms, %d ms after ADD\n",
			       ev[i].user[0] == COOKIE_ONESHOT ? "one-shot" : "periodic",
			       ev[i].id.raw[0], stamp, ms_after(stamp, t_add));
			if (ev[i].type != KEVENT_TIMER || ev[i].ret_flags != KEVENT_RET_DONE ||
			    ms_after(t_got, stamp) < -1) {
				fprintf(stderr, "timer: bad event: type %u ret_flags %#x\n",
					ev[i].type, ev[i].ret_flags);
				return 1;
			}
			if (ev[i].user[0] == COOKIE_ONESHOT) {
				/* The first expiry is one period after the ADD. */
				if (++oneshots > 1 || ms_after(stamp, t_add) < ONESHOT_MS - 1) {
					fprintf(stderr, "timer: one-shot timer wrong\n");
					return 1;
				}
				continue;
			}
			/*
			 * Delivery k comes at least k periods after the ADD (expiries
			 * while ready merge, so it may be more).  Stamps are points of
			 * the timer's grid, so they differ by whole periods.
			 */
			if (ev[i].user[0] != COOKIE_PERIODIC ||
			    (ticks && (ms_after(stamp, last) <= 0 || ms_after(stamp, last) % PERIODIC_MS)) ||
			    ms_after(stamp, t_add) < (ticks + 1) * PERIODIC_MS - 1) {
				fprintf(stderr, "timer: periodic timer too early or unknown\n");
				return 1;
			}
			last = stamp;
			ticks++;
		}
	}

	/*
	 * 6 periodic deliveries take >= 300 ms, so the one-shot (120 ms) has
	 * fired by now; once dequeued it is unregistered: only one kevent left.
	 */
	if (kevent_info(kfd, &info) == -1 || oneshots != 1 || info.queue_kevents != 1) {
		fprintf(stderr, "timer: one-shot seen %d times, %u kevents left\n",
			oneshots, info.queue_kevents);
		return 1;
	}
	/* REMOVE matches on id and cookie (type is not compared). */
	if (kevent_ctl(kfd, KEVENT_CTL_REMOVE, 1, &periodic) == -1 ||
	    periodic.ret_flags & KEVENT_RET_BROKEN) {
		fprintf(stderr, "timer: REMOVE failed\n");
		return 1;
	}
	close(kfd);
	printf("timer: ok (%d periodic expiries, 1 one-shot)\n", ticks);
	return 0;
}
