// SPDX-License-Identifier: GPL-2.0 OR MIT

/**
 * DOC: KUnit twin of a ROCm process
 *
 * Suite kfd_criu_rocm builds on two fake GPUs the KFD state that ROCm
 * builds for hsa_init, one hipMalloc, one kernel launch and one hipMemcpy
 * (each step below cites the ROCm source it models), and runs it through
 * the ops: CHECKPOINT (kfd_criu_dump_supported_locked(),
 * kfd_criu_snapshot_locked(), kfd_criu_write_image() into a memory
 * stream), RESTORE into a fresh process on the same GPUs
 * (kfd_criu_read_metadata(), kfd_criu_validate_image(),
 * kfd_criu_restore_locked(): kfd_criu_op_restore() without the file and
 * the address space reference), RESUME (kfd_criu_resume_locked()), and a
 * second CHECKPOINT after the eviction PROCESS_INFO makes. The two images
 * must be equal field by field but for the fields that change by design
 * (rt_expect_same_images()), and the restored process is checked
 * directly: its event page, scratch VAs, SDMA engine and slot, BO
 * contents.
 *
 * GPU 0 is a GFX 9.4.3 with two XCCs (an MI300: its SDMA blit queue is
 * created by engine id), GPU 1 a GFX10.3 (a Navi21: its AQL queues have
 * a VRAM EOP buffer and a CWSR area in an SVM range). What needs a GPU
 * goes to the fakes of the other test files through the seams they
 * publish (kfd_criu_test_seams.h): the BOs to kfd_criu_fake_gpu.h, the
 * queues to the fake queue manager of kfd_criu_queues_test.c, the VM
 * acquisition and the topology to fakes here, and SET_ATTR to a fake
 * here that inserts the range. Where this differs from the real ops: the
 * stream is memory, not a file; the GPU map's render node fds are never
 * opened; the userptr worker that RESUME schedules is idle, so the
 * restored queues stay evicted, as the fake evictions count them.
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/mman.h>
#include <linux/sched/mm.h>

#include "kfd_criu_fake_gpu.h"
#include "kfd_criu_test_seams.h"
#include "../kfd_device_queue_manager.h"
#include "../kfd_mqd_manager.h"
#include "../kfd_svm.h"
#include "../kfd_topology.h"

#define RT_GPUS		2
#define RT_GPU_ID	0x4100		/* the fake queue manager's GPUs */
#define RT_MI300	0		/* GFX 9.4.3, two XCCs */
#define RT_NAVI		1		/* GFX10.3 */

/* ROCm's VA apertures, inside GPUVM, away from the test's own mappings */
#define RT_FINE		0x200000000000ULL	/* dgpu_alt_aperture */
#define RT_COARSE	0x210000000000ULL	/* dgpu_aperture, VRAM */
#define RT_SCRATCH	0x220000000000ULL	/* 64 KiB aligned */

/* KFD_IOC_ALLOC_MEM_FLAGS_* of ROCm's allocations */
#define RT_MMIO		0x94000010U	/* MMIO_REMAP|WRITABLE|COHERENT|NO_SUBST */
#define RT_DOORBELL	0x94000008U	/* DOORBELL|WRITABLE|COHERENT|NO_SUBST */
#define RT_GTT		0xD6000002U	/* GTT|W|X|COHERENT|UNCACHED|NO_SUBST */
#define RT_USERPTR	0xD6000004U	/* USERPTR|W|X|COHERENT|UNCACHED|NO_SUBST */
#define RT_VRAM		0xD0000001U	/* VRAM|W|X|NO_SUBST */

#define RT_CWSR		0x9000U		/* the GPUs' cwsr_size */
#define RT_CTL		0x2000U		/* their ctl_stack_size */
#define RT_DBG		0x1000U		/* debug_memory_size, one XCC */
#define RT_EOP		0x1000U
#define RT_SDMA_DB	0x120U		/* SDMA engine 1, queue 0 */
#define RT_SDMA_ID	1		/* that slot */
#define RT_SDMA_ENGINE	1		/* D2H on gfx94x, ROCm >= 6.4 */

/**
 * struct rt_bo - a BO the ROCm process allocates
 * @gpu: index of the GPU it is allocated on
 * @handle: its handle in that GPU's idr
 * @va: its GPU VA (the CPU VA too: ROCm maps BOs at their GPU VA)
 * @size: bytes
 * @flags: KFD_IOC_ALLOC_MEM_FLAGS_*
 * @mapped: BIT(i) for each GPU it is mapped on
 */
struct rt_bo {
	u32 gpu;
	int handle;
	u64 va;
	u64 size;
	u32 flags;
	u64 mapped;
};

/* Handles of the BOs the test looks at again */
#define RT_H_EVENTS	3	/* GPU 0 */
#define RT_H_HIPMALLOC	4	/* GPU 0 */

static const struct rt_bo rt_bos[] = {
	/*
	 * B6: the MMIO remap page of every GPU, mapped on the GPU
	 * (ROCT src/fmm.c, fmm_init_process_apertures() -> map_mmio()).
	 */
	{ RT_MI300, 1, RT_FINE, SZ_4K, RT_MMIO, 0x1 },
	{ RT_NAVI, 1, RT_FINE + SZ_4M, SZ_4K, RT_MMIO, 0x2 },
	/*
	 * E1: the event page, 32 KiB of GTT on the first GPU, mapped on all
	 * GPUs (ROCT src/events.c, hsaKmtCreateEvent(), first event on a
	 * dGPU; ROCr runtime.cpp, Runtime::BindErrorHandlers()).
	 */
	{ RT_MI300, RT_H_EVENTS, RT_FINE + SZ_64K, SZ_32K, RT_GTT, 0x3 },
	/*
	 * G: hipMalloc's 2 MiB VRAM block, no PUBLIC (small BAR), mapped on
	 * its GPU (clr rocdevice.cpp, Device::deviceLocalAlloc(); ROCr
	 * MemoryRegion::AllocateImpl()).
	 */
	{ RT_MI300, RT_H_HIPMALLOC, RT_COARSE, SZ_2M, RT_VRAM, 0x1 },
	/*
	 * F2: the trap handler's TBA page, a userptr BO from the kernarg
	 * pool, mapped on all GPUs (ROCr amd_gpu_agent.cpp,
	 * GpuAgent::BindTrapHandler()).
	 */
	{ RT_MI300, 5, RT_FINE + SZ_128K, SZ_4K, RT_USERPTR, 0x3 },
	{ RT_NAVI, 2, RT_FINE + SZ_4M + SZ_128K, SZ_4K, RT_USERPTR, 0x3 },
	/*
	 * H3g: the doorbell page of each GPU with a queue, mapped on it
	 * (ROCT src/queues.c, map_doorbell_dgpu()).
	 */
	{ RT_MI300, 6, RT_FINE + SZ_1M, SZ_8K, RT_DOORBELL, 0x1 },
	{ RT_NAVI, 3, RT_FINE + SZ_4M + SZ_1M, SZ_8K, RT_DOORBELL, 0x2 },
	/*
	 * I2: the SDMA blit queue: a 1 MiB userptr ring mapped on all GPUs
	 * and libhsakmt's GTT queue page holding rptr and wptr (ROCr
	 * amd_blit_sdma.cpp, BlitSdma::Initialize(); ROCT src/queues.c,
	 * hsaKmtCreateQueue()).
	 */
	{ RT_MI300, 7, RT_FINE + SZ_2M, SZ_1M, RT_USERPTR, 0x3 },
	{ RT_MI300, 8, RT_FINE + SZ_2M + SZ_1M, SZ_4K, RT_GTT, 0x1 },
	/*
	 * H3a-d, for ROCr's utility queue (64 packets) and HIP's null
	 * stream (16384 packets): the SharedQueue page (userptr without
	 * MES), the ring (userptr), libhsakmt's struct queue page (GTT) and
	 * the 4 KiB VRAM EOP buffer (ROCr amd_aql_queue.cpp,
	 * AqlQueue::AqlQueue(); ROCT src/queues.c, handle_concrete_asic()).
	 */
	{ RT_NAVI, 4, RT_FINE + SZ_8M, SZ_4K, RT_USERPTR, 0x3 },
	{ RT_NAVI, 5, RT_FINE + SZ_8M + SZ_64K, SZ_4K, RT_USERPTR, 0x3 },
	{ RT_NAVI, 6, RT_FINE + SZ_8M + SZ_128K, SZ_4K, RT_GTT, 0x2 },
	{ RT_NAVI, 7, RT_COARSE + SZ_2M, RT_EOP, RT_VRAM, 0x2 },
	{ RT_NAVI, 8, RT_FINE + SZ_16M, SZ_4K, RT_USERPTR, 0x3 },
	{ RT_NAVI, 9, RT_FINE + SZ_16M + SZ_1M, SZ_1M, RT_USERPTR, 0x3 },
	{ RT_NAVI, 10, RT_FINE + SZ_16M + SZ_2M, SZ_4K, RT_GTT, 0x2 },
	{ RT_NAVI, 11, RT_COARSE + SZ_4M, RT_EOP, RT_VRAM, 0x2 },
};

/* The AQL queues on the Navi: index of the first of their BOs in rt_bos[] */
static const u32 rt_aql_bos[2] = { 10, 14 };
#define RT_SDMA_RING	8
#define RT_SDMA_PAGE	9

/**
 * struct rt_env - the test's fakes and the processes
 * @nodes: the fake GPUs
 * @props: their topology entries
 * @cwsr: the CWSR areas of the two AQL queues, anonymous memory
 * @set_attrs: SET_ATTR calls made
 * @kmaps: kernel maps of GTT BOs made, minus those undone
 * @image_gpu_id: the gpu_id the process sees of each GPU, its topology
 *	gpu_id unless a test makes the source process one restored from
 *	another machine; the GPU map names the GPUs of the image by it
 * @unfenced: the BO a kernel map took the eviction fence off, until
 *	something gives it back (the unmap does not)
 * @evictions: queue evictions made, per GPU, minus restores
 */
struct rt_env {
	struct kfd_node *nodes[RT_GPUS];
	u32 image_gpu_id[RT_GPUS];
	struct kfd_node_properties props[RT_GPUS];
	unsigned long cwsr[2];
	unsigned int set_attrs;
	int kmaps;
	struct kgd_mem *unfenced;
	int evictions[RT_GPUS];
};

static struct rt_env *rt;

static int rt_gpu_of(const struct kfd_node *node)
{
	u32 i;

	for (i = 0; i < RT_GPUS; i++)
		if (rt->nodes[i] == node)
			return i;
	return -1;
}

static const struct kfd_node_properties *rt_node_props(struct kfd_node *node)
{
	int i = rt_gpu_of(node);

	return i < 0 ? NULL : &rt->props[i];
}

