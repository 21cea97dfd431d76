// SPDX-License-Identifier: GPL-2.0
/* Per-uid caps (B7, D18), the RUNNING bracket, and ENOMEM without leaks. */
#include "helpers.h"

struct fixture F;

static void fx_setup_caps(void)
{
	ktest_origin_reset();
	fx_config();
	F.cfg.caps[KEVENT_LIMIT_QUEUES] = 2;
	F.cfg.caps[KEVENT_LIMIT_KEVENTS] = 6;
	F.cfg.caps[KEVENT_LIMIT_TIMERS] = 4;
	F.cfg.caps[KEVENT_LIMIT_FD_KEVENTS] = 1;
	F.cfg.caps[KEVENT_LIMIT_RUNNING] = 1;
	fx_start();
}

TestSuite(limits, .init = fx_setup_caps, .fini = fx_teardown);

CORE_TEST(limits, D18_queue_cap_is_emfile)
{
	struct kqueue *q2, *q3;
	struct kcaller other = { 200, 200, 2000, 2000 };

	cr_assert_eq(kqueue_open(F.core, &F.me, NULL, &q2), 0);
	cr_assert_eq(kqueue_open(F.core, &F.me, NULL, &q3), -EMFILE);
	cr_assert_eq(kqueue_open(F.core, &other, NULL, &q3), 0, "per uid");
	kqueue_release(q3);
	kqueue_release(q2);
	cr_assert_eq(kqueue_open(F.core, &F.me, NULL, &q2), 0, "released queues give it back");
	kqueue_release(q2);
}

CORE_TEST(limits, D18_kevent_caps_are_enospc_per_entry)
{
	unsigned int i;

	for (i = 0; i < 5; i++)
		F.uk[i] = uk_make(KEVENT_TIMER, i, KEVENT_TIMER_FIRED, 0, i);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 5, F.uk), 1);
	cr_assert_eq(F.uk[0].id.raw_u64, 4, "the fifth timer is over the timer cap");
	cr_assert_eq(F.uk[0].ret_flags, KEVENT_RET_BROKEN | KEVENT_RET_DONE);
	cr_assert_eq((int)F.uk[0].ret_data[1], -ENOSPC);
	F.uk[0] = uk_make(KEVENT_POLL, 10, 1, 0, 10);
	F.uk[1] = uk_make(KEVENT_SOCKET, 11, 1, 0, 11);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 2, F.uk), 1);
	cr_assert_eq(F.uk[0].id.raw_u64, 11, "one fd kevent allowed");
	cr_assert_eq((int)F.uk[0].ret_data[1], -ENOSPC);
	cr_assert_eq(kcore_uid_used(F.core, F.me.uid, KEVENT_LIMIT_KEVENTS), 5);
	F.uk[0] = uk_make(KEVENT_POLL, 12, KTEST_READY_AT_ADD, 0, 12);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 1, F.uk), 1);
	cr_assert_eq((int)F.uk[0].ret_data[1], -ENOSPC, "the cap applies before attach");
	/* removing one frees its charges */
	F.uk[0] = uk_make(KEVENT_TIMER, 0, 0, 0, 0);
	cr_assert_eq(fx_ctl(KEVENT_CTL_REMOVE, 1, F.uk), 0);
	cr_assert_eq(kcore_uid_used(F.core, F.me.uid, KEVENT_LIMIT_TIMERS), 3);
	F.uk[0] = uk_make(KEVENT_TIMER, 20, KEVENT_TIMER_FIRED, 0, 20);
	F.uk[1] = uk_make(KEVENT_TIMER, 21, KEVENT_TIMER_FIRED, 0, 21);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 2, F.uk), 1, "kevent cap 6: 5 used, one more fits");
	cr_assert_eq((int)F.uk[0].ret_data[1], -ENOSPC);
}

CORE_TEST(limits, D18_running_cap_is_eagain)
{
	struct kcaller other = { 200, 200, 2000, 2000 };

	cr_assert_eq(kcore_running_enter(F.core, &F.me), 0);
	cr_assert_eq(kcore_running_enter(F.core, &F.me), -EAGAIN);
	cr_assert_eq(kcore_running_enter(F.core, &other), 0);
	kcore_running_exit(F.core, &other);
	kcore_running_exit(F.core, &F.me);
	cr_assert_eq(kcore_running_enter(F.core, &F.me), 0);
	kcore_running_exit(F.core, &F.me);
	cr_assert_eq(kcore_uid_used(F.core, F.me.uid, KEVENT_LIMIT_RUNNING), 0);
}

TestSuite(enomem, .init = fx_setup, .fini = fx_teardown);

/*
 * A whole life (open, ADD, fire, GET, park, MODIFY, REMOVE, release) with
 * allocation n failing, for every n until a run sees no failure: every
 * call fails cleanly and nothing leaks (counters; ASan in that build).
 */
static int one_life(long fail_at)
{
	struct kqueue *q = NULL;
	struct ukevent *out = &F.uk[KEVENT_MAX_EVENTS];
	unsigned int i;
	int ret;

	F.alloc_countdown = fail_at;
	ret = kqueue_open(F.core, &F.me, F.ring, &q);
	if (ret) {
		cr_assert_eq(ret, -ENOMEM);
		goto out;
	}
	for (i = 0; i < 40; i++)
		F.uk[i] = uk_make(KEVENT_TIMER, i, KEVENT_TIMER_FIRED,
				  i % 2 ? KEVENT_REQ_ONESHOT : 0, i);
	ret = fx_ctl_q(q, KEVENT_CTL_ADD, 40, F.uk);
	cr_assert(ret >= 0 || ret == -ENOMEM, "ADD: %d", ret);
	for (i = 0; i < 40; i++)
		ktest_fire(i, i);
	ret = fx_get_q(q, 1, 20, 0, out);
	cr_assert(ret >= 0 || ret == -ENOMEM);
	ret = fx_get_q(q, 100, 100, 5, out);	/* would park: deterministic, wr NULL */
	cr_assert(ret >= 0 || ret == -ENOMEM);
	for (i = 0; i < 10; i++)
		F.uk[i] = uk_make(KEVENT_TIMER, i, KTEST_READY_AT_MODIFY, 0, i);
	ret = fx_ctl_q(q, KEVENT_CTL_MODIFY, 10, F.uk);
	cr_assert(ret >= 0 || ret == -ENOMEM || ret == -EINVAL);
	for (i = 0; i < 5; i++)
		F.uk[i] = uk_make(KEVENT_TIMER, 2 * i, 0, 0, 2 * i);
	ret = fx_ctl_q(q, KEVENT_CTL_REMOVE, 5, F.uk);
	cr_assert(ret >= 0 || ret == -ENOMEM || ret == -EINVAL);
	kqueue_release(q);
out:
	kcore_run_deadlines(F.core);
	fx_assert_empty();
	return F.alloc_countdown >= 0;	/* not reached: the run saw no failure */
}

CORE_TEST(enomem, ENOMEM_at_every_allocation_leaks_nothing)
{
	long n;

	kqueue_release(F.q);
	F.q = NULL;
	for (n = 0; n < 100000; n++)
		if (one_life(n))
			break;
	cr_assert(n > 40, "the life has more than 40 allocations (%ld)", n);
	F.alloc_countdown = -1;
}
