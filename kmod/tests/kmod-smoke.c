// SPDX-License-Identifier: GPL-2.0
/*
 * kmod-smoke: a small, self-contained smoke test of /dev/kevent for the
 * kernel module (KEVENT_DEVICE overrides the path).  It talks raw ioctls so
 * it depends on nothing but the uapi header; the client suite in
 * client-tests/ is the real conformance test.  What this adds to it, and
 * why every guest boot runs it on the module (tests/vm/meson.build,
 * --extra): four threads hammering CTL, GET_EVENTS and poll while the fd is
 * closed (stress), queues closed with 1 ms timers and ready kevents live
 * (teardown_under_fire), a read-only GET_EVENTS buffer (readonly_output,
 * D10/O7), /dev/cuse refused (B3) and, built -m32 as kmod-smoke32, a
 * GET_EVENTS address above 4 GiB (compat_high_address, D28).  Revision 2:
 * many events through a small kevent_uring in rounds, exactly once
 * (rev2_ring_rounds); a ring page made read-only mid-way, the events
 * requeued and counted (rev2_ring_fault, D41); KEVENT_ABI_EINTR with an
 * SA_RESTART handler, so -ERESTARTSYS would show as a restart
 * (rev2_eintr_not_restarted, D47); an ABSTIME CLOCK_REALTIME deadline
 * reached by setting the clock (rev2_abstime_clock_set, D48); and, -m32,
 * a ring address above 4 GiB (rev2_compat_ring); and one check per other
 * revision-2 rule, so the module is covered before the client suite has
 * them (rev2_ready, rev2_ready_wake_latch, rev2_level, rev2_always_queue,
 * rev2_enosys_rdhup, rev2_timespec, rev2_commit_refusals).  Revision 3:
 * the CTL_EXT and per-entry refusals and whole-entry compaction
 * (rev3_refusals), the POSIX timer's grid count bounded by the clock
 * readings around ADD and GET_EVENTS (rev3_ptimer_count), QUERY, re-arm
 * and disarm (rev3_ptimer_modify_query), an absolute expiry already past
 * (rev3_ptimer_abs_past), clock_settime moving an ABSTIME realtime grid
 * but not a relative one (rev3_ptimer_clock_set), and user events merged,
 * cleared, triggered from a child, matched by type (rev3_user).  Off the
 * module it exits 77: the client suite covers the daemon.
 *
 * Prints one "PASS|FAIL|SKIP <name> [reason]" line per test, then
 * "N passed, N failed, N skipped"; exit 0 only when nothing failed.
 * "kmod-smoke bench" prints the per-ioctl cost and the GET_EVENTS batch-64
 * drain rate instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <pthread.h>
#include <linux/kevent.h>

static const char *dev;
static int npass, nfail, nskip;
static char why[256];
static struct kevent_info info0;

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			snprintf(why, sizeof(why), __VA_ARGS__);	\
			return -1;					\
		}							\
	} while (0)

#define SKIP(...)							\
	do {								\
		snprintf(why, sizeof(why), __VA_ARGS__);		\
		return 1;						\
	} while (0)

static int kopen(void)
{
	int fd = open(dev, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "open %s: %s\n", dev, strerror(errno));
		exit(2);
	}
	return fd;
}

static int ctl(int fd, unsigned int cmd, unsigned int num, struct ukevent *uk)
{
	struct kevent_ctl_arg a = { .cmd = cmd, .num = num,
				    .events = (uintptr_t)uk };
	int ret = ioctl(fd, KEVENT_IOC_CTL, &a);

	return ret < 0 ? -errno : ret;
}

static int getev(int fd, unsigned int min, unsigned int max, uint64_t ns,
		 struct ukevent *buf, unsigned int ioc_flags)
{
	struct kevent_get_events_arg a = { .min_nr = min, .max_nr = max,
					   .timeout_ns = ns,
					   .events = (uintptr_t)buf,
					   .ioc_flags = ioc_flags };
	int ret = ioctl(fd, KEVENT_IOC_GET_EVENTS, &a);

	return ret < 0 ? -errno : ret;
}

static int kinfo(int fd, struct kevent_info *info)
{
	memset(info, 0, sizeof(*info));
	return ioctl(fd, KEVENT_IOC_INFO, info) < 0 ? -errno : 0;
}

static struct ukevent mk(unsigned int type, uint32_t id0, uint32_t event,
			 uint32_t req, uint32_t cookie)
{
	struct ukevent uk;

	memset(&uk, 0, sizeof(uk));
	uk.id.raw[0] = id0;
	uk.type = type;
	uk.event = event;
	uk.req_flags = req;
	uk.user[0] = cookie;
	uk.user[1] = ~cookie;
	return uk;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* ------------------------------------------------------------------ */

static int t_info(void)
{
	struct kevent_info i;
	int fd = kopen();

	CHECK(kinfo(fd, &i) == 0, "INFO: %s", strerror(errno));
	close(fd);
	CHECK(i.size == KEVENT_INFO_SIZE_VER2, "size %u", i.size);
	CHECK(i.abi_revision == 3 && i.abi_lowest == 1,
	      "revisions %u..%u: the module serves 1 to 3", i.abi_lowest, i.abi_revision);
	CHECK(!(i.supported_types & (3u << KEVENT_POSIX_TIMER)) &&
	      !(i.features & (KEVENT_FEAT_POSIX_TIMER | KEVENT_FEAT_USER)),
	      "revision-3 types %#x or features %#x on a revision-1 queue (D64)",
	      i.supported_types, i.features);
	CHECK(i.features & KEVENT_FEAT_URING, "no KEVENT_FEAT_URING");
	CHECK(i.queue_revision == 1, "a new queue is revision %u", i.queue_revision);
	CHECK(i.ukevent_size == 40 && i.mukevent_size == 16, "record sizes");
	CHECK(i.ring_page_size == KEVENT_RING_PAGE_SIZE &&
	      i.ring_slots_per_page == KEVENTS_ON_PAGE &&
	      i.ring_pages == KEVENT_RING_PAGES &&
	      i.ring_slots == KEVENT_MAX_EVENTS, "ring geometry");
	CHECK(i.max_kevents == 4095, "max_kevents %u", i.max_kevents);
	CHECK(i.supported_types & (1u << KEVENT_TIMER), "no timer type");
	CHECK(i.supported_types & (1u << KEVENT_POLL), "no poll type");
	if (i.backend == KEVENT_BACKEND_MODULE)
		CHECK((i.features & (KEVENT_FEAT_RING_MMAP | KEVENT_FEAT_FD_ORIGINS)) ==
		      (KEVENT_FEAT_RING_MMAP | KEVENT_FEAT_FD_ORIGINS) &&
		      !(i.features & KEVENT_FEAT_RING_SHM), "features %#x", i.features);
	return 0;
}

static int t_dispatch(void)
{
	int fd = kopen();
	char big[KEVENT_IOC_ARG_MAX + 8];
	struct kevent_ring_shm shm;
	char c = 0;

	memset(big, 0, sizeof(big));
	errno = 0;
	if (info0.backend == KEVENT_BACKEND_MODULE)
		CHECK(ioctl(fd, KEVENT_IOC_RING_SHM, &shm) < 0 && errno == ENOTTY,
		      "RING_SHM: %s", strerror(errno));
	CHECK(ioctl(fd, _IOW(KEVENT_IOC_MAGIC, 0x3f, struct kevent_ctl_arg), big) < 0 &&
	      errno == ENOTTY, "unknown nr: %s", strerror(errno));
	CHECK(ioctl(fd, _IOW('x', KEVENT_IOC_NR_CTL, struct kevent_ctl_arg), big) < 0 &&
	      errno == ENOTTY, "other magic: %s", strerror(errno));
	/* D24 sizes */
	CHECK(ioctl(fd, _IOC(_IOC_WRITE, KEVENT_IOC_MAGIC, KEVENT_IOC_NR_CTL, 8), big) < 0 &&
	      errno == EINVAL, "short CTL: %s", strerror(errno));
	CHECK(ioctl(fd, _IOC(_IOC_WRITE, KEVENT_IOC_MAGIC, KEVENT_IOC_NR_CTL, 24), big) == 0,
	      "zero tail CTL (num 0): %s", strerror(errno));
	/* D60: the 24-byte CTL is KEVENT_IOC_CTL_EXT; __pad != 0 is EINVAL. */
	big[20] = 1;
	CHECK(ioctl(fd, _IOC(_IOC_WRITE, KEVENT_IOC_MAGIC, KEVENT_IOC_NR_CTL, 24), big) < 0 &&
	      errno == EINVAL, "CTL_EXT __pad: %s", strerror(errno));
	big[20] = 0;
	big[28] = 1;
	CHECK(ioctl(fd, _IOC(_IOC_WRITE, KEVENT_IOC_MAGIC, KEVENT_IOC_NR_CTL, 32), big) < 0 &&
	      errno == E2BIG, "dirty tail CTL: %s", strerror(errno));
	big[28] = 0;
	CHECK(ioctl(fd, _IOC(_IOC_WRITE, KEVENT_IOC_MAGIC, KEVENT_IOC_NR_CTL,
			     KEVENT_IOC_ARG_MAX + 8), big) < 0 && errno == E2BIG,
	      "huge CTL: %s", strerror(errno));
	CHECK(ioctl(fd, _IOC(_IOC_READ, KEVENT_IOC_MAGIC, KEVENT_IOC_NR_INFO, 200), big) == 0 &&
	      ((struct kevent_info *)big)->size == KEVENT_INFO_SIZE_VER2,
	      "bigger INFO: %s", strerror(errno));
	/* D15 */
	CHECK(read(fd, &c, 1) < 0 && errno == EINVAL, "read: %s", strerror(errno));
	CHECK(write(fd, &c, 1) < 0 && errno == EINVAL, "write: %s", strerror(errno));
	/* D11: not a kevent fd */
	{
		struct kevent_ctl_arg a = { 0 };
		int p[2];

		CHECK(pipe(p) == 0, "pipe");
		CHECK(ioctl(p[0], KEVENT_IOC_CTL, &a) < 0 && errno == ENOTTY,
		      "CTL on a pipe: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
	}
	close(fd);
	return 0;
}

static int t_ctl_header(void)
{
	int fd = kopen();
	struct ukevent uk = mk(KEVENT_TIMER, 100000, KEVENT_TIMER_FIRED, 0, 1);

	CHECK(ctl(fd, 7, 1, &uk) == -EINVAL, "bad cmd");
	CHECK(ctl(fd, KEVENT_CTL_ADD, 4097, &uk) == -EINVAL, "num 4097");
	CHECK(ctl(fd, KEVENT_CTL_ADD, 4096, &uk) == -EINVAL, "num 4096 ADD");
	CHECK(ctl(fd, KEVENT_CTL_ADD, 0, NULL) == 0, "num 0");
	CHECK(ctl(fd, KEVENT_CTL_REMOVE, 1, &uk) == -EINVAL, "REMOVE > kevent_num");
	CHECK(ctl(fd, KEVENT_CTL_ADD, 1, (void *)8) == -EFAULT, "ADD bad array");
	CHECK(ctl(fd, KEVENT_CTL_ADD, 1, &uk) == 0, "ADD timer");
	CHECK(ctl(fd, KEVENT_CTL_MODIFY, 2, &uk) == -EINVAL, "MODIFY > kevent_num");
	close(fd);
	return 0;
}

static int t_per_entry(void)
{
	int fd = kopen();
	struct ukevent uk[5];
	int ret;

	uk[0] = mk(KEVENT_TIMER, 0, KEVENT_TIMER_FIRED, 0, 1);	/* period 0 */
	uk[1] = mk(KEVENT_TIMER, 50, 0, 0, 2);			/* no FIRED */
	uk[2] = mk(KEVENT_NAIO, 1, 1, 0, 3);
	uk[3] = mk(KEVENT_TIMER, 100000, KEVENT_TIMER_FIRED, 0, 4);	/* ok */
	uk[4] = mk(KEVENT_POLL, 9999, POLLIN, 0, 5);		/* bad fd */
	ret = ctl(fd, KEVENT_CTL_ADD, 5, uk);
	CHECK(ret == 4, "ADD returned %d, want 4", ret);
	CHECK(uk[0].user[0] == 1 && (int)uk[0].ret_data[1] == -EINVAL &&
	      uk[0].ret_flags == (KEVENT_RET_BROKEN | KEVENT_RET_DONE), "period 0");
	CHECK(uk[1].user[0] == 2 && (int)uk[1].ret_data[1] == -EINVAL, "no FIRED");
	CHECK(uk[2].user[0] == 3 && (int)uk[2].ret_data[1] == -EINVAL, "NAIO");
	CHECK(uk[3].user[0] == 5 && (int)uk[3].ret_data[1] == -EBADF,
	      "bad fd compacted: cookie %u err %d", uk[3].user[0], (int)uk[3].ret_data[1]);
	close(fd);
	return 0;
}

static int t_timer(void)
{
	int fd = kopen();
	struct ukevent uk = mk(KEVENT_TIMER, 20, KEVENT_TIMER_FIRED, 0, 42);
	struct ukevent out[4];
	uint64_t t0 = now_ns(), dt;
	uint32_t ms1;
	int ret;

	CHECK(ctl(fd, KEVENT_CTL_ADD, 1, &uk) == 0, "ADD");
	ret = getev(fd, 1, 4, 2000000000ull, out, 0);
	dt = now_ns() - t0;
	CHECK(ret == 1, "GET_EVENTS %d", ret);
	CHECK(dt >= 19000000 && dt < 1000000000, "first expiry after %llu ns",
	      (unsigned long long)dt);
	CHECK(out[0].user[0] == 42 && out[0].id.raw[0] == 20 &&
	      out[0].ret_flags == KEVENT_RET_DONE, "record");
	ms1 = out[0].ret_data[0];
	CHECK((uint32_t)(now_ns() / 1000000) - ms1 < 1000, "ret_data[0] %u not monotonic ms", ms1);
	ret = getev(fd, 1, 4, 2000000000ull, out, 0);
	CHECK(ret == 1, "second GET_EVENTS %d", ret);
	CHECK((uint32_t)(out[0].ret_data[0] - ms1) >= 15, "period: %u ms",
	      out[0].ret_data[0] - ms1);
	close(fd);
	return 0;
}

static int t_oneshot(void)
{
	int fd = kopen();
	struct ukevent uk = mk(KEVENT_TIMER, 5, KEVENT_TIMER_FIRED, KEVENT_REQ_ONESHOT, 7);
	struct ukevent out[2];
	struct kevent_info i;
	int ret;

	CHECK(ctl(fd, KEVENT_CTL_ADD, 1, &uk) == 0, "ADD");
	CHECK(kinfo(fd, &i) == 0 && i.queue_kevents == 1, "queue_kevents %u", i.queue_kevents);
	ret = getev(fd, 1, 2, 2000000000ull, out, 0);
	CHECK(ret == 1, "GET_EVENTS %d", ret);
	CHECK(kinfo(fd, &i) == 0 && i.queue_kevents == 0, "freed after read: %u",
	      i.queue_kevents);
	ret = getev(fd, 1, 2, 50000000ull, out, 0);
	CHECK(ret == 0, "re-fired: %d", ret);
	CHECK(ctl(fd, KEVENT_CTL_REMOVE, 1, &uk) == -EINVAL, "REMOVE after free");
	close(fd);
	return 0;
}

static int t_ring(void)
{
	int fd = kopen();
	struct ukevent uk[2] = {
		mk(KEVENT_TIMER, 3, KEVENT_TIMER_FIRED, KEVENT_REQ_ONESHOT, 1),
		mk(KEVENT_TIMER, 6, KEVENT_TIMER_FIRED, KEVENT_REQ_ONESHOT, 2),
	};
	struct ukevent out[2];
	const struct mukevent *m;
	volatile uint32_t *idx;
	void *ring;
	int ret;

	if (!(info0.features & KEVENT_FEAT_RING_MMAP))
		SKIP("backend has no mmap of the fd (CUSE uses the shim)");
	ring = mmap(NULL, KEVENT_RING_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(ring != MAP_FAILED, "mmap: %s", strerror(errno));
	idx = ring;
	CHECK(*idx == 0, "index %u at open", *idx);
	CHECK(ctl(fd, KEVENT_CTL_ADD, 2, uk) == 0, "ADD");
	CHECK(*idx == 0, "ADD advanced the ring (D3)");
	ret = getev(fd, 2, 2, 2000000000ull, out, 0);
	CHECK(ret == 2, "GET_EVENTS %d", ret);
	CHECK(__atomic_load_n(idx, __ATOMIC_ACQUIRE) == 2, "index %u", *idx);
	m = (const void *)((char *)ring + KEVENT_RING_SLOT_OFFSET(0));
	CHECK(m[0].id.raw[0] == 3 && m[0].ret_flags == KEVENT_RET_DONE, "slot 0 %u/%u",
	      m[0].id.raw[0], m[0].ret_flags);
	CHECK(m[1].id.raw[0] == 6, "slot 1 %u", m[1].id.raw[0]);
	CHECK(out[0].id.raw[0] == 3 && out[1].id.raw[0] == 6, "FIFO order");
	/* every page is there: touch the last one */
	CHECK(((volatile char *)ring)[KEVENT_RING_SIZE - 1] == 0, "last page");
	CHECK(mprotect(ring, 4096, PROT_READ | PROT_WRITE) < 0 && errno == EACCES,
	      "mprotect(PROT_WRITE): %s", strerror(errno));
	munmap(ring, KEVENT_RING_SIZE);
	/* the mapping keeps the queue: map, close, read */
	ring = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(ring != MAP_FAILED, "mmap 1 page: %s", strerror(errno));
	close(fd);
	CHECK(*(volatile uint32_t *)ring == 2, "index after close");
	munmap(ring, 4096);
	return 0;
}

static int t_mmap_refusals(void)
{
	int fd, rfd;
	void *p;

	if (!(info0.features & KEVENT_FEAT_RING_MMAP))
		SKIP("backend has no mmap of the fd");
	fd = kopen();
	rfd = open(dev, O_RDONLY | O_CLOEXEC);
	CHECK(rfd >= 0, "open O_RDONLY");
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, rfd, 0);
	CHECK(p == MAP_FAILED && errno == EACCES, "RDONLY fd writable: %s", strerror(errno));
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK(p == MAP_FAILED && errno == EINVAL, "MAP_PRIVATE: %s", strerror(errno));
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p == MAP_FAILED && errno == EPERM, "PROT_WRITE: %s", strerror(errno));
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 4096);
	CHECK(p == MAP_FAILED && errno == EINVAL, "offset: %s", strerror(errno));
	p = mmap(NULL, KEVENT_RING_SIZE + 4096, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(p == MAP_FAILED && errno == EINVAL, "too long: %s", strerror(errno));
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, rfd, 0);
	CHECK(p != MAP_FAILED, "RDONLY fd read mapping: %s", strerror(errno));
	munmap(p, 4096);
	close(rfd);
	close(fd);
	return 0;
}

