// SPDX-License-Identifier: GPL-2.0
/*
 * The ioctl transport itself: INFO, the strict wrapper structs (A1, D24),
 * the errors the ioctl layer gives (D11), read()/write() (D15), RING_SHM.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ktest.h"

#define IOC_W(nr, size) _IOC(_IOC_WRITE, KEVENT_IOC_MAGIC, (nr), (size))
#define IOC_R(nr, size) _IOC(_IOC_READ, KEVENT_IOC_MAGIC, (nr), (size))

/* The ioctl's result (0 or -errno) must be want; says what came instead. */
#define EXPECT_RC(call, want, what)							\
	do {										\
		int r_ = (call), w_ = (want);						\
		cr_assert_eq(r_, w_, "%s: got %d (%s), want %d (%s)", (what), r_,	\
			     r_ < 0 ? strerror(-r_) : "success", w_,			\
			     w_ < 0 ? strerror(-w_) : "success");			\
	} while (0)

KTEST(ioctl, info_contents)
{
	int kfd = kt_open(O_RDWR);
	struct kevent_info i;

	kt_info(kfd, &i);
	cr_assert_eq(i.size, (__u32)sizeof(i), "INFO size %u, want %zu: a backend of this tree fills "
		     "this header's INFO", i.size, sizeof(i));
	cr_assert_geq(i.abi_revision, 1u, "INFO abi_revision %u: every backend serves revision 1",
		      i.abi_revision);
	cr_assert(i.backend == KEVENT_BACKEND_CUSE || i.backend == KEVENT_BACKEND_MODULE ||
		  i.backend == KEVENT_BACKEND_FUSE,
		  "a device backend must be cuse, module or fuse, INFO says %u", i.backend);
	cr_assert_eq(i.ukevent_size, 40u);
	cr_assert_eq(i.mukevent_size, 16u);
	cr_assert_eq(i.ring_page_size, (__u32)KEVENT_RING_PAGE_SIZE);
	cr_assert_eq(i.ring_slots_per_page, (__u32)KEVENTS_ON_PAGE);
	cr_assert_eq(i.ring_pages, (__u32)KEVENT_RING_PAGES);
	cr_assert_eq(i.ring_slots, (__u32)KEVENT_MAX_EVENTS);
	cr_assert_eq(i.max_kevents, (__u32)KEVENT_MAX_EVENTS - 1);
	/* abi.md 2.6 and 6: 3276 on the CUSE retry path (B4), else 4095. */
	__u32 batch = i.features & KEVENT_FEAT_RETRY_PATH ? 3276u : 4095u;
	cr_assert_eq(i.max_ctl_num, batch, "max_ctl_num %u (features %#x)", i.max_ctl_num, i.features);
	cr_assert_eq(i.max_get_nr, batch, "max_get_nr %u (features %#x)", i.max_get_nr, i.features);
	cr_assert(i.features & (KEVENT_FEAT_PROCESS_VM | KEVENT_FEAT_RETRY_PATH) ||
		  i.backend == KEVENT_BACKEND_MODULE, "cuse must say how arrays move: %#x", i.features);
	/* A3: TIMER and POLL always; NAIO and AIO never. */
	cr_assert(i.supported_types & (1u << KEVENT_TIMER));
	cr_assert(i.supported_types & (1u << KEVENT_POLL));
	cr_assert_eq(i.supported_types & ((1u << KEVENT_NAIO) | (1u << KEVENT_AIO)), 0u);
	cr_assert_eq(i.supported_types >> KEVENT_MAX, 0u, "types beyond KEVENT_MAX: %#x", i.supported_types);
	cr_assert_eq(i.queue_kevents, 0u);
	cr_assert_eq(i.queue_ready, 0u);
	cr_assert(i.live_queues >= 1, "live_queues %llu with this queue open",
		  (unsigned long long)i.live_queues);
	for (int l = 0; l < KEVENT_LIMIT_NR; l++)
		cr_assert(!i.limits[l].cap || i.limits[l].used <= i.limits[l].cap,
			  "limit %d: used %u > cap %u", l, i.limits[l].used, i.limits[l].cap);
	cr_assert(i.limits[KEVENT_LIMIT_QUEUES].used >= 1 || i.limits[KEVENT_LIMIT_QUEUES].cap == 0,
		  "queue use not counted");
	close(kfd);
}

