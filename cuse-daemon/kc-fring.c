// SPDX-License-Identifier: GPL-2.0
/*
 * A fuse queue's ring as the page cache of its file: a plain mmap() of
 * DIR/kevent maps it (KEVENT_FEAT_RING_MMAP).  The core writes the ring in
 * the daemon's memory (the RING_SHM object, so that path keeps working);
 * this file carries those bytes into the kernel's pages.
 *
 * Why it is built this way (measured on libfuse 3.14, Linux 6.x):
 *  - fuse_lowlevel_notify_store waits on the page lock of an in-flight
 *    READ, and READs are answered by libfuse's workers.  So stores run on
 *    one flusher thread of our own, never a worker, never under a core
 *    lock: the core's ring_written() only marks the bytes and signals.
 *  - Clean pages may be evicted and re-read at any time.  A READ is
 *    answered from img, the image the flusher is sending or has sent; after
 *    the first READ only the flusher changes img, between two stores, so a READ never
 *    hands the kernel anything newer than a store still queued on the page
 *    lock (which would let the index step back when that store lands).
 *  - Slots before the index that publishes them: per pass, the slot bytes
 *    are copied and stored first (those marked, and those of every slot
 *    the index moved over since the last pass: the core marks its bytes
 *    only after it moved the index), then the index word alone (4 aligned
 *    bytes), so the index only moves forward and a reader that acquires it
 *    finds its slots (abi.md 5.4).
 *  - What a caller hears of is in the pages: a GET_EVENTS reply with
 *    events and a poll wake-up wait for the next pass (kc_fring_after),
 *    run by the flusher right after its stores, so a reader that reads
 *    the index after either finds the slots (abi.md 5.4 and 5.5), as on
 *    the module, where the slot is written before the event is ready.
 *  - Before the first READ no page of the file can be up to date (a store
 *    never covers a whole page then), so there is no image and no store
 *    until then: a queue nobody maps costs neither.  The first READ, with no
 *    store ever sent, is answered from the core's ring as it is then (so
 *    it has every event answered before it); every READ is followed by a
 *    store of the whole ring, which also covers what was skipped.
 *
 * LOCKING: fl.lock (the dirty list, each ring's dirty range and queued
 * flag) and kc_fring.img_lock (img and dead) are leaves, never held
 * together, never across a store.  A ring lives until its last reference:
 * the queue's, plus one while it is on the dirty list or being flushed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kc-fring.h"
#include "kc-log.h"

struct kc_fring {
	fuse_ino_t ino;
	const unsigned char *live;	/* the core's ring; not after dead */
	unsigned char *img;		/* what the kernel got or gets next; from the first READ */
	pthread_mutex_t img_lock;	/* img, dead */
	int dead;
	atomic_int refs;
	atomic_int read_seen;		/* img exists: a READ came, the file is in use */
	/* Under fl.lock. */
	struct kc_fring_cb *cbs;	/* to run after the next pass */
	struct kc_fring *next;
	int queued;
	size_t lo, hi;			/* dirty bytes; hi 0: none */
};

struct kc_fring_cb {
	struct kc_fring_cb *next;
	void (*fn)(void *);
	void *arg;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct kc_fring *head, *tail;
	int stop, started;
	pthread_t thread;
	struct fuse_session *se;
	atomic_int storing;		/* inside notify_store now */
} fl = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static void kc_fring_put(struct kc_fring *fr)
{
	if (atomic_fetch_sub(&fr->refs, 1) != 1)
		return;
	pthread_mutex_destroy(&fr->img_lock);
	free(fr->img);
	free(fr);
}

int kc_fring_new(fuse_ino_t ino, const void *live, struct kc_fring **ret)
{
	struct kc_fring *fr = calloc(1, sizeof(*fr));

	if (!fr)
		return -ENOMEM;
	fr->ino = ino;
	fr->live = live;
	pthread_mutex_init(&fr->img_lock, NULL);
	atomic_init(&fr->refs, 1);
	*ret = fr;
	return 0;
}

void kc_fring_free(struct kc_fring *fr)
{
	pthread_mutex_lock(&fr->img_lock);
	fr->dead = 1;
	pthread_mutex_unlock(&fr->img_lock);
	kc_fring_put(fr);
}

/* fl.lock held: fr on the dirty list (once), with a reference for it. */
static void kc_fring_queue(struct kc_fring *fr)
{
	if (!fr->queued) {
		fr->queued = 1;
		atomic_fetch_add(&fr->refs, 1);
		fr->next = NULL;
		if (fl.tail)
			fl.tail->next = fr;
		else
			fl.head = fr;
		fl.tail = fr;
		pthread_cond_signal(&fl.cond);
	}
}

void kc_fring_written(struct kc_fring *fr, size_t off, size_t len)
{
	pthread_mutex_lock(&fl.lock);
	if (!fr->hi || off < fr->lo)
		fr->lo = off;
	if (off + len > fr->hi)
		fr->hi = off + len;
	kc_fring_queue(fr);
	pthread_mutex_unlock(&fl.lock);
}

