// SPDX-License-Identifier: MIT
/*
 * kqueue-echo: a TCP echo server written against the BSD kqueue API, run
 * on /dev/kevent through libkqueue-kevent.
 *
 * EVFILT_READ watches the listener (data: connections waiting) and each
 * connection (data: bytes to read, EV_EOF when the peer is done); the
 * server closes a finished connection without EV_DELETE, as BSD programs
 * do.  EVFILT_TIMER is an idle watchdog (10 s without traffic: give up; an
 * EV_ADD of the existing timer restarts it) and EVFILT_USER is how the client thread tells the server to stop.
 *
 * No arguments: a self-test.  A client thread makes 2 connections, sends 3
 * messages on each, checks the echoes and triggers the user event; the
 * server checks it accepted and closed 2.  Exit status: 0 as expected, 1 on
 * a failure, 77 without /dev/kevent ($KEVENT_DEVICE).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* accept4() under -std=c11 */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/event.h>
#include <sys/socket.h>
#include <unistd.h>

#define NCONN	2
#define NMSG	3
#define WATCHDOG 1	/* EVFILT_TIMER ident */
#define STOP	 1	/* EVFILT_USER ident */

static int kq, client_ok;
static struct sockaddr_in sa = { .sin_family = AF_INET };

static void *client(void *arg)
{
	struct kevent stop;

	(void)arg;
	client_ok = 1;
	for (int c = 0; c < NCONN; c++) {
		int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			client_ok = 0;
		for (int m = 0; m < NMSG && client_ok; m++) {
			char out[64], in[64];
			int len = snprintf(out, sizeof(out), "hello %d.%d", c, m);

			if (send(s, out, (size_t)len, 0) != len ||
			    recv(s, in, (size_t)len, MSG_WAITALL) != len || memcmp(in, out, (size_t)len))
				client_ok = 0;
			else
				printf("client: echo of \"%.*s\" ok\n", len, in);
		}
		close(s);
	}
	/* Wake the server's kevent() from this thread. */
	EV_SET(&stop, STOP, EVFILT_USER, 0, NOTE_TRIGGER, 0, NULL);
	kevent(kq, &stop, 1, NULL, 0, NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	int lst, accepted = 0, closed = 0, stop = 0;
	socklen_t salen = sizeof(sa);
	struct kevent ch[3], ev[16];
	pthread_t t;

	if (argc > 1) {
		fprintf(stderr, "usage: %s   (a self-test; see the source)\n", argv[0]);
		return strcmp(argv[1], "--help") == 0 ? 0 : 1;
	}
	kq = kqueue();
	if (kq < 0) {
		perror("kqueue");
		return errno == ENOENT || errno == ENODEV ? 77 : 1;
	}
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lst = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (lst < 0 || bind(lst, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lst, 8) < 0 ||
	    getsockname(lst, (struct sockaddr *)&sa, &salen) < 0)
		return 1;
	EV_SET(&ch[0], lst, EVFILT_READ, EV_ADD, 0, 0, NULL);
	EV_SET(&ch[1], WATCHDOG, EVFILT_TIMER, EV_ADD, NOTE_SECONDS, 10, NULL);
	EV_SET(&ch[2], STOP, EVFILT_USER, EV_ADD | EV_CLEAR, 0, 0, NULL);
	if (kevent(kq, ch, 3, NULL, 0, NULL) < 0) {
		perror("kevent: register");
		return 1;
	}
	pthread_create(&t, NULL, client, NULL);
	/* The stop request may overtake the last EOF: finish the connections. */
	while (!stop || closed < accepted) {
		int n = kevent(kq, NULL, 0, ev, 16, NULL);

		if (n < 0 && errno != EINTR)
			return 1;
		for (int i = 0; i < n; i++) {
			int fd = (int)ev[i].ident;

			if (ev[i].filter == EVFILT_USER) {
				stop = 1;
			} else if (ev[i].filter == EVFILT_TIMER) {
				fprintf(stderr, "server: idle for 10 s\n");
				return 1;
			} else if (fd == lst) {
				/* data: the connections waiting to be accepted */
				for (intptr_t k = 0; k < ev[i].data; k++) {
					int c = accept4(lst, NULL, NULL, SOCK_CLOEXEC);

					if (c < 0)
						break;
					EV_SET(&ch[0], c, EVFILT_READ, EV_ADD, 0, 0, NULL);
					kevent(kq, ch, 1, NULL, 0, NULL);
					accepted++;
				}
			} else if (ev[i].data > 0) {
				/* data: the bytes waiting; level-triggered, so no loop */
				char buf[4096];
				ssize_t r = read(fd, buf, sizeof(buf));

				if (r > 0 && write(fd, buf, (size_t)r) != r)
					return 1;
			} else if (ev[i].flags & EV_EOF) {
				close(fd);	/* removes its kevent too */
				closed++;
			}
		}
		/* Traffic: restart the watchdog (EV_ADD of an existing timer). */
		EV_SET(&ch[1], WATCHDOG, EVFILT_TIMER, EV_ADD, NOTE_SECONDS, 10, NULL);
		kevent(kq, &ch[1], 1, NULL, 0, NULL);
	}
	pthread_join(t, NULL);
	printf("server: accepted %d, closed %d\n", accepted, closed);
	return client_ok && accepted == NCONN && closed == NCONN ? 0 : 1;
}
