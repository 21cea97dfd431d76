// SPDX-License-Identifier: GPL-2.0
/*
 * How often one kevent() call reports fewer events than were ready when it
 * was made.  A trial: two pipes watched for EVFILT_READ, both writers
 * closed, then one kevent() call with room for 8; the call is short when it
 * returns 1 (the daemon had not yet turned the second hang-up into a ready
 * kevent).  With --drain, KEVENT_IOC_DRAIN (only where the backend answers
 * it: kevent-cuse --fault-inject) runs before the call: what a drain
 * barrier in the ABI would give.
 *
 * Usage: bench-kqueue-short [trials] [--drain]   (device: $KEVENT_DEVICE)
 * Prints "short N of T (P %)"; exit 77 without the device.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/event.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <libkevent.h>

static int trial(bool drain)
{
	int kq = kqueue(), p[2][2], n;
	struct kevent ch[2], ev[8];
	struct timespec ts = { 5, 0 };
	struct kevent_drain d = { 0 };

	if (kq < 0)
		return -errno;
	for (int i = 0; i < 2; i++) {
		if (pipe2(p[i], O_CLOEXEC) < 0)
			return -errno;
		EV_SET(&ch[i], p[i][0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	}
	if (kevent(kq, ch, 2, NULL, 0, NULL) < 0)
		return -errno;
	close(p[0][1]);
	close(p[1][1]);
	if (drain && ioctl(kq, KEVENT_IOC_DRAIN, &d) < 0)
		return -errno;
	n = kevent(kq, NULL, 0, ev, 8, &ts);
	if (n < 0)
		n = -errno;
	close(p[0][0]);
	close(p[1][0]);
	close(kq);
	return n;
}

int main(int argc, char **argv)
{
	int trials = argc > 1 ? atoi(argv[1]) : 1000, shorts = 0;
	bool drain = argc > 2 && strcmp(argv[2], "--drain") == 0;

	if (trials <= 0) {
		fprintf(stderr, "usage: %s [trials] [--drain]\n", argv[0]);
		return 1;
	}
	for (int i = 0; i < trials; i++) {
		int n = trial(drain);

		if (n == -ENOENT || n == -ENODEV)
			return 77;
		if (n < 0 || n > 2) {
			fprintf(stderr, "trial %d: %s (%d)\n", i, n < 0 ? strerror(-n) : "too many", n);
			return 1;
		}
		shorts += n < 2;
	}
	printf("short %d of %d (%.1f %%)%s\n", shorts, trials, 100.0 * shorts / trials,
	       drain ? " with KEVENT_IOC_DRAIN before each call" : "");
	return 0;
}
