/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright 2026 The amdkfd-criu authors
 *
 * Host shim: the kernel's crc32c() (lib/libcrc32c.c), implemented in
 * host/lib/crc32c.c.
 */
#ifndef HOST_LINUX_CRC32C_H
#define HOST_LINUX_CRC32C_H

#include <linux/types.h>

/**
 * crc32c() - update a CRC32C register, as lib/libcrc32c.c does
 * @crc: register value; no inversion is applied on the way in or out
 * @address: bytes to add
 * @length: number of bytes
 *
 * Return: the new register value.
 */
u32 crc32c(u32 crc, const void *address, unsigned int length);

#endif /* HOST_LINUX_CRC32C_H */
