// SPDX-License-Identifier: GPL-2.0
/*
 * kevent-cuse: serves /dev/kevent as a CUSE device on top of the queue core.
 *
 * open -> kqueue_open owned by the caller; release -> kqueue_release;
 * ioctl -> kdisp_plan, the user memory fetched into private buffers (process
 * memory, or the FUSE_IOCTL_RETRY rounds), kdisp_execute, results written
 * back; KEVENT_IOC_RING_SHM is answered here; poll -> kqueue_poll, woken by
 * fuse_lowlevel_notify_poll.  A blocking GET_EVENTS parks in the core and is
 * answered from its completion callback; no thread waits for it.
 *
 * LOCKING
 *  - kd.qlock: the list of open queues.  A leaf; never held across a call
 *    into the core or libfuse.
 *  - kc_queue.ph_lock: the queue's saved poll handle.  A leaf.
 *  - kc_req.lock: a request's completion state (armed, result, the waiter).
 *    Never held across a call into the core or libfuse.  One reply per
 *    request (RULES B1): whoever finds both "armed" and "have_result" set
 *    replies; before that reply, fuse_req_interrupt_func(req, NULL, NULL)
 *    waits for a running interrupt callback (libfuse holds the request's
 *    own lock around it) and keeps new ones away, so the callback never
 *    sees a freed kc_req.
 */
#define FUSE_USE_VERSION 312

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>
#include <cuse_lowlevel.h>

#include "kcore.h"
#include "kc-caller.h"
#include "kc-defer.h"
#include "kc-log.h"
#include "kc-opts.h"
#include "kc-shm.h"
#include "kc-trace.h"
#include "kc-xfer.h"
#ifdef KC_HAVE_ORIGINS
#include "origins.h"
#endif

#ifndef KC_VERSION
#define KC_VERSION "unknown"
#endif

/* sysexits.h values, named here so the man page can list them. */
#define KC_EXIT_USAGE		64
#define KC_EXIT_UNAVAILABLE	69
#define KC_EXIT_OSERR		71
#define KC_EXIT_NOPERM		77

struct kc_queue {
	struct kc_queue *prev, *next;	/* kd.queues, under kd.qlock */
	struct kqueue *q;
	struct kc_ring ring;
	int nonblock;			/* O_NONBLOCK at open (A11) */
	pthread_mutex_t ph_lock;
	struct fuse_pollhandle *ph;
};

struct kc_req {
	pthread_mutex_t lock;
	fuse_req_t req;
	struct kc_queue *kq;
	struct kcaller caller;
	unsigned long long id;		/* trace number */
	struct kwaiter *w;
	int armed;			/* interrupt callback registered */
	int have_result;
	int result;
	int free_in_intr;		/* replied inside the interrupt callback */
	struct kx_xfer x;
};

static struct {
	struct kc_opts opts;
	struct kcore *core;
	struct kc_shmdir shm;
	pthread_mutex_t qlock;
	struct kc_queue queues;		/* list head */
	atomic_int stopping;
	atomic_ullong seq;
	atomic_int pvm_refused;
} kd;

static _Thread_local struct kc_req *kc_in_intr;

/* ---- queues ---- */

static void kc_queue_link(struct kc_queue *kq)
{
	pthread_mutex_lock(&kd.qlock);
	kq->next = kd.queues.next;
	kq->prev = &kd.queues;
	kd.queues.next->prev = kq;
	kd.queues.next = kq;
	pthread_mutex_unlock(&kd.qlock);
}

static void kc_queue_unlink(struct kc_queue *kq)
{
	pthread_mutex_lock(&kd.qlock);
	kq->prev->next = kq->next;
	kq->next->prev = kq->prev;
	kq->next = kq->prev = kq;
	pthread_mutex_unlock(&kd.qlock);
}

/* The core says the queue became ready: wake the kernel's poll waiters. */
static void kc_notify(void *ctx)
{
	struct kc_queue *kq = ctx;
	struct fuse_pollhandle *ph;

	pthread_mutex_lock(&kq->ph_lock);
	ph = kq->ph;
	kq->ph = NULL;
	pthread_mutex_unlock(&kq->ph_lock);
	if (ph) {
		fuse_lowlevel_notify_poll(ph);
		fuse_pollhandle_destroy(ph);
	}
}

