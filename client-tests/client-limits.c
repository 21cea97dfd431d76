// SPDX-License-Identifier: GPL-2.0
/*
 * The per-queue limit (A4): 4095 kevents, ADD fails whole when
 * kevent_num + num >= 4096; GET_EVENTS returns at most 4095 (D12) and at
 * most the path's max_get_nr (B4); CTL batches above max_ctl_num fail
 * whole with E2BIG (B4).  The per-uid caps of the CUSE daemon (D18) and
 * its timer expiry budget (B7); the module has no caps (INFO cap 0), so
 * those tests skip there with that reason.
 *
 * Every test here fills a per-uid cap or comes near one, and Criterion
 * runs tests side by side: each starts with kt_own_uid(), a uid of its own
 * (ktest.h), so its caps are its own.  The few that fill what the backend
 * has once, whatever the uid (fd kevents: one daemon descriptor each; the
 * running cap: as many daemon workers), take kt_lock_backend() first and
 * run one at a time among themselves.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ktest.h"

#define HOUR (3600u * 1000u)

/* ADD n timers (never firing) in batches the path can move. */
static void add_timers(int kfd, unsigned int n, unsigned int period, unsigned int req, __u32 base)
{
	unsigned int max = kt_backend_info()->max_ctl_num, done = 0;
	struct ukevent *uk = calloc(n, sizeof(*uk));

	cr_assert(uk);
	for (unsigned int i = 0; i < n; i++)
		uk[i] = kt_uk_timer(period, req, base + i);
	while (done < n) {
		unsigned int b = n - done < max ? n - done : max;
		int r = kevent_ctl(kfd, KEVENT_CTL_ADD, b, uk + done);

		cr_assert_eq(r, 0, "ADD of %u timers at %u: %d (%s); entry 0 ret_data[1] %d", b, done, r,
			     r < 0 ? strerror(errno) : "some failed", r > 0 ? (int)uk[done].ret_data[1] : 0);
		done += b;
	}
	free(uk);
}

KTEST(limits, max_4095_per_queue)
{
	kt_own_uid();
	kt_require_room(KEVENT_LIMIT_TIMERS, 4095);
	int kfd = kt_open(O_RDWR);
	struct ukevent one = kt_uk_timer(HOUR, 0, 99999);

	add_timers(kfd, 4094, HOUR, 0, 0);
	cr_assert_eq(kt_queue_kevents(kfd), 4094u);
	/* 4094 + 1 = 4095 < 4096: accepted. */
	kt_add_queued(kfd, one);
	cr_assert_eq(kt_queue_kevents(kfd), 4095u);
	/* 4095 + 1 >= 4096: the whole call fails. */
	struct ukevent more = kt_uk_timer(HOUR, 0, 100000);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &more), -1, "the 4096th kevent was accepted");
	cr_assert_eq(errno, EINVAL, "4096th kevent: %s", strerror(errno));
	cr_assert_eq(kt_queue_kevents(kfd), 4095u);
	/* MODIFY/REMOVE num may be up to kevent_num. */
	kt_remove(kfd, one);
	cr_assert_eq(kt_queue_kevents(kfd), 4094u);
	kt_add_queued(kfd, more);
	cr_assert_eq(kt_queue_kevents(kfd), 4095u);
	/* Another queue is independent. */
	int k2 = kt_open(O_RDWR);
	kt_add_queued(k2, kt_uk_timer(HOUR, 0, 1));
	close(k2);
	close(kfd);
}

