// SPDX-License-Identifier: GPL-2.0 OR MIT

/**
 * DOC: CRIU image mode - user-mode queues
 *
 * Dump runs after PROCESS_INFO evicted the process's queues, so each MQD
 * holds the state its queue was preempted in. It writes one QUEUE record
 * per queue, in ascending queue id order: the addresses and sizes of the
 * ring, the read and write pointer locations, the EOP buffer and the CWSR
 * area, priority and percentage, the PM4 target XCC, the SDMA engine, the
 * doorbell slot in the process's doorbell page, whether the queue has
 * GWS, and the CU mask user mode set. Then one QUEUE_STATE record per
 * queue and XCC carries the dynamic fields of that XCC's MQD that the
 * whitelist names (kfd_criu_mqd_whitelist[]), read through the MQD
 * manager's get_dyn_state() op, and on GFX9 the live part of the control
 * stack, which that generation keeps in the MQD buffer. A queue the image
 * cannot carry (one that is not a user queue, or of a type that
 * kfd_criu_queue_type_carried() refuses), a queue on a GPU whose MQD
 * manager lacks the op, or state the codec would refuse on restore fails the
 * dump with -EOPNOTSUPP and one log line. An SDMA queue user mode created
 * by engine id, as ROCm creates its copy queues on MI200 and MI300, is
 * an SDMA or SDMA-XGMI queue once the hardware scheduler gave it a slot,
 * and is carried as one: its engine and its doorbell give it the same
 * slot on restore. Without HWS (amdgpu.sched_policy=2, a debug setting)
 * it keeps its type and is refused.
 *
 * Restore validates all queue records and states as a set first. Once
 * the GPUs, their VMs and the BOs are restored, it checks the target: the
 * GPU of each queue has a VM, its MQD manager has set_dyn_state(), a queue
 * that used GWS finds GWS (else -ENODEV), and the queue id and the
 * doorbell slot are free (else -EBUSY, naming the id). Then it creates
 * each queue through the normal path: the queue buffers are acquired as
 * the create ioctl does, and pqm_create_queue() builds the MQD with
 * init_mqd() from the recorded properties; a raw MQD never comes from the
 * image. The CU mask goes through pqm_update_mqd() and GWS through
 * pqm_set_gws(), as their ioctls do. Last, the dynamic state is written
 * into each XCC's new MQD through set_dyn_state(): the whitelist fields,
 * validated, and on GFX9 the control stack, checked for its length only.
 * A GPU without room for a queue fails the restore with -ENOSPC, whichever
 * limit of its queue manager the queue hit.
 *
 * Which ids a restored queue keeps:
 *
 * - its queue id and its doorbell slot, which user mode uses; both are
 *   free in a fresh process, and a taken one fails the restore;
 * - on SOC15 and later, the SDMA queue slot of an SDMA queue, because its
 *   doorbell follows from the slot (kfd_criu_slot_user_visible()): the
 *   slot is found from the doorbell with kfd_dqm_sdma_id_by_doorbell(),
 *   and a slot another process took fails the restore with -EBUSY. Every
 *   generation with the MQD ops is SOC15;
 * - not the hardware queue slot (pipe, queue) of a queue without HWS,
 *   which user mode never sees: the normal allocator chooses it.
 *
 * The process is evicted while its queues are created, so each new queue
 * starts evicted and inactive, and stays so until RESUME restores the
 * process's queues. kfd_criu_queues_unwind() destroys the queues created
 * so far, newest first, which also releases their buffers and GWS, in a
 * worker that no signal interrupts (kfd_criu_run_unwind()).
 */

#include <linux/bitmap.h>
#include <linux/lockdep.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <kunit/static_stub.h>

#include "kfd_criu.h"
#include "kfd_device_queue_manager.h"
#include "kfd_mqd_manager.h"
#include "kfd_priv.h"
#include "kfd_topology.h"

/* Bytes of a QUEUE_STATE payload before its control stack */
#define KFD_CRIU_QUEUE_STATE_FIXED (sizeof(struct kfd_criu_queue_state_hdr) + \
				    sizeof(struct kfd_criu_queue_dyn))
/* CU mask words one QUEUE record may carry */
#define KFD_CRIU_CU_MASK_WORDS	(KFD_CRIU_MAX_CU_MASK_BITS / 32)

/*
 * The calls into the queue managers that need a GPU's VM, doorbells and
 * hardware queues. The KUnit tests put a fake queue manager behind them
 * (kunit_activate_static_stub()). Without CONFIG_KUNIT the redirect
 * compiles to nothing. With it, outside KUnit it is a static branch; while
 * a KUnit test runs, other tasks test one pointer, and only the test's own
 * thread looks its stubs up.
 */
static int kfd_criu_queue_acquire_buffers(struct kfd_process_device *pdd,
					  struct queue_properties *qp,
					  bool cwsr_svm)
{
	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_queue_acquire_buffers, pdd, qp,
				   cwsr_svm);
	return cwsr_svm ? kfd_queue_acquire_buffers_criu(pdd, qp) :
			  kfd_queue_acquire_buffers(pdd, qp);
}

static int kfd_criu_queue_acquire_cwsr_svm(struct kfd_process_device *pdd,
					   struct queue_properties *qp)
{
	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_queue_acquire_cwsr_svm, pdd, qp);
	return kfd_queue_acquire_cwsr_svm(pdd, qp);
}

static void kfd_criu_queue_release_buffers(struct kfd_process_device *pdd,
					   struct queue_properties *qp)
{
	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_queue_release_buffers, pdd, qp);
	/* A hold left behind makes the unmap of these BOs fail with -EBUSY */
	if (kfd_queue_unref_bo_vas(pdd, qp))
		pr_warn_ratelimited("CRIU image: a restored queue's buffers stay held\n");
	kfd_queue_release_buffers(pdd, qp);
}

static int kfd_criu_queue_pqm_create(struct kfd_process *p,
				     struct kfd_process_device *pdd,
				     struct queue_properties *qp,
				     const struct kfd_criu_queue_priv_data *ids)
{
	unsigned int qid;

	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_queue_pqm_create, p, pdd, qp, ids);
	return pqm_create_queue(&p->pqm, pdd->dev, qp, &qid, ids,
				NULL, NULL, NULL);
}

static int kfd_criu_queue_pqm_destroy(struct kfd_process *p, u32 qid)
{
	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_queue_pqm_destroy, p, qid);
	return pqm_destroy_queue(&p->pqm, qid);
}

/**
 * kfd_criu_queues_image_free - free what a queues image holds
 * @img: image from a snapshot or a restore, may be partly filled; its
 *	queues must be destroyed or kept already
 */
void kfd_criu_queues_image_free(struct kfd_criu_queues_image *img)
{
	u32 i;

	for (i = 0; img->states && i < img->num_states; i++)
		kvfree(img->states[i].payload);
	kvfree(img->states);
	kvfree(img->queues);
	kvfree(img->cu_masks);
	memset(img, 0, sizeof(*img));
}

