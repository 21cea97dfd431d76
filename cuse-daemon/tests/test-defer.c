// SPDX-License-Identifier: GPL-2.0
/* Per-uid lanes: a blocked uid does not hold up another; stop drains. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "kc-defer.h"

static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static atomic_int ran_a, ran_b;

static void blocked_job(void *arg)
{
	pthread_mutex_lock(&gate);	/* held by the test: this lane stalls */
	pthread_mutex_unlock(&gate);
	atomic_fetch_add(&ran_a, 1);
}

static void quick_job(void *arg)
{
	atomic_fetch_add((atomic_int *)arg, 1);
}

Test(defer, one_stalled_uid_does_not_stall_another)
{
	kc_defer_init();
	pthread_mutex_lock(&gate);
	cr_assert_eq(kc_defer(1000, blocked_job, NULL), 0);
	cr_assert_eq(kc_defer(1000, quick_job, &ran_a), 0);	/* behind the stalled one */
	cr_assert_eq(kc_defer(1001, quick_job, &ran_b), 0);
	/* uid 1001's job completes while uid 1000's lane is stuck (no deadline: it must). */
	while (atomic_load(&ran_b) == 0)
		usleep(1000);
	cr_assert_eq(atomic_load(&ran_a), 0);
	cr_assert_eq(kc_defer_lanes(), 2);
	pthread_mutex_unlock(&gate);
	kc_defer_stop();
	/* stop ran everything that was queued */
	cr_assert_eq(atomic_load(&ran_a), 2);
	cr_assert_eq(kc_defer_lanes(), 0);
}

Test(defer, refused_after_stop)
{
	atomic_int n = 0;

	kc_defer_init();
	cr_assert_eq(kc_defer(5, quick_job, &n), 0);
	kc_defer_stop();
	cr_assert_eq(atomic_load(&n), 1);
	cr_assert_lt(kc_defer(5, quick_job, &n), 0);
	cr_assert_eq(atomic_load(&n), 1);
}

static sigset_t lane_mask;
static atomic_int masked;

static void mask_job(void *arg)
{
	pthread_sigmask(SIG_BLOCK, NULL, &lane_mask);
	atomic_store(&masked, 1);
}

/* design.md B3: a process-directed SIGTERM must reach the daemon's own threads. */
Test(defer, lanes_block_every_signal)
{
	sigset_t none;

	sigemptyset(&none);
	pthread_sigmask(SIG_SETMASK, &none, NULL);
	kc_defer_init();
	cr_assert_eq(kc_defer(7, mask_job, NULL), 0);
	kc_defer_stop();
	cr_assert_eq(atomic_load(&masked), 1);
	cr_assert(sigismember(&lane_mask, SIGTERM));
	cr_assert(sigismember(&lane_mask, SIGINT));
	cr_assert(sigismember(&lane_mask, SIGHUP));
	cr_assert(sigismember(&lane_mask, SIGUSR1));
	/* The caller's own mask is left as it was. */
	pthread_sigmask(SIG_BLOCK, NULL, &none);
	cr_assert(!sigismember(&none, SIGTERM));
}
