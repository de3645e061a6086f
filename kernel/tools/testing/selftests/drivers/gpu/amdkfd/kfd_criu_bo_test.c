// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: GPU buffer objects through CRIU image mode
 *
 * Needs an AMD GPU; without one in the KFD topology the program is skipped
 * (kselftest exit code 4) with the reason "no GPU in the KFD topology".
 *
 * A child process acquires the GPU VM on a render node, allocates a VRAM,
 * a GTT and a userptr buffer object, writes patterns into the first two
 * (the userptr memory holds one already), maps them to the GPU and hands
 * its /dev/kfd file to the test over SCM_RIGHTS. The test, as its ptrace
 * parent, dumps it in image mode and lets it exit. A fresh process that
 * opened /dev/kfd and the render node and nothing else restores the image
 * with a GPU map and an offset map (first without room, to see -ENOSPC
 * when offsets moved), is resumed, maps the buffers at their (possibly
 * moved) offsets and finds the patterns; the buffers' handles are the
 * dumped ones and still mapped on the GPU. A second test maps one buffer
 * on two GPUs and is skipped with fewer.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/kfd_ioctl.h>

#include "../../../kselftest_harness.h"
#include "kfd_criu_util.h"

#define BO_SIZE			(2UL << 20)
/* CPU address space reserved for the buffers' GPU virtual addresses */
#define VA_SPAN			(64UL << 20)
#define VA_ALIGN		(2UL << 20)
#define MAX_BOS			3
#define NO_GPU_REASON		"no GPU in the KFD topology"

enum { BO_VRAM, BO_GTT, BO_USERPTR };

/**
 * struct bo - a buffer object of the dumped process
 * @va: its GPU virtual address
 * @handle: its handle, as ALLOC_MEMORY_OF_GPU returned it
 * @mmap_offset: where its render node maps it, 0 for a userptr BO
 * @seed: the seed of its pattern
 */
struct bo {
	__u64 va;
	__u64 handle;
	__u64 mmap_offset;
	__u32 seed;
};

/**
 * struct bo_plan - what the dumped process set up
 * @gpus: the GPUs it acquired VMs on
 * @nr_gpus: entries in @gpus
 * @bos: its buffer objects
 * @nr_bos: entries in @bos
 */
struct bo_plan {
	struct kfd_test_gpu gpus[2];
	int nr_gpus;
	struct bo bos[MAX_BOS];
	int nr_bos;
};

/**
 * struct bo_setup - what the test shares with its children through fork
 * @va_base: a reserved, %VA_ALIGN aligned span of %VA_SPAN bytes
 * @userptr: anonymous memory of %BO_SIZE bytes holding a pattern, at the
 *	same address in every child
 */
struct bo_setup {
	void *va_base;
	void *userptr;
};

static __u64 pattern(__u32 seed, size_t i)
{
	return ((__u64)seed << 32) ^ (i * 0x9e3779b97f4a7c15ULL);
}

static void fill(void *mem, size_t size, __u32 seed)
{
	__u64 *p = mem;
	size_t i;

	for (i = 0; i < size / 8; i++)
		p[i] = pattern(seed, i);
}

/* Index of the first word that differs from the pattern, or -1 */
static long check_fill(const void *mem, size_t size, __u32 seed)
{
	const __u64 *p = mem;
	size_t i;

	for (i = 0; i < size / 8; i++)
		if (p[i] != pattern(seed, i))
			return i;
	return -1;
}

static int alloc_bo(int kfd, __u32 gpu_id, __u32 flags, __u64 va,
		    __u64 userptr, struct bo *bo)
{
	int ret;

	ret = kfd_alloc_memory(kfd, gpu_id, flags, va, BO_SIZE, userptr,
			       &bo->handle, &bo->mmap_offset);
	bo->va = va;
	if (userptr)
		bo->mmap_offset = 0;
	return ret;
}

/* Maps @bo through @drm_fd at @offset, writes or checks its pattern */
static int touch_bo(int drm_fd, const struct bo *bo, __u64 offset, bool write)
{
	void *p = mmap(NULL, BO_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		       drm_fd, (off_t)offset);
	long bad = -1;

	if (p == MAP_FAILED)
		return -errno;
	if (write)
		fill(p, BO_SIZE, bo->seed);
	else
		bad = check_fill(p, BO_SIZE, bo->seed);
	if (bad >= 0)
		fprintf(stderr, "BO at %#llx: word %ld differs\n",
			(unsigned long long)bo->va, bad);
	munmap(p, BO_SIZE);
	return bad >= 0 ? -EBADMSG : 0;
}

/*
 * The process to be dumped: a VM on each GPU of @plan, the BOs, their
 * patterns, mapped on all of @plan's GPUs; then its /dev/kfd goes to the
 * test and it waits for the dump to end.
 */
static void dumpee_main(int sock, const struct bo_setup *setup,
			struct bo_plan *plan, bool with_userptr)
{
	__u32 ids[2], vram = KFD_IOC_ALLOC_MEM_FLAGS_VRAM |
		KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
	__u32 gtt = KFD_IOC_ALLOC_MEM_FLAGS_GTT |
		KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
	__u64 va = (uintptr_t)setup->va_base;
	int kfd = kfd_open(), drm[2], i;

