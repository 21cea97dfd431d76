// SPDX-License-Identifier: GPL-2.0
/* kevent_get_events(): FIFO, ONESHOT, re-fire, bounds, copy faults (A6, A9, D10, D12, D21). */
#include "helpers.h"

struct fixture F;

TestSuite(get_events, .init = fx_setup, .fini = fx_teardown);

#define OUT (&F.uk[KEVENT_MAX_EVENTS])

CORE_TEST(get_events, FIFO_order_of_fires)
{
	__u64 order[] = { 5, 2, 9, 0, 7 };
	unsigned int i;

	fx_add_n(0, 10, 0);
	for (i = 0; i < 5; i++)
		cr_assert_eq(ktest_fire(order[i], (__u32)i), 1);
	cr_assert_eq(fx_get(1, 3, OUT), 3);
	cr_assert_eq(fx_get(1, 10, OUT + 3), 2);
	for (i = 0; i < 5; i++) {
		cr_assert_eq(OUT[i].id.raw_u64, order[i]);
		cr_assert_eq(OUT[i].ret_data[0], i);
		cr_assert_eq(OUT[i].ret_flags, KEVENT_RET_DONE);
		cr_assert_eq(OUT[i].user[0], (__u32)order[i], "cookie copied back");
		cr_assert_eq(OUT[i].type, KEVENT_TIMER);
	}
	cr_assert_eq(fx_get(1, 10, OUT), 0);
}

CORE_TEST(get_events, ONESHOT_freed_after_copy_periodic_stays)
{
	F.uk[0] = uk_make(KEVENT_TIMER, 1, KEVENT_TIMER_FIRED, KEVENT_REQ_ONESHOT, 1);
	F.uk[1] = uk_make(KEVENT_TIMER, 2, KEVENT_TIMER_FIRED, 0, 2);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 2, F.uk), 0);
	cr_assert_eq(ktest_fire(1, 0), 1);
	cr_assert_eq(ktest_fire(2, 0), 1);
	cr_assert_eq(fx_counters().kevents, 2, "ONESHOT stays until copied out");
	cr_assert_eq(fx_get(2, 2, OUT), 2);
	cr_assert_eq(fx_counters().kevents, 1);
	cr_assert_eq(ktest_attached(), 1, "detached from its origin");
	cr_assert_eq(ktest_fire(1, 0), 0, "gone");
	cr_assert_eq(ktest_fire(2, 0), 1, "periodic: fires again");
	cr_assert_eq(fx_get(1, 2, OUT), 1);
	cr_assert_eq(OUT[0].id.raw_u64, 2);
}

CORE_TEST(get_events, ONESHOT_fires_once)
{
	F.uk[0] = uk_make(KEVENT_TIMER, 1, KEVENT_TIMER_FIRED, KEVENT_REQ_ONESHOT, 1);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 1, F.uk), 0);
	cr_assert_eq(ktest_fire(1, 1), 1);
	cr_assert_eq(ktest_fire(1, 2), 0, "the origin was told to stop");
	cr_assert_eq(fx_get(1, 4, OUT), 1);
	cr_assert_eq(OUT[0].ret_data[0], 1);
}

CORE_TEST(get_events, A6_refire_only_after_dequeue_A9_merge_keeps_last)
{
	fx_add_n(3, 1, 0);
	cr_assert_eq(ktest_fire(3, 10), 1);
	cr_assert_eq(ktest_fire(3, 11), 1);
	cr_assert_eq(ktest_fire(3, 12), 1);
	cr_assert_eq(fx_counters().ready, 1, "ready at most once");
	cr_assert_eq(ring_index(F.ring), 1, "D3: a merge writes no record");
	cr_assert_eq(fx_get(1, 8, OUT), 1);
	cr_assert_eq(OUT[0].ret_data[0], 12, "the last expiry wins");
	cr_assert_eq(fx_get(1, 8, OUT), 0, "no re-fire without new activity (D21)");
	cr_assert_eq(ktest_fire(3, 13), 1);
	cr_assert_eq(fx_get(1, 8, OUT), 1);
	cr_assert_eq(OUT[0].ret_data[0], 13);
	cr_assert_eq(ring_index(F.ring), 2);
}

