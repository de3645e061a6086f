// SPDX-License-Identifier: GPL-2.0 OR MIT

/**
 * DOC: CRIU image mode
 *
 * AMDKFD_IOC_CRIU_OP with one of the KFD_CRIU_OP_IMAGE_* ops lands here
 * instead of in the legacy code in kfd_chardev.c. Image mode is chosen by
 * the op rather than by a flag because a kernel without it refuses an
 * unknown op, where it would ignore a flag and run the legacy op. Past the
 * argument checks the ops go by their legacy KFD_CRIU_OP_* names. This
 * file runs the five ops:
 *
 * - PROCESS_INFO pauses the process that owns the /dev/kfd file (its
 *   queues are evicted when it has GPUs) and estimates the image size.
 * - CHECKPOINT snapshots the paused process and streams the image to the
 *   caller's file descriptor. A failure leaves the process paused and
 *   unchanged, so the dump can be retried or abandoned with UNPAUSE.
 * - UNPAUSE resumes a paused process, but not while a CHECKPOINT still
 *   streams its image: nothing else holds the process paused then.
 * - RESTORE reads all metadata of an image into kernel memory, validates
 *   it as a set and places the image's GPUs on this machine's GPUs, and
 *   only then fills the process: GPU VMs, BOs, user queues (created
 *   evicted, so they run only after RESUME), the BO contents as the
 *   BO_DATA records stream in, and events. SVM ranges are only kept on
 *   the process, as their memory is not restored yet. All or nothing: any
 *   failure, a bad record at the end of the stream included, undoes
 *   everything.
 * - RESUME starts a restored process, found by pid; the caller must be
 *   that process or its tracer. It first applies the SVM ranges the
 *   restore kept; if that fails the process stays restored and RESUME can
 *   be retried.
 *
 * Each process carries an &enum kfd_criu_state, stepped by one pure
 * function, kfd_criu_next_state(), under p->mutex. An op that is not valid
 * in the current state fails with -EBADFD, a RESTORE into a process that
 * is paused or restored already with -EBUSY.
 *
 * The kfd ioctl dispatcher has already checked CAP_CHECKPOINT_RESTORE or
 * CAP_SYS_ADMIN and that the caller owns the file or is the ptrace parent
 * of its owner. Process state is listed once, in kfd_criu_features[] of
 * kfd_criu_features.c: CHECKPOINT refuses state the image cannot carry
 * with -EOPNOTSUPP and an attached debugger with -EBUSY, and RESTORE
 * refuses a target that already has state with -EBUSY.
 *
 * RESTORE applies events last although the stream carries them before the
 * BOs: once installed, events have no undo, and the contents of the BOs
 * (and so most of what can still fail) come at the end of the stream.
 * p->mutex is held while the contents stream in: the target is a process
 * being restored, which runs nothing before RESUME.
 *
 * The undo steps that free through amdgpu run where no signal reaches
 * (kfd_criu_run_unwind() in kfd_criu_unwind.c), and the stream goes
 * through the caller's file at the offset the caller gives, as pwrite(2)
 * and pread(2) take it (kfd_criu_file.c). RESTORE stops right after END,
 * so an image can be embedded in a larger file or stream.
 */

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/fs.h>
#include <linux/lockdep.h>
#include <linux/pid.h>
#include <linux/ptrace.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/utsname.h>

#include "amdgpu_amdkfd.h"
#include "kfd_criu.h"
#include "kfd_priv.h"

/* Largest payload RESTORE accepts: a BO_DATA record */
#define KFD_CRIU_READ_BUF_SIZE	(sizeof(struct kfd_criu_bo_data_hdr) + \
				 KFD_CRIU_BO_CHUNK)
static_assert(KFD_CRIU_READ_BUF_SIZE >= KFD_CRIU_SIGNAL_PAGE_MAX);
/* The uAPI entry: no padding, the same on 32- and 64-bit */
static_assert(sizeof(struct kfd_criu_offset_map) == 24);

/**
 * struct kfd_criu_proc_image - the metadata of an image in kernel memory
 * @gpus: the GPU records
 * @traps: the TRAP_HANDLER records
 * @events: the PROCESS, COUNTS, SIGNAL_PAGE and EVENT records
 * @bos: the BO records
 * @queues: the QUEUE and QUEUE_STATE records
 * @svm: the SVM_RANGE records
 */
struct kfd_criu_proc_image {
	struct kfd_criu_gpus_image gpus;
	struct kfd_criu_traps_image traps;
	struct kfd_criu_events_image events;
	struct kfd_criu_bos_image bos;
	struct kfd_criu_queues_image queues;
	struct kfd_criu_svm_image svm;
};

static void kfd_criu_proc_image_free(struct kfd_criu_proc_image *img)
{
	kfd_criu_gpus_image_free(&img->gpus);
	kfd_criu_traps_image_free(&img->traps);
	kfd_criu_events_image_free(&img->events);
	kfd_criu_bos_image_free(&img->bos);
	kfd_criu_queues_image_free(&img->queues);
	kfd_criu_svm_image_free(&img->svm);
}

/**
 * kfd_criu_next_state - the image-mode state machine
 * @cur: the process's current state
 * @op: the requested KFD_CRIU_OP_*
 * @next: receives the state after a successful @op
 *
 * Pure: the caller performs the side effects of the arc and stores @next
 * only when they succeed.
 *
 * Return: 0 for an allowed arc, -EBUSY for RESTORE into a process that is
 * paused or restored, -EBADFD for any other op not allowed in @cur, or
 * -EINVAL (with a warning) for a state or op out of range.
 */
static int kfd_criu_next_state(enum kfd_criu_state cur, u32 op,
			       enum kfd_criu_state *next)
{
	if (cur == KFD_CRIU_STATE_RUNNING && op == KFD_CRIU_OP_PROCESS_INFO) {
		*next = KFD_CRIU_STATE_PAUSED;
		return 0;
	}
	if (cur == KFD_CRIU_STATE_PAUSED && op == KFD_CRIU_OP_PROCESS_INFO) {
		*next = KFD_CRIU_STATE_PAUSED;
		return 0;
	}
	if (cur == KFD_CRIU_STATE_PAUSED && op == KFD_CRIU_OP_CHECKPOINT) {
		*next = KFD_CRIU_STATE_PAUSED;
		return 0;
	}
	if (cur == KFD_CRIU_STATE_PAUSED && op == KFD_CRIU_OP_UNPAUSE) {
		*next = KFD_CRIU_STATE_RUNNING;
		return 0;
	}
	if (cur == KFD_CRIU_STATE_RUNNING && op == KFD_CRIU_OP_RESTORE) {
		*next = KFD_CRIU_STATE_RESTORED;
		return 0;
	}
	if (cur == KFD_CRIU_STATE_RESTORED && op == KFD_CRIU_OP_RESUME) {
		*next = KFD_CRIU_STATE_RUNNING;
		return 0;
	}