int kc_fring_after(struct kc_fring *fr, void (*fn)(void *), void *arg)
{
	struct kc_fring_cb *cb, **end;

	if (!atomic_load(&fr->read_seen))
		return 1;
	cb = malloc(sizeof(*cb));
	if (!cb)
		return 1;
	*cb = (struct kc_fring_cb){ .fn = fn, .arg = arg };
	pthread_mutex_lock(&fl.lock);
	if (!fl.started || fl.stop) {
		pthread_mutex_unlock(&fl.lock);
		free(cb);
		return 1;
	}
	for (end = &fr->cbs; *end; end = &(*end)->next)
		;
	*end = cb;	/* in order: replies and wake-ups as the core gave them */
	kc_fring_queue(fr);
	pthread_mutex_unlock(&fl.lock);
	return 0;
}

static void kc_fring_run_cbs(struct kc_fring_cb *cb)
{
	while (cb) {
		struct kc_fring_cb *next = cb->next;

		cb->fn(cb->arg);
		free(cb);
		cb = next;
	}
}

/* The core's index now: every slot before it is in live (acquire). */
static __u32 kc_fring_live_index(const struct kc_fring *fr)
{
	return __atomic_load_n((const __u32 *)fr->live, __ATOMIC_ACQUIRE);
}

/* img_lock held: img's bytes [s, hi) = the core's ring now. */
static void kc_fring_copy_locked(struct kc_fring *fr, size_t s, size_t hi)
{
	if (hi > s)
		memcpy(fr->img + s, fr->live + s, hi - s);
}

/*
 * [*lo, *hi) widened to the slots an index move from..to publishes.  The
 * core moves the live index under its lock and tells us which bytes it
 * wrote only after dropping it, so a pass may load an index whose slot is
 * in no dirty range yet; without this the index would reach the pages
 * before its slot (abi.md 5.4).  A move across the wrap takes every slot.
 */
static void kc_fring_widen(__u32 from, __u32 to, size_t *lo, size_t *hi)
{
	size_t a = KEVENT_RING_HDR_SIZE, b = KEVENT_RING_SIZE;

	if (from == to)
		return;
	if (from < to) {
		a = KEVENT_RING_SLOT_OFFSET(from);
		b = KEVENT_RING_SLOT_OFFSET(to - 1) + sizeof(struct mukevent);
	}
	if (*hi <= *lo || a < *lo)
		*lo = a;
	if (b > *hi)
		*hi = b;
}

