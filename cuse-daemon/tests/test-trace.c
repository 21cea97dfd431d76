// SPDX-License-Identifier: GPL-2.0
/* --trace decoding. */
#include <criterion/criterion.h>
#include <string.h>

#include "kc-trace.h"

Test(trace, names)
{
	cr_assert_str_eq(kc_trace_cmd_name(KEVENT_IOC_CTL), "CTL");
	cr_assert_str_eq(kc_trace_cmd_name(KEVENT_IOC_GET_EVENTS), "GET_EVENTS");
	cr_assert_str_eq(kc_trace_cmd_name(KEVENT_IOC_RING_SHM), "RING_SHM");
	cr_assert_null(kc_trace_cmd_name(_IO('x', 1)));
	cr_assert_null(kc_trace_cmd_name(_IO(KEVENT_IOC_MAGIC, 0x55)));
}

Test(trace, ctl_and_get)
{
	struct kevent_ctl_arg c = { .cmd = KEVENT_CTL_ADD, .num = 3, .events = 0x1000 };
	struct kevent_get_events_arg g = { .min_nr = 1, .max_nr = 64, .timeout_ns = 5,
					   .events = 0x2000, .ioc_flags = 1 };
	char buf[256];

	kc_trace_fmt_arg(buf, sizeof(buf), KEVENT_IOC_CTL, &c, sizeof(c));
	cr_assert_str_eq(buf, "CTL ADD(0) num=3 events=0x1000");
	kc_trace_fmt_arg(buf, sizeof(buf), KEVENT_IOC_GET_EVENTS, &g, sizeof(g));
	cr_assert_str_eq(buf, "GET_EVENTS min_nr=1 max_nr=64 timeout_ns=5 events=0x2000 flags=0x0 ioc_flags=0x1");
	kc_trace_fmt_arg(buf, sizeof(buf), _IOW(KEVENT_IOC_MAGIC, 1, char[4]), &c, 4);
	cr_assert_str_eq(buf, "CTL size=4");
}

Test(trace, ukevent)
{
	struct ukevent uk = { .type = KEVENT_TIMER, .event = 1, .ret_flags = 3 };
	char buf[256];

	uk.id.raw[0] = 5;
	uk.ret_data[1] = (__u32)-22;
	uk.user[0] = 0xab;
	kc_trace_fmt_ukevent(buf, sizeof(buf), &uk);
	cr_assert_str_eq(buf, "id=5:0 type=TIMER(2) event=0x1 req=0x0 ret=0x3 data=0:-22 user=0xab:0x0");
}

/* Each revision-2 ioctl and FAULT: its own fields, so a trace names what was asked. */
Test(trace, other_ioctls)
{
	struct kevent_set_abi abi = { .revision = 2, .flags = KEVENT_ABI_STRICT };
	struct kevent_ring_init ri = { .ring = 0x7f00, .num = 64 };
	struct kevent_wait_arg w = { .num = 4, .old_uidx = 9, .timeout = { .tv_sec = 1, .tv_nsec = 5 },
				     .flags = 0, .ioc_flags = KEVENT_GET_NONBLOCK };
	struct kevent_commit_arg c = { .new_uidx = 12, .over = 1 };
	struct kevent_fault f = { .kind = KEVENT_FAULT_ADD_ENOMEM, .skip = 3 };
	char buf[256];

	kc_trace_fmt_arg(buf, sizeof(buf), KEVENT_IOC_SET_ABI, &abi, sizeof(abi));
	cr_assert_str_eq(buf, "SET_ABI revision=2 flags=0x1");
	kc_trace_fmt_arg(buf, sizeof(buf), KEVENT_IOC_RING_INIT, &ri, sizeof(ri));
	cr_assert_str_eq(buf, "RING_INIT ring=0x7f00 num=64 flags=0x0");
	kc_trace_fmt_arg(buf, sizeof(buf), KEVENT_IOC_WAIT, &w, sizeof(w));
	cr_assert_str_eq(buf, "WAIT num=4 old_uidx=9 timeout=1.000000005 flags=0x0 ioc_flags=0x1");
	kc_trace_fmt_arg(buf, sizeof(buf), KEVENT_IOC_COMMIT, &c, sizeof(c));
	cr_assert_str_eq(buf, "COMMIT new_uidx=12 over=1");
	kc_trace_fmt_arg(buf, sizeof(buf), KEVENT_IOC_FAULT, &f, sizeof(f));
	cr_assert_str_eq(buf, "FAULT kind=1 skip=3");
	kc_trace_fmt_arg(buf, sizeof(buf), KEVENT_IOC_INFO, NULL, 152);
	cr_assert_str_eq(buf, "INFO size=152", "INFO's argument is output only: name and size");
}

/* What the daemon cannot name is still printed, never read past its size. */
Test(trace, unknown_and_short)
{
	struct kevent_ctl_arg c = { .cmd = 7, .num = 1, .events = 0x10 };
	struct ukevent uk = { .type = 99 };
	char buf[256];

	kc_trace_fmt_arg(buf, sizeof(buf), _IOW('x', 3, int), NULL, 4);
	cr_assert_str_eq(buf, "cmd=0x40047803 (unknown) size=4");
	kc_trace_fmt_arg(buf, sizeof(buf), KEVENT_IOC_CTL, &c, sizeof(c));
	cr_assert_str_eq(buf, "CTL ?(7) num=1 events=0x10");
	kc_trace_fmt_arg(buf, sizeof(buf), KEVENT_IOC_WAIT, &c, 8);
	cr_assert_str_eq(buf, "WAIT size=8", "shorter than its struct: no fields guessed");
	kc_trace_fmt_ukevent(buf, sizeof(buf), &uk);
	cr_assert_str_eq(buf, "id=0:0 type=?(99) event=0x0 req=0x0 ret=0x0 data=0:0 user=0x0:0x0");
}
