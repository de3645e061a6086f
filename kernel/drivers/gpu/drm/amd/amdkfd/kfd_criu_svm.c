// SPDX-License-Identifier: GPL-2.0 OR MIT

/**
 * DOC: CRIU image mode - SVM ranges
 *
 * Dump writes one SVM_RANGE record for each range in the process's SVM
 * interval tree, in ascending address order: its bytes, the attributes
 * user mode set on it (preferred and prefetch location, flags, migration
 * granularity) and the access of each GPU. The GPUs are named by the
 * index of their GPU record, which is the index of their per-GPU data in
 * p->pdds and so the index 6.12 uses in a range's access bitmaps.
 *
 * 6.12 keeps two bitmaps per range, ACCESS and ACCESS_IN_PLACE; a GPU in
 * neither has no access. A new range starts with ACCESS for every GPU
 * that supports SVM when XNACK is on, and with no access otherwise. So
 * that a record does not depend on that default, every GPU that supports
 * SVM is written in exactly one of the three masks: NO_ACCESS is explicit.
 * A GPU without SVM support can have no attribute at all (SET_ATTR refuses
 * one), and is in no mask. Locations are gpu_ids as the process saw them.
 *
 * What a record cannot express makes the dump fail with -EOPNOTSUPP and a
 * log line: a GPU in both bitmaps, a GPU without SVM support that has
 * access, a location that is no GPU of the process, flags the uAPI does
 * not define, more ranges than %KFD_CRIU_MAX_SVM_RANGES.
 *
 * Not carried, because SET_ATTR rebuilds it or it is not state user mode
 * set: where the pages are (VRAM or system memory; CRIU reads the
 * contents through the CPU, which migrates them to system memory, and a
 * prefetch location brings them back at RESUME), GPU page tables and DMA
 * mappings, the VRAM BOs backing ranges, how 6.12 split a range into
 * pieces internally, and the access of GPUs the image does not have.
 *
 * RESTORE collects and validates the records as a set together with the
 * GPU and BO records, before anything is changed. After the GPUs are
 * placed, it translates each record to the restored process (access
 * masks to per-GPU data indices, locations to the gpu_ids the process
 * sees), checks that every GPU a range names supports SVM on this machine
 * and that the process has a GPU VM, and keeps the result on the process
 * (p->criu_svm). Nothing of it is applied yet: the VAs of the ranges are
 * ordinary process memory, which CRIU restores after RESTORE.
 *
 * RESUME applies the kept ranges through the normal SVM attribute path
 * (SET_ATTR) in the process's address space. Before it applies anything
 * it checks that every range lies in VMAs of the process and overlaps no
 * existing SVM range, and fails with a log line naming the first range
 * that does not. 6.12 has no operation that removes an SVM range short of
 * unmapping its memory, and setting NO_ACCESS does not unmap a GPU
 * mapping, so a SET_ATTR that fails half-way cannot be undone. Instead
 * RESUME stays retryable: the process stays restored with its ranges
 * kept and how far RESUME got, and a later RESUME goes on from the range
 * that failed, setting its attributes again. CRIU kills a restored
 * process whose RESUME fails; its ranges, applied or kept, go with it.
 */

#include <linux/bitmap.h>
#include <linux/bits.h>
#include <linux/interval_tree.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <kunit/static_stub.h>

#include "kfd_criu.h"
#include "kfd_priv.h"
#include "kfd_svm.h"

/* At most five attributes per range, then one per GPU */
#define KFD_CRIU_SVM_MAX_ATTRS	(5 + KFD_CRIU_MAX_GPUS)

/**
 * kfd_criu_svm_image_free - free what an SVM image holds
 * @img: image from a snapshot or a restore, may be partly filled
 */
void kfd_criu_svm_image_free(struct kfd_criu_svm_image *img)
{
	kvfree(img->ranges);
	kvfree(img->kept);
	memset(img, 0, sizeof(*img));
}

