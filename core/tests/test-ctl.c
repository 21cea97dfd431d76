// SPDX-License-Identifier: GPL-2.0
/* kevent_ctl(): ADD, MODIFY, REMOVE with take13 semantics (A4, A5, D5-D9, D19, D25). */
#include "helpers.h"

struct fixture F;

TestSuite(ctl, .init = fx_setup, .fini = fx_teardown);

static struct ukevent timer(__u64 id, __u32 cookie)
{
	return uk_make(KEVENT_TIMER, id, KEVENT_TIMER_FIRED, 0, cookie);
}

CORE_TEST(ctl, A4_4094_then_4095_then_4096)
{
	struct kcore_counters c;

	fx_add_n(0, 4094, 0);
	fx_add_n(10000, 1, 0);
	c = fx_counters();
	cr_assert_eq(c.kevents, 4095);
	F.uk[0] = timer(99999, 1);
	F.mem.reads = 0;
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 1, F.uk), -EINVAL, "kevent_num + num >= 4096");
	cr_assert_eq(F.mem.reads, 0, "whole-call check runs before the array is read");
	cr_assert_eq(fx_counters().kevents, 4095);
	cr_assert_eq(fx_ctl(KEVENT_CTL_REMOVE, 4096, F.uk), -EINVAL, "num > kevent_num");
}

CORE_TEST(ctl, A4_4095_in_one_call_4096_refused)
{
	unsigned int i;

	for (i = 0; i < 4096; i++)
		F.uk[i] = timer(i, i);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 4096, F.uk), -EINVAL);
	cr_assert_eq(fx_counters().kevents, 0);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 4095, F.uk), 0);
	cr_assert_eq(fx_counters().kevents, 4095);
	cr_assert_eq(ktest_attached(), 4095);
	/* every one of them can be removed again, all in one call */
	for (i = 0; i < 4095; i++)
		F.uk[i] = timer(i, i);
	cr_assert_eq(fx_ctl(KEVENT_CTL_REMOVE, 4095, F.uk), 0);
	for (i = 0; i < 4095; i++)
		cr_assert_eq(F.uk[i].ret_flags, KEVENT_RET_DONE, "entry %u", i);
	cr_assert_eq(fx_counters().kevents, 0);
}

CORE_TEST(ctl, D25_num_zero_returns_0_without_reading)
{
	F.mem.reads = 0;
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 0, F.uk), 0);
	cr_assert_eq(fx_ctl(KEVENT_CTL_REMOVE, 0, F.uk), 0);
	cr_assert_eq(fx_ctl(KEVENT_CTL_MODIFY, 0, F.uk), 0);
	cr_assert_eq(F.mem.reads, 0);
	cr_assert_eq(fx_counters().kevents, 0);
}

CORE_TEST(ctl, D25_num_over_4096_and_unknown_cmd)
{
	F.mem.reads = 0;
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 4097, F.uk), -EINVAL);
	cr_assert_eq(fx_ctl(KEVENT_CTL_MODIFY, 4097, F.uk), -EINVAL);
	cr_assert_eq(fx_ctl(KEVENT_CTL_REMOVE, 100000, F.uk), -EINVAL);
	cr_assert_eq(fx_ctl(3, 1, F.uk), -EINVAL, "KEVENT_CTL_INIT is gone in take13");
	cr_assert_eq(fx_ctl(77, 0, F.uk), -EINVAL, "cmd is checked before num == 0");
	cr_assert_eq(F.mem.reads, 0);
}

CORE_TEST(ctl, D25_modify_remove_more_than_registered)
{
	fx_add_n(1, 2, 0);
	F.uk[0] = timer(1, 1);
	F.uk[1] = timer(2, 2);
	F.uk[2] = timer(3, 3);
	cr_assert_eq(fx_ctl(KEVENT_CTL_REMOVE, 3, F.uk), -EINVAL);
	cr_assert_eq(fx_ctl(KEVENT_CTL_MODIFY, 3, F.uk), -EINVAL);
	cr_assert_eq(fx_counters().kevents, 2);
	cr_assert_eq(fx_ctl(KEVENT_CTL_REMOVE, 2, F.uk), 0);
	cr_assert_eq(fx_counters().kevents, 0);
}

