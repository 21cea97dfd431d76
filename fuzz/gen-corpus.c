// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the hand-written seed programs of fuzz/corpus/ (format: prog.h).
 * Usage: kfuzz-gen-corpus DIR.  Each seed is a function below named after
 * what it covers; the file name is "seed-" plus that name.  Reproducers of
 * bugs found by a campaign are not generated: they are kept as found
 * ("crash-*", "bug-*") next to the seeds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prog.h"

#define ALL_TYPES	0x3f
#define TEST_TYPES	0x0f	/* SOCKET, INODE, TIMER, POLL: NAIO/AIO refused */
#define UKSZ		40u
#define INF		(~0ull)

struct prog {
	unsigned char b[1 << 20];
	size_t n;
};

static struct prog P;
static const char *outdir;

/* One compact entry (prog.h). */
struct ent {
	unsigned char id0, id1, type, fl;
	unsigned int ev;
	unsigned char c0, c1;
	unsigned char g[4];
};

static void b1(unsigned int v)
{
	if (P.n >= sizeof(P.b)) {
		fprintf(stderr, "program too long\n");
		exit(1);
	}
	P.b[P.n++] = (unsigned char)v;
}

static void bn(unsigned long long v, unsigned int n)
{
	while (n--) {
		b1(v & 0xff);
		v >>= 8;
	}
}

static void hdr(unsigned int origins, const unsigned char caps[6], unsigned int path)
{
	unsigned int i;

	P.n = 0;
	b1(origins);
	for (i = 0; i < 6; i++)
		b1(caps ? caps[i] : 0);
	b1(path);
}

static void hdr_plain(void)
{
	hdr(TEST_TYPES, NULL, 0);
}

static void open_q(unsigned int q, unsigned int uid, unsigned int flags)
{
	b1(KF_OP_OPEN);
	b1(q);
	b1(uid);
	b1(flags);
}

static void close_q(unsigned int q)
{
	b1(KF_OP_CLOSE);
	b1(q);
}

static void poke(unsigned int off, unsigned int n, const struct ent *e)
{
	unsigned int i;

	b1(KF_OP_POKE);
	bn(off, 4);
	b1(n);
	for (i = 0; i < n; i++) {
		b1(e[i].id0);
		b1(e[i].id1);
		b1(e[i].type);
		b1(e[i].fl);
		bn(e[i].ev, 2);
		b1(e[i].c0);
		b1(e[i].c1);
		bn(e[i].g[0] | e[i].g[1] << 8 | e[i].g[2] << 16 | (unsigned)e[i].g[3] << 24, 4);
	}
}

/* n timer entries with ids first, first+1, ... and the given flags. */
static void poke_seq(unsigned int off, unsigned int n, unsigned int first, unsigned int fl)
{
	struct ent e[255];
	unsigned int i;

	memset(e, 0, sizeof(e));
	for (i = 0; i < n; i++) {
		e[i].id0 = (unsigned char)(first + i);
		e[i].type = KEVENT_TIMER;
		e[i].fl = (unsigned char)fl;
		e[i].ev = KEVENT_TIMER_FIRED;
	}
	poke(off, n, e);
}

static void raw(unsigned int off, unsigned int len, unsigned int byte)
{
	b1(KF_OP_RAW);
	bn(off, 4);
	bn(len, 2);
	while (len--)
		b1(byte);
}

static void fault(unsigned int which, unsigned int lo, unsigned int hi)
{
	b1(KF_OP_FAULT);
	b1(which);
	bn(lo, 4);
	bn(hi, 4);
}

static void ctl_x(unsigned int q, unsigned int uid, unsigned int cmd, unsigned int num,
		  unsigned int addr, unsigned int sz, unsigned int tail, unsigned int ioc)
{
	b1(KF_OP_CTL);
	b1(q);
	b1(uid);
	bn(cmd, 4);
	bn(num, 4);
	bn(addr, 4);
	bn(sz, 2);
	b1(tail);
	b1(ioc);
}

static void ctl(unsigned int q, unsigned int cmd, unsigned int num, unsigned int addr)
{
	ctl_x(q, 0, cmd, num, addr, 0, 0, 0);
}

static void get_x(unsigned int q, unsigned int uid, unsigned int min, unsigned int max,
		  unsigned long long timeout, unsigned int addr, unsigned int flags,
		  unsigned int ioc_flags, unsigned int sz, unsigned int tail,
		  unsigned int ioc, unsigned int park)
{
	b1(KF_OP_GET);
	b1(q);
	b1(uid);
	bn(min, 4);
	bn(max, 4);
	bn(timeout, 8);
	bn(addr, 4);
	bn(flags, 4);
	bn(ioc_flags, 4);
	bn(sz, 2);
	b1(tail);
	b1(ioc);
	b1(park);
}

static void get(unsigned int q, unsigned int min, unsigned int max, unsigned int addr)
{
	get_x(q, 0, min, max, 0, addr, 0, 0, 0, 0, 0, 0);
}

/* A GET_EVENTS that may park (a kwait_req is given). */
static void get_park(unsigned int q, unsigned int min, unsigned int max,
		     unsigned long long timeout, unsigned int addr)
{
	get_x(q, 0, min, max, timeout, addr, 0, 0, 0, 0, 0, KF_PARK_WR);
}

static void info(unsigned int q, unsigned int uid, unsigned int sz, unsigned int ioc)
{
	b1(KF_OP_INFO);
	b1(q);
	b1(uid);
	bn(sz, 2);
	b1(ioc);
}

static void setabi(unsigned int q, unsigned int rev, unsigned int flags,
		   unsigned long long res, unsigned int sz, unsigned int tail, unsigned int ioc)
{
	b1(KF_OP_SETABI);
	b1(q);
	b1(0);
	bn(rev, 4);
	bn(flags, 4);
	bn(res, 8);
	bn(sz, 2);
	b1(tail);
	b1(ioc);
}

static void ioctl_bytes(unsigned int q, unsigned int cmd, unsigned int len,
			const unsigned char *bytes)
{
	unsigned int i;

	b1(KF_OP_IOCTL);
	b1(q);
	b1(0);
	bn(cmd, 4);
	bn(len, 2);
	for (i = 0; i < len; i++)
		b1(bytes ? bytes[i] : 0);
}

static void fire(unsigned int id0, unsigned int id1, unsigned int data)
{
	b1(KF_OP_FIRE);
	b1(id0);
	b1(id1);
	bn(data, 4);
}

static void brk(unsigned int id0, unsigned int err)
{
	b1(KF_OP_BREAK);
	b1(id0);
	b1(0);
	b1(err);
}

/*
 * FIRES: in process the racing origin's fire of the stopped kevents of id
 * (id0, 0); on a device (lockstep.c) what happens to source id0's fd
 * number (D69): an odd data writes a byte into the file it had before,
 * data 4 mod 8 closes it, any other even data gives it a new file.
 */
static void fire_stopped(unsigned int id0, unsigned int data)
{
	b1(KF_OP_FIRES);
	b1(id0);
	b1(0);
	bn(data, 4);
}

static void clock_us(unsigned int us)
{
	b1(KF_OP_CLOCK);
	bn(us, 4);
}

static void run(void)
{
	b1(KF_OP_RUN);
}

static void waiter(unsigned int op, unsigned int w)
{
	b1(op);
	b1(w);
}

