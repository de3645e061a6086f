// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: kfdcrit decode
 *
 * Every record the codec's reader returned, one per line or as JSON. The
 * fields of each record type are listed once, in tables built from the
 * kernel header's structs (offsetof, sizeof), so a field the header adds
 * or moves is a one-line change here and never a silent misreading.
 * Variable parts (signal page, CU mask, control stack, BO contents, the
 * payload of an unknown record) are summarized by their size and FNV-1a
 * hash, and dumped in hex only with --data. The JSON schema is in
 * kfdcrit(1).
 */

#include <linux/errno.h>
#include <asm/byteorder.h>

#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "kfdcrit.h"

#define KC_F(st, m, h) { #m, offsetof(struct st, m), \
			 sizeof(((struct st *)0)->m), h }

static const struct kc_field kc_end_fields[] = {
	KC_F(kfd_criu_end_rec, records, 0),
	KC_F(kfd_criu_end_rec, reserved, 0),
	KC_F(kfd_criu_end_rec, payload_bytes, 0),
	{ }
};

static const struct kc_field kc_compat_fields[] = {
	KC_F(kfd_criu_compat_rec, num_gpus, 0),
	KC_F(kfd_criu_compat_rec, reserved, 0),
	{ }
};

static const struct kc_field kc_process_fields[] = {
	KC_F(kfd_criu_process_rec, xnack_enabled, 0),
	KC_F(kfd_criu_process_rec, runtime_state, 0),
	KC_F(kfd_criu_process_rec, r_debug, 1),
	KC_F(kfd_criu_process_rec, ttmp_setup, 0),
	KC_F(kfd_criu_process_rec, num_events, 0),
	KC_F(kfd_criu_process_rec, signal_page_size, 0),
	KC_F(kfd_criu_process_rec, num_bos, 0),
	{ }
};

static const struct kc_field kc_event_fields[] = {
	KC_F(kfd_criu_event_rec, event_id, 0),
	KC_F(kfd_criu_event_rec, type, 0),
	KC_F(kfd_criu_event_rec, auto_reset, 0),
	KC_F(kfd_criu_event_rec, signaled, 0),
	KC_F(kfd_criu_event_rec, event_age, 0),
	KC_F(kfd_criu_event_rec, mem_va, 1),
	KC_F(kfd_criu_event_rec, mem_gpu_id, 1),
	KC_F(kfd_criu_event_rec, mem_error_type, 0),
	KC_F(kfd_criu_event_rec, mem_not_present, 0),
	KC_F(kfd_criu_event_rec, mem_read_only, 0),
	KC_F(kfd_criu_event_rec, mem_no_execute, 0),
	KC_F(kfd_criu_event_rec, mem_imprecise, 0),
	KC_F(kfd_criu_event_rec, hw_reset_type, 0),
	KC_F(kfd_criu_event_rec, hw_reset_cause, 0),
	KC_F(kfd_criu_event_rec, hw_memory_lost, 0),
	KC_F(kfd_criu_event_rec, hw_gpu_id, 1),
	KC_F(kfd_criu_event_rec, reserved, 0),
	KC_F(kfd_criu_event_rec, reserved2, 0),
	{ }
};

static const struct kc_field kc_gpu_fields[] = {
	KC_F(kfd_criu_gpu_rec, gpu_id, 1),
	KC_F(kfd_criu_gpu_rec, gfx_target_version, 0),
	KC_F(kfd_criu_gpu_rec, device_id, 1),
	KC_F(kfd_criu_gpu_rec, revision_id, 1),
	KC_F(kfd_criu_gpu_rec, num_xcc, 0),
	KC_F(kfd_criu_gpu_rec, partition_mode, 0),
	KC_F(kfd_criu_gpu_rec, vram_size, 0),
	KC_F(kfd_criu_gpu_rec, cwsr_size, 0),
	KC_F(kfd_criu_gpu_rec, ctl_stack_size, 0),
	KC_F(kfd_criu_gpu_rec, mec_fw_version, 0),
	KC_F(kfd_criu_gpu_rec, sdma_fw_version, 0),
	KC_F(kfd_criu_gpu_rec, flags, 1),
	KC_F(kfd_criu_gpu_rec, scratch_backing_va, 1),
	{ }
};

