// SPDX-License-Identifier: GPL-2.0
/*
 * The engine: configuration, the origin table, per-uid limits, live-object
 * counters, and the worker that runs waiter deadlines and serves queues
 * whose waiters an origin fire or an interrupt made due.
 *
 * LOCKING
 *  - core->lock: the deadline heap, the work list, kqueue.work_pending and
 *    the stop flag.  Innermost but for uid_lock: taken under a queue's
 *    control lock or ready lock, never the other way round.  The worker
 *    drops it before it serves a queue.
 *    The clock-watch thread (D48) takes it to re-base realtime deadlines.
 *  - core->uid_lock: serialises inserts into the uid hash; a leaf.  Lookups
 *    take no lock (insert-only chains, records freed only by kcore_free),
 *    and charges are atomic operations on struct kuid.
 *  - the global origin table is a set of atomic pointers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static _Atomic(const struct korigin_ops *) korigin_table[KEVENT_MAX];

int korigin_register(__u32 type, const struct korigin_ops *ops)
{
	if (type >= KEVENT_MAX)
		return -EINVAL;
	if (ops && (!ops->attach || !ops->detach))
		return -EINVAL;
	atomic_store(&korigin_table[type], ops);
	return 0;
}

const struct korigin_ops *kcore_origin(const struct kcore *core, __u32 type)
{
	if (type >= KEVENT_MAX)
		return NULL;
	if (core->origins[type])
		return core->origins[type];
	return atomic_load(&korigin_table[type]);
}

void *kcore_alloc(struct kcore *core, size_t len)
{
	if (core->cfg.alloc_fail && core->cfg.alloc_fail(core->cfg.alloc_fail_ctx))
		return NULL;
	return calloc(1, len);
}

/* For buffers that are filled at once: no zeroing. */
void *kcore_alloc_raw(struct kcore *core, size_t len)
{
	if (core->cfg.alloc_fail && core->cfg.alloc_fail(core->cfg.alloc_fail_ctx))
		return NULL;
	return malloc(len);
}

static __u64 monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

__u64 kcore_now(const struct kcore *core)
{
	if (core->cfg.clock_ns)
		return core->cfg.clock_ns(core->cfg.clock_ctx);
	return monotonic_ns();
}

void kcore_revisions(unsigned int *lowest, unsigned int *highest)
{
	*lowest = KCORE_REV_LOWEST;
	*highest = KCORE_REV_HIGHEST;
}

/*
 * Revision 3 (D58): a POSIX timer's clock.  A deterministic core (tests,
 * fuzzer) has one clock, cfg.clock_ns, for every clock id.
 */
