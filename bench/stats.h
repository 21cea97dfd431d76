/* SPDX-License-Identifier: MIT */
/*
 * The benchmarks' one statistic: every figure they print is the median of
 * several runs (these machines are noisy), so one sort order and one median.
 */
#ifndef KEVENT_BENCH_STATS_H
#define KEVENT_BENCH_STATS_H

#include <stdlib.h>

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static inline void bench_sort(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
}

/* Sorts v in place; the upper median for an even n. */
static inline double bench_median(double *v, int n)
{
	bench_sort(v, n);
	return v[n / 2];
}

#endif
