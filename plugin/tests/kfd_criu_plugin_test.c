// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: host unit tests of the kfd_criu and drm_reattach plugins
 *
 * Both plugins' sources are built in here, drm_reattach's CR_PLUGIN_DESC
 * under a name of its own (drm_reattach_desc), with /dev/null standing in for
 * /dev/kfd (KFD_DEV_PATH, set by the Makefile), and with stand-ins for the
 * two functions the criu binary exports to plugins: an images directory in
 * /tmp and a log that the checks can read. No GPU, KFD or CRIU is needed.
 * Given the built plugins' paths (kfd_criu's, the stand-in for CRIU's
 * amdgpu plugin, drm_reattach's), it also loads them the way criu does.
 * Prints TAP; exits 1 if any check fails.
 *
 * The plugin's ioctl(), stat() and openat() calls go to the harness
 * (criu_play.c): with fake_kfd.on it answers for KFD, it shows fake render
 * nodes as devices and hides GPUs as a device cgroup does; else they pass
 * through. Its kcmp() and kill() go to stand-ins below: the fake dumped
 * task is this process, and only the tests' own children may be killed.
 */
#define ioctl fake_ioctl
#define openat fake_openat
#define stat(path, buf) fake_stat(path, buf)
#define fstat(fd, buf) fake_fstat(fd, buf)
#define fstatfs fake_fstatfs
#define syscall fake_syscall
#define kill fake_kill
long fake_syscall(long nr, ...);
int fake_kill(int pid, int sig);
#define read(fd, buf, len) fake_read(fd, buf, len)
#include "../plugin_common.c"
#include "../kfd_criu_options.c"
#include "../kfd_criu_plugin.c"
#include "../kfd_criu_gpus.c"
#include "../kfd_criu_shm.c"
#include "../kfd_criu_dump_end.c"
/*
 * The second plugin, in the same program: its CR_PLUGIN_DESC under a name
 * of its own, which its hooks' constructors fill.
 */
#define CR_PLUGIN_DESC drm_reattach_desc
extern cr_plugin_desc_t drm_reattach_desc;
#include "../drm_reattach.c"
#include "../drm_reattach_maps.c"
#undef CR_PLUGIN_DESC
#undef ioctl
#undef openat
#undef stat
#undef fstat
#undef fstatfs
#undef syscall
#undef kill
#undef read

#include <dirent.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

int ioctl(int fd, unsigned long request, ...);
int openat(int dirfd, const char *path, int flags, ...);
int stat(const char *path, struct stat *buf);
int fstat(int fd, struct stat *buf);
int fstatfs(int fd, struct statfs *buf);
int kill(pid_t pid, int sig);
long syscall(long nr, ...);

/* The pid that the fake KFD's PROCESS_INFO answers: a task of the dump */
#define FAKE_TASK	4242

/* A child of the tests that the plugin may kill, or 0 */
static pid_t killable;
static int killed_signal;

int fake_kill(int pid, int sig)
{
	if (pid != killable || !pid) {
		printf("# the plugin would kill pid %d, which is no test child\n", pid);
		errno = EPERM;
		return -1;
	}
	killed_signal = sig;
	return kill(pid, sig);
}

/* kcmp() with the fake dumped task being this process */
long fake_syscall(long nr, ...)
{
	long a[5];
	va_list ap;
	int i;

	va_start(ap, nr);
	for (i = 0; i < 5; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	for (i = 0; nr == SYS_kcmp && i < 2; i++)
		a[i] = a[i] == FAKE_TASK ? getpid() : a[i];
	return syscall(nr, a[0], a[1], a[2], a[3], a[4]);
}
ssize_t read(int fd, void *buf, size_t len);

static char image_dir[32];
static int image_dir_fd = -1;
static char last_log[8192];	/* the log since the last check */
static unsigned int worst_level = LOG_DEBUG + 1;	/* its most severe level */
static unsigned int nr_tests, nr_failed;

int criu_get_image_dir(void)
{
	return image_dir_fd;
}

void print_on_level(unsigned int loglevel, const char *fmt, ...)
{
	va_list ap;

	size_t len = strlen(last_log);
	char *line = last_log + len;

	if (loglevel < worst_level)
		worst_level = loglevel;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(last_log) - len, fmt, ap);
	va_end(ap);
	printf("# [%u] %s", loglevel, line);
}

