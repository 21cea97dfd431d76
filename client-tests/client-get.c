// SPDX-License-Identifier: GPL-2.0
/*
 * kevent_get_events(): blocking, timeouts, KEVENT_TIMEOUT_INFINITE (D8),
 * min_nr/max_nr bounds (D12), O_NONBLOCK at open and by fcntl (A11),
 * signals (D22), copy faults (D10), FIFO order, poll/select/epoll on the fd.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <unistd.h>

#include "ktest.h"

KTEST(get, max_zero_returns_at_once)
{
	int kfd = kt_open(O_RDWR);

	/* With no timeout to end a wait, the return itself shows none happened. */
	cr_assert_eq(kevent_get_events(kfd, 0, 0, KEVENT_TIMEOUT_INFINITE, (void *)(uintptr_t)16, 0), 0,
		     "max_nr 0: %s", strerror(errno));
	close(kfd);
}

KTEST(get, min_above_max_einval)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent out[4];

	cr_assert_eq(kevent_get_events(kfd, 3, 2, 0, out, 0), -1);
	cr_assert_eq(errno, EINVAL, "min_nr > max_nr: %s", strerror(errno));
	cr_assert_eq(kevent_get_events(kfd, 1, 0, KEVENT_TIMEOUT_INFINITE, out, 0), -1);
	cr_assert_eq(errno, EINVAL);
	close(kfd);
}

/*
 * D12, D10: max_nr above the path's limit (4095, or INFO's max_get_nr when
 * lower) is clamped before the output range is checked: a buffer of
 * exactly that many entries, an unmapped page after it, takes max_nr 4096
 * and ~0 as a legal short return, never -EFAULT.
 */
KTEST(get, max_nr_clamped_before_the_range_check)
{
	int kfd = kt_open(O_RDWR), p[2];
	unsigned int max = kt_backend_info()->max_get_nr;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), len = (size_t)max * sizeof(struct ukevent);
	size_t span = (len + pg - 1) / pg * pg;
	unsigned char *m = mmap(NULL, span + pg, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert(max >= 1 && max <= 4095, "INFO max_get_nr %u above 4095", max);
	cr_assert(m != MAP_FAILED);
	cr_assert_eq(munmap(m + span, pg), 0);
	struct ukevent *buf = (struct ukevent *)(m + span - len);	/* ends at the hole */

	errno = 0;
	cr_assert_eq(kevent_get_events(kfd, 0, 4096, 0, buf, 0), 0, "max_nr 4096, nothing ready: %s",
		     strerror(errno));
	kt_pipe(p);
	kt_add_queued(kfd, kt_uk_poll(p[0], KEVENT_POLL_POLLIN, 0, 1));
	kt_write1(p[1]);
	cr_assert(kt_wait_ready(kfd, 1, 5000));
	errno = 0;
	cr_assert_eq(kevent_get_events(kfd, 1, 0xffffffffu, 0, buf, 0), 1, "max_nr ~0: %s",
		     strerror(errno));
	cr_assert_eq(buf[0].user[0], 1u);
	close(p[0]);
	close(p[1]);
	munmap(m, span);
	close(kfd);
}

KTEST(get, timeout_zero_and_min_zero)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent out[4];

	kt_add_queued(kfd, kt_uk_timer(3600000, 0, 1));
	cr_assert_eq(kt_get(kfd, 1, 4, 0, out), 0, "timeout 0 must not wait");
	cr_assert_eq(kt_get(kfd, 0, 4, KEVENT_TIMEOUT_INFINITE, out), 0, "min_nr 0 must not wait");
	close(kfd);
}

/* A relative timeout: returns 0 when nothing came, not before the timeout. */
KTEST(get, timeout_expires)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent out[4];

	kt_add_queued(kfd, kt_uk_timer(3600000, 0, 1));
	__u64 t0 = kt_now_ns();
	cr_assert_eq(kt_get(kfd, 1, 4, KT_MS(100), out), 0);
	__u64 dt = kt_now_ns() - t0;
	cr_assert(dt >= KT_MS(95), "returned after %llu ns, before the 100 ms timeout",
		  (unsigned long long)dt);
	/* The rule is a time: the timeout ends the wait.  200 times it, for a loaded machine. */
	cr_assert(dt < KT_MS(20000), "100 ms timeout took %llu ns", (unsigned long long)dt);
	close(kfd);
}

