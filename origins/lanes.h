/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-uid lanes: one worker thread per uid, started on first use, for work
 * that may block on something a client controls (design.md B3): closing a
 * duplicated client fd (closer.c), writing a parked call's results into
 * its memory (the CUSE daemon's kc-defer.c).  A stalled client stalls only
 * its own uid's lane (B7).  Lane threads run with every signal blocked, so
 * a process-directed signal never lands on one.
 *
 * Here, not in core/: the core has one worker of its own and never blocks
 * on a client; the origins are the layer the daemon already builds on.
 */
#ifndef KORIGINS_LANES_H
#define KORIGINS_LANES_H

#include <pthread.h>
#include <sys/types.h>
#include <linux/types.h>

struct klane;

struct klanes {
	pthread_mutex_t lock;		/* everything below and every lane's jobs */
	pthread_cond_t idle;		/* pending dropped to 0 */
	struct klane *list;
	unsigned int nlanes;
	__u64 pending;			/* jobs queued or running */
	int running;			/* between klanes_start and klanes_stop */
};

#define KLANES_INIT { .lock = PTHREAD_MUTEX_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER }

void klanes_start(struct klanes *s);
/*
 * Queue fn(arg) on uid's lane.  0, or -errno when no lane can be had
 * (not running, no thread, no memory): the caller then runs fn itself.
 */
int klanes_submit(struct klanes *s, uid_t uid, void (*fn)(void *arg), void *arg);
/* Run everything queued, then stop and join every lane. */
void klanes_stop(struct klanes *s);
/* Wait until no job is queued or running. */
void klanes_sync(struct klanes *s);
void klanes_counts(struct klanes *s, __u64 *pending, unsigned int *lanes);

#endif /* KORIGINS_LANES_H */
