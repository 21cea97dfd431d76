// SPDX-License-Identifier: GPL-2.0
/*
 * The open files of the queue core, shared by both front ends: kc-cuse.c
 * (/dev/kevent as a CUSE device) and kc-fuse.c (DIR/kevent in a FUSE
 * mount).  Each gives its own libfuse callbacks and calls in here; what
 * differs between them is asked of kd.front (struct kc_front, kc-front.h),
 * never of the options.
 *
 * open -> kqueue_open owned by the caller, its ring in shared memory;
 * release -> kqueue_release; poll -> kqueue_poll, woken by
 * fuse_lowlevel_notify_poll; ioctl -> the wrapper fetched (kc-xfer.c picks
 * process memory or, on CUSE only, the FUSE_IOCTL_RETRY rounds),
 * kdisp_plan_ctx with this transport's struct kdisp_ctx, the plan's ranges
 * fetched, then kc-req.c runs it to its one reply.  A blocking GET_EVENTS
 * parks in the core; no thread waits for it.
 *
 * What this transport gives the core (kcore.h, THE TRANSPORT CONTRACT):
 * per call, the limits of the path kc-xfer.c took (B4), the file's
 * O_NONBLOCK (A11), the path's feature bit and FD_ORIGINS when this caller
 * can have its fds taken (B2); per queue, a ring_shm hook naming the ring
 * object (B5).  The ring is the shared memory; a front end that also shows
 * it another way (FUSE: the file's page cache) keeps a ring of its own per
 * queue (front_ring), told of every change through ring_written(), and
 * says when what a caller hears of is visible there (ring_after).  A front
 * end without that gets no ring_written hook from the core at all.
 *
 * A file may have a node (FUSE: its inode): at most one live queue per
 * node, since a node's page cache is one (abi.md 7.7).  Node 0: none.
 *
 * LOCKING
 *  - kc_files.lock: the list of open queues.  A leaf; never held across a
 *    call into the core or libfuse.
 *  - kc_queue.ph_lock: the queue's saved poll handle.  A leaf.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "caller.h"
#include "kc-caller.h"
#include "kc-log.h"
#include "kc-req.h"

struct kc_queue {
	struct kc_queue *prev, *next;	/* kc_files.queues, under kc_files.lock */
	struct kqueue *q;
	unsigned long node;		/* the file's node id; 0: none */
	struct kc_ring ring;
	void *front_ring;		/* kd.front's own view of ring; NULL: none */
	int nonblock;			/* O_NONBLOCK at open (A11) */
	pthread_mutex_t ph_lock;
	struct fuse_pollhandle *ph;
};

static struct {
	pthread_mutex_t lock;
	struct kc_queue queues;		/* list head */
} kc_files = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* ---- the transport the core sees ---- */

/* KEVENT_IOC_RING_SHM: the caller may now open the ring object (B5). */
static int kc_ring_shm(void *file, const struct kcaller *caller, struct kevent_ring_shm *reply)
{
	struct kc_queue *kq = file;
	int err = kc_ring_grant(&kd.shm, &kq->ring, caller->uid);

	if (err)
		return err;
	snprintf(reply->path, sizeof(reply->path), "%s", kq->ring.path);
	return 0;
}

/* Runs with no core lock but maybe an origin's: only marks (kcore.h). */
static void kc_ring_written(void *file, size_t off, size_t len)
{
	struct kc_queue *kq = file;

	kd.front->ring_written(kq->front_ring, off, len);
}

/* Filled once kd.front is known (kc_files_init); read-only from then on. */
static struct ktransport kc_transport = {
	.ring_shm = kc_ring_shm,
};

void kc_files_init(void)
{
	kc_files.queues.next = kc_files.queues.prev = &kc_files.queues;
	/* No hook, no call: the core skips the work for a front end without one. */
	if (kd.front->ring_written)
		kc_transport.ring_written = kc_ring_written;
}

/*
 * This call's struct kdisp_ctx.  FD_ORIGINS costs a /proc read, so it is
 * only worked out for INFO, the one call that reports it.
 */