CORE_TEST(ctl, ADD_compacts_ready_and_failed_to_the_front)
{
	struct ukevent in[6];

	in[0] = timer(1, 11);						/* waits */
	in[1] = uk_make(KEVENT_TIMER, 2, KTEST_READY_AT_ADD, 0, 22);	/* ready */
	in[2] = timer(3, 33);						/* waits */
	in[3] = uk_make(KEVENT_NAIO, 4, 1, 0, 44);			/* unimplemented */
	in[4] = uk_make(KEVENT_TIMER, 5, KTEST_FAIL_ATTACH, 0, 55);	/* origin error */
	in[5] = timer(6, 66);						/* waits */
	in[1].ret_flags = 0xffff;	/* input ret_flags are ignored */
	memcpy(F.uk, in, sizeof(in));
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 6, F.uk), 3);
	cr_assert_eq(F.uk[0].id.raw_u64, 2);
	cr_assert_eq(F.uk[0].ret_flags, KEVENT_RET_DONE, "D5: DONE on ready-at-ADD");
	cr_assert_eq(F.uk[0].ret_data[0], 2);
	cr_assert_eq(F.uk[0].user[0], 22, "cookie copied back");
	cr_assert_eq(F.uk[1].id.raw_u64, 4);
	cr_assert_eq(F.uk[1].ret_flags, KEVENT_RET_BROKEN | KEVENT_RET_DONE);
	cr_assert_eq((int)F.uk[1].ret_data[1], -EINVAL);
	cr_assert_eq(F.uk[2].id.raw_u64, 5);
	cr_assert_eq(F.uk[2].ret_flags, KEVENT_RET_BROKEN | KEVENT_RET_DONE);
	cr_assert_eq((int)F.uk[2].ret_data[1], -EIO);
	cr_assert_eq(memcmp(&F.uk[3], &in[3], 3 * sizeof(in[0])), 0,
		     "entries past the compacted prefix are not written");
	cr_assert_eq(fx_counters().kevents, 3, "only the waiting ones are registered");
	cr_assert_eq(ring_index(F.ring), 0, "D3: no ring record at ADD");
}

CORE_TEST(ctl, A3_types_without_origin_fail_per_entry)
{
	__u32 types[] = { KEVENT_INODE, KEVENT_NAIO, KEVENT_AIO, KEVENT_MAX, 0x7fffffff };
	unsigned int i, n = sizeof(types) / sizeof(types[0]);

	for (i = 0; i < n; i++)
		F.uk[i] = uk_make(types[i], i, 1, 0, i);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, n, F.uk), (int)n);
	for (i = 0; i < n; i++) {
		cr_assert_eq(F.uk[i].ret_flags, KEVENT_RET_BROKEN | KEVENT_RET_DONE);
		cr_assert_eq((int)F.uk[i].ret_data[1], -EINVAL);
	}
	cr_assert_eq(fx_counters().kevents, 0);
}

CORE_TEST(ctl, D6_duplicate_ids_oldest_first)
{
	F.uk[0] = uk_make(KEVENT_TIMER, 7, KEVENT_TIMER_FIRED, 0, 5);
	F.uk[1] = uk_make(KEVENT_TIMER, 7, KEVENT_TIMER_FIRED | 0x100, 0, 5);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 2, F.uk), 0, "no duplicate check (take13)");
	cr_assert_eq(fx_counters().kevents, 2);
	F.uk[0] = uk_make(KEVENT_TIMER, 7, 0, 0, 5);
	cr_assert_eq(fx_ctl(KEVENT_CTL_REMOVE, 1, F.uk), 0);
	cr_assert_eq(F.uk[0].ret_flags, KEVENT_RET_DONE);
	cr_assert_eq(ktest_fire(7, 1), 1);
	cr_assert_eq(fx_get(1, 10, &F.uk[100]), 1);
	cr_assert_eq(F.uk[100].event, KEVENT_TIMER_FIRED | 0x100, "the older one was removed");
}

