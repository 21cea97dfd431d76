// SPDX-License-Identifier: GPL-2.0
/* Reading a fuzz program (prog.h); shared by both modes of the harness. */
#include <string.h>

#include "kfuzz.h"
#include "test-origin.h"

#define UKSZ	sizeof(struct ukevent)

bool kf_bytes(struct kf_cur *c, void *dst, size_t n)
{
	if (c->left < n)
		return false;
	memcpy(dst, c->p, n);
	c->p += n;
	c->left -= n;
	return true;
}

static bool le(struct kf_cur *c, unsigned int n, __u64 *v)
{
	uint8_t b[8];
	unsigned int i;

	if (!kf_bytes(c, b, n))
		return false;
	*v = 0;
	for (i = 0; i < n; i++)
		*v |= (__u64)b[i] << (8 * i);
	return true;
}

bool kf_u8(struct kf_cur *c, unsigned int *v)
{
	__u64 x;

	if (!le(c, 1, &x))
		return false;
	*v = (unsigned int)x;
	return true;
}

bool kf_u16(struct kf_cur *c, unsigned int *v)
{
	__u64 x;

	if (!le(c, 2, &x))
		return false;
	*v = (unsigned int)x;
	return true;
}

bool kf_u32(struct kf_cur *c, __u32 *v)
{
	__u64 x;

	if (!le(c, 4, &x))
		return false;
	*v = (__u32)x;
	return true;
}

bool kf_u64(struct kf_cur *c, __u64 *v)
{
	return le(c, 8, v);
}

__u64 kf_uaddr(__u64 base, __u32 off)
{
	switch (off) {
	case KF_ADDR_NULL:
		return 0;
	case KF_ADDR_BEFORE:
		return base - UKSZ;
	case KF_ADDR_WRAP:
		return ~0ull - 7;
	default:
		return base + off;
	}
}

/* ---- ioctl operations ---- */

static unsigned int ioc_cmd(unsigned int nr, unsigned int dir, unsigned int sz,
			    size_t ver0, unsigned int ioc)
{
	if (!sz)
		sz = (unsigned int)ver0;
	if (ioc & KF_IOC_WRONG_DIR)
		dir ^= _IOC_READ | _IOC_WRITE;
	if (ioc & KF_IOC_UNKNOWN_NR)
		nr += 16;	/* past every number the header defines */
	return _IOC(dir, ioc & KF_IOC_WRONG_MAGIC ? KEVENT_IOC_MAGIC + 1 : KEVENT_IOC_MAGIC,
		    nr, sz & 0x3fff);
}

/* A wrapper struct as a caller of size _IOC_SIZE(cmd) would pass it. */
static void ioc_struct(struct kf_ioc *io, unsigned char *arg, const void *s, size_t ssize,
		       unsigned int tail, unsigned int ioc)
{
	size_t usize = _IOC_SIZE(io->cmd);

	memset(arg, 0, usize + 1);
	memcpy(arg, s, usize < ssize ? usize : ssize);
	if (usize > ssize && tail)
		arg[usize - 1] = (unsigned char)tail;
	io->arg_len = usize + (ioc & KF_IOC_LEN_PLUS1 ? 1 : 0);
	io->arg_null = ioc & KF_IOC_ARG_NULL;
	io->defer = ioc & KF_IOC_DEFER;
}

static bool dec_ctl(struct kf_cur *c, struct kf_ioc *io, unsigned char *arg, __u64 base)
{
	unsigned int sz, tail, ioc;
	struct kevent_ctl_arg a;
	__u32 addr;

	if (!kf_u32(c, &a.cmd) || !kf_u32(c, &a.num) || !kf_u32(c, &addr) ||
	    !kf_u16(c, &sz) || !kf_u8(c, &tail) || !kf_u8(c, &ioc))
		return false;
	a.events = kf_uaddr(base, addr);
	io->cmd = ioc_cmd(KEVENT_IOC_NR_CTL, _IOC_WRITE, sz, sizeof(a), ioc);
	ioc_struct(io, arg, &a, sizeof(a), tail, ioc);
	return true;
}

static bool dec_get(struct kf_cur *c, struct kf_ioc *io, unsigned char *arg, __u64 base)
{
	unsigned int sz, tail, ioc, park;
	struct kevent_get_events_arg a;
	__u32 addr;

	memset(&a, 0, sizeof(a));	/* timeout_ts (VER1) stays 0: the format has no field for it */
	if (!kf_u32(c, &a.min_nr) || !kf_u32(c, &a.max_nr) || !kf_u64(c, &a.timeout_ns) ||
	    !kf_u32(c, &addr) || !kf_u32(c, &a.flags) || !kf_u32(c, &a.ioc_flags) ||
	    !kf_u16(c, &sz) || !kf_u8(c, &tail) || !kf_u8(c, &ioc) || !kf_u8(c, &park))
		return false;
	a.events = kf_uaddr(base, addr);
	/* sz 0: the VER0 size, as the seeds were written (prog.h) */
	io->cmd = ioc_cmd(KEVENT_IOC_NR_GET_EVENTS, _IOC_WRITE, sz, KEVENT_GET_EVENTS_ARG_SIZE_VER0, ioc);
	ioc_struct(io, arg, &a, sizeof(a), tail, ioc);
	io->park = park & KF_PARK_WR;
	return true;
}

