/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rules a queue follows, one bit each, named after the docs/abi.md
 * decisions that define them.  SET_ABI turns the revision into a set of
 * rules once (kevent_rules_of()); everything else tests a rule by name, so
 * a later revision is a new row of the table in kevent_rules.c, not a new
 * comparison wherever its rules apply.  The names follow core/'s table.
 */
#ifndef KEVENT_KMOD_RULES_H
#define KEVENT_KMOD_RULES_H

#include <linux/bits.h>
#include <linux/types.h>

/* Revision 2 (D40-D57) */
#define KR_RING		BIT(0)	/* D40, D41, D53-D55: RING_INIT, WAIT, COMMIT exist */
#define KR_ALWAYS_QUEUE	BIT(1)	/* D42: KEVENT_REQ_ALWAYS_QUEUE */
#define KR_LEVEL	BIT(2)	/* D43: KEVENT_REQ_LEVEL, re-checked at each dequeue */
#define KR_EINTR	BIT(3)	/* D47: SET_ABI may ask for KEVENT_ABI_EINTR */
#define KR_TIMESPEC	BIT(4)	/* D48: GET_EVENTS' KEVENT_GET_TIMESPEC */
#define KR_READY	BIT(5)	/* D49, D50: KEVENT_CTL_READY */
#define KR_ENOSYS	BIT(6)	/* D51: an unknown type fails its entry -ENOSYS */
#define KR_POLLRDHUP	BIT(7)	/* D52: POLL and SOCKET report POLLRDHUP */
/* Revision 3 (D58-D64) */
#define KR_POSIX_TIMER	BIT(8)	/* D58, D59, D61: KEVENT_POSIX_TIMER */
#define KR_EXT		BIT(9)	/* D60: KEVENT_IOC_CTL_EXT, 80-byte entries */
#define KR_QUERY	BIT(10)	/* D61: KEVENT_CTL_QUERY */
#define KR_USER		BIT(11)	/* D62: KEVENT_USER */
#define KR_TYPE_KEY	BIT(12)	/* D63: the type is part of the search key */
/* Revision 4 (D65-D69) */
#define KR_DISPATCH	BIT(13)	/* D65: KEVENT_REQ_DISPATCH, disarmed once delivered */
#define KR_DATA		BIT(14)	/* D67: POLL/SOCKET ret_data[1] is the count at delivery */
#define KR_INODE_NOTES	BIT(15)	/* D68: KEVENT_INODE's WRITE .. DELETE, ORed while ready */
#define KR_FD_CHECK	BIT(16)	/* D69: a POLL/SOCKET id must still name its file at delivery */

/* A12: the rules of a revision served, or -EINVAL for any other. */
int kevent_rules_of(u32 revision, u32 *rules);

#endif /* KEVENT_KMOD_RULES_H */
