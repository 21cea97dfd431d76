// SPDX-License-Identifier: GPL-2.0
/*
 * One ioctl request, from loaded memory to its one reply (design.md B1).
 *
 * STATE (r->state, under r->lock, which kc_interrupt takes too):
 *
 *   RUNNING --execute returns a result------------------> reply, free
 *   RUNNING --execute parked, kc_park armed the callback-> PARKED
 *   RUNNING --complete() arrives first (another thread)--> EARLY
 *   EARLY   --kc_park--------------------------------------> REPLYING
 *   PARKED  --complete()-----------------------------------> REPLYING
 *
 * Whoever moves the request to REPLYING owns it: it disarms the interrupt
 * callback (fuse_req_interrupt_func(req, NULL, NULL) waits for a running
 * one and keeps new ones away, so the callback never sees a freed
 * kc_req), moves the results into the caller's memory (every
 * process_vm_writev before the reply), replies once and frees.  The
 * callback itself never replies: kwaiter_interrupt() only marks and
 * schedules (kcore.h), so complete() never runs inside it.
 *
 * LOCKING: r->lock is a leaf, never held across a call into the core or
 * libfuse.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kc-defer.h"
#include "kc-log.h"
#include "kc-req.h"
#include "kc-trace.h"

struct kc_req *kc_req_new(fuse_req_t req, struct kqueue *q, const struct kcaller *c)
{
	struct kc_req *r = malloc(sizeof(*r));

	if (!r)
		return NULL;
	memset(r, 0, offsetof(struct kc_req, x));
	pthread_mutex_init(&r->lock, NULL);
	r->state = KC_REQ_RUNNING;
	r->req = req;
	r->q = q;
	r->caller = *c;
	r->id = atomic_fetch_add(&kd.seq, 1) + 1;
	return r;
}

void kc_req_unrun(struct kc_req *r)
{
	if (atomic_exchange(&r->running, 0))
		kcore_running_exit(kd.core, &r->caller);
}

void kc_req_free(struct kc_req *r)
{
	kc_req_unrun(r);
	kx_xfer_free(&r->x);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

static const char *kc_path_name(const struct kx_xfer *x)
{
	return x->path == KX_PATH_PVM ? "process-vm" : "retry";
}

void kc_req_trace_in(const struct kc_req *r, unsigned int cmd)
{
	char line[256];

	if (!kd.opts.trace)
		return;
	kc_info("trace #%llu uid=%u pid=%d %s path=%s round=%s", r->id,
		(unsigned int)r->caller.uid, (int)r->caller.tid,
		kc_trace_fmt_arg(line, sizeof(line), cmd, r->x.hdr, r->x.usize),
		kc_path_name(&r->x), r->x.round);
}

/* D60: a CTL whose entries are 80-byte struct ukevent_ext. */
static int kc_req_ext(const struct kc_req *r)
{
	return r->x.plan.nr == KEVENT_IOC_NR_CTL && (r->x.plan.arg.ctl.ioc_flags & KEVENT_CTL_EXT);
}

static void kc_trace_out(const struct kc_req *r, int result)
{
	const void *out;
	size_t len;

	if (!kd.opts.trace)
		return;
	out = kx_xfer_written(&r->x, &len);
	if (result >= 0 && out)
		kc_trace_entries(r->id, "out", out, len, kc_req_ext(r));
	if (result < 0)
		kc_info("trace #%llu result -%s", r->id, strerrorname_np(-result) ?: "?");
	else
		kc_info("trace #%llu result %d", r->id, result);
}

/* A GET_EVENTS reply that waits for its events' slots in the file's pages. */
struct kc_late_reply {
	fuse_req_t req;
	int result;
	void *buf;
	size_t len;
};

static void kc_late_reply(void *arg)
{
	struct kc_late_reply *l = arg;

	fuse_reply_ioctl(l->req, l->result, l->buf, l->len);
	free(l->buf);
	free(l);
}

/*
 * Events are answered only once their slots are where the caller looks
 * (the front end's ring_after; FUSE: the file's pages, once mapped): 1
 * when handed over.
 */
static int kc_reply_after_ring(struct kc_req *r, int result, void *buf, size_t len)
{
	struct kc_late_reply *l;

	/*
	 * The file stays open while its call runs (no RELEASE before the
	 * reply), so r->ctx.file is alive; except at the stop, where queues
	 * are freed before deferred replies go out (D20): reply at once.
	 */
	if (result <= 0 || r->x.plan.nr != KEVENT_IOC_NR_GET_EVENTS || atomic_load(&kd.stopping))
		return 0;
	l = malloc(sizeof(*l));
	if (!l)
		return 0;
	*l = (struct kc_late_reply){ r->req, result, buf, len };
	if (kc_file_ring_after(r->ctx.file, kc_late_reply, l) == 0)
		return 1;
	free(l);
	return 0;
}

