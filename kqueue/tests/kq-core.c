// SPDX-License-Identifier: GPL-2.0-only
/*
 * Conformance of libkqueue-kevent: the calls, the changelist rules and the
 * EV_* flags of FreeBSD's kqueue(2), on pipes.  One test per rule.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "libkevent.h"

#include "kqt.h"

/* ---- kqueue() and kevent() ---- */

KQT(api, kqueue_gives_a_pollable_descriptor)
{
	int kq = kqt_kqueue(), p[2];
	struct pollfd pf;

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_write(p[1], 1);
	/* The kqueue fd itself is the device fd: poll() on it works. */
	pf = (struct pollfd){ .fd = kq, .events = POLLIN };
	cr_assert_geq(poll(&pf, 1, 0), 0);
	cr_assert_eq(kqt_get(kq, "pipe with data").ident, (uintptr_t)p[0]);
}

KQT(api, two_kqueues_are_independent)
{
	int a = kqt_kqueue(), b = kqt_kqueue(), p[2];

	cr_assert_neq(a, b);
	kqt_pipe(p);
	kqt_ok(a, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_write(p[1], 1);
	kqt_get(a, "watched in a");
	kqt_quiet(b, 50, "nothing watched in b");
}

/*
 * kqueue() puts its queue on the highest revision the device serves and
 * the library knows, capped by KQUEUE_KEVENT_REVISION (kqueue-kevent(3)
 * ENVIRONMENT); this instance's own setting first, then each revision.
 */
static unsigned int expected_revision(unsigned int highest)
{
	const char *cap = getenv("KQUEUE_KEVENT_REVISION");
	unsigned int want = highest < KEVENT_ABI_REVISION ? highest : KEVENT_ABI_REVISION;

	if (cap && *cap && strtoul(cap, NULL, 10) < want)
		want = (unsigned int)strtoul(cap, NULL, 10);
	return want;
}

static void works_on(int kq, unsigned int rev)
{
	int p[2];
	struct kevent ev;

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_write(p[1], 3);
	ev = kqt_get(kq, "pipe with data");
	cr_assert(ev.ident == (uintptr_t)p[0] && ev.data == 3,
		  "revision %u: ident %lu data %ld", rev, (unsigned long)ev.ident, (long)ev.data);
	close(p[0]);
	close(p[1]);
}

KQT(api, kqueue_runs_on_the_revision_asked)
{
	unsigned int highest, rev, want;
	char buf[16];
	int kq = kqt_kqueue();

	rev = kqt_revision(kq, &highest);
	want = expected_revision(highest);
	cr_assert_eq(rev, want, "KQUEUE_KEVENT_REVISION=%s, device serves up to %u: queue on %u",
		     getenv("KQUEUE_KEVENT_REVISION") ? getenv("KQUEUE_KEVENT_REVISION") : "(unset)",
		     highest, rev);
	works_on(kq, rev);
	close(kq);
	for (unsigned int r = 1; r <= highest + 1; r++) {
		snprintf(buf, sizeof(buf), "%u", r);
		cr_assert_eq(setenv("KQUEUE_KEVENT_REVISION", buf, 1), 0);
		kq = kqt_kqueue();
		want = expected_revision(highest);
		rev = kqt_revision(kq, NULL);
		cr_assert_eq(rev, want, "KQUEUE_KEVENT_REVISION=%u: queue on %u, want %u", r, rev,
			     want);
		works_on(kq, rev);
		close(kq);
	}
	/* Unset, and empty as for KEVENT_DEVICE: the highest both serve. */
	for (int i = 0; i < 2; i++) {
		if (i == 0)
			unsetenv("KQUEUE_KEVENT_REVISION");
		else
			setenv("KQUEUE_KEVENT_REVISION", "", 1);
		kq = kqt_kqueue();
		rev = kqt_revision(kq, NULL);
		cr_assert_eq(rev, highest < KEVENT_ABI_REVISION ? highest : KEVENT_ABI_REVISION,
			     "KQUEUE_KEVENT_REVISION %s: queue on %u of %u", i ? "empty" : "unset",
			     rev, highest);
		close(kq);
	}
}

static int open_fds(void)
{
	int n = 0;

	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

KQT(api, bad_revision_in_the_environment_is_einval)
{
	static const char *const bad[] = {
		"0", "-1", "+3", " 3", "3 ", "3x", "x", "0x3", "1.5", "99999999999999999999",
	};
	int kq = kqt_kqueue(), before;

	close(kq);	/* the device answers: a failure below is the variable's */
	before = open_fds();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(setenv("KQUEUE_KEVENT_REVISION", bad[i], 1), 0);
		errno = 0;
		kq = kqueue();
		cr_assert(kq == -1 && errno == EINVAL, "KQUEUE_KEVENT_REVISION=\"%s\": %d (%s)",
			  bad[i], kq, strerror(errno));
		cr_assert_eq(open_fds(), before, "KQUEUE_KEVENT_REVISION=\"%s\" left an fd open",
			     bad[i]);
	}
}

KQT(api, bad_descriptor_is_ebadf)
{
	struct kevent ev;

	cr_assert_eq(kevent(-1, NULL, 0, &ev, 1, NULL), -1);
	cr_assert_eq(errno, EBADF);
}

KQT(api, not_a_kqueue_is_ebadf)
{
	int p[2];
	struct kevent ev;
	struct timespec z = { 0, 0 };

	kqt_pipe(p);
	cr_assert_eq(kevent(p[0], NULL, 0, &ev, 1, &z), -1);
	cr_assert_eq(errno, EBADF);
}

KQT(api, negative_counts_are_einval)
{
	int kq = kqt_kqueue();
	struct kevent ev;

	cr_assert_eq(kevent(kq, NULL, -1, &ev, 1, NULL), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(kevent(kq, NULL, 0, &ev, -1, NULL), -1);
	cr_assert_eq(errno, EINVAL);
}

KQT(api, bad_timeout_is_einval)
{
	int kq = kqt_kqueue();
	struct kevent ev;
	struct timespec ts = { 0, 1000000000L };

	cr_assert_eq(kevent(kq, NULL, 0, &ev, 1, &ts), -1);
	cr_assert_eq(errno, EINVAL);
}

KQT(api, nevents_zero_returns_at_once)
{
	int kq = kqt_kqueue();

	/* NULL timeout, nothing to wait for: still returns (nothing to fill). */
	cr_assert_eq(kevent(kq, NULL, 0, NULL, 0, NULL), 0);
}

KQT(api, zero_timeout_polls)
{
	int kq = kqt_kqueue();
	struct kevent ev;
	struct timespec z = { 0, 0 };

	cr_assert_eq(kevent(kq, NULL, 0, &ev, 1, &z), 0);
}

KQT(api, timeout_expires_with_zero)
{
	int kq = kqt_kqueue();
	struct kevent ev;

	cr_assert_eq(kqt_wait(kq, &ev, 1, 30), 0);
}

KQT(api, changes_and_events_in_one_call)
{
	int kq = kqt_kqueue(), p[2];
	struct kevent c, e;
	struct timespec ts = { 10, 0 };

	kqt_pipe(p);
	kqt_write(p[1], 3);
	EV_SET(&c, p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	cr_assert_eq(kevent(kq, &c, 1, &e, 1, &ts), 1);
	cr_assert_eq(e.ident, (uintptr_t)p[0]);
	cr_assert_eq(e.data, 3);
}

KQT(api, eventlist_is_bounded_by_nevents)
{
	int kq = kqt_kqueue(), p[3][2];
	struct kevent ev[3];

	/* Readable before EV_ADD: all three are ready at once, no device lag. */
	for (int i = 0; i < 3; i++) {
		kqt_pipe(p[i]);
		kqt_write(p[i][1], 1);
		kqt_ok(kq, (uintptr_t)p[i][0], EVFILT_READ, EV_ADD | EV_ONESHOT, 0, 0, NULL);
	}
	cr_assert_eq(kqt_wait(kq, ev, 2, 10000), 2);
	cr_assert_eq(kqt_wait(kq, ev, 3, 10000), 1, "the third is left for the next call");
}

KQT(api, udata_comes_back_untouched)
{
	int kq = kqt_kqueue(), p[2];
	struct kevent e;

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, (void *)&kq);
	kqt_write(p[1], 1);
	e = kqt_get(kq, "pipe");
	cr_assert_eq(e.udata, (void *)&kq);
}

KQT(api, returned_flags_keep_ev_add_only)
{
	int kq = kqt_kqueue(), p[2];
	struct kevent want, e;

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD | EV_ENABLE, 0, 0, NULL);
	kqt_write(p[1], 2);
	e = kqt_get(kq, "pipe");
	EV_SET(&want, p[0], EVFILT_READ, EV_ADD, 0, 2, NULL);
	kqt_same(&want, &e, "EV_ADD stays (as the Linux ports), EV_ENABLE goes");
}

/* ---- errors in the changelist ---- */

KQT(errors, failed_change_is_an_ev_error_entry)
{
	int kq = kqt_kqueue();
	struct kevent e = kqt_error_entry(kq, (uintptr_t)-1, EVFILT_READ, EV_ADD, 0, 0);

	cr_assert_eq(e.flags, EV_ADD | EV_ERROR, "the change's flags plus EV_ERROR");
	cr_assert_eq(e.data, EBADF);
}

KQT(errors, error_returns_at_once_even_with_ready_events)
{
	int kq = kqt_kqueue(), p[2];
	struct kevent c[2], e[4];

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_write(p[1], 1);
	EV_SET(&c[0], 100000, EVFILT_READ, EV_ADD, 0, 0, NULL);
	EV_SET(&c[1], 100001, EVFILT_WRITE, EV_ADD, 0, 0, NULL);
	cr_assert_eq(kevent(kq, c, 2, e, 4, NULL), 2, "only the two errors");
	cr_assert_eq(e[0].ident, 100000u);
	cr_assert_eq(e[1].ident, 100001u);
	cr_assert_eq(kqt_get(kq, "the pipe, next call").ident, (uintptr_t)p[0]);
}

KQT(errors, error_without_room_fails_the_call)
{
	int kq = kqt_kqueue();

	cr_assert_eq(kqt_change(kq, (uintptr_t)-1, EVFILT_READ, EV_ADD, 0, 0, NULL), -EBADF);
}

KQT(errors, later_changes_still_apply)
{
	int kq = kqt_kqueue(), p[2];
	struct kevent c[2], e[2];

	kqt_pipe(p);
	EV_SET(&c[0], 100000, EVFILT_READ, EV_ADD, 0, 0, NULL);
	EV_SET(&c[1], p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	cr_assert_eq(kevent(kq, c, 2, e, 2, NULL), 1);
	kqt_write(p[1], 1);
	cr_assert_eq(kqt_get(kq, "the second change applied").ident, (uintptr_t)p[0]);
}

KQT(errors, unknown_filter_is_einval)
{
	int kq = kqt_kqueue();

	cr_assert_eq(kqt_error_entry(kq, 1, -100, EV_ADD, 0, 0).data, EINVAL);
	cr_assert_eq(kqt_error_entry(kq, 1, 3, EV_ADD, 0, 0).data, EINVAL);
}

KQT(errors, unserved_filters_are_einval)
{
	int kq = kqt_kqueue();

	cr_assert_eq(kqt_error_entry(kq, 1, EVFILT_AIO, EV_ADD, 0, 0).data, EINVAL);
	cr_assert_eq(kqt_error_entry(kq, 1, EVFILT_FS, EV_ADD, 0, 0).data, EINVAL);
}

KQT(errors, delete_of_nothing_is_enoent)
{
	int kq = kqt_kqueue(), p[2];

	kqt_pipe(p);
	cr_assert_eq(kqt_change(kq, (uintptr_t)p[0], EVFILT_READ, EV_DELETE, 0, 0, NULL), -ENOENT);
}

KQT(errors, enable_of_nothing_is_enoent)
{
	int kq = kqt_kqueue(), p[2];

	kqt_pipe(p);
	cr_assert_eq(kqt_change(kq, (uintptr_t)p[0], EVFILT_READ, EV_ENABLE, 0, 0, NULL), -ENOENT);
	cr_assert_eq(kqt_change(kq, (uintptr_t)p[0], EVFILT_READ, 0, 0, 0, NULL), -ENOENT);
}

KQT(errors, closed_fd_is_ebadf)
{
	int kq = kqt_kqueue(), p[2];

	kqt_pipe(p);
	close(p[0]);
	cr_assert_eq(kqt_change(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL), -EBADF);
}

KQT(errors, receipt_reports_success_as_data_zero)
{
	int kq = kqt_kqueue(), p[2];
	struct kevent c, e;

	kqt_pipe(p);
	kqt_write(p[1], 1);	/* ready: still only the receipt comes back */
	EV_SET(&c, p[0], EVFILT_READ, EV_ADD | EV_RECEIPT, 0, 0, (void *)7);
	cr_assert_eq(kevent(kq, &c, 1, &e, 1, NULL), 1);
	cr_assert_eq(e.flags, EV_ADD | EV_RECEIPT | EV_ERROR);
	cr_assert_eq(e.data, 0);
	cr_assert_eq(e.udata, (void *)7);
	cr_assert_eq(kqt_get(kq, "then the event").ident, (uintptr_t)p[0]);
}

KQT(errors, receipt_mixes_with_errors_in_order)
{
	int kq = kqt_kqueue(), p[2];
	struct kevent c[2], e[2];

	kqt_pipe(p);
	EV_SET(&c[0], p[0], EVFILT_READ, EV_ADD | EV_RECEIPT, 0, 0, NULL);
	EV_SET(&c[1], p[1], EVFILT_READ, EV_DELETE | EV_RECEIPT, 0, 0, NULL);
	cr_assert_eq(kevent(kq, c, 2, e, 2, NULL), 2);
	cr_assert_eq(e[0].data, 0);
	cr_assert_eq(e[1].data, ENOENT);
}

/* ---- identity and the actions ---- */

KQT(flags, read_and_write_on_one_fd_are_two_kevents)
{
	int kq = kqt_kqueue(), sv[2];
	struct kevent e;

	kqt_socketpair(sv);
	kqt_ok(kq, (uintptr_t)sv[0], EVFILT_READ, EV_ADD, 0, 0, (void *)1);
	kqt_ok(kq, (uintptr_t)sv[0], EVFILT_WRITE, EV_ADD, 0, 0, (void *)2);
	kqt_ok(kq, (uintptr_t)sv[0], EVFILT_WRITE, EV_DELETE, 0, 0, NULL);
	kqt_quiet(kq, 50, "write deleted, nothing to read");
	kqt_write(sv[1], 1);
	e = kqt_get(kq, "read still there");
	cr_assert_eq(e.filter, EVFILT_READ);
	cr_assert_eq(e.udata, (void *)1);
}

/*
 * FreeBSD's kqueue_register sets the knote's udata from every change that
 * names it, not only EV_ADD: an EV_DISABLE or EV_ENABLE passes its own.
 */
KQT(flags, every_change_sets_udata)
{
	int kq = kqt_kqueue(), p[2];

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, (void *)1);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_DISABLE, 0, 0, (void *)2);
	kqt_write(p[1], 1);
	kqt_quiet(kq, 30, "disabled");
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ENABLE, 0, 0, (void *)3);
	cr_assert_eq(kqt_get(kq, "enabled again").udata, (void *)3);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_DISABLE, 0, 0, NULL);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ENABLE, 0, 0, NULL);
	cr_assert_null(kqt_get(kq, "enabled with no udata").udata);
}

