// SPDX-License-Identifier: GPL-2.0
/* KEVENT_POLL through the recorder: real pipes, files, pidfd_getfd. */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <criterion/criterion.h>

#include "origins.h"
#include "recorder.h"

#define WAIT_MS 5000

static void setup(void)
{
	signal(SIGPIPE, SIG_IGN);
	rec_setup(0);
}

TestSuite(poll, .init = setup, .fini = rec_teardown);

static int add_poll(struct kitem *k, int fd, __u32 event, __u32 req_flags,
		    struct korigin_result *res)
{
	struct ukevent uk = {
		.id.raw = { (__u32)fd, 0 },
		.type = KEVENT_POLL,
		.event = event,
		.req_flags = req_flags,
	};
	struct kcaller self = rec_self();

	return rec_add(k, &uk, &self, res);
}

static void stats(struct korigins_stats *st)
{
	korigins_sync_closer();
	korigins_stats(st);
}

Test(poll, ready_at_add_is_not_registered)
{
	struct korigin_result res;
	struct korigins_stats st;
	struct kitem k;
	int p[2];

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(write(p[1], "x", 1), 1);
	cr_expect_eq(add_poll(&k, p[0], KEVENT_POLL_POLLIN | KEVENT_POLL_POLLOUT, 0, &res), 1);
	cr_expect_eq(res.ret_data[0], KEVENT_POLL_POLLIN, "revents & event: %#x", res.ret_data[0]);
	stats(&st);
	cr_expect_eq(st.fd_watches, 0);
	cr_expect_eq(st.closer_pending, 0, "the duplicate was closed");
	close(p[0]);
	close(p[1]);
}

Test(poll, becomes_ready_later_and_refires_only_on_new_activity)
{
	struct korigin_result res;
	struct kitem k;
	int p[2];

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(add_poll(&k, p[0], KEVENT_POLL_POLLIN, 0, &res), 0);
	cr_assert_eq(write(p[1], "x", 1), 1);
	cr_assert_eq(rec_wait_fires(&k, 1, WAIT_MS), 1);
	cr_expect_eq(k.last.ret_data[0], KEVENT_POLL_POLLIN);
	cr_assert(rec_dequeue(&k, NULL));
	/* A6: still readable, but no new activity: no re-fire. */
	rec_idle(50);
	cr_expect_eq(rec_fires(&k), 1, "re-fired without new activity");
	cr_assert_eq(write(p[1], "y", 1), 1);
	cr_expect_eq(rec_wait_fires(&k, 2, WAIT_MS), 2, "new activity must re-fire");
	rec_remove(&k);
	cr_expect_eq(k.violations, 0);
	close(p[0]);
	close(p[1]);
}

/*
 * D67: the count, read on the duplicate when asked: the bytes in the pipe
 * then, 0 without a readable bit; a writable pipe answered at ADD on
 * revision 4 carries its room, on revision 3 nothing.
 */
Test(poll, count_reads_the_duplicate_now)
{
	const struct korigin_ops *ops = rec_ops(KEVENT_POLL);
	struct ukevent uk = { .type = KEVENT_POLL, .event = KEVENT_POLL_POLLOUT };
	struct kcaller self = rec_self();
	struct korigin_result res;
	struct kitem k, w;
	char buf[2];
	int p[2];

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(add_poll(&k, p[0], KEVENT_POLL_POLLIN, 0, &res), 0);
	cr_assert_eq(write(p[1], "abcde", 5), 5);
	cr_assert_eq(rec_wait_fires(&k, 1, WAIT_MS), 1);
	cr_assert_eq(read(p[0], buf, 2), 2);
	cr_expect_eq(ops->count(&k, KEVENT_POLL_POLLIN), 3u, "the bytes now, not at the fire");
	cr_expect_eq(ops->count(&k, 0), 0u);
	cr_expect_eq(ops->count(&k, KEVENT_POLL_POLLHUP), 0u);
	uk.id.raw[0] = (__u32)p[1];
	cr_expect_eq(rec_add_rev(&w, 4, &uk, &self, &res), 1, "writable: answered");
	cr_expect_eq(res.ret_data[1], (__u32)fcntl(p[1], F_GETPIPE_SZ) - 3u, "room: %u",
		     res.ret_data[1]);
	cr_expect_eq(rec_add_rev(&w, 3, &uk, &self, &res), 1);
	cr_expect_eq(res.ret_data[1], 0u, "revision 3: %u", res.ret_data[1]);
	rec_remove(&k);
	close(p[0]);
	close(p[1]);
}

