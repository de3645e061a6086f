// SPDX-License-Identifier: GPL-2.0 OR MIT

/**
 * DOC: CRIU image mode - copying BO contents on amdgpu
 *
 * The device half of the pipelined transfers of kfd_criu_xfer.c: bounce
 * buffers and the copy of one piece of a BO to or from one.
 *
 * A bounce buffer is a pinned, kernel-mapped GTT BO of the operation's
 * own (amdgpu_bo_create_kernel()), bound in the GART, so the copy engine
 * reaches it and the CPU reads or fills it in place; two of them per
 * operation, of %KFD_CRIU_XFER_BOUNCE_SIZE bytes each. They count
 * against KFD's system memory limit as GTT allocations of the process
 * would, and every failure to get one is -ENOMEM. A buffer freed while a
 * copy may still use it takes that copy's fence along, so TTM frees its
 * pages only once the copy completed (delayed destroy).
 *
 * A piece of a VRAM BO is copied by the buffer functions ring, the copy
 * engine TTM uses for its own moves (amdgpu_ttm_copy_mem()), which
 * walks VRAM that is not contiguous and reaches VRAM the CPU cannot see.
 * The copy does not sync to the BO's fences through the ring: the KFD
 * eviction fence would then evict the process. What the copy must follow
 * is waited for first, with the BO reserved: writers before a dump reads
 * (dma_resv_usage_rw()), every user but the eviction fence before a
 * restore writes. The copy's fence is then added to the BO, as a
 * bookkeeping fence for a read and a kernel fence for a write, so a move
 * or free of the BO waits for the copy in turn; nothing needs to wait
 * for a read, as a dump waits for its copies before it writes the
 * image. Waits are killable, not interruptible: only a fatal signal ends
 * a dump or restore early. The waits before a copy run under p->mutex
 * and the BO's reservation, on a dump as on a restore; a restore also
 * waits for its copies under p->mutex. Neither the eviction and restore
 * workers nor the reset path take p->mutex. As the waits ignore the
 * freezer, a long CHECKPOINT or RESTORE can make a system suspend time
 * out.
 *
 * GTT and system memory BOs are copied by the CPU from their pages.
 * Without a copy engine (the ring is off while the device is
 * initialized, suspended or unplugged) or without the device, a VRAM copy
 * fails with -EIO; there is no CPU path for VRAM, and the device's shared
 * debug access page is never used. A copy a reset cut short fails through
 * its fence. VRAM lost on a GPU of the process between the BO snapshot
 * (or the BOs' creation) and the end of the contents fails the operation
 * with -EIO as well (kfd_criu_bo_vram_epoch()). Failures of the copy
 * itself are -EIO, so
 * they cannot read as one of the errnos the image mode uAPI gives other
 * meanings. KFD never creates encrypted (TMZ) or GFX12 DCC compressed
 * BOs; the first are refused at the dump, and the CPU path copies raw
 * bytes.
 *
 * The KUnit tests of kfd_criu_bos.c replace these functions with fake
 * GPUs' (static stubs, compiled out without KUnit).
 */

#include <linux/dma-fence.h>
#include <linux/dma-resv.h>
#include <linux/io.h>
#include <linux/sched/signal.h>

#include <kunit/static_stub.h>

#include <drm/drm_drv.h>
#include <drm/ttm/ttm_bo.h>

#include "amdgpu_amdkfd.h"
#include "amdgpu_object.h"
#include "amdgpu_res_cursor.h"
#include "amdgpu_ttm.h"
#include "kfd_criu.h"
#include "kfd_criu_xfer.h"
#include "kfd_priv.h"

/**
 * struct kfd_criu_bounce - a bounce buffer on amdgpu
 * @bo: the pinned GTT BO
 * @adev: its device
 * @cpu: its kernel mapping
 * @size: bytes
 */
struct kfd_criu_bounce {
	struct amdgpu_bo *bo;
	struct amdgpu_device *adev;
	void *cpu;
	u32 size;
};

/**
 * kfd_criu_bo_bounce_alloc - allocate a bounce buffer
 * @dev: the &struct amdgpu_device the buffer is for
 * @size: bytes
 * @bounce: receives the buffer
 * @cpu: receives its kernel mapping
 *
 * Return: 0, or -ENOMEM for any failure (KFD's memory limit, GTT or GART
 * space, the mapping).
 */
