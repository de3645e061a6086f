// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: user-mode queues through CRIU image mode
 *
 * Needs an AMD GPU of GFX9 or later (SOC15 doorbells and packets). Without
 * a GPU in the KFD topology the program is skipped (kselftest exit code 4)
 * with the reason "no GPU in the KFD topology"; a test that the GPU cannot
 * run is skipped with its own reason.
 *
 * A child process acquires the GPU VM on a render node and allocates the
 * buffers CREATE_QUEUE of Linux 6.12 insists on: a ring of exactly the ring
 * size, a page each for the read and the write pointer and, for a compute
 * queue, an EOP buffer and a CWSR area of exactly the size the kernel
 * computes, one save area per XCC on a partition of several (MI300 in
 * SPX mode runs the compute test too). It creates the queue, maps its
 * doorbell page through /dev/kfd, submits a packet that fills part of a
 * destination buffer with a value, rings the doorbell and waits for the
 * value. The test dumps it as CRIU does. A fresh process restores the
 * image, maps the buffers at their restored offsets and the doorbell page
 * at the queue's doorbell offset, is resumed and submits a second fill
 * through the restored queue: same queue id, same ring, its write pointer
 * going on from the dumped one. It checks both fills and destroys the
 * queue by its id.
 *
 * sdma_queue_survives_restore uses an SDMA queue and a constant-fill
 * packet, compute_queue_survives_restore a PM4 compute queue and
 * WRITE_DATA. sdma_by_engine_queue_not_carried creates a queue by SDMA
 * engine id, which the image cannot carry: CHECKPOINT must fail with
 * -EOPNOTSUPP and write nothing, and the process must stay intact, its
 * queue running after UNPAUSE.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/kfd_ioctl.h>

#include "../../../kselftest_harness.h"
#include "kfd_criu_util.h"

#define NO_GPU_REASON		"no GPU in the KFD topology"
/* CPU address space reserved for the buffers' GPU virtual addresses */
#define VA_SPAN			(512UL << 20)
#define VA_ALIGN		(2UL << 20)
/* Doorbells of a process on one SOC15 GPU: 1024 of 8 bytes */
#define DOORBELL_SLICE		8192UL
/* Dwords each fill writes; the second fill lands right after the first */
#define FILL_DWORDS		64
#define FIRST_VALUE		0x5eed0001U
#define SECOND_VALUE		0x5eed0002U
#define WAIT_MS			10000
/* Seconds a test may take: two waits, a dump and a restore */
#define TEST_SECONDS		120

/*
 * SDMA CONST_FILL on GFX9 and later: header (opcode, fill size 2: the
 * value is a dword), destination low and high, value, byte count - 1.
 * Padded with one-dword NOPs (0) to whole 8-dword blocks.
 */
#define SDMA_OP_CONST_FILL	11U
#define SDMA_FILL_DWORD		(2U << 30)
#define SDMA_PAD_DWORDS		8
/*
 * PM4 type-3 header: type 3, body dwords - 1, opcode. WRITE_DATA: control
 * (destination memory, written directly; confirm the write), address low
 * and high, then the dwords to write.
 */
#define PM4_TYPE3(op, n)	((3U << 30) | (((n) & 0x3fffU) << 16) | \
				 (((op) & 0xffU) << 8))
#define PM4_WRITE_DATA		0x37U
#define WRITE_DATA_DST_MEM	(5U << 8)
#define WRITE_DATA_CONFIRM	0x00100000U
#define MAX_PACKET_DWORDS	(FILL_DWORDS + 8)

/* Memory the GPU reads or writes behind the compiler's back */
#define GPU_LOAD(p)		__atomic_load_n(p, __ATOMIC_ACQUIRE)
#define GPU_STORE(p, v)		__atomic_store_n(p, v, __ATOMIC_RELEASE)

