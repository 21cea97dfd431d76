// SPDX-License-Identifier: GPL-2.0
/*
 * Sharing a queue: fork and threads, several parked waiters (D16, D32),
 * close while another thread waits (D17), close with kevents pending,
 * independent queues, another uid (setuid nobody) kept out (B5), and the
 * ring's 16-uid grant list (abi.md 7.5).
 */
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ktest.h"

/* Run fn in a forked child; assert it exits 0 (a failure message on stderr). */
static void in_child(int (*fn)(void *), void *arg, const char *what)
{
	pid_t pid = fork();

	cr_assert(pid >= 0);
	if (pid == 0)
		_exit(fn(arg));
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st), "%s: child died (signal %d)", what, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	cr_assert_eq(WEXITSTATUS(st), 0, "%s: child failed at step %d", what, WEXITSTATUS(st));
}

struct fork_arg {
	int kfd, wfd;
};

static int child_adds(void *a)
{
	struct fork_arg *f = a;
	struct ukevent uk[2] = { kt_uk_timer(50, KEVENT_REQ_ONESHOT, 21),
				 kt_uk_poll(f->wfd, KEVENT_POLL_POLLERR, 0, 22) };

	if (kevent_ctl(f->kfd, KEVENT_CTL_ADD, 2, uk) != 0)
		return 1;
	return 0;
}

/* A forked child shares the queue: its kevents are the parent's. */
KTEST(share, fork_shares_queue)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent out[4];
	struct fork_arg f;

	kt_require_feature(KEVENT_FEAT_FD_ORIGINS, "the child ADDs a POLL kevent");
	kt_pipe(p);
	f.kfd = kfd;
	f.wfd = p[1];
	in_child(child_adds, &f, "child ADD");
	cr_assert_eq(kt_queue_kevents(kfd), 2u, "the child's kevents are not on the shared queue");
	cr_assert_eq(kt_get(kfd, 1, 4, KT_MS(5000), out), 1);
	cr_assert_eq(out[0].user[0], 21u);
	/* The child's poll kevent holds the child's duplicate of p[1] (A7): close ours. */
	close(p[1]);
	cr_assert_eq(kt_poll1(p[0], POLLIN, 200), 0, "EOF while the child's kevent holds the file");
	struct ukevent r = kt_uk_poll(p[1], KEVENT_POLL_POLLERR, 0, 22);
	kt_remove(kfd, r);
	cr_assert(kt_poll1(p[0], POLLIN, 10000) & POLLHUP);
	close(kfd);
}

static int child_gets(void *a)
{
	int kfd = *(int *)a;
	struct ukevent out[2];

	if (kevent_get_events(kfd, 1, 2, KT_MS(10000), out, 0) != 1)
		return 1;
	if (out[0].user[0] != 31u)
		return 2;
	return 0;
}

KTEST(share, child_dequeues_parent_event)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent out[2];

	kt_add_queued(kfd, kt_uk_timer(50, KEVENT_REQ_ONESHOT, 31));
	in_child(child_gets, &kfd, "child GET_EVENTS");
	cr_assert_eq(kt_get(kfd, 0, 2, 0, out), 0, "an event the child took is still there");
	cr_assert_eq(kt_queue_kevents(kfd), 0u);
	close(kfd);
}

/* The child's exit (its close of the shared fd) leaves the queue alone. */
static int child_closes(void *a)
{
	close(*(int *)a);
	return 0;
}

KTEST(share, child_close_keeps_queue)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent out[2];

	kt_add_queued(kfd, kt_uk_timer(100, KEVENT_REQ_ONESHOT, 1));
	in_child(child_closes, &kfd, "child close");
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	cr_assert_eq(kt_get(kfd, 1, 2, KT_MS(5000), out), 1);
	close(kfd);
}

/* Threads: many ADD and GET concurrently on one queue; nothing lost or doubled. */
enum { NTH = 4, PER = 50 };
static int th_kfd;
static int th_fail, th_errno, th_eagain, th_adders_done;
static unsigned int th_seen[NTH * PER];