static void kc_ctx_fill(struct kc_req *r, struct kc_queue *kq, unsigned int cmd)
{
	struct kdisp_ctx *ctx = &r->ctx;

	*ctx = (struct kdisp_ctx){ .t = &kc_transport, .file = kq, .nonblock = kq->nonblock };
	kx_xfer_ctx(&r->x, cmd, ctx);
	/* fd origins need process access (pidfd_getfd): not on the retry path. */
	if (_IOC_NR(cmd) == KEVENT_IOC_NR_INFO && (ctx->features & KEVENT_FEAT_PROCESS_VM) &&
	    kcaller_files_tgid(&r->caller) > 0)
		ctx->features |= KEVENT_FEAT_FD_ORIGINS;
}

/* ---- queues ---- */

/* -EBUSY when kq's node already has a live queue (abi.md 7.7). */
static int kc_queue_link(struct kc_queue *kq)
{
	pthread_mutex_lock(&kc_files.lock);
	for (struct kc_queue *o = kc_files.queues.next; kq->node && o != &kc_files.queues;
	     o = o->next) {
		if (o->node == kq->node) {
			pthread_mutex_unlock(&kc_files.lock);
			return -EBUSY;
		}
	}
	kq->next = kc_files.queues.next;
	kq->prev = &kc_files.queues;
	kc_files.queues.next->prev = kq;
	kc_files.queues.next = kq;
	pthread_mutex_unlock(&kc_files.lock);
	return 0;
}

static void kc_queue_unlink(struct kc_queue *kq)
{
	pthread_mutex_lock(&kc_files.lock);
	kq->prev->next = kq->next;
	kq->next->prev = kq->prev;
	kq->next = kq->prev = kq;
	pthread_mutex_unlock(&kc_files.lock);
}

static void kc_poll_wake(void *arg)
{
	struct fuse_pollhandle *ph = arg;

	fuse_lowlevel_notify_poll(ph);
	fuse_pollhandle_destroy(ph);
}

/* 1 when fn is the caller's to run now; see struct kc_front's ring_after. */
static int kc_ring_after(struct kc_queue *kq, void (*fn)(void *), void *arg)
{
	if (!kd.front->ring_after)
		return 1;
	return kd.front->ring_after(kq->front_ring, fn, arg);
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
	/* Once the slot is where the caller looks (FUSE: the file's pages). */
	if (ph && kc_ring_after(kq, kc_poll_wake, ph))
		kc_poll_wake(ph);
}

int kc_file_ring_after(void *file, void (*fn)(void *), void *arg)
{
	return file ? kc_ring_after(file, fn, arg) : 1;
}

void *kc_file_front_ring(const struct fuse_file_info *fi)
{
	const struct kc_queue *kq = (const struct kc_queue *)(uintptr_t)fi->fh;

	return kq->front_ring;
}

static void kc_front_ring_free(struct kc_queue *kq)
{
	if (kq->front_ring && kd.front->ring_free)
		kd.front->ring_free(kq->front_ring);
}

static void kc_queue_free(struct kc_queue *kq)
{
	kqueue_set_notify(kq->q, NULL, NULL);
	kqueue_release(kq->q);
	if (kq->ph)
		fuse_pollhandle_destroy(kq->ph);
	/* Before the memory it copies from goes. */
	kc_front_ring_free(kq);
	kc_ring_destroy(&kd.shm, &kq->ring);
	pthread_mutex_destroy(&kq->ph_lock);
	free(kq);
}

static int kc_queue_new(const struct kcaller *owner, int flags, unsigned long node,
			struct kc_queue **ret)
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
	if (kd.front->ring_new)
		err = kd.front->ring_new(node, kq->ring.mem, &kq->front_ring);
	if (!err)
		err = kqueue_open(kd.core, owner, kq->ring.mem, &kq->q);
	if (err) {
		kc_front_ring_free(kq);
		kc_ring_destroy(&kd.shm, &kq->ring);
		free(kq);
		return err;
	}
	pthread_mutex_init(&kq->ph_lock, NULL);
	kq->node = node;
	kq->nonblock = !!(flags & O_NONBLOCK);
	kqueue_set_transport(kq->q, &kc_transport, kq);
	kqueue_set_notify(kq->q, kc_notify, kq);
	*ret = kq;
	return 0;
}

