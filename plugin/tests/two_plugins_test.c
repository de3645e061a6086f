// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: host tests of kfd_criu and drm_reattach side by side
 *
 * Included by kfd_criu_plugin_test.c after the other tests, whose fakes it
 * uses. CRIU loads every plugin of its plugin directory and asks them in
 * load order, readdir() order, which no one chooses: so each plugin must
 * work alone, and of the two, at most one may take any file or mapping,
 * whichever asks first. Each plugin is asked here alone, with the other
 * not loaded, and the claims are counted; the built shared objects are
 * loaded as cr_plugin_init() loads them.
 */

/* What each plugin is asked, alone: a hook's return for @arg */
typedef int claim_t(const void *arg);

/*
 * How many of the two plugins, each loaded alone for @stage, do not
 * decline what @claim asks. Both plugins are loaded again afterwards.
 */
static int claims(int stage, claim_t *claim, const void *arg)
{
	cr_plugin_desc_t *alone[] = { &CR_PLUGIN_DESC, &drm_reattach_desc };
	unsigned int i;
	int n = 0, ret;

	for (i = 0; i < ARRAY_SIZE(alone); i++) {
		load_plugins(alone[i], NULL);
		ret = criu_plugins_init(stage) ?: claim(arg);
		if (ret != -ENOTSUP)
			printf("# %s: %d\n", alone[i]->name, ret);
		n += ret != -ENOTSUP;
		criu_plugins_fini(stage, 1);
		forget_gpus();
	}
	load_both(false);
	return n;
}

/* DUMP_EXT_FILE of fake file @name (a /dev/dri node, /dmabuf or /dev/kfd) */
static int claim_dump_file(const void *name)
{
	int fd = strcmp(name, KFD_DEV_PATH) ? open_fake(name, O_RDWR) :
		 open(KFD_DEV_PATH, O_RDWR | O_CLOEXEC);
	int ret = run_dump_ext_file(fd, 140);

	close(fd);
	unlinkat(image_dir_fd, "kfdcriu-140.img", 0);
	unlinkat(image_dir_fd, "kfdcriu-140.stream", 0);
	return ret;
}

/* HANDLE_DEVICE_VMA of a mapping of DRM minor *@minor, or of /dev/kfd */
static int claim_vma(const void *minor)
{
	struct stat st;

	if (*(const int *)minor < 0)
		return stat(KFD_DEV_PATH, &st) ? -errno : run_handle_device_vma(-1, &st);
	return handle_drm_vma(*(const int *)minor);
}

/* RESTORE_EXT_FILE of file *@id */
static int claim_restore_file(const void *id)
{
	int fd = run_restore_file(*(const int *)id);

	if (fd >= 0)
		close(fd);
	return fd < 0 ? fd : 0;
}

/* UPDATE_VMA_MAP of a mapping of @path, in a task whose GPUs are known */
static int claim_vma_map(const void *path)
{
	uint64_t pgoff;
	int fd = -1, ret;

	ret = restore_gpus() ?: run_update_vma_map(path, 0x7f0000000000, 0x1000, &pgoff, &fd);
	if (fd >= 0)
		close(fd);
	return ret;
}

