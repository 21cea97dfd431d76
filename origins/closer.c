// SPDX-License-Identifier: GPL-2.0
/*
 * The closer thread: closes duplicated client fds.  A close can wait (FUSE
 * flush, SO_LINGER, the last reference of a socket), so it never runs on
 * the reactor or on a transport worker (RULES B3).
 *
 * LOCKING: closer.lock protects the queue; it may be taken with
 * korigins_lock held, never the other way round.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

static struct {
	pthread_mutex_t lock;
	pthread_cond_t work;	/* queue not empty, or stopping */
	pthread_cond_t idle;	/* queue empty and nothing being closed */
	int *fds;
	size_t nr, cap;
	size_t busy;		/* fds taken off the queue, not yet closed */
	int stopping;
	int started;
	pthread_t thread;
} kc = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.work = PTHREAD_COND_INITIALIZER,
	.idle = PTHREAD_COND_INITIALIZER,
};

static void kcloser_drain_locked(void)
{
	while (kc.nr) {
		int fd = kc.fds[--kc.nr];

		kc.busy++;
		pthread_mutex_unlock(&kc.lock);
		close(fd);
		pthread_mutex_lock(&kc.lock);
		kc.busy--;
	}
	pthread_cond_broadcast(&kc.idle);
}

static void *kcloser_thread(void *arg)
{
	pthread_mutex_lock(&kc.lock);
	for (;;) {
		kcloser_drain_locked();
		if (kc.stopping)
			break;
		pthread_cond_wait(&kc.work, &kc.lock);
	}
	pthread_mutex_unlock(&kc.lock);
	return NULL;
}

int kcloser_start(void)
{
	int err;

	kc.stopping = 0;
	err = korigins_thread_create(&kc.thread, kcloser_thread, NULL);
	if (!err)
		kc.started = 1;
	return err;
}

void kcloser_stop(void)
{
	if (!kc.started)
		return;
	pthread_mutex_lock(&kc.lock);
	kc.stopping = 1;
	pthread_cond_signal(&kc.work);
	pthread_mutex_unlock(&kc.lock);
	pthread_join(kc.thread, NULL);
	kc.started = 0;
	free(kc.fds);
	kc.fds = NULL;
	kc.nr = kc.cap = 0;
}

static int kcloser_grow(void)
{
	size_t cap = kc.cap ? kc.cap * 2 : 64;
	int *fds = realloc(kc.fds, cap * sizeof(*fds));

	if (!fds)
		return -ENOMEM;
	kc.fds = fds;
	kc.cap = cap;
	return 0;
}

void kcloser_close(int fd)
{
	if (fd < 0)
		return;
	pthread_mutex_lock(&kc.lock);
	if (!kc.started || (kc.nr == kc.cap && kcloser_grow() < 0)) {
		/* No thread or no memory: leaking an fd is worse than waiting. */
		pthread_mutex_unlock(&kc.lock);
		close(fd);
		return;
	}
	kc.fds[kc.nr++] = fd;
	pthread_cond_signal(&kc.work);
	pthread_mutex_unlock(&kc.lock);
}

void korigins_sync_closer(void)
{
	pthread_mutex_lock(&kc.lock);
	while (kc.started && (kc.nr || kc.busy))
		pthread_cond_wait(&kc.idle, &kc.lock);
	pthread_mutex_unlock(&kc.lock);
}

__u64 kcloser_pending(void)
{
	__u64 n;

	pthread_mutex_lock(&kc.lock);
	n = kc.nr + kc.busy;
	pthread_mutex_unlock(&kc.lock);
	return n;
}