static void *th_adder(void *arg)
{
	int t = (int)(intptr_t)arg;

	for (int i = 0; i < PER; i++) {
		struct ukevent uk = kt_uk_timer(1 + (unsigned)(i % 5), KEVENT_REQ_ONESHOT,
						(__u32)(t * PER + i));
		int r, tries = 0;

		/* D18: EAGAIN at the per-uid cap of running requests; retry. */
		while ((r = kevent_ctl(th_kfd, KEVENT_CTL_ADD, 1, &uk)) < 0 && errno == EAGAIN &&
		       tries++ < 1000) {
			__atomic_fetch_add(&th_eagain, 1, __ATOMIC_RELAXED);
			kt_sleep_ms(1);
		}
		if (r != 0) {
			__atomic_store_n(&th_errno, r < 0 ? errno : -(int)uk.ret_data[1], __ATOMIC_RELAXED);
			__atomic_store_n(&th_fail, 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

static void *th_getter(void *arg)
{
	struct ukevent out[16];

	for (int tries = 0;;) {
		int n = kevent_get_events(th_kfd, 1, 16, KT_MS(2000), out, 0);

		/*
		 * D18: GET_EVENTS counts as a running request too, and a thread's
		 * next call may arrive before the daemon uncharged its last one.
		 */
		if (n < 0 && errno == EAGAIN && tries++ < 1000) {
			__atomic_fetch_add(&th_eagain, 1, __ATOMIC_RELAXED);
			kt_sleep_ms(1);
			continue;
		}
		if (n < 0) {
			__atomic_store_n(&th_errno, errno, __ATOMIC_RELAXED);
			__atomic_store_n(&th_fail, 3, __ATOMIC_RELAXED);
			return NULL;
		}
		/* Stop only once every ADD is done and 2 s passed without an event. */
		if (n == 0 && __atomic_load_n(&th_adders_done, __ATOMIC_ACQUIRE))
			return NULL;
		tries = 0;
		for (int k = 0; k < n; k++) {
			if (out[k].user[0] >= NTH * PER)
				__atomic_store_n(&th_fail, 2, __ATOMIC_RELAXED);
			else
				__atomic_fetch_add(&th_seen[out[k].user[0]], 1, __ATOMIC_RELAXED);
		}
	}
}

KTEST(share, threads_share_queue)
{
	pthread_t add[NTH], get[NTH];

	th_kfd = kt_open(O_RDWR);
	for (int t = 0; t < NTH; t++)
		cr_assert_eq(pthread_create(&get[t], NULL, th_getter, NULL), 0);
	for (int t = 0; t < NTH; t++)
		cr_assert_eq(pthread_create(&add[t], NULL, th_adder, (void *)(intptr_t)t), 0);
	for (int t = 0; t < NTH; t++)
		pthread_join(add[t], NULL);
	__atomic_store_n(&th_adders_done, 1, __ATOMIC_RELEASE);
	for (int t = 0; t < NTH; t++)
		pthread_join(get[t], NULL);
	cr_assert_eq(th_fail, 0, "a thread failed (%d): %s (EAGAIN retries %d, running cap %u)", th_fail,
		     strerror(th_errno), th_eagain, kt_backend_info()->limits[KEVENT_LIMIT_RUNNING].cap);
	for (int i = 0; i < NTH * PER; i++)
		cr_assert_eq(th_seen[i], 1u, "event %d delivered %u times", i, th_seen[i]);
	cr_assert_eq(kt_queue_kevents(th_kfd), 0u);
	close(th_kfd);
}

/* D16: parked waiters are served in arrival order. */
struct waiter {
	int kfd;
	unsigned int min_nr, max_nr;
	int ret;
	__u32 cookie[4];
	volatile int done;
};

static void *waiter_fn(void *arg)
{
	struct waiter *w = arg;
	struct ukevent out[4];

	w->ret = kevent_get_events(w->kfd, w->min_nr, w->max_nr, KT_MS(30000), out, 0);
	for (int k = 0; k < w->ret && k < 4; k++)
		w->cookie[k] = out[k].user[0];
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int is_done(struct waiter *w)
{
	return __atomic_load_n(&w->done, __ATOMIC_ACQUIRE);
}

/*
 * Three pipes watched for POLLIN (cookies 0..2), then a parked, then b.
 * The waits for parked calls are bounded at PARK_MS only so that a lost call
 * fails rather than hangs: an ASan daemon beside a guest boot and stress-ng
 * on two cores once showed no parked call within 10 s.
 */
#define PARK_MS 30000
static void park_a_then_b(int kfd, int p[3][2], struct waiter *a, pthread_t *ta,
			  struct waiter *b, pthread_t *tb)
{
	for (int i = 0; i < 3; i++) {
		kt_pipe(p[i]);
		kt_add_queued(kfd, kt_uk_poll(p[i][0], KEVENT_POLL_POLLIN, 0, (__u32)i));
	}
	cr_assert_eq(pthread_create(ta, NULL, waiter_fn, a), 0);
	kt_await_parked(kfd, 1, PARK_MS);
	cr_assert_eq(pthread_create(tb, NULL, waiter_fn, b), 0);
	kt_await_parked(kfd, 2, PARK_MS);
}

KTEST(share, waiters_arrival_order)
{
	int kfd = kt_open(O_RDWR), p[3][2];
	struct waiter a = { .kfd = kfd, .min_nr = 1, .max_nr = 1 };
	struct waiter b = { .kfd = kfd, .min_nr = 1, .max_nr = 1 };
	pthread_t ta, tb;

	park_a_then_b(kfd, p, &a, &ta, &b, &tb);
	kt_write1(p[0][1]);
	__u64 end = kt_now_ns() + KT_MS(10000);
	while (!is_done(&a) && kt_now_ns() < end)
		kt_sleep_ms(2);
	cr_assert(is_done(&a), "the oldest waiter was not served first (D16)");
	cr_assert_eq(a.ret, 1);
	cr_assert_eq(a.cookie[0], 0u);
	kt_await_parked(kfd, 1, PARK_MS);	/* b still parked, not on its way out */
	kt_sleep_ms(200);	/* the subject: b stays parked with nothing ready */
	cr_assert(!is_done(&b), "the second waiter returned (%d) with nothing left for it", b.ret);
	kt_write1(p[1][1]);
	pthread_join(tb, NULL);
	pthread_join(ta, NULL);
	cr_assert_eq(b.ret, 1);
	cr_assert_eq(b.cookie[0], 1u);
	close(kfd);
}

/* D16: the oldest waiter whose min_nr is met, not simply the oldest. */
KTEST(share, waiters_min_nr_met_first)
{
	int kfd = kt_open(O_RDWR), p[3][2];
	struct waiter a = { .kfd = kfd, .min_nr = 2, .max_nr = 4 };
	struct waiter b = { .kfd = kfd, .min_nr = 1, .max_nr = 4 };
	pthread_t ta, tb;

	park_a_then_b(kfd, p, &a, &ta, &b, &tb);
	kt_write1(p[0][1]);
	pthread_join(tb, NULL);
	cr_assert_eq(b.ret, 1, "the waiter with min_nr 1 got %d", b.ret);
	cr_assert_eq(b.cookie[0], 0u);
	cr_assert(!is_done(&a), "the min_nr 2 waiter returned (%d) with one event", a.ret);
	kt_write1(p[1][1]);
	cr_assert(kt_wait_ready(kfd, 1, 10000), "the second pipe's kevent did not become ready");
	cr_assert_eq(kt_queue_parked(kfd), 1u, "the min_nr 2 waiter left with one ready");
	cr_assert(!is_done(&a), "the min_nr 2 waiter returned with one ready (%d)", a.ret);
	kt_write1(p[2][1]);
	pthread_join(ta, NULL);
	cr_assert_eq(a.ret, 2, "min_nr 2 waiter: %d", a.ret);
	close(kfd);
}

/* D32: every poll() watcher is woken. */
static int pw_kfd;
static int pw_re[3];
static pid_t pw_tid[3];

static void *poll_watcher(void *arg)
{
	int i = (int)((int *)arg - pw_re);

	__atomic_store_n(&pw_tid[i], kt_gettid(), __ATOMIC_RELEASE);
	*(int *)arg = kt_poll1(pw_kfd, POLLIN, 20000);
	return NULL;
}

KTEST(share, every_poller_woken)
{
	pthread_t t[3];
	int *re = pw_re;

	pw_kfd = kt_open(O_RDWR);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, poll_watcher, &re[i]), 0);
	for (int i = 0; i < 3; i++) {
		while (!__atomic_load_n(&pw_tid[i], __ATOMIC_ACQUIRE))
			sched_yield();
		kt_await_in_poll(pw_tid[i], "a poll() watcher");
	}
	kt_add_queued(pw_kfd, kt_uk_timer(50, KEVENT_REQ_ONESHOT, 1));
	for (int i = 0; i < 3; i++) {
		pthread_join(t[i], NULL);
		cr_assert(re[i] & POLLIN, "poller %d not woken (revents %#x)", i, re[i]);
	}
	close(pw_kfd);
}

/* D17: close() while another thread is blocked: that call completes normally. */
/*
 * The timer must fire after the call parked and its queue was closed.  A
 * loaded machine may take longer than the timer to park the call, which
 * then just takes the event: that round proves nothing, and the next one
 * tries with a timer four times longer (500 ms, 2 s, 8 s).
 */
KTEST(share, close_while_blocked)
{
	for (unsigned int ms = 500;; ms *= 4) {
		int kfd = kt_open(O_RDWR);
		struct waiter w = { .kfd = kfd, .min_nr = 1, .max_nr = 2 };
		bool parked = false;
		pthread_t t;
		__u64 end;

		kt_add_queued(kfd, kt_uk_timer(ms, KEVENT_REQ_ONESHOT, 77));
		cr_assert_eq(pthread_create(&t, NULL, waiter_fn, &w), 0);
		/* What the loop saw: the timer may end a parked call before a second look. */
		for (end = kt_now_ns() + KT_MS(10000); kt_now_ns() < end; kt_sleep_ms(2))
			if (is_done(&w) || (parked = kt_queue_parked(kfd) >= 1))
				break;
		if (!parked && is_done(&w) && ms < 8000) {
			pthread_join(t, NULL);
			close(kfd);
			continue;
		}
		cr_assert(parked || is_done(&w), "the call never parked in 10 s");
		close(kfd);
		pthread_join(t, NULL);
		cr_assert_eq(w.ret, 1, "the blocked call after close(): %d (%s)", w.ret,
			     w.ret < 0 ? strerror(errno) : "-");
		cr_assert_eq(w.cookie[0], 77u, "the queue was released under the blocked call");
		break;
	}
}

/* Close with kevents pending (ready and waiting): later queues are clean. */
KTEST(share, close_with_pending)
{
	int p[2];

	kt_pipe(p);
	for (int round = 0; round < 3; round++) {
		int kfd = kt_open(O_RDWR);
		for (int i = 0; i < 20; i++) {
			kt_add_queued(kfd, kt_uk_timer(1 + (unsigned)i, i & 1 ? KEVENT_REQ_ONESHOT : 0, (__u32)i));
			kt_add_queued(kfd, kt_uk_poll(p[0], KEVENT_POLL_POLLIN, 0, 100u + (unsigned)i));
		}
		kt_write1(p[1]);
		cr_assert(kt_wait_ready(kfd, 20, 5000));
		close(kfd);
		kt_read_all(p[0]);
	}
	int kfd = kt_open(O_RDWR);
	struct kevent_info i;
	kt_info(kfd, &i);
	cr_assert_eq(i.queue_kevents, 0u);
	cr_assert_eq(i.queue_ready, 0u);
	kt_write1(p[1]);
	struct ukevent out[4];
	cr_assert_eq(kt_get(kfd, 1, 4, KT_MS(200), out), 0, "a closed queue's kevent reached a new queue");
	close(kfd);
}

KTEST(share, queues_independent)
{
	int k1 = kt_open(O_RDWR), k2 = kt_open(O_RDWR);
	struct ukevent t = kt_uk_timer(50, KEVENT_REQ_ONESHOT, 5), out[2];

	kt_add_queued(k1, t);
	cr_assert_eq(kt_queue_kevents(k2), 0u);
	struct ukevent r = t;
	cr_assert_eq(kevent_ctl(k2, KEVENT_CTL_REMOVE, 1, &r), -1, "REMOVE on an empty queue: num > kevent_num");
	kt_add_queued(k2, kt_uk_timer(3600000, 0, 6));
	r = t;
	kt_ctl1(k2, KEVENT_CTL_REMOVE, &r, 0);
	cr_assert_eq(r.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE), "REMOVE matched another queue's kevent");
	cr_assert_eq(kt_get(k2, 1, 2, KT_MS(300), out), 0, "another queue's event arrived");
	cr_assert_eq(kt_get(k1, 1, 2, KT_MS(5000), out), 1);
	close(k1);
	close(k2);
}

/* O_RDONLY opens work for every ioctl (2.9). */
KTEST(share, rdonly_queue_works)
{
	int kfd = kt_open(O_RDONLY);
	struct ukevent out[2];

	kt_add_queued(kfd, kt_uk_timer(30, KEVENT_REQ_ONESHOT, 1));
	cr_assert_eq(kt_get(kfd, 1, 2, KT_MS(5000), out), 1);
	close(kfd);
}

/* Another uid cannot reach this queue: not its kevents, not its ring (B5). */
struct uid_arg {
	char shm[112];
	__u32 cookie;
};

static int child_as_nobody(void *a)
{
	struct uid_arg *u = a;

	if (setgroups(0, NULL) != 0 || setgid(KT_NOBODY) != 0 || setuid(KT_NOBODY) != 0)
		return 10;
	if (u->shm[0]) {
		int f = open(u->shm, O_RDONLY | O_CLOEXEC);
		if (f >= 0)
			return 11;	/* another uid read the ring object */
		if (errno != EACCES && errno != EPERM)
			return 12;
	}
	int kfd = kt_try_open(O_RDWR);
	if (kfd < 0)
		return kfd == -EACCES || kfd == -EPERM ? 0 : 13;
	struct ukevent out[4], uk = kt_uk_timer(3600000, 0, u->cookie);
	if (kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &uk) != 0)
		return 14;
	uk = kt_uk_timer(3600000, 0, u->cookie);
	uk.id.raw[0] = 40;
	if (kevent_ctl(kfd, KEVENT_CTL_REMOVE, 1, &uk) != 0 || !(uk.ret_flags & KEVENT_RET_BROKEN))
		return 15;	/* matched the other uid's kevent */
	if (kevent_get_events(kfd, 1, 4, KT_MS(300), out, 0) != 0)
		return 16;	/* got the other uid's event */
	close(kfd);
	return 0;
}

KTEST(share, other_uid_kept_out)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to setuid(nobody) in a child (running as uid %d)", (int)geteuid());
	int kfd = kt_open(O_RDWR);
	struct uid_arg u = { .cookie = 9 };
	struct ukevent out[2];

	kt_add_queued(kfd, kt_uk_timer(40, KEVENT_REQ_ONESHOT, 9));
	if (kt_backend() == KEVENT_BACKEND_CUSE) {
		struct kevent_ring_shm shm;
		memset(&shm, 0, sizeof(shm));
		cr_assert_eq(kt_ioctl(kfd, KEVENT_IOC_RING_SHM, &shm), 0);
		memcpy(u.shm, shm.path, sizeof(u.shm));
	}
	in_child(child_as_nobody, &u, "uid nobody");
	cr_assert_eq(kt_get(kfd, 1, 2, KT_MS(5000), out), 1, "our event was taken by another uid");
	cr_assert_eq(out[0].user[0], 9u);
	close(kfd);
}

