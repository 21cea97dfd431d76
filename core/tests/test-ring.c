// SPDX-License-Identifier: GPL-2.0
/* The ring writer: take13 layout, when a record is written, wrap (D1-D4, A10). */
#include "helpers.h"

struct fixture F;

TestSuite(ring, .init = fx_setup, .fini = fx_teardown);

#define OUT (&F.uk[KEVENT_MAX_EVENTS])

CORE_TEST(ring, D1_layout_of_the_first_records)
{
	const struct mukevent *m;

	fx_add_n(0x100000000ull, 2, 0);
	ktest_fire(0x100000001ull, 0);
	ktest_break(0x100000000ull, -EIO);
	cr_assert_eq(ring_index(F.ring), 2);
	/* slot 0 at byte 8 of page 0: id, ret_flags, pad */
	m = (const struct mukevent *)(F.ring + 8);
	cr_assert_eq(m->id.raw_u64, 0x100000001ull);
	cr_assert_eq(m->ret_flags, KEVENT_RET_DONE);
	cr_assert_eq(m[1].id.raw[0], 0);
	cr_assert_eq(m[1].id.raw[1], 1);
	cr_assert_eq(m[1].ret_flags, KEVENT_RET_BROKEN | KEVENT_RET_DONE);
	cr_assert_eq(*(const __u32 *)(F.ring + 4), 0, "padding after index stays 0");
	cr_assert_eq(*(const __u32 *)(F.ring + 4096), 0, "only page 0's index is used");
}

CORE_TEST(ring, D3_no_record_for_ready_at_add)
{
	F.uk[0] = uk_make(KEVENT_TIMER, 1, KTEST_READY_AT_ADD, 0, 1);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 1, F.uk), 1);
	cr_assert_eq(ring_index(F.ring), 0);
}

static unsigned int notified;

static void count_notify(void *ctx)
{
	(void)ctx;
	notified++;
}

/* D3: a fire inside attach() of an entry ADD then answers leaves no trace. */
CORE_TEST(ring, D3_fire_inside_attach_of_an_answered_entry)
{
	struct kcore_counters c;

	kqueue_set_notify(F.q, count_notify, NULL);
	notified = 0;
	F.uk[0] = uk_make(KEVENT_TIMER, 1, KTEST_FIRE_IN_ATTACH | KTEST_READY_AT_ADD, 0, 1);
	F.uk[1] = uk_make(KEVENT_TIMER, 2, KTEST_FIRE_IN_ATTACH | KTEST_FAIL_ATTACH, 0, 2);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 2, F.uk), 2);
	cr_assert_eq(F.uk[0].ret_flags, KEVENT_RET_DONE);
	cr_assert_eq(F.uk[0].ret_data[0], 1, "the ADD answer is attach()'s, not the fire's");
	cr_assert_eq(F.uk[1].ret_flags, KEVENT_RET_BROKEN | KEVENT_RET_DONE);
	cr_assert_eq(ring_index(F.ring), 0, "a held fire of an answered entry wrote a slot");
	cr_assert_eq(notified, 0u, "notify ran for a ready list that stayed empty");
	c = fx_counters();
	cr_assert_eq(c.ready, 0);
	cr_assert_eq(fx_get(0, 2, OUT), 0);
}

/* D3: the held fire of a registered entry is one move onto the ready list. */
CORE_TEST(ring, D3_fire_inside_attach_of_a_registered_entry)
{
	kqueue_set_notify(F.q, count_notify, NULL);
	notified = 0;
	F.uk[0] = uk_make(KEVENT_TIMER, 3, KTEST_FIRE_IN_ATTACH, KEVENT_REQ_ONESHOT, 3);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 1, F.uk), 0, "registered, not answered");
	cr_assert_eq(ring_index(F.ring), 1);
	cr_assert_eq(ring_slot(F.ring, 0)->id.raw_u64, 3);
	cr_assert_eq(notified, 1u);
	cr_assert_eq(fx_get(1, 2, OUT), 1);
	cr_assert_eq(OUT[0].ret_data[0], 7);
	cr_assert_eq(ktest_fire(3, 0), 0, "a ONESHOT that fired while attaching must stay stopped");
	cr_assert_eq(fx_get(0, 2, OUT), 0);
	cr_assert_eq(ring_index(F.ring), 1);
}

/* Fires kevent id, drains it; returns the slot it was written to. */
static unsigned int cycle(__u64 id)
{
	unsigned int slot = ring_index(F.ring);

	cr_assert_eq(ktest_fire(id, 0), 1);
	cr_assert_eq(fx_get(1, 1, OUT), 1);
	return slot;
}

