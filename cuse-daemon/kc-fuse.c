// SPDX-License-Identifier: GPL-2.0
/*
 * The FUSE front end (--fuse DIR, kc_front_fuse): a one-file filesystem
 * mounted on DIR, the file named "kevent".  The files themselves (queues, poll, ioctl) are
 * kc-file.c, exactly as on CUSE; this is the mount, its callbacks and the
 * checks the kernel leaves to a FUSE server.
 *
 * Why each choice (abi.md 7.7 and section 9 say what callers see):
 *  - Every lookup of "kevent" answers a fresh node id with entry and
 *    attribute timeouts 0, so every open(2) of the path gets its own inode
 *    (measured with libfuse 3.14); a second open of a node that already
 *    has a live queue (a reopen through /proc/self/fd, a bind mount) is
 *    refused -EBUSY, so no two queues ever share one inode's page cache.
 *  - The ring is the file's page cache (kc-fring.c), so a plain mmap() of
 *    the file maps it (KEVENT_FEAT_RING_MMAP); KEVENT_IOC_RING_SHM serves
 *    the same bytes as on CUSE.  Hence: not direct_io, keep_cache, no
 *    FUSE_CAP_AUTO_INVAL_DATA or writeback cache, a size (KEVENT_RING_SIZE)
 *    and mtime (0) that never change, so the kernel never drops the pages
 *    on its own; a READ gets the image last sent, never a newer one.
 *  - The kernel's ioctls on a FUSE file are restricted (it copies exactly
 *    _IOC_SIZE bytes, no retry rounds), so the arrays travel through
 *    process memory only (kd.paths.no_retry): where that is refused the
 *    call fails -EPERM at once.
 *  - allow_other, so other uids reach the daemon at all; default_permissions
 *    off, so the daemon checks the file's mode (--mode) itself at open.
 *  - write: EINVAL (D15), nothing is ever read back; read is the page
 *    cache's (abi.md section 9); setattr (truncate, chmod, chown): EPERM.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kc-daemon.h"
#include "kc-defer.h"
#include "kc-fring.h"
#include "kc-log.h"

#define KC_FUSE_FILE	"kevent"

static char kc_fuse_dir[PATH_MAX];
static atomic_ulong kc_fuse_next_node = FUSE_ROOT_ID + 1;

/* ---- the mount point ---- */

/* 1 when the mount table has a FUSE mount exactly at path. */
static int kc_fuse_mounted_at(const char *path)
{
	char line[4096], mnt[PATH_MAX], type[64];
	FILE *f = fopen("/proc/self/mountinfo", "r");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - ");

		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1 && sep &&
		    sscanf(sep + 3, "%63s", type) == 1)
			found = !strcmp(mnt, path) && !strncmp(type, "fuse", 4);
	}
	fclose(f);
	return found;
}

/*
 * dir as the mount table spells it, without resolving it (realpath would
 * stat a dead mount): absolute, no trailing slash.  0 or -ENAMETOOLONG.
 */
static int kc_fuse_abs(const char *dir, char *out, size_t len)
{
	char cwd[PATH_MAX];
	size_t n;

	if (dir[0] == '/')
		n = (size_t)snprintf(out, len, "%s", dir);
	else if (getcwd(cwd, sizeof(cwd)))
		n = (size_t)snprintf(out, len, "%s/%s", cwd, dir);
	else
		return -errno;
	if (n >= len)
		return -ENAMETOOLONG;
	while (n > 1 && out[n - 1] == '/')
		out[--n] = 0;
	return 0;
}

/*
 * A daemon that died left its mount behind: every access fails ENOTCONN.
 * Detach it (the kernel frees it once its last user is gone).
 */
static int kc_fuse_clean_stale(const char *given)
{
	char dir[PATH_MAX];
	struct stat st;

	if (stat(given, &st) == 0 || errno != ENOTCONN)
		return 0;
	if (kc_fuse_abs(given, dir, sizeof(dir)) || !kc_fuse_mounted_at(dir)) {
		kc_err("%s: %s, and it is no FUSE mount of ours to clean", given,
		       strerror(ENOTCONN));
		return KC_EXIT_UNAVAILABLE;
	}
	if (umount2(dir, MNT_DETACH)) {
		kc_err("%s: cannot detach the stale FUSE mount: %s", dir, strerror(errno));
		return KC_EXIT_UNAVAILABLE;
	}
	kc_info("detached the stale FUSE mount on %s (a previous run did not unmount)", dir);
	return 0;
}

