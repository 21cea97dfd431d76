// SPDX-License-Identifier: GPL-2.0
/*
 * The CUSE front end (kc_front_cuse): /dev/NAME as a CUSE character device.
 * The files themselves (queues, poll, ioctl) are kc-file.c; this is the
 * CUSE session, its callbacks and the device node's mode.
 *
 * The ring is the shared-memory object alone (design.md section 4): no
 * mmap on a CUSE device, so no ring hooks; a reply or a poll wake-up goes
 * out at once.  CUSE ioctls are unrestricted: the retry rounds are there
 * when process memory is not (B4).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "kc-daemon.h"
#include "kc-defer.h"
#include "kc-log.h"

static void kc_cuse_open(fuse_req_t req, struct fuse_file_info *fi)
{
	kc_file_open(req, fi, 0);
}

/* D15: the 2006 device had no read or write. */
static void kc_cuse_read(fuse_req_t req, size_t size, off_t off, struct fuse_file_info *fi)
{
	fuse_reply_err(req, EINVAL);
}

static void kc_cuse_write(fuse_req_t req, const char *buf, size_t size, off_t off,
			  struct fuse_file_info *fi)
{
	fuse_reply_err(req, EINVAL);
}

/* devtmpfs creates the node 0600; B5: chmod it once CUSE init is done. */
static void kc_init_done(void *userdata)
{
	char dev[64], proc[64];
	struct stat st;
	int fd = -1;

	snprintf(dev, sizeof(dev), "/dev/%s", kd.opts.name);
	for (int i = 0; i < 200 && fd < 0; i++) {
		fd = open(dev, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			usleep(10000);
	}
	if (fd < 0) {
		kc_err("%s did not appear: %s", dev, strerror(errno));
		return;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (fstat(fd, &st) || !S_ISCHR(st.st_mode))
		kc_err("%s is not a character device", dev);
	else if (chmod(proc, kd.opts.mode))
		kc_err("chmod %s: %s", dev, strerror(errno));
	else
		kc_info("serving %s (%u:%u, mode %04o)", dev, major(st.st_rdev),
			minor(st.st_rdev), kd.opts.mode);
	close(fd);
}

static const struct cuse_lowlevel_ops kc_cuse_ops = {
	.init_done = kc_init_done,
	.open = kc_cuse_open,
	.read = kc_cuse_read,
	.write = kc_cuse_write,
	.release = kc_file_release,
	.ioctl = kc_file_ioctl,
	.poll = kc_file_poll,
};

static int kc_cuse_serve(void)
{
	char devname[16 + KC_NAME_MAX];
	const char *dev_info[] = { devname };
	struct cuse_info ci = {
		.dev_info_argc = 1,
		.dev_info_argv = dev_info,
		.flags = CUSE_UNRESTRICTED_IOCTL,
	};
	char *fargv[4] = { "kevent-cuse" };
	struct fuse_session *se;
	int fargc = 1, mt, err;

	snprintf(devname, sizeof(devname), "DEVNAME=%s", kd.opts.name);
	if (kd.opts.foreground)
		fargv[fargc++] = "-f";
	if (kd.opts.fuse_debug)
		fargv[fargc++] = "-d";
	se = cuse_lowlevel_setup(fargc, fargv, &ci, &kc_cuse_ops, &mt, NULL);
	if (!se) {
		kc_err("CUSE setup failed");
		return KC_EXIT_UNAVAILABLE;
	}
	err = kc_session_run(se);
	cuse_lowlevel_teardown(se);
	return err;
}

static const char *kc_cuse_where(void)
{
	return kd.opts.name;
}

const struct kc_front kc_front_cuse = {
	.name = "CUSE",
	.ctl = "/dev/cuse",
	.ctl_missing = "/dev/cuse is missing: this kernel has no CUSE (try 'modprobe cuse')",
	.backend = KEVENT_BACKEND_CUSE,
	.where = kc_cuse_where,
	.serve = kc_cuse_serve,
};
