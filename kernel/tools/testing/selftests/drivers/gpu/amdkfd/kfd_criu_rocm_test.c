// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: the KFD state of a ROCm process through CRIU image mode
 *
 * Needs an AMD GPU of GFX9 or later; without a GPU in the KFD topology the
 * program is skipped (kselftest exit code 4) with the reason "no GPU in
 * the KFD topology".
 *
 * A child process issues, with raw ioctls, the KFD calls that ROCm makes
 * for hsa_init(), one hipMalloc() of 1 MiB, one kernel launch and one
 * hipMemcpy() of 1 MiB from the host: the same objects, sizes, flags and
 * order. Each step below names the ROCm source it follows: libhsakmt
 * (ROCm/ROCT-Thunk-Interface, src/), ROCr (ROCm/ROCR-Runtime,
 * src/core/runtime/) and HIP (ROCm/clr).
 *
 * On every visible GPU: a VM, the memory policy, the MMIO remap page, the
 * scratch backing VA and a trap handler in a userptr page. Once: the
 * XNACK mode read, the runtime enabled where every GPU has debug
 * firmware, the event page as a 32 KiB GTT buffer passed to CREATE_EVENT,
 * and the error handler's events. On the working GPU: a 2 MiB VRAM block
 * (hipMalloc), ROCr's utility queue and HIP's null-stream queue (AQL,
 * userptr rings, VRAM EOP buffers, CWSR areas in SVM ranges), the
 * doorbell page, a code object, and an SDMA queue (by engine id on MI200,
 * MI300 and MI350) that copies 1 MiB from a userptr staging buffer into
 * the VRAM block. No CU mask, no GWS, no trap temporaries: ROCm sets none
 * by default. The AQL queues run nothing, as a process that has not yet
 * dispatched; the copy really runs.
 *
 * The test dumps the child as CRIU does and checks the image against what
 * was built. A fresh process restores it: its memory (userptr buffers,
 * CWSR headers, rings) is inherited or rewritten as CRIU would restore
 * it, and it maps its buffers again at their addresses, at the mmap
 * offsets RESTORE gave. After RESUME it dumps itself and compares that
 * image with the first, record by record, leaving out what changes by
 * design (volatile_fields[]); then it reads the event page
 * slots back, copies the VRAM block out through the restored SDMA queue
 * and finds the data the first process copied in, and destroys the
 * queues by their dumped ids.
 *
 * Variants: the CWSR areas as userptr buffers (ROCm before 5.3, or a
 * kernel without the SVM API), ROCm 6.1's 140 MiB scratch reserve where
 * VRAM allows it, a second working GPU, ROCm 5.2 without RUNTIME_ENABLE
 * (a trap handler with its own memory page), and a plain SDMA queue where
 * ROCm 6.4 would pin an engine (ROCm 6.2 and before).
 *
 * Left out: ROCr's and HIP's further internal signals and the kernarg
 * pool of a small-BAR GPU (their kinds are known, not their number),
 * MADV_DONTFORK on the CWSR area (the test's processes share that memory
 * by fork), and mappings on xGMI peers.
 */

#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/kfd_ioctl.h>
#include <linux/kfd_sysfs.h>

#include "../../../kselftest_harness.h"
#include "kfd_criu_util.h"

#define NO_GPU_REASON		"no GPU in the KFD topology"

#define ALLOC_FLAG(x)		KFD_IOC_ALLOC_MEM_FLAGS_##x
/* What every libhsakmt ALLOC carries (fmm_allocate_memory_object) */
#define ROCM_ALLOC		((__u32)(ALLOC_FLAG(WRITABLE) |	\
					 ALLOC_FLAG(NO_SUBSTITUTE)))
#define ROCM_SYSTEM_FINE	(ROCM_ALLOC | ALLOC_FLAG(EXECUTABLE) |	\
				 ALLOC_FLAG(COHERENT) | ALLOC_FLAG(UNCACHED))
#define ROCM_MMIO		(ROCM_ALLOC | ALLOC_FLAG(COHERENT) |	\
				 ALLOC_FLAG(MMIO_REMAP))
#define ROCM_DOORBELL		(ROCM_ALLOC | ALLOC_FLAG(COHERENT) |	\
				 ALLOC_FLAG(DOORBELL))
#define ROCM_GTT		(ROCM_SYSTEM_FINE | ALLOC_FLAG(GTT))
#define ROCM_USERPTR		(ROCM_SYSTEM_FINE | ALLOC_FLAG(USERPTR))
#define ROCM_USERPTR_CWSR	(ROCM_ALLOC | ALLOC_FLAG(EXECUTABLE) |	\
				 ALLOC_FLAG(COHERENT) | ALLOC_FLAG(USERPTR))
#define ROCM_USERPTR_COARSE	(ROCM_ALLOC | ALLOC_FLAG(EXECUTABLE) |	\
				 ALLOC_FLAG(USERPTR))
#define ROCM_VRAM		(ROCM_ALLOC | ALLOC_FLAG(EXECUTABLE) |	\
				 ALLOC_FLAG(VRAM))
#define ROCM_SCRATCH		(ROCM_ALLOC | ALLOC_FLAG(VRAM))

/* The values in ROCm's sources */
static_assert(ROCM_MMIO == 0x94000010, "MMIO remap flags");
static_assert(ROCM_DOORBELL == 0x94000008, "doorbell flags");
static_assert(ROCM_GTT == 0xD6000002, "GTT flags");
static_assert(ROCM_USERPTR == 0xD6000004, "fine userptr flags");
static_assert(ROCM_USERPTR_CWSR == 0xD4000004, "CWSR userptr flags");
static_assert(ROCM_USERPTR_COARSE == 0xD0000004, "coarse userptr flags");
static_assert(ROCM_VRAM == 0xD0000001, "VRAM flags");
static_assert(ROCM_SCRATCH == 0x90000001, "scratch flags");

/* Per GPU: a fine-grained (alternate) aperture, a coarse one, scratch */
#define FINE_SPAN		(256ULL << 20)
#define COARSE_SPAN		(256ULL << 20)
#define SCRATCH_SPAN		(4ULL << 30)
#define GPU_SPAN		(FINE_SPAN + COARSE_SPAN + SCRATCH_SPAN)
#define VA_ALIGN		(2ULL << 20)
/* Fixed places in the fine aperture; the rest is handed out from 2 MiB */
#define FINE_MMIO		0
#define FINE_EVENT_PAGE		(64 << 10)
#define FINE_TBA		(128 << 10)
#define FINE_TMA		(192 << 10)
#define FINE_DOORBELL		(1024 << 10)
#define FINE_FIRST_FREE		(2 << 20)

#define EVENT_PAGE_SIZE		(KFD_SIGNAL_EVENT_LIMIT * 8)
#define UNSIGNALED_SLOT		(~0ULL)
/* A slot no event uses, where the process leaves a mark */
#define MARK_SLOT		(KFD_SIGNAL_EVENT_LIMIT - 1)
#define EVENT_PAGE_MARK		0x0c0ffee0c0ffee01ULL
#define TMA_SIZE		8192
#define DOORBELL_SLICE		8192UL
#define AQL_PACKET_BYTES	64
#define AQL_PACKET_INVALID	1
#define HIP_RING_SIZE		(16384 * AQL_PACKET_BYTES)
#define UTILITY_RING_SIZE	(64 * AQL_PACKET_BYTES)
/* amd_queue_t: write_dispatch_id and read_dispatch_id */
#define AMD_QUEUE_WPTR		0x38
#define AMD_QUEUE_RPTR		0x80
#define QUEUE_PRIORITY_NORMAL	7
#define QUEUE_PRIORITY_MAXIMUM	15
#define VRAM_BLOCK_SIZE		(2UL << 20)
#define MEMCPY_SIZE		(1024UL << 10)
#define CODE_OBJECT_SIZE	(64UL << 10)
#define SCRATCH_RESERVE_SIZE	146800640ULL
#define SDMA_RING_SIZE		(1024UL << 10)
/* Two u64 slots of the SDMA queue's struct page, and a completion word */
#define SDMA_RPTR		0x00
#define SDMA_WPTR		0x08
#define SDMA_FENCE		0x100
#define SDMA_OP_COPY		1U
#define SDMA_OP_FENCE		5U
#define SDMA_PAD_DWORDS		8
#define SDMA_WAIT_MS		10000
#define DUMP_FENCE		0xd0d0d0d0U
#define RESTORE_FENCE		0x2e2e2e2eU

#define MAX_BUFS		96
#define MAX_QUEUES		(3 * KFD_TEST_MAX_GPUS)
#define MAX_EVENTS		32
#define OFFSETS_PER_GPU		24
#define TEST_SECONDS		300

#define GPU_LOAD(p)		__atomic_load_n(p, __ATOMIC_ACQUIRE)
#define GPU_STORE(p, v)		__atomic_store_n(p, v, __ATOMIC_RELEASE)

/**
 * struct rbuf - a buffer object of the ROCm process
 * @what: what ROCm uses it for, for messages
 * @va: its GPU virtual address, where the process maps it by the CPU too
 * @size: bytes
 * @flags: the KFD_IOC_ALLOC_MEM_FLAGS_* ROCm allocates it with
 * @owner: index of the GPU it is allocated on
 * @map_all: mapped on every GPU, not only on its owner
 * @handle: its handle
 * @mmap_offset: what ALLOC returned; for the doorbell page, the slice the
 *	process maps (from its first queue's doorbell offset)
 * @present: allocated; a GPU may give no MMIO remap page
 */
struct rbuf {
	const char *what;
	__u64 va;
	__u64 size;
	__u32 flags;
	int owner;
	bool map_all;
	__u64 handle;
	__u64 mmap_offset;
	bool present;
};

/**
 * struct rqueue - a user-mode queue of the ROCm process
 * @what: what ROCm uses it for
 * @gpu: index of its GPU
 * @type: the KFD_IOC_QUEUE_TYPE_* it is created with
 * @sdma_engine: SDMA by engine id: the engine
 * @priority: its priority
 * @ring_size: bytes of ring
 * @ring: index of its ring buffer
 * @ptrs: index of the buffer holding its read and write pointers
 * @qstruct: index of libhsakmt's struct queue page
 * @eop: index of its EOP buffer, or -1
 * @cwsr: index of its CWSR buffer, or -1 when it is an SVM range
 * @cwsr_va: its CWSR area
 * @rptr: where the hardware reports the read pointer
 * @wptr: where the process publishes the write pointer
 * @queue_id: its id
 * @doorbell_offset: its doorbell's mmap offset
 * @next_wptr: SDMA: the write pointer after the last submission, bytes
 */
