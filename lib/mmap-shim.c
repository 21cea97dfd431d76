// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libkevent-mmap.so: LD_PRELOAD shim that makes mmap() of a CUSE
 * /dev/kevent map the queue's ring (design.md section 4 and B6).
 *
 * CUSE has no mmap: the kernel answers ENODEV after its own checks (the
 * EACCES of a writable shared mapping of an O_RDONLY fd comes first, as
 * with the module).  Only then, and only for a character device whose
 * st_rdev is the kevent device's, the shim asks the daemon where the ring
 * is (KEVENT_IOC_RING_SHM), applies the module's refusals (A10, D23) and
 * maps the shared-memory object instead.  Every other mmap() passes
 * through untouched; no ioctl is ever sent to any other fd.
 *
 * Each mapping keeps a duplicate of the kevent fd, closed when the last
 * byte of it is unmapped, so the queue lives as long as the mapping, as a
 * module VMA holds its file.  mremap() follows the module's VM_DONTEXPAND
 * VMA: growing a ring mapping fails EFAULT, MREMAP_DONTUNMAP EINVAL; a
 * move or a shrink carries the hold along.
 *
 * LOCKING: kshim_lock guards the mapping table.  It is never held across a
 * call into the kernel that can block on the daemon (the ioctl, close()).
 */
/*
 * Both symbols are defined here; with 64-bit offsets glibc would turn the
 * definition of mmap() into a second mmap64().
 */
#undef _FILE_OFFSET_BITS

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4	/* Linux 5.7 */
#endif
#include <linux/kevent.h>

#define KSHIM_EXPORT __attribute__((visibility("default")))
#define KSHIM_DEVICE_DEFAULT "/dev/kevent"

/* Also exported for tests and tools (see mmap-shim.sym). */
KSHIM_EXPORT int kevent_mmap_check(size_t len, int prot, int flags, off_t off);
KSHIM_EXPORT int kevent_mmap_is_kevent_fd(int fd);
KSHIM_EXPORT size_t kevent_mmap_tracked(void);

struct kshim_map {
	uintptr_t start, end;		/* page-rounded */
	int dupfd;			/* keeps the queue alive */
};

static pthread_mutex_t kshim_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kshim_map *kshim_maps;
static size_t kshim_nmaps, kshim_cap;
static size_t kshim_live;		/* nmaps, readable without the lock */

static uintptr_t kshim_round(uintptr_t start, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

	return start + ((len + page - 1) & ~(page - 1));
}

typedef void *(*kshim_mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*kshim_munmap_fn)(void *, size_t);

static void *kshim_real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static kshim_mmap_fn fn;

	if (!fn)
		fn = (kshim_mmap_fn)dlsym(RTLD_NEXT, "mmap");
	if (fn)
		return fn(addr, len, prot, flags, fd, off);
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static int kshim_real_munmap(void *addr, size_t len)
{
	static kshim_munmap_fn fn;

	if (!fn)
		fn = (kshim_munmap_fn)dlsym(RTLD_NEXT, "munmap");
	if (fn)
		return fn(addr, len);
	return (int)syscall(SYS_munmap, addr, len);
}

/*
 * What the module answers for this request, in the order of docs/abi.md
 * D23 after the kernel's own EACCES: 0 to map.
 */
KSHIM_EXPORT int kevent_mmap_check(size_t len, int prot, int flags, off_t off)
{
	int type = flags & MAP_TYPE;

	if (type != MAP_SHARED && type != MAP_SHARED_VALIDATE)
		return EINVAL;
	if (prot & PROT_WRITE)
		return EPERM;
	if (off != 0)
		return EINVAL;
	if (len == 0 || len > KEVENT_RING_SIZE)
		return EINVAL;
	return 0;
}

/* 1 when fd is the kevent character device (compared by st_rdev only). */
KSHIM_EXPORT int kevent_mmap_is_kevent_fd(int fd)
{
	const char *dev = getenv("KEVENT_DEVICE");
	struct stat fst, dst;

	if (!dev || !*dev)
		dev = KSHIM_DEVICE_DEFAULT;
	if (fstat(fd, &fst) || !S_ISCHR(fst.st_mode))
		return 0;
	if (stat(dev, &dst) || !S_ISCHR(dst.st_mode))
		return 0;
	return fst.st_rdev == dst.st_rdev;
}