/**
 * kfd_criu_svm_access_to_rec - the access masks of a range's record
 * @access: BIT(i): p->pdds[i] is in the range's ACCESS bitmap
 * @aip: BIT(i): p->pdds[i] is in the range's ACCESS_IN_PLACE bitmap
 * @supported: BIT(i): p->pdds[i] supports SVM (svms.bitmap_supported)
 * @num_gpus: p->n_pdds, the number of GPU records
 * @rec: receives access, access_in_place and no_access
 *
 * A GPU with SVM support lands in exactly one mask, a GPU without it in
 * none. Pure.
 *
 * Return: 0, or -EOPNOTSUPP for more than %KFD_CRIU_MAX_GPUS GPUs, a bit
 * of a GPU the process does not have, a GPU in both bitmaps or a GPU
 * without SVM support that has access.
 */
static int kfd_criu_svm_access_to_rec(u64 access, u64 aip, u64 supported,
				      u32 num_gpus,
				      struct kfd_criu_svm_rec *rec)
{
	u64 all;

	if (num_gpus > KFD_CRIU_MAX_GPUS)
		return -EOPNOTSUPP;
	all = num_gpus == KFD_CRIU_MAX_GPUS ? ~0ULL : BIT_ULL(num_gpus) - 1;
	supported &= all;
	if ((access | aip) & ~all || access & aip ||
	    (access | aip) & ~supported)
		return -EOPNOTSUPP;
	rec->access = cpu_to_le64(access);
	rec->access_in_place = cpu_to_le64(aip);
	rec->no_access = cpu_to_le64(supported & ~(access | aip));
	return 0;
}

/* SYSMEM, UNDEFINED, or a gpu_id one of p->pdds shows the process */
static int kfd_criu_svm_loc_to_rec(struct kfd_process *p, u32 loc,
				   __le32 *out)
{
	*out = cpu_to_le32(loc);
	if (loc == KFD_IOCTL_SVM_LOCATION_SYSMEM ||
	    loc == KFD_IOCTL_SVM_LOCATION_UNDEFINED)
		return 0;
	return kfd_process_gpuidx_from_gpuid(p, loc) < 0 ? -EOPNOTSUPP : 0;
}

static int kfd_criu_svm_range_to_rec(struct kfd_process *p,
				     struct svm_range *prange, u64 supported,
				     struct kfd_criu_svm_rec *rec)
{
	u64 access, aip;
	int ret;

	bitmap_to_arr64(&access, prange->bitmap_access, MAX_GPU_INSTANCE);
	bitmap_to_arr64(&aip, prange->bitmap_aip, MAX_GPU_INSTANCE);
	memset(rec, 0, sizeof(*rec));
	rec->start = cpu_to_le64((u64)prange->start << PAGE_SHIFT);
	rec->size = cpu_to_le64(prange->npages << PAGE_SHIFT);
	rec->flags = cpu_to_le32(prange->flags);
	rec->granularity = cpu_to_le32(prange->granularity);
	ret = kfd_criu_svm_access_to_rec(access, aip, supported, p->n_pdds,
					 rec);
	if (!ret)
		ret = kfd_criu_svm_loc_to_rec(p, prange->preferred_loc,
					      &rec->preferred_loc);
	if (!ret)
		ret = kfd_criu_svm_loc_to_rec(p, prange->prefetch_loc,
					      &rec->prefetch_loc);
	return ret;
}

static u32 kfd_criu_svm_count_locked(struct svm_range_list *svms)
{
	struct svm_range *prange;
	u32 n = 0;

	lockdep_assert_held(&svms->lock);

	list_for_each_entry(prange, &svms->list, list)
		n++;
	return n;
}

/**
 * kfd_criu_svm_count - the SVM ranges a dump of a process writes
 * @p: the process
 *
 * Return: the number of ranges, saturated at U32_MAX.
 */
u32 kfd_criu_svm_count(struct kfd_process *p)
{
	u32 n;

	mutex_lock(&p->svms.lock);
	n = kfd_criu_svm_count_locked(&p->svms);
	mutex_unlock(&p->svms.lock);
	return n;
}

/* Ranges an unmap left for the deferred worker are half gone. */
static bool kfd_criu_svm_settled(struct svm_range_list *svms)
{
	bool settled;

	flush_work(&svms->deferred_list_work);
	spin_lock(&svms->deferred_list_lock);
	settled = list_empty(&svms->deferred_range_list);
	spin_unlock(&svms->deferred_list_lock);
	return settled;
}

