/* SPDX-License-Identifier: GPL-2.0 */
/* --trace: every ioctl decoded, one line per item. */
#ifndef KC_TRACE_H
#define KC_TRACE_H

#include <stddef.h>
#include <linux/kevent.h>

/* Name of an ioctl command ("CTL", ...) or NULL. */
const char *kc_trace_cmd_name(unsigned int cmd);
/* The wrapper struct decoded ("CTL ADD num=1 events=0x..."); returns buf. */
char *kc_trace_fmt_arg(char *buf, size_t len, unsigned int cmd, const void *hdr, size_t usize);
/* One ukevent ("id=5:0 type=TIMER event=0x1 req=0x0 ret=0x0 data=0:0 user=..."). */
char *kc_trace_fmt_ukevent(char *buf, size_t len, const struct ukevent *uk);
/* Log n ukevents at p with a prefix ("in"/"out"), one line each. */
void kc_trace_ukevents(unsigned long long id, const char *dir, const void *p, size_t n);
/* Revision 3 (D59, D60): a timer setting, and KEVENT_CTL_EXT entries. */
char *kc_trace_fmt_timer(char *buf, size_t len, const struct kevent_timer_spec *t);
void kc_trace_ext_entries(unsigned long long id, const char *dir, const void *p, size_t n);
/* len bytes of CTL entries: 80-byte ones when ext, else 40-byte ukevents. */
void kc_trace_entries(unsigned long long id, const char *dir, const void *p, size_t len, int ext);

#endif /* KC_TRACE_H */
