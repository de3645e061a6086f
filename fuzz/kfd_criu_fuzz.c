// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: libFuzzer target for the KFD CRIU image reader
 *
 * Each input is an image stream. The target reads it the way RESTORE does
 * in kfd_criu.c: the header, the COMPAT record first and its validator,
 * then every record into one buffer as large as the largest record the
 * reader's table allows (a full BO_DATA chunk, so AddressSanitizer sees
 * any overrun), each collected under the order and count rules of the
 * format (kfd_criu_image.h: COMPAT, GPU x num_gpus, [TRAP_HANDLER],
 * PROCESS, [COUNTS], SIGNAL_PAGE, EVENT x num_events, BO x num_bos,
 * QUEUE x num_queues,
 * QUEUE_STATE per queue and XCC, SVM_RANGE x num_svm_ranges, BO_DATA...,
 * END); then the set checks RESTORE runs: the process record, the runtime
 * state, unique ascending event ids, each event and its signal slot, each
 * GPU, the BO set (kfd_criu_check_bos()), the counts, the queue set
 * (kfd_criu_check_queues()), each queue state against the cursor of
 * kfd_criu_queue_state_check(), the SVM ranges against each other and
 * the BOs (kfd_criu_check_svm_ranges()) and the BO contents, chunk by
 * chunk, against the cursor of kfd_criu_bo_data_check(). The kernel side
 * needs
 * kfd_priv.h, so it is modelled here; the codec and its validators are
 * the kernel's own file, unchanged.
 *
 * Beyond the sanitizers, the target aborts when
 * - the image's GPUs, mapped onto themselves with kfd_criu_map_gpus() as
 *   a restore on the same machine does, are not each placed on itself;
 * - the reader returns an errno the uAPI does not document for RESTORE;
 * - kfd_criu_image_expect_eof() disagrees with where the stream ended;
 * - an accepted image has a field outside its row of the range table
 *   (kfd_img_ranges[] of the mutator, the "Accepted values" section of
 *   the documentation), or a bound of that table differs from the
 *   constant the codec uses (checked once at start);
 * - an accepted image, written again with the codec's writer from what was
 *   read, differs from the input (when no optional record was skipped, and
 *   up to the MANDATORY flag of known records): reader and writer must
 *   agree on every byte;
 * - the rewrite into a sink that fills up part way does not fail with the
 *   sink's errno.
 *
 * The custom mutator is kfd_image_mutator.c, shared with the mutation
 * campaign that runs in the VM; the custom cross-over splices the records
 * of two inputs.
 */

#include <linux/array_size.h>
#include <linux/build_bug.h>
#include <linux/errno.h>
#include <linux/kfd_ioctl.h>
#include <linux/limits.h>
#include <linux/types.h>
#include <asm/byteorder.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kfd_criu_image.h"
#include "kfd_criu_mem_source.h"
#include "kfd_image_mutator.h"

/* The mutator repeats the layout: keep it in step with the header */
static_assert(sizeof(struct kfd_criu_image_header) == KFD_IMG_HEADER_SIZE);
static_assert(offsetof(struct kfd_criu_image_header, crc) == KFD_IMG_HEADER_CRC_OFF);
static_assert(KFD_CRIU_RECORD_OVERHEAD == KFD_IMG_REC_OVERHEAD);
static_assert(KFD_CRIU_MAX_RECORD_LEN == KFD_IMG_MAX_RECORD_LEN);
static_assert(KFD_CRIU_MAX_EVENTS == KFD_IMG_MAX_EVENTS);
static_assert(KFD_CRIU_SIGNAL_PAGE_MAX == KFD_IMG_SIGNAL_PAGE_MAX);
static_assert(sizeof(struct kfd_criu_end_rec) == KFD_IMG_END_SIZE);
static_assert(sizeof(struct kfd_criu_process_rec) == KFD_IMG_PROCESS_SIZE);
static_assert(sizeof(struct kfd_criu_event_rec) == KFD_IMG_EVENT_SIZE);
static_assert(offsetof(struct kfd_criu_process_rec, num_events) ==
	      KFD_IMG_PROC_NUM_EVENTS);
static_assert(offsetof(struct kfd_criu_event_rec, event_age) == KFD_IMG_EV_AGE);
static_assert(offsetof(struct kfd_criu_event_rec, hw_gpu_id) == KFD_IMG_EV_HW_GPU_ID);
static_assert(KFD_CRIU_REC_GPU == KFD_IMG_REC_GPU);
static_assert(KFD_CRIU_REC_BO == KFD_IMG_REC_BO);
static_assert(KFD_CRIU_REC_BO_DATA == KFD_IMG_REC_BO_DATA);
static_assert(sizeof(struct kfd_criu_gpu_rec) == KFD_IMG_GPU_SIZE);
static_assert(sizeof(struct kfd_criu_bo_rec) == KFD_IMG_BO_SIZE);
static_assert(sizeof(struct kfd_criu_bo_data_hdr) == KFD_IMG_BO_DATA_HDR_SIZE);
static_assert(offsetof(struct kfd_criu_gpu_rec, scratch_backing_va) == 52);
static_assert(offsetof(struct kfd_criu_bo_rec, flags) == 52);
static_assert(offsetof(struct kfd_criu_bo_data_hdr, offset) == 8);
static_assert(KFD_CRIU_REC_QUEUE == KFD_IMG_REC_QUEUE);
static_assert(KFD_CRIU_REC_QUEUE_STATE == KFD_IMG_REC_QUEUE_STATE);
static_assert(KFD_CRIU_REC_SVM_RANGE == KFD_IMG_REC_SVM_RANGE);
static_assert(KFD_CRIU_REC_COUNTS == KFD_IMG_REC_COUNTS);
static_assert(KFD_CRIU_REC_TRAP_HANDLER == KFD_IMG_REC_TRAP_HANDLER);
static_assert(sizeof(struct kfd_criu_queue_rec) == KFD_IMG_QUEUE_SIZE);
static_assert(sizeof(struct kfd_criu_queue_state_hdr) +
	      sizeof(struct kfd_criu_queue_dyn) == KFD_IMG_QUEUE_STATE_FIXED);
