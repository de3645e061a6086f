/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright 2026 The amdkfd-criu authors
 *
 * Host shim: ARRAY_SIZE(). Passing a pointer trips -Wsizeof-pointer-div,
 * which -Wall enables and the host build turns into an error.
 */
#ifndef HOST_LINUX_ARRAY_SIZE_H
#define HOST_LINUX_ARRAY_SIZE_H

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#endif /* HOST_LINUX_ARRAY_SIZE_H */
