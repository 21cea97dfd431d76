/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rules a revision brings, by name.  SET_ABI turns a revision into its
 * set of rules once (kr_rules_of), and the code asks for a rule by name
 * (kq_rule in internal.h), never for a revision: a new revision is one new
 * row in rules.c, not a hunt for comparisons.  Each rule is named after
 * the docs/abi.md decision that defines it.
 */
#ifndef KEVENT_CORE_RULES_H
#define KEVENT_CORE_RULES_H

#include <stdbool.h>

enum krule {
	KR_RING,		/* D40, D53-D55: RING_INIT, WAIT, COMMIT exist */
	KR_ALWAYS_QUEUE,	/* D42: KEVENT_REQ_ALWAYS_QUEUE */
	KR_LEVEL,		/* D43: KEVENT_REQ_LEVEL */
	KR_EINTR,		/* D47: the SET_ABI flag KEVENT_ABI_EINTR */
	KR_TIMESPEC,		/* D48: GET_EVENTS' timeout_ts */
	KR_READY,		/* D49, D50: KEVENT_CTL_READY */
	KR_ENOSYS,		/* D51: unknown types fail with ENOSYS */
	KR_POSIX_TIMER,		/* D58, D59: type 8 */
	KR_EXT,			/* D60: 80-byte entries (KEVENT_IOC_CTL_EXT) */
	KR_QUERY,		/* D61: KEVENT_CTL_QUERY */
	KR_USER,		/* D62: type 9 */
	KR_TYPE_KEY,		/* D63: the type is part of the search key */
	KR_DISPATCH,		/* D65: KEVENT_REQ_DISPATCH */
	KR_DATA,		/* D67: POLL/SOCKET ret_data[1] is the count at delivery */
	KR_INODE_NOTES,		/* D68: KEVENT_INODE's WRITE .. DELETE, ORed while ready */
	KR_FD_CHECK,		/* D69: a POLL/SOCKET id must still name its file at delivery */
	KR_NR
};

/* A set of rules: bit r is rule r. */
typedef unsigned int krules;

#define KR_BIT(r)	(1u << (r))

/* A12: SET_ABI accepts the revisions KCORE_REV_LOWEST .. KCORE_REV_HIGHEST. */
bool kr_served(unsigned int revision);

/* The rules of a revision this core serves (0 for any other). */
krules kr_rules_of(unsigned int revision);

#endif /* KEVENT_CORE_RULES_H */