/* ---- --link PATH: a symlink to DIR/kevent ---- */

static char kc_fuse_target[PATH_MAX + 8];

/*
 * A symlink, never a bind mount: a bind mount (like a reopen through
 * /proc/self/fd) reaches the same inode without a lookup, while a symlink
 * is resolved by a fresh lookup per open, so each open through it is still
 * its own inode and queue.  Only a symlink may be replaced (a stale one of
 * a killed run); a device node or file there is refused at start.
 */
static int kc_fuse_link_check(void)
{
	struct stat st;

	if (!kd.opts.link || lstat(kd.opts.link, &st))
		return 0;
	if (!S_ISLNK(st.st_mode)) {
		kc_err("--link %s: exists and is no symlink (a CUSE or module /dev/kevent?); "
		       "not replaced", kd.opts.link);
		return KC_EXIT_UNAVAILABLE;
	}
	return 0;
}

static int kc_fuse_link_make(void)
{
	if (!kd.opts.link)
		return 0;
	snprintf(kc_fuse_target, sizeof(kc_fuse_target), "%s/%s", kd.opts.fuse_dir, KC_FUSE_FILE);
	if (kc_fuse_link_check())
		return KC_EXIT_UNAVAILABLE;
	if (unlink(kd.opts.link) && errno != ENOENT) {
		kc_err("--link %s: cannot remove the old symlink: %s", kd.opts.link, strerror(errno));
		return KC_EXIT_UNAVAILABLE;
	}
	if (symlink(kc_fuse_target, kd.opts.link)) {
		kc_err("--link %s: %s", kd.opts.link, strerror(errno));
		return KC_EXIT_UNAVAILABLE;
	}
	kc_info("%s -> %s", kd.opts.link, kc_fuse_target);
	return 0;
}

/* At the stop: only if it is still ours (nobody replaced it meanwhile). */
static void kc_fuse_link_remove(void)
{
	char buf[sizeof(kc_fuse_target)];
	ssize_t n;

	if (!kd.opts.link)
		return;
	n = readlink(kd.opts.link, buf, sizeof(buf) - 1);
	if (n < 0)
		return;
	buf[n] = 0;
	if (!strcmp(buf, kc_fuse_target))
		unlink(kd.opts.link);
}

/* Resolve DIR, clean a stale mount there, refuse a busy one: 0 or an exit status. */
static int kc_fuse_preflight(void)
{
	char parent[PATH_MAX + 4];
	struct stat st, pst;
	int err = kc_fuse_clean_stale(kd.opts.fuse_dir);

	if (err)
		return err;
	if (!realpath(kd.opts.fuse_dir, kc_fuse_dir)) {
		kc_err("--fuse %s: %s (it must be an existing directory)", kd.opts.fuse_dir,
		       strerror(errno));
		return KC_EXIT_UNAVAILABLE;
	}
	if (stat(kc_fuse_dir, &st) || !S_ISDIR(st.st_mode)) {
		kc_err("--fuse %s: not a directory", kc_fuse_dir);
		return KC_EXIT_UNAVAILABLE;
	}
	snprintf(parent, sizeof(parent), "%s/..", kc_fuse_dir);
	if (strcmp(kc_fuse_dir, "/") == 0 ||
	    (stat(parent, &pst) == 0 && pst.st_dev != st.st_dev)) {
		kc_err("--fuse %s: busy, something is mounted there already", kc_fuse_dir);
		return KC_EXIT_UNAVAILABLE;
	}
	kd.opts.fuse_dir = kc_fuse_dir;
	return kc_fuse_link_check();
}

/* ---- the filesystem: one directory, one file ---- */

static void kc_fuse_stat(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	if (ino == FUSE_ROOT_ID) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else {
		st->st_mode = S_IFREG | kd.opts.mode;
		st->st_nlink = 1;
		/* Constant, as the zero mtime: the kernel keeps the pages. */
		st->st_size = KEVENT_RING_SIZE;
		st->st_blksize = KEVENT_RING_PAGE_SIZE;
	}
}

