// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: GPU buffer objects through CRIU image mode
 *
 * Needs an AMD GPU; without one in the KFD topology the program is skipped
 * (kselftest exit code 4) with the reason "no GPU in the KFD topology".
 *
 * A child process acquires the GPU VM on a render node, allocates VRAM,
 * GTT and userptr buffer objects, writes patterns into those the CPU may
 * see (the userptr memory holds one already), maps them to the GPU and
 * hands its /dev/kfd file to the test over SCM_RIGHTS. The test, as its
 * ptrace parent, dumps it in image mode and lets it exit. A fresh process
 * that opened /dev/kfd and the render node and nothing else restores the
 * image with a GPU map and an offset map (first without room, to see
 * -E2BIG when offsets moved), is resumed, maps the buffers at their
 * (possibly moved) offsets and finds the patterns; the buffers' handles
 * are the dumped ones and still mapped on the GPU.
 *
 * VRAM comes twice. Without KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC, as a GPU with
 * a small BAR (an RX 7900 without resizable BAR) can only have most of
 * it, the CPU is not given the buffer, so its contents are checked
 * through the images instead (see inject_hidden_patterns()). With PUBLIC,
 * which 6.12 refuses on such a GPU, it is filled and checked by the CPU,
 * where the topology says the BAR shows all of VRAM.
 *
 * bo_mapped_on_two_gpus maps one buffer on two GPUs and is skipped with
 * fewer. failed_restore_in_last_chunk_leaves_nothing breaks the last
 * contents chunk of an image, once by a flipped byte and once by cutting
 * the image inside it, and checks that RESTORE fails with -EBADMSG and
 * -ENODATA, that RESUME then refuses the process, that the failed restore
 * gave back the VRAM it took, and that the same process then restores the
 * intact image.
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
#define MAX_BOS			4
#define MAX_BAD_IMAGES		2
#define NO_GPU_REASON		"no GPU in the KFD topology"
/* How long freed VRAM may take to show as available again */
#define SETTLE_MS		5000

/* Kinds of buffer; each has its own pattern seed, SEED_BASE + kind */
enum bo_kind { BO_VRAM_HIDDEN, BO_VRAM_PUBLIC, BO_GTT, BO_USERPTR };
#define SEED_BASE		0x51

/**
 * struct bo - a buffer object of the dumped process
 * @va: its GPU virtual address
 * @handle: its handle, as ALLOC_MEMORY_OF_GPU returned it
 * @mmap_offset: where its render node maps it, 0 for a userptr BO
 * @kind: its &enum bo_kind
 */
struct bo {
	__u64 va;
	__u64 handle;
	__u64 mmap_offset;
	enum bo_kind kind;
};

/**
 * struct bo_plan - what the dumped process set up
 * @gpus: the GPUs it acquired VMs on
 * @nr_gpus: entries in @gpus
 * @one_of_each: every kind of buffer on the first GPU, else a GTT one
 * @vram_public: the first GPU's BAR shows all its VRAM, so PUBLIC VRAM
 *	is allowed
 * @bos: its buffer objects
 * @nr_bos: entries in @bos
 */
