// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: kfd_criu_gpus - the KFD topology, the GPU map and KFD GPUs' render files
 *
 * At dump, PROCESS_INFO pairs each GPU of a process, by the gpu_id the
 * process sees, with this machine's topology; a /dev/kfd file's metadata
 * carries the render minors of those GPUs, and a render node file is the
 * plugin's only in a task that holds /dev/kfd. At restore, the GPU map
 * (the option gpu_map, else equal gpu_ids) sends each image GPU to a
 * local one, whose render file both RESTORE and the process's render
 * node files and mappings use, and RESTORE's offset map moves the
 * mappings.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/kcmp.h>

#include "kfd_criu.h"

#define KFD_TASKS_MAX		256	/* tasks with /dev/kfd in one dump */

/*
 * PROCESS_INFO's pairing of the /dev/kfd file dumped last: each GPU that its
 * process uses, by the gpu_id the process sees (user_gpu_id, the namespace
 * of the kernel's image) and by this machine's topology (actual_gpu_id).
 * -1: no /dev/kfd file dumped yet.
 */
static struct kfd_criu_device_bucket process_gpus[MAX_GPU_MAP];
int nr_process_gpus = -1;

/* The local GPUs (-1: not read yet), their render files, the offset map */
struct kfd_criu_gpu_map gpu_map[MAX_GPU_MAP];
static int gpu_minor[MAX_GPU_MAP];
int nr_gpus = -1;
/* The last topology read skipped a GPU hidden from this task */
bool gpus_hidden;
static struct kfd_criu_offset_map *offsets;
unsigned int nr_offsets;
/*
 * The tasks of this dump that hold a /dev/kfd file, by their pids in
 * criu's PID namespace; -1: not looked for yet. Only their render node
 * files are the plugin's.
 */
static pid_t kfd_tasks[KFD_TASKS_MAX];
int nr_kfd_tasks = -1;
/* The dumping machine's render minors and their gpu_ids, from the image */
static uint32_t image_minor[MAX_GPU_MAP], image_gpu[MAX_GPU_MAP];
static unsigned int nr_image_minors;

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

/**
 * read_topology() - read this machine's KFD GPUs into the GPU map
 *
 * The first 64 GPUs of the topology that this task may use, with no image
 * GPU and no render file yet.
 *
 * Return: 0 or -errno, logged.
 */
int read_topology(void)
{
	struct kfd_topology t;
	unsigned int i;
	int ret = kfd_criu_read_topology(&t);

	gpus_hidden = t.hidden;
	nr_gpus = ret ? -1 : (int)t.nr;
	for (i = 0; !ret && i < t.nr; i++) {
		gpu_minor[i] = t.minor[i];
		gpu_map[i] = (struct kfd_criu_gpu_map){ .local_gpu_id = t.gpu_id[i], .drm_fd = -1 };
	}
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
 * restore_gpus() - this restore's GPUs, at the first need (a render node file or RESTORE), so
 * both share each GPU's render file. Those stay open for UPDATE_VMA_MAP just
 * above CRIU's service fds; -1 if one fails.
 */
int restore_gpus(void)
{
	char path[512];
	int i, fd, ret;

	if (nr_gpus >= 0)
		return 0;
	ret = read_topology() ?: parse_gpu_map(kfd_option(KFD_OPT_GPU_MAP) ?: "", gpu_map,
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

/**
 * restore_op() - RESTORE from @sfd into the process of @kfd with the GPU map and room for
 * the offsets it changes; with too little room, once more with enough.
 * Only -E2BIG means that: any other error, -ENOSPC from a GPU without a
 * queue slot or VMID left among them, would fail the second RESTORE too,
 * after it had created every buffer and copied its contents again.
 */
int restore_op(int kfd, int sfd, struct kfd_ioctl_criu_args *args)
{
	uint32_t room = 64;	/* the first attempt's, enough for most */
	__u64 start = 0;
	int ret, tries;

	ret = kfd_image_start(sfd, &start);
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
	return ret ?: kfd_image_skip(sfd, start, args->image_size);
}

/**
 * kfd_gpu_of_minor() - the KFD GPU of render minor @minor, from a topology read now; -1 if none
 */
int kfd_gpu_of_minor(int minor)
{
	return read_topology() ? -1 : gpu_of_minor(minor);
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

/**
 * dump_render_file() - render node file @fd of minor @minor: its GPU, by the gpu_id the process
 * sees, and its flags, if a KFD GPU and a file of a task that holds
 * /dev/kfd. The thunk opens /dev/kfd before render nodes and CRIU dumps
 * fds in order, so a render node file of a process with /dev/kfd mostly
 * comes after that; one dumped before any /dev/kfd file keeps the
 * topology's gpu_id.
 */
int dump_render_file(int fd, int id, int minor)
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

/**
 * write_kfd_meta() - the dumping machine's GPUs, by the gpu_ids the process sees, and their
 * render minors go with a /dev/kfd file's metadata: a render node mapping
 * is restored by the minor it had. A GPU that no gpu_id names safely is
 * left out: its mappings are not the plugin's at restore.
 */
int write_kfd_meta(KfdCriuMeta *meta)
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

/**
 * pause_process() - PROCESS_INFO through /dev/kfd file @id: pauses its process and pairs the
 * gpu_id that the process sees for each of its GPUs with the topology's, for
 * the images of this file and of the files dumped after it.
 */
int pause_process(int fd, int id, struct kfd_ioctl_criu_args *args)
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

/**
 * restore_render_file() - a render node file: a new fd of the render file of the local GPU that its
 * GPU goes to, sharing that file with RESTORE's GPU map in either order.
 */
int restore_render_file(const KfdCriuMeta *meta)
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

/**
 * keep_image_minors() - keeps the image's render minors for the render node mappings
 */
void keep_image_minors(const KfdCriuMeta *meta)
{
	unsigned int i;

	for (i = 0; i < meta->n_render_nodes && i < MAX_GPU_MAP; i++) {
		image_minor[i] = meta->render_nodes[i]->minor;
		image_gpu[i] = meta->render_nodes[i]->gpu_id;
	}
	nr_image_minors = i;
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

/*
 * The fd CRIU mmaps a render node mapping of GPU @gpu through: the render
 * file that RESTORE created the GPU's VM on.
 */
static int render_vma_fd(int gpu, int *plugin_fd)
{
	int fd = gpu_map[gpu].drm_fd;

	return fd < 0 ? -ENODEV : kfd_criu_vma_fd(fd, plugin_fd);
}

/**
 * kfd_update_vma_map() - /dev/kfd and render node mappings go to the offsets RESTORE moved them to
 * (pgoff is in bytes), render nodes' through the render file of the GPU the
 * dumped one went to, which has its VM. CRIU takes *@new_pgoff only on
 * return 1, and ignores errors: a mapping that cannot be placed is refused
 * by kfd_criu_refuse_vma().
 */
int kfd_update_vma_map(const char *path, const uint64_t addr, const uint64_t old_pgoff,
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