/* Blocks until min_nr are ready; returns at most max_nr; FIFO order. */
KTEST(get, blocks_until_min_nr)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent out[8];

	kt_add_queued(kfd, kt_uk_timer(60, KEVENT_REQ_ONESHOT, 1));
	kt_add_queued(kfd, kt_uk_timer(300, KEVENT_REQ_ONESHOT, 2));
	__u64 t0 = kt_now_ns();
	int n = kt_get(kfd, 2, 8, KT_MS(20000), out);
	__u64 dt = kt_now_ns() - t0;
	cr_assert_eq(n, 2, "min_nr 2: got %d", n);
	cr_assert(dt >= KT_MS(290), "returned after %llu ns, before the second timer",
		  (unsigned long long)dt);
	cr_assert_eq(out[0].user[0], 1u, "FIFO: the first ready comes first");
	cr_assert_eq(out[1].user[0], 2u);
	close(kfd);
}

struct min_get {
	int kfd, n;
	struct ukevent out[4];
};

static void *min_getter(void *arg)
{
	struct min_get *g = arg;

	g->n = kt_get(g->kfd, 2, 4, KEVENT_TIMEOUT_INFINITE, g->out);
	return NULL;
}

/*
 * D33: a blocking call that finds fewer than min_nr kevents ready waits:
 * with one of two ready it parks, takes nothing, and returns both once the
 * second is ready.
 */
KTEST(get, fewer_than_min_nr_ready_waits)
{
	struct min_get g = { .kfd = kt_open(O_RDWR) };
	int p[2], q[2];
	pthread_t th;

	kt_pipe(p);
	kt_pipe(q);
	kt_add_queued(g.kfd, kt_uk_poll(p[0], KEVENT_POLL_POLLIN, 0, 1));
	kt_add_queued(g.kfd, kt_uk_poll(q[0], KEVENT_POLL_POLLIN, 0, 2));
	kt_write1(p[1]);
	cr_assert(kt_wait_ready(g.kfd, 1, 5000), "the first write");
	cr_assert_eq(pthread_create(&th, NULL, min_getter, &g), 0);
	kt_await_parked(g.kfd, 1, 10000);	/* fails if the call returned the one ready */
	cr_assert_eq(kt_queue_ready(g.kfd), 1u, "the parked call took the ready kevent");
	kt_write1(q[1]);
	pthread_join(th, NULL);
	cr_assert_eq(g.n, 2, "min_nr 2: got %d", g.n);
	cr_assert_eq(g.out[0].user[0], 1u, "FIFO");
	cr_assert_eq(g.out[1].user[0], 2u);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	close(g.kfd);
}

/* When the timeout hits with fewer than min_nr ready, those are returned. */
KTEST(get, timeout_returns_what_is_ready)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent out[8];

	kt_add_queued(kfd, kt_uk_timer(20, KEVENT_REQ_ONESHOT, 1));
	kt_add_queued(kfd, kt_uk_timer(3600000, 0, 2));
	int n = kt_get(kfd, 2, 8, KT_MS(400), out);
	cr_assert_eq(n, 1, "min_nr 2 with one ready at the timeout: got %d", n);
	cr_assert_eq(out[0].user[0], 1u);
	close(kfd);
}

