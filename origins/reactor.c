// SPDX-License-Identifier: GPL-2.0
/*
 * The reactor: one epoll instance and (normally) one thread that waits on it
 * and hands each source's activity to its origin.  Start/stop of the whole
 * origin layer lives here too.
 *
 * LOCKING: see internal.h.  The reactor holds korigins_lock only while it
 * handles one source, never across epoll_wait(), so attach/detach wait at
 * most for one handler.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "internal.h"

#define KR_BATCH 256

pthread_mutex_t korigins_lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
	int epfd;
	int wakefd;
	int threaded;
	pthread_t thread;
	atomic_int stopping;
	atomic_int running;
} kr = { .epfd = -1, .wakefd = -1 };

__u64 kclock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000u + (__u64)ts.tv_nsec;
}

__u32 kclock_ms32(void)
{
	return (__u32)(kclock_ns() / 1000000u);
}

int kreactor_running(void)
{
	return atomic_load(&kr.running);
}

static int kreactor_ctl(int op, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = { .events = events, .data.u64 = data };

	return epoll_ctl(kr.epfd, op, fd, &ev) < 0 ? -errno : 0;
}

int kreactor_add(int fd, uint32_t events, uint64_t data)
{
	return kreactor_ctl(EPOLL_CTL_ADD, fd, events, data);
}

int kreactor_mod(int fd, uint32_t events, uint64_t data)
{
	return kreactor_ctl(EPOLL_CTL_MOD, fd, events, data);
}

void kreactor_del(int fd)
{
	epoll_ctl(kr.epfd, EPOLL_CTL_DEL, fd, NULL);
}

static void kreactor_dispatch(const struct epoll_event *ev)
{
	unsigned int tag = KR_TAG(ev->data.u64);
	uint64_t val;

	if (tag == KR_TAG_WAKE) {
		/* Only wakes the loop so it sees 'stopping'. */
		if (read(kr.wakefd, &val, sizeof(val)) < 0)
			return;
		return;
	}
	pthread_mutex_lock(&korigins_lock);
	switch (tag) {
	case KR_TAG_TIMER:
		ktimer_handle();
		break;
	case KR_TAG_WATCH:
		kwatch_handle(KR_PAYLOAD(ev->data.u64), ev->events);
		break;
	case KR_TAG_INOTIFY:
		kinode_handle_inotify();
		break;
	case KR_TAG_FANOTIFY:
		kinode_handle_fanotify();
		break;
	}
	pthread_mutex_unlock(&korigins_lock);
	if (tag == KR_TAG_INOTIFY || tag == KR_TAG_FANOTIFY)
		kinode_log_overflow();
}

/* ---- begin KEVENT_IOC_DRAIN: the "origins drained" barrier (tests) ---- */
static int kreactor_round(int timeout_ms);

static struct {
	pthread_mutex_t serial;		/* one drain at a time */
	pthread_mutex_t lock;
	pthread_cond_t done;
	__u64 wake_rounds;		/* rounds that handled a wake, completed */
} kdrain = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
	     PTHREAD_COND_INITIALIZER, 0 };

static void kdrain_round_done(void)
{
	pthread_mutex_lock(&kdrain.lock);
	kdrain.wake_rounds++;
	pthread_cond_broadcast(&kdrain.done);
	pthread_mutex_unlock(&kdrain.lock);
}

/*
 * A source event is on epoll's ready list once the writer's syscall
 * returned.  The wake written here joins that list after it, and one
 * epoll_wait returns the whole list (fewer than KR_BATCH sources in a
 * test): so the round that handles our wake handled every event pending at
 * the call.  Drains are serialised, so the wake counted is ours.
 */
void korigins_drain(void)
{
	uint64_t one = 1;
	__u64 seen;

	if (!atomic_load(&kr.running))
		return;
	if (!kr.threaded) {
		while (kreactor_round(0) > 0)
			;
		return;
	}
	pthread_mutex_lock(&kdrain.serial);
	pthread_mutex_lock(&kdrain.lock);
	seen = kdrain.wake_rounds;
	pthread_mutex_unlock(&kdrain.lock);
	if (write(kr.wakefd, &one, sizeof(one)) == (ssize_t)sizeof(one)) {
		pthread_mutex_lock(&kdrain.lock);
		while (kdrain.wake_rounds == seen && !atomic_load(&kr.stopping)) {
			/* re-checks 'stopping': a stop ends the rounds */
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 100000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&kdrain.done, &kdrain.lock, &ts);
		}
		pthread_mutex_unlock(&kdrain.lock);
	}
	pthread_mutex_unlock(&kdrain.serial);
}
/* ---- end KEVENT_IOC_DRAIN ---- */

