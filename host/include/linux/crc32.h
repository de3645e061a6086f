/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright 2026 The amdkfd-criu authors
 *
 * Host shim: the kernel's raw CRC32C primitive, implemented in
 * host/lib/crc32c.c.
 */
#ifndef HOST_LINUX_CRC32_H
#define HOST_LINUX_CRC32_H

#include <linux/types.h>

/**
 * __crc32c_le() - update a CRC32C register, as lib/crc32.c does
 * @crc: register value; no inversion is applied on the way in or out
 * @p: bytes to add
 * @len: number of bytes
 *
 * Return: the new register value.
 */
u32 __crc32c_le(u32 crc, unsigned char const *p, size_t len);

#endif /* HOST_LINUX_CRC32_H */
