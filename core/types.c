// SPDX-License-Identifier: GPL-2.0
/*
 * The kevent types: one row each (ktype.h).  Adding a type is its file,
 * which defines its descriptor, and its row here; the queue code reads
 * only the descriptor.
 */
#include "internal.h"

/* D67: a fd kevent's count is its origin's, read at delivery; 0 if it keeps none. */
static void kfd_data(struct kitem *k, struct ukevent *out)
{
	out->ret_data[1] = k->ops->count ? k->ops->count(k, out->ret_data[0]) : 0;
}

static struct kcount_pin *kfd_data_pin(struct kitem *k)
{
	return k->ops->count_pin ? k->ops->count_pin(k) : NULL;
}

/* D69: the origin tells whether the caller's fd still names k's file. */
static int kfd_fd_check(struct kitem *k, const struct kcaller *caller)
{
	return k->ops->fd_check ? k->ops->fd_check(k, caller) : 0;
}

/*
 * D18, D43, D67, D69: a kevent on a file descriptor: the fd-kevent cap,
 * LEVEL, a count (read later for a parked call, O11), the check of its fd
 * at delivery.
 */
#define KT_FD	.limit = KEVENT_LIMIT_FD_KEVENTS, .level = true, .data = kfd_data, \
		.data_pin = kfd_data_pin, .fd_check = kfd_fd_check

static const struct ktype ksocket_type = { .name = "socket", KT_FD, .always_queue = true };
static const struct ktype kpoll_type = { .name = "poll", KT_FD, .always_queue = true };
/*
 * D68: on a queue with the inode notes, what an inode kevent reports adds
 * up until it is delivered (the bits since the last delivery); D36's
 * -EOVERFLOW in ret_data[1] stays until then too.  Below: A9, the latest.
 */
static bool inode_merge(const struct kitem *k, struct korigin_result *res)
{
	if (!kq_rule(k->q, KR_INODE_NOTES))
		return false;
	res->ret_data[0] |= k->rdata[0];
	if (!res->ret_data[1])
		res->ret_data[1] = k->rdata[1];
	return true;
}

static const struct ktype kinode_type = {
	.name = "inode", .limit = KEVENT_LIMIT_MARKS, .always_queue = true,
	.merge = inode_merge,
};
static const struct ktype ktimer_type = {
	.name = "timer", .limit = KEVENT_LIMIT_TIMERS, .always_queue = true,
};
/* A3: NAIO, AIO and take24/take26's 6 and 7: no origin of ours serves them */
static const struct ktype kplain_type = { .name = "unserved", .limit = -1, .always_queue = true };

static const struct ktype *const ktypes[KEVENT_MAX] = {
	[KEVENT_SOCKET] = &ksocket_type,
	[KEVENT_INODE] = &kinode_type,
	[KEVENT_TIMER] = &ktimer_type,
	[KEVENT_POLL] = &kpoll_type,
	[KEVENT_NAIO] = &kplain_type,
	[KEVENT_AIO] = &kplain_type,
	[6] = &kplain_type,
	[7] = &kplain_type,
	[KEVENT_POSIX_TIMER] = &kptimer_type,	/* ptimer.c */
	[KEVENT_USER] = &kuser_type,		/* user.c */
};

const struct ktype *ktype_of(__u32 type)
{
	return type < KEVENT_MAX ? ktypes[type] : NULL;
}

bool ktypes_deliver(krules rules)
{
	unsigned int i;

	for (i = 0; i < KEVENT_MAX; i++)
		if (ktypes[i]->deliver && (rules & ktypes[i]->needs) == ktypes[i]->needs)
			return true;
	return false;
}
