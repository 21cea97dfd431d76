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
