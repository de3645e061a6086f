// SPDX-License-Identifier: GPL-2.0 OR MIT

/**
 * DOC: CRIU image mode - buffer objects and their contents
 *
 * Dump writes one BO record for each buffer object in each GPU's buffer
 * idr, walking the GPUs in per-GPU data order and each idr by ascending
 * handle, so the records come sorted by (gpu_index, handle): its VA, size,
 * allocation flags, handle, userptr address, the mmap offset as the
 * legacy CRIU dump computes it, and the GPUs it is mapped on (bit i for
 * p->pdds[i]). An AQL queue buffer is mapped twice in a row, so its record
 * covers both mappings, as its allocation did. BOs below the GPUVM
 * aperture, which the legacy dump skips, are refused instead, and so are
 * imported BOs (dma-buf), whose memory a restore could not share again.
 *
 * The contents of the VRAM and GTT BOs follow in BO_DATA records of
 * %KFD_CRIU_BO_CHUNK bytes, copied through the operation's own pair of
 * bounce buffers (kfd_criu_xfer.c, kfd_criu_bo_copy.c): the copy engine
 * fills one while the other is written to the stream. Each copy starts
 * under p->mutex, with the BO looked up again by its handle and
 * reserved, so a BO freed meanwhile fails the dump instead of being read
 * after it is gone, and the copy's fence joins the BO's, so a free that
 * comes later waits for the copy. What the copy must follow is waited for
 * there too; writing the stream and waiting for a copy hold no lock. A GPU
 * that lost its VRAM between the snapshot and the last copy fails the
 * dump with -EIO. Doorbell and MMIO BOs map registers, and userptr memory is the
 * process's own, which CRIU dumps with the rest of its memory.
 *
 * Restore creates each BO through the legacy CRIU restore path
 * (kfd_criu_restore_memory_of_gpu()): same VA, same idr handle, same
 * flags, with the normal allocation path's accounting limits. Checks
 * that path leaves to the ioctl come first, before anything is created:
 * the VA (and a userptr's address range) must not overlap an SVM range
 * of the process, host-visible VRAM needs a large BAR, doorbell and MMIO
 * BOs have their fixed sizes. Each BO is then mapped on the GPUs of its
 * record, and the contents are written back as BO_DATA records arrive,
 * through the restore's own bounce buffers: the next buffer is filled
 * from the stream while the copy engine empties the last one into its
 * BO, with p->mutex held throughout. Every copy has completed before
 * RESTORE returns; an unwind frees the BOs without waiting, as each
 * holds the fences of the copies into it.
 * The mmap offsets that changed (new GEM offsets, doorbells and MMIO of
 * another GPU) are reported so that the caller can fix the restored
 * process's mappings. kfd_criu_bos_unwind() unmaps and frees everything
 * created and takes their sizes off the VRAM usage counts again, in a
 * worker that no signal interrupts (kfd_criu_run_unwind()).
 */

#include <linux/bits.h>
#include <linux/dma-resv.h>
#include <linux/interval_tree.h>
#include <linux/io.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <kunit/static_stub.h>

#include <drm/ttm/ttm_bo.h>
#include <drm/ttm/ttm_device.h>
#include <drm/ttm/ttm_placement.h>

#include "amdgpu_amdkfd.h"
#include "amdgpu_object.h"
#include "amdgpu_ttm.h"
#include "kfd_criu.h"
#include "kfd_criu_xfer.h"
#include "kfd_priv.h"

/*
 * The calls into amdgpu that need a GPU. The KUnit tests put fake GPUs
 * behind them (kunit_activate_static_stub()); without KUnit the redirect
 * compiles to nothing.
 */
static bool kfd_criu_bo_on_vm(void *drm_priv, struct kgd_mem *mem)
{
	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_bo_on_vm, drm_priv, mem);
	return amdgpu_amdkfd_bo_mapped_to_dev(drm_priv, mem);
}

static int kfd_criu_bo_userptr(struct kgd_mem *mem, u64 *addr)
{
	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_bo_userptr, mem, addr);
	return amdgpu_ttm_tt_get_userptr(&mem->bo->tbo, addr);
}

static u64 kfd_criu_bo_gem_offset(struct kgd_mem *mem)
{
	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_bo_gem_offset, mem);
	return amdgpu_bo_mmap_offset(mem->bo);
}

static int kfd_criu_bo_alloc(struct kfd_process_device *pdd,
			     struct kfd_criu_bo_bucket *bucket,
			     struct kfd_criu_bo_priv_data *priv,
			     struct kgd_mem **mem)
{
	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_bo_alloc, pdd, bucket, priv, mem);
	return kfd_criu_restore_memory_of_gpu(pdd, bucket, priv, mem);
}

static int kfd_criu_bo_vm_map(struct kfd_process_device *pdd,
			      struct kgd_mem *mem)
{
	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_bo_vm_map, pdd, mem);
	return amdgpu_amdkfd_gpuvm_map_memory_to_gpu(pdd->dev->adev, mem,
						     pdd->drm_priv);
}

static int kfd_criu_bo_vm_sync(struct kgd_mem *mem)
{
	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_bo_vm_sync, mem);
	return amdgpu_amdkfd_gpuvm_sync_memory(amdgpu_ttm_adev(mem->bo->tbo.bdev),
					       mem, true);
}

static void kfd_criu_bo_tlb_flush(struct kfd_process_device *pdd)
{
	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_bo_tlb_flush, pdd);
	kfd_flush_tlb(pdd);
}

static int kfd_criu_bo_vm_unmap(struct kfd_process_device *pdd,
				struct kgd_mem *mem)
{
	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_bo_vm_unmap, pdd, mem);
	return amdgpu_amdkfd_gpuvm_unmap_memory_from_gpu(pdd->dev->adev, mem,
							 pdd->drm_priv);
}

static int kfd_criu_bo_release(struct kfd_process_device *pdd,
			       struct kgd_mem *mem)
{
	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_bo_release, pdd, mem);
	return amdgpu_amdkfd_gpuvm_free_memory_of_gpu(pdd->dev->adev, mem,
						      pdd->drm_priv, NULL);
}

