/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DOC: what the kfd_criu plugin's source files share
 *
 * kfd_criu_plugin.c holds the hooks and the KFD image mode; kfd_criu_drm.c
 * the stateless reattach of render nodes that are no KFD GPU's;
 * kfd_criu_options.c the options. These are what they take from each
 * other. They are hidden: criu
 * looks up only CR_PLUGIN_DESC in the shared object.
 */
#ifndef KFD_CRIU_H
#define KFD_CRIU_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "criu-plugin.h"

#define LOG_PREFIX "kfd_criu: "
#include "criu-log.h"

#include "kfd_criu_plugin.pb-c.h"

/*
 * DRM's minors (drivers/gpu/drm/drm_drv.c, drm_minor_alloc()): render nodes
 * take 128 to 191 first; past 64 of them, Linux 6.12 gives render
 * and card nodes alike any free minor from 192 to 2^20 - 1 (MINORBITS), so
 * there only the device's name tells them apart.
 */
#define DRM_MAJOR		226
#define DRM_RENDER_MINOR_FIRST	128
#define DRM_RENDER_MINOR_LAST	191
#define DRM_MINOR_MAX		((1U << 20) - 1)
/* At most this many render nodes in one dump or restore */
#define DRM_RENDER_NODES_MAX	64
/*
 * The offset UPDATE_VMA_MAP gives a mapping it refuses: not page-aligned,
 * so every mmap() refuses it (the mm core, before any driver).
 */
#define KFD_CRIU_REFUSED_PGOFF	0xbadULL

/* The plugin's options (kfd_criu_options.c) */
enum kfd_criu_opt {
	KFD_OPT_GPU_MAP,	/* restore: IMG=LOCAL[,IMG=LOCAL...] */
	KFD_OPT_LEAVE_RUNNING,	/* dump: 0 when criu kills the dumped tasks */
	KFD_OPT_DRM_REATTACH,	/* dump: 1 reattaches other render nodes */
	KFD_OPT_MAX
};

/* CRIU 4.3's criu_plugin_get_options(), which older criu binaries lack */
typedef int criu_plugin_get_options_t(int *argc, char ***argv);

#pragma GCC visibility push(hidden)

/* The root of sysfs, /dev and /proc paths: "" but in the host tests */
extern const char *kfd_criu_root;

ssize_t kfd_criu_read_file(int dirfd, const char *path, char *buf, size_t size);
bool kfd_criu_render_minor(unsigned int minor);
int kfd_criu_render_minor_of_path(const char *path);
int kfd_criu_write_image(const char *name, const void *buf, size_t len);
int kfd_criu_write_meta(unsigned int id, const KfdCriuMeta *meta);
bool kfd_criu_images_streamed(void);
void kfd_criu_register_in_inventory(void);
int kfd_criu_fd_base(void);
int kfd_criu_vma_fd(int fd, int *plugin_fd);
int kfd_criu_refuse_vma(const char *path, uint64_t addr, uint64_t *new_pgoff, int *plugin_fd);

void kfd_criu_options_load(criu_plugin_get_options_t *get_options);
void kfd_criu_options_forget(void);
const char *kfd_criu_option(enum kfd_criu_opt opt);

/* kfd_criu_drm.c: for files and mappings that no KFD GPU has */
void kfd_drm_init(int stage);
void kfd_drm_fini(void);
int kfd_drm_dump_file(int fd, unsigned int id, const struct stat *st);
int kfd_drm_handle_device_vma(const struct stat *st);
int kfd_drm_restore_file(const KfdCriuMeta *meta);
int kfd_drm_update_vma_map(const char *path, uint64_t addr, uint64_t pgoff,
			   uint64_t *new_pgoff, int *plugin_fd);
void kfd_drm_log_zero_filled(int pid);

#pragma GCC visibility pop

#endif /* KFD_CRIU_H */
