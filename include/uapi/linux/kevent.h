/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note OR MIT */
/*
 * kevent: the Aug 23 2006 (take13) kevent ABI, served as a character device.
 *
 * This header is the single source of truth for the ABI.  The CUSE daemon,
 * the kernel module, libkevent and every client include it unchanged.
 * Layout of every structure is pinned by tests/abi/ (-m32 and -m64).
 *
 * The 2006 system calls become ioctls with the same arguments and the same
 * return values:
 *
 *   kevent_ctl(fd, cmd, num, arg)               -> KEVENT_IOC_CTL
 *   kevent_get_events(fd, min, max, ns, buf, f) -> KEVENT_IOC_GET_EVENTS
 *
 * Revision 2 (take26-30, selected per queue with KEVENT_IOC_SET_ABI) adds:
 *
 *   kevent_init(ring, num, flags)               -> open + SET_ABI(2) + KEVENT_IOC_RING_INIT
 *   kevent_wait(fd, num, old_uidx, ts, flags)   -> KEVENT_IOC_WAIT
 *   kevent_commit(fd, new_uidx, over)           -> KEVENT_IOC_COMMIT
 *   kevent_get_events(fd, min, max, ts, buf, f) -> KEVENT_IOC_GET_EVENTS
 *                                                  with KEVENT_GET_TIMESPEC
 *
 * Wrapper structures carry no pointers (user addresses travel as __u64),
 * no longs, explicit padding only.  They grow by appending fields; the size
 * a caller was built with is _IOC_SIZE(cmd) and the callee dispatches on
 * _IOC_NR(cmd) (see docs/abi.md, "Extensible wrapper structs").
 */
#ifndef _UAPI_LINUX_KEVENT_H
#define _UAPI_LINUX_KEVENT_H

#include <linux/types.h>
#include <linux/ioctl.h>

/*
 * The highest behaviour level this header describes.  A level is a set of
 * rules a queue can select with KEVENT_IOC_SET_ABI; 1 is take13 as this
 * project serves it, and a queue that never calls SET_ABI (every 2006
 * program) gets level 1.  Only a rule that changes for callers who ask for
 * it bumps this.  Compatible growth (an INFO field, a feature bit, a backend
 * value, a new ioctl) bumps nothing: INFO's size and features announce it,
 * and docs/abi.md section 11 records it.  INFO's abi_revision is the highest
 * level the backend serves (docs/abi-change.md 3).
 */
#define KEVENT_ABI_REVISION		4
/* The lowest level every backend serves (INFO's abi_lowest may say more). */
#define KEVENT_ABI_REVISION_LOWEST	1

/* ukevent.type */
#define KEVENT_SOCKET			0	/* project extension (A3) */
#define KEVENT_INODE			1	/* project extension (A3) */
#define KEVENT_TIMER			2
#define KEVENT_POLL			3
#define KEVENT_NAIO			4	/* reserved: fails per entry */
#define KEVENT_AIO			5	/* reserved: fails per entry */
					/* 6, 7: take24 PIPE, take26 SIGNAL; not served */
#define KEVENT_POSIX_TIMER		8	/* rev 3: clock, ns, ABSTIME, counts (D58) */
#define KEVENT_USER			9	/* rev 3: made ready by READY only (D62) */
#define KEVENT_MAX			10	/* take13: 6; a type not in INFO's */
						/* supported_types fails per entry */

/* ukevent.event for KEVENT_TIMER and KEVENT_POSIX_TIMER */
#define KEVENT_TIMER_FIRED		0x1

/* ukevent.event for KEVENT_USER: any 32-bit value (D62) */

/* ukevent.event for KEVENT_SOCKET */
#define KEVENT_SOCKET_RECV		0x1
#define KEVENT_SOCKET_ACCEPT		0x2
#define KEVENT_SOCKET_SEND		0x4

