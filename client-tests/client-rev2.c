// SPDX-License-Identifier: GPL-2.0
/*
 * Revision 2 (docs/abi.md D40-D57): the ring in process memory
 * (RING_INIT, WAIT, COMMIT), KEVENT_CTL_READY, timespec timeouts, the EINTR
 * opt-in, unknown types per entry, ALWAYS_QUEUE, LEVEL and POLLRDHUP.
 * Every test here holds from revision 2 on (KTEST_REVS(..., 2, KTEST_OPEN);
 * one ends at revision 2, where revision 3 changes its matching, D63) and
 * skips where the backend serves revision 1 only.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ktest.h"

#define HOUR (3600u * 1000u)

static const struct timespec ts_zero;

static int ring_init(int kfd, void *ring, unsigned int num)
{
	struct kevent_ring_init ri = { .ring = (__u64)(uintptr_t)ring, .num = num };

	return kt_ioctl(kfd, KEVENT_IOC_RING_INIT, &ri);
}

/* A zeroed ring of num slots, 8-byte aligned. */
static struct kevent_uring *ring_new(unsigned int num)
{
	struct kevent_uring *r = calloc(1, KEVENT_URING_SIZE(num));

	cr_assert(r, "calloc");
	return r;
}

static int wait_rc(int kfd, unsigned int num, unsigned int old_uidx, struct timespec t,
		   unsigned int flags)
{
	int r = kevent_wait(kfd, num, old_uidx, t, flags);

	return r < 0 ? -errno : r;
}

static int commit_rc(int kfd, unsigned int new_uidx, unsigned int over)
{
	int r = kevent_commit(kfd, new_uidx, over);

	return r < 0 ? -errno : r;
}

/* n timers that never fire on their own, cookies 0 .. n-1, made ready by READY. */
static void add_ready_timers(int kfd, unsigned int n)
{
	struct ukevent *uk = calloc(n, sizeof(*uk));
	unsigned int i;

	cr_assert(uk);
	for (i = 0; i < n; i++)
		uk[i] = kt_uk_timer(HOUR, 0, i);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, n, uk), 0, "ADD %u timers", n);
	for (i = 0; i < n; i++)
		uk[i] = kt_uk_timer(HOUR, 0, i);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_READY, n, uk), (int)n, "READY %u", n);
	free(uk);
}

/* D40: INFO VER2 names the revisions. */
KTEST_REVS(rev2, info_reports_revisions, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), raw = open(kt_device(), O_RDWR);
	struct kevent_info i;

	cr_assert_geq(raw, 0);
	kt_info(kfd, &i);
	cr_assert_geq(i.size, (__u32)KEVENT_INFO_SIZE_VER2, "INFO size %u", i.size);
	cr_assert_eq(i.abi_lowest, 1u);
	cr_assert_geq(i.abi_revision, 2u);
	cr_assert_eq(i.queue_revision, (__u32)kt_rev(), "the instance's SET_ABI queue");
	kt_info(raw, &i);
	cr_assert_eq(i.queue_revision, 1u, "a queue without SET_ABI is revision 1");
	close(raw);
	close(kfd);
}

/* D40: a revision-1 queue sees take13 exactly: the ring calls are unknown numbers. */
KTEST_REVS(rev2, ring_calls_enotty_on_revision_1, 2, KTEST_OPEN)
{
	int raw = open(kt_device(), O_RDWR);
	struct kevent_commit_arg c = { 0, 0 };

	cr_assert_geq(raw, 0);
	cr_assert_eq(ring_init(raw, NULL, 0), -ENOTTY);
	cr_assert_eq(kt_ioctl(raw, KEVENT_IOC_COMMIT, &c), -ENOTTY);
	cr_assert_eq(wait_rc(raw, 1, 0, ts_zero, 0), -ENOTTY);
	close(raw);
}

/* D51: unknown types fail per entry with -ENOSYS; the rest of ADD is as ever. */
KTEST_REVS(rev2, unknown_types_enosys_per_entry, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent uk[4] = {
		kt_uk_timer(HOUR, 0, 1), kt_uk(KEVENT_MAX, 1, 0, 1, 0, 2),
		kt_uk(KEVENT_NAIO, 1, 0, 1, 0, 3), kt_uk(0xffffffffu, 1, 0, 1, 0, 4),
	};

	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 4, uk), 3, "three failed entries");
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(uk[i].user[0], (__u32)i + 2, "call order");
		cr_assert_eq(uk[i].ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE));
		cr_assert_eq(uk[i].ret_data[1], (__u32)-ENOSYS, "entry %d: %d", i, (int)uk[i].ret_data[1]);
	}
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	close(kfd);
}

/* D42, D43: under STRICT, revision 2 knows ALWAYS_QUEUE and LEVEL; 0x40 is unknown. */
KTEST_REVS(rev2, strict_mode_knows_rev2_flags, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent uk[2] = { kt_uk_timer(HOUR, 0x40, 1), kt_uk_timer(HOUR, KEVENT_REQ_ALWAYS_QUEUE, 2) };

	if (!(kt_backend_info()->features & KEVENT_FEAT_STRICT))
		cr_skip_test("no KEVENT_FEAT_STRICT");
	cr_assert_eq(kt_set_abi_flags(kfd, KEVENT_ABI_STRICT), 0);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 2, uk), 1);
	cr_assert_eq(uk[0].user[0], 1u);
	cr_assert_eq(uk[0].ret_data[1], (__u32)-EINVAL);
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	close(kfd);
}

/*
 * D53: where the backend cannot write the caller's memory (the CUSE retry
 * path: INFO without KEVENT_FEAT_URING, e.g. under Yama ptrace_scope=3),
 * RING_INIT is refused with -EPERM, so no ring exists there.
 */
KTEST_REVS(rev2, ring_init_eperm_off_process_memory, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct kevent_uring *r = ring_new(8);
	struct kevent_info info;

	kt_info(kfd, &info);
	if (info.features & KEVENT_FEAT_URING)
		cr_skip_test("this caller's memory is reachable (INFO has KEVENT_FEAT_URING): "
			     "the refusal shows where it is not (the guest's yama boot)");
	cr_assert_eq(ring_init(kfd, r, 8), -EPERM, "RING_INIT off process memory");
	kt_info(kfd, &info);
	cr_assert_eq(info.ring_num, 0u, "no ring after the refusal");
	close(kfd);
	free(r);
}

/* D53: RING_INIT's checks, once per queue, and it counts as the first CTL (O2). */
KTEST_REVS(rev2, ring_init_checks, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct kevent_uring *r = ring_new(8);
	void *gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	cr_assert_neq(gone, MAP_FAILED);
	munmap(gone, 4096);
	cr_assert_eq(ring_init(kfd, r, 1), -EINVAL, "1 slot");
	cr_assert_eq(ring_init(kfd, r, 0), -EINVAL, "ring without num");
	cr_assert_eq(ring_init(kfd, NULL, 8), -EINVAL, "num without ring");
	cr_assert_eq(ring_init(kfd, (char *)r + 4, 4), -EINVAL, "not 8-byte aligned");
	cr_assert_eq(ring_init(kfd, r, KEVENT_URING_MAX + 1), -EINVAL, "too many slots");
	cr_assert_eq(ring_init(kfd, gone, 8), -EFAULT, "unmapped ring");
	cr_assert_eq(ring_init(kfd, r, 8), 0);
	cr_assert_eq(ring_init(kfd, r, 8), -EBUSY, "second ring");
	/* The module once probed the new ring first and said EFAULT here. */
	cr_assert_eq(ring_init(kfd, gone, 8), -EBUSY, "second ring, unmapped: EBUSY first");
	cr_assert_eq(kt_set_abi_flags(kfd, 0), -EBUSY, "SET_ABI after RING_INIT");
	close(kfd);
	free(r);
}

/* D54, D55: without a ring, COMMIT is 0 and WAIT is EINVAL. */
KTEST_REVS(rev2, no_ring_commit_zero_wait_einval, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);

	cr_assert_eq(commit_rc(kfd, 0, 0), 0);
	cr_assert_eq(wait_rc(kfd, 1, 0, ts_zero, 0), -EINVAL);
	close(kfd);
}

/*
 * D46, D54, D55: more ready events than the ring holds, consumed through
 * wait/commit in rounds with wraps: every event arrives exactly once.
 */
KTEST_REVS(rev2, no_loss_rounds_with_wraps, 2, KTEST_OPEN)
{
	enum { NUM = 8, EVENTS = 40 };
	int kfd = kt_open(O_RDWR);
	struct kevent_uring *r = ring_new(NUM);
	unsigned int seen[EVENTS] = { 0 }, uidx = 0, total = 0, rounds = 0;

	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	cr_assert_eq(ring_init(kfd, r, NUM), 0);
	add_ready_timers(kfd, EVENTS);
	while (total < EVENTS) {
		int n = wait_rc(kfd, 5, uidx, ts_zero, 0);
		unsigned int kidx, over;

		cr_assert_gt(n, 0, "round %u: wait %d with %u left", rounds, n, EVENTS - total);
		kidx = __atomic_load_n(&r->ring_kidx, __ATOMIC_ACQUIRE);
		over = __atomic_load_n(&r->ring_over, __ATOMIC_ACQUIRE);
		cr_assert_eq(kidx, (uidx + (unsigned int)n) % NUM, "ring_kidx names the next free slot");
		for (int k = 0; k < n; k++) {
			unsigned int s = (uidx + (unsigned int)k) % NUM;
			__u32 c = r->event[s].user[0];

			cr_assert_lt(c, (__u32)EVENTS, "slot %u cookie %u", s, c);
			cr_assert_eq(seen[c]++, 0u, "cookie %u twice", c);
			cr_assert_eq(r->event[s].ret_flags, (__u32)KEVENT_RET_DONE);
		}
		cr_assert_eq(commit_rc(kfd, kidx, over), n, "commit frees what wait copied");
		uidx = kidx;
		total += (unsigned int)n;
		rounds++;
	}
	cr_assert_geq(r->ring_over, (__u32)(EVENTS / NUM - 1), "laps counted: %u", r->ring_over);
	cr_assert_eq(kt_queue_ready(kfd), 0u);
	close(kfd);
	free(r);
}

/* D54: a stale over is EOVERFLOW for a forward move; a commit already made is 0. */
KTEST_REVS(rev2, stale_over_eoverflow, 2, KTEST_OPEN)
{
	enum { NUM = 4 };
	int kfd = kt_open(O_RDWR);
	struct kevent_uring *r = ring_new(NUM);

	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	cr_assert_eq(ring_init(kfd, r, NUM), 0);
	add_ready_timers(kfd, 10);
	cr_assert_eq(wait_rc(kfd, 3, 0, ts_zero, 0), 3);
	cr_assert_eq(commit_rc(kfd, 3, 0), 3);
	cr_assert_eq(wait_rc(kfd, 3, 3, ts_zero, 0), 3);	/* slots 3, 0, 1 */
	cr_assert_eq(r->ring_kidx, 2u);
	cr_assert_eq(commit_rc(kfd, 2, 1), -EOVERFLOW, "over ahead of the laps");
	cr_assert_eq(commit_rc(kfd, 3, 0), 0, "nothing to free at uidx");
	cr_assert_eq(commit_rc(kfd, 2, 0), 3, "the wrapping commit");
	cr_assert_eq(r->ring_over, 1u, "a wrap stores ring_over");
	cr_assert_eq(commit_rc(kfd, 1, 0), 0, "a commit another thread already made");
	cr_assert_eq(commit_rc(kfd, 3, 0), -EOVERFLOW, "a forward move with a stale over");
	cr_assert_eq(commit_rc(kfd, 3, 1), -EINVAL, "past the backend's kidx");
	cr_assert_eq(commit_rc(kfd, NUM, 1), -EINVAL, "new_uidx out of range");
	close(kfd);
	free(r);
}

/* D55: a stale old_uidx returns 0 at once, the ring untouched. */
KTEST_REVS(rev2, wait_stale_old_uidx_returns_zero, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct kevent_uring *r = ring_new(4);

	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	cr_assert_eq(ring_init(kfd, r, 4), 0);
	add_ready_timers(kfd, 2);
	cr_assert_eq(wait_rc(kfd, 4, 1, ts_zero, 0), 0, "old_uidx 1 is not uidx 0");
	cr_assert_eq(kt_queue_ready(kfd), 2u);
	cr_assert_eq(wait_rc(kfd, 4, 4, ts_zero, 0), -EINVAL, "old_uidx out of range");
	close(kfd);
	free(r);
}

