// SPDX-License-Identifier: GPL-2.0
/* Decoding of ioctls and ukevents for --trace. */
#include <stdio.h>
#include <string.h>

#include "kc-log.h"
#include "kc-trace.h"

static const char *const kc_cmd_names[] = {
	[KEVENT_IOC_NR_INFO] = "INFO",
	[KEVENT_IOC_NR_CTL] = "CTL",
	[KEVENT_IOC_NR_GET_EVENTS] = "GET_EVENTS",
	[KEVENT_IOC_NR_RING_SHM] = "RING_SHM",
	[KEVENT_IOC_NR_SET_ABI] = "SET_ABI",
	[KEVENT_IOC_NR_FAULT] = "FAULT",
	[KEVENT_IOC_NR_RING_INIT] = "RING_INIT",
	[KEVENT_IOC_NR_WAIT] = "WAIT",
	[KEVENT_IOC_NR_COMMIT] = "COMMIT",
};

static const char *const kc_type_names[KEVENT_MAX] = {
	"SOCKET", "INODE", "TIMER", "POLL", "NAIO", "AIO", "?", "?", "POSIX_TIMER", "USER",
};

static const char *const kc_ctl_names[] = { "ADD", "REMOVE", "MODIFY", "READY", "QUERY" };
#define KC_CTL_NAMES	(sizeof(kc_ctl_names) / sizeof(kc_ctl_names[0]))

const char *kc_trace_cmd_name(unsigned int cmd)
{
	if (_IOC_TYPE(cmd) != KEVENT_IOC_MAGIC ||
	    _IOC_NR(cmd) >= sizeof(kc_cmd_names) / sizeof(kc_cmd_names[0]))
		return NULL;
	return kc_cmd_names[_IOC_NR(cmd)];
}

/* A VER1 header (D60) shows its ioc_flags; CTL_EXT when KEVENT_CTL_EXT is set. */
static void kc_fmt_ctl(char *buf, size_t len, const struct kevent_ctl_ext_arg *a, size_t usize)
{
	const char *c = a->cmd < KC_CTL_NAMES ? kc_ctl_names[a->cmd] : "?";
	const char *name = a->ioc_flags & KEVENT_CTL_EXT ? "CTL_EXT" : "CTL";

	if (usize < KEVENT_CTL_ARG_SIZE_VER1)
		snprintf(buf, len, "CTL %s(%u) num=%u events=0x%llx", c, a->cmd, a->num,
			 (unsigned long long)a->events);
	else
		snprintf(buf, len, "%s %s(%u) num=%u events=0x%llx ioc_flags=0x%x", name, c,
			 a->cmd, a->num, (unsigned long long)a->events, a->ioc_flags);
}

static void kc_fmt_get(char *buf, size_t len, const struct kevent_get_events_arg *a)
{
	snprintf(buf, len,
		 "GET_EVENTS min_nr=%u max_nr=%u timeout_ns=%llu events=0x%llx flags=0x%x ioc_flags=0x%x",
		 a->min_nr, a->max_nr, (unsigned long long)a->timeout_ns,
		 (unsigned long long)a->events, a->flags, a->ioc_flags);
}