static void emit(const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/seed-%s", outdir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(P.b, 1, P.n, f) != P.n || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* ---- the seeds ---- */

static void seed_info(void)
{
	hdr(ALL_TYPES, NULL, 0);
	open_q(0, 0, KF_OPEN_RING);
	info(0, 0, 0, 0);
	info(0, 1, 200, 0);			/* larger: zero tail */
	info(0, 0, KEVENT_IOC_ARG_MAX, 0);
	info(0, 0, KEVENT_IOC_ARG_MAX + 1, 0);	/* -E2BIG */
	info(0, 0, 100, 0);			/* below VER0: -EINVAL */
	info(0, 0, 0, KF_IOC_WRONG_DIR);	/* -ENOTTY */
	info(0, 0, 0, KF_IOC_WRONG_MAGIC);
	info(0, 0, 0, KF_IOC_UNKNOWN_NR);
	info(0, 0, 0, KF_IOC_ARG_NULL | KF_IOC_LEN_PLUS1);	/* _IOR ignores arg */
	emit("info");
}

static void seed_add_fire_get(void)
{
	hdr_plain();
	open_q(0, 0, KF_OPEN_RING | KF_OPEN_NOTIFY);
	poke_seq(0, 3, 1, 0);
	ctl(0, KEVENT_CTL_ADD, 3, 0);
	fire(1, 0, 7);
	fire(2, 0, 8);
	fire(1, 0, 9);				/* merge: no ring slot (D3) */
	get(0, 0, 10, 4000);
	fire(1, 0, 10);				/* edge-like re-fire (A6) */
	get(0, 1, 1, 4000);
	close_q(0);
	emit("add-fire-get");
}

static void seed_add_answers(void)
{
	struct ent e[6];

	memset(e, 0, sizeof(e));
	e[0] = (struct ent){ .id0 = 1, .type = KEVENT_TIMER, .fl = KF_E_READY_ADD, .ev = 1 };
	e[1] = (struct ent){ .id0 = 2, .type = KEVENT_POLL, .fl = KF_E_FAIL_ATT, .ev = 1 };
	e[2] = (struct ent){ .id0 = 3, .type = KEVENT_NAIO, .ev = 1 };	/* no origin */
	e[3] = (struct ent){ .id0 = 4, .type = 9, .ev = 1 };		/* >= KEVENT_MAX */
	e[4] = (struct ent){ .id0 = 5, .type = KEVENT_SOCKET, .fl = KF_E_GARBAGE, .ev = 1,
			     .g = { 0xff, 0x12, 0x34, 0x56 } };	/* input ret_* ignored */
	e[5] = (struct ent){ .id0 = 6, .type = KEVENT_INODE, .fl = KF_E_READY_ADD | KF_E_GARBAGE,
			     .c0 = 9, .g = { 3, 4, 5, 6 } };
	hdr_plain();
	open_q(1, 2, KF_OPEN_RING);
	poke(100, 6, e);
	ctl_x(1, 2, KEVENT_CTL_ADD, 6, 100, 0, 0, 0);	/* compacts 5 to the front */
	info(1, 2, 0, 0);
	close_q(1);
	emit("add-answers");
}

static void seed_remove_modify(void)
{
	struct ent e[4];

	memset(e, 0, sizeof(e));
	e[0] = (struct ent){ .id0 = 1, .type = KEVENT_TIMER, .ev = 1, .c0 = 1 };
	e[1] = (struct ent){ .id0 = 1, .type = KEVENT_TIMER, .ev = 1, .c0 = 1 };	/* duplicate (D6) */
	e[2] = (struct ent){ .id0 = 2, .type = KEVENT_POLL, .ev = 1, .c0 = 2 };
	e[3] = (struct ent){ .id0 = 3, .type = KEVENT_POLL, .ev = 1 };
	hdr_plain();
	open_q(0, 0, KF_OPEN_RING);
	poke(0, 4, e);
	ctl(0, KEVENT_CTL_ADD, 4, 0);
	/* MODIFY: ready at once, refused by the origin, no match (D7: cookie) */
	e[0].fl = KF_E_READY_MOD;
	e[1] = (struct ent){ .id0 = 2, .type = KEVENT_POLL, .fl = KF_E_FAIL_MOD, .c0 = 2 };
	e[2] = (struct ent){ .id0 = 3, .type = KEVENT_POLL, .c0 = 77 };
	poke(1000, 3, e);
	ctl(0, KEVENT_CTL_MODIFY, 3, 1000);
	fire(2, 0, 5);				/* the refused kevent is stopped */
	get(0, 0, 8, 2000);
	/* REMOVE: the oldest duplicate, then one that matches nothing */
	e[0] = (struct ent){ .id0 = 1, .c0 = 1 };
	e[1] = (struct ent){ .id0 = 9 };
	poke(3000, 2, e);
	ctl(0, KEVENT_CTL_REMOVE, 2, 3000);
	fire(1, 0, 1);
	get(0, 0, 8, 2000);
	close_q(0);
	emit("remove-modify");
}

static void seed_ctl_whole_call(void)
{
	hdr_plain();
	open_q(0, 0, 0);
	poke_seq(0, 2, 1, 0);
	ctl(0, 3, 1, 0);			/* unknown cmd (D34) */
	ctl(0, KEVENT_CTL_ADD, 4097, 0);	/* num > 4096 */
	ctl(0, KEVENT_CTL_ADD, 4096, 0);	/* kevent_num + num >= 4096 */
	ctl(0, KEVENT_CTL_REMOVE, 1, 0);	/* num > kevent_num */
	ctl(0, KEVENT_CTL_MODIFY, 1, 0);
	ctl(0, KEVENT_CTL_ADD, 0, KF_ADDR_NULL);	/* num 0: 0, no effect */
	ctl_x(0, 0, KEVENT_CTL_ADD, 1, 0, 15, 0, 0);	/* short struct */
	ctl_x(0, 0, KEVENT_CTL_ADD, 1, 0, 24, 0, 0);	/* zero tail: fine */
	ctl_x(0, 0, KEVENT_CTL_ADD, 1, 40, 24, 0xee, 0);	/* dirty tail: -E2BIG */
	ctl_x(0, 0, KEVENT_CTL_ADD, 1, 0, 0, 0, KF_IOC_ARG_NULL);
	ctl_x(0, 0, KEVENT_CTL_ADD, 1, 0, 0, 0, KF_IOC_LEN_PLUS1);
	ctl_x(0, 0, KEVENT_CTL_ADD, 1, 0, 0, 0, KF_IOC_WRONG_DIR);
	ctl_x(0, 0, KEVENT_CTL_ADD, 1, 0, 2000, 0, 0);	/* > KEVENT_IOC_ARG_MAX */
	close_q(0);
	emit("ctl-whole-call");
}

static void seed_ctl_faults(void)
{
	hdr_plain();
	open_q(0, 0, KF_OPEN_RING);
	poke_seq(0, 4, 1, KF_E_READY_ADD);
	poke_seq(160, 4, 5, 0);
	fault(0, 100, 101);
	ctl(0, KEVENT_CTL_ADD, 4, 0);		/* read fault: no effect (D9) */
	fault(0, 0, 0);
	fault(1, 40, 41);
	ctl(0, KEVENT_CTL_ADD, 4, 0);		/* write-back fault: results lost */
	ctl(0, KEVENT_CTL_ADD, 4, 160);		/* registered, nothing written */
	ctl(0, KEVENT_CTL_REMOVE, 2, 160);	/* removed, write-back -EFAULT? no: off 160 */
	fault(1, 0, 0);
	ctl(0, KEVENT_CTL_ADD, 1, KF_ARENA - 20);	/* array past the end */
	ctl(0, KEVENT_CTL_ADD, 1, KF_ADDR_NULL);
	ctl(0, KEVENT_CTL_ADD, 1, KF_ADDR_BEFORE);
	ctl(0, KEVENT_CTL_ADD, 1, KF_ADDR_WRAP);
	poke_seq(3, 2, 20, 0);			/* misaligned array */
	ctl(0, KEVENT_CTL_ADD, 2, 3);
	close_q(0);
	emit("ctl-faults");
}

static void seed_get_basic(void)
{
	hdr_plain();
	open_q(0, 0, KF_OPEN_RING);
	poke_seq(0, 3, 1, KF_E_ONESHOT);
	poke_seq(120, 3, 4, 0);
	ctl(0, KEVENT_CTL_ADD, 6, 0);
	fire(1, 0, 1);
	fire(4, 0, 2);
	fire(2, 0, 3);
	fire(1, 0, 4);				/* stopped: ONESHOT fired */
	get(0, 0, 2, 1000);			/* FIFO, 2 of 3 */
	get(0, 0, 2, 1000);
	fire(4, 0, 5);
	fire(5, 0, 6);
	get(0, 1, 4095, 1000);
	info(0, 0, 0, 0);
	close_q(0);
	emit("get-basic");
}

static void seed_get_errors(void)
{
	hdr_plain();
	open_q(0, 0, 0);
	poke_seq(0, 2, 1, 0);
	ctl(0, KEVENT_CTL_ADD, 2, 0);
	fire(1, 0, 0);
	get(0, 3, 2, 1000);			/* min > max */
	get_x(0, 0, 0, 2, 0, 1000, 0, 2, 0, 0, 0, 0);	/* unknown ioc_flags */
	get_x(0, 0, 1, 2, INF, 1000, 0xffffffff, KEVENT_GET_NONBLOCK, 0, 0, 0, KF_PARK_WR);
	get(0, 0, 0, KF_ADDR_NULL);		/* max 0: 0 at once */
	fire(2, 0, 0);
	get(0, 5000, 5000, 1000);		/* clamped to 4095 (D12) */
	get_x(0, 0, 0, 1, 0, 1000, 0, 0, 33, 1, 0, 0);	/* dirty tail */
	get_x(0, 0, 0, 1, 0, 1000, 0, 0, 31, 0, 0, 0);	/* short */
	get_x(0, 0, 0, 1, 0, 1000, 0, 0, 0, 0, KF_IOC_WRONG_MAGIC, 0);
	close_q(0);
	emit("get-errors");
}

static void seed_get_faults(void)
{
	hdr_plain();
	open_q(0, 0, KF_OPEN_RING);
	poke_seq(0, 4, 1, KF_E_ONESHOT);
	ctl(0, KEVENT_CTL_ADD, 4, 0);
	fire(1, 0, 0);
	fire(2, 0, 0);
	fire(3, 0, 0);
	fault(0, 2100, 2101);
	get(0, 0, 4, 2000);			/* probe fault: nothing dequeued */
	fault(0, 0, 0);
	fault(1, 2050, 2051);
	get(0, 0, 4, 2000);			/* one written, the rest lost (D10) */
	fire(4, 0, 0);
	fault(1, 2000, 2001);
	get(0, 0, 4, 2000);			/* nothing written: -EFAULT */
	fault(1, 0, 0);
	get(0, 0, 4, KF_ADDR_NULL);
	fire(4, 0, 0);
	fault(3 | 1 << 2, 2040, 2041);		/* late: the probe passes, the copy faults */
	poke_seq(3000, 2, 5, 0);
	ctl(0, KEVENT_CTL_ADD, 2, 3000);
	fire(5, 0, 0);
	fire(6, 0, 0);
	get(0, 0, 4, 2000);			/* 1 written, 2 lost (D10) */
	fault(3, 0, 0);
	fault(1, 2000, 2001);
	fire(5, 0, 0);
	get(0, 0, 4, 2000);			/* probe write fault: nothing lost */
	fault(1, 0, 0);
	get(0, 0, 4, 2000);
	close_q(0);
	emit("get-faults");
}

static void seed_waiters(void)
{
	hdr_plain();
	open_q(0, 0, KF_OPEN_RING);
	open_q(1, 1, 0);
	poke_seq(0, 4, 1, 0);
	ctl(0, KEVENT_CTL_ADD, 4, 0);
	get_park(0, 2, 4, INF, 1000);		/* waiter 0 */
	get_park(0, 1, 1, 5000, 2000);		/* waiter 1, 5 us */
	fire(1, 0, 0);				/* D16: waiter 1 is due, 0 is not */
	run();
	waiter(KF_OP_PUT, 1);
	get_park(0, 3, 3, 1000, 3000);		/* waiter 1 again */
	clock_us(2);				/* expires: returns what is ready */
	fire(2, 0, 0);
	fire(3, 0, 0);
	ctl(0, KEVENT_CTL_ADD, 0, 0);		/* served inline by a later CTL */
	waiter(KF_OP_INTR, 0);
	run();
	get_park(0, 1, 1, INF, 3000);		/* waiter 2, interrupted: 0 */
	waiter(KF_OP_INTR, 2);
	get(0, 0, 1, 4000);			/* served inline before this call */
	waiter(KF_OP_PUT, 0);
	waiter(KF_OP_PUT, 1);
	waiter(KF_OP_PUT, 2);
	waiter(KF_OP_INTR, 2);			/* put: ignored */
	get_park(1, 1, 1, INF, 5000);		/* put before it completes */
	waiter(KF_OP_PUT, 0);
	get_park(0, 1, 1, INF, 6000);
	close_q(0);				/* D17: completes, queue lives on */
	close_q(1);
	run();
	emit("waiters");
}

/* Revision 2 (docs/abi.md D40-D57) on the dispatcher: SET_ABI 2, READY, the latch, ENOSYS, the ring calls, timespec GET_EVENTS, EINTR. */
/* Little-endian 32-bit words into b. */
static void le32s(unsigned char *b, const unsigned int *w, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		for (unsigned int j = 0; j < 4; j++)
			b[i * 4 + j] = (unsigned char)(w[i] >> (8 * j));
}

static void wait_ring(unsigned int q, unsigned int num, unsigned int old_uidx)
{
	unsigned int w[8] = { num, old_uidx, 0, 0, 0, 0, 0, 0 };	/* timeout {0, 0}: no wait */
	unsigned char b[32];

	le32s(b, w, 8);
	ioctl_bytes(q, KEVENT_IOC_WAIT, 32, b);
}

static void commit_ring(unsigned int q, unsigned int new_uidx, unsigned int over)
{
	unsigned int w[2] = { new_uidx, over };
	unsigned char b[8];

	le32s(b, w, 2);
	ioctl_bytes(q, KEVENT_IOC_COMMIT, 8, b);
}

/*
 * Revision 2's kevent_uring (D53-D55): a 4-slot ring at arena offset 8192
 * (the lockstep fuzzer maps the address into its arena; in process, kfuzz's
 * accessor refuses it: -EFAULT), three poll kevents, WAITs that fill and
 * wrap it, COMMITs that free, wrap over, repeat and overrun.
 */
static void seed_rev2_ring(void)
{
	unsigned int init[4] = { 8192, 0, 4, 0 };
	unsigned char ring[16];
	struct ent e[3];

	memset(e, 0, sizeof(e));
	for (unsigned int i = 0; i < 3; i++)
		e[i] = (struct ent){ .id0 = (unsigned char)i, .type = KEVENT_POLL, .ev = 1,
				     .c0 = (unsigned char)(20 + i) };
	le32s(ring, init, 4);
	hdr_plain();
	open_q(0, 0, 0);
	setabi(0, 2, 0, 0, 0, 0, 0);
	ioctl_bytes(0, KEVENT_IOC_RING_INIT, 16, ring);
	poke(0, 3, e);
	ctl(0, KEVENT_CTL_ADD, 3, 0);
	fire(0, 0, 1);
	fire(1, 0, 2);
	wait_ring(0, 8, 0);		/* 2 into slots 0, 1 */
	fire(2, 0, 3);
	wait_ring(0, 8, 1);		/* stale uidx: 0 */
	wait_ring(0, 8, 0);		/* 1 into slot 2 */
	info(0, 0, 192, 0);
	commit_ring(0, 3, 0);		/* frees 3 */
	fire(0, 0, 4);
	wait_ring(0, 8, 3);		/* slot 3, kidx wraps to 0 */
	fire(1, 0, 5);
	fire(2, 0, 6);
	wait_ring(0, 8, 3);		/* slots 0, 1 */
	fire(0, 0, 7);
	wait_ring(0, 1, 3);		/* slot 2: full */
	fire(1, 0, 8);
	wait_ring(0, 8, 3);		/* full: would block, or 0 without a ring */
	info(0, 0, 192, 0);
	commit_ring(0, 2, 0);		/* wraps: over 1, frees 3 */
	commit_ring(0, 1, 0);		/* a commit already made: 0 */
	commit_ring(0, 3, 1);		/* frees the last one */
	commit_ring(0, 0, 1);		/* passes the kernel index: EINVAL */
	commit_ring(0, 3, 5);		/* EOVERFLOW */
	info(0, 0, 192, 0);
	close_q(0);
	emit("rev2-ring");
}

/* BREAK with a chosen id1 (the lockstep fuzzer's inode source: bit 7). */
static void brk_x(unsigned int id0, unsigned int id1, unsigned int err)
{
	b1(KF_OP_BREAK);
	b1(id0);
	b1(id1);
	b1(err);
}

/*
 * INODE kevents on the lockstep fuzzer's private directory: FIRE and BREAK
 * with id1 bit 7 create and remove a file there (in process they fire no
 * kevent of this program: no such id).
 */
static void seed_inode(void)
{
	struct ent e[3];

	memset(e, 0, sizeof(e));
	e[0] = (struct ent){ .id0 = 1, .type = KEVENT_INODE, .ev = KEVENT_INODE_CREATE, .c0 = 1 };
	e[1] = (struct ent){ .id0 = 1, .type = KEVENT_INODE, .ev = KEVENT_INODE_REMOVE, .c0 = 2 };
	hdr_plain();
	open_q(0, 0, KF_OPEN_RING);
	open_q(1, 0, 0);
	poke(0, 2, e);
	ctl(0, KEVENT_CTL_ADD, 2, 0);
	fire(9, 0x80, 0);			/* create: the CREATE kevent */
	get(0, 0, 4, 2000);
	fire(9, 0x80, 0);
	fire(9, 0x80, 0);			/* merges: not run */
	brk_x(9, 0x80, 0);			/* remove: the REMOVE kevent */
	get(0, 0, 4, 2000);
	e[0].ev = KEVENT_INODE_CREATE | KEVENT_INODE_REMOVE;
	poke(1000, 1, e);
	ctl(0, KEVENT_CTL_MODIFY, 1, 1000);	/* both bits: a remove fires two (not run) */
	brk_x(9, 0x80, 0);
	poke(0, 1, &e[1]);
	ctl(0, KEVENT_CTL_REMOVE, 1, 0);
	brk_x(9, 0x80, 0);
	get(0, 0, 4, 2000);
	poke(0, 1, e);
	ctl(1, KEVENT_CTL_ADD, 1, 0);		/* a second queue on the same directory */
	fire(9, 0x80, 0);
	get(1, 0, 4, 2000);
	close_q(0);
	close_q(1);
	emit("inode");
}

static void seed_rev2(void)
{
	static const unsigned char ring0[16], wait0[32], commit0[8];
	unsigned char ring_bad[16] = { 8, 0, 0, 0, 0, 0, 0, 0, 1 };	/* 1 slot: EINVAL */
	struct ent e[3];

	memset(e, 0, sizeof(e));
	e[0] = (struct ent){ .id0 = 1, .type = KEVENT_TIMER, .ev = 1, .c0 = 1 };
	e[1] = (struct ent){ .id0 = 2, .type = KEVENT_TIMER, .fl = KF_E_ONESHOT, .ev = 1, .c0 = 2 };
	e[2] = (struct ent){ .id0 = 3, .type = KEVENT_AIO, .ev = 1, .c0 = 3 };
	hdr_plain();
	open_q(0, 0, 0);
	open_q(1, 0, 0);
	open_q(2, 0, 0);
	ioctl_bytes(0, KEVENT_IOC_RING_INIT, 16, ring0);	/* revision 1: ENOTTY */
	setabi(1, 1, 2, 0, 0, 0, 0);				/* EINTR with 1: EINVAL */
	setabi(0, 2, 0, 0, 0, 0, 0);
	ioctl_bytes(0, KEVENT_IOC_RING_INIT, 16, ring_bad);
	ioctl_bytes(0, KEVENT_IOC_RING_INIT, 16, ring0);	/* no ring: 0 */
	ioctl_bytes(0, KEVENT_IOC_RING_INIT, 16, ring0);	/* EBUSY */
	ioctl_bytes(0, KEVENT_IOC_WAIT, 32, wait0);		/* no ring: EINVAL */
	ioctl_bytes(0, KEVENT_IOC_COMMIT, 8, commit0);		/* no ring: 0 */
	poke(0, 3, e);
	ctl(0, KEVENT_CTL_ADD, 3, 0);				/* AIO: -ENOSYS */
	poke(0, 2, e);
	ctl(0, KEVENT_CTL_READY, 2, 0);				/* both marked */
	get(0, 0, 4, 400);
	ctl(0, KEVENT_CTL_READY, 0, 0);				/* latched */
	get_park(0, 1, 1, INF, 400);				/* returns at once */
	get_park(0, 1, 1, INF, 400);				/* parks */
	ctl(0, KEVENT_CTL_READY, 0, 0);				/* wakes it: 0 */
	waiter(KF_OP_PUT, 0);
	get_x(0, 0, 1, 1, 0, 400, 0, 0x4, 48, 0, 0, 0);		/* timespec {0, 0} */
	get_x(0, 0, 1, 1, 0, 400, 0x80, 0x4, 48, 0, 0, 0);	/* unknown flag */
	get_x(0, 0, 1, 1, 0, 400, 0, 0x4, 0, 0, 0, 0);		/* VER0 size: EINVAL */
	setabi(2, 2, 2, 0, 0, 0, 0);				/* EINTR */
	get_park(2, 1, 1, INF, 400);
	waiter(KF_OP_INTR, 0);
	run();
	waiter(KF_OP_PUT, 0);
	close_q(0);
	close_q(1);
	close_q(2);
	emit("rev2");
}

/* A kevent_wait_arg as bytes (little endian, as the harness's host). */
static void wait_bytes(unsigned char *b, __u32 num, __u32 old, __s64 sec, __u32 nsec,
		       __u32 pad, __u32 flags, __u32 ioc_flags)
{
	struct kevent_wait_arg w = { num, old, { sec, nsec, pad }, flags, ioc_flags };

	memcpy(b, &w, sizeof(w));
}

/*
 * Revision 2's calls with their arguments varied (D48, D49, D50, D54, D55):
 * WAIT's timespecs and flags (each whole-call check), COMMIT without a ring,
 * READY of kevents already ready, and a timespec GET_EVENTS without a
 * timeout parked until READY(0) wakes it.
 */
static void seed_rev2_calls(void)
{
	static const unsigned char ring0[16];
	static const struct {
		__s64 sec;
		__u32 nsec, pad, flags, ioc;
	} w[] = {
		{ 0, 0, 0, 0, 0 },					/* no ring: EINVAL */
		{ 0, 1000000000u, 0, 0, 0 },				/* tv_nsec: EINVAL */
		{ -1, 0, 0, 0, 0 },					/* tv_sec < 0 */
		{ 0, 0, 1, 0, 0 },					/* __pad */
		{ 1, 0, 0, KEVENT_FLAGS_ABSTIME, 0 },			/* 1970 */
		{ 1, 0, 0, KEVENT_FLAGS_ABSTIME | KEVENT_FLAGS_MONOTONIC, 0 },
		{ 0, 0, 0, KEVENT_FLAGS_MONOTONIC, 0 },		/* without ABSTIME */
		{ 0, 0, 0, KEVENT_FLAGS_NO_TIMEOUT, KEVENT_GET_NONBLOCK },
		{ 1, 0, 0, KEVENT_FLAGS_NO_TIMEOUT, 0 },		/* with a timespec */
		{ 0, 0, 0, KEVENT_FLAGS_NO_TIMEOUT | KEVENT_FLAGS_ABSTIME, 0 },
		{ 0, 0, 0, 0x80, 0 },					/* unknown flag */
		{ 0, 0, 0, 0, 0x2 },					/* unknown ioc_flags */
	};
	static const __u32 commit[][2] = { { 0, 0 }, { 5, 1 }, { ~0u, ~0u } };
	unsigned char b[32];
	struct ent e[2];
	unsigned int i;

	memset(e, 0, sizeof(e));
	e[0] = (struct ent){ .id0 = 1, .type = KEVENT_TIMER, .ev = 1, .c0 = 1 };
	e[1] = (struct ent){ .id0 = 2, .type = KEVENT_TIMER, .fl = KF_E_ONESHOT, .ev = 1, .c0 = 2 };
	hdr_plain();
	open_q(0, 0, 0);
	open_q(1, 0, 0);
	setabi(0, 2, 0, 0, 0, 0, 0);
	setabi(1, 2, 0, 0, 0, 0, 0);
	ioctl_bytes(0, KEVENT_IOC_RING_INIT, 16, ring0);	/* no ring: 0 */
	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		wait_bytes(b, 1, 0, w[i].sec, w[i].nsec, w[i].pad, w[i].flags, w[i].ioc);
		ioctl_bytes(0, KEVENT_IOC_WAIT, 32, b);
	}
	for (i = 0; i < sizeof(commit) / sizeof(commit[0]); i++) {
		memcpy(b, commit[i], 8);
		ioctl_bytes(0, KEVENT_IOC_COMMIT, 8, b);
	}
	poke(0, 2, e);
	ctl(0, KEVENT_CTL_ADD, 2, 0);
	poke(0, 2, e);
	ctl(0, KEVENT_CTL_READY, 2, 0);				/* both marked */
	poke(0, 2, e);
	ctl(0, KEVENT_CTL_READY, 2, 0);				/* already ready */
	get(0, 0, 4, 400);
	get_x(1, 0, 1, 1, 0, 400, KEVENT_FLAGS_NO_TIMEOUT, KEVENT_GET_TIMESPEC, 48, 0, 0,
	      KF_PARK_WR);						/* parks */
	ctl(1, KEVENT_CTL_READY, 0, 0);				/* wakes it (it returns 0) */
	waiter(KF_OP_PUT, 0);
	run();
	close_q(0);
	close_q(1);
	emit("rev2-calls");
}

