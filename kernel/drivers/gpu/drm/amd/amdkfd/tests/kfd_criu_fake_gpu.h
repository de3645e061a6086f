/* SPDX-License-Identifier: GPL-2.0 OR MIT */

/*
 * Fake GPUs for the KUnit tests of image mode: a &struct kfd_process with
 * per-GPU data on fake &struct kfd_node, and buffer objects backed by
 * kernel memory. The calls image mode makes into amdgpu for a BO
 * (allocate, map, sync, unmap, free, copy its contents, bounce buffers)
 * go to the fakes here through KUnit static stubs, which the test file
 * activates; everything else runs the real image-mode code.
 *
 * The fakes count their calls per kind of step, and fail one chosen call
 * of one kind, so that a test can make every step of a restore fail in
 * turn and check that nothing is left behind.
 *
 * What a process does next with a restored BO, MAP, UNMAP and FREE, runs
 * the real ioctl handlers of kfd_chardev.c. Their calls into amdgpu that
 * need a real BO and VM (map, unmap, DMA unmap, free) go to fakes of
 * their own, which keep the same map of what is mapped where and give
 * back VRAM as amdgpu does on a dGPU. The rest is real: the sync of a
 * BO runs on the fake BO's empty sync object, and the TLB flush of a
 * compute VM on a fake VM whose TLB sequence never moved. For the
 * handlers the fake GPUs have zeroed amdgpu devices (a reset domain
 * with a workqueue, a GC version) and each process-device a DRM file.
 * A test that calls the handlers maps a page of user memory for their
 * arguments first (kfd_fake_user_page_new()).
 */

#ifndef KFD_CRIU_FAKE_GPU_H_INCLUDED
#define KFD_CRIU_FAKE_GPU_H_INCLUDED

#include <kunit/test.h>
#include <linux/idr.h>
#include <linux/list.h>
#include <linux/mman.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <drm/drm_file.h>

#include "amdgpu_reset.h"

#define KFD_FAKE_MAX_GPUS	4

/**
 * enum kfd_fake_step - what a fake call stands for
 * @KFD_FAKE_ALLOC: creating a BO at its VA and handle
 * @KFD_FAKE_MAP: mapping a BO in a GPU's VM
 * @KFD_FAKE_SYNC: waiting for the page table updates of a BO
 * @KFD_FAKE_COPY: copying contents between a BO and a bounce buffer
 * @KFD_FAKE_BOUNCE: allocating a bounce buffer
 * @KFD_FAKE_UNMAP: unmapping a BO from a GPU's VM, in an unwind
 * @KFD_FAKE_NUM_STEPS: number of kinds
 */
enum kfd_fake_step {
	KFD_FAKE_ALLOC,
	KFD_FAKE_MAP,
	KFD_FAKE_SYNC,
	KFD_FAKE_COPY,
	KFD_FAKE_BOUNCE,
	KFD_FAKE_UNMAP,
	KFD_FAKE_NUM_STEPS,
};

static __maybe_unused const char * const
kfd_fake_step_name[KFD_FAKE_NUM_STEPS] = {
	"alloc", "map", "sync", "copy", "bounce", "unmap",
};

/**
 * struct kfd_fake_gpus - the fake GPUs' state, shared by all fake processes
 * @test: the running test
 * @bos: every fake BO alive
 * @live_bos: entries in @bos
 * @next_gem_offset: the GEM mmap offset the next BO gets
 * @bounce_bytes: bytes of bounce buffers allocated now
 * @tlb_flushes: TLB flushes asked for
 * @calls: calls made, per kind
 * @fail_step: the kind of call to fail, or %KFD_FAKE_NUM_STEPS for none
 * @fail_at: which call of that kind fails (0 for the first)
 * @fail_signal: the signal that call sends the calling task before it
 *	fails with -EINTR, or 0 for a call that fails with -EIO
 * @vram_epoch: the VRAM-lost count of every fake GPU
 * @lose_vram_at: the copy (by number) during which the GPUs lose their
 *	VRAM, or -1
 * @adev: the device of each fake GPU, shared by all fake processes
 * @kfd: the KFD device of each fake GPU
 * @reset_domain: the reset domain of every @adev
 * @fpriv: what the DRM file of every process-device points to: a compute
 *	VM with a stub fence as its last TLB flush
 * @user_page: a page of user memory the ioctl arguments point into, or 0
 */