CORE_TEST(ctl, A5_cookie_mismatch_is_no_match)
{
	F.uk[0] = timer(7, 5);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 1, F.uk), 0);
	F.uk[0] = timer(7, 6);
	cr_assert_eq(fx_ctl(KEVENT_CTL_REMOVE, 1, F.uk), 0);
	cr_assert_eq(F.uk[0].ret_flags, KEVENT_RET_BROKEN | KEVENT_RET_DONE);
	F.uk[0] = timer(7, 5);
	F.uk[0].user[1] = 0;	/* both cookie words are compared */
	cr_assert_eq(fx_ctl(KEVENT_CTL_MODIFY, 1, F.uk), 0);
	cr_assert_eq(F.uk[0].ret_flags, KEVENT_RET_BROKEN | KEVENT_RET_DONE);
	F.uk[0] = timer(7, 5);
	F.uk[0].id.raw[1] = 1;	/* both id words are compared */
	cr_assert_eq(fx_ctl(KEVENT_CTL_REMOVE, 1, F.uk), 0);
	cr_assert_eq(F.uk[0].ret_flags, KEVENT_RET_BROKEN | KEVENT_RET_DONE);
	cr_assert_eq(fx_counters().kevents, 1);
}

CORE_TEST(ctl, D7_type_is_not_compared)
{
	F.uk[0] = timer(7, 5);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 1, F.uk), 0);
	F.uk[0] = uk_make(KEVENT_POLL, 7, 0, 0, 5);
	cr_assert_eq(fx_ctl(KEVENT_CTL_REMOVE, 1, F.uk), 0);
	cr_assert_eq(F.uk[0].ret_flags, KEVENT_RET_DONE);
	cr_assert_eq(fx_counters().kevents, 0);
}

CORE_TEST(ctl, MODIFY_REMOVE_write_back_in_place)
{
	struct ukevent in[3];

	fx_add_n(1, 3, 0);
	in[0] = timer(1, 1);
	in[1] = timer(2, 999);	/* no match */
	in[2] = timer(3, 3);
	in[2].ret_data[0] = 0x1234;
	memcpy(F.uk, in, sizeof(in));
	cr_assert_eq(fx_ctl(KEVENT_CTL_MODIFY, 3, F.uk), 0, "returns 0, not a count");
	cr_assert_eq(F.uk[0].ret_flags, KEVENT_RET_DONE);
	cr_assert_eq(F.uk[1].ret_flags, KEVENT_RET_BROKEN | KEVENT_RET_DONE);
	cr_assert_eq(F.uk[2].ret_flags, KEVENT_RET_DONE);
	cr_assert_eq(F.uk[2].id.raw_u64, 3, "in place, not compacted");
	cr_assert_eq(F.uk[2].ret_data[0], 0x1234);
	memcpy(F.uk, in, sizeof(in));
	cr_assert_eq(fx_ctl(KEVENT_CTL_REMOVE, 3, F.uk), 0);
	cr_assert_eq(F.uk[0].ret_flags, KEVENT_RET_DONE);
	cr_assert_eq(F.uk[1].ret_flags, KEVENT_RET_BROKEN | KEVENT_RET_DONE);
	cr_assert_eq(F.uk[2].ret_flags, KEVENT_RET_DONE);
	cr_assert_eq(fx_counters().kevents, 1);
}