KTEST(limits, one_batch_of_4095)
{
	kt_own_uid();
	kt_require_room(KEVENT_LIMIT_TIMERS, 4096);
	unsigned int max = kt_backend_info()->max_ctl_num;
	int kfd = kt_open(O_RDWR);
	struct ukevent *uk = calloc(4096, sizeof(*uk));

	cr_assert(uk);
	for (unsigned int i = 0; i < 4096; i++)
		uk[i] = kt_uk_timer(HOUR, 0, i);
	errno = 0;
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 4096, uk), -1, "a batch of 4096 was accepted");
	cr_assert(errno == EINVAL || (max < 4096 && errno == E2BIG), "4096 batch: %s", strerror(errno));
	cr_assert_eq(kt_queue_kevents(kfd), 0u, "a refused batch had an effect");
	int r = kevent_ctl(kfd, KEVENT_CTL_ADD, 4095, uk);
	if (max < 4095) {
		/* B4: above the path's maximum the call fails whole, before any effect. */
		cr_assert_eq(r, -1, "a batch of 4095 above max_ctl_num %u was accepted", max);
		cr_assert_eq(errno, E2BIG, "4095 above max_ctl_num %u: %s", max, strerror(errno));
		cr_assert_eq(kt_queue_kevents(kfd), 0u);
		r = kevent_ctl(kfd, KEVENT_CTL_ADD, max, uk);
		cr_assert_eq(r, 0, "a batch of max_ctl_num %u: %d (%s)", max, r, strerror(errno));
		cr_assert_eq(kt_queue_kevents(kfd), max);
	} else {
		cr_assert_eq(r, 0, "one batch of 4095: %d (%s)", r, r < 0 ? strerror(errno) : "-");
		cr_assert_eq(kt_queue_kevents(kfd), 4095u);
		/* REMOVE of all 4095 in one call, in place. */
		cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_REMOVE, 4095, uk), 0);
		for (unsigned int i = 0; i < 4095; i++)
			cr_assert_eq(uk[i].ret_flags, (__u32)KEVENT_RET_DONE, "entry %u ret_flags %#x", i,
				     uk[i].ret_flags);
		cr_assert_eq(kt_queue_kevents(kfd), 0u);
	}
	free(uk);
	close(kfd);
}

/* D12: max_nr above 4095 is clamped; at most 4095 (and max_get_nr) come back. */
KTEST(limits, get_returns_at_most_4095)
{
	kt_own_uid();
	kt_require_room(KEVENT_LIMIT_TIMERS, 4095);
	int kfd = kt_open(O_RDWR);
	unsigned int maxget = kt_backend_info()->max_get_nr;
	struct ukevent *out = calloc(5000, sizeof(*out));

	cr_assert(out);
	add_timers(kfd, 4095, 50, KEVENT_REQ_ONESHOT, 0);
	cr_assert(kt_wait_ready(kfd, 4095, 60000), "4095 timers of 50 ms not all ready within 60 s (%u)",
		  kt_queue_ready(kfd));
	int n = kt_get(kfd, 1, 5000, 0, out);
	unsigned int want = maxget < 4095 ? maxget : 4095;
	cr_assert_eq(n, (int)want, "GET_EVENTS with max_nr 5000 and 4095 ready returned %d, want %u", n,
		     want);
	unsigned int total = (unsigned int)n;
	while (total < 4095) {
		n = kt_get(kfd, 1, 5000, 0, out);
		cr_assert(n > 0, "only %u of 4095 came back", total);
		total += (unsigned int)n;
	}
	cr_assert_eq(total, 4095u);
	cr_assert_eq(kt_queue_kevents(kfd), 0u, "ONESHOT kevents stay after delivery");
	free(out);
	close(kfd);
}

/* The same 4095 limit holds for fd kevents (4095 poll kevents on one pipe). */
KTEST(limits, poll_kevents_4095_fire_together)
{
	kt_lock_backend();
	kt_own_uid();
	kt_require_room(KEVENT_LIMIT_FD_KEVENTS, 4095);
	int kfd = kt_open(O_RDWR), p[2];
	unsigned int max = kt_backend_info()->max_ctl_num, done = 0;
	struct ukevent *uk = calloc(4095, sizeof(*uk));

	cr_assert(uk);
	kt_pipe(p);
	for (unsigned int i = 0; i < 4095; i++)
		uk[i] = kt_uk_poll(p[0], KEVENT_POLL_POLLIN, 0, i);
	while (done < 4095) {
		unsigned int b = 4095 - done < max ? 4095 - done : max;
		int r = kevent_ctl(kfd, KEVENT_CTL_ADD, b, uk + done);

		cr_assert_eq(r, 0, "ADD of %u poll kevents at %u: %d (%s); first failed entry cookie %u ret_data[1] %d",
			     b, done, r, r < 0 ? strerror(errno) : "entries failed",
			     r > 0 ? uk[done].user[0] : 0, r > 0 ? (int)uk[done].ret_data[1] : 0);
		done += b;
	}
	struct ukevent more = kt_uk_poll(p[0], KEVENT_POLL_POLLIN, 0, 5000);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &more), -1);
	cr_assert_eq(errno, EINVAL);
	kt_write1(p[1]);
	cr_assert(kt_wait_ready(kfd, 4095, 60000), "4095 poll kevents: %u ready", kt_queue_ready(kfd));
	/* One wakeup: the order among them is the source's wait-queue order. */
	unsigned int total = 0;
	unsigned char *seen = calloc(4095, 1);
	cr_assert(seen);
	while (total < 4095) {
		int n = kt_get(kfd, 1, 4095, 0, uk);

		cr_assert(n > 0, "only %u of 4095 came back", total);
		for (int i = 0; i < n; i++) {
			cr_assert(uk[i].user[0] < 4095 && !seen[uk[i].user[0]], "cookie %u twice or unknown",
				  uk[i].user[0]);
			seen[uk[i].user[0]] = 1;
		}
		total += (unsigned int)n;
	}
	free(seen);
	cr_assert_eq(kt_queue_kevents(kfd), 4095u, "non-ONESHOT kevents must stay");
	free(uk);
	close(kfd);
}

