/* SPDX-License-Identifier: GPL-2.0 OR MIT */

#ifndef KFD_CRIU_H_INCLUDED
#define KFD_CRIU_H_INCLUDED

#include <linux/errno.h>
#include <linux/kfd_ioctl.h>
#include <linux/types.h>

#include "kfd_criu_image.h"

/**
 * DOC: CRIU image mode internals
 *
 * Image mode is built of parts, one per kind of process state, and the
 * ops of kfd_criu.c run them all. Each part declares its interface here,
 * in a section that names its file: for each kind of state an image type
 * that holds its records, and functions that count, snapshot and write
 * it on dump, and collect, validate, restore and undo it on restore.
 *
 * The images hold records in their little-endian stream layout, so dump
 * writes them unchanged and restore validates exactly the bytes it read.
 */

struct dma_fence;
struct file;
struct kfd_criu_bo_restore_xfer;
struct kfd_process;
struct kfd_process_device;
struct kgd_mem;
struct mm_struct;

/* kfd_criu_events.c: the process and its events */

/**
 * struct kfd_criu_events_image - process and event state in kernel memory
 * @process: the PROCESS record
 * @signal_page: contents of the signal page, or NULL when there is none
 * @signal_page_size: bytes at @signal_page
 * @events: the EVENT records, @num_events of them, ascending ids on dump
 * @num_events: entries in @events
 * @events_read: EVENT records collected so far on restore
 * @have_process: the PROCESS record was collected
 * @counts: the COUNTS record; all zero when the image has none
 * @have_counts: a COUNTS record was collected
 */
struct kfd_criu_events_image {
	struct kfd_criu_process_rec process;
	void *signal_page;
	u32 signal_page_size;
	struct kfd_criu_event_rec *events;
	u32 num_events;
	u32 events_read;
	bool have_process;
	struct kfd_criu_counts_rec counts;
	bool have_counts;
};

void kfd_criu_events_image_free(struct kfd_criu_events_image *img);
int kfd_criu_events_snapshot(struct kfd_process *p,
			     struct kfd_criu_events_image *img);
int kfd_criu_events_write(struct kfd_criu_image_writer *w,
			  const struct kfd_criu_events_image *img);
bool kfd_criu_counts_present(const struct kfd_criu_counts_rec *counts);
int kfd_criu_events_collect(struct kfd_criu_events_image *img,
			    const struct kfd_criu_record *rec,
			    const void *payload, u32 num_gpus);
int kfd_criu_events_validate(const struct kfd_criu_events_image *img);
int kfd_criu_events_check(struct kfd_process *p,
			  const struct kfd_criu_events_image *img);
int kfd_criu_events_restore(struct file *devkfd, struct kfd_process *p,
			    const struct kfd_criu_events_image *img,
			    u64 event_page);
void kfd_criu_events_count(struct kfd_process *p, u32 *num_events,
			   u32 *signal_page_size);
int kfd_criu_runtime_restore(struct kfd_process *p,
			     const struct kfd_criu_process_rec *rec,
			     bool *old_xnack);
void kfd_criu_runtime_unwind(struct kfd_process *p,
			     const struct kfd_criu_process_rec *rec,
			     bool old_xnack);

/* kfd_criu_unwind.c: undo steps of a failed RESTORE where no signal reaches */

void kfd_criu_run_unwind(struct kfd_process *p, void (*fn)(void *data),
			 void *data);

/* kfd_criu_gpus.c: the GPUs, and kfd_criu_traps.c: their trap handlers */

/**
 * struct kfd_criu_gpus_image - the GPU records of an image
 * @gpus: the GPU records, @num_gpus of them, in per-GPU data order
 * @num_gpus: entries in @gpus, COMPAT's num_gpus
 * @gpus_read: GPU records collected so far on restore
 */
struct kfd_criu_gpus_image {
	struct kfd_criu_gpu_rec *gpus;
	u32 num_gpus;
	u32 gpus_read;
};

/**
 * struct kfd_criu_gpus_restore - where image GPUs went, and how to undo it
 * @target: for image GPU i, the index in p->pdds of the GPU it went to
 * @user_gpu_id: the gpu_id each of p->pdds shows the process after restore
 * @old_user_gpu_id: the gpu_id each of p->pdds showed before
 * @map: the caller's GPU map, copied from userspace
 * @num_map: entries in @map
 * @acquired: BIT(pdd index) of the VMs the restore acquired
 * @bound: BIT(pdd index) of the runtime PM references the restore took
 * @had_doorbells: BIT(pdd index) of the GPUs with doorbells before
 * @mmu_blocked: the restore blocked MMU notifications of the new VMs
 */
