// SPDX-License-Identifier: GPL-2.0
/*
 * Scale benchmark of the core:
 *  1. memory per registered kevent: 1,000,090 kevents over 245 queues
 *     (4082 each), RSS growth / count, with an origin that keeps no state
 *     (the core's own cost; target <= 256 bytes);
 *  2. cost of ADD+REMOVE of one kevent at 1 thousand vs 1 million
 *     registered kevents of the same uid (two cores, measured interleaved,
 *     median of 5; target: within 1.5x);
 *  3. 1,000 queues x 1,000 kevents: heap bytes per kevent, batched ADD (1,000 a
 *     CTL) per kevent, and the teardown (release of every queue) per
 *     kevent and in total.  No target: scale figures for the report.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kcore.h"
#include "test-uaccess.h"
#include "../stats.h"

#define PER_Q	4082
#define NQ_BIG	245
#define RUNS	5
#define OPS	20000

static int null_attach(struct kitem *k, const struct kcaller *c, struct korigin_result *r)
{
	return 0;
}

static void null_detach(struct kitem *k)
{
}

static const struct korigin_ops null_ops = { "null", null_attach, NULL, null_detach };
static const struct kcaller me = { 1, 1, 1000, 1000 };

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long rss_bytes(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f || fscanf(f, "%ld %ld", &pages, &rss) != 2)
		exit(1);
	fclose(f);
	return rss * sysconf(_SC_PAGESIZE);
}

static int ctl(struct kqueue *q, struct ktest_mem *m, __u32 cmd, struct ukevent *uk,
	       unsigned int n)
{
	struct kevent_ctl_arg a = { cmd, n, ktest_mem_addr(m, (size_t)((char *)uk - (char *)m->base)) };
	struct kdisp_plan plan;
	int ret = kdisp_plan(q, KEVENT_IOC_CTL, &a, sizeof(a), &me, &plan);

	return ret ? ret : kdisp_execute(q, &plan, &me, &m->ua, NULL, NULL, NULL);
}

struct world {
	struct kcore *core;
	struct kqueue **qs;
	unsigned int nq;
	struct kqueue *probe;
};

static struct ukevent *arr;
static struct ktest_mem mem;

static void fill(struct kqueue *q, __u64 base, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		memset(&arr[i], 0, sizeof(arr[i]));
		arr[i].id.raw_u64 = base + i;
		arr[i].type = KEVENT_TIMER;
		arr[i].event = KEVENT_TIMER_FIRED;
	}
	if (ctl(q, &mem, KEVENT_CTL_ADD, arr, n) != 0)
		exit(1);
}

static void world_new(struct world *w, unsigned int nq, unsigned int per_q)
{
	struct kcore_config cfg = { .backend = KEVENT_BACKEND_CORE, .deterministic = 1 };
	unsigned int i;

	cfg.origins[KEVENT_TIMER] = &null_ops;
	w->nq = nq;
	w->qs = calloc(nq, sizeof(*w->qs));
	if (!w->qs || kcore_new(&cfg, &w->core))
		exit(1);
	for (i = 0; i < nq; i++) {
		if (kqueue_open(w->core, &me, NULL, &w->qs[i]))
			exit(1);
		fill(w->qs[i], (__u64)i << 32, per_q);
	}
	if (kqueue_open(w->core, &me, NULL, &w->probe))
		exit(1);
}

static void world_free(struct world *w)
{
	unsigned int i;

	for (i = 0; i < w->nq; i++)
		kqueue_release(w->qs[i]);
	kqueue_release(w->probe);
	kcore_free(w->core);
	free(w->qs);
}

/* ns per ADD+REMOVE pair of one kevent on the probe queue. */
static double add_remove_ns(struct world *w)
{
	struct ukevent *uk = &arr[0];
	double t0 = now_s();
	unsigned int i;

	for (i = 0; i < OPS; i++) {
		memset(uk, 0, sizeof(*uk));
		uk->id.raw_u64 = 0xffff0000ull + i;
		uk->type = KEVENT_TIMER;
		uk->event = KEVENT_TIMER_FIRED;
		if (ctl(w->probe, &mem, KEVENT_CTL_ADD, uk, 1) != 0 ||
		    ctl(w->probe, &mem, KEVENT_CTL_REMOVE, uk, 1) != 0 ||
		    uk->ret_flags != KEVENT_RET_DONE)
			exit(1);
	}
	return (now_s() - t0) * 1e9 / OPS;
}

/*
 * Bytes malloc has handed out: the earlier parts freed a million kevents,
 * which malloc keeps, so RSS would not grow here.
 */
static long heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return (long)(mi.uordblks + mi.hblkhd);
}

/* 1,000 queues of 1,000 kevents each: memory, ADD and teardown. */
static void grid_1000(void)
{
	struct world g;
	long before = heap_bytes(), after;
	double t0 = now_s(), t_add, t_free;

	world_new(&g, 1000, 1000);
	t_add = now_s() - t0;
	after = heap_bytes();
	t0 = now_s();
	world_free(&g);
	t_free = now_s() - t0;
	printf("# 1000 queues x 1000 kevents: heap +%ld KiB, %.1f bytes per kevent; "
	       "ADD %.0f ns per kevent (batches of 1000); teardown %.1f ms (%.0f ns per kevent)\n",
	       (after - before) / 1024, (double)(after - before) / 1e6, t_add * 1e9 / 1e6,
	       t_free * 1e3, t_free * 1e9 / 1e6);
}

int main(void)
{
	struct world small, big;
	double s[RUNS], b[RUNS], ratio;
	long before, after;
	unsigned int r;
	int ok = 1;

	arr = calloc(PER_Q, sizeof(*arr));
	if (!arr)
		return 1;
	ktest_mem_init(&mem, arr, PER_Q * sizeof(*arr));
	world_new(&small, 1, 1000);
	before = rss_bytes();
	world_new(&big, NQ_BIG, PER_Q);
	after = rss_bytes();
	printf("# memory: %u kevents over %u queues: RSS +%ld KiB, %.1f bytes per kevent "
	       "(target <= 256)\n", NQ_BIG * PER_Q, NQ_BIG, (after - before) / 1024,
	       (double)(after - before) / (NQ_BIG * PER_Q));
	if ((double)(after - before) / (NQ_BIG * PER_Q) > 256)
		ok = 0;
	for (r = 0; r < RUNS; r++) {
		s[r] = add_remove_ns(&small);
		b[r] = add_remove_ns(&big);
	}
	bench_sort(s, RUNS);
	bench_sort(b, RUNS);
	ratio = b[RUNS / 2] / s[RUNS / 2];
	printf("# ADD+REMOVE: %.0f ns at 1000 registered, %.0f ns at %u registered: ratio %.3f "
	       "(target <= 1.5)\n", s[RUNS / 2], b[RUNS / 2], NQ_BIG * PER_Q, ratio);
	if (ratio > 1.5)
		ok = 0;
	world_free(&big);
	world_free(&small);
	grid_1000();
	free(arr);
	return ok ? 0 : 1;
}
