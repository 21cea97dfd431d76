// SPDX-License-Identifier: GPL-2.0
/*
 * Corpus replay without libFuzzer (builds with gcc): every file named on
 * the command line, or found in a directory named there, is fed to
 * LLVMFuzzerTestOneInput() in a child process, and one TAP line per file
 * says whether it survived.  A child is used so that one crashing input
 * (abort() on an invariant, a sanitizer report) is reported and the rest
 * still run; up to KFUZZ_JOBS children (default: the online CPUs) run at
 * once.  With no arguments it runs one input from stdin in process,
 * which is what an AFL++ build of this driver needs.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct names {
	char **v;
	size_t n, cap;
};

static void add_name(struct names *l, const char *dir, const char *base)
{
	size_t len = strlen(dir) + strlen(base) + 2;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v)
			exit(99);
	}
	l->v[l->n] = malloc(len);
	if (!l->v[l->n])
		exit(99);
	snprintf(l->v[l->n], len, "%s%s%s", dir, *dir ? "/" : "", base);
	l->n++;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_arg(struct names *l, const char *path)
{
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
		add_name(l, "", path);
		return;
	}
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			add_name(l, path, de->d_name);
	closedir(d);
}

static unsigned char *slurp(FILE *f, size_t *len)
{
	size_t cap = 4096, n = 0, r;
	unsigned char *buf = malloc(cap);

	while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
		}
	}
	*len = n;
	return buf;
}

static int run_file(const char *path)
{
	size_t len;
	unsigned char *buf;
	FILE *f = fopen(path, "rb");

	if (!f)
		return 98;
	buf = slurp(f, &len);
	fclose(f);
	if (!buf)
		return 99;
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

/*
 * A hung input is killed by its own alarm, so the run names it instead of
 * reaching the test's timeout with no name (KFUZZ_INPUT_TIMEOUT seconds,
 * default 60; an input takes milliseconds, even under ASan on a loaded
 * machine).  abort(): a core dump or a debugger shows where it hung.
 */
static const char *running_path;

static void on_hang(int sig)
{
	static const char msg[] = "kfuzz-replay: still running at the input's timeout: ";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0 ||
	    write(2, running_path, strlen(running_path)) < 0 || write(2, "\n", 1) < 0)
		_exit(124);
	signal(SIGABRT, SIG_DFL);
	abort();
}

static unsigned int input_timeout(void)
{
	const char *env = getenv("KFUZZ_INPUT_TIMEOUT");
	long s = env ? atol(env) : 60;

	return s < 1 ? 1 : (unsigned int)s;
}

/* A child per input: one that aborts or dies is reported, the rest still run. */
static pid_t start_child(const char *path)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (!pid) {
		running_path = path;
		signal(SIGALRM, on_hang);
		alarm(input_timeout());
		/* exit(), not _exit(): coverage profiles and LeakSanitizer run at exit */
		exit(run_file(path));
	}
	return pid;
}

/* 0: survived; else a TAP directive explaining the failure in why. */
static int judge(int status, char *why, size_t whylen)
{
	if (WIFSIGNALED(status)) {
		snprintf(why, whylen, "killed by signal %d%s", WTERMSIG(status),
			 WTERMSIG(status) == SIGABRT ? " (an invariant, a sanitizer or a hang: see its stderr)" : "");
		return 1;
	}
	if (WEXITSTATUS(status)) {
		snprintf(why, whylen, "exit status %d", WEXITSTATUS(status));
		return 1;
	}
	return 0;
}

/*
 * Inputs are independent processes, so up to jobs of them run at once
 * (KFUZZ_JOBS, default the online CPUs); the TAP lines still come out in
 * name order, each as soon as every input before it is done.
 */
struct run {
	struct names *l;
	pid_t *pid;		/* 0: not started or done */
	int *status;		/* -1: not done */
	size_t next, printed;
	unsigned int running, failed;
};

static unsigned int replay_jobs(void)
{
	const char *env = getenv("KFUZZ_JOBS");
	long n = env ? atol(env) : sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 64 ? 64 : (unsigned int)n;
}

static void print_done(struct run *r)
{
	char why[128];

	while (r->printed < r->l->n && r->status[r->printed] != -1) {
		size_t i = r->printed++;

		if (judge(r->status[i], why, sizeof(why))) {
			printf("not ok %zu - %s # %s\n", i + 1, r->l->v[i], why);
			r->failed++;
		} else {
			printf("ok %zu - %s\n", i + 1, r->l->v[i]);
		}
		free(r->l->v[i]);
	}
}

static void reap_one(struct run *r)
{
	int status;
	pid_t pid = wait(&status);

	if (pid < 0) {
		perror("kfuzz-replay: wait");
		exit(99);
	}
	for (size_t i = r->printed; i < r->next; i++)
		if (r->pid[i] == pid) {
			r->pid[i] = 0;
			r->status[i] = status;
			r->running--;
			return;
		}
}

static unsigned int replay_all(struct names *l)
{
	struct run r = { .l = l };
	unsigned int jobs = replay_jobs();

	r.pid = calloc(l->n + 1, sizeof(*r.pid));
	r.status = malloc((l->n + 1) * sizeof(*r.status));
	if (!r.pid || !r.status)
		exit(99);
	for (size_t i = 0; i < l->n; i++)
		r.status[i] = -1;
	while (r.printed < l->n) {
		while (r.running < jobs && r.next < l->n) {
			r.pid[r.next] = start_child(l->v[r.next]);
			if (r.pid[r.next] < 0) {
				perror("kfuzz-replay: fork");
				exit(99);
			}
			r.next++;
			r.running++;
		}
		reap_one(&r);
		print_done(&r);
	}
	free(r.pid);
	free(r.status);
	return r.failed;
}

int main(int argc, char **argv)
{
	struct names l = { 0 };
	unsigned int failed;
	size_t len;
	int a;

	if (argc < 2) {
		unsigned char *buf = slurp(stdin, &len);

		if (buf)
			LLVMFuzzerTestOneInput(buf, len);
		free(buf);
		return 0;
	}
	for (a = 1; a < argc; a++)
		add_arg(&l, argv[a]);
	qsort(l.v, l.n, sizeof(*l.v), by_name);
	printf("1..%zu\n", l.n);
	failed = replay_all(&l);
	free(l.v);
	printf("# %zu inputs, %u failed\n", l.n, failed);
	return failed ? 1 : 0;
}