struct kfd_criu_gpus_restore {
	u32 target[KFD_CRIU_MAX_GPUS];
	u32 user_gpu_id[KFD_CRIU_MAX_GPUS];
	u32 old_user_gpu_id[KFD_CRIU_MAX_GPUS];
	struct kfd_criu_gpu_map *map;
	u32 num_map;
	u64 acquired;
	u64 bound;
	u64 had_doorbells;
	bool mmu_blocked;
};

/**
 * struct kfd_criu_traps_image - the TRAP_HANDLER records of an image
 * @traps: the records, ascending gpu_index
 * @num_traps: entries in @traps, at most one per GPU record
 */
struct kfd_criu_traps_image {
	struct kfd_criu_trap_rec *traps;
	u32 num_traps;
};

void kfd_criu_gpus_image_free(struct kfd_criu_gpus_image *img);
int kfd_criu_gpus_snapshot(struct kfd_process *p,
			   struct kfd_criu_gpus_image *img);
int kfd_criu_gpus_write(struct kfd_criu_image_writer *w,
			const struct kfd_criu_gpus_image *img);
int kfd_criu_gpus_pairing(struct kfd_process *p,
			  struct kfd_criu_device_bucket *buckets, u32 room);
int kfd_criu_gpus_prepare(struct kfd_criu_gpus_image *img, u32 num_gpus);
int kfd_criu_gpus_collect(struct kfd_criu_gpus_image *img,
			  const struct kfd_criu_record *rec,
			  const void *payload);
int kfd_criu_gpus_validate(const struct kfd_criu_gpus_image *img);
int kfd_criu_gpus_map(struct kfd_process *p,
		      const struct kfd_criu_gpus_image *img,
		      struct kfd_criu_gpus_restore *st);
int kfd_criu_gpus_restore(struct kfd_process *p,
			  const struct kfd_criu_gpus_image *img,
			  u64 needed, struct kfd_criu_gpus_restore *st);
void kfd_criu_gpus_unwind(struct kfd_process *p,
			  struct kfd_criu_gpus_restore *st);
struct kfd_process_device *
kfd_criu_gpus_pdd(struct kfd_process *p, const struct kfd_criu_gpus_restore *st,
		  u32 gpu_index);
void kfd_criu_traps_image_free(struct kfd_criu_traps_image *img);
u32 kfd_criu_traps_count(struct kfd_process *p);
int kfd_criu_traps_snapshot(struct kfd_process *p,
			    struct kfd_criu_traps_image *img);
int kfd_criu_traps_write(struct kfd_criu_image_writer *w,
			 const struct kfd_criu_traps_image *img);
int kfd_criu_traps_collect(struct kfd_criu_traps_image *img,
			   const struct kfd_criu_record *rec,
			   const void *payload, u32 num_gpus);
u64 kfd_criu_traps_needed_gpus(const struct kfd_criu_traps_image *img);
void kfd_criu_traps_restore(struct kfd_process *p,
			    const struct kfd_criu_traps_image *img,
			    const struct kfd_criu_gpus_restore *st);
void kfd_criu_traps_unwind(struct kfd_process *p,
			   const struct kfd_criu_traps_image *img,
			   const struct kfd_criu_gpus_restore *st);
int kfd_criu_assign_user_gpu_ids(const u32 *old_ids, u32 num_pdds,
				 const u32 *image_ids, const u32 *target,
				 u32 num_image, u32 *new_ids);

/* kfd_criu_bo_copy.c: BO contents copied on amdgpu */

/**
 * struct kfd_criu_copy_stats - BO contents bytes per copy path
 * @engine_bytes: copied by the copy engine
 * @cpu_bytes: copied by the CPU
 */
struct kfd_criu_copy_stats {
	u64 engine_bytes;
	u64 cpu_bytes;
};

int kfd_criu_bo_bounce_alloc(void *dev, u32 size, void **bounce, void **cpu);
void kfd_criu_bo_bounce_free(void *bounce, struct dma_fence *pending);
int kfd_criu_bo_vram_epoch(struct kfd_process_device *pdd);
int kfd_criu_bo_copy(struct kgd_mem *mem, u64 offset, void *bounce, void *cpu,
		     u32 len, bool to_bo, struct dma_fence **fence,
		     struct kfd_criu_copy_stats *st);

/* kfd_criu_bos.c: buffer objects and their contents */

