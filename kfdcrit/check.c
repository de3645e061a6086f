// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: the checks RESTORE runs on an image, without a GPU
 *
 * kc_check() follows the restore path of kfd_criu.c step by step over the
 * records the codec's reader returned: kfd_criu_read_compat(), the record
 * sections of kfd_criu_next_section() and the collectors of each state
 * family (kfd_criu_events_collect(), kfd_criu_gpus_collect(),
 * kfd_criu_traps_collect(), kfd_criu_bos_collect(),
 * kfd_criu_queues_collect(), kfd_criu_svm_collect()) up to the first
 * BO_DATA or END, then kfd_criu_validate_image(), the first contents
 * chunk, and every later chunk against the contents cursor up to END.
 * Every check on a record's contents is the codec's own function; what
 * is modelled here is only the bookkeeping of the collectors, which need
 * kfd_priv.h and so cannot be built in userspace.
 *
 * What RESTORE checks against the target (the GPUs it finds, the event
 * ids the process already has, the size of the caller's offset map, the
 * caller itself) is not checked here; "kfdcrit compat" does the GPUs.
 *
 * When a check of a set fails (ids ascending, BOs not overlapping, ...)
 * the offending record is found by running the same codec check on
 * ever shorter prefixes of the set: these checks fail on a prefix
 * exactly when it contains the offending record.
 */

#include <linux/errno.h>
#include <linux/kfd_ioctl.h>
#include <asm/byteorder.h>

#include <stdlib.h>
#include <string.h>

#include "kfdcrit.h"

/* Sections of kfd_criu.c's enum kfd_criu_section, in stream order */
enum kc_section {
	KC_SEC_GPUS,
	KC_SEC_PROCESS,
	KC_SEC_BOS,
	KC_SEC_QUEUES,
	KC_SEC_QUEUE_STATES,
	KC_SEC_SVM,
	KC_SEC_DATA,
	KC_SEC_END,
};

/* kfd_criu_queues.c keeps the CU mask of each queue in this many words */
#define KC_CU_MASK_WORDS	(KFD_CRIU_MAX_CU_MASK_BITS / 32)

/**
 * struct kc_model - what RESTORE has collected so far
 * @d: where an error goes
 * @sec: the section the stream is in
 * @gpus: GPU records
 * @gpu_recs: their records
 * @num_gpus: GPUs COMPAT announced
 * @gpus_read: GPU records collected
 * @traps: TRAP_HANDLER records
 * @trap_recs: their records
 * @num_traps: TRAP_HANDLER records collected
 * @process: the PROCESS record
 * @process_rec: its record, NULL until collected
 * @counts: the COUNTS record, zero without one
 * @have_counts: COUNTS was collected
 * @signal_page_size: bytes of the SIGNAL_PAGE record, 0 without one
 * @events: EVENT records, as many as PROCESS announced
 * @event_recs: their records
 * @num_events: events PROCESS announced
 * @events_read: EVENT records collected
 * @bos: BO records, as many as PROCESS announced
 * @bo_recs: their records
 * @num_bos: BOs PROCESS announced
 * @bos_read: BO records collected
 * @bo_cursor: the next contents chunk expected
 * @queues: QUEUE records, allocated by the first one
 * @queue_recs: their records
 * @num_queues: queues allocated for
 * @queues_read: QUEUE records collected
 * @states_ready: the queue set was checked, states may follow
 * @queue_cursor: the next QUEUE_STATE expected
 * @num_states: QUEUE_STATE records the queues need
 * @states_read: QUEUE_STATE records collected
 * @svm: SVM_RANGE records, as many as COUNTS announced
 * @svm_recs: their records
 * @num_svm: SVM ranges COUNTS announced
 * @svm_read: SVM_RANGE records collected
 */