/* Each file and mapping of a dump, and of its restore, is one plugin's */
static void test_one_owner(void)
{
	static const char *const files[] = {
		KFD_DEV_PATH, "renderD129", "renderD128", "renderD131", "card0", "/dmabuf",
	};
	static const int owners[] = { 1, 1, 1, 1, 0, 0 };
	static const int minors[] = { -1, 129, VGEM_MINOR, I915_MINOR, 0 };
	static const int vma_owners[] = { 1, 1, 1, 1, 0 };
	static const int ids[] = { 150, 151 };
	static const char *const paths[] = { "/dev/dri/renderD129", "//dev/dri/renderD128" };
	unsigned int i, wrong = 0;
	int n;

	drm_setup("1");
	fake_drm_node("../../dmabuf", "");
	fake_kfd_switch(true);
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		n = claims(CR_PLUGIN_STAGE__DUMP, claim_dump_file, files[i]);
		if (n != owners[i])
			printf("# %s: taken by %d plugins\n", files[i], n);
		wrong += n != owners[i];
	}
	for (i = 0; i < ARRAY_SIZE(minors); i++) {
		n = claims(CR_PLUGIN_STAGE__DUMP, claim_vma, &minors[i]);
		if (n != vma_owners[i])
			printf("# a mapping of minor %d: taken by %d plugins\n", minors[i], n);
		wrong += n != vma_owners[i];
	}
	ok(!wrong, "both plugins, DUMP_EXT_FILE and HANDLE_DEVICE_VMA: /dev/kfd, a KFD GPU's and two other render nodes each taken by one plugin alone; card node, dma-buf by none");

	/* A dump by both: a KFD GPU's render node and vgem's, and vgem's mapping */
	criu_plugins_init(CR_PLUGIN_STAGE__DUMP);
	wrong = dump_render_node(150, 129) || dump_drm_node("renderD128", 151, O_RDWR) ||
		handle_drm_vma(VGEM_MINOR);
	criu_plugins_fini(CR_PLUGIN_STAGE__DUMP, 1);
	for (i = 0; !wrong && i < ARRAY_SIZE(ids); i++)
		wrong = claims(CR_PLUGIN_STAGE__RESTORE, claim_restore_file, &ids[i]) != 1;
	for (i = 0; !wrong && i < ARRAY_SIZE(paths); i++)
		wrong = claims(CR_PLUGIN_STAGE__RESTORE, claim_vma_map, paths[i]) != 1;
	ok(!wrong, "... RESTORE_EXT_FILE and UPDATE_VMA_MAP: each restored file and mapping taken by one plugin alone");
	fake_kfd_switch(false);
	unlinkat(image_dir_fd, MAPPINGS_IMAGE, 0);
	unsetenv(REATTACH_ENV);
}

/* drm_reattach without kfd_criu: it dumps and restores vgem, leaves KFD */
static void test_reattach_alone(void)
{
	uint64_t pgoff = 0;
	bool pass;
	int fd = -1;

	drm_setup("1");
	load_plugins(&drm_reattach_desc, NULL);
	criu_plugins_init(CR_PLUGIN_STAGE__DUMP);
	pass = !dump_drm_node("renderD128", 152, O_RDWR) &&
	       dumped_drm_node(152, "vgem", VGEM_MINOR, NULL, O_RDWR) &&
	       !handle_drm_vma(VGEM_MINOR) &&
	       dump_drm_node("renderD129", 153, O_RDWR) == -ENOTSUP &&
	       claim_dump_file(KFD_DEV_PATH) == -ENOTSUP && handle_drm_vma(129) == -ENOTSUP;
	criu_plugins_fini(CR_PLUGIN_STAGE__DUMP, 0);
	criu_plugins_init(CR_PLUGIN_STAGE__RESTORE);
	pass = pass && is_node(run_restore_file(152), "renderD128") &&
	       run_update_vma_map("/dev/dri/renderD128", 0x7f0000000000, 0x4000, &pgoff, &fd) == 1 &&
	       pgoff == 0x4000 && fd >= 0 && run_resume_devices_late(4242) == -ENOTSUP &&
	       !fake_kfd.probes;
	if (fd >= 0 && !criu_dups_vma_fd)
		close(fd);
	criu_plugins_fini(CR_PLUGIN_STAGE__RESTORE, 0);
	ok(pass, "drm_reattach alone: a vgem render node and its mapping dump and restore; a KFD GPU's render node and /dev/kfd are left alone");
	load_both(false);
	unlinkat(image_dir_fd, MAPPINGS_IMAGE, 0);
	unsetenv(REATTACH_ENV);
}

