/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One ioctl request from the moment its memory is loaded to its one reply
 * (design.md B1).  See kc-req.c for the state machine.
 */
#ifndef KC_REQ_H
#define KC_REQ_H

#include "kc-daemon.h"

enum kc_req_state {
	KC_REQ_RUNNING,		/* in kdisp_execute; no interrupt callback yet */
	KC_REQ_PARKED,		/* parked, interrupt callback armed, no result */
	KC_REQ_EARLY,		/* the result came before the callback was armed */
	KC_REQ_REPLYING,	/* the one reply is taken: nobody else touches r */
};

struct kc_req {
	pthread_mutex_t lock;		/* state, result; shared with kc_interrupt */
	enum kc_req_state state;
	int result;
	fuse_req_t req;
	struct kqueue *q;
	struct kcaller caller;
	unsigned long long id;		/* trace number */
	atomic_int running;		/* holds the caller's RUNNING charge (B7) */
	struct kwaiter *w;		/* while parked */
	struct kdisp_ctx ctx;		/* what the transport limits for this call */
	struct kx_xfer x;
};

struct kc_req *kc_req_new(fuse_req_t req, struct kqueue *q, const struct kcaller *c);
void kc_req_free(struct kc_req *r);
/*
 * Give back the RUNNING charge r took over (kcore_running_enter), once:
 * before any reply, since the caller's next call may arrive on another
 * worker the moment the reply is sent, and when the call parks.
 */
void kc_req_unrun(struct kc_req *r);
/* Memory loaded: execute, then reply now or park until the core completes. */
void kc_req_run(struct kc_req *r);
/* Answer an error before anything ran, and free r. */
void kc_req_fail(struct kc_req *r, int err);
/* The trace line of a request whose wrapper is in r->x.hdr. */
void kc_req_trace_in(const struct kc_req *r, unsigned int cmd);

#endif /* KC_REQ_H */
