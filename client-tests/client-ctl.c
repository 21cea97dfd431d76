// SPDX-License-Identifier: GPL-2.0
/*
 * kevent_ctl(): ADD/MODIFY/REMOVE, their write-back and return values,
 * per-entry errors, matching (D6, D7), the whole-call checks (D25), copy
 * faults (D9), the 2006 leniency (A1) and the strict mode (SET_ABI).
 */
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ktest.h"

static void assert_same(const struct ukevent *a, const struct ukevent *b, const char *what)
{
	cr_assert(!memcmp(a, b, sizeof(*a)), "%s: entry changed (id %u type %u ret_flags %#x)",
		  what, a->id.raw[0], a->type, a->ret_flags);
}

/* ADD compacts ready and failed entries to the front, in order, returns their count. */
/* Ends at revision 1: its failing entry is an unknown type, -ENOSYS from revision 2 (D51). */
KTEST_REVS(ctl, add_compacts_ready_and_failed, 1, 1)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent in[6], uk[6];

	kt_pipe(p);
	in[0] = kt_uk_timer(HOUR, 0, 10);					/* queued */
	in[1] = kt_uk_poll(p[1], KEVENT_POLL_POLLOUT, 0, 11);			/* ready */
	in[2] = kt_uk(KEVENT_MAX + 7, 1, 2, 1, 0, 12);				/* fails */
	in[3] = kt_uk_poll(p[0], KEVENT_POLL_POLLIN, 0, 13);			/* queued */
	in[4] = kt_uk_poll(p[1], KEVENT_POLL_POLLOUT | KEVENT_POLL_POLLIN, 0, 14); /* ready */
	in[5] = kt_uk_timer(HOUR, KEVENT_REQ_ONESHOT, 15);			/* queued */
	memcpy(uk, in, sizeof(uk));
	int r = kevent_ctl(kfd, KEVENT_CTL_ADD, 6, uk);
	cr_assert_eq(r, 3, "ADD returned %d (%s), want 3 (2 ready + 1 failed)", r,
		     r < 0 ? strerror(errno) : "-");
	cr_assert_eq(uk[0].user[0], 11u, "slot 0 holds cookie %u, want 11", uk[0].user[0]);
	cr_assert_eq(uk[0].user[1], ~11u);
	cr_assert_eq(uk[0].id.raw[0], (__u32)p[1]);
	cr_assert_eq(uk[0].type, (__u32)KEVENT_POLL);
	cr_assert_eq(uk[0].event, (__u32)KEVENT_POLL_POLLOUT);
	cr_assert_eq(uk[0].ret_flags, (__u32)KEVENT_RET_DONE, "ready entry ret_flags %#x, want DONE (D5)",
		     uk[0].ret_flags);
	cr_assert_eq(uk[0].ret_data[0], (__u32)KEVENT_POLL_POLLOUT, "ret_data[0] %#x (D13)",
		     uk[0].ret_data[0]);
	cr_assert_eq(uk[1].user[0], 12u, "slot 1 holds cookie %u, want 12", uk[1].user[0]);
	cr_assert_eq(uk[1].ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE));
	cr_assert_eq(uk[1].ret_data[1], (__u32)-EINVAL, "failed entry ret_data[1] %d",
		     (int)uk[1].ret_data[1]);
	cr_assert_eq(uk[2].user[0], 14u, "slot 2 holds cookie %u, want 14", uk[2].user[0]);
	cr_assert_eq(uk[2].ret_flags, (__u32)KEVENT_RET_DONE);
	cr_assert_eq(uk[2].ret_data[0], (__u32)KEVENT_POLL_POLLOUT, "ret_data[0] %#x = fired ∩ event",
		     uk[2].ret_data[0]);
	/* Entries past the count are not written. */
	assert_same(&uk[3], &in[3], "entry 3");
	assert_same(&uk[4], &in[4], "entry 4");
	assert_same(&uk[5], &in[5], "entry 5");
	/* Only the queued ones are registered; ready-at-ADD ones are not kept. */
	cr_assert_eq(kt_queue_kevents(kfd), 3u);
	struct ukevent ready = in[1];
	kt_ctl1(kfd, KEVENT_CTL_REMOVE, &ready, 0);
	cr_assert_eq(ready.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE),
		     "a ready-at-ADD entry must not stay registered");
	kt_remove(kfd, in[0]);
	kt_remove(kfd, in[3]);
	kt_remove(kfd, in[5]);
	close(kfd);
}

KTEST(ctl, add_all_queued_returns_zero_untouched)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent in[3], uk[3];

	for (int i = 0; i < 3; i++)
		in[i] = kt_uk_timer(HOUR + (unsigned)i, 0, 100u + (unsigned)i);
	memcpy(uk, in, sizeof(uk));
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 3, uk), 0);
	for (int i = 0; i < 3; i++)
		assert_same(&uk[i], &in[i], "queued entry");
	cr_assert_eq(kt_queue_kevents(kfd), 3u);
	close(kfd);
}

KTEST(ctl, ptr_cookie_round_trip)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent uk, out[2];
	static int anchor;

	kt_pipe(p);
	uk = kt_uk_poll(p[0], KEVENT_POLL_POLLIN, 0, 0);
	uk.ptr = &anchor;
	kt_add_queued(kfd, uk);
	kt_write1(p[1]);
	cr_assert_eq(kt_get(kfd, 1, 2, KT_MS(5000), out), 1);
	cr_assert_eq(out[0].ptr, (void *)&anchor, "cookie pointer not copied back untouched");
	close(kfd);
}

/* MODIFY and REMOVE write back in place, every entry DONE, no match BROKEN, return 0. */
KTEST(ctl, modify_remove_in_place)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent a = kt_uk_timer(HOUR, 0, 1), b = kt_uk_timer(HOUR + 1, 0, 2);
	struct ukevent c = kt_uk_timer(HOUR + 3, 0, 4);
	struct ukevent uk[3];

	kt_add_queued(kfd, a);
	kt_add_queued(kfd, b);
	kt_add_queued(kfd, c);	/* MODIFY/REMOVE of 3 entries needs kevent_num >= 3 (D25) */
	uk[0] = b;
	uk[1] = kt_uk_timer(HOUR + 2, 0, 3);	/* no such kevent */
	uk[2] = a;
	uk[0].ret_flags = uk[1].ret_flags = uk[2].ret_flags = 0x40;	/* input ret_flags ignored */
	uk[0].ret_data[0] = 77;
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_MODIFY, 3, uk), 0, "MODIFY returns 0, not a count");
	cr_assert_eq(uk[0].user[0], 2u, "MODIFY wrote back out of place");
	cr_assert_eq(uk[0].ret_flags, (__u32)KEVENT_RET_DONE, "matched MODIFY ret_flags %#x",
		     uk[0].ret_flags);
	cr_assert_eq(uk[1].user[0], 3u);
	cr_assert_eq(uk[1].ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE),
		     "unmatched MODIFY ret_flags %#x", uk[1].ret_flags);
	cr_assert_eq(uk[2].user[0], 1u);
	cr_assert_eq(uk[2].ret_flags, (__u32)KEVENT_RET_DONE);
	cr_assert_eq(kt_queue_kevents(kfd), 3u);

	uk[0] = kt_uk_timer(HOUR + 9, 0, 9);	/* no such kevent, first */
	uk[1] = a;
	uk[2] = b;
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_REMOVE, 3, uk), 0, "REMOVE returns 0");
	cr_assert_eq(uk[0].user[0], 9u, "REMOVE wrote back out of place");
	cr_assert_eq(uk[0].ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE));
	cr_assert_eq(uk[1].ret_flags, (__u32)KEVENT_RET_DONE, "REMOVE ret_flags %#x", uk[1].ret_flags);
	cr_assert_eq(uk[2].ret_flags, (__u32)KEVENT_RET_DONE);
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	close(kfd);
}

/* D38: an unmatched MODIFY/REMOVE entry is BROKEN|DONE with ret_data as passed. */
KTEST(ctl, unmatched_keeps_ret_data)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent uk[2];

	kt_add_queued(kfd, kt_uk_timer(HOUR, 0, 1));
	kt_add_queued(kfd, kt_uk_timer(HOUR + 1, 0, 2));	/* num 2 needs kevent_num >= 2 (D25) */
	for (unsigned int cmd = KEVENT_CTL_REMOVE; cmd <= KEVENT_CTL_MODIFY; cmd++) {
		for (int i = 0; i < 2; i++) {
			uk[i] = kt_uk_timer(HOUR + 5 + (unsigned)i, 0, 7);	/* no such kevent */
			uk[i].ret_data[0] = 0x1234;
			uk[i].ret_data[1] = 0xabcd;
		}
		cr_assert_eq(kevent_ctl(kfd, cmd, 2, uk), 0, "cmd %u: %s", cmd, strerror(errno));
		for (int i = 0; i < 2; i++) {
			cr_assert_eq(uk[i].ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE));
			cr_assert_eq(uk[i].ret_data[0], 0x1234u, "cmd %u: ret_data[0] %#x", cmd,
				     uk[i].ret_data[0]);
			cr_assert_eq(uk[i].ret_data[1], 0xabcdu, "cmd %u: ret_data[1] %#x, not as passed",
				     cmd, uk[i].ret_data[1]);
		}
	}
	cr_assert_eq(kt_queue_kevents(kfd), 2u);
	close(kfd);
}

/* MODIFY replaces event, clears ret_flags and re-evaluates at once. */
KTEST(ctl, modify_reevaluates)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent uk, out[2];

	kt_pipe(p);
	uk = kt_uk_poll(p[1], KEVENT_POLL_POLLPRI, 0, 5);	/* never on a pipe */
	kt_add_queued(kfd, uk);
	cr_assert_eq(kt_get(kfd, 0, 2, 0, out), 0);
	uk.event = KEVENT_POLL_POLLOUT;
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &uk, 0);
	cr_assert_eq(uk.ret_flags, (__u32)KEVENT_RET_DONE);
	cr_assert_eq(kt_get(kfd, 1, 2, KT_MS(5000), out), 1, "MODIFY to a ready condition must queue it");
	cr_assert_eq(out[0].user[0], 5u);
	cr_assert_eq(out[0].event, (__u32)KEVENT_POLL_POLLOUT);
	cr_assert(out[0].ret_data[0] & KEVENT_POLL_POLLOUT);
	close(kfd);
}