static const struct kc_field kc_trap_fields[] = {
	KC_F(kfd_criu_trap_rec, gpu_index, 0),
	KC_F(kfd_criu_trap_rec, reserved, 0),
	KC_F(kfd_criu_trap_rec, tba_addr, 1),
	KC_F(kfd_criu_trap_rec, tma_addr, 1),
	{ }
};

static const struct kc_field kc_bo_fields[] = {
	KC_F(kfd_criu_bo_rec, va, 1),
	KC_F(kfd_criu_bo_rec, size, 1),
	KC_F(kfd_criu_bo_rec, userptr, 1),
	KC_F(kfd_criu_bo_rec, mmap_offset, 1),
	KC_F(kfd_criu_bo_rec, mapped_gpus, 1),
	KC_F(kfd_criu_bo_rec, alloc_flags, 1),
	KC_F(kfd_criu_bo_rec, handle, 0),
	KC_F(kfd_criu_bo_rec, gpu_index, 0),
	KC_F(kfd_criu_bo_rec, flags, 1),
	{ }
};

static const struct kc_field kc_bo_data_fields[] = {
	KC_F(kfd_criu_bo_data_hdr, bo_index, 0),
	KC_F(kfd_criu_bo_data_hdr, reserved, 0),
	KC_F(kfd_criu_bo_data_hdr, offset, 1),
	{ }
};

static const struct kc_field kc_counts_fields[] = {
	KC_F(kfd_criu_counts_rec, num_queues, 0),
	KC_F(kfd_criu_counts_rec, num_svm_ranges, 0),
	KC_F(kfd_criu_counts_rec, reserved, 0),
	KC_F(kfd_criu_counts_rec, reserved2, 0),
	{ }
};

static const struct kc_field kc_queue_fields[] = {
	KC_F(kfd_criu_queue_rec, ring_base, 1),
	KC_F(kfd_criu_queue_rec, read_ptr_addr, 1),
	KC_F(kfd_criu_queue_rec, write_ptr_addr, 1),
	KC_F(kfd_criu_queue_rec, eop_base, 1),
	KC_F(kfd_criu_queue_rec, ctx_save_restore_base, 1),
	KC_F(kfd_criu_queue_rec, queue_id, 0),
	KC_F(kfd_criu_queue_rec, gpu_index, 0),
	KC_F(kfd_criu_queue_rec, type, 0),
	KC_F(kfd_criu_queue_rec, format, 0),
	KC_F(kfd_criu_queue_rec, priority, 0),
	KC_F(kfd_criu_queue_rec, queue_percent, 0),
	KC_F(kfd_criu_queue_rec, pm4_target_xcc, 0),
	KC_F(kfd_criu_queue_rec, ring_size, 0),
	KC_F(kfd_criu_queue_rec, eop_size, 0),
	KC_F(kfd_criu_queue_rec, ctx_save_restore_size, 0),
	KC_F(kfd_criu_queue_rec, ctl_stack_size, 0),
	KC_F(kfd_criu_queue_rec, doorbell_offset, 0),
	KC_F(kfd_criu_queue_rec, sdma_engine_id, 0),
	KC_F(kfd_criu_queue_rec, gws, 0),
	KC_F(kfd_criu_queue_rec, num_cu_mask, 0),
	KC_F(kfd_criu_queue_rec, num_xcc, 0),
	KC_F(kfd_criu_queue_rec, reserved, 0),
	KC_F(kfd_criu_queue_rec, reserved2, 0),
	{ }
};

#define KC_DYN(m, h) { #m, sizeof(struct kfd_criu_queue_state_hdr) + \
		       offsetof(struct kfd_criu_queue_dyn, m), \
		       sizeof(((struct kfd_criu_queue_dyn *)0)->m), h }

