// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: kfd_vgem_encoder - uses vgem's render node as an encoder its GPU
 *
 * Usage: kfd_vgem_encoder DIR [--kfd] [--hold-card | --hold-dma-buf]
 *
 * For the e2e test of the plugin's stateless DRM reattach
 * (the drm_reattach plugin): a process that holds what a video encoder holds
 * on an iGPU's render node, a render node fd, a GEM handle on it and a
 * mapping of the buffer through it, and that treats a failing job as a lost
 * device: it re-creates its buffer and carries on, counting "reinits".
 *
 * What vgem allows on a render node (Linux 6.12): the core ioctls marked
 * DRM_RENDER_ALLOW (VERSION, GET_CAP, GEM_CLOSE, PRIME_HANDLE_TO_FD,
 * PRIME_FD_TO_HANDLE) and its own VGEM_FENCE_ATTACH and VGEM_FENCE_SIGNAL.
 * Nothing there creates a buffer or gives it an mmap offset: MODE_CREATE_DUMB
 * and MODE_MAP_DUMB are card node ioctls. A PRIME import of a udmabuf
 * would give the render file a handle, but an mmap of an imported object
 * becomes a mapping of the dma-buf (drm_gem_shmem_mmap() hands it to
 * dma_buf_mmap()), which CRIU cannot dump at all. So the program does what
 * a compositor and an encoder do between them: it creates a dumb buffer on
 * vgem's card node and has its mmap offset made there, exports it as a
 * dma-buf and imports that into its render node file, which gets a handle
 * of the same GEM object and with it the right to map the buffer through
 * the render node; then it closes the card node and the dma-buf.
 *
 * Each round (100 ms) it asks DRM_IOCTL_VERSION on its render fd, runs a
 * "job" on its handle (attaches a write fence to the buffer and signals
 * it), checks its buffer's pattern, a pattern in its private memory and
 * its other fds (a pipe with bytes queued, a file at an offset), and with
 * --kfd beats a KFD event and checks a signaled one. When a job fails it
 * notes the errno, what GEM_CLOSE says of the old handle and what the old
 * mapping holds (which it keeps mapped, for the test to look at), then
 * creates a new buffer. Its state goes to DIR/status, "key value" lines,
 * replaced by rename each round, so no file of DIR stays open.
 *
 * --hold-card and --hold-dma-buf keep vgem's card node or the dma-buf
 * open: files that the plugin must refuse to dump.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <drm/drm.h>
#include <drm/vgem_drm.h>
#include <linux/kfd_ioctl.h>

#define BUF_WIDTH		256
#define BUF_HEIGHT		64
#define BUF_BPP			32
#define MEMORY_WORDS		16384	/* 64 KiB of private memory */
#define PIPE_BYTES		"queued in a pipe"
#define FILE_OFFSET		5
#define WAIT_MS			1000
#define ROUND_US		100000

/**
 * struct encoder - what the process holds, and what it saw
 * @render: its render node fd
 * @card: vgem's card node, while a buffer is made (or held: --hold-card)
 * @dma_buf: the buffer's dma-buf, while imported (or held: --hold-dma-buf)
 * @handle: the buffer's GEM handle on @render
 * @size: the buffer's size
 * @map: the buffer's mapping through @render
 * @generation: the buffer's number, which its pattern carries
 * @pipe: a pipe with PIPE_BYTES queued
 * @file: a file whose offset is FILE_OFFSET
 * @kfd: /dev/kfd, with --kfd
 * @heartbeat: an auto-reset KFD event set and waited for each round
 * @signaled: a manual-reset KFD event that stays signaled
 */
static struct encoder {
	int render, card, dma_buf;
	__u32 handle;
	size_t size;
	uint32_t *map;
	unsigned int generation;
	int pipe[2], file;
	int kfd;
	__u32 heartbeat, signaled;
} e = { .render = -1, .card = -1, .dma_buf = -1, .file = -1, .kfd = -1 };