KQT(flags, keepudata_keeps_udata)
{
	int kq = kqt_kqueue(), p[2];

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, (void *)1);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD | EV_KEEPUDATA, 0, 0, (void *)2);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_DISABLE | EV_KEEPUDATA, 0, 0, NULL);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ENABLE | EV_KEEPUDATA, 0, 0, NULL);
	kqt_write(p[1], 1);
	cr_assert_eq(kqt_get(kq, "kept").udata, (void *)1);
}

KQT(flags, add_twice_is_one_kevent)
{
	int kq = kqt_kqueue(), p[2];
	struct kevent ev[2];

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_write(p[1], 1);
	cr_assert_eq(kqt_wait(kq, ev, 2, 10000), 1);
}

KQT(flags, add_again_replaces_udata)
{
	int kq = kqt_kqueue(), p[2];

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, (void *)1);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, (void *)2);
	kqt_write(p[1], 1);
	cr_assert_eq(kqt_get(kq, "pipe").udata, (void *)2);
}

KQT(flags, add_again_reenables)
{
	int kq = kqt_kqueue(), p[2];

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD | EV_DISABLE, 0, 0, NULL);
	kqt_write(p[1], 1);
	kqt_quiet(kq, 50, "disabled");
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_get(kq, "EV_ADD enabled it");
}

