// SPDX-License-Identifier: GPL-2.0 OR MIT

/**
 * DOC: CRIU image mode - process and event state
 *
 * Serializes what a KFD process without GPUs holds: its XNACK mode, the
 * runtime-enable state, its events (id, type, auto-reset, signaled state,
 * age and exception data) and the contents of its signal slots. The slots
 * live in a BO of the process (its event page, a GTT BO as ROCm makes it),
 * which the BO code marks in its record (%KFD_CRIU_BO_EVENT_PAGE) and
 * restores with its contents; restore makes it the event page again,
 * which resets its slots, and then writes the slots of the image.
 *
 * Dump snapshots that state under p->event_mutex into kernel memory, so the
 * stream is written without holding any lock. Restore works in phases:
 * collect the records into kernel memory (bounded by %KFD_CRIU_MAX_EVENTS),
 * validate them as a set, allocate every &struct kfd_event, and only then
 * take p->event_mutex, map the event page and create the events under
 * their original ids. The only steps that can still fail there are the id
 * and slot allocations; on failure everything created is destroyed again,
 * so the process is left exactly as it was. The process record is applied
 * last, after nothing can fail.
 *
 * Lock order: p->mutex, p->event_mutex, then what mapping the event page
 * BO takes (the process's process_info->lock and the BO's reservation);
 * nothing takes p->event_mutex under those.
 */

#include <linux/idr.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include <kunit/static_stub.h>

#include "amdgpu_amdkfd.h"
#include "kfd_criu.h"
#include "kfd_debug.h"
#include "kfd_events.h"
#include "kfd_priv.h"

/**
 * kfd_criu_events_image_free - free what an events image holds
 * @img: image from a snapshot or a restore, may be partly filled
 */
void kfd_criu_events_image_free(struct kfd_criu_events_image *img)
{
	kvfree(img->signal_page);
	kvfree(img->events);
	memset(img, 0, sizeof(*img));
}

static void kfd_criu_process_to_rec(const struct kfd_process *p,
				    struct kfd_criu_process_rec *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->xnack_enabled = cpu_to_le32(p->xnack_enabled ? 1 : 0);
	rec->runtime_state = cpu_to_le32(p->runtime_info.runtime_state);
	rec->r_debug = cpu_to_le64(p->runtime_info.r_debug);
	rec->ttmp_setup = cpu_to_le32(p->runtime_info.ttmp_setup ? 1 : 0);
}

static void kfd_criu_exceptions_to_rec(const struct kfd_event *ev,
				       struct kfd_criu_event_rec *rec)
{
	const struct kfd_hsa_memory_exception_data *mem;
	const struct kfd_hsa_hw_exception_data *hw;

	if (ev->type == KFD_EVENT_TYPE_MEMORY) {
		mem = &ev->memory_exception_data;
		rec->mem_va = cpu_to_le64(mem->va);
		rec->mem_gpu_id = cpu_to_le32(mem->gpu_id);
		rec->mem_error_type = cpu_to_le32(mem->ErrorType);
		rec->mem_not_present = cpu_to_le32(mem->failure.NotPresent);
		rec->mem_read_only = cpu_to_le32(mem->failure.ReadOnly);
		rec->mem_no_execute = cpu_to_le32(mem->failure.NoExecute);
		rec->mem_imprecise = cpu_to_le32(mem->failure.imprecise);
	} else if (ev->type == KFD_EVENT_TYPE_HW_EXCEPTION) {
		hw = &ev->hw_exception_data;
		rec->hw_reset_type = cpu_to_le32(hw->reset_type);
		rec->hw_reset_cause = cpu_to_le32(hw->reset_cause);
		rec->hw_memory_lost = cpu_to_le32(hw->memory_lost);
		rec->hw_gpu_id = cpu_to_le32(hw->gpu_id);
	}
}