/*
 * Revision 3 (D60-D64).  A CTL of size 17 with tail byte 1 is a caller of
 * KEVENT_IOC_CTL_EXT whose header stops after ioc_flags' low byte: ioc_flags
 * KEVENT_CTL_EXT, the rest zero.  An 80-byte entry is two compact entries:
 * the ukevent, then its ext (all zero unless that entry is used).
 */
#define EXT_SZ	17
#define EXT_TAIL	KEVENT_CTL_EXT

static void ctl_ext(unsigned int q, unsigned int cmd, unsigned int num, unsigned int addr)
{
	ctl_x(q, 0, cmd, num, addr, EXT_SZ, EXT_TAIL, 0);
}

static void seed_rev3(void)
{
	unsigned char pad1[24] = { 0 }, flag2[24] = { 0 };
	struct ent e[8];

	pad1[20] = 1;				/* __pad */
	flag2[16] = 2;				/* an unknown ioc_flags bit */
	memset(e, 0, sizeof(e));
	e[0] = (struct ent){ .id0 = 1, .type = KEVENT_USER, .c0 = 1 };
	e[2] = (struct ent){ .id0 = 1, .type = KEVENT_TIMER, .ev = 1, .c0 = 1 };
	e[3] = (struct ent){ .id0 = 9, .fl = KF_E_GARBAGE, .g = { 1, 2, 3, 4 } };	/* a dirty ext */
	e[4] = (struct ent){ .id0 = 3, .type = KEVENT_POSIX_TIMER, .ev = 1, .c0 = 3 };
	e[6] = (struct ent){ .id0 = 2, .type = KEVENT_USER, .fl = KF_E_ONESHOT, .c0 = 2 };
	hdr_plain();
	open_q(0, 0, 0);
	open_q(1, 0, 0);
	setabi(1, 2, 0, 0, 0, 0, 0);
	poke(0, 8, e);
	ctl_ext(1, KEVENT_CTL_ADD, 1, 0);		/* below revision 3: EINVAL */
	ctl_ext(1, KEVENT_CTL_QUERY, 1, 0);		/* cmd 4 on revision 2: EINVAL */
	ctl(1, KEVENT_CTL_ADD, 1, 0);			/* USER on revision 2: ENOSYS */
	setabi(0, 3, 0, 0, 0, 0, 0);
	info(0, 0, 0, 0);
	ioctl_bytes(0, KEVENT_IOC_CTL_EXT, 24, pad1);	/* EINVAL */
	ioctl_bytes(0, KEVENT_IOC_CTL_EXT, 24, flag2);	/* EINVAL */
	ctl(0, KEVENT_CTL_QUERY, 1, 0);			/* QUERY needs EXT: EINVAL */
	ctl_ext(0, KEVENT_CTL_ADD, 4, 0);		/* USER ok, dirty ext, no POSIX origin */
	poke(0, 8, e);
	ctl(0, KEVENT_CTL_ADD, 1, 80);			/* a TIMER with the USER's key */
	e[0].ev = 0x5;
	poke(0, 2, e);
	ctl_ext(0, KEVENT_CTL_READY, 1, 0);		/* trigger 0x5 */
	e[0].ev = 0x12;
	poke(0, 1, e);
	ctl(0, KEVENT_CTL_READY, 1, 0);			/* merges: 0x17, 2 */
	ctl(0, KEVENT_CTL_READY, 1, 0);
	get(0, 0, 4, 400);
	ctl_ext(0, KEVENT_CTL_QUERY, 1, 0);		/* a USER: BROKEN EINVAL */
	ctl(0, KEVENT_CTL_MODIFY, 1, 0);
	e[0].type = KEVENT_POLL;
	poke(0, 1, e);
	ctl(0, KEVENT_CTL_REMOVE, 1, 0);		/* D63: no match */
	e[0].type = KEVENT_TIMER;
	poke(0, 1, e);
	ctl(0, KEVENT_CTL_REMOVE, 1, 0);		/* the TIMER only */
	get(0, 0, 4, 400);
	close_q(0);
	close_q(1);
	emit("rev3");
}