	if (WARN_ON(cur > KFD_CRIU_STATE_RESTORED || op > KFD_CRIU_OP_RESUME))
		return -EINVAL;
	return op == KFD_CRIU_OP_RESTORE ? -EBUSY : -EBADFD;
}

static bool kfd_criu_is_image_op(u32 op)
{
	return op >= KFD_CRIU_OP_IMAGE_PROCESS_INFO &&
	       op <= KFD_CRIU_OP_IMAGE_RESUME;
}

/**
 * kfd_criu_image_requested - whether an ioctl is image mode's
 * @args: the arguments, zero-filled beyond what userspace passed
 *
 * A KFD_CRIU_OP_IMAGE_* op selects image mode. Non-zero flags, image
 * offset, GPU map, offset map or reserved fields with another op are
 * garbage that image mode refuses, so that a legacy caller never has them
 * ignored. image_fd, the output fields and the old tail padding never
 * select it.
 *
 * Return: true if kfd_criu_image_ioctl() must handle @args.
 */
bool kfd_criu_image_requested(const struct kfd_ioctl_criu_args *args)
{
	return kfd_criu_is_image_op(args->op) || args->flags ||
	       args->image_offset || args->num_gpu_map || args->gpu_map_ptr ||
	       args->offset_map_ptr || args->num_offset_map ||
	       args->reserved32 || args->reserved;
}

/*
 * The arrays, each a count and a pointer: the GPU map and the offset map
 * are RESTORE's, the device buckets PROCESS_INFO's output.
 */
static int kfd_criu_check_map_args(const struct kfd_ioctl_criu_args *args,
				   u32 op)
{
	bool maps = args->num_gpu_map || args->gpu_map_ptr ||
		    args->offset_map_ptr || args->num_offset_map;
	bool devices = args->num_devices || args->devices;

	if ((maps && op != KFD_CRIU_OP_RESTORE) ||
	    (devices && op != KFD_CRIU_OP_PROCESS_INFO))
		return -EINVAL;
	if (!args->num_devices != !args->devices ||
	    args->num_devices > KFD_CRIU_MAX_GPUS)
		return -EINVAL;
	if (!args->num_gpu_map != !args->gpu_map_ptr ||
	    args->num_gpu_map > KFD_CRIU_MAX_GPUS)
		return -EINVAL;
	if (args->num_offset_map && !args->offset_map_ptr)
		return -EINVAL;
	return 0;
}

/* @op is the legacy op that the image op of @args stands for */
static int kfd_criu_check_args(const struct kfd_ioctl_criu_args *args,
			       u32 op)
{
	if (!kfd_criu_is_image_op(args->op) || args->flags)
		return -EINVAL;
	/* Only the ops that stream an image take its offset */
	if (args->image_offset && op != KFD_CRIU_OP_CHECKPOINT &&
	    op != KFD_CRIU_OP_RESTORE)
		return -EINVAL;
	if (args->reserved32 || args->reserved)
		return -EINVAL;
	/* devices and num_devices are checked with the maps */
	if (args->bos || args->priv_data || args->priv_data_size ||
	    args->num_bos || args->num_objects)
		return -EINVAL;
	return kfd_criu_check_map_args(args, op);
}

static int kfd_criu_restore_allowed_locked(struct kfd_process *p,
					   enum kfd_criu_state *next)
{
	int ret;

	ret = kfd_criu_next_state(p->criu_state, KFD_CRIU_OP_RESTORE, next);
	if (ret)
		return ret;
	return kfd_criu_restore_target_clean_locked(p);
}

/**
 * kfd_criu_image_size_estimate - stream bytes of an image
 * @num_gpus: GPUs in the image
 * @num_traps: trap handlers in the image
 * @num_events: events in the image
 * @signal_page_size: bytes of the signal page record, 0 for none
 * @bo_bytes: stream bytes of the BO and BO_DATA records
 * @counts: the counts of the COUNTS record, all zero when it has none
 * @queue_bytes: stream bytes of the QUEUE and QUEUE_STATE records
 *
 * Return: the exact size of an image with this content.
 */
static u64 kfd_criu_image_size_estimate(u32 num_gpus, u32 num_traps,
					u32 num_events, u32 signal_page_size,
					u64 bo_bytes,
					const struct kfd_criu_counts_rec *counts,
					u64 queue_bytes)
{
	u64 size = sizeof(struct kfd_criu_image_header);

	size += KFD_CRIU_RECORD_OVERHEAD + sizeof(struct kfd_criu_compat_rec);
	size += (u64)num_gpus *
		(KFD_CRIU_RECORD_OVERHEAD + sizeof(struct kfd_criu_gpu_rec));
	size += (u64)num_traps *
		(KFD_CRIU_RECORD_OVERHEAD + sizeof(struct kfd_criu_trap_rec));
	size += KFD_CRIU_RECORD_OVERHEAD + sizeof(struct kfd_criu_process_rec);
	if (kfd_criu_counts_present(counts))
		size += KFD_CRIU_RECORD_OVERHEAD + sizeof(*counts);
	size += (u64)le32_to_cpu(counts->num_svm_ranges) *
		(KFD_CRIU_RECORD_OVERHEAD + sizeof(struct kfd_criu_svm_rec));
	if (signal_page_size)
		size += KFD_CRIU_RECORD_OVERHEAD + signal_page_size;
	size += (u64)num_events *
		(KFD_CRIU_RECORD_OVERHEAD + sizeof(struct kfd_criu_event_rec));
	size += bo_bytes + queue_bytes;
	size += KFD_CRIU_RECORD_OVERHEAD + sizeof(struct kfd_criu_end_rec);
	return size;
}

/*
 * @p is only used for BO contents: NULL for an image without BOs. The SVM
 * ranges come after the BO records and before their contents.
 */
static int kfd_criu_write_image(const struct kfd_criu_image_io *io,
				struct kfd_process *p,
				const struct kfd_criu_proc_image *img)
{
	struct kfd_criu_compat_rec compat = {
		.num_gpus = cpu_to_le32(img->gpus.num_gpus),
	};
	struct kfd_criu_image_writer w;
	int ret;

	kfd_criu_image_writer_init(&w, io);
	ret = kfd_criu_image_write_header(&w, init_utsname()->release);
	if (!ret)
		ret = kfd_criu_image_write_record(&w, KFD_CRIU_REC_COMPAT,
						  KFD_CRIU_RECORD_MANDATORY,
						  &compat, sizeof(compat));
	if (!ret)
		ret = kfd_criu_gpus_write(&w, &img->gpus);
	if (!ret)
		ret = kfd_criu_traps_write(&w, &img->traps);
	if (!ret)
		ret = kfd_criu_events_write(&w, &img->events);
	if (!ret)
		ret = kfd_criu_bos_write(&w, &img->bos);
	if (!ret)
		ret = kfd_criu_queues_write(&w, &img->queues);
	if (!ret)
		ret = kfd_criu_svm_write(&w, &img->svm);
	if (!ret)
		ret = kfd_criu_bos_dump_contents(&w, p, &img->bos);
	if (!ret)
		ret = kfd_criu_image_write_end(&w);
	return ret;
}

