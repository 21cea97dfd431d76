// SPDX-License-Identifier: GPL-2.0
/* The client suite's shared helpers; see ktest.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <pthread.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <linux/magic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <criterion/internal/ordered-set.h>

#include "ktest.h"

const char *kt_device(void)
{
	const char *p = getenv("KEVENT_DEVICE");

	return p && *p ? p : KEVENT_DEVICE_DEFAULT;
}

static struct kevent_info backend_info;
static int backend_known;
static int running_rev = 1;	/* Criterion runs each test in its own process */

int kt_rev(void)
{
	return running_rev;
}

/* A queue for INFO only: no SET_ABI, its revision does not matter. */
static int open_probe(void)
{
	int fd = open(kt_device(), O_RDWR | O_CLOEXEC);

	cr_assert(fd >= 0, "open(%s): %s", kt_device(), strerror(errno));
	return fd;
}

/* fuse refusing this caller's memory: INFO fails EPERM too (abi.md 7.1, 9). */
static int fuse_no_process_memory;

static int on_fuse(int fd)
{
	struct statfs sf;

	return !fstatfs(fd, &sf) && sf.f_type == FUSE_SUPER_MAGIC;
}

const struct kevent_info *kt_backend_info(void)
{
	if (!backend_known) {
		int fd = open_probe();

		if (kevent_info(fd, &backend_info) && errno == EPERM && on_fuse(fd)) {
			/* No INFO to read: what is known is the backend. */
			memset(&backend_info, 0, sizeof(backend_info));
			backend_info.backend = KEVENT_BACKEND_FUSE;
			backend_info.abi_revision = KEVENT_ABI_REVISION;
			fuse_no_process_memory = 1;
		} else {
			kt_info(fd, &backend_info);
		}
		close(fd);
		backend_known = 1;
	}
	return &backend_info;
}

void ktest_require(int rev)
{
	const char *dev = kt_device();

	running_rev = rev;
	if (access(dev, F_OK) != 0) {
		if (!strcmp(dev, KEVENT_DEVICE_DEFAULT))
			cr_skip_test("no /dev/kevent: run through tests/vm/guest");
		cr_skip_test("no %s (KEVENT_DEVICE): run through tests/vm/guest", dev);
	}
	if (kt_fuse_without_process_memory())
		cr_skip_test("fuse without process memory for this caller (Yama ptrace_scope=3, a pid "
			     "the daemon cannot see): every ioctl fails EPERM at once, a FUSE file has "
			     "no retry path (abi.md 7.1 and 9, B4); noproc/* checks that");
	if (kt_backend_info()->abi_revision < (__u32)rev)
		cr_skip_test("ABI revision %d instance, the %s backend serves up to revision %u",
			     rev, kt_backend_name(kt_backend()), kt_backend_info()->abi_revision);
	/* INFO VER2 names the lowest revision served (abi.md 2.8). */
	if (kt_backend_info()->size >= KEVENT_INFO_SIZE_VER2 &&
	    kt_backend_info()->abi_lowest > (__u32)rev)
		cr_skip_test("ABI revision %d instance, the %s backend serves from revision %u on",
			     rev, kt_backend_name(kt_backend()), kt_backend_info()->abi_lowest);
}

int kt_fuse_without_process_memory(void)
{
	kt_backend_info();
	return fuse_no_process_memory;
}

int kt_set_abi_flags(int kfd, unsigned int flags)
{
	return kevent_set_abi(kfd, (unsigned int)running_rev, flags) ? -errno : 0;
}

