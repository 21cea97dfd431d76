// SPDX-License-Identifier: GPL-2.0
/*
 * The origins through the real core: kqueue_open + kdisp_plan/kdisp_execute
 * (the same ADD/GET_EVENTS path the CUSE daemon drives), user memory = this
 * process's own memory, client fds = this process's or a child's.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <criterion/criterion.h>

#include "kcore.h"
#include "origins.h"
#include "pairs.h"

#define NQ	3
#define WAIT_NS	(5ull * 1000000000ull)	/* bounds a wait, never asserted on */

static struct kcore *core;
static struct kqueue *q[NQ];
static void *ring[NQ];
static struct kcaller me;
static unsigned int expiry_cap;	/* KEVENT_LIMIT_EXPIRIES of the next setup() */

static int own_read(void *ctx, void *dst, __u64 uaddr, size_t len)
{
	memcpy(dst, (void *)(uintptr_t)uaddr, len);
	return 0;
}

static int own_write(void *ctx, __u64 uaddr, const void *src, size_t len)
{
	memcpy((void *)(uintptr_t)uaddr, src, len);
	return 0;
}

static const struct kuaccess own_mem = { .read = own_read, .write = own_write };

static void setup(void)
{
	struct korigins_config ocfg = { 0 };
	struct kcore_config cfg = { .backend = KEVENT_BACKEND_CORE };
	int i;

	signal(SIGPIPE, SIG_IGN);
	cr_assert_eq(korigins_start(&ocfg), 0);
	cfg.caps[KEVENT_LIMIT_EXPIRIES] = expiry_cap;
	cr_assert_eq(kcore_new(&cfg, &core), 0);
	me = (struct kcaller){ (pid_t)syscall(SYS_gettid), getpid(), getuid(), getgid() };
	for (i = 0; i < NQ; i++) {
		ring[i] = aligned_alloc(4096, KEVENT_RING_SIZE);
		cr_assert(ring[i]);
		memset(ring[i], 0, KEVENT_RING_SIZE);
		cr_assert_eq(kqueue_open(core, &me, ring[i], &q[i]), 0);
	}
}

static void teardown(void)
{
	int i;

	for (i = 0; i < NQ; i++) {
		if (q[i])
			kqueue_release(q[i]);
		q[i] = NULL;
		free(ring[i]);
	}
	if (core)
		kcore_free(core);
	core = NULL;
	korigins_stop();
}

TestSuite(e2e, .init = setup, .fini = teardown, .timeout = 120);

static int ioctl_q(struct kqueue *kq, unsigned int cmd, const void *arg, size_t len)
{
	struct kdisp_plan plan;
	int ret = kdisp_plan(kq, cmd, arg, len, &me, &plan);

	if (ret)
		return ret;
	return kdisp_execute(kq, &plan, &me, &own_mem, NULL, NULL, NULL);
}

static int ctl(struct kqueue *kq, __u32 cmd, struct ukevent *uk, __u32 num)
{
	struct kevent_ctl_arg a = { .cmd = cmd, .num = num, .events = (uintptr_t)uk };

	return ioctl_q(kq, KEVENT_IOC_CTL, &a, sizeof(a));
}

static int get(struct kqueue *kq, __u32 min_nr, __u32 max_nr, __u64 timeout_ns,
	       struct ukevent *out)
{
	struct kevent_get_events_arg a = {
		.min_nr = min_nr, .max_nr = max_nr, .timeout_ns = timeout_ns,
		.events = (uintptr_t)out,
	};

	return ioctl_q(kq, KEVENT_IOC_GET_EVENTS, &a, sizeof(a));
}

static struct ukevent ev(__u32 type, __u32 id, __u32 event, __u32 req, __u32 cookie)
{
	struct ukevent uk = { .id.raw = { id, 0 }, .type = type, .event = event,
			      .req_flags = req };

	uk.user[0] = cookie;
	return uk;
}

