// SPDX-License-Identifier: GPL-2.0
/*
 * Per-uid lanes; see lanes.h.
 *
 * LOCKING: klanes.lock guards the lane list, every lane's job list and the
 * counters; it may be taken with korigins_lock held, never the other way
 * round.  Jobs run with no lock held.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>

#include "internal.h"
#include "lanes.h"

struct klane_job {
	struct klane_job *next;
	void (*fn)(void *arg);
	void *arg;
};

struct klane {
	struct klane *next;
	struct klanes *set;
	uid_t uid;
	pthread_t thread;
	pthread_cond_t work;		/* a job queued, or stopping */
	struct klane_job *head, **tail;
};

/*
 * The lanes' and the reactor's threads take no signals: the daemon's
 * handlers (SIGTERM, SIGINT) must run on its own threads, and an EINTR
 * would only cost a reactor round or a retried close.
 */
int korigins_thread_create(pthread_t *th, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(th, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

void klanes_start(struct klanes *s)
{
	pthread_mutex_lock(&s->lock);
	s->running = 1;
	pthread_mutex_unlock(&s->lock);
}

static struct klane_job *klane_pop(struct klane *l)
{
	struct klane_job *j = l->head;

	l->head = j->next;
	if (!l->head)
		l->tail = &l->head;
	return j;
}

static void *klane_main(void *p)
{
	struct klane *l = p;
	struct klanes *s = l->set;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct klane_job *j;

		while (!l->head && s->running)
			pthread_cond_wait(&l->work, &s->lock);
		if (!l->head)
			break;
		j = klane_pop(l);
		pthread_mutex_unlock(&s->lock);
		j->fn(j->arg);
		free(j);
		pthread_mutex_lock(&s->lock);
		if (!--s->pending)
			pthread_cond_broadcast(&s->idle);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* uid's lane, its thread started on first use; NULL if none can be. */
static struct klane *klane_get_locked(struct klanes *s, uid_t uid)
{
	struct klane *l;

	if (!s->running)
		return NULL;
	for (l = s->list; l; l = l->next)
		if (l->uid == uid)
			return l;
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->set = s;
	l->uid = uid;
	l->tail = &l->head;
	pthread_cond_init(&l->work, NULL);
	/* Every signal blocked in the lane (korigins_thread_create). */
	if (korigins_thread_create(&l->thread, klane_main, l) < 0) {
		pthread_cond_destroy(&l->work);
		free(l);
		return NULL;
	}
	l->next = s->list;
	s->list = l;
	s->nlanes++;
	return l;
}

int klanes_submit(struct klanes *s, uid_t uid, void (*fn)(void *arg), void *arg)
{
	struct klane_job *j = malloc(sizeof(*j));
	struct klane *l;

	if (!j)
		return -ENOMEM;
	*j = (struct klane_job){ NULL, fn, arg };
	pthread_mutex_lock(&s->lock);
	l = klane_get_locked(s, uid);
	if (l) {
		*l->tail = j;
		l->tail = &j->next;
		s->pending++;
		pthread_cond_signal(&l->work);
	}
	pthread_mutex_unlock(&s->lock);
	if (!l) {
		free(j);
		return -EAGAIN;
	}
	return 0;
}

void klanes_stop(struct klanes *s)
{
	struct klane *l, *next;

	pthread_mutex_lock(&s->lock);
	s->running = 0;
	for (l = s->list; l; l = l->next)
		pthread_cond_signal(&l->work);
	l = s->list;
	s->list = NULL;
	s->nlanes = 0;
	pthread_mutex_unlock(&s->lock);
	/* Nothing adds a lane once running is 0 (klane_get_locked). */
	for (; l; l = next) {
		next = l->next;
		pthread_join(l->thread, NULL);
		pthread_cond_destroy(&l->work);
		free(l);
	}
}

void klanes_sync(struct klanes *s)
{
	pthread_mutex_lock(&s->lock);
	while (s->pending)
		pthread_cond_wait(&s->idle, &s->lock);
	pthread_mutex_unlock(&s->lock);
}

void klanes_counts(struct klanes *s, __u64 *pending, unsigned int *lanes)
{
	pthread_mutex_lock(&s->lock);
	*pending = s->pending;
	*lanes = s->nlanes;
	pthread_mutex_unlock(&s->lock);
}