/*
 * Revision 4 (D65, D66): KEVENT_REQ_DISPATCH, byte [8] bit 0 of an entry
 * without KF_E_GARBAGE (prog.h).  Below revision 4 the bit is unknown:
 * STRICT refuses it.  On revision 4 a delivered DISPATCH kevent is
 * disarmed: its fires are held and merge, READY adds nothing to a held
 * result, a user event's triggers merge while held, MODIFY re-arms and the
 * held result becomes ready (a take13 ring slot, D3); ONESHOT wins over
 * DISPATCH; a MODIFY without the bit makes it an ordinary kevent again.
 * An entry of an unknown type with the bit on a STRICT revision-3 queue
 * fails for its type (-ENOSYS), not for the bit: every backend checks the
 * type first (the module checked the flags first until the lockstep run
 * in the guest met such an entry).
 */
static void seed_rev4(void)
{
	struct ent e[3];

	memset(e, 0, sizeof(e));
	e[0] = (struct ent){ .id0 = 1, .type = KEVENT_TIMER, .ev = 1, .c0 = 1, .g = { 1 } };
	e[1] = (struct ent){ .id0 = 2, .type = KEVENT_TIMER, .fl = KF_E_ONESHOT, .ev = 1, .c0 = 2,
			     .g = { 1 } };
	e[2] = (struct ent){ .id0 = 3, .type = KEVENT_USER, .ev = 0x5, .c0 = 3, .g = { 1 } };
	const struct ent unknown = { .id0 = 4, .type = 7, .c0 = 4, .g = { 1 } };
	hdr_plain();
	open_q(0, 0, KF_OPEN_RING);
	open_q(1, 0, 0);
	setabi(1, 3, KEVENT_ABI_STRICT, 0, 0, 0, 0);
	poke(0, 1, e);
	ctl(1, KEVENT_CTL_ADD, 1, 0);			/* revision 3, STRICT: -EINVAL */
	poke(0, 1, &unknown);
	ctl(1, KEVENT_CTL_ADD, 1, 0);			/* the type first: -ENOSYS (D51) */
	setabi(0, 5, 0, 0, 0, 0, 0);			/* not served: EINVAL */
	setabi(0, 4, KEVENT_ABI_STRICT, 0, 0, 0, 0);
	poke(0, 3, e);
	ctl(0, KEVENT_CTL_ADD, 3, 0);
	fire(1, 0, 4);
	fire(2, 0, 5);
	get(0, 0, 4, 400);				/* both; 1 disarmed, 2 freed */
	fire(1, 0, 6);
	fire(1, 0, 7);					/* held, merged: 7 */
	poke(0, 1, e);
	ctl(0, KEVENT_CTL_READY, 1, 0);			/* held already: nothing */
	get(0, 0, 4, 400);				/* nothing */
	info(0, 0, 0, 0);
	ctl(0, KEVENT_CTL_MODIFY, 1, 0);		/* re-armed: ready with 7 */
	get(0, 0, 4, 400);
	ctl(0, KEVENT_CTL_READY, 1, 0);			/* held: {0, 0} */
	ctl(0, KEVENT_CTL_MODIFY, 1, 0);
	get(0, 0, 4, 400);
	poke(80, 1, &e[2]);
	ctl(0, KEVENT_CTL_READY, 1, 80);		/* trigger 0x5 */
	get(0, 0, 4, 400);				/* 0x5, 1; disarmed */
	ctl(0, KEVENT_CTL_READY, 1, 80);
	e[2].ev = 0x12;
	poke(80, 1, &e[2]);
	ctl(0, KEVENT_CTL_READY, 1, 80);		/* held: 0x17, 2 */
	get(0, 0, 4, 400);				/* nothing */
	ctl(0, KEVENT_CTL_MODIFY, 1, 80);
	get(0, 0, 4, 400);				/* 0x17, 2 */
	e[0].g[0] = 0;
	poke(0, 1, e);
	fire(1, 0, 8);					/* held */
	ctl(0, KEVENT_CTL_MODIFY, 1, 0);		/* no DISPATCH: ordinary again */
	get(0, 0, 4, 400);
	fire(1, 0, 9);
	get(0, 0, 4, 400);
	fire(1, 0, 10);
	get(0, 0, 4, 400);
	close_q(0);
	close_q(1);
	emit("rev4");
}

/*
 * D68: inode kevents of a revision-4 queue OR what comes while pending,
 * ready or held by DISPATCH (D65), a BROKEN report too; revision 3 keeps
 * the latest (A9).  The test origin reports what FIRE says, any bit.
 */
