// SPDX-License-Identifier: GPL-2.0
/* One ioctl's user memory: round layouts, private buffers, the accessor. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/uio.h>

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

int kx_layout_data(struct kx_layout *l, __u64 arg, size_t usize, const struct kdisp_plan *plan)
{
	const struct kdisp_range *in = &plan->in, *out = &plan->out;

	memset(l, 0, sizeof(*l));
	kx_push(l->in, &l->nin, &l->in_total, arg, usize);
	if (in->len)
		kx_push(l->in, &l->nin, &l->in_total, in->addr, in->len);
	if (out->len && !kx_same_range(in, out))
		kx_push(l->in, &l->nin, &l->in_total, out->addr, out->len);
	if (plan->reply_len)
		kx_push(l->out, &l->nout, &l->out_total, arg, usize);
	if (out->len)
		kx_push(l->out, &l->nout, &l->out_total, out->addr, out->len);
	if (l->in_total > KX_RETRY_DIR_MAX || l->out_total > KX_RETRY_DIR_MAX)
		return -E2BIG;
	return 0;
}

int kx_plan_compat_ok(const struct kdisp_plan *plan)
{
	const struct kdisp_range *r[2] = { &plan->in, &plan->out };

	for (int i = 0; i < 2; i++)
		if (r[i]->len && (r[i]->addr > UINT32_MAX || r[i]->len > (1ULL << 32) - r[i]->addr))
			return -EFAULT;
	return 0;
}

int kx_layout_matches(const struct kx_layout *l, size_t in_bufsz, size_t out_bufsz)
{
	return l->in_total == in_bufsz && l->out_total == out_bufsz;
}

void kx_fix_header(unsigned int cmd, void *hdr, size_t usize, int nonblock, __u32 max_nr)
{
	struct kevent_get_events_arg a;

	if (_IOC_TYPE(cmd) != KEVENT_IOC_MAGIC || _IOC_NR(cmd) != KEVENT_IOC_NR_GET_EVENTS ||
	    usize < KEVENT_GET_EVENTS_ARG_SIZE_VER0)
		return;
	memcpy(&a, hdr, sizeof(a));
	if (nonblock)
		a.ioc_flags |= KEVENT_GET_NONBLOCK;
	if (a.min_nr <= a.max_nr && a.max_nr > max_nr) {
		a.max_nr = max_nr;
		if (a.min_nr > max_nr)
			a.min_nr = max_nr;
	}
	memcpy(hdr, &a, sizeof(a));
}

/* ---- the accessor the core sees: private buffers only ---- */

static int kx_within(const struct kdisp_range *r, __u64 uaddr, size_t len, size_t *off)
{
	if (uaddr < r->addr || uaddr - r->addr > r->len || len > r->len - (uaddr - r->addr))
		return 0;
	*off = uaddr - r->addr;
	return 1;
}

static int kx_ua_read(void *ctx, void *dst, __u64 uaddr, size_t len)
{
	struct kx_xfer *x = ctx;
	size_t off;

	if (kx_within(&x->plan.in, uaddr, len, &off) && x->inbuf) {
		memcpy(dst, x->inbuf + off, len);
		return 0;
	}
	if (kx_within(&x->plan.out, uaddr, len, &off) && x->outbuf) {
		memcpy(dst, x->outbuf + off, len);
		return 0;
	}
	return len ? -EFAULT : 0;
}

static int kx_ua_write(void *ctx, __u64 uaddr, const void *src, size_t len)
{
	struct kx_xfer *x = ctx;
	size_t off;

	if (!len)
		return 0;
	if (!x->outbuf || !kx_within(&x->plan.out, uaddr, len, &off))
		return -EFAULT;
	memcpy(x->outbuf + off, src, len);
	if (off + len > x->out_hi)
		x->out_hi = off + len;
	x->out_written = 1;
	return 0;
}

