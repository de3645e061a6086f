// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: the harness as CRIU 3.17 to 4.3 and criu-dev, and as KFD
 *
 * Included by kfd_criu_plugin_test.c. criu has both plugins loaded
 * (loaded[], load_plugins()) and runs their hooks as run_plugins() does.
 * A fake KFD answers the plugin's
 * ioctl()s on /dev/null (KFD_DEV_PATH) while fake_kfd.on is set, and a
 * fake stat() shows the fake root's render nodes as DRM character devices.
 * What the fake KFD knows is shared by every process the harness forks.
 *
 * Each CRIU release is played in a process of its own (as_criu()), with
 * what that release's criu binary exports (tests/criu_exports.c) loaded
 * for the plugin to find. A dump is criu's init, DUMP_EXT_FILE of the
 * task's files, then the end of cr_dump_finish() in that release's order
 * (play_dump_end()). A restore is criu's init, then a forked task that runs
 * RESTORE_EXT_FILE and UPDATE_VMA_MAP and the restorer's mmap()s, then,
 * while that task is alive, criu's RESUME_DEVICES_LATE and fini
 * (play_restore()). The releases differ as follows:
 *
 * - 3.17 and 3.18 dup() the fd UPDATE_VMA_MAP returns and leave the
 *   plugin's own alone; 3.19 and later own that fd: the restorer closes it
 *   after the last mapping that shares it;
 * - 3.17 to 3.19 end the dump's plugins before the post-dump scripts and
 *   the lazy page server, 4.0 and later after them;
 * - 4.1 and later list a dump's plugins in its inventory;
 * - 4.3, and criu-dev since November 2025, pass RESTORE_EXT_FILE a retry
 *   flag that they do not initialise, and 4.3 has plugin options.
 *
 * A build plays the releases whose verify_plugin() takes a plugin built
 * against its header (Makefile: CRIU_INC, CRIU_HEADER; Debian 12's 3.17
 * header by default, Debian's libcriu-dev 4.1.1, 4.2.1 and 4.3 for the
 * others) and whose inventory the harness has (plays()); 4.3's retry flag
 * and options in every build. The criu-dev snapshot, which exports
 * nothing 4.3 added, is played in the build against 3.17's header with the
 * flag added (KFD_CRIU_RESTORE_RETRY), whose plugin is for it.
 *
 * A run of mappings of one file shares one fd, as in CRIU's open_filemap().
 * As there, only an UPDATE_VMA_MAP return of 1 moves a mapping: on any
 * other, errors included, CRIU maps the dumped path itself (or the fd of
 * the mapping before) at the dumped offset. The restorer's mmap() answers
 * as the kernel would (an offset that is not page-aligned, a DRM file that
 * holds no restored buffer: refused) and checks that the mapping lands on
 * the render file of the GPU it must, at the moved offset.
 *
 * Fake DRM nodes (renderD<minor>, card<minor> in the fake root's /dev/dri)
 * are regular files whose contents name their driver, which the fake
 * DRM_IOCTL_VERSION answers; a file of the fake root named dmabuf is a
 * dma-buf to the fake fstatfs().
 */

/**
 * struct fake_kfd - what the fake KFD answers and what it was asked
 * @on: answer ioctls on KFD_DEV_PATH; else pass them through
 * @moved: the offsets RESTORE reports as moved
 * @nr_moved: entries in @moved
 * @gpus: the GPU map of the last RESTORE
 * @nr_gpus: entries in @gpus
 * @pairs: what PROCESS_INFO pairs: for each GPU the process uses, the gpu_id
 *	   the process sees and the GPU's gpu_id in the topology
 * @nr_pairs: entries in @pairs; more than PROCESS_INFO has room for: -ENOSPC
 * @old_kernel: answer as a kernel without image mode
 * @denied: answer as to a task without CAP_CHECKPOINT_RESTORE
 * @paused: processes PROCESS_INFO paused and no UNPAUSE resumed
 * @probes: image-mode probes (UNPAUSE with nothing paused)
 * @restores: RESTOREs since reset; a second one is -EBUSY
 * @resumes: RESUMEs since reset
 * @room: the offset map a RESTORE needs if more than @nr_moved, else 0
 * @restore_error: 0, or the error every RESTORE fails with after it
 *		   checked the offset map (-ENOSPC: a GPU out of queue slots)
 * @attempts: RESTORE calls, also the refused ones
 */
static struct fake_kfd {
	bool on, old_kernel, denied;
	struct kfd_criu_offset_map moved[8];
	unsigned int nr_moved;
	struct kfd_criu_gpu_map gpus[MAX_GPU_MAP];
	unsigned int nr_gpus;
	struct kfd_criu_device_bucket pairs[MAX_GPU_MAP + 1];
	unsigned int nr_pairs;
	unsigned int paused, probes, restores, resumes;
	unsigned int room;
	int restore_error;
	unsigned int attempts;
} fake_kfd_private, *fake_kfd_shared = &fake_kfd_private;

/*
 * What the fake KFD knows is the kernel's, seen alike by criu and by the
 * tasks it forks: RESTORE runs in a restored task, RESUME in criu.
 */
#define fake_kfd	(*fake_kfd_shared)

/* Puts the fake KFD in memory that forked processes share */
static void fake_kfd_share(void)
{
	void *p = mmap(NULL, sizeof(fake_kfd), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		printf("# cannot share the fake KFD: %s\n", strerror(errno));
		return;
	}
	memcpy(p, fake_kfd_shared, sizeof(fake_kfd));
	fake_kfd_shared = p;
}

static bool is_fake_kfd(int fd)
{
	struct stat kfd, st;

	return fake_kfd.on && !fstat(fd, &st) && !stat(KFD_DEV_PATH, &kfd) &&
	       st.st_rdev == kfd.st_rdev && S_ISCHR(st.st_mode);
}

/*
 * Writes the fake stream at image_offset as the kernel does: by offset,
 * the file position untouched; a file without one takes only offset 0.
 */
static int fake_checkpoint(struct kfd_ioctl_criu_args *args)
{
	static const char stream[] = "stream";
	ssize_t n;

	if (lseek(args->image_fd, 0, SEEK_CUR) < 0 && errno == ESPIPE)
		n = args->image_offset ? -1 : write(args->image_fd, stream, 6);
	else
		n = pwrite(args->image_fd, stream, 6, (off_t)args->image_offset);
	if (n != 6)
		return n < 0 && args->image_offset ? -ESPIPE : -EIO;
	args->image_size = 6;
	args->format_version = 1;
	return 0;
}

static int fake_restore(struct kfd_ioctl_criu_args *args)
{
	struct kfd_criu_offset_map *out = (void *)(uintptr_t)args->offset_map_ptr;
	unsigned int room = fake_kfd.room > fake_kfd.nr_moved ? fake_kfd.room : fake_kfd.nr_moved;

	fake_kfd.attempts++;
	if (fake_kfd.restores++)
		return -EBUSY;	/* one RESTORE per KFD process */
	if (args->num_offset_map < room) {
		fake_kfd.restores--;
		args->num_offset_map = room;
		return -E2BIG;
	}
	if (fake_kfd.restore_error) {
		fake_kfd.restores--;
		return fake_kfd.restore_error;
	}
	fake_kfd.nr_gpus = args->num_gpu_map;
	memcpy(fake_kfd.gpus, (void *)(uintptr_t)args->gpu_map_ptr,
	       args->num_gpu_map * sizeof(*fake_kfd.gpus));
	memcpy(out, fake_kfd.moved, fake_kfd.nr_moved * sizeof(*out));
	args->num_offset_map = fake_kfd.nr_moved;
	args->format_version = 1;
	args->image_size = 6;	/* what the fake CHECKPOINT wrote */
	return 0;
}

/*
 * PROCESS_INFO with room for @num_devices pairs at @devices (none: no
 * pairing wanted). Short room is -ENOSPC with the room needed, and the
 * process is not paused.
 */
static int fake_process_info(struct kfd_ioctl_criu_args *args)
{
	struct kfd_criu_device_bucket *out = (void *)(uintptr_t)args->devices;
	unsigned int room = args->num_devices;

	if (!room != !out || room > MAX_GPU_MAP)
		return -EINVAL;
	if (room && room < fake_kfd.nr_pairs) {
		args->num_devices = fake_kfd.nr_pairs;
		return -ENOSPC;
	}
	if (room) {
		memcpy(out, fake_kfd.pairs, fake_kfd.nr_pairs * sizeof(*out));
		args->num_devices = fake_kfd.nr_pairs;
	}
	args->pid = 4242;
	fake_kfd.paused++;
	return 0;
}

/*
 * What PROCESS_INFO pairs with the fake topology's GPUs 4660 and 17185: the
 * gpu_ids the process sees for them, @seen_4660 and @seen_17185 (0: a GPU
 * it does not use).
 */
static void fake_pairing(uint32_t seen_4660, uint32_t seen_17185)
{
	const uint32_t local[] = { 4660, 17185 }, seen[] = { seen_4660, seen_17185 };
	unsigned int i;

	fake_kfd.nr_pairs = 0;
	for (i = 0; i < ARRAY_SIZE(local); i++)
		if (seen[i])
			fake_kfd.pairs[fake_kfd.nr_pairs++] = (struct kfd_criu_device_bucket){
				.user_gpu_id = seen[i], .actual_gpu_id = local[i] };
}

static int fake_criu_op(struct kfd_ioctl_criu_args *args)
{
	if (fake_kfd.denied)
		return -EACCES;
	/* A kernel without image mode, whatever its minor: an unknown op */
	if (fake_kfd.old_kernel)
		return args->op > KFD_CRIU_OP_RESUME ? -EINVAL : 0;
	if (args->op < KFD_CRIU_OP_IMAGE_PROCESS_INFO)
		return -EINVAL;		/* the plugin never makes legacy calls */
	switch (args->op - KFD_CRIU_OP_IMAGE_PROCESS_INFO) {
	case KFD_CRIU_OP_PROCESS_INFO:
		return fake_process_info(args);
	case KFD_CRIU_OP_UNPAUSE:	/* also the plugin's probe */
		fake_kfd.probes += !fake_kfd.paused;
		if (!fake_kfd.paused)
			return -EBADFD;
		fake_kfd.paused--;
		return 0;
	case KFD_CRIU_OP_CHECKPOINT:
		return fake_checkpoint(args);
	case KFD_CRIU_OP_RESTORE:
		return fake_restore(args);
	case KFD_CRIU_OP_RESUME:
		fake_kfd.resumes++;
		return fake_kfd.restores ? 0 : -ESRCH;
	default:
		return 0;
	}
}

/**
 * struct fake_drm - what fake DRM nodes were asked
 * @versions: DRM_IOCTL_VERSIONs
 * @others: any other ioctl: none may read or change a device's state
 */
static struct fake_drm {
	unsigned int versions, others;
} fake_drm;

static bool is_fake_drm(int fd)
{
	struct stat st;

	return !fake_fstat(fd, &st) && S_ISCHR(st.st_mode) && major(st.st_rdev) == DRM_MAJOR;
}

/* DRM_IOCTL_VERSION of a fake DRM node: the file's contents name its driver */
static int fake_drm_ioctl(int fd, unsigned long request, struct drm_version *version)
{
	char name[DRIVER_NAME_MAX + 8];
	ssize_t len;

	if (request != DRM_IOCTL_VERSION) {
		fake_drm.others++;
		return -ENOTTY;
	}
	fake_drm.versions++;
	len = pread(fd, name, sizeof(name), 0);
	if (len < 0)
		return -errno;
	if (version->name && version->name_len)
		memcpy(version->name, name, (size_t)len < version->name_len ? (size_t)len :
		       version->name_len);
	version->name_len = len;
	return 0;
}

int fake_ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	void *arg;
	int ret;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!is_fake_kfd(fd) && is_fake_drm(fd)) {
		ret = fake_drm_ioctl(fd, request, arg);
		errno = -ret;
		return ret ? -1 : 0;
	}
	if (!is_fake_kfd(fd))
		return ioctl(fd, request, arg);
	ret = request == AMDKFD_IOC_CRIU_OP ? fake_criu_op(arg) : -ENOTTY;
	errno = -ret;
	return ret ? -1 : 0;
}

