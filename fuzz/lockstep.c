// SPDX-License-Identifier: GPL-2.0
/*
 * kevent-lockstep: the programs of kfuzz (prog.h) run by the one
 * interpreter (interp.c) through this file's device executor: a real
 * /dev/kevent, and after every operation the device is compared with the
 * shadow model (model.c): the return value and errno, every byte of user
 * memory (CTL write-back, GET_EVENTS output in order with
 * ret_flags/ret_data), INFO field by field, the ring slot by slot and its
 * index, the poll() mask.
 *
 *   kevent-lockstep [-d DEV] [-x DEV2] [-n PROGRAMS] [-s SEED] [-t SECONDS]
 *                   [-a DIR] [-k] [-v] PATH...
 *
 * PATH: program files or directories of them (fuzz/corpus).  Without -n
 * every program is replayed once (the corpus replay); with -n, PROGRAMS
 * mutations of randomly chosen ones (seed -s) run after that replay.
 * Without PATH: the seeds and reproducers of the source tree's fuzz/corpus
 * (seed-*, lockstep-*), then mutations of them for -t (default 60) seconds:
 * the bounded run of the fuse suite and of every guest boot.
 * -t stops after SECONDS; -a writes each program that differed to DIR;
 * -k keeps going after a difference (a campaign), else the first stops it.
 * -x: cross-backend mode, each program on DEV and DEV2 and their records
 * compared (see "Cross-backend mode" below).
 * Exit 0: no difference; 1: a difference (or a hang: alarm); 77: no device.
 *
 * The device runs real origins, so the program's operations are mapped to
 * sources this process owns and orders (see "sources" below), and what
 * may differ per backend is the one table lk_rules[] (fuzz/README.md).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "interp.h"

#define UKSZ		sizeof(struct ukevent)
#define RESERVE		((size_t)1 << 32)	/* any arena offset lands in it */
#define GUARD		65536			/* PROT_NONE before the arena */
#define TIMER_PERIOD_MS	3600000u		/* never expires within a program */
#define TIMER_SHORT_MS	2u			/* ONESHOT: the fuzzer waits past it */
#define TIMER_WILDCARD	0xfffffff1u		/* model's ret_data[0]: the window decides */
#define PTIMER_SHORT_NS	2000000ull		/* a POSIX timer the fuzzer waits past */
#define PTIMER_LONG_S	3600			/* never expires within a program */
#define PTIMER_SOON_NS	1000000000ull		/* a deadline closer than this: a short one */
#define PTIMER_PAST_NS	3000000ull		/* the wait past a deadline (TIMER's margin) */
#define EXTSZ		sizeof(struct ukevent_ext)
#define NWIN		64
#define WAIT_CLAMP_NS	1000000ull		/* a would-be-parked GET waits 1 ms */
#define SETTLE_MS	5000			/* fuse's release is asynchronous */
#define ALARM_S		60			/* a program that hangs is a failure */
#define QUIET_MS	500			/* counters unchanged this long: start */
#define QUIET_MAX_MS	30000

/*
 * What may differ between the model and a device, and why: the one list.
 * Each entry is used by the code that names it (LK_*), so a new allowance
 * needs a new entry here with its rule.
 */
enum lk_rule_id {
	LK_INFO_BACKEND,	/* INFO backend and features: the device's */
	LK_INFO_PATH,		/* max_ctl_num/max_get_nr: the caller's path */
	LK_INFO_CAPS,		/* limits[].cap: the daemon's configuration */
	LK_INFO_SHARED,		/* live_* and limits[].used: deltas from a baseline */
	LK_TYPES,		/* supported_types: the device's */
	LK_ARG_NULL,		/* argument pointer 0: EFAULT from the transport */
	LK_LEN_PLUS1,		/* arg_len != _IOC_SIZE cannot be said to a device */
	LK_FAULT_OP,		/* byte-granular fault windows: not run */
	LK_NOT_MODELLED,	/* RING_SHM, FAULT, DRAIN numbers: not compared */
	LK_PARK,		/* a blocking GET waits 1 ms, then takes what is ready */
	LK_RELEASE,		/* fuse: release after close() returns */
	LK_HARNESS_OPS,		/* test-origin, clock and uid operations: no device form */
	LK_SOURCES,		/* entries mapped onto this process's sources */
	LK_PLAN_RANGES,		/* the transport probes GET_EVENTS' whole output first */
	LK_WAITER_PUT,		/* live_waiters awaited after a GET that waited */
	LK_TIMER_STAMP,		/* timer ret_data[0]: a window from the ADD time */
	LK_ONE_PER_SOURCE,	/* a write that would ready 2+ kevents of one queue: not run */
	LK_NO_FD_ORIGINS,	/* no KEVENT_FEAT_FD_ORIGINS: fd-taking entries -EPERM */
	LK_RETRY_CTL_FAULT,	/* retry path: a faulting CTL does not end SET_ABI's window */
	LK_URING_ADDR,		/* RING_INIT's ring: an address in the arena */
	LK_WAIT_BLOCKS,		/* a WAIT that would block: not run */
	LK_RAW_ADDR,		/* a raw CTL/GET struct's address: an arena offset */
	LK_PTIMER,		/* POSIX timer settings mapped; QUERY's time left: a window */
	LK_NR
};

static const struct lk_rule {
	const char *what, *rule;
} lk_rules[LK_NR] = {
	[LK_INFO_BACKEND] = { "INFO backend, features (per caller)",
			      "abi.md 2.6; section 9 'what INFO shows for each caller'" },
	[LK_INFO_PATH] = { "INFO max_ctl_num, max_get_nr: 4095 or 3276 (retry path), "
			   "so -E2BIG and the GET_EVENTS clamp follow the device's",
			   "abi.md B4, section 6 (CUSE retry-path limits)" },
	[LK_INFO_CAPS] = { "INFO limits[].cap; the model charges against them. The module "
			   "counts nothing per uid: cap 0 and used 0",
			   "abi.md D18, section 8; section 9 'Module only'" },
	[LK_INFO_SHARED] = { "INFO live_*, limits[].used: backend-wide and per uid, "
			     "so other clients count: compared from a baseline",
			     "abi.md 2.6 (live_* are backend-wide)" },
	[LK_TYPES] = { "supported_types: TIMER and POLL always, SOCKET and INODE where "
		       "implemented", "abi.md A3" },
	[LK_ARG_NULL] = { "a NULL argument: EFAULT (or the size error the number alone "
			  "gives); the core's own -EINVAL is its transports' business",
			  "abi.md 7.1 EFAULT; section 9 fuse 'A short argument buffer is EFAULT'" },
	[LK_LEN_PLUS1] = { "arg_len = _IOC_SIZE + 1: a device always copies _IOC_SIZE bytes",
			   "abi.md D24 (size from _IOC_SIZE)" },
	[LK_FAULT_OP] = { "FAULT windows are byte ranges of kfuzz's accessor; not run "
			  "(pages and the path decide, section 6)", "abi.md section 6" },
	[LK_NOT_MODELLED] = { "RING_SHM (the daemon's), FAULT and DRAIN (test-only) numbers: "
			      "not run", "abi.md 2.7, 2.10" },
	[LK_PARK] = { "GET_EVENTS that would park: timeout set to 1 ms, the model takes "
		      "what is ready then (nothing arrives while it waits)", "abi.md D33, D8" },
	[LK_RELEASE] = { "after close(), counters are awaited (fuse answers release "
			 "after close() returned)", "abi.md section 9 fuse 'release is asynchronous'" },
	[LK_HARNESS_OPS] = { "INTR, PUT, EXEC (runs at once), UID, CLOCK, RUN, OPEN's "
			     "ENOMEM bits and notify: the in-process core's hooks", "fuzz/README.md" },
	[LK_SOURCES] = { "TIMER: period 1 h (never fires), or with odd id.raw[1] a 2 ms "
			 "ONESHOT the fuzzer waits past after the CTL (an expiry still missing after "
			 "the barrier is awaited up to 200 ms: the module's hrtimer under TCG, 2.10); "
			 "POLL/SOCKET: id.raw[0] one of "
			 "our pipes or socket, read bits only; INODE: our private directory, "
			 "CREATE|REMOVE; FIRE writes a byte (id1 bit 7: creates a file), BREAK "
			 "drains (removes one); FIRES (in process: the racing origin's) gives a "
			 "pipe's or the socket's fd number a new file, the old one drained (D69: "
			 "its kevents' next delivery on revision 4 is BROKEN -EBADF), or with "
			 "data 4 mod 8 closes the number until a FIRES gives it a file or the "
			 "program ends (D69 as well; an ADD on it fails -EBADF, FIRE is not "
			 "run), or with an odd data writes a byte into the old one",
			 "abi.md A6, A7, A8, A9, D13, D31, D69, section 7 (ADD's -EBADF)" },
	[LK_PLAN_RANGES] = { "GET_EVENTS with max_nr > 0: an output range that is not all "
			     "usable is -EFAULT even with nothing ready (the module probes it, the "
			     "daemon fetches the plan's ranges; kfuzz's core alone never touches it)",
			     "abi.md D10, section 6 'output unmapped at the call'" },
	[LK_WAITER_PUT] = { "after a GET_EVENTS that waited, live_waiters is awaited: the "
			    "daemon puts the waiter after its reply", "abi.md 2.6 (live_waiters)" },
	[LK_TIMER_STAMP] = { "a short timer's ret_data[0]: within [ms before, ms after the "
			     "arming CTL] + period, not one value", "abi.md A9, D37" },
	[LK_ONE_PER_SOURCE] = { "a FIRE that would make two or more kevents of one queue ready "
				"at once is not run: their order on the ready list is not "
				"specified (daemon: epoll's wake order; module: its workqueue)",
				"abi.md 5.5" },
	[LK_NO_FD_ORIGINS] = { "a caller INFO shows without KEVENT_FEAT_FD_ORIGINS: POLL "
			       "and SOCKET entries fail -EPERM", "abi.md B2; section 9 (pid "
			       "namespace, Yama ptrace_scope=3)" },
	[LK_URING_ADDR] = { "RING_INIT's ring address (raw bytes in a program): taken modulo "
			    "the arena, its low 3 bits kept, so a ring lands in user memory the "
			    "fuzzer compares", "abi.md D53" },
	[LK_WAIT_BLOCKS] = { "a WAIT that would block (a ring, nothing ready or no free slot, "
			     "a timeout): not run, nothing would arrive while it waits",
			     "abi.md D55, D48" },
	[LK_RAW_ADDR] = { "a raw IOCTL's CTL or GET_EVENTS array address: its low 32 bits "
			  "as an arena offset (NULL stays), so it lands in the arena or faults, "
			  "whatever else the process maps", "fuzz/README.md (the arena)" },
	[LK_RETRY_CTL_FAULT] = { "retry path: a CTL whose array faults never reaches the "
				 "daemon, so SET_ABI still answers", "abi.md section 9 (retry "
				 "path), O2" },
	[LK_PTIMER] = { "POSIX timers (ADD, EXT MODIFY): a valid armed setting becomes 1 h, or "
			"2 ms for an odd id.raw[1] on the last entry of an array without a short "
			"TIMER (so its expiry comes after every other effect of the call), "
			"relative or ABSTIME on its clock from the time of the call; a nonzero "
			"interval 1 h. The fuzzer waits 3 ms past a 2 ms deadline after the CTL "
			"(and past the call's return: an ABSTIME deadline a slow call passed "
			"fires by an interrupt still to come), then the barrier; an expiry "
			"not there yet is awaited up to 200 ms and counted late (D58 gives "
			"no latency); the count (ret_data[0]) is compared exactly, QUERY's time left "
			"within the arming call's clock readings (+ interval) minus the QUERY's",
			"abi.md D58, D59, D61, 2.10 (a timer not yet fired is not drained)" },
};

/* ---- sources: what FIRE and BREAK act on ---- */