static void assert_no_kevents(void)
{
	struct kcore_counters c;
	struct korigins_stats st;

	kcore_counters(core, &c);
	korigins_sync_closer();
	korigins_stats(&st);
	cr_expect_eq(c.kevents, 0, "kevents left: %llu", (unsigned long long)c.kevents);
	cr_expect_eq(st.timers + st.fd_watches + st.inode_watches, 0, "origin state left");
	cr_expect_eq(st.closer_pending, 0);
}

Test(e2e, timer_periodic_through_get_events)
{
	struct ukevent uk = ev(KEVENT_TIMER, 5, KEVENT_TIMER_FIRED, 0, 7), out[4];
	__u32 prev = 0;
	int i;

	cr_assert_eq(ctl(q[0], KEVENT_CTL_ADD, &uk, 1), 0, "a timer is never ready at ADD");
	for (i = 0; i < 3; i++) {
		cr_assert_eq(get(q[0], 1, 4, WAIT_NS, out), 1);
		cr_expect_eq(out[0].user[0], 7);
		cr_expect_eq(out[0].ret_flags & KEVENT_RET_BROKEN, 0);
		if (i)
			cr_expect_geq((__u32)(out[0].ret_data[0] - prev), 5);
		prev = out[0].ret_data[0];
	}
	cr_expect_eq(ctl(q[0], KEVENT_CTL_REMOVE, &uk, 1), 0);
	assert_no_kevents();
}

Test(e2e, timer_invalid_fails_the_entry)
{
	struct ukevent uk[2] = {
		ev(KEVENT_TIMER, 0, KEVENT_TIMER_FIRED, 0, 1),
		ev(KEVENT_TIMER, 10, 0, 0, 2),
	};

	cr_assert_eq(ctl(q[0], KEVENT_CTL_ADD, uk, 2), 2);
	cr_expect_eq(uk[0].ret_flags, KEVENT_RET_BROKEN | KEVENT_RET_DONE);
	cr_expect_eq((int)uk[0].ret_data[1], -EINVAL);
	cr_expect_eq(uk[1].ret_flags, KEVENT_RET_BROKEN | KEVENT_RET_DONE);
	assert_no_kevents();
}

Test(e2e, naio_and_aio_have_no_origin)
{
	struct ukevent uk[2] = {
		ev(KEVENT_NAIO, 0, 1, 0, 1),
		ev(KEVENT_AIO, 0, KEVENT_AIO_BIO, 0, 2),
	};

	cr_assert_eq(ctl(q[0], KEVENT_CTL_ADD, uk, 2), 2);
	cr_expect_eq((int)uk[0].ret_data[1], -EINVAL);
	cr_expect_eq((int)uk[1].ret_data[1], -EINVAL);
}

Test(e2e, poll_ready_at_add_and_edge_like_refire)
{
	struct ukevent uk, out[2];
	int p[2];

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(write(p[1], "x", 1), 1);
	uk = ev(KEVENT_POLL, (__u32)p[0], KEVENT_POLL_POLLIN, 0, 1);
	cr_assert_eq(ctl(q[1], KEVENT_CTL_ADD, &uk, 1), 1, "ready at ADD");
	cr_expect_eq(uk.ret_data[0], KEVENT_POLL_POLLIN);
	cr_expect(uk.ret_flags & KEVENT_RET_DONE);
	cr_assert_eq(read(p[0], out, 1), 1);

	uk = ev(KEVENT_POLL, (__u32)p[0], KEVENT_POLL_POLLIN, 0, 2);
	cr_assert_eq(ctl(q[1], KEVENT_CTL_ADD, &uk, 1), 0);
	cr_assert_eq(write(p[1], "x", 1), 1);
	cr_assert_eq(get(q[1], 1, 2, WAIT_NS, out), 1);
	cr_expect_eq(out[0].user[0], 2);
	cr_expect_eq(out[0].ret_data[0], KEVENT_POLL_POLLIN);
	/* A6: still readable, no new activity: nothing within 50 ms. */
	cr_expect_eq(get(q[1], 1, 2, 50000000ull, out), 0);
	cr_assert_eq(write(p[1], "y", 1), 1);
	cr_expect_eq(get(q[1], 1, 2, WAIT_NS, out), 1, "new activity re-fires");
	cr_expect_eq(ctl(q[1], KEVENT_CTL_REMOVE, &uk, 1), 0);
	assert_no_kevents();
	close(p[0]);
	close(p[1]);
}

