// SPDX-License-Identifier: GPL-2.0
/* Retry-round planning, header fixes and the private-buffer accessor. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kc-xfer.h"

#define UK sizeof(struct ukevent)

static struct kdisp_plan ctl_plan(__u64 ev, unsigned int num)
{
	struct kdisp_plan p;

	memset(&p, 0, sizeof(p));
	p.cmd = KEVENT_IOC_CTL;
	p.nr = KEVENT_IOC_NR_CTL;
	p.in = (struct kdisp_range){ ev, (__u64)num * UK };
	p.out = p.in;
	return p;
}

static struct kdisp_plan get_plan(__u64 ev, unsigned int max)
{
	struct kdisp_plan p;

	memset(&p, 0, sizeof(p));
	p.cmd = KEVENT_IOC_GET_EVENTS;
	p.nr = KEVENT_IOC_NR_GET_EVENTS;
	p.out = (struct kdisp_range){ ev, (__u64)max * UK };
	return p;
}

Test(layout, first_round_fetches_the_wrapper)
{
	struct kx_layout l;

	kx_layout_header(&l, 0x1000, 16, 0);
	cr_assert_eq(l.nin, 1);
	cr_assert_eq(l.in[0].addr, 0x1000);
	cr_assert_eq(l.in[0].len, 16);
	cr_assert_eq(l.nout, 0);
	kx_layout_header(&l, 0x1000, sizeof(struct kevent_info), 1);
	cr_assert_eq(l.nout, 1);
	cr_assert_eq(l.out_total, sizeof(struct kevent_info));
}

Test(layout, ctl_data_round)
{
	struct kdisp_plan p = ctl_plan(0x8000, 1);
	struct kx_layout l;

	cr_assert_eq(kx_layout_data(&l, 0x1000, 16, &p), 0);
	/* The wrapper again: a retry after the first must carry in data (6.1). */
	cr_assert_eq(l.nin, 2);
	cr_assert_eq(l.in[0].addr, 0x1000);
	cr_assert_eq(l.in[1].addr, 0x8000);
	cr_assert_eq(l.in[1].len, UK);
	cr_assert_eq(l.nout, 1);
	cr_assert_eq(l.out[0].addr, 0x8000);
	cr_assert(kx_layout_matches(&l, 16 + UK, UK));
	cr_assert_not(kx_layout_matches(&l, 16, 0));
	cr_assert_not(kx_layout_matches(&l, 16 + UK, 0));
}

/* D28: a 32-bit caller's arrays above 4 GiB are -EFAULT, not the kernel's EIO. */
Test(layout, compat_arrays_below_4g)
{
	struct kdisp_plan p = ctl_plan(0x8000, 1);

	cr_assert_eq(kx_plan_compat_ok(&p), 0);
	p = ctl_plan(1ULL << 40, 1);
	cr_assert_eq(kx_plan_compat_ok(&p), -EFAULT);
	p = ctl_plan(0xffffffffULL - UK + 1, 1);
	cr_assert_eq(kx_plan_compat_ok(&p), 0, "the last 40 bytes below 4 GiB");
	p = ctl_plan(0xffffffffULL - UK + 2, 1);
	cr_assert_eq(kx_plan_compat_ok(&p), -EFAULT, "straddles 4 GiB");
}

Test(layout, ctl_limit_is_3276)
{
	struct kdisp_plan p = ctl_plan(0x8000, KX_RETRY_MAX_NR);
	struct kx_layout l;

	cr_assert_eq(kx_layout_data(&l, 0x1000, 16, &p), 0);
	cr_assert_leq(l.in_total, KX_RETRY_DIR_MAX);
	p = ctl_plan(0x8000, KX_RETRY_MAX_NR + 1);
	cr_assert_eq(kx_layout_data(&l, 0x1000, 16, &p), -E2BIG);
	p = ctl_plan(0x8000, KEVENT_MAX_EVENTS - 1);
	cr_assert_eq(kx_layout_data(&l, 0x1000, 16, &p), -E2BIG);
}