/* ukevent.event for KEVENT_INODE */
#define KEVENT_INODE_CREATE		0x1
#define KEVENT_INODE_REMOVE		0x2
/*
 * Revision 4 (D68, kqueue's EVFILT_VNODE notes); unknown bits below it.
 * ret_data[0]: every bit since the last delivery, ORed while ready.
 */
#define KEVENT_INODE_WRITE		0x4	/* contents written; a dir: an entry added or removed */
#define KEVENT_INODE_EXTEND		0x8	/* a file grew (its size at the event) */
#define KEVENT_INODE_ATTRIB		0x10	/* attributes changed, not the link count */
#define KEVENT_INODE_LINK		0x20	/* link count changed; a dir: a subdirectory came or went */
#define KEVENT_INODE_RENAME		0x40	/* the object itself renamed or moved */
#define KEVENT_INODE_DELETE		0x80	/* the object itself unlinked: DONE, not BROKEN */
#define KEVENT_INODE_NOTES		0xfc	/* the six above */

/* ukevent.event for KEVENT_POLL: the i386/x86_64 POLL* values (0x800 unused) */
#define KEVENT_POLL_POLLIN		0x0001
#define KEVENT_POLL_POLLPRI		0x0002
#define KEVENT_POLL_POLLOUT		0x0004
#define KEVENT_POLL_POLLERR		0x0008
#define KEVENT_POLL_POLLHUP		0x0010
#define KEVENT_POLL_POLLNVAL		0x0020
#define KEVENT_POLL_POLLRDNORM		0x0040
#define KEVENT_POLL_POLLRDBAND		0x0080
#define KEVENT_POLL_POLLWRNORM		0x0100
#define KEVENT_POLL_POLLWRBAND		0x0200
#define KEVENT_POLL_POLLMSG		0x0400
#define KEVENT_POLL_POLLREMOVE		0x1000
#define KEVENT_POLL_POLLRDHUP		0x2000	/* revision 2 (take28): peer shut down writing */

/* ukevent.event for KEVENT_AIO */
#define KEVENT_AIO_BIO			0x1

#define KEVENT_MASK_ALL			0xffffffff
#define KEVENT_MASK_EMPTY		0x0

/*
 * ukevent.req_flags.  Revision 1 knows ONESHOT only (every other bit is
 * ignored, or fails the entry under KEVENT_ABI_STRICT).  Revision 2 adds
 * ALWAYS_QUEUE and LEVEL, revision 4 DISPATCH; 0x2 (take23 WAKEUP_ONE, take25
 * WAKEUP_ALL), 0x4 (take23 ET), 0x8 (take24 LAST_CHECK) and 0x40 are not
 * taken and stay unknown bits (docs/abi.md D44, D45, D65).
 */
#define KEVENT_REQ_ONESHOT		0x1
#define KEVENT_REQ_ALWAYS_QUEUE		0x10	/* rev 2 (take25): ready at ADD -> queued, D42 */
#define KEVENT_REQ_LEVEL		0x20	/* rev 2: POLL/SOCKET reported again while ready, D43 */
#define KEVENT_REQ_DISPATCH		0x80	/* rev 4: disarmed once delivered until MODIFY, D65 */

/* ukevent.ret_flags */
#define KEVENT_RET_BROKEN		0x1
#define KEVENT_RET_DONE			0x2

/* kevent_ctl() commands */
#define KEVENT_CTL_ADD			0
#define KEVENT_CTL_REMOVE		1
#define KEVENT_CTL_MODIFY		2
#define KEVENT_CTL_READY		3	/* rev 2 (take26): mark ready; num 0 wakes one waiter */
#define KEVENT_CTL_QUERY		4	/* rev 3: read a POSIX timer's setting, needs */
						/* KEVENT_CTL_EXT entries (D61) */

/*
 * Per queue: ADD fails whole when kevent_num + num >= KEVENT_MAX_EVENTS, so
 * at most KEVENT_MAX_EVENTS - 1 = 4095 kevents can be registered (A4).
 * KEVENT_MAX_EVENTS is also the number of ring slots.
 */
