// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: KUnit runner for the host build
 *
 * Runs the suites that KUnit test files register through
 * <kunit/test.h> (the host shim) and prints TAP version 13: the plan
 * first, then "ok N - suite.case" or "not ok N - suite.case", with a
 * ": description" for each parameter of a parameterised case, and the
 * failure details as "#" lines before the result they belong to.
 *
 * Usage: <program> [--help] [FILTER]. FILTER keeps the cases whose
 * "suite.case" name contains it. The exit status is 0 when every test
 * passed, 1 when one failed and 2 for a usage error.
 */

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kunit/test.h>

#define KUNIT_HOST_MAX_SUITES	16

/**
 * struct kunit_host_action - a deferred action of the running case
 * @action: what to run
 * @ctx: its argument
 * @next: the action registered before this one
 */
struct kunit_host_action {
	kunit_action_t *action;
	void *ctx;
	struct kunit_host_action *next;
};

static struct kunit_suite *kunit_host_suites_all[KUNIT_HOST_MAX_SUITES];
static unsigned int kunit_host_num_suites;
static const char *kunit_host_filter;
static unsigned int kunit_host_tests_run;
static unsigned int kunit_host_tests_failed;

/* Static, so it keeps its contents across longjmp(). */
static struct kunit kunit_host_current;

/**
 * kunit_host_register() - add a suite to the run
 * @suite: the suite; called from the constructor kunit_test_suites() makes
 */
void kunit_host_register(struct kunit_suite *suite)
{
	if (kunit_host_num_suites == KUNIT_HOST_MAX_SUITES) {
		fprintf(stderr, "kunit: more than %d suites\n",
			KUNIT_HOST_MAX_SUITES);
		exit(2);
	}
	kunit_host_suites_all[kunit_host_num_suites++] = suite;
}

/**
 * kunit_host_report() - mark the case failed and say where and why
 * @test: the running case
 * @file: source file of the check
 * @line: its line
 * @fmt: printf format of the reason
 */