struct kc_model {
	struct kc_diag *d;
	enum kc_section sec;
	struct kfd_criu_gpu_rec gpus[KFD_CRIU_MAX_GPUS];
	const struct kc_record *gpu_recs[KFD_CRIU_MAX_GPUS];
	u32 num_gpus;
	u32 gpus_read;
	struct kfd_criu_trap_rec traps[KFD_CRIU_MAX_GPUS];
	const struct kc_record *trap_recs[KFD_CRIU_MAX_GPUS];
	u32 num_traps;
	struct kfd_criu_process_rec process;
	const struct kc_record *process_rec;
	struct kfd_criu_counts_rec counts;
	bool have_counts;
	u32 signal_page_size;
	struct kfd_criu_event_rec *events;
	const struct kc_record **event_recs;
	u32 num_events;
	u32 events_read;
	struct kfd_criu_bo_rec *bos;
	const struct kc_record **bo_recs;
	u32 num_bos;
	u32 bos_read;
	struct kfd_criu_bo_cursor bo_cursor;
	struct kfd_criu_queue_rec *queues;
	const struct kc_record **queue_recs;
	u32 num_queues;
	u32 queues_read;
	bool states_ready;
	struct kfd_criu_queue_cursor queue_cursor;
	u32 num_states;
	u32 states_read;
	struct kfd_criu_svm_rec *svm;
	const struct kc_record **svm_recs;
	u32 num_svm;
	u32 svm_read;
};

static void kc_model_free(struct kc_model *m)
{
	free(m->events);
	free(m->event_recs);
	free(m->bos);
	free(m->bo_recs);
	free(m->queues);
	free(m->queue_recs);
	free(m->svm);
	free(m->svm_recs);
}

/* Allocates @n records and their record pointers, or neither */
static int kc_alloc(void *recs, size_t size, void *ptrs, u32 n)
{
	void **r = recs, **p = ptrs;

	*r = calloc(n, size);
	*p = calloc(n, sizeof(void *));
	if (*r && *p)
		return 0;
	free(*r);
	free(*p);
	*r = NULL;
	*p = NULL;
	return -ENOMEM;
}

static int kc_fail(struct kc_model *m, int err, const struct kc_record *rec,
		   const char *why)
{
	kc_diag_set(m->d, err, rec, "%s", why);
	return err;
}

static const char *const kc_section_names[] = {
	"GPU", "PROCESS", "BO", "QUEUE", "QUEUE_STATE", "SVM_RANGE", "BO_DATA",
	"END",
};

/* kfd_criu_next_section() */
static int kc_next_section(struct kc_model *m, const struct kc_record *rec)
{
	static const u8 sec_of[KFD_CRIU_REC_NR] = {
		[KFD_CRIU_REC_GPU] = KC_SEC_GPUS + 1,
		[KFD_CRIU_REC_TRAP_HANDLER] = KC_SEC_GPUS + 1,
		[KFD_CRIU_REC_PROCESS] = KC_SEC_PROCESS + 1,
		[KFD_CRIU_REC_COUNTS] = KC_SEC_PROCESS + 1,
		[KFD_CRIU_REC_SIGNAL_PAGE] = KC_SEC_PROCESS + 1,
		[KFD_CRIU_REC_EVENT] = KC_SEC_PROCESS + 1,
		[KFD_CRIU_REC_BO] = KC_SEC_BOS + 1,
		[KFD_CRIU_REC_QUEUE] = KC_SEC_QUEUES + 1,
		[KFD_CRIU_REC_QUEUE_STATE] = KC_SEC_QUEUE_STATES + 1,
		[KFD_CRIU_REC_SVM_RANGE] = KC_SEC_SVM + 1,
		[KFD_CRIU_REC_BO_DATA] = KC_SEC_DATA + 1,
		[KFD_CRIU_REC_END] = KC_SEC_END + 1,
	};
	enum kc_section sec;

	if (rec->type >= KFD_CRIU_REC_NR || !sec_of[rec->type])
		return kc_fail(m, -EINVAL, rec, rec->type == KFD_CRIU_REC_COMPAT ?
			       "a second COMPAT record" : "record type has no place in the stream");
	sec = sec_of[rec->type] - 1;
	if (sec < m->sec) {
		kc_diag_set(m->d, -EINVAL, rec, "out of order: after the %s records",
			    kc_section_names[m->sec]);
		return -EINVAL;
	}
	m->sec = sec;
	return 0;
}