struct kfd_fake_gpus {
	struct kunit *test;
	struct list_head bos;
	unsigned int live_bos;
	u64 next_gem_offset;
	u64 bounce_bytes;
	unsigned int tlb_flushes;
	unsigned int calls[KFD_FAKE_NUM_STEPS];
	enum kfd_fake_step fail_step;
	unsigned int fail_at;
	int fail_signal;
	int vram_epoch;
	int lose_vram_at;
	struct amdgpu_device *adev[KFD_FAKE_MAX_GPUS];
	struct kfd_dev kfd[KFD_FAKE_MAX_GPUS];
	struct amdgpu_reset_domain reset_domain;
	struct amdgpu_fpriv *fpriv;
	unsigned long user_page;
};

/**
 * struct kfd_fake_bo - a BO of a fake GPU
 * @mem: what KFD sees
 * @bo: what @mem points to; only its size is set
 * @link: in &kfd_fake_gpus.bos
 * @pdd: the per-GPU data whose idr holds it
 * @data: its contents, the BO's size of them
 * @userptr: a userptr BO's address
 * @gem_offset: its mmap offset through a render node
 * @mapped_on: the DRM files of the VMs it is mapped in, NULL for none
 * @off_lists: a free took it off the process's lists and then failed;
 *	amdgpu could not free it again
 */
struct kfd_fake_bo {
	struct kgd_mem mem;
	struct amdgpu_bo bo;
	struct list_head link;
	struct kfd_process_device *pdd;
	u8 *data;
	u64 userptr;
	u64 gem_offset;
	void *mapped_on[KFD_FAKE_MAX_GPUS];
	bool off_lists;
};

/*
 * The fakes of the running test; the stubs have no other way to it. Some
 * run in a worker on behalf of the test (kfd_criu_run_unwind()), so they
 * report with expectations only: an assertion there would end the worker
 * rather than the test.
 */
static struct kfd_fake_gpus *kfd_fake;

static struct kfd_fake_bo *kfd_fake_bo_of(struct kgd_mem *mem)
{
	return container_of(mem, struct kfd_fake_bo, mem);
}

/*
 * The error the fake returns for this call: 0, or when chosen -EIO, or
 * -EINTR after it sent the calling task @fail_signal, as a wait that the
 * signal interrupted.
 */
static int kfd_fake_step(enum kfd_fake_step step)
{
	unsigned int n = kfd_fake->calls[step]++;

	if (step != kfd_fake->fail_step || n != kfd_fake->fail_at)
		return 0;
	if (!kfd_fake->fail_signal)
		return -EIO;
	send_sig(kfd_fake->fail_signal, current, 1);
	return -EINTR;
}

static void kfd_fake_bo_free(struct kfd_fake_bo *fb)
{
	amdgpu_sync_free(&fb->mem.sync);
	mutex_destroy(&fb->mem.lock);
	list_del(&fb->link);
	kfd_fake->live_bos--;
	kvfree(fb->data);
	kfree(fb);
}

static void kfd_fake_cleanup(void *data)
{
	struct kfd_fake_gpus *fake = data;
	struct kfd_fake_bo *fb, *tmp;
	int i;

	list_for_each_entry_safe(fb, tmp, &fake->bos, link)
		kfd_fake_bo_free(fb);
	for (i = 0; i < KFD_FAKE_MAX_GPUS; i++)
		kvfree(fake->adev[i]);
	if (fake->reset_domain.wq)
		destroy_workqueue(fake->reset_domain.wq);
	if (fake->fpriv)
		dma_fence_put(fake->fpriv->vm.last_tlb_flush);
	kfree(fake->fpriv);
	kfd_fake = NULL;
}

/*
 * The devices the ioctl handlers reach through a fake GPU: the reset
 * domain FREE flushes, and the GC version UNMAP reads. GPU 0 is a GFX
 * 9.4.3, which flushes TLBs after an unmap; the others are not.
 */
