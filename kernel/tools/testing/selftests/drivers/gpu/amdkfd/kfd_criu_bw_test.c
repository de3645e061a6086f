// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: bandwidth of BO contents through CRIU image mode
 *
 * Needs an AMD GPU; without one in the KFD topology the program is skipped
 * (kselftest exit code 4) with the reason "no GPU in the KFD topology".
 * It measures rather than judges: a case passes when dump and restore
 * succeed and the checked contents come back, whatever the figure.
 *
 * For VRAM, then GTT, and BOs of 1, 4 and 16 GiB on the first GPU: a child
 * acquires the GPU VM, allocates one BO of that size, fills it with a
 * pattern through a CPU mapping where it can, maps it on the GPU and hands
 * its /dev/kfd file to the test. A VRAM BO asks for a CPU-visible
 * placement first and takes an invisible one when the BAR is too small;
 * its contents are then neither filled nor checked, and the line says so.
 * The test, as CRIU does, CHECKPOINTs the child in image mode into a memfd
 * (shmem, as a file on tmpfs), timing the CHECKPOINT ioctl. A fresh child
 * RESTOREs the image, timing RESTORE, is resumed and checks one word of
 * the pattern per MiB. Each size prints
 *
 *   vram dump: N GB/s, vram restore: N GB/s (4 GiB BO)
 *
 * and the same for gtt, in 10^9 bytes of BO contents per second of the
 * ioctl. A size is left out, with a line saying why, when the GPU's
 * available VRAM (AVAILABLE_MEMORY) or the host's available memory cannot
 * take it: the image needs the BO's size in RAM, a GTT BO twice that (its
 * own pages and the image).
 */

#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/kfd_ioctl.h>

#include "../../../kselftest_harness.h"
#include "kfd_criu_util.h"

#define MIB			(1024ULL * 1024)
#define GIB			(1024 * MIB)
#define VA_ALIGN		(2 * MIB)
/* CPU address space reserved for the BO's GPU virtual address */
#define VA_SPAN			(16 * GIB)
/* Host memory left to everything else while an image is in RAM */
#define RAM_MARGIN		GIB
#define MAX_OFFSETS		4
/* A dump or restore of 16 GiB at the old page-by-page speed, twice over */
#define BW_TIMEOUT		3600
#define NO_GPU_REASON		"no GPU in the KFD topology"

static const __u64 bw_sizes[] = { 1 * GIB, 4 * GIB, 16 * GIB };

/**
 * struct bw_bo - the BO as the dumpee set it up
 * @status: 0, or the negative errno that stopped the setup
 * @why: the step that set @status
 * @handle: its handle
 * @mmap_offset: where the render node maps it
 * @visible: whether the CPU can map it, so it holds the pattern
 */
struct bw_bo {
	int status;
	char why[64];
	__u64 handle;
	__u64 mmap_offset;
	bool visible;
};

/**
 * struct bw_run - one domain and one size
 * @gpu: the GPU
 * @vram: a VRAM BO, else GTT
 * @size: its bytes
 * @va: its GPU virtual address, in the test's reserved span
 * @bo: what the dumpee reported
 * @image_fd: the image, for the restoree
 * @restore_s: shared with the restoree, which stores RESTORE's seconds
 */
struct bw_run {
	struct kfd_test_gpu gpu;
	bool vram;
	__u64 size;
	__u64 va;
	struct bw_bo bo;
	int image_fd;
	double *restore_s;
};

static double bw_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *bw_domain(const struct bw_run *run)
{
	return run->vram ? "vram" : "gtt";
}

static __u64 bw_pattern(__u64 i)
{
	return (i + 1) * 0x9e3779b97f4a7c15ULL;
}

/*
 * Maps the BO through @drm_fd at @offset; fills all of it, or checks one
 * word per MiB (reads through a BAR are slow).
 */
