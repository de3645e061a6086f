// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: the KFD state of a ROCm runtime through CRIU image mode
 *
 * Needs an AMD GPU of GFX9 or later; without a GPU in the KFD topology the
 * program is skipped (kselftest exit code 4) with the reason "no GPU in
 * the KFD topology".
 *
 * A child process builds on every GPU what a ROCm runtime builds there
 * before it runs anything: a VM on the render node, the runtime enabled
 * (AMDKFD_IOC_RUNTIME_ENABLE, with trap temporaries, before any queue,
 * which 6.12 requires), a doorbell buffer and an MMIO remap
 * buffer mapped on the GPU and by the CPU, a trap handler (its code and
 * memory in two GTT buffers, installed with SET_TRAP_HANDLER), and an
 * AQL queue with its ring, its read and write pointers in one page, an
 * EOP buffer and a CWSR area sized from the topology, a CU mask and,
 * where the GPU has global wave sync, GWS. The test dumps it as CRIU
 * does. A fresh process restores the image, maps the doorbell and MMIO
 * pages again as CRIU would, and is resumed.
 *
 * The process cannot read its trap handler or runtime state back, so the
 * restored process dumps itself and the test compares the two images:
 * the same trap handler addresses on every GPU, the runtime enabled with
 * the same r_debug and trap temporaries, every buffer at the same VA
 * with the same size, flags, handle and GPU mappings (its mmap offset
 * where the offset map moved it), and every queue record the same: id,
 * doorbell slot, buffers, GWS and CU mask. It also uses what came back:
 * a second RUNTIME_ENABLE is refused with -EBUSY, no more GWS can be
 * taken on a GPU whose queue holds it (-EBUSY), the CU mask can be set
 * on the restored
 * queue ids, and the queues and buffers are destroyed and freed by
 * their dumped ids and handles.
 *
 * The AQL queues run nothing: a packet whose completion the test could
 * observe needs a kernel object or a runtime's signal layout, and
 * kfd_criu_queue_test covers restored queues that run. What the test
 * compares is what the kernel keeps and dumps: that a restored CU mask
 * reached the MQD, or the trap handler the CWSR page, shows only on the
 * GPU (debugfs kfd/mqds), which the test does not read.
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

#define NO_GPU_REASON		"no GPU in the KFD topology"
/* GPU virtual addresses reserved for each GPU's buffers */
#define GPU_SPAN		(512UL << 20)
#define VA_ALIGN		(2UL << 20)
/* Doorbells of a process on one SOC15 GPU: 1024 of 8 bytes */
#define DOORBELL_SLICE		8192UL
/* Where the read pointer lies in the queue's pointer page */
#define RPTR_OFFSET		0x80
/* The AQL packet type a ring slot starts with: nothing to run */
#define AQL_PACKET_INVALID	1
#define AQL_PACKET_BYTES	64
#define MAX_CU_MASK_WORDS	32
/* Offset map entries a GPU's buffers may need */
#define OFFSETS_PER_GPU		16
#define TEST_SECONDS		300

/* The buffers of one GPU */
enum rbo { RBO_DOORBELL, RBO_MMIO, RBO_TBA, RBO_TMA, RBO_RING, RBO_PTRS,
	   RBO_EOP, RBO_CWSR, RBO_NR };

/**
 * struct rbuf - a buffer object of the dumped process
 * @va: its GPU virtual address
 * @size: its size in bytes
 * @flags: the KFD_IOC_ALLOC_MEM_FLAGS_* it was allocated with
 * @handle: its handle
 * @mmap_offset: where its render node or /dev/kfd maps it
 * @present: allocated; the MMIO remap buffer may be missing
 */
struct rbuf {
	__u64 va;
	__u64 size;
	__u32 flags;
	__u64 handle;
	__u64 mmap_offset;
	bool present;
};

/**
 * struct rocm_gpu - what the dumpee sets up on one GPU
 * @gpu: the GPU
 * @cwsr: its compute queues' EOP buffer and CWSR area
 * @va_base: its %GPU_SPAN bytes of reserved virtual addresses
 * @bos: its buffers, by &enum rbo
 * @num_gws: the topology's num_gws; 0: the queue gets no GWS
 * @num_cu_mask: bits of the queue's CU mask
 * @cu_mask: the CU mask
 * @queue_id: the AQL queue's id
 * @doorbell_offset: the queue's doorbell mmap offset
 */