/* Fills @img->ranges from the interval tree, which is sorted by start. */
static int kfd_criu_svm_fill_locked(struct kfd_process *p,
				    const struct kfd_criu_gpus_image *gpus,
				    struct kfd_criu_svm_image *img)
{
	struct svm_range_list *svms = &p->svms;
	struct interval_tree_node *node;
	struct kfd_criu_svm_rec *rec;
	struct svm_range *prange;
	u64 supported;
	u32 i = 0;

	lockdep_assert_held(&svms->lock);

	bitmap_to_arr64(&supported, svms->bitmap_supported, MAX_GPU_INSTANCE);
	node = interval_tree_iter_first(&svms->objects, 0, ULONG_MAX);
	for (; node; node = interval_tree_iter_next(node, 0, ULONG_MAX)) {
		prange = container_of(node, struct svm_range, it_node);
		if (WARN_ON(i >= img->num_ranges))
			return -EINVAL;
		rec = &img->ranges[i++];
		if (kfd_criu_svm_range_to_rec(p, prange, supported, rec) ||
		    kfd_criu_validate_svm_range(rec, gpus->gpus,
						gpus->num_gpus)) {
			pr_warn_ratelimited("CRIU image: pid %d: SVM range 0x%lx-0x%lx has attributes the image cannot carry\n",
					    task_pid_nr(p->lead_thread),
					    prange->start << PAGE_SHIFT,
					    (prange->last + 1) << PAGE_SHIFT);
			return -EOPNOTSUPP;
		}
	}
	return i == img->num_ranges ? 0 : -EINVAL;
}

/* The set check RESTORE makes: a BO the process never mapped may overlap */
static int kfd_criu_svm_check_set(struct kfd_process *p,
				  const struct kfd_criu_gpus_image *gpus,
				  const struct kfd_criu_bos_image *bos,
				  const struct kfd_criu_svm_image *img)
{
	if (!kfd_criu_check_svm_ranges(img->ranges, img->num_ranges,
				       gpus->gpus, gpus->num_gpus, bos->bos,
				       bos->num_bos))
		return 0;
	pr_warn_ratelimited("CRIU image: pid %d: an SVM range overlaps a buffer object\n",
			    task_pid_nr(p->lead_thread));
	return -EOPNOTSUPP;
}

/**
 * kfd_criu_svm_snapshot - record the SVM ranges of a process for a dump
 * @p: the process, paused
 * @gpus: its GPU records, from kfd_criu_gpus_snapshot()
 * @bos: its BO records, from kfd_criu_bos_snapshot()
 * @img: receives the records; free it with kfd_criu_svm_image_free()
 *
 * The records pass the checks a restore makes, kfd_criu_check_svm_ranges()
 * included.
 *
 * Context: p->mutex held; takes p->svms.lock.
 * Return: 0, -ENOMEM, -EBUSY while an unmap of SVM memory is still being
 * processed, or -EOPNOTSUPP (with a log line) for a range the image
 * cannot carry, a range over a BO or too many ranges.
 */
int kfd_criu_svm_snapshot(struct kfd_process *p,
			  const struct kfd_criu_gpus_image *gpus,
			  const struct kfd_criu_bos_image *bos,
			  struct kfd_criu_svm_image *img)
{
	struct svm_range_list *svms = &p->svms;
	u32 n;
	int ret;

	lockdep_assert_held(&p->mutex);

	memset(img, 0, sizeof(*img));
	if (!kfd_criu_svm_settled(svms))
		return -EBUSY;
	mutex_lock(&svms->lock);
	n = kfd_criu_svm_count_locked(svms);
	if (n > KFD_CRIU_MAX_SVM_RANGES) {
		pr_warn_ratelimited("CRIU image: pid %d has %u SVM ranges, more than the image carries\n",
				    task_pid_nr(p->lead_thread), n);
		ret = -EOPNOTSUPP;
		goto out_unlock;
	}
	ret = 0;
	if (!n)
		goto out_unlock;
	img->ranges = kvcalloc(n, sizeof(*img->ranges), GFP_KERNEL_ACCOUNT);
	if (!img->ranges) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	img->num_ranges = n;
	img->ranges_read = n;
	ret = kfd_criu_svm_fill_locked(p, gpus, img);
out_unlock:
	mutex_unlock(&svms->lock);
	if (!ret)
		ret = kfd_criu_svm_check_set(p, gpus, bos, img);
	if (ret)
		kfd_criu_svm_image_free(img);
	return ret;
}

