/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fuzzer's shadow model of the core: what docs/abi.md and kcore.h say
 * the core must do, written independently of core/queue.c, so that the
 * harness can compare every result, every written byte of user memory,
 * the ring and every counter after each operation.
 */
#ifndef KEVENT_FUZZ_MODEL_H
#define KEVENT_FUZZ_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include "kcore.h"
#include "prog.h"

/* Intrusive doubly linked list, ours (core/list.h is private to core/). */
struct mlink {
	struct mlink *next, *prev;
};

#define ml_entry(p, type, member) ((type *)((char *)(p) - offsetof(type, member)))

/* A registered kevent as the model sees it. */
struct mkev {
	struct mlink reg;		/* mq.reg, insertion order (D6) */
	struct mlink rdy;		/* mq.rdy, FIFO */
	struct ukevent uk;		/* as registered; event/req_flags by MODIFY */
	bool ready;
	bool disarmed;			/* D65: DISPATCH delivered, until MODIFY */
	bool held;			/* D65: a result that came while disarmed */
	bool cstop;			/* core: ONESHOT fired or BROKEN */
	bool stale;			/* D69: delivered -EBADF: cstop for good */
	unsigned int fdgone;		/* D69, device mode: not 0: its fd number names another
					 * file; the executor's tag of its own, old file */
	bool ostop;			/* test origin: korigin_fire said stop */
	bool race;			/* the racing origin's, not the test origin's */
	bool user;			/* KEVENT_USER on revision 3: the core's own (D62) */
	/* KEVENT_POSIX_TIMER (D58-D61), device mode: its setting and its count */
	bool ptimer, armed;		/* armed: value not {0, 0}, not spent (D59) */
	bool fresh;			/* armed by the last CTL: the caller sets lo, hi */
	struct kevent_timer_spec spec;	/* as ADD or the last EXT MODIFY set it */
	__u32 pend;			/* grid points passed, not delivered (D58) */
	int basis;			/* the caller's: the clock its grid is read on */
	__u64 lo, hi;			/* the caller's: window of the next grid point, ns */
	__u32 rflags, rdata[2];		/* pending result */
	unsigned int uid;		/* charged */
	int res;			/* extra KEVENT_LIMIT_* charged, or -1 */
};

/*
 * The rules a revision brings, by name (the docs/abi.md decision beside
 * each).  The model's own table (model.c), not the core's: a rule the two
 * disagree on is a difference the corpus replay reports.
 */
enum m_rule {
	MR_RING,		/* D40, D53-D55: RING_INIT, WAIT, COMMIT exist */
	MR_ALWAYS_QUEUE,	/* D42 */
	MR_LEVEL,		/* D43 */
	MR_EINTR,		/* D47 */
	MR_TIMESPEC,		/* D48 */
	MR_READY,		/* D49, D50 */
	MR_ENOSYS,		/* D51 */
	MR_POSIX_TIMER,		/* D58, D59: type 8 */
	MR_EXT,			/* D60: 80-byte entries */
	MR_QUERY,		/* D61 */
	MR_USER,		/* D62: type 9 */
	MR_TYPE_KEY,		/* D63 */
	MR_DISPATCH,		/* D65: KEVENT_REQ_DISPATCH */
	MR_DATA,		/* D67: POLL/SOCKET ret_data[1] is the count at delivery */
	MR_INODE_NOTES,		/* D68: KEVENT_INODE's notes, ORed while pending */
	MR_FD_CHECK,		/* D69: a POLL/SOCKET id must still name its file at delivery */
	MR_NR
};

#define M_RULE(r)	(1u << (r))

/* The rules of revision rev, 0 for one the modelled core does not serve. */
unsigned int m_rules_of(unsigned int rev);
/* Whether rev is served (A12). */
bool m_rev_served(unsigned int rev);

