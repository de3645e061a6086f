// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: CRC32C for the host build
 *
 * A table-driven software CRC32C (Castagnoli, reflected polynomial
 * 0x82f63b78) behind the kernel's crc32c() signature, so the codec
 * builds unchanged in userspace. Like the kernel's, it applies no
 * inversion itself; kfd_criu_crc32c() does that.
 */

#include <linux/crc32c.h>

#define CRC32C_POLY_REFLECTED	0x82f63b78U

static u32 crc32c_table[256];

/* Runs before main(): the table is ready before any test uses it. */
__attribute__((constructor)) static void crc32c_init_table(void)
{
	unsigned int i, bit;
	u32 crc;

	for (i = 0; i < 256; i++) {
		crc = i;
		for (bit = 0; bit < 8; bit++)
			crc = (crc >> 1) ^ (crc & 1 ? CRC32C_POLY_REFLECTED : 0);
		crc32c_table[i] = crc;
	}
}

u32 crc32c(u32 crc, const void *address, unsigned int length)
{
	const unsigned char *p = address;

	while (length--)
		crc = crc32c_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}
