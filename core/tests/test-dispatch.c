// SPDX-License-Identifier: GPL-2.0
/* The dispatcher: A1/D24 wrapper strictness, plan ranges, INFO, the transport contract. */
#include "helpers.h"

struct fixture F;

TestSuite(dispatch, .init = fx_setup, .fini = fx_teardown);

#define IOC_SIZED(dir, nr, size) _IOC(dir, KEVENT_IOC_MAGIC, nr, size)

static int plan_raw(unsigned int cmd, const void *arg, size_t len, struct kdisp_plan *p)
{
	return kdisp_plan(F.q, cmd, arg, len, &F.me, p);
}

CORE_TEST(dispatch, D24_unknown_ioctl_is_enotty)
{
	struct kdisp_plan p;
	unsigned char buf[64] = { 0 };

	cr_assert_eq(plan_raw(_IOW(0xBF, KEVENT_IOC_NR_CTL, struct kevent_ctl_arg), buf, 16, &p),
		     -ENOTTY, "wrong magic");
	cr_assert_eq(plan_raw(IOC_SIZED(_IOC_WRITE, 0x1f, 16), buf, 16, &p), -ENOTTY, "unknown nr");
	cr_assert_eq(plan_raw(KEVENT_IOC_FAULT, buf, 16, &p), -ENOTTY,
		     "FAULT without cfg.fault_inject");
	cr_assert_eq(plan_raw(IOC_SIZED(_IOC_WRITE, 0xff, 16), buf, 16, &p), -ENOTTY);
	cr_assert_eq(plan_raw(IOC_SIZED(_IOC_READ, KEVENT_IOC_NR_CTL, 16), NULL, 0, &p), -ENOTTY,
		     "wrong direction");
	cr_assert_eq(plan_raw(IOC_SIZED(_IOC_READ | _IOC_WRITE, KEVENT_IOC_NR_INFO, 152), buf, 152, &p),
		     -ENOTTY);
	cr_assert_eq(plan_raw(KEVENT_IOC_RING_SHM, NULL, 0, &p), -ENOTTY,
		     "RING_SHM is the CUSE daemon's");
}

CORE_TEST(dispatch, D24_size_from_the_ioctl_number)
{
	unsigned char buf[KEVENT_IOC_ARG_MAX + 8] = { 0 };
	struct kevent_ctl_arg *a = (void *)buf;
	struct kdisp_plan p;

	a->cmd = KEVENT_CTL_ADD;
	a->num = 1;
	a->events = 0x1000;
	cr_assert_eq(plan_raw(IOC_SIZED(_IOC_WRITE, KEVENT_IOC_NR_CTL, 15), buf, 15, &p), -EINVAL,
		     "below VER0");
	cr_assert_eq(plan_raw(IOC_SIZED(_IOC_WRITE, KEVENT_IOC_NR_CTL, 0), buf, 0, &p), -EINVAL);
	cr_assert_eq(plan_raw(IOC_SIZED(_IOC_WRITE, KEVENT_IOC_NR_CTL, 1025), buf, 1025, &p), -E2BIG,
		     "above KEVENT_IOC_ARG_MAX");
	cr_assert_eq(plan_raw(IOC_SIZED(_IOC_WRITE, KEVENT_IOC_NR_CTL, 1024), buf, 1024, &p), 0,
		     "larger with a zero tail");
	cr_assert_eq(p.arg.ctl.num, 1);
	buf[1023] = 1;
	cr_assert_eq(plan_raw(IOC_SIZED(_IOC_WRITE, KEVENT_IOC_NR_CTL, 1024), buf, 1024, &p), -E2BIG,
		     "larger with a dirty tail");
	buf[1023] = 0;
	buf[16] = 1;
	cr_assert_eq(plan_raw(IOC_SIZED(_IOC_WRITE, KEVENT_IOC_NR_CTL, 17), buf, 17, &p), -EINVAL,
		     "D60: ioc_flags KEVENT_CTL_EXT on a revision-1 queue");
	buf[16] = 0;
	buf[24] = 1;
	cr_assert_eq(plan_raw(IOC_SIZED(_IOC_WRITE, KEVENT_IOC_NR_CTL, 25), buf, 25, &p), -E2BIG,
		     "past the VER1 size: a dirty tail");
	buf[24] = 0;
	cr_assert_eq(plan_raw(KEVENT_IOC_CTL, buf, 15, &p), -EINVAL, "arg_len must match");
	cr_assert_eq(plan_raw(KEVENT_IOC_CTL, NULL, 16, &p), -EINVAL);
	cr_assert_eq(plan_raw(IOC_SIZED(_IOC_READ, KEVENT_IOC_NR_INFO, 151), NULL, 0, &p), -EINVAL);
	cr_assert_eq(plan_raw(IOC_SIZED(_IOC_READ, KEVENT_IOC_NR_INFO, 2048), NULL, 0, &p), -E2BIG);
}

