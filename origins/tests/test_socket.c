// SPDX-License-Identifier: GPL-2.0
/* KEVENT_SOCKET through the recorder: one rule for TCP and AF_UNIX (A8). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <criterion/criterion.h>

#include "origins.h"
#include "recorder.h"
#include "pairs.h"

#define WAIT_MS 5000

static void setup(void)
{
	signal(SIGPIPE, SIG_IGN);
	rec_setup(0);
}

TestSuite(socket, .init = setup, .fini = rec_teardown);

static int add_sock(struct kitem *k, int fd, __u32 event, struct korigin_result *res)
{
	struct ukevent uk = {
		.id.raw = { (__u32)fd, 0 },
		.type = KEVENT_SOCKET,
		.event = event,
	};
	struct kcaller self = rec_self();

	return rec_add(k, &uk, &self, res);
}

static int tcp_listener(struct sockaddr_in *addr)
{
	socklen_t len = sizeof(*addr);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	cr_assert_geq(fd, 0);
	memset(addr, 0, sizeof(*addr));
	addr->sin_family = AF_INET;
	addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(bind(fd, (struct sockaddr *)addr, sizeof(*addr)), 0);
	cr_assert_eq(listen(fd, 16), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)addr, &len), 0);
	return fd;
}

/* A connected TCP pair over loopback: sv[0] client side, sv[1] accepted. */
static void tcp_pair(int sv[2])
{
	struct sockaddr_in addr;
	int l = tcp_listener(&addr);

	sv[0] = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert_eq(connect(sv[0], (struct sockaddr *)&addr, sizeof(addr)), 0);
	sv[1] = accept(l, NULL, NULL);
	cr_assert_geq(sv[1], 0);
	close(l);
}

static void unix_pair(int sv[2])
{
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
}

static void recv_later_and_peer_close(void (*mk)(int sv[2]))
{
	struct korigin_result res;
	struct kitem k;
	int sv[2];

	mk(sv);
	cr_assert_eq(add_sock(&k, sv[0], KEVENT_SOCKET_RECV, &res), 0);
	cr_assert_eq(write(sv[1], "x", 1), 1);
	cr_assert_eq(rec_wait_fires(&k, 1, WAIT_MS), 1);
	cr_expect_eq(k.last.ret_data[0], KEVENT_SOCKET_RECV);
	rec_dequeue(&k, NULL);
	rec_idle(30);
	cr_expect_eq(rec_fires(&k), 1, "A6: no re-fire without new activity");
	close(sv[1]);	/* EOF is readable: RECV again, not BROKEN */
	cr_assert_eq(rec_wait_fires(&k, 2, WAIT_MS), 2);
	cr_expect_eq(k.last.ret_data[0], KEVENT_SOCKET_RECV);
	cr_expect_eq(k.last.ret_flags, 0);
	rec_remove(&k);
	cr_expect_eq(k.violations, 0);
	close(sv[0]);
}

Test(socket, unix_recv_later_and_peer_close)
{
	recv_later_and_peer_close(unix_pair);
}

Test(socket, tcp_recv_later_and_peer_close)
{
	recv_later_and_peer_close(tcp_pair);
}

static void ready_at_add(void (*mk)(int sv[2]))
{
	struct korigin_result res;
	struct kitem k;
	int sv[2];

	mk(sv);
	cr_expect_eq(add_sock(&k, sv[0], KEVENT_SOCKET_SEND, &res), 1);
	cr_expect_eq(res.ret_data[0], KEVENT_SOCKET_SEND);
	cr_assert_eq(write(sv[1], "x", 1), 1);
	rec_idle(20);	/* let the byte arrive on loopback */
	cr_expect_eq(add_sock(&k, sv[0], KEVENT_SOCKET_RECV | KEVENT_SOCKET_ACCEPT, &res), 1);
	cr_expect_eq(res.ret_data[0], KEVENT_SOCKET_RECV, "ACCEPT is for listeners");
	close(sv[0]);
	close(sv[1]);
}

Test(socket, unix_ready_at_add)
{
	ready_at_add(unix_pair);
}

Test(socket, tcp_ready_at_add)
{
	ready_at_add(tcp_pair);
}

Test(socket, tcp_accept_reports_backlog)
{
	struct sockaddr_in addr;
	struct korigin_result res;
	struct kitem k;
	int l = tcp_listener(&addr), c1, c2;

	cr_assert_eq(add_sock(&k, l, KEVENT_SOCKET_ACCEPT | KEVENT_SOCKET_RECV, &res), 0);
	c1 = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert_eq(connect(c1, (struct sockaddr *)&addr, sizeof(addr)), 0);
	cr_assert_eq(rec_wait_fires(&k, 1, WAIT_MS), 1);
	cr_expect_eq(k.last.ret_data[0], KEVENT_SOCKET_ACCEPT);
	cr_expect_eq(k.last.ret_data[1], 1, "accept queue length %u", k.last.ret_data[1]);
	rec_dequeue(&k, NULL);
	c2 = socket(AF_INET, SOCK_STREAM, 0);
	cr_assert_eq(connect(c2, (struct sockaddr *)&addr, sizeof(addr)), 0);
	cr_assert_eq(rec_wait_fires(&k, 2, WAIT_MS), 2);
	cr_expect_eq(k.last.ret_data[1], 2);
	rec_remove(&k);
	close(c1);
	close(c2);
	close(l);
}

