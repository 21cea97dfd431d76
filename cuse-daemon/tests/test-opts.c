// SPDX-License-Identifier: GPL-2.0
/* kevent-cuse command line parsing. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kc-opts.h"

static FILE *sink;

static void setup(void)
{
	sink = fopen("/dev/null", "w");
}

static void teardown(void)
{
	fclose(sink);
}

#define PARSE(o, ...)							\
	({								\
		char *av[] = { "kevent-cuse", __VA_ARGS__, NULL };	\
		kc_opts_init(o);					\
		kc_opts_parse(o, sizeof(av) / sizeof(av[0]) - 1, av, sink); \
	})

TestSuite(opts, .init = setup, .fini = teardown);

Test(opts, defaults)
{
	struct kc_opts o;
	char *av[] = { "kevent-cuse", NULL };

	kc_opts_init(&o);
	cr_assert_eq(kc_opts_parse(&o, 1, av, sink), 0);
	cr_assert_str_eq(o.name, "kevent");
	cr_assert_eq(o.mode, 0666);
	cr_assert_null(o.shm_dir, "per instance unless --shm-dir");
	cr_assert_eq(o.workers, 16);
	cr_assert_eq(o.caps[KEVENT_LIMIT_RUNNING], 8);
	cr_assert_geq(o.caps[KEVENT_LIMIT_PARKED], 10000);
	cr_assert_eq(o.foreground | o.debug | o.trace | o.use_syslog | o.no_process_vm |
		     o.fault_inject, 0);
}

/* The default ring directory is the instance's own; --shm-dir overrides it. */
Test(opts, ring_directory_per_instance)
{
	struct kc_opts o;
	char a[112], b[112], c[112];

	cr_assert_eq(PARSE(&o, "-f"), 0);
	cr_assert_eq(kc_opts_shm_dir(&o, a, sizeof(a)), 0);
	cr_assert_str_eq(a, "/dev/shm/kevent-cuse/cuse-kevent");
	cr_assert_eq(PARSE(&o, "-n", "kevent-x"), 0);
	cr_assert_eq(kc_opts_shm_dir(&o, a, sizeof(a)), 0);
	cr_assert_str_eq(a, "/dev/shm/kevent-cuse/cuse-kevent-x", "one per device name");
	cr_assert_eq(PARSE(&o, "--fuse", "/mnt/a"), 0);
	cr_assert_eq(kc_opts_shm_dir(&o, a, sizeof(a)), 0);
	cr_assert_eq(strncmp(a, "/dev/shm/kevent-cuse/fuse-", 26), 0, "%s", a);
	cr_assert_eq(strlen(a), 26 + 16, "fuse- and 16 hex digits: %s", a);
	cr_assert_eq(kc_opts_shm_dir(&o, c, sizeof(c)), 0);
	cr_assert_str_eq(a, c, "the same mount, the same directory (a restart sweeps it)");
	cr_assert_eq(PARSE(&o, "--fuse", "/mnt/b"), 0);
	cr_assert_eq(kc_opts_shm_dir(&o, b, sizeof(b)), 0);
	cr_assert_str_neq(a, b, "two mounts, two directories");
	cr_assert_eq(PARSE(&o, "--fuse", "/mnt/b", "--shm-dir", "/dev/shm/x"), 0);
	cr_assert_eq(kc_opts_shm_dir(&o, b, sizeof(b)), 0);
	cr_assert_str_eq(b, "/dev/shm/x", "--shm-dir as given");
	cr_assert_eq(kc_opts_shm_dir(&o, b, 5), -ENAMETOOLONG);
}

Test(opts, fault_inject_is_a_flag)
{
	struct kc_opts o;

	cr_assert_eq(PARSE(&o, "--fault-inject", "--max-queues=5"), 0);
	cr_assert(o.fault_inject);
	cr_assert_eq(o.caps[KEVENT_LIMIT_QUEUES], 5, "the caps after it still parse");
	cr_assert_eq(PARSE(&o, "--fault-inject=1"), -EINVAL, "takes no value");
}

Test(opts, harness_command_line)
{
	struct kc_opts o;

	cr_assert_eq(PARSE(&o, "--foreground", "--name", "kevent", "--mode", "0666"), 0);
	cr_assert(o.foreground);
	cr_assert_str_eq(o.name, "kevent");
	cr_assert_eq(o.mode, 0666);
}

Test(opts, short_and_equals_forms)
{
	struct kc_opts o;

	cr_assert_eq(PARSE(&o, "-f", "-d", "-t", "-n", "kv2", "-m", "600", "--workers=4"), 0);
	cr_assert(o.foreground && o.debug && o.trace);
	cr_assert_str_eq(o.name, "kv2");
	cr_assert_eq(o.mode, 0600);
	cr_assert_eq(o.workers, 4);
	cr_assert_eq(o.caps[KEVENT_LIMIT_RUNNING], 2);
}

Test(opts, limits)
{
	struct kc_opts o;

	cr_assert_eq(PARSE(&o, "--max-queues=5", "--max-parked", "20000", "--max-timers=0",
			   "--max-running=3"), 0);
	cr_assert_eq(o.caps[KEVENT_LIMIT_QUEUES], 5);
	cr_assert_eq(o.caps[KEVENT_LIMIT_PARKED], 20000);
	cr_assert_eq(o.caps[KEVENT_LIMIT_TIMERS], 0);
	cr_assert_eq(o.caps[KEVENT_LIMIT_RUNNING], 3);
}