int kt_try_open(int flags)
{
	int fd = open(kt_device(), flags | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	if (running_rev == 1)
		return fd;	/* as a 2006 program uses it */
	err = kt_set_abi_flags(fd, 0);
	if (err == -EINVAL) {
		close(fd);
		cr_skip_test("ABI revision %d instance: SET_ABI(%d) fails EINVAL, the %s backend "
			     "no longer serves it", running_rev, running_rev,
			     kt_backend_name(kt_backend()));
	}
	cr_assert_eq(err, 0, "SET_ABI(%d) right after open: %s", running_rev, strerror(-err));
	return fd;
}

int kt_open(int flags)
{
	int fd = kt_try_open(flags);

	cr_assert(fd >= 0, "open(%s, %#x): %s", kt_device(), flags, strerror(-fd));
	return fd;
}

/*
 * D18: a call that finds the uid's running-request cap taken fails EAGAIN.
 * That is transient (the cap frees as the calls in flight park or end), and
 * a test that fires a thousand callers at once can meet it with its own
 * INFO; so retry for a while, then fail with the errno.
 */
void kt_info(int fd, struct kevent_info *info)
{
	int r;

	for (int tries = 0; (r = kevent_info(fd, info)) && errno == EAGAIN && tries < 500; tries++)
		kt_sleep_ms(10);
	cr_assert_eq(r, 0, "KEVENT_IOC_INFO: %s", strerror(errno));
}

unsigned int kt_queue_parked(int kfd)
{
	struct kevent_info info;

	kt_info(kfd, &info);
	if (info.size < KEVENT_INFO_SIZE_VER1)
		cr_skip_test("INFO of the %s backend has no queue_parked (size %u < %u)",
			     kt_backend_name(info.backend), info.size, KEVENT_INFO_SIZE_VER1);
	return info.queue_parked;
}

void kt_await_parked_at(int kfd, unsigned int n, unsigned int ms, const char *where)
{
	__u64 t0 = kt_now_ns(), end = t0 + KT_MS(ms);
	unsigned int seen;

	while ((seen = kt_queue_parked(kfd)) < n && kt_now_ns() < end)
		kt_sleep_ms(2);
	cr_assert_geq(seen, n, "%s: INFO queue_parked %u after %llu ms, waited for %u parked calls",
		      where, seen, (unsigned long long)((kt_now_ns() - t0) / 1000000ULL), n);
}

/* The state letter and the syscall number of thread tid of this process. */
static int thread_state(pid_t tid, char *state, long *sysno)
{
	char path[64], buf[512], *p;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	p = ok ? strrchr(buf, ')') : NULL;
	if (!p || p[1] != ' ')
		return -EIO;
	*state = p[2];
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	ok = fscanf(f, "%ld", sysno) == 1;	/* "running" reads as no number */
	fclose(f);
	if (!ok)
		*sysno = -1;
	return 0;
}

static void await_asleep_in(pid_t tid, long sysno, long alt, const char *what)
{
	__u64 end = kt_now_ns() + KT_MS(10000);
	char state = '?';
	long nr = -1;
	int err;

	do {
		err = thread_state(tid, &state, &nr);
		cr_assert_eq(err, 0, "%s: /proc/self/task/%d: %s", what, (int)tid, strerror(-err));
		if (state == 'S' && (nr == sysno || nr == alt))
			return;
		kt_sleep_ms(2);
	} while (kt_now_ns() < end);
	cr_assert_fail("%s: thread %d not asleep in syscall %ld or %ld after 10 s "
		       "(state %c, syscall %ld)", what, (int)tid, sysno, alt, state, nr);
}

void kt_await_in_poll(pid_t tid, const char *what)
{
	await_asleep_in(tid, SYS_poll, SYS_ppoll, what);
}

pid_t kt_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

unsigned int kt_backend(void)
{
	return kt_backend_info()->backend;
}

const char *kt_backend_name(unsigned int backend)
{
	switch (backend) {
	case KEVENT_BACKEND_CORE: return "core";
	case KEVENT_BACKEND_CUSE: return "cuse";
	case KEVENT_BACKEND_MODULE: return "module";
	case KEVENT_BACKEND_FUSE: return "fuse";
	}
	return "unknown";
}

void ktest_only_backend(unsigned int backend, const char *reason)
{
	if (kt_backend() != backend)
		cr_skip_test("%s (backend here: %s)", reason, kt_backend_name(kt_backend()));
}

void ktest_not_on_backend(unsigned int backend, const char *reason)
{
	if (kt_backend() == backend)
		cr_skip_test("%s", reason);
}

void kt_require_type(unsigned int type)
{
	if (!(kt_backend_info()->supported_types & (1u << type)))
		cr_skip_test("type %u not in INFO supported_types %#x of the %s backend",
			     type, kt_backend_info()->supported_types,
			     kt_backend_name(kt_backend()));
}

void kt_require_feature(unsigned int feat, const char *reason)
{
	if (!(kt_backend_info()->features & feat))
		cr_skip_test("%s (feature %#x not in INFO features %#x, %s backend)", reason,
			     feat, kt_backend_info()->features, kt_backend_name(kt_backend()));
}

void kt_require_clock_set(void)
{
	const char *v = getenv("KEVENT_TEST_CLOCK_SET");

	if (!v || strcmp(v, "1"))
		cr_skip_test("sets CLOCK_REALTIME: runs only where KEVENT_TEST_CLOCK_SET=1, the guest "
			     "boot of its own (meson test guest-clock, tests/vm/README.md), never "
			     "on a host");
}

int kt_clock_shift(long sec)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += sec;
	if (clock_settime(CLOCK_REALTIME, &ts))
		return -errno;
	return 0;
}