Test(e2e, poll_bad_fd_is_broken_ebadf)
{
	struct ukevent uk = ev(KEVENT_POLL, 987654, KEVENT_POLL_POLLIN, 0, 1);

	cr_assert_eq(ctl(q[0], KEVENT_CTL_ADD, &uk, 1), 1);
	cr_expect_eq(uk.ret_flags, KEVENT_RET_BROKEN | KEVENT_RET_DONE);
	cr_expect_eq((int)uk.ret_data[1], -EBADF);
}

/* Drains every queue until want events came; each cookie exactly once. */
static void drain_all(unsigned int want, unsigned char *seen)
{
	static struct ukevent out[KEVENT_MAX_EVENTS];
	unsigned int got = 0, rounds = 0;
	int i, n, j;

	while (got < want && rounds++ < 10000) {
		for (i = 0; i < NQ; i++) {
			n = get(q[i], 0, KEVENT_MAX_EVENTS - 1, 0, out);
			cr_assert_geq(n, 0);
			for (j = 0; j < n; j++) {
				cr_assert_lt(out[j].user[0], want);
				cr_assert_eq(seen[out[j].user[0]]++, 0, "event %u twice",
					     out[j].user[0]);
			}
			got += (unsigned int)n;
		}
		if (got < want)
			usleep(2000);	/* not a GET_EVENTS: that would take events */
	}
	cr_assert_eq(got, want, "events lost: %u of %u", got, want);
}

Test(e2e, ten_thousand_timers_over_three_queues)
{
	enum { N = 10000, PER_Q = (N + NQ - 1) / NQ };
	struct ukevent *uk = calloc(N, sizeof(*uk));
	unsigned char *seen = calloc(N, 1);
	int i;

	cr_assert(uk && seen);
	for (i = 0; i < N; i++)
		uk[i] = ev(KEVENT_TIMER, 1 + (__u32)i % 50, KEVENT_TIMER_FIRED,
			   KEVENT_REQ_ONESHOT, (__u32)i);
	for (i = 0; i < NQ; i++) {
		__u32 num = i == NQ - 1 ? N - PER_Q * (NQ - 1) : PER_Q;

		cr_assert_eq(ctl(q[i], KEVENT_CTL_ADD, uk + i * PER_Q, num), 0);
	}
	drain_all(N, seen);
	assert_no_kevents();
	free(uk);
	free(seen);
}

/* ADD with the child as the caller: what the daemon does for a request. */
static int ctl_as(struct kqueue *kq, pid_t pid, struct ukevent *uk, __u32 num)
{
	struct kevent_ctl_arg a = { .cmd = KEVENT_CTL_ADD, .num = num, .events = (uintptr_t)uk };
	struct kcaller who = { pid, pid, getuid(), getgid() };
	struct kdisp_plan plan;
	int ret = kdisp_plan(kq, KEVENT_IOC_CTL, &a, sizeof(a), &who, &plan);

	return ret ? ret : kdisp_execute(kq, &plan, &who, &own_mem, NULL, NULL, NULL);
}

