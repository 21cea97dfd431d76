/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What harness.c (exact mode) and loose.c (loose mode) share: reading a
 * program (decode.c, the one reader of prog.h's operations) and failing.
 */
#ifndef KEVENT_FUZZ_KFUZZ_H
#define KEVENT_FUZZ_KFUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kcore.h"
#include "prog.h"

/* Header byte 0 bit 7: loose mode (loose.c). */
#define KF_HDR_LOOSE	0x80

struct kf_cur {
	const uint8_t *p;
	size_t left;
};

bool kf_bytes(struct kf_cur *c, void *dst, size_t n);
bool kf_u8(struct kf_cur *c, unsigned int *v);
bool kf_u16(struct kf_cur *c, unsigned int *v);
bool kf_u32(struct kf_cur *c, __u32 *v);
bool kf_u64(struct kf_cur *c, __u64 *v);

/* An arena offset of prog.h as a user address (base: arena byte 0). */
__u64 kf_uaddr(__u64 base, __u32 off);

/* An ioctl operation (CTL, GET, INFO, SETABI, IOCTL), decoded. */
struct kf_ioc {
	unsigned int slot, uid, cmd;
	size_t arg_len;			/* what the caller says it passed */
	bool arg_null, park, defer;
};

/* Decodes op's fields; the argument bytes go to arg (0x3fff + 2 bytes). */
bool kf_decode_ioc(struct kf_cur *c, unsigned int op, struct kf_ioc *io,
		   unsigned char *arg, __u64 base);

/* POKE or RAW: calls put() for the bytes to write at each arena offset. */
typedef void (*kf_put_fn)(void *ctx, size_t off, const void *src, size_t len);
void kf_decode_poke(struct kf_cur *c, unsigned int op, kf_put_fn put, void *ctx);

void kf_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* The step and opcode kf_fail() names (KF_OP_NR: the end of the program). */
void kf_at(unsigned int step, unsigned int op);

void kf_loose_run(const uint8_t *data, size_t size, unsigned char *arena);

#endif /* KEVENT_FUZZ_KFUZZ_H */