/* Buffers of a queue; an SDMA queue has the first QB_SDMA_NR of them. */
enum { QB_RING, QB_RPTR, QB_WPTR, QB_DST, QB_EOP, QB_CWSR, QB_NR };
#define QB_SDMA_NR		(QB_DST + 1)

/**
 * struct qbo - a buffer object of the queue's process
 * @va: its GPU virtual address
 * @size: its size in bytes
 * @handle: its handle
 * @mmap_offset: where its render node maps it
 */
struct qbo {
	__u64 va;
	__u64 size;
	__u64 handle;
	__u64 mmap_offset;
};

/**
 * struct queue_plan - the queue a dumpee creates, as the test sees it
 * @gpu: its GPU
 * @va_base: a reserved, %VA_ALIGN aligned span of %VA_SPAN bytes
 * @type: its KFD_IOC_QUEUE_TYPE_*
 * @fill_after_dump: the dumpee submits the second fill itself once the
 *	dump is over, instead of exiting
 * @ring_size: bytes of ring, the page size
 * @cwsr: compute only: the EOP buffer and CWSR area the GPU wants
 * @nr_bos: entries of @bos in use
 * @bos: its buffers, by QB_*
 * @queue_id: the id CREATE_QUEUE returned
 * @doorbell_offset: the doorbell mmap offset CREATE_QUEUE returned
 * @wptr: the write pointer after the first fill: bytes for SDMA, dwords
 *	for PM4
 */
struct queue_plan {
	struct kfd_test_gpu gpu;
	__u64 va_base;
	__u32 type;
	bool fill_after_dump;
	__u32 ring_size;
	struct kfd_cwsr_layout cwsr;
	int nr_bos;
	struct qbo bos[QB_NR];
	__u32 queue_id;
	__u64 doorbell_offset;
	__u64 wptr;
};

/**
 * struct queue_cpu - a process's CPU view of its queue
 * @ring: the ring
 * @rptr: where the GPU reports the read pointer
 * @wptr: where the process publishes the write pointer
 * @dst: the destination buffer
 * @doorbell_page: the mapped doorbell slice
 * @doorbell: the queue's doorbell in it
 * @next_wptr: the write pointer of the last submission
 */
struct queue_cpu {
	__u32 *ring;
	__u64 *rptr;
	__u64 *wptr;
	__u32 *dst;
	void *doorbell_page;
	__u64 *doorbell;
	__u64 next_wptr;
};

/**
 * struct restore_ctx - what the restoree gets from the test
 * @plan: the dumped queue
 * @image: the image, at its start
 */
struct restore_ctx {
	const struct queue_plan *plan;
	int image;
};

static bool is_sdma(const struct queue_plan *plan)
{
	return plan->type != KFD_IOC_QUEUE_TYPE_COMPUTE;
}

static size_t page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

static size_t doorbell_slice(void)
{
	size_t page = page_size();

	return (DOORBELL_SLICE + page - 1) / page * page;
}

/* Allocates @plan's buffers in GTT and maps them on its GPU */
static int alloc_queue_bos(int kfd, struct queue_plan *plan)
{
	__u32 flags = KFD_IOC_ALLOC_MEM_FLAGS_GTT |
		KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE |
		KFD_IOC_ALLOC_MEM_FLAGS_COHERENT;
	__u64 va = plan->va_base;
	struct qbo *bo;
	int i, ret;

	for (i = 0; i < plan->nr_bos; i++) {
		bo = &plan->bos[i];
		bo->va = va;
		ret = kfd_alloc_memory(kfd, plan->gpu.gpu_id, flags, va,
				       bo->size, 0, &bo->handle,
				       &bo->mmap_offset);
		if (!ret)
			ret = kfd_map_memory(kfd, true, bo->handle,
					     &plan->gpu.gpu_id, 1);
		if (ret) {
			fprintf(stderr, "# buffer %d (%llu bytes): %s\n", i,
				(unsigned long long)bo->size, strerror(-ret));
			return ret;
		}
		va += (bo->size + VA_ALIGN - 1) & ~(VA_ALIGN - 1);
	}
	return 0;
}