/* A topology node whose files a device cgroup would refuse, or -1 */
static int hidden_node = -1;

int fake_openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & O_CREAT)
		mode = va_arg(ap, mode_t);
	va_end(ap);
	return openat(dirfd, path, flags, mode);
}

/*
 * A hidden node's files open, and their read() fails with EPERM, as the
 * kernel's sysfs show() of gpu_id, name and properties answers a task
 * that the device cgroup denies the GPU (Linux 6.12
 * drivers/gpu/drm/amd/amdkfd/kfd_topology.c node_show():
 * "if (dev->gpu && kfd_devcgroup_check_permission(dev->gpu)) return -EPERM;").
 */
ssize_t fake_read(int fd, void *buf, size_t len)
{
	char link[64], path[512], node[32];
	ssize_t n;

	if (hidden_node >= 0) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, path, sizeof(path) - 1);
		path[n < 0 ? 0 : n] = '\0';
		snprintf(node, sizeof(node), "/nodes/%d/", hidden_node);
		if (strstr(path, TOPOLOGY) && strstr(path, node)) {
			errno = EPERM;
			return -1;
		}
	}
	return read(fd, buf, len);
}

/* The fake root's render nodes are DRM character devices */
int fake_stat(const char *path, struct stat *buf)
{
	char real[512];
	int minor;

	if (sscanf(path, "/dev/dri/renderD%d", &minor) != 1 || !fake_root[0])
		return stat(path, buf);
	snprintf(real, sizeof(real), "%s%s", fake_root, path);
	if (stat(real, buf))
		return -1;
	buf->st_mode = S_IFCHR | 0666;
	buf->st_rdev = makedev(DRM_MAJOR, minor);
	return 0;
}

/* The path of open file @fd below the fake root, or NULL */
static const char *fake_path(int fd, char path[512])
{
	char link[64];
	ssize_t len;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, path, 511);
	path[len < 0 ? 0 : len] = '\0';
	if (!fake_root[0] || strncmp(path, fake_root, strlen(fake_root)))
		return NULL;
	return path + strlen(fake_root);
}

/* So are open files of them, and of the fake card nodes */
int fake_fstat(int fd, struct stat *buf)
{
	const char *fake;
	char path[512];
	int minor;

	if (fstat(fd, buf) || !S_ISREG(buf->st_mode) || !fake_root[0])
		return fstat(fd, buf);
	fake = fake_path(fd, path);
	if (!fake || (sscanf(fake, "/dev/dri/renderD%d", &minor) != 1 &&
		      sscanf(fake, "/dev/dri/card%d", &minor) != 1))
		return 0;
	buf->st_mode = S_IFCHR | 0666;
	buf->st_rdev = makedev(DRM_MAJOR, minor);
	return 0;
}

/* A fake root's file named dmabuf is on the dma-buf file system */
int fake_fstatfs(int fd, struct statfs *buf)
{
	const char *fake;
	char path[512];

	if (fstatfs(fd, buf))
		return -1;
	fake = fake_path(fd, path);
	if (fake && !strcmp(strrchr(fake, '/'), "/dmabuf"))
		buf->f_type = DMA_BUF_MAGIC;
	return 0;
}

/*
 * Turns the fake KFD on or off; the plugin asks for image mode again. The
 * process uses both GPUs and sees the topology's gpu_ids.
 */
static void fake_kfd_switch(bool on)
{
	memset(&fake_kfd, 0, sizeof(fake_kfd));
	fake_kfd.on = on;
	fake_pairing(4660, 17185);
	image_mode = -1;
	if (on)
		fake_dumped_task();
}

/**
 * enum criu_convention - a CRIU release, as it calls the plugin
 * @CRIU_3_17: dups the UPDATE_VMA_MAP fd (3.17, 3.18); ends the dump's
 *	       plugins before the post-dump scripts and --lazy-pages
 * @CRIU_3_19: owns and closes the UPDATE_VMA_MAP fd; ends plugins as 3.17
 *	       (in the build with KFD_CRIU_RESTORE_RETRY: a criu-dev snapshot
 *	       that passes the retry flag, and ends plugins as 4.0)
 * @CRIU_4_0: as 3.19, but ends the dump's plugins after the post-dump
 *	      scripts and --lazy-pages
 * @CRIU_4_1: as 4.0, with a plugin inventory in the images
 * @CRIU_4_2: as 4.1 (its new POST_FORKING hook is not the plugin's)
 * @CRIU_4_3: as 4.2, passes the retry flag and exports
 *	      criu_plugin_get_options()
 */
enum criu_convention { CRIU_3_17, CRIU_3_19, CRIU_4_0, CRIU_4_1, CRIU_4_2, CRIU_4_3 };

/*
 * The release whose criu-plugin.h this file was built against (Makefile:
 * CRIU_HEADER, 317 for Debian 12's 3.17; 410, 420 and 430 for Debian's
 * libcriu-dev 4.1.1-1, 4.2.1-1 and 4.3-1~exp2).
 */
#ifndef CRIU_HEADER
#define CRIU_HEADER	317
#endif

/*
 * Built against criu-dev's header (an older one with the retry flag), the
 * harness plays criu-dev for 3.19
 */
#if defined(KFD_CRIU_RESTORE_RETRY) && CRIU_HEADER < 430
#define CRIU_DEV	true
#else
#define CRIU_DEV	false
#endif

/*
 * The inventory functions are the harness's in a build against 4.1 or a
 * later header, or criu-dev's: the plugin's weak references to them are
 * bound when the harness starts, so one build plays either releases with
 * an inventory or releases without.
 */
#define HARNESS_INVENTORY	(CRIU_HEADER >= 410 || CRIU_DEV)

static const char *const convention_name[] = {
	[CRIU_3_17] = "CRIU 3.17",
	[CRIU_3_19] = CRIU_DEV ? "criu-dev (retry flag)" : "CRIU 3.19",
	[CRIU_4_0] = "CRIU 4.0",
	[CRIU_4_1] = "CRIU 4.1",
	[CRIU_4_2] = "CRIU 4.2",
	[CRIU_4_3] = "CRIU 4.3",
};

/* Each release's number, as CRIU_HEADER and the exports objects give it */
static const int convention_release[] = {
	[CRIU_3_17] = 317, [CRIU_3_19] = 319, [CRIU_4_0] = 400,
	[CRIU_4_1] = 410, [CRIU_4_2] = 420, [CRIU_4_3] = 430,
};

/* Whether release @c lists plugins in a dump's inventory (4.1, criu-dev) */
static bool has_inventory(enum criu_convention c)
{
	return c >= CRIU_4_1 || (CRIU_DEV && c == CRIU_3_19);
}

/*
 * Whether this build plays release @c: one whose verify_plugin() takes a
 * plugin built against this file's header, with the inventory as the
 * harness has it. 4.3's retry flag and options are played in every build.
 */
static bool plays(enum criu_convention c)
{
	if (CRIU_DEV)
		return c == CRIU_3_19 || c == CRIU_4_3;
	return convention_release[c] >= CRIU_HEADER &&
	       (has_inventory(c) == HARNESS_INVENTORY || c == CRIU_4_3);
}

/* Whether release @c ends a dump's plugins after its post-dump and lazy work */
static bool fini_last(enum criu_convention c)
{
	return c >= CRIU_4_0 || (CRIU_DEV && c == CRIU_3_19);
}

/*
 * RESTORE_EXT_FILE as CRIU calls it, whatever header this file was built
 * against:
 * - 3.17.1 to 4.2 (criu/include/criu-plugin.h at v3.17.1, v4.0, v4.1,
 *   v4.2): DECLARE_PLUGIN_HOOK_ARGS(CR_PLUGIN_HOOK__RESTORE_EXT_FILE, int id);
 * - 4.3 (criu-plugin.h of Debian's libcriu-dev 4.3-1~exp2) and criu-dev
 *   since fb02dbf68 "files-ext: Allow plugin files to retry": ..., int id,
 *   bool *retry_needed).
 * run_plugins() (criu/include/plugin.h, every release) casts the plugin's
 * hooks[] entry to its own type and calls it.
 */
typedef int restore_ext_file_3_17_t(int id);
typedef int restore_ext_file_4_3_t(int id, bool *retry_needed);

/*
 * The flag's byte as CRIU leaves it: whatever its stack held.
 * - criu-dev (2cf8f13ca) criu/files-ext.c open_fd() declares
 *   "bool retry_needed;" without a value and passes its address to
 *   run_plugins(RESTORE_EXT_FILE, ...); if the byte is set it gives no fd
 *   (*new_fd = -1) and returns the flag.
 * - Debian's criu 4.3-1~exp2, /usr/sbin/criu (stripped; its open_fd() at
 *   0x7a6b0, found by its "Unable to restore" message): the hook gets
 *   7(%rsp), which nothing stores to before the call; after restore_fown()
 *   the byte is tested (cmovne: *new_fd = -1) and returned as it is.
 * - criu/files.c open_fdinfos() calls open_fd() again on 1, and on any
 *   other non-zero value while other files make progress, and hits
 *   BUG_ON(!list_empty(list)) when they do not.
 * So the harness puts a byte that is neither 0 nor 1 there and takes any
 * non-zero byte back as a retry.
 */
#define STALE_RETRY_BYTE	0xa5

/* What the criu binary played exports (tests/criu_exports.c), loaded */
static void *criu_exports;
/* ... when it is 4.3's: the retry flag is passed */
static void *criu_4_3_exports;

/* The exports object of release @c */
static const char *exports_of(enum criu_convention c, char path[PATH_MAX])
{
	int release = convention_release[c];

	if (c == CRIU_4_1 || c == CRIU_4_2 || (CRIU_DEV && c == CRIU_3_19))
		release = 400;	/* nothing the plugin looks for is new */
	snprintf(path, PATH_MAX, "%s/criu-%d-exports.so", CRIU_EXPORTS_DIR, release);
	return path;
}

/*
 * Whether a plugin's dlsym(RTLD_DEFAULT, ...) finds what criu @c exports
 * and nothing that it lacks. Each object is loaded only in a process that
 * plays its release (as_criu()): glibc keeps an object that dlsym() found
 * a symbol in loaded for good.
 */
static bool criu_exports_are(enum criu_convention c)
{
	return !dlsym(RTLD_DEFAULT, "prepare_task_cgroup") == (c != CRIU_3_17) &&
	       !dlsym(RTLD_DEFAULT, "pmc_fill") == !fini_last(c) &&
	       !dlsym(RTLD_DEFAULT, "criu_plugin_get_options") == (c != CRIU_4_3);
}

/*
 * Runs @check(@arg) in a process of its own, as a criu of release @c
 * would run the plugin: what that criu exports is loaded first, and every
 * CRIU calls a plugin's init, where it looks, before its hooks
 * (cr_lib_load() in criu/plugin.c). Returns whether @check passed.
 */
static bool as_criu(enum criu_convention c, bool (*check)(const void *arg), const void *arg)
{
	char path[PATH_MAX];
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (!pid) {
		criu_exports = dlopen(exports_of(c, path), RTLD_NOW | RTLD_GLOBAL);
		if (!criu_exports)
			printf("# %s\n", dlerror());
		fake_dumped_task();	/* traced by this process now */
		criu_4_3_exports = c == CRIU_4_3 ? criu_exports : NULL;
		status = criu_exports_are(c) && check(arg);
		fflush(stdout);
		_exit(status ? 0 : 1);
	}
	status = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		 !WEXITSTATUS(status);
	fake_dumped_task();
	return status;
}

