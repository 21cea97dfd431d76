// SPDX-License-Identifier: GPL-2.0
/*
 * The poll origin end to end: pipes and socketpairs, ret_data[0] = bits
 * that fired ∩ event with POLLHUP/POLLERR as ordinary bits (A8, D13),
 * regular files (D14), edge-like re-fire (A6, D21), held files (A7), the
 * anon-inode kinds of D39; revision 4: the count in ret_data[1] (D67).
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ktest.h"

#define P(x) KEVENT_POLL_##x

static void fill_pipe(int wfd)
{
	char buf[4096] = { 0 };
	int fl = fcntl(wfd, F_GETFL);

	fcntl(wfd, F_SETFL, fl | O_NONBLOCK);
	while (write(wfd, buf, sizeof(buf)) > 0)
		;
	cr_assert_eq(errno, EAGAIN);
	while (write(wfd, buf, 1) > 0)
		;
	fcntl(wfd, F_SETFL, fl);
}

KTEST(poll, pipe_readable)
{
	int kfd = kt_open(O_RDWR), p[2];

	kt_pipe(p);
	kt_add_queued(kfd, kt_uk_poll(p[0], P(POLLIN) | P(POLLRDNORM) | P(POLLPRI) | P(POLLOUT), 0, 1));
	kt_assert_quiet(kfd, 100, "empty pipe");
	kt_write1(p[1]);
	struct ukevent e = kt_get_one(kfd, "pipe with data");
	cr_assert_eq(e.type, (__u32)KEVENT_POLL);
	cr_assert_eq(e.id.raw[0], (__u32)p[0]);
	cr_assert_eq(e.user[0], 1u);
	cr_assert_eq(e.user[1], ~1u);
	cr_assert_eq(e.ret_flags, (__u32)KEVENT_RET_DONE, "ret_flags %#x", e.ret_flags);
	cr_assert_eq(e.ret_data[0], (__u32)(P(POLLIN) | P(POLLRDNORM)), "ret_data[0] %#x, want fired ∩ event",
		     e.ret_data[0]);
	close(kfd);
}

KTEST(poll, ready_at_add_ret_data)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent uk[2];

	kt_pipe(p);
	kt_write1(p[1]);
	uk[0] = kt_uk_poll(p[0], P(POLLIN) | P(POLLHUP), 0, 1);
	uk[1] = kt_uk_poll(p[1], P(POLLWRNORM) | P(POLLIN), KEVENT_REQ_ONESHOT, 2);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 2, uk), 2);
	cr_assert_eq(uk[0].ret_data[0], (__u32)P(POLLIN), "read end: %#x", uk[0].ret_data[0]);
	cr_assert_eq(uk[1].ret_data[0], (__u32)P(POLLWRNORM), "write end: %#x", uk[1].ret_data[0]);
	cr_assert_eq(uk[0].ret_flags, (__u32)KEVENT_RET_DONE, "D5: DONE on ready-at-ADD");
	cr_assert_eq(uk[1].ret_flags, (__u32)KEVENT_RET_DONE);
	cr_assert_eq(kt_queue_kevents(kfd), 0u);
	close(kfd);
}

/* A8: a hangup or error bit is reported like any other and breaks nothing. */
static void assert_plain_bit(struct ukevent e, unsigned int bit, const char *name)
{
	cr_assert_eq(e.ret_flags, (__u32)KEVENT_RET_DONE, "%s must not break a POLL kevent (A8): %#x",
		     name, e.ret_flags);
	cr_assert_eq(e.ret_data[0], (__u32)bit, "ret_data[0] %#x, want %s", e.ret_data[0], name);
}

/* POLLHUP is an ordinary bit: reported when asked, in ret_data[0]. */
KTEST(poll, pipe_hangup_bit)
{
	int kfd = kt_open(O_RDWR), p[2];

	kt_pipe(p);
	kt_add_queued(kfd, kt_uk_poll(p[0], P(POLLIN) | P(POLLHUP), 0, 1));
	close(p[1]);
	assert_plain_bit(kt_get_one(kfd, "writer closed"), P(POLLHUP), "POLLHUP");
	close(kfd);
}

/* POLLHUP not asked for: nothing fires on hangup. */
KTEST(poll, hangup_not_asked)
{
	int kfd = kt_open(O_RDWR), p[2];

	kt_pipe(p);
	kt_add_queued(kfd, kt_uk_poll(p[0], P(POLLPRI), 0, 1));
	close(p[1]);
	kt_assert_quiet(kfd, 300, "POLLPRI kevent on a hung-up pipe");
	close(kfd);
}

KTEST(poll, pipe_error_bit)
{
	int kfd = kt_open(O_RDWR), p[2];

	signal(SIGPIPE, SIG_IGN);
	kt_pipe(p);
	fill_pipe(p[1]);
	kt_add_queued(kfd, kt_uk_poll(p[1], P(POLLOUT) | P(POLLERR), 0, 1));
	close(p[0]);
	assert_plain_bit(kt_get_one(kfd, "reader closed"), P(POLLERR), "POLLERR");
	close(kfd);
}

KTEST(poll, pipe_writable_after_drain)
{
	int kfd = kt_open(O_RDWR), p[2];
	char buf[65536];

	kt_pipe(p);
	fill_pipe(p[1]);
	kt_add_queued(kfd, kt_uk_poll(p[1], P(POLLOUT) | P(POLLWRNORM), 0, 1));
	kt_assert_quiet(kfd, 100, "full pipe");
	while (kt_poll1(p[0], POLLIN, 0) & POLLIN)
		cr_assert(read(p[0], buf, sizeof(buf)) > 0);
	struct ukevent e = kt_get_one(kfd, "drained pipe");
	cr_assert_eq(e.ret_data[0], (__u32)(P(POLLOUT) | P(POLLWRNORM)), "ret_data[0] %#x", e.ret_data[0]);
	close(kfd);
}