KTEST(ioctl, info_features_per_backend)
{
	const struct kevent_info *i = kt_backend_info();

	if (i->backend == KEVENT_BACKEND_MODULE) {
		cr_assert(i->features & KEVENT_FEAT_RING_MMAP, "module must mmap: %#x", i->features);
		cr_assert_eq(i->features & (KEVENT_FEAT_RING_SHM | KEVENT_FEAT_RETRY_PATH), 0u,
			     "module features %#x", i->features);
	} else if (i->backend == KEVENT_BACKEND_FUSE) {
		/* The file's page cache is the ring; RING_SHM names the same bytes. */
		cr_assert_eq(i->features & (KEVENT_FEAT_RING_MMAP | KEVENT_FEAT_RING_SHM),
			     (__u32)(KEVENT_FEAT_RING_MMAP | KEVENT_FEAT_RING_SHM),
			     "fuse maps both ways: %#x", i->features);
	} else {
		cr_assert(i->features & KEVENT_FEAT_RING_SHM, "cuse must export the ring: %#x", i->features);
		cr_assert_eq(i->features & KEVENT_FEAT_RING_MMAP, 0u, "CUSE cannot mmap: %#x", i->features);
	}
}

/* One ADD of uk on a fresh queue of this revision: 1 registered, 0 refused (asserted). */
static int type_served(struct ukevent uk)
{
	int kfd = kt_open(O_RDWR), r = kevent_ctl(kfd, KEVENT_CTL_ADD, 1, &uk);
	int unknown = kt_rev() >= 2 ? -ENOSYS : -EINVAL;	/* A3, D51 */

	cr_assert(r == 0 || (r == 1 && (int)uk.ret_data[1] == unknown),
		  "type %u: ADD %d, ret_flags %#x, ret_data[1] %d", uk.type, r, uk.ret_flags,
		  (int)uk.ret_data[1]);
	close(kfd);
	return r == 0;
}

/*
 * A3: supported_types says which project types the backend serves: the bit
 * of SOCKET and of INODE is set exactly when an ADD of that type on a
 * valid fd registers the kevent (not advertised: the entry fails as an
 * unknown type).
 */
KTEST(ioctl, supported_types_match_what_add_serves)
{
	kt_require_feature(KEVENT_FEAT_FD_ORIGINS, "ADD of an fd-taking type needs the caller's fds");
	__u32 types = kt_backend_info()->supported_types;
	int sv[2], d = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	cr_assert(d >= 0, "open /tmp: %s", strerror(errno));
	kt_socketpair(SOCK_STREAM, sv);
	cr_assert_eq(type_served(kt_uk(KEVENT_SOCKET, (__u32)sv[0], 0, KEVENT_SOCKET_RECV, 0, 1)),
		     !!(types & (1u << KEVENT_SOCKET)), "SOCKET served vs supported_types %#x", types);
	cr_assert_eq(type_served(kt_uk(KEVENT_INODE, (__u32)d, 0, KEVENT_INODE_CREATE, 0, 2)),
		     !!(types & (1u << KEVENT_INODE)), "INODE served vs supported_types %#x", types);
	close(sv[0]);
	close(sv[1]);
	close(d);
}

KTEST(ioctl, info_counts_queue)
{
	int kfd = kt_open(O_RDWR), p[2];

	kt_pipe(p);
	kt_add_queued(kfd, kt_uk_poll(p[0], KEVENT_POLL_POLLIN, 0, 1));
	kt_add_queued(kfd, kt_uk_timer(3600000, 0, 2));
	cr_assert_eq(kt_queue_kevents(kfd), 2u);
	cr_assert_eq(kt_queue_ready(kfd), 0u);
	kt_write1(p[1]);
	cr_assert(kt_wait_ready(kfd, 1, 5000), "pipe write did not make the kevent ready");
	cr_assert_eq(kt_queue_ready(kfd), 1u);
	close(kfd);
}

