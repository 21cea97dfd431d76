// SPDX-License-Identifier: GPL-2.0
/*
 * KEVENT_POSIX_TIMER, revision 3 (D58, D59, D61): a timer with POSIX-timer
 * semantics.  Its source is the timer origin (origins/timer.c), which only
 * fires the grid points that come due (origin.h, korigin_grid); the core
 * keeps each timer's grid and counts the expiries from grid indexes and its
 * own clock reading at delivery, so a count never depends on how late the
 * origin's thread ran.  The setting travels in an 80-byte entry (D60).
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

/* A timer's grid v + k*i (D58), the kitem's private data, under q->lock. */
struct kgrid {
	__u64 first, interval;	/* v and i in ns on mclock; first 0: disarmed */
	__u64 next;		/* index of the first point not yet delivered */
	__u64 taken;		/* next before the last delivery (a faulted WAIT puts it back) */
	__u64 fired;		/* 1 + the highest index an origin fired; 0: none */
	__u32 clock;		/* KEVENT_CLOCK_* as the caller set it */
	__u32 gen;		/* bumped by each re-arm: older fires are dropped */
	clockid_t mclock;	/* the clock the grid is measured on */
};

static struct kgrid *grid_of(const struct kitem *k)
{
	/* the private data is the kitem's own, allocated with it (kitem_new) */
	return (struct kgrid *)(void *)k->priv;
}

#define NS_MAX	(~0ull >> 2)	/* saturation of a converted timespec */

static __u64 ts_ns(const struct kevent_timespec *ts)
{
	if ((__u64)ts->tv_sec >= NS_MAX / 1000000000ull)
		return NS_MAX;
	return (__u64)ts->tv_sec * 1000000000ull + ts->tv_nsec;
}

static struct kevent_timespec ns_ts(__u64 ns)
{
	struct kevent_timespec ts = { (__s64)(ns / 1000000000ull), (__u32)(ns % 1000000000ull), 0 };

	return ts;
}

static bool ts_valid(const struct kevent_timespec *ts)
{
	return !ts->__pad && ts->tv_sec >= 0 && ts->tv_nsec < 1000000000u;
}

static bool ts_is_zero(const struct kevent_timespec *ts)
{
	return !ts->tv_sec && !ts->tv_nsec;
}

/* D59: the setting's own rules. */
static int spec_check(const struct kevent_timer_spec *s)
{
	__u64 i;

	if (s->clock != KEVENT_CLOCK_REALTIME && s->clock != KEVENT_CLOCK_MONOTONIC &&
	    s->clock != KEVENT_CLOCK_BOOTTIME)
		return -EINVAL;
	if ((s->flags & ~(__u32)KEVENT_TIMER_ABSTIME) || !ts_valid(&s->value) ||
	    !ts_valid(&s->interval))
		return -EINVAL;
	i = ts_ns(&s->interval);
	return i && i < KEVENT_TIMER_MIN_INTERVAL_NS ? -EINVAL : 0;
}

static clockid_t clock_of(__u32 c)
{
	return c == KEVENT_CLOCK_REALTIME ? CLOCK_REALTIME :
	       c == KEVENT_CLOCK_BOOTTIME ? CLOCK_BOOTTIME : CLOCK_MONOTONIC;
}

/*
 * D58, D61: a new grid from setting s, starting at k = 0 (q->lock held, or
 * k not yet visible).  A relative REALTIME value is measured on MONOTONIC.
 */
static void grid_set(struct kqueue *q, struct kitem *k, const struct kevent_timer_spec *s)
{
	struct kgrid *g = grid_of(k);
	bool abs = s->flags & KEVENT_TIMER_ABSTIME;
	__u64 v = ts_ns(&s->value);

	g->clock = s->clock;
	g->mclock = s->clock == KEVENT_CLOCK_REALTIME && !abs ? CLOCK_MONOTONIC : clock_of(s->clock);
	g->interval = ts_ns(&s->interval);
	g->next = g->fired = g->taken = 0;
	__atomic_store_n(&g->gen, g->gen + 1, __ATOMIC_RELAXED);
	if (ts_is_zero(&s->value))
		g->first = 0;	/* D59: disarmed, whatever the flags */
	else if (abs)
		g->first = v ? v : 1;
	else
		g->first = kcore_clock(q->core, g->mclock) + v;
}

/* Points passed by now or fired, as a count from k = 0 (q->lock held). */
static __u64 grid_passed(const struct kgrid *g, __u64 now)
{
	__u64 p = 0;

	if (g->first && now >= g->first)
		p = g->interval ? (now - g->first) / g->interval + 1 : 1;
	return p > g->fired ? p : g->fired;
}

/*
 * D58: the delivered count, up to the dequeue's clock reading (q->lock
 * held).  An expiry made it ready: at least 1; READY alone (D49): 0.
 */
static __u32 grid_take(struct kqueue *q, struct kitem *k)
{
	struct kgrid *g = grid_of(k);
	__u64 p = grid_passed(g, kcore_clock(q->core, g->mclock)), n = 0;

	g->taken = g->next;
	if (p > g->next) {
		n = p - g->next;
		g->next = p;
	}
	return n > 0xffffffffull ? 0xffffffffu : (__u32)n;
}

/*
 * D61: QUERY's view (q->lock held).  The next point is the first one
 * neither passed nor delivered: after the clock was set back, a point
 * delivered already is not due again, and the timer waits longer (D58).
 */