	CHILD_CHECK(kfd >= 0);
	for (i = 0; i < plan->nr_gpus; i++) {
		ids[i] = plan->gpus[i].gpu_id;
		drm[i] = open_render_node(&plan->gpus[i]);
		CHILD_CHECK(drm[i] >= 0);
		CHILD_CHECK(!kfd_acquire_vm(kfd, drm[i], ids[i]));
	}
	CHILD_CHECK(kfd_in_gpuvm_aperture(kfd, ids[0], va, VA_SPAN));
	plan->nr_bos = 0;
	if (with_userptr) {
		CHILD_CHECK(!alloc_bo(kfd, ids[0], vram, va, 0,
				      &plan->bos[BO_VRAM]));
		plan->nr_bos++;
	}
	CHILD_CHECK(!alloc_bo(kfd, ids[0], gtt, va + VA_ALIGN, 0,
			      &plan->bos[plan->nr_bos++]));
	if (with_userptr) {
		CHILD_CHECK(kfd_in_gpuvm_aperture(kfd, ids[0],
						  (uintptr_t)setup->userptr,
						  BO_SIZE));
		CHILD_CHECK(!alloc_bo(kfd, ids[0],
				      KFD_IOC_ALLOC_MEM_FLAGS_USERPTR |
				      KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE,
				      (uintptr_t)setup->userptr,
				      (uintptr_t)setup->userptr,
				      &plan->bos[plan->nr_bos++]));
	}
	for (i = 0; i < plan->nr_bos; i++) {
		plan->bos[i].seed = 0x51 + i;
		if (plan->bos[i].mmap_offset)
			CHILD_CHECK(!touch_bo(drm[0], &plan->bos[i],
					      plan->bos[i].mmap_offset, true));
		CHILD_CHECK(!kfd_map_memory(kfd, true, plan->bos[i].handle,
					    ids, plan->nr_gpus));
	}
	CHILD_CHECK(!send_fd(sock, kfd, plan, sizeof(*plan)));
	sync_wait(sock);	/* until the dump is done */
	_exit(0);
}

/*
 * Dumps a child as CRIU does (ptrace-seize, PROCESS_INFO, CHECKPOINT,
 * UNPAUSE on its /dev/kfd file) into a memfd, which it returns. The child
 * has exited when it returns.
 */
static int dump_bo_child(struct __test_metadata *_metadata,
			 const struct bo_setup *setup, struct bo_plan *plan,
			 bool with_userptr)
{
	struct kfd_ioctl_criu_args args;
	int sv[2], kfd, memfd;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(sv[0]);
		dumpee_main(sv[1], setup, plan, with_userptr);
	}
	close(sv[1]);
	kfd = recv_fd(sv[0], plan, sizeof(*plan));
	ASSERT_LE(0, kfd) TH_LOG("the dumpee did not set up its BOs");
	ASSERT_EQ(0, ptrace(PTRACE_SEIZE, pid, 0, 0));
	memfd = memfd_create("kfd-criu-bo-image", MFD_CLOEXEC);
	ASSERT_LE(0, memfd);
	ASSERT_EQ(0, criu_image_op(kfd, KFD_CRIU_OP_PROCESS_INFO, -1, &args));
	EXPECT_EQ(pid, (pid_t)args.pid);
	ASSERT_EQ(0, criu_image_op(kfd, KFD_CRIU_OP_CHECKPOINT, memfd, &args));
	EXPECT_EQ((off_t)args.image_size, fd_size(memfd));
	/* At least the contents of the VRAM and GTT BOs */
	EXPECT_LE((__u64)(with_userptr ? 2 : 1) * BO_SIZE, args.image_size);
	ASSERT_EQ(0, criu_image_op(kfd, KFD_CRIU_OP_UNPAUSE, -1, &args));
	sync_send(sv[0]);
	EXPECT_EQ(0, wait_child(pid));
	close(kfd);
	close(sv[0]);
	ASSERT_EQ(0, lseek(memfd, 0, SEEK_SET));
	return memfd;
}

/* Whether each of @n offset map entries names one of @ids' @nr GPUs */
static bool offsets_name_gpus(const struct kfd_criu_offset_map *map, __u32 n,
			      const __u32 *ids, int nr)
{
	__u32 i;
	int j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < nr && ids[j] != map[i].gpu_id; j++)
			;
		if (j == nr || map[i].reserved)
			return false;
	}
	return true;
}

/*
 * Restores @image_fd with a GPU map of @plan's GPUs, first with no room
 * for offsets to see -ENOSPC (if any moved), then with the room RESTORE
 * asked for; waits for RESUME and checks every BO.
 */