/* ev->lock orders the state against set_event() and waiters. */
static void kfd_criu_event_to_rec(struct kfd_event *ev,
				  struct kfd_criu_event_rec *rec)
{
	memset(rec, 0, sizeof(*rec));
	spin_lock(&ev->lock);
	rec->event_id = cpu_to_le32(ev->event_id);
	rec->type = cpu_to_le32(ev->type);
	rec->auto_reset = cpu_to_le32(ev->auto_reset ? 1 : 0);
	rec->signaled = cpu_to_le32(ev->signaled ? 1 : 0);
	rec->event_age = cpu_to_le64(ev->event_age);
	kfd_criu_exceptions_to_rec(ev, rec);
	spin_unlock(&ev->lock);
}

static int kfd_criu_snapshot_signal_page_locked(struct kfd_process *p,
						struct kfd_criu_events_image *img)
{
	const u64 *slots = kfd_event_signal_slots_locked(p);
	size_t size = p->signal_mapped_size;
	__le64 *out;
	size_t i;

	if (!slots)
		return 0;
	if (!size || size % sizeof(u64) || size > KFD_CRIU_SIGNAL_PAGE_MAX) {
		pr_warn_ratelimited("CRIU image: cannot carry a %zu byte signal page\n",
				    size);
		return -EOPNOTSUPP;
	}

	out = kvmalloc(size, GFP_KERNEL_ACCOUNT);
	if (!out)
		return -ENOMEM;
	for (i = 0; i < size / sizeof(u64); i++)
		out[i] = cpu_to_le64(READ_ONCE(slots[i]));

	img->signal_page = out;
	img->signal_page_size = size;
	return 0;
}

static int kfd_criu_snapshot_events_locked(struct kfd_process *p,
					   struct kfd_criu_events_image *img)
{
	u32 num = kfd_get_num_events(p);
	struct kfd_event *ev;
	u32 id, i = 0;

	if (num > KFD_CRIU_MAX_EVENTS) {
		pr_warn_ratelimited("CRIU image: cannot carry %u events\n", num);
		return -EOPNOTSUPP;
	}
	if (!num)
		return 0;

	img->events = kvcalloc(num, sizeof(*img->events), GFP_KERNEL_ACCOUNT);
	if (!img->events)
		return -ENOMEM;

	/* Ascending ids: the order the reader checks */
	idr_for_each_entry(&p->event_idr, ev, id) {
		if (WARN_ON(i == num))
			return -EINVAL;
		kfd_criu_event_to_rec(ev, &img->events[i++]);
	}
	img->num_events = i;
	img->events_read = i;
	return 0;
}

static int kfd_criu_events_validate_as(const struct kfd_criu_events_image *img,
				       bool dump);

/**
 * kfd_criu_events_snapshot - copy process and event state for a dump
 * @p: the process
 * @img: receives the state; free it with kfd_criu_events_image_free()
 *
 * The snapshot passes the same validation as a restored image, so a dump
 * never writes an image that restore would refuse, but for an event age
 * above %KFD_CRIU_MAX_EVENT_AGE: a process restored near that bound may
 * signal past it, and its dump must still carry what RESTORE accepted.
 *
 * Context: p->mutex held.
 * Return: 0, -ENOMEM, or -EOPNOTSUPP for state the image cannot carry.
 */
int kfd_criu_events_snapshot(struct kfd_process *p,
			     struct kfd_criu_events_image *img)
{
	int ret;

	lockdep_assert_held(&p->mutex);

	memset(img, 0, sizeof(*img));
	kfd_criu_process_to_rec(p, &img->process);
	img->have_process = true;

	mutex_lock(&p->event_mutex);
	ret = kfd_criu_snapshot_signal_page_locked(p, img);
	if (!ret)
		ret = kfd_criu_snapshot_events_locked(p, img);
	mutex_unlock(&p->event_mutex);
	if (ret)
		goto out_free;