#define KEVENT_MAX_EVENTS		4096

struct kevent_id {
	union {
		__u32 raw[2];
		__u64 raw_u64 __attribute__((aligned(8)));
	};
};

struct ukevent {
	struct kevent_id id;		/* what to watch, type specific */
	__u32 type;			/* KEVENT_TIMER, KEVENT_POLL, ... */
	__u32 event;			/* event bits of interest */
	__u32 req_flags;		/* KEVENT_REQ_* */
	__u32 ret_flags;		/* KEVENT_RET_*, written by the backend */
	__u32 ret_data[2];		/* type specific; [1] = -errno if BROKEN, */
					/* but as passed for an unmatched MODIFY/REMOVE (D38); */
					/* rev 4, POLL and SOCKET: [1] = the source's count */
					/* at delivery: bytes readable (a listener: its */
					/* accept queue) or free space to write, D67 */
	union {				/* user cookie, copied back untouched */
		__u32 user[2];
		void *ptr;		/* kept for source compatibility (A2) */
	};
};

/*
 * The memory-mapped ring (take13).  KEVENT_RING_PAGES pages of
 * KEVENT_RING_PAGE_SIZE bytes, each laid out as a struct kevent_mring; only
 * page 0's index is used.  Slot s lives on page s / KEVENTS_ON_PAGE at
 * position s % KEVENTS_ON_PAGE.  The ring page size is part of the ABI and
 * does not follow the machine's PAGE_SIZE; KEVENT_IOC_INFO reports it too.
 */
struct mukevent {
	struct kevent_id id;
	__u32 ret_flags;
	__u32 __pad;			/* the 2006 compiler's tail padding */
};

#define KEVENT_RING_PAGE_SIZE		4096
#define KEVENTS_ON_PAGE			255	/* (4096 - 4) / 16 */
#define KEVENT_RING_PAGES		17	/* ceil(4096 / 255); last holds 16 */
#define KEVENT_RING_SIZE		(KEVENT_RING_PAGES * KEVENT_RING_PAGE_SIZE)
#define KEVENT_RING_HDR_SIZE		8	/* index + padding before event[0] */

struct kevent_mring {
	__u32 index;			/* next slot to write, in [0, 4096) */
	__u32 __pad;
	struct mukevent event[KEVENTS_ON_PAGE];
};

/* Byte offset of ring slot s from the start of the mapping. */
#define KEVENT_RING_SLOT_OFFSET(s)					\
	(((s) / KEVENTS_ON_PAGE) * KEVENT_RING_PAGE_SIZE +		\
	 KEVENT_RING_HDR_SIZE + ((s) % KEVENTS_ON_PAGE) * 16)

/*
 * Revision 2: the take26 ring, in the caller's own memory (docs/abi.md 5.7).
 * take26 called it struct kevent_ring; that name is libkevent's view of the
 * take13 mapped ring, hence kevent_uring ("user ring").  The caller allocates
 * 8 + num * 40 bytes, 8-byte aligned, and registers it with
 * KEVENT_IOC_RING_INIT.  The backend writes whole ukevents into event[] only
 * inside KEVENT_IOC_WAIT, in the calling process, and then stores ring_kidx
 * (the next free slot) as one aligned 32-bit store after the slots it
 * publishes; KEVENT_IOC_COMMIT stores ring_over when it wraps.  The caller
 * never writes either word.
 */
struct kevent_uring {
	__u32 ring_kidx;		/* next slot the backend writes, in [0, num) */
	__u32 ring_over;		/* laps committed (KEVENT_IOC_COMMIT wraps) */
	__extension__ struct ukevent event[];	/* at offset 8 */
};
#define KEVENT_URING_HDR_SIZE		8
#define KEVENT_URING_SIZE(num)		(KEVENT_URING_HDR_SIZE + (__u64)(num) * 40)
#define KEVENT_URING_MIN		2	/* 1 slot: -EINVAL (take26) */
#define KEVENT_URING_MAX		KEVENT_MAX_EVENTS

