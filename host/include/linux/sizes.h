/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright 2026 The amdkfd-criu authors
 *
 * Host shim: the size constants the codec uses, with the kernel's values.
 */
#ifndef HOST_LINUX_SIZES_H
#define HOST_LINUX_SIZES_H

#define SZ_1K	0x00000400
#define SZ_4K	0x00001000
#define SZ_64K	0x00010000
#define SZ_256K	0x00040000
#define SZ_512K	0x00080000
#define SZ_1M	0x00100000
#define SZ_1G	0x40000000

#endif /* HOST_LINUX_SIZES_H */
