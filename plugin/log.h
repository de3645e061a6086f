/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DOC: CRIU installs criu-log.h but not the log.h it includes for pr_err()
 * and friends; this stands in for it. criu exports print_on_level().
 */
#ifndef KFD_CRIU_LOG_H
#define KFD_CRIU_LOG_H

#define LOG_MSG		0
#define LOG_ERROR	1
#define LOG_WARN	2
#define LOG_INFO	3
#define LOG_DEBUG	4

__attribute__((format(printf, 2, 3)))
void print_on_level(unsigned int loglevel, const char *fmt, ...);

#define pr_err(fmt, ...) \
	print_on_level(LOG_ERROR, "Error (%s:%d): " LOG_PREFIX fmt, \
		       __FILE__, __LINE__, ##__VA_ARGS__)
#define pr_warn(fmt, ...) \
	print_on_level(LOG_WARN, "Warn  (%s:%d): " LOG_PREFIX fmt, \
		       __FILE__, __LINE__, ##__VA_ARGS__)
#define pr_info(fmt, ...) print_on_level(LOG_INFO, LOG_PREFIX fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) print_on_level(LOG_DEBUG, LOG_PREFIX fmt, ##__VA_ARGS__)

#endif /* KFD_CRIU_LOG_H */