void kc_fring_read(fuse_req_t req, struct kc_fring *fr, size_t size, off_t off)
{
	size_t n;
	unsigned char *buf;
	int have;

	if (off < 0 || (size_t)off >= KEVENT_RING_SIZE) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	n = KEVENT_RING_SIZE - (size_t)off;
	n = size < n ? size : n;
	buf = malloc(n);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_lock(&fr->img_lock);
	/*
	 * The first READ: nothing was ever stored (passes store only once
	 * there is an image, and they look under this lock), so no store can
	 * land older than this: answer with the ring as it is now, which has
	 * every event answered so far without waiting for the flusher.  The
	 * image exists from here on only: a queue never mapped costs nothing.
	 */
	if (!fr->img && !fr->dead) {
		/* Page aligned: the index word is stored from an aligned source. */
		fr->img = aligned_alloc(KEVENT_RING_PAGE_SIZE, KEVENT_RING_SIZE);
		if (fr->img) {
			__u32 idx = kc_fring_live_index(fr);

			kc_fring_copy_locked(fr, sizeof(__u32), KEVENT_RING_SIZE);
			__atomic_store_n((__u32 *)fr->img, idx, __ATOMIC_RELAXED);
			atomic_store(&fr->read_seen, 1);
		}
	}
	have = fr->img != NULL;
	if (have)
		memcpy(buf, fr->img + off, n);
	pthread_mutex_unlock(&fr->img_lock);
	if (!have) {
		free(buf);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	/*
	 * From now on the pages matter: a fresh store of everything (it
	 * waits for this READ's page lock).  Asked before the reply: once the
	 * kernel has the reply it may release the file, and fr with it.
	 */
	kc_fring_written(fr, 0, KEVENT_RING_SIZE);
	fuse_reply_buf(req, (const char *)buf, n);
	free(buf);
}

/* img[off, off + len) into the kernel's pages of the file. */
static void kc_fring_store(struct kc_fring *fr, size_t off, size_t len)
{
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(len);
	int err;

	bv.buf[0].mem = fr->img + off;
	atomic_store(&fl.storing, 1);
	err = fuse_lowlevel_notify_store(fl.se, fr->ino, (off_t)off, &bv, 0);
	atomic_store(&fl.storing, 0);
	/* ENOENT: the kernel forgot the inode (no file, no mapping left). */
	if (err && err != -ENOENT)
		kc_dbg("ring store node %lu [%zu, +%zu): %s", (unsigned long)fr->ino, off, len,
		       strerror(-err));
}

/* One pass: the dirty slot bytes, then the index that publishes them. */
static void kc_fring_flush(struct kc_fring *fr, size_t lo, size_t hi)
{
	size_t s;
	__u32 idx;

	pthread_mutex_lock(&fr->img_lock);
	/* No image: never READ, so no page to keep current (the first READ copies). */
	if (fr->dead || !fr->img) {
		pthread_mutex_unlock(&fr->img_lock);
		return;
	}
	/* The index first, then its slots: img's index is the last one stored. */
	idx = kc_fring_live_index(fr);
	kc_fring_widen(__atomic_load_n((const __u32 *)fr->img, __ATOMIC_RELAXED), idx, &lo, &hi);
	s = lo < sizeof(__u32) ? sizeof(__u32) : lo;
	kc_fring_copy_locked(fr, s, hi);
	pthread_mutex_unlock(&fr->img_lock);
	if (hi > s)
		kc_fring_store(fr, s, hi - s);
	pthread_mutex_lock(&fr->img_lock);
	__atomic_store_n((__u32 *)fr->img, idx, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&fr->img_lock);
	kc_fring_store(fr, 0, sizeof(__u32));
}

/*
 * fl.lock held, fl.head set: the first ring of the dirty list leaves it,
 * with the bytes and the callbacks of its pass.
 */
static struct kc_fring *kc_fring_pick(size_t *lo, size_t *hi, struct kc_fring_cb **cbs)
{
	struct kc_fring *fr = fl.head;

	fl.head = fr->next;
	if (!fl.head)
		fl.tail = NULL;
	fr->queued = 0;
	*lo = fr->lo;
	*hi = fr->hi;
	fr->lo = fr->hi = 0;
	/* Asked for before this pass loads the index: run after it. */
	*cbs = fr->cbs;
	fr->cbs = NULL;
	return fr;
}

static void *kc_flusher(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&fl.lock);
	for (;;) {
		struct kc_fring *fr;
		struct kc_fring_cb *cbs;
		size_t lo, hi;

		while (!fl.head && !fl.stop)
			pthread_cond_wait(&fl.cond, &fl.lock);
		if (!fl.head)
			break;
		fr = kc_fring_pick(&lo, &hi, &cbs);
		pthread_mutex_unlock(&fl.lock);
		/* At stop the queues are gone or going: nothing left to show. */
		if (!fl.stop)
			kc_fring_flush(fr, lo, hi);
		kc_fring_run_cbs(cbs);
		kc_fring_put(fr);
		pthread_mutex_lock(&fl.lock);
	}
	pthread_mutex_unlock(&fl.lock);
	return NULL;
}

int kc_flusher_start(struct fuse_session *se)
{
	int err;

	fl.se = se;
	fl.stop = 0;
	err = pthread_create(&fl.thread, NULL, kc_flusher, NULL);
	if (err) {
		kc_err("ring flusher thread: %s", strerror(err));
		return -err;
	}
	fl.started = 1;
	return 0;
}

/*
 * The connection's number in fusectl: the mount's device as the mount
 * table spells it (asking the mount itself would wait on the stopped loop).
 */
static unsigned int kc_fuse_conn_id(void)
{
	char line[4096], mnt[PATH_MAX];
	unsigned int major, minor, id = 0;
	FILE *f = fopen("/proc/self/mountinfo", "r");

	if (!f)
		return 0;
	while (!id && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %*s %u:%u %*s %4095s", &major, &minor, mnt) == 3 &&
		    !strcmp(mnt, kd.opts.fuse_dir) && strstr(line, " - fuse"))
			id = major << 20 | minor;
	fclose(f);
	return id;
}

/* A store parked on the page lock of a READ the stopped loop never answers. */
static void kc_fuse_abort_conn(void)
{
	char path[96];
	unsigned int id = kc_fuse_conn_id();
	int fd;

	if (!id)
		return;
	snprintf(path, sizeof(path), "/sys/fs/fuse/connections/%u/abort", id);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, "1", 1) == 1)
		kc_warn("ring flusher stuck on a READ nobody will answer: FUSE connection %u aborted",
			id);
	close(fd);
}

void kc_flusher_stop(void)
{
	struct timespec ts;

	if (!fl.started)
		return;
	pthread_mutex_lock(&fl.lock);
	fl.stop = 1;
	pthread_cond_broadcast(&fl.cond);
	pthread_mutex_unlock(&fl.lock);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 2;
	if (pthread_timedjoin_np(fl.thread, NULL, &ts)) {
		if (atomic_load(&fl.storing))
			kc_fuse_abort_conn();
		pthread_join(fl.thread, NULL);
	}
	fl.started = 0;
}