struct rocm_gpu {
	struct kfd_test_gpu gpu;
	struct kfd_cwsr_layout cwsr;
	__u64 va_base;
	struct rbuf bos[RBO_NR];
	__u32 num_gws;
	__u32 num_cu_mask;
	__u32 cu_mask[MAX_CU_MASK_WORDS];
	__u32 queue_id;
	__u64 doorbell_offset;
};

/**
 * struct rocm_plan - the dumped process
 * @gpus: its GPUs
 * @nr_gpus: entries in @gpus
 * @r_debug: the r_debug address it enabled the runtime with
 */
struct rocm_plan {
	struct rocm_gpu gpus[KFD_TEST_MAX_GPUS];
	int nr_gpus;
	__u64 r_debug;
};

/**
 * struct rocm_restore - what the restoree gets from the test
 * @plan: the dumped process
 * @image: the image, at its start
 */
struct rocm_restore {
	const struct rocm_plan *plan;
	int image;
};

/* Stands in for the runtime's r_debug, at the same address after fork */
static char r_debug_stub[64];

static size_t page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

static size_t doorbell_slice(void)
{
	size_t page = page_size();

	return (DOORBELL_SLICE + page - 1) / page * page;
}

static const char *rbo_name(enum rbo i)
{
	static const char * const names[RBO_NR] = {
		"doorbell", "MMIO remap", "trap handler code",
		"trap handler memory", "ring", "queue pointers", "EOP",
		"CWSR",
	};

	return names[i];
}

/* Sizes and flags of @g's buffers, as a ROCm runtime allocates them */
static void plan_gpu_bos(struct rocm_gpu *g)
{
	__u32 sys = KFD_IOC_ALLOC_MEM_FLAGS_GTT |
		KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
	__u32 queue = sys | KFD_IOC_ALLOC_MEM_FLAGS_COHERENT;
	size_t page = page_size();
	struct rbuf *b = g->bos;

	b[RBO_DOORBELL].size = doorbell_slice();
	b[RBO_DOORBELL].flags = KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL |
		KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
	b[RBO_MMIO].size = page;
	b[RBO_MMIO].flags = KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP |
		KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
	b[RBO_TBA].size = page;
	b[RBO_TBA].flags = sys | KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE;
	b[RBO_TMA].size = page;
	b[RBO_TMA].flags = sys;
	b[RBO_RING].size = page;
	b[RBO_PTRS].size = page;
	b[RBO_EOP].size = (g->cwsr.eop_size + page - 1) / page * page;
	b[RBO_CWSR].size = g->cwsr.area_size;
	b[RBO_RING].flags = queue;
	b[RBO_PTRS].flags = queue;
	b[RBO_EOP].flags = queue;
	b[RBO_CWSR].flags = queue;
}

/*
 * A CU mask of the lower half of @g's CUs, as a runtime that splits the
 * CUs between two queues could set it. Contiguous on purpose: 6.12 deals
 * the mask's bits round-robin to the XCCs of a partition and pairs them
 * per WGP from GFX10, so an every-other-bit mask would leave the odd XCCs
 * of an MI300 without a CU, and enable every WGP of an RX 7900.
 */
static void plan_cu_mask(struct rocm_gpu *g)
{
	__u64 per_cu = kfd_gpu_prop_or(&g->gpu, "simd_per_cu", 1) ?: 1;
	__u64 cus = kfd_gpu_prop_or(&g->gpu, "simd_count", 0) / per_cu;
	__u32 words = (cus + 31) / 32, half, i;

	if (words > MAX_CU_MASK_WORDS)
		words = MAX_CU_MASK_WORDS;
	if (!words)
		words = 1;
	half = cus / 2 ?: 1;
	if (half > words * 32)
		half = words * 32;
	g->num_cu_mask = words * 32;
	for (i = 0; i < words; i++)
		g->cu_mask[i] = 0;
	for (i = 0; i < half; i++)
		g->cu_mask[i / 32] |= 1U << (i % 32);
}

/*
 * Plans @gpu's state; NULL, or why the test leaves the GPU out. A
 * topology whose ctl_stack_size disagrees with its wave slots fails the
 * test (see kfd_gpu_cwsr_layout()).
 */
static const char *plan_gpu(struct __test_metadata *_metadata,
			    const struct kfd_test_gpu *gpu, __u64 va_base,
			    struct rocm_gpu *g)
{
	int ret;