	img->process.num_events = cpu_to_le32(img->num_events);
	img->process.signal_page_size = cpu_to_le32(img->signal_page_size);
	if (kfd_criu_events_validate_as(img, true)) {
		pr_warn_ratelimited("CRIU image: event state the image cannot carry\n");
		ret = -EOPNOTSUPP;
		goto out_free;
	}
	return 0;

out_free:
	kfd_criu_events_image_free(img);
	return ret;
}

/**
 * kfd_criu_events_count - what the image of a process will hold
 * @p: the process
 * @num_events: receives the number of events
 * @signal_page_size: receives the bytes of the signal page record, 0 when
 *	the process has no signal page
 *
 * For the size estimate and for refusing to restore into a process that
 * already has events.
 */
void kfd_criu_events_count(struct kfd_process *p, u32 *num_events,
			   u32 *signal_page_size)
{
	mutex_lock(&p->event_mutex);
	*num_events = kfd_get_num_events(p);
	*signal_page_size = 0;
	if (kfd_event_signal_slots_locked(p))
		*signal_page_size = clamp_t(size_t, p->signal_mapped_size,
					    sizeof(u64), KFD_CRIU_SIGNAL_PAGE_MAX);
	mutex_unlock(&p->event_mutex);
}

/**
 * kfd_criu_events_write - write the PROCESS, COUNTS, SIGNAL_PAGE and EVENT
 *	records
 * @w: the stream, after the GPU records
 * @img: state from kfd_criu_events_snapshot(), with the counts of the
 *	queue and SVM snapshots; COUNTS is written only when one is non-zero
 *
 * Return: 0 or the writer's error.
 */
int kfd_criu_events_write(struct kfd_criu_image_writer *w,
			  const struct kfd_criu_events_image *img)
{
	int ret;
	u32 i;

	ret = kfd_criu_image_write_record(w, KFD_CRIU_REC_PROCESS,
					  KFD_CRIU_RECORD_MANDATORY,
					  &img->process, sizeof(img->process));
	if (!ret && kfd_criu_counts_present(&img->counts))
		ret = kfd_criu_image_write_record(w, KFD_CRIU_REC_COUNTS,
						  KFD_CRIU_RECORD_MANDATORY,
						  &img->counts, sizeof(img->counts));
	if (!ret && img->signal_page)
		ret = kfd_criu_image_write_record(w, KFD_CRIU_REC_SIGNAL_PAGE,
						  KFD_CRIU_RECORD_MANDATORY,
						  img->signal_page,
						  img->signal_page_size);
	for (i = 0; !ret && i < img->num_events; i++)
		ret = kfd_criu_image_write_record(w, KFD_CRIU_REC_EVENT,
						  KFD_CRIU_RECORD_MANDATORY,
						  &img->events[i],
						  sizeof(img->events[i]));
	return ret;
}

static int kfd_criu_collect_process(struct kfd_criu_events_image *img,
				    const struct kfd_criu_record *rec,
				    const void *payload)
{
	u32 num;

	if (img->have_process || rec->length != sizeof(img->process))
		return -EINVAL;
	memcpy(&img->process, payload, sizeof(img->process));
	img->have_process = true;

	num = le32_to_cpu(img->process.num_events);
	if (num > KFD_CRIU_MAX_EVENTS)
		return -EINVAL;
	if (!num)
		return 0;

	img->events = kvcalloc(num, sizeof(*img->events), GFP_KERNEL_ACCOUNT);
	if (!img->events)
		return -ENOMEM;
	img->num_events = num;
	return 0;
}

/**
 * kfd_criu_counts_present - whether an image needs a COUNTS record
 * @counts: the counts of queues and SVM ranges
 *
 * Return: true when a count is non-zero.
 */
bool kfd_criu_counts_present(const struct kfd_criu_counts_rec *counts)
{
	return counts->num_queues || counts->num_svm_ranges;
}

/*
 * COUNTS follows PROCESS directly, at most once. Its values are checked
 * here, where the collector still knows nothing else of the stream, so
 * the sections after the BOs can size their arrays from it.
 */
