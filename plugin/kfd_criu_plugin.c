// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: kfd_criu - CRIU plugin for processes that hold /dev/kfd
 *
 * In CRIU image mode (KFD ioctl 1.18) the kernel writes a process's KFD state,
 * GPU buffers included, as one stream that the plugin moves to CRIU's images
 * and back. Hooks return -ENOTSUP for what is not theirs. Render nodes of
 * other DRM devices are reattached without their state on request
 * (KFD_CRIU_DRM_REATTACH=1, kfd_criu_drm.c).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <link.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <linux/kcmp.h>
#include <linux/kfd_ioctl.h>

#include "kfd_criu.h"

#ifndef KFD_DEV_PATH
#define KFD_DEV_PATH		"/dev/kfd"
#endif
#define TOPOLOGY		"/sys/class/kfd/kfd/topology/nodes"
#define MAX_GPU_MAP		64	/* the most that RESTORE takes */
#define IMAGE_NAME_MAX		32
#define META_MAX_SIZE		4096	/* kfdcriu-<id>.img: 64 GPUs fit */
#define STOCK_PLUGIN		"amdgpu_plugin.so"	/* CRIU's own */
#define STOCK_PLUGIN_NAME	"amdgpu_plugin"		/* its name in inventories */
#define NO_PLUGIN_NAME		"kfd_criu/none"		/* a name no plugin has */
#define SHM_HEAD_MAX		64	/* a sem_t and the thunk's magic fit */
/* The thunk's files are a page or two; an image asking for more is bad */
#define SHM_SIZE_MAX		(1 << 20)
#define SHM_SEMAPHORE		"sem.hsakmt_semaphore"
/* CRIU's name for a hard link to a file mapped under a deleted name */
#define LINK_REMAP_FMT		"link_remap.%u%c"
#define LINK_REMAPS_MAX		8
#define KFD_TASKS_MAX		256	/* tasks with /dev/kfd in one dump */
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
/* CRIU's service fds count down from a base: its log, then images dir */
#define IMG_FD_BELOW_BASE	2
/* CRIU's image format: criu/include/magic.h, criu/include/pagemap.h */
#define CR_IMG_COMMON_MAGIC	0x54564319
#define CR_PAGEMAP_MAGIC	0x56084025
#define CR_PE_LAZY		(1 << 1)
#define CR_PE_PRESENT		(1 << 2)

enum dev_kind { DEV_OTHER, DEV_KFD, DEV_RENDER };

/* Files in /dev/shm that ROCm's thunk (libhsakmt) opens and maps */
static const char *const thunk_shm_files[] = {
	"hsakmt_shared_mem", SHM_SEMAPHORE,
};

/**
 * struct thunk_shm - the thunk's files of a dumped process, for its metadata
 * @files: one per file found
 * @ptrs: the metadata's array of them
 * @heads: their first bytes
 */
struct thunk_shm {
	KfdCriuShmFile files[ARRAY_SIZE(thunk_shm_files)];
	KfdCriuShmFile *ptrs[ARRAY_SIZE(thunk_shm_files)];
	uint8_t heads[ARRAY_SIZE(thunk_shm_files)][SHM_HEAD_MAX];
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

static struct kfd_dumped_file *dumped;
static unsigned int nr_dumped;
static char io_buf[1 << 16];
const char *kfd_criu_root = "";
static int criu_stage = -1;
/* CRIU before 3.19 dup()s the UPDATE_VMA_MAP fd; later ones close it */
static bool criu_dups_vma_fd;
/* CRIU before 4.0 ends a dump's plugins before its post-dump and lazy work */
static bool criu_fini_first;
/**
 * struct restored_tasks - the tasks of a restore that restored KFD state
 * @nr: how many did; past @max, any task may be one
 * @max: how many @vpids has room for: one page holds the list
 * @vpids: their pids in their own PID namespace, which all tasks of a
 *	   restore share (CRIU dumps no nested PID namespace)
 *
 * Shared between criu and the tasks it restores, which write it.
 */
struct restored_tasks {
	unsigned int nr;
	unsigned int max;
	pid_t vpids[];
};

static struct restored_tasks *restored;
static size_t restored_size;	/* bytes mapped at restored: a page */
/* This dump listed the plugin in CRIU's inventory (4.1 and later) */
static bool in_inventory;
/*
 * PROCESS_INFO's pairing of the /dev/kfd file dumped last: each GPU that its
 * process uses, by the gpu_id the process sees (user_gpu_id, the namespace
 * of the kernel's image) and by this machine's topology (actual_gpu_id).
 * -1: no /dev/kfd file dumped yet.
 */
static struct kfd_criu_device_bucket process_gpus[MAX_GPU_MAP];
static int nr_process_gpus = -1;

/* The local GPUs (-1: not read yet), their render files, the offset map */
static struct kfd_criu_gpu_map gpu_map[MAX_GPU_MAP];
static int gpu_minor[MAX_GPU_MAP];
static int nr_gpus = -1;
/* The last topology read skipped a GPU hidden from this task */
static bool gpus_hidden;
static struct kfd_criu_offset_map *offsets;
static unsigned int nr_offsets;
/*
 * The tasks of this dump that hold a /dev/kfd file, by their pids in
 * criu's PID namespace; -1: not looked for yet. Only their render node
 * files are the plugin's.
 */
static pid_t kfd_tasks[KFD_TASKS_MAX];
static int nr_kfd_tasks = -1;
/* The dumping machine's render minors and their gpu_ids, from the image */
static uint32_t image_minor[MAX_GPU_MAP], image_gpu[MAX_GPU_MAP];
static unsigned int nr_image_minors;

/*
 * CRIU 4.1 and later list a dump's plugins in its inventory. The criu
 * binary exports these, but no criu-plugin.h declares them (3.17 up to
 * criu-dev): weak, they are NULL in a criu without them, whichever CRIU's
 * headers the plugin was built against.
 */
int add_inventory_plugin(const char *name) __attribute__((weak));
bool check_and_remove_inventory_plugin(const char *name, size_t n) __attribute__((weak));

static void register_restore_ext_file(bool criu_4_3);
static void note_link_remaps(const struct kfd_dumped_file *f);

/**
 * kfd_criu_read_file() - read a small file whole
 * @dirfd: the directory @path is relative to, or AT_FDCWD
 * @path: the file
 * @buf: where its bytes go, NUL-terminated
 * @size: @buf's size: at most @size - 1 bytes are read
 *
 * Return: the bytes read, or -errno (then @buf is empty).
 */
ssize_t kfd_criu_read_file(int dirfd, const char *path, char *buf, size_t size)
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

/**
 * kfd_criu_render_minor() - whether DRM minor @minor is a render node's here
 * @minor: a minor of DRM's major
 *
 * Minors 128 to 191 are render nodes'. Past 191 a minor may be a render or
 * a card node's (DRM_EXTENDED_MINOR_LIMIT in drivers/gpu/drm/drm_drv.c):
 * the device's name in sysfs, renderD<minor>, tells.
 *
 * Return: true for a render node.
 */
bool kfd_criu_render_minor(unsigned int minor)
{
	char path[PATH_MAX], link[PATH_MAX], name[32];
	size_t len;
	ssize_t n;

	if (minor >= DRM_RENDER_MINOR_FIRST && minor <= DRM_RENDER_MINOR_LAST)
		return true;
	if (minor <= DRM_RENDER_MINOR_LAST || minor > DRM_MINOR_MAX)
		return false;
	snprintf(path, sizeof(path), "%s/sys/dev/char/%u:%u", kfd_criu_root, DRM_MAJOR, minor);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	len = snprintf(name, sizeof(name), "/renderD%u", minor);
	return (size_t)n >= len && !strcmp(link + n - len, name);
}

/**
 * kfd_criu_render_minor_of_path() - the render minor a dumped path names
 * @path: a path as CRIU hands it to UPDATE_VMA_MAP
 *
 * CRIU hands over some paths with a doubled leading slash,
 * "//dev/dri/renderD128" (CRIU's amdgpu plugin says so and normalizes
 * them, plugins/amdgpu/amdgpu_plugin.c): leading slashes count as one.
 *
 * Return: the minor of /dev/dri/renderD<minor>, or -1 for another path.
 */
int kfd_criu_render_minor_of_path(const char *path)
{
	unsigned int minor;
	char end;

	while (path[0] == '/' && path[1] == '/')
		path++;
	if (sscanf(path, "/dev/dri/renderD%u%c", &minor, &end) != 1 ||
	    minor < DRM_RENDER_MINOR_FIRST || minor > DRM_MINOR_MAX)
		return -1;
	return minor;
}

/* kfdcriu-<id>.img holds a KfdCriuMeta, kfdcriu-<id>.stream the stream */
#define image_name(buf, id, ext) \
	snprintf(buf, IMAGE_NAME_MAX, "kfdcriu-%u.%s", (unsigned int)(id), ext)

/* Whether a file of @mode and @rdev is a render node, /dev/kfd or other */
static enum dev_kind dev_kind(mode_t mode, dev_t rdev)
{
	struct stat st;