/* REMOVE of a ready kevent drops its pending readiness. */
KTEST(ctl, remove_ready_drops_event)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent a, b, out[4];

	kt_pipe(p);
	a = kt_uk_poll(p[0], KEVENT_POLL_POLLIN, 0, 1);
	b = kt_uk_poll(p[0], KEVENT_POLL_POLLIN, 0, 2);
	kt_add_queued(kfd, a);
	kt_add_queued(kfd, b);
	kt_write1(p[1]);
	cr_assert(kt_wait_ready(kfd, 2, 5000), "two kevents on one pipe did not both become ready");
	kt_remove(kfd, a);
	cr_assert_eq(kt_queue_ready(kfd), 1u);
	cr_assert_eq(kt_get(kfd, 0, 4, 0, out), 1);
	cr_assert_eq(out[0].user[0], 2u, "a removed kevent was returned");
	close(kfd);
}

/*
 * D7, D63: below revision 3 the type is not compared: MODIFY and REMOVE
 * naming a POLL kevent act on the timer with its id and cookie (the words
 * of the key: match_needs_every_word).
 */
KTEST_REVS(ctl, match_id_and_cookie_not_type, 1, 2)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent t = kt_uk_timer(HOUR, 0, 42), m;

	kt_add_queued(kfd, t);
	m = t;
	m.type = KEVENT_POLL;
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &m, 0);
	cr_assert_eq(m.ret_flags, (__u32)KEVENT_RET_DONE, "MODIFY compared the type (D7)");
	m = t;
	m.type = KEVENT_POLL;
	m.event = KEVENT_POLL_POLLIN;
	kt_ctl1(kfd, KEVENT_CTL_REMOVE, &m, 0);
	cr_assert_eq(m.ret_flags, (__u32)KEVENT_RET_DONE, "type must not be compared (D7)");
	cr_assert_eq(kt_queue_kevents(kfd), 0u);
	close(kfd);
}

/*
 * D7: a key that differs from the kevent's in any one of its four words
 * (id.raw[0], id.raw[1], user[0], user[1]) never matches.  Many values of
 * each word are tried, so that some of them share the kevent's place in
 * any hash table a backend keeps: there only the comparison tells them
 * apart.
 */
KTEST(ctl, match_needs_every_word)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent t = kt_uk_timer(HOUR, 0, 42), m;

	kt_add_queued(kfd, t);
	for (unsigned int w = 0; w < 4; w++) {
		for (__u32 v = 1; v <= 256; v++) {
			m = t;
			if (w == 0)
				m.id.raw[0] += v;
			else if (w == 1)
				m.id.raw[1] += v;
			else if (w == 2)
				m.user[0] += v;
			else
				m.user[1] += v;
			kt_ctl1(kfd, KEVENT_CTL_REMOVE, &m, 0);
			cr_assert_eq(m.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE),
				     "word %u off by %u matched", w, v);
		}
	}
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	kt_remove(kfd, t);
	close(kfd);
}

/* D6: duplicates allowed; MODIFY/REMOVE act on the oldest. */
KTEST(ctl, duplicates_oldest_first)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent a, b, out[4];

	kt_pipe(p);
	a = kt_uk_poll(p[0], KEVENT_POLL_POLLIN, 0, 7);
	b = kt_uk_poll(p[0], KEVENT_POLL_POLLPRI, 0, 7);	/* same id and cookie */
	kt_add_queued(kfd, a);
	kt_add_queued(kfd, b);
	cr_assert_eq(kt_queue_kevents(kfd), 2u, "duplicate id+cookie must be accepted (D6)");
	struct ukevent r = b;	/* the entry's event bits do not select */
	kt_ctl1(kfd, KEVENT_CTL_REMOVE, &r, 0);
	cr_assert_eq(r.ret_flags, (__u32)KEVENT_RET_DONE);
	kt_write1(p[1]);
	/* If the oldest (POLLIN) went, nothing fires; the POLLPRI one never does. */
	cr_assert_eq(kt_get(kfd, 1, 4, KT_MS(300), out), 0, "REMOVE did not take the oldest duplicate");
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	/* MODIFY of the remaining one (oldest now) to POLLIN: fires. */
	struct ukevent m = a;
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &m, 0);
	cr_assert_eq(kt_get(kfd, 1, 4, KT_MS(5000), out), 1);
	cr_assert_eq(out[0].event, (__u32)KEVENT_POLL_POLLIN);
	close(kfd);
}

KTEST(ctl, duplicates_modify_oldest)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent a, b, out[4];

	kt_pipe(p);
	a = kt_uk_poll(p[0], KEVENT_POLL_POLLPRI, 0, 8);
	b = kt_uk_poll(p[0], KEVENT_POLL_POLLPRI, 0, 8);
	kt_add_queued(kfd, a);
	kt_add_queued(kfd, b);
	struct ukevent m = a;
	m.event = KEVENT_POLL_POLLIN | KEVENT_POLL_POLLPRI;
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &m, 0);
	kt_write1(p[1]);
	cr_assert_eq(kt_get(kfd, 1, 4, KT_MS(5000), out), 1);
	kt_sleep_ms(100);	/* the subject: time for the other duplicate to fire, wrongly */
	cr_assert_eq(kt_get(kfd, 0, 4, 0, out + 1), 0, "MODIFY changed more than one duplicate");
	close(kfd);
}

/* One ADD entry that must fail by itself: BROKEN|DONE, ret_data[1] -err, nothing registered. */
static void assert_entry_fails(int kfd, struct ukevent uk, int err, const char *what)
{
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &uk), 1, "%s: not reported as failed", what);
	cr_assert_eq(uk.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE),
		     "%s: ret_flags %#x", what, uk.ret_flags);
	cr_assert_eq(uk.ret_data[1], (__u32)-err, "%s: ret_data[1] %d, want %d", what,
		     (int)uk.ret_data[1], -err);
	cr_assert_eq(kt_queue_kevents(kfd), 0u, "%s: registered", what);
}

/* Failed entries come back first, in call order, each BROKEN|DONE. */
KTEST(ctl, per_entry_failures_in_call_order)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent uk[4];

	uk[0] = kt_uk(KEVENT_NAIO, 1, 0, 1, 0, 0);
	uk[1] = kt_uk(KEVENT_AIO, 1, 0, KEVENT_AIO_BIO, 0, 1);
	uk[2] = kt_uk(KEVENT_MAX, 1, 0, 1, 0, 2);
	uk[3] = kt_uk(0xffffffffu, 1, 0, 1, 0, 3);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 4, uk), 4);
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(uk[i].user[0], (__u32)i, "entry %d out of order", i);
		cr_assert_eq(uk[i].ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE),
			     "entry %d ret_flags %#x", i, uk[i].ret_flags);
	}
	cr_assert_eq(kt_queue_kevents(kfd), 0u);
	close(kfd);
}

/*
 * ADD clears ret_flags only: a failed entry keeps the ret_data[0] it was
 * passed and gets -errno in ret_data[1]; a ready one gets its type's
 * ret_data, {bits, 0} for POLL, whatever it was passed (abi.md section 4,
 * D13). The module once zeroed ret_data[0] of failed entries.
 */
KTEST(ctl, add_failed_entry_keeps_ret_data0)
{
	int kfd = kt_open(O_RDWR), p[2], closed[2];
	int unknown_err = kt_rev() >= 2 ? ENOSYS : EINVAL;	/* D51 */
	struct ukevent uk[3];

	kt_pipe(p);
	kt_pipe(closed);
	close(closed[0]);
	close(closed[1]);
	uk[0] = kt_uk(KEVENT_MAX, 1, 0, 1, 0, 20);				/* unknown type */
	uk[1] = kt_uk_poll(closed[1], KEVENT_POLL_POLLOUT, 0, 21);		/* origin fails */
	uk[2] = kt_uk_poll(p[1], KEVENT_POLL_POLLOUT, 0, 22);			/* ready */
	for (int i = 0; i < 3; i++) {
		uk[i].ret_flags = 0x80000000u;
		uk[i].ret_data[0] = 0x5a5a0000u + (__u32)i;
		uk[i].ret_data[1] = 0xa5a5u;
	}
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 3, uk), 3, "ADD: %s", strerror(errno));
	cr_assert_eq(uk[0].ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE));
	cr_assert_eq(uk[0].ret_data[0], 0x5a5a0000u, "unknown type: ret_data[0] %#x, not as passed",
		     uk[0].ret_data[0]);
	cr_assert_eq(uk[0].ret_data[1], (__u32)-unknown_err, "unknown type: ret_data[1] %d",
		     (int)uk[0].ret_data[1]);
	cr_assert_eq(uk[1].ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE));
	cr_assert_eq(uk[1].ret_data[0], 0x5a5a0001u, "closed fd: ret_data[0] %#x, not as passed",
		     uk[1].ret_data[0]);
	cr_assert_eq(uk[1].ret_data[1], (__u32)-EBADF, "closed fd: ret_data[1] %d",
		     (int)uk[1].ret_data[1]);
	cr_assert_eq(uk[2].ret_flags, (__u32)KEVENT_RET_DONE, "ready: ret_flags %#x", uk[2].ret_flags);
	cr_assert_eq(uk[2].ret_data[0], (__u32)KEVENT_POLL_POLLOUT, "ready: ret_data[0] %#x (D13)",
		     uk[2].ret_data[0]);
	/* D67: from revision 4 an answer carries the count, here the empty pipe's room */
	__u32 want1 = kt_rev() >= 4 ? (__u32)fcntl(p[1], F_GETPIPE_SZ) : 0;
	cr_assert_eq(uk[2].ret_data[1], want1, "ready: ret_data[1] %#x", uk[2].ret_data[1]);
	cr_assert_eq(kt_queue_kevents(kfd), 0u);
	close(p[0]);
	close(p[1]);
	close(kfd);
}