static int kfd_fake_devices_new(struct kfd_fake_gpus *fake)
{
	int i;

	fake->reset_domain.wq = alloc_ordered_workqueue("kfd_fake_reset", 0);
	fake->fpriv = kzalloc_obj(*fake->fpriv, GFP_KERNEL);
	if (!fake->reset_domain.wq || !fake->fpriv)
		return -ENOMEM;
	fake->fpriv->vm.is_compute_context = true;
	fake->fpriv->vm.last_tlb_flush = dma_fence_get_stub();
	for (i = 0; i < KFD_FAKE_MAX_GPUS; i++) {
		fake->adev[i] = kvzalloc_obj(*fake->adev[i], GFP_KERNEL);
		if (!fake->adev[i])
			return -ENOMEM;
		fake->adev[i]->reset_domain = &fake->reset_domain;
		fake->kfd[i].adev = fake->adev[i];
	}
	fake->adev[0]->ip_versions[GC_HWIP][0] = IP_VERSION(9, 4, 3);
	return 0;
}

static struct kfd_fake_gpus *kfd_fake_gpus_new(struct kunit *test)
{
	struct kfd_fake_gpus *fake;

	fake = kunit_kzalloc(test, sizeof(*fake), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fake);
	fake->test = test;
	INIT_LIST_HEAD(&fake->bos);
	fake->next_gem_offset = 0x100000000ULL;
	fake->fail_step = KFD_FAKE_NUM_STEPS;
	fake->lose_vram_at = -1;
	kfd_fake = fake;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, kfd_fake_cleanup,
							fake), 0);
	KUNIT_ASSERT_EQ(test, kfd_fake_devices_new(fake), 0);
	return fake;
}

static void kfd_fake_process_release(void *data)
{
	struct kfd_process *p = data;
	u32 i;

	for (i = 0; i < p->n_pdds; i++)
		idr_destroy(&p->pdds[i]->alloc_idr);
}

/*
 * A process with @num_gpus fake GPUs, gpu_ids @first_gpu_id and up, bound
 * to them as after their first use (runtime PM already taken).
 */
static __maybe_unused struct kfd_process *
kfd_fake_process(struct kunit *test, u32 num_gpus, u32 first_gpu_id)
{
	struct kfd_process_device *pdd;
	struct kfd_process *p;
	struct kfd_node *node;
	struct drm_file *file;
	u32 i;

	KUNIT_ASSERT_LE(test, num_gpus, KFD_FAKE_MAX_GPUS);
	/* The fake GPUs' devices come first */
	KUNIT_ASSERT_TRUE(test, !num_gpus || kfd_fake);
	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	mutex_init(&p->mutex);
	/* The primary KFD process of its mm, with no other context */
	p->context_id = KFD_CONTEXT_ID_PRIMARY;
	ida_init(&p->id_table);
	mutex_init(&p->svms.lock);
	p->svms.objects = RB_ROOT_CACHED;
	INIT_LIST_HEAD(&p->svms.list);
	for (i = 0; i < num_gpus; i++) {
		pdd = kunit_kzalloc(test, sizeof(*pdd), GFP_KERNEL);
		node = kunit_kzalloc(test, sizeof(*node), GFP_KERNEL);
		file = kunit_kzalloc(test, sizeof(*file), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, pdd);
		KUNIT_ASSERT_NOT_NULL(test, node);
		KUNIT_ASSERT_NOT_NULL(test, file);
		node->id = first_gpu_id + i;
		node->adev = kfd_fake->adev[i];
		node->kfd = &kfd_fake->kfd[i];
		/* A key of the fakes' map of mappings, one per VM */
		file->driver_priv = kfd_fake->fpriv;
		pdd->drm_priv = file;
		pdd->dev = node;
		pdd->process = p;
		pdd->user_gpu_id = node->id;
		pdd->runtime_inuse = true;
		idr_init(&pdd->alloc_idr);
		p->pdds[i] = pdd;
		p->n_pdds = i + 1;
	}
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, kfd_fake_process_release, p),
			0);
	return p;
}

static u8 kfd_fake_pattern(u32 handle, u64 offset)
{
	return (u8)(offset * 7 + (offset >> 12) * 13 + handle * 101 + 3);
}

/*
 * A fake BO in @pdd's idr at @handle. As amdgpu allocates it: @va_size,
 * or for an AQL queue's BO half of it, page-aligned.
 */