static int kfd_criu_collect_counts(struct kfd_criu_events_image *img,
				   const struct kfd_criu_record *rec,
				   const void *payload, u32 num_gpus)
{
	if (!img->have_process || img->have_counts || img->signal_page ||
	    img->events_read || rec->length != sizeof(img->counts))
		return -EINVAL;
	memcpy(&img->counts, payload, sizeof(img->counts));
	img->have_counts = true;
	return kfd_criu_validate_counts(&img->counts, num_gpus);
}

static int kfd_criu_collect_signal_page(struct kfd_criu_events_image *img,
					const struct kfd_criu_record *rec,
					const void *payload)
{
	if (!img->have_process || img->signal_page || img->events_read)
		return -EINVAL;
	if (!rec->length || rec->length > KFD_CRIU_SIGNAL_PAGE_MAX ||
	    rec->length != le32_to_cpu(img->process.signal_page_size))
		return -EINVAL;

	img->signal_page = kvmalloc(rec->length, GFP_KERNEL_ACCOUNT);
	if (!img->signal_page)
		return -ENOMEM;
	memcpy(img->signal_page, payload, rec->length);
	img->signal_page_size = rec->length;
	return 0;
}

static int kfd_criu_collect_event(struct kfd_criu_events_image *img,
				  const struct kfd_criu_record *rec,
				  const void *payload)
{
	if (!img->have_process || img->events_read == img->num_events ||
	    rec->length != sizeof(*img->events))
		return -EINVAL;
	memcpy(&img->events[img->events_read++], payload, sizeof(*img->events));
	return 0;
}

/**
 * kfd_criu_events_collect - keep one record of a restore stream
 * @img: state collected so far
 * @rec: a PROCESS, COUNTS, SIGNAL_PAGE or EVENT record, as the reader
 *	returned it
 * @payload: its payload
 * @num_gpus: GPU records of the image, which COUNTS is checked against
 *
 * Only bounds and order are checked here, so that nothing unbounded is
 * allocated; the contents are checked by kfd_criu_events_validate().
 * COUNTS is the exception: its counts size later sections, so it is
 * validated on arrival.
 *
 * Return: 0, -ENOMEM, or -EINVAL for a record out of order, a second
 * PROCESS, COUNTS or SIGNAL_PAGE record, more events than PROCESS
 * announced, invalid counts or a record of another type.
 */
int kfd_criu_events_collect(struct kfd_criu_events_image *img,
			    const struct kfd_criu_record *rec,
			    const void *payload, u32 num_gpus)
{
	switch (rec->type) {
	case KFD_CRIU_REC_PROCESS:
		return kfd_criu_collect_process(img, rec, payload);
	case KFD_CRIU_REC_COUNTS:
		return kfd_criu_collect_counts(img, rec, payload, num_gpus);
	case KFD_CRIU_REC_SIGNAL_PAGE:
		return kfd_criu_collect_signal_page(img, rec, payload);
	case KFD_CRIU_REC_EVENT:
		return kfd_criu_collect_event(img, rec, payload);
	}
	return -EINVAL;
}

static int kfd_criu_validate_runtime(const struct kfd_criu_process_rec *rec)
{
	switch (le32_to_cpu(rec->runtime_state)) {
	case DEBUG_RUNTIME_STATE_DISABLED:
		/* runtime_disable() clears both */
		return rec->r_debug || rec->ttmp_setup ? -EINVAL : 0;
	case DEBUG_RUNTIME_STATE_ENABLED:
		return 0;
	}
	/* The other states exist only while a debugger is attached */
	return -EINVAL;
}