unsigned int kc_files_release_all(void)
{
	struct kc_queue *kq;
	unsigned int n = 0;

	for (;;) {
		pthread_mutex_lock(&kc_files.lock);
		kq = kc_files.queues.next != &kc_files.queues ? kc_files.queues.next : NULL;
		pthread_mutex_unlock(&kc_files.lock);
		if (!kq)
			return n;
		kc_queue_unlink(kq);
		kc_queue_free(kq);
		n++;
	}
}

/* ---- file operations ---- */

static void kc_caller_of(fuse_req_t req, struct kcaller *c)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	kc_caller_fill(c, ctx->uid, ctx->gid, ctx->pid);
}

void kc_file_open(fuse_req_t req, struct fuse_file_info *fi, unsigned long node)
{
	struct kc_queue *kq;
	struct kcaller c;
	int err;

	kc_caller_of(req, &c);
	err = kc_queue_new(&c, fi->flags, node, &kq);
	if (!err) {
		err = kc_queue_link(kq);
		if (err)
			kc_queue_free(kq);
	}
	if (err) {
		kc_dbg("open by uid %u: %s", (unsigned int)c.uid, strerror(-err));
		fuse_reply_err(req, -err);
		return;
	}
	fi->fh = (uintptr_t)kq;
	fi->nonseekable = 1;
	kc_dbg("open by uid %u pid %d: %s", (unsigned int)c.uid, (int)c.tid, kq->ring.path);
	/* An open the client abandoned meanwhile gets no release: undo it. */
	if (fuse_reply_open(req, fi)) {
		kc_queue_unlink(kq);
		kc_queue_free(kq);
	}
}

void kc_file_release(fuse_req_t req, struct fuse_file_info *fi)
{
	struct kc_queue *kq = (struct kc_queue *)(uintptr_t)fi->fh;

	kc_queue_unlink(kq);
	kc_dbg("release %s", kq->ring.path);
	kc_queue_free(kq);
	fuse_reply_err(req, 0);
}

struct kc_late_poll {
	fuse_req_t req;
	unsigned int mask;
};

static void kc_late_poll(void *arg)
{
	struct kc_late_poll *l = arg;

	fuse_reply_poll(l->req, l->mask);
	free(l);
}

/* "Readable" only once the ready events' slots are where the caller looks. */
static void kc_poll_reply(fuse_req_t req, struct kc_queue *kq, unsigned int mask)
{
	struct kc_late_poll *l = NULL;

	/* No allocation per poll for a front end that never defers. */
	if (kd.front->ring_after && mask)
		l = malloc(sizeof(*l));
	if (l) {
		*l = (struct kc_late_poll){ req, mask };
		if (!kc_ring_after(kq, kc_late_poll, l))
			return;
		free(l);
	}
	fuse_reply_poll(req, mask);
}

void kc_file_poll(fuse_req_t req, struct fuse_file_info *fi, struct fuse_pollhandle *ph)
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
	kc_poll_reply(req, kq, kqueue_poll(kq->q));
}

/* ---- ioctl ---- */

static void kc_retry_reply(fuse_req_t req, const struct kx_layout *l)
{
	struct iovec in[1 + KX_BUFS], out[1 + KDISP_RANGES];

	for (unsigned int i = 0; i < l->nin; i++)
		in[i] = (struct iovec){ (void *)(uintptr_t)l->in[i].addr, l->in[i].len };
	for (unsigned int i = 0; i < l->nout; i++)
		out[i] = (struct iovec){ (void *)(uintptr_t)l->out[i].addr, l->out[i].len };
	fuse_reply_ioctl_retry(req, in, l->nin, l->nout ? out : NULL, l->nout);
}

/* A retry round is asked for: this request ends here (B4: stateless rounds). */
static void kc_ask(struct kc_req *r, const struct kx_layout *l, int step)
{
	if (kd.opts.trace && step == KX_ASK_HEADER)
		kc_info("trace #%llu cmd=0x%x path=retry round=1 -> fetch wrapper (%zu bytes)",
			r->id, r->x.plan.cmd, r->x.usize);
	else if (kd.opts.trace)
		kc_info("trace #%llu -> retry in=%zu out=%zu", r->id, l->in_total, l->out_total);
	kc_req_unrun(r);
	kc_retry_reply(r->req, l);
	kc_req_free(r);
}

