// SPDX-License-Identifier: GPL-2.0
/*
 * The memory-mapped ring (A10, D1-D4, D23, D26, D27): kevent_ring_map()
 * on every backend, a raw mmap() of the fd where the backend maps it (and
 * under libkevent-mmap.so on CUSE), the byte layout, what advances the
 * index, the page-header skip at slot 255, the wrap at 4096, order = ready
 * order, and every refusal.
 */
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ktest.h"

int kt_mmap_refusals(const char *dev, char *msg, size_t msglen);

static int shim_preloaded(void)
{
	const char *p = getenv("LD_PRELOAD");

	return p && strstr(p, "libkevent-mmap");
}

/*/* mmap() of the fd works: the module, fuse, or CUSE under libkevent-mmap.so (B6). */
static void require_raw_mmap(void)
{
	if (kt_backend_info()->features & KEVENT_FEAT_RING_MMAP)
		return;
	if (kt_backend() == KEVENT_BACKEND_CUSE && shim_preloaded())
		return;
	cr_skip_test("module, fuse, or cuse under LD_PRELOAD=libkevent-mmap.so: mmap() of the fd "
		     "(backend %s, no preload; cuse is covered by ring/cuse_shim_raw_mmap_refusals)",
		     kt_backend_name(kt_backend()));
}

static void map_ring(int kfd, struct kevent_ring *r)
{
	cr_assert_eq(kevent_ring_map(kfd, r), 0, "kevent_ring_map: %s", strerror(errno));
}

static __u32 rd32(const struct kevent_ring *r, size_t off)
{
	return __atomic_load_n((const __u32 *)(r->base + off), __ATOMIC_ACQUIRE);
}

/* Wait until the ring index reaches want (bounded). */
static int wait_index(const struct kevent_ring *r, unsigned int want, unsigned int ms)
{
	__u64 end = kt_now_ns() + KT_MS(ms);

	while (kevent_ring_index(r) != want) {
		if (kt_now_ns() > end)
			return 0;
		kt_sleep_ms(1);
	}
	return 1;
}

KTEST(ring, map_and_layout)
{
	int kfd = kt_open(O_RDWR);
	struct kevent_ring r;

	map_ring(kfd, &r);
	cr_assert_eq(r.length, (size_t)KEVENT_RING_SIZE);
	if (kt_backend() == KEVENT_BACKEND_MODULE || kt_backend() == KEVENT_BACKEND_FUSE)
		cr_assert_eq(r.via_shm, 0, "module and fuse: the fd itself maps");
	else if (shim_preloaded())
		cr_assert_eq(r.via_shm, 0, "cuse under the shim: mmap() of the fd works");
	else
		cr_assert_eq(r.via_shm, 1, "cuse: mapped through RING_SHM");
	cr_assert_eq(r.next, 0u);
	/* A fresh queue's ring is all zero, every page exists (no SIGBUS). */
	for (size_t b = 0; b < KEVENT_RING_SIZE; b += 4)
		cr_assert_eq(rd32(&r, b), 0u, "fresh ring byte %zu not zero", b);
	cr_assert_eq(KEVENT_RING_SLOT_OFFSET(0), 8);
	cr_assert_eq(KEVENT_RING_SLOT_OFFSET(254), 8 + 254 * 16);
	cr_assert_eq(KEVENT_RING_SLOT_OFFSET(255), 4096 + 8);
	cr_assert_eq(KEVENT_RING_SLOT_OFFSET(4095), 16 * 4096 + 8 + 15 * 16);
	cr_assert((const unsigned char *)kevent_ring_slot(&r, 255) == r.base + 4096 + 8);
	cr_assert(kevent_ring_slot(&r, 4096) == NULL);
	/* Read-only mapping: a write faults (checked in a child). */
	pid_t pid = fork();
	if (pid == 0) {
		*(volatile unsigned char *)r.base = 1;
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "a write to the ring did not fault");
	cr_assert_eq(kevent_ring_unmap(&r), 0);
	close(kfd);
}