/**
 * struct report - what DIR/status says
 * @rounds: rounds so far
 * @driver: the driver DRM_IOCTL_VERSION names, this round
 * @version_errors: rounds whose DRM_IOCTL_VERSION failed
 * @jobs: jobs that ran
 * @lost: jobs that failed: the device was lost
 * @lost_errno: the errno of the last failed job
 * @old_close_errno: what GEM_CLOSE of the lost handle gave (0: it worked)
 * @old_map: what the lost buffer's mapping held: zeros, pattern or other
 * @reinits: buffers re-created
 * @buffer_ok: the buffer holds its pattern
 * @memory_ok: the private memory holds its pattern
 * @fds_ok: the pipe and the file are as they were
 * @kfd_beats: KFD heartbeats
 * @kfd_errors: KFD heartbeats or checks that failed
 */
static struct report {
	unsigned long rounds;
	char driver[64];
	unsigned long version_errors, jobs, lost;
	int lost_errno, old_close_errno;
	const char *old_map;
	unsigned int reinits;
	bool buffer_ok, memory_ok, fds_ok;
	unsigned long kfd_beats, kfd_errors;
} r = { .old_map = "none" };

/* Private memory with a pattern */
static uint32_t memory[MEMORY_WORDS];
static bool hold_card, hold_dma_buf, use_kfd;

static int xioctl(int fd, unsigned long request, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, request, arg);
	} while (ret && errno == EINTR);
	return ret ? -errno : 0;
}

/* The DRM driver name of @fd into @name */
static int drm_driver(int fd, char *name, size_t size)
{
	struct drm_version v = { .name_len = size - 1, .name = name };
	int ret;

	memset(name, 0, size);
	ret = xioctl(fd, DRM_IOCTL_VERSION, &v);
	if (!ret && v.name_len >= size)
		ret = -ENAMETOOLONG;
	return ret;
}

/* Opens vgem's node /dev/dri/<@prefix><minor>, minors @first to @last */
static int open_vgem(const char *prefix, int first, int last)
{
	char path[64], name[64];
	int minor, fd;

	for (minor = first; minor <= last; minor++) {
		snprintf(path, sizeof(path), "/dev/dri/%s%d", prefix, minor);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!drm_driver(fd, name, sizeof(name)) && !strcmp(name, "vgem"))
			return fd;
		close(fd);
	}
	return -ENODEV;
}

static uint32_t buffer_word(size_t i)
{
	return 0x56474d00u ^ (e.generation << 24) ^ (uint32_t)i;
}

/*
 * A dumb buffer of vgem's card node, with its mmap offset, as a dma-buf in
 * @dma_buf; the card node's handle is closed, the dma-buf keeps the buffer.
 */
static int export_dumb_buffer(__u64 *offset)
{
	struct drm_mode_create_dumb create = {
		.width = BUF_WIDTH, .height = BUF_HEIGHT, .bpp = BUF_BPP };
	struct drm_mode_map_dumb map = { 0 };
	struct drm_prime_handle prime = { .flags = DRM_CLOEXEC | DRM_RDWR };
	struct drm_gem_close gem_close = { 0 };
	int ret;

	if (e.card < 0)
		e.card = open_vgem("card", 0, 63);
	if (e.card < 0)
		return e.card;
	if (e.dma_buf >= 0)	/* held, with --hold-dma-buf */
		close(e.dma_buf);
	ret = xioctl(e.card, DRM_IOCTL_MODE_CREATE_DUMB, &create);
	if (ret)
		return ret;
	map.handle = prime.handle = gem_close.handle = create.handle;
	ret = xioctl(e.card, DRM_IOCTL_MODE_MAP_DUMB, &map) ?:
	      xioctl(e.card, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime);
	xioctl(e.card, DRM_IOCTL_GEM_CLOSE, &gem_close);
	e.dma_buf = ret ? -1 : prime.fd;
	e.size = create.size;
	*offset = map.offset;
	return ret;
}

/* Drops the card node and the dma-buf, unless told to hold one */
static void drop_setup_files(void)
{
	if (!hold_card && e.card >= 0) {
		close(e.card);
		e.card = -1;
	}
	if (!hold_dma_buf && e.dma_buf >= 0) {
		close(e.dma_buf);
		e.dma_buf = -1;
	}
}

/*
 * A new buffer for the render node file: imported from the card node's
 * export, mapped through the render node, filled with its pattern.
 */
