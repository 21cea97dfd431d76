/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one interpreter of the program format (prog.h) with the shadow model
 * (model.h), and the table of an executor behind it.  interp.c runs the
 * loop over operations, decodes each one's fields, makes the model calls
 * and the comparisons that are the same whatever runs the program; an
 * executor does what a real caller does:
 *
 *   harness.c   in process: the core through kdisp_plan()/kdisp_execute(),
 *               simulated user memory, the test and racing origins (kfuzz)
 *   lockstep.c  a device: ioctls on a real /dev/kevent fd, real memory,
 *               real sources and timers, DRAIN (kevent-lockstep)
 *
 * What differs per backend stays in lockstep.c's lk_rules[].
 */
#ifndef KEVENT_FUZZ_INTERP_H
#define KEVENT_FUZZ_INTERP_H

#include "kfuzz.h"
#include "model.h"

#define KF_ARGMAX	(0x3fff + 2)	/* an ioctl argument: _IOC_SIZE + 1 */

/*
 * An executor.  The operations are those of prog.h; one left NULL (fault,
 * clock, run, intr, put, exec, fires, uid) has no form in this executor:
 * its fields are skipped whole, as one unit (a field-by-field read of an
 * operation cut short would take some of them).  Each is called after the
 * interpreter decoded the fields (slot % KF_NQ, uid % KF_NUID) and made the
 * model calls common to both.  closed, ioc_args and the checks but info and
 * poll may be NULL too.
 */
struct kf_exec {
	/* ---- a program ---- */
	void (*start)(const uint8_t *hdr);	/* after m_init() and a zeroed arena */
	void (*finish)(void);		/* every slot released: give back, check nothing is left */
	void (*teardown)(void);		/* after the whole arena was compared */

	/* ---- operations ---- */
	/* OPEN: the model's m_open() with this executor's owner, ring, notify */
	void (*open)(unsigned int slot, unsigned int uid, unsigned int flags);
	/* The real release of a slot (CLOSE, the end); the model's follows. */
	void (*release)(unsigned int slot);
	void (*closed)(void);		/* after a CLOSE operation's release */
	/* FAULT: the accessor's window [lo, hi) (user addresses; the model has it) */
	void (*fault)(unsigned int which, __u64 lo, __u64 hi);
	/*
	 * Before m_plan(): the arguments as this executor passes them (it
	 * may change io and arg); false: not run.
	 */
	bool (*ioc_args)(struct kf_ioc *io, unsigned char *arg);
	/* The call itself; exp: m_plan()'s result for it, ma its decoding (ours to change). */
	void (*ioctl)(const struct kf_ioc *io, unsigned char *arg, int exp, struct margs *ma);
	/* FIRE (data), BREAK (broken: data is the errno byte) */
	void (*fire)(unsigned int id0, unsigned int id1, __u32 data, bool broken);
	void (*clock)(__u32 us);
	void (*run)(void);
	void (*intr)(unsigned int w);	/* after m_intr() */
	void (*put)(unsigned int w);	/* after m_put() */
	void (*exec)(void);
	/* FIRES: in process the racing origin's fire of stopped kevents; on a
	 * device a source's fd number gets a new file, its old file a byte, or
	 * it is closed (D69, lockstep.c) */
	void (*fires)(unsigned int id0, unsigned int id1, __u32 data);
	void (*uid)(unsigned int uid, unsigned int limit, unsigned int act);

	/* ---- the checks after every operation ---- */
	void (*check)(void);		/* this executor's own, before the queues' */
	/* INFO of a slot's queue as its owner would ask it: 0 or -errno */
	int (*info)(unsigned int slot, struct kevent_info *out);
	unsigned int (*poll)(unsigned int slot);
	/* The model's INFO made what this executor expects (may differ itself). */
	void (*info_expect)(const struct kevent_info *got, struct kevent_info *exp);
	/* A queue checked: what it showed (mask: poll's) */
	void (*queue_seen)(unsigned int slot, const struct kevent_info *info, unsigned int mask);
	void (*mem_seen)(size_t lo, size_t hi);	/* arena bytes written, compared */
	/* A difference (why: "step N (OP): ..."); NULL: the program stops after this operation */
	void (*differs)(const char *why);
};

/* The run: the interpreter's state, one program at a time. */
struct kf_run {
	const struct kf_exec *e;
	unsigned char *arena;		/* user memory: the executor's */
	unsigned int step, op;		/* op KF_OP_NR: the end of the program */
	bool failed;			/* a difference: the program stops */
	char why[512];
	unsigned long ops;		/* operations run, all programs */
	unsigned char arg[KF_ARGMAX + 64] __attribute__((aligned(64)));
	struct model m;			/* the shadow model */
};

extern struct kf_run KR;

/* Runs one program (an 8-byte header at least); returns KR.failed. */
bool kf_run_program(const uint8_t *data, size_t size);

const char *kf_op_name(unsigned int op);
void kf_differs(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define EXPECT_EQ(what, got, exp) do {					\
	long long g_ = (long long)(got), e_ = (long long)(exp);		\
	if (g_ != e_)							\
		kf_differs("%s: got %lld, expected %lld", what, g_, e_);	\
} while (0)

/* Shared checks an executor calls where its calls end. */
void kf_check_all(void);
void kf_check_arena(size_t lo, size_t hi);
void kf_check_info(unsigned int slot, unsigned int uid, const struct kevent_info *got,
		   size_t usize);
/* An INFO reply of usize bytes: the model's, then a zero tail. */
void kf_check_info_reply(unsigned int slot, unsigned int uid, const unsigned char *reply,
			 size_t usize);
/* POKE and RAW: the bytes in both memories. */
void kf_put_both(void *ctx, size_t off, const void *src, size_t len);

#endif /* KEVENT_FUZZ_INTERP_H */