CORE_TEST(dispatch, A4_whole_call_checks_in_plan)
{
	struct kevent_ctl_arg a = { KEVENT_CTL_ADD, 3, 0x1000 };
	struct kdisp_plan p;

	cr_assert_eq(plan_raw(KEVENT_IOC_CTL, &a, sizeof(a), &p), 0);
	cr_assert_eq(p.in[0].addr, 0x1000);
	cr_assert_eq(p.in[0].len, 3 * sizeof(struct ukevent));
	cr_assert_eq(p.out[0].addr, 0x1000);
	cr_assert_eq(p.out[0].len, 3 * sizeof(struct ukevent));
	cr_assert_eq(p.reply_len, 0);
	a.num = 0;
	cr_assert_eq(plan_raw(KEVENT_IOC_CTL, &a, sizeof(a), &p), 0);
	cr_assert_eq(p.nin, 0, "num 0 reads nothing");
	a.num = 4096;
	cr_assert_eq(plan_raw(KEVENT_IOC_CTL, &a, sizeof(a), &p), -EINVAL);
	a.cmd = KEVENT_CTL_REMOVE;
	a.num = 1;
	cr_assert_eq(plan_raw(KEVENT_IOC_CTL, &a, sizeof(a), &p), -EINVAL, "nothing registered");
	a.cmd = 3;
	cr_assert_eq(plan_raw(KEVENT_IOC_CTL, &a, sizeof(a), &p), -EINVAL);
}

CORE_TEST(dispatch, B4_max_ctl_num_of_the_path_is_e2big)
{
	struct kevent_ctl_arg a = { KEVENT_CTL_ADD, 3277, 0x1000 };
	struct kdisp_plan p;

	kqueue_release(F.q);
	kcore_free(F.core);
	F.cfg.max_ctl_num = 3276;
	F.cfg.max_get_nr = 3276;
	fx_start();
	cr_assert_eq(plan_raw(KEVENT_IOC_CTL, &a, sizeof(a), &p), -E2BIG);
	a.num = 3276;
	cr_assert_eq(plan_raw(KEVENT_IOC_CTL, &a, sizeof(a), &p), 0);
	a.num = 4096;
	cr_assert_eq(plan_raw(KEVENT_IOC_CTL, &a, sizeof(a), &p), -EINVAL, "take13's check first");
	{
		struct kevent_get_events_arg g = { .min_nr = 4000, .max_nr = 4000 };

		cr_assert_eq(plan_raw(KEVENT_IOC_GET_EVENTS, &g, sizeof(g), &p), 0);
		cr_assert_eq(p.arg.get.max_nr, 3276, "B4: clamped to the path");
		cr_assert_eq(p.arg.get.min_nr, 3276);
	}
}

CORE_TEST(dispatch, GET_EVENTS_plan_ranges)
{
	struct kevent_get_events_arg g = { .min_nr = 1, .max_nr = 7, .events = 0x2000 };
	struct kdisp_plan p;

	cr_assert_eq(plan_raw(KEVENT_IOC_GET_EVENTS, &g, sizeof(g), &p), 0);
	cr_assert_eq(p.out[0].addr, 0x2000);
	cr_assert_eq(p.out[0].len, 7 * sizeof(struct ukevent));
	cr_assert_eq(p.in[0].addr, 0x2000, "the probe reads the output range first (D10)");
	cr_assert_eq(p.in[0].len, p.out[0].len);
	cr_assert_eq(p.nr, KEVENT_IOC_NR_GET_EVENTS);
}

