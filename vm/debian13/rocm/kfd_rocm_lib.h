/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the lane's ROCm clients check beside their runtime: that the
 * process still reaches /dev/kfd, whatever the library above it says.
 */
#ifndef KFD_ROCM_LIB_H
#define KFD_ROCM_LIB_H

#include <stdbool.h>
#include <stdint.h>

int kfd_find_fd(void);
bool kfd_page_mapped(uint64_t addr);
int kfd_get_version(int fd, uint32_t *major, uint32_t *minor);
const char *kfd_check_fd(int expected, uint32_t *major, uint32_t *minor);
uint64_t clock_ns(int clock);
void sleep_ms(unsigned int ms);

#endif
