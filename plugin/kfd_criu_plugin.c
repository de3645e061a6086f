// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: kfd_criu - CRIU plugin for processes that hold /dev/kfd
 *
 * In CRIU image mode (KFD ioctl 1.18) the kernel writes a process's KFD state,
 * GPU buffers included, as one stream that the plugin moves to CRIU's images
 * and back. Hooks return -ENOTSUP for what is not theirs.
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
#define TOPOLOGY		"/sys/class/kfd/kfd/topology/nodes"
#define DRM_MAJOR		226	/* render nodes: minors 128 to 191 */
#define KFD_IMAGE_MODE_MINOR	18	/* the first with CRIU image mode */
#define MAX_GPU_MAP		64	/* the most that RESTORE takes */
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
static const char *root = "";	/* of TOPOLOGY and render nodes; for tests */

/* The local GPUs (-1: not read yet), their render files, the offset map */
static struct kfd_criu_gpu_map gpu_map[MAX_GPU_MAP];
static int gpu_minor[MAX_GPU_MAP];
static int nr_gpus = -1;
static struct kfd_criu_offset_map *offsets;
static unsigned int nr_offsets;

/* Reads file @path, at most @size - 1 bytes, NUL-terminated into @buf */
static ssize_t read_file(int dirfd, const char *path, char *buf, size_t size)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	ssize_t n = 0, len = 0;

	while (fd >= 0 && (size_t)len < size - 1 && (n = read(fd, buf + len, size - 1 - len)) > 0)
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

	if (S_ISCHR(mode) && major(rdev) == DRM_MAJOR && minor(rdev) >= 128 && minor(rdev) < 192)
		return DEV_RENDER;
	return S_ISCHR(mode) && !stat(KFD_DEV_PATH, &st) &&
	       S_ISCHR(st.st_mode) && st.st_rdev == rdev ? DEV_KFD : DEV_OTHER;
}