/* The reserved 2006 types NAIO and AIO fail per entry with EINVAL. */
/* Ends at revision 1: -ENOSYS from revision 2 (D51, ctl/unknown_types_enosys_per_entry). */
KTEST_REVS(ctl, per_entry_reserved_types_einval, 1, 1)
{
	int kfd = kt_open(O_RDWR);

	assert_entry_fails(kfd, kt_uk(KEVENT_NAIO, 1, 0, 1, 0, 0), EINVAL, "KEVENT_NAIO");
	assert_entry_fails(kfd, kt_uk(KEVENT_AIO, 1, 0, KEVENT_AIO_BIO, 0, 1), EINVAL, "KEVENT_AIO");
	close(kfd);
}

/* An unknown type fails per entry with EINVAL. */
/* Ends at revision 1: -ENOSYS from revision 2 (D51, ctl/unknown_types_enosys_per_entry). */
KTEST_REVS(ctl, per_entry_unknown_type_einval, 1, 1)
{
	int kfd = kt_open(O_RDWR);

	assert_entry_fails(kfd, kt_uk(KEVENT_MAX, 1, 0, 1, 0, 2), EINVAL, "type KEVENT_MAX");
	assert_entry_fails(kfd, kt_uk(0xffffffffu, 1, 0, 1, 0, 3), EINVAL, "type ~0");
	close(kfd);
}

/* A closed fd fails per entry with EBADF. */
KTEST(ctl, per_entry_closed_fd_ebadf)
{
	int kfd = kt_open(O_RDWR), p[2];

	kt_pipe(p);
	close(p[1]);
	assert_entry_fails(kfd, kt_uk_poll(p[1], KEVENT_POLL_POLLOUT, 0, 4), EBADF, "closed fd");
	close(p[0]);
	close(kfd);
}

/* B3: a kevent fd cannot be watched: EINVAL per entry. */
KTEST(ctl, per_entry_kevent_fd_refused)
{
	int kfd = kt_open(O_RDWR), other = kt_open(O_RDWR);

	assert_entry_fails(kfd, kt_uk_poll(other, KEVENT_POLL_POLLIN, 0, 5), EINVAL, "a kevent fd");
	close(other);
	close(kfd);
}

/* B3: an epoll fd cannot be watched: EINVAL per entry. */
KTEST(ctl, per_entry_epoll_fd_refused)
{
	int kfd = kt_open(O_RDWR), ep = epoll_create1(EPOLL_CLOEXEC);

	cr_assert(ep >= 0);
	assert_entry_fails(kfd, kt_uk_poll(ep, KEVENT_POLL_POLLIN, 0, 6), EINVAL, "an epoll fd");
	close(ep);
	close(kfd);
}

/*
 * D19 through the device: KEVENT_IOC_FAULT fails the second ADD allocation
 * of this queue.  That entry alone is BROKEN|DONE -ENOMEM, the ones around
 * it are registered, another queue is untouched, and it happens once.
 */
KTEST(ctl, enomem_fails_one_entry_only)
{
	kt_require_feature(KEVENT_FEAT_FAULT_INJECT,
			   "D19 needs fault injection (kevent-cuse --fault-inject, "
			   "kevent.ko fault_inject=1: what tests/vm/guest run starts)");
	int kfd = kt_open(O_RDWR), other = kt_open(O_RDWR);
	struct kevent_fault f = { KEVENT_FAULT_ADD_ENOMEM, 1, 0 };
	struct ukevent uk[3];

	cr_assert_eq(kt_ioctl(kfd, KEVENT_IOC_FAULT, &f), 0, "arm: %s", strerror(errno));
	kt_add_queued(other, kt_uk_timer(3600000, 0, 9));
	for (int i = 0; i < 3; i++)
		uk[i] = kt_uk_timer(3600000, 0, (__u32)i);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 3, uk), 1, "one entry failed");
	cr_assert_eq(uk[0].user[0], 1u, "skip 1: the second entry fails");
	cr_assert_eq(uk[0].ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE));
	cr_assert_eq((int)uk[0].ret_data[1], -ENOMEM, "ret_data[1] %d", (int)uk[0].ret_data[1]);
	cr_assert_eq(kt_queue_kevents(kfd), 2u, "the entries before and after took effect");
	cr_assert_eq(kt_queue_kevents(other), 1u);
	kt_add_queued(kfd, kt_uk_timer(3600000, 0, 3));	/* once only */
	f.skip = 0;
	cr_assert_eq(kt_ioctl(kfd, KEVENT_IOC_FAULT, &f), 0);
	f.kind = KEVENT_FAULT_NONE;
	cr_assert_eq(kt_ioctl(kfd, KEVENT_IOC_FAULT, &f), 0, "disarm: %s", strerror(errno));
	kt_add_queued(kfd, kt_uk_timer(3600000, 0, 4));
	f.kind = KEVENT_FAULT_ADD_ENOMEM + 1;
	cr_assert_eq(kt_ioctl(kfd, KEVENT_IOC_FAULT, &f), -EINVAL, "unknown kind");
	f.kind = KEVENT_FAULT_NONE;
	f.__reserved = 1;
	cr_assert_eq(kt_ioctl(kfd, KEVENT_IOC_FAULT, &f), -EINVAL, "reserved field");
	close(kfd);
	close(other);
}

/*
 * A call whose num exceeds this path's max_ctl_num may fail -E2BIG (B4)
 * before the D25 check; both are whole-call refusals with no effect.
 */
static void assert_whole_fail(int r, unsigned int num, const char *what)
{
	unsigned int max = kt_backend_info()->max_ctl_num;

	cr_assert_eq(r, -1, "%s: returned %d", what, r);
	if (num > max)
		cr_assert(errno == EINVAL || errno == E2BIG, "%s: %s, want EINVAL (or E2BIG above max_ctl_num %u)",
			  what, strerror(errno), max);
	else
		cr_assert_eq(errno, EINVAL, "%s: %s, want EINVAL", what, strerror(errno));
}

/* D25: num 0 returns 0 for every command without reading the array. */
KTEST(ctl, whole_call_num_zero_returns_zero)
{
	int kfd = kt_open(O_RDWR);
	void *bad = (void *)(uintptr_t)16;	/* never mapped */

	errno = 0;
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 0, bad), 0, "num 0: returns 0 (%s)", strerror(errno));
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_REMOVE, 0, bad), 0);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_MODIFY, 0, bad), 0);
	close(kfd);
}

/* D25: an unknown cmd fails the whole call with EINVAL. */
KTEST(ctl, whole_call_unknown_cmd_einval)
{
	int kfd = kt_open(O_RDWR);
	void *bad = (void *)(uintptr_t)16;

	cr_assert_eq(kevent_ctl(kfd, 3, 1, bad), -1, "cmd 3 (take12 CTL_INIT) must fail");
	cr_assert_eq(errno, EINVAL, "unknown cmd: %s", strerror(errno));
	cr_assert_eq(kevent_ctl(kfd, 0xffffffffu, 1, bad), -1);
	cr_assert_eq(errno, EINVAL);
	close(kfd);
}

/* D25: an ADD that would pass 4095 kevents fails the whole call. */
KTEST(ctl, whole_call_add_past_capacity_einval)
{
	int kfd = kt_open(O_RDWR);
	void *bad = (void *)(uintptr_t)16;

	assert_whole_fail(kevent_ctl(kfd, KEVENT_CTL_ADD, 4097, bad), 4097, "ADD num 4097");
	assert_whole_fail(kevent_ctl(kfd, KEVENT_CTL_ADD, 0xffffffffu, bad), 0xffffffffu, "ADD num ~0");
	assert_whole_fail(kevent_ctl(kfd, KEVENT_CTL_ADD, 4096, bad), 4096, "ADD 0 + 4096 >= 4096");
	kt_add_queued(kfd, kt_uk_timer(HOUR, 0, 1));
	assert_whole_fail(kevent_ctl(kfd, KEVENT_CTL_ADD, 4095, bad), 4095, "ADD 1 + 4095 >= 4096");
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	close(kfd);
}

/* D25: REMOVE or MODIFY of more entries than the queue holds fails the whole call. */
KTEST(ctl, whole_call_num_above_kevents_einval)
{
	int kfd = kt_open(O_RDWR);
	void *bad = (void *)(uintptr_t)16;

	assert_whole_fail(kevent_ctl(kfd, KEVENT_CTL_REMOVE, 4097, bad), 4097, "REMOVE num 4097");
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_REMOVE, 1, bad), -1, "REMOVE num 1 > kevent_num 0");
	cr_assert_eq(errno, EINVAL, "REMOVE num > kevent_num: %s", strerror(errno));
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_MODIFY, 1, bad), -1);
	cr_assert_eq(errno, EINVAL);
	kt_add_queued(kfd, kt_uk_timer(HOUR, 0, 1));
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_REMOVE, 2, bad), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_MODIFY, 2, bad), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	close(kfd);
}

/* D25: the array is read only after the header passed: then EFAULT. */
KTEST(ctl, whole_call_then_array_efault)
{
	int kfd = kt_open(O_RDWR);
	void *bad = (void *)(uintptr_t)16;

	kt_add_queued(kfd, kt_uk_timer(HOUR, 0, 1));
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_REMOVE, 1, bad), -1);
	cr_assert_eq(errno, EFAULT, "REMOVE of an unmapped array: %s", strerror(errno));
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	close(kfd);
}

/* D9: a read fault has no effect at all. */
KTEST(ctl, read_fault_no_effect)
{
	int kfd = kt_open(O_RDWR);
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert(m != MAP_FAILED);
	cr_assert_eq(munmap(m + pg, (size_t)pg), 0);
	struct ukevent *uk = (struct ukevent *)(m + pg - 2 * sizeof(struct ukevent));
	uk[0] = kt_uk_timer(HOUR, 0, 1);
	uk[1] = kt_uk_timer(HOUR, 0, 2);
	/* Entry 2 is on the unmapped page. */
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 3, uk), -1);
	cr_assert_eq(errno, EFAULT, "ADD with a fault in entry 2: %s", strerror(errno));
	cr_assert_eq(kt_queue_kevents(kfd), 0u, "a read fault must have no effect (D9)");
	kt_add_queued(kfd, uk[0]);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_REMOVE, 1, uk + 2), -1);
	cr_assert_eq(errno, EFAULT);
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	munmap(m, (size_t)pg);
	close(kfd);
}

