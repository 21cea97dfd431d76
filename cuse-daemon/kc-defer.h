/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-uid lanes for work that may block on something a client controls
 * (design.md B3): writing a parked call's results into its memory can wait on
 * a userfaultfd or FUSE-backed page of that client.  Such work never runs
 * on the core's worker or the reactor; it runs on the lane of the uid it
 * is for, so a stalled client stalls only its own uid's completions.
 */
#ifndef KC_DEFER_H
#define KC_DEFER_H

#include <sys/types.h>

void kc_defer_init(void);
/*
 * Queue fn(arg) on uid's lane (started on first use).  0, or -errno when
 * no lane can be had: the caller then runs fn itself.
 */
int kc_defer(uid_t uid, void (*fn)(void *arg), void *arg);
/* Run everything queued, then stop and join every lane. */
void kc_defer_stop(void);
/* Lanes started so far (tests). */
unsigned int kc_defer_lanes(void);

#endif /* KC_DEFER_H */
