// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: host tests of the stateless DRM reattach (drm_reattach.c)
 *
 * Included by kfd_criu_plugin_test.c after criu_play.c, whose fakes it
 * uses: render and card nodes are regular files of the fake root that
 * name their driver, a fake sysfs places them on a PCI or platform bus,
 * and a file named dmabuf is a dma-buf. The fake topology's KFD GPUs have
 * renderD129 and renderD130; vgem is renderD128, and PCI GPUs of no KFD
 * (i915) come and go on renderD131 to renderD133.
 *
 * Covered: which files and mappings a dump takes and refuses (the option
 * off, card nodes, dma-bufs, a topology that hides a GPU), what the images
 * hold, where a restore reopens a render node (the dumped minor, another
 * minor of the same device or driver, none), the zero-filled memory that
 * mappings get under each CRIU convention, and a process with KFD state
 * and vgem played through a dump and restore, whose KFD side is unchanged.
 */

#define VGEM_MINOR	128
#define I915_MINOR	131
#define I915_SLOT	"0000:00:02.0"
#define DRM_VMA(off)	{ "/dev/dri/renderD128", VGEM_MINOR, off, off, -1, -1, false }

/* Fake DRM node /dev/dri/@name of driver @driver */
static void fake_drm_node(const char *name, const char *driver)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/dev/dri", fake_root);
	make_dirs(path);
	snprintf(path, sizeof(path), "%s/dev/dri/%s", fake_root, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, driver, strlen(driver)) < 0)
		printf("# cannot make %s\n", path);
	if (fd >= 0)
		close(fd);
}

static void remove_drm_node(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/dev/dri/%s", fake_root, name);
	unlink(path);
}

/* Sysfs of render minor @minor: device @dev on bus @bus ("pci", "platform") */
static void fake_sysfs_device(unsigned int minor, const char *bus, const char *dev)
{
	char dir[512], bus_dir[512], link[600];

	snprintf(dir, sizeof(dir), "%s/sys/devices/%s/%s", fake_root, bus, dev);
	snprintf(bus_dir, sizeof(bus_dir), "%s/sys/bus/%s", fake_root, bus);
	make_dirs(dir);
	make_dirs(bus_dir);
	snprintf(link, sizeof(link), "%s/subsystem", dir);
	unlink(link);
	if (symlink(bus_dir, link))
		printf("# cannot link %s\n", link);
	snprintf(link, sizeof(link), "%s/sys/dev/char/%u:%u", fake_root, DRM_MAJOR, minor);
	make_dirs(link);
	strcat(link, "/device");
	unlink(link);
	if (symlink(dir, link))
		printf("# cannot link %s\n", link);
}

/* Opens fake node /dev/dri/@name, or fake file @name of the root */
static int open_fake(const char *name, int flags)
{
	char path[512];

	snprintf(path, sizeof(path), "%s%s%s", fake_root, name[0] == '/' ? "" : "/dev/dri/",
		 name);
	return open(path, flags | O_CLOEXEC);
}

/* DUMP_EXT_FILE of fake node @name as file @id, opened with @flags */
static int dump_drm_node(const char *name, unsigned int id, int flags)
{
	int fd = open_fake(name, flags), ret;

	ret = run_dump_ext_file(fd, id);
	close(fd);
	return ret;
}

/* HANDLE_DEVICE_VMA of a mapping of DRM minor @minor */
static int handle_drm_vma(unsigned int minor)
{
	struct stat st = { .st_mode = S_IFCHR | 0666, .st_rdev = makedev(DRM_MAJOR, minor) };

	return run_handle_device_vma(-1, &st);
}

/* The render minors kfdcriu-drm.img lists, as a restore reads them; -1: none */
static int image_mapped_minors(uint32_t minors[NR_RENDER_MINORS])
{
	int n;

	kfd_drm_fini();
	n = read_mapped_minors() ? -1 : nr_mapped_minors;
	memcpy(minors, mapped_minors, sizeof(mapped_minors));
	kfd_drm_fini();
	return n;
}

