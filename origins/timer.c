// SPDX-License-Identifier: GPL-2.0
/*
 * KEVENT_TIMER (abi.md A9): id.raw[0] = period in ms, first expiry one period
 * after ADD, periodic while registered; the core stops a ONESHOT kevent by
 * returning 1 from korigin_fire().  ret_data[0] = CLOCK_MONOTONIC ms at the
 * expiry, truncated to 32 bits.  Expiries while the kevent is still ready
 * are merged by the core (it keeps the last result).
 *
 * Scaling: one timerfd (CLOCK_MONOTONIC, absolute) armed for the earliest
 * deadline of a binary min-heap of all timers.  ADD, REMOVE and an expiry
 * cost O(log n); there is no fd per timer and no scan.
 *
 * ret_data[0] is the expiry on the timer's grid (ADD + n * period), not the
 * moment the reactor got to it, so two reports are always a whole number of
 * periods apart.  A timer that is late by more than a period (the reactor
 * was busy) fires once, with the grid point that was due (as the module's
 * hrtimer reports its expiry), and moves on to the next one in the future:
 * the missed periods merge.  So a first report is always ADD + period (A9's
 * bounds hold however late the reactor ran) and a ONESHOT reports its one
 * expiry.
 *
 * B7: each expiry is charged to the budget of the uid that added the timer
 * (korigin_expiry_charge).  Over it, the timer moves on to the first grid
 * point in the next budget window without firing: the expiries merge, no
 * errno, and 1 ms timers stay legal.
 *
 * KEVENT_POSIX_TIMER (revision 3, D58-D61): the core keeps each timer's
 * grid and counts its expiries from grid indexes at delivery; this origin
 * arms the grid's next point on the heap of its clock and, when it is due,
 * tells the core which point (korigin_timer_fire).  The budget (B7) defers
 * such a fire as it defers a take13 one; the core's count does not change.
 *
 * LOCKING: everything here runs under korigins_lock (internal.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>

#include "internal.h"

struct ktimer {
	struct kitem *k;
	__u64 expiry_ns;
	__u64 period_ns;
	size_t idx;		/* position in the heap, if armed */
	int armed;
	/* KEVENT_POSIX_TIMER (D58): the core's grid, from korigin_grid() */
	int posix;
	unsigned int heap;	/* KT_* below */
	__u64 first_ns;		/* grid point 0 on the heap's clock */
	__u32 gen;
};

/*
 * One heap and timerfd per clock: the take13 timers and the POSIX timers
 * measured on CLOCK_MONOTONIC (relative REALTIME ones too, D58) share
 * KT_MONO; KT_BOOT is CLOCK_BOOTTIME; KT_REAL holds the ABSTIME REALTIME
 * timers, on a timerfd armed with TFD_TIMER_CANCEL_ON_SET so that a
 * clock_settime wakes it (ECANCELED): every point passed then fires at
 * once, and a clock set back simply waits longer.
 */
enum { KT_MONO, KT_BOOT, KT_REAL, KT_NR };

struct kheap {
	int tfd;
	clockid_t clock;
	struct ktimer **heap;
	size_t nr, cap;
	__u64 armed_ns;		/* deadline the timerfd is set to; 0: none */
};

static struct {
	struct kheap h[KT_NR];
	__u64 wakes, expired;	/* timerfd wakes and expiries handled (tests) */
	__u64 deferred;		/* expiries the per-uid budget moved on (B7) */
	__u64 clock_sets;	/* ECANCELED: the realtime clock was set */
} kt = { .h = { { .tfd = -1, .clock = CLOCK_MONOTONIC },
		{ .tfd = -1, .clock = CLOCK_BOOTTIME },
		{ .tfd = -1, .clock = CLOCK_REALTIME } } };

static __u64 kheap_now(const struct kheap *h)
{
	struct timespec ts;

	if (h->clock == CLOCK_MONOTONIC)
		return kclock_ns();
	clock_gettime(h->clock, &ts);
	return (__u64)ts.tv_sec * 1000000000u + (__u64)ts.tv_nsec;
}