/* D3: ADD and ready-at-ADD do not advance; a fire does; slot = {id, ret_flags}. */
KTEST(ring, index_advances_only_on_readiness)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct kevent_ring r;
	struct ukevent out[4];

	map_ring(kfd, &r);
	kt_pipe(p);
	struct ukevent rd = kt_uk_poll(p[1], KEVENT_POLL_POLLOUT, 0, 1);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &rd), 1, "writable pipe: ready at ADD");
	__u64 t0 = kt_now_ns();
	kt_add_queued(kfd, kt_uk(KEVENT_TIMER, 600, 0x12345678, KEVENT_TIMER_FIRED, KEVENT_REQ_ONESHOT, 2));
	kt_add_queued(kfd, kt_uk_poll(p[0], KEVENT_POLL_POLLIN, 0, 3));
	kt_sleep_ms(100);	/* the subject: time for a wrong write at ADD to show */
	unsigned int idx = kevent_ring_index(&r);
	/*
	 * On a slow guest the 600 ms timer may have fired by now: then its fire
	 * is the only slot, so slot 0 must be the timer, not the ready-at-ADD
	 * entry (which an ADD would have written first).
	 */
	if (kt_now_ns() - t0 < KT_MS(590))
		cr_assert_eq(idx, 0u, "ADD or a ready-at-ADD entry advanced the index to %u (D3); slot 0 id %u",
			     idx, kevent_ring_slot(&r, 0)->id.raw[0]);
	else
		cr_assert(idx <= 1 && (idx == 0 || kevent_ring_slot(&r, 0)->id.raw[0] == 600u),
			  "slow guest: index %u, slot 0 id %u; only the timer's fire may show (D3)",
			  idx, kevent_ring_slot(&r, 0)->id.raw[0]);
	cr_assert(wait_index(&r, 1, 5000), "the timer's fire did not advance the index");
	const struct mukevent *m = kevent_ring_slot(&r, 0);
	cr_assert_eq(m->id.raw[0], 600u, "slot 0 id.raw[0] %u", m->id.raw[0]);
	cr_assert_eq(m->id.raw[1], 0x12345678u);
	cr_assert_eq(m->ret_flags, (__u32)KEVENT_RET_DONE, "slot 0 ret_flags %#x", m->ret_flags);
	cr_assert_eq(m->__pad, 0u);
	cr_assert_eq(kt_get(kfd, 1, 4, 0, out), 1);
	cr_assert_eq(kevent_ring_index(&r), 1u, "GET_EVENTS wrote the ring");
	kt_write1(p[1]);
	cr_assert(wait_index(&r, 2, 5000), "the pipe fire did not advance the index");
	cr_assert_eq(kevent_ring_slot(&r, 1)->id.raw[0], (__u32)p[0]);
	struct mukevent got[8];
	cr_assert_eq(kevent_ring_read(&r, got, 8), 2u);
	cr_assert_eq(got[0].id.raw[0], 600u);
	cr_assert_eq(got[1].id.raw[0], (__u32)p[0]);
	cr_assert_eq(kevent_ring_read(&r, got, 8), 0u);
	kevent_ring_unmap(&r);
	close(kfd);
}

/* D3: a merge into a pending entry writes no slot. */
KTEST(ring, merge_writes_no_slot)
{
	int kfd = kt_open(O_RDWR);
	struct kevent_ring r;
	struct ukevent out[4];

	map_ring(kfd, &r);
	kt_add_queued(kfd, kt_uk_timer(10, 0, 1));
	cr_assert(wait_index(&r, 1, 5000));
	kt_sleep_ms(200);	/* the subject: 20 periods pass while the event is ready */
	cr_assert_eq(kevent_ring_index(&r), 1u, "expiries merged while ready advanced the index");
	cr_assert_eq(kt_get(kfd, 1, 4, 0, out), 1);
	cr_assert(wait_index(&r, 2, 5000), "the re-fire after dequeue wrote no slot");
	kevent_ring_unmap(&r);
	close(kfd);
}

/* D3: MODIFY finding the kevent ready writes a slot. */
KTEST(ring, modify_ready_writes_slot)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct kevent_ring r;

	map_ring(kfd, &r);
	kt_pipe(p);
	struct ukevent uk = kt_uk_poll(p[1], KEVENT_POLL_POLLPRI, 0, 1);
	kt_add_queued(kfd, uk);
	cr_assert_eq(kevent_ring_index(&r), 0u);
	uk.event = KEVENT_POLL_POLLOUT;
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &uk, 0);
	cr_assert(wait_index(&r, 1, 5000), "MODIFY to a ready condition wrote no slot");
	cr_assert_eq(kevent_ring_slot(&r, 0)->id.raw[0], (__u32)p[1]);
	kevent_ring_unmap(&r);
	close(kfd);
}

/* D4: REMOVE of a ready kevent leaves its slot; GET_EVENTS skips the event. */
KTEST(ring, removed_slot_stays)
{
	int kfd = kt_open(O_RDWR), p[2], q[2];
	struct kevent_ring r;
	struct ukevent out[4];

	map_ring(kfd, &r);
	kt_pipe(p);
	kt_pipe(q);
	struct ukevent a = kt_uk_poll(p[0], KEVENT_POLL_POLLIN, 0, 1);
	kt_add_queued(kfd, a);
	kt_add_queued(kfd, kt_uk_poll(q[0], KEVENT_POLL_POLLIN, 0, 2));
	kt_write1(p[1]);
	cr_assert(wait_index(&r, 1, 5000));
	kt_write1(q[1]);
	cr_assert(wait_index(&r, 2, 5000));
	kt_remove(kfd, a);
	cr_assert_eq(kevent_ring_index(&r), 2u, "REMOVE changed the index");
	cr_assert_eq(kevent_ring_slot(&r, 0)->id.raw[0], (__u32)p[0], "REMOVE retracted the slot");
	cr_assert_eq(kt_get(kfd, 0, 4, 0, out), 1);
	cr_assert_eq(out[0].user[0], 2u);
	kevent_ring_unmap(&r);
	close(kfd);
}

/* §5.5: ring order is ready order, and GET_EVENTS returns the same order. */
KTEST(ring, order_is_ready_order)
{
	int kfd = kt_open(O_RDWR), p[6][2];
	int order[6] = { 3, 0, 5, 1, 4, 2 };
	struct kevent_ring r;
	struct ukevent out[8];
	struct mukevent m[8];

	map_ring(kfd, &r);
	for (int i = 0; i < 6; i++) {
		kt_pipe(p[i]);
		kt_add_queued(kfd, kt_uk_poll(p[i][0], KEVENT_POLL_POLLIN, 0, (__u32)i));
	}
	for (int i = 0; i < 6; i++) {
		kt_write1(p[order[i]][1]);
		cr_assert(wait_index(&r, (unsigned)i + 1, 5000), "fire %d not in the ring", i);
	}
	cr_assert_eq(kevent_ring_read(&r, m, 8), 6u);
	cr_assert_eq(kt_get(kfd, 6, 8, KT_MS(5000), out), 6);
	for (int i = 0; i < 6; i++) {
		cr_assert_eq(m[i].id.raw[0], (__u32)p[order[i]][0], "ring slot %d", i);
		cr_assert_eq(out[i].user[0], (__u32)order[i], "GET_EVENTS position %d", i);
		cr_assert_eq(out[i].id.raw[0], m[i].id.raw[0], "ring and GET_EVENTS disagree at %d", i);
	}
	kevent_ring_unmap(&r);
	close(kfd);
}