static_assert(sizeof(struct kfd_criu_svm_rec) == KFD_IMG_SVM_SIZE);
static_assert(sizeof(struct kfd_criu_counts_rec) == KFD_IMG_COUNTS_SIZE);
static_assert(offsetof(struct kfd_criu_queue_rec, reserved2) == 108);
static_assert(offsetof(struct kfd_criu_svm_rec, reserved2) == 60);
static_assert(offsetof(struct kfd_criu_queue_dyn, eop_wptr) == 28);

/* Largest stream the mutators produce; -max_len is below it */
#define FUZZ_MAX_IMAGE		(256 * 1024)
/* Largest record payload of the v1 table: a BO_DATA header and chunk */
#define FUZZ_READ_BUF		(sizeof(struct kfd_criu_bo_data_hdr) + \
				 KFD_CRIU_BO_CHUNK)
/* Largest QUEUE payload: the record and the largest CU mask */
#define FUZZ_QUEUE_MAX		(sizeof(struct kfd_criu_queue_rec) + \
				 KFD_CRIU_MAX_CU_MASK_BITS / 8)
#define FUZZ_STATE_FIXED	(sizeof(struct kfd_criu_queue_state_hdr) + \
				 sizeof(struct kfd_criu_queue_dyn))
static_assert(FUZZ_STATE_FIXED + KFD_CRIU_MAX_CTL_STACK_SIZE <= FUZZ_READ_BUF);

/**
 * struct fuzz_sink - a memory sink for the writer
 * @buf: where the stream goes
 * @cap: bytes at @buf
 * @len: bytes written
 */
struct fuzz_sink {
	u8 *buf;
	size_t cap;
	size_t len;
};

/**
 * struct fuzz_blob - records kept for the rewrite, each after its length
 * @buf: the bytes
 * @len: bytes used
 * @cap: bytes allocated
 */
struct fuzz_blob {
	u8 *buf;
	size_t len;
	size_t cap;
};

/**
 * struct fuzz_image - what RESTORE collects
 * @gpus: GPU records, as many as COMPAT announced
 * @num_gpus: announced GPUs
 * @gpus_read: GPUs collected
 * @traps: TRAP_HANDLER records
 * @num_traps: TRAP_HANDLER records collected
 * @process: the PROCESS record
 * @signal_page: the SIGNAL_PAGE payload or NULL
 * @signal_page_size: its length
 * @events: EVENT records, @num_events allocated as PROCESS announced
 * @num_events: announced events
 * @events_read: events collected
 * @have_process: PROCESS was collected
 * @bos: BO records, @num_bos allocated as PROCESS announced
 * @num_bos: announced BOs
 * @bos_read: BOs collected
 * @bos_checked: the BO set passed kfd_criu_check_bos() and @cursor is set
 * @cursor: the next BO_DATA record expected
 * @data: the BO_DATA payloads in stream order, each after its __le32 length
 * @data_len: bytes at @data
 * @data_cap: bytes allocated at @data
 * @have_counts: COUNTS was collected
 * @counts: the COUNTS record, zero without one
 * @queues: fixed parts of the QUEUE records, @num_queues allocated
 * @queue_payloads: whole QUEUE payloads, %FUZZ_QUEUE_MAX bytes each
 * @num_queues: announced queues
 * @queues_read: queues collected
 * @queues_checked: the queue set passed kfd_criu_check_queues()
 * @qcur: the next QUEUE_STATE record expected
 * @states: the QUEUE_STATE payloads, each after its __le32 length
 * @svm: SVM_RANGE records, @num_svm allocated
 * @num_svm: announced SVM ranges
 * @svm_read: SVM ranges collected
 * @svm_checked: the SVM set passed kfd_criu_check_svm_ranges()
 */
struct fuzz_image {
	struct kfd_criu_gpu_rec gpus[KFD_CRIU_MAX_GPUS];
	u32 num_gpus;
	u32 gpus_read;
	struct kfd_criu_trap_rec traps[KFD_CRIU_MAX_GPUS];
	u32 num_traps;
	struct kfd_criu_process_rec process;
	u8 *signal_page;
	u32 signal_page_size;
	struct kfd_criu_event_rec *events;
	u32 num_events;
	u32 events_read;
	bool have_process;
	struct kfd_criu_bo_rec *bos;
	u32 num_bos;
	u32 bos_read;
	bool bos_checked;
	struct kfd_criu_bo_cursor cursor;
	u8 *data;
	size_t data_len;
	size_t data_cap;
	bool have_counts;
	struct kfd_criu_counts_rec counts;
	struct kfd_criu_queue_rec *queues;
	u8 *queue_payloads;
	u32 num_queues;
	u32 queues_read;
	bool queues_checked;
	struct kfd_criu_queue_cursor qcur;
	struct fuzz_blob states;
	struct kfd_criu_svm_rec *svm;
	u32 num_svm;
	u32 svm_read;
	bool svm_checked;
};

static u8 *read_buf;
static u8 *rewrite_buf;
static u8 *normal_buf;
static struct kfd_img_mutator mutator;

static int fuzz_write(void *ctx, const void *buf, size_t len)
{
	struct fuzz_sink *sink = ctx;

	if (len > sink->cap - sink->len)
		return -ENOSPC;
	memcpy(sink->buf + sink->len, buf, len);
	sink->len += len;
	return 0;
}

static void fuzz_image_free(struct fuzz_image *img)
{
	free(img->signal_page);
	free(img->events);
	free(img->bos);
	free(img->data);
	free(img->queues);
	free(img->queue_payloads);
	free(img->states.buf);
	free(img->svm);
	memset(img, 0, sizeof(*img));
}