void kt_require_room(unsigned int limit_idx, unsigned int n)
{
	struct kevent_info info;
	int fd = open_probe();
	unsigned int idx[2] = { KEVENT_LIMIT_KEVENTS, limit_idx };

	kt_info(fd, &info);
	close(fd);
	for (int i = 0; i < 2; i++) {
		const struct kevent_limit *l = &info.limits[idx[i]];

		if (l->cap && (l->cap < l->used || l->cap - l->used < n))
			cr_skip_test("per-uid cap %u: cap %u, used %u, this test needs %u more",
				     idx[i], l->cap, l->used, n);
	}
}

/* FNV-1a over the test's suite, name and revision: a uid of its own. */
static uid_t own_uid_of(const char *suite, const char *name, int rev)
{
	char key[256];
	uint32_t h = 2166136261u;

	snprintf(key, sizeof(key), "%s/%s/%d", suite, name, rev);
	for (const char *p = key; *p; p++) {
		h ^= (unsigned char)*p;
		h *= 16777619u;
	}
	return (uid_t)(KT_OWN_UID_BASE + h % KT_OWN_UID_SPAN);
}

/* Become uid (and gid uid, no other groups) for good: 0 or -errno. */
static int become(uid_t uid)
{
	if (setgroups(0, NULL) || setresgid((gid_t)uid, (gid_t)uid, (gid_t)uid) ||
	    setresuid(uid, uid, uid))
		return -errno;
	return 0;
}