Test(poll, oneshot_fires_once)
{
	struct korigin_result res;
	struct kitem k;
	int p[2];

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(add_poll(&k, p[0], KEVENT_POLL_POLLIN, KEVENT_REQ_ONESHOT, &res), 0);
	cr_assert_eq(write(p[1], "x", 1), 1);
	cr_assert_eq(rec_wait_fires(&k, 1, WAIT_MS), 1);
	rec_dequeue(&k, NULL);
	cr_assert_eq(write(p[1], "y", 1), 1);
	rec_idle(30);
	cr_expect_eq(rec_fires(&k), 1);
	rec_remove(&k);
	cr_expect_eq(k.violations, 0);
	close(p[0]);
	close(p[1]);
}

/* A7: the client's close() of the watched fd changes nothing. */
Test(poll, kevent_holds_the_file)
{
	struct korigin_result res;
	struct kitem k;
	int p[2];

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(add_poll(&k, p[0], KEVENT_POLL_POLLIN, 0, &res), 0);
	close(p[0]);
	cr_expect_eq(write(p[1], "x", 1), 1, "no EPIPE: the kevent holds the read end");
	cr_expect_eq(rec_wait_fires(&k, 1, WAIT_MS), 1);
	rec_remove(&k);
	korigins_sync_closer();
	cr_expect_eq(write(p[1], "x", 1), -1, "after REMOVE the read end is gone");
	cr_expect_eq(errno, EPIPE);
	close(p[1]);
}

/* Peer close: POLLHUP is an ordinary bit (A8). */
Test(poll, peer_close_reports_hup)
{
	struct korigin_result res;
	struct kitem k;
	int p[2];

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(add_poll(&k, p[0], KEVENT_POLL_POLLIN | KEVENT_POLL_POLLHUP, 0, &res), 0);
	close(p[1]);
	cr_assert_eq(rec_wait_fires(&k, 1, WAIT_MS), 1);
	cr_expect_eq(k.last.ret_data[0], KEVENT_POLL_POLLHUP);
	cr_expect_eq(k.last.ret_flags, 0);
	rec_remove(&k);
	close(p[0]);
}

Test(poll, bad_fd)
{
	struct korigin_result res;
	struct kitem k;

	cr_expect_eq(add_poll(&k, 987654, KEVENT_POLL_POLLIN, 0, &res), -EBADF);
	cr_expect_eq(add_poll(&k, -1, KEVENT_POLL_POLLIN, 0, &res), -EBADF);
}

Test(poll, refused_epoll_fd)
{
	struct korigin_result res;
	struct kitem k;
	int ep = epoll_create1(0);

	cr_assert_geq(ep, 0);
	cr_expect_eq(add_poll(&k, ep, KEVENT_POLL_POLLIN, 0, &res), -EINVAL);
	close(ep);
}

/* D39: a signalfd's poll reports the polling task's signals: refused. */
Test(poll, refused_signalfd)
{
	struct korigin_result res;
	struct kitem k;
	sigset_t set;
	int sfd;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sfd = signalfd(-1, &set, 0);
	cr_assert_geq(sfd, 0);
	cr_expect_eq(add_poll(&k, sfd, KEVENT_POLL_POLLIN, 0, &res), -EINVAL);
	close(sfd);
}

