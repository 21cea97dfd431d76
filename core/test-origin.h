/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A scriptable origin for tests, benchmarks and the fuzzer (kcore_test_dep).
 * Install it per core: cfg.origins[type] = &ktest_origin_ops.  It keeps every
 * attached kevent in one table keyed on id.raw_u64 and fires only when told.
 *
 * ukevent.event bits it interprets (any other bits are just kept):
 */
#ifndef KEVENT_CORE_TEST_ORIGIN_H
#define KEVENT_CORE_TEST_ORIGIN_H

#include "origin.h"

#define KTEST_READY_AT_ADD	0x10000000u	/* attach: ready, ret_data[0] = id.raw[0] */
#define KTEST_FAIL_ATTACH	0x20000000u	/* attach: -EIO */
#define KTEST_READY_AT_MODIFY	0x40000000u	/* modify: ready, ret_data[0] = 1 */
#define KTEST_FAIL_MODIFY	0x80000000u	/* modify: -EIO */
#define KTEST_FIRE_IN_ATTACH	0x08000000u	/* attach: korigin_fire() first, data0 = 7 */
#define KTEST_STALE_FD		0x04000000u	/* D69: fd_check: its fd names another file */

extern const struct korigin_ops ktest_origin_ops;

/*
 * D67: its count, deterministic so that the fuzz model can restate it: 0
 * when no bit fired, else id.raw[1] ^ fired (it depends on the bits the
 * record reports, so a count read for other bits shows).
 */
__u32 ktest_count(const struct ukevent *uk, __u32 fired);

/* Forget all state (between tests of one process); nothing may be attached. */
void ktest_origin_reset(void);

/* Kevents attached and not yet detached, and calls seen so far. */
unsigned int ktest_attached(void);
unsigned long ktest_attach_calls(void);
unsigned long ktest_detach_calls(void);

/*
 * Fire every attached kevent with this id that has not been told to stop,
 * with ret_data = {data0, 0}; returns how many were fired.
 */
unsigned int ktest_fire(__u64 id, __u32 data0);
/* Report failure: BROKEN with ret_data[1] = err; returns how many. */
unsigned int ktest_break(__u64 id, int err);
/*
 * Like ktest_fire(), but also fires kevents the core told to stop (a racing
 * origin); returns how many korigin_fire() calls answered 0 (keep going).
 */
unsigned int ktest_fire_stopped(__u64 id, __u32 data0);

#endif /* KEVENT_CORE_TEST_ORIGIN_H */