static void seed_rev4_inode(void)
{
	struct ent e[2];

	memset(e, 0, sizeof(e));
	e[0] = (struct ent){ .id0 = 5, .type = KEVENT_INODE, .ev = 0xff, .c0 = 1 };
	e[1] = (struct ent){ .id0 = 6, .type = KEVENT_INODE, .ev = 0xff, .c0 = 2, .g = { 1 } };
	hdr_plain();
	open_q(0, 0, KF_OPEN_RING);
	open_q(1, 0, 0);
	setabi(0, 4, 0, 0, 0, 0, 0);
	setabi(1, 3, 0, 0, 0, 0, 0);
	poke(0, 2, e);
	ctl(0, KEVENT_CTL_ADD, 2, 0);
	ctl(1, KEVENT_CTL_ADD, 1, 0);			/* id 5 on both queues */
	fire(5, 0, KEVENT_INODE_WRITE);
	fire(5, 0, KEVENT_INODE_ATTRIB);
	fire(5, 0, KEVENT_INODE_CREATE);
	get(0, 0, 4, 400);				/* 0x15 */
	get(1, 0, 4, 400);				/* 0x1: the latest */
	fire(6, 0, KEVENT_INODE_WRITE);
	get(0, 0, 4, 400);				/* 0x4, disarmed */
	fire(6, 0, KEVENT_INODE_EXTEND);
	fire(6, 0, KEVENT_INODE_LINK);			/* held: 0x28 */
	get(0, 0, 4, 400);				/* nothing */
	ctl(0, KEVENT_CTL_MODIFY, 1, UKSZ);		/* re-armed: 0x28 */
	get(0, 0, 4, 400);
	fire(5, 0, KEVENT_INODE_RENAME);
	brk(5, 2);					/* BROKEN, 0x40 and -ENOENT */
	get(0, 0, 4, 400);
	get(1, 0, 4, 400);				/* BROKEN, 0 and -ENOENT */
	close_q(0);
	close_q(1);
	emit("rev4-inode");
}

/*
 * The end of the revision-4 seeds: queue 1 again, on revision 4 with a
 * 4-slot kevent_uring at arena offset 8192 (in process its address
 * faults), e added and fired, then (fires >= 0) a FIRES with that data on
 * its source, delivered by the ring's WAIT, then by GET_EVENTS (in
 * process: there, after the WAIT's -EFAULT); both queues closed.
 */
static void ring_wait_tail(const struct ent *e, int fires)
{
	unsigned int init[4] = { 8192, 0, 4, 0 };
	unsigned char ring[16];

	le32s(ring, init, 4);
	close_q(1);
	open_q(1, 0, 0);
	setabi(1, 4, 0, 0, 0, 0, 0);
	ioctl_bytes(1, KEVENT_IOC_RING_INIT, 16, ring);
	poke(0, 1, e);
	ctl(1, KEVENT_CTL_ADD, 1, 0);
	fire(e->id0, e->id1, 5);
	if (fires >= 0)
		fire_stopped(e->id0, (unsigned int)fires);
	wait_ring(1, 4, 0);
	get(1, 0, 8, 400);
	close_q(0);
	close_q(1);
}

/*
 * Revision 4 (D67): a delivered POLL or SOCKET record carries its source's
 * count in ret_data[1]: the test origin's (0 for no bit, else id.raw[1] ^
 * the bits; core/test-origin.h), the lockstep fuzzer's real pipe's or
 * socket's (bytes readable, free space).  On revision 3 ret_data[1] stays
 * the result's.  The paths: GET_EVENTS, an answer at ADD, READY (no bit:
 * 0), BROKEN (keeps -errno), a TIMER (no count), the ring's WAIT (in
 * process the ring's address faults: -EFAULT, the counts read again at
 * the next delivery).
 */
static void seed_rev4_data(void)
{
	struct ent e[4];

	memset(e, 0, sizeof(e));
	e[0] = (struct ent){ .id0 = 1, .id1 = 0x30, .type = KEVENT_POLL, .ev = 1, .c0 = 1 };
	e[1] = (struct ent){ .id0 = 2, .id1 = 0x40, .type = KEVENT_SOCKET, .ev = 1, .c0 = 2 };
	e[2] = (struct ent){ .id0 = 3, .id1 = 0x50, .type = KEVENT_POLL, .fl = KF_E_READY_ADD,
			     .ev = 1, .c0 = 3 };
	e[3] = (struct ent){ .id0 = 4, .id1 = 0x60, .type = KEVENT_TIMER, .ev = 1, .c0 = 4 };
	hdr_plain();
	open_q(0, 0, KF_OPEN_RING);
	open_q(1, 0, 0);
	setabi(1, 3, 0, 0, 0, 0, 0);
	poke(0, 4, e);
	ctl(1, KEVENT_CTL_ADD, 4, 0);			/* 3 answered: ret_data[1] 0 */
	fire(1, 0x30, 5);
	fire(2, 0x40, 1);
	get(1, 0, 8, 400);				/* ret_data[1] as fired: 0 */
	setabi(0, 4, 0, 0, 0, 0, 0);
	poke(0, 4, e);
	ctl(0, KEVENT_CTL_ADD, 4, 0);			/* 3 answered with its count */
	fire(1, 0x30, 5);
	fire(2, 0x40, 1);
	fire(4, 0x60, 9);
	get(0, 0, 8, 400);				/* counts; the TIMER's 0 */
	fire(1, 0x30, 4);
	fire(1, 0x30, 1);				/* merged: the count of 1 */
	get(0, 0, 8, 400);
	poke(400, 1, &e[1]);
	ctl(0, KEVENT_CTL_READY, 1, 400);		/* no bit: 0 */
	get(0, 0, 8, 400);
	brk_x(2, 0x40, 32);
	get(0, 0, 8, 400);				/* BROKEN: -errno */
	ring_wait_tail(e, -1);				/* the ring slot's count */
	emit("rev4-data");
}

/*
 * Revision 4 (D69): a POLL or SOCKET record of a kevent whose fd no longer
 * names its file (the test origin's KTEST_STALE_FD, entry byte [8] bit 1)
 * is BROKEN|DONE {0, -EBADF} at GET_EVENTS and at the ring's WAIT (in
 * process the ring faults: checked again at the next delivery), and the
 * kevent stops for good: fires and MODIFY do not revive it, a READY's
 * delivery is checked again (and passes once a MODIFY cleared the bit).
 * Not at an answer at ADD, not for a TIMER, not on revision 3; with
 * DISPATCH (D65) it is disarmed as well.
 */
static void seed_rev4_fdcheck(void)
{
	struct ent e[5], t;

	memset(e, 0, sizeof(e));
	e[0] = (struct ent){ .id0 = 1, .id1 = 0x30, .type = KEVENT_POLL, .ev = 1, .c0 = 1,
			     .g = { KF_E8_STALE_FD } };
	e[1] = (struct ent){ .id0 = 2, .id1 = 0x40, .type = KEVENT_SOCKET, .ev = 1, .c0 = 2 };
	e[2] = (struct ent){ .id0 = 3, .id1 = 0x50, .type = KEVENT_POLL, .fl = KF_E_READY_ADD,
			     .ev = 1, .c0 = 3, .g = { KF_E8_STALE_FD } };
	e[3] = (struct ent){ .id0 = 4, .id1 = 0x60, .type = KEVENT_SOCKET, .ev = 1, .c0 = 4,
			     .g = { KF_E8_STALE_FD | KF_E8_DISPATCH } };
	e[4] = (struct ent){ .id0 = 5, .id1 = 0x70, .type = KEVENT_TIMER, .ev = 1, .c0 = 5,
			     .g = { KF_E8_STALE_FD } };
	hdr_plain();
	open_q(0, 0, 0);
	open_q(1, 0, 0);
	setabi(1, 3, 0, 0, 0, 0, 0);
	poke(0, 5, e);
	ctl(1, KEVENT_CTL_ADD, 5, 0);			/* revision 3: nothing checked */
	fire(1, 0x30, 5);
	fire(2, 0x40, 1);
	get(1, 0, 8, 400);
	setabi(0, 4, 0, 0, 0, 0, 0);
	poke(0, 5, e);
	ctl(0, KEVENT_CTL_ADD, 5, 0);			/* the answer at ADD: not checked */
	fire(1, 0x30, 5);
	fire(2, 0x40, 1);
	fire(4, 0x60, 2);
	fire(5, 0x70, 9);
	get(0, 0, 8, 400);				/* 1 and 4 stale, 2 counted, 5 a timer */
	fire(1, 0x30, 5);
	fire(4, 0x60, 2);
	get(0, 0, 8, 400);				/* never fire again */
	t = e[0];
	t.ev = 3;
	poke(400, 1, &t);
	ctl(0, KEVENT_CTL_MODIFY, 1, 400);		/* DONE, the origin not asked */
	fire(1, 0x30, 5);
	get(0, 0, 8, 400);
	ctl(0, KEVENT_CTL_READY, 1, 400);		/* delivered, checked again */
	get(0, 0, 8, 400);
	t.g[0] = 0;
	poke(400, 1, &t);
	ctl(0, KEVENT_CTL_MODIFY, 1, 400);		/* its fd names the file again */
	fire(1, 0x30, 5);
	get(0, 0, 8, 400);				/* still stopped */
	ctl(0, KEVENT_CTL_READY, 1, 400);
	get(0, 0, 8, 400);				/* not stale now: DONE {0, 0} */
	poke(400, 1, &e[3]);
	ctl(0, KEVENT_CTL_MODIFY, 1, 400);		/* re-arms the disarmed one */
	ctl(0, KEVENT_CTL_READY, 1, 400);
	get(0, 0, 8, 400);
	ring_wait_tail(e, -1);				/* the ring slot's record */
	emit("rev4-fdcheck");
}

/*
 * FIRES as the lockstep fuzzer runs it (fire_stopped): the fd number of
 * source id0 gets a new file, a byte goes into the file it had before, or
 * it is closed.  In process nothing: the seeds using them have no kevent
 * of id (id0, 0).
 */
static void new_file(unsigned int id0)
{
	fire_stopped(id0, 0);
}

static void old_write(unsigned int id0)
{
	fire_stopped(id0, 1);
}

static void close_fd(unsigned int id0)
{
	fire_stopped(id0, 4);
}

/*
 * The start of the D69 seeds on the lockstep fuzzer's sources: queue 0 on
 * revision 4, queue 1 on revision 3 beside it; e[0] (POLL on the pipe of
 * id0 1), e[1] (SOCKET) and e[2] (POLL on the other pipe) added on queue
 * 0, the first two on queue 1, and e[0] fired: ready on both queues.
 */
static void fd_seed_start(struct ent e[3])
{
	memset(e, 0, 3 * sizeof(*e));
	e[0] = (struct ent){ .id0 = 1, .id1 = 0x30, .type = KEVENT_POLL, .ev = 1, .c0 = 1 };
	e[1] = (struct ent){ .id0 = 2, .id1 = 0x40, .type = KEVENT_SOCKET, .ev = 1, .c0 = 2 };
	e[2] = (struct ent){ .id0 = 0, .id1 = 0x50, .type = KEVENT_POLL, .ev = 1, .c0 = 3 };
	hdr_plain();
	open_q(0, 0, 0);
	open_q(1, 0, 0);
	setabi(0, 4, 0, 0, 0, 0, 0);
	setabi(1, 3, 0, 0, 0, 0, 0);
	poke(0, 3, e);
	ctl(0, KEVENT_CTL_ADD, 3, 0);
	ctl(1, KEVENT_CTL_ADD, 2, 0);
	fire(1, 0x30, 5);				/* e0 ready on both queues */
}

