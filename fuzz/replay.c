// SPDX-License-Identifier: GPL-2.0
/*
 * Corpus replay without libFuzzer (builds with gcc): every file named on
 * the command line, or found in a directory named there, is fed to
 * LLVMFuzzerTestOneInput() in a child process, and one TAP line per file
 * says whether it survived.  A child is used so that one crashing input
 * (abort() on an invariant, a sanitizer report) is reported and the rest
 * still run.  With no arguments it runs one input from stdin in process,
 * which is what an AFL++ build of this driver needs.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* 0: survived; else a TAP directive explaining the failure in why. */
static int run_child(const char *path, char *why, size_t whylen)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(why, whylen, "fork: %s", strerror(errno));
		return 1;
	}
	/* exit(), not _exit(): coverage profiles and LeakSanitizer run at exit */
	if (!pid)
		exit(run_file(path));
	if (waitpid(pid, &status, 0) < 0) {
		snprintf(why, whylen, "waitpid: %s", strerror(errno));
		return 1;
	}
	if (WIFSIGNALED(status)) {
		snprintf(why, whylen, "killed by signal %d", WTERMSIG(status));
		return 1;
	}
	if (WEXITSTATUS(status)) {
		snprintf(why, whylen, "exit status %d", WEXITSTATUS(status));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct names l = { 0 };
	unsigned int failed = 0;
	char why[128];
	size_t i, len;
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
	for (i = 0; i < l.n; i++) {
		if (run_child(l.v[i], why, sizeof(why))) {
			printf("not ok %zu - %s # %s\n", i + 1, l.v[i], why);
			failed++;
		} else {
			printf("ok %zu - %s\n", i + 1, l.v[i]);
		}
		free(l.v[i]);
	}
	free(l.v);
	printf("# %zu inputs, %u failed\n", l.n, failed);
	return failed ? 1 : 0;
}