static int kfd_criu_read_compat(struct kfd_criu_image_reader *r, void *buf,
				struct kfd_criu_proc_image *img)
{
	struct kfd_criu_compat_rec compat;
	struct kfd_criu_record rec;
	int ret;

	ret = kfd_criu_image_read_record(r, &rec, buf, KFD_CRIU_READ_BUF_SIZE);
	if (ret)
		return ret;
	/* Compatibility is checked before anything else is read */
	if (rec.type != KFD_CRIU_REC_COMPAT || rec.length != sizeof(compat))
		return -EINVAL;
	memcpy(&compat, buf, sizeof(compat));
	ret = kfd_criu_validate_compat(&compat);
	if (!ret)
		ret = kfd_criu_gpus_prepare(&img->gpus,
					    le32_to_cpu(compat.num_gpus));
	return ret;
}

/**
 * enum kfd_criu_section - where a restore stream is, after COMPAT
 * @KFD_CRIU_SEC_GPUS: GPU records
 * @KFD_CRIU_SEC_PROCESS: PROCESS, COUNTS, SIGNAL_PAGE and EVENT records,
 *	whose order kfd_criu_events_collect() checks
 * @KFD_CRIU_SEC_BOS: BO records
 * @KFD_CRIU_SEC_QUEUES: QUEUE records
 * @KFD_CRIU_SEC_QUEUE_STATES: QUEUE_STATE records
 * @KFD_CRIU_SEC_SVM: SVM_RANGE records
 * @KFD_CRIU_SEC_DATA: BO_DATA records
 * @KFD_CRIU_SEC_END: END was read
 */
enum kfd_criu_section {
	KFD_CRIU_SEC_GPUS,
	KFD_CRIU_SEC_PROCESS,
	KFD_CRIU_SEC_BOS,
	KFD_CRIU_SEC_QUEUES,
	KFD_CRIU_SEC_QUEUE_STATES,
	KFD_CRIU_SEC_SVM,
	KFD_CRIU_SEC_DATA,
	KFD_CRIU_SEC_END,
};

/**
 * kfd_criu_next_section - the record order of a restore stream
 * @cur: the section the stream is in
 * @type: type of the record just read
 * @next: receives the section of that record
 *
 * Sections never go back, so each kind of record comes in one run, in
 * stream order. Pure.
 *
 * Return: 0, or -EINVAL for a record that has no place after COMPAT (a
 * second COMPAT) or comes after a later section.
 */
static int kfd_criu_next_section(enum kfd_criu_section cur, u32 type,
				 enum kfd_criu_section *next)
{
	enum kfd_criu_section sec;

	switch (type) {
	case KFD_CRIU_REC_GPU:
	case KFD_CRIU_REC_TRAP_HANDLER:
		sec = KFD_CRIU_SEC_GPUS;
		break;
	case KFD_CRIU_REC_PROCESS:
	case KFD_CRIU_REC_COUNTS:
	case KFD_CRIU_REC_SIGNAL_PAGE:
	case KFD_CRIU_REC_EVENT:
		sec = KFD_CRIU_SEC_PROCESS;
		break;
	case KFD_CRIU_REC_BO:
		sec = KFD_CRIU_SEC_BOS;
		break;
	case KFD_CRIU_REC_QUEUE:
		sec = KFD_CRIU_SEC_QUEUES;
		break;
	case KFD_CRIU_REC_QUEUE_STATE:
		sec = KFD_CRIU_SEC_QUEUE_STATES;
		break;
	case KFD_CRIU_REC_SVM_RANGE:
		sec = KFD_CRIU_SEC_SVM;
		break;
	case KFD_CRIU_REC_BO_DATA:
		sec = KFD_CRIU_SEC_DATA;
		break;
	case KFD_CRIU_REC_END:
		sec = KFD_CRIU_SEC_END;
		break;
	default:
		return -EINVAL;
	}
	if (sec < cur)
		return -EINVAL;
	*next = sec;
	return 0;
}

/*
 * Keeps one metadata record. A section ends only when its records are
 * complete: all GPUs before PROCESS, PROCESS before the BOs.
 */
static int kfd_criu_collect_record(struct kfd_criu_proc_image *img,
				   enum kfd_criu_section *sec,
				   const struct kfd_criu_record *rec,
				   const void *payload)
{
	u32 num_bos, num_ranges;
	int ret;

	ret = kfd_criu_next_section(*sec, rec->type, sec);
	if (ret)
		return ret;
	if (*sec > KFD_CRIU_SEC_GPUS && img->gpus.gpus_read != img->gpus.num_gpus)
		return -EINVAL;
	if (*sec > KFD_CRIU_SEC_PROCESS && !img->events.have_process)
		return -EINVAL;

	switch (*sec) {
	case KFD_CRIU_SEC_GPUS:
		if (rec->type == KFD_CRIU_REC_GPU)
			return img->traps.num_traps ? -EINVAL :
			       kfd_criu_gpus_collect(&img->gpus, rec, payload);
		/* Trap handlers follow all GPU records */
		if (img->gpus.gpus_read != img->gpus.num_gpus)
			return -EINVAL;
		return kfd_criu_traps_collect(&img->traps, rec, payload,
					      img->gpus.num_gpus);
	case KFD_CRIU_SEC_PROCESS:
		ret = kfd_criu_events_collect(&img->events, rec, payload,
					      img->gpus.num_gpus);
		/* COUNTS sizes the SVM section */
		num_ranges = le32_to_cpu(img->events.counts.num_svm_ranges);
		if (!ret && rec->type == KFD_CRIU_REC_COUNTS)
			ret = kfd_criu_svm_prepare(&img->svm, num_ranges);
		if (ret || rec->type != KFD_CRIU_REC_PROCESS)
			return ret;
		num_bos = le32_to_cpu(img->events.process.num_bos);
		return kfd_criu_bos_prepare(&img->bos, num_bos);
	case KFD_CRIU_SEC_BOS:
		return kfd_criu_bos_collect(&img->bos, rec, payload);
	case KFD_CRIU_SEC_QUEUES:
	case KFD_CRIU_SEC_QUEUE_STATES:
		return kfd_criu_queues_collect(&img->queues,
					       le32_to_cpu(img->events.counts.num_queues),
					       &img->gpus, rec, payload);
	case KFD_CRIU_SEC_SVM:
		return kfd_criu_svm_collect(&img->svm, rec, payload);
	default:
		/* The metadata ends at the first BO_DATA or at END */
		return 0;
	}
}

