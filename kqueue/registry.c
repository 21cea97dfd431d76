// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kqueue descriptors of libkqueue-kevent: which fd is which kqueue, how the
 * front learns that a watched fd is closed (it interposes close(), dup2(),
 * dup3() and close_range(), and removes the fd's kevents before the real
 * close, so the daemon's duplicate goes too), and the fork rule (the
 * child's kqueue descriptors are closed: its calls fail EBADF).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "libkevent.h"
#include "front.h"

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kq **by_fd;	/* kqueue of each fd number, or NULL */
static int by_fd_len;
static struct kq **live;	/* every kqueue not yet closed */
static int nlive, live_cap;
static atomic_int nlive_fast;	/* close() looks here first */
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void live_remove(struct kq *kq)
{
	for (int i = 0; i < nlive; i++) {
		if (live[i] == kq) {
			live[i] = live[--nlive];
			break;
		}
	}
	atomic_store(&nlive_fast, nlive);
}

/* The registry's hold on kq ends (reg_lock held): kq is closing. */
static void detach_locked(struct kq *kq)
{
	if (kq->fd >= 0 && kq->fd < by_fd_len && by_fd[kq->fd] == kq)
		by_fd[kq->fd] = NULL;
	live_remove(kq);
}

void kqf_kq_put(struct kq *kq)
{
	bool last;

	pthread_mutex_lock(&reg_lock);
	last = --kq->refs == 0;
	pthread_mutex_unlock(&reg_lock);
	if (last)
		kqf_kq_release(kq, false);
}

/* The child keeps no kqueue (FreeBSD): close every descriptor the front made. */
static void in_child(void)
{
	for (int i = 0; i < nlive; i++) {
		struct kq *kq = live[i];

		for (unsigned int h = 0; h < KQ_HASH; h++)
			for (struct knote *kn = kq->by_key[h]; kn; kn = kn->hnext)
				if ((kn->kind == K_TIMER || kn->kind == K_PROC) && kn->watch_fd >= 0)
					kqf_sys_close(kn->watch_fd);
		kqf_sys_close(kq->fd);
		kqf_sys_close(kq->wake_fd);
		if (kq->ino_fd >= 0)
			kqf_sys_close(kq->ino_fd);
		/* Its memory stays: another thread of the parent may have held its lock. */
	}
	nlive = 0;
	atomic_store(&nlive_fast, 0);
	memset(by_fd, 0, sizeof(*by_fd) * (size_t)by_fd_len);
	pthread_mutex_init(&reg_lock, NULL);
	kqf_signal_forget();
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&reg_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&reg_lock);
}

static void register_fork(void)
{
	pthread_atfork(fork_prepare, fork_parent, in_child);
}

static int grow(int fd)
{
	if (fd >= by_fd_len) {
		int n = fd + 64;
		struct kq **p = realloc(by_fd, sizeof(*p) * (size_t)n);

		if (!p)
			return -ENOMEM;
		memset(p + by_fd_len, 0, sizeof(*p) * (size_t)(n - by_fd_len));
		by_fd = p;
		by_fd_len = n;
	}
	if (nlive == live_cap) {
		int n = live_cap ? live_cap * 2 : 8;
		struct kq **p = realloc(live, sizeof(*p) * (size_t)n);

		if (!p)
			return -ENOMEM;
		live = p;
		live_cap = n;
	}
	return 0;
}

int kqf_kq_create(void)
{
	const char *dev = getenv("KEVENT_DEVICE");
	struct kq *kq;
	int fd, r;

	pthread_once(&fork_once, register_fork);
	if (!dev || !*dev)
		dev = KEVENT_DEVICE_DEFAULT;
	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	kq = calloc(1, sizeof(*kq));
	if (!kq) {
		kqf_sys_close(fd);
		return -ENOMEM;
	}
	r = kqf_kq_init(kq, fd);
	if (r < 0) {
		kq->fd = -1;
		kqf_kq_release(kq, false);
		kqf_sys_close(fd);
		return r;
	}
	pthread_mutex_lock(&reg_lock);
	r = grow(fd);
	if (r == 0) {
		/* A kqueue fd closed behind the front's back (libc inside): gone. */
		struct kq *old = by_fd[fd];

		if (old) {
			detach_locked(old);
			old->closed = true;
			if (--old->refs == 0)
				kqf_kq_release(old, false);
		}
		kq->refs = 1;
		by_fd[fd] = kq;
		live[nlive++] = kq;
		atomic_store(&nlive_fast, nlive);
	}
	pthread_mutex_unlock(&reg_lock);
	if (r < 0) {
		kqf_kq_release(kq, false);
		kqf_sys_close(fd);
	}
	return r < 0 ? r : fd;
}

int kqf_kq_get(int fd, struct kq **kqp)
{
	struct kq *kq = NULL;

	pthread_mutex_lock(&reg_lock);
	if (fd >= 0 && fd < by_fd_len)
		kq = by_fd[fd];
	if (kq && kq->pid == getpid())
		kq->refs++;
	else
		kq = NULL;
	pthread_mutex_unlock(&reg_lock);
	if (!kq)
		return -EBADF;	/* closed, or not a kqueue: FreeBSD says EBADF for both */
	*kqp = kq;
	return 0;
}

