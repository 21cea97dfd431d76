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
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
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
