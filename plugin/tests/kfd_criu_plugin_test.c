// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: host unit tests of the kfd_criu plugin
 *
 * The plugin's source is built in here with /dev/null standing in for
 * /dev/kfd (KFD_DEV_PATH, set by the Makefile), and with stand-ins for the
 * two functions the criu binary exports to plugins: an images directory in
 * /tmp and a log that the checks can read. No GPU, KFD or CRIU is needed.
 * Given the built plugin's path, it also loads that the way criu does.
 * Prints TAP; exits 1 if any check fails.
 */
#include "../kfd_criu_plugin.c"

#include <dlfcn.h>
#include <stdarg.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static char image_dir[32];
static int image_dir_fd = -1;
static char last_log[1024];
static unsigned int nr_tests, nr_failed;

int criu_get_image_dir(void)
{
	return image_dir_fd;
}

void print_on_level(unsigned int loglevel, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_log, sizeof(last_log), fmt, ap);
	va_end(ap);
	printf("# [%u] %s", loglevel, last_log);
}

static void ok(bool pass, const char *name)
{
	nr_tests++;
	if (!pass)
		nr_failed++;
	printf("%sok %u - %s\n", pass ? "" : "not ", nr_tests, name);
}

static bool logged(const char *what)
{
	return strstr(last_log, what);
}

/* Writes @len bytes of a fixed pattern to @name in the images directory */
static void write_image(const char *name, size_t len, unsigned char seed)
{
	unsigned char buf[4096];
	size_t i, n;
	int fd;

	fd = openat(image_dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 7 + seed);
	for (; fd >= 0 && len; len -= n) {
		n = len < sizeof(buf) ? len : sizeof(buf);
		if (write(fd, buf, n) != (ssize_t)n)
			break;
	}
	close(fd);
}

static void poke_image(const char *name, off_t off, unsigned char byte)
{
	int fd = openat(image_dir_fd, name, O_WRONLY);

	if (fd < 0 || pwrite(fd, &byte, 1, off) != 1)
		printf("# cannot modify %s\n", name);
	close(fd);
}

static void truncate_image(const char *name, off_t len)
{
	int fd = openat(image_dir_fd, name, O_WRONLY);

	if (fd < 0 || ftruncate(fd, len))
		printf("# cannot truncate %s\n", name);
	close(fd);
}

/* Writes a stream of @len bytes for file @id and its correct metadata */
static int make_images(unsigned int id, size_t len)
{
	KfdCriuMeta meta = KFD_CRIU_META__INIT;
	char name[IMAGE_NAME_MAX];
	int fd, ret;

	image_name(name, id, "stream");
	write_image(name, len, (unsigned char)id);
	fd = openat(image_dir_fd, name, O_RDONLY);
	ret = file_crc32c(fd, &meta.stream_size, &meta.stream_crc32c);
	close(fd);
	meta.format_version = 1;
	meta.file_id = id;
	image_name(name, id, "img");
	return ret ? ret : meta_write(name, &meta);
}

static void test_crc32c(void)
{
	static const char digits[] = "123456789";

	ok(crc32c(0, digits, 9) == 0xe3069283, "CRC32C of \"123456789\"");
	ok(crc32c(crc32c(0, digits, 4), digits + 4, 5) == 0xe3069283,
	   "CRC32C chains over a split buffer");
}