/* A record after the BOs was seen: queue state, SVM or contents */
static bool past_bos(const struct fuzz_image *img)
{
	return img->queues_read || img->states.len || img->svm_read ||
	       img->data_len;
}

/* The model of kfd_criu_collect_process() */
static int collect_process(struct fuzz_image *img,
			   const struct kfd_criu_record *rec, const void *buf)
{
	u32 num;

	if (img->have_process || img->gpus_read != img->num_gpus ||
	    rec->length != sizeof(img->process))
		return -EINVAL;
	memcpy(&img->process, buf, sizeof(img->process));
	img->have_process = true;
	num = le32_to_cpu(img->process.num_events);
	if (num > KFD_CRIU_MAX_EVENTS ||
	    le32_to_cpu(img->process.num_bos) > KFD_CRIU_MAX_BOS)
		return -EINVAL;
	if (num) {
		img->events = calloc(num, sizeof(*img->events));
		if (!img->events)
			return -ENOMEM;
		img->num_events = num;
	}
	num = le32_to_cpu(img->process.num_bos);
	if (num) {
		img->bos = calloc(num, sizeof(*img->bos));
		if (!img->bos)
			return -ENOMEM;
		img->num_bos = num;
	}
	return 0;
}

/* A GPU record: only between COMPAT and PROCESS, as many as announced */
static int collect_gpu(struct fuzz_image *img,
		       const struct kfd_criu_record *rec, const void *buf)
{
	struct kfd_criu_gpu_rec *gpu;

	if (img->have_process || img->gpus_read == img->num_gpus ||
	    img->num_traps || rec->length != sizeof(*gpu))
		return -EINVAL;
	gpu = &img->gpus[img->gpus_read++];
	memcpy(gpu, buf, sizeof(*gpu));
	return kfd_criu_validate_gpu(gpu);
}

/* A trap handler: after all GPU records, before PROCESS, one per GPU */
static int collect_trap(struct fuzz_image *img,
			const struct kfd_criu_record *rec, const void *buf)
{
	if (img->have_process || img->gpus_read != img->num_gpus ||
	    img->num_traps == img->num_gpus ||
	    rec->length != sizeof(img->traps[0]))
		return -EINVAL;
	memcpy(&img->traps[img->num_traps++], buf, rec->length);
	return kfd_criu_check_traps(img->traps, img->num_traps, img->num_gpus);
}

/* A BO record: after all events, before any contents */
static int collect_bo(struct fuzz_image *img,
		      const struct kfd_criu_record *rec, const void *buf)
{
	if (!img->have_process || img->events_read != img->num_events ||
	    img->bos_read == img->num_bos || past_bos(img) ||
	    rec->length != sizeof(*img->bos))
		return -EINVAL;
	memcpy(&img->bos[img->bos_read++], buf, rec->length);
	return 0;
}

/* The BO set as a whole, once it is complete; sets up the cursor */
static int check_bo_set(struct fuzz_image *img)
{
	int ret;

	if (img->bos_checked)
		return 0;
	if (!img->have_process || img->events_read != img->num_events ||
	    img->bos_read != img->num_bos)
		return -EINVAL;
	ret = kfd_criu_check_bos(img->bos, img->num_bos, img->num_gpus);
	if (ret)
		return ret;
	kfd_criu_bo_cursor_init(&img->cursor, img->bos, img->num_bos);
	img->bos_checked = true;
	return 0;
}

static int blob_add(struct fuzz_blob *b, const void *buf, u32 len)
{
	__le32 le_len = cpu_to_le32(len);
	size_t need = b->len + sizeof(le_len) + len;
	u8 *bigger;

	if (need > b->cap) {
		bigger = realloc(b->buf, need * 2);
		if (!bigger)
			return -ENOMEM;
		b->buf = bigger;
		b->cap = need * 2;
	}
	memcpy(b->buf + b->len, &le_len, sizeof(le_len));
	memcpy(b->buf + b->len + sizeof(le_len), buf, len);
	b->len = need;
	return 0;
}

static int keep_data(struct fuzz_image *img, const void *buf, u32 len)
{
	__le32 le_len = cpu_to_le32(len);
	size_t need = img->data_len + sizeof(le_len) + len;
	u8 *bigger;

	if (need > img->data_cap) {
		bigger = realloc(img->data, need * 2);
		if (!bigger)
			return -ENOMEM;
		img->data = bigger;
		img->data_cap = need * 2;
	}
	memcpy(img->data + img->data_len, &le_len, sizeof(le_len));
	memcpy(img->data + img->data_len + sizeof(le_len), buf, len);
	img->data_len = need;
	return 0;
}

/* The model of the COUNTS collection: directly after PROCESS, once */
static int collect_counts(struct fuzz_image *img,
			  const struct kfd_criu_record *rec, const void *buf)
{
	int ret;

	if (!img->have_process || img->have_counts || img->signal_page ||
	    img->events_read || img->bos_read || past_bos(img) ||
	    rec->length != sizeof(img->counts))
		return -EINVAL;
	memcpy(&img->counts, buf, sizeof(img->counts));
	img->have_counts = true;
	ret = kfd_criu_validate_counts(&img->counts, img->num_gpus);
	if (ret)
		return ret;
	img->num_queues = le32_to_cpu(img->counts.num_queues);
	img->num_svm = le32_to_cpu(img->counts.num_svm_ranges);
	if (img->num_queues) {
		img->queues = calloc(img->num_queues, sizeof(*img->queues));
		img->queue_payloads = calloc(img->num_queues, FUZZ_QUEUE_MAX);
		if (!img->queues || !img->queue_payloads)
			return -ENOMEM;
	}
	if (img->num_svm) {
		img->svm = calloc(img->num_svm, sizeof(*img->svm));
		if (!img->svm)
			return -ENOMEM;
	}
	return 0;
}

/* Everything before the queues is in: every event and BO */
static bool before_queues_done(const struct fuzz_image *img)
{
	return img->have_process && img->events_read == img->num_events &&
	       img->bos_read == img->num_bos;
}

