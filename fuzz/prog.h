/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The binary format of a fuzz program (fuzz/README.md explains it with
 * examples).  One input = an 8-byte header, then operations until the input
 * ends; an operation cut short by the end of the input is not run.
 * Integers are little-endian.  The harness (harness.c) interprets it and the
 * seed generator (gen-corpus.c) writes it; both use only this file, so this
 * is the one place the format is defined.
 */
#ifndef KEVENT_FUZZ_PROG_H
#define KEVENT_FUZZ_PROG_H

#include <linux/kevent.h>

/*
 * Header: bytes 0..7.  Origins: bit t set gives type t an origin: the
 * core's test origin for types 0..3, the harness's racing origin (below)
 * for types 4 and 5 (NAIO, AIO), which the ABI leaves without one.
 */
#define KF_HDR_ORIGINS		0	/* bit t: type t has an origin */
#define KF_HDR_CAP_KEVENTS	1	/* per-uid caps, 0: none */
#define KF_HDR_CAP_TIMERS	2
#define KF_HDR_CAP_FD		3
#define KF_HDR_CAP_MARKS	4
#define KF_HDR_CAP_PARKED	5	/* and RUNNING */
#define KF_HDR_CAP_QUEUES	6
#define KF_HDR_PATH		7	/* low nibble: max_ctl_num, high: max_get_nr,
					 * each an index into kf_path_max[] */
#define KF_HDR_LEN		8

/* kcore_config.max_ctl_num / max_get_nr; 0 and >= 4096 mean 4095. */
static const unsigned int kf_path_max[16] = {
	0, 1, 2, 3, 4, 8, 16, 40, 64, 255, 1000, 3276, 4094, 4095, 4096, 70000,
};

/* Limits of the harness. */
#define KF_NQ		4	/* queue slots */
#define KF_NW		8	/* parked-waiter handles */
#define KF_NUID		4	/* callers' uid = byte % KF_NUID */
#define KF_ARENA	(KEVENT_MAX_EVENTS * 40 + 8192)	/* simulated user memory */
#define KF_MAX_STEPS	512	/* operations per input, the rest is ignored */

/*
 * User addresses in operations are 32-bit arena offsets: off < KF_ARENA is
 * that byte of the arena; other values are outside it (they fault) except
 * these, which name addresses the checks must treat specially.
 */
#define KF_ADDR_NULL	0xffffffffu	/* user address 0 */
#define KF_ADDR_BEFORE	0xfffffffeu	/* 40 bytes before the arena */
#define KF_ADDR_WRAP	0xfffffffdu	/* ~0ULL - 7: wraps around */

/*
 * Opcodes (byte % KF_OP_NR); the fields follow, sizes in bytes.
 * q = queue slot byte % KF_NQ, w = waiter handle byte % KF_NW.
 *
 * OPEN     q:1 uid:1 flags:1      flags bit0 ring, bit1 notify callback,
 *                                 bits2-3 n: the n-th allocation fails
 * CLOSE    q:1                    kqueue_release
 * POKE     off:4 n:1 n*entry:12   compact ukevents into the arena (below)
 * RAW      off:4 len:2 bytes:len  raw bytes into the arena
 * FAULT    which:1 lo:4 hi:4      bit0: 0 read window, 1 write window;
 *                                 arena offsets [lo, hi); lo >= hi: none;
 *                                 bit1 (write): a late window, in force only
 *                                 after (which >> 2) more writes: memory
 *                                 unmapped between the probe and the copy
 * CTL      q:1 uid:1 cmd:4 num:4 addr:4 sz:2 tail:1 ioc:1
 * GET      q:1 uid:1 min:4 max:4 timeout:8 addr:4 flags:4 ioc_flags:4
 *          sz:2 tail:1 ioc:1 park:1       park bit0: give a kwait_req
 * INFO     q:1 uid:1 sz:2 ioc:1
 * SETABI   q:1 uid:1 revision:4 flags:4 reserved:8 sz:2 tail:1 ioc:1
 * IOCTL    q:1 uid:1 cmd:4 len:2 bytes:len   any number, any bytes
 * FIRE     id0:1 id1:1 data:4     ktest_fire(id, data)
 * BREAK    id0:1 id1:1 err:1      ktest_break(id, -err)
 * CLOCK    delta_us:4             advance the clock, kcore_run_deadlines
 * RUN                             kcore_run_deadlines
 * INTR     w:1                    kwaiter_interrupt
 * PUT      w:1                    kwaiter_put (the transport's reference)
 * EXEC                            kdisp_execute the deferred plan (ioc bit5)
 * FIRES    id0:1 id1:1 data:4     ktest_fire_stopped: a racing origin that
 *                                 fires kevents the core told to stop; on a
 *                                 device (lockstep.c): the fd number of
 *                                 source id0 gets a new file (D69), with
 *                                 an odd data its old file a byte, with
 *                                 data 4 mod 8 it is closed
 * UID      uid:1 limit:1 act:1    act % 4: kcore_uid_charge, _uncharge,
 *                                 kcore_running_enter, _exit (the last two
 *                                 ignore limit; an uncharge or exit without
 *                                 a charge or enter of ours is ignored)
 *
 * sz: _IOC_SIZE of the number; 0 means the struct's VER0 size.
 * tail: when sz is larger than the struct, the last byte of the argument
 *       (0: the tail stays zero).
 * ioc: bit0 wrong direction, bit1 wrong magic, bit2 arg_len = sz + 1,
 *      bit3 arg = NULL, bit4 _IOC_NR + 16 (unknown number),
 *      bit5 defer: plan now, execute at the next EXEC (as a transport that
 *      fetches user memory between the phases); a newer deferred plan, or
 *      the release of its queue, drops the older one.
 */
