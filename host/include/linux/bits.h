/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright 2026 The amdkfd-criu authors
 *
 * Host shim: BIT(), an unsigned long with bit @nr set, and BIT_ULL(), an
 * unsigned long long, as in the kernel.
 */
#ifndef HOST_LINUX_BITS_H
#define HOST_LINUX_BITS_H

#define BIT(nr)		(1UL << (nr))
#define BIT_ULL(nr)	(1ULL << (nr))

#endif /* HOST_LINUX_BITS_H */