Test(layout, get_events_reads_its_output_range_too)
{
	struct kdisp_plan p = get_plan(0x9000, KX_RETRY_MAX_NR);
	struct kx_layout l;

	cr_assert_eq(kx_layout_data(&l, 0x1000, 32, &p), 0);
	cr_assert_eq(l.nin, 2);
	cr_assert_eq(l.in[1].addr, 0x9000);
	cr_assert_eq(l.in_total, KX_RETRY_DIR_MAX);	/* exactly 128 KiB */
	cr_assert_eq(l.nout, 1);
	cr_assert_eq(l.out_total, KX_RETRY_MAX_NR * UK);
	p = get_plan(0x9000, KX_RETRY_MAX_NR + 1);
	cr_assert_eq(kx_layout_data(&l, 0x1000, 32, &p), -E2BIG);
}

Test(layout, reply_struct_goes_out)
{
	struct kdisp_plan p;
	struct kx_layout l;

	memset(&p, 0, sizeof(p));
	p.cmd = KEVENT_IOC_INFO;
	p.reply_len = sizeof(struct kevent_info);
	cr_assert_eq(kx_layout_data(&l, 0x1000, 200, &p), 0);
	cr_assert_eq(l.nin, 1);
	cr_assert_eq(l.nout, 1);
	cr_assert_eq(l.out[0].len, 200);	/* the caller's size: tail zeroed */
	cr_assert(kx_layout_matches(&l, 200, 200));
}

Test(layout, every_vector_count_stays_small)
{
	struct kdisp_plan p = get_plan(0x9000, 10);
	struct kx_layout l;

	p.in = (struct kdisp_range){ 0x7000, 80 };
	p.reply_len = 8;
	cr_assert_eq(kx_layout_data(&l, 0x1000, 32, &p), 0);
	cr_assert_leq(l.nin + l.nout, 256);
	cr_assert_eq(l.nin, 3);
	cr_assert_eq(l.nout, 2);
}

static struct kevent_get_events_arg fixed(struct kevent_get_events_arg a, int nb, __u32 max)
{
	kx_fix_header(KEVENT_IOC_GET_EVENTS, &a, sizeof(a), nb, max);
	return a;
}

Test(header, nonblock_joins_ioc_flags)
{
	struct kevent_get_events_arg a = { .min_nr = 1, .max_nr = 4 };

	cr_assert_eq(fixed(a, 1, 4095).ioc_flags, KEVENT_GET_NONBLOCK);
	cr_assert_eq(fixed(a, 0, 4095).ioc_flags, 0);
}

Test(header, clamp_to_path)
{
	struct kevent_get_events_arg a = { .min_nr = 4000, .max_nr = 4095 };
	struct kevent_get_events_arg b;

	b = fixed(a, 0, KX_RETRY_MAX_NR);
	cr_assert_eq(b.max_nr, KX_RETRY_MAX_NR);
	cr_assert_eq(b.min_nr, KX_RETRY_MAX_NR);
	a.min_nr = 10;
	b = fixed(a, 0, KX_RETRY_MAX_NR);
	cr_assert_eq(b.min_nr, 10);
	/* min > max stays for the core to refuse (D12). */
	a.min_nr = 4095;
	a.max_nr = 4000;
	b = fixed(a, 0, KX_RETRY_MAX_NR);
	cr_assert_eq(b.min_nr, 4095);
	cr_assert_eq(b.max_nr, 4000);
}

Test(header, other_commands_and_short_structs_untouched)
{
	struct kevent_get_events_arg a = { .min_nr = 4000, .max_nr = 4095 }, b = a;
	struct kevent_ctl_arg c = { .cmd = 0, .num = 4000 }, d = c;

	kx_fix_header(KEVENT_IOC_GET_EVENTS, &b, 16, 1, 10);
	cr_assert_arr_eq(&a, &b, sizeof(a));
	kx_fix_header(KEVENT_IOC_CTL, &d, sizeof(d), 1, 10);
	cr_assert_arr_eq(&c, &d, sizeof(c));
}

static void fill(struct ukevent *u, unsigned int n, unsigned int base)
{
	memset(u, 0, n * UK);
	for (unsigned int i = 0; i < n; i++)
		u[i].id.raw[0] = base + i;
}

