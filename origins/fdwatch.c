// SPDX-License-Identifier: GPL-2.0
/*
 * KEVENT_POLL and KEVENT_SOCKET: a duplicate of the client's fd (fdtake.c)
 * registered with EPOLLET on the reactor.  Readiness is checked with poll()
 * at ADD (ready: answered by ADD, not registered, take13) and MODIFY, and on
 * every edge the reactor sees from the revents epoll harvested with it, so
 * a kevent re-fires only on new activity of its source (abi.md A6).
 *
 * Revision 2: POLLRDHUP is reported (D52); KEVENT_REQ_ALWAYS_QUEUE keeps a
 * kevent ready at ADD registered and fires it (D42); KEVENT_REQ_LEVEL polls
 * the duplicate again at the next dequeue (D43, kwatch_level).  The
 * duplicate is kept until detach (A7: the client's close() changes nothing)
 * and closed by the closer thread (B3).
 *
 * POLL:   ret_data[0] = revents & event (A8, D13); regular files are always
 *         ready (D14).
 * SOCKET: one rule for TCP and AF_UNIX (A8): RECV when readable (data or
 *         EOF) on a non-listening socket, ACCEPT when a listening socket is
 *         readable, SEND when writable; ret_data[0] = the bits that fired;
 *         POLLERR -> BROKEN with ret_data[1] = -ECONNRESET (the real error
 *         stays on the socket: the daemon never reads SO_ERROR, A7).
 *         ACCEPT on TCP: ret_data[1] = accept queue length (TCP_INFO
 *         tcpi_unacked of a listener); 0 for AF_UNIX (below revision 4).
 *
 * Revision 4 (D67): every delivered record's ret_data[1] is the count of
 * kwatch_count, read at the delivery on the duplicate (the same open file
 * description as the client's fd); the core asks for it through the type's
 * descriptor (core/types.c), and an answer at ADD carries it too.
 * D69: at each delivery the core asks whether the client's fd still names
 * the file of the duplicate (kwatch_fd_check, one kcmp(KCMP_FILE)).
 *
 * epoll data carries a slot index and its generation, so an event that
 * epoll_wait returned just before a detach finds a stale generation and is
 * dropped instead of touching freed memory.
 *
 * LOCKING: all state under korigins_lock (internal.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <linux/unix_diag.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/kcmp.h>

#include "internal.h"

#define KPOLL_BITS (KEVENT_POLL_POLLIN | KEVENT_POLL_POLLPRI | KEVENT_POLL_POLLOUT | \
		    KEVENT_POLL_POLLERR | KEVENT_POLL_POLLHUP | KEVENT_POLL_POLLRDNORM | \
		    KEVENT_POLL_POLLRDBAND | KEVENT_POLL_POLLWRNORM | \
		    KEVENT_POLL_POLLWRBAND | KEVENT_POLL_POLLMSG)
#define KPOLL_REGULAR (KEVENT_POLL_POLLIN | KEVENT_POLL_POLLOUT | \
		       KEVENT_POLL_POLLRDNORM | KEVENT_POLL_POLLWRNORM)

_Static_assert(KEVENT_POLL_POLLIN == POLLIN && KEVENT_POLL_POLLOUT == POLLOUT &&
	       KEVENT_POLL_POLLRDNORM == POLLRDNORM && KEVENT_POLL_POLLMSG == POLLMSG &&
	       KEVENT_POLL_POLLHUP == POLLHUP && KEVENT_POLL_POLLERR == POLLERR &&
	       KEVENT_POLL_POLLRDHUP == POLLRDHUP && KEVENT_POLL_POLLRDHUP == EPOLLRDHUP,
	       "KEVENT_POLL_* are the native poll bits");

struct kwatch {
	struct kitem *k;
	int dup;
	uid_t uid;		/* the ADD caller's: its closer gets dup (closer.c) */
	__u32 type;		/* KEVENT_POLL or KEVENT_SOCKET */
	__u32 event;		/* copy of ukevent.event, updated by modify */
	int listener;		/* socket in listen() */
	int tcp;
	int in_epoll;
	int stopped;		/* the core said stop (ONESHOT fired): off the reactor */
	int regular;		/* a regular file: always ready, never in epoll (D14) */
	enum kfd_kind kind;	/* a pipe or a socket has a count (D67) */
	__u32 bits;		/* the POLL bits the queue's revision reports (D52) */
	__u32 slot;
};