static void grid_query(struct kqueue *q, struct kitem *k, struct ukevent_ext *e)
{
	const struct kgrid *g = grid_of(k);
	__u64 now = kcore_clock(q->core, g->mclock), p = grid_passed(g, now), left = 0, kn, nx;
	struct kevent_timer_spec *s = &e->ext.timer;

	kn = p > g->next ? p : g->next;
	if (g->first && !g->interval && !kn) {
		left = g->first > now ? g->first - now : 1;
	} else if (g->first && g->interval) {
		nx = kn > (NS_MAX - g->first) / g->interval ? NS_MAX : g->first + kn * g->interval;
		left = nx > now ? nx - now : 1;
	}
	memset(s, 0, sizeof(*s));
	s->clock = g->clock;
	s->value = ns_ts(left);
	s->interval = ns_ts(g->interval);
	e->ev.ret_flags = KEVENT_RET_DONE;
	e->ev.ret_data[0] = p > g->next ? (__u32)(p - g->next > 0xffffffffull ? 0xffffffffu :
						      p - g->next) : 0;
	e->ev.ret_data[1] = 0;
}

void korigin_grid(const struct kitem *k, struct korigin_grid *out)
{
	struct kqueue *q = k->q;
	const struct kgrid *g = grid_of(k);

	pthread_mutex_lock(&q->lock);
	out->clock = g->mclock;
	out->abs_realtime = g->clock == KEVENT_CLOCK_REALTIME && g->mclock == CLOCK_REALTIME;
	out->first_ns = g->first;
	out->interval_ns = g->interval;
	out->gen = g->gen;
	pthread_mutex_unlock(&q->lock);
}

int korigin_timer_fire(struct kitem *k, __u32 gen, __u64 index)
{
	static const struct korigin_result none = { 0, { 0, 0 } };
	struct kqueue *q = k->q;
	struct enqueue_effects fx = { 0 };
	struct kgrid *g = grid_of(k);
	int stop;

	pthread_mutex_lock(&q->lock);
	if (k->flags & KITEM_STOPPED) {
		pthread_mutex_unlock(&q->lock);
		return 1;
	}
	if (gen != g->gen || index < g->next) {
		pthread_mutex_unlock(&q->lock);
		return 0;	/* an old setting's, or a point delivered already */
	}
	if (index + 1 > g->fired)
		g->fired = index + 1;
	if (k->flags & KITEM_ATTACHING)
		stop = hold_locked(k, &none);
	else
		stop = enqueue_locked(q, k, &none, &fx);
	pthread_mutex_unlock(&q->lock);
	enqueue_effects_run(q, &fx);
	return stop;
}


/* D58: a 40-byte entry has no setting; with FIRED it is the take13 timer event. */
static int ptimer_ext_check(const struct ukevent *uk, const struct ukevent_ext *e, bool add)
{
	int err;

	if (!e)		/* D61: a 40-byte MODIFY still needs FIRED, as ADD does */
		return add || !(uk->event & KEVENT_TIMER_FIRED) ? -EINVAL : 0;
	if (!(uk->event & KEVENT_TIMER_FIRED))
		return -EINVAL;
	err = spec_check(&e->ext.timer);
	return err ? err : 1;
}

static void ptimer_setup(struct kitem *k, const struct ukevent_ext *e)
{
	grid_set(k->q, k, &e->ext.timer);	/* k is not yet visible */
}

/* D61: a new setting replaces the grid and discards pending expiries. */
static void ptimer_rearm(struct kitem *k, const struct ukevent_ext *e)
{
	struct kqueue *q = k->q;

	pthread_mutex_lock(&q->lock);
	grid_set(q, k, &e->ext.timer);
	unready_locked(q, k);
	pthread_mutex_unlock(&q->lock);
}

/* Plain korigin_fire(): point ret_data[0] of the current setting is due. */
static int ptimer_fire(struct kitem *k, const struct korigin_result *res)
{
	return korigin_timer_fire(k, __atomic_load_n(&grid_of(k)->gen, __ATOMIC_RELAXED),
				  res->ret_data[0]);
}

/* D58: the count, from the grid at this clock reading (q->lock held). */
static void ptimer_deliver(struct kitem *k, struct ukevent *out)
{
	out->ret_data[0] = grid_take(k->q, k);
	out->ret_data[1] = 0;
}

/*
 * D41, D58: a faulted WAIT delivered nothing, so the count goes back, even
 * when the timer fired again meanwhile (it fires without q->ctl).
 */
static void ptimer_undeliver(struct kitem *k)
{
	struct kgrid *g = grid_of(k);

	g->next = g->taken;	/* D58: the count is delivered again */
}

static void ptimer_query(struct kitem *k, struct ukevent_ext *e)
{
	grid_query(k->q, k, e);
}

const struct ktype kptimer_type = {
	.name = "posix_timer",
	.needs = KR_BIT(KR_POSIX_TIMER),
	.limit = KEVENT_LIMIT_TIMERS,	/* D58: a timer like KEVENT_TIMER */
	.always_queue = true,
	.feature = KEVENT_FEAT_POSIX_TIMER,
	.priv_size = sizeof(struct kgrid),
	.ext_check = ptimer_ext_check,
	.setup = ptimer_setup,
	.rearm = ptimer_rearm,
	.fire = ptimer_fire,
	.deliver = ptimer_deliver,
	.undeliver = ptimer_undeliver,
	.query = ptimer_query,
};
