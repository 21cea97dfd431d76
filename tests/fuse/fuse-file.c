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
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <grp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/kevent.h>

/*
 * Every test that needs more than Criterion's default gets this one timeout:
 * a shorter one started beside a longer one made Criterion 2.4.1 drop and
 * leak the longer one's deadline, and the ASan tier abort
 * (tests/criterion-timeouts.py says how, and checks every program).
 */
#define FUSE_TEST_TIMEOUT 120

static const char *device(void)
{
	const char *d = getenv("KEVENT_DEVICE");

	return d && *d ? d : "/dev/kevent";
}

/*
 * An open queue of the fuse backend; the test skips where there is no
 * device, and fails where the device refuses the open (EBUSY, EACCES: a
 * fault of the daemon, not of this machine).
 */
static int fuse_open(int flags)
{
	struct kevent_info info;
	int fd = open(device(), flags | O_CLOEXEC);

	if (fd < 0 && (errno == ENOENT || errno == ENODEV || errno == ENXIO))
		cr_skip_test("%s: %s", device(), strerror(errno));
	cr_assert_geq(fd, 0, "open %s: %s", device(), strerror(errno));
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
	/* The ring maps both ways, the arrays move by process memory only. */
	cr_assert(info.features & KEVENT_FEAT_RING_SHM, "features %#x", info.features);
	cr_assert(info.features & KEVENT_FEAT_RING_MMAP, "features %#x", info.features);
	cr_assert(info.features & KEVENT_FEAT_PROCESS_VM, "features %#x", info.features);
	cr_assert_not(info.features & KEVENT_FEAT_RETRY_PATH,
		      "no retry rounds on a FUSE file: features %#x", info.features);
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

/* ---- the ring as the file's page cache (abi.md section 9) ---- */

static int ctl1(int fd, unsigned int cmd, struct ukevent *uk)
{
	struct kevent_ctl_arg a = { .cmd = cmd, .num = 1, .events = (uintptr_t)uk };

	return ioctl(fd, KEVENT_IOC_CTL, &a);
}

static int get_events(int fd, unsigned int min_nr, unsigned int max_nr, __u64 timeout_ns,
		      struct ukevent *out)
{
	struct kevent_get_events_arg a = {
		.min_nr = min_nr, .max_nr = max_nr, .timeout_ns = timeout_ns,
		.events = (uintptr_t)out,
	};

	return ioctl(fd, KEVENT_IOC_GET_EVENTS, &a);
}

/* A ONESHOT timer of ms milliseconds whose id.raw[1] is seq. */
static void add_timer(int fd, unsigned int ms, __u32 seq)
{
	struct ukevent uk;

	memset(&uk, 0, sizeof(uk));
	uk.id.raw[0] = ms;
	uk.id.raw[1] = seq;
	uk.type = KEVENT_TIMER;
	uk.event = KEVENT_TIMER_FIRED;
	uk.req_flags = KEVENT_REQ_ONESHOT;
	cr_assert_eq(ctl1(fd, KEVENT_CTL_ADD, &uk), 0, "ADD timer: %s", strerror(errno));
}

static const unsigned char *map_file(int fd)
{
	const unsigned char *p = mmap(NULL, KEVENT_RING_SIZE, PROT_READ, MAP_SHARED, fd, 0);

	cr_assert(p != MAP_FAILED, "mmap() of the FUSE file: %s", strerror(errno));
	return p;
}

static __u32 ring_index(const unsigned char *ring)
{
	return __atomic_load_n((const __u32 *)ring, __ATOMIC_ACQUIRE);
}

static const struct mukevent *ring_slot(const unsigned char *ring, unsigned int s)
{
	return (const struct mukevent *)(ring + KEVENT_RING_SLOT_OFFSET(s));
}

/* Wait (bounded, 5 s) until the mapping's index is want. */
static int await_index(const unsigned char *ring, __u32 want)
{
	for (int i = 0; i < 5000 && ring_index(ring) != want; i++)
		usleep(1000);
	return ring_index(ring) == want;
}

/* The page cache is the ring: a plain mmap() maps it, and a fire shows. */
Test(fuse, raw_mmap_maps_the_ring)
{
	int fd = fuse_open(O_RDWR);
	const unsigned char *ring = map_file(fd);
	struct ukevent out[2];

	cr_assert_eq(ring_index(ring), 0u, "fresh queue");
	add_timer(fd, 5, 77);
	cr_assert_eq(get_events(fd, 1, 2, 5000000000ULL, out), 1);
	cr_assert(await_index(ring, 1), "index %u after one fire", ring_index(ring));
	cr_assert_eq(ring_slot(ring, 0)->id.raw[0], 5u);
	cr_assert_eq(ring_slot(ring, 0)->id.raw[1], 77u);
	cr_assert_eq(ring_slot(ring, 0)->ret_flags, (__u32)KEVENT_RET_DONE);
	munmap((void *)ring, KEVENT_RING_SIZE);
	close(fd);
}

/*
 * abi.md section 9: FUSE never tells the daemon about mmap(), so the A10
 * and D23 refusals cannot hold: private, writable shared, offset and long
 * mappings all succeed, and only the ring's bytes are ever in them.
 */
Test(fuse, mmap_refusals_do_not_hold)
{
	int fd = fuse_open(O_RDWR);
	void *p;

	p = mmap(NULL, KEVENT_RING_SIZE, PROT_READ, MAP_PRIVATE, fd, 0);
	cr_assert(p != MAP_FAILED, "MAP_PRIVATE: %s", strerror(errno));
	munmap(p, KEVENT_RING_SIZE);
	p = mmap(NULL, KEVENT_RING_PAGE_SIZE, PROT_READ, MAP_SHARED, fd, KEVENT_RING_PAGE_SIZE);
	cr_assert(p != MAP_FAILED, "offset 4096: %s", strerror(errno));
	munmap(p, KEVENT_RING_PAGE_SIZE);
	p = mmap(NULL, KEVENT_RING_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	cr_assert(p != MAP_FAILED, "PROT_WRITE MAP_SHARED: %s", strerror(errno));
	munmap(p, KEVENT_RING_SIZE);
	close(fd);
}

/*
 * abi.md section 9: read() is the page cache's, so it returns the ring's
 * bytes (D15 cannot hold); write() is EINVAL and never reaches the ring;
 * the file is not seekable (pread ESPIPE), as the 2006 device.
 */
Test(fuse, read_is_the_ring_write_is_einval)
{
	int fd = fuse_open(O_RDWR);
	const unsigned char *ring = map_file(fd);
	struct ukevent out[2];
	char buf[16] = "";
	__u32 head[2] = { 7, 7 };

	add_timer(fd, 2, 1);
	cr_assert_eq(get_events(fd, 1, 2, 5000000000ULL, out), 1);
	cr_assert(await_index(ring, 1));
	cr_assert_eq(write(fd, buf, sizeof(buf)), -1);
	cr_assert_eq(errno, EINVAL, "write: %s", strerror(errno));
	cr_assert_eq(pread(fd, head, sizeof(head), 0), -1);
	cr_assert_eq(errno, ESPIPE, "pread: %s", strerror(errno));
	cr_assert_eq(read(fd, head, sizeof(head)), (ssize_t)sizeof(head), "read: %s",
		     strerror(errno));
	cr_assert_eq(head[0], 1u, "read() of the index after one fire");
	cr_assert_eq(head[1], 0u, "the padding after the index");
	/* Nothing written reached the ring. */
	cr_assert_eq(ring_index(ring), 1u);
	munmap((void *)ring, KEVENT_RING_SIZE);
	close(fd);
}

/* B5: each open is its own inode, so its own page cache and its own ring. */
Test(fuse, two_queues_two_rings)
{
	int a = fuse_open(O_RDWR), b = fuse_open(O_RDWR);
	const unsigned char *ra = map_file(a), *rb = map_file(b);
	struct ukevent out[2];

	add_timer(a, 3, 1);
	cr_assert_eq(get_events(a, 1, 2, 5000000000ULL, out), 1);
	cr_assert(await_index(ra, 1));
	cr_assert_eq(ring_index(rb), 0u, "queue b's ring shows queue a's fire");
	add_timer(b, 4, 2);
	add_timer(b, 4, 3);
	cr_assert_eq(get_events(b, 2, 2, 5000000000ULL, out), 2);
	cr_assert(await_index(rb, 2));
	cr_assert_eq(ring_index(ra), 1u, "queue a's ring shows queue b's fires");
	munmap((void *)ra, KEVENT_RING_SIZE);
	munmap((void *)rb, KEVENT_RING_SIZE);
	close(a);
	close(b);
}

/*
 * abi.md 5.5: an event a caller hears of has its slot in the mapping, as on
 * the module (there the slot is written before the event is ready): the
 * daemon answers GET_EVENTS and poll() only once the store is in.  No wait
 * between the answer and the look at the index.
 */
Test(fuse, answered_events_are_in_the_mapping)
{
	int fd = fuse_open(O_RDWR);
	const unsigned char *ring = map_file(fd);
	struct ukevent out[2];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	for (__u32 i = 0; i < 300; i++) {
		add_timer(fd, 1, i);
		if (i % 2) {
			cr_assert_eq(poll(&pfd, 1, 5000), 1, "poll %u", i);
			cr_assert_eq(ring_index(ring), i + 1, "poll() said readable, index %u, want %u",
				     ring_index(ring), i + 1);
		}
		cr_assert_eq(get_events(fd, 1, 2, 5000000000ULL, out), 1, "fire %u", i);
		cr_assert_eq(ring_index(ring), i + 1, "GET_EVENTS answered, index %u, want %u",
			     ring_index(ring), i + 1);
		cr_assert_eq(ring_slot(ring, i)->id.raw[1], i);
	}
	munmap((void *)ring, KEVENT_RING_SIZE);
	close(fd);
}

/* Eviction under load (below): the shared state of its three threads. */
struct evict_run {
	int fd;
	const unsigned char *ring;
	atomic_uint fired;		/* events dequeued: their slots are written */
	atomic_int done;
	unsigned int evicted;		/* passes that found page 0 gone */
	char err[160];
};

/* Drop the pages: unmap ours, then ask the kernel to drop the clean cache. */
static void *evictor(void *arg)
{
	struct evict_run *e = arg;
	unsigned char vec[KEVENT_RING_PAGES];

	while (!atomic_load(&e->done)) {
		madvise((void *)e->ring, KEVENT_RING_SIZE, MADV_DONTNEED);
		posix_fadvise(e->fd, 0, KEVENT_RING_SIZE, POSIX_FADV_DONTNEED);
		if (!mincore((void *)e->ring, KEVENT_RING_SIZE, vec) && !(vec[0] & 1))
			e->evicted++;
		usleep(200);
	}
	return NULL;
}

/* The abi.md 5.4 reader: every slot, once, in order, none from the future. */
static void *reader(void *arg)
{
	struct evict_run *e = arg;
	__u32 old = 0, seen = 0;

	while (!e->err[0]) {
		int last = atomic_load(&e->done);
		__u32 now = ring_index(e->ring), fired = atomic_load(&e->fired);
		__u32 adv = (now - old) % KEVENT_MAX_EVENTS;

		/*
		 * fired is read after the index: the index can be at most the
		 * one fire ahead whose GET_EVENTS has not returned yet.
		 */
		if (seen + adv > fired + 1) {
			snprintf(e->err, sizeof(e->err),
				 "index went %u -> %u with %u seen and %u fired: torn or stepped back",
				 old, now, seen, fired);
			break;
		}
		for (; old != now; old = (old + 1) % KEVENT_MAX_EVENTS, seen++) {
			const struct mukevent *m = ring_slot(e->ring, old);

			if (m->id.raw[0] != 1 || m->id.raw[1] != seen ||
			    m->ret_flags != KEVENT_RET_DONE) {
				snprintf(e->err, sizeof(e->err),
					 "slot %u: id {%u, %u} flags %#x, want {1, %u} DONE", old,
					 m->id.raw[0], m->id.raw[1], m->ret_flags, seen);
				break;
			}
		}
		if (last && seen == atomic_load(&e->fired))
			break;
		if (old == now)
			usleep(50);	/* two cores: leave the fires their time */
		if (last && !await_index(e->ring, atomic_load(&e->fired) % KEVENT_MAX_EVENTS)) {
			snprintf(e->err, sizeof(e->err), "index %u, want %u at the end",
				 ring_index(e->ring), atomic_load(&e->fired));
			break;
		}
	}
	return NULL;
}

/*
 * Clean pages may be evicted and re-read at any time: while fires flow
 * (one ONESHOT timer at a time, id.raw[1] counting), a thread drops the
 * pages again and again, and the reader of abi.md 5.4 must still see
 * every slot in order, the index never torn, never stepping back.  1500
 * fires cross five pages of slots.
 */
Test(fuse, eviction_keeps_every_slot_in_order, .timeout = FUSE_TEST_TIMEOUT)
{
	struct evict_run e = { .fd = fuse_open(O_RDONLY) };
	struct ukevent out[2];
	pthread_t ev, rd;

	e.ring = map_file(e.fd);
	cr_assert_eq(pthread_create(&ev, NULL, evictor, &e), 0);
	cr_assert_eq(pthread_create(&rd, NULL, reader, &e), 0);
	for (__u32 i = 0; i < 1500 && !e.err[0]; i++) {
		add_timer(e.fd, 1, i);
		cr_assert_eq(get_events(e.fd, 1, 2, 5000000000ULL, out), 1, "fire %u", i);
		atomic_store(&e.fired, i + 1);
	}
	atomic_store(&e.done, 1);
	pthread_join(rd, NULL);
	pthread_join(ev, NULL);
	cr_assert_eq(e.err[0], 0, "%s", e.err);
	cr_assert_gt(e.evicted, 0u, "the pages were never evicted: the test tested nothing");
	cr_log_info("page 0 found evicted %u times", e.evicted);
	munmap((void *)e.ring, KEVENT_RING_SIZE);
	close(e.fd);
}

/* The mapping holds the file: the queue lives on after close() (A10, B6). */
Test(fuse, mapping_outlives_close)
{
	int fd = fuse_open(O_RDWR);
	const unsigned char *ring = map_file(fd);

	add_timer(fd, 50, 9);
	close(fd);
	cr_assert(await_index(ring, 1), "no fire after close(): index %u", ring_index(ring));
	cr_assert_eq(ring_slot(ring, 0)->id.raw[1], 9u);
	munmap((void *)ring, KEVENT_RING_SIZE);
}

/* ---- many queues, other uids, killed clients ---- */

static void info_of(int fd, struct kevent_info *info)
{
	memset(info, 0, sizeof(*info));
	cr_assert_eq(ioctl(fd, KEVENT_IOC_INFO, info), 0, "INFO: %s", strerror(errno));
}

/* Wait (bounded, 30 s) until INFO of fd says its queue has want parked calls. */
static int await_queue_parked(int fd, __u32 want)
{
	struct kevent_info info;

	for (int i = 0; i < 3000; i++) {
		info_of(fd, &info);
		if (info.queue_parked == want)
			return 1;
		usleep(10000);
	}
	return 0;
}

/*
 * B5 across uids on one mount: a queue of root and its ring stay out of
 * reach of uid nobody, who gets a queue and a ring of its own.
 */
Test(fuse, other_uid_cannot_reach_queue_or_ring)
{
	int fd = fuse_open(O_RDWR);
	const unsigned char *ring = map_file(fd);
	struct kevent_ring_shm shm;
	struct ukevent out[2];
	struct stat mine;
	char proc[64];
	pid_t pid;
	int st;

	add_timer(fd, 1, 5);
	cr_assert_eq(get_events(fd, 1, 2, 5000000000ULL, out), 1);
	cr_assert(await_index(ring, 1));
	memset(&shm, 0, sizeof(shm));
	cr_assert_eq(ioctl(fd, KEVENT_IOC_RING_SHM, &shm), 0, "RING_SHM: %s", strerror(errno));
	cr_assert_eq(fstat(fd, &mine), 0);
	snprintf(proc, sizeof(proc), "/proc/%d/fd/%d", (int)getpid(), fd);
	pid = fork();
	if (pid == 0) {
		struct stat other;
		const unsigned char *r;
		int o;

		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(10);
		if (open(proc, O_RDONLY) >= 0)
			_exit(11);	/* reopened root's queue */
		if (open(shm.path, O_RDONLY) >= 0)
			_exit(12);	/* read root's ring object */
		o = open(device(), O_RDONLY);
		if (o < 0)
			_exit(errno == EACCES ? 13 : 14);
		if (fstat(o, &other) || other.st_ino == mine.st_ino)
			_exit(15);	/* root's inode, root's page cache */
		r = mmap(NULL, KEVENT_RING_SIZE, PROT_READ, MAP_SHARED, o, 0);
		if (r == MAP_FAILED)
			_exit(16);
		_exit(ring_index(r) != 0 || ring_slot(r, 0)->id.raw[1] != 0 ? 17 : 0);
	}
	cr_assert(pid > 0);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st), "the other uid's child died of a signal");
	cr_assert_neq(WEXITSTATUS(st), 13, "uid nobody cannot open %s (is its path 0711?)", device());
	cr_assert_eq(WEXITSTATUS(st), 0, "uid nobody: step %d (11 reopen, 12 ring object, "
		     "15 same inode, 17 saw root's ring)", WEXITSTATUS(st));
	munmap((void *)ring, KEVENT_RING_SIZE);
	close(fd);
}

