// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: CRC32C for the host build
 *
 * The kernel's crc32c() (reflected Castagnoli polynomial 0x82f63b78)
 * behind the same signature, so the codec builds unchanged in userspace,
 * and about as fast as the kernel's, so that a userspace measurement of
 * the codec (make bench-codec) says what the kernel's costs. Like the
 * kernel's, it applies no inversion itself; kfd_criu_crc32c() does that.
 *
 * On x86-64 CPUs with SSE4.2 it uses the crc32 instruction. One stream of
 * crc32 instructions waits for each result before the next, which leaves
 * the unit idle two cycles out of three; the kernel's crc32c-intel driver
 * therefore runs three streams over three parts of a buffer and joins
 * their results, and so does this file. Elsewhere it looks up eight bytes
 * at a time in eight tables (slicing-by-8). Every path gives the same
 * register value as the bytewise definition, which host/lib/tests checks.
 */

#include <linux/crc32c.h>
#include <linux/string.h>

#define CRC32C_POLY_REFLECTED	0x82f63b78U

/* Bytes of each of the three streams the SSE4.2 path runs at once. */
#define CRC32C_STRIDE		4096

/*
 * crc32c_slice[0] is the bytewise table; crc32c_slice[k][b] is the register
 * that byte b and then k zero bytes leave behind, from a zero register.
 */
static u32 crc32c_slice[8][256];

static u32 crc32c_bytewise(u32 crc, const u8 *p, size_t len)
{
	while (len--)
		crc = crc32c_slice[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

static u32 crc32c_slice8(u32 crc, const u8 *p, size_t len)
{
	for (; len >= 8; p += 8, len -= 8) {
		crc ^= (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 |
		       (u32)p[3] << 24;
		crc = crc32c_slice[7][crc & 0xff] ^
		      crc32c_slice[6][(crc >> 8) & 0xff] ^
		      crc32c_slice[5][(crc >> 16) & 0xff] ^
		      crc32c_slice[4][crc >> 24] ^
		      crc32c_slice[3][p[4]] ^ crc32c_slice[2][p[5]] ^
		      crc32c_slice[1][p[6]] ^ crc32c_slice[0][p[7]];
	}
	return crc32c_bytewise(crc, p, len);
}

#ifdef __x86_64__
/*
 * crc32c_skip[k][b]: the register after CRC32C_STRIDE zero bytes, starting
 * from a register that holds byte b in byte k and zeros elsewhere. The
 * register after zero bytes is linear in its start, so four lookups give
 * it for any start.
 */
static u32 crc32c_skip[4][256];

static bool crc32c_have_sse42;

/* The register @crc advanced over CRC32C_STRIDE zero bytes. */
static u32 crc32c_skip_stride(u32 crc)
{
	return crc32c_skip[0][crc & 0xff] ^ crc32c_skip[1][(crc >> 8) & 0xff] ^
	       crc32c_skip[2][(crc >> 16) & 0xff] ^ crc32c_skip[3][crc >> 24];
}

static u64 crc32c_load64(const u8 *p)
{
	u64 v;

	memcpy(&v, p, sizeof(v));	/* x86 is little-endian */
	return v;
}

__attribute__((target("sse4.2")))
static u32 crc32c_sse42(u32 crc, const u8 *p, size_t len)
{
	for (; len >= 8; p += 8, len -= 8)
		crc = __builtin_ia32_crc32di(crc, crc32c_load64(p));
	while (len--)
		crc = __builtin_ia32_crc32qi(crc, *p++);
	return crc;
}

/*
 * Three streams over consecutive strides a, b, c: b and c start from a
 * zero register, and the register over a, b, c is a's advanced over two
 * strides, xor b's advanced over one, xor c's.
 */
__attribute__((target("sse4.2")))
static u32 crc32c_sse42_3way(u32 crc, const u8 *p, size_t len)
{
	u64 a, b, c;
	size_t i;

	for (; len >= 3 * CRC32C_STRIDE; p += 3 * CRC32C_STRIDE,
	     len -= 3 * CRC32C_STRIDE) {
		a = crc;
		b = 0;
		c = 0;
		for (i = 0; i < CRC32C_STRIDE; i += 8) {
			a = __builtin_ia32_crc32di(a, crc32c_load64(p + i));
			b = __builtin_ia32_crc32di(b, crc32c_load64(p + i +
							CRC32C_STRIDE));
			c = __builtin_ia32_crc32di(c, crc32c_load64(p + i +
							2 * CRC32C_STRIDE));
		}
		crc = crc32c_skip_stride(crc32c_skip_stride(a) ^ b) ^ c;
	}
	return crc32c_sse42(crc, p, len);
}

/* The register after CRC32C_STRIDE zero bytes from @crc, the slow way. */
static u32 crc32c_zeros(u32 crc)
{
	static const u8 zeros[CRC32C_STRIDE];

	return crc32c_bytewise(crc, zeros, sizeof(zeros));
}

static void crc32c_init_skip(void)
{
	u32 bit[32];
	unsigned int i, k, b;

	for (i = 0; i < 32; i++)
		bit[i] = crc32c_zeros(1U << i);
	for (k = 0; k < 4; k++) {
		for (b = 0; b < 256; b++) {
			crc32c_skip[k][b] = 0;
			for (i = 0; i < 8; i++)
				if (b & (1U << i))
					crc32c_skip[k][b] ^= bit[8 * k + i];
		}
	}
}

static void crc32c_init_sse42(void)
{
	crc32c_init_skip();
	__builtin_cpu_init();
	crc32c_have_sse42 = __builtin_cpu_supports("sse4.2");
}
#endif

/* Runs before main(): the tables are ready before any test uses them. */
__attribute__((constructor)) static void crc32c_init_tables(void)
{
	unsigned int i, bit, k;
	u32 crc, prev;

	for (i = 0; i < 256; i++) {
		crc = i;
		for (bit = 0; bit < 8; bit++)
			crc = (crc >> 1) ^ (crc & 1 ? CRC32C_POLY_REFLECTED : 0);
		crc32c_slice[0][i] = crc;
	}
	for (k = 1; k < 8; k++) {
		for (i = 0; i < 256; i++) {
			prev = crc32c_slice[k - 1][i];
			crc32c_slice[k][i] = crc32c_slice[0][prev & 0xff] ^
					     (prev >> 8);
		}
	}
#ifdef __x86_64__
	crc32c_init_sse42();
#endif
}

u32 crc32c(u32 crc, const void *address, unsigned int length)
{
#ifdef __x86_64__
	if (crc32c_have_sse42)
		return crc32c_sse42_3way(crc, address, length);
#endif
	return crc32c_slice8(crc, address, length);
}

#if IS_BUILTIN(CONFIG_HSA_AMD_CRIU_KUNIT_TEST)
#include "tests/crc32c_test.c"
#endif
