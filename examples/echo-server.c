// SPDX-License-Identifier: MIT
/*
 * echo-server: a TCP echo server on loopback driven by socket kevents.
 *
 * A KEVENT_SOCKET kevent with KEVENT_SOCKET_ACCEPT watches the listener and
 * one with KEVENT_SOCKET_RECV each connection.  They are not ONESHOT, so they
 * stay registered, but re-firing is edge-like: on each event the server
 * drains the socket until EAGAIN.  Two rules of the 2006 ABI show here:
 *  - a kevent already ready at ADD is answered by ADD and NOT registered:
 *    handle it, then ADD again (serve_conn() below);
 *  - a kevent holds its file: REMOVE it before close(), or the peer never
 *    sees the close.
 *
 * No arguments: a self-test.  A forked client makes 2 connections, sends 3
 * messages on each and checks the echoes; the server checks it accepted and
 * closed 2.  --serve PORT: serve until killed.  Exit status: 0 as expected,
 * 1 on a failure, 77 without /dev/kevent.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* O_CLOEXEC, accept4(), pipe2() under -std=c11 */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libkevent.h>

#define LISTENER 1	/* user[1]: what the kevent watches; user[0]: the fd */
#define CONN	 2
#define NCONN	 2
#define NMSG	 3

static int kfd, accepted, closed;

/* ADD (or REMOVE) the kevent of fd; ADD: 0 registered, 1 ready at once. */
static int sock_ctl(unsigned int cmd, int fd, __u32 event, __u32 kind)
{
	struct ukevent uk = { .type = KEVENT_SOCKET, .event = event };
	int n;

	uk.id.raw[0] = uk.user[0] = (__u32)fd;
	uk.user[1] = kind;	/* MODIFY and REMOVE match id + cookie */
	n = kevent_ctl(kfd, cmd, 1, &uk);
	if (n < 0 || (uk.ret_flags & KEVENT_RET_BROKEN)) {
		fprintf(stderr, "echo-server: kevent_ctl fd %d: %s\n", fd,
			strerror(n < 0 ? errno : -(int)uk.ret_data[1]));
		exit(1);
	}
	return n;
}

/* Echo what is queued on conn; at end of file REMOVE its kevent, close it. */
static void serve_conn(int conn, int registered)
{
	char buf[4096];
	ssize_t r;

	while ((r = recv(conn, buf, sizeof(buf), MSG_DONTWAIT)) != 0) {
		if (r > 0 && send(conn, buf, (size_t)r, MSG_NOSIGNAL) != r)
			exit(1);	/* a short send: not handled in an example */
		if (r < 0 && errno != EAGAIN && errno != EINTR)
			break;		/* an error: drop the connection */
		if (r < 0 && errno == EAGAIN) {
			if (registered || sock_ctl(KEVENT_CTL_ADD, conn, KEVENT_SOCKET_RECV, CONN) == 0)
				return;	/* registered: wait for the next RECV */
			/* readable again already: ADD answered it, go on */
		}
	}
	if (registered)
		sock_ctl(KEVENT_CTL_REMOVE, conn, KEVENT_SOCKET_RECV, CONN);
	close(conn);
	closed++;
	printf("server: connection %d closed\n", conn);
}

static void accept_all(int lst)
{
	int c;

	while ((c = accept4(lst, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		printf("server: accepted connection %d\n", c);
		accepted++;	/* data may be there already: then ADD answers at once */
		serve_conn(c, sock_ctl(KEVENT_CTL_ADD, c, KEVENT_SOCKET_RECV, CONN) == 0);
	}
}

static int client(const struct sockaddr_in *sa)
{
	for (int c = 0; c < NCONN; c++) {
		int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (s < 0 || connect(s, (const struct sockaddr *)sa, sizeof(*sa)) < 0)
			return 1;
		for (int m = 0; m < NMSG; m++) {
			char out[64], in[64];
			int len = snprintf(out, sizeof(out), "hello %d.%d", c, m);

			if (send(s, out, (size_t)len, 0) != len ||
			    recv(s, in, (size_t)len, MSG_WAITALL) != len || memcmp(in, out, (size_t)len))
				return 1;
			printf("client: echo of \"%.*s\" ok\n", len, in);
		}
		close(s);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *dev = getenv("KEVENT_DEVICE");
	int serve = argc == 3 && strcmp(argv[1], "--serve") == 0, status = 1, lst, ws = 0;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t salen = sizeof(sa);
	struct ukevent ev[16];
	pid_t pid = -1;

	if (argc > 1 && !serve) {
		printf("usage: %s [--serve PORT]\nWithout arguments: self-test with a built-in\n"
		       "client.  --serve PORT: echo on 127.0.0.1:PORT until killed.\n", argv[0]);
		return strcmp(argv[1], "--help") == 0 ? 0 : 2;
	}
	kfd = open(dev ? dev : KEVENT_DEVICE_DEFAULT, O_RDWR | O_CLOEXEC);
	if (kfd == -1) {
		int e = errno;

		perror("echo-server: open kevent device");
		return e == ENOENT || e == ENODEV || e == ENXIO ? 77 : 1;
	}
	lst = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	sa.sin_port = htons(serve ? (unsigned short)atoi(argv[2]) : 0);	/* 0: any */
	if (lst < 0 || bind(lst, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(lst, 16) < 0 || getsockname(lst, (struct sockaddr *)&sa, &salen) < 0) {
		perror("echo-server: listen");
		return 1;
	}
	printf("server: listening on 127.0.0.1:%d\n", ntohs(sa.sin_port));
	sock_ctl(KEVENT_CTL_ADD, lst, KEVENT_SOCKET_ACCEPT, LISTENER);	/* nobody yet: queued */

	fflush(stdout);
	if (!serve && (pid = fork()) == 0)
		exit(client(&sa));	/* exit(): flush the client's stdout */
	while (serve || closed < NCONN) {
		int n = kevent_get_events(kfd, 1, 16, 10000000000ULL, ev, 0);

		if (n <= 0) {
			fprintf(stderr, "echo-server: %s\n", n ? strerror(errno) : "no event in 10 s");
			goto out;
		}
		for (int i = 0; i < n; i++) {
			if (ev[i].ret_flags & KEVENT_RET_BROKEN) {	/* a socket error */
				errno = -(int)ev[i].ret_data[1];
				perror("echo-server: socket kevent");
				goto out;
			}
			/* ret_data[0]: the event bits that fired. */
			if (ev[i].user[1] == LISTENER && (ev[i].ret_data[0] & KEVENT_SOCKET_ACCEPT))
				accept_all(lst);
			else if (ev[i].user[1] == CONN && (ev[i].ret_data[0] & KEVENT_SOCKET_RECV))
				serve_conn((int)ev[i].user[0], 1);
		}
	}
	status = accepted == NCONN ? 0 : 1;
out:
	if (status && pid > 0)
		kill(pid, SIGKILL);
	if (pid > 0 && (waitpid(pid, &ws, 0) != pid || !WIFEXITED(ws) || WEXITSTATUS(ws))) {
		fprintf(stderr, "echo-server: the client failed\n");
		status = 1;
	}
	printf("echo-server: %s (%d accepted, %d closed)\n", status ? "FAILED" : "ok",
	       accepted, closed);
	return status;
}