void kunit_host_report(struct kunit *test, const char *file, int line,
		       const char *fmt, ...)
{
	va_list ap;

	test->failed = true;
	printf("#   %s:%d: ", file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/**
 * kunit_host_note() - print a detail line of a failure report
 * @fmt: printf format
 */
void kunit_host_note(const char *fmt, ...)
{
	va_list ap;

	fputs("#       ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/**
 * kunit_host_dump_diff() - show where two buffers first differ
 * @left: one buffer
 * @right: the other
 * @size: bytes compared; the buffers are known to differ
 */
void kunit_host_dump_diff(const void *left, const void *right, size_t size)
{
	const u8 *l = left, *r = right;
	size_t i;

	for (i = 0; i < size && l[i] == r[i]; i++)
		;
	if (i < size)
		kunit_host_note("first difference at byte %zu: 0x%02x != 0x%02x",
				i, l[i], r[i]);
}

/**
 * kunit_host_abort() - leave the running case after a failed assertion
 * @test: the running case
 */
void kunit_host_abort(struct kunit *test)
{
	longjmp(test->abort, 1);
}

/**
 * kunit_add_action() - run @action(@ctx) when the case ends
 * @test: the running case
 * @action: what to run
 * @ctx: its argument
 *
 * Return: 0, or -ENOMEM.
 */
int kunit_add_action(struct kunit *test, kunit_action_t *action, void *ctx)
{
	struct kunit_host_action *a = malloc(sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->action = action;
	a->ctx = ctx;
	a->next = test->actions;
	test->actions = a;
	return 0;
}

/**
 * kunit_add_action_or_reset() - kunit_add_action(), or run @action now
 * @test: the running case
 * @action: what to run
 * @ctx: its argument
 *
 * Return: 0, or -ENOMEM after running @action.
 */
int kunit_add_action_or_reset(struct kunit *test, kunit_action_t *action,
			      void *ctx)
{
	int ret = kunit_add_action(test, action, ctx);

	if (ret)
		action(ctx);
	return ret;
}

static void kunit_host_free(void *p)
{
	free(p);
}

/**
 * kunit_kmalloc_array() - allocate memory freed when the case ends
 * @test: the running case
 * @n: number of elements
 * @size: size of one
 * @gfp: %__GFP_ZERO to zero it; other flags are ignored
 *
 * Return: the memory, or NULL.
 */
void *kunit_kmalloc_array(struct kunit *test, size_t n, size_t size,
			  gfp_t gfp)
{
	void *p;

	if (!n || !size || n > SIZE_MAX / size)
		return NULL;
	p = gfp & __GFP_ZERO ? calloc(n, size) : malloc(n * size);
	if (p && kunit_add_action_or_reset(test, kunit_host_free, p))
		return NULL;
	return p;
}

static void kunit_host_run_actions(struct kunit *test)
{
	struct kunit_host_action *a;

	while (test->actions) {
		a = test->actions;
		test->actions = a->next;
		a->action(a->ctx);
		free(a);
	}
}

static bool kunit_host_selected(const struct kunit_suite *suite,
				const struct kunit_case *tc)
{
	char name[512];

	if (!kunit_host_filter)
		return true;
	snprintf(name, sizeof(name), "%s.%s", suite->name, tc->name);
	return strstr(name, kunit_host_filter);
}

/* Runs one case, or one parameter of it; true if it passed. */
static bool kunit_host_run_one(struct kunit_suite *suite,
			       struct kunit_case *tc, const void *param)
{
	struct kunit *test = &kunit_host_current;

	memset(test, 0, sizeof(*test));
	test->param_value = param;
	if (!setjmp(test->abort)) {
		if (suite->init && suite->init(test))
			kunit_host_report(test, __FILE__, __LINE__,
					  "init of suite %s failed",
					  suite->name);
		else
			tc->run_case(test);
	}
	if (suite->exit)
		suite->exit(test);
	kunit_host_run_actions(test);
	return !test->failed;
}

static void kunit_host_result(bool ok, const struct kunit_suite *suite,
			      const struct kunit_case *tc, const char *desc)
{
	kunit_host_tests_run++;
	if (!ok)
		kunit_host_tests_failed++;
	printf("%s %u - %s.%s%s%s\n", ok ? "ok" : "not ok",
	       kunit_host_tests_run, suite->name, tc->name,
	       desc[0] ? ": " : "", desc);
}

static unsigned int kunit_host_count(const struct kunit_case *tc)
{
	char desc[KUNIT_PARAM_DESC_SIZE];
	const void *param;
	unsigned int n = 0;

	if (!tc->generate_params)
		return 1;
	for (param = tc->generate_params(NULL, desc); param;
	     param = tc->generate_params(param, desc))
		n++;
	return n;
}

static void kunit_host_run_case(struct kunit_suite *suite,
				struct kunit_case *tc)
{
	char desc[KUNIT_PARAM_DESC_SIZE] = "";
	const void *param;
	unsigned int n = 0;

	if (!tc->generate_params) {
		kunit_host_result(kunit_host_run_one(suite, tc, NULL), suite,
				  tc, "");
		return;
	}
	for (param = tc->generate_params(NULL, desc); param;
	     param = tc->generate_params(param, desc)) {
		n++;
		if (!desc[0])
			snprintf(desc, sizeof(desc), "param-%u", n);
		kunit_host_result(kunit_host_run_one(suite, tc, param), suite,
				  tc, desc);
		desc[0] = '\0';
	}
}

static void kunit_host_run_suite(struct kunit_suite *suite)
{
	struct kunit_case *tc;

	printf("# suite %s\n", suite->name);
	if (suite->suite_init && suite->suite_init(suite)) {
		printf("#   init of suite %s failed\n", suite->name);
		for (tc = suite->test_cases; tc->run_case; tc++)
			if (kunit_host_selected(suite, tc))
				kunit_host_result(false, suite, tc, "");
		return;
	}
	for (tc = suite->test_cases; tc->run_case; tc++)
		if (kunit_host_selected(suite, tc))
			kunit_host_run_case(suite, tc);
	if (suite->suite_exit)
		suite->suite_exit(suite);
}

static unsigned int kunit_host_plan(void)
{
	struct kunit_case *tc;
	unsigned int i, n = 0;

	for (i = 0; i < kunit_host_num_suites; i++)
		for (tc = kunit_host_suites_all[i]->test_cases; tc->run_case;
		     tc++)
			if (kunit_host_selected(kunit_host_suites_all[i], tc))
				n += kunit_host_count(tc);
	return n;
}

int main(int argc, char **argv)
{
	unsigned int i;

	if (argc > 2 || (argc == 2 && (!strcmp(argv[1], "--help") ||
				       !strcmp(argv[1], "-h")))) {
		printf("usage: %s [--help] [FILTER]\n"
		       "Runs the KUnit suites built into this program and prints TAP.\n"
		       "FILTER keeps the cases whose suite.case name contains it.\n",
		       argv[0]);
		return argc > 2 ? 2 : 0;
	}
	kunit_host_filter = argc == 2 ? argv[1] : NULL;
	setvbuf(stdout, NULL, _IOLBF, 0);

	printf("TAP version 13\n1..%u\n", kunit_host_plan());
	for (i = 0; i < kunit_host_num_suites; i++)
		kunit_host_run_suite(kunit_host_suites_all[i]);
	printf("# %u tests, %u passed, %u failed\n", kunit_host_tests_run,
	       kunit_host_tests_run - kunit_host_tests_failed,
	       kunit_host_tests_failed);
	return kunit_host_tests_failed ? 1 : 0;
}
