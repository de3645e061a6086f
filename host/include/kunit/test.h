/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: KUnit in userspace
 *
 * Just enough of the KUnit API to build an in-kernel KUnit test file
 * unchanged as a userspace program: suites, cases, parameterised cases,
 * the EXPECT and ASSERT families the project's tests use, test-managed
 * allocations and deferred actions. host/lib/kunit.c runs the suites and
 * prints TAP.
 *
 * A failed ASSERT leaves the case with longjmp(), where the kernel ends
 * the test thread; either way the rest of the case is skipped and its
 * resources are released.
 */
#ifndef HOST_KUNIT_TEST_H
#define HOST_KUNIT_TEST_H

#include <linux/array_size.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/types.h>
#include <setjmp.h>
#include <stdio.h>

#define KUNIT_PARAM_DESC_SIZE	128

#ifndef __printf
#define __printf(fmt, args)	__attribute__((format(printf, fmt, args)))
#endif

struct kunit;

/**
 * typedef kunit_action_t - a deferred action, run when the case ends
 */
typedef void (kunit_action_t)(void *);

/**
 * struct kunit_case - one test case
 * @run_case: the test function
 * @name: its name
 * @generate_params: for a parameterised case, returns the parameter after
 *	@prev (the first one for NULL) and may describe it in @desc; NULL
 *	when there are no more
 */
struct kunit_case {
	void (*run_case)(struct kunit *test);
	const char *name;
	const void *(*generate_params)(const void *prev, char *desc);
};

/**
 * struct kunit_suite - a named set of cases
 * @name: suite name
 * @suite_init: run once before the first case, may be NULL
 * @suite_exit: run once after the last case, may be NULL
 * @init: run before each case (each parameter), may be NULL
 * @exit: run after each case, also after a failed ASSERT, may be NULL
 * @test_cases: the cases, ended by an empty entry
 */
struct kunit_suite {
	const char name[256];
	int (*suite_init)(struct kunit_suite *suite);
	void (*suite_exit)(struct kunit_suite *suite);
	int (*init)(struct kunit *test);
	void (*exit)(struct kunit *test);
	struct kunit_case *test_cases;
};

struct kunit_host_action;

/**
 * struct kunit - state of the running case
 * @priv: for the test's own use
 * @param_value: current parameter of a parameterised case
 * @failed: an expectation or assertion failed
 * @abort: where a failed assertion jumps to
 * @actions: deferred actions, newest first
 */
struct kunit {
	void *priv;
	const void *param_value;
	bool failed;
	jmp_buf abort;
	struct kunit_host_action *actions;
};

void kunit_host_register(struct kunit_suite *suite);
__printf(4, 5)
void kunit_host_report(struct kunit *test, const char *file, int line,
		       const char *fmt, ...);
__printf(1, 2)
void kunit_host_note(const char *fmt, ...);
void kunit_host_dump_diff(const void *left, const void *right, size_t size);
__attribute__((noreturn)) void kunit_host_abort(struct kunit *test);

int kunit_add_action(struct kunit *test, kunit_action_t *action, void *ctx);
int kunit_add_action_or_reset(struct kunit *test, kunit_action_t *action,
			      void *ctx);
void *kunit_kmalloc_array(struct kunit *test, size_t n, size_t size,
			  gfp_t gfp);

static inline void *kunit_kmalloc(struct kunit *test, size_t size, gfp_t gfp)
{
	return kunit_kmalloc_array(test, 1, size, gfp);
}

static inline void *kunit_kzalloc(struct kunit *test, size_t size, gfp_t gfp)
{
	return kunit_kmalloc_array(test, 1, size, gfp | __GFP_ZERO);
}

static inline void *kunit_kcalloc(struct kunit *test, size_t n, size_t size,
				  gfp_t gfp)
{
	return kunit_kmalloc_array(test, n, size, gfp | __GFP_ZERO);
}