CORE_TEST(get_events, D21_ret_flags_rebuilt_and_broken_stays_registered)
{
	fx_add_n(3, 1, 0);
	cr_assert_eq(ktest_break(3, -EPIPE), 1);
	cr_assert_eq(fx_get(1, 8, OUT), 1);
	cr_assert_eq(OUT[0].ret_flags, KEVENT_RET_BROKEN | KEVENT_RET_DONE);
	cr_assert_eq((int)OUT[0].ret_data[1], -EPIPE);
	cr_assert_eq(fx_counters().kevents, 1, "a broken periodic kevent stays until REMOVE");
	cr_assert_eq(ktest_fire(3, 1), 0, "the origin stopped reporting it");
	/* MODIFY re-arms it; the next fire carries no BROKEN */
	F.uk[0] = uk_make(KEVENT_TIMER, 3, KEVENT_TIMER_FIRED, 0, 3);
	cr_assert_eq(fx_ctl(KEVENT_CTL_MODIFY, 1, F.uk), 0);
	cr_assert_eq(ktest_fire(3, 5), 1);
	cr_assert_eq(fx_get(1, 8, OUT), 1);
	cr_assert_eq(OUT[0].ret_flags, KEVENT_RET_DONE);
}

CORE_TEST(get_events, D12_bounds)
{
	struct kevent_get_events_arg a = { .min_nr = 5, .max_nr = 4 };
	struct kdisp_plan plan;

	a.events = ktest_mem_addr(&F.mem, 0);
	cr_assert_eq(kdisp_plan(F.q, KEVENT_IOC_GET_EVENTS, &a, sizeof(a), &F.me, &plan), -EINVAL);
	a.min_nr = 0;
	a.max_nr = 0;
	F.mem.reads = 0;
	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_GET_EVENTS, &a, NULL), 0);
	a.min_nr = 5000;
	a.max_nr = 100000;
	cr_assert_eq(kdisp_plan(F.q, KEVENT_IOC_GET_EVENTS, &a, sizeof(a), &F.me, &plan), 0);
	cr_assert_eq(plan.arg.get.max_nr, 4095, "clamped to 4095");
	cr_assert_eq(plan.arg.get.min_nr, 4095);
	cr_assert_eq(plan.out[0].len, 4095 * sizeof(struct ukevent));
}

CORE_TEST(get_events, returns_at_once_when_it_must_not_wait)
{
	struct kevent_get_events_arg a = { .min_nr = 3, .max_nr = 4, .timeout_ns = 5000 };

	fx_add_n(0, 4, 0);
	ktest_fire(1, 0);
	a.events = ktest_mem_addr(&F.mem, KEVENT_MAX_EVENTS * sizeof(struct ukevent));
	a.ioc_flags = KEVENT_GET_NONBLOCK;
	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_GET_EVENTS, &a, NULL), 1, "short return");
	ktest_fire(2, 0);
	a.ioc_flags = 0;
	a.timeout_ns = 0;
	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_GET_EVENTS, &a, NULL), 1, "timeout 0");
	ktest_fire(3, 0);
	a.timeout_ns = 1000;
	a.min_nr = 0;
	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_GET_EVENTS, &a, NULL), 1, "min_nr 0");
	a.ioc_flags = 0x2;
	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_GET_EVENTS, &a, NULL), -EINVAL,
		     "unknown ioc_flags are strict (A1)");
	a.ioc_flags = 0;
	a.flags = 0xdeadbeef;
	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_GET_EVENTS, &a, NULL), 0,
		     "the 2006 flags argument is ignored");
}

CORE_TEST(get_events, D10_probe_fault_first_middle_last_loses_nothing)
{
	unsigned int at[] = { 0, 5, 9 }, i;

	fx_add_n(0, 10, KEVENT_REQ_ONESHOT);
	for (i = 0; i < 10; i++)
		ktest_fire(i, i);
	for (i = 0; i < 3; i++) {
		F.mem.rfault_lo = (__u64)(uintptr_t)&OUT[at[i]] + 8;
		F.mem.rfault_hi = F.mem.rfault_lo + 1;
		cr_assert_eq(fx_get(1, 10, OUT), -EFAULT, "fault at %u", at[i]);
		cr_assert_eq(fx_counters().ready, 10, "nothing dequeued");
	}
	F.mem.rfault_lo = F.mem.rfault_hi = 0;
	cr_assert_eq(fx_get(10, 10, OUT), 10);
	for (i = 0; i < 10; i++)
		cr_assert_eq(OUT[i].id.raw_u64, i);
}

