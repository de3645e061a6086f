// SPDX-License-Identifier: GPL-2.0 OR MIT

/**
 * DOC: CRIU image mode - GPUs
 *
 * Dump writes one GPU record for each GPU the process has per-GPU data
 * for (p->pdds), in that order: the gpu_id the process knows it by and
 * what a restore compares, as the topology and driver report it (gfx
 * target version, PCI device id and ASIC revision, XCCs of the partition,
 * partition mode, VRAM size, CWSR and control stack sizes, MEC and SDMA
 * firmware).
 *
 * Restore describes this machine's GPUs the same way. Those are the GPUs
 * the process has per-GPU data for, which /dev/kfd's open created for
 * every GPU node of the topology that the process's device cgroup lets
 * it use. kfd_criu_map_gpus() then places each image GPU on a compatible
 * local GPU, by the caller's map or else by the same gpu_id. A GPU that
 * cannot be placed fails the restore with -ENODEV and one message that
 * names the image GPU, the local GPU and the field that differs, before
 * anything is changed.
 *
 * Each placed GPU whose map entry (the entry naming the local GPU) gives a
 * render node file descriptor gets its VM acquired on it, exactly as
 * AMDKFD_IOC_ACQUIRE_VM does; a GPU that the image's BOs live on or are
 * mapped on must have one. The caller opens the render nodes and passes
 * descriptors, rather than the kernel opening them, because:
 *
 * - the VM belongs to a DRM file, and that file must be one the restored
 *   process owns and keeps in its file table (CRIU restores it there), so
 *   that its lifetime, its mmaps of BOs through the render node and the
 *   release of the VM follow the process as they did before the dump;
 * - the kernel must not open device paths by name on a process's behalf:
 *   the path may not exist or may name another device in the caller's
 *   mount namespace, and an open by name would bypass the permission
 *   checks (device cgroup, LSMs, file modes) that the caller's own open
 *   went through;
 * - with GPU partitions each partition has its own render node, and only
 *   the caller knows which node it set up in the restored process's
 *   namespaces.
 *
 * Each descriptor must be a render node of the very GPU (or partition)
 * it is given for; its VM must not be a compute VM already.
 *
 * Finally every GPU of the process shows the process the image's gpu_id
 * (pdd->user_gpu_id). A local GPU that the image does not use but whose
 * own gpu_id the image gives to another GPU gets an unused id instead, so
 * that the process's ids stay unique. kfd_criu_gpus_unwind() undoes all of
 * it: the ids, runtime PM references, doorbells and the VMs, which it
 * releases so that the caller's render nodes can be used again.
 */

#include <linux/bits.h>
#include <linux/file.h>
#include <linux/idr.h>
#include <linux/lockdep.h>
#include <linux/pm_runtime.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <drm/drm_file.h>
#include <kunit/static_stub.h>

#include "amdgpu_amdkfd.h"
#include "kfd_criu.h"
#include "kfd_priv.h"
#include "kfd_topology.h"

static_assert(MAX_GPU_INSTANCE <= KFD_CRIU_MAX_GPUS);

/**
 * kfd_criu_gpus_image_free - free what a GPUs image holds
 * @img: image from a snapshot or a restore, may be partly filled
 */
void kfd_criu_gpus_image_free(struct kfd_criu_gpus_image *img)
{
	kvfree(img->gpus);
	memset(img, 0, sizeof(*img));
}

/**
 * kfd_criu_gpus_pairing - the two gpu_ids of each GPU of a process
 * @p: the process; p->mutex held
 * @buckets: receives one entry per GPU of @p, in the order of p->pdds
 * @room: entries at @buckets
 *
 * A process restored with a GPU map keeps seeing the image's gpu_ids, which
 * may differ from the topology's. Whoever dumps it again needs both: the
 * image records (and RESTORE's offset map) use the first, the render nodes
 * of the dumping machine are found by the second. Each entry gets them as
 * the legacy CHECKPOINT reports them, in @user_gpu_id and @actual_gpu_id;
 * @drm_fd and @pad are zero.
 *
 * Return: the number of GPUs of @p, or -ENOSPC, with nothing written, when
 * that is more than @room.
 */