int kfd_criu_bo_bounce_alloc(void *dev, u32 size, void **bounce, void **cpu)
{
	struct amdgpu_device *adev = dev;
	struct kfd_criu_bounce *b;

	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_bo_bounce_alloc, dev, size, bounce,
				   cpu);
	b = kzalloc_obj(*b, GFP_KERNEL_ACCOUNT);
	if (!b)
		return -ENOMEM;
	if (amdgpu_amdkfd_reserve_mem_limit(adev, size,
					    KFD_IOC_ALLOC_MEM_FLAGS_GTT, -1))
		goto err_free;
	if (amdgpu_bo_create_kernel(adev, size, PAGE_SIZE,
				    AMDGPU_GEM_DOMAIN_GTT, &b->bo, NULL,
				    &b->cpu))
		goto err_unreserve;
	b->adev = adev;
	b->size = size;
	*bounce = b;
	*cpu = b->cpu;
	return 0;

err_unreserve:
	amdgpu_amdkfd_unreserve_mem_limit(adev, size,
					  KFD_IOC_ALLOC_MEM_FLAGS_GTT, -1);
err_free:
	kfree(b);
	return -ENOMEM;
}

/* The buffer's pages stay until @pending signals: TTM's delayed destroy. */
static void kfd_criu_bounce_keep_until(struct kfd_criu_bounce *b,
				       struct dma_fence *pending)
{
	struct dma_resv *resv = b->bo->tbo.base.resv;

	if (!pending || dma_fence_is_signaled(pending))
		return;
	dma_resv_lock(resv, NULL);
	if (!dma_resv_reserve_fences(resv, 1))
		dma_resv_add_fence(resv, pending, DMA_RESV_USAGE_KERNEL);
	else
		dma_fence_wait(pending, false);
	dma_resv_unlock(resv);
}

/**
 * kfd_criu_bo_bounce_free - free a bounce buffer
 * @bounce: from kfd_criu_bo_bounce_alloc()
 * @pending: a copy that may still use it, or NULL
 *
 * Does not wait for @pending: the buffer's pages are released once it
 * signaled.
 */
void kfd_criu_bo_bounce_free(void *bounce, struct dma_fence *pending)
{
	struct kfd_criu_bounce *b = bounce;

	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_bo_bounce_free, bounce, pending);
	kfd_criu_bounce_keep_until(b, pending);
	amdgpu_bo_free_kernel(&b->bo, NULL, &b->cpu);
	amdgpu_amdkfd_unreserve_mem_limit(b->adev, b->size,
					  KFD_IOC_ALLOC_MEM_FLAGS_GTT, -1);
	kfree(b);
}

/**
 * kfd_criu_bo_vram_epoch - how often a GPU of the process lost its VRAM
 * @pdd: the process's per-GPU data
 *
 * A dump compares the value at its BO snapshot with the one after the
 * last copy, a restore the value when it creates the BOs with the one
 * after the last copy: a reset that lost VRAM in between lost contents.
 *
 * Return: the device's VRAM-lost count.
 */
int kfd_criu_bo_vram_epoch(struct kfd_process_device *pdd)
{
	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_bo_vram_epoch, pdd);
	return atomic_read(&pdd->dev->adev->vram_lost_counter);
}

static int kfd_criu_bo_copy_pages(struct amdgpu_bo *bo, u64 offset,
				  void *buf, u32 len, bool to_bo)
{
	unsigned long first = offset >> PAGE_SHIFT;
	unsigned long last = (offset + len - 1) >> PAGE_SHIFT;
	struct ttm_bo_kmap_obj map;
	bool is_iomem;
	void *virt;
	int ret;

	ret = ttm_bo_kmap(&bo->tbo, first, last - first + 1, &map);
	if (ret)
		return ret;
	virt = ttm_kmap_obj_virtual(&map, &is_iomem) + offset_in_page(offset);
	if (is_iomem && to_bo)
		memcpy_toio((void __iomem *)virt, buf, len);
	else if (is_iomem)
		memcpy_fromio(buf, (void __iomem *)virt, len);
	else if (to_bo)
		memcpy(virt, buf, len);
	else
		memcpy(buf, virt, len);
	ttm_bo_kunmap(&map);
	return 0;
}

/* Waits for the fences of @usage in @resv; only a fatal signal ends it. */
static int kfd_criu_bo_wait_killable(struct dma_resv *resv,
				     enum dma_resv_usage usage)
{
	struct dma_resv_iter cursor;
	struct dma_fence *fence;
	int ret = 0;

	dma_resv_assert_held(resv);
	dma_resv_for_each_fence(&cursor, resv, usage, fence) {
		ret = kfd_criu_fence_wait_killable(fence);
		if (ret)
			break;
	}
	return ret;
}

/*
 * A piece of a VRAM BO by the copy engine. A copy that fails part way
 * still hands back the fence of what it submitted, which must be waited
 * for like any other.
 */