/* The DRM node of dumped file @id's image: its driver, minor, slot and flags */
static bool dumped_drm_node(unsigned int id, const char *driver, unsigned int minor,
			    const char *slot, uint32_t flags)
{
	KfdCriuMeta *meta;
	bool same;

	if (kfd_criu_read_meta(id, &meta))
		return false;
	same = meta->drm_node && !strcmp(meta->drm_node->driver, driver) &&
	       meta->drm_node->minor == minor && meta->has_open_flags &&
	       (meta->open_flags & flags) == flags && !meta->has_render_gpu_id &&
	       !meta->has_unused_gpu_id && !meta->has_alias_of &&
	       !strcmp(meta->drm_node->pci_slot ?: "", slot ?: "");
	kfd_criu_meta__free_unpacked(meta, NULL);
	return same;
}

/* The fake nodes of these tests, and the option as @option says */
static void drm_setup(const char *option)
{
	fake_drm_node("renderD128", "vgem");
	fake_drm_node("card0", "vgem");
	fake_drm_node("renderD131", "i915");
	fake_sysfs_device(VGEM_MINOR, "platform", "vgem");
	fake_sysfs_device(I915_MINOR, "pci", I915_SLOT);
	fake_render_node(129);
	fake_render_node(130);
	if (option)
		setenv(REATTACH_ENV, option, 1);
	else
		unsetenv(REATTACH_ENV);
	memset(&fake_drm, 0, sizeof(fake_drm));
}

/* Without the option: refused, naming it; with it, what the images hold */
static void test_drm_dump_option(void)
{
	uint32_t minors[NR_RENDER_MINORS];

	drm_setup(NULL);
	criu_plugins_init(CR_PLUGIN_STAGE__DUMP);
	ok(dump_drm_node("renderD128", 100, O_RDWR) == -ENOTSUP &&
	   logged("file 100: renderD128 (vgem) is no KFD GPU's render node: not dumped; DRM_REATTACH_ENABLE=1") &&
	   kfd_criu_read_meta(100, &(KfdCriuMeta *){ NULL }) == -ENOENT,
	   "DRM reattach off: a render node of no KFD GPU is refused, the line names DRM_REATTACH_ENABLE=1");
	ok(handle_drm_vma(VGEM_MINOR) == -ENOTSUP && logged("DRM_REATTACH_ENABLE=1") &&
	   image_mapped_minors(minors) == 0,
	   "... and so is its mapping, naming the option, and no mapping is listed");
	criu_plugins_fini(CR_PLUGIN_STAGE__DUMP, 1);

	drm_setup("1");
	criu_plugins_init(CR_PLUGIN_STAGE__DUMP);
	ok(!dump_drm_node("renderD128", 101, O_RDWR | O_APPEND) &&
	   dumped_drm_node(101, "vgem", VGEM_MINOR, NULL, O_RDWR | O_APPEND) &&
	   logged("file 101: renderD128 (vgem): dumped for a reattach") &&
	   fake_drm.versions && !fake_drm.others && !fake_kfd.probes,
	   "DRM reattach on: a vgem render node's driver, minor and flags are dumped; no other ioctl, no KFD");
	ok(!dump_drm_node("renderD131", 102, O_RDWR) &&
	   dumped_drm_node(102, "i915", I915_MINOR, I915_SLOT, O_RDWR) &&
	   logged("(i915 at " I915_SLOT ")"),
	   "... a PCI GPU's render node also its PCI address");
	ok(!handle_drm_vma(VGEM_MINOR) && !handle_drm_vma(VGEM_MINOR) &&
	   !handle_drm_vma(I915_MINOR) && image_mapped_minors(minors) == 2 &&
	   minors[0] == VGEM_MINOR && minors[1] == I915_MINOR,
	   "... its mappings are taken: kfdcriu-drm.img lists each render node once");
	criu_plugins_fini(CR_PLUGIN_STAGE__DUMP, 0);
	write_image(MAPPINGS_IMAGE, 10, 1);
	criu_plugins_init(CR_PLUGIN_STAGE__DUMP);
	ok(faccessat(image_dir_fd, MAPPINGS_IMAGE, F_OK, 0) && errno == ENOENT,
	   "a dump removes an older dump's kfdcriu-drm.img from the images directory");
	criu_plugins_fini(CR_PLUGIN_STAGE__DUMP, 0);
	unsetenv(REATTACH_ENV);
}