CORE_TEST(ring, wrap_across_page_boundaries_and_4096)
{
	unsigned int i, s;
	unsigned char *check[] = { 0 };

	(void)check;
	fx_add_n(0, 4095, 0);
	for (i = 0; i < 4095; i++)
		ktest_fire(i, 0);
	cr_assert_eq(ring_index(F.ring), 4095);
	cr_assert_eq(fx_get(4095, 4095, OUT), 4095);
	/* slot s holds kevent s: across every page boundary, 254 -> 255 ... */
	for (s = 0; s < 4095; s++) {
		cr_assert_eq(ring_slot(F.ring, s)->id.raw_u64, s, "slot %u", s);
		cr_assert_eq(ring_slot(F.ring, s)->ret_flags, KEVENT_RET_DONE);
	}
	cr_assert_eq(KEVENT_RING_SLOT_OFFSET(254), 8 + 254 * 16);
	cr_assert_eq(KEVENT_RING_SLOT_OFFSET(255), 4096 + 8);
	cr_assert_eq(KEVENT_RING_SLOT_OFFSET(4095), 16 * 4096 + 8 + 15 * 16);
	/* the last slot (page 16, position 15), then the wrap to 0 */
	cr_assert_eq(cycle(77), 4095);
	cr_assert_eq(ring_slot(F.ring, 4095)->id.raw_u64, 77);
	cr_assert_eq(ring_index(F.ring), 0, "index wraps at 4096");
	cr_assert_eq(cycle(78), 0);
	cr_assert_eq(ring_slot(F.ring, 0)->id.raw_u64, 78, "lapped: overwritten");
	cr_assert_eq(ring_index(F.ring), 1);
	/* nothing past the ring is written: page 16 slot 16 would be out */
	cr_assert_eq(*(const __u32 *)(F.ring + 16 * 4096), 0);
}

CORE_TEST(ring, D4_removed_before_dequeue_keeps_its_slot)
{
	fx_add_n(0, 2, 0);
	ktest_fire(0, 0);
	ktest_fire(1, 0);
	F.uk[0] = uk_make(KEVENT_TIMER, 0, 0, 0, 0);
	cr_assert_eq(fx_ctl(KEVENT_CTL_REMOVE, 1, F.uk), 0);
	cr_assert_eq(ring_index(F.ring), 2);
	cr_assert_eq(ring_slot(F.ring, 0)->id.raw_u64, 0);
	cr_assert_eq(fx_get(1, 4, OUT), 1);
	cr_assert_eq(OUT[0].id.raw_u64, 1);
}

CORE_TEST(ring, ring_order_is_ready_order)
{
	__u64 order[] = { 3, 1, 2, 0 };
	unsigned int i;

	fx_add_n(0, 4, 0);
	for (i = 0; i < 4; i++)
		ktest_fire(order[i], 0);
	cr_assert_eq(fx_get(4, 4, OUT), 4);
	for (i = 0; i < 4; i++) {
		cr_assert_eq(ring_slot(F.ring, i)->id.raw_u64, order[i]);
		cr_assert_eq(OUT[i].id.raw_u64, order[i]);
	}
}

CORE_TEST(ring, no_ring_is_fine)
{
	struct kqueue *q;

	cr_assert_eq(kqueue_open(F.core, &F.me, NULL, &q), 0);
	F.uk[0] = uk_make(KEVENT_TIMER, 1, KEVENT_TIMER_FIRED, 0, 1);
	cr_assert_eq(fx_ctl_q(q, KEVENT_CTL_ADD, 1, F.uk), 0);
	cr_assert_eq(ktest_fire(1, 0), 1);
	cr_assert_eq(fx_get_q(q, 1, 1, 0, OUT), 1);
	kqueue_release(q);
	cr_assert_eq(ring_index(F.ring), 0);
}

/* The ready FIFO's holes (REMOVE while ready) are squeezed out in order. */
CORE_TEST(ring, REMOVE_while_ready_holes_keep_fifo_order)
{
	unsigned int i, n;
	__u64 want[40];

	fx_add_n(0, 15, 0);
	/* move the head off 0 first: fire and drain 5 */
	for (i = 0; i < 5; i++)
		ktest_fire(i, 0);
	cr_assert_eq(fx_get(5, 5, OUT), 5);
	for (i = 0; i < 15; i++)
		ktest_fire(i, 0);
	/* leave 3 of 15 ready: 12 holes */
	for (i = 0, n = 0; i < 15; i++)
		if (i % 5)
			F.uk[n++] = uk_make(KEVENT_TIMER, i, 0, 0, (__u32)i);
	cr_assert_eq(fx_ctl(KEVENT_CTL_REMOVE, n, F.uk), 0);
	fx_add_n(100, 12, 0);
	for (i = 0; i < 12; i++)
		ktest_fire(100 + i, 0);
	n = 0;
	want[n++] = 0;
	want[n++] = 5;
	want[n++] = 10;
	for (i = 0; i < 12; i++)
		want[n++] = 100 + i;
	cr_assert_eq(fx_counters().ready, n);
	cr_assert_eq(fx_get(1, 40, OUT), (int)n);
	for (i = 0; i < n; i++)
		cr_assert_eq(OUT[i].id.raw_u64, want[i], "entry %u", i);
	/* and growth past the first array keeps order too */
	fx_add_n(200, 100, 0);
	for (i = 0; i < 100; i++)
		ktest_fire(200 + 99 - i, 0);
	cr_assert_eq(fx_get(1, 200, OUT), 100);
	for (i = 0; i < 100; i++)
		cr_assert_eq(OUT[i].id.raw_u64, 200 + 99 - i);
}

