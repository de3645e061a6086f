// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: host tests of the plugin's options (kfd_criu_options.c)
 *
 * Included by kfd_criu_plugin_test.c after criu_play.c. Each channel is
 * played as the criu that runs the plugin offers it: the config file in
 * the fake root's /etc/criu, the environment, and under CRIU 4.3 the
 * --plugin-option list that criu_plugin_get_options() returns; then the
 * order in which they win.
 */

/* Writes the fake root's /etc/criu/@plugin.conf; NULL removes it */
static void write_config_of(const char *plugin, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/etc/criu", fake_root);
	make_dirs(path);
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%s.conf", plugin);
	if (!text) {
		unlink(path);
		return;
	}
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0)
		printf("# cannot write %s\n", path);
	if (f)
		fclose(f);
}

/* Writes the fake root's /etc/criu/kfd_criu.conf; NULL removes it */
static void write_config(const char *text)
{
	write_config_of("kfd_criu", text);
}

/* The image gpu_id that local GPU @i takes at the start of a restore */
static uint32_t restore_image_gpu(int i)
{
	uint32_t img;

	forget_gpus();
	kfd_plugin_init(CR_PLUGIN_STAGE__RESTORE);
	img = restore_gpus() || i >= nr_gpus ? 0 : gpu_map[i].image_gpu_id;
	kfd_plugin_fini(CR_PLUGIN_STAGE__RESTORE, 0);
	forget_gpus();
	return img;
}

static void test_config_file(void)
{
	int fds[2];

	unsetenv("KFD_CRIU_GPU_MAP");
	write_config("# kfd_criu options\n\n  gpu_map = 0x4321=4660   # one GPU\nno equals sign\nnope=1\n");
	ok(restore_image_gpu(0) == 0x4321 && logged("kfd_criu.conf:3: gpu_map=0x4321=4660") &&
	   logged("kfd_criu.conf:4: expected NAME=VALUE") &&
	   logged("kfd_criu.conf:5: unknown option \"nope\""),
	   "config file: /etc/criu/kfd_criu.conf's gpu_map places an image GPU; bad lines are said and skipped");
	write_config(NULL);
	write_config_of("drm_reattach", "enable=1\n");
	reattach_init(CR_PLUGIN_STAGE__DUMP);
	ok(reattach_wanted() && logged("drm_reattach.conf:1: enable=1"),
	   "config file: drm_reattach's own /etc/criu/drm_reattach.conf, enable=1, turns the reattach on");
	reattach_fini(CR_PLUGIN_STAGE__DUMP, 0);
	ok(!reattach_wanted(), "... for the criu command that read it only");
	write_config_of("drm_reattach", NULL);
	write_config("leave_running=0\n");
	kfd_plugin_init(CR_PLUGIN_STAGE__DUMP);
	if (pipe(fds))
		return;
	remember_dumped_file(fds[0], 11, 100);
	kfd_plugin_fini(CR_PLUGIN_STAGE__DUMP, 0);
	ok(logged("file 11: not unpausing") && !logged("UNPAUSE"),
	   "config file: leave_running=0 leaves a dumped task paused");
	close(fds[0]);
	close(fds[1]);
	write_config(NULL);
}

/* The options criu 4.3 is given for this test: others' and ours */
static char *plugin_options[] = {
	"criu-plugin", "--amdgpu_plugin.gpu_map=1=2", "--kfd_criu.gpu_map=0x4321=17185",
	"--drm_reattach.enable", "--kfd_criu.nope=1", NULL,
};

/*
 * Under 4.3, with gpu_map set in the config file, the environment and as
 * a plugin option: the plugin option wins; a name alone is a flag.
 */
static bool plugin_option_wins(const void *unused)
{
	void (*set)(int, char **) = dlsym(criu_4_3_exports, "harness_set_plugin_options");
	bool pass;

	(void)unused;
	if (!set)
		return false;
	set(ARRAY_SIZE(plugin_options) - 1, plugin_options);
	pass = restore_image_gpu(1) == 0x4321 && logged("--plugin-option: gpu_map=0x4321=17185") &&
	       logged("unknown option \"nope\"") && !logged("=1=2");
	reattach_init(CR_PLUGIN_STAGE__DUMP);
	pass = pass && reattach_wanted();
	reattach_fini(CR_PLUGIN_STAGE__DUMP, 0);
	return pass;
}

static void test_option_precedence(void)
{
	write_config("gpu_map=0x4321=4660\n");
	setenv("KFD_CRIU_GPU_MAP", "0x4321=17185", 1);
	ok(restore_image_gpu(1) == 0x4321 && !restore_image_gpu(0),
	   "precedence: the environment over the config file");
	setenv("KFD_CRIU_GPU_MAP", "0x4321=4660", 1);
	ok(as_criu_4_3(plugin_option_wins, NULL),
	   "CRIU 4.3: --plugin-option kfd_criu.NAME=VALUE over the environment and the config file; other plugins' options left alone; NAME alone is 1");
	ok(criu_before_4_3() && restore_image_gpu(0) == 0x4321,
	   "CRIU before 4.3 (no criu_plugin_get_options): the environment decides");
	unsetenv("KFD_CRIU_GPU_MAP");
	ok(restore_image_gpu(0) == 0x4321, "... and without it the config file");
	write_config(NULL);
	ok(!restore_image_gpu(0) && !restore_image_gpu(1), "none set: the default, no GPU map");
}

static void test_options(void)
{
	test_config_file();
	test_option_precedence();
}