#define NSRC	3	/* two pipes, one AF_UNIX stream socketpair */

static struct lk_src {
	int rd, wr;
	bool sock;
	bool closed;		/* FIRES closed rd's number: no file, wr -1 */
	unsigned int pending;	/* bytes written and not drained */
} src[NSRC];

/*
 * The files the fuzzer keeps during a program (queues, the write ends of
 * the files FIRES makes) get numbers from here up, above every source's:
 * a number FIRES closed must stay closed (D69's EBADF) while kevents were
 * added on it, and open() would hand out the lowest free number.
 */
#define FD_KEPT_FLOOR	256

/*
 * The files FIRES took a source's number from (D69), by their write ends:
 * open until the program's end, so an old file never hangs up while a
 * kevent watches it.  retired[t - 1] is the old file the model tags t
 * (m4_fd_replaced).  At most NRETIRED a program (then FIRES is not run).
 */
#define NRETIRED	32
static struct lk_old {
	int wr;
	int src;		/* the source whose number it had */
	unsigned int pending;	/* bytes written, never read */
} retired[NRETIRED];
static unsigned int nretired;

#define POLL_READ_BITS	(KEVENT_POLL_POLLIN | KEVENT_POLL_POLLPRI | KEVENT_POLL_POLLERR | \
			 KEVENT_POLL_POLLHUP | KEVENT_POLL_POLLRDNORM | KEVENT_POLL_POLLRDBAND | \
			 KEVENT_POLL_POLLMSG)

/*
 * The inode source: a private directory the fuzzer creates files in (FIRE
 * with id1 bit 7) and removes them from (BREAK with id1 bit 7); INODE
 * entries watch it.
 */
#define INO_SRC	0x80

static struct {
	char path[64];
	int dirfd;
	unsigned int files;	/* f0 .. f<files-1> exist */
	__u32 bit;		/* the event of the write being made */
} ino = { .dirfd = -1 };

/* Moves a file the fuzzer keeps to FD_KEPT_FLOOR or above; -1: it failed. */
static int keep_fd(int fd)
{
	int kept = fcntl(fd, F_DUPFD_CLOEXEC, FD_KEPT_FLOOR);

	if (kept < 0)
		kf_differs("moving fd %d above %d: %s", fd, FD_KEPT_FLOOR, strerror(errno));
	close(fd);
	return kept;
}

static int src_of_fd(__u32 fd)
{
	for (int i = 0; i < NSRC; i++)
		if ((__u32)src[i].rd == fd)
			return i;
	return -1;
}

/* The poll mask of a source's read end, as poll() reports it. */
static __u32 src_mask(int i)
{
	__u32 m = src[i].pending ? KEVENT_POLL_POLLIN | KEVENT_POLL_POLLRDNORM : 0;

	if (src[i].sock)
		m |= KEVENT_POLL_POLLOUT | KEVENT_POLL_POLLWRNORM;
	return m;
}

/* Idempotent: an entry already mapped maps to itself. */
static void map_entry(struct ukevent *uk)
{
	switch (uk->type) {
	case KEVENT_TIMER:
		/* odd id.raw[1]: a short ONESHOT timer the fuzzer waits past */
		if (uk->id.raw[1] & 1) {
			uk->id.raw[0] = TIMER_SHORT_MS;
			uk->event = KEVENT_TIMER_FIRED;
			uk->req_flags |= KEVENT_REQ_ONESHOT;
		} else {
			uk->id.raw[0] = TIMER_PERIOD_MS;
			uk->event &= KEVENT_TIMER_FIRED;
		}
		break;
	case KEVENT_POLL:
	case KEVENT_SOCKET:
		if (src_of_fd(uk->id.raw[0]) < 0)
			uk->id.raw[0] = (__u32)src[uk->id.raw[0] % NSRC].rd;
		uk->event &= uk->type == KEVENT_POLL ? POLL_READ_BITS : KEVENT_SOCKET_RECV;
		break;
	case KEVENT_INODE:
		/* D68: WRITE comes with every entry event (files only: no LINK) */
		uk->id.raw[0] = (__u32)ino.dirfd;
		uk->event &= KEVENT_INODE_CREATE | KEVENT_INODE_REMOVE | KEVENT_INODE_WRITE;
		break;
	default:
		/*
		 * MODIFY matches id and cookie, not the type (D7): an entry of
		 * another type must not reach a timer or an fd kevent of ours and
		 * give it an event or req_flags its mapping never allows.
		 */
		if (uk->id.raw[0] == TIMER_SHORT_MS || uk->id.raw[0] == TIMER_PERIOD_MS ||
		    src_of_fd(uk->id.raw[0]) >= 0 || uk->id.raw[0] == (__u32)ino.dirfd)
			uk->id.raw[0] = 1;
		break;
	}
}

/* What the source reports for uk now (fdwatch's check, A8, D13). */
static __u32 src_bits(const struct ukevent *uk)
{
	int i = src_of_fd(uk->id.raw[0]);

	if (i < 0)
		return 0;
	if (uk->type == KEVENT_SOCKET)
		return (uk->event & KEVENT_SOCKET_RECV) && src[i].pending ? KEVENT_SOCKET_RECV : 0;
	return src_mask(i) & uk->event;
}

static bool no_fd_origins;	/* the caller's INFO lacks KEVENT_FEAT_FD_ORIGINS */

/* Does uk name a source's number FIRES closed? */
static bool number_closed(const struct ukevent *uk)
{
	int i = src_of_fd(uk->id.raw[0]);

	return i >= 0 && src[i].closed;
}

static int org_check(const struct ukevent *uk, __u32 rdata[2])
{
	__u32 b;

	switch (uk->type) {
	case KEVENT_TIMER:
		/* A9: period 0 or no KEVENT_TIMER_FIRED: -EINVAL */
		return uk->id.raw[0] && (uk->event & KEVENT_TIMER_FIRED) ? 0 : -EINVAL;
	case KEVENT_INODE:
		return no_fd_origins ? -EPERM : 0;	/* entries, not a state: never ready now */
	case KEVENT_SOCKET:
		if (!no_fd_origins && number_closed(uk))
			return -EBADF;
		if (!no_fd_origins && !src[src_of_fd(uk->id.raw[0])].sock)
			return -ENOTSOCK;
		/* fall through */
	default:
		if (no_fd_origins)
			return -EPERM;	/* LK_NO_FD_ORIGINS */
		/* abi.md section 7: id.raw[0] is not an open fd of the caller */
		if (number_closed(uk))
			return -EBADF;
		b = src_bits(uk);
		rdata[0] = b;
		return b ? 1 : 0;
	}
}

static int org_attach(void *ctx, const struct ukevent *uk, __u32 rdata[2])
{
	return org_check(uk, rdata);
}

static int org_modify(void *ctx, const struct ukevent *uk, __u32 rdata[2])
{
	return org_check(uk, rdata);
}

/*
 * D67: what the device reads at a delivery, read here on this process's own
 * end of the same source (the kevent watches that very open file): bytes
 * readable for a readable bit, the free space for a writable one.  The
 * sources change only by this process's operations, so the count the
 * model computes now is the one the device read at the same step.
 */
static __u32 org_count(void *ctx, const struct ukevent *uk, __u32 fired)
{
	int i = src_of_fd(uk->id.raw[0]), n, size;
	__u32 in = uk->type == KEVENT_POLL ? KEVENT_POLL_POLLIN | KEVENT_POLL_POLLRDNORM
					   : KEVENT_SOCKET_RECV | KEVENT_SOCKET_ACCEPT;
	__u32 out = uk->type == KEVENT_POLL ? KEVENT_POLL_POLLOUT | KEVENT_POLL_POLLWRNORM
					    : KEVENT_SOCKET_SEND;
	socklen_t len = sizeof(size);

	(void)ctx;
	if (i < 0)
		return 0;
	if (fired & in)
		return ioctl(src[i].rd, FIONREAD, &n) < 0 || n < 0 ? 0 : (__u32)n;
	if (!(fired & out))
		return 0;
	if (src[i].sock) {
		if (getsockopt(src[i].rd, SOL_SOCKET, SO_SNDBUF, &size, &len) < 0 ||
		    ioctl(src[i].rd, SIOCOUTQ, &n) < 0)
			return 0;
	} else if ((size = fcntl(src[i].rd, F_GETPIPE_SZ)) < 0 ||
		   ioctl(src[i].rd, FIONREAD, &n) < 0) {
		return 0;
	}
	return size > n ? (__u32)(size - n) : 0;
}

/* The old file tag's readiness for uk, as src_bits() says a source's. */
static __u32 old_bits(const struct lk_old *o, const struct ukevent *uk)
{
	if (uk->type == KEVENT_SOCKET)
		return (uk->event & KEVENT_SOCKET_RECV) && o->pending ? KEVENT_SOCKET_RECV : 0;
	return (o->pending ? KEVENT_POLL_POLLIN | KEVENT_POLL_POLLRDNORM : 0) & uk->event;
}

/* MODIFY of a kevent whose number names another file: the daemon re-polls its old file. */
static int org_modify_old(void *ctx, const struct ukevent *uk, unsigned int tag, __u32 rdata[2])
{
	(void)ctx;
	rdata[0] = tag && tag <= nretired ? old_bits(&retired[tag - 1], uk) : 0;
	return rdata[0] ? 1 : 0;
}

static const struct m_origin lk_origin = { org_attach, org_modify, NULL, org_count,
					   org_modify_old };

/*
 * Short timers: the A9 window of each one's first report, [ms before the
 * arming call, ms after it] + period, keyed by id and cookie (D7).
 */
static struct lk_win {
	struct kevent_id id;
	__u32 user[2];
	__u32 lo, hi;
} win[NWIN];
static unsigned int nwin;

static void win_set(const struct ukevent *uk, __u32 lo, __u32 hi)
{
	unsigned int i;

	for (i = 0; i < nwin; i++)
		if (win[i].id.raw_u64 == uk->id.raw_u64 && !memcmp(win[i].user, uk->user, 8))
			break;
	if (i == nwin && nwin < NWIN)
		nwin++;
	if (i < NWIN)
		win[i] = (struct lk_win){ uk->id, { uk->user[0], uk->user[1] }, lo, hi };
}

static const struct lk_win *win_of(const struct ukevent *uk)
{
	for (unsigned int i = 0; i < nwin; i++)
		if (win[i].id.raw_u64 == uk->id.raw_u64 && !memcmp(win[i].user, uk->user, 8))
			return &win[i];
	return NULL;
}

static bool is_short_timer(const struct ukevent *uk)
{
	return uk->type == KEVENT_TIMER && uk->id.raw[0] == TIMER_SHORT_MS;
}

static __u32 timer_bits(void *ctx, const struct ukevent *uk)
{
	return is_short_timer(uk) ? TIMER_WILDCARD : 0;
}

/* The last FIRE's source: which kevents a write wakes (its readers). */
static int fire_src;

static __u32 fire_bits(void *ctx, const struct ukevent *uk)
{
	if (uk->type != KEVENT_POLL && uk->type != KEVENT_SOCKET && uk->type != KEVENT_INODE)
		return 0;	/* timers and user events hear no source */
	if (uk->type == KEVENT_INODE || fire_src < 0)
		return uk->type == KEVENT_INODE && fire_src < 0 &&
		       uk->id.raw[0] == (__u32)ino.dirfd ?
		       uk->event & (ino.bit | KEVENT_INODE_WRITE) : 0;	/* D68 */
	if (src_of_fd(uk->id.raw[0]) != fire_src)
		return 0;
	if (uk->type == KEVENT_POLL &&
	    !(uk->event & (KEVENT_POLL_POLLIN | KEVENT_POLL_POLLRDNORM)))
		return 0;	/* the wake-up's key is POLLIN|POLLRDNORM */
	return src_bits(uk);
}

/* ---- the device side ---- */