/* D9: a write fault is EFAULT; registrations made by the call stay. */
KTEST(ctl, write_fault_keeps_registrations)
{
	int kfd = kt_open(O_RDWR), p[2];
	long pg = sysconf(_SC_PAGESIZE);
	struct ukevent *uk = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert(uk != MAP_FAILED);
	kt_pipe(p);
	uk[0] = kt_uk_timer(HOUR, 0, 1);			/* queued */
	uk[1] = kt_uk_poll(p[1], KEVENT_POLL_POLLOUT, 0, 2);	/* ready: written back */
	cr_assert_eq(mprotect(uk, (size_t)pg, PROT_READ), 0);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 2, uk), -1);
	cr_assert_eq(errno, EFAULT, "ADD with a read-only array: %s", strerror(errno));
	cr_assert_eq(kt_queue_kevents(kfd), 1u, "the queued entry must stay registered (D9)");
	/* MODIFY/REMOVE write back every entry: EFAULT, but the effect stays. */
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_REMOVE, 1, uk), -1);
	cr_assert_eq(errno, EFAULT);
	cr_assert_eq(kt_queue_kevents(kfd), 0u, "REMOVE took effect before its write-back fault");
	munmap(uk, (size_t)pg);
	close(kfd);
}

/* A1: the 2006 fields are lenient. */
KTEST(ctl, lenient_2006_fields)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent uk, out[2];

	kt_pipe(p);
	uk = kt_uk_poll(p[0], KEVENT_POLL_POLLIN, 0x7ffffff0u, 1);	/* unknown req_flags */
	uk.ret_flags = 0xffff;					/* input ret_flags */
	uk.ret_data[0] = uk.ret_data[1] = 0xdeadbeef;		/* input ret_data */
	kt_add_queued(kfd, uk);
	struct ukevent t = kt_uk(KEVENT_TIMER, 20, 0xabcdef, KEVENT_TIMER_FIRED,
				 0x100 | KEVENT_REQ_ONESHOT, 2);	/* id.raw[1] is unused */
	kt_add_queued(kfd, t);
	cr_assert_eq(kevent_get_events(kfd, 1, 2, KT_MS(5000), out, 0xffffffffu), 1,
		     "get_events flags must be ignored (A1)");
	cr_assert_eq(out[0].user[0], 2u, "the timer with id.raw[1] set did not fire");
	cr_assert_eq(out[0].id.raw[1], 0xabcdefu);
	kt_write1(p[1]);
	cr_assert_eq(kt_get(kfd, 1, 2, KT_MS(5000), out), 1, "poll kevent with unknown req_flags did not fire");
	cr_assert_eq(out[0].user[0], 1u);
	cr_assert_eq(out[0].ret_flags, (__u32)KEVENT_RET_DONE, "input ret_flags leaked: %#x",
		     out[0].ret_flags);
	cr_assert_eq(out[0].ret_data[0], (__u32)KEVENT_POLL_POLLIN, "input ret_data leaked: %#x",
		     out[0].ret_data[0]);
	close(kfd);
}

/* A12: SET_ABI(1) before the first CTL is accepted: every backend serves 1. */
KTEST(ctl, set_abi_revision_1_accepted)
{
	int kfd = kt_open(O_RDWR);

	cr_assert_eq(kevent_set_abi(kfd, 1, 0), 0, "SET_ABI(1) before CTL: %s", strerror(errno));
	close(kfd);
}

/* A12: SET_ABI accepts every revision from 1 to INFO's highest served. */
KTEST(ctl, set_abi_every_served_revision_accepted)
{
	__u32 highest = kt_backend_info()->abi_revision;

	cr_assert_geq(highest, 1u, "INFO abi_revision %u", highest);
	for (__u32 rev = 1; rev <= highest; rev++) {
		int kfd = kt_open(O_RDWR);

		cr_assert_eq(kevent_set_abi(kfd, rev, 0), 0, "SET_ABI(%u), highest served %u: %s",
			     rev, highest, strerror(errno));
		close(kfd);
	}
}

/* A12: a revision above INFO's highest served, or 0, is refused EINVAL. */
KTEST(ctl, set_abi_unserved_revision_einval)
{
	int kfd = kt_open(O_RDWR);
	__u32 highest = kt_backend_info()->abi_revision;

	cr_assert_eq(kevent_set_abi(kfd, highest + 1, 0), -1, "SET_ABI(%u) above the highest served",
		     highest + 1);
	cr_assert_eq(errno, EINVAL, "unknown revision %u: %s", highest + 1, strerror(errno));
	cr_assert_eq(kevent_set_abi(kfd, 0, 0), -1, "SET_ABI(0)");
	cr_assert_eq(errno, EINVAL, "revision 0: %s", strerror(errno));
	close(kfd);
}

/* A12: an unknown SET_ABI flag is refused EINVAL. */
KTEST(ctl, set_abi_unknown_flag_einval)
{
	int kfd = kt_open(O_RDWR);

	cr_assert_eq(kt_set_abi_flags(kfd, 0x80), -EINVAL, "unknown SET_ABI flag 0x80");
	close(kfd);
}

/* A12: a non-zero __reserved is refused EINVAL. */
KTEST(ctl, set_abi_reserved_einval)
{
	int kfd = kt_open(O_RDWR);
	struct kevent_set_abi s = { .revision = (__u32)kt_rev(), .__reserved = 1 };

	cr_assert_eq(kt_ioctl(kfd, KEVENT_IOC_SET_ABI, &s), -EINVAL, "reserved field");
	close(kfd);
}

/* A12: SET_ABI after the first CTL is -EBUSY. */
/*
 * A12: SET_ABI after the first CTL is -EBUSY, whatever that CTL left: a
 * registered kevent, none after a REMOVE, none because ADD answered the
 * entry at once (D31).
 */
KTEST(ctl, set_abi_busy_after_ctl)
{
	int kfd = kt_open(O_RDWR), other = kt_open(O_RDWR), p[2];
	struct ukevent t = kt_uk_timer(HOUR, 0, 1), uk;

	kt_add_queued(kfd, t);
	cr_assert_eq(kt_set_abi_flags(kfd, 0), -EBUSY, "SET_ABI after CTL");
	kt_remove(kfd, t);
	cr_assert_eq(kt_set_abi_flags(kfd, 0), -EBUSY, "SET_ABI once the queue is empty again");
	kt_pipe(p);
	uk = kt_uk_poll(p[1], KEVENT_POLL_POLLOUT, 0, 2);
	kt_ctl1(other, KEVENT_CTL_ADD, &uk, 1);	/* answered: nothing registered */
	cr_assert_eq(kt_set_abi_flags(other, 0), -EBUSY, "SET_ABI after an ADD that registered nothing");
	close(p[0]);
	close(p[1]);
	close(other);
	close(kfd);
}

/* Ends at revision 1: bits 0x10 and 0x20 are known from revision 2 (D42, D43, ctl/strict_mode_knows_rev2_flags). */
KTEST_REVS(ctl, strict_mode, 1, 1)
{
	int kfd = kt_open(O_RDWR);

	if (!(kt_backend_info()->features & KEVENT_FEAT_STRICT)) {
		cr_assert_eq(kt_set_abi_flags(kfd, KEVENT_ABI_STRICT), -EINVAL,
			     "STRICT accepted but not in INFO features");
		close(kfd);
		cr_skip_test("backend %s does not offer KEVENT_FEAT_STRICT: refusal checked",
			     kt_backend_name(kt_backend()));
	}
	cr_assert_eq(kt_set_abi_flags(kfd, KEVENT_ABI_STRICT), 0);
	/* 0x10 and 0x20 are ALWAYS_QUEUE and LEVEL from revision 2 (D42, D43) */
	struct ukevent uk[3] = { kt_uk_timer(HOUR, 0x10, 1), kt_uk_timer(HOUR, 0x20, 2),
				 kt_uk_timer(HOUR, KEVENT_REQ_ONESHOT, 3) };
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 3, uk), 2);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(uk[i].user[0], (__u32)i + 1);
		cr_assert_eq(uk[i].ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE));
		cr_assert_eq(uk[i].ret_data[1], (__u32)-EINVAL, "req_flags %#x", uk[i].req_flags);
	}
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	close(kfd);
}

/*
 * D32, D43, D44, D45: the request flags of later takes that no revision
 * took (take25's WAKEUP_ONE/WAKEUP_ALL bit 0x2, take23's ET 0x4, take24's
 * LAST_CHECK 0x8) stay unknown bits on every revision, so under
 * KEVENT_ABI_STRICT each fails its own entry -EINVAL (A1); the entry
 * beside them with ONESHOT is registered.
 */
KTEST(ctl, strict_later_take_bits_unknown)
{
	static const __u32 bits[] = { 0x2, 0x4, 0x8 };
	int kfd = kt_open(O_RDWR);
	struct ukevent uk[4];

	kt_require_feature(KEVENT_FEAT_STRICT, "only KEVENT_ABI_STRICT makes an unknown req_flags "
			   "bit visible (A1)");
	cr_assert_eq(kt_set_abi_flags(kfd, KEVENT_ABI_STRICT), 0, "SET_ABI(%d, STRICT)", kt_rev());
	for (int i = 0; i < 3; i++)
		uk[i] = kt_uk_timer(HOUR, bits[i], (__u32)i + 1);
	uk[3] = kt_uk_timer(HOUR, KEVENT_REQ_ONESHOT, 4);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 4, uk), 3, "three entries refused: %s",
		     strerror(errno));
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(uk[i].user[0], (__u32)i + 1, "entry %d out of order", i);
		cr_assert_eq(uk[i].ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE),
			     "req_flags %#x: ret_flags %#x", bits[i], uk[i].ret_flags);
		cr_assert_eq((int)uk[i].ret_data[1], -EINVAL, "req_flags %#x on revision %d: %d",
			     bits[i], kt_rev(), (int)uk[i].ret_data[1]);
	}
	cr_assert_eq(kt_queue_kevents(kfd), 1u, "the ONESHOT entry is registered");
	close(kfd);
}