/* Each check sees what was logged since the one before it */
static void ok(bool pass, const char *name)
{
	last_log[0] = '\0';
	worst_level = LOG_DEBUG + 1;
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

/* Writes a stream of @len bytes for file @id and its correct metadata */
static int make_images(unsigned int id, size_t len)
{
	KfdCriuMeta meta = KFD_CRIU_META__INIT;
	char name[IMAGE_NAME_MAX];

	image_name(name, id, "stream");
	write_image(name, len, (unsigned char)id);
	meta.format_version = 1;
	meta.file_id = id;
	meta.stream_size = len;
	return kfd_criu_write_meta(id, &meta);
}

static void test_read_file(void)
{
	static char buf[200000], back[sizeof(buf) + 1];
	size_t i;
	int fd;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (char)(i * 7 + 3);
	fd = openat(image_dir_fd, "plain", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (write(fd, buf, sizeof(buf)) != sizeof(buf))
		printf("# short write\n");
	close(fd);
	ok(kfd_criu_read_file(image_dir_fd, "plain", back, sizeof(back)) ==
	   sizeof(buf) && !memcmp(buf, back, sizeof(buf)) && !back[sizeof(buf)],
	   "kfd_criu_read_file() reads a whole file and terminates it");
	ok(kfd_criu_read_file(image_dir_fd, "plain", back, 1001) == 1000 &&
	   !memcmp(buf, back, 1000) && !back[1000],
	   "kfd_criu_read_file() stops at its buffer's size");
	ok(kfd_criu_read_file(image_dir_fd, "missing", back, 10) == -ENOENT && !back[0],
	   "kfd_criu_read_file() of a missing file: -ENOENT and an empty string");
}

static void test_meta(void)
{
	KfdCriuMeta in = KFD_CRIU_META__INIT, *out = NULL;

	in.format_version = 3;
	in.file_id = 42;
	in.stream_size = 1ULL << 40;
	ok(!kfd_criu_write_meta(42, &in) && !kfd_criu_read_meta(42, &out) &&
	   out->format_version == 3 && out->file_id == 42 &&
	   out->stream_size == 1ULL << 40 && !out->has_alias_of &&
	   !out->has_render_gpu_id, "metadata round trip");
	if (out)
		kfd_criu_meta__free_unpacked(out, NULL);
	ok(kfd_criu_read_meta(43, &out) == -ENOENT && !out && !last_log[0],
	   "missing metadata reads as -ENOENT, not logged");
	write_image("kfdcriu-44.img", 100, 0xff);
	ok(kfd_criu_read_meta(44, &out) == -EBADMSG && logged("kfdcriu-44.img"),
	   "garbage metadata is refused and logged");
	write_image("kfdcriu-45.img", META_MAX_SIZE + 1, 0);
	ok(kfd_criu_read_meta(45, &out) == -EFBIG, "oversized metadata is refused");
}

static void test_restore_hook(void)
{
	ok(kfd_restore_file(99) == -ENOTSUP,
	   "RESTORE_EXT_FILE of a file without our images: -ENOTSUP");
	make_images(5, 5000);
	unlinkat(image_dir_fd, "kfdcriu-5.stream", 0);
	ok(kfd_restore_file(5) == -ENOENT && logged("RESTORE from kfdcriu-5"),
	   "RESTORE_EXT_FILE without its stream file: -ENOENT, logged");
	make_images(6, 5000);
	ok(kfd_restore_file(6) == -EIO &&
	   logged("file 6: the kernel has no KFD CRIU image mode") &&
	   logged("file 6: RESTORE from kfdcriu-6.stream failed"),
	   "RESTORE_EXT_FILE of intact images goes on to KFD's image mode probe");
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
	ok(kfd_dump_file(fd, 3) == -ENOTSUP &&
	   strstr(last_log, "no KFD CRIU image mode") &&
	   !strstr(last_log, "Error") &&
	   !strstr(strstr(last_log, "image mode") + 1, "image mode"),
	   "DUMP_EXT_FILE of KFD without image mode: one info line, -ENOTSUP");
	ok(kfd_dump_file(fd, 4) == -ENOTSUP && !last_log[0],
	   "... and only once");
	close(fd);
	ok(!stat("/dev/zero", &st) &&
	   kfd_handle_device_vma(-1, &st) == -ENOTSUP,
	   "HANDLE_DEVICE_VMA of another device: -ENOTSUP");
	ok(!stat(KFD_DEV_PATH, &st) && kfd_handle_device_vma(-1, &st) == -ENOTSUP,
	   "HANDLE_DEVICE_VMA of KFD without image mode: -ENOTSUP");
	ok(kfd_update_vma_map("/dev/zero", 0x1000, 5, &pgoff, &pgoff_fd) ==
	   -ENOTSUP && kfd_update_vma_map("/nonexistent", 0, 5, &pgoff,
	   &pgoff_fd) == -ENOTSUP, "UPDATE_VMA_MAP of other paths: -ENOTSUP");
	ok(kfd_update_vma_map(KFD_DEV_PATH, 0x1000, 5, &pgoff, &pgoff_fd) ==
	   1 && pgoff == 5 && pgoff_fd == -1,
	   "UPDATE_VMA_MAP of KFD without moved offsets keeps the offset");
	ok(kfd_resume_devices_late(getpid()) == -ENOTSUP,
	   "RESUME_DEVICES_LATE without KFD image mode: -ENOTSUP");
}

static void test_leave_running(void)
{
	int fds[2];

	/* A pipe stands in for CRIU's copy of a paused task's KFD file. */
	if (pipe(fds))
		return;
	setenv("KFD_CRIU_LEAVE_RUNNING", "0", 1);
	remember_dumped_file(fds[0], 11, 100);
	kfd_plugin_fini(CR_PLUGIN_STAGE__DUMP, 0);
	ok(!nr_dumped && !dumped && logged("file 11: not unpausing") &&
	   !logged("UNPAUSE") && fcntl(fds[0], F_GETFD) >= 0,
	   "KFD_CRIU_LEAVE_RUNNING=0, a successful dump: no UNPAUSE");
	remember_dumped_file(fds[0], 12, 101);
	kfd_plugin_fini(CR_PLUGIN_STAGE__DUMP, 1);
	ok(!nr_dumped && logged("file 12: UNPAUSE failed"),
	   "a failed dump UNPAUSEs the paused task");
	unsetenv("KFD_CRIU_LEAVE_RUNNING");
	remember_dumped_file(fds[0], 13, 102);
	kfd_plugin_fini(CR_PLUGIN_STAGE__DUMP, 0);
	ok(!nr_dumped && logged("file 13: UNPAUSE failed"),
	   "KFD_CRIU_LEAVE_RUNNING unset, a successful dump: UNPAUSE");
	remember_dumped_file(fds[0], 14, 103);
	remember_dumped_file(fds[0], 15, 103);
	kfd_plugin_fini(CR_PLUGIN_STAGE__DUMP, 0);
	ok(logged("file 15: same process as file 14") &&
	   logged("file 14: UNPAUSE failed") && !logged("file 15: UNPAUSE"),
	   "a second file of a dumped process is an alias: one UNPAUSE");
	close(fds[0]);
	close(fds[1]);
}

/**
 * struct criu_release - what a CRIU release's verify_plugin() accepts
 * @name: the release
 * @version: its CRIU_PLUGIN_VERSION
 * @max_hooks: its CR_PLUGIN_HOOK__MAX
 *
 * Read from criu/include/criu-plugin.h at each tag (4.3: Debian's
 * libcriu-dev 4.3-1~exp2). verify_plugin() in criu/plugin.c, the same in
 * every release, refuses a plugin whose version or max_hooks is above its
 * own; criu then skips it without a word above debug level.
 */
struct criu_release {
	const char *name;
	unsigned int version;
	unsigned int max_hooks;
};

static const struct criu_release criu_releases[] = {
	{ "3.17", 0x200, 10 }, { "3.19", 0x200, 10 }, { "4.0", 0x200, 12 },
	{ "4.1", 0x200, 12 }, { "4.2", 0x200, 13 }, { "4.3", 0x300, 17 },
};

/*
 * verify_plugin() of each release from 3.17 to 4.3 takes descriptor @d if
 * and only if it is that of the header's release or a later one; 4.1 added
 * no hook, so 4.0 also takes a build against 4.1's header. A build against
 * Debian 12's 3.17 header loads into all six.
 */
static void test_verify_plugin(const cr_plugin_desc_t *d)
{
	static const int number[] = { 317, 319, 400, 410, 420, 430 };
	const int first = CRIU_HEADER == 410 ? 400 : CRIU_HEADER;
	const struct criu_release *r;
	unsigned int i, wrong = 0;
	char name[200];
	bool loads;

	for (i = 0; i < ARRAY_SIZE(criu_releases); i++) {
		r = &criu_releases[i];
		loads = d->version <= r->version && d->max_hooks <= r->max_hooks;
		if (loads == (number[i] >= first))
			continue;
		printf("# CRIU %s %s it: version %#x, %u hooks; it takes %#x, %u\n", r->name,
		       loads ? "loads" : "refuses", d->version, d->max_hooks, r->version,
		       r->max_hooks);
		wrong++;
	}
	for (i = 0; i < ARRAY_SIZE(number) && number[i] < first; i++)
		;
	snprintf(name, sizeof(name), "verify_plugin() of CRIU %s to 4.3 loads the built plugin (%#x, %u hooks)%s",
		 criu_releases[i].name, d->version, d->max_hooks,
		 i ? ", of earlier releases refuses it" : "");
	ok(!wrong, name);
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
	test_verify_plugin(d);
	restore = d->hooks[CR_PLUGIN_HOOK__RESTORE_EXT_FILE];
#ifdef KFD_CRIU_RESTORE_RETRY
	ok(restore(12345, &(bool){ true }) == -ENOTSUP,
#else
	ok(restore(12345) == -ENOTSUP,
#endif
	   "the loaded plugin calls into its host and declines a foreign file");
	d->exit(CR_PLUGIN_STAGE__RESTORE, 0);
	dlclose(h);
}

/**
 * struct gpu_map_case - a KFD_CRIU_GPU_MAP value and what parsing gives
 * @spec: the value
 * @ret: parse_gpu_map()'s return value
 * @img: with @ret 0, the image gpu_id each of the three local GPUs takes
 */
struct gpu_map_case {
	const char *spec;
	int ret;
	uint32_t img[3];
};

/* Local GPUs 0x1234, 17185 (0x4321) and 0xffffffff */
static const struct gpu_map_case gpu_map_cases[] = {
	{ "", 0, { 0, 0, 0 } },
	{ "7=4660", 0, { 7, 0, 0 } },
	{ "0x10=0x1234", 0, { 0x10, 0, 0 } },
	{ "0X10=4660,5=0x4321", 0, { 0x10, 5, 0 } },
	{ "4294967295=4294967295", 0, { 0, 0, 0xffffffff } },
	{ "1=0xABCDEF", -ENODEV, { 0 } },
	{ "1=4661", -ENODEV, { 0 } },
	{ "=", -EINVAL, { 0 } },
	{ "1=", -EINVAL, { 0 } },
	{ "=4660", -EINVAL, { 0 } },
	{ "1", -EINVAL, { 0 } },
	{ "1=4660,", -EINVAL, { 0 } },
	{ ",1=4660", -EINVAL, { 0 } },
	{ "1=4660,,2=17185", -EINVAL, { 0 } },
	{ "0=4660", -EINVAL, { 0 } },
	{ "1=0", -EINVAL, { 0 } },
	{ "-1=4660", -EINVAL, { 0 } },
	{ "+1=4660", -EINVAL, { 0 } },
	{ " 1=4660", -EINVAL, { 0 } },
	{ "1 =4660", -EINVAL, { 0 } },
	{ "1= 4660", -EINVAL, { 0 } },
	{ "0x=4660", -EINVAL, { 0 } },
	{ "0xg=4660", -EINVAL, { 0 } },
	{ "12a=4660", -EINVAL, { 0 } },
	{ "4294967296=4660", -EINVAL, { 0 } },
	{ "99999999999999999999999=4660", -EINVAL, { 0 } },
	{ "1=4660;2=17185", -EINVAL, { 0 } },
	{ "1:4660", -EINVAL, { 0 } },
	{ "1=4660,2=4660", -EINVAL, { 0 } },
	{ "1=4660,1=17185", -EINVAL, { 0 } },
};

static void test_gpu_map_spec(void)
{
	static const uint32_t local[3] = { 0x1234, 0x4321, 0xffffffff };
	struct kfd_criu_gpu_map map[3];
	const struct gpu_map_case *c;
	unsigned int i, j, failed = 0;
	int ret;

	for (i = 0; i < ARRAY_SIZE(gpu_map_cases); i++) {
		c = &gpu_map_cases[i];
		memset(map, 0, sizeof(map));
		for (j = 0; j < 3; j++) {
			map[j].local_gpu_id = local[j];
			map[j].drm_fd = -1;
		}
		last_log[0] = '\0';
		ret = parse_gpu_map(c->spec, map, 3);
		for (j = 0; !ret && j < 3; j++)
			ret = map[j].image_gpu_id != c->img[j] ? -EDOM : 0;
		if (ret != c->ret || (ret && !logged("KFD_CRIU_GPU_MAP"))) {
			printf("# \"%s\": %d, expected %d\n", c->spec, ret, c->ret);
			failed++;
		}
	}
	ok(!failed, "KFD_CRIU_GPU_MAP: good and bad values");
	ok(parse_gpu_map("1=2", map, 0) == -ENODEV,
	   "KFD_CRIU_GPU_MAP on a machine without GPUs: -ENODEV");
	for (j = 0; j < 3; j++)
		map[j].image_gpu_id = 0;
	ok(parse_gpu_map("1=4660,x", map, 3) == -EINVAL && logged("at \"x\""),
	   "a bad KFD_CRIU_GPU_MAP says where");
}

static char fake_root[64];	/* a fake /sys and /dev for the GPU tests */

/* mkdir -p of @path */
static void make_dirs(const char *path)
{
	char dir[256], *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	for (slash = dir; (slash = strchr(slash + 1, '/'));) {
		*slash = '\0';
		mkdir(dir, 0700);
		*slash = '/';
	}
	mkdir(dir, 0700);
}

/* Writes @text to the fake root's @file of topology node @node */
static void topo_file(int node, const char *file, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s" TOPOLOGY "/%d", fake_root, node);
	make_dirs(path);
	snprintf(path, sizeof(path), "%s" TOPOLOGY "/%d/%s", fake_root, node,
		 file);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* A regular file stands in for render node renderD<minor> */
static void fake_render_node(int minor)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/dev/dri", fake_root);
	make_dirs(path);
	snprintf(path, sizeof(path), "%s/dev/dri/renderD%d", fake_root, minor);
	fd = open(path, O_RDWR | O_CREAT, 0600);
	close(fd);
}

/* The fake dumped task's /dev/kfd file, or -1 */
static int fake_task_kfd = -1;

/*
 * Task FAKE_TASK of the fake root's /proc: traced by this "criu", with
 * this process's fds, /dev/kfd among them.
 */
static void fake_dumped_task(void)
{
	char path[300], link[64];
	FILE *f;

	if (!fake_root[0])
		return;
	snprintf(path, sizeof(path), "%s/proc/%d", fake_root, FAKE_TASK);
	make_dirs(path);
	strcat(path, "/status");
	f = fopen(path, "w");
	if (!f || fprintf(f, "Name:\tfake\nPid:\t%d\nTracerPid:\t%d\n", FAKE_TASK, getpid()) < 0)
		printf("# cannot make %s\n", path);
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/proc/%d/fd", fake_root, FAKE_TASK);
	snprintf(link, sizeof(link), "/proc/self/fd");
	unlink(path);
	if (symlink(link, path))
		printf("# cannot link %s\n", path);
	if (fake_task_kfd < 0)
		fake_task_kfd = open(KFD_DEV_PATH, O_RDWR | O_CLOEXEC);
}

/* criu --stream, played: criu-image-streamer's socket and criu's end */
static int streamer_fds[2] = { -1, -1 };

/* Listens on the images directory's capture socket; connects if @connected */
static void streamer_start(bool connected)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/streamer-capture.sock", image_dir);
	streamer_fds[0] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (bind(streamer_fds[0], (struct sockaddr *)&addr, sizeof(addr)) ||
	    listen(streamer_fds[0], 1))
		printf("# cannot listen on %s\n", addr.sun_path);
	if (!connected)
		return;
	streamer_fds[1] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (connect(streamer_fds[1], (struct sockaddr *)&addr, sizeof(addr)))
		printf("# cannot connect to %s\n", addr.sun_path);
}

/* Closes both ends; leaves the socket file behind if @stale */
static void streamer_stop(bool stale)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (streamer_fds[i] >= 0)
			close(streamer_fds[i]);
		streamer_fds[i] = -1;
	}
	if (!stale)
		unlinkat(image_dir_fd, "streamer-capture.sock", 0);
}