KQT(flags, disable_suppresses_and_enable_reports)
{
	int kq = kqt_kqueue(), p[2];

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_DISABLE, 0, 0, NULL);
	kqt_write(p[1], 1);
	kqt_quiet(kq, 50, "disabled");
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ENABLE, 0, 0, NULL);
	cr_assert_eq(kqt_get(kq, "enabled while readable").data, 1);
}

KQT(flags, add_disabled_reports_nothing)
{
	int kq = kqt_kqueue(), p[2];

	kqt_pipe(p);
	kqt_write(p[1], 1);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD | EV_DISABLE, 0, 0, NULL);
	kqt_quiet(kq, 50, "added disabled");
}

KQT(flags, delete_drops_a_pending_event)
{
	int kq = kqt_kqueue(), p[2];

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_write(p[1], 1);
	usleep(20000);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_DELETE, 0, 0, NULL);
	kqt_quiet(kq, 50, "deleted");
}

KQT(flags, level_triggered_by_default)
{
	int kq = kqt_kqueue(), p[2];

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_write(p[1], 4);
	cr_assert_eq(kqt_get(kq, "first").data, 4);
	cr_assert_eq(kqt_get(kq, "again: still readable").data, 4);
	kqt_drain(p[0]);
	kqt_quiet(kq, 50, "drained");
}