static void rt_idle_work(struct work_struct *work)
{
}

/*
 * As amdgpu: the first VM of a process creates its process info, with
 * MMU notifications unblocked; the userptr worker that RESUME schedules
 * on it does nothing here. Each VM is a DRM file of its own, which the
 * BO fakes key their mappings by.
 */
static int rt_init_vm(struct kfd_process *p, struct kfd_process_device *pdd,
		      int drm_fd)
{
	struct amdkfd_process_info *info;
	struct drm_file *file;

	if (!p->kgd_process_info) {
		info = kzalloc_obj(*info, GFP_KERNEL);
		if (!info)
			return -ENOMEM;
		mutex_init(&info->lock);
		mutex_init(&info->notifier_lock);
		INIT_DELAYED_WORK(&info->restore_userptr_work, rt_idle_work);
		p->kgd_process_info = info;
	}
	file = kunit_kzalloc(kfd_fake->test, sizeof(*file), GFP_KERNEL);
	if (!file)
		return -ENOMEM;
	file->driver_priv = kfd_fake->fpriv;
	pdd->drm_priv = file;
	return 0;
}

static void rt_release_vm(struct kfd_process *p, struct kfd_process_device *pdd)
{
	pdd->drm_priv = NULL;
}

static int rt_bind_gpu(struct kfd_process *p, struct kfd_process_device *pdd)
{
	pdd->runtime_inuse = true;
	return 0;
}

static void rt_put_gpu(struct kfd_process_device *pdd, bool doorbells,
		       bool runtime_pm)
{
}

/* SET_ATTR of a kept range: it inserts the range with its attributes. */
static int rt_set_attr(struct kfd_process *p, struct mm_struct *mm,
		       const struct kfd_criu_svm_range *r, u32 n,
		       struct kfd_ioctl_svm_attribute *attrs)
{
	struct svm_range *prange;

	rt->set_attrs++;
	prange = kzalloc_obj(*prange, GFP_KERNEL);
	if (!prange)
		return -ENOMEM;
	prange->start = r->start >> PAGE_SHIFT;
	prange->last = ((r->start + r->size) >> PAGE_SHIFT) - 1;
	prange->npages = r->size >> PAGE_SHIFT;
	prange->it_node.start = prange->start;
	prange->it_node.last = prange->last;
	prange->preferred_loc = r->preferred_loc;
	prange->prefetch_loc = r->prefetch_loc;
	prange->flags = r->flags;
	/* svm_range_apply_attrs() keeps at most 0x3F of ROCm's 0xFF */
	prange->granularity = min_t(u32, r->granularity, 0x3f);
	bitmap_from_arr64(prange->bitmap_access, &r->access, MAX_GPU_INSTANCE);
	bitmap_from_arr64(prange->bitmap_aip, &r->access_in_place,
			  MAX_GPU_INSTANCE);
	mutex_lock(&p->svms.lock);
	interval_tree_insert(&prange->it_node, &p->svms.objects);
	list_add_tail(&prange->list, &p->svms.list);
	mutex_unlock(&p->svms.lock);
	return 0;
}

/* The kernel map of the event page BO: the fake BO's memory */
static int rt_map_bo_to_kernel(struct kgd_mem *mem, void **kptr, u64 *size,
			       u32 domain)
{
	struct kfd_fake_bo *fb = kfd_fake_bo_of(mem);

	*kptr = fb->data;
	if (size)
		*size = fb->bo.tbo.base.size;
	rt->kmaps++;
	/* amdgpu pins the BO and takes the process's eviction fence off */
	rt->unfenced = mem;
	return 0;
}

static int rt_fence(struct kgd_mem *mem)
{
	if (rt->unfenced == mem)
		rt->unfenced = NULL;
	return 0;
}

/* The unwind cannot unmap the event page BO: it stays in the process */
static int rt_vm_unmap_keeps_event_page(struct kfd_process_device *pdd,
					struct kgd_mem *mem)
{
	if (mem->va == rt_bos[2].va)
		return -EIO;
	return kfd_fake_vm_unmap(pdd, mem);
}

static void rt_unmap_bo_from_kernel(struct kgd_mem *mem)
{
	rt->kmaps--;
}

/* An event id a restore cannot have: the restore fails after the kmap */
static int rt_event_add_fails(struct file *devkfd, struct kfd_process *p,
			      struct kfd_event *ev, u32 id)
{
	return -ENOSPC;
}

/*
 * The DQM's eviction and restore of a process's queues, which PROCESS_INFO,
 * RESTORE and RESUME call: they count, and mark the queues.
 */
static void rt_mark_queues(struct device_queue_manager *dqm,
			   struct qcm_process_device *qpd)
{
	struct kfd_process_device *pdd = qpd_to_pdd(qpd);
	struct process_queue_node *pqn;
	struct queue *q;

	list_for_each_entry(pqn, &pdd->process->pqm.queues, process_queue_list) {
		q = pqn->q;
		if (!q || q->device != dqm->dev)
			continue;
		q->properties.is_evicted = !!qpd->evicted;
		q->properties.is_active = !qpd->evicted;
	}
}

static int rt_evict_queues(struct device_queue_manager *dqm,
			   struct qcm_process_device *qpd)
{
	qpd->evicted++;
	rt->evictions[rt_gpu_of(dqm->dev)]++;
	rt_mark_queues(dqm, qpd);
	return 0;
}

static int rt_restore_queues(struct device_queue_manager *dqm,
			     struct qcm_process_device *qpd)
{
	if (!qpd->evicted)
		return -EINVAL;
	qpd->evicted--;
	rt->evictions[rt_gpu_of(dqm->dev)]--;
	rt_mark_queues(dqm, qpd);
	return 0;
}

static void rt_stub(struct kunit *test)
{
	const struct kfd_criu_bos_seams *bo = &kfd_criu_bos_seams;
	const struct kfd_criu_gpus_seams *gpu = &kfd_criu_gpus_seams;

	kunit_activate_static_stub(test, bo->on_vm, kfd_fake_on_vm);
	kunit_activate_static_stub(test, bo->userptr, kfd_fake_userptr);
	kunit_activate_static_stub(test, bo->gem_offset, kfd_fake_gem_offset);
	kunit_activate_static_stub(test, bo->alloc, kfd_fake_alloc);
	kunit_activate_static_stub(test, bo->vm_map, kfd_fake_vm_map);
	kunit_activate_static_stub(test, bo->vm_sync, kfd_fake_vm_sync);
	kunit_activate_static_stub(test, bo->tlb_flush, kfd_fake_tlb_flush);
	kunit_activate_static_stub(test, bo->vm_unmap, kfd_fake_vm_unmap);
	kunit_activate_static_stub(test, bo->release, kfd_fake_release);
	kunit_activate_static_stub(test, bo->fence, rt_fence);
	kunit_activate_static_stub(test, kfd_criu_bo_bounce_alloc,
				   kfd_fake_bounce_alloc);
	kunit_activate_static_stub(test, kfd_criu_bo_bounce_free,
				   kfd_fake_bounce_free);
	kunit_activate_static_stub(test, kfd_criu_bo_vram_epoch,
				   kfd_fake_vram_epoch);
	kunit_activate_static_stub(test, kfd_criu_bo_copy, kfd_fake_copy);
	kfd_fake_stub_ioctls(test);
	kunit_activate_static_stub(test, amdgpu_amdkfd_gpuvm_map_bo_to_kernel,
				   rt_map_bo_to_kernel);
	kunit_activate_static_stub(test, amdgpu_amdkfd_gpuvm_unmap_bo_from_kernel,
				   rt_unmap_bo_from_kernel);
	kunit_activate_static_stub(test, gpu->node_props, rt_node_props);
	kunit_activate_static_stub(test, gpu->init_vm, rt_init_vm);
	kunit_activate_static_stub(test, gpu->release_vm, rt_release_vm);
	kunit_activate_static_stub(test, gpu->bind_gpu, rt_bind_gpu);
	kunit_activate_static_stub(test, gpu->put_gpu, rt_put_gpu);
	kunit_activate_static_stub(test, kfd_criu_svm_seams.set_attr,
				   rt_set_attr);
}

/* The fake GPUs, their topology entries and DQM ops, and the test's mm */
static void rt_env_new(struct kunit *test)
{
	struct kfd_node_properties *props;
	struct kfd_node *node;
	u32 i, v;

	rt = kunit_kzalloc(test, sizeof(*rt), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rt);
	kfd_fake_gpus_new(test);
	kfd_fake_user_page_new(test);
	kfd_criu_queues_fakes.fake_new(test);
	for (i = 0; i < RT_GPUS; i++) {
		node = kfd_criu_queues_fakes.node(test, i);
		/* SOC15: 64-bit doorbells, an 8 KiB doorbell page per process */
		node->kfd->device_info.doorbell_size = 8;
		INIT_LIST_HEAD(&node->smi_clients);
		spin_lock_init(&node->smi_lock);
		node->dqm->ops.evict_process_queues = rt_evict_queues;
		node->dqm->ops.restore_process_queues = rt_restore_queues;
		node->local_mem_info.local_mem_size_private = SZ_1G;
		rt->nodes[i] = node;
		rt->image_gpu_id[i] = node->id;
		props = &rt->props[i];
		v = node->adev->ip_versions[GC_HWIP][0];
		props->gfx_target_version = IP_VERSION_MAJ(v) * 10000 +
					    IP_VERSION_MIN(v) * 100 +
					    IP_VERSION_REV(v);
		props->device_id = i ? 0x73bf : 0x74a1;
		props->cwsr_size = RT_CWSR;
		props->ctl_stack_size = RT_CTL;
	}
	rt_stub(test);
}

static void rt_process_release(void *data)
{
	struct kfd_process *p = data;
	struct process_queue_node *pqn, *tmp;
	struct svm_range *prange, *next;
	u32 i;

	list_for_each_entry_safe(pqn, tmp, &p->pqm.queues, process_queue_list)
		kfd_criu_queues_fakes.destroy(p, pqn->q->properties.queue_id);
	kfd_event_free_process(p);
	list_for_each_entry_safe(prange, next, &p->svms.list, list) {
		interval_tree_remove(&prange->it_node, &p->svms.objects);
		list_del(&prange->list);
		kfree(prange);
	}
	kvfree(p->criu_svm);
	for (i = 0; i < p->n_pdds; i++)
		idr_destroy(&p->pdds[i]->alloc_idr);
	if (p->kgd_process_info) {
		struct amdkfd_process_info *info = p->kgd_process_info;

		cancel_delayed_work_sync(&info->restore_userptr_work);
		kfree(info);
	}
}

static unsigned long *rt_bitmap(struct kunit *test)
{
	unsigned long *map;

	map = kunit_kcalloc(test, BITS_TO_LONGS(KFD_MAX_NUM_OF_QUEUES_PER_PROCESS),
			    sizeof(long), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, map);
	return map;
}

