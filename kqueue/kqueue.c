// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libkqueue-kevent: kqueue(2) and kevent(2) of FreeBSD over /dev/kevent.
 *
 * A kqueue is a /dev/kevent queue fd plus the library's table of knotes,
 * keyed by (ident, filter) as kqueue keys them.  kqueue() puts the queue on
 * the highest revision the device serves (KQUEUE_KEVENT_REVISION caps it).
 * The device is the wake-up source: every fd the library watches (the
 * client's pipes and sockets, its own timerfds, pidfds, inotify fd and wake
 * eventfd) is a poll kevent whose cookie is the knote's serial, and on a
 * revision-3 queue each EVFILT_USER knote is a KEVENT_USER kevent and each
 * EVFILT_TIMER one a KEVENT_POSIX_TIMER (but for periods under 100 us); on a
 * revision-4 queue each EVFILT_VNODE on a file the device takes is a
 * KEVENT_INODE kevent asking every note (D68, no inotify); on a
 * revision-2 queue a pipe's or socket's poll kevent is ALWAYS_QUEUE, LEVEL
 * for a level knote, POLLRDHUP for a socket's EVFILT_READ; on a revision-4
 * queue an EV_DISPATCH knote's device kevent is DISPATCH (D65), re-armed by
 * the library whenever it takes a report and delivers nothing.  What the
 * queue's revision cannot carry (level triggering below 2, and for EV_CLEAR,
 * NOTE_LOWAT; EV_DISPATCH below 4; ready-at-ADD registration below 2; data and the
 * socket error; user fflags and data; signals) is done here, at delivery:
 * kqueue-kevent(3) has the table.  Errors are negative
 * errno inside, set in errno once in kevent().
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>

#include "libkevent.h"
#include "internal.h"
#include "front.h"

/* How often an fd the device cannot watch edge-wise is looked at (see
 * "orphans" in kqueue-kevent(3)): 10 ms, only while such a knote exists. */
#define ORPHAN_POLL_NS 10000000ull

/* ---- lists ---- */

static void l_init(struct link *h)
{
	h->prev = h->next = h;
}

static bool l_on(const struct link *n)
{
	return n->next != NULL;
}

static bool l_empty(const struct link *h)
{
	return h->next == h;
}

static void l_add(struct link *h, struct link *n)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

static void l_del(struct link *n)
{
	if (!l_on(n))
		return;
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = NULL;
}

#define KN_OF(l, member) ((struct knote *)((char *)(l) - offsetof(struct knote, member)))

/* ---- small system helpers (never the interposed close) ---- */