KTEST(get, max_nr_bounds_copy)
{
	int kfd = kt_open(O_RDWR), p[5][2];
	struct ukevent out[8];

	/* Ready order is made explicit: one pipe each, one after the other. */
	for (int i = 0; i < 5; i++) {
		kt_pipe(p[i]);
		kt_add_queued(kfd, kt_uk_poll(p[i][0], KEVENT_POLL_POLLIN, 0, (__u32)i));
	}
	for (int i = 0; i < 5; i++) {
		kt_write1(p[i][1]);
		cr_assert(kt_wait_ready(kfd, (unsigned)i + 1, 5000), "pipe %d not ready", i);
	}
	memset(out, 0xee, sizeof(out));
	cr_assert_eq(kt_get(kfd, 1, 3, 0, out), 3);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(out[i].user[0], (__u32)i, "FIFO order: slot %d cookie %u", i, out[i].user[0]);
	for (size_t b = 3 * sizeof(struct ukevent); b < sizeof(out); b++)
		cr_assert_eq(((unsigned char *)out)[b], 0xee, "wrote past max_nr");
	cr_assert_eq(kt_get(kfd, 1, 8, 0, out), 2);
	cr_assert_eq(out[0].user[0], 3u);
	cr_assert_eq(out[1].user[0], 4u);
	cr_assert_eq(kt_get(kfd, 0, 8, 0, out), 0, "dequeued events are gone");
	close(kfd);
}

static int inf_kfd;
static volatile int inf_done;
static int inf_ret;

static void *inf_waiter(void *arg)
{
	struct ukevent out[2];

	inf_ret = kt_get(inf_kfd, 1, 2, KEVENT_TIMEOUT_INFINITE, out);
	__atomic_store_n(&inf_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* D8: ~0 waits forever, i.e. past any plausible conversion overflow. */
KTEST(get, infinite_waits)
{
	int p[2];
	pthread_t th;

	inf_kfd = kt_open(O_RDWR);
	kt_pipe(p);
	kt_add_queued(inf_kfd, kt_uk_poll(p[0], KEVENT_POLL_POLLIN, 0, 1));
	cr_assert_eq(pthread_create(&th, NULL, inf_waiter, NULL), 0);
	kt_await_parked(inf_kfd, 1, 10000);
	kt_sleep_ms(1500);	/* the subject: time passes and the parked call stays */
	cr_assert_eq(__atomic_load_n(&inf_done, __ATOMIC_ACQUIRE), 0,
		     "INFINITE returned %d after 1.5 s with nothing ready", inf_ret);
	kt_write1(p[1]);
	pthread_join(th, NULL);
	cr_assert_eq(inf_ret, 1, "INFINITE wait: %d", inf_ret);
	close(inf_kfd);
}

/* Large but finite timeouts are relative ns, not forever and not 0. */
KTEST(get, large_timeout_not_zero)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent out[2];

	kt_add_queued(kfd, kt_uk_timer(200, KEVENT_REQ_ONESHOT, 1));
	cr_assert_eq(kt_get(kfd, 1, 2, KEVENT_TIMEOUT_INFINITE - 1, out), 1);
	kt_add_queued(kfd, kt_uk_timer(200, KEVENT_REQ_ONESHOT, 2));
	cr_assert_eq(kt_get(kfd, 1, 2, 1ULL << 63, out), 1);
	close(kfd);
}

static void assert_nonblocking(int kfd, const char *how)
{
	struct ukevent out[2];

	/* No timeout and nothing ready: a call that waited would not return 0. */
	cr_assert_eq(kt_get(kfd, 1, 2, KEVENT_TIMEOUT_INFINITE, out), 0, "%s: a non-blocking get", how);
}

KTEST(get, nonblock_at_open)
{
	int kfd = kt_open(O_RDWR | O_NONBLOCK);

	kt_add_queued(kfd, kt_uk_timer(3600000, 0, 1));
	assert_nonblocking(kfd, "O_NONBLOCK at open");
	close(kfd);
}

/* A11: O_NONBLOCK set later by fcntl reaches the backend through libkevent. */
KTEST(get, nonblock_by_fcntl)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent out[2];

	kt_pipe(p);
	kt_add_queued(kfd, kt_uk_poll(p[0], KEVENT_POLL_POLLIN, 0, 1));
	cr_assert_eq(fcntl(kfd, F_SETFL, fcntl(kfd, F_GETFL) | O_NONBLOCK), 0);
	assert_nonblocking(kfd, "O_NONBLOCK by fcntl");
	/* Non-blocking still returns what is ready. */
	kt_write1(p[1]);
	cr_assert(kt_wait_ready(kfd, 1, 5000));
	cr_assert_eq(kt_get(kfd, 1, 2, KEVENT_TIMEOUT_INFINITE, out), 1);
	close(kfd);
}

