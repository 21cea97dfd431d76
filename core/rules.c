// SPDX-License-Identifier: GPL-2.0
/*
 * Revision -> rules: the only place in core/ that knows what a revision
 * number means (A12, D40, D64, D66).  A revision is its row; each row repeats
 * the rules of the rows below it, because a revision only ever adds.
 */
#include "internal.h"

/* D40-D57 */
#define KR_REV2	(KR_BIT(KR_RING) | KR_BIT(KR_ALWAYS_QUEUE) | KR_BIT(KR_LEVEL) | \
		 KR_BIT(KR_EINTR) | KR_BIT(KR_TIMESPEC) | KR_BIT(KR_READY) | \
		 KR_BIT(KR_ENOSYS))
/* D58-D64 */
#define KR_REV3	(KR_BIT(KR_POSIX_TIMER) | KR_BIT(KR_EXT) | KR_BIT(KR_QUERY) | \
		 KR_BIT(KR_USER) | KR_BIT(KR_TYPE_KEY))
/* D65-D69 */
#define KR_REV4	(KR_BIT(KR_DISPATCH) | KR_BIT(KR_DATA) | KR_BIT(KR_INODE_NOTES) | \
		 KR_BIT(KR_FD_CHECK))

static const krules kr_rows[KCORE_REV_HIGHEST + 1] = {
	[1] = 0,			/* take13, exactly (D40) */
	[2] = KR_REV2,
	[3] = KR_REV2 | KR_REV3,
	[4] = KR_REV2 | KR_REV3 | KR_REV4,
};

bool kr_served(unsigned int revision)
{
	return revision >= KCORE_REV_LOWEST && revision <= KCORE_REV_HIGHEST;
}

krules kr_rules_of(unsigned int revision)
{
	return kr_served(revision) ? kr_rows[revision] : 0;
}
