// SPDX-License-Identifier: GPL-2.0
/*
 * The reactor's life (origins.h): start and stop may be repeated, a second
 * start, an unknown flag and korigins_run() with a reactor thread or with
 * none running are refused; korigins_drain() (KEVENT_IOC_DRAIN) returns only
 * once a pending source event has fired, with and without a reactor thread.
 */
#include <errno.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "origins.h"
#include "recorder.h"

Test(reactor, start_stop_contract)
{
	struct korigins_config bad = { .flags = 0x80 };

	cr_assert_eq(korigins_run(0), -ENODEV, "no reactor yet");
	cr_assert_eq(korigins_start(&bad), -EINVAL, "unknown flag");
	cr_assert_eq(korigins_start(NULL), 0, "NULL: the defaults, with a thread");
	cr_assert_eq(korigins_start(NULL), -EBUSY, "already running");
	cr_assert_eq(korigins_run(0), -EBUSY, "the thread runs the rounds");
	korigins_stop();
	korigins_stop();	/* a second stop is a no-op */
	korigins_drain();	/* and so is a drain with nothing running */
	cr_assert_eq(korigins_run(0), -ENODEV, "stopped");
	cr_assert_eq(korigins_start(NULL), 0, "start again after a stop");
	korigins_stop();
}

/* A pipe written before the drain: its POLL kevent has fired when drain returns. */
static void drained_fire(unsigned int flags)
{
	struct ukevent uk = { .type = KEVENT_POLL, .event = KEVENT_POLL_POLLIN };
	struct kcaller self = rec_self();
	struct korigin_result res;
	struct kitem k;
	int p[2];

	rec_setup(flags);
	cr_assert_eq(pipe(p), 0);
	uk.id.raw[0] = (__u32)p[0];
	cr_assert_eq(rec_add(&k, &uk, &self, &res), 0, "nothing to read: registered");
	cr_assert_eq(rec_fires(&k), 0);
	cr_assert_eq(write(p[1], "x", 1), 1);
	korigins_drain();
	cr_assert_eq(rec_fires(&k), 1, "the write was handled before drain returned");
	rec_remove(&k);
	close(p[0]);
	close(p[1]);
	rec_teardown();
}

Test(reactor, drain_with_thread)
{
	drained_fire(0);
}

Test(reactor, drain_without_thread)
{
	drained_fire(KORIGINS_NO_THREAD);
	cr_assert_eq(korigins_run(0), -ENODEV, "stopped by the teardown");
}
