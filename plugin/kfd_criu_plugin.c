// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: kfd_criu - CRIU plugin for processes that hold /dev/kfd
 *
 * In CRIU image mode (KFD ioctl 1.18) the kernel writes a process's KFD state,
 * GPU buffers included, as one stream, which the plugin moves to CRIU's
 * images and back: PROCESS_INFO, CHECKPOINT, UNPAUSE unless told otherwise;
 * RESTORE with the local GPUs' render nodes, mappings moved to the offsets
 * RESTORE changed, RESUME. Hooks return -ENOTSUP for what is not theirs.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/kfd_ioctl.h>

#include "criu-plugin.h"

#define LOG_PREFIX "kfd_criu: "
#include "criu-log.h"

#include "kfd_criu_plugin.pb-c.h"

#ifndef KFD_DEV_PATH
#define KFD_DEV_PATH		"/dev/kfd"
#endif
#define DRM_MAJOR		226	/* render nodes: minors 128 to 191 */
#define KFD_IMAGE_MODE_MINOR	18	/* the first with CRIU image mode */
#define MAX_GPU_MAP		64	/* the most that RESTORE takes */
#define OFFSET_MAP_FIRST	64	/* room of the first RESTORE attempt */
#define IMAGE_NAME_MAX		32
#define META_MAX_SIZE		4096	/* kfdcriu-<id>.img: a few dozen */

enum dev_kind { DEV_OTHER, DEV_KFD, DEV_RENDER };

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

static struct kfd_dumped_file *dumped;
static unsigned int nr_dumped;
static char io_buf[1 << 16];

/* RESTORE_EXT_FILE's GPU map, render node fds open, and offset map */
static struct kfd_criu_gpu_map gpu_map[MAX_GPU_MAP];
static int gpu_minor[MAX_GPU_MAP];
static unsigned int nr_gpus;
static struct kfd_criu_offset_map *offsets;
static unsigned int nr_offsets;