/* KFD GPUs' render nodes are never reattached, whatever the option */
static void test_drm_kfd_unaffected(void)
{
	uint32_t minors[NR_RENDER_MINORS];

	drm_setup("1");
	fake_kfd_switch(true);
	criu_plugins_init(CR_PLUGIN_STAGE__DUMP);
	ok(!dump_render_node(103, 129) && dumped_render_gpu(103, false) == 4660 &&
	   !dumped_drm_node(103, "", 129, NULL, 0) && !handle_drm_vma(129) &&
	   image_mapped_minors(minors) <= 0 && fake_kfd.probes,
	   "DRM reattach on: a KFD GPU's render node and mapping take the KFD way, as without it");
	criu_plugins_fini(CR_PLUGIN_STAGE__DUMP, 0);
	hidden_node = 2;
	fake_kfd_switch(false);
	criu_plugins_init(CR_PLUGIN_STAGE__DUMP);
	ok(dump_drm_node("renderD128", 104, O_RDWR) == -ENOTSUP &&
	   kfd_criu_read_meta(104, &(KfdCriuMeta *){ NULL }) == -ENOENT && handle_drm_vma(VGEM_MINOR) ==
	   -ENOTSUP && logged("a GPU hidden from this task"),
	   "a topology that hides a GPU from criu: no render node is reattached, it may be that GPU's");
	criu_plugins_fini(CR_PLUGIN_STAGE__DUMP, 0);
	hidden_node = -1;
	unsetenv(REATTACH_ENV);
}

/* Card nodes, dma-bufs and other files stay refused */
static void test_drm_refusals(void)
{
	int fds[2], ret;
	bool told;

	drm_setup("1");
	criu_plugins_init(CR_PLUGIN_STAGE__DUMP);
	ok(dump_drm_node("card0", 105, O_RDWR) == -ENOTSUP &&
	   logged("file 105: /dev/dri/card0 is a DRM card (display) node: never dumped") &&
	   kfd_criu_read_meta(105, &(KfdCriuMeta *){ NULL }) == -ENOENT,
	   "DRM reattach on: a card node is refused, named");
	ok(handle_drm_vma(0) == -ENOTSUP && logged("a mapping of /dev/dri/card0, a DRM card"),
	   "... and so is a mapping of it");
	fake_drm_node("../../dmabuf", "");
	ok(dump_drm_node("/dmabuf", 106, O_RDWR) == -ENOTSUP && logged("file 106: a dma-buf: never dumped"),
	   "... a dma-buf is refused, named");
	ret = pipe(fds) ? -errno : run_dump_ext_file(fds[0], 107);
	ok(ret == -ENOTSUP && !last_log[0], "... and other files are quietly not the plugin's");
	if (!ret || ret == -ENOTSUP) {
		close(fds[0]);
		close(fds[1]);
	}
	setenv(REATTACH_ENV, "yes", 1);
	ret = dump_drm_node("renderD128", 108, O_RDWR);
	told = logged("DRM_REATTACH_ENABLE=\"yes\": neither 0 nor 1, taken as 0");
	last_log[0] = '\0';
	ok(ret == -ENOTSUP && told && dump_drm_node("renderD128", 109, O_RDWR) == -ENOTSUP &&
	   !logged("neither") && logged("file 109: renderD128 (vgem) is no KFD GPU's"),
	   "a value other than 0 or 1 leaves the option off, said once");
	setenv(REATTACH_ENV, "1", 1);
	streamer_start(true);
	ok(dump_drm_node("renderD128", 110, O_RDWR) == -EINVAL &&
	   logged("file 110: criu --stream is not supported") && handle_drm_vma(VGEM_MINOR) == -EINVAL,
	   "criu --stream: the render node file and its mappings are refused");
	streamer_stop(false);
	criu_plugins_fini(CR_PLUGIN_STAGE__DUMP, 1);
	unsetenv(REATTACH_ENV);
}

