// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: kfd_criu - CRIU plugin for processes that hold /dev/kfd
 *
 * In CRIU image mode (KFD ioctl 1.18) the kernel serializes a process's KFD
 * state into one stream. This plugin moves the stream between the kernel
 * and CRIU's images and calls AMDKFD_IOC_CRIU_OP where CRIU lets it: pause
 * and CHECKPOINT on dump, UNPAUSE if the task goes on, RESTORE in the
 * restored task, RESUME once CRIU has re-created its mappings. Every hook
 * returns -ENOTSUP for what is not its own, so that other plugins run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/kfd_ioctl.h>

#include "criu-plugin.h"

#define LOG_PREFIX "kfd_criu: "
#include "criu-log.h"

#include "kfd_criu_plugin.pb-c.h"

#ifndef KFD_DEV_PATH
#define KFD_DEV_PATH		"/dev/kfd"
#endif
/* The first KFD ioctl minor version with CRIU image mode */
#define KFD_IMAGE_MODE_MINOR	18
#define IMAGE_NAME_MAX		32
/* kfdcriu-<id>.img is a few dozen bytes; refuse anything absurd */
#define META_MAX_SIZE		4096
/* CRC32C (Castagnoli) polynomial, bit-reflected */
#define CRC32C_POLY		0x82f63b78U
/* criu 3.17 short options with an argument, with an optional one */
#define CRIU_OPTS_WITH_ARG	"tDorJWLM"
#define CRIU_OPTS_OPT_ARG	"vx"

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
static uint32_t crc32c_table[256];
static unsigned char io_buf[1 << 16];
static bool verify_checksum = true;

static void crc32c_init(void)
{
	unsigned int i, bit;
	uint32_t crc;

	for (i = 0; i < 256; i++) {
		crc = i;
		for (bit = 0; bit < 8; bit++)
			crc = (crc >> 1) ^ ((crc & 1) ? CRC32C_POLY : 0);
		crc32c_table[i] = crc;
	}
}

/* crc32c(0, "123456789", 9) is 0xe3069283; calls chain over a split buffer */
static uint32_t crc32c(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	if (!crc32c_table[1])
		crc32c_init();
	crc = ~crc;
	while (len--)
		crc = (crc >> 8) ^ crc32c_table[(crc ^ *p++) & 0xff];
	return ~crc;
}

/* Reads at @off until @len bytes or EOF: the byte count or -errno */
static ssize_t read_at(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pread(fd, (char *)buf + done, len - done, off + done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : (ssize_t)done;
		done += n;
	}
	return done;
}

/* Size and CRC32C of the whole file @fd, whatever its position */
static int file_crc32c(int fd, uint64_t *size, uint32_t *crc)
{
	ssize_t n;

	for (*size = 0, *crc = 0;; *size += n) {
		n = read_at(fd, io_buf, sizeof(io_buf), *size);
		if (n <= 0)
			return n;
		*crc = crc32c(*crc, io_buf, n);
	}
}

/* kfdcriu-<id>.img holds a KfdCriuMeta, kfdcriu-<id>.stream the stream */
static void image_name(char *buf, unsigned int id, const char *ext)
{
	snprintf(buf, IMAGE_NAME_MAX, "kfdcriu-%u.%s", id, ext);
}

/* Whether a file of @mode and @rdev is this system's /dev/kfd */
static bool is_kfd_rdev(mode_t mode, dev_t rdev)
{
	struct stat st;

	if (!S_ISCHR(mode) || stat(KFD_DEV_PATH, &st))
		return false;
	return S_ISCHR(st.st_mode) && st.st_rdev == rdev;
}

