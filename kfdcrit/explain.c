// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: saying why the codec refused something
 *
 * The codec answers with an errno only. The verdict and the errno always
 * come from the codec; this file only finds, for a person, the field the
 * codec's check tripped on, by looking at the same bytes again in the
 * order the codec checks them. When it finds nothing more precise it
 * names the codec function that refused the record.
 */

#include <linux/errno.h>
#include <linux/kfd_ioctl.h>
#include <asm/byteorder.h>

#include <stdarg.h>
#include <string.h>

#include "kfdcrit.h"

static char kc_why[200];

static const char *kc_say(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static const char *kc_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(kc_why, sizeof(kc_why), fmt, ap);
	va_end(ap);
	return kc_why;
}

static bool kc_not_bool(__le32 v)
{
	return le32_to_cpu(v) > 1;
}

/* The header, in the order kfd_criu_check_header() checks it */
static void kc_explain_header(const struct kc_stream *s, struct kc_diag *d)
{
	const struct kfd_criu_image_header *h = (const void *)s->data;
	u32 crc;

	d->in_header = true;
	d->offset = 0;
	if (s->size < sizeof(*h)) {
		snprintf(d->reason, sizeof(d->reason),
			 "stream is %zu bytes, shorter than the %zu-byte header",
			 s->size, sizeof(*h));
		return;
	}
	crc = kfd_criu_crc32c(0, h, offsetof(struct kfd_criu_image_header, crc));
	if (memcmp(h->magic, KFD_CRIU_IMAGE_MAGIC, KFD_CRIU_IMAGE_MAGIC_LEN))
		snprintf(d->reason, sizeof(d->reason), "bad magic, not a KFD CRIU image stream");
	else if (le32_to_cpu(h->version) != KFD_CRIU_IMAGE_VERSION)
		snprintf(d->reason, sizeof(d->reason),
			 "format version %u, this kernel's codec reads version %u",
			 le32_to_cpu(h->version), KFD_CRIU_IMAGE_VERSION);
	else if (le32_to_cpu(h->crc) != crc)
		snprintf(d->reason, sizeof(d->reason),
			 "header CRC32C 0x%08x stored, 0x%08x computed",
			 le32_to_cpu(h->crc), crc);
	else if (le32_to_cpu(h->flags))
		snprintf(d->reason, sizeof(d->reason), "unknown header flags 0x%x",
			 le32_to_cpu(h->flags));
	else if (le32_to_cpu(h->header_size) != sizeof(*h))
		snprintf(d->reason, sizeof(d->reason), "header_size %u, not %zu",
			 le32_to_cpu(h->header_size), sizeof(*h));
	else
		snprintf(d->reason, sizeof(d->reason),
			 "release string not NUL terminated and padded");
}

static const struct kfd_criu_record_desc *kc_desc(u32 type)
{
	static const struct kfd_criu_record_desc end = {
		KFD_CRIU_REC_END, sizeof(struct kfd_criu_end_rec),
		sizeof(struct kfd_criu_end_rec)
	};
	size_t i;

	if (type == KFD_CRIU_REC_END)
		return &end;
	for (i = 0; i < kfd_criu_v1_num_records; i++)
		if (kfd_criu_v1_records[i].type == type)
			return &kfd_criu_v1_records[i];
	return NULL;
}

/* END's counts against the records before it */
static void kc_explain_end(const struct kc_stream *s, const u8 *payload,
			   struct kc_diag *d)
{
	struct kfd_criu_end_rec end;
	u64 bytes = 0;
	size_t i;

	for (i = 0; i < s->nrecs; i++)
		bytes += s->recs[i].length;
	memcpy(&end, payload, sizeof(end));
	if (le32_to_cpu(end.reserved))
		snprintf(d->reason, sizeof(d->reason), "reserved field is set");
	else
		snprintf(d->reason, sizeof(d->reason),
			 "END counts %u records and %llu payload bytes, the stream has %zu and %llu",
			 le32_to_cpu(end.records),
			 (unsigned long long)le64_to_cpu(end.payload_bytes),
			 s->nrecs, (unsigned long long)bytes);
}

