// SPDX-License-Identifier: GPL-2.0
/*
 * The socket origin (A3 extension, A8): ACCEPT when a listening socket is
 * readable, RECV when readable (data or EOF), SEND when writable, POLLERR
 * -> BROKEN|DONE; one rule for TCP over loopback and AF_UNIX.  Revision
 * 4: the count in ret_data[1] (D67).
 */
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ktest.h"

#define S(x) KEVENT_SOCKET_##x

struct conn {
	int lst, cli, srv;
};

static int make_listener(int family, struct sockaddr_storage *ss, socklen_t *len)
{
	int l = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert(l >= 0, "socket: %s", strerror(errno));
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*len = sizeof(*in);
	} else {
		struct sockaddr_un *un = (struct sockaddr_un *)ss;

		un->sun_family = AF_UNIX;
		/* abstract name, unique per process */
		int n = snprintf(un->sun_path + 1, sizeof(un->sun_path) - 1, "kt-sock-%d", (int)getpid());
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
	}
	cr_assert_eq(bind(l, (struct sockaddr *)ss, *len), 0, "bind: %s", strerror(errno));
	cr_assert_eq(listen(l, 8), 0);
	if (family == AF_INET)
		cr_assert_eq(getsockname(l, (struct sockaddr *)ss, len), 0);
	return l;
}

static void connect_accept(int family, int kfd, struct conn *c)
{
	struct sockaddr_storage ss;
	socklen_t len;

	c->lst = make_listener(family, &ss, &len);
	struct ukevent acc = kt_uk(KEVENT_SOCKET, (__u32)c->lst, 0, S(ACCEPT), 0, 1);
	kt_add_queued(kfd, acc);
	kt_assert_quiet(kfd, 100, "listener without a connection");
	c->cli = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert(c->cli >= 0);
	cr_assert_eq(connect(c->cli, (struct sockaddr *)&ss, len), 0, "connect: %s", strerror(errno));
	struct ukevent e = kt_get_one(kfd, "ACCEPT");
	cr_assert_eq(e.type, (__u32)KEVENT_SOCKET);
	cr_assert_eq(e.id.raw[0], (__u32)c->lst);
	cr_assert_eq(e.user[0], 1u);
	cr_assert_eq(e.ret_flags, (__u32)KEVENT_RET_DONE, "ACCEPT ret_flags %#x", e.ret_flags);
	/* kevent_ctl(2): the bits that fired; on TCP the accept queue (one), else 0. */
	cr_assert_eq(e.ret_data[0], (__u32)S(ACCEPT), "ACCEPT ret_data[0] %#x", e.ret_data[0]);
	cr_assert_eq(e.ret_data[1], family == AF_INET ? 1u : 0u, "ACCEPT ret_data[1] %u (%s)",
		     e.ret_data[1], family == AF_INET ? "TCP: the accept queue" : "not TCP: 0");
	c->srv = accept4(c->lst, NULL, NULL, SOCK_CLOEXEC);
	cr_assert(c->srv >= 0, "accept after ACCEPT: %s", strerror(errno));
	kt_remove(kfd, acc);
}