Test(socket, unix_accept)
{
	struct korigin_result res;
	struct kitem k;
	char path[64] = "/tmp/korigins-sockXXXXXX";
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int l = socket(AF_UNIX, SOCK_STREAM, 0), c = socket(AF_UNIX, SOCK_STREAM, 0);

	cr_assert_neq(mkdtemp(path), NULL);
	strcat(path, "/s");
	strcpy(sa.sun_path, path);
	cr_assert_eq(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(listen(l, 4), 0);
	cr_assert_eq(add_sock(&k, l, KEVENT_SOCKET_ACCEPT, &res), 0);
	cr_assert_eq(connect(c, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(rec_wait_fires(&k, 1, WAIT_MS), 1);
	cr_expect_eq(k.last.ret_data[0], KEVENT_SOCKET_ACCEPT);
	cr_expect_eq(k.last.ret_data[1], 0, "no backlog figure for AF_UNIX");
	rec_remove(&k);
	close(c);
	close(l);
	unlink(path);
	*strrchr(path, '/') = '\0';
	rmdir(path);
}

/* A reset connection: POLLERR -> BROKEN, the kevent leaves its origin. */
Test(socket, tcp_reset_is_broken)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct korigin_result res;
	struct kitem k;
	int sv[2];

	tcp_pair(sv);
	cr_assert_eq(add_sock(&k, sv[0], KEVENT_SOCKET_RECV, &res), 0);
	cr_assert_eq(setsockopt(sv[1], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
	close(sv[1]);	/* sends RST */
	cr_assert_eq(rec_wait_fires(&k, 1, WAIT_MS), 1);
	cr_expect_eq(k.last.ret_flags, KEVENT_RET_BROKEN);
	cr_expect_eq((int)k.last.ret_data[1], -ECONNRESET);
	cr_expect(k.stopped);
	rec_remove(&k);
	cr_expect_eq(k.violations, 0);
	close(sv[0]);
}

Test(socket, not_a_socket)
{
	struct korigin_result res;
	struct kitem k;
	int p[2];

	cr_assert_eq(pipe(p), 0);
	cr_expect_eq(add_sock(&k, p[0], KEVENT_SOCKET_RECV, &res), -ENOTSOCK);
	cr_expect_eq(add_sock(&k, 987654, KEVENT_SOCKET_RECV, &res), -EBADF);
	close(p[0]);
	close(p[1]);
}

/*
 * 10,000 AF_UNIX pairs held by child processes (so the pidfd path runs for
 * every one): each RECV kevent fires exactly once, none lost.
 */
Test(socket, ten_thousand_pairs_of_other_processes)
{
	struct rlimit rl;
	struct kitem *k = calloc(PAIRS, sizeof(*k));
	int *fds = calloc(PAIRS, sizeof(*fds)), ctl[CHILDREN][2], c, i;
	pid_t pid[CHILDREN];
	struct korigin_result res;
	char w;

	cr_assert(k && fds);
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < PAIRS + 200) {
		rl.rlim_cur = PAIRS + 200;
		if (rl.rlim_max < rl.rlim_cur)
			rl.rlim_max = rl.rlim_cur;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			cr_skip_test("RLIMIT_NOFILE cannot be raised to %d: %s",
				     PAIRS + 200, strerror(errno));
	}
	for (c = 0; c < CHILDREN; c++) {
		cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, ctl[c]), 0);
		pid[c] = fork();
		cr_assert_geq(pid[c], 0);
		if (pid[c] == 0) {
			/* Only our own control socket: EOF when the test dies. */
			for (i = 0; i < c; i++)
				close(ctl[i][0]);
			close(ctl[c][0]);
			pair_child(ctl[c][1]);
		}
		close(ctl[c][1]);
		cr_assert_eq(read_all(ctl[c][0], fds + c * PER_CHILD, PER_CHILD * sizeof(int)), 0);
	}
	for (i = 0; i < PAIRS; i++) {
		struct ukevent uk = { .id.raw = { (__u32)fds[i], 0 }, .type = KEVENT_SOCKET,
				      .event = KEVENT_SOCKET_RECV };
		struct kcaller who = { .tid = pid[i / PER_CHILD], .tgid = pid[i / PER_CHILD] };

		cr_assert_eq(rec_add(&k[i], &uk, &who, &res), 0, "pair %d", i);
	}
	for (c = 0; c < CHILDREN; c++) {
		cr_assert_eq(write(ctl[c][0], "g", 1), 1);
		cr_assert_eq(read(ctl[c][0], &w, 1), 1, "child %d could not write", c);
	}
	for (i = 0; i < PAIRS; i++)
		cr_assert_eq(rec_wait_fires(&k[i], 1, WAIT_MS), 1, "pair %d lost", i);
	rec_idle(30);
	for (i = 0; i < PAIRS; i++) {
		cr_expect_eq(k[i].fires, 1, "pair %d fired %u times", i, k[i].fires);
		cr_expect_eq(k[i].last.ret_data[0], KEVENT_SOCKET_RECV);
		rec_remove(&k[i]);
	}
	for (c = 0; c < CHILDREN; c++) {
		close(ctl[c][0]);
		waitpid(pid[c], NULL, 0);
	}
	free(k);
	free(fds);
}
