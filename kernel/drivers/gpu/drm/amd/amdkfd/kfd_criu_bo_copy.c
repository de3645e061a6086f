// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: CRIU image mode - copying BO contents on amdgpu
 *
 * The device half of the pipelined transfers of kfd_criu_xfer.c: bounce
 * buffers and the copy of one piece of a BO to or from one.
 *
 * A bounce buffer is a pinned, kernel-mapped GTT BO of the operation's
 * own (amdgpu_bo_create_kernel()), bound in the GART, so the copy engine
 * reaches it and the CPU reads or fills it in place. Its size comes from
 * the ``criu_bounce_kib`` module parameter; two of them per operation.
 *
 * A piece of a VRAM BO is copied by the buffer functions ring, the copy
 * engine TTM uses for its own moves (amdgpu_ttm_copy_mem_to_mem()), which
 * walks VRAM that is not contiguous and reaches VRAM the CPU cannot see.
 * The copy does not wait for the BO's fences through the ring: the KFD
 * eviction fence would then evict the process. The BO's kernel fences
 * (a move, the clear of new VRAM) are waited for first, with the BO
 * reserved, and the copy's fence is added to the BO as a kernel fence,
 * so a move or free of the BO waits for the copy in turn.
 *
 * Without a copy engine (the ring is off, e.g. during a reset) the CPU
 * copies VRAM through amdgpu_device_vram_access(), the BAR where it
 * reaches and MM_INDEX/MM_DATA elsewhere; GTT and system memory BOs are
 * always copied by the CPU from their pages. Neither path uses the
 * device's shared debug access page. How many bytes took which path is
 * counted per operation and logged at debug level.
 */

#include <linux/dma-fence.h>
#include <linux/dma-resv.h>
#include <linux/io.h>
#include <linux/moduleparam.h>

#include <drm/ttm/ttm_bo.h>

#include "amdgpu_amdkfd.h"
#include "amdgpu_object.h"
#include "amdgpu_res_cursor.h"
#include "amdgpu_ttm.h"
#include "kfd_criu.h"
#include "kfd_criu_xfer.h"
#include "kfd_priv.h"

static unsigned int kfd_criu_bounce_kib = 8192;
module_param_named(criu_bounce_kib, kfd_criu_bounce_kib, uint, 0644);
MODULE_PARM_DESC(criu_bounce_kib,
		 "CRIU image mode: KiB of each of the two GTT bounce buffers a checkpoint or restore copies BO contents through (default 8192, 512 to 65536)");

/**
 * kfd_criu_bo_bounce_size - the bounce buffer size of a new operation
 *
 * Return: the module parameter's value in bytes, clamped and rounded.
 */
u32 kfd_criu_bo_bounce_size(void)
{
	return kfd_criu_xfer_bounce_size(READ_ONCE(kfd_criu_bounce_kib));
}

/**
 * kfd_criu_bo_bounce_alloc - allocate a bounce buffer
 * @dev: the &struct amdgpu_device the buffer is for
 * @size: bytes
 * @bounce: receives the &struct amdgpu_bo
 * @cpu: receives its kernel mapping
 *
 * Return: 0 or the errno of amdgpu_bo_create_kernel().
 */
int kfd_criu_bo_bounce_alloc(void *dev, u32 size, void **bounce, void **cpu)
{
	struct amdgpu_bo *bo = NULL;
	int ret;

	ret = amdgpu_bo_create_kernel(dev, size, PAGE_SIZE,
				      AMDGPU_GEM_DOMAIN_GTT, &bo, NULL, cpu);
	if (ret)
		return ret;
	*bounce = bo;
	return 0;
}

/**
 * kfd_criu_bo_bounce_free - free a bounce buffer
 * @bounce: from kfd_criu_bo_bounce_alloc()
 */
void kfd_criu_bo_bounce_free(void *bounce)
{
	struct amdgpu_bo *bo = bounce;

	amdgpu_bo_free_kernel(&bo, NULL, NULL);
}