static void recv_send_case(int family)
{
	int kfd = kt_open(O_RDWR);
	struct conn c;
	char buf[65536];

	signal(SIGPIPE, SIG_IGN);
	connect_accept(family, kfd, &c);
	/* RECV on data. */
	struct ukevent rcv = kt_uk(KEVENT_SOCKET, (__u32)c.srv, 0, S(RECV), 0, 2);
	kt_add_queued(kfd, rcv);
	kt_assert_quiet(kfd, 100, "RECV with nothing sent");
	cr_assert_eq(send(c.cli, "hello", 5, 0), 5);
	struct ukevent e = kt_get_one(kfd, "RECV data");
	cr_assert_eq(e.user[0], 2u);
	cr_assert_eq(e.ret_flags, (__u32)KEVENT_RET_DONE, "RECV ret_flags %#x", e.ret_flags);
	cr_assert_eq(e.ret_data[0], (__u32)S(RECV), "RECV ret_data[0] %#x", e.ret_data[0]);
	cr_assert_eq(e.ret_data[1], 0u, "RECV ret_data[1] %u", e.ret_data[1]);
	cr_assert_eq(recv(c.srv, buf, sizeof(buf), 0), 5);
	/* SEND: writable at ADD is answered at once. */
	struct ukevent snd = kt_uk(KEVENT_SOCKET, (__u32)c.cli, 0, S(SEND), 0, 3);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &snd), 1, "SEND on a writable socket: ready at ADD");
	cr_assert_eq(snd.ret_flags, (__u32)KEVENT_RET_DONE);
	cr_assert_eq(snd.ret_data[0], (__u32)S(SEND), "SEND ret_data[0] %#x", snd.ret_data[0]);
	/* Fill the client's send path, then SEND fires once the server drains. */
	fcntl(c.cli, F_SETFL, O_NONBLOCK);
	while (send(c.cli, buf, sizeof(buf), 0) > 0)
		;
	cr_assert_eq(errno, EAGAIN);
	snd = kt_uk(KEVENT_SOCKET, (__u32)c.cli, 0, S(SEND), 0, 3);
	kt_add_queued(kfd, snd);
	/* RECV fired for the bulk data; take it. */
	e = kt_get_one(kfd, "RECV of bulk data");
	cr_assert_eq(e.user[0], 2u);
	fcntl(c.srv, F_SETFL, O_NONBLOCK);
	int got = 0;
	for (int i = 0; i < 2000 && !got; i++) {
		while (recv(c.srv, buf, sizeof(buf), 0) > 0)
			;
		struct ukevent out[4];
		int n = kt_get(kfd, 1, 4, KT_MS(10), out);
		for (int k = 0; k < n; k++)
			if (out[k].user[0] == 3u) {
				cr_assert_eq(out[k].ret_flags, (__u32)KEVENT_RET_DONE);
				got = 1;
			}
	}
	cr_assert(got, "SEND did not fire after the peer drained");
	kt_remove(kfd, snd);
	/* RECV on EOF. */
	while (recv(c.srv, buf, sizeof(buf), 0) > 0)
		;
	struct ukevent out[4];
	while (kt_get(kfd, 0, 4, 0, out) > 0)
		;
	shutdown(c.cli, SHUT_WR);
	/* Data still in flight may come first; each arrival and the FIN fire RECV. */
	int eof = 0;
	for (int i = 0; i < 1000 && !eof; i++) {
		int n = kt_get(kfd, 1, 4, KT_MS(5000), out);
		cr_assert(n > 0, "RECV did not fire on EOF");
		for (int k = 0; k < n; k++) {
			if (out[k].user[0] != 2u)
				continue;
			ssize_t rn;
			while ((rn = recv(c.srv, buf, sizeof(buf), 0)) > 0)
				;
			if (rn == 0)
				eof = 1;
		}
	}
	cr_assert(eof, "RECV on EOF");
	close(c.cli);
	close(c.srv);
	close(c.lst);
	close(kfd);
}

/* A8; D67 gives ret_data[1] a count from revision 4 on (socket/data_*). */
KTEST_REVS(socket, tcp_accept_recv_send, 1, 3)
{
	kt_require_type(KEVENT_SOCKET);
	recv_send_case(AF_INET);
}

KTEST_REVS(socket, unix_accept_recv_send, 1, 3)
{
	kt_require_type(KEVENT_SOCKET);
	recv_send_case(AF_UNIX);
}

/* abi.md 7.2: SOCKET on an fd that is not a socket fails that entry -ENOTSOCK. */
KTEST(socket, not_a_socket_enotsock)
{
	kt_require_type(KEVENT_SOCKET);
	int kfd = kt_open(O_RDWR), p[2];

	kt_pipe(p);
	struct ukevent uk = kt_uk(KEVENT_SOCKET, (__u32)p[0], 0, S(RECV), 0, 7);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &uk), 1, "SOCKET on a pipe was queued");
	cr_assert_eq(uk.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE), "ret_flags %#x",
		     uk.ret_flags);
	cr_assert_eq((int)uk.ret_data[1], -ENOTSOCK, "ret_data[1] %d", (int)uk.ret_data[1]);
	cr_assert_eq(kt_queue_kevents(kfd), 0u);
	close(p[0]);
	close(p[1]);
	close(kfd);
}

