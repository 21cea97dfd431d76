// SPDX-License-Identifier: GPL-2.0
/* Socket pairs held by child processes: see pairs.h. */
#include <sys/socket.h>
#include <unistd.h>

#include "pairs.h"

void pair_child(int ctl)
{
	static int sv[PER_CHILD][2];
	int fds[PER_CHILD], i;
	char c;

	for (i = 0; i < PER_CHILD; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i]) < 0)
			_exit(1);
		fds[i] = sv[i][0];
	}
	if (write(ctl, fds, sizeof(fds)) != sizeof(fds) || read(ctl, &c, 1) != 1)
		_exit(1);
	for (i = 0; i < PER_CHILD; i++)
		if (write(sv[i][1], "x", 1) != 1)
			_exit(1);
	if (write(ctl, "w", 1) != 1 || read(ctl, &c, 1) < 0)
		_exit(1);
	_exit(0);
}

int read_all(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}