struct lk_q {
	int fd;
	unsigned char *ring;	/* read-only mapping, NULL: none */
	size_t ring_len;
};

static struct {
	const char *dev;
	int probe;			/* a queue of our own for INFO between programs */
	struct kevent_info base;	/* the probe's INFO at the start of a program */
	struct lk_q q[KF_NQ];
	unsigned char ctl_copy[KF_ARENA];
	bool drain;			/* KEVENT_IOC_DRAIN answers */
	bool verbose, keep_going, trace;	/* trace: LOCKSTEP_TRACE set */
	const char *prog_name;
	const char *where;		/* which run of a cross-backend pair differed */
	/* figures (operations: KR.ops) */
	unsigned long programs, diffs, ioctls, fires;
	unsigned long rev3_ops, ptimer_exp, query_left;	/* revision 3: what was compared */
	unsigned long ptimer_late;			/* timer expiries after the barrier */
	unsigned long new_files, closed_numbers, gone_kevents, old_writes, stale_records; /* D69 */
	unsigned long outcome[KF_OP_NR][64];	/* op x bucketed result: coverage */
	unsigned long entry_outcome[KEVENT_MAX + 1][4][64];	/* type x ret_flags x -errno */
} L;

/*
 * Cross-backend mode (-x DEV2): each program runs on -d's device, then on
 * DEV2, each against the model; what each device did is recorded on the way
 * (every ioctl's result, a hash of the user memory each step wrote, the
 * poll() mask, INFO's queue_kevents and queue_ready, the take13 ring index,
 * the kevents a source write readied) and the two records must be equal.
 * That catches what the model allows per backend (lk_rules[]: a NULL
 * argument, the ranges GET_EVENTS probes) and what it does not know.  The
 * per-backend INFO fields and the timers' stamps (A9 windows) are not
 * recorded.
 */
#define TR_MAX	16384

enum { TR_RESULT, TR_MEM, TR_POLL, TR_RING, TR_INFO, TR_FIRED };
static const char *const tr_names[] = {
	"ioctl result", "user memory written (hash)", "poll mask", "ring index",
	"INFO queue_kevents/queue_ready", "kevents readied by a source write",
};

struct lk_rec {
	unsigned int step;
	unsigned int kind, what;
	long long val;
};

static struct lk_dev {
	const char *path;
	int probe;
	bool drain;
	struct lk_rec *tr;
	unsigned int ntr;
} devs[2];
static int ndev = 1, cur_dev;

/*
 * Arena bytes that hold a timer stamp a GET_EVENTS wrote (this program):
 * not hashed, also when a later call writes back around them.
 */
static uint8_t stamp_map[KF_ARENA / 8 + 1];

static bool is_stamp(size_t i)
{
	return stamp_map[i / 8] & (1u << (i % 8));
}

static void mark_stamps(size_t off, size_t len)
{
	for (size_t i = off; i < off + len && i < KF_ARENA; i++)
		stamp_map[i / 8] |= (uint8_t)(1u << (i % 8));
}

static void mark_stamp(size_t off)
{
	mark_stamps(off, 4);
}

static void rec(unsigned int kind, unsigned int what, long long val)
{
	struct lk_dev *d = &devs[cur_dev];

	if (ndev > 1 && d->ntr < TR_MAX)
		d->tr[d->ntr++] = (struct lk_rec){ KR.step, kind, what, val };
}

static void rec_mem(size_t lo, size_t hi)
{
	unsigned long long h = 1469598103934665603ull;

	if (ndev < 2)
		return;
	for (size_t i = lo; i < hi; i++)
		h = (h ^ (is_stamp(i) ? 0 : KR.arena[i])) * 1099511628211ull;
	rec(TR_MEM, (unsigned int)lo, (long long)h);
}

/* The two devices' records: 0 equal, else the first difference in KR.why. */
static int cross_compare(void)
{
	const struct lk_dev *a = &devs[0], *b = &devs[1];
	unsigned int n = a->ntr < b->ntr ? a->ntr : b->ntr;

	for (unsigned int i = 0; i < n; i++) {
		const struct lk_rec *x = &a->tr[i], *y = &b->tr[i];

		if (!memcmp(x, y, sizeof(*x)))
			continue;
		snprintf(KR.why, sizeof(KR.why), "step %u: %s (%u): %lld on %s, %lld on %s "
			 "(step %u there)", x->step, tr_names[x->kind], x->what, x->val, a->path,
			 x->kind == y->kind && x->step == y->step ? y->val : -1, b->path, y->step);
		return 1;
	}
	if (a->ntr != b->ntr) {
		snprintf(KR.why, sizeof(KR.why), "%u records on %s, %u on %s", a->ntr, a->path,
			 b->ntr, b->path);
		return 1;
	}
	return 0;
}

void kf_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	abort();
}

static int info_of(int fd, struct kevent_info *out)
{
	memset(out, 0, sizeof(*out));
	return ioctl(fd, KEVENT_IOC_INFO, out) < 0 ? -errno : 0;
}

/* The barrier: every source event pending now has been handled. */
static void drain_origins(void)
{
	struct kevent_drain d = { 0 };

	if (L.drain && ioctl(L.probe, KEVENT_IOC_DRAIN, &d) < 0)
		kf_differs("KEVENT_IOC_DRAIN: %s", strerror(errno));
}

static void map_ring(struct lk_q *q, const struct kevent_info *info)
{
	struct kevent_ring_shm shm;
	int fd;

	q->ring = NULL;
	if (info->features & KEVENT_FEAT_RING_MMAP) {
		q->ring = mmap(NULL, KEVENT_RING_SIZE, PROT_READ, MAP_SHARED, q->fd, 0);
	} else if (info->features & KEVENT_FEAT_RING_SHM) {
		memset(&shm, 0, sizeof(shm));
		if (ioctl(q->fd, KEVENT_IOC_RING_SHM, &shm) < 0) {
			kf_differs("RING_SHM: %s", strerror(errno));
			return;
		}
		fd = open(shm.path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			kf_differs("open %s: %s", shm.path, strerror(errno));
			return;
		}
		q->ring = mmap(NULL, KEVENT_RING_SIZE, PROT_READ, MAP_SHARED, fd, 0);
		close(fd);
	} else {
		return;
	}
	if (q->ring == MAP_FAILED) {
		kf_differs("mapping the ring: %s", strerror(errno));
		q->ring = NULL;
	}
}

/* ---- checks after every operation: what the device shows ---- */

/* The model's INFO, with the allowances of lk_rules[] applied. */
static void dev_info_expect(const struct kevent_info *dev, struct kevent_info *exp)
{
	unsigned int i;

	exp->backend = L.base.backend;			/* LK_INFO_BACKEND */
	exp->features = dev->features;			/* LK_INFO_BACKEND */
	exp->abi_revision = L.base.abi_revision;
	exp->live_queues += L.base.live_queues;		/* LK_INFO_SHARED */
	exp->live_kevents += L.base.live_kevents;
	exp->live_waiters += L.base.live_waiters;
	for (i = 0; i < KEVENT_LIMIT_NR; i++)
		if (i == KEVENT_LIMIT_EXPIRIES || i == KEVENT_LIMIT_RUNNING ||
		    L.base.backend == KEVENT_BACKEND_MODULE)
			exp->limits[i].used = dev->limits[i].used;	/* LK_INFO_SHARED, _CAPS */
	if (!(dev->features & KEVENT_FEAT_STRICT))
		kf_differs("INFO features %#x without KEVENT_FEAT_STRICT", dev->features);
}

static int dev_info(unsigned int slot, struct kevent_info *info)
{
	return info_of(L.q[slot].fd, info);
}

static unsigned int dev_poll(unsigned int slot)
{
	struct pollfd pfd = { .fd = L.q[slot].fd,
			      .events = POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM | POLLPRI };

	if (poll(&pfd, 1, 0) < 0)
		kf_differs("poll: %s", strerror(errno));
	return (unsigned int)pfd.revents;
}

/* Cross-backend mode: what a queue showed, recorded. */
static void dev_queue_seen(unsigned int slot, const struct kevent_info *info, unsigned int mask)
{
	const struct lk_q *q = &L.q[slot];

	rec(TR_POLL, slot, mask);
	rec(TR_INFO, slot, (long long)info->queue_kevents << 16 | info->queue_ready);
	if (q->ring)
		rec(TR_RING, slot, __atomic_load_n((const __u32 *)q->ring, __ATOMIC_ACQUIRE));
}

/* ---- coverage: which outcomes a run reached ---- */

static unsigned int bucket(int ret)
{
	if (ret < 0)
		return -ret < 48 ? (unsigned int)-ret : 48;
	return ret == 0 ? 49 : ret == 1 ? 50 : ret < 16 ? 51 : ret < 256 ? 52 : 53;
}

static void note_entries(__u64 uaddr, unsigned int n, size_t esz)
{
	__u64 off = uaddr - (__u64)(uintptr_t)KR.arena;

	if (uaddr < (__u64)(uintptr_t)KR.arena || off > KF_ARENA || (__u64)n * esz > KF_ARENA - off)
		return;
	for (unsigned int i = 0; i < n; i++) {
		const struct ukevent *uk = (const void *)(KR.arena + off + i * esz);
		int err = (int)uk->ret_data[1];

		L.entry_outcome[uk->type < KEVENT_MAX ? uk->type : KEVENT_MAX][uk->ret_flags & 3]
			[(uk->ret_flags & KEVENT_RET_BROKEN) && err < 0 && err > -63 ? -err : 0]++;
	}
}

/* ---- operations ---- */

static void dev_release(unsigned int slot)
{
	struct lk_q *q = &L.q[slot];

	if (q->ring)
		munmap(q->ring, KEVENT_RING_SIZE);
	q->ring = NULL;
	close(q->fd);
	q->fd = -1;
}

static void dev_open(unsigned int slot, unsigned int uid, unsigned int flags)
{
	struct kevent_info info;
	int exp, fd, got;

	exp = m_open(&KR.m, (int)slot, 0, NULL, false);	/* LK_HARNESS_OPS */
	fd = open(L.dev, O_RDWR | O_CLOEXEC);
	got = fd < 0 ? -errno : 0;
	EXPECT_EQ("open", got, exp);
	if (fd < 0) {
		if (!exp)
			m_open_undo(&KR.m, (int)slot);
		return;
	}
	if (exp) {
		close(fd);
		return;
	}
	fd = keep_fd(fd);	/* never on a number FIRES closed */
	if (fd < 0)
		return;
	L.q[slot].fd = fd;
	if (info_of(fd, &info)) {
		kf_differs("INFO after open: %s", strerror(errno));
		return;
	}
	map_ring(&L.q[slot], &info);
	KR.m.slot[slot]->ring = L.q[slot].ring;
}

static int settle(__u64 want_queues, __u64 want_kevents, struct kevent_info *out);

/* After a CLOSE: the release is awaited (LK_RELEASE). */
static void dev_closed(void)
{
	struct kcore_counters cnt;
	struct kevent_info info;

	m_reap(&KR.m);
	m_counters(&KR.m, &cnt);
	if (settle(L.base.live_queues + cnt.queues, L.base.live_kevents + cnt.kevents, &info))
		kf_differs("after close: live queues %llu kevents %llu, expected %llu %llu",
			   (unsigned long long)info.live_queues,
			   (unsigned long long)info.live_kevents,
			   (unsigned long long)(L.base.live_queues + cnt.queues),
			   (unsigned long long)(L.base.live_kevents + cnt.kevents));
}