/* D24: INFO smaller than VER0 is EINVAL. */
KTEST(ioctl, info_below_ver0_einval)
{
	int kfd = kt_open(O_RDWR);
	unsigned char buf[2048];

	memset(buf, 0xa5, sizeof(buf));
	EXPECT_RC(kt_ioctl(kfd, IOC_R(KEVENT_IOC_NR_INFO, 8), buf), -EINVAL, "INFO size 8 < VER0");
	EXPECT_RC(kt_ioctl(kfd, IOC_R(KEVENT_IOC_NR_INFO, KEVENT_INFO_SIZE_VER0 - 8), buf), -EINVAL,
		  "INFO size VER0 - 8");
	close(kfd);
}

/* D24: INFO above KEVENT_IOC_ARG_MAX is E2BIG. */
KTEST(ioctl, info_above_arg_max_e2big)
{
	int kfd = kt_open(O_RDWR);
	unsigned char buf[2048];

	cr_assert_eq(kt_ioctl(kfd, IOC_R(KEVENT_IOC_NR_INFO, KEVENT_IOC_ARG_MAX + 8), buf), -E2BIG,
		     "INFO size above KEVENT_IOC_ARG_MAX");
	close(kfd);
}

/* D24, docs/abi-change.md 4: a larger caller gets what the backend knows and a zero tail. */
KTEST(ioctl, info_larger_caller_zero_tail)
{
	int kfd = kt_open(O_RDWR);
	unsigned char buf[2048];

	memset(buf, 0, sizeof(buf));
	EXPECT_RC(kt_ioctl(kfd, IOC_R(KEVENT_IOC_NR_INFO, 256), buf), 0, "INFO of a newer, larger caller");
	struct kevent_info *i = (struct kevent_info *)buf;
	cr_assert_eq(i->size, (__u32)KEVENT_INFO_SIZE_VER2, "INFO size field %u: bytes the backend filled",
		     i->size);
	cr_assert_eq(i->ukevent_size, 40u);
	for (int k = KEVENT_INFO_SIZE_VER2; k < 256; k++)
		cr_assert_eq(buf[k], 0, "INFO wrote byte %d past what it knows", k);
	close(kfd);
}

/* docs/abi-change.md 4: a VER0 caller gets VER0 bytes, size VER0, nothing past them. */
KTEST(ioctl, info_ver0_caller_gets_ver0)
{
	int kfd = kt_open(O_RDWR);
	unsigned char buf[256];

	memset(buf, 0xa5, sizeof(buf));
	EXPECT_RC(kt_ioctl(kfd, IOC_R(KEVENT_IOC_NR_INFO, KEVENT_INFO_SIZE_VER0), buf), 0,
		  "INFO of a VER0 caller");
	struct kevent_info *i = (struct kevent_info *)buf;
	cr_assert_eq(i->size, (__u32)KEVENT_INFO_SIZE_VER0, "INFO size field %u for a VER0 caller",
		     i->size);
	cr_assert_eq(i->ukevent_size, 40u);
	for (int k = KEVENT_INFO_SIZE_VER0; k < (int)sizeof(buf); k++)
		cr_assert_eq(buf[k], 0xa5, "INFO wrote byte %d past a VER0 caller's struct", k);
	close(kfd);
}

static void *park_one(void *arg)
{
	struct ukevent out[1];

	return (void *)(intptr_t)kt_get(*(int *)arg, 1, 1, KT_MS(60000), out);
}

/* INFO queue_parked: this queue's parked calls, from the park to the event. */
KTEST(ioctl, info_queue_parked_counts_this_queue)
{
	int kfd = kt_open(O_RDWR), other = kt_open(O_RDWR);
	pthread_t th;
	void *ret;

	cr_assert_eq(kt_queue_parked(kfd), 0u, "a fresh queue has parked calls");
	cr_assert_eq(pthread_create(&th, NULL, park_one, &kfd), 0);
	kt_await_parked(kfd, 1, 10000);
	cr_assert_eq(kt_queue_parked(other), 0u, "another queue's parked call counted here");
	kt_add_queued(kfd, kt_uk_timer(1, KEVENT_REQ_ONESHOT, 1));
	pthread_join(th, &ret);
	cr_assert_eq((int)(intptr_t)ret, 1, "the parked call returned %d", (int)(intptr_t)ret);
	cr_assert_eq(kt_queue_parked(kfd), 0u, "a served call still counted as parked");
	close(other);
	close(kfd);
}