static int bw_touch(int drm_fd, const struct bw_run *run, __u64 offset,
		    bool fill)
{
	__u64 *p, i, words = run->size / 8, step = MIB / 8;
	int ret = 0;

	p = mmap(NULL, run->size, PROT_READ | PROT_WRITE, MAP_SHARED, drm_fd,
		 (off_t)offset);
	if (p == MAP_FAILED)
		return -errno;
	for (i = 0; fill && i < words; i++)
		p[i] = bw_pattern(i);
	for (i = 0; !fill && i < words; i += step) {
		if (p[i] != bw_pattern(i)) {
			fprintf(stderr, "# %s BO: word %llu differs\n",
				bw_domain(run), (unsigned long long)i);
			ret = -EBADMSG;
			break;
		}
	}
	munmap(p, run->size);
	return ret;
}

static int bw_fail(struct bw_bo *bo, int err, const char *why)
{
	bo->status = err;
	snprintf(bo->why, sizeof(bo->why), "%s", why);
	return err;
}

/* VRAM the GPU can still give, then a visible BO or else an invisible one */
static int bw_alloc_vram(int kfd, const struct bw_run *run, struct bw_bo *bo)
{
	struct kfd_ioctl_get_available_memory_args avail = {
		.gpu_id = run->gpu.gpu_id,
	};
	__u32 flags = KFD_IOC_ALLOC_MEM_FLAGS_VRAM |
		      KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
	int ret;

	ret = kfd_ioctl(kfd, AMDKFD_IOC_AVAILABLE_MEMORY, &avail);
	if (ret)
		return bw_fail(bo, ret, "AVAILABLE_MEMORY");
	if (avail.available < run->size)
		return bw_fail(bo, -ENOSPC, "more than the GPU's available VRAM");
	bo->visible = true;
	ret = kfd_alloc_memory(kfd, run->gpu.gpu_id,
			       flags | KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC, run->va,
			       run->size, 0, &bo->handle, &bo->mmap_offset);
	if (!ret)
		return 0;
	bo->visible = false;
	ret = kfd_alloc_memory(kfd, run->gpu.gpu_id, flags, run->va, run->size,
			       0, &bo->handle, &bo->mmap_offset);
	return ret ? bw_fail(bo, ret, "ALLOC_MEMORY_OF_GPU") : 0;
}

static int bw_alloc_gtt(int kfd, const struct bw_run *run, struct bw_bo *bo)
{
	int ret;

	bo->visible = true;
	ret = kfd_alloc_memory(kfd, run->gpu.gpu_id,
			       KFD_IOC_ALLOC_MEM_FLAGS_GTT |
			       KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE, run->va,
			       run->size, 0, &bo->handle, &bo->mmap_offset);
	return ret ? bw_fail(bo, ret, "ALLOC_MEMORY_OF_GPU") : 0;
}

/*
 * The process to be dumped: the BO, its pattern, mapped on the GPU; then
 * its /dev/kfd file and what it set up go to the test, also when the
 * setup failed, and it waits for the dump to end.
 */
static void bw_dumpee(int sock, void *ctx)
{
	const struct bw_run *run = ctx;
	int kfd = kfd_open(), drm = open_render_node(&run->gpu);
	struct bw_bo bo = { 0 };

	CHILD_CHECK(kfd >= 0 && drm >= 0);
	CHILD_CHECK(!kfd_acquire_vm(kfd, drm, run->gpu.gpu_id));
	CHILD_CHECK(kfd_in_gpuvm_aperture(kfd, run->gpu.gpu_id, run->va,
					  run->size));
	if (run->vram)
		bw_alloc_vram(kfd, run, &bo);
	else
		bw_alloc_gtt(kfd, run, &bo);
	if (!bo.status && bo.visible && bw_touch(drm, run, bo.mmap_offset, true))
		bw_fail(&bo, -EIO, "filling through the render node");
	if (!bo.status && kfd_map_memory(kfd, true, bo.handle,
					 &run->gpu.gpu_id, 1))
		bw_fail(&bo, -EIO, "MAP_MEMORY_TO_GPU");
	CHILD_CHECK(!send_fd(sock, kfd, &bo, sizeof(bo)));
	sync_wait(sock);	/* until the dump is done */
	_exit(0);
}

