// SPDX-License-Identifier: GPL-2.0
/*
 * kevent-cuse: serves /dev/kevent as a CUSE device (or, with --fuse DIR,
 * DIR/kevent in a FUSE mount) on top of the queue core.  This file starts
 * and stops the daemon (options, preflight, the core and the origins, the
 * stop witness of D20).  It picks the front end once (struct kc_front,
 * kc-front.h: kc-cuse.c or kc-fuse.c) and calls only through it; the files
 * both share are kc-file.c, and one request's life is kc-req.c (see
 * kc-daemon.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "kc-daemon.h"
#include "kc-defer.h"
#include "kc-log.h"
#include "origins.h"

#ifndef KC_VERSION
#define KC_VERSION "unknown"
#endif

struct kc_daemon kd;

/* ---- start and stop ---- */

/*
 * B7: every fd-holding kevent costs the daemon a descriptor.  As root it
 * may go past the hard limit, up to fs.nr_open.
 */
static void kc_raise_nofile(void)
{
	unsigned long nr_open = 0;
	struct rlimit rl;
	FILE *f;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	f = fopen("/proc/sys/fs/nr_open", "r");
	if (f) {
		if (fscanf(f, "%lu", &nr_open) != 1)
			nr_open = 0;
		fclose(f);
	}
	if (nr_open > rl.rlim_max)
		rl.rlim_max = nr_open;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		kc_warn("cannot raise RLIMIT_NOFILE: %s", strerror(errno));
	else
		kc_dbg("RLIMIT_NOFILE %lu", (unsigned long)rl.rlim_cur);
}

/*
 * Without --shm-dir, one ring directory per instance under KC_SHM_PARENT
 * (design.md section 4): a start sweeps and a stop removes only its own,
 * so a fuse daemon beside a CUSE one keeps its rings, and a restart of the
 * same device sweeps what its crashed predecessor left.  After the
 * preflight: a --fuse DIR is canonical by then.
 */
static int kc_shm_dir_choose(void)
{
	static char dir[sizeof(kd.shm.path)];
	int err;

	if (kd.opts.shm_dir)
		return 0;
	if (kc_opts_shm_dir(&kd.opts, dir, sizeof(dir))) {
		kc_err("ring directory for %s: name too long", kd.front->where());
		return KC_EXIT_OSERR;
	}
	err = kc_shmdir_parent(KC_SHM_PARENT);
	if (err) {
		kc_err("ring directory %s: %s (must be a directory of ours on tmpfs)",
		       KC_SHM_PARENT, strerror(-err));
		return KC_EXIT_OSERR;
	}
	kd.opts.shm_dir = dir;
	return 0;
}

/* Clear messages and distinct codes for what an operator must fix. */
static int kc_preflight(void)
{
	const struct kc_front *f = kd.front;
	int err;

	if (geteuid() != 0) {
		kc_err("must run as root: it reads callers' memory, takes their fds and owns %s",
		       f->ctl);
		return KC_EXIT_NOPERM;
	}
	err = f->check ? f->check() : 0;
	if (err)
		return err;
	if (access(f->ctl, R_OK | W_OK)) {
		int e = errno;

		if (e == ENOENT)
			kc_err("%s", f->ctl_missing);
		else
			kc_err("%s: %s", f->ctl, strerror(e));
		return e == EACCES || e == EPERM ? KC_EXIT_NOPERM : KC_EXIT_UNAVAILABLE;
	}
	return f->preflight ? f->preflight() : 0;
}

/* The origins' rare lines (an inotify/fanotify overflow) go where ours go. */
static void kc_origins_log(const char *line)
{
	kc_warn("origins: %s", line);
}

