// SPDX-License-Identifier: GPL-2.0-only
/*
 * Conformance of libkqueue-kevent: EVFILT_READ and EVFILT_WRITE on pipes,
 * sockets and regular files (data, EV_EOF, fflags, NOTE_LOWAT), which of
 * them the device carries on a revision-2 queue and more, and what a
 * close() of a watched fd does.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "kqt.h"
#include "libkevent.h"

/* ---- pipes ---- */

KQT(pipe, read_data_is_bytes_readable)
{
	int kq = kqt_kqueue(), p[2];
	struct kevent want, e;

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_quiet(kq, 50, "empty pipe");
	kqt_write(p[1], 10);
	e = kqt_get(kq, "pipe");
	EV_SET(&want, p[0], EVFILT_READ, EV_ADD, 0, 10, NULL);
	kqt_same(&want, &e, "whole event");
}

KQT(pipe, read_eof_when_writer_closes)
{
	int kq = kqt_kqueue(), p[2];
	struct kevent want, e;

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	close(p[1]);
	e = kqt_get(kq, "writer gone");
	EV_SET(&want, p[0], EVFILT_READ, EV_ADD | EV_EOF, 0, 0, NULL);
	kqt_same(&want, &e, "EV_EOF, data 0");
}

KQT(pipe, read_eof_keeps_the_byte_count)
{
	int kq = kqt_kqueue(), p[2];
	struct kevent e;

	kqt_pipe(p);
	kqt_write(p[1], 3);
	close(p[1]);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	e = kqt_get(kq, "data then eof");
	cr_assert_eq(e.flags, EV_ADD | EV_EOF);
	cr_assert_eq(e.data, 3);
}

KQT(pipe, write_ready_with_free_space)
{
	int kq = kqt_kqueue(), p[2];
	struct kevent e;

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[1], EVFILT_WRITE, EV_ADD, 0, 0, NULL);
	e = kqt_get(kq, "empty pipe is writable");
	cr_assert_eq(e.filter, EVFILT_WRITE);
	cr_assert_eq(e.data, fcntl(p[1], F_GETPIPE_SZ), "data %ld = the whole buffer", (long)e.data);
	kqt_write(p[1], 100);
	e = kqt_get(kq, "still writable");
	cr_assert_eq(e.data, fcntl(p[1], F_GETPIPE_SZ) - 100);
}

KQT(pipe, write_full_then_drained)
{
	int kq = kqt_kqueue(), p[2], fl;
	char buf[4096] = { 0 };

	kqt_pipe(p);
	fl = fcntl(p[1], F_GETFL);
	fcntl(p[1], F_SETFL, fl | O_NONBLOCK);
	while (write(p[1], buf, sizeof(buf)) > 0)
		;
	while (write(p[1], buf, 1) > 0)
		;
	kqt_ok(kq, (uintptr_t)p[1], EVFILT_WRITE, EV_ADD, 0, 0, NULL);
	kqt_quiet(kq, 50, "full pipe");
	kqt_drain(p[0]);
	cr_assert_gt(kqt_get(kq, "drained").data, 0);
}

KQT(pipe, write_eof_when_reader_closes)
{
	int kq = kqt_kqueue(), p[2];
	struct kevent e;

	kqt_pipe(p);
	close(p[0]);
	kqt_ok(kq, (uintptr_t)p[1], EVFILT_WRITE, EV_ADD, 0, 0, NULL);
	e = kqt_get(kq, "reader gone");
	cr_assert(e.flags & EV_EOF, "flags %#x", e.flags);
}

KQT(pipe, lowat_waits_for_enough_bytes)
{
	int kq = kqt_kqueue(), p[2];

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, NOTE_LOWAT, 5, NULL);
	kqt_write(p[1], 3);
	kqt_quiet(kq, 50, "3 bytes < low water 5");
	kqt_write(p[1], 2);
	cr_assert_eq(kqt_get(kq, "5 bytes").data, 5);
}