/* kfd_criu without drm_reattach: other DRM files are quietly declined */
static void test_kfd_alone(void)
{
	uint64_t pgoff = 0;
	bool pass;
	int fd = -1;

	drm_setup("1");
	fake_drm_node("../../dmabuf", "");
	load_plugins(&CR_PLUGIN_DESC, NULL);
	criu_plugins_init(CR_PLUGIN_STAGE__DUMP);
	pass = dump_drm_node("renderD128", 154, O_RDWR) == -ENOTSUP &&
	       dump_drm_node("card0", 155, O_RDWR) == -ENOTSUP &&
	       dump_drm_node("/dmabuf", 156, O_RDWR) == -ENOTSUP &&
	       handle_drm_vma(VGEM_MINOR) == -ENOTSUP && handle_drm_vma(0) == -ENOTSUP &&
	       kfd_criu_read_meta(154, &(KfdCriuMeta *){ NULL }) == -ENOENT &&
	       worst_level > LOG_WARN;
	criu_plugins_fini(CR_PLUGIN_STAGE__DUMP, 1);
	make_drm_image(157, "vgem", VGEM_MINOR, NULL, O_RDWR);
	write_image(MAPPINGS_IMAGE, 0, 0);
	criu_plugins_init(CR_PLUGIN_STAGE__RESTORE);
	pass = pass && run_restore_file(157) == -ENOTSUP &&
	       run_update_vma_map("/dev/dri/renderD128", 0, 0x1000, &pgoff, &fd) == -ENOTSUP &&
	       fd == -1;
	criu_plugins_fini(CR_PLUGIN_STAGE__RESTORE, 0);
	ok(pass, "kfd_criu alone, the reattach asked for: render nodes of no KFD GPU, card nodes, dma-bufs, their mappings and a reattached file's image are declined, without a warning");
	load_both(false);
	unlinkat(image_dir_fd, MAPPINGS_IMAGE, 0);
	unsetenv(REATTACH_ENV);
}

/*
 * The names the two plugins register, loaded from @dir as
 * cr_plugin_init() and cr_lib_load() (criu/plugin.c) load them: each file
 * whose name ends in .so, in readdir() order, dlopen()ed with RTLD_LAZY
 * and started (init) before the next is loaded.
 */
static bool load_plugin_dir(const char *dir, char names[2][32])
{
	char path[PATH_MAX + NAME_MAX + 2];
	CR_PLUGIN_HOOK__DUMP_EXT_FILE_t *dump;
	cr_plugin_desc_t *d;
	void *h[2] = { NULL };
	struct dirent *e;
	unsigned int n = 0, i;
	bool pass = true;
	size_t len;
	DIR *dp;

	dp = opendir(dir);
	while (dp && n < 2 && (e = readdir(dp))) {
		len = strlen(e->d_name);
		if (len < 3 || strcmp(e->d_name + len - 3, ".so"))	/* as criu */
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		h[n] = dlopen(path, RTLD_LAZY);
		d = h[n] ? dlsym(h[n], "CR_PLUGIN_DESC") : NULL;
		if (!d) {
			printf("# %s: %s\n", path, dlerror());
			pass = false;
			break;
		}
		snprintf(names[n++], 32, "%s", d->name);
		dump = d->hooks[CR_PLUGIN_HOOK__DUMP_EXT_FILE];
		pass = pass && !d->init(CR_PLUGIN_STAGE__DUMP) && dump &&
		       dump(image_dir_fd, 1) == -ENOTSUP;
	}
	if (dp)
		closedir(dp);
	for (i = 0; i < n; i++) {
		d = dlsym(h[i], "CR_PLUGIN_DESC");
		d->exit(CR_PLUGIN_STAGE__DUMP, 0);
		dlclose(h[i]);
	}
	return pass && n == 2;
}

/*
 * The built kfd_criu_plugin.so (@kfd) and drm_reattach.so (@reattach), in
 * one plugin directory, loaded as cr_plugin_init() does: both load and
 * start, each under its own name, and decline a file of neither.
 */
static void test_plugin_dir(const char *kfd, const char *reattach)
{
	char dir[PATH_MAX], link[PATH_MAX + 32], names[2][32] = { "", "" }, cmd[PATH_MAX + 16];
	bool pass;

	snprintf(dir, sizeof(dir), "%s/libdir", image_dir);
	mkdir(dir, 0700);
	snprintf(link, sizeof(link), "%s/kfd_criu_plugin.so", dir);
	pass = !symlink(kfd, link);
	snprintf(link, sizeof(link), "%s/drm_reattach.so", dir);
	pass = pass && !symlink(reattach, link) && load_plugin_dir(dir, names);
	ok(pass && ((!strcmp(names[0], "kfd_criu") && !strcmp(names[1], "drm_reattach")) ||
		    (!strcmp(names[1], "kfd_criu") && !strcmp(names[0], "drm_reattach"))),
	   "both built plugins in one plugin directory, loaded in readdir() order as criu does: both start, as kfd_criu and drm_reattach");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		printf("# cannot remove %s\n", dir);
}

static void test_two_plugins(const char *kfd, const char *reattach)
{
	test_one_owner();
	test_reattach_alone();
	test_kfd_alone();
	if (kfd && reattach)
		test_plugin_dir(kfd, reattach);
}