enum kf_op {
	KF_OP_OPEN,
	KF_OP_CLOSE,
	KF_OP_POKE,
	KF_OP_RAW,
	KF_OP_FAULT,
	KF_OP_CTL,
	KF_OP_GET,
	KF_OP_INFO,
	KF_OP_SETABI,
	KF_OP_IOCTL,
	KF_OP_FIRE,
	KF_OP_BREAK,
	KF_OP_CLOCK,
	KF_OP_RUN,
	KF_OP_INTR,
	KF_OP_PUT,
	KF_OP_EXEC,
	KF_OP_FIRES,
	KF_OP_UID,
	KF_OP_NR
};

#define KF_OPEN_RING	0x1
#define KF_OPEN_NOTIFY	0x2
#define KF_OPEN_ENOMEM_SHIFT	2	/* (flags >> 2) & 3 */

#define KF_IOC_WRONG_DIR	0x01
#define KF_IOC_WRONG_MAGIC	0x02
#define KF_IOC_LEN_PLUS1	0x04
#define KF_IOC_ARG_NULL		0x08
#define KF_IOC_UNKNOWN_NR	0x10
#define KF_IOC_DEFER		0x20

#define KF_PARK_WR	0x1

/*
 * A compact entry (12 bytes) becomes one struct ukevent:
 *   [0] id.raw[0]   [1] id.raw[1]   [2] type
 *   [3] flags: bit0 KEVENT_REQ_ONESHOT, bit1 req_flags |= 0x100 (unknown),
 *       bit2 KTEST_READY_AT_ADD, bit3 KTEST_FAIL_ATTACH,
 *       bit4 KTEST_READY_AT_MODIFY, bit5 KTEST_FAIL_MODIFY,
 *       bit6 req_flags |= 0x80000000, bit7 fill ret_flags/ret_data with [8..11]
 *   [4..5] event bits 0..15   [6] user[0]   [7] user[1]
 *   [8..11] the garbage for ret_flags and ret_data[0..1] (bit7); without
 *       bit7, [8] bit0 is req_flags |= KEVENT_REQ_DISPATCH (revision 4),
 *       bit1 event |= KTEST_STALE_FD (D69: its fd is closed at delivery)
 */
/*
 * The racing origin fires only from inside the core's calls into it, as a
 * real origin's reactor thread can between two instructions of attach(),
 * modify() or detach(); its kevents obey the KTEST_* bits of the test
 * origin for the result of attach() and modify().  Event bits:
 */
#define KF_RO_FIRE_ATTACH	0x0100u	/* korigin_fire() inside attach() */
#define KF_RO_FIRE_MODIFY	0x0200u	/* ... inside modify() */
#define KF_RO_FIRE_DETACH	0x0400u	/* ... inside detach() */
#define KF_RO_TYPES		0x30u	/* header origin bits it serves */

#define KF_ENTRY_LEN	12
#define KF_E_ONESHOT	0x01
#define KF_E_REQ_UNK	0x02
#define KF_E_READY_ADD	0x04
#define KF_E_FAIL_ATT	0x08
#define KF_E_READY_MOD	0x10
#define KF_E_FAIL_MOD	0x20
#define KF_E_REQ_HIGH	0x40
#define KF_E_GARBAGE	0x80
#define KF_E8_DISPATCH	0x01	/* in [8], without KF_E_GARBAGE */
#define KF_E8_STALE_FD	0x02	/* in [8], without KF_E_GARBAGE: KTEST_STALE_FD (D69) */

#endif /* KEVENT_FUZZ_PROG_H */