	if (S_ISCHR(mode) && major(rdev) == DRM_MAJOR && kfd_criu_render_minor(minor(rdev)))
		return DEV_RENDER;
	return S_ISCHR(mode) && !stat(KFD_DEV_PATH, &st) &&
	       S_ISCHR(st.st_mode) && st.st_rdev == rdev ? DEV_KFD : DEV_OTHER;
}

/* The image-mode version of legacy CRIU op @op, KFD_CRIU_OP_<op> */
static int kfd_criu_op(int kfd, __u32 op, struct kfd_ioctl_criu_args *args)
{
	args->op = KFD_CRIU_OP_IMAGE_PROCESS_INFO + op;
	return ioctl(kfd, AMDKFD_IOC_CRIU_OP, args) ? -errno : 0;
}

/*
 * A new /dev/kfd fd of a kernel with image mode; -ENOTSUP without it, or
 * the errno of a task not allowed the CRIU ioctl. The probe is an
 * image-mode UNPAUSE of this new, unpaused process: image mode refuses it
 * as a wrong state (-EBADFD), older kernels as an unknown or invalid
 * request.
 */
static int open_kfd(void)
{
	struct kfd_ioctl_criu_args args = { 0 };
	int kfd = open(KFD_DEV_PATH, O_RDWR | O_CLOEXEC), ret;

	if (kfd < 0)
		return -errno;
	ret = kfd_criu_op(kfd, KFD_CRIU_OP_UNPAUSE, &args);
	if (ret == -EBADFD)
		return kfd;
	close(kfd);
	return ret == -EACCES || ret == -EPERM ? ret : -ENOTSUP;
}

/*
 * Whether the kernel has KFD image mode, asked once. Without it another
 * plugin may take /dev/kfd, and if none does, CRIU's own error names only
 * the file: one warning, which CRIU's default log level shows, says why.
 */
static int image_mode = -1;

static bool kfd_image_mode(void)
{
	int kfd;

	if (image_mode >= 0)
		return image_mode;
	kfd = open_kfd();
	image_mode = kfd >= 0;
	if (kfd >= 0)
		close(kfd);
	else if (kfd == -ENOTSUP)
		pr_warn("the kernel has no KFD CRIU image mode: leaving %s to other plugins\n",
			KFD_DEV_PATH);
	else
		pr_warn("cannot use %s: %s: leaving it to other plugins\n",
			KFD_DEV_PATH, strerror(-kfd));
	return image_mode;
}

/**
 * kfd_criu_write_image() - write a file into CRIU's images directory
 * @name: its name there
 * @buf: its contents
 * @len: their length
 *
 * A failure is logged.
 *
 * Return: 0 or -errno.
 */
int kfd_criu_write_image(const char *name, const void *buf, size_t len)
{
	int fd, ret;

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

/**
 * kfd_criu_write_meta() - write a dumped file's metadata image
 * @id: CRIU's id of the file: the image is kfdcriu-<id>.img
 * @meta: the metadata
 *
 * Return: 0 or -errno, logged.
 */
int kfd_criu_write_meta(unsigned int id, const KfdCriuMeta *meta)
{
	size_t len = kfd_criu_meta__get_packed_size(meta);
	uint8_t buf[META_MAX_SIZE];
	char name[IMAGE_NAME_MAX];

	if (len > sizeof(buf))	/* integers and short names: far less */
		return -EMSGSIZE;
	kfd_criu_meta__pack(meta, buf);
	image_name(name, id, "img");
	return kfd_criu_write_image(name, buf, len);
}

/* Reads kfdcriu-<id>.img; -ENOENT (not logged): no such image, not ours */
static int read_meta(unsigned int id, KfdCriuMeta **meta)
{
	char buf[META_MAX_SIZE + 2], name[IMAGE_NAME_MAX];
	ssize_t len;

	image_name(name, id, "img");
	len = kfd_criu_read_file(criu_get_image_dir(), name, buf, sizeof(buf));
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
		return kfd_criu_write_meta(id, &meta) ?: 1;
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

/* A topology file of a GPU this task may not use: a device cgroup denies it */
static bool hidden_gpu(ssize_t ret)
{
	return ret == -EPERM || ret == -EACCES;
}

/* Reads topology node @node's gpu_id (0: a CPU) and render minor (-1: none) */
static ssize_t read_topology_node(unsigned int node, unsigned int *id, int *minor)
{
	char path[512], *prop;
	ssize_t ret;

	snprintf(path, sizeof(path), "%s" TOPOLOGY "/%u/gpu_id", kfd_criu_root, node);
	ret = kfd_criu_read_file(AT_FDCWD, path, io_buf, sizeof(io_buf));
	*id = ret < 0 ? 0 : strtoul(io_buf, NULL, 10);
	if (!*id)
		return ret;
	snprintf(path, sizeof(path), "%s" TOPOLOGY "/%u/properties", kfd_criu_root, node);
	ret = kfd_criu_read_file(AT_FDCWD, path, io_buf, sizeof(io_buf));
	prop = ret < 0 ? NULL : strstr(io_buf, "drm_render_minor ");
	*minor = prop ? atoi(prop + 17) : -1;
	return hidden_gpu(ret) ? ret : 0;
}

/*
 * Reads the gpu_ids and render minors of the topology's first 64 GPUs that
 * this task may use; the others it skips, saying so.
 */
static int read_topology(void)
{
	unsigned int node, id;
	ssize_t ret = 0;
	int minor;

	gpus_hidden = false;
	for (node = 0, nr_gpus = 0; ret != -ENOENT && nr_gpus < MAX_GPU_MAP; node++) {
		ret = read_topology_node(node, &id, &minor);
		if (hidden_gpu(ret)) {
			gpus_hidden = true;
			pr_info("KFD topology node %u: %s: a GPU hidden from this task, skipped\n",
				node, strerror(-ret));
			continue;
		}
		if (ret < 0 && ret != -ENOENT)
			break;
		if (ret >= 0 && id) {
			gpu_minor[nr_gpus] = minor;
			gpu_map[nr_gpus++] = (struct kfd_criu_gpu_map){
				.local_gpu_id = id, .drm_fd = -1 };
		}
	}
	if (ret >= 0 || ret == -ENOENT)
		return 0;
	pr_err("cannot read the KFD topology in %s" TOPOLOGY ": %s\n", kfd_criu_root, strerror(-ret));
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

/**
 * kfd_criu_fd_base() - where the plugin's own fds go in a restored task
 *
 * CRIU puts its service fds just below the top of the fd table that the
 * task's own fds need, so fds above them neither collide with a restored
 * fd nor grow the table much.
 *
 * Return: the first fd above CRIU's service fds in this task.
 */
int kfd_criu_fd_base(void)
{
	int img = criu_get_image_dir();

	return img < 0 ? 0 : img + IMG_FD_BELOW_BASE;
}

/*
 * This restore's GPUs, at the first need (a render node file or RESTORE), so
 * both share each GPU's render file. Those stay open for UPDATE_VMA_MAP just
 * above CRIU's service fds; -1 if one fails.
 */
static int restore_gpus(void)
{
	char path[512];
	int i, fd, ret;

	if (nr_gpus >= 0)
		return 0;
	ret = read_topology() ?: parse_gpu_map(kfd_criu_option(KFD_OPT_GPU_MAP) ?: "", gpu_map,
					       nr_gpus);
	for (i = 0; !ret && i < nr_gpus; i++) {
		snprintf(path, sizeof(path), "%s/dev/dri/renderD%d", kfd_criu_root, gpu_minor[i]);
		fd = open(path, O_RDWR | O_CLOEXEC);
		gpu_map[i].drm_fd = fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, kfd_criu_fd_base());
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
 * Where the image at @fd starts: the file position, which the kernel takes
 * as image_offset and leaves alone, as pread(2) and pwrite(2) do; 0 for a
 * pipe or socket, which has none (and where the kernel takes only 0).
 */
static int image_start(int fd, __u64 *offset)
{
	off_t pos = lseek(fd, 0, SEEK_CUR);

	if (pos < 0 && errno != ESPIPE)
		return -errno;
	*offset = pos < 0 ? 0 : (__u64)pos;
	return 0;
}

/* Moves a seekable @fd past the image, where write(2) or read(2) would */
static int image_skip(int fd, __u64 offset, __u64 size)
{
	if (lseek(fd, (off_t)(offset + size), SEEK_SET) < 0 && errno != ESPIPE)
		return -errno;
	return 0;
}

/*
 * RESTORE from @sfd into the process of @kfd with the GPU map and room for
 * the offsets it changes; with too little room, once more with enough.
 * Only -E2BIG means that: any other error, -ENOSPC from a GPU without a
 * queue slot or VMID left among them, would fail the second RESTORE too,
 * after it had created every buffer and copied its contents again.
 */
static int restore_op(int kfd, int sfd, struct kfd_ioctl_criu_args *args)
{
	uint32_t room = 64;	/* the first attempt's, enough for most */
	__u64 start = 0;
	int ret, tries;

	ret = image_start(sfd, &start);
	if (ret)
		return ret;
	/* A retry reads the image again from the same offset */
	for (tries = 0; tries < 2 && (!tries || ret == -E2BIG); tries++) {
		free(offsets);
		offsets = calloc(room, sizeof(*offsets));
		if (!offsets)
			return -ENOMEM;
		*args = (struct kfd_ioctl_criu_args){
			.image_fd = sfd, .image_offset = start,
			.num_gpu_map = nr_gpus,
			.gpu_map_ptr = nr_gpus ? (uintptr_t)gpu_map : 0,
			.offset_map_ptr = (uintptr_t)offsets,
			.num_offset_map = room };
		ret = kfd_criu_op(kfd, KFD_CRIU_OP_RESTORE, args);
		room = args->num_offset_map;
	}
	nr_offsets = ret ? 0 : args->num_offset_map;
	return ret ?: image_skip(sfd, start, args->image_size);
}

/* Finds CRIU's amdgpu plugin among the objects loaded into this criu */
static int find_stock_plugin(struct dl_phdr_info *info, size_t size __attribute__((unused)),
			     void *path)
{
	const char *name = strrchr(info->dlpi_name, '/');

	if (!name || strcmp(name + 1, STOCK_PLUGIN))
		return 0;
	snprintf(path, PATH_MAX, "%s", info->dlpi_name);
	return 1;
}

/*
 * CRIU's amdgpu plugin takes /dev/kfd and render nodes too, and CRIU runs
 * the first plugin, in readdir() order, that does not decline a file: with
 * both, which one dumps or restores a process is chance. Finds it loaded
 * (before this one) or beside this one (to be loaded after it).
 */
static bool stock_plugin_present(char path[PATH_MAX])
{
	char self[PATH_MAX];
	Dl_info info;

	if (dl_iterate_phdr(find_stock_plugin, path))
		return true;
	if (!dladdr(&CR_PLUGIN_DESC, &info) || !info.dli_fname)
		return false;
	snprintf(self, sizeof(self), "%s", info.dli_fname);
	snprintf(path, PATH_MAX, "%s/" STOCK_PLUGIN, dirname(self));
	return !access(path, F_OK);
}

/*
 * Takes @name off a 4.x restore's list of the plugins its images need;
 * whether it was listed. CRIU compares the first n bytes: with the NUL, only
 * the whole name matches, not one that it begins.
 */
static bool take_off_inventory(const char *name)
{
	return check_and_remove_inventory_plugin(name, strlen(name) + 1);
}

/*
 * Whether CRIU's amdgpu plugin wrote the images being restored, by their
 * inventory (CRIU 4.1 and later). CRIU answers only by taking the name off
 * its list, which is harmless: the restore is then refused. For images of
 * an older CRIU, without a list, it answers yes to every name: a name that
 * no plugin has tells those apart.
 */
static bool stock_plugin_in_inventory(void)
{
	if (!check_and_remove_inventory_plugin || take_off_inventory(NO_PLUGIN_NAME))
		return false;
	return take_off_inventory(STOCK_PLUGIN_NAME);
}

/* Maps the list of restored tasks, a page that the restored tasks share */
static int map_restored_tasks(void)
{
	restored_size = sysconf(_SC_PAGESIZE);
	restored = mmap(NULL, restored_size, PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (restored != MAP_FAILED) {
		restored->max = (restored_size - sizeof(*restored)) / sizeof(restored->vpids[0]);
		return 0;
	}
	restored = NULL;
	pr_err("cannot map the restore's list of restored tasks: %s\n", strerror(errno));
	return -ENOMEM;
}

/*
 * Refuses to share a criu with CRIU's amdgpu plugin, or to restore its
 * images; notes the CRIU release's UPDATE_VMA_MAP convention and registers
 * the RESTORE_EXT_FILE it calls; takes this plugin off a 4.x restore's
 * list of plugins the images need, as CRIU requires.
 */
static int kfd_plugin_init(int stage)
{
	criu_plugin_get_options_t *get_options;
	static char stock[PATH_MAX];

	criu_stage = stage;
	/* A function that 4.3 added; 4.3 passes RESTORE_EXT_FILE a retry flag */
	get_options = dlsym(RTLD_DEFAULT, "criu_plugin_get_options");
	kfd_criu_options_load(get_options);
	nr_kfd_tasks = -1;
	if (stock_plugin_present(stock)) {
		pr_err("CRIU's amdgpu plugin %s is installed too: both take /dev/kfd and the first found wins; give each its own plugin directory (CRIU's libdir) or remove one\n",
		       stock);
		return -EEXIST;
	}
	/* Only now: a refused init must leave the images as they are */
	kfd_drm_init(stage);
	/* A function of criu 3.17 and 3.18 that 3.19 removed */
	criu_dups_vma_fd = dlsym(RTLD_DEFAULT, "prepare_task_cgroup");
	/* A function that 4.0 added, the release that moved fini(DUMP) later */
	criu_fini_first = !dlsym(RTLD_DEFAULT, "pmc_fill");
	register_restore_ext_file(get_options);
	if (stage != CR_PLUGIN_STAGE__RESTORE)
		return 0;
	if (check_and_remove_inventory_plugin)
		take_off_inventory(CR_PLUGIN_DESC.name);
	if (stock_plugin_in_inventory()) {
		pr_err("these images were dumped by CRIU's amdgpu plugin (their inventory lists " STOCK_PLUGIN_NAME "), which kfd_criu cannot restore: restore them with that plugin, from a plugin directory (CRIU's libdir) without kfd_criu\n");
		return -EINVAL;
	}
	return map_restored_tasks();
}

/* A varint of a protobuf message at *@p, before @end */
static bool pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *val)
{
	unsigned int shift;

	for (*val = 0, shift = 0; *p < end && shift < 64; shift += 7) {
		*val |= (uint64_t)(**p & 0x7f) << shift;
		if (!(*(*p)++ & 0x80))
			return true;
	}
	return false;
}

/*
 * Whether pagemap entry @p (to @end) leaves its pages to be served later:
 * PE_LAZY without PE_PRESENT in its flags, field 4 (images/pagemap.proto;
 * criu/page-xfer.c ppb_xfer_flags(): pages that could be lazy are PE_LAZY
 * in every dump, and PE_PRESENT too unless criu dump --lazy-pages).
 */
static bool pagemap_entry_lazy(const uint8_t *p, const uint8_t *end)
{
	uint64_t key, val;

	while (pb_varint(&p, end, &key) && (key & 7) == 0 && pb_varint(&p, end, &val))
		if (key >> 3 == 4 && (val & (CR_PE_LAZY | CR_PE_PRESENT)) == CR_PE_LAZY)
			return true;
	return false;
}

/*
 * Whether pagemap image @name leaves pages to be served lazily, by its
 * first 64 KiB: the two magics, then each entry's size and message, the
 * first of which is the head (criu/image.c).
 */
static bool pagemap_lazy(int dir, const char *name)
{
	const uint8_t *p = (uint8_t *)io_buf, *end;
	uint32_t magic[2], len;
	ssize_t n;

	n = kfd_criu_read_file(dir, name, io_buf, sizeof(io_buf));
	if (n < (ssize_t)sizeof(magic))
		return false;
	memcpy(magic, p, sizeof(magic));
	if (magic[0] != CR_IMG_COMMON_MAGIC || magic[1] != CR_PAGEMAP_MAGIC)
		return false;
	end = p + n;
	for (p += sizeof(magic); end - p >= (ssize_t)sizeof(len); p += len) {
		memcpy(&len, p, sizeof(len));
		p += sizeof(len);
		if (len > end - p)
			return false;
		if (p != (uint8_t *)io_buf + sizeof(magic) + sizeof(len) &&
		    pagemap_entry_lazy(p, p + len))
			return true;
	}
	return false;
}

/* Whether this dump is criu dump --lazy-pages: a task's pages are left to serve */
static bool lazy_dump(void)
{
	int dir = openat(criu_get_image_dir(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dir < 0 ? NULL : fdopendir(dir);
	struct dirent *de;
	unsigned long pid;
	bool lazy = false;
	char end;

	while (d && !lazy && (de = readdir(d)))
		lazy = sscanf(de->d_name, "pagemap-%lu.im%c", &pid, &end) == 2 && end == 'g' &&
		       pagemap_lazy(dirfd(d), de->d_name);
	if (d)
		closedir(d);
	else if (dir >= 0)
		close(dir);
	return lazy;
}

/*
 * Whether CRIU may resume the dumped tasks although fini is told that the
 * dump succeeded: every release resumes them when a post-dump action
 * script fails, and passes fini only its own result (criu/cr-dump.c
 * cr_dump_finish(): "ret || post_dump_ret"). CRIU sets
 * CRTOOLS_SCRIPT_ACTION in its own environment whenever it runs shell
 * scripts (--action-script), the pre-dump ones before plugins load
 * (criu/action-scripts.c run_shell_scripts()); an RPC service (criu swrk,
 * criu service: runc, podman, libcriu) may ask its client instead.
 */
static bool scripts_may_resume(void)
{
	char path[512], cmd[64];
	const char *arg;
	ssize_t n;

	if (getenv("CRTOOLS_SCRIPT_ACTION"))
		return true;
	snprintf(path, sizeof(path), "%s/proc/self/cmdline", kfd_criu_root);
	n = kfd_criu_read_file(AT_FDCWD, path, cmd, sizeof(cmd));
	arg = n > 0 ? cmd + strlen(cmd) + 1 : cmd + 1;
	return arg < cmd + n && (!strcmp(arg, "swrk") || !strcmp(arg, "service"));
}

/*
 * Whether a successful dump UNPAUSEs its tasks, which may be killed or go
 * on: no CRIU release tells plugins, and the option leave_running=0 says
 * they are killed. An UNPAUSE of a task that is then killed costs little, a
 * missing one hangs a live task. So leave_running=0 holds only where no
 * action script can make CRIU resume them. CRIU before 4.0 calls fini
 * before it serves a --lazy-pages dump's memory (v3.19:criu/cr-dump.c
 * cr_dump_finish()): the GPU then stays paused, or it would write pages
 * that are still to be served.
 */
static bool unpause_after_dump(void)
{
	const char *keep = kfd_criu_option(KFD_OPT_LEAVE_RUNNING);
	bool scripts = scripts_may_resume();

	if (criu_fini_first && lazy_dump()) {
		if (scripts)
			pr_err("criu dump --lazy-pages of CRIU before 4.0 serves memory after this plugin's end: the GPU stays paused, and if a post-dump action script fails, the resumed tasks hang\n");
		return false;
	}
	if (!keep || strcmp(keep, "0"))
		return true;
	if (scripts)
		pr_warn("leave_running=0 not followed: CRIU runs action scripts, and resumes the tasks when a post-dump one fails, without telling plugins\n");
	return scripts;
}

/*
 * At the end of a dump, UNPAUSE every paused task that may go on (see
 * unpause_after_dump()). A failed dump always unpauses: CRIU resumes the
 * tasks.
 */
static void kfd_plugin_fini(int stage, int ret)
{
	bool resume = stage == CR_PLUGIN_STAGE__DUMP && nr_dumped && (ret || unpause_after_dump());
	struct kfd_ioctl_criu_args args = { 0 };
	unsigned int i;

	for (i = 0; stage == CR_PLUGIN_STAGE__DUMP && !ret && i < nr_dumped; i++)
		note_link_remaps(&dumped[i]);
	for (i = 0; i < nr_dumped; i++) {
		ret = resume ? kfd_criu_op(dumped[i].fd, KFD_CRIU_OP_UNPAUSE, &args) : 0;
		if (ret)
			pr_err("file %u: UNPAUSE failed: %s\n", dumped[i].id, strerror(-ret));
		else
			pr_info("file %u: %s\n", dumped[i].id, resume ?
				"unpaused the process" : "not unpausing: the task is killed or memory is still served");
		close(dumped[i].fd);
	}
	free(dumped);
	dumped = NULL;
	nr_dumped = 0;
	in_inventory = false;
	nr_process_gpus = -1;
	nr_kfd_tasks = -1;
	if (restored)
		munmap(restored, restored_size);
	restored = NULL;
	kfd_drm_fini();
	kfd_criu_options_forget();
}

CR_PLUGIN_REGISTER("kfd_criu", kfd_plugin_init, kfd_plugin_fini)

/* Whether @fd is a socket connected to criu-image-streamer's */
static bool streamer_socket(int fd)
{
	struct sockaddr_un peer;
	socklen_t len = sizeof(peer);
	const char *name;

	memset(&peer, 0, sizeof(peer));
	if (getpeername(fd, (struct sockaddr *)&peer, &len) || peer.sun_family != AF_UNIX ||
	    len <= offsetof(struct sockaddr_un, sun_path) || !peer.sun_path[0])
		return false;
	peer.sun_path[sizeof(peer.sun_path) - 1] = '\0';
	name = strrchr(peer.sun_path, '/');
	name = name ? name + 1 : peer.sun_path;
	return !strcmp(name, "streamer-capture.sock") || !strcmp(name, "streamer-serve.sock");
}

/**
 * kfd_criu_images_streamed() - whether criu --stream is in use
 *
 * The plugin's files, which it writes into the images directory itself,
 * would miss the stream. With --stream, criu keeps a socket connected to
 * the one criu-image-streamer listens on in the images directory
 * (img_streamer_init(), criu/img-streamer.c) until its images are done;
 * this process (criu at dump, a task forked from it at restore) has it.
 * A socket file alone is no sign: one that a streamer left behind does not
 * make a dump a streamed one. (criu's exported img_streamer_open() is no
 * sign either: every criu has it, and called without --stream at dump it
 * hits a BUG_ON on the streamer's mode.)
 *
 * Return: true if images go through criu-image-streamer.
 */
bool kfd_criu_images_streamed(void)
{
	struct dirent *e;
	bool found = false;
	DIR *dir;
	int fd;

	dir = opendir("/proc/self/fd");
	while (dir && !found && (e = readdir(dir)))
		found = sscanf(e->d_name, "%d", &fd) == 1 && fd != dirfd(dir) && streamer_socket(fd);
	if (dir)
		closedir(dir);
	return found;
}

/* The KFD GPU of render minor @minor, from a topology read now; -1 if none */
static int kfd_gpu_of_minor(int minor)
{
	return read_topology() ? -1 : gpu_of_minor(minor);
}

/*
 * Whether render minor @minor is certainly no KFD GPU's: a topology read
 * now (none without KFD) has no GPU of that minor, hides none from this
 * task and is not cut at the 64 GPUs it reads. Only such a render node may
 * be reattached without its state.
 */
static bool no_kfd_gpu_of_minor(int minor)
{
	return !read_topology() && !gpus_hidden && nr_gpus < MAX_GPU_MAP &&
	       gpu_of_minor(minor) < 0;
}

/* Whether a file of @st is /dev/kfd or a render node that may be a KFD GPU's */
static bool kfd_file(const struct stat *st)
{
	enum dev_kind kind = dev_kind(st->st_mode, st->st_rdev);

	return kind == DEV_KFD ||
	       (kind == DEV_RENDER && !no_kfd_gpu_of_minor(minor(st->st_rdev)));
}

/*
 * The gpu_id that the images give local GPU @local_id: the one that the
 * process of the /dev/kfd file dumped last sees for it, as the kernel's image
 * and RESTORE's offset map do. A GPU that the process does not use keeps its
 * topology gpu_id, but if the process sees another GPU under that id, the
 * id would send its files and mappings where that GPU goes: 0, none fits.
 * Before the first /dev/kfd file, whose process is not known yet, the
 * topology's gpu_id.
 */
static uint32_t process_gpu_id(uint32_t local_id)
{
	int i;

	for (i = 0; i < nr_process_gpus; i++)
		if (process_gpus[i].actual_gpu_id == local_id)
			return process_gpus[i].user_gpu_id;
	for (i = 0; i < nr_process_gpus; i++)
		if (process_gpus[i].user_gpu_id == local_id)
			return 0;
	return local_id;
}

/* Whether task @pid of the dump is one this criu traces: its TracerPid */
static bool traced_by_criu(const char *pid)
{
	char path[PATH_MAX], *s;

	snprintf(path, sizeof(path), "%s/proc/%s/status", kfd_criu_root, pid);
	if (kfd_criu_read_file(AT_FDCWD, path, io_buf, sizeof(io_buf)) < 0)
		return false;
	s = strstr(io_buf, "\nTracerPid:");
	return s && strtol(s + 11, NULL, 10) == getpid();
}

typedef bool fd_match_t(const char *path, pid_t pid, int fd, int arg);

/* Whether task @pid has an fd that @match accepts, given @arg */
static bool task_has_fd(pid_t pid, fd_match_t *match, int arg)
{
	char path[PATH_MAX];
	struct dirent *e;
	bool found = false;
	DIR *dir;
	int fd;

	snprintf(path, sizeof(path), "%s/proc/%d/fd", kfd_criu_root, pid);
	dir = opendir(path);
	while (dir && !found && (e = readdir(dir))) {
		if (sscanf(e->d_name, "%d", &fd) != 1)
			continue;
		snprintf(path, sizeof(path), "%s/proc/%d/fd/%d", kfd_criu_root, pid, fd);
		found = match(path, pid, fd, arg);
	}
	if (dir)
		closedir(dir);
	return found;
}

/* An fd of /dev/kfd */
static bool kfd_fd(const char *path, pid_t pid __attribute__((unused)),
		   int fd __attribute__((unused)), int arg __attribute__((unused)))
{
	struct stat st;

	return !stat(path, &st) && dev_kind(st.st_mode, st.st_rdev) == DEV_KFD;
}

/*
 * An fd of the open file that criu's fd @mine is of. A kernel without
 * kcmp() (CONFIG_KCMP, which CRIU needs too) is said once: no render node
 * file can then be told a KFD task's.
 */
static bool same_open_file(const char *path __attribute__((unused)), pid_t pid, int fd,
			   int mine)
{
	static bool told;

	if (!syscall(SYS_kcmp, getpid(), pid, KCMP_FILE, mine, fd))
		return true;
	if (errno == ENOSYS && !told)
		pr_err("kcmp() is not available: render node files cannot be told a KFD task's\n");
	told |= errno == ENOSYS;
	return false;
}

/*
 * The tasks of the dump that hold /dev/kfd, once per dump: those whose
 * TracerPid is this criu (it seizes every task it dumps before it dumps
 * any file) and that have a /dev/kfd fd.
 */
static void find_kfd_tasks(void)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *dir;
	int pid;

	nr_kfd_tasks = 0;
	snprintf(path, sizeof(path), "%s/proc", kfd_criu_root);
	dir = opendir(path);
	while (dir && nr_kfd_tasks < KFD_TASKS_MAX && (e = readdir(dir)))
		if (sscanf(e->d_name, "%d", &pid) == 1 && traced_by_criu(e->d_name) &&
		    task_has_fd(pid, kfd_fd, -1))
			kfd_tasks[nr_kfd_tasks++] = pid;
	if (dir)
		closedir(dir);
}

/*
 * Whether render node file @fd, criu's copy, is a file of a task that holds
 * /dev/kfd (kcmp(KCMP_FILE) against each of their fds). Its /dev/kfd file
 * may come later in the dump: a lower fd number. A render node file of a
 * KFD GPU in any other process (Mesa, Vulkan) has DRM state that nothing
 * here dumps.
 */
static bool render_file_of_kfd_task(int fd)
{
	int i;

	if (nr_kfd_tasks < 0)
		find_kfd_tasks();
	for (i = 0; i < nr_kfd_tasks; i++)
		if (task_has_fd(kfd_tasks[i], same_open_file, fd))
			return true;
	return false;
}

/*
 * Render node file @fd of minor @minor: its GPU, by the gpu_id the process
 * sees, and its flags, if a KFD GPU and a file of a task that holds
 * /dev/kfd. The thunk opens /dev/kfd before render nodes and CRIU dumps
 * fds in order, so a render node file of a process with /dev/kfd mostly
 * comes after that; one dumped before any /dev/kfd file keeps the
 * topology's gpu_id.
 */
static int dump_render_file(int fd, int id, int minor)
{
	KfdCriuMeta meta = KFD_CRIU_META__INIT;
	int i = kfd_gpu_of_minor(minor);
	uint32_t local_id;

	if (i < 0)
		return -ENOTSUP;
	local_id = gpu_map[i].local_gpu_id;
	if (!render_file_of_kfd_task(fd)) {
		pr_warn("file %u: renderD%d, of KFD GPU %#x, is open in a process without /dev/kfd (a graphics API's): not dumped, kfd_criu dumps no DRM state of its own\n",
			id, minor, local_id);
		return -ENOTSUP;
	}
	meta.file_id = id;
	meta.render_gpu_id = process_gpu_id(local_id);
	if (meta.render_gpu_id) {
		meta.has_render_gpu_id = true;
	} else {
		meta.has_unused_gpu_id = true;
		meta.unused_gpu_id = local_id;
	}
	meta.has_open_flags = true;
	meta.open_flags = fcntl(fd, F_GETFL);
	if (meta.render_gpu_id == local_id)
		pr_info("file %u: render node of GPU %#x\n", id, local_id);
	else if (meta.render_gpu_id)
		pr_info("file %u: render node of GPU %#x, %#x in this machine's topology\n",
			id, meta.render_gpu_id, local_id);
	else
		pr_info("file %u: render node of GPU %#x, which the process does not use: it sees another GPU under that gpu_id\n",
			id, local_id);
	return kfd_criu_write_meta(id, &meta);
}

/*
 * Notes the thunk's files in /dev/shm as process @pid sees them: CRIU
 * restores them by path, and a fresh host has none.
 */
static void find_thunk_shm(pid_t pid, struct thunk_shm *shm, KfdCriuMeta *meta)
{
	unsigned int i, n = 0;
	char path[512];
	struct stat st;
	ssize_t len;
	int fd;

	for (i = 0; i < ARRAY_SIZE(thunk_shm_files); i++) {
		snprintf(path, sizeof(path), "%s/proc/%d/root/dev/shm/%s", kfd_criu_root, pid,
			 thunk_shm_files[i]);
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		len = fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) ? -1 :
		      pread(fd, shm->heads[n], SHM_HEAD_MAX, 0);
		if (fd >= 0)
			close(fd);
		if (len < 0)
			continue;
		kfd_criu_shm_file__init(&shm->files[n]);
		shm->files[n].name = (char *)thunk_shm_files[i];
		shm->files[n].size = st.st_size;
		shm->files[n].mode = st.st_mode & 07777;
		shm->files[n].uid = st.st_uid;
		shm->files[n].gid = st.st_gid;
		shm->files[n].head.len = len;
		shm->files[n].head.data = shm->heads[n];
		shm->ptrs[n] = &shm->files[n];
		n++;
	}
	meta->n_shm_files = n;
	meta->shm_files = shm->ptrs;
}

/*
 * The dumping machine's GPUs, by the gpu_ids the process sees, and their
 * render minors go with a /dev/kfd file's metadata: a render node mapping
 * is restored by the minor it had. A GPU that no gpu_id names safely is
 * left out: its mappings are not the plugin's at restore.
 */
static int write_kfd_meta(KfdCriuMeta *meta)
{
	KfdCriuRenderNode nodes[MAX_GPU_MAP], *ptrs[MAX_GPU_MAP];
	uint32_t gpu_id;
	int i, n = 0;

	for (i = 0; !read_topology() && i < nr_gpus; i++) {
		gpu_id = process_gpu_id(gpu_map[i].local_gpu_id);
		if (gpu_minor[i] < 0 || !gpu_id)
			continue;
		kfd_criu_render_node__init(&nodes[n]);
		nodes[n].gpu_id = gpu_id;
		nodes[n].minor = gpu_minor[i];
		ptrs[n] = &nodes[n];
		n++;
	}
	meta->n_render_nodes = n;
	meta->render_nodes = ptrs;
	return kfd_criu_write_meta(meta->file_id, meta);
}

/*
 * The names in task @pid's /dev/shm that CRIU made for the thunk's
 * semaphore, into @names: hard links to it named link_remap.<id>.
 */
static unsigned int find_link_remaps(pid_t pid, char names[][NAME_MAX + 1])
{
	char path[PATH_MAX], end;
	struct stat sem, st;
	unsigned int n = 0, num;
	struct dirent *e;
	DIR *dir = NULL;
	int dfd;

	snprintf(path, sizeof(path), "%s/proc/%d/root/dev/shm", kfd_criu_root, pid);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0 && !fstatat(dfd, SHM_SEMAPHORE, &sem, AT_SYMLINK_NOFOLLOW))
		dir = fdopendir(dfd);
	if (!dir) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	while (n < LINK_REMAPS_MAX && (e = readdir(dir)))
		if (sscanf(e->d_name, LINK_REMAP_FMT, &num, &end) == 1 &&
		    !fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
		    st.st_ino == sem.st_ino && st.st_dev == sem.st_dev)
			snprintf(names[n++], NAME_MAX + 1, "%s", e->d_name);
	closedir(dir);
	return n;
}

/*
 * The first ROCm process of a boot maps the thunk's semaphore under the
 * temporary name that sem_open() created it as, deleted once the file had
 * its final name. CRIU dumps such a mapping through a hard link that it
 * makes beside it, link_remap.<id> (create_link_remap(),
 * criu/files-reg.c, with --link-remap), and needs that link at restore: a
 * fresh host has neither it nor the semaphore. At the end of a successful
 * dump, when the links are there (CRIU 4.0 and later remove them before
 * this when the tasks are left running), their names go into dumped file
 * @f's metadata, for the restore to make them again.
 */
static void note_link_remaps(const struct kfd_dumped_file *f)
{
	char names[LINK_REMAPS_MAX][NAME_MAX + 1], *ptrs[LINK_REMAPS_MAX];
	unsigned int n = find_link_remaps(f->pid, names), i;
	KfdCriuShmFile *sem = NULL;
	KfdCriuMeta *meta;
	int ret;

	if (!n || read_meta(f->id, &meta))
		return;
	for (i = 0; i < meta->n_shm_files; i++)
		if (!strcmp(meta->shm_files[i]->name, SHM_SEMAPHORE))
			sem = meta->shm_files[i];
	for (i = 0; i < n; i++)
		ptrs[i] = names[i];
	if (sem) {
		sem->n_link_remaps = n;
		sem->link_remaps = ptrs;
	}
	ret = sem ? kfd_criu_write_meta(f->id, meta) : -ENOENT;
	if (sem) {
		sem->n_link_remaps = 0;
		sem->link_remaps = NULL;
	}
	if (ret)
		pr_err("file %u: cannot note that CRIU maps %s by %s: a restore on a host without it fails\n",
		       f->id, SHM_SEMAPHORE, names[0]);
	else
		pr_info("file %u: CRIU maps %s by %s%s, noted for a fresh host\n",
			f->id, SHM_SEMAPHORE, names[0], n > 1 ? " and others" : "");
	kfd_criu_meta__free_unpacked(meta, NULL);
}

/**
 * kfd_criu_register_in_inventory() - say that a dump's images need kfd_criu
 *
 * Lists the plugin in the inventory of a CRIU 4.1 or later dump, once, so
 * that a restore without it fails in CRIU. Older CRIUs have no list.
 */
void kfd_criu_register_in_inventory(void)
{
	if (in_inventory || !add_inventory_plugin)
		return;
	in_inventory = !add_inventory_plugin(CR_PLUGIN_DESC.name);
	if (!in_inventory)
		pr_warn("cannot list kfd_criu in the images' inventory\n");
}

/*
 * PROCESS_INFO through /dev/kfd file @id: pauses its process and pairs the
 * gpu_id that the process sees for each of its GPUs with the topology's, for
 * the images of this file and of the files dumped after it.
 */
static int pause_process(int fd, int id, struct kfd_ioctl_criu_args *args)
{
	int ret, i;

	*args = (struct kfd_ioctl_criu_args){
		.num_devices = MAX_GPU_MAP, .devices = (uintptr_t)process_gpus };
	nr_process_gpus = -1;
	ret = kfd_criu_op(fd, KFD_CRIU_OP_PROCESS_INFO, args);
	if (ret == -ENOSPC)	/* the call changed nothing */
		pr_err("file %u: the process uses %u GPUs, more than the %d that a restore takes\n",
		       id, args->num_devices, MAX_GPU_MAP);
	else if (ret)
		pr_err("file %u: PROCESS_INFO failed: %s\n", id, strerror(-ret));
	if (ret)
		return ret == -ENOTSUP ? -EIO : ret;
	nr_process_gpus = args->num_devices;
	for (i = 0; i < nr_process_gpus; i++)
		if (process_gpus[i].user_gpu_id != process_gpus[i].actual_gpu_id)
			pr_info("file %u: the process sees GPU %#x of this machine's topology as GPU %#x\n",
				id, process_gpus[i].actual_gpu_id, process_gpus[i].user_gpu_id);
	return 0;
}

/* CHECKPOINT into args->image_fd from where it is, left past the image */
static int checkpoint_op(int fd, struct kfd_ioctl_criu_args *args)
{
	int ret;

	ret = image_start(args->image_fd, &args->image_offset);
	if (!ret)
		ret = kfd_criu_op(fd, KFD_CRIU_OP_CHECKPOINT, args);
	return ret ?: image_skip(args->image_fd, args->image_offset, args->image_size);
}

/* PROCESS_INFO and CHECKPOINT into kfdcriu-<id>.stream, then the metadata */
static int dump_kfd_file(int fd, int id)
{
	struct kfd_ioctl_criu_args args;
	KfdCriuMeta meta = KFD_CRIU_META__INIT;
	char name[IMAGE_NAME_MAX];
	struct thunk_shm shm;
	int ret;

	ret = pause_process(fd, id, &args);
	if (ret)
		return ret;
	pr_info("file %u: paused pid %u, image about %llu bytes\n", id, args.pid, args.image_size);
	ret = remember_dumped_file(fd, id, args.pid);
	if (ret)
		return ret < 0 ? ret : 0;
	find_thunk_shm(args.pid, &shm, &meta);
	image_name(name, id, "stream");
	memset(&args, 0, sizeof(args));
	args.image_fd = openat(criu_get_image_dir(), name,
			       O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ret = args.image_fd < 0 ? -errno : checkpoint_op(fd, &args);
	if (args.image_fd >= 0 && close(args.image_fd) && !ret)
		ret = -errno;
	if (ret) {	/* not -ENOTSUP: CRIU would take the file as not ours */
		pr_err("file %u: CHECKPOINT into %s failed: %s\n", id, name, strerror(-ret));
		return ret == -ENOTSUP ? -EIO : ret;
	}
	meta.format_version = args.format_version;
	meta.file_id = id;
	meta.stream_size = args.image_size;
	pr_info("file %u: %" PRIu64 " bytes of image format %u\n", id,
		meta.stream_size, meta.format_version);
	kfd_criu_register_in_inventory();
	return write_kfd_meta(&meta);
}

/*
 * /dev/kfd and render node files of KFD GPUs, on a kernel with image mode;
 * other DRM files go to kfd_criu_drm.c, whatever the kernel.
 */
static int kfd_dump_file(int fd, int id)
{
	enum dev_kind kind;
	struct stat st;

	if (fstat(fd, &st))
		return -ENOTSUP;
	if (!kfd_file(&st))
		return kfd_drm_dump_file(fd, id, &st);
	kind = dev_kind(st.st_mode, st.st_rdev);
	if (kind == DEV_OTHER || !kfd_image_mode())
		return -ENOTSUP;
	if (kfd_criu_images_streamed()) {
		pr_err("file %u: criu --stream is not supported: the KFD image files would miss the streamer; dump to a directory\n",
		       id);
		return -EINVAL;
	}
	/* The task's fd takes CRIU ops only: the probe used our own. */
	return kind == DEV_RENDER ? dump_render_file(fd, id, minor(st.st_rdev)) :
	       dump_kfd_file(fd, id);
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__DUMP_EXT_FILE, kfd_dump_file)

/*
 * Mappings of /dev/kfd and of KFD GPUs' render nodes, with image mode: the
 * stream has their contents. A pre-dump of them is refused: GPU writes set
 * no soft-dirty bits, so the next dump would miss pages. Mappings of other
 * DRM files go to kfd_criu_drm.c.
 */
static int kfd_handle_device_vma(int fd __attribute__((unused)), const struct stat *st)
{
	enum dev_kind kind = dev_kind(st->st_mode, st->st_rdev);

	if (!kfd_file(st))
		return kfd_drm_handle_device_vma(st);
	if (kind == DEV_OTHER || !kfd_image_mode() ||
	    (kind == DEV_RENDER && kfd_gpu_of_minor(minor(st->st_rdev)) < 0))
		return -ENOTSUP;
	if (criu_stage != CR_PLUGIN_STAGE__PRE_DUMP)
		return 0;
	pr_err("cannot pre-dump a mapping of %s %u:%u: GPU writes set no soft-dirty bits; dump without pre-dump\n",
	       kind == DEV_KFD ? "/dev/kfd" : "render node",
	       major(st->st_rdev), minor(st->st_rdev));
	return -EINVAL;
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__HANDLE_DEVICE_VMA, kfd_handle_device_vma)

/*
 * The local GPU of render node file @meta: the one its GPU goes to; for a
 * GPU that the dumped process did not use but whose gpu_id it gave another
 * GPU, the one of its topology gpu_id.
 */
static int render_file_gpu(const KfdCriuMeta *meta)
{
	int i;

	if (meta->has_render_gpu_id)
		return local_gpu(meta->render_gpu_id);
	for (i = 0; i < nr_gpus && gpu_map[i].local_gpu_id != meta->unused_gpu_id; i++)
		;
	return i < nr_gpus ? i : -ENODEV;
}

/*
 * A render node file: a new fd of the render file of the local GPU that its
 * GPU goes to, sharing that file with RESTORE's GPU map in either order.
 */
static int restore_render_file(const KfdCriuMeta *meta)
{
	int i = restore_gpus() ?: render_file_gpu(meta), fd;

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
	       meta->has_render_gpu_id ? meta->render_gpu_id : meta->unused_gpu_id,
	       strerror(-i));
	return i;
}

/* Keeps the image's render minors for the render node mappings */
static void keep_image_minors(const KfdCriuMeta *meta)
{
	unsigned int i;

	for (i = 0; i < meta->n_render_nodes && i < MAX_GPU_MAP; i++) {
		image_minor[i] = meta->render_nodes[i]->minor;
		image_gpu[i] = meta->render_nodes[i]->gpu_id;
	}
	nr_image_minors = i;
}

/*
 * Re-creates thunk file @f of /dev/kfd file @id if this task's /dev/shm
 * lacks it, with the dumped size, first bytes, owner and mode (CRIU checks
 * size and mode when it opens it).
 */
static int recreate_shm_file(unsigned int id, const KfdCriuShmFile *f)
{
	char path[512];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/dev/shm/%s", kfd_criu_root, f->name);
	if (strchr(f->name, '/') || f->head.len > f->size || f->size > SHM_SIZE_MAX) {
		pr_err("file %u: %s: bad metadata\n", id, path);
		return -EBADMSG;
	}
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST)
		return 0;
	errno = EIO;	/* what a short write means */
	if (fd < 0 || ftruncate(fd, f->size) ||
	    pwrite(fd, f->head.data, f->head.len, 0) != (ssize_t)f->head.len ||
	    fchown(fd, f->uid, f->gid) || fchmod(fd, f->mode & 0777))
		ret = -errno;
	if (fd >= 0)
		close(fd);
	if (ret && fd >= 0)
		unlink(path);
	if (ret)
		pr_err("file %u: cannot re-create %s: %s\n", id, path, strerror(-ret));
	else
		pr_info("file %u: %s was missing: re-created as dumped, %" PRIu64
			" bytes, mode %o\n", id, path, f->size, f->mode & 0777);
	return ret;
}

/*
 * Links the names CRIU dumped thunk file @f's mappings under, when it was
 * mapped under a deleted name, to @f where this task's /dev/shm lacks them:
 * CRIU links each back to that deleted name when it maps it (rfi_remap(),
 * criu/files-reg.c), after the task's files are restored.
 */
static int link_remaps(unsigned int id, const KfdCriuShmFile *f)
{
	char path[PATH_MAX], remap[PATH_MAX], end;
	unsigned int i, n;

	snprintf(path, sizeof(path), "%s/dev/shm/%s", kfd_criu_root, f->name);
	for (i = 0; i < f->n_link_remaps; i++) {
		snprintf(remap, sizeof(remap), "%s/dev/shm/%s", kfd_criu_root, f->link_remaps[i]);
		if (strchr(f->link_remaps[i], '/') ||
		    sscanf(f->link_remaps[i], LINK_REMAP_FMT, &n, &end) != 1) {
			pr_err("file %u: %s: bad metadata\n", id, remap);
			return -EBADMSG;
		}
		if (!link(path, remap)) {
			pr_info("file %u: %s was missing: linked to %s, for CRIU to map it by\n",
				id, remap, path);
		} else if (errno != EEXIST) {
			pr_err("file %u: cannot link %s to %s: %s\n", id, remap, path,
			       strerror(errno));
			return -errno;
		}
	}
	return 0;
}

/* Before RESTORE, so before CRIU opens or maps them in this task */
static int recreate_thunk_shm(const KfdCriuMeta *meta)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; !ret && i < meta->n_shm_files; i++)
		ret = recreate_shm_file(meta->file_id, meta->shm_files[i]) ?:
		      link_remaps(meta->file_id, meta->shm_files[i]);
	return ret;
}

/* Lists this task, which RESTOREd, for criu's RESUME_DEVICES_LATE */
static void note_restored_task(void)
{
	unsigned int i;

	if (!restored)
		return;
	i = __atomic_fetch_add(&restored->nr, 1, __ATOMIC_SEQ_CST);
	if (i < restored->max)
		__atomic_store_n(&restored->vpids[i], getpid(), __ATOMIC_SEQ_CST);
}

/* RESTORE from the images of /dev/kfd file @meta into a new /dev/kfd fd */
static int restore_from_images(const KfdCriuMeta *meta)
{
	struct kfd_ioctl_criu_args args;
	char name[IMAGE_NAME_MAX];
	int sfd, kfd, ret;

	ret = recreate_thunk_shm(meta);
	if (ret)
		return ret;
	image_name(name, meta->file_id, "stream");
	/* The kernel checks the stream: its records carry CRCs, END counts */
	sfd = openat(criu_get_image_dir(), name, O_RDONLY | O_CLOEXEC);
	kfd = sfd < 0 ? -errno : open_kfd();
	if (kfd == -ENOTSUP)
		pr_err("file %u: the kernel has no KFD CRIU image mode\n", meta->file_id);
	else if (kfd < 0 && sfd >= 0)
		pr_err("file %u: cannot use %s: %s\n", meta->file_id, KFD_DEV_PATH, strerror(-kfd));
	ret = kfd < 0 ? kfd : restore_gpus() ?: restore_op(kfd, sfd, &args);
	if (sfd >= 0)
		close(sfd);
	if (!ret) {
		keep_image_minors(meta);
		note_restored_task();
		pr_info("file %u: restored %llu bytes of image format %u, %d local GPU(s), %u mmap offset(s) moved\n",
			meta->file_id, args.image_size, args.format_version, nr_gpus,
			args.num_offset_map);
		return kfd;
	}
	pr_err("file %u: RESTORE from %s failed: %s\n", meta->file_id, name, strerror(-ret));
	if (ret == -ENOSPC)
		pr_err("file %u: a GPU has no queue slot or VMID left for the process's queues\n",
		       meta->file_id);
	if (kfd >= 0)
		close(kfd);
	return ret;
}

/* The restore of file @id: an fd, -ENOTSUP if not ours, or another -errno */
static int kfd_restore_file(int id)
{
	KfdCriuMeta *meta;
	int ret = read_meta(id, &meta);

	if (ret)
		return ret == -ENOENT ? -ENOTSUP : ret;
	if (kfd_criu_images_streamed()) {
		pr_err("file %u: criu --stream is not supported\n", id);
		ret = -EINVAL;
	} else if (meta->drm_node) {
		ret = kfd_drm_restore_file(meta);
	} else if (meta->has_render_gpu_id || meta->has_unused_gpu_id) {
		ret = restore_render_file(meta);
	} else if (meta->has_alias_of) {
		/* An alias shares the KFD process that its file restores. */
		ret = open_kfd();
		if (ret < 0)
			pr_err("file %u: cannot open %s: %s\n", id, KFD_DEV_PATH, strerror(-ret));
	} else {
		ret = restore_from_images(meta);
	}
	kfd_criu_meta__free_unpacked(meta, NULL);
	return ret == -ENOTSUP ? -EIO : ret;
}

/*
 * RESTORE_EXT_FILE has two signatures. "files-ext: Allow plugin files to
 * retry" (CRIU 4.3, criu-dev since November 2025) added a flag to ask for
 * a retry, which CRIU does not initialise and reads back; before it, a
 * second argument is whatever a register holds. The header's declaration
 * checks the one registered at load.
 */
#ifdef KFD_CRIU_RESTORE_RETRY
static CR_PLUGIN_HOOK__RESTORE_EXT_FILE_t kfd_restore_ext_file;
#define HEADER_RETRY_FLAG	true
#else
static CR_PLUGIN_HOOK__RESTORE_EXT_FILE_t restore_ext_file_without_retry;
#define HEADER_RETRY_FLAG	false
#endif

/* With the retry flag: the plugin never retries */
static int kfd_restore_ext_file(int id, bool *retry_needed)
{
	*retry_needed = false;
	return kfd_restore_file(id);
}

/* Without it, for CRIU before 4.3: nothing past @id is read or written */
static int restore_ext_file_without_retry(int id)
{
	return kfd_restore_file(id);
}

/*
 * Registers the RESTORE_EXT_FILE that takes what criu passes: the flag if
 * the header has it (a plugin built for a criu that passes it), or if
 * @criu_4_3 (criu 4.3 or later loaded the plugin, whatever its header: one
 * built against an older one loads there too).
 */
static void register_restore_ext_file(bool criu_4_3)
{
	bool retry_flag = HEADER_RETRY_FLAG || criu_4_3;

	CR_PLUGIN_DESC.hooks[CR_PLUGIN_HOOK__RESTORE_EXT_FILE] =
		retry_flag ? (void *)kfd_restore_ext_file : (void *)restore_ext_file_without_retry;
}

/* At load, as the header says; init asks the criu that loaded the plugin */
static void __attribute__((constructor)) register_restore_ext_file_of_header(void)
{
	register_restore_ext_file(false);
}

/*
 * The gpu_id that the dumped process saw for render minor @minor of the
 * dumping machine; 0 if no KFD GPU had it. Images of older plugins lack the
 * dumped minors and wrote topology gpu_ids: the minor is taken to have had
 * the gpu_id it has here, with the process seeing it as that.
 */
static uint32_t image_gpu_of_minor(unsigned int minor)
{
	unsigned int i;
	int here;

	for (i = 0; i < nr_image_minors && image_minor[i] != minor; i++)
		;
	if (i < nr_image_minors)
		return image_gpu[i];
	if (nr_image_minors)
		return 0;
	here = gpu_of_minor(minor);
	return here < 0 ? 0 : gpu_map[here].local_gpu_id;
}

/*
 * The offset RESTORE moved @old to, or @old. A render node offset is of
 * one device: only the entries of its GPU, @gpu (an image gpu_id), count.
 * A /dev/kfd offset (@gpu 0) names its GPU itself, so any entry counts.
 * Entries that move one offset to two places are -ENOTUNIQ: not guessed.
 */
static int moved_offset(uint32_t gpu, uint64_t old, uint64_t *new)
{
	unsigned int i;
	bool found = false;

	*new = old;
	for (i = 0; i < nr_offsets; i++) {
		if (offsets[i].old_offset != old || (gpu && offsets[i].gpu_id != gpu))
			continue;
		if (found && offsets[i].new_offset != *new)
			return -ENOTUNIQ;
		*new = offsets[i].new_offset;
		found = true;
	}
	return 0;
}

/**
 * kfd_criu_vma_fd() - hand CRIU the file a device mapping is mmapped through
 * @fd: the plugin's own fd of that file, which it keeps open
 * @plugin_fd: UPDATE_VMA_MAP's fd for CRIU
 *
 * CRIU before 3.19 dup()s @plugin_fd: it gets @fd itself. Later ones close
 * it: they get a new fd of the file. CRIU drops (and leaves open) the new
 * fd of a mapping it maps through the fd of the one before, so those go
 * above its service fds too, out of the way of the task's own.
 *
 * Return: 0 or -errno.
 */
int kfd_criu_vma_fd(int fd, int *plugin_fd)
{
	*plugin_fd = criu_dups_vma_fd ? fd : fcntl(fd, F_DUPFD_CLOEXEC, kfd_criu_fd_base());
	return *plugin_fd < 0 ? -errno : 0;
}

/**
 * kfd_criu_refuse_vma() - make the restore fail at a mapping the plugin
 * cannot place
 * @path: the mapped file's dumped path
 * @addr: the mapping's address
 * @new_pgoff: UPDATE_VMA_MAP's offset for CRIU
 * @plugin_fd: UPDATE_VMA_MAP's fd for CRIU
 *
 * No CRIU acts on an error from UPDATE_VMA_MAP: from 3.17.1 to 4.3,
 * open_filemap() (criu/files-reg.c) takes the offset only on a return of
 * 1 and otherwise maps the dumped path at the dumped offset, a stale
 * doorbell or MMIO page of /dev/kfd, or in a run of mappings of one file
 * goes through the fd of the mapping before. Refusing earlier, in
 * RESTORE_EXT_FILE, would need to know which offsets which mappings use.
 * So the mapping gets an offset that is not page-aligned, which every
 * mmap() refuses whatever file CRIU uses: the restorer fails, and with it
 * the restore. The caller has logged why.
 *
 * Return: 1, without which CRIU would not take @new_pgoff.
 */
int kfd_criu_refuse_vma(const char *path, uint64_t addr, uint64_t *new_pgoff, int *plugin_fd)
{
	pr_err("mapping at %#" PRIx64 " of %s: refused: its mmap fails, and so does the restore\n",
	       addr, path);
	*new_pgoff = KFD_CRIU_REFUSED_PGOFF;
	*plugin_fd = -1;
	return 1;
}

/*
 * The fd CRIU mmaps a render node mapping of GPU @gpu through: the render
 * file that RESTORE created the GPU's VM on.
 */
static int render_vma_fd(int gpu, int *plugin_fd)
{
	int fd = gpu_map[gpu].drm_fd;

	return fd < 0 ? -ENODEV : kfd_criu_vma_fd(fd, plugin_fd);
}

/*
 * /dev/kfd and render node mappings go to the offsets RESTORE moved them to
 * (pgoff is in bytes), render nodes' through the render file of the GPU the
 * dumped one went to, which has its VM. CRIU takes *@new_pgoff only on
 * return 1, and ignores errors: a mapping that cannot be placed is refused
 * by kfd_criu_refuse_vma().
 */
static int update_kfd_vma_map(const char *path, const uint64_t addr, const uint64_t old_pgoff,
			      uint64_t *new_pgoff, int *plugin_fd)
{
	int minor = kfd_criu_render_minor_of_path(path), gpu = -1, ret;
	uint32_t image_gpu = 0;
	struct stat st;

	if (minor >= 0 ? nr_gpus <= 0 : stat(path, &st) ||
	    dev_kind(st.st_mode, st.st_rdev) != DEV_KFD)
		return -ENOTSUP;
	if (minor >= 0) {
		image_gpu = image_gpu_of_minor(minor);
		if (!image_gpu)
			return -ENOTSUP;
		gpu = local_gpu(image_gpu);
	}
	*plugin_fd = -1;
	ret = gpu < 0 && minor >= 0 ? gpu : moved_offset(image_gpu, old_pgoff, new_pgoff);
	if (!ret && minor >= 0)
		ret = render_vma_fd(gpu, plugin_fd);
	if (ret == -ENOTUNIQ)
		pr_err("mapping at %#" PRIx64 " of %s: RESTORE's offset map moves offset %#" PRIx64 " to more than one new offset; not guessing which\n",
		       addr, path, old_pgoff);
	else if (ret)
		pr_err("mapping at %#" PRIx64 " of %s: no render file of its GPU: %s\n",
		       addr, path, strerror(-ret));
	if (ret)
		return kfd_criu_refuse_vma(path, addr, new_pgoff, plugin_fd);
	pr_debug("mapping at %#" PRIx64 " of %s: offset %#" PRIx64 " -> %#" PRIx64 "\n",
		 addr, path, old_pgoff, *new_pgoff);
	return 1;
}

/*
 * A render node mapping that the dump took for a stateless reattach is of
 * no KFD GPU (the dump made sure), so it is looked up first: a KFD GPU of
 * this machine may have the dumped minor.
 */
static int kfd_update_vma_map(const char *path, const uint64_t addr, const uint64_t old_pgoff,
			      uint64_t *new_pgoff, int *plugin_fd)
{
	int ret = kfd_drm_update_vma_map(path, addr, old_pgoff, new_pgoff, plugin_fd);

	return ret == -ENOTSUP ? update_kfd_vma_map(path, addr, old_pgoff, new_pgoff, plugin_fd) :
	       ret;
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__UPDATE_VMA_MAP, kfd_update_vma_map)

/*
 * Task @pid of criu's PID namespace, by its pid in its own: the last of
 * its NSpid line. 0 if that cannot be read.
 */
static pid_t own_ns_pid(int pid)
{
	char path[512], *s, *end;
	long vpid = 0;

	snprintf(path, sizeof(path), "%s/proc/%d/status", kfd_criu_root, pid);
	s = kfd_criu_read_file(AT_FDCWD, path, io_buf, sizeof(io_buf)) < 0 ? NULL :
	    strstr(io_buf, "\nNSpid:");
	for (s = s ? s + 7 : NULL; s && *s != '\n'; s = end) {
		vpid = strtol(s, &end, 10);
		if (end == s)
			return 0;
	}
	return vpid > 0 ? vpid : 0;
}

/*
 * Whether task @pid restored KFD state; when that cannot be told (a task
 * whose NSpid is unreadable, or more tasks than the list holds), KFD's
 * RESUME answers instead.
 */
static bool restored_kfd_state(int pid)
{
	unsigned int i, n;
	pid_t vpid;

	n = restored ? __atomic_load_n(&restored->nr, __ATOMIC_SEQ_CST) : 0;
	if (!n)
		return false;
	vpid = own_ns_pid(pid);
	if (!vpid || n > restored->max)
		return true;
	for (i = 0; i < n; i++)
		if (__atomic_load_n(&restored->vpids[i], __ATOMIC_SEQ_CST) == vpid)
			return true;
	return false;
}

/*
 * A task that RESUME failed for is killed. No CRIU acts on an error of
 * this hook: from 3.17.1 to 4.3, criu/cr-restore.c logs it at debug level
 * and lets the task run, its GPU queues stopped, a restore that looks fine
 * and hangs (CRIU issues 2663 and 2716). Left stopped, it would still be a
 * restore that CRIU reports as done. Killed, it fails the restore in CRIU:
 * finalize_restore_detach() then cannot set its registers or detach it
 * (ptrace() refuses a task with SIGKILL pending, kernel/ptrace.c
 * ptrace_freeze_traced()), and CRIU's failure path kills the other
 * restored tasks and exits non-zero.
 */
static int fail_resume(int pid, int ret)
{
	pr_err("pid %d: RESUME failed: %s: killing it, so that the restore fails rather than leave it hung\n",
	       pid, strerror(-ret));
	if (kill(pid, SIGKILL))
		pr_err("pid %d: cannot kill it: %s\n", pid, strerror(errno));
	return ret;
}

/*
 * CRIU calls this for every restored task. Only a task that restored KFD
 * state gets /dev/kfd opened for RESUME; the others are quietly not ours.
 * Each task's reattached render nodes say first what their mappings lost.
 */
static int kfd_resume_devices_late(int pid)
{
	struct kfd_ioctl_criu_args args = { .pid = pid };
	int kfd, ret;

	kfd_drm_log_zero_filled(pid);
	if (!restored_kfd_state(pid))
		return -ENOTSUP;
	kfd = open_kfd();
	if (kfd < 0) {
		pr_err("pid %d: cannot open %s for RESUME: %s\n", pid, KFD_DEV_PATH,
		       strerror(-kfd));
		return fail_resume(pid, kfd == -ENOTSUP ? -EIO : kfd);
	}
	ret = kfd_criu_op(kfd, KFD_CRIU_OP_RESUME, &args);
	close(kfd);
	if (ret == -ESRCH || ret == -EBADFD)	/* not restored */
		return -ENOTSUP;
	if (ret)
		return fail_resume(pid, ret);
	pr_info("pid %d: resumed its KFD state\n", pid);
	return 0;
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__RESUME_DEVICES_LATE, kfd_resume_devices_late)
