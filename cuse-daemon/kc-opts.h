/* SPDX-License-Identifier: GPL-2.0 */
/* kevent-cuse command line. */
#ifndef KC_OPTS_H
#define KC_OPTS_H

#include <stdio.h>
#include <linux/kevent.h>

#define KC_DEFAULT_NAME		"kevent"
#define KC_DEFAULT_MODE		0666	/* like /dev/fuse */
/*
 * The default ring directory is one per instance inside this one (design.md
 * section 4): cuse-NAME for /dev/NAME, fuse-HASH for a --fuse mount (HASH:
 * 16 hex digits of its canonical path), so two daemons never sweep each
 * other's objects and a restart on the same device sweeps its own.
 */
#define KC_SHM_PARENT		"/dev/shm/kevent-cuse"
#define KC_DEFAULT_WORKERS	16
#define KC_NAME_MAX		32

struct kc_opts {
	const char *name;		/* DEVNAME: /dev/<name> */
	const char *fuse_dir;		/* --fuse DIR: a FUSE mount, not CUSE; NULL: CUSE */
	const char *link;		/* --link PATH: a symlink to DIR/kevent; NULL: none */
	unsigned int mode;		/* chmod of the node after CUSE init */
	const char *shm_dir;		/* --shm-dir; NULL: per instance (kc_opts_shm_dir) */
	unsigned int workers;		/* libfuse worker threads (max) */
	__u32 caps[KEVENT_LIMIT_NR];	/* per-uid caps (B7), 0: none */
	int foreground;
	int debug;			/* daemon debug messages */
	int fuse_debug;			/* libfuse's own request dump */
	int trace;			/* decode every ioctl */
	int use_syslog;
	int no_process_vm;		/* force the retry path (tests, B4) */
	int fault_inject;		/* answer KEVENT_IOC_FAULT (tests) */
	int help;
	int version;
};

/* Defaults for every field. */
void kc_opts_init(struct kc_opts *o);
/*
 * Parse argv into o (after kc_opts_init).  Returns 0, or -EINVAL after
 * printing one line naming the bad option to err.  Never exits.
 */
int kc_opts_parse(struct kc_opts *o, int argc, char **argv, FILE *err);
void kc_opts_usage(FILE *out, const char *argv0);
/*
 * The ring directory: --shm-dir, else KC_SHM_PARENT/cuse-NAME or, with
 * --fuse (fuse_dir canonical by then), KC_SHM_PARENT/fuse-HASH.  0 or
 * -ENAMETOOLONG.
 */
int kc_opts_shm_dir(const struct kc_opts *o, char *out, size_t len);

#endif /* KC_OPTS_H */