/*
 * Revision 2 timeouts (take26: struct timespec by value).  One layout on
 * every ABI (-m32 and -m64 alike, y2038-safe): the library converts the
 * caller's struct timespec.  tv_sec < 0, tv_nsec >= 10^9 or __pad != 0:
 * -EINVAL.  Relative unless KEVENT_FLAGS_ABSTIME.
 */
struct kevent_timespec {
	__s64 tv_sec __attribute__((aligned(8)));
	__u32 tv_nsec;
	__u32 __pad;			/* must be 0 */
};

/* Timeout flags of kevent_wait and of the timespec kevent_get_events. */
#define KEVENT_FLAGS_ABSTIME		0x1	/* take26: absolute CLOCK_REALTIME deadline */
#define KEVENT_FLAGS_MONOTONIC		0x2	/* with ABSTIME: the deadline is CLOCK_MONOTONIC */
#define KEVENT_FLAGS_NO_TIMEOUT		0x4	/* wait without a timeout; timespec must be 0 */
#define KEVENT_FLAGS_ALL		(KEVENT_FLAGS_ABSTIME | KEVENT_FLAGS_MONOTONIC | \
					 KEVENT_FLAGS_NO_TIMEOUT)

/*
 * Revision 3: a POSIX timer's setting (D58, D59), the extension of its
 * entry.  The clock ids are Linux's values, fixed here as ABI constants
 * (D30's rule).  value: the first expiry, relative to the ADD/MODIFY, or
 * absolute on the timer's clock with KEVENT_TIMER_ABSTIME; {0, 0}: disarmed.
 * interval: the period after the first expiry; {0, 0}: one expiry only;
 * otherwise at least KEVENT_TIMER_MIN_INTERVAL_NS.  Both timespecs follow
 * struct kevent_timespec's rules (-EINVAL otherwise, that entry).
 */
#define KEVENT_CLOCK_REALTIME		0
#define KEVENT_CLOCK_MONOTONIC		1
#define KEVENT_CLOCK_BOOTTIME		7
#define KEVENT_TIMER_ABSTIME		0x1	/* value is absolute on the clock */
#define KEVENT_TIMER_MIN_INTERVAL_NS	100000	/* 100 us (D59) */

struct kevent_timer_spec {
	__u32 clock;			/* KEVENT_CLOCK_* */
	__u32 flags;			/* KEVENT_TIMER_ABSTIME; QUERY writes 0 */
	struct kevent_timespec value;	/* first expiry; QUERY: time left */
	struct kevent_timespec interval;	/* period; {0, 0}: one expiry */
};

/*
 * Revision 3: a CTL entry with an extension, used when KEVENT_CTL_EXT is
 * set.  ext.timer for KEVENT_POSIX_TIMER (ADD: required; MODIFY: re-arms;
 * QUERY: written back); for every other type ext must be all zero (that
 * entry -EINVAL) and is written back as passed.
 */
struct ukevent_ext {
	struct ukevent ev;
	union {
		struct kevent_timer_spec timer;
		__u64 __raw[5];
	} ext;
};

/*
 * ioctl transport.  Magic 0xBE is not in the kernel's ioctl-number list.
 * Every wrapper struct begins a new size version at *_SIZE_VER0; fields are
 * only appended and a zero field means the old behaviour.  Reserved fields
 * and unknown ioc_flags must be zero (-EINVAL); a larger struct than the
 * callee knows must have an all-zero tail (-E2BIG otherwise).
 */
#define KEVENT_IOC_MAGIC		0xBE

/* KEVENT_IOC_CTL: returns what kevent_ctl() returned. */
struct kevent_ctl_arg {
	__u32 cmd;			/* KEVENT_CTL_* */
	__u32 num;			/* number of struct ukevent at events */
	__u64 events;			/* user address of the ukevent array */
};
#define KEVENT_CTL_ARG_SIZE_VER0	16