/**
 * kfd_criu_svm_write - write the SVM_RANGE records
 * @w: the stream, right after the queue states
 * @img: records from kfd_criu_svm_snapshot()
 *
 * Return: 0 or the writer's error.
 */
int kfd_criu_svm_write(struct kfd_criu_image_writer *w,
		       const struct kfd_criu_svm_image *img)
{
	int ret = 0;
	u32 i;

	for (i = 0; !ret && i < img->num_ranges; i++)
		ret = kfd_criu_image_write_record(w, KFD_CRIU_REC_SVM_RANGE,
						  KFD_CRIU_RECORD_MANDATORY,
						  &img->ranges[i],
						  sizeof(img->ranges[i]));
	return ret;
}

/**
 * kfd_criu_svm_prepare - make room for the SVM ranges COUNTS announced
 * @img: empty image
 * @num_ranges: COUNTS's num_svm_ranges
 *
 * Return: 0, -EINVAL for a second call or more than
 * %KFD_CRIU_MAX_SVM_RANGES, or -ENOMEM.
 */
int kfd_criu_svm_prepare(struct kfd_criu_svm_image *img, u32 num_ranges)
{
	if (img->ranges || num_ranges > KFD_CRIU_MAX_SVM_RANGES)
		return -EINVAL;
	if (!num_ranges)
		return 0;
	img->ranges = kvcalloc(num_ranges, sizeof(*img->ranges),
			       GFP_KERNEL_ACCOUNT);
	if (!img->ranges)
		return -ENOMEM;
	img->num_ranges = num_ranges;
	return 0;
}

/**
 * kfd_criu_svm_collect - keep one SVM_RANGE record of a restore stream
 * @img: image set up by kfd_criu_svm_prepare()
 * @rec: an SVM_RANGE record, as the reader returned it
 * @payload: its payload
 *
 * Return: 0, or -EINVAL for another record type, a wrong length or more
 * records than COUNTS announced.
 */
int kfd_criu_svm_collect(struct kfd_criu_svm_image *img,
			 const struct kfd_criu_record *rec,
			 const void *payload)
{
	if (rec->type != KFD_CRIU_REC_SVM_RANGE ||
	    rec->length != sizeof(*img->ranges) ||
	    img->ranges_read >= img->num_ranges)
		return -EINVAL;
	memcpy(&img->ranges[img->ranges_read++], payload,
	       sizeof(*img->ranges));
	return 0;
}

/**
 * kfd_criu_svm_validate - check collected SVM ranges as a set
 * @img: records collected from a stream
 * @gpus: the image's GPU records, validated
 * @bos: the image's BO records, validated
 *
 * Return: 0, or -EINVAL for a missing record or what
 * kfd_criu_check_svm_ranges() refuses.
 */
int kfd_criu_svm_validate(const struct kfd_criu_svm_image *img,
			  const struct kfd_criu_gpus_image *gpus,
			  const struct kfd_criu_bos_image *bos)
{
	if (img->ranges_read != img->num_ranges)
		return -EINVAL;
	return kfd_criu_check_svm_ranges(img->ranges, img->num_ranges,
					 gpus->gpus, gpus->num_gpus,
					 bos->bos, bos->num_bos);
}

/* The index of the image GPU a location names, or -1 for none */
static int kfd_criu_svm_loc_gpu(const struct kfd_criu_gpus_image *gpus,
				u32 loc)
{
	u32 i;

	if (loc == KFD_IOCTL_SVM_LOCATION_SYSMEM ||
	    loc == KFD_IOCTL_SVM_LOCATION_UNDEFINED)
		return -1;
	for (i = 0; i < gpus->num_gpus; i++)
		if (le32_to_cpu(gpus->gpus[i].gpu_id) == loc)
			return i;
	return -1;
}