static void kc_queue_free(struct kc_queue *kq)
{
	kqueue_set_notify(kq->q, NULL, NULL);
	kqueue_release(kq->q);
	if (kq->ph)
		fuse_pollhandle_destroy(kq->ph);
	kc_ring_destroy(&kd.shm, &kq->ring);
	pthread_mutex_destroy(&kq->ph_lock);
	free(kq);
}

static int kc_queue_new(const struct kcaller *owner, int flags, struct kc_queue **ret)
{
	struct kc_queue *kq = calloc(1, sizeof(*kq));
	int err;

	if (!kq)
		return -ENOMEM;
	err = kc_ring_create(&kd.shm, &kq->ring);
	if (err) {
		free(kq);
		return err;
	}
	err = kqueue_open(kd.core, owner, kq->ring.mem, &kq->q);
	if (err) {
		kc_ring_destroy(&kd.shm, &kq->ring);
		free(kq);
		return err;
	}
	pthread_mutex_init(&kq->ph_lock, NULL);
	kq->nonblock = !!(flags & O_NONBLOCK);
	kqueue_set_notify(kq->q, kc_notify, kq);
	*ret = kq;
	return 0;
}

static void kc_caller_of(fuse_req_t req, struct kcaller *c)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	kc_caller_fill(c, ctx->uid, ctx->gid, ctx->pid);
}

static void kc_open(fuse_req_t req, struct fuse_file_info *fi)
{
	struct kc_queue *kq;
	struct kcaller c;
	int err;

	kc_caller_of(req, &c);
	err = kc_queue_new(&c, fi->flags, &kq);
	if (err) {
		kc_dbg("open by uid %u: %s", (unsigned int)c.uid, strerror(-err));
		fuse_reply_err(req, -err);
		return;
	}
	kc_queue_link(kq);
	fi->fh = (uintptr_t)kq;
	fi->nonseekable = 1;
	kc_dbg("open by uid %u pid %d: %s", (unsigned int)c.uid, (int)c.tid, kq->ring.path);
	/* An open the client abandoned meanwhile gets no release: undo it. */
	if (fuse_reply_open(req, fi)) {
		kc_queue_unlink(kq);
		kc_queue_free(kq);
	}
}

static void kc_release(fuse_req_t req, struct fuse_file_info *fi)
{
	struct kc_queue *kq = (struct kc_queue *)(uintptr_t)fi->fh;

	kc_queue_unlink(kq);
	kc_dbg("release %s", kq->ring.path);
	kc_queue_free(kq);
	fuse_reply_err(req, 0);
}

/* D15: the 2006 device had no read or write. */
static void kc_read(fuse_req_t req, size_t size, off_t off, struct fuse_file_info *fi)
{
	fuse_reply_err(req, EINVAL);
}

static void kc_write(fuse_req_t req, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	fuse_reply_err(req, EINVAL);
}

static void kc_poll(fuse_req_t req, struct fuse_file_info *fi, struct fuse_pollhandle *ph)
{
	struct kc_queue *kq = (struct kc_queue *)(uintptr_t)fi->fh;
	struct fuse_pollhandle *old = NULL;

	/* Saved before asking, so a readiness edge in between still wakes. */
	if (ph) {
		pthread_mutex_lock(&kq->ph_lock);
		old = kq->ph;
		kq->ph = ph;
		pthread_mutex_unlock(&kq->ph_lock);
	}
	if (old)
		fuse_pollhandle_destroy(old);
	fuse_reply_poll(req, kqueue_poll(kq->q));
}

/* ---- one ioctl ---- */

static const char *kc_path_name(const struct kx_xfer *x)
{
	return x->path == KX_PATH_PVM ? "process-vm" : "retry";
}