static bool kfd_criu_queue_is_sdma(enum kfd_queue_type type)
{
	return type == KFD_QUEUE_TYPE_SDMA || type == KFD_QUEUE_TYPE_SDMA_XGMI;
}

/*
 * The KFD_IOC_QUEUE_TYPE_* a queue of @type and @format is carried as. A
 * queue user mode created by SDMA engine id took the SDMA type of that
 * engine and a slot on it when it was created; its record keeps the
 * engine and the doorbell, which fixes the slot again on restore
 * (kfd_criu_queue_sdma_id()). Kernel queues have no uAPI type.
 */
static u32 kfd_criu_queue_ioc_type(enum kfd_queue_type type,
				   enum kfd_queue_format format)
{
	switch (type) {
	case KFD_QUEUE_TYPE_COMPUTE:
		return format == KFD_QUEUE_FORMAT_AQL ?
		       KFD_IOC_QUEUE_TYPE_COMPUTE_AQL :
		       KFD_IOC_QUEUE_TYPE_COMPUTE;
	case KFD_QUEUE_TYPE_SDMA:
		return KFD_IOC_QUEUE_TYPE_SDMA;
	case KFD_QUEUE_TYPE_SDMA_XGMI:
		return KFD_IOC_QUEUE_TYPE_SDMA_XGMI;
	case KFD_QUEUE_TYPE_SDMA_BY_ENG_ID:
		return KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID;
	default:
		return U32_MAX;
	}
}

static const char *kfd_criu_queue_type_name(enum kfd_queue_type type)
{
	switch (type) {
	case KFD_QUEUE_TYPE_COMPUTE:
		return "compute";
	case KFD_QUEUE_TYPE_SDMA:
		return "SDMA";
	case KFD_QUEUE_TYPE_SDMA_XGMI:
		return "SDMA XGMI";
	case KFD_QUEUE_TYPE_SDMA_BY_ENG_ID:
		return "SDMA by engine id";
	case KFD_QUEUE_TYPE_HIQ:
		return "HIQ";
	default:
		return "unknown";
	}
}

/* MQDs of a queue: one per XCC for compute, one for SDMA. */
static u32 kfd_criu_queue_num_xcc(const struct queue *q)
{
	if (kfd_criu_queue_is_sdma(q->properties.type) ||
	    q->properties.type == KFD_QUEUE_TYPE_SDMA_BY_ENG_ID)
		return 1;
	return NUM_XCC(q->device->xcc_mask);
}

/**
 * kfd_criu_queue_fill_rec - the QUEUE record of a queue
 * @q: the queue
 * @gpu_index: index of its GPU in the process's per-GPU data
 * @num_xcc: its MQDs
 * @rec: receives the fixed part
 * @cu: receives the CU mask words, %KFD_CRIU_CU_MASK_WORDS of room
 *
 * Pure: takes what the record carries from @q's properties, its doorbell
 * slot, GWS and the CU mask user mode set. Fields of the other engine
 * stay zero, as kfd_criu_validate_queue() wants them. A ring of more than
 * 4 GiB does not fit the record and shows as size 0, which validation
 * refuses.
 */
static void kfd_criu_queue_fill_rec(const struct queue *q, u32 gpu_index,
				    u32 num_xcc, struct kfd_criu_queue_rec *rec,
				    __le32 *cu)
{
	const struct queue_properties *qp = &q->properties;
	bool sdma = kfd_criu_queue_is_sdma(qp->type);
	u32 i, words;

	memset(rec, 0, sizeof(*rec));
	rec->ring_base = cpu_to_le64(qp->queue_address);
	rec->read_ptr_addr = cpu_to_le64((uintptr_t)qp->read_ptr);
	rec->write_ptr_addr = cpu_to_le64((uintptr_t)qp->write_ptr);
	rec->queue_id = cpu_to_le32(qp->queue_id);
	rec->gpu_index = cpu_to_le32(gpu_index);
	rec->type = cpu_to_le32(KFD_IOC_QUEUE_TYPE_COMPUTE);
	if (sdma)
		rec->type = cpu_to_le32(kfd_criu_queue_ioc_type(qp->type, 0));
	rec->format = cpu_to_le32(qp->format == KFD_QUEUE_FORMAT_AQL ?
				  KFD_CRIU_QUEUE_FORMAT_AQL :
				  KFD_CRIU_QUEUE_FORMAT_PM4);
	rec->priority = cpu_to_le32(qp->priority);
	rec->queue_percent = cpu_to_le32(qp->queue_percent);
	rec->ring_size = cpu_to_le32(qp->queue_size <= U32_MAX ?
				     qp->queue_size : 0);
	rec->doorbell_offset = cpu_to_le32(q->doorbell_id);
	rec->num_xcc = cpu_to_le32(num_xcc);
	if (sdma) {
		rec->sdma_engine_id = cpu_to_le32(qp->sdma_engine_id);
		return;
	}
	rec->eop_base = cpu_to_le64(qp->eop_ring_buffer_address);
	rec->eop_size = cpu_to_le32(qp->eop_ring_buffer_size);
	rec->ctx_save_restore_base =
		cpu_to_le64(qp->ctx_save_restore_area_address);
	rec->ctx_save_restore_size =
		cpu_to_le32(qp->ctx_save_restore_area_size);
	rec->ctl_stack_size = cpu_to_le32(qp->ctl_stack_size);
	rec->pm4_target_xcc = cpu_to_le32(qp->pm4_target_xcc);
	rec->gws = cpu_to_le32(q->gws ? 1 : 0);
	if (!q->cu_mask)
		return;
	words = min_t(u32, q->cu_mask_count / 32, KFD_CRIU_CU_MASK_WORDS);
	rec->num_cu_mask = cpu_to_le32(words * 32);
	for (i = 0; i < words; i++)
		cu[i] = cpu_to_le32(q->cu_mask[i]);
}

/**
 * kfd_criu_queue_props - the creation properties of a recorded queue
 * @rec: a validated QUEUE record
 * @qp: receives the properties, as the create ioctl would set them
 *
 * Pure; the inverse of kfd_criu_queue_fill_rec() for what creation takes.
 */
static void kfd_criu_queue_props(const struct kfd_criu_queue_rec *rec,
				 struct queue_properties *qp)
{
	u32 type = le32_to_cpu(rec->type);

