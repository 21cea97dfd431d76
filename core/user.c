// SPDX-License-Identifier: GPL-2.0
/*
 * KEVENT_USER, revision 3 (D62): a kevent with no source (kqueue's
 * EVFILT_USER).  Only the caller makes it ready, with CTL_READY, whose
 * event word is the trigger's value; triggers merge while it is ready and
 * delivery clears them (the next trigger starts a new result).
 */
#include "internal.h"

static int user_attach(struct kitem *k, const struct kcaller *caller, struct korigin_result *res)
{
	return 0;	/* nothing to watch: registered, never ready at ADD */
}

static void user_detach(struct kitem *k)
{
}

static const struct korigin_ops kuser_ops = {
	.name = "user",
	.attach = user_attach,
	.detach = user_detach,
};

/*
 * D62: a trigger of a user event; one already ready merges (q->lock held),
 * as does one a disarmed DISPATCH kevent holds (D65).
 */
static void user_trigger_locked(struct kitem *k, __u32 value, struct enqueue_effects *fx)
{
	struct korigin_result res = { 0, { value, 1 } };

	if (!(k->flags & (KITEM_READY | KITEM_HELD))) {	/* D65: held merges too */
		enqueue_locked(k->q, k, &res, fx);
		return;
	}
	k->rdata[0] |= value;
	if (k->rdata[1] != 0xffffffffu)
		k->rdata[1]++;
}

const struct ktype kuser_type = {
	.name = "user",
	.needs = KR_BIT(KR_USER),
	.limit = -1,		/* D62: no source, no resource but the kevent */
	.always_queue = true,
	.feature = KEVENT_FEAT_USER,
	.ops = &kuser_ops,
	.ready = user_trigger_locked,
};
