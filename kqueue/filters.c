// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The filters of libkqueue-kevent: what each EVFILT_* registers with the
 * device, and how it decides readiness, data, fflags and EV_EOF at delivery
 * (kqueue-kevent(3), table "Filters").
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>

#include "libkevent.h"
#include "front.h"

#define POLL_READ (KEVENT_POLL_POLLIN | KEVENT_POLL_POLLHUP | KEVENT_POLL_POLLERR)
#define POLL_WRITE (KEVENT_POLL_POLLOUT | KEVENT_POLL_POLLHUP | KEVENT_POLL_POLLERR)

#ifndef PIDFS_MAGIC
#define PIDFS_MAGIC 0x50494446	/* pidfds since Linux 6.9; anon inodes before */
#endif

#define INOTIFY_MASK (IN_ATTRIB | IN_MODIFY | IN_DELETE_SELF | IN_MOVE_SELF | IN_CREATE | \
		      IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO)

int kqf_filter_validate(const struct kevent *kev)
{
	switch (kev->filter) {
	case EVFILT_READ:
	case EVFILT_WRITE:
	case EVFILT_VNODE:
	case EVFILT_PROC:
	case EVFILT_SIGNAL:
	case EVFILT_TIMER:
	case EVFILT_USER:
		return 0;
	default:
		return -EINVAL;	/* AIO, NETDEV, FS, LIO: not served */
	}
}

static int fd_of(const struct kevent *kev)
{
	return kev->ident > (uintptr_t)INT_MAX ? -1 : (int)kev->ident;
}

/* ---- EVFILT_READ / EVFILT_WRITE ---- */

/*
 * A kqueue fd (FreeBSD's filt_kqueue): EVFILT_READ only, never the kqueue
 * itself.  No backend polls a kevent device (the daemon refuses its own
 * files), so the library looks with poll(2): the knote is an orphan,
 * looked at every 10 ms while a caller waits.
 */
static int attach_kqueue(struct kq *kq, struct knote *kn, const struct kevent *kev)
{
	if (kev->filter != EVFILT_READ || kqf_is_self(kq, (int)kev->ident))
		return -EINVAL;
	kn->kind = K_KQUEUE;
	return 0;
}

/* Ready while the watched kqueue has events; data is 1 (its count is not visible). */
static int check_kqueue(struct knote *kn, struct kevent *out)
{
	struct pollfd p = { .fd = (int)kn->kev.ident, .events = POLLIN };

	if (kqf_is_stale(kn) || poll(&p, 1, 0) < 0 || (p.revents & POLLNVAL))
		return -1;
	if (!(p.revents & POLLIN)) {
		kn->last_data = 0;	/* EV_CLEAR: the next events are new */
		return 0;
	}
	if ((kn->kev.flags & EV_CLEAR) && kn->last_data)
		return 0;	/* already reported while it stayed ready */
	out->data = 1;
	return 1;
}

static int attach_fd(struct kq *kq, struct knote *kn, const struct kevent *kev)
{
	struct stat st;
	int fd = fd_of(kev);

	if (fd < 0 || fstat(fd, &st) < 0)
		return -EBADF;
	kn->st_dev = st.st_dev;
	kn->st_ino = st.st_ino;
	if (kqf_is_kqueue_fd(kq, &st))
		return attach_kqueue(kq, kn, kev);
	if (S_ISREG(st.st_mode)) {
		kn->kind = K_FILE;	/* D14: the device calls a file always ready */
		return 0;
	}
	kn->kind = K_FD;
	kn->is_socket = S_ISSOCK(st.st_mode);
	kn->is_pipe = S_ISFIFO(st.st_mode);
	kn->watch_fd = fd;
	kn->watch_events = kev->filter == EVFILT_READ ? POLL_READ : POLL_WRITE;
	/* Revision 2 reports a peer's shutdown of writing (D52): EV_EOF. */
	if (kq->dev_level && kn->is_socket && kev->filter == EVFILT_READ)
		kn->watch_events |= KEVENT_POLL_POLLRDHUP;
	return 0;
}

/*
 * fstat(2) without a path: glibc's fstat() is fstatat(fd, "", AT_EMPTY_PATH),
 * and kernels before 6.10 copy and look up that empty name (a 4 KiB name
 * buffer allocated, filled and freed) on every call.  The stale check runs
 * once per delivered event, where that is most of its cost.  x86-64's
 * fstat system call fills glibc's struct stat as it is.
 */
