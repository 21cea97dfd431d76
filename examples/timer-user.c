// SPDX-License-Identifier: MIT
/*
 * timer-user: an absolute CLOCK_REALTIME timer and a user event (revision 3).
 *
 * Selects revision 3 for a new queue with KEVENT_IOC_SET_ABI, then adds, in
 * one KEVENT_IOC_CTL_EXT call, a KEVENT_POSIX_TIMER that expires once at an
 * absolute CLOCK_REALTIME time 300 ms ahead, and a KEVENT_USER kevent that
 * a second thread triggers twice with KEVENT_CTL_READY, with the values 0x1
 * and 0x4.  The self-check: the timer comes once, not before its time, with
 * one expiry; the user event comes with the OR of the values that reached it
 * before its delivery and their count, and never without a trigger.
 *
 * Build: cc -pthread -o timer-user timer-user.c $(pkg-config --cflags --libs libkevent)
 * Exit status: 0 as expected, 1 on a wrong event, 77 without /dev/kevent or
 * without a backend that serves revision 3.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* O_CLOEXEC under -std=c11 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <libkevent.h>

#define NSEC		1000000000ULL
#define AHEAD_NS	(300 * 1000000ULL)
#define COOKIE_TIMER	1
#define COOKIE_USER	2
#define USER_ID		42

static int kfd;

static __u64 realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__u64)ts.tv_sec * NSEC + (__u64)ts.tv_nsec;
}

/* kevent_ctl() with 80-byte entries: the extension travels with each entry. */
static int ctl_ext(unsigned int cmd, unsigned int num, struct ukevent_ext *arr)
{
	struct kevent_ctl_ext_arg a = {
		.cmd = cmd, .num = num, .events = (__u64)(uintptr_t)arr,
		.ioc_flags = KEVENT_CTL_EXT,
	};

	return ioctl(kfd, KEVENT_IOC_CTL_EXT, &a);
}

/* The second thread: two triggers of the user event, each with a value. */
static void *trigger(void *arg)
{
	static const __u32 values[2] = { 0x1, 0x4 };

	(void)arg;
	for (int i = 0; i < 2; i++) {
		struct ukevent uk;

		memset(&uk, 0, sizeof(uk));
		uk.type = KEVENT_USER;	/* revision 3 matches type, id and cookie */
		uk.id.raw[0] = USER_ID;
		uk.user[0] = COOKIE_USER;
		uk.event = values[i];	/* the trigger's value */
		if (kevent_ctl(kfd, KEVENT_CTL_READY, 1, &uk) != 1) {
			fprintf(stderr, "timer-user: READY: %s\n", strerror(errno));
			exit(1);
		}
		usleep(20000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *dev = getenv("KEVENT_DEVICE");
	struct ukevent_ext add[2];
	struct ukevent ev[4];
	__u32 user_bits = 0, user_count = 0;
	int timers = 0;
	pthread_t th;

	if (argc > 1) {
		printf("usage: %s\n"
		       "Runs an absolute CLOCK_REALTIME POSIX timer and a user event\n"
		       "triggered from a second thread on a revision-3 queue.  Device:\n"
		       "$KEVENT_DEVICE or %s.  Exit 0 pass, 1 fail, 77 no device.\n",
		       argv[0], KEVENT_DEVICE_DEFAULT);
		return strcmp(argv[1], "--help") == 0 ? 0 : 2;
	}
	if (dev == NULL)
		dev = KEVENT_DEVICE_DEFAULT;
	kfd = open(dev, O_RDWR | O_CLOEXEC);
	if (kfd == -1) {
		int e = errno;

		fprintf(stderr, "timer-user: open %s: %s\n", dev, strerror(e));
		return e == ENOENT || e == ENODEV || e == ENXIO ? 77 : 1;
	}
	/* Revision 3 is selected per queue, before its first CTL. */
	if (kevent_set_abi(kfd, 3, 0) == -1) {
		fprintf(stderr, "timer-user: SET_ABI(3): %s\n", strerror(errno));
		return errno == EINVAL ? 77 : 1;	/* a backend without revision 3 */
	}

	memset(add, 0, sizeof(add));
	add[0].ev.type = KEVENT_POSIX_TIMER;
	add[0].ev.event = KEVENT_TIMER_FIRED;
	add[0].ev.user[0] = COOKIE_TIMER;
	add[0].ext.timer.clock = KEVENT_CLOCK_REALTIME;
	add[0].ext.timer.flags = KEVENT_TIMER_ABSTIME;	/* value is a date */
	__u64 at = realtime_ns() + AHEAD_NS;
	add[0].ext.timer.value.tv_sec = (__s64)(at / NSEC);
	add[0].ext.timer.value.tv_nsec = (__u32)(at % NSEC);
	/* interval {0, 0}: one expiry, then disarmed until MODIFY re-arms it */
	add[1].ev.type = KEVENT_USER;	/* ext stays all zero */
	add[1].ev.id.raw[0] = USER_ID;
	add[1].ev.user[0] = COOKIE_USER;
	if (ctl_ext(KEVENT_CTL_ADD, 2, add) != 0) {
		fprintf(stderr, "timer-user: ADD: %s, ret_data[1] %d\n", strerror(errno),
			(int)add[0].ev.ret_data[1]);
		return 1;
	}
	if (pthread_create(&th, NULL, trigger, NULL) != 0)
		return 1;

	/* Until the timer fired and both triggers were delivered. */
	while (timers == 0 || user_count < 2) {
		int got = kevent_get_events(kfd, 1, 4, 5 * NSEC, ev, 0);

		if (got <= 0) {
			fprintf(stderr, "timer-user: kevent_get_events: %s\n",
				got < 0 ? strerror(errno) : "nothing within 5 s");
			return 1;
		}
		for (int i = 0; i < got; i++) {
			if (ev[i].type == KEVENT_POSIX_TIMER) {
				/* ret_data[0]: expiries since the last delivery */
				printf("timer: %u expiry, %llu us after its date\n", ev[i].ret_data[0],
				       (unsigned long long)((realtime_ns() - at) / 1000));
				if (++timers > 1 || ev[i].ret_data[0] != 1 || realtime_ns() < at)
					return fprintf(stderr, "timer-user: wrong timer event\n"), 1;
			} else if (ev[i].type == KEVENT_USER) {
				/* ret_data: the OR of the values, the number of triggers */
				printf("user event: values %#x from %u trigger(s)\n",
				       ev[i].ret_data[0], ev[i].ret_data[1]);
				user_bits |= ev[i].ret_data[0];
				user_count += ev[i].ret_data[1];
				if (ev[i].ret_data[1] == 0 || user_count > 2)
					return fprintf(stderr, "timer-user: wrong user event\n"), 1;
			} else {
				return fprintf(stderr, "timer-user: type %u\n", ev[i].type), 1;
			}
		}
	}
	pthread_join(th, NULL);
	if (user_bits != 0x5)
		return fprintf(stderr, "timer-user: values %#x, want 0x5\n", user_bits), 1;
	close(kfd);
	printf("timer-user: ok\n");
	return 0;
}