/* A QUEUE record: after the BOs, before any queue state */
static int collect_queue(struct fuzz_image *img,
			 const struct kfd_criu_record *rec, const void *buf)
{
	struct kfd_criu_queue_rec *q;

	if (!before_queues_done(img) || img->queues_checked ||
	    img->queues_read == img->num_queues ||
	    rec->length < sizeof(*q) || rec->length > FUZZ_QUEUE_MAX)
		return -EINVAL;
	q = &img->queues[img->queues_read];
	memcpy(q, buf, sizeof(*q));
	if (rec->length != kfd_criu_queue_len(q))
		return -EINVAL;
	memcpy(img->queue_payloads + img->queues_read * FUZZ_QUEUE_MAX, buf,
	       rec->length);
	img->queues_read++;
	return 0;
}

/* The queue set as a whole, once it is complete; sets up the cursor */
static int check_queue_set(struct fuzz_image *img)
{
	int ret;

	if (img->queues_checked)
		return 0;
	if (!before_queues_done(img) || img->queues_read != img->num_queues)
		return -EINVAL;
	ret = kfd_criu_check_queues(img->queues, img->num_queues, img->gpus,
				    img->num_gpus);
	if (ret)
		return ret;
	kfd_criu_queue_cursor_init(&img->qcur);
	img->queues_checked = true;
	return 0;
}

/* A QUEUE_STATE record: the state the cursor expects, before any range */
static int collect_queue_state(struct fuzz_image *img,
			       const struct kfd_criu_record *rec,
			       const void *buf)
{
	struct kfd_criu_queue_state_hdr hdr;
	struct kfd_criu_queue_dyn dyn;
	int ret;

	ret = check_queue_set(img);
	if (ret)
		return ret;
	if (img->svm_read || img->data_len || rec->length < FUZZ_STATE_FIXED)
		return -EINVAL;
	memcpy(&hdr, buf, sizeof(hdr));
	memcpy(&dyn, (const u8 *)buf + sizeof(hdr), sizeof(dyn));
	ret = kfd_criu_queue_state_check(&img->qcur, img->queues,
					 img->num_queues, img->gpus, &hdr,
					 &dyn, rec->length);
	if (ret)
		return ret;
	return blob_add(&img->states, buf, rec->length);
}

/* Every queue and queue state is in */
static int check_queues_done(struct fuzz_image *img)
{
	int ret = check_queue_set(img);

	if (ret)
		return ret;
	return img->qcur.queue_index == img->num_queues ? 0 : -EINVAL;
}

/* An SVM_RANGE record: after the queue states, before any contents */
static int collect_svm(struct fuzz_image *img,
		       const struct kfd_criu_record *rec, const void *buf)
{
	int ret;

	ret = check_queues_done(img);
	if (ret)
		return ret;
	if (img->svm_read == img->num_svm || img->data_len ||
	    rec->length != sizeof(*img->svm))
		return -EINVAL;
	memcpy(&img->svm[img->svm_read++], buf, rec->length);
	return 0;
}

static int check_bo_set(struct fuzz_image *img);

/* The SVM set, against the BOs, once all metadata is in */
static int check_svm_set(struct fuzz_image *img)
{
	int ret;

	if (img->svm_checked)
		return 0;
	ret = check_queues_done(img);
	if (!ret)
		ret = check_bo_set(img);
	if (ret)
		return ret;
	if (img->svm_read != img->num_svm)
		return -EINVAL;
	ret = kfd_criu_check_svm_ranges(img->svm, img->num_svm, img->gpus,
					img->num_gpus, img->bos, img->num_bos);
	if (!ret)
		img->svm_checked = true;
	return ret;
}

/* A BO_DATA record: the next chunk the cursor expects, nothing else */
static int collect_bo_data(struct fuzz_image *img,
			   const struct kfd_criu_record *rec, const void *buf)
{
	struct kfd_criu_bo_data_hdr hdr;
	int ret;

	ret = check_svm_set(img);
	if (ret)
		return ret;
	if (rec->length < sizeof(hdr))
		return -EINVAL;
	memcpy(&hdr, buf, sizeof(hdr));
	ret = kfd_criu_bo_data_check(&img->cursor, img->bos, img->num_bos,
				     &hdr, rec->length);
	if (ret)
		return ret;
	return keep_data(img, buf, rec->length);
}

/* The model of kfd_criu_collect_signal_page() */
static int collect_signal_page(struct fuzz_image *img,
			       const struct kfd_criu_record *rec, const void *buf)
{
	if (!img->have_process || img->signal_page || img->events_read ||
	    img->bos_read || past_bos(img))
		return -EINVAL;
	if (!rec->length || rec->length > KFD_CRIU_SIGNAL_PAGE_MAX ||
	    rec->length != le32_to_cpu(img->process.signal_page_size))
		return -EINVAL;
	img->signal_page = malloc(rec->length);
	if (!img->signal_page)
		return -ENOMEM;
	memcpy(img->signal_page, buf, rec->length);
	img->signal_page_size = rec->length;
	return 0;
}

/* The model of kfd_criu_events_collect() and its GPU state counterpart */
static int collect(struct fuzz_image *img, const struct kfd_criu_record *rec,
		   const void *buf)
{
	switch (rec->type) {
	case KFD_CRIU_REC_GPU:
		return collect_gpu(img, rec, buf);
	case KFD_CRIU_REC_TRAP_HANDLER:
		return collect_trap(img, rec, buf);
	case KFD_CRIU_REC_BO:
		return collect_bo(img, rec, buf);
	case KFD_CRIU_REC_BO_DATA:
		return collect_bo_data(img, rec, buf);
	case KFD_CRIU_REC_COUNTS:
		return collect_counts(img, rec, buf);
	case KFD_CRIU_REC_QUEUE:
		return collect_queue(img, rec, buf);
	case KFD_CRIU_REC_QUEUE_STATE:
		return collect_queue_state(img, rec, buf);
	case KFD_CRIU_REC_SVM_RANGE:
		return collect_svm(img, rec, buf);
	case KFD_CRIU_REC_PROCESS:
		return collect_process(img, rec, buf);
	case KFD_CRIU_REC_SIGNAL_PAGE:
		return collect_signal_page(img, rec, buf);
	case KFD_CRIU_REC_EVENT:
		if (!img->have_process || img->events_read == img->num_events ||
		    img->bos_read || past_bos(img) ||
		    rec->length != sizeof(*img->events))
			return -EINVAL;
		memcpy(&img->events[img->events_read++], buf, rec->length);
		return 0;
	}
	return -EINVAL;
}