/* kfd_criu_read_compat() and kfd_criu_gpus_prepare() */
static int kc_read_compat(struct kc_model *m, const struct kc_record *rec)
{
	struct kfd_criu_compat_rec compat;
	int ret;

	if (rec->type != KFD_CRIU_REC_COMPAT || rec->length != sizeof(compat))
		return kc_fail(m, -EINVAL, rec, "the first record is not COMPAT");
	memcpy(&compat, rec->payload, sizeof(compat));
	ret = kfd_criu_validate_compat(&compat);
	if (ret) {
		kc_diag_set(m->d, ret, rec, "%s", kc_explain_compat(&compat));
		return ret;
	}
	m->num_gpus = le32_to_cpu(compat.num_gpus);
	return 0;
}

static int kc_collect_gpu(struct kc_model *m, const struct kc_record *rec)
{
	if (rec->type == KFD_CRIU_REC_GPU) {
		if (m->num_traps)
			return kc_fail(m, -EINVAL, rec, "GPU record after a TRAP_HANDLER record");
		if (m->gpus_read >= m->num_gpus) {
			kc_diag_set(m->d, -EINVAL, rec, "more GPU records than COMPAT's num_gpus %u",
				    m->num_gpus);
			return -EINVAL;
		}
		m->gpu_recs[m->gpus_read] = rec;
		memcpy(&m->gpus[m->gpus_read++], rec->payload, sizeof(m->gpus[0]));
		return 0;
	}
	if (m->gpus_read != m->num_gpus)
		return kc_fail(m, -EINVAL, rec, "TRAP_HANDLER record before all GPU records");
	if (m->num_traps >= m->num_gpus)
		return kc_fail(m, -EINVAL, rec, "more TRAP_HANDLER records than GPUs");
	m->trap_recs[m->num_traps] = rec;
	memcpy(&m->traps[m->num_traps++], rec->payload, sizeof(m->traps[0]));
	return 0;
}

/* kfd_criu_collect_process() and kfd_criu_bos_prepare() */
static int kc_collect_process(struct kc_model *m, const struct kc_record *rec)
{
	u32 n;

	if (m->process_rec)
		return kc_fail(m, -EINVAL, rec, "a second PROCESS record");
	memcpy(&m->process, rec->payload, sizeof(m->process));
	m->process_rec = rec;
	n = le32_to_cpu(m->process.num_events);
	if (n > KFD_CRIU_MAX_EVENTS) {
		kc_diag_set(m->d, -EINVAL, rec, "num_events %u above %u", n,
			    KFD_CRIU_MAX_EVENTS);
		return -EINVAL;
	}
	if (n && kc_alloc(&m->events, sizeof(*m->events), &m->event_recs, n))
		return kc_fail(m, -ENOMEM, rec, "out of memory");
	m->num_events = n;
	n = le32_to_cpu(m->process.num_bos);
	if (n > KFD_CRIU_MAX_BOS) {
		kc_diag_set(m->d, -EINVAL, rec, "num_bos %u above %u", n,
			    KFD_CRIU_MAX_BOS);
		return -EINVAL;
	}
	if (n && kc_alloc(&m->bos, sizeof(*m->bos), &m->bo_recs, n))
		return kc_fail(m, -ENOMEM, rec, "out of memory");
	m->num_bos = n;
	return 0;
}

/* kfd_criu_collect_counts() and kfd_criu_svm_prepare() */
static int kc_collect_counts(struct kc_model *m, const struct kc_record *rec)
{
	int ret;
	u32 n;

	if (!m->process_rec || m->have_counts || m->signal_page_size ||
	    m->events_read)
		return kc_fail(m, -EINVAL, rec, "COUNTS is not directly after PROCESS");
	memcpy(&m->counts, rec->payload, sizeof(m->counts));
	m->have_counts = true;
	ret = kfd_criu_validate_counts(&m->counts, m->num_gpus);
	if (ret)
		return kc_fail(m, ret, rec, kc_explain_counts(&m->counts, m->num_gpus));
	n = le32_to_cpu(m->counts.num_svm_ranges);
	if (n && kc_alloc(&m->svm, sizeof(*m->svm), &m->svm_recs, n))
		return kc_fail(m, -ENOMEM, rec, "out of memory");
	m->num_svm = n;
	return 0;
}