KTEST(get, nonblock_ioc_flag_on_blocking_fd)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent out[2];
	struct kevent_get_events_arg a = {
		.min_nr = 1, .max_nr = 2, .timeout_ns = KEVENT_TIMEOUT_INFINITE,
		.events = (__u64)(uintptr_t)out, .ioc_flags = KEVENT_GET_NONBLOCK,
	};

	kt_add_queued(kfd, kt_uk_timer(3600000, 0, 1));
	cr_assert_eq(kt_ioctl(kfd, KEVENT_IOC_GET_EVENTS, &a), 0);
	close(kfd);
}

static void on_usr1(int sig)
{
}

static int sig_kfd;
static int sig_ret;

static void *sig_waiter(void *arg)
{
	struct ukevent out[2];

	sig_ret = kevent_get_events(sig_kfd, 1, 2, KT_MS(90000), out, 0);
	if (sig_ret < 0)
		sig_ret = -errno;
	return NULL;
}

/* D22: a signal during a blocked call returns what is ready, never EINTR. */
KTEST(get, signal_returns_ready_not_eintr)
{
	pthread_t th;
	struct sigaction sa = { .sa_handler = on_usr1 };	/* no SA_RESTART */

	sigemptyset(&sa.sa_mask);
	cr_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	sig_kfd = kt_open(O_RDWR);
	kt_add_queued(sig_kfd, kt_uk_timer(3600000, 0, 1));
	__u64 t0 = kt_now_ns();
	cr_assert_eq(pthread_create(&th, NULL, sig_waiter, NULL), 0);
	kt_await_parked(sig_kfd, 1, 10000);
	pthread_kill(th, SIGUSR1);
	pthread_join(th, NULL);
	cr_assert_neq(sig_ret, -EINTR, "a signal gave EINTR (D22)");
	cr_assert_eq(sig_ret, 0, "interrupted with nothing ready: %d", sig_ret);
	/*
	 * The signal's end of the wait and the timeout's both return 0: only
	 * the time tells them apart.  The timeout is 90 s, so only a call
	 * that sat it out fails, however loaded the machine.
	 */
	cr_assert(kt_now_ns() - t0 < KT_MS(80000), "the signal did not end the wait");
	close(sig_kfd);
}

/* D10: an unmapped output range faults before anything is dequeued. */
KTEST(get, output_fault_loses_nothing)
{
	int kfd = kt_open(O_RDWR), p[2];
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ukevent out[4];

	cr_assert(m != MAP_FAILED);
	cr_assert_eq(munmap(m + pg, (size_t)pg), 0);
	kt_pipe(p);
	kt_add_queued(kfd, kt_uk_poll(p[0], KEVENT_POLL_POLLIN, 0, 1));
	kt_add_queued(kfd, kt_uk_poll(p[0], KEVENT_POLL_POLLIN, 0, 2));
	kt_write1(p[1]);
	cr_assert(kt_wait_ready(kfd, 2, 5000));
	/* Room for one entry before the hole; max_nr 2 reaches into it. */
	struct ukevent *edge = (struct ukevent *)(m + pg - sizeof(struct ukevent));
	cr_assert_eq(kevent_get_events(kfd, 0, 2, 0, edge, 0), -1);
	cr_assert_eq(errno, EFAULT, "output range half unmapped: %s", strerror(errno));
	cr_assert_eq(kevent_get_events(kfd, 0, 2, 0, (void *)(uintptr_t)16, 0), -1);
	cr_assert_eq(errno, EFAULT);
	cr_assert_eq(kt_get(kfd, 0, 4, 0, out), 2, "events lost by a faulting GET_EVENTS (D10)");
	munmap(m, (size_t)pg);
	close(kfd);
}

/* A GET_EVENTS that waits for two events while its output page goes away. */
struct late_get {
	int kfd;
	struct ukevent *out;
	int ret, err;
};