static int kreactor_round(int timeout_ms)
{
	struct epoll_event evs[KR_BATCH];
	int n, i, woken = 0;

	n = epoll_wait(kr.epfd, evs, KR_BATCH, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (i = 0; i < n; i++) {
		woken |= KR_TAG(evs[i].data.u64) == KR_TAG_WAKE;
		kreactor_dispatch(&evs[i]);
	}
	if (woken)
		kdrain_round_done();
	return n;
}

static void *kreactor_thread(void *arg)
{
	while (!atomic_load(&kr.stopping))
		kreactor_round(-1);
	return NULL;
}

int korigins_run(int timeout_ms)
{
	if (!atomic_load(&kr.running))
		return -ENODEV;
	if (kr.threaded)
		return -EBUSY;
	return kreactor_round(timeout_ms);
}

static int korigins_register_all(void)
{
	static const struct {
		__u32 type;
		const struct korigin_ops *ops;
	} table[] = {
		{ KEVENT_TIMER, &ktimer_ops },
		{ KEVENT_POSIX_TIMER, &kptimer_ops },
		{ KEVENT_POLL, &kpoll_ops },
		{ KEVENT_SOCKET, &ksocket_ops },
		{ KEVENT_INODE, &kinode_ops },
	};
	size_t i;
	int err;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		err = korigin_register(table[i].type, table[i].ops);
		if (err < 0)
			return err;
	}
	return 0;
}

static int kcloser_up(const struct korigins_config *cfg)
{
	return kcloser_start();
}

static int ktimer_up(const struct korigins_config *cfg)
{
	return ktimer_init();
}

static int kwatch_up(const struct korigins_config *cfg)
{
	return kwatch_init(cfg->log);
}

static int kinode_up(const struct korigins_config *cfg)
{
	return kinode_init(cfg->inode_backend, cfg->log);
}

/*
 * The origins' own state (threads, kernel descriptors), one row each:
 * started in this order once the reactor's epoll set exists, stopped in
 * the reverse one.  Every stop copes with a start that never ran, since
 * a failed setup stops them all.
 */
static const struct {
	int (*start)(const struct korigins_config *cfg);
	void (*stop)(void);
} kparts[] = {
	{ kcloser_up, kcloser_stop },
	{ ktimer_up, ktimer_fini },
	{ kwatch_up, kwatch_fini },
	{ kinode_up, kinode_fini },
};

#define KPARTS_NR	(sizeof(kparts) / sizeof(kparts[0]))

static void korigins_teardown(void)
{
	size_t i;

	for (i = KPARTS_NR; i-- > 0;)
		kparts[i].stop();
	if (kr.wakefd >= 0)
		close(kr.wakefd);
	if (kr.epfd >= 0)
		close(kr.epfd);
	kr.wakefd = kr.epfd = -1;
}

static int korigins_setup(const struct korigins_config *cfg)
{
	size_t i;
	int err;

	kr.epfd = epoll_create1(EPOLL_CLOEXEC);
	kr.wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (kr.epfd < 0 || kr.wakefd < 0)
		return -errno;
	err = kreactor_add(kr.wakefd, EPOLLIN, KR_DATA(KR_TAG_WAKE, 0));
	for (i = 0; i < KPARTS_NR && !err; i++)
		err = kparts[i].start(cfg);
	if (!err)
		err = korigins_register_all();
	return err;
}

int korigins_start(const struct korigins_config *cfg)
{
	static const struct korigins_config defaults;
	int err;

	if (!cfg)
		cfg = &defaults;
	if (cfg->flags & ~KORIGINS_NO_THREAD)
		return -EINVAL;
	if (atomic_load(&kr.running))
		return -EBUSY;
	err = korigins_setup(cfg);
	if (err < 0) {
		korigins_teardown();
		return err;
	}
	atomic_store(&kr.stopping, 0);
	kr.threaded = !(cfg->flags & KORIGINS_NO_THREAD);
	atomic_store(&kr.running, 1);
	if (kr.threaded) {
		err = korigins_thread_create(&kr.thread, kreactor_thread, NULL);
		if (err < 0) {
			atomic_store(&kr.running, 0);
			korigins_teardown();
			return err;
		}
	}
	return 0;
}

void korigins_stop(void)
{
	uint64_t one = 1;

	if (!atomic_load(&kr.running))
		return;
	pthread_mutex_lock(&korigins_lock);
	atomic_store(&kr.running, 0);
	pthread_mutex_unlock(&korigins_lock);
	if (kr.threaded) {
		atomic_store(&kr.stopping, 1);
		if (write(kr.wakefd, &one, sizeof(one)) < 0)
			return;	/* cannot wake it: leave it running rather than hang */
		pthread_join(kr.thread, NULL);
	}
	korigins_teardown();
}

void korigins_stats(struct korigins_stats *out)
{
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&korigins_lock);
	if (atomic_load(&kr.running)) {
		out->timers = ktimer_count();
		ktimer_counts(&out->timer_wakes, &out->timer_expiries, &out->timer_deferred);
		out->fd_watches = kwatch_count();
		kinode_counts(&out->inode_watches, &out->inode_objects,
			      &out->inode_backend, &out->inode_overflows);
	}
	pthread_mutex_unlock(&korigins_lock);
	kcloser_counts(&out->closer_pending, &out->closer_threads);
}
