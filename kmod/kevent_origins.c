// SPDX-License-Identifier: GPL-2.0
/*
 * kevent.ko origins: KEVENT_TIMER on hrtimers, KEVENT_POLL and KEVENT_SOCKET
 * through the watched file's ->poll() with our own wait-queue entries;
 * revision 3: KEVENT_POSIX_TIMER on hrtimers of its clock and KEVENT_USER,
 * which has no source.
 *
 * LOCKING
 *  - attach/modify/detach run with the queue's ctl_mutex held, in process
 *    context (they may sleep: hrtimer_cancel, cancel_work_sync).
 *  - The hrtimer callback runs in hard-irq context; it only calls
 *    kevent_fire(), which takes the queue's ready_lock with irqsave.
 *  - kevent_poll_wake() runs under the watched wait-queue head's lock, maybe
 *    in irq context, so it calls no ->poll() that may take a lock or sleep.
 *    On a TCP or AF_UNIX socket or a pipe, whose poll takes no lock, the
 *    poll runs there and k fires with its answer ("polling in the waker":
 *    every poll-and-fire of such a kevent holds that head's lock, which
 *    orders them).  Else a keyed wakeup of a file that is no socket (a
 *    socket's key names bits that may not hold) whose key gives all k asks
 *    for fires k right there (kevent_poll_wake_keyed, as epoll's callback
 *    does); any other wakeup queues k->poll.work, which re-polls from a
 *    kworker.
 *    Lock order: wait-queue head lock -> ready_lock -> poll_wq's lock.
 *  - attach hooks k with poll.stopped set, so no wakeup fires it before the
 *    ADD decides; a kept k is polled again once it is open (kevent_fd_open).
 *  - POLLFREE: the head is going away (binder; signalfd, its other sender,
 *    is refused, D39).  The waker unhooks our entry while it holds the
 *    head's lock and publishes pwq->whead = NULL with release order as its
 *    last access; detach reads it with acquire under rcu_read_lock(), since
 *    the owner RCU-delays freeing the head.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/file.h>
#include <linux/slab.h>
#include <linux/net.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/nospec.h>
#include <linux/pipe_fs_i.h>
#include <net/af_unix.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <uapi/linux/magic.h>

#include "kevent_priv.h"

struct kevent_pwq {
	wait_queue_entry_t wait;
	wait_queue_head_t *whead;	/* NULL once POLLFREE unhooked us */
	struct kevent *k;
	struct list_head link;		/* k->poll.pwqs */
};

struct kevent_ptable {
	poll_table pt;
	struct kevent *k;
	int err;
};

static struct kmem_cache *kevent_pwq_cache;

/* ---- timer (A9) ---------------------------------------------------- */

static enum hrtimer_restart kevent_timer_expired(struct hrtimer *t)
{
	struct kevent *k = container_of(t, struct kevent, timer.hrt);
	/*
	 * A9: the expiry's point on the timer's grid (ADD + n * period) in
	 * CLOCK_MONOTONIC ms, truncated to 32 bits, as the daemon reports it:
	 * forward_now() below keeps the grid, so two reports differ by whole
	 * periods however late this callback runs.
	 */
	u32 at_ms = (u32)ktime_to_ms(hrtimer_get_expires(t));

	if (kevent_fire(k, 0, at_ms, 0))
		return HRTIMER_NORESTART;
	hrtimer_forward_now(t, k->timer.period);
	return HRTIMER_RESTART;
}