/* open(device, O_RDWR) as uid, in a child: 0 or the errno. */
static int open_as(uid_t uid)
{
	pid_t pid = fork();
	int st, fd;

	cr_assert(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int err = become(uid);

		if (!err) {
			fd = open(kt_device(), O_RDWR | O_CLOEXEC);
			err = fd < 0 ? -errno : 0;
		}
		_exit(-err > 0 && -err < 256 ? -err : 0);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	cr_assert(WIFEXITED(st), "the open as uid %u did not exit (status %#x)", (unsigned int)uid, st);
	return WEXITSTATUS(st);
}

uid_t kt_own_uid(void)
{
	const struct criterion_test *t = criterion_current_test;
	uid_t uid = own_uid_of(t && t->category ? t->category : "?", t && t->name ? t->name : "?",
			       running_rev);
	int err;

	if (geteuid() != 0)
		cr_skip_test("not root: this test fills a per-uid cap (D18, B7) and needs a uid of its "
			     "own (setresuid), else it takes the cap from every test running beside it");
	err = open_as(uid);
	if (err)
		cr_skip_test("%s cannot be opened as this test's own uid %u: %s (the CUSE node's or "
			     "the FUSE file's mode, or a directory on the way); it fills a per-uid cap "
			     "and must not do so as the uid the other tests share", kt_device(),
			     (unsigned int)uid, strerror(err));
	err = become(uid);
	cr_assert_eq(err, 0, "setresuid(%u): %s", (unsigned int)uid, strerror(-err));
	/* INFO's limits[].used is the caller's uid's: read it again as this one. */
	backend_known = 0;
	kt_backend_info();
	return uid;
}

void kt_lock_backend(void)
{
	struct stat st;
	char path[96];
	int fd, r;

	cr_assert_eq(stat(kt_device(), &st), 0, "stat(%s): %s", kt_device(), strerror(errno));
	snprintf(path, sizeof(path), "/tmp/kevent-test-%s-%" PRIx64 ".lock",
		 S_ISCHR(st.st_mode) ? "rdev" : "dev",
		 (uint64_t)(S_ISCHR(st.st_mode) ? st.st_rdev : st.st_dev));
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	cr_assert(fd >= 0, "open(%s): %s", path, strerror(errno));
	while ((r = flock(fd, LOCK_EX)) < 0 && errno == EINTR)
		;
	cr_assert_eq(r, 0, "flock(%s): %s", path, strerror(errno));
	/* Held, with fd, until this test's process exits. */
}

struct ukevent kt_uk(unsigned int type, __u32 id0, __u32 id1, unsigned int event,
		     unsigned int req_flags, __u32 cookie)
{
	struct ukevent uk;

	/* fd-taking types need fd origins for this caller (CUSE under Yama 3: none). */
	if (type == KEVENT_POLL || type == KEVENT_SOCKET || type == KEVENT_INODE)
		kt_require_feature(KEVENT_FEAT_FD_ORIGINS, "fd origins not usable by this caller");
	memset(&uk, 0, sizeof(uk));
	uk.id.raw[0] = id0;
	uk.id.raw[1] = id1;
	uk.type = type;
	uk.event = event;
	uk.req_flags = req_flags;
	uk.user[0] = cookie;
	uk.user[1] = ~cookie;
	return uk;
}

struct ukevent kt_uk_timer(unsigned int ms, unsigned int req_flags, __u32 cookie)
{
	return kt_uk(KEVENT_TIMER, ms, 0, KEVENT_TIMER_FIRED, req_flags, cookie);
}

struct ukevent kt_uk_poll(int fd, unsigned int event, unsigned int req_flags, __u32 cookie)
{
	return kt_uk(KEVENT_POLL, (__u32)fd, 0, event, req_flags, cookie);
}

void kt_ctl1(int kfd, unsigned int cmd, struct ukevent *uk, int want)
{
	int r = kevent_ctl(kfd, cmd, 1, uk);

	cr_assert_eq(r, want, "kevent_ctl(cmd %u, 1, type %u id %u) = %d (%s), want %d",
		     cmd, uk->type, uk->id.raw[0], r, r < 0 ? strerror(errno) : "-", want);
}

void kt_add_queued(int kfd, struct ukevent uk)
{
	kt_ctl1(kfd, KEVENT_CTL_ADD, &uk, 0);
}

void kt_remove(int kfd, struct ukevent uk)
{
	kt_ctl1(kfd, KEVENT_CTL_REMOVE, &uk, 0);
	cr_assert_eq(uk.ret_flags & KEVENT_RET_BROKEN, 0u,
		     "REMOVE of id %u found no kevent (ret_flags %#x)", uk.id.raw[0], uk.ret_flags);
}

int kt_get(int kfd, unsigned int min_nr, unsigned int max_nr, __u64 timeout_ns,
	   struct ukevent *buf)
{
	int r = kevent_get_events(kfd, min_nr, max_nr, timeout_ns, buf, 0);

	return r < 0 ? -errno : r;
}

struct ukevent kt_get_one(int kfd, const char *what)
{
	struct ukevent out[4];
	int n = kt_get(kfd, 1, 4, KT_MS(5000), out);

	cr_assert_eq(n, 1, "%s: got %d events, want 1", what, n);
	return out[0];
}

void kt_assert_quiet(int kfd, unsigned int ms, const char *what)
{
	struct ukevent out[4];
	int n = kt_get(kfd, 1, 4, KT_MS(ms), out);

	cr_assert_eq(n, 0, "%s: an event fired (cookie %u, ret_data[0] %#x)", what,
		     n > 0 ? out[0].user[0] : 0, n > 0 ? out[0].ret_data[0] : 0);
}

int kt_ioctl(int fd, unsigned long req, void *arg)
{
	int r = ioctl(fd, req, arg);

	return r < 0 ? -errno : r;
}

int kt_ctl_ext_raw(int kfd, unsigned int cmd, unsigned int num, struct ukevent_ext *arr,
		   unsigned int ioc_flags, unsigned int pad)
{
	struct kevent_ctl_ext_arg a = {
		.cmd = cmd, .num = num, .events = (__u64)(uintptr_t)arr,
		.ioc_flags = ioc_flags, .__pad = pad,
	};

	return kt_ioctl(kfd, KEVENT_IOC_CTL_EXT, &a);
}

int kt_ctl_ext(int kfd, unsigned int cmd, unsigned int num, struct ukevent_ext *arr)
{
	return kt_ctl_ext_raw(kfd, cmd, num, arr, KEVENT_CTL_EXT, 0);
}

unsigned int kt_queue_kevents(int kfd)
{
	struct kevent_info info;

	kt_info(kfd, &info);
	return info.queue_kevents;
}

unsigned int kt_queue_ready(int kfd)
{
	struct kevent_info info;

	kt_info(kfd, &info);
	return info.queue_ready;
}

int kt_wait_ready(int kfd, unsigned int n, unsigned int ms)
{
	__u64 end = kt_now_ns() + KT_MS(ms);

	do {
		if (kt_queue_ready(kfd) >= n)
			return 1;
		kt_sleep_ms(2);
	} while (kt_now_ns() < end);
	return kt_queue_ready(kfd) >= n;
}

__u64 kt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

__u32 kt_now_ms32(void)
{
	return (__u32)(kt_now_ns() / 1000000ULL);
}

void kt_sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void kt_pipe(int p[2])
{
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0, "pipe2: %s", strerror(errno));
}