/* D46: get_events and wait mixed: each event once, in one place. */
KTEST_REVS(rev2, get_events_and_wait_mixed, 2, KTEST_OPEN)
{
	enum { NUM = 16, EVENTS = 10 };
	int kfd = kt_open(O_RDWR);
	struct kevent_uring *r = ring_new(NUM);
	struct ukevent out[EVENTS];
	unsigned int seen[EVENTS] = { 0 };

	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	cr_assert_eq(ring_init(kfd, r, NUM), 0);
	add_ready_timers(kfd, EVENTS);
	cr_assert_eq(kt_get(kfd, 0, 4, 0, out), 4);
	cr_assert_eq(r->ring_kidx, 0u, "GET_EVENTS never writes the ring");
	for (int i = 0; i < 4; i++)
		seen[out[i].user[0]]++;
	cr_assert_eq(wait_rc(kfd, NUM, 0, ts_zero, 0), EVENTS - 4);
	for (int s = 0; s < EVENTS - 4; s++)
		seen[r->event[s].user[0]]++;
	for (int c = 0; c < EVENTS; c++)
		cr_assert_eq(seen[c], 1u, "cookie %d seen %u times", c, seen[c]);
	close(kfd);
	free(r);
}

/* D41: a ring that faults loses nothing: the events stay ready, counted in INFO. */
KTEST_REVS(rev2, faulting_ring_requeues, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* slots 0 and 1 on the first page, slots 2 .. 7 on the second */
	struct kevent_uring *r = (struct kevent_uring *)(m + pg - 8 - 2 * 40);
	struct ukevent out[8];
	struct kevent_info i;

	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	cr_assert_neq(m, MAP_FAILED);
	memset(m, 0, 2 * pg);
	cr_assert_eq(ring_init(kfd, r, 8), 0);
	add_ready_timers(kfd, 8);
	munmap(m + pg, pg);
	cr_assert_eq(wait_rc(kfd, 8, 0, ts_zero, 0), -EFAULT, "slots 2 .. 7 fault");
	cr_assert_eq(r->ring_kidx, 0u, "nothing published");
	kt_info(kfd, &i);
	cr_assert_eq(i.ring_faults, 1u, "INFO counts the fault");
	cr_assert_eq(i.ring_kidx, 0u);
	cr_assert_eq(kt_queue_ready(kfd), 8u, "nothing lost: all still ready");
	cr_assert_eq(wait_rc(kfd, 2, 0, ts_zero, 0), 2, "the mapped slots still work");
	cr_assert_eq(r->event[0].user[0], 0u, "in order: the requeued head first");
	cr_assert_eq(r->event[1].user[0], 1u);
	cr_assert_eq(kt_get(kfd, 0, 8, 0, out), 6, "GET_EVENTS takes the rest");
	munmap(m, pg);
	close(kfd);
}

/* D49: READY marks the listed kevents; a miss is BROKEN; ret_data {0, 0}. */
KTEST_REVS(rev2, ready_marks_listed_kevents, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent uk[2] = { kt_uk_timer(HOUR, 0, 7), kt_uk_timer(HOUR, 0, 8) };

	kt_add_queued(kfd, kt_uk_timer(HOUR, 0, 7));
	kt_add_queued(kfd, kt_uk_timer(HOUR, 0, 9));
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_READY, 2, uk), 1, "one matched");
	cr_assert_eq(uk[0].ret_flags, (__u32)KEVENT_RET_DONE);
	cr_assert_eq(uk[1].ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE), "no match");
	struct ukevent got = kt_get_one(kfd, "the kevent READY marked");
	cr_assert_eq(got.user[0], 7u);
	cr_assert_eq(got.ret_flags, (__u32)KEVENT_RET_DONE);
	cr_assert_eq(got.ret_data[0], 0u);
	cr_assert_eq(got.ret_data[1], 0u);
	close(kfd);
}

/* D50: READY with num 0 and no waiter is latched: POLLIN, then the next call returns at once. */
KTEST_REVS(rev2, ready_num0_latched, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent out[1];

	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_READY, 0, NULL), 0, "no waiter: latched");
	cr_assert(kt_poll1(kfd, POLLIN, 0) & POLLIN, "latched wake raises POLLIN");
	cr_assert_eq(kt_get(kfd, 1, 1, KEVENT_TIMEOUT_INFINITE, out), 0, "returns at once");
	cr_assert_eq(kt_poll1(kfd, POLLIN, 0), 0, "the call cleared the latch");
	close(kfd);
}

struct waiter {
	int kfd;
	unsigned int old_uidx;
	int result;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;

	w->result = wait_rc(w->kfd, 4, w->old_uidx, ts_zero, KEVENT_FLAGS_NO_TIMEOUT);
	return NULL;
}

/* D50, D55: one thread in kevent_wait, another wakes it with READY num 0. */
KTEST_REVS(rev2, ready_num0_wakes_a_blocked_wait, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct kevent_uring *r = ring_new(4);
	struct waiter w = { kfd, 0, -1 };
	pthread_t t;

	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	cr_assert_eq(ring_init(kfd, r, 4), 0);
	cr_assert_eq(pthread_create(&t, NULL, wait_thread, &w), 0);
	kt_await_parked(kfd, 1, 10000);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_READY, 0, NULL), 1, "one waiter woken");
	pthread_join(t, NULL);
	cr_assert_eq(w.result, 0, "woken with nothing ready: 0");
	close(kfd);
	free(r);
}

/* D55: a wait blocked on a full ring returns once a commit frees a slot. */
KTEST_REVS(rev2, wait_on_full_ring_wakes_on_commit, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct kevent_uring *r = ring_new(2);
	struct waiter w = { kfd, 0, -1 };
	pthread_t t;

	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	cr_assert_eq(ring_init(kfd, r, 2), 0);
	add_ready_timers(kfd, 3);
	cr_assert_eq(wait_rc(kfd, 4, 0, ts_zero, 0), 2, "the ring holds 2");
	cr_assert_eq(wait_rc(kfd, 4, 0, ts_zero, 0), 0, "full: nothing copied");
	cr_assert_eq(pthread_create(&t, NULL, wait_thread, &w), 0);
	kt_await_parked(kfd, 1, 10000);
	cr_assert_eq(commit_rc(kfd, 1, 0), 1);
	pthread_join(t, NULL);
	cr_assert_eq(w.result, 1, "the freed slot takes the third event");
	cr_assert_eq(r->event[0].user[0], 2u, "written at the freed slot 0");
	cr_assert_eq(kt_queue_ready(kfd), 0u);
	close(kfd);
	free(r);
}

/* D48: timespec checks of the timespec GET_EVENTS. */
KTEST_REVS(rev2, timespec_checks, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent out[1];
	struct timespec bad = { 0, 1000000000 }, one = { 1, 0 }, past = { 1, 0 };

	errno = 0;
	cr_assert_eq(kevent_get_events_ts(kfd, 1, 1, bad, out, 0), -1);
	cr_assert_eq(errno, EINVAL, "tv_nsec 10^9");
	cr_assert_eq(kevent_get_events_ts(kfd, 1, 1, one, out, KEVENT_FLAGS_NO_TIMEOUT), -1);
	cr_assert_eq(errno, EINVAL, "NO_TIMEOUT with a timespec");
	cr_assert_eq(kevent_get_events_ts(kfd, 1, 1, ts_zero, out, KEVENT_FLAGS_MONOTONIC), -1);
	cr_assert_eq(errno, EINVAL, "MONOTONIC without ABSTIME");
	cr_assert_eq(kevent_get_events_ts(kfd, 1, 1, ts_zero, out, 0x80), -1);
	cr_assert_eq(errno, EINVAL, "unknown flag");
	cr_assert_eq(kevent_get_events_ts(kfd, 1, 1, ts_zero, out, 0), 0, "{0, 0}: no wait");
	cr_assert_eq(kevent_get_events_ts(kfd, 1, 1, past, out, KEVENT_FLAGS_ABSTIME), 0,
		     "a realtime deadline in 1970: no wait");
	kt_add_queued(kfd, kt_uk_timer(1, KEVENT_REQ_ONESHOT, 3));
	cr_assert_eq(kevent_get_events_ts(kfd, 1, 1, ts_zero, out, KEVENT_FLAGS_NO_TIMEOUT), 1,
		     "no timeout: waits for the 1 ms timer");
	close(kfd);
}

/*
 * D48 across clock_settime: a WAIT and a timespec GET_EVENTS, each on a
 * queue of its own and a thread of its own, with one ABSTIME
 * CLOCK_REALTIME deadline.
 */
struct abs_call {
	int kfd;
	bool is_wait;
	struct timespec deadline;
	int result;
	atomic_bool done;
	pthread_t t;
	struct kevent_uring *r;
};

static void *abs_call_thread(void *arg)
{
	struct abs_call *c = arg;
	struct ukevent out[1];
	int r;

	if (c->is_wait) {
		r = wait_rc(c->kfd, 1, 0, c->deadline, KEVENT_FLAGS_ABSTIME);
	} else {
		r = kevent_get_events_ts(c->kfd, 1, 1, c->deadline, out, KEVENT_FLAGS_ABSTIME);
		r = r < 0 ? -errno : r;
	}
	c->result = r;
	atomic_store(&c->done, true);
	return NULL;
}

/* Both calls parked with the deadline now + sec (realtime), returned in c[2]. */
static void abs_calls_start(struct abs_call c[2], long sec)
{
	struct timespec now;
	int i;

	clock_gettime(CLOCK_REALTIME, &now);
	for (i = 0; i < 2; i++) {
		c[i] = (struct abs_call){ .kfd = kt_open(O_RDWR), .is_wait = i == 0 };
		c[i].deadline = (struct timespec){ now.tv_sec + sec, now.tv_nsec };
		atomic_init(&c[i].done, false);
		if (c[i].is_wait) {
			c[i].r = ring_new(4);
			cr_assert_eq(ring_init(c[i].kfd, c[i].r, 4), 0, "RING_INIT");
		}
		cr_assert_eq(pthread_create(&c[i].t, NULL, abs_call_thread, &c[i]), 0);
		kt_await_parked(c[i].kfd, 1, 10000);
	}
}

/* Until both returned or ms passed: true if both did. */
static bool abs_calls_await(struct abs_call c[2], unsigned int ms)
{
	unsigned int i;

	for (i = 0; i < ms / 10; i++) {
		if (atomic_load(&c[0].done) && atomic_load(&c[1].done))
			return true;
		kt_sleep_ms(10);
	}
	return atomic_load(&c[0].done) && atomic_load(&c[1].done);
}

/* Ends a call still waiting (an event for it) and joins both. */
static void abs_calls_end(struct abs_call c[2])
{
	int i;

	for (i = 0; i < 2; i++) {
		if (!atomic_load(&c[i].done)) {
			struct ukevent uk = kt_uk_timer(1, KEVENT_REQ_ONESHOT, 9);

			kevent_ctl(c[i].kfd, KEVENT_CTL_ADD, 1, &uk);
		}
		pthread_join(c[i].t, NULL);
		close(c[i].kfd);
		free(c[i].r);
	}
}

/*
 * D48: an ABSTIME CLOCK_REALTIME deadline follows clock_settime forward:
 * 40 s away, it is passed when the clock is set 50 s ahead, and both calls
 * return 0 within 25 s, not at the 40 s their monotonic wait would take.
 * The shift stays small: Criterion's test timeout (KTEST_TIMEOUT) follows
 * the wall clock, and a jump of two hours ended this test as "timed out"
 * on every backend.
 */
KTEST_REVS(rev2, clock_set_forward_ends_abstime_calls, 2, KTEST_OPEN)
{
	struct abs_call c[2];
	bool ended;
	int err;

	kt_require_clock_set();
	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	abs_calls_start(c, 40);
	err = kt_clock_shift(50);
	if (err) {
		abs_calls_end(c);
		cr_skip_test("clock_settime: %s", strerror(-err));
	}
	ended = abs_calls_await(c, 25000);
	kt_clock_shift(-50);
	abs_calls_end(c);
	cr_assert(ended, "a call with a realtime deadline passed by clock_settime still waits");
	cr_assert_eq(c[0].result, 0, "WAIT: the deadline passed, nothing copied");
	cr_assert_eq(c[1].result, 0, "GET_EVENTS: the deadline passed, nothing taken");
}

/*
 * D48: and backward: with the clock set an hour back before its deadline
 * (5 s away), a call still waits 7 s later; set forward again, it ends.
 * (A jump back does not trip Criterion's timeout; the jump forward only
 * puts the clock back.)
 */
