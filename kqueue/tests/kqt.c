// SPDX-License-Identifier: GPL-2.0-only
/* Helpers of the libkqueue-kevent conformance suite; see kqt.h. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "libkevent.h"

#include "kqt.h"

int kqt_kqueue(void)
{
	const char *dev = getenv("KEVENT_DEVICE");
	int kq = kqueue();

	if (kq < 0 && (errno == ENOENT || errno == ENODEV || errno == ENXIO))
		cr_skip_test("no %s (KEVENT_DEVICE): run through the kqueue suite's launcher",
			     dev && *dev ? dev : "/dev/kevent");
	cr_assert_geq(kq, 0, "kqueue: %s", strerror(errno));
	return kq;
}

int kqt_change(int kq, uintptr_t ident, short filter, unsigned short flags,
	       unsigned int fflags, intptr_t data, void *udata)
{
	struct kevent c;

	EV_SET(&c, ident, filter, flags, fflags, data, udata);
	return kevent(kq, &c, 1, NULL, 0, NULL) < 0 ? -errno : 0;
}

void kqt_ok(int kq, uintptr_t ident, short filter, unsigned short flags,
	    unsigned int fflags, intptr_t data, void *udata)
{
	int r = kqt_change(kq, ident, filter, flags, fflags, data, udata);

	cr_assert_eq(r, 0, "change ident %lu filter %d flags %#x: %s",
		     (unsigned long)ident, filter, flags, strerror(-r));
}

int kqt_wait(int kq, struct kevent *ev, int n, long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	int r = kevent(kq, NULL, 0, ev, n, &ts);

	cr_assert_geq(r, 0, "kevent: %s", strerror(errno));
	return r;
}

struct kevent kqt_get(int kq, const char *what)
{
	struct kevent ev[2];
	int n = kqt_wait(kq, ev, 1, 10000);

	cr_assert_eq(n, 1, "%s: want one event in 10 s, got %d", what, n);
	return ev[0];
}

void kqt_quiet(int kq, long ms, const char *what)
{
	struct kevent ev;
	int n = kqt_wait(kq, &ev, 1, ms);

	cr_assert_eq(n, 0, "%s: want no event, got ident %lu filter %d flags %#x data %ld",
		     what, (unsigned long)ev.ident, ev.filter, ev.flags, (long)ev.data);
}

void kqt_same(const struct kevent *want, const struct kevent *got, const char *what)
{
	cr_assert(want->ident == got->ident && want->filter == got->filter &&
		  want->flags == got->flags && want->fflags == got->fflags &&
		  want->data == got->data && want->udata == got->udata,
		  "%s: want {%lu %d %#x %#x %ld %p}, got {%lu %d %#x %#x %ld %p}", what,
		  (unsigned long)want->ident, want->filter, want->flags, want->fflags,
		  (long)want->data, want->udata,
		  (unsigned long)got->ident, got->filter, got->flags, got->fflags,
		  (long)got->data, got->udata);
}

struct kevent kqt_error_entry(int kq, uintptr_t ident, short filter, unsigned short flags,
			      unsigned int fflags, intptr_t data)
{
	struct kevent c, e;
	int n;

	EV_SET(&c, ident, filter, flags, fflags, data, (void *)0x5a);
	memset(&e, 0, sizeof(e));
	n = kevent(kq, &c, 1, &e, 1, NULL);	/* must not block: the entry returns at once */
	cr_assert_eq(n, 1, "one EV_ERROR entry: kevent returned %d (%s)", n,
		     n < 0 ? strerror(errno) : "");
	cr_assert(e.flags & EV_ERROR, "flags %#x lack EV_ERROR", e.flags);
	cr_assert_eq(e.ident, ident);
	cr_assert_eq(e.filter, filter);
	cr_assert_eq(e.udata, (void *)0x5a);
	return e;
}

void kqt_pipe(int p[2])
{
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0, "pipe: %s", strerror(errno));
}

void kqt_socketpair(int sv[2])
{
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
}

void kqt_write(int fd, size_t n)
{
	char buf[256];

	memset(buf, 'k', sizeof(buf));
	while (n) {
		size_t k = n < sizeof(buf) ? n : sizeof(buf);
		ssize_t w = write(fd, buf, k);

		cr_assert_gt(w, 0, "write: %s", strerror(errno));
		n -= (size_t)w;
	}
}

void kqt_drain(int fd)
{
	char buf[4096];
	int fl = fcntl(fd, F_GETFL);

	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	fcntl(fd, F_SETFL, fl);
}

int kqt_tcp_listener(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert_geq(s, 0);
	cr_assert_eq(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(s, 16), 0);
	cr_assert_eq(getsockname(s, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return s;
}

int kqt_tcp_connect(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert_geq(s, 0);
	cr_assert_eq(connect(s, (struct sockaddr *)&a, sizeof(a)), 0, "connect: %s", strerror(errno));
	return s;
}

int kqt_tmpfile(char *buf, size_t len, size_t n)
{
	int fd;

	snprintf(buf, len, "/tmp/kqt-XXXXXX");
	fd = mkstemp(buf);
	cr_assert_geq(fd, 0, "mkstemp: %s", strerror(errno));
	if (n)
		kqt_write(fd, n);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

unsigned int kqt_revision(int kq, unsigned int *highest)
{
	struct kevent_info info;

	/* The kqueue descriptor is the device's queue fd (kqueue-kevent(3)). */
	cr_assert_eq(kevent_info(kq, &info), 0, "INFO on the kqueue: %s", strerror(errno));
	cr_assert_geq(info.size, KEVENT_INFO_SIZE_VER2, "INFO of %u bytes: no queue_revision",
		      info.size);
	if (highest)
		*highest = info.abi_revision;
	return info.queue_revision;
}
