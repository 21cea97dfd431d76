/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The event origins: timer (timerfd), poll and socket (epoll on duplicates
 * of the client's fds taken with pidfd_getfd), inode (fanotify, inotify
 * fallback).  One reactor thread drives them all.
 *
 * How a transport uses them:
 *
 *	struct korigins_config cfg = { 0 };	// defaults: reactor thread, auto inode backend
 *	int err = korigins_start(&cfg);		// registers the ops with korigin_register()
 *	...serve queues through core/...
 *	...release every queue (every kevent detached)...
 *	korigins_stop();
 *
 * korigins_start() registers KEVENT_TIMER, KEVENT_POLL, KEVENT_SOCKET and
 * KEVENT_INODE with the core (korigin_register); NAIO and AIO stay
 * unregistered, so the core fails them per entry with -EINVAL.  It starts
 * the reactor thread (unless KORIGINS_NO_THREAD); closer threads, one per
 * uid and started on first use, close the duplicated client fds so that a
 * slow close never runs on the reactor or on a transport worker (design.md B3)
 * and delays only its own uid (B7).
 *
 * korigins_stop() stops the threads and frees what the origins hold.  All
 * kevents must have been detached before (release every queue first); an
 * attach() after stop fails with -ENODEV.  start/stop may be repeated.
 *
 * Deterministic use (tests, the fuzzer): KORIGINS_NO_THREAD starts no
 * reactor thread; the caller runs the reactor by hand with korigins_run(),
 * which waits at most timeout_ms for activity, so a test never hangs.
 * korigins_sync_closer() waits until every queued duplicate is closed.
 *
 * Errors are -errno.
 */
#ifndef KEVENT_ORIGINS_H
#define KEVENT_ORIGINS_H

#include <linux/types.h>

#define KORIGINS_NO_THREAD	0x1	/* no reactor thread: call korigins_run() */

enum korigins_inode_backend {
	KORIGINS_INODE_AUTO = 0,	/* fanotify with FID reporting, else inotify */
	KORIGINS_INODE_FANOTIFY,	/* fanotify only: start fails if unavailable */
	KORIGINS_INODE_INOTIFY,		/* inotify only */
};

struct korigins_config {
	unsigned int flags;		/* KORIGINS_* */
	enum korigins_inode_backend inode_backend;
	/*
	 * Where the origins write the rare line worth a log (an inotify or
	 * fanotify queue overflow: once per overflow, with a counter); called
	 * on the reactor thread without any origin lock.  NULL: stderr.
	 */
	void (*log)(const char *line);
};

int korigins_start(const struct korigins_config *cfg);
void korigins_stop(void);

/*
 * One reactor round in the caller's thread (KORIGINS_NO_THREAD only; -EBUSY
 * with a reactor thread): waits up to timeout_ms (-1: forever, 0: not at
 * all) for activity and handles it.  Returns how many sources had activity.
 */
int korigins_run(int timeout_ms);

/*
 * KEVENT_IOC_DRAIN (tests only): returns once every source event pending at
 * the call has been handled by the reactor (a round after it, with a reactor
 * thread; rounds until idle without one).
 */
void korigins_drain(void);

/* Waits until the closer threads have closed every duplicate queued so far. */
void korigins_sync_closer(void);

/* What the origins hold now (tests, INFO, leak checks). */
struct korigins_stats {
	__u64 timers;			/* armed timer kevents */
	__u64 fd_watches;		/* poll/socket kevents holding a duplicate */
	__u64 inode_watches;		/* inode kevents */
	__u64 inode_objects;		/* watched inodes (marks or watches) */
	__u64 closer_pending;		/* duplicates waiting to be closed */
	__u32 inode_backend;		/* KORIGINS_INODE_FANOTIFY or _INOTIFY */
	__u32 __pad;
	__u64 timer_wakes;		/* timerfd wakes handled since start */
	__u64 timer_expiries;		/* timer expiries handled since start */
	__u64 inode_overflows;		/* inotify/fanotify queue overflows since start */
	__u64 timer_deferred;		/* expiries over a uid's budget, merged (B7) */
	__u64 closer_threads;		/* closer threads started, one per uid */
};
void korigins_stats(struct korigins_stats *out);

#endif /* KEVENT_ORIGINS_H */
