// SPDX-License-Identifier: GPL-2.0
/*
 * kevent.ko: the one place a revision number means something.  Each row is
 * the whole set of rules of a revision (docs/abi.md D40, D64: a revision
 * is the one below it plus what its decisions add), written out so a row
 * reads as what a queue of that revision does.
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/kevent.h>

#include "kevent_priv.h"

#define KR_REV2_RULES	(KR_RING | KR_ALWAYS_QUEUE | KR_LEVEL | KR_EINTR | \
			 KR_TIMESPEC | KR_READY | KR_ENOSYS | KR_POLLRDHUP)
#define KR_REV3_RULES	(KR_REV2_RULES | KR_POSIX_TIMER | KR_EXT | KR_QUERY | \
			 KR_USER | KR_TYPE_KEY)
#define KR_REV4_RULES	(KR_REV3_RULES | KR_DISPATCH | KR_DATA | KR_INODE_NOTES | \
			 KR_FD_CHECK)

static const u32 kevent_revision_rules[KQ_REV_HIGHEST + 1] = {
	[1] = 0,		/* take13 as 2006 programs know it (D1-D39) */
	[2] = KR_REV2_RULES,
	[3] = KR_REV3_RULES,
	[4] = KR_REV4_RULES,
};

int kevent_rules_of(u32 revision, u32 *rules)
{
	if (revision < KEVENT_ABI_REVISION_LOWEST || revision > KQ_REV_HIGHEST)
		return -EINVAL;
	*rules = kevent_revision_rules[revision];
	return 0;
}