/**
 * struct kfd_criu_placement - where RESTORE places image GPUs as it reads
 * @p: the process being restored
 * @st: receives the placement, with the caller's GPU map
 */
struct kfd_criu_placement {
	struct kfd_process *p;
	struct kfd_criu_gpus_restore *st;
};

/*
 * Whether a record of @type comes after a complete GPU section: the time
 * to place the image GPUs, before anything sized by them is read.
 */
static bool kfd_criu_gpus_read(const struct kfd_criu_proc_image *img, u32 type)
{
	enum kfd_criu_section sec;

	return !kfd_criu_next_section(KFD_CRIU_SEC_GPUS, type, &sec) &&
	       sec > KFD_CRIU_SEC_GPUS &&
	       img->gpus.gpus_read == img->gpus.num_gpus;
}

static int kfd_criu_place_gpus(const struct kfd_criu_placement *place,
			       const struct kfd_criu_gpus_image *gpus)
{
	int ret;

	mutex_lock(&place->p->mutex);
	ret = kfd_criu_gpus_map(place->p, gpus, place->st);
	mutex_unlock(&place->p->mutex);
	return ret;
}

/**
 * kfd_criu_read_metadata - read an image up to its first BO_DATA or END
 * @r: reader, initialized on the stream
 * @img: receives the metadata records
 * @buf: %KFD_CRIU_READ_BUF_SIZE bytes; holds the last record's payload
 * @rec: receives the last record read, BO_DATA or END
 * @sec: receives the section of @rec
 * @version: receives the format version of the image
 * @place: where to place the image GPUs once their records are read, or
 *	NULL not to
 *
 * Only record bounds and order are checked here; kfd_criu_validate_image()
 * checks the contents as a set. The image GPUs are placed on local GPUs
 * as soon as their records are in and valid: a GPU this machine lacks
 * fails the read then (an invalid GPU record first, with -EINVAL, as
 * anywhere), and every later record that a GPU record sizes (a queue's
 * states: XCCs and control stack) is bounded by a local GPU, so an image
 * cannot make RESTORE hold more than a process could have had here.
 *
 * Return: 0 or the errno of the reader, of a collector or of the
 * placement.
 */
static int kfd_criu_read_metadata(struct kfd_criu_image_reader *r,
				  struct kfd_criu_proc_image *img, void *buf,
				  struct kfd_criu_record *rec,
				  enum kfd_criu_section *sec, u32 *version,
				  const struct kfd_criu_placement *place)
{
	struct kfd_criu_image_header hdr;
	bool placed = !place;
	int ret;

	ret = kfd_criu_image_read_header(r, &hdr);
	if (ret)
		return ret;
	*version = le32_to_cpu(hdr.version);

	ret = kfd_criu_read_compat(r, buf, img);
	*sec = KFD_CRIU_SEC_GPUS;
	while (!ret) {
		ret = kfd_criu_image_read_record(r, rec, buf,
						 KFD_CRIU_READ_BUF_SIZE);
		if (!ret && !placed && kfd_criu_gpus_read(img, rec->type)) {
			placed = true;
			/* Malformed before missing: -EINVAL on any machine */
			ret = kfd_criu_gpus_validate(&img->gpus) ?:
			      kfd_criu_place_gpus(place, &img->gpus);
		}
		if (!ret)
			ret = kfd_criu_collect_record(img, sec, rec, buf);
		if (!ret && *sec >= KFD_CRIU_SEC_DATA)
			break;
	}
	return ret;
}

/* Whether one of the image's BOs is the event page */
static bool kfd_criu_has_event_page_bo(const struct kfd_criu_proc_image *img)
{
	u32 i;

	for (i = 0; i < img->bos.num_bos; i++)
		if (le32_to_cpu(img->bos.bos[i].flags) & KFD_CRIU_BO_EVENT_PAGE)
			return true;
	return false;
}

/*
 * The slots of an event page BO, which kfd_criu_validate_bo() makes
 * %KFD_CRIU_SIGNAL_PAGE_MAX bytes, are in a SIGNAL_PAGE record as large.
 */
static int kfd_criu_check_event_page(const struct kfd_criu_proc_image *img)
{
	if (kfd_criu_has_event_page_bo(img) &&
	    img->events.signal_page_size != KFD_CRIU_SIGNAL_PAGE_MAX)
		return -EINVAL;
	return 0;
}

/*
 * Slots without an event page BO were in a kernel signal page, which this
 * kernel does not have: a well-formed image it cannot restore. Checked
 * after everything else, so that a malformed image is -EINVAL here too.
 */
static int kfd_criu_check_signal_page(const struct kfd_criu_proc_image *img)
{
	if (!img->events.signal_page_size || kfd_criu_has_event_page_bo(img))
		return 0;
	pr_warn_ratelimited("CRIU image: signal slots in a kernel signal page, which this kernel does not have\n");
	return -EOPNOTSUPP;
}

/*
 * Checks the metadata as a set. An image that ends before the contents of
 * its BOs is refused here, before anything is touched.
 */
static int kfd_criu_validate_image(struct kfd_criu_proc_image *img,
				   enum kfd_criu_section sec)
{
	int ret;

	ret = kfd_criu_events_validate(&img->events);
	if (!ret)
		ret = kfd_criu_gpus_validate(&img->gpus);
	if (!ret)
		ret = kfd_criu_check_traps(img->traps.traps,
					   img->traps.num_traps,
					   img->gpus.num_gpus);
	if (!ret)
		ret = kfd_criu_bos_validate(&img->bos, img->gpus.num_gpus);
	if (!ret)
		ret = kfd_criu_check_event_page(img);
	if (!ret)
		ret = kfd_criu_queues_validate(&img->queues,
					       le32_to_cpu(img->events.counts.num_queues),
					       &img->gpus);
	if (!ret)
		ret = kfd_criu_svm_validate(&img->svm, &img->gpus, &img->bos);
	if (ret)
		return ret;
	if (sec == KFD_CRIU_SEC_END &&
	    img->bos.cursor.bo_index != img->bos.num_bos)
		return -EINVAL;
	return kfd_criu_check_signal_page(img);
}

static void kfd_criu_info_locked(struct kfd_process *p,
				 struct kfd_ioctl_criu_args *args)
{
	struct kfd_criu_counts_rec counts = {};
	u32 num_events, signal_page_size, num_bos, num_queues;
	u64 bo_bytes, queue_bytes;

	kfd_criu_bos_count(p, &num_bos, &bo_bytes);
	kfd_criu_events_count(p, &num_events, &signal_page_size);
	kfd_criu_queues_count(p, &num_queues, &queue_bytes);
	counts.num_queues = cpu_to_le32(num_queues);
	counts.num_svm_ranges = cpu_to_le32(kfd_criu_svm_count(p));
	args->image_size = kfd_criu_image_size_estimate(p->n_pdds,
							kfd_criu_traps_count(p),
							num_events,
							signal_page_size,
							bo_bytes, &counts,
							queue_bytes);
}