/*
 * The sum, over the BOs with contents, of the VRAM-lost count of the GPU
 * each one is on (image GPUs placed by @st on restore, NULL on dump). The
 * counts only grow, so the sum changes when one of them does.
 */
static unsigned int kfd_criu_bos_vram_epoch(struct kfd_process *p,
					    const struct kfd_criu_bos_image *img,
					    const struct kfd_criu_gpus_restore *st)
{
	const struct kfd_criu_bo_rec *rec;
	struct kfd_process_device *pdd;
	unsigned int sum = 0;
	u32 i, gpu;

	for (i = 0; i < img->num_bos; i++) {
		rec = &img->bos[i];
		if (!kfd_criu_bo_has_contents(le32_to_cpu(rec->alloc_flags)))
			continue;
		gpu = le32_to_cpu(rec->gpu_index);
		pdd = st ? kfd_criu_gpus_pdd(p, st, gpu) : p->pdds[gpu];
		sum += kfd_criu_bo_vram_epoch(pdd);
	}
	return sum;
}

/* -EIO when a GPU of @p lost its VRAM since @img's epoch was taken. */
static int kfd_criu_bos_check_vram(struct kfd_process *p,
				   const struct kfd_criu_bos_image *img,
				   const struct kfd_criu_gpus_restore *st)
{
	if (kfd_criu_bos_vram_epoch(p, img, st) == img->vram_epoch)
		return 0;
	pr_warn_ratelimited("CRIU image: a GPU lost its VRAM while BO contents were copied\n");
	return -EIO;
}

/**
 * struct kfd_criu_bo_dump - what a dump's transfer works on
 * @w: the stream
 * @p: the paused process
 * @img: its BO records
 * @stats: bytes per copy path
 */
struct kfd_criu_bo_dump {
	struct kfd_criu_image_writer *w;
	struct kfd_process *p;
	const struct kfd_criu_bos_image *img;
	struct kfd_criu_copy_stats stats;
};

/**
 * struct kfd_criu_bo_restore_xfer - a restore's transfer into its BOs
 * @x: the pipeline
 * @img: the BO records and the BOs created for them
 * @st: where the image GPUs were placed
 * @stats: bytes per copy path
 */
struct kfd_criu_bo_restore_xfer {
	struct kfd_criu_xfer x;
	struct kfd_criu_bos_image *img;
	const struct kfd_criu_gpus_restore *st;
	struct kfd_criu_copy_stats stats;
};

static int kfd_criu_bo_restore_start(void *priv,
				     const struct kfd_criu_xfer_req *req,
				     void *bounce, void *cpu, bool to_bo,
				     struct dma_fence **fence)
{
	struct kfd_criu_bo_restore_xfer *rx = priv;

	return kfd_criu_bo_copy(rx->img->mems[req->index], req->offset, bounce,
				cpu, req->len, true, fence, &rx->stats);
}

static const struct kfd_criu_xfer_ops kfd_criu_bo_restore_ops = {
	.bounce_alloc = kfd_criu_bo_bounce_alloc,
	.bounce_free = kfd_criu_bo_bounce_free,
	.start = kfd_criu_bo_restore_start,
};

static int kfd_criu_bo_restore_xfer_new(struct kfd_criu_bos_image *img,
					const struct kfd_criu_gpus_restore *st)
{
	struct kfd_criu_bo_restore_xfer *rx;

	rx = kzalloc_obj(*rx, GFP_KERNEL_ACCOUNT);
	if (!rx)
		return -ENOMEM;
	rx->img = img;
	rx->st = st;
	kfd_criu_xfer_init(&rx->x, &kfd_criu_bo_restore_ops, rx,
			   KFD_CRIU_XFER_BOUNCE_SIZE, true);
	img->xfer = rx;
	return 0;
}

/* Frees the bounce buffers; each keeps the copy that may still use it. */
static void kfd_criu_bo_restore_xfer_free(struct kfd_criu_bos_image *img)
{
	if (!img->xfer)
		return;
	kfd_criu_xfer_fini(&img->xfer->x);
	kfree(img->xfer);
	img->xfer = NULL;
}

/**
 * kfd_criu_bos_image_free - free what a BOs image holds
 * @img: image from a snapshot or a restore, may be partly filled
 */
void kfd_criu_bos_image_free(struct kfd_criu_bos_image *img)
{
	kfd_criu_bo_restore_xfer_free(img);
	kvfree(img->bos);
	kvfree(img->mems);
	memset(img, 0, sizeof(*img));
}

/* The VA range a BO covers: an AQL queue buffer is mapped twice. */
static u64 kfd_criu_bo_va_size(struct kgd_mem *mem)
{
	return (u64)amdgpu_bo_size(mem->bo) << (mem->aql_queue ? 1 : 0);
}

/**
 * kfd_criu_bo_stream_bytes - stream bytes of a BO's contents
 * @size: the BO record's size
 * @alloc_flags: its allocation flags
 *
 * Return: the bytes of the BO_DATA records carrying its contents, 0 for a
 * BO without contents in the image.
 */
u64 kfd_criu_bo_stream_bytes(u64 size, u32 alloc_flags)
{
	u64 chunks;

	if (!kfd_criu_bo_has_contents(alloc_flags) ||
	    kfd_criu_chunk_count(size, KFD_CRIU_BO_CHUNK, &chunks))
		return 0;
	return size + chunks * (KFD_CRIU_RECORD_OVERHEAD +
				sizeof(struct kfd_criu_bo_data_hdr));
}

/**
 * kfd_criu_bo_fixed_offset - the mmap offset of a register BO
 * @alloc_flags: the BO's allocation flags
 * @gpu_id: topology gpu_id of the GPU that owns it
 *
 * Doorbell and MMIO remap BOs are mapped through /dev/kfd at an offset
 * that names the GPU, as the legacy CRIU dump records it. Other BOs are
 * mapped through a render node at the offset of their GEM object, which
 * only the allocation decides.
 *
 * Return: the offset, or 0 for a BO whose offset is not fixed.
 */
u64 kfd_criu_bo_fixed_offset(u32 alloc_flags, u32 gpu_id)
{
	if (alloc_flags & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL)
		return KFD_MMAP_TYPE_DOORBELL | KFD_MMAP_GPU_ID(gpu_id);
	if (alloc_flags & KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP)
		return KFD_MMAP_TYPE_MMIO | KFD_MMAP_GPU_ID(gpu_id);
	return 0;
}