/* Forgets this restore's GPUs, closing their render files */
static void forget_gpus(void)
{
	int i;

	for (i = 0; i < nr_gpus; i++)
		if (gpu_map[i].drm_fd >= 0)
			close(gpu_map[i].drm_fd);
	nr_gpus = -1;
}

static void test_topology(void)
{
	char dir[128];

	snprintf(fake_root, sizeof(fake_root), "%s/root", image_dir);
	snprintf(dir, sizeof(dir), "%s" TOPOLOGY, fake_root);
	kfd_criu_root = "/nonexistent";
	ok(!read_topology() && !nr_gpus, "no KFD topology: no GPUs");
	kfd_criu_root = fake_root;
	make_dirs(dir);
	ok(!read_topology() && !nr_gpus, "an empty topology: no GPUs");
	topo_file(0, "gpu_id", "0\n");
	topo_file(0, "properties", "cpu_cores_count 8\nsimd_count 0\n");
	ok(!read_topology() && !nr_gpus, "a CPU node is not a GPU");
	topo_file(1, "gpu_id", "4660\n");
	topo_file(1, "properties",
		  "cpu_cores_count 0\nsimd_count 256\ndrm_render_minor 129\n"
		  "hive_id 0\n");
	topo_file(2, "gpu_id", "17185\n");
	topo_file(2, "properties", "simd_count 128\n");
	topo_file(4, "gpu_id", "99\n");	/* after a gap: not a node */
	ok(!read_topology() && nr_gpus == 2 &&
	   gpu_map[0].local_gpu_id == 4660 && gpu_minor[0] == 129 &&
	   gpu_map[1].local_gpu_id == 17185 && gpu_minor[1] == -1 &&
	   gpu_map[0].drm_fd == -1 && gpu_map[1].drm_fd == -1 &&
	   !gpu_map[0].image_gpu_id && !gpu_map[1].image_gpu_id &&
	   !gpu_map[0].reserved && !gpu_map[1].reserved,
	   "two GPU nodes, their gpu_ids and render minors, no file open");
	ok(gpu_of_minor(129) == 0 && gpu_of_minor(128) == -1 &&
	   gpu_of_minor(130) == -1, "render minor 129 is GPU 4660, no other");
	nr_gpus = -1;
	ok(gpu_of_minor(129) == -1, "no GPU of any minor before the topology");

	unsetenv("KFD_CRIU_GPU_MAP");
	fake_render_node(129);
	ok(!restore_gpus() && nr_gpus == 2 && gpu_map[0].drm_fd >= 0 &&
	   gpu_map[1].drm_fd == -1 && logged("cannot open") &&
	   logged("renderD-1"),
	   "restore: GPU 4660's render file opens, the other's is -1, logged");
	ok(fcntl(gpu_map[0].drm_fd, F_GETFD) == FD_CLOEXEC,
	   "the render file is close-on-exec");
	ok(!restore_gpus() && !last_log[0],
	   "the restore's GPUs are set up once");
	forget_gpus();
	setenv("KFD_CRIU_GPU_MAP", "0x4321=4660", 1);
	ok(!restore_gpus() && nr_gpus == 2 &&
	   gpu_map[0].image_gpu_id == 0x4321 && !gpu_map[1].image_gpu_id,
	   "KFD_CRIU_GPU_MAP places an image GPU on a local one");
	forget_gpus();
	setenv("KFD_CRIU_GPU_MAP", "1=2", 1);
	ok(restore_gpus() == -ENODEV && logged("no such GPU") && nr_gpus == -1,
	   "KFD_CRIU_GPU_MAP naming a missing local GPU: -ENODEV, no GPUs");
	ok(restore_gpus() == -ENODEV,
	   "a failed setup fails again, not an empty map");
	kfd_criu_root = "/nonexistent";
	forget_gpus();
	ok(restore_gpus() == -ENODEV,
	   "KFD_CRIU_GPU_MAP without a topology: -ENODEV");
	kfd_criu_root = fake_root;
	unsetenv("KFD_CRIU_GPU_MAP");
	topo_file(3, "gpu_id", "x\n");
	forget_gpus();
	ok(!read_topology() && nr_gpus == 3 &&
	   gpu_map[2].local_gpu_id == 99 && gpu_minor[2] == -1,
	   "a node whose gpu_id does not parse is no GPU; the next one is");
	forget_gpus();
}