CORE_TEST(ctl, MODIFY_ready_now_goes_on_the_ready_list)
{
	F.uk[0] = timer(4, 4);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 1, F.uk), 0);
	F.uk[0] = uk_make(KEVENT_TIMER, 4, KTEST_READY_AT_MODIFY, KEVENT_REQ_ONESHOT, 4);
	cr_assert_eq(fx_ctl(KEVENT_CTL_MODIFY, 1, F.uk), 0);
	cr_assert_eq(F.uk[0].ret_flags, KEVENT_RET_DONE);
	cr_assert_eq(ring_index(F.ring), 1, "D3: MODIFY finding it ready writes a record");
	cr_assert_eq(fx_get(1, 4, &F.uk[10]), 1);
	cr_assert_eq(F.uk[10].event, KTEST_READY_AT_MODIFY, "event replaced");
	cr_assert_eq(F.uk[10].req_flags, KEVENT_REQ_ONESHOT, "req_flags replaced");
	cr_assert_eq(F.uk[10].ret_flags, KEVENT_RET_DONE);
	cr_assert_eq(fx_counters().kevents, 0, "now ONESHOT: freed after copy-out");
}

CORE_TEST(ctl, MODIFY_origin_failure_is_broken)
{
	F.uk[0] = timer(4, 4);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 1, F.uk), 0);
	F.uk[0] = uk_make(KEVENT_TIMER, 4, KTEST_FAIL_MODIFY, 0, 4);
	cr_assert_eq(fx_ctl(KEVENT_CTL_MODIFY, 1, F.uk), 0);
	cr_assert_eq(F.uk[0].ret_flags, KEVENT_RET_BROKEN | KEVENT_RET_DONE);
	cr_assert_eq((int)F.uk[0].ret_data[1], -EIO);
}

CORE_TEST(ctl, REMOVE_while_ready_drops_readiness)
{
	fx_add_n(1, 2, 0);
	cr_assert_eq(ktest_fire(1, 0), 1);
	cr_assert_eq(ktest_fire(2, 0), 1);
	cr_assert_eq(fx_counters().ready, 2);
	F.uk[0] = timer(1, 1);
	cr_assert_eq(fx_ctl(KEVENT_CTL_REMOVE, 1, F.uk), 0);
	cr_assert_eq(fx_counters().ready, 1);
	cr_assert_eq(ring_index(F.ring), 2, "D4: its ring record stays");
	cr_assert_eq(fx_get(1, 10, &F.uk[10]), 1);
	cr_assert_eq(F.uk[10].id.raw_u64, 2, "the removed one is not returned");
}

CORE_TEST(ctl, A1_strict_mode_refuses_unknown_req_flags)
{
	struct kevent_set_abi sa = { 1, KEVENT_ABI_STRICT, 0 };

	F.uk[0] = uk_make(KEVENT_TIMER, 1, KEVENT_TIMER_FIRED, 0x80, 1);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 1, F.uk), 0, "lenient by default");
	kqueue_release(F.q);
	cr_assert_eq(kqueue_open(F.core, &F.me, F.ring, &F.q), 0);
	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_SET_ABI, &sa, NULL), 0);
	F.uk[0] = uk_make(KEVENT_TIMER, 1, KEVENT_TIMER_FIRED, 0x80, 1);
	F.uk[1] = uk_make(KEVENT_TIMER, 2, KEVENT_TIMER_FIRED, KEVENT_REQ_ONESHOT, 2);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 2, F.uk), 1);
	cr_assert_eq(F.uk[0].ret_flags, KEVENT_RET_BROKEN | KEVENT_RET_DONE);
	cr_assert_eq((int)F.uk[0].ret_data[1], -EINVAL);
	F.uk[0] = uk_make(KEVENT_TIMER, 2, KEVENT_TIMER_FIRED, 0x80, 2);
	cr_assert_eq(fx_ctl(KEVENT_CTL_MODIFY, 1, F.uk), 0);
	cr_assert_eq(F.uk[0].ret_flags, KEVENT_RET_BROKEN | KEVENT_RET_DONE);
	cr_assert_eq((int)F.uk[0].ret_data[1], -EINVAL);
}

