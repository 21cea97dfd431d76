/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libkqueue-kevent: functions shared between its files (hidden). */
#ifndef KQUEUE_KEVENT_FRONT_H
#define KQUEUE_KEVENT_FRONT_H

#include "internal.h"

/* kqueue.c */
int kqf_sys_close(int fd);
int kqf_dev_add(struct kq *kq, int fd, unsigned int events, uint64_t serial);
unsigned int kqf_fd_req(const struct kq *kq, const struct knote *kn);
unsigned int kqf_dispatch_req(const struct kq *kq, const struct knote *kn);
void kqf_dev_rearm(struct kq *kq, struct knote *kn);
void kqf_fd_sync(struct kq *kq, struct knote *kn);
void kqf_dev_remove(struct kq *kq, const struct knote *kn);
int kqf_dev_user_add(struct kq *kq, struct knote *kn);
int kqf_dev_user_ready(struct kq *kq, struct knote *kn);
int kqf_dev_vnode_add(struct kq *kq, struct knote *kn);
struct kevent_timer_spec;
int kqf_dev_timer(struct kq *kq, struct knote *kn, unsigned int cmd, struct kevent_timer_spec *ts);
int kqf_arm(struct kq *kq, struct knote *kn);
void kqf_candidate(struct kq *kq, struct knote *kn);
struct knote *kqf_lookup(struct kq *kq, uintptr_t ident, short filter);
struct knote *kqf_knote_new(struct kq *kq, const struct kevent *kev);
void kqf_knote_insert(struct kq *kq, struct knote *kn);
void kqf_knote_free(struct kq *kq, struct knote *kn);
int kqf_kq_init(struct kq *kq, int fd);
void kqf_kq_release(struct kq *kq, bool child);
void kqf_kq_closing(struct kq *kq);
void kqf_signal_deliver(struct kq *kq, int signo);
struct stat;
bool kqf_is_kqueue_fd(const struct kq *kq, const struct stat *st);
bool kqf_is_self(const struct kq *kq, int fd);

/* filters.c: what each EVFILT_* does */
int kqf_filter_validate(const struct kevent *kev);
int kqf_filter_attach(struct kq *kq, struct knote *kn, const struct kevent *kev);
int kqf_filter_modify(struct kq *kq, struct knote *kn, const struct kevent *kev);
int kqf_filter_check(struct kq *kq, struct knote *kn, struct kevent *out);
void kqf_filter_clear(struct knote *kn, const struct kevent *out);
void kqf_filter_detach(struct kq *kq, struct knote *kn);
bool kqf_is_stale(const struct knote *kn);
void kqf_filter_enable(struct kq *kq, struct knote *kn);
int kqf_user_touch(struct kq *kq, struct knote *kn, const struct kevent *kev);
void kqf_vnode_read(struct kq *kq);
unsigned int kqf_vnode_fflags(const struct knote *kn, unsigned int notes);
void kqf_signal_forget(void);
void kqf_signal_own(void);

/* registry.c: kqueue descriptors, close() interposition, fork */
int kqf_kq_create(void);
int kqf_kq_get(int fd, struct kq **kqp);
void kqf_kq_put(struct kq *kq);
void kqf_signal_fanout(int signo);

#endif /* KQUEUE_KEVENT_FRONT_H */
