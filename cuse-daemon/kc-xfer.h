/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Moving one ioctl's user memory (design.md B1-B4).
 *
 * Two paths, chosen here, not by the caller.  Process memory (primary):
 * the daemon reads the wrapper and the arrays with process_vm_readv and
 * writes results with process_vm_writev, all in the first and only round.
 * Retry (fallback: pid 0, --no-process-vm, or process memory refused once
 * with EPERM): FUSE_IOCTL_RETRY rounds in which the kernel copies what the
 * daemon names, at most 128 KiB per direction.
 *
 * Either way the plan's ranges (kdisp_plan.in[] / out[]) are copied into
 * private buffers before the core runs (B3) and the core sees them through
 * a struct kuaccess over those buffers; results leave the buffers only
 * after the call completed.  Flow: kx_xfer_start (the wrapper),
 * kx_xfer_ctx (what the path limits, for kdisp_plan_ctx), kx_xfer_load
 * (the ranges), kdisp_execute, kx_xfer_finish (the results).
 */
#ifndef KC_XFER_H
#define KC_XFER_H

#include <stdatomic.h>
#include <stddef.h>
#include <sys/types.h>

#include "kcore.h"

enum kx_path {
	KX_PATH_PVM,			/* process_vm_readv/writev */
	KX_PATH_RETRY,			/* FUSE_IOCTL_RETRY */
};

/* Measured on the 6.1 guest kernel: FUSE_IOCTL_RETRY moves at most this. */
#define KX_RETRY_DIR_MAX	131072	/* bytes per direction */
#define KX_RETRY_MAX_NR		3276	/* (131072 - 32) / sizeof(struct ukevent) */
#define KX_PVM_MAX_NR		(KEVENT_MAX_EVENTS - 1)

struct kx_iov {
	__u64 addr;
	__u64 len;
};

/* Distinct ranges of one plan: in[] and out[] with duplicates merged. */
#define KX_BUFS		(2 * KDISP_RANGES)

/* What one retry round must carry for the header it is built from. */
struct kx_layout {
	struct kx_iov in[1 + KX_BUFS];
	unsigned int nin;
	struct kx_iov out[1 + KDISP_RANGES];
	unsigned int nout;
	size_t in_total;
	size_t out_total;
};

/*
 * Round 1 (nothing fetched yet): the wrapper in, and out too when the
 * command answers in it (_IOC_READ).
 */
void kx_layout_header(struct kx_layout *l, __u64 arg, size_t usize, int reply);
/*
 * The data round for plan: in = wrapper (never empty: 6.1 quirk), then
 * every distinct range the core reads or writes (read first), so an
 * unmapped output buffer faults in the kernel before anything is taken
 * (B4, D10); out = the wrapper when there is a reply, then the ranges the
 * core writes.  Returns 0, or -E2BIG when a direction exceeds 128 KiB
 * (kx_xfer_ctx's limits keep CTL and GET_EVENTS below that, so the core
 * has already answered E2BIG or clamped).
 */
int kx_layout_data(struct kx_layout *l, __u64 arg, size_t usize, const struct kdisp_plan *plan);
/*
 * D28: a 32-bit (FUSE_IOCTL_COMPAT) caller's arrays must lie below 4 GiB:
 * -EFAULT, where asking the kernel for such an iovec would end in -EIO.
 */
int kx_plan_compat_ok(const struct kdisp_plan *plan);
/* 1 when a round that carried in_bufsz/out_bufsz bytes matches l exactly. */
int kx_layout_matches(const struct kx_layout *l, size_t in_bufsz, size_t out_bufsz);

/* One distinct user range of a plan and its private copy. */
struct kx_buf {
	struct kdisp_range r;
	unsigned char *mem;		/* preloaded with the user's bytes */
	int read, write;		/* named in plan.in[] / plan.out[] */
	size_t hi;			/* bytes written from its start */
	int written;
};

/* The daemon-wide path choice (B2, B4). */
struct kx_paths {
	int no_process_vm;		/* --no-process-vm */
	int no_retry;			/* a front end without FUSE_IOCTL_RETRY */
	atomic_int pvm_refused;		/* process memory said EPERM once */
};

/* What one FUSE ioctl request carried. */
struct kx_round {
	unsigned int cmd;
	pid_t tid;			/* 0: not visible in our pid namespace */
	__u64 arg;
	int compat;			/* FUSE_IOCTL_COMPAT (D28) */
	const void *in_buf;
	size_t in_bufsz, out_bufsz;
};