/* Writes the image of a render node file dumped for a reattach */
static void make_drm_image(unsigned int id, const char *driver, unsigned int minor,
			   const char *slot, uint32_t flags)
{
	KfdCriuDrmNode node = KFD_CRIU_DRM_NODE__INIT;
	KfdCriuMeta meta = KFD_CRIU_META__INIT;

	node.driver = (char *)driver;
	node.minor = minor;
	node.pci_slot = (char *)slot;
	meta.file_id = id;
	meta.drm_node = &node;
	meta.has_open_flags = true;
	meta.open_flags = flags;
	kfd_criu_write_meta(id, &meta);
}

/* Whether @fd is an open of fake node /dev/dri/@name, and closes it */
static bool is_node(int fd, const char *name)
{
	char path[512], want[512];
	const char *fake = fd < 0 ? NULL : fake_path(fd, path);

	snprintf(want, sizeof(want), "/dev/dri/%s", name);
	if (fd >= 0)
		close(fd);
	return fake && !strcmp(fake, want);
}

/* RESTORE_EXT_FILE of a reattached file: which render node it reopens */
static void test_drm_restore_file(void)
{
	int fd;

	drm_setup(NULL);
	fake_kfd_switch(true);
	criu_plugins_init(CR_PLUGIN_STAGE__RESTORE);
	make_drm_image(111, "vgem", VGEM_MINOR, NULL, O_RDWR | O_APPEND | O_NONBLOCK);
	fd = run_restore_file(111);
	ok(fd >= 0 && (fcntl(fd, F_GETFL) & (O_APPEND | O_NONBLOCK)) == (O_APPEND | O_NONBLOCK) &&
	   fcntl(fd, F_GETFD) == FD_CLOEXEC && is_node(fd, "renderD128") &&
	   logged("file 111: renderD128 (vgem) reattached as a fresh DRM file") &&
	   !fake_kfd.probes && !fake_drm.others,
	   "restore: a new open of the dumped render node with its flags, without the option or KFD");
	remove_drm_node("renderD128");
	fake_drm_node("renderD133", "vgem");
	fake_sysfs_device(133, "platform", "vgem");
	fd = run_restore_file(111);
	ok(is_node(fd, "renderD133") && logged("renderD128 (vgem) of the dump is renderD133 here"),
	   "restore where the driver's render node has another minor: that one, said");
	fake_drm_node("renderD132", "i915");
	fake_sysfs_device(132, "pci", "0000:03:00.0");
	make_drm_image(112, "i915", I915_MINOR, "0000:03:00.0", O_RDWR);
	ok(is_node(run_restore_file(112), "renderD132"),
	   "restore of a PCI GPU: the render node of the dumped PCI device, whatever its minor");
	make_drm_image(113, "i915", 140, "0000:09:00.0", O_RDWR);
	ok(is_node(run_restore_file(113), "renderD131"),
	   "... and without that device, the first render node of the same driver");
	make_drm_image(114, "xe", I915_MINOR, I915_SLOT, O_RDWR);
	ok(run_restore_file(114) == -ENODEV &&
	   logged("file 114: no render node of DRM driver xe on this machine (dumped: renderD131 at " I915_SLOT ")"),
	   "no render node of the dumped driver: -ENODEV, naming driver and node");
	make_drm_image(115, "vgem", 7, NULL, O_RDWR);
	ok(run_restore_file(115) == -EBADMSG && logged("file 115: bad metadata"),
	   "metadata with a minor of no render node: -EBADMSG");
	criu_plugins_fini(CR_PLUGIN_STAGE__RESTORE, 0);
	remove_drm_node("renderD132");
	remove_drm_node("renderD133");
	fake_kfd_switch(false);
}