/*
 * KEVENT_IOC_CTL_EXT (revision 3, D60): the same ioctl number with the CTL
 * wrapper's VER1 size.  struct kevent_ctl_arg stays 16 bytes, so
 * KEVENT_IOC_CTL and every program written against it keep their exact
 * meaning.  With ioc_flags KEVENT_CTL_EXT, events is an array of num
 * struct ukevent_ext (80 bytes each), read and written back whole; with
 * ioc_flags 0 the call is KEVENT_IOC_CTL.  KEVENT_CTL_EXT on a queue below
 * revision 3, unknown ioc_flags bits or __pad != 0: -EINVAL.
 */
struct kevent_ctl_ext_arg {
	__u32 cmd;			/* KEVENT_CTL_* */
	__u32 num;			/* number of entries at events */
	__u64 events;			/* user address of the entry array */
	__u32 ioc_flags;		/* KEVENT_CTL_EXT */
	__u32 __pad;			/* must be 0 */
};
#define KEVENT_CTL_ARG_SIZE_VER1	24
#define KEVENT_CTL_EXT			0x1	/* rev 3: entries are struct ukevent_ext */
#define KEVENT_CTL_IOC_FLAGS		KEVENT_CTL_EXT

/*
 * KEVENT_IOC_GET_EVENTS: returns the number of ukevents copied to events.
 * With KEVENT_GET_TIMESPEC (revision-2 queues, VER1 size) the timeout is
 * timeout_ts, flags holds KEVENT_FLAGS_* (strict) and timeout_ns must be 0.
 */
struct kevent_get_events_arg {
	__u32 min_nr;
	__u32 max_nr;
	__u64 timeout_ns;		/* ~0ULL waits forever */
	__u64 events;			/* user address of max_nr ukevents */
	__u32 flags;			/* the 2006 argument: ignored (A1); */
					/* KEVENT_FLAGS_* with KEVENT_GET_TIMESPEC */
	__u32 ioc_flags;		/* KEVENT_GET_*: strict */
	/* KEVENT_GET_EVENTS_ARG_SIZE_VER1 */
	struct kevent_timespec timeout_ts;	/* with KEVENT_GET_TIMESPEC only, else 0 */
};
#define KEVENT_GET_EVENTS_ARG_SIZE_VER0	32
#define KEVENT_GET_EVENTS_ARG_SIZE_VER1	48

#define KEVENT_TIMEOUT_INFINITE		(~(__u64)0)
#define KEVENT_GET_NONBLOCK		0x1	/* O_NONBLOCK set by fcntl (A11) */
#define KEVENT_GET_TIMESPEC		0x4	/* rev 2: timeout_ts + flags, needs VER1 */
#define KEVENT_GET_IOC_FLAGS		(KEVENT_GET_NONBLOCK | KEVENT_GET_TIMESPEC)

/* KEVENT_IOC_INFO: what this backend is and can do. */
#define KEVENT_BACKEND_CORE		1	/* in-process core (tests) */
#define KEVENT_BACKEND_CUSE		2	/* kevent-cuse daemon */
#define KEVENT_BACKEND_MODULE		3	/* kmod/kevent.ko */
#define KEVENT_BACKEND_FUSE		4	/* kevent-cuse --fuse: a file in a FUSE mount */

#define KEVENT_FEAT_RING_MMAP		0x01	/* mmap() of the fd maps the ring */
#define KEVENT_FEAT_RING_SHM		0x02	/* KEVENT_IOC_RING_SHM answers */
#define KEVENT_FEAT_PROCESS_VM		0x04	/* arrays move through process memory */
#define KEVENT_FEAT_FD_ORIGINS		0x08	/* fd origins usable by this caller */
#define KEVENT_FEAT_RETRY_PATH		0x10	/* arrays move by ioctl retry (B4) */
#define KEVENT_FEAT_STRICT		0x20	/* KEVENT_ABI_STRICT accepted */
#define KEVENT_FEAT_FAULT_INJECT	0x40	/* KEVENT_IOC_FAULT answers (tests only) */
#define KEVENT_FEAT_URING		0x80	/* rev 2: this caller may register a */
						/* kevent_uring (process memory path) */