CORE_TEST(dispatch, INFO_contents)
{
	struct kevent_info info;
	struct kdisp_plan p;

	kqueue_release(F.q);
	kcore_free(F.core);
	F.cfg.caps[KEVENT_LIMIT_KEVENTS] = 100;
	F.cfg.features = KEVENT_FEAT_PROCESS_VM;
	fx_start();
	fx_add_n(0, 3, 0);
	ktest_fire(1, 0);
	memset(&info, 0xaa, sizeof(info));
	cr_assert_eq(plan_raw(KEVENT_IOC_INFO, NULL, 0, &p), 0);
	cr_assert_eq(p.reply_len, sizeof(info));
	cr_assert_eq(kdisp_execute(F.q, &p, &F.me, &F.mem.ua, &info, NULL, NULL), 0);
	cr_assert_eq(info.size, KEVENT_INFO_SIZE_VER2);
	cr_assert_eq(info.abi_revision, 4, "the core serves revisions 1 to 4");
	cr_assert_eq(info.abi_lowest, 1);
	cr_assert_eq(info.queue_revision, 1, "no SET_ABI: revision 1");
	cr_assert_eq(info.backend, KEVENT_BACKEND_CORE);
	cr_assert_eq(info.features, KEVENT_FEAT_PROCESS_VM | KEVENT_FEAT_STRICT | KEVENT_FEAT_URING,
		     "no transport: the ring is in our own memory (D53)");
	cr_assert_eq(info.supported_types,
		     1u << KEVENT_TIMER | 1u << KEVENT_POLL | 1u << KEVENT_SOCKET);
	cr_assert_eq(info.ukevent_size, 40);
	cr_assert_eq(info.mukevent_size, 16);
	cr_assert_eq(info.ring_page_size, 4096);
	cr_assert_eq(info.ring_slots_per_page, 255);
	cr_assert_eq(info.ring_pages, 17);
	cr_assert_eq(info.ring_slots, 4096);
	cr_assert_eq(info.max_kevents, 4095);
	cr_assert_eq(info.max_ctl_num, 4095);
	cr_assert_eq(info.max_get_nr, 4095);
	cr_assert_eq(info.queue_kevents, 3);
	cr_assert_eq(info.queue_ready, 1);
	cr_assert_eq(info.limits[KEVENT_LIMIT_KEVENTS].cap, 100);
	cr_assert_eq(info.limits[KEVENT_LIMIT_KEVENTS].used, 3);
	cr_assert_eq(info.limits[KEVENT_LIMIT_TIMERS].used, 3);
	cr_assert_eq(info.limits[KEVENT_LIMIT_QUEUES].used, 1);
	cr_assert_eq(info.limits[KEVENT_LIMIT_QUEUES].cap, 0);
	cr_assert_eq(info.live_queues, 1);
	cr_assert_eq(info.live_kevents, 3);
	cr_assert_eq(info.live_waiters, 0);
	cr_assert_eq(info.queue_parked, 0);
}

CORE_TEST(dispatch, INFO_larger_struct_gets_a_zero_tail)
{
	unsigned char buf[200];
	struct kdisp_plan p;

	memset(buf, 0xaa, sizeof(buf));
	cr_assert_eq(plan_raw(IOC_SIZED(_IOC_READ, KEVENT_IOC_NR_INFO, 200), NULL, 0, &p), 0);
	cr_assert_eq(p.reply_len, 200);
	cr_assert_eq(kdisp_execute(F.q, &p, &F.me, &F.mem.ua, buf, NULL, NULL), 0);
	cr_assert_eq(((struct kevent_info *)buf)->size, KEVENT_INFO_SIZE_VER2,
		     "size says what the backend filled");
	for (unsigned int i = KEVENT_INFO_SIZE_VER2; i < 200; i++)
		cr_assert_eq(buf[i], 0, "byte %u", i);
}

CORE_TEST(dispatch, SET_ABI_wrapper_is_strict)
{
	unsigned char buf[24] = { 0 };
	struct kevent_set_abi *s = (void *)buf;
	struct kdisp_plan p;

	s->revision = 1;
	cr_assert_eq(plan_raw(IOC_SIZED(_IOC_WRITE, KEVENT_IOC_NR_SET_ABI, 24), buf, 24, &p), 0);
	buf[20] = 1;
	cr_assert_eq(plan_raw(IOC_SIZED(_IOC_WRITE, KEVENT_IOC_NR_SET_ABI, 24), buf, 24, &p), -E2BIG);
	buf[20] = 0;
	s->__reserved = 1;
	cr_assert_eq(plan_raw(KEVENT_IOC_SET_ABI, buf, 16, &p), -EINVAL);
}

