/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright 2026 The amdkfd-criu authors
 *
 * Host shim: the few allocation helpers the codec and its tests use, on
 * the C library.
 */
#ifndef HOST_LINUX_SLAB_H
#define HOST_LINUX_SLAB_H

#include <linux/types.h>
#include <stdlib.h>

#define GFP_KERNEL	0x0U
#define GFP_KERNEL_ACCOUNT	0x0U
#define __GFP_ZERO	0x100U

static inline void *kvcalloc(size_t n, size_t size, gfp_t gfp)
{
	(void)gfp;
	return calloc(n, size);
}

static inline void *kvmalloc_array(size_t n, size_t size, gfp_t gfp)
{
	size_t bytes;

	(void)gfp;
	if (__builtin_mul_overflow(n, size, &bytes))
		return NULL;
	return malloc(bytes ? bytes : 1);
}

static inline void kvfree(const void *p)
{
	free((void *)p);
}

#endif /* HOST_LINUX_SLAB_H */