/**
 * struct kfd_criu_bos_image - the BO records of an image
 * @bos: the BO records, @num_bos of them, sorted by (gpu_index, handle)
 * @num_bos: entries in @bos, PROCESS's num_bos
 * @bos_read: BO records collected so far on restore
 * @mems: on restore, the BO created for each record, NULL before
 * @cursor: on restore, the BO_DATA record expected next
 * @xfer: on restore, the bounce buffers the contents go through, from
 *	kfd_criu_bos_restore() until kfd_criu_bos_finish_contents() or the
 *	unwind
 * @vram_epoch: the sum of the VRAM-lost counts of the GPUs of the BOs
 *	with contents, at the snapshot (dump) or when the BOs were created
 *	(restore); the counts only grow, so the sum changes when one does
 */
struct kfd_criu_bos_image {
	struct kfd_criu_bo_rec *bos;
	u32 num_bos;
	u32 bos_read;
	struct kgd_mem **mems;
	struct kfd_criu_bo_cursor cursor;
	struct kfd_criu_bo_restore_xfer *xfer;
	unsigned int vram_epoch;
};

void kfd_criu_bos_image_free(struct kfd_criu_bos_image *img);
void kfd_criu_bos_count(struct kfd_process *p, u32 *num_bos,
			u64 *stream_bytes);
int kfd_criu_bos_snapshot(struct kfd_process *p,
			  struct kfd_criu_bos_image *img);
int kfd_criu_bos_write(struct kfd_criu_image_writer *w,
		       const struct kfd_criu_bos_image *img);
int kfd_criu_bos_dump_contents(struct kfd_criu_image_writer *w,
			       struct kfd_process *p,
			       const struct kfd_criu_bos_image *img);
int kfd_criu_bos_prepare(struct kfd_criu_bos_image *img, u32 num_bos);
int kfd_criu_bos_collect(struct kfd_criu_bos_image *img,
			 const struct kfd_criu_record *rec,
			 const void *payload);
int kfd_criu_bos_validate(struct kfd_criu_bos_image *img, u32 num_gpus);
u64 kfd_criu_bos_needed_gpus(const struct kfd_criu_bos_image *img);
u64 kfd_criu_bos_event_page(struct kfd_process *p,
			    const struct kfd_criu_bos_image *img,
			    const struct kfd_criu_gpus_restore *st);
u64 kfd_criu_bo_stream_bytes(u64 size, u32 alloc_flags);
u64 kfd_criu_bo_fixed_offset(u32 alloc_flags, u32 gpu_id);
u32 kfd_criu_bos_offsets_needed(const struct kfd_criu_bos_image *img,
				const u32 *local_gpu_ids);
int kfd_criu_bos_check_target(struct kfd_process *p,
			      const struct kfd_criu_bos_image *img,
			      const struct kfd_criu_gpus_restore *st);
int kfd_criu_bos_restore(struct kfd_process *p, struct kfd_criu_bos_image *img,
			 const struct kfd_criu_gpus_restore *st);
int kfd_criu_bos_write_contents(struct kfd_process *p,
				struct kfd_criu_bos_image *img,
				void *payload, u32 len);
int kfd_criu_bos_finish_contents(struct kfd_process *p,
				 struct kfd_criu_bos_image *img);
u32 kfd_criu_bos_offsets(struct kfd_process *p,
			 const struct kfd_criu_bos_image *img,
			 const struct kfd_criu_gpus_restore *st,
			 struct kfd_criu_offset_map *out, u32 capacity);
void kfd_criu_bos_unwind(struct kfd_process *p, struct kfd_criu_bos_image *img,
			 const struct kfd_criu_gpus_restore *st);

/* kfd_criu_queues.c: user-mode queues and their preempted state */

/**
 * struct kfd_criu_queue_state - one QUEUE_STATE record in kernel memory
 * @payload: the payload: &struct kfd_criu_queue_state_hdr, &struct
 *	kfd_criu_queue_dyn, then the control stack
 * @len: bytes at @payload
 */
struct kfd_criu_queue_state {
	void *payload;
	u32 len;
};

/**
 * struct kfd_criu_queues_image - the queue records of an image
 * @queues: the fixed parts of the QUEUE records, @num_queues of them,
 *	ascending queue ids
 * @cu_masks: the CU mask words of the QUEUE records, 32 slots per queue
 *	of which each uses num_cu_mask / 32
 * @num_queues: entries in @queues, COUNTS's num_queues
 * @queues_read: QUEUE records collected so far on restore
 * @states: the QUEUE_STATE records, @num_states of them, in stream order
 * @num_states: entries in @states, the sum of the queues' num_xcc
 * @states_read: QUEUE_STATE records collected so far on restore
 * @cursor: on restore, the QUEUE_STATE record expected next
 * @num_created: on restore, queues created so far, in record order
 */