static void *late_getter(void *arg)
{
	struct late_get *g = arg;

	g->ret = kevent_get_events(g->kfd, 2, 2, KT_MS(20000), g->out, 0);
	g->err = errno;
	return NULL;
}

/*
 * D10, late fault: the output is checked when the call starts, so a range
 * unmapped while the call waits faults during the copy, after the events
 * left the ready list.  Entry 0 lies before the hole, entry 1 in it: the
 * module and the process-memory path return the one that arrived; the
 * retry path can only answer EFAULT (section 6).  Both taken are gone.
 */
KTEST(get, late_fault_loses_the_taken_events)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct late_get g = { .kfd = kt_open(O_RDWR) };
	pthread_t th;

	cr_assert(m != MAP_FAILED);
	g.out = (struct ukevent *)(m + pg - sizeof(struct ukevent));
	cr_assert_eq(pthread_create(&th, NULL, late_getter, &g), 0);
	kt_await_parked(g.kfd, 1, 10000);
	cr_assert_eq(munmap(m + pg, (size_t)pg), 0);
	/* Timers, so the retry path (no fd origins) runs it too; ready order 1, 2. */
	kt_add_queued(g.kfd, kt_uk_timer(50, KEVENT_REQ_ONESHOT, 1));
	kt_add_queued(g.kfd, kt_uk_timer(250, KEVENT_REQ_ONESHOT, 2));
	pthread_join(th, NULL);
	if (kt_backend_info()->features & KEVENT_FEAT_RETRY_PATH) {
		cr_assert_eq(g.ret, -1, "retry path, late fault: returned %d", g.ret);
		cr_assert_eq(g.err, EFAULT, "retry path, late fault: %s", strerror(g.err));
	} else {
		cr_assert_eq(g.ret, 1, "late fault after one entry: returned %d (%s), want 1",
			     g.ret, g.ret < 0 ? strerror(g.err) : "count");
		cr_assert_eq(g.out[0].user[0], 1u, "the entry before the hole is not the first ready");
	}
	cr_assert_eq(kt_queue_ready(g.kfd), 0u, "a late fault left the taken events ready");
	cr_assert_eq(kt_queue_kevents(g.kfd), 0u, "ONESHOT kevents outlived their late fault");
	munmap(m, (size_t)pg);
	close(g.kfd);
}

/* 1.7: the kevent fd is readable (POLLIN|POLLRDNORM) while events are ready. */
KTEST(get, poll_on_kevent_fd)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent out[2];

	kt_pipe(p);
	kt_add_queued(kfd, kt_uk_poll(p[0], KEVENT_POLL_POLLIN, 0, 1));
	cr_assert_eq(kt_poll1(kfd, POLLIN | POLLOUT | POLLPRI, 0), 0, "empty queue polled ready");
	kt_write1(p[1]);
	int re = kt_poll1(kfd, POLLIN | POLLRDNORM, 10000);
	cr_assert_eq(re, POLLIN | POLLRDNORM, "revents %#x, want POLLIN|POLLRDNORM", re);
	cr_assert_eq(kt_get(kfd, 1, 2, 0, out), 1);
	cr_assert_eq(kt_poll1(kfd, POLLIN, 0), 0, "drained queue still polls ready");
	close(kfd);
}

static int poll_kfd;
static int poll_ret;
static pid_t poll_tid;

static void *poll_blocker(void *arg)
{
	__atomic_store_n(&poll_tid, kt_gettid(), __ATOMIC_RELEASE);
	poll_ret = kt_poll1(poll_kfd, POLLIN, 20000);
	return NULL;
}

/* A poll() already sleeping is woken by a kevent becoming ready. */
KTEST(get, poll_wakes_up)
{
	pthread_t th;

	poll_kfd = kt_open(O_RDWR);
	cr_assert_eq(pthread_create(&th, NULL, poll_blocker, NULL), 0);
	while (!__atomic_load_n(&poll_tid, __ATOMIC_ACQUIRE))
		sched_yield();
	kt_await_in_poll(poll_tid, "poll() on the kevent fd");
	kt_add_queued(poll_kfd, kt_uk_timer(100, KEVENT_REQ_ONESHOT, 1));
	pthread_join(th, NULL);
	cr_assert(poll_ret & POLLIN, "poll was not woken by a timer kevent (revents %#x)", poll_ret);
	close(poll_kfd);
}