Test(poll, file_without_poll_method)
{
	struct korigin_result res;
	struct kitem k;
	int fd = open("/dev/null", O_RDWR);

	cr_assert_geq(fd, 0);
	/* /dev/null answers poll() with the default mask but refuses epoll. */
	cr_expect_eq(add_poll(&k, fd, KEVENT_POLL_POLLPRI, 0, &res), -EINVAL);
	close(fd);
}

/* D14: a regular file is always ready; with no such bit asked, never. */
Test(poll, regular_file)
{
	struct korigin_result res;
	struct korigins_stats st;
	struct kitem k;
	char path[] = "/tmp/korigins-regXXXXXX";
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	unlink(path);
	cr_expect_eq(add_poll(&k, fd, KEVENT_POLL_POLLIN | KEVENT_POLL_POLLOUT |
			      KEVENT_POLL_POLLPRI, 0, &res), 1);
	cr_expect_eq(res.ret_data[0], KEVENT_POLL_POLLIN | KEVENT_POLL_POLLOUT);
	cr_expect_eq(add_poll(&k, fd, KEVENT_POLL_POLLPRI, 0, &res), 0);
	stats(&st);
	cr_expect_eq(st.fd_watches, 1);
	rec_idle(20);
	cr_expect_eq(rec_fires(&k), 0);
	rec_remove(&k);
	close(fd);
}

Test(poll, caller_identity)
{
	struct ukevent uk = { .type = KEVENT_POLL, .event = KEVENT_POLL_POLLIN };
	struct kcaller who = { 0 };
	struct korigin_result res;
	struct kitem k;
	int p[2];

	cr_assert_eq(pipe(p), 0);
	uk.id.raw[0] = (__u32)p[0];
	cr_expect_eq(rec_add(&k, &uk, &who, &res), -EPERM, "pid not visible (B2)");
	who = rec_self();
	who.tgid = 0;	/* only the thread id: mapped through /proc */
	cr_expect_eq(rec_add(&k, &uk, &who, &res), 0);
	rec_remove(&k);
	close(p[0]);
	close(p[1]);
}

