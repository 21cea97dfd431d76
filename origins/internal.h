/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared between the origin files; not part of the API (see origins.h).
 *
 * LOCKING
 *  - korigins_lock (one mutex for every origin) protects all origin state:
 *    the timer heap, the fd watch table, the inode tables.  attach(),
 *    modify() and detach() take it; the reactor takes it around each source
 *    it handles.  korigin_fire() is always called with it held (origin.h:
 *    origin lock -> core ready lock).  Because detach() removes a kevent
 *    from every table under this lock, no fire for it runs once detach()
 *    returns.
 *  - The closers have their own mutex (closer.c), taken after korigins_lock
 *    when both are held; a closer thread never takes korigins_lock.
 *  - Nothing that can block on a client-controlled server runs under
 *    korigins_lock: fds are classified before they are taken (fdtake.c) and
 *    refused kinds never reach poll() or epoll_ctl().
 */
#ifndef KEVENT_ORIGINS_INTERNAL_H
#define KEVENT_ORIGINS_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "origin.h"
#include "origins.h"

extern pthread_mutex_t korigins_lock;

/* Reactor: epoll data is (tag << 56) | payload; the tag picks the handler. */
enum kreactor_tag {
	KR_TAG_WAKE = 1,
	KR_TAG_TIMER,
	KR_TAG_WATCH,		/* payload: fd watch slot and generation */
	KR_TAG_INOTIFY,
	KR_TAG_FANOTIFY,
};

#define KR_DATA(tag, payload)	(((uint64_t)(tag) << 56) | (payload))
#define KR_TAG(data)		((unsigned int)((data) >> 56))
#define KR_PAYLOAD(data)	((data) & ((UINT64_C(1) << 56) - 1))

int kreactor_add(int fd, uint32_t events, uint64_t data);
int kreactor_mod(int fd, uint32_t events, uint64_t data);
void kreactor_del(int fd);
int kreactor_running(void);	/* origins started (attach allowed)? */
/* pthread_create with every signal blocked in the new thread (lanes.c). */
int korigins_thread_create(pthread_t *th, void *(*fn)(void *), void *arg);

/* Closer threads, one per uid (closer.c). */
int kcloser_start(void);
void kcloser_stop(void);
void kcloser_close(uid_t uid, int fd);	/* never blocks on the fd; -1 is ignored */
void kcloser_counts(__u64 *pending, __u64 *threads);

/* Per-origin setup and reactor handlers, all called with korigins_lock held
 * except *_init and *_fini, which run while no reactor is running. */
int ktimer_init(void);
void ktimer_fini(void);
void ktimer_handle(void);
__u64 ktimer_count(void);
void ktimer_counts(__u64 *wakes, __u64 *expiries, __u64 *deferred);
extern const struct korigin_ops ktimer_ops;
extern const struct korigin_ops kptimer_ops;	/* KEVENT_POSIX_TIMER, revision 3 */

int kwatch_init(void (*log)(const char *line));
void kwatch_fini(void);
void kwatch_handle(uint64_t payload, uint32_t events);
__u64 kwatch_count(void);
extern const struct korigin_ops kpoll_ops;
extern const struct korigin_ops ksocket_ops;

int kinode_init(enum korigins_inode_backend backend, void (*log)(const char *line));
void kinode_fini(void);
void kinode_handle_inotify(void);
void kinode_handle_fanotify(void);
void kinode_counts(__u64 *watches, __u64 *objects, __u32 *backend, __u64 *overflows);
void kinode_log_overflow(void);	/* without korigins_lock */
extern const struct korigin_ops kinode_ops;

/* Taking a client's fd (fdtake.c). */
enum kfd_kind {
	KFD_OTHER = 0,		/* eventfd, char device, ... */
	KFD_REGULAR,
	KFD_DIRECTORY,
	KFD_SOCKET,
	KFD_PIPE,		/* a pipe or a FIFO: it has a count (D67) */
};

struct kfd_info {
	enum kfd_kind kind;
	unsigned int flags;	/* the open flags from fdinfo */
};

int kfd_take(const struct kcaller *caller, int fd, struct kfd_info *info);
int kfd_classify(pid_t pid, int fd, struct kfd_info *info);	/* pid 0: self */

/* ms of CLOCK_MONOTONIC truncated to 32 bits (A9). */
__u32 kclock_ms32(void);
__u64 kclock_ns(void);

#endif /* KEVENT_ORIGINS_INTERNAL_H */
