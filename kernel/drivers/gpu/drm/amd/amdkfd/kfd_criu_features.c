// SPDX-License-Identifier: GPL-2.0 OR MIT

/**
 * DOC: CRIU image mode and the state of a process
 *
 * Every piece of process state a dump or a restore must know of is listed
 * once, in kfd_criu_features[], with what each op does with it:
 * CHECKPOINT carries it, refuses it with -EOPNOTSUPP because the image
 * cannot carry it, or refuses it with -EBUSY until it has passed (an
 * attached debugger); RESTORE refuses a target that already has it.
 * kfd_criu_process_features_locked() finds which of them a process has,
 * so a new kind of state needs a row there, or CHECKPOINT would drop it
 * silently.
 */

#include <linux/bits.h>
#include <linux/idr.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/printk.h>
#include <linux/sched.h>

#include "kfd_criu.h"
#include "kfd_priv.h"
#include "gc/gc_9_4_3_sh_mask.h"

/**
 * enum kfd_criu_feature - process state that dump or restore must know of
 * @KFD_CRIU_FEAT_GPU_VM: a GPU VM was acquired
 * @KFD_CRIU_FEAT_BOS: buffer objects
 * @KFD_CRIU_FEAT_QUEUES: user queues
 * @KFD_CRIU_FEAT_SVM_RANGES: SVM ranges
 * @KFD_CRIU_FEAT_GPU_EVENT_PAGE: the event page is a GPU buffer
 * @KFD_CRIU_FEAT_DEBUGGER: a debugger is attached
 * @KFD_CRIU_FEAT_RUNTIME_PENDING: runtime enable is mid-way or reports an
 *	error to a debugger
 * @KFD_CRIU_FEAT_RUNTIME_ENABLED: the runtime is enabled
 * @KFD_CRIU_FEAT_EVENTS: events
 * @KFD_CRIU_FEAT_SIGNAL_PAGE: a signal page
 * @KFD_CRIU_FEAT_LEGACY_PAUSE: the legacy PROCESS_INFO paused the process
 * @KFD_CRIU_FEAT_SCRATCH_BACKING: AMDKFD_IOC_SET_SCRATCH_BACKING_VA set a
 *	hidden private base on a GPU
 * @KFD_CRIU_FEAT_PRE_GFX9: a VM on a GPU older than GFX9, whose memory
 *	policy and queue state depend on registers the image does not
 *	describe
 * @KFD_CRIU_FEAT_RESET_QUEUE: the driver reset a hung queue of the process
 * @KFD_CRIU_FEAT_POISON: the process consumed poisoned GPU memory
 * @KFD_CRIU_FEAT_CONTEXTS: the process is a secondary KFD context, or has
 *	some (AMDKFD_IOC_CREATE_PROCESS): an image holds one KFD process,
 *	and a dump of the primary alone would drop the others' state
 * @KFD_CRIU_FEAT_SIGBUS_DELAY: a SIGBUS delay or suppression for poison
 *	(AMDGPU_PROC_OPTIONS_OP_KFD_SIGBUS_DELAY), which the image lacks
 * @KFD_CRIU_FEAT_GPU_PAGE_FAULT: the process took a GPU page fault
 * @KFD_CRIU_FEAT_PTL: the process asked PTL to stay disabled on a GPU
 * @KFD_CRIU_FEAT_PROFILER: the process holds a GPU's profiler
 *	(AMDKFD_IOC_PROFILER), which it must release first
 * @KFD_CRIU_FEAT_METADATA_RING: a queue with a metadata ring, whose
 *	size the queue record does not have
 * @KFD_CRIU_FEAT_MFMA_PRECISION: the MFMA high-precision mode of GC 9.5.0
 *	(KFD_PROC_FLAG_MFMA_HIGH_PRECISION of AMDKFD_IOC_SET_MEMORY_POLICY),
 *	which lives only in the GPU's SH_MEM_CONFIG and the image lacks
 * @KFD_CRIU_FEAT_NR: number of features
 */