static const struct kc_field kc_state_fields[] = {
	KC_F(kfd_criu_queue_state_hdr, queue_index, 0),
	KC_F(kfd_criu_queue_state_hdr, xcc, 0),
	KC_F(kfd_criu_queue_state_hdr, reserved, 0),
	KC_F(kfd_criu_queue_state_hdr, data_len, 0),
	KC_DYN(rptr, 0),
	KC_DYN(wptr, 0),
	KC_DYN(cntl_stack_offset, 0),
	KC_DYN(wg_state_offset, 0),
	KC_DYN(eop_rptr, 0),
	KC_DYN(eop_wptr, 0),
	{ }
};

static const struct kc_field kc_svm_fields[] = {
	KC_F(kfd_criu_svm_rec, start, 1),
	KC_F(kfd_criu_svm_rec, size, 1),
	KC_F(kfd_criu_svm_rec, access, 1),
	KC_F(kfd_criu_svm_rec, access_in_place, 1),
	KC_F(kfd_criu_svm_rec, no_access, 1),
	KC_F(kfd_criu_svm_rec, preferred_loc, 1),
	KC_F(kfd_criu_svm_rec, prefetch_loc, 1),
	KC_F(kfd_criu_svm_rec, flags, 1),
	KC_F(kfd_criu_svm_rec, granularity, 0),
	KC_F(kfd_criu_svm_rec, reserved, 0),
	KC_F(kfd_criu_svm_rec, reserved2, 0),
	{ }
};

static const struct kc_field kc_no_fields[] = { { } };

/* The fixed fields of a record type and where its variable part starts */
/**
 * kc_fields_of() - the fixed fields of a record type
 * @type: the record type
 * @fixed: receives the bytes they span; the variable part starts there
 *
 * Return: the fields, ended by one with a NULL @name; none for an
 * unknown type.
 */
const struct kc_field *kc_fields_of(u32 type, u32 *fixed)
{
	static const struct {
		const struct kc_field *fields;
		u32 fixed;
	} t[KFD_CRIU_REC_NR] = {
		[KFD_CRIU_REC_END] = { kc_end_fields, sizeof(struct kfd_criu_end_rec) },
		[KFD_CRIU_REC_COMPAT] = { kc_compat_fields, sizeof(struct kfd_criu_compat_rec) },
		[KFD_CRIU_REC_PROCESS] = { kc_process_fields, sizeof(struct kfd_criu_process_rec) },
		[KFD_CRIU_REC_SIGNAL_PAGE] = { kc_no_fields, 0 },
		[KFD_CRIU_REC_EVENT] = { kc_event_fields, sizeof(struct kfd_criu_event_rec) },
		[KFD_CRIU_REC_GPU] = { kc_gpu_fields, sizeof(struct kfd_criu_gpu_rec) },
		[KFD_CRIU_REC_BO] = { kc_bo_fields, sizeof(struct kfd_criu_bo_rec) },
		[KFD_CRIU_REC_BO_DATA] = { kc_bo_data_fields, sizeof(struct kfd_criu_bo_data_hdr) },
		[KFD_CRIU_REC_QUEUE] = { kc_queue_fields, sizeof(struct kfd_criu_queue_rec) },
		[KFD_CRIU_REC_QUEUE_STATE] = { kc_state_fields,
			sizeof(struct kfd_criu_queue_state_hdr) + sizeof(struct kfd_criu_queue_dyn) },
		[KFD_CRIU_REC_SVM_RANGE] = { kc_svm_fields, sizeof(struct kfd_criu_svm_rec) },
		[KFD_CRIU_REC_COUNTS] = { kc_counts_fields, sizeof(struct kfd_criu_counts_rec) },
		[KFD_CRIU_REC_TRAP_HANDLER] = { kc_trap_fields, sizeof(struct kfd_criu_trap_rec) },
	};

	if (type >= KFD_CRIU_REC_NR || !t[type].fields) {
		*fixed = 0;
		return kc_no_fields;
	}
	*fixed = t[type].fixed;
	return t[type].fields;
}

/**
 * kc_field_value() - read a field of a payload
 * @f: the field
 * @payload: the record's payload, at least as long as its fixed part
 *
 * Return: the value, in CPU byte order.
 */
