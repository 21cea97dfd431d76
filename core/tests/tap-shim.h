/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A stand-in for the few Criterion macros the core tests use, printing TAP,
 * for the ThreadSanitizer build: Criterion 2.4's boxfort arena cannot be
 * mapped under TSan ("Could not initialize inheritable arena").  Tests run
 * in one process, in registration order; the first failed assertion ends
 * the run with "not ok", so the missing results fail the TAP plan too.
 */
#ifndef KEVENT_CORE_TESTS_TAP_SHIM_H
#define KEVENT_CORE_TESTS_TAP_SHIM_H

#include <stdio.h>
#include <stdlib.h>

struct shim_suite {
	void (*init)(void);
	void (*fini)(void);
	int timeout;
};

struct shim_test {
	const char *name;
	void (*fn)(void);
	const struct shim_suite *suite;
};

#define SHIM_MAX 256
static struct shim_test shim_tests[SHIM_MAX];
static int shim_ntests, shim_current;

static inline void shim_register(const char *name, void (*fn)(void), const struct shim_suite *s)
{
	if (shim_ntests < SHIM_MAX)
		shim_tests[shim_ntests++] = (struct shim_test){ name, fn, s };
}

static inline void shim_fail(const char *file, int line, const char *what)
{
	printf("not ok %d - %s\n# %s:%d: assertion failed: %s\n", shim_current + 1,
	       shim_tests[shim_current].name, file, line, what);
	fflush(stdout);
	exit(1);
}

#define TestSuite(suite, ...) \
	static const struct shim_suite shim_suite_##suite = { __VA_ARGS__ }

#define Test(suite, name)						\
	static void suite##_##name(void);				\
	__attribute__((constructor)) static void shim_reg_##suite##_##name(void) \
	{								\
		shim_register(#suite "::" #name, suite##_##name, &shim_suite_##suite); \
	}								\
	static void suite##_##name(void)

#define cr_assert(cond, ...) \
	do { if (!(cond)) shim_fail(__FILE__, __LINE__, #cond); } while (0)
#define cr_assert_eq(a, b, ...) cr_assert((a) == (b))

int main(void)
{
	printf("1..%d\n", shim_ntests);
	for (shim_current = 0; shim_current < shim_ntests; shim_current++) {
		const struct shim_test *t = &shim_tests[shim_current];

		if (t->suite->init)
			t->suite->init();
		t->fn();
		if (t->suite->fini)
			t->suite->fini();
		printf("ok %d - %s\n", shim_current + 1, t->name);
		fflush(stdout);
	}
	return 0;
}

#endif /* KEVENT_CORE_TESTS_TAP_SHIM_H */
