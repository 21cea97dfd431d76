/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The client suite's shared helpers.  The device is the only interface
 * under test: it is reached through $KEVENT_DEVICE (default /dev/kevent),
 * libkevent and <linux/kevent.h>, nothing else of this project.
 *
 * Tagging convention (ABI revision):
 *
 *	KTEST(suite, name) { ... }
 *
 * defines the Criterion test "suite/name__rev1": every test belongs to the
 * ABI revision KTEST_REV (= KEVENT_ABI_REVISION of the header it was
 * written against, 1 = take13 as served by this project).  A test for a
 * later revision uses KTEST_REVN(suite, name, 2) and is named name__rev2.
 * Select one revision with --filter '*\/ *__rev1' (no space); a test whose
 * revision differs from the backend's INFO abi_revision skips with the
 * reason.  Every test also skips, loudly, when the device does not exist:
 * "no /dev/kevent: run through tests/vm/guest".
 *
 * Backend-specific tests call ktest_only_backend(KEVENT_BACKEND_MODULE,
 * "module only: why") and skip elsewhere with that reason.
 */
#ifndef KTEST_H
#define KTEST_H

#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <libkevent.h>

#define KTEST_REV 1
#define KTEST_TIMEOUT 120.0	/* seconds; a TCG guest is slow */

#define KTEST_REVN(suite, name, rev, ...)					\
	static void ktest_body_##suite##_##name(void);				\
	Test(suite, name##__rev##rev, .timeout = KTEST_TIMEOUT, ##__VA_ARGS__)	\
	{									\
		ktest_require(rev);						\
		ktest_body_##suite##_##name();					\
	}									\
	static void ktest_body_##suite##_##name(void)

#define KTEST(suite, name, ...) KTEST_REVN(suite, name, 1, ##__VA_ARGS__)

/* Skip unless the device exists and speaks ABI revision rev. */
void ktest_require(int rev);

const char *kt_device(void);
/* Open a new queue; a failing open of an existing device is a test failure. */
int kt_open(int flags);
void kt_info(int fd, struct kevent_info *info);
/* INFO of a fresh queue, cached per process. */
const struct kevent_info *kt_backend_info(void);
unsigned int kt_backend(void);
const char *kt_backend_name(unsigned int backend);
void ktest_only_backend(unsigned int backend, const char *reason);
void kt_require_type(unsigned int type);
void kt_require_feature(unsigned int feat, const char *reason);
/* Skip unless n more kevents of this kind fit under the per-uid caps (B7). */
void kt_require_room(unsigned int limit_idx, unsigned int n);

/* ukevent builders; cookie goes to user[0], ~cookie to user[1]. */
struct ukevent kt_uk_timer(unsigned int ms, unsigned int req_flags, __u32 cookie);
struct ukevent kt_uk_poll(int fd, unsigned int event, unsigned int req_flags, __u32 cookie);
struct ukevent kt_uk(unsigned int type, __u32 id0, __u32 id1, unsigned int event,
		     unsigned int req_flags, __u32 cookie);

/* kevent_ctl() of one entry; asserts the result is want (>= 0). */
void kt_ctl1(int kfd, unsigned int cmd, struct ukevent *uk, int want);
/* ADD that must queue (return 0). */
void kt_add_queued(int kfd, struct ukevent uk);
/* REMOVE that must match. */
void kt_remove(int kfd, struct ukevent uk);
/* kevent_get_events(), -errno on failure. */
int kt_get(int kfd, unsigned int min_nr, unsigned int max_nr, __u64 timeout_ns,
	   struct ukevent *buf);
/* The raw ioctl, -errno on failure. */
int kt_ioctl(int fd, unsigned long req, void *arg);

unsigned int kt_queue_kevents(int kfd);
unsigned int kt_queue_ready(int kfd);
/* Wait (bounded by ms) until the queue has at least n ready. */
int kt_wait_ready(int kfd, unsigned int n, unsigned int ms);

/* Backend-wide parked GET_EVENTS calls (INFO live_waiters). */
__u64 kt_live_waiters(void);
/* Wait (bounded, 3 s) until there are n more than base, then 100 ms more. */
void kt_await_waiters(__u64 base, unsigned int n);

__u64 kt_now_ns(void);
__u32 kt_now_ms32(void);
void kt_sleep_ms(unsigned int ms);

void kt_pipe(int p[2]);		/* O_CLOEXEC pipe, asserted */
void kt_socketpair(int type, int sv[2]);
void kt_write1(int fd);
void kt_read_all(int fd);	/* drain a non-blocking or readable fd */
/* poll() one fd for events within ms: the revents, 0 on timeout. */
int kt_poll1(int fd, short events, int ms);

/* The user id "nobody", for the uid tests. */
#define KT_NOBODY 65534

#define KT_MS(ms) ((__u64)(ms) * 1000000ULL)

/*
 * Raw mmap checks of A10/D23 on a kevent fd opened O_RDWR (rw) and one
 * opened O_RDONLY (ro).  Returns 0 when all hold, else writes the first
 * failure to msg.  Used directly where the backend maps, and by the
 * kt-mmap-helper under the libkevent-mmap.so preload on CUSE.
 */
int kt_mmap_refusals(const char *dev, char *msg, size_t msglen);

#endif /* KTEST_H */