/*
 * Phase A: open("/dev/kfd") gives a process a per-GPU data for every GPU
 * (ROCT src/openclose.c, hsaKmtOpenKFD()). A process right after open: no
 * VM, nothing allocated; what RESTORE finds.
 */
static struct kfd_process *rt_open_kfd(struct kunit *test)
{
	struct kfd_process_device *pdd;
	struct kfd_process *p;
	u32 i;

	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	mutex_init(&p->mutex);
	/* The primary KFD process of its mm, with no other context */
	p->context_id = KFD_CONTEXT_ID_PRIMARY;
	ida_init(&p->id_table);
	/* As kfd_create_process() does: event id 0 is never handed out */
	KUNIT_ASSERT_EQ(test, kfd_event_init_process(p), 0);
	mutex_init(&p->svms.lock);
	p->svms.objects = RB_ROOT_CACHED;
	INIT_LIST_HEAD(&p->svms.list);
	INIT_LIST_HEAD(&p->svms.deferred_range_list);
	INIT_WORK(&p->svms.deferred_list_work, rt_idle_work);
	spin_lock_init(&p->svms.deferred_list_lock);
	bitmap_set(p->svms.bitmap_supported, 0, RT_GPUS);
	INIT_LIST_HEAD(&p->pqm.queues);
	p->pqm.process = p;
	p->pqm.queue_slot_bitmap = rt_bitmap(test);
	p->lead_thread = current;
	for (i = 0; i < RT_GPUS; i++) {
		pdd = kunit_kzalloc(test, sizeof(*pdd), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, pdd);
		pdd->dev = rt->nodes[i];
		pdd->process = p;
		pdd->user_gpu_id = rt->image_gpu_id[i];
		mutex_init(&pdd->doorbell_mutex);
		/* kfd_alloc_process_doorbells() keeps what is there */
		pdd->qpd.proc_doorbells = (struct amdgpu_bo *)pdd;
		pdd->qpd.doorbell_bitmap = rt_bitmap(test);
		idr_init(&pdd->alloc_idr);
		p->pdds[i] = pdd;
		p->n_pdds = i + 1;
	}
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rt_process_release,
							p), 0);
	return p;
}

static u64 rt_handle(const struct kfd_process *p, const struct rt_bo *b)
{
	return MAKE_HANDLE(p->pdds[b->gpu]->user_gpu_id, b->handle);
}

static struct kfd_fake_bo *rt_find_bo(struct kfd_process *p, u32 gpu,
				      int handle)
{
	return idr_find(&p->pdds[gpu]->alloc_idr, handle) ?
	       kfd_fake_bo_of(idr_find(&p->pdds[gpu]->alloc_idr, handle)) :
	       NULL;
}

static u8 rt_pattern(u32 i, u64 off)
{
	return kfd_fake_pattern(i + 1, off);
}

/* Every BO of rt_bos[], mapped as ROCm maps it, GTT and VRAM filled */
static void rt_alloc_bos(struct kunit *test, struct kfd_process *p)
{
	const struct rt_bo *b;
	struct kfd_fake_bo *fb;
	u64 off;
	u32 i, g;

	for (i = 0; i < ARRAY_SIZE(rt_bos); i++) {
		b = &rt_bos[i];
		fb = kfd_fake_bo_new(p->pdds[b->gpu], b->handle, b->va, b->size,
				     b->flags);
		KUNIT_ASSERT_NOT_NULL(test, fb);
		if (b->flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR)
			fb->userptr = b->va;
		for (g = 0; g < RT_GPUS; g++)
			if (b->mapped & BIT(g))
				KUNIT_ASSERT_EQ(test,
						kfd_fake_map_add(fb,
								 p->pdds[g]->drm_priv),
						0);
		if (!(b->flags & (KFD_IOC_ALLOC_MEM_FLAGS_VRAM |
				  KFD_IOC_ALLOC_MEM_FLAGS_GTT)))
			continue;
		for (off = 0; off < fb->bo.tbo.base.size; off++)
			fb->data[off] = rt_pattern(i, off);
	}
}

/* Event ids of the process, in creation order */
enum rt_event {
	RT_EV_MEMORY,
	RT_EV_WAKE,
	RT_EV_HW_EXCEPTION,
	RT_EV_QUEUE,
	RT_EV_BLIT0,
	RT_EV_BLIT1,
	RT_EVENTS,
};

/**
 * struct rt_events - the events ROCm creates, and the slots set
 * @id: event id of each &enum rt_event
 * @slot_value: what the test writes into the slot of each signal event
 */
struct rt_events {
	u32 id[RT_EVENTS];
	u64 slot_value[RT_EVENTS];
};

static void rt_create_event(struct kunit *test, struct kfd_process *p,
			    u32 type, bool auto_reset, u64 page, u32 *id)
{
	u32 trigger, slot;

	KUNIT_ASSERT_EQ(test, kfd_event_create(NULL, p, type, auto_reset, 0, id,
					       &trigger, &page, &slot), 0);
}

/*
 * E1-E4, H4, I2.3: the event page BO becomes the process's signal page
 * through CREATE_EVENT's event_page_offset, as kfd_ioctl_create_event()
 * installs it (kfd_kmap_event_page() under p->mutex), with the first
 * event: MEMORY; then the async thread's wake SIGNAL (auto-reset), the
 * HW_EXCEPTION event (ROCr runtime.cpp, Runtime::BindErrorHandlers()),
 * the queue event (ROCr amd_gpu_agent.cpp, queue_event_) and the two
 * interrupt signals of the SDMA blit (ROCr BlitSdma::Initialize()). A
 * few slots then hold what the GPU wrote.
 */
static void rt_create_events(struct kunit *test, struct kfd_process *p,
			     struct rt_events *ev)
{
	const struct rt_bo *page = &rt_bos[2];
	u64 *slots;
	int ret;

	mutex_lock(&p->mutex);
	ret = kfd_kmap_event_page(p, rt_handle(p, page));
	mutex_unlock(&p->mutex);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_EQ(test, p->signal_handle, rt_handle(p, page));

	rt_create_event(test, p, KFD_IOC_EVENT_MEMORY, false,
			rt_handle(p, page), &ev->id[RT_EV_MEMORY]);
	rt_create_event(test, p, KFD_IOC_EVENT_SIGNAL, true, 0,
			&ev->id[RT_EV_WAKE]);
	rt_create_event(test, p, KFD_IOC_EVENT_HW_EXCEPTION, false, 0,
			&ev->id[RT_EV_HW_EXCEPTION]);
	rt_create_event(test, p, KFD_IOC_EVENT_SIGNAL, true, 0,
			&ev->id[RT_EV_QUEUE]);
	rt_create_event(test, p, KFD_IOC_EVENT_SIGNAL, true, 0,
			&ev->id[RT_EV_BLIT0]);
	rt_create_event(test, p, KFD_IOC_EVENT_SIGNAL, true, 0,
			&ev->id[RT_EV_BLIT1]);

	/* The signal page is the BO's memory, as kernel-mapped */
	slots = (u64 *)rt_find_bo(p, page->gpu, page->handle)->data;
	ev->slot_value[RT_EV_WAKE] = 0;
	ev->slot_value[RT_EV_QUEUE] = 0x1234;
	ev->slot_value[RT_EV_BLIT1] = 7;
	slots[ev->id[RT_EV_WAKE]] = ev->slot_value[RT_EV_WAKE];
	slots[ev->id[RT_EV_QUEUE]] = ev->slot_value[RT_EV_QUEUE];
	slots[ev->id[RT_EV_BLIT1]] = ev->slot_value[RT_EV_BLIT1];
}

/*
 * The CWSR area of an AQL queue on a GPU with SVM (ROCm >= 5.3): anonymous
 * memory registered with AMDKFD_IOC_SVM SET_ATTR, PREFETCH_LOC = the GPU,
 * PREFERRED_LOC = system memory, flags HOST_ACCESS|GPU_EXEC|
 * GPU_ALWAYS_MAPPED, ACCESS = the GPU, granularity 0xFF (ROCT
 * src/queues.c, register_svm_range(); ROCT commit b444d93). Not a BO.
 */
static u64 rt_cwsr_range(struct kunit *test, struct kfd_process *p, u32 q)
{
	struct kfd_criu_svm_range r = {
		.size = RT_CWSR + RT_DBG,
		.access = BIT_ULL(RT_NAVI),
		.preferred_loc = KFD_IOCTL_SVM_LOCATION_SYSMEM,
		.prefetch_loc = p->pdds[RT_NAVI]->user_gpu_id,
		.flags = KFD_IOCTL_SVM_FLAG_HOST_ACCESS |
			 KFD_IOCTL_SVM_FLAG_GPU_EXEC |
			 KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED,
		.granularity = 0xff,
	};

	if (!rt->cwsr[q]) {
		rt->cwsr[q] = kunit_vm_mmap(test, NULL, 0, SZ_64K,
					    PROT_READ | PROT_WRITE,
					    MAP_ANONYMOUS | MAP_PRIVATE, 0);
		KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(rt->cwsr[q]));
	}
	r.start = rt->cwsr[q];
	KUNIT_ASSERT_EQ(test, rt_set_attr(p, NULL, &r, 0, NULL), 0);
	return r.start;
}

/* Writes @q's preempted state into its MQDs, as CHECKPOINT finds them */
static void rt_preempt(struct kunit *test, struct queue *q)
{
	struct mqd_manager *mm;
	struct kfd_criu_queue_dyn dyn = {};
	bool sdma = q->properties.type == KFD_QUEUE_TYPE_SDMA;
	u32 xcc, num_xcc = sdma ? 1 : NUM_XCC(q->device->xcc_mask);

	mm = q->device->dqm->mqd_mgrs[sdma ? KFD_MQD_TYPE_SDMA :
					    KFD_MQD_TYPE_CP];
	for (xcc = 0; xcc < num_xcc; xcc++) {
		/* AQL pointers on 64-byte packet boundaries */
		dyn.rptr = cpu_to_le64(0x40 * (1 + q->properties.queue_id));
		dyn.wptr = cpu_to_le64(0x80 * (1 + q->properties.queue_id));
		if (!sdma) {
			dyn.eop_rptr = cpu_to_le32(0x10);
			dyn.eop_wptr = cpu_to_le32(0x18);
			dyn.cntl_stack_offset = cpu_to_le32(RT_CTL - 0x800);
			dyn.wg_state_offset = cpu_to_le32(0x5000);
		}
		KUNIT_ASSERT_EQ(test, mm->set_dyn_state(mm, q->mqd,
							&q->properties, xcc,
							&dyn, NULL, 0), 0);
	}
}