/* D18: the per-uid queue cap: open() fails EMFILE (CUSE; the module has none). */
KTEST(limits, queue_cap_emfile)
{
	kt_own_uid();
	const struct kevent_limit *l = &kt_backend_info()->limits[KEVENT_LIMIT_QUEUES];
	struct rlimit rl;

	if (!l->cap)
		cr_skip_test("no per-uid queue cap on the %s backend (INFO cap 0)", kt_backend_name(kt_backend()));
	if (l->cap - l->used > 4000)
		cr_skip_test("per-uid queue cap %u too large to reach here", l->cap);
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	cr_assert(rl.rlim_cur > (rlim_t)(l->cap + 64), "RLIMIT_NOFILE %lu below the cap %u",
		  (unsigned long)rl.rlim_cur, l->cap);
	int *fds = calloc(l->cap + 1, sizeof(int)), n = 0, fd;
	cr_assert(fds);
	while ((fd = kt_try_open(O_RDWR)) >= 0 && n <= (int)l->cap)
		fds[n++] = fd;
	cr_assert(fd < 0, "opened %d queues with a cap of %u", n + 1, l->cap);
	cr_assert_eq(fd, -EMFILE, "open at the queue cap: %s", strerror(-fd));
	for (int i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
	/*
	 * Room again once the closed queues are released: FUSE sends RELEASE
	 * after close() returns, so the daemon may still count them for a
	 * while (bounded wait, 30 s).
	 */
	__u64 end = kt_now_ns() + KT_MS(30000);
	while ((fd = kt_try_open(O_RDWR)) == -EMFILE && kt_now_ns() < end)
		kt_sleep_ms(20);
	cr_assert(fd >= 0, "no room after closing every queue: %s", strerror(-fd));
	close(fd);
}

/*
 * The per-uid use of one limit once it stops moving: the queues of the test
 * before this one are released asynchronously (FUSE sends RELEASE after the
 * process is gone), so their kevents may still be counted for a while.
 */
static unsigned int settled_used(unsigned int limit)
{
	int fd = kt_open(O_RDWR);
	struct kevent_info a, b;
	__u64 end = kt_now_ns() + KT_MS(10000);

	kt_info(fd, &a);
	do {
		kt_sleep_ms(100);
		kt_info(fd, &b);
		if (b.limits[limit].used == a.limits[limit].used)
			break;
		a = b;
	} while (kt_now_ns() < end);
	close(fd);
	return b.limits[limit].used;
}

/* ---- D18: the per-uid kevent, timer, fd-kevent and mark caps (-ENOSPC) ---- */

static const char *const limit_name[KEVENT_LIMIT_NR] = {
	"queue", "kevent", "fd-kevent", "timer", "mark", "running", "parked", "expiry",
};

/* The queues one uid filled to a cap; inq: kevents on q[nq - 1]. */
struct cap_fill {
	unsigned int limit, cap, before, inq;
	int q[8], nq;
};

typedef struct ukevent (*kt_make_uk)(__u32 cookie, int fd);

/*
 * Skip unless the uid's cap on limit is there and reachable in up to five
 * full queues; then ADD kevents made by make (on fd) until the uid's use of
 * limit reaches the cap, topping up while a late release still frees charges.
 */
static void fill_to_cap(struct cap_fill *f, unsigned int limit, kt_make_uk make, int fd)
{
	unsigned int max = kt_backend_info()->max_ctl_num, used, added = 0;
	struct ukevent *uk;

	*f = (struct cap_fill){ .limit = limit, .cap = kt_backend_info()->limits[limit].cap, .inq = 4095 };
	if (!f->cap)
		cr_skip_test("no per-uid %s cap on the %s backend (INFO cap 0)", limit_name[limit],
			     kt_backend_name(kt_backend()));
	f->before = settled_used(limit);
	if (f->cap < f->before || f->cap - f->before > 5 * 4095)
		cr_skip_test("per-uid %s cap %u (used %u) too far to reach here", limit_name[limit], f->cap,
			     f->before);
	uk = calloc(4095, sizeof(*uk));
	cr_assert(uk);
	while ((used = settled_used(limit)) < f->cap) {
		for (unsigned int room = f->cap - used, b; room; room -= b, added += b, f->inq += b) {
			if (f->inq == 4095) {
				cr_assert(f->nq < 7, "cap %u not reached after %u ADDs (used %u)", f->cap, added,
					  used);
				f->q[f->nq++] = kt_open(O_RDWR);
				f->inq = 0;
			}
			b = room < max ? room : max;
			b = b < 4095 - f->inq ? b : 4095 - f->inq;
			for (unsigned int i = 0; i < b; i++)
				uk[i] = make(added + i, fd);
			int r = kevent_ctl(f->q[f->nq - 1], KEVENT_CTL_ADD, b, uk);
			cr_assert_eq(r, 0, "ADD of %u below cap %u (used %u): %d (%s); entry 0 ret_data[1] %d", b,
				     f->cap, used, r, r < 0 ? strerror(errno) : "some failed",
				     r > 0 ? (int)uk[0].ret_data[1] : 0);
		}
	}
	free(uk);
}

/* The queue with room for one more kevent (a new one when the last is full). */
static int fill_last_queue(struct cap_fill *f)
{
	if (f->inq == 4095) {
		f->q[f->nq++] = kt_open(O_RDWR);
		f->inq = 0;
	}
	return f->q[f->nq - 1];
}

/* D18: one ADD past the cap is that entry BROKEN|DONE with -ENOSPC, not queued. */
static void assert_past_cap(struct cap_fill *f, struct ukevent uk, const char *what)
{
	int kfd = fill_last_queue(f);
	unsigned int n = kt_queue_kevents(kfd);

	uk.ret_data[1] = 0;
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &uk), 1, "%s: an ADD past the per-uid cap %u queued",
		     what, f->cap);
	cr_assert_eq(uk.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE), "%s: ret_flags %#x", what,
		     uk.ret_flags);
	cr_assert_eq(uk.ret_data[1], (__u32)-ENOSPC, "%s past the cap: ret_data[1] %d", what,
		     (int)uk.ret_data[1]);
	cr_assert_eq(kt_queue_kevents(kfd), n, "%s: a refused ADD changed the queue", what);
}