/* POLLERR on the socket -> BROKEN|DONE (A8): a TCP reset. */
KTEST(socket, tcp_reset_breaks)
{
	kt_require_type(KEVENT_SOCKET);
	int kfd = kt_open(O_RDWR);
	struct conn c;
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	connect_accept(AF_INET, kfd, &c);
	kt_add_queued(kfd, kt_uk(KEVENT_SOCKET, (__u32)c.srv, 0, S(RECV), 0, 5));
	cr_assert_eq(setsockopt(c.cli, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
	close(c.cli);	/* RST */
	struct ukevent e = kt_get_one(kfd, "reset");
	cr_assert_eq(e.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE), "RST gave ret_flags %#x",
		     e.ret_flags);
	/* O8: a fixed -ECONNRESET on both backends; SO_ERROR is left to the client. */
	cr_assert_eq((int)e.ret_data[1], -ECONNRESET, "RST gave ret_data[1] %d", (int)e.ret_data[1]);
	/* Already in error at ADD: that entry is answered BROKEN|DONE at once. */
	struct ukevent again = kt_uk(KEVENT_SOCKET, (__u32)c.srv, 0, S(RECV), 0, 6);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &again), 1, "ADD of a reset socket was queued");
	cr_assert_eq(again.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE));
	cr_assert_eq((int)again.ret_data[1], -ECONNRESET, "ADD after RST: ret_data[1] %d",
		     (int)again.ret_data[1]);
	int soerr = 0;
	socklen_t sl = sizeof(soerr);
	cr_assert_eq(getsockopt(c.srv, SOL_SOCKET, SO_ERROR, &soerr, &sl), 0);
	cr_assert_eq(soerr, ECONNRESET, "the socket's own error was consumed: SO_ERROR %d", soerr);
	close(c.srv);
	close(c.lst);
	close(kfd);
}

KTEST(socket, accept_refires)
{
	kt_require_type(KEVENT_SOCKET);
	int kfd = kt_open(O_RDWR);
	struct sockaddr_storage ss;
	socklen_t len;
	int l = make_listener(AF_UNIX, &ss, &len);

	kt_add_queued(kfd, kt_uk(KEVENT_SOCKET, (__u32)l, 0, S(ACCEPT), 0, 1));
	for (int i = 0; i < 3; i++) {
		int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		cr_assert_eq(connect(c, (struct sockaddr *)&ss, len), 0);
		kt_get_one(kfd, "connection");
		int a = accept4(l, NULL, NULL, SOCK_CLOEXEC);
		cr_assert(a >= 0);
		close(a);
		close(c);
	}
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	close(l);
	close(kfd);
}

/*
 * A7 for sockets: no FIN until REMOVE.  From revision 4 the close makes
 * its records BROKEN -EBADF (D69: socket/fd_check_stale_no_fin_until_remove).
 */
KTEST_REVS(socket, held_socket_no_fin_until_remove, 1, 3)
{
	kt_require_type(KEVENT_SOCKET);
	int kfd = kt_open(O_RDWR);
	struct conn c;
	char buf[16];

	connect_accept(AF_INET, kfd, &c);
	struct ukevent rcv = kt_uk(KEVENT_SOCKET, (__u32)c.cli, 0, S(RECV), 0, 9);
	kt_add_queued(kfd, rcv);
	close(c.cli);
	cr_assert_eq(kt_poll1(c.srv, POLLIN, 300), 0, "the peer saw a FIN after the client's close (A7)");
	/* The held socket still works as the kevent's source. */
	cr_assert_eq(send(c.srv, "x", 1, 0), 1);
	struct ukevent e = kt_get_one(kfd, "held socket");
	cr_assert_eq(e.ret_flags, (__u32)KEVENT_RET_DONE);
	kt_remove(kfd, rcv);
	cr_assert(kt_poll1(c.srv, POLLIN, 10000) & (POLLIN | POLLHUP | POLLERR), "no FIN after REMOVE");
	cr_assert(recv(c.srv, buf, sizeof(buf), 0) <= 0, "FIN expected");
	close(c.srv);
	close(c.lst);
	close(kfd);
}