static int create_buffer(void)
{
	struct drm_prime_handle prime = { 0 };
	__u64 offset = 0;
	size_t i;
	int ret;

	ret = export_dumb_buffer(&offset);
	prime.fd = e.dma_buf;
	ret = ret ?: xioctl(e.render, DRM_IOCTL_PRIME_FD_TO_HANDLE, &prime);
	drop_setup_files();
	if (ret)
		return ret;
	e.handle = prime.handle;
	e.map = mmap(NULL, e.size, PROT_READ | PROT_WRITE, MAP_SHARED, e.render, offset);
	if (e.map == MAP_FAILED) {
		e.map = NULL;
		return -errno;
	}
	e.generation++;
	for (i = 0; i < e.size / 4; i++)
		e.map[i] = buffer_word(i);
	return 0;
}

/* A job on the buffer: a write fence attached to it, then signaled */
static int run_job(void)
{
	struct drm_vgem_fence_attach attach = {
		.handle = e.handle, .flags = VGEM_FENCE_WRITE };
	struct drm_vgem_fence_signal done = { 0 };
	int ret;

	ret = xioctl(e.render, DRM_IOCTL_VGEM_FENCE_ATTACH, &attach);
	if (ret)
		return ret;
	done.fence = attach.out_fence;
	return xioctl(e.render, DRM_IOCTL_VGEM_FENCE_SIGNAL, &done);
}

/* What the lost buffer's mapping holds: zeros, its pattern, or other */
static const char *lost_map_contents(void)
{
	bool zeros = true, pattern = true;
	size_t i;

	for (i = 0; i < e.size / 4; i++) {
		zeros = zeros && !e.map[i];
		pattern = pattern && e.map[i] == buffer_word(i);
	}
	return zeros ? "zeros" : pattern ? "pattern" : "other";
}

/*
 * The device is lost: note what the kernel says of the old handle and
 * what the old mapping holds (left mapped), then start over.
 */
static int reinit(int job_errno)
{
	struct drm_gem_close gem_close = { .handle = e.handle };

	r.lost++;
	r.lost_errno = job_errno;
	r.old_close_errno = -xioctl(e.render, DRM_IOCTL_GEM_CLOSE, &gem_close);
	r.old_map = lost_map_contents();
	r.reinits++;
	return create_buffer();
}

static bool buffer_intact(void)
{
	size_t i;

	for (i = 0; e.map && i < e.size / 4; i++)
		if (e.map[i] != buffer_word(i))
			return false;
	return e.map;
}

static uint32_t memory_word(size_t i)
{
	return 0x6d656d00u ^ (uint32_t)(i * 2654435761u);
}

static bool memory_intact(void)
{
	size_t i;

	for (i = 0; i < MEMORY_WORDS; i++)
		if (memory[i] != memory_word(i))
			return false;
	return true;
}

static bool fds_intact(void)
{
	int queued = -1;

	return !ioctl(e.pipe[0], FIONREAD, &queued) && queued == (int)strlen(PIPE_BYTES) &&
	       lseek(e.file, 0, SEEK_CUR) == FILE_OFFSET;
}

/* The memory pattern, the pipe's bytes and the file's offset */
static int setup_other_state(const char *dir)
{
	char path[4096];
	size_t i;

	for (i = 0; i < MEMORY_WORDS; i++)
		memory[i] = memory_word(i);
	snprintf(path, sizeof(path), "%s/file", dir);
	e.file = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (e.file < 0 || write(e.file, "0123456789", 10) != 10 ||
	    lseek(e.file, FILE_OFFSET, SEEK_SET) != FILE_OFFSET || pipe2(e.pipe, O_CLOEXEC))
		return -errno;
	if (write(e.pipe[1], PIPE_BYTES, strlen(PIPE_BYTES)) != (ssize_t)strlen(PIPE_BYTES))
		return -EIO;
	return 0;
}

static int kfd_create_event(bool auto_reset, __u32 *id)
{
	struct kfd_ioctl_create_event_args args = {
		.event_type = KFD_IOC_EVENT_SIGNAL, .auto_reset = auto_reset };
	int ret = xioctl(e.kfd, AMDKFD_IOC_CREATE_EVENT, &args);

	*id = args.event_id;
	return ret;
}

static int kfd_set_event(__u32 id)
{
	struct kfd_ioctl_set_event_args args = { .event_id = id };

	return xioctl(e.kfd, AMDKFD_IOC_SET_EVENT, &args);
}

