/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers of the libkqueue-kevent conformance suite.  Each test states one
 * rule of FreeBSD's kqueue(2) page (or of kqueue-kevent(3) where the front
 * decides), through <sys/event.h> only; the device is $KEVENT_DEVICE.
 */
#ifndef KQT_H
#define KQT_H

#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/event.h>

#define KQT_TIMEOUT 120.0
#define KQT(suite, name) Test(suite, name, .timeout = KQT_TIMEOUT)

/* kqueue(), or a loud skip when the device is missing. */
int kqt_kqueue(void);
/* One change, no eventlist: 0 or -errno. */
int kqt_change(int kq, uintptr_t ident, short filter, unsigned short flags,
	       unsigned int fflags, intptr_t data, void *udata);
/* The same, asserting success. */
void kqt_ok(int kq, uintptr_t ident, short filter, unsigned short flags,
	    unsigned int fflags, intptr_t data, void *udata);
/* Wait up to 10 s for exactly one event (asserts one came). */
struct kevent kqt_get(int kq, const char *what);
/* Wait up to ms for events; returns the count (asserts no error). */
int kqt_wait(int kq, struct kevent *ev, int n, long ms);
/* Asserts nothing is reported within ms. */
void kqt_quiet(int kq, long ms, const char *what);
/* Asserts two events are equal field by field. */
void kqt_same(const struct kevent *want, const struct kevent *got, const char *what);
/* A change as one call with an eventlist of one: the EV_ERROR entry. */
struct kevent kqt_error_entry(int kq, uintptr_t ident, short filter, unsigned short flags,
			      unsigned int fflags, intptr_t data);
void kqt_pipe(int p[2]);
void kqt_socketpair(int sv[2]);
void kqt_write(int fd, size_t n);
void kqt_drain(int fd);
/* A TCP listener on 127.0.0.1 (port in *port) and a connected client. */
int kqt_tcp_listener(int *port);
int kqt_tcp_connect(int port);
/*
 * The kqueue's device queue: its revision (INFO's queue_revision), and in
 * *highest (if not NULL) the highest revision the device serves.
 */
unsigned int kqt_revision(int kq, unsigned int *highest);
/* A temporary file with n bytes, its path in buf. */
int kqt_tmpfile(char *buf, size_t len, size_t n);

#endif
