/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * <sys/event.h> of libkqueue-kevent: the BSD kqueue(2) interface over
 * /dev/kevent (libkevent).  The struct kevent layout and the constants are
 * those of FreeBSD as the Linux ports of kqueue lay them out; see
 * kqueue-kevent(3) for what each filter maps onto.
 *
 * Installed under $includedir/kqueue-kevent/sys/, so it shadows nothing;
 * `pkg-config --cflags libkqueue-kevent` adds that directory.
 */
#ifndef KQUEUE_KEVENT_SYS_EVENT_H
#define KQUEUE_KEVENT_SYS_EVENT_H

#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EVFILT_READ		(-1)
#define EVFILT_WRITE		(-2)
#define EVFILT_AIO		(-3)	/* not served: EINVAL */
#define EVFILT_VNODE		(-4)
#define EVFILT_PROC		(-5)
#define EVFILT_SIGNAL		(-6)
#define EVFILT_TIMER		(-7)
#define EVFILT_NETDEV		(-8)	/* not served: EINVAL */
#define EVFILT_FS		(-9)	/* not served: EINVAL */
#define EVFILT_LIO		(-10)	/* not served: EINVAL */
#define EVFILT_USER		(-11)
#define EVFILT_SYSCOUNT		11

struct kevent {
	uintptr_t ident;	/* identifier: fd, signal, pid, timer or user id */
	short filter;		/* EVFILT_* */
	unsigned short flags;	/* EV_* */
	unsigned int fflags;	/* filter flags (NOTE_*) */
	intptr_t data;		/* filter data */
	void *udata;		/* opaque, returned untouched */
};

#define EV_SET(kevp_, a, b, c, d, e, f) do {	\
	struct kevent *kevp__ = (kevp_);	\
	kevp__->ident = (a);			\
	kevp__->filter = (b);			\
	kevp__->flags = (c);			\
	kevp__->fflags = (d);			\
	kevp__->data = (e);			\
	kevp__->udata = (f);			\
} while (0)

/* actions */
#define EV_ADD		0x0001
#define EV_DELETE	0x0002
#define EV_ENABLE	0x0004
#define EV_DISABLE	0x0008

/* flags */
#define EV_ONESHOT	0x0010
#define EV_CLEAR	0x0020
#define EV_RECEIPT	0x0040
#define EV_DISPATCH	0x0080
#define EV_KEEPUDATA	0x0200	/* a change to an existing kevent leaves its udata */

#define EV_SYSFLAGS	0xF000
#define EV_FLAG1	0x2000

/* returned values */
#define EV_EOF		0x8000
#define EV_ERROR	0x4000

/* EVFILT_USER */
#define NOTE_FFNOP	0x00000000
#define NOTE_FFAND	0x40000000
#define NOTE_FFOR	0x80000000
#define NOTE_FFCOPY	0xc0000000
#define NOTE_FFCTRLMASK	0xc0000000
#define NOTE_FFLAGSMASK	0x00ffffff
#define NOTE_TRIGGER	0x01000000

/* EVFILT_READ, EVFILT_WRITE */
#define NOTE_LOWAT	0x0001

/* EVFILT_VNODE */
#define NOTE_DELETE	0x0001
#define NOTE_WRITE	0x0002
#define NOTE_EXTEND	0x0004
#define NOTE_ATTRIB	0x0008
#define NOTE_LINK	0x0010
#define NOTE_RENAME	0x0020
#define NOTE_REVOKE	0x0040

/* EVFILT_PROC */
#define NOTE_EXIT	0x80000000
#define NOTE_FORK	0x40000000	/* never fires here */
#define NOTE_EXEC	0x20000000	/* never fires here */
#define NOTE_PCTRLMASK	0xf0000000
#define NOTE_PDATAMASK	0x000fffff
#define NOTE_TRACK	0x00000001	/* refused: ENOTSUP */
#define NOTE_TRACKERR	0x00000002
#define NOTE_CHILD	0x00000004

/* EVFILT_TIMER: units of data (milliseconds without one) */
#define NOTE_SECONDS	0x00000001
#define NOTE_MSECONDS	0x00000002
#define NOTE_USECONDS	0x00000004
#define NOTE_NSECONDS	0x00000008
#define NOTE_ABSTIME	0x00000010
/* macOS's and libkqueue's name for it, so their programs build; their value
 * (0x8) is FreeBSD's NOTE_NSECONDS, so the name takes FreeBSD's bit. */
#define NOTE_ABSOLUTE	NOTE_ABSTIME

int kqueue(void);
int kevent(int kq, const struct kevent *changelist, int nchanges,
	   struct kevent *eventlist, int nevents, const struct timespec *timeout);

#ifdef __cplusplus
}
#endif

#endif /* KQUEUE_KEVENT_SYS_EVENT_H */