static struct queue *rt_create_queue(struct kunit *test, struct kfd_process *p,
				     u32 gpu, struct queue_properties *qp,
				     u32 qid, u32 doorbell, u32 sdma_id)
{
	struct kfd_criu_queue_priv_data ids = {
		.q_id = qid,
		.doorbell_id = doorbell,
		.sdma_id = sdma_id,
	};
	struct queue *q;

	KUNIT_ASSERT_EQ(test, kfd_criu_queues_fakes.create(p, p->pdds[gpu], qp,
							   &ids), 0);
	q = pqm_get_user_queue(&p->pqm, qid);
	KUNIT_ASSERT_NOT_NULL(test, q);
	return q;
}

/*
 * H3f: AMDKFD_IOC_CREATE_QUEUE of an AQL queue: priority 7 (NORMAL), 100%,
 * rptr and wptr in the SharedQueue page (read_dispatch_id at +0x80,
 * write_dispatch_id at +0x38), the EOP buffer, the CWSR area; no CU mask,
 * no GWS, no priority update (ROCr amd_aql_queue.cpp; ROCT src/queues.c,
 * hsaKmtCreateQueue()). Queue ids and doorbells as the kernel gives
 * them to the first two queues of a process.
 */
static void rt_create_aql_queue(struct kunit *test, struct kfd_process *p,
				u32 n)
{
	const struct rt_bo *b = &rt_bos[rt_aql_bos[n]];
	struct queue_properties qp = {
		.type = KFD_QUEUE_TYPE_COMPUTE,
		.format = KFD_QUEUE_FORMAT_AQL,
		.queue_percent = 100,
		.priority = 7,
		.read_ptr = (void __user *)(uintptr_t)(b[0].va + 0x80),
		.write_ptr = (void __user *)(uintptr_t)(b[0].va + 0x38),
		.queue_address = b[1].va,
		.queue_size = b[1].size,
		.eop_ring_buffer_address = b[3].va,
		.eop_ring_buffer_size = b[3].size,
		.ctx_save_restore_area_size = RT_CWSR,
		.ctl_stack_size = RT_CTL,
	};

	qp.ctx_save_restore_area_address = rt_cwsr_range(test, p, n);
	rt_preempt(test, rt_create_queue(test, p, RT_NAVI, &qp, n, n, 0));
}

/*
 * I2.4: the SDMA blit queue, created with KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID
 * and engine 1 (ROCr 6.4+ on gfx94x with xGMI SDMA engines:
 * amd_gpu_agent.cpp, InitDma()'s blit_lambda). The kernel made it an SDMA
 * queue in the first free slot of that engine (allocate_sdma_queue(),
 * kfd_device_queue_manager.c): what is left of BY_ENG_ID is the engine
 * its slot pins.
 */
static void rt_create_sdma_queue(struct kunit *test, struct kfd_process *p)
{
	struct queue_properties qp = {
		.type = KFD_QUEUE_TYPE_SDMA,
		.format = KFD_QUEUE_FORMAT_PM4,
		.queue_percent = 100,
		.priority = 15,
		.queue_address = rt_bos[RT_SDMA_RING].va,
		.queue_size = rt_bos[RT_SDMA_RING].size,
		.read_ptr = (void __user *)(uintptr_t)
			    (rt_bos[RT_SDMA_PAGE].va + 0x100),
		.write_ptr = (void __user *)(uintptr_t)
			     (rt_bos[RT_SDMA_PAGE].va + 0x108),
		.sdma_engine_id = RT_SDMA_ENGINE,
	};

	rt_preempt(test, rt_create_queue(test, p, RT_MI300, &qp, 2, RT_SDMA_DB,
					 RT_SDMA_ID));
}

/*
 * The ROCm process, paused by PROCESS_INFO: per GPU a VM (B3
 * ACQUIRE_VM), its BOs; the event page and events (E); per GPU a scratch
 * backing VA (F1) and a trap handler (F2) with the runtime enabled (D1);
 * hipMalloc's VRAM (G); two AQL queues with CWSR in SVM ranges (H); an
 * SDMA queue (I).
 */
static struct kfd_process *rt_rocm_process(struct kunit *test,
					   struct rt_events *ev)
{
	struct kfd_process *p = rt_open_kfd(test);
	struct qcm_process_device *qpd;
	u32 i;

	/* B3: AMDKFD_IOC_ACQUIRE_VM on every GPU (ROCT fmm.c, acquire_vm()) */
	for (i = 0; i < RT_GPUS; i++) {
		KUNIT_ASSERT_EQ(test, rt_init_vm(p, p->pdds[i], -1), 0);
		p->pdds[i]->runtime_inuse = true;
	}
	/*
	 * D1: AMDKFD_IOC_RUNTIME_ENABLE, mode ENABLE only (ROCr
	 * amd_topology.cpp, Load(); ROCT src/debug.c, hsaKmtRuntimeEnable()).
	 */
	p->runtime_info.runtime_state = DEBUG_RUNTIME_STATE_ENABLED;
	p->runtime_info.r_debug = RT_FINE + SZ_256K;
	rt_alloc_bos(test, p);
	rt_create_events(test, p, ev);
	for (i = 0; i < RT_GPUS; i++) {
		qpd = &p->pdds[i]->qpd;
		/*
		 * F1: AMDKFD_IOC_SET_SCRATCH_BACKING_VA, va_addr = base >> 16
		 * (ROCr amd_gpu_agent.cpp, GpuAgent::InitScratchPool(); ROCT
		 * fmm.c, fmm_allocate_scratch()), as the ioctl stores it.
		 */
		qpd->sh_hidden_private_base = (RT_SCRATCH + i * SZ_4G) >> 16;
		/* F2: AMDKFD_IOC_SET_TRAP_HANDLER, tma 0 with runtime enable */
		qpd->tba_addr = rt_bos[i ? 5 : 4].va;
		qpd->tma_addr = 0;
		/* PROCESS_INFO evicted the queues that come next */
		qpd->evicted = 1;
	}
	/* H: ROCr's utility queue, then HIP's null stream queue */
	rt_create_aql_queue(test, p, 0);
	rt_create_aql_queue(test, p, 1);
	/* I: the blit queue of the hipMemcpy */
	rt_create_sdma_queue(test, p);
	p->criu_state = KFD_CRIU_STATE_PAUSED;
	return p;
}

/* CHECKPOINT of a paused process, as kfd_criu_op_checkpoint() makes it */
static int rt_checkpoint(struct kfd_process *p, struct kfd_criu_test_stream *s)
{
	struct kfd_criu_proc_image *img;
	int ret;

	img = kzalloc_obj(*img, GFP_KERNEL);
	if (!img)
		return -ENOMEM;
	mutex_lock(&p->mutex);
	ret = kfd_criu_dump_supported_locked(p);
	if (!ret)
		ret = kfd_criu_snapshot_locked(p, img);
	mutex_unlock(&p->mutex);
	if (!ret)
		ret = kfd_criu_write_image(&s->io, p, img);
	kfd_criu_proc_image_free(img);
	kfree(img);
	return ret;
}

/*
 * RESTORE from @s, as kfd_criu_op_restore() runs it on a file: the GPU
 * map names each GPU with a render node fd, the offset map of *@room
 * entries goes to user memory; *@room is what RESTORE leaves in
 * num_offset_map.
 */
static int rt_restore_room(struct kfd_process *p,
			   struct kfd_criu_test_stream *s, u32 *room)
{
	struct kfd_criu_placement place = { .p = p };
	struct kfd_ioctl_criu_args args = {
		.offset_map_ptr = kfd_fake->user_page,
		.num_offset_map = *room,
	};
	struct kfd_criu_restore *ctx;
	struct kfd_criu_gpu_map *map;
	int ret;
	u32 i;

	ctx = kvzalloc_obj(*ctx, GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	place.st = &ctx->gst;
	ctx->buf = kvmalloc(KFD_CRIU_READ_BUF_SIZE, GFP_KERNEL);
	map = kcalloc(RT_GPUS, sizeof(*map), GFP_KERNEL);
	ctx->gst.map = map;
	ret = ctx->buf && map ? 0 : -ENOMEM;
	for (i = 0; !ret && i < RT_GPUS; i++) {
		map[i].image_gpu_id = rt->image_gpu_id[i];
		map[i].local_gpu_id = rt->nodes[i]->id;
		map[i].drm_fd = 100 + i;
		ctx->gst.num_map = i + 1;
	}
	if (!ret)
		ret = kfd_criu_validate_gpu_map(map, RT_GPUS);
	s->pos = 0;
	kfd_criu_image_reader_init(&ctx->r, &s->io, kfd_criu_v1_records,
				   kfd_criu_v1_num_records);
	if (!ret)
		ret = kfd_criu_read_metadata(&ctx->r, &ctx->img, ctx->buf,
					     &ctx->rec, &ctx->sec,
					     &ctx->version, &place);
	if (!ret)
		ret = kfd_criu_validate_image(&ctx->img, ctx->sec);
	if (!ret && ctx->sec == KFD_CRIU_SEC_DATA)
		ret = kfd_criu_check_first_data(&ctx->img.bos, ctx->buf,
						ctx->rec.length);
	if (!ret) {
		mutex_lock(&p->mutex);
		ret = kfd_criu_restore_locked(NULL, p, current->mm, ctx, &args);
		mutex_unlock(&p->mutex);
	}
	kfd_criu_restore_free(ctx, &args);
	*room = args.num_offset_map;
	return ret;
}

/* RESTORE from @s with an offset map of a page */
static int rt_restore(struct kfd_process *p, struct kfd_criu_test_stream *s)
{
	u32 room = PAGE_SIZE / sizeof(struct kfd_criu_offset_map);

	return rt_restore_room(p, s, &room);
}

/* RESUME, as kfd_criu_op_resume() runs it on the process found by pid */
static int rt_resume(struct kfd_process *p)
{
	enum kfd_criu_state next;
	int ret;

	mutex_lock(&p->mutex);
	ret = kfd_criu_next_state(p->criu_state, KFD_CRIU_OP_RESUME, &next);
	if (!ret)
		ret = kfd_criu_resume_locked(p, current->mm);
	if (!ret)
		p->criu_state = next;
	mutex_unlock(&p->mutex);
	return ret;
}

/* PROCESS_INFO's pause, before the second CHECKPOINT */
static int rt_pause(struct kfd_process *p)
{
	enum kfd_criu_state next;
	int ret;

	mutex_lock(&p->mutex);
	ret = kfd_criu_next_state(p->criu_state, KFD_CRIU_OP_PROCESS_INFO,
				  &next);
	if (!ret)
		ret = kfd_process_evict_queues(p,
					       KFD_QUEUE_EVICTION_CRIU_CHECKPOINT);
	if (!ret)
		p->criu_state = next;
	mutex_unlock(&p->mutex);
	return ret;
}

/* The metadata of an image, read back as RESTORE reads it */
static void rt_decode(struct kunit *test, struct kfd_criu_test_stream *s,
		      struct kfd_criu_proc_image *img)
{
	struct kfd_criu_image_reader r;
	enum kfd_criu_section sec;
	struct kfd_criu_record rec;
	u32 version;
	void *buf;
	int ret;

