// SPDX-License-Identifier: GPL-2.0
/* kevent-cuse command line: getopt_long, strict numbers, no exit() here. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kc-opts.h"

enum {
	OPT_NAME = 256, OPT_MODE, OPT_SHM_DIR, OPT_WORKERS, OPT_SYSLOG,
	OPT_TRACE, OPT_FUSE_DEBUG, OPT_NO_PVM, OPT_FAULT_INJECT, OPT_FUSE, OPT_LINK,
	OPT_CAP_FIRST,		/* one per KEVENT_LIMIT_* below */
};

struct kc_cap_opt {
	const char *name;
	unsigned int limit;
	__u32 dflt;
	const char *what;
};

/* Defaults sized for one busy user; the daemon raises RLIMIT_NOFILE. */
static const struct kc_cap_opt kc_cap_opts[] = {
	{ "max-queues",		KEVENT_LIMIT_QUEUES,	1024,	"open queues" },
	{ "max-kevents",	KEVENT_LIMIT_KEVENTS,	262144,	"registered kevents" },
	{ "max-fd-kevents",	KEVENT_LIMIT_FD_KEVENTS, 16384, "poll and socket kevents" },
	{ "max-timers",		KEVENT_LIMIT_TIMERS,	16384,	"timer kevents" },
	{ "max-marks",		KEVENT_LIMIT_MARKS,	8192,	"inode marks" },
	{ "max-running",	KEVENT_LIMIT_RUNNING,	0,	"requests running" },	/* from --workers */
	{ "max-parked",		KEVENT_LIMIT_PARKED,	16384,	"parked GET_EVENTS" },
	{ "max-expiries",	KEVENT_LIMIT_EXPIRIES,	100000,	"timer expiries per second" },
};
#define KC_NCAPS (sizeof(kc_cap_opts) / sizeof(kc_cap_opts[0]))

void kc_opts_init(struct kc_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->name = KC_DEFAULT_NAME;
	o->mode = KC_DEFAULT_MODE;
	o->workers = KC_DEFAULT_WORKERS;
	for (size_t i = 0; i < KC_NCAPS; i++)
		o->caps[kc_cap_opts[i].limit] = kc_cap_opts[i].dflt;
}

void kc_opts_usage(FILE *out, const char *argv0)
{
	fprintf(out,
		"Usage: %s [OPTION]...\n"
		"Serve the 2006 kevent interface as the CUSE device /dev/NAME,\n"
		"or with --fuse as the file DIR/kevent of a FUSE mount.\n"
		"\n"
		"      --fuse=DIR          mount a one-file FUSE filesystem on DIR and\n"
		"                          serve DIR/kevent there instead of CUSE\n"
		"      --link=PATH         with --fuse: make PATH (e.g. /dev/kevent) a\n"
		"                          symlink to DIR/kevent while serving\n"
		"  -f, --foreground        stay in the foreground\n"
		"  -d, --debug             log daemon debug messages\n"
		"      --fuse-debug        also dump libfuse's requests\n"
		"  -t, --trace             decode every ioctl (arguments, ukevents, result)\n"
		"  -n, --name=NAME         device name (default %s)\n"
		"  -m, --mode=MODE         octal mode of /dev/NAME or DIR/kevent (default %04o)\n"
		"      --shm-dir=DIR       directory of the ring objects (default one per\n"
		"                          device: %s/cuse-NAME, or fuse-HASH\n"
		"                          of DIR with --fuse)\n"
		"  -w, --workers=N         libfuse worker threads (default %u)\n"
		"      --syslog            log to syslog instead of stderr\n"
		"      --no-process-vm     move arrays by ioctl retry only\n"
		"      --fault-inject      answer KEVENT_IOC_FAULT: tests inject faults\n"
		"                          on their own queues (never in production)\n",
		argv0, KC_DEFAULT_NAME, KC_DEFAULT_MODE, KC_SHM_PARENT,
		KC_DEFAULT_WORKERS);
	fprintf(out, "\nPer-uid caps (0: none):\n");
	for (size_t i = 0; i < KC_NCAPS; i++) {
		char opt[32];

		snprintf(opt, sizeof(opt), "%s=N", kc_cap_opts[i].name);
		if (kc_cap_opts[i].dflt)
			fprintf(out, "      --%-16s  %s (default %u)\n", opt, kc_cap_opts[i].what,
				(unsigned int)kc_cap_opts[i].dflt);
		else
			fprintf(out, "      --%-16s  %s\n", opt, kc_cap_opts[i].what);
	}
	fprintf(out,
		"      (--max-running defaults to half the workers and must stay below them)\n"
		"\n"
		"  -h, --help              this text\n"
		"  -V, --version           print the version\n");
}

/* FNV-1a, 64 bits: a mount point's path as one short path component. */
static unsigned long long kc_path_hash(const char *s)
{
	unsigned long long h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

int kc_opts_shm_dir(const struct kc_opts *o, char *out, size_t len)
{
	int n;

	if (o->shm_dir)
		n = snprintf(out, len, "%s", o->shm_dir);
	else if (o->fuse_dir)
		n = snprintf(out, len, "%s/fuse-%016llx", KC_SHM_PARENT, kc_path_hash(o->fuse_dir));
	else
		n = snprintf(out, len, "%s/cuse-%s", KC_SHM_PARENT, o->name);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* A whole-string unsigned number in base (0: C rules) up to max. */
static int kc_parse_uint(const char *s, int base, unsigned long max, unsigned long *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	*v = strtoul(s, &end, base);
	if (errno || *end || *v > max)
		return -EINVAL;
	return 0;
}

/* DEVNAME goes into /dev: one path component of tame characters. */
static int kc_check_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > KC_NAME_MAX || !strcmp(s, ".") || !strcmp(s, ".."))
		return -EINVAL;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		      "0123456789._-") == n ? 0 : -EINVAL;
}