static struct {
	struct kwatch **slots;
	__u32 *gens;		/* bumped whenever a slot is freed */
	__u32 *free;		/* stack of free slot indices */
	__u32 nr_free, cap, live;
} kw;

static int kwatch_grow(void)
{
	__u32 cap = kw.cap ? kw.cap * 2 : 256, i;
	struct kwatch **slots = realloc(kw.slots, cap * sizeof(*slots));
	__u32 *gens, *fr;

	if (!slots)
		return -ENOMEM;
	kw.slots = slots;
	gens = realloc(kw.gens, cap * sizeof(*gens));
	if (!gens)
		return -ENOMEM;
	kw.gens = gens;
	fr = realloc(kw.free, cap * sizeof(*fr));
	if (!fr)
		return -ENOMEM;
	kw.free = fr;
	for (i = cap; i > kw.cap; i--) {
		kw.slots[i - 1] = NULL;
		kw.gens[i - 1] = 0;
		kw.free[kw.nr_free++] = i - 1;
	}
	kw.cap = cap;
	return 0;
}

static int kwatch_slot_alloc(struct kwatch *w)
{
	if (!kw.nr_free && kwatch_grow() < 0)
		return -ENOMEM;
	w->slot = kw.free[--kw.nr_free];
	kw.slots[w->slot] = w;
	kw.live++;
	return 0;
}

static void kwatch_slot_free(struct kwatch *w)
{
	kw.slots[w->slot] = NULL;
	kw.gens[w->slot]++;
	kw.free[kw.nr_free++] = w->slot;
	kw.live--;
}

static uint64_t kwatch_data(const struct kwatch *w)
{
	return KR_DATA(KR_TAG_WATCH, ((uint64_t)kw.gens[w->slot] << 24) | w->slot);
}

static uint32_t kwatch_epoll_mask(const struct kwatch *w)
{
	uint32_t mask = EPOLLET | EPOLLERR;

	if (w->type == KEVENT_POLL)
		return mask | (w->event & w->bits);
	if (w->event & (KEVENT_SOCKET_RECV | KEVENT_SOCKET_ACCEPT))
		mask |= EPOLLIN | EPOLLRDHUP;
	if (w->event & KEVENT_SOCKET_SEND)
		mask |= EPOLLOUT;
	if (w->event & w->bits & KEVENT_POLL_POLLRDHUP)
		mask |= EPOLLRDHUP;
	return mask;
}

static short kwatch_revents(const struct kwatch *w, short events)
{
	struct pollfd pfd = { .fd = w->dup, .events = events };

	if (poll(&pfd, 1, 0) <= 0)
		return 0;
	return pfd.revents;
}

static int kpoll_check(const struct kwatch *w, short revents, struct korigin_result *res)
{
	__u32 rev = (__u16)revents & w->event & w->bits;

	if (!rev)
		return 0;
	res->ret_data[0] = rev;
	return 1;
}

static __u32 ksocket_backlog(const struct kwatch *w)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (!w->tcp && w->type == KEVENT_SOCKET)
		return 0;
	if (getsockopt(w->dup, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0)
		return 0;	/* not TCP */
	return ti.tcpi_unacked;	/* a listener's current accept queue */
}

/* ---- D67: the count a delivered record carries (revision 4) ---- */

static __u32 kcount_clamp(long long v)
{
	return v < 0 ? 0 : v > UINT32_MAX ? UINT32_MAX : (__u32)v;
}

/* Bytes readable: what FIONREAD says (a pipe's bytes, a socket's SIOCINQ). */
static long long kcount_readable(const struct kwatch *w)
{
	int n;

	return ioctl(w->dup, FIONREAD, &n) < 0 ? 0 : n;
}