/* The one reply of a request that ran (B1): results out first, then reply. */
static void kc_reply(struct kc_req *r, int result)
{
	void *buf;
	size_t len;

	result = kx_xfer_finish(&r->x, result, &buf, &len);
	kc_trace_out(r, result);
	kc_req_unrun(r);
	if (kc_reply_after_ring(r, result, buf, len))
		return;
	if (result < 0)
		fuse_reply_err(r->req, -result);
	else
		fuse_reply_ioctl(r->req, result, buf, len);
	free(buf);
}

void kc_req_fail(struct kc_req *r, int err)
{
	kc_trace_out(r, err);
	kc_req_unrun(r);
	fuse_reply_err(r->req, -err);
	kc_req_free(r);
}

/* REPLYING: the parked call's result is in r->result. */
static void kc_req_finish(struct kc_req *r)
{
	int result = r->result;

	fuse_req_interrupt_func(r->req, NULL, NULL);
	/* D53: a due WAIT chooses and writes its slots now, on the uid lane */
	if (result == KDISP_WAIT_DUE)
		result = kwaiter_wait_copy(r->w, kx_xfer_ua(&r->x));
	/* O11: D67's counts of a GET_EVENTS taken on the core's worker */
	else if (result > 0 && kwaiter_has_counts(r->w) &&
		 kwaiter_counts(r->w, kx_xfer_ua(&r->x)) < 0)
		result = -EFAULT;
	/* D20: stopping with nothing ready is ENODEV, not a silent 0. */
	if (atomic_load(&kd.stopping) && result == 0)
		result = -ENODEV;
	kc_reply(r, result);
	kwaiter_put(r->w);
	kc_req_free(r);
}

static void kc_req_finish_job(void *arg)
{
	kc_req_finish(arg);
}

/*
 * kwait_req.complete: from any thread, once, events already in x's
 * buffers.  Moving them into the client's memory can block on the client
 * (B3), so when it does that moves to the uid's lane.
 */
static void kc_complete(void *ctx, int result)
{
	struct kc_req *r = ctx;
	int mine;

	pthread_mutex_lock(&r->lock);
	r->result = result;
	mine = r->state == KC_REQ_PARKED;
	r->state = mine ? KC_REQ_REPLYING : KC_REQ_EARLY;
	pthread_mutex_unlock(&r->lock);
	if (!mine)
		return;		/* kc_park replies */
	/* O11: counts left to read may wait on the client too */
	if ((kx_xfer_may_block(&r->x) || kwaiter_has_counts(r->w)) &&
	    !kc_defer(r->caller.uid, kc_req_finish_job, r))
		return;
	kc_req_finish(r);
}

/* FUSE interrupt (signal, SIGKILL): complete at once with what is ready. */
static void kc_interrupt(fuse_req_t req, void *data)
{
	struct kc_req *r = data;
	struct kwaiter *w;

	/* RUNNING here: kc_park set w and armed us, and is about to move on. */
	pthread_mutex_lock(&r->lock);
	w = r->state == KC_REQ_PARKED || r->state == KC_REQ_RUNNING ? r->w : NULL;
	pthread_mutex_unlock(&r->lock);
	if (kd.opts.trace)
		kc_info("trace #%llu interrupted", r->id);
	if (w)
		kwaiter_interrupt(w);
}

static void kc_park(struct kc_req *r, struct kwaiter *w)
{
	int mine;

	if (kd.opts.trace)
		kc_info("trace #%llu parked", r->id);
	pthread_mutex_lock(&r->lock);
	r->w = w;
	pthread_mutex_unlock(&r->lock);
	/*
	 * Armed before PARKED: once PARKED, complete() may reply and free r at
	 * any moment.  This calls kc_interrupt at once if the request was
	 * interrupted already.
	 */
	fuse_req_interrupt_func(r->req, kc_interrupt, r);
	pthread_mutex_lock(&r->lock);
	mine = r->state == KC_REQ_EARLY;
	r->state = mine ? KC_REQ_REPLYING : KC_REQ_PARKED;
	pthread_mutex_unlock(&r->lock);
	if (mine)
		kc_req_finish(r);
}

void kc_req_run(struct kc_req *r)
{
	struct kx_xfer *x = &r->x;
	const struct kuaccess *ua = kx_xfer_ua(x);
	struct kwait_req wr = { ua, kc_complete, r };
	struct kwaiter *w = NULL;
	int parks = x->plan.nr == KEVENT_IOC_NR_GET_EVENTS || x->plan.nr == KEVENT_IOC_NR_WAIT;
	int ret;

	if (kd.opts.trace && x->plan.nr == KEVENT_IOC_NR_CTL && x->nbuf)
		kc_trace_entries(r->id, "in", x->buf[0].mem, x->buf[0].r.len, kc_req_ext(r));
	ret = kdisp_execute(r->q, &x->plan, &r->caller, ua, x->reply, parks ? &wr : NULL, &w);
	if (ret == KDISP_PARKED) {
		/* Still ours: complete() frees r only after kc_park saw it. */
		kc_req_unrun(r);
		kc_park(r, w);
		return;
	}
	kc_reply(r, ret);
	kc_req_free(r);
}