/* 0, or the exit status after saying why. */
static int kc_core_start(void)
{
	struct korigins_config ocfg = { .log = kc_origins_log };
	struct kcore_config cfg;
	int err;

	memset(&cfg, 0, sizeof(cfg));
	cfg.backend = kd.front->backend;
	/* Those of every call; the path of each call adds its own (kc-file.c). */
	cfg.features = kd.front->features;
	memcpy(cfg.caps, kd.opts.caps, sizeof(cfg.caps));
	cfg.fault_inject = kd.opts.fault_inject;
	cfg.drain_origins = korigins_drain;	/* KEVENT_IOC_DRAIN, with fault_inject */
	if (cfg.fault_inject)
		kc_warn("--fault-inject: KEVENT_IOC_FAULT answers; for test suites only");
	err = kcore_new(&cfg, &kd.core);
	if (err) {
		kc_err("core: %s", strerror(-err));
		return KC_EXIT_OSERR;
	}
	err = korigins_start(&ocfg);
	if (err)
		kc_warn("event origins unavailable (%s): every ADD will fail per entry",
			strerror(-err));
	return 0;
}

/* D20: parked calls answered (what is ready, else ENODEV), queues released. */
static void kc_shutdown(void)
{
	unsigned int n;

	atomic_store(&kd.stopping, 1);
	n = kc_files_release_all();
	/* The replies of the calls completed above. */
	kc_defer_stop();
	korigins_stop();
	kcore_free(kd.core);
	kc_info("stopped; %u open queue%s released", n, n == 1 ? "" : "s");
}

int kc_session_run(struct fuse_session *se)
{
	struct fuse_loop_config *lc;
	int err;

	/* Daemonised: stderr is gone, syslog is what is left. */
	if (!kd.opts.foreground && !kd.opts.use_syslog)
		kc_log_init("kevent-cuse", 1, kd.opts.debug);
	/* After the fork of daemonising: the core starts its own threads. */
	kc_defer_init();
	err = kc_core_start();
	if (err)
		return err;
	lc = fuse_loop_cfg_create();
	fuse_loop_cfg_set_max_threads(lc, kd.opts.workers);
	fuse_loop_cfg_set_idle_threads(lc, kd.opts.workers);
	err = fuse_session_loop_mt(se, lc);
	fuse_loop_cfg_destroy(lc);
	kc_shutdown();
	/* libfuse reports the signal that ended the loop: a clean stop. */
	if (err == SIGTERM || err == SIGINT || err == SIGHUP)
		err = 0;
	if (err)
		kc_err("%s session ended with error %d", kd.front->name, err);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	unsigned int stale = 0;
	int err;

	kc_opts_init(&kd.opts);
	if (kc_opts_parse(&kd.opts, argc, argv, stderr)) {
		fprintf(stderr, "Try '%s --help'.\n", argv[0]);
		return KC_EXIT_USAGE;
	}
	if (kd.opts.help) {
		kc_opts_usage(stdout, argv[0]);
		return 0;
	}
	if (kd.opts.version) {
		unsigned int lo, hi;

		/* what SET_ABI accepts here, not only what the header describes */
		kcore_revisions(&lo, &hi);
		printf("kevent-cuse %s (kevent ABI revisions %u-%u served, header revision %d, take13)\n",
		       KC_VERSION, lo, hi, KEVENT_ABI_REVISION);
		return 0;
	}
	kc_log_init("kevent-cuse", kd.opts.use_syslog, kd.opts.debug);
	/* The one place that asks which front end: everything else calls it. */
	kd.front = kd.opts.fuse_dir ? &kc_front_fuse : &kc_front_cuse;
	err = kc_preflight();
	if (err)
		return err;
	kc_raise_nofile();
	err = kc_shm_dir_choose();
	if (err)
		return err;
	err = kc_shmdir_open(&kd.shm, kd.opts.shm_dir, &stale);
	if (err == -EBUSY) {
		kc_err("ring directory %s: busy, another kevent-cuse serves from it",
		       kd.opts.shm_dir);
		return KC_EXIT_UNAVAILABLE;
	}
	if (err) {
		kc_err("ring directory %s: %s (must be a directory of ours on tmpfs)",
		       kd.opts.shm_dir, strerror(-err));
		return KC_EXIT_OSERR;
	}
	if (stale)
		kc_info("removed %u stale ring object%s", stale, stale == 1 ? "" : "s");
	kd.paths.no_process_vm = kd.opts.no_process_vm;
	kd.paths.no_retry = kd.front->no_retry;
	kc_files_init();
	err = kd.front->serve();
	kc_shmdir_close(&kd.shm, 1);
	return err;
}
