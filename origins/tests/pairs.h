/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Socket pairs held by child processes, so the pidfd path runs for every fd
 * and the parent stays below RLIMIT_NOFILE (test_socket.c, test_e2e.c).
 */
#ifndef ORIGINS_TESTS_PAIRS_H
#define ORIGINS_TESTS_PAIRS_H

#include <stddef.h>

enum { PAIRS = 10000, CHILDREN = 4, PER_CHILD = PAIRS / CHILDREN };

/*
 * In the child: make PER_CHILD AF_UNIX pairs, send their first fds' numbers
 * on ctl, wait for a byte, write one byte into each pair, report "w" and
 * wait until the parent closes ctl.  Never returns.
 */
void pair_child(int ctl) __attribute__((noreturn));

/* read() exactly len bytes: 0, or -1 on EOF or error. */
int read_all(int fd, void *buf, size_t len);

#endif