	memset(g, 0, sizeof(*g));
	g->gpu = *gpu;
	g->va_base = va_base;
	if (kfd_gpu_prop_or(gpu, "gfx_target_version", 0) < 90000)
		return "older than GFX9";
	ret = kfd_gpu_cwsr_layout(gpu, &g->cwsr);
	if (ret == -ENODATA)
		return "the topology reports no CWSR area size";
	ASSERT_EQ(0, ret)
		TH_LOG("GPU %#x: topology wave slots do not give its ctl_stack_size %u",
		       gpu->gpu_id, g->cwsr.ctl_stack_size);
	g->num_gws = kfd_gpu_prop_or(gpu, "num_gws", 0);
	if (!g->num_gws)
		TH_LOG("GPU %#x has no GWS: its queue gets none",
		       gpu->gpu_id);
	plan_gpu_bos(g);
	plan_cu_mask(g);
	return NULL;
}

/*
 * Allocates @b on @g's GPU at @va and maps it there; an MMIO remap
 * buffer that the GPU cannot give (-ENOMEM: no remap page, or pages
 * larger than 4 KiB) is left out with a note.
 */
static int alloc_rbuf(int kfd, struct rocm_gpu *g, enum rbo i, __u64 va)
{
	struct rbuf *b = &g->bos[i];
	int ret;

	b->va = va;
	ret = kfd_alloc_memory(kfd, g->gpu.gpu_id, b->flags, va, b->size, 0,
			       &b->handle, &b->mmap_offset);
	if (ret == -ENOMEM && i == RBO_MMIO) {
		fprintf(stderr, "# GPU %#x gives no MMIO remap page: left out\n",
			g->gpu.gpu_id);
		return 0;
	}
	if (!ret)
		ret = kfd_map_memory(kfd, true, b->handle, &g->gpu.gpu_id, 1);
	if (ret) {
		fprintf(stderr, "# GPU %#x, %s buffer of %llu bytes: %s\n",
			g->gpu.gpu_id, rbo_name(i),
			(unsigned long long)b->size, strerror(-ret));
		return ret;
	}
	b->present = true;
	return 0;
}

/* Allocates @g's buffers %VA_ALIGN apart in its span of addresses */
static int alloc_gpu_bos(int kfd, struct rocm_gpu *g)
{
	__u64 va = g->va_base;
	int i, ret;

	for (i = 0; i < RBO_NR; i++) {
		if (va + g->bos[i].size > g->va_base + GPU_SPAN) {
			fprintf(stderr, "# GPU %#x: buffers past %lu MiB\n",
				g->gpu.gpu_id, GPU_SPAN >> 20);
			return -ENOSPC;
		}
		ret = alloc_rbuf(kfd, g, i, va);
		if (ret)
			return ret;
		va += (g->bos[i].size + VA_ALIGN - 1) & ~(VA_ALIGN - 1);
	}
	return 0;
}

/* Maps @size bytes of @fd at @offset, or NULL */
static void *map_shared(int fd, __u64 offset, size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       (off_t)offset);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Fills the ring with packets of type INVALID, as a runtime does before
 * the queue exists: the packet processor waits at such a slot.
 */
static int init_ring(int drm, const struct rocm_gpu *g)
{
	const struct rbuf *b = &g->bos[RBO_RING];
	unsigned char *ring = map_shared(drm, b->mmap_offset, b->size);
	size_t i;

	if (!ring)
		return -errno;
	memset(ring, 0, b->size);
	for (i = 0; i < b->size; i += AQL_PACKET_BYTES)
		*(__u16 *)(ring + i) = AQL_PACKET_INVALID;
	munmap(ring, b->size);
	return 0;
}

static int set_trap_handler(int kfd, const struct rocm_gpu *g)
{
	struct kfd_ioctl_set_trap_handler_args args = {
		.tba_addr = g->bos[RBO_TBA].va,
		.tma_addr = g->bos[RBO_TMA].va,
		.gpu_id = g->gpu.gpu_id,
	};

	return kfd_ioctl(kfd, AMDKFD_IOC_SET_TRAP_HANDLER, &args);
}

static int create_aql_queue(int kfd, struct rocm_gpu *g)
{
	struct kfd_ioctl_create_queue_args args = {
		.ring_base_address = g->bos[RBO_RING].va,
		.write_pointer_address = g->bos[RBO_PTRS].va,
		.read_pointer_address = g->bos[RBO_PTRS].va + RPTR_OFFSET,
		.ring_size = g->bos[RBO_RING].size,
		.gpu_id = g->gpu.gpu_id,
		.queue_type = KFD_IOC_QUEUE_TYPE_COMPUTE_AQL,
		.queue_percentage = 100,
		.queue_priority = 7,
		.eop_buffer_address = g->bos[RBO_EOP].va,
		.eop_buffer_size = g->cwsr.eop_size,
		.ctx_save_restore_address = g->bos[RBO_CWSR].va,
		.ctx_save_restore_size = g->cwsr.cwsr_size,
		.ctl_stack_size = g->cwsr.ctl_stack_size,
	};
	int ret = kfd_ioctl(kfd, AMDKFD_IOC_CREATE_QUEUE, &args);

	if (ret) {
		fprintf(stderr,
			"# GPU %#x: CREATE_QUEUE (AQL, CWSR %u x %u XCCs, control stack %u): %s\n",
			g->gpu.gpu_id, g->cwsr.cwsr_size, g->cwsr.num_xcc,
			g->cwsr.ctl_stack_size, strerror(-ret));
		return ret;
	}
	g->queue_id = args.queue_id;
	g->doorbell_offset = args.doorbell_offset;
	return 0;
}