/* 1000 queues open at once: each its own inode and ring, all released. */
Test(fuse, thousand_queues_at_once, .timeout = FUSE_TEST_TIMEOUT)
{
	enum { N = 1000 };
	static int fds[N];
	static ino_t inos[N];
	struct kevent_info info;
	struct rlimit rl;
	int fd = fuse_open(O_RDWR);
	__u32 base;

	info_of(fd, &info);
	close(fd);
	base = info.limits[KEVENT_LIMIT_QUEUES].used;
	if (info.limits[KEVENT_LIMIT_QUEUES].cap &&
	    info.limits[KEVENT_LIMIT_QUEUES].cap < base + N)
		cr_skip_test("per-uid queue cap %u: no room for %d queues",
			     info.limits[KEVENT_LIMIT_QUEUES].cap, N);
	cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < N + 64) {
		rl.rlim_cur = rl.rlim_max < N + 64 ? rl.rlim_max : N + 64;
		setrlimit(RLIMIT_NOFILE, &rl);
		if (rl.rlim_cur < N + 64)
			cr_skip_test("RLIMIT_NOFILE %lu: no room for %d fds", (unsigned long)rl.rlim_cur, N);
	}
	for (int i = 0; i < N; i++) {
		struct stat st;

		fds[i] = open(device(), O_RDWR | O_CLOEXEC);
		cr_assert(fds[i] >= 0, "open #%d: %s", i, strerror(errno));
		cr_assert_eq(fstat(fds[i], &st), 0);
		inos[i] = st.st_ino;
		for (int j = 0; j < i; j++)
			cr_assert_neq(inos[j], st.st_ino, "opens #%d and #%d share an inode", j, i);
	}
	info_of(fds[0], &info);
	/* Other tests of this program open and close queues meanwhile: roughly. */
	cr_assert_geq(info.limits[KEVENT_LIMIT_QUEUES].used, N, "%u queues charged",
		      info.limits[KEVENT_LIMIT_QUEUES].used);
	/* The last queue's fire shows in its ring only (the first as witness). */
	const unsigned char *first = map_file(fds[0]), *last = map_file(fds[N - 1]);
	struct ukevent out[2];

	add_timer(fds[N - 1], 1, 1);
	cr_assert_eq(get_events(fds[N - 1], 1, 2, 5000000000ULL, out), 1);
	cr_assert_eq(ring_index(last), 1u);
	cr_assert_eq(ring_index(first), 0u);
	munmap((void *)first, KEVENT_RING_SIZE);
	munmap((void *)last, KEVENT_RING_SIZE);
	for (int i = 0; i < N; i++)
		close(fds[i]);
	/* release is asynchronous on FUSE (abi.md 9): wait for the count. */
	for (int i = 0; i < 1000; i++) {
		fd = fuse_open(O_RDWR);
		info_of(fd, &info);
		close(fd);
		if (info.limits[KEVENT_LIMIT_QUEUES].used < base + N / 2)
			break;
		usleep(10000);
	}
	cr_assert_lt(info.limits[KEVENT_LIMIT_QUEUES].used, base + N / 2,
		      "%u queues still charged 10 s after closing them (base %u)",
		      info.limits[KEVENT_LIMIT_QUEUES].used, base);
}