/* KEVENT_IOC_FAULT, when enabled: a strict wrapper and a feature bit. */
CORE_TEST(dispatch, FAULT_answers_only_when_enabled)
{
	struct kevent_fault f = { KEVENT_FAULT_ADD_ENOMEM, 0, 0 };
	struct kevent_info info;
	struct kdisp_plan p;

	fx_ioctl_q(F.q, KEVENT_IOC_INFO, NULL, &info);
	cr_assert_eq(info.features & KEVENT_FEAT_FAULT_INJECT, 0);
	kqueue_release(F.q);
	kcore_free(F.core);
	F.cfg.fault_inject = 1;
	fx_start();
	cr_assert_eq(fx_ioctl_q(F.q, KEVENT_IOC_INFO, NULL, &info), 0);
	cr_assert(info.features & KEVENT_FEAT_FAULT_INJECT, "INFO features %#x", info.features);
	cr_assert_eq(plan_raw(KEVENT_IOC_FAULT, &f, sizeof(f), &p), 0);
	f.kind = KEVENT_FAULT_ADD_ENOMEM + 1;
	cr_assert_eq(plan_raw(KEVENT_IOC_FAULT, &f, sizeof(f), &p), -EINVAL, "unknown kind");
	f.kind = KEVENT_FAULT_NONE;
	f.__reserved = 1;
	cr_assert_eq(plan_raw(KEVENT_IOC_FAULT, &f, sizeof(f), &p), -EINVAL, "reserved");
	cr_assert_eq(plan_raw(IOC_SIZED(_IOC_WRITE, KEVENT_IOC_NR_FAULT, 8), &f, 8, &p), -EINVAL,
		     "short wrapper");
}

/* ---- the transport contract (kcore.h): struct kdisp_ctx and struct ktransport ---- */

#include <stdio.h>

#include "internal.h"	/* q->lock, q->ctl: the ring hook must run without them */

TestSuite(transport, .init = fx_setup, .fini = fx_teardown);

static struct {
	int shm_calls, shm_err;
	int ring_calls, ring_locked;
	size_t ring_off, ring_len;
	void *file;
} T;

static int t_ring_shm(void *file, const struct kcaller *caller, struct kevent_ring_shm *reply)
{
	T.shm_calls++;
	T.file = file;
	if (T.shm_err)
		return T.shm_err;
	snprintf(reply->path, sizeof(reply->path), "/dev/shm/test-ring-%u", (unsigned int)caller->uid);
	return 0;
}

static void t_ring_written(void *file, size_t off, size_t len)
{
	T.ring_calls++;
	T.file = file;
	T.ring_off = off;
	T.ring_len = len;
	/* No core lock may be held: a transport's page-cache store can block. */
	if (pthread_mutex_trylock(&F.q->lock))
		T.ring_locked++;
	else
		pthread_mutex_unlock(&F.q->lock);
	if (pthread_mutex_trylock(&F.q->ctl))
		T.ring_locked++;
	else
		pthread_mutex_unlock(&F.q->ctl);
}

static const struct ktransport t_ops = { .ring_shm = t_ring_shm, .ring_written = t_ring_written };
static const struct ktransport t_bare = { 0 };

/* The retry path of the CUSE daemon: 3276 entries (design.md B4). */
static struct kdisp_ctx retry_ctx(const struct ktransport *t)
{
	return (struct kdisp_ctx){ .t = t, .file = &T, .max_ctl_num = 3276, .max_get_nr = 3276,
				   .features = KEVENT_FEAT_RETRY_PATH };
}

static int plan_ctx(const struct kdisp_ctx *ctx, unsigned int cmd, const void *arg, size_t len,
		    struct kdisp_plan *p)
{
	return kdisp_plan_ctx(F.q, ctx, cmd, arg, len, &F.me, p);
}

CORE_TEST(transport, ctl_above_the_path_limit_is_e2big_after_einval)
{
	struct kdisp_ctx ctx = retry_ctx(NULL);
	struct kevent_ctl_arg a = { KEVENT_CTL_ADD, 3277, 0x1000 };
	struct kdisp_plan p;

	cr_assert_eq(plan_ctx(&ctx, KEVENT_IOC_CTL, &a, sizeof(a), &p), -E2BIG);
	a.num = 3276;
	cr_assert_eq(plan_ctx(&ctx, KEVENT_IOC_CTL, &a, sizeof(a), &p), 0);
	cr_assert_eq(p.ctx, &ctx);
	a.num = 4096;
	cr_assert_eq(plan_ctx(&ctx, KEVENT_IOC_CTL, &a, sizeof(a), &p), -EINVAL,
		     "take13's checks come first");
	a.cmd = KEVENT_CTL_REMOVE;
	a.num = 3277;
	cr_assert_eq(plan_ctx(&ctx, KEVENT_IOC_CTL, &a, sizeof(a), &p), -EINVAL,
		     "more than registered");
	/* No transport: the core's own 4095. */
	a.cmd = KEVENT_CTL_ADD;
	cr_assert_eq(plan_ctx(NULL, KEVENT_IOC_CTL, &a, sizeof(a), &p), 0);
}