static int destroy_queue(int kfd, __u32 queue_id)
{
	struct kfd_ioctl_destroy_queue_args args = { .queue_id = queue_id };

	return kfd_ioctl(kfd, AMDKFD_IOC_DESTROY_QUEUE, &args);
}

static int set_cu_mask(int kfd, const struct rocm_gpu *g)
{
	struct kfd_ioctl_set_cu_mask_args args = {
		.queue_id = g->queue_id,
		.num_cu_mask = g->num_cu_mask,
		.cu_mask_ptr = (uintptr_t)g->cu_mask,
	};

	return kfd_ioctl(kfd, AMDKFD_IOC_SET_CU_MASK, &args);
}

/* ALLOC_QUEUE_GWS of @num_gws for @g's queue; 0 releases it */
static int queue_gws(int kfd, const struct rocm_gpu *g, __u32 num_gws)
{
	struct kfd_ioctl_alloc_queue_gws_args args = {
		.queue_id = g->queue_id, .num_gws = num_gws,
	};

	return kfd_ioctl(kfd, AMDKFD_IOC_ALLOC_QUEUE_GWS, &args);
}

static int enable_runtime(int kfd, __u64 r_debug)
{
	struct kfd_ioctl_runtime_enable_args args = {
		.r_debug = r_debug,
		.mode_mask = KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK |
			     KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK,
	};

	return kfd_ioctl(kfd, AMDKFD_IOC_RUNTIME_ENABLE, &args);
}

/*
 * Maps @g's doorbell page (the slice that holds the queue's doorbell)
 * and MMIO remap page through /dev/kfd, as a runtime uses them; CRIU
 * recreates such mappings before RESUME.
 */
static int map_register_pages(int kfd, const struct rocm_gpu *g)
{
	__u64 in_slice = g->doorbell_offset & (doorbell_slice() - 1);
	const struct rbuf *mmio = &g->bos[RBO_MMIO];

	if (!map_shared(kfd, g->doorbell_offset - in_slice, doorbell_slice()))
		return -errno;
	if (mmio->present && !map_shared(kfd, mmio->mmap_offset, mmio->size))
		return -errno;
	return 0;
}

/* A GPU's state after its VM and the enabled runtime */
static void build_gpu_state(int kfd, int drm, struct rocm_gpu *g)
{
	CHILD_CHECK(kfd_in_gpuvm_aperture(kfd, g->gpu.gpu_id, g->va_base,
					  GPU_SPAN));
	CHILD_CHECK(!alloc_gpu_bos(kfd, g));
	CHILD_CHECK(!init_ring(drm, g));
	CHILD_CHECK(!set_trap_handler(kfd, g));
	CHILD_CHECK(!create_aql_queue(kfd, g));
	CHILD_CHECK(!set_cu_mask(kfd, g));
	if (g->num_gws)
		CHILD_CHECK(!queue_gws(kfd, g, g->num_gws));
	CHILD_CHECK(!map_register_pages(kfd, g));
}

/*
 * The process to be dumped: VMs on every planned GPU, the runtime
 * enabled, then each GPU's state; its /dev/kfd goes to the test with the
 * plan, and it waits for the dump.
 */
static void dumpee_main(int sock, void *arg)
{
	struct rocm_plan *plan = arg;
	int kfd = kfd_open(), drm[KFD_TEST_MAX_GPUS], i;

	CHILD_CHECK(kfd >= 0);
	for (i = 0; i < plan->nr_gpus; i++) {
		drm[i] = open_render_node(&plan->gpus[i].gpu);
		CHILD_CHECK(drm[i] >= 0);
		CHILD_CHECK(!kfd_acquire_vm(kfd, drm[i],
					    plan->gpus[i].gpu.gpu_id));
	}
	CHILD_CHECK(!enable_runtime(kfd, plan->r_debug));
	for (i = 0; i < plan->nr_gpus; i++)
		build_gpu_state(kfd, drm[i], &plan->gpus[i]);
	CHILD_CHECK(!send_fd(sock, kfd, plan, sizeof(*plan)));
	sync_wait(sock);	/* until the dump is over */
	_exit(0);
}