/*
 * D34, D49, D50: cmd 3 is KEVENT_CTL_READY from revision 2 on.  On
 * revision 1 it is an unknown cmd (D25): -EINVAL for the whole call, on
 * the header, num 0 included (no wake latched), nothing made ready.
 */
KTEST_REVS(ctl, ready_cmd_einval_on_rev1, 1, 1)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent t = kt_uk_timer(HOUR, 0, 1), r = t;

	kt_add_queued(kfd, t);
	errno = 0;
	cr_assert_eq(kevent_ctl(kfd, 3, 0, NULL), -1, "cmd 3, num 0 (D50's wake) on revision 1");
	cr_assert_eq(errno, EINVAL, "cmd 3, num 0: %s", strerror(errno));
	cr_assert_eq(kt_poll1(kfd, POLLIN, 0), 0, "a wake was latched");
	errno = 0;
	cr_assert_eq(kevent_ctl(kfd, 3, 1, &r), -1, "cmd 3 (D49's READY) on revision 1");
	cr_assert_eq(errno, EINVAL, "cmd 3, num 1: %s", strerror(errno));
	assert_same(&r, &t, "the refused cmd 3");
	cr_assert_eq(kt_queue_ready(kfd), 0u, "cmd 3 made the timer ready");
	close(kfd);
}

/*
 * D49, D63: on revision 2 READY matches as MODIFY and REMOVE do, on id and
 * cookie, the type not compared: an entry naming a POLL kevent readies the
 * timer with that id and cookie.
 */
KTEST_REVS(ctl, ready_match_ignores_type, 2, 2)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent t = kt_uk_timer(HOUR, 0, 43), m = t;

	kt_add_queued(kfd, t);
	m.type = KEVENT_POLL;
	m.event = KEVENT_POLL_POLLIN;
	kt_ctl1(kfd, KEVENT_CTL_READY, &m, 1);
	cr_assert_eq(m.ret_flags, (__u32)KEVENT_RET_DONE, "READY compared the type (D7)");
	struct ukevent e = kt_get_one(kfd, "the timer made ready");

	cr_assert_eq(e.type, (__u32)KEVENT_TIMER);
	cr_assert_eq(e.user[0], 43u);
	close(kfd);
}

/*
 * From revision 2 on: unknown types per entry (D51), STRICT and the
 * request flags (D42-D45), READY (D49), LEVEL checked at MODIFY (D43);
 * from revision 3 on: the extended entries (D60) and the type in the key
 * (D63), and id-only matching below it.
 */

/* D51: unknown types fail per entry with -ENOSYS; the rest of ADD is as ever. */
KTEST_REVS(ctl, unknown_types_enosys_per_entry, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent uk[4] = {
		kt_uk_timer(HOUR, 0, 1), kt_uk(KEVENT_MAX, 1, 0, 1, 0, 2),
		kt_uk(KEVENT_NAIO, 1, 0, 1, 0, 3), kt_uk(0xffffffffu, 1, 0, 1, 0, 4),
	};

	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 4, uk), 3, "three failed entries");
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(uk[i].user[0], (__u32)i + 2, "call order");
		cr_assert_eq(uk[i].ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE));
		cr_assert_eq(uk[i].ret_data[1], (__u32)-ENOSYS, "entry %d: %d", i, (int)uk[i].ret_data[1]);
	}
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	close(kfd);
}

/* D42, D43: under STRICT, revision 2 knows ALWAYS_QUEUE and LEVEL; 0x40 is unknown. */
KTEST_REVS(ctl, strict_mode_knows_rev2_flags, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent uk[2] = { kt_uk_timer(HOUR, 0x40, 1), kt_uk_timer(HOUR, KEVENT_REQ_ALWAYS_QUEUE, 2) };

	if (!(kt_backend_info()->features & KEVENT_FEAT_STRICT))
		cr_skip_test("no KEVENT_FEAT_STRICT");
	cr_assert_eq(kt_set_abi_flags(kfd, KEVENT_ABI_STRICT), 0);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 2, uk), 1);
	cr_assert_eq(uk[0].user[0], 1u);
	cr_assert_eq(uk[0].ret_data[1], (__u32)-EINVAL);
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	close(kfd);
}

/* D49: READY marks the listed kevents; a miss is BROKEN; ret_data {0, 0}. */
KTEST_REVS(ctl, ready_marks_listed_kevents, 2, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent uk[2] = { kt_uk_timer(HOUR, 0, 7), kt_uk_timer(HOUR, 0, 8) };

	kt_add_queued(kfd, kt_uk_timer(HOUR, 0, 7));
	kt_add_queued(kfd, kt_uk_timer(HOUR, 0, 9));
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_READY, 2, uk), 1, "one matched");
	cr_assert_eq(uk[0].ret_flags, (__u32)KEVENT_RET_DONE);
	cr_assert_eq(uk[1].ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE), "no match");
	struct ukevent got = kt_get_one(kfd, "the kevent READY marked");
	cr_assert_eq(got.user[0], 7u);
	cr_assert_eq(got.ret_flags, (__u32)KEVENT_RET_DONE);
	cr_assert_eq(got.ret_data[0], 0u);
	cr_assert_eq(got.ret_data[1], 0u);
	close(kfd);
}

/*
 * D43 with D7's matching, which ignores the entry's type on revision 2
 * (revision 3 makes it part of the key, D63): LEVEL is judged on the
 * kevent matched.  A timer matched by a POLL entry refuses it; a POLL
 * kevent matched by a TIMER entry takes it.
 */
KTEST_REVS(ctl, modify_level_checked_on_the_matched_type, 2, 2)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent t = kt_uk_timer(HOUR, 0, 1), pk, m, out[4];

	kt_pipe(p);
	pk = kt_uk_poll(p[0], POLLIN, 0, 2);
	kt_add_queued(kfd, t);
	kt_add_queued(kfd, pk);
	m = t;
	m.type = KEVENT_POLL;
	m.req_flags = KEVENT_REQ_LEVEL;
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &m, 0);
	cr_assert_eq(m.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE),
		     "a timer matched by a POLL entry: %#x", m.ret_flags);
	cr_assert_eq(m.ret_data[1], (__u32)-EINVAL, "%d", (int)m.ret_data[1]);
	m = pk;
	m.type = KEVENT_TIMER;
	m.req_flags = KEVENT_REQ_LEVEL;
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &m, 0);
	cr_assert_eq(m.ret_flags, (__u32)KEVENT_RET_DONE, "a POLL kevent matched by a TIMER "
		     "entry: %#x, %d", m.ret_flags, (int)m.ret_data[1]);
	kt_write1(p[1]);
	out[0] = kt_get_one(kfd, "the pipe");
	cr_assert_eq(out[0].user[0], 2u);
	cr_assert_eq(kt_get(kfd, 0, 4, 0, out), 1, "LEVEL taken: unread data again");
	close(p[0]);
	close(p[1]);
	close(kfd);
}

/* Opens a STRICT queue of this instance, or skips where STRICT is not offered. */
static int strict_open(void)
{
	int kfd;

	if (!(kt_backend_info()->features & KEVENT_FEAT_STRICT))
		cr_skip_test("no KEVENT_FEAT_STRICT");
	kfd = kt_open(O_RDWR);
	cr_assert_eq(kt_set_abi_flags(kfd, KEVENT_ABI_STRICT), 0);
	return kfd;
}

/*
 * KEVENT_ABI_STRICT (A1) at MODIFY: an unknown req_flags bit fails that
 * entry as at ADD; the bits revision 2 knows are taken.  D44, D45, D43:
 * 0x2 (WAKEUP_ONE/ALL), 0x4 (ET) and 0x8 (LAST_CHECK) stay unknown.
 */
KTEST_REVS(ctl, strict_checks_req_flags_at_modify, 2, KTEST_OPEN)
{
	static const unsigned int unknown[] = { 0x2, 0x4, 0x8, 0x40 };
	int kfd = strict_open(), p[2];
	struct ukevent uk, m;

	kt_pipe(p);
	uk = kt_uk_poll(p[0], POLLIN, 0, 1);
	kt_add_queued(kfd, uk);
	for (unsigned int i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		m = uk;
		m.req_flags = unknown[i];
		kt_ctl1(kfd, KEVENT_CTL_MODIFY, &m, 0);
		cr_assert_eq(m.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE),
			     "MODIFY with %#x: %#x", unknown[i], m.ret_flags);
		cr_assert_eq(m.ret_data[1], (__u32)-EINVAL, "MODIFY with %#x", unknown[i]);
	}
	m = uk;
	m.req_flags = KEVENT_REQ_ONESHOT | KEVENT_REQ_ALWAYS_QUEUE | KEVENT_REQ_LEVEL;
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &m, 0);
	cr_assert_eq(m.ret_flags, (__u32)KEVENT_RET_DONE, "the known bits: %#x", m.ret_flags);
	close(p[0]);
	close(p[1]);
	close(kfd);
}

/* D44, D45 (and D43's ET): under STRICT, ADD refuses 0x2, 0x4 and 0x8 per entry. */
KTEST_REVS(ctl, strict_refuses_untaken_req_flags_at_add, 2, KTEST_OPEN)
{
	int kfd = strict_open();
	struct ukevent uk[4] = {
		kt_uk_timer(HOUR, 0x2, 1), kt_uk_timer(HOUR, 0x4, 2), kt_uk_timer(HOUR, 0x8, 3),
		kt_uk_timer(HOUR, KEVENT_REQ_ONESHOT, 4),
	};

	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, 4, uk), 3);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(uk[i].user[0], (__u32)i + 1);
		cr_assert_eq(uk[i].ret_data[1], (__u32)-EINVAL, "bit %#x", uk[i].req_flags);
	}
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	close(kfd);
}