static int kfd_criu_op_unpause(struct kfd_process *p)
{
	enum kfd_criu_state next;
	int ret;

	mutex_lock(&p->mutex);
	ret = kfd_criu_next_state(p->criu_state, KFD_CRIU_OP_UNPAUSE, &next);
	if (ret)
		goto out_unlock;
	/* A CHECKPOINT still copies the paused state */
	if (p->criu_dumps) {
		ret = -EBUSY;
		goto out_unlock;
	}
	/*
	 * kfd_process_restore_queues() tries every GPU and reports the first
	 * error. A retry would restore the GPUs that succeeded a second time,
	 * so the process leaves the paused state either way.
	 */
	if (p->n_pdds)
		ret = kfd_process_restore_queues(p);
	if (ret)
		pr_err_ratelimited("CRIU image: pid %d: restoring queues failed: %d\n",
				   p->lead_thread->pid, ret);
	p->criu_state = next;
out_unlock:
	mutex_unlock(&p->mutex);
	return ret;
}

/*
 * Reports each GPU's two gpu_ids to a caller that passed device buckets
 * for them. Before the pause: too little room, or buckets that cannot be
 * written, leave the process as it was. The copy is made under p->mutex,
 * as the legacy CHECKPOINT makes it, so that it matches the pause.
 */
static int kfd_criu_put_pairing(struct kfd_process *p,
				struct kfd_ioctl_criu_args *args,
				struct kfd_criu_device_bucket *buckets)
{
	int ret;

	lockdep_assert_held(&p->mutex);

	if (!buckets)
		return 0;
	ret = kfd_criu_gpus_pairing(p, buckets, args->num_devices);
	args->num_devices = p->n_pdds;
	if (ret < 0)
		return ret;
	if (copy_to_user(u64_to_user_ptr(args->devices), buckets,
			 array_size(ret, sizeof(*buckets))))
		return -EFAULT;
	return 0;
}

static int kfd_criu_op_process_info(struct kfd_process *p,
				    struct kfd_ioctl_criu_args *args)
{
	struct kfd_criu_device_bucket *buckets = NULL;
	enum kfd_criu_state next;
	int ret;

	if (args->num_devices) {
		buckets = kcalloc(args->num_devices, sizeof(*buckets),
				  GFP_KERNEL_ACCOUNT);
		if (!buckets)
			return -ENOMEM;
	}

	mutex_lock(&p->mutex);
	ret = kfd_criu_next_state(p->criu_state, KFD_CRIU_OP_PROCESS_INFO,
				  &next);
	if (!ret)
		ret = kfd_criu_put_pairing(p, args, buckets);
	if (ret)
		goto out_unlock;

	/* A second PROCESS_INFO must not evict again: UNPAUSE restores once */
	if (p->criu_state != next && p->n_pdds) {
		ret = kfd_process_evict_queues(p, KFD_QUEUE_EVICTION_CRIU_CHECKPOINT);
		if (ret)
			goto out_unlock;
	}
	p->criu_state = next;

	kfd_criu_info_locked(p, args);

	args->format_version = KFD_CRIU_IMAGE_VERSION;
	args->pid = task_tgid_vnr(p->lead_thread);

out_unlock:
	mutex_unlock(&p->mutex);
	kfree(buckets);
	return ret;
}

static int kfd_criu_snapshot_locked(struct kfd_process *p,
				    struct kfd_criu_proc_image *img)
{
	int ret;

	ret = kfd_criu_events_snapshot(p, &img->events);
	if (!ret)
		ret = kfd_criu_gpus_snapshot(p, &img->gpus);
	if (!ret)
		ret = kfd_criu_traps_snapshot(p, &img->traps);
	if (!ret)
		ret = kfd_criu_bos_snapshot(p, &img->bos);
	if (!ret)
		ret = kfd_criu_queues_snapshot(p, &img->gpus, &img->queues);
	if (!ret)
		ret = kfd_criu_svm_snapshot(p, &img->gpus, &img->bos,
					    &img->svm);
	if (ret) {
		kfd_criu_proc_image_free(img);
		return ret;
	}
	img->events.process.num_bos = cpu_to_le32(img->bos.num_bos);
	img->events.counts.num_queues = cpu_to_le32(img->queues.num_queues);
	img->events.counts.num_svm_ranges = cpu_to_le32(img->svm.num_ranges);
	return 0;
}

/*
 * The snapshot is streamed with no lock held, so nothing keeps the process
 * paused but the count of streaming CHECKPOINTs: UNPAUSE refuses to run
 * while it is not zero. The image file is checked before the snapshot,
 * so that a file the stream cannot use costs no snapshot and no window in
 * which UNPAUSE is refused; its error comes after those of the process's
 * state checks and before those of the snapshot.
 */
static int kfd_criu_op_checkpoint(struct kfd_process *p,
				  struct kfd_ioctl_criu_args *args)
{
	struct kfd_criu_proc_image *img;
	struct kfd_criu_file_io fio;
	enum kfd_criu_state next;
	int ret, file_ret;

	img = kzalloc_obj(*img, GFP_KERNEL_ACCOUNT);
	if (!img)
		return -ENOMEM;
	file_ret = kfd_criu_file_get(&fio, args->image_fd, FMODE_WRITE,
				     args->image_offset);

	mutex_lock(&p->mutex);
	ret = kfd_criu_next_state(p->criu_state, KFD_CRIU_OP_CHECKPOINT, &next);
	if (!ret)
		ret = kfd_criu_dump_supported_locked(p);
	if (!ret)
		ret = file_ret;
	if (!ret)
		ret = kfd_criu_snapshot_locked(p, img);
	if (!ret)
		p->criu_dumps++;
	mutex_unlock(&p->mutex);
	if (ret)
		goto out_put_file;

	ret = kfd_criu_write_image(&fio.io, p, img);
	args->image_size = fio.bytes;
	args->format_version = KFD_CRIU_IMAGE_VERSION;

	mutex_lock(&p->mutex);
	p->criu_dumps--;
	mutex_unlock(&p->mutex);
out_put_file:
	if (!file_ret)
		kfd_criu_file_put(&fio);
	kfd_criu_proc_image_free(img);
	kfree(img);
	return ret;
}

/**
 * struct kfd_criu_restore - one RESTORE in progress
 * @fio: the image file
 * @r: the reader on @fio
 * @img: the image's metadata
 * @gst: where the image GPUs go, and what their restore changed
 * @rec: the record after the metadata: the first BO_DATA, or END
 * @sec: the section of @rec
 * @buf: payload of @rec, %KFD_CRIU_READ_BUF_SIZE bytes
 * @version: format version of the image
 * @file_open: @fio holds the image file
 * @old_xnack: the XNACK mode the process had before the restore
 */
