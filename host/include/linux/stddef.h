/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright 2026 The amdkfd-criu authors
 *
 * Host shim: offsetof() and NULL come from the C library.
 */
#ifndef HOST_LINUX_STDDEF_H
#define HOST_LINUX_STDDEF_H

#include <stddef.h>

#endif /* HOST_LINUX_STDDEF_H */