static int t_get_bounds(void)
{
	int fd = kopen();
	struct ukevent out[2];
	struct ukevent uk = mk(KEVENT_TIMER, 2, KEVENT_TIMER_FIRED, KEVENT_REQ_ONESHOT, 9);
	int ret;

	CHECK(getev(fd, 2, 1, 0, out, 0) == -EINVAL, "min > max");
	CHECK(getev(fd, 0, 0, 0, NULL, 0) == 0, "max 0");
	CHECK(getev(fd, 0, 1, 0, out, 2) == -EINVAL, "unknown ioc_flags");
	CHECK(getev(fd, 1, 1, ~0ull, out, KEVENT_GET_NONBLOCK) == 0, "NONBLOCK");
	CHECK(ctl(fd, KEVENT_CTL_ADD, 1, &uk) == 0, "ADD");
	usleep(50000);
	CHECK(getev(fd, 1, 1, 0, (void *)8, 0) == -EFAULT, "bad buffer");
	ret = getev(fd, 1, 2, 0, out, 0);
	CHECK(ret == 1 && out[0].user[0] == 9, "event lost after EFAULT (D10): %d", ret);
	close(fd);
	return 0;
}

static void on_alarm(int sig)
{
	(void)sig;
}

static int t_signal(void)
{
	int fd = kopen();
	struct ukevent out[1];
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { .it_value = { 0, 50000 } };
	uint64_t t0;
	int ret;

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	t0 = now_ns();
	ret = getev(fd, 1, 1, 5000000000ull, out, 0);
	CHECK(ret == 0, "signal gave %d (D22)", ret);
	CHECK(now_ns() - t0 < 2000000000ull, "signal did not interrupt");
	t0 = now_ns();
	ret = getev(fd, 1, 1, 30000000ull, out, 0);
	CHECK(ret == 0 && now_ns() - t0 >= 29000000ull, "timeout %d", ret);
	close(fd);
	return 0;
}

static int t_poll_pipe(void)
{
	int fd = kopen();
	int p[2];
	struct ukevent uk, out[2];
	struct pollfd pfd;
	char buf[16];
	int ret;

	CHECK(pipe(p) == 0, "pipe");
	uk = mk(KEVENT_POLL, p[0], POLLIN, 0, 11);
	CHECK(ctl(fd, KEVENT_CTL_ADD, 1, &uk) == 0, "ADD");
	pfd.fd = fd;
	pfd.events = POLLIN;
	CHECK(poll(&pfd, 1, 0) == 0, "kevent fd ready too early");
	CHECK(write(p[1], "x", 1) == 1, "write");
	CHECK(poll(&pfd, 1, 2000) == 1 && (pfd.revents & POLLIN), "poll on kevent fd");
	ret = getev(fd, 1, 2, 1000000000ull, out, 0);
	CHECK(ret == 1 && out[0].ret_data[0] == POLLIN && out[0].user[0] == 11,
	      "event %d data %#x", ret, out[0].ret_data[0]);
	/* A6: still readable, but no new activity: no re-fire */
	ret = getev(fd, 1, 2, 50000000ull, out, 0);
	CHECK(ret == 0, "re-fired without activity (A6)");
	CHECK(write(p[1], "y", 1) == 1, "write 2");
	ret = getev(fd, 1, 2, 1000000000ull, out, 0);
	CHECK(ret == 1, "no re-fire on new activity");
	/* A7: the kevent holds the file */
	close(p[0]);
	CHECK(write(p[1], "z", 1) == 1, "write after close: %s", strerror(errno));
	ret = getev(fd, 1, 2, 1000000000ull, out, 0);
	CHECK(ret == 1, "after client close: %d", ret);
	/* REMOVE with the wrong cookie, then the right one */
	uk.user[1] ^= 1;
	CHECK(ctl(fd, KEVENT_CTL_REMOVE, 1, &uk) == 0 &&
	      uk.ret_flags == (KEVENT_RET_DONE | KEVENT_RET_BROKEN), "REMOVE wrong cookie");
	uk.user[1] ^= 1;
	CHECK(ctl(fd, KEVENT_CTL_REMOVE, 1, &uk) == 0 && uk.ret_flags == KEVENT_RET_DONE,
	      "REMOVE %#x", uk.ret_flags);
	/*
	 * The read end is gone now: the writer sees EPIPE.  Module only: the
	 * daemon closes its duplicate later, on its closer thread (B3).
	 */
	signal(SIGPIPE, SIG_IGN);
	if (info0.backend == KEVENT_BACKEND_MODULE)
		CHECK(write(p[1], "w", 1) < 0 && errno == EPIPE, "REMOVE did not drop the file");
	(void)buf;
	close(p[1]);
	close(fd);
	return 0;
}

static int t_poll_ready_at_add(void)
{
	int fd = kopen();
	int p[2], ret;
	struct ukevent uk[2];
	char path[] = "/tmp/kmod-smoke-XXXXXX";
	int f = mkstemp(path);
	struct kevent_info i;

	CHECK(f >= 0, "mkstemp");
	unlink(path);
	CHECK(pipe(p) == 0, "pipe");
	uk[0] = mk(KEVENT_POLL, p[1], POLLOUT | POLLIN, 0, 1);
	uk[1] = mk(KEVENT_POLL, f, POLLIN | POLLPRI, 0, 2);
	ret = ctl(fd, KEVENT_CTL_ADD, 2, uk);
	CHECK(ret == 2, "ADD %d", ret);
	CHECK(uk[0].ret_flags == KEVENT_RET_DONE && uk[0].ret_data[0] == POLLOUT,
	      "pipe: flags %#x data %#x", uk[0].ret_flags, uk[0].ret_data[0]);
	CHECK(uk[1].ret_flags == KEVENT_RET_DONE && uk[1].ret_data[0] == POLLIN,
	      "file (D14): flags %#x data %#x", uk[1].ret_flags, uk[1].ret_data[0]);
	uk[0] = mk(KEVENT_POLL, f, POLLPRI, 0, 3);
	CHECK(ctl(fd, KEVENT_CTL_ADD, 1, uk) == 0, "file with no const bit");
	CHECK(kinfo(fd, &i) == 0 && i.queue_kevents == 1, "not kept/registered");
	close(f);
	close(p[0]);
	close(p[1]);
	close(fd);
	return 0;
}

static int t_modify(void)
{
	int fd = kopen();
	int p[2], ret;
	struct ukevent uk, out[2];

	CHECK(pipe(p) == 0, "pipe");
	CHECK(write(p[1], "x", 1) == 1, "write");
	uk = mk(KEVENT_POLL, p[0], POLLPRI, 0, 5);
	CHECK(ctl(fd, KEVENT_CTL_ADD, 1, &uk) == 0, "ADD");
	uk.event = POLLIN;
	CHECK(ctl(fd, KEVENT_CTL_MODIFY, 1, &uk) == 0 && uk.ret_flags == KEVENT_RET_DONE,
	      "MODIFY %#x", uk.ret_flags);
	ret = getev(fd, 1, 2, 0, out, 0);
	CHECK(ret == 1 && out[0].ret_data[0] == POLLIN, "MODIFY did not re-evaluate: %d", ret);
	uk.event = 0;
	uk.type = KEVENT_TIMER;		/* D7: type not compared */
	CHECK(ctl(fd, KEVENT_CTL_MODIFY, 1, &uk) == 0 && uk.ret_flags == KEVENT_RET_DONE,
	      "MODIFY by id+cookie");
	close(p[0]);
	close(p[1]);
	close(fd);
	return 0;
}