/**
 * kfd_criu_svm_needed_gpus - the image GPUs the SVM ranges need a VM on
 * @img: validated SVM records
 * @gpus: the image's GPU records
 *
 * A GPU with access or access in place is mapped, and a location's GPU
 * gets the range's pages in its VRAM. A GPU with no access needs nothing.
 *
 * Return: BIT(image GPU index) of those GPUs.
 */
u64 kfd_criu_svm_needed_gpus(const struct kfd_criu_svm_image *img,
			     const struct kfd_criu_gpus_image *gpus)
{
	const struct kfd_criu_svm_rec *r;
	u64 needed = 0;
	u32 i;
	int k;

	for (i = 0; i < img->num_ranges; i++) {
		r = &img->ranges[i];
		needed |= le64_to_cpu(r->access) |
			  le64_to_cpu(r->access_in_place);
		k = kfd_criu_svm_loc_gpu(gpus, le32_to_cpu(r->preferred_loc));
		if (k >= 0)
			needed |= BIT_ULL(k);
		k = kfd_criu_svm_loc_gpu(gpus, le32_to_cpu(r->prefetch_loc));
		if (k >= 0)
			needed |= BIT_ULL(k);
	}
	return needed;
}

/**
 * kfd_criu_svm_remap_mask - move a GPU mask from image to process indices
 * @mask: BIT(i) for image GPU i
 * @target: for image GPU i, the index in p->pdds it was placed on
 * @num_gpus: entries in @target; @mask has no bit at or above it
 *
 * Pure.
 *
 * Return: BIT(target[i]) for every bit i of @mask.
 */
static u64 kfd_criu_svm_remap_mask(u64 mask, const u32 *target, u32 num_gpus)
{
	u64 out = 0;
	u32 i;

	for (i = 0; i < num_gpus; i++)
		if (mask & BIT_ULL(i))
			out |= BIT_ULL(target[i]);
	return out;
}

/* A location in the restored process's gpu_ids. */
static u32 kfd_criu_svm_remap_loc(const struct kfd_criu_gpus_image *gpus,
				  const struct kfd_criu_gpus_restore *st,
				  u32 loc, u64 *gpu_bit)
{
	int k = kfd_criu_svm_loc_gpu(gpus, loc);

	if (k < 0)
		return loc;
	*gpu_bit |= BIT_ULL(st->target[k]);
	return st->user_gpu_id[st->target[k]];
}

/* Translates one validated record; @named gets BIT(pdd index) it names. */
static int kfd_criu_svm_rec_to_range(const struct kfd_criu_svm_rec *rec,
				     const struct kfd_criu_gpus_image *gpus,
				     const struct kfd_criu_gpus_restore *st,
				     struct kfd_criu_svm_range *r, u64 *named)
{
	u32 n = gpus->num_gpus;

	r->start = le64_to_cpu(rec->start);
	r->size = le64_to_cpu(rec->size);
	/* kfd_ioctl_svm() refuses these; SET_ATTR works on whole pages */
	if (!r->start || !PAGE_ALIGNED(r->start) || !PAGE_ALIGNED(r->size))
		return -EINVAL;
	r->access = kfd_criu_svm_remap_mask(le64_to_cpu(rec->access),
					    st->target, n);
	r->access_in_place =
		kfd_criu_svm_remap_mask(le64_to_cpu(rec->access_in_place),
					st->target, n);
	r->no_access = kfd_criu_svm_remap_mask(le64_to_cpu(rec->no_access),
					       st->target, n);
	*named |= r->access | r->access_in_place | r->no_access;
	r->preferred_loc = kfd_criu_svm_remap_loc(gpus, st,
						  le32_to_cpu(rec->preferred_loc),
						  named);
	r->prefetch_loc = kfd_criu_svm_remap_loc(gpus, st,
						 le32_to_cpu(rec->prefetch_loc),
						 named);
	r->flags = le32_to_cpu(rec->flags);
	r->granularity = le32_to_cpu(rec->granularity);
	return 0;
}

