// SPDX-License-Identifier: GPL-2.0
/*
 * The two-phase ioctl dispatcher shared by every transport.  kdisp_plan()
 * validates the wrapper struct (A1, D24) and the whole-call limits (A4,
 * D25) on the header alone and names the user ranges phase 2 touches;
 * kdisp_execute() runs the call through a struct kuaccess.  What the
 * transport limits or adds (kcore.h, THE TRANSPORT CONTRACT) arrives in
 * the plan's struct kdisp_ctx and is applied here, nowhere else.
 * No locks of its own: queue.c takes them.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "internal.h"

_Static_assert(sizeof(struct kevent_ctl_arg) == KEVENT_CTL_ARG_SIZE_VER0, "ctl arg");
_Static_assert(sizeof(struct kevent_ctl_ext_arg) == KEVENT_CTL_ARG_SIZE_VER1, "ctl ext arg");
_Static_assert(sizeof(struct ukevent_ext) == 80, "ukevent_ext");
_Static_assert(sizeof(struct kevent_get_events_arg) == KEVENT_GET_EVENTS_ARG_SIZE_VER1,
	       "get_events arg");
_Static_assert(sizeof(struct kevent_set_abi) == KEVENT_SET_ABI_SIZE_VER0, "set_abi arg");
_Static_assert(sizeof(struct kevent_info) == KEVENT_INFO_SIZE_VER2, "info");
_Static_assert(sizeof(struct kevent_fault) == KEVENT_FAULT_SIZE_VER0, "fault arg");

struct kdisp_cmd {
	unsigned int dir;	/* _IOC_READ or _IOC_WRITE */
	size_t ver0, ksize;	/* smallest accepted, what we know */
};

static const struct kdisp_cmd kdisp_cmds[] = {
	[KEVENT_IOC_NR_INFO] = { _IOC_READ, KEVENT_INFO_SIZE_VER0, sizeof(struct kevent_info) },
	/* D60: KEVENT_IOC_CTL_EXT is the VER1 size of the same number */
	[KEVENT_IOC_NR_CTL] = { _IOC_WRITE, KEVENT_CTL_ARG_SIZE_VER0,
				sizeof(struct kevent_ctl_ext_arg) },
	[KEVENT_IOC_NR_GET_EVENTS] = { _IOC_WRITE, KEVENT_GET_EVENTS_ARG_SIZE_VER0,
				       sizeof(struct kevent_get_events_arg) },
	[KEVENT_IOC_NR_RING_SHM] = { _IOC_READ, KEVENT_RING_SHM_SIZE_VER0,
				     sizeof(struct kevent_ring_shm) },
	[KEVENT_IOC_NR_SET_ABI] = { _IOC_WRITE, KEVENT_SET_ABI_SIZE_VER0,
				    sizeof(struct kevent_set_abi) },
	[KEVENT_IOC_NR_FAULT] = { _IOC_WRITE, KEVENT_FAULT_SIZE_VER0,
				  sizeof(struct kevent_fault) },
	[KEVENT_IOC_NR_RING_INIT] = { _IOC_WRITE, KEVENT_RING_INIT_SIZE_VER0,
				      sizeof(struct kevent_ring_init) },
	[KEVENT_IOC_NR_WAIT] = { _IOC_WRITE, KEVENT_WAIT_ARG_SIZE_VER0,
				 sizeof(struct kevent_wait_arg) },
	[KEVENT_IOC_NR_COMMIT] = { _IOC_WRITE, KEVENT_COMMIT_ARG_SIZE_VER0,
				   sizeof(struct kevent_commit_arg) },
};