static bool dec_info(struct kf_cur *c, struct kf_ioc *io, unsigned char *arg)
{
	unsigned int sz, ioc;

	if (!kf_u16(c, &sz) || !kf_u8(c, &ioc))
		return false;
	io->cmd = ioc_cmd(KEVENT_IOC_NR_INFO, _IOC_READ, sz, KEVENT_INFO_SIZE_VER0, ioc);
	ioc_struct(io, arg, "", 0, 0, ioc);
	return true;
}

static bool dec_setabi(struct kf_cur *c, struct kf_ioc *io, unsigned char *arg)
{
	unsigned int sz, tail, ioc;
	struct kevent_set_abi a;

	if (!kf_u32(c, &a.revision) || !kf_u32(c, &a.flags) || !kf_u64(c, &a.__reserved) ||
	    !kf_u16(c, &sz) || !kf_u8(c, &tail) || !kf_u8(c, &ioc))
		return false;
	io->cmd = ioc_cmd(KEVENT_IOC_NR_SET_ABI, _IOC_WRITE, sz, sizeof(a), ioc);
	ioc_struct(io, arg, &a, sizeof(a), tail, ioc);
	return true;
}

static bool dec_raw_ioctl(struct kf_cur *c, struct kf_ioc *io, unsigned char *arg)
{
	unsigned int len;
	__u32 cmd;

	if (!kf_u32(c, &cmd) || !kf_u16(c, &len) || len > 0x3fff + 2 || !kf_bytes(c, arg, len))
		return false;
	io->cmd = cmd;
	io->arg_len = len;
	return true;
}

bool kf_decode_ioc(struct kf_cur *c, unsigned int op, struct kf_ioc *io,
		   unsigned char *arg, __u64 base)
{
	unsigned int slot, uid;

	memset(io, 0, sizeof(*io));
	if (!kf_u8(c, &slot) || !kf_u8(c, &uid))
		return false;
	io->slot = slot % KF_NQ;
	io->uid = uid % KF_NUID;
	switch (op) {
	case KF_OP_CTL:
		return dec_ctl(c, io, arg, base);
	case KF_OP_GET:
		return dec_get(c, io, arg, base);
	case KF_OP_INFO:
		return dec_info(c, io, arg);
	case KF_OP_SETABI:
		return dec_setabi(c, io, arg);
	default:
		return dec_raw_ioctl(c, io, arg);
	}
}

/* ---- user memory ---- */

static void entry_expand(const uint8_t *e, struct ukevent *uk)
{
	unsigned int fl = e[3];

	memset(uk, 0, sizeof(*uk));
	uk->id.raw[0] = e[0];
	uk->id.raw[1] = e[1];
	uk->type = e[2];
	uk->req_flags = (fl & KF_E_ONESHOT ? KEVENT_REQ_ONESHOT : 0) |
			(fl & KF_E_REQ_UNK ? 0x100u : 0) |
			(fl & KF_E_REQ_HIGH ? 0x80000000u : 0) |
			(!(fl & KF_E_GARBAGE) && (e[8] & KF_E8_DISPATCH) ? KEVENT_REQ_DISPATCH : 0);
	uk->event = (__u32)e[4] | (__u32)e[5] << 8 |
		    (fl & KF_E_READY_ADD ? KTEST_READY_AT_ADD : 0) |
		    (fl & KF_E_FAIL_ATT ? KTEST_FAIL_ATTACH : 0) |
		    (fl & KF_E_READY_MOD ? KTEST_READY_AT_MODIFY : 0) |
		    (fl & KF_E_FAIL_MOD ? KTEST_FAIL_MODIFY : 0) |
		    (!(fl & KF_E_GARBAGE) && (e[8] & KF_E8_STALE_FD) ? KTEST_STALE_FD : 0);
	uk->user[0] = e[6];
	uk->user[1] = e[7];
	if (fl & KF_E_GARBAGE) {
		uk->ret_flags = e[8];
		uk->ret_data[0] = (__u32)e[9] * 0x01010101u;
		uk->ret_data[1] = (__u32)e[10] << 24 | e[11];
	}
}

/* Clipped to the arena: a program may write up to its end, not past it. */
static void put_clipped(kf_put_fn put, void *ctx, size_t off, const void *src, size_t len)
{
	if (off >= KF_ARENA)
		return;
	if (len > KF_ARENA - off)
		len = KF_ARENA - off;
	put(ctx, off, src, len);
}

void kf_decode_poke(struct kf_cur *c, unsigned int op, kf_put_fn put, void *ctx)
{
	uint8_t e[KF_ENTRY_LEN];
	struct ukevent uk;
	unsigned int n, i;
	__u32 off;

	if (!kf_u32(c, &off))
		return;
	if (op == KF_OP_RAW) {
		if (kf_u16(c, &n) && c->left >= n) {
			put_clipped(put, ctx, off, c->p, n);
			c->p += n;
			c->left -= n;
		}
		return;
	}
	if (!kf_u8(c, &n))
		return;
	for (i = 0; i < n && kf_bytes(c, e, sizeof(e)); i++) {
		entry_expand(e, &uk);
		put_clipped(put, ctx, (size_t)off + i * UKSZ, &uk, UKSZ);
	}
}