/*
 * One record at @off, in the order kfd_criu_read_one() checks it.
 * Return: true when the record is fine (an unknown optional record the
 * reader skipped), false when @d now says what is wrong with it.
 */
static bool kc_explain_one(const struct kc_stream *s, u64 off,
			   struct kc_diag *d)
{
	const struct kfd_criu_record_desc *desc;
	struct kfd_criu_record_header h;
	u32 type, flags, len, crc;
	__le32 stored;
	u64 end;

	d->offset = off;
	d->type = 0;
	if (s->size - off < sizeof(h)) {
		snprintf(d->reason, sizeof(d->reason),
			 s->size == off ? "stream ends before its END record" :
			 "stream ends inside a record header");
		return false;
	}
	memcpy(&h, s->data + off, sizeof(h));
	type = le32_to_cpu(h.type);
	flags = le32_to_cpu(h.flags);
	len = le32_to_cpu(h.length);
	d->type = type;
	desc = kc_desc(type);
	if (flags & ~KFD_CRIU_RECORD_FLAGS_KNOWN) {
		snprintf(d->reason, sizeof(d->reason), "unknown record flags 0x%x", flags);
		return false;
	}
	if (len > KFD_CRIU_MAX_RECORD_LEN) {
		snprintf(d->reason, sizeof(d->reason),
			 "length %u above the %u-byte record limit", len,
			 KFD_CRIU_MAX_RECORD_LEN);
		return false;
	}
	if (!desc && (flags & KFD_CRIU_RECORD_MANDATORY)) {
		snprintf(d->reason, sizeof(d->reason),
			 "unknown mandatory record type %u", type);
		return false;
	}
	if (desc && (len < desc->min_len || len > desc->max_len)) {
		snprintf(d->reason, sizeof(d->reason),
			 "length %u out of range %u..%u", len, desc->min_len,
			 desc->max_len);
		return false;
	}
	end = off + KFD_CRIU_RECORD_OVERHEAD + len;
	if (end > s->size) {
		snprintf(d->reason, sizeof(d->reason),
			 "stream ends inside the record (%llu of %llu bytes there)",
			 (unsigned long long)(s->size - off),
			 (unsigned long long)(end - off));
		return false;
	}
	crc = kfd_criu_crc32c(0, s->data + off, sizeof(h) + len);
	memcpy(&stored, s->data + end - sizeof(stored), sizeof(stored));
	if (le32_to_cpu(stored) != crc) {
		snprintf(d->reason, sizeof(d->reason),
			 "CRC32C 0x%08x stored, 0x%08x computed",
			 le32_to_cpu(stored), crc);
		return false;
	}
	if (type == KFD_CRIU_REC_END) {
		kc_explain_end(s, s->data + off + sizeof(h), d);
		return false;
	}
	return !desc;
}

/**
 * kc_explain_reader() - say why the codec's reader refused a stream
 * @s: the stream, with @s->diag.err set by the reader
 * @d: receives the place and the reason; its errno stays the reader's
 *
 * The reader stops at the first error; when it had skipped unknown
 * optional records in the same call, the offending record is the first
 * one after them.
 */
void kc_explain_reader(const struct kc_stream *s, struct kc_diag *d)
{
	u64 off = d->offset;
	struct kfd_criu_record_header h;

	if (!s->header_ok) {
		kc_explain_header(s, d);
		return;
	}
	while (kc_explain_one(s, off, d)) {
		memcpy(&h, s->data + off, sizeof(h));
		off += KFD_CRIU_RECORD_OVERHEAD + le32_to_cpu(h.length);
	}
	if (d->err == -EOVERFLOW && !d->reason[0])
		snprintf(d->reason, sizeof(d->reason), "record larger than the kernel's read buffer");
}

/**
 * kc_explain_compat() - why kfd_criu_validate_compat() refuses a record
 * @c: the record
 *
 * Return: the reason, valid until the next call of a kc_explain_*().
 */
const char *kc_explain_compat(const struct kfd_criu_compat_rec *c)
{
	if (c->reserved)
		return "reserved field is set";
	return kc_say("num_gpus %u above %u", le32_to_cpu(c->num_gpus),
		      KFD_CRIU_MAX_GPUS);
}