/* Whether event @id is signaled within @timeout_ms */
static bool kfd_event_fires(__u32 id, __u32 timeout_ms)
{
	struct kfd_event_data data = { .event_id = id };
	struct kfd_ioctl_wait_events_args args = {
		.events_ptr = (__u64)(uintptr_t)&data, .num_events = 1,
		.wait_for_all = 1, .timeout = timeout_ms };

	return !xioctl(e.kfd, AMDKFD_IOC_WAIT_EVENTS, &args) &&
	       args.wait_result == KFD_IOC_WAIT_RESULT_COMPLETE;
}

/* KFD state that a restore must bring back: two events, one signaled */
static int setup_kfd(void)
{
	e.kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	if (e.kfd < 0)
		return -errno;
	return kfd_create_event(true, &e.heartbeat) ?: kfd_create_event(false, &e.signaled) ?:
	       kfd_set_event(e.signaled);
}

static void kfd_round(void)
{
	if (!kfd_set_event(e.heartbeat) && kfd_event_fires(e.heartbeat, WAIT_MS) &&
	    kfd_event_fires(e.signaled, 0))
		r.kfd_beats++;
	else
		r.kfd_errors++;
}

/* One round: VERSION, a job (a reinit if it fails), the checks */
static void round_of_work(void)
{
	int ret;

	r.version_errors += !!drm_driver(e.render, r.driver, sizeof(r.driver));
	ret = run_job();
	if (ret)
		ret = reinit(-ret) ?: run_job();
	r.jobs += !ret;
	r.buffer_ok = buffer_intact();
	r.memory_ok = memory_intact();
	r.fds_ok = fds_intact();
	if (use_kfd)
		kfd_round();
	r.rounds++;
}

static const char *errno_name(int err)
{
	const char *name = err ? strerrorname_np(err) : "0";

	return name ?: "?";
}

/* DIR/status, replaced whole */
static void write_status(const char *dir)
{
	char path[4096], tmp[4100];
	FILE *f;

	snprintf(path, sizeof(path), "%s/status", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f)
		return;
	fprintf(f, "pid %d\nrounds %lu\nrender_fd %d\ndriver %s\nversion_errors %lu\n"
		"handle %u\nmap %p\njobs %lu\nlost %lu\nlost_errno %s\nold_close_errno %s\n"
		"old_map %s\nreinits %u\nbuffer_ok %d\nmemory_ok %d\nfds_ok %d\n",
		getpid(), r.rounds, e.render, r.driver, r.version_errors, e.handle,
		(void *)e.map, r.jobs, r.lost, errno_name(r.lost_errno),
		errno_name(r.old_close_errno), r.old_map, r.reinits, r.buffer_ok,
		r.memory_ok, r.fds_ok);
	if (use_kfd)
		fprintf(f, "kfd_beats %lu\nkfd_errors %lu\n", r.kfd_beats, r.kfd_errors);
	if (!fclose(f))
		rename(tmp, path);
}

static int parse_args(int argc, char **argv)
{
	int i;

	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--kfd"))
			use_kfd = true;
		else if (!strcmp(argv[i], "--hold-card"))
			hold_card = true;
		else if (!strcmp(argv[i], "--hold-dma-buf"))
			hold_dma_buf = true;
		else
			return -EINVAL;
	}
	return argc < 2 ? -EINVAL : 0;
}

static int start(const char *dir)
{
	int ret;

	e.render = open_vgem("renderD", 128, 191);
	if (e.render < 0) {
		fprintf(stderr, "kfd_vgem_encoder: no render node of vgem\n");
		return e.render;
	}
	ret = setup_other_state(dir) ?: create_buffer() ?: (use_kfd ? setup_kfd() : 0);
	if (ret)
		fprintf(stderr, "kfd_vgem_encoder: setup: %s\n", strerror(-ret));
	return ret;
}

int main(int argc, char **argv)
{
	if (parse_args(argc, argv)) {
		fprintf(stderr, "usage: %s DIR [--kfd] [--hold-card | --hold-dma-buf]\n", argv[0]);
		return 2;
	}
	if (start(argv[1]))
		return 1;
	printf("kfd_vgem_encoder %d: render fd %d, handle %u, buffer at %p\n", getpid(),
	       e.render, e.handle, (void *)e.map);
	fflush(stdout);
	for (;;) {
		round_of_work();
		write_status(argv[1]);
		usleep(ROUND_US);
	}
}
