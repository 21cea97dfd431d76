/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libkqueue-kevent internals: one kqueue, its knotes, the lists. */
#ifndef KQUEUE_KEVENT_INTERNAL_H
#define KQUEUE_KEVENT_INTERNAL_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sys/event.h"

struct link {
	struct link *prev, *next;	/* both NULL when off every list */
};

enum kind {
	K_FD,		/* pipe, socket, other pollable fd: a poll kevent on it */
	K_FILE,		/* regular file: the library alone (D14 says always ready) */
	K_TIMER,	/* revision 3: a KEVENT_POSIX_TIMER kevent (a period of at */
			/* least 100 us); else a timerfd watched by a poll kevent */
	K_USER,		/* revision 3: a KEVENT_USER kevent; else the library alone, */
			/* woken through the wake eventfd */
	K_SIGNAL,	/* the library's signalfd, read by a helper thread */
	K_PROC,		/* pidfd watched by a poll kevent */
	K_VNODE,	/* revision 4: a KEVENT_INODE kevent with the notes (D68); */
			/* else the library's inotify fd watched by a poll kevent */
	K_KQUEUE,	/* another kqueue's fd: no backend polls one, the library does */
};

struct knote {
	struct kevent kev;	/* ident, filter, stored flags, udata */
	unsigned int sfflags;	/* fflags as registered (user: the user flags) */
	intptr_t sdata;		/* data as registered */
	uint64_t serial;	/* the device kevent's cookie */
	enum kind kind;
	bool disabled;
	bool dev_on;		/* a device kevent is registered */
	bool dev_broken;	/* the device refused or broke it: re-checked only */
	bool dev_user;		/* EVFILT_USER on a KEVENT_USER kevent (revision 3) */
	bool dev_timer;		/* EVFILT_TIMER on a KEVENT_POSIX_TIMER kevent (revision 3) */
	bool dev_vnode;		/* EVFILT_VNODE on a KEVENT_INODE kevent (revision 4) */
	bool vnode_dir;		/* vnode: a directory (a subdirectory's LINK is its WRITE's) */
	unsigned int dev_req;	/* the device kevent's req_flags (LEVEL: K_FD only) */
	bool dev_disarmed;	/* its DISPATCH kevent reported and was not MODIFIED since */
	uint64_t dev_gen;	/* K_FD: kq->gen when the device last reported it */
	uint64_t out_call;	/* the call whose eventlist its record went to at once */
	unsigned int dev_revents; /* K_FD: the device's result then (ret_data[0]) */
	unsigned int dev_count;	/* K_FD, revision >= 4: its count then (ret_data[1], D67) */
	bool listening;		/* K_FD: a listening socket */
	bool is_socket;
	bool is_pipe;
	int watch_fd;		/* what the device polls: ident, timerfd, pidfd; -1 none */
	unsigned int watch_events;
	dev_t st_dev;		/* identity of ident at EV_ADD (fd filters) */
	ino_t st_ino;
	/* filter state */
	uint64_t count;		/* timer expirations, signal deliveries */
	unsigned int fflags;	/* vnode notes seen, not yet delivered */
	bool hook;		/* user: triggered */
	intptr_t last_data;	/* orphan EV_CLEAR fd: data at the last report */
	bool last_eof;
	int wd;			/* vnode: inotify watch */
	off_t size;		/* vnode: size and link count at the last look */
	nlink_t nlink;
	struct knote *hnext;	/* (ident, filter) hash chain */
	struct knote *snext;	/* serial hash chain */
	struct link cand;	/* on kq->cands: check at the next collection */
	struct link orph;	/* on kq->orphans: re-checked after every wait */
};

#define KQ_HASH 4096u

struct kq {
	int fd;			/* the /dev/kevent fd: the kqueue descriptor */
	dev_t dev_dev;		/* the device file's identity: tells kqueue fds */
	dev_t dev_rdev;
	mode_t dev_mode;
	pid_t pid;		/* the process that made it (fork rule) */
	unsigned int rev;	/* the queue's ABI revision (SET_ABI), 1 without */
	bool dev_user;		/* the queue serves KEVENT_USER: EVFILT_USER goes there */
	bool dev_timer;		/* the queue serves KEVENT_POSIX_TIMER: EVFILT_TIMER too */
	bool dev_level;		/* revision >= 2: LEVEL, ALWAYS_QUEUE, POLLRDHUP on poll kevents */
	bool dev_count;		/* revision >= 4: a poll kevent's ret_data[1] is its count (D67) */
	bool dev_fdcheck;	/* revision >= 4: the device checks a poll kevent's fd (D69) */
	bool dev_vnode;		/* revision >= 4 with INODE: EVFILT_VNODE goes there (D68) */
	uint64_t gen;		/* kevent() calls that collected: tells a fresh device report */
	int refs;		/* registry + running kevent() calls (reg_lock) */
	bool closed;
	pthread_mutex_t lock;
	int waiters;		/* threads blocked in GET_EVENTS */
	bool need_wake;		/* candidates came from a change, a signal or a short list */
	bool level_left;	/* this call delivered a level knote the library looks at again */
	uint64_t level_dev;	/* serial of one it delivered that the device's LEVEL re-checks */
	uint64_t next_serial;
	int wake_fd;		/* eventfd: wakes blocked callers (serial 1) */
	int ino_fd;		/* inotify for EVFILT_VNODE (serial 2), -1 until needed */
	bool ino_on;
	unsigned int nknotes;
	struct knote *by_key[KQ_HASH];
	struct knote *by_serial[KQ_HASH];
	struct link cands;
	struct link orphans;
};

/*
 * A rare case's helper, kept out of line: inlined, its locals and saved
 * registers would be paid by the common path of its caller (a fd event the
 * device's record settles with no system call: kqueue-kevent(3) NOTES).
 */
#define SLOW_PATH __attribute__((noinline))

/* The event of kn as registered: what a check then fills (data, fflags, EV_EOF). */
static inline void kn_event(const struct knote *kn, struct kevent *out)
{
	out->ident = kn->kev.ident;
	out->filter = kn->kev.filter;
	out->flags = kn->kev.flags;
	out->fflags = 0;
	out->data = 0;
	out->udata = kn->kev.udata;
}

#define SERIAL_WAKE	1
#define SERIAL_INOTIFY	2
#define SERIAL_FIRST	16

#endif /* KQUEUE_KEVENT_INTERNAL_H */