#define KUNIT_CASE(fn)	{ .run_case = fn, .name = #fn }
/* The VM skips slow cases (kunit.filter); the host tier runs them all. */
#define KUNIT_CASE_SLOW(fn)	KUNIT_CASE(fn)
#define KUNIT_CASE_PARAM(fn, gen)					\
	{ .run_case = fn, .name = #fn, .generate_params = gen }

/* Walks @array; @get_desc, if not NULL, names each entry. */
#define KUNIT_ARRAY_PARAM(name, array, get_desc)			\
	static const void *name##_gen_params(const void *prev, char *desc) \
	{								\
		__typeof__((array)[0]) *next =				\
			prev ? (__typeof__(next))prev + 1 : (array);	\
		void (*describe)(__typeof__(next), char *) = get_desc;	\
									\
		if ((size_t)(next - (array)) >= ARRAY_SIZE(array))	\
			return NULL;					\
		if (describe)						\
			describe(next, desc);				\
		return next;						\
	}

/* Walks @array, naming each entry by its string member @member. */
#define KUNIT_ARRAY_PARAM_DESC(name, array, member)			\
	static const void *name##_gen_params(const void *prev, char *desc) \
	{								\
		__typeof__((array)[0]) *next =				\
			prev ? (__typeof__(next))prev + 1 : (array);	\
									\
		if ((size_t)(next - (array)) >= ARRAY_SIZE(array))	\
			return NULL;					\
		snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", next->member); \
		return next;						\
	}

#define kunit_test_suites(...)						\
	static struct kunit_suite *kunit_host_suites[] = { __VA_ARGS__ }; \
	__attribute__((constructor)) static void kunit_host_add_suites(void) \
	{								\
		size_t i;						\
									\
		for (i = 0; i < ARRAY_SIZE(kunit_host_suites); i++)	\
			kunit_host_register(kunit_host_suites[i]);	\
	}

#define kunit_test_suite(suite)	kunit_test_suites(&(suite))

/* Shared tail of every check: the optional message, then ASSERT's jump. */
#define KUNIT_HOST_FAILED(test, fatal, ...) do {			\
	__VA_OPT__(kunit_host_note(__VA_ARGS__);)			\
	if (fatal)							\
		kunit_host_abort(test);					\
} while (0)

#define KUNIT_HOST_BINARY(test, fatal, left, op, right, ...) do {	\
	const __typeof__(left) host_left = (left);			\
	const __typeof__(right) host_right = (right);			\
									\
	if (!(host_left op host_right)) {				\
		kunit_host_report(test, __FILE__, __LINE__,		\
				  "Expected %s %s %s, but",		\
				  #left, #op, #right);			\
		kunit_host_note("%s == %lld (0x%llx)", #left,		\
				(long long)host_left,			\
				(unsigned long long)host_left);		\
		kunit_host_note("%s == %lld (0x%llx)", #right,		\
				(long long)host_right,			\
				(unsigned long long)host_right);	\
		KUNIT_HOST_FAILED(test, fatal, ##__VA_ARGS__);		\
	}								\
} while (0)

#define KUNIT_HOST_BOOL(test, fatal, cond, want, ...) do {		\
	if ((cond) ? !(want) : (want)) {				\
		kunit_host_report(test, __FILE__, __LINE__,		\
				  "Expected %s to be %s", #cond,	\
				  (want) ? "true" : "false");		\
		KUNIT_HOST_FAILED(test, fatal, ##__VA_ARGS__);		\
	}								\
} while (0)

#define KUNIT_HOST_MEMEQ(test, fatal, left, right, size, ...) do {	\
	const void *host_left = (left);					\
	const void *host_right = (right);				\
	size_t host_size = (size);					\
									\
	if (memcmp(host_left, host_right, host_size)) {			\
		kunit_host_report(test, __FILE__, __LINE__,		\
				  "Expected %s == %s (%zu bytes)",	\
				  #left, #right, host_size);		\
		kunit_host_dump_diff(host_left, host_right, host_size);	\
		KUNIT_HOST_FAILED(test, fatal, ##__VA_ARGS__);		\
	}								\
} while (0)

#define KUNIT_HOST_STREQ(test, fatal, left, right, ...) do {		\
	const char *host_left = (left);					\
	const char *host_right = (right);				\
									\
	if (strcmp(host_left, host_right)) {				\
		kunit_host_report(test, __FILE__, __LINE__,		\
				  "Expected %s == %s, but \"%s\" != \"%s\"", \
				  #left, #right, host_left, host_right); \
		KUNIT_HOST_FAILED(test, fatal, ##__VA_ARGS__);		\
	}								\
} while (0)

#define KUNIT_HOST_NOT_NULL(test, fatal, ptr, ...) do {			\
	if (!(ptr)) {							\
		kunit_host_report(test, __FILE__, __LINE__,		\
				  "Expected %s is not NULL", #ptr);	\
		KUNIT_HOST_FAILED(test, fatal, ##__VA_ARGS__);		\
	}								\
} while (0)

#define KUNIT_FAIL(test, fmt, ...)					\
	kunit_host_report(test, __FILE__, __LINE__, fmt, ##__VA_ARGS__)

#define KUNIT_EXPECT_EQ(t, l, r)	KUNIT_HOST_BINARY(t, false, l, ==, r)
#define KUNIT_EXPECT_NE(t, l, r)	KUNIT_HOST_BINARY(t, false, l, !=, r)
#define KUNIT_EXPECT_LT(t, l, r)	KUNIT_HOST_BINARY(t, false, l, <, r)
#define KUNIT_EXPECT_LE(t, l, r)	KUNIT_HOST_BINARY(t, false, l, <=, r)
#define KUNIT_EXPECT_GT(t, l, r)	KUNIT_HOST_BINARY(t, false, l, >, r)
#define KUNIT_EXPECT_GE(t, l, r)	KUNIT_HOST_BINARY(t, false, l, >=, r)
#define KUNIT_EXPECT_TRUE(t, c)		KUNIT_HOST_BOOL(t, false, c, true)
#define KUNIT_EXPECT_FALSE(t, c)	KUNIT_HOST_BOOL(t, false, c, false)
#define KUNIT_EXPECT_MEMEQ(t, l, r, n)	KUNIT_HOST_MEMEQ(t, false, l, r, n)
#define KUNIT_EXPECT_STREQ(t, l, r)	KUNIT_HOST_STREQ(t, false, l, r)
#define KUNIT_EXPECT_NOT_NULL(t, p)	KUNIT_HOST_NOT_NULL(t, false, p)

#define KUNIT_EXPECT_EQ_MSG(t, l, r, ...) \
	KUNIT_HOST_BINARY(t, false, l, ==, r, __VA_ARGS__)
#define KUNIT_EXPECT_NE_MSG(t, l, r, ...) \
	KUNIT_HOST_BINARY(t, false, l, !=, r, __VA_ARGS__)
#define KUNIT_EXPECT_LT_MSG(t, l, r, ...) \
	KUNIT_HOST_BINARY(t, false, l, <, r, __VA_ARGS__)
#define KUNIT_EXPECT_TRUE_MSG(t, c, ...) \
	KUNIT_HOST_BOOL(t, false, c, true, __VA_ARGS__)

#define KUNIT_ASSERT_EQ(t, l, r)	KUNIT_HOST_BINARY(t, true, l, ==, r)
#define KUNIT_ASSERT_NE(t, l, r)	KUNIT_HOST_BINARY(t, true, l, !=, r)
#define KUNIT_ASSERT_LT(t, l, r)	KUNIT_HOST_BINARY(t, true, l, <, r)
#define KUNIT_ASSERT_LE(t, l, r)	KUNIT_HOST_BINARY(t, true, l, <=, r)
#define KUNIT_ASSERT_GT(t, l, r)	KUNIT_HOST_BINARY(t, true, l, >, r)
#define KUNIT_ASSERT_GE(t, l, r)	KUNIT_HOST_BINARY(t, true, l, >=, r)
#define KUNIT_ASSERT_TRUE(t, c)		KUNIT_HOST_BOOL(t, true, c, true)
#define KUNIT_ASSERT_FALSE(t, c)	KUNIT_HOST_BOOL(t, true, c, false)
#define KUNIT_ASSERT_MEMEQ(t, l, r, n)	KUNIT_HOST_MEMEQ(t, true, l, r, n)
#define KUNIT_ASSERT_NOT_NULL(t, p)	KUNIT_HOST_NOT_NULL(t, true, p)

#define KUNIT_ASSERT_EQ_MSG(t, l, r, ...) \
	KUNIT_HOST_BINARY(t, true, l, ==, r, __VA_ARGS__)
#define KUNIT_ASSERT_TRUE_MSG(t, c, ...) \
	KUNIT_HOST_BOOL(t, true, c, true, __VA_ARGS__)

#endif /* HOST_KUNIT_TEST_H */