/* kfd_criu_collect_signal_page() */
static int kc_collect_signal_page(struct kc_model *m,
				  const struct kc_record *rec)
{
	if (!m->process_rec || m->signal_page_size || m->events_read)
		return kc_fail(m, -EINVAL, rec, "SIGNAL_PAGE is not before the events, once");
	if (rec->length != le32_to_cpu(m->process.signal_page_size)) {
		kc_diag_set(m->d, -EINVAL, rec, "%u bytes, PROCESS says signal_page_size %u",
			    rec->length, le32_to_cpu(m->process.signal_page_size));
		return -EINVAL;
	}
	m->signal_page_size = rec->length;
	return 0;
}

static int kc_collect_event(struct kc_model *m, const struct kc_record *rec)
{
	if (!m->process_rec || m->events_read == m->num_events) {
		kc_diag_set(m->d, -EINVAL, rec, "more EVENT records than PROCESS's num_events %u",
			    m->num_events);
		return -EINVAL;
	}
	m->event_recs[m->events_read] = rec;
	memcpy(&m->events[m->events_read++], rec->payload, sizeof(m->events[0]));
	return 0;
}

static int kc_collect_bo(struct kc_model *m, const struct kc_record *rec)
{
	if (m->bos_read >= m->num_bos) {
		kc_diag_set(m->d, -EINVAL, rec, "more BO records than PROCESS's num_bos %u",
			    m->num_bos);
		return -EINVAL;
	}
	m->bo_recs[m->bos_read] = rec;
	memcpy(&m->bos[m->bos_read++], rec->payload, sizeof(m->bos[0]));
	return 0;
}

/* kfd_criu_collect_queue() */
static int kc_collect_queue(struct kc_model *m, const struct kc_record *rec)
{
	u32 n = le32_to_cpu(m->counts.num_queues);
	struct kfd_criu_queue_rec q;

	if (!m->queues) {
		if (!n || n > KFD_CRIU_MAX_QUEUES)
			return kc_fail(m, -EINVAL, rec, "QUEUE record, but COUNTS announces no queues");
		if (kc_alloc(&m->queues, sizeof(*m->queues), &m->queue_recs, n))
			return kc_fail(m, -ENOMEM, rec, "out of memory");
		m->num_queues = n;
	}
	memcpy(&q, rec->payload, sizeof(q));
	if (m->queues_read >= m->num_queues || m->states_ready) {
		kc_diag_set(m->d, -EINVAL, rec, "more QUEUE records than COUNTS's num_queues %u",
			    m->num_queues);
		return -EINVAL;
	}
	if (rec->length != kfd_criu_queue_len(&q) ||
	    (rec->length - sizeof(q)) / 4 > KC_CU_MASK_WORDS) {
		kc_diag_set(m->d, -EINVAL, rec, "length %u does not match num_cu_mask %u",
			    rec->length, le32_to_cpu(q.num_cu_mask));
		return -EINVAL;
	}
	m->queue_recs[m->queues_read] = rec;
	m->queues[m->queues_read++] = q;
	return 0;
}

typedef int (*kc_set_check)(const struct kc_model *m, u32 n);

/*
 * The smallest prefix of a set that a codec check refuses, which ends
 * with the offending record. The check refuses the whole set.
 */
static u32 kc_culprit(const struct kc_model *m, kc_set_check check, u32 n)
{
	u32 lo = 1, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (check(m, mid))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo - 1;
}

