/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fixture for the core's Criterion tests: a deterministic core with the test
 * origin installed for TIMER, POLL and SOCKET, an injectable clock, one queue
 * with a ring, and simulated user memory holding the ukevent arrays.
 */
#ifndef KEVENT_CORE_TESTS_HELPERS_H
#define KEVENT_CORE_TESTS_HELPERS_H

#ifdef KTEST_TAP_SHIM
#include "tap-shim.h"
#else
#include <criterion/criterion.h>
#endif
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kcore.h"
#include "test-origin.h"
#include "test-uaccess.h"

#define NSLOTS		(2 * KEVENT_MAX_EVENTS + 16)

struct fixture {
	struct kcore_config cfg;
	struct kcore *core;
	struct kqueue *q;
	unsigned char *ring;
	__u64 now;
	struct kcaller me;
	struct ktest_mem mem;
	struct ukevent *uk;	/* NSLOTS entries of simulated user memory */
	long alloc_countdown;	/* fail when it reaches 0; < 0: never */
};

extern struct fixture F;

static inline __u64 fx_clock(void *ctx)
{
	return *(__u64 *)ctx;
}

static inline int fx_alloc_fail(void *ctx)
{
	long *n = ctx;

	if (*n < 0)
		return 0;
	return (*n)-- == 0;
}

/* Config only; fx_start() creates core and queue. */
static inline void fx_config(void)
{
	memset(&F, 0, sizeof(F));
	F.cfg.backend = KEVENT_BACKEND_CORE;
	F.cfg.deterministic = 1;
	F.cfg.clock_ns = fx_clock;
	F.cfg.clock_ctx = &F.now;
	F.cfg.origins[KEVENT_TIMER] = &ktest_origin_ops;
	F.cfg.origins[KEVENT_POLL] = &ktest_origin_ops;
	F.cfg.origins[KEVENT_SOCKET] = &ktest_origin_ops;
	F.cfg.alloc_fail = fx_alloc_fail;
	F.cfg.alloc_fail_ctx = &F.alloc_countdown;
	F.alloc_countdown = -1;
	F.now = 1000000000ull;
	F.me = (struct kcaller){ 100, 100, 1000, 1000 };
	F.uk = calloc(NSLOTS, sizeof(struct ukevent));
	cr_assert(F.uk);
	ktest_mem_init(&F.mem, F.uk, NSLOTS * sizeof(struct ukevent));
	F.ring = aligned_alloc(4096, KEVENT_RING_SIZE);
	cr_assert(F.ring);
	memset(F.ring, 0, KEVENT_RING_SIZE);
}

static inline void fx_start(void)
{
	cr_assert_eq(kcore_new(&F.cfg, &F.core), 0);
	cr_assert_eq(kqueue_open(F.core, &F.me, F.ring, &F.q), 0);
}

static inline void fx_setup(void)
{
	ktest_origin_reset();
	fx_config();
	fx_start();
}

/* Everything is freed: no live object, no attached kevent, no charge left. */
static inline void fx_assert_empty(void)
{
	struct kcore_counters c;
	unsigned int i;

	kcore_counters(F.core, &c);
	cr_assert_eq(c.queues, 0, "queues left: %llu", (unsigned long long)c.queues);
	cr_assert_eq(c.kevents, 0, "kevents left: %llu", (unsigned long long)c.kevents);
	cr_assert_eq(c.waiters, 0, "waiters left: %llu", (unsigned long long)c.waiters);
	cr_assert_eq(c.ready, 0, "ready left: %llu", (unsigned long long)c.ready);
	cr_assert_eq(ktest_attached(), 0);
	for (i = 0; i < KEVENT_LIMIT_NR; i++)
		if (i != KEVENT_LIMIT_RUNNING)
			cr_assert_eq(kcore_uid_used(F.core, F.me.uid, i), 0, "limit %u", i);
}

/*
 * The end of every test body (Criterion does not fail a test for an
 * assertion in .fini): release the queue, let the worker settle, and check
 * that nothing leaked.
 */