/* The model of kfd_criu_validate_runtime() */
static int validate_runtime(const struct kfd_criu_process_rec *rec)
{
	switch (le32_to_cpu(rec->runtime_state)) {
	case DEBUG_RUNTIME_STATE_DISABLED:
		return rec->r_debug || rec->ttmp_setup ? -EINVAL : 0;
	case DEBUG_RUNTIME_STATE_ENABLED:
		return 0;
	}
	return -EINVAL;
}

/*
 * Restored on the machine it was dumped on, every image GPU finds itself:
 * anything else is a bug of kfd_criu_map_gpus(). Repeated gpu_ids are the
 * one way the image itself can make this fail.
 */
static int map_gpus_onto_themselves(const struct fuzz_image *img)
{
	struct kfd_criu_gpu_mismatch why = {};
	u32 target[KFD_CRIU_MAX_GPUS];
	u32 i;
	int ret;

	ret = kfd_criu_map_gpus(img->gpus, img->num_gpus, img->gpus,
				img->num_gpus, NULL, 0, target, &why);
	if (ret == -EINVAL)
		return ret;
	if (ret) {
		fprintf(stderr, "GPU 0x%x not placed on itself: %d (%s)\n",
			why.image_gpu_id, ret, why.field ? why.field : "?");
		abort();
	}
	for (i = 0; i < img->num_gpus; i++)
		if (target[i] != i) {
			fprintf(stderr, "GPU %u placed on GPU %u\n", i, target[i]);
			abort();
		}
	return 0;
}

/*
 * The GPU state: all GPUs, BOs, queues, their states and the SVM ranges
 * read, every chunk of contents seen
 */
static int validate_gpu_state(struct fuzz_image *img)
{
	int ret;

	if (img->gpus_read != img->num_gpus)
		return -EINVAL;
	ret = check_svm_set(img);
	if (ret)
		return ret;
	if (img->cursor.bo_index != img->num_bos)
		return -EINVAL;
	return map_gpus_onto_themselves(img);
}

/* The model of kfd_criu_events_validate() */
static int validate(struct fuzz_image *img)
{
	const struct kfd_criu_process_rec *proc = &img->process;
	u32 i;
	int ret;

	if (!img->have_process || img->events_read != img->num_events ||
	    le32_to_cpu(proc->num_events) != img->num_events ||
	    le32_to_cpu(proc->signal_page_size) != img->signal_page_size ||
	    !img->signal_page != !img->signal_page_size)
		return -EINVAL;
	ret = kfd_criu_validate_process(proc);
	if (!ret)
		ret = validate_runtime(proc);
	if (!ret)
		ret = kfd_criu_check_event_ids(img->events, img->num_events);
	for (i = 0; !ret && i < img->num_events; i++) {
		ret = kfd_criu_validate_event(&img->events[i]);
		if (!ret)
			ret = kfd_criu_validate_event_slot(proc, &img->events[i]);
	}
	if (!ret)
		ret = validate_gpu_state(img);
	return ret;
}

static int read_compat(struct kfd_criu_image_reader *r,
		       struct fuzz_image *img)
{
	struct kfd_criu_compat_rec compat;
	struct kfd_criu_record rec;
	int ret;

	ret = kfd_criu_image_read_record(r, &rec, read_buf, FUZZ_READ_BUF);
	if (ret)
		return ret;
	if (rec.type != KFD_CRIU_REC_COMPAT || rec.length != sizeof(compat))
		return -EINVAL;
	memcpy(&compat, read_buf, sizeof(compat));
	ret = kfd_criu_validate_compat(&compat);
	if (!ret)
		img->num_gpus = le32_to_cpu(compat.num_gpus);
	return ret;
}

/* The sequence of kfd_criu_read_image() and kfd_criu_load_image(). */
static int restore(struct kfd_criu_image_reader *r,
		   struct kfd_criu_image_header *hdr, struct fuzz_image *img)
{
	struct kfd_criu_record rec;
	int ret;

	ret = kfd_criu_image_read_header(r, hdr);
	if (!ret)
		ret = read_compat(r, img);
	while (!ret) {
		ret = kfd_criu_image_read_record(r, &rec, read_buf,
						 FUZZ_READ_BUF);
		if (ret || rec.type == KFD_CRIU_REC_END)
			break;
		if (rec.length > FUZZ_READ_BUF)
			abort();	/* the reader overran read_buf */
		ret = collect(img, &rec, read_buf);
	}
	if (!ret)
		ret = validate(img);
	return ret;
}

/* Errnos the uAPI documents for a RESTORE of a bad image */
static bool documented_errno(int ret)
{
	switch (-ret) {
	case EINVAL:
	case EPROTO:
	case EBADMSG:
	case EOPNOTSUPP:
	case ENODATA:
	case EEXIST:
	case ENOMEM:
	case ENODEV:
		return true;
	}
	return false;
}

/* Writes records of @type from @len bytes of length-prefixed payloads */
static int rewrite_blob(struct kfd_criu_image_writer *w, u32 type,
			const u8 *buf, size_t size)
{
	size_t off = 0;
	__le32 le_len;
	u32 len;
	int ret = 0;

	while (!ret && off < size) {
		memcpy(&le_len, buf + off, sizeof(le_len));
		len = le32_to_cpu(le_len);
		off += sizeof(le_len);
		ret = kfd_criu_image_write_record(w, type,
						  KFD_CRIU_RECORD_MANDATORY,
						  buf + off, len);
		off += len;
	}
	return ret;
}