/* The fd lives in another process: the pidfd path for real. */
Test(poll, fd_of_another_process)
{
	struct korigin_result res;
	struct kitem k;
	int ctl[2], p[2], fd;
	char c = 0;
	pid_t child;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, ctl), 0);
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		close(ctl[0]);
		if (pipe(p) < 0)
			_exit(1);
		/* Tell the parent the fd number; write when told to. */
		if (write(ctl[1], &p[0], sizeof(p[0])) != sizeof(p[0]))
			_exit(1);
		if (read(ctl[1], &c, 1) != 1 || write(p[1], "x", 1) != 1)
			_exit(1);
		if (read(ctl[1], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(ctl[1]);
	cr_assert_eq(read(ctl[0], &fd, sizeof(fd)), sizeof(fd));
	{
		struct ukevent uk = {
			.id.raw = { (__u32)fd, 0 },
			.type = KEVENT_POLL,
			.event = KEVENT_POLL_POLLIN,
		};
		struct kcaller who = { .tid = child, .tgid = child };

		cr_assert_eq(rec_add(&k, &uk, &who, &res), 0);
	}
	cr_assert_eq(write(ctl[0], "g", 1), 1);
	cr_expect_eq(rec_wait_fires(&k, 1, WAIT_MS), 1, "the child's pipe became readable");
	cr_expect_eq(k.last.ret_data[0], KEVENT_POLL_POLLIN);
	close(ctl[0]);
	waitpid(child, NULL, 0);
	rec_remove(&k);
}

struct writer_arg {
	int *wfds;
	int n;
	volatile int stop;
};

static void *writer(void *arg)
{
	struct writer_arg *w = arg;
	int i = 0;

	while (!w->stop) {
		if (write(w->wfds[i], "x", 1) < 0)
			break;
		i = (i + 1) % w->n;
	}
	return NULL;
}

/* REMOVE while the reactor fires: no fire after detach returns. */
Test(poll, remove_races_firing)
{
	enum { N = 64, ROUNDS = 30 };
	struct kitem k[N];
	int r[N], wfd[N], p[2], i, round;
	struct writer_arg wa = { .wfds = wfd, .n = N };
	struct korigin_result res;
	pthread_t th;
	unsigned int fired = 0;

	for (i = 0; i < N; i++) {
		cr_assert_eq(pipe2(p, O_NONBLOCK), 0);
		r[i] = p[0];
		wfd[i] = p[1];
	}
	cr_assert_eq(pthread_create(&th, NULL, writer, &wa), 0);
	for (round = 0; round < ROUNDS; round++) {
		for (i = 0; i < N; i++) {
			char buf[4096];

			while (read(r[i], buf, sizeof(buf)) > 0)
				;
			if (add_poll(&k[i], r[i], KEVENT_POLL_POLLIN, 0, &res) == 1)
				k[i].registered = 0;
		}
		for (i = 0; i < N; i++) {
			if (k[i].registered) {
				rec_remove(&k[i]);
				fired += k[i].fires;
			}
			cr_assert_eq(k[i].violations, 0, "fire after REMOVE");
		}
	}
	wa.stop = 1;
	pthread_join(th, NULL);
	for (i = 0; i < N; i++) {
		close(r[i]);
		close(wfd[i]);
	}
	cr_log_info("fires during the race: %u", fired);
}

struct unshared {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pid_t tid;
	int done;
	int do_unshare;
};

static void *table_thread(void *arg)
{
	struct unshared *u = arg;

	if (u->do_unshare && unshare(CLONE_FILES) < 0)
		u->do_unshare = -errno;
	pthread_mutex_lock(&u->lock);
	u->tid = (pid_t)syscall(SYS_gettid);
	pthread_cond_broadcast(&u->cond);
	while (!u->done)
		pthread_cond_wait(&u->cond, &u->lock);
	pthread_mutex_unlock(&u->lock);
	return NULL;
}

/* B2: the fd number of a thread with its own file table names another file. */
static int add_as_thread(int do_unshare, int fd)
{
	struct unshared u = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
		.do_unshare = do_unshare,
	};
	struct ukevent uk = { .id.raw = { (__u32)fd, 0 }, .type = KEVENT_POLL,
			      .event = KEVENT_POLL_POLLIN };
	struct korigin_result res;
	struct kcaller who;
	struct kitem k;
	pthread_t th;
	int ret;

	cr_assert_eq(pthread_create(&th, NULL, table_thread, &u), 0);
	pthread_mutex_lock(&u.lock);
	while (!u.tid)
		pthread_cond_wait(&u.cond, &u.lock);
	pthread_mutex_unlock(&u.lock);
	cr_assert_geq(u.do_unshare, 0, "unshare(CLONE_FILES): %s", strerror(-u.do_unshare));
	who = (struct kcaller){ .tid = u.tid, .tgid = getpid() };
	ret = rec_add(&k, &uk, &who, &res);
	if (ret == 0)
		rec_remove(&k);
	pthread_mutex_lock(&u.lock);
	u.done = 1;
	pthread_cond_broadcast(&u.cond);
	pthread_mutex_unlock(&u.lock);
	pthread_join(th, NULL);
	return ret;
}

Test(poll, thread_with_own_file_table_is_refused)
{
	int p[2];

	cr_assert_eq(pipe(p), 0);
	cr_expect_eq(add_as_thread(0, p[0]), 0, "a thread sharing the table is fine");
	cr_expect_eq(add_as_thread(1, p[0]), -EPERM);
	close(p[0]);
	close(p[1]);
}

/* ---- closers: one per uid (B3, B7) ---- */

static int add_poll_as(struct kitem *k, int fd, uid_t uid)
{
	struct ukevent uk = {
		.id.raw = { (__u32)fd, 0 },
		.type = KEVENT_POLL,
		.event = KEVENT_POLL_POLLIN,
	};
	struct kcaller who = rec_self();
	struct korigin_result res;

	who.uid = uid;
	return rec_add(k, &uk, &who, &res);
}

