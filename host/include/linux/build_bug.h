/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright 2026 The amdkfd-criu authors
 *
 * Host shim: static_assert() with an optional message, and BUILD_BUG_ON().
 */
#ifndef HOST_LINUX_BUILD_BUG_H
#define HOST_LINUX_BUILD_BUG_H

#define static_assert(expr, ...)	host_static_assert(expr, ##__VA_ARGS__, #expr)
#define host_static_assert(expr, msg, ...)	_Static_assert(expr, msg)
#define BUILD_BUG_ON(cond)	_Static_assert(!(cond), "BUILD_BUG_ON(" #cond ")")

#endif /* HOST_LINUX_BUILD_BUG_H */