static void socketpair_case(int type)
{
	int kfd = kt_open(O_RDWR), sv[2];

	kt_socketpair(type, sv);
	kt_add_queued(kfd, kt_uk_poll(sv[0], P(POLLIN) | P(POLLRDNORM) | P(POLLHUP), 0, 1));
	kt_assert_quiet(kfd, 100, "empty socket");
	cr_assert_eq(send(sv[1], "ab", 2, 0), 2);
	struct ukevent e = kt_get_one(kfd, "socket with data");
	cr_assert_eq(e.ret_data[0], (__u32)(P(POLLIN) | P(POLLRDNORM)), "type %d ret_data[0] %#x", type,
		     e.ret_data[0]);
	char buf[8];
	cr_assert_eq(recv(sv[0], buf, sizeof(buf), 0), 2);
	close(sv[1]);
	e = kt_get_one(kfd, "peer closed");
	cr_assert(e.ret_data[0] & P(POLLHUP), "type %d: peer close gave ret_data[0] %#x", type,
		  e.ret_data[0]);
	cr_assert_eq(e.ret_data[0] & ~(__u32)(P(POLLIN) | P(POLLRDNORM) | P(POLLHUP)), 0u,
		     "bits outside event: %#x", e.ret_data[0]);
	cr_assert_eq(e.ret_flags, (__u32)KEVENT_RET_DONE);
	close(kfd);
}

KTEST(poll, socketpair_stream) { socketpair_case(SOCK_STREAM); }
KTEST(poll, socketpair_dgram_seqpacket)
{
	socketpair_case(SOCK_SEQPACKET);
	int kfd = kt_open(O_RDWR), sv[2];

	kt_socketpair(SOCK_DGRAM, sv);
	kt_add_queued(kfd, kt_uk_poll(sv[0], P(POLLIN), 0, 1));
	cr_assert_eq(send(sv[1], "a", 1, 0), 1);
	struct ukevent e = kt_get_one(kfd, "datagram");
	cr_assert_eq(e.ret_data[0], (__u32)P(POLLIN));
	close(kfd);
}

/* The writer of hangup_racing_data_not_lost: bytes, then its end closed. */
static void *bytes_then_close(void *arg)
{
	int fd = *(int *)arg;

	for (int i = 0; i < 16 && write(fd, "x", 1) == 1; i++)
		;
	close(fd);
	return NULL;
}

/*
 * One round of hangup_racing_data_not_lost on a stream socketpair or a
 * pipe: the reader takes the events and reads what came until one says
 * POLLHUP.  A socket's hang-up is readable (EOF: POLLIN with it every
 * time); a drained pipe's is POLLHUP alone.
 */
static void hangup_race_round(bool pipe, int round)
{
	const __u32 ev = P(POLLIN) | P(POLLHUP) | P(POLLERR);
	int kfd = kt_open(O_RDWR), fds[2];
	struct ukevent e = { 0 };
	pthread_t th;
	char buf[64];

	if (pipe)
		kt_pipe(fds);
	else
		kt_socketpair(SOCK_STREAM, fds);
	cr_assert_eq(fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);
	kt_add_queued(kfd, kt_uk_poll(fds[0], ev, 0, 1));
	cr_assert_eq(pthread_create(&th, NULL, bytes_then_close, &fds[1]), 0);
	while (!(e.ret_data[0] & P(POLLHUP))) {
		e = kt_get_one(kfd, "data or the hang-up");
		cr_assert_eq(e.ret_data[0] & ~ev, 0u, "%s round %d: bits outside event: %#x",
			     pipe ? "pipe" : "socket", round, e.ret_data[0]);
		cr_assert(pipe || (e.ret_data[0] & P(POLLIN)), "socket round %d: %#x without POLLIN",
			  round, e.ret_data[0]);
		while (read(fds[0], buf, sizeof(buf)) > 0)
			;
	}
	cr_assert_eq(pthread_join(th, NULL), 0);
	close(fds[0]);
	close(kfd);
}

/*
 * A8, D13: a hang-up racing data wakeups is never lost, and every result
 * is what a poll of the file gives (∩ event): the kqueue front's
 * EVFILT_READ asks POLLIN | POLLHUP | POLLERR, and a data wakeup's key
 * carries POLLIN alone.  A thread writes bytes and closes its end while
 * the reader takes events and reads what came; an event must come that
 * says POLLHUP.  40 rounds each on a stream socketpair and a pipe.
 */
KTEST(poll, hangup_racing_data_not_lost)
{
	for (int round = 0; round < 40; round++) {
		hangup_race_round(false, round);
		hangup_race_round(true, round);
	}
}

/* A connected pair of UDP sockets on the loopback address. */
static void udp_pair(int sv[2])
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);

	for (int i = 0; i < 2; i++) {
		sv[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		cr_assert(sv[i] >= 0, "UDP socket: %s", strerror(errno));
		a.sin_port = 0;
		cr_assert_eq(bind(sv[i], (struct sockaddr *)&a, sizeof(a)), 0);
	}
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(getsockname(sv[1 - i], (struct sockaddr *)&a, &len), 0);
		cr_assert_eq(connect(sv[i], (struct sockaddr *)&a, sizeof(a)), 0);
	}
}

/*
 * A8: the bits reported are what a poll of the file gives, never a
 * wake-up's key: a socket's data wake-up names POLLIN, POLLPRI,
 * POLLRDNORM and POLLRDBAND whatever came, so a kevent asking POLLIN |
 * POLLPRI | POLLRDBAND of a socket that received plain bytes gets POLLIN
 * alone (the lockstep fuzzer's finding on the module).  A stream and a
 * datagram AF_UNIX pair and a UDP pair (the module polls the first two in
 * the waker, the last in its kworker).
 */
KTEST(poll, socket_wakeup_key_is_no_state)
{
	const __u32 ev = P(POLLIN) | P(POLLPRI) | P(POLLRDBAND);
	static const char *const names[3] = { "AF_UNIX stream", "AF_UNIX datagram", "UDP" };

	for (int t = 0; t < 3; t++) {
		int kfd = kt_open(O_RDWR), sv[2];

		if (t < 2)
			kt_socketpair(t ? SOCK_DGRAM : SOCK_STREAM, sv);
		else
			udp_pair(sv);
		kt_add_queued(kfd, kt_uk_poll(sv[0], ev, 0, 1));
		kt_write1(sv[1]);
		struct ukevent e = kt_get_one(kfd, names[t]);

		cr_assert_eq(e.ret_data[0], (__u32)P(POLLIN), "%s: %#x, a poll says POLLIN",
			     names[t], e.ret_data[0]);
		close(sv[0]);
		close(sv[1]);
		close(kfd);
	}
}