	memset(qp, 0, sizeof(*qp));
	if (type == KFD_IOC_QUEUE_TYPE_SDMA)
		qp->type = KFD_QUEUE_TYPE_SDMA;
	else if (type == KFD_IOC_QUEUE_TYPE_SDMA_XGMI)
		qp->type = KFD_QUEUE_TYPE_SDMA_XGMI;
	else
		qp->type = KFD_QUEUE_TYPE_COMPUTE;
	qp->format = le32_to_cpu(rec->format) == KFD_CRIU_QUEUE_FORMAT_AQL ?
		     KFD_QUEUE_FORMAT_AQL : KFD_QUEUE_FORMAT_PM4;
	qp->queue_address = le64_to_cpu(rec->ring_base);
	qp->queue_size = le32_to_cpu(rec->ring_size);
	qp->priority = le32_to_cpu(rec->priority);
	qp->queue_percent = le32_to_cpu(rec->queue_percent);
	qp->pm4_target_xcc = le32_to_cpu(rec->pm4_target_xcc);
	qp->read_ptr = (void __user *)(uintptr_t)le64_to_cpu(rec->read_ptr_addr);
	qp->write_ptr =
		(void __user *)(uintptr_t)le64_to_cpu(rec->write_ptr_addr);
	qp->eop_ring_buffer_address = le64_to_cpu(rec->eop_base);
	qp->eop_ring_buffer_size = le32_to_cpu(rec->eop_size);
	qp->ctx_save_restore_area_address =
		le64_to_cpu(rec->ctx_save_restore_base);
	qp->ctx_save_restore_area_size =
		le32_to_cpu(rec->ctx_save_restore_size);
	qp->ctl_stack_size = le32_to_cpu(rec->ctl_stack_size);
	qp->sdma_engine_id = le32_to_cpu(rec->sdma_engine_id);
}

/*
 * The MQD manager of a queue of @type, as the DQM picks it: a queue
 * created by engine id that kept its type (no HWS) has an SDMA MQD too.
 */
static struct mqd_manager *kfd_criu_mqd_mgr(struct kfd_node *dev,
					    enum kfd_queue_type type)
{
	bool sdma = kfd_criu_queue_is_sdma(type) ||
		    type == KFD_QUEUE_TYPE_SDMA_BY_ENG_ID;

	return dev->dqm->mqd_mgrs[sdma ? KFD_MQD_TYPE_SDMA : KFD_MQD_TYPE_CP];
}

/*
 * Reads the dynamic state of XCC @xcc of a preempted queue under the
 * queue manager's lock, as the legacy checkpoint_mqd() does. @ctl_stack
 * may be NULL to learn the control stack's length only.
 */
static int kfd_criu_queue_get_dyn(struct queue *q, u32 xcc,
				  struct kfd_criu_queue_dyn *dyn,
				  void *ctl_stack, u32 *len)
{
	struct device_queue_manager *dqm = q->device->dqm;
	struct mqd_manager *mqd_mgr;
	int ret;

	mqd_mgr = kfd_criu_mqd_mgr(q->device, q->properties.type);
	if (!mqd_mgr->get_dyn_state)
		return -EOPNOTSUPP;
	dqm_lock(dqm);
	if (q->properties.is_active)
		ret = -EBUSY;
	else
		ret = mqd_mgr->get_dyn_state(mqd_mgr, q->mqd, &q->properties,
					     xcc, dyn, ctl_stack, len);
	dqm_unlock(dqm);
	return ret;
}

/**
 * kfd_criu_queues_count - what the queue part of an image holds
 * @p: the process, its queues evicted
 * @num_queues: receives the number of queues
 * @stream_bytes: receives the stream bytes of the QUEUE and QUEUE_STATE
 *	records
 *
 * Counts every queue; kfd_criu_queues_snapshot() refuses those the image
 * cannot carry, whose state is counted as empty here.
 *
 * Context: p->mutex held.
 */
void kfd_criu_queues_count(struct kfd_process *p, u32 *num_queues,
			   u64 *stream_bytes)
{
	struct kfd_criu_queue_dyn dyn;
	struct process_queue_node *pqn;
	struct queue *q;
	u32 xcc, len;

	lockdep_assert_held(&p->mutex);

	*num_queues = 0;
	*stream_bytes = 0;
	list_for_each_entry(pqn, &p->pqm.queues, process_queue_list) {
		(*num_queues)++;
		*stream_bytes += KFD_CRIU_RECORD_OVERHEAD +
				 sizeof(struct kfd_criu_queue_rec);
		q = pqn->q;
		if (!q)
			continue;
		if (!kfd_criu_queue_is_sdma(q->properties.type) && q->cu_mask)
			*stream_bytes += min_t(u32, q->cu_mask_count / 32,
					       KFD_CRIU_CU_MASK_WORDS) *
					 sizeof(__le32);
		for (xcc = 0; xcc < kfd_criu_queue_num_xcc(q); xcc++) {
			if (kfd_criu_queue_get_dyn(q, xcc, &dyn, NULL, &len))
				len = 0;
			*stream_bytes += KFD_CRIU_RECORD_OVERHEAD +
					 KFD_CRIU_QUEUE_STATE_FIXED + len;
		}
	}
}

static int kfd_criu_queue_gpu_index(struct kfd_process *p,
				    const struct queue *q, u32 *gpu_index)
{
	u32 i;

	for (i = 0; i < p->n_pdds; i++) {
		if (p->pdds[i]->dev == q->device) {
			*gpu_index = i;
			return 0;
		}
	}
	return -EINVAL;
}

/* The record of queue @qid, or -EOPNOTSUPP when the image cannot carry it. */
static int kfd_criu_queue_snapshot_rec(struct kfd_process *p, u32 qid,
				       struct kfd_criu_queues_image *img,
				       u32 n)
{
	struct queue *q = pqm_get_user_queue(&p->pqm, qid);
	u32 gpu_index, ioc_type;

	if (!q) {
		pr_warn_ratelimited("CRIU image: queue %u is not a user queue, which the image cannot carry\n",
				    qid);
		return -EOPNOTSUPP;
	}
	ioc_type = kfd_criu_queue_ioc_type(q->properties.type,
					   q->properties.format);
	if (kfd_criu_queue_type_carried(ioc_type)) {
		pr_warn_ratelimited("CRIU image: queue %u has type %s, which the image cannot carry\n",
				    qid,
				    kfd_criu_queue_type_name(q->properties.type));
		return -EOPNOTSUPP;
	}
	if (kfd_criu_queue_gpu_index(p, q, &gpu_index))
		return -EINVAL;
	kfd_criu_queue_fill_rec(q, gpu_index, kfd_criu_queue_num_xcc(q),
				&img->queues[n],
				img->cu_masks + n * KFD_CRIU_CU_MASK_WORDS);
	img->num_states += kfd_criu_queue_num_xcc(q);
	return 0;
}

/* The QUEUE_STATE record of XCC @xcc of the queue of record @n. */
static int kfd_criu_queue_snapshot_state(struct kfd_process *p,
					 struct kfd_criu_queues_image *img,
					 u32 n, u32 xcc,
					 struct kfd_criu_queue_state *state)
{
	const struct kfd_criu_queue_rec *rec = &img->queues[n];
	struct kfd_criu_queue_state_hdr *hdr;
	struct queue *q;
	u32 len;
	int ret;