static u64 kfd_criu_bo_mmap_offset(struct kfd_process_device *pdd,
				   struct kgd_mem *mem)
{
	u64 offset = kfd_criu_bo_fixed_offset(mem->alloc_flags, pdd->dev->id);

	return offset ? offset : kfd_criu_bo_gem_offset(mem);
}

/*
 * BOs below the GPUVM aperture the legacy dump skips; the image refuses
 * them instead. An imported BO shares its memory with its exporter, which
 * a restore could only replace by a private copy.
 */
static int kfd_criu_bo_carried(struct kfd_process_device *pdd,
			       struct kgd_mem *mem)
{
	if (mem->va && mem->va <= pdd->gpuvm_base) {
		pr_warn_ratelimited("CRIU image: BO at 0x%llx below the GPUVM aperture\n",
				    mem->va);
		return -EOPNOTSUPP;
	}
	if (mem->is_imported) {
		pr_warn_ratelimited("CRIU image: imported BO at 0x%llx\n",
				    mem->va);
		return -EOPNOTSUPP;
	}
	/* KFD creates none; the copy engine would need the TMZ path */
	if (amdgpu_bo_encrypted(mem->bo)) {
		pr_warn_ratelimited("CRIU image: encrypted BO at 0x%llx\n",
				    mem->va);
		return -EOPNOTSUPP;
	}
	return 0;
}

/**
 * kfd_criu_bos_count - what the BO part of an image of a process holds
 * @p: the process
 * @num_bos: receives the number of BOs
 * @stream_bytes: receives the stream bytes of the BO and BO_DATA records
 *
 * Counts every BO; kfd_criu_bos_snapshot() refuses those the image
 * cannot carry.
 *
 * Context: p->mutex held.
 */
void kfd_criu_bos_count(struct kfd_process *p, u32 *num_bos,
			u64 *stream_bytes)
{
	struct kgd_mem *mem;
	int id;
	u32 i;

	lockdep_assert_held(&p->mutex);

	*num_bos = 0;
	*stream_bytes = 0;
	for (i = 0; i < p->n_pdds; i++) {
		idr_for_each_entry(&p->pdds[i]->alloc_idr, mem, id) {
			(*num_bos)++;
			*stream_bytes += KFD_CRIU_RECORD_OVERHEAD +
				sizeof(struct kfd_criu_bo_rec) +
				kfd_criu_bo_stream_bytes(kfd_criu_bo_va_size(mem),
							 mem->alloc_flags);
		}
	}
}

static u64 kfd_criu_bo_mapped_gpus(struct kfd_process *p, struct kgd_mem *mem)
{
	void *drm_priv;
	u64 mask = 0;
	u32 i;

	for (i = 0; i < p->n_pdds; i++) {
		drm_priv = p->pdds[i]->drm_priv;
		if (drm_priv && kfd_criu_bo_on_vm(drm_priv, mem))
			mask |= BIT_ULL(i);
	}
	return mask;
}

static int kfd_criu_bo_to_rec(struct kfd_process *p, u32 gpu_index, int id,
			      struct kgd_mem *mem, struct kfd_criu_bo_rec *rec)
{
	u64 userptr = 0;
	int ret;

	if (mem->alloc_flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR) {
		ret = kfd_criu_bo_userptr(mem, &userptr);
		if (ret)
			return ret;
	}
	memset(rec, 0, sizeof(*rec));
	rec->va = cpu_to_le64(mem->va);
	rec->size = cpu_to_le64(kfd_criu_bo_va_size(mem));
	rec->userptr = cpu_to_le64(userptr);
	rec->mmap_offset =
		cpu_to_le64(kfd_criu_bo_mmap_offset(p->pdds[gpu_index], mem));
	rec->mapped_gpus = cpu_to_le64(kfd_criu_bo_mapped_gpus(p, mem));
	rec->alloc_flags = cpu_to_le32(mem->alloc_flags);
	rec->handle = cpu_to_le32(id);
	rec->gpu_index = cpu_to_le32(gpu_index);
	if (p->signal_handle ==
	    MAKE_HANDLE(p->pdds[gpu_index]->user_gpu_id, id))
		rec->flags = cpu_to_le32(KFD_CRIU_BO_EVENT_PAGE);
	return 0;
}

/*
 * An event page the records do not mark would come back as a kernel
 * page, whose slots the GPU never writes.
 */
static int kfd_criu_bos_check_event_page(struct kfd_process *p,
					 const struct kfd_criu_bos_image *img)
{
	u32 i, marked = 0;

	for (i = 0; i < img->num_bos; i++)
		if (le32_to_cpu(img->bos[i].flags) & KFD_CRIU_BO_EVENT_PAGE)
			marked++;
	if (marked == !!p->signal_handle)
		return 0;
	pr_warn_ratelimited("CRIU image: the event page 0x%llx is no BO the image can carry\n",
			    p->signal_handle);
	return -EOPNOTSUPP;
}

static int kfd_criu_bos_fill(struct kfd_process *p,
			     struct kfd_criu_bos_image *img, u32 num)
{
	struct kgd_mem *mem;
	int id, ret;
	u32 i, n = 0;

	for (i = 0; i < p->n_pdds; i++) {
		idr_for_each_entry(&p->pdds[i]->alloc_idr, mem, id) {
			if (WARN_ON(n == num))
				return -EINVAL;
			ret = kfd_criu_bo_carried(p->pdds[i], mem);
			if (!ret)
				ret = kfd_criu_bo_to_rec(p, i, id, mem,
							 &img->bos[n++]);
			if (ret)
				return ret;
		}
	}
	img->num_bos = n;
	img->bos_read = n;
	return kfd_criu_bos_check_event_page(p, img);
}

/**
 * kfd_criu_bos_snapshot - record the BOs of a process for a dump
 * @p: the process, paused
 * @img: receives the records; free it with kfd_criu_bos_image_free()
 *
 * The records pass the same checks as a restored image's, so a dump never
 * writes BOs that restore would refuse.
 *
 * Context: p->mutex held.
 * Return: 0, -ENOMEM, -EOPNOTSUPP for BOs the image cannot carry, or the
 * errno of reading a userptr BO's address.
 */