int kqf_sys_close(int fd)
{
	return (int)syscall(SYS_close, fd);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- hashing ---- */

static unsigned int key_hash(uintptr_t ident, short filter)
{
	return (unsigned int)((ident * 2654435761u) ^ (unsigned int)(-filter)) % KQ_HASH;
}

struct knote *kqf_lookup(struct kq *kq, uintptr_t ident, short filter)
{
	struct knote *kn = kq->by_key[key_hash(ident, filter)];

	while (kn && !(kn->kev.ident == ident && kn->kev.filter == filter))
		kn = kn->hnext;
	return kn;
}

static struct knote *by_serial(struct kq *kq, uint64_t serial)
{
	struct knote *kn = kq->by_serial[serial % KQ_HASH];

	while (kn && kn->serial != serial)
		kn = kn->snext;
	return kn;
}

static void hash_insert(struct kq *kq, struct knote *kn)
{
	unsigned int h = key_hash(kn->kev.ident, kn->kev.filter);

	kn->hnext = kq->by_key[h];
	kq->by_key[h] = kn;
	kn->snext = kq->by_serial[kn->serial % KQ_HASH];
	kq->by_serial[kn->serial % KQ_HASH] = kn;
	kq->nknotes++;
}

static void hash_remove(struct kq *kq, struct knote *kn)
{
	struct knote **p = &kq->by_key[key_hash(kn->kev.ident, kn->kev.filter)];

	while (*p != kn)
		p = &(*p)->hnext;
	*p = kn->hnext;
	p = &kq->by_serial[kn->serial % KQ_HASH];
	while (*p != kn)
		p = &(*p)->snext;
	*p = kn->snext;
	kq->nknotes--;
}

/* ---- the device ---- */

static void orphan(struct kq *kq, struct knote *kn);

static void uk_fill(struct ukevent *uk, int fd, unsigned int events, uint64_t serial)
{
	memset(uk, 0, sizeof(*uk));
	uk->id.raw[0] = (__u32)fd;
	uk->type = KEVENT_POLL;
	uk->event = events;
	uk->user[0] = (__u32)serial;
	uk->user[1] = (__u32)(serial >> 32);
}

/*
 * The errno of an entry the device answered at CTL: a BROKEN entry carries
 * it in ret_data[1] (abi.md 2.4); any other answer where none was due is
 * -EIO.
 */
static int uk_refusal(const struct ukevent *uk)
{
	return (uk->ret_flags & KEVENT_RET_BROKEN) && (int)uk->ret_data[1] < 0 ?
		(int)uk->ret_data[1] : -EIO;
}

/*
 * ADD a poll kevent on fd.  1: registered; 0: ready at ADD, so not
 * registered (D31); negative: the entry's or the call's errno.
 */
static int dev_add_req(struct kq *kq, int fd, unsigned int events, uint64_t serial,
		       unsigned int req)
{
	struct ukevent uk;
	int r;

	uk_fill(&uk, fd, events, serial);
	uk.req_flags = req;
	r = kevent_ctl(kq->fd, KEVENT_CTL_ADD, 1, &uk);
	if (r < 0)
		return -errno;
	if (r == 0)
		return 1;
	if (uk.ret_flags & KEVENT_RET_BROKEN)
		return uk_refusal(&uk);
	return 0;
}

int kqf_dev_add(struct kq *kq, int fd, unsigned int events, uint64_t serial)
{
	return dev_add_req(kq, fd, events, serial, 0);
}

/*
 * The req_flags of a K_FD knote's poll kevent on a revision-2 queue (abi.md
 * D42, D43).  ALWAYS_QUEUE always: a source ready at EV_ADD is registered
 * and queued by the device, so the library neither answers it itself nor
 * keeps it an orphan until a later ADD can register it.  LEVEL for a level
 * knote the device can report again as kqueue would: not EV_CLEAR (the
 * device's LEVEL would report unread data again, EV_CLEAR must not),
 * not EV_DISPATCH below revision 4 nor a disabled knote (a LEVEL kevent the
 * library does not deliver would end every dequeue at once: a busy loop;
 * revision 4's DISPATCH disarms it instead, below), not NOTE_LOWAT
 * (the device knows no low-water mark: below it, the same busy loop).
 * Those stay level in the library: re-looked at by poll() after delivery.
 */
unsigned int kqf_fd_req(const struct kq *kq, const struct knote *kn)
{
	unsigned int req = KEVENT_REQ_ALWAYS_QUEUE;

	if (!kq->dev_level || kn->kind != K_FD)
		return 0;
	/*
	 * A dispatch kevent the device disarms at each delivery (D65): LEVEL
	 * for a level knote, disabled or not, since a disarmed kevent is not
	 * re-checked (no busy loop), and a MODIFY that turned LEVEL off at
	 * EV_DISABLE would re-arm it.
	 */
	if (kqf_dispatch_req(kq, kn))
		return req | KEVENT_REQ_DISPATCH |
		       (kn->kev.flags & EV_CLEAR ? 0 : KEVENT_REQ_LEVEL);
	if (!(kn->kev.flags & (EV_CLEAR | EV_DISPATCH)) && !kn->disabled &&
	    !(kn->sfflags & NOTE_LOWAT))
		req |= KEVENT_REQ_LEVEL;
	return req;
}

/* After a change of kn: its device kevent's LEVEL follows kqf_fd_req (MODIFY). */
void kqf_fd_sync(struct kq *kq, struct knote *kn)
{
	unsigned int want = kqf_fd_req(kq, kn);
	struct ukevent uk;

	if (!kn->dev_on || kn->kind != K_FD || want == kn->dev_req)
		return;
	uk_fill(&uk, kn->watch_fd, kn->watch_events, kn->serial);
	uk.req_flags = want;
	if (kevent_ctl(kq->fd, KEVENT_CTL_MODIFY, 1, &uk) == 0 &&
	    !(uk.ret_flags & KEVENT_RET_BROKEN)) {
		kn->dev_req = want;
		kn->dev_disarmed = false;	/* every MODIFY re-arms (D65) */
		return;
	}
	/*
	 * Refused, or the call failed: what the kevent asks is not known any
	 * more, and one left LEVEL under a disabled knote would be reported at
	 * every dequeue and dropped here, each wait ending at once.  It goes;
	 * the knote is the library's until a look finds it not ready, and
	 * kqf_arm() then registers it afresh, as a source ready at ADD.
	 */
	kqf_dev_remove(kq, kn);
	kn->dev_on = false;
	kn->dev_req = 0;
	kn->dev_disarmed = false;
}

/*
 * KEVENT_REQ_DISPATCH for kn's device kevent (abi.md D65): on a revision-4
 * queue, for an EV_DISPATCH knote, so the device disarms it at the dequeue
 * that delivers it and no other thread's dequeue gets it again.  Not with
 * EV_ONESHOT (freed at delivery), and not with NOTE_LOWAT: below the mark
 * the library delivers nothing and re-arms, and MODIFY's re-check finds
 * the source ready again at once (a busy loop); those stay in the library.
 */
unsigned int kqf_dispatch_req(const struct kq *kq, const struct knote *kn)
{
	if (kq->rev < 4 || !(kn->kev.flags & EV_DISPATCH) || (kn->kev.flags & EV_ONESHOT))
		return 0;
	if (kn->kind == K_FD && (kn->sfflags & NOTE_LOWAT))
		return 0;
	return KEVENT_REQ_DISPATCH;
}

/*
 * Revision 3: kn's EVFILT_USER as a KEVENT_USER kevent (abi.md D62), its
 * EVFILT_TIMER as a KEVENT_POSIX_TIMER (D58), the id and cookie the knote's
 * serial; the type is part of the key there (D63).
 */
static void uk_fill_kn(struct ukevent *uk, const struct knote *kn, unsigned int type)
{
	memset(uk, 0, sizeof(*uk));
	uk->id.raw_u64 = kn->serial;
	uk->type = type;
	uk->user[0] = (__u32)kn->serial;
	uk->user[1] = (__u32)(kn->serial >> 32);
}

static void uk_fill_user(struct ukevent *uk, const struct knote *kn)
{
	uk_fill_kn(uk, kn, KEVENT_USER);
}

/*
 * ADD (registers it), MODIFY (re-arms it, dropping what is pending: D61) or
 * QUERY (reads the time left and the interval into *ts) kn's POSIX timer.
 * 0 or a negative errno.
 */
int kqf_dev_timer(struct kq *kq, struct knote *kn, unsigned int cmd, struct kevent_timer_spec *ts)
{
	struct ukevent_ext e;
	int r;

	memset(&e, 0, sizeof(e));
	uk_fill_kn(&e.ev, kn, KEVENT_POSIX_TIMER);
	e.ev.event = KEVENT_TIMER_FIRED;
	if (cmd == KEVENT_CTL_ADD)
		kn->dev_req = kqf_dispatch_req(kq, kn);
	e.ev.req_flags = kn->dev_req;	/* MODIFY replaces them (D61) */
	if (cmd != KEVENT_CTL_QUERY)
		e.ext.timer = *ts;
	r = kevent_ctl_ext(kq->fd, cmd, 1, &e);
	if (r < 0)
		return -errno;
	if (cmd == KEVENT_CTL_ADD ? r > 0 : (e.ev.ret_flags & KEVENT_RET_BROKEN))
		return uk_refusal(&e.ev);
	if (cmd == KEVENT_CTL_QUERY)
		*ts = e.ext.timer;
	if (cmd == KEVENT_CTL_ADD) {
		kn->dev_on = true;
		kn->dev_timer = true;
	}
	if (cmd != KEVENT_CTL_QUERY)
		kn->dev_disarmed = false;	/* armed, or re-armed (D65) */
	return 0;
}

/*
 * ADD of a kevent that is never ready at ADD (a user event, an inode
 * kevent): an entry answered at once was refused.  0 or a negative errno.
 */
static int dev_add_waiting(struct kq *kq, struct ukevent *uk)
{
	int r = kevent_ctl(kq->fd, KEVENT_CTL_ADD, 1, uk);

	if (r < 0)
		return -errno;
	return r > 0 ? uk_refusal(uk) : 0;
}

/* Register kn's user kevent: 0 or a negative errno. */
int kqf_dev_user_add(struct kq *kq, struct knote *kn)
{
	struct ukevent uk;
	int r;

	uk_fill_user(&uk, kn);
	uk.req_flags = kqf_dispatch_req(kq, kn);
	r = dev_add_waiting(kq, &uk);
	if (r)
		return r;
	kn->dev_req = uk.req_flags;
	kn->dev_on = true;
	kn->dev_user = true;
	return 0;
}

/*
 * NOTE_TRIGGER: make kn's user kevent ready (D49).  The device then wakes
 * a blocked caller and reports the kqueue fd readable by itself; a trigger
 * of one that is ready already merges into it (D62).
 */
int kqf_dev_user_ready(struct kq *kq, struct knote *kn)
{
	struct ukevent uk;
	int r;

	uk_fill_user(&uk, kn);
	r = kevent_ctl(kq->fd, KEVENT_CTL_READY, 1, &uk);
	if (r < 0)
		return -errno;
	return r == 1 ? 0 : -EIO;
}

/*
 * Revision 4: kn's EVFILT_VNODE as a KEVENT_INODE kevent on its fd asking
 * every note (D68); the library keeps the knote's own fflags.  0 or a
 * negative errno (the device refuses what it cannot watch: B8).
 */
static void uk_fill_vnode(struct ukevent *uk, const struct knote *kn)
{
	uk_fill(uk, (int)kn->kev.ident, KEVENT_INODE_NOTES, kn->serial);
	uk->type = KEVENT_INODE;
}

int kqf_dev_vnode_add(struct kq *kq, struct knote *kn)
{
	struct ukevent uk;
	int r;

	uk_fill_vnode(&uk, kn);
	uk.req_flags = kqf_dispatch_req(kq, kn);
	r = dev_add_waiting(kq, &uk);
	if (r)
		return r;
	kn->dev_req = uk.req_flags;
	kn->dev_on = true;
	kn->dev_vnode = true;
	return 0;
}

/* kn's device kevent as an entry that matches it, with its req_flags. */
static void uk_fill_dev(struct ukevent *uk, const struct knote *kn)
{
	if (kn->dev_user) {
		uk_fill_user(uk, kn);
	} else if (kn->dev_vnode) {
		uk_fill_vnode(uk, kn);
	} else if (kn->dev_timer) {
		uk_fill_kn(uk, kn, KEVENT_POSIX_TIMER);
		uk->event = KEVENT_TIMER_FIRED;	/* a 40-byte MODIFY keeps the setting (D61) */
	} else {
		uk_fill(uk, kn->watch_fd, kn->watch_events, kn->serial);
	}
	uk->req_flags = kn->dev_req;
}

void kqf_dev_remove(struct kq *kq, const struct knote *kn)
{
	struct ukevent uk;

	uk_fill_dev(&uk, kn);
	(void)kevent_ctl(kq->fd, KEVENT_CTL_REMOVE, 1, &uk);
}

/*
 * Re-arm kn's dispatch kevent the device disarmed when it reported it
 * (D65): a MODIFY with the same req_flags, which keeps DISPATCH and puts a
 * result held meanwhile, or a POLL source ready now, on the ready list.
 * Called for an enabled knote whose report was taken and not delivered, and
 * at EV_ENABLE; a disabled one stays disarmed, which is what disabled is.
 * If the call fails the knote is an orphan, looked at after every wait,
 * and re-armed at its next look that delivers nothing.
 */
void kqf_dev_rearm(struct kq *kq, struct knote *kn)
{
	struct ukevent uk;

	if (!kn->dev_disarmed || !kn->dev_on)
		return;
	uk_fill_dev(&uk, kn);
	if (kevent_ctl(kq->fd, KEVENT_CTL_MODIFY, 1, &uk) < 0) {
		orphan(kq, kn);
		return;
	}
	/* Matched: re-armed even when its origin failed the entry (D65). */
	kn->dev_disarmed = false;
	l_del(&kn->orph);
}

/*
 * Candidates are waiting in the library: make the device's wake kevent
 * ready, so a blocked caller wakes and poll() on the kqueue fd reports it
 * readable, as a kqueue with pending events is.
 */
static void wake_waiters(struct kq *kq)
{
	uint64_t one = 1;

	if (write(kq->wake_fd, &one, sizeof(one)) < 0) {
		/* a full eventfd counter still wakes: nothing to do */
	}
}

/* ---- knote life ---- */

/* Requeue after a delivery: the device need not be woken for it. */
static void requeue(struct kq *kq, struct knote *kn)
{
	if (!l_on(&kn->cand))
		l_add(&kq->cands, &kn->cand);
}

void kqf_candidate(struct kq *kq, struct knote *kn)
{
	requeue(kq, kn);
	kq->need_wake = true;
}

static void orphan(struct kq *kq, struct knote *kn)
{
	if (!l_on(&kn->orph))
		l_add(&kq->orphans, &kn->orph);
}

/*
 * Register kn's watch fd with the device if it is not.  A source ready at
 * ADD is answered and not registered (D31): it becomes a candidate, and is
 * tried again once it is seen not ready.
 */
int kqf_arm(struct kq *kq, struct knote *kn)
{
	unsigned int req;
	int r;

	if (kn->watch_fd < 0 || kn->dev_on || kn->dev_broken)
		return 0;
	req = kqf_fd_req(kq, kn);
	r = dev_add_req(kq, kn->watch_fd, kn->watch_events, kn->serial, req);
	if (r == 1) {
		kn->dev_on = true;
		kn->dev_req = req;
		kn->dev_disarmed = false;
		if (kn->kind != K_TIMER)	/* timers stay: see orphan_wait_cap() */
			l_del(&kn->orph);
	} else if (r == 0) {
		return 1;
	}
	return r < 0 ? r : 0;
}

void kqf_knote_free(struct kq *kq, struct knote *kn)
{
	if (kn->dev_on)
		kqf_dev_remove(kq, kn);
	kn->dev_on = false;
	l_del(&kn->cand);
	l_del(&kn->orph);
	hash_remove(kq, kn);
	kqf_filter_detach(kq, kn);
	free(kn);
}

struct knote *kqf_knote_new(struct kq *kq, const struct kevent *kev)
{
	struct knote *kn = calloc(1, sizeof(*kn));

	if (!kn)
		return NULL;
	kn->kev = *kev;
	/* Returned flags keep EV_ADD as the Linux ports and macOS do (FreeBSD
	 * drops it; kqueue-kevent(3) NOTES); the other actions go. */
	kn->kev.flags &= (unsigned short)~(EV_DELETE | EV_ENABLE | EV_DISABLE | EV_SYSFLAGS);
	kn->kev.fflags = 0;
	kn->kev.data = 0;
	kn->sfflags = kev->fflags;
	kn->sdata = kev->data;
	kn->serial = kq->next_serial++;
	kn->watch_fd = -1;
	kn->wd = -1;
	return kn;
}

void kqf_knote_insert(struct kq *kq, struct knote *kn)
{
	hash_insert(kq, kn);
}

/* ---- the changelist ---- */

/*
 * A user or signal knote with nothing pending cannot be ready: making it a
 * candidate would wake the kqueue fd for nothing, and a kqueue watching
 * this one would report an event this one does not have.
 */
static bool worth_a_look(const struct knote *kn)
{
	if (kn->kind == K_USER)
		return kn->hook;
	if (kn->kind == K_SIGNAL)
		return kn->count > 0;
	return true;
}

static int apply_existing(struct kq *kq, struct knote *kn, const struct kevent *kev)
{
	int r = 0;

	if (kev->flags & EV_DELETE) {
		kqf_knote_free(kq, kn);
		return 0;
	}
	/* FreeBSD's kqueue_register: every change to a knote sets its udata. */
	if (!(kev->flags & EV_KEEPUDATA))
		kn->kev.udata = kev->udata;
	if (kev->flags & EV_ADD) {
		r = kqf_filter_modify(kq, kn, kev);
		if (r == 0 && kn->kind == K_TIMER && !kn->dev_timer)
			orphan(kq, kn);	/* a timerfd now: watched by its expiry time too */
	} else if (kn->kind == K_USER) {
		r = kqf_user_touch(kq, kn, kev);
	}
	if (r < 0)
		return r;
	if (kev->flags & EV_DISABLE) {
		/* A dispatch kevent is left armed: its next report disarms it. */
		kn->disabled = true;
	} else if (kev->flags & (EV_ENABLE | EV_ADD)) {
		if (kn->disabled)
			kqf_filter_enable(kq, kn);
		kn->disabled = false;
	}
	kqf_fd_sync(kq, kn);
	if (!kn->disabled)
		kqf_dev_rearm(kq, kn);
	/*
	 * kqueue re-evaluates an enabled knote at every change (level rule);
	 * a trigger the device was given (r 1) comes back from it.
	 */
	if (!kn->disabled && worth_a_look(kn) && r != 1)
		kqf_candidate(kq, kn);
	return 0;
}

static int apply_one(struct kq *kq, const struct kevent *kev)
{
	struct knote *kn;
	int r;

	if (kev->filter < -EVFILT_SYSCOUNT || kev->filter >= 0)
		return -EINVAL;
	r = kqf_filter_validate(kev);
	if (r < 0)
		return r;
	kn = kqf_lookup(kq, kev->ident, kev->filter);
	if (kn) {
		/* A reused fd number is a new file: the old knote is stale. */
		if (kqf_is_stale(kn)) {
			kqf_knote_free(kq, kn);
			kn = NULL;
		}
	}
	if (kn)
		return apply_existing(kq, kn, kev);
	if (!(kev->flags & EV_ADD))
		return -ENOENT;
	if (kev->flags & EV_DELETE)
		return -ENOENT;
	kn = kqf_knote_new(kq, kev);
	if (!kn)
		return -ENOMEM;
	r = kqf_filter_attach(kq, kn, kev);
	if (r < 0) {
		free(kn);
		return r;
	}
	kqf_knote_insert(kq, kn);
	if (kev->flags & EV_DISABLE)
		kn->disabled = true;
	r = kqf_arm(kq, kn);
	if (r < 0) {
		kqf_knote_free(kq, kn);
		return r;
	}
	if (kn->kind == K_TIMER && !kn->dev_timer)
		orphan(kq, kn);
	/*
	 * Ready at ADD, or a filter the library decides alone: look at once
	 * (a user event on the device: its trigger comes back from there).
	 */
	if ((r == 1 || (kn->watch_fd < 0 && !kn->dev_user)) && worth_a_look(kn))
		kqf_candidate(kq, kn);
	return 0;
}

/*
 * FreeBSD's rule: a change that fails, or one with EV_RECEIPT, is written
 * to the eventlist with EV_ERROR added to its flags (as macOS and the Linux
 * ports write it) and data the errno, and kevent() then returns at once;
 * with no room left it fails with that errno.
 */
static int apply_changes(struct kq *kq, const struct kevent *ch, int nch,
			 struct kevent *ev, int nev, int *nerr)
{
	for (int i = 0; i < nch; i++) {
		struct kevent c = ch[i];
		int r;

		c.flags &= (unsigned short)~EV_SYSFLAGS;
		r = apply_one(kq, &c);
		if (r == 0 && !(c.flags & EV_RECEIPT))
			continue;
		if (nev - *nerr <= 0) {
			if (r == 0)
				continue;	/* a receipt with no room: nothing to say */
			return r;
		}
		c.flags |= EV_ERROR;
		c.data = -r;
		ev[(*nerr)++] = c;
	}
	return 0;
}

/* ---- collection ---- */

/*
 * Its record went to the eventlist of this call already (take_device();
 * call: the call's own number, not kq->gen, which a call made meanwhile by
 * another thread moves on): a call reports a knote once, so a later report
 * in it (a read after a wait finds a LEVEL kevent it has just delivered,
 * unread, ready again: D43) is not an event of this call.  Another call's
 * delivery is no reason to drop it: each thread waiting in a kqueue gets
 * an unread level knote.
 */
static bool delivered_in_this_call(const struct knote *kn, uint64_t call)
{
	return kn->out_call == call;
}

/* After kn was delivered: ONESHOT, DISPATCH and CLEAR. */
static void delivered(struct kq *kq, struct knote *kn, const struct kevent *out)
{
	if (out->flags & EV_ONESHOT) {
		kqf_knote_free(kq, kn);
		return;
	}
	if (kn->kev.flags & EV_DISPATCH)
		kn->disabled = true;
	if (out->flags & EV_CLEAR) {
		kqf_filter_clear(kn, out);
		if (kn->kind == K_TIMER && !kn->dev_timer)
			orphan(kq, kn);	/* watched by its expiry time too */
		/*
		 * Not watched by the device: an orphan until the next call
		 * registers it (the caller has not read the data yet, so an ADD
		 * now would only answer "ready" again).
		 */
		if (kn->kind == K_FILE || kn->kind == K_KQUEUE ||
		    (kn->kind == K_FD && !kn->dev_on && !kn->dev_broken))
			orphan(kq, kn);
		return;
	}
	/*
	 * Level: looked at again next time, unless the device reported it in
	 * this call with LEVEL (D43): then the device checks it again at the
	 * next dequeue and reports it while it is still ready.
	 */
	if (!(kn->dev_req & KEVENT_REQ_LEVEL) || kn->dev_gen != kq->gen) {
		requeue(kq, kn);
		if (!kn->disabled)
			kq->level_left = true;	/* ready as delivered: see mark_level() */
	} else if (!kn->disabled) {
		kq->level_dev = kn->serial;
	}
}

/*
 * Check every candidate once; deliver the ready ones (at most max).  A
 * candidate that is not ready leaves the list and, if the device does not
 * watch it, is registered (or, when that answers "ready" again for an
 * EV_CLEAR knote or a regular file, becomes an orphan).
 */
static int collect(struct kq *kq, struct kevent *out, int max, uint64_t call)
{
	struct link todo;
	int n = 0;

	if (l_empty(&kq->cands))
		return 0;
	/* Detach the list: what is re-queued now is looked at next pass. */
	todo = kq->cands;
	todo.next->prev = &todo;
	todo.prev->next = &todo;
	l_init(&kq->cands);
	while (!l_empty(&todo)) {
		struct knote *kn = KN_OF(todo.next, cand);
		int r;

		if (n == max) {
			/* No room: the rest go first next time (no starvation). */
			struct link *first = todo.next, *last = todo.prev;

			first->prev = &kq->cands;
			last->next = kq->cands.next;
			kq->cands.next->prev = last;
			kq->cands.next = first;
			kq->need_wake = true;
			break;
		}
		l_del(&kn->cand);
		if (kn->disabled)
			continue;
		if (delivered_in_this_call(kn, call)) {
			requeue(kq, kn);	/* the next call looks at it */
			continue;
		}
		r = kqf_filter_check(kq, kn, &out[n]);
		if (r < 0) {
			kqf_knote_free(kq, kn);	/* stale fd: never a stale event */
			continue;
		}
		if (r == 0) {
			/* a dispatch report taken and not delivered: armed again */
			kqf_dev_rearm(kq, kn);
			if (kn->kind == K_FILE || kn->kind == K_KQUEUE) {
				orphan(kq, kn);
			} else if (kqf_arm(kq, kn) == 1) {
				if (kn->kev.flags & EV_CLEAR)
					orphan(kq, kn);
				else
					requeue(kq, kn);
			}
			continue;
		}
		l_del(&kn->orph);
		n++;
		delivered(kq, kn, &out[n - 1]);
	}
	return n;
}

static void drain_fd(int fd)
{
	char buf[4096];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

/* A device event of the library's own fds (serial below SERIAL_FIRST). */
static void take_own(struct kq *kq, uint64_t serial, const struct ukevent *uk)
{
	if (serial == SERIAL_WAKE) {
		/* a READY of it (mark_level) reports no bit (D49): nothing written */
		if (uk->ret_data[0] & KEVENT_POLL_POLLIN || !kq->dev_level)
			drain_fd(kq->wake_fd);
	} else if (serial == SERIAL_INOTIFY) {
		kqf_vnode_read(kq);
	}
}

/*
 * A device event of an inode or timer kevent, or a broken one: what it
 * tells the knote.  Returns false when it is no candidate (notes nobody
 * asked for).  Out of line: a fd's event, the common one, needs none of it.
 */
static SLOW_PATH bool take_record(struct kq *kq, struct knote *kn, const struct ukevent *uk)
{
	bool broken = uk->ret_flags & KEVENT_RET_BROKEN;

	if (kn->dev_vnode && !broken) {
		/* D68's notes since the last report: only asked ones wake it */
		unsigned int f = kqf_vnode_fflags(kn, uk->ret_data[0]);

		if (!f) {
			if (!kn->disabled)
				kqf_dev_rearm(kq, kn);
			return false;
		}
		kn->fflags |= f;
	}
	if (kn->dev_timer && !broken) {
		/* grid points since its last delivery (D58) */
		uint64_t c = kn->count + uk->ret_data[0];

		kn->count = c > (uint64_t)INTPTR_MAX ? (uint64_t)INTPTR_MAX : c;
	}
	if (broken) {
		/* Out of its origin for good (abi.md section 2.5): drop it. */
		kqf_dev_remove(kq, kn);
		kn->dev_on = false;
		kn->dev_broken = true;
	}
	return true;
}

/* The caller's eventlist, as far as the device's reads fill it (deliver_settled()). */
struct outlist {
	struct kevent *ev;
	int n, max;
	uint64_t call;	/* the call's number: kq->gen as its scan began */
};

/*
 * A record that settles its knote's event alone, so it goes to the
 * eventlist at once, with none of a candidate's checks: the record of a
 * socket's level-triggered, enabled EVFILT_READ with no NOTE_LOWAT, on a
 * revision-4 queue (the device checked the fd, D69, and counted its bytes,
 * D67), that says bytes are waiting and no error or hang-up (check_fd()
 * takes such a record as it is), the knote's first report of this call
 * and no candidate already.  Anything else is a candidate, checked by
 * collect().
 */
static bool record_settles(const struct kq *kq, const struct knote *kn, const struct ukevent *uk)
{
	const unsigned int bits = KEVENT_POLL_POLLIN | KEVENT_POLL_POLLERR |
				  KEVENT_POLL_POLLHUP | KEVENT_POLL_POLLRDHUP;

	return kq->dev_fdcheck && kq->dev_count && kn->kind == K_FD && kn->is_socket &&
	       kn->kev.filter == EVFILT_READ && (kn->dev_req & KEVENT_REQ_LEVEL) &&
	       !(kn->kev.flags & (EV_CLEAR | EV_ONESHOT | EV_DISPATCH)) &&
	       !(kn->sfflags & NOTE_LOWAT) && !kn->disabled && !kn->dev_broken &&
	       !(uk->ret_flags & KEVENT_RET_BROKEN) && uk->ret_data[1] > 0 &&
	       (uk->ret_data[0] & bits) == KEVENT_POLL_POLLIN &&
	       kn->dev_gen != kq->gen && !l_on(&kn->cand);
}

/*
 * The event of a record that settles it, as collect() would make it
 * (kqf_filter_check(), then delivered(): the device checks it again at
 * its next dequeue, D43, so it is not a candidate).
 */
static void deliver_settled(struct kq *kq, struct knote *kn, unsigned int count,
			    struct kevent *out)
{
	kn_event(kn, out);
	out->data = count > (unsigned int)INTPTR_MAX ? INTPTR_MAX : (intptr_t)count;
	l_del(&kn->orph);
	kq->level_dev = kn->serial;
}

/*
 * Device events to candidates, or to the eventlist where the record
 * settles the event (o: room left there); the library's own fds are
 * handled here.  Returns how many knotes became candidates or events that
 * were not already, but for level kevents the device reports again (they
 * are no new activity).
 */
static int take_device(struct kq *kq, const struct ukevent *uk, int n, struct outlist *o)
{
	int fresh = 0;

	for (int i = 0; i < n; i++) {
		uint64_t serial = uk[i].user[0] | ((uint64_t)uk[i].user[1] << 32);
		struct knote *kn;

		if (serial < SERIAL_FIRST) {
			take_own(kq, serial, &uk[i]);
			continue;
		}
		kn = by_serial(kq, serial);
		if (!kn)
			continue;	/* deleted meanwhile: its cookie is never reused */
		/* D65: disarmed by this delivery until a MODIFY */
		if (kn->dev_req & KEVENT_REQ_DISPATCH)
			kn->dev_disarmed = true;
		/* only inode and timer kevents (dev_vnode, dev_timer) are not K_FD */
		if ((kn->kind != K_FD || (uk[i].ret_flags & KEVENT_RET_BROKEN)) &&
		    !take_record(kq, kn, &uk[i]))
			continue;
		/*
		 * The device checks it again at the next call's dequeue, so the
		 * report is dropped; a broken one becomes a candidate, which
		 * collect() leaves for the next call.
		 */
		if (delivered_in_this_call(kn, o->call) && !(uk[i].ret_flags & KEVENT_RET_BROKEN))
			continue;
		/* A LEVEL kevent reported by the last call too: not new (D43). */
		if (!l_on(&kn->cand) &&
		    !((kn->dev_req & KEVENT_REQ_LEVEL) && kn->dev_gen + 1 == kq->gen))
			fresh++;
		if (o->n < o->max && record_settles(kq, kn, &uk[i])) {
			deliver_settled(kq, kn, uk[i].ret_data[1], &o->ev[o->n++]);
			kn->out_call = o->call;
		} else {
			requeue(kq, kn);
		}
		if (kn->kind == K_FD) {
			kn->dev_gen = kq->gen;
			kn->dev_revents = uk[i].ret_data[0];
			kn->dev_count = uk[i].ret_data[1];
		}
	}
	return fresh;
}

/* A poll() of the orphan's fd: cheaper than an ADD the device answers "ready". */
static bool fd_ready(const struct knote *kn)
{
	struct pollfd p = {
		.fd = (int)kn->kev.ident,
		.events = kn->kev.filter == EVFILT_READ ? POLLIN : POLLOUT,
	};

	return poll(&p, 1, 0) != 0;
}

/*
 * How long a wait may last with orphans: 10 ms for an fd, and for a timer
 * (on the list too) until just after its next expiry, so an expiry whose
 * poll kevent did not fire is still seen.
 */
static uint64_t orphan_wait_cap(struct kq *kq)
{
	uint64_t cap = KEVENT_TIMEOUT_INFINITE;

	for (struct link *l = kq->orphans.next; l != &kq->orphans; l = l->next) {
		struct knote *kn = KN_OF(l, orph);
		struct itimerspec its;
		uint64_t ns;

		if (kn->kind != K_TIMER)
			return ORPHAN_POLL_NS;
		if (kn->disabled || timerfd_gettime(kn->watch_fd, &its) < 0)
			continue;
		ns = (uint64_t)its.it_value.tv_sec * 1000000000ull + (uint64_t)its.it_value.tv_nsec;
		ns += 1000000;	/* just after it */
		if (ns < cap)
			cap = ns;
	}
	return cap;
}

/* Before a wait: register the orphans the device can watch by now. */
static void arm_orphans(struct kq *kq)
{
	struct link *l = kq->orphans.next;

	while (l != &kq->orphans) {
		struct knote *kn = KN_OF(l, orph);

		l = l->next;	/* kqf_arm takes kn off the list when it registers */
		if (kn->kind == K_FD && !fd_ready(kn))
			(void)kqf_arm(kq, kn);	/* an ADD only when it can register */
	}
}

static void orphans_to_candidates(struct kq *kq)
{
	for (struct link *l = kq->orphans.next; l != &kq->orphans; l = l->next)
		requeue(kq, KN_OF(l, orph));
}

/*
 * A kqueue closed while several threads wait in it: the wake kevent fires
 * once and wakes one of them, so each waiter that leaves wakes the next.
 * Emptying the eventfd first makes the write a fresh not-ready to ready
 * edge, which the device reports again (abi.md A6).
 */
static void pass_the_close_on(struct kq *kq)
{
	drain_fd(kq->wake_fd);
	if (kq->waiters > 0)
		wake_waiters(kq);
}

#define DEV_BATCH 1024	/* ukevents per GET_EVENTS: 40 KiB of stack */

/*
 * One GET_EVENTS, waiting up to wait_ns (lock dropped), then what came
 * turned into candidates (*fresh: how many were not already).  Returns the
 * number of device events, or -errno.
 */
static int read_device(struct kq *kq, uint64_t wait_ns, unsigned int want, int *fresh,
		       struct outlist *o)
{
	struct ukevent uk[DEV_BATCH];
	int r;

	if (kq->closed)
		return -EBADF;	/* its fd number may be another file's by now */
	kq->waiters++;
	pthread_mutex_unlock(&kq->lock);
	r = kevent_get_events(kq->fd, wait_ns ? 1 : 0, want, wait_ns, uk, 0);
	if (r < 0)
		r = -errno;
	pthread_mutex_lock(&kq->lock);
	kq->waiters--;
	if (kq->closed) {
		pass_the_close_on(kq);
		return -EBADF;
	}
	*fresh = r > 0 ? take_device(kq, uk, r, o) : 0;
	return r;
}

/*
 * How many times a wait that returned events reads the device again, while
 * each read brings more.  A wait ends at the first ready kevent, and the
 * daemon's reactor turns the sources' readiness into ready kevents one by
 * one: without a second look, a call made after two sources turned ready
 * often reported one.  The yield before each look lets the reactor, which
 * shares the CPUs, run first; a read that brings nothing ends the loop, so
 * a wait that returned events costs one yield and one GET_EVENTS more
 * (kqueue-kevent(3) BUGS).
 */
#define DEV_REREAD 4

/*
 * How many device events a read may take: on a revision-2 queue what the
 * eventlist still has room for beside the candidates and the events the
 * reads put there (0: none), else a whole batch.
 */
static unsigned int dev_room(struct kq *kq, const struct outlist *o)
{
	int max = o->max - o->n, n = 0;

	if (!kq->dev_level || max >= DEV_BATCH)
		return DEV_BATCH;
	for (struct link *l = kq->cands.next; l != &kq->cands && n < max; l = l->next)
		n++;
	return (unsigned int)(max - n);
}

/*
 * Wait in the device up to wait_ns, then read what else it has at once;
 * every orphan becomes a candidate.  Returns the number of device events
 * of the wait, or -errno.
 *
 * On a revision-2 queue the reads take at most what the caller's eventlist
 * has room for (max less the candidates already there): each LEVEL kevent
 * dequeued is polled again by the device at every later dequeue (D43), so
 * a read of all of them would make every call cost one poll per ready
 * socket; taking only what fits, the device serves them in turns from its
 * ready list and the rest wait there, not in the library.  A report taken
 * and not delivered in this call would cost the library its own poll(2)
 * and count at the next one (the report is this call's only).
 */
static int wait_device(struct kq *kq, uint64_t wait_ns, struct outlist *o)
{
	unsigned int want = dev_room(kq, o);
	int fresh, r, more;

	/* One at least: candidates kept ready must not starve the device. */
	r = more = read_device(kq, wait_ns, want ? want : 1, &fresh, o);

	/*
	 * "Brings more" counts new candidates: a LEVEL kevent (D43) comes
	 * back at every dequeue while it is ready, which is nothing new.
	 */
	for (int i = 0; wait_ns && more > 0 && fresh > 0 && i < DEV_REREAD; i++) {
		want = dev_room(kq, o);
		if (!want)
			break;	/* the eventlist is full already */
		sched_yield();
		more = read_device(kq, 0, want, &fresh, o);
	}
	if (more == -EBADF)
		return more;
	orphans_to_candidates(kq);
	return r;
}

static int scan(struct kq *kq, struct kevent *out, int max, const struct timespec *ts)
{
	struct outlist o = { out, 0, max, 0 };	/* the events the reads settle go first */
	uint64_t deadline = 0, now;
	bool forever = ts == NULL;
	int n;

	if (ts) {
		if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000L)
			return -EINVAL;
		deadline = now_ns() + (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
	}
	o.call = ++kq->gen;	/* device reports from here on are this call's */
	/* Right after the caller read what it was given: register orphans now. */
	arm_orphans(kq);
	/*
	 * With candidates, first what the device already has, without
	 * waiting (so always-ready level kevents cannot starve it); without,
	 * the wait below returns at once when something is there.
	 */
	if (!l_empty(&kq->cands)) {
		n = wait_device(kq, 0, &o);
		if (n < 0)
			return n;
	}
	for (int pass = 0;; pass++) {
		uint64_t wait_ns;
		bool capped = false;

		n = o.n + collect(kq, out + o.n, max - o.n, o.call);
		if (n > 0)
			break;
		if (!l_empty(&kq->cands) && pass < 4)
			continue;	/* re-armed sources that turned ready meanwhile */
		now = now_ns();
		if (!forever && now >= deadline)
			return wait_device(kq, 0, &o) < 0 ? 0 :
			       o.n + collect(kq, out + o.n, max - o.n, o.call);
		wait_ns = forever ? KEVENT_TIMEOUT_INFINITE : deadline - now;
		if (!l_empty(&kq->orphans)) {
			uint64_t cap = orphan_wait_cap(kq);

			if (wait_ns > cap) {
				wait_ns = cap;
				capped = true;
			}
		}
		n = wait_device(kq, wait_ns, &o);
		if (n < 0)
			return n;
		if (n == 0 && !capped && (forever || now_ns() + 1000000 < deadline))
			return -EINTR;	/* D22: a signal ended the wait with nothing */
		pass = 0;
	}
	return n;
}

/*
 * The call delivered a level knote, ready when it was delivered and not
 * read yet: FreeBSD keeps such a knote queued until its next scan, so the
 * kqueue fd polls readable until the next kevent() call.  Neither the
 * library's candidates (revision 1) nor the device's LEVEL check (D43: at
 * the next dequeue, not at poll()) make the device fd readable, so one
 * kevent is made ready, once per call, not per event.  A LEVEL kevent the
 * device delivered in this call: a READY of it (D49), which the next call
 * takes as its report (no bits: the library looks at that one fd itself,
 * one poll(2) and FIONREAD per call); it takes the place in the device's
 * list its LEVEL check would give it, so the sockets still take turns.
 * Else (a knote the library looks at again, revision 1): a READY of the
 * wake kevent, or a write of the eventfd on revision 1.  Like FreeBSD's,
 * the fd stays readable if the caller drains the source meanwhile; the
 * next call then finds nothing.
 */
static void mark_level(struct kq *kq)
{
	struct knote *kn = kq->level_left ? NULL : by_serial(kq, kq->level_dev);
	struct ukevent uk;

	if (kq->dev_level) {
		if (kn && kn->dev_on)
			uk_fill(&uk, kn->watch_fd, kn->watch_events, kn->serial);
		else
			uk_fill(&uk, kq->wake_fd, KEVENT_POLL_POLLIN, SERIAL_WAKE);
		if (kevent_ctl(kq->fd, KEVENT_CTL_READY, 1, &uk) == 1)
			return;
	}
	wake_waiters(kq);
}

/* ---- the two calls ---- */

int kqueue(void)
{
	int r = kqf_kq_create();

	if (r < 0) {
		errno = -r;
		return -1;
	}
	return r;
}

int kevent(int kqfd, const struct kevent *changelist, int nchanges,
	   struct kevent *eventlist, int nevents, const struct timespec *timeout)
{
	struct kq *kq;
	int nerr = 0, r;

	if (nchanges < 0 || nevents < 0 || (nchanges && !changelist) || (nevents && !eventlist)) {
		errno = EINVAL;
		return -1;
	}
	r = kqf_kq_get(kqfd, &kq);
	if (r < 0) {
		errno = -r;
		return -1;
	}
	kqf_signal_own();
	pthread_mutex_lock(&kq->lock);
	r = apply_changes(kq, changelist, nchanges, eventlist, nevents, &nerr);
	if (r == 0 && nerr > 0)
		r = nerr;
	else if (r == 0 && nevents > 0)
		r = scan(kq, eventlist, nevents, timeout);
	/* Candidates a blocked caller or a poll() of the fd has not seen yet. */
	if (kq->need_wake && !l_empty(&kq->cands))
		wake_waiters(kq);
	else if ((kq->level_left || kq->level_dev) && r > 0 && !kq->closed)
		mark_level(kq);
	kq->need_wake = false;
	kq->level_left = false;
	kq->level_dev = 0;
	pthread_mutex_unlock(&kq->lock);
	kqf_kq_put(kq);
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return r;
}

/* ---- the revision ---- */

/* The highest revision this library is written for. */
#define KQ_REV_KNOWN KEVENT_ABI_REVISION

/*
 * KQUEUE_KEVENT_REVISION: the highest revision the caller lets a kqueue
 * use.  Unset or empty: no cap.  Otherwise a decimal number from 1 up, digits
 * only (no sign, no blank); anything else is -EINVAL.
 */
static int revision_cap(unsigned int *cap)
{
	const char *s = getenv("KQUEUE_KEVENT_REVISION");
	unsigned long v;
	char *end;

	*cap = UINT_MAX;
	if (!s || !*s)
		return 0;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < 1 || v > UINT_MAX)
		return -EINVAL;
	*cap = (unsigned int)v;
	return 0;
}

/*
 * Put the new queue fd on the highest revision the device serves (INFO's
 * abi_revision), this library knows and the environment allows; before its
 * first CTL, as SET_ABI wants (abi.md A12).  Revision 1 is the queue as it
 * opens: no SET_ABI, the 2006 path, also for a device that serves only 1
 * or answers no INFO.
 */
static int choose_revision(struct kq *kq)
{
	struct kevent_info info;
	unsigned int cap, rev = KQ_REV_KNOWN;
	int r = revision_cap(&cap);

	kq->rev = 1;
	if (r < 0)
		return r;
	if (kevent_info(kq->fd, &info) < 0)
		return 0;
	if (info.abi_revision < rev)
		rev = info.abi_revision;
	if (cap < rev)
		rev = cap;
	if (rev <= 1)
		return 0;
	if (kevent_set_abi(kq->fd, rev, 0) < 0)
		return -errno;
	kq->rev = rev;
	/* What the queue's revision brings: INFO tells it on that queue. */
	if (kevent_info(kq->fd, &info) == 0) {
		kq->dev_user = info.features & KEVENT_FEAT_USER;
		kq->dev_timer = info.features & KEVENT_FEAT_POSIX_TIMER;
		/* D68: the inode notes come with revision 4, where INODE is served */
		kq->dev_vnode = rev >= 4 && (info.supported_types & (1u << KEVENT_INODE));
	}
	kq->dev_level = rev >= 2;	/* D42, D43, D52: revision 2 and later */
	kq->dev_count = rev >= 4;	/* D67: the device counts what it delivers */
	kq->dev_fdcheck = rev >= 4;	/* D69: and checks its fd at that delivery */
	return 0;
}

/* ---- used by the registry ---- */

int kqf_kq_init(struct kq *kq, int fd)
{
	struct stat st;
	int r;

	kq->fd = fd;
	kq->pid = getpid();
	kq->next_serial = SERIAL_FIRST;
	kq->ino_fd = -1;
	l_init(&kq->cands);
	l_init(&kq->orphans);
	pthread_mutex_init(&kq->lock, NULL);
	kq->wake_fd = -1;
	r = choose_revision(kq);
	if (r < 0)
		return r;
	kq->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (kq->wake_fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	kq->dev_dev = st.st_dev;
	kq->dev_rdev = st.st_rdev;
	kq->dev_mode = st.st_mode;
	r = kqf_dev_add(kq, kq->wake_fd, KEVENT_POLL_POLLIN, SERIAL_WAKE);
	return r < 0 ? r : 0;
}

/*
 * An fd open on the same device as kq's: a kqueue (or a libkevent queue).
 * A character device (CUSE, the module) is told by its number; the FUSE
 * backend gives each open its own inode on a mount that holds nothing else.
 */
bool kqf_is_kqueue_fd(const struct kq *kq, const struct stat *st)
{
	if (S_ISCHR(kq->dev_mode))
		return S_ISCHR(st->st_mode) && st->st_rdev == kq->dev_rdev;
	return st->st_dev == kq->dev_dev;
}

/* fd is kq's own open file (a dup of it too, where kcmp(2) can tell). */
bool kqf_is_self(const struct kq *kq, int fd)
{
	long r;

	if (fd == kq->fd)
		return true;
	r = syscall(SYS_kcmp, getpid(), getpid(), 0 /* KCMP_FILE */, kq->fd, fd);
	return r == 0;
}

/* Free every knote and the library's own fds (kq->lock not needed: last ref). */
void kqf_kq_release(struct kq *kq, bool child)
{
	for (unsigned int h = 0; h < KQ_HASH; h++) {
		while (kq->by_key[h]) {
			struct knote *kn = kq->by_key[h];

			kn->dev_on = false;	/* the queue goes with its fd */
			kqf_knote_free(kq, kn);
		}
	}
	(void)child;
	if (kq->ino_fd >= 0)
		kqf_sys_close(kq->ino_fd);
	if (kq->wake_fd >= 0)
		kqf_sys_close(kq->wake_fd);
	pthread_mutex_destroy(&kq->lock);
	free(kq);
}

/* One delivery of signo to kq's EVFILT_SIGNAL knote, if it has one. */
void kqf_signal_deliver(struct kq *kq, int signo)
{
	struct knote *kn;

	pthread_mutex_lock(&kq->lock);
	kn = kq->closed ? NULL : kqf_lookup(kq, (uintptr_t)signo, EVFILT_SIGNAL);
	if (kn) {
		kn->count++;
		kqf_candidate(kq, kn);
		wake_waiters(kq);
	}
	pthread_mutex_unlock(&kq->lock);
}

/* Wake every blocked caller of a kqueue being closed (D17: the device won't). */
void kqf_kq_closing(struct kq *kq)
{
	uint64_t one = 1;

	kq->closed = true;
	if (write(kq->wake_fd, &one, sizeof(one)) < 0) {
		/* counter full: a wake is pending anyway */
	}
}