char *kc_trace_fmt_arg(char *buf, size_t len, unsigned int cmd, const void *hdr, size_t usize)
{
	const char *name = kc_trace_cmd_name(cmd);
	union {
		struct kevent_ctl_ext_arg ctl;
		struct kevent_get_events_arg get;
		struct kevent_set_abi abi;
		struct kevent_fault fault;
		struct kevent_ring_init ri;
		struct kevent_wait_arg wait;
		struct kevent_commit_arg commit;
	} a;

	memset(&a, 0, sizeof(a));
	if (hdr)
		memcpy(&a, hdr, usize < sizeof(a) ? usize : sizeof(a));
	if (!name) {
		snprintf(buf, len, "cmd=0x%x (unknown) size=%zu", cmd, usize);
	} else if (_IOC_NR(cmd) == KEVENT_IOC_NR_CTL && usize >= KEVENT_CTL_ARG_SIZE_VER0) {
		kc_fmt_ctl(buf, len, &a.ctl, usize);
	} else if (_IOC_NR(cmd) == KEVENT_IOC_NR_GET_EVENTS && usize >= sizeof(a.get)) {
		kc_fmt_get(buf, len, &a.get);
	} else if (_IOC_NR(cmd) == KEVENT_IOC_NR_SET_ABI && usize >= sizeof(a.abi)) {
		snprintf(buf, len, "SET_ABI revision=%u flags=0x%x", a.abi.revision, a.abi.flags);
	} else if (_IOC_NR(cmd) == KEVENT_IOC_NR_RING_INIT && usize >= sizeof(a.ri)) {
		snprintf(buf, len, "RING_INIT ring=0x%llx num=%u flags=0x%x",
			 (unsigned long long)a.ri.ring, a.ri.num, a.ri.flags);
	} else if (_IOC_NR(cmd) == KEVENT_IOC_NR_WAIT && usize >= sizeof(a.wait)) {
		snprintf(buf, len, "WAIT num=%u old_uidx=%u timeout=%lld.%09u flags=0x%x ioc_flags=0x%x",
			 a.wait.num, a.wait.old_uidx, (long long)a.wait.timeout.tv_sec,
			 a.wait.timeout.tv_nsec, a.wait.flags, a.wait.ioc_flags);
	} else if (_IOC_NR(cmd) == KEVENT_IOC_NR_COMMIT && usize >= sizeof(a.commit)) {
		snprintf(buf, len, "COMMIT new_uidx=%u over=%u", a.commit.new_uidx, a.commit.over);
	} else if (_IOC_NR(cmd) == KEVENT_IOC_NR_FAULT && usize >= sizeof(a.fault)) {
		snprintf(buf, len, "FAULT kind=%u skip=%u", a.fault.kind, a.fault.skip);
	} else {
		snprintf(buf, len, "%s size=%zu", name, usize);
	}
	return buf;
}

char *kc_trace_fmt_ukevent(char *buf, size_t len, const struct ukevent *uk)
{
	const char *t = uk->type < KEVENT_MAX && kc_type_names[uk->type] ? kc_type_names[uk->type] : "?";

	snprintf(buf, len,
		 "id=%u:%u type=%s(%u) event=0x%x req=0x%x ret=0x%x data=%u:%d user=0x%x:0x%x",
		 uk->id.raw[0], uk->id.raw[1], t, uk->type, uk->event, uk->req_flags,
		 uk->ret_flags, uk->ret_data[0], (int)uk->ret_data[1], uk->user[0], uk->user[1]);
	return buf;
}

void kc_trace_ukevents(unsigned long long id, const char *dir, const void *p, size_t n)
{
	char line[256];
	struct ukevent uk;

	for (size_t i = 0; i < n; i++) {
		memcpy(&uk, (const unsigned char *)p + i * sizeof(uk), sizeof(uk));
		kc_info("trace #%llu %s[%zu] %s", id, dir, i,
			kc_trace_fmt_ukevent(line, sizeof(line), &uk));
	}
}

char *kc_trace_fmt_timer(char *buf, size_t len, const struct kevent_timer_spec *t)
{
	snprintf(buf, len, "timer clock=%u flags=0x%x value=%lld.%09u interval=%lld.%09u",
		 t->clock, t->flags, (long long)t->value.tv_sec, t->value.tv_nsec,
		 (long long)t->interval.tv_sec, t->interval.tv_nsec);
	return buf;
}

/* D60: KEVENT_CTL_EXT entries, 80 bytes each; ext shown when not all zero. */
void kc_trace_ext_entries(unsigned long long id, const char *dir, const void *p, size_t n)
{
	static const __u64 zero[5];
	char line[256], ext[160];
	struct ukevent_ext e;

	for (size_t i = 0; i < n; i++) {
		memcpy(&e, (const unsigned char *)p + i * sizeof(e), sizeof(e));
		kc_trace_fmt_ukevent(line, sizeof(line), &e.ev);
		if (!memcmp(e.ext.__raw, zero, sizeof(zero)))
			kc_info("trace #%llu %s[%zu] %s", id, dir, i, line);
		else
			kc_info("trace #%llu %s[%zu] %s %s", id, dir, i, line,
				kc_trace_fmt_timer(ext, sizeof(ext), &e.ext.timer));
	}
}

void kc_trace_entries(unsigned long long id, const char *dir, const void *p, size_t len, int ext)
{
	if (ext)
		kc_trace_ext_entries(id, dir, p, len / sizeof(struct ukevent_ext));
	else
		kc_trace_ukevents(id, dir, p, len / sizeof(struct ukevent));
}