__u64 kcore_clock(const struct kcore *core, clockid_t clock)
{
	struct timespec ts;

	if (core->cfg.clock_ns)
		return core->cfg.clock_ns(core->cfg.clock_ctx);
	clock_gettime(clock, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* ---- per-uid limits ---- */

static struct kuid *uid_find(struct kcore *core, unsigned int b, uid_t uid)
{
	struct kuid *u;

	for (u = atomic_load_explicit(&core->uids[b], memory_order_acquire); u; u = u->next)
		if (u->uid == uid)
			return u;
	return NULL;
}

/*
 * The uid's record, created on first use.  Records live until kcore_free(),
 * so readers walk the chains without a lock: a record is complete before
 * the release store that publishes it.
 */
struct kuid *kcore_uid_get(struct kcore *core, uid_t uid)
{
	unsigned int b = (unsigned int)uid % 64;
	struct kuid *u = uid_find(core, b, uid);

	if (u)
		return u;
	pthread_mutex_lock(&core->uid_lock);
	u = uid_find(core, b, uid);
	if (!u) {
		u = kcore_alloc(core, sizeof(*u));
		if (u) {
			u->uid = uid;
			u->next = atomic_load_explicit(&core->uids[b], memory_order_relaxed);
			atomic_store_explicit(&core->uids[b], u, memory_order_release);
		}
	}
	pthread_mutex_unlock(&core->uid_lock);
	return u;
}

/* 0, or -ENOSPC when res is at its cap for u. */
int kuid_charge(struct kcore *core, struct kuid *u, int res)
{
	unsigned int cap = core->cfg.caps[res];
	unsigned int cur = atomic_load(&u->used[res]);

	do {
		if (cap && cur >= cap)
			return -ENOSPC;
	} while (!atomic_compare_exchange_weak(&u->used[res], &cur, cur + 1));
	return 0;
}

void kuid_uncharge(struct kuid *u, int res)
{
	atomic_fetch_sub(&u->used[res], 1);
}

int kcore_uid_charge(struct kcore *core, uid_t uid, unsigned int limit)
{
	struct kuid *u;

	if (limit >= KEVENT_LIMIT_NR || limit == KEVENT_LIMIT_EXPIRIES)
		return -EINVAL;	/* a budget the timer origin spends, not a count */
	u = kcore_uid_get(core, uid);
	if (!u)
		return -ENOMEM;
	return kuid_charge(core, u, (int)limit);
}

void kcore_uid_uncharge(struct kcore *core, uid_t uid, unsigned int limit)
{
	struct kuid *u = kcore_uid_get(core, uid);

	if (u && limit < KEVENT_LIMIT_NR && limit != KEVENT_LIMIT_EXPIRIES)
		kuid_uncharge(u, (int)limit);
}

unsigned int kcore_uid_used(struct kcore *core, uid_t uid, unsigned int limit)
{
	struct kuid *u = kcore_uid_get(core, uid);

	if (!u || limit >= KEVENT_LIMIT_NR)
		return 0;
	return atomic_load(&u->used[limit]);
}

/* The expiry budget of one window: a tenth of the per-second cap, at least 1. */
static unsigned int expiry_window_cap(const struct kcore *core)
{
	unsigned int cap = core->cfg.caps[KEVENT_LIMIT_EXPIRIES];

	return cap / 10 ? cap / 10 : 1;
}

/*
 * Windows of a tenth of a second, not of a second: an over-budget uid's
 * timers resume within 100 ms, and never in a burst of a whole second's
 * budget.  Only the timer origin charges, from one thread; INFO reads.
 */
__u64 korigin_expiry_charge(struct kitem *k, __u64 now_ns)
{
	struct kcore *core = k->q->core;
	struct kuid *u = k->uid;
	__u64 win = now_ns / KORIGIN_BUDGET_WINDOW_NS;

	if (!core->cfg.caps[KEVENT_LIMIT_EXPIRIES] || !u)
		return 0;
	if (atomic_load_explicit(&u->exp_window, memory_order_relaxed) != win) {
		atomic_store_explicit(&u->used[KEVENT_LIMIT_EXPIRIES], 0, memory_order_relaxed);
		atomic_store_explicit(&u->exp_window, win, memory_order_relaxed);
	}
	if (atomic_load_explicit(&u->used[KEVENT_LIMIT_EXPIRIES], memory_order_relaxed) >=
	    expiry_window_cap(core))
		return (win + 1) * KORIGIN_BUDGET_WINDOW_NS;
	atomic_fetch_add_explicit(&u->used[KEVENT_LIMIT_EXPIRIES], 1, memory_order_relaxed);
	return 0;
}

/* INFO's used of EXPIRIES: the current window's expiries, per second. */
unsigned int kuid_expiry_rate(const struct kcore *core, struct kuid *u)
{
	__u64 win = kcore_now(core) / KORIGIN_BUDGET_WINDOW_NS;
	unsigned int cap = core->cfg.caps[KEVENT_LIMIT_EXPIRIES], used;

	if (atomic_load_explicit(&u->exp_window, memory_order_relaxed) != win)
		return 0;
	used = 10 * atomic_load_explicit(&u->used[KEVENT_LIMIT_EXPIRIES], memory_order_relaxed);
	return used < cap ? used : cap;	/* a cap below 10 still has 1 a window */
}

int kcore_running_enter(struct kcore *core, const struct kcaller *caller)
{
	int err = kcore_uid_charge(core, caller->uid, KEVENT_LIMIT_RUNNING);

	return err == -ENOSPC ? -EAGAIN : err;
}

void kcore_running_exit(struct kcore *core, const struct kcaller *caller)
{
	kcore_uid_uncharge(core, caller->uid, KEVENT_LIMIT_RUNNING);
}

/* ---- the deadline heap (core->lock held) ---- */

static void heap_set(struct kcore *core, size_t i, struct kwaiter *w)
{
	core->heap[i] = w;
	w->heap_idx = i;
}

static void heap_up(struct kcore *core, size_t i)
{
	struct kwaiter *w = core->heap[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (core->heap[parent]->deadline <= w->deadline)
			break;
		heap_set(core, i, core->heap[parent]);
		i = parent;
	}
	heap_set(core, i, w);
}

static void heap_down(struct kcore *core, size_t i)
{
	struct kwaiter *w = core->heap[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= core->heap_len)
			break;
		if (c + 1 < core->heap_len &&
		    core->heap[c + 1]->deadline < core->heap[c]->deadline)
			c++;
		if (w->deadline <= core->heap[c]->deadline)
			break;
		heap_set(core, i, core->heap[c]);
		i = c;
	}
	heap_set(core, i, w);
}

/* ---- the clock watch: ABSTIME CLOCK_REALTIME deadlines (D48) ---- */

static __u64 realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/*
 * The core-clock deadline of a CLOCK_REALTIME one, measured now: the heap
 * stays on one clock, and each clock_settime re-measures (rebase_locked).
 */
static __u64 rt_to_core(const struct kcore *core, __u64 rt)
{
	__u64 now = kcore_now(core), rt_now = realtime_ns(), d;

	if (rt <= rt_now)
		return now;
	d = now + (rt - rt_now);
	return d < now || d == KEVENT_TIMEOUT_INFINITE ? KEVENT_TIMEOUT_INFINITE - 1 : d;
}

/*
 * Arms clock_fd a day ahead with TFD_TIMER_CANCEL_ON_SET: its read ends with
 * ECANCELED when CLOCK_REALTIME is set, which is all the watch needs (the
 * deadlines themselves stay in the heap).  A read that returns the expiry
 * just re-arms.
 */
static int clock_arm(struct kcore *core)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	clock_gettime(CLOCK_REALTIME, &its.it_value);
	its.it_value.tv_sec += 86400;
	if (timerfd_settime(core->clock_fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET,
			    &its, NULL))
		return -errno;
	return 0;
}