#define KEVENT_FEAT_POSIX_TIMER		0x100	/* rev 3 queue: KEVENT_POSIX_TIMER, QUERY */
#define KEVENT_FEAT_USER		0x200	/* rev 3 queue: KEVENT_USER */

/* Index of kevent_info.limits[]: per-uid caps and use (B7). */
#define KEVENT_LIMIT_QUEUES		0
#define KEVENT_LIMIT_KEVENTS		1
#define KEVENT_LIMIT_FD_KEVENTS		2
#define KEVENT_LIMIT_TIMERS		3
#define KEVENT_LIMIT_MARKS		4
#define KEVENT_LIMIT_RUNNING		5
#define KEVENT_LIMIT_PARKED		6
#define KEVENT_LIMIT_EXPIRIES		7	/* timer expiries per second: a budget, */
						/* excess ones merge (docs/abi.md 8) */
#define KEVENT_LIMIT_NR			8

struct kevent_limit {
	__u32 cap;			/* 0: no cap */
	__u32 used;
};

struct kevent_info {
	__u32 size;			/* bytes of this struct the backend filled */
	__u32 abi_revision;		/* highest SET_ABI level the backend serves */
	__u32 backend;			/* KEVENT_BACKEND_* */
	__u32 features;			/* KEVENT_FEAT_* */
	__u32 supported_types;		/* bit (1 << type) per implemented type */
	__u32 ukevent_size;		/* 40 */
	__u32 mukevent_size;		/* 16 */
	__u32 ring_page_size;		/* KEVENT_RING_PAGE_SIZE */
	__u32 ring_slots_per_page;	/* KEVENTS_ON_PAGE */
	__u32 ring_pages;		/* KEVENT_RING_PAGES */
	__u32 ring_slots;		/* KEVENT_MAX_EVENTS */
	__u32 max_kevents;		/* per queue: KEVENT_MAX_EVENTS - 1 */
	__u32 max_ctl_num;		/* largest CTL batch on this caller's path */
	__u32 max_get_nr;		/* largest GET_EVENTS batch on this path */
	__u32 queue_kevents;		/* registered on this queue now */
	__u32 queue_ready;		/* on this queue's ready list now */
	struct kevent_limit limits[KEVENT_LIMIT_NR];
	__u64 live_queues;		/* backend-wide live objects */
	__u64 live_kevents;
	__u64 live_waiters;
	/* KEVENT_INFO_SIZE_VER1: filled when size covers it */
	__u32 queue_parked;		/* GET_EVENTS and WAIT calls parked on this queue now */
	__u32 __pad1;			/* 0 */
	/* KEVENT_INFO_SIZE_VER2: filled when size covers it */
	__u32 abi_lowest;		/* lowest SET_ABI level served (1) */
	__u32 queue_revision;		/* this queue's level: 1 until SET_ABI */
	__u32 queue_abi_flags;		/* this queue's KEVENT_ABI_* flags */
	__u32 ring_num;			/* slots of the registered kevent_uring, 0: none */
	__u32 ring_kidx;		/* the backend's kidx, uidx and over */
	__u32 ring_uidx;
	__u32 ring_over;
	__u32 ring_faults;		/* KEVENT_IOC_WAIT calls whose ring write */
					/* faulted (events requeued, D41) */
};
#define KEVENT_INFO_SIZE_VER0		152
#define KEVENT_INFO_SIZE_VER1		160
#define KEVENT_INFO_SIZE_VER2		192

/* KEVENT_IOC_RING_SHM (CUSE and fuse; the module answers -ENOTTY). */
struct kevent_ring_shm {
	__u32 size;			/* bytes of this struct the backend filled */
	__u32 flags;			/* none yet: 0 */
	__u64 length;			/* bytes to map: KEVENT_RING_SIZE */
	char path[112];			/* NUL-terminated; open O_RDONLY, map PROT_READ */
};
#define KEVENT_RING_SHM_SIZE_VER0	128