/* Free space: a socket's send buffer less what it queued, a pipe's capacity less its bytes. */
static long long kcount_writable(const struct kwatch *w)
{
	int size, used;
	socklen_t len = sizeof(size);

	if (w->kind == KFD_SOCKET) {
		if (getsockopt(w->dup, SOL_SOCKET, SO_SNDBUF, &size, &len) < 0 ||
		    ioctl(w->dup, SIOCOUTQ, &used) < 0)
			return 0;
		return (long long)size - used;
	}
	size = fcntl(w->dup, F_GETPIPE_SZ);
	if (size < 0 || ioctl(w->dup, FIONREAD, &used) < 0)
		return 0;
	return (long long)size - used;
}

/* Whether w's socket listens now (a POLL kevent's socket may listen after ADD). */
static int kcount_listening(const struct kwatch *w)
{
	int val = 0;
	socklen_t len = sizeof(val);

	if (w->kind != KFD_SOCKET)
		return 0;
	if (w->type == KEVENT_SOCKET && w->listener)
		return 1;
	return getsockopt(w->dup, SOL_SOCKET, SO_ACCEPTCONN, &val, &len) == 0 && val;
}

static __u32 ksocket_backlog(const struct kwatch *w);

/* UNIX_DIAG_RQLEN's receive queue in a sock_diag answer: a listener's backlog. */
static long long kcount_rqlen(const struct nlmsghdr *h, long n)
{
	const struct unix_diag_msg *m = NLMSG_DATA(h);
	const struct rtattr *a = (const struct rtattr *)(m + 1);
	int len;

	if (n < (long)NLMSG_LENGTH(sizeof(*m)) || !NLMSG_OK(h, n) ||
	    h->nlmsg_type != SOCK_DIAG_BY_FAMILY)
		return 0;
	len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == UNIX_DIAG_RQLEN &&
		    RTA_PAYLOAD(a) >= sizeof(struct unix_diag_rqlen))
			return ((const struct unix_diag_rqlen *)RTA_DATA(a))->udiag_rqueue;
	return 0;
}

/*
 * An AF_UNIX listener's accept queue: no ioctl or socket option tells it
 * (SIOCINQ refuses a listener), only sock_diag by the socket's inode
 * (unix_diag, loaded on demand; in the daemon's network namespace).  The
 * kernel answers within send(); 0 where it cannot (docs/abi.md section 9).
 */
static long long kcount_unix_backlog(const struct kwatch *w)
{
	struct {
		struct nlmsghdr h;
		struct unix_diag_req r;
	} q = { .h = { .nlmsg_len = sizeof(q), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		       .nlmsg_flags = NLM_F_REQUEST },
		.r = { .sdiag_family = AF_UNIX, .udiag_states = ~0u, .udiag_show = UDIAG_SHOW_RQLEN,
		       .udiag_cookie = { INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE } } };
	union {
		struct nlmsghdr h;
		char b[1024];
	} a;
	struct stat st;
	long long v = 0;
	long n;
	int nl;

	if (fstat(w->dup, &st) < 0)	/* classified a socket already (B3) */
		return 0;
	q.r.udiag_ino = (__u32)st.st_ino;
	nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return 0;
	if (send(nl, &q, sizeof(q), 0) == (ssize_t)sizeof(q)) {
		n = recv(nl, &a, sizeof(a), MSG_DONTWAIT);
		v = kcount_rqlen(&a.h, n);
	}
	close(nl);
	return v;
}

/* A listener's waiting connections: TCP's TCP_INFO, AF_UNIX's sock_diag. */
static __u32 kcount_backlog(const struct kwatch *w)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(w->dup, (struct sockaddr *)&ss, &len) == 0 && ss.ss_family == AF_UNIX)
		return kcount_clamp(kcount_unix_backlog(w));
	return ksocket_backlog(w);
}

/*
 * D67: the count for the bits fired: readable ones (POLLIN, POLLRDNORM;
 * SOCKET RECV, ACCEPT) count the bytes to read, or a listener's waiting
 * connections; else writable ones (POLLOUT, POLLWRNORM; SEND) the free
 * space; else, and for any file that is no pipe, FIFO or socket, 0.
 * The locks these calls take are the file's own, as the client's FIONREAD
 * takes them (docs/abi.md section 9).
 */