static void kc_fuse_init(void *userdata, struct fuse_conn_info *conn)
{
	/*
	 * The file's data never changes behind the kernel's back (only by
	 * our stores), and nothing written by a client reaches the pages we
	 * serve: no automatic invalidation, no writeback cache.
	 */
	conn->want &= ~(FUSE_CAP_AUTO_INVAL_DATA | FUSE_CAP_WRITEBACK_CACHE);
	kc_info("serving %s/%s (FUSE, mode %04o)", kd.opts.fuse_dir, KC_FUSE_FILE, kd.opts.mode);
}

/* A fresh node per lookup, never cached: each open(2) its own inode. */
static void kc_fuse_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;

	if (parent != FUSE_ROOT_ID || strcmp(name, KC_FUSE_FILE)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	memset(&e, 0, sizeof(e));
	e.ino = atomic_fetch_add(&kc_fuse_next_node, 1);
	kc_fuse_stat(e.ino, &e.attr);
	e.attr_timeout = 0;
	e.entry_timeout = 0;
	fuse_reply_entry(req, &e);
}

static void kc_fuse_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	fuse_reply_none(req);	/* nodes carry no state beyond their queue */
}

static void kc_fuse_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	kc_fuse_stat(ino, &st);
	fuse_reply_attr(req, &st, 0);
}

/* Truncation, chmod, chown, utimes: the file never changes. */
static void kc_fuse_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
			    struct fuse_file_info *fi)
{
	fuse_reply_err(req, EPERM);
}

static void kc_fuse_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			    struct fuse_file_info *fi)
{
	static const char *const names[] = { ".", "..", KC_FUSE_FILE };
	char buf[256];
	size_t len = 0;

	for (off_t i = off; i < 3; i++) {
		struct stat st;
		size_t n;

		kc_fuse_stat(i == 2 ? FUSE_ROOT_ID + 1 : FUSE_ROOT_ID, &st);
		n = fuse_add_direntry(req, buf + len, sizeof(buf) - len, names[i], &st, i + 1);
		if (len + n > size || len + n > sizeof(buf))
			break;
		len += n;
	}
	fuse_reply_buf(req, buf, len);
}

/* default_permissions is off: the file's mode is checked here (root owns it). */
static int kc_fuse_may_open(fuse_req_t req, int flags)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);
	unsigned int want = (flags & O_ACCMODE) == O_RDONLY ? 4 :
			    (flags & O_ACCMODE) == O_WRONLY ? 2 : 6;
	unsigned int bits = kd.opts.mode;

	if (c->uid == 0)
		return 0;
	bits = c->gid == 0 ? (bits >> 3) & 7 : bits & 7;
	return (bits & want) == want ? 0 : -EACCES;
}

static void kc_fuse_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	int err = ino == FUSE_ROOT_ID ? -EISDIR : kc_fuse_may_open(req, fi->flags);

	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	/* The page cache is the ring: kept across opens (each its own inode). */
	fi->direct_io = 0;
	fi->keep_cache = 1;
	kc_file_open(req, fi, ino);
}

/* The page cache asks: the ring's bytes (abi.md section 9: no D15 here). */
static void kc_fuse_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			 struct fuse_file_info *fi)
{
	kc_fring_read(req, kc_file_front_ring(fi), size, off);
}

/* D15: the 2006 device had no write; nothing is ever read back. */

static void kc_fuse_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
			  off_t off, struct fuse_file_info *fi)
{
	fuse_reply_err(req, EINVAL);
}

static void kc_fuse_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	kc_file_release(req, fi);
}

static void kc_fuse_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
			 struct fuse_pollhandle *ph)
{
	kc_file_poll(req, fi, ph);
}

static void kc_fuse_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
			  struct fuse_file_info *fi, unsigned int flags, const void *in_buf,
			  size_t in_bufsz, size_t out_bufsz)
{
	if (ino == FUSE_ROOT_ID) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	kc_file_ioctl(req, (int)cmd, arg, fi, flags, in_buf, in_bufsz, out_bufsz);
}