/*
 * A valid call of wrapper nr through a struct of size bytes, byte dirty_at
 * of it set to 1 unless 0: the result, -errno.  CTL adds one hour-long
 * timer (cookie); GET_EVENTS takes up to 2 without waiting; SET_ABI asks
 * for this queue's own revision.
 */
static int sized(int kfd, unsigned int nr, size_t size, size_t dirty_at, __u32 cookie)
{
	static unsigned char buf[KEVENT_IOC_ARG_MAX + 64];
	static struct ukevent uk[2];
	struct kevent_ctl_arg *c = (struct kevent_ctl_arg *)buf;
	struct kevent_get_events_arg *g = (struct kevent_get_events_arg *)buf;
	struct kevent_set_abi *a = (struct kevent_set_abi *)buf;

	memset(buf, 0, sizeof(buf));
	if (nr == KEVENT_IOC_NR_CTL) {
		uk[0] = kt_uk_timer(3600000, 0, cookie);
		c->cmd = KEVENT_CTL_ADD;
		c->num = 1;
		c->events = (__u64)(uintptr_t)uk;
	} else if (nr == KEVENT_IOC_NR_GET_EVENTS) {
		g->max_nr = 2;
		g->events = (__u64)(uintptr_t)uk;
	} else {
		a->revision = (__u32)kt_rev();
	}
	if (dirty_at)
		buf[dirty_at] = 1;
	return kt_ioctl(kfd, IOC_W(nr, size), buf);
}

#define CTL_SIZED(kfd, size, dirty_at, cookie) sized(kfd, KEVENT_IOC_NR_CTL, size, dirty_at, cookie)

/* D24: a CTL wrapper below VER0 is EINVAL, without effect. */
KTEST(ioctl, ctl_wrapper_below_ver0_einval)
{
	int kfd = kt_open(O_RDWR);

	EXPECT_RC(CTL_SIZED(kfd, 8, 0, 1), -EINVAL, "CTL size 8");
	EXPECT_RC(CTL_SIZED(kfd, 15, 0, 1), -EINVAL, "CTL size 15");
	cr_assert_eq(kt_queue_kevents(kfd), 0u);
	close(kfd);
}

/* D24: a CTL wrapper above KEVENT_IOC_ARG_MAX is E2BIG, without effect. */
KTEST(ioctl, ctl_wrapper_above_arg_max_e2big)
{
	int kfd = kt_open(O_RDWR);

	EXPECT_RC(CTL_SIZED(kfd, KEVENT_IOC_ARG_MAX + 1, 0, 1), -E2BIG,
		  "CTL size above KEVENT_IOC_ARG_MAX");
	cr_assert_eq(kt_queue_kevents(kfd), 0u);
	close(kfd);
}

/* D24: a larger CTL wrapper with a non-zero tail is E2BIG, without effect. */
KTEST(ioctl, ctl_wrapper_dirty_tail_e2big)
{
	int kfd = kt_open(O_RDWR);

	EXPECT_RC(CTL_SIZED(kfd, 48, 40, 1), -E2BIG, "non-zero tail");
	cr_assert_eq(kt_queue_kevents(kfd), 0u, "a refused wrapper had an effect");
	EXPECT_RC(CTL_SIZED(kfd, KEVENT_IOC_ARG_MAX, KEVENT_IOC_ARG_MAX - 1, 1), -E2BIG,
		  "non-zero last byte of a KEVENT_IOC_ARG_MAX struct");
	cr_assert_eq(kt_queue_kevents(kfd), 0u, "a refused wrapper had an effect");
	close(kfd);
}

/* D24: a larger CTL wrapper with a zero tail works as VER0. */
KTEST(ioctl, ctl_wrapper_zero_tail_accepted)
{
	int kfd = kt_open(O_RDWR);

	EXPECT_RC(CTL_SIZED(kfd, 48, 0, 1), 0, "zero tail: as VER0");
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	EXPECT_RC(CTL_SIZED(kfd, KEVENT_IOC_ARG_MAX, 0, 2), 0, "KEVENT_IOC_ARG_MAX with a zero tail");
	cr_assert_eq(kt_queue_kevents(kfd), 2u);
	close(kfd);
}