static struct kfd_fake_bo *kfd_fake_bo_new(struct kfd_process_device *pdd,
					   int handle, u64 va, u64 va_size,
					   u32 flags)
{
	bool aql = flags & KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM;
	u64 size = PAGE_ALIGN(aql ? va_size >> 1 : va_size);
	struct kfd_fake_bo *fb;
	int id;

	fb = kzalloc_obj(*fb, GFP_KERNEL);
	if (!fb)
		return NULL;
	fb->data = kvzalloc(size, GFP_KERNEL);
	if (!fb->data) {
		kfree(fb);
		return NULL;
	}
	id = idr_alloc(&pdd->alloc_idr, &fb->mem, handle, handle + 1,
		       GFP_KERNEL);
	if (id != handle) {
		kvfree(fb->data);
		kfree(fb);
		return NULL;
	}
	mutex_init(&fb->mem.lock);
	amdgpu_sync_create(&fb->mem.sync);
	fb->mem.bo = &fb->bo;
	fb->mem.va = va;
	fb->mem.alloc_flags = flags;
	fb->mem.aql_queue = aql;
	fb->bo.tbo.base.size = size;
	fb->pdd = pdd;
	fb->gem_offset = kfd_fake->next_gem_offset;
	kfd_fake->next_gem_offset += SZ_64K;
	list_add_tail(&fb->link, &kfd_fake->bos);
	kfd_fake->live_bos++;
	return fb;
}

/* The fake BOs of @p still alive. */
static unsigned int kfd_fake_bos_of(struct kfd_process *p)
{
	struct kfd_fake_bo *fb;
	unsigned int n = 0;

	list_for_each_entry(fb, &kfd_fake->bos, link)
		n += fb->pdd->process == p;
	return n;
}

static int kfd_fake_map_slot(struct kfd_fake_bo *fb, void *drm_priv)
{
	int i;

	for (i = 0; i < KFD_FAKE_MAX_GPUS; i++)
		if (fb->mapped_on[i] == drm_priv)
			return i;
	return -1;
}

static bool kfd_fake_on_vm(void *drm_priv, struct kgd_mem *mem)
{
	return kfd_fake_map_slot(kfd_fake_bo_of(mem), drm_priv) >= 0;
}

/* Maps @fb in the VM of @drm_priv, where it is not mapped yet */
static int kfd_fake_map_add(struct kfd_fake_bo *fb, void *drm_priv)
{
	int slot = kfd_fake_map_slot(fb, NULL);

	if (slot < 0)
		return -ENOSPC;
	fb->mapped_on[slot] = drm_priv;
	return 0;
}

/* Whether @fb is mapped in any VM */
static bool kfd_fake_is_mapped(struct kfd_fake_bo *fb)
{
	return memchr_inv(fb->mapped_on, 0, sizeof(fb->mapped_on));
}

static int kfd_fake_userptr(struct kgd_mem *mem, u64 *addr)
{
	*addr = kfd_fake_bo_of(mem)->userptr;
	return 0;
}

static u64 kfd_fake_gem_offset(struct kgd_mem *mem)
{
	return kfd_fake_bo_of(mem)->gem_offset;
}

static int kfd_fake_alloc(struct kfd_process_device *pdd,
			  struct kfd_criu_bo_bucket *bucket,
			  struct kfd_criu_bo_priv_data *priv,
			  struct kgd_mem **mem)
{
	struct kfd_fake_bo *fb;
	int ret;

	ret = kfd_fake_step(KFD_FAKE_ALLOC);
	if (ret)
		return ret;
	fb = kfd_fake_bo_new(pdd, priv->idr_handle, bucket->addr,
			     bucket->size, bucket->alloc_flags);
	if (!fb)
		return -ENOMEM;
	fb->userptr = priv->user_addr;
	/* As kfd_criu_restore_memory_of_gpu() counts it */
	if (bucket->alloc_flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM)
		atomic64_add(kfd_vram_usage_of(bucket->alloc_flags,
					       bucket->size),
			     &pdd->vram_usage);
	*mem = &fb->mem;
	return 0;
}

static int kfd_fake_vm_map(struct kfd_process_device *pdd,
			   struct kgd_mem *mem)
{
	struct kfd_fake_bo *fb = kfd_fake_bo_of(mem);
	int ret;

	ret = kfd_fake_step(KFD_FAKE_MAP);
	if (ret)
		return ret;
	if (kfd_fake_map_slot(fb, pdd->drm_priv) >= 0)
		return -EINVAL;
	return kfd_fake_map_add(fb, pdd->drm_priv);
}

static int kfd_fake_vm_sync(struct kgd_mem *mem)
{
	return kfd_fake_step(KFD_FAKE_SYNC);
}

