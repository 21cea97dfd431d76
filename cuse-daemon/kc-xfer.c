// SPDX-License-Identifier: GPL-2.0
/* One ioctl's user memory: round layouts, private buffers, the accessor. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/uio.h>

#include "kc-log.h"
#include "kc-xfer.h"

static int kx_range_ok(const struct kx_iov *r)
{
	return r->addr + r->len >= r->addr;
}

static void kx_push(struct kx_iov *v, unsigned int *n, size_t *total, __u64 addr, __u64 len)
{
	v[*n].addr = addr;
	v[*n].len = len;
	(*n)++;
	*total += len;
}

void kx_layout_header(struct kx_layout *l, __u64 arg, size_t usize, int reply)
{
	memset(l, 0, sizeof(*l));
	kx_push(l->in, &l->nin, &l->in_total, arg, usize);
	if (reply)
		kx_push(l->out, &l->nout, &l->out_total, arg, usize);
}

static int kx_same_range(const struct kdisp_range *a, const struct kdisp_range *b)
{
	return a->addr == b->addr && a->len == b->len;
}

/* The distinct ranges of plan, read ones first, each once. */
static unsigned int kx_distinct(const struct kdisp_plan *plan, struct kx_buf *b)
{
	unsigned int n = 0, i, k;

	for (i = 0; i < plan->nin + plan->nout; i++) {
		int w = i >= plan->nin;
		const struct kdisp_range *r = w ? &plan->out[i - plan->nin] : &plan->in[i];

		for (k = 0; k < n && !kx_same_range(&b[k].r, r); k++)
			;
		if (k == n)
			b[n++] = (struct kx_buf){ .r = *r };
		if (w)
			b[k].write = 1;
		else
			b[k].read = 1;
	}
	return n;
}

int kx_layout_data(struct kx_layout *l, __u64 arg, size_t usize, const struct kdisp_plan *plan)
{
	struct kx_buf b[KX_BUFS];
	unsigned int n = kx_distinct(plan, b), i;

	memset(l, 0, sizeof(*l));
	kx_push(l->in, &l->nin, &l->in_total, arg, usize);
	for (i = 0; i < n; i++)
		kx_push(l->in, &l->nin, &l->in_total, b[i].r.addr, b[i].r.len);
	if (plan->reply_len)
		kx_push(l->out, &l->nout, &l->out_total, arg, usize);
	for (i = 0; i < plan->nout; i++)
		kx_push(l->out, &l->nout, &l->out_total, plan->out[i].addr, plan->out[i].len);
	if (l->in_total > KX_RETRY_DIR_MAX || l->out_total > KX_RETRY_DIR_MAX)
		return -E2BIG;
	return 0;
}

static int kx_below_4g(const struct kdisp_range *r)
{
	return r->addr <= UINT32_MAX && r->len <= (1ULL << 32) - r->addr;
}

int kx_plan_compat_ok(const struct kdisp_plan *plan)
{
	for (unsigned int i = 0; i < plan->nin; i++)
		if (!kx_below_4g(&plan->in[i]))
			return -EFAULT;
	for (unsigned int i = 0; i < plan->nout; i++)
		if (!kx_below_4g(&plan->out[i]))
			return -EFAULT;
	return 0;
}

int kx_layout_matches(const struct kx_layout *l, size_t in_bufsz, size_t out_bufsz)
{
	return l->in_total == in_bufsz && l->out_total == out_bufsz;
}

/* ---- the accessor the core sees: private buffers only ---- */

static int kx_within(const struct kdisp_range *r, __u64 uaddr, size_t len, size_t *off)
{
	if (uaddr < r->addr || uaddr - r->addr > r->len || len > r->len - (uaddr - r->addr))
		return 0;
	*off = uaddr - r->addr;
	return 1;
}

/* The buffer holding [uaddr, uaddr + len); with w, only one the core may write. */
static struct kx_buf *kx_find(struct kx_xfer *x, __u64 uaddr, size_t len, int w, size_t *off)
{
	for (unsigned int i = 0; i < x->nbuf; i++)
		if ((!w || x->buf[i].write) && x->buf[i].mem &&
		    kx_within(&x->buf[i].r, uaddr, len, off))
			return &x->buf[i];
	return NULL;
}