/* D24: GET_EVENTS below VER0 is EINVAL, above KEVENT_IOC_ARG_MAX E2BIG. */
KTEST(ioctl, get_events_wrapper_sizes)
{
	int kfd = kt_open(O_RDWR);
	unsigned int nr = KEVENT_IOC_NR_GET_EVENTS;

	EXPECT_RC(sized(kfd, nr, 24, 0, 0), -EINVAL, "size 24 < VER0");
	EXPECT_RC(sized(kfd, nr, KEVENT_IOC_ARG_MAX + 4, 0, 0), -E2BIG, "size above KEVENT_IOC_ARG_MAX");
	EXPECT_RC(sized(kfd, nr, KEVENT_GET_EVENTS_ARG_SIZE_VER0, 0, 0), 0, "VER0 size");
	close(kfd);
}

/* GET_EVENTS of max_nr 2 through the VER0 wrapper: the result, -errno. */
static int get_raw(int kfd, __u32 min_nr, __u64 timeout_ns, __u32 flags, __u32 ioc_flags)
{
	struct ukevent out[2];
	struct kevent_get_events_arg a = {
		.min_nr = min_nr, .max_nr = 2, .timeout_ns = timeout_ns,
		.events = (__u64)(uintptr_t)out, .flags = flags, .ioc_flags = ioc_flags,
	};

	return kt_ioctl(kfd, KEVENT_IOC_GET_EVENTS, &a);
}

/* D24: unknown ioc_flags bits are EINVAL. */
KTEST(ioctl, get_events_unknown_ioc_flags_einval)
{
	int kfd = kt_open(O_RDWR);

	EXPECT_RC(get_raw(kfd, 0, 0, 0, 0x2), -EINVAL, "unknown ioc_flags bit 0x2");
	EXPECT_RC(get_raw(kfd, 0, 0, 0, 0x80000000u), -EINVAL, "unknown ioc_flags bit 31");
	close(kfd);
}

/* KEVENT_GET_NONBLOCK in ioc_flags returns at once. */
KTEST(ioctl, get_events_nonblock_ioc_flag)
{
	int kfd = kt_open(O_RDWR);

	EXPECT_RC(get_raw(kfd, 1, KEVENT_TIMEOUT_INFINITE, 0, KEVENT_GET_NONBLOCK), 0,
		  "NONBLOCK ioc_flag: returns at once");
	close(kfd);
}

/* A1: the 2006 flags argument is not checked. */
KTEST(ioctl, get_events_2006_flags_lenient)
{
	int kfd = kt_open(O_RDWR);

	EXPECT_RC(get_raw(kfd, 0, 0, 0xffffffffu, 0), 0, "2006 flags ~0");
	close(kfd);
}

/* D24: a larger GET_EVENTS wrapper: non-zero tail E2BIG, zero tail as VER0. */
KTEST(ioctl, get_events_wrapper_tail)
{
	int kfd = kt_open(O_RDWR);

	EXPECT_RC(sized(kfd, KEVENT_IOC_NR_GET_EVENTS, 40, 36, 0), -E2BIG, "non-zero tail");
	EXPECT_RC(sized(kfd, KEVENT_IOC_NR_GET_EVENTS, 40, 0, 0), 0, "zero tail");
	close(kfd);
}

/* D24: SET_ABI below VER0 is EINVAL, above KEVENT_IOC_ARG_MAX E2BIG. */
KTEST(ioctl, set_abi_wrapper_sizes)
{
	int kfd = kt_open(O_RDWR);

	EXPECT_RC(sized(kfd, KEVENT_IOC_NR_SET_ABI, 8, 0, 0), -EINVAL, "size 8");
	EXPECT_RC(sized(kfd, KEVENT_IOC_NR_SET_ABI, KEVENT_IOC_ARG_MAX + 1, 0, 0), -E2BIG,
		  "size above KEVENT_IOC_ARG_MAX");
	close(kfd);
}

/* D24: SET_ABI's __reserved must be 0. */
KTEST(ioctl, set_abi_wrapper_reserved_einval)
{
	int kfd = kt_open(O_RDWR);
	struct kevent_set_abi s = { .revision = (__u32)kt_rev(), .__reserved = 1ULL << 63 };

	EXPECT_RC(kt_ioctl(kfd, KEVENT_IOC_SET_ABI, &s), -EINVAL, "reserved field");
	close(kfd);
}

