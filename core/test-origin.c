// SPDX-License-Identifier: GPL-2.0
/*
 * The test origin.  One mutex (the "origin lock" of origin.h) protects its
 * table; korigin_fire() is called with it held, as the contract says.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "list.h"
#include "test-origin.h"

#define NBUCKETS 4096

struct tnode {
	struct klist node;
	struct kitem *k;
	__u64 id;
	bool stopped;		/* korigin_fire() said stop */
};

static pthread_mutex_t t_lock = PTHREAD_MUTEX_INITIALIZER;
static struct klist t_table[NBUCKETS];
static bool t_ready;
static unsigned int t_attached;
static unsigned long t_attach_calls, t_detach_calls;

static struct klist *bucket(__u64 id)
{
	unsigned int i;

	if (!t_ready) {
		for (i = 0; i < NBUCKETS; i++)
			klist_init(&t_table[i]);
		t_ready = true;
	}
	return &t_table[(id * 0x9e3779b97f4a7c15ull) >> 52];
}

static int t_attach(struct kitem *k, const struct kcaller *caller,
		    struct korigin_result *res)
{
	const struct ukevent *uk = korigin_ukevent(k);
	struct tnode *n;

	bool stop = false;

	pthread_mutex_lock(&t_lock);
	t_attach_calls++;
	/* An origin whose source fired while it was being registered. */
	if (uk->event & KTEST_FIRE_IN_ATTACH)
		stop = korigin_fire(k, &(struct korigin_result){ 0, { 7, 0 } });
	pthread_mutex_unlock(&t_lock);
	if (uk->event & KTEST_FAIL_ATTACH)
		return -EIO;
	if (uk->event & KTEST_READY_AT_ADD) {
		res->ret_data[0] = uk->id.raw[0];
		if (korigin_counts(k))	/* D67: the answer carries the count */
			res->ret_data[1] = ktest_count(uk, res->ret_data[0]);
		return 1;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->k = k;
	n->id = uk->id.raw_u64;
	n->stopped = stop;
	korigin_set_data(k, n);
	pthread_mutex_lock(&t_lock);
	klist_add_tail(&n->node, bucket(n->id));
	t_attached++;
	pthread_mutex_unlock(&t_lock);
	return 0;
}

static int t_modify(struct kitem *k, struct korigin_result *res)
{
	const struct ukevent *uk = korigin_ukevent(k);
	struct tnode *n = korigin_data(k);

	if (uk->event & KTEST_FAIL_MODIFY)
		return -EIO;
	pthread_mutex_lock(&t_lock);
	n->stopped = false;
	pthread_mutex_unlock(&t_lock);
	if (uk->event & KTEST_READY_AT_MODIFY) {
		res->ret_data[0] = 1;
		return 1;
	}
	return 0;
}

static void t_detach(struct kitem *k)
{
	struct tnode *n = korigin_data(k);

	pthread_mutex_lock(&t_lock);
	klist_del(&n->node);
	t_attached--;
	t_detach_calls++;
	pthread_mutex_unlock(&t_lock);
	free(n);
}

__u32 ktest_count(const struct ukevent *uk, __u32 fired)
{
	return fired ? uk->id.raw[1] ^ fired : 0;
}

static __u32 t_count(struct kitem *k, __u32 fired)
{
	return ktest_count(korigin_ukevent(k), fired);
}

/* D69: a kevent whose event (as MODIFY left it) says its fd is stale. */
static int t_fd_check(struct kitem *k, const struct kcaller *caller)
{
	(void)caller;
	return korigin_ukevent(k)->event & KTEST_STALE_FD ? -EBADF : 0;
}

const struct korigin_ops ktest_origin_ops = {
	.name = "test",
	.attach = t_attach,
	.modify = t_modify,
	.detach = t_detach,
	.count = t_count,
	.fd_check = t_fd_check,
};

static unsigned int fire_all(__u64 id, const struct korigin_result *res)
{
	struct klist *head, *pos, *tmp;
	unsigned int fired = 0;

	pthread_mutex_lock(&t_lock);
	head = bucket(id);
	klist_for_each_safe(pos, tmp, head) {
		struct tnode *n = klist_entry(pos, struct tnode, node);

		if (n->id != id || n->stopped)
			continue;
		fired++;
		if (korigin_fire(n->k, res))
			n->stopped = true;
	}
	pthread_mutex_unlock(&t_lock);
	return fired;
}

unsigned int ktest_fire_stopped(__u64 id, __u32 data0)
{
	struct korigin_result res = { 0, { data0, 0 } };
	struct klist *head, *pos, *tmp;
	unsigned int going = 0;

	pthread_mutex_lock(&t_lock);
	head = bucket(id);
	klist_for_each_safe(pos, tmp, head) {
		struct tnode *n = klist_entry(pos, struct tnode, node);

		if (n->id == id && !korigin_fire(n->k, &res))
			going++;
	}
	pthread_mutex_unlock(&t_lock);
	return going;
}

unsigned int ktest_fire(__u64 id, __u32 data0)
{
	struct korigin_result res = { 0, { data0, 0 } };

	return fire_all(id, &res);
}

unsigned int ktest_break(__u64 id, int err)
{
	struct korigin_result res = { KEVENT_RET_BROKEN, { 0, (__u32)err } };

	return fire_all(id, &res);
}

void ktest_origin_reset(void)
{
	pthread_mutex_lock(&t_lock);
	t_ready = false;
	t_attached = 0;
	t_attach_calls = t_detach_calls = 0;
	pthread_mutex_unlock(&t_lock);
}

unsigned int ktest_attached(void)
{
	unsigned int n;

	pthread_mutex_lock(&t_lock);
	n = t_attached;
	pthread_mutex_unlock(&t_lock);
	return n;
}

unsigned long ktest_attach_calls(void)
{
	unsigned long n;

	pthread_mutex_lock(&t_lock);
	n = t_attach_calls;
	pthread_mutex_unlock(&t_lock);
	return n;
}

unsigned long ktest_detach_calls(void)
{
	unsigned long n;

	pthread_mutex_lock(&t_lock);
	n = t_detach_calls;
	pthread_mutex_unlock(&t_lock);
	return n;
}
