/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DOC: CRIU's log helpers for an out-of-tree plugin
 *
 * CRIU installs its plugin log header, but not the one that header includes
 * for pr_err() and friends; this one stands in for it. The criu binary
 * exports print_on_level() to plugins.
 */
#ifndef KFD_CRIU_LOG_H
#define KFD_CRIU_LOG_H

#define LOG_MSG		0
#define LOG_ERROR	1
#define LOG_INFO	3
#define LOG_DEBUG	4

#ifndef LOG_PREFIX
#define LOG_PREFIX
#endif

#ifndef __printf
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#endif

__printf(2, 3) void print_on_level(unsigned int loglevel, const char *fmt, ...);

#define pr_err(fmt, ...) \
	print_on_level(LOG_ERROR, "Error (%s:%d): " LOG_PREFIX fmt, \
		       __FILE__, __LINE__, ##__VA_ARGS__)
#define pr_info(fmt, ...) \
	print_on_level(LOG_INFO, LOG_PREFIX fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) \
	print_on_level(LOG_DEBUG, LOG_PREFIX fmt, ##__VA_ARGS__)

#endif /* KFD_CRIU_LOG_H */