/* ---- abi.md 7.5: the ring's ACL holds at most 16 distinct uids ---- */

#define RING_UIDS 16		/* KC_RING_MAX_UIDS of the daemon, fixed by abi.md 7.5 */
#define RING_UID0 20000		/* uids no other test uses */

struct shm_arg {
	int kfd, want;
	uid_t uid;
};

/* RING_SHM as s->uid on the inherited queue; exit 0 when it gives s->want. */
static int child_ring_shm(void *a)
{
	struct shm_arg *s = a;
	struct kevent_ring_shm shm;

	if (setgroups(0, NULL) || setgid(s->uid) || setuid(s->uid))
		return 1;
	memset(&shm, 0, sizeof(shm));
	int r = kt_ioctl(s->kfd, KEVENT_IOC_RING_SHM, &shm);
	return r == s->want ? 0 : r == 0 ? 2 : 100 + (-r & 0x7f);
}

static void ring_shm_as(int kfd, uid_t uid, int want)
{
	struct shm_arg s = { kfd, want, uid };
	char what[96];

	snprintf(what, sizeof(what), "RING_SHM as uid %u, want %d (step 2: it succeeded, 100+n: -errno n)",
		 (unsigned int)uid, want);
	in_child(child_ring_shm, &s, what);
}

/*
 * abi.md 7.5: RING_SHM grants 16 distinct uids read access to one queue's
 * ring; a 17th gets ENOSPC, while a uid already granted asks again freely.
 */
KTEST(share, ring_shm_17th_uid_enospc)
{
	kt_require_feature(KEVENT_FEAT_RING_SHM, "no KEVENT_IOC_RING_SHM here (the module maps the ring itself)");
	if (geteuid() != 0)
		cr_skip_test("needs root to setuid() children (running as uid %d)", (int)geteuid());
	int kfd = kt_open(O_RDWR);
	struct kevent_ring_shm shm;

	for (unsigned int i = 0; i < RING_UIDS; i++)
		ring_shm_as(kfd, RING_UID0 + i, 0);
	ring_shm_as(kfd, RING_UID0 + RING_UIDS, -ENOSPC);
	ring_shm_as(kfd, RING_UID0, 0);
	memset(&shm, 0, sizeof(shm));
	cr_assert_eq(kt_ioctl(kfd, KEVENT_IOC_RING_SHM, &shm), -ENOSPC,
		     "RING_SHM as the owner (uid 0), an ungranted 17th uid");
	/* Another queue has its own ring and its own list. */
	int k2 = kt_open(O_RDWR);
	ring_shm_as(k2, RING_UID0 + RING_UIDS, 0);
	close(k2);
	close(kfd);
}