static int t_refused_fds(void)
{
	int fd = kopen(), fd2 = kopen();
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct ukevent uk[2];

	uk[0] = mk(KEVENT_POLL, fd2, POLLIN, 0, 1);
	uk[1] = mk(KEVENT_POLL, ep, POLLIN, 0, 2);
	CHECK(ctl(fd, KEVENT_CTL_ADD, 2, uk) == 2, "ADD");
	CHECK((int)uk[0].ret_data[1] == -EINVAL, "kevent fd: %d", (int)uk[0].ret_data[1]);
	CHECK((int)uk[1].ret_data[1] == -EINVAL, "epoll fd: %d", (int)uk[1].ret_data[1]);
	close(ep);
	/* B3: a CUSE device (KMOD_SMOKE_CUSE names one) and /dev/cuse */
	{
		const char *paths[2] = { "/dev/cuse", getenv("KMOD_SMOKE_CUSE") };
		int i, xfd;

		for (i = info0.backend == KEVENT_BACKEND_MODULE ? 0 : 1; i < 2; i++) {
			if (!paths[i])
				continue;
			xfd = open(paths[i], O_RDWR | O_CLOEXEC);
			if (xfd < 0)
				continue;
			uk[0] = mk(KEVENT_POLL, xfd, POLLIN, 0, 3);
			CHECK(ctl(fd, KEVENT_CTL_ADD, 1, uk) == 1 &&
			      (int)uk[0].ret_data[1] == -EINVAL, "%s not refused: %d",
			      paths[i], (int)uk[0].ret_data[1]);
			printf("# refused %s\n", paths[i]);
			close(xfd);
		}
	}
	close(fd2);
	close(fd);
	return 0;
}

static int t_socket(void)
{
	int fd = kopen();
	int sv[2], ls, cs, p[2], ret;
	struct ukevent uk[2], out[4];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (!(info0.supported_types & (1u << KEVENT_SOCKET)))
		SKIP("KEVENT_SOCKET not supported by this backend");
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
	CHECK(pipe(p) == 0, "pipe");
	uk[0] = mk(KEVENT_SOCKET, sv[0], KEVENT_SOCKET_RECV, 0, 1);
	uk[1] = mk(KEVENT_SOCKET, p[0], KEVENT_SOCKET_RECV, 0, 2);
	ret = ctl(fd, KEVENT_CTL_ADD, 2, uk);
	CHECK(ret == 1 && uk[0].user[0] == 2 && (int)uk[0].ret_data[1] == -ENOTSOCK,
	      "non-socket: %d %d", ret, (int)uk[0].ret_data[1]);
	CHECK(write(sv[1], "x", 1) == 1, "write");
	ret = getev(fd, 1, 4, 1000000000ull, out, 0);
	CHECK(ret == 1 && out[0].ret_data[0] == KEVENT_SOCKET_RECV, "RECV %d", ret);
	uk[0] = mk(KEVENT_SOCKET, sv[1], KEVENT_SOCKET_SEND, 0, 3);
	CHECK(ctl(fd, KEVENT_CTL_ADD, 1, uk) == 1 && uk[0].ret_data[0] == KEVENT_SOCKET_SEND,
	      "SEND ready at ADD");
	/* EOF is readable (A8) */
	close(sv[1]);
	ret = getev(fd, 1, 4, 1000000000ull, out, 0);
	CHECK(ret == 1 && out[0].ret_data[0] == KEVENT_SOCKET_RECV, "EOF %d", ret);

	ls = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "kmod-smoke-%d", getpid());
	CHECK(bind(ls, (void *)&sa, sizeof(sa)) == 0 && listen(ls, 4) == 0, "listen");
	uk[0] = mk(KEVENT_SOCKET, ls, KEVENT_SOCKET_ACCEPT, KEVENT_REQ_ONESHOT, 4);
	CHECK(ctl(fd, KEVENT_CTL_ADD, 1, uk) == 0, "ADD listen");
	cs = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(connect(cs, (void *)&sa, sizeof(sa)) == 0, "connect");
	ret = getev(fd, 1, 4, 1000000000ull, out, 0);
	CHECK(ret == 1 && out[0].ret_data[0] == KEVENT_SOCKET_ACCEPT && out[0].user[0] == 4,
	      "ACCEPT %d %#x", ret, out[0].ret_data[0]);
	close(cs);
	close(ls);
	close(sv[0]);
	close(p[0]);
	close(p[1]);
	close(fd);
	return 0;
}

static int t_limit(void)
{
	int fd = kopen();
	struct ukevent *uk = calloc(4096, sizeof(*uk));
	struct kevent_info i;
	int n;

	for (n = 0; n < 4095; n++)
		uk[n] = mk(KEVENT_TIMER, 1000000, KEVENT_TIMER_FIRED, 0, n);
	CHECK(ctl(fd, KEVENT_CTL_ADD, 4095, uk) == 0, "ADD 4095");
	CHECK(kinfo(fd, &i) == 0 && i.queue_kevents == 4095, "kevents %u", i.queue_kevents);
	CHECK(ctl(fd, KEVENT_CTL_ADD, 1, uk) == -EINVAL, "ADD 4096th");
	CHECK(ctl(fd, KEVENT_CTL_REMOVE, 4095, uk) == 0, "REMOVE 4095");
	for (n = 0; n < 4095; n++)
		CHECK(uk[n].ret_flags == KEVENT_RET_DONE, "REMOVE entry %d %#x", n,
		      uk[n].ret_flags);
	CHECK(kinfo(fd, &i) == 0 && i.queue_kevents == 0, "kevents after %u",
	      i.queue_kevents);
	free(uk);
	close(fd);
	return 0;
}

struct waiter_arg {
	int fd, min, got;
	uint32_t cookie;
};

static void *waiter(void *p)
{
	struct waiter_arg *w = p;
	struct ukevent out[8];

	w->got = getev(w->fd, w->min, 8, 1000000000ull, out, 0);
	w->cookie = w->got > 0 ? out[0].user[0] : 0;
	return NULL;
}

/* D16: oldest waiter whose min_nr is met takes the events. */
static int t_waiters_order(void)
{
	int fd = kopen();
	struct waiter_arg a = { fd, 2, 0, 0 }, b = { fd, 1, 0, 0 }, c = { fd, 1, 0, 0 };
	pthread_t ta, tb, tc;
	struct ukevent uk = mk(KEVENT_TIMER, 300, KEVENT_TIMER_FIRED, KEVENT_REQ_ONESHOT, 1);
	struct kevent_info i;

	pthread_create(&ta, NULL, waiter, &a);
	usleep(50000);
	pthread_create(&tb, NULL, waiter, &b);
	usleep(50000);
	pthread_create(&tc, NULL, waiter, &c);
	usleep(50000);
	CHECK(kinfo(fd, &i) == 0, "info");
	if (info0.backend == KEVENT_BACKEND_MODULE)
		CHECK(i.live_waiters >= 3, "waiters %llu", (unsigned long long)i.live_waiters);
	CHECK(ctl(fd, KEVENT_CTL_ADD, 1, &uk) == 0, "ADD");
	pthread_join(tb, NULL);
	/* b is served first (a needs 2); c and a time out */
	pthread_join(tc, NULL);
	pthread_join(ta, NULL);
	CHECK(b.got == 1 && c.got == 0 && a.got == 0, "a %d b %d c %d", a.got, b.got, c.got);
	close(fd);
	return 0;
}

/* teardown under fire: fast timers, ready pipes, close with all of it live */
static int t_teardown(void)
{
	int round, n;

	for (round = 0; round < 20; round++) {
		int fd = kopen(), p[2];
		struct ukevent uk[64];
		struct ukevent out[64];

		CHECK(pipe(p) == 0, "pipe");
		for (n = 0; n < 32; n++)
			uk[n] = mk(KEVENT_TIMER, 1, KEVENT_TIMER_FIRED, n & 1, n);
		for (; n < 64; n++)
			uk[n] = mk(KEVENT_POLL, p[0], POLLIN, n & 1, n);
		CHECK(ctl(fd, KEVENT_CTL_ADD, 64, uk) == 0, "ADD");
		CHECK(write(p[1], "x", 1) == 1, "write");
		usleep(2000);
		getev(fd, 1, 64, 1000000, out, 0);
		if (round & 1)
			CHECK(ctl(fd, KEVENT_CTL_REMOVE, 16, uk) == 0, "REMOVE");
		close(p[0]);
		close(p[1]);
		close(fd);
	}
	return 0;
}


static int t_inode(void)
{
	int fd = kopen();
	char dir[] = "/tmp/kmod-inode-XXXXXX", path[64], sub[64];
	struct ukevent uk[4], out[4];
	int dfd, ffd, sfd, wfd, pfd, ret;

	if (!(info0.supported_types & (1u << KEVENT_INODE)))
		SKIP("KEVENT_INODE not supported by this backend");
	CHECK(mkdtemp(dir), "mkdtemp");
	snprintf(path, sizeof(path), "%s/f", dir);
	snprintf(sub, sizeof(sub), "%s/d", dir);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	uk[0] = mk(KEVENT_INODE, dfd, KEVENT_INODE_CREATE | KEVENT_INODE_REMOVE, 0, 1);
	CHECK(ctl(fd, KEVENT_CTL_ADD, 1, uk) == 0, "ADD dir");
	ffd = open(path, O_CREAT | O_RDWR, 0600);
	ret = getev(fd, 1, 4, 1000000000ull, out, 0);
	CHECK(ret == 1 && out[0].ret_data[0] == KEVENT_INODE_CREATE && out[0].user[0] == 1,
	      "CREATE %d %#x", ret, out[0].ret_data[0]);
	/* watch the file itself for its removal, keep its fd open */
	uk[0] = mk(KEVENT_INODE, ffd, KEVENT_INODE_REMOVE, 0, 2);
	CHECK(ctl(fd, KEVENT_CTL_ADD, 1, uk) == 0, "ADD file");
	CHECK(unlink(path) == 0, "unlink");
	ret = getev(fd, 2, 4, 1000000000ull, out, 0);
	CHECK(ret == 2, "unlink gave %d events", ret);
	if (out[0].user[0] == 2) {
		/* unlink tells the victim (ATTRIB) before the directory */
		uk[3] = out[0];
		out[0] = out[1];
		out[1] = uk[3];
	}
	CHECK(out[0].user[0] == 1 && out[0].ret_data[0] == KEVENT_INODE_REMOVE &&
	      !(out[0].ret_flags & KEVENT_RET_BROKEN), "dir REMOVE %#x", out[0].ret_flags);
	CHECK(out[1].user[0] == 2 && out[1].ret_data[0] == KEVENT_INODE_REMOVE &&
	      (out[1].ret_flags & KEVENT_RET_BROKEN) && (int)out[1].ret_data[1] == -ENOENT,
	      "file removed: flags %#x err %d", out[1].ret_flags, (int)out[1].ret_data[1]);
	/* a watched directory removed */
	CHECK(mkdir(sub, 0700) == 0, "mkdir");
	ret = getev(fd, 1, 4, 1000000000ull, out, 0);
	CHECK(ret == 1 && out[0].ret_data[0] == KEVENT_INODE_CREATE, "mkdir CREATE %d", ret);
	sfd = open(sub, O_RDONLY | O_DIRECTORY);
	uk[0] = mk(KEVENT_INODE, sfd, KEVENT_INODE_REMOVE, 0, 3);
	CHECK(ctl(fd, KEVENT_CTL_ADD, 1, uk) == 0, "ADD subdir");
	CHECK(rmdir(sub) == 0, "rmdir");
	ret = getev(fd, 1, 4, 1000000000ull, out, 0);
	CHECK(ret == 1 && out[0].user[0] == 1 && out[0].ret_data[0] == KEVENT_INODE_REMOVE,
	      "rmdir: parent saw %d events, cookie %u", ret, out[0].user[0]);
	/*
	 * Linux tells a removed directory itself only when its last reference
	 * goes (docs/abi.md section 9): here, when the client closes it.
	 */
	close(sfd);
	ret = getev(fd, 1, 4, 1000000000ull, out, 0);
	CHECK(ret == 1 && out[0].user[0] == 3 && (out[0].ret_flags & KEVENT_RET_BROKEN) &&
	      out[0].ret_data[0] == KEVENT_INODE_REMOVE && (int)out[0].ret_data[1] == -ENOENT,
	      "removed dir: %d events, cookie %u flags %#x", ret, out[0].user[0],
	      out[0].ret_flags);
	/* refused kinds */
	snprintf(path, sizeof(path), "%s/w", dir);
	wfd = open(path, O_CREAT | O_WRONLY, 0600);
	pfd = open(dir, O_PATH);
	uk[0] = mk(KEVENT_INODE, wfd, KEVENT_INODE_REMOVE, 0, 4);
	uk[1] = mk(KEVENT_INODE, pfd, KEVENT_INODE_REMOVE, 0, 5);
	uk[2] = mk(KEVENT_INODE, fd, KEVENT_INODE_REMOVE, 0, 6);
	uk[3] = mk(KEVENT_INODE, 9999, KEVENT_INODE_REMOVE, 0, 7);
	CHECK(ctl(fd, KEVENT_CTL_ADD, 4, uk) == 4, "ADD refused");
	CHECK((int)uk[0].ret_data[1] == -EINVAL, "O_WRONLY: %d", (int)uk[0].ret_data[1]);
	CHECK((int)uk[1].ret_data[1] == -EINVAL, "O_PATH: %d", (int)uk[1].ret_data[1]);
	CHECK((int)uk[2].ret_data[1] == -EINVAL, "char dev: %d", (int)uk[2].ret_data[1]);
	CHECK((int)uk[3].ret_data[1] == -EBADF, "bad fd: %d", (int)uk[3].ret_data[1]);
	unlink(path);
	close(wfd);
	close(pfd);
	close(ffd);
	/* the queue closes with the directory watch still live */
	close(fd);
	close(dfd);
	rmdir(dir);
	return 0;
}