/* The clock was set: every realtime deadline in the heap is measured again. */
static void rebase_locked(struct kcore *core)
{
	size_t i;

	for (i = 0; i < core->heap_len; i++)
		if (core->heap[i]->rt_deadline)
			core->heap[i]->deadline = rt_to_core(core, core->heap[i]->rt_deadline);
	for (i = core->heap_len / 2; i-- > 0;)
		heap_down(core, i);
}

static void *clock_main(void *arg)
{
	struct kcore *core = arg;
	__u64 n;

	for (;;) {
		ssize_t r = read(core->clock_fd, &n, sizeof(n));
		int err = r < 0 ? errno : 0;

		pthread_mutex_lock(&core->lock);
		if (core->stop) {
			pthread_mutex_unlock(&core->lock);
			return NULL;
		}
		/* Re-arm first: a set after it shows at the next read. */
		if (err != EINTR && err != EAGAIN)
			clock_arm(core);
		if (err == ECANCELED)
			rebase_locked(core);
		pthread_mutex_unlock(&core->lock);
		/* The worker measures its sleep against the new first deadline. */
		if (err == ECANCELED && core->have_thread)
			pthread_cond_signal(&core->cond);
	}
}

/*
 * Starts the watch with the worker, so that the daemon's fds and threads
 * are the same before and after its first ABSTIME call.  Without it (no
 * timerfd, no thread) a realtime deadline stays the relative timeout
 * measured when the call started.  A test clock (clock_ns) or the
 * deterministic mode never follows the wall clock.
 */
static void clock_watch_start(struct kcore *core)
{
	if (core->cfg.clock_ns || !core->have_thread)
		return;
	core->clock_fd = timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC);
	if (core->clock_fd < 0)
		return;
	if (!clock_arm(core) && !pthread_create(&core->clock_thread, NULL, clock_main, core))
		core->have_clock_thread = true;
}