/* Writes the image of a dumped render node file of image GPU @gpu */
static void make_render_image(unsigned int id, uint32_t gpu)
{
	KfdCriuMeta meta = KFD_CRIU_META__INIT;

	meta.file_id = id;
	meta.has_render_gpu_id = true;
	meta.render_gpu_id = gpu;
	meta.has_open_flags = true;
	meta.open_flags = O_RDWR;
	kfd_criu_write_meta(id, &meta);
}

/* Whether @a and @b share one open file: a seek through one moves both */
static bool same_file(int a, int b, off_t pos)
{
	return a >= 0 && b >= 0 && lseek(a, pos, SEEK_SET) == pos &&
	       lseek(b, 0, SEEK_CUR) == pos;
}

static void test_render_files(void)
{
	KfdCriuMeta *meta = NULL;
	char path[512];
	int fd, a, b;

	/* GPUs 4660 (renderD129) and 17185 (renderD130) */
	topo_file(2, "properties", "simd_count 128\ndrm_render_minor 130\n");
	topo_file(3, "gpu_id", "0\n");
	fake_render_node(130);
	unsetenv("KFD_CRIU_GPU_MAP");
	fake_dumped_task();

	fd = openat(image_dir_fd, "plain", O_RDWR | O_APPEND);
	ok(!dump_render_file(fd, 21, 129) && !kfd_criu_read_meta(21, &meta) &&
	   meta->has_render_gpu_id && meta->render_gpu_id == 4660 &&
	   (meta->open_flags & O_APPEND) && meta->file_id == 21 &&
	   !meta->stream_size,
	   "DUMP_EXT_FILE of renderD129: GPU 4660 and its open flags");
	if (meta)
		kfd_criu_meta__free_unpacked(meta, NULL);
	ok(dump_render_file(fd, 22, 131) == -ENOTSUP &&
	   kfd_criu_read_meta(22, &meta) == -ENOENT,
	   "a render node of no KFD GPU: -ENOTSUP, no image");
	close(fd);
	forget_gpus();

	ok(!restore_gpus() && local_gpu(4660) == 0 && local_gpu(17185) == 1 &&
	   local_gpu(98) == -ENODEV,
	   "an image GPU goes to the local GPU of its gpu_id");
	forget_gpus();
	setenv("KFD_CRIU_GPU_MAP", "4660=17185", 1);
	ok(!restore_gpus() && local_gpu(4660) == 1 && local_gpu(17185) == 1,
	   "a KFD_CRIU_GPU_MAP entry overrides the same gpu_id");
	forget_gpus();
	unsetenv("KFD_CRIU_GPU_MAP");

	a = kfd_restore_file(21);
	ok(a >= 0 && !restore_gpus() && same_file(a, gpu_map[0].drm_fd, 1234) &&
	   !same_file(gpu_map[1].drm_fd, a, 77) &&
	   (fcntl(a, F_GETFL) & O_APPEND),
	   "render file first: RESTORE's GPU map gets the same file");
	make_render_image(23, 4660);
	b = kfd_restore_file(23);
	ok(b >= 0 && b != a && same_file(a, b, 4321),
	   "a second render file of that GPU: the same file again");
	close(a);
	close(b);
	forget_gpus();
	ok(!restore_gpus() && (a = kfd_restore_file(21)) >= 0 &&
	   same_file(gpu_map[0].drm_fd, a, 777) &&
	   a != gpu_map[0].drm_fd && a != gpu_map[1].drm_fd,
	   "RESTORE's GPU map first: the render file is a new fd of its file");
	close(a);
	forget_gpus();
	setenv("KFD_CRIU_GPU_MAP", "4660=17185", 1);
	a = kfd_restore_file(21);
	ok(a >= 0 && same_file(a, gpu_map[1].drm_fd, 55) &&
	   !same_file(gpu_map[0].drm_fd, a, 66),
	   "KFD_CRIU_GPU_MAP moves the render file to the mapped GPU");
	close(a);
	forget_gpus();
	unsetenv("KFD_CRIU_GPU_MAP");
	make_render_image(24, 98);
	ok(kfd_restore_file(24) == -ENODEV &&
	   logged("no render node for GPU 0x62"),
	   "a render file of a GPU this machine lacks: -ENODEV, logged");
	make_render_image(25, 17185);
	snprintf(path, sizeof(path), "%s/dev/dri/renderD130", fake_root);
	unlink(path);
	forget_gpus();
	ok(kfd_restore_file(25) == -ENODEV && logged("renderD130"),
	   "a render file of a GPU whose render node does not open: -ENODEV");
	forget_gpus();
}