struct rqueue {
	const char *what;
	int gpu;
	__u32 type;
	__u32 sdma_engine;
	__u32 priority;
	__u32 ring_size;
	int ring;
	int ptrs;
	int qstruct;
	int eop;
	int cwsr;
	__u64 cwsr_va;
	__u64 rptr;
	__u64 wptr;
	__u32 queue_id;
	__u64 doorbell_offset;
	__u64 next_wptr;
};

/**
 * struct revent - an event of the ROCm process
 * @type: its KFD_IOC_EVENT_*
 * @auto_reset: 0 or 1
 * @id: its id
 * @slot: its slot in the event page (signal events)
 */
struct revent {
	__u32 type;
	__u32 auto_reset;
	__u32 id;
	__u32 slot;
};

/**
 * struct rgpu - one GPU of the ROCm process
 * @gpu: the GPU
 * @cwsr: the EOP and CWSR sizes of its compute queues
 * @gfx: its gfx_target_version
 * @fine: its fine-grained aperture, %FINE_SPAN bytes
 * @coarse: its coarse aperture (VRAM), %COARSE_SPAN bytes
 * @scratch: its scratch aperture, %SCRATCH_SPAN bytes
 * @fine_next: next free address of @fine
 * @coarse_next: next free address of @coarse
 * @large_bar: the CPU sees all of its VRAM: hipMalloc blocks are PUBLIC
 * @mes: GFX11 or later: the pointer page is GTT
 * @no_eop: GFX 9.4.x: AQL queues get no EOP buffer
 * @svm_api: the topology reports the SVM API
 * @debug_firmware: the topology reports debug firmware
 * @sdma_type: the queue type of its host-to-device blit queue
 * @sdma_engine: the engine of that queue when by engine id
 * @working: it gets the hipMalloc, the launch and the copy
 * @mmio: index of its MMIO remap buffer
 * @tba: index of its trap handler code
 * @tma: index of its trap handler memory, or -1
 * @doorbell: index of its doorbell page, or -1
 * @vram_block: index of its hipMalloc block, or -1
 * @staging: index of the copy's staging buffer, or -1
 * @sdma: index of its SDMA queue, or -1
 */
struct rgpu {
	struct kfd_test_gpu gpu;
	struct kfd_cwsr_layout cwsr;
	__u64 gfx;
	__u64 fine;
	__u64 coarse;
	__u64 scratch;
	__u64 fine_next;
	__u64 coarse_next;
	bool large_bar;
	bool mes;
	bool no_eop;
	bool svm_api;
	bool debug_firmware;
	__u32 sdma_type;
	__u32 sdma_engine;
	bool working;
	int mmio;
	int tba;
	int tma;
	int doorbell;
	int vram_block;
	int staging;
	int sdma;
};

/**
 * struct rocm_process - what the dumpee builds, as the test sees it
 * @gpus: the visible GPUs
 * @nr_gpus: entries of @gpus
 * @bufs: its buffers, in the order ROCm allocates them
 * @nr_bufs: entries of @bufs
 * @queues: its queues
 * @nr_queues: entries of @queues
 * @events: its events
 * @nr_events: entries of @events
 * @event_page: index of the event page buffer
 * @runtime_enabled: it called RUNTIME_ENABLE
 * @r_debug: the r_debug address it passed
 * @cwsr_userptr: CWSR areas as userptr buffers even with the SVM API
 * @scratch_reserve: the 140 MiB scratch reserve is planned
 * @queue_event: index of the queue event in @events
 */
struct rocm_process {
	struct rgpu gpus[KFD_TEST_MAX_GPUS];
	int nr_gpus;
	struct rbuf bufs[MAX_BUFS];
	int nr_bufs;
	struct rqueue queues[MAX_QUEUES];
	int nr_queues;
	struct revent events[MAX_EVENTS];
	int nr_events;
	int event_page;
	bool runtime_enabled;
	__u64 r_debug;
	bool cwsr_userptr;
	bool scratch_reserve;
	int queue_event;
};

/**
 * struct rocm_restore - what the restoree gets from the test
 * @p: the dumped process
 * @image: the image, at its start
 */
struct rocm_restore {
	struct rocm_process *p;
	int image;
};

/* Stand-ins for ROCr's r_debug and CWSR error word, same address in forks */
static char r_debug_stub[64];
static __u64 cwsr_error_word;

/* Ends a child with what failed and why */
static void must(int ret, const char *what)
{
	if (!ret)
		return;
	fprintf(stderr, "# %s: %s\n", what, strerror(ret < 0 ? -ret : ret));
	_exit(1);
}

static size_t page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

static size_t doorbell_slice(void)
{
	return kfd_align(DOORBELL_SLICE, page_size());
}

/* The staging buffer's contents: what hipMemcpy copies */
static __u32 memcpy_word(size_t i)
{
	return 0x9e3779b9U * (__u32)(i + 1);
}

/* ----- Planning: what ROCm would allocate, where and how ----- */

static __u64 carve(__u64 *next, __u64 size)
{
	__u64 va = *next;

	*next += kfd_align(size, VA_ALIGN);
	return va;
}

static int plan_buf(struct rocm_process *p, const char *what, int owner,
		    __u32 flags, __u64 va, __u64 size, bool map_all)
{
	struct rbuf *b = &p->bufs[p->nr_bufs];

	memset(b, 0, sizeof(*b));
	b->what = what;
	b->owner = owner;
	b->flags = flags;
	b->va = va;
	b->size = kfd_align(size, page_size());
	b->map_all = map_all;
	return p->nr_bufs++;
}

/* A buffer in @g's fine aperture */
static int plan_fine(struct rocm_process *p, int gi, const char *what,
		     __u32 flags, __u64 size, bool map_all)
{
	struct rgpu *g = &p->gpus[gi];

	return plan_buf(p, what, gi, flags, carve(&g->fine_next, size), size,
			map_all);
}

/* A buffer in @g's coarse aperture: VRAM */
static int plan_coarse(struct rocm_process *p, int gi, const char *what,
		       __u32 flags, __u64 size)
{
	struct rgpu *g = &p->gpus[gi];

	return plan_buf(p, what, gi, flags, carve(&g->coarse_next, size), size,
			false);
}

/*
 * The blit queue ROCr creates for host-to-device copies (ROCr
 * amd_gpu_agent.cpp, GpuAgent::InitDma, blit_lambda): by
 * engine id from the 6.4-era code on for gfx90a (engine 0) and gfx94x
 * and gfx950 (engine 1) when the GPU has xGMI SDMA engines, else plain.
 */
static void plan_sdma_type(struct rgpu *g, bool plain_sdma)
{
	__u64 major_minor = g->gfx / 100;
	bool pinned = g->gfx == 90010 || major_minor == 904 ||
		      major_minor == 905;

	g->sdma_type = KFD_IOC_QUEUE_TYPE_SDMA;
	g->sdma_engine = 0;
	if (plain_sdma || !pinned ||
	    !kfd_gpu_prop_or(&g->gpu, "num_sdma_xgmi_engines", 0))
		return;
	g->sdma_type = KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID;
	g->sdma_engine = g->gfx == 90010 ? 0 : 1;
}

/*
 * Reads @g's properties; NULL, or why the GPU cannot take part. A
 * topology whose ctl_stack_size disagrees with its wave slots fails the
 * test (see kfd_gpu_cwsr_layout()).
 */
static const char *plan_gpu(struct __test_metadata *_metadata,
			    const struct kfd_test_gpu *gpu, __u64 va,
			    bool plain_sdma, struct rgpu *g)
{
	__u64 caps = kfd_gpu_prop_or(gpu, "capability", 0);
	int ret;

	memset(g, 0, sizeof(*g));
	g->gpu = *gpu;
	g->gfx = kfd_gpu_prop_or(gpu, "gfx_target_version", 0);
	if (g->gfx < 90000)
		return "older than GFX9";
	if (page_size() != 4096)
		return "pages larger than 4 KiB";
	ret = kfd_gpu_cwsr_layout(gpu, &g->cwsr);
	if (ret == -ENODATA)
		return "the topology reports no CWSR area size";
	ASSERT_EQ(0, ret)
		TH_LOG("GPU %#x: topology wave slots do not give its ctl_stack_size %u",
		       gpu->gpu_id, g->cwsr.ctl_stack_size);
	ret = kfd_gpu_vram_public(gpu);
	if (ret < 0)
		return "the topology lists no VRAM heap";
	g->large_bar = ret;
	g->mes = g->gfx >= 110000;
	g->no_eop = g->gfx / 100 == 904;
	g->svm_api = caps & HSA_CAP_SVMAPI_SUPPORTED;
	g->debug_firmware = caps & HSA_CAP_TRAP_DEBUG_FIRMWARE_SUPPORTED;
	plan_sdma_type(g, plain_sdma);
	g->fine = va;
	g->coarse = va + FINE_SPAN;
	g->scratch = va + FINE_SPAN + COARSE_SPAN;
	g->fine_next = g->fine + FINE_FIRST_FREE;
	g->coarse_next = g->coarse;
	g->tma = -1;
	g->doorbell = -1;
	g->vram_block = -1;
	g->staging = -1;
	g->sdma = -1;
	return NULL;
}

/* hsa_init's buffers on every GPU, and the event page on the first */
static void plan_init_bufs(struct rocm_process *p)
{
	struct rgpu *g;
	int i;

	for (i = 0; i < p->nr_gpus; i++) {
		g = &p->gpus[i];
		g->mmio = plan_buf(p, "MMIO remap", i, ROCM_MMIO,
				   g->fine + FINE_MMIO, 4096, false);
	}
	p->event_page = plan_buf(p, "event page", 0, ROCM_GTT,
				 p->gpus[0].fine + FINE_EVENT_PAGE,
				 EVENT_PAGE_SIZE, true);
	for (i = 0; i < p->nr_gpus; i++) {
		g = &p->gpus[i];
		g->tba = plan_buf(p, "trap handler code", i, ROCM_USERPTR,
				  g->fine + FINE_TBA, 4096, true);
		if (!p->runtime_enabled)
			g->tma = plan_buf(p, "trap handler memory", i,
					  ROCM_USERPTR, g->fine + FINE_TMA,
					  TMA_SIZE, true);
	}
}