/*
 * D69 on a device's real sources (the lockstep fuzzer): FIRES gives a
 * pipe's or the socket's fd number a new file.  The kevents added on the
 * old one are stale at their next delivery on revision 4 (GET_EVENTS, the
 * ring's WAIT, a READY's delivery; a MODIFY before it finds the old file
 * drained, not ready), and hear no write to the new file; on revision 3
 * their records stay (A7).  A write to the old file reaches them: a stale
 * one never fires again (not after a MODIFY either), one on revision 3 is
 * delivered as ever, and its MODIFY finds the old file ready.  A kevent added after it, with the same key as
 * a stale one too (D6), watches the new file and is counted (D67) until
 * the number gets yet another file.  In process FIRES and BREAK here reach
 * no kevent (ids (n, 0)): the same program without D69.
 */
static void seed_rev4_fd_replaced(void)
{
	unsigned int init[4] = { 8192, 0, 4, 0 };
	unsigned char ring[16];
	struct ent e[3], t;

	le32s(ring, init, 4);
	fd_seed_start(e);
	new_file(1);					/* e0's number: another file */
	get(0, 0, 8, 400);				/* revision 4: stale */
	get(1, 0, 8, 400);				/* revision 3: as fired */
	fire(1, 0x30, 5);				/* the new file: e0 hears nothing */
	get(0, 0, 8, 400);
	get(1, 0, 8, 400);
	poke(400, 1, e);
	ctl(0, KEVENT_CTL_MODIFY, 1, 400);		/* stale: stays stopped, origin not asked */
	old_write(1);					/* its old file */
	get(0, 0, 8, 400);				/* stale: nothing */
	get(1, 0, 8, 400);				/* revision 3: as ever */
	ctl(1, KEVENT_CTL_MODIFY, 1, 400);		/* the old file polled: ready */
	get(1, 0, 8, 400);
	old_write(1);
	get(0, 0, 8, 400);				/* still nothing */
	get(1, 0, 8, 400);
	new_file(0);					/* e2, not ready */
	t = e[2];
	t.ev = 3;
	poke(400, 1, &t);
	ctl(0, KEVENT_CTL_MODIFY, 1, 400);		/* DONE: its old file not ready */
	fire(0, 0x50, 1);				/* the new file: not e2 */
	get(0, 0, 8, 400);
	ctl(0, KEVENT_CTL_READY, 1, 400);		/* its delivery: stale */
	get(0, 0, 8, 400);
	brk(1, 5);					/* the new file drained */
	poke(400, 1, e);
	ctl(0, KEVENT_CTL_ADD, 1, 400);			/* e0's key again: on the new file */
	fire(1, 0x30, 5);				/* the new kevent only */
	get(0, 0, 8, 400);				/* counted, not stale */
	fire(1, 0x30, 5);
	new_file(1);					/* and its number a third file */
	get(0, 0, 8, 400);				/* stale too */
	ctl(0, KEVENT_CTL_READY, 1, 400);		/* the oldest of the key: checked again */
	get(0, 0, 8, 400);
	close_q(1);
	open_q(1, 0, 0);
	setabi(1, 4, 0, 0, 0, 0, 0);
	ioctl_bytes(1, KEVENT_IOC_RING_INIT, 16, ring);
	poke(0, 1, &e[1]);
	ctl(1, KEVENT_CTL_ADD, 1, 0);
	fire(2, 0x40, 1);				/* e1 ready on both queues */
	new_file(2);					/* the socket's number */
	wait_ring(1, 4, 0);				/* the ring slot's record: stale */
	get(1, 0, 8, 400);				/* in process: here after -EFAULT */
	get(0, 0, 8, 400);
	close_q(0);
	close_q(1);
	emit("rev4-fd-replaced");
}

/*
 * D69 with the number closed, not reused (the lockstep fuzzer's FIRES with
 * data 4): a kevent added on it is stale at its next delivery on revision
 * 4 (the daemon's kcmp answers EBADF, the module finds no file), at
 * GET_EVENTS, a READY's delivery and the ring's WAIT; on revision 3 its
 * records stay, and it keeps hearing its file, which the device holds
 * (A7): a write to it, a MODIFY polling it.  While the number is closed an
 * ADD on it fails -EBADF on either revision (abi.md section 7; a SOCKET
 * entry too, before -ENOTSOCK), and FIRE and BREAK there are not run;
 * once a FIRES gives it a file again, a kevent added on that one is
 * counted (D67), not stale.  One stale record goes to a GET_EVENTS that
 * waits for two: on a device it parks (1 ms, LK_PARK) and is completed
 * later, by its timeout, so the record is checked for the caller the
 * parked call keeps (D69); in process it does not wait (no kwait_req).  In
 * process FIRES reaches no kevent here (ids (n, 0)): the same program
 * without D69.
 */
static void seed_rev4_fd_closed(void)
{
	struct ent e[3], t;

	fd_seed_start(e);
	close_fd(1);					/* e0's number: closed */
	get(0, 0, 8, 400);				/* revision 4: stale */
	get(1, 0, 8, 400);				/* revision 3: as fired */
	fire(1, 0x30, 5);				/* no file there: not run */
	brk(1, 5);
	get(0, 0, 8, 400);
	poke(400, 1, e);
	ctl(0, KEVENT_CTL_ADD, 1, 400);			/* -EBADF */
	poke(400, 1, e);
	ctl(1, KEVENT_CTL_ADD, 1, 400);			/* -EBADF on revision 3 too */
	old_write(1);					/* its file, held by the device */
	get(0, 0, 8, 400);				/* stale: nothing */
	get(1, 0, 8, 400);				/* revision 3: as ever */
	poke(400, 1, e);
	ctl(1, KEVENT_CTL_MODIFY, 1, 400);		/* its file polled: ready */
	get(1, 0, 8, 400);
	new_file(1);					/* the number gets a file again */
	poke(400, 1, e);
	ctl(0, KEVENT_CTL_ADD, 1, 400);			/* e0's key again: on that file */
	fire(1, 0x30, 5);				/* the new kevent only */
	get(0, 0, 8, 400);				/* counted, not stale */
	close_fd(0);					/* e2's number; e2 not ready */
	poke(400, 1, &e[2]);
	ctl(0, KEVENT_CTL_READY, 1, 400);
	get_x(0, 0, 2, 8, 1000000, 400, 0, 0, 0, 0, 0, 0);	/* parks: stale for its caller */
	t = e[1];
	t.id0 = 0;
	poke(400, 1, &t);
	ctl(0, KEVENT_CTL_ADD, 1, 400);			/* a SOCKET on it: -EBADF */
	ring_wait_tail(&e[1], 4);			/* the socket's number closed */
	emit("rev4-fd-closed");
}

/* Raw bytes into the arena (RAW). */
static void raw_bytes(unsigned int off, unsigned int len, const unsigned char *bytes)
{
	b1(KF_OP_RAW);
	bn(off, 4);
	bn(len, 2);
	for (unsigned int i = 0; i < len; i++)
		b1(bytes[i]);
}

/* An 80-byte entry at off: the compact entry, then ext.timer (D59). */
static void poke_ext(unsigned int off, const struct ent *e, unsigned int clock,
		     unsigned int flags, unsigned int vsec, unsigned int vnsec,
		     unsigned int isec, unsigned int insec)
{
	unsigned int w[10] = { clock, flags, vsec, 0, vnsec, 0, isec, 0, insec, 0 };
	unsigned char b[40];

	poke(off, 1, e);
	le32s(b, w, 10);
	raw_bytes(off + UKSZ, 40, b);
}

/*
 * Revision 3 through a device (the lockstep fuzzer, LK_PTIMER): POSIX
 * timers, long and short (an odd id.raw[1] on an array's last entry),
 * relative and ABSTIME on each clock, counted, queried, re-armed, disarmed,
 * made ready by READY (count 0), a ONESHOT one freed at delivery; user
 * events triggered and merged; all of them through the revision-2 ring
 * (4 slots at 8192) and GET_EVENTS.  In process no POSIX timer has an
 * origin: the same calls answer ENOSYS per entry there.
 */