#include "criu_play.c"
#include "kfd_criu_drm_test.c"
#include "kfd_criu_options_test.c"
#include "kfd_criu_hooks_test.c"
#include "two_plugins_test.c"

static void test_offsets(void)
{
	struct kfd_criu_offset_map moved[] = {
		MOVED(0x1000, 0x9000, 4660), MOVED(2ULL << 62, 3ULL << 62, 4660),
		MOVED(0x5000, 0x5000, 4660),
	};
	struct stat st = { .st_mode = S_IFCHR };
	uint64_t pgoff = 0;
	int fd = 7;

	st.st_rdev = makedev(DRM_MAJOR, 128);
	ok(dev_kind(st.st_mode, st.st_rdev) == DEV_RENDER,
	   "renderD128 is a render node");
	st.st_rdev = makedev(DRM_MAJOR, 191);
	ok(dev_kind(st.st_mode, st.st_rdev) == DEV_RENDER,
	   "renderD191 is a render node");
	st.st_rdev = makedev(DRM_MAJOR, 0);
	ok(dev_kind(st.st_mode, st.st_rdev) == DEV_OTHER,
	   "card0 is no render node");
	st.st_rdev = makedev(DRM_MAJOR, 192);
	ok(dev_kind(st.st_mode, st.st_rdev) == DEV_OTHER,
	   "minor 192 is no render node");
	st.st_mode = S_IFREG;
	st.st_rdev = makedev(DRM_MAJOR, 128);
	ok(dev_kind(st.st_mode, st.st_rdev) == DEV_OTHER,
	   "a regular file is no device");
	st.st_mode = S_IFCHR;
	ok(kfd_handle_device_vma(-1, &st) == -ENOTSUP,
	   "HANDLE_DEVICE_VMA of a render node without KFD: -ENOTSUP");

	offsets = malloc(sizeof(moved));
	if (!offsets)
		return;
	memcpy(offsets, moved, sizeof(moved));
	nr_offsets = ARRAY_SIZE(moved);
	ok(kfd_update_vma_map(KFD_DEV_PATH, 0x7f00000000, 0x1000, &pgoff, &fd) == 1 &&
	   pgoff == 0x9000 && fd == -1, "a moved offset is translated");
	ok(kfd_update_vma_map(KFD_DEV_PATH, 0x7f00000000, 2ULL << 62, &pgoff,
			      &fd) == 1 && pgoff == 3ULL << 62,
	   "the event page's offset is translated");
	ok(kfd_update_vma_map(KFD_DEV_PATH, 0x7f00000000, 0x2000, &pgoff, &fd) == 1 &&
	   pgoff == 0x2000, "an offset that did not move stays");
	ok(kfd_update_vma_map(KFD_DEV_PATH, 0x7f00000000, 0x1800, &pgoff, &fd) == 1 &&
	   pgoff == 0x1800, "an offset inside a moved buffer is not guessed");
	ok(kfd_update_vma_map("/dev/zero", 0, 0x1000, &pgoff, &fd) == -ENOTSUP,
	   "other devices keep their offsets: -ENOTSUP");
	ok(!moved_offset(4660, 0x1000, &pgoff) && pgoff == 0x9000 &&
	   !moved_offset(17185, 0x1000, &pgoff) && pgoff == 0x1000,
	   "a render node offset moves only by an entry of its GPU");
	free(offsets);
	offsets = NULL;
	nr_offsets = 0;
}