/* The CWSR area of a queue on @gi: bytes and where */
static void plan_cwsr(struct rocm_process *p, int gi, struct rqueue *q)
{
	struct rgpu *g = &p->gpus[gi];
	__u64 size = g->cwsr.area_size;

	q->cwsr = -1;
	if (g->svm_api && !p->cwsr_userptr) {
		q->cwsr_va = carve(&g->fine_next, size);
		return;
	}
	q->cwsr = plan_fine(p, gi, "CWSR", ROCM_USERPTR_CWSR, size, false);
	q->cwsr_va = p->bufs[q->cwsr].va;
}

/* An AQL queue of @ring_size bytes on @gi */
static void plan_aql_queue(struct rocm_process *p, int gi, const char *what,
			   __u32 ring_size)
{
	struct rqueue *q = &p->queues[p->nr_queues++];
	struct rgpu *g = &p->gpus[gi];

	memset(q, 0, sizeof(*q));
	q->what = what;
	q->gpu = gi;
	q->type = KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
	q->priority = QUEUE_PRIORITY_NORMAL;
	q->ring_size = ring_size;
	if (g->mes)
		q->ptrs = plan_fine(p, gi, "AQL SharedQueue (GTT)", ROCM_GTT,
				    4096, true);
	else
		q->ptrs = plan_fine(p, gi, "AQL SharedQueue", ROCM_USERPTR,
				    4096, true);
	q->ring = plan_fine(p, gi, "AQL ring", ROCM_USERPTR, ring_size, true);
	q->qstruct = plan_fine(p, gi, "AQL struct queue", ROCM_GTT, 4096,
			       false);
	q->eop = g->no_eop ? -1 :
		 plan_coarse(p, gi, "EOP", ROCM_VRAM, g->cwsr.eop_size);
	plan_cwsr(p, gi, q);
	q->wptr = p->bufs[q->ptrs].va + AMD_QUEUE_WPTR;
	q->rptr = p->bufs[q->ptrs].va + AMD_QUEUE_RPTR;
}

/* The blit queue of hipMemcpy on @gi */
static void plan_sdma_queue(struct rocm_process *p, int gi)
{
	struct rqueue *q = &p->queues[p->nr_queues];
	struct rgpu *g = &p->gpus[gi];

	memset(q, 0, sizeof(*q));
	g->sdma = p->nr_queues++;
	q->what = "SDMA blit";
	q->gpu = gi;
	q->type = g->sdma_type;
	q->sdma_engine = g->sdma_engine;
	q->priority = QUEUE_PRIORITY_MAXIMUM;
	q->ring_size = SDMA_RING_SIZE;
	q->ring = plan_fine(p, gi, "SDMA ring", ROCM_USERPTR, SDMA_RING_SIZE,
			    true);
	q->qstruct = plan_fine(p, gi, "SDMA struct queue", ROCM_GTT, 4096,
			       false);
	q->ptrs = q->qstruct;
	q->eop = -1;
	q->cwsr = -1;
	q->rptr = p->bufs[q->qstruct].va + SDMA_RPTR;
	q->wptr = p->bufs[q->qstruct].va + SDMA_WPTR;
}

/* hipMalloc, one launch and one hipMemcpy on @gi */
static void plan_work(struct rocm_process *p, int gi)
{
	struct rgpu *g = &p->gpus[gi];
	__u32 vram = ROCM_VRAM | (g->large_bar ? ALLOC_FLAG(PUBLIC) : 0);

	g->working = true;
	g->vram_block = plan_coarse(p, gi, "hipMalloc block", vram,
				    VRAM_BLOCK_SIZE);
	plan_aql_queue(p, gi, "ROCr utility queue", UTILITY_RING_SIZE);
	plan_aql_queue(p, gi, "HIP null stream", HIP_RING_SIZE);
	g->doorbell = plan_buf(p, "doorbell", gi, ROCM_DOORBELL,
			       g->fine + FINE_DOORBELL, DOORBELL_SLICE, false);
	if (p->scratch_reserve)
		plan_buf(p, "scratch reserve", gi, ROCM_SCRATCH, g->scratch,
			 SCRATCH_RESERVE_SIZE, false);
	plan_coarse(p, gi, "code object", vram, CODE_OBJECT_SIZE);
	plan_fine(p, gi, "code object staging", ROCM_USERPTR, CODE_OBJECT_SIZE,
		  false);
	g->staging = plan_fine(p, gi, "hipMemcpy staging", ROCM_USERPTR_COARSE,
			       MEMCPY_SIZE, false);
	plan_sdma_queue(p, gi);
}

/* ----- Host memory: what CRIU restores with the process ----- */

/*
 * Anonymous memory at every userptr buffer and CWSR SVM range, made by
 * the test before it forks, so that the dumpee and the restoree have it
 * at the same addresses, as CRIU gives a restored process its memory
 */