KQT(flags, ready_at_add_is_reported)
{
	int kq = kqt_kqueue(), p[2];

	kqt_pipe(p);
	kqt_write(p[1], 5);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	cr_assert_eq(kqt_get(kq, "ready before EV_ADD").data, 5);
	cr_assert_eq(kqt_get(kq, "and again (level)").data, 5);
}

KQT(flags, ready_at_add_then_drained_then_new_data)
{
	int kq = kqt_kqueue(), p[2];

	kqt_pipe(p);
	kqt_write(p[1], 5);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_get(kq, "ready at add");
	kqt_drain(p[0]);
	kqt_quiet(kq, 50, "drained");
	kqt_write(p[1], 2);
	cr_assert_eq(kqt_get(kq, "new data wakes the wait").data, 2);
}

KQT(flags, clear_reports_once_per_change)
{
	int kq = kqt_kqueue(), p[2];

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD | EV_CLEAR, 0, 0, NULL);
	kqt_write(p[1], 2);
	struct kevent e = kqt_get(kq, "first");
	cr_assert_eq(e.data, 2);
	cr_assert_eq(e.flags, EV_ADD | EV_CLEAR);
	kqt_quiet(kq, 50, "EV_CLEAR: not again without new data");
	kqt_write(p[1], 1);
	cr_assert_eq(kqt_get(kq, "new data").data, 3);
}

