/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright 2026 The amdkfd-criu authors
 *
 * Host shim: offsetof() and NULL come from the C library; sizeof_field()
 * as the kernel spells it.
 */
#ifndef HOST_LINUX_STDDEF_H
#define HOST_LINUX_STDDEF_H

#include <stddef.h>

#define sizeof_field(TYPE, MEMBER)	sizeof((((TYPE *)0)->MEMBER))

#endif /* HOST_LINUX_STDDEF_H */