static inline void fx_finish(void)
{
	if (F.q)
		kqueue_release(F.q);
	F.q = NULL;
	kcore_run_deadlines(F.core);
	kcore_sync(F.core);
	fx_assert_empty();
}

static inline void fx_teardown(void)
{
	if (F.q)
		kqueue_release(F.q);
	F.q = NULL;
	if (F.core)
		kcore_free(F.core);
	free(F.ring);
	free(F.uk);
}

/* A Criterion test whose body ends with the leak check. */
#define CORE_TEST(suite, name)					\
	static void suite##_##name##_body(void);		\
	Test(suite, name)					\
	{							\
		suite##_##name##_body();			\
		fx_finish();					\
	}							\
	static void suite##_##name##_body(void)

/* One ioctl through both dispatcher phases, with the fixture's memory. */
static inline int fx_ioctl_q(struct kqueue *q, unsigned int cmd, void *arg, void *reply)
{
	struct kdisp_plan plan;
	int ret;

	ret = kdisp_plan(q, cmd, arg, _IOC_DIR(cmd) & _IOC_WRITE ? _IOC_SIZE(cmd) : 0,
			 &F.me, &plan);
	if (ret)
		return ret;
	return kdisp_execute(q, &plan, &F.me, &F.mem.ua, reply, NULL, NULL);
}

static inline int fx_ctl_q(struct kqueue *q, __u32 cmd, __u32 num, struct ukevent *arr)
{
	struct kevent_ctl_arg a = { cmd, num, ktest_mem_addr(&F.mem, (size_t)((char *)arr - (char *)F.uk)) };

	return fx_ioctl_q(q, KEVENT_IOC_CTL, &a, NULL);
}

static inline int fx_ctl(__u32 cmd, __u32 num, struct ukevent *arr)
{
	return fx_ctl_q(F.q, cmd, num, arr);
}

static inline int fx_get_q(struct kqueue *q, __u32 min_nr, __u32 max_nr, __u64 timeout,
			   struct ukevent *out)
{
	struct kevent_get_events_arg a = {
		.min_nr = min_nr, .max_nr = max_nr, .timeout_ns = timeout,
		.events = ktest_mem_addr(&F.mem, (size_t)((char *)out - (char *)F.uk)),
	};

	return fx_ioctl_q(q, KEVENT_IOC_GET_EVENTS, &a, NULL);
}

static inline int fx_get(__u32 min_nr, __u32 max_nr, struct ukevent *out)
{
	return fx_get_q(F.q, min_nr, max_nr, 0, out);
}

static inline struct ukevent uk_make(__u32 type, __u64 id, __u32 event, __u32 req, __u32 cookie)
{
	struct ukevent uk;

	memset(&uk, 0, sizeof(uk));
	uk.id.raw_u64 = id;
	uk.type = type;
	uk.event = event;
	uk.req_flags = req;
	uk.user[0] = cookie;
	uk.user[1] = ~cookie;
	return uk;
}

/* Registers n timer kevents with ids base..base+n-1 (one CTL call). */
static inline void fx_add_n(__u64 base, unsigned int n, __u32 req)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		F.uk[i] = uk_make(KEVENT_TIMER, base + i, KEVENT_TIMER_FIRED, req, (__u32)(base + i));
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, n, F.uk), 0);
}

static inline __u32 ring_index(const unsigned char *ring)
{
	return __atomic_load_n((const __u32 *)ring, __ATOMIC_ACQUIRE);
}

static inline const struct mukevent *ring_slot(const unsigned char *ring, unsigned int s)
{
	return (const struct mukevent *)(ring + KEVENT_RING_SLOT_OFFSET(s));
}

static inline struct kcore_counters fx_counters(void)
{
	struct kcore_counters c;

	kcore_counters(F.core, &c);
	return c;
}

#endif /* KEVENT_CORE_TESTS_HELPERS_H */