/* A clock's reading in ns; KEVENT_CLOCK_* are Linux's clock ids (D59). */
static __u64 clk_ns(__u32 clock)
{
	struct timespec ts;

	clock_gettime((clockid_t)clock, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

static __u64 ts_ns(const struct kevent_timespec *t)
{
	return (__u64)t->tv_sec * 1000000000ull + t->tv_nsec;
}

static struct kevent_timespec ns_ts(__u64 ns)
{
	return (struct kevent_timespec){ .tv_sec = (__s64)(ns / 1000000000ull),
					 .tv_nsec = (__u32)(ns % 1000000000ull) };
}

/* The three clocks of D59, read together around a call. */
struct clk {
	__u64 ns[KEVENT_CLOCK_BOOTTIME + 1];
};

static void clk_read(struct clk *c)
{
	c->ns[KEVENT_CLOCK_REALTIME] = clk_ns(KEVENT_CLOCK_REALTIME);
	c->ns[KEVENT_CLOCK_MONOTONIC] = clk_ns(KEVENT_CLOCK_MONOTONIC);
	c->ns[KEVENT_CLOCK_BOOTTIME] = clk_ns(KEVENT_CLOCK_BOOTTIME);
}

/*
 * ABSTIME values this CTL was given (times of this run): after the call
 * each is replaced by PTIMER_CANON in both memories, wherever the call's
 * write-back left it in the array, so that neither a later call's
 * compaction nor cross-backend mode's hash ever sees a time.
 */
#define PTIMER_CANON	((struct kevent_timespec){ .tv_sec = PTIMER_LONG_S })
#define NABS		64
static struct kevent_timespec abs_vals[NABS];
static unsigned int nabs;

/*
 * LK_PTIMER: a POSIX timer's valid setting made deterministic.  A refused
 * one stays (its entry fails the same way on every backend).
 */
static void map_ptimer(struct ukevent_ext *e, bool may_be_short)
{
	struct kevent_timer_spec *t = &e->ext.timer;
	__u64 ns;

	if (m3_spec_refused(t))
		return;
	if (t->interval.tv_sec || t->interval.tv_nsec)
		t->interval = (struct kevent_timespec){ .tv_sec = PTIMER_LONG_S };
	if (!t->value.tv_sec && !t->value.tv_nsec)
		return;		/* disarmed (D59) */
	ns = may_be_short && (e->ev.id.raw[1] & 1) ? PTIMER_SHORT_NS :
	     PTIMER_LONG_S * 1000000000ull;
	if (t->flags & KEVENT_TIMER_ABSTIME)
		ns += clk_ns(t->clock);
	t->value = ns_ts(ns);
	if ((t->flags & KEVENT_TIMER_ABSTIME) && nabs < NABS)
		abs_vals[nabs++] = t->value;
}

static bool is_abs_val(const void *p)
{
	for (unsigned int i = 0; i < nabs; i++)
		if (!memcmp(p, &abs_vals[i], sizeof(abs_vals[i])))
			return true;
	return false;
}

/* Both memories the same value at off (after checking they agreed). */
static void canon_value(size_t off, const char *what)
{
	const struct kevent_timespec c = PTIMER_CANON;

	if (memcmp(KR.arena + off, KR.m.arena + off, sizeof(c)))
		kf_differs("%s at byte %zu: the device's differs from the model's", what, off);
	memcpy(KR.arena + off, &c, sizeof(c));
	m_poke(&KR.m, off, &c, sizeof(c));
}

/* After an EXT call: its ABSTIME values, moved or not by compaction (D60), made canonical. */
static void canon_abs(__u64 uaddr, __u32 num)
{
	__u64 off = uaddr - (__u64)(uintptr_t)KR.arena;
	const size_t vat = offsetof(struct ukevent_ext, ext.timer.value);

	if (!nabs || off > KF_ARENA || (__u64)num * EXTSZ > KF_ARENA - off)
		return;
	for (__u32 i = 0; i < num && !KR.failed; i++) {
		size_t at = (size_t)(off + (size_t)i * EXTSZ + vat);

		if (is_abs_val(KR.arena + at) || is_abs_val(KR.m.arena + at))
			canon_value(at, "an ABSTIME value after the call");
	}
	nabs = 0;
}

/*
 * Maps the entries a CTL will read onto our sources, in both memories.
 * Only the last entry of an ADD or MODIFY may arm a short POSIX timer, and
 * not beside a short TIMER: its expiry then follows every other effect of
 * the call, whichever backend and however slow (LK_PTIMER).
 */
static void map_array(__u64 uaddr, __u32 num, __u32 cmd, bool ext)
{
	__u64 base = (__u64)(uintptr_t)KR.arena, off = uaddr - base;
	size_t esz = ext ? EXTSZ : UKSZ;
	bool short_timer = false;

	nabs = 0;
	if (uaddr < base || off > KF_ARENA || (__u64)num * esz > KF_ARENA - off)
		return;
	for (__u32 i = 0; i < num; i++) {
		struct ukevent_ext e;
		size_t at = (size_t)(off + i * esz);

		memcpy(&e, KR.arena + at, esz);
		map_entry(&e.ev);
		short_timer |= is_short_timer(&e.ev);
		if (ext && e.ev.type == KEVENT_POSIX_TIMER &&
		    (cmd == KEVENT_CTL_ADD || cmd == KEVENT_CTL_MODIFY))
			map_ptimer(&e, i == num - 1 && !short_timer);
		if (memcmp(&e, KR.arena + at, esz))
			kf_put_both(NULL, at, &e, esz);
	}
}

/* An ioctl number the model does not answer for a device (LK_NOT_MODELLED). */
static bool not_modelled(unsigned int cmd)
{
	unsigned int nr = _IOC_NR(cmd);

	if (_IOC_TYPE(cmd) != KEVENT_IOC_MAGIC)
		return true;	/* another driver's number: the VFS may act on it */
	return nr == KEVENT_IOC_NR_RING_SHM || nr == KEVENT_IOC_NR_FAULT ||
	       nr == KEVENT_IOC_NR_DRAIN;
}

/* GET_EVENTS the model would park: 1 ms timeout on both sides (LK_PARK). */
static bool clamp_wait(int slot, struct margs *ma, unsigned char *arg)
{
	struct kevent_get_events_arg *a = &ma->a.get;
	const struct mq *q = KR.m.slot[slot];

	if (ma->nr != KEVENT_IOC_NR_GET_EVENTS || !a->max_nr || !a->min_nr || !a->timeout_ns ||
	    (a->ioc_flags & KEVENT_GET_NONBLOCK) || q->nrdy >= a->min_nr)
		return false;
	a->timeout_ns = WAIT_CLAMP_NS;
	if (a->ioc_flags & KEVENT_GET_TIMESPEC) {
		/*
		 * D48: the device reads a timespec call's timeout from timeout_ts
		 * and flags (timeout_ns must stay 0); the model has converted it
		 * into timeout_ns already.  A relative 1 ms for both.
		 */
		a->flags = 0;
		a->timeout_ts = (struct kevent_timespec){ .tv_nsec = WAIT_CLAMP_NS };
		memcpy(arg + offsetof(struct kevent_get_events_arg, flags), &a->flags, sizeof(a->flags));
		memcpy(arg + offsetof(struct kevent_get_events_arg, timeout_ts), &a->timeout_ts,
		       sizeof(a->timeout_ts));
		return true;
	}
	memcpy(arg + offsetof(struct kevent_get_events_arg, timeout_ns), &a->timeout_ns,
	       sizeof(a->timeout_ns));
	return true;
}

/* LK_URING_ADDR: a RING_INIT's ring address becomes an arena address. */
static void map_uring(const struct kf_ioc *io)
{
	__u64 ring;

	if (io->arg_null || _IOC_TYPE(io->cmd) != KEVENT_IOC_MAGIC ||
	    _IOC_NR(io->cmd) != KEVENT_IOC_NR_RING_INIT ||
	    _IOC_SIZE(io->cmd) < sizeof(ring))
		return;
	memcpy(&ring, KR.arg, sizeof(ring));
	if (!ring)
		return;		/* "no ring" stays (D53) */
	ring = (__u64)(uintptr_t)KR.arena + ((ring % (KF_ARENA + 64)) & ~7ull) + (ring & 7);
	memcpy(KR.arg, &ring, sizeof(ring));
}

/*
 * LK_RAW_ADDR: the array address in a raw IOCTL's CTL or GET_EVENTS
 * struct is the low 32 bits as an arena offset, as decoded operations have
 * it (NULL stays): in the arena or in the PROT_NONE reservation around it,
 * never in whatever else this process maps (an ASan build maps its shadow
 * low: the same program read memory there and faulted in a plain build).
 */
static void map_raw_addr(const struct kf_ioc *io)
{
	size_t at, usize = _IOC_SIZE(io->cmd);
	__u64 a;

	if (KR.op != KF_OP_IOCTL || io->arg_null || _IOC_TYPE(io->cmd) != KEVENT_IOC_MAGIC)
		return;
	if (_IOC_NR(io->cmd) == KEVENT_IOC_NR_CTL)
		at = offsetof(struct kevent_ctl_arg, events);
	else if (_IOC_NR(io->cmd) == KEVENT_IOC_NR_GET_EVENTS)
		at = offsetof(struct kevent_get_events_arg, events);
	else
		return;
	if (usize < at + sizeof(a))
		return;
	memcpy(&a, KR.arg + at, sizeof(a));
	if (a)
		a = (__u64)(uintptr_t)KR.arena + (a & 0xffffffffu);
	memcpy(KR.arg + at, &a, sizeof(a));
}

/* LK_PLAN_RANGES: the whole clamped output range must be user memory. */
static bool get_range_faults(const struct margs *ma)
{
	__u64 base = (__u64)(uintptr_t)KR.arena, a = ma->a.get.events;
	__u64 len = (__u64)ma->a.get.max_nr * UKSZ;

	if (ma->nr != KEVENT_IOC_NR_GET_EVENTS || !ma->a.get.max_nr)
		return false;
	return a < base || a - base > KF_ARENA || len > KF_ARENA - (a - base);
}

static void settle_waiters(void)
{
	struct kevent_info info;

	for (int ms = 0; ms < SETTLE_MS; ms++) {
		if (info_of(L.probe, &info) || info.live_waiters == L.base.live_waiters)
			return;
		usleep(1000);
	}
	kf_differs("live_waiters %llu, %llu before the call: the waiter was never put",
	     (unsigned long long)info.live_waiters, (unsigned long long)L.base.live_waiters);
}

static void trace_ioctl(const struct kf_ioc *io, const struct margs *ma, int got, int exp)
{
	__u64 base = (__u64)(uintptr_t)KR.arena;

	fprintf(stderr, "lockstep: step %u q%u cmd %#x%s: got %d exp %d", KR.step, io->slot,
		io->cmd, io->arg_null ? " NULL" : "", got, exp);
	if (ma->nr == KEVENT_IOC_NR_CTL)
		fprintf(stderr, " CTL cmd %u num %u at %+lld", ma->a.ctl.cmd, ma->a.ctl.num,
			(long long)(ma->a.ctl.events - base));
	else if (ma->nr == KEVENT_IOC_NR_GET_EVENTS)
		fprintf(stderr, " GET min %u max %u timeout %llu at %+lld ioc_flags %#x",
			ma->a.get.min_nr, ma->a.get.max_nr,
			(unsigned long long)ma->a.get.timeout_ns,
			(long long)(ma->a.get.events - base), ma->a.get.ioc_flags);
	fputc('\n', stderr);
	if (ma->nr == KEVENT_IOC_NR_GET_EVENTS && got > 0 && ma->a.get.events >= base &&
	    ma->a.get.events - base + (__u64)got * UKSZ <= KF_ARENA)
		for (int i = 0; i < got; i++) {
			const struct ukevent *g = (const void *)(KR.arena + (ma->a.get.events - base) + i * UKSZ);
			const struct ukevent *e = (const void *)(KR.m.arena + (ma->a.get.events - base) + i * UKSZ);

			fprintf(stderr, "  got type %u id %u/%u ev %#x rf %#x rd %#x/%#x | exp type %u "
				"id %u/%u ev %#x rf %#x rd %#x/%#x\n", g->type, g->id.raw[0],
				g->id.raw[1], g->event, g->ret_flags, g->ret_data[0], g->ret_data[1],
				e->type, e->id.raw[0], e->id.raw[1], e->event, e->ret_flags,
				e->ret_data[0], e->ret_data[1]);
		}
}

static __u32 ms32(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u32)((__u64)ts.tv_sec * 1000u + (__u64)ts.tv_nsec / 1000000u);
}

static size_t ctl_esz(const struct margs *ma)
{
	return ma->a.ctl.ioc_flags & KEVENT_CTL_EXT ? EXTSZ : UKSZ;	/* D60 */
}

/* Short timers in a CTL array about to be run: how many. */
static unsigned int short_timers_in(const struct margs *ma)
{
	__u64 base = (__u64)(uintptr_t)KR.arena, off = ma->a.ctl.events - base;
	size_t esz = ctl_esz(ma);
	unsigned int n = 0;

	if (ma->nr != KEVENT_IOC_NR_CTL || ma->a.ctl.cmd == KEVENT_CTL_REMOVE ||
	    ma->a.ctl.cmd == KEVENT_CTL_QUERY || ma->a.ctl.events < base || off > KF_ARENA ||
	    (__u64)ma->a.ctl.num * esz > KF_ARENA - off)
		return 0;
	for (__u32 i = 0; i < ma->a.ctl.num; i++)
		n += is_short_timer((const void *)(KR.arena + off + i * esz));
	return n;
}

/* A9 windows for the short timers this CTL arms: before the call's effects. */
static void arm_windows(const struct margs *ma, __u32 before, __u32 after)
{
	size_t esz = ctl_esz(ma);

	for (__u32 i = 0; i < ma->a.ctl.num; i++) {
		const struct ukevent *uk = (const void *)(L.ctl_copy + i * esz);	/* as passed */
		const struct lk_win *w;

		if (!is_short_timer(uk))
			continue;
		w = win_of(uk);
		/* D6 duplicates: one window covers every arming of the key */
		win_set(uk, w ? w->lo : before + TIMER_SHORT_MS, after + TIMER_SHORT_MS);
	}
}

/* ---- POSIX timers (LK_PTIMER) ---- */

/* The clock a timer's grid runs on: a relative REALTIME one on MONOTONIC (D58). */
static int ptimer_basis(const struct kevent_timer_spec *t)
{
	if (t->flags & KEVENT_TIMER_ABSTIME)
		return (int)t->clock;
	return t->clock == KEVENT_CLOCK_BOOTTIME ? KEVENT_CLOCK_BOOTTIME : KEVENT_CLOCK_MONOTONIC;
}

/* After the wait: a short timer's deadline has passed; its next one is an interval on. */
static bool ptimer_due(void *ctx, struct mkev *k)
{
	__u64 iv = ts_ns(&k->spec.interval);

	(void)ctx;
	if (k->hi >= clk_ns((__u32)k->basis))
		return false;
	k->lo += iv;
	k->hi += iv;
	return true;
}

/*
 * A queue whose timer (a short TIMER or POSIX timer) has not come although
 * its deadline passed and the barrier returned: the module's hrtimer
 * interrupt can come late under TCG (about 1 expiry in 1000 with a 1 ms
 * margin; once in 600 s for a TIMER with its 2 ms one), and A9 and D58
 * promise a value, not a latency.  So it is awaited up to 200 ms and counted as late; not
 * there by then, or not the model's count, is a difference.
 */
static void timers_late(void)
{
	struct kevent_info info;

	for (int s = 0; s < KF_NQ && !KR.failed; s++) {
		const struct mq *q = KR.m.slot[s];
		__u32 first;
		int ms = 0;

		if (!q || info_of(L.q[s].fd, &info) || info.queue_ready == q->nrdy)
			continue;
		first = info.queue_ready;
		while (ms < 200 && !info_of(L.q[s].fd, &info) && info.queue_ready != q->nrdy) {
			usleep(1000);
			ms++;
		}
		if (info.queue_ready == q->nrdy) {
			L.ptimer_late++;
			if (L.trace)
				fprintf(stderr, "lockstep: step %u: q%d's timer came %d ms late\n",
					KR.step, s, ms);
			continue;
		}
		kf_differs("timer expiry on q%d: queue_ready %u after the wait and the barrier, "
		     "expected %u, still %u 200 ms later", s, first, q->nrdy, info.queue_ready);
	}
}

/*
 * After a CTL: each timer it armed gets the window of its first grid point
 * from the clock readings around the call; a short one is waited past,
 * then the barrier, and the model counts its expiry.
 */
static void ptimers_after(const struct clk *b, const struct clk *a)
{
	__u64 until[KEVENT_CLOCK_BOOTTIME + 1] = { 0 };
	bool any = false;

	m_for_each_kevent(&KR.m, q, k) {
		__u64 v = ts_ns(&k->spec.value);

		if (!k->ptimer)
			continue;
		if (k->fresh) {
			k->fresh = false;
			k->basis = ptimer_basis(&k->spec);
			if (k->spec.flags & KEVENT_TIMER_ABSTIME) {
				k->lo = k->hi = v;
			} else {
				k->lo = b->ns[k->basis] + v;
				k->hi = a->ns[k->basis] + v;
			}
		}
		if (k->armed && k->hi < a->ns[k->basis] + PTIMER_SOON_NS) {
			/*
			 * Past the deadline, and never less than a sleep past
			 * the call's return: an ABSTIME deadline the slow call
			 * left behind fires by an interrupt still to come (the
			 * module's hrtimer), which a sleep of ours ending later
			 * waits for.
			 */
			__u64 t = k->hi > a->ns[k->basis] ? k->hi : a->ns[k->basis];

			any = true;
			if (t > until[k->basis])
				until[k->basis] = t;
		}
	}
	if (!any)
		return;
	for (__u32 c = 0; c <= KEVENT_CLOCK_BOOTTIME; c++)
		while (until[c] && clk_ns(c) <= until[c] + PTIMER_PAST_NS)
			usleep(500);
	drain_origins();
	L.ptimer_exp += m3_timer_expire(&KR.m, ptimer_due, NULL);
	timers_late();
}


/* Waits past every deadline armed, then the barrier; the model fires them. */
static void wait_timers(__u32 after)
{
	while ((__s32)(ms32() - (after + TIMER_SHORT_MS + 2)) < 0)
		usleep(500);
	drain_origins();
	m_fire_each(&KR.m, timer_bits, NULL);
	timers_late();
}

/* GET_EVENTS output: a short timer's ret_data[0] is checked against its window (A9). */
static void accept_timer_stamps(const struct margs *ma, int got)
{
	__u64 off = ma->a.get.events - (__u64)(uintptr_t)KR.arena;

	for (int i = 0; i < got && !KR.failed; i++) {
		const struct ukevent *e = (const void *)(KR.m.arena + off + (size_t)i * UKSZ);
		const struct ukevent *g = (const void *)(KR.arena + off + (size_t)i * UKSZ);
		const struct lk_win *w;
		__u32 v = g->ret_data[0];

		if (e->type != KEVENT_TIMER || e->ret_data[0] != TIMER_WILDCARD)
			continue;
		w = win_of(e);
		if (!w || v - w->lo > w->hi - w->lo) {
			kf_differs("timer ret_data[0] %u outside [%u, %u] (A9: ADD time + period)", v,
			     w ? w->lo : 0, w ? w->hi : 0);
			return;
		}
		m_poke(&KR.m, (size_t)(off + (size_t)i * UKSZ + offsetof(struct ukevent, ret_data)),
		       &v, sizeof(v));
		mark_stamp((size_t)(off + (size_t)i * UKSZ + offsetof(struct ukevent, ret_data)));
	}
}

/* GET_EVENTS output (compared already): D69's stale records, counted. */
static void count_stale(const struct margs *ma, int got)
{
	__u64 off = ma->a.get.events - (__u64)(uintptr_t)KR.arena;

	for (int i = 0; i < got; i++) {
		const struct ukevent *g = (const void *)(KR.arena + off + (size_t)i * UKSZ);

		L.stale_records += (g->type == KEVENT_POLL || g->type == KEVENT_SOCKET) &&
				   g->ret_flags == (KEVENT_RET_BROKEN | KEVENT_RET_DONE) &&
				   g->ret_data[1] == (__u32)-EBADF;
	}
}

/* The kevent a revision-3 QUERY matched: the oldest of its key (D6, D63). */
static const struct mkev *query_match(int slot, const struct ukevent *uk)
{
	mq_for_each_kevent(KR.m.slot[slot], k)
		if (k->uk.type == uk->type && k->uk.id.raw_u64 == uk->id.raw_u64 &&
		    !memcmp(k->uk.user, uk->user, sizeof(uk->user)))
			return k;
	return NULL;
}

/*
 * QUERY's time left of an armed timer (D61, LK_PTIMER): within [the
 * window's low end - the reading after the QUERY, its high end - the reading
 * before], at least 1 ns; then PTIMER_CANON in both memories (a time of
 * this run, see canon_abs).
 */
static void accept_query_left(int slot, const struct margs *ma, const struct clk *b,
			      const struct clk *a)
{
	__u64 off = ma->a.ctl.events - (__u64)(uintptr_t)KR.arena;
	const size_t vat = offsetof(struct ukevent_ext, ext.timer.value);

	for (__u32 i = 0; i < ma->a.ctl.num && !KR.failed; i++) {
		size_t at = (size_t)(off + (size_t)i * EXTSZ);
		const struct ukevent_ext *e = (const void *)(KR.m.arena + at);
		const struct ukevent_ext *g = (const void *)(KR.arena + at);
		const struct mkev *k;
		__u64 lo, hi, v;

		if (e->ev.type != KEVENT_POSIX_TIMER || e->ev.ret_flags != KEVENT_RET_DONE ||
		    e->ext.timer.value.tv_nsec != M3_LEFT_ANY)
			continue;
		k = query_match(slot, &e->ev);
		if (!k) {
			kf_differs("QUERY entry %u: the model has no timer for it", i);
			return;
		}
		lo = k->lo > a->ns[k->basis] ? k->lo - a->ns[k->basis] : 1;
		hi = k->hi > b->ns[k->basis] ? k->hi - b->ns[k->basis] : 1;
		v = ts_ns(&g->ext.timer.value);
		if (g->ext.timer.value.tv_sec < 0 || g->ext.timer.value.tv_nsec >= 1000000000u ||
		    g->ext.timer.value.__pad || v < lo || v > hi) {
			kf_differs("QUERY entry %u: time left %lld.%09u outside [%llu, %llu] ns (D61)", i,
			     (long long)g->ext.timer.value.tv_sec, g->ext.timer.value.tv_nsec,
			     (unsigned long long)lo, (unsigned long long)hi);
			return;
		}
		m_poke(&KR.m, at + vat, &g->ext.timer.value, sizeof(g->ext.timer.value));
		canon_value(at + vat, "QUERY's time left");
		L.query_left++;
	}
}

/*
 * Before m_plan(): the call as the device gets it.  A raw IOCTL gives
 * arg_len bytes; the device reads _IOC_SIZE (LK_LEN_PLUS1).  Past what the
 * program gave, zeros: not the last call's bytes, which made a program's
 * result depend on the one before it (a replay, or the second run of a
 * cross-backend pair, saw other bytes).
 */
static bool dev_ioc_args(struct kf_ioc *io, unsigned char *arg)
{
	if (io->arg_len < _IOC_SIZE(io->cmd))
		memset(arg + io->arg_len, 0, _IOC_SIZE(io->cmd) - io->arg_len);
	if (not_modelled(io->cmd))
		return false;
	map_uring(io);
	map_raw_addr(io);
	io->arg_len = io->arg_null ? 0 : _IOC_SIZE(io->cmd);	/* LK_LEN_PLUS1 */
	io->uid = 0;		/* LK_HARNESS_OPS: one caller */
	return true;		/* io->defer: run at once (LK_HARNESS_OPS) */
}

static void dev_ioctl(const struct kf_ioc *io, unsigned char *arg, int exp, struct margs *ma)
{
	struct lk_q *q = &L.q[io->slot];
	size_t usize = _IOC_SIZE(io->cmd);
	bool waited = false, seen = false, ctl = false;
	unsigned int timers = 0;
	__u32 before, after;
	struct clk cb, ca;
	int got, r;

	if (!exp && !io->arg_null && ma->nr == KEVENT_IOC_NR_CTL) {
		ctl = true;
		map_array(ma->a.ctl.events, ma->a.ctl.num, ma->a.ctl.cmd,
			  ma->a.ctl.ioc_flags & KEVENT_CTL_EXT);
		timers = short_timers_in(ma);
		if (timers)
			memcpy(L.ctl_copy, KR.arena + (ma->a.ctl.events - (__u64)(uintptr_t)KR.arena),
			       (size_t)ma->a.ctl.num * ctl_esz(ma));
	}
	if (!exp && !io->arg_null && ma->nr == KEVENT_IOC_NR_WAIT &&
	    m_wait_blocks(&KR.m, (int)io->slot, ma))
		return;						/* LK_WAIT_BLOCKS */
	if (!exp && !io->arg_null && get_range_faults(ma)) {
		exp = -EFAULT;					/* LK_PLAN_RANGES */
	} else if (!exp && !io->arg_null) {
		seen = KR.m.slot[io->slot]->ctl_seen;
		waited = clamp_wait((int)io->slot, ma, arg);
		exp = m_execute(&KR.m, (int)io->slot, 0, ma, -1);
	}
	L.ioctls++;
	L.rev3_ops += (KR.m.slot[io->slot]->rules & M_RULE(MR_EXT)) != 0;	/* revision 3's calls */
	clk_read(&cb);
	before = ms32();
	r = ioctl(q->fd, io->cmd, io->arg_null ? NULL : (void *)arg);
	got = r < 0 ? -errno : r;
	after = ms32();
	clk_read(&ca);
	/* LK_ARG_NULL: EFAULT stands for the size error on one backend, not on another */
	rec(TR_RESULT, io->cmd, io->arg_null && got == -EFAULT ? exp : got);
	if (L.trace)
		trace_ioctl(io, ma, got, exp);
	L.outcome[KR.op][bucket(got)]++;
	if (io->arg_null) {
		/* LK_ARG_NULL */
		if (got != -EFAULT && (got != exp || !exp))
			kf_differs("NULL argument: got %d, expected -EFAULT or %d", got, exp);
		return;
	}
	/* LK_RETRY_CTL_FAULT: the array's fault came from the kernel, before the daemon */
	if (ma->nr == KEVENT_IOC_NR_CTL && got == -EFAULT && exp == -EFAULT &&
	    (L.base.features & KEVENT_FEAT_RETRY_PATH))
		KR.m.slot[io->slot]->ctl_seen = seen;
	EXPECT_EQ("ioctl result", got, exp);
	if (timers && got >= 0 && !KR.failed) {
		arm_windows(ma, before, after);
		wait_timers(after);
	}
	if (ctl && !KR.failed)
		ptimers_after(&cb, &ca);	/* LK_PTIMER; D9: a faulting write-back keeps them */
	if (ctl && !KR.failed && (ma->a.ctl.ioc_flags & KEVENT_CTL_EXT))
		canon_abs(ma->a.ctl.events, ma->a.ctl.num);
	if (ctl && got > 0 && !KR.failed && ma->a.ctl.cmd == KEVENT_CTL_QUERY)
		accept_query_left((int)io->slot, ma, &cb, &ca);
	if (ma->nr == KEVENT_IOC_NR_GET_EVENTS && got > 0 && !KR.failed) {
		accept_timer_stamps(ma, got);
		count_stale(ma, got);
	}
	if (waited)
		settle_waiters();				/* LK_WAITER_PUT */
	if (got < 0 || KR.failed)
		return;
	if (ma->nr == KEVENT_IOC_NR_INFO)
		kf_check_info_reply(io->slot, io->uid, arg, usize);
	else if (ma->nr == KEVENT_IOC_NR_CTL)
		note_entries(ma->a.ctl.events,
			     ma->a.ctl.cmd == KEVENT_CTL_ADD ? (unsigned int)got : ma->a.ctl.num,
			     ctl_esz(ma));
}

/*
 * Would a write to source i (tag 0) or to the old file tag ready two or
 * more kevents of one queue?
 */
static bool fires_several(unsigned int tag)
{
	const struct mq *of = NULL;
	unsigned int n = 0;

	m_for_each_kevent(&KR.m, q, k) {
		if (q != of) {
			of = q;		/* a queue's kevents come in one run */
			n = 0;
		}
		n += !k->ready && !k->ostop && k->fdgone == tag &&
		     (tag ? old_bits(&retired[tag - 1], &k->uk) : fire_bits(NULL, &k->uk));
		if (n > 1)
			return true;
	}
	return false;
}

/* Would the inode write about to be made reach a kevent that is ready already? */
static bool ino_merges(void)
{
	m_for_each_kevent(&KR.m, q, k)
		if (k->ready && fire_bits(NULL, &k->uk))
			return true;
	return false;
}

/*
 * The inode source: FIRE creates a file in the private directory, BREAK
 * removes the newest.  Not run (LK_ONE_PER_SOURCE) when two kevents of one
 * queue would fire, or when one that would is ready already: how two
 * entry events merge into one pending result is not the point here.
 */
static void ino_source(bool remove)
{
	char name[16];
	unsigned int fired;
	int fd;

	if (ino.dirfd < 0 || (remove ? !ino.files : ino.files >= 64))
		return;
	fire_src = -1;
	ino.bit = remove ? KEVENT_INODE_REMOVE : KEVENT_INODE_CREATE;
	if (fires_several(0) || ino_merges())
		return;
	snprintf(name, sizeof(name), "f%u", remove ? ino.files - 1 : ino.files);
	if (remove) {
		if (unlinkat(ino.dirfd, name, 0) < 0) {
			kf_differs("removing %s/%s: %s", ino.path, name, strerror(errno));
			return;
		}
		ino.files--;
	} else {
		fd = openat(ino.dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0) {
			kf_differs("creating %s/%s: %s", ino.path, name, strerror(errno));
			return;
		}
		close(fd);
		ino.files++;
	}
	L.fires++;
	drain_origins();
	fired = m_fire_each(&KR.m, fire_bits, NULL);
	rec(TR_FIRED, 0x100 | remove, fired);
	if (L.trace)
		fprintf(stderr, "lockstep: step %u %s %s/%s: %u fired\n", KR.step,
			remove ? "remove" : "create", ino.path, name, fired);
}

/* Reads what source i holds; false: it failed (a difference). */
static bool drain_src(int i)
{
	char buf[256];

	while (src[i].pending) {
		ssize_t n = read(src[i].rd, buf, sizeof(buf));

		if (n <= 0) {
			kf_differs("draining source %d: %s", i, strerror(errno));
			return false;
		}
		src[i].pending -= (unsigned int)n;
	}
	return true;
}

/* FIRE: a byte into a source; BREAK: drain it.  Then the barrier. */
static void dev_fire(unsigned int id0, unsigned int id1, __u32 data, bool drain)
{
	unsigned int fired;
	bool several;
	char buf[1];
	int i;

	if (!L.drain)
		return;	/* without the barrier the model cannot know when */
	if (id1 & INO_SRC) {
		ino_source(drain);
		return;
	}
	i = (int)(id0 % NSRC);
	if (src[i].closed)
		return;	/* FIRES closed its number: no file to write or drain */
	if (drain) {
		if (drain_src(i))
			drain_origins();
		return;
	}
	if (src[i].pending >= 4096)
		return;	/* stays far below any pipe's capacity */
	fire_src = i;
	src[i].pending++;	/* as the readers will see it */
	several = fires_several(0);
	src[i].pending--;
	if (several)
		return;	/* LK_ONE_PER_SOURCE */
	buf[0] = (char)data;
	if (write(src[i].wr, buf, 1) != 1) {
		kf_differs("writing source %d: %s", i, strerror(errno));
		return;
	}
	src[i].pending++;
	L.fires++;
	drain_origins();
	fire_src = i;
	fired = m_fire_each(&KR.m, fire_bits, NULL);
	rec(TR_FIRED, (unsigned int)i, fired);
	if (L.trace)
		fprintf(stderr, "lockstep: step %u write source %d (%u pending): %u fired\n",
			KR.step, i, src[i].pending, fired);
}

static bool on_src(void *ctx, const struct ukevent *uk)
{
	return src_of_fd(uk->id.raw[0]) == *(const int *)ctx;
}

/* A fresh pipe (a socketpair for the socket) for source i, both ends kept high. */
static bool fresh_file(int i, int p[2])
{
	int r = src[i].sock ? socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) :
			      pipe2(p, O_CLOEXEC);

	if (r < 0) {
		kf_differs("a new file for source %d: %s", i, strerror(errno));
		return false;
	}
	p[0] = keep_fd(p[0]);
	p[1] = keep_fd(p[1]);
	if (p[0] >= 0 && p[1] >= 0)
		return true;
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	return false;
}

