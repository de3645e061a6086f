/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright 2026 The amdkfd-criu authors
 *
 * Host shim: the mem*() and str*() functions come from the C library.
 */
#ifndef HOST_LINUX_STRING_H
#define HOST_LINUX_STRING_H

#include <string.h>

#endif /* HOST_LINUX_STRING_H */