CORE_TEST(get_events, D10_late_write_fault_returns_the_prefix)
{
	unsigned int i;

	fx_add_n(0, 10, KEVENT_REQ_ONESHOT);
	for (i = 0; i < 10; i++)
		ktest_fire(i, i);
	/* middle: the probe passes, the buffer goes away, the copy fails at 4 */
	F.mem.wfault_lo = (__u64)(uintptr_t)&OUT[4] + 30;
	F.mem.wfault_hi = F.mem.wfault_lo + 1;
	F.mem.wfault_after = F.mem.writes + 1;
	cr_assert_eq(fx_get(1, 5, OUT), 4);
	cr_assert_eq(fx_counters().ready, 5, "five taken, four delivered, one lost");
	cr_assert_eq(fx_counters().kevents, 5, "the lost ONESHOT is freed too");
	/* last */
	F.mem.wfault_lo = (__u64)(uintptr_t)&OUT[2];
	F.mem.wfault_hi = F.mem.wfault_lo + 1;
	F.mem.wfault_after = F.mem.writes + 1;
	cr_assert_eq(fx_get(1, 3, OUT), 2);
	/* first: nothing copied is -EFAULT (take24) */
	F.mem.wfault_lo = (__u64)(uintptr_t)&OUT[0];
	F.mem.wfault_hi = F.mem.wfault_lo + 1;
	F.mem.wfault_after = F.mem.writes + 1;
	cr_assert_eq(fx_get(1, 3, OUT), -EFAULT);
	F.mem.wfault_lo = F.mem.wfault_hi = 0;
	F.mem.wfault_after = 0;
	cr_assert_eq(fx_counters().ready, 0);
	cr_assert_eq(fx_counters().kevents, 0);
}

/* The simulated memory itself: no write lands outside the buffer, late window or not. */
CORE_TEST(get_events, uaccess_write_outside_the_buffer_faults)
{
	__u32 v = 1;
	__u64 past = ktest_mem_addr(&F.mem, F.mem.len);

	F.mem.wfault_after = ~0ul;	/* the late window never opens */
	cr_assert_eq(F.mem.ua.write(F.mem.ua.ctx, past, &v, sizeof(v)), -EFAULT);
	cr_assert_eq(F.mem.ua.write(F.mem.ua.ctx, past - 2, &v, sizeof(v)), -EFAULT, "straddles the end");
	cr_assert_eq(F.mem.ua.write(F.mem.ua.ctx, ktest_mem_addr(&F.mem, 0) - 4, &v, sizeof(v)), -EFAULT);
	cr_assert_eq(F.mem.ua.write(F.mem.ua.ctx, past - 4, &v, sizeof(v)), 0, "the last word is inside");
	F.mem.wfault_after = 0;
}

CORE_TEST(get_events, D10_readonly_output_faults_before_dequeue)
{
	unsigned int i;

	fx_add_n(0, 4, KEVENT_REQ_ONESHOT);
	for (i = 0; i < 4; i++)
		ktest_fire(i, i);
	/* a read-only page in the middle of the output: the probe's write-back */
	F.mem.wfault_lo = (__u64)(uintptr_t)&OUT[2];
	F.mem.wfault_hi = F.mem.wfault_lo + 1;
	cr_assert_eq(fx_get(1, 4, OUT), -EFAULT);
	cr_assert_eq(fx_counters().ready, 4, "nothing dequeued");
	F.mem.wfault_lo = F.mem.wfault_hi = 0;
	cr_assert_eq(fx_get(4, 4, OUT), 4);
}

CORE_TEST(get_events, ENOMEM_before_dequeue_loses_nothing)
{
	unsigned int i;

	fx_add_n(0, 100, 0);
	for (i = 0; i < 100; i++)
		ktest_fire(i, 0);
	F.alloc_countdown = 0;
	cr_assert_eq(fx_get(1, 100, OUT), -ENOMEM, "a batch over 64 allocates");
	cr_assert_eq(fx_counters().ready, 100);
	cr_assert_eq(fx_get(1, 64, OUT), 64, "up to 64 it does not");
	cr_assert_eq(fx_get(1, 100, OUT), 36);
}