struct kfd_criu_queues_image {
	struct kfd_criu_queue_rec *queues;
	__le32 *cu_masks;
	u32 num_queues;
	u32 queues_read;
	struct kfd_criu_queue_state *states;
	u32 num_states;
	u32 states_read;
	struct kfd_criu_queue_cursor cursor;
	u32 num_created;
};

void kfd_criu_queues_image_free(struct kfd_criu_queues_image *img);
void kfd_criu_queues_count(struct kfd_process *p, u32 *num_queues,
			   u64 *stream_bytes);
int kfd_criu_queues_snapshot(struct kfd_process *p,
			     const struct kfd_criu_gpus_image *gpus,
			     struct kfd_criu_queues_image *img);
int kfd_criu_queues_write(struct kfd_criu_image_writer *w,
			  const struct kfd_criu_queues_image *img);
int kfd_criu_queues_collect(struct kfd_criu_queues_image *img, u32 num_queues,
			    const struct kfd_criu_gpus_image *gpus,
			    const struct kfd_criu_record *rec,
			    const void *payload);
int kfd_criu_queues_validate(struct kfd_criu_queues_image *img,
			     u32 num_queues,
			     const struct kfd_criu_gpus_image *gpus);
u64 kfd_criu_queues_needed_gpus(const struct kfd_criu_queues_image *img);
int kfd_criu_queues_restore(struct kfd_process *p,
			    struct kfd_criu_queues_image *img,
			    const struct kfd_criu_svm_rec *ranges,
			    u32 num_ranges,
			    const struct kfd_criu_gpus_restore *st);
int kfd_criu_queues_resume(struct kfd_process *p);
void kfd_criu_queues_unwind(struct kfd_process *p,
			    struct kfd_criu_queues_image *img);

/* kfd_criu_svm.c: SVM ranges, kept by RESTORE and applied by RESUME */

/**
 * struct kfd_criu_svm_range - one SVM range that RESUME applies
 * @start: first byte, page aligned, not 0
 * @size: bytes, page aligned
 * @access: BIT(i): p->pdds[i] gets KFD_IOCTL_SVM_ATTR_ACCESS
 * @access_in_place: BIT(i): p->pdds[i] gets
 *	KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE
 * @no_access: BIT(i): p->pdds[i] gets KFD_IOCTL_SVM_ATTR_NO_ACCESS
 * @preferred_loc: KFD_IOCTL_SVM_LOCATION_SYSMEM, _UNDEFINED or a gpu_id
 *	the restored process sees
 * @prefetch_loc: as @preferred_loc
 * @flags: KFD_IOCTL_SVM_FLAG_* the range has; every other flag is cleared
 * @granularity: migration granularity, log2 of pages
 *
 * A GPU in none of the masks keeps the default access of a new range.
 */
struct kfd_criu_svm_range {
	u64 start;
	u64 size;
	u64 access;
	u64 access_in_place;
	u64 no_access;
	u32 preferred_loc;
	u32 prefetch_loc;
	u32 flags;
	u32 granularity;
};

/**
 * struct kfd_criu_svm_resume - the SVM ranges a restored process gets at
 *	RESUME
 * @applied: ranges a failed RESUME applied already, the first ones
 * @partial: the range at @applied failed in SET_ATTR and may exist in part
 * @num_ranges: entries in @ranges
 * @ranges: the ranges, sorted by start, disjoint
 *
 * One allocation, which kvfree() frees. A restore hangs it on the process
 * (kfd_process.criu_svm) until RESUME applies it or the process goes.
 */
struct kfd_criu_svm_resume {
	u32 applied;
	bool partial;
	u32 num_ranges;
	struct kfd_criu_svm_range ranges[] __counted_by(num_ranges);
};

/**
 * struct kfd_criu_svm_image - the SVM_RANGE records of an image
 * @ranges: the records, @num_ranges of them, sorted by start
 * @num_ranges: entries in @ranges, COUNTS's num_svm_ranges
 * @ranges_read: SVM_RANGE records collected so far on restore
 * @kept: on restore, the ranges translated for the restored process,
 *	until kfd_criu_svm_keep() hands them to it
 */
struct kfd_criu_svm_image {
	struct kfd_criu_svm_rec *ranges;
	u32 num_ranges;
	u32 ranges_read;
	struct kfd_criu_svm_resume *kept;
};

#if IS_ENABLED(CONFIG_HSA_AMD_SVM)
void kfd_criu_svm_image_free(struct kfd_criu_svm_image *img);
int kfd_criu_svm_write(struct kfd_criu_image_writer *w,
		       const struct kfd_criu_svm_image *img);