enum kfd_criu_feature {
	KFD_CRIU_FEAT_GPU_VM,
	KFD_CRIU_FEAT_BOS,
	KFD_CRIU_FEAT_QUEUES,
	KFD_CRIU_FEAT_SVM_RANGES,
	KFD_CRIU_FEAT_GPU_EVENT_PAGE,
	KFD_CRIU_FEAT_DEBUGGER,
	KFD_CRIU_FEAT_RUNTIME_PENDING,
	KFD_CRIU_FEAT_RUNTIME_ENABLED,
	KFD_CRIU_FEAT_EVENTS,
	KFD_CRIU_FEAT_SIGNAL_PAGE,
	KFD_CRIU_FEAT_LEGACY_PAUSE,
	KFD_CRIU_FEAT_SCRATCH_BACKING,
	KFD_CRIU_FEAT_PRE_GFX9,
	KFD_CRIU_FEAT_RESET_QUEUE,
	KFD_CRIU_FEAT_POISON,
	KFD_CRIU_FEAT_CONTEXTS,
	KFD_CRIU_FEAT_SIGBUS_DELAY,
	KFD_CRIU_FEAT_GPU_PAGE_FAULT,
	KFD_CRIU_FEAT_PTL,
	KFD_CRIU_FEAT_PROFILER,
	KFD_CRIU_FEAT_METADATA_RING,
	KFD_CRIU_FEAT_MFMA_PRECISION,
	KFD_CRIU_FEAT_NR
};

/**
 * struct kfd_criu_feature_desc - how dump and restore treat a feature
 * @name: for the log
 * @dump_err: 0 when CHECKPOINT carries it; -EOPNOTSUPP when the image
 *	cannot carry it; -EBUSY when it is a passing state the process must
 *	leave first (a debugger must detach)
 * @restore_busy: RESTORE refuses a target that has it
 */
struct kfd_criu_feature_desc {
	const char *name;
	int dump_err;
	bool restore_busy;
};

/*
 * Every piece of process state a dump or restore must know of has a row;
 * kfd_criu_process_features_locked() finds which a process has. A new
 * kind of state gets a row and a bit there, or CHECKPOINT drops it
 * silently.
 */
static const struct kfd_criu_feature_desc kfd_criu_features[KFD_CRIU_FEAT_NR] = {
	[KFD_CRIU_FEAT_GPU_VM] = { "an acquired GPU VM", 0, true },
	[KFD_CRIU_FEAT_BOS] = { "buffer objects", 0, true },
	[KFD_CRIU_FEAT_QUEUES] = { "user queues", 0, true },
	[KFD_CRIU_FEAT_SVM_RANGES] = { "SVM ranges", 0, true },
	[KFD_CRIU_FEAT_GPU_EVENT_PAGE] = { "an event page in GPU memory", 0,
					   true },
	[KFD_CRIU_FEAT_DEBUGGER] = { "an attached debugger", -EBUSY, true },
	[KFD_CRIU_FEAT_RUNTIME_PENDING] = { "a pending runtime enable", -EBUSY,
					    true },
	[KFD_CRIU_FEAT_RUNTIME_ENABLED] = { "an enabled runtime", 0, true },
	[KFD_CRIU_FEAT_EVENTS] = { "events", 0, true },
	[KFD_CRIU_FEAT_SIGNAL_PAGE] = { "a signal page", 0, true },
	[KFD_CRIU_FEAT_LEGACY_PAUSE] = { "a legacy CRIU pause", 0, true },
	[KFD_CRIU_FEAT_SCRATCH_BACKING] = { "a scratch backing VA", 0, true },
	[KFD_CRIU_FEAT_PRE_GFX9] = { "a GPU older than GFX9", -EOPNOTSUPP,
				     false },
	[KFD_CRIU_FEAT_RESET_QUEUE] = { "a queue the driver reset",
					-EOPNOTSUPP, true },
	[KFD_CRIU_FEAT_POISON] = { "consumed GPU memory poison", -EOPNOTSUPP,
				   true },
	[KFD_CRIU_FEAT_CONTEXTS] = { "KFD contexts beside the primary one",
				     -EOPNOTSUPP, true },
	[KFD_CRIU_FEAT_SIGBUS_DELAY] = { "a SIGBUS delay for poison",
					 -EOPNOTSUPP, false },
	[KFD_CRIU_FEAT_GPU_PAGE_FAULT] = { "a GPU page fault", -EOPNOTSUPP,
					   true },
	[KFD_CRIU_FEAT_PTL] = { "PTL kept disabled", -EOPNOTSUPP, true },
	[KFD_CRIU_FEAT_PROFILER] = { "a GPU's profiler", -EBUSY, true },
	[KFD_CRIU_FEAT_METADATA_RING] = { "a queue with a metadata ring",
					  -EOPNOTSUPP, true },
	[KFD_CRIU_FEAT_MFMA_PRECISION] = { "the MFMA high-precision mode",
					   -EOPNOTSUPP, true },
};