int main(int argc, char **argv)
{
	enum criu_convention c;
	char cmd[64];

	snprintf(image_dir, sizeof(image_dir), "/tmp/kfd_criu_test.XXXXXX");
	if (!mkdtemp(image_dir)) {
		perror("mkdtemp");
		return 1;
	}
	image_dir_fd = open(image_dir, O_RDONLY | O_DIRECTORY);
	fake_kfd_share();
	test_read_file();
	test_meta();
	test_restore_hook();
	test_not_ours();
	test_leave_running();
	test_gpu_map_spec();
	test_topology();
	test_render_files();
	test_offsets();
	for (c = CRIU_3_17; c <= CRIU_4_3; c++)
		if (plays(c))
			test_play(c);
	for (c = CRIU_3_17; c <= CRIU_4_3; c++)
		if (plays(c))
			test_dump_end(c);
	test_retry_flag();
	test_inventory();
	test_dump_gpu_ids();
	test_hidden_gpu();
	test_restore_retry();
#ifndef KFD_CRIU_RESTORE_RETRY
	test_mapping_of_hidden_gpu(CRIU_3_17);
#endif
	test_mapping_of_hidden_gpu(CRIU_3_19);
	test_claims();
	test_restore_side();
	test_resume_per_task();
	test_stock_plugin(argc > 2 ? argv[2] : NULL);
	test_thunk_shm();
	test_drm_reattach();
	test_options();
	test_hooks();
	test_two_plugins(argc > 1 ? argv[1] : NULL, argc > 3 ? argv[3] : NULL);
	if (argc > 1) {
		test_shared_object(argv[1]);
		test_loaded_plugin_retry(argv[1]);
		if (CRIU_HEADER == 317 && !CRIU_DEV)
			test_one_binary(argv[1]);
	}
	printf("1..%u\n", nr_tests);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", image_dir);
	if (system(cmd))
		printf("# cannot remove %s\n", image_dir);
	return nr_failed ? 1 : 0;
}