	q = pqm_get_user_queue(&p->pqm, le32_to_cpu(rec->queue_id));
	if (WARN_ON(!q) ||
	    le32_to_cpu(rec->ctl_stack_size) > KFD_CRIU_MAX_CTL_STACK_SIZE)
		return -EOPNOTSUPP;
	hdr = kvzalloc(KFD_CRIU_QUEUE_STATE_FIXED +
		       le32_to_cpu(rec->ctl_stack_size), GFP_KERNEL_ACCOUNT);
	if (!hdr)
		return -ENOMEM;
	state->payload = hdr;
	ret = kfd_criu_queue_get_dyn(q, xcc, (void *)(hdr + 1),
				     (void *)hdr + KFD_CRIU_QUEUE_STATE_FIXED,
				     &len);
	if (ret) {
		pr_warn_ratelimited("CRIU image: cannot read the state of queue %u: %d\n",
				    le32_to_cpu(rec->queue_id), ret);
		return ret == -EBUSY ? -EBUSY : -EOPNOTSUPP;
	}
	if (len > le32_to_cpu(rec->ctl_stack_size))
		return -EOPNOTSUPP;
	hdr->queue_index = cpu_to_le32(n);
	hdr->xcc = cpu_to_le32(xcc);
	hdr->data_len = cpu_to_le32(len);
	state->len = KFD_CRIU_QUEUE_STATE_FIXED + len;
	return 0;
}

static int kfd_criu_queues_snapshot_states(struct kfd_process *p,
					   struct kfd_criu_queues_image *img)
{
	u32 n, xcc, k = 0;
	int ret;

	img->states = kvcalloc(img->num_states, sizeof(*img->states),
			       GFP_KERNEL_ACCOUNT);
	if (!img->states)
		return -ENOMEM;
	for (n = 0; n < img->num_queues; n++) {
		for (xcc = 0; xcc < le32_to_cpu(img->queues[n].num_xcc); xcc++) {
			if (WARN_ON(k == img->num_states))
				return -EINVAL;
			ret = kfd_criu_queue_snapshot_state(p, img, n, xcc,
							    &img->states[k++]);
			if (ret)
				return ret;
		}
	}
	img->states_read = k;
	return k == img->num_states ? 0 : -EINVAL;
}

/* The checks a restore makes, so a dump never writes what it refuses. */
static int kfd_criu_queues_check(struct kfd_criu_queues_image *img,
				 const struct kfd_criu_gpus_image *gpus)
{
	struct kfd_criu_queue_cursor cur;
	const struct kfd_criu_queue_state_hdr *hdr;
	u32 i;
	int ret;

	ret = kfd_criu_check_queues(img->queues, img->num_queues, gpus->gpus,
				    gpus->num_gpus);
	kfd_criu_queue_cursor_init(&cur);
	for (i = 0; !ret && i < img->num_states; i++) {
		hdr = img->states[i].payload;
		ret = kfd_criu_queue_state_check(&cur, img->queues,
						 img->num_queues, gpus->gpus,
						 hdr, (const void *)(hdr + 1),
						 img->states[i].len);
	}
	if (!ret && cur.queue_index != img->num_queues)
		ret = -EINVAL;
	return ret;
}

static int kfd_criu_queues_alloc(struct kfd_criu_queues_image *img, u32 n)
{
	img->queues = kvcalloc(n, sizeof(*img->queues), GFP_KERNEL_ACCOUNT);
	img->cu_masks = kvcalloc(array_size(n, KFD_CRIU_CU_MASK_WORDS),
				 sizeof(*img->cu_masks), GFP_KERNEL_ACCOUNT);
	if (!img->queues || !img->cu_masks)
		return -ENOMEM;
	img->num_queues = n;
	return 0;
}

/**
 * kfd_criu_queues_snapshot - record the queues of a process for a dump
 * @p: the process, paused: its queues are evicted
 * @gpus: the GPU records of the same dump
 * @img: receives the records; free it with kfd_criu_queues_image_free()
 *
 * Context: p->mutex held.
 * Return: 0, -ENOMEM, -EBUSY for a queue that is not preempted, or
 * -EOPNOTSUPP for a queue or state the image cannot carry.
 */
int kfd_criu_queues_snapshot(struct kfd_process *p,
			     const struct kfd_criu_gpus_image *gpus,
			     struct kfd_criu_queues_image *img)
{
	unsigned long qid;
	u32 num, n = 0;
	u64 bytes;
	int ret;

	lockdep_assert_held(&p->mutex);

	memset(img, 0, sizeof(*img));
	kfd_criu_queues_count(p, &num, &bytes);
	if (!num)
		return 0;
	if (num > KFD_CRIU_MAX_QUEUES) {
		pr_warn_ratelimited("CRIU image: cannot carry %u queues\n", num);
		return -EOPNOTSUPP;
	}
	ret = kfd_criu_queues_alloc(img, num);
	for_each_set_bit(qid, p->pqm.queue_slot_bitmap,
			 KFD_MAX_NUM_OF_QUEUES_PER_PROCESS) {
		if (ret)
			break;
		if (WARN_ON(n == num))
			ret = -EINVAL;
		else
			ret = kfd_criu_queue_snapshot_rec(p, qid, img, n++);
	}
	if (!ret && n != num)
		ret = -EINVAL;
	if (!ret)
		ret = kfd_criu_queues_snapshot_states(p, img);
	img->queues_read = n;
	if (!ret) {
		ret = kfd_criu_queues_check(img, gpus);
		if (ret && ret != -ENOMEM) {
			pr_warn_ratelimited("CRIU image: queues the image cannot carry: %d\n",
					    ret);
			ret = -EOPNOTSUPP;
		}
	}
	if (ret)
		kfd_criu_queues_image_free(img);
	return ret;
}

/**
 * kfd_criu_queues_write - write the QUEUE and QUEUE_STATE records
 * @w: the stream, right after the BO records
 * @img: records from kfd_criu_queues_snapshot()
 *
 * Return: 0 or the writer's error.
 */
int kfd_criu_queues_write(struct kfd_criu_image_writer *w,
			  const struct kfd_criu_queues_image *img)
{
	const struct kfd_criu_queue_rec *rec;
	u32 i, len;
	int ret = 0;

	for (i = 0; !ret && i < img->num_queues; i++) {
		rec = &img->queues[i];
		len = kfd_criu_queue_len(rec);
		ret = kfd_criu_image_begin_record(w, KFD_CRIU_REC_QUEUE,
						  KFD_CRIU_RECORD_MANDATORY,
						  len);
		if (!ret)
			ret = kfd_criu_image_write_data(w, rec, sizeof(*rec));
		if (!ret && len > sizeof(*rec))
			ret = kfd_criu_image_write_data(w, img->cu_masks +
							i * KFD_CRIU_CU_MASK_WORDS,
							len - sizeof(*rec));
		if (!ret)
			ret = kfd_criu_image_finish_record(w);
	}
	for (i = 0; !ret && i < img->num_states; i++)
		ret = kfd_criu_image_write_record(w, KFD_CRIU_REC_QUEUE_STATE,
						  KFD_CRIU_RECORD_MANDATORY,
						  img->states[i].payload,
						  img->states[i].len);
	return ret;
}