static int map_host_memory(const struct rocm_process *p)
{
	const struct rqueue *q;
	void *m;
	int i;

	for (i = 0; i < p->nr_bufs; i++) {
		if (!(p->bufs[i].flags & ALLOC_FLAG(USERPTR)))
			continue;
		m = mmap((void *)(uintptr_t)p->bufs[i].va, p->bufs[i].size,
			 PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (m == MAP_FAILED)
			return -errno;
	}
	for (i = 0; i < p->nr_queues; i++) {
		q = &p->queues[i];
		if (q->type != KFD_IOC_QUEUE_TYPE_COMPUTE_AQL || q->cwsr >= 0)
			continue;
		m = mmap((void *)(uintptr_t)q->cwsr_va,
			 p->gpus[q->gpu].cwsr.area_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (m == MAP_FAILED)
			return -errno;
	}
	return 0;
}

static void fill_staging(const struct rocm_process *p)
{
	__u32 *s;
	size_t i;
	int gi;

	for (gi = 0; gi < p->nr_gpus; gi++) {
		if (p->gpus[gi].staging < 0)
			continue;
		s = (__u32 *)(uintptr_t)p->bufs[p->gpus[gi].staging].va;
		for (i = 0; i < MEMCPY_SIZE / 4; i++)
			s[i] = memcpy_word(i);
	}
}

/*
 * An AQL ring as ROCr leaves it before the first dispatch: every packet
 * INVALID (ROCr amd_aql_queue.cpp, AqlQueue::AqlQueue)
 */
static void fill_aql_ring(const struct rocm_process *p, const struct rqueue *q)
{
	unsigned char *ring = (unsigned char *)(uintptr_t)p->bufs[q->ring].va;
	__u32 i;

	memset(ring, 0, q->ring_size);
	for (i = 0; i < q->ring_size; i += AQL_PACKET_BYTES)
		*(__u16 *)(ring + i) = AQL_PACKET_INVALID;
}

/*
 * The header ROCr writes at the start of each XCC's save area (ROCr
 * amd_aql_queue.cpp, AqlQueue::AqlQueue): the debugger's share after all
 * XCCs' save areas, the error word and the queue event.
 */
static void fill_cwsr_headers(const struct rocm_process *p,
			      const struct rqueue *q)
{
	const struct kfd_cwsr_layout *l = &p->gpus[q->gpu].cwsr;
	struct kfd_context_save_area_header *h;
	__u32 x;

	for (x = 0; x < l->num_xcc; x++) {
		h = (void *)(uintptr_t)(q->cwsr_va + (__u64)x * l->cwsr_size);
		memset(h, 0, sizeof(*h));
		h->debug_offset = (l->num_xcc - x) * l->cwsr_size;
		h->debug_size = l->debug_size * l->num_xcc;
		h->err_payload_addr = (uintptr_t)&cwsr_error_word;
		h->err_event_id = p->events[p->queue_event].id;
	}
}

/*
 * What the process wrote into its own memory for its queues; the
 * restoree writes it again, as CRIU restores the dumped memory
 */
static void fill_queue_memory(const struct rocm_process *p)
{
	const struct rqueue *q;
	int i;

	for (i = 0; i < p->nr_queues; i++) {
		q = &p->queues[i];
		if (q->type != KFD_IOC_QUEUE_TYPE_COMPUTE_AQL)
			continue;
		fill_aql_ring(p, q);
		fill_cwsr_headers(p, q);
	}
}

/* ----- The ioctls ----- */

/* Maps @b by the CPU at its address, as ROCm does */
static int cpu_map_buf(int kfd, int drm, const struct rbuf *b, __u64 offset)
{
	int prot = PROT_READ | PROT_WRITE, fd = drm;
	void *m;

	if (b->flags & ALLOC_FLAG(USERPTR))
		return 0;
	if (b->flags & (ALLOC_FLAG(DOORBELL) | ALLOC_FLAG(MMIO_REMAP)))
		fd = kfd;
	else if ((b->flags & ALLOC_FLAG(VRAM)) &&
		 !(b->flags & ALLOC_FLAG(PUBLIC)))
		prot = PROT_NONE;
	m = mmap((void *)(uintptr_t)b->va, b->size, prot,
		 MAP_SHARED | MAP_FIXED, fd, (off_t)offset);
	return m == MAP_FAILED ? -errno : 0;
}

/* The gpu_ids a buffer is mapped on */
static __u32 buf_gpu_ids(const struct rocm_process *p, const struct rbuf *b,
			 __u32 *ids)
{
	int i;

	if (!b->map_all) {
		ids[0] = p->gpus[b->owner].gpu.gpu_id;
		return 1;
	}
	for (i = 0; i < p->nr_gpus; i++)
		ids[i] = p->gpus[i].gpu.gpu_id;
	return p->nr_gpus;
}

/*
 * ALLOC, CPU mapping and MAP_MEMORY_TO_GPU of buffer @i, the way
 * libhsakmt allocates (ROCT src/fmm.c, fmm_allocate_device,
 * fmm_allocate_host, _fmm_map_to_gpu): a userptr buffer over the
 * process's memory, others mmapped at their VA. An MMIO remap page that
 * the GPU cannot give (-ENOMEM) is left out, as libhsakmt only logs it.
 */
static void alloc_buf(int kfd, const int *drm, struct rocm_process *p, int i)
{
	struct rbuf *b = &p->bufs[i];
	__u32 gpu_id = p->gpus[b->owner].gpu.gpu_id, ids[KFD_TEST_MAX_GPUS];
	__u64 userptr = b->flags & ALLOC_FLAG(USERPTR) ? b->va : 0;
	char what[96];
	int ret;

	snprintf(what, sizeof(what), "GPU %#x, %s buffer of %llu bytes",
		 gpu_id, b->what, (unsigned long long)b->size);
	ret = kfd_alloc_memory(kfd, gpu_id, b->flags, b->va, b->size, userptr,
			       &b->handle, &b->mmap_offset);
	if (ret == -ENOMEM && (b->flags & ALLOC_FLAG(MMIO_REMAP))) {
		fprintf(stderr, "# %s: none, left out\n", what);
		return;
	}
	must(ret, what);
	b->present = true;
	if (b->flags & ALLOC_FLAG(DOORBELL))
		return;	/* mapped once the first queue names its slice */
	must(cpu_map_buf(kfd, drm[b->owner], b, b->mmap_offset), what);
	must(kfd_map_memory(kfd, true, b->handle, ids,
			    buf_gpu_ids(p, b, ids)), what);
}

static void alloc_bufs_of(int kfd, const int *drm, struct rocm_process *p,
			  int gi, const char *what)
{
	int i;

	for (i = 0; i < p->nr_bufs; i++)
		if (p->bufs[i].owner == gi && !strcmp(p->bufs[i].what, what))
			alloc_buf(kfd, drm, p, i);
}

static void check_version(int kfd)
{
	struct kfd_ioctl_get_version_args args = { 0 };

	must(kfd_ioctl(kfd, AMDKFD_IOC_GET_VERSION, &args), "GET_VERSION");
	if (args.major_version != 1)
		must(-EPROTO, "KFD major version");
}

/*
 * Phase B on one GPU (ROCT src/fmm.c, fmm_init_process_apertures):
 * ACQUIRE_VM on its render node, SET_MEMORY_POLICY with the fine
 * aperture as the alternate one, the MMIO remap page (map_mmio).
 */
static void open_gpu(int kfd, int *drm, struct rocm_process *p, int gi)
{
	struct rgpu *g = &p->gpus[gi];
	struct kfd_ioctl_set_memory_policy_args policy = {
		.alternate_aperture_base = g->fine,
		.alternate_aperture_size = FINE_SPAN,
		.gpu_id = g->gpu.gpu_id,
		.default_policy = KFD_IOC_CACHE_POLICY_NONCOHERENT,
		.alternate_policy = KFD_IOC_CACHE_POLICY_COHERENT,
	};

	if (!kfd_in_gpuvm_aperture(kfd, g->gpu.gpu_id, g->fine, GPU_SPAN))
		must(-ERANGE, "reserved VA outside the GPUVM aperture");
	drm[gi] = open_render_node(&g->gpu);
	if (drm[gi] < 0)
		must(-errno, "render node");
	/* fmm.c, acquire_vm */
	must(kfd_acquire_vm(kfd, drm[gi], g->gpu.gpu_id), "ACQUIRE_VM");
	/* fmm.c, fmm_init_process_apertures */
	must(kfd_ioctl(kfd, AMDKFD_IOC_SET_MEMORY_POLICY, &policy),
	     "SET_MEMORY_POLICY");
	/* fmm.c, map_mmio */
	alloc_buf(kfd, drm, p, g->mmio);
}

/*
 * RUNTIME_ENABLE (ROCT src/debug.c, hsaKmtRuntimeEnable, from ROCr
 * amd_topology.cpp, Load): only when every GPU has debug firmware
 * (hsaKmtCheckRuntimeDebugSupport), without trap temporaries
 * (HSA_ENABLE_DEBUG unset)
 */
static void enable_runtime(int kfd, const struct rocm_process *p)
{
	struct kfd_ioctl_runtime_enable_args args = {
		.r_debug = p->r_debug,
		.mode_mask = KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK,
	};

	must(kfd_ioctl(kfd, AMDKFD_IOC_RUNTIME_ENABLE, &args),
	     "RUNTIME_ENABLE");
}

/* CREATE_EVENT; @page is the event page handle for the first event */
static void create_event(int kfd, struct rocm_process *p, __u32 type,
			 __u32 auto_reset, __u64 page)
{
	struct kfd_ioctl_create_event_args args = {
		.event_page_offset = page,
		.event_type = type,
		.auto_reset = auto_reset,
	};
	struct revent *e = &p->events[p->nr_events++];

	must(kfd_ioctl(kfd, AMDKFD_IOC_CREATE_EVENT, &args), "CREATE_EVENT");
	e->type = type;
	e->auto_reset = auto_reset;
	e->id = args.event_id;
	e->slot = args.event_slot_index;
}

/*
 * Phase E (ROCr runtime.cpp, Runtime::BindErrorHandlers): the first
 * event makes libhsakmt allocate the event page, 32 KiB of GTT on the
 * first GPU mapped on all, and pass its handle (ROCT src/events.c,
 * hsaKmtCreateEvent); then the async-event thread's wake signal and the
 * hardware exception event.
 */
static void bind_error_handlers(int kfd, const int *drm,
				struct rocm_process *p)
{
	alloc_buf(kfd, drm, p, p->event_page);
	create_event(kfd, p, KFD_IOC_EVENT_MEMORY, 0,
		     p->bufs[p->event_page].handle);
	create_event(kfd, p, KFD_IOC_EVENT_SIGNAL, 1, 0);
	create_event(kfd, p, KFD_IOC_EVENT_HW_EXCEPTION, 0, 0);
}

/*
 * Phase F on one GPU (ROCr amd_gpu_agent.cpp, GpuAgent::PostToolsInit):
 * the scratch backing VA (InitScratchPool → ROCT fmm_allocate_scratch),
 * then the trap handler (BindTrapHandler) in a userptr page, with a
 * memory page of its own when the runtime is not enabled.
 */
static void init_gpu_agent(int kfd, const int *drm, struct rocm_process *p,
			   int gi)
{
	struct rgpu *g = &p->gpus[gi];
	struct kfd_ioctl_set_scratch_backing_va_args scratch = {
		.va_addr = g->scratch >> 16,
		.gpu_id = g->gpu.gpu_id,
	};
	struct kfd_ioctl_set_trap_handler_args trap = {
		.tba_addr = p->bufs[g->tba].va,
		.gpu_id = g->gpu.gpu_id,
	};

	must(kfd_ioctl(kfd, AMDKFD_IOC_SET_SCRATCH_BACKING_VA, &scratch),
	     "SET_SCRATCH_BACKING_VA");
	alloc_buf(kfd, drm, p, g->tba);
	if (g->tma >= 0) {
		alloc_buf(kfd, drm, p, g->tma);
		trap.tma_addr = p->bufs[g->tma].va;
	}
	must(kfd_ioctl(kfd, AMDKFD_IOC_SET_TRAP_HANDLER, &trap),
	     "SET_TRAP_HANDLER");
}

/* AMDKFD_IOC_SVM: its size field covers the attributes that follow */
static int svm_set_attr(int kfd, __u64 start, __u64 size,
			const struct kfd_ioctl_svm_attribute *attrs, __u32 n)
{
	struct {
		struct kfd_ioctl_svm_args args;
		struct kfd_ioctl_svm_attribute attrs[6];
	} buf = { .args = {
		.start_addr = start, .size = size,
		.op = KFD_IOCTL_SVM_OP_SET_ATTR, .nattr = n,
	} };

	memcpy(buf.attrs, attrs, n * sizeof(*attrs));
	return kfd_ioctl(kfd, _IOC(_IOC_READ | _IOC_WRITE,
				   _IOC_TYPE(AMDKFD_IOC_SVM),
				   _IOC_NR(AMDKFD_IOC_SVM),
				   sizeof(buf.args) + n * sizeof(*attrs)), &buf);
}

/* The flags ROCT's register_svm_range gives a CWSR area */
#define CWSR_SVM_FLAGS	(KFD_IOCTL_SVM_FLAG_HOST_ACCESS |		\
			 KFD_IOCTL_SVM_FLAG_GPU_EXEC |			\
			 KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED)

/*
 * A CWSR area in an SVM range (ROCT src/queues.c, handle_concrete_asic →
 * register_svm_range, since ROCT b444d93): prefetched to the GPU, system
 * memory preferred, always mapped, accessible by the GPU.
 */
static void register_cwsr_svm(int kfd, const struct rocm_process *p,
			      const struct rqueue *q)
{
	__u32 gpu_id = p->gpus[q->gpu].gpu.gpu_id;
	const struct kfd_ioctl_svm_attribute attrs[] = {
		{ KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, gpu_id },
		{ KFD_IOCTL_SVM_ATTR_PREFERRED_LOC,
		  KFD_IOCTL_SVM_LOCATION_SYSMEM },
		{ KFD_IOCTL_SVM_ATTR_CLR_FLAGS, ~CWSR_SVM_FLAGS },
		{ KFD_IOCTL_SVM_ATTR_SET_FLAGS, CWSR_SVM_FLAGS },
		{ KFD_IOCTL_SVM_ATTR_ACCESS, gpu_id },
		{ KFD_IOCTL_SVM_ATTR_GRANULARITY, 0xFF },
	};

	must(svm_set_attr(kfd, q->cwsr_va, p->gpus[q->gpu].cwsr.area_size,
			  attrs, ARRAY_SIZE(attrs)),
	     "SVM SET_ATTR of a CWSR area");
}

static void create_queue(int kfd, const struct rocm_process *p,
			 struct rqueue *q)
{
	const struct rgpu *g = &p->gpus[q->gpu];
	struct kfd_ioctl_create_queue_args args = {
		.ring_base_address = p->bufs[q->ring].va,
		.write_pointer_address = q->wptr,
		.read_pointer_address = q->rptr,
		.ring_size = q->ring_size,
		.gpu_id = g->gpu.gpu_id,
		.queue_type = q->type,
		.queue_percentage = 100,
		.queue_priority = q->priority,
		.sdma_engine_id = q->sdma_engine,
	};
	char what[96];

	if (q->type == KFD_IOC_QUEUE_TYPE_COMPUTE_AQL) {
		if (q->eop >= 0) {
			args.eop_buffer_address = p->bufs[q->eop].va;
			args.eop_buffer_size = g->cwsr.eop_size;
		}
		args.ctx_save_restore_address = q->cwsr_va;
		args.ctx_save_restore_size = g->cwsr.cwsr_size;
		args.ctl_stack_size = g->cwsr.ctl_stack_size;
	}
	snprintf(what, sizeof(what), "GPU %#x: CREATE_QUEUE of the %s queue",
		 g->gpu.gpu_id, q->what);
	must(kfd_ioctl(kfd, AMDKFD_IOC_CREATE_QUEUE, &args), what);
	q->queue_id = args.queue_id;
	q->doorbell_offset = args.doorbell_offset;
}

/*
 * One AQL queue (ROCr amd_aql_queue.cpp, AqlQueue::AqlQueue; ROCT
 * src/queues.c, hsaKmtCreateQueue, handle_concrete_asic): SharedQueue
 * page, ring, libhsakmt's struct queue page, EOP, CWSR, CREATE_QUEUE
 */
static void build_aql_queue(int kfd, const int *drm, struct rocm_process *p,
			    struct rqueue *q)
{
	alloc_buf(kfd, drm, p, q->ptrs);
	alloc_buf(kfd, drm, p, q->ring);
	fill_aql_ring(p, q);
	alloc_buf(kfd, drm, p, q->qstruct);
	if (q->eop >= 0)
		alloc_buf(kfd, drm, p, q->eop);
	fill_cwsr_headers(p, q);
	if (q->cwsr >= 0)
		alloc_buf(kfd, drm, p, q->cwsr);
	else
		register_cwsr_svm(kfd, p, q);
	create_queue(kfd, p, q);
}

/*
 * The doorbell page, after the GPU's first queue (ROCT src/queues.c,
 * map_doorbell_dgpu): allocated at its VA, mmapped from /dev/kfd at the
 * slice the queue's doorbell offset names, mapped on the GPU
 */
static void map_doorbell_page(int kfd, const int *drm,
			      struct rocm_process *p, int gi,
			      const struct rqueue *first)
{
	struct rbuf *b = &p->bufs[p->gpus[gi].doorbell];

	alloc_buf(kfd, drm, p, p->gpus[gi].doorbell);
	b->mmap_offset = first->doorbell_offset & ~(doorbell_slice() - 1);
	must(cpu_map_buf(kfd, drm[gi], b, b->mmap_offset), "doorbell mmap");
	must(kfd_map_memory(kfd, true, b->handle, &p->gpus[gi].gpu.gpu_id, 1),
	     "doorbell MAP_MEMORY_TO_GPU");
}

static struct rqueue *aql_queue_of(struct rocm_process *p, int gi, int nth)
{
	int i;

	for (i = 0; i < p->nr_queues; i++)
		if (p->queues[i].gpu == gi &&
		    p->queues[i].type == KFD_IOC_QUEUE_TYPE_COMPUTE_AQL &&
		    !nth--)
			return &p->queues[i];
	return NULL;
}

/*
 * hipMalloc(1 MiB) (clr rocdevice.cpp, Device::deviceLocalAlloc → ROCr
 * MemoryRegion::AllocateImpl): a 2 MiB VRAM block on the GPU. Then the
 * first launch: ROCr's utility queue (GpuAgent::QueueCreate
 * touches it), HIP's null-stream queue (clr VirtualGPU::create →
 * hsa_queue_create), the doorbell page at the first queue, ROCr's
 * scratch reserve (GpuAgent::ReserveScratch, ROCm 6.1+), the code object
 * and its staging buffer (ROCr amd_loader_context.cpp,
 * RegionMemory::Allocate), two HIP completion signals.
 */
static void malloc_and_launch(int kfd, const int *drm,
			      struct rocm_process *p, int gi)
{
	struct rqueue *utility = aql_queue_of(p, gi, 0);

	alloc_buf(kfd, drm, p, p->gpus[gi].vram_block);
	build_aql_queue(kfd, drm, p, utility);
	map_doorbell_page(kfd, drm, p, gi, utility);
	build_aql_queue(kfd, drm, p, aql_queue_of(p, gi, 1));
	alloc_bufs_of(kfd, drm, p, gi, "scratch reserve");
	alloc_bufs_of(kfd, drm, p, gi, "code object");
	alloc_bufs_of(kfd, drm, p, gi, "code object staging");
	create_event(kfd, p, KFD_IOC_EVENT_SIGNAL, 1, 0);
	create_event(kfd, p, KFD_IOC_EVENT_SIGNAL, 1, 0);
}

/* ----- The copy through the SDMA queue ----- */

/**
 * struct sdma_cpu - the CPU's view of an SDMA queue
 * @q: the queue
 * @ring: its ring
 * @rptr: where the engine reports the read pointer
 * @wptr: where the process publishes the write pointer
 * @fence: the completion word
 * @doorbell: its doorbell
 */
struct sdma_cpu {
	struct rqueue *q;
	__u32 *ring;
	__u64 *rptr;
	__u64 *wptr;
	__u32 *fence;
	__u64 *doorbell;
};

static void sdma_cpu_view(const struct rocm_process *p, struct rqueue *q,
			  struct sdma_cpu *s)
{
	__u64 page = p->bufs[q->qstruct].va;
	__u64 slice = p->bufs[p->gpus[q->gpu].doorbell].va;

	s->q = q;
	s->ring = (__u32 *)(uintptr_t)p->bufs[q->ring].va;
	s->rptr = (__u64 *)(uintptr_t)(page + SDMA_RPTR);
	s->wptr = (__u64 *)(uintptr_t)(page + SDMA_WPTR);
	s->fence = (__u32 *)(uintptr_t)(page + SDMA_FENCE);
	s->doorbell = (__u64 *)(uintptr_t)(slice + (q->doorbell_offset &
						    (doorbell_slice() - 1)));
}

/* A linear copy and a fence that writes @value when it is done */
static unsigned int sdma_copy_packets(__u32 *pkt, __u64 src, __u64 dst,
				      __u64 fence, __u32 value)
{
	unsigned int n = 0;

	pkt[n++] = SDMA_OP_COPY;	/* sub-op 0: linear */
	pkt[n++] = MEMCPY_SIZE - 1;
	pkt[n++] = 0;
	pkt[n++] = (__u32)src;
	pkt[n++] = (__u32)(src >> 32);
	pkt[n++] = (__u32)dst;
	pkt[n++] = (__u32)(dst >> 32);
	pkt[n++] = SDMA_OP_FENCE;
	pkt[n++] = (__u32)fence;
	pkt[n++] = (__u32)(fence >> 32);
	pkt[n++] = value;
	while (n % SDMA_PAD_DWORDS)
		pkt[n++] = 0;	/* NOP */
	return n;
}

/*
 * Copies %MEMCPY_SIZE bytes from @src to @dst through the queue and waits
 * for the fence; the write pointer is in bytes and never wraps on GFX9+
 */
static int sdma_copy(struct sdma_cpu *s, __u64 src, __u64 dst, __u32 value)
{
	__u32 pkt[2 * SDMA_PAD_DWORDS];
	__u64 ring_dwords = s->q->ring_size / 4, pos = s->q->next_wptr / 4;
	__u64 deadline = now_ms() + SDMA_WAIT_MS;
	unsigned int n, i;

	GPU_STORE(s->fence, 0);
	n = sdma_copy_packets(pkt, src, dst, (uintptr_t)s->fence, value);
	for (i = 0; i < n; i++)
		s->ring[(pos + i) % ring_dwords] = pkt[i];
	s->q->next_wptr += n * 4;
	__sync_synchronize();
	GPU_STORE(s->wptr, s->q->next_wptr);
	__sync_synchronize();
	GPU_STORE(s->doorbell, s->q->next_wptr);
	while (GPU_LOAD(s->fence) != value && now_ms() < deadline)
		usleep(1000);
	if (GPU_LOAD(s->fence) == value)
		return 0;
	fprintf(stderr, "# SDMA queue %u: no fence after %d ms; rptr %#llx, wptr %#llx\n",
		s->q->queue_id, SDMA_WAIT_MS,
		(unsigned long long)GPU_LOAD(s->rptr),
		(unsigned long long)s->q->next_wptr);
	return -ETIMEDOUT;
}

/* Index of the first word of the copy at @va that is not the staged data */
static long memcpy_mismatch(__u64 va)
{
	const __u32 *w = (const __u32 *)(uintptr_t)va;
	size_t i;

	for (i = 0; i < MEMCPY_SIZE / 4; i++)
		if (GPU_LOAD(&w[i]) != memcpy_word(i))
			return i;
	return -1;
}

/*
 * hipMemcpy H2D of 1 MiB from pageable memory (clr
 * DmaBlitManager::writeBuffer → ROCr BlitSdma::Initialize,
 * SubmitLinearCopyCommand): a 1 MiB staging buffer, the blit queue's
 * ring and struct page, its two interrupt signals, the queue, the copy
 */
static void memcpy_to_device(int kfd, const int *drm, struct rocm_process *p,
			     int gi)
{
	struct rgpu *g = &p->gpus[gi];
	struct rqueue *q = &p->queues[g->sdma];
	struct sdma_cpu s;

	alloc_buf(kfd, drm, p, g->staging);
	alloc_buf(kfd, drm, p, q->ring);
	alloc_buf(kfd, drm, p, q->qstruct);
	create_event(kfd, p, KFD_IOC_EVENT_SIGNAL, 1, 0);
	create_event(kfd, p, KFD_IOC_EVENT_SIGNAL, 1, 0);
	memset((void *)(uintptr_t)p->bufs[q->qstruct].va, 0, 4096);
	create_queue(kfd, p, q);
	sdma_cpu_view(p, q, &s);
	must(sdma_copy(&s, p->bufs[g->staging].va, p->bufs[g->vram_block].va,
		       DUMP_FENCE), "hipMemcpy through the SDMA queue");
	if (g->large_bar && memcpy_mismatch(p->bufs[g->vram_block].va) >= 0)
		must(-EIO, "VRAM after the copy");
}

/* A mark in a slot that no event uses: the page's contents must return */
static void mark_event_page(const struct rocm_process *p)
{
	__u64 *slots = (__u64 *)(uintptr_t)p->bufs[p->event_page].va;

	GPU_STORE(&slots[MARK_SLOT], EVENT_PAGE_MARK);
}

/*
 * The process to be dumped: hsa_init (phases A to F), then on each
 * working GPU hipMalloc, a launch and hipMemcpy; its /dev/kfd goes to
 * the test with the filled-in plan, and it waits for the dump.
 */
static void dumpee_main(int sock, void *arg)
{
	struct rocm_process *p = arg;
	int kfd = kfd_open(), drm[KFD_TEST_MAX_GPUS], i;

	if (kfd < 0)
		must(-errno, "open /dev/kfd");
	/* Phase A: ROCT src/openclose.c, hsaKmtOpenKFD */
	check_version(kfd);
	for (i = 0; i < p->nr_gpus; i++)
		open_gpu(kfd, drm, p, i);
	/* Phase C: ROCr amd_topology.cpp, BindXnackMode → hsaKmtGetXNACKMode */
	kfd_xnack_mode(kfd, -1);
	if (p->runtime_enabled)
		enable_runtime(kfd, p);
	bind_error_handlers(kfd, drm, p);
	for (i = 0; i < p->nr_gpus; i++)
		init_gpu_agent(kfd, drm, p, i);
	/* ROCr amd_gpu_agent.cpp, queue_event_: before the first queue */
	p->queue_event = p->nr_events;
	create_event(kfd, p, KFD_IOC_EVENT_SIGNAL, 1, 0);
	for (i = 0; i < p->nr_gpus; i++)
		if (p->gpus[i].working)
			malloc_and_launch(kfd, drm, p, i);
	for (i = 0; i < p->nr_gpus; i++)
		if (p->gpus[i].working)
			memcpy_to_device(kfd, drm, p, i);
	mark_event_page(p);
	CHILD_CHECK(!send_fd(sock, kfd, p, sizeof(*p)));
	sync_wait(sock);	/* until the dump is over */
	_exit(0);
}

/* ----- The dumped image holds what ROCm built ----- */

/* The index of the GPU record of @gpu_id, or -1 */
static int image_gpu_index(unsigned char *img, size_t len, __u32 gpu_id)
{
	__u32 i;

	for (i = 0; i < KFD_TEST_MAX_GPUS; i++)
		if (criu_img_gpu_id(img, len, i) == gpu_id)
			return i;
	return -1;
}

/* The mapped_gpus mask the image gives buffer @b */
static __u64 image_gpu_mask(const struct rocm_process *p, const struct rbuf *b,
			    unsigned char *img, size_t len)
{
	__u32 ids[KFD_TEST_MAX_GPUS], n = buf_gpu_ids(p, b, ids), i;
	__u64 mask = 0;
	int index;

	for (i = 0; i < n; i++) {
		index = image_gpu_index(img, len, ids[i]);
		if (index >= 0)
			mask |= 1ULL << index;
	}
	return mask;
}

/* The record of @type whose @off field (32 bits) is @val */
static bool image_find_u32(unsigned char *img, size_t len, __u32 type,
			   size_t off, __u32 val, struct criu_img_rec *rec)
{
	int n;

	for (n = 0; criu_img_find(img, len, type, n, rec); n++)
		if (rec->length >= off + 4 &&
		    criu_img_le32(rec->payload + off) == val)
			return true;
	return false;
}

static bool image_find_bo(unsigned char *img, size_t len, __u64 va,
			  struct criu_img_rec *rec)
{
	int n;

	for (n = 0; criu_img_find(img, len, CRIU_IMG_REC_BO, n, rec); n++)
		if (criu_img_le64(rec->payload + CRIU_IMG_BO_VA) == va)
			return true;
	return false;
}

static void check_image_bos(struct __test_metadata *_metadata,
			    const struct rocm_process *p, unsigned char *img,
			    size_t len)
{
	const struct rbuf *b;
	struct criu_img_rec r;
	int i;

	for (i = 0; i < p->nr_bufs; i++) {
		b = &p->bufs[i];
		if (!b->present)
			continue;
		ASSERT_TRUE(image_find_bo(img, len, b->va, &r))
			TH_LOG("no BO record of the %s buffer", b->what);
		EXPECT_EQ(b->size, criu_img_le64(r.payload + CRIU_IMG_BO_SIZE))
			TH_LOG("%s buffer: size", b->what);
		EXPECT_EQ(b->flags, criu_img_le32(r.payload + CRIU_IMG_BO_FLAGS))
			TH_LOG("%s buffer: flags", b->what);
		EXPECT_EQ((__u32)b->handle,
			  criu_img_le32(r.payload + CRIU_IMG_BO_HANDLE))
			TH_LOG("%s buffer: handle", b->what);
		EXPECT_EQ(image_gpu_mask(p, b, img, len),
			  criu_img_le64(r.payload + CRIU_IMG_BO_MAPPED_GPUS))
			TH_LOG("%s buffer: GPUs it is mapped on", b->what);
	}
}

/* Bytes of [@va, @va + @size) that SVM records with the CWSR flags cover */
static __u64 svm_cwsr_coverage(unsigned char *img, size_t len, __u64 va,
			       __u64 size)
{
	__u64 start, end, covered = 0;
	struct criu_img_rec r;
	int n;

	for (n = 0; criu_img_find(img, len, CRIU_IMG_REC_SVM_RANGE, n, &r);
	     n++) {
		start = criu_img_le64(r.payload + CRIU_IMG_SVM_START);
		end = start + criu_img_le64(r.payload + CRIU_IMG_SVM_SIZE);
		if ((criu_img_le32(r.payload + CRIU_IMG_SVM_FLAGS) &
		     CWSR_SVM_FLAGS) != CWSR_SVM_FLAGS ||
		    !criu_img_le64(r.payload + CRIU_IMG_SVM_ACCESS))
			continue;
		start = start > va ? start : va;
		end = end < va + size ? end : va + size;
		if (end > start)
			covered += end - start;
	}
	return covered;
}

static void check_image_queue(struct __test_metadata *_metadata,
			      const struct rocm_process *p,
			      const struct rqueue *q, unsigned char *img,
			      size_t len)
{
	bool aql = q->type == KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
	__u64 eop = q->eop >= 0 ? p->bufs[q->eop].va : 0;
	struct criu_img_rec r;
	__u32 type;

	ASSERT_TRUE(image_find_u32(img, len, CRIU_IMG_REC_QUEUE,
				   CRIU_IMG_QUEUE_ID, q->queue_id, &r))
		TH_LOG("no record of the %s queue", q->what);
	type = criu_img_le32(r.payload + CRIU_IMG_QUEUE_TYPE);
	EXPECT_EQ(p->bufs[q->ring].va,
		  criu_img_le64(r.payload + CRIU_IMG_QUEUE_RING_BASE));
	EXPECT_EQ(q->rptr, criu_img_le64(r.payload + CRIU_IMG_QUEUE_RPTR));
	EXPECT_EQ(q->wptr, criu_img_le64(r.payload + CRIU_IMG_QUEUE_WPTR));
	EXPECT_EQ(q->ring_size,
		  criu_img_le32(r.payload + CRIU_IMG_QUEUE_RING_SIZE));
	EXPECT_EQ(q->priority,
		  criu_img_le32(r.payload + CRIU_IMG_QUEUE_PRIORITY));
	EXPECT_EQ(0, criu_img_le32(r.payload + CRIU_IMG_QUEUE_GWS));
	EXPECT_EQ(0, criu_img_le32(r.payload + CRIU_IMG_QUEUE_NUM_CU_MASK));
	if (aql) {
		EXPECT_EQ(KFD_IOC_QUEUE_TYPE_COMPUTE, type);
		EXPECT_EQ(1, criu_img_le32(r.payload + CRIU_IMG_QUEUE_FORMAT));
		EXPECT_EQ(eop, criu_img_le64(r.payload + CRIU_IMG_QUEUE_EOP_BASE));
		EXPECT_EQ(q->cwsr_va,
			  criu_img_le64(r.payload + CRIU_IMG_QUEUE_CWSR_BASE));
		return;
	}
	/*
	 * 6.12 already made a by-engine queue SDMA or SDMA_XGMI, with an
	 * sdma_id that pins the engine; that the engine comes back shows in
	 * the second dump.
	 */
	EXPECT_TRUE(type == KFD_IOC_QUEUE_TYPE_SDMA ||
		    type == KFD_IOC_QUEUE_TYPE_SDMA_XGMI)
		TH_LOG("SDMA queue of type %u", type);
}

static void check_image_queues(struct __test_metadata *_metadata,
			       const struct rocm_process *p,
			       unsigned char *img, size_t len)
{
	const struct rqueue *q;
	int i;

	for (i = 0; i < p->nr_queues; i++) {
		q = &p->queues[i];
		check_image_queue(_metadata, p, q, img, len);
		if (q->type == KFD_IOC_QUEUE_TYPE_COMPUTE_AQL && q->cwsr < 0)
			EXPECT_EQ(p->gpus[q->gpu].cwsr.area_size,
				  svm_cwsr_coverage(img, len, q->cwsr_va,
						    p->gpus[q->gpu].cwsr.area_size))
				TH_LOG("the %s queue's CWSR area is not in SVM ranges",
				       q->what);
	}
}

static void check_image_process(struct __test_metadata *_metadata,
				const struct rocm_process *p,
				unsigned char *img, size_t len)
{
	__u32 state = p->runtime_enabled ? DEBUG_RUNTIME_STATE_ENABLED :
			DEBUG_RUNTIME_STATE_DISABLED;
	const struct revent *e;
	struct criu_img_rec r;
	int i;

	ASSERT_TRUE(criu_img_find(img, len, CRIU_IMG_REC_PROCESS, 0, &r));
	EXPECT_EQ(state, criu_img_le32(r.payload + CRIU_IMG_PROC_RUNTIME_STATE));
	if (p->runtime_enabled) {
		EXPECT_EQ(p->r_debug,
			  criu_img_le64(r.payload + CRIU_IMG_PROC_R_DEBUG));
		EXPECT_EQ(0, criu_img_le32(r.payload + CRIU_IMG_PROC_TTMP_SETUP));
	}
	for (i = 0; i < p->nr_events; i++) {
		e = &p->events[i];
		ASSERT_TRUE(image_find_u32(img, len, CRIU_IMG_REC_EVENT,
					   CRIU_IMG_EVENT_ID, e->id, &r))
			TH_LOG("no record of event %u", e->id);
		EXPECT_EQ(e->type, criu_img_le32(r.payload + CRIU_IMG_EVENT_TYPE));
		EXPECT_EQ(e->auto_reset,
			  criu_img_le32(r.payload + CRIU_IMG_EVENT_AUTO_RESET));
	}
}

static void check_image_trap_handlers(struct __test_metadata *_metadata,
				      const struct rocm_process *p,
				      unsigned char *img, size_t len)
{
	const struct rgpu *g;
	struct criu_img_rec r;
	int i, index;

	for (i = 0; i < p->nr_gpus; i++) {
		g = &p->gpus[i];
		index = image_gpu_index(img, len, g->gpu.gpu_id);
		ASSERT_LE(0, index) TH_LOG("no GPU record of %#x", g->gpu.gpu_id);
		ASSERT_TRUE(image_find_u32(img, len, CRIU_IMG_REC_TRAP_HANDLER,
					   CRIU_IMG_TRAP_GPU_INDEX, index, &r))
			TH_LOG("GPU %#x: no trap handler record", g->gpu.gpu_id);
		EXPECT_EQ(p->bufs[g->tba].va,
			  criu_img_le64(r.payload + CRIU_IMG_TRAP_TBA));
		EXPECT_EQ(g->tma >= 0 ? p->bufs[g->tma].va : 0,
			  criu_img_le64(r.payload + CRIU_IMG_TRAP_TMA));
	}
}

/* The image of the dumpee holds every object the process built */
static void check_dumped_image(struct __test_metadata *_metadata,
			       const struct rocm_process *p, int image)
{
	unsigned char *img;
	size_t len;

	img = criu_img_load(image, &len);
	ASSERT_NE(NULL, img);
	check_image_process(_metadata, p, img, len);
	check_image_bos(_metadata, p, img, len);
	check_image_queues(_metadata, p, img, len);
	check_image_trap_handlers(_metadata, p, img, len);
	free(img);
}

/* ----- Two images compared but for what changes by design ----- */

/**
 * struct volatile_field - bytes of a record that change by design between
 *	a dump and the dump of its restore
 * @type: the record type
 * @off: where the field starts in the payload
 * @len: its bytes; 0: to the end of the payload, whose length may differ
 */
struct volatile_field {
	__u32 type;
	__u32 off;
	__u32 len;
};

static const struct volatile_field volatile_fields[] = {
	{ CRIU_IMG_REC_EVENT, CRIU_IMG_EVENT_SIGNALED, 4 },
	{ CRIU_IMG_REC_EVENT, CRIU_IMG_EVENT_AGE, 8 },
	{ CRIU_IMG_REC_SIGNAL_PAGE, 0, 0 },
	{ CRIU_IMG_REC_BO, CRIU_IMG_BO_MMAP_OFFSET, 8 },
	{ CRIU_IMG_REC_BO_DATA, CRIU_IMG_BO_DATA_HDR, 0 },
	/* data_len, the dynamic MQD fields and the control stack */
	{ CRIU_IMG_REC_QUEUE_STATE, CRIU_IMG_QSTATE_DATA_LEN, 0 },
	{ CRIU_IMG_REC_END, CRIU_IMG_END_PAYLOAD_BYTES, 8 },
};

/*
 * What identifies a record: an event by its id, a BO by GPU index and
 * handle, a contents chunk by BO and offset, a queue by its id, a queue
 * state by queue and XCC, an SVM range by its start, a trap handler by
 * its GPU; any other record by its place among those of its type (@nth)
 */
static void rec_key(const struct criu_img_rec *r, __u64 nth, __u64 *k1,
		    __u64 *k2)
{
	const unsigned char *pl = r->payload;

	*k1 = nth;
	*k2 = 0;
	switch (r->type) {
	case CRIU_IMG_REC_EVENT:
		*k1 = criu_img_le32(pl + CRIU_IMG_EVENT_ID);
		break;
	case CRIU_IMG_REC_BO:
		*k1 = criu_img_le32(pl + CRIU_IMG_BO_GPU_INDEX);
		*k2 = criu_img_le32(pl + CRIU_IMG_BO_HANDLE);
		break;
	case CRIU_IMG_REC_BO_DATA:
		*k1 = criu_img_le32(pl + CRIU_IMG_BO_DATA_INDEX);
		*k2 = criu_img_le64(pl + CRIU_IMG_BO_DATA_OFFSET);
		break;
	case CRIU_IMG_REC_QUEUE:
		*k1 = criu_img_le32(pl + CRIU_IMG_QUEUE_ID);
		break;
	case CRIU_IMG_REC_QUEUE_STATE:
		*k1 = criu_img_le32(pl + CRIU_IMG_QSTATE_QUEUE_INDEX);
		*k2 = criu_img_le32(pl + CRIU_IMG_QSTATE_XCC);
		break;
	case CRIU_IMG_REC_SVM_RANGE:
		*k1 = criu_img_le64(pl + CRIU_IMG_SVM_START);
		break;
	case CRIU_IMG_REC_TRAP_HANDLER:
		*k1 = criu_img_le32(pl + CRIU_IMG_TRAP_GPU_INDEX);
		break;
	}
}

/* Finds the record of @img that pairs with @a, the @nth of its type */
static bool find_partner(unsigned char *img, size_t len,
			 const struct criu_img_rec *a, __u64 nth,
			 struct criu_img_rec *b)
{
	__u64 ka1, ka2, kb1, kb2, seen = 0;
	int n;

	rec_key(a, nth, &ka1, &ka2);
	for (n = 0; criu_img_find(img, len, a->type, n, b); n++) {
		rec_key(b, seen++, &kb1, &kb2);
		if (ka1 == kb1 && ka2 == kb2)
			return true;
	}
	return false;
}

/*
 * Whether paired records differ outside their volatile fields; a field
 * that runs to the end lets the lengths differ
 */
static bool records_differ(const struct criu_img_rec *a,
			   const struct criu_img_rec *b)
{
	__u32 len = a->length, i, j, end;
	bool to_end = false;

	for (i = 0; i < ARRAY_SIZE(volatile_fields); i++)
		if (volatile_fields[i].type == a->type &&
		    !volatile_fields[i].len) {
			to_end = true;
			len = volatile_fields[i].off;
		}
	if (to_end ? a->length < len || b->length < len :
		     a->length != b->length)
		return true;
	for (j = 0; j < len; j++) {
		if (a->payload[j] == b->payload[j])
			continue;
		for (i = 0; i < ARRAY_SIZE(volatile_fields); i++) {
			end = volatile_fields[i].off + volatile_fields[i].len;
			if (volatile_fields[i].type == a->type &&
			    j >= volatile_fields[i].off && j < end)
				break;
		}
		if (i == ARRAY_SIZE(volatile_fields))
			return true;
	}
	return false;
}

static int count_records(unsigned char *img, size_t len)
{
	struct criu_img_rec r;
	int n = 0;
	bool ok;

	for (ok = criu_img_first(img, len, &r); ok;
	     ok = criu_img_next(img, len, &r))
		n++;
	return n;
}

/*
 * The number of differences between two images outside what changes by
 * design, each printed with its record type and offset
 */
static int compare_images(unsigned char *a, size_t a_len, unsigned char *b,
			  size_t b_len)
{
	__u64 nth[CRIU_IMG_REC_TRAP_HANDLER + 2] = { 0 };
	struct criu_img_rec ra, rb;
	int differences = 0;
	__u32 t;
	bool ok;

	if (memcmp(a, b, CRIU_IMG_HEADER_RELEASE)) {
		fprintf(stderr, "# images: headers differ\n");
		differences++;
	}
	for (ok = criu_img_first(a, a_len, &ra); ok;
	     ok = criu_img_next(a, a_len, &ra)) {
		t = ra.type < ARRAY_SIZE(nth) ? ra.type : ARRAY_SIZE(nth) - 1;
		if (!find_partner(b, b_len, &ra, nth[t]++, &rb)) {
			fprintf(stderr, "# images: record %u at %zu has no partner\n",
				ra.type, ra.off);
			differences++;
		} else if (records_differ(&ra, &rb)) {
			fprintf(stderr, "# images: record %u at %zu differs from the one at %zu\n",
				ra.type, ra.off, rb.off);
			differences++;
		}
	}
	if (count_records(a, a_len) != count_records(b, b_len)) {
		fprintf(stderr, "# images: %d records, then %d\n",
			count_records(a, a_len), count_records(b, b_len));
		differences++;
	}
	return differences;
}

/* ----- The restored process ----- */

/*
 * What CRIU does before RESUME: the process's mappings of its buffers
 * come back at their addresses, at the mmap offsets RESTORE gave
 */
static void map_restored_bufs(int kfd, const int *drm,
			      const struct rocm_process *p,
			      const struct kfd_criu_offset_map *offsets,
			      __u32 n)
{
	const struct rbuf *b;
	__u64 offset;
	int i;

	for (i = 0; i < p->nr_bufs; i++) {
		b = &p->bufs[i];
		if (!b->present)
			continue;
		offset = criu_moved_offset(offsets, n,
					   p->gpus[b->owner].gpu.gpu_id,
					   b->mmap_offset);
		must(cpu_map_buf(kfd, drm[b->owner], b, offset), b->what);
	}
}

/*
 * The restored process dumps itself (a process may use its own file) and
 * compares that image with the one it was restored from
 */
static void check_redump(int kfd, const struct rocm_restore *ctx)
{
	struct kfd_ioctl_criu_args args;
	unsigned char *orig, *re;
	size_t orig_len, re_len;
	const char *op;
	__u64 size;
	pid_t pid;
	int fd, differences;

	fd = memfd_create("kfd-criu-rocm-redump", MFD_CLOEXEC);
	CHILD_CHECK(fd >= 0);
	must(criu_dump(kfd, fd, &pid, &size, &op), "second dump");
	must(criu_image_op(kfd, KFD_CRIU_OP_UNPAUSE, -1, &args), "UNPAUSE");
	orig = criu_img_load(ctx->image, &orig_len);
	re = criu_img_load(fd, &re_len);
	CHILD_CHECK(orig && re && re_len == size);
	differences = compare_images(orig, orig_len, re, re_len);
	if (differences) {
		fprintf(stderr, "# the second dump differs in %d records\n",
			differences);
		_exit(1);
	}
	free(orig);
	free(re);
	close(fd);
}

/* The event page's slots are the dumped ones: the mark, unsignaled events */
static void check_event_page(const struct rocm_process *p)
{
	const __u64 *slots = (const __u64 *)(uintptr_t)p->bufs[p->event_page].va;
	const struct revent *e;
	int i;

	if (GPU_LOAD(&slots[MARK_SLOT]) != EVENT_PAGE_MARK)
		must(-EIO, "the event page lost its contents");
	for (i = 0; i < p->nr_events; i++) {
		e = &p->events[i];
		if (e->type == KFD_IOC_EVENT_SIGNAL &&
		    GPU_LOAD(&slots[e->slot]) != UNSIGNALED_SLOT)
			must(-EIO, "an event slot is not unsignaled");
	}
}

/*
 * hipMemcpy D2H through the restored SDMA queue: the VRAM block still
 * holds what the first process copied in, and the queue goes on from
 * its dumped write pointer
 */
static void check_memcpy_back(struct rocm_process *p, int gi)
{
	const struct rgpu *g = &p->gpus[gi];
	struct rqueue *q = &p->queues[g->sdma];
	__u64 staging = p->bufs[g->staging].va;
	struct sdma_cpu s;

	sdma_cpu_view(p, q, &s);
	if (GPU_LOAD(s.wptr) != q->next_wptr)
		must(-EIO, "the SDMA write pointer is not the dumped one");
	if (g->large_bar && memcpy_mismatch(p->bufs[g->vram_block].va) >= 0)
		must(-EIO, "the VRAM block lost its contents");
	memset((void *)(uintptr_t)staging, 0, MEMCPY_SIZE);
	must(sdma_copy(&s, p->bufs[g->vram_block].va, staging, RESTORE_FENCE),
	     "copy back through the restored SDMA queue");
	if (memcpy_mismatch(staging) >= 0)
		must(-EIO, "the VRAM block copied back differs");
}

static void destroy_queues(int kfd, const struct rocm_process *p)
{
	struct kfd_ioctl_destroy_queue_args args;
	int i;

	for (i = 0; i < p->nr_queues; i++) {
		args.queue_id = p->queues[i].queue_id;
		must(kfd_ioctl(kfd, AMDKFD_IOC_DESTROY_QUEUE, &args),
		     "DESTROY_QUEUE by the dumped id");
	}
}

/*
 * Gets the process's memory as CRIU would, restores the image with a GPU
 * map of every GPU, maps the buffers again, waits for RESUME, then
 * checks the second dump and uses what came back.
 */
static void restoree_main(int sock, void *arg)
{
	const struct rocm_restore *ctx = arg;
	struct rocm_process *p = ctx->p;
	struct kfd_criu_offset_map offsets[OFFSETS_PER_GPU * KFD_TEST_MAX_GPUS];
	struct kfd_criu_gpu_map map[KFD_TEST_MAX_GPUS] = { 0 };
	int kfd = kfd_open(), drm[KFD_TEST_MAX_GPUS], i;
	struct kfd_ioctl_criu_args args;

	CHILD_CHECK(kfd >= 0);
	fill_queue_memory(p);
	for (i = 0; i < p->nr_gpus; i++) {
		drm[i] = open_render_node(&p->gpus[i].gpu);
		CHILD_CHECK(drm[i] >= 0);
		map[i].local_gpu_id = p->gpus[i].gpu.gpu_id;
		map[i].drm_fd = drm[i];
	}
	must(criu_restore_mapped(kfd, ctx->image, map, p->nr_gpus, offsets,
				 OFFSETS_PER_GPU * p->nr_gpus, &args),
	     "RESTORE");
	map_restored_bufs(kfd, drm, p, offsets, args.num_offset_map);
	sync_send(sock);
	sync_wait(sock);	/* resumed */
	check_redump(kfd, ctx);
	check_event_page(p);
	for (i = 0; i < p->nr_gpus; i++)
		if (p->gpus[i].working)
			check_memcpy_back(p, i);
	destroy_queues(kfd, p);
	_exit(0);
}

/* ----- The test ----- */

/*
 * Dumps a dumpee of @p into a memfd, which it returns at its start; @p
 * gets the ids and handles the dumpee was given
 */
static int dump_rocm_process(struct __test_metadata *_metadata,
			     struct rocm_process *p)
{
	struct kfd_ioctl_criu_args args;
	struct kfd_dumpee d;
	const char *op = "";
	__u64 size = 0;
	pid_t pid = 0;
	int image, ret;

	image = memfd_create("kfd-criu-rocm-image", MFD_CLOEXEC);
	ASSERT_LE(0, image);
	if (kfd_dumpee_start(&d, dumpee_main, p, p, sizeof(*p))) {
		/* The child ended: with a failure, or without handing its fd */
		ret = kfd_dumpee_finish(&d);
		ASSERT_EQ(0, ret) TH_LOG("the dumpee failed to build its state");
		ASSERT_TRUE(false) TH_LOG("no file from the dumpee, or no seize");
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

/* VRAM that @gpu_id can still give a fresh process, or 0 */
static __u64 available_vram(__u32 gpu_id)
{
	struct kfd_ioctl_get_available_memory_args args = { .gpu_id = gpu_id };
	int kfd = kfd_open(), ret;

	if (kfd < 0)
		return 0;
	ret = kfd_ioctl(kfd, AMDKFD_IOC_AVAILABLE_MEMORY, &args);
	close(kfd);
	return ret ? 0 : args.available;
}

FIXTURE(rocm) {
	struct kfd_test_gpu gpus[KFD_TEST_MAX_GPUS];
	int nr_gpus;
	__u64 va_base;
};

/**
 * struct rocm_variant - the ROCm versions and GPUs the test models
 * @working_gpus: GPUs with a hipMalloc, a launch and a hipMemcpy
 * @cwsr_userptr: CWSR areas as userptr buffers, as ROCm before 5.3 or a
 *	kernel without the SVM API has them
 * @scratch_reserve: ROCm 6.1's 140 MiB scratch reserve, where VRAM
 *	allows it
 * @no_runtime_enable: ROCm 5.2: no RUNTIME_ENABLE, a trap memory page
 * @plain_sdma: a plain SDMA blit queue, as ROCm 6.2 and before create
 */
struct rocm_variant {
	int working_gpus;
	bool cwsr_userptr;
	bool scratch_reserve;
	bool no_runtime_enable;
	bool plain_sdma;
};

FIXTURE_VARIANT(rocm) {
	struct rocm_variant v;
};

FIXTURE_VARIANT_ADD(rocm, hip_process) {
	.v = { .working_gpus = 1 },
};

FIXTURE_VARIANT_ADD(rocm, cwsr_userptr) {
	.v = { .working_gpus = 1, .cwsr_userptr = true },
};

FIXTURE_VARIANT_ADD(rocm, scratch_reserve) {
	.v = { .working_gpus = 1, .scratch_reserve = true },
};

FIXTURE_VARIANT_ADD(rocm, two_working_gpus) {
	.v = { .working_gpus = 2 },
};

FIXTURE_VARIANT_ADD(rocm, rocm_5_2_no_runtime_enable) {
	.v = { .working_gpus = 1, .no_runtime_enable = true },
};

FIXTURE_VARIANT_ADD(rocm, plain_sdma) {
	.v = { .working_gpus = 1, .plain_sdma = true },
};

FIXTURE_SETUP(rocm)
{
	size_t span = GPU_SPAN * KFD_TEST_MAX_GPUS;
	char *base;

	self->nr_gpus = have_kfd() ?
		kfd_topology_gpus(self->gpus, KFD_TEST_MAX_GPUS) : 0;
	if (!self->nr_gpus)
		SKIP(return, NO_GPU_REASON);
	/* The apertures; no CPU mapping of the test takes them */
	base = mmap(NULL, span + VA_ALIGN, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, base);
	self->va_base = kfd_align((uintptr_t)base, VA_ALIGN);
}

FIXTURE_TEARDOWN(rocm)
{
}

/* Whether @g can take a working GPU's part; NULL, or why not */
static const char *work_unsupported(const struct rocm_process *p,
				    const struct rgpu *g)
{
	if (!kfd_gpu_prop_or(&g->gpu, "num_sdma_engines", 0))
		return "a working GPU has no SDMA engine: ROCr would blit with a kernel";
	if (p->scratch_reserve &&
	    available_vram(g->gpu.gpu_id) <= 8 * SCRATCH_RESERVE_SIZE)
		return "VRAM too small: ROCr reserves no scratch";
	return NULL;
}

/* The visible GPUs of GFX9 or later, each at its share of the apertures */
static void plan_gpus(struct __test_metadata *_metadata,
		      const struct kfd_test_gpu *gpus, int nr_gpus,
		      __u64 va_base, bool plain_sdma, struct rocm_process *p)
{
	const char *why;
	int i;

	for (i = 0; i < nr_gpus; i++) {
		why = plan_gpu(_metadata, &gpus[i],
			       va_base + p->nr_gpus * GPU_SPAN, plain_sdma,
			       &p->gpus[p->nr_gpus]);
		if (why)
			TH_LOG("GPU %#x left out: %s", gpus[i].gpu_id, why);
		else
			p->nr_gpus++;
	}
}

/*
 * Plans the process of @variant; NULL, or why the machine cannot run it
 */
static const char *plan_process(struct __test_metadata *_metadata,
				const struct kfd_test_gpu *gpus, int nr_gpus,
				__u64 va_base, const struct rocm_variant *variant,
				struct rocm_process *p)
{
	const char *why;
	int i;

	p->r_debug = (uintptr_t)r_debug_stub;
	p->cwsr_userptr = variant->cwsr_userptr;
	p->scratch_reserve = variant->scratch_reserve;
	plan_gpus(_metadata, gpus, nr_gpus, va_base, variant->plain_sdma, p);
	if (p->nr_gpus < variant->working_gpus)
		return variant->working_gpus > 1 ?
		       "fewer than two GPUs of GFX9 or later with CWSR sizes" :
		       "no GPU of GFX9 or later with CWSR sizes";
	p->runtime_enabled = !variant->no_runtime_enable;
	for (i = 0; i < p->nr_gpus; i++)
		p->runtime_enabled &= p->gpus[i].debug_firmware;
	for (i = 0; i < variant->working_gpus; i++) {
		why = work_unsupported(p, &p->gpus[i]);
		if (why)
			return why;
	}
	plan_init_bufs(p);
	for (i = 0; i < variant->working_gpus; i++)
		plan_work(p, i);
	return NULL;
}

/*
 * The state ROCm builds for hsa_init, hipMalloc, a launch and hipMemcpy
 * is in the image, comes back whole (a second dump is the first, but for
 * what changes by design), and works: the event page keeps its slots,
 * the restored SDMA queue copies the VRAM block back.
 */
TEST_F_TIMEOUT(rocm, round_trip, TEST_SECONDS)
{
	struct rocm_process *p = calloc(1, sizeof(*p));
	struct rocm_restore ctx;
	int resumed, status;
	const char *why;

	ASSERT_NE(NULL, p);
	why = plan_process(_metadata, self->gpus, self->nr_gpus,
			   self->va_base, &variant->v, p);
	if (why)
		SKIP(free(p); return, "%s", why);
	ASSERT_EQ(0, map_host_memory(p)) TH_LOG("userptr memory: %s",
						strerror(errno));
	fill_staging(p);
	ctx.p = p;
	ctx.image = dump_rocm_process(_metadata, p);
	check_dumped_image(_metadata, p, ctx.image);
	status = kfd_restoree_run(restoree_main, &ctx, &resumed);
	EXPECT_EQ(0, resumed) TH_LOG("RESUME: %s", resumed == 1 ?
				     "not reached, the restore failed" :
				     strerror(-resumed));
	EXPECT_EQ(0, status) TH_LOG("the restored process failed");
	close(ctx.image);
	free(p);
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