/* D24: a larger SET_ABI wrapper: non-zero tail E2BIG, zero tail as VER0. */
KTEST(ioctl, set_abi_wrapper_tail)
{
	int kfd = kt_open(O_RDWR);

	EXPECT_RC(sized(kfd, KEVENT_IOC_NR_SET_ABI, 24, 20, 0), -E2BIG, "non-zero tail");
	EXPECT_RC(sized(kfd, KEVENT_IOC_NR_SET_ABI, 24, 0, 0), 0, "zero tail");
	close(kfd);
}

/* D24: an unknown ioctl number of this magic is ENOTTY. */
/* Ends at revision 1: nr 6 is KEVENT_IOC_RING_INIT on revision-2 queues (D40). */
KTEST_REVS(ioctl, unknown_nr_enotty, 1, 1)
{
	int kfd = kt_open(O_RDWR);
	unsigned char buf[64] = { 0 };

	EXPECT_RC(kt_ioctl(kfd, IOC_W(0x06, 16), buf), -ENOTTY, "nr 6");
	EXPECT_RC(kt_ioctl(kfd, IOC_R(0x7f, 16), buf), -ENOTTY, "nr 0x7f");
	EXPECT_RC(kt_ioctl(kfd, IOC_W(0xff, 16), buf), -ENOTTY, "nr 0xff");
	EXPECT_RC(kt_ioctl(kfd, _IO(KEVENT_IOC_MAGIC, 0x10), NULL), -ENOTTY, "_IO nr 0x10");
	close(kfd);
}

/* KEVENT_IOC_FAULT is ENOTTY unless INFO has KEVENT_FEAT_FAULT_INJECT. */
KTEST(ioctl, fault_without_feature_enotty)
{
	if (kt_backend_info()->features & KEVENT_FEAT_FAULT_INJECT)
		cr_skip_test("the %s backend runs with fault injection (KEVENT_FEAT_FAULT_INJECT): "
			     "KEVENT_IOC_FAULT answers", kt_backend_name(kt_backend()));
	int kfd = kt_open(O_RDWR);
	unsigned char buf[64] = { 0 };

	EXPECT_RC(kt_ioctl(kfd, KEVENT_IOC_FAULT, buf), -ENOTTY,
		  "KEVENT_IOC_FAULT without KEVENT_FEAT_FAULT_INJECT");
	close(kfd);
}

/* D24: another magic, or a foreign ioctl such as TCGETS, is ENOTTY. */
KTEST(ioctl, foreign_ioctl_enotty)
{
	int kfd = kt_open(O_RDWR);
	unsigned char buf[64] = { 0 };

	cr_assert_eq(kt_ioctl(kfd, _IOC(_IOC_WRITE, 0xBF, KEVENT_IOC_NR_CTL, 16), buf), -ENOTTY,
		     "another magic");
	EXPECT_RC(kt_ioctl(kfd, TCGETS, buf), -ENOTTY, "TCGETS on a kevent fd");
	close(kfd);
}

/* D24 (2.2): known numbers with the wrong direction bits are ENOTTY. */
KTEST(ioctl, wrong_direction_enotty)
{
	int kfd = kt_open(O_RDWR);
	unsigned char buf[64] = { 0 }, big[256] = { 0 };

	cr_assert_eq(kt_ioctl(kfd, _IOC(_IOC_READ, KEVENT_IOC_MAGIC, KEVENT_IOC_NR_CTL, 16), buf), -ENOTTY,
		     "CTL as _IOR");
	cr_assert_eq(kt_ioctl(kfd, _IOC(_IOC_NONE, KEVENT_IOC_MAGIC, KEVENT_IOC_NR_GET_EVENTS, 0), NULL),
		     -ENOTTY, "GET_EVENTS as _IO");
	EXPECT_RC(kt_ioctl(kfd, _IOC(_IOC_WRITE, KEVENT_IOC_MAGIC, KEVENT_IOC_NR_INFO,
					KEVENT_INFO_SIZE_VER0), big), -ENOTTY, "INFO as _IOW");
	close(kfd);
}