struct kfd_criu_restore {
	struct kfd_criu_file_io fio;
	struct kfd_criu_image_reader r;
	struct kfd_criu_proc_image img;
	struct kfd_criu_gpus_restore gst;
	struct kfd_criu_record rec;
	enum kfd_criu_section sec;
	void *buf;
	u32 version;
	bool file_open;
	bool old_xnack;
};

static void kfd_criu_restore_free(struct kfd_criu_restore *ctx,
				  struct kfd_ioctl_criu_args *args)
{
	if (ctx->file_open) {
		args->image_size = ctx->fio.bytes;
		kfd_criu_file_put(&ctx->fio);
	}
	kfd_criu_proc_image_free(&ctx->img);
	kfree(ctx->gst.map);
	kvfree(ctx->buf);
	kvfree(ctx);
}

static int kfd_criu_copy_gpu_map(const struct kfd_ioctl_criu_args *args,
				 struct kfd_criu_gpus_restore *gst)
{
	struct kfd_criu_gpu_map *map;

	if (!args->num_gpu_map)
		return 0;
	map = memdup_array_user(u64_to_user_ptr(args->gpu_map_ptr),
				args->num_gpu_map, sizeof(*map));
	if (IS_ERR(map))
		return PTR_ERR(map);
	gst->map = map;
	gst->num_map = args->num_gpu_map;
	return kfd_criu_validate_gpu_map(map, args->num_gpu_map);
}

/* A first BO_DATA record that is out of place fails before anything is done */
static int kfd_criu_check_first_data(const struct kfd_criu_bos_image *bos,
				     const void *payload, u32 len)
{
	struct kfd_criu_bo_cursor cur = bos->cursor;

	if (len < sizeof(struct kfd_criu_bo_data_hdr))
		return -EINVAL;
	return kfd_criu_bo_data_check(&cur, bos->bos, bos->num_bos, payload,
				      len);
}

/* Reads and validates the metadata; the file stays open for the contents. */
static int kfd_criu_load_metadata(struct kfd_process *p,
				  struct kfd_ioctl_criu_args *args,
				  struct kfd_criu_restore *ctx)
{
	struct kfd_criu_placement place = { .p = p, .st = &ctx->gst };
	int ret;

	ctx->buf = kvmalloc(KFD_CRIU_READ_BUF_SIZE, GFP_KERNEL_ACCOUNT);
	if (!ctx->buf)
		return -ENOMEM;
	ret = kfd_criu_file_get(&ctx->fio, args->image_fd, FMODE_READ,
				args->image_offset);
	if (ret)
		return ret;
	ctx->file_open = true;

	kfd_criu_image_reader_init(&ctx->r, &ctx->fio.io, kfd_criu_v1_records,
				   kfd_criu_v1_num_records);
	ret = kfd_criu_read_metadata(&ctx->r, &ctx->img, ctx->buf, &ctx->rec,
				     &ctx->sec, &ctx->version, &place);
	if (!ret)
		ret = kfd_criu_validate_image(&ctx->img, ctx->sec);
	if (!ret && ctx->sec == KFD_CRIU_SEC_DATA)
		ret = kfd_criu_check_first_data(&ctx->img.bos, ctx->buf,
						ctx->rec.length);
	return ret;
}

/*
 * Refuses, before anything is created, an offset map that is too small,
 * with the errno that means only this: nothing on the restore path below
 * returns -E2BIG, whereas queue creation has its own -ENOSPC (no queue
 * slot, or no VMID left on a GPU without HWS), which a caller must not
 * take for a short map and answer with a second RESTORE.
 */
static int kfd_criu_check_offset_map(struct kfd_process *p,
				     struct kfd_criu_restore *ctx,
				     struct kfd_ioctl_criu_args *args)
{
	u32 local_ids[KFD_CRIU_MAX_GPUS];
	u32 i, needed;

	for (i = 0; i < ctx->img.gpus.num_gpus; i++)
		local_ids[i] = kfd_criu_gpus_pdd(p, &ctx->gst, i)->dev->id;
	needed = kfd_criu_bos_offsets_needed(&ctx->img.bos, local_ids);
	if (needed <= args->num_offset_map)
		return 0;
	args->num_offset_map = needed;
	return -E2BIG;
}

static int kfd_criu_report_offsets(struct kfd_process *p,
				   struct kfd_criu_restore *ctx,
				   struct kfd_ioctl_criu_args *args)
{
	struct kfd_criu_offset_map *out;
	u32 n;
	int ret = 0;

	n = kfd_criu_bos_offsets(p, &ctx->img.bos, &ctx->gst, NULL, 0);
	if (WARN_ON(n > args->num_offset_map))
		return -EIO;
	if (n) {
		out = kvcalloc(n, sizeof(*out), GFP_KERNEL_ACCOUNT);
		if (!out)
			return -ENOMEM;
		kfd_criu_bos_offsets(p, &ctx->img.bos, &ctx->gst, out, n);
		if (copy_to_user(u64_to_user_ptr(args->offset_map_ptr), out,
				 array_size(n, sizeof(*out))))
			ret = -EFAULT;
		kvfree(out);
	}
	if (!ret)
		args->num_offset_map = n;
	return ret;
}

/* Writes the BO_DATA records into the BOs, up to and including END. */
static int kfd_criu_stream_contents(struct kfd_process *p,
				    struct kfd_criu_restore *ctx)
{
	struct kfd_criu_bos_image *bos = &ctx->img.bos;
	int ret;

	while (ctx->sec == KFD_CRIU_SEC_DATA) {
		ret = kfd_criu_bos_write_contents(p, bos, ctx->buf,
						  ctx->rec.length);
		if (!ret)
			ret = kfd_criu_image_read_record(&ctx->r, &ctx->rec,
							 ctx->buf,
							 KFD_CRIU_READ_BUF_SIZE);
		if (!ret)
			ret = kfd_criu_next_section(ctx->sec, ctx->rec.type,
						    &ctx->sec);
		if (ret)
			return ret;
	}
	return kfd_criu_bos_finish_contents(p, bos);
}

/* Everything that may fail and has an undo: GPUs, BOs, queues, contents. */
static int kfd_criu_restore_gpu_state(struct kfd_process *p,
				      struct kfd_criu_restore *ctx,
				      struct kfd_ioctl_criu_args *args)
{
	struct kfd_criu_proc_image *img = &ctx->img;
	int ret;