static const struct fuse_lowlevel_ops kc_fuse_ops = {
	.init = kc_fuse_init,
	.lookup = kc_fuse_lookup,
	.forget = kc_fuse_forget,
	.getattr = kc_fuse_getattr,
	.setattr = kc_fuse_setattr,
	.readdir = kc_fuse_readdir,
	.open = kc_fuse_open,
	.read = kc_fuse_read,
	.write = kc_fuse_write,
	.release = kc_fuse_release,
	.poll = kc_fuse_poll,
	.ioctl = kc_fuse_ioctl,
};

/* ---- the session ---- */

static struct fuse_session *kc_fuse_mount(void)
{
	char *argv[4] = { "kevent-cuse", "-o", "allow_other,fsname=kevent,subtype=kevent" };
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	struct fuse_session *se;

	if (kd.opts.fuse_debug)
		argv[args.argc++] = "-d";
	se = fuse_session_new(&args, &kc_fuse_ops, sizeof(kc_fuse_ops), NULL);
	fuse_opt_free_args(&args);
	if (!se) {
		kc_err("FUSE session setup failed");
		return NULL;
	}
	if (fuse_set_signal_handlers(se) || fuse_session_mount(se, kd.opts.fuse_dir)) {
		kc_err("cannot mount FUSE on %s (see the line above)", kd.opts.fuse_dir);
		fuse_remove_signal_handlers(se);
		fuse_session_destroy(se);
		return NULL;
	}
	return se;
}

static void kc_fuse_unmount(struct fuse_session *se)
{
	fuse_session_unmount(se);
	fuse_remove_signal_handlers(se);
	fuse_session_destroy(se);
}

static int kc_fuse_serve(void)
{
	struct fuse_session *se = kc_fuse_mount();
	int err;

	if (!se)
		return KC_EXIT_UNAVAILABLE;
	if (fuse_daemonize(kd.opts.foreground)) {
		kc_fuse_unmount(se);
		return KC_EXIT_OSERR;
	}
	err = kc_fuse_link_make();
	if (err) {
		kc_fuse_unmount(se);
		return err;
	}
	if (kc_flusher_start(se)) {
		kc_fuse_link_remove();
		kc_fuse_unmount(se);
		return KC_EXIT_OSERR;
	}
	err = kc_session_run(se);
	kc_fuse_link_remove();
	/* After the queues are gone (kc_session_run's stop), before the session. */
	kc_flusher_stop();
	kc_fuse_unmount(se);
	return err;
}

/* ---- the front end ---- */

static const char *kc_fuse_where(void)
{
	return kd.opts.fuse_dir;
}

/* B4: a FUSE file's ioctls are restricted, so process memory or nothing. */
static int kc_fuse_check(void)
{
	if (!kd.opts.no_process_vm)
		return 0;
	kc_err("--no-process-vm cannot go with --fuse: a FUSE file has no ioctl retry path");
	return KC_EXIT_USAGE;
}

/* The ring as the file's page cache (kc-fring.c), one per node. */
static int kc_fuse_ring_new(unsigned long node, const void *live, void **ring)
{
	struct kc_fring *fr;
	int err = kc_fring_new(node, live, &fr);

	if (!err)
		*ring = fr;
	return err;
}

static void kc_fuse_ring_free(void *ring)
{
	kc_fring_free(ring);
}

static void kc_fuse_ring_written(void *ring, size_t off, size_t len)
{
	kc_fring_written(ring, off, len);
}

static int kc_fuse_ring_after(void *ring, void (*fn)(void *), void *arg)
{
	return kc_fring_after(ring, fn, arg);
}

const struct kc_front kc_front_fuse = {
	.name = "FUSE",
	.ctl = "/dev/fuse",
	.ctl_missing = "/dev/fuse is missing: this kernel or container has no FUSE "
		       "(try 'modprobe fuse')",
	.backend = KEVENT_BACKEND_FUSE,
	.features = KEVENT_FEAT_RING_MMAP,	/* the file's page cache is the ring */
	.no_retry = 1,
	.where = kc_fuse_where,
	.check = kc_fuse_check,
	.preflight = kc_fuse_preflight,
	.serve = kc_fuse_serve,
	.ring_new = kc_fuse_ring_new,
	.ring_free = kc_fuse_ring_free,
	.ring_written = kc_fuse_ring_written,
	.ring_after = kc_fuse_ring_after,
};