/* D14: a regular file is always ready at ADD. */
KTEST(poll, regular_file_always_ready)
{
	int kfd = kt_open(O_RDWR);
	char path[] = "/tmp/kt-regular-XXXXXX";
	int f = mkstemp(path);
	int ro;
	struct ukevent uk[3];

	cr_assert(f >= 0);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert(ro >= 0);
	unlink(path);
	uk[0] = kt_uk_poll(f, KEVENT_MASK_ALL, 0, 1);
	uk[1] = kt_uk_poll(ro, P(POLLOUT) | P(POLLPRI), 0, 2);
	uk[2] = kt_uk_poll(f, P(POLLPRI) | P(POLLHUP) | P(POLLERR), 0, 3);	/* none of the four */
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 3, uk), 2);
	cr_assert_eq(uk[0].user[0], 1u);
	cr_assert_eq(uk[0].ret_flags, (__u32)KEVENT_RET_DONE);
	cr_assert_eq(uk[0].ret_data[0], (__u32)(P(POLLIN) | P(POLLOUT) | P(POLLRDNORM) | P(POLLWRNORM)),
		     "regular file ret_data[0] %#x", uk[0].ret_data[0]);
	cr_assert_eq(uk[1].user[0], 2u);
	cr_assert_eq(uk[1].ret_data[0], (__u32)P(POLLOUT), "O_RDONLY regular file: %#x", uk[1].ret_data[0]);
	cr_assert_eq(kt_queue_kevents(kfd), 1u, "a regular-file kevent without those bits is registered");
	cr_assert_eq(write(f, "data", 4), 4);
	kt_assert_quiet(kfd, 200, "regular file kevent without IN/OUT bits");
	close(f);
	close(ro);
	close(kfd);
}

/* A6: edge-like.  A condition that holds does not re-fire; new activity does. */
KTEST(poll, refire_is_edge_like)
{
	int kfd = kt_open(O_RDWR), p[2];

	kt_pipe(p);
	kt_add_queued(kfd, kt_uk_poll(p[0], P(POLLIN), 0, 1));
	kt_write1(p[1]);
	kt_get_one(kfd, "first write");
	/* Data still unread: level-triggered would fire again. */
	kt_assert_quiet(kfd, 300, "pipe still readable, no new activity (A6)");
	kt_write1(p[1]);
	kt_get_one(kfd, "second write");
	kt_assert_quiet(kfd, 200, "after the second delivery");
	kt_read_all(p[0]);
	kt_write1(p[1]);
	kt_get_one(kfd, "third write");
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	close(kfd);
}

/* D21: activity that does not match (the socket becomes writable) does not re-fire. */
KTEST(poll, no_sticky_done_refire)
{
	int kfd = kt_open(O_RDWR), sv[2];
	char buf[256];

	kt_socketpair(SOCK_STREAM, sv);
	kt_add_queued(kfd, kt_uk_poll(sv[0], P(POLLIN), 0, 1));
	cr_assert_eq(send(sv[1], "x", 1, 0), 1);
	kt_get_one(kfd, "data");
	cr_assert_eq(recv(sv[0], buf, sizeof(buf), 0), 1);
	/* sv[0] sends, the peer reads: sv[0]'s wait queue is woken for POLLOUT. */
	for (int i = 0; i < 5; i++) {
		cr_assert_eq(send(sv[0], "y", 1, 0), 1);
		cr_assert_eq(recv(sv[1], buf, sizeof(buf), 0), 1);
	}
	kt_assert_quiet(kfd, 300, "POLLIN kevent re-fired on non-matching activity (D21)");
	cr_assert_eq(send(sv[1], "z", 1, 0), 1);
	struct ukevent e = kt_get_one(kfd, "new data");
	cr_assert_eq(e.ret_flags, (__u32)KEVENT_RET_DONE, "ret_flags rebuilt on every fire: %#x", e.ret_flags);
	close(kfd);
}

KTEST(poll, oneshot_removed_after_delivery)
{
	int kfd = kt_open(O_RDWR), p[2];

	kt_pipe(p);
	kt_add_queued(kfd, kt_uk_poll(p[0], P(POLLIN), KEVENT_REQ_ONESHOT, 1));
	kt_write1(p[1]);
	kt_get_one(kfd, "oneshot");
	cr_assert_eq(kt_queue_kevents(kfd), 0u);
	kt_write1(p[1]);
	kt_assert_quiet(kfd, 200, "ONESHOT fired twice");
	close(kfd);
}

/*
 * MODIFY re-arms a fired ONESHOT kevent (kcore.h MODIFY: the origin
 * re-evaluates; A6 after that): here it also drops ONESHOT, so the kevent
 * stays after delivery and a new write fires it again.  Found by the
 * lockstep device fuzzer (corpus lockstep-modify-rearms-oneshot).
 */
KTEST(poll, modify_rearms_a_fired_oneshot)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent uk;

	kt_pipe(p);
	uk = kt_uk_poll(p[0], P(POLLIN), KEVENT_REQ_ONESHOT, 1);
	kt_add_queued(kfd, uk);
	kt_write1(p[1]);
	cr_assert_eq(kt_wait_ready(kfd, 1, 5000), 1, "the ONESHOT kevent never fired");
	uk.req_flags = 0;
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &uk, 0);
	kt_get_one(kfd, "the first write");
	cr_assert_eq(kt_queue_kevents(kfd), 1u, "no longer ONESHOT: stays registered");
	kt_write1(p[1]);
	kt_get_one(kfd, "a write after the MODIFY (re-armed)");
	close(kfd);
}

/*
 * A7: the kevent holds the file: the client's close neither removes nor
 * breaks it.  From revision 4 the close makes its records BROKEN -EBADF
 * (D69: poll/fd_check_stale_still_holds_the_file).
 */
KTEST_REVS(poll, held_file_survives_close, 1, 3)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent uk;

	signal(SIGPIPE, SIG_IGN);
	kt_pipe(p);
	uk = kt_uk_poll(p[0], P(POLLIN), 0, 1);
	kt_add_queued(kfd, uk);
	close(p[0]);
	cr_assert_eq(kt_queue_kevents(kfd), 1u, "close() removed the kevent (A7)");
	/* The read end still exists: the write succeeds, the kevent fires. */
	cr_assert_eq(write(p[1], "a", 1), 1, "write after the client closed its read end: %s",
		     strerror(errno));
	struct ukevent e = kt_get_one(kfd, "held read end");
	cr_assert_eq(e.ret_flags, (__u32)KEVENT_RET_DONE, "close() broke the kevent: %#x", e.ret_flags);
	cr_assert_eq(e.ret_data[0], (__u32)P(POLLIN));
	/* REMOVE by the old fd number and cookie releases the file: EPIPE follows. */
	kt_remove(kfd, uk);
	int r = -1, err = 0;
	for (int i = 0; i < 500; i++) {
		r = (int)write(p[1], "b", 1);
		err = errno;
		if (r < 0)
			break;
		kt_sleep_ms(10);
	}
	cr_assert(r < 0 && err == EPIPE, "the read end was not released after REMOVE");
	close(p[1]);
	close(kfd);
}