static int fstat_fd(int fd, struct stat *st)
{
#if defined(__x86_64__) && !defined(__ILP32__) && defined(SYS_fstat)
	return (int)syscall(SYS_fstat, fd, st);
#else
	return fstat(fd, st);
#endif
}

SLOW_PATH bool kqf_is_stale(const struct knote *kn)
{
	struct stat st;

	if (kn->kind != K_FD && kn->kind != K_FILE && kn->kind != K_VNODE && kn->kind != K_KQUEUE)
		return false;
	if (fstat_fd((int)kn->kev.ident, &st) < 0)
		return true;
	return st.st_dev != kn->st_dev || st.st_ino != kn->st_ino;
}

/* Bytes waiting on a listening socket: the accept queue's length. */
static intptr_t backlog_of(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0)
		return (intptr_t)ti.tcpi_unacked;	/* sk_ack_backlog on a listener */
	return 1;	/* AF_UNIX: the queue length is not visible; at least one */
}

static SLOW_PATH intptr_t read_data(const struct knote *kn, int fd)
{
	int n = 0;

	if (ioctl(fd, FIONREAD, &n) == 0)
		return n;
	if (kn->is_socket && errno == EINVAL)
		return backlog_of(fd);	/* listening: SIOCINQ refuses */
	return 0;
}

static SLOW_PATH intptr_t write_space(const struct knote *kn, int fd)
{
	int size = 0, used = 0;
	socklen_t len = sizeof(size);

	if (kn->is_pipe) {
		size = fcntl(fd, F_GETPIPE_SZ);
		if (size < 0 || ioctl(fd, FIONREAD, &used) < 0)
			return 0;
	} else if (kn->is_socket) {
		if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, &len) < 0 ||
		    ioctl(fd, SIOCOUTQ, &used) < 0)
			return 0;
	} else {
		return 0;
	}
	return size > used ? size - used : 0;
}

static SLOW_PATH unsigned int socket_error(const struct knote *kn, int fd)
{
	int err = 0;
	socklen_t len = sizeof(err);

	/* Reading SO_ERROR clears it: documented in kqueue-kevent(3) BUGS. */
	if (kn->is_socket && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0)
		return (unsigned int)err;
	return 0;
}

/*
 * data from the device's count of this call's report (revision 4, D67: the
 * bytes readable, a listener's queue or the free space, read by the device
 * at the delivery; pipes, FIFOs and sockets only), or -1 where the library
 * reads it itself: below revision 4, with no report this call, for any
 * other file, and for a count of 0 (an EOF, or a daemon whose kernel has
 * no unix_diag for an AF_UNIX listener: abi.md section 9), where FIONREAD
 * decides.
 */
static intptr_t device_count(const struct knote *kn, const unsigned int *count)
{
	if (!count || !*count || !(kn->is_socket || kn->is_pipe))
		return -1;
	return *count > (unsigned int)INTPTR_MAX ? INTPTR_MAX : (intptr_t)*count;
}

/*
 * What the device's report of a socket's EVFILT_READ settles without a
 * poll(2) of the library: the peer's shutdown (POLLRDHUP, revision 2, D52;
 * it does not go away), or bytes waiting: the device's count (revision 4)
 * or what FIONREAD finds now.  The socket's error (fflags) is always the
 * library's; anything else is looked at with poll(2).  Returns the revents
 * to take, 0 when poll(2) must look.
 */
static short device_says(const struct knote *kn, unsigned int dev, const unsigned int *count,
			 intptr_t *data)
{
	if (!kn->is_socket || (dev & KEVENT_POLL_POLLERR))
		return 0;
	if (dev & KEVENT_POLL_POLLRDHUP)
		return POLLIN | POLLRDHUP;
	if (!(dev & KEVENT_POLL_POLLIN))
		return 0;
	*data = device_count(kn, count);
	if (*data < 0)
		*data = read_data(kn, (int)kn->kev.ident);
	if (*data > 0)
		return POLLIN;
	*data = -1;	/* poll(2) looks, FIONREAD after it */
	return 0;
}

/* A poll(2) of fd now: its revents (0: not ready), or -1 when fd is closed. */
static SLOW_PATH short poll_now(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };

	if (poll(&p, 1, 0) < 0 || (p.revents & POLLNVAL))
		return -1;
	return p.revents;
}

/*
 * dev: the device's report of this call (ret_data[0]), or NULL; count: its
 * ret_data[1] on a revision-4 queue (D67), else NULL; checked: the device
 * found the fd naming the knote's file at that report (D69), so the
 * library's identity fstat is not needed.
 */