Test(xfer, retry_round_buffers_and_accessor)
{
	unsigned char in[16 + 3 * UK];
	struct kdisp_plan p = ctl_plan(0x8000, 3);
	struct ukevent uk[3], got;
	struct kx_xfer x;
	void *out;
	size_t len;

	fill(uk, 3, 100);
	memset(in, 0, 16);
	memcpy(in + 16, uk, sizeof(uk));
	kx_xfer_init(&x, KX_PATH_RETRY, 0, 0x1000, 16);
	cr_assert_eq(kx_xfer_set_plan(&x, &p), 0);
	kx_xfer_load_retry(&x, in, sizeof(in));
	cr_assert_eq(x.ua.read(x.ua.ctx, &got, 0x8000 + UK, UK), 0);
	cr_assert_eq(got.id.raw[0], 101);
	/* Outside what was fetched: a fault, never a read of anything else. */
	cr_assert_eq(x.ua.read(x.ua.ctx, &got, 0x8000 + 3 * UK, UK), -EFAULT);
	cr_assert_eq(x.ua.read(x.ua.ctx, &got, 0x7ff8, UK), -EFAULT);
	cr_assert_eq(x.ua.write(x.ua.ctx, 0x8000 + 3 * UK, &got, UK), -EFAULT);
	got.id.raw[0] = 7;
	cr_assert_eq(x.ua.write(x.ua.ctx, 0x8000, &got, UK), 0);
	cr_assert_eq(kx_xfer_retry_out(&x, 1, &out, &len), 0);
	/* Only the written prefix goes back. */
	cr_assert_eq(len, UK);
	cr_assert_eq(((struct ukevent *)out)[0].id.raw[0], 7);
	free(out);
	/* An error sends nothing. */
	cr_assert_eq(kx_xfer_retry_out(&x, -EINVAL, &out, &len), 0);
	cr_assert_eq(len, 0);
	cr_assert_null(out);
	kx_xfer_free(&x);
}

Test(xfer, retry_out_keeps_untouched_entries)
{
	unsigned char in[32 + 4 * UK];
	struct kdisp_plan p = get_plan(0x9000, 4);
	struct ukevent uk[4], w;
	struct kx_xfer x;
	void *out;
	size_t len;

	fill(uk, 4, 50);
	memcpy(in + 32, uk, sizeof(uk));
	kx_xfer_init(&x, KX_PATH_RETRY, 0, 0x1000, 32);
	cr_assert_eq(kx_xfer_set_plan(&x, &p), 0);
	kx_xfer_load_retry(&x, in, sizeof(in));
	memset(&w, 0xee, sizeof(w));
	cr_assert_eq(x.ua.write(x.ua.ctx, 0x9000 + UK, &w, UK), 0);
	cr_assert_eq(kx_xfer_retry_out(&x, 2, &out, &len), 0);
	cr_assert_eq(len, 2 * UK);
	cr_assert_eq(((struct ukevent *)out)[0].id.raw[0], 50);	/* the user's own bytes */
	cr_assert_eq(((struct ukevent *)out)[1].id.raw[0], 0xeeeeeeee);
	free(out);
	kx_xfer_free(&x);
}

Test(xfer, reply_struct_with_zero_tail)
{
	struct kdisp_plan p;
	struct kx_xfer x;
	void *out;
	size_t len;

	memset(&p, 0, sizeof(p));
	p.reply_len = 8;
	kx_xfer_init(&x, KX_PATH_RETRY, 0, 0x1000, 24);
	cr_assert_eq(kx_xfer_set_plan(&x, &p), 0);
	memset(x.reply, 0xab, 8);
	cr_assert_eq(kx_xfer_retry_out(&x, 0, &out, &len), 0);
	cr_assert_eq(len, 24);
	cr_assert_eq(((unsigned char *)out)[7], 0xab);
	cr_assert_eq(((unsigned char *)out)[8], 0);
	cr_assert_eq(((unsigned char *)out)[23], 0);
	free(out);
	kx_xfer_free(&x);
}

