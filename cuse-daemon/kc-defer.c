// SPDX-License-Identifier: GPL-2.0
/*
 * Per-uid work lanes; see kc-defer.h.
 *
 * LOCKING: kc_lanes.lock guards the lane list, every lane's job list and
 * the stopping flag.  Jobs run with no lock held.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "kc-defer.h"

struct kc_job {
	struct kc_job *next;
	void (*fn)(void *arg);
	void *arg;
};

struct kc_lane {
	struct kc_lane *next;
	uid_t uid;
	pthread_t thread;
	pthread_cond_t cond;
	struct kc_job *head, **tail;
};

static struct {
	pthread_mutex_t lock;
	struct kc_lane *lanes;
	unsigned int nlanes;
	int stopping;
} kc_lanes = { .lock = PTHREAD_MUTEX_INITIALIZER };

void kc_defer_init(void)
{
	pthread_mutex_lock(&kc_lanes.lock);
	kc_lanes.stopping = 0;
	pthread_mutex_unlock(&kc_lanes.lock);
}

static struct kc_job *kc_lane_pop(struct kc_lane *l)
{
	struct kc_job *j = l->head;

	l->head = j->next;
	if (!l->head)
		l->tail = &l->head;
	return j;
}

static void *kc_lane_main(void *p)
{
	struct kc_lane *l = p;
	struct kc_job *j;

	pthread_mutex_lock(&kc_lanes.lock);
	for (;;) {
		while (!l->head && !kc_lanes.stopping)
			pthread_cond_wait(&l->cond, &kc_lanes.lock);
		if (!l->head)
			break;
		j = kc_lane_pop(l);
		pthread_mutex_unlock(&kc_lanes.lock);
		j->fn(j->arg);
		free(j);
		pthread_mutex_lock(&kc_lanes.lock);
	}
	pthread_mutex_unlock(&kc_lanes.lock);
	return NULL;
}

/* Under kc_lanes.lock. */
static struct kc_lane *kc_lane_get(uid_t uid)
{
	struct kc_lane *l;

	for (l = kc_lanes.lanes; l; l = l->next)
		if (l->uid == uid)
			return l;
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->uid = uid;
	l->tail = &l->head;
	pthread_cond_init(&l->cond, NULL);
	if (pthread_create(&l->thread, NULL, kc_lane_main, l)) {
		pthread_cond_destroy(&l->cond);
		free(l);
		return NULL;
	}
	l->next = kc_lanes.lanes;
	kc_lanes.lanes = l;
	kc_lanes.nlanes++;
	return l;
}

int kc_defer(uid_t uid, void (*fn)(void *arg), void *arg)
{
	struct kc_job *j = malloc(sizeof(*j));
	struct kc_lane *l;

	if (!j)
		return -ENOMEM;
	j->next = NULL;
	j->fn = fn;
	j->arg = arg;
	pthread_mutex_lock(&kc_lanes.lock);
	l = kc_lanes.stopping ? NULL : kc_lane_get(uid);
	if (l) {
		*l->tail = j;
		l->tail = &j->next;
		pthread_cond_signal(&l->cond);
	}
	pthread_mutex_unlock(&kc_lanes.lock);
	if (!l) {
		free(j);
		return -EAGAIN;
	}
	return 0;
}

void kc_defer_stop(void)
{
	struct kc_lane *l;

	pthread_mutex_lock(&kc_lanes.lock);
	kc_lanes.stopping = 1;
	for (l = kc_lanes.lanes; l; l = l->next)
		pthread_cond_signal(&l->cond);
	l = kc_lanes.lanes;
	kc_lanes.lanes = NULL;
	kc_lanes.nlanes = 0;
	pthread_mutex_unlock(&kc_lanes.lock);
	while (l) {
		struct kc_lane *next = l->next;

		pthread_join(l->thread, NULL);
		pthread_cond_destroy(&l->cond);
		free(l);
		l = next;
	}
}

unsigned int kc_defer_lanes(void)
{
	unsigned int n;

	pthread_mutex_lock(&kc_lanes.lock);
	n = kc_lanes.nlanes;
	pthread_mutex_unlock(&kc_lanes.lock);
	return n;
}