#ifdef KEVENT_MMAP_SHIM_TEST
int kshim_test_ring_shm(int fd, struct kevent_ring_shm *shm);
#define kshim_ring_shm kshim_test_ring_shm
#else
static int kshim_ring_shm(int fd, struct kevent_ring_shm *shm)
{
	return ioctl(fd, KEVENT_IOC_RING_SHM, shm);
}
#endif

/* Track [start, end) owned by dupfd; -1 with errno on failure. */
static int kshim_track(uintptr_t start, uintptr_t end, int dupfd)
{
	int ret = 0;

	pthread_mutex_lock(&kshim_lock);
	if (kshim_nmaps == kshim_cap) {
		size_t cap = kshim_cap ? 2 * kshim_cap : 16;
		struct kshim_map *m = realloc(kshim_maps, cap * sizeof(*m));

		if (!m) {
			ret = -1;
			goto out;
		}
		kshim_maps = m;
		kshim_cap = cap;
	}
	kshim_maps[kshim_nmaps++] = (struct kshim_map){ start, end, dupfd };
	__atomic_store_n(&kshim_live, kshim_nmaps, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&kshim_lock);
	if (ret)
		errno = ENOMEM;
	return ret;
}

/*
 * [start, end) is no longer mapped: trim, split or drop the entries it
 * covers.  The fds to close are collected and closed after the unlock
 * (a close can be the queue's release and wait on the daemon).
 */
static void kshim_forget(uintptr_t start, uintptr_t end)
{
	int closing[64], nclose = 0;

	if (!__atomic_load_n(&kshim_live, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&kshim_lock);
	for (size_t i = 0; i < kshim_nmaps && nclose < 64; i++) {
		struct kshim_map *m = &kshim_maps[i];

		if (end <= m->start || start >= m->end)
			continue;
		if (start <= m->start && end >= m->end) {
			closing[nclose++] = m->dupfd;
			kshim_maps[i--] = kshim_maps[--kshim_nmaps];
		} else if (start <= m->start) {
			m->start = end;
		} else if (end >= m->end) {
			m->end = start;
		} else {
			/* A hole in the middle: the upper part gets its own duplicate. */
			int fd = fcntl(m->dupfd, F_DUPFD_CLOEXEC, 0);
			uintptr_t old_end = m->end;

			m->end = start;
			if (fd >= 0 && kshim_nmaps < kshim_cap)
				kshim_maps[kshim_nmaps++] = (struct kshim_map){ end, old_end, fd };
			else if (fd >= 0)
				closing[nclose++] = fd;	/* table full: lose the upper part's hold */
		}
	}
	__atomic_store_n(&kshim_live, kshim_nmaps, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&kshim_lock);
	for (int i = 0; i < nclose; i++)
		close(closing[i]);
}

static int kshim_open_ring(int fd)
{
	struct kevent_ring_shm shm;

	memset(&shm, 0, sizeof(shm));
	if (kshim_ring_shm(fd, &shm) < 0)
		return -1;
	if (shm.length != KEVENT_RING_SIZE || !memchr(shm.path, '\0', sizeof(shm.path))) {
		errno = ENODEV;
		return -1;
	}
	return open(shm.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
}

static void *kshim_map_ring(void *addr, size_t len, int prot, int flags, int fd)
{
	int sfd, dupfd, saved;
	void *p;

	sfd = kshim_open_ring(fd);
	if (sfd < 0)
		return MAP_FAILED;
	dupfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dupfd < 0) {
		saved = errno;
		close(sfd);
		errno = saved;
		return MAP_FAILED;
	}
	p = kshim_real_mmap(addr, len, prot, flags, sfd, 0);
	saved = errno;
	close(sfd);
	if (p == MAP_FAILED) {
		close(dupfd);
		errno = saved;
		return MAP_FAILED;
	}
	if (flags & MAP_FIXED)
		kshim_forget((uintptr_t)p, kshim_round((uintptr_t)p, len));
	if (kshim_track((uintptr_t)p, kshim_round((uintptr_t)p, len), dupfd)) {
		kshim_real_munmap(p, len);
		close(dupfd);
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return p;
}

static void *kshim_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p = kshim_real_mmap(addr, len, prot, flags, fd, off);
	int err;

	if (p != MAP_FAILED) {
		/* A fixed mapping may have replaced one of ours. */
		if ((flags & MAP_FIXED) && !(flags & MAP_FIXED_NOREPLACE))
			kshim_forget((uintptr_t)p, kshim_round((uintptr_t)p, len));
		return p;
	}
	if (errno != ENODEV || fd < 0)
		return MAP_FAILED;
	if (!kevent_mmap_is_kevent_fd(fd)) {
		errno = ENODEV;		/* fstat/stat may have changed it */
		return MAP_FAILED;
	}
	err = kevent_mmap_check(len, prot, flags, off);
	if (err) {
		errno = err;
		return MAP_FAILED;
	}
	return kshim_map_ring(addr, len, prot, flags, fd);
}

KSHIM_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return kshim_mmap(addr, len, prot, flags, fd, off);
}