static void seed_rev3_timers(void)
{
	unsigned int init[4] = { 8192, 0, 4, 0 };
	unsigned char ring[16];
	const struct ent u1 = { .id0 = 1, .type = KEVENT_USER, .c0 = 5 };
	const struct ent p2 = { .id0 = 2, .type = KEVENT_POSIX_TIMER, .ev = KEVENT_TIMER_FIRED,
				.c0 = 2 };
	const struct ent p1 = { .id0 = 1, .id1 = 1, .type = KEVENT_POSIX_TIMER,
				.ev = KEVENT_TIMER_FIRED, .c0 = 1 };
	const struct ent p3 = { .id0 = 3, .id1 = 1, .type = KEVENT_POSIX_TIMER,
				.fl = KF_E_ONESHOT, .ev = KEVENT_TIMER_FIRED, .c0 = 3 };
	struct ent t;

	le32s(ring, init, 4);
	hdr_plain();
	open_q(0, 0, 0);
	open_q(1, 0, 0);
	setabi(0, 3, 0, 0, 0, 0, 0);
	setabi(1, 3, 0, 0, 0, 0, 0);
	ioctl_bytes(0, KEVENT_IOC_RING_INIT, 16, ring);
	/* a user event, a long periodic timer, a short one-expiry timer (last) */
	poke_ext(0, &u1, 0, 0, 0, 0, 0, 0);
	poke_ext(80, &p2, KEVENT_CLOCK_MONOTONIC, 0, 1, 0, 1, 0);
	poke_ext(160, &p1, KEVENT_CLOCK_REALTIME, 0, 0, 1000, 0, 0);
	ctl_ext(0, KEVENT_CTL_ADD, 3, 0);		/* 0: none answered */
	ctl_ext(0, KEVENT_CTL_QUERY, 3, 0);		/* 3: EINVAL, 1 h left, spent with 1 */
	t = u1;
	t.ev = 0x5;
	poke(2000, 1, &t);
	ctl(0, KEVENT_CTL_READY, 1, 2000);		/* trigger 0x5 */
	t.ev = 0x30;
	poke(2000, 1, &t);
	ctl(0, KEVENT_CTL_READY, 1, 2000);		/* merges: 0x35, 2 */
	poke(2000, 1, &p2);
	ctl(0, KEVENT_CTL_READY, 1, 2000);		/* the long timer: count 0 */
	info(0, 0, 192, 0);
	wait_ring(0, 8, 0);				/* p1 {1, 0}, u1 {0x35, 2}, p2 {0, 0} */
	commit_ring(0, 3, 0);
	/* re-arm p1: ABSTIME on REALTIME, short; bad settings fail their entry */
	poke_ext(0, &p2, 5, 0, 1, 0, 0, 0);			/* clock 5: EINVAL */
	poke_ext(80, &p2, KEVENT_CLOCK_MONOTONIC, 0, 1, 0, 0, 50000);	/* 50 us: EINVAL */
	poke_ext(160, &p1, KEVENT_CLOCK_REALTIME, KEVENT_TIMER_ABSTIME, 1, 0, 0, 0);
	ctl_ext(0, KEVENT_CTL_MODIFY, 3, 0);
	ctl_ext(0, KEVENT_CTL_QUERY, 3, 0);		/* p2 still 1 h, p1 spent with 1 */
	get(0, 0, 4, 400);				/* p1 {1, 0} */
	wait_ring(0, 8, 3);				/* nothing */
	/* a 40-byte MODIFY of a POSIX timer: event without FIRED fails */
	t = p2;
	t.ev = 0;
	poke(2000, 1, &t);
	ctl(0, KEVENT_CTL_MODIFY, 1, 2000);
	/* disarm p2 by an EXT MODIFY, then query it */
	poke_ext(0, &p2, KEVENT_CLOCK_BOOTTIME, 0, 0, 0, 1, 0);
	ctl_ext(0, KEVENT_CTL_MODIFY, 1, 0);
	ctl_ext(0, KEVENT_CTL_QUERY, 1, 0);		/* {0, 0} left, 1 h interval */
	/* a ONESHOT ABSTIME BOOTTIME timer on q1, freed at its delivery */
	poke_ext(240, &p3, KEVENT_CLOCK_BOOTTIME, KEVENT_TIMER_ABSTIME, 1, 0, 0, 0);
	ctl_ext(1, KEVENT_CTL_ADD, 1, 240);
	info(1, 0, 192, 0);
	get(1, 0, 4, 400);				/* p3 {1, 0} */
	ctl_ext(1, KEVENT_CTL_QUERY, 1, 240);		/* gone: D38 */
	poke(2000, 1, &u1);
	ctl(0, KEVENT_CTL_REMOVE, 1, 2000);
	info(0, 0, 192, 0);
	close_q(0);
	close_q(1);
	emit("rev3-timers");
}

static void seed_setabi(void)
{
	struct ent e[2];

	memset(e, 0, sizeof(e));
	e[0] = (struct ent){ .id0 = 1, .type = KEVENT_TIMER, .fl = KF_E_REQ_UNK, .ev = 1 };
	e[1] = (struct ent){ .id0 = 2, .type = KEVENT_TIMER, .fl = KF_E_REQ_HIGH | KF_E_ONESHOT };
	hdr_plain();
	open_q(0, 0, 0);
	open_q(1, 0, 0);
	setabi(0, 2, 0, 0, 0, 0, 0);		/* revision */
	setabi(0, 1, 2, 0, 0, 0, 0);		/* unknown flag */
	setabi(0, 1, 0, 1, 0, 0, 0);		/* reserved */
	setabi(0, 1, 1, 0, 17, 1, 0);		/* dirty tail */
	setabi(0, 1, 1, 0, 0, 0, KF_IOC_WRONG_DIR);
	setabi(0, 1, 1, 0, 0, 0, 0);		/* strict */
	poke(0, 2, e);
	ctl(0, KEVENT_CTL_ADD, 2, 0);		/* both refused */
	setabi(0, 1, 0, 0, 0, 0, 0);		/* -EBUSY after a CTL */
	poke(0, 2, e);
	ctl(1, KEVENT_CTL_ADD, 0, 0);		/* num 0 counts (O2) */
	setabi(1, 1, 1, 0, 0, 0, 0);
	ctl(1, KEVENT_CTL_ADD, 2, 0);		/* lenient: both registered */
	e[0].fl = 0;
	poke(200, 1, e);
	ctl(0, KEVENT_CTL_ADD, 1, 200);
	e[0].fl = KF_E_REQ_UNK;
	poke(200, 1, e);
	ctl(0, KEVENT_CTL_MODIFY, 1, 200);	/* strict MODIFY: -EINVAL */
	close_q(0);
	close_q(1);
	emit("setabi");
}

static void seed_caps(void)
{
	static const unsigned char caps[6] = { 3, 1, 1, 1, 1, 1 };
	struct ent e[4];

	memset(e, 0, sizeof(e));
	e[0] = (struct ent){ .id0 = 1, .type = KEVENT_TIMER, .ev = 1 };
	e[1] = (struct ent){ .id0 = 2, .type = KEVENT_TIMER, .ev = 1 };	/* TIMERS cap */
	e[2] = (struct ent){ .id0 = 3, .type = KEVENT_POLL, .ev = 1 };
	e[3] = (struct ent){ .id0 = 4, .type = KEVENT_INODE, .ev = 1 };	/* KEVENTS cap */
	hdr(TEST_TYPES, caps, 0);
	open_q(0, 0, 0);
	open_q(1, 0, 0);			/* QUEUES cap: -EMFILE */
	open_q(1, 1, 0);
	poke(0, 4, e);
	ctl(0, KEVENT_CTL_ADD, 4, 0);
	info(0, 0, 0, 0);
	get_park(0, 1, 1, INF, 1000);
	get_park(0, 1, 1, INF, 2000);		/* PARKED cap: -EAGAIN */
	ctl(1, KEVENT_CTL_ADD, 1, 0);		/* uid 0 pays: -ENOSPC */
	ctl_x(1, 1, KEVENT_CTL_ADD, 1, 0, 0, 0, 0);	/* uid 1 does not */
	close_q(0);
	open_q(2, 0, 0);			/* its waiter still holds it */
	waiter(KF_OP_PUT, 0);
	open_q(2, 0, 0);
	emit("caps");
}

static void seed_broken(void)
{
	hdr_plain();
	open_q(0, 0, KF_OPEN_RING);
	poke_seq(0, 2, 1, 0);
	poke_seq(80, 1, 3, KF_E_ONESHOT);
	ctl(0, KEVENT_CTL_ADD, 3, 0);
	brk(1, 5);
	brk(3, 9);
	fire(1, 0, 0);				/* stopped after BROKEN */
	get(0, 0, 8, 1000);
	info(0, 0, 0, 0);			/* the broken one stays (O6) */
	fire(2, 0, 1);
	brk(2, 1);				/* merge: BROKEN replaces the result */
	get(0, 0, 8, 1000);
	poke_seq(2000, 1, 1, KF_E_READY_MOD);
	ctl(0, KEVENT_CTL_MODIFY, 1, 2000);	/* revives it */
	fire(1, 0, 3);
	get(0, 0, 8, 1000);
	close_q(0);
	emit("broken");
}

/* 255 kevents on one id, fired and drained 17 times: the index wraps. */
static void seed_ring_wrap(void)
{
	unsigned int i;

	hdr_plain();
	open_q(0, 0, KF_OPEN_RING);
	poke_seq(0, 255, 0, 0);
	for (i = 0; i < 255; i++) {
		P.b[P.n - 255 * KF_ENTRY_LEN + i * KF_ENTRY_LEN] = 1;	/* id0 = 1 */
		P.b[P.n - 255 * KF_ENTRY_LEN + i * KF_ENTRY_LEN + 6] = (unsigned char)i;
	}
	ctl(0, KEVENT_CTL_ADD, 255, 0);
	for (i = 0; i < 17; i++) {
		fire(1, 0, i);
		get(0, 0, 4095, 20000);
	}
	close_q(0);
	emit("ring-wrap");
}

/* 4095 kevents: the queue's limit (A4). */
static void seed_full_queue(void)
{
	unsigned int i;

	hdr_plain();
	open_q(0, 0, 0);
	for (i = 0; i < 16; i++)
		poke_seq(i * 255 * UKSZ, 255, i, 0);
	poke_seq(16 * 255 * UKSZ, 15, 0, KF_E_ONESHOT);
	ctl(0, KEVENT_CTL_ADD, 4095, 0);
	ctl(0, KEVENT_CTL_ADD, 1, 0);		/* 4095 + 1 >= 4096 */
	fire(3, 0, 0);
	get(0, 0, 4095, 0);
	ctl(0, KEVENT_CTL_REMOVE, 4095, 0);	/* more than registered: -EINVAL */
	ctl(0, KEVENT_CTL_REMOVE, 4000, 0);
	info(0, 0, 0, 0);
	close_q(0);
	emit("full-queue");
}

static void seed_multi_queue(void)
{
	hdr_plain();
	open_q(0, 0, KF_OPEN_RING | KF_OPEN_NOTIFY);
	open_q(1, 1, KF_OPEN_RING);
	open_q(3, 3, KF_OPEN_NOTIFY);
	poke_seq(0, 2, 1, 0);
	ctl(0, KEVENT_CTL_ADD, 2, 0);
	ctl_x(1, 2, KEVENT_CTL_ADD, 2, 0, 0, 0, 0);
	ctl(3, KEVENT_CTL_ADD, 2, 0);
	fire(1, 0, 5);				/* one id, three queues */
	close_q(1);
	fire(2, 0, 6);
	get(0, 0, 9, 500);
	get(3, 0, 9, 500);
	info(3, 0, 0, 0);
	emit("multi-queue");			/* the end releases the rest */
}

static void seed_raw_ioctl(void)
{
	unsigned char b[64];

	memset(b, 0, sizeof(b));
	hdr_plain();
	open_q(0, 0, 0);
	ioctl_bytes(0, KEVENT_IOC_RING_SHM, 0, NULL);	/* the daemon's: -ENOTTY */
	ioctl_bytes(0, _IOW(KEVENT_IOC_MAGIC, 7, struct kevent_ctl_arg), 16, b);
	ioctl_bytes(0, _IO(KEVENT_IOC_MAGIC, KEVENT_IOC_NR_CTL), 0, NULL);
	ioctl_bytes(0, _IOWR(KEVENT_IOC_MAGIC, KEVENT_IOC_NR_GET_EVENTS,
			     struct kevent_get_events_arg), 32, b);
	b[4] = 1;				/* num 1, events 0 */
	ioctl_bytes(0, KEVENT_IOC_CTL, 16, b);
	b[4] = 0;
	b[12] = 0x80;				/* a kernel address */
	b[4] = 2;
	ioctl_bytes(0, KEVENT_IOC_CTL, 16, b);
	memset(b, 0, sizeof(b));
	b[4] = 1;				/* max_nr 1 */
	ioctl_bytes(0, KEVENT_IOC_GET_EVENTS, 32, b);
	ioctl_bytes(0, KEVENT_IOC_GET_EVENTS, 31, b);	/* arg_len != size */
	b[0] = 1;	/* a revision-1 seed, whatever the header's highest */
	ioctl_bytes(0, KEVENT_IOC_SET_ABI, 16, b);
	ioctl_bytes(0, KEVENT_IOC_INFO, 0, NULL);
	close_q(0);
	emit("raw-ioctl");
}