/* A7: no EOF for the peer until REMOVE. */
KTEST(poll, held_file_no_eof_until_remove)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent uk;

	kt_pipe(p);
	uk = kt_uk_poll(p[1], P(POLLERR), 0, 1);	/* not ready while a reader exists */
	kt_add_queued(kfd, uk);
	close(p[1]);
	cr_assert_eq(kt_poll1(p[0], POLLIN, 300), 0, "the reader saw EOF after the client's close (A7)");
	kt_remove(kfd, uk);
	cr_assert(kt_poll1(p[0], POLLIN, 10000) & POLLHUP, "no EOF after REMOVE");
	close(p[0]);
	close(kfd);
}

/* Closing the queue releases the held files too. */
KTEST(poll, queue_close_releases_files)
{
	int kfd = kt_open(O_RDWR), p[2];

	kt_pipe(p);
	kt_add_queued(kfd, kt_uk_poll(p[1], P(POLLERR), 0, 1));
	kt_add_queued(kfd, kt_uk_poll(p[1], P(POLLERR), 0, 2));
	close(p[1]);
	cr_assert_eq(kt_poll1(p[0], POLLIN, 200), 0, "EOF while the kevents exist");
	close(kfd);
	cr_assert(kt_poll1(p[0], POLLIN, 10000) & POLLHUP, "no EOF after the queue was closed");
	close(p[0]);
}

/* A fd number reused after close: the kevent keeps watching the old file. */
KTEST(poll, held_file_not_fd_number)
{
	int kfd = kt_open(O_RDWR), p[2], q[2];

	kt_pipe(p);
	kt_add_queued(kfd, kt_uk_poll(p[0], P(POLLIN), 0, 1));
	int num = p[0];
	close(p[0]);
	kt_pipe(q);	/* likely reuses num */
	if (q[0] != num && q[1] != num)
		dup2(q[0], num);
	kt_write1(q[1]);
	kt_assert_quiet(kfd, 300, "the kevent followed the fd number to a new file");
	kt_write1(p[1]);
	kt_get_one(kfd, "the original pipe");
	close(kfd);
}

/*
 * D39: a signalfd is refused per entry (its poll reports the polling
 * task's signals, never this caller's), even with a signal pending; the
 * entry next to it in the same call is registered.
 */
KTEST(poll, signalfd_refused)
{
	int kfd = kt_open(O_RDWR), p[2], sfd;
	sigset_t set, old;
	struct ukevent uk[2];

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	cr_assert_eq(sigprocmask(SIG_BLOCK, &set, &old), 0);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	cr_assert_geq(sfd, 0, "signalfd: %s", strerror(errno));
	cr_assert_eq(raise(SIGUSR1), 0);
	cr_assert_eq(kt_poll1(sfd, POLLIN, 0), POLLIN, "the signal is not pending here");
	kt_pipe(p);
	uk[0] = kt_uk_poll(p[0], P(POLLIN), 0, 1);
	uk[1] = kt_uk_poll(sfd, P(POLLIN), 0, 2);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 2, uk), 1, "one entry refused");
	cr_assert_eq(uk[0].user[0], 2u, "the signalfd entry comes back");
	cr_assert_eq(uk[0].ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE),
		     "ret_flags %#x", uk[0].ret_flags);
	cr_assert_eq((int)uk[0].ret_data[1], -EINVAL, "ret_data[1] %d", (int)uk[0].ret_data[1]);
	cr_assert_eq(kt_queue_kevents(kfd), 1u, "the pipe entry is registered");
	close(sfd);
	sigwaitinfo(&set, NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(kfd);
}

/*
 * D39: a pidfd is accepted (its poll depends on the process it names, not
 * on the task that polls): POLLIN when that process exits.
 */
KTEST(poll, pidfd_fires_on_exit)
{
	int kfd = kt_open(O_RDWR), p[2], pidfd;
	char c;
	pid_t child;

	kt_pipe(p);
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		close(p[1]);
		_exit(read(p[0], &c, 1) == 0 ? 0 : 1);
	}
	close(p[0]);
	pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	cr_assert_geq(pidfd, 0, "pidfd_open: %s", strerror(errno));
	kt_add_queued(kfd, kt_uk_poll(pidfd, P(POLLIN), 0, 1));
	kt_assert_quiet(kfd, 100, "the process is alive");
	close(p[1]);
	struct ukevent e = kt_get_one(kfd, "the process exited");
	cr_assert_eq(e.user[0], 1u);
	cr_assert_eq(e.ret_flags, (__u32)KEVENT_RET_DONE, "ret_flags %#x", e.ret_flags);
	cr_assert_eq(e.ret_data[0], (__u32)P(POLLIN), "ret_data[0] %#x", e.ret_data[0]);
	waitpid(child, NULL, 0);
	close(pidfd);
	close(kfd);
}

/*
 * Revision 1 is take13 (D40): the bits of KEVENT_REQ_ALWAYS_QUEUE (D42) and
 * KEVENT_REQ_LEVEL (D43) are unknown there and ignored (A1), and
 * POLLRDHUP is never reported (D52).  Each test below pins one of them for
 * POLL kevents; the same rules for the other types live in their files.
 */

/* D42, D31: on revision 1 a pipe ready at ADD is answered by ADD, ALWAYS_QUEUE or not. */
KTEST_REVS(poll, always_queue_ignored_on_rev1, 1, 1)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent uk;

	kt_pipe(p);
	kt_write1(p[1]);
	uk = kt_uk_poll(p[0], P(POLLIN), KEVENT_REQ_ALWAYS_QUEUE, 1);
	kt_ctl1(kfd, KEVENT_CTL_ADD, &uk, 1);
	cr_assert_eq(uk.ret_flags, (__u32)KEVENT_RET_DONE, "ret_flags %#x", uk.ret_flags);
	cr_assert_eq(uk.ret_data[0], (__u32)P(POLLIN), "ret_data[0] %#x", uk.ret_data[0]);
	cr_assert_eq(kt_queue_kevents(kfd), 0u, "registered: ALWAYS_QUEUE took effect on revision 1");
	cr_assert_eq(kt_queue_ready(kfd), 0u, "queued: ALWAYS_QUEUE took effect on revision 1");
	close(p[0]);
	close(p[1]);
	close(kfd);
}

