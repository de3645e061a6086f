/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DOC: what the kfd_criu and drm_reattach plugins share (plugin_common.c,
 * kfd_criu_options.c)
 *
 * Both plugins are built from these two files, each into its own shared
 * object with its own copy. The functions are hidden: criu looks up only
 * CR_PLUGIN_DESC in a plugin, and neither plugin's copy can stand in for
 * the other's. The kfd_criu_ prefix is the project's, not one plugin's.
 */
#ifndef KFD_CRIU_PLUGIN_COMMON_H
#define KFD_CRIU_PLUGIN_COMMON_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "criu-plugin.h"

/* Each plugin's objects are built with its own prefix (Makefile) */
#ifndef LOG_PREFIX
#define LOG_PREFIX "kfd_criu: "
#endif
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
/* The most KFD GPUs the plugins know of: the most that RESTORE takes */
#define MAX_GPU_MAP		64
/*
 * The offset UPDATE_VMA_MAP gives a mapping it refuses: not page-aligned,
 * so every mmap() refuses it (the mm core, before any driver).
 */
#define KFD_CRIU_REFUSED_PGOFF	0xbadULL
#define IMAGE_NAME_MAX		32
#define META_MAX_SIZE		4096	/* kfdcriu-<id>.img: 64 GPUs fit */
#define STOCK_PLUGIN_NAME	"amdgpu_plugin"	/* CRIU's own, in inventories */
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

/*
 * kfdcriu-<id>.img holds a KfdCriuMeta, kfdcriu-<id>.stream the stream.
 * <id> is CRIU's id of the file: only the plugin that took the file writes
 * its images, so the two plugins' images never share a name.
 */
#define image_name(buf, id, ext) \
	snprintf(buf, IMAGE_NAME_MAX, "kfdcriu-%u.%s", (unsigned int)(id), ext)

/* CRIU 4.3's criu_plugin_get_options(), which older criu binaries lack */
typedef int criu_plugin_get_options_t(int *argc, char ***argv);

/*
 * RESTORE_EXT_FILE has two signatures. "files-ext: Allow plugin files to
 * retry" (CRIU 4.3, criu-dev since November 2025) added a flag to ask for
 * a retry, which CRIU does not initialise and reads back; before it, a
 * second argument is whatever a register holds. The header's declaration
 * checks the one each plugin registers at load.
 */
typedef int restore_ext_file_retry_t(int id, bool *retry_needed);
typedef int restore_ext_file_plain_t(int id);
#ifdef KFD_CRIU_RESTORE_RETRY
#define HEADER_RETRY_FLAG	true
#else
#define HEADER_RETRY_FLAG	false
#endif

#define PLUGIN_OPTIONS_MAX	4

/**
 * struct plugin_options - one plugin's options (kfd_criu_options.c)
 * @plugin: the plugin's name: --plugin-option PLUGIN.NAME, and its config
 *	    file /etc/criu/PLUGIN.conf
 * @env_prefix: the environment's name of option NAME is this prefix and
 *		NAME in capitals
 * @names: the options' names, by the plugin's own numbers
 * @old_env: per option, an older environment name that still counts
 *	     after the current one, or NULL
 * @nr: how many options
 * @config: their values from the config file; NULL: not set
 * @cli: their values from --plugin-option; NULL: not set
 */
struct plugin_options {
	const char *plugin;
	const char *env_prefix;
	const char *const *names;
	const char *const *old_env;
	unsigned int nr;
	char *config[PLUGIN_OPTIONS_MAX];
	char *cli[PLUGIN_OPTIONS_MAX];
};

/**
 * struct kfd_topology - the KFD GPUs of this machine that this task may use
 * @nr: how many (at most MAX_GPU_MAP are read)
 * @hidden: a GPU was skipped: a device cgroup hides it from this task
 * @gpu_id: their gpu_ids
 * @minor: their render minors, -1 for none
 */
struct kfd_topology {
	unsigned int nr;
	bool hidden;
	uint32_t gpu_id[MAX_GPU_MAP];
	int minor[MAX_GPU_MAP];
};

#pragma GCC visibility push(hidden)

/* The root of sysfs, /dev and /proc paths: "" but in the host tests */
extern const char *kfd_criu_root;
/* A buffer for one file read whole at a time */
extern char io_buf[1 << 16];

ssize_t kfd_criu_read_file(int dirfd, const char *path, char *buf, size_t size);
bool kfd_criu_render_minor(unsigned int minor);
int kfd_criu_render_minor_of_path(const char *path);
int kfd_criu_write_image(const char *name, const void *buf, size_t len);
int kfd_criu_write_meta(unsigned int id, const KfdCriuMeta *meta);
int kfd_criu_read_meta(unsigned int id, KfdCriuMeta **meta);
bool kfd_criu_images_streamed(void);
void kfd_criu_register_in_inventory(const char *name, bool *listed);
bool kfd_criu_take_off_inventory(const char *name);
bool kfd_criu_stock_plugin_present(const void *self, char path[PATH_MAX]);
bool kfd_criu_stock_plugin_in_inventory(void);
criu_plugin_get_options_t *kfd_criu_probe_criu(void);
void kfd_criu_register_restore_ext_file(cr_plugin_desc_t *desc, bool criu_4_3,
					restore_ext_file_retry_t *with_flag,
					restore_ext_file_plain_t *without);
int kfd_criu_fd_base(void);
int kfd_criu_vma_fd(int fd, int *plugin_fd);
int kfd_criu_refuse_vma(const char *path, uint64_t addr, uint64_t *new_pgoff, int *plugin_fd);
int kfd_criu_read_topology(struct kfd_topology *t);
bool kfd_criu_no_kfd_gpu_of_minor(int minor);

void kfd_criu_options_load(struct plugin_options *o, criu_plugin_get_options_t *get_options);
void kfd_criu_options_forget(struct plugin_options *o);
const char *kfd_criu_option(const struct plugin_options *o, unsigned int opt);

#pragma GCC visibility pop

#endif /* KFD_CRIU_PLUGIN_COMMON_H */