int kfd_criu_gpus_pairing(struct kfd_process *p,
			  struct kfd_criu_device_bucket *buckets, u32 room)
{
	u32 i;

	lockdep_assert_held(&p->mutex);

	if (p->n_pdds > room)
		return -ENOSPC;
	for (i = 0; i < p->n_pdds; i++)
		buckets[i] = (struct kfd_criu_device_bucket){
			.user_gpu_id = p->pdds[i]->user_gpu_id,
			.actual_gpu_id = p->pdds[i]->dev->id,
		};
	return p->n_pdds;
}

/* Without a partition manager a GPU is one partition. */
static u32 kfd_criu_partition_mode(struct kfd_node *node)
{
	struct amdgpu_xcp_mgr *xcp_mgr = node->adev->xcp_mgr;

	if (!xcp_mgr || xcp_mgr->mode == AMDGPU_XCP_MODE_NONE)
		return AMDGPU_SPX_PARTITION_MODE;
	return xcp_mgr->mode;
}

/*
 * The topology entry of a GPU. This and the calls below that need a GPU's
 * render node, VM, runtime PM or doorbells have KUnit static stubs, behind
 * which the KUnit tests put fake GPUs (kunit_activate_static_stub()).
 * Without CONFIG_KUNIT the redirect compiles to nothing. With it, outside
 * KUnit it is a static branch; while a KUnit test runs, other tasks test
 * one pointer, and only the test's own thread looks its stubs up.
 */
static const struct kfd_node_properties *
kfd_criu_node_props(struct kfd_node *node)
{
	struct kfd_topology_device *topo;

	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_node_props, node);
	topo = kfd_topology_device_by_id(node->id);
	return topo ? &topo->node_props : NULL;
}

static int kfd_criu_gpu_to_rec(struct kfd_node *node, u32 gpu_id,
			       struct kfd_criu_gpu_rec *rec)
{
	const struct kfd_local_mem_info *mem = &node->local_mem_info;
	const struct kfd_node_properties *props;

	props = kfd_criu_node_props(node);
	if (!props)
		return -ENODEV;

	memset(rec, 0, sizeof(*rec));
	rec->gpu_id = cpu_to_le32(gpu_id);
	rec->gfx_target_version = cpu_to_le32(props->gfx_target_version);
	rec->device_id = cpu_to_le32(props->device_id);
	rec->revision_id = cpu_to_le32(node->adev->rev_id);
	rec->num_xcc = cpu_to_le32(NUM_XCC(node->xcc_mask));
	rec->partition_mode = cpu_to_le32(kfd_criu_partition_mode(node));
	rec->vram_size = cpu_to_le64(mem->local_mem_size_private +
				     mem->local_mem_size_public);
	rec->cwsr_size = cpu_to_le32(props->cwsr_size);
	rec->ctl_stack_size = cpu_to_le32(props->ctl_stack_size);
	rec->mec_fw_version = cpu_to_le32(node->kfd->mec_fw_version);
	rec->sdma_fw_version = cpu_to_le32(node->kfd->sdma_fw_version);
	if (!node->kfd->cwsr_enabled)
		rec->flags = cpu_to_le32(KFD_CRIU_GPU_NO_CWSR);
	return 0;
}

/**
 * kfd_criu_gpus_snapshot - record the GPUs of a process for a dump
 * @p: the process
 * @img: receives the records; free it with kfd_criu_gpus_image_free()
 *
 * Context: p->mutex held.
 * Return: 0, -ENOMEM, -ENODEV for a GPU missing from the topology, or
 * -EOPNOTSUPP for a GPU a restore would refuse.
 */
int kfd_criu_gpus_snapshot(struct kfd_process *p,
			   struct kfd_criu_gpus_image *img)
{
	struct kfd_process_device *pdd;
	int ret = 0;
	u32 i;

	lockdep_assert_held(&p->mutex);

	memset(img, 0, sizeof(*img));
	if (!p->n_pdds)
		return 0;
	img->gpus = kvcalloc(p->n_pdds, sizeof(*img->gpus), GFP_KERNEL_ACCOUNT);
	if (!img->gpus)
		return -ENOMEM;
	img->num_gpus = p->n_pdds;
	img->gpus_read = p->n_pdds;

