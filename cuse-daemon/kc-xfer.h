/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Moving one ioctl's user memory (ARCHITECTURE.md section 5, RULES B1-B4).
 *
 * Two paths.  Process memory (primary): the daemon reads the wrapper and
 * the arrays with process_vm_readv and writes results with
 * process_vm_writev, all in the first and only round.  Retry (fallback,
 * pid 0 or process memory refused): FUSE_IOCTL_RETRY rounds in which the
 * kernel copies what the daemon names, at most 128 KiB per direction.
 *
 * Either way the arrays are copied into private buffers before the core
 * runs (B3) and the core sees them through a struct kuaccess over those
 * buffers; results leave the buffers only after the call completed.
 */
#ifndef KC_XFER_H
#define KC_XFER_H

#include <stddef.h>
#include <sys/types.h>

#include "kcore.h"

enum kx_path {
	KX_PATH_PVM,			/* process_vm_readv/writev */
	KX_PATH_RETRY,			/* FUSE_IOCTL_RETRY */
};

/* Measured on 6.1 (vm-testing.md, CUSE facts). */
#define KX_RETRY_DIR_MAX	131072	/* bytes per direction */
#define KX_RETRY_MAX_NR		3276	/* (131072 - 32) / sizeof(struct ukevent) */
#define KX_PVM_MAX_NR		(KEVENT_MAX_EVENTS - 1)

struct kx_iov {
	__u64 addr;
	__u64 len;
};

/* What one retry round must carry for the header it is built from. */
struct kx_layout {
	struct kx_iov in[3];
	unsigned int nin;
	struct kx_iov out[2];
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
 * The data round for plan: in = wrapper (never empty: 6.1 quirk), the range
 * the core reads, and the range it writes unless that is the same one, so
 * an unmapped output buffer faults in the kernel before anything is taken
 * (B4, D10); out = the wrapper when there is a reply, then the range the
 * core writes.  Returns 0, or -E2BIG when a direction exceeds 128 KiB.
 */
int kx_layout_data(struct kx_layout *l, __u64 arg, size_t usize, const struct kdisp_plan *plan);
/*
 * D28: a 32-bit (FUSE_IOCTL_COMPAT) caller's arrays must lie below 4 GiB:
 * -EFAULT, where asking the kernel for such an iovec would end in -EIO.
 */
int kx_plan_compat_ok(const struct kdisp_plan *plan);
/* 1 when a round that carried in_bufsz/out_bufsz bytes matches l exactly. */
int kx_layout_matches(const struct kx_layout *l, size_t in_bufsz, size_t out_bufsz);

/*
 * Edit the wrapper bytes before planning: the open file's O_NONBLOCK joins
 * the GET_EVENTS ioc_flags (A11), and on a path that moves at most max_nr
 * entries, max_nr and min_nr are clamped to it (B4: a legal short return)
 * unless min_nr > max_nr, which the core must still refuse.
 */
void kx_fix_header(unsigned int cmd, void *hdr, size_t usize, int nonblock, __u32 max_nr);

/* One request's transfer state; lives until its reply is sent. */
struct kx_xfer {
	enum kx_path path;
	pid_t tid;
	__u64 arg;
	size_t usize;			/* _IOC_SIZE(cmd) */
	struct kdisp_plan plan;
	unsigned char hdr[KEVENT_IOC_ARG_MAX];
	unsigned char reply[KEVENT_IOC_ARG_MAX];	/* usize bytes go back */
	unsigned char *inbuf;		/* copy of plan.in */
	unsigned char *outbuf;		/* plan.out, preloaded with the user's bytes */
	size_t out_hi;			/* bytes of outbuf written from its start */
	int out_written;
	struct kuaccess ua;
};

void kx_xfer_init(struct kx_xfer *x, enum kx_path path, pid_t tid, __u64 arg, size_t usize);
/* Take plan (after kdisp_plan) and allocate the buffers: 0 or -ENOMEM. */
int kx_xfer_set_plan(struct kx_xfer *x, const struct kdisp_plan *plan);
void kx_xfer_free(struct kx_xfer *x);

/* Retry data round: take the arrays from in_buf (layout of kx_layout_data). */
void kx_xfer_load_retry(struct kx_xfer *x, const void *in_buf, size_t in_bufsz);
/* Process memory: read the arrays (and the output range, to fault early). */
int kx_xfer_load_pvm(struct kx_xfer *x);
/*
 * Process memory: write the reply struct and what the core wrote.  Returns
 * result, or what D9/D10 make of a fault: GET_EVENTS returns the entries
 * that arrived, or -EFAULT if none; anything else -EFAULT.
 */
int kx_xfer_flush_pvm(struct kx_xfer *x, int result);
/*
 * Retry: the bytes to hand to fuse_reply_ioctl (the reply struct, then the
 * written prefix of the output range); *buf is malloc'd or NULL.
 */
int kx_xfer_retry_out(struct kx_xfer *x, int result, void **buf, size_t *len);

/* process_vm_readv/writev of one range: 0, -EFAULT, -EPERM, -ESRCH. */
int kx_pvm_read(pid_t tid, void *dst, __u64 addr, size_t len);
ssize_t kx_pvm_write(pid_t tid, __u64 addr, const void *src, size_t len);

#endif /* KC_XFER_H */