/* A dump's own events: any age (kfd_criu_validate_event_state()) */
static int kfd_criu_validate_events(const struct kfd_criu_events_image *img,
				    bool dump)
{
	const struct kfd_criu_event_rec *ev;
	int ret;
	u32 i;

	ret = kfd_criu_check_event_ids(img->events, img->num_events);
	if (ret)
		return ret;
	for (i = 0; i < img->num_events; i++) {
		ev = &img->events[i];
		ret = dump ? kfd_criu_validate_event_state(ev) :
			     kfd_criu_validate_event(ev);
		if (!ret)
			ret = kfd_criu_validate_event_slot(&img->process, ev);
		if (ret)
			return ret;
	}
	return 0;
}

static int kfd_criu_events_validate_as(const struct kfd_criu_events_image *img,
				       bool dump)
{
	const struct kfd_criu_process_rec *proc = &img->process;
	int ret;

	if (!img->have_process || img->events_read != img->num_events ||
	    le32_to_cpu(proc->num_events) != img->num_events ||
	    le32_to_cpu(proc->signal_page_size) != img->signal_page_size ||
	    !img->signal_page != !img->signal_page_size)
		return -EINVAL;

	ret = kfd_criu_validate_process(proc);
	if (!ret)
		ret = kfd_criu_validate_runtime(proc);
	if (!ret)
		ret = kfd_criu_validate_events(img, dump);
	return ret;
}

/**
 * kfd_criu_events_validate - check collected records as a set
 * @img: state collected from a stream
 *
 * Return: 0, -EEXIST for a duplicate event id, or -EINVAL for a missing
 * PROCESS record, counts or sizes that do not match the records, an
 * invalid field, or an event whose signal slot is not in the signal page.
 */
int kfd_criu_events_validate(const struct kfd_criu_events_image *img)
{
	return kfd_criu_events_validate_as(img, false);
}

static struct kfd_event *kfd_criu_event_from_rec(const struct kfd_criu_event_rec *rec)
{
	struct kfd_hsa_memory_exception_data *mem;
	struct kfd_hsa_hw_exception_data *hw;
	struct kfd_event *ev;

	ev = kzalloc_obj(*ev, GFP_KERNEL_ACCOUNT);
	if (!ev)
		return NULL;

	spin_lock_init(&ev->lock);
	init_waitqueue_head(&ev->wq);
	ev->type = le32_to_cpu(rec->type);
	ev->auto_reset = le32_to_cpu(rec->auto_reset);
	ev->signaled = le32_to_cpu(rec->signaled);
	ev->event_age = le64_to_cpu(rec->event_age);

	if (ev->type == KFD_EVENT_TYPE_MEMORY) {
		mem = &ev->memory_exception_data;
		mem->va = le64_to_cpu(rec->mem_va);
		mem->gpu_id = le32_to_cpu(rec->mem_gpu_id);
		mem->ErrorType = le32_to_cpu(rec->mem_error_type);
		mem->failure.NotPresent = le32_to_cpu(rec->mem_not_present);
		mem->failure.ReadOnly = le32_to_cpu(rec->mem_read_only);
		mem->failure.NoExecute = le32_to_cpu(rec->mem_no_execute);
		mem->failure.imprecise = le32_to_cpu(rec->mem_imprecise);
	} else if (ev->type == KFD_EVENT_TYPE_HW_EXCEPTION) {
		hw = &ev->hw_exception_data;
		hw->reset_type = le32_to_cpu(rec->hw_reset_type);
		hw->reset_cause = le32_to_cpu(rec->hw_reset_cause);
		hw->memory_lost = le32_to_cpu(rec->hw_memory_lost);
		hw->gpu_id = le32_to_cpu(rec->hw_gpu_id);
	}
	return ev;
}

/* Frees the events that were not handed to the process. */
static void kfd_criu_events_put(struct kfd_event **evs, u32 num)
{
	u32 i;

	if (!evs)
		return;
	for (i = 0; i < num; i++)
		kfree(evs[i]);
	kvfree(evs);
}

static int kfd_criu_events_prepare(const struct kfd_criu_events_image *img,
				   struct kfd_event ***evs_out)
{
	struct kfd_event **evs;
	u32 i;