static int kc_check_gpus(const struct kc_model *m, u32 n)
{
	u32 i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = kfd_criu_validate_gpu(&m->gpus[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* kfd_criu_gpus_validate() */
static int kc_validate_gpus(struct kc_model *m)
{
	int ret = kc_check_gpus(m, m->num_gpus);
	u32 i;

	if (!ret)
		return 0;
	i = kc_culprit(m, kc_check_gpus, m->num_gpus);
	return kc_fail(m, ret, m->gpu_recs[i], kc_explain_gpu(&m->gpus[i]));
}

/* kfd_criu_queues_check_set() */
static int kc_check_queue_set(const struct kc_model *m, u32 n)
{
	return kfd_criu_check_queues(m->queues, n, m->gpus, m->num_gpus);
}

static int kc_queue_set(struct kc_model *m, const struct kc_record *rec)
{
	const struct kfd_criu_queue_rec *q;
	int ret;
	u32 i;

	if (m->states_ready)
		return 0;
	if (m->queues_read != m->num_queues) {
		kc_diag_set(m->d, -EINVAL, rec, "COUNTS announces %u queues, %u QUEUE records came",
			    m->num_queues, m->queues_read);
		return -EINVAL;
	}
	ret = kc_validate_gpus(m);
	if (ret)
		return ret;
	ret = kc_check_queue_set(m, m->num_queues);
	if (ret) {
		i = kc_culprit(m, kc_check_queue_set, m->num_queues);
		q = &m->queues[i];
		kc_diag_set(m->d, ret, m->queue_recs[i],
			    kfd_criu_validate_queue(q, m->gpus, m->num_gpus) ?
			    "queue %u: refused by kfd_criu_validate_queue() (type, sizes, addresses or GPU)" :
			    ret == -EEXIST ? "queue %u: queue id or doorbell repeats an earlier queue's" :
			    "queue %u: not after the previous queue (QUEUE records ascend by queue id)",
			    le32_to_cpu(q->queue_id));
		return ret;
	}
	for (i = 0; i < m->num_queues; i++)
		m->num_states += le32_to_cpu(m->queues[i].num_xcc);
	kfd_criu_queue_cursor_init(&m->queue_cursor);
	m->states_ready = true;
	return 0;
}

/* kfd_criu_collect_state() */
static int kc_collect_state(struct kc_model *m, const struct kc_record *rec)
{
	struct kfd_criu_queue_state_hdr hdr;
	struct kfd_criu_queue_dyn dyn;
	struct kfd_criu_queue_cursor want;
	int ret;

	if (!m->queues)
		return kc_fail(m, -EINVAL, rec, "QUEUE_STATE record without QUEUE records");
	ret = kc_queue_set(m, rec);
	if (ret)
		return ret;
	memcpy(&hdr, rec->payload, sizeof(hdr));
	memcpy(&dyn, rec->payload + sizeof(hdr), sizeof(dyn));
	want = m->queue_cursor;
	ret = kfd_criu_queue_state_check(&m->queue_cursor, m->queues,
					 m->num_queues, m->gpus, &hdr, &dyn,
					 rec->length);
	if (ret) {
		kc_diag_set(m->d, ret, rec,
			    "state of queue index %u XCC %u (%u control stack bytes) refused by kfd_criu_queue_state_check(); expected queue index %u XCC %u",
			    le32_to_cpu(hdr.queue_index), le32_to_cpu(hdr.xcc),
			    le32_to_cpu(hdr.data_len), want.queue_index, want.xcc);
		return ret;
	}
	m->states_read++;
	return 0;
}

static int kc_collect_svm(struct kc_model *m, const struct kc_record *rec)
{
	if (m->svm_read >= m->num_svm) {
		kc_diag_set(m->d, -EINVAL, rec, "more SVM_RANGE records than COUNTS's num_svm_ranges %u",
			    m->num_svm);
		return -EINVAL;
	}
	m->svm_recs[m->svm_read] = rec;
	memcpy(&m->svm[m->svm_read++], rec->payload, sizeof(m->svm[0]));
	return 0;
}

static int kc_collect_events_sec(struct kc_model *m, const struct kc_record *rec)
{
	switch (rec->type) {
	case KFD_CRIU_REC_PROCESS:
		return kc_collect_process(m, rec);
	case KFD_CRIU_REC_COUNTS:
		return kc_collect_counts(m, rec);
	case KFD_CRIU_REC_SIGNAL_PAGE:
		return kc_collect_signal_page(m, rec);
	default:
		return kc_collect_event(m, rec);
	}
}

/* kfd_criu_collect_record() */
static int kc_collect(struct kc_model *m, const struct kc_record *rec)
{
	int ret;

	ret = kc_next_section(m, rec);
	if (ret)
		return ret;
	if (m->sec > KC_SEC_GPUS && m->gpus_read != m->num_gpus) {
		kc_diag_set(m->d, -EINVAL, rec, "COMPAT announces %u GPUs, %u GPU records came",
			    m->num_gpus, m->gpus_read);
		return -EINVAL;
	}
	if (m->sec > KC_SEC_PROCESS && !m->process_rec)
		return kc_fail(m, -EINVAL, rec, "no PROCESS record before it");
	switch (m->sec) {
	case KC_SEC_GPUS:
		return kc_collect_gpu(m, rec);
	case KC_SEC_PROCESS:
		return kc_collect_events_sec(m, rec);
	case KC_SEC_BOS:
		return kc_collect_bo(m, rec);
	case KC_SEC_QUEUES:
		return kc_collect_queue(m, rec);
	case KC_SEC_QUEUE_STATES:
		return kc_collect_state(m, rec);
	case KC_SEC_SVM:
		return kc_collect_svm(m, rec);
	default:
		return 0;
	}
}

static int kc_check_event_ids(const struct kc_model *m, u32 n)
{
	return kfd_criu_check_event_ids(m->events, n);
}

/* kfd_criu_validate_runtime() */
static int kc_validate_runtime(struct kc_model *m)
{
	const struct kfd_criu_process_rec *p = &m->process;

	switch (le32_to_cpu(p->runtime_state)) {
	case DEBUG_RUNTIME_STATE_DISABLED:
		if (!p->r_debug && !p->ttmp_setup)
			return 0;
		return kc_fail(m, -EINVAL, m->process_rec,
			       "runtime disabled, but r_debug or ttmp_setup set");
	case DEBUG_RUNTIME_STATE_ENABLED:
		return 0;
	}
	kc_diag_set(m->d, -EINVAL, m->process_rec,
		    "runtime_state %u exists only while a debugger is attached",
		    le32_to_cpu(p->runtime_state));
	return -EINVAL;
}

static int kc_validate_each_event(struct kc_model *m)
{
	const struct kfd_criu_event_rec *ev;
	int ret;
	u32 i;

	for (i = 0; i < m->num_events; i++) {
		ev = &m->events[i];
		ret = kfd_criu_validate_event(ev);
		if (ret)
			return kc_fail(m, ret, m->event_recs[i], kc_explain_event(ev));
		ret = kfd_criu_validate_event_slot(&m->process, ev);
		if (ret) {
			kc_diag_set(m->d, ret, m->event_recs[i],
				    "event %u: its signal slot is outside the %u-slot signal page",
				    le32_to_cpu(ev->event_id),
				    m->signal_page_size / 8);
			return ret;
		}
	}
	return 0;
}

/* kfd_criu_events_validate(); @at is the record that ended the metadata */
static int kc_validate_events(struct kc_model *m, const struct kc_record *at)
{
	const struct kfd_criu_process_rec *p = &m->process;
	int ret;
	u32 i;

	if (!m->process_rec)
		return kc_fail(m, -EINVAL, at, "the image has no PROCESS record");
	if (m->events_read != m->num_events) {
		kc_diag_set(m->d, -EINVAL, at, "PROCESS announces %u events, %u EVENT records came",
			    m->num_events, m->events_read);
		return -EINVAL;
	}
	if (le32_to_cpu(p->signal_page_size) != m->signal_page_size) {
		kc_diag_set(m->d, -EINVAL, m->process_rec,
			    "signal_page_size %u, but the image has no SIGNAL_PAGE record",
			    le32_to_cpu(p->signal_page_size));
		return -EINVAL;
	}
	ret = kfd_criu_validate_process(p);
	if (ret)
		return kc_fail(m, ret, m->process_rec, kc_explain_process(p));
	ret = kc_validate_runtime(m);
	if (ret)
		return ret;
	ret = kc_check_event_ids(m, m->num_events);
	if (ret) {
		i = kc_culprit(m, kc_check_event_ids, m->num_events);
		kc_diag_set(m->d, ret, m->event_recs[i], ret == -EEXIST ?
			    "event id %u repeats" :
			    "event id %u below the one before it (events ascend by id)",
			    le32_to_cpu(m->events[i].event_id));
		return ret;
	}
	return kc_validate_each_event(m);
}

static int kc_check_traps(const struct kc_model *m, u32 n)
{
	return kfd_criu_check_traps(m->traps, n, m->num_gpus);
}

static int kc_check_bos(const struct kc_model *m, u32 n)
{
	return kfd_criu_check_bos(m->bos, n, m->num_gpus);
}

/* The order of BO records: by GPU index, then by handle */
static u64 kc_bo_key(const struct kfd_criu_bo_rec *bo)
{
	return (u64)le32_to_cpu(bo->gpu_index) << 32 | le32_to_cpu(bo->handle);
}

static void kc_explain_bo_set(struct kc_model *m, int err, u32 i)
{
	const struct kfd_criu_bo_rec *bo = &m->bos[i];
	const char *why;

	if (kfd_criu_validate_bo(bo, m->num_gpus))
		why = kc_explain_bo(bo, m->num_gpus);
	else if (err == -EEXIST)
		why = "handle repeats the previous BO's on the same GPU";
	else if (i && kc_bo_key(&m->bos[i]) < kc_bo_key(&m->bos[i - 1]))
		why = "not after the previous BO (BO records ascend by GPU index and handle)";
	else
		why = "its VA range overlaps another BO's in a GPU VM it lives in";
	kc_diag_set(m->d, err, m->bo_recs[i], "BO %u on GPU index %u: %s",
		    le32_to_cpu(bo->handle), le32_to_cpu(bo->gpu_index), why);
}

static int kc_check_svm(const struct kc_model *m, u32 n)
{
	return kfd_criu_check_svm_ranges(m->svm, n, m->gpus, m->num_gpus,
					 m->bos, m->num_bos);
}

/* kfd_criu_queues_validate() */
static int kc_validate_queues(struct kc_model *m, const struct kc_record *at)
{
	u32 n = le32_to_cpu(m->counts.num_queues);
	int ret;

	if (!n)
		return 0;
	if (!m->queues || m->num_queues != n) {
		kc_diag_set(m->d, -EINVAL, at, "COUNTS announces %u queues, the image has none", n);
		return -EINVAL;
	}
	ret = kc_queue_set(m, at);
	if (ret)
		return ret;
	if (m->queue_cursor.queue_index != m->num_queues ||
	    m->states_read != m->num_states) {
		kc_diag_set(m->d, -EINVAL, at,
			    "queue states missing: %u of %u came, the next expected is queue index %u XCC %u",
			    m->states_read, m->num_states,
			    m->queue_cursor.queue_index, m->queue_cursor.xcc);
		return -EINVAL;
	}
	return 0;
}

static int kc_validate_sets(struct kc_model *m, const struct kc_record *at)
{
	const struct kfd_criu_svm_rec *r;
	int ret;
	u32 i;

	ret = kc_validate_gpus(m);
	if (ret)
		return ret;
	ret = kc_check_traps(m, m->num_traps);
	if (ret) {
		i = kc_culprit(m, kc_check_traps, m->num_traps);
		return kc_fail(m, ret, m->trap_recs[i],
			       kc_explain_trap(&m->traps[i], m->num_gpus));
	}
	if (m->bos_read != m->num_bos) {
		kc_diag_set(m->d, -EINVAL, at, "PROCESS announces %u BOs, %u BO records came",
			    m->num_bos, m->bos_read);
		return -EINVAL;
	}
	ret = kc_check_bos(m, m->num_bos);
	if (ret) {
		kc_explain_bo_set(m, ret, kc_culprit(m, kc_check_bos, m->num_bos));
		return ret;
	}
	kfd_criu_bo_cursor_init(&m->bo_cursor, m->bos, m->num_bos);
	ret = kc_validate_queues(m, at);
	if (ret)
		return ret;
	if (m->svm_read != m->num_svm) {
		kc_diag_set(m->d, -EINVAL, at, "COUNTS announces %u SVM ranges, %u SVM_RANGE records came",
			    m->num_svm, m->svm_read);
		return -EINVAL;
	}
	ret = kc_check_svm(m, m->num_svm);
	if (!ret)
		return 0;
	i = kc_culprit(m, kc_check_svm, m->num_svm);
	r = &m->svm[i];
	kc_diag_set(m->d, ret, m->svm_recs[i],
		    kfd_criu_validate_svm_range(r, m->gpus, m->num_gpus) ?
		    "SVM range 0x%llx+0x%llx: refused by kfd_criu_validate_svm_range() (alignment, size, attributes or GPU)" :
		    "SVM range 0x%llx+0x%llx: not after the previous range, or overlaps it or a BO",
		    (unsigned long long)le64_to_cpu(r->start),
		    (unsigned long long)le64_to_cpu(r->size));
	return ret;
}

/* kfd_criu_validate_image(); @at is the first BO_DATA or END */
static int kc_validate_image(struct kc_model *m, const struct kc_record *at)
{
	int ret;

	ret = kc_validate_events(m, at);
	if (!ret)
		ret = kc_validate_sets(m, at);
	if (ret || at->type != KFD_CRIU_REC_END)
		return ret;
	if (m->bo_cursor.bo_index != m->num_bos)
		return kc_fail(m, -EINVAL, at, "END before the contents of the BOs");
	return 0;
}

/* kfd_criu_bo_data_check() on one chunk, as RESTORE streams them */
static int kc_check_chunk(struct kc_model *m, const struct kc_record *rec)
{
	struct kfd_criu_bo_data_hdr hdr;
	struct kfd_criu_bo_cursor want = m->bo_cursor;
	u64 size = 0;
	int ret;

	memcpy(&hdr, rec->payload, sizeof(hdr));
	ret = kfd_criu_bo_data_check(&m->bo_cursor, m->bos, m->num_bos, &hdr,
				     rec->length);
	if (!ret)
		return 0;
	if (want.bo_index >= m->num_bos)
		return kc_fail(m, ret, rec, "contents, but no BO expects any more");
	size = le64_to_cpu(m->bos[want.bo_index].size);
	kc_diag_set(m->d, ret, rec,
		    "chunk of BO index %u at offset %llu with %u bytes; expected BO index %u at offset %llu with %u bytes",
		    le32_to_cpu(hdr.bo_index),
		    (unsigned long long)le64_to_cpu(hdr.offset),
		    rec->length - (u32)sizeof(hdr), want.bo_index,
		    (unsigned long long)want.offset,
		    kfd_criu_chunk_len(size, want.offset, KFD_CRIU_BO_CHUNK));
	return ret;
}

/* kfd_criu_stream_contents(), from the first BO_DATA at @i */
static int kc_check_contents(struct kc_model *m, const struct kc_stream *s,
			     size_t i)
{
	const struct kc_record *rec;
	int ret;

	for (; i < s->nrecs; i++) {
		rec = &s->recs[i];
		if (rec->skipped)
			continue;
		if (rec->type == KFD_CRIU_REC_END) {
			if (m->bo_cursor.bo_index == m->num_bos)
				return 0;
			return kc_fail(m, -EINVAL, rec, "END before the contents of the BOs");
		}
		if (rec->type != KFD_CRIU_REC_BO_DATA) {
			kc_diag_set(m->d, -EINVAL, rec, "out of order: after the BO_DATA records");
			return -EINVAL;
		}
		ret = kc_check_chunk(m, rec);
		if (ret)
			return ret;
	}
	return 1;	/* the reader stopped first */
}

static int kc_walk(struct kc_model *m, const struct kc_stream *s)
{
	const struct kc_record *rec;
	size_t i, first;
	int ret;

	for (first = 0; first < s->nrecs && s->recs[first].skipped; first++)
		;
	if (first == s->nrecs)
		return 1;
	ret = kc_read_compat(m, &s->recs[first]);
	for (i = first + 1; !ret && i < s->nrecs; i++) {
		rec = &s->recs[i];
		if (rec->skipped)
			continue;
		ret = kc_collect(m, rec);
		if (ret || m->sec < KC_SEC_DATA)
			continue;
		ret = kc_validate_image(m, rec);
		if (ret || m->sec == KC_SEC_END)
			return ret;
		return kc_check_contents(m, s, i);
	}
	return ret ? ret : 1;
}

/**
 * kc_check() - run the checks RESTORE runs on an image's metadata
 * @s: the stream, as kc_stream_load() read it
 * @d: receives the first error, with its place and reason
 *
 * The reader's own errors (header, CRC, lengths, END counts) count where
 * RESTORE would meet them: a collector or set check that fails on an
 * earlier record wins.
 *
 * Return: 0 when RESTORE accepts the image as far as it can be checked
 * without the target, else the negative errno RESTORE returns.
 */
int kc_check(const struct kc_stream *s, struct kc_diag *d)
{
	struct kc_model *m;
	int ret;

	memset(d, 0, sizeof(*d));
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->d = d;
	ret = s->header_ok ? kc_walk(m, s) : 1;
	if (ret == 1) {
		/* Every record read passed: the reader's error stands */
		*d = s->diag;
		ret = s->diag.err;
	}
	kc_model_free(m);
	free(m);
	return ret;
}