/*
 * kill -9 of a client parked in GET_EVENTS: it dies (the daemon answers
 * the interrupt at once), its waiter is released, the daemon serves on.
 * The queue is opened before the fork, so this process sees that queue's
 * own parked count (INFO queue_parked): the daemon-wide live_waiters moves
 * with every test running beside this one.
 */
Test(fuse, sigkill_of_a_parked_client, .timeout = FUSE_TEST_TIMEOUT)
{
	int fd = fuse_open(O_RDWR), c = fuse_open(O_RDWR), st;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		struct ukevent out[1];

		get_events(c, 1, 1, KEVENT_TIMEOUT_INFINITE, out);
		_exit(2);	/* never: nothing fires */
	}
	cr_assert(pid > 0);
	cr_assert(await_queue_parked(c, 1), "the child never parked");
	cr_assert_eq(kill(pid, SIGKILL), 0);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "status %#x", st);
	cr_assert(await_queue_parked(c, 0), "the killed client's waiter is still parked");
	close(c);
	add_timer(fd, 1, 1);
	struct ukevent out[1];
	cr_assert_eq(get_events(fd, 1, 1, 5000000000ULL, out), 1, "the daemon stopped serving");
	close(fd);
}

/* ---- the --link alias (a symlink, never a bind mount) ---- */