/* Reads file @path, at most @size - 1 bytes, NUL-terminated into @buf */
static ssize_t read_file(int dirfd, const char *path, char *buf, size_t size)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	ssize_t n = 0, len = 0;

	while (fd >= 0 && (size_t)len < size - 1 &&
	       (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	len = fd < 0 || n < 0 ? -errno : len;
	if (fd >= 0)
		close(fd);
	buf[len < 0 ? 0 : len] = '\0';
	return len;
}

/* kfdcriu-<id>.img holds a KfdCriuMeta, kfdcriu-<id>.stream the stream */
#define image_name(buf, id, ext) \
	snprintf(buf, IMAGE_NAME_MAX, "kfdcriu-%u.%s", (unsigned int)(id), ext)

/* Whether a file of @mode and @rdev is a render node, /dev/kfd or other */
static enum dev_kind dev_kind(mode_t mode, dev_t rdev)
{
	struct stat st;

	if (S_ISCHR(mode) && major(rdev) == DRM_MAJOR && minor(rdev) >= 128 &&
	    minor(rdev) < 192)
		return DEV_RENDER;
	return S_ISCHR(mode) && !stat(KFD_DEV_PATH, &st) &&
	       S_ISCHR(st.st_mode) && st.st_rdev == rdev ? DEV_KFD : DEV_OTHER;
}

/* A new /dev/kfd fd of a kernel with image mode, -ENOTTY or another -errno */
static int open_kfd(bool quiet)
{
	struct kfd_ioctl_get_version_args ver = { 0 };
	int kfd, ret = -ENOTTY;

	kfd = open(KFD_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (kfd < 0 || ioctl(kfd, AMDKFD_IOC_GET_VERSION, &ver)) {
		ret = -errno;
		if (!quiet)
			pr_err("cannot %s %s: %s\n", kfd < 0 ? "open" : "query",
			       KFD_DEV_PATH, strerror(-ret));
	} else if (ver.major_version == KFD_IOCTL_MAJOR_VERSION &&
		   ver.minor_version >= KFD_IMAGE_MODE_MINOR) {
		return kfd;
	} else if (!quiet) {
		pr_err("the kernel's KFD ioctl interface is %u.%u, CRIU image mode needs %u.%u: not handling /dev/kfd\n",
		       ver.major_version, ver.minor_version,
		       KFD_IOCTL_MAJOR_VERSION, KFD_IMAGE_MODE_MINOR);
	}
	if (kfd >= 0)
		close(kfd);
	return ret;
}

static int kfd_criu_op(int kfd, __u32 op, struct kfd_ioctl_criu_args *args)
{
	args->op = op;
	args->flags = KFD_CRIU_FLAG_IMAGE;
	return ioctl(kfd, AMDKFD_IOC_CRIU_OP, args) ? -errno : 0;
}

static int meta_write(const char *name, const KfdCriuMeta *meta)
{
	uint8_t buf[META_MAX_SIZE];
	size_t len = kfd_criu_meta__get_packed_size(meta);
	int fd, ret;

	if (len > sizeof(buf))
		return -EMSGSIZE;
	kfd_criu_meta__pack(meta, buf);
	fd = openat(criu_get_image_dir(), name,
		    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	errno = ENOSPC;		/* what a short write means */
	ret = write(fd, buf, len) == (ssize_t)len ? 0 : -errno;
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

/* -ENOENT means there is no such image: the file is not ours */
static int meta_read(const char *name, KfdCriuMeta **meta)
{
	char buf[META_MAX_SIZE + 2];
	ssize_t len = read_file(criu_get_image_dir(), name, buf, sizeof(buf));

	if (len < 0 || len > META_MAX_SIZE)
		return len < 0 ? len : -EFBIG;
	*meta = kfd_criu_meta__unpack(NULL, len, (uint8_t *)buf);
	return *meta ? 0 : -EBADMSG;
}

/*
 * Keeps paused file @fd for the UNPAUSE at the end of the dump: 0; or 1 if
 * its process was dumped through another file: it gets an alias image.
 */
static int remember_dumped_file(int fd, unsigned int id, pid_t pid)
{
	KfdCriuMeta meta = KFD_CRIU_META__INIT;
	struct kfd_dumped_file *files;
	char name[IMAGE_NAME_MAX];
	unsigned int i;
	int copy;

	for (i = 0; i < nr_dumped && dumped[i].pid != pid; i++)
		;
	if (i < nr_dumped) {
		meta.file_id = id;
		meta.has_alias_of = true;
		meta.alias_of = dumped[i].id;
		image_name(name, id, "img");
		pr_info("file %u: same process as file %u\n", id, meta.alias_of);
		return meta_write(name, &meta) ?: 1;
	}
	files = realloc(dumped, (nr_dumped + 1) * sizeof(*files));
	dumped = files ?: dumped;
	copy = files ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	if (copy < 0) {	/* it cannot wait for the end of the dump */
		pr_err("file %u: out of memory or fds, unpausing it\n", id);
		kfd_criu_op(fd, KFD_CRIU_OP_UNPAUSE,
			    &(struct kfd_ioctl_criu_args){ 0 });
		return -ENOMEM;
	}
	dumped[nr_dumped++] = (struct kfd_dumped_file){ copy, id, pid };
	return 0;
}

/* A non-zero gpu_id at @s, decimal or 0x hex, ending at @end; 0 if none */
static uint32_t parse_gpu_id(const char *s, char **end)
{
	bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	unsigned long long id = 0;	/* ULLONG_MAX on overflow */

	if (hex ? isxdigit((unsigned char)s[2]) : isdigit((unsigned char)*s))
		id = strtoull(s, end, hex ? 16 : 10);
	return id > UINT32_MAX ? 0 : id;
}

/*
 * Applies @spec, "IMG=LOCAL[,IMG=LOCAL...]" (KFD_CRIU_GPU_MAP), to the @n
 * local GPUs of @map: image GPU IMG goes to local GPU LOCAL, at most one.
 */
static int parse_gpu_map(const char *spec, struct kfd_criu_gpu_map *map,
			 unsigned int n)
{
	unsigned int i, j, img, local;
	const char *s = spec;
	char *end;

	for (; *s; s = *end ? end + 1 : end) {
		img = parse_gpu_id(s, &end);
		local = img && *end == '=' ? parse_gpu_id(end + 1, &end) : 0;
		if (!local || (*end && (*end != ',' || !end[1]))) {
			pr_err("KFD_CRIU_GPU_MAP=\"%s\": at \"%s\": expected IMG=LOCAL[,IMG=LOCAL...], non-zero gpu_ids in decimal or 0x hex\n",
			       spec, s);
			return -EINVAL;
		}
		for (i = 0; i < n && map[i].local_gpu_id != local; i++)
			;
		for (j = 0; j < n && map[j].image_gpu_id != img; j++)
			;
		if (i == n || j < n || map[i].image_gpu_id) {
			pr_err("KFD_CRIU_GPU_MAP: %#x=%#x: %s\n", img, local, i == n ?
			       "no such GPU in this machine's KFD topology" :
			       "an image or local GPU appears twice");
			return i == n ? -ENODEV : -EINVAL;
		}
		map[i].image_gpu_id = img;
	}
	return 0;
}

static void close_gpu_map(void)
{
	while (nr_gpus)
		if (gpu_map[--nr_gpus].drm_fd >= 0)
			close(gpu_map[nr_gpus].drm_fd);
}

/*
 * Builds the RESTORE GPU map from the KFD topology at @dir: its first 64
 * GPU nodes (gpu_id not 0) with their render nodes open (else -1) half way
 * up the fd space, clear of the fds CRIU restores; then KFD_CRIU_GPU_MAP.
 */
static int open_gpu_map(const char *dir)
{
	const char *env = getenv("KFD_CRIU_GPU_MAP"), *prop;
	struct rlimit lim = { 0 };
	unsigned int node, id;
	char path[512];
	ssize_t ret;
	int fd;

	getrlimit(RLIMIT_NOFILE, &lim);
	close_gpu_map();
	for (node = 0, ret = 0; ret >= 0 && nr_gpus < MAX_GPU_MAP; node++) {
		snprintf(path, sizeof(path), "%s/%u/gpu_id", dir, node);
		ret = read_file(AT_FDCWD, path, io_buf, sizeof(io_buf));
		id = strtoul(io_buf, NULL, 10);
		if (ret < 0 || !id)
			continue;
		snprintf(path, sizeof(path), "%s/%u/properties", dir, node);
		read_file(AT_FDCWD, path, io_buf, sizeof(io_buf));
		prop = strstr(io_buf, "drm_render_minor ");
		gpu_minor[nr_gpus] = prop ? atoi(prop + 17) : -1;
		snprintf(path, sizeof(path), "/dev/dri/renderD%d", gpu_minor[nr_gpus]);
		fd = open(path, O_RDWR | O_CLOEXEC);
		gpu_map[nr_gpus] = (struct kfd_criu_gpu_map){ .local_gpu_id = id,
			.drm_fd = fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC,
						      lim.rlim_cur / 2) };
		if (fd >= 0)
			close(fd);
		if (gpu_map[nr_gpus++].drm_fd < 0)
			pr_warn("GPU %#x: cannot open %s: %s\n", id, path,
				strerror(errno));
	}
	if (ret < 0 && ret != -ENOENT) {
		pr_err("cannot read the KFD topology in %s: %s\n", dir,
		       strerror(-ret));
		return ret;
	}
	return parse_gpu_map(env ?: "", gpu_map, nr_gpus);
}

/*
 * RESTORE from @sfd into the process of @kfd with the GPU map and room for
 * the offsets it changes; with too little room, once more with enough.
 */
static int restore_op(int kfd, int sfd, struct kfd_ioctl_criu_args *args)
{
	uint32_t room = OFFSET_MAP_FIRST;
	int ret = 0, tries;

	for (tries = 0; tries < 2 && (!tries || ret == -ENOSPC); tries++) {
		free(offsets);
		offsets = calloc(room, sizeof(*offsets));
		if (!offsets || (tries && lseek(sfd, 0, SEEK_SET)))
			return offsets ? -errno : -ENOMEM;
		*args = (struct kfd_ioctl_criu_args){
			.image_fd = sfd, .num_gpu_map = nr_gpus,
			.gpu_map_ptr = nr_gpus ? (uintptr_t)gpu_map : 0,
			.offset_map_ptr = (uintptr_t)offsets,
			.num_offset_map = room };
		ret = kfd_criu_op(kfd, KFD_CRIU_OP_RESTORE, args);
		if (ret == -ENOSPC && !tries)
			pr_info("RESTORE needs %u mmap offset entries, not %u: again\n",
				args->num_offset_map, room);
		room = args->num_offset_map;
	}
	nr_offsets = ret ? 0 : args->num_offset_map;
	return ret;
}

/*
 * At the end of a dump, UNPAUSE every paused task unless it is killed, which
 * CRIU 3.17 does not tell plugins: KFD_CRIU_LEAVE_RUNNING=0 says so. An
 * UNPAUSE of a task that is then killed costs little, a missing one hangs a
 * live task. A failed dump always unpauses.
 */
static void kfd_plugin_fini(int stage, int ret)
{
	const char *keep = getenv("KFD_CRIU_LEAVE_RUNNING");
	bool resume = stage == CR_PLUGIN_STAGE__DUMP && (ret || !keep || strcmp(keep, "0"));
	struct kfd_ioctl_criu_args args = { 0 };
	unsigned int i;

	for (i = 0; i < nr_dumped; i++) {
		ret = resume ? kfd_criu_op(dumped[i].fd, KFD_CRIU_OP_UNPAUSE, &args) : 0;
		if (ret)
			pr_err("UNPAUSE of file %u failed: %s\n", dumped[i].id, strerror(-ret));
		else
			pr_info("file %u: %s\n", dumped[i].id, resume ?
				"unpaused the process" : "not unpausing: the task is killed");
		close(dumped[i].fd);
	}
	free(dumped);
	dumped = NULL;
	nr_dumped = 0;
}

CR_PLUGIN_REGISTER("kfd_criu", NULL, kfd_plugin_fini)

/* PROCESS_INFO and CHECKPOINT into kfdcriu-<id>.stream, then the metadata */
static int kfd_dump_file(int fd, int id)
{
	struct kfd_ioctl_criu_args args = { 0 };
	KfdCriuMeta meta = KFD_CRIU_META__INIT;
	char name[IMAGE_NAME_MAX];
	struct stat st;
	int ret;

	if (fstat(fd, &st) || dev_kind(st.st_mode, st.st_rdev) != DEV_KFD)
		return -ENOTSUP;
	/* The task's fd takes CRIU ops only: GET_VERSION needs our own. */
	ret = open_kfd(false);
	if (ret < 0)
		return ret == -ENOTTY ? -ENOTSUP : ret;
	close(ret);
	ret = kfd_criu_op(fd, KFD_CRIU_OP_PROCESS_INFO, &args);
	if (ret) {
		pr_err("PROCESS_INFO of file %u failed: %s\n", id, strerror(-ret));
		return ret == -ENOTSUP ? -EIO : ret;
	}
	pr_info("file %u: paused pid %u, image about %llu bytes\n", id,
		args.pid, args.image_size);
	/* Remembered, it is unpaused at the end of a dump that fails. */
	ret = remember_dumped_file(fd, id, args.pid);
	if (ret)
		return ret < 0 ? ret : 0;
	image_name(name, id, "stream");
	memset(&args, 0, sizeof(args));
	args.image_fd = openat(criu_get_image_dir(), name,
			       O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ret = args.image_fd < 0 ? -errno :
	      kfd_criu_op(fd, KFD_CRIU_OP_CHECKPOINT, &args);
	if (args.image_fd >= 0 && close(args.image_fd) && !ret)
		ret = -errno;
	if (ret) {	/* not -ENOTSUP: CRIU would take the file as not ours */
		pr_err("CHECKPOINT of file %u into %s failed: %s\n", id, name,
		       strerror(-ret));
		return ret == -ENOTSUP ? -EIO : ret;
	}
	meta.format_version = args.format_version;
	meta.file_id = id;
	meta.stream_size = args.image_size;
	image_name(name, id, "img");
	ret = meta_write(name, &meta);
	if (ret)
		pr_err("cannot write %s: %s\n", name, strerror(-ret));
	else
		pr_info("file %u: %" PRIu64 " bytes of image format %u\n", id,
			meta.stream_size, meta.format_version);
	return ret;
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__DUMP_EXT_FILE, kfd_dump_file)

/* Mappings of /dev/kfd and, with KFD, render nodes: the image has them */
static int kfd_handle_device_vma(int fd, const struct stat *st)
{
	enum dev_kind kind = dev_kind(st->st_mode, st->st_rdev);

	fd = kind == DEV_RENDER ? open_kfd(true) : -1;
	if (fd >= 0)
		close(fd);
	return kind == DEV_KFD || fd >= 0 ? 0 : -ENOTSUP;
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__HANDLE_DEVICE_VMA, kfd_handle_device_vma)

/* RESTORE from the images of file @id into a new /dev/kfd fd */
static int restore_from_images(unsigned int id)
{
	struct kfd_ioctl_criu_args args;
	char name[IMAGE_NAME_MAX];
	int sfd, kfd, ret;

	image_name(name, id, "stream");
	/* The kernel checks the stream: its records carry CRCs, END counts */
	sfd = openat(criu_get_image_dir(), name, O_RDONLY | O_CLOEXEC);
	kfd = sfd < 0 ? -errno : open_kfd(false);
	ret = kfd < 0 ? kfd : open_gpu_map("/sys/class/kfd/kfd/topology/nodes") ?:
			      restore_op(kfd, sfd, &args);
	if (sfd >= 0)
		close(sfd);
	if (!ret) {
		pr_info("file %u: restored %llu bytes of image format %u, %u local GPU(s), %u mmap offset(s) moved\n",
			id, args.image_size, args.format_version, nr_gpus,
			args.num_offset_map);
		return kfd;
	}
	pr_err("RESTORE from %s failed: %s\n", name, strerror(-ret));
	close_gpu_map();
	if (kfd >= 0)
		close(kfd);
	return ret;
}

static int kfd_restore_file(int id)
{
	char name[IMAGE_NAME_MAX];
	KfdCriuMeta *meta;
	int ret;

	image_name(name, id, "img");
	ret = meta_read(name, &meta);
	if (ret == -ENOENT)
		return -ENOTSUP;
	if (ret) {
		pr_err("cannot read %s: %s\n", name, strerror(-ret));
		return ret;
	}
	if (meta->file_id != (unsigned int)id)
		pr_err("%s describes file %u\n", name, meta->file_id);
	/* An alias shares the KFD process that its file restores. */
	ret = meta->file_id != (unsigned int)id ? -EINVAL :
	      meta->has_alias_of ? open_kfd(false) : restore_from_images(id);
	kfd_criu_meta__free_unpacked(meta, NULL);
	return ret == -ENOTSUP ? -EIO : ret;
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__RESTORE_EXT_FILE, kfd_restore_file)

/*
 * /dev/kfd and render node mappings go to the offsets RESTORE moved them to
 * (pgoff is in bytes), render nodes' through the file with the GPU's VM
 * (criu mmaps a dup). CRIU 3.17 takes *@new_pgoff only on return 1.
 */
static int kfd_update_vma_map(const char *path, const uint64_t addr,
			      const uint64_t old_pgoff, uint64_t *new_pgoff,
			      int *plugin_fd)
{
	struct stat st;
	enum dev_kind kind = stat(path, &st) ? DEV_OTHER :
			     dev_kind(st.st_mode, st.st_rdev);
	unsigned int i;

	if (kind == DEV_OTHER || (kind == DEV_RENDER && !nr_gpus))
		return -ENOTSUP;
	*new_pgoff = old_pgoff;
	*plugin_fd = -1;
	for (i = 0; i < nr_offsets; i++)
		if (offsets[i].old_offset == old_pgoff)
			*new_pgoff = offsets[i].new_offset;
	for (i = 0; kind == DEV_RENDER && i < nr_gpus && *plugin_fd < 0; i++)
		if (gpu_minor[i] == (int)minor(st.st_rdev))
			*plugin_fd = gpu_map[i].drm_fd;
	if (kind == DEV_RENDER && *plugin_fd < 0) {
		pr_err("mapping at %#" PRIx64 " of %s: no open render node of a restored GPU\n",
		       addr, path);
		return -ENODEV;
	}
	pr_debug("mapping at %#" PRIx64 " of %s: offset %#" PRIx64 " -> %#" PRIx64 "\n",
		 addr, path, old_pgoff, *new_pgoff);
	return 1;
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__UPDATE_VMA_MAP, kfd_update_vma_map)

/* CRIU calls this for every restored task: quiet for the others */
static int kfd_resume_devices_late(int pid)
{
	struct kfd_ioctl_criu_args args = { .pid = pid };
	int kfd = open_kfd(true), ret;

	if (kfd < 0)
		return -ENOTSUP;
	ret = kfd_criu_op(kfd, KFD_CRIU_OP_RESUME, &args);
	close(kfd);
	if (ret && ret != -ESRCH && ret != -EBADFD)	/* else: not restored */
		pr_err("RESUME of pid %d failed: %s\n", pid, strerror(-ret));
	else if (!ret)
		pr_info("resumed the KFD state of pid %d\n", pid);
	return ret == -ESRCH || ret == -EBADFD ? -ENOTSUP : ret;
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__RESUME_DEVICES_LATE, kfd_resume_devices_late)