Test(e2e, ten_thousand_socket_pairs_over_three_queues)
{
	struct ukevent *uk = calloc(PAIRS, sizeof(*uk));
	unsigned char *seen = calloc(PAIRS, 1);
	int *fds = calloc(PAIRS, sizeof(*fds)), ctlfd[CHILDREN][2], c, i;
	pid_t pid[CHILDREN];
	struct rlimit rl;
	char w;

	cr_assert(uk && seen && fds);
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < PAIRS + 200) {
		rl.rlim_cur = PAIRS + 200;
		if (rl.rlim_max < rl.rlim_cur)
			rl.rlim_max = rl.rlim_cur;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			cr_skip_test("RLIMIT_NOFILE cannot be raised to %d: %s",
				     PAIRS + 200, strerror(errno));
	}
	for (c = 0; c < CHILDREN; c++) {
		cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, ctlfd[c]), 0);
		pid[c] = fork();
		cr_assert_geq(pid[c], 0);
		if (pid[c] == 0) {
			for (i = 0; i <= c; i++)
				close(ctlfd[i][0]);
			pair_child(ctlfd[c][1]);
		}
		close(ctlfd[c][1]);
		cr_assert_eq(read_all(ctlfd[c][0], fds + c * PER_CHILD, PER_CHILD * sizeof(int)), 0);
	}
	/* Pair i goes to queue i % NQ; one ADD per (child, queue) batch. */
	for (c = 0; c < CHILDREN; c++) {
		for (i = 0; i < NQ; i++) {
			struct ukevent *batch = uk + c * PER_CHILD;
			__u32 n = 0;
			int j;

			for (j = 0; j < PER_CHILD; j++) {
				int idx = c * PER_CHILD + j;

				if (idx % NQ != i)
					continue;
				batch[n++] = ev(KEVENT_SOCKET, (__u32)fds[idx],
						KEVENT_SOCKET_RECV, KEVENT_REQ_ONESHOT, (__u32)idx);
			}
			cr_assert_eq(ctl_as(q[i], pid[c], batch, n), 0, "child %d queue %d", c, i);
		}
	}
	for (c = 0; c < CHILDREN; c++) {
		cr_assert_eq(write(ctlfd[c][0], "g", 1), 1);
		cr_assert_eq(read(ctlfd[c][0], &w, 1), 1, "child %d could not write", c);
	}
	drain_all(PAIRS, seen);
	assert_no_kevents();
	for (c = 0; c < CHILDREN; c++) {
		close(ctlfd[c][0]);
		waitpid(pid[c], NULL, 0);
	}
	free(uk);
	free(seen);
	free(fds);
}

/* REMOVE of 1 ms timers while the reactor fires them: nothing leaks. */
Test(e2e, remove_races_firing_timers)
{
	enum { N = 300, ROUNDS = 20 };
	static struct ukevent uk[N], out[N];
	int r, i;

	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < N; i++)
			uk[i] = ev(KEVENT_TIMER, 1, KEVENT_TIMER_FIRED, 0, (__u32)i);
		cr_assert_eq(ctl(q[2], KEVENT_CTL_ADD, uk, N), 0);
		get(q[2], 1, N, WAIT_NS, out);
		cr_assert_eq(ctl(q[2], KEVENT_CTL_REMOVE, uk, N), 0);
	}
	assert_no_kevents();
	cr_expect_eq(get(q[2], 0, N, 0, out), 0, "removed kevents are not returned");
}

Test(e2e, inode_create_through_the_core)
{
	char dir[] = "/dev/shm/korigins-e2eXXXXXX", f[64];
	struct ukevent uk, out[2];
	int dfd, fd;

	cr_assert_neq(mkdtemp(dir), NULL);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	cr_assert_geq(dfd, 0);
	uk = ev(KEVENT_INODE, (__u32)dfd, KEVENT_INODE_CREATE, 0, 9);
	cr_assert_eq(ctl(q[0], KEVENT_CTL_ADD, &uk, 1), 0);
	snprintf(f, sizeof(f), "%s/x", dir);
	fd = open(f, O_CREAT | O_WRONLY, 0600);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(get(q[0], 1, 2, WAIT_NS, out), 1);
	cr_expect_eq(out[0].user[0], 9);
	cr_expect_eq(out[0].ret_data[0], KEVENT_INODE_CREATE);
	cr_expect_eq(ctl(q[0], KEVENT_CTL_REMOVE, &uk, 1), 0);
	assert_no_kevents();
	unlink(f);
	rmdir(dir);
	close(dfd);
}

/* ---- B7: the per-uid expiry budget ---- */

#define BUDGET		200	/* expiries per second: 20 per 100 ms window */
#define BUDGET_NS	(1000ull * 1000000ull)

static void setup_budget(void)
{
	expiry_cap = BUDGET;
	setup();
}

TestSuite(e2e_budget, .init = setup_budget, .fini = teardown, .timeout = 120);