/* ---- revision 2: the kevent_uring (docs/abi.md D41, D53-D55) ---- */

#define URING_OFF	(1000 * sizeof(struct ukevent))	/* the ring inside F.mem */

static struct kevent_uring *uring_at(void)
{
	return (struct kevent_uring *)((char *)F.uk + URING_OFF);
}

static void uring_setup(unsigned int num)
{
	struct kevent_set_abi sa = { 2, 0, 0 };
	struct kevent_ring_init ri = { ktest_mem_addr(&F.mem, URING_OFF), num, 0 };

	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_SET_ABI, &sa, NULL), 0);
	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_RING_INIT, &ri, NULL), 0);
}

static int uring_wait(unsigned int num, unsigned int old_uidx)
{
	struct kevent_wait_arg w = { .num = num, .old_uidx = old_uidx };

	return fx_ioctl_q(F.q, KEVENT_IOC_WAIT, &w, NULL);
}

static int uring_commit(unsigned int new_uidx, unsigned int over)
{
	struct kevent_commit_arg c = { new_uidx, over };

	return fx_ioctl_q(F.q, KEVENT_IOC_COMMIT, &c, NULL);
}

/* D41, D55: ONESHOT kevents are freed once ring_kidx publishes them, not before. */
CORE_TEST(ring, rev2_wait_frees_oneshot_after_publish)
{
	struct ukevent *uk = F.uk;
	struct kcore_counters c;

	uring_setup(4);
	for (int i = 0; i < 3; i++)
		uk[i] = uk_make(KEVENT_TIMER, 10 + (unsigned)i, 1, KEVENT_REQ_ONESHOT, (unsigned)i);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 3, uk), 0);
	for (int i = 0; i < 3; i++)
		ktest_fire(10 + (unsigned)i, 7);
	cr_assert_eq(uring_wait(4, 0), 3);
	cr_assert_eq(uring_at()->ring_kidx, 3u);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(uring_at()->event[i].user[0], (__u32)i, "FIFO order");
		cr_assert_eq(uring_at()->event[i].ret_data[0], 7u);
	}
	kcore_counters(F.core, &c);
	cr_assert_eq(c.kevents, 0, "ONESHOT freed after the copy");
	cr_assert_eq(uring_commit(3, 0), 3);
}

/* D41: a faulting slot store requeues everything at the head, publishes nothing. */
CORE_TEST(ring, rev2_fault_requeues_in_order)
{
	struct ukevent *uk = F.uk;
	struct kcore_counters c;

	uring_setup(4);
	for (int i = 0; i < 3; i++)
		uk[i] = uk_make(KEVENT_TIMER, 20 + (unsigned)i, 1, KEVENT_REQ_ONESHOT, (unsigned)i);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 3, uk), 0);
	for (int i = 0; i < 3; i++)
		ktest_fire(20 + (unsigned)i, 1);
	/* slot 2 faults */
	F.mem.wfault_lo = ktest_mem_addr(&F.mem, URING_OFF + 8 + 2 * sizeof(struct ukevent));
	F.mem.wfault_hi = F.mem.wfault_lo + 1;
	cr_assert_eq(uring_wait(4, 0), -EFAULT);
	cr_assert_eq(uring_at()->ring_kidx, 0u, "nothing published");
	kcore_counters(F.core, &c);
	cr_assert_eq(c.kevents, 3, "ONESHOT kept while the copy failed");
	cr_assert_eq(c.ready, 3, "all requeued");
	F.mem.wfault_lo = F.mem.wfault_hi = 0;
	cr_assert_eq(uring_wait(4, 0), 3);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(uring_at()->event[i].user[0], (__u32)i, "order kept after the requeue");
	cr_assert_eq(uring_commit(3, 0), 3);
}

/* D54: the full ring commits whole with new_uidx == uidx, and the lap counts. */
CORE_TEST(ring, rev2_full_ring_commit_wraps)
{
	struct ukevent *uk = F.uk;

	uring_setup(2);
	for (int i = 0; i < 2; i++)
		uk[i] = uk_make(KEVENT_TIMER, 30 + (unsigned)i, 1, KEVENT_REQ_ONESHOT, (unsigned)i);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 2, uk), 0);
	for (int i = 0; i < 2; i++)
		ktest_fire(30 + (unsigned)i, 1);
	cr_assert_eq(uring_wait(2, 0), 2);
	cr_assert_eq(uring_at()->ring_kidx, 0u, "full: kidx back at uidx");
	cr_assert_eq(uring_commit(0, 0), 2, "new_uidx == uidx on a full ring frees it all");
	cr_assert_eq(uring_at()->ring_over, 1u);
	cr_assert_eq(uring_commit(0, 1), 0, "empty: nothing more");
}