KTEST_REVS(rev2, clock_set_backward_delays_abstime_calls, 2, KTEST_OPEN)
{
	struct abs_call c[2];
	struct timespec now;
	bool early, ended;
	int err;

	kt_require_clock_set();
	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	abs_calls_start(c, 5);
	clock_gettime(CLOCK_REALTIME, &now);
	if (now.tv_sec + 1 >= c[1].deadline.tv_sec) {
		abs_calls_end(c);
		cr_skip_test("parking two calls took over 4 s: too close to their deadline to judge");
	}
	err = kt_clock_shift(-3600);
	if (err) {
		abs_calls_end(c);
		cr_skip_test("clock_settime: %s", strerror(-err));
	}
	kt_sleep_ms(7000);
	early = atomic_load(&c[0].done) || atomic_load(&c[1].done);
	kt_clock_shift(3600);
	ended = abs_calls_await(c, 30000);
	abs_calls_end(c);
	cr_assert(!early, "a call ended at its deadline's old place on the clock set back");
	cr_assert(ended, "set forward again past its deadline, a call still waits");
	cr_assert_eq(c[0].result, 0, "WAIT: the deadline passed, nothing copied");
	cr_assert_eq(c[1].result, 0, "GET_EVENTS: the deadline passed, nothing taken");
}

static void on_signal(int sig)
{
	(void)sig;
}

struct getter {
	int kfd, result;
};

static void *get_thread(void *arg)
{
	struct getter *g = arg;
	struct ukevent out[1];

	g->result = kt_get(g->kfd, 1, 1, KEVENT_TIMEOUT_INFINITE, out);
	return NULL;
}

/* D47: with KEVENT_ABI_EINTR a signal ends a blocked GET_EVENTS with EINTR. */
KTEST_REVS(rev2, eintr_opt_in, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART */
	struct getter g = { kfd, 1 };
	pthread_t t;

	cr_assert_eq(kt_set_abi_flags(kfd, KEVENT_ABI_EINTR), 0);
	sigaction(SIGUSR1, &sa, NULL);
	cr_assert_eq(pthread_create(&t, NULL, get_thread, &g), 0);
	kt_await_parked(kfd, 1, 10000);
	pthread_kill(t, SIGUSR1);
	pthread_join(t, NULL);
	cr_assert_eq(g.result, -EINTR, "got %d", g.result);
	close(kfd);
}

/*
 * D47: the EINTR is -EINTR, never a restart: with an SA_RESTART handler the
 * blocked GET_EVENTS still ends with EINTR instead of waiting on.
 */
KTEST_REVS(rev2, eintr_opt_in_not_restarted_by_sa_restart, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	struct getter g = { kfd, 1 };
	pthread_t t;

	cr_assert_eq(kt_set_abi_flags(kfd, KEVENT_ABI_EINTR), 0);
	sigaction(SIGUSR1, &sa, NULL);
	cr_assert_eq(pthread_create(&t, NULL, get_thread, &g), 0);
	kt_await_parked(kfd, 1, 10000);
	pthread_kill(t, SIGUSR1);
	/* A restarted call parks again and waits for ever: end it, then judge. */
	for (int i = 0; i < 500 && __atomic_load_n(&g.result, __ATOMIC_ACQUIRE) == 1; i++)
		kt_sleep_ms(10);
	if (__atomic_load_n(&g.result, __ATOMIC_ACQUIRE) == 1) {
		struct ukevent uk = kt_uk_timer(1, KEVENT_REQ_ONESHOT, 9);

		kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &uk);
	}
	pthread_join(t, NULL);
	cr_assert_eq(g.result, -EINTR, "SA_RESTART: got %d (a restart, then the event, is 1)",
		     g.result);
	close(kfd);
}

/* D47: the EINTR opt-in is a revision-2 rule. */
KTEST_REVS(rev2, eintr_with_revision_1_einval, 2, KTEST_OPEN)
{
	int raw = open(kt_device(), O_RDWR);
	struct kevent_set_abi s = { .revision = 1, .flags = KEVENT_ABI_EINTR };

	cr_assert_geq(raw, 0);
	cr_assert_eq(kt_ioctl(raw, KEVENT_IOC_SET_ABI, &s), -EINVAL);
	close(raw);
}

/* D43: KEVENT_REQ_LEVEL exists for POLL and SOCKET only: a timer with it fails per entry. */
KTEST_REVS(rev2, level_on_a_timer_einval, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent uk = kt_uk_timer(HOUR, KEVENT_REQ_LEVEL, 1);

	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &uk), 1, "answered by ADD");
	cr_assert_eq(uk.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE));
	cr_assert_eq(uk.ret_data[1], (__u32)-EINVAL, "ret_data[1] %d", (int)uk.ret_data[1]);
	cr_assert_eq(kt_queue_kevents(kfd), 0u);
	close(kfd);
}

/* One non-blocking GET_EVENTS into out[4]: the count, asserted >= 0. */
static int get_now(int kfd, struct ukevent *out)
{
	int n = kt_get(kfd, 0, 4, 0, out);

	cr_assert_geq(n, 0, "GET_EVENTS: %d", n);
	return n;
}

/* D42: a pipe ready at ADD is queued, not answered by ADD, and delivered once. */
KTEST_REVS(rev2, always_queue_ready_at_add, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent uk, out[4];

	kt_pipe(p);
	kt_write1(p[1]);
	uk = kt_uk_poll(p[0], POLLIN, KEVENT_REQ_ALWAYS_QUEUE, 7);
	kt_ctl1(kfd, KEVENT_CTL_ADD, &uk, 0);	/* not in ADD's answered front part */
	cr_assert_eq(kt_queue_kevents(kfd), 1u, "registered");
	cr_assert_eq(kt_queue_ready(kfd), 1u, "on the ready list when ADD returns");
	cr_assert_eq(get_now(kfd, out), 1);
	cr_assert_eq(out[0].user[0], 7u);
	cr_assert(out[0].ret_data[0] & POLLIN, "ret_data[0] %#x", out[0].ret_data[0]);
	cr_assert_eq(get_now(kfd, out), 0, "exactly once: the unread byte is no new activity");
	kt_write1(p[1]);
	out[0] = kt_get_one(kfd, "a new write after the delivery");
	cr_assert_eq(out[0].user[0], 7u, "still registered");
	close(p[0]);
	close(p[1]);
	close(kfd);
}

/* D42 with ONESHOT: delivered once, then freed; without the flag ADD answers it. */
KTEST_REVS(rev2, always_queue_oneshot_and_without, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent uk, out[4];

	kt_pipe(p);
	kt_write1(p[1]);
	uk = kt_uk_poll(p[0], POLLIN, KEVENT_REQ_ALWAYS_QUEUE | KEVENT_REQ_ONESHOT, 8);
	kt_ctl1(kfd, KEVENT_CTL_ADD, &uk, 0);
	cr_assert_eq(get_now(kfd, out), 1);
	cr_assert_eq(out[0].user[0], 8u);
	cr_assert_eq(kt_queue_kevents(kfd), 0u, "ONESHOT freed at its delivery");
	uk = kt_uk_poll(p[0], POLLIN, 0, 9);
	kt_ctl1(kfd, KEVENT_CTL_ADD, &uk, 1);	/* D31: answered by ADD, not registered */
	cr_assert(uk.ret_data[0] & POLLIN);
	cr_assert_eq(kt_queue_kevents(kfd), 0u);
	close(p[0]);
	close(p[1]);
	close(kfd);
}

/* D43: data left unread is reported again at the next dequeue; drained, it is not. */
KTEST_REVS(rev2, level_reports_unread_data_again, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), p[2], q[2];
	struct ukevent uk, out[4];

	kt_pipe(p);
	kt_pipe(q);
	uk = kt_uk_poll(p[0], POLLIN, KEVENT_REQ_LEVEL, 1);
	kt_add_queued(kfd, uk);
	uk = kt_uk_poll(q[0], POLLIN, 0, 2);	/* the edge-like default, for contrast */
	kt_add_queued(kfd, uk);
	kt_write1(p[1]);
	kt_write1(q[1]);
	cr_assert(kt_wait_ready(kfd, 2, 5000), "both fired");
	cr_assert_eq(get_now(kfd, out), 2);
	for (int round = 0; round < 3; round++) {
		cr_assert_eq(get_now(kfd, out), 1, "round %d: the LEVEL kevent only", round);
		cr_assert_eq(out[0].user[0], 1u);
		cr_assert_eq(out[0].ret_data[0], (__u32)POLLIN, "a fresh result");
	}
	kt_read_all(p[0]);
	cr_assert_eq(get_now(kfd, out), 0, "drained: not reported again");
	cr_assert_eq(get_now(kfd, out), 0, "nor later");
	kt_write1(p[1]);
	out[0] = kt_get_one(kfd, "new data after the drain");
	cr_assert_eq(out[0].user[0], 1u);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	close(kfd);
}

/* D43: LEVEL on a SOCKET kevent, and MODIFY without LEVEL ends the re-reports. */
KTEST_REVS(rev2, level_socket_and_modify_off, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), sv[2];
	struct ukevent uk, out[4];

	kt_socketpair(SOCK_STREAM, sv);
	uk = kt_uk(KEVENT_SOCKET, (__u32)sv[0], 0, KEVENT_SOCKET_RECV, KEVENT_REQ_LEVEL, 3);
	kt_add_queued(kfd, uk);
	kt_write1(sv[1]);
	out[0] = kt_get_one(kfd, "socket data");
	cr_assert_eq(out[0].ret_data[0], (__u32)KEVENT_SOCKET_RECV);
	cr_assert_eq(get_now(kfd, out), 1, "unread: reported again");
	uk.req_flags = 0;
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &uk, 0);
	cr_assert_eq(get_now(kfd, out), 1, "MODIFY found it ready (A6)");
	cr_assert_eq(get_now(kfd, out), 0, "LEVEL cleared: no more re-reports");
	close(sv[0]);
	close(sv[1]);
	close(kfd);
}

/* D52: the peer's shutdown of writing is POLLRDHUP on revision 2, never on revision 1. */
KTEST_REVS(rev2, pollrdhup_on_peer_shutdown, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), raw = open(kt_device(), O_RDWR), sv[2];
	struct ukevent uk, s, out[4];

	cr_assert_geq(raw, 0);
	kt_socketpair(SOCK_STREAM, sv);
	uk = kt_uk_poll(sv[0], POLLIN | KEVENT_POLL_POLLRDHUP, 0, 4);
	kt_add_queued(kfd, uk);
	s = kt_uk(KEVENT_SOCKET, (__u32)sv[0], 0, KEVENT_SOCKET_RECV | KEVENT_POLL_POLLRDHUP, 0, 5);
	kt_add_queued(kfd, s);
	cr_assert_eq(shutdown(sv[1], SHUT_WR), 0);
	cr_assert(kt_wait_ready(kfd, 2, 5000), "both fired");
	cr_assert_eq(kt_get(kfd, 2, 4, 0, out), 2);
	for (int i = 0; i < 2; i++) {
		__u32 want = out[i].user[0] == 4 ? (__u32)(POLLIN | KEVENT_POLL_POLLRDHUP)
						 : (__u32)(KEVENT_SOCKET_RECV | KEVENT_POLL_POLLRDHUP);

		cr_assert_eq(out[i].ret_data[0], want, "cookie %u: %#x", out[i].user[0],
			     out[i].ret_data[0]);
	}
	/* revision 1: the same socket is ready at ADD, without the bit */
	uk = kt_uk_poll(sv[0], POLLIN | KEVENT_POLL_POLLRDHUP, 0, 6);
	kt_ctl1(raw, KEVENT_CTL_ADD, &uk, 1);
	cr_assert_eq(uk.ret_data[0], (__u32)POLLIN, "revision 1: %#x", uk.ret_data[0]);
	close(sv[0]);
	close(sv[1]);
	close(raw);
	close(kfd);
}

/* ---- every dequeue rule through kevent_wait as through GET_EVENTS ---- */

/* A reader of a kevent_uring: the next slot to read and the ring it reads. */
struct reader {
	int kfd;
	struct kevent_uring *r;
	unsigned int num, uidx;
};

/* A queue of this instance with a ring of num slots (KEVENT_FEAT_URING required). */
static struct reader reader_new(unsigned int num)
{
	struct reader rd = { .num = num };

	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	rd.kfd = kt_open(O_RDWR);
	rd.r = ring_new(num);
	cr_assert_eq(ring_init(rd.kfd, rd.r, num), 0, "RING_INIT");
	return rd;
}

static void reader_close(struct reader *rd)
{
	close(rd->kfd);
	free(rd->r);
}

/*
 * One non-blocking WAIT of up to max (<= the ring's free slots): its records
 * copied to out, their slots committed.  Returns the count, asserted >= 0.
 */