int kfd_criu_bos_snapshot(struct kfd_process *p,
			  struct kfd_criu_bos_image *img)
{
	u64 bytes;
	u32 num;
	int ret;

	lockdep_assert_held(&p->mutex);

	memset(img, 0, sizeof(*img));
	kfd_criu_bos_count(p, &num, &bytes);
	if (!num)
		return 0;
	if (num > KFD_CRIU_MAX_BOS) {
		pr_warn_ratelimited("CRIU image: cannot carry %u BOs\n", num);
		return -EOPNOTSUPP;
	}
	img->bos = kvcalloc(num, sizeof(*img->bos), GFP_KERNEL_ACCOUNT);
	if (!img->bos)
		return -ENOMEM;
	ret = kfd_criu_bos_fill(p, img, num);
	if (!ret)
		img->vram_epoch = kfd_criu_bos_vram_epoch(p, img, NULL);
	if (!ret) {
		ret = kfd_criu_check_bos(img->bos, img->num_bos, p->n_pdds);
		if (ret && ret != -ENOMEM) {
			pr_warn_ratelimited("CRIU image: BOs the image cannot carry: %d\n",
					    ret);
			ret = -EOPNOTSUPP;
		}
	}
	if (ret)
		kfd_criu_bos_image_free(img);
	return ret;
}

/* The BO a record was made from, if it is still there unchanged. */
static struct kgd_mem *kfd_criu_bo_lookup_locked(struct kfd_process *p,
						 const struct kfd_criu_bo_rec *rec)
{
	u32 gpu_index = le32_to_cpu(rec->gpu_index);
	struct kgd_mem *mem;

	lockdep_assert_held(&p->mutex);

	if (gpu_index >= p->n_pdds)
		return NULL;
	mem = idr_find(&p->pdds[gpu_index]->alloc_idr, le32_to_cpu(rec->handle));
	if (!mem || mem->va != le64_to_cpu(rec->va) ||
	    mem->alloc_flags != le32_to_cpu(rec->alloc_flags) ||
	    kfd_criu_bo_va_size(mem) != le64_to_cpu(rec->size))
		return NULL;
	return mem;
}

/* Starts a dump copy: the BO is looked up again, under p->mutex. */
static int kfd_criu_bo_dump_start(void *priv,
				  const struct kfd_criu_xfer_req *req,
				  void *bounce, void *cpu, bool to_bo,
				  struct dma_fence **fence)
{
	struct kfd_criu_bo_dump *d = priv;
	const struct kfd_criu_bo_rec *rec = &d->img->bos[req->index];
	struct kgd_mem *mem;
	int ret;

	mutex_lock(&d->p->mutex);
	mem = kfd_criu_bo_lookup_locked(d->p, rec);
	ret = mem ? kfd_criu_bo_copy(mem, req->offset, bounce, cpu, req->len,
				     false, fence, &d->stats) : -EBUSY;
	mutex_unlock(&d->p->mutex);
	if (ret == -EBUSY)
		pr_debug("CRIU image: BO 0x%llx changed during the dump\n",
			 le64_to_cpu(rec->va));
	return ret;
}

/* Writes a copied piece as BO_DATA records of KFD_CRIU_BO_CHUNK bytes. */
static int kfd_criu_bo_dump_consume(void *priv,
				    const struct kfd_criu_xfer_req *req,
				    const void *cpu)
{
	struct kfd_criu_bo_dump *d = priv;
	u64 size = le64_to_cpu(d->img->bos[req->index].size);
	struct kfd_criu_bo_data_hdr hdr;
	u32 done, len;
	int ret = 0;

	for (done = 0; !ret && done < req->len; done += len) {
		len = kfd_criu_chunk_len(size, req->offset + done,
					 KFD_CRIU_BO_CHUNK);
		memset(&hdr, 0, sizeof(hdr));
		hdr.bo_index = cpu_to_le32(req->index);
		hdr.offset = cpu_to_le64(req->offset + done);
		ret = kfd_criu_image_begin_record(d->w, KFD_CRIU_REC_BO_DATA,
						  KFD_CRIU_RECORD_MANDATORY,
						  sizeof(hdr) + len);
		if (!ret)
			ret = kfd_criu_image_write_data(d->w, &hdr, sizeof(hdr));
		if (!ret)
			ret = kfd_criu_image_write_data(d->w, cpu + done, len);
		if (!ret)
			ret = kfd_criu_image_finish_record(d->w);
	}
	return ret;
}

static const struct kfd_criu_xfer_ops kfd_criu_bo_dump_ops = {
	.bounce_alloc = kfd_criu_bo_bounce_alloc,
	.bounce_free = kfd_criu_bo_bounce_free,
	.start = kfd_criu_bo_dump_start,
	.consume = kfd_criu_bo_dump_consume,
};

/* Queues the copies of one BO's contents, a bounce buffer at a time. */
static int kfd_criu_bo_dump_one(struct kfd_criu_bo_dump *d,
				struct kfd_criu_xfer *x, u32 index)
{
	const struct kfd_criu_bo_rec *rec = &d->img->bos[index];
	struct kfd_criu_xfer_req req = { .index = index };
	u64 size = le64_to_cpu(rec->size);
	int ret = 0;

	/* The process's GPUs stay while its file is open */
	req.dev = d->p->pdds[le32_to_cpu(rec->gpu_index)]->dev->adev;
	for (req.offset = 0; !ret && req.offset < size;
	     req.offset += req.len) {
		req.len = min_t(u64, x->bounce_size, size - req.offset);
		ret = kfd_criu_xfer_read(x, &req);
	}
	return ret;
}

/**
 * kfd_criu_bos_write - write the BO records
 * @w: the stream, right after the EVENT records
 * @img: records from kfd_criu_bos_snapshot()
 *
 * Return: 0 or the writer's error.
 */
int kfd_criu_bos_write(struct kfd_criu_image_writer *w,
		       const struct kfd_criu_bos_image *img)
{
	int ret = 0;
	u32 i;

	for (i = 0; !ret && i < img->num_bos; i++)
		ret = kfd_criu_image_write_record(w, KFD_CRIU_REC_BO,
						  KFD_CRIU_RECORD_MANDATORY,
						  &img->bos[i],
						  sizeof(img->bos[i]));
	return ret;
}

