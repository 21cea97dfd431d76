// SPDX-License-Identifier: GPL-2.0-only
/*
 * Conformance of libkqueue-kevent: the life of a kqueue (close, fork,
 * exec), several threads on one kqueue, signals during a wait, and scale.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kqt.h"

/* ---- close and fork ---- */

KQT(life, closed_kqueue_is_ebadf)
{
	int kq = kqt_kqueue();
	struct kevent e;
	struct timespec z = { 0, 0 };

	close(kq);
	cr_assert_eq(kevent(kq, NULL, 0, &e, 1, &z), -1);
	cr_assert_eq(errno, EBADF);
}

KQT(life, kqueue_is_close_on_exec)
{
	int kq = kqt_kqueue();

	cr_assert(fcntl(kq, F_GETFD) & FD_CLOEXEC);
}

KQT(life, fork_child_kqueue_fails_cleanly)
{
	int kq = kqt_kqueue(), st, p[2];
	pid_t child;

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	child = fork();
	if (child == 0) {
		struct kevent e;
		struct timespec z = { 0, 0 };

		/* Not inherited: the descriptor fails EBADF, nothing hangs. */
		if (kevent(kq, NULL, 0, &e, 1, &z) != -1 || errno != EBADF)
			_exit(1);
		_exit(fcntl(kq, F_GETFD) < 0 ? 0 : 2);
	}
	cr_assert_eq(waitpid(child, &st, 0), child);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
}

KQT(life, fork_parent_keeps_its_kqueue)
{
	int kq = kqt_kqueue(), p[2];
	pid_t child;

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	child = fork();
	if (child == 0) {
		close(p[0]);	/* the child's close must not touch the parent's kevents */
		_exit(0);
	}
	waitpid(child, NULL, 0);
	kqt_write(p[1], 1);
	cr_assert_eq(kqt_get(kq, "parent still watches").ident, (uintptr_t)p[0]);
}

KQT(life, fork_child_makes_its_own)
{
	int kq = kqt_kqueue(), st;
	pid_t child;

	(void)kq;
	child = fork();
	if (child == 0) {
		int k = kqueue();
		struct kevent c, e;
		struct timespec ts = { 10, 0 };

		if (k < 0)
			_exit(1);
		EV_SET(&c, 1, EVFILT_USER, EV_ADD, NOTE_TRIGGER, 0, NULL);
		_exit(kevent(k, &c, 1, &e, 1, &ts) == 1 ? 0 : 2);
	}
	cr_assert_eq(waitpid(child, &st, 0), child);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
}