/*
 * KEVENT_IOC_SET_ABI (A12): selects the behaviour level (revision) of this
 * queue; accepted only before the first KEVENT_IOC_CTL or KEVENT_IOC_RING_INIT
 * on the queue (-EBUSY after).  revision must be one the backend serves
 * (-EINVAL otherwise): INFO's abi_lowest up to abi_revision.
 * KEVENT_ABI_STRICT makes the 2006 fields strict too: unknown req_flags bits
 * fail that entry with -EINVAL.  KEVENT_ABI_EINTR (revision 2 and later, -EINVAL
 * with 1): a signal ends a blocked GET_EVENTS or WAIT of this queue with
 * -EINTR instead of returning what is ready (D22; docs/abi.md D47).
 */
struct kevent_set_abi {
	__u32 revision;
	__u32 flags;			/* KEVENT_ABI_* */
	__u64 __reserved;		/* must be 0 */
};
#define KEVENT_SET_ABI_SIZE_VER0	16
#define KEVENT_ABI_STRICT		0x1
#define KEVENT_ABI_EINTR		0x2
#define KEVENT_ABI_FLAGS		(KEVENT_ABI_STRICT | KEVENT_ABI_EINTR)

/*
 * Revision 2 (docs/abi.md 2.11-2.13).  On a revision-1 queue each of these
 * answers -ENOTTY, as before revision 2 existed: a revision-1 queue sees
 * exactly take13 (docs/abi.md D40).
 *
 * KEVENT_IOC_RING_INIT: register the queue's kevent_uring (once: -EBUSY
 * after).  ring 0 with num 0: no ring, returns 0.  One without the other,
 * num 1, num > KEVENT_URING_MAX, ring not 8-byte aligned, flags != 0:
 * -EINVAL.  The whole ring not writable: -EFAULT.  A caller whose memory the
 * backend cannot write (CUSE retry path, INFO without KEVENT_FEAT_URING):
 * -EPERM.  Returns 0.
 */
struct kevent_ring_init {
	__u64 ring;			/* user address of struct kevent_uring */
	__u32 num;			/* slots */
	__u32 flags;			/* none yet: 0 */
};
#define KEVENT_RING_INIT_SIZE_VER0	16

/*
 * KEVENT_IOC_WAIT: kevent_wait(fd, num, old_uidx, timeout, flags).  Returns
 * 0 at once when old_uidx is not the backend's uidx; else waits (timeout,
 * flags: KEVENT_FLAGS_*) for a ready kevent and a free slot, copies up to
 * min(num, free slots) ready kevents into the ring and returns how many.
 */
struct kevent_wait_arg {
	__u32 num;
	__u32 old_uidx;
	struct kevent_timespec timeout;
	__u32 flags;			/* KEVENT_FLAGS_* */
	__u32 ioc_flags;		/* KEVENT_GET_NONBLOCK only */
};
#define KEVENT_WAIT_ARG_SIZE_VER0	32

/*
 * KEVENT_IOC_COMMIT: kevent_commit(fd, new_uidx, over).  Returns the number
 * of slots freed; 0 without a ring.  -EINVAL: new_uidx >= num or past the
 * backend's kidx; -EOVERFLOW: over is stale (docs/abi.md 5.7).
 */
struct kevent_commit_arg {
	__u32 new_uidx;
	__u32 over;
};
#define KEVENT_COMMIT_ARG_SIZE_VER0	8

/*
 * KEVENT_IOC_FAULT: fault injection on this queue, for test suites; outside
 * every ABI revision.  Only a backend started with it (kevent-cuse
 * --fault-inject, kevent.ko fault_inject=1) answers it and sets
 * KEVENT_FEAT_FAULT_INJECT in INFO; any other answers -ENOTTY.  One fault,
 * armed until it happens or is replaced; kind KEVENT_FAULT_NONE disarms.
 */