/* Concurrency: CTL, GET_EVENTS, origin fires and fd closes at once. */
struct stress_arg {
	int fd, p[2];
	volatile int *stop;
	unsigned long ops;
};

static void *stress_ctl(void *v)
{
	struct stress_arg *a = v;
	struct ukevent uk[16];
	int i;

	while (!*a->stop) {
		for (i = 0; i < 16; i++)
			uk[i] = mk(KEVENT_TIMER, 1 + (i & 3), KEVENT_TIMER_FIRED,
				   i & 1 ? KEVENT_REQ_ONESHOT : 0, i);
		ctl(a->fd, KEVENT_CTL_ADD, 16, uk);
		for (i = 0; i < 16; i++)
			uk[i] = mk(KEVENT_TIMER, 1 + (i & 3), KEVENT_TIMER_FIRED,
				   i & 1 ? KEVENT_REQ_ONESHOT : 0, i);
		ctl(a->fd, KEVENT_CTL_MODIFY, 4, uk);
		ctl(a->fd, KEVENT_CTL_REMOVE, 16, uk);
		a->ops++;
	}
	return NULL;
}

static void *stress_get(void *v)
{
	struct stress_arg *a = v;
	struct ukevent out[64];

	while (!*a->stop) {
		getev(a->fd, 1 + (a->ops & 7), 64, 1000000, out, 0);
		a->ops++;
	}
	return NULL;
}

static void *stress_poll(void *v)
{
	struct stress_arg *a = v;
	struct ukevent uk[4];
	int p[2], i;

	while (!*a->stop) {
		if (pipe(p))
			break;
		for (i = 0; i < 4; i++)
			uk[i] = mk(KEVENT_POLL, p[i & 1], i & 1 ? POLLOUT : POLLIN,
				   i & 2 ? KEVENT_REQ_ONESHOT : 0, 100 + i);
		ctl(a->fd, KEVENT_CTL_ADD, 4, uk);
		if (write(p[1], "x", 1) != 1)
			break;
		/* the client closes while the kevents still watch */
		close(p[0]);
		close(p[1]);
		for (i = 0; i < 4; i++)
			uk[i] = mk(KEVENT_POLL, p[i & 1], i & 1 ? POLLOUT : POLLIN,
				   i & 2 ? KEVENT_REQ_ONESHOT : 0, 100 + i);
		if (a->ops & 1)
			ctl(a->fd, KEVENT_CTL_REMOVE, 1, uk);
		a->ops++;
	}
	return NULL;
}

static int t_stress(void)
{
	volatile int stop = 0;
	struct stress_arg a[4];
	pthread_t t[4];
	void *(*fn[4])(void *) = { stress_ctl, stress_get, stress_poll, stress_get };
	int round, i, fd;
	unsigned long ops = 0;

	for (round = 0; round < 3; round++) {
		fd = kopen();
		stop = 0;
		for (i = 0; i < 4; i++) {
			a[i] = (struct stress_arg){ .fd = fd, .stop = &stop };
			pthread_create(&t[i], NULL, fn[i], &a[i]);
		}
		usleep(700000);
		/* close while everything runs: the file lives until the ioctls end */
		if (round == 2)
			close(fd);
		stop = 1;
		for (i = 0; i < 4; i++) {
			pthread_join(t[i], NULL);
			ops += a[i].ops;
		}
		if (round != 2)
			close(fd);
	}
	CHECK(ops > 100, "only %lu operations", ops);
	return 0;
}

static int set_abi(int fd, uint32_t rev, uint32_t flags, uint64_t resv)
{
	struct kevent_set_abi a = { .revision = rev, .flags = flags, .__reserved = resv };

	return ioctl(fd, KEVENT_IOC_SET_ABI, &a) < 0 ? -errno : 0;
}

static int t_set_abi(void)
{
	int fd = kopen();
	struct ukevent uk[2];

	/* The highest level the module serves, as t_info pins it. */
	const unsigned int top = 3;

	CHECK(set_abi(fd, top + 1, 0, 0) == -EINVAL, "bad revision");
	CHECK(set_abi(fd, 1, 0x80, 0) == -EINVAL, "unknown flag");
	CHECK(set_abi(fd, 1, 0, 1) == -EINVAL, "reserved");
	CHECK(ctl(fd, 9, 1, uk) == -EINVAL, "bad CTL");
	CHECK(set_abi(fd, top, KEVENT_ABI_STRICT, 0) == 0,
	      "STRICT after a refused CTL");
	uk[0] = mk(KEVENT_TIMER, 100000, KEVENT_TIMER_FIRED, 0x100, 1);
	uk[1] = mk(KEVENT_TIMER, 100000, KEVENT_TIMER_FIRED, KEVENT_REQ_ONESHOT, 2);
	CHECK(ctl(fd, KEVENT_CTL_ADD, 2, uk) == 1 && uk[0].user[0] == 1 &&
	      (int)uk[0].ret_data[1] == -EINVAL, "strict req_flags");
	CHECK(set_abi(fd, top, 0, 0) == -EBUSY, "SET_ABI after CTL");
	close(fd);
	fd = kopen();
	CHECK(ctl(fd, KEVENT_CTL_ADD, 0, NULL) == 0, "num 0");
	CHECK(set_abi(fd, top, 0, 0) == -EBUSY, "SET_ABI after CTL num 0");
	close(fd);
	return 0;
}

/* D10 and docs/abi.md O7: a read-only output range is refused up front. */
static int t_readonly_out(void)
{
	int fd = kopen();
	struct ukevent uk = mk(KEVENT_TIMER, 2, KEVENT_TIMER_FIRED, KEVENT_REQ_ONESHOT, 3);
	struct ukevent out[2];
	void *ro;
	int ret;

	if (info0.backend != KEVENT_BACKEND_MODULE)
		SKIP("read-only output probe differs per path (docs/abi.md O7)");
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(ro != MAP_FAILED, "mmap");
	CHECK(ctl(fd, KEVENT_CTL_ADD, 1, &uk) == 0, "ADD");
	usleep(30000);
	ret = getev(fd, 1, 2, 0, ro, 0);
	CHECK(ret == -EFAULT, "read-only buffer: %d", ret);
	ret = getev(fd, 1, 2, 0, out, 0);
	CHECK(ret == 1 && out[0].user[0] == 3, "event lost: %d", ret);
	munmap(ro, 4096);
	close(fd);
	return 0;
}

/* D28: a 32-bit caller's user address above 4 GiB is -EFAULT. */
static int t_compat_addr(void)
{
	int fd = kopen();
	struct ukevent uk = mk(KEVENT_TIMER, 100000, KEVENT_TIMER_FIRED, 0, 3);
	struct kevent_ctl_arg a = { .cmd = KEVENT_CTL_ADD, .num = 1 };
	struct kevent_get_events_arg g = { .min_nr = 0, .max_nr = 1 };

	if (sizeof(void *) != 4)
		SKIP("64-bit build");
	a.events = (1ull << 32) | (uintptr_t)&uk;
	CHECK(ioctl(fd, KEVENT_IOC_CTL, &a) < 0 && errno == EFAULT, "CTL high address: %s",
	      strerror(errno));
	g.events = (1ull << 32) | (uintptr_t)&uk;
	CHECK(ioctl(fd, KEVENT_IOC_GET_EVENTS, &g) < 0 && errno == EFAULT,
	      "GET_EVENTS high address: %s", strerror(errno));
	close(fd);
	return 0;
}


/* ---- revision 2 --------------------------------------------------- */

static int kopen2(unsigned int flags)
{
	int fd = kopen();
	struct kevent_set_abi a = { .revision = 2, .flags = flags };

	if (ioctl(fd, KEVENT_IOC_SET_ABI, &a) < 0) {
		close(fd);
		return -errno;
	}
	return fd;
}

static int ring_init(int fd, void *ring, unsigned int num)
{
	struct kevent_ring_init a = { .ring = (uintptr_t)ring, .num = num };

	return ioctl(fd, KEVENT_IOC_RING_INIT, &a) < 0 ? -errno : 0;
}

static int kwait(int fd, unsigned int num, unsigned int old_uidx, int64_t sec,
		 uint32_t nsec, unsigned int flags)
{
	struct kevent_wait_arg a = { .num = num, .old_uidx = old_uidx,
				     .timeout = { .tv_sec = sec, .tv_nsec = nsec },
				     .flags = flags };
	int ret = ioctl(fd, KEVENT_IOC_WAIT, &a);

	return ret < 0 ? -errno : ret;
}

static int kcommit(int fd, unsigned int new_uidx, unsigned int over)
{
	struct kevent_commit_arg a = { .new_uidx = new_uidx, .over = over };
	int ret = ioctl(fd, KEVENT_IOC_COMMIT, &a);

	return ret < 0 ? -errno : ret;
}

/* n eventfds, each readable, as POLL kevents with cookies 0..n-1. */
static int make_ready(int fd, int *efd, int n, uint32_t req)
{
	struct ukevent uk;
	uint64_t one = 1;
	int i;

	for (i = 0; i < n; i++) {
		efd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (efd[i] < 0)
			return -1;
		uk = mk(KEVENT_POLL, efd[i], POLLIN, req, i);
		if (ctl(fd, KEVENT_CTL_ADD, 1, &uk) != 0)
			return -1;
	}
	for (i = 0; i < n; i++)
		if (write(efd[i], &one, sizeof(one)) != sizeof(one))
			return -1;
	return 0;
}

static int ring_rounds(int fd, struct kevent_uring *r, unsigned int num,
		       unsigned char *seen, int n, unsigned int *uidx)
{
	int got = 0, ret, k;
	unsigned int kidx, s;

	while (got < n) {
		ret = kwait(fd, 5, *uidx, 1, 0, 0);
		if (ret <= 0)
			return ret < 0 ? ret : -ETIMEDOUT;
		kidx = __atomic_load_n(&r->ring_kidx, __ATOMIC_ACQUIRE);
		for (s = *uidx, k = 0; k < ret; k++, s = (s + 1) % num) {
			uint32_t c = r->event[s].user[0];

			if (c >= (uint32_t)n || seen[c]++)
				return -EEXIST;
			got++;
		}
		if (s != kidx)
			return -EPROTO;
		ret = kcommit(fd, kidx, __atomic_load_n(&r->ring_over, __ATOMIC_ACQUIRE));
		if (ret < 0)
			return ret;
		*uidx = kidx;
	}
	return got;
}

/* More ready kevents than the ring holds, through WAIT/COMMIT, each once. */
static int t_rev2_rounds(void)
{
	enum { N = 40, NUM = 8 };
	int fd = kopen2(0), efd[N], ret, i;
	struct kevent_uring *r = calloc(1, KEVENT_URING_SIZE(NUM));
	unsigned char seen[N] = { 0 };
	struct kevent_info info;
	unsigned int uidx = 0;

	CHECK(fd >= 0, "SET_ABI(2): %d", fd);
	CHECK(ring_init(fd, r, NUM) == 0, "RING_INIT");
	CHECK(ring_init(fd, r, NUM) == -EBUSY, "second RING_INIT");
	CHECK(make_ready(fd, efd, N, KEVENT_REQ_ONESHOT) == 0, "eventfds");
	ret = ring_rounds(fd, r, NUM, seen, N, &uidx);
	CHECK(ret == N, "rounds: %d", ret);
	CHECK(getev(fd, 0, 4, 0, (struct ukevent[4]){}, 0) == 0, "left over");
	CHECK(kinfo(fd, &info) == 0 && info.queue_kevents == 0 &&
	      info.ring_over == N / NUM && info.ring_uidx == uidx &&
	      info.queue_revision == 2, "INFO: %u kevents, over %u, uidx %u",
	      info.queue_kevents, info.ring_over, info.ring_uidx);
	CHECK(kcommit(fd, uidx, info.ring_over - 1) == -EOVERFLOW, "stale over");
	for (i = 0; i < N; i++)
		close(efd[i]);
	close(fd);
	free(r);
	return 0;
}

