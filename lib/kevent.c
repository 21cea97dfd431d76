// SPDX-License-Identifier: LGPL-2.1-or-later
/* libkevent: the 2006 system calls and the ring helpers; see libkevent.h. */
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "libkevent.h"

/*
 * The 2006 call needs nothing past the VER0 wrapper, so it sends that size:
 * a 2006 program rebuilt against this library moves what it always moved,
 * and on the CUSE retry path, where the wrapper shares the transfer with
 * the events, keeps the batch INFO's max_get_nr reports (D12).
 */
#define KEVENT_IOC_GET_EVENTS_VER0                                                      \
	_IOC(_IOC_WRITE, KEVENT_IOC_MAGIC, KEVENT_IOC_NR_GET_EVENTS,                     \
	     KEVENT_GET_EVENTS_ARG_SIZE_VER0)

int kevent_ctl(int fd, unsigned int cmd, unsigned int num, void *arg)
{
	struct kevent_ctl_arg a = {
		.cmd = cmd,
		.num = num,
		.events = (__u64)(uintptr_t)arg,
	};

	return ioctl(fd, KEVENT_IOC_CTL, &a);
}

int kevent_get_events(int fd, unsigned int min_nr, unsigned int max_nr,
		      __u64 timeout_ns, void *buf, unsigned int flags)
{
	struct kevent_get_events_arg a = {
		.min_nr = min_nr,
		.max_nr = max_nr,
		.timeout_ns = timeout_ns,
		.events = (__u64)(uintptr_t)buf,
		.flags = flags,
	};
	/* A CUSE daemon sees only the open flags; fcntl changes reach it here. */
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	if (fl & O_NONBLOCK)
		a.ioc_flags |= KEVENT_GET_NONBLOCK;
	return ioctl(fd, KEVENT_IOC_GET_EVENTS_VER0, &a);
}

int kevent_info(int fd, struct kevent_info *info)
{
	memset(info, 0, sizeof(*info));
	return ioctl(fd, KEVENT_IOC_INFO, info) < 0 ? -1 : 0;
}

int kevent_set_abi(int fd, unsigned int revision, unsigned int flags)
{
	struct kevent_set_abi a = { .revision = revision, .flags = flags };

	return ioctl(fd, KEVENT_IOC_SET_ABI, &a) < 0 ? -1 : 0;
}

