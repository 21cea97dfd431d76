// SPDX-License-Identifier: MIT
/*
 * ring-reader: read the memory-mapped event ring next to kevent_get_events().
 *
 * Every queue has a read-only ring of 4096 16-byte slots (struct mukevent:
 * id and ret_flags) on 17 pages of 4096 bytes.  The backend writes a slot
 * each time a kevent becomes ready and then advances the index at the start
 * of page 0.  The ring shows what became ready without a call, but never
 * dequeues: kevent_get_events() still has to, and its results come in ring
 * order.  There is no read index and no lap counter.
 *
 * Mapping: the module serves mmap() of the kevent fd; a CUSE device cannot
 * be mapped (ENODEV), so the daemon names a shared-memory copy of the ring
 * with KEVENT_IOC_RING_SHM (or a program runs under the libkevent-mmap.so
 * LD_PRELOAD shim).  kevent_ring_map() tries mmap() and falls back to
 * RING_SHM; the slots are then read here by hand with the header's macros,
 * and again through libkevent's kevent_ring_read(), which must agree.
 * Where INFO reports RING_SHM the program also maps that object itself and
 * checks both views agree.
 *
 * Self-check: 3 one-shot timers and a pipe become ready; each slot read
 * from the ring must match, in order, the event GET_EVENTS dequeues.
 * Exit status: 0 as expected, 1 on a mismatch, 77 without /dev/kevent.
 * The lines between the "man:" marks are shown in libkevent(3); the
 * whole file is the example of kevent(7) (docs/check-man.py checks both).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* O_CLOEXEC, accept4(), pipe2() under -std=c11 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <libkevent.h>

#define NEVENTS 4

static int fail(const char *why)
{
	fprintf(stderr, "ring-reader: %s\n", why);
	return 1;
}

/* The write index, acquire: the slots before it are complete. */
static unsigned int ring_index(const unsigned char *base)
{
	const struct kevent_mring *page0 = (const void *)base;

	return __atomic_load_n(&page0->index, __ATOMIC_ACQUIRE) % KEVENT_MAX_EVENTS;
}

/* Slot s: page s / 255, record s % 255 after the 8-byte page header. */
static const struct mukevent *ring_slot(const unsigned char *base, unsigned int s)
{
	return (const void *)(base + KEVENT_RING_SLOT_OFFSET(s));
}

/*
 * What kevent_ring_map() does on a CUSE device without the shim: ask the
 * daemon for its shared-memory ring object and map that read-only.
 */
static const unsigned char *map_ring_shm(int kfd)
{
	struct kevent_ring_shm shm = { 0 };
	void *p = MAP_FAILED;
	int fd;

	if (ioctl(kfd, KEVENT_IOC_RING_SHM, &shm) == 0 && shm.length == KEVENT_RING_SIZE &&
	    (fd = open(shm.path, O_RDONLY | O_CLOEXEC)) >= 0) {
		p = mmap(NULL, KEVENT_RING_SIZE, PROT_READ, MAP_SHARED, fd, 0);
		close(fd);	/* the mapping stays */
	}
	return p == MAP_FAILED ? NULL : p;
}

