// SPDX-License-Identifier: GPL-2.0
/*
 * What is about the revisions themselves (docs/abi-change.md 3 and 5):
 * INFO per revision (D40, D64), the calls and types a queue below a
 * revision keeps refusing or answering as before (the ring calls on
 * revision 1, D34, D40; the EXT entries and types 8 and 9 below revision
 * 3, D51, D60, D64), the EINTR opt-in on revision 1 (D47) and
 * kevent_init() (D57).  Every other rule of a later revision is tested in
 * the area of the rule, with its range.
 */
#include <fcntl.h>
#include <unistd.h>

#include "ktest.h"

/* D40: INFO VER2 names the revisions. */
KTEST_REVS(revisions, info_reports_revisions, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), raw = open(kt_device(), O_RDWR);
	struct kevent_info i;

	cr_assert_geq(raw, 0);
	kt_info(kfd, &i);
	cr_assert_geq(i.size, (__u32)KEVENT_INFO_SIZE_VER2, "INFO size %u", i.size);
	cr_assert_eq(i.abi_lowest, 1u);
	cr_assert_geq(i.abi_revision, 2u);
	cr_assert_eq(i.queue_revision, (__u32)kt_rev(), "the instance's SET_ABI queue");
	kt_info(raw, &i);
	cr_assert_eq(i.queue_revision, 1u, "a queue without SET_ABI is revision 1");
	close(raw);
	close(kfd);
}

/* D40: a revision-1 queue sees take13 exactly: the ring calls are unknown numbers. */
KTEST_REVS(revisions, ring_calls_enotty_on_revision_1, 2, KTEST_OPEN)
{
	int raw = open(kt_device(), O_RDWR);
	struct kevent_commit_arg c = { 0, 0 };

	cr_assert_geq(raw, 0);
	cr_assert_eq(ring_init(raw, NULL, 0), -ENOTTY);
	cr_assert_eq(kt_ioctl(raw, KEVENT_IOC_COMMIT, &c), -ENOTTY);
	cr_assert_eq(wait_rc(raw, 1, 0, ts_zero, 0), -ENOTTY);
	close(raw);
}

/* D47: the EINTR opt-in is a revision-2 rule. */
KTEST_REVS(revisions, eintr_with_revision_1_einval, 2, KTEST_OPEN)
{
	int raw = open(kt_device(), O_RDWR);
	struct kevent_set_abi s = { .revision = 1, .flags = KEVENT_ABI_EINTR };

	cr_assert_geq(raw, 0);
	cr_assert_eq(kt_ioctl(raw, KEVENT_IOC_SET_ABI, &s), -EINVAL);
	close(raw);
}

/*
 * D57: kevent_init() opens $KEVENT_DEVICE O_RDWR|O_CLOEXEC, selects revision
 * 2 with the caller's flags and registers the ring (the library's rule: the
 * queue is revision 2 whatever the instance).
 */
KTEST_REVS(revisions, kevent_init_opens_a_revision_2_queue_with_its_flags, 2, KTEST_OPEN)
{
	struct kevent_uring *r = ring_new(4);
	struct kevent_info i;
	int kfd;

	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	cr_assert_eq(setenv("KEVENT_DEVICE", kt_device(), 1), 0);
	kfd = kevent_init(r, 4, KEVENT_ABI_EINTR);
	cr_assert_geq(kfd, 0, "kevent_init: %s", strerror(errno));
	cr_assert(fcntl(kfd, F_GETFD) & FD_CLOEXEC, "not O_CLOEXEC");
	cr_assert_eq(fcntl(kfd, F_GETFL) & O_ACCMODE, O_RDWR);
	kt_info(kfd, &i);
	cr_assert_eq(i.queue_revision, 2u);
	cr_assert_eq(i.queue_abi_flags, (__u32)KEVENT_ABI_EINTR, "the flags: %#x", i.queue_abi_flags);
	cr_assert_eq(i.ring_num, 4u, "the ring registered");
	close(kfd);
	free(r);
}