/**
 * kfd_criu_bos_dump_contents - write the BOs' contents as BO_DATA records
 * @w: the stream, after all other metadata records
 * @p: the process the records were taken from, still paused
 * @img: records from kfd_criu_bos_snapshot()
 *
 * Copies go through the dump's own bounce buffers (kfd_criu_xfer.c), the
 * next piece being copied while the last one is written. Each copy starts
 * under p->mutex with the BO looked up again; the stream is written and
 * the copies are waited for without any lock held.
 *
 * Context: p->mutex not held.
 * Return: 0, -ENOMEM, -EINTR, -EBUSY for a BO the process freed or
 * replaced since the snapshot, the errno of a copy, or the writer's error.
 */
int kfd_criu_bos_dump_contents(struct kfd_criu_image_writer *w,
			       struct kfd_process *p,
			       const struct kfd_criu_bos_image *img)
{
	struct kfd_criu_bo_dump d = { .w = w, .p = p, .img = img };
	struct kfd_criu_xfer x;
	int ret = 0;
	u32 i;

	if (!img->num_bos)
		return 0;
	kfd_criu_xfer_init(&x, &kfd_criu_bo_dump_ops, &d,
			   KFD_CRIU_XFER_BOUNCE_SIZE, false);
	for (i = 0; !ret && i < img->num_bos; i++)
		if (kfd_criu_bo_has_contents(le32_to_cpu(img->bos[i].alloc_flags)))
			ret = kfd_criu_bo_dump_one(&d, &x, i);
	if (!ret)
		ret = kfd_criu_xfer_flush(&x);
	kfd_criu_xfer_fini(&x);
	if (!ret)
		ret = kfd_criu_bos_check_vram(p, img, NULL);
	pr_debug("CRIU image: dumped %llu BO bytes by the copy engine, %llu by the CPU: %d\n",
		 d.stats.engine_bytes, d.stats.cpu_bytes, ret);
	return ret;
}

/**
 * kfd_criu_bos_prepare - make room for the BO records PROCESS announced
 * @img: empty image
 * @num_bos: PROCESS's num_bos
 *
 * Return: 0, -EINVAL for more than %KFD_CRIU_MAX_BOS, or -ENOMEM.
 */
int kfd_criu_bos_prepare(struct kfd_criu_bos_image *img, u32 num_bos)
{
	if (img->bos || num_bos > KFD_CRIU_MAX_BOS)
		return -EINVAL;
	if (!num_bos)
		return 0;
	img->bos = kvcalloc(num_bos, sizeof(*img->bos), GFP_KERNEL_ACCOUNT);
	if (!img->bos)
		return -ENOMEM;
	img->num_bos = num_bos;
	return 0;
}

/**
 * kfd_criu_bos_collect - keep one BO record of a restore stream
 * @img: image set up by kfd_criu_bos_prepare()
 * @rec: a BO record, as the reader returned it
 * @payload: its payload
 *
 * Return: 0, or -EINVAL for another record type, a wrong length or more
 * BO records than PROCESS announced.
 */
int kfd_criu_bos_collect(struct kfd_criu_bos_image *img,
			 const struct kfd_criu_record *rec,
			 const void *payload)
{
	if (rec->type != KFD_CRIU_REC_BO || rec->length != sizeof(*img->bos) ||
	    img->bos_read >= img->num_bos)
		return -EINVAL;
	memcpy(&img->bos[img->bos_read++], payload, sizeof(*img->bos));
	return 0;
}

/**
 * kfd_criu_bos_validate - check collected BO records as a set
 * @img: records collected from a stream
 * @num_gpus: GPU records of the image
 *
 * Also points the BO_DATA cursor at the first expected contents chunk.
 *
 * Return: 0, -ENOMEM, -EEXIST for a handle that repeats, or -EINVAL for a
 * missing or invalid record, records out of order or overlapping VAs.
 */
int kfd_criu_bos_validate(struct kfd_criu_bos_image *img, u32 num_gpus)
{
	int ret;

	if (img->bos_read != img->num_bos)
		return -EINVAL;
	ret = kfd_criu_check_bos(img->bos, img->num_bos, num_gpus);
	if (!ret)
		kfd_criu_bo_cursor_init(&img->cursor, img->bos, img->num_bos);
	return ret;
}

/**
 * kfd_criu_bos_needed_gpus - the image GPUs the BOs need a VM on
 * @img: validated BO records
 *
 * Return: BIT(image GPU index) of every GPU that owns a BO or has one
 * mapped.
 */
u64 kfd_criu_bos_needed_gpus(const struct kfd_criu_bos_image *img)
{
	u64 mask = 0;
	u32 i;

	for (i = 0; i < img->num_bos; i++)
		mask |= le64_to_cpu(img->bos[i].mapped_gpus) |
			BIT_ULL(le32_to_cpu(img->bos[i].gpu_index));
	return mask;
}

/**
 * kfd_criu_bos_event_page - the handle the restored event page BO has
 * @p: the process being restored, its BOs created
 * @img: validated BO records
 * @st: where the image GPUs were placed
 *
 * A restored BO keeps its handle, and its GPU the gpu_id the image
 * recorded, so this is the handle the process passed as its event page.
 *
 * Context: p->mutex held.
 * Return: the handle, as AMDKFD_IOC_ALLOC_MEMORY_OF_GPU returns it, of the
 * BO the image marks %KFD_CRIU_BO_EVENT_PAGE, or 0 when none is.
 */
u64 kfd_criu_bos_event_page(struct kfd_process *p,
			    const struct kfd_criu_bos_image *img,
			    const struct kfd_criu_gpus_restore *st)
{
	const struct kfd_criu_bo_rec *rec;
	struct kfd_process_device *pdd;
	u32 i;

	lockdep_assert_held(&p->mutex);

	for (i = 0; i < img->num_bos; i++) {
		rec = &img->bos[i];
		if (!(le32_to_cpu(rec->flags) & KFD_CRIU_BO_EVENT_PAGE))
			continue;
		pdd = kfd_criu_gpus_pdd(p, st, le32_to_cpu(rec->gpu_index));
		return MAKE_HANDLE(pdd->user_gpu_id, le32_to_cpu(rec->handle));
	}
	return 0;
}