/**
 * kfd_criu_check_features - refuse what an op cannot handle
 * @present: BIT(&enum kfd_criu_feature) of what the process has
 * @restore: check for RESTORE rather than for CHECKPOINT
 * @name: receives the name of the first refused feature
 *
 * Return: 0; for CHECKPOINT the first refused feature's dump_err
 * (-EOPNOTSUPP or -EBUSY); for RESTORE -EBUSY.
 */
static int kfd_criu_check_features(u32 present, bool restore,
				   const char **name)
{
	const struct kfd_criu_feature_desc *desc;
	unsigned int i;
	int err;

	for (i = 0; i < KFD_CRIU_FEAT_NR; i++) {
		desc = &kfd_criu_features[i];
		if (!(present & BIT(i)))
			continue;
		err = restore ? (desc->restore_busy ? -EBUSY : 0) :
				desc->dump_err;
		if (err) {
			*name = desc->name;
			return err;
		}
	}
	return 0;
}

static bool kfd_criu_has_svm_ranges(struct kfd_process *p)
{
	bool ret;

	if (!IS_ENABLED(CONFIG_HSA_AMD_SVM))
		return false;
	mutex_lock(&p->svms.lock);
	ret = !list_empty(&p->svms.list);
	mutex_unlock(&p->svms.lock);
	return ret;
}

/* Queues change only under p->mutex, which the caller holds */
static bool kfd_criu_has_metadata_rings(struct kfd_process *p)
{
	struct process_queue_node *pqn;

	list_for_each_entry(pqn, &p->pqm.queues, process_queue_list)
		if (pqn->q && pqn->q->properties.metadata_queue_size)
			return true;
	return false;
}

/*
 * SET_MEMORY_POLICY needs the GPU's VM, and on GC 9.5.0 sets the mode bit
 * from misc_process_flag each time, so the bit says what the process asked
 * for last. The bit is what the GPU gets, and nothing else keeps the flag.
 * It is written under the DQM lock, with p->mutex held, which the caller
 * holds too.
 */
static bool kfd_criu_has_mfma_precision(struct kfd_process_device *pdd)
{
	return pdd->drm_priv &&
	       KFD_GC_VERSION(pdd->dev) == IP_VERSION(9, 5, 0) &&
	       (pdd->qpd.sh_mem_config & SH_MEM_CONFIG__PRECISION_MODE_MASK);
}

static u32 kfd_criu_device_features_locked(struct kfd_process *p)
{
	struct kfd_process_device *pdd;
	u32 present = 0;
	u32 i;

	lockdep_assert_held(&p->mutex);

	/*
	 * Every process has per-GPU data from open on a machine with GPUs;
	 * only what it acquires through them needs carrying. The GPU VM:
	 * SVM ranges need it; it is only created under p->mutex.
	 */
	if (p->kgd_process_info)
		present |= BIT(KFD_CRIU_FEAT_GPU_VM);
	for (i = 0; i < p->n_pdds; i++) {
		pdd = p->pdds[i];
		if (pdd->drm_priv)
			present |= BIT(KFD_CRIU_FEAT_GPU_VM);
		if (!idr_is_empty(&pdd->alloc_idr))
			present |= BIT(KFD_CRIU_FEAT_BOS);
		if (pdd->qpd.sh_hidden_private_base)
			present |= BIT(KFD_CRIU_FEAT_SCRATCH_BACKING);
		if (pdd->drm_priv && !KFD_IS_SOC15(pdd->dev))
			present |= BIT(KFD_CRIU_FEAT_PRE_GFX9);
		if (pdd->has_reset_queue)
			present |= BIT(KFD_CRIU_FEAT_RESET_QUEUE);
		if (pdd->ptl_disable_req)
			present |= BIT(KFD_CRIU_FEAT_PTL);
		if (kfd_criu_has_mfma_precision(pdd))
			present |= BIT(KFD_CRIU_FEAT_MFMA_PRECISION);
		/* Taken and given back under profiler_lock; a frozen
		 * process does neither
		 */
		if (READ_ONCE(pdd->dev->kfd->profiler_process) == p)
			present |= BIT(KFD_CRIU_FEAT_PROFILER);
	}
	if (kfd_criu_has_metadata_rings(p))
		present |= BIT(KFD_CRIU_FEAT_METADATA_RING);
	if (atomic_read(&p->poison))
		present |= BIT(KFD_CRIU_FEAT_POISON);
	if (!list_empty(&p->pqm.queues))
		present |= BIT(KFD_CRIU_FEAT_QUEUES);
	if (kfd_criu_has_svm_ranges(p))
		present |= BIT(KFD_CRIU_FEAT_SVM_RANGES);
	if (p->signal_handle)
		present |= BIT(KFD_CRIU_FEAT_GPU_EVENT_PAGE);
	return present;
}

