/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright 2026 The amdkfd-criu authors
 *
 * Host shim: conversions between CPU order and the little-endian stream
 * fields, for either host byte order.
 */
#ifndef HOST_ASM_BYTEORDER_H
#define HOST_ASM_BYTEORDER_H

#include <linux/types.h>

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define cpu_to_le16(x)	((__le16)(__u16)(x))
#define cpu_to_le32(x)	((__le32)(__u32)(x))
#define cpu_to_le64(x)	((__le64)(__u64)(x))
#define le16_to_cpu(x)	((__u16)(__le16)(x))
#define le32_to_cpu(x)	((__u32)(__le32)(x))
#define le64_to_cpu(x)	((__u64)(__le64)(x))
#else
#define cpu_to_le16(x)	((__le16)__builtin_bswap16((__u16)(x)))
#define cpu_to_le32(x)	((__le32)__builtin_bswap32((__u32)(x)))
#define cpu_to_le64(x)	((__le64)__builtin_bswap64((__u64)(x)))
#define le16_to_cpu(x)	__builtin_bswap16((__u16)(__le16)(x))
#define le32_to_cpu(x)	__builtin_bswap32((__u32)(__le32)(x))
#define le64_to_cpu(x)	__builtin_bswap64((__u64)(__le64)(x))
#endif

#endif /* HOST_ASM_BYTEORDER_H */