static int kfd_criu_collect_queue(struct kfd_criu_queues_image *img,
				  u32 num_queues,
				  const struct kfd_criu_record *rec,
				  const void *payload)
{
	const struct kfd_criu_queue_rec *fixed = payload;
	u32 n = img->queues_read, words;
	int ret;

	if (!img->queues) {
		if (!num_queues || num_queues > KFD_CRIU_MAX_QUEUES)
			return -EINVAL;
		ret = kfd_criu_queues_alloc(img, num_queues);
		if (ret)
			return ret;
	}
	if (n >= img->num_queues || img->states ||
	    rec->length < sizeof(*fixed) ||
	    rec->length != kfd_criu_queue_len(fixed))
		return -EINVAL;
	words = (rec->length - sizeof(*fixed)) / sizeof(__le32);
	if (words > KFD_CRIU_CU_MASK_WORDS)
		return -EINVAL;
	memcpy(&img->queues[n], fixed, sizeof(*fixed));
	memcpy(img->cu_masks + n * KFD_CRIU_CU_MASK_WORDS, fixed + 1,
	       words * sizeof(__le32));
	img->queues_read++;
	return 0;
}

/*
 * Checks the QUEUE records as a set, once all are in, and makes room for
 * the states: one per queue and XCC. The GPU records are checked first,
 * since the queue checks trust their XCC counts.
 */
static int kfd_criu_queues_check_set(struct kfd_criu_queues_image *img,
				     const struct kfd_criu_gpus_image *gpus)
{
	u32 i;
	int ret;

	if (img->states)
		return 0;
	if (img->queues_read != img->num_queues)
		return -EINVAL;
	ret = kfd_criu_gpus_validate(gpus);
	if (!ret)
		ret = kfd_criu_check_queues(img->queues, img->num_queues,
					    gpus->gpus, gpus->num_gpus);
	if (ret)
		return ret;
	img->num_states = 0;
	for (i = 0; i < img->num_queues; i++)
		img->num_states += le32_to_cpu(img->queues[i].num_xcc);
	img->states = kvcalloc(img->num_states, sizeof(*img->states),
			       GFP_KERNEL_ACCOUNT);
	if (!img->states)
		return -ENOMEM;
	kfd_criu_queue_cursor_init(&img->cursor);
	return 0;
}

static int kfd_criu_collect_state(struct kfd_criu_queues_image *img,
				  const struct kfd_criu_gpus_image *gpus,
				  const struct kfd_criu_record *rec,
				  const void *payload)
{
	const struct kfd_criu_queue_state_hdr *hdr = payload;
	struct kfd_criu_queue_state *state;
	int ret;

	if (!img->queues || rec->length < KFD_CRIU_QUEUE_STATE_FIXED)
		return -EINVAL;
	ret = kfd_criu_queues_check_set(img, gpus);
	if (!ret)
		ret = kfd_criu_queue_state_check(&img->cursor, img->queues,
						 img->num_queues, gpus->gpus,
						 hdr, (const void *)(hdr + 1),
						 rec->length);
	if (ret)
		return ret;
	/* The cursor accepts exactly num_states records */
	if (WARN_ON(img->states_read >= img->num_states))
		return -EINVAL;
	state = &img->states[img->states_read];
	state->payload = kvmemdup(payload, rec->length, GFP_KERNEL_ACCOUNT);
	if (!state->payload)
		return -ENOMEM;
	state->len = rec->length;
	img->states_read++;
	return 0;
}

/**
 * kfd_criu_queues_collect - keep one QUEUE or QUEUE_STATE record
 * @img: state collected so far
 * @num_queues: COUNTS's num_queues, already validated
 * @gpus: the image's GPU records, all collected
 * @rec: the record, as the reader returned it
 * @payload: its payload
 *
 * QUEUE records are kept as they come. The first QUEUE_STATE record
 * checks the QUEUE records as a set (kfd_criu_check_queues()), since
 * each state is checked against its queue as it arrives; the states
 * must come in the order of kfd_criu_queue_state_check().
 *
 * Return: 0, -ENOMEM, -EEXIST for a queue id or doorbell that repeats,
 * -EOPNOTSUPP for a queue kfd_criu_validate_queue() cannot restore, or
 * -EINVAL for any other record out of place or invalid.
 */
int kfd_criu_queues_collect(struct kfd_criu_queues_image *img, u32 num_queues,
			    const struct kfd_criu_gpus_image *gpus,
			    const struct kfd_criu_record *rec,
			    const void *payload)
{
	switch (rec->type) {
	case KFD_CRIU_REC_QUEUE:
		return kfd_criu_collect_queue(img, num_queues, rec, payload);
	case KFD_CRIU_REC_QUEUE_STATE:
		return kfd_criu_collect_state(img, gpus, rec, payload);
	default:
		return -EINVAL;
	}
}

/**
 * kfd_criu_queues_validate - check that the queue records are complete
 * @img: records collected from a stream
 * @num_queues: COUNTS's num_queues
 * @gpus: the image's GPU records
 *
 * Return: 0, -ENOMEM, or the errno of kfd_criu_queues_collect() for a
 * queue set that was never checked, or -EINVAL when records or states are
 * missing.
 */
int kfd_criu_queues_validate(struct kfd_criu_queues_image *img,
			     u32 num_queues,
			     const struct kfd_criu_gpus_image *gpus)
{
	int ret;

	if (!num_queues)
		return img->queues ? -EINVAL : 0;
	if (!img->queues || img->num_queues != num_queues)
		return -EINVAL;
	ret = kfd_criu_queues_check_set(img, gpus);
	if (ret)
		return ret;
	if (img->cursor.queue_index != img->num_queues ||
	    img->states_read != img->num_states)
		return -EINVAL;
	return 0;
}

/**
 * kfd_criu_queues_needed_gpus - the image GPUs the queues need a VM on
 * @img: validated queue records
 *
 * Return: BIT(image GPU index) of every GPU with a queue.
 */
u64 kfd_criu_queues_needed_gpus(const struct kfd_criu_queues_image *img)
{
	u64 mask = 0;
	u32 i;

	for (i = 0; i < img->num_queues; i++)
		mask |= BIT_ULL(le32_to_cpu(img->queues[i].gpu_index));
	return mask;
}

/*
 * The SDMA slot an SDMA queue must get: on SOC15 its doorbell follows
 * from the slot, so the slot is user-visible and found from the doorbell.
 */
