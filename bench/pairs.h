/* SPDX-License-Identifier: MIT */
/*
 * What the socket-pair benchmarks (bench/sockets/epoll2006.c,
 * bench/kqueue/kqueue-scale.c, bench/kqueue/kqueue-loop.c) share: N
 * non-blocking AF_UNIX pairs, the writer's choice of a pair, the reader's
 * drain, the clock, and the device probe that makes them skip (77) where no
 * kevent device answers.  Each keeps its own writer loop and readers: what
 * they count differs.
 */
#ifndef KEVENT_BENCH_PAIRS_H
#define KEVENT_BENCH_PAIRS_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libkevent.h>

static inline double bench_clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The writer's next pair: xorshift32, the same sequence in every benchmark. */
static inline unsigned int bench_next_pair(unsigned int *x, unsigned int npairs)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x % npairs;
}

#define BENCH_XORSHIFT_SEED	2463534242u

/* Reads a socket empty: what a reader does with each event. */
static inline void bench_drain(int fd)
{
	char buf[256];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

/*
 * n non-blocking pairs into sv, after raising RLIMIT_NOFILE to room for
 * them plus spare; 0, or -1 with the reason printed.
 */
static inline int bench_open_pairs(int (*sv)[2], int n, const char *prog)
{
	struct rlimit rl = { (rlim_t)(2 * n + 256), (rlim_t)(2 * n + 256) };

	if (setrlimit(RLIMIT_NOFILE, &rl))
		fprintf(stderr, "%s: RLIMIT_NOFILE: %s\n", prog, strerror(errno));
	for (int i = 0; i < n; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv[i]) < 0) {
			fprintf(stderr, "%s: socketpair %d: %s\n", prog, i, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* $KEVENT_DEVICE, else the default path. */
static inline const char *bench_device(void)
{
	const char *dev = getenv("KEVENT_DEVICE");

	return dev && *dev ? dev : KEVENT_DEVICE_DEFAULT;
}

/* INFO of the device at dev: 0, or -1 with a skip line printed (exit 77). */
static inline int bench_probe(const char *dev, struct kevent_info *info, const char *prog)
{
	int fd = open(dev, O_RDWR | O_CLOEXEC), bad = fd < 0 || kevent_info(fd, info);

	if (bad)
		printf("%s: no kevent device at %s: %s: skip\n", prog, dev, strerror(errno));
	if (fd >= 0)
		close(fd);
	return bad ? -1 : 0;
}

static inline const char *bench_backend_name(__u32 b)
{
	switch (b) {
	case KEVENT_BACKEND_CUSE: return "cuse";
	case KEVENT_BACKEND_MODULE: return "module";
	case KEVENT_BACKEND_FUSE: return "fuse";
	case KEVENT_BACKEND_CORE: return "core";
	default: return "unknown";
	}
}

#endif