	*evs_out = NULL;
	if (!img->num_events)
		return 0;

	evs = kvcalloc(img->num_events, sizeof(*evs), GFP_KERNEL_ACCOUNT);
	if (!evs)
		return -ENOMEM;
	for (i = 0; i < img->num_events; i++) {
		evs[i] = kfd_criu_event_from_rec(&img->events[i]);
		if (!evs[i]) {
			kfd_criu_events_put(evs, i);
			return -ENOMEM;
		}
	}
	*evs_out = evs;
	return 0;
}

static void kfd_criu_signal_slots_restore_locked(struct kfd_process *p,
						 const struct kfd_criu_events_image *img)
{
	const __le64 *saved = img->signal_page;
	u64 *slots = kfd_event_signal_slots_locked(p);
	size_t i;

	for (i = 0; i < img->signal_page_size / sizeof(u64); i++)
		WRITE_ONCE(slots[i], le64_to_cpu(saved[i]));
}

static bool kfd_criu_events_empty_locked(struct kfd_process *p)
{
	return !kfd_get_num_events(p) && !kfd_event_signal_slots_locked(p);
}

/*
 * Adds one event of a restore under its id. The KUnit tests make a chosen
 * call fail through a static stub, to undo a restore partway. Without
 * CONFIG_KUNIT the redirect compiles to nothing. With it, outside KUnit it
 * is a static branch; while a KUnit test runs, other tasks test one
 * pointer, and only the test's own thread looks its stubs up.
 */
static int kfd_criu_event_add(struct file *devkfd, struct kfd_process *p,
			      struct kfd_event *ev, u32 id)
{
	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_event_add, devkfd, p, ev, id);
	return kfd_event_add_with_id_locked(devkfd, p, ev, id);
}

/*
 * Makes the restored BO @handle names the event page, as
 * AMDKFD_IOC_CREATE_EVENT does with an event_page_offset: it maps the BO
 * into the kernel and resets every slot. The event tests put a page of
 * their own in its place through a static stub.
 */
static int kfd_criu_event_page_map_locked(struct kfd_process *p, u64 handle)
{
	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_event_page_map_locked, p, handle);
	lockdep_assert_held(&p->mutex);
	lockdep_assert_held(&p->event_mutex);

	return kfd_kmap_event_page(p, handle);
}

/* Undoes kfd_criu_event_page_map_locked(). */
static void kfd_criu_event_page_unmap_locked(struct kfd_process *p,
					     u64 handle)
{
	struct kfd_process_device *pdd;
	struct kgd_mem *mem = NULL;

	KUNIT_STATIC_STUB_REDIRECT(kfd_criu_event_page_unmap_locked, p, handle);
	lockdep_assert_held(&p->mutex);

	pdd = kfd_process_device_data_by_id(p, GET_GPU_ID(handle));
	if (pdd)
		mem = kfd_process_device_translate_handle(pdd,
							  GET_IDR_HANDLE(handle));
	kfd_event_signal_page_free_locked(p);
	if (!WARN_ON(!mem))
		amdgpu_amdkfd_gpuvm_unmap_bo_from_kernel(mem);
}

/*
 * Creates the events, in the event page BO that is in place already when
 * the image has signal slots. On error everything created is
 * destroyed again and the events in @evs still belong to the caller; on
 * success they belong to the process and @evs holds only NULLs.
 */
static int kfd_criu_events_install_locked(struct file *devkfd,
					  struct kfd_process *p,
					  const struct kfd_criu_events_image *img,
					  struct kfd_event **evs)
{
	u32 i;
	int ret;

	lockdep_assert_held(&p->event_mutex);

	for (i = 0; i < img->num_events; i++) {
		ret = kfd_criu_event_add(devkfd, p, evs[i],
					 le32_to_cpu(img->events[i].event_id));
		if (ret)
			goto out_destroy_events;
	}

