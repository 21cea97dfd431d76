// SPDX-License-Identifier: GPL-2.0
/*
 * The CUSE daemon out of file descriptors (an --extra program of the guest
 * run).  Every POLL kevent holds a duplicate of the caller's fd in the
 * daemon (A7), so a daemon whose RLIMIT_NOFILE is low runs out in the
 * middle of one ADD.  Lower it with prlimit(2), then ADD 4000 POLL and TIMER
 * kevents in one call several times over, fire some, close the queues, and
 * check that the failed entries say -EMFILE, the others work, and the
 * daemon is still alive and answering.  Exit 0 pass, 1 fail, 77 not the
 * CUSE backend.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <libkevent.h>

enum { NPIPES = 400, NK = 4000, ROUNDS = 4, DAEMON_NOFILE = 1024 };

static const char *dev;

static pid_t daemon_pid(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t pid = 0;

	while (d && (e = readdir(d)) != NULL && !pid) {
		char path[64], comm[32] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%.16s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strcmp(comm, "kevent-cuse\n"))
			pid = (pid_t)atoi(e->d_name);
		fclose(f);
	}
	if (d)
		closedir(d);
	return pid;
}

static int fail(const char *what)
{
	fprintf(stderr, "daemon-emfile: %s: %s\n", what, strerror(errno));
	return 1;
}

static struct ukevent entry(int i, int (*p)[2])
{
	struct ukevent uk;

	memset(&uk, 0, sizeof(uk));
	uk.user[0] = (__u32)i;
	if (i % 3 == 2) {
		uk.type = KEVENT_TIMER;
		uk.id.raw[0] = 1000;
		uk.event = KEVENT_TIMER_FIRED;
	} else {
		uk.type = KEVENT_POLL;
		uk.id.raw[0] = (__u32)p[i % NPIPES][0];
		uk.event = KEVENT_POLL_POLLIN;
	}
	return uk;
}

/* One ADD that runs the daemon out of fds: every answered entry is EMFILE. */
static int one_round(int r, int (*p)[2], struct ukevent *uk)
{
	struct ukevent out[64];
	int kfd = open(dev, O_RDWR | O_CLOEXEC), n, emfile = 0;

	if (kfd < 0)
		return fail("open");
	for (int i = 0; i < NK; i++)
		uk[i] = entry(i, p);
	n = kevent_ctl(kfd, KEVENT_CTL_ADD, NK, uk);
	if (n < 0)
		return fail("ADD");
	for (int i = 0; i < n; i++) {
		if ((int)uk[i].ret_data[1] == -EMFILE)
			emfile++;
		else if (uk[i].ret_flags & KEVENT_RET_BROKEN) {
			fprintf(stderr, "daemon-emfile: round %d: entry %u failed %d, not EMFILE\n", r,
				uk[i].user[0], (int)uk[i].ret_data[1]);
			return 1;
		}
	}
	for (int i = 0; i < NPIPES; i += 5)
		if (write(p[i][1], "x", 1) != 1)
			return fail("write");
	int got = kevent_get_events(kfd, 1, 64, 5000000000ULL, out, 0);
	printf("round %d: ADD of %d answered %d (%d -EMFILE), GET_EVENTS %d\n", r, NK, n, emfile, got);
	if (r == 0 && (emfile == 0 || got <= 0)) {
		fprintf(stderr, "daemon-emfile: round 0: %d EMFILE entries, %d events\n", emfile, got);
		return 1;
	}
	for (int i = 0; i < NPIPES; i++) {
		char buf[16];
		(void)!read(p[i][0], buf, sizeof(buf));
	}
	close(kfd);
	return 0;
}

int main(int argc, char **argv)
{
	static struct ukevent uk[NK];
	static int p[NPIPES][2];
	struct rlimit low = { DAEMON_NOFILE, DAEMON_NOFILE }, old;
	struct kevent_info info;
	pid_t pid;
	int kfd, rc = 0;

	(void)argv;
	if (argc > 1) {
		printf("usage: daemon-emfile (inside the guest, CUSE backend)\n");
		return 0;
	}
	dev = getenv("KEVENT_DEVICE") ? getenv("KEVENT_DEVICE") : KEVENT_DEVICE_DEFAULT;
	kfd = open(dev, O_RDWR | O_CLOEXEC);
	if (kfd < 0 || kevent_info(kfd, &info) < 0)
		return fail("open/INFO");
	close(kfd);
	if (info.backend != KEVENT_BACKEND_CUSE) {
		printf("daemon-emfile: backend %u is not the CUSE daemon: skip\n", info.backend);
		return 77;
	}
	pid = daemon_pid();
	if (!pid) {
		fprintf(stderr, "daemon-emfile: no kevent-cuse process\n");
		return 1;
	}
	if (prlimit(pid, RLIMIT_NOFILE, &low, &old) < 0)
		return fail("prlimit");
	for (int i = 0; i < NPIPES; i++)
		if (pipe2(p[i], O_CLOEXEC | O_NONBLOCK) < 0)
			return fail("pipe2");
	for (int r = 0; r < ROUNDS && !rc; r++)
		rc = one_round(r, p, uk);
	if (prlimit(pid, RLIMIT_NOFILE, &old, NULL) < 0)
		return fail("prlimit restore");
	if (kill(pid, 0) < 0) {
		fprintf(stderr, "daemon-emfile: the daemon died\n");
		return 1;
	}
	kfd = open(dev, O_RDWR | O_CLOEXEC);
	if (kfd < 0 || kevent_info(kfd, &info) < 0)
		return fail("the daemon no longer answers");
	close(kfd);
	if (!rc)
		printf("daemon-emfile: ok\n");
	return rc;
}