/* The planned GPU the image names by GPU record @index, or NULL */
static const struct rocm_gpu *image_gpu(const struct rocm_plan *plan,
					unsigned char *img, size_t len,
					__u32 index)
{
	__u32 gpu_id = criu_img_gpu_id(img, len, index);
	int i;

	for (i = 0; gpu_id && i < plan->nr_gpus; i++)
		if (plan->gpus[i].gpu.gpu_id == gpu_id)
			return &plan->gpus[i];
	return NULL;
}

/* Prints why an image check failed and ends the restoree */
#define IMAGE_CHECK(cond, fmt, ...) do {				\
	if (!(cond)) {							\
		fprintf(stderr, "# re-dump: " fmt "\n", ##__VA_ARGS__);	\
		_exit(1);						\
	}								\
} while (0)

/* One TRAP_HANDLER record per GPU, with the addresses it installed */
static void check_trap_handlers(const struct rocm_plan *plan,
				unsigned char *img, size_t len)
{
	const struct rocm_gpu *g;
	struct criu_img_rec rec;
	int n;

	for (n = 0; criu_img_find(img, len, CRIU_IMG_REC_TRAP_HANDLER, n, &rec);
	     n++) {
		g = image_gpu(plan, img, len,
			      criu_img_le32(rec.payload + CRIU_IMG_TRAP_GPU_INDEX));
		IMAGE_CHECK(g, "trap handler %d names no GPU of the plan", n);
		IMAGE_CHECK(criu_img_le64(rec.payload + CRIU_IMG_TRAP_TBA) ==
			    g->bos[RBO_TBA].va &&
			    criu_img_le64(rec.payload + CRIU_IMG_TRAP_TMA) ==
			    g->bos[RBO_TMA].va,
			    "GPU %#x: trap handler %#llx/%#llx, not %#llx/%#llx",
			    g->gpu.gpu_id,
			    (unsigned long long)criu_img_le64(rec.payload +
							      CRIU_IMG_TRAP_TBA),
			    (unsigned long long)criu_img_le64(rec.payload +
							      CRIU_IMG_TRAP_TMA),
			    (unsigned long long)g->bos[RBO_TBA].va,
			    (unsigned long long)g->bos[RBO_TMA].va);
	}
	IMAGE_CHECK(n == plan->nr_gpus, "%d trap handlers for %d GPUs", n,
		    plan->nr_gpus);
}

/* The runtime enabled as the dumpee enabled it */
static void check_runtime(const struct rocm_plan *plan, unsigned char *img,
			  size_t len)
{
	struct criu_img_rec rec;
	__u32 state;

	IMAGE_CHECK(criu_img_find(img, len, CRIU_IMG_REC_PROCESS, 0, &rec),
		    "no PROCESS record");
	state = criu_img_le32(rec.payload + CRIU_IMG_PROC_RUNTIME_STATE);
	IMAGE_CHECK(state == DEBUG_RUNTIME_STATE_ENABLED,
		    "runtime state %u, not enabled", state);
	IMAGE_CHECK(criu_img_le64(rec.payload + CRIU_IMG_PROC_R_DEBUG) ==
		    plan->r_debug, "r_debug differs");
	IMAGE_CHECK(criu_img_le32(rec.payload + CRIU_IMG_PROC_TTMP_SETUP) == 1,
		    "trap temporaries not set up");
}

/* Whether BO record @a of one image and @b of another differ before @end */
static bool bo_fields_differ(const unsigned char *a, const unsigned char *b,
			     size_t start, size_t end)
{
	return memcmp(a + start, b + start, end - start);
}

/*
 * Every BO record of @re (the restored process's image) is the one of
 * @orig, but for an mmap offset that the offset map of RESTORE moved
 */