/* D41: a ring store that faults requeues the events and counts the call. */
static int t_rev2_fault(void)
{
	enum { N = 6, NUM = 200 };	/* 8 + 200 * 40 bytes: two pages */
	int fd = kopen2(0), efd[N], ret, i;
	long pg = sysconf(_SC_PAGESIZE);
	struct kevent_uring *r;
	unsigned char seen[N] = { 0 };
	struct kevent_info info;
	unsigned int uidx = 100;	/* slots 100..105 straddle the pages */

	CHECK(fd >= 0, "SET_ABI(2): %d", fd);
	r = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(r != MAP_FAILED, "mmap");
	CHECK(ring_init(fd, r, NUM) == 0, "RING_INIT");
	/* Move kidx and uidx to slot 100 with one event and its commit. */
	CHECK(make_ready(fd, efd, 1, 0) == 0, "eventfd");
	for (i = 0; i < 100; i++) {
		uint64_t v, one = 1;

		CHECK(kwait(fd, 1, i, 1, 0, 0) == 1, "WAIT %d", i);
		CHECK(kcommit(fd, i + 1, 0) == 1, "COMMIT %d", i);
		CHECK(read(efd[0], &v, 8) == 8, "drain");
		if (i < 99)
			CHECK(write(efd[0], &one, 8) == 8, "rearm");
	}
	{
		struct ukevent uk = mk(KEVENT_POLL, efd[0], POLLIN, 0, 0);

		CHECK(ctl(fd, KEVENT_CTL_REMOVE, 1, &uk) == 0, "REMOVE");
		close(efd[0]);
	}
	CHECK(make_ready(fd, efd, N, KEVENT_REQ_ONESHOT) == 0, "eventfds");
	for (i = 0; i < 5000; i++) {	/* the fires run in a kworker */
		kinfo(fd, &info);
		if (info.queue_ready == N)
			break;
		usleep(1000);
	}
	CHECK(mprotect((char *)r + pg, pg, PROT_READ) == 0, "mprotect");
	ret = kwait(fd, N, uidx, 1, 0, 0);
	CHECK(ret == -EFAULT, "WAIT over a read-only page: %d", ret);
	CHECK(kinfo(fd, &info) == 0 && info.ring_faults == 1 && info.queue_ready == N &&
	      info.ring_kidx == 100 && info.queue_kevents == N,
	      "INFO: faults %u ready %u kidx %u kevents %u", info.ring_faults,
	      info.queue_ready, info.ring_kidx, info.queue_kevents);
	CHECK(mprotect((char *)r + pg, pg, PROT_READ | PROT_WRITE) == 0, "mprotect back");
	ret = ring_rounds(fd, r, NUM, seen, N, &uidx);
	CHECK(ret == N, "after the fault: %d", ret);
	CHECK(kinfo(fd, &info) == 0 && info.queue_kevents == 0, "ONESHOT kept: %u",
	      info.queue_kevents);
	for (i = 0; i < N; i++)
		close(efd[i]);
	close(fd);
	munmap(r, 2 * pg);
	return 0;
}

static void on_usr1(int sig)
{
	(void)sig;
}

/* D47: -EINTR, not -ERESTARTSYS, which SA_RESTART would turn into a restart. */
static int t_rev2_eintr(void)
{
	int fd = kopen2(KEVENT_ABI_EINTR);
	struct kevent_uring *r = calloc(1, KEVENT_URING_SIZE(4));
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	struct itimerval it = { .it_value = { 0, 50000 } };
	struct ukevent out[1];
	uint64_t t0;
	int ret;

	CHECK(fd >= 0, "SET_ABI(2, EINTR): %d", fd);
	CHECK(ring_init(fd, r, 4) == 0, "RING_INIT");
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	t0 = now_ns();
	ret = kwait(fd, 1, 0, 5, 0, 0);
	CHECK(ret == -EINTR, "WAIT: %d", ret);
	CHECK(now_ns() - t0 < 2000000000ull, "WAIT restarted");
	setitimer(ITIMER_REAL, &it, NULL);
	t0 = now_ns();
	ret = getev(fd, 1, 1, 5000000000ull, out, 0);
	CHECK(ret == -EINTR, "GET_EVENTS: %d", ret);
	CHECK(now_ns() - t0 < 2000000000ull, "GET_EVENTS restarted");
	close(fd);
	free(r);
	return 0;
}

struct clock_jump {
	int fd;
	int ret;
};

static void *abstime_waiter(void *arg)
{
	struct clock_jump *cj = arg;
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	/* An hour ahead: only the clock being set can end this in time. */
	cj->ret = kwait(cj->fd, 1, 0, now.tv_sec + 3600, 0, KEVENT_FLAGS_ABSTIME);
	return NULL;
}

/* D48: an ABSTIME CLOCK_REALTIME deadline follows clock_settime. */
static int t_rev2_abstime(void)
{
	struct kevent_uring *r = calloc(1, KEVENT_URING_SIZE(4));
	struct clock_jump cj = { .fd = kopen2(0), .ret = 1 };
	struct kevent_info info;
	struct timespec ts;
	pthread_t th;
	int i;

	CHECK(cj.fd >= 0, "SET_ABI(2): %d", cj.fd);
	CHECK(ring_init(cj.fd, r, 4) == 0, "RING_INIT");
	pthread_create(&th, NULL, abstime_waiter, &cj);
	for (i = 0; i < 5000; i++) {
		kinfo(cj.fd, &info);
		if (info.queue_parked)
			break;
		usleep(1000);
	}
	CHECK(info.queue_parked == 1, "WAIT never parked");
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 7200;
	if (clock_settime(CLOCK_REALTIME, &ts)) {
		struct ukevent uk;

		/* Not root: end the wait another way and skip. */
		uk = mk(KEVENT_TIMER, 1, KEVENT_TIMER_FIRED, KEVENT_REQ_ONESHOT, 1);
		ctl(cj.fd, KEVENT_CTL_ADD, 1, &uk);
		pthread_join(th, NULL);
		SKIP("clock_settime: %s", strerror(errno));
	}
	for (i = 0; i < 2000 && cj.ret == 1; i++)
		usleep(1000);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec -= 7200;
	clock_settime(CLOCK_REALTIME, &ts);
	if (cj.ret == 1) {
		struct ukevent uk = mk(KEVENT_TIMER, 1, KEVENT_TIMER_FIRED,
				       KEVENT_REQ_ONESHOT, 1);

		ctl(cj.fd, KEVENT_CTL_ADD, 1, &uk);
	}
	pthread_join(th, NULL);
	CHECK(cj.ret == 0, "WAIT after the clock passed its deadline: %d", cj.ret);
	close(cj.fd);
	free(r);
	return 0;
}


/* D49: READY marks matched kevents ready with DONE and ret_data {0, 0}. */
static int t_rev2_ready(void)
{
	int fd = kopen2(0);
	struct ukevent uk[2], out[2];

	CHECK(fd >= 0, "SET_ABI(2): %d", fd);
	uk[0] = mk(KEVENT_TIMER, 100000, KEVENT_TIMER_FIRED, 0, 1);
	CHECK(ctl(fd, KEVENT_CTL_ADD, 1, uk) == 0, "ADD");
	uk[0] = mk(KEVENT_TIMER, 100000, KEVENT_TIMER_FIRED, 0, 1);
	uk[1] = mk(KEVENT_TIMER, 100000, KEVENT_TIMER_FIRED, 0, 99);
	uk[1].ret_data[1] = 7;
	CHECK(ctl(fd, KEVENT_CTL_READY, 1, uk) == 1, "READY one");
	uk[0] = mk(KEVENT_TIMER, 100000, KEVENT_TIMER_FIRED, 0, 1);
	CHECK(ctl(fd, KEVENT_CTL_READY, 2, uk) == -EINVAL, "READY num > kevent_num");
	CHECK(ctl(fd, KEVENT_CTL_ADD, 1, &uk[1]) == 0, "ADD 99");
	uk[0] = mk(KEVENT_TIMER, 100000, KEVENT_TIMER_FIRED, 0, 1);
	uk[1] = mk(KEVENT_TIMER, 100000, KEVENT_TIMER_FIRED, 0, 98);
	uk[1].ret_data[1] = 7;
	CHECK(ctl(fd, KEVENT_CTL_READY, 2, uk) == 1, "READY, one match");
	CHECK(uk[0].ret_flags == KEVENT_RET_DONE, "matched entry %#x", uk[0].ret_flags);
	CHECK(uk[1].ret_flags == (KEVENT_RET_DONE | KEVENT_RET_BROKEN) &&
	      uk[1].ret_data[1] == 7, "unmatched entry %#x %u", uk[1].ret_flags,
	      uk[1].ret_data[1]);
	CHECK(getev(fd, 0, 2, 0, out, 0) == 1, "one event (already ready: not twice)");
	CHECK(out[0].user[0] == 1 && out[0].ret_flags == KEVENT_RET_DONE &&
	      out[0].ret_data[0] == 0 && out[0].ret_data[1] == 0, "READY result");
	close(fd);
	return 0;
}

struct blocked {
	int fd;
	int ret;
	uint64_t took;
};

static void *blocked_get(void *arg)
{
	struct blocked *b = arg;
	struct ukevent out[1];
	uint64_t t0 = now_ns();

	b->ret = getev(b->fd, 1, 1, 20000000000ull, out, 0);
	b->took = now_ns() - t0;
	return NULL;
}

/* D50: READY num 0 wakes the parked call; with none it latches. */
static int t_rev2_wake(void)
{
	struct blocked b = { .fd = kopen2(0) };
	struct kevent_info info;
	struct pollfd pfd;
	pthread_t th;
	int i;

	CHECK(b.fd >= 0, "SET_ABI(2): %d", b.fd);
	pthread_create(&th, NULL, blocked_get, &b);
	for (i = 0; i < 5000; i++) {
		kinfo(b.fd, &info);
		if (info.queue_parked)
			break;
		usleep(1000);
	}
	CHECK(info.queue_parked == 1, "never parked");
	CHECK(ctl(b.fd, KEVENT_CTL_READY, 0, NULL) == 1, "READY 0 with a waiter");
	pthread_join(th, NULL);
	CHECK(b.ret == 0 && b.took < 10000000000ull, "woken call: %d", b.ret);
	pfd = (struct pollfd){ .fd = b.fd, .events = POLLIN };
	CHECK(poll(&pfd, 1, 0) == 0, "POLLIN after the wake was consumed");
	CHECK(ctl(b.fd, KEVENT_CTL_READY, 0, NULL) == 0, "READY 0 latched");
	CHECK(poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN), "latched: no POLLIN");
	blocked_get(&b);
	CHECK(b.ret == 0 && b.took < 10000000000ull, "latched wake not consumed");
	CHECK(poll(&pfd, 1, 0) == 0, "POLLIN after the latch was consumed");
	close(b.fd);
	return 0;
}

/* D43: a LEVEL socket kevent is reported again while data is unread. */
static int t_rev2_level(void)
{
	int fd = kopen2(0), sv[2];
	struct ukevent uk, out[2];
	char c = 'x';

	CHECK(fd >= 0, "SET_ABI(2): %d", fd);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
	uk = mk(KEVENT_SOCKET, sv[0], KEVENT_SOCKET_RECV, KEVENT_REQ_LEVEL, 5);
	CHECK(ctl(fd, KEVENT_CTL_ADD, 1, &uk) == 0, "ADD");
	uk = mk(KEVENT_TIMER, 1000, KEVENT_TIMER_FIRED, KEVENT_REQ_LEVEL, 6);
	CHECK(ctl(fd, KEVENT_CTL_ADD, 1, &uk) == 1 && (int)uk.ret_data[1] == -EINVAL,
	      "LEVEL timer accepted");
	CHECK(write(sv[1], &c, 1) == 1, "write");
	CHECK(getev(fd, 1, 2, 5000000000ull, out, 0) == 1, "first report");
	CHECK(getev(fd, 0, 2, 0, out, 0) == 1 && out[0].user[0] == 5, "not reported again");
	CHECK(getev(fd, 0, 2, 0, out, 0) == 1, "not reported a third time");
	CHECK(read(sv[0], &c, 1) == 1, "read");
	CHECK(getev(fd, 0, 2, 0, out, 0) == 0, "reported after the drain");
	close(sv[0]);
	close(sv[1]);
	close(fd);
	return 0;
}

/* D42: ALWAYS_QUEUE registers and queues a source ready at ADD. */
static int t_rev2_always_queue(void)
{
	int fd = kopen2(0), p[2];
	struct ukevent uk, out[2];
	struct kevent_info info;

	CHECK(fd >= 0, "SET_ABI(2): %d", fd);
	CHECK(pipe(p) == 0 && write(p[1], "x", 1) == 1, "pipe");
	uk = mk(KEVENT_POLL, p[0], POLLIN, KEVENT_REQ_ALWAYS_QUEUE, 3);
	CHECK(ctl(fd, KEVENT_CTL_ADD, 1, &uk) == 0, "ADD answered it");
	CHECK(kinfo(fd, &info) == 0 && info.queue_kevents == 1 && info.queue_ready == 1,
	      "INFO %u kevents %u ready", info.queue_kevents, info.queue_ready);
	CHECK(getev(fd, 0, 2, 0, out, 0) == 1 && out[0].user[0] == 3 &&
	      (out[0].ret_data[0] & POLLIN), "queued event");
	uk = mk(KEVENT_POLL, p[0], POLLIN, 0, 4);
	CHECK(ctl(fd, KEVENT_CTL_ADD, 1, &uk) == 1, "without the flag: answered (D31)");
	close(p[0]);
	close(p[1]);
	close(fd);
	return 0;
}

