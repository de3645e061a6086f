// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: tests of the host CRC32C
 *
 * Included at the end of host/lib/crc32c.c, so it reaches each path
 * directly. Every path must give the bytewise definition's register for
 * any length, start register and alignment: the images that the host
 * tools and the fuzzer's seeds carry are compared byte for byte with the
 * kernel's. The lengths sit at the edges of each path's loops: the eight
 * byte words, and one, two and three strides of the three-stream loop.
 */

#include <kunit/test.h>

/* Bytes of the long test buffer: several three-stream blocks and a tail. */
#define CRC32C_TEST_LEN		(7 * 3 * CRC32C_STRIDE + 1003)

/**
 * struct crc32c_test_path - one way of computing the register
 * @name: what the TAP line says
 * @fn: the path; falls back to slicing-by-8 where the CPU lacks it, so
 *	every machine runs the same cases
 */
struct crc32c_test_path {
	const char *name;
	u32 (*fn)(u32 crc, const u8 *p, size_t len);
};

static u32 crc32c_test_sse42(u32 crc, const u8 *p, size_t len)
{
#ifdef __x86_64__
	if (crc32c_have_sse42)
		return crc32c_sse42(crc, p, len);
#endif
	return crc32c_slice8(crc, p, len);
}

static u32 crc32c_test_sse42_3way(u32 crc, const u8 *p, size_t len)
{
#ifdef __x86_64__
	if (crc32c_have_sse42)
		return crc32c_sse42_3way(crc, p, len);
#endif
	return crc32c_slice8(crc, p, len);
}

static u32 crc32c_test_dispatch(u32 crc, const u8 *p, size_t len)
{
	return crc32c(crc, p, len);
}

static const struct crc32c_test_path crc32c_test_paths[] = {
	{ "slicing-by-8", crc32c_slice8 },
	{ "sse4.2, one stream", crc32c_test_sse42 },
	{ "sse4.2, three streams", crc32c_test_sse42_3way },
	{ "crc32c()", crc32c_test_dispatch },
};

static void crc32c_test_path_desc(const struct crc32c_test_path *path,
				  char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", path->name);
}

KUNIT_ARRAY_PARAM(crc32c_test_path, crc32c_test_paths, crc32c_test_path_desc);

/* Bytes that no stride or word boundary repeats. */
static void crc32c_test_fill(u8 *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = ((i * 31 + 7) & 0xff) ^ ((i >> 8) & 0xff);
}

/* The bytewise definition against published and independent values. */
static void test_crc32c_vectors(struct kunit *test)
{
	static const u8 check[] = "123456789";
	u8 *buf;

	KUNIT_EXPECT_EQ(test, ~crc32c_bytewise(~0U, check, 9), 0xe3069283U);
	buf = kunit_kmalloc(test, 100003, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	crc32c_test_fill(buf, 100003);
	/* Computed bit by bit, outside this code */
	KUNIT_EXPECT_EQ(test, ~crc32c_bytewise(~0U, buf, 100003), 0xeb2fe711U);
	KUNIT_EXPECT_EQ(test, ~crc32c(~0U, buf, 100003), 0xeb2fe711U);
}

static const size_t crc32c_test_lens[] = {
	0, 1, 7, 8, 9, 15, 16, 17, 255,
	CRC32C_STRIDE - 1, CRC32C_STRIDE, CRC32C_STRIDE + 1,
	3 * CRC32C_STRIDE - 1, 3 * CRC32C_STRIDE, 3 * CRC32C_STRIDE + 1,
	3 * CRC32C_STRIDE + 8, 6 * CRC32C_STRIDE, 6 * CRC32C_STRIDE + 13,
	CRC32C_TEST_LEN - 7,
};

static const u32 crc32c_test_starts[] = { 0, ~0U, 0x12345678U };

/* Each path against the bytewise definition, at every alignment. */
static void test_crc32c_path(struct kunit *test)
{
	const struct crc32c_test_path *path = test->param_value;
	unsigned int l, s, align;
	u32 want, got;
	size_t len;
	u8 *buf;

	buf = kunit_kmalloc(test, CRC32C_TEST_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	crc32c_test_fill(buf, CRC32C_TEST_LEN);
	for (l = 0; l < ARRAY_SIZE(crc32c_test_lens); l++) {
		len = crc32c_test_lens[l];
		for (s = 0; s < ARRAY_SIZE(crc32c_test_starts); s++) {
			for (align = 0; align < 8; align++) {
				want = crc32c_bytewise(crc32c_test_starts[s],
						       buf + align, len);
				got = path->fn(crc32c_test_starts[s],
					       buf + align, len);
				KUNIT_ASSERT_EQ_MSG(test, got, want,
						    "len %zu start 0x%x align %u",
						    len, crc32c_test_starts[s],
						    align);
			}
		}
	}
}

/* A register continued over the pieces of a buffer equals the whole's. */
static void test_crc32c_pieces(struct kunit *test)
{
	static const size_t cuts[] = { 1, 8, CRC32C_STRIDE, 3 * CRC32C_STRIDE,
				       3 * CRC32C_STRIDE + 5 };
	u32 whole, crc;
	unsigned int i;
	u8 *buf;

	buf = kunit_kmalloc(test, CRC32C_TEST_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	crc32c_test_fill(buf, CRC32C_TEST_LEN);
	whole = crc32c(~0U, buf, CRC32C_TEST_LEN);
	for (i = 0; i < ARRAY_SIZE(cuts); i++) {
		crc = crc32c(~0U, buf, cuts[i]);
		crc = crc32c(crc, buf + cuts[i], CRC32C_TEST_LEN - cuts[i]);
		KUNIT_EXPECT_EQ_MSG(test, crc, whole, "cut at %zu", cuts[i]);
	}
}

static struct kunit_case crc32c_test_cases[] = {
	KUNIT_CASE(test_crc32c_vectors),
	KUNIT_CASE_PARAM(test_crc32c_path, crc32c_test_path_gen_params),
	KUNIT_CASE(test_crc32c_pieces),
	{}
};

static struct kunit_suite crc32c_test_suite = {
	.name = "host_crc32c",
	.test_cases = crc32c_test_cases,
};

kunit_test_suite(crc32c_test_suite);