static void restoree_main(int sock, int image_fd, const struct bo_plan *plan)
{
	struct kfd_criu_offset_map offsets[2 * MAX_BOS];
	struct kfd_criu_gpu_map map[2] = { 0 };
	struct kfd_ioctl_criu_args args;
	__u32 ids[2], n;
	int fd = kfd_open(), i, ret;

	CHILD_CHECK(fd >= 0);
	for (i = 0; i < plan->nr_gpus; i++) {
		ids[i] = plan->gpus[i].gpu_id;
		map[i].local_gpu_id = ids[i];
		map[i].drm_fd = open_render_node(&plan->gpus[i]);
		CHILD_CHECK(map[i].drm_fd >= 0);
	}
	ret = criu_restore_mapped(fd, image_fd, map, plan->nr_gpus, offsets, 0,
				  &args);
	if (ret == -ENOSPC) {
		/* Nothing restored: the same process takes the image again */
		n = args.num_offset_map;
		CHILD_CHECK(n > 0 && n <= 2 * MAX_BOS);
		CHILD_CHECK(!lseek(image_fd, 0, SEEK_SET));
		ret = criu_restore_mapped(fd, image_fd, map, plan->nr_gpus,
					  offsets, n, &args);
	}
	CHILD_CHECK(!ret);
	CHILD_CHECK(args.image_size == (__u64)fd_size(image_fd));
	n = args.num_offset_map;
	CHILD_CHECK(offsets_name_gpus(offsets, n, ids, plan->nr_gpus));
	sync_send(sock);
	sync_wait(sock);	/* resumed */

	for (i = 0; i < plan->nr_bos; i++) {
		const struct bo *bo = &plan->bos[i];

		if (bo->mmap_offset)
			CHILD_CHECK(!touch_bo(map[0].drm_fd, bo,
					      criu_moved_offset(offsets, n, ids[0],
								bo->mmap_offset),
					      false));
		/* Same handle, still mapped on every GPU */
		CHILD_CHECK(!kfd_map_memory(fd, false, bo->handle, ids,
					    plan->nr_gpus));
		CHILD_CHECK(!kfd_free_memory(fd, bo->handle));
	}
	_exit(0);
}

static void restore_and_check(struct __test_metadata *_metadata,
			      int image_fd, const struct bo_plan *plan)
{
	int sv[2], kfd;
	pid_t pid;
	char c = 0;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(sv[0]);
		restoree_main(sv[1], image_fd, plan);
	}
	close(sv[1]);
	if (read(sv[0], &c, 1) != 1) {
		EXPECT_EQ(0, wait_child(pid)) TH_LOG("the restore failed");
		close(sv[0]);
		return;
	}
	kfd = kfd_open();
	ASSERT_LE(0, kfd);
	EXPECT_EQ(0, criu_resume_traced(kfd, pid));
	ASSERT_EQ(1, write(sv[0], &c, 1));
	EXPECT_EQ(0, wait_child(pid));
	close(kfd);
	close(sv[0]);
}

FIXTURE(gpus) {
	struct kfd_test_gpu gpus[KFD_TEST_MAX_GPUS];
	int nr_gpus;
	struct bo_setup setup;
};

FIXTURE_SETUP(gpus)
{
	char *base;

	memset(&self->setup, 0, sizeof(self->setup));
	self->nr_gpus = have_kfd() ?
		kfd_topology_gpus(self->gpus, KFD_TEST_MAX_GPUS) : 0;
	if (!self->nr_gpus)
		SKIP(return, NO_GPU_REASON);
	/* GPU virtual addresses that no CPU mapping of the test takes */
	base = mmap(NULL, VA_SPAN + VA_ALIGN, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, base);
	self->setup.va_base = (void *)(((uintptr_t)base + VA_ALIGN - 1) &
				       ~(VA_ALIGN - 1));
	self->setup.userptr = mmap(NULL, BO_SIZE, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->setup.userptr);
	/* Inherited by the dumpee and the restoree alike */
	fill(self->setup.userptr, BO_SIZE, 0x51 + BO_USERPTR);
}

FIXTURE_TEARDOWN(gpus)
{
}

/* VRAM, GTT and userptr BOs on one GPU survive dump and restore. */
TEST_F(gpus, bo_contents_survive_restore)
{
	struct bo_plan plan = { .nr_gpus = 1 };
	int image;

	plan.gpus[0] = self->gpus[0];
	image = dump_bo_child(_metadata, &self->setup, &plan, true);
	ASSERT_EQ(3, plan.nr_bos);
	restore_and_check(_metadata, image, &plan);
	close(image);
}

/* A GTT BO mapped on two GPUs comes back mapped on both. */
TEST_F(gpus, bo_mapped_on_two_gpus)
{
	struct bo_plan plan = { .nr_gpus = 2 };
	int image;

	if (self->nr_gpus < 2)
		SKIP(return, "fewer than two GPUs in the KFD topology");
	plan.gpus[0] = self->gpus[0];
	plan.gpus[1] = self->gpus[1];
	image = dump_bo_child(_metadata, &self->setup, &plan, false);
	ASSERT_EQ(1, plan.nr_bos);
	restore_and_check(_metadata, image, &plan);
	close(image);
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