KQT(flags, clear_ready_at_add_reports_once)
{
	int kq = kqt_kqueue(), p[2];

	kqt_pipe(p);
	kqt_write(p[1], 2);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD | EV_CLEAR, 0, 0, NULL);
	cr_assert_eq(kqt_get(kq, "ready at add").data, 2);
	kqt_quiet(kq, 50, "not again");
	kqt_write(p[1], 1);
	cr_assert_eq(kqt_get(kq, "new data").data, 3);
}

KQT(flags, clear_ready_at_add_partial_read_is_quiet)
{
	int kq = kqt_kqueue(), p[2];
	char c;

	kqt_pipe(p);
	kqt_write(p[1], 2);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD | EV_CLEAR, 0, 0, NULL);
	cr_assert_eq(kqt_get(kq, "ready at add").data, 2);
	cr_assert_eq(read(p[0], &c, 1), 1);
	kqt_quiet(kq, 50, "a read is no new data");
	kqt_write(p[1], 1);
	cr_assert_eq(kqt_get(kq, "new data").data, 2);
}

KQT(flags, level_events_take_turns_with_a_small_eventlist)
{
	int kq = kqt_kqueue(), p[2][2];
	struct kevent e;
	int seen[2] = { 0, 0 };

	for (int i = 0; i < 2; i++) {
		kqt_pipe(p[i]);
		kqt_write(p[i][1], 1);
		kqt_ok(kq, (uintptr_t)p[i][0], EVFILT_READ, EV_ADD, 0, 0, (void *)(intptr_t)i);
	}
	for (int k = 0; k < 4; k++) {
		cr_assert_eq(kqt_wait(kq, &e, 1, 10000), 1);
		seen[(intptr_t)e.udata]++;
	}
	cr_assert(seen[0] > 0 && seen[1] > 0, "both reported: %d and %d", seen[0], seen[1]);
}