/*
 * Revision 1 is take13 (D40) for SOCKET kevents too: ALWAYS_QUEUE (D42)
 * and LEVEL (D43) are unknown bits there, ignored (A1), and POLLRDHUP is
 * never reported (D52).
 */

/* D42, D31: on revision 1 a readable socket is answered by ADD, ALWAYS_QUEUE or not. */
KTEST_REVS(socket, always_queue_ignored_on_rev1, 1, 1)
{
	kt_require_type(KEVENT_SOCKET);
	int kfd = kt_open(O_RDWR), sv[2];
	struct ukevent uk;

	kt_socketpair(SOCK_STREAM, sv);
	kt_write1(sv[1]);
	uk = kt_uk(KEVENT_SOCKET, (__u32)sv[0], 0, S(RECV), KEVENT_REQ_ALWAYS_QUEUE, 1);
	kt_ctl1(kfd, KEVENT_CTL_ADD, &uk, 1);
	cr_assert_eq(uk.ret_flags, (__u32)KEVENT_RET_DONE, "ret_flags %#x", uk.ret_flags);
	cr_assert_eq(uk.ret_data[0], (__u32)S(RECV), "ret_data[0] %#x", uk.ret_data[0]);
	cr_assert_eq(kt_queue_kevents(kfd), 0u, "registered: ALWAYS_QUEUE took effect on revision 1");
	cr_assert_eq(kt_queue_ready(kfd), 0u, "queued: ALWAYS_QUEUE took effect on revision 1");
	close(sv[0]);
	close(sv[1]);
	close(kfd);
}

/* D43, A6: on revision 1 LEVEL is ignored: data left unread is not reported again. */
KTEST_REVS(socket, level_ignored_on_rev1, 1, 1)
{
	kt_require_type(KEVENT_SOCKET);
	int kfd = kt_open(O_RDWR), sv[2];
	struct ukevent out[4];

	kt_socketpair(SOCK_STREAM, sv);
	kt_add_queued(kfd, kt_uk(KEVENT_SOCKET, (__u32)sv[0], 0, S(RECV), KEVENT_REQ_LEVEL, 2));
	kt_write1(sv[1]);
	cr_assert_eq(kt_get_one(kfd, "the write").ret_data[0], (__u32)S(RECV));
	for (int i = 0; i < 2; i++)
		cr_assert_eq(kt_get(kfd, 0, 4, 0, out), 0,
			     "dequeue %d: the unread byte reported again (LEVEL on revision 1)", i);
	close(sv[0]);
	close(sv[1]);
	close(kfd);
}

/*
 * D52: on revision 1 the peer's shutdown of writing is RECV (A8: EOF is
 * readable) and never POLLRDHUP, neither when it fires nor at ADD.
 */
KTEST_REVS(socket, no_pollrdhup_on_rev1, 1, 1)
{
	kt_require_type(KEVENT_SOCKET);
	int kfd = kt_open(O_RDWR), sv[2];
	struct ukevent uk, e;

	kt_socketpair(SOCK_STREAM, sv);
	kt_add_queued(kfd, kt_uk(KEVENT_SOCKET, (__u32)sv[0], 0, S(RECV) | KEVENT_POLL_POLLRDHUP, 0, 3));
	cr_assert_eq(shutdown(sv[1], SHUT_WR), 0);
	e = kt_get_one(kfd, "the peer's shutdown");
	cr_assert_eq(e.ret_data[0], (__u32)S(RECV), "fired: ret_data[0] %#x", e.ret_data[0]);
	uk = kt_uk(KEVENT_SOCKET, (__u32)sv[0], 0, S(RECV) | KEVENT_POLL_POLLRDHUP, 0, 4);
	kt_ctl1(kfd, KEVENT_CTL_ADD, &uk, 1);	/* EOF: ready at ADD */
	cr_assert_eq(uk.ret_data[0], (__u32)S(RECV), "at ADD: ret_data[0] %#x", uk.ret_data[0]);
	close(sv[0]);
	close(sv[1]);
	close(kfd);
}