	for (i = 0; !ret && i < p->n_pdds; i++) {
		pdd = p->pdds[i];
		ret = kfd_criu_gpu_to_rec(pdd->dev, pdd->user_gpu_id,
					  &img->gpus[i]);
		img->gpus[i].scratch_backing_va =
			cpu_to_le32(pdd->qpd.sh_hidden_private_base);
		if (!ret && kfd_criu_validate_gpu(&img->gpus[i])) {
			pr_warn_ratelimited("CRIU image: cannot describe GPU 0x%x\n",
					    pdd->user_gpu_id);
			ret = -EOPNOTSUPP;
		}
	}
	if (ret)
		kfd_criu_gpus_image_free(img);
	return ret;
}

/**
 * kfd_criu_gpus_write - write the GPU records
 * @w: the stream, right after the COMPAT record
 * @img: records from kfd_criu_gpus_snapshot()
 *
 * Return: 0 or the writer's error.
 */
int kfd_criu_gpus_write(struct kfd_criu_image_writer *w,
			const struct kfd_criu_gpus_image *img)
{
	int ret = 0;
	u32 i;

	for (i = 0; !ret && i < img->num_gpus; i++)
		ret = kfd_criu_image_write_record(w, KFD_CRIU_REC_GPU,
						  KFD_CRIU_RECORD_MANDATORY,
						  &img->gpus[i],
						  sizeof(img->gpus[i]));
	return ret;
}

/**
 * kfd_criu_gpus_prepare - make room for the GPU records COMPAT announced
 * @img: empty image
 * @num_gpus: COMPAT's num_gpus, already validated
 *
 * Return: 0, -EINVAL for more than %KFD_CRIU_MAX_GPUS, or -ENOMEM.
 */
int kfd_criu_gpus_prepare(struct kfd_criu_gpus_image *img, u32 num_gpus)
{
	if (img->gpus || num_gpus > KFD_CRIU_MAX_GPUS)
		return -EINVAL;
	if (!num_gpus)
		return 0;
	img->gpus = kvcalloc(num_gpus, sizeof(*img->gpus), GFP_KERNEL_ACCOUNT);
	if (!img->gpus)
		return -ENOMEM;
	img->num_gpus = num_gpus;
	return 0;
}

/**
 * kfd_criu_gpus_collect - keep one GPU record of a restore stream
 * @img: image set up by kfd_criu_gpus_prepare()
 * @rec: a GPU record, as the reader returned it
 * @payload: its payload
 *
 * Return: 0, or -EINVAL for another record type, a wrong length or more
 * GPU records than COMPAT announced.
 */
int kfd_criu_gpus_collect(struct kfd_criu_gpus_image *img,
			  const struct kfd_criu_record *rec,
			  const void *payload)
{
	if (rec->type != KFD_CRIU_REC_GPU ||
	    rec->length != sizeof(*img->gpus) ||
	    img->gpus_read >= img->num_gpus)
		return -EINVAL;
	memcpy(&img->gpus[img->gpus_read++], payload, sizeof(*img->gpus));
	return 0;
}

/**
 * kfd_criu_gpus_validate - check collected GPU records as a set
 * @img: records collected from a stream
 *
 * Return: 0, or -EINVAL for a missing record or an invalid one.
 */