static void seed_path_limits(void)
{
	hdr(TEST_TYPES, NULL, 0x21);		/* max_ctl_num 1, max_get_nr 2 */
	open_q(0, 0, KF_OPEN_RING);
	poke_seq(0, 3, 1, 0);
	ctl(0, KEVENT_CTL_ADD, 3, 0);		/* -E2BIG (B4) */
	ctl(0, KEVENT_CTL_ADD, 1, 0);
	ctl(0, KEVENT_CTL_ADD, 1, 40);
	fire(1, 0, 0);
	fire(2, 0, 0);
	get(0, 3, 3, 1000);			/* clamped to 2 */
	info(0, 0, 0, 0);
	close_q(0);
	emit("path-limits");
}

static void seed_modify_ready(void)
{
	hdr_plain();
	open_q(0, 0, KF_OPEN_RING);
	poke_seq(0, 1, 1, KF_E_ONESHOT);
	ctl(0, KEVENT_CTL_ADD, 1, 0);
	fire(1, 0, 4);
	poke_seq(100, 1, 1, KF_E_READY_MOD);	/* ready: merges, ONESHOT cleared */
	ctl(0, KEVENT_CTL_MODIFY, 1, 100);
	fire(1, 0, 5);
	get(0, 0, 4, 1000);
	poke_seq(100, 1, 1, KF_E_READY_MOD | KF_E_ONESHOT);
	ctl(0, KEVENT_CTL_MODIFY, 1, 100);	/* not ready: a new ring slot */
	raw(1000, 40, 0xcc);
	get(0, 0, 4, 1000);
	info(0, 0, 0, 0);
	close_q(0);
	emit("modify-ready");
}

static void exec_deferred(void)
{
	b1(KF_OP_EXEC);
}

/* Plans that go stale before phase 2: kdisp_execute repeats the checks. */
static void seed_deferred(void)
{
	unsigned int i;

	hdr_plain();
	open_q(0, 0, KF_OPEN_RING);
	setabi(0, 1, 1, 0, 0, 0, KF_IOC_DEFER);
	ctl(0, KEVENT_CTL_ADD, 0, 0);
	exec_deferred();			/* SET_ABI after a CTL: -EBUSY */
	for (i = 0; i < 16; i++)
		poke_seq(i * 255 * UKSZ, 255, i, 0);
	ctl(0, KEVENT_CTL_ADD, 4093, 0);
	ctl_x(0, 0, KEVENT_CTL_ADD, 2, 0, 0, 0, KF_IOC_DEFER);	/* 4093 + 2: fine now */
	ctl(0, KEVENT_CTL_ADD, 1, 0);
	exec_deferred();			/* 4094 + 2 >= 4096: -EINVAL */
	exec_deferred();			/* nothing left: ignored */
	ctl_x(0, 0, KEVENT_CTL_REMOVE, 3, 0, 0, 0, KF_IOC_DEFER);
	ctl(0, KEVENT_CTL_REMOVE, 4092, 40);
	exec_deferred();			/* 3 > 2 left: -EINVAL */
	fire(0, 0, 1);
	get_x(0, 0, 2, 2, INF, 8000, 0, 0, 0, 0, KF_IOC_DEFER, KF_PARK_WR);
	fire(254, 0, 2);
	exec_deferred();			/* min_nr met meanwhile: no park */
	get_x(0, 0, 1, 1, INF, 8000, 0, 0, 0, 0, KF_IOC_DEFER, KF_PARK_WR);
	close_q(0);
	exec_deferred();			/* released: dropped */
	emit("deferred");
}

static void uid_op(unsigned int uid, unsigned int limit, unsigned int act)
{
	b1(KF_OP_UID);
	b1(uid);
	b1(limit);
	b1(act);
}

/* A racing origin and the transport's own per-uid charges. */
static void seed_race_and_charges(void)
{
	static const unsigned char caps[6] = { 2, 0, 0, 0, 1, 0 };

	hdr(TEST_TYPES, caps, 0);
	open_q(0, 0, KF_OPEN_RING);
	poke_seq(0, 2, 1, KF_E_ONESHOT);
	ctl(0, KEVENT_CTL_ADD, 2, 0);
	fire(1, 0, 1);
	fire_stopped(1, 2);			/* stopped in the core: ignored */
	fire_stopped(2, 3);			/* ONESHOT: stop */
	get(0, 0, 4, 1000);
	uid_op(1, KEVENT_LIMIT_KEVENTS, 0);
	uid_op(1, KEVENT_LIMIT_KEVENTS, 0);
	uid_op(1, KEVENT_LIMIT_KEVENTS, 0);	/* cap 2: -ENOSPC */
	ctl_x(0, 1, KEVENT_CTL_ADD, 1, 0, 0, 0, 0);	/* the ADD pays too: -ENOSPC */
	uid_op(1, KEVENT_LIMIT_KEVENTS, 1);
	ctl_x(0, 1, KEVENT_CTL_ADD, 1, 0, 0, 0, 0);
	uid_op(2, KEVENT_LIMIT_NR, 0);		/* -EINVAL */
	uid_op(3, 0, 2);
	uid_op(3, 0, 2);			/* running cap 1: -EAGAIN */
	uid_op(3, 0, 3);
	uid_op(3, 0, 3);			/* not entered: ignored */
	info(0, 1, 0, 0);
	emit("race-and-charges");
}

/* The racing origin: fires from inside attach, modify and detach. */
static void seed_racing_origin(void)
{
	struct ent e[5];

	memset(e, 0, sizeof(e));
	e[0] = (struct ent){ .id0 = 1, .type = KEVENT_NAIO, .ev = KF_RO_FIRE_ATTACH };
	e[1] = (struct ent){ .id0 = 2, .type = KEVENT_AIO, .ev = KF_RO_FIRE_ATTACH,
			     .fl = KF_E_READY_ADD };	/* fired, then answered at ADD */
	e[2] = (struct ent){ .id0 = 3, .type = KEVENT_NAIO, .ev = KF_RO_FIRE_ATTACH,
			     .fl = KF_E_FAIL_ATT };
	e[3] = (struct ent){ .id0 = 4, .type = KEVENT_AIO, .ev = KF_RO_FIRE_DETACH };
	e[4] = (struct ent){ .id0 = 5, .type = KEVENT_NAIO, .fl = KF_E_ONESHOT };
	hdr(ALL_TYPES, NULL, 0);
	open_q(0, 0, KF_OPEN_RING | KF_OPEN_NOTIFY);
	poke(0, 5, e);
	ctl(0, KEVENT_CTL_ADD, 5, 0);
	info(0, 0, 0, 0);
	e[0] = (struct ent){ .id0 = 5, .type = KEVENT_NAIO, .ev = KF_RO_FIRE_MODIFY,
			     .fl = KF_E_READY_MOD | KF_E_ONESHOT };
	poke(1000, 1, e);
	ctl(0, KEVENT_CTL_MODIFY, 1, 1000);	/* fired inside modify, then ready: merge */
	get(0, 0, 8, 2000);			/* the ONESHOT one goes */
	e[0] = (struct ent){ .id0 = 4 };
	poke(1000, 1, e);
	ctl(0, KEVENT_CTL_REMOVE, 1, 1000);	/* fired inside detach */
	get(0, 0, 8, 2000);
	poke(0, 2, e + 3);
	e[3].ev = KF_RO_FIRE_DETACH;
	poke(0, 1, e + 3);
	ctl(0, KEVENT_CTL_ADD, 1, 0);
	close_q(0);				/* fired inside release */
	emit("racing-origin");
}

/* Loose mode: the worker, waits in place, allocation failures (loose.c). */
static void fail_alloc(unsigned int n)
{
	uid_op(n, 0, 0);			/* loose mode: the n-th allocation fails */
}

static void seed_loose(unsigned int variant)
{
	char name[32];
	unsigned int i;

	hdr(0x80 | TEST_TYPES, NULL, 0);
	fail_alloc(variant);			/* during open */
	open_q(0, 0, KF_OPEN_RING | KF_OPEN_NOTIFY);
	open_q(1, 1, KF_OPEN_RING);
	for (i = 0; i < 2; i++)
		poke_seq(i * 255 * UKSZ, 255, i * 100, i ? KF_E_ONESHOT : 0);
	fail_alloc(variant + 1);		/* during the ADD: D19 */
	ctl(0, KEVENT_CTL_ADD, 510, 0);
	fail_alloc(variant);
	ctl(1, KEVENT_CTL_ADD, 100, 0);
	get_park(0, 300, 400, INF, 30000);	/* parks: waits for the worker */
	get_park(1, 1, 1, INF, 50000);
	for (i = 0; i < 255; i++)
		fire(i, 0, i);			/* the worker serves them */
	fail_alloc(1);
	get(0, 0, 200, 60000);			/* > 64: the buffer is allocated */
	get_x(0, 0, 5, 8, 1000000, 60000, 0, 0, 0, 0, 0, 0);	/* waits in place */
	waiter(KF_OP_INTR, 1);
	fail_alloc(variant);
	get_park(1, 2, 2, INF, 50000);
	close_q(1);
	run();
	emit((snprintf(name, sizeof(name), "loose-%u", variant), name));
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	outdir = argv[1];
	seed_info();
	seed_add_fire_get();
	seed_add_answers();
	seed_remove_modify();
	seed_ctl_whole_call();
	seed_ctl_faults();
	seed_get_basic();
	seed_get_errors();
	seed_get_faults();
	seed_waiters();
	seed_setabi();
	seed_caps();
	seed_broken();
	seed_ring_wrap();
	seed_full_queue();
	seed_multi_queue();
	seed_raw_ioctl();
	seed_path_limits();
	seed_modify_ready();
	seed_deferred();
	seed_race_and_charges();
	seed_racing_origin();
	seed_rev2();
	seed_rev2_calls();
	seed_rev2_ring();
	seed_inode();
	seed_rev3();
	seed_rev3_timers();
	seed_rev4();
	seed_rev4_inode();
	seed_rev4_data();
	seed_rev4_fdcheck();
	seed_rev4_fd_replaced();
	seed_rev4_fd_closed();
	seed_loose(1);
	seed_loose(2);
	seed_loose(3);
	seed_loose(5);
	return 0;
}