/* D43, A6: on revision 1 LEVEL is ignored: data left unread is not reported again. */
KTEST_REVS(poll, level_ignored_on_rev1, 1, 1)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent out[4];

	kt_pipe(p);
	kt_add_queued(kfd, kt_uk_poll(p[0], P(POLLIN), KEVENT_REQ_LEVEL, 2));
	kt_write1(p[1]);
	cr_assert_eq(kt_get_one(kfd, "the write").user[0], 2u);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(kt_get(kfd, 0, 4, 0, out), 0,
			     "dequeue %d: the unread byte reported again (LEVEL on revision 1)", i);
	kt_write1(p[1]);
	cr_assert_eq(kt_get_one(kfd, "new activity").user[0], 2u);
	close(p[0]);
	close(p[1]);
	close(kfd);
}

/*
 * D52: on revision 1 the peer's shutdown of writing is no POLLRDHUP: a
 * kevent asking POLLIN|POLLRDHUP fires with POLLIN alone, and so does the
 * re-evaluation of a MODIFY; one asking POLLRDHUP alone never fires.
 */
KTEST_REVS(poll, no_pollrdhup_on_rev1, 1, 1)
{
	int kfd = kt_open(O_RDWR), sv[2];
	struct ukevent uk, only, e;

	kt_socketpair(SOCK_STREAM, sv);
	only = kt_uk_poll(sv[0], P(POLLRDHUP), 0, 3);
	kt_add_queued(kfd, only);
	uk = kt_uk_poll(sv[0], P(POLLIN) | P(POLLRDHUP), 0, 4);
	kt_add_queued(kfd, uk);
	cr_assert_eq(shutdown(sv[1], SHUT_WR), 0);
	e = kt_get_one(kfd, "the peer's shutdown");
	cr_assert_eq(e.user[0], 4u, "the POLLRDHUP-only kevent fired on revision 1");
	cr_assert_eq(e.ret_data[0], (__u32)P(POLLIN), "ret_data[0] %#x", e.ret_data[0]);
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &uk, 0);	/* re-evaluated at once: ready */
	e = kt_get_one(kfd, "MODIFY found it ready");
	cr_assert_eq(e.ret_data[0], (__u32)P(POLLIN), "after MODIFY: %#x", e.ret_data[0]);
	kt_assert_quiet(kfd, 100, "the POLLRDHUP-only kevent");
	close(sv[0]);
	close(sv[1]);
	close(kfd);
}

/*
 * From revision 2 on: ALWAYS_QUEUE (D42), LEVEL (D43), POLLRDHUP (D52).
 */

/* D42: a pipe ready at ADD is queued, not answered by ADD, and delivered once. */
KTEST_REVS(poll, always_queue_ready_at_add, 2, KTEST_OPEN)
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
KTEST_REVS(poll, always_queue_oneshot_and_without, 2, KTEST_OPEN)
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
KTEST_REVS(poll, level_reports_unread_data_again, 2, KTEST_OPEN)
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

/* D52: the peer's shutdown of writing is POLLRDHUP on revision 2, never on revision 1. */
KTEST_REVS(poll, pollrdhup_on_peer_shutdown, 2, KTEST_OPEN)
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

/* ---- revision 4: the count in ret_data[1] (D67) ---- */

/* D67: a pipe's free space as the rule states it: capacity less its bytes. */
static __u32 pipe_free(int fd)
{
	int cap = fcntl(fd, F_GETPIPE_SZ), n = -1;

	cr_assert(cap > 0, "F_GETPIPE_SZ: %s", strerror(errno));
	cr_assert_eq(ioctl(fd, FIONREAD, &n), 0, "FIONREAD: %s", strerror(errno));
	return (__u32)(cap - n);
}

/* D67: a socket's free space: its send buffer less what it queued. */
static __u32 sock_free(int fd)
{
	int size = 0, used = -1;
	socklen_t len = sizeof(size);

	cr_assert_eq(getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, &len), 0);
	cr_assert_eq(ioctl(fd, SIOCOUTQ, &used), 0, "SIOCOUTQ: %s", strerror(errno));
	return size > used ? (__u32)(size - used) : 0;
}

static void write_n(int fd, size_t n)
{
	char buf[256] = { 0 };

	cr_assert(n <= sizeof(buf));
	cr_assert_eq(write(fd, buf, n), (ssize_t)n, "write: %s", strerror(errno));
}

/*
 * D67: bytes readable, read at the delivery: bytes read after the fire
 * (no new POLLIN activity, so no fire) are not counted.
 */
KTEST_REVS(poll, data_pipe_bytes_readable, 4, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), p[2];
	char buf[8];

	kt_pipe(p);
	kt_add_queued(kfd, kt_uk_poll(p[0], P(POLLIN) | P(POLLRDNORM), 0, 1));
	write_n(p[1], 7);
	cr_assert(kt_wait_ready(kfd, 1, 5000), "the write fired");
	cr_assert_eq(read(p[0], buf, 3), 3);
	struct ukevent e = kt_get_one(kfd, "pipe with 7 bytes written, 3 read");
	cr_assert_eq(e.ret_flags, (__u32)KEVENT_RET_DONE);
	cr_assert_eq(e.ret_data[0], (__u32)(P(POLLIN) | P(POLLRDNORM)), "%#x", e.ret_data[0]);
	cr_assert_eq(e.ret_data[1], 4u, "D67: the bytes at the delivery, got %u", e.ret_data[1]);
	write_n(p[1], 5);
	e = kt_get_one(kfd, "five more");
	cr_assert_eq(e.ret_data[1], 9u, "D67: 4 + 5 bytes, got %u", e.ret_data[1]);
	close(p[0]);
	close(p[1]);
	close(kfd);
}

/* D67: a pipe's write end counts the free space, read at the delivery. */
KTEST_REVS(poll, data_pipe_free_space, 4, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), p[2];

	kt_pipe(p);
	write_n(p[1], 100);
	/* writable at ADD: ALWAYS_QUEUE (D42) queues it, so GET_EVENTS delivers it */
	kt_add_queued(kfd, kt_uk_poll(p[1], P(POLLOUT), KEVENT_REQ_ALWAYS_QUEUE, 2));
	write_n(p[1], 50);
	struct ukevent e = kt_get_one(kfd, "the write end");
	cr_assert_eq(e.ret_data[0], (__u32)P(POLLOUT), "%#x", e.ret_data[0]);
	cr_assert_eq(e.ret_data[1], pipe_free(p[1]), "D67: capacity less 150 bytes, got %u",
		     e.ret_data[1]);
	cr_assert_eq(e.ret_data[1], (__u32)fcntl(p[1], F_GETPIPE_SZ) - 150u);
	close(p[0]);
	close(p[1]);
	close(kfd);
}