	/* Allocating a slot resets it: restore the contents last */
	if (img->signal_page)
		kfd_criu_signal_slots_restore_locked(p, img);
	for (i = 0; i < img->num_events; i++)
		evs[i] = NULL;
	return 0;

out_destroy_events:
	while (i--) {
		kfd_event_destroy_locked(p, evs[i]);
		evs[i] = NULL;
	}
	return ret;
}

/*
 * kfd_kmap_event_page() runs under p->event_mutex here, where the create
 * ioctl holds only p->mutex; nothing takes p->event_mutex under
 * process_info->lock or a BO reservation.
 */
static int kfd_criu_events_install(struct file *devkfd, struct kfd_process *p,
				   const struct kfd_criu_events_image *img,
				   u64 event_page, struct kfd_event **evs)
{
	int ret;

	mutex_lock(&p->event_mutex);
	if (!kfd_criu_events_empty_locked(p)) {
		ret = -EBUSY;
		goto out_unlock;
	}
	/* kfd_criu_check_event_page() refused slots without an event page */
	if (WARN_ON_ONCE(img->signal_page && !event_page)) {
		ret = -EINVAL;
		goto out_unlock;
	}
	if (event_page) {
		ret = kfd_criu_event_page_map_locked(p, event_page);
		if (ret)
			goto out_unlock;
	}
	ret = kfd_criu_events_install_locked(devkfd, p, img, evs);
	if (ret && event_page)
		kfd_criu_event_page_unmap_locked(p, event_page);
out_unlock:
	mutex_unlock(&p->event_mutex);
	return ret;
}

static int kfd_criu_process_state_check(struct kfd_process *p,
					const struct kfd_criu_process_rec *rec)
{
	if (le32_to_cpu(rec->xnack_enabled) && !kfd_process_xnack_mode(p, true))
		return -ENODEV;
	return 0;
}

/*
 * RESTORE refuses a target with SVM ranges, and applies the image's ranges
 * only at RESUME, so no range's reserved memory depends on the mode here.
 * The mode still changes under svms.lock, as
 * svm_range_switch_xnack_reserve_mem() does.
 */
static void kfd_criu_set_xnack(struct kfd_process *p, bool enabled)
{
	if (!IS_ENABLED(CONFIG_HSA_AMD_SVM)) {
		p->xnack_enabled = enabled;
		return;
	}
	mutex_lock(&p->svms.lock);
	WARN_ON_ONCE(!list_empty(&p->svms.list));
	p->xnack_enabled = enabled;
	mutex_unlock(&p->svms.lock);
}

/**
 * kfd_criu_runtime_restore - give a restored process its XNACK mode and
 *	runtime before it has queues
 * @p: the process, with its GPUs restored and no queues yet
 * @rec: the validated PROCESS record
 *
 * The first queue on a GPU programs SH_MEM_CONFIG from the XNACK mode, and
 * an enabled runtime programs the GPUs (MES debug mode, trap temporaries)
 * before any queue exists, as RUNTIME_ENABLE does. Both are applied here,
 * before the restore creates buffers and queues;
 * kfd_criu_runtime_unwind() undoes them.
 *
 * @old_xnack: receives the XNACK mode @p had, for kfd_criu_runtime_unwind()
 *
 * Context: p->mutex held.
 * Return: 0, or the error of programming a GPU (the MES debug mode), as
 * RUNTIME_ENABLE reports it; nothing is left to unwind then.
 */