static int wait_now(struct reader *rd, struct ukevent *out, unsigned int max)
{
	int n = wait_rc(rd->kfd, max, rd->uidx, ts_zero, 0);
	unsigned int kidx, over;

	cr_assert_geq(n, 0, "WAIT: %s", strerror(-n));
	kidx = __atomic_load_n(&rd->r->ring_kidx, __ATOMIC_ACQUIRE);
	over = __atomic_load_n(&rd->r->ring_over, __ATOMIC_ACQUIRE);
	cr_assert_eq(kidx, (rd->uidx + (unsigned int)n) % rd->num, "ring_kidx after %d", n);
	for (int i = 0; i < n; i++)
		out[i] = rd->r->event[(rd->uidx + (unsigned int)i) % rd->num];
	if (n)
		cr_assert_eq(commit_rc(rd->kfd, kidx, over), n, "COMMIT");
	rd->uidx = kidx;
	return n;
}

/* D55: a ONESHOT kevent delivered by WAIT is freed; the others stay registered. */
KTEST_REVS(rev2, wait_frees_oneshot_after_delivery, 2, KTEST_OPEN)
{
	struct reader rd = reader_new(8);
	struct ukevent out[8], t = kt_uk_timer(HOUR, KEVENT_REQ_ONESHOT, 3);
	int p[2];

	kt_pipe(p);
	kt_add_queued(rd.kfd, kt_uk_poll(p[0], POLLIN, KEVENT_REQ_ONESHOT, 1));
	kt_add_queued(rd.kfd, kt_uk_poll(p[0], POLLIN, 0, 2));
	kt_add_queued(rd.kfd, t);
	kt_write1(p[1]);
	cr_assert(kt_wait_ready(rd.kfd, 2, 5000), "both pipe kevents fired");
	kt_ctl1(rd.kfd, KEVENT_CTL_READY, &t, 1);	/* a ONESHOT made ready by READY (D49) */
	cr_assert_eq(wait_now(&rd, out, 8), 3);
	cr_assert_eq(kt_queue_kevents(rd.kfd), 1u, "the two ONESHOT kevents freed by WAIT");
	kt_write1(p[1]);
	cr_assert(kt_wait_ready(rd.kfd, 1, 5000), "the other one fires again");
	cr_assert_eq(wait_now(&rd, out, 8), 1, "only the registered one");
	cr_assert_eq(out[0].user[0], 2u);
	close(p[0]);
	close(p[1]);
	reader_close(&rd);
}

/* A6, D21: a kevent dequeued by WAIT re-fires on new activity only, its result rebuilt. */
KTEST_REVS(rev2, wait_refires_on_new_activity_only, 2, KTEST_OPEN)
{
	struct reader rd = reader_new(8);
	struct ukevent out[8];
	int p[2];

	kt_pipe(p);
	kt_add_queued(rd.kfd, kt_uk_poll(p[0], POLLIN | POLLOUT, 0, 1));
	kt_write1(p[1]);
	cr_assert(kt_wait_ready(rd.kfd, 1, 5000), "fired");
	cr_assert_eq(wait_now(&rd, out, 8), 1);
	cr_assert_eq(out[0].ret_flags, (__u32)KEVENT_RET_DONE);
	cr_assert_eq(out[0].ret_data[0], (__u32)POLLIN, "%#x", out[0].ret_data[0]);
	cr_assert_eq(wait_now(&rd, out, 8), 0, "the unread byte is no new activity");
	cr_assert_eq(kt_get(rd.kfd, 0, 4, 0, out), 0, "nor for GET_EVENTS");
	kt_write1(p[1]);
	cr_assert(kt_wait_ready(rd.kfd, 1, 5000), "a new write fires it again");
	cr_assert_eq(wait_now(&rd, out, 8), 1);
	cr_assert_eq(out[0].user[0], 1u);
	cr_assert_eq(out[0].ret_flags, (__u32)KEVENT_RET_DONE, "ret_flags rebuilt: %#x",
		     out[0].ret_flags);
	close(p[0]);
	close(p[1]);
	reader_close(&rd);
}

/*
 * D43 through WAIT: a LEVEL kevent dequeued by WAIT is checked again at the
 * start of the next WAIT or GET_EVENTS, and one dequeued by GET_EVENTS at
 * the start of the next WAIT; a blocking WAIT finds it before it decides
 * to wait.  Drained, it is not reported again.
 */
KTEST_REVS(rev2, wait_level_reports_unread_data_again, 2, KTEST_OPEN)
{
	struct reader rd = reader_new(8);
	struct ukevent out[8];
	int p[2], q[2], n;

	kt_pipe(p);
	kt_pipe(q);
	kt_add_queued(rd.kfd, kt_uk_poll(p[0], POLLIN, KEVENT_REQ_LEVEL, 1));
	kt_add_queued(rd.kfd, kt_uk_poll(q[0], POLLIN, 0, 2));	/* edge-like, for contrast */
	kt_write1(p[1]);
	kt_write1(q[1]);
	cr_assert(kt_wait_ready(rd.kfd, 2, 5000), "both fired");
	cr_assert_eq(wait_now(&rd, out, 8), 2);
	for (int round = 0; round < 2; round++) {
		cr_assert_eq(wait_now(&rd, out, 8), 1, "round %d: the LEVEL kevent again", round);
		cr_assert_eq(out[0].user[0], 1u);
		cr_assert_eq(out[0].ret_data[0], (__u32)POLLIN);
	}
	cr_assert_eq(kt_get(rd.kfd, 0, 4, 0, out), 1, "taken by WAIT, re-checked by GET_EVENTS");
	cr_assert_eq(out[0].user[0], 1u);
	cr_assert_eq(wait_now(&rd, out, 8), 1, "taken by GET_EVENTS, re-checked by WAIT");
	/* blocking: the re-check comes before the decision to wait */
	n = wait_rc(rd.kfd, 8, rd.uidx, (struct timespec){ 30, 0 }, 0);
	cr_assert_eq(n, 1, "a blocking WAIT: %d", n);
	cr_assert_eq(rd.r->event[rd.uidx].user[0], 1u);
	cr_assert_eq(commit_rc(rd.kfd, (rd.uidx + 1) % rd.num, rd.r->ring_over), 1);
	rd.uidx = (rd.uidx + 1) % rd.num;
	kt_read_all(p[0]);
	cr_assert_eq(wait_now(&rd, out, 8), 0, "drained: not reported again");
	cr_assert_eq(kt_get(rd.kfd, 0, 4, 0, out), 0, "nor by GET_EVENTS");
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	reader_close(&rd);
}

/* A TCP connection on loopback: the listener, the client and the accepted end. */
static void tcp_conn(int *lst, int *cli, int *srv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);

	*lst = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(*lst, 0, "socket: %s", strerror(errno));
	cr_assert_eq(bind(*lst, (struct sockaddr *)&a, len), 0, "bind: %s", strerror(errno));
	cr_assert_eq(listen(*lst, 4), 0);
	cr_assert_eq(getsockname(*lst, (struct sockaddr *)&a, &len), 0);
	*cli = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_eq(connect(*cli, (struct sockaddr *)&a, len), 0, "connect: %s", strerror(errno));
	*srv = accept4(*lst, NULL, NULL, SOCK_CLOEXEC);
	cr_assert_geq(*srv, 0, "accept: %s", strerror(errno));
}

/* The peer of a connection resets it (SO_LINGER 0, close): RST. */
static void tcp_reset(int cli)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	cr_assert_eq(setsockopt(cli, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
	close(cli);
}

/*
 * O6 through WAIT: a BROKEN kevent that is not ONESHOT is delivered by WAIT
 * and stays registered (it counts and can be REMOVEd); it never fires again.
 */
KTEST_REVS(rev2, wait_keeps_broken_kevent_registered, 2, KTEST_OPEN)
{
	struct reader rd;
	struct ukevent out[8], uk;
	int lst, cli, srv;

	kt_require_type(KEVENT_SOCKET);
	rd = reader_new(8);
	tcp_conn(&lst, &cli, &srv);
	uk = kt_uk(KEVENT_SOCKET, (__u32)srv, 0, KEVENT_SOCKET_RECV, 0, 5);
	kt_add_queued(rd.kfd, uk);
	tcp_reset(cli);
	cr_assert(kt_wait_ready(rd.kfd, 1, 5000), "the reset fired");
	cr_assert_eq(wait_now(&rd, out, 8), 1);
	cr_assert_eq(out[0].ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE), "%#x",
		     out[0].ret_flags);
	cr_assert_eq((int)out[0].ret_data[1], -ECONNRESET);
	cr_assert_eq(kt_queue_kevents(rd.kfd), 1u, "a BROKEN kevent stays registered (O6)");
	cr_assert_eq(wait_now(&rd, out, 8), 0, "and never fires again");
	kt_remove(rd.kfd, uk);
	close(srv);
	close(lst);
	reader_close(&rd);
}

/* D42 through WAIT: a pipe ready at ADD is queued and WAIT delivers it once; ONESHOT frees it. */
KTEST_REVS(rev2, wait_delivers_always_queue_once, 2, KTEST_OPEN)
{
	struct reader rd = reader_new(8);
	struct ukevent out[8];
	int p[2];

	kt_pipe(p);
	kt_write1(p[1]);
	kt_add_queued(rd.kfd, kt_uk_poll(p[0], POLLIN, KEVENT_REQ_ALWAYS_QUEUE, 7));
	kt_add_queued(rd.kfd, kt_uk_poll(p[0], POLLIN,
					 KEVENT_REQ_ALWAYS_QUEUE | KEVENT_REQ_ONESHOT, 8));
	cr_assert_eq(kt_queue_ready(rd.kfd), 2u, "both on the ready list when ADD returns");
	cr_assert_eq(wait_now(&rd, out, 8), 2);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(out[i].user[0], 7u + (unsigned int)i, "ADD order");
		cr_assert_eq(out[i].ret_data[0], (__u32)POLLIN, "%#x", out[i].ret_data[0]);
	}
	cr_assert_eq(kt_queue_kevents(rd.kfd), 1u, "the ONESHOT one freed at its delivery");
	cr_assert_eq(wait_now(&rd, out, 8), 0, "exactly once: the unread byte is no new activity");
	kt_write1(p[1]);
	cr_assert(kt_wait_ready(rd.kfd, 1, 5000), "a new write");
	cr_assert_eq(wait_now(&rd, out, 8), 1);
	cr_assert_eq(out[0].user[0], 7u, "still registered");
	close(p[0]);
	close(p[1]);
	reader_close(&rd);
}

/* D49 through WAIT: a kevent READY marked arrives as {DONE, {0, 0}}. */
KTEST_REVS(rev2, wait_delivers_ready_result, 2, KTEST_OPEN)
{
	struct reader rd = reader_new(4);
	struct ukevent out[4], uk = kt_uk_timer(HOUR, 0, 6);

	uk.ret_data[0] = 0x1234;	/* input ret_data means nothing (A1) */
	kt_add_queued(rd.kfd, uk);
	kt_ctl1(rd.kfd, KEVENT_CTL_READY, &uk, 1);
	cr_assert_eq(wait_now(&rd, out, 4), 1);
	cr_assert_eq(out[0].user[0], 6u);
	cr_assert_eq(out[0].ret_flags, (__u32)KEVENT_RET_DONE);
	cr_assert_eq(out[0].ret_data[0], 0u);
	cr_assert_eq(out[0].ret_data[1], 0u);
	cr_assert_eq(kt_queue_kevents(rd.kfd), 1u, "still registered");
	reader_close(&rd);
}

/* D46: WAIT first, then GET_EVENTS: each ready kevent arrives once, in one place. */
KTEST_REVS(rev2, wait_then_get_events_each_once, 2, KTEST_OPEN)
{
	enum { N = 6 };
	struct reader rd = reader_new(4);
	struct ukevent out[8];
	unsigned int seen[N] = { 0 };
	int n;

	add_ready_timers(rd.kfd, N);
	n = wait_now(&rd, out, 2);
	cr_assert_eq(n, 2, "WAIT takes num");
	for (int i = 0; i < n; i++)
		seen[out[i].user[0]]++;
	cr_assert_eq(kt_get(rd.kfd, 0, 8, 0, out), N - 2, "GET_EVENTS the rest");
	cr_assert_eq(rd.r->ring_kidx, 2u, "GET_EVENTS never writes the ring");
	for (int i = 0; i < N - 2; i++)
		seen[out[i].user[0]]++;
	for (int c = 0; c < N; c++)
		cr_assert_eq(seen[c], 1u, "cookie %d seen %u times", c, seen[c]);
	cr_assert_eq(wait_now(&rd, out, 4), 0);
	cr_assert_eq(kt_get(rd.kfd, 0, 8, 0, out), 0);
	reader_close(&rd);
}