	ret = kfd_criu_gpus_restore(p, &img->gpus,
				    kfd_criu_bos_needed_gpus(&img->bos) |
				    kfd_criu_traps_needed_gpus(&img->traps) |
				    kfd_criu_queues_needed_gpus(&img->queues) |
				    kfd_criu_svm_needed_gpus(&img->svm,
							     &img->gpus),
				    &ctx->gst);
	if (ret)
		return ret;
	/* Only translated here; RESUME applies the ranges */
	ret = kfd_criu_svm_restore(p, &img->svm, &img->gpus, &ctx->gst);
	if (ret)
		goto out_gpus;
	kfd_criu_traps_restore(p, &img->traps, &ctx->gst);
	ret = kfd_criu_runtime_restore(p, &img->events.process,
				       &ctx->old_xnack);
	if (ret)
		goto out_traps;
	ret = kfd_criu_bos_restore(p, &img->bos, &ctx->gst);
	if (ret)
		goto out_runtime;
	ret = kfd_criu_queues_restore(p, &img->queues, img->svm.ranges,
				      img->svm.num_ranges, &ctx->gst);
	if (ret)
		goto out_bos;
	ret = kfd_criu_stream_contents(p, ctx);
	if (!ret)
		ret = kfd_criu_report_offsets(p, ctx, args);
	if (ret)
		goto out_queues;
	return 0;

out_queues:
	kfd_criu_queues_unwind(p, &img->queues);
out_bos:
	kfd_criu_bos_unwind(p, &img->bos, &ctx->gst);
out_runtime:
	kfd_criu_runtime_unwind(p, &img->events.process, ctx->old_xnack);
out_traps:
	kfd_criu_traps_unwind(p, &img->traps, &ctx->gst);
out_gpus:
	kfd_criu_gpus_unwind(p, &ctx->gst);
	return ret;
}

static void kfd_criu_undo_gpu_state(struct kfd_process *p,
				    struct kfd_criu_restore *ctx)
{
	kfd_criu_queues_unwind(p, &ctx->img.queues);
	kfd_criu_bos_unwind(p, &ctx->img.bos, &ctx->gst);
	kfd_criu_runtime_unwind(p, &ctx->img.events.process,
				ctx->old_xnack);
	kfd_criu_traps_unwind(p, &ctx->img.traps, &ctx->gst);
	kfd_criu_gpus_unwind(p, &ctx->gst);
}

/*
 * A GPU VM takes its eviction fence and owner from the caller's address
 * space and task, and a userptr BO registers with the caller's address
 * space: only the process itself can restore GPU state into itself.
 */
static int kfd_criu_check_restorer(struct mm_struct *mm,
				   const struct kfd_criu_proc_image *img)
{
	if (!img->gpus.num_gpus || current->mm == mm)
		return 0;
	pr_debug("CRIU image: an image with GPUs must be restored by the process itself\n");
	return -EINVAL;
}

/* The checks that need the process, before anything is touched. */
static int kfd_criu_restore_check_locked(struct kfd_process *p,
					 struct mm_struct *mm,
					 struct kfd_criu_restore *ctx,
					 struct kfd_ioctl_criu_args *args,
					 enum kfd_criu_state *next)
{
	int ret;

	ret = kfd_criu_restore_allowed_locked(p, next);
	/* Again: the restore acts on a placement made under its own lock */
	if (!ret)
		ret = kfd_criu_gpus_map(p, &ctx->img.gpus, &ctx->gst);
	if (!ret)
		ret = kfd_criu_events_check(p, &ctx->img.events);
	if (!ret)
		ret = kfd_criu_check_restorer(mm, &ctx->img);
	if (!ret)
		ret = kfd_criu_check_offset_map(p, ctx, args);
	if (!ret)
		ret = kfd_criu_bos_check_target(p, &ctx->img.bos, &ctx->gst);
	return ret;
}

static int kfd_criu_restore_locked(struct file *filep, struct kfd_process *p,
				   struct mm_struct *mm,
				   struct kfd_criu_restore *ctx,
				   struct kfd_ioctl_criu_args *args)
{
	enum kfd_criu_state next;
	int ret;

	lockdep_assert_held(&p->mutex);

	ret = kfd_criu_restore_check_locked(p, mm, ctx, args, &next);
	if (ret)
		return ret;

	/* Nothing the process creates runs before RESUME */
	if (p->n_pdds) {
		ret = kfd_process_evict_queues(p, KFD_QUEUE_EVICTION_CRIU_RESTORE);
		if (ret)
			return ret;
	}
	ret = kfd_criu_restore_gpu_state(p, ctx, args);
	if (ret)
		goto out_restore_queues;
	ret = kfd_criu_events_restore(filep, p, &ctx->img.events,
				      kfd_criu_bos_event_page(p, &ctx->img.bos,
							      &ctx->gst));
	if (ret) {
		kfd_criu_undo_gpu_state(p, ctx);
		goto out_restore_queues;
	}
	p->criu_mmu_blocked = ctx->gst.mmu_blocked;
	kfd_criu_svm_keep(p, &ctx->img.svm);
	p->criu_state = next;
	return 0;

out_restore_queues:
	if (p->n_pdds && kfd_process_restore_queues(p))
		pr_err_ratelimited("CRIU image: failed to undo the restore eviction\n");
	return ret;
}

/* Refuses a busy target before reading a whole image for nothing. */
static int kfd_criu_restore_allowed(struct kfd_process *p)
{
	enum kfd_criu_state next;
	int ret;

	mutex_lock(&p->mutex);
	ret = kfd_criu_restore_allowed_locked(p, &next);
	mutex_unlock(&p->mutex);
	return ret;
}

/**
 * kfd_criu_restore_mm - the address space a RESTORE fills, referenced
 * @p: the process that owns the /dev/kfd file
 *
 * The MMU notifier release clears p->mm while the address space is torn
 * down, and the process outlives it: its file may be held by a ptrace
 * parent that got it over SCM_RIGHTS and restores through it after the
 * owner exited. So p->mm is read once, and only taken through a task that
 * still uses it, which keeps it from being freed meanwhile: the caller,
 * when it is a thread of @p (the usual case, and the only one for an
 * image with GPUs), or else the leader of @p. A ptrace parent restoring
 * into a process whose leader exited gets -ESRCH, like one whose address
 * space is gone.
 *
 * Return: the address space of @p with a reference the caller drops with
 * mmput() (not under p->mutex), or NULL when it is gone.
 */
static struct mm_struct *kfd_criu_restore_mm(struct kfd_process *p)
{
	struct mm_struct *mm = READ_ONCE(p->mm);
	struct mm_struct *task_mm;

	if (!mm)
		return NULL;
	if (current->mm == mm) {
		mmget(mm);
		return mm;
	}
	task_mm = get_task_mm(p->lead_thread);
	if (task_mm && task_mm != mm) {
		mmput(task_mm);
		task_mm = NULL;
	}
	return task_mm;
}

