// SPDX-License-Identifier: GPL-2.0
/* Simulated user memory: see test-uaccess.h.  Not thread safe by design. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "test-uaccess.h"

static int span_ok(const struct ktest_mem *m, __u64 uaddr, size_t len,
		   __u64 lo, __u64 hi)
{
	__u64 start = (__u64)(uintptr_t)m->base;

	if (uaddr < start || uaddr - start > m->len || len > m->len - (uaddr - start))
		return 0;
	return !(lo < hi && uaddr < hi && uaddr + len > lo);
}

static int mem_read(void *ctx, void *dst, __u64 uaddr, size_t len)
{
	struct ktest_mem *m = ctx;

	m->reads++;
	if (!span_ok(m, uaddr, len, m->rfault_lo, m->rfault_hi))
		return -EFAULT;
	memcpy(dst, (void *)(uintptr_t)uaddr, len);
	return 0;
}

static int mem_write(void *ctx, __u64 uaddr, const void *src, size_t len)
{
	struct ktest_mem *m = ctx;

	/*
	 * Outside the buffer always faults; the [lo, hi) window only once
	 * wfault_after writes passed (memory unmapped between probe and copy).
	 */
	bool late = m->writes++ >= m->wfault_after;

	if (!span_ok(m, uaddr, len, late ? m->wfault_lo : 0, late ? m->wfault_hi : 0))
		return -EFAULT;
	memcpy((void *)(uintptr_t)uaddr, src, len);
	return 0;
}

/* read() then write() of the same bytes, counted and faulted as those two. */
static int mem_probe(void *ctx, __u64 uaddr, size_t len)
{
	struct ktest_mem *m = ctx;
	bool late;

	m->reads++;
	if (!span_ok(m, uaddr, len, m->rfault_lo, m->rfault_hi))
		return -EFAULT;
	late = m->writes++ >= m->wfault_after;
	if (!span_ok(m, uaddr, len, late ? m->wfault_lo : 0, late ? m->wfault_hi : 0))
		return -EFAULT;
	return 0;
}

void ktest_mem_init(struct ktest_mem *m, void *buf, size_t len)
{
	memset(m, 0, sizeof(*m));
	m->ua.read = mem_read;
	m->ua.write = mem_write;
	m->ua.probe = mem_probe;
	m->ua.ctx = m;
	m->base = buf;
	m->len = len;
}

__u64 ktest_mem_addr(const struct ktest_mem *m, size_t off)
{
	return (__u64)(uintptr_t)(m->base + off);
}
