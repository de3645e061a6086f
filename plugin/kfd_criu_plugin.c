// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: kfd_criu - CRIU plugin for processes that hold /dev/kfd
 *
 * In CRIU image mode the kernel writes a process's KFD state, GPU buffers
 * included, as one stream that the plugin moves to CRIU's images and back. This file holds the CRIU hooks: they take /dev/kfd, and render
 * node files and mappings of KFD GPUs in tasks that hold /dev/kfd
 * (kfd_criu_gpus.c), and return -ENOTSUP for everything else, other DRM
 * files included, which the drm_reattach plugin may take. The end of a
 * dump UNPAUSEs the dumped processes when they go on
 * (kfd_criu_dump_end.c); the restored ones are resumed here.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "kfd_criu.h"

static const char *const kfd_option_names[KFD_OPT_MAX] = {
	[KFD_OPT_GPU_MAP] = "gpu_map",
	[KFD_OPT_LEAVE_RUNNING] = "leave_running",
};

/* --plugin-option kfd_criu.NAME, KFD_CRIU_NAME, /etc/criu/kfd_criu.conf */
struct plugin_options kfd_options = {
	.plugin = "kfd_criu",
	.env_prefix = "KFD_CRIU_",
	.names = kfd_option_names,
	.nr = KFD_OPT_MAX,
};

static struct kfd_dumped_file *dumped;
static unsigned int nr_dumped;
static int criu_stage = -1;
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

static restore_ext_file_retry_t kfd_restore_ext_file;
static restore_ext_file_plain_t restore_ext_file_without_retry;

/* Whether a file of @mode and @rdev is a render node, /dev/kfd or other */
enum dev_kind dev_kind(mode_t mode, dev_t rdev)
{
	struct stat st;

	if (S_ISCHR(mode) && major(rdev) == DRM_MAJOR && kfd_criu_render_minor(minor(rdev)))
		return DEV_RENDER;
	return S_ISCHR(mode) && !stat(KFD_DEV_PATH, &st) &&
	       S_ISCHR(st.st_mode) && st.st_rdev == rdev ? DEV_KFD : DEV_OTHER;
}

/* The image-mode version of legacy CRIU op @op, KFD_CRIU_OP_<op> */
int kfd_criu_op(int kfd, __u32 op, struct kfd_ioctl_criu_args *args)
{
	args->op = KFD_CRIU_OP_IMAGE_PROCESS_INFO + op;
	return ioctl(kfd, AMDKFD_IOC_CRIU_OP, args) ? -errno : 0;
}

/*
 * Where the image at @fd starts: the file position, which the kernel takes
 * as image_offset and leaves alone, as pread(2) and pwrite(2) do; 0 for a
 * pipe or socket, which has none (and where the kernel takes only 0).
 */
int kfd_image_start(int fd, __u64 *offset)
{
	off_t pos = lseek(fd, 0, SEEK_CUR);

	if (pos < 0 && errno != ESPIPE)
		return -errno;
	*offset = pos < 0 ? 0 : (__u64)pos;
	return 0;
}

/* Moves a seekable @fd past the image, where write(2) or read(2) would */
int kfd_image_skip(int fd, __u64 offset, __u64 size)
{
	if (lseek(fd, (off_t)(offset + size), SEEK_SET) < 0 && errno != ESPIPE)
		return -errno;
	return 0;
}