/* Every GPU the ranges name must take SVM attributes on this machine. */
static int kfd_criu_svm_check_supported(struct kfd_process *p, u64 named)
{
	u64 supported;
	u32 i;

	bitmap_to_arr64(&supported, p->svms.bitmap_supported,
			MAX_GPU_INSTANCE);
	for (i = 0; i < p->n_pdds; i++) {
		if (!(named & BIT_ULL(i)) || (supported & BIT_ULL(i)))
			continue;
		pr_warn_ratelimited("CRIU image: SVM ranges name GPU 0x%x, which has no SVM support here\n",
				    p->pdds[i]->dev->id);
		return -EOPNOTSUPP;
	}
	if (p->kgd_process_info)
		return 0;
	pr_debug("CRIU image: SVM ranges need a GPU VM; the GPU map gives no render node\n");
	return -EINVAL;
}

/**
 * kfd_criu_svm_restore - translate the SVM ranges for the restored process
 * @p: the process being restored, its GPUs placed and VMs acquired
 * @img: validated SVM records; receives the translated ranges in @img->kept
 * @gpus: the image's GPU records
 * @st: state of kfd_criu_gpus_restore()
 *
 * Changes nothing but @img: kfd_criu_svm_keep() hands the result to the
 * process once the whole restore has succeeded.
 *
 * Context: p->mutex held.
 * Return: 0, -ENOMEM, -EINVAL for a range that is not whole pages or
 * starts at 0, or when the process has no GPU VM, or -EOPNOTSUPP (with a
 * log line) when a GPU a range names has no SVM support on this machine.
 */
int kfd_criu_svm_restore(struct kfd_process *p, struct kfd_criu_svm_image *img,
			 const struct kfd_criu_gpus_image *gpus,
			 const struct kfd_criu_gpus_restore *st)
{
	struct kfd_criu_svm_resume *kept;
	u64 named = 0;
	int ret = 0;
	u32 i;

	lockdep_assert_held(&p->mutex);

	if (!img->num_ranges || WARN_ON(img->kept))
		return 0;
	kept = kvzalloc(struct_size(kept, ranges, img->num_ranges),
			GFP_KERNEL_ACCOUNT);
	if (!kept)
		return -ENOMEM;
	kept->num_ranges = img->num_ranges;
	for (i = 0; !ret && i < img->num_ranges; i++)
		ret = kfd_criu_svm_rec_to_range(&img->ranges[i], gpus, st,
						&kept->ranges[i], &named);
	if (!ret)
		ret = kfd_criu_svm_check_supported(p, named);
	if (ret) {
		kvfree(kept);
		return ret;
	}
	img->kept = kept;
	return 0;
}

/**
 * kfd_criu_svm_keep - hand the translated SVM ranges to the process
 * @p: the restored process
 * @img: image whose kfd_criu_svm_restore() succeeded
 *
 * RESUME applies them; process teardown frees them if it never does.
 *
 * Context: p->mutex held.
 */
void kfd_criu_svm_keep(struct kfd_process *p, struct kfd_criu_svm_image *img)
{
	lockdep_assert_held(&p->mutex);

	if (WARN_ON(p->criu_svm)) {
		kvfree(p->criu_svm);
		p->criu_svm = NULL;
	}
	p->criu_svm = img->kept;
	img->kept = NULL;
}

static void kfd_criu_svm_attr(struct kfd_ioctl_svm_attribute *attrs,
			      u32 *n, u32 type, u32 value)
{
	attrs[*n].type = type;
	attrs[*n].value = value;
	(*n)++;
}

/**
 * kfd_criu_svm_build_attrs - the SET_ATTR list that recreates a range
 * @r: the kept range
 * @gpu_ids: the gpu_id each of p->pdds shows the process
 * @num_pdds: entries in @gpu_ids; @r names no GPU at or above it
 * @attrs: receives the list, room for %KFD_CRIU_SVM_MAX_ATTRS entries
 *
 * The flags are set and all others cleared, so the range ends with exactly
 * the recorded flags whatever the defaults. An UNDEFINED prefetch location
 * is left out: it is the default, and SET_ATTR refuses it. Pure.
 *
 * Return: the number of attributes written.
 */