static int kc_check_shm_dir(const char *s)
{
	/* "<dir>/ring-<20 digits>" must fit kevent_ring_shm.path. */
	size_t max = sizeof(((struct kevent_ring_shm *)0)->path) - 1 - 26;

	return s[0] == '/' && strlen(s) <= max && !strstr(s, "/..") ? 0 : -EINVAL;
}

static int kc_opt_value(struct kc_opts *o, int c, const char *arg)
{
	unsigned long v;

	switch (c) {
	case 'n':
	case OPT_NAME:
		o->name = arg;
		return kc_check_name(arg);
	case 'm':
	case OPT_MODE:
		if (kc_parse_uint(arg, 8, 0777, &v))
			return -EINVAL;
		o->mode = v;
		return 0;
	case 'w':
	case OPT_WORKERS:
		if (kc_parse_uint(arg, 10, 1024, &v) || v < 2)
			return -EINVAL;
		o->workers = v;
		return 0;
	case OPT_FUSE:
		o->fuse_dir = arg;
		return *arg ? 0 : -EINVAL;
	case OPT_LINK:
		o->link = arg;
		return arg[0] == '/' && arg[1] ? 0 : -EINVAL;
	case OPT_SHM_DIR:
		o->shm_dir = arg;
		return kc_check_shm_dir(arg);
	}
	if (c >= OPT_CAP_FIRST && c < OPT_CAP_FIRST + (int)KC_NCAPS) {
		if (kc_parse_uint(arg, 10, UINT32_MAX, &v))
			return -EINVAL;
		o->caps[kc_cap_opts[c - OPT_CAP_FIRST].limit] = v;
		return 0;
	}
	return -EINVAL;
}

static int kc_opt_flag(struct kc_opts *o, int c)
{
	switch (c) {
	case 'f': o->foreground = 1; return 0;
	case 'd': o->debug = 1; return 0;
	case 't': case OPT_TRACE: o->trace = 1; return 0;
	case 'h': o->help = 1; return 0;
	case 'V': o->version = 1; return 0;
	case OPT_FUSE_DEBUG: o->fuse_debug = o->debug = 1; return 0;
	case OPT_SYSLOG: o->use_syslog = 1; return 0;
	case OPT_NO_PVM: o->no_process_vm = 1; return 0;
	case OPT_FAULT_INJECT: o->fault_inject = 1; return 0;
	}
	return -EINVAL;
}

/* The running cap keeps one uid from occupying every worker (B3). */
static int kc_check_running_cap(struct kc_opts *o, int running_set, FILE *err)
{
	__u32 *cap = &o->caps[KEVENT_LIMIT_RUNNING];

	if (!running_set)
		*cap = o->workers / 2;
	if (*cap == 0 || *cap >= o->workers) {
		fprintf(err, "--max-running must be between 1 and --workers - 1 (%u)\n",
			o->workers - 1);
		return -EINVAL;
	}
	return 0;
}

int kc_opts_parse(struct kc_opts *o, int argc, char **argv, FILE *err)
{
	struct option lopts[18 + KC_NCAPS] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "debug", no_argument, NULL, 'd' },
		{ "fuse-debug", no_argument, NULL, OPT_FUSE_DEBUG },
		{ "trace", no_argument, NULL, 't' },
		{ "name", required_argument, NULL, 'n' },
		{ "mode", required_argument, NULL, 'm' },
		{ "shm-dir", required_argument, NULL, OPT_SHM_DIR },
		{ "workers", required_argument, NULL, 'w' },
		{ "syslog", no_argument, NULL, OPT_SYSLOG },
		{ "no-process-vm", no_argument, NULL, OPT_NO_PVM },
		{ "fault-inject", no_argument, NULL, OPT_FAULT_INJECT },
		{ "fuse", required_argument, NULL, OPT_FUSE },
		{ "link", required_argument, NULL, OPT_LINK },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
	};
	int first_cap = 15, running_set = 0, c;

	for (size_t i = 0; i < KC_NCAPS; i++)
		lopts[first_cap + i] = (struct option){ kc_cap_opts[i].name,
			required_argument, NULL, OPT_CAP_FIRST + (int)i };
	optind = 0;	/* reset getopt: tests parse many times */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":fdtn:m:w:hV", lopts, NULL)) != -1) {
		if (c == '?' || c == ':') {
			fprintf(err, "%s: %s option '%s'\n", argv[0],
				c == '?' ? "unknown" : "missing argument to",
				argv[optind - 1]);
			return -EINVAL;
		}
		if (c >= OPT_CAP_FIRST && c < OPT_CAP_FIRST + (int)KC_NCAPS &&
		    kc_cap_opts[c - OPT_CAP_FIRST].limit == KEVENT_LIMIT_RUNNING)
			running_set = 1;
		if (optarg ? kc_opt_value(o, c, optarg) : kc_opt_flag(o, c)) {
			fprintf(err, "%s: invalid value '%s' for option '%s'\n", argv[0],
				optarg ? optarg : "", argv[optind - 1]);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(err, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
		return -EINVAL;
	}
	if (o->help || o->version)
		return 0;
	if (o->link && !o->fuse_dir) {
		fprintf(err, "%s: --link needs --fuse (a CUSE device is its own node)\n", argv[0]);
		return -EINVAL;
	}
	return kc_check_running_cap(o, running_set, err);
}