static void check_bo_records(unsigned char *orig, size_t orig_len,
			     unsigned char *re, size_t re_len,
			     const struct kfd_criu_offset_map *offsets, __u32 n)
{
	struct criu_img_rec a, b;
	__u64 old, now;
	__u32 gpu_id;
	int i;

	for (i = 0; criu_img_find(orig, orig_len, CRIU_IMG_REC_BO, i, &a); i++) {
		IMAGE_CHECK(criu_img_find(re, re_len, CRIU_IMG_REC_BO, i, &b),
			    "BO %d missing", i);
		IMAGE_CHECK(a.length == CRIU_IMG_BO_LEN && b.length == a.length,
			    "BO %d: record of %u bytes", i, b.length);
		IMAGE_CHECK(!bo_fields_differ(a.payload, b.payload, 0,
					      CRIU_IMG_BO_MMAP_OFFSET) &&
			    !bo_fields_differ(a.payload, b.payload,
					      CRIU_IMG_BO_MAPPED_GPUS,
					      CRIU_IMG_BO_LEN),
			    "BO %d at %#llx: VA, size, flags, handle or GPUs differ",
			    i, (unsigned long long)criu_img_le64(a.payload));
		gpu_id = criu_img_gpu_id(orig, orig_len,
					 criu_img_le32(a.payload +
						       CRIU_IMG_BO_GPU_INDEX));
		old = criu_img_le64(a.payload + CRIU_IMG_BO_MMAP_OFFSET);
		now = criu_img_le64(b.payload + CRIU_IMG_BO_MMAP_OFFSET);
		IMAGE_CHECK(now == criu_moved_offset(offsets, n, gpu_id, old),
			    "BO %d: mmap offset %#llx, dumped %#llx", i,
			    (unsigned long long)now, (unsigned long long)old);
	}
	IMAGE_CHECK(!criu_img_find(re, re_len, CRIU_IMG_REC_BO, i, &b),
		    "more BOs than the %d dumped", i);
}

/* The buffers of @plan are in @img as allocated */
static void check_planned_bos(const struct rocm_plan *plan,
			      unsigned char *img, size_t len)
{
	const struct rocm_gpu *g;
	const struct rbuf *b;
	struct criu_img_rec rec;
	int n, found = 0, want = 0, i, j;

	for (i = 0; i < plan->nr_gpus; i++)
		for (j = 0; j < RBO_NR; j++)
			want += plan->gpus[i].bos[j].present;
	for (n = 0; criu_img_find(img, len, CRIU_IMG_REC_BO, n, &rec); n++) {
		g = image_gpu(plan, img, len,
			      criu_img_le32(rec.payload + CRIU_IMG_BO_GPU_INDEX));
		for (j = 0; g && j < RBO_NR; j++) {
			b = &g->bos[j];
			if (!b->present ||
			    criu_img_le64(rec.payload + CRIU_IMG_BO_VA) != b->va)
				continue;
			IMAGE_CHECK(criu_img_le64(rec.payload + CRIU_IMG_BO_SIZE) ==
				    b->size &&
				    criu_img_le32(rec.payload + CRIU_IMG_BO_FLAGS) ==
				    b->flags &&
				    criu_img_le32(rec.payload + CRIU_IMG_BO_HANDLE) ==
				    (__u32)b->handle &&
				    criu_img_le64(rec.payload +
						  CRIU_IMG_BO_MAPPED_GPUS),
				    "GPU %#x, %s buffer: size, flags, handle or mapping differ",
				    g->gpu.gpu_id, rbo_name(j));
			found++;
		}
	}
	IMAGE_CHECK(found == want, "%d of the %d buffers found", found, want);
}

/* The planned queue with id @queue_id, or NULL */
static const struct rocm_gpu *queue_gpu(const struct rocm_plan *plan,
					__u32 queue_id)
{
	int i;

	for (i = 0; i < plan->nr_gpus; i++)
		if (plan->gpus[i].queue_id == queue_id)
			return &plan->gpus[i];
	return NULL;
}

/*
 * Every QUEUE record of @re is byte for byte the one of @orig (what the
 * queue was created with, its doorbell slot, GWS and CU mask), and names
 * a planned queue with its GWS and CU mask
 */