/*
 * From revision 2 on: LEVEL (D43) and ALWAYS_QUEUE (D42) on SOCKET
 * kevents.
 */

/* D43: LEVEL on a SOCKET kevent, and MODIFY without LEVEL ends the re-reports. */
KTEST_REVS(socket, level_socket_and_modify_off, 2, KTEST_OPEN)
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

/*
 * D42: ALWAYS_QUEUE queues a source ready at ADD, but a failed ADD is
 * answered as ever: a socket already reset is BROKEN|DONE with
 * -ECONNRESET at ADD (O8), not registered, whatever the flag.
 */
KTEST_REVS(socket, always_queue_broken_at_add_is_answered, 2, KTEST_OPEN)
{
	int kfd, lst, cli, srv;
	struct ukevent uk;

	kt_require_type(KEVENT_SOCKET);
	kfd = kt_open(O_RDWR);
	tcp_conn(&lst, &cli, &srv);
	tcp_reset(cli);
	cr_assert(kt_poll1(srv, POLLIN, 5000) & POLLERR, "the reset never reached the socket");
	uk = kt_uk(KEVENT_SOCKET, (__u32)srv, 0, KEVENT_SOCKET_RECV, KEVENT_REQ_ALWAYS_QUEUE, 1);
	kt_ctl1(kfd, KEVENT_CTL_ADD, &uk, 1);
	cr_assert_eq(uk.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE), "%#x", uk.ret_flags);
	cr_assert_eq((int)uk.ret_data[1], -ECONNRESET, "%d", (int)uk.ret_data[1]);
	cr_assert_eq(kt_queue_kevents(kfd), 0u, "a failed ADD is not registered");
	cr_assert_eq(kt_queue_ready(kfd), 0u);
	close(srv);
	close(lst);
	close(kfd);
}

/* ---- revision 4: the count in ret_data[1] (D67) ---- */

/* TCP_INFO's tcpi_unacked of a listener: its accept queue now. */
static unsigned int tcp_backlog(int lst)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	cr_assert_eq(getsockopt(lst, IPPROTO_TCP, TCP_INFO, &ti, &len), 0);
	return ti.tcpi_unacked;
}

/*
 * D67: a listener counts the connections waiting in its accept queue, at
 * the delivery: the second connection came after ACCEPT fired.  POLLIN of
 * a POLL kevent on it counts the same.
 */
KTEST_REVS(socket, data_tcp_listener_backlog, 4, KTEST_OPEN)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int kfd, lst, cli[2];

	kt_require_type(KEVENT_SOCKET);
	kfd = kt_open(O_RDWR);
	lst = make_listener(AF_INET, &ss, &len);
	kt_add_queued(kfd, kt_uk(KEVENT_SOCKET, (__u32)lst, 0, S(ACCEPT), 0, 1));
	for (int i = 0; i < 2; i++) {
		cli[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		cr_assert(cli[i] >= 0);
		cr_assert_eq(connect(cli[i], (struct sockaddr *)&ss, len), 0, "connect: %s",
			     strerror(errno));
		if (!i)
			cr_assert(kt_wait_ready(kfd, 1, 5000), "ACCEPT fired");
	}
	for (int i = 0; i < 500 && tcp_backlog(lst) < 2; i++)
		kt_sleep_ms(10);	/* the handshake's last ACK, on loopback */
	cr_assert_eq(tcp_backlog(lst), 2u, "two connections wait");
	struct ukevent e = kt_get_one(kfd, "ACCEPT");
	cr_assert_eq(e.ret_data[0], (__u32)S(ACCEPT), "%#x", e.ret_data[0]);
	cr_assert_eq(e.ret_data[1], 2u, "D67: the accept queue at the delivery, got %u",
		     e.ret_data[1]);
	struct ukevent uk = kt_uk_poll(lst, POLLIN, 0, 2);
	kt_ctl1(kfd, KEVENT_CTL_ADD, &uk, 1);
	cr_assert_eq(uk.ret_data[0], (__u32)POLLIN, "%#x", uk.ret_data[0]);
	cr_assert_eq(uk.ret_data[1], 2u, "POLL on the listener: %u", uk.ret_data[1]);
	close(cli[0]);
	close(cli[1]);
	close(lst);
	close(kfd);
}