static int kx_ua_read(void *ctx, void *dst, __u64 uaddr, size_t len)
{
	struct kx_xfer *x = ctx;
	struct kx_buf *b;
	size_t off;

	if (!len)
		return 0;
	b = kx_find(x, uaddr, len, 0, &off);
	if (!b)
		return -EFAULT;
	memcpy(dst, b->mem + off, len);
	return 0;
}

static int kx_ua_write(void *ctx, __u64 uaddr, const void *src, size_t len)
{
	struct kx_xfer *x = ctx;
	struct kx_buf *b;
	size_t off;

	if (!len)
		return 0;
	b = kx_find(x, uaddr, len, 1, &off);
	if (!b)
		return -EFAULT;
	memcpy(b->mem + off, src, len);
	if (off + len > b->hi)
		b->hi = off + len;
	b->written = 1;
	return 0;
}

/* kx_ua_read() then kx_ua_write() of the same bytes (D10's probe), uncopied. */
static int kx_ua_probe(void *ctx, __u64 uaddr, size_t len)
{
	struct kx_xfer *x = ctx;
	struct kx_buf *b;
	size_t off;

	if (!len)
		return 0;
	if (!kx_find(x, uaddr, len, 0, &off) || !(b = kx_find(x, uaddr, len, 1, &off)))
		return -EFAULT;
	/*
	 * What the write back would leave: the bytes the read found.  They
	 * are the ones already there unless the read came from another
	 * buffer, which the caller's next write over the same range replaces.
	 */
	if (off + len > b->hi)
		b->hi = off + len;
	b->written = 1;
	return 0;
}

static int kx_pua_read(void *ctx, void *dst, __u64 uaddr, size_t len)
{
	const struct kx_xfer *x = ctx;

	return x->path == KX_PATH_PVM ? kx_pvm_read(x->tid, dst, uaddr, len) : -EPERM;
}

static int kx_pua_write(void *ctx, __u64 uaddr, const void *src, size_t len)
{
	const struct kx_xfer *x = ctx;

	if (x->path != KX_PATH_PVM)
		return -EPERM;
	return kx_pvm_write(x->tid, uaddr, src, len) == (ssize_t)len ? 0 : -EFAULT;
}

const struct kuaccess *kx_xfer_ua(const struct kx_xfer *x)
{
	unsigned int nr = x->plan.nr;

	return nr == KEVENT_IOC_NR_RING_INIT || nr == KEVENT_IOC_NR_WAIT ||
	       nr == KEVENT_IOC_NR_COMMIT ? &x->pua : &x->ua;
}

void kx_xfer_init(struct kx_xfer *x, enum kx_path path, pid_t tid, __u64 arg, size_t usize)
{
	memset(x, 0, sizeof(*x));
	x->path = path;
	x->tid = tid;
	x->arg = arg;
	x->usize = usize;
	x->ua.read = kx_ua_read;
	x->ua.write = kx_ua_write;
	x->ua.probe = kx_ua_probe;
	x->ua.ctx = x;
	x->pua.read = kx_pua_read;
	x->pua.write = kx_pua_write;
	x->pua.ctx = x;
}

static int kx_ranges_ok(const struct kdisp_range *r, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (!kx_range_ok(&(struct kx_iov){ r[i].addr, r[i].len }))
			return 0;
	return 1;
}

int kx_xfer_set_plan(struct kx_xfer *x, const struct kdisp_plan *plan)
{
	if (!kx_ranges_ok(plan->in, plan->nin) || !kx_ranges_ok(plan->out, plan->nout) ||
	    plan->reply_len > sizeof(x->reply))
		return -EFAULT;
	kx_xfer_free(x);
	x->plan = *plan;
	x->nbuf = kx_distinct(plan, x->buf);
	for (unsigned int i = 0; i < x->nbuf; i++)
		if (!(x->buf[i].mem = calloc(1, x->buf[i].r.len)))
			return -ENOMEM;
	return 0;
}

void kx_xfer_free(struct kx_xfer *x)
{
	for (unsigned int i = 0; i < x->nbuf; i++)
		free(x->buf[i].mem);
	memset(x->buf, 0, sizeof(x->buf));
	x->nbuf = 0;
}

void kx_xfer_load_retry(struct kx_xfer *x, const void *in_buf, size_t in_bufsz)
{
	const unsigned char *p = (const unsigned char *)in_buf + x->usize;

	/* The caller checked in_bufsz against kx_layout_data for this plan. */
	(void)in_bufsz;
	for (unsigned int i = 0; i < x->nbuf; i++) {
		memcpy(x->buf[i].mem, p, x->buf[i].r.len);
		p += x->buf[i].r.len;
	}
}