static void *ring_map_shm(int fd)
{
	struct kevent_ring_shm shm;
	void *p;
	int sfd, saved;

	memset(&shm, 0, sizeof(shm));
	if (ioctl(fd, KEVENT_IOC_RING_SHM, &shm) < 0)
		return MAP_FAILED;
	if (shm.length != KEVENT_RING_SIZE || !memchr(shm.path, '\0', sizeof(shm.path))) {
		errno = EPROTO;
		return MAP_FAILED;
	}
	sfd = open(shm.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (sfd < 0)
		return MAP_FAILED;
	p = mmap(NULL, KEVENT_RING_SIZE, PROT_READ, MAP_SHARED, sfd, 0);
	saved = errno;
	close(sfd);
	errno = saved;
	return p;
}

int kevent_ring_map(int fd, struct kevent_ring *ring)
{
	void *p = mmap(NULL, KEVENT_RING_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	int via_shm = 0;

	/* CUSE cannot mmap (ENODEV); the daemon exports the ring instead. */
	if (p == MAP_FAILED && errno == ENODEV) {
		p = ring_map_shm(fd);
		via_shm = 1;
	}
	if (p == MAP_FAILED)
		return -1;
	ring->base = p;
	ring->length = KEVENT_RING_SIZE;
	ring->via_shm = via_shm;
	ring->next = kevent_ring_index(ring);
	return 0;
}

int kevent_ring_unmap(struct kevent_ring *ring)
{
	int ret = munmap((void *)ring->base, ring->length);

	ring->base = NULL;
	ring->length = 0;
	return ret;
}

unsigned int kevent_ring_index(const struct kevent_ring *ring)
{
	const struct kevent_mring *page0 = (const struct kevent_mring *)ring->base;

	return __atomic_load_n(&page0->index, __ATOMIC_ACQUIRE) % KEVENT_MAX_EVENTS;
}

const struct mukevent *kevent_ring_slot(const struct kevent_ring *ring, unsigned int s)
{
	if (s >= KEVENT_MAX_EVENTS)
		return NULL;
	return (const struct mukevent *)(ring->base + KEVENT_RING_SLOT_OFFSET(s));
}

unsigned int kevent_ring_read(struct kevent_ring *ring, struct mukevent *out, unsigned int max)
{
	unsigned int idx = kevent_ring_index(ring), n = 0;

	while (ring->next != idx && n < max) {
		memcpy(&out[n++], kevent_ring_slot(ring, ring->next), sizeof(*out));
		ring->next = (ring->next + 1) % KEVENT_MAX_EVENTS;
	}
	return n;
}

/* ---- revision 2 (KEVENT_0.2) ---- */

int kevent_init(struct kevent_uring *ring, unsigned int num, unsigned int flags)
{
	const char *dev = getenv("KEVENT_DEVICE");
	struct kevent_ring_init ri = { .ring = (__u64)(uintptr_t)ring, .num = num };
	int fd, saved;

	fd = open(dev && *dev ? dev : KEVENT_DEVICE_DEFAULT, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (kevent_set_abi(fd, 2, flags) < 0 || ioctl(fd, KEVENT_IOC_RING_INIT, &ri) < 0) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

int kevent_commit(int fd, unsigned int new_uidx, unsigned int over)
{
	struct kevent_commit_arg a = { .new_uidx = new_uidx, .over = over };

	return ioctl(fd, KEVENT_IOC_COMMIT, &a);
}

/* ---- revision 3 (KEVENT_0.3) ---- */

static int open_device(void)
{
	const char *dev = getenv("KEVENT_DEVICE");

	return open(dev && *dev ? dev : KEVENT_DEVICE_DEFAULT, O_RDWR | O_CLOEXEC);
}

int kevent_open(unsigned int revision, unsigned int abi_flags)
{
	int fd = open_device(), saved;

	if (fd < 0)
		return -1;
	if (kevent_set_abi(fd, revision, abi_flags) < 0) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

int kevent_ctl_ext(int fd, unsigned int cmd, unsigned int num, struct ukevent_ext *arr)
{
	struct kevent_ctl_ext_arg a = {
		.cmd = cmd,
		.num = num,
		.events = (__u64)(uintptr_t)arr,
		.ioc_flags = KEVENT_CTL_EXT,
	};

	return ioctl(fd, KEVENT_IOC_CTL_EXT, &a);
}

/* A CUSE daemon sees only the open flags; fcntl changes reach it here (A11). */
static int nonblock_flag(int fd, __u32 *ioc_flags)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	if (fl & O_NONBLOCK)
		*ioc_flags |= KEVENT_GET_NONBLOCK;
	return 0;
}

/* D48: one 64-bit layout; a negative or oversized field is the backend's EINVAL. */
static struct kevent_timespec kts(long long sec, long nsec)
{
	struct kevent_timespec t = { .tv_sec = sec, .tv_nsec = (__u32)nsec };

	if (nsec < 0 || (unsigned long)nsec > 0xffffffffUL)
		t.tv_nsec = 0xffffffffu;
	return t;
}

static int wait_kts(int fd, unsigned int num, unsigned int old_uidx, struct kevent_timespec t,
		    unsigned int flags)
{
	struct kevent_wait_arg a = {
		.num = num, .old_uidx = old_uidx, .timeout = t, .flags = flags,
	};

	if (nonblock_flag(fd, &a.ioc_flags))
		return -1;
	return ioctl(fd, KEVENT_IOC_WAIT, &a);
}

static int get_kts(int fd, unsigned int min_nr, unsigned int max_nr, struct kevent_timespec t,
		   void *buf, unsigned int flags)
{
	struct kevent_get_events_arg a = {
		.min_nr = min_nr, .max_nr = max_nr, .events = (__u64)(uintptr_t)buf,
		.flags = flags, .ioc_flags = KEVENT_GET_TIMESPEC, .timeout_ts = t,
	};

	if (nonblock_flag(fd, &a.ioc_flags))
		return -1;
	return ioctl(fd, KEVENT_IOC_GET_EVENTS, &a);
}

/* The C library's struct timespec, whatever its time_t (the default names). */
int kevent_wait(int fd, unsigned int num, unsigned int old_uidx, struct timespec timeout,
		unsigned int flags)
{
	return wait_kts(fd, num, old_uidx, kts(timeout.tv_sec, timeout.tv_nsec), flags);
}

int kevent_get_events_ts(int fd, unsigned int min_nr, unsigned int max_nr,
			 struct timespec timeout, void *buf, unsigned int flags)
{
	return get_kts(fd, min_nr, max_nr, kts(timeout.tv_sec, timeout.tv_nsec), buf, flags);
}

/*
 * D56: the _TIME_BITS=64 entry points of a 32-bit build take glibc's 64-bit
 * timespec ({ long long tv_sec; long tv_nsec; padding }); on 64-bit ABIs
 * they are the same as the default ones.
 */
struct kevent_ts64 {
	long long tv_sec;
	long tv_nsec;
};

int kevent_wait_time64(int fd, unsigned int num, unsigned int old_uidx,
		       struct kevent_ts64 timeout, unsigned int flags);
int kevent_wait_time64(int fd, unsigned int num, unsigned int old_uidx,
		       struct kevent_ts64 timeout, unsigned int flags)
{
	return wait_kts(fd, num, old_uidx, kts(timeout.tv_sec, timeout.tv_nsec), flags);
}

int kevent_get_events_ts_time64(int fd, unsigned int min_nr, unsigned int max_nr,
				struct kevent_ts64 timeout, void *buf, unsigned int flags);
int kevent_get_events_ts_time64(int fd, unsigned int min_nr, unsigned int max_nr,
				struct kevent_ts64 timeout, void *buf, unsigned int flags)
{
	return get_kts(fd, min_nr, max_nr, kts(timeout.tv_sec, timeout.tv_nsec), buf, flags);
}