static void kc_req_free(struct kc_req *r)
{
	kx_xfer_free(&r->x);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

static struct kc_req *kc_req_new(fuse_req_t req, struct kc_queue *kq, const struct kcaller *c,
				 enum kx_path path, __u64 arg, size_t usize)
{
	struct kc_req *r = malloc(sizeof(*r));

	if (!r)
		return NULL;
	pthread_mutex_init(&r->lock, NULL);
	r->req = req;
	r->kq = kq;
	r->caller = *c;
	r->id = atomic_fetch_add(&kd.seq, 1) + 1;
	r->w = NULL;
	r->armed = r->have_result = r->result = r->free_in_intr = 0;
	kx_xfer_init(&r->x, path, c->tid, arg, usize);
	return r;
}

/* INFO answers for the path this caller's arrays take (B2, B4). */
static void kc_patch_info(struct kc_req *r)
{
	const __u32 pathbits = KEVENT_FEAT_PROCESS_VM | KEVENT_FEAT_RETRY_PATH |
			       KEVENT_FEAT_FD_ORIGINS;
	struct kevent_info info;
	int pvm = r->x.path == KX_PATH_PVM;
	pid_t tgid;

	if (r->x.usize < sizeof(info))
		return;
	memcpy(&info, r->x.reply, sizeof(info));
	info.features &= ~pathbits;
	info.features |= pvm ? KEVENT_FEAT_PROCESS_VM : KEVENT_FEAT_RETRY_PATH;
	tgid = pvm ? kc_caller_tgid(&r->caller) : 0;
	if (tgid && kc_same_files(tgid, r->caller.tid) == 1)
		info.features |= KEVENT_FEAT_FD_ORIGINS;
	info.max_ctl_num = pvm ? KX_PVM_MAX_NR : KX_RETRY_MAX_NR;
	info.max_get_nr = pvm ? KX_PVM_MAX_NR : KX_RETRY_MAX_NR;
	memcpy(r->x.reply, &info, sizeof(info));
}

static void kc_trace_out(struct kc_req *r, int result)
{
	struct kx_xfer *x = &r->x;

	if (!kd.opts.trace)
		return;
	if (result >= 0 && x->out_written)
		kc_trace_ukevents(r->id, "out", x->outbuf, x->out_hi / sizeof(struct ukevent));
	if (result < 0)
		kc_info("trace #%llu result -%s", r->id, strerrorname_np(-result) ?: "?");
	else
		kc_info("trace #%llu result %d", r->id, result);
}

/* The one reply of a request that ran (B1). */
static void kc_reply(struct kc_req *r, int result)
{
	struct kx_xfer *x = &r->x;
	void *buf = NULL;
	size_t len = 0;

	if (result >= 0 && x->plan.nr == KEVENT_IOC_NR_INFO)
		kc_patch_info(r);
	if (x->path == KX_PATH_PVM) {
		result = kx_xfer_flush_pvm(x, result);
	} else if (result >= 0) {
		int err = kx_xfer_retry_out(x, result, &buf, &len);

		if (err)
			result = err;
	}
	kc_trace_out(r, result);
	if (result < 0)
		fuse_reply_err(r->req, -result);
	else
		fuse_reply_ioctl(r->req, result, buf, len);
	free(buf);
}

/* Both the result and the interrupt registration are there: reply once. */
static void kc_req_finish(struct kc_req *r, int in_intr)
{
	int result = r->result;

	if (!in_intr)
		fuse_req_interrupt_func(r->req, NULL, NULL);
	/* D20: stopping with nothing ready is ENODEV, not a silent 0. */
	if (atomic_load(&kd.stopping) && result == 0)
		result = -ENODEV;
	kc_reply(r, result);
	kwaiter_put(r->w);
	r->w = NULL;
	if (in_intr) {
		pthread_mutex_lock(&r->lock);
		r->free_in_intr = 1;
		pthread_mutex_unlock(&r->lock);
		return;
	}
	kc_req_free(r);
}

static void kc_req_finish_job(void *arg)
{
	kc_req_finish(arg, 0);
}

/*
 * kwait_req.complete: from any thread, once, events already in x's
 * buffers.  Writing them into the client's memory can block on the client
 * (B3), so on the process-memory path that moves to the uid's lane.
 */
static void kc_complete(void *ctx, int result)
{
	struct kc_req *r = ctx;
	int armed, in_intr = kc_in_intr == r;

	pthread_mutex_lock(&r->lock);
	r->result = result;
	r->have_result = 1;
	armed = r->armed;
	pthread_mutex_unlock(&r->lock);
	if (!armed)
		return;
	if (r->x.path == KX_PATH_PVM && !in_intr &&
	    !kc_defer(r->caller.uid, kc_req_finish_job, r))
		return;
	kc_req_finish(r, in_intr);
}

/* FUSE interrupt (signal, SIGKILL): complete at once with what is ready. */
static void kc_interrupt(fuse_req_t req, void *data)
{
	struct kc_req *r = data;
	struct kwaiter *w;
	int free_now;

	pthread_mutex_lock(&r->lock);
	w = r->have_result ? NULL : r->w;
	pthread_mutex_unlock(&r->lock);
	if (kd.opts.trace)
		kc_info("trace #%llu interrupted", r->id);
	kc_in_intr = r;
	if (w)
		kwaiter_interrupt(w);
	kc_in_intr = NULL;
	pthread_mutex_lock(&r->lock);
	free_now = r->free_in_intr;
	pthread_mutex_unlock(&r->lock);
	if (free_now)
		kc_req_free(r);
}

static void kc_park(struct kc_req *r, struct kwaiter *w)
{
	int done;

	if (kd.opts.trace)
		kc_info("trace #%llu parked", r->id);
	r->w = w;
	fuse_req_interrupt_func(r->req, kc_interrupt, r);
	pthread_mutex_lock(&r->lock);
	r->armed = 1;
	done = r->have_result;
	pthread_mutex_unlock(&r->lock);
	if (done)
		kc_req_finish(r, 0);
}

/* Private buffers are loaded: run the call in the core. */
static void kc_execute(struct kc_req *r)
{
	struct kx_xfer *x = &r->x;
	struct kwait_req wr = { &x->ua, kc_complete, r };
	struct kwaiter *w = NULL;
	int ret;

	if (kd.opts.trace && x->plan.nr == KEVENT_IOC_NR_CTL && x->inbuf)
		kc_trace_ukevents(r->id, "in", x->inbuf, x->plan.in.len / sizeof(struct ukevent));
	ret = kdisp_execute(r->kq->q, &x->plan, &r->caller, &x->ua, x->reply,
			    x->plan.nr == KEVENT_IOC_NR_GET_EVENTS ? &wr : NULL, &w);
	if (ret == KDISP_PARKED) {
		kc_park(r, w);
		return;
	}
	kc_reply(r, ret);
	kc_req_free(r);
}

static void kc_fail(struct kc_req *r, int err)
{
	kc_trace_out(r, err);
	fuse_reply_err(r->req, -err);
	kc_req_free(r);
}

/* KEVENT_IOC_RING_SHM: the core leaves it to the transport. */
static int kc_ring_shm(struct kc_req *r, unsigned int cmd)
{
	struct kevent_ring_shm s;
	struct kx_xfer *x = &r->x;
	int err;

	if (_IOC_DIR(cmd) != _IOC_READ)
		return -ENOTTY;
	if (x->usize < KEVENT_RING_SHM_SIZE_VER0)
		return -EINVAL;
	err = kc_ring_grant(&kd.shm, &r->kq->ring, r->caller.uid);
	if (err)
		return err;
	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.length = KEVENT_RING_SIZE;
	snprintf(s.path, sizeof(s.path), "%s", r->kq->ring.path);
	memset(x->reply, 0, x->usize);
	memcpy(x->reply, &s, sizeof(s));
	x->plan.nr = KEVENT_IOC_NR_RING_SHM;
	x->plan.reply_len = x->usize;
	return 0;
}

static void kc_trace_in(struct kc_req *r, unsigned int cmd, const char *round)
{
	char line[256];

	if (!kd.opts.trace)
		return;
	kc_info("trace #%llu uid=%u pid=%d %s path=%s round=%s", r->id,
		(unsigned int)r->caller.uid, (int)r->caller.tid,
		kc_trace_fmt_arg(line, sizeof(line), cmd, r->x.hdr, r->x.usize),
		kc_path_name(&r->x), round);
}

/* The wrapper bytes are in x->hdr: plan, and RING_SHM.  0 to go on. */
static int kc_plan(struct kc_req *r, unsigned int cmd, __u32 max_nr)
{
	struct kdisp_plan plan;
	int err;

	if (_IOC_NR(cmd) == KEVENT_IOC_NR_RING_SHM)
		return kc_ring_shm(r, cmd);
	kx_fix_header(cmd, r->x.hdr, r->x.usize, r->kq->nonblock, max_nr);
	err = kdisp_plan(r->kq->q, cmd, r->x.hdr, r->x.usize, &r->caller, &plan);
	if (err)
		return err;
	return kx_xfer_set_plan(&r->x, &plan);
}

static int kc_is_ring_shm(const struct kc_req *r)
{
	return r->x.plan.nr == KEVENT_IOC_NR_RING_SHM;
}

/* Primary path: everything in this one round.  -EPERM: fall back. */
static int kc_ioctl_pvm(fuse_req_t req, struct kc_queue *kq, unsigned int cmd, __u64 arg,
			const struct kcaller *c)
{
	struct kc_req *r = kc_req_new(req, kq, c, KX_PATH_PVM, arg, _IOC_SIZE(cmd));
	int err;

	if (!r)
		return -ENOMEM;
	err = kx_pvm_read(c->tid, r->x.hdr, arg, r->x.usize);
	if (err == -EPERM) {
		if (!atomic_exchange(&kd.pvm_refused, 1))
			kc_warn("process memory refused (EPERM, Yama ptrace_scope?): using the ioctl retry path");
		kc_req_free(r);
		return -EPERM;
	}
	kc_trace_in(r, cmd, "1");
	if (!err)
		err = kc_plan(r, cmd, KX_PVM_MAX_NR);
	if (!err)
		err = kx_xfer_load_pvm(&r->x);
	if (err) {
		kc_fail(r, err);
	} else if (kc_is_ring_shm(r)) {
		kc_reply(r, 0);
		kc_req_free(r);
	} else {
		kc_execute(r);
	}
	return 0;
}

static void kc_retry_reply(fuse_req_t req, const struct kx_layout *l)
{
	struct iovec in[3], out[2];

	for (unsigned int i = 0; i < l->nin; i++)
		in[i] = (struct iovec){ (void *)(uintptr_t)l->in[i].addr, l->in[i].len };
	for (unsigned int i = 0; i < l->nout; i++)
		out[i] = (struct iovec){ (void *)(uintptr_t)l->out[i].addr, l->out[i].len };
	fuse_reply_ioctl_retry(req, in, l->nin, l->nout ? out : NULL, l->nout);
}

/* The first retry round: just the wrapper (and room for a reply struct). */
static void kc_retry_header(struct kc_req *r, unsigned int cmd)
{
	struct kx_layout l;

	kx_layout_header(&l, r->x.arg, r->x.usize, _IOC_DIR(cmd) & _IOC_READ);
	if (kd.opts.trace)
		kc_info("trace #%llu cmd=0x%x path=retry round=1 -> fetch wrapper (%zu bytes)",
			r->id, cmd, r->x.usize);
	kc_retry_reply(r->req, &l);
	kc_req_free(r);
}

/*
 * The wrapper in this round is planned: 0 to run now, 1 when another
 * round was asked for, else -errno.
 */
static int kc_retry_check(struct kc_req *r, size_t in_bufsz, size_t out_bufsz)
{
	struct kx_layout l;
	int err;

	if (kc_is_ring_shm(r))
		return out_bufsz == r->x.usize ? 0 : -EPROTO;
	err = kx_layout_data(&l, r->x.arg, r->x.usize, &r->x.plan);
	if (err)
		return err;
	if (kx_layout_matches(&l, in_bufsz, out_bufsz))
		return 0;
	if (kd.opts.trace)
		kc_info("trace #%llu -> retry in=%zu out=%zu", r->id, l.in_total, l.out_total);
	kc_retry_reply(r->req, &l);
	return 1;
}

/*
 * Fallback path: a round is stateless.  If it carries exactly what the
 * header it carries needs, run; otherwise ask for that (B4: re-parsed
 * every round, so a header changed in between is simply asked for again).
 */
static void kc_ioctl_retry(fuse_req_t req, struct kc_queue *kq, unsigned int cmd, __u64 arg,
			   const struct kcaller *c, int compat, const void *in_buf,
			   size_t in_bufsz, size_t out_bufsz)
{
	struct kc_req *r = kc_req_new(req, kq, c, KX_PATH_RETRY, arg, _IOC_SIZE(cmd));
	int err;

	if (!r) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (in_bufsz < r->x.usize) {
		kc_retry_header(r, cmd);
		return;
	}
	memcpy(r->x.hdr, in_buf, r->x.usize);
	kc_trace_in(r, cmd, in_bufsz == r->x.usize ? "header" : "data");
	err = kc_plan(r, cmd, KX_RETRY_MAX_NR);
	if (!err && compat && !kc_is_ring_shm(r))
		err = kx_plan_compat_ok(&r->x.plan);
	if (!err)
		err = kc_retry_check(r, in_bufsz, out_bufsz);
	if (err < 0) {
		kc_fail(r, err);
	} else if (err > 0) {
		kc_req_free(r);
	} else if (kc_is_ring_shm(r)) {
		kc_reply(r, 0);
		kc_req_free(r);
	} else {
		kx_xfer_load_retry(&r->x, in_buf, in_bufsz);
		kc_execute(r);
	}
}

/* A wrapper size of 0 or beyond KEVENT_IOC_ARG_MAX: decided on the number. */
static void kc_ioctl_nodata(fuse_req_t req, struct kc_queue *kq, unsigned int cmd,
			    const struct kcaller *c)
{
	struct kdisp_plan plan;
	int err;

	if (_IOC_NR(cmd) == KEVENT_IOC_NR_RING_SHM)
		err = _IOC_DIR(cmd) != _IOC_READ ? -ENOTTY :
		      _IOC_SIZE(cmd) ? -E2BIG : -EINVAL;
	else
		err = kdisp_plan(kq->q, cmd, NULL, 0, c, &plan);
	fuse_reply_err(req, err < 0 ? -err : EINVAL);
}

static void kc_ioctl(fuse_req_t req, int scmd, void *uarg, struct fuse_file_info *fi,
		     unsigned int flags, const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	struct kc_queue *kq = (struct kc_queue *)(uintptr_t)fi->fh;
	unsigned int cmd = (unsigned int)scmd;	/* libfuse 3.14 passes an int */
	__u64 arg = (uintptr_t)uarg;
	struct kcaller c;
	int err;

	if (_IOC_TYPE(cmd) != KEVENT_IOC_MAGIC) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	kc_caller_of(req, &c);
	/* Nothing to fetch: the dispatcher answers (ENOTTY, EINVAL, E2BIG). */
	if (_IOC_SIZE(cmd) == 0 || _IOC_SIZE(cmd) > KEVENT_IOC_ARG_MAX) {
		kc_ioctl_nodata(req, kq, cmd, &c);
		return;
	}
	/* B3, D18: one uid never occupies every worker. */
	err = kcore_running_enter(kd.core, &c);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	err = -EPERM;
	/* A fresh request (no data yet) tries process memory first (B2). */
	if (!in_bufsz && !out_bufsz && c.tid && !kd.opts.no_process_vm &&
	    !atomic_load(&kd.pvm_refused))
		err = kc_ioctl_pvm(req, kq, cmd, arg, &c);
	if (err == -EPERM)
		kc_ioctl_retry(req, kq, cmd, arg, &c, !!(flags & FUSE_IOCTL_COMPAT), in_buf, in_bufsz,
			       out_bufsz);
	else if (err)
		fuse_reply_err(req, -err);
	kcore_running_exit(kd.core, &c);
}

/* ---- start and stop ---- */

/* devtmpfs creates the node 0600; B5: chmod it once CUSE init is done. */
static void kc_init_done(void *userdata)
{
	char dev[64], proc[64];
	struct stat st;
	int fd = -1;

	snprintf(dev, sizeof(dev), "/dev/%s", kd.opts.name);
	for (int i = 0; i < 200 && fd < 0; i++) {
		fd = open(dev, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			usleep(10000);
	}
	if (fd < 0) {
		kc_err("%s did not appear: %s", dev, strerror(errno));
		return;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (fstat(fd, &st) || !S_ISCHR(st.st_mode))
		kc_err("%s is not a character device", dev);
	else if (chmod(proc, kd.opts.mode))
		kc_err("chmod %s: %s", dev, strerror(errno));
	else
		kc_info("serving %s (%u:%u, mode %04o)", dev, major(st.st_rdev),
			minor(st.st_rdev), kd.opts.mode);
	close(fd);
}

static const struct cuse_lowlevel_ops kc_ops = {
	.init_done = kc_init_done,
	.open = kc_open,
	.read = kc_read,
	.write = kc_write,
	.release = kc_release,
	.ioctl = kc_ioctl,
	.poll = kc_poll,
};

/*
 * B7: every fd-holding kevent costs the daemon a descriptor.  As root it
 * may go past the hard limit, up to fs.nr_open.
 */
static void kc_raise_nofile(void)
{
	unsigned long nr_open = 0;
	struct rlimit rl;
	FILE *f;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	f = fopen("/proc/sys/fs/nr_open", "r");
	if (f) {
		if (fscanf(f, "%lu", &nr_open) != 1)
			nr_open = 0;
		fclose(f);
	}
	if (nr_open > rl.rlim_max)
		rl.rlim_max = nr_open;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		kc_warn("cannot raise RLIMIT_NOFILE: %s", strerror(errno));
	else
		kc_dbg("RLIMIT_NOFILE %lu", (unsigned long)rl.rlim_cur);
}

/* Clear messages and distinct codes for what an operator must fix. */
static int kc_preflight(void)
{
	if (geteuid() != 0) {
		kc_err("must run as root: it reads callers' memory, takes their fds and owns /dev/cuse");
		return KC_EXIT_NOPERM;
	}
	if (access("/dev/cuse", R_OK | W_OK)) {
		int e = errno;

		if (e == ENOENT)
			kc_err("/dev/cuse is missing: this kernel has no CUSE (try 'modprobe cuse')");
		else
			kc_err("/dev/cuse: %s", strerror(e));
		return e == EACCES || e == EPERM ? KC_EXIT_NOPERM : KC_EXIT_UNAVAILABLE;
	}
	return 0;
}

#ifdef KC_HAVE_ORIGINS
/* The origins' rare lines (an inotify/fanotify overflow) go where ours go. */
static void kc_origins_log(const char *line)
{
	kc_warn("origins: %s", line);
}
#endif

static int kc_core_start(void)
{
	struct kcore_config cfg;
	int err;

	memset(&cfg, 0, sizeof(cfg));
	cfg.backend = KEVENT_BACKEND_CUSE;
	cfg.features = KEVENT_FEAT_RING_SHM | KEVENT_FEAT_PROCESS_VM | KEVENT_FEAT_FD_ORIGINS;
	cfg.max_ctl_num = KX_PVM_MAX_NR;
	cfg.max_get_nr = KX_PVM_MAX_NR;
	memcpy(cfg.caps, kd.opts.caps, sizeof(cfg.caps));
	cfg.fault_inject = kd.opts.fault_inject;
	if (cfg.fault_inject)
		kc_warn("--fault-inject: KEVENT_IOC_FAULT answers; for test suites only");
	err = kcore_new(&cfg, &kd.core);
	if (err)
		return err;
#ifdef KC_HAVE_ORIGINS
	{
		struct korigins_config ocfg = { .log = kc_origins_log };

		err = korigins_start(&ocfg);
		if (err)
			kc_warn("event origins unavailable (%s): every ADD will fail per entry",
				strerror(-err));
	}
#endif
	return 0;
}

/* D20: parked calls answered (what is ready, else ENODEV), rings removed. */
static void kc_shutdown(void)
{
	struct kc_queue *kq;
	unsigned int n = 0;

	atomic_store(&kd.stopping, 1);
	for (;;) {
		pthread_mutex_lock(&kd.qlock);
		kq = kd.queues.next != &kd.queues ? kd.queues.next : NULL;
		pthread_mutex_unlock(&kd.qlock);
		if (!kq)
			break;
		kc_queue_unlink(kq);
		kc_queue_free(kq);
		n++;
	}
	/* The replies of the calls completed above. */
	kc_defer_stop();
#ifdef KC_HAVE_ORIGINS
	korigins_stop();
#endif
	kcore_free(kd.core);
	kc_info("stopped; %u open queue%s released", n, n == 1 ? "" : "s");
}

static int kc_serve(void)
{
	char devname[16 + KC_NAME_MAX];
	const char *dev_info[] = { devname };
	struct cuse_info ci = {
		.dev_info_argc = 1,
		.dev_info_argv = dev_info,
		.flags = CUSE_UNRESTRICTED_IOCTL,
	};
	char *fargv[4] = { "kevent-cuse" };
	struct fuse_loop_config *lc;
	struct fuse_session *se;
	int fargc = 1, mt, err;

	snprintf(devname, sizeof(devname), "DEVNAME=%s", kd.opts.name);
	if (kd.opts.foreground)
		fargv[fargc++] = "-f";
	if (kd.opts.fuse_debug)
		fargv[fargc++] = "-d";
	se = cuse_lowlevel_setup(fargc, fargv, &ci, &kc_ops, &mt, NULL);
	if (!se) {
		kc_err("CUSE setup failed");
		return KC_EXIT_UNAVAILABLE;
	}
	/* Daemonised: stderr is gone, syslog is what is left. */
	if (!kd.opts.foreground && !kd.opts.use_syslog)
		kc_log_init("kevent-cuse", 1, kd.opts.debug);
	/* After the fork of daemonising: the core starts its own threads. */
	kc_defer_init();
	err = kc_core_start();
	if (err) {
		kc_err("core: %s", strerror(-err));
		cuse_lowlevel_teardown(se);
		return KC_EXIT_OSERR;
	}
	lc = fuse_loop_cfg_create();
	fuse_loop_cfg_set_max_threads(lc, kd.opts.workers);
	fuse_loop_cfg_set_idle_threads(lc, kd.opts.workers);
	err = fuse_session_loop_mt(se, lc);
	fuse_loop_cfg_destroy(lc);
	kc_shutdown();
	cuse_lowlevel_teardown(se);
	/* libfuse reports the signal that ended the loop: a clean stop. */
	if (err == SIGTERM || err == SIGINT || err == SIGHUP)
		err = 0;
	if (err)
		kc_err("CUSE session ended with error %d", err);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	unsigned int stale = 0;
	int err;

	kc_opts_init(&kd.opts);
	if (kc_opts_parse(&kd.opts, argc, argv, stderr)) {
		fprintf(stderr, "Try '%s --help'.\n", argv[0]);
		return KC_EXIT_USAGE;
	}
	if (kd.opts.help) {
		kc_opts_usage(stdout, argv[0]);
		return 0;
	}
	if (kd.opts.version) {
		printf("kevent-cuse %s (kevent ABI revision %d, take13)\n", KC_VERSION,
		       KEVENT_ABI_REVISION);
		return 0;
	}
	kc_log_init("kevent-cuse", kd.opts.use_syslog, kd.opts.debug);
	err = kc_preflight();
	if (err)
		return err;
	kc_raise_nofile();
	err = kc_shmdir_open(&kd.shm, kd.opts.shm_dir, &stale);
	if (err) {
		kc_err("ring directory %s: %s (must be a directory of ours on tmpfs)",
		       kd.opts.shm_dir, strerror(-err));
		return KC_EXIT_OSERR;
	}
	if (stale)
		kc_info("removed %u stale ring object%s", stale, stale == 1 ? "" : "s");
	pthread_mutex_init(&kd.qlock, NULL);
	kd.queues.next = kd.queues.prev = &kd.queues;
	err = kc_serve();
	kc_shmdir_close(&kd.shm, 1);
	return err;
}
