// SPDX-License-Identifier: GPL-2.0
/*
 * The closer threads: close duplicated client fds.  A close can wait (FUSE
 * flush, SO_LINGER, the last reference of a socket), so it never runs on
 * the reactor or on a transport worker (RULES B3).  There is one thread
 * per uid whose duplicates were closed, started on first use, so a file one
 * uid made slow to close delays only that uid's closes (B7).
 *
 * LOCKING: kc.lock protects every closer's queue and the list; it may be
 * taken with korigins_lock held, never the other way round.  No close()
 * runs with it held.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

struct kcloser {
	struct kcloser *next;
	uid_t uid;
	pthread_cond_t work;	/* queue not empty, or stopping */
	int *fds;
	size_t nr, cap;
	size_t busy;		/* fds taken off the queue, not yet closed */
	pthread_t thread;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t idle;	/* some closer emptied its queue */
	struct kcloser *list;
	unsigned int threads;
	int stopping;
	int started;
} kc = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.idle = PTHREAD_COND_INITIALIZER,
};

static void kcloser_drain_locked(struct kcloser *c)
{
	while (c->nr) {
		int fd = c->fds[--c->nr];

		c->busy++;
		pthread_mutex_unlock(&kc.lock);
		close(fd);
		pthread_mutex_lock(&kc.lock);
		c->busy--;
	}
	pthread_cond_broadcast(&kc.idle);
}

static void *kcloser_thread(void *arg)
{
	struct kcloser *c = arg;

	pthread_mutex_lock(&kc.lock);
	for (;;) {
		kcloser_drain_locked(c);
		if (kc.stopping)
			break;
		pthread_cond_wait(&c->work, &kc.lock);
	}
	pthread_mutex_unlock(&kc.lock);
	return NULL;
}

int kcloser_start(void)
{
	pthread_mutex_lock(&kc.lock);
	kc.stopping = 0;
	kc.started = 1;
	pthread_mutex_unlock(&kc.lock);
	return 0;
}

void kcloser_stop(void)
{
	struct kcloser *c, *next;

	pthread_mutex_lock(&kc.lock);
	if (!kc.started) {
		pthread_mutex_unlock(&kc.lock);
		return;
	}
	kc.stopping = 1;
	for (c = kc.list; c; c = c->next)
		pthread_cond_signal(&c->work);
	pthread_mutex_unlock(&kc.lock);
	/* Nothing adds to the list once stopping is set (kcloser_get). */
	for (c = kc.list; c; c = next) {
		next = c->next;
		pthread_join(c->thread, NULL);
		pthread_cond_destroy(&c->work);
		free(c->fds);
		free(c);
	}
	pthread_mutex_lock(&kc.lock);
	kc.list = NULL;
	kc.threads = 0;
	kc.started = 0;
	pthread_mutex_unlock(&kc.lock);
}

/* uid's closer, its thread started on first use; NULL if none can be. */
static struct kcloser *kcloser_get_locked(uid_t uid)
{
	struct kcloser *c;

	if (!kc.started || kc.stopping)
		return NULL;
	for (c = kc.list; c; c = c->next)
		if (c->uid == uid)
			return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->uid = uid;
	pthread_cond_init(&c->work, NULL);
	if (korigins_thread_create(&c->thread, kcloser_thread, c) < 0) {
		pthread_cond_destroy(&c->work);
		free(c);
		return NULL;
	}
	c->next = kc.list;
	kc.list = c;
	kc.threads++;
	return c;
}

static int kcloser_grow(struct kcloser *c)
{
	size_t cap = c->cap ? c->cap * 2 : 64;
	int *fds = realloc(c->fds, cap * sizeof(*fds));

	if (!fds)
		return -ENOMEM;
	c->fds = fds;
	c->cap = cap;
	return 0;
}

void kcloser_close(uid_t uid, int fd)
{
	struct kcloser *c;

	if (fd < 0)
		return;
	pthread_mutex_lock(&kc.lock);
	c = kcloser_get_locked(uid);
	if (!c || (c->nr == c->cap && kcloser_grow(c) < 0)) {
		/* No thread or no memory: leaking an fd is worse than waiting. */
		pthread_mutex_unlock(&kc.lock);
		close(fd);
		return;
	}
	c->fds[c->nr++] = fd;
	pthread_cond_signal(&c->work);
	pthread_mutex_unlock(&kc.lock);
}

static __u64 kcloser_pending_locked(void)
{
	struct kcloser *c;
	__u64 n = 0;

	for (c = kc.list; c; c = c->next)
		n += c->nr + c->busy;
	return n;
}

void korigins_sync_closer(void)
{
	pthread_mutex_lock(&kc.lock);
	while (kcloser_pending_locked())
		pthread_cond_wait(&kc.idle, &kc.lock);
	pthread_mutex_unlock(&kc.lock);
}

void kcloser_counts(__u64 *pending, __u64 *threads)
{
	pthread_mutex_lock(&kc.lock);
	*pending = kcloser_pending_locked();
	*threads = kc.threads;
	pthread_mutex_unlock(&kc.lock);
}