static u32 kfd_criu_runtime_features_locked(struct kfd_process *p)
{
	u32 state = p->runtime_info.runtime_state;
	u32 present = 0;

	lockdep_assert_held(&p->mutex);

	if (p->debug_trap_enabled)
		present |= BIT(KFD_CRIU_FEAT_DEBUGGER);
	if (p->is_runtime_retry || (state != DEBUG_RUNTIME_STATE_DISABLED &&
				    state != DEBUG_RUNTIME_STATE_ENABLED))
		present |= BIT(KFD_CRIU_FEAT_RUNTIME_PENDING);
	if (state != DEBUG_RUNTIME_STATE_DISABLED)
		present |= BIT(KFD_CRIU_FEAT_RUNTIME_ENABLED);
	if (p->queues_paused)
		present |= BIT(KFD_CRIU_FEAT_LEGACY_PAUSE);
	return present;
}

/*
 * A secondary context has an id of its own, which the primary's id_table
 * holds until the secondary's release work runs, after its last reference
 * is gone: a dump just after a secondary was closed can still be refused
 * for it, and succeeds once the work has run. CRIU has frozen the
 * process, so no context is created while an op looks.
 */
static bool kfd_criu_has_contexts(struct kfd_process *p)
{
	return p->context_id != KFD_CONTEXT_ID_PRIMARY ||
	       !ida_is_empty(&p->id_table);
}

static u32 kfd_criu_process_features_locked(struct kfd_process *p)
{
	u32 num_events, signal_page_size;
	u32 present;

	present = kfd_criu_device_features_locked(p) |
		  kfd_criu_runtime_features_locked(p);
	if (kfd_criu_has_contexts(p))
		present |= BIT(KFD_CRIU_FEAT_CONTEXTS);
	if (atomic_read(&p->kfd_sigbus_delay_ms))
		present |= BIT(KFD_CRIU_FEAT_SIGBUS_DELAY);
	if (READ_ONCE(p->gpu_page_fault))
		present |= BIT(KFD_CRIU_FEAT_GPU_PAGE_FAULT);
	kfd_criu_events_count(p, &num_events, &signal_page_size);
	if (num_events)
		present |= BIT(KFD_CRIU_FEAT_EVENTS);
	if (signal_page_size)
		present |= BIT(KFD_CRIU_FEAT_SIGNAL_PAGE);
	return present;
}

/**
 * kfd_criu_dump_supported_locked - whether CHECKPOINT can carry a process
 * @p: the process
 *
 * Logs the first state of @p that the image cannot carry, or that must
 * pass before a dump.
 *
 * Context: p->mutex held.
 * Return: 0, -EOPNOTSUPP for state the image cannot carry, or -EBUSY for
 * a passing state (an attached debugger, a pending runtime enable).
 */
int kfd_criu_dump_supported_locked(struct kfd_process *p)
{
	const char *name;
	int ret;

	ret = kfd_criu_check_features(kfd_criu_process_features_locked(p),
				      false, &name);
	if (ret == -EBUSY)
		pr_warn_ratelimited("CRIU image: pid %d has %s; retry the dump once it is gone\n",
				    task_pid_nr(p->lead_thread), name);
	else if (ret)
		pr_warn_ratelimited("CRIU image: pid %d has %s, which the image cannot carry yet\n",
				    task_pid_nr(p->lead_thread), name);
	return ret;
}

/**
 * kfd_criu_restore_target_clean_locked - whether RESTORE may fill a process
 * @p: the process
 *
 * Context: p->mutex held.
 * Return: 0 when @p has none of the state a restore creates, else -EBUSY.
 */
int kfd_criu_restore_target_clean_locked(struct kfd_process *p)
{
	const char *name;
	int ret;

	ret = kfd_criu_check_features(kfd_criu_process_features_locked(p),
				      true, &name);
	if (ret)
		pr_debug("CRIU image: restore target has %s\n", name);
	return ret;
}

#if IS_BUILTIN(CONFIG_HSA_AMD_CRIU_KUNIT_TEST)
#include "tests/kfd_criu_features_test.c"
#endif
