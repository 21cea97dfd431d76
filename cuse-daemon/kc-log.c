// SPDX-License-Identifier: GPL-2.0
/*
 * Logging.  One line per call; stderr lines are written with a single
 * write() so lines of concurrent workers do not interleave.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kc-log.h"

static const char *kc_ident = "kevent-cuse";
static int kc_syslog;
static int kc_debug;

void kc_log_init(const char *ident, int use_syslog, int debug)
{
	kc_ident = ident;
	kc_syslog = use_syslog;
	kc_debug = debug;
	if (use_syslog)
		openlog(ident, LOG_PID, LOG_DAEMON);
}

int kc_log_debug_enabled(void)
{
	return kc_debug;
}

void kc_log(int prio, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	if (kc_syslog) {
		vsyslog(prio, fmt, ap);
		va_end(ap);
		return;
	}
	n = snprintf(line, sizeof(line), "%s: ", kc_ident);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	n = strlen(line);
	if (n == sizeof(line) - 1)
		line[n - 1] = '\n';
	else
		line[n++] = '\n';
	if (write(STDERR_FILENO, line, n) < 0) {
		/* Nowhere left to report it. */
	}
}
