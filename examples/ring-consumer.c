// SPDX-License-Identifier: MIT
/*
 * ring-consumer: the revision-2 ring in process memory, consumed with
 * kevent_wait() and kevent_commit().
 *
 * Opens a revision-2 queue with kevent_init() and a ring of 16 slots,
 * registers four periodic timers (5, 7, 11 and 13 ms) and consumes
 * 200 expiries in batches of at most 8: kevent_wait() copies ready kevents
 * into the ring, the loop reads the slots between its index and ring_kidx,
 * and kevent_commit() gives them back, wrapping the ring many times.  The
 * self-check: every slot holds one of the four timers, each wait returns
 * exactly the slots ring_kidx published, and every commit frees them.
 *
 * The lines between the "man:" marks are shown in kevent_wait(2) and
 * kevent_commit(2); docs/check-man.py keeps the pages identical.
 *
 * Build: cc -o ring-consumer ring-consumer.c $(pkg-config --cflags --libs libkevent)
 * Exit status: 0 as expected, 1 on a wrong event, 77 without a revision-2 device.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libkevent.h>

#define SLOTS	16
#define BATCH	8
#define WANT	200
#define TIMERS	4

static const unsigned int period_ms[TIMERS] = { 5, 7, 11, 13 };

static int add_timers(int kfd)
{
	struct ukevent uk[TIMERS];

	memset(uk, 0, sizeof(uk));
	for (int i = 0; i < TIMERS; i++) {
		uk[i].type = KEVENT_TIMER;
		uk[i].event = KEVENT_TIMER_FIRED;
		uk[i].id.raw[0] = period_ms[i];
		uk[i].user[0] = (__u32)i;
	}
	return kevent_ctl(kfd, KEVENT_CTL_ADD, TIMERS, uk);
}

int main(int argc, char **argv)
{
	struct kevent_uring *ring;
	unsigned int got = 0, per_timer[TIMERS] = { 0 };
	int kfd;

	if (argc > 1) {
		printf("usage: %s\n"
		       "Consumes %d timer expiries through a %d-slot revision-2 ring with\n"
		       "kevent_wait() and kevent_commit().  Device: $KEVENT_DEVICE or %s.\n"
		       "Exit 0 pass, 1 fail, 77 no revision-2 device.\n",
		       argv[0], WANT, SLOTS, KEVENT_DEVICE_DEFAULT);
		return strcmp(argv[1], "--help") == 0 ? 0 : 2;
	}
	ring = calloc(1, KEVENT_URING_SIZE(SLOTS));
	if (!ring)
		return 1;
	kfd = kevent_init(ring, SLOTS, 0);
	if (kfd < 0) {
		/* no device, a revision-1 backend, or no process-memory path */
		fprintf(stderr, "ring-consumer: kevent_init: %s\n", strerror(errno));
		return errno == ENOENT || errno == ENODEV || errno == EINVAL || errno == EPERM ? 77 : 1;
	}
	if (add_timers(kfd) != 0) {
		fprintf(stderr, "ring-consumer: ADD: %s\n", strerror(errno));
		return 1;
	}
	/* man: loop */
	unsigned int uidx = 0;
	struct timespec timeout = { .tv_sec = 5 };

	while (got < WANT) {
		int n = kevent_wait(kfd, BATCH, uidx, timeout, 0);

		if (n < 0) {
			perror("kevent_wait");
			return 1;
		}
		/* ring_kidx: the next slot the backend writes; ring_over: laps committed */
		unsigned int kidx = __atomic_load_n(&ring->ring_kidx, __ATOMIC_ACQUIRE);
		unsigned int over = __atomic_load_n(&ring->ring_over, __ATOMIC_ACQUIRE);

		for (int i = 0; i < n; i++) {
			const struct ukevent *ev = &ring->event[(uidx + i) % SLOTS];

			if (ev->user[0] >= TIMERS || ev->type != KEVENT_TIMER) {
				fprintf(stderr, "ring-consumer: slot %u: wrong event\n", (uidx + i) % SLOTS);
				return 1;
			}
			per_timer[ev->user[0]]++;
		}
		if (n > 0 && kevent_commit(kfd, kidx, over) != n) {
			perror("kevent_commit");
			return 1;
		}
		uidx = kidx;
		got += n;
	}
	/* man: end */
	for (int i = 0; i < TIMERS; i++)
		printf("timer %u ms: %u expiries\n", period_ms[i], per_timer[i]);
	if (!per_timer[0]) {
		fprintf(stderr, "ring-consumer: the 5 ms timer never came\n");
		return 1;
	}
	printf("ring-consumer: %u events through %u slots, ring_over %u: ok\n", got, SLOTS,
	       ring->ring_over);
	close(kfd);
	free(ring);
	return 0;
}