CORE_TEST(ctl, A12_set_abi_only_before_first_ctl)
{
	struct kevent_set_abi sa = { 1, 0, 0 };

	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_SET_ABI, &sa, NULL), 0);
	sa.revision = KEVENT_ABI_REVISION + 1;
	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_SET_ABI, &sa, NULL), -EINVAL);
	sa.revision = 1;
	sa.flags = 0x2;
	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_SET_ABI, &sa, NULL), -EINVAL);
	sa.flags = 0;
	sa.__reserved = 1;
	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_SET_ABI, &sa, NULL), -EINVAL);
	sa.__reserved = 0;
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 0, F.uk), 0);
	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_SET_ABI, &sa, NULL), -EBUSY);
}

CORE_TEST(ctl, D9_read_fault_at_first_middle_last_has_no_effect)
{
	unsigned int at[] = { 0, 50, 99 }, i, j;

	for (i = 0; i < 3; i++) {
		for (j = 0; j < 100; j++)
			F.uk[j] = timer(j, j);
		F.mem.rfault_lo = ktest_mem_addr(&F.mem, at[i] * sizeof(struct ukevent) + 39);
		F.mem.rfault_hi = F.mem.rfault_lo + 1;
		cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 100, F.uk), -EFAULT, "fault at %u", at[i]);
		cr_assert_eq(fx_counters().kevents, 0);
		cr_assert_eq(ktest_attach_calls(), 0, "no entry took effect");
		F.mem.rfault_lo = F.mem.rfault_hi = 0;
	}
	fx_add_n(0, 100, 0);
	for (i = 0; i < 3; i++) {
		F.mem.rfault_lo = ktest_mem_addr(&F.mem, at[i] * sizeof(struct ukevent));
		F.mem.rfault_hi = F.mem.rfault_lo + 1;
		cr_assert_eq(fx_ctl(KEVENT_CTL_REMOVE, 100, F.uk), -EFAULT);
		cr_assert_eq(fx_counters().kevents, 100);
	}
}

CORE_TEST(ctl, D9_write_fault_keeps_registrations)
{
	unsigned int i;

	for (i = 0; i < 10; i++)
		F.uk[i] = timer(i, i);
	F.uk[9] = uk_make(KEVENT_TIMER, 9, KTEST_READY_AT_ADD, 0, 9);
	F.mem.wfault_lo = ktest_mem_addr(&F.mem, 0);
	F.mem.wfault_hi = F.mem.wfault_lo + 1;
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 10, F.uk), -EFAULT);
	cr_assert_eq(fx_counters().kevents, 9, "registrations made by the call stay");
	F.mem.wfault_lo = F.mem.wfault_hi = 0;
	for (i = 0; i < 9; i++)
		F.uk[i] = timer(i, i);
	F.mem.wfault_lo = ktest_mem_addr(&F.mem, 8 * sizeof(struct ukevent) + 20);
	F.mem.wfault_hi = F.mem.wfault_lo + 1;
	cr_assert_eq(fx_ctl(KEVENT_CTL_REMOVE, 9, F.uk), -EFAULT);
	cr_assert_eq(fx_counters().kevents, 0, "the removals happened");
	F.mem.wfault_lo = F.mem.wfault_hi = 0;
}

CORE_TEST(ctl, D19_enomem_fails_one_entry_only)
{
	unsigned int i;

	for (i = 0; i < 5; i++)
		F.uk[i] = timer(i, i);
	/* the array buffer is allocation 0, kitems 1..5: fail the third kitem */
	F.alloc_countdown = 3;
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 5, F.uk), 1);
	cr_assert_eq(F.uk[0].id.raw_u64, 2);
	cr_assert_eq(F.uk[0].ret_flags, KEVENT_RET_BROKEN | KEVENT_RET_DONE);
	cr_assert_eq((int)F.uk[0].ret_data[1], -ENOMEM);
	cr_assert_eq(fx_counters().kevents, 4, "the entries before and after took effect");
}