/* D67: a stream socketpair: bytes readable, and the peer's free space. */
KTEST_REVS(poll, data_socketpair_bytes_readable, 4, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), sv[2];
	struct ukevent uk;

	kt_socketpair(SOCK_STREAM, sv);
	kt_add_queued(kfd, kt_uk_poll(sv[0], P(POLLIN), 0, 1));
	write_n(sv[1], 11);
	struct ukevent e = kt_get_one(kfd, "11 bytes sent");
	cr_assert_eq(e.ret_data[0], (__u32)P(POLLIN), "%#x", e.ret_data[0]);
	cr_assert_eq(e.ret_data[1], 11u, "D67: FIONREAD's 11, got %u", e.ret_data[1]);
	/* the sender's free space: its buffer less the 11 bytes' charge */
	__u32 before = sock_free(sv[1]);
	uk = kt_uk_poll(sv[1], P(POLLOUT) | P(POLLIN), 0, 2);
	kt_ctl1(kfd, KEVENT_CTL_ADD, &uk, 1);
	cr_assert_eq(uk.ret_data[0], (__u32)P(POLLOUT), "%#x", uk.ret_data[0]);
	cr_assert_eq(uk.ret_data[1], before, "D67: SO_SNDBUF - SIOCOUTQ %u, got %u", before,
		     uk.ret_data[1]);
	cr_assert_eq(before, sock_free(sv[1]), "nothing moved meanwhile");
	close(sv[0]);
	close(sv[1]);
	close(kfd);
}

/* D67, D31: an answer at ADD is a delivery and carries the count; a FIFO too. */
KTEST_REVS(poll, data_ready_at_add, 4, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), p[2], fifo;
	char path[] = "/tmp/kt-fifo-XXXXXX";
	struct ukevent uk[3];

	kt_pipe(p);
	write_n(p[1], 5);
	cr_assert(mkdtemp(path));
	char name[64];
	snprintf(name, sizeof(name), "%s/f", path);
	cr_assert_eq(mkfifo(name, 0600), 0, "mkfifo: %s", strerror(errno));
	fifo = open(name, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	cr_assert(fifo >= 0, "open FIFO: %s", strerror(errno));
	unlink(name);
	rmdir(path);
	write_n(fifo, 9);
	uk[0] = kt_uk_poll(p[0], P(POLLIN), 0, 1);
	uk[1] = kt_uk_poll(p[1], P(POLLOUT), 0, 2);
	uk[2] = kt_uk_poll(fifo, P(POLLRDNORM), 0, 3);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 3, uk), 3, "all three ready at ADD");
	cr_assert_eq(uk[0].ret_data[1], 5u, "read end: %u", uk[0].ret_data[1]);
	cr_assert_eq(uk[1].ret_data[1], pipe_free(p[1]), "write end: %u", uk[1].ret_data[1]);
	cr_assert_eq(uk[2].ret_data[0], (__u32)P(POLLRDNORM), "%#x", uk[2].ret_data[0]);
	cr_assert_eq(uk[2].ret_data[1], 9u, "FIFO: %u", uk[2].ret_data[1]);
	close(fifo);
	close(p[0]);
	close(p[1]);
	close(kfd);
}

/* D67: the slot a WAIT stores in the kevent_uring carries the count too. */
KTEST_REVS(poll, data_ring_wait, 4, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct kevent_uring *r = ring_new(4);
	char buf[4];

	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	cr_assert_eq(ring_init(kfd, r, 4), 0);
	kt_pipe(p);
	kt_add_queued(kfd, kt_uk_poll(p[0], P(POLLIN), 0, 1));
	write_n(p[1], 12);
	cr_assert(kt_wait_ready(kfd, 1, 5000), "the write fired");
	cr_assert_eq(read(p[0], buf, 2), 2);
	cr_assert_eq(wait_rc(kfd, 4, 0, ts_zero, 0), 1);
	cr_assert_eq(r->event[0].user[0], 1u);
	cr_assert_eq(r->event[0].ret_data[0], (__u32)P(POLLIN), "%#x", r->event[0].ret_data[0]);
	cr_assert_eq(r->event[0].ret_data[1], 10u, "D67: 12 - 2 bytes, got %u",
		     r->event[0].ret_data[1]);
	close(p[0]);
	close(p[1]);
	close(kfd);
	free(r);
}

/* D67: a file that is no pipe, FIFO or socket has no count: 0. */
KTEST_REVS(poll, data_regular_file_zero, 4, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	char path[] = "/tmp/kt-regular-XXXXXX";
	int f = mkstemp(path), efd = eventfd(3, EFD_CLOEXEC);
	struct ukevent uk[2];

	cr_assert(f >= 0 && efd >= 0);
	unlink(path);
	write_n(f, 100);
	cr_assert_eq(lseek(f, 0, SEEK_SET), 0);
	uk[0] = kt_uk_poll(f, P(POLLIN) | P(POLLOUT), 0, 1);
	uk[1] = kt_uk_poll(efd, P(POLLIN), 0, 2);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 2, uk), 2);
	cr_assert_eq(uk[0].ret_data[0], (__u32)(P(POLLIN) | P(POLLOUT)), "%#x", uk[0].ret_data[0]);
	cr_assert_eq(uk[0].ret_data[1], 0u, "regular file: %u", uk[0].ret_data[1]);
	cr_assert_eq(uk[1].ret_data[0], (__u32)P(POLLIN), "%#x", uk[1].ret_data[0]);
	cr_assert_eq(uk[1].ret_data[1], 0u, "eventfd: %u", uk[1].ret_data[1]);
	close(efd);
	close(f);
	close(kfd);
}

/* D67: below revision 4 ret_data[1] of a POLL record stays 0. */
KTEST_REVS(poll, data_zero_below_revision_4, 1, 3)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent uk;

	kt_pipe(p);
	kt_add_queued(kfd, kt_uk_poll(p[0], P(POLLIN), 0, 1));
	write_n(p[1], 5);
	struct ukevent e = kt_get_one(kfd, "5 bytes");
	cr_assert_eq(e.ret_data[0], (__u32)P(POLLIN));
	cr_assert_eq(e.ret_data[1], 0u, "revision %d: %u", kt_rev(), e.ret_data[1]);
	uk = kt_uk_poll(p[1], P(POLLOUT), 0, 2);
	kt_ctl1(kfd, KEVENT_CTL_ADD, &uk, 1);
	cr_assert_eq(uk.ret_data[1], 0u, "ready at ADD, revision %d: %u", kt_rev(), uk.ret_data[1]);
	close(p[0]);
	close(p[1]);
	close(kfd);
}