/**
 * kfd_criu_bos_offsets_needed - most mmap offsets a restore can change
 * @img: validated BO records
 * @local_gpu_ids: for each image GPU, the topology gpu_id of the local GPU
 *	it was placed on
 *
 * A doorbell or MMIO BO keeps its offset on a GPU with the same topology
 * gpu_id. Every other BO with an offset gets the offset of a new GEM
 * object, which is only known once it exists, so it is counted.
 *
 * Return: the number of offset map entries a restore may fill.
 */
u32 kfd_criu_bos_offsets_needed(const struct kfd_criu_bos_image *img,
				const u32 *local_gpu_ids)
{
	const struct kfd_criu_bo_rec *rec;
	u64 old, fixed;
	u32 i, n = 0, gpu_id;

	for (i = 0; i < img->num_bos; i++) {
		rec = &img->bos[i];
		old = le64_to_cpu(rec->mmap_offset);
		gpu_id = local_gpu_ids[le32_to_cpu(rec->gpu_index)];
		fixed = kfd_criu_bo_fixed_offset(le32_to_cpu(rec->alloc_flags),
						 gpu_id);
		if (old && old != fixed)
			n++;
	}
	return n;
}

static bool kfd_criu_svm_overlap(struct kfd_process *p, u64 start, u64 size)
{
	bool ret = false;

	if (!IS_ENABLED(CONFIG_HSA_AMD_SVM))
		return false;
	mutex_lock(&p->svms.lock);
	if (interval_tree_iter_first(&p->svms.objects, start >> PAGE_SHIFT,
				     (start + size - 1) >> PAGE_SHIFT))
		ret = true;
	mutex_unlock(&p->svms.lock);
	return ret;
}

/* What the allocation ioctl checks before it calls the allocator. */
static int kfd_criu_bo_check_target(struct kfd_process *p,
				    struct kfd_process_device *pdd,
				    const struct kfd_criu_bo_rec *rec)
{
	u32 flags = le32_to_cpu(rec->alloc_flags);
	u64 size = le64_to_cpu(rec->size);
	u64 va = le64_to_cpu(rec->va);

	if ((va || !(flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM)) &&
	    kfd_criu_svm_overlap(p, va, size))
		return -EADDRINUSE;
	if ((flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR) &&
	    kfd_criu_svm_overlap(p, le64_to_cpu(rec->userptr), size))
		return -EADDRINUSE;
	if ((flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM) &&
	    (flags & KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC) &&
	    !kfd_dev_is_large_bar(pdd->dev))
		return -EINVAL;
	if ((flags & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL) &&
	    size != kfd_doorbell_process_slice(pdd->dev->kfd))
		return -EINVAL;
	if ((flags & KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP) && size != PAGE_SIZE)
		return -EINVAL;
	return 0;
}

/**
 * kfd_criu_bos_check_target - check the BOs against the process and GPUs
 * @p: the process being restored
 * @img: validated BO records
 * @st: where the image GPUs were placed
 *
 * The checks the codec cannot make, before anything is created.
 *
 * Context: p->mutex held.
 * Return: 0, -EADDRINUSE for a BO over an SVM range, or -EINVAL for
 * host-visible VRAM on a GPU with a small BAR or a doorbell or MMIO BO of
 * the wrong size.
 */
int kfd_criu_bos_check_target(struct kfd_process *p,
			      const struct kfd_criu_bos_image *img,
			      const struct kfd_criu_gpus_restore *st)
{
	const struct kfd_criu_bo_rec *rec;
	struct kfd_process_device *pdd;
	int ret;
	u32 i;

	lockdep_assert_held(&p->mutex);

	for (i = 0; i < img->num_bos; i++) {
		rec = &img->bos[i];
		pdd = kfd_criu_gpus_pdd(p, st, le32_to_cpu(rec->gpu_index));
		ret = kfd_criu_bo_check_target(p, pdd, rec);
		if (ret) {
			pr_warn_ratelimited("CRIU image: BO at 0x%llx cannot be restored here: %d\n",
					    le64_to_cpu(rec->va), ret);
			return ret;
		}
	}
	return 0;
}

static int kfd_criu_bo_map(struct kfd_process *p,
			   const struct kfd_criu_bo_rec *rec, struct kgd_mem *mem,
			   const struct kfd_criu_gpus_restore *st)
{
	u64 mapped = le64_to_cpu(rec->mapped_gpus);
	struct kfd_process_device *peer;
	int ret;

	for (; mapped; mapped &= mapped - 1) {
		peer = kfd_criu_gpus_pdd(p, st, __ffs64(mapped));
		if (!peer->drm_priv)
			return -EINVAL;
		ret = kfd_criu_bo_vm_map(peer, mem);
		if (ret)
			return ret;
	}
	if (!rec->mapped_gpus)
		return 0;
	/* The page tables are written before the process can run */
	ret = kfd_criu_bo_vm_sync(mem);
	if (ret)
		return ret;
	/* As the map ioctl does, once the page table updates are done */
	for (mapped = le64_to_cpu(rec->mapped_gpus); mapped;
	     mapped &= mapped - 1)
		kfd_criu_bo_tlb_flush(kfd_criu_gpus_pdd(p, st, __ffs64(mapped)));
	return 0;
}

static int kfd_criu_bo_create(struct kfd_process *p,
			      struct kfd_criu_bos_image *img, u32 i,
			      const struct kfd_criu_gpus_restore *st)
{
	const struct kfd_criu_bo_rec *rec = &img->bos[i];
	struct kfd_process_device *pdd;
	struct kfd_criu_bo_bucket bucket = {};
	struct kfd_criu_bo_priv_data priv = {};
	int ret;

	pdd = kfd_criu_gpus_pdd(p, st, le32_to_cpu(rec->gpu_index));
	if (!pdd->drm_priv)
		return -EINVAL;
	bucket.gpu_id = pdd->user_gpu_id;
	bucket.addr = le64_to_cpu(rec->va);
	bucket.size = le64_to_cpu(rec->size);
	bucket.alloc_flags = le32_to_cpu(rec->alloc_flags);
	priv.user_addr = le64_to_cpu(rec->userptr);
	priv.idr_handle = le32_to_cpu(rec->handle);

	ret = kfd_criu_bo_alloc(pdd, &bucket, &priv, &img->mems[i]);
	if (ret) {
		img->mems[i] = NULL;
		return ret;
	}
	return kfd_criu_bo_map(p, rec, img->mems[i], st);
}

