/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Simulated user memory for tests and the fuzzer (kcore_test_dep): a
 * struct kuaccess over one buffer whose user address is its real address,
 * with a read-fault and a write-fault window to place copy faults exactly.
 */
#ifndef KEVENT_CORE_TEST_UACCESS_H
#define KEVENT_CORE_TEST_UACCESS_H

#include <stddef.h>

#include "kcore.h"

struct ktest_mem {
	struct kuaccess ua;
	unsigned char *base;
	size_t len;
	__u64 rfault_lo, rfault_hi;	/* reads touching [lo, hi) fault */
	__u64 wfault_lo, wfault_hi;	/* writes touching [lo, hi) fault */
	unsigned long wfault_after;	/* ... but only once this many writes passed */
	unsigned long reads, writes;	/* calls seen */
};

void ktest_mem_init(struct ktest_mem *m, void *buf, size_t len);
/* The user address of byte off of the buffer. */
__u64 ktest_mem_addr(const struct ktest_mem *m, size_t off);

#endif /* KEVENT_CORE_TEST_UACCESS_H */