struct bo_plan {
	struct kfd_test_gpu gpus[2];
	int nr_gpus;
	bool one_of_each;
	bool vram_public;
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

/**
 * struct bad_image - an image RESTORE must refuse, and how
 * @name: what is wrong with it, for the log
 * @fd: the image, at its start
 * @err: the negative errno RESTORE must return
 */
struct bad_image {
	const char *name;
	int fd;
	int err;
};

/**
 * struct restore_job - what a restoree gets from the test
 * @plan: the dumped process
 * @image: the intact image, at its start
 * @bad: images to be refused before @image is restored
 * @nr_bad: entries in @bad
 * @vram_before: available VRAM of the first GPU before the dumpee existed
 */
struct restore_job {
	const struct bo_plan *plan;
	int image;
	struct bad_image bad[MAX_BAD_IMAGES];
	int nr_bad;
	__u64 vram_before;
};

static __u32 bo_seed(const struct bo *bo)
{
	return SEED_BASE + bo->kind;
}

static bool bo_has_contents(const struct bo *bo)
{
	return bo->kind != BO_USERPTR;
}

/* The CPU is not given the buffer: only images show its contents */
static bool bo_is_hidden(const struct bo *bo)
{
	return bo->kind == BO_VRAM_HIDDEN;
}

static __u32 bo_alloc_flags(enum bo_kind kind)
{
	switch (kind) {
	case BO_VRAM_HIDDEN:
		return KFD_IOC_ALLOC_MEM_FLAGS_VRAM |
		       KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
	case BO_VRAM_PUBLIC:
		return KFD_IOC_ALLOC_MEM_FLAGS_VRAM |
		       KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC |
		       KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
	case BO_GTT:
		return KFD_IOC_ALLOC_MEM_FLAGS_GTT |
		       KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
	default:
		return KFD_IOC_ALLOC_MEM_FLAGS_USERPTR |
		       KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
	}
}

static __u64 pattern(__u32 seed, size_t i)
{
	return ((__u64)seed << 32) ^ (i * 0x9e3779b97f4a7c15ULL);
}

/* Fills @size bytes at @mem, which lie at byte @at of a BO */
static void fill(void *mem, size_t at, size_t size, __u32 seed)
{
	__u64 *p = mem;
	size_t i;

	for (i = 0; i < size / 8; i++)
		p[i] = pattern(seed, at / 8 + i);
}

/*
 * Index of the first word of the @size bytes at @mem, at byte @at of a
 * BO, that differs from the pattern, or from zero with @seed 0; or -1
 */
static long check_fill(const void *mem, size_t at, size_t size, __u32 seed)
{
	const __u64 *p = mem;
	size_t i;

	for (i = 0; i < size / 8; i++)
		if (p[i] != (seed ? pattern(seed, at / 8 + i) : 0))
			return i;
	return -1;
}

static int alloc_bo(int kfd, __u32 gpu_id, enum bo_kind kind, __u64 va,
		    __u64 userptr, struct bo *bo)
{
	int ret;

	bo->kind = kind;
	ret = kfd_alloc_memory(kfd, gpu_id, bo_alloc_flags(kind), va, BO_SIZE,
			       userptr, &bo->handle, &bo->mmap_offset);
	bo->va = va;
	if (userptr)
		bo->mmap_offset = 0;
	if (ret)
		fprintf(stderr, "# ALLOC_MEMORY_OF_GPU of kind %d at %#llx: %s\n",
			kind, (unsigned long long)va, strerror(-ret));
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
		fill(p, 0, BO_SIZE, bo_seed(bo));
	else
		bad = check_fill(p, 0, BO_SIZE, bo_seed(bo));
	if (bad >= 0)
		fprintf(stderr, "# BO at %#llx: word %ld differs\n",
			(unsigned long long)bo->va, bad);
	munmap(p, BO_SIZE);
	return bad >= 0 ? -EBADMSG : 0;
}

/* The buffers the dumpee allocates, in order, on the first GPU */
static int plan_kinds(const struct bo_plan *plan, enum bo_kind *kinds)
{
	int n = 0;

	if (plan->one_of_each)
		kinds[n++] = BO_VRAM_HIDDEN;
	if (plan->one_of_each && plan->vram_public)
		kinds[n++] = BO_VRAM_PUBLIC;
	kinds[n++] = BO_GTT;
	if (plan->one_of_each)
		kinds[n++] = BO_USERPTR;
	return n;
}

/*
 * Allocates @plan's buffers on its first GPU: the userptr one at the
 * address of its memory, the others %VA_ALIGN apart in the reserved span
 */
static void alloc_plan_bos(int kfd, const struct bo_setup *setup,
			   struct bo_plan *plan)
{
	__u64 base = (uintptr_t)setup->va_base, va, cpu;
	__u32 id = plan->gpus[0].gpu_id;
	enum bo_kind kinds[MAX_BOS];
	int i, n = plan_kinds(plan, kinds);