/* D51 and D52: -ENOSYS per entry; POLLRDHUP on revision 2 only. */
static int t_rev2_types_rdhup(void)
{
	int fd2 = kopen2(0), fd1 = kopen(), sv[2];
	struct ukevent uk[2], out[1];

	CHECK(fd2 >= 0, "SET_ABI(2): %d", fd2);
	uk[0] = mk(KEVENT_NAIO, 1, 1, 0, 1);
	uk[1] = mk(77, 1, 1, 0, 2);
	CHECK(ctl(fd2, KEVENT_CTL_ADD, 2, uk) == 2 && (int)uk[0].ret_data[1] == -ENOSYS &&
	      (int)uk[1].ret_data[1] == -ENOSYS, "unknown types: %d %d",
	      (int)uk[0].ret_data[1], (int)uk[1].ret_data[1]);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
	uk[0] = mk(KEVENT_POLL, sv[0], POLLIN | KEVENT_POLL_POLLRDHUP, 0, 3);
	CHECK(ctl(fd2, KEVENT_CTL_ADD, 1, uk) == 0, "ADD rev 2");
	uk[0] = mk(KEVENT_POLL, sv[0], POLLIN | KEVENT_POLL_POLLRDHUP, 0, 4);
	CHECK(ctl(fd1, KEVENT_CTL_ADD, 1, uk) == 0, "ADD rev 1");
	CHECK(shutdown(sv[1], SHUT_WR) == 0, "shutdown");
	CHECK(getev(fd2, 1, 1, 5000000000ull, out, 0) == 1 &&
	      (out[0].ret_data[0] & KEVENT_POLL_POLLRDHUP), "rev 2 bits %#x", out[0].ret_data[0]);
	CHECK(getev(fd1, 1, 1, 5000000000ull, out, 0) == 1 &&
	      !(out[0].ret_data[0] & KEVENT_POLL_POLLRDHUP) && (out[0].ret_data[0] & POLLIN),
	      "rev 1 bits %#x", out[0].ret_data[0]);
	close(sv[0]);
	close(sv[1]);
	close(fd1);
	close(fd2);
	return 0;
}

static int getev_ts(int fd, unsigned int size, int64_t sec, uint32_t nsec,
		    uint32_t flags, struct ukevent *buf)
{
	struct kevent_get_events_arg a = { .min_nr = 1, .max_nr = 1,
					   .events = (uintptr_t)buf, .flags = flags,
					   .ioc_flags = KEVENT_GET_TIMESPEC,
					   .timeout_ts = { .tv_sec = sec, .tv_nsec = nsec } };
	int ret = ioctl(fd, _IOC(_IOC_WRITE, KEVENT_IOC_MAGIC, KEVENT_IOC_NR_GET_EVENTS, size),
			&a);

	return ret < 0 ? -errno : ret;
}

/* D48: GET_EVENTS with a timespec, and what it refuses. */
static int t_rev2_timespec(void)
{
	int fd2 = kopen2(0), fd1 = kopen();
	unsigned int v1 = KEVENT_GET_EVENTS_ARG_SIZE_VER1;
	struct ukevent out[1];
	struct timespec mono;
	uint64_t t0;

	CHECK(fd2 >= 0, "SET_ABI(2): %d", fd2);
	t0 = now_ns();
	CHECK(getev_ts(fd2, v1, 0, 30000000, 0, out) == 0 && now_ns() - t0 >= 29000000ull,
	      "relative 30 ms");
	clock_gettime(CLOCK_MONOTONIC, &mono);
	t0 = now_ns();
	CHECK(getev_ts(fd2, v1, mono.tv_sec, mono.tv_nsec, KEVENT_FLAGS_ABSTIME |
		       KEVENT_FLAGS_MONOTONIC, out) == 0 && now_ns() - t0 < 1000000000ull,
	      "a past deadline waits");
	CHECK(getev_ts(fd2, v1, 0, 1000000000, 0, out) == -EINVAL, "tv_nsec 10^9");
	CHECK(getev_ts(fd2, v1, -1, 0, 0, out) == -EINVAL, "tv_sec < 0");
	CHECK(getev_ts(fd2, v1, 0, 0, KEVENT_FLAGS_MONOTONIC, out) == -EINVAL,
	      "MONOTONIC without ABSTIME");
	CHECK(getev_ts(fd2, v1, 1, 0, KEVENT_FLAGS_NO_TIMEOUT, out) == -EINVAL,
	      "NO_TIMEOUT with a timespec");
	CHECK(getev_ts(fd2, v1, 0, 0, 0x80, out) == -EINVAL, "unknown flag");
	CHECK(getev_ts(fd2, KEVENT_GET_EVENTS_ARG_SIZE_VER0, 0, 0, 0, out) == -EINVAL,
	      "VER0 size");
	CHECK(getev_ts(fd1, v1, 0, 0, 0, out) == -EINVAL, "revision 1");
	close(fd1);
	close(fd2);
	return 0;
}

/* D54: COMMIT's refusals on a ring with nothing in it. */
static int t_rev2_commit(void)
{
	int fd = kopen2(0), fd1 = kopen();
	struct kevent_uring *r = calloc(1, KEVENT_URING_SIZE(4));

	CHECK(fd >= 0, "SET_ABI(2): %d", fd);
	CHECK(kcommit(fd, 0, 0) == 0, "no ring: 0");
	CHECK(kwait(fd, 1, 0, 0, 0, 0) == -EINVAL, "WAIT without a ring");
	CHECK(ring_init(fd, r, 1) == -EINVAL, "one slot");
	CHECK(ring_init(fd, (char *)r + 4, 4) == -EINVAL, "misaligned");
	CHECK(ring_init(fd, r, 4) == 0, "RING_INIT");
	CHECK(kcommit(fd, 0, 0) == 0, "nothing to free");
	CHECK(kcommit(fd, 1, 0) == -EINVAL, "past kidx");
	CHECK(kcommit(fd, 4, 0) == -EINVAL, "out of range");
	CHECK(kcommit(fd, 0, 5) == -EOVERFLOW, "bad over");
	CHECK(kwait(fd, 1, 4, 0, 0, 0) == -EINVAL, "old_uidx out of range");
	CHECK(kwait(fd, 1, 1, 1, 0, 0) == 0, "stale old_uidx: at once");
	CHECK(ring_init(fd1, r, 4) == -ENOTTY && kcommit(fd1, 0, 0) == -ENOTTY &&
	      kwait(fd1, 1, 0, 0, 0, 0) == -ENOTTY, "revision-1 queue: unknown numbers (D40)");
	close(fd1);
	close(fd);
	free(r);
	return 0;
}

/* D28 for the ring: a 32-bit caller's ring address above 4 GiB is -EFAULT. */
static int t_rev2_compat(void)
{
	int fd;
	struct kevent_ring_init a = { .num = 4 };
	static uint64_t ring[64];

	if (sizeof(void *) != 4)
		SKIP("64-bit build");
	fd = kopen2(0);
	CHECK(fd >= 0, "SET_ABI(2): %d", fd);
	a.ring = (1ull << 32) | (uintptr_t)ring;
	CHECK(ioctl(fd, KEVENT_IOC_RING_INIT, &a) < 0 && errno == EFAULT,
	      "RING_INIT high address: %s", strerror(errno));
	CHECK(ring_init(fd, ring, 4) == 0, "RING_INIT");
	CHECK(kwait(fd, 4, 0, 0, 0, 0) == 0, "WAIT, nothing ready");
	close(fd);
	return 0;
}

/* ---- revision 3 --------------------------------------------------- */

static int kopen_rev(unsigned int rev)
{
	int fd = kopen();
	struct kevent_set_abi a = { .revision = rev };

	if (ioctl(fd, KEVENT_IOC_SET_ABI, &a) < 0) {
		close(fd);
		return -errno;
	}
	return fd;
}

static int ctlx(int fd, unsigned int cmd, unsigned int num, struct ukevent_ext *x,
		unsigned int ioc_flags)
{
	struct kevent_ctl_ext_arg a = { .cmd = cmd, .num = num, .events = (uintptr_t)x,
					.ioc_flags = ioc_flags };
	int ret = ioctl(fd, KEVENT_IOC_CTL_EXT, &a);

	return ret < 0 ? -errno : ret;
}

static struct ukevent_ext mkx(unsigned int type, uint32_t id0, uint32_t req,
			      uint32_t cookie)
{
	struct ukevent_ext x;

	memset(&x, 0, sizeof(x));
	x.ev = mk(type, id0, type == KEVENT_POSIX_TIMER ? KEVENT_TIMER_FIRED : 0, req, cookie);
	return x;
}

/* A POSIX timer entry: clock, flags, value and interval in ns. */
static struct ukevent_ext mkpt(uint32_t id0, uint32_t req, uint32_t cookie, uint32_t clock,
			       uint32_t flags, uint64_t value, uint64_t interval)
{
	struct ukevent_ext x = mkx(KEVENT_POSIX_TIMER, id0, req, cookie);

	x.ext.timer.clock = clock;
	x.ext.timer.flags = flags;
	x.ext.timer.value.tv_sec = value / 1000000000ull;
	x.ext.timer.value.tv_nsec = value % 1000000000ull;
	x.ext.timer.interval.tv_sec = interval / 1000000000ull;
	x.ext.timer.interval.tv_nsec = interval % 1000000000ull;
	return x;
}

static int64_t ts_ns(const struct kevent_timespec *ts)
{
	return ts->tv_sec * 1000000000ll + ts->tv_nsec;
}

/* D60, D61, D64: whole-call and per-entry refusals, and where they apply. */
static int t_rev3_refusals(void)
{
	int fd1 = kopen(), fd2 = kopen_rev(2), fd3 = kopen_rev(3);
	struct ukevent_ext x[3];
	struct kevent_ctl_ext_arg a = { .cmd = KEVENT_CTL_ADD, .num = 1 };
	struct kevent_info i;
	struct ukevent uk;

	CHECK(fd2 >= 0 && fd3 >= 0, "SET_ABI(2), SET_ABI(3): %d %d", fd2, fd3);
	CHECK(kinfo(fd3, &i) == 0 && i.queue_revision == 3 &&
	      (i.supported_types & (3u << KEVENT_POSIX_TIMER)) == (3u << KEVENT_POSIX_TIMER) &&
	      (i.features & (KEVENT_FEAT_POSIX_TIMER | KEVENT_FEAT_USER)) ==
	      (KEVENT_FEAT_POSIX_TIMER | KEVENT_FEAT_USER),
	      "rev-3 INFO: types %#x features %#x", i.supported_types, i.features);
	x[0] = mkx(KEVENT_USER, 1, 0, 1);
	a.events = (uintptr_t)x;
	a.ioc_flags = KEVENT_CTL_EXT;
	CHECK(ctlx(fd2, KEVENT_CTL_ADD, 1, x, KEVENT_CTL_EXT) == -EINVAL, "EXT on rev 2");
	CHECK(ctlx(fd3, KEVENT_CTL_ADD, 1, x, 0x2) == -EINVAL, "unknown ioc_flags");
	a.__pad = 1;
	CHECK(ioctl(fd3, KEVENT_IOC_CTL_EXT, &a) < 0 && errno == EINVAL, "__pad");
	CHECK(ctlx(fd2, KEVENT_CTL_QUERY, 0, x, 0) == -EINVAL, "cmd 4 on rev 2");
	CHECK(ctlx(fd3, KEVENT_CTL_QUERY, 0, x, 0) == -EINVAL, "QUERY without EXT");
	CHECK(ctlx(fd3, 5, 0, x, KEVENT_CTL_EXT) == -EINVAL, "cmd 5");
	/* D64: types 8 and 9 as before they existed below revision 3. */
	uk = mk(KEVENT_USER, 1, 0, 0, 1);
	CHECK(ctl(fd1, KEVENT_CTL_ADD, 1, &uk) == 1 && (int)uk.ret_data[1] == -EINVAL,
	      "USER on rev 1: %d", (int)uk.ret_data[1]);
	uk = mk(KEVENT_POSIX_TIMER, 1, KEVENT_TIMER_FIRED, 0, 1);
	CHECK(ctl(fd2, KEVENT_CTL_ADD, 1, &uk) == 1 && (int)uk.ret_data[1] == -ENOSYS,
	      "POSIX_TIMER on rev 2: %d", (int)uk.ret_data[1]);
	/* D58: a 40-byte POSIX timer entry has no setting. */
	uk = mk(KEVENT_POSIX_TIMER, 1, KEVENT_TIMER_FIRED, 0, 1);
	CHECK(ctl(fd3, KEVENT_CTL_ADD, 1, &uk) == 1 && (int)uk.ret_data[1] == -EINVAL,
	      "40-byte POSIX_TIMER: %d", (int)uk.ret_data[1]);
	/* Compaction moves whole 80-byte entries (D60). */
	x[0] = mkx(KEVENT_USER, 1, 0, 10);
	x[0].ext.__raw[4] = 7;		/* ext not zero: -EINVAL */
	x[1] = mkx(KEVENT_USER, 2, 0, 11);
	x[2] = mkpt(3, 0, 12, KEVENT_CLOCK_MONOTONIC, 0, 1000000000, 50000);
	CHECK(ctlx(fd3, KEVENT_CTL_ADD, 3, x, KEVENT_CTL_EXT) == 2, "ADD two refused");
	CHECK(x[0].ev.user[0] == 10 && (int)x[0].ev.ret_data[1] == -EINVAL &&
	      x[0].ext.__raw[4] == 7, "entry 0 written back whole");
	CHECK(x[1].ev.user[0] == 12 && (int)x[1].ev.ret_data[1] == -EINVAL &&
	      x[1].ext.timer.interval.tv_nsec == 50000, "entry 2 moved whole: cookie %u",
	      x[1].ev.user[0]);
	x[0] = mkpt(3, 0, 12, 2, 0, 1000000000, 0);	/* CLOCK_PROCESS_CPUTIME_ID */
	x[1] = mkpt(3, 0, 13, KEVENT_CLOCK_MONOTONIC, 0x2, 1000000000, 0);
	x[2] = mkpt(3, KEVENT_REQ_LEVEL, 14, KEVENT_CLOCK_MONOTONIC, 0, 1000000000, 0);
	CHECK(ctlx(fd3, KEVENT_CTL_ADD, 3, x, KEVENT_CTL_EXT) == 3, "bad clock, flag, LEVEL");
	x[0] = mkpt(3, 0, 12, KEVENT_CLOCK_MONOTONIC, 0, 1000000000, 0);
	x[0].ev.event = 0;
	x[1] = mkpt(3, 0, 13, KEVENT_CLOCK_MONOTONIC, 0, 1000000000, 0);
	x[1].ext.timer.value.tv_nsec = 1000000000;
	x[2] = mkpt(3, 0, 14, KEVENT_CLOCK_MONOTONIC, 0, 0, KEVENT_TIMER_MIN_INTERVAL_NS);
	CHECK(ctlx(fd3, KEVENT_CTL_ADD, 3, x, KEVENT_CTL_EXT) == 2 &&
	      x[0].ev.user[0] == 12 && x[1].ev.user[0] == 13,
	      "no FIRED, bad timespec refused; disarmed at the minimum interval accepted");
	close(fd1);
	close(fd2);
	close(fd3);
	return 0;
}