static void check_queue_records(const struct rocm_plan *plan,
				unsigned char *orig, size_t orig_len,
				unsigned char *re, size_t re_len)
{
	const struct rocm_gpu *g;
	struct criu_img_rec a, b;
	__u32 id;
	int i;

	for (i = 0; criu_img_find(orig, orig_len, CRIU_IMG_REC_QUEUE, i, &a);
	     i++) {
		IMAGE_CHECK(criu_img_find(re, re_len, CRIU_IMG_REC_QUEUE, i, &b),
			    "queue %d missing", i);
		IMAGE_CHECK(a.length >= CRIU_IMG_QUEUE_LEN &&
			    a.length == b.length &&
			    !memcmp(a.payload, b.payload, a.length),
			    "queue %d differs from the dumped one", i);
		id = criu_img_le32(b.payload + CRIU_IMG_QUEUE_ID);
		g = queue_gpu(plan, id);
		IMAGE_CHECK(g, "queue id %u is none of the dumped ones", id);
		IMAGE_CHECK(criu_img_le32(b.payload + CRIU_IMG_QUEUE_GWS) ==
			    !!g->num_gws, "queue %u: GWS differs", id);
		IMAGE_CHECK(criu_img_le32(b.payload +
					  CRIU_IMG_QUEUE_NUM_CU_MASK) ==
			    g->num_cu_mask &&
			    a.length == CRIU_IMG_QUEUE_LEN + g->num_cu_mask / 8 &&
			    !memcmp(b.payload + CRIU_IMG_QUEUE_LEN, g->cu_mask,
				    g->num_cu_mask / 8),
			    "queue %u: CU mask differs", id);
	}
	IMAGE_CHECK(i == plan->nr_gpus, "%d queues for %d GPUs", i,
		    plan->nr_gpus);
}

/*
 * The restored process dumps itself (a process may use its own file) and
 * compares that image with the one it was restored from
 */
static void check_redump(int kfd, const struct rocm_restore *ctx,
			 const struct kfd_criu_offset_map *offsets, __u32 n)
{
	unsigned char *orig, *re;
	size_t orig_len, re_len;
	struct kfd_ioctl_criu_args args;
	const char *op;
	__u64 size;
	pid_t pid;
	int fd;

	fd = memfd_create("kfd-criu-rocm-redump", MFD_CLOEXEC);
	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(!criu_dump(kfd, fd, &pid, &size, &op));
	CHILD_CHECK(!criu_image_op(kfd, KFD_CRIU_OP_UNPAUSE, -1, &args));
	orig = criu_img_load(ctx->image, &orig_len);
	re = criu_img_load(fd, &re_len);
	CHILD_CHECK(orig && re && re_len == size);
	check_trap_handlers(ctx->plan, re, re_len);
	check_runtime(ctx->plan, re, re_len);
	check_planned_bos(ctx->plan, re, re_len);
	check_bo_records(orig, orig_len, re, re_len, offsets, n);
	check_queue_records(ctx->plan, orig, orig_len, re, re_len);
	free(orig);
	free(re);
	close(fd);
}

/*
 * Uses what the restore brought back: the runtime is enabled (a second
 * RUNTIME_ENABLE is -EBUSY), each queue has its id (SET_CU_MASK takes it)
 * and its GWS (adding more is -EBUSY); then destroys the queues and frees
 * the buffers by their dumped ids and handles.
 */
static void use_restored_state(int kfd, const struct rocm_plan *plan)
{
	const struct rocm_gpu *g;
	int i, j;

	CHILD_CHECK(enable_runtime(kfd, plan->r_debug) == -EBUSY);
	for (i = 0; i < plan->nr_gpus; i++) {
		g = &plan->gpus[i];
		CHILD_CHECK(!set_cu_mask(kfd, g));
		if (g->num_gws)
			CHILD_CHECK(queue_gws(kfd, g, g->num_gws) == -EBUSY);
	}
	for (i = 0; i < plan->nr_gpus; i++) {
		g = &plan->gpus[i];
		CHILD_CHECK(!destroy_queue(kfd, g->queue_id));
		for (j = 0; j < RBO_NR; j++) {
			if (!g->bos[j].present)
				continue;
			CHILD_CHECK(!kfd_map_memory(kfd, false,
						    g->bos[j].handle,
						    &g->gpu.gpu_id, 1));
			CHILD_CHECK(!kfd_free_memory(kfd, g->bos[j].handle));
		}
	}
}

/*
 * Restores the image with a GPU map of every planned GPU, maps the
 * doorbell and MMIO pages as CRIU would, waits for RESUME, then checks
 * the restored state.
 */
static void restoree_main(int sock, void *arg)
{
	const struct rocm_restore *ctx = arg;
	const struct rocm_plan *plan = ctx->plan;
	struct kfd_criu_offset_map offsets[OFFSETS_PER_GPU * KFD_TEST_MAX_GPUS];
	struct kfd_criu_gpu_map map[KFD_TEST_MAX_GPUS] = { 0 };
	struct kfd_ioctl_criu_args args;
	int kfd = kfd_open(), i, ret;

	CHILD_CHECK(kfd >= 0);
	for (i = 0; i < plan->nr_gpus; i++) {
		map[i].local_gpu_id = plan->gpus[i].gpu.gpu_id;
		map[i].drm_fd = open_render_node(&plan->gpus[i].gpu);
		CHILD_CHECK(map[i].drm_fd >= 0);
	}
	ret = criu_restore_mapped(kfd, ctx->image, map, plan->nr_gpus,
				  offsets, OFFSETS_PER_GPU * plan->nr_gpus,
				  &args);
	if (ret) {
		fprintf(stderr, "# RESTORE: %s\n", strerror(-ret));
		_exit(1);
	}
	for (i = 0; i < plan->nr_gpus; i++)
		CHILD_CHECK(!map_register_pages(kfd, &plan->gpus[i]));
	sync_send(sock);
	sync_wait(sock);	/* resumed */
	check_redump(kfd, ctx, offsets, args.num_offset_map);
	use_restored_state(kfd, plan);
	_exit(0);
}