static int create_queue(int kfd, struct queue_plan *plan)
{
	struct kfd_ioctl_create_queue_args args = {
		.ring_base_address = plan->bos[QB_RING].va,
		.write_pointer_address = plan->bos[QB_WPTR].va,
		.read_pointer_address = plan->bos[QB_RPTR].va,
		.ring_size = plan->ring_size,
		.gpu_id = plan->gpu.gpu_id,
		.queue_type = plan->type,
		.queue_percentage = 100,
		.queue_priority = 7,
	};
	int ret;

	if (!is_sdma(plan)) {
		args.eop_buffer_address = plan->bos[QB_EOP].va;
		args.eop_buffer_size = plan->cwsr.eop_size;
		args.ctx_save_restore_address = plan->bos[QB_CWSR].va;
		args.ctx_save_restore_size = plan->cwsr.cwsr_size;
		args.ctl_stack_size = plan->cwsr.ctl_stack_size;
	}
	ret = kfd_ioctl(kfd, AMDKFD_IOC_CREATE_QUEUE, &args);
	if (ret) {
		fprintf(stderr, "# CREATE_QUEUE of type %u, ring %u bytes: %s\n",
			plan->type, plan->ring_size, strerror(-ret));
		if (!is_sdma(plan))
			fprintf(stderr,
				"# EOP %u bytes, CWSR %u bytes x %u XCCs in an area of %llu, control stack %u\n",
				plan->cwsr.eop_size, plan->cwsr.cwsr_size,
				plan->cwsr.num_xcc,
				(unsigned long long)plan->bos[QB_CWSR].size,
				plan->cwsr.ctl_stack_size);
		return ret;
	}
	plan->queue_id = args.queue_id;
	plan->doorbell_offset = args.doorbell_offset;
	return 0;
}

static int destroy_queue(int kfd, __u32 queue_id)
{
	struct kfd_ioctl_destroy_queue_args args = { .queue_id = queue_id };

	return kfd_ioctl(kfd, AMDKFD_IOC_DESTROY_QUEUE, &args);
}

/*
 * Maps @bo of GPU @gpu_id through @drm_fd at the offset RESTORE moved it
 * to, if any
 */
static void *map_bo(int drm_fd, __u32 gpu_id, const struct qbo *bo,
		    const struct kfd_criu_offset_map *offsets, __u32 n)
{
	void *p = mmap(NULL, bo->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       drm_fd, criu_moved_offset(offsets, n, gpu_id,
						 bo->mmap_offset));

	return p == MAP_FAILED ? NULL : p;
}

/*
 * Maps the doorbell slice that holds the queue's doorbell through @kfd.
 * The offset CREATE_QUEUE returned names the GPU and, on SOC15, the
 * doorbell's byte offset in the slice.
 */
static int map_doorbell(int kfd, const struct queue_plan *plan,
			struct queue_cpu *q)
{
	__u64 in_slice = plan->doorbell_offset & (doorbell_slice() - 1);

	q->doorbell_page = mmap(NULL, doorbell_slice(), PROT_READ | PROT_WRITE,
				MAP_SHARED, kfd,
				plan->doorbell_offset - in_slice);
	if (q->doorbell_page == MAP_FAILED)
		return -errno;
	q->doorbell = (__u64 *)((char *)q->doorbell_page + in_slice);
	return 0;
}

/* Maps ring, pointers and destination through @drm_fd */
static int map_queue_bos(int drm_fd, const struct queue_plan *plan,
			 const struct kfd_criu_offset_map *offsets, __u32 n,
			 struct queue_cpu *q)
{
	__u32 id = plan->gpu.gpu_id;