Test(pvm, read_write_own_process)
{
	struct ukevent src[4], dst[4];
	struct kdisp_plan p;
	struct kx_xfer x;

	fill(src, 4, 10);
	p = ctl_plan((uintptr_t)src, 4);
	kx_xfer_init(&x, KX_PATH_PVM, getpid(), 0, 16);
	cr_assert_eq(kx_xfer_set_plan(&x, &p), 0);
	cr_assert_eq(kx_xfer_load_pvm(&x), 0);
	cr_assert_eq(x.ua.read(x.ua.ctx, dst, (uintptr_t)src, sizeof(dst)), 0);
	cr_assert_arr_eq(dst, src, sizeof(src));
	/* The core changes only the private copy until the flush. */
	dst[2].ret_flags = KEVENT_RET_DONE;
	cr_assert_eq(x.ua.write(x.ua.ctx, (uintptr_t)&src[2], &dst[2], UK), 0);
	cr_assert_eq(src[2].ret_flags, 0);
	cr_assert_eq(kx_xfer_flush_pvm(&x, 0), 0);
	cr_assert_eq(src[2].ret_flags, KEVENT_RET_DONE);
	kx_xfer_free(&x);
}

Test(pvm, unmapped_input_faults_before_anything)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *m = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct kdisp_plan p;
	struct kx_xfer x;

	cr_assert_neq(m, MAP_FAILED);
	munmap(m, pg);
	p = get_plan((uintptr_t)m, 2);
	kx_xfer_init(&x, KX_PATH_PVM, getpid(), 0, 32);
	cr_assert_eq(kx_xfer_set_plan(&x, &p), 0);
	cr_assert_eq(kx_xfer_load_pvm(&x), -EFAULT);
	kx_xfer_free(&x);
	cr_assert_eq(kx_pvm_read(getpid(), &x, (uintptr_t)m, 8), -EFAULT);
}

Test(pvm, get_events_partial_write_counts_what_arrived)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ukevent ev[3];
	struct kdisp_plan p;
	struct kx_xfer x;
	__u64 addr;

	cr_assert_neq(m, MAP_FAILED);
	/* Entries 0 and 1 fit before the read-only page; entry 2 crosses it. */
	addr = (uintptr_t)m + pg - 2 * UK - 8;
	cr_assert_eq(mprotect(m + pg, pg, PROT_READ), 0);
	fill(ev, 3, 1);
	p = get_plan(addr, 3);
	kx_xfer_init(&x, KX_PATH_PVM, getpid(), 0, 32);
	cr_assert_eq(kx_xfer_set_plan(&x, &p), 0);
	cr_assert_eq(kx_xfer_load_pvm(&x), 0);
	cr_assert_eq(x.ua.write(x.ua.ctx, addr, ev, sizeof(ev)), 0);
	cr_assert_eq(kx_xfer_flush_pvm(&x, 3), 2);
	cr_assert_eq(((struct ukevent *)(uintptr_t)addr)[1].id.raw[0], 2);
	kx_xfer_free(&x);

	/* A CTL write-back fault is -EFAULT (D9). */
	p = ctl_plan(addr, 3);
	kx_xfer_init(&x, KX_PATH_PVM, getpid(), 0, 16);
	cr_assert_eq(kx_xfer_set_plan(&x, &p), 0);
	cr_assert_eq(kx_xfer_load_pvm(&x), 0);
	cr_assert_eq(x.ua.write(x.ua.ctx, addr, ev, sizeof(ev)), 0);
	cr_assert_eq(kx_xfer_flush_pvm(&x, 0), -EFAULT);
	kx_xfer_free(&x);
	munmap(m, 2 * pg);
}

Test(pvm, reply_struct_written_at_arg)
{
	unsigned char user[64];
	struct kdisp_plan p;
	struct kx_xfer x;

	memset(user, 0x55, sizeof(user));
	memset(&p, 0, sizeof(p));
	p.reply_len = 16;
	kx_xfer_init(&x, KX_PATH_PVM, getpid(), (uintptr_t)user, 32);
	cr_assert_eq(kx_xfer_set_plan(&x, &p), 0);
	memset(x.reply, 0x11, 16);
	cr_assert_eq(kx_xfer_flush_pvm(&x, 0), 0);
	cr_assert_eq(user[15], 0x11);
	cr_assert_eq(user[16], 0);	/* the tail the core did not fill */
	cr_assert_eq(user[31], 0);
	cr_assert_eq(user[32], 0x55);	/* nothing beyond the caller's size */
	kx_xfer_free(&x);
}