/* Source i's number gets a fresh file; its write end replaces src[i].wr. */
static bool give_file(int i)
{
	int p[2];

	if (!fresh_file(i, p))
		return false;
	if (dup3(p[0], src[i].rd, O_CLOEXEC) < 0) {
		kf_differs("dup3 onto source %d's fd %d: %s", i, src[i].rd, strerror(errno));
		close(p[0]);
		close(p[1]);
		return false;
	}
	close(p[0]);
	src[i].wr = p[1];
	src[i].closed = false;
	return true;
}

static void trace_gone(int i, const char *what, unsigned int n)
{
	if (L.trace)
		fprintf(stderr, "lockstep: step %u source %d's fd %d: %s, %u kevents on the old "
			"file (%u)\n", KR.step, i, src[i].rd, what, n, nretired);
}

/*
 * FIRES with an even data on a device (LK_SOURCES; in process it is the
 * racing origin's fire of stopped kevents): from now on the fd number of
 * source i names a new file, a fresh pipe (a socketpair for the socket)
 * dup3()ed onto it, so the number and every entry mapped to it stay.  The
 * old file is drained first, and its write end stays open until the
 * program's end (no hang-up): on a revision-4 queue the next delivery of
 * each kevent added on it is D69's stale record (the device asks this
 * process's table: the daemon by kcmp, the module under RCU); below
 * revision 4 its records stay as they were (A7).  It hears only writes to
 * its old file (old_write), and MODIFY re-polls that file.  Kevents added
 * from now on watch the new file, which FIRE writes, BREAK drains and D67
 * counts.  A number close_number() closed just gets its new file: no
 * kevent watches the file it had since (their ADD failed -EBADF).
 */