static int rewrite_queues_svm(struct kfd_criu_image_writer *w,
			      const struct fuzz_image *img)
{
	u32 i;
	int ret = 0;

	for (i = 0; !ret && i < img->num_queues; i++)
		ret = kfd_criu_image_write_record(w, KFD_CRIU_REC_QUEUE,
						  KFD_CRIU_RECORD_MANDATORY,
						  img->queue_payloads +
						  i * FUZZ_QUEUE_MAX,
						  kfd_criu_queue_len(&img->queues[i]));
	if (!ret)
		ret = rewrite_blob(w, KFD_CRIU_REC_QUEUE_STATE, img->states.buf,
				   img->states.len);
	for (i = 0; !ret && i < img->num_svm; i++)
		ret = kfd_criu_image_write_record(w, KFD_CRIU_REC_SVM_RANGE,
						  KFD_CRIU_RECORD_MANDATORY,
						  &img->svm[i], sizeof(img->svm[i]));
	return ret;
}

static int rewrite(const struct kfd_criu_image_header *hdr,
		   const struct fuzz_image *img, struct fuzz_sink *sink)
{
	const struct kfd_criu_image_io io = { .write = fuzz_write, .ctx = sink };
	struct kfd_criu_compat_rec compat = {
		.num_gpus = cpu_to_le32(img->num_gpus),
	};
	struct kfd_criu_image_writer w;
	u32 i;
	int ret;

	kfd_criu_image_writer_init(&w, &io);
	ret = kfd_criu_image_write_header(&w, (const char *)hdr->release);
	if (!ret)
		ret = kfd_criu_image_write_record(&w, KFD_CRIU_REC_COMPAT,
						  KFD_CRIU_RECORD_MANDATORY,
						  &compat, sizeof(compat));
	for (i = 0; !ret && i < img->num_gpus; i++)
		ret = kfd_criu_image_write_record(&w, KFD_CRIU_REC_GPU,
						  KFD_CRIU_RECORD_MANDATORY,
						  &img->gpus[i], sizeof(img->gpus[i]));
	for (i = 0; !ret && i < img->num_traps; i++)
		ret = kfd_criu_image_write_record(&w, KFD_CRIU_REC_TRAP_HANDLER,
						  KFD_CRIU_RECORD_MANDATORY,
						  &img->traps[i],
						  sizeof(img->traps[i]));
	if (!ret)
		ret = kfd_criu_image_write_record(&w, KFD_CRIU_REC_PROCESS,
						  KFD_CRIU_RECORD_MANDATORY,
						  &img->process, sizeof(img->process));
	if (!ret && img->have_counts)
		ret = kfd_criu_image_write_record(&w, KFD_CRIU_REC_COUNTS,
						  KFD_CRIU_RECORD_MANDATORY,
						  &img->counts, sizeof(img->counts));
	if (!ret && img->signal_page)
		ret = kfd_criu_image_write_record(&w, KFD_CRIU_REC_SIGNAL_PAGE,
						  KFD_CRIU_RECORD_MANDATORY,
						  img->signal_page,
						  img->signal_page_size);
	for (i = 0; !ret && i < img->num_events; i++)
		ret = kfd_criu_image_write_record(&w, KFD_CRIU_REC_EVENT,
						  KFD_CRIU_RECORD_MANDATORY,
						  &img->events[i], sizeof(img->events[i]));
	for (i = 0; !ret && i < img->num_bos; i++)
		ret = kfd_criu_image_write_record(&w, KFD_CRIU_REC_BO,
						  KFD_CRIU_RECORD_MANDATORY,
						  &img->bos[i], sizeof(img->bos[i]));
	if (!ret)
		ret = rewrite_queues_svm(&w, img);
	if (!ret)
		ret = rewrite_blob(&w, KFD_CRIU_REC_BO_DATA, img->data,
				   img->data_len);
	if (!ret)
		ret = kfd_criu_image_write_end(&w);
	return ret;
}

/*
 * A known record is accepted whether or not it carries the MANDATORY flag
 * (the flag only matters to a reader that does not know the type), and
 * the writer always sets it: set it in a copy of the input, with the CRCs
 * to match, before comparing.
 */
static const u8 *normalize_flags(const u8 *data, size_t len)
{
	size_t n, i;

	memcpy(normal_buf, data, len);
	n = kfd_img_frame(normal_buf, len, mutator.recs, mutator.max_recs);
	for (i = 0; i < n; i++)
		kfd_img_put32(normal_buf + mutator.recs[i].off + 4,
			      KFD_CRIU_RECORD_MANDATORY);
	kfd_img_fix_crcs(normal_buf, len, mutator.recs, mutator.max_recs);
	return normal_buf;
}

/* An accepted image must be exactly what the writer makes of its content. */
static void check_accepted(const u8 *data, size_t consumed,
			   const struct kfd_criu_image_header *hdr,
			   const struct fuzz_image *img)
{
	struct fuzz_sink sink = { .buf = rewrite_buf, .cap = FUZZ_MAX_IMAGE };

	if (consumed > FUZZ_MAX_IMAGE)
		return;		/* only when replaying a file above -max_len */
	if (rewrite(hdr, img, &sink)) {
		fprintf(stderr, "writer refused an accepted image\n");
		abort();
	}
	if (sink.len != consumed ||
	    memcmp(sink.buf, normalize_flags(data, consumed), consumed)) {
		fprintf(stderr, "accepted image (%zu bytes) differs from its rewrite (%zu bytes)\n",
			consumed, sink.len);
		abort();
	}

	/* A sink that fills up mid-stream: its errno comes back, nothing else */
	sink.len = 0;
	sink.cap = kfd_img_crc32c(0, data, consumed) % consumed;
	if (rewrite(hdr, img, &sink) != -ENOSPC) {
		fprintf(stderr, "writer hid a sink error at byte %zu\n", sink.cap);
		abort();
	}
}