static int ktimer_before(const struct ktimer *a, const struct ktimer *b)
{
	return a->expiry_ns < b->expiry_ns;
}

static void ktimer_place(struct kheap *h, struct ktimer *t, size_t i)
{
	h->heap[i] = t;
	t->idx = i;
}

static void ktimer_sift_up(struct kheap *h, size_t i)
{
	struct ktimer *t = h->heap[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!ktimer_before(t, h->heap[parent]))
			break;
		ktimer_place(h, h->heap[parent], i);
		i = parent;
	}
	ktimer_place(h, t, i);
}

static void ktimer_sift_down(struct kheap *h, size_t i)
{
	struct ktimer *t = h->heap[i];

	for (;;) {
		size_t child = 2 * i + 1;

		if (child >= h->nr)
			break;
		if (child + 1 < h->nr && ktimer_before(h->heap[child + 1], h->heap[child]))
			child++;
		if (!ktimer_before(h->heap[child], t))
			break;
		ktimer_place(h, h->heap[child], i);
		i = child;
	}
	ktimer_place(h, t, i);
}

static int ktimer_push(struct ktimer *t)
{
	struct kheap *h = &kt.h[t->heap];

	if (h->nr == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 64;
		struct ktimer **heap = realloc(h->heap, cap * sizeof(*heap));

		if (!heap)
			return -ENOMEM;
		h->heap = heap;
		h->cap = cap;
	}
	ktimer_place(h, t, h->nr++);
	ktimer_sift_up(h, t->idx);
	t->armed = 1;
	return 0;
}

static void ktimer_unlink(struct ktimer *t)
{
	struct kheap *h = &kt.h[t->heap];
	size_t i = t->idx;
	struct ktimer *last = h->heap[--h->nr];

	t->armed = 0;
	if (i == h->nr)
		return;
	ktimer_place(h, last, i);
	ktimer_sift_up(h, i);
	ktimer_sift_down(h, last->idx);
}

/*
 * Batching.  With many timers close together (100k timers of 1 s are 10 us
 * apart) a timerfd wake per expiry costs an epoll_wait, a read and a
 * timerfd_settime each and saturates the reactor.  So, as the kernel's own
 * timer slack does, a timer may be handed over up to KTIMER_SLACK_NS late,
 * never early: when another timer is due within the slack after the
 * earliest one, the timerfd is set to the earliest deadline + the slack, and
 * one wake expires every timer due by then in one pass.  A lone timer is
 * armed exactly.  ret_data[0] names the grid point either way (A9), and
 * 50 us is far below the 1 ms granularity of A9.  When a pass took long
 * enough for more timers to come due, the clock is read again and the pass
 * goes on, up to KTIMER_BATCH_MAX expiries per wake; past that the timerfd
 * is set to the overdue deadline so that the reactor serves its other
 * sources and comes straight back.  The timerfd is set once per wake, and
 * nothing is allocated per expiry: korigin_fire() takes the queue's lock
 * and writes the ring only (the core reserved the ready slots at ADD).
 */
#define KTIMER_SLACK_NS		50000u
#define KTIMER_BATCH_MAX	4096u

/*
 * Point h's timerfd at the earliest deadline, + the slack when a second
 * timer is due within it, unless it is armed earlier already.  The second earliest deadline is
 * one of the root's children.
 */