u64 kc_field_value(const struct kc_field *f, const u8 *payload)
{
	__le64 v64;
	__le32 v32;

	if (f->size == 8) {
		memcpy(&v64, payload + f->off, sizeof(v64));
		return le64_to_cpu(v64);
	}
	memcpy(&v32, payload + f->off, sizeof(v32));
	return le32_to_cpu(v32);
}

/**
 * struct kc_decode_opts - how to decode
 * @json: JSON instead of text
 * @data: dump variable parts in hex
 */
struct kc_decode_opts {
	bool json;
	bool data;
};

static void kc_hex(FILE *f, const u8 *p, u32 len)
{
	while (len--)
		fprintf(f, "%02x", *p++);
}

static void kc_text_record(FILE *f, const struct kc_record *r,
			   const struct kc_decode_opts *o)
{
	const struct kc_field *fl;
	u32 fixed;
	u64 v;

	fl = r->skipped ? kc_no_fields : kc_fields_of(r->type, &fixed);
	if (r->skipped)
		fixed = 0;
	fprintf(f, "%llu %s", (unsigned long long)r->offset, kc_type_name(r->type));
	if (r->type >= KFD_CRIU_REC_NR || r->skipped)
		fprintf(f, "(%u) skipped", r->type);
	fprintf(f, " flags=%#x length=%u", r->flags, r->length);
	for (; fl->name; fl++) {
		v = kc_field_value(fl, r->payload);
		fprintf(f, fl->hex ? " %s=%#llx" : " %s=%llu", fl->name,
			(unsigned long long)v);
	}
	if (r->length > fixed) {
		fprintf(f, " data=%u bytes fnv1a64=%016llx", r->length - fixed,
			(unsigned long long)kc_fnv1a64(r->payload + fixed,
						       r->length - fixed));
		if (o->data) {
			fprintf(f, " hex=");
			kc_hex(f, r->payload + fixed, r->length - fixed);
		}
	}
	fprintf(f, "\n");
}

static void kc_json_string(FILE *f, const char *s, size_t max)
{
	size_t i;

	fputc('"', f);
	for (i = 0; i < max && s[i]; i++) {
		if (s[i] == '"' || s[i] == '\\')
			fprintf(f, "\\%c", s[i]);
		else if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			fprintf(f, "\\u%04x", (unsigned char)s[i]);
		else
			fputc(s[i], f);
	}
	fputc('"', f);
}

static void kc_json_record(FILE *f, const struct kc_record *r,
			   const struct kc_decode_opts *o, bool last)
{
	const struct kc_field *fl;
	const char *sep = "";
	u32 fixed;

	fl = r->skipped ? kc_no_fields : kc_fields_of(r->type, &fixed);
	if (r->skipped)
		fixed = 0;
	fprintf(f, "    {\"offset\": %llu, \"type\": \"%s\", \"type_id\": %u, \"flags\": %u, \"length\": %u, \"crc32c\": %u, \"skipped\": %s, \"fields\": {",
		(unsigned long long)r->offset, kc_type_name(r->type), r->type,
		r->flags, r->length, r->crc, r->skipped ? "true" : "false");
	for (; fl->name; fl++, sep = ", ")
		fprintf(f, "%s\"%s\": %llu", sep, fl->name,
			(unsigned long long)kc_field_value(fl, r->payload));
	fprintf(f, "}, \"data\": ");
	if (r->length > fixed) {
		fprintf(f, "{\"bytes\": %u, \"fnv1a64\": \"%016llx\"",
			r->length - fixed,
			(unsigned long long)kc_fnv1a64(r->payload + fixed,
						       r->length - fixed));
		if (o->data) {
			fprintf(f, ", \"hex\": \"");
			kc_hex(f, r->payload + fixed, r->length - fixed);
			fprintf(f, "\"");
		}
		fprintf(f, "}");
	} else {
		fprintf(f, "null");
	}
	fprintf(f, "}%s\n", last ? "" : ",");
}