	buf = kunit_kmalloc(test, KFD_CRIU_READ_BUF_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	s->pos = 0;
	kfd_criu_image_reader_init(&r, &s->io, kfd_criu_v1_records,
				   kfd_criu_v1_num_records);
	ret = kfd_criu_read_metadata(&r, img, buf, &rec, &sec, &version, NULL);
	if (!ret)
		ret = kfd_criu_validate_image(img, sec);
	KUNIT_EXPECT_EQ(test, ret, 0);
}

/* A record type's fixed parts, compared byte by byte */
static void rt_expect_recs(struct kunit *test, const void *a, const void *b,
			   size_t size, const char *what)
{
	KUNIT_EXPECT_MEMEQ_MSG(test, a, b, size, "%s", what);
}

/*
 * The two images field by field, but for the fields that change by
 * design between a dump and the dump of its restore: EVENT signaled and
 * event_age, SIGNAL_PAGE data, BO mmap_offset, BO_DATA data,
 * QUEUE_STATE's dynamic fields and data, END's byte count.
 */
static void rt_expect_same_images(struct kunit *test,
				  struct kfd_criu_proc_image *a,
				  struct kfd_criu_proc_image *b)
{
	struct kfd_criu_event_rec ea, eb;
	struct kfd_criu_bo_rec ba, bb;
	u32 i;

	KUNIT_ASSERT_EQ(test, a->gpus.num_gpus, b->gpus.num_gpus);
	rt_expect_recs(test, a->gpus.gpus, b->gpus.gpus,
		       a->gpus.num_gpus * sizeof(*a->gpus.gpus), "GPU");
	KUNIT_ASSERT_EQ(test, a->traps.num_traps, b->traps.num_traps);
	rt_expect_recs(test, a->traps.traps, b->traps.traps,
		       a->traps.num_traps * sizeof(*a->traps.traps),
		       "TRAP_HANDLER");
	KUNIT_EXPECT_MEMEQ_MSG(test, &a->events.process, &b->events.process,
			       sizeof(a->events.process), "PROCESS");
	KUNIT_EXPECT_MEMEQ_MSG(test, &a->events.counts, &b->events.counts,
			       sizeof(a->events.counts), "COUNTS");
	KUNIT_EXPECT_EQ(test, a->events.signal_page_size,
			b->events.signal_page_size);
	KUNIT_ASSERT_EQ(test, a->events.num_events, b->events.num_events);
	for (i = 0; i < a->events.num_events; i++) {
		ea = a->events.events[i];
		eb = b->events.events[i];
		ea.signaled = 0;
		eb.signaled = 0;
		ea.event_age = 0;
		eb.event_age = 0;
		KUNIT_EXPECT_MEMEQ_MSG(test, &ea, &eb, sizeof(ea), "EVENT %u",
				       i);
	}
	KUNIT_ASSERT_EQ(test, a->bos.num_bos, b->bos.num_bos);
	for (i = 0; i < a->bos.num_bos; i++) {
		ba = a->bos.bos[i];
		bb = b->bos.bos[i];
		ba.mmap_offset = 0;
		bb.mmap_offset = 0;
		KUNIT_EXPECT_MEMEQ_MSG(test, &ba, &bb, sizeof(ba), "BO %u", i);
	}
	KUNIT_ASSERT_EQ(test, a->queues.num_queues, b->queues.num_queues);
	rt_expect_recs(test, a->queues.queues, b->queues.queues,
		       a->queues.num_queues * sizeof(*a->queues.queues),
		       "QUEUE");
	KUNIT_ASSERT_EQ(test, a->queues.num_states, b->queues.num_states);
	for (i = 0; i < a->queues.num_states; i++)
		KUNIT_EXPECT_MEMEQ_MSG(test, a->queues.states[i].payload,
				       b->queues.states[i].payload,
				       sizeof(struct kfd_criu_queue_state_hdr) -
				       sizeof(__le32), "QUEUE_STATE %u", i);
	KUNIT_ASSERT_EQ(test, a->svm.num_ranges, b->svm.num_ranges);
	rt_expect_recs(test, a->svm.ranges, b->svm.ranges,
		       a->svm.num_ranges * sizeof(*a->svm.ranges), "SVM_RANGE");
}

/*
 * What RESTORE and RESUME must have brought back, seen in the process:
 * the event page is the restored BO, with the slots the GPU wrote; the
 * scratch VAs; the SDMA queue on its engine and slot; the AQL queues
 * with their CWSR areas in the ranges RESUME applied; the BO contents.
 */
static void rt_expect_restored(struct kunit *test, struct kfd_process *src,
			       struct kfd_process *p,
			       const struct rt_events *ev)
{
	const struct rt_bo *page = &rt_bos[2];
	struct kfd_fake_bo *fb, *orig;
	struct queue *q;
	u64 *slots;
	u32 i;

	KUNIT_EXPECT_EQ(test, p->signal_handle, rt_handle(p, page));
	fb = rt_find_bo(p, page->gpu, page->handle);
	KUNIT_ASSERT_NOT_NULL(test, fb);
	KUNIT_ASSERT_NOT_NULL(test, p->signal_page);
	slots = (u64 *)fb->data;
	orig = rt_find_bo(src, page->gpu, page->handle);
	for (i = 0; i < RT_EVENTS; i++)
		if (i != RT_EV_MEMORY && i != RT_EV_HW_EXCEPTION)
			KUNIT_EXPECT_EQ_MSG(test, slots[ev->id[i]],
					    ev->slot_value[i] ?:
					    ((u64 *)orig->data)[ev->id[i]],
					    "slot of event %u", ev->id[i]);

	for (i = 0; i < RT_GPUS; i++)
		KUNIT_EXPECT_EQ(test, p->pdds[i]->qpd.sh_hidden_private_base,
				src->pdds[i]->qpd.sh_hidden_private_base);

	q = pqm_get_user_queue(&p->pqm, 2);
	KUNIT_ASSERT_NOT_NULL(test, q);
	KUNIT_EXPECT_EQ(test, q->properties.type, KFD_QUEUE_TYPE_SDMA);
	KUNIT_EXPECT_EQ(test, q->sdma_id, RT_SDMA_ID);
	KUNIT_EXPECT_EQ(test, q->properties.sdma_engine_id, RT_SDMA_ENGINE);
	KUNIT_EXPECT_PTR_EQ(test, q->device, rt->nodes[RT_MI300]);
	for (i = 0; i < 2; i++) {
		q = pqm_get_user_queue(&p->pqm, i);
		KUNIT_ASSERT_NOT_NULL(test, q);
		KUNIT_EXPECT_EQ(test, q->properties.ctx_save_restore_area_address,
				(u64)rt->cwsr[i]);
		KUNIT_EXPECT_NOT_NULL(test,
				      interval_tree_iter_first(&p->svms.objects,
							       rt->cwsr[i] >> PAGE_SHIFT,
							       rt->cwsr[i] >> PAGE_SHIFT));
		/* RESUME took the CWSR range the restore left */
		KUNIT_EXPECT_FALSE(test, q->criu_cwsr_svm_pending);
	}
	KUNIT_EXPECT_EQ(test, rt->set_attrs, 4);
	/* Once per AQL queue: its CWSR area is an SVM range, not a BO */
	KUNIT_EXPECT_EQ(test, kfd_criu_queues_fakes.cwsr_svm_taken(), 2);

	for (i = 0; i < ARRAY_SIZE(rt_bos); i++) {
		orig = rt_find_bo(src, rt_bos[i].gpu, rt_bos[i].handle);
		fb = rt_find_bo(p, rt_bos[i].gpu, rt_bos[i].handle);
		KUNIT_ASSERT_NOT_NULL(test, fb);
		KUNIT_EXPECT_EQ(test, fb->mem.va, rt_bos[i].va);
		if (!(rt_bos[i].flags & (KFD_IOC_ALLOC_MEM_FLAGS_VRAM |
					 KFD_IOC_ALLOC_MEM_FLAGS_GTT)))
			continue;
		KUNIT_EXPECT_MEMEQ_MSG(test, fb->data, orig->data,
				       fb->bo.tbo.base.size, "BO %u", i);
	}
}

static void rt_image_free(void *img)
{
	kfd_criu_proc_image_free(img);
}

static struct kfd_criu_proc_image *rt_image(struct kunit *test)
{
	struct kfd_criu_proc_image *img;

	img = kunit_kzalloc(test, sizeof(*img), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, img);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rt_image_free,
							img), 0);
	return img;
}

/*
 * hsa_init + hipMalloc + a kernel launch + hipMemcpy: CHECKPOINT, RESTORE
 * into a fresh process, RESUME, CHECKPOINT again: the same image.
 */
static void rt_test_round_trip(struct kunit *test)
{
	struct kfd_criu_test_stream *first, *second;
	struct kfd_criu_proc_image *a, *b;
	struct kfd_process *src, *dst;
	struct rt_events ev = {};
	u32 i;

	rt_env_new(test);
	first = kfd_criu_test_stream_new(test);
	second = kfd_criu_test_stream_new(test);
	src = rt_rocm_process(test, &ev);

	KUNIT_ASSERT_EQ(test, rt_checkpoint(src, first), 0);

	dst = rt_open_kfd(test);
	KUNIT_ASSERT_EQ(test, rt_restore(dst, first), 0);
	KUNIT_EXPECT_EQ(test, dst->criu_state, KFD_CRIU_STATE_RESTORED);
	KUNIT_ASSERT_EQ(test, rt_resume(dst), 0);
	KUNIT_EXPECT_EQ(test, dst->criu_state, KFD_CRIU_STATE_RUNNING);
	rt_expect_restored(test, src, dst, &ev);
	KUNIT_EXPECT_EQ(test, kfd_fake_bos_of(dst), ARRAY_SIZE(rt_bos));

	KUNIT_ASSERT_EQ(test, rt_pause(dst), 0);
	KUNIT_ASSERT_EQ(test, rt_checkpoint(dst, second), 0);
	a = rt_image(test);
	b = rt_image(test);
	rt_decode(test, first, a);
	rt_decode(test, second, b);
	rt_expect_same_images(test, a, b);
	for (i = 0; i < RT_GPUS; i++)
		KUNIT_EXPECT_GT(test, rt->evictions[i], 0);
}