	CHILD_CHECK(kfd_in_gpuvm_aperture(kfd, id, base, VA_SPAN));
	for (i = 0; i < n; i++) {
		cpu = kinds[i] == BO_USERPTR ? (uintptr_t)setup->userptr : 0;
		va = cpu ? cpu : base + i * VA_ALIGN;
		CHILD_CHECK(kfd_in_gpuvm_aperture(kfd, id, va, BO_SIZE));
		CHILD_CHECK(!alloc_bo(kfd, id, kinds[i], va, cpu,
				      &plan->bos[i]));
	}
	plan->nr_bos = n;
}

/*
 * The process to be dumped: a VM on each GPU of @plan, the BOs, the
 * patterns of those the CPU may see, mapped on all of @plan's GPUs; then
 * its /dev/kfd goes to the test and it waits for the dump to end.
 */
static void dumpee_main(int sock, const struct bo_setup *setup,
			struct bo_plan *plan)
{
	int kfd = kfd_open(), drm[2], i;
	__u32 ids[2];

	CHILD_CHECK(kfd >= 0);
	for (i = 0; i < plan->nr_gpus; i++) {
		ids[i] = plan->gpus[i].gpu_id;
		drm[i] = open_render_node(&plan->gpus[i]);
		CHILD_CHECK(drm[i] >= 0);
		CHILD_CHECK(!kfd_acquire_vm(kfd, drm[i], ids[i]));
	}
	alloc_plan_bos(kfd, setup, plan);
	for (i = 0; i < plan->nr_bos; i++) {
		if (plan->bos[i].mmap_offset && !bo_is_hidden(&plan->bos[i]))
			CHILD_CHECK(!touch_bo(drm[0], &plan->bos[i],
					      plan->bos[i].mmap_offset, true));
		CHILD_CHECK(!kfd_map_memory(kfd, true, plan->bos[i].handle,
					    ids, plan->nr_gpus));
	}
	CHILD_CHECK(!send_fd(sock, kfd, plan, sizeof(*plan)));
	sync_wait(sock);	/* until the dump is done */
	_exit(0);
}

static bool plan_has_hidden_bos(const struct bo_plan *plan)
{
	int i;

	for (i = 0; i < plan->nr_bos; i++)
		if (bo_is_hidden(&plan->bos[i]))
			return true;
	return false;
}

static int bos_with_contents(const struct bo_plan *plan)
{
	int i, n = 0;

	for (i = 0; i < plan->nr_bos; i++)
		n += bo_has_contents(&plan->bos[i]);
	return n;
}

/*
 * Dumps a child as CRIU does (ptrace-seize, PROCESS_INFO, CHECKPOINT,
 * UNPAUSE on its /dev/kfd file) into a memfd, which it returns. The child
 * has exited when it returns.
 */
static int dump_bo_child(struct __test_metadata *_metadata,
			 const struct bo_setup *setup, struct bo_plan *plan)
{
	struct kfd_ioctl_criu_args args;
	int sv[2], kfd, memfd;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(sv[0]);
		dumpee_main(sv[1], setup, plan);
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
	EXPECT_LE((__u64)bos_with_contents(plan) * BO_SIZE, args.image_size);
	ASSERT_EQ(0, criu_image_op(kfd, KFD_CRIU_OP_UNPAUSE, -1, &args));
	sync_send(sv[0]);
	EXPECT_EQ(0, wait_child(pid));
	close(kfd);
	close(sv[0]);
	ASSERT_EQ(0, lseek(memfd, 0, SEEK_SET));
	return memfd;
}

/* Index among the BO records of @img of the BO at @va, or -1 */
static int image_bo_index(unsigned char *img, size_t len, __u64 va)
{
	struct criu_img_rec rec;
	int i;

	for (i = 0; criu_img_find(img, len, CRIU_IMG_REC_BO, i, &rec); i++)
		if (criu_img_le64(rec.payload + CRIU_IMG_BO_VA) == va)
			return i;
	return -1;
}

/* What image_bo_contents() does with each contents chunk of a BO */
enum chunk_op { CHUNK_IS_ZERO, CHUNK_HAS_PATTERN, CHUNK_FILL };

/*
 * Applies @op to the contents chunks of @bo in @img: checks them against
 * zero or @bo's pattern, or writes the pattern into them and fixes their
 * CRCs. Returns 0; -ENOENT when @img has no record of @bo; -ENODATA when
 * the chunks do not cover the BO; -EBADMSG when a chunk differs.
 */
static int image_bo_contents(unsigned char *img, size_t len,
			     const struct bo *bo, enum chunk_op op)
{
	int index = image_bo_index(img, len, bo->va);
	__u32 seed = op == CHUNK_IS_ZERO ? 0 : bo_seed(bo);
	struct criu_img_rec rec;
	size_t covered = 0, n;
	__u64 at;
	bool ok;

	if (index < 0)
		return -ENOENT;
	for (ok = criu_img_first(img, len, &rec); ok;
	     ok = criu_img_next(img, len, &rec)) {
		if (rec.type != CRIU_IMG_REC_BO_DATA ||
		    rec.length < CRIU_IMG_BO_DATA_HDR ||
		    criu_img_le32(rec.payload + CRIU_IMG_BO_DATA_INDEX) != (__u32)index)
			continue;
		at = criu_img_le64(rec.payload + CRIU_IMG_BO_DATA_OFFSET);
		n = rec.length - CRIU_IMG_BO_DATA_HDR;
		covered += n;
		if (op == CHUNK_FILL) {
			fill(rec.payload + CRIU_IMG_BO_DATA_HDR, at, n, seed);
			criu_img_fix_crc(img, &rec);
		} else if (check_fill(rec.payload + CRIU_IMG_BO_DATA_HDR, at,
				      n, seed) >= 0) {
			fprintf(stderr, "# BO at %#llx: the chunk at %#llx differs\n",
				(unsigned long long)bo->va,
				(unsigned long long)at);
			return -EBADMSG;
		}
	}
	return covered == BO_SIZE ? 0 : -ENODATA;
}

/*
 * Gives the hidden VRAM buffers of @plan their patterns in the image
 * @img, which holds them as dumped: zeroed, as 6.12 clears new VRAM.
 *
 * The CPU cannot check such a buffer. Its contents still go both ways:
 * the dump read zeroes, which says the copy engine reached it; the
 * restore writes the pattern put into the image here, and a dump of the
 * restored process (check_hidden_bos()) must read the pattern back. Both
 * directions use the copy path of visible VRAM, whose contents the CPU
 * checks where PUBLIC VRAM is possible, so an error that both directions
 * share, such as a wrong offset, is caught there. A GPU copy into a GTT
 * buffer would check the restored bytes without the kernel's copy path,
 * but needs a user queue, which kfd_criu_queue_test covers.
 */
static void inject_hidden_patterns(struct __test_metadata *_metadata,
				   unsigned char *img, size_t len,
				   const struct bo_plan *plan)
{
	const struct bo *bo;
	int i;

	for (i = 0; i < plan->nr_bos; i++) {
		bo = &plan->bos[i];
		if (!bo_is_hidden(bo))
			continue;
		ASSERT_EQ(0, image_bo_contents(img, len, bo, CHUNK_IS_ZERO))
			TH_LOG("the dumped contents of new VRAM are not zero");
		ASSERT_EQ(0, image_bo_contents(img, len, bo, CHUNK_FILL));
	}
}

/*
 * Dumps a child of @plan and returns its image in memory, the hidden
 * buffers' patterns put in, its length in *@len.
 */
static unsigned char *dump_and_load(struct __test_metadata *_metadata,
				    const struct bo_setup *setup,
				    struct bo_plan *plan, size_t *len)
{
	int image = dump_bo_child(_metadata, setup, plan);
	unsigned char *img;