static u32 kfd_criu_svm_build_attrs(const struct kfd_criu_svm_range *r,
				    const u32 *gpu_ids, u32 num_pdds,
				    struct kfd_ioctl_svm_attribute *attrs)
{
	u32 i, n = 0;

	kfd_criu_svm_attr(attrs, &n, KFD_IOCTL_SVM_ATTR_PREFERRED_LOC,
			  r->preferred_loc);
	if (r->prefetch_loc != KFD_IOCTL_SVM_LOCATION_UNDEFINED)
		kfd_criu_svm_attr(attrs, &n, KFD_IOCTL_SVM_ATTR_PREFETCH_LOC,
				  r->prefetch_loc);
	kfd_criu_svm_attr(attrs, &n, KFD_IOCTL_SVM_ATTR_SET_FLAGS, r->flags);
	kfd_criu_svm_attr(attrs, &n, KFD_IOCTL_SVM_ATTR_CLR_FLAGS, ~r->flags);
	kfd_criu_svm_attr(attrs, &n, KFD_IOCTL_SVM_ATTR_GRANULARITY,
			  r->granularity);
	for (i = 0; i < num_pdds && i < KFD_CRIU_MAX_GPUS; i++) {
		if (r->access & BIT_ULL(i))
			kfd_criu_svm_attr(attrs, &n, KFD_IOCTL_SVM_ATTR_ACCESS,
					  gpu_ids[i]);
		else if (r->access_in_place & BIT_ULL(i))
			kfd_criu_svm_attr(attrs, &n,
					  KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE,
					  gpu_ids[i]);
		else if (r->no_access & BIT_ULL(i))
			kfd_criu_svm_attr(attrs, &n,
					  KFD_IOCTL_SVM_ATTR_NO_ACCESS,
					  gpu_ids[i]);
	}
	return n;
}

/* Whether [start, end) lies in VMAs that SET_ATTR accepts. */
static bool kfd_criu_svm_vma_ok(struct mm_struct *mm, u64 start, u64 end)
{
	const vm_flags_t device_vma = VM_IO | VM_PFNMAP | VM_MIXEDMAP;
	struct vm_area_struct *vma;

	while (start < end) {
		vma = vma_lookup(mm, start);
		if (!vma || (vma->vm_flags & device_vma))
			return false;
		start = vma->vm_end;
	}
	return true;
}

/**
 * kfd_criu_svm_may_exist - whether a kept range may be in the process
 * @kept: the kept ranges
 * @i: index of a range, below @kept->num_ranges
 *
 * An earlier RESUME applied the ranges before @kept->applied, and the one
 * at @kept->applied may exist in part when its SET_ATTR failed. Pure.
 *
 * Return: true for those ranges.
 */
static bool kfd_criu_svm_may_exist(const struct kfd_criu_svm_resume *kept,
				   u32 i)
{
	return i < kept->applied || (i == kept->applied && kept->partial);
}

/* Everything SET_ATTR checks on its own, for what is left, with a reason. */
static int kfd_criu_svm_check_resume(struct kfd_process *p,
				     struct mm_struct *mm,
				     const struct kfd_criu_svm_resume *kept)
{
	const struct kfd_criu_svm_range *r;
	int ret = 0;
	u32 i;

	mmap_read_lock(mm);
	mutex_lock(&p->svms.lock);
	for (i = kept->applied; !ret && i < kept->num_ranges; i++) {
		r = &kept->ranges[i];
		if (!kfd_criu_svm_vma_ok(mm, r->start, r->start + r->size)) {
			pr_warn_ratelimited("CRIU image: pid %d: SVM range 0x%llx-0x%llx is not mapped memory of the process\n",
					    task_pid_nr(p->lead_thread),
					    r->start, r->start + r->size);
			ret = -EFAULT;
		} else if (!kfd_criu_svm_may_exist(kept, i) &&
			   interval_tree_iter_first(&p->svms.objects,
						    r->start >> PAGE_SHIFT,
						    (r->start + r->size - 1) >>
						    PAGE_SHIFT)) {
			pr_warn_ratelimited("CRIU image: pid %d: SVM range 0x%llx-0x%llx exists already\n",
					    task_pid_nr(p->lead_thread),
					    r->start, r->start + r->size);
			ret = -EEXIST;
		}
	}
	mutex_unlock(&p->svms.lock);
	mmap_read_unlock(mm);
	return ret;
}