/**
 * kc_explain_process() - why kfd_criu_validate_process() refuses a record
 * @p: the record
 *
 * Return: the reason, valid until the next call of a kc_explain_*().
 */
const char *kc_explain_process(const struct kfd_criu_process_rec *p)
{
	u32 page = le32_to_cpu(p->signal_page_size);

	if (kc_not_bool(p->xnack_enabled))
		return kc_say("xnack_enabled %u is not 0 or 1",
			      le32_to_cpu(p->xnack_enabled));
	if (kc_not_bool(p->ttmp_setup))
		return kc_say("ttmp_setup %u is not 0 or 1",
			      le32_to_cpu(p->ttmp_setup));
	if (le32_to_cpu(p->runtime_state) > DEBUG_RUNTIME_STATE_ENABLED_ERROR)
		return kc_say("unknown runtime_state %u",
			      le32_to_cpu(p->runtime_state));
	if (le32_to_cpu(p->num_events) > KFD_CRIU_MAX_EVENTS)
		return kc_say("num_events %u above %u",
			      le32_to_cpu(p->num_events), KFD_CRIU_MAX_EVENTS);
	if (page % 8 || page > KFD_CRIU_SIGNAL_PAGE_MAX)
		return kc_say("signal_page_size %u is not a multiple of 8 up to %u",
			      page, KFD_CRIU_SIGNAL_PAGE_MAX);
	if (le32_to_cpu(p->num_bos) > KFD_CRIU_MAX_BOS)
		return kc_say("num_bos %u above %u", le32_to_cpu(p->num_bos),
			      KFD_CRIU_MAX_BOS);
	return "kfd_criu_validate_process() refuses it";
}

static const char *kc_explain_event_id(u32 type, u32 id)
{
	if (type > KFD_IOC_EVENT_MEMORY)
		return kc_say("unknown event type %u", type);
	if (type == KFD_IOC_EVENT_SIGNAL || type == KFD_IOC_EVENT_DEBUG_EVENT)
		return id >= 1 && id < KFD_SIGNAL_EVENT_LIMIT ? NULL :
		       kc_say("event id %u out of range (signal slots 1..%u)",
			      id, KFD_SIGNAL_EVENT_LIMIT - 1);
	if (id < KFD_CRIU_FIRST_NONSIGNAL_EVENT_ID ||
	    id > KFD_CRIU_LAST_NONSIGNAL_EVENT_ID)
		return kc_say("event id %u out of range (0x%x..0x%x for type %u)",
			      id, KFD_CRIU_FIRST_NONSIGNAL_EVENT_ID,
			      KFD_CRIU_LAST_NONSIGNAL_EVENT_ID, type);
	return NULL;
}

/* The first memory exception field of @ev that is set, or NULL */
static const char *kc_mem_field_set(const struct kfd_criu_event_rec *ev)
{
	if (ev->mem_va)
		return "mem_va";
	if (ev->mem_gpu_id)
		return "mem_gpu_id";
	if (ev->mem_error_type)
		return "mem_error_type";
	if (ev->mem_not_present)
		return "mem_not_present";
	if (ev->mem_read_only)
		return "mem_read_only";
	if (ev->mem_no_execute)
		return "mem_no_execute";
	return ev->mem_imprecise ? "mem_imprecise" : NULL;
}

/* The first hardware exception field of @ev that is set, or NULL */
static const char *kc_hw_field_set(const struct kfd_criu_event_rec *ev)
{
	if (ev->hw_reset_type)
		return "hw_reset_type";
	if (ev->hw_reset_cause)
		return "hw_reset_cause";
	if (ev->hw_memory_lost)
		return "hw_memory_lost";
	return ev->hw_gpu_id ? "hw_gpu_id" : NULL;
}