static int kfd_criu_queue_sdma_id(struct kfd_node *dev,
				  const struct kfd_criu_queue_rec *rec,
				  u32 *sdma_id)
{
	u32 type = le32_to_cpu(rec->type);
	u32 engines, engine;
	int ret;

	if (!kfd_criu_slot_user_visible(KFD_CRIU_SLOT_SDMA, KFD_IS_SOC15(dev)))
		return -EOPNOTSUPP;
	ret = kfd_dqm_sdma_id_by_doorbell(dev->dqm,
					  type == KFD_IOC_QUEUE_TYPE_SDMA_XGMI ?
					  KFD_QUEUE_TYPE_SDMA_XGMI :
					  KFD_QUEUE_TYPE_SDMA,
					  le32_to_cpu(rec->doorbell_offset),
					  sdma_id);
	if (ret)
		return -EINVAL;
	if (type == KFD_IOC_QUEUE_TYPE_SDMA_XGMI) {
		engines = kfd_get_num_xgmi_sdma_engines(dev);
		engine = kfd_get_num_sdma_engines(dev) + *sdma_id % engines;
	} else {
		engines = kfd_get_num_sdma_engines(dev);
		engine = *sdma_id % engines;
	}
	return engine == le32_to_cpu(rec->sdma_engine_id) ? 0 : -EINVAL;
}

/* Whether a slot user mode sees is still free. */
static int kfd_criu_queue_slot_free(u32 qid, enum kfd_criu_slot_kind kind,
				    u32 wanted, const unsigned long *taken)
{
	int ret;

	ret = kfd_criu_pick_slot(wanted, taken,
				 KFD_MAX_NUM_OF_QUEUES_PER_PROCESS,
				 KFD_CRIU_SLOT_USER_VISIBLE);
	if (ret < 0)
		pr_warn_ratelimited("CRIU image: queue %u: %s %u is taken\n",
				    qid, kfd_criu_slot_name(kind), wanted);
	return ret < 0 ? -EBUSY : 0;
}

/*
 * Whether the SDMA slot @sdma_id of the GPU's device-wide bitmap of that
 * queue type is free, as allocate_sdma_queue() will want it: no slot of
 * the type left at all is a GPU without room for the queue (-ENOSPC, where
 * allocate_sdma_queue() says -ENOMEM); a free slot but not this one, the
 * pinned slot taken (-EBUSY).
 */
static int kfd_criu_queue_sdma_slot_free(struct kfd_node *dev, u32 qid,
					 enum kfd_queue_type type, u32 sdma_id)
{
	struct device_queue_manager *dqm = dev->dqm;
	const unsigned long *map;
	int ret = 0;

	dqm_lock(dqm);
	map = type == KFD_QUEUE_TYPE_SDMA_XGMI ? dqm->xgmi_sdma_bitmap :
						  dqm->sdma_bitmap;
	if (bitmap_empty(map, KFD_MAX_SDMA_QUEUES))
		ret = -ENOSPC;
	else if (sdma_id >= KFD_MAX_SDMA_QUEUES || !test_bit(sdma_id, map))
		ret = -EBUSY;
	dqm_unlock(dqm);
	if (ret == -ENOSPC)
		pr_warn_ratelimited("CRIU image: queue %u: GPU 0x%x has no SDMA slot left\n",
				    qid, dev->id);
	else if (ret)
		pr_warn_ratelimited("CRIU image: queue %u: SDMA slot %u is taken\n",
				    qid, sdma_id);
	return ret;
}

/*
 * Readies the GPU of a queue for it: checks that the GPU can take the
 * queue and that its ids are free, and allocates the GPU's doorbell page
 * as the create ioctl does (kfd_criu_gpus_unwind() frees it again with
 * the VM the restore acquired).
 */
static int kfd_criu_queue_ready_target(struct kfd_process *p,
				       struct kfd_process_device *pdd,
				       const struct kfd_criu_queue_rec *rec)
{
	u32 qid = le32_to_cpu(rec->queue_id);
	struct kfd_node *dev = pdd->dev;
	struct queue_properties qp;
	u32 sdma_id;
	int ret;

	kfd_criu_queue_props(rec, &qp);
	if (!pdd->drm_priv) {
		pr_debug("CRIU image: queue %u: GPU 0x%x has no VM\n",
			 qid, dev->id);
		return -EINVAL;
	}
	if (!kfd_criu_mqd_mgr(dev, qp.type)->set_dyn_state) {
		pr_warn_ratelimited("CRIU image: queue %u: GPU 0x%x cannot restore queue state\n",
				    qid, dev->id);
		return -EOPNOTSUPP;
	}
	if (rec->gws && (!dev->gws ||
			 dev->dqm->sched_policy == KFD_SCHED_POLICY_NO_HWS)) {
		pr_warn_ratelimited("CRIU image: queue %u used GWS, which GPU 0x%x does not have\n",
				    qid, dev->id);
		return -ENODEV;
	}
	/* As the create ioctl does; the doorbell bitmap comes with it */
	ret = kfd_alloc_process_doorbells(dev->kfd, pdd);
	if (ret)
		return ret;
	ret = kfd_criu_queue_slot_free(qid, KFD_CRIU_SLOT_QUEUE_ID, qid,
				       p->pqm.queue_slot_bitmap);
	if (ret)
		return ret;
	if (!kfd_criu_queue_is_sdma(qp.type))
		return kfd_criu_queue_slot_free(qid, KFD_CRIU_SLOT_DOORBELL,
						le32_to_cpu(rec->doorbell_offset),
						pdd->qpd.doorbell_bitmap);
	ret = kfd_criu_queue_sdma_id(dev, rec, &sdma_id);
	if (ret) {
		pr_debug("CRIU image: queue %u: doorbell %u is no SDMA doorbell of engine %u here\n",
			 qid, le32_to_cpu(rec->doorbell_offset),
			 le32_to_cpu(rec->sdma_engine_id));
		return ret;
	}
	return kfd_criu_queue_sdma_slot_free(dev, qid, qp.type, sdma_id);
}

/*
 * The checks that need the target, and its doorbell pages, before any
 * queue is created.
 */
static int kfd_criu_queues_ready_target(struct kfd_process *p,
					const struct kfd_criu_queues_image *img,
					const struct kfd_criu_gpus_restore *st)
{
	const struct kfd_criu_queue_rec *rec;
	struct kfd_process_device *pdd;
	u32 i;
	int ret;

	for (i = 0; i < img->num_queues; i++) {
		rec = &img->queues[i];
		pdd = kfd_criu_gpus_pdd(p, st, le32_to_cpu(rec->gpu_index));
		ret = kfd_criu_queue_ready_target(p, pdd, rec);
		if (ret)
			return ret;
	}
	return 0;
}

static int kfd_criu_queue_set_cu_mask(struct kfd_process *p,
				      const struct kfd_criu_queues_image *img,
				      u32 n)
{
	const struct kfd_criu_queue_rec *rec = &img->queues[n];
	const __le32 *cu = img->cu_masks + n * KFD_CRIU_CU_MASK_WORDS;
	u32 bits = le32_to_cpu(rec->num_cu_mask);
	struct mqd_update_info minfo = {};
	u32 i;
	int ret;

	if (!bits)
		return 0;
	minfo.cu_mask.count = bits;
	minfo.cu_mask.ptr = kcalloc(bits / 32, sizeof(u32), GFP_KERNEL_ACCOUNT);
	if (!minfo.cu_mask.ptr)
		return -ENOMEM;
	for (i = 0; i < bits / 32; i++)
		minfo.cu_mask.ptr[i] = le32_to_cpu(cu[i]);
	ret = pqm_update_mqd(&p->pqm, le32_to_cpu(rec->queue_id), &minfo);
	kfree(minfo.cu_mask.ptr);
	return ret;
}

