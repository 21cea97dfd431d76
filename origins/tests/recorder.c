// SPDX-License-Identifier: GPL-2.0
/* The recorder: see recorder.h. */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include <criterion/criterion.h>

#include "origins.h"
#include "recorder.h"

static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t rec_cond = PTHREAD_COND_INITIALIZER;
static const struct korigin_ops *rec_table[KEVENT_MAX];
static unsigned int rec_flags;

int korigin_register(__u32 type, const struct korigin_ops *ops)
{
	if (type >= KEVENT_MAX)
		return -EINVAL;
	rec_table[type] = ops;
	return 0;
}

const struct ukevent *korigin_ukevent(const struct kitem *k)
{
	return &k->uk;
}

unsigned int korigin_revision(const struct kitem *k)
{
	return k->revision ? k->revision : 1;
}

int korigin_inode_notes(const struct kitem *k)
{
	return korigin_revision(k) >= 4;	/* D68 */
}

int korigin_always_queue(const struct kitem *k)
{
	return korigin_revision(k) >= 2 && (k->uk.req_flags & KEVENT_REQ_ALWAYS_QUEUE);
}

/* D67: the core's descriptors give POLL and SOCKET a count (core/types.c). */
int korigin_counts(const struct kitem *k)
{
	return korigin_revision(k) >= 4 &&
	       (k->uk.type == KEVENT_POLL || k->uk.type == KEVENT_SOCKET);
}

void *korigin_data(const struct kitem *k)
{
	return k->data;
}

void korigin_set_data(struct kitem *k, void *data)
{
	k->data = data;
}

/* No budget below this boundary; test_e2e.c tests the real one (B7). */
__u64 korigin_expiry_charge(struct kitem *k, __u64 now_ns)
{
	(void)k;
	(void)now_ns;
	return 0;
}

int korigin_fire(struct kitem *k, const struct korigin_result *res)
{
	int stop;

	pthread_mutex_lock(&rec_lock);
	/* Counted, not asserted: this runs on the reactor thread. */
	if (!k->registered || k->stopped)
		k->violations++;
	k->fires++;
	if (!k->ready)
		k->queued++;
	k->ready = 1;
	k->last = *res;
	stop = (k->uk.req_flags & KEVENT_REQ_ONESHOT) || (res->ret_flags & KEVENT_RET_BROKEN);
	k->stopped = stop;
	pthread_cond_broadcast(&rec_cond);
	pthread_mutex_unlock(&rec_lock);
	return stop;
}

void korigin_grid(const struct kitem *k, struct korigin_grid *g)
{
	*g = k->grid;
}

/* As korigin_fire(), with the point in last.ret_data[0]; other gens are dropped. */
int korigin_timer_fire(struct kitem *k, __u32 gen, __u64 index)
{
	struct korigin_result res = { 0, { (__u32)index, 0 } };

	if (gen != k->grid.gen)
		return 0;
	k->last_index = index;
	return korigin_fire(k, &res);
}

const struct korigin_ops *rec_ops(__u32 type)
{
	return type < KEVENT_MAX ? rec_table[type] : NULL;
}

void rec_setup(unsigned int flags)
{
	struct korigins_config cfg = { .flags = flags };

	rec_setup_cfg(&cfg);
}

void rec_setup_cfg(const struct korigins_config *cfg)
{
	int err;

	memset(rec_table, 0, sizeof(rec_table));
	rec_flags = cfg->flags;
	err = korigins_start(cfg);
	cr_assert_eq(err, 0, "korigins_start: %s", strerror(-err));
}

void rec_teardown(void)
{
	struct korigins_stats st;

	korigins_sync_closer();
	korigins_stats(&st);
	korigins_stop();
	cr_expect_eq(st.timers, 0, "timers left armed");
	cr_expect_eq(st.fd_watches, 0, "fd watches left");
	cr_expect_eq(st.inode_watches, 0, "inode watches left");
}

int rec_add(struct kitem *k, const struct ukevent *uk, const struct kcaller *c,
	    struct korigin_result *res)
{
	return rec_add_rev(k, 0, uk, c, res);
}

int rec_add_rev(struct kitem *k, unsigned int revision, const struct ukevent *uk,
		const struct kcaller *c, struct korigin_result *res)
{
	const struct korigin_ops *ops = rec_ops(uk->type);
	int ret;

	memset(k, 0, sizeof(*k));
	k->uk = *uk;
	k->revision = revision;
	memset(res, 0, sizeof(*res));
	if (!ops)
		return -EINVAL;	/* what the core answers for NAIO/AIO */
	pthread_mutex_lock(&rec_lock);
	k->registered = 1;	/* a fire may come before attach returns */
	pthread_mutex_unlock(&rec_lock);
	ret = ops->attach(k, c, res);
	if (ret != 0) {
		pthread_mutex_lock(&rec_lock);
		k->registered = 0;
		pthread_mutex_unlock(&rec_lock);
	}
	return ret;
}

int rec_modify(struct kitem *k, __u32 event, __u32 req_flags, struct korigin_result *res)
{
	const struct korigin_ops *ops = rec_ops(k->uk.type);

	pthread_mutex_lock(&rec_lock);
	k->uk.event = event;
	k->uk.req_flags = req_flags;
	pthread_mutex_unlock(&rec_lock);
	memset(res, 0, sizeof(*res));
	return ops->modify ? ops->modify(k, res) : 0;
}

void rec_remove(struct kitem *k)
{
	rec_ops(k->uk.type)->detach(k);
	pthread_mutex_lock(&rec_lock);
	k->registered = 0;
	pthread_mutex_unlock(&rec_lock);
}

int rec_dequeue(struct kitem *k, struct korigin_result *res)
{
	int was;

	pthread_mutex_lock(&rec_lock);
	was = k->ready;
	k->ready = 0;
	if (res)
		*res = k->last;
	pthread_mutex_unlock(&rec_lock);
	return was;
}

unsigned int rec_fires(struct kitem *k)
{
	unsigned int n;

	pthread_mutex_lock(&rec_lock);
	n = k->fires;
	pthread_mutex_unlock(&rec_lock);
	return n;
}

static __u64 rec_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + (__u64)ts.tv_nsec / 1000000;
}

unsigned int rec_wait_fires(struct kitem *k, unsigned int n, int timeout_ms)
{
	__u64 end = rec_now_ms() + (__u64)timeout_ms;

	while (rec_fires(k) < n && rec_now_ms() < end) {
		if (rec_flags & KORIGINS_NO_THREAD) {
			korigins_run(10);
		} else {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 10 * 1000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_mutex_lock(&rec_lock);
			if (k->fires < n)
				pthread_cond_timedwait(&rec_cond, &rec_lock, &ts);
			pthread_mutex_unlock(&rec_lock);
		}
	}
	return rec_fires(k);
}

void rec_idle(int ms)
{
	__u64 end = rec_now_ms() + (__u64)ms;

	while (rec_now_ms() < end) {
		if (rec_flags & KORIGINS_NO_THREAD)
			korigins_run(5);
		else
			usleep(5000);
	}
}

struct kcaller rec_self(void)
{
	struct kcaller c = {
		.tid = (pid_t)syscall(SYS_gettid),
		.tgid = getpid(),
		.uid = getuid(),
		.gid = getgid(),
	};
	return c;
}
