// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libkevent's ring reader over a ring laid out in plain memory exactly as a
 * backend lays it out (the backends' writers are tested in core/ and through
 * the client suite; this pins the reader: page-header skip, wrap, index).
 */
#include <criterion/criterion.h>
#include <string.h>
#include <sys/mman.h>

#include "libkevent.h"

static unsigned char *mem;
static struct kevent_ring ring;

static void setup(void)
{
	mem = mmap(NULL, KEVENT_RING_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(mem, MAP_FAILED);
	ring = (struct kevent_ring){ .base = mem, .length = KEVENT_RING_SIZE };
}

static void teardown(void)
{
	munmap(mem, KEVENT_RING_SIZE);
}

/* What a backend does: write slot `index`, then publish index + 1. */
static void backend_write(__u32 raw0, __u32 ret_flags)
{
	struct kevent_mring *page0 = (struct kevent_mring *)mem;
	unsigned int idx = page0->index;
	struct mukevent *m = (struct mukevent *)(mem + KEVENT_RING_SLOT_OFFSET(idx));

	m->id.raw[0] = raw0;
	m->id.raw[1] = ~raw0;
	m->ret_flags = ret_flags;
	__atomic_store_n(&page0->index, (idx + 1) % KEVENT_MAX_EVENTS, __ATOMIC_RELEASE);
}

TestSuite(ring, .init = setup, .fini = teardown);

Test(ring, empty_ring_reads_nothing)
{
	struct mukevent out[4];

	cr_assert_eq(kevent_ring_read(&ring, out, 4), 0);
	cr_assert_eq(kevent_ring_index(&ring), 0);
}

Test(ring, reads_new_slots_in_order)
{
	struct mukevent out[8];

	for (__u32 i = 0; i < 5; i++)
		backend_write(100 + i, KEVENT_RET_DONE);
	cr_assert_eq(kevent_ring_read(&ring, out, 8), 5);
	for (__u32 i = 0; i < 5; i++) {
		cr_assert_eq(out[i].id.raw[0], 100 + i);
		cr_assert_eq(out[i].id.raw[1], ~(100 + i));
		cr_assert_eq(out[i].ret_flags, KEVENT_RET_DONE);
	}
	cr_assert_eq(kevent_ring_read(&ring, out, 8), 0, "slots are read once");
}

Test(ring, max_limits_one_read_and_the_rest_follow)
{
	struct mukevent out[3];

	for (__u32 i = 0; i < 7; i++)
		backend_write(i, 0);
	cr_assert_eq(kevent_ring_read(&ring, out, 3), 3);
	cr_assert_eq(out[2].id.raw[0], 2);
	cr_assert_eq(kevent_ring_read(&ring, out, 3), 3);
	cr_assert_eq(out[0].id.raw[0], 3);
	cr_assert_eq(kevent_ring_read(&ring, out, 3), 1);
	cr_assert_eq(out[0].id.raw[0], 6);
}

Test(ring, slot_255_skips_the_second_page_header)
{
	const struct mukevent *s254 = kevent_ring_slot(&ring, 254);
	const struct mukevent *s255 = kevent_ring_slot(&ring, 255);

	cr_assert_eq((const unsigned char *)s254 - mem, 8 + 254 * 16);
	cr_assert_eq((const unsigned char *)s255 - mem, KEVENT_RING_PAGE_SIZE + 8);
	cr_assert_null(kevent_ring_slot(&ring, KEVENT_MAX_EVENTS));
}

Test(ring, reader_crosses_pages_and_wraps_at_4096)
{
	struct mukevent out[16];
	struct kevent_mring *page0 = (struct kevent_mring *)mem;

	page0->index = KEVENT_MAX_EVENTS - 3;
	ring.next = KEVENT_MAX_EVENTS - 3;
	for (__u32 i = 0; i < 6; i++)
		backend_write(i, 0);
	cr_assert_eq(page0->index, 3);
	cr_assert_eq(kevent_ring_read(&ring, out, 16), 6);
	for (__u32 i = 0; i < 6; i++)
		cr_assert_eq(out[i].id.raw[0], i, "slot %u", i);
	cr_assert_eq(ring.next, 3);
}

Test(ring, only_page0_index_counts)
{
	struct mukevent out[2];
	struct kevent_mring *page1 = (struct kevent_mring *)(mem + KEVENT_RING_PAGE_SIZE);

	page1->index = 77;
	cr_assert_eq(kevent_ring_read(&ring, out, 2), 0);
}
