// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: what the hooks take, refuse and leave behind, as real CRIU sees it
 *
 * Included by kfd_criu_plugin_test.c, after the harness (criu_play.c).
 * Render node files are taken only from tasks that hold /dev/kfd, found as
 * CRIU's tasks are (their TracerPid is criu) and compared with kcmp(), so
 * the tasks here are real children whose fds the fake /proc shows. A task
 * whose RESUME fails is killed, since no CRIU acts on that hook's errors.
 * The first ROCm process of a boot maps the thunk's semaphore by a link
 * CRIU makes, which the restore makes again on a fresh host.
 */

/* Reads one byte from @fd; false at EOF or on error */
static bool read_byte(int fd)
{
	char c;

	return read(fd, &c, 1) == 1;
}

/*
 * A child that keeps only the @n fds of @keep, until killed; the fake
 * /proc shows it as a task of the dump (traced by this "criu").
 */
static pid_t fake_child_task(const int *keep, int n)
{
	char path[300], link[64];
	int ready[2], fd, i;
	bool kept;
	pid_t pid;
	FILE *f;

	if (pipe(ready))
		return -1;
	fflush(stdout);
	pid = fork();
	if (!pid) {
		for (fd = 0; fd < 1024; fd++) {
			for (i = 0, kept = fd == ready[1]; i < n; i++)
				kept |= fd == keep[i];
			if (!kept)
				close(fd);
		}
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (pid < 0 || !read_byte(ready[0]))
		printf("# the child task did not start\n");
	close(ready[0]);
	snprintf(path, sizeof(path), "%s/proc/%d", fake_root, pid);
	make_dirs(path);
	strcat(path, "/status");
	f = fopen(path, "w");
	if (!f || fprintf(f, "Name:\tchild\nTracerPid:\t%d\n", getpid()) < 0)
		printf("# cannot make %s\n", path);
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/proc/%d/fd", fake_root, pid);
	snprintf(link, sizeof(link), "/proc/%d/fd", pid);
	if (symlink(link, path))
		printf("# cannot link %s\n", path);
	return pid;
}

/* Ends child task @pid and its fake /proc entry */
static void end_child_task(pid_t pid)
{
	char cmd[300];

	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s/proc/%d", fake_root, pid);
	if (system(cmd))
		printf("# cannot remove %s/proc/%d\n", fake_root, pid);
}

/* Removes the fake dumped task, so that only the tests' children hold files */
static void hide_fake_task(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s/proc/%d", fake_root, FAKE_TASK);
	if (system(cmd))
		printf("# cannot remove the fake task\n");
}

/* Render node files of KFD GPUs: only those of tasks with /dev/kfd */
static void test_render_file_owner(void)
{
	char path[512];
	int fds[2], render, ret;
	KfdCriuMeta *meta;
	pid_t pid;
	bool warned;

	fake_kfd_switch(true);
	fake_render_node(129);
	hide_fake_task();
	kfd_plugin_init(CR_PLUGIN_STAGE__DUMP);
	snprintf(path, sizeof(path), "%s/dev/dri/renderD129", fake_root);
	render = open(path, O_RDWR | O_CLOEXEC);
	pid = fake_child_task(&render, 1);
	ret = kfd_dump_file(render, 90);
	warned = worst_level == LOG_WARN;
	ok(ret == -ENOTSUP && kfd_criu_read_meta(90, &meta) == -ENOENT && warned &&
	   logged("file 90: renderD129, of KFD GPU 0x1234, is open in a process without /dev/kfd"),
	   "a KFD GPU's render node file of a process without /dev/kfd (Mesa): declined, a warning says why");
	end_child_task(pid);
	kfd_plugin_fini(CR_PLUGIN_STAGE__DUMP, 1);
	kfd_plugin_init(CR_PLUGIN_STAGE__DUMP);
	fds[0] = render;
	fds[1] = open(KFD_DEV_PATH, O_RDWR | O_CLOEXEC);
	pid = fake_child_task(fds, 2);
	ok(!kfd_dump_file(render, 91) && dumped_render_gpu(91, false) == 4660,
	   "... of a task with /dev/kfd, dumped before its /dev/kfd file: taken");
	end_child_task(pid);
	close(fds[1]);
	close(render);
	kfd_plugin_fini(CR_PLUGIN_STAGE__DUMP, 1);
	forget_gpus();
	fake_kfd_switch(false);
	fake_dumped_task();
}

/* A task whose RESUME fails is killed, so that CRIU fails the restore */
static void test_resume_failure(void)
{
	int kfd, ret, i, status = 0;
	pid_t pid, done;

	fake_kfd_switch(true);
	play_dump();
	kfd_plugin_init(CR_PLUGIN_STAGE__RESTORE);
	kfd = play_restore_file(60);
	pid = fake_child_task(NULL, 0);
	killable = pid;
	killed_signal = 0;
	fake_kfd.denied = true;
	ret = kfd_resume_devices_late(pid);
	ok(kfd >= 0 && ret == -EACCES && killed_signal == SIGKILL &&
	   worst_level == LOG_ERROR && logged("RESUME failed: Permission denied: killing it"),
	   "RESUME_DEVICES_LATE that fails (which no CRIU acts on): the task is killed, an error says so");
	for (i = 0, done = 0; !done && i < 200; i++) {	/* 2 s for the kill to land */
		done = waitpid(pid, &status, WNOHANG);
		if (!done)
			usleep(10000);
	}
	ok(done == pid && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	   "... and it is dead: CRIU cannot detach it and fails the restore");
	if (done != pid)
		end_child_task(pid);
	else
		end_child_task(-1);
	killable = 0;
	close(kfd);
	kfd_plugin_fini(CR_PLUGIN_STAGE__RESTORE, 0);
	forget_gpus();
	fake_kfd_switch(false);
}

/* Whether @a and @b, paths, are one file */
static bool same_shm_inode(const char *a, const char *b)
{
	struct stat sa, sb;

	return !lstat(a, &sa) && !lstat(b, &sb) && sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev;
}

/*
 * The first ROCm process of a boot: its semaphore is mapped under the
 * deleted name sem_open() made it as, and CRIU (--link-remap) dumped that
 * mapping through link_remap.<id>, a hard link beside the semaphore.
 */
static void test_first_of_boot_semaphore(void)
{
	char dumped[256], here[256], sem[600], remap[600], other[600], cmd[600];
	KfdCriuShmFile *f = NULL;
	KfdCriuMeta *meta = NULL;
	unsigned int i;
	int kfd;

	snprintf(dumped, sizeof(dumped), "%s/proc/%d/root/dev/shm", fake_root, FAKE_TASK);
	snprintf(here, sizeof(here), "%s/dev/shm", fake_root);
	make_dirs(dumped);
	make_dirs(here);
	snprintf(sem, sizeof(sem), "%s/" SHM_SEMAPHORE, dumped);
	fake_shm_file(sem, "\1", 32, 0666);
	snprintf(remap, sizeof(remap), "%s/link_remap.7", dumped);
	snprintf(other, sizeof(other), "%s/link_remap.8", dumped);
	if (link(sem, remap))
		printf("# cannot link %s\n", remap);
	fake_shm_file(other, "x", 10, 0600);	/* another file's */
	fake_kfd_switch(true);
	play_dump();
	if (!kfd_criu_read_meta(60, &meta))
		for (i = 0; i < meta->n_shm_files; i++)
			if (!strcmp(meta->shm_files[i]->name, SHM_SEMAPHORE))
				f = meta->shm_files[i];
	ok(f && f->n_link_remaps == 1 && !strcmp(f->link_remaps[0], "link_remap.7"),
	   "dump: the semaphore's link_remap.<id> that CRIU made is noted, not another file's");
	if (meta)
		kfd_criu_meta__free_unpacked(meta, NULL);
	/* A fresh host: no semaphore, no link */
	snprintf(cmd, sizeof(cmd), "rm -rf %s", here);
	if (system(cmd))
		printf("# cannot empty %s\n", here);
	make_dirs(here);
	snprintf(sem, sizeof(sem), "%s/" SHM_SEMAPHORE, here);
	snprintf(remap, sizeof(remap), "%s/link_remap.7", here);
	snprintf(other, sizeof(other), "%s/link_remap.8", here);
	kfd_plugin_init(CR_PLUGIN_STAGE__RESTORE);
	kfd = play_restore_file(60);
	ok(kfd >= 0 && shm_file_is(sem, "\1", 32, 0666) && same_shm_inode(sem, remap) &&
	   access(other, F_OK) && logged("link_remap.7 was missing"),
	   "restore on a fresh host: the semaphore and the link CRIU maps it by are made again");
	/* What CRIU does next in the task: rfi_remap() links it to the deleted name */
	snprintf(other, sizeof(other), "%s/sem.Ab1cD2", here);
	ok(!link(remap, other) && same_shm_inode(other, sem),
	   "... so CRIU can link it back to the deleted name and map the semaphore");
	close(kfd);
	kfd_plugin_fini(CR_PLUGIN_STAGE__RESTORE, 0);
	forget_gpus();
	snprintf(cmd, sizeof(cmd), "rm -rf %s/proc %s", fake_root, here);
	if (system(cmd))
		printf("# cannot remove the fake /dev/shm\n");
	fake_kfd_switch(false);
}

/* A thunk file's metadata may not make what the thunk never has */
static void test_shm_metadata(void)
{
	char path[600], *bad[] = { "../../etc/x" };
	KfdCriuShmFile f = KFD_CRIU_SHM_FILE__INIT;
	uint8_t head[1] = { 1 };
	struct stat st;

	snprintf(path, sizeof(path), "%s/dev/shm", fake_root);
	make_dirs(path);
	f.name = "kfd_test_mode";
	f.size = 64;
	f.mode = 06755;
	f.uid = getuid();
	f.gid = getgid();
	f.head.len = 1;
	f.head.data = head;
	snprintf(path, sizeof(path), "%s/dev/shm/kfd_test_mode", fake_root);
	unlink(path);
	ok(!recreate_shm_file(95, &f) && !stat(path, &st) && (st.st_mode & 07777) == 0755,
	   "a thunk file is re-created without setuid and setgid bits");
	unlink(path);
	f.size = 1ULL << 30;
	ok(recreate_shm_file(95, &f) == -EBADMSG && access(path, F_OK),
	   "... and one larger than the thunk's files ever are is refused");
	f.size = 64;
	f.name = SHM_SEMAPHORE;
	f.n_link_remaps = 1;
	f.link_remaps = bad;
	ok(link_remaps(95, &f) == -EBADMSG && logged("bad metadata"),
	   "a link name that is not CRIU's link_remap.<id> is refused");
}

/* The small ones: paths, minors, levels, dma-bufs, --stream, stale images */
static void test_review_items(void)
{
	char path[PATH_MAX], dir[PATH_MAX];
	struct stat st = { .st_mode = S_IFCHR };
	int kfd, fd = -1, ret;
	uint64_t pgoff = 0;
	bool quiet;

	fake_kfd_switch(true);
	fake_kfd.moved[0] = (struct kfd_criu_offset_map)MOVED(0x1000, 0x9000, 4660);
	fake_kfd.nr_moved = 1;
	play_dump();
	kfd_plugin_init(CR_PLUGIN_STAGE__RESTORE);
	kfd = play_restore_file(60);
	ret = kfd_update_vma_map("//dev/dri/renderD129", 0x7f0000000000, 0x1000, &pgoff, &fd);
	ok(kfd >= 0 && ret == 1 && pgoff == 0x9000 && fd >= 0,
	   "UPDATE_VMA_MAP of //dev/dri/renderD129, as CRIU hands some paths over: moved");
	if (fd >= 0 && fd != gpu_map[0].drm_fd)
		close(fd);
	close(kfd);
	kfd_plugin_fini(CR_PLUGIN_STAGE__RESTORE, 0);
	forget_gpus();

	snprintf(path, sizeof(path), "%s/sys/dev/char", fake_root);
	make_dirs(path);
	snprintf(path, sizeof(path), "%s/sys/dev/char/226:200", fake_root);
	if (symlink("../../devices/pci0000:00/0000:00:01.0/drm/renderD200", path))
		printf("# cannot link %s\n", path);
	snprintf(path, sizeof(path), "%s/sys/dev/char/226:201", fake_root);
	if (symlink("../../devices/pci0000:00/0000:00:02.0/drm/card201", path))
		printf("# cannot link %s\n", path);
	st.st_rdev = makedev(DRM_MAJOR, 200);
	ret = dev_kind(st.st_mode, st.st_rdev);
	st.st_rdev = makedev(DRM_MAJOR, 201);
	ok(ret == DEV_RENDER && dev_kind(st.st_mode, st.st_rdev) == DEV_OTHER &&
	   dev_kind(st.st_mode, makedev(DRM_MAJOR, 202)) == DEV_OTHER,
	   "past minor 191, a render node is what the kernel names renderD<minor> in sysfs, not a card node");

	fake_kfd_switch(true);
	fake_kfd.old_kernel = true;
	kfd = open(KFD_DEV_PATH, O_RDWR | O_CLOEXEC);
	ret = kfd_dump_file(kfd, 96);
	ok(ret == -ENOTSUP && worst_level == LOG_WARN && logged("no KFD CRIU image mode"),
	   "a kernel without image mode: said at warning level, which CRIU shows by default");
	close(kfd);

	drm_setup(NULL);
	kfd_plugin_init(CR_PLUGIN_STAGE__DUMP);
	ret = dump_drm_node("renderD128", 97, O_RDWR) == -ENOTSUP &&
	      handle_drm_vma(VGEM_MINOR) == -ENOTSUP;
	ok(ret && logged("renderD128 (vgem) is no KFD GPU's") && worst_level == LOG_WARN,
	   "files and mappings that another plugin may take: declined with warnings, not errors");
	fake_drm_node("../../dmabuf", "");
	ok(dump_drm_node("/dmabuf", 98, O_RDWR) == -ENOTSUP &&
	   logged("file 98: a dma-buf: never dumped") && worst_level == LOG_WARN,
	   "a dma-buf, reattach off: declined, saying why");
	kfd_plugin_fini(CR_PLUGIN_STAGE__DUMP, 1);

	fake_kfd_switch(true);
	streamer_start(false);
	streamer_stop(true);
	quiet = !kfd_criu_images_streamed();
	kfd_plugin_init(CR_PLUGIN_STAGE__DUMP);
	kfd = open(KFD_DEV_PATH, O_RDWR | O_CLOEXEC);
	ok(quiet && !kfd_dump_file(kfd, 99),
	   "a streamer socket left behind in the images directory: not --stream, the dump goes on");
	close(kfd);
	kfd_plugin_fini(CR_PLUGIN_STAGE__DUMP, 0);
	unlinkat(image_dir_fd, "streamer-capture.sock", 0);

	write_image(MAPPINGS_IMAGE, 4, 1);
	snprintf(dir, sizeof(dir), "%s", program_invocation_name);
	snprintf(path, sizeof(path), "%s/" STOCK_PLUGIN, dirname(dir));
	close(open(path, O_CREAT | O_RDWR, 0600));
	ret = kfd_plugin_init(CR_PLUGIN_STAGE__DUMP);
	unlink(path);
	ok(ret == -EEXIST && !faccessat(image_dir_fd, MAPPINGS_IMAGE, F_OK, 0),
	   "an init refused for CRIU's amdgpu plugin leaves the images as they were");
	unlinkat(image_dir_fd, MAPPINGS_IMAGE, 0);
	fake_kfd_switch(false);
}

static void test_hooks(void)
{
	test_render_file_owner();
	test_resume_failure();
	test_first_of_boot_semaphore();
	test_shm_metadata();
	test_review_items();
}