/* Close the queues and wait (bounded) for their release, so the next test has room. */
static void fill_release(struct cap_fill *f)
{
	__u64 end = kt_now_ns() + KT_MS(10000);

	for (int i = 0; i < f->nq; i++)
		close(f->q[i]);
	while (settled_used(f->limit) > f->before && kt_now_ns() < end)
		kt_sleep_ms(100);
}

static struct ukevent make_timer(__u32 cookie, int fd)
{
	(void)fd;
	return kt_uk_timer(HOUR, 0, cookie);
}

static struct ukevent make_poll(__u32 cookie, int fd)
{
	return kt_uk_poll(fd, KEVENT_POLL_POLLIN, 0, cookie);
}

static struct ukevent make_inode(__u32 cookie, int fd)
{
	return kt_uk(KEVENT_INODE, (__u32)fd, 0, KEVENT_INODE_REMOVE, 0, cookie);
}

/* D18: the per-uid kevent or timer cap, whichever is nearer: -ENOSPC. */
KTEST(limits, kevent_cap_enospc)
{
	kt_own_uid();
	const struct kevent_limit *l = &kt_backend_info()->limits[KEVENT_LIMIT_TIMERS];
	const struct kevent_limit *k = &kt_backend_info()->limits[KEVENT_LIMIT_KEVENTS];
	unsigned int limit = l->cap && (!k->cap || l->cap - l->used <= k->cap - k->used) ?
			     KEVENT_LIMIT_TIMERS : KEVENT_LIMIT_KEVENTS;
	struct cap_fill f;

	fill_to_cap(&f, limit, make_timer, -1);
	assert_past_cap(&f, kt_uk_timer(HOUR, 0, 0xffff), "timer");
	fill_release(&f);
}

/*
 * D18: the per-uid cap on fd-holding kevents (POLL, SOCKET): -ENOSPC for
 * them, while a timer, another resource, is still accepted.
 */