/**
 * kfd_criu_bos_restore - create and map the BOs of an image
 * @p: the process being restored, with the VMs the BOs need
 * @img: validated BO records
 * @st: where the image GPUs were placed
 *
 * All or nothing: on error every BO created is gone again.
 *
 * Context: p->mutex held.
 * Return: 0, -ENOMEM, or the errno of an allocation or a mapping (the
 * normal allocation path's limits included).
 */
int kfd_criu_bos_restore(struct kfd_process *p, struct kfd_criu_bos_image *img,
			 const struct kfd_criu_gpus_restore *st)
{
	int ret;
	u32 i;

	lockdep_assert_held(&p->mutex);

	if (!img->num_bos)
		return 0;
	img->mems = kvcalloc(img->num_bos, sizeof(*img->mems),
			     GFP_KERNEL_ACCOUNT);
	if (!img->mems)
		return -ENOMEM;
	img->vram_epoch = kfd_criu_bos_vram_epoch(p, img, st);
	ret = kfd_criu_bo_restore_xfer_new(img, st);
	if (ret) {
		kvfree(img->mems);
		img->mems = NULL;
		return ret;
	}

	for (i = 0; i < img->num_bos; i++) {
		ret = kfd_criu_bo_create(p, img, i, st);
		if (ret) {
			pr_debug("CRIU image: restoring BO %u failed: %d\n", i,
				 ret);
			kfd_criu_bos_unwind(p, img, st);
			return ret;
		}
	}
	return 0;
}

/**
 * kfd_criu_bos_write_contents - write one BO_DATA record into its BO
 * @p: the process being restored
 * @img: BO records whose BOs kfd_criu_bos_restore() created
 * @payload: the record's payload, header first
 * @len: payload bytes
 *
 * The record must be the one the cursor expects; the cursor moves on.
 *
 * Context: p->mutex held.
 * Return: 0, -EINVAL for a record out of place or of the wrong length, or
 * the errno of the copy.
 */
int kfd_criu_bos_write_contents(struct kfd_process *p,
				struct kfd_criu_bos_image *img,
				void *payload, u32 len)
{
	struct kfd_criu_bo_data_hdr *hdr = payload;
	struct kfd_process_device *pdd;
	struct kfd_criu_xfer_req req;
	int ret;

	lockdep_assert_held(&p->mutex);

	if (len < sizeof(*hdr) || !img->mems || !img->xfer)
		return -EINVAL;
	ret = kfd_criu_bo_data_check(&img->cursor, img->bos, img->num_bos,
				     hdr, len);
	if (ret)
		return ret;
	req.index = le32_to_cpu(hdr->bo_index);
	req.offset = le64_to_cpu(hdr->offset);
	req.len = len - sizeof(*hdr);
	pdd = kfd_criu_gpus_pdd(p, img->xfer->st,
				le32_to_cpu(img->bos[req.index].gpu_index));
	req.dev = pdd->dev->adev;
	return kfd_criu_xfer_write(&img->xfer->x, &req, hdr + 1);
}

/**
 * kfd_criu_bos_finish_contents - complete the copies into the BOs
 * @p: the process being restored
 * @img: BO records whose contents the image ended after
 *
 * Context: p->mutex held.
 * Return: 0, -EINVAL when the image ended before the contents of every
 * BO that has them (the copies are left to kfd_criu_bos_unwind(), which
 * frees them), -EINTR, or the errno of a copy.
 */
int kfd_criu_bos_finish_contents(struct kfd_process *p,
				 struct kfd_criu_bos_image *img)
{
	int ret;

	lockdep_assert_held(&p->mutex);

	if (img->cursor.bo_index != img->num_bos) {
		pr_debug("CRIU image: the contents of BO %u are missing\n",
			 img->cursor.bo_index);
		return -EINVAL;
	}
	if (!img->xfer)
		return 0;
	ret = kfd_criu_xfer_flush(&img->xfer->x);
	if (!ret)
		ret = kfd_criu_bos_check_vram(p, img, img->xfer->st);
	pr_debug("CRIU image: restored %llu BO bytes by the copy engine, %llu by the CPU: %d\n",
		 img->xfer->stats.engine_bytes, img->xfer->stats.cpu_bytes, ret);
	kfd_criu_bo_restore_xfer_free(img);
	return ret;
}

/**
 * kfd_criu_bos_offsets - the mmap offsets the restore changed
 * @p: the process being restored
 * @img: BO records whose BOs kfd_criu_bos_restore() created
 * @st: where the image GPUs were placed
 * @out: receives up to @capacity entries
 * @capacity: entries at @out
 *
 * Each entry names its GPU by the gpu_id the process sees, the image's:
 * the old offsets of two GPUs' render nodes may be the same.
 *
 * Context: p->mutex held.
 * Return: the number of offsets that changed, which may exceed @capacity.
 */
u32 kfd_criu_bos_offsets(struct kfd_process *p,
			 const struct kfd_criu_bos_image *img,
			 const struct kfd_criu_gpus_restore *st,
			 struct kfd_criu_offset_map *out, u32 capacity)
{
	const struct kfd_criu_bo_rec *rec;
	struct kfd_process_device *pdd;
	u64 old, new;
	u32 i, n = 0;

	lockdep_assert_held(&p->mutex);

	for (i = 0; img->mems && i < img->num_bos; i++) {
		rec = &img->bos[i];
		old = le64_to_cpu(rec->mmap_offset);
		pdd = kfd_criu_gpus_pdd(p, st, le32_to_cpu(rec->gpu_index));
		new = kfd_criu_bo_mmap_offset(pdd, img->mems[i]);
		if (!old || old == new)
			continue;
		if (n < capacity) {
			out[n].old_offset = old;
			out[n].new_offset = new;
			out[n].gpu_id = pdd->user_gpu_id;
			out[n].reserved = 0;
		}
		n++;
	}
	return n;
}