static int kfd_criu_bo_copy_engine(struct amdgpu_bo *bo, u64 offset,
				   struct kfd_criu_bounce *b, u32 at, u32 len,
				   bool to_bo, struct dma_fence **fence,
				   struct kfd_criu_copy_stats *st)
{
	struct amdgpu_device *adev = amdgpu_ttm_adev(bo->tbo.bdev);
	struct amdgpu_copy_mem vram = {
		.bo = &bo->tbo, .mem = bo->tbo.resource, .offset = offset,
	};
	struct amdgpu_copy_mem gtt = {
		.bo = &b->bo->tbo, .mem = b->bo->tbo.resource, .offset = at,
	};
	struct dma_fence *next = NULL;
	int ret, idx;

	if (!drm_dev_enter(adev_to_drm(adev), &idx))
		return -EIO;
	if (!adev->mman.buffer_funcs_enabled) {
		dev_warn_ratelimited(adev->dev,
				     "CRIU image: no copy engine for VRAM BO contents\n");
		ret = -EIO;
		goto out;
	}
	ret = amdgpu_ttm_copy_mem(adev, to_bo ? &gtt : &vram,
				  to_bo ? &vram : &gtt, len, false, &next);
	if (next) {
		/* One entity: the last fence signals after the others */
		dma_fence_put(*fence);
		*fence = next;
	}
	if (!ret)
		st->engine_bytes += len;
out:
	drm_dev_exit(idx);
	return ret;
}

/* A piece within one copy of the BO: starts the engine or copies now. */
static int kfd_criu_bo_copy_segment(struct amdgpu_bo *bo, u64 offset,
				    struct kfd_criu_bounce *b, u32 at,
				    u32 len, bool to_bo,
				    struct dma_fence **fence,
				    struct kfd_criu_copy_stats *st)
{
	int ret;

	if (bo->tbo.resource->mem_type == TTM_PL_VRAM)
		return kfd_criu_bo_copy_engine(bo, offset, b, at, len, to_bo,
					       fence, st);
	if (!bo->tbo.ttm)
		return -EIO;
	ret = kfd_criu_bo_copy_pages(bo, offset, b->cpu + at, len, to_bo);
	if (!ret)
		st->cpu_bytes += len;
	return ret;
}

/* Whatever failed in the device, the caller sees -EIO. */
static int kfd_criu_bo_copy_errno(int ret)
{
	if (!ret || ret == -EINTR || ret == -ENOMEM)
		return ret;
	if (ret == -ERESTARTSYS)
		return -EINTR;
	pr_warn_ratelimited("CRIU image: copy of BO contents failed: %d\n", ret);
	return -EIO;
}

/**
 * kfd_criu_bo_copy - copy a piece of a BO to or from a bounce buffer
 * @mem: the BO, which the caller keeps from being freed
 * @offset: byte offset in its VA range (an AQL queue buffer's second
 *	mapping shows its first half again)
 * @bounce: bounce buffer on the BO's device
 * @cpu: its kernel mapping
 * @len: bytes, at most the bounce buffer's size
 * @to_bo: restore direction
 * @fence: receives the copy engine's fence, or NULL when done already;
 *	set on failure too when part of the copy was submitted
 * @st: counts the bytes per path
 *
 * Context: may sleep; takes the BO's reservation.
 * Return: 0, -EINTR for a fatal signal, -ENOMEM, or -EIO for any failure
 * of the device or of the copy.
 */
int kfd_criu_bo_copy(struct kgd_mem *mem, u64 offset, void *bounce, void *cpu,
		     u32 len, bool to_bo, struct dma_fence **fence,
		     struct kfd_criu_copy_stats *st)
{
	struct kfd_criu_bounce *b = bounce;
	struct amdgpu_bo *bo = mem->bo;
	u64 bo_size = amdgpu_bo_size(bo);
	struct dma_resv *resv;
	u32 at = 0, n;
	int ret;

	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_bo_copy, mem, offset, bounce, cpu,
				   len, to_bo, fence, st);
	*fence = NULL;
	if (WARN_ON_ONCE(amdgpu_ttm_adev(bo->tbo.bdev) != b->adev))
		return -EIO;
	resv = bo->tbo.base.resv;
	dma_resv_lock(resv, NULL);
	ret = dma_resv_reserve_fences(resv, 1);
	if (!ret)
		ret = kfd_criu_bo_wait_killable(resv, dma_resv_usage_rw(to_bo));
	if (!ret && !bo->tbo.resource)
		ret = -EIO;
	while (!ret && at < len) {
		n = min_t(u64, len - at, bo_size - (offset + at) % bo_size);
		ret = kfd_criu_bo_copy_segment(bo, (offset + at) % bo_size, b,
					       at, n, to_bo, fence, st);
		at += n;
	}
	/* Moves and frees of the BO wait for the copy */
	if (*fence)
		dma_resv_add_fence(resv, *fence, to_bo ? DMA_RESV_USAGE_KERNEL :
					DMA_RESV_USAGE_BOOKKEEP);
	dma_resv_unlock(resv);
	return kfd_criu_bo_copy_errno(ret);
}