/*
 * D58: the count is the grid points passed up to the dequeue's clock
 * reading, so it lies between what the readings around ADD and around
 * GET_EVENTS allow, and two deliveries add up to the grid's total.
 */
static int t_rev3_ptimer_count(void)
{
	const uint64_t iv = 10000000;	/* 10 ms */
	int fd = kopen_rev(3);
	struct ukevent_ext x = mkpt(1, 0, 1, KEVENT_CLOCK_MONOTONIC, 0, iv, iv);
	struct ukevent out[2];
	uint64_t a0, a1, g0, g1, lo, hi, total = 0;
	int round;

	CHECK(fd >= 0, "SET_ABI(3): %d", fd);
	a0 = now_ns();
	CHECK(ctlx(fd, KEVENT_CTL_ADD, 1, &x, KEVENT_CTL_EXT) == 0, "ADD");
	a1 = now_ns();
	for (round = 0; round < 2; round++) {
		usleep(120000);
		g0 = now_ns();
		CHECK(getev(fd, 1, 2, 5000000000ull, out, 0) == 1, "one event");
		g1 = now_ns();
		CHECK(out[0].ret_flags == KEVENT_RET_DONE && out[0].ret_data[0] >= 1 &&
		      out[0].ret_data[1] == 0, "result %#x {%u, %u}", out[0].ret_flags,
		      out[0].ret_data[0], out[0].ret_data[1]);
		total += out[0].ret_data[0];
		lo = (g0 - (a1 + iv)) / iv + 1;
		hi = (g1 - (a0 + iv)) / iv + 1;
		CHECK(total >= lo && total <= hi, "round %d: %llu grid points, want %llu..%llu",
		      round, (unsigned long long)total, (unsigned long long)lo,
		      (unsigned long long)hi);
	}
	close(fd);
	return 0;
}

/* D61: QUERY, re-arm, disarm; pending expiries go with a re-arm. */
static int t_rev3_ptimer_modify(void)
{
	int fd = kopen_rev(3);
	struct ukevent_ext x[2];
	struct ukevent out[2];
	int64_t left;

	CHECK(fd >= 0, "SET_ABI(3): %d", fd);
	x[0] = mkpt(1, 0, 1, KEVENT_CLOCK_BOOTTIME, 0, 0, 0);	/* disarmed */
	x[1] = mkx(KEVENT_USER, 1, 0, 1);			/* same key but the type */
	CHECK(ctlx(fd, KEVENT_CTL_ADD, 2, x, KEVENT_CTL_EXT) == 0, "ADD");
	memset(&x[0].ext, 0xff, sizeof(x[0].ext));
	x[1].ev.ret_data[1] = 5;
	CHECK(ctlx(fd, KEVENT_CTL_QUERY, 2, x, KEVENT_CTL_EXT) == 2, "QUERY both");
	CHECK(x[0].ev.ret_flags == KEVENT_RET_DONE && x[0].ext.timer.clock == KEVENT_CLOCK_BOOTTIME &&
	      x[0].ext.timer.flags == 0 && ts_ns(&x[0].ext.timer.value) == 0 &&
	      ts_ns(&x[0].ext.timer.interval) == 0 && x[0].ext.timer.value.__pad == 0,
	      "disarmed QUERY");
	CHECK(x[1].ev.ret_flags == (KEVENT_RET_DONE | KEVENT_RET_BROKEN) &&
	      (int)x[1].ev.ret_data[1] == -EINVAL, "QUERY of a user event");
	x[0] = mkpt(1, 0, 2, KEVENT_CLOCK_BOOTTIME, 0, 0, 0);
	x[0].ev.ret_data[1] = 9;
	CHECK(ctlx(fd, KEVENT_CTL_QUERY, 1, x, KEVENT_CTL_EXT) == 0 &&
	      x[0].ev.ret_flags == (KEVENT_RET_DONE | KEVENT_RET_BROKEN) &&
	      x[0].ev.ret_data[1] == 9, "QUERY miss (D38)");
	/* Arm for an hour: time left in (0, 1 h]. */
	x[0] = mkpt(1, 0, 1, KEVENT_CLOCK_BOOTTIME, 0, 3600000000000ull, 1000000000);
	CHECK(ctlx(fd, KEVENT_CTL_MODIFY, 1, x, KEVENT_CTL_EXT) == 0 &&
	      x[0].ev.ret_flags == KEVENT_RET_DONE, "MODIFY arm");
	CHECK(ctlx(fd, KEVENT_CTL_QUERY, 1, x, KEVENT_CTL_EXT) == 1, "QUERY armed");
	left = ts_ns(&x[0].ext.timer.value);
	CHECK(left > 3500000000000ll && left <= 3600000000000ll &&
	      ts_ns(&x[0].ext.timer.interval) == 1000000000 && x[0].ev.ret_data[0] == 0,
	      "armed QUERY: left %lld", (long long)left);
	/* One 1 ms expiry: counted by QUERY, kept; the one-shot is then disarmed. */
	x[0] = mkpt(1, 0, 1, KEVENT_CLOCK_BOOTTIME, 0, 1000000, 0);
	CHECK(ctlx(fd, KEVENT_CTL_MODIFY, 1, x, KEVENT_CTL_EXT) == 0, "MODIFY 1 ms");
	usleep(50000);
	CHECK(ctlx(fd, KEVENT_CTL_QUERY, 1, x, KEVENT_CTL_EXT) == 1 &&
	      x[0].ev.ret_data[0] == 1 && ts_ns(&x[0].ext.timer.value) == 0,
	      "QUERY after the expiry: %u, left %lld", x[0].ev.ret_data[0],
	      (long long)ts_ns(&x[0].ext.timer.value));
	CHECK(getev(fd, 1, 2, 5000000000ull, out, 0) == 1 && out[0].ret_data[0] == 1 &&
	      out[0].user[0] == 1, "one expiry delivered");
	/* Periodic 1 ms, then re-armed disarmed: what was pending is gone. */
	x[0] = mkpt(1, 0, 1, KEVENT_CLOCK_MONOTONIC, 0, 1000000, 1000000);
	CHECK(ctlx(fd, KEVENT_CTL_MODIFY, 1, x, KEVENT_CTL_EXT) == 0, "MODIFY periodic");
	usleep(30000);
	x[0] = mkpt(1, 0, 1, KEVENT_CLOCK_MONOTONIC, 0, 0, 0);
	CHECK(ctlx(fd, KEVENT_CTL_MODIFY, 1, x, KEVENT_CTL_EXT) == 0, "MODIFY disarm");
	CHECK(getev(fd, 0, 2, 0, out, 0) == 0, "pending expiries survived the disarm");
	/* A 40-byte MODIFY replaces event and req_flags only; FIRED is required. */
	out[0] = x[0].ev;
	out[0].event = 0;
	CHECK(ctl(fd, KEVENT_CTL_MODIFY, 1, out) == 0 && (int)out[0].ret_data[1] == -EINVAL,
	      "MODIFY without FIRED");
	close(fd);
	return 0;
}

/* D58: an absolute expiry already past fires through the ready list. */
static int t_rev3_ptimer_abs_past(void)
{
	int fd = kopen_rev(3);
	struct ukevent_ext x = mkpt(1, KEVENT_REQ_ONESHOT, 1, KEVENT_CLOCK_MONOTONIC,
				    KEVENT_TIMER_ABSTIME, 1, 0);
	struct ukevent out[2];
	struct kevent_info i;

	CHECK(fd >= 0, "SET_ABI(3): %d", fd);
	CHECK(ctlx(fd, KEVENT_CTL_ADD, 1, &x, KEVENT_CTL_EXT) == 0, "ADD answered it");
	CHECK(getev(fd, 1, 2, 5000000000ull, out, 0) == 1 && out[0].ret_data[0] == 1,
	      "past expiry: one grid point");
	CHECK(kinfo(fd, &i) == 0 && i.queue_kevents == 0, "ONESHOT not freed");
	close(fd);
	return 0;
}

struct ptimer_jump {
	int fd;
	int ret;
	struct ukevent out[4];
};

static void *ptimer_jump_get(void *arg)
{
	struct ptimer_jump *j = arg;

	j->ret = getev(j->fd, 2, 4, 20000000000ull, j->out, 0);
	return NULL;
}

/*
 * D58: setting CLOCK_REALTIME forward fires an ABSTIME realtime timer with
 * every grid point passed counted; a relative realtime timer (on
 * CLOCK_MONOTONIC) does not move.
 */
static int t_rev3_ptimer_clock_set(void)
{
	struct ptimer_jump j = { .fd = kopen_rev(3), .ret = 1 };
	struct ukevent_ext x[3];
	struct timespec ts, t1;
	struct kevent_info info;
	pthread_t th;
	uint64_t v, lo, hi, n = 0;
	int i;

	CHECK(j.fd >= 0, "SET_ABI(3): %d", j.fd);
	clock_gettime(CLOCK_REALTIME, &ts);
	v = (uint64_t)(ts.tv_sec + 3600) * 1000000000ull;
	x[0] = mkpt(1, 0, 1, KEVENT_CLOCK_REALTIME, KEVENT_TIMER_ABSTIME, v, 1000000000);
	x[1] = mkpt(2, 0, 2, KEVENT_CLOCK_REALTIME, KEVENT_TIMER_ABSTIME, v, 0);
	x[2] = mkpt(3, 0, 3, KEVENT_CLOCK_REALTIME, 0, 3600000000000ull, 0);
	CHECK(ctlx(j.fd, KEVENT_CTL_ADD, 3, x, KEVENT_CTL_EXT) == 0, "ADD");
	pthread_create(&th, NULL, ptimer_jump_get, &j);
	for (i = 0; i < 5000; i++) {
		kinfo(j.fd, &info);
		if (info.queue_parked)
			break;
		usleep(1000);
	}
	ts.tv_sec += 7200;
	if (clock_settime(CLOCK_REALTIME, &ts)) {
		x[0] = mkpt(1, 0, 1, KEVENT_CLOCK_REALTIME, 0, 1, 0);
		x[1] = mkpt(2, 0, 2, KEVENT_CLOCK_REALTIME, 0, 1, 0);
		ctlx(j.fd, KEVENT_CTL_MODIFY, 2, x, KEVENT_CTL_EXT);
		pthread_join(th, NULL);
		close(j.fd);
		SKIP("clock_settime: %s", strerror(errno));
	}
	pthread_join(th, NULL);
	clock_gettime(CLOCK_REALTIME, &t1);
	x[2] = mkpt(3, 0, 3, 0, 0, 0, 0);
	ctlx(j.fd, KEVENT_CTL_QUERY, 1, &x[2], KEVENT_CTL_EXT);
	t1.tv_sec -= 7200;
	clock_settime(CLOCK_REALTIME, &t1);
	CHECK(j.ret == 2, "GET_EVENTS after the clock jump: %d", j.ret);
	for (i = 0; i < 2; i++) {
		CHECK(j.out[i].user[0] != 3, "the relative realtime timer fired");
		if (j.out[i].user[0] == 1)
			n = j.out[i].ret_data[0];
		else
			CHECK(j.out[i].ret_data[0] == 1, "one-shot count %u", j.out[i].ret_data[0]);
	}
	/* 7200 s forward, the grid 3600 s ahead at 1 s: about 3601 points. */
	lo = 3600 - 5;
	hi = 3600 + 60;
	CHECK(n >= lo && n <= hi, "periodic count %llu, want %llu..%llu", (unsigned long long)n,
	      (unsigned long long)lo, (unsigned long long)hi);
	CHECK(ts_ns(&x[2].ext.timer.value) > 3000000000000ll,
	      "relative realtime timer moved: left %lld", (long long)ts_ns(&x[2].ext.timer.value));
	close(j.fd);
	return 0;
}