/*
 * The fresh process: RESTOREs the image, timed, and once resumed checks
 * the pattern, unmaps and frees the BO by its dumped handle.
 */
static void bw_restoree(int sock, void *ctx)
{
	const struct bw_run *run = ctx;
	struct kfd_criu_offset_map offsets[MAX_OFFSETS];
	struct kfd_criu_gpu_map map = { .local_gpu_id = run->gpu.gpu_id };
	struct kfd_ioctl_criu_args args;
	int kfd = kfd_open();
	double start;
	__u64 offset;

	map.drm_fd = open_render_node(&run->gpu);
	CHILD_CHECK(kfd >= 0 && map.drm_fd >= 0);
	start = bw_now();
	CHILD_CHECK(!criu_restore_mapped(kfd, run->image_fd, &map, 1, offsets,
					 MAX_OFFSETS, &args));
	*run->restore_s = bw_now() - start;
	sync_send(sock);
	sync_wait(sock);	/* resumed */

	offset = criu_moved_offset(offsets, args.num_offset_map,
				   run->gpu.gpu_id, run->bo.mmap_offset);
	if (run->bo.visible)
		CHILD_CHECK(!bw_touch(map.drm_fd, run, offset, false));
	CHILD_CHECK(!kfd_map_memory(kfd, false, run->bo.handle,
				    &run->gpu.gpu_id, 1));
	CHILD_CHECK(!kfd_free_memory(kfd, run->bo.handle));
	_exit(0);
}

/* The host's MemAvailable in bytes, 0 when unknown */
static __u64 bw_ram_available(void)
{
	char buf[4096];
	const char *line;

	if (read_text("/proc/meminfo", buf, sizeof(buf)))
		return 0;
	line = strstr(buf, "MemAvailable:");
	return line ? strtoull(line + 13, NULL, 10) * 1024 : 0;
}

static bool bw_ram_fits(const struct bw_run *run)
{
	__u64 need = (run->vram ? 1 : 2) * run->size + RAM_MARGIN;
	__u64 avail = bw_ram_available();

	if (avail >= need)
		return true;
	ksft_print_msg("%s %llu GiB BO: left out, needs %llu GiB of RAM, %llu GiB free\n",
		       bw_domain(run), run->size / GIB, need / GIB,
		       avail / GIB);
	return false;
}

/* Dumps the dumpee into a memfd, which it returns, or -1 on a failure */
static int bw_dump(struct __test_metadata *_metadata, struct bw_run *run,
		   struct kfd_dumpee *d, double *dump_s)
{
	struct kfd_ioctl_criu_args args;
	double start;
	int image, ret;

	image = memfd_create("kfd-criu-bw-image", MFD_CLOEXEC);
	ASSERT_LE(0, image);
	ret = criu_image_op(d->kfd, KFD_CRIU_OP_PROCESS_INFO, -1, &args);
	EXPECT_EQ(0, ret);
	if (ret)
		goto out_close;
	start = bw_now();
	ret = criu_image_op(d->kfd, KFD_CRIU_OP_CHECKPOINT, image, &args);
	*dump_s = bw_now() - start;
	EXPECT_EQ(0, ret);
	EXPECT_LE(run->size, args.image_size);
	/* Let the process go on even when the dump failed */
	EXPECT_EQ(0, criu_image_op(d->kfd, KFD_CRIU_OP_UNPAUSE, -1, &args));
	if (ret || lseek(image, 0, SEEK_SET))
		goto out_close;
	return image;

out_close:
	close(image);
	return -1;
}

/*
 * One domain, one size: dump, restore, the line with both figures.
 * Returns false on a failure, true when it measured or left the size out.
 */