/* D11: bad fd EBADF, not a kevent fd ENOTTY, through libkevent unchanged. */
KTEST(ioctl, bad_and_foreign_fds)
{
	int p[2], sv[2], null = open("/dev/null", O_RDWR | O_CLOEXEC);
	struct ukevent uk = kt_uk_timer(1000, 0, 1), out[1];
	struct kevent_info info;

	kt_pipe(p);
	kt_socketpair(SOCK_STREAM, sv);
	cr_assert(null >= 0);
	cr_assert_eq(kevent_ctl(-1, KEVENT_CTL_ADD, 1, &uk), -1);
	cr_assert_eq(errno, EBADF);
	cr_assert_eq(kevent_get_events(-1, 0, 1, 0, out, 0), -1);
	cr_assert_eq(errno, EBADF);
	int dead = dup(p[0]);
	close(dead);
	cr_assert_eq(kevent_ctl(dead, KEVENT_CTL_ADD, 1, &uk), -1);
	cr_assert_eq(errno, EBADF);
	cr_assert_eq(kevent_info(dead, &info), -1);
	cr_assert_eq(errno, EBADF);
	int fds[3] = { p[0], sv[0], null };
	for (int k = 0; k < 3; k++) {
		cr_assert_eq(kevent_ctl(fds[k], KEVENT_CTL_ADD, 1, &uk), -1);
		cr_assert_eq(errno, ENOTTY, "kevent_ctl on a non-kevent fd: %s", strerror(errno));
		cr_assert_eq(kevent_get_events(fds[k], 0, 1, 0, out, 0), -1);
		cr_assert_eq(errno, ENOTTY);
		cr_assert_eq(kevent_info(fds[k], &info), -1);
		cr_assert_eq(errno, ENOTTY);
	}
}

/* A queue with one ready POLL kevent, on the pipe p the caller closes. */
static int queue_with_one_ready(int p[2])
{
	int kfd = kt_open(O_RDWR);

	kt_pipe(p);
	kt_add_queued(kfd, kt_uk_poll(p[0], KEVENT_POLL_POLLIN, 0, 1));
	kt_write1(p[1]);
	cr_assert(kt_wait_ready(kfd, 1, 5000));
	return kfd;
}

/* D15: write() on the device is EINVAL and takes nothing. */
static void assert_write_einval(int kfd)
{
	char buf[64] = { 0 };

	errno = 0;
	cr_assert_eq(write(kfd, buf, sizeof(buf)), -1, "write() on the kevent fd");
	cr_assert_eq(errno, EINVAL, "write: %s", strerror(errno));
	cr_assert_eq(kt_queue_ready(kfd), 1u, "write() consumed an event");
}

/* D15: read() and write() on the device: EINVAL. */
KTEST(ioctl, read_write_einval)
{
	ktest_not_on_backend(KEVENT_BACKEND_FUSE,
			     "fuse: read() is answered by the file's page cache, which holds "
			     "the ring (abi.md 9; write() still fails EINVAL: write_einval_on_fuse)");
	int p[2], kfd = queue_with_one_ready(p);
	char buf[64] = { 0 };

	errno = 0;
	cr_assert_eq(read(kfd, buf, sizeof(buf)), -1, "read() on the kevent fd");
	cr_assert_eq(errno, EINVAL, "read: %s", strerror(errno));
	assert_write_einval(kfd);
	cr_assert_eq(kt_queue_ready(kfd), 1u, "read() consumed an event");
	close(p[0]);
	close(p[1]);
	close(kfd);
}

/*
 * D15 where it holds on fuse: write() fails EINVAL and changes nothing
 * (read() is the page cache there, abi.md 9, so read_write_einval skips).
 */
KTEST(ioctl, write_einval_on_fuse)
{
	ktest_only_backend(KEVENT_BACKEND_FUSE,
			   "fuse only: read_write_einval checks write() on the other backends");
	int p[2], kfd = queue_with_one_ready(p);

	assert_write_einval(kfd);
	cr_assert_eq(kt_queue_kevents(kfd), 1u);
	close(p[0]);
	close(p[1]);
	close(kfd);
}