/* D62: triggers merge (OR, count) and delivery clears them. */
static int t_rev3_user(void)
{
	int fd = kopen_rev(3);
	struct ukevent_ext x[2];
	struct ukevent uk[2], out[2];
	pid_t pid;
	int st;

	CHECK(fd >= 0, "SET_ABI(3): %d", fd);
	x[0] = mkx(KEVENT_USER, 7, 0, 1);
	x[1] = mkpt(7, 0, 1, KEVENT_CLOCK_MONOTONIC, 0, 0, 0);	/* same id and cookie */
	CHECK(ctlx(fd, KEVENT_CTL_ADD, 2, x, KEVENT_CTL_EXT) == 0, "ADD");
	uk[0] = mk(KEVENT_USER, 7, 0x1, 0, 1);
	uk[1] = mk(KEVENT_USER, 7, 0x4, 0, 1);
	CHECK(ctl(fd, KEVENT_CTL_READY, 1, &uk[0]) == 1, "READY 1");
	CHECK(ctl(fd, KEVENT_CTL_READY, 1, &uk[1]) == 1, "READY 2");
	CHECK(getev(fd, 0, 2, 0, out, 0) == 1, "one event, the user one");
	CHECK(out[0].type == KEVENT_USER && out[0].ret_flags == KEVENT_RET_DONE &&
	      out[0].ret_data[0] == 0x5 && out[0].ret_data[1] == 2,
	      "merged {%#x, %u}", out[0].ret_data[0], out[0].ret_data[1]);
	CHECK(getev(fd, 0, 2, 0, out, 0) == 0, "delivered twice");
	/* From a child process that holds the fd. */
	pid = fork();
	if (pid == 0) {
		uk[0] = mk(KEVENT_USER, 7, 0x8, 0, 1);
		_exit(ctl(fd, KEVENT_CTL_READY, 1, &uk[0]) == 1 ? 0 : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	      WEXITSTATUS(st) == 0, "child READY");
	CHECK(getev(fd, 1, 2, 5000000000ull, out, 0) == 1 && out[0].ret_data[0] == 0x8 &&
	      out[0].ret_data[1] == 1, "after delivery: {%#x, %u}", out[0].ret_data[0],
	      out[0].ret_data[1]);
	/* D63: REMOVE by type takes the user event only. */
	uk[0] = mk(KEVENT_USER, 7, 0, 0, 1);
	CHECK(ctl(fd, KEVENT_CTL_REMOVE, 1, uk) == 0 && uk[0].ret_flags == KEVENT_RET_DONE,
	      "REMOVE user");
	uk[0] = mk(KEVENT_USER, 7, 0, 0, 1);
	CHECK(ctl(fd, KEVENT_CTL_REMOVE, 1, uk) == 0 &&
	      uk[0].ret_flags == (KEVENT_RET_DONE | KEVENT_RET_BROKEN), "REMOVE user again");
	uk[0] = mk(KEVENT_POSIX_TIMER, 7, 0, 0, 1);
	CHECK(ctl(fd, KEVENT_CTL_REMOVE, 1, uk) == 0 && uk[0].ret_flags == KEVENT_RET_DONE,
	      "REMOVE timer");
	close(fd);
	/* D7 on revision 2: the type is not compared. */
	fd = kopen_rev(2);
	CHECK(fd >= 0, "SET_ABI(2): %d", fd);
	uk[0] = mk(KEVENT_TIMER, 100000, KEVENT_TIMER_FIRED, 0, 1);
	CHECK(ctl(fd, KEVENT_CTL_ADD, 1, uk) == 0, "ADD");
	uk[0].type = KEVENT_POLL;
	CHECK(ctl(fd, KEVENT_CTL_REMOVE, 1, uk) == 0 && uk[0].ret_flags == KEVENT_RET_DONE,
	      "rev 2 REMOVE by id");
	close(fd);
	return 0;
}

/* ------------------------------------------------------------------ */

static void run(const char *name, int (*fn)(void))
{
	int r;

	why[0] = 0;
	r = fn();
	if (r == 0) {
		npass++;
		printf("PASS %s\n", name);
	} else if (r > 0) {
		nskip++;
		printf("SKIP %s %s\n", name, why);
	} else {
		nfail++;
		printf("FAIL %s %s (errno %s)\n", name, why, strerror(errno));
	}
	fflush(stdout);
}

/* Each eventfd written once: N new edges for whatever watches them. */
static int bench_produce(const int *efd, int n)
{
	uint64_t one = 1;
	int i;

	for (i = 0; i < n; i++)
		if (write(efd[i], &one, 8) != 8)
			return -1;
	return 0;
}

static int bench_await_ready(int fd, int n)
{
	struct kevent_info info;
	int i;

	for (i = 0; i < 2000; i++) {
		kinfo(fd, &info);
		if (info.queue_ready == (uint32_t)n)
			return 0;
		usleep(1000);
	}
	return -1;
}

/* Revision 2: the same N eventfds drained through the ring, WAIT + COMMIT. */
static void bench_ring(const int *efd, int n, int batch, int rounds)
{
	enum { NUM = 4096 };
	struct kevent_uring *r = calloc(1, KEVENT_URING_SIZE(NUM));
	struct ukevent *uk = calloc(n, sizeof(*uk));
	uint64_t t0, drain = 0, events = 0;
	unsigned int uidx = 0;
	int fd = kopen2(0), i, k;

	if (fd < 0 || ring_init(fd, r, NUM)) {
		printf("bench ring: revision 2 not served (%d)\n", fd);
		return;
	}
	for (i = 0; i < n; i++) {
		uint64_t v;

		/* the GET_EVENTS bench left them readable: ready at ADD otherwise */
		if (read(efd[i], &v, sizeof(v)) < 0 && errno != EAGAIN)
			break;
		uk[i] = mk(KEVENT_POLL, efd[i], POLLIN, 0, i);
	}
	if (ctl(fd, KEVENT_CTL_ADD, n, uk) != 0) {
		printf("bench ring: ADD failed\n");
		return;
	}
	for (k = 0; k < rounds; k++) {
		int got = 0;

		if (bench_produce(efd, n) || bench_await_ready(fd, n))
			break;
		t0 = now_ns();
		while (got < n) {
			int m = kwait(fd, batch, uidx, 1, 0, 0);

			if (m <= 0)
				break;
			uidx = __atomic_load_n(&r->ring_kidx, __ATOMIC_ACQUIRE);
			if (kcommit(fd, uidx, __atomic_load_n(&r->ring_over, __ATOMIC_ACQUIRE)) != m)
				break;
			got += m;
		}
		drain += now_ns() - t0;
		events += got;
	}
	printf("bench WAIT+COMMIT batch %d: %.0f events/s (%llu events)\n",
	       batch, events / (drain / 1e9), (unsigned long long)events);
	close(fd);
	free(uk);
	free(r);
}

/* The same N eventfds, edge-triggered, drained with epoll_wait. */
static void bench_epoll(const int *efd, int n, int batch, int rounds)
{
	struct epoll_event ev[64], e = { .events = EPOLLIN | EPOLLET };
	uint64_t t0, drain = 0, events = 0;
	int ep = epoll_create1(EPOLL_CLOEXEC), i, k;

	if (batch > 64)
		batch = 64;
	for (i = 0; i < n; i++) {
		e.data.u32 = i;
		epoll_ctl(ep, EPOLL_CTL_ADD, efd[i], &e);
	}
	epoll_wait(ep, ev, 64, 0);
	for (k = 0; k < rounds; k++) {
		int got = 0;

		/* all N are ready once written: epoll's list fills in the write */
		while (epoll_wait(ep, ev, 64, 0) > 0)
			;
		if (bench_produce(efd, n))
			break;
		t0 = now_ns();
		while (got < n) {
			int m = epoll_wait(ep, ev, batch, 1000);

			if (m <= 0)
				break;
			got += m;
		}
		drain += now_ns() - t0;
		events += got;
	}
	printf("bench epoll_wait batch %d: %.0f events/s (%llu events)\n",
	       batch, events / (drain / 1e9), (unsigned long long)events);
	close(ep);
}

static int bench(void)
{
	enum { N = 1024, BATCH = 64, ROUNDS = 20, LOOPS = 10000 };
	int fd = kopen(), efd[N], i, r, got;
	struct ukevent *uk = calloc(N, sizeof(*uk)), out[BATCH];
	struct kevent_info info;
	uint64_t t0, t, drain = 0, events = 0;
	struct rlimit rl = { N + 64, N + 64 };

	setrlimit(RLIMIT_NOFILE, &rl);
	t0 = now_ns();
	for (i = 0; i < LOOPS; i++)
		kinfo(fd, &info);
	t = now_ns() - t0;
	printf("bench ioctl INFO: %.2f us/call (%d calls)\n", t / 1e3 / LOOPS, LOOPS);
	t0 = now_ns();
	for (i = 0; i < LOOPS; i++)
		getev(fd, 0, 1, 0, out, 0);
	t = now_ns() - t0;
	printf("bench ioctl GET_EVENTS(empty): %.2f us/call\n", t / 1e3 / LOOPS);

	for (i = 0; i < N; i++) {
		efd[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (efd[i] < 0) {
			printf("bench: eventfd %d: %s\n", i, strerror(errno));
			return 1;
		}
		uk[i] = mk(KEVENT_POLL, efd[i], POLLIN, 0, i);
	}
	if (ctl(fd, KEVENT_CTL_ADD, N, uk) != 0) {
		printf("bench: ADD failed\n");
		return 1;
	}
	for (r = 0; r < ROUNDS; r++) {
		uint64_t one = 1;

		/* producer: make N events ready, then drain at batch 64 */
		for (i = 0; i < N; i++)
			if (write(efd[i], &one, 8) != 8)
				return 1;
		for (i = 0; i < 2000; i++) {
			kinfo(fd, &info);
			if (info.queue_ready == N)
				break;
			usleep(1000);
		}
		t0 = now_ns();
		got = 0;
		while (got < N) {
			int n = getev(fd, 1, BATCH, 1000000000ull, out, 0);

			if (n <= 0)
				break;
			got += n;
		}
		drain += now_ns() - t0;
		events += got;
	}
	printf("bench GET_EVENTS batch %d: %.0f events/s (%llu events, %d rounds of %d)\n",
	       BATCH, events / (drain / 1e9), (unsigned long long)events, ROUNDS, N);
	close(fd);
	bench_ring(efd, N, BATCH, ROUNDS);
	bench_epoll(efd, N, BATCH, ROUNDS);
	return 0;
}

int main(int argc, char **argv)
{
	int fd;

	dev = getenv("KEVENT_DEVICE");
	if (!dev)
		dev = "/dev/kevent";
	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = kopen();
	if (kinfo(fd, &info0)) {
		printf("FAIL info %s\n", strerror(errno));
		return 1;
	}
	close(fd);
	printf("# %s: backend %u features %#x types %#x\n", dev, info0.backend,
	       info0.features, info0.supported_types);
	if (argc > 1 && !strcmp(argv[1], "bench"))
		return bench();
	if (info0.backend != KEVENT_BACKEND_MODULE) {
		printf("kmod-smoke: backend %u is not the module; the client suite covers it\n",
		       info0.backend);
		return 77;
	}

	run("info", t_info);
	run("dispatch", t_dispatch);
	run("ctl_header", t_ctl_header);
	run("per_entry_errors", t_per_entry);
	run("timer_periodic", t_timer);
	run("timer_oneshot", t_oneshot);
	run("ring_mmap", t_ring);
	run("mmap_refusals", t_mmap_refusals);
	run("get_events_bounds", t_get_bounds);
	run("signal_no_eintr", t_signal);
	run("poll_pipe", t_poll_pipe);
	run("poll_ready_at_add", t_poll_ready_at_add);
	run("modify", t_modify);
	run("refused_fds", t_refused_fds);
	run("socket", t_socket);
	run("limit_4095", t_limit);
	run("waiters_order", t_waiters_order);
	run("teardown_under_fire", t_teardown);
	run("set_abi", t_set_abi);
	run("readonly_output", t_readonly_out);
	run("compat_high_address", t_compat_addr);
	run("inode", t_inode);
	run("stress", t_stress);
	run("rev2_ring_rounds", t_rev2_rounds);
	run("rev2_ring_fault", t_rev2_fault);
	run("rev2_eintr_not_restarted", t_rev2_eintr);
	run("rev2_abstime_clock_set", t_rev2_abstime);
	run("rev2_compat_ring", t_rev2_compat);
	run("rev2_ready", t_rev2_ready);
	run("rev2_ready_wake_latch", t_rev2_wake);
	run("rev2_level", t_rev2_level);
	run("rev2_always_queue", t_rev2_always_queue);
	run("rev2_enosys_rdhup", t_rev2_types_rdhup);
	run("rev2_timespec", t_rev2_timespec);
	run("rev2_commit_refusals", t_rev2_commit);
	run("rev3_refusals", t_rev3_refusals);
	run("rev3_ptimer_count", t_rev3_ptimer_count);
	run("rev3_ptimer_modify_query", t_rev3_ptimer_modify);
	run("rev3_ptimer_abs_past", t_rev3_ptimer_abs_past);
	run("rev3_ptimer_clock_set", t_rev3_ptimer_clock_set);
	run("rev3_user", t_rev3_user);
	printf("%d passed, %d failed, %d skipped\n", npass, nfail, nskip);
	return nfail ? 1 : 0;
}
