// SPDX-License-Identifier: GPL-2.0
/*
 * What only the fuse backend does: the file DIR/kevent of `kevent-cuse
 * --fuse DIR` (abi.md 7.7 and section 9, fuse rows).  Run by
 * tests/fuse/native.py against the daemon it started (KEVENT_DEVICE);
 * every test skips on another backend.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/kevent.h>

static const char *device(void)
{
	const char *d = getenv("KEVENT_DEVICE");

	return d && *d ? d : "/dev/kevent";
}

/* An open queue of the fuse backend, or the test skips. */
static int fuse_open(int flags)
{
	struct kevent_info info;
	int fd = open(device(), flags | O_CLOEXEC);

	if (fd < 0)
		cr_skip_test("%s: %s", device(), strerror(errno));
	memset(&info, 0, sizeof(info));
	cr_assert_eq(ioctl(fd, KEVENT_IOC_INFO, &info), 0, "INFO: %s", strerror(errno));
	if (info.backend != KEVENT_BACKEND_FUSE) {
		close(fd);
		cr_skip_test("fuse only (INFO backend %u)", info.backend);
	}
	return fd;
}

Test(fuse, info_reports_the_fuse_backend)
{
	int fd = fuse_open(O_RDWR);
	struct kevent_info info;

	memset(&info, 0, sizeof(info));
	cr_assert_eq(ioctl(fd, KEVENT_IOC_INFO, &info), 0);
	cr_assert_eq(info.backend, (__u32)KEVENT_BACKEND_FUSE);
	/* This increment: the ring is the RING_SHM object, arrays by process memory. */
	cr_assert(info.features & KEVENT_FEAT_RING_SHM, "features %#x", info.features);
	cr_assert(info.features & KEVENT_FEAT_PROCESS_VM, "features %#x", info.features);
	cr_assert_not(info.features & (KEVENT_FEAT_RING_MMAP | KEVENT_FEAT_RETRY_PATH),
		      "no raw mmap and no retry rounds on a FUSE file: features %#x", info.features);
	cr_assert_eq(info.max_ctl_num, 4095u);
	close(fd);
}

/* A fresh node per lookup: each open(2) of the path is its own inode. */
Test(fuse, every_open_is_its_own_inode)
{
	int a = fuse_open(O_RDWR), b = fuse_open(O_RDWR);
	struct stat sa, sb;

	cr_assert_eq(fstat(a, &sa), 0);
	cr_assert_eq(fstat(b, &sb), 0);
	cr_assert_eq(sa.st_dev, sb.st_dev);
	cr_assert_neq(sa.st_ino, sb.st_ino, "two opens share inode %lu", (unsigned long)sa.st_ino);
	cr_assert(S_ISREG(sa.st_mode), "mode %o", sa.st_mode);
	close(a);
	close(b);
}

/* abi.md 7.7: no second queue on a node with a live one (one page cache). */
Test(fuse, reopen_of_a_live_node_is_ebusy)
{
	int fd = fuse_open(O_RDWR), again;
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	again = open(path, O_RDWR | O_CLOEXEC);
	cr_assert_eq(again, -1, "a reopen through %s opened a second queue", path);
	cr_assert_eq(errno, EBUSY, "reopen: %s", strerror(errno));
	close(fd);
}

/* direct_io: no page cache, so mmap fails as on CUSE (RING_SHM is the ring). */
Test(fuse, raw_mmap_is_enodev)
{
	int fd = fuse_open(O_RDWR);
	void *p = mmap(NULL, KEVENT_RING_SIZE, PROT_READ, MAP_SHARED, fd, 0);

	cr_assert(p == MAP_FAILED, "mmap() of the FUSE file succeeded");
	cr_assert_eq(errno, ENODEV, "mmap: %s", strerror(errno));
	close(fd);
}

Test(fuse, read_and_write_are_einval)
{
	int fd = fuse_open(O_RDWR);
	char buf[16] = "";

	cr_assert_eq(read(fd, buf, sizeof(buf)), -1);
	cr_assert_eq(errno, EINVAL, "read: %s", strerror(errno));
	cr_assert_eq(write(fd, buf, sizeof(buf)), -1);
	cr_assert_eq(errno, EINVAL, "write: %s", strerror(errno));
	close(fd);
}

/* The file never changes: setattr is refused. */
Test(fuse, truncate_and_chmod_are_eperm)
{
	int fd = fuse_open(O_RDWR);

	cr_assert_eq(ftruncate(fd, 0), -1);
	cr_assert_eq(errno, EPERM, "ftruncate: %s", strerror(errno));
	cr_assert_eq(chmod(device(), 0600), -1);
	cr_assert_eq(errno, EPERM, "chmod: %s", strerror(errno));
	close(fd);
}

/*
 * abi.md section 9: a restricted FUSE ioctl copies _IOC_SIZE bytes before
 * the daemon sees the number, so a size above KEVENT_IOC_ARG_MAX over a
 * short buffer is EFAULT (CUSE answers E2BIG from the number alone).
 */
Test(fuse, short_buffer_past_arg_max_is_efault)
{
	int fd = fuse_open(O_RDWR);
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0);
	unsigned int big = _IOC(_IOC_WRITE, KEVENT_IOC_MAGIC, KEVENT_IOC_NR_GET_EVENTS,
				KEVENT_IOC_ARG_MAX + 1024);
	unsigned char *arg;

	cr_assert(m != MAP_FAILED);
	cr_assert_eq(mprotect(m + pg, pg, PROT_NONE), 0);
	arg = m + pg - KEVENT_GET_EVENTS_ARG_SIZE_VER0;
	memset(arg, 0, KEVENT_GET_EVENTS_ARG_SIZE_VER0);
	cr_assert_eq(ioctl(fd, big, arg), -1);
	cr_assert_eq(errno, EFAULT, "short buffer, size %u: %s", _IOC_SIZE(big), strerror(errno));
	/* The same number over a readable, zeroed buffer: the daemon's E2BIG. */
	arg = calloc(1, _IOC_SIZE(big));
	cr_assert_eq(ioctl(fd, big, arg), -1);
	cr_assert_eq(errno, E2BIG, "readable buffer: %s", strerror(errno));
	free(arg);
	munmap(m, 2 * pg);
	close(fd);
}
