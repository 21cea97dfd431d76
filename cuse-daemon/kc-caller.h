/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who sent a request (design.md B1, B2).  Built afresh for every request from
 * its FUSE context and never cached: a thread id may be reused as soon as
 * its request is answered.
 */
#ifndef KC_CALLER_H
#define KC_CALLER_H

#include <sys/types.h>

#include "origin.h"	/* struct kcaller */

/*
 * Fill c from a request's uid, gid and pid.  tid 0 means the caller's pid
 * namespace is not visible: arrays then take the retry path and fd origins
 * are refused (B2).  tgid is left 0: reading /proc/<tid>/status costs more
 * than the rest of a small ioctl, and only INFO and the fd origins need it
 * (kcaller_files_tgid, origins/caller.h).
 */
void kc_caller_fill(struct kcaller *c, uid_t uid, gid_t gid, pid_t tid);

#endif /* KC_CALLER_H */