void kt_socketpair(int type, int sv[2])
{
	cr_assert_eq(socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv), 0,
		     "socketpair: %s", strerror(errno));
}

void kt_write1(int fd)
{
	char c = 'x';

	cr_assert_eq(write(fd, &c, 1), 1, "write: %s", strerror(errno));
}

void kt_read_all(int fd)
{
	char buf[4096];

	while (kt_poll1(fd, POLLIN, 0) & POLLIN) {
		if (read(fd, buf, sizeof(buf)) <= 0)
			break;
	}
}

int kt_poll1(int fd, short events, int ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int r = poll(&p, 1, ms);

	cr_assert(r >= 0, "poll: %s", strerror(errno));
	return r ? p.revents : 0;
}

/* The later revisions' calls (ktest.h). */

const struct timespec ts_zero;

int ring_init(int kfd, void *ring, unsigned int num)
{
	struct kevent_ring_init ri = { .ring = (__u64)(uintptr_t)ring, .num = num };

	return kt_ioctl(kfd, KEVENT_IOC_RING_INIT, &ri);
}

/* A zeroed ring of num slots, 8-byte aligned. */
struct kevent_uring *ring_new(unsigned int num)
{
	struct kevent_uring *r = calloc(1, KEVENT_URING_SIZE(num));

	cr_assert(r, "calloc");
	return r;
}

int wait_rc(int kfd, unsigned int num, unsigned int old_uidx, struct timespec t,
	    unsigned int flags)
{
	int r = kevent_wait(kfd, num, old_uidx, t, flags);

	return r < 0 ? -errno : r;
}

int commit_rc(int kfd, unsigned int new_uidx, unsigned int over)
{
	int r = kevent_commit(kfd, new_uidx, over);

	return r < 0 ? -errno : r;
}

/* n timers that never fire on their own, cookies 0 .. n-1, made ready by READY. */
void add_ready_timers(int kfd, unsigned int n)
{
	struct ukevent *uk = calloc(n, sizeof(*uk));
	unsigned int i;

	cr_assert(uk);
	for (i = 0; i < n; i++)
		uk[i] = kt_uk_timer(HOUR, 0, i);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_ADD, n, uk), 0, "ADD %u timers", n);
	for (i = 0; i < n; i++)
		uk[i] = kt_uk_timer(HOUR, 0, i);
	cr_assert_eq(kevent_ctl(kfd, KEVENT_CTL_READY, n, uk), (int)n, "READY %u", n);
	free(uk);
}

__u64 clock_ns(clockid_t c)
{
	struct timespec ts;

	cr_assert_eq(clock_gettime(c, &ts), 0, "clock_gettime(%d)", (int)c);
	return (__u64)ts.tv_sec * NSEC + (__u64)ts.tv_nsec;
}

struct kevent_timespec kts(__u64 ns)
{
	struct kevent_timespec t = { .tv_sec = (__s64)(ns / NSEC), .tv_nsec = (__u32)(ns % NSEC) };

	return t;
}

__u64 kts_ns(struct kevent_timespec t)
{
	return (__u64)t.tv_sec * NSEC + t.tv_nsec;
}

/* A POSIX timer entry: value and interval in ns, cookie in user[0]. */
struct ukevent_ext ptimer(__u32 id, __u32 clock, __u32 flags, __u64 value_ns,
			  __u64 interval_ns, __u32 req_flags, __u32 cookie)
{
	struct ukevent_ext e;

	memset(&e, 0, sizeof(e));
	e.ev = kt_uk(KEVENT_POSIX_TIMER, id, 0, KEVENT_TIMER_FIRED, req_flags, cookie);
	e.ext.timer.clock = clock;
	e.ext.timer.flags = flags;
	e.ext.timer.value = kts(value_ns);
	e.ext.timer.interval = kts(interval_ns);
	return e;
}

/* A user event entry (no extension). */
struct ukevent_ext uevent(__u32 id, __u32 req_flags, __u32 cookie)
{
	struct ukevent_ext e;