/* Whether the harness's own process is a criu before 4.3: no plugin options */
static bool criu_before_4_3(void)
{
	return !dlsym(RTLD_DEFAULT, "criu_plugin_get_options");
}

static bool as_criu_4_3(bool (*check)(const void *arg), const void *arg)
{
	return as_criu(CRIU_4_3, check, arg);
}

/*
 * What the plugin's probes for the CRIU release found, for the tests that
 * run in the harness's own process (whose criu exports nothing new, as
 * 3.19): the UPDATE_VMA_MAP convention and the dump's end.
 */
static void set_criu_convention(enum criu_convention c)
{
	criu_dups_vma_fd = c == CRIU_3_17;
	criu_fini_first = !fini_last(c);
}

/* Whether the plugin's init found release @c by what its criu exports */
static bool plugin_found(enum criu_convention c)
{
	return criu_dups_vma_fd == (c == CRIU_3_17) && criu_fini_first == !fini_last(c);
}

/* RESTORE_EXT_FILEs whose retry flag was left set, since the last reset */
static unsigned int retries_asked;

/*
 * The plugins as criu has them: cr_plugin_init() (criu/plugin.c, 3.17.1
 * to 4.3) dlopen()s each *.so of its plugin directory in the order
 * readdir() lists them and puts each at the tail of its list
 * (cr_lib_load(): list_add_tail()); a plugin whose init fails ends the
 * command, after the exit of those before it. run_plugins()
 * (criu/include/plugin.h) calls a hook of each plugin in that order and
 * stops at the first return that is not -ENOTSUP. readdir() order is the
 * file system's, so the plays use both orders (load_plugins()).
 */
static cr_plugin_desc_t *loaded[2] = { &CR_PLUGIN_DESC, &drm_reattach_desc };
static unsigned int nr_loaded = 2;

/* criu loads @first, then @second if not NULL */
static void load_plugins(cr_plugin_desc_t *first, cr_plugin_desc_t *second)
{
	loaded[0] = first;
	loaded[1] = second;
	nr_loaded = second ? 2 : 1;
}

/* Both plugins, kfd_criu first or drm_reattach first */
static void load_both(bool reattach_first)
{
	if (reattach_first)
		load_plugins(&drm_reattach_desc, &CR_PLUGIN_DESC);
	else
		load_plugins(&CR_PLUGIN_DESC, &drm_reattach_desc);
}

/* cr_plugin_init(): each plugin's init; one that fails ends the others */
static int criu_plugins_init(int stage)
{
	unsigned int i, j;
	int ret;

	for (i = 0; i < nr_loaded; i++) {
		ret = loaded[i]->init ? loaded[i]->init(stage) : 0;
		if (!ret)
			continue;
		for (j = 0; j < i; j++)
			loaded[j]->exit(stage, -1);
		return ret;
	}
	return 0;
}

/* cr_plugin_fini(): each plugin's exit */
static void criu_plugins_fini(int stage, int ret)
{
	unsigned int i;

	for (i = 0; i < nr_loaded; i++)
		if (loaded[i]->exit)
			loaded[i]->exit(stage, ret);
}