/* ---- revision 4: a kevent's fd still names its file at delivery (D69) ---- */

/* D69: the record of a kevent whose id no longer names its file. */
static void assert_stale(struct ukevent e, __u32 cookie, const char *what)
{
	cr_assert_eq(e.user[0], cookie, "%s: cookie %u", what, e.user[0]);
	cr_assert_eq(e.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE),
		     "D69, %s: ret_flags %#x", what, e.ret_flags);
	cr_assert_eq(e.ret_data[0], 0u, "D69, %s: no bit, got %#x", what, e.ret_data[0]);
	cr_assert_eq((int)e.ret_data[1], -EBADF, "D69, %s: -EBADF, got %d", what,
		     (int)e.ret_data[1]);
}

/* D69: a kevent whose fd was closed with its event pending. */
static int closed_with_event(int kfd, int p[2], __u32 cookie)
{
	int fd;

	kt_pipe(p);
	fd = p[0];
	kt_add_queued(kfd, kt_uk_poll(fd, P(POLLIN), 0, cookie));
	write_n(p[1], 3);
	cr_assert(kt_wait_ready(kfd, 1, 5000), "the write fired");
	close(p[0]);
	p[0] = -1;
	return fd;
}

/*
 * D69: the fd closed, the record is BROKEN -EBADF, and the kevent left its
 * origin for good: neither new data nor a MODIFY makes it fire again; it
 * stays registered until REMOVE.
 */
KTEST_REVS(poll, fd_check_closed_fd_breaks, 4, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), p[2], fd;
	struct ukevent uk;

	fd = closed_with_event(kfd, p, 7);
	assert_stale(kt_get_one(kfd, "the fd was closed"), 7, "closed");
	write_n(p[1], 2);	/* the kevent holds the read end: the write is activity */
	kt_assert_quiet(kfd, 200, "D69: a stale kevent never fires again");
	uk = kt_uk_poll(fd, P(POLLIN), 0, 7);
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &uk, 0);
	cr_assert_eq(uk.ret_flags, (__u32)KEVENT_RET_DONE, "MODIFY matched it: %#x",
		     uk.ret_flags);
	write_n(p[1], 2);
	kt_assert_quiet(kfd, 200, "D69: not after a MODIFY either");
	cr_assert_eq(kt_queue_kevents(kfd), 1u, "still registered");
	kt_remove(kfd, kt_uk_poll(fd, P(POLLIN), 0, 7));
	close(p[1]);
	close(kfd);
}

/*
 * D69: the number names another file now: another pipe, and the same FIFO
 * opened again (the same inode, another open file).  The new file's
 * activity is not the kevent's.
 */
KTEST_REVS(poll, fd_check_number_reused_breaks, 4, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), a[2], b[2], fifo, again;
	char path[] = "/tmp/kt-fifo-XXXXXX", name[64];
	struct ukevent ev[4];

	kt_pipe(a);
	kt_pipe(b);
	cr_assert(mkdtemp(path));
	snprintf(name, sizeof(name), "%s/f", path);
	cr_assert_eq(mkfifo(name, 0600), 0, "mkfifo: %s", strerror(errno));
	fifo = open(name, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	cr_assert(fifo >= 0, "open FIFO: %s", strerror(errno));
	kt_add_queued(kfd, kt_uk_poll(a[0], P(POLLIN), 0, 1));
	kt_add_queued(kfd, kt_uk_poll(fifo, P(POLLIN), 0, 2));
	write_n(a[1], 1);
	write_n(fifo, 1);
	cr_assert(kt_wait_ready(kfd, 2, 5000), "both fired");
	cr_assert_eq(dup3(b[0], a[0], O_CLOEXEC), a[0], "dup3: %s", strerror(errno));
	again = open(name, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	cr_assert(again >= 0, "open FIFO again: %s", strerror(errno));
	cr_assert_eq(dup3(again, fifo, O_CLOEXEC), fifo, "dup3: %s", strerror(errno));
	close(again);
	unlink(name);
	rmdir(path);
	write_n(b[1], 1);	/* the new file at a[0]'s number is readable too */
	cr_assert_eq(kt_get(kfd, 2, 4, 5000000000ull, ev), 2);
	for (int i = 0; i < 2; i++)
		assert_stale(ev[i], ev[i].user[0], ev[i].user[0] == 1 ? "another pipe" :
			     "the FIFO opened again");
	cr_assert_neq(ev[0].user[0], ev[1].user[0]);
	/* a MODIFY before the old pipe's next report: it stays out of its origin */
	struct ukevent uk = kt_uk_poll(a[0], P(POLLIN) | P(POLLRDNORM), 0, 1);
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &uk, 0);
	cr_assert_eq(uk.ret_flags, (__u32)KEVENT_RET_DONE, "MODIFY matched it: %#x", uk.ret_flags);
	write_n(a[1], 1);	/* the old pipe: the kevent holds its read end */
	kt_assert_quiet(kfd, 200, "D69: the new files' activity is not the kevents', nor the "
			"old pipe's after a MODIFY");
	close(fifo);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
	close(kfd);
}

/*
 * D69: the file, not the number's history: the file still open at another
 * fd does not save a closed id, and the very file put back at the number
 * is not stale.
 */
KTEST_REVS(poll, fd_check_file_not_number, 4, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), p[2], q[2], d, d2;

	kt_pipe(p);
	kt_pipe(q);
	kt_add_queued(kfd, kt_uk_poll(p[0], P(POLLIN), 0, 1));
	d = fcntl(p[0], F_DUPFD_CLOEXEC, 0);
	cr_assert(d >= 0);
	close(p[0]);
	write_n(p[1], 1);
	assert_stale(kt_get_one(kfd, "the id closed, its file open at a dup"), 1, "dup open");
	kt_add_queued(kfd, kt_uk_poll(q[0], P(POLLIN), 0, 2));
	d2 = fcntl(q[0], F_DUPFD_CLOEXEC, 0);
	cr_assert(d2 >= 0);
	close(q[0]);
	cr_assert_eq(dup3(d2, q[0], O_CLOEXEC), q[0]);
	write_n(q[1], 4);
	struct ukevent e = kt_get_one(kfd, "the same file back at the number");
	cr_assert_eq(e.user[0], 2u);
	cr_assert_eq(e.ret_flags, (__u32)KEVENT_RET_DONE, "D69: not stale, %#x", e.ret_flags);
	cr_assert_eq(e.ret_data[0], (__u32)P(POLLIN), "%#x", e.ret_data[0]);
	cr_assert_eq(e.ret_data[1], 4u, "D67's count as ever: %u", e.ret_data[1]);
	close(d);
	close(d2);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	close(kfd);
}