static int kfd_criu_op_restore(struct file *filep, struct kfd_process *p,
			       struct kfd_ioctl_criu_args *args)
{
	struct kfd_criu_restore *ctx;
	struct mm_struct *mm;
	int ret;

	/* The target's state and address space, before any of the image */
	ret = kfd_criu_restore_allowed(p);
	if (ret)
		return ret;
	mm = kfd_criu_restore_mm(p);
	if (!mm)
		return -ESRCH;
	ctx = kvzalloc_obj(*ctx, GFP_KERNEL_ACCOUNT);
	if (!ctx) {
		ret = -ENOMEM;
		goto out_mmput;
	}
	ret = kfd_criu_copy_gpu_map(args, &ctx->gst);
	if (!ret)
		ret = kfd_criu_load_metadata(p, args, ctx);
	if (ret)
		goto out_free_ctx;
	args->format_version = ctx->version;

	mutex_lock(&p->mutex);
	ret = kfd_criu_restore_locked(filep, p, mm, ctx, args);
	mutex_unlock(&p->mutex);

out_free_ctx:
	kfd_criu_restore_free(ctx, args);
out_mmput:
	/* It may tear down the address space: not under p->mutex */
	mmput(mm);
	return ret;
}

/**
 * kfd_criu_may_resume - whether the caller may start the process @pid names
 * @pid: the target, as the caller named it
 *
 * The dispatcher checked the capability, but RESUME names its target by
 * pid and so needs a relation to it as well. Either the caller is the
 * target process itself, or it is the target's tracer: CRIU restores
 * every task under ptrace and stays attached until after RESUME, and the
 * attach already passed ptrace_may_access() and the LSMs for the tracer,
 * as the dispatcher relies on for a /dev/kfd file of another process.
 * Nothing beyond what drivers can reach is needed.
 *
 * Return: 0, -ESRCH if @pid has no task, or -EPERM.
 */
static int kfd_criu_may_resume(struct pid *pid)
{
	struct task_struct *task;
	bool allowed;

	task = get_pid_task(pid, PIDTYPE_PID);
	if (!task)
		return -ESRCH;
	rcu_read_lock();
	allowed = same_thread_group(task, current) ||
		  ptrace_parent(task) == current;
	rcu_read_unlock();
	put_task_struct(task);
	return allowed ? 0 : -EPERM;
}

/*
 * The SVM ranges the restore kept go in first, now that CRIU restored the
 * memory under them, and the queues whose CWSR areas they hold take them;
 * a failure leaves the process restored, for a retry.
 * With restored BOs, the userptr worker validates the userptrs against the
 * memory CRIU restored meanwhile, and then restores the queues the restore
 * evicted, as it does for the legacy RESUME.
 */
static int kfd_criu_resume_locked(struct kfd_process *p, struct mm_struct *mm)
{
	int ret;

	lockdep_assert_held(&p->mutex);

	ret = kfd_criu_svm_resume(p, mm);
	if (!ret)
		ret = kfd_criu_queues_resume(p);
	if (ret)
		return ret;

	if (p->criu_mmu_blocked) {
		ret = amdgpu_amdkfd_criu_resume(p->kgd_process_info);
		if (!ret)
			p->criu_mmu_blocked = false;
		return ret;
	}
	return p->n_pdds ? kfd_process_restore_queues(p) : 0;
}

/*
 * The target's address space, for its SVM ranges, or NULL when it is gone.
 * Through the task: the kfd_process reference does not pin p->mm.
 */
static struct mm_struct *kfd_criu_resume_mm(struct pid *pid,
					    struct kfd_process *p)
{
	struct task_struct *task;
	struct mm_struct *mm;

	task = get_pid_task(pid, PIDTYPE_PID);
	if (!task)
		return NULL;
	mm = get_task_mm(task);
	put_task_struct(task);
	if (mm && mm != READ_ONCE(p->mm)) {
		mmput(mm);
		mm = NULL;
	}
	return mm;
}

static int kfd_criu_op_resume(struct kfd_ioctl_criu_args *args)
{
	struct kfd_process *target;
	enum kfd_criu_state next;
	struct mm_struct *mm;
	struct pid *pid;
	int ret;

	pid = find_get_pid(args->pid);
	if (!pid)
		return -ESRCH;
	ret = kfd_criu_may_resume(pid);
	if (ret)
		goto out_put_pid;
	target = kfd_lookup_process_by_pid(pid);
	if (!target) {
		ret = -ESRCH;
		goto out_put_pid;
	}

	/* As for RESTORE: no mmput() under p->mutex */
	mm = kfd_criu_resume_mm(pid, target);
	mutex_lock(&target->mutex);
	ret = kfd_criu_next_state(target->criu_state, KFD_CRIU_OP_RESUME, &next);
	if (!ret)
		ret = kfd_criu_resume_locked(target, mm);
	if (!ret)
		target->criu_state = next;
	mutex_unlock(&target->mutex);
	if (mm)
		mmput(mm);
	kfd_unref_process(target);

out_put_pid:
	put_pid(pid);
	return ret;
}

/**
 * kfd_criu_image_ioctl - AMDKFD_IOC_CRIU_OP in image mode
 * @filep: the /dev/kfd file the ioctl came through
 * @p: the process that owns @filep
 * @args: the arguments; kfd_criu_image_requested() was true
 *
 * Return: 0 or a negative errno, as &struct kfd_ioctl_criu_args documents.
 */
int kfd_criu_image_ioctl(struct file *filep, struct kfd_process *p,
			 struct kfd_ioctl_criu_args *args)
{
	u32 op = args->op - KFD_CRIU_OP_IMAGE_PROCESS_INFO;
	int ret;

	ret = kfd_criu_check_args(args, op);
	if (ret)
		return ret;

	switch (op) {
	case KFD_CRIU_OP_PROCESS_INFO:
		ret = kfd_criu_op_process_info(p, args);
		break;
	case KFD_CRIU_OP_CHECKPOINT:
		ret = kfd_criu_op_checkpoint(p, args);
		/* A restart would write the stream a second time */
		if (ret < 0)
			ret = kfd_criu_io_errno(ret, ret);
		break;
	case KFD_CRIU_OP_UNPAUSE:
		ret = kfd_criu_op_unpause(p);
		break;
	case KFD_CRIU_OP_RESTORE:
		ret = kfd_criu_op_restore(filep, p, args);
		/* A restart would read the rest of the stream as an image */
		if (ret < 0)
			ret = kfd_criu_io_errno(ret, ret);
		break;
	case KFD_CRIU_OP_RESUME:
		ret = kfd_criu_op_resume(args);
		break;
	default:
		ret = -EINVAL;
		break;
	}
	pr_debug("CRIU image: op %u returns %d\n", args->op, ret);
	return ret;
}

#if IS_BUILTIN(CONFIG_HSA_AMD_CRIU_KUNIT_TEST)
#include "tests/kfd_criu_test.c"
#endif