/*
 * SET_ATTR needs the GPUs' VMs. The KUnit tests put a fake behind it
 * (kunit_activate_static_stub()). Without CONFIG_KUNIT the redirect
 * compiles to nothing. With it, outside KUnit it is a static branch; while
 * a KUnit test runs, other tasks test one pointer, and only the test's own
 * thread looks its stubs up.
 */
static int kfd_criu_svm_set_attr(struct kfd_process *p, struct mm_struct *mm,
				 const struct kfd_criu_svm_range *r, u32 n,
				 struct kfd_ioctl_svm_attribute *attrs)
{
	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_svm_set_attr, p, mm, r, n, attrs);
	return svm_range_set_attr_mm(p, mm, r->start, r->size, n, attrs);
}

/* Applies the ranges left, in order; @kept says how far it got. */
static int kfd_criu_svm_apply(struct kfd_process *p, struct mm_struct *mm,
			      struct kfd_criu_svm_resume *kept,
			      struct kfd_ioctl_svm_attribute *attrs)
{
	const struct kfd_criu_svm_range *r;
	u32 gpu_ids[KFD_CRIU_MAX_GPUS];
	u32 i, n;
	int ret;

	for (i = 0; i < p->n_pdds; i++)
		gpu_ids[i] = p->pdds[i]->user_gpu_id;
	for (; kept->applied < kept->num_ranges; kept->applied++) {
		r = &kept->ranges[kept->applied];
		n = kfd_criu_svm_build_attrs(r, gpu_ids, p->n_pdds, attrs);
		ret = kfd_criu_svm_set_attr(p, mm, r, n, attrs);
		/* SET_ATTR inserts the range before it maps it */
		kept->partial = ret != 0;
		if (ret) {
			pr_err_ratelimited("CRIU image: pid %d: SVM range 0x%llx-0x%llx: SET_ATTR failed: %d; %u of %u ranges applied, RESUME may be retried\n",
					   task_pid_nr(p->lead_thread), r->start,
					   r->start + r->size, ret,
					   kept->applied, kept->num_ranges);
			return ret;
		}
	}
	return 0;
}

/**
 * kfd_criu_svm_resume - apply the SVM ranges a restore kept
 * @p: the restored process
 * @mm: its address space, referenced by the caller; NULL when it is gone
 *
 * Checks every range left first (in VMAs, no SVM range there yet), then
 * sets each through SET_ATTR. On success the kept ranges are freed; on
 * failure they stay, with how far RESUME got, so that a retry goes on
 * from the range that failed (SET_ATTR of the same attributes again is
 * harmless).
 *
 * Context: p->mutex held, which SET_ATTR nests inside as it does for the
 * legacy CRIU RESUME. Takes the process's mmap lock and p->svms.lock.
 * Return: 0, -ESRCH without @mm, -ENOMEM, -EFAULT for a range outside the
 * process's VMAs, -EEXIST for a range that exists already, or the errno
 * of SET_ATTR.
 */
int kfd_criu_svm_resume(struct kfd_process *p, struct mm_struct *mm)
{
	struct kfd_criu_svm_resume *kept = p->criu_svm;
	struct kfd_ioctl_svm_attribute *attrs;
	int ret;

	lockdep_assert_held(&p->mutex);

	if (!kept)
		return 0;
	if (!mm)
		return -ESRCH;
	ret = kfd_criu_svm_check_resume(p, mm, kept);
	if (ret)
		return ret;
	attrs = kcalloc(KFD_CRIU_SVM_MAX_ATTRS, sizeof(*attrs), GFP_KERNEL_ACCOUNT);
	if (!attrs)
		return -ENOMEM;
	ret = kfd_criu_svm_apply(p, mm, kept, attrs);
	kfree(attrs);
	if (ret)
		return ret;
	p->criu_svm = NULL;
	kvfree(kept);
	return 0;
}

#if IS_BUILTIN(CONFIG_HSA_AMD_CRIU_KUNIT_TEST)
#include "tests/kfd_criu_svm_test.c"
#endif