KSHIM_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	return kshim_mmap(addr, len, prot, flags, fd, off);
}

KSHIM_EXPORT int munmap(void *addr, size_t len)
{
	int ret = kshim_real_munmap(addr, len);

	if (ret == 0)
		kshim_forget((uintptr_t)addr, kshim_round((uintptr_t)addr, len));
	return ret;
}

/* Whether [start, end) overlaps a mapping of ours; its dupfd in *dupfd. */
static int kshim_overlaps(uintptr_t start, uintptr_t end, int *dupfd)
{
	int found = 0;

	if (!__atomic_load_n(&kshim_live, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&kshim_lock);
	for (size_t i = 0; i < kshim_nmaps && !found; i++) {
		if (end > kshim_maps[i].start && start < kshim_maps[i].end) {
			*dupfd = kshim_maps[i].dupfd;
			found = 1;
		}
	}
	pthread_mutex_unlock(&kshim_lock);
	return found;
}

KSHIM_EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	uintptr_t start = (uintptr_t)old, end = kshim_round(start, old_len);
	void *want = NULL, *p;
	int dupfd, hold = -1;

	if (flags & MREMAP_FIXED) {
		va_list ap;

		va_start(ap, flags);
		want = va_arg(ap, void *);
		va_end(ap);
	}
	if (kshim_overlaps(start, end, &dupfd)) {
		/* What the kernel answers for a VM_DONTEXPAND VMA (vma_to_resize). */
		if (flags & MREMAP_DONTUNMAP) {
			errno = EINVAL;
			return MAP_FAILED;
		}
		if (new_len > old_len) {
			errno = EFAULT;
			return MAP_FAILED;
		}
		hold = fcntl(dupfd, F_DUPFD_CLOEXEC, 0);	/* for the moved part */
		if (hold < 0)
			return MAP_FAILED;
	}
	p = (void *)syscall(SYS_mremap, old, old_len, new_len, flags, want);
	if (p == MAP_FAILED) {
		int saved = errno;

		if (hold >= 0)
			close(hold);
		errno = saved;
		return MAP_FAILED;
	}
	/* The old range is gone and the new one replaced whatever was there. */
	kshim_forget(start, end);
	kshim_forget((uintptr_t)p, kshim_round((uintptr_t)p, new_len));
	if (hold >= 0 && kshim_track((uintptr_t)p, kshim_round((uintptr_t)p, new_len), hold))
		close(hold);	/* the table is full: the moved part holds nothing */
	return p;
}

/* For tests: mappings the shim holds a duplicate for. */
KSHIM_EXPORT size_t kevent_mmap_tracked(void)
{
	return __atomic_load_n(&kshim_live, __ATOMIC_ACQUIRE);
}