struct kevent_fault {
	__u32 kind;			/* KEVENT_FAULT_* */
	__u32 skip;			/* occasions that pass before the one that fails */
	__u64 __reserved;		/* must be 0 */
};
#define KEVENT_FAULT_SIZE_VER0		16
#define KEVENT_FAULT_NONE		0
#define KEVENT_FAULT_ADD_ENOMEM		1	/* a CTL ADD entry's allocation: -ENOMEM (D19) */

#define KEVENT_IOC_NR_INFO		0x00
#define KEVENT_IOC_NR_CTL		0x01
#define KEVENT_IOC_NR_GET_EVENTS	0x02
#define KEVENT_IOC_NR_RING_SHM		0x03
#define KEVENT_IOC_NR_SET_ABI		0x04
#define KEVENT_IOC_NR_FAULT		0x05
#define KEVENT_IOC_NR_RING_INIT		0x06
#define KEVENT_IOC_NR_WAIT		0x07
#define KEVENT_IOC_NR_COMMIT		0x08

#define KEVENT_IOC_INFO		_IOR(KEVENT_IOC_MAGIC, KEVENT_IOC_NR_INFO, struct kevent_info)
#define KEVENT_IOC_CTL		_IOW(KEVENT_IOC_MAGIC, KEVENT_IOC_NR_CTL, struct kevent_ctl_arg)
#define KEVENT_IOC_CTL_EXT	_IOW(KEVENT_IOC_MAGIC, KEVENT_IOC_NR_CTL, struct kevent_ctl_ext_arg)
#define KEVENT_IOC_GET_EVENTS	_IOW(KEVENT_IOC_MAGIC, KEVENT_IOC_NR_GET_EVENTS, struct kevent_get_events_arg)
#define KEVENT_IOC_RING_SHM	_IOR(KEVENT_IOC_MAGIC, KEVENT_IOC_NR_RING_SHM, struct kevent_ring_shm)
#define KEVENT_IOC_SET_ABI	_IOW(KEVENT_IOC_MAGIC, KEVENT_IOC_NR_SET_ABI, struct kevent_set_abi)
#define KEVENT_IOC_FAULT	_IOW(KEVENT_IOC_MAGIC, KEVENT_IOC_NR_FAULT, struct kevent_fault)
#define KEVENT_IOC_RING_INIT	_IOW(KEVENT_IOC_MAGIC, KEVENT_IOC_NR_RING_INIT, struct kevent_ring_init)
#define KEVENT_IOC_WAIT		_IOW(KEVENT_IOC_MAGIC, KEVENT_IOC_NR_WAIT, struct kevent_wait_arg)
#define KEVENT_IOC_COMMIT	_IOW(KEVENT_IOC_MAGIC, KEVENT_IOC_NR_COMMIT, struct kevent_commit_arg)

/* ---- begin KEVENT_IOC_DRAIN (tests only, abi.md 2.10) ---- */
/*
 * KEVENT_IOC_DRAIN: the "origins drained" barrier, outside every ABI
 * revision and gated as KEVENT_IOC_FAULT is (else -ENOTTY).  Returns once
 * every source event pending at the call has been handed to the queues: the
 * CUSE/fuse daemon waits for a round of its reactor, the module runs the
 * poll re-checks its wake-ups queued.  So a test can assert "not ready"
 * after a write.  A number far from the revisions' own.
 */
struct kevent_drain {
	__u64 __reserved;		/* must be 0 */
};
#define KEVENT_DRAIN_SIZE_VER0		8
#define KEVENT_IOC_NR_DRAIN		0x20
#define KEVENT_IOC_DRAIN	_IOW(KEVENT_IOC_MAGIC, KEVENT_IOC_NR_DRAIN, struct kevent_drain)
/* ---- end KEVENT_IOC_DRAIN ---- */

/* The cap on any wrapper struct a caller may pass: -E2BIG beyond it. */
#define KEVENT_IOC_ARG_MAX		1024

#endif /* _UAPI_LINUX_KEVENT_H */
