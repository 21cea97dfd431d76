// SPDX-License-Identifier: GPL-2.0-only
/*
 * smoke-client: asks the smoke CUSE device its one question.
 *
 * Usage: smoke-client [DEVICE]   (default /dev/kevent-smoke)
 *
 * Exit 0 only if PING answers SMOKE_PING_ANSWER and an unknown ioctl
 * fails with ENOTTY; every other outcome exits 1 with the reason, so a
 * broken CUSE path can never look like a pass.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "smoke.h"

int main(int argc, char **argv)
{
	const char *dev = argc > 1 ? argv[1] : "/dev/" SMOKE_DEFAULT_NAME;
	__u32 answer = 0;
	int fd, ret;

	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "smoke-client: open %s: %s\n", dev, strerror(errno));
		return 1;
	}
	if (ioctl(fd, SMOKE_IOC_PING, &answer) != 0) {
		fprintf(stderr, "smoke-client: PING: %s\n", strerror(errno));
		return 1;
	}
	if (answer != SMOKE_PING_ANSWER) {
		fprintf(stderr, "smoke-client: PING answered 0x%08x, want 0x%08x\n",
			answer, SMOKE_PING_ANSWER);
		return 1;
	}
	/* A request the server does not know must come back as ENOTTY. */
	ret = ioctl(fd, _IOR(SMOKE_IOC_MAGIC, 2, __u32), &answer);
	if (ret != -1 || errno != ENOTTY) {
		fprintf(stderr, "smoke-client: unknown ioctl gave %d (%s), want ENOTTY\n",
			ret, ret == -1 ? strerror(errno) : "no error");
		return 1;
	}
	if (close(fd) != 0) {
		fprintf(stderr, "smoke-client: close: %s\n", strerror(errno));
		return 1;
	}
	printf("smoke-client: PING 0x%08x ok, unknown ioctl ENOTTY ok\n", SMOKE_PING_ANSWER);
	return 0;
}