/* Dumps a dumpee of @plan into a memfd, which it returns at its start */
static int dump_rocm_process(struct __test_metadata *_metadata,
			     struct rocm_plan *plan)
{
	struct kfd_ioctl_criu_args args;
	struct kfd_dumpee d;
	const char *op = "";
	__u64 size = 0;
	pid_t pid = 0;
	int image, ret;

	image = memfd_create("kfd-criu-rocm-image", MFD_CLOEXEC);
	ASSERT_LE(0, image);
	if (kfd_dumpee_start(&d, dumpee_main, plan, plan, sizeof(*plan))) {
		/* The child ended: with a failure, or without handing its fd */
		ret = kfd_dumpee_finish(&d);
		ASSERT_NE(0, ret) TH_LOG("no file from the dumpee, or no seize");
		ASSERT_EQ(0, ret) TH_LOG("the dumpee failed to set up its state");
	}
	ret = criu_dump(d.kfd, image, &pid, &size, &op);
	EXPECT_EQ(0, ret) TH_LOG("%s: %s", op, strerror(-ret));
	if (!ret) {
		EXPECT_EQ(d.pid, pid);
		EXPECT_EQ((off_t)size, fd_size(image));
	}
	EXPECT_EQ(0, criu_image_op(d.kfd, KFD_CRIU_OP_UNPAUSE, -1, &args));
	EXPECT_EQ(0, kfd_dumpee_finish(&d));
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, lseek(image, 0, SEEK_SET));
	return image;
}

FIXTURE(rocm) {
	struct kfd_test_gpu gpus[KFD_TEST_MAX_GPUS];
	int nr_gpus;
	__u64 va_base;
};

FIXTURE_SETUP(rocm)
{
	size_t span = GPU_SPAN * KFD_TEST_MAX_GPUS;
	char *base;

	self->nr_gpus = have_kfd() ?
		kfd_topology_gpus(self->gpus, KFD_TEST_MAX_GPUS) : 0;
	if (!self->nr_gpus)
		SKIP(return, NO_GPU_REASON);
	/* GPU virtual addresses that no CPU mapping of the test takes */
	base = mmap(NULL, span + VA_ALIGN, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, base);
	self->va_base = ((uintptr_t)base + VA_ALIGN - 1) & ~(VA_ALIGN - 1);
}

FIXTURE_TEARDOWN(rocm)
{
}

/*
 * The state a ROCm runtime builds on every GPU of GFX9 or later comes
 * back whole: trap handlers, runtime, doorbell, MMIO and queue buffers,
 * AQL queues with CU masks and GWS.
 */
TEST_F_TIMEOUT(rocm, runtime_state_survives_restore, TEST_SECONDS)
{
	struct rocm_plan plan = { .r_debug = (uintptr_t)r_debug_stub };
	struct rocm_restore ctx = { .plan = &plan };
	const char *why;
	int i, resumed, status;

	for (i = 0; i < self->nr_gpus; i++) {
		why = plan_gpu(_metadata, &self->gpus[i],
			       self->va_base + plan.nr_gpus * GPU_SPAN,
			       &plan.gpus[plan.nr_gpus]);
		if (why)
			TH_LOG("GPU %#x left out: %s", self->gpus[i].gpu_id, why);
		else
			plan.nr_gpus++;
	}
	if (!plan.nr_gpus)
		SKIP(return, "no GPU of GFX9 or later with CWSR sizes");
	ctx.image = dump_rocm_process(_metadata, &plan);
	status = kfd_restoree_run(restoree_main, &ctx, &resumed);
	EXPECT_EQ(0, resumed) TH_LOG("RESUME: %s", resumed == 1 ?
				     "not reached, the restore failed" :
				     strerror(-resumed));
	EXPECT_EQ(0, status) TH_LOG("the restored process failed");
	close(ctx.image);
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