/*
 * D69: the caller's table: a child that shares the queue closes its copy
 * of the fd; the parent, whose fd still names the file, gets the event;
 * the child's own delivery is stale.
 */
KTEST_REVS(poll, fd_check_in_the_callers_table, 4, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), p[2], st;
	pid_t child;

	kt_pipe(p);
	kt_add_queued(kfd, kt_uk_poll(p[0], P(POLLIN), 0, 1));
	write_n(p[1], 1);
	cr_assert(kt_wait_ready(kfd, 1, 5000), "the write fired");
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		close(p[0]);
		_exit(0);
	}
	cr_assert_eq(waitpid(child, &st, 0), child);
	struct ukevent e = kt_get_one(kfd, "the parent's fd names the file");
	cr_assert_eq(e.ret_flags, (__u32)KEVENT_RET_DONE, "D69: not stale, %#x", e.ret_flags);
	cr_assert_eq(e.ret_data[0], (__u32)P(POLLIN), "%#x", e.ret_data[0]);
	write_n(p[1], 1);
	cr_assert(kt_wait_ready(kfd, 1, 5000), "the second write fired");
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		struct ukevent ev[4];

		close(p[0]);
		if (kevent_get_events(kfd, 1, 4, 5000000000ull, ev, 0) != 1)
			_exit(2);
		_exit(ev[0].ret_flags == (KEVENT_RET_BROKEN | KEVENT_RET_DONE) &&
		      (int)ev[0].ret_data[1] == -EBADF && !ev[0].ret_data[0] ? 0 : 3);
	}
	cr_assert_eq(waitpid(child, &st, 0), child);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "D69: the child's delivery is checked in its own table (status %#x)", st);
	close(p[0]);
	close(p[1]);
	close(kfd);
}

/* D69: a parked GET_EVENTS is checked for its caller when it completes. */
static void *get_parked(void *arg)
{
	struct ukevent *ev = arg;

	if (kevent_get_events(ev[1].id.raw[0], 1, 1, 10000000000ull, ev, 0) != 1)
		ev[0].ret_flags = ~0u;
	return NULL;
}

KTEST_REVS(poll, fd_check_parked_call, 4, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent ev[2] = { 0 };
	pthread_t t;

	kt_pipe(p);
	kt_add_queued(kfd, kt_uk_poll(p[0], P(POLLIN), 0, 5));
	ev[1].id.raw[0] = (__u32)kfd;
	cr_assert_eq(pthread_create(&t, NULL, get_parked, ev), 0);
	kt_await_parked(kfd, 1, 5000);
	close(p[0]);
	write_n(p[1], 1);
	cr_assert_eq(pthread_join(t, NULL), 0);
	cr_assert_neq(ev[0].ret_flags, ~0u, "the parked call returned one record");
	assert_stale(ev[0], 5, "a parked GET_EVENTS");
	close(p[1]);
	close(kfd);
}

/* D69: the slot a WAIT stores in the kevent_uring is checked too. */
KTEST_REVS(poll, fd_check_ring_wait, 4, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct kevent_uring *r = ring_new(4);

	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	cr_assert_eq(ring_init(kfd, r, 4), 0);
	closed_with_event(kfd, p, 3);
	cr_assert_eq(wait_rc(kfd, 4, 0, ts_zero, 0), 1);
	struct ukevent e = r->event[0];
	assert_stale(e, 3, "a WAIT's slot");
	close(p[1]);
	close(kfd);
	free(r);
}

/* D69: an answer at ADD is of the file just taken from the id: never stale. */
KTEST_REVS(poll, fd_check_ready_at_add_unaffected, 4, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent uk;

	kt_pipe(p);
	write_n(p[1], 6);
	uk = kt_uk_poll(p[0], P(POLLIN), 0, 1);
	kt_ctl1(kfd, KEVENT_CTL_ADD, &uk, 1);
	cr_assert_eq(uk.ret_flags, (__u32)KEVENT_RET_DONE, "%#x", uk.ret_flags);
	cr_assert_eq(uk.ret_data[0], (__u32)P(POLLIN), "%#x", uk.ret_data[0]);
	cr_assert_eq(uk.ret_data[1], 6u, "%u", uk.ret_data[1]);
	close(p[0]);
	close(p[1]);
	close(kfd);
}

/* D69: below revision 4 nothing is checked: a closed fd's kevent reports as ever. */
KTEST_REVS(poll, fd_check_none_below_revision_4, 1, 3)
{
	int kfd = kt_open(O_RDWR), p[2];

	closed_with_event(kfd, p, 4);
	struct ukevent e = kt_get_one(kfd, "the fd was closed");
	cr_assert_eq(e.user[0], 4u);
	cr_assert_eq(e.ret_flags, (__u32)KEVENT_RET_DONE, "revision %d: %#x", kt_rev(),
		     e.ret_flags);
	cr_assert_eq(e.ret_data[0], (__u32)P(POLLIN), "%#x", e.ret_data[0]);
	write_n(p[1], 1);
	e = kt_get_one(kfd, "it keeps firing (A7)");
	cr_assert_eq(e.ret_flags, (__u32)KEVENT_RET_DONE, "%#x", e.ret_flags);
	close(p[1]);
	close(kfd);
}

/*
 * A7 on revision 4: a kevent stale by D69 still holds its file until
 * REMOVE: the writer gets no EPIPE before it.
 */
KTEST_REVS(poll, fd_check_stale_still_holds_the_file, 4, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), p[2], r = -1, err = 0;
	struct ukevent uk;

	signal(SIGPIPE, SIG_IGN);
	kt_pipe(p);
	uk = kt_uk_poll(p[0], P(POLLIN), 0, 1);
	kt_add_queued(kfd, uk);
	close(p[0]);
	cr_assert_eq(write(p[1], "a", 1), 1, "write after the client closed its read end: %s",
		     strerror(errno));
	assert_stale(kt_get_one(kfd, "the fd was closed"), 1, "closed");
	cr_assert_eq(write(p[1], "b", 1), 1, "A7: the stale kevent still holds the read end: %s",
		     strerror(errno));
	kt_remove(kfd, uk);
	for (int i = 0; i < 500; i++) {
		r = (int)write(p[1], "c", 1);
		err = errno;
		if (r < 0)
			break;
		kt_sleep_ms(10);
	}
	cr_assert(r < 0 && err == EPIPE, "the read end was not released after REMOVE");
	close(p[1]);
	close(kfd);
}
