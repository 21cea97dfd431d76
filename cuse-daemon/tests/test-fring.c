// SPDX-License-Identifier: GPL-2.0
/*
 * The fuse ring's passes (kc-fring.c, included to reach its statics) in a
 * schedule the flusher thread meets only when it is preempted at the wrong
 * moment: the core moves its index before it says which slot it wrote.
 * libfuse's three calls are replaced by a model of the file's page cache
 * (every READ reply and every store land in `pages`); the real kernel
 * path is tests/fuse/fuse-file.c.  After every store the pages must keep
 * abi.md 5.4: each slot before the index they show is the core's slot.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "../kc-fring.c"

struct kc_daemon kd;

/* The core's ring (live) and the kernel's pages of the file. */
static unsigned char live[KEVENT_RING_SIZE] __attribute__((aligned(4096)));
static unsigned char pages[KEVENT_RING_SIZE] __attribute__((aligned(4096)));
static char broken[160];	/* the first store that broke 5.4 */

static __u32 pages_index(void)
{
	return *(const __u32 *)pages;
}

/* abi.md 5.4 in the pages: every slot before the index is published. */
static void check_pages(const char *what)
{
	__u32 idx = pages_index();

	for (__u32 s = 0; s < idx && !broken[0]; s++)
		if (memcmp(pages + KEVENT_RING_SLOT_OFFSET(s), live + KEVENT_RING_SLOT_OFFSET(s),
			   sizeof(struct mukevent)))
			snprintf(broken, sizeof(broken), "after %s the pages show index %u, slot %u not there",
				 what, idx, s);
}

int fuse_lowlevel_notify_store(struct fuse_session *se, fuse_ino_t ino, off_t offset,
			       struct fuse_bufvec *bufv, enum fuse_buf_copy_flags flags)
{
	(void)se, (void)ino, (void)flags;
	memcpy(pages + offset, bufv->buf[0].mem, bufv->buf[0].size);
	check_pages("a store");
	return 0;
}

int fuse_reply_buf(fuse_req_t req, const char *buf, size_t size)
{
	(void)req;
	memcpy(pages, buf, size);	/* every READ here is of the whole file */
	check_pages("a READ");
	return 0;
}

int fuse_reply_err(fuse_req_t req, int err)
{
	(void)req;
	cr_assert_fail("READ answered with error %d", err);
	return 0;
}

/* What the core does for its fire number n: the slot, then the index (release). */
static void core_fire(__u32 n)
{
	__u32 slot = n % KEVENT_MAX_EVENTS;
	struct mukevent *m = (struct mukevent *)(live + KEVENT_RING_SLOT_OFFSET(slot));

	m->id.raw[0] = 1;
	m->id.raw[1] = n + 1;	/* a slot of the next lap differs from its last */
	m->ret_flags = KEVENT_RET_DONE;
	__atomic_store_n((__u32 *)live, slot + 1 == KEVENT_MAX_EVENTS ? 0 : slot + 1,
			 __ATOMIC_RELEASE);
}

/* ... and later, its lock dropped, the transport hears of the slot. */
static void core_tell(struct kc_fring *fr, __u32 slot)
{
	kc_fring_written(fr, KEVENT_RING_SLOT_OFFSET(slot), sizeof(struct mukevent));
}

/* A page fault's READ of the whole file, answered into the pages. */
static void kernel_read(struct kc_fring *fr)
{
	kc_fring_read(NULL, fr, KEVENT_RING_SIZE, 0);
}

/* The flusher takes its next pass off the list: the range it will store. */
struct pass {
	struct kc_fring *fr;
	struct kc_fring_cb *cbs;
	size_t lo, hi;
};

static struct pass flusher_pick(void)
{
	struct pass p;

	pthread_mutex_lock(&fl.lock);
	cr_assert_not_null(fl.head, "no pass queued");
	p.fr = kc_fring_pick(&p.lo, &p.hi, &p.cbs);
	pthread_mutex_unlock(&fl.lock);
	return p;
}

static void flusher_run(struct pass p)
{
	kc_fring_flush(p.fr, p.lo, p.hi);
	kc_fring_run_cbs(p.cbs);
	kc_fring_put(p.fr);
}

static void flusher_drain(void)
{
	while (fl.head)
		flusher_run(flusher_pick());
}

static void setup(void)
{
	memset(live, 0, sizeof(live));
	memset(pages, 0, sizeof(pages));
	broken[0] = 0;
}

TestSuite(fring, .init = setup);

/*
 * A pass takes fire 0's slot off the list; before it loads the index, the
 * file is read for the first time (the image is made) and fire 1 moves
 * the core's index, its slot not yet told: the pass must store slot 1
 * before it stores index 2.
 */
Test(fring, pass_stores_every_slot_its_index_publishes)
{
	struct kc_fring *fr;
	struct pass p;

	cr_assert_eq(kc_fring_new(2, live, &fr), 0);
	core_fire(0);
	core_tell(fr, 0);
	p = flusher_pick();
	kernel_read(fr);
	core_fire(1);
	flusher_run(p);
	cr_assert_eq(broken[0], 0, "%s", broken);
	cr_assert_eq(pages_index(), 2u);
	core_tell(fr, 1);
	flusher_drain();
	cr_assert_eq(broken[0], 0, "%s", broken);
	kc_fring_free(fr);
}

/*
 * The same across the wrap: the image at index 4094, then fires 4094 to
 * 4098 (slots 4094, 4095, 0, 1, 2), none told, before a pass with nothing
 * marked (a callback's): the pages still hold slots 0 to 2 of the first lap.
 */
Test(fring, pass_across_the_wrap_stores_the_new_lap)
{
	struct kc_fring *fr;

	cr_assert_eq(kc_fring_new(3, live, &fr), 0);
	for (__u32 n = 0; n < KEVENT_MAX_EVENTS - 2; n++)
		core_fire(n);
	kernel_read(fr);
	flusher_drain();
	cr_assert_eq(pages_index(), KEVENT_MAX_EVENTS - 2);
	for (__u32 n = KEVENT_MAX_EVENTS - 2; n < KEVENT_MAX_EVENTS + 3; n++)
		core_fire(n);
	pthread_mutex_lock(&fl.lock);
	kc_fring_queue(fr);
	pthread_mutex_unlock(&fl.lock);
	flusher_drain();
	cr_assert_eq(broken[0], 0, "%s", broken);
	cr_assert_eq(pages_index(), 3u);
	kc_fring_free(fr);
}