Test(opts, running_cap_must_stay_below_workers)
{
	struct kc_opts o;

	cr_assert_eq(PARSE(&o, "--workers=4", "--max-running=4"), -EINVAL);
	cr_assert_eq(PARSE(&o, "--max-running=0"), -EINVAL);
	cr_assert_eq(PARSE(&o, "--workers=4", "--max-running=3"), 0);
}

Test(opts, bad_values)
{
	struct kc_opts o;

	cr_assert_eq(PARSE(&o, "--mode=0999"), -EINVAL);
	cr_assert_eq(PARSE(&o, "--mode=1777"), -EINVAL);
	cr_assert_eq(PARSE(&o, "--mode="), -EINVAL);
	cr_assert_eq(PARSE(&o, "--workers=1"), -EINVAL);
	cr_assert_eq(PARSE(&o, "--workers=-3"), -EINVAL);
	cr_assert_eq(PARSE(&o, "--workers=12x"), -EINVAL);
	cr_assert_eq(PARSE(&o, "--max-queues=99999999999"), -EINVAL);
	cr_assert_eq(PARSE(&o, "--name=../evil"), -EINVAL);
	cr_assert_eq(PARSE(&o, "--name=a/b"), -EINVAL);
	cr_assert_eq(PARSE(&o, "--name=.."), -EINVAL);
	cr_assert_eq(PARSE(&o, "--name="), -EINVAL);
	cr_assert_eq(PARSE(&o, "--name=abcdefghijklmnopqrstuvwxyz0123456"), -EINVAL);
	cr_assert_eq(PARSE(&o, "--shm-dir=relative"), -EINVAL);
	cr_assert_eq(PARSE(&o, "--shm-dir=/dev/shm/../etc"), -EINVAL);
}

Test(opts, unknown_and_missing)
{
	struct kc_opts o;

	cr_assert_eq(PARSE(&o, "--bogus"), -EINVAL);
	cr_assert_eq(PARSE(&o, "-x"), -EINVAL);
	cr_assert_eq(PARSE(&o, "--name"), -EINVAL);
	cr_assert_eq(PARSE(&o, "stray"), -EINVAL);
}

Test(opts, help_and_version)
{
	struct kc_opts o;
	char buf[4096] = "";
	FILE *f;

	cr_assert_eq(PARSE(&o, "--help"), 0);
	cr_assert(o.help);
	cr_assert_eq(PARSE(&o, "-V"), 0);
	cr_assert(o.version);
	f = fmemopen(buf, sizeof(buf) - 1, "w");
	kc_opts_usage(f, "kevent-cuse");
	fclose(f);
	cr_assert(strstr(buf, "--foreground"));
	cr_assert(strstr(buf, "--max-parked"));
	cr_assert(strstr(buf, "--trace"));
	cr_assert(strstr(buf, "--fuse=DIR"));
	cr_assert(strstr(buf, "--link=PATH"));
}

Test(opts, fuse_debug_implies_debug)
{
	struct kc_opts o;

	cr_assert_eq(PARSE(&o, "--fuse-debug"), 0);
	cr_assert(o.fuse_debug && o.debug);
}

Test(opts, fuse_takes_a_directory)
{
	struct kc_opts o;

	cr_assert_eq(PARSE(&o, "-f"), 0);
	cr_assert_null(o.fuse_dir, "CUSE unless --fuse");
	cr_assert_eq(PARSE(&o, "--fuse", "/run/kevent", "--mode=0600"), 0);
	cr_assert_str_eq(o.fuse_dir, "/run/kevent");
	cr_assert_eq(o.mode, 0600, "--mode is the file's mode on fuse");
	cr_assert_eq(PARSE(&o, "--fuse=mnt"), 0);
	cr_assert_str_eq(o.fuse_dir, "mnt", "relative: the daemon resolves it at start");
	cr_assert_eq(PARSE(&o, "--fuse="), -EINVAL);
	cr_assert_eq(PARSE(&o, "--fuse"), -EINVAL, "missing argument");
	cr_assert_eq(PARSE(&o, "--fuse=/a", "--max-queues=3"), 0);
	cr_assert_eq(o.caps[KEVENT_LIMIT_QUEUES], 3, "the caps after it still parse");
}

Test(opts, link_needs_fuse_and_an_absolute_path)
{
	struct kc_opts o;

	cr_assert_eq(PARSE(&o, "--fuse=/run/kevent", "--link=/dev/kevent"), 0);
	cr_assert_str_eq(o.link, "/dev/kevent");
	cr_assert_eq(PARSE(&o, "--link=/dev/kevent"), -EINVAL, "a CUSE device is its own node");
	cr_assert_eq(PARSE(&o, "--fuse=/run/kevent", "--link=dev/kevent"), -EINVAL, "relative");
	cr_assert_eq(PARSE(&o, "--fuse=/run/kevent", "--link=/"), -EINVAL);
	cr_assert_eq(PARSE(&o, "--fuse=/run/kevent", "--link=/dev/kevent", "--max-queues=3"), 0);
	cr_assert_eq(o.caps[KEVENT_LIMIT_QUEUES], 3, "the caps after it still parse");
}
