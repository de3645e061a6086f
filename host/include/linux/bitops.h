/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright 2026 The amdkfd-criu authors
 *
 * Host shim: __ffs64(), the index of the lowest set bit of a non-zero
 * word, on the compiler built-in.
 */
#ifndef HOST_LINUX_BITOPS_H
#define HOST_LINUX_BITOPS_H

#include <linux/bits.h>
#include <linux/types.h>

static inline unsigned int __ffs64(u64 word)
{
	return (unsigned int)__builtin_ctzll(word);
}

#endif /* HOST_LINUX_BITOPS_H */
