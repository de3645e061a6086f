/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DOC: what the kfd_criu plugin's source files share
 *
 * kfd_criu_plugin.c holds the CRIU hooks and the KFD image mode;
 * kfd_criu_gpus.c the topology, the GPU map and the render node files of
 * KFD GPUs; kfd_criu_shm.c the thunk's files in /dev/shm;
 * kfd_criu_dump_end.c whether the dumped processes go on. Each includes
 * this header, and this header only plugin_common.h: no file includes
 * another's. What the stateless reattach of other render nodes needs is
 * in drm_reattach.c, a plugin of its own.
 */
#ifndef KFD_CRIU_H
#define KFD_CRIU_H

#include <linux/kfd_ioctl.h>

#include "plugin_common.h"

#ifndef KFD_DEV_PATH
#define KFD_DEV_PATH		"/dev/kfd"
#endif

enum dev_kind { DEV_OTHER, DEV_KFD, DEV_RENDER };

/* kfd_criu's options (kfd_criu_options.c), by kfd_options.names */
enum kfd_criu_opt {
	KFD_OPT_GPU_MAP,	/* restore: IMG=LOCAL[,IMG=LOCAL...] */
	KFD_OPT_LEAVE_RUNNING,	/* dump: 0 when criu kills the dumped tasks */
	KFD_OPT_MAX
};

/**
 * struct kfd_dumped_file - a /dev/kfd file whose process this dump paused
 * @fd: CRIU's copy of the file, kept for UNPAUSE at the end of the dump
 * @id: CRIU's id of the file
 * @pid: the process PROCESS_INFO paused through it
 */
struct kfd_dumped_file {
	int fd;
	unsigned int id;
	pid_t pid;
};

#define THUNK_SHM_FILES		2	/* thunk_shm_files[] */
#define SHM_HEAD_MAX		64	/* a sem_t and the thunk's magic fit */

/**
 * struct thunk_shm - the thunk's files of a dumped process, for its metadata
 * @files: one per file found
 * @ptrs: the metadata's array of them
 * @heads: their first bytes
 */
struct thunk_shm {
	KfdCriuShmFile files[THUNK_SHM_FILES];
	KfdCriuShmFile *ptrs[THUNK_SHM_FILES];
	uint8_t heads[THUNK_SHM_FILES][SHM_HEAD_MAX];
};

#pragma GCC visibility push(hidden)

extern struct plugin_options kfd_options;
#define kfd_option(opt)		kfd_criu_option(&kfd_options, opt)

/* kfd_criu_plugin.c */
enum dev_kind dev_kind(mode_t mode, dev_t rdev);
int kfd_criu_op(int kfd, __u32 op, struct kfd_ioctl_criu_args *args);
int kfd_image_start(int fd, __u64 *offset);
int kfd_image_skip(int fd, __u64 offset, __u64 size);

/* kfd_criu_dump_end.c */
extern bool criu_fini_first;
bool unpause_after_dump(void);

/* kfd_criu_gpus.c: this machine's GPUs and the map to the image's */
extern struct kfd_criu_gpu_map gpu_map[MAX_GPU_MAP];
extern int nr_gpus;
extern bool gpus_hidden;
extern unsigned int nr_offsets;
extern int nr_process_gpus;
extern int nr_kfd_tasks;

int read_topology(void);
int kfd_gpu_of_minor(int minor);
int restore_gpus(void);
int restore_op(int kfd, int sfd, struct kfd_ioctl_criu_args *args);
int pause_process(int fd, int id, struct kfd_ioctl_criu_args *args);
int write_kfd_meta(KfdCriuMeta *meta);
int dump_render_file(int fd, int id, int minor);
int restore_render_file(const KfdCriuMeta *meta);
void keep_image_minors(const KfdCriuMeta *meta);
int kfd_update_vma_map(const char *path, const uint64_t addr, const uint64_t old_pgoff,
		       uint64_t *new_pgoff, int *plugin_fd);

/* kfd_criu_shm.c: the thunk's files in /dev/shm */
void find_thunk_shm(pid_t pid, struct thunk_shm *shm, KfdCriuMeta *meta);
void note_link_remaps(const struct kfd_dumped_file *f);
int recreate_thunk_shm(const KfdCriuMeta *meta);

#pragma GCC visibility pop

#endif /* KFD_CRIU_H */