/*
 * Until the take13 ring's index is want (bounded): on fuse a slot reaches
 * the mapping after the call that wrote it returned (abi.md 9).
 */
static bool ring_index_reaches(const struct kevent_ring *r, unsigned int want, unsigned int ms)
{
	__u64 end = kt_now_ns() + KT_MS(ms);

	while (kevent_ring_index(r) != want && kt_now_ns() < end)
		kt_sleep_ms(1);
	return kevent_ring_index(r) == want;
}

/* ---- KEVENT_CTL_READY meeting a kevent that is ready already (D49) ---- */

/*
 * Two pipes fired in order, A then B; READY on B (ready already) matches it
 * and changes nothing: B keeps its place behind A and its pending result,
 * and the take13 ring gets no slot (D3: no merge advances it).  READY on a
 * timer, not ready, gets the next slot.  via_wait: the events are taken by
 * WAIT instead of GET_EVENTS.
 */
static void ready_meets_ready(bool via_wait)
{
	struct reader rd = { .kfd = -1 };
	struct kevent_ring ring;
	struct ukevent out[8], a, b, t = kt_uk_timer(HOUR, 0, 3);
	int p[2], q[2], n;

	if (via_wait)
		rd = reader_new(8);
	else
		rd.kfd = kt_open(O_RDWR);
	cr_assert_eq(kevent_ring_map(rd.kfd, &ring), 0, "kevent_ring_map: %s", strerror(errno));
	kt_pipe(p);
	kt_pipe(q);
	a = kt_uk_poll(p[0], POLLIN, 0, 1);
	b = kt_uk_poll(q[0], POLLIN, 0, 2);
	kt_add_queued(rd.kfd, a);
	kt_add_queued(rd.kfd, b);
	kt_add_queued(rd.kfd, t);
	kt_write1(p[1]);
	cr_assert(kt_wait_ready(rd.kfd, 1, 5000), "A fired");
	kt_write1(q[1]);
	cr_assert(kt_wait_ready(rd.kfd, 2, 5000), "B fired");
	cr_assert(ring_index_reaches(&ring, 2, 5000), "two fires, two slots");
	kt_ctl1(rd.kfd, KEVENT_CTL_READY, &b, 1);
	cr_assert_eq(b.ret_flags, (__u32)KEVENT_RET_DONE, "matched: %#x", b.ret_flags);
	cr_assert_eq(kt_queue_ready(rd.kfd), 2u, "nothing added");
	kt_ctl1(rd.kfd, KEVENT_CTL_READY, &t, 1);
	/* slots are stored in order: a slot for B would come before the timer's */
	cr_assert(ring_index_reaches(&ring, 3, 5000), "READY of a kevent not ready: one slot (D3)");
	cr_assert_eq(kevent_ring_slot(&ring, 2)->id.raw[0], HOUR,
		     "slot 2 is not the timer's: READY of a ready kevent wrote a slot");
	n = via_wait ? wait_now(&rd, out, 8) : kt_get(rd.kfd, 0, 8, 0, out);
	cr_assert_eq(n, 3, "%s: %d", via_wait ? "WAIT" : "GET_EVENTS", n);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(out[i].user[0], (__u32)i + 1, "place %d: cookie %u", i,
			     out[i].user[0]);
	cr_assert_eq(out[1].ret_data[0], (__u32)POLLIN, "B's pending result kept: %#x",
		     out[1].ret_data[0]);
	cr_assert_eq(out[2].ret_data[0], 0u, "READY's own result {0, 0}");
	kevent_ring_unmap(&ring);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	if (via_wait)
		reader_close(&rd);
	else
		close(rd.kfd);
}

KTEST_REVS(rev2, ready_on_ready_kevent_keeps_place_and_result, 2, KTEST_OPEN)
{
	ready_meets_ready(false);
}

KTEST_REVS(rev2, ready_on_ready_kevent_through_wait, 2, KTEST_OPEN)
{
	ready_meets_ready(true);
}

/* ---- a call on another thread, joined with a bound ---- */

struct call {
	int kfd;
	bool is_wait;
	unsigned int min_nr, num, old_uidx;	/* GET_EVENTS: min_nr, num = max_nr */
	struct timespec ts;
	unsigned int flags;
	bool nonblock_flag;			/* WAIT: KEVENT_GET_NONBLOCK by a raw ioctl */
	int result;
	struct timespec end_rt, end_mono;	/* read as the call returned */
	atomic_bool done;
	pthread_t t;
};

static void *call_thread(void *arg)
{
	struct call *c = arg;
	struct ukevent out[8];
	int r;

	if (c->nonblock_flag) {
		struct kevent_wait_arg a = { .num = c->num, .old_uidx = c->old_uidx,
					     .flags = c->flags, .ioc_flags = KEVENT_GET_NONBLOCK };

		r = kt_ioctl(c->kfd, KEVENT_IOC_WAIT, &a);
	} else if (c->is_wait) {
		r = wait_rc(c->kfd, c->num, c->old_uidx, c->ts, c->flags);
	} else {
		r = kevent_get_events_ts(c->kfd, c->min_nr, c->num, c->ts, out, c->flags);
		r = r < 0 ? -errno : r;
	}
	clock_gettime(CLOCK_REALTIME, &c->end_rt);
	clock_gettime(CLOCK_MONOTONIC, &c->end_mono);
	c->result = r;
	atomic_store(&c->done, true);
	return NULL;
}

static void call_start(struct call *c)
{
	cr_assert_leq(c->num, 8u);
	atomic_init(&c->done, false);
	c->result = INT32_MIN;
	cr_assert_eq(pthread_create(&c->t, NULL, call_thread, c), 0);
}

/*
 * Joins c: true when it returned by itself within ms.  A call still
 * waiting then is woken (READY num 0, D50) so that the test can end.
 */
static bool call_join(struct call *c, unsigned int ms)
{
	bool self;

	for (unsigned int i = 0; i < ms / 5 && !atomic_load(&c->done); i++)
		kt_sleep_ms(5);
	self = atomic_load(&c->done);
	for (int i = 0; i < 1000 && !atomic_load(&c->done); i++) {
		kevent_ctl(c->kfd, KEVENT_CTL_READY, 0, NULL);
		kt_sleep_ms(10);
	}
	pthread_join(c->t, NULL);
	return self;
}

/* Runs c and joins it within ms: true when it returned by itself. */
static bool call_run(struct call *c, unsigned int ms)
{
	call_start(c);
	return call_join(c, ms);
}

/* ---- the latched wake of D50 meeting every kind of dequeue ---- */

/* D50: a non-blocking GET_EVENTS clears the latch, whether by timeout 0 or O_NONBLOCK. */
KTEST_REVS(rev2, latch_cleared_by_nonblocking_get_events, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), nb = kt_open(O_RDWR | O_NONBLOCK);
	struct ukevent out[4];

	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_READY, 0, NULL), 0, "latched");
	cr_assert(kt_poll1(kfd, POLLIN, 0) & POLLIN);
	cr_assert_eq(kt_get(kfd, 1, 4, 0, out), 0, "timeout 0");
	cr_assert_eq(kt_poll1(kfd, POLLIN, 0), 0, "the non-blocking call cleared the latch");
	cr_assert_eq(kevent_ctl(nb, KEVENT_CTL_READY, 0, NULL), 0, "latched");
	cr_assert(kt_poll1(nb, POLLIN, 0) & POLLIN);
	cr_assert_eq(kt_get(nb, 1, 4, KEVENT_TIMEOUT_INFINITE, out), 0, "O_NONBLOCK");
	cr_assert_eq(kt_poll1(nb, POLLIN, 0), 0, "the O_NONBLOCK call cleared the latch");
	close(nb);
	close(kfd);
}

/* D50: a latched wake ends the next blocking WAIT at once, and that WAIT clears it. */
KTEST_REVS(rev2, latch_ends_blocking_wait, 2, KTEST_OPEN)
{
	struct reader rd = reader_new(4);
	struct call c = { .kfd = rd.kfd, .is_wait = true, .num = 4,
			  .flags = KEVENT_FLAGS_NO_TIMEOUT };

	cr_assert_eq(kevent_ctl(rd.kfd, KEVENT_CTL_READY, 0, NULL), 0, "latched");
	cr_assert(call_run(&c, 10000), "a blocking WAIT waited on a latched wake");
	cr_assert_eq(c.result, 0, "nothing ready: %d", c.result);
	cr_assert_eq(kt_poll1(rd.kfd, POLLIN, 0), 0, "the WAIT cleared the latch");
	reader_close(&rd);
}

/* D50: a non-blocking WAIT clears the latch too, and copies what is ready. */
KTEST_REVS(rev2, latch_cleared_by_nonblocking_wait, 2, KTEST_OPEN)
{
	struct reader rd = reader_new(4);
	struct ukevent out[4];

	cr_assert_eq(kevent_ctl(rd.kfd, KEVENT_CTL_READY, 0, NULL), 0, "latched");
	cr_assert_eq(wait_now(&rd, out, 4), 0);
	cr_assert_eq(kt_poll1(rd.kfd, POLLIN, 0), 0, "the WAIT cleared the latch");
	add_ready_timers(rd.kfd, 1);
	cr_assert_eq(kevent_ctl(rd.kfd, KEVENT_CTL_READY, 0, NULL), 0, "latched again");
	cr_assert_eq(wait_now(&rd, out, 4), 1, "what is ready");
	cr_assert_eq(kt_poll1(rd.kfd, POLLIN, 0), 0, "cleared");
	reader_close(&rd);
}

/*
 * D50: latched, the next blocking GET_EVENTS returns at once with what is
 * ready, below its min_nr; the latch is one bit: two READYs, one call.
 */
KTEST_REVS(rev2, latch_ends_blocking_get_events_below_min_nr, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct call c = { .kfd = kfd, .min_nr = 2, .num = 4, .flags = KEVENT_FLAGS_NO_TIMEOUT };
	struct ukevent out[4];

	add_ready_timers(kfd, 1);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_READY, 0, NULL), 0, "latched");
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_READY, 0, NULL), 0, "latched, not counted");
	cr_assert(call_run(&c, 10000), "a blocking GET_EVENTS waited on a latched wake");
	cr_assert_eq(c.result, 1, "what is ready, below min_nr 2: %d", c.result);
	cr_assert_eq(kt_poll1(kfd, POLLIN, 0), 0, "one call cleared both READYs");
	cr_assert_eq(kt_get(kfd, 0, 4, 0, out), 0);
	close(kfd);
}

/*
 * D50 with waiters parked: READY num 0 wakes the oldest (D16), here a
 * GET_EVENTS parked before a WAIT; the woken call returns what is ready
 * (nothing here) and nothing is latched.  A second READY wakes the WAIT.
 */
KTEST_REVS(rev2, ready_num0_wakes_the_oldest_waiter, 2, KTEST_OPEN)
{
	struct reader rd = reader_new(4);
	struct call g = { .kfd = rd.kfd, .min_nr = 2, .num = 4, .flags = KEVENT_FLAGS_NO_TIMEOUT };
	struct call w = { .kfd = rd.kfd, .is_wait = true, .num = 4,
			  .flags = KEVENT_FLAGS_NO_TIMEOUT };

	call_start(&g);
	kt_await_parked(rd.kfd, 1, 10000);
	call_start(&w);
	kt_await_parked(rd.kfd, 2, 10000);
	cr_assert_eq(kevent_ctl(rd.kfd, KEVENT_CTL_READY, 0, NULL), 1, "one waiter woken");
	cr_assert(call_join(&g, 10000), "the oldest waiter, the GET_EVENTS, was not woken");
	cr_assert_eq(g.result, 0, "woken with nothing ready: %d", g.result);
	cr_assert_eq(kt_queue_parked(rd.kfd), 1u, "the WAIT still parked");
	cr_assert_eq(kt_poll1(rd.kfd, POLLIN, 0), 0, "a wake that found a waiter is not latched");
	cr_assert_eq(kevent_ctl(rd.kfd, KEVENT_CTL_READY, 0, NULL), 1, "the WAIT woken");
	cr_assert(call_join(&w, 10000), "the WAIT was not woken");
	cr_assert_eq(w.result, 0);
	reader_close(&rd);
}