/*
 * D67: an AF_UNIX listener counts its waiting connections too.  The module
 * reads its queue; the daemon asks sock_diag (unix_diag), which a kernel
 * may lack: then this process cannot ask it either, and the test skips
 * there (docs/abi.md section 9).
 */
static bool unix_diag_here(int lst)
{
	struct {
		struct nlmsghdr h;
		struct unix_diag_req r;
	} q = { .h = { .nlmsg_len = sizeof(q), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		       .nlmsg_flags = NLM_F_REQUEST },
		.r = { .sdiag_family = AF_UNIX, .udiag_states = ~0u,
		       .udiag_cookie = { INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE } } };
	union {
		struct nlmsghdr h;
		char b[1024];
	} a;
	struct stat st;
	int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	bool ok = false;

	if (nl < 0 || fstat(lst, &st) < 0)
		return false;
	q.r.udiag_ino = (__u32)st.st_ino;
	if (send(nl, &q, sizeof(q), 0) == (ssize_t)sizeof(q) &&
	    recv(nl, &a, sizeof(a), MSG_DONTWAIT) > 0)
		ok = a.h.nlmsg_type == SOCK_DIAG_BY_FAMILY;
	close(nl);
	return ok;
}

KTEST_REVS(socket, data_unix_listener_backlog, 4, KTEST_OPEN)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int kfd, lst, cli[2];

	kt_require_type(KEVENT_SOCKET);
	kfd = kt_open(O_RDWR);
	lst = make_listener(AF_UNIX, &ss, &len);
	if (kt_backend() != KEVENT_BACKEND_MODULE && !unix_diag_here(lst))
		cr_skip_test("this kernel answers no sock_diag for AF_UNIX (no unix_diag): the "
			     "daemon cannot see an AF_UNIX listener's queue (abi.md section 9)");
	kt_add_queued(kfd, kt_uk(KEVENT_SOCKET, (__u32)lst, 0, S(ACCEPT), 0, 1));
	for (int i = 0; i < 2; i++) {
		cli[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		cr_assert(cli[i] >= 0);
		cr_assert_eq(connect(cli[i], (struct sockaddr *)&ss, len), 0, "connect: %s",
			     strerror(errno));
		if (!i)
			cr_assert(kt_wait_ready(kfd, 1, 5000), "ACCEPT fired");
	}
	struct ukevent e = kt_get_one(kfd, "ACCEPT");
	cr_assert_eq(e.ret_data[0], (__u32)S(ACCEPT), "%#x", e.ret_data[0]);
	cr_assert_eq(e.ret_data[1], 2u, "D67: the accept queue at the delivery, got %u",
		     e.ret_data[1]);
	close(cli[0]);
	close(cli[1]);
	close(lst);
	close(kfd);
}

/* D67: a socket's send buffer less what it queued (SO_SNDBUF - SIOCOUTQ). */
static void sndbuf_free(int fd, unsigned int *lo, unsigned int *hi, bool first)
{
	int size = 0, used = 0;
	socklen_t len = sizeof(size);
	unsigned int v;

	cr_assert_eq(getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, &len), 0);
	cr_assert_eq(ioctl(fd, SIOCOUTQ, &used), 0, "SIOCOUTQ: %s", strerror(errno));
	v = size > used ? (unsigned int)(size - used) : 0;
	if (first)
		*lo = v;
	else
		*hi = v;
}