/* Adds w (with a deadline) to the heap; -ENOMEM if it cannot grow. */
int kcore_heap_add(struct kcore *core, struct kwaiter *w)
{
	bool first;

	pthread_mutex_lock(&core->lock);
	/* D48: measured under the lock the watch re-bases with: no set is missed. */
	if (w->rt_deadline && core->have_clock_thread)
		w->deadline = rt_to_core(core, w->rt_deadline);
	if (core->heap_len == core->heap_cap) {
		size_t cap = core->heap_cap ? 2 * core->heap_cap : 64;
		struct kwaiter **h = NULL;

		if (!core->cfg.alloc_fail || !core->cfg.alloc_fail(core->cfg.alloc_fail_ctx))
			h = realloc(core->heap, cap * sizeof(*h));
		if (!h) {
			pthread_mutex_unlock(&core->lock);
			return -ENOMEM;
		}
		core->heap = h;
		core->heap_cap = cap;
	}
	core->heap[core->heap_len] = w;
	heap_up(core, core->heap_len++);
	first = w->heap_idx == 0;
	pthread_mutex_unlock(&core->lock);
	/* A new earliest deadline: the worker must shorten its sleep. */
	if (first && core->have_thread)
		pthread_cond_signal(&core->cond);
	return 0;
}

static void heap_remove_locked(struct kcore *core, struct kwaiter *w)
{
	size_t i = w->heap_idx;
	struct kwaiter *last;

	if (i == KHEAP_NONE)
		return;
	w->heap_idx = KHEAP_NONE;
	last = core->heap[--core->heap_len];
	if (last == w)
		return;
	heap_set(core, i, last);
	heap_up(core, i);
	heap_down(core, last->heap_idx);
}

void kcore_heap_del(struct kcore *core, struct kwaiter *w)
{
	pthread_mutex_lock(&core->lock);
	heap_remove_locked(core, w);
	pthread_mutex_unlock(&core->lock);
}

/* ---- the work list ---- */

static void schedule_locked(struct kcore *core, struct kqueue *q)
{
	if (q->work_pending)
		return;
	q->work_pending = true;
	kqueue_get(q);
	klist_add_tail(&q->work_node, &core->work);
}

/* q's waiters need serving (may be called with q's ready lock held). */
void kcore_schedule(struct kcore *core, struct kqueue *q)
{
	pthread_mutex_lock(&core->lock);
	schedule_locked(core, q);
	pthread_mutex_unlock(&core->lock);
	if (core->have_thread)
		pthread_cond_signal(&core->cond);
}

/* Moves every expired waiter off the heap and schedules its queue. */
static void expire_locked(struct kcore *core, __u64 now)
{
	while (core->heap_len && core->heap[0]->deadline <= now) {
		struct kwaiter *w = core->heap[0];

		heap_remove_locked(core, w);
		atomic_fetch_or(&w->flags, KWAIT_EXPIRED);
		atomic_store(&w->q->due, true);
		schedule_locked(core, w->q);
	}
}

/* Serves one scheduled queue with core->lock dropped; false if none. */
static bool serve_one_locked(struct kcore *core)
{
	struct kqueue *q;

	if (klist_empty(&core->work))
		return false;
	q = klist_entry(core->work.next, struct kqueue, work_node);
	klist_del(&q->work_node);
	q->work_pending = false;
	core->busy++;
	pthread_mutex_unlock(&core->lock);
	kqueue_service(q);
	kqueue_put(q);
	pthread_mutex_lock(&core->lock);
	core->busy--;
	pthread_cond_broadcast(&core->idle);
	return true;
}

void kcore_run_deadlines(struct kcore *core)
{
	pthread_mutex_lock(&core->lock);
	do
		expire_locked(core, kcore_now(core));
	while (serve_one_locked(core));
	pthread_mutex_unlock(&core->lock);
}

void kcore_sync(struct kcore *core)
{
	pthread_mutex_lock(&core->lock);
	for (;;) {
		while (serve_one_locked(core))
			;
		if (!core->busy)
			break;
		pthread_cond_wait(&core->idle, &core->lock);
	}
	pthread_mutex_unlock(&core->lock);
}