static void kfd_fake_tlb_flush(struct kfd_process_device *pdd)
{
	kfd_fake->tlb_flushes++;
}

/*
 * As amdgpu: the unmap reserves the BO and its VMs with interruptible
 * waits, so with a signal pending it fails, before it changed anything.
 * amdgpu fails only when it has to wait for a reservation; the fake fails
 * always, the worst case. It fails on request too, as amdgpu does when
 * it runs out of memory for the page tables, also in the unwind's worker.
 */
static int kfd_fake_vm_unmap(struct kfd_process_device *pdd,
			     struct kgd_mem *mem)
{
	struct kfd_fake_bo *fb = kfd_fake_bo_of(mem);
	int slot = kfd_fake_map_slot(fb, pdd->drm_priv);
	int ret;

	if (slot < 0)
		return -EINVAL;
	ret = kfd_fake_step(KFD_FAKE_UNMAP);
	if (ret)
		return ret;
	if (signal_pending(current))
		return -ERESTARTSYS;
	fb->mapped_on[slot] = NULL;
	return 0;
}

/*
 * As amdgpu: a BO still mapped somewhere is refused and left as it was.
 * Otherwise the free first takes the BO off the process's lists and only
 * then reserves it and its VMs, interruptibly: with a signal pending it
 * fails there, and the BO can never be freed again. Freeing it again is
 * a double free, which fails the test.
 */
static int kfd_fake_release(struct kfd_process_device *pdd,
			    struct kgd_mem *mem)
{
	struct kfd_fake_bo *fb = kfd_fake_bo_of(mem);

	if (kfd_fake_is_mapped(fb))
		return -EBUSY;
	if (fb->off_lists) {
		KUNIT_FAIL(kfd_fake->test, "BO at 0x%llx freed twice",
			   fb->mem.va);
		return -EINVAL;
	}
	fb->off_lists = true;
	if (signal_pending(current))
		return -ERESTARTSYS;
	kfd_fake_bo_free(fb);
	return 0;
}

/* A fake BO has no reservation object: no eviction fence to give it */
static __maybe_unused int kfd_fake_fence(struct kgd_mem *mem)
{
	return 0;
}

/**
 * struct kfd_fake_bounce - a fake bounce buffer
 * @size: bytes at @data
 * @data: the buffer
 */
struct kfd_fake_bounce {
	u32 size;
	u8 data[];
};