/*
 * A RESTORE that fails once the event page BO is the event page again
 * (an event id it cannot get) leaves the target as it was: no signal
 * page, no event page handle, the BO's kernel map undone with the BO,
 * no BO, no event.
 */
static void rt_test_failed_restore_drops_event_page(struct kunit *test)
{
	struct kfd_criu_test_stream *first;
	struct kfd_process *src, *dst;
	struct rt_events ev = {};
	int kmaps;
	u32 i;

	rt_env_new(test);
	first = kfd_criu_test_stream_new(test);
	src = rt_rocm_process(test, &ev);
	/*
	 * Undoing an enabled runtime on a GFX 9.4.3 reprograms its debug
	 * trap through the hardware scheduler, which the fakes lack; that
	 * unwind has its own tests (kfd_criu_events)
	 */
	src->runtime_info.runtime_state = DEBUG_RUNTIME_STATE_DISABLED;
	src->runtime_info.r_debug = 0;
	KUNIT_ASSERT_EQ(test, rt_checkpoint(src, first), 0);
	kmaps = rt->kmaps;

	kunit_activate_static_stub(test, kfd_criu_events_seams.event_add,
				   rt_event_add_fails);
	dst = rt_open_kfd(test);
	KUNIT_EXPECT_EQ(test, rt_restore(dst, first), -ENOSPC);
	KUNIT_EXPECT_EQ(test, dst->criu_state, KFD_CRIU_STATE_RUNNING);
	KUNIT_EXPECT_NULL(test, dst->signal_page);
	KUNIT_EXPECT_EQ(test, dst->signal_handle, 0);
	KUNIT_EXPECT_EQ(test, dst->signal_mapped_size, 0);
	KUNIT_EXPECT_EQ(test, rt->kmaps, kmaps);
	KUNIT_EXPECT_EQ(test, kfd_fake_bos_of(dst), 0);
	KUNIT_EXPECT_EQ(test, kfd_get_num_events(dst), 0);
	for (i = 0; i < RT_GPUS; i++) {
		KUNIT_EXPECT_NULL(test, dst->pdds[i]->drm_priv);
		KUNIT_EXPECT_EQ(test, dst->pdds[i]->qpd.sh_hidden_private_base,
				0);
	}
	KUNIT_EXPECT_TRUE(test, list_empty(&dst->pqm.queues));
}

/*
 * The ROCm process as the hostile sweeps restore it: its image, with the
 * runtime disabled (undoing an enabled runtime on the GFX 9.4.3 needs the
 * hardware scheduler, which the fakes lack; kfd_criu_events tests that
 * unwind).
 */
static struct kfd_criu_test_stream *rt_base_image(struct kunit *test)
{
	struct kfd_criu_test_stream *s;
	struct kfd_process *src;
	struct rt_events ev = {};

	rt_env_new(test);
	s = kfd_criu_test_stream_new(test);
	src = rt_rocm_process(test, &ev);
	src->runtime_info.runtime_state = DEBUG_RUNTIME_STATE_DISABLED;
	src->runtime_info.r_debug = 0;
	KUNIT_ASSERT_EQ(test, rt_checkpoint(src, s), 0);
	return s;
}

/*
 * Frees a target of the sweep before the test ends, as process teardown
 * would: the event page's kernel map, the BOs, then what rt_open_kfd()
 * gave it. Hundreds of images are restored; their BOs would not fit.
 */
static void rt_drop(struct kunit *test, struct kfd_process *p)
{
	struct kfd_process_device *pdd;
	struct kgd_mem *mem;
	int id;
	u32 i;

	pdd = p->signal_handle ?
	      kfd_process_device_data_by_id(p, GET_GPU_ID(p->signal_handle)) :
	      NULL;
	mem = pdd ? idr_find(&pdd->alloc_idr,
			     GET_IDR_HANDLE(p->signal_handle)) : NULL;
	if (mem)
		amdgpu_amdkfd_gpuvm_unmap_bo_from_kernel(mem);
	for (i = 0; i < p->n_pdds; i++) {
		idr_for_each_entry(&p->pdds[i]->alloc_idr, mem, id) {
			idr_remove(&p->pdds[i]->alloc_idr, id);
			kfd_fake_bo_free(kfd_fake_bo_of(mem));
		}
	}
	kunit_release_action(test, rt_process_release, p);
}

/* A refused restore left the target as rt_open_kfd() made it. */
static void rt_expect_untouched(struct kunit *test, struct kfd_process *p,
				int kmaps, const char *what)
{
	struct qcm_process_device *qpd;
	u32 i;

	KUNIT_EXPECT_EQ_MSG(test, p->criu_state, KFD_CRIU_STATE_RUNNING,
			    "%s: CRIU state", what);
	KUNIT_EXPECT_EQ_MSG(test, kfd_fake_bos_of(p), 0, "%s: BOs left", what);
	KUNIT_EXPECT_TRUE_MSG(test, list_empty(&p->pqm.queues),
			      "%s: queues left", what);
	KUNIT_EXPECT_EQ_MSG(test, kfd_get_num_events(p), 0,
			    "%s: events left", what);
	KUNIT_EXPECT_NULL_MSG(test, p->signal_page, "%s: signal page left",
			      what);
	KUNIT_EXPECT_EQ_MSG(test, p->signal_handle, 0,
			    "%s: event page handle left", what);
	KUNIT_EXPECT_EQ_MSG(test, rt->kmaps, kmaps, "%s: kernel maps left",
			    what);
	KUNIT_EXPECT_TRUE_MSG(test, list_empty(&p->svms.list),
			      "%s: SVM ranges left", what);
	KUNIT_EXPECT_EQ_MSG(test, kfd_fake->bounce_bytes, 0,
			    "%s: bounce buffers left", what);
	for (i = 0; i < RT_GPUS; i++) {
		qpd = &p->pdds[i]->qpd;
		KUNIT_EXPECT_NULL_MSG(test, p->pdds[i]->drm_priv,
				      "%s: VM of GPU %u left", what, i);
		KUNIT_EXPECT_EQ_MSG(test, qpd->sh_hidden_private_base, 0,
				    "%s: scratch VA of GPU %u left", what, i);
		KUNIT_EXPECT_EQ_MSG(test, qpd->evicted, 0,
				    "%s: GPU %u left evicted", what, i);
		KUNIT_EXPECT_EQ_MSG(test, p->pdds[i]->user_gpu_id,
				    rt->nodes[i]->id, "%s: gpu_id of GPU %u",
				    what, i);
	}
}

/*
 * An accepted image restored what its records say: each GPU's scratch
 * VA, a BO per BO record, a queue per QUEUE record, the event page the
 * image marks.
 */
static void rt_expect_accepted(struct kunit *test, struct kfd_process *p,
			       const struct kfd_criu_test_stream *s,
			       const char *what)
{
	static const struct kfd_criu_test_field scratch = {
		"scratch_backing_va",
		offsetof(struct kfd_criu_gpu_rec, scratch_backing_va), 4
	};
	unsigned int n, marked = 0;
	size_t at;

	KUNIT_EXPECT_EQ_MSG(test, p->criu_state, KFD_CRIU_STATE_RESTORED,
			    "%s: CRIU state", what);
	for (n = 0; n < RT_GPUS; n++) {
		at = kfd_criu_test_record_at(s, KFD_CRIU_REC_GPU, n);
		KUNIT_EXPECT_EQ_MSG(test, p->pdds[n]->qpd.sh_hidden_private_base,
				    kfd_criu_test_peek(s, at, &scratch),
				    "%s: scratch VA of GPU %u", what, n);
	}
	for (n = 0; (at = kfd_criu_test_record_at(s, KFD_CRIU_REC_BO, n)); n++)
		marked += get_unaligned_le32(s->data + at +
					     offsetof(struct kfd_criu_bo_rec,
						      flags)) &
			  KFD_CRIU_BO_EVENT_PAGE;
	KUNIT_EXPECT_EQ_MSG(test, kfd_fake_bos_of(p), n, "%s: BOs", what);
	KUNIT_EXPECT_EQ_MSG(test, !!p->signal_handle, !!marked,
			    "%s: event page", what);
	for (n = 0; kfd_criu_test_record_at(s, KFD_CRIU_REC_QUEUE, n); n++)
		;
	KUNIT_EXPECT_EQ_MSG(test, list_count_nodes(&p->pqm.queues), n,
			    "%s: queues", what);
}

/*
 * Restores @s into a fresh target and judges the outcome: a refusal with
 * an errno RESTORE documents leaves the target untouched, an acceptance
 * restores what the records say. The target is freed either way.
 */
static bool rt_try_hostile(struct kunit *test, void *ctx, const char *what)
{
	struct kfd_criu_test_stream *s = ctx;
	struct kfd_process *p = rt_open_kfd(test);
	int kmaps = rt->kmaps;
	int ret;

	ret = rt_restore(p, s);
	if (!ret)
		rt_expect_accepted(test, p, s, what);
	else
		KUNIT_EXPECT_TRUE_MSG(test, kfd_criu_test_documented(ret),
				      "%s: undocumented error %d", what, ret);
	if (ret)
		rt_expect_untouched(test, p, kmaps, what);
	rt_drop(test, p);
	return !ret;
}

#define RT_BO(f)	offsetof(struct kfd_criu_bo_rec, f)
#define RT_GPU(f)	offsetof(struct kfd_criu_gpu_rec, f)
#define RT_Q(f)		offsetof(struct kfd_criu_queue_rec, f)
#define RT_SVM(f)	offsetof(struct kfd_criu_svm_rec, f)

static const struct kfd_criu_test_field rt_bo_fields[] = {
	{ "va", RT_BO(va), 8 },
	{ "size", RT_BO(size), 8 },
	{ "userptr", RT_BO(userptr), 8 },
	{ "mmap_offset", RT_BO(mmap_offset), 8 },
	{ "mapped_gpus", RT_BO(mapped_gpus), 8 },
	{ "alloc_flags", RT_BO(alloc_flags), 4 },
	{ "handle", RT_BO(handle), 4 },
	{ "gpu_index", RT_BO(gpu_index), 4 },
	{ "flags", RT_BO(flags), 4 },
};

static const struct kfd_criu_test_field rt_gpu_fields[] = {
	{ "gpu_id", RT_GPU(gpu_id), 4 },
	{ "num_xcc", RT_GPU(num_xcc), 4 },
	{ "cwsr_size", RT_GPU(cwsr_size), 4 },
	{ "flags", RT_GPU(flags), 4 },
	{ "scratch_backing_va", RT_GPU(scratch_backing_va), 4 },
};