/* Memory exception data of a memory event, as the codec checks it */
static const char *kc_explain_mem_exception(const struct kfd_criu_event_rec *ev)
{
	u32 id = le32_to_cpu(ev->event_id);

	if (kc_not_bool(ev->mem_not_present))
		return kc_say("event %u: mem_not_present %u is not 0 or 1", id,
			      le32_to_cpu(ev->mem_not_present));
	if (kc_not_bool(ev->mem_read_only))
		return kc_say("event %u: mem_read_only %u is not 0 or 1", id,
			      le32_to_cpu(ev->mem_read_only));
	if (kc_not_bool(ev->mem_no_execute))
		return kc_say("event %u: mem_no_execute %u is not 0 or 1", id,
			      le32_to_cpu(ev->mem_no_execute));
	if (kc_not_bool(ev->mem_imprecise))
		return kc_say("event %u: mem_imprecise %u is not 0 or 1", id,
			      le32_to_cpu(ev->mem_imprecise));
	if (le32_to_cpu(ev->mem_error_type) > KFD_MEM_ERR_GPU_HANG)
		return kc_say("event %u: unknown mem_error_type %u", id,
			      le32_to_cpu(ev->mem_error_type));
	return NULL;
}

/* Hardware exception data of a hardware exception event */
static const char *kc_explain_hw_exception(const struct kfd_criu_event_rec *ev)
{
	u32 id = le32_to_cpu(ev->event_id);

	if (le32_to_cpu(ev->hw_reset_type) > KFD_HW_EXCEPTION_PER_ENGINE_RESET)
		return kc_say("event %u: unknown hw_reset_type %u", id,
			      le32_to_cpu(ev->hw_reset_type));
	if (le32_to_cpu(ev->hw_reset_cause) > KFD_HW_EXCEPTION_ECC)
		return kc_say("event %u: unknown hw_reset_cause %u", id,
			      le32_to_cpu(ev->hw_reset_cause));
	if (kc_not_bool(ev->hw_memory_lost))
		return kc_say("event %u: hw_memory_lost %u is not 0 or 1", id,
			      le32_to_cpu(ev->hw_memory_lost));
	return NULL;
}

/**
 * kc_explain_event() - why kfd_criu_validate_event() refuses a record
 * @ev: the record
 *
 * Return: the reason, valid until the next call of a kc_explain_*().
 */
const char *kc_explain_event(const struct kfd_criu_event_rec *ev)
{
	u32 type = le32_to_cpu(ev->type), id = le32_to_cpu(ev->event_id);
	const char *why, *field;

	if (kc_not_bool(ev->auto_reset))
		return kc_say("event %u: auto_reset %u is not 0 or 1", id,
			      le32_to_cpu(ev->auto_reset));
	if (kc_not_bool(ev->signaled))
		return kc_say("event %u: signaled %u is not 0 or 1", id,
			      le32_to_cpu(ev->signaled));
	if (ev->reserved || ev->reserved2)
		return kc_say("event %u: reserved field is set", id);
	if (le64_to_cpu(ev->event_age) > KFD_CRIU_MAX_EVENT_AGE)
		return kc_say("event %u: event_age %llu above the largest an image may carry, 2^62",
			      id, (unsigned long long)le64_to_cpu(ev->event_age));
	why = kc_explain_event_id(type, id);
	if (why)
		return why;
	field = kc_mem_field_set(ev);
	if (type == KFD_IOC_EVENT_MEMORY)
		why = kc_explain_mem_exception(ev);
	else if (field)
		return kc_say("event %u: %s set on an event of type %u, not a memory event",
			      id, field, type);
	if (why)
		return why;
	field = kc_hw_field_set(ev);
	if (type == KFD_IOC_EVENT_HW_EXCEPTION)
		why = kc_explain_hw_exception(ev);
	else if (field)
		return kc_say("event %u: %s set on an event of type %u, not a hardware exception event",
			      id, field, type);
	return why ?: kc_say("event %u: refused by kfd_criu_validate_event()", id);
}

/**
 * kc_explain_gpu() - why kfd_criu_validate_gpu() refuses a record
 * @g: the record
 *
 * Return: the reason, valid until the next call of a kc_explain_*().
 */