static int check_fd(struct knote *kn, struct kevent *out, const unsigned int *dev,
		    const unsigned int *count, bool checked)
{
	int fd = (int)kn->kev.ident;
	bool rd = kn->kev.filter == EVFILT_READ;
	short revents = 0;
	intptr_t data = -1;
	bool eof;

	if (!checked && kqf_is_stale(kn))
		return -1;
	if (rd && dev)
		revents = device_says(kn, *dev, count, &data);
	if (!revents) {
		revents = poll_now(fd, rd ? (POLLIN | POLLRDHUP) : POLLOUT);
		if (revents <= 0)
			return revents;
	}
	if (data < 0)
		data = device_count(kn, count);
	if (rd) {
		eof = revents & (POLLHUP | POLLRDHUP);
		out->data = data >= 0 ? data : read_data(kn, fd);
	} else {
		eof = revents & (POLLHUP | POLLERR);
		out->data = eof ? 0 : data >= 0 ? data : write_space(kn, fd);
	}
	if (revents & POLLERR)
		out->fflags = socket_error(kn, fd);
	if (eof)
		out->flags |= EV_EOF;
	else if ((kn->sfflags & NOTE_LOWAT) && kn->sdata > 0 && out->data < kn->sdata)
		return 0;
	else if (rd && !(revents & (POLLIN | POLLERR)))
		return 0;
	/* An orphan EV_CLEAR knote reports new data or a new EOF only. */
	if ((kn->kev.flags & EV_CLEAR) && kn->orph.next && !(eof && !kn->last_eof) &&
	    out->data <= kn->last_data) {
		kn->last_data = out->data;	/* drained: growth counts from here */
		return 0;
	}
	return 1;
}

static int check_file(struct knote *kn, struct kevent *out)
{
	int fd = (int)kn->kev.ident;
	struct stat st;
	off_t off;

	if (kqf_is_stale(kn) || fstat(fd, &st) < 0)
		return -1;
	if (kn->kev.filter == EVFILT_WRITE)
		return 1;	/* a file is always writable; data 0 */
	off = lseek(fd, 0, SEEK_CUR);
	out->data = off < 0 ? 0 : (intptr_t)(st.st_size - off);
	if (out->data <= 0) {
		out->data = 0;
		return 0;	/* the BSDs: not ready at end of file */
	}
	if ((kn->kev.flags & EV_CLEAR) && kn->orph.next && out->data <= kn->last_data) {
		kn->last_data = out->data;
		return 0;
	}
	return 1;
}

/* ---- EVFILT_TIMER ---- */

/* The period (or, with NOTE_ABSTIME, the time since the epoch) in ns. */
static int timer_ns(const struct knote *kn, int64_t *ns)
{
	unsigned int unit = kn->sfflags & (NOTE_SECONDS | NOTE_MSECONDS | NOTE_USECONDS | NOTE_NSECONDS);
	int64_t mult;

	if (kn->sdata < 0)
		return -EINVAL;
	switch (unit) {
	case 0:
	case NOTE_MSECONDS: mult = 1000000; break;
	case NOTE_SECONDS: mult = 1000000000; break;
	case NOTE_USECONDS: mult = 1000; break;
	case NOTE_NSECONDS: mult = 1; break;
	default: return -EINVAL;
	}
	if ((int64_t)kn->sdata > INT64_MAX / mult)
		return -EINVAL;
	*ns = (int64_t)kn->sdata * mult;
	if (*ns == 0)
		*ns = 1;	/* 0: at once (FreeBSD), and a period of one tick at most */
	return 0;
}

static struct kevent_timespec kts(int64_t ns)
{
	struct kevent_timespec t = { .tv_sec = ns / 1000000000, .tv_nsec = (__u32)(ns % 1000000000) };

	return t;
}

/*
 * Revision 3: the timer is a POSIX timer of the device (abi.md D58, D59):
 * its grid counts the expirations, so data needs no timerfd and no look at
 * the expiry time.  A period under the device's minimum interval (D59:
 * 100 us) stays a timerfd of the library, and so does a timer the device
 * refuses for its per-uid timer cap.  1: on the device; 0: not for it.
 */