KTEST(ioctl, ring_shm_per_backend)
{
	int kfd = kt_open(O_RDWR);
	struct kevent_ring_shm shm;

	memset(&shm, 0, sizeof(shm));
	int r = kt_ioctl(kfd, KEVENT_IOC_RING_SHM, &shm);
	if (kt_backend() == KEVENT_BACKEND_MODULE) {
		cr_assert_eq(r, -ENOTTY, "module RING_SHM: %d, want -ENOTTY", r);
	} else {
		cr_assert_eq(r, 0, "cuse RING_SHM: %s", strerror(-r));
		cr_assert_eq(shm.size, (__u32)KEVENT_RING_SHM_SIZE_VER0);
		cr_assert_eq(shm.flags, 0u);
		cr_assert_eq(shm.length, (__u64)KEVENT_RING_SIZE);
		cr_assert(memchr(shm.path, 0, sizeof(shm.path)) && shm.path[0] == '/', "path %.112s",
			  shm.path);
		/* Read-only for the holder of the fd: writable open refused. */
		int w = open(shm.path, O_RDWR | O_CLOEXEC);
		if (getuid() != 0)
			cr_assert(w < 0 && errno == EACCES, "ring object opened writable");
		if (w >= 0)
			close(w);
		int ro = open(shm.path, O_RDONLY | O_CLOEXEC);
		cr_assert(ro >= 0, "open %s O_RDONLY: %s", shm.path, strerror(errno));
		struct stat st;
		cr_assert_eq(fstat(ro, &st), 0);
		/* B5: no write bit for anyone, nothing for others (group bits = the ACL mask). */
		cr_assert_eq(st.st_mode & 0227, 0u, "ring object mode %o", (unsigned)(st.st_mode & 07777));
		cr_assert_eq((size_t)st.st_size, (size_t)KEVENT_RING_SIZE, "ring object size %lld",
			     (long long)st.st_size);
		close(ro);
		EXPECT_RC(kt_ioctl(kfd, IOC_R(KEVENT_IOC_NR_RING_SHM, 64), &shm), -EINVAL, "size < VER0");
	}
	close(kfd);
}

/*
 * fuse where the daemon may not use this caller's memory (the guest's
 * ptrace_scope=3 boot): a FUSE file has no retry path, so CTL and
 * GET_EVENTS (INFO too) fail EPERM at once, never a hang (a parked
 * GET_EVENTS would outlive the test's timeout) and never a partial array
 * (B4, abi.md 7.1 and 9).  Plain Tests: ktest_require() skips every KTEST
 * on such a caller.
 */
static void noproc_require(void)
{
	if (access(kt_device(), F_OK))
		cr_skip_test("no %s (KEVENT_DEVICE): run through tests/vm/guest", kt_device());
	if (!kt_fuse_without_process_memory())
		cr_skip_test("only on fuse where the daemon may not use this caller's memory (the "
			     "guest's ptrace_scope=3 boot); backend here: %s, with process memory "
			     "or a retry path", kt_backend_name(kt_backend()));
}

Test(noproc, ctl_get_events_info_fail_eperm__rev1, .timeout = KTEST_TIMEOUT)
{
	struct ukevent uk[2] = { kt_uk_timer(1, 0, 7), kt_uk_timer(1, 0, 8) }, out[4], pristine[4];
	struct kevent_info info;
	int kfd, r;

	noproc_require();
	kfd = open(kt_device(), O_RDWR | O_CLOEXEC);
	cr_assert(kfd >= 0, "open(%s): %s", kt_device(), strerror(errno));
	memset(out, 0xa5, sizeof(out));
	memcpy(pristine, out, sizeof(out));
	errno = 0;
	r = kevent_ctl(kfd, KEVENT_CTL_ADD, 2, uk);
	cr_assert(r == -1 && errno == EPERM, "CTL ADD of 2: %d (%s), want -1 EPERM", r, strerror(errno));
	errno = 0;
	r = kevent_get_events(kfd, 1, 4, 3600ULL * 1000000000ULL, out, 0);
	cr_assert(r == -1 && errno == EPERM, "GET_EVENTS min 1 max 4, 1 h: %d (%s), want -1 EPERM at once",
		  r, strerror(errno));
	cr_assert(!memcmp(out, pristine, sizeof(out)), "GET_EVENTS wrote into the array it refused");
	errno = 0;
	r = kevent_info(kfd, &info);
	cr_assert(r == -1 && errno == EPERM, "INFO: %d (%s), want -1 EPERM", r, strerror(errno));
	close(kfd);
}