static int kevent_timer_attach(struct kevent *k)
{
	u32 ms = k->uk.id.raw[0];

	if (!ms || !(k->uk.event & KEVENT_TIMER_FIRED))
		return -EINVAL;
	k->timer.period = ms_to_ktime(ms);
	hrtimer_init(&k->timer.hrt, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	k->timer.hrt.function = kevent_timer_expired;
	hrtimer_start(&k->timer.hrt, k->timer.period, HRTIMER_MODE_REL);
	return 0;
}

static int kevent_timer_modify(struct kevent *k)
{
	if (!(k->uk.event & KEVENT_TIMER_FIRED)) {
		/* Refused (A9): the timer stops until a valid MODIFY. */
		hrtimer_cancel(&k->timer.hrt);
		return -EINVAL;
	}
	/*
	 * A running timer keeps its phase.  One that stopped (ONESHOT fired,
	 * or refused before) starts a fresh period, as a new ADD would.
	 */
	if (!hrtimer_active(&k->timer.hrt))
		hrtimer_start(&k->timer.hrt, k->timer.period, HRTIMER_MODE_REL);
	return 0;
}

static void kevent_timer_detach(struct kevent *k)
{
	hrtimer_cancel(&k->timer.hrt);
}

static const struct kevent_origin kevent_timer_origin = {
	.name = "timer",
	.attach = kevent_timer_attach,
	.modify = kevent_timer_modify,
	.detach = kevent_timer_detach,
};

/* ---- POSIX timer (revision 3: D58, D59, D61) ------------------------ */

/*
 * The expiry's grid index and hrtimer_forward's overrun count (how many
 * grid points up to now the timer passed) go to the queue, which counts
 * each point once (a dequeue may have counted some already: D58 counts up
 * to the dequeue's own reading of the clock).  The hrtimer stays on the
 * grid however late this runs.
 */
static enum hrtimer_restart kevent_ptimer_expired(struct hrtimer *t)
{
	struct kevent *k = container_of(t, struct kevent, ptimer.hrt);
	u64 first_idx = kevent_ptimer_index(k, hrtimer_get_expires(t)) - 1;
	u64 n = 1;

	if (k->ptimer.interval)
		n = hrtimer_forward(t, hrtimer_cb_get_time(t), ns_to_ktime(k->ptimer.interval));
	if (kevent_ptimer_fire(k, first_idx, n) || !k->ptimer.interval)
		return HRTIMER_NORESTART;
	return HRTIMER_RESTART;
}

/* D48's timespec rules. */
static bool kevent_ts_valid(const struct kevent_timespec *ts)
{
	return !ts->__pad && ts->tv_sec >= 0 && ts->tv_nsec < NSEC_PER_SEC;
}

static int kevent_ptimer_check(const struct kevent_timer_spec *ts)
{
	u64 iv;

	if (ts->clock != KEVENT_CLOCK_REALTIME && ts->clock != KEVENT_CLOCK_MONOTONIC &&
	    ts->clock != KEVENT_CLOCK_BOOTTIME)
		return -EINVAL;
	if ((ts->flags & ~KEVENT_TIMER_ABSTIME) || !kevent_ts_valid(&ts->value) ||
	    !kevent_ts_valid(&ts->interval))
		return -EINVAL;
	iv = ktime_set(ts->interval.tv_sec, ts->interval.tv_nsec);
	if (iv && iv < KEVENT_TIMER_MIN_INTERVAL_NS)
		return -EINVAL;	/* D59: no budget against a finer timer */
	return 0;
}

/*
 * Arms k with a checked setting; its hrtimer is idle (new, or cancelled
 * by the caller, who also dropped what was pending: D61).  The clock ids
 * are Linux's own (D59).  hrtimer_init maps a relative CLOCK_REALTIME
 * timer to CLOCK_MONOTONIC, so only an ABSTIME realtime grid moves when
 * the clock is set (D58); the grid's origin is read from that same base.
 */
static int kevent_ptimer_arm(struct kevent *k, const struct kevent_timer_spec *ts)
{
	bool abs = ts->flags & KEVENT_TIMER_ABSTIME;
	ktime_t value = ktime_set(ts->value.tv_sec, ts->value.tv_nsec);

	k->ptimer.spec = *ts;
	hrtimer_init(&k->ptimer.hrt, ts->clock, abs ? HRTIMER_MODE_ABS : HRTIMER_MODE_REL);
	k->ptimer.hrt.function = kevent_ptimer_expired;
	k->ptimer.interval = ktime_set(ts->interval.tv_sec, ts->interval.tv_nsec);
	k->ptimer.armed = value != 0;	/* D59: {0, 0} is disarmed */
	if (!k->ptimer.armed)
		return 0;
	k->ptimer.first = abs ? value : ktime_add_safe(hrtimer_cb_get_time(&k->ptimer.hrt), value);
	hrtimer_start(&k->ptimer.hrt, k->ptimer.first, HRTIMER_MODE_ABS);
	return 0;
}

/* ADD: the setting was copied into k->ptimer.spec and checked. */
static int kevent_ptimer_attach(struct kevent *k)
{
	if (!(k->uk.event & KEVENT_TIMER_FIRED))
		return -EINVAL;
	return kevent_ptimer_arm(k, &k->ptimer.spec);
}

/* A 40-byte MODIFY: event (checked by the queue) and req_flags only. */
static int kevent_ptimer_modify(struct kevent *k)
{
	return 0;
}

static void kevent_ptimer_detach(struct kevent *k)
{
	hrtimer_cancel(&k->ptimer.hrt);
}

/* D58: the grid points passed up to now, each counted once, then cleared. */
static void kevent_ptimer_deliver(struct kevent *k, struct ukevent *out)
{
	u64 n = kevent_ptimer_index(k, hrtimer_cb_get_time(&k->ptimer.hrt));

	if (n > k->ptimer.seen) {
		k->ptimer.pending += n - k->ptimer.seen;
		k->ptimer.seen = n;
	}
	out->ret_data[0] = (u32)min_t(u64, k->ptimer.pending, U32_MAX);
	out->ret_data[1] = 0;
	k->ptimer.pending = 0;
}

static void kevent_ptimer_undeliver(struct kevent *k, const struct ukevent *out)
{
	k->ptimer.pending += out->ret_data[0];
}

static int kevent_ptimer_ext_check(const struct ukevent_ext *x)
{
	return kevent_ptimer_check(&x->ext.timer);
}

/* ADD: kevent_ptimer_attach() arms what is stored here. */
static void kevent_ptimer_store(struct kevent *k, const struct ukevent_ext *x)
{
	k->ptimer.spec = x->ext.timer;
}

/* D61: the hrtimer is idle; what it counted and did not deliver goes. */
static void kevent_ptimer_reset(struct kevent *k)
{
	k->ptimer.seen = 0;
	k->ptimer.pending = 0;
	k->ptimer.armed = false;
}

static void kevent_ptimer_rearm(struct kevent *k, const struct ukevent_ext *x)
{
	kevent_ptimer_arm(k, &x->ext.timer);
}

/* A kevent_timespec from a non-negative ktime. */
static struct kevent_timespec kevent_ts_of(ktime_t t)
{
	struct timespec64 ts = ktime_to_timespec64(t);

	return (struct kevent_timespec){ .tv_sec = ts.tv_sec, .tv_nsec = ts.tv_nsec };
}

/*
 * D61: the clock, the time left to the next grid point after the clock's
 * reading now ({0, 0} when disarmed or its one expiry passed, else at
 * least 1 ns), the interval; returns the grid points passed and not
 * delivered.
 */
static u32 kevent_ptimer_query(struct kevent *k, struct ukevent_ext *x)
{
	struct kevent_timer_spec out = { 0 };
	ktime_t now, left = 0;
	u64 n, count;

	now = hrtimer_cb_get_time(&k->ptimer.hrt);
	n = kevent_ptimer_index(k, now);
	count = k->ptimer.pending + (n > k->ptimer.seen ? n - k->ptimer.seen : 0);
	if (k->ptimer.armed && !n)
		left = ktime_sub(k->ptimer.first, now);
	else if (k->ptimer.armed && k->ptimer.interval)
		left = ktime_sub(ktime_add_ns(k->ptimer.first, n * k->ptimer.interval), now);
	out.clock = k->ptimer.spec.clock;
	out.value = kevent_ts_of(left);
	out.interval = k->ptimer.spec.interval;
	x->ext.timer = out;
	return (u32)min_t(u64, count, U32_MAX);
}

/* D58, D61: a POSIX timer needs FIRED; checked before it is replaced. */
static int kevent_ptimer_modify_check(const struct kevent *k, const struct ukevent *uk)
{
	return (uk->event & KEVENT_TIMER_FIRED) ? 0 : -EINVAL;
}

static const struct kevent_setting_ops kevent_ptimer_setting = {
	.check = kevent_ptimer_ext_check,
	.store = kevent_ptimer_store,
	.reset = kevent_ptimer_reset,
	.arm = kevent_ptimer_rearm,
	.query = kevent_ptimer_query,
};

static const struct kevent_origin kevent_ptimer_origin = {
	.name = "posix_timer",
	.rule = KR_POSIX_TIMER,
	.feature = KEVENT_FEAT_POSIX_TIMER,
	.setting = &kevent_ptimer_setting,
	.modify_check = kevent_ptimer_modify_check,
	.attach = kevent_ptimer_attach,
	.modify = kevent_ptimer_modify,
	.detach = kevent_ptimer_detach,
	.deliver = kevent_ptimer_deliver,
	.undeliver = kevent_ptimer_undeliver,
};

/* ---- user events (revision 3: D62) ------------------------------------ */

/* No source: only KEVENT_CTL_READY makes one ready (the queue merges). */
static int kevent_user_attach(struct kevent *k)
{
	return 0;
}

static int kevent_user_modify(struct kevent *k)
{
	return 0;
}

static void kevent_user_detach(struct kevent *k)
{
}

/* D62: delivery clears the merged value and count (kqueue's EV_CLEAR). */
static void kevent_user_deliver(struct kevent *k, struct ukevent *out)
{
	k->uk.ret_data[0] = 0;
	k->uk.ret_data[1] = 0;
}

/* Triggers that came while the result was away merge with it again. */
static void kevent_user_undeliver(struct kevent *k, const struct ukevent *out)
{
	u64 n = (u64)k->uk.ret_data[1] + out->ret_data[1];

	k->uk.ret_data[0] |= out->ret_data[0];
	k->uk.ret_data[1] = (u32)min_t(u64, n, U32_MAX);
}

static const struct kevent_origin kevent_user_origin = {
	.name = "user",
	.rule = KR_USER,
	.feature = KEVENT_FEAT_USER,
	.ready_merges = true,
	.attach = kevent_user_attach,
	.modify = kevent_user_modify,
	.detach = kevent_user_detach,
	.deliver = kevent_user_deliver,
	.undeliver = kevent_user_undeliver,
};

/* ---- poll and socket (A6, A8, D13, D14, B3) ------------------------ */

/*
 * B3: only files whose ->poll() cannot wait on a server the client
 * controls.  Decided from the file's identity, never by calling into it.
 */
bool kevent_file_refused(struct file *f)
{
	struct inode *inode = file_inode(f);
	const struct file_operations *fop = f->f_op;
	const char *name;

	if (fop == &kevent_fops)
		return true;
	if (inode->i_sb && inode->i_sb->s_magic == FUSE_SUPER_MAGIC)
		return true;
	/*
	 * CUSE devices (and /dev/cuse) get their fops from cuse.ko.  /dev/fuse
	 * itself is the server end: its poll never waits, the daemon takes it
	 * too, and FUSE-backed files are caught by their superblock above.
	 */
	if (fop && fop->owner && !strcmp(module_name(fop->owner), "cuse"))
		return true;
	/*
	 * epoll's and signalfd's fops are not exported; their anon inode files
	 * are named so (as the daemon sees them: anon_inode:[...]).  signalfd
	 * (abi.md D39): its ->poll() reports the signals of current, which is
	 * our kworker at every re-check.
	 */
	if (!inode->i_sb || inode->i_sb->s_magic != ANON_INODE_FS_MAGIC)
		return false;
	name = f->f_path.dentry->d_name.name;
	return !strcmp(name, "[eventpoll]") || !strcmp(name, "[signalfd]");
}

/* D30: the KEVENT_POLL_* values are the ABI; this module passes x86's. */
static_assert(KEVENT_POLL_POLLIN == (__force u32)EPOLLIN &&
	      KEVENT_POLL_POLLOUT == (__force u32)EPOLLOUT &&
	      KEVENT_POLL_POLLHUP == (__force u32)EPOLLHUP &&
	      KEVENT_POLL_POLLRDHUP == (__force u32)EPOLLRDHUP);

/*
 * The event bits k can report: abi.md D52, POLLRDHUP (take28) is reported
 * only under its rule (revision 2), never on revision 1.
 */
static u32 kevent_poll_event(const struct kevent *k)
{
	u32 ev = k->uk.event;

	return (k->rules & KR_POLLRDHUP) ? ev : ev & ~KEVENT_POLL_POLLRDHUP;
}

/* Kernel poll bits that make k interesting, from its event mask. */
static __poll_t kevent_poll_want(const struct kevent *k)
{
	u32 ev = kevent_poll_event(k);
	__poll_t want = 0;

	if (!k->poll.socket)
		return (__force __poll_t)ev;
	if (ev & (KEVENT_SOCKET_RECV | KEVENT_SOCKET_ACCEPT))
		want |= EPOLLIN | EPOLLRDNORM | EPOLLRDHUP | EPOLLHUP;
	if (ev & KEVENT_SOCKET_SEND)
		want |= EPOLLOUT | EPOLLWRNORM;
	if (ev & KEVENT_POLL_POLLRDHUP)
		want |= EPOLLRDHUP;
	return want | EPOLLERR;
}

/*
 * Map a poll mask to what k reports: *data0 = the bits that fired within
 * uk.event; returns KEVENT_RET_BROKEN for a socket error (A8), else 0.
 */
static u32 kevent_poll_match(struct kevent *k, __poll_t mask, u32 *data0,
			     u32 *data1)
{
	u32 ev = READ_ONCE(k->poll.event);
	u32 bits = 0;

	*data1 = 0;
	if (!k->poll.socket) {
		*data0 = (__force u32)mask & ev;
		return 0;
	}
	if (mask & EPOLLERR) {
		*data0 = 0;
		return KEVENT_RET_BROKEN;
	}
	if (mask & (EPOLLIN | EPOLLRDNORM | EPOLLRDHUP | EPOLLHUP)) {
		struct socket *sock = sock_from_file(k->poll.file);

		if (sock && sock->sk &&
		    READ_ONCE(sock->sk->sk_state) == TCP_LISTEN) {
			bits |= KEVENT_SOCKET_ACCEPT;
			/* As the daemon: the accept queue length, TCP only. */
			if (sock->sk->sk_protocol == IPPROTO_TCP &&
			    (ev & KEVENT_SOCKET_ACCEPT))
				*data1 = READ_ONCE(sock->sk->sk_ack_backlog);
		} else {
			bits |= KEVENT_SOCKET_RECV;
		}
	}
	if (mask & (EPOLLOUT | EPOLLWRNORM))
		bits |= KEVENT_SOCKET_SEND;
	if (mask & EPOLLRDHUP)
		bits |= KEVENT_POLL_POLLRDHUP;	/* D52: in ev under KR_POLLRDHUP only */
	*data0 = bits & ev;
	return 0;
}

/*
 * k fires with what mask says, unless it stopped (ONESHOT fired, BROKEN,
 * detached, or its ADD not decided yet).  A kevent_fd_poll_then() step.
 */
static int kevent_poll_report(struct kevent *k, __poll_t mask)
{
	u32 data0, data1, broken;

	if (READ_ONCE(k->poll.stopped))
		return 0;
	broken = kevent_poll_match(k, mask, &data0, &data1);
	if (!broken && !data0)
		return 0;
	if (kevent_fire(k, broken, data0, broken ? (u32)-ECONNRESET : data1))
		WRITE_ONCE(k->poll.stopped, true);
	return 0;
}

/*
 * A keyed wakeup that answers for k by itself: its key (the source's poll
 * bits that just became true) gives every bit k asks for, or an error.
 * Then k fires here, in the waker, as epoll's callback queues its item:
 * no poll at all.  The wait queue's lock is held, so a detach
 * (remove_wait_queue) waits for this to end; kevent_fire takes only
 * ready_lock and the queue's poll_wq (the order of the LOCKING comment in
 * kevent_main.c).  A key that names only part of what k asks for, or no
 * key, needs a poll of the file: what that would add to data0 must not
 * be lost.  Returns true when k was handled.
 */
static bool kevent_poll_wake_keyed(struct kevent *k, __poll_t bits)
{
	u32 data0, data1, broken;

	broken = kevent_poll_match(k, bits, &data0, &data1);
	if (!broken && data0 != READ_ONCE(k->poll.event))
		return false;
	if (kevent_fire(k, broken, data0, broken ? (u32)-ECONNRESET : data1))
		WRITE_ONCE(k->poll.stopped, true);
	return true;
}

/* ---- polling in the waker ------------------------------------------ */

/* D14: a file without ->poll() is always readable and writable. */
#define KEVENT_POLL_CONST (EPOLLIN | EPOLLOUT | EPOLLRDNORM | EPOLLWRNORM)
#define KEVENT_POLL_WRITE (EPOLLOUT | EPOLLWRNORM | EPOLLWRBAND)

/*
 * A data wakeup's key seldom answers for a kevent by itself: a socket's
 * (sock_def_readable) carries EPOLLIN, EPOLLPRI, EPOLLRDNORM and
 * EPOLLRDBAND, a pipe's EPOLLIN and EPOLLRDNORM, never the hang-up, error
 * or POLLRDHUP bits the kqueue front asks of every EVFILT_READ.  A re-poll
 * in a kworker costs one or two context switches per event, so where the
 * file's ->poll() takes no lock and never sleeps (Linux 6.1) it runs right
 * in the waker, under the wait queue head's lock, and k fires with its
 * answer:
 *
 *  - tcp_poll() (inet_stream_ops and inet6_stream_ops; exported, so known
 *    by address): READ_ONCE loads of the socket's state, no socket lock by
 *    design; a listener's inet_csk_listen_poll() looks at the accept
 *    queue's head.  Its one side effect, the NOSPACE bits when the socket
 *    is not writable, is what any poll of it does.
 *  - unix_poll() (AF_UNIX SOCK_STREAM): READ_ONCE loads and lockless queue
 *    looks.
 *  - unix_dgram_poll() (AF_UNIX SOCK_DGRAM, SOCK_SEQPACKET): the same for
 *    the read side, but its write test takes unix_state_lock() and hooks
 *    the peer's peer_wait under that head's lock, which a waker may hold
 *    (unix_dgram_peer_wake_relay wakes this head from inside it); so only
 *    while k asks no write bit, and the poll is told so through the
 *    poll_table's key (poll_requested_events()), which skips that test.
 *  - the sk_is_readable() hooks they call (sockmap's) look at a list
 *    under rcu_read_lock() only.
 *  - pipe_poll(), of a pipe(2) end: a file of pipefs, which has no other
 *    files and gives them all pipefifo_fops (6.1 exports neither, so the
 *    superblock tells).  READ_ONCE loads of the ring's head and tail and
 *    plain ones of the reader and writer counts, no pipe mutex; a read
 *    end hooks rd_wait, a write end wr_wait.  A named FIFO's file lives on
 *    another filesystem and keeps the kworker.
 * The socket's own ->poll() is called, not sock_poll(): asked for every
 * bit, that one may busy-poll the device (sk_busy_loop).  A socket whose
 * ops change later (kTLS replaces inet_stream_ops) fails the test from
 * then on.  Every other file keeps the kworker.
 *
 * Why the result is a full poll's (A8) and a HUP racing a data wakeup is
 * never lost: every change of such a file's poll state is followed by a
 * wakeup of this head (the contract epoll relies on), and every
 * poll-and-fire of such a kevent, in a waker, the kworker, MODIFY, the
 * LEVEL re-check (D43) or the end of its ADD, runs under this head's lock
 * (kevent_fd_poll_then()).  So they run one at a time, each sees the
 * change behind every wakeup before it, and no older poll's answer can
 * replace a newer one on the ready list: a HUP's own wakeup (unkeyed)
 * polls after the data wakeup's fire, or that poll already saw the HUP.
 * The head lives as long as the socket or pipe, which k's file holds.
 */

/* A socket's poll is lockless (above) with these ops and what k asks. */
static bool kevent_sock_lockless(const struct kevent *k, const struct proto_ops *ops)
{
	if (ops->poll == tcp_poll)
		return true;
	if (ops->family != PF_UNIX)
		return false;
	/* unix_dgram_poll()'s write test locks. */
	return k->poll.sock->type == SOCK_STREAM ||
	       !(READ_ONCE(k->poll.want) & KEVENT_POLL_WRITE);
}

/* k's file is polled in the waker (above); *ops: a socket's, else NULL. */
static bool kevent_poll_lockless(const struct kevent *k, const struct proto_ops **ops)
{
	*ops = NULL;
	if (!k->poll.whead)
		return false;
	if (k->poll.pipe)
		return true;
	if (!k->poll.sock)
		return false;
	*ops = READ_ONCE(k->poll.sock->ops);
	return kevent_sock_lockless(k, *ops);
}

/*
 * The file's poll mask now, by the lockless poll kevent_poll_lockless()
 * found (ops: the socket's, NULL for a pipe); its head's lock held.
 */
static __poll_t kevent_lockless_poll(struct kevent *k, const struct proto_ops *ops)
{
	poll_table pt;

	init_poll_funcptr(&pt, NULL);	/* no entry: poll_wait() hooks nothing */
	pt._key = READ_ONCE(k->poll.want);
	if (!ops)
		return k->poll.file->f_op->poll(k->poll.file, &pt);
	return ops->poll(k->poll.file, k->poll.sock, &pt);
}

/* The file's poll mask now, with no wait entry (D14: no ->poll(), constant). */
static __poll_t kevent_fd_mask(struct kevent *k)
{
	if (file_can_poll(k->poll.file))
		return vfs_poll(k->poll.file, NULL);
	return k->poll.socket ? 0 : KEVENT_POLL_CONST;
}

/*
 * step(k, the file's poll mask now), in process context.  A file that is
 * polled in the waker is polled, and step runs, under its head's lock,
 * in the order its wakers keep (above); any other file is polled
 * unlocked, as its kworker does.  Returns step's value.
 */
static int kevent_fd_poll_then(struct kevent *k,
			       int (*step)(struct kevent *k, __poll_t mask))
{
	const struct proto_ops *ops;
	unsigned long flags;
	int ret;

	if (!kevent_poll_lockless(k, &ops))
		return step(k, kevent_fd_mask(k));
	spin_lock_irqsave(&k->poll.whead->lock, flags);
	ret = step(k, kevent_lockless_poll(k, ops));
	spin_unlock_irqrestore(&k->poll.whead->lock, flags);
	return ret;
}

static int kevent_poll_wake(wait_queue_entry_t *wait, unsigned int mode,
			    int sync, void *key)
{
	struct kevent_pwq *pwq = container_of(wait, struct kevent_pwq, wait);
	struct kevent *k = pwq->k;
	__poll_t bits = key_to_poll(key);
	const struct proto_ops *ops;

	if (bits & POLLFREE) {
		WRITE_ONCE(k->poll.freed, true);
		queue_work(kevent_wq, &k->poll.work);
		list_del_init(&wait->entry);
		/* Last touch of pwq: detach may free it right after this. */
		smp_store_release(&pwq->whead, NULL);
		return 0;
	}
	/* Nothing to report; an ADD still deciding polls after this. */
	if (READ_ONCE(k->poll.stopped))
		return 0;
	/* A keyed wakeup for bits nobody asked for is no activity for k. */
	if (bits && !(bits & READ_ONCE(k->poll.want)))
		return 0;
	if (kevent_poll_lockless(k, &ops)) {
		/* This head's lock is held: the poll and the fire in its order. */
		kevent_poll_report(k, kevent_lockless_poll(k, ops));
		return 0;
	}
	/*
	 * A socket's key is no state: sock_def_readable() names POLLIN,
	 * POLLPRI, POLLRDNORM and POLLRDBAND whatever came, so only a poll
	 * tells which hold (A8).
	 */
	if (bits && !k->poll.sock && kevent_poll_wake_keyed(k, bits))
		return 0;
	queue_work(kevent_wq, &k->poll.work);
	return 0;
}

static void kevent_poll_work(struct work_struct *work)
{
	struct kevent *k = container_of(work, struct kevent, poll.work);

	if (READ_ONCE(k->poll.stopped))
		return;
	if (READ_ONCE(k->poll.freed)) {
		/* The source's wait queue is gone: it can never report again. */
		pr_debug("POLLFREE on %pD: kevent BROKEN\n", k->poll.file);
		WRITE_ONCE(k->poll.stopped, true);
		kevent_fire(k, KEVENT_RET_BROKEN, 0, (u32)-EPIPE);
		return;
	}
	kevent_fd_poll_then(k, kevent_poll_report);
}

static void kevent_ptable_proc(struct file *f, wait_queue_head_t *whead,
			       poll_table *pt)
{
	struct kevent_ptable *kpt = container_of(pt, struct kevent_ptable, pt);
	struct kevent *k = kpt->k;
	struct kevent_pwq *pwq;

	pwq = kmem_cache_alloc(kevent_pwq_cache, GFP_KERNEL);
	if (!pwq) {
		kpt->err = -ENOMEM;
		return;
	}
	atomic_inc(&kevent_stats.pwqs);
	init_waitqueue_func_entry(&pwq->wait, kevent_poll_wake);
	pwq->whead = whead;
	pwq->k = k;
	/* A second head: no single lock orders k's polls (kevent_poll_lockless). */
	k->poll.whead = list_empty(&k->poll.pwqs) ? whead : NULL;
	list_add_tail(&pwq->link, &k->poll.pwqs);
	add_wait_queue(whead, &pwq->wait);
}

static void kevent_poll_unhook(struct kevent *k)
{
	struct kevent_pwq *pwq, *tmp;
	wait_queue_head_t *whead;

	list_for_each_entry_safe(pwq, tmp, &k->poll.pwqs, link) {
		rcu_read_lock();
		whead = smp_load_acquire(&pwq->whead);
		if (whead)
			remove_wait_queue(whead, &pwq->wait);
		rcu_read_unlock();
		list_del(&pwq->link);
		kmem_cache_free(kevent_pwq_cache, pwq);
		atomic_dec(&kevent_stats.pwqs);
	}
	/* No entry is hooked any more, so nothing can queue the work again. */
	cancel_work_sync(&k->poll.work);
}

static void kevent_poll_put_file(struct kevent *k)
{
	kevent_poll_unhook(k);
	fput(k->poll.file);
	k->poll.file = NULL;
}

/* A pipe(2) end (pipefs has no other files): pipe_poll() is lockless. */
static bool kevent_file_is_pipe(struct file *f)
{
	struct inode *inode = file_inode(f);

	return inode->i_sb->s_magic == PIPEFS_MAGIC && S_ISFIFO(inode->i_mode);
}

/*
 * The ADD keeps k: wakeups may fire it from now on.  Those that came while
 * it was deciding were dropped (stopped), so the file is polled again
 * once the gate is open and k fires with what holds then (D42: ready now
 * with ALWAYS_QUEUE fires here).  The full barrier orders the store of
 * stopped before the poll's loads, against a waker's store of the state
 * before its look at stopped (a wakeup takes the head's lock, a full
 * barrier on x86; sockets pass skwq_has_sleeper()'s smp_mb() first):
 * either the waker sees the gate open or this poll sees its change.  A
 * POLLFREE while deciding left its work to the kworker, which returned.
 */
static void kevent_fd_open(struct kevent *k)
{
	WRITE_ONCE(k->poll.stopped, false);
	smp_mb();
	if (READ_ONCE(k->poll.freed))
		queue_work(kevent_wq, &k->poll.work);
	else
		kevent_fd_poll_then(k, kevent_poll_report);
}

/*
 * ---- D67: the count a delivered record carries (revision 4) ----
 *
 * Read from the file itself with in-kernel helpers per kind (pipe, FIFO,
 * TCP, AF_UNIX), never by calling its ->unlocked_ioctl(FIONREAD) with the
 * destination's user address: another driver's FIONREAD may mean something
 * else or sleep on a server the client runs (B3), a listener and the free
 * space need a second value anyway, and the record would have to be
 * written to user memory before its count.  Nothing here sleeps: the
 * pipe's ring is summed under its wait queue's spinlock (what
 * pipe_resize_ring() swaps the buffers under), TCP is read without the
 * socket lock (the values FIONREAD and SIOCOUTQ compute, taken a moment
 * apart); docs/abi.md section 9 says what that costs.
 */
static u32 kevent_count_clamp(s64 v)
{
	return v < 0 ? 0 : v > U32_MAX ? U32_MAX : (u32)v;
}

/* A pipe's or FIFO's ring, NULL for any other file (f is held: so is the pipe). */
static struct pipe_inode_info *kevent_pipe_of(struct file *f)
{
	struct inode *inode = file_inode(f);

	return S_ISFIFO(inode->i_mode) ? READ_ONCE(inode->i_pipe) : NULL;
}

/* The bytes in a pipe, as FIONREAD sums them. */
static s64 kevent_pipe_bytes(struct pipe_inode_info *pipe)
{
	unsigned int head, tail, mask, used;
	s64 n = 0;

	spin_lock_irq(&pipe->rd_wait.lock);
	head = READ_ONCE(pipe->head);
	tail = READ_ONCE(pipe->tail);
	mask = pipe->ring_size - 1;
	/* splice moves tail under the pipe's mutex only: never past the ring */
	used = min(head - tail, pipe->ring_size);
	for (; used; used--, tail++)
		n += READ_ONCE(pipe->bufs[tail & mask].len);
	spin_unlock_irq(&pipe->rd_wait.lock);
	return n;
}

static bool kevent_sk_tcp(const struct sock *sk)
{
	return (sk->sk_family == AF_INET || sk->sk_family == AF_INET6) &&
	       sk->sk_type == SOCK_STREAM && sk->sk_protocol == IPPROTO_TCP;
}

/* FIONREAD of a socket: TCP's tcp_inq, AF_UNIX's unix_inq_len, else 0. */
static s64 kevent_sk_readable(struct sock *sk)
{
	if (sk->sk_family == AF_UNIX)
		return unix_inq_len(sk);
	return kevent_sk_tcp(sk) ? tcp_inq(sk) : 0;
}

/* SO_SNDBUF less SIOCOUTQ: TCP's unacknowledged bytes, else the write memory. */
static s64 kevent_sk_free(struct sock *sk)
{
	s64 queued;

	if (sk->sk_family == AF_UNIX) {
		queued = unix_outq_len(sk);
	} else if (kevent_sk_tcp(sk)) {
		const struct tcp_sock *tp = tcp_sk(sk);

		queued = (1 << READ_ONCE(sk->sk_state)) & (TCPF_SYN_SENT | TCPF_SYN_RECV) ? 0 :
			 (u32)(READ_ONCE(tp->write_seq) - READ_ONCE(tp->snd_una));
	} else {
		queued = sk_wmem_alloc_get(sk);
	}
	return (s64)READ_ONCE(sk->sk_sndbuf) - queued;
}

/* Bytes readable, or for a listener the connections waiting in its queue. */
static s64 kevent_count_in(struct file *f)
{
	/* A socket first: that test reads only the file, not its inode. */
	struct socket *sock = sock_from_file(f);
	struct pipe_inode_info *pipe = sock ? NULL : kevent_pipe_of(f);

	if (pipe)
		return kevent_pipe_bytes(pipe);
	if (!sock || !sock->sk)
		return 0;
	if (READ_ONCE(sock->sk->sk_state) != TCP_LISTEN)
		return kevent_sk_readable(sock->sk);
	/* AF_UNIX queues connections as skbs, not in sk_ack_backlog (unix_diag's RQLEN) */
	if (sock->sk->sk_family == AF_UNIX)
		return skb_queue_len_lockless(&sock->sk->sk_receive_queue);
	return READ_ONCE(sock->sk->sk_ack_backlog);
}

/* The free space to write: F_GETPIPE_SZ less the bytes, or the socket's. */
static s64 kevent_count_out(struct file *f)
{
	struct socket *sock = sock_from_file(f);
	struct pipe_inode_info *pipe = sock ? NULL : kevent_pipe_of(f);

	if (pipe)
		return (s64)READ_ONCE(pipe->max_usage) * PAGE_SIZE - kevent_pipe_bytes(pipe);
	if (!sock || !sock->sk || READ_ONCE(sock->sk->sk_state) == TCP_LISTEN)
		return 0;
	return kevent_sk_free(sock->sk);
}

/* D67: the count for out's bits; 0 for no such bit or a file with no count. */
static u32 kevent_fd_count(struct file *f, const struct ukevent *out)
{
	bool poll = out->type == KEVENT_POLL;
	u32 in = poll ? KEVENT_POLL_POLLIN | KEVENT_POLL_POLLRDNORM
		      : KEVENT_SOCKET_RECV | KEVENT_SOCKET_ACCEPT;
	u32 wr = poll ? KEVENT_POLL_POLLOUT | KEVENT_POLL_POLLWRNORM : KEVENT_SOCKET_SEND;

	if (out->ret_data[0] & in)
		return kevent_count_clamp(kevent_count_in(f));
	if (out->ret_data[0] & wr)
		return kevent_count_clamp(kevent_count_out(f));
	return 0;
}

/* D67: the file a delivered record counts on, held (ready_lock held, any context). */
static struct file *kevent_fd_data_hold(struct kevent *k)
{
	return get_file(k->poll.file);
}

/* D69: k is the kevent of f (the file a delivered record was checked on). */
static bool kevent_fd_holds(const struct kevent *k, const struct file *f)
{
	return k->poll.file == f;
}

/* D14: a file without ->poll() is always readable and writable. */
#define KEVENT_POLL_CONST (EPOLLIN | EPOLLOUT | EPOLLRDNORM | EPOLLWRNORM)

static int kevent_fd_attach(struct kevent *k, bool socket)
{
	struct kevent_ptable kpt;
	struct file *f;
	__poll_t mask;
	u32 data0, data1, broken;

	f = fget(k->uk.id.raw[0]);
	if (!f)
		return -EBADF;
	if (kevent_file_refused(f)) {
		pr_debug("fd %u refused (B3): %pD\n", k->uk.id.raw[0], f);
		fput(f);
		return -EINVAL;
	}
	if (socket && !sock_from_file(f)) {
		fput(f);
		return -ENOTSOCK;
	}
	k->poll.file = f;
	k->poll.sock = sock_from_file(f);
	k->poll.pipe = kevent_file_is_pipe(f);
	k->poll.whead = NULL;
	k->poll.socket = socket;
	k->poll.stopped = false;
	k->poll.freed = false;
	k->poll.event = kevent_poll_event(k);
	k->poll.want = kevent_poll_want(k);
	INIT_LIST_HEAD(&k->poll.pwqs);
	INIT_WORK(&k->poll.work, kevent_poll_work);

	if (!file_can_poll(f)) {
		if (!S_ISREG(file_inode(f)->i_mode)) {
			/* No poll method and not a regular file (epoll: EPERM). */
			fput(f);
			return -EINVAL;
		}
		/* A regular file: constant readiness, answer now or never (D14). */
		data0 = (__force u32)KEVENT_POLL_CONST & k->uk.event;
		if (!data0)
			return 0;	/* registered; fires never */
		if (kevent_always_queue(k)) {
			/* D42: kept (file held) and ready now. */
			if (kevent_fire(k, 0, data0, 0))
				k->poll.stopped = true;
			return 0;
		}
		k->uk.ret_data[0] = data0;
		fput(f);
		return 1;
	}

	/*
	 * Hooked, k could fire before this ADD decides, even onto the ready
	 * list of a kevent answered at ADD and freed: no wakeup fires it
	 * until kevent_fd_open().
	 */
	k->poll.stopped = true;
	kpt.k = k;
	kpt.err = 0;
	init_poll_funcptr(&kpt.pt, kevent_ptable_proc);
	mask = vfs_poll(f, &kpt.pt);
	if (kpt.err) {
		kevent_poll_put_file(k);
		return kpt.err;
	}
	broken = kevent_poll_match(k, mask, &data0, &data1);
	if (broken) {
		/* Already in error: answered at ADD, as take13 did. */
		kevent_poll_put_file(k);
		return -ECONNRESET;
	}
	if (data0 && !kevent_always_queue(k)) {
		/* Ready at ADD: answered now, not kept (take13). */
		k->uk.ret_data[0] = data0;
		k->uk.ret_data[1] = data1;
		if (k->rules & KR_DATA)	/* D67: the answer is a delivery */
			k->uk.ret_data[1] = kevent_fd_count(f, &k->uk);
		kevent_poll_put_file(k);
		return 1;
	}
	/* Kept; D42: still hooked, and fired if ready now. */
	kevent_fd_open(k);
	return 0;
}

static int kevent_poll_attach(struct kevent *k)
{
	return kevent_fd_attach(k, false);
}

static int kevent_socket_attach(struct kevent *k)
{
	return kevent_fd_attach(k, true);
}

/* MODIFY's step: a socket in error fails the entry, else k reports again. */
static int kevent_fd_modify_step(struct kevent *k, __poll_t mask)
{
	u32 data0, data1, broken;

	broken = kevent_poll_match(k, mask, &data0, &data1);
	if (broken)
		return -ECONNRESET;
	WRITE_ONCE(k->poll.stopped, false);
	if (data0 && kevent_fire(k, 0, data0, data1))
		WRITE_ONCE(k->poll.stopped, true);
	return 0;
}

static int kevent_fd_modify(struct kevent *k)
{
	WRITE_ONCE(k->poll.event, kevent_poll_event(k));
	WRITE_ONCE(k->poll.want, kevent_poll_want(k));
	if (READ_ONCE(k->poll.freed))
		return -EPIPE;
	/* The new mask may match right now: re-evaluate at once (take13). */
	return kevent_fd_poll_then(k, kevent_fd_modify_step);
}

/*
 * D43: k was dequeued with KEVENT_REQ_LEVEL; a dequeue is starting.  If its
 * condition still holds it fires with a fresh result, as a wakeup would.
 */
/*
 * D43's re-check.  A file polled in the waker is looked at without its
 * head's lock first: most re-checks find the condition gone (the reader
 * read it), and dropping that answer loses nothing, since any change
 * after it has a wakeup of its own to come, which fires k.  Only a fire
 * needs the lock (an older answer must not replace a newer one, above).
 */
static void kevent_fd_level(struct kevent *k)
{
	const struct proto_ops *ops;
	u32 data0, data1;

	if (READ_ONCE(k->poll.stopped) || READ_ONCE(k->poll.freed))
		return;
	if (kevent_poll_lockless(k, &ops) &&
	    !kevent_poll_match(k, kevent_lockless_poll(k, ops), &data0, &data1) &&
	    !data0)
		return;
	kevent_fd_poll_then(k, kevent_poll_report);
}

static void kevent_fd_detach(struct kevent *k)
{
	WRITE_ONCE(k->poll.stopped, true);
	kevent_poll_put_file(k);
}

static const struct kevent_origin kevent_poll_origin = {
	.name = "poll",
	.attach = kevent_poll_attach,
	.modify = kevent_fd_modify,
	.detach = kevent_fd_detach,
	.level = kevent_fd_level,
	.data_hold = kevent_fd_data_hold,
	.data_count = kevent_fd_count,
	.holds = kevent_fd_holds,
};

static const struct kevent_origin kevent_socket_origin = {
	.name = "socket",
	.attach = kevent_socket_attach,
	.modify = kevent_fd_modify,
	.detach = kevent_fd_detach,
	.level = kevent_fd_level,
	.data_hold = kevent_fd_data_hold,
	.data_count = kevent_fd_count,
	.holds = kevent_fd_holds,
};

/* Each type this module serves; a hole (NAIO and AIO: A3) has none. */
static const struct kevent_origin *const kevent_types[KEVENT_MAX] = {
	[KEVENT_SOCKET] = &kevent_socket_origin,
	[KEVENT_INODE] = &kevent_inode_origin,
	[KEVENT_TIMER] = &kevent_timer_origin,
	[KEVENT_POLL] = &kevent_poll_origin,
	[KEVENT_POSIX_TIMER] = &kevent_ptimer_origin,
	[KEVENT_USER] = &kevent_user_origin,
};

const struct kevent_origin *kevent_origin_get(u32 type, u32 rules)
{
	const struct kevent_origin *o;

	if (type >= ARRAY_SIZE(kevent_types))
		return NULL;
	/* The caller picks the row: no speculative load past the table. */
	o = kevent_types[array_index_nospec(type, ARRAY_SIZE(kevent_types))];
	/* D64: a type of a later revision is unknown, as before it existed. */
	return o && !(o->rule & ~rules) ? o : NULL;
}

u32 kevent_origin_types(u32 rules, u32 *features)
{
	const struct kevent_origin *o;
	u32 type, types = 0;

	for (type = 0; type < ARRAY_SIZE(kevent_types); type++) {
		o = kevent_origin_get(type, rules);
		if (o) {
			types |= BIT(type);
			*features |= o->feature;
		}
	}
	return types;
}

int kevent_origins_init(void)
{
	int ret;

	kevent_pwq_cache = kmem_cache_create("kevent_pwq",
					     sizeof(struct kevent_pwq), 0,
					     SLAB_HWCACHE_ALIGN, NULL);
	if (!kevent_pwq_cache)
		return -ENOMEM;
	ret = kevent_inode_init();
	if (ret)
		kmem_cache_destroy(kevent_pwq_cache);
	return ret;
}

void kevent_origins_exit(void)
{
	kevent_inode_exit();
	kmem_cache_destroy(kevent_pwq_cache);
}