static void ktimer_rearm(struct kheap *h)
{
	struct itimerspec its = { 0 };
	__u64 next = h->nr ? h->heap[0]->expiry_ns : 0;
	int flags = TFD_TIMER_ABSTIME;

	if (h->nr > 1) {
		__u64 second = h->heap[1]->expiry_ns;

		if (h->nr > 2 && h->heap[2]->expiry_ns < second)
			second = h->heap[2]->expiry_ns;
		if (second - next <= KTIMER_SLACK_NS)
			next += KTIMER_SLACK_NS;
	}
	/*
	 * Lazy: a deadline already armed at or before the new one stays.  It
	 * fires, the pass finds nothing due and arms the right one: one idle
	 * wake at most, where re-arming costs a timerfd_settime on every ADD
	 * behind the earliest timer and on every REMOVE of it (each CTL of a
	 * queue with one timer paid one).
	 */
	if (h->armed_ns && (!next || next >= h->armed_ns))
		return;
	if (h->tfd < 0)
		return;
	if (h->clock == CLOCK_REALTIME)
		flags |= TFD_TIMER_CANCEL_ON_SET;
	its.it_value.tv_sec = next / 1000000000u;
	its.it_value.tv_nsec = next % 1000000000u;
	if (timerfd_settime(h->tfd, flags, &its, NULL) == 0)
		h->armed_ns = next;
}

static int ktimer_valid(const struct ukevent *uk)
{
	if (!uk->id.raw[0] || !(uk->event & KEVENT_TIMER_FIRED))
		return -EINVAL;
	return 0;
}

static int ktimer_attach(struct kitem *k, const struct kcaller *caller,
			 struct korigin_result *res)
{
	const struct ukevent *uk = korigin_ukevent(k);
	struct ktimer *t;
	int err = ktimer_valid(uk);

	if (err)
		return err;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->k = k;
	t->heap = KT_MONO;
	t->period_ns = (__u64)uk->id.raw[0] * 1000000u;
	pthread_mutex_lock(&korigins_lock);
	err = kreactor_running() ? 0 : -ENODEV;
	if (!err) {
		t->expiry_ns = kclock_ns() + t->period_ns;
		korigin_set_data(k, t);
		err = ktimer_push(t);
	}
	if (!err)
		ktimer_rearm(&kt.h[KT_MONO]);
	pthread_mutex_unlock(&korigins_lock);
	if (err)
		free(t);
	return err;
}

/* MODIFY replaced event/req_flags: the period (the id) cannot change. */
static int ktimer_modify(struct kitem *k, struct korigin_result *res)
{
	struct ktimer *t = korigin_data(k);
	int err = ktimer_valid(korigin_ukevent(k));

	pthread_mutex_lock(&korigins_lock);
	if (err && t->armed) {
		ktimer_unlink(t);
	} else if (!err && !t->armed) {
		t->expiry_ns = kclock_ns() + t->period_ns;
		err = ktimer_push(t);
	}
	ktimer_rearm(&kt.h[KT_MONO]);
	pthread_mutex_unlock(&korigins_lock);
	return err;
}

static void ktimer_detach(struct kitem *k)
{
	struct ktimer *t = korigin_data(k);

	pthread_mutex_lock(&korigins_lock);
	if (t->armed) {
		ktimer_unlink(t);
		ktimer_rearm(&kt.h[t->heap]);
	}
	pthread_mutex_unlock(&korigins_lock);
	free(t);
}

/* ---- KEVENT_POSIX_TIMER (revision 3, D58, D61) ---- */

static unsigned int kptimer_heap_of(const struct korigin_grid *g)
{
	if (g->clock == CLOCK_BOOTTIME)
		return KT_BOOT;
	return g->clock == CLOCK_REALTIME ? KT_REAL : KT_MONO;
}

/*
 * (Re-)arm t on the core's current grid (korigins_lock held): its first
 * point, or nothing when disarmed.  The count is the core's (grid indexes);
 * this origin only says when a point is due.
 */
static int kptimer_set(struct ktimer *t, const struct korigin_grid *g)
{
	unsigned int old = t->heap;

	if (t->armed)
		ktimer_unlink(t);
	t->heap = kptimer_heap_of(g);
	t->first_ns = g->first_ns;
	t->period_ns = g->interval_ns;
	t->expiry_ns = g->first_ns;
	t->gen = g->gen;
	if (old != t->heap)
		ktimer_rearm(&kt.h[old]);
	if (!g->first_ns)
		return 0;	/* D59: disarmed */
	return ktimer_push(t);
}

