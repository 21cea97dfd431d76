// SPDX-License-Identifier: GPL-2.0
/* Per-uid work lanes of the daemon: the origins' lanes (lanes.h), one set. */
#include "kc-defer.h"
#include "lanes.h"

static struct klanes kc_lanes = KLANES_INIT;

void kc_defer_init(void)
{
	klanes_start(&kc_lanes);
}

int kc_defer(uid_t uid, void (*fn)(void *arg), void *arg)
{
	return klanes_submit(&kc_lanes, uid, fn, arg);
}

void kc_defer_stop(void)
{
	klanes_stop(&kc_lanes);
}

unsigned int kc_defer_lanes(void)
{
	unsigned int lanes;
	__u64 pending;

	klanes_counts(&kc_lanes, &pending, &lanes);
	return lanes;
}