static const struct kfd_criu_test_field rt_sdma_fields[] = {
	{ "ring_base", RT_Q(ring_base), 8 },
	{ "read_ptr_addr", RT_Q(read_ptr_addr), 8 },
	{ "queue_id", RT_Q(queue_id), 4 },
	{ "gpu_index", RT_Q(gpu_index), 4 },
	{ "type", RT_Q(type), 4 },
	{ "ring_size", RT_Q(ring_size), 4 },
	{ "doorbell_offset", RT_Q(doorbell_offset), 4 },
	{ "sdma_engine_id", RT_Q(sdma_engine_id), 4 },
};

static const struct kfd_criu_test_field rt_cwsr_fields[] = {
	{ "eop_base", RT_Q(eop_base), 8 },
	{ "ctx_save_restore_base", RT_Q(ctx_save_restore_base), 8 },
	{ "eop_size", RT_Q(eop_size), 4 },
	{ "ctx_save_restore_size", RT_Q(ctx_save_restore_size), 4 },
	{ "ctl_stack_size", RT_Q(ctl_stack_size), 4 },
};

static const struct kfd_criu_test_field rt_svm_fields[] = {
	{ "start", RT_SVM(start), 8 },
	{ "size", RT_SVM(size), 8 },
	{ "access", RT_SVM(access), 8 },
	{ "prefetch_loc", RT_SVM(prefetch_loc), 4 },
	{ "flags", RT_SVM(flags), 4 },
};

/* The QUEUE record whose type is @type, which the image must have */
static u32 rt_queue_record(struct kunit *test, struct kfd_criu_test_stream *s,
			   u32 type)
{
	static const struct kfd_criu_test_field f = {
		"type", RT_Q(type), 4
	};
	size_t at;
	u32 n;

	for (n = 0; (at = kfd_criu_test_record_at(s, KFD_CRIU_REC_QUEUE, n));
	     n++)
		if (kfd_criu_test_peek(s, at, &f) == type)
			return n;
	KUNIT_FAIL(test, "no QUEUE record of type %u", type);
	return 0;
}

/* The index among the BO records of the event page's */
#define RT_EVENT_PAGE_REC	1
/* Another GTT BO of GPU 0, 4 KiB: libhsakmt's SDMA queue page */
#define RT_SDMA_PAGE_REC	6

/*
 * The hostile sweeps on the image of the ROCm process, one record each:
 * each field of the record is set to its boundary values and to random
 * values, with good CRCs, and each image restored into a fresh process on
 * the fake GPUs: a refusal must use a documented errno and leave the
 * target untouched, an acceptance must restore what the records say.
 * One case per record: make mutate's 600 random images of a record take
 * about 100 s under TCG, and KUnit gives a case 300 s. @queue_type picks
 * the QUEUE record by its type, for the other types it is unused.
 */
static void rt_sweep(struct kunit *test, u32 type, u32 n, u32 queue_type,
		     const struct kfd_criu_test_field *fields, u32 nfields)
{
	struct kfd_criu_test_stream *s = rt_base_image(test);
	struct kfd_criu_test_sweep sw = {
		.s = s, .try_image = rt_try_hostile, .ctx = s,
	};

	if (type == KFD_CRIU_REC_QUEUE)
		n = rt_queue_record(test, s, queue_type);
	kfd_criu_test_sweep_record(test, &sw, type, n, fields, nfields);
	kfd_criu_test_sweep_report(test, &sw);

	/* The image itself is intact again and restores */
	KUNIT_EXPECT_TRUE(test, rt_try_hostile(test, s, "intact"));
}

/* The event page's BO record: GTT, 32 KiB, marked */
static void rt_test_hostile_rocm_bo_records(struct kunit *test)
{
	rt_sweep(test, KFD_CRIU_REC_BO, RT_EVENT_PAGE_REC, 0, rt_bo_fields,
		 ARRAY_SIZE(rt_bo_fields));
}

/* The MI300's GPU record, with its scratch backing VA */
static void rt_test_hostile_rocm_gpu_records(struct kunit *test)
{
	rt_sweep(test, KFD_CRIU_REC_GPU, RT_MI300, 0, rt_gpu_fields,
		 ARRAY_SIZE(rt_gpu_fields));
}

/* The SDMA queue, its engine pinned by its slot */
static void rt_test_hostile_rocm_sdma_records(struct kunit *test)
{
	rt_sweep(test, KFD_CRIU_REC_QUEUE, 0, KFD_QUEUE_TYPE_SDMA,
		 rt_sdma_fields, ARRAY_SIZE(rt_sdma_fields));
}

/* An AQL queue whose CWSR area is an SVM range */
static void rt_test_hostile_rocm_queue_records(struct kunit *test)
{
	rt_sweep(test, KFD_CRIU_REC_QUEUE, 0, KFD_QUEUE_TYPE_COMPUTE,
		 rt_cwsr_fields, ARRAY_SIZE(rt_cwsr_fields));
}

/* The SVM range of that CWSR area */
static void rt_test_hostile_rocm_svm_records(struct kunit *test)
{
	rt_sweep(test, KFD_CRIU_REC_SVM_RANGE, 0, 0, rt_svm_fields,
		 ARRAY_SIZE(rt_svm_fields));
}

/* Restores @s with field @f of record @n of @type set to @val: its errno */
static int rt_restore_poked(struct kunit *test, struct kfd_criu_test_stream *s,
			    u32 type, u32 n, const struct kfd_criu_test_field *f,
			    u64 val)
{
	size_t at = kfd_criu_test_record_at(s, type, n);
	struct kfd_process *p;
	int kmaps = rt->kmaps;
	u64 orig;
	int ret;

	KUNIT_ASSERT_NE(test, at, 0);
	orig = kfd_criu_test_peek(s, at, f);
	kfd_criu_test_poke(s, at, f, val);
	p = rt_open_kfd(test);
	ret = rt_restore(p, s);
	if (ret)
		rt_expect_untouched(test, p, kmaps, f->name);
	rt_drop(test, p);
	kfd_criu_test_poke(s, at, f, orig);
	return ret;
}

/*
 * Hostile values of what the ROCm shape added, each refused with the
 * errno RESTORE documents for it: an unknown BO flag, a second event
 * page, an event page that is not a GTT BO or not 32 KiB (each the same
 * image restores once the mark is gone), and a target that has a scratch
 * backing VA of its own. A scratch VA the GPU record carries is any
 * 32-bit value, and comes back as it is.
 */
static void rt_test_hostile_rocm_fields(struct kunit *test)
{
	static const struct kfd_criu_test_field flags = {
		"flags", RT_BO(flags), 4
	};
	static const struct kfd_criu_test_field alloc_flags = {
		"alloc_flags", RT_BO(alloc_flags), 4
	};
	static const struct kfd_criu_test_field scratch = {
		"scratch_backing_va", RT_GPU(scratch_backing_va), 4
	};
	struct kfd_criu_test_stream *s = rt_base_image(test);
	size_t page = kfd_criu_test_record_at(s, KFD_CRIU_REC_BO,
					      RT_EVENT_PAGE_REC);
	size_t gpu = kfd_criu_test_record_at(s, KFD_CRIU_REC_GPU, RT_MI300);
	struct kfd_process *p;
	u64 orig;

	KUNIT_ASSERT_NE(test, page, 0);
	KUNIT_ASSERT_EQ(test, kfd_criu_test_peek(s, page, &flags),
			KFD_CRIU_BO_EVENT_PAGE);
	KUNIT_EXPECT_EQ(test, rt_restore_poked(test, s, KFD_CRIU_REC_BO,
					       RT_EVENT_PAGE_REC, &flags,
					       KFD_CRIU_BO_EVENT_PAGE | BIT(1)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, rt_restore_poked(test, s, KFD_CRIU_REC_BO,
					       RT_SDMA_PAGE_REC, &flags,
					       KFD_CRIU_BO_EVENT_PAGE),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, rt_restore_poked(test, s, KFD_CRIU_REC_BO,
					       RT_EVENT_PAGE_REC, &alloc_flags,
					       RT_VRAM), -EINVAL);
	/*
	 * The same VRAM BO, unmarked, is valid: the mark was refused. Its
	 * slots then belong to a kernel signal page, which this kernel does
	 * not have.
	 */
	kfd_criu_test_poke(s, page, &flags, 0);
	KUNIT_EXPECT_EQ(test, rt_restore_poked(test, s, KFD_CRIU_REC_BO,
					       RT_EVENT_PAGE_REC, &alloc_flags,
					       RT_VRAM), -EOPNOTSUPP);
	kfd_criu_test_poke(s, page, &flags, KFD_CRIU_BO_EVENT_PAGE);

	orig = kfd_criu_test_peek(s, gpu, &scratch);
	kfd_criu_test_poke(s, gpu, &scratch, U32_MAX);
	p = rt_open_kfd(test);
	KUNIT_EXPECT_EQ(test, rt_restore(p, s), 0);
	KUNIT_EXPECT_EQ(test, p->pdds[RT_MI300]->qpd.sh_hidden_private_base,
			U32_MAX);
	rt_drop(test, p);
	kfd_criu_test_poke(s, gpu, &scratch, orig);

	p = rt_open_kfd(test);
	p->pdds[RT_NAVI]->qpd.sh_hidden_private_base = RT_SCRATCH >> 16;
	KUNIT_EXPECT_EQ(test, rt_restore(p, s), -EBUSY);
	KUNIT_EXPECT_EQ(test, kfd_fake_bos_of(p), 0);
	KUNIT_EXPECT_TRUE(test, list_empty(&p->pqm.queues));
	KUNIT_EXPECT_EQ(test, p->pdds[RT_NAVI]->qpd.sh_hidden_private_base,
			RT_SCRATCH >> 16);
	p->pdds[RT_NAVI]->qpd.sh_hidden_private_base = 0;
	rt_drop(test, p);
}

/*
 * The same failed RESTORE, but the unwind cannot unmap the event page BO,
 * which then stays in the process with the VMs (the "BOs left" unwind).
 * Its kernel map took the BO's eviction fence off and the unmap from the
 * kernel unpinned it: it must get the fence back, or amdgpu could move it
 * under the running process without evicting its queues.
 */
static void rt_test_failed_restore_fences_kept_event_page(struct kunit *test)
{
	struct kfd_criu_test_stream *first;
	struct kfd_process *src, *dst;
	struct kfd_fake_bo *fb;
	struct rt_events ev = {};

	rt_env_new(test);
	first = kfd_criu_test_stream_new(test);
	src = rt_rocm_process(test, &ev);
	/* As in rt_test_failed_restore_drops_event_page() */
	src->runtime_info.runtime_state = DEBUG_RUNTIME_STATE_DISABLED;
	src->runtime_info.r_debug = 0;
	KUNIT_ASSERT_EQ(test, rt_checkpoint(src, first), 0);
	rt->unfenced = NULL;

	kunit_activate_static_stub(test, kfd_criu_events_seams.event_add,
				   rt_event_add_fails);
	kunit_activate_static_stub(test, kfd_criu_bos_seams.vm_unmap,
				   rt_vm_unmap_keeps_event_page);
	dst = rt_open_kfd(test);
	KUNIT_EXPECT_EQ(test, rt_restore(dst, first), -ENOSPC);
	fb = rt_find_bo(dst, rt_bos[2].gpu, rt_bos[2].handle);
	KUNIT_ASSERT_NOT_NULL(test, fb);
	KUNIT_EXPECT_EQ(test, kfd_fake_bos_of(dst), 1);
	KUNIT_EXPECT_NULL(test, dst->signal_page);
	KUNIT_EXPECT_EQ(test, dst->signal_handle, 0);
	KUNIT_EXPECT_NULL_MSG(test, rt->unfenced,
			      "the event page BO stays without its eviction fence");
	KUNIT_EXPECT_FALSE(test,
			   READ_ONCE(((struct amdkfd_process_info *)
				      dst->kgd_process_info)->block_mmu_notifications));
}

/*
 * RESTORE of a process that sees other gpu_ids than the topology's (it
 * was restored from another machine before): the GPU map names the
 * image's GPUs by them. The restored process keeps seeing the image's
 * gpu_ids, so the event page handle it passed (which encodes the gpu_id
 * of its BO's GPU) must name that BO again: the handle is rebuilt from
 * the restored BO's GPU and looked up by the gpu_id the process sees. A
 * second CHECKPOINT marks the same BO as the event page.
 */
static void rt_test_restore_onto_other_gpu_ids(struct kunit *test)
{
	const struct rt_bo *page = &rt_bos[2];
	struct kfd_criu_test_stream *first, *second;
	struct kfd_criu_proc_image *img;
	struct kfd_process *src, *dst;
	struct rt_events ev = {};
	u32 i;

	rt_env_new(test);
	first = kfd_criu_test_stream_new(test);
	second = kfd_criu_test_stream_new(test);
	/* The source sees the gpu_ids of the machine it was restored from */
	for (i = 0; i < RT_GPUS; i++)
		rt->image_gpu_id[i] = 0x5300 + i;
	src = rt_rocm_process(test, &ev);
	KUNIT_ASSERT_EQ(test, rt_checkpoint(src, first), 0);

	dst = rt_open_kfd(test);
	for (i = 0; i < RT_GPUS; i++)
		dst->pdds[i]->user_gpu_id = rt->nodes[i]->id;
	KUNIT_ASSERT_EQ(test, rt_restore(dst, first), 0);
	for (i = 0; i < RT_GPUS; i++)
		KUNIT_EXPECT_EQ(test, dst->pdds[i]->user_gpu_id,
				rt->image_gpu_id[i]);
	KUNIT_EXPECT_EQ(test, dst->signal_handle,
			MAKE_HANDLE(rt->image_gpu_id[page->gpu], page->handle));
	KUNIT_EXPECT_PTR_EQ(test,
			    kfd_process_device_data_by_id(dst,
							  GET_GPU_ID(dst->signal_handle)),
			    dst->pdds[page->gpu]);
	KUNIT_ASSERT_EQ(test, rt_resume(dst), 0);
	rt_expect_restored(test, src, dst, &ev);

	KUNIT_ASSERT_EQ(test, rt_pause(dst), 0);
	KUNIT_ASSERT_EQ(test, rt_checkpoint(dst, second), 0);
	img = rt_image(test);
	rt_decode(test, second, img);
	KUNIT_ASSERT_GT(test, img->bos.num_bos, RT_EVENT_PAGE_REC);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(img->bos.bos[RT_EVENT_PAGE_REC].flags),
			KFD_CRIU_BO_EVENT_PAGE);
	for (i = 0; i < RT_GPUS; i++)
		KUNIT_EXPECT_EQ(test, le32_to_cpu(img->gpus.gpus[i].gpu_id),
				rt->image_gpu_id[i]);
}