static void new_file(int i)
{
	unsigned int n;
	int wr = src[i].wr;

	if (src[i].closed) {
		if (give_file(i))
			L.new_files++;
		return;
	}
	if (nretired == NRETIRED || !drain_src(i) || !give_file(i))
		return;
	retired[nretired++] = (struct lk_old){ wr, i, 0 };
	drain_origins();
	n = m4_fd_replaced(&KR.m, on_src, &i, nretired);
	L.new_files++;
	L.gone_kevents += n;
	trace_gone(i, "a new file", n);
}

/*
 * FIRES with data 4 mod 8 on a device: source i's number is closed, its
 * file drained first and kept open by its write end (retired, as
 * new_file() keeps an old file) and by the device, which holds the file
 * of every kevent added on it (A7).  On a revision-4 queue each such
 * kevent's next delivery is D69's stale record (the daemon's kcmp answers
 * EBADF, the module finds no file at the number); below revision 4 its
 * records stay and it keeps hearing its file (old_write), as after
 * new_file().  The number stays closed until a FIRES gives it a file or
 * the program ends (dev_teardown): an ADD on it fails -EBADF (abi.md
 * section 7), FIRE and BREAK are not run.  Nothing of the fuzzer's can
 * take the number meanwhile: the files it keeps sit above FD_KEPT_FLOOR.
 */