static __u32 kwatch_count_of(const struct kwatch *w, __u32 fired)
{
	int is_poll = w->type == KEVENT_POLL;
	__u32 in = is_poll ? KEVENT_POLL_POLLIN | KEVENT_POLL_POLLRDNORM
			: KEVENT_SOCKET_RECV | KEVENT_SOCKET_ACCEPT;
	__u32 out = is_poll ? KEVENT_POLL_POLLOUT | KEVENT_POLL_POLLWRNORM : KEVENT_SOCKET_SEND;

	if (w->kind != KFD_PIPE && w->kind != KFD_SOCKET)
		return 0;
	if (fired & in)
		return kcount_listening(w) ? kcount_backlog(w) : kcount_clamp(kcount_readable(w));
	if (fired & out)
		return kcount_clamp(kcount_writable(w));
	return 0;
}

/* The core's dequeue, q->ctl held: w lives until detach, which needs it too. */
static __u32 kwatch_data_count(struct kitem *k, __u32 fired)
{
	return kwatch_count_of(korigin_data(k), fired);
}

/*
 * O11: a count read later, on the caller's uid lane: a copy of w whose dup
 * is a duplicate of its own (w's goes at detach, which may come first).
 * F_DUPFD_CLOEXEC takes only the daemon's own fd table: it never waits on
 * the client.  The duplicate goes to the closer (B3), never closed here.
 */
struct kwatch_pin {
	struct kcount_pin pin;
	struct kwatch w;
};

static void kwatch_pin_put(struct kcount_pin *pin, struct ukevent *out)
{
	struct kwatch_pin *p = (struct kwatch_pin *)pin;

	if (out)
		out->ret_data[1] = kwatch_count_of(&p->w, out->ret_data[0]);
	kcloser_close(p->w.uid, p->w.dup);
	free(p);
}

static struct kcount_pin *kwatch_count_pin(struct kitem *k)
{
	const struct kwatch *w = korigin_data(k);
	struct kwatch_pin *p;

	if (w->kind != KFD_PIPE && w->kind != KFD_SOCKET)
		return NULL;	/* a count of 0 costs nothing: now */
	p = malloc(sizeof(*p));
	if (!p)
		return NULL;
	p->pin.put = kwatch_pin_put;
	p->w = *w;
	p->w.k = NULL;
	p->w.dup = fcntl(w->dup, F_DUPFD_CLOEXEC, 0);
	if (p->w.dup < 0) {
		free(p);
		return NULL;
	}
	return &p->pin;
}

static int ksocket_check(const struct kwatch *w, short rev, struct korigin_result *res)
{
	__u32 fired = 0;

	if (rev & POLLERR) {
		res->ret_flags = KEVENT_RET_BROKEN;
		res->ret_data[1] = (__u32)-ECONNRESET;
		return 1;
	}
	if (w->listener) {
		if ((w->event & KEVENT_SOCKET_ACCEPT) && (rev & POLLIN)) {
			fired |= KEVENT_SOCKET_ACCEPT;
			res->ret_data[1] = ksocket_backlog(w);
		}
	} else {
		if ((w->event & KEVENT_SOCKET_RECV) && (rev & (POLLIN | POLLRDHUP)))
			fired |= KEVENT_SOCKET_RECV;
		if ((w->event & KEVENT_SOCKET_SEND) && (rev & POLLOUT))
			fired |= KEVENT_SOCKET_SEND;
	}
	/* D52: the peer shut down writing, reported by name (revision 2) */
	if ((w->event & w->bits & KEVENT_POLL_POLLRDHUP) && (rev & POLLRDHUP))
		fired |= KEVENT_POLL_POLLRDHUP;
	res->ret_data[0] = fired;
	return fired != 0;
}

/* The result of readiness rev (poll bits) for w; 1 when it fires. */
static int kwatch_eval(const struct kwatch *w, short rev, struct korigin_result *res)
{
	*res = (struct korigin_result){ 0 };
	return w->type == KEVENT_POLL ? kpoll_check(w, rev, res) : ksocket_check(w, rev, res);
}