/* Lists the mappings of vgem, and of i915 if @i915, as a dump takes them */
static void take_drm_mappings(bool i915)
{
	setenv(REATTACH_ENV, "1", 1);
	criu_plugins_init(CR_PLUGIN_STAGE__DUMP);
	handle_drm_vma(VGEM_MINOR);
	if (i915)
		handle_drm_vma(I915_MINOR);
	criu_plugins_fini(CR_PLUGIN_STAGE__DUMP, 0);
	unsetenv(REATTACH_ENV);
}

/* Closes what UPDATE_VMA_MAP gave CRIU @c: its own under 3.19 and later */
static void close_vma_fds(enum criu_convention c, int a, int b)
{
	if (c == CRIU_3_17)
		return;
	if (a >= 0)
		close(a);
	if (b >= 0 && b != a)
		close(b);
}

/* Whether @len bytes of @fd at @pgoff read as zeros, and then take a write */
static bool maps_zeros(int fd, uint64_t pgoff, size_t len)
{
	unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, pgoff);
	bool zeros = p != MAP_FAILED;
	size_t i;

	for (i = 0; zeros && i < len; i++)
		zeros = !p[i];
	if (p != MAP_FAILED) {
		p[len - 1] = 0x5a;
		munmap(p, len);
	}
	return zeros;
}

/* Whether @fd is a memfd of render minor @minor's zero-filled memory */
static bool is_zero_fill(int fd, unsigned int minor)
{
	char link[64], path[128], want[64];
	ssize_t len;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, path, sizeof(path) - 1);
	path[len < 0 ? 0 : len] = '\0';
	snprintf(want, sizeof(want), "/memfd:" ZERO_FILL_NAME "%u (deleted)", minor);
	return !strcmp(path, want);
}

/* Whether @a and @b are fds of one memfd */
static bool same_inode(int a, int b)
{
	struct stat sa, sb;

	return !fstat(a, &sa) && !fstat(b, &sb) && sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev;
}

/* UPDATE_VMA_MAP of taken mappings, as CRIU @c calls it */
static void test_drm_vmas(enum criu_convention c)
{
	const uint64_t off = 0x100000000ULL;	/* DRM's first mmap offset */
	uint64_t pgoff = off;
	int a = -1, b = -1, d = -1;
	char name[200];

	drm_setup(NULL);
	take_drm_mappings(false);
	criu_plugins_init(CR_PLUGIN_STAGE__RESTORE);
	set_criu_convention(c);
	snprintf(name, sizeof(name), "%s: a taken mapping gets zero-filled memory of renderD128 at its old offset, above CRIU's service fds",
		 convention_name[c]);
	ok(run_update_vma_map("/dev/dri/renderD128", 0x7f0000000000, off, &pgoff, &a) == 1 &&
	   pgoff == off && is_zero_fill(a, VGEM_MINOR) && maps_zeros(a, off, 8192) &&
	   a >= kfd_criu_fd_base(), name);
	pgoff = off + 0x10000;
	run_update_vma_map("/dev/dri/renderD128", 0x7f0000100000, pgoff, &pgoff, &b);
	snprintf(name, sizeof(name), "%s: another mapping of it: the same memfd, %s", convention_name[c],
		 c == CRIU_3_17 ? "the same fd" : "a new fd for CRIU to close");
	ok(b >= 0 && same_inode(a, b) && (c == CRIU_3_17 ? a == b : a != b) &&
	   maps_zeros(b, pgoff, 4096), name);
	close_vma_fds(c, a, b);
	criu_plugins_fini(CR_PLUGIN_STAGE__RESTORE, 0);
	take_drm_mappings(true);
	criu_plugins_init(CR_PLUGIN_STAGE__RESTORE);
	set_criu_convention(c);
	snprintf(name, sizeof(name), "%s: two taken render nodes: a memfd each; others are left to the KFD code",
		 convention_name[c]);
	pgoff = off;
	ok(run_update_vma_map("/dev/dri/renderD128", 0, off, &pgoff, &a) == 1 &&
	   run_update_vma_map("/dev/dri/renderD131", 0, off, &pgoff, &d) == 1 &&
	   is_zero_fill(d, I915_MINOR) && !same_inode(a, d) &&
	   run_update_vma_map("/dev/dri/renderD140", 0, off, &pgoff, &b) == -ENOTSUP, name);
	close_vma_fds(c, a, d);
	criu_plugins_fini(CR_PLUGIN_STAGE__RESTORE, 0);
}

