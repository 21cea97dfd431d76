/* SPDX-License-Identifier: GPL-2.0 */
/* kevent-cuse logging: stderr by default, syslog on request. */
#ifndef KC_LOG_H
#define KC_LOG_H

#include <syslog.h>

void kc_log_init(const char *ident, int use_syslog, int debug);
void kc_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int kc_log_debug_enabled(void);

#define kc_err(...)	kc_log(LOG_ERR, __VA_ARGS__)
#define kc_warn(...)	kc_log(LOG_WARNING, __VA_ARGS__)
#define kc_info(...)	kc_log(LOG_INFO, __VA_ARGS__)
#define kc_dbg(...)							\
	do {								\
		if (kc_log_debug_enabled())				\
			kc_log(LOG_DEBUG, __VA_ARGS__);			\
	} while (0)

#endif /* KC_LOG_H */