	memset(&e, 0, sizeof(e));
	e.ev = kt_uk(KEVENT_USER, id, 0, 0, req_flags, cookie);
	return e;
}

/* One EXT entry; asserts the call returns want. */
void ext1(int kfd, unsigned int cmd, struct ukevent_ext *e, int want)
{
	int r = kt_ctl_ext(kfd, cmd, 1, e);

	cr_assert_eq(r, want, "CTL_EXT(cmd %u, type %u id %u) = %d (%s), want %d", cmd,
		     e->ev.type, e->ev.id.raw[0], r, r < 0 ? strerror(-r) : "-", want);
}

/* ADD of one EXT entry that must be registered (ADD answers nothing). */
void ext_add(int kfd, struct ukevent_ext e)
{
	ext1(kfd, KEVENT_CTL_ADD, &e, 0);
}

/* ADD of one EXT entry that must fail with -EINVAL, that entry only. */
void ext_add_einval(int kfd, struct ukevent_ext e, const char *what)
{
	unsigned int before = kt_queue_kevents(kfd);
	int r = kt_ctl_ext(kfd, KEVENT_CTL_ADD, 1, &e);

	cr_assert_eq(r, 1, "%s: ADD returned %d (%s), want 1 answered entry", what, r,
		     r < 0 ? strerror(-r) : "-");
	cr_assert_eq(e.ev.ret_flags, BROKEN_DONE, "%s: ret_flags %#x", what, e.ev.ret_flags);
	cr_assert_eq((int)e.ev.ret_data[1], -EINVAL, "%s: ret_data[1] %d, want -EINVAL", what,
		     (int)e.ev.ret_data[1]);
	cr_assert_eq(kt_queue_kevents(kfd), before, "%s: registered anyway", what);
}

/* READY of one user event with a value; asserts it matched. */
void trigger(int kfd, __u32 id, __u32 cookie, __u32 value)
{
	struct ukevent uk = kt_uk(KEVENT_USER, id, 0, value, 0, cookie);

	kt_ctl1(kfd, KEVENT_CTL_READY, &uk, 1);
	cr_assert_eq(uk.ret_flags, (__u32)KEVENT_RET_DONE, "READY ret_flags %#x", uk.ret_flags);
}

/* QUERY of one entry through EXT: the entry as written back. */
struct ukevent_ext query(int kfd, struct ukevent_ext key, int want)
{
	key.ev.ret_flags = 0;
	key.ev.ret_data[0] = key.ev.ret_data[1] = 0;
	memset(&key.ext, 0, sizeof(key.ext));	/* an output for a timer, zero for the rest */
	ext1(kfd, KEVENT_CTL_QUERY, &key, want);
	return key;
}

void check_fired(struct ukevent ev, __u32 cookie, __u32 count, const char *what)
{
	cr_assert_eq(ev.type, (__u32)KEVENT_POSIX_TIMER, "%s: type %u", what, ev.type);
	cr_assert_eq(ev.user[0], cookie, "%s: cookie %u", what, ev.user[0]);
	cr_assert_eq(ev.ret_flags, (__u32)KEVENT_RET_DONE, "%s: ret_flags %#x", what, ev.ret_flags);
	if (count)
		cr_assert_eq(ev.ret_data[0], count, "%s: expiry count %u, want %u", what,
			     ev.ret_data[0], count);
	cr_assert_eq(ev.ret_data[1], 0u, "%s: ret_data[1] %u", what, ev.ret_data[1]);
}

static void *call_thread(void *arg)
{
	struct call *c = arg;
	struct ukevent out[8];
	int r;

	if (c->nonblock_flag) {
		struct kevent_wait_arg a = { .num = c->num, .old_uidx = c->old_uidx,
					     .flags = c->flags, .ioc_flags = KEVENT_GET_NONBLOCK };

		r = kt_ioctl(c->kfd, KEVENT_IOC_WAIT, &a);
	} else if (c->is_wait) {
		r = wait_rc(c->kfd, c->num, c->old_uidx, c->ts, c->flags);
	} else {
		r = kevent_get_events_ts(c->kfd, c->min_nr, c->num, c->ts, out, c->flags);
		r = r < 0 ? -errno : r;
	}
	clock_gettime(CLOCK_REALTIME, &c->end_rt);
	clock_gettime(CLOCK_MONOTONIC, &c->end_mono);
	c->result = r;
	atomic_store(&c->done, true);
	return NULL;
}

