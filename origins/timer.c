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
};

static struct {
	int tfd;
	struct ktimer **heap;
	size_t nr, cap;
	__u64 armed_ns;		/* deadline the timerfd is set to; 0: none */
	__u64 wakes, expired;	/* timerfd wakes and expiries handled (tests) */
	__u64 deferred;		/* expiries the per-uid budget moved on (B7) */
} kt = { .tfd = -1 };

static int ktimer_before(const struct ktimer *a, const struct ktimer *b)
{
	return a->expiry_ns < b->expiry_ns;
}

static void ktimer_place(struct ktimer *t, size_t i)
{
	kt.heap[i] = t;
	t->idx = i;
}

static void ktimer_sift_up(size_t i)
{
	struct ktimer *t = kt.heap[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!ktimer_before(t, kt.heap[parent]))
			break;
		ktimer_place(kt.heap[parent], i);
		i = parent;
	}
	ktimer_place(t, i);
}

static void ktimer_sift_down(size_t i)
{
	struct ktimer *t = kt.heap[i];

	for (;;) {
		size_t child = 2 * i + 1;

		if (child >= kt.nr)
			break;
		if (child + 1 < kt.nr && ktimer_before(kt.heap[child + 1], kt.heap[child]))
			child++;
		if (!ktimer_before(kt.heap[child], t))
			break;
		ktimer_place(kt.heap[child], i);
		i = child;
	}
	ktimer_place(t, i);
}

static int ktimer_push(struct ktimer *t)
{
	if (kt.nr == kt.cap) {
		size_t cap = kt.cap ? kt.cap * 2 : 64;
		struct ktimer **heap = realloc(kt.heap, cap * sizeof(*heap));

		if (!heap)
			return -ENOMEM;
		kt.heap = heap;
		kt.cap = cap;
	}
	ktimer_place(t, kt.nr++);
	ktimer_sift_up(t->idx);
	t->armed = 1;
	return 0;
}

static void ktimer_unlink(struct ktimer *t)
{
	size_t i = t->idx;
	struct ktimer *last = kt.heap[--kt.nr];

	t->armed = 0;
	if (i == kt.nr)
		return;
	ktimer_place(last, i);
	ktimer_sift_up(i);
	ktimer_sift_down(last->idx);
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
 * Point the timerfd at the earliest deadline, + the slack when a second
 * timer is due within it, unless it is armed earlier already.  The second earliest deadline is
 * one of the root's children.
 */
static void ktimer_rearm(void)
{
	struct itimerspec its = { 0 };
	__u64 next = kt.nr ? kt.heap[0]->expiry_ns : 0;

	if (kt.nr > 1) {
		__u64 second = kt.heap[1]->expiry_ns;

		if (kt.nr > 2 && kt.heap[2]->expiry_ns < second)
			second = kt.heap[2]->expiry_ns;
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
	if (kt.armed_ns && (!next || next >= kt.armed_ns))
		return;
	its.it_value.tv_sec = next / 1000000000u;
	its.it_value.tv_nsec = next % 1000000000u;
	if (timerfd_settime(kt.tfd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
		kt.armed_ns = next;
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
	t->period_ns = (__u64)uk->id.raw[0] * 1000000u;
	pthread_mutex_lock(&korigins_lock);
	err = kreactor_running() ? 0 : -ENODEV;
	if (!err) {
		t->expiry_ns = kclock_ns() + t->period_ns;
		korigin_set_data(k, t);
		err = ktimer_push(t);
	}
	if (!err)
		ktimer_rearm();
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
	ktimer_rearm();
	pthread_mutex_unlock(&korigins_lock);
	return err;
}

static void ktimer_detach(struct kitem *k)
{
	struct ktimer *t = korigin_data(k);

	pthread_mutex_lock(&korigins_lock);
	if (t->armed) {
		ktimer_unlink(t);
		ktimer_rearm();
	}
	pthread_mutex_unlock(&korigins_lock);
	free(t);
}


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
	if (t->expiry_ns < resume_ns)
		t->expiry_ns += (resume_ns - t->expiry_ns + t->period_ns - 1) /
				t->period_ns * t->period_ns;
	kt.deferred++;
}

void ktimer_handle(void)
{
	unsigned int done = 0;
	__u64 ticks, now, deferred0 = kt.deferred;

	if (read(kt.tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		return;
	kt.armed_ns = 0;	/* an absolute timerfd that expired is disarmed */
	now = kclock_ns();
	while (kt.nr && kt.heap[0]->expiry_ns <= now) {
		struct ktimer *t = kt.heap[0];
		__u64 at = ktimer_expire(t, now);
		__u64 resume = korigin_expiry_charge(t->k, now);
		struct korigin_result res = {
			.ret_data = { (__u32)(at / 1000000u), 0 },
		};

		if (resume) {
			ktimer_defer(t, resume);
			ktimer_sift_down(0);
		} else if (korigin_fire(t->k, &res) == 1) {
			ktimer_unlink(t);
		} else {
			t->expiry_ns += t->period_ns;	/* the first point after now */
			ktimer_sift_down(0);
		}
		if (++done == KTIMER_BATCH_MAX)
			break;
		/* The next one is not due yet: has the pass taken that long? */
		if (kt.nr && kt.heap[0]->expiry_ns > now)
			now = kclock_ns();
	}
	kt.expired += done - (kt.deferred - deferred0);
	kt.wakes++;
	ktimer_rearm();
}

int ktimer_init(void)
{
	kt.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (kt.tfd < 0)
		return -errno;
	kt.armed_ns = 0;
	kt.wakes = kt.expired = kt.deferred = 0;
	return kreactor_add(kt.tfd, EPOLLIN, KR_DATA(KR_TAG_TIMER, 0));
}

void ktimer_fini(void)
{
	if (kt.tfd >= 0)
		close(kt.tfd);
	kt.tfd = -1;
	free(kt.heap);
	kt.heap = NULL;
	kt.nr = kt.cap = 0;
}

__u64 ktimer_count(void)
{
	return kt.nr;
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