/* A TCP socket whose last close waits: unsent data, a full peer, SO_LINGER 2 s. */
static int lingering_socket(int *peer, int *listener)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct linger lg = { 1, 2 };
	socklen_t alen = sizeof(a);
	static char junk[65536];
	int c;

	*listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(*listener, 0);
	cr_assert_eq(bind(*listener, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(*listener, 1), 0);
	cr_assert_eq(getsockname(*listener, (struct sockaddr *)&a, &alen), 0);
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_eq(connect(c, (struct sockaddr *)&a, sizeof(a)), 0);
	*peer = accept4(*listener, NULL, NULL, SOCK_CLOEXEC);
	cr_assert_geq(*peer, 0);
	fcntl(c, F_SETFL, O_NONBLOCK);
	while (write(c, junk, sizeof(junk)) > 0)
		;
	fcntl(c, F_SETFL, 0);
	cr_assert_eq(setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
	return c;
}

static __u64 mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + (__u64)ts.tv_nsec / 1000000;
}

/*
 * uid A's duplicate takes 2 s to close (the last reference of a lingering
 * socket); uid B's duplicate, queued just after it, is closed at once by
 * B's own closer thread.
 */
Test(poll, a_slow_close_delays_only_its_own_uid)
{
	struct korigins_stats st;
	struct kitem ka, kb;
	int peer, listener, p[2], c = lingering_socket(&peer, &listener);
	__u64 t0, quick = 0;

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(add_poll_as(&ka, c, 5000), 0);
	cr_assert_eq(add_poll_as(&kb, p[0], 5001), 0);
	close(c);		/* the origin's duplicate is now the last reference */
	t0 = mono_ms();
	rec_remove(&ka);	/* A's closer blocks in close() for up to 2 s */
	usleep(100000);		/* so that it is inside that close() */
	rec_remove(&kb);
	while (mono_ms() - t0 < 5000) {
		korigins_stats(&st);
		if (st.closer_pending <= 1 && !quick)
			quick = mono_ms() - t0;
		if (!st.closer_pending)
			break;
		usleep(5000);
	}
	korigins_stats(&st);
	cr_expect_eq(st.closer_threads, 2, "one closer thread per uid");
	cr_expect(quick && quick < 1000, "uid B's close waited %llu ms behind uid A's",
		  (unsigned long long)quick);
	cr_expect_geq(mono_ms() - t0, 1000, "the lingering close did not wait: the test proves nothing");
	cr_expect_eq(st.closer_pending, 0);
	close(peer);
	close(listener);
	close(p[0]);
	close(p[1]);
}

/*
 * A6 and MODIFY (design.md section 4): a MODIFY that finds the fd ready
 * readies the kevent itself, and the EPOLL_CTL_MOD (or, for a stopped
 * ONESHOT, the _ADD) it made reports that same readiness to the reactor as
 * one more edge.  The edge must be taken before MODIFY returns: taken after
 * the caller dequeued the kevent, it readied it a second time with no new
 * activity.  Without a reactor thread the test decides when a round runs,
 * so "the caller dequeued, then the reactor ran" is exact here, where a
 * client test against a daemon can only hope the reactor is late.
 */
static void modify_ready_then_round(__u32 req_flags)
{
	struct korigin_result res;
	struct kitem k;
	int p[2];

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(add_poll(&k, p[0], KEVENT_POLL_POLLIN, req_flags, &res), 0);
	cr_assert_eq(write(p[1], "x", 1), 1);
	cr_assert_eq(rec_wait_fires(&k, 1, WAIT_MS), 1, "the write never fired");
	cr_assert_eq(rec_dequeue(&k, NULL), 1);
	k.stopped = 0;	/* the core's MODIFY clears a ONESHOT's stop */

	cr_assert_eq(rec_modify(&k, KEVENT_POLL_POLLIN, req_flags, &res), 1,
		     "MODIFY found the fd ready");
	cr_assert_eq(res.ret_data[0], KEVENT_POLL_POLLIN);
	rec_dequeue(&k, NULL);	/* the caller takes what MODIFY readied */
	while (korigins_run(0) > 0)	/* the reactor's next rounds */
		;
	cr_assert_eq(rec_dequeue(&k, NULL), 0,
		     "ready again after the dequeue with no new activity (%u fires)", k.fires);
	cr_assert_eq(k.violations, 0u);
	rec_remove(&k);
	close(p[0]);
	close(p[1]);
}

