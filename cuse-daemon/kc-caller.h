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
 * Fill c from a request's uid, gid and pid.  tid 0 means the caller's pid
 * namespace is not visible: arrays then take the retry path and fd origins
 * are refused (B2).  tgid is left 0: reading /proc/<tid>/status costs more
 * than the rest of a small ioctl, and only INFO and the fd origins need it
 * (kc_caller_tgid here; the origins resolve it themselves).
 */
void kc_caller_fill(struct kcaller *c, uid_t uid, gid_t gid, pid_t tid);
/* c's thread group id, looked up if need be; 0 when it cannot be (B2). */
pid_t kc_caller_tgid(const struct kcaller *c);

#endif /* KC_CALLER_H */