/*
 * D67: RECV counts the bytes readable, SEND the free space, on TCP and on
 * an AF_UNIX socketpair.  TCP's queue shrinks as the peer's ACKs come, so
 * its free space is taken between a reading before and one after.
 */
static void data_recv_send(int cli, int srv)
{
	int kfd = kt_open(O_RDWR);
	unsigned int lo, hi;
	char buf[16];

	kt_add_queued(kfd, kt_uk(KEVENT_SOCKET, (__u32)srv, 0, S(RECV), 0, 1));
	cr_assert_eq(send(cli, "hello, world", 12, 0), 12);
	cr_assert(kt_wait_ready(kfd, 1, 5000), "RECV fired");
	cr_assert_eq(recv(srv, buf, 2, 0), 2);
	struct ukevent e = kt_get_one(kfd, "RECV");
	cr_assert_eq(e.ret_data[0], (__u32)S(RECV), "%#x", e.ret_data[0]);
	cr_assert_eq(e.ret_data[1], 10u, "D67: 12 - 2 bytes, got %u", e.ret_data[1]);
	sndbuf_free(cli, &lo, &hi, true);
	struct ukevent snd = kt_uk(KEVENT_SOCKET, (__u32)cli, 0, S(SEND), 0, 2);
	kt_ctl1(kfd, KEVENT_CTL_ADD, &snd, 1);
	sndbuf_free(cli, &lo, &hi, false);
	cr_assert_eq(snd.ret_data[0], (__u32)S(SEND), "%#x", snd.ret_data[0]);
	cr_assert(snd.ret_data[1] >= lo && snd.ret_data[1] <= hi,
		  "D67: free space %u, not in [%u, %u]", snd.ret_data[1], lo, hi);
	cr_assert(snd.ret_data[1] > 0);
	close(kfd);
}

KTEST_REVS(socket, data_recv_and_send, 4, KTEST_OPEN)
{
	int lst, cli, srv, sv[2];

	kt_require_type(KEVENT_SOCKET);
	tcp_conn(&lst, &cli, &srv);
	data_recv_send(cli, srv);
	close(cli);
	close(srv);
	close(lst);
	kt_socketpair(SOCK_STREAM, sv);
	data_recv_send(sv[1], sv[0]);
	close(sv[0]);
	close(sv[1]);
}

/* D67: below revision 4 RECV's ret_data[1] stays 0 with bytes waiting. */
KTEST_REVS(socket, data_zero_below_revision_4, 1, 3)
{
	int kfd, sv[2];

	kt_require_type(KEVENT_SOCKET);
	kfd = kt_open(O_RDWR);
	kt_socketpair(SOCK_STREAM, sv);
	kt_add_queued(kfd, kt_uk(KEVENT_SOCKET, (__u32)sv[0], 0, S(RECV), 0, 1));
	cr_assert_eq(send(sv[1], "abc", 3, 0), 3);
	struct ukevent e = kt_get_one(kfd, "RECV");
	cr_assert_eq(e.ret_data[0], (__u32)S(RECV), "%#x", e.ret_data[0]);
	cr_assert_eq(e.ret_data[1], 0u, "revision %d: %u", kt_rev(), e.ret_data[1]);
	close(sv[0]);
	close(sv[1]);
	close(kfd);
}

/* ---- revision 4: a kevent's fd still names its file at delivery (D69) ---- */

/*
 * D69: TCP: the socket's fd closed with RECV pending (the kevent holds the
 * socket: no FIN goes out) is BROKEN -EBADF, and the kevent never fires
 * again; an AF_UNIX socket's number reused by another socket likewise.
 */