static const char *alias(void)
{
	const char *l = getenv("KEVENT_FUSE_LINK");

	if (!l || !*l)
		cr_skip_test("no KEVENT_FUSE_LINK: the daemon runs without --link here");
	return l;
}

/* Every open through the symlink is a fresh lookup: its own inode and queue. */
Test(fuse, alias_opens_a_queue_of_its_own)
{
	const char *l = alias();
	int a = open(l, O_RDWR | O_CLOEXEC), b = open(l, O_RDWR | O_CLOEXEC);
	int direct = fuse_open(O_RDWR);
	struct kevent_info info;
	struct stat sa, sb, sd, sl;

	cr_assert(a >= 0 && b >= 0, "open %s: %s", l, strerror(errno));
	cr_assert_eq(lstat(l, &sl), 0);
	cr_assert(S_ISLNK(sl.st_mode), "%s is no symlink", l);
	memset(&info, 0, sizeof(info));
	cr_assert_eq(ioctl(a, KEVENT_IOC_INFO, &info), 0, "INFO: %s", strerror(errno));
	cr_assert_eq(info.backend, (__u32)KEVENT_BACKEND_FUSE);
	cr_assert_eq(fstat(a, &sa), 0);
	cr_assert_eq(fstat(b, &sb), 0);
	cr_assert_eq(fstat(direct, &sd), 0);
	cr_assert_neq(sa.st_ino, sb.st_ino, "two opens of the alias share an inode");
	cr_assert_neq(sa.st_ino, sd.st_ino, "the alias and the path share an inode");
	/* Two queues: a kevent on one is not on the other. */
	add_timer(a, 3600000, 1);
	memset(&info, 0, sizeof(info));
	cr_assert_eq(ioctl(b, KEVENT_IOC_INFO, &info), 0);
	cr_assert_eq(info.queue_kevents, 0u, "the alias's second open sees the first's kevent");
	close(a);
	close(b);
	close(direct);
}

/* abi.md 7.7: a reopen of an alias-opened fd through /proc/self/fd is EBUSY. */
Test(fuse, alias_proc_fd_reopen_is_ebusy)
{
	const char *l = alias();
	int fd = open(l, O_RDWR | O_CLOEXEC), again;
	char path[64];

	cr_assert(fd >= 0, "open %s: %s", l, strerror(errno));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	again = open(path, O_RDWR | O_CLOEXEC);
	cr_assert_eq(again, -1, "a reopen through %s opened a second queue", path);
	cr_assert_eq(errno, EBUSY, "reopen: %s", strerror(errno));
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