static int notified;

static void count_notify(void *ctx)
{
	(void)ctx;
	notified++;
}

/* D32: each kevent that becomes ready notifies; a merge into a pending one does not. */
CORE_TEST(get_events, poll_mask_and_notify_per_new_ready_kevent)
{
	fx_add_n(0, 3, 0);
	kqueue_set_notify(F.q, count_notify, NULL);
	cr_assert_eq(kqueue_poll(F.q), 0);
	ktest_fire(0, 0);
	cr_assert_eq(kqueue_poll(F.q), POLLIN | POLLRDNORM);
	cr_assert_eq(notified, 1);
	ktest_fire(1, 0);
	cr_assert_eq(notified, 2, "a second kevent becoming ready is a new edge");
	ktest_fire(0, 0);
	cr_assert_eq(notified, 2, "a merge into a pending kevent is no edge");
	cr_assert_eq(fx_get(1, 5, OUT), 2);
	cr_assert_eq(kqueue_poll(F.q), 0);
	ktest_fire(2, 0);
	cr_assert_eq(notified, 3);
}

/* The stall D32 prevents: a GET_EVENTS that leaves events behind, then a new one. */
CORE_TEST(get_events, notify_after_a_partial_take)
{
	fx_add_n(0, 3, 0);
	kqueue_set_notify(F.q, count_notify, NULL);
	ktest_fire(0, 0);
	ktest_fire(1, 0);
	cr_assert_eq(fx_get(1, 1, OUT), 1, "take one of two");
	notified = 0;
	ktest_fire(2, 0);
	cr_assert_eq(notified, 1, "a kevent ready after a partial take woke nobody");
	cr_assert_eq(fx_get(0, 5, OUT), 2);
}

CORE_TEST(get_events, D10_probe_reads_what_it_will_write)
{
	fx_add_n(0, 4, 0);
	ktest_fire(0, 0);
	ktest_fire(1, 0);
	F.mem.rfault_lo = (__u64)(uintptr_t)&OUT[2];
	F.mem.rfault_hi = F.mem.rfault_lo + 1;
	cr_assert_eq(fx_get(1, 4, OUT), 2, "only the two entries to be written are probed");
	ktest_fire(0, 0);
	F.mem.rfault_lo = (__u64)(uintptr_t)&OUT[0];
	F.mem.rfault_hi = F.mem.rfault_lo + 1;
	F.mem.reads = 0;
	cr_assert_eq(fx_get(1, 4, OUT), -EFAULT);
	cr_assert_eq(F.mem.reads, 1, "one read of the range, before the dequeue");
	cr_assert_eq(fx_counters().ready, 1);
	F.mem.rfault_lo = F.mem.rfault_hi = 0;
}

CORE_TEST(get_events, stopped_kevents_ignore_late_fires)
{
	F.uk[0] = uk_make(KEVENT_TIMER, 1, KEVENT_TIMER_FIRED, KEVENT_REQ_ONESHOT, 1);
	F.uk[1] = uk_make(KEVENT_TIMER, 2, KEVENT_TIMER_FIRED, 0, 2);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 2, F.uk), 0);
	cr_assert_eq(ktest_fire(1, 1), 1);
	cr_assert_eq(ktest_fire_stopped(1, 2), 0, "a ONESHOT that fired stays stopped");
	cr_assert_eq(ktest_break(2, -EIO), 1);
	cr_assert_eq(fx_get(1, 4, OUT), 2);
	cr_assert_eq(OUT[0].ret_data[0], 1, "the late fire did not merge");
	cr_assert_eq(OUT[1].ret_flags, KEVENT_RET_BROKEN | KEVENT_RET_DONE);
	cr_assert_eq(ktest_fire_stopped(2, 3), 0, "a broken kevent stays stopped");
	cr_assert_eq(fx_counters().ready, 0, "and is not queued again");
	cr_assert_eq(ring_index(F.ring), 2);
}