/* Failures of UPDATE_VMA_MAP, and what RESUME_DEVICES_LATE logs */
static void test_drm_vma_failures(void)
{
	char path[300];
	uint64_t pgoff = UINT64_MAX - 0xfff;
	int fd = -1;
	FILE *f;

	drm_setup(NULL);
	take_drm_mappings(false);
	criu_plugins_init(CR_PLUGIN_STAGE__RESTORE);
	ok(run_update_vma_map("/dev/dri/renderD128", 0x1000, pgoff, &pgoff, &fd) == 1 &&
	   pgoff == KFD_CRIU_REFUSED_PGOFF && fd == -1 &&
	   logged("mapping at 0x1000 of /dev/dri/renderD128: no zero-filled memory for it: Value too large") &&
	   logged("refused: its mmap fails"),
	   "a taken mapping at an offset no memfd reaches: refused (EOVERFLOW), an offset no mmap takes");
	snprintf(path, sizeof(path), "%s/proc/5003", fake_root);
	make_dirs(path);
	strcat(path, "/maps");
	f = fopen(path, "w");
	if (f) {
		fputs("7f0000000000-7f0000002000 rw-s 100000000 00:01 7 /memfd:drm_reattach:renderD128 (deleted)\n"
		      "7f0000002000-7f0000003000 rw-p 00000000 00:00 0 \n"
		      "7f0000003000-7f0000004000 r--s 100004000 00:01 7 /memfd:drm_reattach:renderD128 (deleted)\n"
		      "7f0000004000-7f0000005000 rw-s 00000000 00:01 8 /memfd:other (deleted)\n", f);
		fclose(f);
	}
	ok(run_resume_devices_late(5003) == -ENOTSUP &&
	   logged("pid 5003: renderD128: 12288 bytes in 2 mapping(s) are zero-filled memory now"),
	   "RESUME_DEVICES_LATE says how many bytes of each render node's mappings are zeros now");
	criu_plugins_fini(CR_PLUGIN_STAGE__RESTORE, 0);
	/* A varint cut short */
	kfd_criu_write_image(MAPPINGS_IMAGE, "\x08\xff", 2);
	criu_plugins_init(CR_PLUGIN_STAGE__RESTORE);
	pgoff = 0;
	ok(run_update_vma_map("/dev/dri/renderD128", 0, 0, &pgoff, &fd) == 1 &&
	   pgoff == KFD_CRIU_REFUSED_PGOFF && logged("cannot read kfdcriu-drm.img"),
	   "a damaged kfdcriu-drm.img refuses a render node mapping, naming it");
	criu_plugins_fini(CR_PLUGIN_STAGE__RESTORE, 0);
	unlinkat(image_dir_fd, MAPPINGS_IMAGE, 0);
	snprintf(path, sizeof(path), "rm -rf %s/proc", fake_root);
	if (system(path))
		printf("# cannot remove the fake /proc\n");
}

/*
 * The dump of a process with /dev/kfd (file 60), the render nodes of both
 * KFD GPUs (61, 62) and vgem's (63), with the option on, and mappings of
 * a KFD GPU and of vgem.
 */
