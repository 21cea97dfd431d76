/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who sent a request (RULES B1, B2).  Built afresh for every request from
 * its FUSE context and never cached: a thread id may be reused as soon as
 * its request is answered.
 */
#ifndef KC_CALLER_H
#define KC_CALLER_H

#include <sys/types.h>

#include "origin.h"	/* struct kcaller */

/* Tgid of thread tid from /proc/<tid>/status: > 0, or -errno. */
pid_t kc_tgid_of(pid_t tid);
/* 1: tid shares its group leader's file table (kcmp KCMP_FILES), 0: not, -errno. */
int kc_same_files(pid_t tgid, pid_t tid);

/*
 * Fill c from a request's uid, gid and pid.  tid 0 (pid namespace not
 * visible) or a thread gone already leaves tgid 0: arrays then take the
 * retry path and fd origins are refused (B2).
 */
void kc_caller_fill(struct kcaller *c, uid_t uid, gid_t gid, pid_t tid);

#endif /* KC_CALLER_H */
