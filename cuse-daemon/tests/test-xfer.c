// SPDX-License-Identifier: GPL-2.0
/* Retry-round planning, the path choice and its limits, the private-buffer accessor. */
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
	p.in[0] = (struct kdisp_range){ ev, (__u64)num * UK };
	p.out[0] = p.in[0];
	p.nin = p.nout = 1;
	return p;
}

static struct kdisp_plan get_plan(__u64 ev, unsigned int max)
{
	struct kdisp_plan p;

	memset(&p, 0, sizeof(p));
	p.cmd = KEVENT_IOC_GET_EVENTS;
	p.nr = KEVENT_IOC_NR_GET_EVENTS;
	p.out[0] = (struct kdisp_range){ ev, (__u64)max * UK };
	p.nout = 1;
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

/*
 * D60, B4: INFO's max_ctl_num counts 40-byte entries; the core halves it for
 * a KEVENT_CTL_EXT batch, and half of what fits beside a VER1 wrapper is
 * one retry round of 80-byte entries.
 */
Test(layout, ctl_ext_half_batch_fits_one_round)
{
	struct kx_xfer x;
	struct kdisp_ctx ctx;
	struct kx_layout l;
	struct kdisp_plan p;
	unsigned int half;

	memset(&x, 0, sizeof(x));
	memset(&ctx, 0, sizeof(ctx));
	x.path = KX_PATH_RETRY;
	x.usize = KEVENT_CTL_ARG_SIZE_VER1;
	kx_xfer_ctx(&x, KEVENT_IOC_CTL_EXT, &ctx);
	half = ctx.max_ctl_num / 2;
	cr_assert_eq(half, 1638);
	p = ctl_plan(0x8000, 2 * half);	/* 2 * half 40-byte entries: half 80-byte ones */
	p.cmd = KEVENT_IOC_CTL_EXT;
	cr_assert_eq(kx_layout_data(&l, 0x1000, KEVENT_CTL_ARG_SIZE_VER1, &p), 0);
	p = ctl_plan(0x8000, 2 * (half + 1));
	cr_assert_eq(kx_layout_data(&l, 0x1000, KEVENT_CTL_ARG_SIZE_VER1, &p), -E2BIG);
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

	p.in[0] = (struct kdisp_range){ 0x7000, 80 };
	p.nin = 1;
	p.reply_len = 8;
	cr_assert_eq(kx_layout_data(&l, 0x1000, 32, &p), 0);
	cr_assert_leq(l.nin + l.nout, 256);
	cr_assert_eq(l.nin, 3);
	cr_assert_eq(l.nout, 2);
}

/* A retry data round for p whose in_buf (wrapper, then ranges) is in. */
static void retry_loaded(struct kx_xfer *x, const struct kdisp_plan *p, size_t usize,
			 const void *in, size_t len)
{
	kx_xfer_init(x, KX_PATH_RETRY, 0, 0x1000, usize);
	cr_assert_eq(kx_xfer_set_plan(x, p), 0);
	kx_xfer_load_retry(x, in, len);
}

static void fill(struct ukevent *u, unsigned int n, unsigned int base)
{
	memset(u, 0, n * UK);
	for (unsigned int i = 0; i < n; i++)
		u[i].id.raw[0] = base + i;
}

/* The path's limits reach the core through struct kdisp_ctx (B4). */
static struct kdisp_ctx ctx_of(enum kx_path path, unsigned int cmd, size_t usize)
{
	struct kdisp_ctx ctx = { 0 };
	struct kx_xfer x;

