/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The client suite's shared helpers.  The device is the only interface
 * under test: it is reached through $KEVENT_DEVICE (default /dev/kevent),
 * libkevent and <linux/kevent.h>, nothing else of this project.
 *
 * Revisions (docs/abi-change.md 3 and 5).  A revision is a behaviour level
 * a queue selects with KEVENT_IOC_SET_ABI; INFO's abi_revision is the
 * highest one the backend serves.  Each test states the revisions its rule
 * holds for, [first, last]:
 *
 *	KTEST(suite, name) { ... }			[1, open]
 *	KTEST_REVS(suite, name, first, last) { ... }	last 0 (KTEST_OPEN): open
 *
 * and is instantiated once per revision in that range that this header
 * knows (1 .. KEVENT_ABI_REVISION at compile time): the Criterion tests
 * suite/name__rev1, suite/name__rev2, ...  A revision-1 rule therefore keeps
 * being checked on queues of later revisions until a revision that changes
 * it ends its range.  first and last are integer literals.  Select one
 * revision with --filter '*\/ *__rev1' (no space).
 *
 * Which instances a program runs: $KEVENT_TEST_INSTANCES, a comma list of
 * "first" (each test's first instance: the first revision of its range)
 * and revision numbers n (every instance on revision n); unset or empty,
 * every instance.  The guest boots select with it (tests/vm/meson.build):
 * a --filter cannot say "first instance" in a size that stays put as the
 * suite grows, and Criterion 2.4.1's extglob matcher aborts on a long
 * pattern.  main() (ktest.c) drops the instances it leaves out before the
 * run: they neither run nor appear in the report, not even as skipped.  A
 * --filter applies to what is left; --list still lists every instance.
 * Tests declared with Criterion's own Test() always run.
 *
 * Instance n runs on queues of revision n: kt_open() and kt_try_open() use
 * the queue as opened for n = 1 (2006 programs never call SET_ABI) and call
 * SET_ABI(n) right after the open for n > 1.  An instance skips, with the
 * reason, only when the backend does not serve its revision: above INFO's
 * abi_revision, or below its abi_lowest (INFO VER2; every backend serves
 * from revision 1 today).  Every test also
 * skips, loudly, when the device does not exist: "no /dev/kevent: run
 * through tests/vm/guest".
 *
 * Adding revision n to the header: copy the KT_AT_2 block below as KT_AT_n
 * (its KT_LE_n_* table lists 1 .. n; it tests KT_LE(n, first) and not
 * KT_LE(n - 1, last)), add KT_AT_n to KTEST_REVS and raise the #error's
 * bound to n.
 *
 * Backend-specific tests call ktest_only_backend(KEVENT_BACKEND_MODULE,
 * "module only: why") and skip elsewhere with that reason; a rule that
 * cannot hold on one backend calls ktest_not_on_backend(KEVENT_BACKEND_FUSE,
 * "fuse: why (abi.md 9)") and skips there.
 */
#ifndef KTEST_H
#define KTEST_H

#include <criterion/criterion.h>
#include <errno.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <libkevent.h>

/* Seconds; a TCG guest is slow.  One value for every test of a program
 * (tests/criterion-timeouts.py says why). */
#define KTEST_TIMEOUT 120.0
#define KTEST_OPEN 0		/* last of a range that no revision has ended */

/* The revision of the running instance (1 outside a test). */
int kt_rev(void);
/* The generated wrapper: sets kt_rev() and skips what cannot run (above). */
void ktest_require(int rev);
/* fuse, and the daemon may not use this caller's memory: every ioctl,
 * INFO too, fails EPERM (abi.md 7.1, 9).  ktest_require() skips every
 * KTEST then, with that reason; the noproc/ tests check the refusal. */
int kt_fuse_without_process_memory(void);

/* Preprocessor plumbing: KT_LE(k, x) is 1 when 1 <= x <= k, else 0. */
#define KT_CAT(a, b) KT_CAT_(a, b)
#define KT_CAT_(a, b) a##b
#define KT_PROBE ~, 1
#define KT_SECOND(a, b, ...) b
#define KT_IS_PROBE(...) KT_SECOND(__VA_ARGS__, 0, ~)
#define KT_LE(k, x) KT_IS_PROBE(KT_CAT(KT_CAT(KT_LE_, k), KT_CAT(_, x)))
#define KT_AND(a, b) KT_CAT(KT_AND_, KT_CAT(a, b))
#define KT_AND_00 0
#define KT_AND_01 0
#define KT_AND_10 0
#define KT_AND_11 1
#define KT_NOT(a) KT_CAT(KT_NOT_, a)
#define KT_NOT_0 1
#define KT_NOT_1 0
#define KT_IF(c) KT_CAT(KT_IF_, c)
#define KT_IF_0(...)
#define KT_IF_1(...) __VA_ARGS__

/* What main() (ktest.c) reads of an instance to select it, before any runs:
 * Criterion's per-test user data (.data) points at it. */
struct kt_instance {
	int rev;	/* the revision it runs on */
	int first;	/* its range's first revision: the first instance's */
};

/* One instance: suite/name__revN, running the shared body on revision N. */
#define KT_INSTANCE(suite, name, n, from, ...)				\
	static struct kt_instance kt_instance_##suite##_##name##__rev##n = {	\
		.rev = n, .first = from,					\
	};									\
	Test(suite, name##__rev##n, .timeout = KTEST_TIMEOUT,			\
	     .data = &kt_instance_##suite##_##name##__rev##n, ##__VA_ARGS__)	\
	{									\
		ktest_require(n);						\
		ktest_body_##suite##_##name();					\
	}

/* Revision 1: every range starts at 1 or later and ends at 1 or later. */
#define KT_LE_1_1 KT_PROBE
#define KT_AT_1(suite, name, first, last, ...)					\
	KT_IF(KT_LE(1, first))(KT_INSTANCE(suite, name, 1, first, ##__VA_ARGS__))

#if KEVENT_ABI_REVISION >= 2
#define KT_LE_2_1 KT_PROBE
#define KT_LE_2_2 KT_PROBE
#define KT_AT_2(suite, name, first, last, ...)					\
	KT_IF(KT_AND(KT_LE(2, first), KT_NOT(KT_LE(1, last))))		\
		(KT_INSTANCE(suite, name, 2, first, ##__VA_ARGS__))
#else
#define KT_AT_2(suite, name, first, last, ...)
#endif

#if KEVENT_ABI_REVISION >= 3
#define KT_LE_3_1 KT_PROBE
#define KT_LE_3_2 KT_PROBE
#define KT_LE_3_3 KT_PROBE
#define KT_AT_3(suite, name, first, last, ...)					\
	KT_IF(KT_AND(KT_LE(3, first), KT_NOT(KT_LE(2, last))))		\
		(KT_INSTANCE(suite, name, 3, first, ##__VA_ARGS__))
#else
#define KT_AT_3(suite, name, first, last, ...)
#endif

#if KEVENT_ABI_REVISION >= 4
#define KT_LE_4_1 KT_PROBE
#define KT_LE_4_2 KT_PROBE
#define KT_LE_4_3 KT_PROBE
#define KT_LE_4_4 KT_PROBE
#define KT_AT_4(suite, name, first, last, ...)					\
	KT_IF(KT_AND(KT_LE(4, first), KT_NOT(KT_LE(3, last))))		\
		(KT_INSTANCE(suite, name, 4, first, ##__VA_ARGS__))
#else
#define KT_AT_4(suite, name, first, last, ...)
#endif

#if KEVENT_ABI_REVISION > 4
#error "ktest.h: add KT_AT_n for the header's new revision (see the comment at the top)"
#endif

/* A range above the header's revisions has no instance yet: unused body. */
#define KTEST_REVS(suite, name, first, last, ...)				\
	static void ktest_body_##suite##_##name(void) __attribute__((unused));	\
	KT_AT_1(suite, name, first, last, ##__VA_ARGS__)			\
	KT_AT_2(suite, name, first, last, ##__VA_ARGS__)			\
	KT_AT_3(suite, name, first, last, ##__VA_ARGS__)			\
	KT_AT_4(suite, name, first, last, ##__VA_ARGS__)			\
	static void ktest_body_##suite##_##name(void)

#define KTEST(suite, name, ...) KTEST_REVS(suite, name, 1, KTEST_OPEN, ##__VA_ARGS__)

const char *kt_device(void);
/*
 * Open a new queue of the running instance's revision (kt_rev(): SET_ABI
 * for revisions above 1); a failing open of an existing device is a test
 * failure.  kt_try_open() returns -errno instead, for tests of open itself.
 */
int kt_open(int flags);
int kt_try_open(int flags);
/* SET_ABI on a queue of this instance: kt_rev() with these flags, -errno. */
int kt_set_abi_flags(int kfd, unsigned int flags);
void kt_info(int fd, struct kevent_info *info);
/* INFO of a fresh queue, cached per process. */
const struct kevent_info *kt_backend_info(void);
unsigned int kt_backend(void);
const char *kt_backend_name(unsigned int backend);
void ktest_only_backend(unsigned int backend, const char *reason);
/* The opposite: a rule that cannot hold on one backend (its abi.md 9 row). */
void ktest_not_on_backend(unsigned int backend, const char *reason);
void kt_require_type(unsigned int type);
void kt_require_feature(unsigned int feat, const char *reason);
/*
 * Tests that set CLOCK_REALTIME are named clock_set_* (any suite) and start
 * with kt_require_clock_set(): it skips unless KEVENT_TEST_CLOCK_SET=1, which
 * only the guest boot of their own sets (meson test guest-clock).  Each test
 * puts the clock back by the shifts it made.
 */
void kt_require_clock_set(void);
/* CLOCK_REALTIME moved by sec seconds: 0, or -errno (EPERM: no CAP_SYS_TIME). */
int kt_clock_shift(long sec);
/* Skip unless n more kevents of this kind fit under the per-uid caps (B7). */
void kt_require_room(unsigned int limit_idx, unsigned int n);

/*
 * The per-uid caps (D18, B7) are counted by the caller's uid, and the
 * client programs run their tests in parallel, all as one uid: a test
 * that fills a cap would take it from every other test beside it.  Such a
 * test calls kt_own_uid() first: it takes a uid of its own, derived from
 * the test's name and revision (a hash into [KT_OWN_UID_BASE,
 * KT_OWN_UID_BASE + KT_OWN_UID_SPAN)), with the same gid and no
 * supplementary groups, for the rest of the test's process (Criterion forks
 * each test).  INFO's per-uid use (kt_backend_info()) is read again as
 * that uid.  It skips, with the reason, when the process is not root or
 * when the device cannot be opened as that uid (the CUSE node's mode, the
 * FUSE file's --mode, a directory on the way).
 */
#define KT_OWN_UID_BASE 0x4b000000u
#define KT_OWN_UID_SPAN 0x01000000u
uid_t kt_own_uid(void);
/*
 * A few tests fill what the backend has once, not per uid (the daemon's
 * descriptors behind 4095 or a cap's worth of fd kevents, its workers held
 * by a running-request cap): they call kt_lock_backend() first, before
 * kt_own_uid(), and so run one at a time among themselves, whatever the
 * program and the --jobs.  An flock on /tmp/kevent-test-<key>.lock, key the
 * device's st_rdev (a CUSE or module node) or st_dev (the FUSE mount),
 * held until the test's process exits.
 */
void kt_lock_backend(void);

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
/* The one event that must come now (within 5 s): asserts exactly one. */
struct ukevent kt_get_one(int kfd, const char *what);
/* No event within ms: asserts GET_EVENTS(1, 4, ms) returns 0. */
void kt_assert_quiet(int kfd, unsigned int ms, const char *what);
/* kevent_get_events(), -errno on failure. */
int kt_get(int kfd, unsigned int min_nr, unsigned int max_nr, __u64 timeout_ns,
	   struct ukevent *buf);
/* The raw ioctl, -errno on failure. */
int kt_ioctl(int fd, unsigned long req, void *arg);
/*
 * Revision 3 (abi.md D60): KEVENT_IOC_CTL_EXT with ioc_flags KEVENT_CTL_EXT,
 * num entries of struct ukevent_ext; the ioctl's result or -errno.
 * kt_ctl_ext_raw() passes ioc_flags and __pad as given, for the refusals.
 */
int kt_ctl_ext(int kfd, unsigned int cmd, unsigned int num, struct ukevent_ext *arr);
int kt_ctl_ext_raw(int kfd, unsigned int cmd, unsigned int num, struct ukevent_ext *arr,
		   unsigned int ioc_flags, unsigned int pad);

unsigned int kt_queue_kevents(int kfd);
unsigned int kt_queue_ready(int kfd);
/* Wait (bounded by ms) until the queue has at least n ready. */
int kt_wait_ready(int kfd, unsigned int n, unsigned int ms);

/*
 * INFO queue_parked: GET_EVENTS calls parked on kfd now, counted once the
 * backend would hand them an event; skips on a backend whose INFO lacks it.
 */
unsigned int kt_queue_parked(int kfd);
/*
 * Wait (bounded by ms) until kfd has n parked calls; asserts it, naming the
 * caller's line (a test often waits for parked calls more than once).
 */
void kt_await_parked_at(int kfd, unsigned int n, unsigned int ms, const char *where);
#define kt_await_parked(kfd, n, ms) kt_await_parked_at(kfd, n, ms, KT_WHERE)
#define KT_WHERE KT_WHERE_(__FILE__, __LINE__)
#define KT_WHERE_(f, l) KT_WHERE__(f, l)
#define KT_WHERE__(f, l) f ":" #l
/*
 * Wait (bounded, 10 s) until thread tid of this process sleeps (state S)
 * in poll() or ppoll(); asserts it.  For a call that leaves no count in
 * INFO: a poll() on the kevent fd.
 */
void kt_await_in_poll(pid_t tid, const char *what);
pid_t kt_gettid(void);

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

/*
 * The later revisions' calls, shared by the areas that test them.
 * Revision 2: the ring in process memory (D53-D55) and READY (D49).
 */
#define HOUR (3600u * 1000u)	/* a timer period (ms) that never expires in a test */
extern const struct timespec ts_zero;
/* RING_INIT of ring (num slots): 0 or -errno. */
int ring_init(int kfd, void *ring, unsigned int num);
/* A zeroed ring of num slots, 8-byte aligned. */
struct kevent_uring *ring_new(unsigned int num);
/* kevent_wait() and kevent_commit(): the count, or -errno. */
int wait_rc(int kfd, unsigned int num, unsigned int old_uidx, struct timespec t,
	    unsigned int flags);
int commit_rc(int kfd, unsigned int new_uidx, unsigned int over);
/* n timers that never fire on their own, cookies 0 .. n-1, made ready by READY. */
void add_ready_timers(int kfd, unsigned int n);

/*
 * Revision 2: a call on another thread, joined with a bound; a reader of a
 * kevent_uring; a TCP connection and its reset; a non-blocking GET_EVENTS.
 */
struct call {
	int kfd;
	bool is_wait;
	unsigned int min_nr, num, old_uidx;	/* GET_EVENTS: min_nr, num = max_nr */
	struct timespec ts;
	unsigned int flags;
	bool nonblock_flag;			/* WAIT: KEVENT_GET_NONBLOCK by a raw ioctl */
	int result;
	struct timespec end_rt, end_mono;	/* read as the call returned */
	atomic_bool done;
	pthread_t t;
};
void call_start(struct call *c);
/*
 * Joins c: true when it returned by itself within ms.  A call still
 * waiting then is woken (READY num 0, D50) so that the test can end.
 */
bool call_join(struct call *c, unsigned int ms);
/* Runs c and joins it within ms: true when it returned by itself. */
bool call_run(struct call *c, unsigned int ms);
/* A reader of a kevent_uring: the next slot to read and the ring it reads. */
struct reader {
	int kfd;
	struct kevent_uring *r;
	unsigned int num, uidx;
};
/* A queue of this instance with a ring of num slots (KEVENT_FEAT_URING required). */
struct reader reader_new(unsigned int num);
void reader_close(struct reader *rd);
/*
 * One non-blocking WAIT of up to max (<= the ring's free slots): its records
 * copied to out, their slots committed.  Returns the count, asserted >= 0.
 */
int wait_now(struct reader *rd, struct ukevent *out, unsigned int max);
/* A TCP connection on loopback: the listener, the client and the accepted end. */
void tcp_conn(int *lst, int *cli, int *srv);
/* The peer of a connection resets it (SO_LINGER 0, close): RST. */
void tcp_reset(int cli);
/* One non-blocking GET_EVENTS into out[4]: the count, asserted >= 0. */
int get_now(int kfd, struct ukevent *out);

/* Revision 3: KEVENT_CTL_EXT entries, KEVENT_POSIX_TIMER and KEVENT_USER (D58-D62). */
#define NSEC 1000000000ULL
#define HOUR_MS (3600u * 1000u)
#define BROKEN_DONE ((__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE))
__u64 clock_ns(clockid_t c);
struct kevent_timespec kts(__u64 ns);
__u64 kts_ns(struct kevent_timespec t);
/* A POSIX timer entry: value and interval in ns, cookie in user[0]. */
struct ukevent_ext ptimer(__u32 id, __u32 clock, __u32 flags, __u64 value_ns,
			  __u64 interval_ns, __u32 req_flags, __u32 cookie);
/* A user event entry (no extension). */
struct ukevent_ext uevent(__u32 id, __u32 req_flags, __u32 cookie);
/* One EXT entry; asserts the call returns want. */
void ext1(int kfd, unsigned int cmd, struct ukevent_ext *e, int want);
/* ADD of one EXT entry that must be registered (ADD answers nothing). */
void ext_add(int kfd, struct ukevent_ext e);
/* ADD of one EXT entry that must fail with -EINVAL, that entry only. */
void ext_add_einval(int kfd, struct ukevent_ext e, const char *what);
/* READY of one user event with a value; asserts it matched. */
void trigger(int kfd, __u32 id, __u32 cookie, __u32 value);
/* QUERY of one entry through EXT: the entry as written back. */
struct ukevent_ext query(int kfd, struct ukevent_ext key, int want);
/* A delivered POSIX timer: type, cookie, DONE, the count (when not 0), ret_data[1] 0. */
void check_fired(struct ukevent ev, __u32 cookie, __u32 count, const char *what);
/* The grid points v, v + i, ... at or before t: D58's count from ADD up to t. */
__u32 points_by(__u64 v, __u64 i, __u64 t);

#endif /* KTEST_H */