KTEST(get, select_on_kevent_fd)
{
	int kfd = kt_open(O_RDWR);
	fd_set rd;
	struct timeval tv = { 0, 0 };

	FD_ZERO(&rd);
	FD_SET(kfd, &rd);
	cr_assert_eq(select(kfd + 1, &rd, NULL, NULL, &tv), 0);
	kt_add_queued(kfd, kt_uk_timer(50, KEVENT_REQ_ONESHOT, 1));
	FD_ZERO(&rd);
	FD_SET(kfd, &rd);
	tv.tv_sec = 10;
	cr_assert_eq(select(kfd + 1, &rd, NULL, NULL, &tv), 1, "select did not see the timer");
	cr_assert(FD_ISSET(kfd, &rd));
	close(kfd);
}

KTEST(get, epoll_on_kevent_fd)
{
	int kfd = kt_open(O_RDWR), ep = epoll_create1(EPOLL_CLOEXEC), p[2];
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 77 }, got[2];
	struct ukevent out[2];

	cr_assert(ep >= 0);
	kt_pipe(p);
	cr_assert_eq(epoll_ctl(ep, EPOLL_CTL_ADD, kfd, &ev), 0, "epoll_ctl on the kevent fd: %s",
		     strerror(errno));
	kt_add_queued(kfd, kt_uk_poll(p[0], KEVENT_POLL_POLLIN, 0, 1));
	cr_assert_eq(epoll_wait(ep, got, 2, 0), 0);
	kt_write1(p[1]);
	cr_assert_eq(epoll_wait(ep, got, 2, 10000), 1, "epoll did not see the kevent fd ready");
	cr_assert_eq(got[0].data.u32, 77u);
	cr_assert(got[0].events & EPOLLIN);
	cr_assert_eq(kt_get(kfd, 1, 2, 0, out), 1);
	cr_assert_eq(epoll_wait(ep, got, 2, 0), 0, "still ready after draining");
	/* A second readiness after draining is seen again. */
	kt_read_all(p[0]);
	kt_write1(p[1]);
	cr_assert_eq(epoll_wait(ep, got, 2, 10000), 1, "second readiness not seen");
	close(ep);
	close(kfd);
}

/* D32 tests: an EPOLLET epoll on a queue with a POLLIN kevent per pipe. */
struct et_fixture {
	int kfd, ep, p[3][2], npipes;
};

static void et_open(struct et_fixture *f, int npipes)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };

	f->kfd = kt_open(O_RDWR);
	f->ep = epoll_create1(EPOLL_CLOEXEC);
	f->npipes = npipes;
	cr_assert(f->ep >= 0);
	cr_assert_eq(epoll_ctl(f->ep, EPOLL_CTL_ADD, f->kfd, &ev), 0, "%s", strerror(errno));
	for (int i = 0; i < npipes; i++) {
		kt_pipe(f->p[i]);
		kt_add_queued(f->kfd, kt_uk_poll(f->p[i][0], KEVENT_POLL_POLLIN, 0, (__u32)i + 1));
	}
}

static void et_close(struct et_fixture *f)
{
	for (int i = 0; i < f->npipes; i++) {
		close(f->p[i][0]);
		close(f->p[i][1]);
	}
	close(f->ep);
	close(f->kfd);
}

/*
 * D32 with EPOLLET: a kevent that becomes ready after a GET_EVENTS that left
 * another one queued is a new edge (take13 woke on every requeue), so a
 * consumer that stops at a short count does not stall.
 */