/**
 * struct fuzz_limit - a row of the range table and the kernel's constant
 * @type: record type of the row
 * @name: field of the row
 * @ev_types: the row's event types, 0 for rows of every record
 * @lo: what the row's lower bound must be
 * @hi: what the row's upper bound must be
 */
struct fuzz_limit {
	u32 type;
	const char *name;
	u32 ev_types;
	u64 lo;
	u64 hi;
};

#define SLOT_EVENTS	(BIT(KFD_IOC_EVENT_SIGNAL) | BIT(KFD_IOC_EVENT_DEBUG_EVENT))

/* The bounds of the range table that the codec takes from its header */
static const struct fuzz_limit fuzz_limits[] = {
	{ KFD_CRIU_REC_COMPAT, "num_gpus", 0, 0, KFD_CRIU_MAX_GPUS },
	{ KFD_CRIU_REC_PROCESS, "runtime_state", 0, 0,
	  DEBUG_RUNTIME_STATE_ENABLED },
	{ KFD_CRIU_REC_PROCESS, "num_events", 0, 0, KFD_CRIU_MAX_EVENTS },
	{ KFD_CRIU_REC_PROCESS, "signal_page_size", 0, 0,
	  KFD_CRIU_SIGNAL_PAGE_MAX },
	{ KFD_CRIU_REC_PROCESS, "num_bos", 0, 0, KFD_CRIU_MAX_BOS },
	{ KFD_CRIU_REC_EVENT, "event_id", SLOT_EVENTS, 1,
	  KFD_SIGNAL_EVENT_LIMIT - 1 },
	{ KFD_CRIU_REC_EVENT, "event_id", 0x1ff & ~SLOT_EVENTS,
	  KFD_CRIU_FIRST_NONSIGNAL_EVENT_ID, KFD_CRIU_LAST_NONSIGNAL_EVENT_ID },
	{ KFD_CRIU_REC_EVENT, "type", 0, 0, KFD_IOC_EVENT_MEMORY },
	{ KFD_CRIU_REC_EVENT, "event_age", 0, 0, KFD_CRIU_MAX_EVENT_AGE },
	{ KFD_CRIU_REC_EVENT, "mem_error_type", BIT(KFD_IOC_EVENT_MEMORY), 0,
	  KFD_MEM_ERR_GPU_HANG },
	{ KFD_CRIU_REC_EVENT, "hw_reset_type", BIT(KFD_IOC_EVENT_HW_EXCEPTION),
	  0, KFD_HW_EXCEPTION_PER_ENGINE_RESET },
	{ KFD_CRIU_REC_EVENT, "hw_reset_cause", BIT(KFD_IOC_EVENT_HW_EXCEPTION),
	  0, KFD_HW_EXCEPTION_ECC },
	{ KFD_CRIU_REC_GPU, "flags", 0, 0, KFD_CRIU_GPU_FLAGS },
	{ KFD_CRIU_REC_TRAP_HANDLER, "gpu_index", 0, 0, KFD_CRIU_MAX_GPUS - 1 },
	{ KFD_CRIU_REC_TRAP_HANDLER, "tba_addr", 0, 0, KFD_CRIU_MAX_VA - 1 },
	{ KFD_CRIU_REC_BO, "size", 0, KFD_CRIU_BO_ALIGN, KFD_CRIU_MAX_VA },
	{ KFD_CRIU_REC_BO, "handle", 0, 0, INT_MAX - 1 },
	{ KFD_CRIU_REC_BO, "gpu_index", 0, 0, KFD_CRIU_MAX_GPUS - 1 },
	{ KFD_CRIU_REC_BO_DATA, "bo_index", 0, 0, KFD_CRIU_MAX_BOS - 1 },
	{ KFD_CRIU_REC_COUNTS, "num_queues", 0, 0, KFD_CRIU_MAX_QUEUES },
	{ KFD_CRIU_REC_COUNTS, "num_svm_ranges", 0, 0,
	  KFD_CRIU_MAX_SVM_RANGES },
	{ KFD_CRIU_REC_QUEUE, "queue_id", 0, 0, KFD_CRIU_MAX_QUEUES - 1 },
	{ KFD_CRIU_REC_QUEUE, "priority", 0, 0, KFD_MAX_QUEUE_PRIORITY },
	{ KFD_CRIU_REC_QUEUE, "queue_percent", 0, 0, KFD_MAX_QUEUE_PERCENTAGE },
	{ KFD_CRIU_REC_QUEUE, "ring_size", 0, KFD_CRIU_MIN_RING_SIZE,
	  KFD_CRIU_MAX_RING_SIZE },
	{ KFD_CRIU_REC_QUEUE, "eop_size", 0, 0, KFD_CRIU_MAX_EOP_SIZE },
	{ KFD_CRIU_REC_QUEUE, "ctl_stack_size", 0, 0,
	  KFD_CRIU_MAX_CTL_STACK_SIZE },
	{ KFD_CRIU_REC_QUEUE, "doorbell_offset", 0, 0,
	  KFD_CRIU_MAX_DOORBELLS - 1 },
	{ KFD_CRIU_REC_QUEUE, "sdma_engine_id", 0, 0,
	  KFD_CRIU_MAX_SDMA_ENGINES - 1 },
	{ KFD_CRIU_REC_QUEUE, "num_cu_mask", 0, 0, KFD_CRIU_MAX_CU_MASK_BITS },
	{ KFD_CRIU_REC_QUEUE_STATE, "data_len", 0, 0,
	  KFD_CRIU_MAX_CTL_STACK_SIZE },
	{ KFD_CRIU_REC_SVM_RANGE, "granularity", 0, 0,
	  KFD_CRIU_MAX_SVM_GRANULARITY },
};

