// SPDX-License-Identifier: GPL-2.0
/*
 * The mmap shim's decisions, linked into this test with a fake
 * KEVENT_IOC_RING_SHM.  /dev/null stands in for the kevent device: like a
 * CUSE node it is a character device whose mmap fails with ENODEV.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/kevent.h>

int kevent_mmap_check(size_t len, int prot, int flags, off_t off);
int kevent_mmap_is_kevent_fd(int fd);
size_t kevent_mmap_tracked(void);
int kshim_test_ring_shm(int fd, struct kevent_ring_shm *shm);

static char ring_path[64];
static int ring_shm_calls;

int kshim_test_ring_shm(int fd, struct kevent_ring_shm *shm)
{
	ring_shm_calls++;
	shm->size = sizeof(*shm);
	shm->length = KEVENT_RING_SIZE;
	strcpy(shm->path, ring_path);
	return 0;
}

static void setup(void)
{
	int fd;

	snprintf(ring_path, sizeof(ring_path), "/dev/shm/kcuse-shim-%d", (int)getpid());
	fd = open(ring_path, O_CREAT | O_RDWR | O_TRUNC, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(ftruncate(fd, KEVENT_RING_SIZE), 0);
	cr_assert_eq(pwrite(fd, "RING", 4, 0), 4);
	cr_assert_eq(pwrite(fd, "LAST", 4, KEVENT_RING_SIZE - 4), 4);
	close(fd);
	setenv("KEVENT_DEVICE", "/dev/null", 1);
	ring_shm_calls = 0;
}

static void teardown(void)
{
	unlink(ring_path);
}

TestSuite(shim, .init = setup, .fini = teardown);

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	while ((de = readdir(d)))
		n++;
	closedir(d);
	return n;
}

Test(shim, decision_order_matches_d23)
{
	cr_assert_eq(kevent_mmap_check(KEVENT_RING_SIZE, PROT_READ, MAP_SHARED, 0), 0);
	cr_assert_eq(kevent_mmap_check(4096, PROT_READ, MAP_SHARED_VALIDATE, 0), 0);
	cr_assert_eq(kevent_mmap_check(4096, PROT_READ, MAP_PRIVATE, 0), EINVAL);
	/* MAP_PRIVATE is refused before PROT_WRITE is looked at. */
	cr_assert_eq(kevent_mmap_check(4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, 0), EINVAL);
	cr_assert_eq(kevent_mmap_check(4096, PROT_READ | PROT_WRITE, MAP_SHARED, 0), EPERM);
	cr_assert_eq(kevent_mmap_check(4096, PROT_WRITE, MAP_SHARED, 4096), EPERM);
	cr_assert_eq(kevent_mmap_check(4096, PROT_READ, MAP_SHARED, 4096), EINVAL);
	cr_assert_eq(kevent_mmap_check(KEVENT_RING_SIZE + 1, PROT_READ, MAP_SHARED, 0), EINVAL);
}

Test(shim, identifies_by_rdev_only)
{
	int n = open("/dev/null", O_RDWR), z = open("/dev/zero", O_RDWR);
	int f = open(ring_path, O_RDONLY);

	cr_assert(kevent_mmap_is_kevent_fd(n));
	cr_assert_not(kevent_mmap_is_kevent_fd(z));
	cr_assert_not(kevent_mmap_is_kevent_fd(f));
	cr_assert_not(kevent_mmap_is_kevent_fd(-1));
	setenv("KEVENT_DEVICE", "/nonexistent", 1);
	cr_assert_not(kevent_mmap_is_kevent_fd(n));
	close(n);
	close(z);
	close(f);
}

Test(shim, maps_the_ring_and_holds_the_fd)
{
	int fd = open("/dev/null", O_RDWR);
	int before = count_fds();
	const char *p;

	p = mmap(NULL, KEVENT_RING_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	cr_assert_neq(p, MAP_FAILED, "mmap: %s", strerror(errno));
	cr_assert_eq(ring_shm_calls, 1);
	cr_assert_eq(memcmp(p, "RING", 4), 0);
	cr_assert_eq(memcmp(p + KEVENT_RING_SIZE - 4, "LAST", 4), 0);
	cr_assert_eq(count_fds(), before + 1, "one duplicate per mapping");
	cr_assert_eq(kevent_mmap_tracked(), 1);
	close(fd);
	/* The mapping outlives the fd, as a module VMA does. */
	cr_assert_eq(memcmp(p, "RING", 4), 0);
	cr_assert_eq(munmap((void *)p, KEVENT_RING_SIZE), 0);
	cr_assert_eq(count_fds(), before - 1);
	cr_assert_eq(kevent_mmap_tracked(), 0);
}

Test(shim, refusals)
{
	int rw = open("/dev/null", O_RDWR), ro = open("/dev/null", O_RDONLY);

	errno = 0;
	cr_assert_eq(mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, rw, 0), MAP_FAILED);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, rw, 0), MAP_FAILED);
	cr_assert_eq(errno, EPERM);
	/* The kernel answers this one before the driver (or the shim) is asked. */
	cr_assert_eq(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0), MAP_FAILED);
	cr_assert_eq(errno, EACCES);
	cr_assert_eq(mmap(NULL, 4096, PROT_READ, MAP_SHARED, rw, 4096), MAP_FAILED);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(mmap(NULL, KEVENT_RING_SIZE + 4096, PROT_READ, MAP_SHARED, rw, 0), MAP_FAILED);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(ring_shm_calls, 0, "refused before asking the daemon");
	cr_assert_eq(kevent_mmap_tracked(), 0);
	close(rw);
	close(ro);
}