/* Writes the states of the queue of record @n, XCC by XCC. */
static int kfd_criu_queue_set_dyn(struct kfd_process *p,
				  const struct kfd_criu_queues_image *img,
				  u32 n, u32 first_state)
{
	const struct kfd_criu_queue_rec *rec = &img->queues[n];
	const struct kfd_criu_queue_state *state;
	struct device_queue_manager *dqm;
	struct mqd_manager *mqd_mgr;
	const u8 *payload;
	struct queue *q;
	u32 xcc;
	int ret = 0;

	q = pqm_get_user_queue(&p->pqm, le32_to_cpu(rec->queue_id));
	if (WARN_ON(!q))
		return -EINVAL;
	dqm = q->device->dqm;
	mqd_mgr = kfd_criu_mqd_mgr(q->device, q->properties.type);
	dqm_lock(dqm);
	/* A new queue of an evicted process does not run before RESUME */
	if (WARN_ON(q->properties.is_active))
		ret = -EBUSY;
	for (xcc = 0; !ret && xcc < le32_to_cpu(rec->num_xcc); xcc++) {
		state = &img->states[first_state + xcc];
		payload = state->payload;
		ret = mqd_mgr->set_dyn_state(mqd_mgr, q->mqd, &q->properties,
					     xcc,
					     (const void *)(payload +
					     sizeof(struct kfd_criu_queue_state_hdr)),
					     payload + KFD_CRIU_QUEUE_STATE_FIXED,
					     state->len - KFD_CRIU_QUEUE_STATE_FIXED);
	}
	dqm_unlock(dqm);
	return ret;
}

/**
 * struct kfd_criu_queue_buffers - the buffers a queue that failed holds
 * @pdd: the queue's GPU
 * @qp: its properties, with the buffers kfd_queue_acquire_buffers() took
 */
struct kfd_criu_queue_buffers {
	struct kfd_process_device *pdd;
	struct queue_properties *qp;
};

/*
 * In kfd_criu_run_unwind()'s worker: the hold on the mappings goes under
 * the VM's root reservation, which amdgpu takes interruptibly. A hold
 * left behind would make the unmap of those BOs fail with -EBUSY.
 */
static void kfd_criu_queue_put_buffers(void *data)
{
	struct kfd_criu_queue_buffers *qb = data;

	kfd_criu_queue_release_buffers(qb->pdd, qb->qp);
}

/*
 * A compute queue's CWSR area in SVM ranges of the image: those come back
 * only at RESUME, which takes them for the queue then. An area they do not
 * cover must be a BO, restored already, or the queue's creation fails.
 */
static bool kfd_criu_queue_cwsr_in_svm(struct kfd_process_device *pdd,
				       const struct kfd_criu_queue_rec *rec,
				       const struct kfd_criu_svm_rec *ranges,
				       u32 num_ranges)
{
	struct kfd_topology_device *topo;
	u64 len = le32_to_cpu(rec->ctx_save_restore_size);

	if (!rec->ctx_save_restore_base)
		return false;
	/* The size kfd_queue_acquire_cwsr_svm() takes */
	topo = kfd_topology_device_by_id(pdd->dev->id);
	if (topo)
		len += topo->node_props.debug_memory_size;
	len = PAGE_ALIGN(len * le32_to_cpu(rec->num_xcc));
	return kfd_criu_svm_ranges_cover(ranges, num_ranges,
					 le64_to_cpu(rec->ctx_save_restore_base),
					 len, le32_to_cpu(rec->gpu_index));
}

/*
 * pqm_create_queue() tells of a GPU without room for the queue in three
 * ways: -ENOSPC for the process's queue limit or no VMID left, -EPERM for
 * the device's queue limit (max_num_of_queues_per_device) or, with
 * sched_policy=1, a GPU it would oversubscribe, and -EBUSY for a compute
 * queue without HWS when no HQD is left. RESTORE answers -ENOSPC for all
 * of them; an SDMA queue's -EBUSY is its slot, taken, and stays so. The
 * target check saw the SDMA slots; should another process have taken
 * them since, allocate_sdma_queue()'s -ENOMEM for no slot left is asked
 * again of the bitmap.
 */
static int kfd_criu_queue_create_errno(struct kfd_node *dev, u32 qid,
				       enum kfd_queue_type type, u32 sdma_id,
				       int ret)
{
	if (ret == -EPERM)
		return -ENOSPC;
	if (ret == -EBUSY && type == KFD_QUEUE_TYPE_COMPUTE &&
	    dev->dqm->sched_policy == KFD_SCHED_POLICY_NO_HWS)
		return -ENOSPC;
	if (ret == -ENOMEM && kfd_criu_queue_is_sdma(type) &&
	    kfd_criu_queue_sdma_slot_free(dev, qid, type, sdma_id) == -ENOSPC)
		return -ENOSPC;
	return ret;
}

/* Creates the queue of record @n as the create ioctl would. */
static int kfd_criu_queue_create(struct kfd_process *p,
				 struct kfd_process_device *pdd,
				 const struct kfd_criu_queue_rec *rec,
				 const struct kfd_criu_svm_rec *ranges,
				 u32 num_ranges)
{
	struct kfd_criu_queue_priv_data ids = {};
	struct queue_properties qp;
	struct kfd_criu_queue_buffers qb = { .pdd = pdd, .qp = &qp };
	bool cwsr_svm = kfd_criu_queue_cwsr_in_svm(pdd, rec, ranges,
						   num_ranges);
	struct queue *q;
	int ret;

	kfd_criu_queue_props(rec, &qp);
	ids.q_id = le32_to_cpu(rec->queue_id);
	ids.doorbell_id = le32_to_cpu(rec->doorbell_offset);
	if (kfd_criu_queue_is_sdma(qp.type)) {
		ret = kfd_criu_queue_sdma_id(pdd->dev, rec, &ids.sdma_id);
		if (ret)
			return ret;
	}
	ret = kfd_criu_queue_acquire_buffers(pdd, &qp, cwsr_svm);
	if (ret) {
		pr_debug("CRIU image: queue %u: its buffers are not mapped as it needs: %d\n",
			 ids.q_id, ret);
		return ret;
	}
	/* The ids alone: the MQD comes from init_mqd(), never the image */
	ret = kfd_criu_queue_pqm_create(p, pdd, &qp, &ids);
	if (ret) {
		if (ret == -EBUSY && kfd_criu_queue_is_sdma(qp.type))
			pr_warn_ratelimited("CRIU image: queue %u: SDMA slot %u is taken\n",
					    ids.q_id, ids.sdma_id);
		kfd_criu_run_unwind(p, kfd_criu_queue_put_buffers, &qb);
		return kfd_criu_queue_create_errno(pdd->dev, ids.q_id, qp.type,
						   ids.sdma_id, ret);
	}
	q = pqm_get_user_queue(&p->pqm, ids.q_id);
	if (q)
		q->criu_cwsr_svm_pending = cwsr_svm;
	return 0;
}