static int play_drm_dump(void)
{
	int fd, ret;

	setenv(REATTACH_ENV, "1", 1);
	ret = criu_plugins_init(CR_PLUGIN_STAGE__DUMP) ?: handle_drm_vma(129) ?:
	      handle_drm_vma(VGEM_MINOR);
	fd = open(KFD_DEV_PATH, O_RDWR | O_CLOEXEC);
	ret = ret ?: run_dump_ext_file(fd, 60);
	close(fd);
	ret = ret ?: dump_render_node(61, 129) ?: dump_render_node(62, 130) ?:
	      dump_drm_node("renderD128", 63, O_RDWR);
	criu_plugins_fini(CR_PLUGIN_STAGE__DUMP, ret);
	unsetenv(REATTACH_ENV);
	forget_gpus();
	return ret;
}

/* Whether vgem's mappings in @v are zero-filled memory, the others not */
static int check_drm_vmas(const struct play_vma *v, int n)
{
	int i, bad = 0;

	for (i = 0; i < n; i++) {
		if (is_zero_fill(v[i].fd, VGEM_MINOR) == (v[i].file == VGEM_MINOR))
			continue;
		printf("# mapping %d of %s: %s\n", i, v[i].path, v[i].file == VGEM_MINOR ?
		       "not zero-filled memory" : "zero-filled memory");
		bad++;
	}
	return bad ? -EBADF : 0;
}

/* Restores the files of play_drm_dump()'s process as CRIU @c, into @fds */
static int play_drm_restore_files(enum criu_convention c, int fds[4])
{
	static const struct kfd_criu_offset_map moved[] = {
		MOVED(0x1000, 0x9000, 4660), MOVED(0x8000, 0xa000, 17185),
	};
	int i, ret;

	ret = criu_plugins_init(CR_PLUGIN_STAGE__RESTORE);
	set_criu_convention(c);
	memcpy(fake_kfd.moved, moved, sizeof(moved));
	fake_kfd.nr_moved = ARRAY_SIZE(moved);
	fds[0] = play_restore_file(63);
	fds[1] = play_restore_file(61);
	fds[2] = play_restore_file(60);
	fds[3] = play_restore_file(62);
	for (i = 0; i < 4; i++)
		ret = ret ?: fds[i] < 0 ? fds[i] : 0;
	return ret;
}

/* Restores the process of play_drm_dump() as CRIU @c; the files it gets */
static int play_drm_restore(enum criu_convention c, struct play_vma *v, int n, int fds[4])
{
	int ret = play_drm_restore_files(c, fds);

	ret = ret ?: play_open_vmas(c, v, n);
	ret = ret ?: check_drm_vmas(v, n);
	ret = ret ?: play_restorer(v, n);
	return ret ?: run_resume_devices_late(4242);
}