KTEST(limits, fd_kevent_cap_enospc)
{
	kt_lock_backend();
	kt_own_uid();
	kt_require_feature(KEVENT_FEAT_FD_ORIGINS, "fd origins refused to this caller");
	struct cap_fill f;
	int p[2];

	kt_pipe(p);
	fill_to_cap(&f, KEVENT_LIMIT_FD_KEVENTS, make_poll, p[0]);
	assert_past_cap(&f, make_poll(0xffff, p[0]), "poll");
	int s[2];
	kt_socketpair(SOCK_STREAM, s);
	assert_past_cap(&f, kt_uk(KEVENT_SOCKET, (__u32)s[0], 0, KEVENT_SOCKET_RECV, 0, 0xfffe), "socket");
	kt_add_queued(fill_last_queue(&f), kt_uk_timer(HOUR, 0, 0xfffd));
	fill_release(&f);
	close(s[0]);
	close(s[1]);
	close(p[0]);
	close(p[1]);
}

/* D18: the per-uid cap on inode marks: -ENOSPC, while a timer is still accepted. */
KTEST(limits, mark_cap_enospc)
{
	kt_own_uid();
	kt_require_type(KEVENT_INODE);
	kt_require_feature(KEVENT_FEAT_FD_ORIGINS, "fd origins refused to this caller");
	char path[] = "/tmp/kt-marks-XXXXXX";
	int fd = mkstemp(path);
	struct cap_fill f;

	cr_assert(fd >= 0, "mkstemp: %s", strerror(errno));
	fill_to_cap(&f, KEVENT_LIMIT_MARKS, make_inode, fd);
	assert_past_cap(&f, make_inode(0xffff, fd), "inode");
	kt_add_queued(fill_last_queue(&f), kt_uk_timer(HOUR, 0, 0xfffd));
	fill_release(&f);
	unlink(path);
	close(fd);
}

/* ---- D18: the parked-call cap (EAGAIN) and B7: the expiry budget ---- */

static int pk_kfd;
static int pk_ret[1024];

static void *parked_get(void *arg)
{
	struct ukevent out;
	int n = kevent_get_events(pk_kfd, 1, 1, KT_MS(120000), &out, 0);

	pk_ret[(intptr_t)arg] = n < 0 ? -errno : n;
	return NULL;
}

static unsigned int parked_used(int fd)
{
	struct kevent_info i;

	kt_info(fd, &i);
	return i.limits[KEVENT_LIMIT_PARKED].used;
}

/*
 * With the uid's parked calls at the cap, one more GET_EVENTS that would
 * wait fails EAGAIN at once (the guest-yama boot runs the daemon with
 * --max-parked=256); one that need not wait still works.
 */
KTEST(limits, parked_cap_eagain)
{
	kt_own_uid();
	unsigned int cap = kt_backend_info()->limits[KEVENT_LIMIT_PARKED].cap, n;
	pthread_t t[1024];
	struct ukevent out[1];
	int probe;

	if (!cap)
		cr_skip_test("no per-uid parked-call cap on the %s backend (INFO cap 0)",
			     kt_backend_name(kt_backend()));
	if (cap > 1024)
		cr_skip_test("per-uid parked cap %u too large to reach here (the guest-yama boot has 256)",
			     cap);
	probe = kt_open(O_RDWR);
	pk_kfd = kt_open(O_RDWR);
	n = cap - parked_used(probe);
	for (unsigned int i = 0; i < n; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, parked_get, (void *)(intptr_t)i), 0);
	__u64 end = kt_now_ns() + KT_MS(30000);
	while (parked_used(probe) < cap && kt_now_ns() < end)
		kt_sleep_ms(20);
	cr_assert_eq(parked_used(probe), cap, "the callers did not all park");
	/*
	 * A call that waited would end at its timeout with 0 events; the
	 * refusal is -1 EAGAIN without waiting.  The timeout is long (60 s)
	 * so that a loaded machine's delay is never mistaken for a wait: only
	 * a call that sat out the whole timeout fails the time check.
	 */
	__u64 t0 = kt_now_ns();
	cr_assert_eq(kevent_get_events(probe, 1, 1, KT_MS(60000), out, 0), -1,
		     "a call past the parked cap %u waited", cap);
	cr_assert_eq(errno, EAGAIN, "past the parked cap: %s", strerror(errno));
	cr_assert(kt_now_ns() - t0 < KT_MS(60000), "EAGAIN came only after the 60 s timeout");
	cr_assert_eq(kt_get(probe, 0, 1, 0, out), 0, "a call that need not wait failed at the cap");
	for (unsigned int i = 0; i < n; i++)
		kt_add_queued(pk_kfd, kt_uk_timer(1, KEVENT_REQ_ONESHOT, i));
	for (unsigned int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		cr_assert_eq(pk_ret[i], 1, "parked caller %u: %d", i, pk_ret[i]);
	}
	close(pk_kfd);
	close(probe);
}

/* ---- D18: the running-request cap (EAGAIN) ---- */

