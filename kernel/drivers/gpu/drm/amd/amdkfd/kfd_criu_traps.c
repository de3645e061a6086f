// SPDX-License-Identifier: GPL-2.0 OR MIT

/**
 * DOC: CRIU image mode - trap handlers
 *
 * A ROCm runtime installs its own trap handler on each GPU it uses with
 * AMDKFD_IOC_SET_TRAP_HANDLER: the GPU VAs of the handler's code (TBA)
 * and memory (TMA). With CWSR, the first-level trap handler the kernel
 * maps into every process jumps to it, reading both addresses from the
 * kernel's per-GPU CWSR page; without CWSR they are the process's own
 * TBA and TMA. Either way they are kernel state the process cannot read
 * back, which a restore without them would lose silently: the waves of
 * the restored process would find no handler at their next trap.
 *
 * Dump writes one TRAP_HANDLER record for each GPU with a handler, after
 * the GPU records. Restore needs that GPU's VM (the CWSR page comes with
 * it), so the GPU is one that needs a render node in the GPU map, and
 * installs the handler right after the VMs, as the ioctl would, before
 * any queue exists. Unwinding clears it again.
 */

#include <linux/bits.h>
#include <linux/iosys-map.h>
#include <linux/lockdep.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "kfd_criu.h"
#include "kfd_priv.h"

/**
 * kfd_criu_traps_image_free - free the records of an image
 * @img: the image; it is empty afterwards
 */
void kfd_criu_traps_image_free(struct kfd_criu_traps_image *img)
{
	kvfree(img->traps);
	memset(img, 0, sizeof(*img));
}

/* The handler a process installed on @pdd, where the ioctl put it. */
static void kfd_criu_read_trap(struct kfd_process_device *pdd, u64 *tba,
			       u64 *tma)
{
	struct qcm_process_device *qpd = &pdd->qpd;

	/* The CWSR area may be in VRAM (iomem): read it through the map */
	if (!iosys_map_is_null(&qpd->cwsr_map)) {
		*tba = iosys_map_rd(&qpd->cwsr_map, KFD_CWSR_TMA_OFFSET, u64);
		*tma = iosys_map_rd(&qpd->cwsr_map,
				    KFD_CWSR_TMA_OFFSET + sizeof(u64), u64);
	} else {
		*tba = qpd->tba_addr;
		*tma = qpd->tma_addr;
	}
}

/**
 * kfd_criu_traps_count - how many GPUs of a process have a trap handler
 * @p: the process
 *
 * Context: p->mutex held.
 * Return: the number of TRAP_HANDLER records a dump would write.
 */
u32 kfd_criu_traps_count(struct kfd_process *p)
{
	u64 tba, tma;
	u32 i, n = 0;

	lockdep_assert_held(&p->mutex);

	for (i = 0; i < p->n_pdds; i++) {
		kfd_criu_read_trap(p->pdds[i], &tba, &tma);
		if (tba || tma)
			n++;
	}
	return n;
}

/**
 * kfd_criu_traps_snapshot - record the trap handlers of a process
 * @p: the process
 * @img: receives the records; free it with kfd_criu_traps_image_free()
 *
 * One record per GPU of p->pdds with a handler, in p->pdds order, which is
 * the order of the GPU records.
 *
 * Context: p->mutex held.
 * Return: 0, -ENOMEM, or -EOPNOTSUPP for addresses the image cannot carry.
 */
int kfd_criu_traps_snapshot(struct kfd_process *p,
			    struct kfd_criu_traps_image *img)
{
	struct kfd_criu_trap_rec *rec;
	u64 tba, tma;
	u32 i;

	lockdep_assert_held(&p->mutex);

	memset(img, 0, sizeof(*img));
	if (!p->n_pdds)
		return 0;
	img->traps = kvcalloc(p->n_pdds, sizeof(*img->traps),
			      GFP_KERNEL_ACCOUNT);
	if (!img->traps)
		return -ENOMEM;
	for (i = 0; i < p->n_pdds; i++) {
		kfd_criu_read_trap(p->pdds[i], &tba, &tma);
		if (!tba && !tma)
			continue;
		rec = &img->traps[img->num_traps++];
		rec->gpu_index = cpu_to_le32(i);
		rec->tba_addr = cpu_to_le64(tba);
		rec->tma_addr = cpu_to_le64(tma);
		if (kfd_criu_validate_trap(rec, p->n_pdds)) {
			pr_warn_ratelimited("CRIU image: cannot carry the trap handler 0x%llx/0x%llx of GPU 0x%x\n",
					    tba, tma, p->pdds[i]->user_gpu_id);
			kfd_criu_traps_image_free(img);
			return -EOPNOTSUPP;
		}
	}
	return 0;
}