	kx_xfer_init(&x, path, 1, 0x1000, usize);
	kx_xfer_ctx(&x, cmd, &ctx);
	return ctx;
}

Test(paths, limits_and_feature_bit_per_path)
{
	struct kdisp_ctx c = ctx_of(KX_PATH_RETRY, KEVENT_IOC_CTL, KEVENT_CTL_ARG_SIZE_VER0);

	cr_assert_eq(c.max_ctl_num, 3276);
	cr_assert_eq(c.max_get_nr, 3276);
	cr_assert_eq(c.features, KEVENT_FEAT_RETRY_PATH);
	c = ctx_of(KX_PATH_RETRY, KEVENT_IOC_INFO, KEVENT_INFO_SIZE_VER0);
	cr_assert_eq(c.max_ctl_num, 3276, "INFO reports the limit of a VER0 wrapper");
	c = ctx_of(KX_PATH_PVM, KEVENT_IOC_GET_EVENTS, KEVENT_GET_EVENTS_ARG_SIZE_VER0);
	cr_assert_eq(c.max_ctl_num, KEVENT_MAX_EVENTS - 1);
	cr_assert_eq(c.max_get_nr, KEVENT_MAX_EVENTS - 1);
	cr_assert_eq(c.features, KEVENT_FEAT_PROCESS_VM | KEVENT_FEAT_URING, "D53: a ring on process memory");
}

Test(paths, a_large_wrapper_lowers_the_retry_limit_to_what_fits)
{
	size_t usize = 1024;
	struct kdisp_ctx c = ctx_of(KX_PATH_RETRY, _IOC(_IOC_WRITE, KEVENT_IOC_MAGIC,
						      KEVENT_IOC_NR_CTL, 1024), usize);
	struct kdisp_plan p = ctl_plan(0x8000, c.max_ctl_num);
	struct kx_layout l;

	cr_assert_eq(c.max_ctl_num, (KX_RETRY_DIR_MAX - usize) / UK);
	/* The core's E2BIG comes first: the layout always fits what it allows. */
	cr_assert_eq(kx_layout_data(&l, 0x1000, usize, &p), 0);
	p = ctl_plan(0x8000, c.max_ctl_num + 1);
	cr_assert_eq(kx_layout_data(&l, 0x1000, usize, &p), -E2BIG);
}

Test(paths, process_memory_first_then_retry_for_good_after_eperm)
{
	struct kevent_get_events_arg a = { .min_nr = 1, .max_nr = 2 };
	struct kx_round rd = { .cmd = KEVENT_IOC_GET_EVENTS, .tid = getpid(), .arg = (uintptr_t)&a };
	struct kx_paths paths = { 0 };
	struct kx_layout l;
	struct kx_xfer x;

	cr_assert_eq(kx_xfer_start(&x, &paths, &rd, &l), 0);
	cr_assert_eq(x.path, KX_PATH_PVM);
	cr_assert_arr_eq(x.hdr, &a, sizeof(a));
	cr_assert(kx_xfer_may_block(&x));
	/* Refused once (Yama): the retry path, which first asks for the wrapper. */
	atomic_store(&paths.pvm_refused, 1);
	cr_assert_eq(kx_xfer_start(&x, &paths, &rd, &l), KX_ASK_HEADER);
	cr_assert_eq(x.path, KX_PATH_RETRY);
	cr_assert(!kx_xfer_may_block(&x));
	cr_assert_eq(l.nin, 1);
	cr_assert_eq(l.in[0].addr, (uintptr_t)&a);
	cr_assert_eq(l.in_total, sizeof(a));
	cr_assert_eq(l.nout, 0, "GET_EVENTS answers in no wrapper");
	/* The round that carries it. */
	rd.in_buf = &a;
	rd.in_bufsz = sizeof(a);
	cr_assert_eq(kx_xfer_start(&x, &paths, &rd, &l), 0);
	cr_assert_str_eq(x.round, "header");
	/* pid 0 (invisible caller) and --no-process-vm never try process memory. */
	atomic_store(&paths.pvm_refused, 0);
	rd.in_bufsz = 0;
	rd.tid = 0;
	cr_assert_eq(kx_xfer_start(&x, &paths, &rd, &l), KX_ASK_HEADER);
	rd.tid = getpid();
	paths.no_process_vm = 1;
	cr_assert_eq(kx_xfer_start(&x, &paths, &rd, &l), KX_ASK_HEADER);
}

Test(paths, a_front_end_without_retry_rounds_has_process_memory_or_eperm)
{
	struct kevent_get_events_arg a = { .min_nr = 1, .max_nr = 2 };
	struct kx_round rd = { .cmd = KEVENT_IOC_GET_EVENTS, .tid = getpid(), .arg = (uintptr_t)&a };
	struct kx_paths paths = { .no_retry = 1 };
	struct kx_layout l;
	struct kx_xfer x;

	cr_assert_eq(kx_xfer_start(&x, &paths, &rd, &l), 0);
	cr_assert_eq(x.path, KX_PATH_PVM);
	rd.tid = 0;
	cr_assert_eq(kx_xfer_start(&x, &paths, &rd, &l), -EPERM, "never a retry round");
	rd.tid = getpid();
	paths.no_process_vm = 1;
	cr_assert_eq(kx_xfer_start(&x, &paths, &rd, &l), -EPERM);
}

/* A restricted (FUSE) ioctl always carries _IOC_SIZE bytes: still process memory. */
Test(paths, no_retry_ignores_the_kernels_fixed_copy)
{
	struct kevent_get_events_arg a = { .min_nr = 1, .max_nr = 2 };
	struct kx_round rd = { .cmd = KEVENT_IOC_GET_EVENTS, .tid = getpid(), .arg = (uintptr_t)&a,
			       .in_buf = &a, .in_bufsz = sizeof(a), .out_bufsz = sizeof(a) };
	struct kx_paths paths = { .no_retry = 1 };
	struct kx_layout l;
	struct kx_xfer x;

	cr_assert_eq(kx_xfer_start(&x, &paths, &rd, &l), 0);
	cr_assert_eq(x.path, KX_PATH_PVM);
	cr_assert_eq(memcmp(x.hdr, &a, sizeof(a)), 0, "the wrapper read from process memory");
	paths.no_retry = 0;
	cr_assert_eq(kx_xfer_start(&x, &paths, &rd, &l), 0);
	cr_assert_eq(x.path, KX_PATH_RETRY, "with retry rounds the same bytes are a round");
}

Test(paths, retry_load_asks_for_the_data_round_then_runs)
{
	struct ukevent uk[2];
	struct kevent_ctl_arg a = { KEVENT_CTL_ADD, 2, 0x8000 };
	unsigned char in[sizeof(a) + sizeof(uk)];
	struct kx_round rd = { .cmd = KEVENT_IOC_CTL, .arg = 0x1000, .in_buf = &a,
			       .in_bufsz = sizeof(a) };
	struct kdisp_plan p = ctl_plan(0x8000, 2);
	struct kx_paths paths = { .no_process_vm = 1 };
	struct kx_layout l;
	struct kx_xfer x;

	cr_assert_eq(kx_xfer_start(&x, &paths, &rd, &l), 0);
	cr_assert_eq(kx_xfer_load(&x, &p, &rd, &l), KX_ASK);
	cr_assert_eq(l.in_total, sizeof(in));
	cr_assert_eq(l.out_total, sizeof(uk));
	fill(uk, 2, 30);
	memcpy(in, &a, sizeof(a));
	memcpy(in + sizeof(a), uk, sizeof(uk));
	rd.in_buf = in;
	rd.in_bufsz = sizeof(in);
	rd.out_bufsz = sizeof(uk);
	kx_xfer_free(&x);	/* the first round's request ends with its reply */
	cr_assert_eq(kx_xfer_start(&x, &paths, &rd, &l), 0);
	cr_assert_str_eq(x.round, "data");
	cr_assert_eq(kx_xfer_load(&x, &p, &rd, &l), 0);
	cr_assert_eq(x.ua.read(x.ua.ctx, uk, 0x8000 + UK, UK), 0);
	cr_assert_eq(uk[0].id.raw[0], 31);
	kx_xfer_free(&x);
	/* D28: a 32-bit caller's arrays above 4 GiB fault before any round. */
	rd.compat = 1;
	p = ctl_plan(1ULL << 32, 2);
	cr_assert_eq(kx_xfer_start(&x, &paths, &rd, &l), 0);
	cr_assert_eq(kx_xfer_load(&x, &p, &rd, &l), -EFAULT);
	kx_xfer_free(&x);
}

Test(xfer, several_output_ranges_move_in_order)
{
	struct kdisp_plan p;
	struct kx_layout l;
	struct kx_xfer x;
	unsigned char in[8 + 64 + 16 + 4], b = 0x42;
	__u32 one = 7;
	void *out;
	size_t len;

	/* A later GET_EVENTS: the buffer, the ring's two ranges at a wrap, a u32. */
	memset(&p, 0, sizeof(p));
	p.nr = KEVENT_IOC_NR_GET_EVENTS;
	p.out[p.nout++] = (struct kdisp_range){ 0x9000, 64 };
	p.out[p.nout++] = (struct kdisp_range){ 0xa000, 16 };
	p.out[p.nout++] = (struct kdisp_range){ 0xb000, 4 };
	p.in[p.nin++] = p.out[0];
	cr_assert_eq(kx_layout_data(&l, 0x1000, 8, &p), 0);
	cr_assert_eq(l.nin, 4, "wrapper, then each distinct range once");
	cr_assert_eq(l.in[1].addr, 0x9000);
	cr_assert_eq(l.in[3].addr, 0xb000);
	cr_assert_eq(l.nout, 3);
	cr_assert_eq(l.out_total, 84);
	memset(in, 0, sizeof(in));
	retry_loaded(&x, &p, 8, in, sizeof(in));
	cr_assert_eq(x.ua.write(x.ua.ctx, 0xa000 + 2, &b, 1), 0);
	cr_assert_eq(x.ua.write(x.ua.ctx, 0xb000 + 2, &one, 4), -EFAULT, "beyond the range");
	cr_assert_eq(x.ua.write(x.ua.ctx, 0xb000, &one, sizeof(one)), 0);
	cr_assert_eq(kx_xfer_retry_out(&x, 1, &out, &len), 0);
	/* Every range before the last written one whole, that one its prefix. */
	cr_assert_eq(len, 64 + 16 + 4);
	cr_assert_eq(((unsigned char *)out)[64 + 2], 0x42);
	cr_assert_eq(memcmp((unsigned char *)out + 80, &one, 4), 0);
	free(out);
	kx_xfer_free(&x);
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
	retry_loaded(&x, &p, 16, in, sizeof(in));
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
	retry_loaded(&x, &p, 32, in, sizeof(in));
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