static int ioctl_by(struct kqueue *kq, const struct kcaller *who, unsigned int cmd,
		    const void *arg, size_t len)
{
	struct kdisp_plan plan;
	int ret = kdisp_plan(kq, cmd, arg, len, who, &plan);

	return ret ? ret : kdisp_execute(kq, &plan, who, &own_mem, NULL, NULL, NULL);
}

static int info_of(struct kqueue *kq, struct kevent_info *info)
{
	struct kdisp_plan plan;
	int ret = kdisp_plan(kq, KEVENT_IOC_INFO, NULL, sizeof(*info), &me, &plan);

	return ret ? ret : kdisp_execute(kq, &plan, &me, &own_mem, info, NULL, NULL);
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* Takes everything ready on kq now; returns how many. */
static unsigned int drain_now(struct kqueue *kq, struct ukevent *out, unsigned int cap)
{
	unsigned int n = 0;
	int got;

	while ((got = get(kq, 0, cap, 0, out)) > 0)
		n += (unsigned int)got;
	cr_assert_geq(got, 0);
	return n;
}

/*
 * 100 periodic 1 ms timers of one uid would expire 100,000 times a second;
 * with a budget of 200 a second that uid gets about 20 per 100 ms window,
 * the rest merge (never an error).  A 20 ms timer of another uid (50 a
 * second, within its own budget) keeps its pace, about 50 in the second:
 * a budget shared between uids would leave it about 1 a window.
 */
Test(e2e_budget, over_budget_expiries_merge_per_uid)
{
	enum { N = 100 };
	struct kcaller other = me;
	struct ukevent uk[N], one = ev(KEVENT_TIMER, 20, KEVENT_TIMER_FIRED, 0, 999), out[N];
	struct kevent_ctl_arg a = { .cmd = KEVENT_CTL_ADD, .num = 1, .events = (uintptr_t)&one };
	struct kevent_info info = { 0 };
	struct korigins_stats st;
	unsigned int mine = 0, theirs = 0, windows;
	__u64 t0, t1;
	int i;

	other.uid = me.uid + 4242;
	for (i = 0; i < N; i++)
		uk[i] = ev(KEVENT_TIMER, 1, KEVENT_TIMER_FIRED, 0, (__u32)i);
	t0 = mono_ns();
	cr_assert_eq(ctl(q[0], KEVENT_CTL_ADD, uk, N), 0);
	cr_assert_eq(ioctl_by(q[1], &other, KEVENT_IOC_CTL, &a, sizeof(a)), 0);
	while (mono_ns() - t0 < BUDGET_NS) {
		usleep(2000);
		mine += drain_now(q[0], out, N);
		theirs += drain_now(q[1], out, N);
	}
	t1 = mono_ns();
	windows = (unsigned int)(t1 / KORIGIN_BUDGET_WINDOW_NS - t0 / KORIGIN_BUDGET_WINDOW_NS) + 1;
	korigins_stats(&st);
	cr_expect_leq(mine, windows * (BUDGET / 10), "%u expiries in %u windows: over the budget",
		      mine, windows);
	cr_expect_geq(mine, BUDGET / 10, "the budget granted nothing (%u)", mine);
	cr_expect_gt(st.timer_deferred, 0, "no expiry was merged by the budget");
	cr_expect_geq(theirs, 25, "another uid's 20 ms timer fired %u times in 1 s", theirs);
	cr_assert_eq(info_of(q[0], &info), 0);
	cr_expect_eq(info.limits[KEVENT_LIMIT_EXPIRIES].cap, BUDGET);
	cr_expect_leq(info.limits[KEVENT_LIMIT_EXPIRIES].used, BUDGET);
	for (i = 0; i < N; i++)
		cr_expect_eq(ctl(q[0], KEVENT_CTL_REMOVE, &uk[i], 1), 0);
	cr_expect_eq(ioctl_by(q[1], &other, KEVENT_IOC_CTL,
			      &(struct kevent_ctl_arg){ .cmd = KEVENT_CTL_REMOVE, .num = 1,
							.events = (uintptr_t)&one },
			      sizeof(a)), 0);
	assert_no_kevents();
}
