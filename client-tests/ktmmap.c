// SPDX-License-Identifier: GPL-2.0
/*
 * The A10/D23 refusals of a raw mmap() on a kevent fd, without Criterion so
 * that kt-mmap-helper can run them under the libkevent-mmap.so preload.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/kevent.h>

int kt_mmap_refusals(const char *dev, char *msg, size_t msglen);

static int expect_fail(void *p, int want, const char *what, char *msg, size_t msglen)
{
	int e = errno;

	if (p != MAP_FAILED) {
		snprintf(msg, msglen, "%s: mapped, want %s", what, strerror(want));
		return -1;
	}
	if (e != want) {
		snprintf(msg, msglen, "%s: %s, want %s", what, strerror(e), strerror(want));
		return -1;
	}
	return 0;
}

int kt_mmap_refusals(const char *dev, char *msg, size_t msglen)
{
	int rw = open(dev, O_RDWR | O_CLOEXEC), ro = open(dev, O_RDONLY | O_CLOEXEC);
	int ret = -1;
	void *p;

	if (rw < 0 || ro < 0) {
		snprintf(msg, msglen, "open %s: %s", dev, strerror(errno));
		goto out;
	}
	/* The good mapping first: read-only shared, whole ring, offset 0. */
	p = mmap(NULL, KEVENT_RING_SIZE, PROT_READ, MAP_SHARED, rw, 0);
	if (p == MAP_FAILED) {
		snprintf(msg, msglen, "PROT_READ MAP_SHARED of O_RDWR fd: %s", strerror(errno));
		goto out;
	}
	if (*(volatile const __u32 *)p != 0) {
		snprintf(msg, msglen, "fresh queue: ring index %u, want 0", *(const __u32 *)p);
		goto out;
	}
	/* A later mprotect(PROT_WRITE) is refused (VM_MAYWRITE cleared). */
	if (mprotect(p, KEVENT_RING_SIZE, PROT_READ | PROT_WRITE) == 0) {
		snprintf(msg, msglen, "mprotect(PROT_WRITE) of the ring succeeded");
		goto out;
	}
	if (errno != EACCES) {
		snprintf(msg, msglen, "mprotect(PROT_WRITE): %s, want EACCES", strerror(errno));
		goto out;
	}
	munmap(p, KEVENT_RING_SIZE);
	/* One page is a legal (shorter) mapping, as the take13 evtest did. */
	p = mmap(NULL, KEVENT_RING_PAGE_SIZE, PROT_READ, MAP_SHARED, rw, 0);
	if (p == MAP_FAILED) {
		snprintf(msg, msglen, "one-page mapping: %s", strerror(errno));
		goto out;
	}
	munmap(p, KEVENT_RING_PAGE_SIZE);
	p = mmap(NULL, KEVENT_RING_SIZE, PROT_READ, MAP_SHARED, ro, 0);
	if (p == MAP_FAILED) {
		snprintf(msg, msglen, "PROT_READ MAP_SHARED of O_RDONLY fd: %s", strerror(errno));
		goto out;
	}
	if (mprotect(p, KEVENT_RING_SIZE, PROT_READ | PROT_WRITE) == 0 || errno != EACCES) {
		snprintf(msg, msglen, "mprotect(PROT_WRITE) on O_RDONLY mapping: %s, want EACCES",
			 errno ? strerror(errno) : "success");
		goto out;
	}
	munmap(p, KEVENT_RING_SIZE);

	/* D23, in order. */
	errno = 0;
	if (expect_fail(mmap(NULL, KEVENT_RING_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0),
			EACCES, "PROT_WRITE MAP_SHARED of O_RDONLY fd", msg, msglen))
		goto out;
	if (expect_fail(mmap(NULL, KEVENT_RING_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE, rw, 0),
			EINVAL, "PROT_WRITE MAP_PRIVATE of O_RDWR fd", msg, msglen))
		goto out;
	if (expect_fail(mmap(NULL, KEVENT_RING_SIZE, PROT_READ, MAP_PRIVATE, rw, 0),
			EINVAL, "PROT_READ MAP_PRIVATE", msg, msglen))
		goto out;
	if (expect_fail(mmap(NULL, KEVENT_RING_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, rw, 0),
			EPERM, "PROT_WRITE MAP_SHARED of O_RDWR fd", msg, msglen))
		goto out;
	if (expect_fail(mmap(NULL, KEVENT_RING_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, rw,
			     KEVENT_RING_PAGE_SIZE),
			EPERM, "PROT_WRITE MAP_SHARED at offset 4096 (EPERM before offset)", msg, msglen))
		goto out;
	if (expect_fail(mmap(NULL, KEVENT_RING_PAGE_SIZE, PROT_READ, MAP_SHARED, rw,
			     KEVENT_RING_PAGE_SIZE),
			EINVAL, "offset 4096", msg, msglen))
		goto out;
	if (expect_fail(mmap(NULL, KEVENT_RING_SIZE + KEVENT_RING_PAGE_SIZE, PROT_READ,
			     MAP_SHARED, rw, 0),
			EINVAL, "length of 18 pages", msg, msglen))
		goto out;
	if (expect_fail(mmap(NULL, KEVENT_RING_SIZE + KEVENT_RING_PAGE_SIZE, PROT_READ,
			     MAP_SHARED, rw, KEVENT_RING_PAGE_SIZE),
			EINVAL, "offset 4096 and 18 pages", msg, msglen))
		goto out;
	ret = 0;
out:
	if (rw >= 0)
		close(rw);
	if (ro >= 0)
		close(ro);
	return ret;
}