const char *kc_explain_gpu(const struct kfd_criu_gpu_rec *g)
{
	if (!g->gpu_id)
		return "gpu_id is 0";
	if (!g->num_xcc || le32_to_cpu(g->num_xcc) > 16)
		return kc_say("gpu 0x%x: num_xcc %u out of range 1..16",
			      le32_to_cpu(g->gpu_id), le32_to_cpu(g->num_xcc));
	if (le32_to_cpu(g->flags) & ~KFD_CRIU_GPU_FLAGS)
		return kc_say("gpu 0x%x: unknown flags 0x%x",
			      le32_to_cpu(g->gpu_id), le32_to_cpu(g->flags));
	return kc_say("gpu 0x%x: refused", le32_to_cpu(g->gpu_id));
}

/**
 * kc_explain_trap() - why kfd_criu_validate_trap() refuses a record
 * @t: the record
 * @num_gpus: GPU records of the image
 *
 * Return: the reason, valid until the next call of a kc_explain_*().
 */
const char *kc_explain_trap(const struct kfd_criu_trap_rec *t, u32 num_gpus)
{
	u64 tba = le64_to_cpu(t->tba_addr), tma = le64_to_cpu(t->tma_addr);

	if (le32_to_cpu(t->gpu_index) >= num_gpus)
		return kc_say("gpu_index %u, the image has %u GPUs",
			      le32_to_cpu(t->gpu_index), num_gpus);
	if (t->reserved)
		return "reserved field is set";
	if (!tba && !tma)
		return "neither a tba_addr nor a tma_addr";
	if (tba >= KFD_CRIU_MAX_VA)
		return kc_say("tba_addr 0x%llx beyond the 48-bit GPU VA space",
			      (unsigned long long)tba);
	if (tma >= KFD_CRIU_MAX_VA)
		return kc_say("tma_addr 0x%llx beyond the 48-bit GPU VA space",
			      (unsigned long long)tma);
	if (tba & 3)
		return kc_say("tba_addr 0x%llx is not 4-byte aligned",
			      (unsigned long long)tba);
	return "GPU index not above the previous trap handler's";
}

/* The VA range of a BO, as kfd_criu_check_bo_range() checks it */
static const char *kc_explain_bo_range(const struct kfd_criu_bo_rec *bo)
{
	u64 va = le64_to_cpu(bo->va), size = le64_to_cpu(bo->size);
	u32 handle = le32_to_cpu(bo->handle);

	if (!size)
		return kc_say("BO %u: size is 0", handle);
	if (va % KFD_CRIU_BO_ALIGN)
		return kc_say("BO %u: va 0x%llx not page aligned", handle,
			      (unsigned long long)va);
	if (size % KFD_CRIU_BO_ALIGN)
		return kc_say("BO %u: size 0x%llx not page aligned", handle,
			      (unsigned long long)size);
	if (le64_to_cpu(bo->mmap_offset) % KFD_CRIU_BO_ALIGN)
		return kc_say("BO %u: mmap_offset 0x%llx not page aligned", handle,
			      (unsigned long long)le64_to_cpu(bo->mmap_offset));
	if (va + size < va || va + size > KFD_CRIU_MAX_VA)
		return kc_say("BO %u: va 0x%llx + size 0x%llx beyond the 48-bit GPU VA space",
			      handle, (unsigned long long)va,
			      (unsigned long long)size);
	return NULL;
}

#define KC_BO_DOMAINS	(KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_GTT | \
			 KFD_IOC_ALLOC_MEM_FLAGS_USERPTR |			  \
			 KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL |			  \
			 KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP)

/*
 * The bits of @flags beyond the domains that the codec refuses: each is
 * tried alone on a GTT BO, so the codec stays the judge of what is known.
 */
static u32 kc_bo_unknown_flags(u32 flags)
{
	struct kfd_criu_bo_rec probe = {
		.va = cpu_to_le64(KFD_CRIU_BO_ALIGN),
		.size = cpu_to_le64(KFD_CRIU_BO_ALIGN),
	};
	u32 bit, unknown = 0;

	for (bit = 0; bit < 32; bit++) {
		if (!(flags & ~KC_BO_DOMAINS & (1U << bit)))
			continue;
		probe.alloc_flags = cpu_to_le32(KFD_IOC_ALLOC_MEM_FLAGS_GTT | 1U << bit);
		if (kfd_criu_validate_bo(&probe, 1))
			unknown |= 1U << bit;
	}
	return unknown;
}

