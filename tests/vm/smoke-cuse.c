// SPDX-License-Identifier: GPL-2.0-only
/*
 * smoke-cuse: the smallest CUSE server that answers one ioctl.
 *
 * Usage: smoke-cuse [--name NAME]
 *
 * Serves /dev/NAME (default kevent-smoke) in the foreground and single
 * threaded until SIGTERM; libfuse installs the signal handlers that end
 * the session loop cleanly.  Anything but SMOKE_IOC_PING gets ENOTTY, so
 * the client can also prove that errors travel back.
 */
#define FUSE_USE_VERSION 31

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cuse_lowlevel.h>
#include <fuse_lowlevel.h>

#include "smoke.h"

static void smoke_open(fuse_req_t req, struct fuse_file_info *fi)
{
	fuse_reply_open(req, fi);
}

static void smoke_release(fuse_req_t req, struct fuse_file_info *fi)
{
	fuse_reply_err(req, 0);
}

static void smoke_ioctl(fuse_req_t req, int cmd, void *arg,
			struct fuse_file_info *fi, unsigned int flags,
			const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	__u32 answer = SMOKE_PING_ANSWER;

	/* cmd arrives as int; compare as the unsigned request number. */
	if ((unsigned int)cmd != SMOKE_IOC_PING) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	if (out_bufsz < sizeof(answer)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	fuse_reply_ioctl(req, 0, &answer, sizeof(answer));
}

static const struct cuse_lowlevel_ops smoke_ops = {
	.open = smoke_open,
	.release = smoke_release,
	.ioctl = smoke_ioctl,
};

int main(int argc, char **argv)
{
	const char *name = SMOKE_DEFAULT_NAME;
	char devname[128];
	const char *dev_info[] = { devname };
	/* Foreground and single threaded: the harness owns the process. */
	char *fuse_argv[] = { argv[0], "-f", "-s", NULL };
	struct cuse_info ci;

	if (argc == 3 && strcmp(argv[1], "--name") == 0) {
		name = argv[2];
	} else if (argc != 1) {
		fprintf(stderr, "usage: %s [--name NAME]\n", argv[0]);
		return 2;
	}
	if (snprintf(devname, sizeof(devname), "DEVNAME=%s", name) >=
	    (int)sizeof(devname)) {
		fprintf(stderr, "%s: device name too long\n", argv[0]);
		return 2;
	}

	memset(&ci, 0, sizeof(ci));
	ci.dev_info_argc = 1;
	ci.dev_info_argv = dev_info;

	return cuse_lowlevel_main(3, fuse_argv, &ci, &smoke_ops, NULL);
}