/*
 * The range table is written out in the mutator, which sees no kernel
 * header: every bound the codec takes from kfd_criu_image.h or the uAPI
 * must be the same in the table.
 */
static void check_range_table(void)
{
	const struct fuzz_limit *l;
	const struct kfd_img_range *r;
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(fuzz_limits); i++) {
		l = &fuzz_limits[i];
		for (j = 0; j < kfd_img_num_ranges; j++) {
			r = &kfd_img_ranges[j];
			if (r->type == l->type && !strcmp(r->name, l->name) &&
			    r->ev_types == l->ev_types)
				break;
		}
		if (j == kfd_img_num_ranges || r->lo != l->lo || r->hi != l->hi) {
			fprintf(stderr, "range table: %u.%s is not [%#llx, %#llx]\n",
				l->type, l->name, (unsigned long long)l->lo,
				(unsigned long long)l->hi);
			abort();
		}
	}
}

/* An accepted image has every field inside its row of the range table. */
static void check_ranges(const u8 *data, size_t consumed)
{
	char why[160];

	if (kfd_img_check_ranges(data, consumed, mutator.recs, mutator.max_recs,
				 why, sizeof(why)))
		return;
	fprintf(stderr, "accepted a value outside the range table: %s\n", why);
	abort();
}

/**
 * LLVMFuzzerTestOneInput() - read one image as RESTORE does
 * @data: the image
 * @size: its length
 *
 * Return: 0, or -1 for an input not worth keeping in the corpus (none).
 */
int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct kfd_criu_mem_source src = { .data = data, .len = size };
	const struct kfd_criu_image_io io = {
		.read = kfd_criu_mem_source_read, .ctx = &src,
	};
	struct kfd_criu_image_header hdr;
	struct kfd_criu_image_reader r;
	struct fuzz_image img = {};
	size_t consumed;
	int ret, eof;

	kfd_criu_image_reader_init(&r, &io, kfd_criu_v1_records,
				   kfd_criu_v1_num_records);
	ret = restore(&r, &hdr, &img);
	if (ret && !documented_errno(ret)) {
		fprintf(stderr, "RESTORE would return undocumented errno %d\n", ret);
		abort();
	}
	consumed = src.pos;
	eof = kfd_criu_image_expect_eof(&r);
	if (r.ended && (eof == 0) != (consumed == size)) {
		fprintf(stderr, "expect_eof %d with %zu of %zu bytes read\n",
			eof, consumed, size);
		abort();
	}
	if (!ret)
		check_ranges(data, consumed);
	if (!ret && !r.skipped)
		check_accepted(data, consumed, &hdr, &img);
	fuzz_image_free(&img);
	return 0;
}

/**
 * LLVMFuzzerInitialize() - allocate the buffers the target reuses
 * @argc: unused
 * @argv: unused
 *
 * Return: 0.
 */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	read_buf = malloc(FUZZ_READ_BUF);
	rewrite_buf = malloc(FUZZ_MAX_IMAGE);
	normal_buf = malloc(FUZZ_MAX_IMAGE);
	if (!read_buf || !rewrite_buf || !normal_buf ||
	    kfd_img_mutator_init(&mutator, FUZZ_MAX_IMAGE))
		abort();
	check_range_table();
	return 0;
}

size_t LLVMFuzzerMutate(u8 *data, size_t size, size_t max_size);

/**
 * LLVMFuzzerCustomMutator() - mutate an input, mostly structure-aware
 * @data: the input, changed in place
 * @size: its length
 * @max_size: bytes available at @data
 * @seed: randomness from libFuzzer
 *
 * One time in four libFuzzer's own byte-level mutation runs instead, and
 * half of those get their CRCs fixed afterwards.
 *
 * Return: the new length.
 */
size_t LLVMFuzzerCustomMutator(u8 *data, size_t size, size_t max_size,
			       unsigned int seed)
{
	kfd_img_mutator_seed(&mutator, seed);
	if (seed % 4)
		return kfd_img_mutate(&mutator, data, size, max_size, -1);
	size = LLVMFuzzerMutate(data, size, max_size);
	if (seed & 4)
		kfd_img_fix_crcs(data, size, mutator.recs, mutator.max_recs);
	return size;
}

/**
 * LLVMFuzzerCustomCrossOver() - splice the records of two inputs
 * @data1: first input; its header and leading records are kept
 * @size1: its length
 * @data2: second input; its trailing records are appended
 * @size2: its length
 * @out: receives the result
 * @max_out: bytes available at @out
 * @seed: randomness from libFuzzer
 *
 * Return: the length of the result.
 */
size_t LLVMFuzzerCustomCrossOver(const u8 *data1, size_t size1,
				 const u8 *data2, size_t size2, u8 *out,
				 size_t max_out, unsigned int seed)
{
	size_t n1, n2, cut1, cut2, len;

	kfd_img_mutator_seed(&mutator, seed);
	n1 = kfd_img_frame(data1, size1, mutator.recs, mutator.max_recs);
	cut1 = n1 ? mutator.recs[kfd_img_rand(&mutator) % n1].off :
		    (size1 < KFD_IMG_HEADER_SIZE ? size1 : KFD_IMG_HEADER_SIZE);
	n2 = kfd_img_frame(data2, size2, mutator.recs, mutator.max_recs);
	cut2 = n2 ? mutator.recs[kfd_img_rand(&mutator) % n2].off : size2;
	if (cut1 > max_out)
		cut1 = max_out;
	len = size2 - cut2 < max_out - cut1 ? size2 - cut2 : max_out - cut1;
	memcpy(out, data1, cut1);
	memcpy(out + cut1, data2 + cut2, len);
	kfd_img_fix_end(out, cut1 + len, mutator.recs, mutator.max_recs);
	kfd_img_fix_crcs(out, cut1 + len, mutator.recs, mutator.max_recs);
	return cut1 + len;
}