/* One request's transfer state; lives until its reply is sent. */
struct kx_xfer {
	enum kx_path path;
	pid_t tid;
	__u64 arg;
	size_t usize;			/* _IOC_SIZE(cmd) */
	int compat;
	const char *round;		/* for the trace: "1", "header", "data" */
	struct kdisp_plan plan;
	unsigned char hdr[KEVENT_IOC_ARG_MAX];
	unsigned char reply[KEVENT_IOC_ARG_MAX];	/* usize bytes go back */
	struct kx_buf buf[KX_BUFS];
	unsigned int nbuf;
	struct kuaccess ua;
	/*
	 * The caller's own memory, at the moment of each access (process
	 * memory path only): the kevent_uring of RING_INIT, WAIT and COMMIT is
	 * written through it when the call completes, never from a buffer
	 * (docs/abi.md D53).
	 */
	struct kuaccess pua;
};

/* The accessor a call of this plan uses: pua for the revision-2 ring calls. */
const struct kuaccess *kx_xfer_ua(const struct kx_xfer *x);

#define KX_ASK		1	/* a retry round must be asked for: *l says which */
#define KX_ASK_HEADER	2	/* the same, for the wrapper only (round 1) */

/*
 * Pick the path and fetch the wrapper into x->hdr: 0, KX_ASK_HEADER with
 * *l filled, or -errno.  A process-memory EPERM switches the daemon to the
 * retry path for good and says so once (warn); without a retry path
 * (no_retry) it is the call's -EPERM, and so is a caller that process
 * memory cannot reach.
 */
int kx_xfer_start(struct kx_xfer *x, struct kx_paths *paths, const struct kx_round *rd,
		  struct kx_layout *l);
/* What x's path limits for this call, and its KEVENT_FEAT_* path bit. */
void kx_xfer_ctx(const struct kx_xfer *x, unsigned int cmd, struct kdisp_ctx *ctx);
/*
 * After kdisp_plan_ctx: take plan and fill the private buffers.  0 to run,
 * KX_ASK (retry: *l is the round to ask for), or -errno.
 */
int kx_xfer_load(struct kx_xfer *x, const struct kdisp_plan *plan, const struct kx_round *rd,
		 struct kx_layout *l);
/*
 * The call's result: on process memory written to the caller now (result
 * adjusted per D9/D10); on the retry path the bytes for fuse_reply_ioctl
 * in *buf (malloc'd or NULL) and *len.  Returns the result to reply.
 */
int kx_xfer_finish(struct kx_xfer *x, int result, void **buf, size_t *len);
/* 1 when kx_xfer_finish writes into the client's memory, which may block (B3). */
int kx_xfer_may_block(const struct kx_xfer *x);
/* The written bytes of the first written output range (trace). */
const void *kx_xfer_written(const struct kx_xfer *x, size_t *len);

void kx_xfer_init(struct kx_xfer *x, enum kx_path path, pid_t tid, __u64 arg, size_t usize);
/* Take plan (after kdisp_plan) and allocate the buffers: 0 or -ENOMEM. */
int kx_xfer_set_plan(struct kx_xfer *x, const struct kdisp_plan *plan);
void kx_xfer_free(struct kx_xfer *x);

/* Retry data round: take the ranges from in_buf (layout of kx_layout_data). */
void kx_xfer_load_retry(struct kx_xfer *x, const void *in_buf, size_t in_bufsz);
/* Process memory: read every range (the output ones too, to fault early). */
int kx_xfer_load_pvm(struct kx_xfer *x);
/*
 * Process memory: write the reply struct and what the core wrote.  Returns
 * result, or what D9/D10 make of a fault: GET_EVENTS returns the entries
 * that arrived, or -EFAULT if none; anything else -EFAULT.
 */
int kx_xfer_flush_pvm(struct kx_xfer *x, int result);
/*
 * Retry: the bytes to hand to fuse_reply_ioctl (the reply struct, then the
 * output ranges up to the written prefix of the last one written); *buf is
 * malloc'd or NULL.
 */
int kx_xfer_retry_out(struct kx_xfer *x, int result, void **buf, size_t *len);

/* process_vm_readv/writev of one range: 0, -EFAULT, -EPERM, -ESRCH. */
int kx_pvm_read(pid_t tid, void *dst, __u64 addr, size_t len);
ssize_t kx_pvm_write(pid_t tid, __u64 addr, const void *src, size_t len);

#endif /* KC_XFER_H */