static bool watches(const struct knote *kn, unsigned int first, unsigned int last)
{
	return (kn->kind == K_FD || kn->kind == K_FILE || kn->kind == K_VNODE ||
		kn->kind == K_KQUEUE) &&
	       kn->kev.ident >= first && kn->kev.ident <= last;
}

/*
 * Fds first..last are about to be closed: kqueues among them close, and
 * every kevent watching one of them is removed first, so the daemon drops
 * its duplicate (a socket's FIN goes out) and a reused number starts clean.
 */
static void forget_fds(unsigned int first, unsigned int last)
{
	struct kq **hold;
	int n = 0;

	pthread_mutex_lock(&reg_lock);
	hold = malloc(sizeof(*hold) * (size_t)(nlive ? nlive : 1));
	if (!hold) {
		pthread_mutex_unlock(&reg_lock);
		return;	/* the identity check at delivery still holds */
	}
	for (int i = 0; i < nlive; i++) {
		live[i]->refs++;
		hold[n++] = live[i];
	}
	for (int i = 0; i < n; i++) {
		struct kq *kq = hold[i];

		if ((unsigned int)kq->fd >= first && (unsigned int)kq->fd <= last) {
			detach_locked(kq);
			kq->refs--;	/* the registry's reference */
			pthread_mutex_lock(&kq->lock);
			kqf_kq_closing(kq);
			pthread_mutex_unlock(&kq->lock);
		}
	}
	pthread_mutex_unlock(&reg_lock);
	for (int i = 0; i < n; i++) {
		struct kq *kq = hold[i];

		pthread_mutex_lock(&kq->lock);
		if (!kq->closed) {
			for (unsigned int h = 0; h < KQ_HASH; h++) {
				struct knote *kn = kq->by_key[h];

				while (kn) {
					struct knote *next = kn->hnext;

					if (watches(kn, first, last))
						kqf_knote_free(kq, kn);
					kn = next;
				}
			}
		}
		pthread_mutex_unlock(&kq->lock);
		kqf_kq_put(kq);
	}
	free(hold);
}

/* A signal read by the dispatcher goes to every kqueue that watches it. */
void kqf_signal_fanout(int signo)
{
	struct kq **hold;
	int n = 0;

	pthread_mutex_lock(&reg_lock);
	hold = malloc(sizeof(*hold) * (size_t)(nlive ? nlive : 1));
	for (int i = 0; hold && i < nlive; i++) {
		live[i]->refs++;
		hold[n++] = live[i];
	}
	pthread_mutex_unlock(&reg_lock);
	for (int i = 0; i < n; i++) {
		kqf_signal_deliver(hold[i], signo);
		kqf_kq_put(hold[i]);
	}
	free(hold);
}

/* Only the fd's own (ident, filter) pairs: no scan of the whole table. */
static void forget_fd(int fd)
{
	struct kq **hold;
	int n = 0;
	bool is_kq = false;

	pthread_mutex_lock(&reg_lock);
	is_kq = fd >= 0 && fd < by_fd_len && by_fd[fd];
	hold = is_kq ? NULL : malloc(sizeof(*hold) * (size_t)(nlive ? nlive : 1));
	if (hold) {
		for (int i = 0; i < nlive; i++) {
			live[i]->refs++;
			hold[n++] = live[i];
		}
	}
	pthread_mutex_unlock(&reg_lock);
	if (is_kq) {
		forget_fds((unsigned int)fd, (unsigned int)fd);
		return;
	}
	for (int i = 0; i < n; i++) {
		struct kq *kq = hold[i];
		static const short filters[] = { EVFILT_READ, EVFILT_WRITE, EVFILT_VNODE };

		pthread_mutex_lock(&kq->lock);
		for (unsigned int f = 0; f < 3 && !kq->closed; f++) {
			struct knote *kn = kqf_lookup(kq, (uintptr_t)fd, filters[f]);

			if (kn)
				kqf_knote_free(kq, kn);
		}
		pthread_mutex_unlock(&kq->lock);
		kqf_kq_put(kq);
	}
	free(hold);
}

/* ---- the interposed calls: exported, found before libc's ---- */

int close(int fd)
{
	if (atomic_load(&nlive_fast) > 0)
		forget_fd(fd);
	return kqf_sys_close(fd);
}

int dup3(int oldfd, int newfd, int flags)
{
	if (atomic_load(&nlive_fast) > 0 && oldfd != newfd && fcntl(oldfd, F_GETFD) >= 0)
		forget_fd(newfd);
	return (int)syscall(SYS_dup3, oldfd, newfd, flags);
}

int dup2(int oldfd, int newfd)
{
	if (oldfd == newfd)
		return fcntl(oldfd, F_GETFD) < 0 ? -1 : newfd;
	return dup3(oldfd, newfd, 0);
}

int close_range(unsigned int first, unsigned int last, int flags)
{
	if (atomic_load(&nlive_fast) > 0 && !(flags & CLOSE_RANGE_CLOEXEC) && first <= last)
		forget_fds(first, last);
	return (int)syscall(SYS_close_range, first, last, flags);
}
