/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by the origin benchmarks: the core in process, own-memory uaccess. */
#ifndef KEVENT_BENCH_ORIGINS_COMMON_H
#define KEVENT_BENCH_ORIGINS_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "kcore.h"
#include "origins.h"

static inline __u64 bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000u + (__u64)ts.tv_nsec;
}

static int bench_read(void *ctx, void *dst, __u64 uaddr, size_t len)
{
	memcpy(dst, (void *)(uintptr_t)uaddr, len);
	return 0;
}

static int bench_write(void *ctx, __u64 uaddr, const void *src, size_t len)
{
	memcpy((void *)(uintptr_t)uaddr, src, len);
	return 0;
}

static const struct kuaccess bench_mem = { .read = bench_read, .write = bench_write };

static inline struct kcaller bench_self(void)
{
	struct kcaller c = { (pid_t)syscall(SYS_gettid), getpid(), getuid(), getgid() };

	return c;
}

/* The caller of every benchmark ioctl (the main thread: no syscalls per call). */
static struct kcaller bench_me;

static inline int bench_ioctl(struct kqueue *q, unsigned int cmd, const void *arg, size_t len)
{
	struct kcaller me = bench_me;
	struct kdisp_plan plan;
	int ret = kdisp_plan(q, cmd, arg, len, &me, &plan);

	return ret ? ret : kdisp_execute(q, &plan, &me, &bench_mem, NULL, NULL, NULL);
}

static inline int bench_ctl(struct kqueue *q, __u32 cmd, struct ukevent *uk, __u32 num)
{
	struct kevent_ctl_arg a = { .cmd = cmd, .num = num, .events = (uintptr_t)uk };

	return bench_ioctl(q, KEVENT_IOC_CTL, &a, sizeof(a));
}

static inline int bench_get(struct kqueue *q, __u32 min_nr, __u32 max_nr, __u64 timeout_ns,
			    struct ukevent *out)
{
	struct kevent_get_events_arg a = {
		.min_nr = min_nr, .max_nr = max_nr, .timeout_ns = timeout_ns,
		.events = (uintptr_t)out,
	};

	return bench_ioctl(q, KEVENT_IOC_GET_EVENTS, &a, sizeof(a));
}

static inline int bench_cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* The q-th quantile (0..1) of n values, sorting them. */
static inline __u64 bench_quantile(__u64 *v, size_t n, double q)
{
	size_t i;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), bench_cmp_u64);
	i = (size_t)(q * (double)(n - 1));
	return v[i];
}

#endif