void kx_xfer_init(struct kx_xfer *x, enum kx_path path, pid_t tid, __u64 arg, size_t usize)
{
	/* hdr is filled by the caller; everything else starts empty. */
	memset(x, 0, offsetof(struct kx_xfer, hdr));
	memset(x->reply, 0, sizeof(x->reply));
	x->inbuf = NULL;
	x->outbuf = NULL;
	x->out_hi = 0;
	x->out_written = 0;
	x->path = path;
	x->tid = tid;
	x->arg = arg;
	x->usize = usize;
	x->ua.read = kx_ua_read;
	x->ua.write = kx_ua_write;
	x->ua.ctx = x;
}

int kx_xfer_set_plan(struct kx_xfer *x, const struct kdisp_plan *plan)
{
	struct kx_iov in = { plan->in.addr, plan->in.len };
	struct kx_iov out = { plan->out.addr, plan->out.len };

	if (!kx_range_ok(&in) || !kx_range_ok(&out) || plan->reply_len > sizeof(x->reply))
		return -EFAULT;
	kx_xfer_free(x);
	x->plan = *plan;
	if (in.len && !(x->inbuf = malloc(in.len)))
		return -ENOMEM;
	if (out.len && !(x->outbuf = calloc(1, out.len)))
		return -ENOMEM;
	return 0;
}

void kx_xfer_free(struct kx_xfer *x)
{
	free(x->inbuf);
	free(x->outbuf);
	x->inbuf = NULL;
	x->outbuf = NULL;
	x->out_hi = 0;
	x->out_written = 0;
}

void kx_xfer_load_retry(struct kx_xfer *x, const void *in_buf, size_t in_bufsz)
{
	const unsigned char *p = (const unsigned char *)in_buf + x->usize;
	const struct kdisp_range *in = &x->plan.in, *out = &x->plan.out;

	/* The caller checked in_bufsz against kx_layout_data for this plan. */
	(void)in_bufsz;
	if (in->len) {
		memcpy(x->inbuf, p, in->len);
		p += in->len;
	}
	if (!out->len)
		return;
	if (kx_same_range(in, out))
		memcpy(x->outbuf, x->inbuf, out->len);
	else
		memcpy(x->outbuf, p, out->len);
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
	const struct kdisp_range *in = &x->plan.in, *out = &x->plan.out;
	int err;

	err = kx_pvm_read(x->tid, x->inbuf, in->addr, in->len);
	if (err || !out->len)
		return err;
	if (kx_same_range(in, out)) {
		memcpy(x->outbuf, x->inbuf, out->len);
		return 0;
	}
	/* Reading the output range first makes an unmapped buffer fail now. */
	return kx_pvm_read(x->tid, x->outbuf, out->addr, out->len);
}

static int kx_is_get_events(const struct kx_xfer *x)
{
	return x->plan.nr == KEVENT_IOC_NR_GET_EVENTS;
}

int kx_xfer_flush_pvm(struct kx_xfer *x, int result)
{
	ssize_t n;

	if (result < 0)
		return result;
	if (x->plan.reply_len && kx_pvm_write(x->tid, x->arg, x->reply, x->usize) != (ssize_t)x->usize)
		return -EFAULT;
	if (!x->out_written)
		return result;
	n = kx_pvm_write(x->tid, x->plan.out.addr, x->outbuf, x->out_hi);
	if (n == (ssize_t)x->out_hi)
		return result;
	if (!kx_is_get_events(x))
		return -EFAULT;
	/* D10: the entries that arrived count; none at all is a fault. */
	n = n > 0 ? n / (ssize_t)sizeof(struct ukevent) : 0;
	return n > 0 ? (int)n : -EFAULT;
}

int kx_xfer_retry_out(struct kx_xfer *x, int result, void **buf, size_t *len)
{
	size_t rl = x->plan.reply_len ? x->usize : 0;
	size_t ol = result >= 0 && x->out_written ? x->out_hi : 0;

	*buf = NULL;
	*len = 0;
	if (result < 0 || (!rl && !ol))
		return 0;
	*buf = malloc(rl + ol);
	if (!*buf)
		return -ENOMEM;
	memcpy(*buf, x->reply, rl);
	if (ol)
		memcpy((unsigned char *)*buf + rl, x->outbuf, ol);
	*len = rl + ol;
	return 0;
}