KTEST(get, epoll_et_edge_after_partial_take)
{
	struct et_fixture f;
	struct epoll_event got[2];
	struct ukevent out[4];

	et_open(&f, 3);
	kt_write1(f.p[0][1]);
	kt_write1(f.p[1][1]);
	cr_assert(kt_wait_ready(f.kfd, 2, 10000), "two poll kevents did not become ready");
	cr_assert_eq(epoll_wait(f.ep, got, 2, 10000), 1, "no edge for the first events");
	cr_assert_eq(epoll_wait(f.ep, got, 2, 0), 0, "an edge reported twice");
	cr_assert_eq(kt_get(f.kfd, 1, 1, 0, out), 1, "take one of two");
	kt_write1(f.p[2][1]);
	cr_assert_eq(epoll_wait(f.ep, got, 2, 10000), 1,
		     "a kevent ready after a partial take made no new edge");
	cr_assert_eq(kt_get(f.kfd, 2, 4, KT_MS(10000), out), 2);
	et_close(&f);
}

/* D32 with EPOLLET: a second kevent becoming ready while one is pending is a new edge. */
KTEST(get, epoll_et_edge_per_new_ready_kevent)
{
	struct et_fixture f;
	struct epoll_event got[2];
	struct ukevent out[4];

	et_open(&f, 2);
	kt_write1(f.p[0][1]);
	cr_assert(kt_wait_ready(f.kfd, 1, 10000), "the first poll kevent did not become ready");
	cr_assert_eq(epoll_wait(f.ep, got, 2, 10000), 1, "no edge for the first kevent");
	kt_write1(f.p[1][1]);
	cr_assert(kt_wait_ready(f.kfd, 2, 10000), "the second poll kevent did not become ready");
	cr_assert_eq(epoll_wait(f.ep, got, 2, 10000), 1,
		     "a kevent that became ready while another was pending made no edge");
	cr_assert_eq(kt_get(f.kfd, 2, 4, KT_MS(10000), out), 2);
	et_close(&f);
}

/*
 * docs/abi.md section 9: a raw GET_EVENTS ioctl without KEVENT_GET_NONBLOCK
 * after fcntl(O_NONBLOCK): the module sees f_flags and does not wait; the
 * CUSE daemon cannot see fcntl and waits (A11).  One check per backend.
 */
KTEST(get, raw_ioctl_after_fcntl_per_backend)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent out[2];
	/*
	 * The module must not wait: a timeout long enough (60 s) that only a
	 * call that waited it out fails, whatever the machine's load.  CUSE
	 * and fuse wait it out, so there it stays 300 ms (never early).
	 */
	int module = kt_backend() == KEVENT_BACKEND_MODULE;
	struct kevent_get_events_arg a = {
		.min_nr = 1, .max_nr = 2, .timeout_ns = KT_MS(module ? 60000 : 300),
		.events = (__u64)(uintptr_t)out,
	};

	kt_add_queued(kfd, kt_uk_timer(3600000, 0, 1));
	cr_assert_eq(fcntl(kfd, F_SETFL, O_NONBLOCK), 0);
	__u64 t0 = kt_now_ns();
	cr_assert_eq(kt_ioctl(kfd, KEVENT_IOC_GET_EVENTS, &a), 0);
	__u64 dt = kt_now_ns() - t0;
	if (module)
		cr_assert(dt < KT_MS(30000), "module: f_flags O_NONBLOCK ignored (waited %llu ns)",
			  (unsigned long long)dt);
	else
		cr_assert(dt >= KT_MS(295), "cuse: returned after %llu ns; the daemon cannot see fcntl",
			  (unsigned long long)dt);
	close(kfd);
}

/*
 * D48: KEVENT_GET_TIMESPEC is a revision-2 rule: on a revision-1 queue the
 * timespec GET_EVENTS is -EINVAL, on the header, nothing dequeued.
 */
KTEST_REVS(get, timespec_einval_on_rev1, 1, 1)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent out[4];
	struct timespec zero = { 0, 0 };

	kt_pipe(p);
	kt_add_queued(kfd, kt_uk_poll(p[0], KEVENT_POLL_POLLIN, 0, 1));
	kt_write1(p[1]);
	cr_assert(kt_wait_ready(kfd, 1, 5000), "the write");
	errno = 0;
	cr_assert_eq(kevent_get_events_ts(kfd, 0, 4, zero, out, 0), -1,
		     "KEVENT_GET_TIMESPEC on revision 1");
	cr_assert_eq(errno, EINVAL, "KEVENT_GET_TIMESPEC on revision 1: %s", strerror(errno));
	cr_assert_eq(kt_queue_ready(kfd), 1u, "the refused call dequeued");
	close(p[0]);
	close(p[1]);
	close(kfd);
}

