/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who a caller is, for the parts that act on its process (design.md B2):
 * its thread group and whether the calling thread uses the group's file
 * table.  Used by fd taking (fdtake.c) and by the CUSE daemon's INFO.
 *
 * Here, not in core/: the core never looks at a caller's process (its
 * struct kcaller is opaque identity), and the origins are the layer the
 * daemon already builds on.  No origin state: safe to link alone.
 */
#ifndef KORIGINS_CALLER_H
#define KORIGINS_CALLER_H

#include <sys/types.h>

#include "origin.h"	/* struct kcaller */

/* Tgid of thread tid from /proc/<tid>/status: > 0, or -errno. */
pid_t kcaller_tgid_of(pid_t tid);
/* 1: tid shares its group leader tgid's file table (kcmp KCMP_FILES), 0: not, -errno. */
int kcaller_same_files(pid_t tgid, pid_t tid);
/*
 * The thread group whose file table c's thread uses: > 0, or -EPERM when
 * c is invisible in our pid namespace or has a file table of its own.
 */
pid_t kcaller_files_tgid(const struct kcaller *c);

#endif /* KORIGINS_CALLER_H */