struct stuck_ctl {
	int kfd, ret, err;
	struct ukevent *uk;
};

static void *stuck_ctl_run(void *arg)
{
	struct stuck_ctl *s = arg;

	/* The test's own INFO may hold the last slot for a moment: retry. */
	for (int tries = 0; tries < 5000; tries++) {
		s->ret = kevent_ctl(s->kfd, KEVENT_CTL_ADD, 1, s->uk);
		s->err = errno;
		if (s->ret >= 0 || s->err != EAGAIN)
			break;
		kt_sleep_ms(1);
	}
	return NULL;
}

/* A page whose first touch waits until uffd_fill(); -errno when there is no userfaultfd. */
static int uffd_page(void **page, long psize)
{
	int uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };

	if (uffd < 0)
		return -errno;
	*page = mmap(NULL, (size_t)psize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert(*page != MAP_FAILED);
	reg.range = (struct uffdio_range){ (uintptr_t)*page, (__u64)psize };
	cr_assert_eq(ioctl(uffd, UFFDIO_API, &api), 0, "UFFDIO_API: %s", strerror(errno));
	cr_assert_eq(ioctl(uffd, UFFDIO_REGISTER, &reg), 0, "UFFDIO_REGISTER: %s", strerror(errno));
	return uffd;
}

/*
 * Resolve the page with src, then close uffd: every access waiting on it
 * goes on (after a failed copy, closing fails them with EFAULT instead).
 * 0 or -errno of the copy; asserts nothing, see running_cap_eagain.
 */
static int uffd_fill_close(int uffd, void *page, const void *src, long psize)
{
	struct uffdio_copy c = { .dst = (uintptr_t)page, .src = (uintptr_t)src, .len = (__u64)psize };
	int r = ioctl(uffd, UFFDIO_COPY, &c) ? -errno : 0;

	close(uffd);
	return r;
}

/*
 * With the uid's running requests at the cap, every further ioctl of that
 * uid fails EAGAIN at once.  The cap's worth of ADDs are held running: their
 * array sits in a userfaultfd page that the daemon's process_vm_readv waits
 * on until the test fills it.  No assertion may end the test while they are
 * held: the held threads wait uninterruptibly for the daemon, whose workers
 * wait on the page until its userfaultfd is closed, which the exit of a
 * process with those threads never does.  So it checks after releasing.
 */
KTEST(limits, running_cap_eagain)
{
	unsigned int cap = kt_backend_info()->limits[KEVENT_LIMIT_RUNNING].cap, started = 0;
	long psize = sysconf(_SC_PAGESIZE);
	struct stuck_ctl s[64];
	pthread_t t[64];
	struct kevent_info info;
	void *page = NULL, *src;
	int r = 0, more_ret, more_err, fill;

	if (!cap)
		cr_skip_test("no per-uid running-request cap on the %s backend (INFO cap 0)",
			     kt_backend_name(kt_backend()));
	if (cap > 64)
		cr_skip_test("per-uid running cap %u too large to reach here", cap);
	/* The cap's worth of held ADDs hold as many of the daemon's workers. */
	kt_lock_backend();
	/* The userfaultfd as root, before the uid of its own has no privilege for one. */
	int uffd = uffd_page(&page, psize);
	if (uffd < 0)
		cr_skip_test("userfaultfd: %s (needs root or vm.unprivileged_userfaultfd)", strerror(-uffd));
	kt_own_uid();
	kt_require_feature(KEVENT_FEAT_PROCESS_VM, "only a worker reading the array itself can be held "
			   "running; on the retry path the kernel copies it in the caller");
	src = aligned_alloc((size_t)psize, (size_t)psize);
	cr_assert(src);
	memset(src, 0, (size_t)psize);
	*(struct ukevent *)src = kt_uk_timer(HOUR, 0, 7);
	int kfd = kt_open(O_RDWR);
	for (; started < cap; started++) {
		s[started] = (struct stuck_ctl){ .kfd = kfd, .uk = page };
		if (pthread_create(&t[started], NULL, stuck_ctl_run, &s[started]))
			break;
	}
	/* INFO is a request too: it fails EAGAIN once all cap ADDs are running. */
	for (__u64 end = kt_now_ns() + KT_MS(20000); started == cap && kt_now_ns() < end; kt_sleep_ms(20))
		if ((r = kt_ioctl(kfd, KEVENT_IOC_INFO, &info)) != 0)
			break;
	struct ukevent more = kt_uk_timer(HOUR, 0, 0xffff);
	more_ret = kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &more);
	more_err = errno;
	fill = uffd_fill_close(uffd, page, src, psize);
	for (unsigned int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	free(src);
	cr_assert_eq(started, cap, "started %u of %u threads", started, cap);
	cr_assert_eq(fill, 0, "UFFDIO_COPY: %s", strerror(-fill));
	cr_assert_eq(r, -EAGAIN, "INFO with %u ADDs held running: %d (%s)", cap, r, strerror(-r));
	cr_assert_eq(more_ret, -1, "an ADD past the running cap %u ran", cap);
	cr_assert_eq(more_err, EAGAIN, "past the running cap: %s", strerror(more_err));
	for (unsigned int i = 0; i < cap; i++)
		cr_assert_eq(s[i].ret, 0, "held ADD %u: %d (%s)", i, s[i].ret, strerror(s[i].err));
	cr_assert_eq(kt_queue_kevents(kfd), cap, "the held ADDs did not all register");
	close(kfd);
}

