/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright 2026 The amdkfd-criu authors
 *
 * Host shim: IS_BUILTIN() and IS_ENABLED() for options given as -D flags.
 * The kernel build force-includes its own <linux/kconfig.h>; the host
 * Makefile does the same with this one.
 */
#ifndef HOST_LINUX_KCONFIG_H
#define HOST_LINUX_KCONFIG_H

/*
 * An option defined to 1 pastes into HOST_OPTION_SET_1, which expands to
 * "0," and shifts a 1 into the second argument; anything else leaves one
 * argument in front of the 0.
 */
#define HOST_OPTION_SET_1			0,
#define host_second_arg(ignored, val, ...)	val
#define host_option_set(option)			host_option_paste(option)
#define host_option_paste(val)			host_option_pick(HOST_OPTION_SET_##val)
#define host_option_pick(junk_or_comma)		host_second_arg(junk_or_comma 1, 0, 0)

#define IS_BUILTIN(option)	host_option_set(option)
#define IS_ENABLED(option)	host_option_set(option)

#endif /* HOST_LINUX_KCONFIG_H */