/* Page-header skip at slot 255 and the wrap at 4096 (D26: no lap signal). */
KTEST(ring, page_skip_and_wrap)
{
	enum { NP = 128 };
	kt_require_room(KEVENT_LIMIT_FD_KEVENTS, NP);
	int kfd = kt_open(O_RDWR), p[NP][2];
	struct kevent_ring r;
	struct ukevent out[NP];
	unsigned int total = 0;

	map_ring(kfd, &r);
	for (int i = 0; i < NP; i++) {
		kt_pipe(p[i]);
		kt_add_queued(kfd, kt_uk_poll(p[i][0], KEVENT_POLL_POLLIN, 0, (__u32)i));
	}
	while (total < KEVENT_MAX_EVENTS + 300) {
		for (int i = 0; i < NP; i++)
			kt_write1(p[i][1]);
		unsigned int want = (total + NP) % KEVENT_MAX_EVENTS;
		cr_assert(wait_index(&r, want, 20000), "index %u, want %u after %u fires",
			  kevent_ring_index(&r), want, total + NP);
		unsigned int got = 0;
		while (got < NP) {
			int n = kt_get(kfd, 1, NP, KT_MS(5000), out);
			cr_assert(n > 0);
			for (int k = 0; k < n; k++) {
				unsigned int s = (total + got + (unsigned)k) % KEVENT_MAX_EVENTS;
				const struct mukevent *m = kevent_ring_slot(&r, s);
				cr_assert_eq(m->id.raw[0], out[k].id.raw[0], "slot %u holds fd %u, GET gave %u", s,
					     m->id.raw[0], out[k].id.raw[0]);
				cr_assert_eq(m->ret_flags, (__u32)KEVENT_RET_DONE);
				/* The raw bytes: the same place as the macro says. */
				cr_assert_eq(rd32(&r, KEVENT_RING_SLOT_OFFSET(s)), out[k].id.raw[0]);
			}
			got += (unsigned)n;
		}
		for (int i = 0; i < NP; i++)
			kt_read_all(p[i][0]);
		total += NP;
		/* Only page 0's index is used; headers and tails of the others stay 0. */
		for (unsigned int pg = 0; pg < KEVENT_RING_PAGES; pg++) {
			size_t base = (size_t)pg * KEVENT_RING_PAGE_SIZE;
			if (pg)
				cr_assert_eq(rd32(&r, base), 0u, "page %u header index written", pg);
			cr_assert_eq(rd32(&r, base + 4), 0u, "page %u header padding written", pg);
			if (pg < KEVENT_RING_PAGES - 1) {
				cr_assert_eq(rd32(&r, base + 4088), 0u, "page %u tail written", pg);
				cr_assert_eq(rd32(&r, base + 4092), 0u, "page %u tail written", pg);
			} else {
				for (size_t b = 8 + 16 * 16; b < KEVENT_RING_PAGE_SIZE; b += 4)
					cr_assert_eq(rd32(&r, base + b), 0u, "last page byte %zu written", b);
			}
		}
	}
	cr_assert(kevent_ring_index(&r) < 400, "index %u did not wrap", kevent_ring_index(&r));
	cr_assert_eq(kevent_ring_index(&r), total % KEVENT_MAX_EVENTS);
	/* D26: the reader's index was never advanced; a full lap is invisible. */
	static struct mukevent lap[KEVENT_MAX_EVENTS];
	cr_assert_eq(kevent_ring_read(&r, lap, KEVENT_MAX_EVENTS), total % KEVENT_MAX_EVENTS,
		     "%u fires since the map: only the part past full laps shows (D26)", total);
	kevent_ring_unmap(&r);
	close(kfd);
}

/* The raw mmap of the fd and its refusals (D23, A10). */
KTEST(ring, raw_mmap_refusals)
{
	require_raw_mmap();
	ktest_not_on_backend(KEVENT_BACKEND_FUSE,
			     "fuse: FUSE never tells the daemon about mmap(), so private, "
			     "writable, offset and long mappings all succeed (abi.md 9)");
	char msg[256] = "";

	cr_assert_eq(kt_mmap_refusals(kt_device(), msg, sizeof(msg)), 0, "%s", msg);
}

KTEST(ring, raw_mmap_sees_ring)
{
	require_raw_mmap();
	int kfd = kt_open(O_RDWR);
	const unsigned char *raw = mmap(NULL, KEVENT_RING_SIZE, PROT_READ, MAP_SHARED, kfd, 0);
	struct kevent_ring r;

	cr_assert(raw != MAP_FAILED, "mmap: %s", strerror(errno));
	map_ring(kfd, &r);
	kt_add_queued(kfd, kt_uk_timer(30, KEVENT_REQ_ONESHOT, 1));
	cr_assert(wait_index(&r, 1, 5000));
	cr_assert_eq(*(const volatile __u32 *)raw, 1u);
	cr_assert_eq(((const struct mukevent *)(raw + KEVENT_RING_SLOT_OFFSET(0)))->id.raw[0], 30u);
	/* The mapping keeps the queue alive after close (1.7, B6): the timer still fires. */
	kt_add_queued(kfd, kt_uk_timer(100, KEVENT_REQ_ONESHOT, 2));
	close(kfd);
	__u64 end = kt_now_ns() + KT_MS(5000);
	while (*(const volatile __u32 *)raw != 2u && kt_now_ns() < end)
		kt_sleep_ms(2);
	cr_assert_eq(*(const volatile __u32 *)raw, 2u, "the queue died with the fd despite the mapping");
	munmap((void *)raw, KEVENT_RING_SIZE);
	kevent_ring_unmap(&r);
}