/* At ADD and MODIFY: the readiness now, by poll() of the duplicate. */
static int kwatch_check(const struct kwatch *w, struct korigin_result *res)
{
	short want = w->type == KEVENT_POLL ? (short)(w->event & w->bits)
					    : (short)(POLLIN | POLLOUT | POLLRDHUP);

	return kwatch_eval(w, kwatch_revents(w, want), res);
}

/* D14: a regular file is always ready; with no such bit asked, never. */
static int kpoll_regular(struct kwatch *w, struct korigin_result *res)
{
	__u32 rev = w->event & KPOLL_REGULAR;

	if (rev) {
		res->ret_data[0] = rev;
		return 1;
	}
	return 0;
}

/* The readiness now: a regular file by D14, anything else by poll(). */
static int kwatch_ready(struct kwatch *w, struct korigin_result *res)
{
	*res = (struct korigin_result){ 0 };
	return w->regular ? kpoll_regular(w, res) : kwatch_check(w, res);
}

static void ksocket_probe(struct kwatch *w)
{
	int val = 0;
	socklen_t len = sizeof(val);

	if (getsockopt(w->dup, SOL_SOCKET, SO_ACCEPTCONN, &val, &len) == 0)
		w->listener = val;
	len = sizeof(val);
	if (getsockopt(w->dup, SOL_SOCKET, SO_PROTOCOL, &val, &len) == 0)
		w->tcp = val == IPPROTO_TCP;
}

/* The core said stop (ONESHOT fired or BROKEN): off the reactor; korigins_lock held. */
static void kwatch_stop_locked(struct kwatch *w)
{
	if (w->in_epoll)
		kreactor_del(w->dup);
	w->in_epoll = 0;
	w->stopped = 1;
}

static void kwatch_stop(struct kwatch *w)
{
	pthread_mutex_lock(&korigins_lock);
	kwatch_stop_locked(w);
	pthread_mutex_unlock(&korigins_lock);
}

/* Put w on the reactor; called with korigins_lock held. */
static int kwatch_register(struct kwatch *w, int poll_it)
{
	int err = kreactor_running() ? kwatch_slot_alloc(w) : -ENODEV;

	if (err)
		return err;
	korigin_set_data(w->k, w);
	if (!poll_it)
		return 0;
	err = kreactor_add(w->dup, kwatch_epoll_mask(w), kwatch_data(w));
	if (err) {
		kwatch_slot_free(w);
		/* 2006: a file without a poll method fails with -EINVAL. */
		return err == -EPERM ? -EINVAL : err;
	}
	w->in_epoll = 1;
	return 0;
}

/*
 * D42: w was ready at ADD and is registered now.  Its fire is held by the
 * core until ADD returns, which then queues it.  An EPOLLET registration of
 * a ready fd reports one initial edge; the drain lets the reactor take that
 * edge now, while the fire is still held (it merges into it, A9), so it
 * cannot arrive after the caller dequeued and deliver the event twice.
 */
static void kwatch_queue_ready(struct kwatch *w, const struct korigin_result *res)
{
	int stop;

	pthread_mutex_lock(&korigins_lock);
	stop = korigin_fire(w->k, res);
	pthread_mutex_unlock(&korigins_lock);
	if (w->in_epoll && !stop)
		korigins_drain();
	if (stop)
		kwatch_stop(w);
}

static int kwatch_attach(struct kitem *k, const struct kcaller *caller,
			 struct korigin_result *res, __u32 type)
{
	const struct ukevent *uk = korigin_ukevent(k);
	struct kfd_info info;
	struct kwatch *w;
	int dup, ready, err;

