// SPDX-License-Identifier: GPL-2.0
/* tid -> tgid mapping and the file-table check (design.md B2, origins/caller.c). */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include "caller.h"
#include "kc-caller.h"

struct thr {
	pthread_barrier_t ready, done;
	pid_t tid;
	int unshare_files;
};

static void *thr_main(void *p)
{
	struct thr *t = p;

	t->tid = gettid();
	if (t->unshare_files && unshare(CLONE_FILES))
		t->tid = -errno;
	pthread_barrier_wait(&t->ready);
	pthread_barrier_wait(&t->done);
	return NULL;
}

static pthread_t thr_start(struct thr *t, int unshare_files)
{
	pthread_t th;

	t->unshare_files = unshare_files;
	pthread_barrier_init(&t->ready, NULL, 2);
	pthread_barrier_init(&t->done, NULL, 2);
	cr_assert_eq(pthread_create(&th, NULL, thr_main, t), 0);
	pthread_barrier_wait(&t->ready);
	cr_assert_gt(t->tid, 0, "thread setup failed: %d", t->tid);
	return th;
}

static void thr_stop(struct thr *t, pthread_t th)
{
	pthread_barrier_wait(&t->done);
	pthread_join(th, NULL);
}

Test(caller, leader_maps_to_itself)
{
	cr_assert_eq(kcaller_tgid_of(getpid()), getpid());
}

Test(caller, thread_maps_to_leader)
{
	struct thr t;
	pthread_t th = thr_start(&t, 0);

	cr_assert_neq(t.tid, getpid());
	cr_assert_eq(kcaller_tgid_of(t.tid), getpid());
	cr_assert_eq(kcaller_same_files(getpid(), t.tid), 1);
	thr_stop(&t, th);
}

Test(caller, thread_with_own_file_table_is_told_apart)
{
	struct thr t;
	pthread_t th = thr_start(&t, 1);

	cr_assert_eq(kcaller_tgid_of(t.tid), getpid());
	cr_assert_eq(kcaller_same_files(getpid(), t.tid), 0);
	{
		/* B2: such a thread's fds are not its group's: no fd origins. */
		struct kcaller c = { .tid = t.tid };

		cr_assert_eq(kcaller_files_tgid(&c), -EPERM);
		c.tid = getpid();
		cr_assert_eq(kcaller_files_tgid(&c), getpid());
		c.tid = 0;
		cr_assert_eq(kcaller_files_tgid(&c), -EPERM, "invisible in our pid namespace");
	}
	thr_stop(&t, th);
}

Test(caller, gone_or_invalid)
{
	pid_t child = fork();

	if (child == 0)
		_exit(0);
	cr_assert_gt(child, 0);
	waitpid(child, NULL, 0);
	/* Reaped: the id is free (reuse within the test is not plausible). */
	cr_assert_eq(kcaller_tgid_of(child), -ESRCH);
	cr_assert_eq(kcaller_tgid_of(0), -ESRCH);
	cr_assert_eq(kcaller_tgid_of(-5), -ESRCH);
}

Test(caller, fill)
{
	struct kcaller c;
	struct thr t;
	pthread_t th = thr_start(&t, 0);

	kc_caller_fill(&c, 1000, 100, t.tid);
	cr_assert_eq(c.tid, t.tid);
	cr_assert_eq(c.tgid, 0, "tgid is looked up only where needed");
	cr_assert_eq(kcaller_files_tgid(&c), getpid());
	cr_assert_eq(c.uid, 1000);
	cr_assert_eq(c.gid, 100);
	thr_stop(&t, th);

	/* pid 0: the caller's pid namespace is not visible to us. */
	kc_caller_fill(&c, 1000, 100, 0);
	cr_assert_eq(c.tid, 0);
	cr_assert_eq(c.tgid, 0);
	cr_assert_eq(kcaller_files_tgid(&c), -EPERM, "B2: no fd origins");
}
