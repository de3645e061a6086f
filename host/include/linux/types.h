/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright 2026 The amdkfd-criu authors
 *
 * Host shim: the uAPI fixed-width types come from the system's
 * <linux/types.h>; this adds the kernel-internal names the codec uses.
 */
#ifndef HOST_LINUX_TYPES_H
#define HOST_LINUX_TYPES_H

#include_next <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s8 s8;
typedef __s16 s16;
typedef __s32 s32;
typedef __s64 s64;
typedef unsigned int gfp_t;
typedef int (*cmp_r_func_t)(const void *a, const void *b, const void *priv);
typedef void (*swap_r_func_t)(void *a, void *b, int size, const void *priv);

/*
 * Raw uAPI headers from the kernel tree still carry the sparse address
 * space annotation that headers_install strips; in userspace it is empty.
 */
#ifndef __user
#define __user
#endif

#endif /* HOST_LINUX_TYPES_H */
