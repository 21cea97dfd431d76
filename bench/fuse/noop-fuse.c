// SPDX-License-Identifier: GPL-2.0
/*
 * noop-fuse: the baseline of bench-daemon-ioctl on fuse.  A one-file FUSE
 * filesystem (MNT/kevent) whose ioctl handler makes the same transfers as
 * kevent-cuse --fuse for one entry and nothing else: the 16-byte wrapper
 * and the 40-byte entry are read with process_vm_readv() (the daemon reads
 * both from process memory: a FUSE file has no retry path); for GET_EVENTS
 * the entry is written back with process_vm_writev() and the answer is 1.
 * Same libfuse (multi-threaded loop, the daemon's worker count), same one
 * round trip per call, answered at once.
 *
 * Usage: noop-fuse MNT   (mounts MNT, serves MNT/kevent in the foreground
 * until SIGTERM, then unmounts)
 */
#define FUSE_USE_VERSION 312

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <fuse_lowlevel.h>
#include <linux/kevent.h>

#include "../noop-ioctl.h"

#define FILE_INO 2
#define WORKERS 16	/* the daemon's default --workers (KC_DEFAULT_WORKERS) */

static void stat_of(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_mode = ino == FUSE_ROOT_ID ? S_IFDIR | 0755 : S_IFREG | 0666;
	st->st_nlink = 1;
}

static void noop_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;

	if (parent != FUSE_ROOT_ID || strcmp(name, "kevent")) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	memset(&e, 0, sizeof(e));
	e.ino = FILE_INO;
	stat_of(FILE_INO, &e.attr);
	fuse_reply_entry(req, &e);
}

static void noop_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	stat_of(ino, &st);
	fuse_reply_attr(req, &st, 0);
}

static void noop_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino != FILE_INO) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	fuse_reply_open(req, fi);
}

static void noop_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		       struct fuse_file_info *fi, unsigned int flags, const void *in_buf,
		       size_t in_bufsz, size_t out_bufsz)
{
	(void)ino, (void)fi, (void)flags, (void)in_buf, (void)in_bufsz, (void)out_bufsz;
	noop_answer(req, cmd, arg);
}

static const struct fuse_lowlevel_ops noop_ops = {
	.lookup = noop_lookup,
	.getattr = noop_getattr,
	.open = noop_open,
	.ioctl = noop_ioctl,
};

int main(int argc, char **argv)
{
	char *fargv[] = { argv[0], "-o", "fsname=kevent-noop,subtype=kevent-noop", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
	struct fuse_loop_config *lc;
	struct fuse_session *se;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: %s MNT\n", argv[0]);
		return 2;
	}
	se = fuse_session_new(&args, &noop_ops, sizeof(noop_ops), NULL);
	if (!se)
		return 1;
	if (fuse_set_signal_handlers(se) || fuse_session_mount(se, argv[1])) {
		fuse_session_destroy(se);
		return 1;
	}
	lc = fuse_loop_cfg_create();
	fuse_loop_cfg_set_max_threads(lc, WORKERS);
	fuse_loop_cfg_set_idle_threads(lc, WORKERS);
	err = fuse_session_loop_mt(se, lc);
	fuse_loop_cfg_destroy(lc);
	fuse_session_unmount(se);
	fuse_remove_signal_handlers(se);
	fuse_session_destroy(se);
	return err ? 1 : 0;
}