/* A queue object: lives from open until its last reference goes. */
struct mq {
	struct mlink obj;		/* model.objs */
	struct kqueue *kq;		/* the real queue */
	int slot;			/* KF_NQ slot, -1 once released */
	unsigned int owner;
	struct mlink reg, rdy;
	unsigned int nreg, nrdy;
	bool ctl_seen, strict, dead, scheduled;
	unsigned int revision, abi_flags;	/* SET_ABI (A12, D40) */
	unsigned int rules;		/* m_rules_of(revision) */
	bool latched;			/* READY num 0 with no waiter (D50) */
	bool uring_set;			/* RING_INIT accepted (D53) */
	/* the kevent_uring (D53-D55), device mode only (model.org set) */
	__u64 uring;			/* its user address, 0: none */
	__u32 unum, kidx, uidx, over;
	bool ufull;
	bool notify;
	unsigned long notify_exp, notify_seen;
	unsigned char *ring;		/* the real ring, NULL: none */
	unsigned int ring_idx, ring_dirty;
	unsigned char img[KEVENT_RING_SIZE];	/* what the ring must hold */
};

/* A parked GET_EVENTS. */
struct mw {
	bool used;
	struct kwaiter *kw;		/* the real handle */
	struct mq *q;
	bool parked;			/* model: not yet served */
	bool exp_done, real_done, put;
	int exp_result, real_result;
	__u32 min_nr, max_nr;
	__u64 deadline, events;
	bool expired, intr, woken;	/* woken: READY num 0 (D50) */
	unsigned int uid;
	unsigned long arrival;
};

/*
 * The walks over registered kevents: every kevent k of queue q (D6 order),
 * and every kevent k of every queue object q of model m (objects as opened;
 * a released queue has none left).  The loops are nested, so break goes on
 * to the next kevent as continue does: a walk that ends early returns.
 */