/* D50: a woken GET_EVENTS returns what is ready, below its min_nr. */
KTEST_REVS(rev2, ready_num0_woken_get_events_returns_what_is_ready, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct call g = { .kfd = kfd, .min_nr = 2, .num = 4, .flags = KEVENT_FLAGS_NO_TIMEOUT };
	struct ukevent uk = kt_uk_timer(HOUR, 0, 1);

	kt_add_queued(kfd, uk);
	call_start(&g);
	kt_await_parked(kfd, 1, 10000);
	kt_ctl1(kfd, KEVENT_CTL_READY, &uk, 1);
	cr_assert_eq(kt_queue_parked(kfd), 1u, "one ready: the GET_EVENTS waits for 2");
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_READY, 0, NULL), 1, "woken");
	cr_assert(call_join(&g, 10000), "the GET_EVENTS was not woken");
	cr_assert_eq(g.result, 1, "what is ready: %d", g.result);
	close(kfd);
}

/* ---- D48: the clocks of an absolute deadline, for GET_EVENTS and WAIT ---- */

static __u64 ts_ns_of(const struct timespec *t)
{
	return (__u64)t->tv_sec * 1000000000ull + (__u64)t->tv_nsec;
}

static struct timespec ns_ts_of(__u64 ns)
{
	return (struct timespec){ (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
}

/* Now on the clock of an ABSTIME deadline with these flags, in ns. */
static __u64 abs_clock_now(unsigned int flags)
{
	struct timespec now;

	clock_gettime(flags & KEVENT_FLAGS_MONOTONIC ? CLOCK_MONOTONIC : CLOCK_REALTIME, &now);
	return ts_ns_of(&now);
}

/*
 * The four absolute calls: GET_EVENTS and WAIT, each with an ABSTIME
 * CLOCK_REALTIME and an ABSTIME|MONOTONIC deadline, each on a queue of its
 * own with nothing ready.  deadline(flags) gives each its deadline.
 */
struct abs4 {
	struct reader rd[4];
	struct call c[4];
};

static void abs4_start(struct abs4 *a, __u64 (*deadline)(unsigned int flags))
{
	for (int i = 0; i < 4; i++) {
		bool is_wait = i >= 2;
		unsigned int flags = KEVENT_FLAGS_ABSTIME | (i % 2 ? KEVENT_FLAGS_MONOTONIC : 0);

		if (is_wait) {
			a->rd[i] = reader_new(4);
		} else {
			a->rd[i] = (struct reader){ .kfd = kt_open(O_RDWR) };
		}
		a->c[i] = (struct call){ .kfd = a->rd[i].kfd, .is_wait = is_wait, .min_nr = 1,
					 .num = 4, .flags = flags,
					 .ts = ns_ts_of(deadline(flags)) };
		call_start(&a->c[i]);
	}
}

static const char *abs4_name(int i)
{
	static const char *const names[4] = {
		"GET_EVENTS ABSTIME", "GET_EVENTS ABSTIME|MONOTONIC",
		"WAIT ABSTIME", "WAIT ABSTIME|MONOTONIC",
	};

	return names[i];
}

static void abs4_end(struct abs4 *a)
{
	for (int i = 0; i < 4; i++) {
		if (a->c[i].is_wait)
			reader_close(&a->rd[i]);
		else
			close(a->rd[i].kfd);
	}
}

static __u64 deadline_soon(unsigned int flags)
{
	return abs_clock_now(flags) + KT_MS(150);
}

/*
 * D48: a deadline in the future on either clock: the call waits until it,
 * not before (the caller's clock at the return is past the deadline), and
 * returns 0.  How late it returns is not judged (a loaded machine).
 */
KTEST_REVS(rev2, abstime_future_deadline_waits_until_it, 2, KTEST_OPEN)
{
	struct abs4 a;
	bool self[4];

	abs4_start(&a, deadline_soon);
	for (int i = 0; i < 4; i++)
		self[i] = call_join(&a.c[i], 10000);
	abs4_end(&a);
	for (int i = 0; i < 4; i++) {
		const struct call *c = &a.c[i];
		const struct timespec *end = c->flags & KEVENT_FLAGS_MONOTONIC ? &c->end_mono
									: &c->end_rt;

		cr_assert(self[i], "%s: still waiting 10 s after a deadline 150 ms away",
			  abs4_name(i));
		cr_assert_eq(c->result, 0, "%s: %d", abs4_name(i), c->result);
		cr_assert_geq(ts_ns_of(end), ts_ns_of(&c->ts),
			      "%s: returned %lld ns before its deadline", abs4_name(i),
			      (long long)(ts_ns_of(&c->ts) - ts_ns_of(end)));
	}
}

/* An hour ago on CLOCK_REALTIME; on CLOCK_MONOTONIC its first nanosecond. */
static __u64 deadline_past(unsigned int flags)
{
	return flags & KEVENT_FLAGS_MONOTONIC ? 1 : abs_clock_now(flags) - 3600ull * 1000000000ull;
}

/* D48: a deadline already past on either clock: no wait, 0 at once. */
KTEST_REVS(rev2, abstime_past_deadline_does_not_wait, 2, KTEST_OPEN)
{
	struct abs4 a;
	bool self[4];

	abs4_start(&a, deadline_past);
	for (int i = 0; i < 4; i++)
		self[i] = call_join(&a.c[i], 10000);
	abs4_end(&a);
	for (int i = 0; i < 4; i++) {
		cr_assert(self[i], "%s: a past deadline still waited 10 s", abs4_name(i));
		cr_assert_eq(a.c[i].result, 0, "%s: %d", abs4_name(i), a.c[i].result);
	}
}

/* D48: NO_TIMEOUT on WAIT waits for the event, however long. */
KTEST_REVS(rev2, wait_no_timeout_waits_for_the_event, 2, KTEST_OPEN)
{
	struct reader rd = reader_new(4);
	struct call c = { .kfd = rd.kfd, .is_wait = true, .num = 4,
			  .flags = KEVENT_FLAGS_NO_TIMEOUT };
	struct ukevent uk = kt_uk_timer(HOUR, 0, 4);

	kt_add_queued(rd.kfd, uk);
	call_start(&c);
	kt_await_parked(rd.kfd, 1, 10000);
	kt_ctl1(rd.kfd, KEVENT_CTL_READY, &uk, 1);
	cr_assert(call_join(&c, 10000), "the WAIT missed the event");
	cr_assert_eq(c.result, 1);
	cr_assert_eq(rd.r->event[0].user[0], 4u);
	reader_close(&rd);
}

static int wait_raw(int kfd, struct kevent_timespec ts, unsigned int flags)
{
	struct kevent_wait_arg a = { .num = 4, .flags = flags };

	/* field by field: criterion-timeouts.py would read ".timeout =" as a test timeout */
	a.timeout.tv_sec = ts.tv_sec;
	a.timeout.tv_nsec = ts.tv_nsec;
	a.timeout.__pad = ts.__pad;
	return kt_ioctl(kfd, KEVENT_IOC_WAIT, &a);
}

/* D48: WAIT's timespec and flags checks, a ring registered (no ring is EINVAL too). */
KTEST_REVS(rev2, wait_timespec_checks, 2, KTEST_OPEN)
{
	struct reader rd = reader_new(4);
	const struct kevent_timespec z = { 0, 0, 0 };
	const struct {
		struct kevent_timespec ts;
		unsigned int flags;
		const char *what;
	} bad[] = {
		{ { 0, 1000000000u, 0 }, 0, "tv_nsec 10^9" },
		{ { -1, 0, 0 }, 0, "tv_sec < 0" },
		{ { 0, 0, 1 }, 0, "__pad" },
		{ { 0, 0, 1 }, KEVENT_FLAGS_NO_TIMEOUT, "__pad with NO_TIMEOUT" },
		{ z, 0x80, "unknown flag" },
		{ z, KEVENT_FLAGS_MONOTONIC, "MONOTONIC without ABSTIME" },
		{ z, KEVENT_FLAGS_NO_TIMEOUT | KEVENT_FLAGS_ABSTIME, "NO_TIMEOUT|ABSTIME" },
		{ z, KEVENT_FLAGS_NO_TIMEOUT | KEVENT_FLAGS_ABSTIME | KEVENT_FLAGS_MONOTONIC,
		  "NO_TIMEOUT|ABSTIME|MONOTONIC" },
		{ z, KEVENT_FLAGS_NO_TIMEOUT | KEVENT_FLAGS_MONOTONIC, "NO_TIMEOUT|MONOTONIC" },
		{ { 1, 0, 0 }, KEVENT_FLAGS_NO_TIMEOUT, "NO_TIMEOUT with tv_sec" },
		{ { 0, 1, 0 }, KEVENT_FLAGS_NO_TIMEOUT, "NO_TIMEOUT with tv_nsec" },
	};

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(wait_raw(rd.kfd, bad[i].ts, bad[i].flags), -EINVAL, "%s", bad[i].what);
	cr_assert_eq(wait_raw(rd.kfd, z, 0), 0, "{0, 0}: no wait");
	reader_close(&rd);
}

static int get_raw(int kfd, unsigned long req, __u64 timeout_ns, struct kevent_timespec ts,
		   unsigned int flags, unsigned int ioc_flags)
{
	struct ukevent out[4];
	struct kevent_get_events_arg a = {
		.min_nr = 1, .max_nr = 4, .timeout_ns = timeout_ns, .events = (__u64)(uintptr_t)out,
		.flags = flags, .ioc_flags = ioc_flags, .timeout_ts = ts,
	};

	return kt_ioctl(kfd, req, &a);
}

/* D48: the timespec GET_EVENTS (VER1, KEVENT_GET_TIMESPEC) checks the raw library cannot send. */
KTEST_REVS(rev2, get_events_timespec_raw_checks, 2, KTEST_OPEN)
{
	const unsigned long ver0 = _IOC(_IOC_WRITE, KEVENT_IOC_MAGIC, KEVENT_IOC_NR_GET_EVENTS,
					KEVENT_GET_EVENTS_ARG_SIZE_VER0);
	const unsigned int T = KEVENT_GET_TIMESPEC;
	const struct kevent_timespec z = { 0, 0, 0 }, pad = { 0, 0, 1 }, neg = { -1, 0, 0 };
	int kfd = kt_open(O_RDWR);

	cr_assert_eq(get_raw(kfd, KEVENT_IOC_GET_EVENTS, 0, pad, 0, T), -EINVAL, "__pad");
	cr_assert_eq(get_raw(kfd, KEVENT_IOC_GET_EVENTS, 0, neg, 0, T), -EINVAL, "tv_sec < 0");
	cr_assert_eq(get_raw(kfd, KEVENT_IOC_GET_EVENTS, 0, z,
			     KEVENT_FLAGS_NO_TIMEOUT | KEVENT_FLAGS_ABSTIME, T),
		     -EINVAL, "NO_TIMEOUT|ABSTIME");
	cr_assert_eq(get_raw(kfd, KEVENT_IOC_GET_EVENTS, 1, z, 0, T), -EINVAL,
		     "timeout_ns with KEVENT_GET_TIMESPEC");
	cr_assert_eq(get_raw(kfd, ver0, 0, z, 0, T), -EINVAL, "KEVENT_GET_TIMESPEC with VER0");
	cr_assert_eq(get_raw(kfd, KEVENT_IOC_GET_EVENTS, 0, z, 0, T), 0, "{0, 0}: no wait");
	close(kfd);
}

/* ---- validations at MODIFY as at ADD ---- */

/* D43: LEVEL on a timer is -EINVAL at MODIFY as at ADD; the kevent keeps its setting. */
KTEST_REVS(rev2, modify_level_on_a_timer_einval, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent t = kt_uk_timer(HOUR, 0, 1), m = t, out[4];

	kt_add_queued(kfd, t);
	m.req_flags = KEVENT_REQ_LEVEL;
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &m, 0);
	cr_assert_eq(m.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE), "%#x", m.ret_flags);
	cr_assert_eq(m.ret_data[1], (__u32)-EINVAL, "%d", (int)m.ret_data[1]);
	kt_ctl1(kfd, KEVENT_CTL_READY, &t, 1);
	cr_assert_eq(kt_get(kfd, 0, 4, 0, out), 1);
	cr_assert_eq(kt_get(kfd, 0, 4, 0, out), 0, "the refused LEVEL did not take effect");
	close(kfd);
}

/*
 * D43 with D7's matching, which ignores the entry's type on revision 2
 * (revision 3 makes it part of the key, D63): LEVEL is judged on the
 * kevent matched.  A timer matched by a POLL entry refuses it; a POLL
 * kevent matched by a TIMER entry takes it.
 */