/* A new /dev/kfd fd of a kernel with image mode, -ENOTTY or another -errno */
static int open_kfd(bool quiet)
{
	struct kfd_ioctl_get_version_args ver = { 0 };
	int kfd, ret;

	kfd = open(KFD_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (kfd < 0 || ioctl(kfd, AMDKFD_IOC_GET_VERSION, &ver)) {
		ret = -errno;
		if (!quiet)
			pr_err("cannot %s %s: %s\n", kfd < 0 ? "open" : "query",
			       KFD_DEV_PATH, strerror(-ret));
		goto out_close;
	}
	if (ver.major_version == KFD_IOCTL_MAJOR_VERSION &&
	    ver.minor_version >= KFD_IMAGE_MODE_MINOR)
		return kfd;
	ret = -ENOTTY;
	if (!quiet)
		pr_err("the kernel's KFD ioctl interface is %u.%u, CRIU image mode needs %u.%u: not handling /dev/kfd\n",
		       ver.major_version, ver.minor_version,
		       KFD_IOCTL_MAJOR_VERSION, KFD_IMAGE_MODE_MINOR);
out_close:
	if (kfd >= 0)
		close(kfd);
	return ret;
}

static int kfd_criu_op(int kfd, __u32 op, struct kfd_ioctl_criu_args *args)
{
	args->op = op;
	args->flags = KFD_CRIU_FLAG_IMAGE;
	return ioctl(kfd, AMDKFD_IOC_CRIU_OP, args) ? -errno : 0;
}

static int meta_write(const char *name, const KfdCriuMeta *meta)
{
	uint8_t buf[META_MAX_SIZE];
	int fd, ret = 0;
	ssize_t n;
	size_t len;

	len = kfd_criu_meta__get_packed_size(meta);
	if (len > sizeof(buf))
		return -EMSGSIZE;
	kfd_criu_meta__pack(meta, buf);
	fd = openat(criu_get_image_dir(), name,
		    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	n = write(fd, buf, len);
	if (n != (ssize_t)len)	/* a short write: the file system is full */
		ret = n < 0 ? -errno : -ENOSPC;
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

/* -ENOENT means there is no such image: the file is not ours */
static int meta_read(const char *name, KfdCriuMeta **meta)
{
	uint8_t buf[META_MAX_SIZE + 1];
	ssize_t len;
	int fd;

	fd = openat(criu_get_image_dir(), name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read_at(fd, buf, sizeof(buf), 0);
	close(fd);
	if (len < 0)
		return len;
	if (len > META_MAX_SIZE)
		return -EFBIG;
	*meta = kfd_criu_meta__unpack(NULL, len, buf);
	return *meta ? 0 : -EBADMSG;
}

/*
 * Checks the stream file against its metadata before the kernel reads it:
 * its size always, its CRC32C unless KFD_CRIU_VERIFY=size.
 */
static int stream_check(int sfd, const char *name, const KfdCriuMeta *meta)
{
	uint64_t size;
	uint32_t crc;
	struct stat st;
	int ret;

	if (fstat(sfd, &st))
		return -errno;
	if ((uint64_t)st.st_size != meta->stream_size) {
		pr_err("%s is %s: %lld bytes, its metadata says %" PRIu64 "\n",
		       name, (uint64_t)st.st_size < meta->stream_size ?
		       "truncated" : "too long", (long long)st.st_size,
		       meta->stream_size);
		return (uint64_t)st.st_size < meta->stream_size ? -ENODATA : -EFBIG;
	}
	if (!verify_checksum)
		return 0;
	ret = file_crc32c(sfd, &size, &crc);
	if (ret)
		return ret;
	if (size != meta->stream_size || crc != meta->stream_crc32c) {
		pr_err("%s is corrupt: checksum CRC32C %#010x, its metadata says %#010x\n",
		       name, crc, meta->stream_crc32c);
		return -EBADMSG;
	}
	return 0;
}

/* CHECKPOINT of the paused process of @fd into the images of file @id */
static int checkpoint_to_images(int fd, unsigned int id)
{
	struct kfd_ioctl_criu_args args = { 0 };
	KfdCriuMeta meta = KFD_CRIU_META__INIT;
	char name[IMAGE_NAME_MAX];
	int sfd, ret;

	image_name(name, id, "stream");
	sfd = openat(criu_get_image_dir(), name,
		     O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (sfd < 0) {
		ret = -errno;
		pr_err("cannot create %s: %s\n", name, strerror(-ret));
		return ret;
	}
	args.image_fd = sfd;
	ret = kfd_criu_op(fd, KFD_CRIU_OP_CHECKPOINT, &args);
	if (ret) {
		pr_err("CHECKPOINT of file %u into %s failed: %s\n", id, name,
		       strerror(-ret));
		goto out_close;
	}
	ret = file_crc32c(sfd, &meta.stream_size, &meta.stream_crc32c);
	if (!ret && meta.stream_size != args.image_size)
		ret = -EIO;
	if (ret) {
		pr_err("%s does not read back as the %llu bytes written: %s\n",
		       name, args.image_size, strerror(-ret));
		goto out_close;
	}
	meta.format_version = args.format_version;
	meta.file_id = id;
	image_name(name, id, "img");
	ret = meta_write(name, &meta);
	if (ret) {
		pr_err("cannot write %s: %s\n", name, strerror(-ret));
		goto out_close;
	}
	pr_info("file %u: %" PRIu64 " bytes of image format %u, CRC32C %#010x\n",
		id, meta.stream_size, meta.format_version, meta.stream_crc32c);
out_close:
	if (close(sfd) && !ret)
		ret = -errno;
	return ret;
}

static void unpause_file(int fd, unsigned int id)
{
	struct kfd_ioctl_criu_args args = { 0 };
	int ret;

	ret = kfd_criu_op(fd, KFD_CRIU_OP_UNPAUSE, &args);
	if (ret)
		pr_err("UNPAUSE of file %u failed: %s\n", id, strerror(-ret));
	else
		pr_info("file %u: unpaused the process\n", id);
}

/* Another open of /dev/kfd in a process already dumped shares its state */
static int write_alias_meta(unsigned int id, pid_t pid)
{
	KfdCriuMeta meta = KFD_CRIU_META__INIT;
	char name[IMAGE_NAME_MAX];
	unsigned int i;

	for (i = 0; i < nr_dumped && dumped[i].pid != pid; i++)
		;
	if (i == nr_dumped)
		return -ENOENT;
	meta.file_id = id;
	meta.has_alias_of = true;
	meta.alias_of = dumped[i].id;
	image_name(name, id, "img");
	pr_info("file %u: same process as file %u\n", id, meta.alias_of);
	return meta_write(name, &meta);
}

static int remember_dumped_file(int fd, unsigned int id, pid_t pid)
{
	struct kfd_dumped_file *files;

	files = realloc(dumped, (nr_dumped + 1) * sizeof(*files));
	if (!files)
		return -ENOMEM;
	dumped = files;
	dumped[nr_dumped].fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dumped[nr_dumped].fd < 0)
		return -errno;
	dumped[nr_dumped].pid = pid;
	dumped[nr_dumped++].id = id;
	return 0;
}

/*
 * 1 if criu's NUL-separated command line @buf (NUL-terminated, @len bytes)
 * leaves the dumped tasks running or stopped, 0 if it does not, -1 if it
 * is CRIU's RPC service, whose options never show on its command line.
 */
static int cmdline_keeps_running(const char *buf, size_t len)
{
	const char *end = buf + len, *arg, *c;
	bool skip = true;	/* argv[0], or the argument of an option */

	for (arg = buf; arg < end; arg += strlen(arg) + 1) {
		if (skip) {
			skip = false;
			continue;
		}
		if (!strcmp(arg, "--"))
			break;
		if (!strcmp(arg, "--leave-running") ||
		    !strcmp(arg, "--leave-stopped"))
			return 1;
		if (!strcmp(arg, "swrk") || !strcmp(arg, "service"))
			return -1;
		if (arg[0] != '-' || arg[1] == '-')
			continue;
		for (c = arg + 1; *c && !strchr(CRIU_OPTS_OPT_ARG, *c); c++) {
			if (*c == 'R' || *c == 's')
				return 1;
			if (strchr(CRIU_OPTS_WITH_ARG, *c)) {
				skip = !c[1];
				break;
			}
		}
	}
	return 0;
}

/*
 * Whether the dumped tasks go on after a successful dump. CRIU 3.17 does
 * not tell its plugins, so KFD_CRIU_LEAVE_RUNNING decides if it is set,
 * else criu's command line. When that cannot tell, assume they go on: an
 * UNPAUSE before a kill costs nothing, a missing one hangs a live task.
 */
static bool task_keeps_running(void)
{
	const char *env = getenv("KFD_CRIU_LEAVE_RUNNING");
	ssize_t len = -1;
	int fd;

	if (env && *env)
		return strcmp(env, "0") != 0;
	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		len = read_at(fd, io_buf, sizeof(io_buf) - 1, 0);
		close(fd);
	}
	if (len < 0)
		return true;
	io_buf[len] = '\0';
	return cmdline_keeps_running((const char *)io_buf, len) != 0;
}

static int kfd_plugin_init(int stage)
{
	const char *verify = getenv("KFD_CRIU_VERIFY");

	verify_checksum = !verify || strcmp(verify, "size");
	if (stage == CR_PLUGIN_STAGE__RESTORE && !verify_checksum)
		pr_info("KFD_CRIU_VERIFY=size: image streams are not checksummed\n");
	return 0;
}

/* At the end of a dump: unpause every paused task that goes on */
static void kfd_plugin_fini(int stage, int ret)
{
	bool resume = false;
	unsigned int i;

	if (stage == CR_PLUGIN_STAGE__DUMP && nr_dumped) {
		resume = ret || task_keeps_running();
		pr_info("dump %s: %s %u paused process(es)\n", ret ? "failed" :
			"done", resume ? "unpausing" : "not unpausing", nr_dumped);
	}
	for (i = 0; i < nr_dumped; i++) {
		if (resume)
			unpause_file(dumped[i].fd, dumped[i].id);
		close(dumped[i].fd);
	}
	free(dumped);
	dumped = NULL;
	nr_dumped = 0;
}

CR_PLUGIN_REGISTER("kfd_criu", kfd_plugin_init, kfd_plugin_fini)

static int kfd_dump_file(int fd, int id)
{
	struct kfd_ioctl_criu_args args = { 0 };
	struct stat st;
	int kfd, ret;

	if (fstat(fd, &st) || !is_kfd_rdev(st.st_mode, st.st_rdev))
		return -ENOTSUP;
	/* The task's fd takes CRIU ops only: GET_VERSION needs our own. */
	kfd = open_kfd(false);
	if (kfd < 0)
		return kfd == -ENOTTY ? -ENOTSUP : kfd;
	close(kfd);

	ret = kfd_criu_op(fd, KFD_CRIU_OP_PROCESS_INFO, &args);
	if (ret) {
		pr_err("PROCESS_INFO of file %u failed: %s\n", id,
		       strerror(-ret));
		return ret == -ENOTSUP ? -EIO : ret;
	}
	pr_info("file %u: paused pid %u, image about %llu bytes\n", id,
		args.pid, args.image_size);
	ret = write_alias_meta(id, args.pid);
	if (ret != -ENOENT)
		return ret;
	ret = checkpoint_to_images(fd, id);
	if (!ret)
		ret = remember_dumped_file(fd, id, args.pid);
	if (ret)
		unpause_file(fd, id);
	/* -ENOTSUP is EOPNOTSUPP, but would tell CRIU the file is not ours */
	return ret == -ENOTSUP ? -EIO : ret;
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__DUMP_EXT_FILE, kfd_dump_file)

static int kfd_handle_device_vma(int fd, const struct stat *st)
{
	(void)fd;
	if (!is_kfd_rdev(st->st_mode, st->st_rdev))
		return -ENOTSUP;
	/* CRIU records the mapping; the kernel's image holds its contents. */
	return 0;
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__HANDLE_DEVICE_VMA, kfd_handle_device_vma)

/* RESTORE from the checked images of file @id into a new /dev/kfd fd */
static int restore_from_images(unsigned int id, const KfdCriuMeta *meta)
{
	struct kfd_ioctl_criu_args args = { 0 };
	char name[IMAGE_NAME_MAX];
	int sfd, kfd, ret;

	image_name(name, id, "stream");
	sfd = openat(criu_get_image_dir(), name, O_RDONLY | O_CLOEXEC);
	if (sfd < 0) {
		ret = -errno;
		pr_err("cannot open %s: %s\n", name, strerror(-ret));
		return ret;
	}
	ret = stream_check(sfd, name, meta);
	if (ret) {
		pr_err("refusing %s: %s\n", name, strerror(-ret));
		goto out_close;
	}
	kfd = open_kfd(false);
	if (kfd < 0) {
		ret = kfd;
		goto out_close;
	}
	args.image_fd = sfd;
	ret = kfd_criu_op(kfd, KFD_CRIU_OP_RESTORE, &args);
	if (ret) {
		pr_err("RESTORE from %s failed: %s\n", name, strerror(-ret));
		close(kfd);
		goto out_close;
	}
	pr_info("file %u: restored %llu bytes of image format %u\n", id,
		args.image_size, args.format_version);
	ret = kfd;
out_close:
	close(sfd);
	return ret;
}

static int kfd_restore_file(int id)
{
	char name[IMAGE_NAME_MAX];
	KfdCriuMeta *meta;
	int ret;

	image_name(name, id, "img");
	ret = meta_read(name, &meta);
	if (ret == -ENOENT)
		return -ENOTSUP;
	if (ret) {
		pr_err("cannot read %s: %s\n", name, strerror(-ret));
		return ret;
	}
	if (meta->file_id == (unsigned int)id && meta->has_alias_of) {
		/* The file it aliases restores the shared KFD process */
		ret = open_kfd(false);
	} else if (meta->file_id == (unsigned int)id) {
		ret = restore_from_images(id, meta);
	} else {
		pr_err("%s describes file %u\n", name, meta->file_id);
		ret = -EINVAL;
	}
	kfd_criu_meta__free_unpacked(meta, NULL);
	return ret == -ENOTSUP ? -EIO : ret;
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__RESTORE_EXT_FILE, kfd_restore_file)

static int kfd_update_vma_map(const char *path, const uint64_t addr,
			      const uint64_t old_pgoff, uint64_t *new_pgoff,
			      int *plugin_fd)
{
	struct stat st;

	if (stat(path, &st) || !is_kfd_rdev(st.st_mode, st.st_rdev))
		return -ENOTSUP;
	/* Image mode restores every /dev/kfd mapping at its old offset. */
	*new_pgoff = old_pgoff;
	*plugin_fd = -1;
	pr_debug("mapping at %#" PRIx64 " keeps its offset\n", addr);
	return 0;
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__UPDATE_VMA_MAP, kfd_update_vma_map)

static int kfd_resume_devices_late(int pid)
{
	struct kfd_ioctl_criu_args args = { .pid = pid };
	int kfd, ret;

	/* CRIU calls this for every restored task: quiet for the others */
	kfd = open_kfd(true);
	if (kfd < 0)
		return -ENOTSUP;
	ret = kfd_criu_op(kfd, KFD_CRIU_OP_RESUME, &args);
	close(kfd);
	if (ret == -ESRCH || ret == -EBADFD) {
		pr_debug("pid %d has no restored KFD state\n", pid);
		return -ENOTSUP;
	}
	if (ret) {
		pr_err("RESUME of pid %d failed: %s\n", pid, strerror(-ret));
		return ret;
	}
	pr_info("resumed the KFD state of pid %d\n", pid);
	return 0;
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__RESUME_DEVICES_LATE, kfd_resume_devices_late)