/**
 * kfd_criu_traps_write - write the TRAP_HANDLER records
 * @w: the stream, right after the GPU records
 * @img: records from kfd_criu_traps_snapshot()
 *
 * Return: 0 or the writer's error.
 */
int kfd_criu_traps_write(struct kfd_criu_image_writer *w,
			 const struct kfd_criu_traps_image *img)
{
	int ret = 0;
	u32 i;

	for (i = 0; !ret && i < img->num_traps; i++)
		ret = kfd_criu_image_write_record(w, KFD_CRIU_REC_TRAP_HANDLER,
						  KFD_CRIU_RECORD_MANDATORY,
						  &img->traps[i],
						  sizeof(img->traps[i]));
	return ret;
}

/**
 * kfd_criu_traps_collect - keep one TRAP_HANDLER record of a restore stream
 * @img: records collected so far
 * @rec: a TRAP_HANDLER record, as the reader returned it
 * @payload: its payload
 * @num_gpus: GPU records of the image, all of them read already
 *
 * Return: 0, -ENOMEM, or -EINVAL for another record type, a wrong length
 * or more records than GPUs.
 */
int kfd_criu_traps_collect(struct kfd_criu_traps_image *img,
			   const struct kfd_criu_record *rec,
			   const void *payload, u32 num_gpus)
{
	if (rec->type != KFD_CRIU_REC_TRAP_HANDLER ||
	    rec->length != sizeof(*img->traps) || img->num_traps >= num_gpus)
		return -EINVAL;
	if (!img->traps) {
		img->traps = kvcalloc(num_gpus, sizeof(*img->traps),
				      GFP_KERNEL_ACCOUNT);
		if (!img->traps)
			return -ENOMEM;
	}
	memcpy(&img->traps[img->num_traps++], payload, sizeof(*img->traps));
	return 0;
}

/**
 * kfd_criu_traps_needed_gpus - the image GPUs a restore must give a VM
 * @img: validated records
 *
 * Return: BIT(gpu_index) of every GPU with a trap handler.
 */
u64 kfd_criu_traps_needed_gpus(const struct kfd_criu_traps_image *img)
{
	u64 mask = 0;
	u32 i;

	for (i = 0; i < img->num_traps; i++)
		mask |= BIT_ULL(le32_to_cpu(img->traps[i].gpu_index));
	return mask;
}

/**
 * kfd_criu_traps_restore - install the trap handlers of an image
 * @p: the process, whose image GPUs have their VMs
 * @img: records that passed kfd_criu_check_traps()
 * @st: where kfd_criu_gpus_restore() put the image GPUs
 *
 * Context: p->mutex held.
 */
void kfd_criu_traps_restore(struct kfd_process *p,
			    const struct kfd_criu_traps_image *img,
			    const struct kfd_criu_gpus_restore *st)
{
	const struct kfd_criu_trap_rec *rec;
	struct kfd_process_device *pdd;
	u32 i;

	lockdep_assert_held(&p->mutex);

	for (i = 0; i < img->num_traps; i++) {
		rec = &img->traps[i];
		pdd = kfd_criu_gpus_pdd(p, st, le32_to_cpu(rec->gpu_index));
		kfd_process_set_trap_handler(&pdd->qpd,
					     le64_to_cpu(rec->tba_addr),
					     le64_to_cpu(rec->tma_addr));
	}
}

/**
 * kfd_criu_traps_unwind - undo kfd_criu_traps_restore()
 * @p: the process
 * @img: the records kfd_criu_traps_restore() installed
 * @st: where the image GPUs went
 *
 * The GPUs had no handler before: restore refuses a process whose GPUs
 * have VMs, and a handler needs one.
 *
 * Context: p->mutex held.
 */
void kfd_criu_traps_unwind(struct kfd_process *p,
			   const struct kfd_criu_traps_image *img,
			   const struct kfd_criu_gpus_restore *st)
{
	struct kfd_process_device *pdd;
	u32 i;

	lockdep_assert_held(&p->mutex);

	for (i = 0; i < img->num_traps; i++) {
		pdd = kfd_criu_gpus_pdd(p, st,
					le32_to_cpu(img->traps[i].gpu_index));
		kfd_process_set_trap_handler(&pdd->qpd, 0, 0);
	}
}

#if IS_BUILTIN(CONFIG_HSA_AMD_CRIU_KUNIT_TEST)
#include "tests/kfd_criu_traps_test.c"
#endif