/* Allocation flags and userptr, as kfd_criu_check_bo_flags() checks them */
static const char *kc_explain_bo_flags(const struct kfd_criu_bo_rec *bo)
{
	u32 handle = le32_to_cpu(bo->handle), flags = le32_to_cpu(bo->alloc_flags);
	u32 domain = flags & KC_BO_DOMAINS, unknown = kc_bo_unknown_flags(flags);
	u64 userptr = le64_to_cpu(bo->userptr);

	if (unknown)
		return kc_say("BO %u: alloc_flags 0x%x has bits 0x%x the 6.12 uAPI does not define",
			      handle, flags, unknown);
	if (!domain || (domain & (domain - 1)))
		return kc_say("BO %u: alloc_flags 0x%x name %s memory domain", handle,
			      flags, domain ? "more than one" : "no");
	if (domain == KFD_IOC_ALLOC_MEM_FLAGS_USERPTR &&
	    (!userptr || userptr % KFD_CRIU_BO_ALIGN))
		return kc_say("BO %u: userptr 0x%llx of a USERPTR BO is 0 or not page aligned",
			      handle, (unsigned long long)userptr);
	if (domain != KFD_IOC_ALLOC_MEM_FLAGS_USERPTR && userptr)
		return kc_say("BO %u: userptr 0x%llx set on a BO that is not USERPTR",
			      handle, (unsigned long long)userptr);
	return NULL;
}

/**
 * kc_explain_bo() - why kfd_criu_validate_bo() refuses a record
 * @bo: the record
 * @num_gpus: GPU records of the image
 *
 * Return: the reason, valid until the next call of a kc_explain_*().
 */
const char *kc_explain_bo(const struct kfd_criu_bo_rec *bo, u32 num_gpus)
{
	u32 handle = le32_to_cpu(bo->handle), flags = le32_to_cpu(bo->flags);
	const char *why;

	why = kc_explain_bo_range(bo) ?: kc_explain_bo_flags(bo);
	if (why)
		return why;
	if (flags & ~KFD_CRIU_BO_FLAGS)
		return kc_say("BO %u: unknown flags 0x%x", handle, flags);
	if (flags & KFD_CRIU_BO_EVENT_PAGE)
		return kc_say("BO %u: an event page (flags EVENT_PAGE) must be a GTT BO of %u bytes, not an AQL queue BO",
			      handle, KFD_CRIU_SIGNAL_PAGE_MAX);
	if (handle >= 0x7fffffffU)
		return kc_say("BO handle %u not below INT_MAX", handle);
	if (le32_to_cpu(bo->gpu_index) >= num_gpus)
		return kc_say("BO %u: gpu_index %u, the image has %u GPUs", handle,
			      le32_to_cpu(bo->gpu_index), num_gpus);
	return kc_say("BO %u: mapped_gpus 0x%llx names a GPU the image lacks",
		      handle, (unsigned long long)le64_to_cpu(bo->mapped_gpus));
}

/**
 * kc_explain_counts() - why kfd_criu_validate_counts() refuses a record
 * @c: the record
 * @num_gpus: GPU records of the image
 *
 * Return: the reason, valid until the next call of a kc_explain_*().
 */
const char *kc_explain_counts(const struct kfd_criu_counts_rec *c,
			      u32 num_gpus)
{
	u32 q = le32_to_cpu(c->num_queues), r = le32_to_cpu(c->num_svm_ranges);

	if (c->reserved || c->reserved2)
		return "reserved field is set";
	if (!q && !r)
		return "both counts are zero (an image without queues and SVM ranges has no COUNTS)";
	if (q > KFD_CRIU_MAX_QUEUES)
		return kc_say("num_queues %u above %u", q, KFD_CRIU_MAX_QUEUES);
	if (r > KFD_CRIU_MAX_SVM_RANGES)
		return kc_say("num_svm_ranges %u above %u", r,
			      KFD_CRIU_MAX_SVM_RANGES);
	if (!num_gpus)
		return "queues or SVM ranges in an image without GPUs";
	return "kfd_criu_validate_counts() refuses it";
}