KTEST_REVS(socket, fd_check_closed_or_reused_breaks, 4, KTEST_OPEN)
{
	int kfd, lst, cli, srv, sv[2], other[2];
	struct ukevent ev[4];

	kt_require_type(KEVENT_SOCKET);
	kfd = kt_open(O_RDWR);
	tcp_conn(&lst, &cli, &srv);
	kt_socketpair(SOCK_STREAM, sv);
	kt_socketpair(SOCK_STREAM, other);
	kt_add_queued(kfd, kt_uk(KEVENT_SOCKET, (__u32)srv, 0, S(RECV), 0, 1));
	kt_add_queued(kfd, kt_uk(KEVENT_SOCKET, (__u32)sv[0], 0, S(RECV), 0, 2));
	cr_assert_eq(send(cli, "abc", 3, 0), 3);
	cr_assert_eq(send(sv[1], "de", 2, 0), 2);
	cr_assert(kt_wait_ready(kfd, 2, 5000), "both fired");
	close(srv);
	cr_assert_eq(dup3(other[0], sv[0], O_CLOEXEC), sv[0], "dup3: %s", strerror(errno));
	cr_assert_eq(send(other[1], "f", 1, 0), 1);	/* the new socket is readable too */
	cr_assert_eq(kt_get(kfd, 2, 4, 5000000000ull, ev), 2);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(ev[i].ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE),
			     "D69, kevent %u: %#x", ev[i].user[0], ev[i].ret_flags);
		cr_assert_eq(ev[i].ret_data[0], 0u, "D69: no bit, %#x", ev[i].ret_data[0]);
		cr_assert_eq((int)ev[i].ret_data[1], -EBADF, "D69: -EBADF, got %d",
			     (int)ev[i].ret_data[1]);
	}
	cr_assert_eq(send(cli, "g", 1, 0), 1);
	kt_assert_quiet(kfd, 200, "D69: a stale kevent never fires again");
	close(cli);
	close(lst);
	close(sv[0]);
	close(sv[1]);
	close(other[0]);
	close(other[1]);
	close(kfd);
}

/* D69: below revision 4 a closed socket fd's kevent reports as ever (A7). */
KTEST_REVS(socket, fd_check_none_below_revision_4, 1, 3)
{
	int kfd, sv[2], fd;

	kt_require_type(KEVENT_SOCKET);
	kfd = kt_open(O_RDWR);
	kt_socketpair(SOCK_STREAM, sv);
	fd = sv[0];
	kt_add_queued(kfd, kt_uk(KEVENT_SOCKET, (__u32)fd, 0, S(RECV), 0, 1));
	close(fd);
	cr_assert_eq(send(sv[1], "abc", 3, 0), 3);
	struct ukevent e = kt_get_one(kfd, "RECV");
	cr_assert_eq(e.ret_flags, (__u32)KEVENT_RET_DONE, "revision %d: %#x", kt_rev(),
		     e.ret_flags);
	cr_assert_eq(e.ret_data[0], (__u32)S(RECV), "%#x", e.ret_data[0]);
	close(sv[1]);
	close(kfd);
}

/* A7 on revision 4: a socket kevent stale by D69 still holds it: no FIN until REMOVE. */
KTEST_REVS(socket, fd_check_stale_no_fin_until_remove, 4, KTEST_OPEN)
{
	kt_require_type(KEVENT_SOCKET);
	int kfd = kt_open(O_RDWR);
	struct conn c;
	char buf[16];

	connect_accept(AF_INET, kfd, &c);
	struct ukevent rcv = kt_uk(KEVENT_SOCKET, (__u32)c.cli, 0, S(RECV), 0, 9);
	kt_add_queued(kfd, rcv);
	close(c.cli);
	cr_assert_eq(send(c.srv, "x", 1, 0), 1);
	struct ukevent e = kt_get_one(kfd, "the closed socket's kevent");
	cr_assert_eq(e.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE), "D69: %#x",
		     e.ret_flags);
	cr_assert_eq((int)e.ret_data[1], -EBADF, "D69: %d", (int)e.ret_data[1]);
	cr_assert_eq(kt_poll1(c.srv, POLLIN, 300), 0, "the peer saw a FIN before REMOVE (A7)");
	kt_remove(kfd, rcv);
	cr_assert(kt_poll1(c.srv, POLLIN, 10000) & (POLLIN | POLLHUP | POLLERR), "no FIN after REMOVE");
	cr_assert(recv(c.srv, buf, sizeof(buf), 0) <= 0, "FIN expected");
	close(c.srv);
	close(c.lst);
	close(kfd);
}