static int timer_on_device(struct kq *kq, struct knote *kn, int64_t ns)
{
	bool abs = kn->sfflags & NOTE_ABSTIME;
	bool periodic = !abs && !(kn->kev.flags & EV_ONESHOT);
	struct kevent_timer_spec ts = { .clock = KEVENT_CLOCK_MONOTONIC };
	int r;

	if (!kq->dev_timer || (periodic && ns < KEVENT_TIMER_MIN_INTERVAL_NS))
		return 0;
	if (abs) {
		ts.clock = KEVENT_CLOCK_REALTIME;
		ts.flags = KEVENT_TIMER_ABSTIME;
	}
	ts.value = kts(ns);
	if (periodic)
		ts.interval = ts.value;
	r = kqf_dev_timer(kq, kn, KEVENT_CTL_ADD, &ts);
	if (r == -ENOSPC)
		return 0;
	return r < 0 ? r : 1;
}

static int timer_arm(struct kq *kq, struct knote *kn)
{
	struct itimerspec its = { 0 };
	bool abs = kn->sfflags & NOTE_ABSTIME;
	int64_t ns;
	int fd, r;

	r = timer_ns(kn, &ns);
	if (r < 0)
		return r;
	r = timer_on_device(kq, kn, ns);
	if (r != 0)
		return r < 0 ? r : 0;
	fd = timerfd_create(abs ? CLOCK_REALTIME : CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	its.it_value.tv_sec = ns / 1000000000;
	its.it_value.tv_nsec = ns % 1000000000;
	if (!abs && !(kn->kev.flags & EV_ONESHOT))
		its.it_interval = its.it_value;
	if (timerfd_settime(fd, abs ? TFD_TIMER_ABSTIME : 0, &its, NULL) < 0) {
		int e = errno;

		kqf_sys_close(fd);
		return -e;
	}
	kn->watch_fd = fd;
	kn->watch_events = KEVENT_POLL_POLLIN;
	return 0;
}

static int check_timer(struct knote *kn, struct kevent *out)
{
	uint64_t v;

	/* A device timer's count comes with its events (take_device). */
	if (!kn->dev_timer && read(kn->watch_fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
		kn->count += v;
	if (!kn->count)
		return 0;
	out->data = (intptr_t)kn->count;
	return 1;
}

/*
 * A timer enabled again starts counting afresh: the expirations while it
 * was disabled are dropped, as the Linux ports and macOS do (FreeBSD keeps
 * them; kqueue-kevent(3) NOTES).  A device timer is re-armed on its own
 * grid (QUERY, then MODIFY with the time left: D61 drops what is pending).
 * An absolute one keeps its deadline on CLOCK_REALTIME, so it still moves
 * with the clock (D58); the time left would make it relative.  Its one
 * expiry passed (QUERY's {0, 0}), it stays disarmed.
 */
void kqf_filter_enable(struct kq *kq, struct knote *kn)
{
	struct kevent_timer_spec ts;
	int64_t ns;
	uint64_t v;

	if (kn->kind != K_TIMER)
		return;
	kn->count = 0;
	if (!kn->dev_timer) {
		while (read(kn->watch_fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
			;
		return;
	}
	if (kqf_dev_timer(kq, kn, KEVENT_CTL_QUERY, &ts) < 0)
		return;
	if ((kn->sfflags & NOTE_ABSTIME) && (ts.value.tv_sec || ts.value.tv_nsec) &&
	    timer_ns(kn, &ns) == 0) {
		ts.flags = KEVENT_TIMER_ABSTIME;
		ts.clock = KEVENT_CLOCK_REALTIME;
		ts.value = kts(ns);
	} else {
		ts.flags = 0;
		ts.clock = KEVENT_CLOCK_MONOTONIC;	/* the time left is relative */
	}
	(void)kqf_dev_timer(kq, kn, KEVENT_CTL_MODIFY, &ts);
}

/* ---- EVFILT_USER ---- */

/*
 * The library keeps fflags (NOTE_FFAND, NOTE_FFOR, NOTE_FFCOPY), data and
 * whether the knote is triggered on every revision: the device's user event
 * merges its values by OR only, has no data word, and is delivered once per
 * trigger where kqueue keeps a knote without EV_CLEAR triggered.  On a
 * revision-3 queue a trigger is also the device's: READY on the knote's
 * KEVENT_USER kevent, which wakes waiters and makes the kqueue fd readable.
 * Returns 1 when the device was given the trigger, 0, or a negative errno.
 */
int kqf_user_touch(struct kq *kq, struct knote *kn, const struct kevent *kev)
{
	unsigned int ff = kev->fflags & NOTE_FFLAGSMASK;
	int r;

	switch (kev->fflags & NOTE_FFCTRLMASK) {
	case NOTE_FFAND: kn->sfflags &= ff; break;
	case NOTE_FFOR: kn->sfflags |= ff; break;
	case NOTE_FFCOPY: kn->sfflags = ff; break;
	default: break;	/* NOTE_FFNOP */
	}
	kn->sdata = kev->data;
	if (!(kev->fflags & NOTE_TRIGGER))
		return 0;
	kn->hook = true;
	if (!kn->dev_user)
		return 0;
	r = kqf_dev_user_ready(kq, kn);
	return r < 0 ? r : 1;
}

static int attach_user(struct kq *kq, struct knote *kn, const struct kevent *kev)
{
	int r;

	kn->kind = K_USER;
	kn->sfflags = 0;
	if (kq->dev_user) {
		r = kqf_dev_user_add(kq, kn);
		/*
		 * The queue full (abi.md A4: EINVAL) or the uid's kevent cap
		 * reached (ENOSPC): the library alone holds this one, as below
		 * revision 3, so a kqueue takes as many user events as before.
		 */
		if (r < 0 && r != -EINVAL && r != -ENOSPC)
			return r;
	}
	r = kqf_user_touch(kq, kn, kev);
	if (r < 0 && kn->dev_on) {
		kqf_dev_remove(kq, kn);	/* not in the tables yet: the caller frees kn */
		kn->dev_on = false;
	}
	return r < 0 ? r : 0;
}

/* ---- EVFILT_PROC ---- */

static int attach_proc(struct knote *kn, const struct kevent *kev)
{
	int fd;

	if (kev->fflags & (NOTE_TRACK | NOTE_TRACKERR | NOTE_CHILD))
		return -ENOTSUP;	/* no fork tracking without the proc connector */
	if (kev->ident == 0 || kev->ident > (uintptr_t)INT_MAX)
		return -ESRCH;
	fd = (int)syscall(SYS_pidfd_open, (pid_t)kev->ident, 0);
	if (fd < 0)
		return errno == EINVAL ? -ESRCH : -errno;
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	kn->kind = K_PROC;
	kn->watch_fd = fd;
	kn->watch_events = KEVENT_POLL_POLLIN;
	return 0;
}

static int check_proc(struct knote *kn, struct kevent *out)
{
	struct pollfd p = { .fd = kn->watch_fd, .events = POLLIN };
	siginfo_t si;

	if (poll(&p, 1, 0) <= 0 || !(p.revents & POLLIN))
		return 0;
	/* FreeBSD's filt_proc: with no note asked the knote is dropped at the exit. */
	if (!(kn->sfflags & NOTE_EXIT))
		return -1;
	memset(&si, 0, sizeof(si));
	/* The status of the caller's own child, not reaped; 0 for any other. */
	if (waitid((idtype_t)3 /* P_PIDFD */, (id_t)kn->watch_fd, &si,
		   WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid) {
		if (si.si_code == CLD_EXITED)
			out->data = (si.si_status & 0xff) << 8;
		else
			out->data = (si.si_status & 0x7f) | (si.si_code == CLD_DUMPED ? 0x80 : 0);
	}
	out->fflags = kn->sfflags & NOTE_EXIT;
	out->flags |= EV_EOF | EV_ONESHOT | EV_CLEAR;	/* as the BSDs report an exit */
	return 1;
}

/* ---- EVFILT_VNODE ---- */

static int ensure_inotify(struct kq *kq)
{
	int r;

	if (kq->ino_fd < 0) {
		kq->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (kq->ino_fd < 0)
			return -errno;
	}
	if (kq->ino_on)
		return 0;
	for (int i = 0; i < 8; i++) {
		r = kqf_dev_add(kq, kq->ino_fd, KEVENT_POLL_POLLIN, SERIAL_INOTIFY);
		if (r < 0)
			return r;
		if (r == 1) {
			kq->ino_on = true;
			return 0;
		}
		kqf_vnode_read(kq);	/* ready at ADD: read, then try again */
	}
	return -EAGAIN;
}

/*
 * FreeBSD takes EVFILT_VNODE on a vnode only: a file with a name in a
 * file system.  A pipe, a socket, an anonymous inode (eventfd, timerfd,
 * epoll, signalfd, inotify, pidfd) and a kqueue are EINVAL; a named FIFO
 * is a vnode.  Linux tells them apart by the file system they live on.
 */
static bool is_vnode(struct kq *kq, int fd, const struct stat *st)
{
	struct statfs sf;

	if (S_ISSOCK(st->st_mode) || kqf_is_kqueue_fd(kq, st))
		return false;
	if (fstatfs(fd, &sf) < 0)
		return false;
	switch ((unsigned long)sf.f_type) {
	case PIPEFS_MAGIC:
	case SOCKFS_MAGIC:
	case ANON_INODE_FS_MAGIC:
	case PIDFS_MAGIC:
		return false;
	default:
		return true;
	}
}

/*
 * Revision 4: the device's inode kevent, where it takes the file (a regular
 * file or directory open for reading, abi.md B8); anything it refuses (a
 * FIFO, an O_PATH or write-only fd, a cap) and lower revisions: inotify.
 */
static int attach_vnode(struct kq *kq, struct knote *kn, const struct kevent *kev)
{
	char path[64];
	struct stat st;
	int fd = fd_of(kev), r;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -EBADF;
	if (!is_vnode(kq, fd, &st))
		return -EINVAL;
	kn->vnode_dir = S_ISDIR(st.st_mode);
	if (kq->dev_vnode && kqf_dev_vnode_add(kq, kn) == 0) {
		kn->kind = K_VNODE;
		kn->st_dev = st.st_dev;
		kn->st_ino = st.st_ino;
		kn->nlink = st.st_nlink;
		return 0;
	}
	r = ensure_inotify(kq);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	kn->wd = inotify_add_watch(kq->ino_fd, path, INOTIFY_MASK);
	if (kn->wd < 0)
		return errno == ENOENT ? -EBADF : -errno;
	kn->kind = K_VNODE;
	kn->st_dev = st.st_dev;
	kn->st_ino = st.st_ino;
	kn->size = st.st_size;
	kn->nlink = st.st_nlink;
	return 0;
}

/*
 * D68's notes of a device report as the knote's fflags.  A report ORs the
 * events since the last one; FreeBSD adds an event's whole hint when one
 * bit of it is asked (filt_vnode), so each hint is added as a group: a
 * write's NOTE_WRITE|NOTE_EXTEND, a subdirectory's NOTE_WRITE|NOTE_LINK.
 */
unsigned int kqf_vnode_fflags(const struct knote *kn, unsigned int notes)
{
	static const struct { unsigned int dev, note; } map[] = {
		{ KEVENT_INODE_WRITE, NOTE_WRITE }, { KEVENT_INODE_EXTEND, NOTE_EXTEND },
		{ KEVENT_INODE_ATTRIB, NOTE_ATTRIB }, { KEVENT_INODE_LINK, NOTE_LINK },
		{ KEVENT_INODE_RENAME, NOTE_RENAME }, { KEVENT_INODE_DELETE, NOTE_DELETE },
	};
	const unsigned int write = NOTE_WRITE | NOTE_EXTEND | (kn->vnode_dir ? NOTE_LINK : 0);
	const unsigned int groups[] = { write, NOTE_ATTRIB, NOTE_LINK & ~write, NOTE_RENAME,
					NOTE_DELETE };
	unsigned int hint = 0, out = 0;

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (notes & map[i].dev)
			hint |= map[i].note;
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (hint & groups[i] & kn->sfflags)
			out |= hint & groups[i];
	return out;
}

/* What one inotify event means for the knote watching that inode. */
static unsigned int vnode_notes(struct knote *kn, const struct inotify_event *ie)
{
	unsigned int n = 0;
	struct stat st;

	if (ie->mask & IN_DELETE_SELF)
		n |= NOTE_DELETE;
	if (ie->mask & IN_MOVE_SELF)
		n |= NOTE_RENAME;
	if (ie->mask & (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO)) {
		n |= NOTE_WRITE;
		if (ie->mask & IN_ISDIR)
			n |= NOTE_LINK;	/* a subdirectory changes the link count */
	}
	if (fstat((int)kn->kev.ident, &st) < 0)
		return n;
	/*
	 * The size is compared, and remembered, at IN_MODIFY only: an earlier
	 * event read after the write (a chmod) would otherwise take the new
	 * size for its own and the write would no longer look like growth.
	 */
	if (ie->mask & IN_MODIFY) {
		n |= NOTE_WRITE;
		if (st.st_size > kn->size)
			n |= NOTE_EXTEND;
		kn->size = st.st_size;
	}
	if (ie->mask & IN_ATTRIB) {
		/* The open fd keeps the inode, so an unlink shows as nlink 0. */
		if (st.st_nlink == 0 && kn->nlink != 0)
			n |= NOTE_DELETE;
		else if (st.st_nlink != kn->nlink)
			n |= NOTE_LINK;
		else
			n |= NOTE_ATTRIB;
	}
	kn->nlink = st.st_nlink;
	return n;
}

void kqf_vnode_read(struct kq *kq)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t len;

	while ((len = read(kq->ino_fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *ie = (const struct inotify_event *)p;

			for (unsigned int h = 0; h < KQ_HASH; h++) {
				for (struct knote *kn = kq->by_key[h]; kn; kn = kn->hnext) {
					if (kn->kind != K_VNODE || kn->wd != ie->wd)
						continue;
					unsigned int hint = vnode_notes(kn, ie);

					/* The BSDs add the whole hint when one bit is asked for
					 * (a growing write is NOTE_WRITE|NOTE_EXTEND). */
					if (hint & kn->sfflags) {
						kn->fflags |= hint;
						kqf_candidate(kq, kn);
					}
				}
			}
			p += sizeof(*ie) + ie->len;
		}
	}
}

static void detach_vnode(struct kq *kq, struct knote *kn)
{
	for (unsigned int h = 0; h < KQ_HASH; h++)
		for (struct knote *o = kq->by_key[h]; o; o = o->hnext)
			if (o != kn && o->kind == K_VNODE && o->wd == kn->wd)
				return;	/* the inode is watched by another knote */
	if (kn->wd >= 0)
		inotify_rm_watch(kq->ino_fd, kn->wd);
}

/* ---- EVFILT_SIGNAL: one dispatcher thread reads the library's signalfd ---- */

/*
 * One signalfd and one thread for the process: a pending signal can be
 * read once only, and every kqueue watching it must see it.
 */
static pthread_mutex_t sig_lock = PTHREAD_MUTEX_INITIALIZER;
static int sig_fd = -1;
static atomic_int sig_fd_read = -1;	/* sig_fd once it is watched, for kevent() */
static sigset_t sig_mask;
static bool sig_thread_on;

static void *signal_dispatcher(void *arg)
{
	int fd = (int)(intptr_t)arg;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct signalfd_siginfo si;

		if (poll(&p, 1, -1) < 0)
			continue;
		while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			kqf_signal_fanout((int)si.ssi_signo);
	}
	return NULL;
}

static int signal_watch(int sig)
{
	sigset_t one, all, old;
	pthread_t t;
	int fd;

	if (sig_fd < 0)
		sigemptyset(&sig_mask);
	sigaddset(&sig_mask, sig);
	fd = signalfd(sig_fd, &sig_mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	sig_fd = fd;
	/* The caller's thread blocks it, so an ignored signal is still queued. */
	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_sigmask(SIG_BLOCK, &one, NULL);
	if (sig_thread_on)
		return 0;
	/* The dispatcher blocks every signal: it must never take one itself. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&t, NULL, signal_dispatcher, (void *)(intptr_t)sig_fd) == 0) {
		pthread_detach(t);
		sig_thread_on = true;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!sig_thread_on)
		return -EAGAIN;
	atomic_store(&sig_fd_read, sig_fd);
	return 0;
}

/*
 * A signal sent to one thread (pthread_kill(), raise(), tgkill()) is
 * pending in that thread only, which the dispatcher's read cannot see; a
 * read by that thread can (signalfd(2): the reader's signals and the
 * process's).  kevent() reads here first, before any lock of the library,
 * so a signal its caller sent itself is counted as kqueue counts it.
 */
void kqf_signal_own(void)
{
	int fd = atomic_load_explicit(&sig_fd_read, memory_order_relaxed);
	struct signalfd_siginfo si;

	if (fd < 0)
		return;
	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		kqf_signal_fanout((int)si.ssi_signo);
}

static int attach_signal(struct knote *kn, const struct kevent *kev)
{
	int sig = (int)kev->ident, r;

	if (kev->ident == 0 || kev->ident >= 65 || sig == SIGKILL || sig == SIGSTOP)
		return -EINVAL;
	pthread_mutex_lock(&sig_lock);
	r = signal_watch(sig);
	pthread_mutex_unlock(&sig_lock);
	if (r == 0)
		kn->kind = K_SIGNAL;
	return r;
}

/* In a fork child: the dispatcher thread is not there; start afresh. */
void kqf_signal_forget(void)
{
	if (sig_fd >= 0)
		kqf_sys_close(sig_fd);
	sig_fd = -1;
	atomic_store(&sig_fd_read, -1);
	sig_thread_on = false;
	pthread_mutex_init(&sig_lock, NULL);
}

/* ---- dispatch ---- */

int kqf_filter_attach(struct kq *kq, struct knote *kn, const struct kevent *kev)
{
	switch (kev->filter) {
	case EVFILT_READ:
	case EVFILT_WRITE:
		return attach_fd(kq, kn, kev);
	case EVFILT_TIMER:
		kn->kind = K_TIMER;
		/* FreeBSD's filt_timerattach: EV_CLEAR, but for an absolute one */
		if (!(kev->fflags & NOTE_ABSTIME))
			kn->kev.flags |= EV_CLEAR;
		return timer_arm(kq, kn);
	case EVFILT_USER:
		return attach_user(kq, kn, kev);
	case EVFILT_PROC:
		return attach_proc(kn, kev);
	case EVFILT_VNODE:
		return attach_vnode(kq, kn, kev);
	case EVFILT_SIGNAL:
		kn->kev.flags |= EV_CLEAR;	/* FreeBSD: signals are EV_CLEAR */
		return attach_signal(kn, kev);
	}
	return -EINVAL;
}

int kqf_filter_modify(struct kq *kq, struct knote *kn, const struct kevent *kev)
{
	if (kn->kind == K_USER)
		return kqf_user_touch(kq, kn, kev);
	kn->sfflags = kev->fflags;
	kn->sdata = kev->data;
	if (kn->kind == K_TIMER) {
		/*
		 * A new period takes effect at once, with nothing pending: the
		 * old timer goes (its device kevent, its timerfd), a new one comes.
		 */
		int r;

		if (kn->dev_on)
			kqf_dev_remove(kq, kn);
		kn->dev_on = false;
		kn->dev_timer = false;
		kqf_filter_detach(kq, kn);
		kn->count = 0;
		kn->watch_fd = -1;
		r = timer_arm(kq, kn);
		if (r < 0)
			return r;
		r = kqf_arm(kq, kn);
		return r < 0 ? r : 0;
	}
	return 0;
}

/* Every kind but K_FD: out of line, so a fd event's check keeps no frame of theirs. */
static SLOW_PATH int check_other(struct knote *kn, struct kevent *out)
{
	switch (kn->kind) {
	case K_FD:
		break;	/* kqf_filter_check() */
	case K_FILE: return check_file(kn, out);
	case K_KQUEUE: return check_kqueue(kn, out);
	case K_TIMER: return check_timer(kn, out);
	case K_PROC: return check_proc(kn, out);
	case K_USER:
		if (!kn->hook)
			return 0;
		out->fflags = kn->sfflags;
		out->data = kn->sdata;
		return 1;
	case K_SIGNAL:
		if (!kn->count)
			return 0;
		out->data = (intptr_t)kn->count;
		return 1;
	case K_VNODE:
		if (kqf_is_stale(kn) && kn->nlink != 0)
			return -1;
		if (!kn->fflags)
			return 0;
		out->fflags = kn->fflags;
		return 1;
	}
	return 0;
}

int kqf_filter_check(struct kq *kq, struct knote *kn, struct kevent *out)
{
	kn_event(kn, out);
	if (kn->kind != K_FD)
		return check_other(kn, out);
	if (kn->dev_gen != kq->gen || !kn->dev_req)
		return check_fd(kn, out, NULL, NULL, false);
	/* D69: the device's -EBADF is a stale fd: freed, never reported */
	if (kq->dev_fdcheck && kn->dev_broken && kn->dev_count == (unsigned int)-EBADF)
		return -1;
	return check_fd(kn, out, &kn->dev_revents, kq->dev_count ? &kn->dev_count : NULL,
			kq->dev_fdcheck && !kn->dev_broken);
}

void kqf_filter_clear(struct knote *kn, const struct kevent *out)
{
	kn->count = 0;
	kn->hook = false;
	kn->fflags = 0;
	kn->last_data = out->data;
	kn->last_eof = out->flags & EV_EOF;
}

void kqf_filter_detach(struct kq *kq, struct knote *kn)
{
	switch (kn->kind) {
	case K_TIMER:
	case K_PROC:
		if (kn->dev_on) {
			/* the device kevent goes first: its fd is about to close */
			struct ukevent uk;

			memset(&uk, 0, sizeof(uk));
			uk.id.raw[0] = (__u32)kn->watch_fd;
			uk.type = KEVENT_POLL;
			uk.event = kn->watch_events;
			uk.user[0] = (__u32)kn->serial;
			uk.user[1] = (__u32)(kn->serial >> 32);
			(void)kevent_ctl(kq->fd, KEVENT_CTL_REMOVE, 1, &uk);
			kn->dev_on = false;
		}
		if (kn->watch_fd >= 0)
			kqf_sys_close(kn->watch_fd);
		kn->watch_fd = -1;
		break;
	case K_VNODE:
		detach_vnode(kq, kn);
		break;
	default:
		break;
	}
}