static bool bw_measure(struct __test_metadata *_metadata, struct bw_run *run)
{
	struct kfd_dumpee d;
	int ret, resume_ret;
	double dump_s = 0;

	if (!bw_ram_fits(run))
		return true;
	ret = kfd_dumpee_start(&d, bw_dumpee, run, &run->bo, sizeof(run->bo));
	EXPECT_EQ(0, ret);
	if (!ret && run->bo.status) {
		ksft_print_msg("%s %llu GiB BO: left out, %s: %s\n",
			       bw_domain(run), run->size / GIB, run->bo.why,
			       strerror(-run->bo.status));
		EXPECT_EQ(0, kfd_dumpee_finish(&d));
		return true;
	}
	run->image_fd = ret ? -1 : bw_dump(_metadata, run, &d, &dump_s);
	EXPECT_EQ(0, kfd_dumpee_finish(&d));
	if (run->image_fd < 0)
		return false;

	*run->restore_s = 0;
	ret = kfd_restoree_run(bw_restoree, run, &resume_ret);
	close(run->image_fd);
	EXPECT_EQ(0, ret);
	EXPECT_EQ(0, resume_ret);
	if (ret || resume_ret)
		return false;
	ksft_print_msg("%s dump: %.2f GB/s, %s restore: %.2f GB/s (%llu GiB BO%s)\n",
		       bw_domain(run), run->size / dump_s / 1e9,
		       bw_domain(run), run->size / *run->restore_s / 1e9,
		       run->size / GIB,
		       run->bo.visible ? "" : ", not CPU-visible: contents not checked");
	return true;
}

FIXTURE(gpus) {
	struct kfd_test_gpu gpu;
	__u64 va;
	double *restore_s;
};

FIXTURE_SETUP(gpus)
{
	char *base;

	self->restore_s = MAP_FAILED;
	if (!have_kfd() || !kfd_topology_gpus(&self->gpu, 1))
		SKIP(return, NO_GPU_REASON);
	/* A GPU virtual address range that no CPU mapping of the test takes */
	base = mmap(NULL, VA_SPAN + VA_ALIGN, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, base);
	self->va = ((uintptr_t)base + VA_ALIGN - 1) & ~(VA_ALIGN - 1);
	self->restore_s = mmap(NULL, sizeof(double), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->restore_s);
}

FIXTURE_TEARDOWN(gpus)
{
}

/* Every size of bw_sizes in @run's domain, until one fails */
static void bw_measure_sizes(struct __test_metadata *_metadata,
			     struct bw_run *run)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bw_sizes); i++) {
		run->size = bw_sizes[i];
		memset(&run->bo, 0, sizeof(run->bo));
		if (!bw_measure(_metadata, run))
			break;
	}
}

/* VRAM BOs of 1, 4 and 16 GiB, what fits: dump and restore bandwidth. */
TEST_F_TIMEOUT(gpus, vram_bandwidth, BW_TIMEOUT)
{
	struct bw_run run = {
		.gpu = self->gpu, .vram = true, .va = self->va,
		.restore_s = self->restore_s,
	};

	bw_measure_sizes(_metadata, &run);
}

/* GTT BOs of 1, 4 and 16 GiB, what fits: dump and restore bandwidth. */
TEST_F_TIMEOUT(gpus, gtt_bandwidth, BW_TIMEOUT)
{
	struct bw_run run = {
		.gpu = self->gpu, .vram = false, .va = self->va,
		.restore_s = self->restore_s,
	};

	bw_measure_sizes(_metadata, &run);
}

/* Without a GPU the whole program is skipped: exit 4, the reason on TAP. */
int main(int argc, char **argv)
{
	struct kfd_test_gpu gpu;

	if (!have_kfd() || !kfd_topology_gpus(&gpu, 1)) {
		ksft_print_header();
		ksft_exit_skip(NO_GPU_REASON "\n");
	}
	return test_harness_run(argc, argv);
}