CORE_TEST(transport, get_events_clamps_to_the_path_limit_and_takes_o_nonblock)
{
	struct kdisp_ctx ctx = retry_ctx(NULL);
	struct kevent_get_events_arg g = { .min_nr = 4000, .max_nr = 4095, .events = 0x2000 };
	struct kdisp_plan p;

	cr_assert_eq(plan_ctx(&ctx, KEVENT_IOC_GET_EVENTS, &g, sizeof(g), &p), 0);
	cr_assert_eq(p.arg.get.max_nr, 3276, "D12: a legal short return");
	cr_assert_eq(p.arg.get.min_nr, 3276);
	cr_assert_eq(p.out[0].len, 3276 * sizeof(struct ukevent));
	cr_assert_eq(p.arg.get.ioc_flags, 0);
	g.min_nr = 10;
	cr_assert_eq(plan_ctx(&ctx, KEVENT_IOC_GET_EVENTS, &g, sizeof(g), &p), 0);
	cr_assert_eq(p.arg.get.min_nr, 10);
	g.min_nr = 4095;
	g.max_nr = 4000;
	cr_assert_eq(plan_ctx(&ctx, KEVENT_IOC_GET_EVENTS, &g, sizeof(g), &p), -EINVAL,
		     "min_nr > max_nr is refused before any clamp");
	/* A11: the open file's O_NONBLOCK joins ioc_flags. */
	ctx.nonblock = 1;
	g.min_nr = 1;
	cr_assert_eq(plan_ctx(&ctx, KEVENT_IOC_GET_EVENTS, &g, sizeof(g), &p), 0);
	cr_assert_eq(p.arg.get.ioc_flags, KEVENT_GET_NONBLOCK);
	{
		/* The caller's own wrapper bytes are never edited. */
		cr_assert_eq(g.ioc_flags, 0);
		cr_assert_eq(g.max_nr, 4000);
	}
}

CORE_TEST(transport, info_fields_come_from_the_transport)
{
	struct kdisp_ctx ctx = retry_ctx(&t_ops);
	struct kevent_info info;
	struct kdisp_plan p;

	cr_assert_eq(plan_ctx(&ctx, KEVENT_IOC_INFO, NULL, 0, &p), 0);
	cr_assert_eq(kdisp_execute(F.q, &p, &F.me, &F.mem.ua, &info, NULL, NULL), 0);
	cr_assert_eq(info.max_ctl_num, 3276);
	cr_assert_eq(info.max_get_nr, 3276);
	cr_assert_eq(info.features & (KEVENT_FEAT_RETRY_PATH | KEVENT_FEAT_PROCESS_VM),
		     KEVENT_FEAT_RETRY_PATH);
	cr_assert(info.features & KEVENT_FEAT_RING_SHM, "a ring_shm hook answers RING_SHM");
	cr_assert(info.features & KEVENT_FEAT_STRICT);
	cr_assert_eq(info.features & KEVENT_FEAT_FD_ORIGINS, 0);
	ctx = (struct kdisp_ctx){ .t = &t_bare,
				  .features = KEVENT_FEAT_PROCESS_VM | KEVENT_FEAT_FD_ORIGINS };
	cr_assert_eq(plan_ctx(&ctx, KEVENT_IOC_INFO, NULL, 0, &p), 0);
	cr_assert_eq(kdisp_execute(F.q, &p, &F.me, &F.mem.ua, &info, NULL, NULL), 0);
	cr_assert_eq(info.max_ctl_num, KEVENT_MAX_EVENTS - 1, "0: no limit of the path's own");
	cr_assert_eq(info.features & (KEVENT_FEAT_PROCESS_VM | KEVENT_FEAT_FD_ORIGINS |
				      KEVENT_FEAT_RING_SHM),
		     KEVENT_FEAT_PROCESS_VM | KEVENT_FEAT_FD_ORIGINS);
}