	q->ring = map_bo(drm_fd, id, &plan->bos[QB_RING], offsets, n);
	q->rptr = map_bo(drm_fd, id, &plan->bos[QB_RPTR], offsets, n);
	q->wptr = map_bo(drm_fd, id, &plan->bos[QB_WPTR], offsets, n);
	q->dst = map_bo(drm_fd, id, &plan->bos[QB_DST], offsets, n);
	return q->ring && q->rptr && q->wptr && q->dst ? 0 : -ENOMEM;
}

/* A new queue starts at read and write pointer 0, on an empty ring */
static void zero_queue_bos(const struct queue_plan *plan, struct queue_cpu *q)
{
	memset(q->ring, 0, plan->bos[QB_RING].size);
	memset(q->rptr, 0, plan->bos[QB_RPTR].size);
	memset(q->wptr, 0, plan->bos[QB_WPTR].size);
	memset(q->dst, 0, plan->bos[QB_DST].size);
}

/* A packet writing @value to @FILL_DWORDS dwords at @va; its length */
static unsigned int build_fill(const struct queue_plan *plan, __u32 *pkt,
			       __u64 va, __u32 value)
{
	unsigned int n = 0, i;

	if (is_sdma(plan)) {
		pkt[n++] = SDMA_OP_CONST_FILL | SDMA_FILL_DWORD;
		pkt[n++] = (__u32)va;
		pkt[n++] = (__u32)(va >> 32);
		pkt[n++] = value;
		pkt[n++] = FILL_DWORDS * 4 - 1;
		while (n % SDMA_PAD_DWORDS)
			pkt[n++] = 0;
		return n;
	}
	pkt[n++] = PM4_TYPE3(PM4_WRITE_DATA, FILL_DWORDS + 2);
	pkt[n++] = WRITE_DATA_DST_MEM | WRITE_DATA_CONFIRM;
	pkt[n++] = (__u32)va;
	pkt[n++] = (__u32)(va >> 32);
	for (i = 0; i < FILL_DWORDS; i++)
		pkt[n++] = value;
	return n;
}

/*
 * Copies @n dwords into the ring at the write pointer, publishes the new
 * write pointer and rings the doorbell with it. On GFX9 and later both
 * are 64-bit and never wrap: bytes for SDMA, dwords for PM4.
 */
static void submit(const struct queue_plan *plan, struct queue_cpu *q,
		   const __u32 *pkt, unsigned int n)
{
	__u64 ring_dwords = plan->ring_size / 4;
	__u64 pos = is_sdma(plan) ? q->next_wptr / 4 : q->next_wptr;
	unsigned int i;

	for (i = 0; i < n; i++)
		q->ring[(pos + i) % ring_dwords] = pkt[i];
	q->next_wptr += is_sdma(plan) ? n * 4 : n;
	__sync_synchronize();
	GPU_STORE(q->wptr, q->next_wptr);
	__sync_synchronize();
	GPU_STORE(q->doorbell, q->next_wptr);
}

/* Index of the first of @n dwords at @p that is not @value, or -1 */
static long first_other(const __u32 *p, unsigned int n, __u32 value)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (GPU_LOAD(&p[i]) != value)
			return i;
	return -1;
}

/*
 * Fills the %FILL_DWORDS dwords at dword @at of the destination with
 * @value through the queue and waits at most %WAIT_MS for them.
 */
static int fill_and_wait(const struct queue_plan *plan, struct queue_cpu *q,
			 unsigned int at, __u32 value)
{
	__u32 pkt[MAX_PACKET_DWORDS];
	__u64 deadline;
	unsigned int n;
	long bad;

	n = build_fill(plan, pkt, plan->bos[QB_DST].va + at * 4, value);
	submit(plan, q, pkt, n);
	deadline = now_ms() + WAIT_MS;
	while ((bad = first_other(q->dst + at, FILL_DWORDS, value)) >= 0 &&
	       now_ms() < deadline)
		usleep(1000);
	if (bad < 0)
		return 0;
	fprintf(stderr,
		"# queue %u: after %d ms dword %ld is %#x, not %#x; rptr %#llx, wptr %#llx\n",
		plan->queue_id, WAIT_MS, at + bad, GPU_LOAD(&q->dst[at + bad]),
		value, (unsigned long long)GPU_LOAD(q->rptr),
		(unsigned long long)GPU_LOAD(q->wptr));
	return -ETIMEDOUT;
}