struct held_write {
	int fd;
	void *page;
	ssize_t ret;
};

/* A write whose source is the userfaultfd page: it waits in the copy, inside the pipe's mutex. */
static void *held_write_run(void *arg)
{
	struct held_write *h = arg;

	h->ret = write(h->fd, h->page, 1);
	return NULL;
}

struct parked_get {
	int kfd;
	int ret;
	struct ukevent uk[2];
};

static void *parked_get_run(void *arg)
{
	struct parked_get *g = arg;

	g->ret = kt_get(g->kfd, 2, 2, KT_MS(120000), g->uk);
	return NULL;
}

/*
 * The other uid: a timer of 1 s and a GET_EVENTS that waits for it, as
 * root, in a child of its own; writes the milliseconds it took (or -errno).
 * No assertion here: the child reports, the test asserts.
 */
static void other_uid_run(int go, int res)
{
	struct ukevent uk = kt_uk_timer(1000, KEVENT_REQ_ONESHOT, 9), got;
	int kfd = open(kt_device(), O_RDWR | O_CLOEXEC), r = -1;
	char c;
	__u64 t0;

	if (read(go, &c, 1) == 1 && kfd >= 0) {
		t0 = kt_now_ns();
		r = kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &uk) < 0 ? -errno
		    : kevent_get_events(kfd, 1, 1, KT_MS(60000), &got, 0) != 1 ? -ETIME
		    : (int)((kt_now_ns() - t0) / 1000000);
	}
	if (write(res, &r, sizeof(r)) != sizeof(r))
		_exit(1);
	_exit(0);
}

/*
 * abi.md O11, design.md B3: revision 4's counts (D67) are read from the
 * source, and a pipe's FIONREAD waits for the pipe's mutex, which a client
 * holds as long as it likes inside its own write() (its buffer a
 * userfaultfd page).  A parked GET_EVENTS made due on the daemon's core
 * worker (a timer's expiry) must not read its count there: the worker
 * serves every uid.  Here the held count is this test's uid's, and another
 * uid's timer must still end its own parked call on time.  The module
 * counts without the mutex (abi.md section 9).  Nothing is asserted while
 * the write is held (running_cap_eagain says why).
 */