static void close_number(int i)
{
	unsigned int n;

	if (src[i].closed || nretired == NRETIRED || !drain_src(i))
		return;
	if (close(src[i].rd) < 0) {
		kf_differs("closing source %d's fd %d: %s", i, src[i].rd, strerror(errno));
		return;
	}
	retired[nretired++] = (struct lk_old){ src[i].wr, i, 0 };
	src[i].wr = -1;
	src[i].closed = true;
	drain_origins();
	n = m4_fd_replaced(&KR.m, on_src, &i, nretired);	/* A7, D69: as a new file */
	L.closed_numbers++;
	L.gone_kevents += n;
	trace_gone(i, "closed", n);
}

static __u32 old_fire_bits(void *ctx, const struct ukevent *uk)
{
	/* the wake-up's key is POLLIN|POLLRDNORM, as fire_bits() says */
	if (uk->type == KEVENT_POLL && !(uk->event & (KEVENT_POLL_POLLIN | KEVENT_POLL_POLLRDNORM)))
		return 0;
	return old_bits(ctx, uk);
}

/*
 * Does a kevent still watch the old file tag?  Then the device holds it
 * open; once none does, its read end may be gone (a write: EPIPE).
 */
static bool old_watched(unsigned int tag)
{
	m_for_each_kevent(&KR.m, q, k)
		if (k->fdgone == tag)
			return true;
	return false;
}

/*
 * FIRES with an odd data on a device: a byte into the file source i's
 * number had before its last FIRES (if it had one, and a kevent still
 * watches it): only the kevents added on that file hear it, a stale one
 * nothing (D69: it never fires again), one below revision 4 as ever (A7).
 * Then the barrier.  Not run where a FIRE would not be (LK_ONE_PER_SOURCE).
 */
static void old_write(int i)
{
	unsigned int t = nretired, fired;
	struct lk_old *o;
	char b = 0;

	while (t && retired[t - 1].src != i)
		t--;
	if (!t || !L.drain || retired[t - 1].pending >= 4096 || !old_watched(t))
		return;
	o = &retired[t - 1];
	o->pending++;
	if (fires_several(t)) {
		o->pending--;
		return;
	}
	o->pending--;
	if (write(o->wr, &b, 1) != 1) {
		kf_differs("writing source %d's old file: %s", i, strerror(errno));
		return;
	}
	o->pending++;
	L.fires++;
	L.old_writes++;
	drain_origins();
	fired = m4_fire_old(&KR.m, t, old_fire_bits, o);
	rec(TR_FIRED, 0x200u | (unsigned int)i, fired);
	if (L.trace)
		fprintf(stderr, "lockstep: step %u write source %d's old file (%u, %u pending): %u "
			"fired\n", KR.step, i, t, o->pending, fired);
}

/*
 * FIRES (LK_SOURCES): a write to the old file of source id0's number (odd
 * data), its number closed (data 4 mod 8: the seeds' 0 and 2 keep meaning
 * a new file), or a new file at it.
 */
static void dev_fires(unsigned int id0, unsigned int id1, __u32 data)
{
	(void)id1;
	if (data & 1)
		old_write((int)(id0 % NSRC));
	else if ((data & 7) == 4)
		close_number((int)(id0 % NSRC));
	else
		new_file((int)(id0 % NSRC));
}

/* ---- one program ---- */

/* Waits (LK_RELEASE) until the backend-wide counters say want queues. */
static int settle(__u64 want_queues, __u64 want_kevents, struct kevent_info *out)
{
	for (int ms = 0; ; ms++) {
		int err = info_of(L.probe, out);

		if (err)
			return err;
		if (out->live_queues == want_queues && out->live_kevents == want_kevents &&
		    !out->live_waiters)
			return 0;
		if (ms >= SETTLE_MS)
			return -ETIMEDOUT;
		usleep(1000);
	}
}

static void reset_sources(void)
{
	char buf[4096];

	while (ino.files) {
		snprintf(buf, sizeof(buf), "f%u", --ino.files);
		if (unlinkat(ino.dirfd, buf, 0) < 0 && errno != ENOENT)
			kf_fail("removing %s/%s: %s\n", ino.path, buf, strerror(errno));
	}

	for (int i = 0; i < NSRC; i++)
		while (src[i].pending) {
			ssize_t n = read(src[i].rd, buf, sizeof(buf));

			if (n <= 0)
				break;
			src[i].pending -= (unsigned int)n;
		}
	drain_origins();
}

static void dev_start(const uint8_t *hdr)
{
	unsigned int i;

	KR.m.org = &lk_origin;
	no_fd_origins = !(L.base.features & KEVENT_FEAT_FD_ORIGINS);
	KR.m.mask = L.base.supported_types;	/* LK_TYPES (INODE entries: LK_SOURCES) */
	if (m_rules_of(L.base.abi_revision) & M_RULE(MR_POSIX_TIMER))
		KR.m.mask |= 1u << KEVENT_POSIX_TIMER;	/* D64: on the queues with its rule */
	KR.m.max_ctl = L.base.max_ctl_num;			/* LK_INFO_PATH */
	KR.m.max_get = L.base.max_get_nr;
	for (i = 0; i < KEVENT_LIMIT_NR; i++) {
		KR.m.caps[i] = L.base.limits[i].cap;		/* LK_INFO_CAPS */
		KR.m.used[0][i] = L.base.limits[i].used;		/* LK_INFO_SHARED */
	}
	nwin = 0;
	memset(stamp_map, 0, sizeof(stamp_map));
}

static void dev_finish(void)
{
	m_reap(&KR.m);
	reset_sources();
}

static void dev_teardown(void)
{
	struct kevent_info info;
	int err = settle(L.base.live_queues, L.base.live_kevents, &info);

	if (err && !KR.failed)
		kf_differs("counters not back after the program (live queues %llu kevents %llu "
			   "waiters %llu, before %llu %llu): %s",
			   (unsigned long long)info.live_queues,
			   (unsigned long long)info.live_kevents,
			   (unsigned long long)info.live_waiters,
			   (unsigned long long)L.base.live_queues,
			   (unsigned long long)L.base.live_kevents, strerror(-err));
	/* every kevent is gone: the old files FIRES left may go too */
	while (nretired)
		close(retired[--nretired].wr);
	/* and a number FIRES closed gets a file for the next program */
	for (int i = 0; i < NSRC; i++)
		if (src[i].closed && !give_file(i))
			kf_fail("no file for source %d's fd %d\n", i, src[i].rd);
}

/*
 * The device executor (interp.h); NULL: no device form (LK_HARNESS_OPS,
 * LK_FAULT_OP).  FIRES has one of its own (dev_fires, LK_SOURCES).
 */
static const struct kf_exec on_device = {
	.start = dev_start,
	.finish = dev_finish,
	.teardown = dev_teardown,
	.open = dev_open,
	.release = dev_release,
	.closed = dev_closed,
	.ioc_args = dev_ioc_args,
	.ioctl = dev_ioctl,
	.fire = dev_fire,
	.fires = dev_fires,
	.info = dev_info,
	.poll = dev_poll,
	.info_expect = dev_info_expect,
	.queue_seen = dev_queue_seen,
	.mem_seen = rec_mem,
};

/* 0: same as the model; 1: a difference (KR.why). */
static int run_program(const uint8_t *data, size_t size)
{
	if (size < KF_HDR_LEN || (data[KF_HDR_ORIGINS] & KF_HDR_LOOSE))
		return 0;	/* loose mode has no model */
	if (info_of(L.probe, &L.base)) {
		kf_differs("INFO of the probe: %s", strerror(errno));
		return 1;
	}
	alarm(ALARM_S);
	kf_run_program(data, size);
	alarm(0);
	L.programs++;
	return KR.failed;
}

/* ---- programs: files, directories, mutations ---- */

struct blob {
	uint8_t *p;
	size_t n;
	char *name;
};

static struct blob *progs;
static size_t nprogs, capprogs;

static void add_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct blob b = { NULL, 0, strdup(path) };
	uint8_t buf[65536];
	size_t n;

	if (!f) {
		perror(path);
		exit(2);
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		b.p = realloc(b.p, b.n + n);
		memcpy(b.p + b.n, buf, n);
		b.n += n;
	}
	fclose(f);
	if (nprogs == capprogs) {
		capprogs = capprogs ? 2 * capprogs : 256;
		progs = realloc(progs, capprogs * sizeof(*progs));
	}
	progs[nprogs++] = b;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *only_prefix[2];	/* add_path: only names with these */

static bool wanted(const char *name)
{
	if (!only_prefix[0])
		return true;
	for (int i = 0; i < 2; i++)
		if (only_prefix[i] && !strncmp(name, only_prefix[i], strlen(only_prefix[i])))
			return true;
	return false;
}

static void add_path(const char *path)
{
	struct stat st;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;
	DIR *d;

	if (stat(path, &st) < 0) {
		perror(path);
		exit(2);
	}
	if (!S_ISDIR(st.st_mode)) {
		add_file(path);
		return;
	}
	d = opendir(path);
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.' || !wanted(e->d_name))
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		if (asprintf(&names[n++], "%s/%s", path, e->d_name) < 0)
			exit(2);
	}
	if (d)
		closedir(d);
	qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n; i++) {
		add_file(names[i]);
		free(names[i]);
	}
	free(names);
}

static unsigned long long rng;

static unsigned int rnd(unsigned int n)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return n ? (unsigned int)((rng * 2685821657736338717ull) >> 33) % n : 0;
}

/* A few byte-level mutations of one program, splices of another. */
static size_t mutate(uint8_t *out, size_t cap)
{
	const struct blob *a = &progs[rnd((unsigned int)nprogs)];
	size_t n = a->n < cap ? a->n : cap;
	unsigned int k = 1 + rnd(8);

	memcpy(out, a->p, n);
	while (k--) {
		unsigned int what = rnd(5);

		if (n <= KF_HDR_LEN)
			break;
		if (what == 0) {
			out[KF_HDR_LEN + rnd((unsigned int)(n - KF_HDR_LEN))] ^= (uint8_t)(1u << rnd(8));
		} else if (what == 1) {
			out[KF_HDR_LEN + rnd((unsigned int)(n - KF_HDR_LEN))] = (uint8_t)rnd(256);
		} else if (what == 2) {
			/* an opcode byte */
			out[KF_HDR_LEN + rnd((unsigned int)(n - KF_HDR_LEN))] = (uint8_t)rnd(KF_OP_NR);
		} else if (what == 3) {
			const struct blob *b = &progs[rnd((unsigned int)nprogs)];
			size_t at = KF_HDR_LEN + rnd((unsigned int)(n - KF_HDR_LEN));
			size_t from = b->n > KF_HDR_LEN ? KF_HDR_LEN + rnd((unsigned int)(b->n - KF_HDR_LEN)) : b->n;
			size_t len = b->n - from;

			if (len > cap - at)
				len = cap - at;
			memcpy(out + at, b->p + from, len);
			n = at + len;
		} else {
			n = KF_HDR_LEN + rnd((unsigned int)(n - KF_HDR_LEN)) + 1;
		}
	}
	return n;
}

static void save(const char *dir, const uint8_t *p, size_t n)
{
	char path[4096];
	unsigned long long h = 1469598103934665603ull;
	FILE *f;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	snprintf(path, sizeof(path), "%s/lockstep-%016llx", dir, h);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n)
		perror(path);
	if (f)
		fclose(f);
	fprintf(stderr, "kevent-lockstep: reproducer %s\n", path);
}