/*
 * The process to be dumped: VM, buffers, queue, the first fill; then its
 * /dev/kfd goes to the test with the plan, and it waits for the dump.
 */
static void dumpee_main(int sock, void *arg)
{
	struct queue_plan *plan = arg;
	struct queue_cpu q = { 0 };
	int kfd = kfd_open(), drm = open_render_node(&plan->gpu);

	CHILD_CHECK(kfd >= 0 && drm >= 0);
	CHILD_CHECK(!kfd_acquire_vm(kfd, drm, plan->gpu.gpu_id));
	CHILD_CHECK(kfd_in_gpuvm_aperture(kfd, plan->gpu.gpu_id,
					  plan->va_base, VA_SPAN));
	CHILD_CHECK(!alloc_queue_bos(kfd, plan));
	CHILD_CHECK(!map_queue_bos(drm, plan, NULL, 0, &q));
	zero_queue_bos(plan, &q);
	CHILD_CHECK(!create_queue(kfd, plan));
	CHILD_CHECK(!map_doorbell(kfd, plan, &q));
	CHILD_CHECK(!fill_and_wait(plan, &q, 0, FIRST_VALUE));
	plan->wptr = q.next_wptr;
	CHILD_CHECK(!send_fd(sock, kfd, plan, sizeof(*plan)));
	sync_wait(sock);	/* until the dump is over */
	if (plan->fill_after_dump)
		CHILD_CHECK(!fill_and_wait(plan, &q, FILL_DWORDS,
					   SECOND_VALUE));
	_exit(0);
}

/* What the restored buffers must hold before the second fill */
static void check_restored(const struct queue_plan *plan,
			   const struct queue_cpu *q)
{
	long bad;

	if (GPU_LOAD(q->wptr) != plan->wptr) {
		fprintf(stderr, "# restored write pointer %#llx, dumped %#llx\n",
			(unsigned long long)GPU_LOAD(q->wptr),
			(unsigned long long)plan->wptr);
		_exit(1);
	}
	bad = first_other(q->dst, FILL_DWORDS, FIRST_VALUE);
	if (bad < 0)
		bad = first_other(q->dst + FILL_DWORDS, FILL_DWORDS, 0);
	if (bad >= 0) {
		fprintf(stderr, "# restored destination differs at dword %ld\n",
			bad);
		_exit(1);
	}
}

/*
 * Restores the image with a GPU map of the plan's GPU, maps the buffers
 * and the doorbell, checks what they hold, waits for RESUME, and fills
 * through the restored queue.
 */
static void restoree_main(int sock, void *arg)
{
	const struct restore_ctx *ctx = arg;
	const struct queue_plan *plan = ctx->plan;
	struct kfd_criu_offset_map offsets[QB_NR + 2];
	struct kfd_criu_gpu_map map = { .local_gpu_id = plan->gpu.gpu_id };
	struct kfd_ioctl_criu_args args;
	struct queue_cpu q = { .next_wptr = plan->wptr };
	int kfd = kfd_open(), ret;

	map.drm_fd = open_render_node(&plan->gpu);
	CHILD_CHECK(kfd >= 0 && map.drm_fd >= 0);
	ret = criu_restore_mapped(kfd, ctx->image, &map, 1, offsets,
				  QB_NR + 2, &args);
	if (ret) {
		fprintf(stderr, "# RESTORE: %s\n", strerror(-ret));
		_exit(1);
	}
	/* What CRIU does before RESUME: the process's mappings come back */
	CHILD_CHECK(!map_queue_bos(map.drm_fd, plan, offsets,
				   args.num_offset_map, &q));
	CHILD_CHECK(!map_doorbell(kfd, plan, &q));
	check_restored(plan, &q);
	sync_send(sock);
	sync_wait(sock);	/* resumed */
	CHILD_CHECK(!fill_and_wait(plan, &q, FILL_DWORDS, SECOND_VALUE));
	CHILD_CHECK(first_other(q.dst, FILL_DWORDS, FIRST_VALUE) < 0);
	/* The queue id is the dumped one */
	CHILD_CHECK(!destroy_queue(kfd, plan->queue_id));
	_exit(0);
}

