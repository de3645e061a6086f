/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright 2026 The amdkfd-criu authors
 *
 * Host shim: min_t() and max_t(), each argument evaluated once.
 */
#ifndef HOST_LINUX_MINMAX_H
#define HOST_LINUX_MINMAX_H

#define min_t(type, a, b) ({			\
	type host_min_a = (a);			\
	type host_min_b = (b);			\
	host_min_a < host_min_b ? host_min_a : host_min_b; })

#define max_t(type, a, b) ({			\
	type host_max_a = (a);			\
	type host_max_b = (b);			\
	host_max_a > host_max_b ? host_max_a : host_max_b; })

#endif /* HOST_LINUX_MINMAX_H */