Test(shim, other_fds_pass_through_untouched)
{
	int full = open("/dev/full", O_RDWR), zero = open("/dev/zero", O_RDWR);
	void *p;

	/* Another ENODEV device: the error stays, no ioctl is sent to it. */
	cr_assert_eq(mmap(NULL, 4096, PROT_READ, MAP_SHARED, full, 0), MAP_FAILED);
	cr_assert_eq(errno, ENODEV);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, zero, 0);
	cr_assert_neq(p, MAP_FAILED);
	munmap(p, 4096);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(p, MAP_FAILED);
	munmap(p, 4096);
	cr_assert_eq(ring_shm_calls, 0);
	close(full);
	close(zero);
}

Test(shim, partial_unmaps_keep_the_hold_until_the_last_page)
{
	int fd = open("/dev/null", O_RDWR);
	int before = count_fds();
	char *p = mmap(NULL, KEVENT_RING_SIZE, PROT_READ, MAP_SHARED, fd, 0);

	cr_assert_neq(p, MAP_FAILED);
	close(fd);
	cr_assert_eq(munmap(p, 4096), 0);			/* head */
	cr_assert_eq(count_fds(), before);
	cr_assert_eq(munmap(p + 8 * 4096, 2 * 4096), 0);	/* a hole: split */
	cr_assert_eq(kevent_mmap_tracked(), 2);
	cr_assert_eq(count_fds(), before + 1);
	cr_assert_eq(munmap(p + 4096, 7 * 4096), 0);		/* lower part gone */
	cr_assert_eq(kevent_mmap_tracked(), 1);
	cr_assert_eq(memcmp(p + KEVENT_RING_SIZE - 4, "LAST", 4), 0);
	cr_assert_eq(munmap(p, KEVENT_RING_SIZE), 0);		/* the rest */
	cr_assert_eq(kevent_mmap_tracked(), 0);
	cr_assert_eq(count_fds(), before - 1);
}

Test(shim, fixed_mapping_over_ours_drops_the_hold)
{
	int fd = open("/dev/null", O_RDWR);
	char *p = mmap(NULL, KEVENT_RING_SIZE, PROT_READ, MAP_SHARED, fd, 0), *q;

	cr_assert_neq(p, MAP_FAILED);
	close(fd);
	q = mmap(p, KEVENT_RING_SIZE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	cr_assert_eq(q, p);
	cr_assert_eq(kevent_mmap_tracked(), 0);
	munmap(q, KEVENT_RING_SIZE);
}

/* mremap() as on the module's VM_DONTEXPAND VMA; a move or shrink keeps the hold. */
Test(shim, mremap_follows_the_module_vma)
{
	int fd = open("/dev/null", O_RDWR);
	int before = count_fds();
	char *p = mmap(NULL, KEVENT_RING_SIZE, PROT_READ, MAP_SHARED, fd, 0), *q, *r;

	cr_assert_neq(p, MAP_FAILED);
	close(fd);
	cr_assert_eq(mremap(p, KEVENT_RING_SIZE, 2 * KEVENT_RING_SIZE, MREMAP_MAYMOVE), MAP_FAILED);
	cr_assert_eq(errno, EFAULT, "growing a ring mapping: %s", strerror(errno));
	cr_assert_eq(mremap(p, KEVENT_RING_SIZE, KEVENT_RING_SIZE, MREMAP_MAYMOVE | MREMAP_DONTUNMAP),
		     MAP_FAILED);
	cr_assert_eq(errno, EINVAL, "MREMAP_DONTUNMAP of a ring mapping: %s", strerror(errno));
	cr_assert_eq(kevent_mmap_tracked(), 1);
	/* A move to a fixed place: the hold goes along, no fd gained or lost. */
	q = mmap(NULL, KEVENT_RING_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(q, MAP_FAILED);
	r = mremap(p, KEVENT_RING_SIZE, KEVENT_RING_SIZE, MREMAP_MAYMOVE | MREMAP_FIXED, q);
	cr_assert_eq(r, q, "move: %s", strerror(errno));
	cr_assert_eq(kevent_mmap_tracked(), 1);
	cr_assert_eq(count_fds(), before);
	cr_assert_eq(memcmp(q, "RING", 4), 0);
	/* A shrink in place keeps the first page and the hold. */
	cr_assert_eq(mremap(q, KEVENT_RING_SIZE, 4096, 0), q);
	cr_assert_eq(kevent_mmap_tracked(), 1);
	cr_assert_eq(memcmp(q, "RING", 4), 0);
	cr_assert_eq(munmap(q, 4096), 0);
	cr_assert_eq(kevent_mmap_tracked(), 0);
	cr_assert_eq(count_fds(), before - 1, "the hold was not dropped with the last page");
}