static int kptimer_attach(struct kitem *k, const struct kcaller *caller,
			  struct korigin_result *res)
{
	struct korigin_grid g;
	struct ktimer *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return -ENOMEM;
	korigin_grid(k, &g);
	t->k = k;
	t->posix = 1;
	pthread_mutex_lock(&korigins_lock);
	err = kreactor_running() ? 0 : -ENODEV;
	if (!err && kt.h[kptimer_heap_of(&g)].tfd < 0)
		err = -EINVAL;	/* a clock this host cannot arm (no BOOTTIME timerfd) */
	if (!err) {
		korigin_set_data(k, t);
		err = kptimer_set(t, &g);
	}
	if (!err)
		ktimer_rearm(&kt.h[t->heap]);
	pthread_mutex_unlock(&korigins_lock);
	if (err)
		free(t);
	return err;
}

/* D61: only a MODIFY with a setting makes a new gen; a 40-byte one keeps the timer. */
static int kptimer_modify(struct kitem *k, struct korigin_result *res)
{
	struct ktimer *t = korigin_data(k);
	struct korigin_grid g;
	int err = 0;

	korigin_grid(k, &g);
	pthread_mutex_lock(&korigins_lock);
	if (g.gen != t->gen) {
		if (kt.h[kptimer_heap_of(&g)].tfd < 0)
			err = -EINVAL;
		else
			err = kptimer_set(t, &g);
		ktimer_rearm(&kt.h[t->heap]);
	}
	pthread_mutex_unlock(&korigins_lock);
	return err;
}

/* The latest grid point at or before now (t is due: now >= first). */
static __u64 kptimer_index(const struct ktimer *t, __u64 now)
{
	return t->period_ns ? (now - t->first_ns) / t->period_ns : 0;
}

/*
 * The first due timer of h fired or was deferred; returns 1 when it left
 * the heap.  The budget's windows are on CLOCK_MONOTONIC: resume is moved
 * onto h's clock by its distance from now.
 */
static int ktimer_due(struct kheap *h, struct ktimer *t, __u64 now, __u64 mono);

/*
 * t's deadline was reached: return it, the expiry reported, and move t to
 * the latest point of its grid that is not after now (missed periods merge).
 */
static __u64 ktimer_expire(struct ktimer *t, __u64 now)
{
	__u64 due = t->expiry_ns;

	if (now > t->expiry_ns)
		t->expiry_ns += (now - t->expiry_ns) / t->period_ns * t->period_ns;
	return due;
}

/* Over its uid's budget: on to the first grid point at or after resume_ns. */
static void ktimer_defer(struct ktimer *t, __u64 resume_ns)
{
	if (t->period_ns && t->expiry_ns < resume_ns)
		t->expiry_ns += (resume_ns - t->expiry_ns + t->period_ns - 1) /
				t->period_ns * t->period_ns;
	else if (!t->period_ns)
		t->expiry_ns = resume_ns;	/* a POSIX one-shot: its one point, later */
	kt.deferred++;
}

static int ktimer_due(struct kheap *h, struct ktimer *t, __u64 now, __u64 mono)
{
	__u64 resume = korigin_expiry_charge(t->k, mono);
	__u64 at, idx;

	if (resume) {
		ktimer_defer(t, now + (resume > mono ? resume - mono : 0));
		ktimer_sift_down(h, 0);
		return 0;
	}
	if (t->posix) {
		idx = kptimer_index(t, now);
		if (korigin_timer_fire(t->k, t->gen, idx) == 1 || !t->period_ns) {
			ktimer_unlink(t);	/* ONESHOT, or its one expiry (D58) */
			return 1;
		}
		t->expiry_ns = t->first_ns + (idx + 1) * t->period_ns;
		ktimer_sift_down(h, 0);
		return 0;
	}
	at = ktimer_expire(t, now);
	{
		struct korigin_result res = {
			.ret_data = { (__u32)(at / 1000000u), 0 },
		};

		if (korigin_fire(t->k, &res) == 1) {
			ktimer_unlink(t);
			return 1;
		}
	}
	t->expiry_ns += t->period_ns;	/* the first point after now */
	ktimer_sift_down(h, 0);
	return 0;
}