static bool tail_is_zero(const unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* copy_struct_from_user: zero-extend a short struct, refuse a dirty tail. */
static int copy_struct_in(void *dst, size_t ksize, const void *src, size_t usize)
{
	size_t n = usize < ksize ? usize : ksize;

	memset(dst, 0, ksize);
	memcpy(dst, src, n);
	if (usize > ksize && !tail_is_zero((const unsigned char *)src + ksize, usize - ksize))
		return -E2BIG;
	return 0;
}

/* min(the core's limit, the call's path limit); 0 means "none". */
static __u32 limit_of(__u32 core_max, __u32 path_max)
{
	if (!core_max)
		core_max = KEVENT_MAX_EVENTS - 1;
	return path_max && path_max < core_max ? path_max : core_max;
}

static __u32 max_ctl_of(const struct kqueue *q, const struct kdisp_ctx *ctx)
{
	return limit_of(q->core->cfg.max_ctl_num, ctx ? ctx->max_ctl_num : 0);
}

static __u32 max_get_of(const struct kqueue *q, const struct kdisp_ctx *ctx)
{
	return limit_of(q->core->cfg.max_get_nr, ctx ? ctx->max_get_nr : 0);
}

static void plan_add(struct kdisp_range *v, unsigned int *n, __u64 addr, __u64 len)
{
	if (len)
		v[(*n)++] = (struct kdisp_range){ addr, len };
}

static __u64 realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/*
 * D48: a kevent_timespec and its KEVENT_FLAGS_* as relative ns for the
 * core's deadline (KEVENT_TIMEOUT_INFINITE: none).  An absolute deadline is
 * measured against its clock now; one already past is 0 (no wait).  A
 * CLOCK_REALTIME one is also kept as *rt, so that a parked call can follow
 * the clock when it is set (kcore_heap_add).
 */
static int timeout_of(const struct kqueue *q, const struct kevent_timespec *ts, __u32 flags,
		      __u64 *ns, __u64 *rt)
{
	__u64 t, now;

	if ((flags & ~(__u32)KEVENT_FLAGS_ALL) || ts->__pad || ts->tv_sec < 0 ||
	    ts->tv_nsec >= 1000000000u)
		return -EINVAL;
	if (flags & KEVENT_FLAGS_NO_TIMEOUT) {
		if (flags != KEVENT_FLAGS_NO_TIMEOUT || ts->tv_sec || ts->tv_nsec)
			return -EINVAL;
		*ns = KEVENT_TIMEOUT_INFINITE;
		return 0;
	}
	if ((flags & KEVENT_FLAGS_MONOTONIC) && !(flags & KEVENT_FLAGS_ABSTIME))
		return -EINVAL;
	if ((__u64)ts->tv_sec >= KEVENT_TIMEOUT_INFINITE / 1000000000ull - 1)
		t = KEVENT_TIMEOUT_INFINITE - 1;
	else
		t = (__u64)ts->tv_sec * 1000000000ull + ts->tv_nsec;
	if (flags & KEVENT_FLAGS_ABSTIME) {
		now = (flags & KEVENT_FLAGS_MONOTONIC) ? kcore_now(q->core) : realtime_ns();
		if (!(flags & KEVENT_FLAGS_MONOTONIC))
			*rt = t;
		t = t > now ? t - now : 0;
	}
	*ns = t;
	return 0;
}

/*
 * D60: KEVENT_CTL_EXT (80-byte entries) on a revision-3 queue only, and
 * QUERY (D61) only with it; both checked on the header, before the array.
 */
static int plan_ctl_ext(const struct kqueue *q, const struct kevent_ctl_ext_arg *a)
{
	if ((a->ioc_flags & ~(__u32)KEVENT_CTL_IOC_FLAGS) || a->__pad)
		return -EINVAL;
	if ((a->ioc_flags & KEVENT_CTL_EXT) && !kq_rule(q, KR_EXT))
		return -EINVAL;
	if (a->cmd == KEVENT_CTL_QUERY && !(a->ioc_flags & KEVENT_CTL_EXT))
		return -EINVAL;
	return 0;
}

static __u32 last_cmd_of(const struct kqueue *q)
{
	if (kq_rule(q, KR_QUERY))
		return KEVENT_CTL_QUERY;	/* D61 */
	return kq_rule(q, KR_READY) ? KEVENT_CTL_READY : KEVENT_CTL_MODIFY;	/* D49 */
}

static int plan_ctl(struct kqueue *q, struct kdisp_plan *plan)
{
	const struct kevent_ctl_ext_arg *a = &plan->arg.ctl;
	unsigned int have = atomic_load(&q->kevent_num);
	bool ext = a->ioc_flags & KEVENT_CTL_EXT;
	size_t esz = ext ? sizeof(struct ukevent_ext) : sizeof(struct ukevent);
	__u64 len = (__u64)a->num * esz;
	__u32 max = max_ctl_of(q, plan->ctx);
	int err;

	if (a->cmd > last_cmd_of(q) || a->num > KEVENT_MAX_EVENTS)
		return -EINVAL;
	err = plan_ctl_ext(q, a);
	if (err)
		return err;
	if (!a->num)
		return 0;
	if (a->cmd == KEVENT_CTL_ADD ? have + a->num >= KEVENT_MAX_EVENTS : a->num > have)
		return -EINVAL;
	/* B4: a path's limit counts 40-byte entries; an EXT entry is two */
	if (ext && max < KEVENT_MAX_EVENTS - 1)
		max /= 2;
	if (a->num > max)
		return -E2BIG;
	plan_add(plan->in, &plan->nin, a->events, len);
	plan_add(plan->out, &plan->nout, a->events, len);
	return 0;
}

static bool ts_zero(const struct kevent_timespec *ts)
{
	return !ts->tv_sec && !ts->tv_nsec && !ts->__pad;
}

/*
 * D48: timeout_ts is read only with KEVENT_GET_TIMESPEC, a revision-2 rule
 * that needs the VER1 size (abi-change.md 4.6); without the flag a non-zero
 * timeout_ts is the tail of a newer caller this call does not honour.
 */
static int plan_get_timeout(const struct kqueue *q, struct kdisp_plan *plan)
{
	struct kevent_get_events_arg *a = &plan->arg.get;
	int err;

	if (!(a->ioc_flags & KEVENT_GET_TIMESPEC))
		return ts_zero(&a->timeout_ts) ? 0 : -E2BIG;
	if (!kq_rule(q, KR_TIMESPEC) || _IOC_SIZE(plan->cmd) < KEVENT_GET_EVENTS_ARG_SIZE_VER1 ||
	    a->timeout_ns)
		return -EINVAL;
	err = timeout_of(q, &a->timeout_ts, a->flags, &plan->timeout_ns, &plan->rt_deadline);
	/* normalised: the rest of the call sees a nanosecond timeout */
	a->timeout_ns = plan->timeout_ns;
	return err;
}

/* The ring calls: -EINVAL on a queue without the ring's rules (D40). */
static int plan_ring(const struct kqueue *q)
{
	return kq_rule(q, KR_RING) ? 0 : -EINVAL;
}

static int plan_ring_init(const struct kqueue *q, const struct kdisp_plan *plan)
{
	const struct kevent_ring_init *a = &plan->arg.ring_init;
	int err = plan_ring(q);

	if (err)
		return err;
	/*
	 * D53: a ring needs the process-memory path.  Only RING_INIT asks:
	 * where it is refused no ring exists, so WAIT and COMMIT answer as
	 * without a ring (D54, D55).
	 */
	if (plan->ctx && !(plan->ctx->features & KEVENT_FEAT_URING))
		return -EPERM;
	/* D53 */
	if (a->flags || !a->ring != !a->num || a->num == 1 || a->num > KEVENT_URING_MAX ||
	    (a->ring & 7))
		return -EINVAL;
	return 0;
}

static int plan_wait(const struct kqueue *q, struct kdisp_plan *plan)
{
	struct kevent_wait_arg *a = &plan->arg.wait;
	int err = plan_ring(q);

	if (err)
		return err;
	if (plan->ctx && plan->ctx->nonblock)
		a->ioc_flags |= KEVENT_GET_NONBLOCK;	/* A11 */
	if (a->ioc_flags & ~(__u32)KEVENT_GET_NONBLOCK)
		return -EINVAL;
	return timeout_of(q, &a->timeout, a->flags, &plan->timeout_ns, &plan->rt_deadline);
}

static int plan_get_events(struct kqueue *q, struct kdisp_plan *plan)
{
	struct kevent_get_events_arg *a = &plan->arg.get;
	unsigned int max = max_get_of(q, plan->ctx);
	__u64 len;
	int err;

	if (plan->ctx && plan->ctx->nonblock)
		a->ioc_flags |= KEVENT_GET_NONBLOCK;	/* A11 */
	if (a->ioc_flags & ~(__u32)KEVENT_GET_IOC_FLAGS)
		return -EINVAL;
	err = plan_get_timeout(q, plan);
	if (err)
		return err;
	if (a->min_nr > a->max_nr)
		return -EINVAL;
	/* D12, B4: a legal short return. */
	if (a->max_nr > max)
		a->max_nr = max;
	if (a->min_nr > a->max_nr)
		a->min_nr = a->max_nr;
	len = (__u64)a->max_nr * sizeof(struct ukevent);
	/* The probe of D10 reads what it will write. */
	plan_add(plan->in, &plan->nin, a->events, len);
	plan_add(plan->out, &plan->nout, a->events, len);
	return 0;
}

static int plan_fault(const struct kdisp_plan *plan)
{
	const struct kevent_fault *a = &plan->arg.fault;

	if (a->__reserved || a->kind > KEVENT_FAULT_ADD_ENOMEM)
		return -EINVAL;
	return 0;
}

static int plan_set_abi(const struct kdisp_plan *plan)
{
	const struct kevent_set_abi *a = &plan->arg.set_abi;

	/* A12: every revision served, 1 .. INFO's abi_revision. */
	if (a->__reserved || (a->flags & ~(__u32)KEVENT_ABI_FLAGS) || !kr_served(a->revision))
		return -EINVAL;
	/* D47: the EINTR opt-in is a revision-2 rule. */
	if ((a->flags & KEVENT_ABI_EINTR) && !(kr_rules_of(a->revision) & KR_BIT(KR_EINTR)))
		return -EINVAL;
	return 0;
}

/* Commands a transport or the configuration may switch off: -ENOTTY. */
static bool cmd_offered(const struct kqueue *q, const struct kdisp_ctx *ctx, unsigned int nr)
{
	if (nr == KEVENT_IOC_NR_RING_SHM)
		return ctx && ctx->t && ctx->t->ring_shm;
	if (nr == KEVENT_IOC_NR_FAULT)
		return q->core->cfg.fault_inject;
	/* D40: a revision-1 queue sees exactly take13: these numbers are unknown there */
	if (nr >= KEVENT_IOC_NR_RING_INIT)
		return kq_rule(q, KR_RING);
	return true;
}

/* ---- begin KEVENT_IOC_DRAIN (tests only): outside the table of revisions ---- */
static int plan_drain(const struct kqueue *q, unsigned int cmd, const void *arg,
		      size_t arg_len)
{
	size_t usize = _IOC_SIZE(cmd);
	struct kevent_drain d;
	int err;

	if (_IOC_DIR(cmd) != _IOC_WRITE || !q->core->cfg.fault_inject)
		return -ENOTTY;
	if (usize < KEVENT_DRAIN_SIZE_VER0)
		return -EINVAL;
	if (usize > KEVENT_IOC_ARG_MAX)
		return -E2BIG;
	if (!arg || arg_len != usize)
		return -EINVAL;
	err = copy_struct_in(&d, sizeof(d), arg, usize);
	if (err)
		return err;
	return d.__reserved ? -EINVAL : 0;
}

static int execute_drain(const struct kqueue *q)
{
	if (q->core->cfg.drain_origins)
		q->core->cfg.drain_origins();
	return 0;
}
/* ---- end KEVENT_IOC_DRAIN ---- */

/*
 * A fresh plan: every field 0 but the range arrays, whose entries past nin
 * and nout are never read (kcore.h).  A memset of the whole plan is a
 * 224-byte `rep stos` on x86-64, the largest single cost of a one-event
 * GET_EVENTS in the core (bench/changes.md).
 */
static void plan_reset(struct kdisp_plan *plan)
{
	plan->ctx = NULL;
	plan->cmd = plan->nr = 0;
	memset(&plan->arg, 0, sizeof(plan->arg));
	plan->timeout_ns = plan->rt_deadline = 0;
	plan->nin = plan->nout = 0;
	plan->reply_len = 0;
}

int kdisp_plan(struct kqueue *q, unsigned int cmd, const void *arg, size_t arg_len,
	       const struct kcaller *caller, struct kdisp_plan *plan)
{
	return kdisp_plan_ctx(q, NULL, cmd, arg, arg_len, caller, plan);
}

int kdisp_plan_ctx(struct kqueue *q, const struct kdisp_ctx *ctx, unsigned int cmd,
		   const void *arg, size_t arg_len, const struct kcaller *caller,
		   struct kdisp_plan *plan)
{
	unsigned int nr = _IOC_NR(cmd);
	size_t usize = _IOC_SIZE(cmd);
	const struct kdisp_cmd *c;
	int err;

	plan_reset(plan);
	plan->ctx = ctx;
	plan->cmd = cmd;
	plan->nr = nr;
	if (_IOC_TYPE(cmd) == KEVENT_IOC_MAGIC && nr == KEVENT_IOC_NR_DRAIN)
		return plan_drain(q, cmd, arg, arg_len);
	if (_IOC_TYPE(cmd) != KEVENT_IOC_MAGIC ||
	    nr >= sizeof(kdisp_cmds) / sizeof(kdisp_cmds[0]))
		return -ENOTTY;
	c = &kdisp_cmds[nr];
	if (_IOC_DIR(cmd) != c->dir || !cmd_offered(q, ctx, nr))
		return -ENOTTY;
	if (usize < c->ver0)
		return -EINVAL;
	if (usize > KEVENT_IOC_ARG_MAX)
		return -E2BIG;
	if (c->dir == _IOC_READ) {
		plan->reply_len = usize;
		return 0;
	}
	if (!arg || arg_len != usize)
		return -EINVAL;
	err = copy_struct_in(&plan->arg, c->ksize, arg, usize);
	if (err)
		return err;
	switch (nr) {
	case KEVENT_IOC_NR_CTL:
		return plan_ctl(q, plan);
	case KEVENT_IOC_NR_GET_EVENTS:
		return plan_get_events(q, plan);
	case KEVENT_IOC_NR_FAULT:
		return plan_fault(plan);
	case KEVENT_IOC_NR_RING_INIT:
		return plan_ring_init(q, plan);
	case KEVENT_IOC_NR_WAIT:
		return plan_wait(q, plan);
	case KEVENT_IOC_NR_COMMIT:
		return plan_ring(q);
	default:
		return plan_set_abi(plan);
	}
}

static int execute_info(struct kqueue *q, const struct kdisp_plan *plan,
			const struct kcaller *caller, void *reply)
{
	const struct kcore_config *cfg = &q->core->cfg;
	const struct kdisp_ctx *ctx = plan->ctx;
	struct kevent_info info;
	size_t n = plan->reply_len < sizeof(info) ? plan->reply_len : sizeof(info);

	memset(&info, 0, sizeof(info));
	info.size = (__u32)n;
	info.abi_revision = KCORE_REV_HIGHEST;
	info.backend = cfg->backend;
	info.features = cfg->features | (ctx ? ctx->features : KEVENT_FEAT_URING) | KEVENT_FEAT_STRICT |
			(cfg->fault_inject ? KEVENT_FEAT_FAULT_INJECT : 0) |
			(cmd_offered(q, ctx, KEVENT_IOC_NR_RING_SHM) ? KEVENT_FEAT_RING_SHM : 0);
	info.ukevent_size = sizeof(struct ukevent);
	info.mukevent_size = sizeof(struct mukevent);
	info.ring_page_size = KEVENT_RING_PAGE_SIZE;
	info.ring_slots_per_page = KEVENTS_ON_PAGE;
	info.ring_pages = KEVENT_RING_PAGES;
	info.ring_slots = KEVENT_MAX_EVENTS;
	info.max_kevents = KEVENT_MAX_EVENTS - 1;
	info.max_ctl_num = max_ctl_of(q, ctx);
	info.max_get_nr = max_get_of(q, ctx);
	kqueue_fill_info(q, caller, &info);
	/* copy_struct_to_user: a larger caller struct gets a zero tail. */
	memset(reply, 0, plan->reply_len);
	memcpy(reply, &info, n);
	return 0;
}

/* The transport names the ring; the core fills size and the zero tail. */
static int execute_ring_shm(const struct kdisp_plan *plan, const struct kcaller *caller,
			    void *reply)
{
	const struct kdisp_ctx *ctx = plan->ctx;
	struct kevent_ring_shm s;
	size_t n = plan->reply_len < sizeof(s) ? plan->reply_len : sizeof(s);
	int err;

	memset(&s, 0, sizeof(s));
	err = ctx->t->ring_shm(ctx->file, caller, &s);
	if (err)
		return err;
	s.size = (__u32)n;
	s.flags = 0;
	s.length = KEVENT_RING_SIZE;
	s.path[sizeof(s.path) - 1] = '\0';
	memset(reply, 0, plan->reply_len);
	memcpy(reply, &s, n);
	return 0;
}

int kdisp_execute(struct kqueue *q, const struct kdisp_plan *plan,
		  const struct kcaller *caller, const struct kuaccess *ua,
		  void *reply, const struct kwait_req *wr, struct kwaiter **waiter)
{
	switch (plan->nr) {
	case KEVENT_IOC_NR_INFO:
		return execute_info(q, plan, caller, reply);
	case KEVENT_IOC_NR_RING_SHM:
		return execute_ring_shm(plan, caller, reply);
	case KEVENT_IOC_NR_CTL:
		return kqueue_ctl(q, &plan->arg.ctl, caller, ua);
	case KEVENT_IOC_NR_GET_EVENTS:
		return kqueue_get_events(q, &plan->arg.get, plan->rt_deadline, caller, ua, wr,
					 waiter);
	case KEVENT_IOC_NR_SET_ABI:
		return kqueue_set_abi(q, &plan->arg.set_abi);
	case KEVENT_IOC_NR_FAULT:
		return kqueue_fault(q, &plan->arg.fault);
	case KEVENT_IOC_NR_RING_INIT:
		return kqueue_ring_init(q, &plan->arg.ring_init, ua);
	case KEVENT_IOC_NR_COMMIT:
		return kqueue_commit(q, &plan->arg.commit, ua);
	case KEVENT_IOC_NR_WAIT: {
		struct kwait_arg w = {
			plan->arg.wait.num, plan->arg.wait.old_uidx, plan->timeout_ns,
			!!(plan->arg.wait.ioc_flags & KEVENT_GET_NONBLOCK), plan->rt_deadline
		};

		return kqueue_wait(q, &w, caller, ua, wr, waiter);
	}
	case KEVENT_IOC_NR_DRAIN:
		return execute_drain(q);
	default:
		return -ENOTTY;
	}
}
