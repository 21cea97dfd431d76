// SPDX-License-Identifier: GPL-2.0
/*
 * Revision 2 (docs/abi.md D40-D57): the ring in process memory
 * (RING_INIT, WAIT, COMMIT), KEVENT_CTL_READY, timespec timeouts, the EINTR
 * opt-in, unknown types per entry, ALWAYS_QUEUE, LEVEL and POLLRDHUP.
 * Every test here holds from revision 2 on (KTEST_REVS(..., 2, KTEST_OPEN))
 * and skips where the backend serves revision 1 only.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
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
	cr_assert_eq(i.queue_revision, (__u32)kt_rev(), "SET_ABI(%d) queue", kt_rev());
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