/*
 * From revision 2 on: timespec timeouts and absolute deadlines (D48), the
 * EINTR opt-in (D47), READY with num 0 and its latch (D50).
 */

/* D50: READY with num 0 and no waiter is latched: POLLIN, then the next call returns at once. */
KTEST_REVS(get, ready_num0_latched, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent out[1];

	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_READY, 0, NULL), 0, "no waiter: latched");
	cr_assert(kt_poll1(kfd, POLLIN, 0) & POLLIN, "latched wake raises POLLIN");
	cr_assert_eq(kt_get(kfd, 1, 1, KEVENT_TIMEOUT_INFINITE, out), 0, "returns at once");
	cr_assert_eq(kt_poll1(kfd, POLLIN, 0), 0, "the call cleared the latch");
	close(kfd);
}

/* D48: timespec checks of the timespec GET_EVENTS. */
KTEST_REVS(get, timespec_checks, 2, KTEST_OPEN)
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
KTEST_REVS(get, clock_set_forward_ends_abstime_calls, 2, KTEST_OPEN)
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
KTEST_REVS(get, clock_set_backward_delays_abstime_calls, 2, KTEST_OPEN)
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
KTEST_REVS(get, eintr_opt_in, 2, KTEST_OPEN)
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
KTEST_REVS(get, eintr_opt_in_not_restarted_by_sa_restart, 2, KTEST_OPEN)
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

/* ---- the latched wake of D50 meeting every kind of dequeue ---- */

/* D50: a non-blocking GET_EVENTS clears the latch, whether by timeout 0 or O_NONBLOCK. */
KTEST_REVS(get, latch_cleared_by_nonblocking_get_events, 2, KTEST_OPEN)
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

/*
 * D50: latched, the next blocking GET_EVENTS returns at once with what is
 * ready, below its min_nr; the latch is one bit: two READYs, one call.
 */
KTEST_REVS(get, latch_ends_blocking_get_events_below_min_nr, 2, KTEST_OPEN)
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
KTEST_REVS(get, ready_num0_wakes_the_oldest_waiter, 2, KTEST_OPEN)
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
KTEST_REVS(get, ready_num0_woken_get_events_returns_what_is_ready, 2, KTEST_OPEN)
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

/*
 * The four calls from start to end; self[i]: call i returned within 30 s.
 * The bound only turns a lost call into a failure instead of a hang: on a
 * loaded machine four threads and the daemon may wait seconds for a CPU.
 */
static void abs4_run(struct abs4 *a, __u64 (*deadline)(unsigned int flags), bool self[4])
{
	abs4_start(a, deadline);
	for (int i = 0; i < 4; i++)
		self[i] = call_join(&a->c[i], 30000);
	abs4_end(a);
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
KTEST_REVS(get, abstime_future_deadline_waits_until_it, 2, KTEST_OPEN)
{
	struct abs4 a;
	bool self[4];

	abs4_run(&a, deadline_soon, self);
	for (int i = 0; i < 4; i++) {
		const struct call *c = &a.c[i];
		const struct timespec *end = c->flags & KEVENT_FLAGS_MONOTONIC ? &c->end_mono
									: &c->end_rt;

		cr_assert(self[i], "%s: still waiting 30 s after a deadline 150 ms away",
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
KTEST_REVS(get, abstime_past_deadline_does_not_wait, 2, KTEST_OPEN)
{
	struct abs4 a;
	bool self[4];

	abs4_run(&a, deadline_past, self);
	for (int i = 0; i < 4; i++) {
		cr_assert(self[i], "%s: a past deadline still waited 10 s", abs4_name(i));
		cr_assert_eq(a.c[i].result, 0, "%s: %d", abs4_name(i), a.c[i].result);
	}
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
KTEST_REVS(get, get_events_timespec_raw_checks, 2, KTEST_OPEN)
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