/* A process with KFD state and vgem: KFD as before, vgem reattached */
static void test_drm_play(enum criu_convention c)
{
	struct play_vma v[] = {
		KFD_VMA(0x5000), RENDER_VMA(129, 0x1000, 0x9000, 0),
		DRM_VMA(0x100000000), DRM_VMA(0x100004000), LIB_VMA,
		RENDER_VMA(130, 0x8000, 0xa000, 1), DRM_VMA(0x100000000), LIB_VMA,
	};
	int fds[4] = { -1, -1, -1, -1 }, before, ret, i, open_fds;
	char name[300];

	drm_setup(NULL);
	fake_kfd_switch(true);
	before = count_fds();
	dropped_fds = 0;
	ret = play_drm_dump() ?: play_drm_restore(c, v, ARRAY_SIZE(v), fds);
	ret = ret ?: is_node(dup(fds[0]), "renderD128") ? 0 : -ENODEV;
	ret = ret ?: play_check_render_files(&(struct play_case){ .files = { 0, 1 } }, fds[1],
					     fds[3]);
	for (i = 0; i < 4; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	open_fds = count_fds() - plugin_fds() - dropped_fds - (int)nr_zero_fills;
	snprintf(name, sizeof(name), "%s: a process with KFD state and vgem: KFD files and mappings restore as without the option, vgem's file reopens, its mappings are zero-filled, no fd is left",
		 convention_name[c]);
	ok(!ret && fake_kfd.resumes == 1 && open_fds == before, name);
	if (ret || open_fds != before)
		printf("# returned %d; %d fds open before, %d after\n", ret, before, open_fds);
	criu_plugins_fini(CR_PLUGIN_STAGE__RESTORE, ret);
	forget_gpus();
	free(offsets);
	offsets = NULL;
	nr_offsets = 0;
	fake_kfd_switch(false);
}

/*
 * The process of play_drm_dump() restored by CRIU @c from images whose
 * kfdcriu-drm.img is damaged: no render node mapping can be placed, and
 * the restore fails at the first one's mmap, not at whatever CRIU opens.
 */
static void test_drm_damaged_mappings(enum criu_convention c)
{
	struct play_vma v[] = {
		KFD_VMA(0x5000), DRM_VMA(0x100000000), RENDER_VMA(129, 0x1000, 0x9000, 0), LIB_VMA,
	};
	int fds[4] = { -1, -1, -1, -1 }, ret, i;
	char name[300];

	drm_setup(NULL);
	fake_kfd_switch(true);
	ret = play_drm_dump();
	/* A varint cut short */
	ret = ret ?: kfd_criu_write_image(MAPPINGS_IMAGE, "\x08\xff", 2);
	ret = ret ?: play_drm_restore_files(c, fds);
	ret = ret ?: play_open_vmas(c, v, ARRAY_SIZE(v));
	ret = ret ?: play_restorer(v, ARRAY_SIZE(v));
	snprintf(name, sizeof(name),
		 "%s: a damaged kfdcriu-drm.img (EBADMSG): render node mappings refused, the restore fails at the first one's mmap",
		 convention_name[c]);
	ok(ret == -EINVAL && logged("cannot read kfdcriu-drm.img"), name);
	if (ret != -EINVAL)
		printf("# returned %d\n", ret);
	for (i = 0; i < 4; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	criu_plugins_fini(CR_PLUGIN_STAGE__RESTORE, ret);
	unlinkat(image_dir_fd, MAPPINGS_IMAGE, 0);
	forget_gpus();
	free(offsets);
	offsets = NULL;
	nr_offsets = 0;
	fake_kfd_switch(false);
}

/* A dump that reattaches a render node needs drm_reattach to restore */
#if HARNESS_INVENTORY
static void test_drm_inventory(void)
{
	drm_setup("1");
	memset(inventory, 0, sizeof(inventory));
	criu_plugins_init(CR_PLUGIN_STAGE__DUMP);
	ok(!dump_drm_node("renderD128", 116, O_RDWR) && !strcmp(inventory[0], "drm_reattach") &&
	   !inventory[1][0],
	   "CRIU 4.1 and later: a dump with a reattached render node lists drm_reattach, only, in the inventory");
	criu_plugins_fini(CR_PLUGIN_STAGE__DUMP, 0);
	memset(inventory, 0, sizeof(inventory));
	unsetenv(REATTACH_ENV);
}
#else
static void test_drm_inventory(void)
{
}
#endif

static void test_drm_reattach(void)
{
	test_drm_dump_option();
	test_drm_kfd_unaffected();
	test_drm_refusals();
	test_drm_restore_file();
#ifndef KFD_CRIU_RESTORE_RETRY
	test_drm_vmas(CRIU_3_17);
	test_drm_play(CRIU_3_17);
	test_drm_damaged_mappings(CRIU_3_17);
#endif
	test_drm_vmas(CRIU_3_19);
	test_drm_play(CRIU_3_19);
	test_drm_damaged_mappings(CRIU_3_19);
	test_drm_vma_failures();
	test_drm_inventory();
}
