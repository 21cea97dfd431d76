/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A test double of the core below origin.h: it defines struct kitem and
 * korigin_fire() & co. and records what the origins report, with the
 * core's merge rule (a fire while "ready" replaces the pending result and
 * counts as merged).  The real core is tested against the same boundary.
 *
 * LOCKING: rec_lock protects every kitem's record; korigin_fire() takes it
 * inside the origins' lock, as the core's ready lock would be.
 */
#ifndef KEVENT_ORIGINS_TEST_RECORDER_H
#define KEVENT_ORIGINS_TEST_RECORDER_H

#include <pthread.h>
#include "origin.h"

struct kitem {
	struct ukevent uk;
	void *data;
	unsigned int revision;		/* the queue's; 0 reads as 1 */
	int registered;			/* attach returned 0, no detach yet */
	int ready;			/* fired, not yet "dequeued" */
	int stopped;			/* fire returned 1 */
	unsigned int fires;		/* every korigin_fire() */
	unsigned int queued;		/* fires that found it not ready */
	unsigned int violations;	/* fires when not registered or after stop */
	struct korigin_result last;
	struct korigin_grid grid;	/* KEVENT_POSIX_TIMER: what the test set */
	__u64 last_index;		/* korigin_timer_fire()'s point */
};

void rec_setup(unsigned int flags);	/* korigins_start with flags */
struct korigins_config;
void rec_setup_cfg(const struct korigins_config *cfg);
void rec_teardown(void);

/* ADD through the registered ops; returns what attach returned. */
int rec_add(struct kitem *k, const struct ukevent *uk, const struct kcaller *c,
	    struct korigin_result *res);
/* ADD on a queue of this revision (rec_add: revision 1). */
int rec_add_rev(struct kitem *k, const struct ukevent *uk, const struct kcaller *c,
		struct korigin_result *res, unsigned int revision);
int rec_modify(struct kitem *k, __u32 event, __u32 req_flags, struct korigin_result *res);
void rec_remove(struct kitem *k);
/* GET_EVENTS of one item: clears ready, returns the pending result. */
int rec_dequeue(struct kitem *k, struct korigin_result *res);

/* Waits (running the reactor in NO_THREAD mode) until k->fires >= n or
 * about timeout_ms passed; returns k->fires. */
unsigned int rec_wait_fires(struct kitem *k, unsigned int n, int timeout_ms);
/* Lets the origins run for about ms (to show that nothing happens). */
void rec_idle(int ms);
unsigned int rec_fires(struct kitem *k);

struct kcaller rec_self(void);
const struct korigin_ops *rec_ops(__u32 type);

#endif