/* run_plugins(): hook @h of each loaded plugin until one does not decline */
#define run_plugins(h, ...) ({ \
	unsigned int __i; \
	int __ret = -ENOTSUP; \
	for (__i = 0; __i < nr_loaded && __ret == -ENOTSUP; __i++) \
		if (loaded[__i]->hooks[CR_PLUGIN_HOOK__##h]) \
			__ret = ((CR_PLUGIN_HOOK__##h##_t *) \
				 loaded[__i]->hooks[CR_PLUGIN_HOOK__##h])(__VA_ARGS__); \
	__ret; })

static int run_dump_ext_file(int fd, int id)
{
	return run_plugins(DUMP_EXT_FILE, fd, id);
}

static int run_handle_device_vma(int fd, const struct stat *st)
{
	return run_plugins(HANDLE_DEVICE_VMA, fd, st);
}

static int run_update_vma_map(const char *path, uint64_t addr, uint64_t pgoff,
			      uint64_t *new_pgoff, int *plugin_fd)
{
	return run_plugins(UPDATE_VMA_MAP, path, addr, pgoff, new_pgoff, plugin_fd);
}

static int run_resume_devices_late(int pid)
{
	return run_plugins(RESUME_DEVICES_LATE, pid);
}

/*
 * RESTORE_EXT_FILE as the CRIU played calls it: with the stale flag under
 * 4.3, and under a criu-dev snapshot in the build against its header.
 */
static int plugin_restore_ext_file(void *hook, int id, bool *retry)
{
	union {
		bool flag;
		unsigned char byte;
	} stack = { .byte = STALE_RETRY_BYTE };
	int fd;

	if (!criu_4_3_exports && !HEADER_RETRY_FLAG) {
		*retry = false;
		return ((restore_ext_file_3_17_t *)hook)(id);
	}
	fd = ((restore_ext_file_4_3_t *)hook)(id, &stack.flag);
	*retry = stack.byte;
	retries_asked += *retry;
	return fd;
}

/* ... of each loaded plugin, until one does not decline */
static int criu_restore_ext_file(int id, bool *retry)
{
	unsigned int i;
	int fd = -ENOTSUP;

	*retry = false;
	for (i = 0; i < nr_loaded && fd == -ENOTSUP; i++)
		fd = plugin_restore_ext_file(loaded[i]->hooks[CR_PLUGIN_HOOK__RESTORE_EXT_FILE], id,
					     retry);
	return fd;
}

/* The fd the loaded plugins restore file @id as, or -errno; no retry */
static int run_restore_file(int id)
{
	bool retry;

	return criu_restore_ext_file(id, &retry);
}

/*
 * CRIU's ext file restore: a retry asks for another call later, which
 * 4.3 makes once the other files are open. Returns the restored fd.
 */
static int play_restore_file(int id)
{
	bool retry;
	int fd, tries;

	for (tries = 0; tries < 3; tries++) {
		fd = criu_restore_ext_file(id, &retry);
		if (fd < 0 || !retry)
			return fd;
		printf("# file %d: retry asked, fd %d left open\n", id, fd);
	}
	return -ELOOP;
}

/**
 * struct play_vma - a mapping of the restored task, in address order
 * @path: the file's path as the dump recorded it
 * @file: CRIU's id of the mapped file: consecutive mappings of one share an fd
 * @pgoff: the dumped offset (bytes)
 * @want_pgoff: the offset it must be mmapped at
 * @want_gpu: the index in gpu_map[] of the render file it must go through,
 *	      -1 for /dev/kfd and other files (no plugin fd)
 * @fd: the fd CRIU would mmap it through
 * @close: whether the restorer closes @fd after this mapping
 */
struct play_vma {
	const char *path;
	unsigned int file;
	uint64_t pgoff, want_pgoff;
	int want_gpu;
	int fd;
	bool close;
};

/* A regular file stands in for every mapping that is no device */
static int open_other_file(void)
{
	return openat(image_dir_fd, "plain", O_RDONLY | O_CLOEXEC);
}

/*
 * CRIU's open_path() of a mapping no plugin gave an fd for: the dumped path
 * itself. A render node path opens the fake root's node, a fresh DRM file;
 * one the fake root lacks fails, as the open fails in CRIU.
 */
static int criu_open_path(const char *path)
{
	char real[512];

	if (!strcmp(path, KFD_DEV_PATH))
		return open(KFD_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (strncmp(path, "/dev/dri/", 9))
		return open_other_file();
	snprintf(real, sizeof(real), "%s%s", fake_root, path);
	return open(real, O_RDWR | O_CLOEXEC);
}

/*
 * CRIU 3.19 and later ignore the UPDATE_VMA_MAP fd of a mapping that they
 * map through the fd of the mapping before it, without closing it.
 */
static int dropped_fds;

/* A failed restore: the task exits, closing the fds of @n mappings */
static int play_close_vmas(struct play_vma *v, int n, int ret)
{
	int i;

	for (i = 0; i < n; i++)
		if (!i || v[i].fd != v[i - 1].fd)
			close(v[i].fd);
	return ret;
}

/* What CRIU leaves in new_pgoff: open_filemap() does not initialise it */
#define STALE_NEW_PGOFF		0x5a5a5a5a5a5a5000ULL

/*
 * UPDATE_VMA_MAP of mapping @i as open_filemap() (criu/files-reg.c, every
 * release from 3.17.1 to 4.3) runs it: only a return of 1 counts, and
 * then *new_pgoff becomes the mapping's offset. Any other return, an error
 * included, changes nothing: CRIU goes on with the dumped offset. The fd
 * it hands back is taken whatever the return.
 */
static int criu_update_vma_map(struct play_vma *v, int i)
{
	uint64_t new_pgoff = STALE_NEW_PGOFF;
	int plugin_fd = -1;

	if (strncmp(v[i].path, "/dev/", 5))
		return -1;
	if (run_update_vma_map(v[i].path, 0x7f0000000000 + i * 0x1000, v[i].pgoff, &new_pgoff,
			       &plugin_fd) == 1)
		v[i].pgoff = new_pgoff;
	return plugin_fd;
}

/*
 * CRIU's open_vmas(): UPDATE_VMA_MAP for device mappings, then one fd per
 * run of mappings of one file (the plugin's, else CRIU opens the dumped
 * path); the last of a run closes it. A failed open fails the restore.
 */
static int play_open_vmas(enum criu_convention c, struct play_vma *v, int n)
{
	int i, plugin_fd, ctx = -1;

	for (i = 0; i < n; i++) {
		plugin_fd = criu_update_vma_map(v, i);
		if (i && v[i].file == v[i - 1].file) {
			v[i].fd = v[i - 1].fd;
			dropped_fds += plugin_fd >= 0 && c != CRIU_3_17;
			continue;
		}
		if (i)
			v[i - 1].close = true;
		if (plugin_fd >= 0)
			ctx = c == CRIU_3_17 ? dup(plugin_fd) : plugin_fd;
		else
			ctx = criu_open_path(v[i].path);
		if (ctx < 0) {
			printf("# mapping %d: CRIU cannot open %s: %s\n", i, v[i].path, strerror(errno));
			return play_close_vmas(v, i, -errno);
		}
		v[i].fd = ctx;
	}
	if (n)
		v[n - 1].close = true;
	return 0;
}

/* Whether @fd is one of the render files the restore's RESTORE used */
static bool restore_render_file_fd(int fd, int probe)
{
	int i;

	for (i = 0; i < nr_gpus; i++)
		if (same_file(fd, gpu_map[i].drm_fd, probe))
			return true;
	return false;
}

/*
 * The restorer's mmap() of mapping @i, as the kernel answers it: an offset
 * that is not page-aligned is refused by the mm core before any driver
 * (-EINVAL); DRM maps a buffer only through the file that holds it, so a
 * render node file that RESTORE did not use, such as a fresh open of the
 * path, is refused (-EACCES, drm_gem_mmap()). A mapping that the kernel
 * takes but that lands on the wrong GPU or offset is a restore that looks
 * right and is not: the harness fails it as -EFAULT.
 */
static int play_mmap(const struct play_vma *v, int i)
{
	struct stat st;

	if (fcntl(v[i].fd, F_GETFD) < 0) {
		printf("# mapping %d of %s: fd %d: %s\n", i, v[i].path, v[i].fd, strerror(errno));
		return -EBADF;
	}
	if (v[i].pgoff & (sysconf(_SC_PAGESIZE) - 1)) {
		printf("# mapping %d of %s: offset %#" PRIx64 " is not page-aligned: mmap() refuses it\n",
		       i, v[i].path, v[i].pgoff);
		return -EINVAL;
	}
	if (!fake_fstat(v[i].fd, &st) && S_ISCHR(st.st_mode) && major(st.st_rdev) == DRM_MAJOR &&
	    !restore_render_file_fd(v[i].fd, 300 + i)) {
		printf("# mapping %d of %s: a DRM file that holds no restored buffer: DRM refuses it\n",
		       i, v[i].path);
		return -EACCES;
	}
	if (v[i].want_gpu >= 0 && !same_file(v[i].fd, gpu_map[v[i].want_gpu].drm_fd, 100 + i)) {
		printf("# mapping %d of %s: not GPU %d's render file\n", i, v[i].path, v[i].want_gpu);
		return -EFAULT;
	}
	if (v[i].pgoff != v[i].want_pgoff) {
		printf("# mapping %d of %s: offset %#" PRIx64 ", want %#" PRIx64 "\n",
		       i, v[i].path, v[i].pgoff, v[i].want_pgoff);
		return -EFAULT;
	}
	return 0;
}

/*
 * The restorer: each mapping is mmapped in turn, the first failure fails
 * the restore (the task exits: every fd closes).
 */
static int play_restorer(struct play_vma *v, int n)
{
	int i, ret = 0;

	for (i = 0; i < n; i++) {
		ret = ret ?: play_mmap(v, i);
		if (v[i].close && v[i].fd >= 0)
			close(v[i].fd);
	}
	return ret;
}

/* Open fds of this process */
static int count_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	int n = -3;	/* ".", ".." and the directory's own */

	while (dir && readdir(dir))
		n++;
	if (dir)
		closedir(dir);
	return n;
}

/* The plugin's own fds: its render files */
static int plugin_fds(void)
{
	int i, n = 0;

	for (i = 0; i < nr_gpus; i++)
		n += gpu_map[i].drm_fd >= 0;
	return n;
}

/**
 * struct play_case - one process to dump and restore
 * @name: what it shows
 * @gpu_map: KFD_CRIU_GPU_MAP at restore, or NULL
 * @moved: the offsets the fake RESTORE moves
 * @nr_moved: entries in @moved
 * @vmas: its mappings
 * @nr_vmas: entries in @vmas
 * @error: 0, or the errno the restore must fail with
 * @why: with @error, what the plugin must log
 * @files: the index in gpu_map[] of the render file that render node files
 *	   61 (renderD129) and 62 (renderD130) must be restored on
 * @seen: the gpu_ids the process saw at dump for GPUs 4660 and 17185, 0 for
 *	  a GPU it did not use (PROCESS_INFO's pairing); all 0: the topology's,
 *	  for both
 * @no_minors: dumped by an older plugin: no render minors in the image
 */
struct play_case {
	const char *name;
	const char *gpu_map;
	struct kfd_criu_offset_map moved[4];
	unsigned int nr_moved;
	struct play_vma vmas[8];
	int nr_vmas;
	int error;
	const char *why;
	int files[2];
	uint32_t seen[2];
	bool no_minors;
};

/* An offset map entry: @gpu is the image's gpu_id of the buffer's GPU */
#define MOVED(old, new, gpu)	{ old, new, gpu, 0 }
#define KFD_VMA(off)	{ KFD_DEV_PATH, 1, off, off, -1, -1, false }
#define LIB_VMA		{ "/usr/lib/libhsa.so", 2, 0, 0, -1, -1, false }
#define RENDER_VMA(minor, off, to, gpu) \
	{ "/dev/dri/renderD" #minor, minor, off, to, gpu, -1, false }

/*
 * GPU 4660 is renderD129 (gpu_map[0]), GPU 17185 renderD130 ([1]). The
 * offset map names a buffer's GPU by the gpu_id the process saw for it.
 */
static const struct play_case play_cases[] = {
	{ "one GPU", NULL, { MOVED(0x1000, 0x9000, 4660) }, 1,
	  { KFD_VMA(0x5000), RENDER_VMA(129, 0x1000, 0x9000, 0),
	    RENDER_VMA(129, 0x3000, 0x3000, 0), LIB_VMA }, 4, 0, .files = { 0, 1 } },
	{ "one GPU, render mappings between library mappings", NULL,
	  { MOVED(0x1000, 0x9000, 4660) }, 1,
	  { RENDER_VMA(129, 0x1000, 0x9000, 0), LIB_VMA,
	    RENDER_VMA(129, 0x3000, 0x3000, 0), LIB_VMA,
	    RENDER_VMA(129, 0x4000, 0x4000, 0) }, 5, 0, .files = { 0, 1 } },
	{ "two GPUs, interleaved with other files", NULL,
	  { MOVED(0x1000, 0x9000, 4660), MOVED(0x8000, 0xa000, 17185) }, 2,
	  { KFD_VMA(0x5000), RENDER_VMA(129, 0x1000, 0x9000, 0), LIB_VMA,
	    RENDER_VMA(130, 0x8000, 0xa000, 1), LIB_VMA,
	    RENDER_VMA(129, 0x3000, 0x3000, 0), KFD_VMA(0x6000),
	    RENDER_VMA(130, 0x2000, 0x2000, 1) }, 8, 0, .files = { 0, 1 } },
	{ "two GPUs swapped by KFD_CRIU_GPU_MAP", "4660=17185,17185=4660",
	  { MOVED(0x1000, 0x9000, 4660) }, 1,
	  { RENDER_VMA(129, 0x1000, 0x9000, 1), LIB_VMA,
	    RENDER_VMA(130, 0x2000, 0x2000, 0) }, 3, 0, .files = { 1, 0 } },
	{ "two GPUs report one old offset, both move", NULL,
	  { MOVED(0x1000, 0x9000, 4660), MOVED(0x1000, 0xa000, 17185) }, 2,
	  { RENDER_VMA(129, 0x1000, 0x9000, 0), LIB_VMA,
	    RENDER_VMA(130, 0x1000, 0xa000, 1) }, 3, 0, .files = { 0, 1 } },
	{ "two GPUs report one old offset, only one moves", NULL,
	  { MOVED(0x1000, 0x9000, 4660) }, 1,
	  { RENDER_VMA(129, 0x1000, 0x9000, 0), LIB_VMA,
	    RENDER_VMA(130, 0x1000, 0x1000, 1) }, 3, 0, .files = { 0, 1 } },
	{ "two GPUs swapped, one old offset, only the image's second moves",
	  "4660=17185,17185=4660", { MOVED(0x1000, 0x9000, 17185) }, 1,
	  { RENDER_VMA(129, 0x1000, 0x1000, 1), LIB_VMA,
	    RENDER_VMA(130, 0x1000, 0x9000, 0) }, 3, 0, .files = { 1, 0 } },
	/*
	 * A mapping the plugin cannot place must fail the restore at its
	 * mmap, not come back at its dumped offset (a stale doorbell) or,
	 * after a mapping of the same file, through that mapping's fd.
	 */
	{ "a /dev/kfd offset moved two ways: refused, not guessed, the restore fails", NULL,
	  { MOVED(0x5000, 0x6000, 4660), MOVED(0x5000, 0x7000, 17185) }, 2,
	  { KFD_VMA(0x5000), LIB_VMA }, 2, EINVAL, "not guessing which", .files = { 0, 1 } },
	{ "a render node offset moved two ways, after a mapping of the same file: refused, the restore fails",
	  NULL, { MOVED(0x1000, 0x9000, 4660), MOVED(0x1000, 0xa000, 4660) }, 2,
	  { RENDER_VMA(129, 0x3000, 0x3000, 0), RENDER_VMA(129, 0x1000, 0x1000, 0), LIB_VMA },
	  3, EINVAL, "not guessing which", .files = { 0, 1 } },
	/* The process sees GPU 4660 as 17185 and GPU 17185 as 4660 */
	{ "dumped again after a swapped restore, restored without a map", NULL,
	  { MOVED(0x1000, 0x9000, 17185), MOVED(0x1000, 0xa000, 4660) }, 2,
	  { KFD_VMA(0x5000), RENDER_VMA(129, 0x1000, 0x9000, 1), LIB_VMA,
	    RENDER_VMA(130, 0x1000, 0xa000, 0), RENDER_VMA(130, 0x3000, 0x3000, 0) },
	  5, 0, .files = { 1, 0 }, .seen = { 17185, 4660 } },
	{ "dumped again after a swapped restore, swapped back", "4660=17185,17185=4660",
	  { MOVED(0x1000, 0x9000, 17185), MOVED(0x1000, 0xa000, 4660) }, 2,
	  { RENDER_VMA(129, 0x1000, 0x9000, 0), LIB_VMA,
	    RENDER_VMA(130, 0x1000, 0xa000, 1) }, 3, 0,
	  .files = { 0, 1 }, .seen = { 17185, 4660 } },
	/*
	 * The process uses one GPU, which it sees as 4660, on GPU 17185; GPU
	 * 4660 is unused (a render file that the first restore left open).
	 */
	{ "one GPU of two used, dumped again after a restore onto the other, restored without a map",
	  NULL, { MOVED(0x1000, 0x9000, 4660) }, 1,
	  { RENDER_VMA(130, 0x1000, 0x9000, 0), LIB_VMA,
	    RENDER_VMA(130, 0x2000, 0x2000, 0) }, 3, 0,
	  .files = { 0, 0 }, .seen = { 0, 4660 } },
	{ "one GPU of two used, dumped again after a restore onto the other, restored there again",
	  "4660=17185", { MOVED(0x1000, 0x9000, 4660) }, 1,
	  { RENDER_VMA(130, 0x1000, 0x9000, 1), LIB_VMA,
	    RENDER_VMA(130, 0x2000, 0x2000, 1) }, 3, 0,
	  .files = { 0, 1 }, .seen = { 0, 4660 } },
	/* Without minors, a dumped minor is taken as the GPU it is here */
	{ "an image of an older plugin, without render minors", NULL,
	  { MOVED(0x1000, 0x9000, 4660), MOVED(0x1000, 0xa000, 17185) }, 2,
	  { RENDER_VMA(129, 0x1000, 0x9000, 0), LIB_VMA,
	    RENDER_VMA(130, 0x1000, 0xa000, 1) }, 3, 0,
	  .files = { 0, 1 }, .no_minors = true },
	{ "an image of an older plugin, without render minors, GPUs swapped",
	  "4660=17185,17185=4660",
	  { MOVED(0x1000, 0x9000, 4660), MOVED(0x1000, 0xa000, 17185) }, 2,
	  { RENDER_VMA(129, 0x1000, 0x9000, 1), LIB_VMA,
	    RENDER_VMA(130, 0x1000, 0xa000, 0) }, 3, 0,
	  .files = { 1, 0 }, .no_minors = true },
};

/* Init and DUMP_EXT_FILE of a process with /dev/kfd and both render nodes open */
static int play_dump_files(void)
{
	char path[512];
	int fd, ret, i;

	ret = criu_plugins_init(CR_PLUGIN_STAGE__DUMP);
	fd = open(KFD_DEV_PATH, O_RDWR | O_CLOEXEC);
	ret = ret ?: run_dump_ext_file(fd, 60);
	close(fd);
	for (i = 0; !ret && i < 2; i++) {
		snprintf(path, sizeof(path), "%s/dev/dri/renderD%d", fake_root, 129 + i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		ret = run_dump_ext_file(fd, 61 + i);
		close(fd);
	}
	return ret;
}

/* The dump of that process, ended at once */
static int play_dump(void)
{
	int ret = play_dump_files();

	criu_plugins_fini(CR_PLUGIN_STAGE__DUMP, ret);
	forget_gpus();
	return ret;
}

/* Where CRIU's action scripts run: none, its own shell scripts, an RPC client */
enum { SCRIPTS_NONE, SCRIPTS_SHELL, SCRIPTS_RPC };

/**
 * struct dump_end - how a dump ends, which decides what criu does last
 * @name: what it shows
 * @scripts: SCRIPTS_NONE, SCRIPTS_SHELL (--action-script) or SCRIPTS_RPC
 *	     (criu swrk, as runc, podman and libcriu run it: the client gets
 *	     the notifications)
 * @post_dump_fails: the post-dump script, or the client, answers an error
 * @lazy: criu dump --lazy-pages: memory is served after the dump
 * @alive: criu dump --leave-running
 * @keep: KFD_CRIU_LEAVE_RUNNING=0
 * @stays_paused: a killed task must not have been unpaused
 */
struct dump_end {
	const char *name;
	int scripts;
	bool post_dump_fails, lazy, alive, keep, stays_paused;
};

static const struct dump_end dump_ends[] = {
	{ "killed, KFD_CRIU_LEAVE_RUNNING=0, no action scripts: paused to the end", .keep = true,
	  .stays_paused = true },
	{ "--leave-running: unpaused before the task runs again", .alive = true },
	{ "a post-dump --action-script fails: CRIU resumes the task, its GPU runs again",
	  .scripts = SCRIPTS_SHELL, .post_dump_fails = true },
	{ "KFD_CRIU_LEAVE_RUNNING=0, a post-dump --action-script fails: CRIU resumes the task, its GPU runs again",
	  .scripts = SCRIPTS_SHELL, .post_dump_fails = true, .keep = true },
	{ "KFD_CRIU_LEAVE_RUNNING=0, criu swrk whose client fails post-dump: CRIU resumes the task, its GPU runs again",
	  .scripts = SCRIPTS_RPC, .post_dump_fails = true, .keep = true },
	{ "--lazy-pages: the GPU stays paused while memory is served", .lazy = true },
	{ "--lazy-pages, KFD_CRIU_LEAVE_RUNNING=0: paused while memory is served and to the kill",
	  .lazy = true, .keep = true, .stays_paused = true },
};

/* Appends protobuf varint @val at @p; returns the end */
static uint8_t *put_varint(uint8_t *p, uint64_t val)
{
	for (; val >= 0x80; val >>= 7)
		*p++ = (uint8_t)(val | 0x80);
	*p++ = (uint8_t)val;
	return p;
}

/* Appends an image entry at @p: its size, then varint fields 1.. of @vals */
static uint8_t *put_entry(uint8_t *p, const uint64_t *vals, unsigned int n)
{
	uint8_t msg[64], *end = msg;
	uint32_t len;
	unsigned int i;

	for (i = 0; i < n; i++) {
		end = put_varint(end, (i + 1) << 3);
		end = put_varint(end, vals[i]);
	}
	len = end - msg;
	memcpy(p, &len, sizeof(len));
	memcpy(p + sizeof(len), msg, len);
	return p + sizeof(len) + len;
}

/*
 * pagemap-4242.img as criu dump writes it (criu/image.c: IMG_COMMON_MAGIC,
 * PAGEMAP_MAGIC, then size-prefixed pagemap_head and pagemap_entry
 * messages of images/pagemap.proto): a page of the binary's data, present;
 * then anonymous memory, which every dump marks PE_LAZY (1 << 1) and, but
 * with --lazy-pages, PE_PRESENT (1 << 2) too (criu/page-xfer.c
 * ppb_xfer_flags(), criu/mem.c "xfer.transfer_lazy = !mdc->lazy").
 */
static void write_pagemap(bool lazy)
{
	const uint64_t head[] = { 1 }, data[] = { 0x600000, 1, 0, 4 },
		       anon[] = { 0x7f0000000000, 16, 0, lazy ? 2 : 6 };
	const uint32_t magic[] = { 0x54564319, 0x56084025 };
	uint8_t buf[256], *p = buf + sizeof(magic);
	int fd;

	memcpy(buf, magic, sizeof(magic));
	p = put_entry(p, head, ARRAY_SIZE(head));
	p = put_entry(p, data, ARRAY_SIZE(data));
	p = put_entry(p, anon, ARRAY_SIZE(anon));
	fd = openat(image_dir_fd, "pagemap-4242.img", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, buf, p - buf) != p - buf)
		printf("# cannot write pagemap-4242.img\n");
	close(fd);
}

/*
 * /proc/self/cmdline of the criu played, below the fake root: criu dump,
 * or criu swrk once it took runc's dump request, which names it in its
 * process title (criu/cr-service.c "dump --rpc -t %d -D %s"; Debian's
 * criu 4.1.1 under runc 1.1 in the Debian 13 lane, with libbsd's
 * setproctitle(): one string, "criu: " first)
 */
static void fake_cmdline(bool swrk)
{
	static const char rpc[] = "criu: dump --rpc -t 4242 -D /images",
			  cli[] = "criu\0dump\0-t\0004242";
	char path[300];
	int fd;

	snprintf(path, sizeof(path), "%s/proc/self", fake_root);
	make_dirs(path);
	strcat(path, "/cmdline");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, swrk ? rpc : cli, swrk ? sizeof(rpc) : sizeof(cli)) < 0)
		printf("# cannot write %s\n", path);
	close(fd);
}

/*
 * The end of a dump by criu @c, cr_dump_finish() in criu/cr-dump.c:
 * 3.17 to 3.19 end the plugins (v3.17.1:criu/cr-dump.c:1986) before the
 * post-dump scripts (:2000) and the lazy page server (:2036); 4.0 and
 * later after them (v4.2:criu/cr-dump.c:2068, :2104, then :2109). Every
 * release passes the plugins its own result and resumes the tasks on
 * "ret || post_dump_ret" (v3.17.1 :2040, v4.2 :2111). Returns whether the
 * GPU was paused whenever it had to be: while memory was served, and at
 * the kill if @e says so; and running when the task was resumed.
 */
static bool play_dump_end(enum criu_convention c, const struct dump_end *e)
{
	bool alive, pass = true;
	int ret, post_dump = 0;

	fake_cmdline(e->scripts == SCRIPTS_RPC);
	/* run_scripts(ACT_PRE_DUMP), before cr_plugin_init() in cr_dump_tasks() */
	if (e->scripts == SCRIPTS_SHELL)
		setenv("CRTOOLS_SCRIPT_ACTION", "pre-dump", 1);
	if (e->keep)
		setenv("KFD_CRIU_LEAVE_RUNNING", "0", 1);
	ret = play_dump_files();
	if (!ret && !plugin_found(c))
		ret = -ENOEXEC;
	write_pagemap(e->lazy);
	if (!fini_last(c))
		criu_plugins_fini(CR_PLUGIN_STAGE__DUMP, ret);
	if (!ret && e->scripts) {
		if (e->scripts == SCRIPTS_SHELL)
			setenv("CRTOOLS_SCRIPT_ACTION", "post-dump", 1);
		post_dump = e->post_dump_fails;
	}
	if (!ret && e->lazy && !fake_kfd.paused) {
		printf("# memory served while the GPU runs\n");
		pass = false;
	}
	if (fini_last(c))
		criu_plugins_fini(CR_PLUGIN_STAGE__DUMP, ret);
	alive = ret || post_dump || e->alive;
	if (alive && fake_kfd.paused) {
		printf("# the task resumed with its GPU queues paused\n");
		pass = false;
	}
	if (!alive && e->stays_paused && !fake_kfd.paused) {
		printf("# unpaused although killed\n");
		pass = false;
	}
	unsetenv("CRTOOLS_SCRIPT_ACTION");
	unsetenv("KFD_CRIU_LEAVE_RUNNING");
	unlinkat(image_dir_fd, "pagemap-4242.img", 0);
	forget_gpus();
	return !ret && pass;
}

static enum criu_convention played;

static bool play_dump_end_as_played(const void *e)
{
	return play_dump_end(played, e);
}

/* The end of a dump of a KFD process, as criu @c ends it */
static void test_dump_end(enum criu_convention c)
{
	char name[300], cmd[320];
	unsigned int i;

	played = c;
	for (i = 0; i < ARRAY_SIZE(dump_ends); i++) {
		fake_kfd_switch(true);
		snprintf(name, sizeof(name), "%s: a dump's end: %s", convention_name[c],
			 dump_ends[i].name);
		ok(as_criu(c, play_dump_end_as_played, &dump_ends[i]), name);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s/proc", fake_root);
	if (system(cmd))
		printf("# cannot remove the fake /proc\n");
	fake_kfd_switch(false);
}

/* Takes the render minors out of /dev/kfd file @id's image, as older plugins wrote it */
static void strip_minors(unsigned int id)
{
	KfdCriuMeta *meta;

	if (kfd_criu_read_meta(id, &meta)) {
		printf("# cannot read the image of file %u\n", id);
		return;
	}
	meta->n_render_nodes = 0;
	kfd_criu_write_meta(id, meta);
	kfd_criu_meta__free_unpacked(meta, NULL);
}

/* Whether render node files @fd61 and @fd62 are on the GPUs @pc wants */
static int play_check_render_files(const struct play_case *pc, int fd61, int fd62)
{
	const int fds[] = { fd61, fd62 };
	int i, bad = 0;

	for (i = 0; i < 2; i++) {
		if (same_file(fds[i], gpu_map[pc->files[i]].drm_fd, 200 + i))
			continue;
		printf("# render node file %d: not GPU %d's render file\n", 61 + i, pc->files[i]);
		bad++;
	}
	return bad ? -EBADF : 0;
}

static void fake_status(int pid, int vpid);

/*
 * The restored task's part, as CRIU's forked task runs it: RESTORE_EXT_FILE
 * of its files (prepare_fds()), UPDATE_VMA_MAP of its mappings
 * (open_vmas()), then the restorer's mmap()s. Returns 0 or the failing
 * -errno; -ENOTRECOVERABLE if it leaked fds, asked for a retry or did not
 * log why it failed.
 */
static int play_task(enum criu_convention c, const struct play_case *pc)
{
	struct play_vma v[ARRAY_SIZE(pc->vmas)];
	int before = count_fds(), fds[3], i, files, ret = 0;

	memcpy(v, pc->vmas, sizeof(v));
	dropped_fds = 0;
	retries_asked = 0;
	fds[0] = play_restore_file(61);
	fds[1] = play_restore_file(60);
	fds[2] = play_restore_file(62);
	for (i = 0; i < 3; i++)
		ret = ret ?: fds[i] < 0 ? fds[i] : 0;
	files = ret ?: play_check_render_files(pc, fds[0], fds[2]);
	ret = ret ?: play_open_vmas(c, v, pc->nr_vmas);
	ret = ret ?: play_restorer(v, pc->nr_vmas);
	ret = ret ?: files;
	for (i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (count_fds() - plugin_fds() - dropped_fds != before) {
		printf("# task: %d fds open before, %d after, %d dropped by CRIU\n",
		       before, count_fds() - plugin_fds(), dropped_fds);
		return -ENOTRECOVERABLE;
	}
	if (retries_asked || (pc->error && !logged(pc->why))) {
		printf("# task: %u retries asked, %s\n", retries_asked,
		       pc->error && !logged(pc->why) ? "why not logged" : "why logged");
		return -ENOTRECOVERABLE;
	}
	return ret;
}

/*
 * Runs the restored task of @pc in a child, as CRIU forks it; the child
 * then waits, alive, until criu is done with it. Returns its pid, or
 * -errno; *@ret is the task's result.
 */
static pid_t fork_task(enum criu_convention c, const struct play_case *pc, int *ret,
		       int *release)
{
	int result[2], hold[2];
	pid_t pid;
	char byte;

	if (pipe(result) || pipe(hold))
		return -errno;
	fflush(stdout);
	pid = fork();
	if (!pid) {
		close(result[0]);
		close(hold[1]);
		*ret = play_task(c, pc);
		fflush(stdout);
		if (write(result[1], ret, sizeof(*ret)) != sizeof(*ret) ||
		    read(hold[0], &byte, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(result[1]);
	close(hold[0]);
	if (pid < 0 || read(result[0], ret, sizeof(*ret)) != sizeof(*ret))
		*ret = -ECHILD;
	close(result[0]);
	*release = hold[1];
	return pid;
}

/*
 * Restores the dumped process as CRIU @c would: criu's init, the task's
 * hooks in a process of its own, then criu's RESUME_DEVICES_LATE while the
 * task is alive, and criu's fini. 0 or the failing -errno.
 */
static int play_restore(enum criu_convention c, const struct play_case *pc)
{
	int ret, task_ret = 0, release = -1, status;
	char cmd[320];
	pid_t pid;

	ret = criu_plugins_init(CR_PLUGIN_STAGE__RESTORE);
	if (!ret && !plugin_found(c))
		ret = -ENOEXEC;
	memcpy(fake_kfd.moved, pc->moved, sizeof(pc->moved));
	fake_kfd.nr_moved = pc->nr_moved;
	fake_kfd.restores = 0;
	if (pc->gpu_map)
		setenv("KFD_CRIU_GPU_MAP", pc->gpu_map, 1);
	pid = ret ? -1 : fork_task(c, pc, &task_ret, &release);
	ret = ret ?: pid < 0 ? pid : task_ret;
	if (pid > 0)
		fake_status(pid, pid);	/* criu's view of the task: no PID namespace */
	ret = ret ?: run_resume_devices_late(pid);
	if (release >= 0)
		close(release);
	if (pid > 0 && (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
			WEXITSTATUS(status)))
		ret = ret ?: -ECHILD;
	criu_plugins_fini(CR_PLUGIN_STAGE__RESTORE, ret);
	unsetenv("KFD_CRIU_GPU_MAP");
	snprintf(cmd, sizeof(cmd), "rm -rf %s/proc/%d", fake_root, pid);
	if (pid > 0 && system(cmd))
		printf("# cannot remove the fake /proc\n");
	return ret;
}

/* Dumps and restores the process of @pc as CRIU @c would; whether it passed */
static bool play_one(enum criu_convention c, const struct play_case *pc)
{
	int before = count_fds(), ret;
	bool pass;

	ret = play_dump();
	if (!ret && pc->no_minors)
		strip_minors(60);
	ret = ret ?: play_restore(c, pc);
	pass = ret == -pc->error && count_fds() == before &&
	       (pc->error || fake_kfd.resumes == 1) && fake_kfd.restores == 1;
	if (ret != -pc->error)
		printf("# returned %d\n", ret);
	if (count_fds() != before)
		printf("# criu: %d fds open before, %d after\n", before, count_fds());
	if (fake_kfd.restores != 1)
		printf("# %u RESTOREs\n", fake_kfd.restores);
	return pass;
}

static bool play_one_as_played(const void *pc)
{
	return play_one(played, pc);
}

/*
 * Dump and restore of each case, criu and its task as CRIU @c runs them,
 * with both plugins loaded: every other case drm_reattach first.
 */
static void test_play(enum criu_convention c)
{
	const struct play_case *pc;
	char name[200];
	unsigned int i;

	played = c;
	for (i = 0; i < ARRAY_SIZE(play_cases); i++) {
		pc = &play_cases[i];
		fake_kfd_switch(true);
		fake_render_node(129);
		fake_render_node(130);
		if (pc->seen[0] || pc->seen[1])
			fake_pairing(pc->seen[0], pc->seen[1]);
		snprintf(name, sizeof(name), "%s: dump and restore, %s",
			 convention_name[c], pc->name);
		load_both(i & 1);
		ok(as_criu(c, play_one_as_played, pc), name);
		load_both(false);
		forget_gpus();
		free(offsets);
		offsets = NULL;
		nr_offsets = 0;
	}
	fake_kfd_switch(false);
}

/*
 * RESTORE_EXT_FILE @hook of file @id called as 4.3 calls it, the flag's
 * byte at STALE_RETRY_BYTE; *@byte is that byte after the call. Where the
 * criu played passes no flag, the call still puts the byte's address where
 * that criu leaves whatever a register holds: a plugin that wrote a flag
 * there would change the byte.
 */
static int restore_with_stale_flag(void *hook, int id, unsigned char *byte)
{
	union {
		bool flag;
		unsigned char byte;
	} stack = { .byte = STALE_RETRY_BYTE };
	int fd = ((restore_ext_file_4_3_t *)hook)(id, &stack.flag);

	*byte = stack.byte;
	return fd;
}

/* The RESTORE_EXT_FILE that this build of the plugin registered */
static void *registered_restore_ext_file(void)
{
	return CR_PLUGIN_DESC.hooks[CR_PLUGIN_HOOK__RESTORE_EXT_FILE];
}

/*
 * A restore of the dumped /dev/kfd file (60) through the RESTORE_EXT_FILE
 * the plugin registered in this process, called with the stale flag:
 * whether the fd came, RESTORE ran once and the flag's byte is @byte.
 */
static bool restore_kfd_file_leaves(unsigned char byte)
{
	unsigned char after = STALE_RETRY_BYTE;
	int fd = -1;

	fake_kfd.restores = 0;
	if (!kfd_plugin_init(CR_PLUGIN_STAGE__RESTORE))
		fd = restore_with_stale_flag(registered_restore_ext_file(), 60, &after);
	if (fd >= 0)
		close(fd);
	kfd_plugin_fini(CR_PLUGIN_STAGE__RESTORE, 0);
	forget_gpus();
	if (fd < 0 || after != byte || fake_kfd.restores != 1)
		printf("# fd %d, flag byte %#x, %u RESTOREs\n", fd, after, fake_kfd.restores);
	return fd >= 0 && after == byte && fake_kfd.restores == 1;
}

/* Under 4.3: the flag cleared, also for a file the plugin declines */
static bool retry_flag_cleared(const void *unused)
{
	unsigned char byte = STALE_RETRY_BYTE;
	int ret;

	(void)unused;
	if (!restore_kfd_file_leaves(0) || kfd_plugin_init(CR_PLUGIN_STAGE__RESTORE))
		return false;
	ret = restore_with_stale_flag(registered_restore_ext_file(), 12345, &byte);
	kfd_plugin_fini(CR_PLUGIN_STAGE__RESTORE, 0);
	if (ret != -ENOTSUP || byte)
		printf("# a foreign file: %d, flag byte %#x\n", ret, byte);
	return ret == -ENOTSUP && !byte;
}

/*
 * The retry flag: CRIU 4.3 reads it back whether the plugin wrote it or
 * not, earlier releases do not pass it. One build, against a header with
 * the flag or without, takes what the criu that loaded it passes.
 */
static void test_retry_flag(void)
{
	const char *header = HEADER_RETRY_FLAG ? "a header with the flag" : "a header without it";
	char name[300];

	fake_kfd_switch(true);
	play_dump();
	snprintf(name, sizeof(name),
		 "CRIU 4.3 (exports criu_plugin_get_options), plugin built against %s: RESTORE_EXT_FILE clears a retry flag left at %#x, one RESTORE; also of a file it declines",
		 header, STALE_RETRY_BYTE);
	ok(as_criu_4_3(retry_flag_cleared, NULL), name);
	if (CRIU_DEV)
		ok(criu_before_4_3() && restore_kfd_file_leaves(0),
		   "criu-dev, which exports nothing new, plugin built against its header: the flag is cleared, one RESTORE");
	else if (!HEADER_RETRY_FLAG)
		ok(criu_before_4_3() && restore_kfd_file_leaves(STALE_RETRY_BYTE),
		   "CRIU 3.17-4.2 (no criu_plugin_get_options), the same build: RESTORE_EXT_FILE takes the id alone, writes nothing past it");
	fake_kfd_switch(false);
}

/* The built plugin at @path, loaded as criu 4.3 loads it */
static bool loaded_plugin_clears_flag(const void *path)
{
	unsigned char byte = STALE_RETRY_BYTE;
	cr_plugin_desc_t *d;
	void *h;
	int ret;

	h = dlopen(path, RTLD_LAZY);
	d = h ? dlsym(h, "CR_PLUGIN_DESC") : NULL;
	if (!d || d->init(CR_PLUGIN_STAGE__RESTORE))
		return false;
	ret = restore_with_stale_flag(d->hooks[CR_PLUGIN_HOOK__RESTORE_EXT_FILE], 12345, &byte);
	d->exit(CR_PLUGIN_STAGE__RESTORE, 0);
	if (ret != -ENOTSUP || byte)
		printf("# a foreign file: %d, flag byte %#x\n", ret, byte);
	return ret == -ENOTSUP && !byte;
}

/*
 * The plugin that "make" built, against CRIU_INC's header, is what criu
 * loads: the same binary as under 3.17 (test_shared_object()).
 */
static void test_loaded_plugin_retry(const char *path)
{
	ok(as_criu_4_3(loaded_plugin_clears_flag, path),
	   "the built plugin, loaded by CRIU 4.3: RESTORE_EXT_FILE clears the retry flag");
}

/* A --plugin-option of kfd_criu's, as 4.3's criu hands it over */
static char *one_binary_options[] = { "criu-plugin", "--kfd_criu.leave_running=0", NULL };

/*
 * The built plugin at @path, loaded as criu @played loads it: its
 * verify_plugin() takes it, init finds the plugin options exactly under
 * 4.3, and RESTORE_EXT_FILE takes the arguments that release passes: the
 * retry flag's byte is cleared under 4.3 and left alone under 3.17, where
 * it is no argument.
 */
static bool loaded_plugin_follows(const void *path)
{
	const struct criu_release *r = &criu_releases[played == CRIU_4_3 ? 5 : 0];
	unsigned char byte = STALE_RETRY_BYTE, want = played == CRIU_4_3 ? 0 : STALE_RETRY_BYTE;
	void (*set)(int argc, char **argv);
	cr_plugin_desc_t *d;
	bool options;
	void *h;
	int ret;

	set = criu_4_3_exports ? dlsym(criu_4_3_exports, "harness_set_plugin_options") : NULL;
	if (set)
		set(ARRAY_SIZE(one_binary_options) - 1, one_binary_options);
	h = dlopen(path, RTLD_LAZY);
	d = h ? dlsym(h, "CR_PLUGIN_DESC") : NULL;
	if (!d || d->version > r->version || d->max_hooks > r->max_hooks) {
		printf("# CRIU %s's verify_plugin() refuses it\n", r->name);
		return false;
	}
	last_log[0] = '\0';
	if (d->init(CR_PLUGIN_STAGE__RESTORE))
		return false;
	options = logged("--plugin-option: leave_running=0") == (played == CRIU_4_3);
	ret = restore_with_stale_flag(d->hooks[CR_PLUGIN_HOOK__RESTORE_EXT_FILE], 12345, &byte);
	d->exit(CR_PLUGIN_STAGE__RESTORE, 0);
	if (ret != -ENOTSUP || byte != want || !options)
		printf("# a foreign file: %d, flag byte %#x; options %s\n", ret, byte,
		       options ? "as the release passes them" : "wrong");
	return ret == -ENOTSUP && byte == want && options;
}

/*
 * One binary, built the default way, under the oldest and the newest
 * release: the conventions it follows are decided when criu loads it.
 */
static void test_one_binary(const char *path)
{
	bool old, new;

	played = CRIU_3_17;
	old = as_criu(CRIU_3_17, loaded_plugin_follows, path);
	played = CRIU_4_3;
	new = as_criu(CRIU_4_3, loaded_plugin_follows, path);
	ok(old && new,
	   "one built plugin under CRIU 3.17 and CRIU 4.3: each loads it, RESTORE_EXT_FILE takes each one's arguments, options only from 4.3's --plugin-option");
}

/* DUMP_EXT_FILE of the fake root's renderD<@minor> as file @id */
static int dump_render_node(unsigned int id, int minor)
{
	char path[512];
	int fd, ret;

	snprintf(path, sizeof(path), "%s/dev/dri/renderD%d", fake_root, minor);
	fd = open(path, O_RDWR | O_CLOEXEC);
	ret = kfd_dump_file(fd, id);
	close(fd);
	return ret;
}

/* The gpu_id in dumped render node file @id's image, or its unused_gpu_id */
static uint32_t dumped_render_gpu(unsigned int id, bool unused)
{
	KfdCriuMeta *meta;
	uint32_t gpu = 0;

	if (kfd_criu_read_meta(id, &meta))
		return 0;
	if (!unused && meta->has_render_gpu_id)
		gpu = meta->render_gpu_id;
	else if (unused && meta->has_unused_gpu_id)
		gpu = meta->unused_gpu_id;
	kfd_criu_meta__free_unpacked(meta, NULL);
	return gpu;
}

/* The gpu_id of render minor @minor in /dev/kfd file @id's image; 0 if none */
static uint32_t dumped_minor_gpu(unsigned int id, unsigned int minor)
{
	KfdCriuMeta *meta;
	uint32_t gpu = 0;
	size_t i;

	if (kfd_criu_read_meta(id, &meta))
		return 0;
	for (i = 0; i < meta->n_render_nodes; i++)
		if (meta->render_nodes[i]->minor == minor)
			gpu = meta->render_nodes[i]->gpu_id;
	kfd_criu_meta__free_unpacked(meta, NULL);
	return gpu;
}

/* Dumps /dev/kfd as file @id after PROCESS_INFO pairs @seen_4660, @seen_17185 */
static int dump_kfd_paired(unsigned int id, uint32_t seen_4660, uint32_t seen_17185)
{
	int kfd = open(KFD_DEV_PATH, O_RDWR | O_CLOEXEC), ret;

	fake_pairing(seen_4660, seen_17185);
	kfd_plugin_init(CR_PLUGIN_STAGE__DUMP);
	ret = kfd_dump_file(kfd, id);
	close(kfd);
	return ret;
}

/* Which gpu_ids a dump writes: the process's, once its /dev/kfd file is in */
static void test_dump_gpu_ids(void)
{
	int kfd;

	fake_kfd_switch(true);
	fake_render_node(129);
	fake_render_node(130);
	fake_pairing(17185, 4660);
	kfd_plugin_init(CR_PLUGIN_STAGE__DUMP);
	ok(!dump_render_node(80, 129) && dumped_render_gpu(80, false) == 4660,
	   "a render node file dumped before any /dev/kfd file: the topology's gpu_id");
	ok(!dump_kfd_paired(81, 17185, 4660) && dumped_minor_gpu(81, 129) == 17185 &&
	   dumped_minor_gpu(81, 130) == 4660 &&
	   logged("sees GPU 0x1234 of this machine's topology as GPU 0x4321"),
	   "GPUs swapped by an earlier restore: the render minors go with the process's gpu_ids");
	ok(!dump_render_node(82, 129) && dumped_render_gpu(82, false) == 17185 &&
	   !dumped_render_gpu(82, true) && logged("0x4321, 0x1234 in this machine's topology"),
	   "... and so do render node files dumped after the /dev/kfd file");
	kfd_plugin_fini(CR_PLUGIN_STAGE__DUMP, 0);
	ok(!dump_kfd_paired(83, 4660, 0) && dumped_minor_gpu(83, 130) == 17185 &&
	   !dump_render_node(84, 130) && dumped_render_gpu(84, false) == 17185,
	   "a GPU the process does not use keeps its topology gpu_id");
	kfd_plugin_fini(CR_PLUGIN_STAGE__DUMP, 0);
	ok(!dump_kfd_paired(85, 0, 4660) && !dumped_minor_gpu(85, 129) &&
	   dumped_minor_gpu(85, 130) == 4660 && !dump_render_node(86, 129) &&
	   !dumped_render_gpu(86, false) && dumped_render_gpu(86, true) == 4660,
	   "... unless the process sees another GPU under it: no minor, the render file as unused");
	kfd_plugin_fini(CR_PLUGIN_STAGE__DUMP, 0);
	kfd_plugin_init(CR_PLUGIN_STAGE__DUMP);
	fake_kfd.nr_pairs = MAX_GPU_MAP + 1;
	kfd = open(KFD_DEV_PATH, O_RDWR | O_CLOEXEC);
	ok(kfd_dump_file(kfd, 87) == -ENOSPC && logged("file 87: the process uses 65 GPUs") &&
	   !fake_kfd.paused && !nr_dumped,
	   "a process with more GPUs than a restore takes: -ENOSPC, left running");
	close(kfd);
	kfd_plugin_fini(CR_PLUGIN_STAGE__DUMP, 1);
	fake_kfd_switch(false);
}

/*
 * CRIU 4.1 and later export these to plugins; criu-dev is played with
 * them, 3.17 without (the plugin's weak references stay NULL).
 */
#if HARNESS_INVENTORY
static char inventory[4][32];
/* Images of CRIU before 4.1 have no list: every name is "in" it */
static bool inventory_unlisted;

int add_inventory_plugin(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(inventory) && inventory[i][0]; i++)
		;
	if (i == ARRAY_SIZE(inventory))
		return -1;
	snprintf(inventory[i], sizeof(inventory[i]), "%s", name);
	return 0;
}

bool check_and_remove_inventory_plugin(const char *name, size_t n)
{
	unsigned int i;

	if (inventory_unlisted)
		return true;
	for (i = 0; i < ARRAY_SIZE(inventory); i++) {
		if (inventory[i][0] && !strncmp(inventory[i], name, n)) {
			inventory[i][0] = '\0';
			return true;
		}
	}
	return false;
}

static void test_inventory(void)
{
	fake_kfd_switch(true);
	memset(inventory, 0, sizeof(inventory));	/* what the tests before listed */
	ok(!play_dump() && !strcmp(inventory[0], "kfd_criu") && !inventory[1][0],
	   "CRIU 4.1 and later: a dump of a KFD process lists kfd_criu in the inventory, once");
	snprintf(inventory[1], sizeof(inventory[1]), "cuda_plugin");
	ok(!kfd_plugin_init(CR_PLUGIN_STAGE__RESTORE) && !inventory[0][0] &&
	   !strcmp(inventory[1], "cuda_plugin"),
	   "CRIU 4.1 and later: the restore takes kfd_criu off the inventory's list, as CRIU requires, and only kfd_criu");
	kfd_plugin_fini(CR_PLUGIN_STAGE__RESTORE, 0);
	memset(inventory, 0, sizeof(inventory));
	snprintf(inventory[0], sizeof(inventory[0]), "amdgpu_plugin");
	ok(kfd_plugin_init(CR_PLUGIN_STAGE__RESTORE) == -EINVAL &&
	   logged("dumped by CRIU's amdgpu plugin") && logged("libdir"),
	   "CRIU 4.1 and later: images that CRIU's amdgpu plugin dumped (its name in the inventory): init fails with one line");
	kfd_plugin_fini(CR_PLUGIN_STAGE__RESTORE, 0);
	memset(inventory, 0, sizeof(inventory));
	snprintf(inventory[0], sizeof(inventory[0]), "kfd_criu_old");
	snprintf(inventory[1], sizeof(inventory[1]), "amdgpu_plugin_next");
	ok(!kfd_plugin_init(CR_PLUGIN_STAGE__RESTORE) && !strcmp(inventory[0], "kfd_criu_old") &&
	   !strcmp(inventory[1], "amdgpu_plugin_next"),
	   "CRIU 4.1 and later: plugins whose names begin with kfd_criu or amdgpu_plugin are others: left listed, not refused");
	kfd_plugin_fini(CR_PLUGIN_STAGE__RESTORE, 0);
	memset(inventory, 0, sizeof(inventory));
	inventory_unlisted = true;
	ok(!kfd_plugin_init(CR_PLUGIN_STAGE__RESTORE),
	   "CRIU 4.1 and later: images of CRIU before 4.1, whose inventory has no list: the restore goes on");
	kfd_plugin_fini(CR_PLUGIN_STAGE__RESTORE, 0);
	inventory_unlisted = false;
	fake_kfd_switch(false);
}
#else
static void test_inventory(void)
{
	fake_kfd_switch(true);
	ok(!play_dump() && !add_inventory_plugin && !check_and_remove_inventory_plugin,
	   "CRIU 3.17 has no plugin inventory: the dump works without");
	ok(!kfd_plugin_init(CR_PLUGIN_STAGE__RESTORE),
	   "... and so does the restore");
	kfd_plugin_fini(CR_PLUGIN_STAGE__RESTORE, 0);
	fake_kfd_switch(false);
}
#endif

/*
 * The restore of the dumped /dev/kfd file (60) through a RESTORE that needs
 * an offset map of @room entries and then fails with @error (or not): the
 * fd or -errno.
 */
static int restore_kfd_with(unsigned int room, int error)
{
	int kfd;

	fake_kfd.room = room;
	fake_kfd.restore_error = error;
	fake_kfd.attempts = 0;
	fake_kfd.restores = 0;
	kfd_plugin_init(CR_PLUGIN_STAGE__RESTORE);
	set_criu_convention(CRIU_3_19);
	kfd = play_restore_file(60);
	if (kfd >= 0)
		close(kfd);
	kfd_plugin_fini(CR_PLUGIN_STAGE__RESTORE, kfd < 0);
	forget_gpus();
	return kfd;
}

/*
 * A second RESTORE creates every buffer and copies its contents again: the
 * plugin asks for it only when the offset map was short (-E2BIG).
 */
static void test_restore_retry(void)
{
	int ret;

	fake_kfd_switch(true);
	fake_render_node(129);
	fake_render_node(130);
	play_dump();
	ret = restore_kfd_with(100, 0);
	ok(ret >= 0 && fake_kfd.attempts == 2 && fake_kfd.restores == 1,
	   "an offset map too short (-E2BIG, 100 entries needed): one more RESTORE, with that room");
	if (fake_kfd.attempts != 2)
		printf("# %d, %u RESTOREs\n", ret, fake_kfd.attempts);
	ret = restore_kfd_with(0, -ENOSPC);
	ok(ret == -ENOSPC && fake_kfd.attempts == 1 &&
	   logged("a GPU has no queue slot or VMID left"),
	   "a GPU out of queue slots (-ENOSPC): no second RESTORE, the restore fails naming why");
	if (fake_kfd.attempts != 1)
		printf("# %d, %u RESTOREs\n", ret, fake_kfd.attempts);
	ret = restore_kfd_with(100, -ENOSPC);
	ok(ret == -ENOSPC && fake_kfd.attempts == 2,
	   "... also after a short offset map: two RESTOREs, not three");
	fake_kfd_switch(false);
}

/* The restore of a process that used GPU 4660 with GPU 17185 hidden */
static void test_hidden_gpu(void)
{
	struct play_vma v[] = { RENDER_VMA(129, 0x1000, 0x9000, 0), LIB_VMA };
	int kfd, render, i, hidden = 0;

	fake_kfd_switch(true);
	fake_kfd.moved[0] = (struct kfd_criu_offset_map)MOVED(0x1000, 0x9000, 4660);
	fake_kfd.nr_moved = 1;
	play_dump();
	hidden_node = 2;
	kfd_plugin_init(CR_PLUGIN_STAGE__RESTORE);
	set_criu_convention(CRIU_3_19);
	render = play_restore_file(61);
	kfd = play_restore_file(60);
	for (i = 0; i < (int)fake_kfd.nr_gpus; i++)
		hidden += fake_kfd.gpus[i].local_gpu_id == 17185;
	ok(render >= 0 && kfd >= 0 && logged("node 2: Operation not permitted") &&
	   fake_kfd.nr_gpus && !hidden && gpu_map[0].local_gpu_id == 4660,
	   "a GPU hidden by the device cgroup (EPERM) is skipped; RESTORE gets the others");
	ok(!play_open_vmas(CRIU_3_19, v, ARRAY_SIZE(v)) && !play_restorer(v, ARRAY_SIZE(v)) &&
	   kfd_resume_devices_late(4242) == 0,
	   "... and the process's mappings land on the visible GPU");
	ok(play_restore_file(62) == -ENODEV && logged("file 62: no render node for GPU 0x4321"),
	   "a render file of the hidden GPU: -ENODEV, naming the file");
	close(render);
	close(kfd);
	kfd_plugin_fini(CR_PLUGIN_STAGE__RESTORE, 0);
	hidden_node = -1;
	forget_gpus();
	fake_kfd_switch(false);
}

/*
 * A render node mapping of a GPU that has no render file here (a device
 * cgroup hides it now), as CRIU @c restores it: refused, and the restore
 * fails at that mapping's mmap, whatever file CRIU maps it through.
 */
static void test_mapping_of_hidden_gpu(enum criu_convention c)
{
	struct play_vma v[] = {
		RENDER_VMA(129, 0x1000, 0x9000, 0), RENDER_VMA(130, 0x8000, 0x8000, -1), LIB_VMA,
	};
	int kfd, render, ret;
	char name[300];

	fake_kfd_switch(true);
	fake_render_node(129);
	fake_render_node(130);
	fake_kfd.moved[0] = (struct kfd_criu_offset_map)MOVED(0x1000, 0x9000, 4660);
	fake_kfd.nr_moved = 1;
	play_dump();
	hidden_node = 2;
	kfd_plugin_init(CR_PLUGIN_STAGE__RESTORE);
	set_criu_convention(c);
	render = play_restore_file(61);
	kfd = play_restore_file(60);
	ret = render < 0 || kfd < 0 ? -EIO : play_open_vmas(c, v, ARRAY_SIZE(v));
	ret = ret ?: play_restorer(v, ARRAY_SIZE(v));
	snprintf(name, sizeof(name),
		 "%s: a render node mapping of a GPU without a render file here (ENODEV): refused, the restore fails at its mmap",
		 convention_name[c]);
	ok(ret == -EINVAL && logged("no render file of its GPU"), name);
	if (ret != -EINVAL)
		printf("# returned %d\n", ret);
	close(render);
	close(kfd);
	kfd_plugin_fini(CR_PLUGIN_STAGE__RESTORE, ret);
	hidden_node = -1;
	forget_gpus();
	fake_kfd_switch(false);
}

/* /proc/@pid/status of the fake root, of a task whose own pid is @vpid */
static void fake_status(int pid, int vpid)
{
	char path[300];
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/%d", fake_root, pid);
	make_dirs(path);
	strcat(path, "/status");
	f = fopen(path, "w");
	if (!f || fprintf(f, "Name:\tfake\nPid:\t%d\nNSpid:\t%d\t%d\nPPid:\t1\n",
			  pid, pid, vpid) < 0)
		printf("# cannot make %s\n", path);
	if (f)
		fclose(f);
}

/*
 * A restore of two tasks in a PID namespace, only one of which restored
 * KFD state: criu's RESUME_DEVICES_LATE opens /dev/kfd for that one only.
 */
static void test_resume_per_task(void)
{
	unsigned int probes;
	char cmd[300];
	int kfd;

	fake_kfd_switch(true);
	play_dump();
	kfd_plugin_init(CR_PLUGIN_STAGE__RESTORE);
	kfd = play_restore_file(60);
	fake_status(5001, getpid());
	fake_status(5002, 2);
	probes = fake_kfd.probes;
	ok(kfd >= 0 && kfd_resume_devices_late(5002) == -ENOTSUP &&
	   fake_kfd.probes == probes && !fake_kfd.resumes,
	   "RESUME_DEVICES_LATE of a restored task without KFD state: /dev/kfd not opened");
	ok(!kfd_resume_devices_late(5001) && fake_kfd.resumes == 1,
	   "... of the task that restored KFD state, known by its NSpid: RESUME");
	ok(!kfd_resume_devices_late(4242) && fake_kfd.resumes == 2,
	   "... of a task whose NSpid cannot be read: KFD's RESUME decides");
	ok(restored->max == (sysconf(_SC_PAGESIZE) - sizeof(*restored)) / sizeof(pid_t),
	   "the list of restored tasks fills a page of this machine");
	restored->nr = restored->max + 1;
	ok(!kfd_resume_devices_late(5002) && fake_kfd.resumes == 3,
	   "... past it, a task without KFD state may be one: KFD's RESUME decides");
	close(kfd);
	kfd_plugin_fini(CR_PLUGIN_STAGE__RESTORE, 0);
	forget_gpus();
	snprintf(cmd, sizeof(cmd), "rm -rf %s/proc", fake_root);
	if (system(cmd))
		printf("# cannot remove the fake /proc\n");
	fake_kfd_switch(false);
}

/* What is claimed at dump, and what is refused */
static void test_claims(void)
{
	struct stat st = { .st_mode = S_IFCHR };
	int fd;

	fake_kfd_switch(true);
	kfd_plugin_init(CR_PLUGIN_STAGE__DUMP);
	st.st_rdev = makedev(DRM_MAJOR, 129);
	ok(!kfd_handle_device_vma(-1, &st), "HANDLE_DEVICE_VMA of a KFD GPU's render node: ours");
	st.st_rdev = makedev(DRM_MAJOR, 131);
	ok(kfd_handle_device_vma(-1, &st) == -ENOTSUP,
	   "HANDLE_DEVICE_VMA of another GPU's render node: -ENOTSUP, CRIU refuses it");
	ok(!stat(KFD_DEV_PATH, &st) && !kfd_handle_device_vma(-1, &st),
	   "HANDLE_DEVICE_VMA of /dev/kfd with image mode: ours");
	kfd_plugin_init(CR_PLUGIN_STAGE__PRE_DUMP);
	ok(kfd_handle_device_vma(-1, &st) == -EINVAL && logged("cannot pre-dump"),
	   "pre-dump of a KFD mapping is refused, saying why");
	kfd_plugin_init(CR_PLUGIN_STAGE__DUMP);
	streamer_start(true);
	fd = open(KFD_DEV_PATH, O_RDWR | O_CLOEXEC);
	ok(kfd_dump_file(fd, 70) == -EINVAL && logged("file 70: criu --stream is not supported") &&
	   !fake_kfd.paused, "criu --stream: the dump is refused before pausing");
	close(fd);
	streamer_stop(false);
	fake_kfd_switch(true);
	fake_kfd.old_kernel = true;
	fd = open(KFD_DEV_PATH, O_RDWR | O_CLOEXEC);
	ok(kfd_dump_file(fd, 71) == -ENOTSUP && logged("no KFD CRIU image mode") &&
	   !logged("Error"), "a kernel that refuses the probe: not ours, one info line");
	close(fd);
	fake_kfd_switch(true);
	fake_kfd.denied = true;
	make_images(72, 100);
	ok(kfd_restore_file(72) == -EACCES &&
	   logged("file 72: cannot use " KFD_DEV_PATH ": Permission denied"),
	   "a restore without the CRIU ioctl's capability says so, not \"no image mode\"");
	fake_kfd_switch(false);
}

/* RESUME only after a restore of KFD state, and where the render fds go */
static void test_restore_side(void)
{
	int base = criu_get_image_dir() + IMG_FD_BELOW_BASE;

	fake_kfd_switch(true);
	kfd_plugin_init(CR_PLUGIN_STAGE__RESTORE);
	ok(kfd_resume_devices_late(4242) == -ENOTSUP && !fake_kfd.probes,
	   "RESUME_DEVICES_LATE of a restore without KFD state does not open /dev/kfd");
	kfd_plugin_fini(CR_PLUGIN_STAGE__RESTORE, 0);
	forget_gpus();
	ok(!restore_gpus() && gpu_map[0].drm_fd >= base && gpu_map[0].drm_fd < base + 8 &&
	   gpu_map[1].drm_fd > gpu_map[0].drm_fd,
	   "the render files sit just above CRIU's service fds, not half way up RLIMIT_NOFILE");
	forget_gpus();
	fake_kfd_switch(false);
}

/* CRIU's amdgpu plugin beside this one, or loaded before it */
static void test_stock_plugin(const char *standin)
{
	char path[PATH_MAX], dir[PATH_MAX];
	void *h;

	snprintf(dir, sizeof(dir), "%s", program_invocation_name);
	snprintf(path, sizeof(path), "%s/" STOCK_PLUGIN, dirname(dir));
	close(open(path, O_CREAT | O_RDWR, 0600));
	ok(kfd_plugin_init(CR_PLUGIN_STAGE__DUMP) == -EEXIST &&
	   logged("amdgpu plugin") && logged(path) && logged("libdir"),
	   "CRIU's amdgpu_plugin.so beside this plugin: init fails with one line");
	unlink(path);
	ok(!kfd_plugin_init(CR_PLUGIN_STAGE__DUMP), "... and works without it");
	if (!standin)
		return;
	h = dlopen(standin, RTLD_NOW);
	ok(h && kfd_plugin_init(CR_PLUGIN_STAGE__RESTORE) == -EEXIST && logged(standin),
	   "CRIU's amdgpu_plugin.so loaded before this plugin: init fails");
	if (h)
		dlclose(h);
}

/* Writes @len bytes of @head and zeros to fake file @path, with @mode */
static void fake_shm_file(const char *path, const char *head, off_t len, mode_t mode)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || pwrite(fd, head, strlen(head), 0) < 0 || ftruncate(fd, len) ||
	    fchmod(fd, mode))
		printf("# cannot make %s\n", path);
	if (fd >= 0)
		close(fd);
}

/* Whether fake file @path has @len bytes starting with @head, and @mode */
static bool shm_file_is(const char *path, const char *head, off_t len, mode_t mode)
{
	char buf[SHM_HEAD_MAX] = "";
	struct stat st;
	int fd = open(path, O_RDONLY);
	bool same = fd >= 0 && !fstat(fd, &st) && st.st_size == len &&
		    (st.st_mode & 07777) == mode &&
		    pread(fd, buf, strlen(head), 0) == (ssize_t)strlen(head) &&
		    !memcmp(buf, head, strlen(head));

	if (fd >= 0)
		close(fd);
	return same;
}

/* The thunk's /dev/shm files: noted at dump, re-created on a fresh host */
static void test_thunk_shm(void)
{
	char dumped[256], here[256], mem[600], sem[600];
	int kfd;

	snprintf(dumped, sizeof(dumped), "%s/proc/4242/root/dev/shm", fake_root);
	snprintf(here, sizeof(here), "%s/dev/shm", fake_root);
	make_dirs(dumped);
	make_dirs(here);
	snprintf(mem, sizeof(mem), "%s/hsakmt_shared_mem", dumped);
	fake_shm_file(mem, "MAGIC", 4096, 0666);
	snprintf(sem, sizeof(sem), "%s/sem.hsakmt_semaphore", dumped);
	fake_shm_file(sem, "\1", 32, 0640);
	fake_kfd_switch(true);
	play_dump();
	snprintf(mem, sizeof(mem), "%s/hsakmt_shared_mem", here);
	snprintf(sem, sizeof(sem), "%s/sem.hsakmt_semaphore", here);
	unlink(mem);
	unlink(sem);
	kfd_plugin_init(CR_PLUGIN_STAGE__RESTORE);
	kfd = play_restore_file(60);
	ok(kfd >= 0 && shm_file_is(mem, "MAGIC", 4096, 0666) &&
	   shm_file_is(sem, "\1", 32, 0640) && logged("hsakmt_shared_mem was missing"),
	   "restore into an empty /dev/shm re-creates the thunk's files as dumped");
	close(kfd);
	kfd_plugin_fini(CR_PLUGIN_STAGE__RESTORE, 0);
	forget_gpus();
	fake_shm_file(mem, "OTHER", 100, 0600);
	kfd_plugin_init(CR_PLUGIN_STAGE__RESTORE);
	fake_kfd.restores = 0;
	kfd = play_restore_file(60);
	ok(kfd >= 0 && shm_file_is(mem, "OTHER", 100, 0600) && !logged("hsakmt_shared_mem was"),
	   "a thunk file that the restoring host has is left alone");
	close(kfd);
	kfd_plugin_fini(CR_PLUGIN_STAGE__RESTORE, 0);
	forget_gpus();
	snprintf(mem, sizeof(mem), "rm -rf %s/proc %s", fake_root, here);
	if (system(mem))
		printf("# cannot remove the fake /dev/shm\n");
	fake_kfd_switch(false);
}