int kfd_criu_runtime_restore(struct kfd_process *p,
			     const struct kfd_criu_process_rec *rec,
			     bool *old_xnack)
{
	struct kfd_runtime_info old = p->runtime_info;
	int ret;

	lockdep_assert_held(&p->mutex);

	*old_xnack = p->xnack_enabled;
	kfd_criu_set_xnack(p, le32_to_cpu(rec->xnack_enabled));
	if (le32_to_cpu(rec->runtime_state) != DEBUG_RUNTIME_STATE_ENABLED)
		return 0;
	p->runtime_info.runtime_state = DEBUG_RUNTIME_STATE_ENABLED;
	p->runtime_info.r_debug = le64_to_cpu(rec->r_debug);
	p->runtime_info.ttmp_setup = le32_to_cpu(rec->ttmp_setup);
	ret = kfd_runtime_enable_devices(p);
	if (ret) {
		/* As RUNTIME_ENABLE: a failed enable changes no state */
		p->runtime_info = old;
		kfd_criu_set_xnack(p, *old_xnack);
	}
	return ret;
}

/**
 * kfd_criu_runtime_unwind - undo kfd_criu_runtime_restore()
 * @p: the process
 * @rec: the PROCESS record kfd_criu_runtime_restore() applied
 * @old_xnack: what kfd_criu_runtime_restore() returned
 *
 * Context: p->mutex held.
 */
void kfd_criu_runtime_unwind(struct kfd_process *p,
			     const struct kfd_criu_process_rec *rec,
			     bool old_xnack)
{
	lockdep_assert_held(&p->mutex);

	if (le32_to_cpu(rec->runtime_state) == DEBUG_RUNTIME_STATE_ENABLED) {
		int ret = kfd_runtime_disable_devices(p, true);

		/* As RUNTIME_DISABLE would, the unwind goes on */
		if (ret)
			pr_warn_ratelimited("CRIU image: disabling the runtime on the GPUs failed: %d\n",
					    ret);
		p->runtime_info.runtime_state = DEBUG_RUNTIME_STATE_DISABLED;
		p->runtime_info.r_debug = 0;
	}
	kfd_criu_set_xnack(p, old_xnack);
}

/**
 * kfd_criu_events_check - whether a process can take an image's state
 * @p: the process being restored
 * @img: state that passed kfd_criu_events_validate()
 *
 * What kfd_criu_events_restore() refuses about the process state, for a
 * restore to refuse before it changes anything else.
 *
 * Context: p->mutex held.
 * Return: 0, or -ENODEV if the GPUs of @p cannot run with the image's
 * XNACK mode.
 */
int kfd_criu_events_check(struct kfd_process *p,
			  const struct kfd_criu_events_image *img)
{
	lockdep_assert_held(&p->mutex);

	return kfd_criu_process_state_check(p, &img->process);
}

/**
 * kfd_criu_events_restore - give a process the state of a validated image
 * @devkfd: the process's /dev/kfd file
 * @p: the process; it must have no events and no event page
 * @img: state that passed kfd_criu_events_validate() and, as part of the
 *	whole image, kfd_criu_check_signal_page()
 * @event_page: the handle of the restored BO that becomes the event page
 *	(kfd_criu_bos_event_page()), 0 when the image has no signal slots
 *
 * All or nothing: on error @p is left as it was.
 *
 * Context: p->mutex held.
 * Return: 0, -ENOMEM, -EBUSY if @p has events or an event page, -ENODEV
 * if the GPUs of @p cannot run with the image's XNACK mode, or the errno
 * of mapping the event page BO or of an id allocation.
 */
int kfd_criu_events_restore(struct file *devkfd, struct kfd_process *p,
			    const struct kfd_criu_events_image *img,
			    u64 event_page)
{
	struct kfd_event **evs;
	int ret;

	lockdep_assert_held(&p->mutex);

	ret = kfd_criu_process_state_check(p, &img->process);
	if (ret)
		return ret;
	ret = kfd_criu_events_prepare(img, &evs);
	if (ret)
		return ret;

	ret = kfd_criu_events_install(devkfd, p, img, event_page, evs);
	kfd_criu_events_put(evs, img->num_events);
	return ret;
}

#if IS_BUILTIN(CONFIG_HSA_AMD_CRIU_KUNIT_TEST)
#include "tests/kfd_criu_events_test.c"
#endif
