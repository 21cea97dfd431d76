// SPDX-License-Identifier: GPL-2.0
/*
 * A hostile caller (design.md B2): another thread rewrites the wrapper header
 * (count and array address) while the call runs.  Whatever the backend
 * read and whenever it read it (the CUSE retry path reads the header once
 * per round), it may only write inside an array the header named at some
 * moment, never past its count, and the call ends with a result or a clean
 * -errno.  Under ptrace_scope=3 the CUSE daemon takes the retry path.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ktest.h"

enum { SLOTS = 8, CANARY = 0xa5, ROUNDS = 2000 };

struct arena {
	struct ukevent e[SLOTS];
	unsigned char canary[512];	/* nothing may land here */
};

static struct arena ar[2];
static struct ukevent pristine[SLOTS];
static void *guard;			/* a PROT_NONE page: -EFAULT */
static __u32 *flip_num;			/* the count field being rewritten */
static __u64 *flip_addr;		/* the address field being rewritten */
static int flip_stop;

static void *flipper(void *unused)
{
	(void)unused;
	for (unsigned int i = 0; !__atomic_load_n(&flip_stop, __ATOMIC_ACQUIRE); i++) {
		__u32 num = i % 97 == 0 ? 5000 : 1 + i % SLOTS;	/* now and then far too many */
		__u64 addr = i % 89 == 0 ? (uintptr_t)guard : (uintptr_t)ar[(i / 3) & 1].e;

		__atomic_store_n(flip_num, num, __ATOMIC_RELAXED);
		__atomic_store_n(flip_addr, addr, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void arenas_reset(void)
{
	for (int a = 0; a < 2; a++) {
		memcpy(ar[a].e, pristine, sizeof(pristine));
		memset(ar[a].canary, CANARY, sizeof(ar[a].canary));
	}
}

/* Criterion reports every assertion, passed ones too: fail only on a find. */
static void canaries_intact(int round)
{
	for (int a = 0; a < 2; a++)
		for (size_t b = 0; b < sizeof(ar[a].canary); b++)
			if (ar[a].canary[b] != CANARY)
				cr_assert_fail("round %d: byte %zu past array %d's %d entries was written",
					       round, b, a, SLOTS);
}

static void flipper_start(pthread_t *t, __u32 *num, __u64 *addr)
{
	guard = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert(guard != MAP_FAILED);
	flip_num = num;
	flip_addr = addr;
	*addr = (uintptr_t)ar[0].e;
	*num = 1;
	__atomic_store_n(&flip_stop, 0, __ATOMIC_RELEASE);
	cr_assert_eq(pthread_create(t, NULL, flipper, NULL), 0);
}

static void flipper_stop(pthread_t t)
{
	__atomic_store_n(&flip_stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	munmap(guard, 4096);
}

static int result_ok(int r)
{
	return r >= 0 || r == -EFAULT || r == -EINVAL || r == -E2BIG;
}

/* MODIFY of entries that match nothing writes each one back in place. */
KTEST(hostile, ctl_header_rewritten_during_call)
{
	int kfd = kt_open(O_RDWR), ok = 0;
	struct kevent_ctl_arg arg = { .cmd = KEVENT_CTL_MODIFY };
	pthread_t t;

	for (int i = 0; i < SLOTS; i++) {
		pristine[i] = kt_uk_timer(3600000, 0, 0x1000u + (unsigned)i);
		/* D25: MODIFY of num needs num kevents queued; other cookies match nothing. */
		kt_add_queued(kfd, kt_uk_timer(3600000, 0, 0x3000u + (unsigned)i));
	}
	arenas_reset();
	flipper_start(&t, &arg.num, &arg.events);
	for (int round = 0; round < ROUNDS; round++) {
		int r = kt_ioctl(kfd, KEVENT_IOC_CTL, &arg);

		if (!result_ok(r))
			cr_assert_fail("round %d: CTL returned %d (%s)", round, r, r < 0 ? strerror(-r) : "");
		ok += r == 0;
		canaries_intact(round);
		for (int a = 0; a < 2; a++)
			for (int i = 0; i < SLOTS; i++) {
				struct ukevent *e = &ar[a].e[i];

				/* Written back or untouched: only the result fields differ. */
				if (e->user[0] != pristine[i].user[0] || e->type != KEVENT_TIMER ||
				    e->id.raw[0] != pristine[i].id.raw[0] ||
				    (e->ret_flags && e->ret_flags != (KEVENT_RET_BROKEN | KEVENT_RET_DONE)))
					cr_assert_fail("round %d: entry %d of array %d rewritten (ret_flags %#x)",
						       round, i, a, e->ret_flags);
			}
		arenas_reset();
	}
	flipper_stop(t);
	cr_assert(ok > 0, "no CTL of %d succeeded", ROUNDS);
	cr_assert_eq(kt_queue_kevents(kfd), (unsigned int)SLOTS, "an unmatched MODIFY changed the queue");
	close(kfd);
}

/* GET_EVENTS copies out at most max_nr events to whichever array it read. */
KTEST(hostile, get_header_rewritten_during_call)
{
	int kfd = kt_open(O_RDWR), got = 0;
	struct kevent_get_events_arg arg = { .min_nr = 0, .timeout_ns = 0 };
	pthread_t t;

	memset(pristine, 0, sizeof(pristine));
	arenas_reset();
	for (int i = 0; i < 4; i++)
		kt_add_queued(kfd, kt_uk_timer(1, 0, 0x2000u + (unsigned)i));	/* periodic, 1 ms */
	flipper_start(&t, &arg.max_nr, &arg.events);
	for (int round = 0; round < ROUNDS; round++) {
		int r = kt_ioctl(kfd, KEVENT_IOC_GET_EVENTS, &arg);

		if (!result_ok(r) || r > SLOTS)
			cr_assert_fail("round %d: GET_EVENTS returned %d (%s)", round, r,
				       r < 0 ? strerror(-r) : "");
		got += r > 0 ? r : 0;
		canaries_intact(round);
		for (int a = 0; a < 2; a++)
			for (int i = 0; i < SLOTS; i++) {
				__u32 c = ar[a].e[i].user[0];

				if (c && (c < 0x2000u || c >= 0x2004u))
					cr_assert_fail("round %d: entry %d of array %d holds cookie %#x",
						       round, i, a, c);
			}
		arenas_reset();
	}
	flipper_stop(t);
	cr_assert(got > 0, "no event arrived in %d rounds", ROUNDS);
	cr_assert_eq(kt_queue_kevents(kfd), 4u, "the periodic kevents must stay");
	close(kfd);
}