void call_start(struct call *c)
{
	cr_assert_leq(c->num, 8u);
	atomic_init(&c->done, false);
	c->result = INT32_MIN;
	cr_assert_eq(pthread_create(&c->t, NULL, call_thread, c), 0);
}

/*
 * Joins c: true when it returned by itself within ms.  A call still
 * waiting then is woken (READY num 0, D50) so that the test can end.
 */
bool call_join(struct call *c, unsigned int ms)
{
	bool self;

	for (unsigned int i = 0; i < ms / 5 && !atomic_load(&c->done); i++)
		kt_sleep_ms(5);
	self = atomic_load(&c->done);
	for (int i = 0; i < 1000 && !atomic_load(&c->done); i++) {
		kevent_ctl(c->kfd, KEVENT_CTL_READY, 0, NULL);
		kt_sleep_ms(10);
	}
	pthread_join(c->t, NULL);
	return self;
}

/* Runs c and joins it within ms: true when it returned by itself. */
bool call_run(struct call *c, unsigned int ms)
{
	call_start(c);
	return call_join(c, ms);
}

/* A queue of this instance with a ring of num slots (KEVENT_FEAT_URING required). */
struct reader reader_new(unsigned int num)
{
	struct reader rd = { .num = num };

	kt_require_feature(KEVENT_FEAT_URING, "a kevent_uring needs the process-memory path (D53)");
	rd.kfd = kt_open(O_RDWR);
	rd.r = ring_new(num);
	cr_assert_eq(ring_init(rd.kfd, rd.r, num), 0, "RING_INIT");
	return rd;
}

void reader_close(struct reader *rd)
{
	close(rd->kfd);
	free(rd->r);
}

/*
 * One non-blocking WAIT of up to max (<= the ring's free slots): its records
 * copied to out, their slots committed.  Returns the count, asserted >= 0.
 */
int wait_now(struct reader *rd, struct ukevent *out, unsigned int max)
{
	int n = wait_rc(rd->kfd, max, rd->uidx, ts_zero, 0);
	unsigned int kidx, over;

	cr_assert_geq(n, 0, "WAIT: %s", strerror(-n));
	kidx = __atomic_load_n(&rd->r->ring_kidx, __ATOMIC_ACQUIRE);
	over = __atomic_load_n(&rd->r->ring_over, __ATOMIC_ACQUIRE);
	cr_assert_eq(kidx, (rd->uidx + (unsigned int)n) % rd->num, "ring_kidx after %d", n);
	for (int i = 0; i < n; i++)
		out[i] = rd->r->event[(rd->uidx + (unsigned int)i) % rd->num];
	if (n)
		cr_assert_eq(commit_rc(rd->kfd, kidx, over), n, "COMMIT");
	rd->uidx = kidx;
	return n;
}

/* A TCP connection on loopback: the listener, the client and the accepted end. */
void tcp_conn(int *lst, int *cli, int *srv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);

	*lst = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(*lst, 0, "socket: %s", strerror(errno));
	cr_assert_eq(bind(*lst, (struct sockaddr *)&a, len), 0, "bind: %s", strerror(errno));
	cr_assert_eq(listen(*lst, 4), 0);
	cr_assert_eq(getsockname(*lst, (struct sockaddr *)&a, &len), 0);
	*cli = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_eq(connect(*cli, (struct sockaddr *)&a, len), 0, "connect: %s", strerror(errno));
	*srv = accept4(*lst, NULL, NULL, SOCK_CLOEXEC);
	cr_assert_geq(*srv, 0, "accept: %s", strerror(errno));
}

