// SPDX-License-Identifier: GPL-2.0
/*
 * KEVENT_USER, from revision 3 on (docs/abi.md D62): the flags ADD takes,
 * made ready by READY from a thread or another process, values merged and
 * cleared by delivery, ONESHOT.
 */
#include <fcntl.h>
#include <sys/wait.h>

#include "ktest.h"

/* D62: a user event is never ready at ADD (ALWAYS_QUEUE: no effect); LEVEL fails the entry. */
KTEST_REVS(user, user_add_flags, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);

	ext_add_einval(kfd, uevent(1, KEVENT_REQ_LEVEL, 1), "user event with KEVENT_REQ_LEVEL");
	ext_add(kfd, uevent(2, KEVENT_REQ_ALWAYS_QUEUE, 2));
	/* Through the 40-byte entry too: a user event needs no extension. */
	struct ukevent plain = kt_uk(KEVENT_USER, 3, 0, 0xffffffffu, 0, 3);

	kt_add_queued(kfd, plain);
	cr_assert_eq(kt_queue_kevents(kfd), 2u);
	cr_assert_eq(kt_queue_ready(kfd), 0u, "a user event ready without a trigger");
	kt_assert_quiet(kfd, 50, "an untriggered user event");
	close(kfd);
}

struct trig {
	int kfd;
	__u32 value;
};

static void *trigger_thread(void *p)
{
	struct trig *t = p;

	kt_await_parked(t->kfd, 1, 10000);
	trigger(t->kfd, 7, 70, t->value);
	return NULL;
}

/* D62: a user event triggered from another thread wakes a parked GET_EVENTS. */
KTEST_REVS(user, user_event_from_thread, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct trig t = { kfd, 0xa5a5 };
	pthread_t th;

	ext_add(kfd, uevent(7, 0, 70));
	kt_assert_quiet(kfd, 20, "an untriggered user event");
	cr_assert_eq(pthread_create(&th, NULL, trigger_thread, &t), 0);
	struct ukevent ev = kt_get_one(kfd, "the user event");

	pthread_join(th, NULL);
	cr_assert_eq(ev.type, (__u32)KEVENT_USER);
	cr_assert_eq(ev.id.raw[0], 7u);
	cr_assert_eq(ev.user[0], 70u);
	cr_assert_eq(ev.ret_flags, (__u32)KEVENT_RET_DONE);
	cr_assert_eq(ev.ret_data[0], 0xa5a5u, "value %#x", ev.ret_data[0]);
	cr_assert_eq(ev.ret_data[1], 1u, "trigger count %u", ev.ret_data[1]);
	close(kfd);
}

/* D62: a child process holding the queue's fd (fork) triggers it. */
KTEST_REVS(user, user_event_from_child_process, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), st;
	pid_t pid;

	ext_add(kfd, uevent(7, 0, 70));
	pid = fork();
	cr_assert(pid >= 0, "fork");
	if (pid == 0) {
		struct ukevent uk = kt_uk(KEVENT_USER, 7, 0, 0x100, 0, 70);

		_exit(kevent_ctl(kfd, KEVENT_CTL_READY, 1, &uk) == 1 &&
		      uk.ret_flags == KEVENT_RET_DONE ? 0 : 1);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child's READY failed (status %#x)", st);
	struct ukevent ev = kt_get_one(kfd, "the user event the child triggered");

	cr_assert_eq(ev.type, (__u32)KEVENT_USER);
	cr_assert_eq(ev.ret_data[0], 0x100u);
	cr_assert_eq(ev.ret_data[1], 1u);
	close(kfd);
}

/*
 * D62: triggers before a delivery merge: values OR-ed, triggers counted;
 * delivery clears both, so the event comes again only after a new trigger
 * (kqueue's EV_CLEAR), once per delivery.
 */
KTEST_REVS(user, user_values_merge_and_clear, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent out[4];

	ext_add(kfd, uevent(7, 0, 70));
	trigger(kfd, 7, 70, 0x1);
	trigger(kfd, 7, 70, 0x4);
	trigger(kfd, 7, 70, 0x4);
	trigger(kfd, 7, 70, 0);
	cr_assert_eq(kt_queue_ready(kfd), 1u, "one ready kevent for four triggers");
	cr_assert_eq(kt_get(kfd, 1, 4, KT_MS(5000), out), 1, "merged triggers: one delivery");
	cr_assert_eq(out[0].ret_data[0], 0x5u, "OR of the values: %#x", out[0].ret_data[0]);
	cr_assert_eq(out[0].ret_data[1], 4u, "trigger count %u", out[0].ret_data[1]);
	kt_assert_quiet(kfd, 100, "a delivered user event came again without a trigger");
	cr_assert_eq(kt_queue_kevents(kfd), 1u, "non-ONESHOT stays registered");

	trigger(kfd, 7, 70, 0x8);
	struct ukevent ev = kt_get_one(kfd, "re-triggered user event");

	cr_assert_eq(ev.ret_data[0], 0x8u, "cleared at delivery: %#x", ev.ret_data[0]);
	cr_assert_eq(ev.ret_data[1], 1u);
	kt_assert_quiet(kfd, 100, "a delivered user event came again without a trigger");
	close(kfd);
}

/* D62: ONESHOT is freed at its delivery; MODIFY keeps a pending trigger. */
KTEST_REVS(user, user_oneshot_freed_modify_keeps_trigger, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent_ext keep = uevent(8, 0, 80);

	ext_add(kfd, uevent(7, KEVENT_REQ_ONESHOT, 70));
	ext_add(kfd, keep);
	trigger(kfd, 7, 70, 0x2);
	struct ukevent ev = kt_get_one(kfd, "ONESHOT user event");

	cr_assert_eq(ev.user[0], 70u);
	cr_assert_eq(ev.ret_data[0], 0x2u);
	cr_assert_eq(kt_queue_kevents(kfd), 1u, "ONESHOT user event not freed");
	struct ukevent uk = kt_uk(KEVENT_USER, 7, 0, 1, 0, 70);

	kt_ctl1(kfd, KEVENT_CTL_READY, &uk, 0);
	cr_assert_eq(uk.ret_flags, BROKEN_DONE, "READY of a freed user event matched");

	trigger(kfd, 8, 80, 0x30);
	keep.ev.req_flags = KEVENT_REQ_ONESHOT;
	ext1(kfd, KEVENT_CTL_MODIFY, &keep, 0);
	cr_assert_eq(keep.ev.ret_flags, (__u32)KEVENT_RET_DONE);
	ev = kt_get_one(kfd, "user event triggered before MODIFY");
	cr_assert_eq(ev.user[0], 80u);
	cr_assert_eq(ev.ret_data[0], 0x30u);
	cr_assert_eq(ev.ret_data[1], 1u);
	cr_assert_eq(kt_queue_kevents(kfd), 0u, "MODIFY to ONESHOT: freed at delivery");
	close(kfd);
}
