/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright 2026 The amdkfd-criu authors
 *
 * Host shim: the checked arithmetic helpers, on the compiler built-ins
 * the kernel's versions use too.
 */
#ifndef HOST_LINUX_OVERFLOW_H
#define HOST_LINUX_OVERFLOW_H

#define check_add_overflow(a, b, d)	__builtin_add_overflow(a, b, d)
#define check_sub_overflow(a, b, d)	__builtin_sub_overflow(a, b, d)
#define check_mul_overflow(a, b, d)	__builtin_mul_overflow(a, b, d)

#endif /* HOST_LINUX_OVERFLOW_H */