int kx_pvm_read(pid_t tid, void *dst, __u64 addr, size_t len)
{
	struct iovec local = { dst, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (!len)
		return 0;
	n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return errno == EFAULT || errno == ENOMEM ? -EFAULT : -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

ssize_t kx_pvm_write(pid_t tid, __u64 addr, const void *src, size_t len)
{
	struct iovec local = { (void *)src, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (!len)
		return 0;
	n = process_vm_writev(tid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return errno == EFAULT || errno == ENOMEM ? -EFAULT : -errno;
	return n;
}

int kx_xfer_load_pvm(struct kx_xfer *x)
{
	/* Reading the output ranges too makes an unmapped buffer fail now. */
	for (unsigned int i = 0; i < x->nbuf; i++) {
		int err = kx_pvm_read(x->tid, x->buf[i].mem, x->buf[i].r.addr, x->buf[i].r.len);

		if (err)
			return err;
	}
	return 0;
}

static int kx_is_get_events(const struct kx_xfer *x)
{
	return x->plan.nr == KEVENT_IOC_NR_GET_EVENTS;
}

int kx_xfer_flush_pvm(struct kx_xfer *x, int result)
{
	if (result < 0)
		return result;
	if (x->plan.reply_len && kx_pvm_write(x->tid, x->arg, x->reply, x->usize) != (ssize_t)x->usize)
		return -EFAULT;
	for (unsigned int i = 0; i < x->nbuf; i++) {
		struct kx_buf *b = &x->buf[i];
		ssize_t n;

		if (!b->written)
			continue;
		n = kx_pvm_write(x->tid, b->r.addr, b->mem, b->hi);
		if (n == (ssize_t)b->hi)
			continue;
		if (!kx_is_get_events(x))
			return -EFAULT;
		/* D10: the entries that arrived count; none at all is a fault. */
		n = n > 0 ? n / (ssize_t)sizeof(struct ukevent) : 0;
		return n > 0 ? (int)n : -EFAULT;
	}
	return result;
}

/* The private copy of plan.out[i]. */
static struct kx_buf *kx_out_buf(struct kx_xfer *x, unsigned int i)
{
	size_t off;

	return kx_find(x, x->plan.out[i].addr, x->plan.out[i].len, 1, &off);
}

/*
 * The retry reply fills the out iovecs in order: every output range up to
 * the last one written, that one up to its written prefix.
 */
int kx_xfer_retry_out(struct kx_xfer *x, int result, void **buf, size_t *len)
{
	size_t rl = x->plan.reply_len ? x->usize : 0, ol = 0;
	unsigned int last = 0, i;
	unsigned char *p;

	*buf = NULL;
	*len = 0;
	if (result < 0)
		return 0;
	for (i = 0; i < x->plan.nout; i++)
		if (kx_out_buf(x, i)->written)
			last = i + 1;
	for (i = 0; i < last; i++)
		ol += i + 1 < last ? x->plan.out[i].len : kx_out_buf(x, i)->hi;
	if (!rl && !ol)
		return 0;
	*buf = malloc(rl + ol);
	if (!*buf)
		return -ENOMEM;
	memcpy(*buf, x->reply, rl);
	p = (unsigned char *)*buf + rl;
	for (i = 0; i < last; i++) {
		struct kx_buf *b = kx_out_buf(x, i);
		size_t n = i + 1 < last ? x->plan.out[i].len : b->hi;

		memcpy(p, b->mem, n);
		p += n;
	}
	*len = rl + ol;
	return 0;
}

const void *kx_xfer_written(const struct kx_xfer *x, size_t *len)
{
	for (unsigned int i = 0; i < x->nbuf; i++)
		if (x->buf[i].written) {
			*len = x->buf[i].hi;
			return x->buf[i].mem;
		}
	*len = 0;
	return NULL;
}

/* ---- the path choice and the flow ---- */

/* B4: the entries one retry direction holds beside a wrapper of usize bytes. */
static __u32 kx_retry_max_nr(size_t usize)
{
	__u32 n = (__u32)((KX_RETRY_DIR_MAX - usize) / sizeof(struct ukevent));

	return n < KX_RETRY_MAX_NR ? n : KX_RETRY_MAX_NR;
}

_Static_assert((KX_RETRY_DIR_MAX - KEVENT_GET_EVENTS_ARG_SIZE_VER0) / sizeof(struct ukevent) ==
	       KX_RETRY_MAX_NR, "B4: 3276 entries beside a VER0 wrapper");

void kx_xfer_ctx(const struct kx_xfer *x, unsigned int cmd, struct kdisp_ctx *ctx)
{
	unsigned int nr = _IOC_NR(cmd);
	/* An array call's own wrapper counts; INFO reports the VER0 case. */
	size_t usize = nr == KEVENT_IOC_NR_CTL || nr == KEVENT_IOC_NR_GET_EVENTS ?
		       x->usize : KEVENT_GET_EVENTS_ARG_SIZE_VER0;

	if (x->path == KX_PATH_PVM) {
		ctx->max_ctl_num = ctx->max_get_nr = KX_PVM_MAX_NR;
		ctx->features |= KEVENT_FEAT_PROCESS_VM | KEVENT_FEAT_URING;	/* D53 */
	} else {
		ctx->max_ctl_num = ctx->max_get_nr = kx_retry_max_nr(usize);
		ctx->features |= KEVENT_FEAT_RETRY_PATH;
	}
}

static int kx_pvm_allowed(struct kx_paths *paths, const struct kx_round *rd)
{
	/*
	 * A fresh request (no data yet) tries process memory first (B2).
	 * Without retry rounds (a FUSE file) every request is fresh: the
	 * kernel's fixed _IOC_SIZE copy of a restricted ioctl is no round.
	 */
	return (paths->no_retry || (!rd->in_bufsz && !rd->out_bufsz)) && rd->tid &&
	       !paths->no_process_vm &&
	       !atomic_load(&paths->pvm_refused);
}

int kx_xfer_start(struct kx_xfer *x, struct kx_paths *paths, const struct kx_round *rd,
		  struct kx_layout *l)
{
	size_t usize = _IOC_SIZE(rd->cmd);

	if (kx_pvm_allowed(paths, rd)) {
		int err;

		kx_xfer_init(x, KX_PATH_PVM, rd->tid, rd->arg, usize);
		x->round = "1";
		err = kx_pvm_read(rd->tid, x->hdr, rd->arg, usize);
		if (err != -EPERM || paths->no_retry)
			return err;
		if (!atomic_exchange(&paths->pvm_refused, 1))
			kc_warn("process memory refused (EPERM, Yama ptrace_scope?): using the ioctl retry path");
	} else if (paths->no_retry) {
		return -EPERM;
	}
	kx_xfer_init(x, KX_PATH_RETRY, rd->tid, rd->arg, usize);
	x->compat = rd->compat;
	if (rd->in_bufsz < usize) {
		kx_layout_header(l, rd->arg, usize, _IOC_DIR(rd->cmd) & _IOC_READ);
		return KX_ASK_HEADER;
	}
	x->round = rd->in_bufsz == usize ? "header" : "data";
	memcpy(x->hdr, rd->in_buf, usize);
	return 0;
}

int kx_xfer_load(struct kx_xfer *x, const struct kdisp_plan *plan, const struct kx_round *rd,
		 struct kx_layout *l)
{
	int err = kx_xfer_set_plan(x, plan);

	if (err)
		return err;
	if (x->path == KX_PATH_PVM)
		return kx_xfer_load_pvm(x);
	if (x->compat) {
		err = kx_plan_compat_ok(&x->plan);
		if (err)
			return err;
	}
	err = kx_layout_data(l, x->arg, x->usize, &x->plan);
	if (err)
		return err;
	if (!kx_layout_matches(l, rd->in_bufsz, rd->out_bufsz))
		return KX_ASK;
	kx_xfer_load_retry(x, rd->in_buf, rd->in_bufsz);
	return 0;
}

int kx_xfer_may_block(const struct kx_xfer *x)
{
	return x->path == KX_PATH_PVM;
}

int kx_xfer_finish(struct kx_xfer *x, int result, void **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	if (x->path == KX_PATH_PVM)
		return kx_xfer_flush_pvm(x, result);
	if (result >= 0) {
		int err = kx_xfer_retry_out(x, result, buf, len);

		if (err)
			return err;
	}
	return result;
}