	ASSERT_LE(0, image);
	img = criu_img_load(image, len);
	close(image);
	ASSERT_NE(NULL, img);
	inject_hidden_patterns(_metadata, img, *len, plan);
	return img;
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
 * The restored process dumps itself (a process may use its own file)
 * and finds its hidden buffers' patterns in that image.
 */
static void check_hidden_bos(int kfd, const struct bo_plan *plan)
{
	struct kfd_ioctl_criu_args args;
	unsigned char *img;
	const char *op;
	__u64 size;
	size_t len;
	pid_t pid;
	int fd, i;

	if (!plan_has_hidden_bos(plan))
		return;
	fd = memfd_create("kfd-criu-bo-redump", MFD_CLOEXEC);
	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(!criu_dump(kfd, fd, &pid, &size, &op));
	CHILD_CHECK(!criu_image_op(kfd, KFD_CRIU_OP_UNPAUSE, -1, &args));
	img = criu_img_load(fd, &len);
	CHILD_CHECK(img && len == size);
	for (i = 0; i < plan->nr_bos; i++)
		if (bo_is_hidden(&plan->bos[i]))
			CHILD_CHECK(!image_bo_contents(img, len, &plan->bos[i],
						       CHUNK_HAS_PATTERN));
	free(img);
	close(fd);
}

/* VRAM that @gpu_id can still give, or 0 */
static __u64 available_vram(int kfd, __u32 gpu_id)
{
	struct kfd_ioctl_get_available_memory_args args = { .gpu_id = gpu_id };

	return kfd_ioctl(kfd, AMDKFD_IOC_AVAILABLE_MEMORY, &args) ?
	       0 : args.available;
}

/*
 * The available VRAM of @gpu_id once it stops changing: a process that
 * exited, such as the dumpee, gives its VRAM back from a worker, later.
 */
static __u64 settled_vram(int kfd, __u32 gpu_id)
{
	__u64 deadline = now_ms() + SETTLE_MS, last, now;

	now = available_vram(kfd, gpu_id);
	do {
		last = now;
		usleep(100 * 1000);
		now = available_vram(kfd, gpu_id);
	} while (now != last && now_ms() < deadline);
	return now;
}

/*
 * Whether the available VRAM of @gpu_id is back to @before within
 * %SETTLE_MS: a buffer freed while a copy may still use it is released
 * when the copy is done.
 */
static bool vram_given_back(int kfd, __u32 gpu_id, __u64 before)
{
	__u64 deadline = now_ms() + SETTLE_MS;

	while (available_vram(kfd, gpu_id) < before) {
		if (now_ms() > deadline)
			return false;
		usleep(10 * 1000);
	}
	return true;
}

/*
 * Refuses each bad image of @job as it must, and stays as it was: the
 * VRAM the restore took is given back, RESUME finds no restored process
 * (-EBADFD), and a later RESTORE in restoree_main() finds no KFD state
 * (it would fail with -EBUSY), its render node no compute VM.
 *
 * The VRAM is measured against what the GPU had before the dumpee
 * existed, once the dumpee's own VRAM is back: its release, from a
 * worker after it exited, must not land among the bad restores and
 * hide what one kept. Memory another process pins meanwhile (a
 * compositor's scanout buffers on a desktop GPU) makes the check fail;
 * run the test on an otherwise idle GPU.
 */
static void refuse_bad_images(int kfd, const struct restore_job *job,
			      const struct kfd_criu_gpu_map *map)
{
	struct kfd_criu_offset_map offsets[2 * MAX_BOS];
	__u32 gpu_id = job->plan->gpus[0].gpu_id;
	struct kfd_ioctl_criu_args args;
	__u64 before;
	int i, ret;

	if (!job->nr_bad)
		return;
	before = job->vram_before;
	CHILD_CHECK(before);
	CHILD_CHECK(vram_given_back(kfd, gpu_id, before));
	for (i = 0; i < job->nr_bad; i++) {
		ret = criu_restore_mapped(kfd, job->bad[i].fd, map,
					  job->plan->nr_gpus, offsets,
					  2 * MAX_BOS, &args);
		if (ret != job->bad[i].err) {
			fprintf(stderr, "# RESTORE of an image with %s: %s, not %s\n",
				job->bad[i].name, strerror(-ret),
				strerror(-job->bad[i].err));
			_exit(1);
		}
		CHILD_CHECK(vram_given_back(kfd, gpu_id, before));
		CHILD_CHECK(criu_resume(kfd, getpid()) == -EBADFD);
	}
}

/*
 * Restores the intact image of @job with a GPU map of its plan's GPUs,
 * first with no room for offsets to see -E2BIG (if any moved), then with
 * the room RESTORE asked for; waits for RESUME and checks every BO. Bad
 * images of @job come first.
 */
static void restoree_main(int sock, const struct restore_job *job)
{
	const struct bo_plan *plan = job->plan;
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
	refuse_bad_images(fd, job, map);
	ret = criu_restore_mapped(fd, job->image, map, plan->nr_gpus, offsets,
				  0, &args);
	if (ret == -E2BIG) {
		/* Nothing restored: the same process takes the image again */
		n = args.num_offset_map;
		CHILD_CHECK(n > 0 && n <= 2 * MAX_BOS);
		CHILD_CHECK(!lseek(job->image, 0, SEEK_SET));
		ret = criu_restore_mapped(fd, job->image, map, plan->nr_gpus,
					  offsets, n, &args);
	}
	CHILD_CHECK(!ret);
	CHILD_CHECK(args.image_size == (__u64)fd_size(job->image));
	n = args.num_offset_map;
	CHILD_CHECK(offsets_name_gpus(offsets, n, ids, plan->nr_gpus));
	sync_send(sock);
	sync_wait(sock);	/* resumed */

	check_hidden_bos(fd, plan);
	for (i = 0; i < plan->nr_bos; i++) {
		const struct bo *bo = &plan->bos[i];

		if (bo->mmap_offset && !bo_is_hidden(bo))
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
			      const struct restore_job *job)
{
	int sv[2], kfd;
	pid_t pid;
	char c = 0;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(sv[0]);
		restoree_main(sv[1], job);
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
	fill(self->setup.userptr, 0, BO_SIZE, SEED_BASE + BO_USERPTR);
}

FIXTURE_TEARDOWN(gpus)
{
}

/*
 * A plan of every kind of buffer on the first GPU, PUBLIC VRAM where the
 * topology says the BAR allows it
 */
static void plan_one_of_each(struct __test_metadata *_metadata,
			     const struct kfd_test_gpu *gpu,
			     struct bo_plan *plan)
{
	int public = kfd_gpu_vram_public(gpu);

	ASSERT_LE(0, public) TH_LOG("GPU node %d lists no VRAM heap",
				    gpu->node);
	memset(plan, 0, sizeof(*plan));
	plan->nr_gpus = 1;
	plan->gpus[0] = *gpu;
	plan->one_of_each = true;
	plan->vram_public = public;
	if (!public)
		TH_LOG("small BAR: no PUBLIC VRAM buffer, VRAM checked through images");
}

/* VRAM, GTT and userptr BOs on one GPU survive dump and restore. */
TEST_F(gpus, bo_contents_survive_restore)
{
	struct restore_job job = { 0 };
	struct bo_plan plan;
	unsigned char *img;
	size_t len;

	plan_one_of_each(_metadata, &self->gpus[0], &plan);
	img = dump_and_load(_metadata, &self->setup, &plan, &len);
	ASSERT_EQ(3 + plan.vram_public, plan.nr_bos);
	job.plan = &plan;
	job.image = memfd_from(img, len);
	ASSERT_LE(0, job.image);
	restore_and_check(_metadata, &job);
	close(job.image);
	free(img);
}

/* A GTT BO mapped on two GPUs comes back mapped on both. */
TEST_F(gpus, bo_mapped_on_two_gpus)
{
	struct restore_job job = { 0 };
	struct bo_plan plan = { .nr_gpus = 2 };

	if (self->nr_gpus < 2)
		SKIP(return, "fewer than two GPUs in the KFD topology");
	plan.gpus[0] = self->gpus[0];
	plan.gpus[1] = self->gpus[1];
	job.plan = &plan;
	job.image = dump_bo_child(_metadata, &self->setup, &plan);
	ASSERT_EQ(1, plan.nr_bos);
	restore_and_check(_metadata, &job);
	close(job.image);
}

/*
 * A copy of @img with a payload byte of its last contents chunk flipped,
 * which its CRC no longer matches
 */
static int image_with_flipped_chunk(unsigned char *img, size_t len)
{
	struct criu_img_rec rec;
	unsigned char *last;
	int fd;

	if (!criu_img_find(img, len, CRIU_IMG_REC_BO_DATA, -1, &rec))
		return -1;
	last = rec.payload + rec.length - 1;
	*last ^= 0x01;
	fd = memfd_from(img, len);
	*last ^= 0x01;
	return fd;
}

/* A copy of @img that ends in the middle of its last contents chunk */
static int image_cut_in_chunk(unsigned char *img, size_t len)
{
	struct criu_img_rec rec;

	if (!criu_img_find(img, len, CRIU_IMG_REC_BO_DATA, -1, &rec))
		return -1;
	return memfd_from(img, rec.payload + rec.length / 2 - img);
}

/*
 * A restore that fails in the last contents chunk, when the buffers, the
 * VM and the contents before it are in place, undoes all of it: RESTORE
 * returns the errno of the stream (-EBADMSG for the CRC, -ENODATA for the
 * cut), the VRAM comes back, RESUME refuses, and the same process with the
 * same render node restores the intact image.
 */
TEST_F_TIMEOUT(gpus, failed_restore_in_last_chunk_leaves_nothing, 120)
{
	struct restore_job job = { 0 };
	struct bo_plan plan;
	unsigned char *img;
	size_t len;
	int i, kfd;

	plan_one_of_each(_metadata, &self->gpus[0], &plan);
	kfd = kfd_open();
	ASSERT_LE(0, kfd);
	job.vram_before = settled_vram(kfd, plan.gpus[0].gpu_id);
	close(kfd);
	ASSERT_NE(0, job.vram_before) TH_LOG("no available VRAM to measure");
	img = dump_and_load(_metadata, &self->setup, &plan, &len);
	job.plan = &plan;
	job.bad[0] = (struct bad_image){
		.name = "a flipped byte in its last chunk",
		.fd = image_with_flipped_chunk(img, len), .err = -EBADMSG,
	};
	job.bad[1] = (struct bad_image){
		.name = "an end inside its last chunk",
		.fd = image_cut_in_chunk(img, len), .err = -ENODATA,
	};
	job.nr_bad = MAX_BAD_IMAGES;
	job.image = memfd_from(img, len);
	ASSERT_LE(0, job.image);
	for (i = 0; i < job.nr_bad; i++)
		ASSERT_LE(0, job.bad[i].fd) TH_LOG("no contents chunk to break");
	restore_and_check(_metadata, &job);
	for (i = 0; i < job.nr_bad; i++)
		close(job.bad[i].fd);
	close(job.image);
	free(img);
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