	dup = kfd_take(caller, (int)uk->id.raw[0], &info);
	if (dup < 0)
		return dup;
	if (type == KEVENT_SOCKET && info.kind != KFD_SOCKET) {
		kcloser_close(caller->uid, dup);
		return -ENOTSOCK;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		kcloser_close(caller->uid, dup);
		return -ENOMEM;
	}
	*w = (struct kwatch){ .k = k, .dup = dup, .uid = caller->uid, .type = type,
			      .event = uk->event };
	w->bits = KPOLL_BITS | (korigin_revision(k) >= 2 ? KEVENT_POLL_POLLRDHUP : 0);
	w->regular = type == KEVENT_POLL && info.kind == KFD_REGULAR;
	w->kind = info.kind;
	if (type == KEVENT_SOCKET)
		ksocket_probe(w);
	ready = kwatch_ready(w, res);
	/* D67: an answer at ADD is a delivery: it carries the count now */
	if (ready && korigin_counts(k) && !(res->ret_flags & KEVENT_RET_BROKEN))
		res->ret_data[1] = kwatch_count_of(w, res->ret_data[0]);
	/* D42 queues a source ready at ADD; one in error is answered as ever (O8) */
	if (ready && (!korigin_always_queue(k) || (res->ret_flags & KEVENT_RET_BROKEN))) {
		kcloser_close(caller->uid, dup);
		free(w);
		return 1;
	}
	pthread_mutex_lock(&korigins_lock);
	err = kwatch_register(w, !w->regular);
	pthread_mutex_unlock(&korigins_lock);
	if (err) {
		kcloser_close(caller->uid, dup);
		free(w);
		return err;
	}
	if (ready)
		kwatch_queue_ready(w, res);
	return 0;
}

static int kpoll_attach(struct kitem *k, const struct kcaller *caller,
			struct korigin_result *res)
{
	return kwatch_attach(k, caller, res, KEVENT_POLL);
}

static int ksocket_attach(struct kitem *k, const struct kcaller *caller,
			  struct korigin_result *res)
{
	return kwatch_attach(k, caller, res, KEVENT_SOCKET);
}

/*
 * MODIFY re-evaluates at once (section 4), and the EPOLL_CTL_MOD or _ADD it
 * makes reports the fd's present readiness to the reactor as one more edge.
 * Taken later, after the caller dequeued the event MODIFY made ready, that
 * edge would ready it again with no new activity (A6; the module re-checks
 * in the caller's syscall only): a duplicate that only load shows (the
 * lockstep fuzzer found it with an ASan daemon on a busy host).  So when the
 * re-check found the fd ready, the drain lets the reactor take the edge
 * before MODIFY returns: it fires a kevent that is, or is about to be, on
 * the ready list with the same result, and merges (D3).
 */
static int kwatch_modify(struct kitem *k, struct korigin_result *res)
{
	struct kwatch *w = korigin_data(k);
	int ready = 0, edge = 0;

	pthread_mutex_lock(&korigins_lock);
	w->event = korigin_ukevent(k)->event;
	if (w->in_epoll)
		edge = !kreactor_mod(w->dup, kwatch_epoll_mask(w), kwatch_data(w));
	/* MODIFY re-arms a stopped kevent (A6; the module clears its 'stopped'). */
	if (w->stopped && !kreactor_add(w->dup, kwatch_epoll_mask(w), kwatch_data(w))) {
		w->in_epoll = 1;
		w->stopped = 0;
		edge = 1;
	}
	if (w->in_epoll || w->type == KEVENT_SOCKET)
		ready = kwatch_check(w, res);
	pthread_mutex_unlock(&korigins_lock);
	if (edge && ready > 0)
		korigins_drain();
	return ready;
}

/* D69: the log for a check kcmp could not make (kwatch_init). */
static void (*kw_log)(const char *line);
static atomic_ulong kw_unchecked;

/*
 * D69: a refusal that leaves a record unchecked is not ordinary (a ptrace
 * policy tightened since ADD, a kernel without CONFIG_KCMP): the first
 * and every 1024th are logged, so a daemon that checks nothing says so.
 */
static void kwatch_fd_unchecked(int err)
{
	unsigned long n = atomic_fetch_add(&kw_unchecked, 1);
	char line[160];

	if (n % 1024)
		return;
	snprintf(line, sizeof(line),
		 "poll: kcmp refused (%s): %lu delivered record(s) not checked against the caller's fd (D69)",
		 strerror(err), n + 1);
	if (kw_log)
		kw_log(line);
	else
		fprintf(stderr, "kevent-origins: %s\n", line);
}