/*
 * D44, D45 without STRICT: the untaken bits are ignored (A1).  One write to
 * a pipe readies every interested kevent of every queue (no WAKEUP_ONE),
 * those with 0x2|0x4|0x8 as those without; and nothing re-checks them at
 * the next dequeue (no LAST_CHECK).
 */
KTEST_REVS(ctl, untaken_req_flags_change_nothing, 2, KTEST_OPEN)
{
	int a = kt_open(O_RDWR), b = kt_open(O_RDWR), p[2];
	struct ukevent out[4];

	kt_pipe(p);
	kt_add_queued(a, kt_uk_poll(p[0], POLLIN, 0x2 | 0x4 | 0x8, 1));
	kt_add_queued(a, kt_uk_poll(p[0], POLLIN, 0, 2));
	kt_add_queued(b, kt_uk_poll(p[0], POLLIN, 0x2, 3));
	kt_write1(p[1]);
	cr_assert(kt_wait_ready(a, 2, 5000), "both kevents of one queue");
	cr_assert(kt_wait_ready(b, 1, 5000), "and the other queue's");
	cr_assert_eq(kt_get(a, 0, 4, 0, out), 2);
	cr_assert_eq(kt_get(b, 0, 4, 0, out), 1);
	cr_assert_eq(kt_get(a, 0, 4, 0, out), 0, "no re-check of unread data");
	cr_assert_eq(kt_queue_kevents(a), 2u);
	close(p[0]);
	close(p[1]);
	close(b);
	close(a);
}

/* D60: on revision 3 the wrapper's unknown ioc_flags, __pad and the plain entry of type 8. */
KTEST_REVS(ctl, ctl_ext_header_checks, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent_ext e = ptimer(1, KEVENT_CLOCK_MONOTONIC, 0, 3600 * NSEC, 0, 0, 1);
	struct ukevent plain = e.ev;

	cr_assert_eq(kt_ctl_ext_raw(kfd, KEVENT_CTL_ADD, 1, &e, KEVENT_CTL_EXT | 0x2, 0), -EINVAL);
	cr_assert_eq(kt_ctl_ext_raw(kfd, KEVENT_CTL_ADD, 1, &e, KEVENT_CTL_EXT, 1), -EINVAL);
	cr_assert_eq(kt_queue_kevents(kfd), 0u);
	/* D58: a POSIX timer without its setting (a 40-byte entry) fails that entry. */
	kt_ctl1(kfd, KEVENT_CTL_ADD, &plain, 1);
	cr_assert_eq(plain.ret_flags, BROKEN_DONE);
	cr_assert_eq((int)plain.ret_data[1], -EINVAL);
	cr_assert_eq(kt_queue_kevents(kfd), 0u);
	/* QUERY needs EXT entries: -EINVAL for the whole call through KEVENT_IOC_CTL. */
	ext_add(kfd, e);
	plain = e.ev;
	errno = 0;
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_QUERY, 1, &plain), -1);
	cr_assert_eq(errno, EINVAL, "QUERY without EXT: %s", strerror(errno));
	close(kfd);
}

/* D60: ext must be all zero for every type but KEVENT_POSIX_TIMER; written back as passed. */
KTEST_REVS(ctl, ext_of_other_types_must_be_zero, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent_ext e;

	for (int w = 0; w < 5; w++) {
		e = uevent(1, 0, 1);
		e.ext.__raw[w] = 1ULL << (w * 13);
		ext_add_einval(kfd, e, "user event with a non-zero ext");
		memset(&e, 0, sizeof(e));
		e.ev = kt_uk_timer(HOUR_MS, 0, 2);
		e.ext.__raw[w] = 1;
		ext_add_einval(kfd, e, "take13 timer with a non-zero ext");
	}
	memset(&e, 0, sizeof(e));
	e.ev = kt_uk_timer(HOUR_MS, 0, 2);
	ext_add(kfd, e);
	e = uevent(1, 0, 1);
	ext_add(kfd, e);
	for (int w = 0; w < 5; w++)
		cr_assert_eq(e.ext.__raw[w], 0ULL, "ext written back as passed");
	cr_assert_eq(kt_queue_kevents(kfd), 2u);
	close(kfd);
}

/*
 * D63: on revision 3 READY, QUERY, MODIFY and REMOVE match (type, id,
 * cookie): a POSIX timer and a user event with the same id and cookie, the
 * timer the older, are told apart.
 */
KTEST_REVS(ctl, type_in_the_key, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent_ext t = ptimer(5, KEVENT_CLOCK_MONOTONIC, 0, 3600 * NSEC, 0, 0, 50);
	struct ukevent_ext u = uevent(5, 0, 50);

	ext_add(kfd, t);
	ext_add(kfd, u);
	trigger(kfd, 5, 50, 0x9);	/* type USER: the user event, not the older timer */
	struct ukevent ev = kt_get_one(kfd, "the user event");

	cr_assert_eq(ev.type, (__u32)KEVENT_USER, "READY matched type %u", ev.type);
	cr_assert_eq(ev.ret_data[0], 0x9u);
	cr_assert_eq(ev.ret_data[1], 1u);
	struct ukevent_ext q = query(kfd, u, 1);	/* type USER: the user event */

	cr_assert_eq(q.ev.ret_flags, BROKEN_DONE, "QUERY of the user event's key");
	q = query(kfd, t, 1);
	cr_assert_eq(q.ev.ret_flags, (__u32)KEVENT_RET_DONE, "QUERY of the timer's key");
	/* MODIFY by the user event's key without KEVENT_TIMER_FIRED: the timer would refuse it */
	struct ukevent m = u.ev;

	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &m, 0);
	cr_assert_eq(m.ret_flags, (__u32)KEVENT_RET_DONE, "MODIFY matched type %s",
		     m.ret_flags & KEVENT_RET_BROKEN ? "POSIX_TIMER" : "USER");
	struct ukevent r = u.ev;	/* REMOVE by the user event's key */

	kt_remove(kfd, r);
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	q = query(kfd, t, 1);
	cr_assert_eq(q.ev.ret_flags, (__u32)KEVENT_RET_DONE, "the timer was removed");
	r = u.ev;
	kt_ctl1(kfd, KEVENT_CTL_REMOVE, &r, 0);
	cr_assert_eq(r.ret_flags, BROKEN_DONE, "a second user event REMOVE matched the timer");
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	close(kfd);
}

/*
 * D7, D63: below revision 3 matching compares id and cookie only: a take13
 * timer and a POLL kevent with the same id (the timer's period is the fd's
 * number) and cookie, the timer the older, are one key: a REMOVE naming
 * the POLL removes the timer.  On revision 3 (type_in_the_key) it would not.
 */
KTEST_REVS(ctl, key_without_type_below_revision_3, 1, 2)
{
	int kfd = kt_open(O_RDWR), p[2], hi;

	kt_pipe(p);
	hi = fcntl(p[0], F_DUPFD_CLOEXEC, 600);	/* a period of 600+ ms */
	cr_assert(hi >= 600, "F_DUPFD: %s", strerror(errno));
	struct ukevent tm = kt_uk(KEVENT_TIMER, (__u32)hi, 0, KEVENT_TIMER_FIRED, 0, 40);
	struct ukevent pl = kt_uk_poll(hi, KEVENT_POLL_POLLIN, 0, 40);

	kt_add_queued(kfd, tm);
	kt_add_queued(kfd, pl);
	kt_remove(kfd, pl);	/* the oldest of that id and cookie: the timer */
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	kt_write1(p[1]);
	struct ukevent ev = kt_get_one(kfd, "the POLL kevent left");

	cr_assert_eq(ev.type, (__u32)KEVENT_POLL, "the kevent left is type %u", ev.type);
	close(hi);
	close(p[0]);
	close(p[1]);
	close(kfd);
}

/*
 * D60: ADD compacts the answered EXT entries to the front whole, 80 bytes
 * each, ext included, and writes every one of them back: a failed POSIX
 * timer and a failed user event behind two registered entries.
 */
KTEST_REVS(ctl, ext_compaction_moves_whole_entries, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent_ext in[4] = {
		ptimer(1, KEVENT_CLOCK_MONOTONIC, 0, 3600 * NSEC, 0, 0, 1),
		ptimer(2, 5, 0, 123 * NSEC + 456, 7 * NSEC + 8, 0, 2),	/* clock 5: refused */
		uevent(3, 0, 3),
		uevent(4, 0, 4),
	}, e[4];

	in[3].ext.__raw[4] = 0x5a5a5a5a00000001ULL;	/* a user event's ext must be zero */
	memcpy(e, in, sizeof(e));
	cr_assert_eq(kt_ctl_ext(kfd, KEVENT_CTL_ADD, 4, e), 2, "two entries answered");
	for (int i = 0; i < 2; i++) {
		const struct ukevent_ext *want = &in[2 * i + 1];

		cr_assert_eq(e[i].ev.user[0], want->ev.user[0], "entry %d is cookie %u", i,
			     e[i].ev.user[0]);
		cr_assert_eq(e[i].ev.ret_flags, BROKEN_DONE, "entry %d ret_flags %#x", i,
			     e[i].ev.ret_flags);
		cr_assert_eq((int)e[i].ev.ret_data[1], -EINVAL, "entry %d ret_data[1]", i);
		cr_assert_eq(memcmp(&e[i].ext, &want->ext, sizeof(want->ext)), 0,
			     "entry %d: the ext of cookie %u did not move with it", i, want->ev.user[0]);
	}
	cr_assert_eq(kt_queue_kevents(kfd), 2u);
	close(kfd);
}

/*
 * D60: an unknown ioc_flags bit, __pad != 0 and QUERY without EXT entries
 * fail the whole call -EINVAL on the header, before the array is read: the
 * array here is an unreadable page, which a call that reads it fails EFAULT.
 */