int kfd_criu_gpus_validate(const struct kfd_criu_gpus_image *img)
{
	int ret;
	u32 i;

	if (img->gpus_read != img->num_gpus)
		return -EINVAL;
	for (i = 0; i < img->num_gpus; i++) {
		ret = kfd_criu_validate_gpu(&img->gpus[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static bool kfd_criu_id_in(const u32 *ids, u32 num, u32 id)
{
	u32 i;

	for (i = 0; i < num; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* An id of a placed GPU that neither the image nor @new_ids uses yet. */
static u32 kfd_criu_free_user_gpu_id(const u32 *old_ids, u32 num_pdds,
				     const u32 *image_ids, const u32 *target,
				     u32 num_image, const u32 *new_ids)
{
	u32 i, id;

	for (i = 0; i < num_image; i++) {
		id = old_ids[target[i]];
		if (!kfd_criu_id_in(image_ids, num_image, id) &&
		    !kfd_criu_id_in(new_ids, num_pdds, id))
			return id;
	}
	return 0;
}

/**
 * kfd_criu_assign_user_gpu_ids - the gpu_ids a restored process sees
 * @old_ids: the gpu_id each of the process's GPUs shows now, unique
 * @num_pdds: entries in @old_ids and @new_ids
 * @image_ids: the gpu_id of each image GPU, unique
 * @target: for each image GPU, the index in @old_ids of its GPU
 * @num_image: entries in @image_ids and @target
 * @new_ids: receives the gpu_id each GPU shows after the restore
 *
 * A GPU an image GPU was placed on takes that image GPU's id. Every other
 * GPU keeps its id unless the image gives that id to another GPU; then it
 * takes the old id of a placed GPU that no GPU uses any more. One exists:
 * the placed GPUs give up as many ids as the image hands out.
 *
 * Return: 0, or -EINVAL for ids that repeat or a @target out of range.
 */
int kfd_criu_assign_user_gpu_ids(const u32 *old_ids, u32 num_pdds,
				 const u32 *image_ids, const u32 *target,
				 u32 num_image, u32 *new_ids)
{
	u32 i;

	memset(new_ids, 0, num_pdds * sizeof(*new_ids));
	for (i = 0; i < num_image; i++) {
		if (target[i] >= num_pdds || new_ids[target[i]] ||
		    !image_ids[i] ||
		    kfd_criu_id_in(image_ids, i, image_ids[i]))
			return -EINVAL;
		new_ids[target[i]] = image_ids[i];
	}
	for (i = 0; i < num_pdds; i++) {
		if (!old_ids[i] || kfd_criu_id_in(old_ids, i, old_ids[i]))
			return -EINVAL;
		if (!new_ids[i] &&
		    !kfd_criu_id_in(image_ids, num_image, old_ids[i]))
			new_ids[i] = old_ids[i];
	}
	for (i = 0; i < num_pdds; i++) {
		if (new_ids[i])
			continue;
		new_ids[i] = kfd_criu_free_user_gpu_id(old_ids, num_pdds,
						       image_ids, target,
						       num_image, new_ids);
		if (!new_ids[i])
			return -EINVAL;
	}
	return 0;
}

static void kfd_criu_report_mismatch(const struct kfd_criu_gpu_mismatch *why)
{
	if (why->local_gpu_id)
		pr_warn_ratelimited("CRIU image: image GPU 0x%x cannot be restored on local GPU 0x%x: %s differs\n",
				    why->image_gpu_id, why->local_gpu_id,
				    why->field);
	else
		pr_warn_ratelimited("CRIU image: image GPU 0x%x has no local GPU: %s\n",
				    why->image_gpu_id, why->field);
}

static int kfd_criu_local_gpus(struct kfd_process *p,
			       struct kfd_criu_gpu_rec **local)
{
	struct kfd_criu_gpu_rec *recs;
	int ret = 0;
	u32 i;

	*local = NULL;
	if (!p->n_pdds)
		return 0;
	recs = kcalloc(p->n_pdds, sizeof(*recs), GFP_KERNEL_ACCOUNT);
	if (!recs)
		return -ENOMEM;
	for (i = 0; !ret && i < p->n_pdds; i++)
		ret = kfd_criu_gpu_to_rec(p->pdds[i]->dev, p->pdds[i]->dev->id,
					  &recs[i]);
	if (ret) {
		kfree(recs);
		return ret;
	}
	*local = recs;
	return 0;
}

static int kfd_criu_plan_user_gpu_ids(struct kfd_process *p,
				      const struct kfd_criu_gpus_image *img,
				      struct kfd_criu_gpus_restore *st)
{
	u32 image_ids[KFD_CRIU_MAX_GPUS];
	u32 i;

	for (i = 0; i < p->n_pdds; i++)
		st->old_user_gpu_id[i] = p->pdds[i]->user_gpu_id;
	for (i = 0; i < img->num_gpus; i++)
		image_ids[i] = le32_to_cpu(img->gpus[i].gpu_id);
	return kfd_criu_assign_user_gpu_ids(st->old_user_gpu_id, p->n_pdds,
					    image_ids, st->target,
					    img->num_gpus, st->user_gpu_id);
}

/**
 * kfd_criu_gpus_map - place the image GPUs on this machine's GPUs
 * @p: the process being restored
 * @img: validated GPU records
 * @st: restore state; @st->map and @st->num_map hold the caller's map,
 *	already validated; receives the placement and the new gpu_ids
 *
 * Changes nothing but @st.
 *
 * Context: p->mutex held.
 * Return: 0, -ENOMEM, -EINVAL for image gpu_ids that repeat or a map entry
 * for an image GPU the image does not have, or -ENODEV (with a message)
 * when an image GPU has no compatible local GPU.
 */
int kfd_criu_gpus_map(struct kfd_process *p,
		      const struct kfd_criu_gpus_image *img,
		      struct kfd_criu_gpus_restore *st)
{
	struct kfd_criu_gpu_mismatch why = {};
	struct kfd_criu_gpu_rec *local;
	int ret;

	lockdep_assert_held(&p->mutex);

	ret = kfd_criu_local_gpus(p, &local);
	if (ret)
		return ret;
	ret = kfd_criu_map_gpus(img->gpus, img->num_gpus, local, p->n_pdds,
				st->map, st->num_map, st->target, &why);
	kfree(local);
	if (ret == -ENODEV)
		kfd_criu_report_mismatch(&why);
	if (ret)
		return ret;
	return kfd_criu_plan_user_gpu_ids(p, img, st);
}

/**
 * kfd_criu_gpus_pdd - the per-GPU data an image GPU was placed on
 * @p: the process being restored
 * @st: state from kfd_criu_gpus_map()
 * @gpu_index: index of the image GPU, below the image's num_gpus
 *
 * Return: the per-GPU data.
 */
struct kfd_process_device *
kfd_criu_gpus_pdd(struct kfd_process *p, const struct kfd_criu_gpus_restore *st,
		  u32 gpu_index)
{
	return p->pdds[st->target[gpu_index]];
}

static const struct kfd_criu_gpu_map *
kfd_criu_map_entry(const struct kfd_criu_gpus_restore *st, u32 local_gpu_id)
{
	u32 i;

	for (i = 0; i < st->num_map; i++)
		if (st->map[i].local_gpu_id == local_gpu_id)
			return &st->map[i];
	return NULL;
}

/* The render node of @node: its partition's, or the device's. */
static int kfd_criu_check_render_node(struct kfd_node *node, struct file *file)
{
	struct drm_device *ddev = node->xcp ? node->xcp->ddev :
				  adev_to_drm(node->adev);
	struct amdgpu_fpriv *fpriv;
	struct drm_file *drm_file;

	/* amdgpu's own files only: private_data is a drm_file then */
	if (amdgpu_file_to_fpriv(file, &fpriv))
		return -EINVAL;
	drm_file = file->private_data;
	if (!ddev || drm_file->minor != ddev->render)
		return -EINVAL;
	return 0;
}

static void kfd_criu_free_vm_bos(void *data)
{
	kfd_process_device_free_vm_bos(data);
}

/*
 * Releases the VM of @pdd that the restore acquired. The VM's own CWSR and
 * IB buffers are unmapped and freed with interruptible waits, and a failed
 * restore mostly runs with a fatal signal pending: they go in the unwind
 * worker, which no signal reaches.
 */
static void kfd_criu_release_vm(struct kfd_process *p,
				struct kfd_process_device *pdd)
{
	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_release_vm, p, pdd);
	kfd_criu_run_unwind(p, kfd_criu_free_vm_bos, pdd);
	kfd_process_device_fini_vm(pdd);
}

/* Acquires the VM of @pdd on @drm_fd, as AMDKFD_IOC_ACQUIRE_VM does. */
static int kfd_criu_init_vm(struct kfd_process *p,
			    struct kfd_process_device *pdd, int drm_fd)
{
	struct file *drm_file;
	int ret;

	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_init_vm, p, pdd, drm_fd);
	drm_file = fget(drm_fd);
	if (!drm_file)
		return -EBADF;
	ret = kfd_criu_check_render_node(pdd->dev, drm_file);
	if (!ret)
		ret = kfd_process_device_init_vm(pdd, drm_file);
	/* On success the per-GPU data keeps the file reference */
	if (!ret)
		return 0;
	pr_debug("CRIU image: fd %d is not a usable render node of GPU 0x%x: %d\n",
		 drm_fd, pdd->dev->id, ret);
	fput(drm_file);
	return ret;
}

/* Takes the runtime PM reference a VM user holds, once per GPU. */
static int kfd_criu_bind_gpu(struct kfd_process *p,
			     struct kfd_process_device *pdd)
{
	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_bind_gpu, p, pdd);
	return PTR_ERR_OR_ZERO(kfd_bind_process_to_device(pdd->dev, p));
}

/* Gives back the process doorbells and the runtime PM reference, if taken. */
static void kfd_criu_put_gpu(struct kfd_process_device *pdd, bool doorbells,
			     bool runtime_pm)
{
	struct device *dev;

	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_put_gpu, pdd, doorbells, runtime_pm);
	if (doorbells)
		kfd_free_process_doorbells(pdd->dev->kfd, pdd);
	if (!runtime_pm)
		return;
	dev = adev_to_drm(pdd->dev->adev)->dev;
	pm_runtime_mark_last_busy(dev);
	pm_runtime_put_autosuspend(dev);
	pdd->runtime_inuse = false;
}

static int kfd_criu_acquire_vm(struct kfd_process *p, u32 idx, int drm_fd,
			       struct kfd_criu_gpus_restore *st)
{
	struct kfd_process_device *pdd = p->pdds[idx];
	bool runtime_inuse = pdd->runtime_inuse;
	int ret;

	if (pdd->drm_file)
		return -EBUSY;
	ret = kfd_criu_init_vm(p, pdd, drm_fd);
	if (ret)
		return ret;
	st->acquired |= BIT_ULL(idx);

	ret = kfd_criu_bind_gpu(p, pdd);
	if (ret)
		return ret;
	if (!runtime_inuse && pdd->runtime_inuse)
		st->bound |= BIT_ULL(idx);
	return 0;
}

static int kfd_criu_restore_gpu(struct kfd_process *p,
				const struct kfd_criu_gpus_image *img, u32 i,
				bool needed, struct kfd_criu_gpus_restore *st)
{
	u32 idx = st->target[i];
	const struct kfd_criu_gpu_map *entry;
	u32 local_id = p->pdds[idx]->dev->id;

	entry = kfd_criu_map_entry(st, local_id);
	if (entry && entry->drm_fd >= 0)
		return kfd_criu_acquire_vm(p, idx, entry->drm_fd, st);
	if (!needed)
		return 0;
	pr_debug("CRIU image: image GPU 0x%x needs a render node fd for local GPU 0x%x\n",
		 le32_to_cpu(img->gpus[i].gpu_id), local_id);
	return -EINVAL;
}

/*
 * What AMDKFD_IOC_SET_SCRATCH_BACKING_VA set on each GPU, kept before any
 * queue exists. Only GFX7 and GFX8 program it, which image mode does not
 * restore to (KFD_CRIU_FEAT_PRE_GFX9): on every GPU it restores to it is
 * bookkeeping, kept so that a later dump carries it again. The target had
 * none: RESTORE refuses a process with one (KFD_CRIU_FEAT_SCRATCH_BACKING).
 */
static void kfd_criu_set_scratch_backing(struct kfd_process *p,
					 const struct kfd_criu_gpus_image *img,
					 const struct kfd_criu_gpus_restore *st)
{
	u32 i;

	for (i = 0; i < img->num_gpus; i++)
		p->pdds[st->target[i]]->qpd.sh_hidden_private_base =
			le32_to_cpu(img->gpus[i].scratch_backing_va);
}

/**
 * kfd_criu_gpus_restore - acquire the VMs of the placed GPUs
 * @p: the process being restored; it has no GPU VM
 * @img: validated GPU records
 * @needed: BIT(image GPU index) of the GPUs the image's BOs use, which
 *	need a VM and so a render node descriptor in the map
 * @st: state from kfd_criu_gpus_map()
 *
 * Acquires a VM for every placed GPU whose map entry has a descriptor,
 * blocks the MMU notifications of the new VMs until RESUME (the process's
 * memory is not restored yet), then gives every GPU its new gpu_id and
 * its scratch backing VA. On error everything is undone.
 *
 * Context: p->mutex held.
 * Return: 0, -EINVAL for a GPU in @needed without a descriptor or a
 * descriptor that is not the GPU's render node, -EBADF for a descriptor
 * that is not open, -EBUSY for a GPU that has a VM, or the errno of the
 * VM acquisition.
 */
int kfd_criu_gpus_restore(struct kfd_process *p,
			  const struct kfd_criu_gpus_image *img,
			  u64 needed, struct kfd_criu_gpus_restore *st)
{
	int ret;
	u32 i;

	lockdep_assert_held(&p->mutex);

	for (i = 0; i < p->n_pdds; i++)
		if (p->pdds[i]->qpd.proc_doorbells)
			st->had_doorbells |= BIT_ULL(i);
	for (i = 0; i < img->num_gpus; i++) {
		ret = kfd_criu_restore_gpu(p, img, i, needed & BIT_ULL(i), st);
		if (ret)
			goto out_unwind;
	}
	if (st->acquired) {
		amdgpu_amdkfd_block_mmu_notifications(p->kgd_process_info);
		st->mmu_blocked = true;
	}
	for (i = 0; i < p->n_pdds; i++)
		p->pdds[i]->user_gpu_id = st->user_gpu_id[i];
	kfd_criu_set_scratch_backing(p, img, st);
	return 0;

out_unwind:
	kfd_criu_gpus_unwind(p, st);
	return ret;
}

static void kfd_criu_release_gpu(struct kfd_process *p, u32 idx,
				 struct kfd_criu_gpus_restore *st)
{
	struct kfd_process_device *pdd = p->pdds[idx];

	/* Only a GPU whose VM the restore acquired got anything else */
	if (!(st->acquired & BIT_ULL(idx)))
		return;
	kfd_criu_put_gpu(pdd,
			 !(st->had_doorbells & BIT_ULL(idx)) &&
			 pdd->qpd.proc_doorbells,
			 st->bound & BIT_ULL(idx));
	kfd_criu_release_vm(p, pdd);
}

/**
 * kfd_criu_gpus_unwind - undo kfd_criu_gpus_restore()
 * @p: the process being restored
 * @st: state of a restore, complete or partial
 *
 * The BOs the restore created must be gone already. Restores the gpu_ids
 * and clears the scratch backing VAs (the target had none), drops the
 * runtime PM references and doorbells the restore took, and releases the
 * VMs it acquired (with them the process's GPU memory state
 * and the blocked MMU notifications). If kfd_criu_bos_unwind() left a
 * BO it could not unmap, the VMs stay, as the BO still uses that state,
 * and process teardown releases them; the process runs on meanwhile, so
 * its MMU notifications are unblocked, for the userptr BOs it may create.
 *
 * Context: p->mutex held.
 */
void kfd_criu_gpus_unwind(struct kfd_process *p,
			  struct kfd_criu_gpus_restore *st)
{
	bool bos_left = false;
	u32 i;

	lockdep_assert_held(&p->mutex);

	for (i = 0; i < p->n_pdds; i++) {
		if (st->old_user_gpu_id[i])
			p->pdds[i]->user_gpu_id = st->old_user_gpu_id[i];
		p->pdds[i]->qpd.sh_hidden_private_base = 0;
		if ((st->acquired & BIT_ULL(i)) &&
		    !idr_is_empty(&p->pdds[i]->alloc_idr))
			bos_left = true;
	}
	if (bos_left) {
		pr_warn_ratelimited("CRIU image: restored BOs left, keeping the GPU VMs\n");
		if (st->mmu_blocked)
			amdgpu_amdkfd_unblock_mmu_notifications(p->kgd_process_info);
	} else {
		for (i = p->n_pdds; i-- > 0;)
			kfd_criu_release_gpu(p, i, st);
	}
	st->acquired = 0;
	st->bound = 0;
	st->mmu_blocked = false;
}

#if IS_BUILTIN(CONFIG_HSA_AMD_CRIU_KUNIT_TEST)
#include "tests/kfd_criu_gpus_test.c"
#endif