/*
 * Dumps a dumpee of @plan into a memfd, which it returns at its start;
 * the dumpee has exited when it returns. Expects CHECKPOINT to return
 * @want; with an error there is no image and it returns -1.
 */
static int dump_queue(struct __test_metadata *_metadata,
		      struct queue_plan *plan, int want)
{
	struct kfd_ioctl_criu_args args;
	struct kfd_dumpee d;
	const char *op = "";
	__u64 size = 0;
	pid_t pid = 0;
	int image, ret;

	image = memfd_create("kfd-criu-queue-image", MFD_CLOEXEC);
	ASSERT_LE(0, image);
	if (kfd_dumpee_start(&d, dumpee_main, plan, plan, sizeof(*plan))) {
		ret = kfd_dumpee_finish(&d);
		ASSERT_EQ(0, ret) TH_LOG("the dumpee failed to set up its queue");
		ASSERT_TRUE(false) TH_LOG("no file from the dumpee, or no seize");
	}
	ret = criu_dump(d.kfd, image, &pid, &size, &op);
	EXPECT_EQ(want, ret) TH_LOG("%s: %s", op, strerror(-ret));
	if (!ret) {
		EXPECT_EQ(d.pid, pid);
		EXPECT_EQ((off_t)size, fd_size(image));
	} else {
		EXPECT_EQ(0, fd_size(image)) TH_LOG("a failed CHECKPOINT wrote");
	}
	EXPECT_EQ(0, criu_image_op(d.kfd, KFD_CRIU_OP_UNPAUSE, -1, &args));
	EXPECT_EQ(0, kfd_dumpee_finish(&d));
	if (ret) {
		close(image);
		return -1;
	}
	EXPECT_EQ(0, lseek(image, 0, SEEK_SET));
	return image;
}

static void restore_queue(struct __test_metadata *_metadata,
			  const struct queue_plan *plan, int image)
{
	struct restore_ctx ctx = { .plan = plan, .image = image };
	int resumed, status;

	status = kfd_restoree_run(restoree_main, &ctx, &resumed);
	EXPECT_EQ(0, resumed) TH_LOG("RESUME: %s", resumed == 1 ?
				     "not reached, the restore failed" :
				     strerror(-resumed));
	EXPECT_EQ(0, status) TH_LOG("the restored process failed");
}

/*
 * Sizes the EOP buffer and CWSR area of a compute queue from the
 * topology (kfd_gpu_cwsr_layout()); NULL, or why the GPU cannot run the
 * test. A topology whose ctl_stack_size disagrees with the wave slots
 * computed from it fails the test instead (-ERANGE).
 */
static const char *plan_compute_buffers(struct __test_metadata *_metadata,
					struct queue_plan *plan)
{
	size_t page = page_size();
	int ret;

	ret = kfd_gpu_cwsr_layout(&plan->gpu, &plan->cwsr);
	if (ret == -ENODATA)
		return "the topology reports no CWSR area size";
	ASSERT_EQ(0, ret)
		TH_LOG("topology wave slots do not give its ctl_stack_size %u",
		       plan->cwsr.ctl_stack_size);
	plan->bos[QB_EOP].size = (plan->cwsr.eop_size + page - 1) / page * page;
	plan->bos[QB_CWSR].size = plan->cwsr.area_size;
	return NULL;
}