/* Expire what is due on h; returns the expiries handled (deferred ones too). */
static unsigned int kheap_handle(struct kheap *h)
{
	unsigned int done = 0;
	__u64 ticks, now, mono;

	if (read(h->tfd, &ticks, sizeof(ticks)) < 0) {
		if (errno == ECANCELED)
			kt.clock_sets++;	/* the clock was set: recompute below */
		else if (errno != EAGAIN || h->clock != CLOCK_MONOTONIC)
			return 0;	/* another heap's wake: nothing expired here */
	}
	h->armed_ns = 0;	/* expired or cancelled: set it again below */
	now = kheap_now(h);
	mono = h->clock == CLOCK_MONOTONIC ? now : kclock_ns();
	while (h->nr && h->heap[0]->expiry_ns <= now) {
		ktimer_due(h, h->heap[0], now, mono);
		if (++done == KTIMER_BATCH_MAX)
			break;
		/* The next one is not due yet: has the pass taken that long? */
		if (h->nr && h->heap[0]->expiry_ns > now) {
			now = kheap_now(h);
			mono = h->clock == CLOCK_MONOTONIC ? now : kclock_ns();
		}
	}
	ktimer_rearm(h);
	return done;
}

void ktimer_handle(void)
{
	unsigned int done = 0, i;
	__u64 deferred0 = kt.deferred;

	/* one tag for every timerfd: each is read without blocking */
	for (i = 0; i < KT_NR; i++)
		if (kt.h[i].tfd >= 0 && (i == KT_MONO || kt.h[i].nr || kt.h[i].armed_ns))
			done += kheap_handle(&kt.h[i]);
	kt.expired += done - (kt.deferred - deferred0);
	kt.wakes++;
}

int ktimer_init(void)
{
	unsigned int i;
	int err;

	kt.wakes = kt.expired = kt.deferred = kt.clock_sets = 0;
	for (i = 0; i < KT_NR; i++) {
		struct kheap *h = &kt.h[i];

		h->armed_ns = 0;
		h->tfd = timerfd_create(h->clock, TFD_CLOEXEC | TFD_NONBLOCK);
		if (h->tfd < 0) {
			if (i == KT_MONO)
				return -errno;
			continue;	/* that clock's POSIX timers fail at ADD */
		}
		err = kreactor_add(h->tfd, EPOLLIN, KR_DATA(KR_TAG_TIMER, i));
		if (err)
			return err;
	}
	return 0;
}

void ktimer_fini(void)
{
	unsigned int i;

	for (i = 0; i < KT_NR; i++) {
		struct kheap *h = &kt.h[i];

		if (h->tfd >= 0)
			close(h->tfd);
		h->tfd = -1;
		free(h->heap);
		h->heap = NULL;
		h->nr = h->cap = 0;
		h->armed_ns = 0;
	}
}

__u64 ktimer_count(void)
{
	return kt.h[KT_MONO].nr + kt.h[KT_BOOT].nr + kt.h[KT_REAL].nr;
}

void ktimer_counts(__u64 *wakes, __u64 *expiries, __u64 *deferred)
{
	*wakes = kt.wakes;
	*expiries = kt.expired;
	*deferred = kt.deferred;
}

const struct korigin_ops ktimer_ops = {
	.name = "timer",
	.attach = ktimer_attach,
	.modify = ktimer_modify,
	.detach = ktimer_detach,
};

const struct korigin_ops kptimer_ops = {
	.name = "posix-timer",
	.attach = kptimer_attach,
	.modify = kptimer_modify,
	.detach = ktimer_detach,
};