/*
 * Runs in kfd_criu_run_unwind()'s worker, so amdgpu's reservations wait
 * rather than fail. An unmap that fails all the same (-ENOMEM, or -EBUSY
 * while a queue still holds the BO) leaves the BO whole, with its handle,
 * for process teardown to free, and so does a free that refuses a BO
 * still mapped (-EBUSY), which changes nothing. Any other failure of the
 * free comes after amdgpu took the BO off the process's lists, and a
 * second free, teardown's included, would corrupt them: the handle goes
 * and the BO leaks, with an error logged. Only a failed allocation leads
 * there, and a kworker's small allocations are not expected to fail.
 */
static int kfd_criu_bo_destroy(struct kfd_process *p,
			       const struct kfd_criu_bo_rec *rec,
			       struct kgd_mem *mem,
			       const struct kfd_criu_gpus_restore *st)
{
	struct kfd_process_device *pdd, *peer;
	int ret;
	u32 i;

	for (i = 0; i < p->n_pdds; i++) {
		peer = p->pdds[i];
		if (!peer->drm_priv ||
		    !kfd_criu_bo_on_vm(peer->drm_priv, mem))
			continue;
		ret = kfd_criu_bo_vm_unmap(peer, mem);
		if (ret)
			return ret;
	}
	pdd = kfd_criu_gpus_pdd(p, st, le32_to_cpu(rec->gpu_index));
	ret = kfd_criu_bo_release(pdd, mem);
	if (ret == -EBUSY)
		return ret;
	if (ret)
		pr_err_ratelimited("CRIU image: leaking restored BO at 0x%llx: %d\n",
				   le64_to_cpu(rec->va), ret);
	kfd_process_device_remove_obj_handle(pdd, le32_to_cpu(rec->handle));
	/* What kfd_criu_restore_memory_of_gpu() added for it */
	if (le32_to_cpu(rec->alloc_flags) & KFD_IOC_ALLOC_MEM_FLAGS_VRAM)
		atomic64_sub(kfd_vram_usage_of(le32_to_cpu(rec->alloc_flags),
					       le64_to_cpu(rec->size)),
			     &pdd->vram_usage);
	return 0;
}

/*
 * The kernel map of the event page BO took its eviction fence off
 * (amdgpu_amdkfd_gpuvm_map_bo_to_kernel(): a pinned BO cannot be
 * evicted), and the unmap in the events unwind unpinned it without giving
 * the fence back. A BO the unwind cannot free stays in the running
 * process: without the fence, amdgpu would move it without evicting the
 * process's queues first. A signaled fence means an eviction is under
 * way, whose restore fences every unpinned BO of the process again.
 */
static int kfd_criu_bo_fence(struct kgd_mem *mem)
{
	struct amdkfd_process_info *info = mem->process_info;
	int ret = 0;

	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_bo_fence, mem);
	mutex_lock(&info->lock);
	if (!dma_fence_is_signaled(&info->eviction_fence->base))
		ret = amdgpu_amdkfd_bo_validate_and_fence(mem->bo,
							  AMDGPU_GEM_DOMAIN_GTT,
							  &info->eviction_fence->base);
	mutex_unlock(&info->lock);
	return ret;
}

/**
 * struct kfd_criu_bos_teardown - what the BO unwind's worker works on
 * @p: the process being restored; the caller holds p->mutex for the worker
 * @img: BO records, with the BOs created so far
 * @st: where the image GPUs were placed
 */
struct kfd_criu_bos_teardown {
	struct kfd_process *p;
	struct kfd_criu_bos_image *img;
	const struct kfd_criu_gpus_restore *st;
};

/* The BOs, newest first; in the worker, so without lockdep_assert_held(). */
static void kfd_criu_bos_destroy_all(void *data)
{
	struct kfd_criu_bos_teardown *td = data;
	struct kfd_criu_bos_image *img = td->img;
	int ret;
	u32 i;

	for (i = img->num_bos; i-- > 0;) {
		if (!img->mems[i])
			continue;
		ret = kfd_criu_bo_destroy(td->p, &img->bos[i], img->mems[i],
					  td->st);
		if (ret)
			pr_warn_ratelimited("CRIU image: restored BO at 0x%llx stays for process teardown: %d\n",
					    le64_to_cpu(img->bos[i].va), ret);
		if (ret && (le32_to_cpu(img->bos[i].flags) &
			    KFD_CRIU_BO_EVENT_PAGE) &&
		    kfd_criu_bo_fence(img->mems[i]))
			pr_warn_ratelimited("CRIU image: event page BO at 0x%llx stays without its eviction fence\n",
					    le64_to_cpu(img->bos[i].va));
		img->mems[i] = NULL;
	}
}

/**
 * kfd_criu_bos_unwind - undo kfd_criu_bos_restore()
 * @p: the process being restored
 * @img: BO records, with the BOs created so far
 * @st: where the image GPUs were placed
 *
 * Unmaps and frees every BO the restore created, in reverse order, and
 * takes each one's size off its GPU's VRAM usage count as the free ioctl
 * does. The count is not reset to a saved value: SVM changes it without
 * p->mutex. The unmaps and frees run in a worker (kfd_criu_run_unwind()),
 * as the caller may have a signal pending. A BO that cannot be unmapped
 * even there stays in the process with its handle, and
 * kfd_criu_gpus_unwind() then keeps the VMs; the event page BO then gets
 * back the eviction fence its kernel map took off.
 *
 * Context: p->mutex held.
 */
void kfd_criu_bos_unwind(struct kfd_process *p, struct kfd_criu_bos_image *img,
			 const struct kfd_criu_gpus_restore *st)
{
	struct kfd_criu_bos_teardown td = { .p = p, .img = img, .st = st };

	lockdep_assert_held(&p->mutex);

	/* A copy still in flight keeps its BO and its bounce buffer */
	kfd_criu_bo_restore_xfer_free(img);
	if (!img->mems)
		return;
	kfd_criu_run_unwind(p, kfd_criu_bos_destroy_all, &td);
	kvfree(img->mems);
	img->mems = NULL;
}

#if IS_BUILTIN(CONFIG_HSA_AMD_CRIU_KUNIT_TEST)
#include "tests/kfd_criu_bos_test.c"
#endif