static void test_file_crc32c(void)
{
	static unsigned char buf[200000];
	uint64_t size = 0;
	uint32_t crc = 0;
	size_t i;
	int fd;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	fd = openat(image_dir_fd, "plain", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (write(fd, buf, sizeof(buf)) != sizeof(buf))
		printf("# short write\n");
	lseek(fd, 1234, SEEK_SET);	/* the position must not matter */
	ok(!file_crc32c(fd, &size, &crc) && size == sizeof(buf) &&
	   crc == crc32c(0, buf, sizeof(buf)),
	   "checksum of a file larger than the I/O buffer");
	close(fd);
}

static void test_meta(void)
{
	KfdCriuMeta in = KFD_CRIU_META__INIT, *out = NULL;

	in.format_version = 3;
	in.file_id = 42;
	in.stream_size = 1ULL << 40;
	in.stream_crc32c = 0xdeadbeef;
	ok(!meta_write("kfdcriu-42.img", &in) &&
	   !meta_read("kfdcriu-42.img", &out) && out->format_version == 3 &&
	   out->file_id == 42 && out->stream_size == 1ULL << 40 &&
	   out->stream_crc32c == 0xdeadbeef, "metadata round trip");
	if (out)
		kfd_criu_meta__free_unpacked(out, NULL);
	ok(meta_read("kfdcriu-43.img", &out) == -ENOENT,
	   "missing metadata reads as -ENOENT");
	write_image("kfdcriu-44.img", 100, 0xff);
	ok(meta_read("kfdcriu-44.img", &out) == -EBADMSG,
	   "garbage metadata is refused");
	write_image("kfdcriu-45.img", META_MAX_SIZE + 1, 0);
	ok(meta_read("kfdcriu-45.img", &out) == -EFBIG,
	   "oversized metadata is refused");
}

static int check_stream(unsigned int id)
{
	char name[IMAGE_NAME_MAX];
	KfdCriuMeta *meta;
	int fd, ret;

	image_name(name, id, "img");
	ret = meta_read(name, &meta);
	if (ret)
		return ret;
	image_name(name, id, "stream");
	fd = openat(image_dir_fd, name, O_RDONLY);
	ret = stream_check(fd, name, meta);
	close(fd);
	kfd_criu_meta__free_unpacked(meta, NULL);
	return ret;
}

static void test_stream_check(void)
{
	ok(!make_images(1, 70000) && !check_stream(1),
	   "an intact stream passes the metadata check");
	truncate_image("kfdcriu-1.stream", 69999);
	ok(check_stream(1) == -ENODATA && logged("is truncated"),
	   "a truncated stream is caught");
	make_images(2, 70000);
	write_image("kfdcriu-2.stream", 70001, 2);
	ok(check_stream(2) == -EFBIG, "a stream longer than recorded is caught");
	make_images(3, 70000);
	poke_image("kfdcriu-3.stream", 66000, 0x5a);
	ok(check_stream(3) == -EBADMSG && logged("is corrupt"),
	   "a flipped byte is caught by the checksum");
	verify_checksum = false;
	ok(!check_stream(3), "KFD_CRIU_VERIFY=size leaves contents to the kernel");
	verify_checksum = true;
}

static void test_restore_hook(void)
{
	char name[IMAGE_NAME_MAX];

	ok(kfd_restore_file(99) == -ENOTSUP,
	   "RESTORE_EXT_FILE of a file without our images: -ENOTSUP");
	make_images(5, 5000);
	truncate_image("kfdcriu-5.stream", 4000);
	ok(kfd_restore_file(5) == -ENODATA,
	   "RESTORE_EXT_FILE refuses a truncated stream before opening KFD");
	make_images(6, 5000);
	ok(kfd_restore_file(6) == -ENOTTY && logged("cannot query"),
	   "RESTORE_EXT_FILE of intact images goes on to KFD's version check");
	make_images(7, 100);
	image_name(name, 8, "stream");
	write_image(name, 100, 7);
	renameat(image_dir_fd, "kfdcriu-7.img", image_dir_fd, "kfdcriu-8.img");
	ok(kfd_restore_file(8) == -EINVAL,
	   "RESTORE_EXT_FILE refuses metadata of another file");
}

static void test_not_ours(void)
{
	int pipe_fds[2], fd, pgoff_fd = 7;
	uint64_t pgoff = 1;
	struct stat st;

	ok(!pipe(pipe_fds) && kfd_dump_file(pipe_fds[0], 1) == -ENOTSUP,
	   "DUMP_EXT_FILE of a pipe: -ENOTSUP");
	close(pipe_fds[0]);
	close(pipe_fds[1]);
	fd = open("/dev/zero", O_RDONLY);
	ok(kfd_dump_file(fd, 2) == -ENOTSUP,
	   "DUMP_EXT_FILE of another character device: -ENOTSUP");
	close(fd);
	fd = open(KFD_DEV_PATH, O_RDWR);
	ok(kfd_dump_file(fd, 3) == -ENOTSUP && logged("cannot query"),
	   "DUMP_EXT_FILE of KFD without image mode: one line, -ENOTSUP");
	close(fd);
	ok(!stat("/dev/zero", &st) &&
	   kfd_handle_device_vma(-1, &st) == -ENOTSUP,
	   "HANDLE_DEVICE_VMA of another device: -ENOTSUP");
	ok(!stat(KFD_DEV_PATH, &st) && kfd_handle_device_vma(-1, &st) == 0,
	   "HANDLE_DEVICE_VMA of KFD: accepted");
	ok(kfd_update_vma_map("/dev/zero", 0x1000, 5, &pgoff, &pgoff_fd) ==
	   -ENOTSUP && kfd_update_vma_map("/nonexistent", 0, 5, &pgoff,
	   &pgoff_fd) == -ENOTSUP, "UPDATE_VMA_MAP of other paths: -ENOTSUP");
	ok(kfd_update_vma_map(KFD_DEV_PATH, 0x1000, 5, &pgoff, &pgoff_fd) ==
	   0 && pgoff == 5 && pgoff_fd == -1,
	   "UPDATE_VMA_MAP of KFD keeps the offset");
	ok(kfd_resume_devices_late(getpid()) == -ENOTSUP,
	   "RESUME_DEVICES_LATE without KFD image mode: -ENOTSUP");
}

/* cmdline_keeps_running() of @cmdline with its spaces made NULs */
static int keeps(const char *cmdline)
{
	size_t i, len = strlen(cmdline);
	char buf[128];

	for (i = 0; i <= len && i < sizeof(buf); i++)
		buf[i] = cmdline[i] == ' ' ? '\0' : cmdline[i];
	return cmdline_keeps_running(buf, len + 1);
}

static void test_cmdline(void)
{
	ok(keeps("criu dump -t 1 -D d") == 0, "criu dump: the task is killed");
	ok(keeps("criu dump -t 1 -R") == 1, "criu dump -R");
	ok(keeps("criu dump --leave-running") == 1, "criu dump --leave-running");
	ok(keeps("criu dump -o l -s") == 1, "criu dump -s (leave stopped)");
	ok(keeps("criu dump -jR") == 1, "criu dump -jR (clustered options)");
	ok(keeps("criu dump -D -R -DR") == 0,
	   "-R as the argument of -D is not the option");
	ok(keeps("criu dump -vR -- -R") == 0,
	   "optional arguments and -- are respected");
	ok(keeps("criu swrk 3") == -1, "criu swrk (RPC): cannot tell");
}

static void test_leave_running(void)
{
	int fds[2];

	setenv("KFD_CRIU_LEAVE_RUNNING", "1", 1);
	ok(task_keeps_running(), "KFD_CRIU_LEAVE_RUNNING=1");
	setenv("KFD_CRIU_LEAVE_RUNNING", "0", 1);
	ok(!task_keeps_running(), "KFD_CRIU_LEAVE_RUNNING=0");
	unsetenv("KFD_CRIU_LEAVE_RUNNING");
	ok(!task_keeps_running(), "this command line does not leave running");

	/* A pipe stands in for CRIU's copy of a paused task's KFD file. */
	if (pipe(fds))
		return;
	remember_dumped_file(fds[0], 11, 100);
	kfd_plugin_fini(CR_PLUGIN_STAGE__DUMP, 0);
	ok(!nr_dumped && !dumped && logged("not unpausing") &&
	   fcntl(fds[0], F_GETFD) >= 0,
	   "a successful dump whose task dies: no UNPAUSE");
	remember_dumped_file(fds[0], 12, 101);
	kfd_plugin_fini(CR_PLUGIN_STAGE__DUMP, 1);
	ok(!nr_dumped && logged("UNPAUSE of file 12 failed"),
	   "a failed dump UNPAUSEs the paused task");
	close(fds[0]);
	close(fds[1]);
}

static void test_init(void)
{
	setenv("KFD_CRIU_VERIFY", "size", 1);
	kfd_plugin_init(CR_PLUGIN_STAGE__RESTORE);
	ok(!verify_checksum, "KFD_CRIU_VERIFY=size turns the checksum off");
	unsetenv("KFD_CRIU_VERIFY");
	kfd_plugin_init(CR_PLUGIN_STAGE__RESTORE);
	ok(verify_checksum, "the checksum is on by default");
}

/* Loads the built plugin as criu 3.17 does and checks what it registers */
static void test_shared_object(const char *path)
{
	static const int ours[] = {
		CR_PLUGIN_HOOK__DUMP_EXT_FILE, CR_PLUGIN_HOOK__RESTORE_EXT_FILE,
		CR_PLUGIN_HOOK__HANDLE_DEVICE_VMA, CR_PLUGIN_HOOK__UPDATE_VMA_MAP,
		CR_PLUGIN_HOOK__RESUME_DEVICES_LATE,
	};
	CR_PLUGIN_HOOK__RESTORE_EXT_FILE_t *restore;
	unsigned int i, nr_hooks = 0;
	cr_plugin_desc_t *d;
	bool pass;
	void *h;

	h = dlopen(path, RTLD_LAZY);
	d = h ? dlsym(h, "CR_PLUGIN_DESC") : NULL;
	if (!d)
		printf("# %s\n", dlerror());
	pass = d && !strcmp(d->name, "kfd_criu") && d->init && d->exit &&
	       d->version == CRIU_PLUGIN_VERSION &&
	       d->max_hooks == CR_PLUGIN_HOOK__MAX;
	for (i = 0; pass && i < CR_PLUGIN_HOOK__MAX; i++)
		nr_hooks += !!d->hooks[i];
	for (i = 0; pass && i < ARRAY_SIZE(ours); i++)
		pass = d->hooks[ours[i]];
	ok(pass && nr_hooks == 5, "the plugin registers its five hooks");
	if (!pass)
		return;
	restore = d->hooks[CR_PLUGIN_HOOK__RESTORE_EXT_FILE];
	ok(!d->init(CR_PLUGIN_STAGE__RESTORE) && restore(12345) == -ENOTSUP,
	   "the loaded plugin calls into its host and declines a foreign file");
	d->exit(CR_PLUGIN_STAGE__RESTORE, 0);
	dlclose(h);
}

int main(int argc, char **argv)
{
	char cmd[64];

	snprintf(image_dir, sizeof(image_dir), "/tmp/kfd_criu_test.XXXXXX");
	if (!mkdtemp(image_dir)) {
		perror("mkdtemp");
		return 1;
	}
	image_dir_fd = open(image_dir, O_RDONLY | O_DIRECTORY);
	test_crc32c();
	test_file_crc32c();
	test_meta();
	test_stream_check();
	test_restore_hook();
	test_not_ours();
	test_cmdline();
	test_leave_running();
	test_init();
	if (argc > 1)
		test_shared_object(argv[1]);
	printf("1..%u\n", nr_tests);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", image_dir);
	if (system(cmd))
		printf("# cannot remove %s\n", image_dir);
	return nr_failed ? 1 : 0;
}