/* D19 by KEVENT_IOC_FAULT: one ADD entry, on this queue only, once. */
CORE_TEST(ctl, D19_by_the_fault_ioctl)
{
	struct kevent_fault f = { KEVENT_FAULT_ADD_ENOMEM, 1, 0 };
	struct kqueue *other;
	unsigned int i;

	kqueue_release(F.q);
	kcore_free(F.core);
	F.cfg.fault_inject = 1;
	fx_start();
	cr_assert_eq(kqueue_open(F.core, &F.me, NULL, &other), 0);
	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_FAULT, &f, NULL), 0);
	F.uk[0] = timer(9, 9);
	cr_assert_eq(fx_ctl_q(other, KEVENT_CTL_ADD, 1, F.uk), 0, "another queue is not armed");
	for (i = 0; i < 3; i++)
		F.uk[i] = timer(i, i);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 3, F.uk), 1);
	cr_assert_eq(F.uk[0].id.raw_u64, 1, "skip 1: the second entry fails");
	cr_assert_eq(F.uk[0].ret_flags, KEVENT_RET_BROKEN | KEVENT_RET_DONE);
	cr_assert_eq((int)F.uk[0].ret_data[1], -ENOMEM);
	cr_assert_eq(fx_counters().kevents, 3, "two here, one on the other queue");
	F.uk[0] = timer(1, 1);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 1, F.uk), 0, "the fault happened once");
	f.skip = 0;
	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_FAULT, &f, NULL), 0);
	f.kind = KEVENT_FAULT_NONE;
	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_FAULT, &f, NULL), 0);
	F.uk[0] = timer(5, 5);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 1, F.uk), 0, "KEVENT_FAULT_NONE disarms");
	kqueue_release(other);
}

CORE_TEST(ctl, ENOMEM_for_the_array_fails_whole)
{
	F.uk[0] = timer(1, 1);
	F.alloc_countdown = 0;
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 1, F.uk), -ENOMEM);
	cr_assert_eq(fx_counters().kevents, 0);
}

CORE_TEST(ctl, A5_both_id_words_match_even_in_one_bucket)
{
	unsigned int j;

	for (j = 0; j < 64; j++) {
		F.uk[j] = uk_make(KEVENT_TIMER, 7, KEVENT_TIMER_FIRED, 0, 5);
		F.uk[j].id.raw[1] = j;
	}
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 64, F.uk), 0);
	for (j = 0; j < 64; j += 3) {
		F.uk[0] = uk_make(KEVENT_TIMER, 7, 0, 0, 5);
		F.uk[0].id.raw[1] = j;
		cr_assert_eq(fx_ctl(KEVENT_CTL_REMOVE, 1, F.uk), 0);
		cr_assert_eq(F.uk[0].ret_flags, KEVENT_RET_DONE);
	}
	for (j = 0; j < 64; j++)
		cr_assert_eq(ktest_fire(7 | (__u64)j << 32, 0), j % 3 ? 1u : 0u, "raw[1] = %u", j);
}

CORE_TEST(ctl, A4_limit_rechecked_at_execute)
{
	struct kevent_ctl_arg a = { KEVENT_CTL_ADD, 95, 0 }, b = { KEVENT_CTL_ADD, 1, 0 };
	struct kdisp_plan pa, pb;

	fx_add_n(0, 4000, 0);	/* F.uk keeps 4000 valid entries (duplicates are legal) */
	cr_assert_eq(fx_counters().kevents, 4000);
	a.events = ktest_mem_addr(&F.mem, 0);
	b.events = ktest_mem_addr(&F.mem, 0);
	/* both planned on 4000 registered: each passes on its own */
	cr_assert_eq(kdisp_plan(F.q, KEVENT_IOC_CTL, &a, sizeof(a), &F.me, &pa), 0);
	cr_assert_eq(kdisp_plan(F.q, KEVENT_IOC_CTL, &b, sizeof(b), &F.me, &pb), 0);
	cr_assert_eq(kdisp_execute(F.q, &pa, &F.me, &F.mem.ua, NULL, NULL, NULL), 0);
	cr_assert_eq(kdisp_execute(F.q, &pb, &F.me, &F.mem.ua, NULL, NULL, NULL), -EINVAL,
		     "the limit holds against a concurrent ADD");
	cr_assert_eq(fx_counters().kevents, 4095);
}
