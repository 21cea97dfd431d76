/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ring of a fuse queue as the page cache of its file (abi.md section 9,
 * design.md section 7): the daemon keeps, per queue, an image of what it
 * sent the kernel and stores ring changes into the file's pages with
 * fuse_lowlevel_notify_store from one flusher thread of its own.
 */
#ifndef KC_FRING_H
#define KC_FRING_H

#include <stddef.h>

#include "kc-daemon.h"

struct kc_fring;

/* Start and stop the flusher thread (se: where the stores go). */
int kc_flusher_start(struct fuse_session *se);
void kc_flusher_stop(void);

/* A ring for node ino whose live bytes (written by the core) are at live. */
int kc_fring_new(fuse_ino_t ino, const void *live, struct kc_fring **ret);
/* The queue is gone: never touch live again; the flusher lets go later. */
void kc_fring_free(struct kc_fring *fr);

/* The core's ring_written(): mark [off, off + len) and wake the flusher. */
void kc_fring_written(struct kc_fring *fr, size_t off, size_t len);

/*
 * Run fn(arg) on the flusher once the ring as it is now is in the file's
 * pages (after the next pass that starts from here): a GET_EVENTS reply
 * or a poll wake-up, so that an event a caller hears of has its slot in
 * the mapping, as on the module.  Returns 0 when deferred; 1 when the
 * caller runs fn itself now (nobody has touched the pages yet, or no
 * memory).  fn must not block and must not need the queue.
 */
int kc_fring_after(struct kc_fring *fr, void (*fn)(void *), void *arg);

/* Answer a FUSE READ of [off, off + size) from the image last sent. */
void kc_fring_read(fuse_req_t req, struct kc_fring *fr, size_t size, off_t off);

#endif /* KC_FRING_H */