/*
 * D69: does the caller's id still name the file the duplicate is?  kcmp
 * compares the two open files in their tables (the caller's thread: its
 * table may differ from its group leader's only where ADD refused, B2).
 * The duplicate lives until detach, which needs the q->ctl held here.
 */
static int kwatch_fd_check(struct kitem *k, const struct kcaller *caller)
{
	struct kwatch *w = korigin_data(k);
	long r;

	/* a caller outside our pid namespace (a queue passed to it): no table to ask */
	if (!caller->tid) {
		kwatch_fd_unchecked(ESRCH);
		return 0;
	}
	r = syscall(SYS_kcmp, (pid_t)caller->tid, getpid(), KCMP_FILE,
		    (unsigned long)korigin_ukevent(k)->id.raw[0], (unsigned long)w->dup);
	if (r > 0)
		return -EBADF;		/* the number is another file now */
	if (!r)
		return 0;
	if (errno == EBADF)
		return -EBADF;		/* the number is closed */
	if (errno != ESRCH)		/* ESRCH: the caller is gone, nobody reads it */
		kwatch_fd_unchecked(errno);
	return 0;
}

static void kwatch_detach(struct kitem *k)
{
	struct kwatch *w = korigin_data(k);

	pthread_mutex_lock(&korigins_lock);
	if (w->in_epoll)
		kreactor_del(w->dup);
	kwatch_slot_free(w);
	pthread_mutex_unlock(&korigins_lock);
	kcloser_close(w->uid, w->dup);
	free(w);
}

void kwatch_handle(uint64_t payload, uint32_t events)
{
	__u32 slot = (__u32)(payload & 0xffffff), gen = (__u32)(payload >> 24);
	struct korigin_result res;
	struct kwatch *w;

	if (slot >= kw.cap || kw.gens[slot] != gen || !(w = kw.slots[slot]))
		return;	/* detached after epoll_wait returned the event */
	/*
	 * The readiness epoll_wait reported: epoll polled the file when it
	 * harvested this edge, as a poll() here would a moment later, and the
	 * interest mask asks for the bits the checks read (plus ERR and HUP,
	 * which poll() reports too).  One syscall less per event.
	 */
	if (!w->in_epoll || !kwatch_eval(w, (short)(events & 0xffff), &res))
		return;
	if (korigin_fire(w->k, &res) == 1)
		kwatch_stop_locked(w);
}

/*
 * D43: w's kevent was dequeued with KEVENT_REQ_LEVEL and a dequeue starts
 * (the queue's control lock held): poll the duplicate now and fire again
 * while the condition holds, with a fresh result.
 */
static void kwatch_level(struct kitem *k)
{
	struct kwatch *w = korigin_data(k);
	struct korigin_result res;

	pthread_mutex_lock(&korigins_lock);
	if (!w->stopped && kwatch_ready(w, &res) && korigin_fire(k, &res) == 1)
		kwatch_stop_locked(w);
	pthread_mutex_unlock(&korigins_lock);
}

int kwatch_init(void (*log)(const char *line))
{
	kw_log = log;
	atomic_store(&kw_unchecked, 0);
	return 0;
}

void kwatch_fini(void)
{
	free(kw.slots);
	free(kw.gens);
	free(kw.free);
	kw.slots = NULL;
	kw.gens = kw.free = NULL;
	kw.cap = kw.nr_free = kw.live = 0;
}

__u64 kwatch_count(void)
{
	return kw.live;
}

const struct korigin_ops kpoll_ops = {
	.name = "poll",
	.attach = kpoll_attach,
	.modify = kwatch_modify,
	.detach = kwatch_detach,
	.level = kwatch_level,
	.count = kwatch_data_count,
	.count_pin = kwatch_count_pin,
	.fd_check = kwatch_fd_check,
};

const struct korigin_ops ksocket_ops = {
	.name = "socket",
	.attach = ksocket_attach,
	.modify = kwatch_modify,
	.detach = kwatch_detach,
	.level = kwatch_level,
	.count = kwatch_data_count,
	.count_pin = kwatch_count_pin,
	.fd_check = kwatch_fd_check,
};