/* D64: INFO names the new types and features on a revision-3 queue, and only there. */
KTEST_REVS(revisions, info_bits_on_revision_3_only, 3, KTEST_OPEN)
{
	const __u32 types = (1u << KEVENT_POSIX_TIMER) | (1u << KEVENT_USER);
	const __u32 feats = KEVENT_FEAT_POSIX_TIMER | KEVENT_FEAT_USER;
	int kfd = kt_open(O_RDWR), r1 = open(kt_device(), O_RDWR), r2 = open(kt_device(), O_RDWR);
	struct kevent_info i;

	cr_assert(r1 >= 0 && r2 >= 0);
	cr_assert_eq(kevent_set_abi(r2, 2, 0), 0, "SET_ABI(2): %s", strerror(errno));
	kt_info(kfd, &i);
	cr_assert_geq(i.abi_revision, 3u);
	cr_assert_eq(i.queue_revision, (__u32)kt_rev(), "the queue of this instance");
	cr_assert_eq(i.supported_types & types, types, "rev 3 supported_types %#x", i.supported_types);
	cr_assert_eq(i.features & feats, feats, "rev 3 features %#x", i.features);
	for (int q = 0; q < 2; q++) {
		kt_info(q ? r2 : r1, &i);
		cr_assert_eq(i.queue_revision, (__u32)q + 1);
		cr_assert_eq(i.supported_types & types, 0u, "rev %d supported_types %#x", q + 1,
			     i.supported_types);
		cr_assert_eq(i.features & feats, 0u, "rev %d features %#x", q + 1, i.features);
	}
	close(r1);
	close(r2);
	close(kfd);
}

/* D64: below revision 3, types 8 and 9 keep take13's -EINVAL (A3) and revision 2's -ENOSYS (D51). */
KTEST_REVS(revisions, new_types_unchanged_below_revision_3, 1, 2)
{
	int kfd = kt_open(O_RDWR), want = kt_rev() == 1 ? -EINVAL : -ENOSYS;
	struct ukevent uk[2] = {
		kt_uk(KEVENT_POSIX_TIMER, 1, 0, KEVENT_TIMER_FIRED, 0, 1),
		kt_uk(KEVENT_USER, 1, 0, 0, 0, 2),
	};

	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 2, uk), 2, "both entries answered");
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(uk[i].ret_flags, BROKEN_DONE);
		cr_assert_eq((int)uk[i].ret_data[1], want, "type %u on revision %d: %d, want %d",
			     uk[i].type, kt_rev(), (int)uk[i].ret_data[1], want);
	}
	cr_assert_eq(kt_queue_kevents(kfd), 0u);
	close(kfd);
}

/*
 * D60, D61, D64: below revision 3 KEVENT_CTL_EXT is -EINVAL on the header
 * (nothing read or written), and cmd 4 (QUERY) is an unknown cmd (D25).
 * ioc_flags 0 at the VER1 size is KEVENT_IOC_CTL on every revision.  Only a
 * backend that serves revision 3 states this rule: an older one answers the
 * grown wrapper's non-zero tail -E2BIG, as before revision 3 existed.
 */
KTEST_REVS(revisions, ctl_ext_refused_below_revision_3, 1, 2)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent_ext e = ptimer(1, KEVENT_CLOCK_MONOTONIC, 0, NSEC, 0, 0, 1), copy = e;
	struct ukevent uk[2] = { kt_uk_timer(HOUR_MS, 0, 1), kt_uk_timer(HOUR_MS, 0, 2) };
	struct kevent_ctl_ext_arg a = { .cmd = KEVENT_CTL_ADD, .num = 1,
					.events = (__u64)(uintptr_t)uk };

	if (kt_backend_info()->abi_revision < 3)
		cr_skip_test("the %s backend serves revision %u: the refusal of KEVENT_CTL_EXT "
			     "on lower queues is a rule of backends serving revision 3 (D60)",
			     kt_backend_name(kt_backend()), kt_backend_info()->abi_revision);
	cr_assert_eq(kt_ctl_ext(kfd, KEVENT_CTL_ADD, 1, &e), -EINVAL);
	cr_assert_eq(memcmp(&e, &copy, sizeof(e)), 0, "the refused call wrote the array");
	cr_assert_eq(kt_queue_kevents(kfd), 0u);
	cr_assert_eq(kt_ioctl(kfd, KEVENT_IOC_CTL_EXT, &a), 0, "ioc_flags 0: plain KEVENT_IOC_CTL");
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	cr_assert_eq(kt_ctl_ext(kfd, KEVENT_CTL_QUERY, 1, &e), -EINVAL, "QUERY through EXT");
	errno = 0;
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_QUERY, 1, &uk[0]), -1);
	cr_assert_eq(errno, EINVAL, "cmd 4 on revision %d: %s", kt_rev(), strerror(errno));
	close(kfd);
}