static void kc_json_header(FILE *f, const struct kc_stream *s)
{
	const struct kfd_criu_image_header *h = &s->hdr;

	if (!s->header_ok) {
		fprintf(f, "  \"header\": null,\n");
		return;
	}
	fprintf(f, "  \"header\": {\"version\": %u, \"flags\": %u, \"header_size\": %u, \"release\": ",
		le32_to_cpu(h->version), le32_to_cpu(h->flags),
		le32_to_cpu(h->header_size));
	kc_json_string(f, (const char *)h->release, KFD_CRIU_RELEASE_LEN);
	fprintf(f, ", \"crc32c\": %u},\n", le32_to_cpu(h->crc));
}

static void kc_json_error(FILE *f, const struct kc_diag *d)
{
	if (!d->err) {
		fprintf(f, "  \"error\": null\n");
		return;
	}
	fprintf(f, "  \"error\": {\"offset\": %llu, \"where\": \"%s\", \"errno\": \"%s\", \"errno_value\": %d, \"reason\": ",
		(unsigned long long)d->offset,
		d->in_header ? "header" : kc_type_name(d->type),
		kc_errno_name(d->err), -d->err);
	kc_json_string(f, d->reason, sizeof(d->reason));
	fprintf(f, "}\n");
}

static void kc_decode_json(FILE *f, const struct kc_stream *s,
			   const struct kc_decode_opts *o)
{
	size_t i;

	fprintf(f, "{\n  \"schema\": %d,\n  \"file\": ", KC_SCHEMA_VERSION);
	kc_json_string(f, s->name, 4096);
	fprintf(f, ",\n  \"size\": %zu,\n", s->size);
	kc_json_header(f, s);
	fprintf(f, "  \"records\": [\n");
	for (i = 0; i < s->nrecs; i++)
		kc_json_record(f, &s->recs[i], o, i + 1 == s->nrecs);
	fprintf(f, "  ],\n  \"complete\": %s,\n  \"trailing_bytes\": %zu,\n",
		s->ended ? "true" : "false",
		s->ended ? s->size - s->consumed : 0);
	kc_json_error(f, &s->diag);
	fprintf(f, "}\n");
}

static void kc_decode_text(FILE *f, const struct kc_stream *s,
			   const struct kc_decode_opts *o)
{
	size_t i;

	if (s->header_ok)
		fprintf(f, "0 HEADER version=%u flags=%#x header_size=%u release=%.*s\n",
			le32_to_cpu(s->hdr.version), le32_to_cpu(s->hdr.flags),
			le32_to_cpu(s->hdr.header_size), KFD_CRIU_RELEASE_LEN,
			(const char *)s->hdr.release);
	for (i = 0; i < s->nrecs; i++)
		kc_text_record(f, &s->recs[i], o);
	if (s->ended && s->consumed < s->size)
		fprintf(f, "%zu TRAILING %zu bytes after END (RESTORE does not read them)\n",
			s->consumed, s->size - s->consumed);
	if (s->diag.err)
		kc_diag_print(f, s->name, &s->diag);
}

/**
 * kc_cmd_decode() - "kfdcrit decode [--format text|json] [--data] FILE"
 * @argc: arguments after "decode"
 * @argv: them
 *
 * Return: exit status: 0, the reader's errno for a stream it refuses
 * (after printing what it read), or the errno of reading the file.
 */
int kc_cmd_decode(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "data", no_argument, NULL, 'd' },
		{ }
	};
	struct kc_decode_opts o = { };
	struct kc_stream s;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:d", longopts, NULL)) != -1) {
		if (c == 'd')
			o.data = true;
		else if (c == 'f' && (!strcmp(optarg, "json") || !strcmp(optarg, "text")))
			o.json = !strcmp(optarg, "json");
		else
			return KC_EXIT_USAGE;
	}
	if (optind != argc - 1)
		return KC_EXIT_USAGE;
	ret = kc_stream_load(&s, argv[optind]);
	if (ret) {
		fprintf(stderr, "kfdcrit: %s: %s\n", argv[optind], strerror(-ret));
		return -ret;
	}
	if (o.json)
		kc_decode_json(stdout, &s, &o);
	else
		kc_decode_text(stdout, &s, &o);
	ret = -s.diag.err;
	kc_stream_free(&s);
	return ret;
}