KTEST_REVS(ctl, ext_header_refused_before_array, 3, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	long pg = sysconf(_SC_PAGESIZE);
	void *none = mmap(NULL, (size_t)pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ukevent_ext *bad = none;

	cr_assert_neq(none, MAP_FAILED);
	ext_add(kfd, uevent(1, 0, 1));
	cr_assert_eq(kt_ctl_ext_raw(kfd, KEVENT_CTL_ADD, 1, bad, KEVENT_CTL_EXT | 0x2, 0), -EINVAL,
		     "unknown ioc_flags bit");
	cr_assert_eq(kt_ctl_ext_raw(kfd, KEVENT_CTL_MODIFY, 1, bad, KEVENT_CTL_EXT, 1), -EINVAL,
		     "__pad 1");
	cr_assert_eq(kt_ctl_ext_raw(kfd, KEVENT_CTL_QUERY, 1, bad, 0, 0), -EINVAL,
		     "QUERY of 40-byte entries");
	cr_assert_eq(kt_ctl_ext(kfd, KEVENT_CTL_QUERY, 1, bad), -EFAULT, "the array is unreadable");
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	munmap(none, (size_t)pg);
	close(kfd);
}

/*
 * D60, B4: where a path limits a CTL batch (INFO max_ctl_num, counted in
 * 40-byte entries) an EXT call carries at most half as many entries;
 * above that it fails E2BIG whole, before any effect.  Only a limited path
 * shows it: the CUSE retry path (the guest's Yama boot).
 */
KTEST_REVS(ctl, ext_batch_half_of_max_ctl_num, 3, KTEST_OPEN)
{
	unsigned int max = kt_backend_info()->max_ctl_num, half = max / 2;
	struct ukevent_ext *e;
	int kfd;

	if (!max || max >= KEVENT_MAX_EVENTS - 1)
		cr_skip_test("max_ctl_num %u: this caller's path takes every batch the ABI allows, "
			     "so D60's half batch cannot show (the CUSE retry path limits it)", max);
	kt_require_room(KEVENT_LIMIT_KEVENTS, half + 1);
	kfd = kt_open(O_RDWR);
	e = calloc(half + 1, sizeof(*e));
	cr_assert(e);
	for (unsigned int i = 0; i <= half; i++)
		e[i] = uevent(i, 0, i);
	cr_assert_eq(kt_ctl_ext(kfd, KEVENT_CTL_ADD, half + 1, e), -E2BIG,
		     "%u EXT entries above half of max_ctl_num %u", half + 1, max);
	cr_assert_eq(kt_queue_kevents(kfd), 0u, "a refused batch had an effect");
	cr_assert_eq(kt_ctl_ext(kfd, KEVENT_CTL_ADD, half, e), 0, "%u EXT entries", half);
	cr_assert_eq(kt_queue_kevents(kfd), half);
	free(e);
	close(kfd);
}

/*
 * ---- Revision 4: KEVENT_REQ_DISPATCH (docs/abi.md D65, D66) ----
 *
 * The tests of D65 that hold from revision 4 on are [4, open]; those that
 * say what a queue below revision 4 keeps (0x80 an unknown req_flags bit,
 * A1) are [1, 3].  Every name starts with dispatch_: the guest boots select
 * them by that (tests/vm/meson.build).
 */

#define DISPATCH_NOW 0		/* GET_EVENTS timeout: take what is ready, do not wait */

/* A POLLIN kevent on the pipe's read end rd, DISPATCH plus req. */
static struct ukevent dispatch_pipe(int rd, __u32 req, __u32 cookie)
{
	return kt_uk_poll(rd, KEVENT_POLL_POLLIN, KEVENT_REQ_DISPATCH | req, cookie);
}

/* MODIFY of one kevent that must match: on revision 4 it re-arms (D65). */
static void dispatch_modify(int kfd, struct ukevent uk, const char *what)
{
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &uk, 0);
	cr_assert_eq(uk.ret_flags, (__u32)KEVENT_RET_DONE, "%s: MODIFY ret_flags %#x", what,
		     uk.ret_flags);
}

/* READY of one kevent (a user event's trigger value in event); must match. */
static void dispatch_ready(int kfd, struct ukevent uk, __u32 value)
{
	uk.event = value;
	kt_ctl1(kfd, KEVENT_CTL_READY, &uk, 1);
	cr_assert_eq(uk.ret_flags, (__u32)KEVENT_RET_DONE, "READY ret_flags %#x", uk.ret_flags);
}

/* Nothing ready now: GET_EVENTS without waiting returns 0. */
static void dispatch_none(int kfd, const char *what)
{
	struct ukevent out[4];
	int n = kt_get(kfd, 0, 4, DISPATCH_NOW, out);

	cr_assert_eq(n, 0, "%s: %d ready (cookie %u, ret_data %#x %#x)", what, n,
		     n > 0 ? out[0].user[0] : 0, n > 0 ? out[0].ret_data[0] : 0,
		     n > 0 ? out[0].ret_data[1] : 0);
}

/* D65: below revision 4, 0x80 is an unknown req_flags bit (A1): ignored. */
KTEST_REVS(ctl, dispatch_ignored_below_revision_4, 1, 3)
{
	int kfd = kt_open(O_RDWR), p[2];

	kt_pipe(p);
	kt_add_queued(kfd, dispatch_pipe(p[0], 0, 1));
	kt_write1(p[1]);
	cr_assert_eq(kt_get_one(kfd, "the first write").user[0], 1u);
	kt_read_all(p[0]);
	kt_write1(p[1]);
	cr_assert_eq(kt_get_one(kfd, "the second write: no disarm below revision 4").user[0], 1u);
	close(p[0]);
	close(p[1]);
	close(kfd);
}

/* D65, A1: below revision 4, STRICT refuses 0x80 per entry, at ADD and MODIFY. */
KTEST_REVS(ctl, dispatch_strict_refused_below_revision_4, 1, 3)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent uk = kt_uk_timer(HOUR, KEVENT_REQ_DISPATCH, 1), m;

	kt_require_feature(KEVENT_FEAT_STRICT, "only KEVENT_ABI_STRICT makes an unknown req_flags "
			   "bit visible (A1)");
	cr_assert_eq(kt_set_abi_flags(kfd, KEVENT_ABI_STRICT), 0);
	kt_ctl1(kfd, KEVENT_CTL_ADD, &uk, 1);
	cr_assert_eq(uk.ret_flags, (__u32)(KEVENT_RET_BROKEN | KEVENT_RET_DONE));
	cr_assert_eq((int)uk.ret_data[1], -EINVAL, "ADD on revision %d: %d", kt_rev(),
		     (int)uk.ret_data[1]);
	kt_add_queued(kfd, kt_uk_timer(HOUR, 0, 2));
	m = kt_uk_timer(HOUR, KEVENT_REQ_DISPATCH, 2);
	kt_ctl1(kfd, KEVENT_CTL_MODIFY, &m, 0);
	cr_assert_eq((int)m.ret_data[1], -EINVAL, "MODIFY on revision %d: %d", kt_rev(),
		     (int)m.ret_data[1]);
	close(kfd);
}

/* D65: from revision 4 on, STRICT knows DISPATCH. */
KTEST_REVS(ctl, dispatch_strict_known_from_revision_4, 4, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent m = kt_uk_timer(HOUR, KEVENT_REQ_DISPATCH | KEVENT_REQ_ONESHOT, 1);

	kt_require_feature(KEVENT_FEAT_STRICT, "STRICT is what refuses unknown bits (A1)");
	cr_assert_eq(kt_set_abi_flags(kfd, KEVENT_ABI_STRICT), 0);
	kt_add_queued(kfd, kt_uk_timer(HOUR, KEVENT_REQ_DISPATCH, 1));
	dispatch_modify(kfd, m, "DISPATCH|ONESHOT under STRICT");
	close(kfd);
}

/*
 * D65: a delivered DISPATCH kevent stays registered but is disarmed: new
 * activity does not make it ready (nor the queue readable) until MODIFY
 * re-arms it; MODIFY with DISPATCH still set disarms it again after the
 * next delivery.
 */
KTEST_REVS(ctl, dispatch_disarms_until_modify, 4, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent uk, got;

	kt_pipe(p);
	uk = dispatch_pipe(p[0], 0, 7);
	kt_add_queued(kfd, uk);
	kt_write1(p[1]);
	got = kt_get_one(kfd, "the first write");
	cr_assert_eq(got.user[0], 7u);
	cr_assert_eq(got.ret_data[0], (__u32)KEVENT_POLL_POLLIN);
	kt_read_all(p[0]);
	kt_write1(p[1]);
	kt_assert_quiet(kfd, 200, "a write while disarmed");
	cr_assert_eq(kt_queue_kevents(kfd), 1u, "disarmed, not removed");
	cr_assert_eq(kt_poll1(kfd, POLLIN, 0), 0, "a disarmed kevent makes the queue readable");
	dispatch_modify(kfd, uk, "re-arm");
	got = kt_get_one(kfd, "after MODIFY: the data is still there");
	cr_assert_eq(got.ret_data[0], (__u32)KEVENT_POLL_POLLIN);
	kt_read_all(p[0]);
	kt_write1(p[1]);
	kt_assert_quiet(kfd, 200, "DISPATCH kept: disarmed again by that delivery");
	uk.req_flags = 0;
	dispatch_modify(kfd, uk, "MODIFY without DISPATCH");
	kt_get_one(kfd, "re-armed");
	kt_read_all(p[0]);
	kt_write1(p[1]);
	kt_get_one(kfd, "an ordinary kevent again: the next write fires");
	close(p[0]);
	close(p[1]);
	close(kfd);
}

/*
 * D65, D62: what comes while disarmed is held, merged as on the ready
 * list, and delivered at the re-arm: a user event's triggers OR their
 * values and count.
 */
