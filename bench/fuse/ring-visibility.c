// SPDX-License-Identifier: GPL-2.0
/*
 * bench-ring-visibility: how long after an event becomes ready its slot is
 * visible in a plain mmap() of the kevent fd (the take13 ring is read,
 * never consumed), next to the same delay in the mapping of the ring's
 * shared-memory object (KEVENT_IOC_RING_SHM: the very memory the core
 * writes, so its delay is the origin's own).  On fuse the difference is
 * the page-cache store (cuse-daemon/kc-fring.c); on the module both are
 * one memory and only the first column exists.
 *
 * One poll kevent on a pipe; each round writes one byte (t0), spins on
 * both mappings until each shows the new index, then dequeues the event
 * and drains the pipe.  Prints medians and 99th percentiles over ROUNDS
 * rounds and the ratio fd-mapping / shm-mapping.  It also counts every
 * index value read from the fd mapping that is neither the old nor the
 * new one (a torn or backward index: the store of the index word is one
 * aligned 4-byte copy in the kernel, design.md section 7).
 *
 *   KEVENT_DEVICE=MNT/kevent build/bench/fuse/bench-ring-visibility [ROUNDS]
 *
 * Exit 0 when it measured, 77 without a mapping of the fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <libkevent.h>

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

static unsigned long long pct(unsigned long long *v, unsigned int n, unsigned int p)
{
	qsort(v, n, sizeof(*v), cmp_ull);
	return v[(unsigned long long)n * p / 100 - (p == 100)];
}

static __u32 idx_of(const volatile void *ring)
{
	return __atomic_load_n((const __u32 *)ring, __ATOMIC_ACQUIRE);
}

/* The RING_SHM object mapped, or NULL (the module has none). */
static const void *map_shm(int kfd)
{
	struct kevent_ring_shm shm;
	void *p;
	int fd;

	memset(&shm, 0, sizeof(shm));
	if (ioctl(kfd, KEVENT_IOC_RING_SHM, &shm) < 0)
		return NULL;
	fd = open(shm.path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	p = mmap(NULL, KEVENT_RING_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

int main(int argc, char **argv)
{
	const char *dev = getenv("KEVENT_DEVICE") ? getenv("KEVENT_DEVICE") : "/dev/kevent";
	unsigned int rounds = argc > 1 ? (unsigned int)atoi(argv[1]) : 20000, torn = 0;
	unsigned long long *dfile = calloc(rounds, sizeof(*dfile));
	unsigned long long *dshm = calloc(rounds, sizeof(*dshm));
	unsigned long long reads = 0;
	int kfd = open(dev, O_RDWR | O_CLOEXEC), p[2];
	const void *file, *shm;
	struct ukevent uk, out[1];
	char c = 'x';

	if (kfd < 0 || !dfile || !dshm || pipe(p)) {
		fprintf(stderr, "%s: %s\n", dev, strerror(errno));
		return 77;
	}
	file = mmap(NULL, KEVENT_RING_SIZE, PROT_READ, MAP_SHARED, kfd, 0);
	if (file == MAP_FAILED) {
		fprintf(stderr, "mmap() of %s: %s (no mapping of the fd here)\n", dev, strerror(errno));
		return 77;
	}
	shm = map_shm(kfd);
	memset(&uk, 0, sizeof(uk));
	uk.id.raw[0] = (__u32)p[0];
	uk.type = KEVENT_POLL;
	uk.event = KEVENT_POLL_POLLIN;
	if (kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &uk) != 0) {
		fprintf(stderr, "ADD: %s\n", strerror(errno));
		return 1;
	}
	for (unsigned int r = 0; r < rounds; r++) {
		__u32 old = idx_of(file), want = (old + 1) % KEVENT_MAX_EVENTS;
		unsigned long long t0 = now_ns(), tf = 0, ts = shm ? 0 : 1;

		if (write(p[1], &c, 1) != 1)
			return 1;
		while (!tf || !ts) {
			__u32 v = idx_of(file);

			reads++;
			if (v != old && v != want)
				torn++;
			if (!tf && v == want)
				tf = now_ns();
			if (!ts && idx_of(shm) == want)
				ts = now_ns();
		}
		dfile[r] = tf - t0;
		dshm[r] = shm ? ts - t0 : 0;
		if (kevent_get_events(kfd, 1, 1, KEVENT_TIMEOUT_INFINITE, out, 0) != 1 ||
		    read(p[0], &c, 1) != 1)
			return 1;
	}
	unsigned long long f50 = pct(dfile, rounds, 50), f99 = pct(dfile, rounds, 99);
	unsigned long long s50 = pct(dshm, rounds, 50), s99 = pct(dshm, rounds, 99);

	printf("ring visibility over %u events (%s):\n", rounds, dev);
	printf("  mmap() of the fd:      median %6.1f us, p99 %7.1f us\n", f50 / 1e3, f99 / 1e3);
	if (shm) {
		printf("  RING_SHM object:       median %6.1f us, p99 %7.1f us\n", s50 / 1e3, s99 / 1e3);
		printf("  ratio fd / shm:        %.2fx (median)\n", (double)f50 / (double)(s50 ? s50 : 1));
	}
	printf("  torn or backward index reads: %u of %llu\n", torn, reads);
	return 0;
}