static void setup_nothread(void)
{
	signal(SIGPIPE, SIG_IGN);
	rec_setup(KORIGINS_NO_THREAD);
}

TestSuite(poll_rounds, .init = setup_nothread, .fini = rec_teardown);

Test(poll_rounds, modify_of_ready_fd_takes_its_edge_before_returning)
{
	modify_ready_then_round(0);
}

Test(poll_rounds, modify_rearming_ready_oneshot_takes_its_edge_before_returning)
{
	modify_ready_then_round(KEVENT_REQ_ONESHOT);
}

/* D69's check as the daemon makes it, with kcmp on this process's table. */
static char fdcheck_log[8][160];
static int fdcheck_logged;

static void fdcheck_log_line(const char *line)
{
	if (fdcheck_logged < 8)
		snprintf(fdcheck_log[fdcheck_logged], sizeof(fdcheck_log[0]), "%s", line);
	fdcheck_logged++;
}

static void setup_fdcheck(void)
{
	struct korigins_config cfg = { .log = fdcheck_log_line };

	signal(SIGPIPE, SIG_IGN);
	rec_setup_cfg(&cfg);
}

TestSuite(poll_fdcheck, .init = setup_fdcheck, .fini = rec_teardown);

static int fd_check(struct kitem *k, pid_t tid)
{
	struct kcaller c = rec_self();

	c.tid = tid;
	return rec_ops(KEVENT_POLL)->fd_check(k, &c);
}

/* The file, not the number: the same number on another pipe is stale. */
Test(poll_fdcheck, the_number_on_another_file_is_stale)
{
	pid_t self = (pid_t)syscall(SYS_gettid);
	struct korigin_result res;
	struct kitem k;
	int p[2], q[2];

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(pipe(q), 0);
	cr_assert_eq(add_poll(&k, p[0], KEVENT_POLL_POLLIN, 0, &res), 0);
	cr_expect_eq(fd_check(&k, self), 0, "the fd still names its file");
	cr_assert_eq(dup2(q[0], p[0]), p[0]);
	cr_expect_eq(fd_check(&k, self), -EBADF, "the number names another pipe");
	cr_assert_eq(close(p[0]), 0);
	cr_expect_eq(fd_check(&k, self), -EBADF, "the number is closed");
	cr_expect_eq(fdcheck_logged, 0, "a check kcmp answered is not logged");
	rec_remove(&k);
	close(p[1]);
	close(q[0]);
	close(q[1]);
}

/*
 * A caller outside the daemon's pid namespace (tid 0: a queue passed to a
 * process the daemon cannot see) has no table kcmp can name: the record
 * goes out unchecked, stale or not, and the first such one is logged.
 */
Test(poll_fdcheck, a_caller_out_of_sight_is_unchecked_and_logged)
{
	struct korigin_result res;
	struct kitem k;
	int p[2];

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(add_poll(&k, p[0], KEVENT_POLL_POLLIN, 0, &res), 0);
	cr_assert_eq(close(p[0]), 0);
	cr_expect_eq(fd_check(&k, 0), 0, "no table to ask: delivered unchecked");
	cr_expect_eq(fd_check(&k, 0), 0);
	cr_assert_eq(fdcheck_logged, 1, "the first unchecked record is logged, the next not: %d",
		     fdcheck_logged);
	cr_expect(strstr(fdcheck_log[0], "kcmp refused") && strstr(fdcheck_log[0], "D69"),
		  "log line: %s", fdcheck_log[0]);
	cr_expect(strstr(fdcheck_log[0], strerror(ESRCH)), "names why: %s", fdcheck_log[0]);
	rec_remove(&k);
	close(p[1]);
}