static volatile sig_atomic_t stop_asked;

static void on_stop(int sig)
{
	(void)sig;
	stop_asked = 1;
}

static void on_alarm(int sig)
{
	char msg[160];
	int n = snprintf(msg, sizeof(msg),
			 "kevent-lockstep: FAIL: %s: no progress for %d s at step %u (%s): a hang\n",
			 L.prog_name ? L.prog_name : "?", ALARM_S, KR.step,
			 kf_op_name(KR.op));

	(void)sig;
	if (write(2, msg, (size_t)n) < 0)
		_exit(1);
	_exit(1);
}

/* What other clients hold: the backend-wide counters INFO shows. */
static bool same_holdings(const struct kevent_info *a, const struct kevent_info *b)
{
	if (a->live_queues != b->live_queues || a->live_kevents != b->live_kevents ||
	    a->live_waiters != b->live_waiters)
		return false;
	for (int i = 0; i < KEVENT_LIMIT_NR; i++)
		if (i != KEVENT_LIMIT_EXPIRIES && i != KEVENT_LIMIT_RUNNING &&
		    a->limits[i].used != b->limits[i].used)
			return false;
	return true;
}

/*
 * Each program compares live_* and limits[].used from a baseline taken at
 * its start (LK_INFO_SHARED), so nothing else may change them meanwhile.
 * A client that ran just before (the fuse tier's device fuzzer, a client
 * test's children) may still be released: on fuse and CUSE a release is
 * answered after close() returned, and under load (an ASan daemon on a busy
 * host) seconds later.  So the run starts once the counters held still for
 * QUIET_MS (at most QUIET_MAX_MS; then it says so and starts anyway).  A
 * client active during the run is a difference by design: one lockstep run
 * per backend instance (a second copy needs a daemon of its own).
 */
static void await_quiet(void)
{
	struct kevent_info last, now;
	int still = 0;

	if (info_of(L.probe, &last))
		return;
	for (int ms = 0; ms < QUIET_MAX_MS; ms += 20) {
		drain_origins();
		usleep(20000);
		if (info_of(L.probe, &now))
			return;
		if (!same_holdings(&last, &now)) {
			still = 0;
			last = now;
		} else if ((still += 20) >= QUIET_MS) {
			return;
		}
	}
	fprintf(stderr, "kevent-lockstep: the backend's counters still move after %d ms: "
		"another client is active (differences in live_* or used may be its)\n",
		QUIET_MAX_MS);
}

static void setup_sources(void)
{
	int p[2], sv[2];

	for (int i = 0; i < NSRC - 1; i++) {
		if (pipe2(p, O_CLOEXEC) < 0)
			kf_fail("pipe: %s\n", strerror(errno));
		src[i] = (struct lk_src){ p[0], p[1], false, 0 };
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		kf_fail("socketpair: %s\n", strerror(errno));
	src[NSRC - 1] = (struct lk_src){ sv[0], sv[1], true, 0 };
	snprintf(ino.path, sizeof(ino.path), "/tmp/kevent-lockstep-XXXXXX");
	if (!mkdtemp(ino.path))
		kf_fail("mkdtemp: %s\n", strerror(errno));
	ino.dirfd = open(ino.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ino.dirfd < 0)
		kf_fail("open %s: %s\n", ino.path, strerror(errno));
}

/* At exit: the private directory goes (its files went with the last program). */
static void remove_ino_dir(void)
{
	char buf[16];

	while (ino.files) {
		snprintf(buf, sizeof(buf), "f%u", --ino.files);
		unlinkat(ino.dirfd, buf, 0);
	}
	if (ino.path[0])
		rmdir(ino.path);
}

static void setup_arena(void)
{
	unsigned char *r = mmap(NULL, RESERVE + 2 * GUARD, PROT_NONE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (r == MAP_FAILED)
		kf_fail("reserving the address range: %s\n", strerror(errno));
	KR.arena = r + GUARD;
	if (mprotect(KR.arena, KF_ARENA, PROT_READ | PROT_WRITE) < 0)
		kf_fail("mprotect: %s\n", strerror(errno));
}

static void print_figures(double secs)
{
	unsigned long cov = 0, ecov = 0;

	for (int o = 0; o < KF_OP_NR; o++)
		for (int b = 0; b < 64; b++)
			cov += L.outcome[o][b] != 0;
	for (int t = 0; t <= KEVENT_MAX; t++)
		for (int f = 0; f < 4; f++)
			for (int e = 0; e < 64; e++)
				ecov += L.entry_outcome[t][f][e] != 0;
	fprintf(stderr, "kevent-lockstep: backend %u: %lu programs, %lu operations "
		"(%lu ioctls, %lu source writes), %lu differences, coverage %lu call outcomes "
		"+ %lu entry outcomes, %.1f s\n", L.base.backend, L.programs, KR.ops, L.ioctls,
		L.fires, L.diffs, cov, ecov, secs);
	fprintf(stderr, "kevent-lockstep: revision 3: %lu ioctls on revision-3 queues, %lu POSIX "
		"timer expiries counted, %lu QUERY times left checked; %lu timer expiries came "
		"after the barrier\n", L.rev3_ops, L.ptimer_exp, L.query_left, L.ptimer_late);
	fprintf(stderr, "kevent-lockstep: revision 4: %lu source fds given a new file, %lu "
		"closed (%lu kevents on an old one, %lu writes to an old one), %lu stale records "
		"(D69) in GET_EVENTS\n", L.new_files, L.closed_numbers, L.gone_kevents,
		L.old_writes, L.stale_records);
}

static int open_dev(struct lk_dev *d, struct kevent_info *info)
{
	struct kevent_drain dr = { 0 };

	d->probe = open(d->path, O_RDWR | O_CLOEXEC);
	if (d->probe < 0) {
		printf("kevent-lockstep: SKIP: %s: %s\n", d->path, strerror(errno));
		return -1;
	}
	if (info_of(d->probe, info)) {
		printf("kevent-lockstep: SKIP: INFO on %s: %s\n", d->path, strerror(errno));
		return -1;
	}
	d->drain = ioctl(d->probe, KEVENT_IOC_DRAIN, &dr) == 0;
	if (!d->drain)
		fprintf(stderr, "kevent-lockstep: no KEVENT_IOC_DRAIN on %s (start the backend "
			"for tests): source writes are not run\n", d->path);
	if (ndev > 1 && !(d->tr = calloc(TR_MAX, sizeof(*d->tr)))) {
		printf("kevent-lockstep: SKIP: no memory\n");
		return -1;
	}
	return 0;
}

/*
 * Cross-backend runs compare results only where the model expects the same
 * of both: the same path limits (B4), types, fd origins and barrier.
 */
static bool comparable(const struct kevent_info *a, const struct kevent_info *b)
{
	const char *why = a->max_ctl_num != b->max_ctl_num || a->max_get_nr != b->max_get_nr ?
			  "different path limits (max_ctl_num, max_get_nr: B4)" :
			  a->supported_types != b->supported_types ? "different supported_types" :
			  (a->features ^ b->features) & KEVENT_FEAT_FD_ORIGINS ?
			  "KEVENT_FEAT_FD_ORIGINS on one only" :
			  devs[0].drain != devs[1].drain ? "KEVENT_IOC_DRAIN on one only" : NULL;

	if (why)
		printf("kevent-lockstep: SKIP: %s and %s not comparable: %s\n", devs[0].path,
		       devs[1].path, why);
	return !why;
}

static void use_dev(int d)
{
	cur_dev = d;
	L.dev = devs[d].path;
	L.probe = devs[d].probe;
	L.drain = devs[d].drain;
	devs[d].ntr = 0;
}

static unsigned long cross_runs, cross_diffs;

/* The program on each device, then (two devices) their records compared. */
static int run_on_each(const uint8_t *p, size_t n)
{
	L.where = "";
	for (int d = 0; d < ndev; d++) {
		use_dev(d);
		if (run_program(p, n)) {
			if (ndev > 1)
				L.where = d ? " (second device)" : " (first device)";
			return 1;
		}
	}
	if (ndev < 2)
		return 0;
	cross_runs++;
	if (!cross_compare())
		return 0;
	cross_diffs++;
	L.where = " (cross-backend)";
	return 1;
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [-d DEV] [-x DEV2] [-n PROGRAMS] [-s SEED] [-t SECONDS] [-a DIR] "
		"[-k] [-v] [-r] [PATH...]\n  -r: print the per-backend allowances and exit\n",
		argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long nmut = 0;
	double limit = 0;
	const char *art = NULL;
	struct timespec t0, t1;
	static uint8_t buf[65536];
	struct kevent_info info, info2;
	bool default_run;
	int opt;

	L.dev = getenv("KEVENT_DEVICE") ? getenv("KEVENT_DEVICE") : "/dev/kevent";
	rng = 1;
	L.trace = getenv("LOCKSTEP_TRACE") != NULL;
	while ((opt = getopt(argc, argv, "d:x:n:s:t:a:kvr")) != -1) {
		switch (opt) {
		case 'd': L.dev = optarg; break;
		case 'x':
			devs[1].path = optarg;
			ndev = 2;
			break;
		case 'n': nmut = strtoul(optarg, NULL, 0); break;
		case 's': rng = strtoull(optarg, NULL, 0) | 1; break;
		case 't': limit = strtod(optarg, NULL); break;
		case 'a': art = optarg; break;
		case 'k': L.keep_going = true; break;
		case 'v': L.verbose = true; break;
		case 'r':
			for (int i = 0; i < LK_NR; i++)
				printf("%-2d %s\n   rule: %s\n", i, lk_rules[i].what, lk_rules[i].rule);
			return 0;
		default: usage(argv[0]);
		}
	}
	default_run = optind >= argc;
	if (default_run) {
		only_prefix[0] = "seed-";
		only_prefix[1] = "lockstep-";
		add_path(LK_CORPUS);
		if (!nmut)
			nmut = 1000000;
		if (limit <= 0)
			limit = 60;
	}
	for (int i = optind; i < argc; i++)
		add_path(argv[i]);
	devs[0].path = L.dev;
	for (int d = 0; d < ndev; d++)
		if (open_dev(&devs[d], d ? &info2 : &info))
			return 77;
	if (ndev > 1 && !comparable(&info, &info2))
		return 77;
	for (int i = 0; i < KF_NQ; i++)
		L.q[i].fd = -1;
	KR.e = &on_device;
	setup_arena();
	setup_sources();
	atexit(remove_ino_dir);
	for (int d = 0; d < ndev; d++) {
		use_dev(d);
		await_quiet();
	}
	signal(SIGALRM, on_alarm);
	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	signal(SIGPIPE, SIG_IGN);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; i < nprogs + nmut; i++) {
		const uint8_t *p;
		size_t n;

		if (i < nprogs) {
			p = progs[i].p;
			n = progs[i].n;
			L.prog_name = progs[i].name;
		} else {
			n = mutate(buf, sizeof(buf));
			p = buf;
			L.prog_name = "mutation";
		}
		if (run_on_each(p, n)) {
			L.diffs++;
			fprintf(stderr, "kevent-lockstep: DIFFERENCE in %s%s: %s\n", L.prog_name,
				L.where, KR.why);
			if (art)
				save(art, p, n);
			if (!L.keep_going)
				break;
		} else if (L.verbose) {
			fprintf(stderr, "kevent-lockstep: ok %s\n", L.prog_name);
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (stop_asked)
			break;
		if (limit > 0 && (double)(t1.tv_sec - t0.tv_sec) +
		    (t1.tv_nsec - t0.tv_nsec) / 1e9 >= limit)
			break;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	print_figures((double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	if (ndev > 1)
		printf("kevent-lockstep: cross-backend %s vs %s: %lu programs compared, "
		       "%lu cross differences\n", devs[0].path, devs[1].path, cross_runs,
		       cross_diffs);
	return L.diffs ? 1 : 0;
}