KQT(pipe, many_pipes_each_reported_once)
{
	int kq = kqt_kqueue(), p[16][2], seen = 0;
	struct kevent ev[32];

	for (int i = 0; i < 16; i++) {
		kqt_pipe(p[i]);
		kqt_ok(kq, (uintptr_t)p[i][0], EVFILT_READ, EV_ADD | EV_CLEAR, 0, 0, (void *)(intptr_t)i);
		kqt_write(p[i][1], 1);
	}
	while (seen < 16) {
		int n = kqt_wait(kq, ev, 32, 10000);

		cr_assert_gt(n, 0, "only %d of 16 came", seen);
		for (int i = 0; i < n; i++)
			cr_assert_eq(ev[i].ident, (uintptr_t)p[(intptr_t)ev[i].udata][0]);
		seen += n;
	}
	cr_assert_eq(seen, 16);
	kqt_quiet(kq, 50, "each once (EV_CLEAR)");
}

/* ---- sockets ---- */

KQT(socket, read_data_is_bytes_readable)
{
	int kq = kqt_kqueue(), sv[2];
	struct kevent want, e;

	kqt_socketpair(sv);
	kqt_ok(kq, (uintptr_t)sv[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_write(sv[1], 7);
	e = kqt_get(kq, "socket");
	EV_SET(&want, sv[0], EVFILT_READ, EV_ADD, 0, 7, NULL);
	kqt_same(&want, &e, "whole event");
}

KQT(socket, read_eof_when_peer_closes)
{
	int kq = kqt_kqueue(), sv[2];
	struct kevent e;

	kqt_socketpair(sv);
	kqt_ok(kq, (uintptr_t)sv[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	close(sv[1]);
	e = kqt_get(kq, "peer closed");
	cr_assert_eq(e.flags, EV_ADD | EV_EOF);
	cr_assert_eq(e.data, 0);
	cr_assert_eq(e.fflags, 0);
}

KQT(socket, read_eof_on_shutdown_keeps_data)
{
	int kq = kqt_kqueue(), sv[2];
	struct kevent e;

	kqt_socketpair(sv);
	kqt_write(sv[1], 4);
	shutdown(sv[1], SHUT_WR);
	kqt_ok(kq, (uintptr_t)sv[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	e = kqt_get(kq, "data and eof");
	cr_assert_eq(e.flags, EV_ADD | EV_EOF);
	cr_assert_eq(e.data, 4);
}

KQT(socket, write_ready_on_connected)
{
	int kq = kqt_kqueue(), sv[2];
	struct kevent e;

	kqt_socketpair(sv);
	kqt_ok(kq, (uintptr_t)sv[0], EVFILT_WRITE, EV_ADD, 0, 0, NULL);
	e = kqt_get(kq, "writable");
	cr_assert_eq(e.flags, EV_ADD);
	cr_assert_gt(e.data, 0);
}

KQT(socket, write_eof_when_peer_closes)
{
	int kq = kqt_kqueue(), sv[2];
	struct kevent e;

	kqt_socketpair(sv);
	close(sv[1]);
	kqt_ok(kq, (uintptr_t)sv[0], EVFILT_WRITE, EV_ADD, 0, 0, NULL);
	e = kqt_get(kq, "peer gone");
	cr_assert(e.flags & EV_EOF, "flags %#x", e.flags);
}

KQT(socket, tcp_listen_data_is_backlog)
{
	int kq = kqt_kqueue(), port, l = kqt_tcp_listener(&port), c1, c2;
	struct kevent e;

	kqt_ok(kq, (uintptr_t)l, EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_quiet(kq, 50, "no connection yet");
	c1 = kqt_tcp_connect(port);
	e = kqt_get(kq, "one pending connection");
	cr_assert_eq(e.data, 1);
	c2 = kqt_tcp_connect(port);
	usleep(20000);
	e = kqt_get(kq, "two pending");
	cr_assert_eq(e.data, 2);
	close(c1);
	close(c2);
}

KQT(socket, tcp_read_data)
{
	int kq = kqt_kqueue(), port, l = kqt_tcp_listener(&port), c = kqt_tcp_connect(port);
	int s = accept(l, NULL, NULL);

	cr_assert_geq(s, 0);
	kqt_ok(kq, (uintptr_t)s, EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_write(c, 100);
	usleep(20000);
	cr_assert_eq(kqt_get(kq, "tcp data").data, 100);
}

KQT(socket, tcp_reset_gives_eof_and_the_error)
{
	int kq = kqt_kqueue(), port, l = kqt_tcp_listener(&port), c = kqt_tcp_connect(port);
	int s = accept(l, NULL, NULL);
	struct linger lg = { 1, 0 };
	struct kevent e;

	kqt_ok(kq, (uintptr_t)s, EVFILT_READ, EV_ADD, 0, 0, NULL);
	setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(c);	/* RST */
	e = kqt_get(kq, "reset");
	cr_assert(e.flags & EV_EOF, "flags %#x", e.flags);
	cr_assert_eq(e.fflags, ECONNRESET, "fflags %u", e.fflags);
}

KQT(socket, tcp_refused_connect_reports_the_error)
{
	int kq = kqt_kqueue(), port, l = kqt_tcp_listener(&port);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	struct kevent e;

	close(l);	/* nobody listens on port now */
	cr_assert(connect(s, (struct sockaddr *)&a, sizeof(a)) < 0);
	kqt_ok(kq, (uintptr_t)s, EVFILT_WRITE, EV_ADD, 0, 0, NULL);
	e = kqt_get(kq, "refused");
	cr_assert(e.flags & EV_EOF, "flags %#x", e.flags);
	cr_assert_eq(e.fflags, ECONNREFUSED, "fflags %u", e.fflags);
}

KQT(socket, udp_datagram_is_readable)
{
	int kq = kqt_kqueue();
	int a = socket(AF_INET, SOCK_DGRAM, 0), b = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);

	cr_assert_eq(bind(a, (struct sockaddr *)&sa, sizeof(sa)), 0);
	getsockname(a, (struct sockaddr *)&sa, &len);
	kqt_ok(kq, (uintptr_t)a, EVFILT_READ, EV_ADD, 0, 0, NULL);
	cr_assert_eq(sendto(b, "hello", 5, 0, (struct sockaddr *)&sa, sizeof(sa)), 5);
	cr_assert_eq(kqt_get(kq, "datagram").data, 5);
}

KQT(socket, clear_on_socket_is_edge)
{
	int kq = kqt_kqueue(), sv[2];

	kqt_socketpair(sv);
	kqt_ok(kq, (uintptr_t)sv[0], EVFILT_READ, EV_ADD | EV_CLEAR, 0, 0, NULL);
	kqt_write(sv[1], 2);
	cr_assert_eq(kqt_get(kq, "data").data, 2);
	kqt_quiet(kq, 50, "no new data");
	kqt_write(sv[1], 2);
	cr_assert_eq(kqt_get(kq, "more").data, 4);
}

/* ---- level triggering: the device's on revision 2 and later ---- */

/*
 * Device kevents on the kqueue's own queue whose id is fd, dequeued
 * without waiting (wait_ms 0) or up to wait_ms for the first; the last
 * one's result in *res.  A look under the library, for the tests below
 * only: what it takes is the library's no more.
 */
static int device_reports(int kq, int fd, long wait_ms, unsigned int *res)
{
	struct ukevent uk[16];
	int n = kevent_get_events(kq, wait_ms ? 1 : 0, 16,
				  (unsigned long long)wait_ms * 1000000ull, uk, 0), k = 0;

	cr_assert_geq(n, 0, "GET_EVENTS on the kqueue: %s", strerror(errno));
	for (int i = 0; i < n; i++) {
		if (uk[i].id.raw[0] != (__u32)fd || uk[i].type != KEVENT_POLL)
			continue;
		*res = uk[i].ret_data[0];
		k++;
	}
	return k;
}

/*
 * Revision 2 and later: a socket ready at EV_ADD is registered and queued
 * by the device (ALWAYS_QUEUE, abi.md D42), and after its delivery the
 * device reports the unread data again by itself (LEVEL, D43).  Revision
 * 1: EV_ADD's answer, no device kevent, and the library looks again.
 */
KQT(level, carried_by_the_device_from_revision_2)
{
	int kq = kqt_kqueue(), sv[2];
	unsigned int rev = kqt_revision(kq, NULL), res = 0;
	struct kevent_info a, b;
	bool dev = rev >= 2;

	kqt_socketpair(sv);
	kqt_write(sv[1], 10);
	cr_assert_eq(kevent_info(kq, &a), 0);
	kqt_ok(kq, (uintptr_t)sv[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	cr_assert_eq(kevent_info(kq, &b), 0);
	cr_assert_eq(b.queue_kevents, a.queue_kevents + (dev ? 1 : 0),
		     "revision %u: %u device kevents after EV_ADD, %u before", rev,
		     b.queue_kevents, a.queue_kevents);
	/* (revision 1: the library's wake eventfd may be ready by now, not the socket) */
	if (dev)
		cr_assert_eq(b.queue_ready, a.queue_ready + 1, "%u ready after EV_ADD, %u before",
			     b.queue_ready, a.queue_ready);
	cr_assert_eq(kqt_get(kq, "ready at EV_ADD").data, 10);
	cr_assert_eq(device_reports(kq, sv[0], 0, &res), dev ? 1 : 0,
		     "revision %u: the device's report of unread data", rev);
	if (dev)
		cr_assert(res & KEVENT_POLL_POLLIN, "result %#x", res);
}

/* Revision 2 and later: the device reports a peer's shutdown (D52). */
KQT(level, peer_shutdown_is_the_devices_pollrdhup_from_revision_2)
{
	int kq = kqt_kqueue(), sv[2];
	unsigned int rev = kqt_revision(kq, NULL), res = 0;
	struct kevent want, e;

	kqt_socketpair(sv);
	kqt_ok(kq, (uintptr_t)sv[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_quiet(kq, 20, "nothing yet");
	cr_assert_eq(shutdown(sv[1], SHUT_WR), 0);
	e = kqt_get(kq, "the peer's shutdown");
	EV_SET(&want, sv[0], EVFILT_READ, EV_ADD | EV_EOF, 0, 0, NULL);
	kqt_same(&want, &e, "EV_EOF, no data");
	e = kqt_get(kq, "still at end of file (level)");
	kqt_same(&want, &e, "again");
	if (rev < 2)
		return;
	cr_assert_eq(device_reports(kq, sv[0], 0, &res), 1, "the device reports it again");
	cr_assert(res & KEVENT_POLL_POLLRDHUP, "result %#x: no POLLRDHUP", res);
}

/* Unread data is reported at every call, with the bytes left; drained, never. */
KQT(level, partial_reads_report_what_is_left)
{
	int kq = kqt_kqueue(), sv[2];
	char buf[4];

	kqt_socketpair(sv);
	kqt_ok(kq, (uintptr_t)sv[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_write(sv[1], 10);
	cr_assert_eq(kqt_get(kq, "data").data, 10);
	cr_assert_eq(kqt_get(kq, "unread: again").data, 10);
	cr_assert_eq(read(sv[0], buf, 4), 4);
	cr_assert_eq(kqt_get(kq, "what is left").data, 6);
	cr_assert_eq(read(sv[0], buf, 4), 4);
	cr_assert_eq(kqt_get(kq, "what is left").data, 2);
	kqt_drain(sv[0]);
	kqt_quiet(kq, 50, "drained");
	kqt_write(sv[1], 3);
	cr_assert_eq(kqt_get(kq, "new data").data, 3);
}

/* A ready socket added is in the same call's events, with no wait. */
KQT(level, ready_at_add_is_in_the_same_call)
{
	int kq = kqt_kqueue(), sv[2];
	struct timespec zero = { 0, 0 };
	struct kevent ch, e;

	kqt_socketpair(sv);
	kqt_write(sv[1], 7);
	EV_SET(&ch, sv[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	cr_assert_eq(kevent(kq, &ch, 1, &e, 1, &zero), 1);
	cr_assert_eq(e.data, 7);
	EV_SET(&ch, sv[0], EVFILT_WRITE, EV_ADD | EV_ONESHOT, 0, 0, NULL);
	cr_assert_eq(kevent(kq, &ch, 1, &e, 1, &zero), 1, "a writable socket");
}

/*
 * A disabled level knote with unread data reports nothing, and the device
 * stops reporting it too (no busy loop under a blocked caller); enabled, it
 * is reported again.
 */
KQT(level, disabled_with_unread_data_is_quiet_then_enabled)
{
	int kq = kqt_kqueue(), sv[2];
	unsigned int res;

	kqt_socketpair(sv);
	kqt_ok(kq, (uintptr_t)sv[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_write(sv[1], 5);
	cr_assert_eq(kqt_get(kq, "data").data, 5);
	kqt_ok(kq, (uintptr_t)sv[0], EVFILT_READ, EV_DISABLE, 0, 0, NULL);
	kqt_quiet(kq, 100, "disabled");
	(void)device_reports(kq, sv[0], 0, &res);
	cr_assert_eq(device_reports(kq, sv[0], 0, &res), 0, "disabled, reported by the device");
	kqt_ok(kq, (uintptr_t)sv[0], EVFILT_READ, EV_ENABLE, 0, 0, NULL);
	cr_assert_eq(kqt_get(kq, "enabled").data, 5);
	cr_assert_eq(kqt_get(kq, "and again (level)").data, 5);
}

/* NOTE_LOWAT set by a later EV_ADD: below the mark is quiet, at it reported. */
KQT(level, lowat_added_later_on_a_socket)
{
	int kq = kqt_kqueue(), sv[2];

	kqt_socketpair(sv);
	kqt_ok(kq, (uintptr_t)sv[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_write(sv[1], 5);
	cr_assert_eq(kqt_get(kq, "data").data, 5);
	kqt_ok(kq, (uintptr_t)sv[0], EVFILT_READ, EV_ADD, NOTE_LOWAT, 8, NULL);
	kqt_quiet(kq, 100, "5 bytes, low-water mark 8");
	kqt_write(sv[1], 3);
	cr_assert_eq(kqt_get(kq, "at the mark").data, 8);
	cr_assert_eq(kqt_get(kq, "and again (level)").data, 8);
}

/*
 * The device calls of the library, seen from this program: it defines
 * kevent_ctl() and kevent_get_events(), which the library's calls reach
 * first, and passes them on to libkevent's.  fail_level_off makes a MODIFY
 * that turns KEVENT_REQ_LEVEL off fail as a device could (the entry
 * refused, EIO); get_calls counts the waits.
 */
static bool fail_level_off;
static int get_calls;

int kevent_ctl(int fd, unsigned int cmd, unsigned int num, void *arg)
{
	static int (*real)(int, unsigned int, unsigned int, void *);
	struct ukevent *uk = arg;

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "kevent_ctl");
	if (fail_level_off && cmd == KEVENT_CTL_MODIFY && num == 1 &&
	    !(uk->req_flags & KEVENT_REQ_LEVEL)) {
		errno = EIO;
		return -1;
	}
	return real(fd, cmd, num, arg);
}

int kevent_get_events(int fd, unsigned int min_nr, unsigned int max_nr, __u64 timeout_ns,
		      void *buf, unsigned int flags)
{
	static int (*real)(int, unsigned int, unsigned int, __u64, void *, unsigned int);

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "kevent_get_events");
	get_calls++;
	return real(fd, min_nr, max_nr, timeout_ns, buf, flags);
}

/*
 * EV_DISABLE of a level knote whose device kevent cannot have LEVEL turned
 * off: the disabled knote reports nothing and its wait is one wait, not a
 * loop of dequeues the device's LEVEL check answers at once; enabled, it is
 * reported again, and after a drain the next data too.
 */
KQT(level, disable_whose_modify_fails_waits_quietly)
{
	int kq = kqt_kqueue(), sv[2];

	kqt_socketpair(sv);
	kqt_ok(kq, (uintptr_t)sv[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_write(sv[1], 4);
	cr_assert_eq(kqt_get(kq, "data").data, 4);
	fail_level_off = true;
	kqt_ok(kq, (uintptr_t)sv[0], EVFILT_READ, EV_DISABLE, 0, 0, NULL);
	fail_level_off = false;
	get_calls = 0;
	kqt_quiet(kq, 300, "disabled");
	cr_assert_leq(get_calls, 10, "%d waits in the device for one kevent() call", get_calls);
	kqt_ok(kq, (uintptr_t)sv[0], EVFILT_READ, EV_ENABLE, 0, 0, NULL);
	cr_assert_eq(kqt_get(kq, "enabled").data, 4);
	cr_assert_eq(kqt_get(kq, "level").data, 4);
	kqt_drain(sv[0]);
	kqt_quiet(kq, 50, "drained");
	kqt_write(sv[1], 2);
	cr_assert_eq(kqt_get(kq, "new data").data, 2);
	cr_assert_eq(kqt_get(kq, "level again").data, 2);
}

/* Many level sockets with a small eventlist: each is reported, again and again. */
KQT(level, many_sockets_take_turns)
{
	enum { N = 40 };
	int kq = kqt_kqueue(), sv[N][2], seen[N] = { 0 };
	struct kevent e[8];

	for (int i = 0; i < N; i++) {
		kqt_socketpair(sv[i]);
		kqt_write(sv[i][1], (size_t)i + 1);
		kqt_ok(kq, (uintptr_t)sv[i][0], EVFILT_READ, EV_ADD, 0, 0, (void *)(intptr_t)i);
	}
	for (int k = 0; k < 3 * N / 8; k++) {
		int n = kqt_wait(kq, e, 8, 10000);

		cr_assert_gt(n, 0, "call %d", k);
		for (int j = 0; j < n; j++) {
			intptr_t i = (intptr_t)e[j].udata;

			cr_assert_eq(e[j].data, i + 1, "socket %ld: data %ld", (long)i, (long)e[j].data);
			seen[i]++;
		}
	}
	for (int i = 0; i < N; i++)
		cr_assert_geq(seen[i], 1, "socket %d never reported", i);
}

/* Writes a byte to each of a_call_reports_each_ready_socket_once's sockets, late. */
static void *write_later(void *arg)
{
	int (*sv)[2] = arg;

	usleep(50000);
	for (int i = 0; i < 3; i++)
		kqt_write(sv[i][1], 1);
	return NULL;
}

/*
 * A call reports each ready socket once, however many reads of the device
 * it makes: on revision 2 and later the device checks a delivered LEVEL
 * kevent again at its next dequeue (D43), so a call's second read, which
 * follows a wait that brought new events, finds the sockets it has just
 * delivered, still unread, ready again.
 */
KQT(level, a_call_reports_each_ready_socket_once)
{
	enum { N = 3 };
	int kq = kqt_kqueue(), sv[N][2], total[N] = { 0 }, calls = 0;
	struct timespec t0, now;
	struct kevent e[8];
	pthread_t t;

	for (int i = 0; i < N; i++) {
		kqt_socketpair(sv[i]);
		kqt_ok(kq, (uintptr_t)sv[i][0], EVFILT_READ, EV_ADD, 0, 0, (void *)(intptr_t)i);
	}
	kqt_quiet(kq, 20, "nothing written yet");
	cr_assert_eq(pthread_create(&t, NULL, write_later, sv), 0);
	/*
	 * The waits end as the bytes arrive, each socket stays unread, and a
	 * call made before the writer's next byte returns the sockets it has:
	 * as many calls as that takes, for up to 10 s.
	 */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (now = t0; !total[0] || !total[1] || !total[2]; calls++) {
		int seen[N] = { 0 }, n = kqt_wait(kq, e, 8, 10000);

		cr_assert_gt(n, 0, "call %d: no event in 10 s", calls);
		for (int j = 0; j < n; j++) {
			intptr_t i = (intptr_t)e[j].udata;

			cr_assert_eq(e[j].data, 1, "socket %ld: data %ld", (long)i, (long)e[j].data);
			cr_assert_eq(++seen[i], 1, "call %d: socket %ld twice", calls, (long)i);
			total[i]++;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		cr_assert_lt(now.tv_sec - t0.tv_sec, 10, "sockets %d %d %d reported in %d calls",
			     total[0], total[1], total[2], calls + 1);
	}
	pthread_join(t, NULL);
}

/* One waiter of level_both_waiters_see_an_unread_socket: its kevent() call. */
struct waiter {
	int kq, n;
	struct kevent e;
};

static void *wait_once(void *arg)
{
	struct waiter *w = arg;
	struct timespec ts = { 5, 0 };

	w->n = kevent(w->kq, NULL, 0, &w->e, 1, &ts);
	return NULL;
}

/*
 * Two threads wait in one kqueue and a socket they watch turns readable
 * and is never read: level-triggered, it is reported to both (FreeBSD
 * queues a delivered level knote again), one after the other, each call
 * within the 5 s it allows.
 */
KQT(level, both_waiters_see_an_unread_socket)
{
	int kq = kqt_kqueue(), sv[2];
	struct waiter w[2] = { { kq, -2, { 0 } }, { kq, -2, { 0 } } };
	pthread_t t[2];

	kqt_socketpair(sv);
	kqt_ok(kq, (uintptr_t)sv[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, wait_once, &w[i]), 0);
	usleep(100000);	/* both blocked in the device by now, as a rule */
	kqt_write(sv[1], 1);
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		cr_assert_eq(w[i].n, 1, "waiter %d: %d events", i, w[i].n);
		cr_assert_eq(w[i].e.ident, (uintptr_t)sv[0]);
		cr_assert_eq(w[i].e.data, 1, "waiter %d: data %ld", i, (long)w[i].e.data);
	}
}

/* ---- regular files ---- */

KQT(file, read_data_is_bytes_to_end)
{
	char path[64];
	int kq = kqt_kqueue(), fd = kqt_tmpfile(path, sizeof(path), 300);
	struct kevent e;

	unlink(path);
	kqt_ok(kq, (uintptr_t)fd, EVFILT_READ, EV_ADD, 0, 0, NULL);
	e = kqt_get(kq, "file");
	cr_assert_eq(e.data, 300);
	lseek(fd, 100, SEEK_SET);
	cr_assert_eq(kqt_get(kq, "after seek").data, 200);
}

KQT(file, not_readable_at_end_of_file)
{
	char path[64];
	int kq = kqt_kqueue(), fd = kqt_tmpfile(path, sizeof(path), 10);

	unlink(path);
	lseek(fd, 0, SEEK_END);
	kqt_ok(kq, (uintptr_t)fd, EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_quiet(kq, 50, "at end of file (the BSDs)");
	lseek(fd, 0, SEEK_SET);
	cr_assert_eq(kqt_get(kq, "seeked back").data, 10);
}

KQT(file, growth_wakes_a_waiter)
{
	char path[64];
	int kq = kqt_kqueue(), fd = kqt_tmpfile(path, sizeof(path), 0);
	int w = open(path, O_WRONLY | O_APPEND);

	unlink(path);
	kqt_ok(kq, (uintptr_t)fd, EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_quiet(kq, 30, "empty file");
	kqt_write(w, 8);
	cr_assert_eq(kqt_get(kq, "grown").data, 8);
}

KQT(file, always_writable)
{
	char path[64];
	int kq = kqt_kqueue(), fd = kqt_tmpfile(path, sizeof(path), 0);
	struct kevent e;

	unlink(path);
	kqt_ok(kq, (uintptr_t)fd, EVFILT_WRITE, EV_ADD, 0, 0, NULL);
	e = kqt_get(kq, "file");
	cr_assert_eq(e.filter, EVFILT_WRITE);
	cr_assert_eq(e.flags, EV_ADD);
}

/* ---- close() of a watched fd ---- */

KQT(close, close_removes_the_kevents)
{
	int kq = kqt_kqueue(), p[2], q[2];

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	close(p[0]);
	kqt_pipe(q);	/* takes p[0]'s number */
	cr_assert_eq(q[0], p[0]);
	cr_assert_eq(kqt_change(kq, (uintptr_t)q[0], EVFILT_READ, EV_DELETE, 0, 0, NULL), -ENOENT);
}

KQT(close, reused_number_never_delivers_a_stale_event)
{
	int kq = kqt_kqueue(), p[2], q[2];

	kqt_pipe(p);
	kqt_write(p[1], 1);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, (intptr_t)0, (void *)1);
	close(p[0]);
	kqt_pipe(q);
	cr_assert_eq(q[0], p[0]);
	kqt_write(q[1], 1);
	kqt_quiet(kq, 50, "the new pipe is not watched");
}

KQT(close, close_without_delete_lets_the_peer_see_eof)
{
	int kq = kqt_kqueue(), sv[2];
	char c;

	kqt_socketpair(sv);
	kqt_ok(kq, (uintptr_t)sv[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_ok(kq, (uintptr_t)sv[0], EVFILT_WRITE, EV_ADD, 0, 0, NULL);
	close(sv[0]);	/* the BSD way: no EV_DELETE */
	/* The daemon's duplicate went with the kevents: the peer reads EOF. */
	alarm(20);
	cr_assert_eq(read(sv[1], &c, 1), 0, "peer must see end of file");
}

KQT(close, tcp_close_without_delete_sends_fin)
{
	int kq = kqt_kqueue(), port, l = kqt_tcp_listener(&port), c = kqt_tcp_connect(port);
	int s = accept(l, NULL, NULL);
	char ch;

	kqt_ok(kq, (uintptr_t)s, EVFILT_READ, EV_ADD, 0, 0, NULL);
	close(s);
	alarm(20);
	cr_assert_eq(read(c, &ch, 1), 0, "client must get the FIN");
}

KQT(close, dup2_over_a_watched_fd_removes_it)
{
	int kq = kqt_kqueue(), p[2], q[2];

	kqt_pipe(p);
	kqt_pipe(q);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	cr_assert_eq(dup2(q[0], p[0]), p[0]);
	kqt_write(q[1], 1);
	kqt_quiet(kq, 50, "p[0] is now q's pipe, not watched");
	cr_assert_eq(kqt_change(kq, (uintptr_t)p[0], EVFILT_READ, EV_DELETE, 0, 0, NULL), -ENOENT);
}

KQT(close, close_range_removes_them)
{
	int kq = kqt_kqueue(), p[2];

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_ok(kq, (uintptr_t)p[1], EVFILT_WRITE, EV_ADD, 0, 0, NULL);
	cr_assert_eq(close_range((unsigned int)(p[0] < p[1] ? p[0] : p[1]),
				 (unsigned int)(p[0] < p[1] ? p[1] : p[0]), 0), 0);
	kqt_quiet(kq, 50, "both closed");
}

KQT(close, libc_internal_close_is_caught_at_delivery)
{
	int kq = kqt_kqueue(), p[2], q[2];
	FILE *f;

	kqt_pipe(p);
	f = fdopen(p[0], "r");
	cr_assert_not_null(f);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	fclose(f);	/* libc's own close: not seen by the front */
	kqt_pipe(q);
	cr_assert_eq(q[0], p[0]);
	kqt_write(q[1], 1);
	kqt_quiet(kq, 50, "identity check drops the stale knote");
}

/*
 * A close the front cannot see (the raw system call) with the old pipe's
 * event pending and its number reused: on a revision-4 queue the device's
 * check at delivery (abi.md D69) drops it, below it the library's own.
 */
KQT(close, raw_close_with_an_event_pending_never_delivers_it)
{
	int kq = kqt_kqueue(), p[2], q[2];

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	cr_assert_eq(syscall(SYS_close, p[0]), 0);
	kqt_pipe(q);
	cr_assert_eq(q[0], p[0]);
	kqt_write(q[1], 1);
	kqt_write(p[1], 1);	/* the old pipe's kevent fires: its file is held */
	kqt_quiet(kq, 50, "the old pipe's event is not the new fd's");
	cr_assert_eq(kqt_change(kq, (uintptr_t)q[0], EVFILT_READ, EV_DELETE, 0, 0, NULL), -ENOENT,
		     "the stale knote is gone");
}

KQT(close, closing_a_watched_fd_keeps_other_kevents)
{
	int kq = kqt_kqueue(), p[2], q[2];

	kqt_pipe(p);
	kqt_pipe(q);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_ok(kq, (uintptr_t)q[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	close(p[0]);
	kqt_write(q[1], 1);
	cr_assert_eq(kqt_get(kq, "q still watched").ident, (uintptr_t)q[0]);
}
