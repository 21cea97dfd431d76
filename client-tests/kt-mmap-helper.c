// SPDX-License-Identifier: GPL-2.0
/*
 * kt-mmap-helper DEVICE: the raw-mmap refusals of A10/D23 (ktmmap.c), run
 * by client-ring under LD_PRELOAD=libkevent-mmap.so on the CUSE backend.
 * Prints "ok" or the first failure; exit status 0 or 1.
 */
#include <stdio.h>

int kt_mmap_refusals(const char *dev, char *msg, size_t msglen);

int main(int argc, char **argv)
{
	char msg[256] = "";

	if (argc != 2) {
		fprintf(stderr, "usage: kt-mmap-helper DEVICE\n");
		return 2;
	}
	if (kt_mmap_refusals(argv[1], msg, sizeof(msg))) {
		printf("%s\n", msg);
		return 1;
	}
	printf("ok\n");
	return 0;
}