int kfd_criu_svm_prepare(struct kfd_criu_svm_image *img, u32 num_ranges);
int kfd_criu_svm_collect(struct kfd_criu_svm_image *img,
			 const struct kfd_criu_record *rec,
			 const void *payload);
int kfd_criu_svm_validate(const struct kfd_criu_svm_image *img,
			  const struct kfd_criu_gpus_image *gpus,
			  const struct kfd_criu_bos_image *bos);
u64 kfd_criu_svm_needed_gpus(const struct kfd_criu_svm_image *img,
			     const struct kfd_criu_gpus_image *gpus);
u32 kfd_criu_svm_count(struct kfd_process *p);
int kfd_criu_svm_snapshot(struct kfd_process *p,
			  const struct kfd_criu_gpus_image *gpus,
			  const struct kfd_criu_bos_image *bos,
			  struct kfd_criu_svm_image *img);
int kfd_criu_svm_restore(struct kfd_process *p, struct kfd_criu_svm_image *img,
			 const struct kfd_criu_gpus_image *gpus,
			 const struct kfd_criu_gpus_restore *st);
void kfd_criu_svm_keep(struct kfd_process *p, struct kfd_criu_svm_image *img);
int kfd_criu_svm_resume(struct kfd_process *p, struct mm_struct *mm);
#else
/*
 * Without SVM a process has no SVM ranges, and an image with some is
 * refused as soon as COUNTS announces them.
 */
static inline void kfd_criu_svm_image_free(struct kfd_criu_svm_image *img)
{
}

static inline int kfd_criu_svm_write(struct kfd_criu_image_writer *w,
				     const struct kfd_criu_svm_image *img)
{
	return img->num_ranges ? -EOPNOTSUPP : 0;
}

static inline int kfd_criu_svm_prepare(struct kfd_criu_svm_image *img,
				       u32 num_ranges)
{
	return num_ranges ? -EOPNOTSUPP : 0;
}

static inline int kfd_criu_svm_collect(struct kfd_criu_svm_image *img,
				       const struct kfd_criu_record *rec,
				       const void *payload)
{
	return -EOPNOTSUPP;
}

static inline int
kfd_criu_svm_validate(const struct kfd_criu_svm_image *img,
		      const struct kfd_criu_gpus_image *gpus,
		      const struct kfd_criu_bos_image *bos)
{
	return img->num_ranges ? -EOPNOTSUPP : 0;
}

static inline u64
kfd_criu_svm_needed_gpus(const struct kfd_criu_svm_image *img,
			 const struct kfd_criu_gpus_image *gpus)
{
	return 0;
}

static inline u32 kfd_criu_svm_count(struct kfd_process *p)
{
	return 0;
}

static inline int
kfd_criu_svm_snapshot(struct kfd_process *p,
		      const struct kfd_criu_gpus_image *gpus,
		      const struct kfd_criu_bos_image *bos,
		      struct kfd_criu_svm_image *img)
{
	return 0;
}

static inline int
kfd_criu_svm_restore(struct kfd_process *p, struct kfd_criu_svm_image *img,
		     const struct kfd_criu_gpus_image *gpus,
		     const struct kfd_criu_gpus_restore *st)
{
	return img->num_ranges ? -EOPNOTSUPP : 0;
}

static inline void kfd_criu_svm_keep(struct kfd_process *p,
				     struct kfd_criu_svm_image *img)
{
}

static inline int kfd_criu_svm_resume(struct kfd_process *p,
				      struct mm_struct *mm)
{
	return 0;
}
#endif

/* kfd_criu_file.c: the stream on the caller's file */

/**
 * struct kfd_criu_file_io - &struct kfd_criu_image_io on a user's file
 * @io: what the codec calls
 * @file: the file, referenced
 * @pos: where the next byte goes or comes from, never the file's f_pos
 * @ppos: @pos, or NULL for a stream, which has no position
 * @bytes: bytes moved so far
 */
struct kfd_criu_file_io {
	struct kfd_criu_image_io io;
	struct file *file;
	loff_t pos;
	loff_t *ppos;
	u64 bytes;
};

int kfd_criu_io_errno(ssize_t ret, int at_zero);
int kfd_criu_file_get(struct kfd_criu_file_io *fio, int fd, fmode_t mode,
		      u64 offset);
void kfd_criu_file_put(struct kfd_criu_file_io *fio);

/* kfd_criu_features.c: the process state the ops must know of */

int kfd_criu_dump_supported_locked(struct kfd_process *p);
int kfd_criu_restore_target_clean_locked(struct kfd_process *p);

#endif /* KFD_CRIU_H_INCLUDED */