KQT(flags, oneshot_fires_once_and_is_deleted)
{
	int kq = kqt_kqueue(), p[2];

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD | EV_ONESHOT, 0, 0, NULL);
	kqt_write(p[1], 1);
	cr_assert_eq(kqt_get(kq, "once").flags, EV_ADD | EV_ONESHOT);
	kqt_quiet(kq, 50, "deleted");
	cr_assert_eq(kqt_change(kq, (uintptr_t)p[0], EVFILT_READ, EV_DELETE, 0, 0, NULL), -ENOENT);
}

KQT(flags, dispatch_disables_after_delivery)
{
	int kq = kqt_kqueue(), p[2];

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD | EV_DISPATCH, 0, 0, NULL);
	kqt_write(p[1], 1);
	cr_assert_eq(kqt_get(kq, "once").flags, EV_ADD | EV_DISPATCH);
	kqt_quiet(kq, 50, "disabled after delivery");
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ENABLE, 0, 0, NULL);
	kqt_get(kq, "enabled again, still readable");
	/* still registered: EV_DELETE succeeds */
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_DELETE, 0, 0, NULL);
}

KQT(flags, dispatch_with_clear)
{
	int kq = kqt_kqueue(), p[2];

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD | EV_DISPATCH | EV_CLEAR, 0, 0, NULL);
	kqt_write(p[1], 1);
	kqt_get(kq, "first");
	kqt_write(p[1], 1);
	kqt_quiet(kq, 50, "disabled");
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ENABLE, 0, 0, NULL);
	cr_assert_eq(kqt_get(kq, "enabled: data while disabled").data, 2);
}


/* Wait up to 10 s for the kqueue fd to poll readable (a device report is queued). */
static void readable_soon(int kq, const char *what)
{
	struct pollfd pf = { .fd = kq, .events = POLLIN };

	cr_assert_eq(poll(&pf, 1, 10000), 1, "%s: the kqueue fd never polled readable", what);
}

/*
 * FreeBSD keeps a level knote queued after its delivery until the next
 * scan: with its data left unread the kqueue fd polls readable, and a
 * program that polls the kqueue fd before each kevent() call (a kqueue
 * nested in another event loop) sees it again.  Drained, the next call
 * reports nothing and the fd is quiet after it.
 */
KQT(flags, level_delivered_keeps_the_kqueue_fd_readable)
{
	int kq = kqt_kqueue(), p[2];
	struct pollfd pf = { .fd = kq, .events = POLLIN };

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, NULL);
	kqt_write(p[1], 5);
	cr_assert_eq(kqt_get(kq, "first").data, 5);
	readable_soon(kq, "delivered, 5 bytes unread");
	cr_assert_eq(kqt_get(kq, "again").data, 5);
	readable_soon(kq, "delivered again, still unread");
	kqt_drain(p[0]);
	kqt_quiet(kq, 50, "drained");
	cr_assert_eq(poll(&pf, 1, 100), 0, "drained and collected, yet readable: %#x", pf.revents);
}

/*
 * A report the front takes and does not deliver (here the pipe read empty
 * behind its back) must leave the knote armed: on a revision-4 queue the
 * device disarmed the kevent when it reported it (abi.md D65), and the
 * front re-arms it, so the next write is reported.
 */
KQT(flags, dispatch_report_not_delivered_stays_armed)
{
	int kq = kqt_kqueue(), p[2];

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD | EV_DISPATCH, 0, 0, NULL);
	kqt_write(p[1], 1);
	readable_soon(kq, "the write's report");
	kqt_drain(p[0]);
	kqt_quiet(kq, 50, "read before the call");
	kqt_write(p[1], 3);
	cr_assert_eq(kqt_get(kq, "the next write").data, 3);
}

