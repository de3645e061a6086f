/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DOC: what drm_reattach's two source files share
 *
 * drm_reattach.c holds the plugin's hooks and its files (which render
 * node a file was, and which one it opens again); drm_reattach_maps.c the
 * mappings (the list of mapped minors, the zero-filled memory). Both
 * include this header, and it only plugin_common.h.
 */
#ifndef DRM_REATTACH_H
#define DRM_REATTACH_H

#include "plugin_common.h"

/* The environment's name of the option enable, which the lines name */
#define REATTACH_ENV		"DRM_REATTACH_ENABLE"
#define NODE_NAME_MAX		32	/* "renderD128" */
#define NR_RENDER_MINORS	DRM_RENDER_NODES_MAX

#pragma GCC visibility push(hidden)

/* drm_reattach.c */
bool reattach_wanted(void);
const char *node_name(unsigned int minor, char name[NODE_NAME_MAX]);

/* drm_reattach_maps.c */
int take_mappings(unsigned int minor);
int kfd_drm_update_vma_map(const char *path, uint64_t addr, uint64_t pgoff,
			   uint64_t *new_pgoff, int *plugin_fd);
void kfd_drm_log_zero_filled(int pid);
void drm_maps_init(int stage);
void drm_maps_fini(void);

#pragma GCC visibility pop

#endif /* DRM_REATTACH_H */
