/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A kevent type as the core sees it: one descriptor per type (the table
 * ktypes[] of types.c), in the manner of FreeBSD's struct filterops.  The
 * queue code (queue.c) asks the descriptor and never names a type; what a
 * type adds to the take13 path is a hook here, in the type's own file
 * (ptimer.c, user.c).  A type watched by a source the daemon runs finds it
 * through the origin table (origin.h, korigin_register); a type with no
 * source has its ops here.
 *
 * Locking of the hooks, as queue.c's LOCKING block: q->ctl is held for all
 * of them except fire (an origin's thread); "q->lock held" is said where
 * the ready lock is held too.
 */
#ifndef KEVENT_CORE_KTYPE_H
#define KEVENT_CORE_KTYPE_H

#include <stdbool.h>
#include <stddef.h>

#include "origin.h"
#include "rules.h"

struct kqueue;
struct enqueue_effects;

struct ktype {
	const char *name;
	/* The rules that bring the type (D64); 0: take13's, every revision. */
	krules needs;
	/* The KEVENT_LIMIT_* each kevent charges besides KEVENTS (D18); -1 none. */
	int limit;
	bool level;		/* takes KEVENT_REQ_LEVEL (D43) */
	bool always_queue;	/* takes KEVENT_REQ_ALWAYS_QUEUE (D42) */
	__u32 feature;		/* INFO feature bit while the queue serves it (D64) */
	size_t priv_size;	/* bytes of private data after each kitem (korigin_priv) */
	/* The type's own source; NULL: the origin registered for the type. */
	const struct korigin_ops *ops;

	/*
	 * D60: checks an entry's extension; e is NULL for a 40-byte entry,
	 * add false for MODIFY.  Returns 1 when the entry carries a setting
	 * (setup or rearm takes it), 0 when not, or -errno.  NULL: the ext
	 * of an 80-byte entry must be all zero, and REMOVE and READY check
	 * just that for every type (they read no setting).
	 */
	int (*ext_check)(const struct ukevent *uk, const struct ukevent_ext *e, bool add);
	/* ADD: applies the setting ext_check accepted (k not yet visible). */
	void (*setup)(struct kitem *k, const struct ukevent_ext *e);
	/* MODIFY: applies the setting ext_check accepted (takes q->lock). */
	void (*rearm)(struct kitem *k, const struct ukevent_ext *e);
	/*
	 * A result for k while k has one pending (ready, or held: D65; q->lock
	 * held): folds the pending one into res and returns true, or returns
	 * false (res replaces it, A9, as with NULL).
	 */
	bool (*merge)(const struct kitem *k, struct korigin_result *res);
	/* korigin_fire() of a result that is not BROKEN, in its place. */
	int (*fire)(struct kitem *k, const struct korigin_result *res);
	/* CTL_READY on a kevent of this type (q->lock held); NULL: D49. */
	void (*ready)(struct kitem *k, __u32 value, struct enqueue_effects *fx);
	/* At dequeue, the record of a ready kevent not BROKEN (q->lock held). */
	void (*deliver)(struct kitem *k, struct ukevent *out);
	/* A faulted WAIT delivered nothing: deliver() is undone (q->lock held). */
	void (*undeliver)(struct kitem *k);
	/* D61: QUERY (q->lock held); NULL: the entry fails -EINVAL. */
	void (*query)(struct kitem *k, struct ukevent_ext *e);
	/*
	 * D67, under KR_DATA only: at delivery, a record that is not BROKEN
	 * gets the source's count for the bits it reports (out->ret_data[0])
	 * in ret_data[1], read now, as FreeBSD's filters compute kevent data
	 * at scan time.  Called after the dequeue took k, with q->ctl held and
	 * q->lock NOT held: the count may cost a system call, and the origins'
	 * fires must not wait for it (k stays: only q->ctl frees kitems).
	 * NULL: ret_data[1] is the result's, as below revision 4.
	 */
	void (*data)(struct kitem *k, struct ukevent *out);
	/*
	 * O11, under KR_DATA: data() deferred.  Called where data() would be,
	 * on the core's worker for a parked GET_EVENTS; returns what reads the
	 * count later (origin.h kcount_pin), or NULL when data() must run now.
	 */
	struct kcount_pin *(*data_pin)(struct kitem *k);
	/*
	 * D69, under KR_FD_CHECK only: at a delivery of a record that is not
	 * BROKEN, whether k's id still names, in caller's file table, the file
	 * k was added on: 0 yes (or it cannot be told), -EBADF no.  Called as
	 * data is (q->ctl held, q->lock NOT held), before it.  NULL: no check.
	 */
	int (*fd_check)(struct kitem *k, const struct kcaller *caller);
};

/* The descriptor of type, or NULL for a type no table row describes. */
const struct ktype *ktype_of(__u32 type);

/* The rows of the types with no Linux source (types.c). */
extern const struct ktype kptimer_type, kuser_type;

#endif /* KEVENT_CORE_KTYPE_H */