static void worker_sleep_locked(struct kcore *core)
{
	struct timespec ts;
	__u64 wait_ns, now;

	if (!core->heap_len) {
		pthread_cond_wait(&core->cond, &core->lock);
		return;
	}
	now = kcore_now(core);
	wait_ns = core->heap[0]->deadline > now ? core->heap[0]->deadline - now : 0;
	if (wait_ns > 1000000000ull * 3600)
		wait_ns = 1000000000ull * 3600;
	wait_ns += monotonic_ns();
	ts.tv_sec = (time_t)(wait_ns / 1000000000ull);
	ts.tv_nsec = (long)(wait_ns % 1000000000ull);
	pthread_cond_timedwait(&core->cond, &core->lock, &ts);
}

static void *worker_main(void *arg)
{
	struct kcore *core = arg;

	pthread_mutex_lock(&core->lock);
	while (!core->stop) {
		expire_locked(core, kcore_now(core));
		if (serve_one_locked(core))
			continue;
		worker_sleep_locked(core);
	}
	pthread_mutex_unlock(&core->lock);
	return NULL;
}

static int start_worker(struct kcore *core)
{
	pthread_condattr_t ca;
	int err;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	err = pthread_cond_init(&core->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (err)
		return -err;
	pthread_cond_init(&core->idle, NULL);
	if (core->cfg.deterministic)
		return 0;
	err = pthread_create(&core->thread, NULL, worker_main, core);
	if (err) {
		pthread_cond_destroy(&core->cond);
		pthread_cond_destroy(&core->idle);
		return -err;
	}
	core->have_thread = true;
	return 0;
}

int kcore_new(const struct kcore_config *cfg, struct kcore **ret)
{
	struct kcore *core;
	int err;

	core = calloc(1, sizeof(*core));
	if (!core)
		return -ENOMEM;
	core->cfg = *cfg;
	core->clock_fd = -1;
	memcpy(core->origins, cfg->origins, sizeof(core->origins));
	if (!core->cfg.max_ctl_num || core->cfg.max_ctl_num >= KEVENT_MAX_EVENTS)
		core->cfg.max_ctl_num = KEVENT_MAX_EVENTS - 1;
	if (!core->cfg.max_get_nr || core->cfg.max_get_nr >= KEVENT_MAX_EVENTS)
		core->cfg.max_get_nr = KEVENT_MAX_EVENTS - 1;
	klist_init(&core->work);
	pthread_mutex_init(&core->lock, NULL);
	pthread_mutex_init(&core->uid_lock, NULL);
	err = start_worker(core);
	if (err) {
		pthread_mutex_destroy(&core->lock);
		pthread_mutex_destroy(&core->uid_lock);
		free(core);
		return err;
	}
	clock_watch_start(core);
	*ret = core;
	return 0;
}

void kcore_free(struct kcore *core)
{
	unsigned int b;

	if (!core)
		return;
	if (core->have_thread) {
		pthread_mutex_lock(&core->lock);
		core->stop = true;
		pthread_mutex_unlock(&core->lock);
		pthread_cond_signal(&core->cond);
		pthread_join(core->thread, NULL);
	}
	if (core->have_clock_thread) {
		/* stop is set: a timer that expires now ends its read. */
		struct itimerspec its = { { 0, 0 }, { 0, 1 } };

		timerfd_settime(core->clock_fd, TFD_TIMER_ABSTIME, &its, NULL);
		pthread_join(core->clock_thread, NULL);
	}
	if (core->clock_fd >= 0)
		close(core->clock_fd);
	/* Queues released earlier may still sit on the work list. */
	kcore_run_deadlines(core);
	for (b = 0; b < 64; b++) {
		struct kuid *u = atomic_load(&core->uids[b]);

		while (u) {
			struct kuid *next = u->next;

			free(u);
			u = next;
		}
	}
	free(core->heap);
	pthread_cond_destroy(&core->idle);
	pthread_cond_destroy(&core->cond);
	pthread_mutex_destroy(&core->lock);
	pthread_mutex_destroy(&core->uid_lock);
	free(core);
}

void kcore_counters(const struct kcore *core, struct kcore_counters *out)
{
	struct kcore *c = (struct kcore *)core;

	out->queues = atomic_load(&c->n_queues);
	out->kevents = atomic_load(&c->n_kevents);
	out->waiters = atomic_load(&c->n_waiters);
	out->ready = atomic_load(&c->n_ready);
}