#define mq_for_each_kevent(q, k)						\
	for (struct mlink *k##_l = (q)->reg.next; k##_l != &(q)->reg;		\
	     k##_l = k##_l->next)							\
		for (struct mkev *k = ml_entry(k##_l, struct mkev, reg); k; k = NULL)

#define m_for_each_kevent(m, q, k)						\
	for (struct mlink *q##_l = (m)->objs.next; q##_l != &(m)->objs;		\
	     q##_l = q##_l->next)							\
		for (struct mq *q = ml_entry(q##_l, struct mq, obj); q; q = NULL)	\
			mq_for_each_kevent(q, k)

/* A decoded ioctl: the model's kdisp_plan. */
struct margs {
	unsigned int nr;
	size_t usize;
	union {
		struct kevent_ctl_ext_arg ctl;	/* VER0 callers: ioc_flags 0 */
		struct kevent_get_events_arg get;
		struct kevent_set_abi set_abi;
		struct kevent_ring_init ring_init;
		struct kevent_wait_arg wait;
		struct kevent_commit_arg commit;
	} a;
};

/*
 * Real origins instead of the test origin's KTEST_* bits (the lockstep
 * device fuzzer, lockstep.c): each returns < 0 (the entry fails with that
 * errno), 0 (registered / nothing ready) or 1 (ready: rdata filled).
 */
struct m_origin {
	int (*attach)(void *ctx, const struct ukevent *uk, __u32 rdata[2]);
	int (*modify)(void *ctx, const struct ukevent *uk, __u32 rdata[2]);
	void *ctx;
	/* D67: the source's count for the bits fired, read now */
	__u32 (*count)(void *ctx, const struct ukevent *uk, __u32 fired);
	/* MODIFY of a kevent whose fd number names another file: its old file, tag, asked */
	int (*modify_old)(void *ctx, const struct ukevent *uk, unsigned int tag, __u32 rdata[2]);
};

struct model {
	unsigned int mask;		/* types served by the test origin */
	const struct m_origin *org;	/* NULL: the test origin's rules */
	__u32 caps[KEVENT_LIMIT_NR];
	__u32 max_ctl, max_get;		/* normalised as kcore_new does */
	__u64 now;
	__u64 base;			/* user address of arena byte 0 */
	__u64 rlo, rhi, wlo, whi;	/* fault windows (user addresses) */
	__u64 llo, lhi;			/* the late write window ... */
	unsigned long late_after;	/* ... from this write on */
	unsigned long nwrites;		/* user-memory writes so far */
	struct mq *slot[KF_NQ];
	struct mlink objs;
	struct mw w[KF_NW];
	unsigned int used[KF_NUID][KEVENT_LIMIT_NR];
	unsigned int ours[KF_NUID][KEVENT_LIMIT_NR];	/* charged by UID ops */
	unsigned long attached, attach_calls, detach_calls, arrival;
	unsigned long race_attached;	/* the racing origin's kevents */
	size_t dirty_lo, dirty_hi;	/* arena bytes written since the last check */
	unsigned char arena[KF_ARENA];	/* what user memory must hold */
};

void m_init(struct model *m, const unsigned char *hdr, __u64 base);
void m_poke(struct model *m, size_t off, const void *src, size_t len);
/* The late write window (prog.h FAULT bit1), shared with the harness. */
bool m_late_fault(const struct model *m, unsigned long nth, __u64 uaddr, size_t len);

int m_open(struct model *m, int slot, unsigned int uid, unsigned char *ring, bool notify);
void m_release(struct model *m, int slot);
/* An open that failed -ENOMEM after m_open() said 0: no effect at all. */
void m_open_undo(struct model *m, int slot);
int m_plan(struct model *m, int slot, unsigned int cmd, const void *arg, size_t arg_len,
	   struct margs *out);
int m_execute(struct model *m, int slot, unsigned int uid, const struct margs *a, int wslot);
void m_info(struct model *m, int slot, unsigned int uid, size_t usize, struct kevent_info *out);
unsigned int m_fire(struct model *m, __u64 id, __u32 rflags, __u32 d0, __u32 d1);
/* A real source's activity: bits(uk) != 0 fires that kevent with ret_data[0] = bits. */
unsigned int m_fire_each(struct model *m, __u32 (*bits)(void *ctx, const struct ukevent *uk),
			 void *ctx);
unsigned int m_fire_stopped(struct model *m, __u64 id, __u32 d0);
int m_uid_charge(struct model *m, unsigned int uid, unsigned int limit);
void m_uid_uncharge(struct model *m, unsigned int uid, unsigned int limit);
void m_run(struct model *m);
void m_intr(struct model *m, int w);
void m_put(struct model *m, int w);
void m_reap(struct model *m);
/*
 * D69, device mode: the executor gave a source's fd number another file,
 * or closed it.  Every POLL and SOCKET kevent on() names that watches the
 * file the number had (not one whose number was replaced before) is marked
 * with tag, the executor's name of that old file: on a revision-4 queue its
 * next delivery is the stale record (m4_fd_check), whether the number names
 * another file or none (D69: "the fd was closed, or its number is another
 * file now"); below revision 4 its records stay (A7: a kevent holds its
 * file, the client's close() neither removes nor breaks it).  From then on
 * only writes to its old file reach it (m4_fire_old, not m_fire_each), and
 * MODIFY asks its origin about that file (m_origin.modify_old).  Returns
 * how many kevents it marked.
 */
unsigned int m4_fd_replaced(struct model *m, bool (*on)(void *ctx, const struct ukevent *uk),
			    void *ctx, unsigned int tag);
/* A write to the old file tag: as m_fire_each, for the kevents marked with tag. */
unsigned int m4_fire_old(struct model *m, unsigned int tag,
			 __u32 (*bits)(void *ctx, const struct ukevent *uk), void *ctx);

/* D55: would this planned WAIT block (device mode)?  The lockstep runs none that would. */
bool m_wait_blocks(const struct model *m, int slot, const struct margs *a);

/*
 * Revision 3, device mode: every armed POSIX timer due() says reached its
 * next grid point counts one expiry (D58) and is ready; returns how many.
 */
unsigned int m3_timer_expire(struct model *m, bool (*due)(void *ctx, struct mkev *k), void *ctx);
/* D59: a timer setting the core refuses. */
bool m3_spec_refused(const struct kevent_timer_spec *s);
/* QUERY's time left of an armed timer (D61): a window only the caller knows. */
#define M3_LEFT_ANY	0xffffffffu	/* in ext.timer.value.tv_nsec */

/* Live objects the model expects (kcore_counters). */
void m_counters(const struct model *m, struct kcore_counters *out);
bool m_waiter_alive(const struct mw *w);

#endif /* KEVENT_FUZZ_MODEL_H */
