// SPDX-License-Identifier: GPL-2.0
/*
 * noop-cuse: the baseline of bench-daemon-ioctl.  A CUSE server that makes
 * the same transfers as kevent-cuse's process-memory path for one entry and
 * nothing else: the 16-byte wrapper and the 40-byte array are read with
 * process_vm_readv(); for GET_EVENTS the entry is written back with
 * process_vm_writev() and the answer is 1.  Same libfuse loop (multi
 * threaded), same one round trip per call.
 *
 * Usage: noop-cuse NAME   (serves /dev/NAME in the foreground until SIGTERM)
 */
#define FUSE_USE_VERSION 31

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include <cuse_lowlevel.h>
#include <fuse_lowlevel.h>
#include <linux/kevent.h>

#include "../noop-ioctl.h"

static void noop_open(fuse_req_t req, struct fuse_file_info *fi)
{
	fuse_reply_open(req, fi);
}

static void noop_ioctl(fuse_req_t req, int cmd, void *arg, struct fuse_file_info *fi,
		       unsigned int flags, const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	(void)fi, (void)flags, (void)in_buf, (void)in_bufsz, (void)out_bufsz;
	noop_answer(req, (unsigned int)cmd, arg);
}

static const struct cuse_lowlevel_ops noop_ops = {
	.open = noop_open,
	.ioctl = noop_ioctl,
};

int main(int argc, char **argv)
{
	char devname[128];
	const char *dev_info[] = { devname };
	char *fuse_argv[] = { argv[0], "-f", NULL };
	struct cuse_info ci;

	if (argc != 2 || snprintf(devname, sizeof(devname), "DEVNAME=%s", argv[1]) >=
	    (int)sizeof(devname)) {
		fprintf(stderr, "usage: %s NAME\n", argv[0]);
		return 2;
	}
	memset(&ci, 0, sizeof(ci));
	ci.dev_info_argc = 1;
	ci.dev_info_argv = dev_info;
	ci.flags = CUSE_UNRESTRICTED_IOCTL;
	return cuse_lowlevel_main(2, fuse_argv, &ci, &noop_ops, NULL);
}