static void kfd_criu_bo_copy_vram_cpu(struct amdgpu_bo *bo, u64 offset,
				      void *buf, u32 len, bool to_bo)
{
	struct amdgpu_device *adev = amdgpu_ttm_adev(bo->tbo.bdev);
	struct amdgpu_res_cursor cur;

	amdgpu_res_first(bo->tbo.resource, offset, len, &cur);
	while (cur.remaining) {
		amdgpu_device_vram_access(adev, cur.start, buf, cur.size,
					  to_bo);
		buf += cur.size;
		amdgpu_res_next(&cur, cur.size);
	}
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

/* A piece within one copy of the BO: starts the engine or copies now. */
static int kfd_criu_bo_copy_segment(struct amdgpu_bo *bo, u64 offset,
				    struct amdgpu_bo *bounce, u32 at,
				    void *cpu, u32 len, bool to_bo,
				    struct dma_fence **fence,
				    struct kfd_criu_copy_stats *st)
{
	struct amdgpu_device *adev = amdgpu_ttm_adev(bo->tbo.bdev);
	struct amdgpu_copy_mem vram = {
		.bo = &bo->tbo, .mem = bo->tbo.resource, .offset = offset,
	};
	struct amdgpu_copy_mem gtt = {
		.bo = &bounce->tbo, .mem = bounce->tbo.resource, .offset = at,
	};
	struct dma_fence *next = NULL;
	int ret;

	if (bo->tbo.resource->mem_type != TTM_PL_VRAM) {
		if (!bo->tbo.ttm)
			return -EIO;
		st->cpu_bytes += len;
		return kfd_criu_bo_copy_pages(bo, offset, cpu + at, len, to_bo);
	}
	if (!adev->mman.buffer_funcs_enabled) {
		st->cpu_bytes += len;
		kfd_criu_bo_copy_vram_cpu(bo, offset, cpu + at, len, to_bo);
		return 0;
	}
	ret = amdgpu_ttm_copy_mem_to_mem(adev, to_bo ? &gtt : &vram,
					 to_bo ? &vram : &gtt, len, false,
					 NULL, &next);
	if (ret)
		return ret;
	st->engine_bytes += len;
	/* One ring: the last fence of a piece signals after the others */
	dma_fence_put(*fence);
	*fence = next;
	return 0;
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
 * @fence: receives the copy engine's fence, or NULL when done already
 * @st: counts the bytes per path
 *
 * Context: may sleep; takes the BO's reservation.
 * Return: 0, -EINTR for a signal, -ENODATA for a BO without backing
 * store, -EINVAL for a bounce buffer of another device, or the errno of
 * the copy.
 */
int kfd_criu_bo_copy(struct kgd_mem *mem, u64 offset, void *bounce, void *cpu,
		     u32 len, bool to_bo, struct dma_fence **fence,
		     struct kfd_criu_copy_stats *st)
{
	struct amdgpu_bo *bo = mem->bo, *bbo = bounce;
	u64 bo_size = amdgpu_bo_size(bo);
	u32 at = 0, n;
	long lret;
	int ret;

	*fence = NULL;
	if (bo->tbo.bdev != bbo->tbo.bdev)
		return -EINVAL;
	ret = amdgpu_bo_reserve(bo, false);
	if (ret)
		return ret == -ERESTARTSYS ? -EINTR : ret;
	ret = dma_resv_reserve_fences(bo->tbo.base.resv, 1);
	if (ret)
		goto out;
	/* Moves and clears; not the KFD eviction fence (bookkeeping) */
	lret = dma_resv_wait_timeout(bo->tbo.base.resv, DMA_RESV_USAGE_KERNEL,
				     true, MAX_SCHEDULE_TIMEOUT);
	ret = lret < 0 ? lret : 0;
	if (!ret && !bo->tbo.resource)
		ret = -ENODATA;
	while (!ret && at < len) {
		n = min_t(u64, len - at, bo_size - (offset + at) % bo_size);
		ret = kfd_criu_bo_copy_segment(bo, (offset + at) % bo_size, bbo,
					       at, cpu, n, to_bo, fence, st);
		at += n;
	}
	if (*fence)
		dma_resv_add_fence(bo->tbo.base.resv, *fence,
				   DMA_RESV_USAGE_KERNEL);
out:
	amdgpu_bo_unreserve(bo);
	return ret == -ERESTARTSYS ? -EINTR : ret;
}