/*
 * RESTORE's two errors for "no room": an offset map too short is -E2BIG,
 * with the room needed and nothing restored, and no other failure gives
 * it; a GPU without a queue slot (or, without HWS, a VMID) is -ENOSPC,
 * with num_offset_map as the caller gave it. A caller that retries on
 * the first must not retry on the second, which would only fail again.
 */
static void rt_test_restore_room_errors(struct kunit *test)
{
	struct kfd_criu_test_stream *first;
	struct kfd_process *src, *dst;
	struct rt_events ev = {};
	u32 room = 0, needed;
	int kmaps;

	rt_env_new(test);
	first = kfd_criu_test_stream_new(test);
	src = rt_rocm_process(test, &ev);
	/* As rt_test_failed_restore_drops_event_page(): no runtime unwind */
	src->runtime_info.runtime_state = DEBUG_RUNTIME_STATE_DISABLED;
	src->runtime_info.r_debug = 0;
	KUNIT_ASSERT_EQ(test, rt_checkpoint(src, first), 0);
	dst = rt_open_kfd(test);
	kmaps = rt->kmaps;

	KUNIT_EXPECT_EQ(test, rt_restore_room(dst, first, &room), -E2BIG);
	KUNIT_EXPECT_GT(test, room, 0);
	rt_expect_untouched(test, dst, kmaps, "short offset map");

	needed = room;
	kfd_criu_queues_fakes.fail_create(-ENOSPC);
	KUNIT_EXPECT_EQ(test, rt_restore_room(dst, first, &room), -ENOSPC);
	KUNIT_EXPECT_EQ(test, room, needed);
	rt_expect_untouched(test, dst, kmaps, "no queue slot");
}

/* Each GPU's queues are evicted @n times more than restored */
static void rt_expect_evictions(struct kunit *test, int n)
{
	u32 i;

	for (i = 0; i < RT_GPUS; i++)
		KUNIT_EXPECT_EQ_MSG(test, rt->evictions[i], n, "GPU %u", i);
}

/*
 * What the ops do besides stepping the state, counted from the paused
 * ROCm process (its queues evicted once): PROCESS_INFO of a paused
 * process evicts nothing more; a CHECKPOINT that fails leaves no dump
 * counted; UNPAUSE refuses while a dump streams and then restores
 * nothing, and otherwise restores the queues once; PROCESS_INFO of the
 * running process evicts them once, however often it runs. A RESTORE
 * refused for its offset map evicts nothing; one that succeeds leaves
 * its queues evicted once (RESUME hands their restore to amdgpu's
 * userptr worker, which the fakes leave idle).
 */
static void rt_test_op_side_effects(struct kunit *test)
{
	struct kfd_ioctl_criu_args args = {};
	struct kfd_criu_test_stream *first;
	struct process_queue_node *pqn;
	struct kfd_process *src, *dst;
	struct rt_events ev = {};
	u32 room = 0;

	rt_env_new(test);
	first = kfd_criu_test_stream_new(test);
	src = rt_rocm_process(test, &ev);
	src->runtime_info.runtime_state = DEBUG_RUNTIME_STATE_DISABLED;
	src->runtime_info.r_debug = 0;

	KUNIT_ASSERT_EQ(test, kfd_criu_op_process_info(src, &args), 0);
	rt_expect_evictions(test, 0);

	/* No image file: refused, nothing left counted */
	args.image_fd = -1;
	KUNIT_EXPECT_EQ(test, kfd_criu_op_checkpoint(src, &args), -EBADF);
	KUNIT_EXPECT_EQ(test, src->criu_dumps, 0);
	KUNIT_EXPECT_EQ(test, src->criu_state, KFD_CRIU_STATE_PAUSED);
	/*
	 * And before the snapshot, which a queue that is not preempted
	 * would fail with -EBUSY
	 */
	pqn = list_first_entry(&src->pqm.queues, struct process_queue_node,
			       process_queue_list);
	KUNIT_ASSERT_NOT_NULL(test, pqn->q);
	pqn->q->properties.is_active = true;
	KUNIT_EXPECT_EQ(test, kfd_criu_op_checkpoint(src, &args), -EBADF);
	KUNIT_EXPECT_EQ(test, rt_checkpoint(src, first), -EBUSY);
	pqn->q->properties.is_active = false;
	KUNIT_EXPECT_EQ(test, src->criu_dumps, 0);

	/* As while a CHECKPOINT streams */
	src->criu_dumps = 1;
	KUNIT_EXPECT_EQ(test, kfd_criu_op_unpause(src), -EBUSY);
	KUNIT_EXPECT_EQ(test, src->criu_state, KFD_CRIU_STATE_PAUSED);
	rt_expect_evictions(test, 0);
	src->criu_dumps = 0;

	KUNIT_ASSERT_EQ(test, rt_checkpoint(src, first), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_op_unpause(src), 0);
	KUNIT_EXPECT_EQ(test, src->criu_state, KFD_CRIU_STATE_RUNNING);
	rt_expect_evictions(test, -1);
	KUNIT_EXPECT_EQ(test, kfd_criu_op_unpause(src), -EBADFD);
	rt_expect_evictions(test, -1);

	KUNIT_ASSERT_EQ(test, kfd_criu_op_process_info(src, &args), 0);
	rt_expect_evictions(test, 0);
	KUNIT_ASSERT_EQ(test, kfd_criu_op_process_info(src, &args), 0);
	rt_expect_evictions(test, 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_op_unpause(src), 0);
	rt_expect_evictions(test, -1);

	dst = rt_open_kfd(test);
	KUNIT_EXPECT_EQ(test, rt_restore_room(dst, first, &room), -E2BIG);
	rt_expect_evictions(test, -1);
	/* The restored queues wait evicted for RESUME */
	KUNIT_ASSERT_EQ(test, rt_restore_room(dst, first, &room), 0);
	rt_expect_evictions(test, 0);
}

static struct kunit_case kfd_criu_rocm_test_cases[] = {
	KUNIT_CASE(rt_test_round_trip),
	KUNIT_CASE(rt_test_failed_restore_drops_event_page),
	KUNIT_CASE(rt_test_failed_restore_fences_kept_event_page),
	KUNIT_CASE(rt_test_restore_onto_other_gpu_ids),
	KUNIT_CASE(rt_test_hostile_rocm_bo_records),
	KUNIT_CASE(rt_test_hostile_rocm_gpu_records),
	KUNIT_CASE(rt_test_hostile_rocm_sdma_records),
	KUNIT_CASE(rt_test_hostile_rocm_queue_records),
	KUNIT_CASE(rt_test_hostile_rocm_svm_records),
	KUNIT_CASE(rt_test_hostile_rocm_fields),
	KUNIT_CASE(rt_test_restore_room_errors),
	KUNIT_CASE(rt_test_op_side_effects),
	{}
};

static struct kunit_suite kfd_criu_rocm_suite = {
	.name = "kfd_criu_rocm",
	.test_cases = kfd_criu_rocm_test_cases,
};

kunit_test_suites(&kfd_criu_rocm_suite);