KTEST_REVS(ctl, dispatch_holds_what_came_while_disarmed, 4, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent uk = kt_uk(KEVENT_USER, 5, 0, 0, KEVENT_REQ_DISPATCH, 5), got;

	kt_add_queued(kfd, uk);
	dispatch_ready(kfd, uk, 0x1);
	got = kt_get_one(kfd, "the first trigger");
	cr_assert_eq(got.ret_data[0], 0x1u);
	cr_assert_eq(got.ret_data[1], 1u);
	dispatch_ready(kfd, uk, 0x2);
	dispatch_ready(kfd, uk, 0x4);
	dispatch_none(kfd, "two triggers while disarmed");
	dispatch_modify(kfd, uk, "re-arm");
	got = kt_get_one(kfd, "the held triggers at the re-arm");
	cr_assert_eq(got.ret_data[0], 0x6u, "values OR-ed: %#x", got.ret_data[0]);
	cr_assert_eq(got.ret_data[1], 2u, "two triggers counted: %u", got.ret_data[1]);
	dispatch_modify(kfd, uk, "re-arm with nothing held");
	dispatch_none(kfd, "nothing came: nothing to deliver");
	close(kfd);
}

/*
 * D65, D49: a READY while disarmed is held like an origin's report and
 * delivered at the re-arm (DONE, {0, 0}) even when the source is quiet; a
 * second READY adds nothing to it.
 */
KTEST_REVS(ctl, dispatch_ready_held_until_rearm, 4, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent uk, got;

	kt_pipe(p);
	uk = dispatch_pipe(p[0], 0, 3);
	kt_add_queued(kfd, uk);
	dispatch_ready(kfd, uk, uk.event);
	got = kt_get_one(kfd, "READY");
	cr_assert_eq(got.ret_data[0], 0u);
	dispatch_ready(kfd, uk, uk.event);
	dispatch_ready(kfd, uk, uk.event);
	dispatch_none(kfd, "READY while disarmed");
	dispatch_modify(kfd, uk, "re-arm");
	got = kt_get_one(kfd, "the held READY, the pipe empty");
	cr_assert_eq(got.user[0], 3u);
	cr_assert_eq(got.ret_flags, (__u32)KEVENT_RET_DONE);
	cr_assert_eq(got.ret_data[0], 0u, "READY's {0, 0}: %#x", got.ret_data[0]);
	cr_assert_eq(got.ret_data[1], 0u);
	dispatch_none(kfd, "held once, delivered once");
	/* A report held while disarmed: READY does not replace it with {0, 0}. */
	kt_write1(p[1]);
	/*
	 * Long enough for the report to reach the queue and be held (nothing
	 * shows a held report); a report that came after the read below would
	 * find the pipe empty and the test would see READY's {0, 0}.
	 */
	kt_assert_quiet(kfd, 1000, "a write while disarmed");
	kt_read_all(p[0]);	/* so MODIFY's own check finds nothing newer */
	dispatch_ready(kfd, uk, uk.event);
	dispatch_modify(kfd, uk, "re-arm");
	got = kt_get_one(kfd, "the held report");
	cr_assert_eq(got.ret_data[0], (__u32)KEVENT_POLL_POLLIN, "the origin's report, not "
		     "READY's: %#x", got.ret_data[0]);
	close(p[0]);
	close(p[1]);
	close(kfd);
}

/* D65: with ONESHOT, DISPATCH changes nothing: freed at its delivery. */
KTEST_REVS(ctl, dispatch_oneshot_freed, 4, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent uk = kt_uk_timer(HOUR, KEVENT_REQ_DISPATCH | KEVENT_REQ_ONESHOT, 4);

	kt_add_queued(kfd, uk);
	dispatch_ready(kfd, uk, uk.event);
	kt_get_one(kfd, "READY");
	cr_assert_eq(kt_queue_kevents(kfd), 0u, "ONESHOT frees it, disarmed or not");
	close(kfd);
}

/*
 * D65, D43: a disarmed LEVEL kevent is not re-checked at the next dequeue;
 * MODIFY's re-check re-arms it: still readable, it fires; drained, not.
 */
KTEST_REVS(ctl, dispatch_level_checked_at_modify, 4, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR), p[2];
	struct ukevent uk;

	kt_pipe(p);
	uk = dispatch_pipe(p[0], KEVENT_REQ_LEVEL, 6);
	kt_add_queued(kfd, uk);
	kt_write1(p[1]);
	kt_get_one(kfd, "the write");
	dispatch_none(kfd, "unread data while disarmed: no LEVEL report");
	dispatch_modify(kfd, uk, "re-arm, data unread");
	cr_assert_eq(kt_get_one(kfd, "MODIFY found it readable").ret_data[0],
		     (__u32)KEVENT_POLL_POLLIN);
	dispatch_none(kfd, "disarmed again: this dequeue checks nothing");
	kt_read_all(p[0]);
	dispatch_modify(kfd, uk, "re-arm, drained");
	kt_assert_quiet(kfd, 200, "drained before the re-arm: nothing reported");
	close(p[0]);
	close(p[1]);
	close(kfd);
}

/*
 * D65, D58: a disarmed POSIX timer keeps its grid; a MODIFY of its 40-byte
 * entry re-arms it and delivers every grid point passed since its last
 * delivery; an EXT MODIFY (a new setting, D61) discards them instead.
 */
KTEST_REVS(ctl, dispatch_posix_timer_counts_while_disarmed, 4, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct ukevent_ext e;
	struct ukevent got;

	memset(&e, 0, sizeof(e));
	e.ev = kt_uk(KEVENT_POSIX_TIMER, 9, 0, KEVENT_TIMER_FIRED, KEVENT_REQ_DISPATCH, 9);
	e.ext.timer.clock = KEVENT_CLOCK_MONOTONIC;
	e.ext.timer.value.tv_nsec = 1000000;		/* 1 ms */
	e.ext.timer.interval.tv_nsec = 1000000;
	cr_assert_eq(kt_ctl_ext(kfd, KEVENT_CTL_ADD, 1, &e), 0, "ADD of the POSIX timer");
	got = kt_get_one(kfd, "the first expiry");
	cr_assert_geq(got.ret_data[0], 1u);
	kt_sleep_ms(40);	/* the subject: grid points pass while it is disarmed */
	dispatch_none(kfd, "expiries while disarmed");
	dispatch_modify(kfd, e.ev, "re-arm by a 40-byte MODIFY");
	got = kt_get_one(kfd, "the held expiries");
	cr_assert_geq(got.ret_data[0], 20u, "40 ms of 1 ms grid points counted: %u",
		      got.ret_data[0]);
	kt_sleep_ms(10);	/* again: points pass while disarmed */
	e.ext.timer.value.tv_sec = 3600;
	e.ext.timer.interval.tv_nsec = 0;
	cr_assert_eq(kt_ctl_ext(kfd, KEVENT_CTL_MODIFY, 1, &e), 0, "EXT MODIFY");
	cr_assert_eq(e.ev.ret_flags, (__u32)KEVENT_RET_DONE);
	dispatch_none(kfd, "a new setting discards what was held (D61)");
	close(kfd);
}

/*
 * D65, D55: WAIT disarms what it copies into the kevent_uring; D41: a
 * WAIT whose ring store faulted delivered nothing, so it disarmed nothing:
 * the kevent is ready again and the call that delivers it disarms it.
 */
KTEST_REVS(ctl, dispatch_wait_disarms_a_faulted_wait_does_not, 4, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/* slots 0 and 1 on the first page, 2 .. 7 on the second */
	struct kevent_uring *r = (struct kevent_uring *)(m + pg - 8 - 2 * 40);
	struct kevent_ring_init ri = { .ring = (__u64)(uintptr_t)r, .num = 8 };
	struct ukevent a = kt_uk(KEVENT_USER, 1, 0, 0, KEVENT_REQ_DISPATCH, 1);
	struct ukevent b = kt_uk(KEVENT_USER, 2, 0, 0, KEVENT_REQ_DISPATCH, 2);
	struct timespec now = { 0, 0 };

	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	cr_assert_neq(m, MAP_FAILED);
	memset(m, 0, 2 * pg);
	cr_assert_eq(kt_ioctl(kfd, KEVENT_IOC_RING_INIT, &ri), 0);
	kt_add_queued(kfd, a);
	kt_add_queued(kfd, b);
	dispatch_ready(kfd, a, 0x1);
	cr_assert_eq(kevent_wait(kfd, 8, 0, now, 0), 1, "WAIT copies a: %s", strerror(errno));
	cr_assert_eq(r->event[0].user[0], 1u);
	dispatch_ready(kfd, a, 0x2);
	cr_assert_eq(kevent_wait(kfd, 8, 0, now, 0), 0, "a is disarmed by the WAIT");
	dispatch_modify(kfd, a, "re-arm a");
	cr_assert_eq(kevent_wait(kfd, 8, 0, now, 0), 1, "a's held trigger");
	cr_assert_eq(r->event[1].ret_data[0], 0x2u);
	munmap(m + pg, pg);
	dispatch_ready(kfd, b, 0x4);
	cr_assert_eq(kevent_wait(kfd, 8, 0, now, 0), -1, "slot 2 faults");
	cr_assert_eq(errno, EFAULT);
	cr_assert_eq(kt_queue_ready(kfd), 1u, "b is ready again, not disarmed");
	struct ukevent got = kt_get_one(kfd, "b through GET_EVENTS");
	cr_assert_eq(got.user[0], 2u);
	cr_assert_eq(got.ret_data[0], 0x4u);
	dispatch_ready(kfd, b, 0x8);
	dispatch_none(kfd, "b disarmed by the GET_EVENTS that delivered it");
	munmap(m, pg);
	close(kfd);
}

/* D66: SET_ABI(4) makes a revision-4 queue, which INFO reports. */
KTEST_REVS(ctl, dispatch_queue_is_revision_4, 4, KTEST_OPEN)
{
	int kfd = kt_open(O_RDWR);
	struct kevent_info info;

	kt_info(kfd, &info);
	cr_assert_geq(info.abi_revision, 4u, "abi_revision %u", info.abi_revision);
	cr_assert_eq(info.queue_revision, 4u, "queue_revision %u", info.queue_revision);
	cr_assert_eq(info.abi_lowest, 1u);
	close(kfd);
}