/*
 * FreeBSD queues no activation of a disabled knote, so the kqueue fd does
 * not poll readable for it.  Revision 4 only: there the device holds what
 * comes to a dispatched kevent (D65); below, the device still reports the
 * pipe's edges and the front drops them at the next call.
 */
KQT(flags, dispatch_disabled_knote_leaves_the_kqueue_fd_quiet)
{
	int kq = kqt_kqueue(), p[2];
	struct pollfd pf = { .fd = kq, .events = POLLIN };

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD | EV_DISPATCH, 0, 0, NULL);
	kqt_write(p[1], 1);
	cr_assert_eq(kqt_get(kq, "first").data, 1);
	kqt_write(p[1], 1);
	if (kqt_revision(kq, NULL) >= 4)
		cr_assert_eq(poll(&pf, 1, 200), 0, "readable for a dispatched knote: %#x",
			     pf.revents);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ENABLE, 0, 0, NULL);
	readable_soon(kq, "enabled with data unread");
	cr_assert_eq(kqt_get(kq, "enabled").data, 2);
	kqt_quiet(kq, 50, "dispatched again");
}

struct dispatch_worker {
	int kq;
	atomic_int *got;
	atomic_bool *stop;
};

static void *dispatch_work(void *arg)
{
	struct dispatch_worker *w = arg;
	struct timespec ts = { 0, 20000000 };
	struct kevent e;

	while (!atomic_load(w->stop))
		if (kevent(w->kq, NULL, 0, &e, 1, &ts) == 1)
			atomic_fetch_add(w->got, 1);
	return NULL;
}

/* Wait up to 10 s for *got to reach n, then a while more for one too many. */
static int count_settles(atomic_int *got, int n)
{
	for (int i = 0; i < 1000 && atomic_load(got) < n; i++)
		usleep(10000);
	usleep(200000);
	return atomic_load(got);
}

/*
 * What EV_DISPATCH is for: one worker per event.  Two threads wait in
 * kevent() on one kqueue; a level knote with data left unread is delivered
 * once per enable, to one of them.
 */
KQT(flags, dispatch_delivers_once_to_one_of_two_threads)
{
	int kq = kqt_kqueue(), p[2];
	atomic_int got = 0;
	atomic_bool stop = false;
	struct dispatch_worker w = { kq, &got, &stop };
	pthread_t t[2];

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD | EV_DISPATCH, 0, 0, NULL);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, dispatch_work, &w), 0);
	kqt_write(p[1], 1);
	cr_assert_eq(count_settles(&got, 1), 1, "deliveries before EV_ENABLE");
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ENABLE, 0, 0, NULL);
	cr_assert_eq(count_settles(&got, 2), 2, "deliveries after one EV_ENABLE");
	kqt_write(p[1], 1);
	cr_assert_eq(count_settles(&got, 2), 2, "a write to a dispatched knote");
	atomic_store(&stop, true);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

KQT(flags, receipt_flag_comes_back_with_events)
{
	int kq = kqt_kqueue(), p[2];
	struct kevent c, e;

	kqt_pipe(p);
	EV_SET(&c, p[0], EVFILT_READ, EV_ADD | EV_RECEIPT, 0, 0, NULL);
	cr_assert_eq(kevent(kq, &c, 1, &e, 1, NULL), 1);
	kqt_write(p[1], 1);
	cr_assert_eq(kqt_get(kq, "pipe").flags, EV_ADD | EV_RECEIPT);
}

KQT(flags, delete_and_add_in_one_changelist)
{
	int kq = kqt_kqueue(), p[2];
	struct kevent c[2];

	kqt_pipe(p);
	kqt_ok(kq, (uintptr_t)p[0], EVFILT_READ, EV_ADD, 0, 0, (void *)1);
	EV_SET(&c[0], p[0], EVFILT_READ, EV_DELETE, 0, 0, NULL);
	EV_SET(&c[1], p[0], EVFILT_READ, EV_ADD, 0, 0, (void *)2);
	cr_assert_eq(kevent(kq, c, 2, NULL, 0, NULL), 0);
	kqt_write(p[1], 1);
	cr_assert_eq(kqt_get(kq, "re-added").udata, (void *)2);
}