/*
 * One round: wrapper, plan, ranges, run.  On the retry path a round is
 * stateless: if it carries exactly what the header it carries needs, run;
 * otherwise ask for that (B4: re-parsed every round, so a header changed
 * in between is simply asked for again).  Takes over the caller's RUNNING
 * charge: the request gives it back before its reply (kc_req_unrun).
 */
static int kc_ua_fault_read(void *ctx, void *dst, __u64 uaddr, size_t len)
{
	return -EFAULT;
}

static int kc_ua_fault_write(void *ctx, __u64 uaddr, const void *src, size_t len)
{
	return -EFAULT;
}

/*
 * A CTL whose array could not be fetched from process memory: the core
 * still runs it, with memory that faults, so it counts as the queue's first
 * CTL (abi.md O2: any CTL that passed the plan, as on the module) and gives
 * D9's -EFAULT with no effect.  (On the retry path the kernel fails the
 * data round before the daemon hears of it: abi.md section 9.)
 */
static int kc_ctl_unreadable(struct kc_req *r, const struct kdisp_plan *plan)
{
	const struct kuaccess ua = { kc_ua_fault_read, kc_ua_fault_write, NULL };

	return kdisp_execute(r->q, plan, &r->caller, &ua, NULL, NULL, NULL);
}

static void kc_ioctl_round(fuse_req_t req, struct kc_queue *kq, const struct kcaller *c,
			   const struct kx_round *rd)
{
	struct kc_req *r = kc_req_new(req, kq->q, c);
	struct kdisp_plan plan;
	struct kx_layout l;
	int err;

	if (!r) {
		kcore_running_exit(kd.core, c);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	atomic_store(&r->running, 1);	/* r gives the charge back before replying */
	err = kx_xfer_start(&r->x, &kd.paths, rd, &l);
	if (err == KX_ASK_HEADER) {
		r->x.plan.cmd = rd->cmd;
		kc_ask(r, &l, err);
		return;
	}
	kc_req_trace_in(r, rd->cmd);
	if (!err) {
		kc_ctx_fill(r, kq, rd->cmd);
		err = kdisp_plan_ctx(r->q, &r->ctx, rd->cmd, r->x.hdr, r->x.usize, &r->caller, &plan);
	}
	if (!err) {
		err = kx_xfer_load(&r->x, &plan, rd, &l);
		if (err == -EFAULT && plan.nr == KEVENT_IOC_NR_CTL)
			err = kc_ctl_unreadable(r, &plan);
	}
	if (err < 0)
		kc_req_fail(r, err);
	else if (err == KX_ASK)
		kc_ask(r, &l, err);
	else
		kc_req_run(r);
}

/* A wrapper size of 0 or beyond KEVENT_IOC_ARG_MAX: decided on the number. */
static void kc_ioctl_nodata(fuse_req_t req, struct kc_queue *kq, unsigned int cmd,
			    const struct kcaller *c)
{
	struct kdisp_ctx ctx = { .t = &kc_transport, .file = kq, .nonblock = kq->nonblock };
	struct kdisp_plan plan;
	int err = kdisp_plan_ctx(kq->q, &ctx, cmd, NULL, 0, c, &plan);

	fuse_reply_err(req, err < 0 ? -err : EINVAL);
}

void kc_file_ioctl(fuse_req_t req, int scmd, void *uarg, struct fuse_file_info *fi,
		   unsigned int flags, const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	struct kc_queue *kq = (struct kc_queue *)(uintptr_t)fi->fh;
	unsigned int cmd = (unsigned int)scmd;	/* libfuse 3.14 passes an int */
	struct kx_round rd = {
		.cmd = cmd, .arg = (uintptr_t)uarg, .compat = !!(flags & FUSE_IOCTL_COMPAT),
		.in_buf = in_buf, .in_bufsz = in_bufsz, .out_bufsz = out_bufsz,
	};
	struct kcaller c;
	int err;

	if (_IOC_TYPE(cmd) != KEVENT_IOC_MAGIC) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	kc_caller_of(req, &c);
	rd.tid = c.tid;
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
	kc_ioctl_round(req, kq, &c, &rd);
}
