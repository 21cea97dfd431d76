// SPDX-License-Identifier: GPL-2.0
/*
 * design.md B3 through the device (an --extra program of the guest run, both
 * backends): a FUSE filesystem whose server stops answering once the client
 * has opened its files.  POLL, SOCKET and INODE kevents on those files must
 * fail per entry with -EINVAL, promptly, with no request reaching the
 * server; the backend must keep answering others meanwhile.  A backend that
 * stat()ed, statfs()ed or polled such a file would hang on the server.
 * Exit 0 pass, 1 fail, 77 no FUSE here.
 */
#define FUSE_USE_VERSION 35
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libkevent.h>

struct shared {
	volatile int requests;
	volatile int hang;
};

static struct shared *sh;
static char mnt[64] = "/tmp/kevent-fuseXXXXXX";
static pid_t server;

/* Every request counts; once hung, none is ever answered. */
static void server_request(void)
{
	__atomic_add_fetch(&sh->requests, 1, __ATOMIC_SEQ_CST);
	while (sh->hang)
		pause();
}

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	cfg->attr_timeout = cfg->entry_timeout = cfg->negative_timeout = 0;
	return NULL;
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	server_request();
	memset(st, 0, sizeof(*st));
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else if (!strcmp(path, "/f")) {
		st->st_mode = S_IFREG | 0644;
		st->st_nlink = 1;
	} else {
		return -ENOENT;
	}
	return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	(void)path, (void)fi;
	server_request();
	return 0;
}

static const struct fuse_operations fs_ops = {
	.init = fs_init, .getattr = fs_getattr, .open = fs_open, .opendir = fs_open,
};

static int mounted(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, mnt) && strstr(line, " - fuse");
	if (f)
		fclose(f);
	return found;
}

static void stop_server(void)
{
	if (server > 0) {
		kill(server, SIGKILL);	/* aborts the connection: stuck calls return */
		waitpid(server, NULL, 0);
		server = 0;
	}
	umount2(mnt, MNT_DETACH);
	rmdir(mnt);
}

static int start_server(void)
{
	char *argv[] = { "kevent-fuse-hang", mnt, "-f", "-s", NULL };

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED || access("/dev/fuse", R_OK | W_OK) || !mkdtemp(mnt))
		return -1;
	server = fork();
	if (server == 0)
		_exit(fuse_main(4, argv, &fs_ops, NULL));
	for (int i = 0; i < 500 && server > 0 && !mounted(); i++)
		usleep(10000);
	return mounted() ? 0 : -1;
}

/* One ADD of the four entries on a watchdog: a hang fails, it never blocks the run. */
static int add_refused(const char *dev, int fd, int dfd)
{
	struct ukevent uk[4];
	__u32 type[4] = { KEVENT_POLL, KEVENT_SOCKET, KEVENT_INODE, KEVENT_INODE };
	__u32 ev[4] = { KEVENT_POLL_POLLIN, KEVENT_SOCKET_RECV, KEVENT_INODE_REMOVE, KEVENT_INODE_CREATE };
	int kfd = open(dev, O_RDWR | O_CLOEXEC), n, bad = 0;
	struct kevent_info info;

	if (kfd < 0 || kevent_info(kfd, &info) < 0) {
		perror("fuse-never-answers: open the device");
		return 1;
	}
	memset(uk, 0, sizeof(uk));
	for (int i = 0; i < 4; i++) {
		uk[i].type = type[i];
		uk[i].id.raw[0] = (__u32)(i == 3 ? dfd : fd);
		uk[i].event = ev[i];
		uk[i].user[0] = (__u32)i;
	}
	alarm(20);	/* SIGALRM kills us: the harness reports a failure */
	n = kevent_ctl(kfd, KEVENT_CTL_ADD, 4, uk);
	alarm(0);
	for (int i = 0; i < n; i++) {
		/* A type the backend lacks fails -EINVAL too: same answer. */
		if ((int)uk[i].ret_data[1] != -EINVAL) {
			fprintf(stderr, "fuse-never-answers: entry %u (type %u): ret_data[1] %d, want -EINVAL\n",
				uk[i].user[0], uk[i].type, (int)uk[i].ret_data[1]);
			bad = 1;
		}
	}
	if (n != 4) {
		fprintf(stderr, "fuse-never-answers: ADD answered %d of 4 (%s)\n", n,
			n < 0 ? strerror(errno) : "some were registered");
		bad = 1;
	}
	close(kfd);
	return bad;
}

int main(int argc, char **argv)
{
	const char *dev = getenv("KEVENT_DEVICE") ? getenv("KEVENT_DEVICE") : KEVENT_DEVICE_DEFAULT;
	char path[128];
	int fd, dfd, before, rc;

	(void)argv;
	if (argc > 1) {
		printf("usage: fuse-never-answers (inside the guest, as root)\n");
		return 0;
	}
	signal(SIGPIPE, SIG_IGN);
	if (start_server() < 0) {
		printf("fuse-never-answers: cannot mount a FUSE filesystem here: skip\n");
		stop_server();
		return 77;
	}
	snprintf(path, sizeof(path), "%s/f", mnt);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	dfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || dfd < 0) {
		perror("fuse-never-answers: open on the mount");
		stop_server();
		return 1;
	}
	sh->hang = 1;
	before = sh->requests;
	rc = add_refused(dev, fd, dfd);
	if (sh->requests != before) {
		fprintf(stderr, "fuse-never-answers: %d requests reached the server\n", sh->requests - before);
		rc = 1;
	}
	stop_server();	/* before close(): a flush would wait for the server */
	close(fd);
	close(dfd);
	if (!rc)
		printf("fuse-never-answers: ok, all four entries -EINVAL, no request reached the server\n");
	return rc;
}
