/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libkevent: the 2006 kevent system calls as functions over the ioctls of
 * <linux/kevent.h>, plus helpers for the memory-mapped ring.
 *
 * Every function returns -1 and sets errno on failure, like the syscall
 * wrappers of the 2006 test programs; see libkevent(3).
 */
#ifndef LIBKEVENT_H
#define LIBKEVENT_H

#include <stddef.h>
#include <time.h>
#include <linux/kevent.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KEVENT_DEVICE_DEFAULT "/dev/kevent"

/* kevent_ctl(2): KEVENT_CTL_ADD/REMOVE/MODIFY on num ukevents at arg. */
int kevent_ctl(int fd, unsigned int cmd, unsigned int num, void *arg);

/*
 * kevent_get_events(2): wait until min_nr kevents are ready or timeout_ns
 * passes (KEVENT_TIMEOUT_INFINITE: forever), copy up to max_nr to buf.
 * O_NONBLOCK on fd, however it was set, makes the call non-blocking (A11).
 */
int kevent_get_events(int fd, unsigned int min_nr, unsigned int max_nr,
		      __u64 timeout_ns, void *buf, unsigned int flags);

/* KEVENT_IOC_INFO into *info (zero-filled first). */
int kevent_info(int fd, struct kevent_info *info);

/* KEVENT_IOC_SET_ABI: before the first kevent_ctl() on the queue only. */
int kevent_set_abi(int fd, unsigned int revision, unsigned int flags);

/* A read-only view of a queue's ring, from either backend. */
struct kevent_ring {
	const unsigned char *base;	/* KEVENT_RING_SIZE bytes, PROT_READ */
	size_t length;
	unsigned int next;		/* the reader's index: next slot to read */
	int via_shm;			/* 1: KEVENT_IOC_RING_SHM, 0: mmap of fd */
};

/*
 * Map the ring of queue fd: mmap() of the fd where the backend supports it,
 * else the shared-memory object KEVENT_IOC_RING_SHM names.  ring->next starts
 * at the current index, so only slots written after the call are new.
 */
int kevent_ring_map(int fd, struct kevent_ring *ring);
int kevent_ring_unmap(struct kevent_ring *ring);

/* The backend's write index (acquire): the next slot it will write. */
unsigned int kevent_ring_index(const struct kevent_ring *ring);

/* Slot s (0 <= s < KEVENT_MAX_EVENTS), with the per-page header skipped. */
const struct mukevent *kevent_ring_slot(const struct kevent_ring *ring, unsigned int s);

/*
 * Copy the slots written since the last call (at most max, oldest first) to
 * out and advance ring->next past them.  Returns how many were copied.  A full
 * lap of 4096 slots cannot be told from no change (2006 ABI, docs/abi.md).
 */
unsigned int kevent_ring_read(struct kevent_ring *ring, struct mukevent *out, unsigned int max);

/*
 * Revision 2 (version node KEVENT_0.2; docs/abi.md D53-D57).  The take26
 * ring is struct kevent_uring of <linux/kevent.h>: struct kevent_ring above
 * stays the take13 view.
 *
 * kevent_init: open $KEVENT_DEVICE (default /dev/kevent), select revision 2
 * with flags (KEVENT_ABI_STRICT, KEVENT_ABI_EINTR) and register ring with
 * num slots (NULL, 0: no ring).  Returns the queue fd.
 */
int kevent_init(struct kevent_uring *ring, unsigned int num, unsigned int flags);
/* Frees the slots before new_uidx; returns how many (D54). */
int kevent_commit(int fd, unsigned int new_uidx, unsigned int over);

#if defined(__USE_TIME_BITS64) && defined(__TIMESIZE) && __TIMESIZE == 32
/* -m32 with _TIME_BITS=64: the 64-bit time_t entry points (D56). */
#define LIBKEVENT_REDIRECT(name) __asm__(#name "_time64")
#else
#define LIBKEVENT_REDIRECT(name)
#endif

/*
 * Waits (timeout relative, or absolute with KEVENT_FLAGS_ABSTIME; no timeout
 * with KEVENT_FLAGS_NO_TIMEOUT) for a ready kevent and a free slot, unless
 * old_uidx is stale, then copies up to num into the ring; returns how many.
 */
int kevent_wait(int fd, unsigned int num, unsigned int old_uidx, struct timespec timeout,
		unsigned int flags) LIBKEVENT_REDIRECT(kevent_wait);
/* kevent_get_events with a timespec timeout and KEVENT_FLAGS_* (revision 2). */
int kevent_get_events_ts(int fd, unsigned int min_nr, unsigned int max_nr,
			 struct timespec timeout, void *buf, unsigned int flags)
			 LIBKEVENT_REDIRECT(kevent_get_events_ts);

/*
 * Revision 3 (version node KEVENT_0.3; docs/abi.md D58-D64).
 *
 * kevent_open: open $KEVENT_DEVICE (default /dev/kevent) and select
 * revision with abi_flags (KEVENT_ABI_*).  Returns the queue fd.
 */
int kevent_open(unsigned int revision, unsigned int abi_flags);
/*
 * kevent_ctl with KEVENT_CTL_EXT entries (KEVENT_IOC_CTL_EXT, D60): ADD,
 * REMOVE, MODIFY, READY or QUERY on num struct ukevent_ext at arr.
 */
int kevent_ctl_ext(int fd, unsigned int cmd, unsigned int num, struct ukevent_ext *arr);

#ifdef __cplusplus
}
#endif

#endif /* LIBKEVENT_H */