/* A new /dev/kfd fd of a kernel with image mode, -ENOTTY or another -errno */
static int open_kfd(bool quiet)
{
	struct kfd_ioctl_get_version_args ver = { 0 };
	int kfd = open(KFD_DEV_PATH, O_RDWR | O_CLOEXEC), ret = -ENOTTY;

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

/* Writes @meta into kfdcriu-<id>.img, logging a failure */
static int write_meta(unsigned int id, const KfdCriuMeta *meta)
{
	size_t len = kfd_criu_meta__get_packed_size(meta);
	uint8_t buf[META_MAX_SIZE];
	char name[IMAGE_NAME_MAX];
	int fd, ret;

	if (len > sizeof(buf))	/* integer fields only: a few dozen bytes */
		return -EMSGSIZE;
	kfd_criu_meta__pack(meta, buf);
	image_name(name, id, "img");
	fd = openat(criu_get_image_dir(), name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ret = fd < 0 ? -errno : 0;
	errno = ENOSPC;		/* what a short write means */
	if (fd >= 0 && write(fd, buf, len) != (ssize_t)len)
		ret = -errno;
	if (fd >= 0 && close(fd) && !ret)
		ret = -errno;
	if (ret)
		pr_err("cannot write %s: %s\n", name, strerror(-ret));
	return ret;
}

/* Reads kfdcriu-<id>.img; -ENOENT (not logged): no such image, not ours */
static int read_meta(unsigned int id, KfdCriuMeta **meta)
{
	char buf[META_MAX_SIZE + 2], name[IMAGE_NAME_MAX];
	ssize_t len;

	image_name(name, id, "img");
	len = read_file(criu_get_image_dir(), name, buf, sizeof(buf));
	if (len > META_MAX_SIZE)
		len = -EFBIG;
	*meta = len < 0 ? NULL : kfd_criu_meta__unpack(NULL, len, (uint8_t *)buf);
	len = len < 0 ? len : *meta ? 0 : -EBADMSG;
	if (len && len != -ENOENT)
		pr_err("cannot read %s: %s\n", name, strerror(-len));
	return len;
}

/*
 * Keeps paused file @fd for the UNPAUSE at the end of the dump: 0; or 1 if
 * its process was dumped through another file: it gets an alias image.
 */
static int remember_dumped_file(int fd, unsigned int id, pid_t pid)
{
	KfdCriuMeta meta = KFD_CRIU_META__INIT;
	struct kfd_dumped_file *files;
	unsigned int i;
	int copy;

	for (i = 0; i < nr_dumped && dumped[i].pid != pid; i++)
		;
	if (i < nr_dumped) {
		meta.file_id = id;
		meta.has_alias_of = true;
		meta.alias_of = dumped[i].id;
		pr_info("file %u: same process as file %u\n", id, meta.alias_of);
		return write_meta(id, &meta) ?: 1;
	}
	files = realloc(dumped, (nr_dumped + 1) * sizeof(*files));
	dumped = files ?: dumped;
	copy = files ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	if (copy < 0) {	/* it cannot wait for the end of the dump */
		pr_err("file %u: out of memory or fds, unpausing it\n", id);
		kfd_criu_op(fd, KFD_CRIU_OP_UNPAUSE, &(struct kfd_ioctl_criu_args){ 0 });
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
static int parse_gpu_map(const char *spec, struct kfd_criu_gpu_map *map, unsigned int n)
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

/* Reads the gpu_ids and render minors of the topology's first 64 GPUs */
static int read_topology(void)
{
	unsigned int node, id;
	char path[512], *prop;
	ssize_t ret = 0;

	for (node = 0, nr_gpus = 0; ret >= 0 && nr_gpus < MAX_GPU_MAP; node++) {
		snprintf(path, sizeof(path), "%s" TOPOLOGY "/%u/gpu_id", root, node);
		ret = read_file(AT_FDCWD, path, io_buf, sizeof(io_buf));
		id = strtoul(io_buf, NULL, 10);
		if (ret < 0 || !id)
			continue;
		snprintf(path, sizeof(path), "%s" TOPOLOGY "/%u/properties", root, node);
		read_file(AT_FDCWD, path, io_buf, sizeof(io_buf));
		prop = strstr(io_buf, "drm_render_minor ");
		gpu_minor[nr_gpus] = prop ? atoi(prop + 17) : -1;
		gpu_map[nr_gpus++] = (struct kfd_criu_gpu_map){
			.local_gpu_id = id, .drm_fd = -1 };
	}
	if (ret >= 0 || ret == -ENOENT)
		return 0;
	pr_err("cannot read the KFD topology in %s" TOPOLOGY ": %s\n", root, strerror(-ret));
	nr_gpus = -1;
	return ret;
}

/* Index of the GPU whose render node has minor @minor, or -1 */
static int gpu_of_minor(int minor)
{
	int i;

	for (i = 0; i < nr_gpus && gpu_minor[i] != minor; i++)
		;
	return i < nr_gpus ? i : -1;
}

/* Index of the local GPU image GPU @img goes to by KFD_CRIU_GPU_MAP or id */
static int local_gpu(uint32_t img)
{
	int i, same = -ENODEV;

	for (i = 0; i < nr_gpus && gpu_map[i].image_gpu_id != img; i++)
		if (gpu_map[i].local_gpu_id == img)
			same = i;
	return i < nr_gpus ? i : same;
}

/*
 * This restore's GPUs, at the first need (a render node file or RESTORE), so
 * both share each GPU's render file. Those stay open for UPDATE_VMA_MAP, half
 * way up the fd space, clear of the fds CRIU restores; -1 if one fails.
 */
static int restore_gpus(void)
{
	struct rlimit lim = { 0 };
	char path[512];
	int i, fd, ret;

	if (nr_gpus >= 0)
		return 0;
	ret = read_topology() ?: parse_gpu_map(getenv("KFD_CRIU_GPU_MAP") ?: "", gpu_map, nr_gpus);
	getrlimit(RLIMIT_NOFILE, &lim);
	for (i = 0; !ret && i < nr_gpus; i++) {
		snprintf(path, sizeof(path), "%s/dev/dri/renderD%d", root, gpu_minor[i]);
		fd = open(path, O_RDWR | O_CLOEXEC);
		gpu_map[i].drm_fd = fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, lim.rlim_cur / 2);
		if (gpu_map[i].drm_fd < 0)
			pr_warn("GPU %#x: cannot open %s: %s\n",
				gpu_map[i].local_gpu_id, path, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	if (ret)
		nr_gpus = -1;	/* no render file is open yet */
	return ret;
}

/*
 * RESTORE from @sfd into the process of @kfd with the GPU map and room for
 * the offsets it changes; with too little room, once more with enough.
 */
static int restore_op(int kfd, int sfd, struct kfd_ioctl_criu_args *args)
{
	uint32_t room = 64;	/* the first attempt's, enough for most */
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

/* Whether the kernel has KFD image mode */
static bool kfd_image_mode(bool quiet)
{
	int kfd = open_kfd(quiet);

	if (kfd >= 0)
		close(kfd);
	return kfd >= 0;
}

/* Render node file @fd of minor @minor: its GPU and flags, if a KFD GPU */
static int dump_render_file(int fd, int id, int minor)
{
	KfdCriuMeta meta = KFD_CRIU_META__INIT;
	int i = read_topology() ? -1 : gpu_of_minor(minor);

	if (i < 0)
		return -ENOTSUP;
	meta.file_id = id;
	meta.has_render_gpu_id = true;
	meta.render_gpu_id = gpu_map[i].local_gpu_id;
	meta.has_open_flags = true;
	meta.open_flags = fcntl(fd, F_GETFL);
	pr_info("file %u: render node of GPU %#x\n", id, meta.render_gpu_id);
	return write_meta(id, &meta);
}

/* PROCESS_INFO and CHECKPOINT into kfdcriu-<id>.stream, then the metadata */
static int kfd_dump_file(int fd, int id)
{
	struct kfd_ioctl_criu_args args = { 0 };
	KfdCriuMeta meta = KFD_CRIU_META__INIT;
	char name[IMAGE_NAME_MAX];
	struct stat st;
	int ret;

	if (fstat(fd, &st))
		return -ENOTSUP;
	if (dev_kind(st.st_mode, st.st_rdev) == DEV_RENDER && kfd_image_mode(true))
		return dump_render_file(fd, id, minor(st.st_rdev));
	/* The task's fd takes CRIU ops only: GET_VERSION needs our own. */
	if (dev_kind(st.st_mode, st.st_rdev) != DEV_KFD || !kfd_image_mode(false))
		return -ENOTSUP;
	ret = kfd_criu_op(fd, KFD_CRIU_OP_PROCESS_INFO, &args);
	if (ret) {
		pr_err("PROCESS_INFO of file %u failed: %s\n", id, strerror(-ret));
		return ret == -ENOTSUP ? -EIO : ret;
	}
	pr_info("file %u: paused pid %u, image about %llu bytes\n", id, args.pid, args.image_size);
	ret = remember_dumped_file(fd, id, args.pid);
	if (ret)
		return ret < 0 ? ret : 0;
	image_name(name, id, "stream");
	memset(&args, 0, sizeof(args));
	args.image_fd = openat(criu_get_image_dir(), name,
			       O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ret = args.image_fd < 0 ? -errno : kfd_criu_op(fd, KFD_CRIU_OP_CHECKPOINT, &args);
	if (args.image_fd >= 0 && close(args.image_fd) && !ret)
		ret = -errno;
	if (ret) {	/* not -ENOTSUP: CRIU would take the file as not ours */
		pr_err("CHECKPOINT of file %u into %s failed: %s\n", id, name, strerror(-ret));
		return ret == -ENOTSUP ? -EIO : ret;
	}
	meta.format_version = args.format_version;
	meta.file_id = id;
	meta.stream_size = args.image_size;
	pr_info("file %u: %" PRIu64 " bytes of image format %u\n", id,
		meta.stream_size, meta.format_version);
	return write_meta(id, &meta);
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__DUMP_EXT_FILE, kfd_dump_file)

/* Mappings of /dev/kfd and, with KFD, render nodes: the image has them */
static int kfd_handle_device_vma(int fd __attribute__((unused)), const struct stat *st)
{
	enum dev_kind kind = dev_kind(st->st_mode, st->st_rdev);

	return kind == DEV_KFD || (kind == DEV_RENDER && kfd_image_mode(true)) ? 0 : -ENOTSUP;
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__HANDLE_DEVICE_VMA, kfd_handle_device_vma)

/*
 * A render node file: a new fd of the render file of the local GPU that its
 * GPU goes to, sharing that file with RESTORE's GPU map in either order.
 */
static int restore_render_file(const KfdCriuMeta *meta)
{
	int i = restore_gpus() ?: local_gpu(meta->render_gpu_id), fd;

	if (i >= 0 && gpu_map[i].drm_fd < 0)
		i = -ENODEV;	/* its render node did not open, as logged */
	fd = i < 0 ? -1 : dup(gpu_map[i].drm_fd);
	if (fd >= 0 && !fcntl(fd, F_SETFL, meta->open_flags))
		return fd;
	if (i >= 0)
		i = -errno;
	if (fd >= 0)
		close(fd);
	pr_err("file %u: no render node for GPU %#x: %s\n", meta->file_id,
	       meta->render_gpu_id, strerror(-i));
	return i;
}

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
	ret = kfd < 0 ? kfd : restore_gpus() ?: restore_op(kfd, sfd, &args);
	if (sfd >= 0)
		close(sfd);
	if (!ret) {
		pr_info("file %u: restored %llu bytes of image format %u, %d local GPU(s), %u mmap offset(s) moved\n",
			id, args.image_size, args.format_version, nr_gpus, args.num_offset_map);
		return kfd;
	}
	pr_err("RESTORE from %s failed: %s\n", name, strerror(-ret));
	if (kfd >= 0)
		close(kfd);
	return ret;
}

static int kfd_restore_file(int id)
{
	KfdCriuMeta *meta;
	int ret = read_meta(id, &meta);

	if (ret)
		return ret == -ENOENT ? -ENOTSUP : ret;
	/* An alias shares the KFD process that its file restores. */
	ret = meta->has_render_gpu_id ? restore_render_file(meta) :
	      meta->has_alias_of ? open_kfd(false) : restore_from_images(id);
	kfd_criu_meta__free_unpacked(meta, NULL);
	return ret == -ENOTSUP ? -EIO : ret;
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__RESTORE_EXT_FILE, kfd_restore_file)

/*
 * /dev/kfd and render node mappings go to the offsets RESTORE moved them to
 * (pgoff is in bytes), render nodes' through the GPU's render file, which has
 * its VM (CRIU mmaps a dup). CRIU 3.17 takes *@new_pgoff only on return 1.
 */
static int kfd_update_vma_map(const char *path, const uint64_t addr, const uint64_t old_pgoff,
			      uint64_t *new_pgoff, int *plugin_fd)
{
	struct stat st;
	enum dev_kind kind = stat(path, &st) ? DEV_OTHER : dev_kind(st.st_mode, st.st_rdev);
	int gpu = kind == DEV_RENDER ? gpu_of_minor(minor(st.st_rdev)) : -1;
	unsigned int i;

	if (kind == DEV_OTHER || (kind == DEV_RENDER && nr_gpus <= 0))
		return -ENOTSUP;
	*new_pgoff = old_pgoff;
	*plugin_fd = gpu < 0 ? -1 : gpu_map[gpu].drm_fd;
	for (i = 0; i < nr_offsets; i++)
		if (offsets[i].old_offset == old_pgoff)
			*new_pgoff = offsets[i].new_offset;
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