/**
 * kfd_criu_queues_restore - create the queues of an image
 * @p: the process being restored, evicted, with its GPU VMs and BOs
 * @img: validated queue records and states
 * @ranges: the image's SVM ranges, which RESUME applies
 * @num_ranges: entries in @ranges
 * @st: where the image GPUs were placed
 *
 * Checks the target for every queue first and allocates the doorbell
 * pages of their GPUs, then creates the queues in
 * record order with their ids, CU masks and GWS, and writes their
 * dynamic state into the new MQDs. All or nothing: on error every queue
 * created is destroyed again.
 *
 * Context: p->mutex held.
 * Return: 0, -ENOMEM, -EBUSY for a queue id, doorbell or SDMA slot that
 * is taken, -ENOSPC for a GPU without room for a queue (a queue limit of
 * the process or the device, no VMID or, without HWS, no HQD left),
 * -ENODEV for GWS the GPU lacks, -EOPNOTSUPP for a GPU that cannot
 * restore queue state, -EINVAL for a GPU without VM or an SDMA doorbell
 * that does not exist here, or the errno of a creation step.
 */
int kfd_criu_queues_restore(struct kfd_process *p,
			    struct kfd_criu_queues_image *img,
			    const struct kfd_criu_svm_rec *ranges,
			    u32 num_ranges,
			    const struct kfd_criu_gpus_restore *st)
{
	const struct kfd_criu_queue_rec *rec;
	struct kfd_process_device *pdd;
	u32 i, first_state = 0;
	int ret;

	lockdep_assert_held(&p->mutex);

	ret = kfd_criu_queues_ready_target(p, img, st);
	if (ret)
		return ret;
	for (i = 0; i < img->num_queues; i++) {
		rec = &img->queues[i];
		pdd = kfd_criu_gpus_pdd(p, st, le32_to_cpu(rec->gpu_index));
		ret = kfd_criu_queue_create(p, pdd, rec, ranges, num_ranges);
		if (ret)
			goto out_unwind;
		img->num_created++;
		ret = kfd_criu_queue_set_cu_mask(p, img, i);
		if (!ret && rec->gws)
			ret = pqm_set_gws(&p->pqm, le32_to_cpu(rec->queue_id),
					  pdd->dev->gws);
		/* Last: the steps before may rewrite the MQD */
		if (!ret)
			ret = kfd_criu_queue_set_dyn(p, img, i, first_state);
		if (ret)
			goto out_unwind;
		first_state += le32_to_cpu(rec->num_xcc);
	}
	return 0;

out_unwind:
	pr_debug("CRIU image: restoring queue %u failed: %d\n",
		 le32_to_cpu(img->queues[i].queue_id), ret);
	kfd_criu_queues_unwind(p, img);
	return ret;
}

/**
 * kfd_criu_queues_resume - take the SVM ranges of the restored CWSR areas
 * @p: the restored process, its SVM ranges applied again
 *
 * A queue whose CWSR area is in SVM ranges was created before those
 * ranges existed (kfd_criu_queue_cwsr_in_svm()); they hold a reference
 * for each queue on them, as the create ioctl takes, once they are back.
 *
 * Context: p->mutex held.
 * Return: 0, or -EINVAL when an area is not in ranges always mapped on
 * its GPU; the queues that got theirs keep them, for a retry.
 */
int kfd_criu_queues_resume(struct kfd_process *p)
{
	struct process_queue_node *pqn;
	struct kfd_process_device *pdd;
	struct queue *q;
	int ret;

	lockdep_assert_held(&p->mutex);

	list_for_each_entry(pqn, &p->pqm.queues, process_queue_list) {
		q = pqn->q;
		if (!q || !q->criu_cwsr_svm_pending)
			continue;
		pdd = kfd_get_process_device_data(q->device, p);
		ret = pdd ? kfd_criu_queue_acquire_cwsr_svm(pdd, &q->properties) :
			    -EINVAL;
		if (ret) {
			pr_warn_ratelimited("CRIU image: queue %u: its CWSR area is not in SVM ranges mapped on its GPU: %d\n",
					    q->properties.queue_id, ret);
			return ret;
		}
		q->criu_cwsr_svm_pending = false;
	}
	return 0;
}

/**
 * struct kfd_criu_queues_teardown - what the queue unwind's worker works on
 * @p: the process being restored; the caller holds p->mutex for the worker
 * @img: queue records, with the number of queues created so far
 */
struct kfd_criu_queues_teardown {
	struct kfd_process *p;
	struct kfd_criu_queues_image *img;
};

/* The queues, newest first; in the worker, so without lockdep_assert_held(). */
static void kfd_criu_queues_destroy_all(void *data)
{
	struct kfd_criu_queues_teardown *td = data;
	struct kfd_criu_queues_image *img = td->img;
	u32 qid;
	int ret;

	while (img->num_created) {
		qid = le32_to_cpu(img->queues[--img->num_created].queue_id);
		ret = kfd_criu_queue_pqm_destroy(td->p, qid);
		if (ret)
			pr_warn_ratelimited("CRIU image: cannot destroy restored queue %u: %d\n",
					    qid, ret);
	}
}

/**
 * kfd_criu_queues_unwind - undo kfd_criu_queues_restore()
 * @p: the process being restored
 * @img: queue records, with the number of queues created so far
 *
 * Destroys the queues the restore created, newest first, which releases
 * their buffers, GWS and ids. A queue gives up its hold on its buffers'
 * mappings, and a GWS its eviction fence, under reservations amdgpu takes
 * interruptibly, while the caller may have a signal pending: so they are
 * destroyed in a worker (kfd_criu_run_unwind()). A queue that cannot be
 * destroyed even there stays for process teardown.
 *
 * Context: p->mutex held.
 */
void kfd_criu_queues_unwind(struct kfd_process *p,
			    struct kfd_criu_queues_image *img)
{
	struct kfd_criu_queues_teardown td = { .p = p, .img = img };

	lockdep_assert_held(&p->mutex);

	if (!img->num_created)
		return;
	/*
	 * Destroying a queue a debugger suspended drops p->mutex to wait,
	 * which only its owner may; restore refuses a process with a
	 * debugger, and one cannot attach while p->mutex is held.
	 */
	if (WARN_ON_ONCE(p->debug_trap_enabled)) {
		kfd_criu_queues_destroy_all(&td);
		return;
	}
	kfd_criu_run_unwind(p, kfd_criu_queues_destroy_all, &td);
}

#if IS_BUILTIN(CONFIG_HSA_AMD_CRIU_KUNIT_TEST)
#include "tests/kfd_criu_queues_test.c"
#endif
