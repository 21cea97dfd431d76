// SPDX-License-Identifier: GPL-2.0
/*
 * design.md B3 with a real FUSE server: files on a FUSE mount are refused by
 * every fd origin without any request reaching the server.  The server
 * counts its requests and, once the client has opened its files, stops
 * answering: an origin that stat()ed, statfs()ed or polled the file would
 * hang here (and the test would time out) instead of failing cleanly.
 */
#define FUSE_USE_VERSION 35
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <pthread.h>
#include <time.h>

#include <fuse.h>
#include <criterion/criterion.h>

#include "origins.h"
#include "recorder.h"

struct shared {
	volatile int requests;
	volatile int hang;
};

static struct shared *sh;
static char mnt[64];
static pid_t server;

static void stop_server(void)
{
	if (server <= 0)
		return;	/* never kill(-1, ...) */
	kill(server, SIGKILL);
	waitpid(server, NULL, 0);
	server = 0;
}

static void server_request(void)
{
	__atomic_add_fetch(&sh->requests, 1, __ATOMIC_SEQ_CST);
	while (sh->hang)
		pause();	/* never answers; killed at the end */
}

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	cfg->attr_timeout = 0;
	cfg->entry_timeout = 0;
	cfg->negative_timeout = 0;
	return NULL;
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	server_request();
	memset(st, 0, sizeof(*st));
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (!strcmp(path, "/f")) {
		st->st_mode = S_IFREG | 0644;
		st->st_nlink = 1;
		return 0;
	}
	return -ENOENT;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	server_request();
	return 0;
}

static int fs_opendir(const char *path, struct fuse_file_info *fi)
{
	server_request();
	return 0;
}

static const struct fuse_operations fs_ops = {
	.init = fs_init,
	.getattr = fs_getattr,
	.open = fs_open,
	.opendir = fs_opendir,
};

static void run_server(void)
{
	char *argv[] = { "korigins-fuse", mnt, "-f", "-s", NULL };

	_exit(fuse_main(4, argv, &fs_ops, NULL));
}

static int mounted(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, mnt) && strstr(line, " - fuse");
	fclose(f);
	return found;
}

static void setup(void)
{
	int i;

	signal(SIGPIPE, SIG_IGN);
	if (access("/dev/fuse", R_OK | W_OK) < 0)
		cr_skip_test("no usable /dev/fuse: %s", strerror(errno));
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(sh, MAP_FAILED);
	strcpy(mnt, "/tmp/korigins-fuseXXXXXX");
	cr_assert_neq(mkdtemp(mnt), NULL);
	server = fork();
	cr_assert_geq(server, 0);
	if (server == 0)
		run_server();
	for (i = 0; i < 500 && !mounted(); i++)
		usleep(10000);
	if (!mounted()) {
		stop_server();
		rmdir(mnt);
		cr_skip_test("could not mount a FUSE filesystem on %s", mnt);
	}
	rec_setup(0);
}

static void teardown(void)
{
	/* Kill the hung server first: that aborts the connection. */
	stop_server();
	umount2(mnt, MNT_DETACH);
	rmdir(mnt);
	rec_teardown();
}

TestSuite(refused, .init = setup, .fini = teardown);

static int add(__u32 type, int fd, __u32 event)
{
	struct ukevent uk = { .id.raw = { (__u32)fd, 0 }, .type = type, .event = event };
	struct kcaller self = rec_self();
	struct korigin_result res;
	struct kitem k;
	int ret = rec_add(&k, &uk, &self, &res);

	if (ret == 0)
		rec_remove(&k);
	return ret;
}

struct adds {
	int fd, dfd;
	int ret[4];
	int done;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

static void *do_adds(void *arg)
{
	struct adds *a = arg;

	a->ret[0] = add(KEVENT_POLL, a->fd, KEVENT_POLL_POLLIN);
	a->ret[1] = add(KEVENT_SOCKET, a->fd, KEVENT_SOCKET_RECV);
	a->ret[2] = add(KEVENT_INODE, a->fd, KEVENT_INODE_REMOVE);
	a->ret[3] = add(KEVENT_INODE, a->dfd, KEVENT_INODE_CREATE);
	pthread_mutex_lock(&a->lock);
	a->done = 1;
	pthread_cond_signal(&a->cond);
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

/* Runs the ADDs on a thread; a hung one is a failure, not a test timeout. */
static int run_adds(struct adds *a)
{
	struct timespec ts;
	pthread_t th;
	int done;

	cr_assert_eq(pthread_create(&th, NULL, do_adds, a), 0);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	pthread_mutex_lock(&a->lock);
	while (!a->done && pthread_cond_timedwait(&a->cond, &a->lock, &ts) == 0)
		;
	done = a->done;
	pthread_mutex_unlock(&a->lock);
	if (!done)
		stop_server();	/* aborts the connection: the stuck call returns */
	pthread_join(th, NULL);
	return done;
}

Test(refused, fuse_files_never_reach_the_server)
{
	struct adds a = {
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cond = PTHREAD_COND_INITIALIZER,
	};
	char path[128];
	int before;

	snprintf(path, sizeof(path), "%s/f", mnt);
	a.fd = open(path, O_RDONLY);
	cr_assert_geq(a.fd, 0, "open %s: %s", path, strerror(errno));
	a.dfd = open(mnt, O_RDONLY | O_DIRECTORY);
	cr_assert_geq(a.dfd, 0);
	sh->hang = 1;
	before = sh->requests;
	cr_expect(run_adds(&a), "an origin blocked on the FUSE server (B3)");
	cr_expect_eq(a.ret[0], -EINVAL, "poll: %d", a.ret[0]);
	cr_expect_eq(a.ret[1], -EINVAL, "socket: %d", a.ret[1]);
	cr_expect_eq(a.ret[2], -EINVAL, "inode on a file: %d", a.ret[2]);
	cr_expect_eq(a.ret[3], -EINVAL, "inode on the mount: %d", a.ret[3]);
	cr_expect_eq(sh->requests, before, "%d requests reached the FUSE server",
		     sh->requests - before);
	stop_server();	/* before close(): a flush would wait for it */
	close(a.fd);
	close(a.dfd);
}