/* CHECKPOINT into args->image_fd from where it is, left past the image */
static int checkpoint_op(int fd, struct kfd_ioctl_criu_args *args)
{
	int ret;

	ret = kfd_image_start(args->image_fd, &args->image_offset);
	if (!ret)
		ret = kfd_criu_op(fd, KFD_CRIU_OP_CHECKPOINT, args);
	return ret ?: kfd_image_skip(args->image_fd, args->image_offset, args->image_size);
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
	criu_plugin_get_options_t *get_options = kfd_criu_probe_criu();
	static char stock[PATH_MAX];

	criu_stage = stage;
	kfd_criu_options_load(&kfd_options, get_options);
	nr_kfd_tasks = -1;
	if (kfd_criu_stock_plugin_present(&CR_PLUGIN_DESC, stock)) {
		pr_err("CRIU's amdgpu plugin %s is installed too: both take /dev/kfd and the first found wins; give each its own plugin directory (CRIU's libdir) or remove one\n",
		       stock);
		return -EEXIST;
	}
	/* A function that 4.0 added, the release that moved fini(DUMP) later */
	criu_fini_first = !dlsym(RTLD_DEFAULT, "pmc_fill");
	kfd_criu_register_restore_ext_file(&CR_PLUGIN_DESC, get_options, kfd_restore_ext_file,
					   restore_ext_file_without_retry);
	if (stage != CR_PLUGIN_STAGE__RESTORE)
		return 0;
	kfd_criu_take_off_inventory(CR_PLUGIN_DESC.name);
	if (kfd_criu_stock_plugin_in_inventory()) {
		pr_err("these images were dumped by CRIU's amdgpu plugin (their inventory lists " STOCK_PLUGIN_NAME "), which kfd_criu cannot restore: restore them with that plugin, from a plugin directory (CRIU's libdir) without kfd_criu\n");
		return -EINVAL;
	}
	return map_restored_tasks();
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
	kfd_criu_options_forget(&kfd_options);
}

CR_PLUGIN_REGISTER("kfd_criu", kfd_plugin_init, kfd_plugin_fini)

/* Whether a file of @st is /dev/kfd or a render node that may be a KFD GPU's */
static bool kfd_file(const struct stat *st)
{
	enum dev_kind kind = dev_kind(st->st_mode, st->st_rdev);

	return kind == DEV_KFD ||
	       (kind == DEV_RENDER && !kfd_criu_no_kfd_gpu_of_minor(minor(st->st_rdev)));
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
	kfd_criu_register_in_inventory(CR_PLUGIN_DESC.name, &in_inventory);
	return write_kfd_meta(&meta);
}

/*
 * /dev/kfd and render node files of KFD GPUs, on a kernel with image mode.
 * Other DRM files are not kfd_criu's, and not said to be (only at debug
 * level): the drm_reattach plugin, if CRIU loaded it, may take them after
 * this hook, and says why if it does not.
 */
static int kfd_dump_file(int fd, int id)
{
	enum dev_kind kind;
	struct stat st;

	if (fstat(fd, &st))
		return -ENOTSUP;
	if (!kfd_file(&st)) {
		if (S_ISCHR(st.st_mode) && major(st.st_rdev) == DRM_MAJOR)
			pr_debug("file %u: a DRM file of no KFD GPU: not kfd_criu's\n", id);
		return -ENOTSUP;
	}
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
 * DRM files are not kfd_criu's.
 */
static int kfd_handle_device_vma(int fd __attribute__((unused)), const struct stat *st)
{
	enum dev_kind kind = dev_kind(st->st_mode, st->st_rdev);

	if (kind == DEV_OTHER || !kfd_file(st) || !kfd_image_mode() ||
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
	int ret = kfd_criu_read_meta(id, &meta);

	if (ret)
		return ret == -ENOENT ? -ENOTSUP : ret;
	if (meta->drm_node) {	/* drm_reattach's */
		kfd_criu_meta__free_unpacked(meta, NULL);
		return -ENOTSUP;
	}
	if (kfd_criu_images_streamed()) {
		pr_err("file %u: criu --stream is not supported\n", id);
		ret = -EINVAL;
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

#ifdef KFD_CRIU_RESTORE_RETRY
static CR_PLUGIN_HOOK__RESTORE_EXT_FILE_t kfd_restore_ext_file;
#else
static CR_PLUGIN_HOOK__RESTORE_EXT_FILE_t restore_ext_file_without_retry;
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

/* At load, as the header says; init asks the criu that loaded the plugin */
static void __attribute__((constructor)) register_restore_ext_file_of_header(void)
{
	kfd_criu_register_restore_ext_file(&CR_PLUGIN_DESC, false, kfd_restore_ext_file,
					   restore_ext_file_without_retry);
}

/*
 * Mappings of /dev/kfd and of KFD GPUs' render nodes: kfd_criu_gpus.c.
 * A render node mapping that drm_reattach took is of a minor that no KFD
 * GPU had at dump, which the /dev/kfd file's metadata lists: not
 * kfd_criu's, whatever GPU has that minor here.
 */
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
 */
static int kfd_resume_devices_late(int pid)
{
	struct kfd_ioctl_criu_args args = { .pid = pid };
	int kfd, ret;

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