KTEST(ring, cuse_raw_mmap_enodev_without_shim)
{
	ktest_only_backend(KEVENT_BACKEND_CUSE, "cuse only: CUSE has no mmap");
	if (shim_preloaded())
		cr_skip_test("cuse: libkevent-mmap.so is preloaded here, so mmap() is the shim's");
	int kfd = kt_open(O_RDWR);
	void *p = mmap(NULL, KEVENT_RING_SIZE, PROT_READ, MAP_SHARED, kfd, 0);

	cr_assert(p == MAP_FAILED, "mmap() of a CUSE fd succeeded without the shim");
	cr_assert_eq(errno, ENODEV, "mmap of a CUSE fd: %s", strerror(errno));
	close(kfd);
}

/* The same refusals under LD_PRELOAD=libkevent-mmap.so on CUSE (B6). */
KTEST(ring, cuse_shim_raw_mmap_refusals)
{
	ktest_only_backend(KEVENT_BACKEND_CUSE, "cuse only: the libkevent-mmap.so shim");
	if (shim_preloaded())
		cr_skip_test("cuse: the shim is preloaded here; ring/raw_mmap_refusals ran in process");
	char exe[PATH_MAX], helper[PATH_MAX + 32], shim[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	cr_assert(n > 0);
	exe[n] = 0;
	char *dir = dirname(exe);
	snprintf(helper, sizeof(helper), "%s/kt-mmap-helper", dir);
	if (getenv("KEVENT_MMAP_SHIM"))
		snprintf(shim, sizeof(shim), "%s", getenv("KEVENT_MMAP_SHIM"));
	else
		snprintf(shim, sizeof(shim), "%s/../lib/libkevent-mmap.so", dir);
	if (access(shim, R_OK) != 0)
		cr_skip_test("cuse: %s not built (lib/ owns it); set KEVENT_MMAP_SHIM", shim);
	cr_assert_eq(access(helper, X_OK), 0, "%s missing", helper);
	int pfd[2];
	kt_pipe(pfd);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		setenv("LD_PRELOAD", shim, 1);
		execl(helper, helper, kt_device(), (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	char out[512] = "";
	ssize_t len = 0, k;
	while ((k = read(pfd[0], out + len, sizeof(out) - 1 - (size_t)len)) > 0)
		len += k;
	out[len > 0 ? len : 0] = 0;
	int st;
	waitpid(pid, &st, 0);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "under the shim: %s", out);
}

/*
 * The ring in process memory, from revision 2 on: RING_INIT, WAIT, COMMIT
 * (D41, D46, D53-D55), READY meeting a ready kevent (D49, D3), the latch
 * and WAIT (D50); from revision 3 on: counts and results through WAIT.
 */

/*
 * D53: where the backend cannot write the caller's memory (the CUSE retry
 * path: INFO without KEVENT_FEAT_URING, e.g. under Yama ptrace_scope=3),
 * RING_INIT is refused with -EPERM, so no ring exists there.
 */
KTEST_REVS(ring, ring_init_eperm_off_process_memory, 2, KTEST_OPEN)
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
KTEST_REVS(ring, ring_init_checks, 2, KTEST_OPEN)
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
KTEST_REVS(ring, no_ring_commit_zero_wait_einval, 2, KTEST_OPEN)
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
KTEST_REVS(ring, no_loss_rounds_with_wraps, 2, KTEST_OPEN)
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
KTEST_REVS(ring, stale_over_eoverflow, 2, KTEST_OPEN)
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
KTEST_REVS(ring, wait_stale_old_uidx_returns_zero, 2, KTEST_OPEN)
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
KTEST_REVS(ring, get_events_and_wait_mixed, 2, KTEST_OPEN)
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
KTEST_REVS(ring, faulting_ring_requeues, 2, KTEST_OPEN)
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
KTEST_REVS(ring, ready_num0_wakes_a_blocked_wait, 2, KTEST_OPEN)
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
KTEST_REVS(ring, wait_on_full_ring_wakes_on_commit, 2, KTEST_OPEN)
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

/* ---- every dequeue rule through kevent_wait as through GET_EVENTS ---- */

/* D55: a ONESHOT kevent delivered by WAIT is freed; the others stay registered. */
KTEST_REVS(ring, wait_frees_oneshot_after_delivery, 2, KTEST_OPEN)
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
KTEST_REVS(ring, wait_refires_on_new_activity_only, 2, KTEST_OPEN)
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
KTEST_REVS(ring, wait_level_reports_unread_data_again, 2, KTEST_OPEN)
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

/*
 * O6 through WAIT: a BROKEN kevent that is not ONESHOT is delivered by WAIT
 * and stays registered (it counts and can be REMOVEd); it never fires again.
 */
KTEST_REVS(ring, wait_keeps_broken_kevent_registered, 2, KTEST_OPEN)
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
KTEST_REVS(ring, wait_delivers_always_queue_once, 2, KTEST_OPEN)
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
KTEST_REVS(ring, wait_delivers_ready_result, 2, KTEST_OPEN)
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
KTEST_REVS(ring, wait_then_get_events_each_once, 2, KTEST_OPEN)
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

KTEST_REVS(ring, ready_on_ready_kevent_keeps_place_and_result, 2, KTEST_OPEN)
{
	ready_meets_ready(false);
}

KTEST_REVS(ring, ready_on_ready_kevent_through_wait, 2, KTEST_OPEN)
{
	ready_meets_ready(true);
}

/* D50: a latched wake ends the next blocking WAIT at once, and that WAIT clears it. */
KTEST_REVS(ring, latch_ends_blocking_wait, 2, KTEST_OPEN)
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
KTEST_REVS(ring, latch_cleared_by_nonblocking_wait, 2, KTEST_OPEN)
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

/* D48: NO_TIMEOUT on WAIT waits for the event, however long. */
KTEST_REVS(ring, wait_no_timeout_waits_for_the_event, 2, KTEST_OPEN)
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
KTEST_REVS(ring, wait_timespec_checks, 2, KTEST_OPEN)
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

KTEST_REVS(ring, faulting_wait_requeues_every_kind, 2, KTEST_OPEN)
{
	faulting_wait_every_kind(false);
}

KTEST_REVS(ring, faulting_ring_kidx_store_requeues_every_kind, 2, KTEST_OPEN)
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

KTEST_REVS(ring, eintr_opt_in_ends_a_blocked_wait, 2, KTEST_OPEN)
{
	int r = wait_signalled(KEVENT_ABI_EINTR);

	cr_assert_eq(r, -EINTR, "got %d", r);
}

KTEST_REVS(ring, signal_ends_a_blocked_wait_with_what_is_ready, 2, KTEST_OPEN)
{
	int r = wait_signalled(0);

	cr_assert_eq(r, 0, "got %d", r);
}

/* D55, A11: a WAIT never blocks with KEVENT_GET_NONBLOCK or on an O_NONBLOCK file. */
KTEST_REVS(ring, wait_nonblocking_never_blocks, 2, KTEST_OPEN)
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
 * D54: a wrapping commit stores ring_over before anything changes: where
 * that store faults (the ring's words on a read-only page) the commit is
 * -EFAULT and frees nothing; writable again, the same commit frees the slots.
 */
KTEST_REVS(ring, wrapping_commit_fault_frees_nothing, 2, KTEST_OPEN)
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
KTEST_REVS(ring, blocking_wait_num0_or_stale_uidx_returns_at_once, 2, KTEST_OPEN)
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
KTEST_REVS(ring, ready_num0_woken_wait_on_a_full_ring_copies_nothing, 2, KTEST_OPEN)
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

/*
 * D41, D58, D62: a WAIT whose kevent_uring store faults hands a POSIX timer
 * and a user event back with their results, in order: the next delivery
 * carries the same expiry count, the same OR of values and trigger count,
 * each once.  A faulted WAIT delivered nothing, so a periodic timer that
 * kept firing meanwhile counts every point since its last delivered one:
 * the faulted count plus the points passed since (here: all since ADD).
 */
KTEST_REVS(ring, faulting_ring_requeues_counts, 3, KTEST_OPEN)
{
	const __u64 iv = 50000000ULL;	/* 50 ms */
	int kfd = kt_open(O_RDWR);
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* slots 0 and 1 on the first page, slots 2 .. 7 on the second */
	struct kevent_uring *r = (struct kevent_uring *)(m + pg - 8 - 2 * 40);
	struct kevent_ring_init ri = { .ring = (__u64)(uintptr_t)r, .num = 8 };
	const struct timespec nowait = { 0, 0 };
	struct ukevent out[8];
	struct kevent_info i;

	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	cr_assert_neq(m, MAP_FAILED);
	memset(m, 0, 2 * pg);
	cr_assert_eq(kt_ioctl(kfd, KEVENT_IOC_RING_INIT, &ri), 0, "RING_INIT");

	/* one expiry, freed at delivery: count 1 */
	ext_add(kfd, ptimer(1, KEVENT_CLOCK_MONOTONIC, 0, 1000000, 0, KEVENT_REQ_ONESHOT, 1));
	cr_assert(kt_wait_ready(kfd, 1, 5000), "the one-shot timer never expired");
	ext_add(kfd, uevent(2, 0, 2));
	trigger(kfd, 2, 2, 0x1);
	trigger(kfd, 2, 2, 0x4);
	__u64 a = kt_now_ns();
	ext_add(kfd, ptimer(3, KEVENT_CLOCK_MONOTONIC, 0, iv, iv, 0, 3));
	__u64 b = kt_now_ns();
	cr_assert(kt_wait_ready(kfd, 3, 5000), "the periodic timer never expired");

	munmap(m + pg, pg);
	cr_assert_eq(kevent_wait(kfd, 8, 0, nowait, 0), -1, "slot 2 is unmapped");
	cr_assert_eq(errno, EFAULT, "WAIT: %s, want EFAULT", strerror(errno));
	cr_assert_eq(r->ring_kidx, 0u, "nothing published");
	kt_info(kfd, &i);
	cr_assert_eq(i.ring_faults, 1u, "INFO counts the fault");
	cr_assert_eq(kt_queue_ready(kfd), 3u, "nothing lost: all still ready");
	cr_assert_eq(kt_queue_kevents(kfd), 3u, "the one-shot timer freed by a faulted WAIT");
	kt_sleep_ms(120);	/* the periodic timer keeps firing while requeued */

	cr_assert_eq(kevent_wait(kfd, 2, 0, nowait, 0), 2, "the mapped slots: %s",
		     strerror(errno));
	check_fired(r->event[0], 1, 1, "the requeued one-shot timer");
	cr_assert_eq(r->event[1].type, (__u32)KEVENT_USER, "second: type %u", r->event[1].type);
	cr_assert_eq(r->event[1].user[0], 2u, "in order: the user event second");
	cr_assert_eq(r->event[1].ret_data[0], 0x5u, "OR of the values: %#x",
		     r->event[1].ret_data[0]);
	cr_assert_eq(r->event[1].ret_data[1], 2u, "trigger count %u", r->event[1].ret_data[1]);
	cr_assert_eq(kt_queue_kevents(kfd), 2u, "the one-shot timer freed at its delivery");

	__u64 g0 = kt_now_ns();
	cr_assert_eq(kt_get(kfd, 1, 8, KT_MS(5000), out), 1, "GET_EVENTS takes the rest");
	__u64 g1 = kt_now_ns();

	check_fired(out[0], 3, 0, "the requeued periodic timer");
	cr_assert_geq(out[0].ret_data[0], (__u32)((g0 - b) / iv), "count %u: points lost",
		      out[0].ret_data[0]);
	cr_assert_leq(out[0].ret_data[0], (__u32)((g1 - a) / iv), "count %u: points doubled",
		      out[0].ret_data[0]);
	kt_remove(kfd, kt_uk(KEVENT_POSIX_TIMER, 3, 0, KEVENT_TIMER_FIRED, 0, 3));
	kt_assert_quiet(kfd, 20, "the user event came twice");
	munmap(m, pg);
	close(kfd);
}

/*
 * A kevent_uring that WAIT fills (D53, D55); slots [kidx, kidx + n) hold
 * what the last WAIT copied.  Never committed: a test takes fewer kevents
 * than it has slots.
 */
struct uring {
	int kfd;
	struct kevent_uring *r;
	unsigned int num, kidx;
};

static void uring_open(struct uring *u, int kfd, unsigned int num)
{
	struct kevent_ring_init ri = { .num = num };

	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	u->kfd = kfd;
	u->num = num;
	u->kidx = 0;
	u->r = calloc(1, KEVENT_URING_SIZE(num));
	cr_assert(u->r);
	ri.ring = (__u64)(uintptr_t)u->r;
	cr_assert_eq(kt_ioctl(kfd, KEVENT_IOC_RING_INIT, &ri), 0, "RING_INIT");
}

/* A WAIT that does not block: what is ready now, into out (at most max). */
static int uring_take(struct uring *u, struct ukevent *out, unsigned int max)
{
	static const struct timespec now;
	int n = kevent_wait(u->kfd, max, 0, now, 0);

	cr_assert_geq(n, 0, "WAIT: %s", strerror(errno));
	cr_assert_eq(u->r->ring_kidx, u->kidx + (unsigned int)n, "ring_kidx after %d kevents", n);
	for (int i = 0; i < n; i++)
		out[i] = u->r->event[u->kidx + (unsigned int)i];
	u->kidx += (unsigned int)n;
	return n;
}

/* The one kevent of cookie c among n. */
static struct ukevent pick(const struct ukevent *ev, int n, __u32 c)
{
	for (int i = 0; i < n; i++)
		if (ev[i].user[0] == c)
			return ev[i];
	cr_assert_fail("no kevent of cookie %u among %d", c, n);
	return ev[0];
}

/*
 * D55 with D58 and D62: WAIT dequeues by the rules of GET_EVENTS.  A
 * periodic POSIX timer's count is its grid points (11 or so from 10.5 s
 * back); a ONESHOT one is freed at delivery; one made ready by READY
 * before any expiry counts 0 and stays armed.  A user event carries the OR
 * of its triggers and their count, is cleared by the WAIT that delivers
 * it (not delivered again; the next trigger starts anew), and a ONESHOT
 * one is freed.
 */
KTEST_REVS(ring, wait_dequeues_as_get_events, 3, KTEST_OPEN)
{
	const __u64 back = 10 * NSEC + NSEC / 2;
	int kfd = kt_open(O_RDWR);
	struct uring u;
	struct ukevent ev[8], x;
	__u64 t0 = clock_ns(CLOCK_MONOTONIC), v = t0 - back;
	struct ukevent_ext r = ptimer(3, KEVENT_CLOCK_MONOTONIC, 0, 3600 * NSEC, 0, 0, 3);

	uring_open(&u, kfd, 32);
	cr_assert_gt(t0, back, "CLOCK_MONOTONIC reads %llu ns", (unsigned long long)t0);
	ext_add(kfd, ptimer(1, KEVENT_CLOCK_MONOTONIC, KEVENT_TIMER_ABSTIME, v, NSEC, 0, 1));
	ext_add(kfd, ptimer(2, KEVENT_CLOCK_MONOTONIC, KEVENT_TIMER_ABSTIME, v, 0,
			    KEVENT_REQ_ONESHOT, 2));
	ext_add(kfd, r);
	ext_add(kfd, uevent(4, KEVENT_REQ_ONESHOT, 4));
	ext_add(kfd, uevent(5, 0, 5));
	cr_assert(kt_wait_ready(kfd, 2, 5000), "past absolute timers not ready within 5 s");
	kt_ctl1(kfd, KEVENT_CTL_READY, &r.ev, 1);
	trigger(kfd, 4, 4, 0x40);
	trigger(kfd, 5, 5, 0x1);
	trigger(kfd, 5, 5, 0x2);

	int n = uring_take(&u, ev, 8);
	__u64 t1 = clock_ns(CLOCK_MONOTONIC);

	cr_assert_eq(n, 5, "WAIT took %d kevents, 5 ready", n);
	x = pick(ev, n, 1);
	check_fired(x, 1, 0, "periodic timer through WAIT");
	cr_assert(x.ret_data[0] >= points_by(v, NSEC, t0) && x.ret_data[0] <= points_by(v, NSEC, t1),
		  "count %u through WAIT, want %u .. %u", x.ret_data[0], points_by(v, NSEC, t0),
		  points_by(v, NSEC, t1));
	check_fired(pick(ev, n, 2), 2, 1, "ONESHOT one-expiry timer through WAIT");
	x = pick(ev, n, 3);
	check_fired(x, 3, 0, "READY before any expiry, through WAIT");
	cr_assert_eq(x.ret_data[0], 0u, "count %u of a timer made ready by READY", x.ret_data[0]);
	x = pick(ev, n, 4);
	cr_assert(x.type == KEVENT_USER && x.ret_data[0] == 0x40 && x.ret_data[1] == 1,
		  "ONESHOT user event: type %u {%#x, %u}", x.type, x.ret_data[0], x.ret_data[1]);
	x = pick(ev, n, 5);
	cr_assert(x.ret_data[0] == 0x3 && x.ret_data[1] == 2, "user event {%#x, %u}, want {0x3, 2}",
		  x.ret_data[0], x.ret_data[1]);
	cr_assert_eq(kt_queue_kevents(kfd), 3u, "ONESHOT kevents not freed by WAIT");
	kt_remove(kfd, kt_uk(KEVENT_POSIX_TIMER, 1, 0, KEVENT_TIMER_FIRED, 0, 1));
	cr_assert_gt(kts_ns(query(kfd, r, 1).ext.timer.value), 3500 * NSEC, "READY disarmed it");

	cr_assert_eq(uring_take(&u, ev, 8), 0, "a user event delivered by WAIT came again");
	trigger(kfd, 5, 5, 0x8);
	cr_assert_eq(uring_take(&u, ev, 8), 1);
	cr_assert(ev[0].user[0] == 5 && ev[0].ret_data[0] == 0x8 && ev[0].ret_data[1] == 1,
		  "re-triggered user event: cookie %u {%#x, %u}, want {0x8, 1}", ev[0].user[0],
		  ev[0].ret_data[0], ev[0].ret_data[1]);
	close(kfd);
	free(u.r);
}

/*
 * D49, D62: READY meeting a kevent already ready.  A POSIX timer keeps its
 * pending count, nothing merged (not 0, not one more; one delivery); a
 * ONESHOT one is still freed at it.  A user event merges the trigger into
 * its pending result, also after a MODIFY, which keeps the pending trigger.
 */
KTEST_REVS(ring, ready_meets_ready_kevents, 3, KTEST_OPEN)
{
	const __u64 back = 10 * NSEC + NSEC / 2;
	int kfd = kt_open(O_RDWR);
	__u64 t0 = clock_ns(CLOCK_MONOTONIC), v = t0 - back;
	struct ukevent_ext p = ptimer(1, KEVENT_CLOCK_MONOTONIC, KEVENT_TIMER_ABSTIME, v, NSEC, 0, 1);
	struct ukevent_ext o = ptimer(2, KEVENT_CLOCK_MONOTONIC, KEVENT_TIMER_ABSTIME, v, 0,
				      KEVENT_REQ_ONESHOT, 2);
	struct ukevent_ext u = uevent(3, 0, 3);
	struct ukevent out[4];

	cr_assert_gt(t0, back, "CLOCK_MONOTONIC reads %llu ns", (unsigned long long)t0);
	ext_add(kfd, p);
	ext_add(kfd, o);
	cr_assert(kt_wait_ready(kfd, 2, 5000), "past absolute timers not ready within 5 s");
	kt_ctl1(kfd, KEVENT_CTL_READY, &p.ev, 1);
	kt_ctl1(kfd, KEVENT_CTL_READY, &o.ev, 1);
	cr_assert(p.ev.ret_flags == KEVENT_RET_DONE && o.ev.ret_flags == KEVENT_RET_DONE,
		  "READY ret_flags %#x %#x", p.ev.ret_flags, o.ev.ret_flags);
	cr_assert_eq(kt_queue_ready(kfd), 2u);
	cr_assert_eq(kt_get(kfd, 1, 4, KT_MS(5000), out), 2, "one delivery each");
	__u64 t1 = clock_ns(CLOCK_MONOTONIC);
	struct ukevent x = pick(out, 2, 1);

	check_fired(x, 1, 0, "periodic timer READY while ready");
	cr_assert(x.ret_data[0] >= points_by(v, NSEC, t0) && x.ret_data[0] <= points_by(v, NSEC, t1),
		  "count %u, want %u .. %u", x.ret_data[0], points_by(v, NSEC, t0),
		  points_by(v, NSEC, t1));
	check_fired(pick(out, 2, 2), 2, 1, "ONESHOT timer READY while ready");
	cr_assert_eq(kt_queue_kevents(kfd), 1u, "the ONESHOT timer not freed");
	kt_remove(kfd, p.ev);

	ext_add(kfd, u);
	trigger(kfd, 3, 3, 0x1);
	u.ev.req_flags = KEVENT_REQ_ONESHOT;
	ext1(kfd, KEVENT_CTL_MODIFY, &u, 0);
	trigger(kfd, 3, 3, 0x10);
	cr_assert_eq(kt_get(kfd, 1, 4, KT_MS(5000), out), 1, "one delivery of a merged user event");
	cr_assert(out[0].ret_data[0] == 0x11 && out[0].ret_data[1] == 2,
		  "triggers around a MODIFY: {%#x, %u}, want {0x11, 2}", out[0].ret_data[0],
		  out[0].ret_data[1]);
	cr_assert_eq(kt_queue_kevents(kfd), 0u, "the user event made ONESHOT not freed");
	close(kfd);
}

/*
 * D41, D58, D62: a WAIT whose ring store faults delivered nothing; every
 * kevent goes back in its order, and a later WAIT delivers each once: a
 * ONESHOT user event and a user event with the triggers before the fault
 * merged with those since, a one-expiry timer (count 1, not ONESHOT: it
 * stays) and a ONESHOT periodic timer counting every point since the ADD;
 * the ONESHOT ones are freed by that WAIT, not by the faulted one.
 */
KTEST_REVS(ring, faulted_wait_keeps_results, 3, KTEST_OPEN)
{
	const __u64 back = 10 * NSEC + NSEC / 2;
	int kfd = kt_open(O_RDWR);
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);
	/* slot 0 on the first page, slots 1 .. 7 on the second */
	struct kevent_uring *r = (struct kevent_uring *)(m + pg - 8 - 40);
	struct kevent_ring_init ri = { .ring = (__u64)(uintptr_t)r, .num = 8 };
	static const struct timespec nowait;
	__u64 t0 = clock_ns(CLOCK_MONOTONIC), v = t0 - back;

	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	cr_assert_neq(m, MAP_FAILED);
	cr_assert_gt(t0, back, "CLOCK_MONOTONIC reads %llu ns", (unsigned long long)t0);
	cr_assert_eq(kt_ioctl(kfd, KEVENT_IOC_RING_INIT, &ri), 0, "RING_INIT");
	ext_add(kfd, uevent(1, KEVENT_REQ_ONESHOT, 1));
	ext_add(kfd, uevent(2, 0, 2));
	trigger(kfd, 1, 1, 0x1);
	trigger(kfd, 2, 2, 0x2);
	ext_add(kfd, ptimer(3, KEVENT_CLOCK_MONOTONIC, KEVENT_TIMER_ABSTIME, v, 0, 0, 3));
	cr_assert(kt_wait_ready(kfd, 3, 5000), "the past one-expiry timer not ready within 5 s");
	ext_add(kfd, ptimer(4, KEVENT_CLOCK_MONOTONIC, KEVENT_TIMER_ABSTIME, v, NSEC,
			    KEVENT_REQ_ONESHOT, 4));
	cr_assert(kt_wait_ready(kfd, 4, 5000), "the past periodic timer not ready within 5 s");

	cr_assert_eq(munmap(m + pg, (size_t)pg), 0);
	cr_assert_eq(kevent_wait(kfd, 8, 0, nowait, 0), -1, "slot 1 is unmapped");
	cr_assert_eq(errno, EFAULT, "WAIT: %s, want EFAULT", strerror(errno));
	cr_assert_eq(r->ring_kidx, 0u, "nothing published");
	cr_assert_eq(kt_queue_ready(kfd), 4u, "nothing lost: all still ready");
	cr_assert_eq(kt_queue_kevents(kfd), 4u, "a ONESHOT kevent freed by a faulted WAIT");
	trigger(kfd, 1, 1, 0x10);
	trigger(kfd, 2, 2, 0x20);
	cr_assert_eq(mmap(m + pg, (size_t)pg, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0), (void *)(m + pg));

	cr_assert_eq(kevent_wait(kfd, 8, 0, nowait, 0), 4, "WAIT after the fault: %s",
		     strerror(errno));
	__u64 t1 = clock_ns(CLOCK_MONOTONIC);

	for (unsigned int i = 0; i < 4; i++)
		cr_assert_eq(r->event[i].user[0], i + 1, "slot %u: cookie %u, not in order", i,
			     r->event[i].user[0]);
	cr_assert(r->event[0].ret_data[0] == 0x11 && r->event[0].ret_data[1] == 2,
		  "ONESHOT user event {%#x, %u}, want {0x11, 2}", r->event[0].ret_data[0],
		  r->event[0].ret_data[1]);
	cr_assert(r->event[1].ret_data[0] == 0x22 && r->event[1].ret_data[1] == 2,
		  "user event {%#x, %u}, want {0x22, 2}", r->event[1].ret_data[0],
		  r->event[1].ret_data[1]);
	check_fired(r->event[2], 3, 1, "the one-expiry timer after the fault");
	check_fired(r->event[3], 4, 0, "the periodic timer after the fault");
	cr_assert(r->event[3].ret_data[0] >= points_by(v, NSEC, t0) &&
		  r->event[3].ret_data[0] <= points_by(v, NSEC, t1), "count %u, want %u .. %u",
		  r->event[3].ret_data[0], points_by(v, NSEC, t0), points_by(v, NSEC, t1));
	cr_assert_eq(kt_queue_kevents(kfd), 2u, "the ONESHOT kevents freed at their delivery");
	cr_assert_eq(kevent_wait(kfd, 4, 0, nowait, 0), 0, "delivered twice");
	munmap(m, 2 * (size_t)pg);
	close(kfd);
}
