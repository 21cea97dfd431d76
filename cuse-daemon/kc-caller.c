// SPDX-License-Identifier: GPL-2.0
/* Request identity from a FUSE context; the B2 checks are origins/caller.c. */

#include "kc-caller.h"

void kc_caller_fill(struct kcaller *c, uid_t uid, gid_t gid, pid_t tid)
{
	c->tid = tid > 0 ? tid : 0;
	c->tgid = 0;	/* resolved where it is needed (kcaller_files_tgid) */
	c->uid = uid;
	c->gid = gid;
}