KTEST_REVS(rev2, modify_level_checked_on_the_matched_type, 2, 2)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent t = kt_uk_timer(HOUR, 0, 1), pk, m, out[4];

	kt_pipe(p);
	pk = kt_uk_poll(p[0], POLLIN, 0, 2);
	kt_add_queued(kfd, t);
	kt_add_queued(kfd, pk);
	m = t;
	m.type = KEVENT_POLL;
	m.req_flags = KEVENT_REQ_LEVEL;
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &m, 0);
	cr_assert_eq(m.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE),
		     "a timer matched by a POLL entry: %#x", m.ret_flags);
	cr_assert_eq(m.ret_data[1], (__u32)-EINVAL, "%d", (int)m.ret_data[1]);
	m = pk;
	m.type = KEVENT_TIMER;
	m.req_flags = KEVENT_REQ_LEVEL;
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &m, 0);
	cr_assert_eq(m.ret_flags, (__u32)KEVENT_RET_DONE, "a POLL kevent matched by a TIMER "
		     "entry: %#x, %d", m.ret_flags, (int)m.ret_data[1]);
	kt_write1(p[1]);
	out[0] = kt_get_one(kfd, "the pipe");
	cr_assert_eq(out[0].user[0], 2u);
	cr_assert_eq(kt_get(kfd, 0, 4, 0, out), 1, "LEVEL taken: unread data again");
	close(p[0]);
	close(p[1]);
	close(kfd);
}

/* D43: an INODE kevent takes no LEVEL, at ADD nor at MODIFY. */
KTEST_REVS(rev2, level_on_inode_einval_at_add_and_modify, 2, KTEST_OPEN)
{
	int kfd, d;
	struct ukevent uk;
	char dir[] = "/tmp/kt-rev2-XXXXXX";

	kt_require_type(KEVENT_INODE);
	kfd = kt_open(O_RDWR);
	cr_assert(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(d, 0);
	uk = kt_uk(KEVENT_INODE, (__u32)d, 0, KEVENT_INODE_CREATE, KEVENT_REQ_LEVEL, 1);
	kt_ctl1(kfd, KEVENT_CTL_ADD, &uk, 1);
	cr_assert_eq(uk.ret_data[1], (__u32)-EINVAL, "ADD: %d", (int)uk.ret_data[1]);
	uk = kt_uk(KEVENT_INODE, (__u32)d, 0, KEVENT_INODE_CREATE, 0, 1);
	kt_add_queued(kfd, uk);
	uk.req_flags = KEVENT_REQ_LEVEL;
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &uk, 0);
	cr_assert_eq(uk.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE), "MODIFY: %#x",
		     uk.ret_flags);
	cr_assert_eq(uk.ret_data[1], (__u32)-EINVAL, "MODIFY: %d", (int)uk.ret_data[1]);
	close(kfd);
	close(d);
	rmdir(dir);
}

/* Opens a STRICT queue of this instance, or skips where STRICT is not offered. */
static int strict_open(void)
{
	int kfd;

	if (!(kt_backend_info()->features & KEVENT_FEAT_STRICT))
		cr_skip_test("no KEVENT_FEAT_STRICT");
	kfd = kt_open(O_RDWR);
	cr_assert_eq(kt_set_abi_flags(kfd, KEVENT_ABI_STRICT), 0);
	return kfd;
}

/*
 * KEVENT_ABI_STRICT (A1) at MODIFY: an unknown req_flags bit fails that
 * entry as at ADD; the bits revision 2 knows are taken.  D44, D45, D43:
 * 0x2 (WAKEUP_ONE/ALL), 0x4 (ET) and 0x8 (LAST_CHECK) stay unknown.
 */
KTEST_REVS(rev2, strict_checks_req_flags_at_modify, 2, KTEST_OPEN)
{
	static const unsigned int unknown[] = { 0x2, 0x4, 0x8, 0x40 };
	int kfd = strict_open(), p[2];
	struct ukevent uk, m;

	kt_pipe(p);
	uk = kt_uk_poll(p[0], POLLIN, 0, 1);
	kt_add_queued(kfd, uk);
	for (unsigned int i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		m = uk;
		m.req_flags = unknown[i];
		kt_ctl1(kfd, KEVENT_CTL_MODIFY, &m, 0);
		cr_assert_eq(m.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE),
			     "MODIFY with %#x: %#x", unknown[i], m.ret_flags);
		cr_assert_eq(m.ret_data[1], (__u32)-EINVAL, "MODIFY with %#x", unknown[i]);
	}
	m = uk;
	m.req_flags = KEVENT_REQ_ONESHOT | KEVENT_REQ_ALWAYS_QUEUE | KEVENT_REQ_LEVEL;
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &m, 0);
	cr_assert_eq(m.ret_flags, (__u32)KEVENT_RET_DONE, "the known bits: %#x", m.ret_flags);
	close(p[0]);
	close(p[1]);
	close(kfd);
}

/* D44, D45 (and D43's ET): under STRICT, ADD refuses 0x2, 0x4 and 0x8 per entry. */
KTEST_REVS(rev2, strict_refuses_untaken_req_flags_at_add, 2, KTEST_OPEN)
{
	int kfd = strict_open();
	struct ukevent uk[4] = {
		kt_uk_timer(HOUR, 0x2, 1), kt_uk_timer(HOUR, 0x4, 2), kt_uk_timer(HOUR, 0x8, 3),
		kt_uk_timer(HOUR, KEVENT_REQ_ONESHOT, 4),
	};

	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 4, uk), 3);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(uk[i].user[0], (__u32)i + 1);
		cr_assert_eq(uk[i].ret_data[1], (__u32)-EINVAL, "bit %#x", uk[i].req_flags);
	}
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	close(kfd);
}

/*
 * D44, D45 without STRICT: the untaken bits are ignored (A1).  One write to
 * a pipe readies every interested kevent of every queue (no WAKEUP_ONE),
 * those with 0x2|0x4|0x8 as those without; and nothing re-checks them at
 * the next dequeue (no LAST_CHECK).
 */
KTEST_REVS(rev2, untaken_req_flags_change_nothing, 2, KTEST_OPEN)
{
	int a = kt_open(O_RDWR), b = kt_open(O_RDWR), p[2];
	struct ukevent out[4];

	kt_pipe(p);
	kt_add_queued(a, kt_uk_poll(p[0], POLLIN, 0x2 | 0x4 | 0x8, 1));
	kt_add_queued(a, kt_uk_poll(p[0], POLLIN, 0, 2));
	kt_add_queued(b, kt_uk_poll(p[0], POLLIN, 0x2, 3));
	kt_write1(p[1]);
	cr_assert(kt_wait_ready(a, 2, 5000), "both kevents of one queue");
	cr_assert(kt_wait_ready(b, 1, 5000), "and the other queue's");
	cr_assert_eq(kt_get(a, 0, 4, 0, out), 2);
	cr_assert_eq(kt_get(b, 0, 4, 0, out), 1);
	cr_assert_eq(kt_get(a, 0, 4, 0, out), 0, "no re-check of unread data");
	cr_assert_eq(kt_queue_kevents(a), 2u);
	close(p[0]);
	close(p[1]);
	close(b);
	close(a);
}