CORE_TEST(transport, ring_shm_is_validated_by_the_core_then_asks_the_hook)
{
	struct kdisp_ctx ctx = retry_ctx(&t_ops), bare = retry_ctx(&t_bare);
	unsigned char reply[200];
	struct kevent_ring_shm *s = (void *)reply;
	struct kdisp_plan p;

	memset(&T, 0, sizeof(T));
	cr_assert_eq(plan_ctx(&bare, KEVENT_IOC_RING_SHM, NULL, 0, &p), -ENOTTY,
		     "no hook: as the module");
	cr_assert_eq(plan_ctx(NULL, KEVENT_IOC_RING_SHM, NULL, 0, &p), -ENOTTY);
	cr_assert_eq(plan_ctx(&ctx, IOC_SIZED(_IOC_WRITE, KEVENT_IOC_NR_RING_SHM, 128), reply, 128,
			      &p), -ENOTTY, "wrong direction");
	cr_assert_eq(plan_ctx(&ctx, IOC_SIZED(_IOC_READ, KEVENT_IOC_NR_RING_SHM, 0), NULL, 0, &p),
		     -EINVAL);
	cr_assert_eq(plan_ctx(&ctx, IOC_SIZED(_IOC_READ, KEVENT_IOC_NR_RING_SHM, 127), NULL, 0, &p),
		     -EINVAL);
	cr_assert_eq(plan_ctx(&ctx, IOC_SIZED(_IOC_READ, KEVENT_IOC_NR_RING_SHM, 2048), NULL, 0, &p),
		     -E2BIG);
	cr_assert_eq(T.shm_calls, 0, "nothing asked before the checks pass");
	/* A larger caller struct: the core fills size and length, zeroes the tail. */
	cr_assert_eq(plan_ctx(&ctx, IOC_SIZED(_IOC_READ, KEVENT_IOC_NR_RING_SHM, 200), NULL, 0, &p),
		     0);
	cr_assert_eq(p.reply_len, 200);
	cr_assert_eq(p.nin + p.nout, 0);
	memset(reply, 0xaa, sizeof(reply));
	cr_assert_eq(kdisp_execute(F.q, &p, &F.me, &F.mem.ua, reply, NULL, NULL), 0);
	cr_assert_eq(T.shm_calls, 1);
	cr_assert_eq(T.file, &T);
	cr_assert_eq(s->size, sizeof(*s));
	cr_assert_eq(s->flags, 0);
	cr_assert_eq(s->length, KEVENT_RING_SIZE);
	cr_assert_eq(strcmp(s->path, "/dev/shm/test-ring-1000"), 0);
	cr_assert_eq(reply[128], 0);
	cr_assert_eq(reply[199], 0);
	/* The hook's refusal is the call's. */
	T.shm_err = -ENOMEM;
	cr_assert_eq(plan_ctx(&ctx, KEVENT_IOC_RING_SHM, NULL, 0, &p), 0);
	cr_assert_eq(kdisp_execute(F.q, &p, &F.me, &F.mem.ua, reply, NULL, NULL), -ENOMEM);
}

CORE_TEST(transport, ring_written_runs_outside_every_core_lock)
{
	__u32 idx;

	memset(&T, 0, sizeof(T));
	kqueue_set_transport(F.q, &t_ops, &T);
	fx_add_n(1, 2, 0);
	cr_assert_eq(T.ring_calls, 0, "nothing ready yet");
	cr_assert_eq(ktest_fire(1, 5), 1);
	cr_assert_eq(T.ring_calls, 1);
	cr_assert_eq(T.ring_locked, 0, "called with q->lock and q->ctl free");
	cr_assert_eq(T.file, &T);
	cr_assert_eq(T.ring_off, KEVENT_RING_SLOT_OFFSET(0));
	cr_assert_eq(T.ring_len, sizeof(struct mukevent));
	cr_assert_eq(ktest_fire(2, 5), 1);
	cr_assert_eq(T.ring_calls, 2);
	cr_assert_eq(T.ring_off, KEVENT_RING_SLOT_OFFSET(1));
	idx = ring_index(F.ring);
	cr_assert_eq(idx, 2, "the index the hook was told about");
	cr_assert_eq(ring_slot(F.ring, 1)->id.raw[0], 2);
	/* A fire while the kevent is inside attach(): the hook runs after attach. */
	F.uk[0] = uk_make(KEVENT_TIMER, 9, KEVENT_TIMER_FIRED | KTEST_FIRE_IN_ATTACH, 0, 9);
	cr_assert_eq(fx_ctl(KEVENT_CTL_ADD, 1, F.uk), 0);
	cr_assert_eq(T.ring_calls, 3);
	cr_assert_eq(T.ring_locked, 0);
	cr_assert_eq(T.ring_off, KEVENT_RING_SLOT_OFFSET(2));
}