KQT(life, kqueue_fd_polls_readable_with_pending_events)
{
	int kq = kqt_kqueue();
	struct pollfd pf = { .fd = kq, .events = POLLIN };

	kqt_ok(kq, 1, EVFILT_USER, EV_ADD | EV_CLEAR, 0, 0, NULL);
	kqt_ok(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	cr_assert_eq(poll(&pf, 1, 10000), 1, "a triggered user event makes the kqueue readable");
	kqt_get(kq, "then kevent returns it");
}

/* FreeBSD: a kqueue fd takes EVFILT_READ, ready while that kqueue has events. */
KQT(life, kqueue_watched_by_a_kqueue_fires)
{
	int outer = kqt_kqueue(), inner = kqt_kqueue();
	struct kevent e;

	kqt_ok(inner, 1, EVFILT_USER, EV_ADD | EV_CLEAR, 0, 0, NULL);
	kqt_ok(outer, (uintptr_t)inner, EVFILT_READ, EV_ADD, 0, 0, (void *)9);
	kqt_quiet(outer, 30, "the inner kqueue has nothing");
	kqt_ok(inner, 1, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	e = kqt_get(outer, "the inner kqueue has an event");
	cr_assert_eq(e.ident, (uintptr_t)inner);
	cr_assert_eq(e.filter, EVFILT_READ);
	cr_assert_eq(e.udata, (void *)9);
	cr_assert_geq(e.data, 1);
	cr_assert_eq(kqt_get(inner, "the inner still holds it").ident, 1);
	kqt_quiet(outer, 30, "drained: the outer is quiet again");
	close(inner);
	cr_assert_eq(kqt_change(outer, (uintptr_t)inner, EVFILT_READ, EV_DELETE, 0, 0, NULL), -ENOENT,
		     "closing the watched kqueue removed its knote");
}

KQT(life, kqueue_fd_takes_read_only_and_not_itself)
{
	int a = kqt_kqueue(), b = kqt_kqueue();

	cr_assert_eq(kqt_change(a, (uintptr_t)b, EVFILT_WRITE, EV_ADD, 0, 0, NULL), -EINVAL);
	cr_assert_eq(kqt_change(a, (uintptr_t)b, EVFILT_VNODE, EV_ADD, NOTE_WRITE, 0, NULL), -EINVAL);
	cr_assert_eq(kqt_change(a, (uintptr_t)a, EVFILT_READ, EV_ADD, 0, 0, NULL), -EINVAL,
		     "a kqueue watching itself");
	kqt_ok(a, (uintptr_t)b, EVFILT_READ, EV_ADD, 0, 0, NULL);
}

/* ---- threads ---- */

struct waiter {
	int kq;
	int n;
	int err;
};

static void *wait_one(void *arg)
{
	struct waiter *w = arg;
	struct kevent e;
	struct timespec ts = { 20, 0 };

	w->n = kevent(w->kq, NULL, 0, &e, 1, &ts);
	w->err = errno;
	return NULL;
}

KQT(threads, two_waiters_two_events)
{
	int kq = kqt_kqueue();
	struct waiter w[2] = { { kq, -2, 0 }, { kq, -2, 0 } };
	pthread_t t[2];

	kqt_ok(kq, 1, EVFILT_USER, EV_ADD | EV_ONESHOT, 0, 0, NULL);
	kqt_ok(kq, 2, EVFILT_USER, EV_ADD | EV_ONESHOT, 0, 0, NULL);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, wait_one, &w[i]);
	usleep(50000);
	kqt_ok(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	kqt_ok(kq, 2, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	cr_assert_eq(w[0].n + w[1].n, 2, "each waiter got one: %d and %d", w[0].n, w[1].n);
}

KQT(threads, close_of_the_kqueue_wakes_its_waiter)
{
	int kq = kqt_kqueue();
	struct waiter w = { kq, -2, 0 };
	pthread_t t;

	pthread_create(&t, NULL, wait_one, &w);
	usleep(50000);
	close(kq);
	pthread_join(t, NULL);
	cr_assert_eq(w.n, -1, "the waiter returns -1 (got %d)", w.n);
	cr_assert_eq(w.err, EBADF);
}

/* Whether thread tid is inside ioctl(fd, ...): 1 yes, 0 no, -1 unknown. */
static int in_ioctl_on(pid_t tid, int fd)
{
	char path[64], line[256];
	long nr, arg0;
	FILE *f;
	int r = -1;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fgets(line, sizeof(line), f))
		r = sscanf(line, "%ld %lx", &nr, &arg0) == 2 && nr == SYS_ioctl && arg0 == fd;
	if (r == 0 && strncmp(line, "running", 7) != 0 && sscanf(line, "%ld", &nr) != 1)
		r = -1;	/* neither a syscall nor "running": not readable here */
	fclose(f);
	return r;
}

struct closer_waiter {
	int kq;
	_Atomic pid_t tid;
	int n;
	int err;
};

static void *wait_forever(void *arg)
{
	struct closer_waiter *w = arg;
	struct kevent e;
	struct timespec ts = { 60, 0 };

	w->tid = (pid_t)syscall(SYS_gettid);
	w->n = kevent(w->kq, NULL, 0, &e, 1, &ts);
	w->err = errno;
	return NULL;
}

/* Every waiter is in the device's wait (its ioctl on the kqueue fd), or skip. */
static void await_blocked(struct closer_waiter *w, int n)
{
	for (int tries = 0; tries < 10000; tries++) {
		int blocked = 0;

		for (int i = 0; i < n; i++) {
			int r = w[i].tid ? in_ioctl_on(w[i].tid, w[i].kq) : 0;

			if (r < 0)
				cr_skip_test("/proc/self/task/TID/syscall is not readable: "
					     "cannot tell the waiters are blocked");
			blocked += r;
		}
		if (blocked == n)
			return;
		sched_yield();
		usleep(1000);	/* polling a condition, not a wait for it */
	}
	cr_assert_fail("the waiters never blocked in the device in 10 s");
}

KQT(threads, close_of_the_kqueue_wakes_every_waiter)
{
	enum { N = 4 };
	int kq = kqt_kqueue();
	struct closer_waiter w[N];
	pthread_t t[N];
	struct timespec dl;

	for (int i = 0; i < N; i++) {
		w[i] = (struct closer_waiter){ .kq = kq, .n = -2 };
		pthread_create(&t[i], NULL, wait_forever, &w[i]);
	}
	await_blocked(w, N);
	close(kq);
	/*
	 * Each returns well before its own 60 s timeout.  The waiters wake one
	 * another in turn (each one that leaves wakes the next through the
	 * device): a few round trips each, which took over 10 s at load 60.
	 */
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 30;
	for (int i = 0; i < N; i++)
		cr_assert_eq(pthread_timedjoin_np(t[i], NULL, &dl), 0,
			     "waiter %d of %d still blocked 30 s after the close", i + 1, N);
	for (int i = 0; i < N; i++) {
		cr_assert_eq(w[i].n, -1, "waiter %d returned %d", i, w[i].n);
		cr_assert_eq(w[i].err, EBADF, "waiter %d: %s", i, strerror(w[i].err));
	}
}

struct adder {
	int kq;
	int base;
	int fds[40][2];
	int ok;
};

static void *add_many(void *arg)
{
	struct adder *a = arg;
	struct kevent c;

	for (int i = 0; i < 40; i++) {
		if (pipe(a->fds[i]) < 0)
			return NULL;
		EV_SET(&c, a->fds[i][0], EVFILT_READ, EV_ADD | EV_ONESHOT, 0, 0, NULL);
		if (kevent(a->kq, &c, 1, NULL, 0, NULL) == 0)
			a->ok++;
		if (write(a->fds[i][1], "x", 1) != 1)
			return NULL;
	}
	return NULL;
}

KQT(threads, concurrent_adds_all_land)
{
	int kq = kqt_kqueue(), got = 0;
	static struct adder a[4];
	pthread_t t[4];
	struct kevent ev[64];

	for (int i = 0; i < 4; i++) {
		a[i] = (struct adder){ .kq = kq };
		pthread_create(&t[i], NULL, add_many, &a[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		cr_assert_eq(a[i].ok, 40);
	}
	while (got < 160) {
		int n = kqt_wait(kq, ev, 64, 10000);

		cr_assert_gt(n, 0, "only %d of 160", got);
		got += n;
	}
	kqt_quiet(kq, 30, "each once");
}

static void *trigger_loop(void *arg)
{
	int kq = *(int *)arg;

	for (int i = 0; i < 200; i++)
		kqt_change(kq, 1, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	return NULL;
}

KQT(threads, trigger_while_another_thread_waits)
{
	int kq = kqt_kqueue(), seen = 0;
	pthread_t t;
	struct kevent e;

	kqt_ok(kq, 1, EVFILT_USER, EV_ADD | EV_CLEAR, 0, 0, NULL);
	pthread_create(&t, NULL, trigger_loop, &kq);
	while (kqt_wait(kq, &e, 1, 200) == 1)
		seen++;
	pthread_join(t, NULL);
	cr_assert_gt(seen, 0);
	cr_assert_leq(seen, 200, "EV_CLEAR merges triggers, never adds");
}

struct ready_add {
	int kq, fd;
};

static void *add_a_ready_socket(void *arg)
{
	struct ready_add *ra = arg;

	usleep(50000);	/* the main thread is blocked by now, or soon */
	kqt_ok(ra->kq, (uintptr_t)ra->fd, EVFILT_READ, EV_ADD, 0, 0, NULL);
	return NULL;
}

/* A socket ready at EV_ADD, added by another thread, ends a blocked wait. */
KQT(threads, ready_add_while_another_thread_waits)
{
	int kq = kqt_kqueue(), sv[2];
	struct ready_add ra;
	struct kevent e;
	pthread_t t;

	kqt_socketpair(sv);
	kqt_write(sv[1], 3);
	ra.kq = kq;
	ra.fd = sv[0];
	pthread_create(&t, NULL, add_a_ready_socket, &ra);
	cr_assert_eq(kqt_wait(kq, &e, 1, 10000), 1, "the waiter saw the added socket");
	pthread_join(t, NULL);
	cr_assert(e.ident == (uintptr_t)sv[0] && e.data == 3, "ident %lu data %ld",
		  (unsigned long)e.ident, (long)e.data);
}

/* ---- signals during a wait ---- */

static void on_usr1(int sig)
{
	(void)sig;
}

static void *poke(void *arg)
{
	usleep(50000);
	pthread_kill(*(pthread_t *)arg, SIGUSR1);
	return NULL;
}

KQT(signals, a_caught_signal_ends_the_wait_with_eintr)
{
	int kq = kqt_kqueue();
	struct sigaction sa = { .sa_handler = on_usr1 };
	pthread_t self = pthread_self(), t;
	struct kevent e;
	struct timespec ts = { 20, 0 };
	int n;

	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&t, NULL, poke, &self);
	n = kevent(kq, NULL, 0, &e, 1, &ts);
	pthread_join(t, NULL);
	cr_assert_eq(n, -1, "kevent returned %d", n);
	cr_assert_eq(errno, EINTR);
}

/* ---- scale ---- */

KQT(scale, a_thousand_pipes)
{
	enum { N = 1000 };
	int kq = kqt_kqueue(), got = 0;
	static int p[N][2];
	struct kevent ev[128];
	struct rlimit rl;

	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < 2 * N + 64) {
		rl.rlim_cur = rl.rlim_max < 2 * N + 64 ? rl.rlim_max : 2 * N + 64;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < 2 * N + 64)
		cr_skip_test("RLIMIT_NOFILE %lu is below %d", (unsigned long)rl.rlim_cur, 2 * N + 64);
	for (int i = 0; i < N; i++) {
		kqt_pipe(p[i]);
		kqt_ok(kq, (uintptr_t)p[i][0], EVFILT_READ, EV_ADD | EV_CLEAR, 0, 0, NULL);
	}
	for (int i = 0; i < N; i++)
		kqt_write(p[i][1], 1);
	while (got < N) {
		int n = kqt_wait(kq, ev, 128, 10000);

		cr_assert_gt(n, 0, "only %d of %d", got, N);
		got += n;
	}
	cr_assert_eq(got, N);
	for (int i = 0; i < N; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
}