/* D44: every INODE kevent watching one directory fires, in one queue and in two. */
KTEST_REVS(rev2, inode_activity_readies_every_watcher, 2, KTEST_OPEN)
{
	int a, b, d, f;
	char dir[] = "/tmp/kt-rev2-XXXXXX", path[64];
	struct ukevent out[4];

	kt_require_type(KEVENT_INODE);
	a = kt_open(O_RDWR);
	b = kt_open(O_RDWR);
	cr_assert(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(d, 0);
	kt_add_queued(a, kt_uk(KEVENT_INODE, (__u32)d, 0, KEVENT_INODE_CREATE, 0, 1));
	kt_add_queued(b, kt_uk(KEVENT_INODE, (__u32)d, 0, KEVENT_INODE_CREATE, 0x2, 2));
	kt_add_queued(a, kt_uk(KEVENT_INODE, (__u32)d, 0, KEVENT_INODE_CREATE, 0, 3));
	snprintf(path, sizeof(path), "%s/x", dir);
	f = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	cr_assert_geq(f, 0);
	cr_assert(kt_wait_ready(a, 2, 5000), "both kevents of one queue");
	cr_assert(kt_wait_ready(b, 1, 5000), "and the other queue's");
	cr_assert_eq(kt_get(a, 0, 4, 0, out), 2);
	cr_assert_eq(kt_get(b, 0, 4, 0, out), 1);
	close(f);
	unlink(path);
	close(a);
	close(b);
	close(d);
	rmdir(dir);
}

/* ---- D41: a faulted WAIT, for every kind of kevent a ring holds ---- */

/* A directory of its own, for an INODE kevent; its fd open for reading. */
struct tdir {
	char path[32];
	int fd;
};

static void tdir_new(struct tdir *d)
{
	strcpy(d->path, "/tmp/kt-rev2-XXXXXX");
	cr_assert(mkdtemp(d->path), "mkdtemp: %s", strerror(errno));
	d->fd = open(d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cr_assert_geq(d->fd, 0, "open %s: %s", d->path, strerror(errno));
}

/* Creates an entry in d (a CREATE for its watchers). */
static void tdir_touch(struct tdir *d)
{
	char p[48];
	int f;

	snprintf(p, sizeof(p), "%s/x", d->path);
	f = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	cr_assert_geq(f, 0, "create %s: %s", p, strerror(errno));
	close(f);
}

static void tdir_free(struct tdir *d)
{
	char p[48];

	snprintf(p, sizeof(p), "%s/x", d->path);
	unlink(p);
	close(d->fd);
	rmdir(d->path);
}

/* The kinds of kevent a ring can hold on revision 2, ONESHOT and not. */
enum { K_POLL, K_POLL1, K_SOCK, K_SOCK1, K_INODE, K_INODE1, K_TIMER1, K_TIMER, K_N };

struct kinds {
	int pipe[2][2], sock[2][2];
	struct tdir dir[2];
};

static bool kind_oneshot(int k)
{
	return k == K_POLL1 || k == K_SOCK1 || k == K_INODE1 || k == K_TIMER1;
}

/*
 * One kevent of each kind on kfd, cookie = its kind, each made ready before
 * the next is added, so the ready list holds them in kind order.  The
 * periodic timer (200 ms) comes last: should it fire again while a WAIT
 * has it in flight, it goes back to the tail, where it is anyway.
 */
static void kinds_ready(int kfd, struct kinds *s)
{
	for (int k = 0; k < K_N; k++) {
		unsigned int once = kind_oneshot(k) ? KEVENT_REQ_ONESHOT : 0;
		int i = k % 2 ? 1 : 0;

		switch (k) {
		case K_POLL:
		case K_POLL1:
			kt_pipe(s->pipe[i]);
			kt_add_queued(kfd, kt_uk_poll(s->pipe[i][0], POLLIN, once, (__u32)k));
			kt_write1(s->pipe[i][1]);
			break;
		case K_SOCK:
		case K_SOCK1:
			kt_socketpair(SOCK_STREAM, s->sock[i]);
			kt_add_queued(kfd, kt_uk(KEVENT_SOCKET, (__u32)s->sock[i][0], 0,
						 KEVENT_SOCKET_RECV, once, (__u32)k));
			kt_write1(s->sock[i][1]);
			break;
		case K_INODE:
		case K_INODE1:
			tdir_new(&s->dir[i]);
			kt_add_queued(kfd, kt_uk(KEVENT_INODE, (__u32)s->dir[i].fd, 0,
						 KEVENT_INODE_CREATE, once, (__u32)k));
			tdir_touch(&s->dir[i]);
			break;
		default:
			kt_add_queued(kfd, kt_uk_timer(k == K_TIMER ? 200 : 1, once, (__u32)k));
			break;
		}
		cr_assert(kt_wait_ready(kfd, (unsigned int)k + 1, 5000), "kind %d never fired", k);
	}
}

/* The records of the kinds, in kind order, each with its own result. */
static void kinds_check(const struct ukevent *ev)
{
	static const __u32 want[K_N] = {
		POLLIN, POLLIN, KEVENT_SOCKET_RECV, KEVENT_SOCKET_RECV,
		KEVENT_INODE_CREATE, KEVENT_INODE_CREATE, 0, 0,
	};

	for (int k = 0; k < K_N; k++) {
		cr_assert_eq(ev[k].user[0], (__u32)k, "slot %d holds kind %u: out of order", k,
			     ev[k].user[0]);
		cr_assert_eq(ev[k].ret_flags, (__u32)KEVENT_RET_DONE, "kind %d: %#x", k,
			     ev[k].ret_flags);
		if (want[k])
			cr_assert_eq(ev[k].ret_data[0], want[k], "kind %d: ret_data[0] %#x", k,
				     ev[k].ret_data[0]);
	}
}

static void kinds_free(struct kinds *s)
{
	for (int i = 0; i < 2; i++) {
		close(s->pipe[i][0]);
		close(s->pipe[i][1]);
		close(s->sock[i][0]);
		close(s->sock[i][1]);
		tdir_free(&s->dir[i]);
	}
}

/*
 * D41, the kevents' side: a WAIT whose ring store faults (here the slots
 * on a page made read-only; 'hdr': the ring_kidx word's page instead)
 * takes every kind of kevent and puts them all back at the head of the
 * ready list in their order: -EFAULT, ring_kidx not advanced, ring_faults
 * counted, no ONESHOT kevent freed.  Once the page is writable again a
 * WAIT delivers them all, each with its result, and frees the ONESHOT ones.
 */
static void faulting_wait_every_kind(bool hdr)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct kevent_uring *r;
	struct kevent_info i;
	struct kinds s;
	char *m, *ro;
	int kfd, n;

	kt_require_type(KEVENT_SOCKET);
	kt_require_type(KEVENT_INODE);
	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(m, MAP_FAILED);
	/* hdr: the two words end page 1, every slot on page 2; else slots 2 .. 7 there */
	r = (struct kevent_uring *)(m + pg - 8 - (hdr ? 0 : 2 * 40));
	ro = hdr ? m : m + pg;
	memset(m, 0, 2 * pg);
	kfd = kt_open(O_RDWR);
	cr_assert_eq(ring_init(kfd, r, K_N), 0, "RING_INIT");
	kinds_ready(kfd, &s);
	cr_assert_eq(mprotect(ro, pg, PROT_READ), 0, "mprotect: %s", strerror(errno));
	n = wait_rc(kfd, K_N, 0, ts_zero, 0);
	cr_assert_eq(mprotect(ro, pg, PROT_READ | PROT_WRITE), 0);
	cr_assert_eq(n, -EFAULT, "WAIT into a read-only %s: %d", hdr ? "ring_kidx" : "slot", n);
	cr_assert_eq(r->ring_kidx, 0u, "nothing published");
	kt_info(kfd, &i);
	cr_assert_eq(i.ring_faults, 1u, "INFO counts the fault");
	cr_assert_eq(i.ring_kidx, 0u, "the backend's kidx did not move");
	cr_assert_eq(i.queue_ready, (__u32)K_N, "every kevent back on the ready list: %u",
		     i.queue_ready);
	cr_assert_eq(i.queue_kevents, (__u32)K_N, "no ONESHOT kevent freed by a faulted WAIT");
	cr_assert_eq(wait_rc(kfd, K_N, 0, ts_zero, 0), K_N, "the ring writable again");
	kinds_check(r->event);
	cr_assert_eq(kt_queue_kevents(kfd), (__u32)K_N / 2, "the ONESHOT ones freed at delivery");
	close(kfd);
	kinds_free(&s);
	munmap(m, 2 * pg);
}

KTEST_REVS(rev2, faulting_wait_requeues_every_kind, 2, KTEST_OPEN)
{
	faulting_wait_every_kind(false);
}

KTEST_REVS(rev2, faulting_ring_kidx_store_requeues_every_kind, 2, KTEST_OPEN)
{
	faulting_wait_every_kind(true);
}

/* ---- D47, D22 and A11 for WAIT ---- */

static void on_usr1(int sig)
{
	(void)sig;
}

/*
 * A blocked WAIT and a signal: with KEVENT_ABI_EINTR it ends with EINTR
 * (D47), without it returns what is ready, here 0 (D22).
 */
static int wait_signalled(unsigned int abi_flags)
{
	struct sigaction sa = { .sa_handler = on_usr1 };	/* no SA_RESTART */
	struct reader rd = { .num = 4 };
	struct call c;

	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	rd.kfd = kt_open(O_RDWR);
	cr_assert_eq(kt_set_abi_flags(rd.kfd, abi_flags), 0);
	rd.r = ring_new(4);
	cr_assert_eq(ring_init(rd.kfd, rd.r, 4), 0);
	sigaction(SIGUSR1, &sa, NULL);
	c = (struct call){ .kfd = rd.kfd, .is_wait = true, .num = 4,
			   .flags = KEVENT_FLAGS_NO_TIMEOUT };
	call_start(&c);
	kt_await_parked(rd.kfd, 1, 10000);
	pthread_kill(c.t, SIGUSR1);
	cr_assert(call_join(&c, 10000), "the signal did not end the WAIT");
	reader_close(&rd);
	return c.result;
}

KTEST_REVS(rev2, eintr_opt_in_ends_a_blocked_wait, 2, KTEST_OPEN)
{
	int r = wait_signalled(KEVENT_ABI_EINTR);

	cr_assert_eq(r, -EINTR, "got %d", r);
}

KTEST_REVS(rev2, signal_ends_a_blocked_wait_with_what_is_ready, 2, KTEST_OPEN)
{
	int r = wait_signalled(0);

	cr_assert_eq(r, 0, "got %d", r);
}

/* D55, A11: a WAIT never blocks with KEVENT_GET_NONBLOCK or on an O_NONBLOCK file. */
KTEST_REVS(rev2, wait_nonblocking_never_blocks, 2, KTEST_OPEN)
{
	struct reader rd = reader_new(4);
	struct call c = { .kfd = rd.kfd, .is_wait = true, .num = 4,
			  .flags = KEVENT_FLAGS_NO_TIMEOUT, .nonblock_flag = true };
	int nb = kt_open(O_RDWR | O_NONBLOCK);
	struct kevent_uring *r = ring_new(4);

	cr_assert(call_run(&c, 10000), "a WAIT with KEVENT_GET_NONBLOCK blocked");
	cr_assert_eq(c.result, 0);
	c.nonblock_flag = false;
	cr_assert_eq(fcntl(rd.kfd, F_SETFL, O_NONBLOCK), 0);
	cr_assert(call_run(&c, 10000), "a WAIT on a file set O_NONBLOCK by fcntl blocked");
	cr_assert_eq(c.result, 0);
	cr_assert_eq(ring_init(nb, r, 4), 0);
	c.kfd = nb;
	cr_assert(call_run(&c, 10000), "a WAIT on a file opened O_NONBLOCK blocked");
	cr_assert_eq(c.result, 0);
	close(nb);
	free(r);
	reader_close(&rd);
}

/*
 * D57: kevent_init() opens $KEVENT_DEVICE O_RDWR|O_CLOEXEC, selects revision
 * 2 with the caller's flags and registers the ring (the library's rule: the
 * queue is revision 2 whatever the instance).
 */
KTEST_REVS(rev2, kevent_init_opens_a_revision_2_queue_with_its_flags, 2, KTEST_OPEN)
{
	struct kevent_uring *r = ring_new(4);
	struct kevent_info i;
	int kfd;

	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	cr_assert_eq(setenv("KEVENT_DEVICE", kt_device(), 1), 0);
	kfd = kevent_init(r, 4, KEVENT_ABI_EINTR);
	cr_assert_geq(kfd, 0, "kevent_init: %s", strerror(errno));
	cr_assert(fcntl(kfd, F_GETFD) & FD_CLOEXEC, "not O_CLOEXEC");
	cr_assert_eq(fcntl(kfd, F_GETFL) & O_ACCMODE, O_RDWR);
	kt_info(kfd, &i);
	cr_assert_eq(i.queue_revision, 2u);
	cr_assert_eq(i.queue_abi_flags, (__u32)KEVENT_ABI_EINTR, "the flags: %#x", i.queue_abi_flags);
	cr_assert_eq(i.ring_num, 4u, "the ring registered");
	close(kfd);
	free(r);
}

/*
 * D42: ALWAYS_QUEUE queues a source ready at ADD, but a failed ADD is
 * answered as ever: a socket already reset is BROKEN|DONE with
 * -ECONNRESET at ADD (O8), not registered, whatever the flag.
 */
KTEST_REVS(rev2, always_queue_broken_at_add_is_answered, 2, KTEST_OPEN)
{
	int kfd, lst, cli, srv;
	struct ukevent uk;

	kt_require_type(KEVENT_SOCKET);
	kfd = kt_open(O_RDWR);
	tcp_conn(&lst, &cli, &srv);
	tcp_reset(cli);
	cr_assert(kt_poll1(srv, POLLIN, 5000) & POLLERR, "the reset never reached the socket");
	uk = kt_uk(KEVENT_SOCKET, (__u32)srv, 0, KEVENT_SOCKET_RECV, KEVENT_REQ_ALWAYS_QUEUE, 1);
	kt_ctl1(kfd, KEVENT_CTL_ADD, &uk, 1);
	cr_assert_eq(uk.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE), "%#x", uk.ret_flags);
	cr_assert_eq((int)uk.ret_data[1], -ECONNRESET, "%d", (int)uk.ret_data[1]);
	cr_assert_eq(kt_queue_kevents(kfd), 0u, "a failed ADD is not registered");
	cr_assert_eq(kt_queue_ready(kfd), 0u);
	close(srv);
	close(lst);
	close(kfd);
}

/*
 * D54: a wrapping commit stores ring_over before anything changes: where
 * that store faults (the ring's words on a read-only page) the commit is
 * -EFAULT and frees nothing; writable again, the same commit frees the slots.
 */
KTEST_REVS(rev2, wrapping_commit_fault_frees_nothing, 2, KTEST_OPEN)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct kevent_uring *r;
	struct kevent_info i;
	char *m;
	int kfd, n;

	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(m, MAP_FAILED);
	r = (struct kevent_uring *)(m + pg - 8);	/* the words end page 1, the slots on page 2 */
	kfd = kt_open(O_RDWR);
	cr_assert_eq(ring_init(kfd, r, 4), 0);
	add_ready_timers(kfd, 4);
	cr_assert_eq(wait_rc(kfd, 4, 0, ts_zero, 0), 4, "the ring full");
	cr_assert_eq(mprotect(m, pg, PROT_READ), 0, "mprotect: %s", strerror(errno));
	n = commit_rc(kfd, 0, 0);
	cr_assert_eq(mprotect(m, pg, PROT_READ | PROT_WRITE), 0);
	cr_assert_eq(n, -EFAULT, "a wrapping commit with ring_over read-only: %d", n);
	kt_info(kfd, &i);
	cr_assert_eq(i.ring_uidx, 0u, "nothing freed");
	cr_assert_eq(i.ring_over, 0u, "no lap counted");
	cr_assert_eq(r->ring_over, 0u);
	cr_assert_eq(commit_rc(kfd, 0, 0), 4, "writable again: the whole ring freed");
	cr_assert_eq(r->ring_over, 1u, "a wrap stores ring_over");
	close(kfd);
	munmap(m, 2 * pg);
}

/* D55: num 0 and a stale old_uidx return 0 at once, even from a blocking WAIT. */
KTEST_REVS(rev2, blocking_wait_num0_or_stale_uidx_returns_at_once, 2, KTEST_OPEN)
{
	struct reader rd = reader_new(4);
	struct call c = { .kfd = rd.kfd, .is_wait = true, .num = 0,
			  .flags = KEVENT_FLAGS_NO_TIMEOUT };

	cr_assert(call_run(&c, 10000), "a blocking WAIT of num 0 waited");
	cr_assert_eq(c.result, 0);
	c.num = 4;
	c.old_uidx = 1;
	cr_assert(call_run(&c, 10000), "a blocking WAIT with a stale old_uidx waited");
	cr_assert_eq(c.result, 0);
	reader_close(&rd);
}

/*
 * D50, D55: a WAIT parked on a full ring and woken by READY num 0 copies
 * what is ready and fits: nothing; the ready kevent stays ready.
 */
KTEST_REVS(rev2, ready_num0_woken_wait_on_a_full_ring_copies_nothing, 2, KTEST_OPEN)
{
	struct reader rd = reader_new(2);
	struct call w = { .kfd = rd.kfd, .is_wait = true, .num = 2,
			  .flags = KEVENT_FLAGS_NO_TIMEOUT };

	add_ready_timers(rd.kfd, 3);
	cr_assert_eq(wait_rc(rd.kfd, 2, 0, ts_zero, 0), 2, "the ring full");
	call_start(&w);
	kt_await_parked(rd.kfd, 1, 10000);
	cr_assert_eq(kevent_ctl(rd.kfd, KEVENT_CTL_READY, 0, NULL), 1, "woken");
	cr_assert(call_join(&w, 10000), "the WAIT was not woken");
	cr_assert_eq(w.result, 0, "no free slot: %d", w.result);
	cr_assert_eq(kt_queue_ready(rd.kfd), 1u, "the third kevent still ready");
	reader_close(&rd);
}