/* The peer of a connection resets it (SO_LINGER 0, close): RST. */
void tcp_reset(int cli)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	cr_assert_eq(setsockopt(cli, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
	close(cli);
}

/* One non-blocking GET_EVENTS into out[4]: the count, asserted >= 0. */
int get_now(int kfd, struct ukevent *out)
{
	int n = kt_get(kfd, 0, 4, 0, out);

	cr_assert_geq(n, 0, "GET_EVENTS: %d", n);
	return n;
}

/* The grid points v, v + i, ... at or before t: D58's count from ADD up to t. */
__u32 points_by(__u64 v, __u64 i, __u64 t)
{
	return t < v ? 0 : (__u32)((t - v) / i + 1);
}

/*
 * The instance selection of $KEVENT_TEST_INSTANCES (ktest.h).  Criterion
 * has no call that takes a test out of a run: .disabled and --filter both
 * leave it in the report, as "skipped".  So main() is Criterion's own
 * (criterion_initialize, criterion_handle_args, criterion_run_all_tests,
 * criterion_finalize) with one step between: it unlinks the instances left
 * out from their suites' test sets, and links them back before
 * criterion_finalize(), which frees each set node by node.  The run forks
 * its workers from the sets as they stand at criterion_run_all_tests().
 */
struct kt_selection {
	bool all;		/* unset or empty: every instance */
	bool first;		/* each test's first instance */
	unsigned int revs;	/* bit n: every instance on revision n */
};

/* $KEVENT_TEST_INSTANCES -> sel: 0, or -EINVAL for a word it does not know. */
static int selection_parse(const char *spec, struct kt_selection *sel, const char **bad)
{
	*sel = (struct kt_selection){ .all = !spec || !*spec };
	while (spec && *spec) {
		size_t len = strcspn(spec, ",");
		char *end;
		unsigned long n = strtoul(spec, &end, 10);

		if (len == 5 && !strncmp(spec, "first", 5)) {
			sel->first = true;
		} else if (spec[0] >= '0' && spec[0] <= '9' && end == spec + len &&
			   n >= 1 && n <= KEVENT_ABI_REVISION) {
			sel->revs |= 1u << n;
		} else {
			*bad = spec;
			return -EINVAL;
		}
		spec += len + (spec[len] == ',');
	}
	return 0;
}

static bool selected(const struct kt_selection *sel, const struct criterion_test *t)
{
	const struct kt_instance *ki = t->data ? t->data->data : NULL;

	if (sel->all || !ki)
		return true;	/* a plain Test(): not an instance of a range */
	return (sel->first && ki->rev == ki->first) || (sel->revs & (1u << ki->rev));
}

/* One suite's instances left out: its test set and their chain. */
struct kt_dropped {
	struct criterion_ordered_set *tests;
	struct criterion_ordered_set_node *chain;
	size_t n;
};

static struct kt_dropped *dropped;
static size_t dropped_suites;

static int drop_unselected(struct criterion_test_set *set, const struct kt_selection *sel)
{
	if (sel->all)
		return 0;
	dropped = calloc(set->suites->size, sizeof(*dropped));
	if (!dropped)
		return -ENOMEM;
	FOREACH_SET(struct criterion_suite_set *s, set->suites) {
		struct kt_dropped *d = &dropped[dropped_suites++];
		struct criterion_ordered_set_node **pp;

		d->tests = s->tests;
		if (!s->tests)
			continue;
		for (pp = &s->tests->first; *pp;) {
			struct criterion_ordered_set_node *node = *pp;

			if (selected(sel, (const struct criterion_test *)(node + 1))) {
				pp = &node->next;
				continue;
			}
			*pp = node->next;
			node->next = d->chain;
			d->chain = node;
			d->n++;
			s->tests->size--;
			set->tests--;
		}
	}
	return 0;
}

/* The set as criterion_initialize() built it, but for the order. */
static void put_back(struct criterion_test_set *set)
{
	for (size_t i = 0; i < dropped_suites; i++) {
		struct kt_dropped *d = &dropped[i];
		struct criterion_ordered_set_node **tail;

		if (!d->chain)
			continue;
		for (tail = &d->tests->first; *tail; tail = &(*tail)->next)
			;
		*tail = d->chain;
		d->tests->size += d->n;
		set->tests += d->n;
	}
	free(dropped);
	dropped = NULL;
	dropped_suites = 0;
}

int main(int argc, char *argv[])
{
	struct criterion_test_set *set = criterion_initialize();
	const char *spec = getenv("KEVENT_TEST_INSTANCES"), *bad = NULL;
	struct kt_selection sel;
	int ret = 0, err;

	if (criterion_handle_args(argc, argv, true)) {
		err = selection_parse(spec, &sel, &bad);
		if (!err)
			err = drop_unselected(set, &sel);
		if (err == -EINVAL) {
			fprintf(stderr, "%s: KEVENT_TEST_INSTANCES=%s: \"%.*s\" is neither \"first\" "
				"nor a revision 1 .. %d (ktest.h)\n", argv[0], spec,
				(int)strcspn(bad, ","), bad, KEVENT_ABI_REVISION);
			ret = 2;
		} else if (err) {
			fprintf(stderr, "%s: selecting the instances: %s\n", argv[0], strerror(-err));
			ret = 2;
		} else {
			ret = !criterion_run_all_tests(set);
		}
	}
	put_back(set);
	criterion_finalize(set);
	return ret;
}
