/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright 2026 The amdkfd-criu authors
 *
 * Host shim: INT_MAX from the C library, and the kernel's fixed-width
 * maxima.
 */
#ifndef HOST_LINUX_LIMITS_H
#define HOST_LINUX_LIMITS_H

#include <limits.h>
#include <linux/types.h>

#define U8_MAX		((u8)~0U)
#define U32_MAX		((u32)~0U)
#define U64_MAX		((u64)~0ULL)

#endif /* HOST_LINUX_LIMITS_H */