KTEST_REVS(limits, a_count_held_by_its_client_delays_only_its_uid, 4, KTEST_OPEN)
{
	long psize = sysconf(_SC_PAGESIZE);
	struct held_write h = { 0 };
	struct parked_get g = { 0 };
	pthread_t th, tg;
	struct pollfd pf;
	int go[2], res[2], p[2], other = -2, faulted, fill, status;
	void *page = NULL, *src;
	pid_t pid;

	int uffd = uffd_page(&page, psize);
	if (uffd < 0)
		cr_skip_test("userfaultfd: %s (needs root or vm.unprivileged_userfaultfd)", strerror(-uffd));
	cr_assert_eq(pipe2(go, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(res, O_CLOEXEC), 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0)
		other_uid_run(go[0], res[0] < 0 ? -1 : res[1]);
	kt_own_uid();
	src = aligned_alloc((size_t)psize, (size_t)psize);
	cr_assert(src);
	memset(src, 'y', (size_t)psize);
	g.kfd = kt_open(O_RDWR);
	kt_pipe(p);
	kt_add_queued(g.kfd, kt_uk_poll(p[0], KEVENT_POLL_POLLIN, 0, 1));
	cr_assert_eq(pthread_create(&tg, NULL, parked_get_run, &g), 0);
	kt_await_parked(g.kfd, 1, 10000);
	cr_assert_eq(write(p[1], "x", 1), 1);
	cr_assert(kt_wait_ready(g.kfd, 1, 10000), "the pipe's byte fired (1 of the 2 the call waits for)");
	h = (struct held_write){ .fd = p[1], .page = page };
	cr_assert_eq(pthread_create(&th, NULL, held_write_run, &h), 0);
	/* From here until the release, no assertion (see above). */
	pf = (struct pollfd){ .fd = uffd, .events = POLLIN };
	faulted = poll(&pf, 1, 10000);
	struct ukevent t = kt_uk_timer(100, KEVENT_REQ_ONESHOT, 2);
	int added = kevent_ctl(g.kfd, KEVENT_CTL_ADD, 1, &t);
	/* The 100 ms timer makes the parked call due on the worker; 1 s later the other uid's. */
	if (write(go[1], "g", 1) == 1) {
		pf = (struct pollfd){ .fd = res[0], .events = POLLIN };
		if (poll(&pf, 1, 20000) == 1 && read(res[0], &other, sizeof(other)) != sizeof(other))
			other = -3;
	}
	fill = uffd_fill_close(uffd, page, src, psize);
	pthread_join(th, NULL);
	pthread_join(tg, NULL);
	waitpid(pid, &status, 0);
	free(src);
	cr_assert_eq(faulted, 1, "the held write never faulted on its userfaultfd page");
	cr_assert_eq(added, 0, "the 100 ms timer's ADD: %s", strerror(errno));
	cr_assert_eq(fill, 0, "UFFDIO_COPY: %s", strerror(-fill));
	cr_assert_eq(h.ret, 1, "the held write, once released");
	cr_assert(other >= 0, "the other uid's 1 s timer did not end its parked call within 20 s while "
		  "this uid's count waited on the pipe's mutex (%d): a shared thread waited (B3, O11)",
		  other);
	cr_assert_eq(g.ret, 2, "the parked call of this uid: %d", g.ret);
	for (int i = 0; i < 2; i++)
		if (g.uk[i].type == KEVENT_POLL)
			cr_assert(g.uk[i].ret_data[1] >= 1, "D67: the count, read after the release: %u",
				  g.uk[i].ret_data[1]);
	close(p[0]);
	close(p[1]);
	close(g.kfd);
}

/*
 * B7: 20 periodic 1 ms timers ask for 20,000 expiries a second; over the
 * uid's budget the excess merges (no error, the kevents stay), so what one
 * second delivers stays near the budget (the guest-yama boot runs the
 * daemon with --max-expiries=200).  The budget is a rate, so time is the
 * rule's own: the bound is the budget of every 100 ms window the run
 * touched, counted from the clock after the run (a loaded machine that
 * makes the run longer raises the bound with it), and the floor is one
 * window's worth, which the first GET_EVENTS of 20 ready timers meets.
 */
KTEST(limits, expiry_budget_merges)
{
	kt_own_uid();
	unsigned int cap = kt_backend_info()->limits[KEVENT_LIMIT_EXPIRIES].cap, got = 0;
	struct ukevent out[64];
	struct kevent_info info;
	int kfd, n;

	if (!cap)
		cr_skip_test("no per-uid expiry budget on the %s backend (INFO cap 0)",
			     kt_backend_name(kt_backend()));
	if (cap > 2000)
		cr_skip_test("expiry budget %u/s too large to reach here (the guest-yama boot has 200)",
			     cap);
	kt_require_room(KEVENT_LIMIT_TIMERS, 20);
	kfd = kt_open(O_RDWR);
	__u64 t0 = kt_now_ns(), end = t0 + KT_MS(1000);
	add_timers(kfd, 20, 1, 0, 0);
	while (kt_now_ns() < end) {
		n = kt_get(kfd, 1, 64, KT_MS(200), out);
		for (int i = 0; i < n; i++)
			cr_assert_eq(out[i].ret_flags & KEVENT_RET_BROKEN, 0, "an expiry over budget broke");
		got += (unsigned int)n;
	}
	/* The 100 ms windows the run touched, partial ones at both ends included. */
	unsigned int windows = (unsigned int)((kt_now_ns() - t0) / KT_MS(100)) + 2;
	kt_info(kfd, &info);
	cr_assert_leq(info.limits[KEVENT_LIMIT_EXPIRIES].used, cap);
	cr_assert_leq(got, windows * (cap / 10 ? cap / 10 : 1),
		      "%u expiries in %u windows of 100 ms with a budget of %u/s", got, windows, cap);
	cr_assert_geq(got, cap / 10, "the budget granted %u expiries in 1 s", got);
	cr_assert_eq(kt_queue_kevents(kfd), 20u, "a timer over budget was removed");
	close(kfd);
}