/*
 * Sizes @plan's buffers; NULL, or why the GPU cannot run the test.
 *
 * A compute queue on a partition of several XCCs (an MI300 in SPX mode)
 * gets an MQD and a save area on every XCC, and the image carries one
 * queue state per XCC. The PM4 stream goes to one ring all the same: the
 * MQDs of a PM4 queue name one target XCC (pm4_target_xcc_in_xcp, 0 here,
 * from bits 8 to 15 of queue_percentage). Which XCCs execute the packets
 * does not matter to the check: WRITE_DATA writes the same value.
 */
static const char *plan_queue(struct __test_metadata *_metadata,
			      struct queue_plan *plan, __u32 type)
{
	size_t page = page_size();

	plan->type = type;
	plan->ring_size = page;
	plan->nr_bos = type == KFD_IOC_QUEUE_TYPE_COMPUTE ? QB_NR : QB_SDMA_NR;
	plan->bos[QB_RING].size = page;
	plan->bos[QB_RPTR].size = page;
	plan->bos[QB_WPTR].size = page;
	plan->bos[QB_DST].size = page;
	if (kfd_gpu_prop_or(&plan->gpu, "gfx_target_version", 0) < 90000)
		return "GPU older than GFX9: the test builds SOC15 packets";
	if (type != KFD_IOC_QUEUE_TYPE_COMPUTE)
		return kfd_gpu_prop_or(&plan->gpu, "num_sdma_engines", 0) ?
		       NULL : "the GPU has no SDMA engine for user queues";
	return plan_compute_buffers(_metadata, plan);
}

FIXTURE(queue) {
	struct queue_plan plan;
};

FIXTURE_SETUP(queue)
{
	char *base;

	memset(&self->plan, 0, sizeof(self->plan));
	if (!have_kfd() || !kfd_topology_gpus(&self->plan.gpu, 1))
		SKIP(return, NO_GPU_REASON);
	/* GPU virtual addresses that no CPU mapping of the test takes */
	base = mmap(NULL, VA_SPAN + VA_ALIGN, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, base);
	self->plan.va_base = ((uintptr_t)base + VA_ALIGN - 1) & ~(VA_ALIGN - 1);
}

FIXTURE_TEARDOWN(queue)
{
}

/* An SDMA queue keeps its id, ring and doorbell and goes on filling. */
TEST_F_TIMEOUT(queue, sdma_queue_survives_restore, TEST_SECONDS)
{
	const char *why = plan_queue(_metadata, &self->plan,
				     KFD_IOC_QUEUE_TYPE_SDMA);
	int image;

	if (why)
		SKIP(return, "%s", why);
	image = dump_queue(_metadata, &self->plan, 0);
	ASSERT_LE(0, image);
	restore_queue(_metadata, &self->plan, image);
	close(image);
}

/* So does a PM4 compute queue, with its EOP buffer and CWSR area. */
TEST_F_TIMEOUT(queue, compute_queue_survives_restore, TEST_SECONDS)
{
	const char *why = plan_queue(_metadata, &self->plan,
				     KFD_IOC_QUEUE_TYPE_COMPUTE);
	int image;

	if (why)
		SKIP(return, "%s", why);
	image = dump_queue(_metadata, &self->plan, 0);
	ASSERT_LE(0, image);
	restore_queue(_metadata, &self->plan, image);
	close(image);
}

/*
 * A queue created by SDMA engine id, as ROCm 6.3 and later create their
 * copy queues on MI200 and MI300 (ROCR-Runtime, BlitSdma::Initialize),
 * is an SDMA queue on that engine once created, and comes back on the
 * same engine: its doorbell fixes the slot.
 */
TEST_F_TIMEOUT(queue, sdma_by_engine_queue_survives_restore, TEST_SECONDS)
{
	const char *why;
	int image;

	why = plan_queue(_metadata, &self->plan,
			 KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID);
	if (why)
		SKIP(return, "%s", why);
	image = dump_queue(_metadata, &self->plan, 0);
	ASSERT_LE(0, image);
	restore_queue(_metadata, &self->plan, image);
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
