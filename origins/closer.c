// SPDX-License-Identifier: GPL-2.0
/*
 * The closer: closes duplicated client fds.  A close can wait (FUSE flush,
 * SO_LINGER, the last reference of a socket), so it never runs on the
 * reactor or on a transport worker (design.md B3); it runs on the lane of
 * the uid whose duplicate it is (lanes.h), so a file one uid made slow to
 * close delays only that uid's closes (B7).
 *
 * LOCKING: the lanes' lock may be taken with korigins_lock held, never the
 * other way round.  No close() runs with it held.
 */
#include <stdint.h>
#include <unistd.h>

#include "internal.h"
#include "lanes.h"

static struct klanes kcloser_lanes = KLANES_INIT;

int kcloser_start(void)
{
	klanes_start(&kcloser_lanes);
	return 0;
}

void kcloser_stop(void)
{
	klanes_stop(&kcloser_lanes);
}

static void kcloser_job(void *arg)
{
	close((int)(intptr_t)arg);
}

void kcloser_close(uid_t uid, int fd)
{
	if (fd < 0)
		return;
	/* No lane or no memory: leaking an fd is worse than waiting. */
	if (klanes_submit(&kcloser_lanes, uid, kcloser_job, (void *)(intptr_t)fd))
		close(fd);
}

void korigins_sync_closer(void)
{
	klanes_sync(&kcloser_lanes);
}

void kcloser_counts(__u64 *pending, __u64 *threads)
{
	unsigned int lanes;

	klanes_counts(&kcloser_lanes, pending, &lanes);
	*threads = lanes;
}