static int kfd_fake_bounce_alloc(void *dev, u32 size, void **bounce,
				 void **cpu)
{
	struct kfd_fake_bounce *b;
	int ret;

	ret = kfd_fake_step(KFD_FAKE_BOUNCE);
	if (ret)
		return ret;
	b = kvzalloc(struct_size(b, data, size), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	b->size = size;
	kfd_fake->bounce_bytes += size;
	*bounce = b;
	*cpu = b->data;
	return 0;
}

/* The fake copies are synchronous: nothing is ever pending. */
static void kfd_fake_bounce_free(void *bounce, struct dma_fence *pending)
{
	struct kfd_fake_bounce *b = bounce;

	KUNIT_EXPECT_NULL(kfd_fake->test, pending);
	kfd_fake->bounce_bytes -= b->size;
	kvfree(b);
}

static int kfd_fake_vram_epoch(struct kfd_process_device *pdd)
{
	return kfd_fake->vram_epoch;
}

/* Synchronous, as the CPU path is; wraps like an AQL double mapping. */
static int kfd_fake_copy(struct kgd_mem *mem, u64 offset, void *bounce,
			 void *cpu, u32 len, bool to_bo,
			 struct dma_fence **fence, struct kfd_criu_copy_stats *st)
{
	struct kfd_fake_bo *fb = kfd_fake_bo_of(mem);
	u64 size = fb->bo.tbo.base.size, at;
	u32 n, done;
	int ret;

	*fence = NULL;
	if (kfd_fake->calls[KFD_FAKE_COPY] == kfd_fake->lose_vram_at)
		kfd_fake->vram_epoch++;
	ret = kfd_fake_step(KFD_FAKE_COPY);
	if (ret)
		return ret;
	for (done = 0; done < len; done += n) {
		at = (offset + done) % size;
		n = min_t(u64, len - done, size - at);
		if (to_bo)
			memcpy(fb->data + at, cpu + done, n);
		else
			memcpy(cpu + done, fb->data + at, n);
	}
	st->cpu_bytes += len;
	return 0;
}

/*
 * The calls of the MAP, UNMAP and FREE ioctl handlers into amdgpu. As
 * amdgpu: mapping a BO where it is mapped already does nothing,
 * unmapping it where it is not fails, a BO still mapped somewhere is not
 * freed, and a free gives back the BO's own size for a VRAM BO (half
 * the VA of an AQL queue's BO, page-aligned), nothing for the others,
 * as on a dGPU (the fake devices are no APUs). The fake map never fails:
 * MAP's report of a failure reads the device's PCI location, which the
 * fake devices do not have.
 */
static int kfd_fake_gpuvm_map(struct amdgpu_device *adev, struct kgd_mem *mem,
			      void *drm_priv)
{
	struct kfd_fake_bo *fb = kfd_fake_bo_of(mem);

	if (kfd_fake_map_slot(fb, drm_priv) < 0 &&
	    kfd_fake_map_add(fb, drm_priv))
		KUNIT_FAIL(kfd_fake->test, "BO at 0x%llx mapped on too many VMs",
			   mem->va);
	return 0;
}

static int kfd_fake_gpuvm_unmap(struct amdgpu_device *adev,
				struct kgd_mem *mem, void *drm_priv)
{
	struct kfd_fake_bo *fb = kfd_fake_bo_of(mem);
	int slot = kfd_fake_map_slot(fb, drm_priv);

	if (slot < 0)
		return -EINVAL;
	fb->mapped_on[slot] = NULL;
	return 0;
}

/* UNMAP drops the DMA mappings only of a BO it unmapped first */
static int kfd_fake_gpuvm_dmaunmap(struct kgd_mem *mem, void *drm_priv)
{
	KUNIT_EXPECT_FALSE_MSG(kfd_fake->test, kfd_fake_on_vm(drm_priv, mem),
			       "DMA unmap of the BO at 0x%llx, still mapped",
			       mem->va);
	return 0;
}

static int kfd_fake_gpuvm_free(struct amdgpu_device *adev, struct kgd_mem *mem,
			       void *drm_priv, u64 *size)
{
	struct kfd_fake_bo *fb = kfd_fake_bo_of(mem);

	if (kfd_fake_is_mapped(fb))
		return -EBUSY;
	if (size)
		*size = mem->alloc_flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM ?
			fb->bo.tbo.base.size : 0;
	kfd_fake_bo_free(fb);
	return 0;
}

/* The fakes of the calls the memory ioctl handlers make */
static void kfd_fake_stub_ioctls(struct kunit *test)
{
	kunit_activate_static_stub(test, amdgpu_amdkfd_gpuvm_map_memory_to_gpu,
				   kfd_fake_gpuvm_map);
	kunit_activate_static_stub(test,
				   amdgpu_amdkfd_gpuvm_unmap_memory_from_gpu,
				   kfd_fake_gpuvm_unmap);
	kunit_activate_static_stub(test, amdgpu_amdkfd_gpuvm_dmaunmap_mem,
				   kfd_fake_gpuvm_dmaunmap);
	kunit_activate_static_stub(test, amdgpu_amdkfd_gpuvm_free_memory_of_gpu,
				   kfd_fake_gpuvm_free);
}

/*
 * A page of user memory for the ioctl arguments, in an address space
 * KUnit gives the test's thread. Mapped before anything else runs, so
 * that the whole test runs with an mm, as a real RESTORE does; the
 * unwind worker takes the caller's.
 */
static void kfd_fake_user_page_new(struct kunit *test)
{
	kfd_fake->user_page = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE,
					    PROT_READ | PROT_WRITE,
					    MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(kfd_fake->user_page));
	KUNIT_ASSERT_NE(test, kfd_fake->user_page, 0);
}

/* @n u32 GPU ids in user memory, as the MAP and UNMAP ioctls read them */
static u64 __maybe_unused
kfd_fake_user_ids(struct kunit *test, const u32 *ids, u32 n)
{
	KUNIT_ASSERT_NE(test, kfd_fake->user_page, 0);
	KUNIT_ASSERT_LE(test, n * sizeof(*ids), PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)kfd_fake->user_page,
					   ids, n * sizeof(*ids)), 0);
	return kfd_fake->user_page;
}

#endif