int main(int argc, char **argv)
{
	const char *dev = getenv("KEVENT_DEVICE");
	struct mukevent seen[NEVENTS * 2];	/* slots read, not yet matched */
	struct ukevent uk[NEVENTS], ev[NEVENTS];
	struct kevent_ring ring;
	struct kevent_info info;
	const unsigned char *shm = NULL;	/* RING_SHM view (CUSE only) */
	unsigned int next, nseen = 0, matched = 0;
	int kfd, pfd[2];

	if (argc > 1) {
		printf("usage: %s\nMaps the ring of a kevent queue and checks each new\n"
		       "slot against kevent_get_events().\n", argv[0]);
		return strcmp(argv[1], "--help") == 0 ? 0 : 2;
	}
	kfd = open(dev ? dev : KEVENT_DEVICE_DEFAULT, O_RDWR | O_CLOEXEC);
	if (kfd == -1) {
		int e = errno;

		perror("ring-reader: open kevent device");
		return e == ENOENT || e == ENODEV || e == ENXIO ? 77 : 1;
	}
	if (kevent_info(kfd, &info) == -1 || pipe2(pfd, O_CLOEXEC) == -1)
		return 1;
	if (info.ring_page_size != KEVENT_RING_PAGE_SIZE || info.ring_pages != KEVENT_RING_PAGES ||
	    info.ring_slots_per_page != KEVENTS_ON_PAGE || info.mukevent_size != 16)
		return fail("ring geometry differs from the header");
	/* man: ring-map */
	if (kevent_ring_map(kfd, &ring) == -1)
		return perror("ring-reader: kevent_ring_map"), 1;
	/* man: end */
	next = ring_index(ring.base);	/* only slots written from now on are new */
	printf("ring mapped via %s (backend %u), index %u\n",
	       ring.via_shm ? "KEVENT_IOC_RING_SHM" : "mmap() of the kevent fd",
	       info.backend, next);
	/* The daemon also names its ring object: a second view to check against. */
	if ((info.features & KEVENT_FEAT_RING_SHM) && !(shm = map_ring_shm(kfd)))
		return perror("ring-reader: KEVENT_IOC_RING_SHM"), 1;
	if (shm)
		printf("also mapped the KEVENT_IOC_RING_SHM object: both views must agree\n");

	/* ONESHOT timers of 200, 400, 600 ms and the read end of an empty pipe. */
	memset(uk, 0, sizeof(uk));
	for (int i = 0; i < NEVENTS; i++) {
		int timer = i < NEVENTS - 1;

		uk[i].type = timer ? KEVENT_TIMER : KEVENT_POLL;
		uk[i].event = timer ? KEVENT_TIMER_FIRED : KEVENT_POLL_POLLIN;
		uk[i].id.raw[0] = timer ? (__u32)(200 * (i + 1)) : (__u32)pfd[0];	/* timer: the period */
		uk[i].req_flags = KEVENT_REQ_ONESHOT;
		uk[i].user[0] = i;
	}
	if (kevent_ctl(kfd, KEVENT_CTL_ADD, NEVENTS, uk) != 0)
		return fail("ADD did not register everything");
	/* ADD writes no slot; only becoming ready does. */
	if (ring_index(ring.base) != next || write(pfd[1], "x", 1) != 1)
		return fail("the index moved at ADD");

	while (matched < NEVENTS) {
		int got = kevent_get_events(kfd, 1, NEVENTS, 5000000000ULL, ev, 0);

		if (got <= 0)
			return fail("no event within 5 s");
		unsigned int before = nseen, nlib;
		struct mukevent lib[NEVENTS * 2];

		/* Every event dequeued had its slot written first: read them now. */
		for (unsigned int idx = ring_index(ring.base); next != idx && nseen < NEVENTS * 2;
		     next = (next + 1) % KEVENT_MAX_EVENTS) {
			seen[nseen] = *ring_slot(ring.base, next);
			if (shm && memcmp(ring_slot(shm, next), &seen[nseen], 16) != 0)
				return fail("the RING_SHM view differs");
			printf("ring slot %4u: id %u/%u ret_flags %#x\n", next,
			       seen[nseen].id.raw[0], seen[nseen].id.raw[1], seen[nseen].ret_flags);
			nseen++;
		}
		/* man: ring-read */
		/* libkevent's reader: the slots since its last call, ring.next moves on. */
		nlib = kevent_ring_read(&ring, lib, nseen - before);
		/* man: end */
		if (nlib != nseen - before || memcmp(lib, &seen[before], nlib * sizeof(lib[0])))
			return fail("kevent_ring_read() differs from the slots read by hand");
		/* Ring order is ready-list order: the k-th event is the k-th slot. */
		for (int i = 0; i < got; i++, matched++) {
			printf("event cookie %u: id %u ret_flags %#x\n", ev[i].user[0],
			       ev[i].id.raw[0], ev[i].ret_flags);
			if (matched >= nseen || seen[matched].id.raw_u64 != ev[i].id.raw_u64 ||
			    seen[matched].ret_flags != ev[i].ret_flags || ev[i].ret_flags != KEVENT_RET_DONE)
				return fail("an event does not match its ring slot");
		}
	}
	/* All were ONESHOT: nothing left, and no further slot was written. */
	if (kevent_info(kfd, &info) == -1 || info.queue_kevents != 0 ||
	    ring_index(ring.base) != next)
		return fail("queue not empty after all events");
	kevent_ring_unmap(&ring);
	close(kfd);
	printf("ring-reader: ok (%u slots matched)\n", matched);
	return 0;
}
