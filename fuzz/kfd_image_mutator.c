// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: structure-aware mutator of KFD CRIU images
 *
 * See kfd_image_mutator.h. A mutation frames the stream into records,
 * applies one or two changes and then, with high probability, recomputes
 * the END counts and the CRCs. Leaving them stale now and then keeps the
 * count and CRC checks themselves under test. Every mutation stays within
 * the caller's capacity; one that would not fit degrades to a bit flip.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kfd_image_mutator.h"

#define CRC32C_POLY_REFLECTED	0x82f63b78U
#define NO_RECORD		SIZE_MAX
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#endif
#ifndef __printf
#define __printf(a, b)		__attribute__((format(printf, a, b)))
#endif

/**
 * struct kfd_img_field - a field the FIELD and HEADER mutations target
 * @name: for the description
 * @off: offset in the payload (or the header)
 * @size: 4 or 8 bytes
 */
struct kfd_img_field {
	const char *name;
	uint16_t off;
	uint8_t size;
};

static const struct kfd_img_field header_fields[] = {
	{ "magic", 0, 4 }, { "version", 8, 4 }, { "flags", 12, 4 },
	{ "header_size", 16, 4 }, { "release", 20, 4 },
	{ "release_tail", 80, 4 }, { "crc", 84, 4 },
};

static const struct kfd_img_field end_fields[] = {
	{ "records", 0, 4 }, { "reserved", 4, 4 }, { "payload_bytes", 8, 8 },
};

static const struct kfd_img_field compat_fields[] = {
	{ "num_gpus", 0, 4 }, { "reserved", 4, 4 },
};

static const struct kfd_img_field process_fields[] = {
	{ "xnack_enabled", 0, 4 }, { "runtime_state", 4, 4 },
	{ "r_debug", 8, 8 }, { "ttmp_setup", 16, 4 },
	{ "num_events", 20, 4 }, { "signal_page_size", 24, 4 },
	{ "num_bos", 28, 4 },
};

static const struct kfd_img_field event_fields[] = {
	{ "event_id", 0, 4 }, { "type", 4, 4 }, { "auto_reset", 8, 4 },
	{ "signaled", 12, 4 }, { "event_age", 16, 8 }, { "mem_va", 24, 8 },
	{ "mem_gpu_id", 32, 4 }, { "mem_error_type", 36, 4 },
	{ "mem_not_present", 40, 4 }, { "mem_read_only", 44, 4 },
	{ "mem_no_execute", 48, 4 }, { "mem_imprecise", 52, 4 },
	{ "hw_reset_type", 56, 4 }, { "hw_reset_cause", 60, 4 },
	{ "hw_memory_lost", 64, 4 }, { "hw_gpu_id", 68, 4 },
	{ "reserved", 72, 4 }, { "reserved2", 76, 4 },
};

static const struct kfd_img_field gpu_fields[] = {
	{ "gpu_id", 0, 4 }, { "gfx_target_version", 4, 4 },
	{ "device_id", 8, 4 }, { "revision_id", 12, 4 }, { "num_xcc", 16, 4 },
	{ "partition_mode", 20, 4 }, { "vram_size", 24, 8 },
	{ "cwsr_size", 32, 4 }, { "ctl_stack_size", 36, 4 },
	{ "mec_fw_version", 40, 4 }, { "sdma_fw_version", 44, 4 },
	{ "flags", 48, 4 }, { "scratch_backing_va", 52, 4 },
};

static const struct kfd_img_field bo_fields[] = {
	{ "va", 0, 8 }, { "size", 8, 8 }, { "userptr", 16, 8 },
	{ "mmap_offset", 24, 8 }, { "mapped_gpus", 32, 8 },
	{ "alloc_flags", 40, 4 }, { "handle", 44, 4 }, { "gpu_index", 48, 4 },
	{ "flags", 52, 4 },
};

static const struct kfd_img_field bo_data_fields[] = {
	{ "bo_index", 0, 4 }, { "reserved", 4, 4 }, { "offset", 8, 8 },
};

static const struct kfd_img_field counts_fields[] = {
	{ "num_queues", 0, 4 }, { "num_svm_ranges", 4, 4 },
	{ "reserved", 8, 4 }, { "reserved2", 12, 4 },
};

/* The fixed part; the CU mask words after it are reached by BYTES */
static const struct kfd_img_field queue_fields[] = {
	{ "ring_base", 0, 8 }, { "read_ptr_addr", 8, 8 },
	{ "write_ptr_addr", 16, 8 }, { "eop_base", 24, 8 },
	{ "ctx_save_restore_base", 32, 8 }, { "queue_id", 40, 4 },
	{ "gpu_index", 44, 4 }, { "type", 48, 4 }, { "format", 52, 4 },
	{ "priority", 56, 4 }, { "queue_percent", 60, 4 },
	{ "pm4_target_xcc", 64, 4 }, { "ring_size", 68, 4 },
	{ "eop_size", 72, 4 }, { "ctx_save_restore_size", 76, 4 },
	{ "ctl_stack_size", 80, 4 }, { "doorbell_offset", 84, 4 },
	{ "sdma_engine_id", 88, 4 }, { "gws", 92, 4 },
	{ "num_cu_mask", 96, 4 }, { "num_xcc", 100, 4 },
	{ "reserved", 104, 4 }, { "reserved2", 108, 4 },
};

/* Header and dynamic fields; the control stack is reached by BYTES */
static const struct kfd_img_field queue_state_fields[] = {
	{ "queue_index", 0, 4 }, { "xcc", 4, 4 }, { "reserved", 8, 4 },
	{ "data_len", 12, 4 }, { "rptr", 16, 8 }, { "wptr", 24, 8 },
	{ "cntl_stack_offset", 32, 4 }, { "wg_state_offset", 36, 4 },
	{ "eop_rptr", 40, 4 }, { "eop_wptr", 44, 4 },
};

static const struct kfd_img_field svm_fields[] = {
	{ "start", 0, 8 }, { "size", 8, 8 }, { "access", 16, 8 },
	{ "access_in_place", 24, 8 }, { "no_access", 32, 8 },
	{ "preferred_loc", 40, 4 }, { "prefetch_loc", 44, 4 },
	{ "flags", 48, 4 }, { "granularity", 52, 4 }, { "reserved", 56, 4 },
	{ "reserved2", 60, 4 },
};

static const struct kfd_img_field record_header_fields[] = {
	{ "rec.type", 0, 4 }, { "rec.flags", 4, 4 },
};

/* Boundaries of the limits in kfd_criu_image.h and of the integer types */
static const uint32_t interesting32[] = {
	0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 63, 64, 255, 256, 511, 512, 4095,
	4096, 4097, 8191, 8192, 32760, 32767, 32768, 32769, 32776, 65535,
	65536, 65537, 0x100000, 0x100001, 0x3fffffff, 0x40000000, 0x40000001,
	0x7ffffffe, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff,
};

static const uint64_t interesting64[] = {
	0, 1, 2, 0xffffffffULL, 0x100000000ULL, 0x7fffffffffffffffULL,
	0x8000000000000000ULL, 0xfffffffffffffffeULL, 0xffffffffffffffffULL,
};

static const uint32_t lengths[] = {
	0, 1, 7, 8, 9, 12, 15, 16, 17, 31, 32, 33, 79, 80, 81, 2048, 4096,
	32760, 32768, 32769, 32776, 0xfffff, 0x100000, 0x100001, 0x7fffffff,
	0xffffffff,
};

static const uint32_t insert_types[] = {
	0, KFD_IMG_REC_END, KFD_IMG_REC_COMPAT, KFD_IMG_REC_PROCESS,
	KFD_IMG_REC_SIGNAL_PAGE, KFD_IMG_REC_EVENT, 6, 7, 0x100, 0x7fffffff,
	0xffffffff,
};

static const uint32_t insert_flags[] = { 0, 1, 2, 3, 0x80000000 };

static const char * const mutation_names[KFD_IMG_MUT_NR] = {
	[KFD_IMG_MUT_BITFLIP] = "bitflip",
	[KFD_IMG_MUT_BYTES] = "bytes",
	[KFD_IMG_MUT_FIELD] = "field",
	[KFD_IMG_MUT_LENGTH] = "length",
	[KFD_IMG_MUT_TRUNCATE] = "truncate",
	[KFD_IMG_MUT_SWAP] = "swap",
	[KFD_IMG_MUT_DUPLICATE] = "duplicate",
	[KFD_IMG_MUT_DROP] = "drop",
	[KFD_IMG_MUT_INSERT] = "insert",
	[KFD_IMG_MUT_HEADER] = "header",
};

/* Relative frequency of each kind when the caller lets the mutator pick */
static const unsigned int mutation_weights[KFD_IMG_MUT_NR] = {
	[KFD_IMG_MUT_BITFLIP] = 3,
	[KFD_IMG_MUT_BYTES] = 2,
	[KFD_IMG_MUT_FIELD] = 6,
	[KFD_IMG_MUT_LENGTH] = 2,
	[KFD_IMG_MUT_TRUNCATE] = 2,
	[KFD_IMG_MUT_SWAP] = 1,
	[KFD_IMG_MUT_DUPLICATE] = 1,
	[KFD_IMG_MUT_DROP] = 1,
	[KFD_IMG_MUT_INSERT] = 1,
	[KFD_IMG_MUT_HEADER] = 1,
};

/**
 * kfd_img_get32() - read a little-endian 32-bit value
 * @p: where
 *
 * Return: the value.
 */
uint32_t kfd_img_get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/**
 * kfd_img_get64() - read a little-endian 64-bit value
 * @p: where
 *
 * Return: the value.
 */
uint64_t kfd_img_get64(const uint8_t *p)
{
	return kfd_img_get32(p) | (uint64_t)kfd_img_get32(p + 4) << 32;
}

/**
 * kfd_img_put32() - write a little-endian 32-bit value
 * @p: where
 * @v: the value
 */
void kfd_img_put32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

/**
 * kfd_img_put64() - write a little-endian 64-bit value
 * @p: where
 * @v: the value
 */
void kfd_img_put64(uint8_t *p, uint64_t v)
{
	kfd_img_put32(p, (uint32_t)v);
	kfd_img_put32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t crc32c_table[256];

static void crc32c_init_table(void)
{
	unsigned int i, bit;
	uint32_t crc;

	for (i = 0; i < 256; i++) {
		crc = i;
		for (bit = 0; bit < 8; bit++)
			crc = (crc >> 1) ^ (crc & 1 ? CRC32C_POLY_REFLECTED : 0);
		crc32c_table[i] = crc;
	}
}

/**
 * kfd_img_crc32c() - CRC32C as the image stream uses it
 * @crc: 0 to start, or the result of a previous call to continue
 * @buf: bytes to add
 * @len: number of bytes
 *
 * Return: the CRC (all-ones seed, inverted result, like kfd_criu_crc32c()).
 */
uint32_t kfd_img_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (!crc32c_table[1])
		crc32c_init_table();
	crc = ~crc;
	while (len--)
		crc = crc32c_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/**
 * kfd_img_frame() - find the records of a stream as the reader would
 * @data: the stream
 * @len: its length
 * @recs: receives the records
 * @max_recs: entries at @recs
 *
 * Walks record headers from the end of the stream header on. Stops after
 * END, after a record that does not fit in @len (reported incomplete), or
 * when @recs is full.
 *
 * Return: the number of records found.
 */
size_t kfd_img_frame(const uint8_t *data, size_t len,
		     struct kfd_img_record *recs, size_t max_recs)
{
	size_t off = KFD_IMG_HEADER_SIZE, n = 0;
	struct kfd_img_record *rec;

	while (n < max_recs && len >= off + KFD_IMG_REC_HEADER_SIZE) {
		rec = &recs[n++];
		rec->off = off;
		rec->type = kfd_img_get32(data + off);
		rec->flags = kfd_img_get32(data + off + 4);
		rec->length = kfd_img_get32(data + off + 8);
		rec->complete = len - off >= KFD_IMG_REC_OVERHEAD &&
				rec->length <= len - off - KFD_IMG_REC_OVERHEAD;
		if (!rec->complete || rec->type == KFD_IMG_REC_END)
			break;
		off += KFD_IMG_REC_OVERHEAD + rec->length;
	}
	return n;
}

/**
 * kfd_img_fix_end() - make the END record count the records before it
 * @data: the stream
 * @len: its length
 * @recs: scratch for the framing
 * @max_recs: entries at @recs
 */
void kfd_img_fix_end(uint8_t *data, size_t len, struct kfd_img_record *recs,
		     size_t max_recs)
{
	size_t n = kfd_img_frame(data, len, recs, max_recs), i;
	struct kfd_img_record *end;
	uint64_t payload = 0;

	if (!n)
		return;
	end = &recs[n - 1];
	if (end->type != KFD_IMG_REC_END || !end->complete ||
	    end->length < KFD_IMG_END_SIZE)
		return;
	for (i = 0; i + 1 < n; i++)
		payload += recs[i].length;
	kfd_img_put32(data + end->off + KFD_IMG_REC_HEADER_SIZE, (uint32_t)(n - 1));
	kfd_img_put64(data + end->off + KFD_IMG_REC_HEADER_SIZE + 8, payload);
}

/**
 * kfd_img_fix_crcs() - recompute the header CRC and every record trailer
 * @data: the stream
 * @len: its length
 * @recs: scratch for the framing
 * @max_recs: entries at @recs
 */
void kfd_img_fix_crcs(uint8_t *data, size_t len, struct kfd_img_record *recs,
		      size_t max_recs)
{
	size_t n = kfd_img_frame(data, len, recs, max_recs), i, body;

	if (len >= KFD_IMG_HEADER_SIZE)
		kfd_img_put32(data + KFD_IMG_HEADER_CRC_OFF,
			      kfd_img_crc32c(0, data, KFD_IMG_HEADER_CRC_OFF));
	for (i = 0; i < n; i++) {
		if (!recs[i].complete)
			continue;
		body = KFD_IMG_REC_HEADER_SIZE + recs[i].length;
		kfd_img_put32(data + recs[i].off + body,
			      kfd_img_crc32c(0, data + recs[i].off, body));
	}
}

/**
 * kfd_img_mutator_init() - allocate a mutator's scratch space
 * @m: the mutator
 * @cap: largest stream it will be asked to produce
 *
 * Return: 0, or -1 when out of memory.
 */
int kfd_img_mutator_init(struct kfd_img_mutator *m, size_t cap)
{
	memset(m, 0, sizeof(*m));
	m->cap = cap;
	m->max_recs = cap / KFD_IMG_REC_OVERHEAD + 1;
	m->scratch = malloc(cap);
	m->recs = calloc(m->max_recs, sizeof(*m->recs));
	if (!m->scratch || !m->recs) {
		kfd_img_mutator_free(m);
		return -1;
	}
	kfd_img_mutator_seed(m, 1);
	return 0;
}

/**
 * kfd_img_mutator_free() - free a mutator's scratch space
 * @m: the mutator
 */
void kfd_img_mutator_free(struct kfd_img_mutator *m)
{
	free(m->scratch);
	free(m->recs);
	m->scratch = NULL;
	m->recs = NULL;
}

/**
 * kfd_img_mutator_seed() - restart the mutator's random sequence
 * @m: the mutator
 * @seed: any value; equal seeds give equal mutations
 */
void kfd_img_mutator_seed(struct kfd_img_mutator *m, uint64_t seed)
{
	/* splitmix64 spreads nearby seeds apart */
	seed += 0x9e3779b97f4a7c15ULL;
	seed = (seed ^ (seed >> 30)) * 0xbf58476d1ce4e5b9ULL;
	seed = (seed ^ (seed >> 27)) * 0x94d049bb133111ebULL;
	seed ^= seed >> 31;
	m->rng = seed ? seed : 1;
}

/**
 * kfd_img_rand() - next value of the mutator's random sequence
 * @m: the mutator
 *
 * Return: 64 random bits (xorshift64*).
 */
uint64_t kfd_img_rand(struct kfd_img_mutator *m)
{
	m->rng ^= m->rng >> 12;
	m->rng ^= m->rng << 25;
	m->rng ^= m->rng >> 27;
	return m->rng * 0x2545f4914f6cdd1dULL;
}

static size_t rand_below(struct kfd_img_mutator *m, size_t n)
{
	return n ? (size_t)(kfd_img_rand(m) % n) : 0;
}

static bool one_in(struct kfd_img_mutator *m, unsigned int n)
{
	return rand_below(m, n) == 0;
}

/**
 * kfd_img_mutation_name() - name of a kind of mutation
 * @kind: the kind
 *
 * Return: a short lowercase name.
 */
const char *kfd_img_mutation_name(enum kfd_img_mutation kind)
{
	return kind < KFD_IMG_MUT_NR ? mutation_names[kind] : "?";
}

static const char *record_name(uint32_t type)
{
	switch (type) {
	case KFD_IMG_REC_END:
		return "END";
	case KFD_IMG_REC_COMPAT:
		return "COMPAT";
	case KFD_IMG_REC_PROCESS:
		return "PROCESS";
	case KFD_IMG_REC_SIGNAL_PAGE:
		return "SIGNAL_PAGE";
	case KFD_IMG_REC_EVENT:
		return "EVENT";
	case KFD_IMG_REC_GPU:
		return "GPU";
	case KFD_IMG_REC_BO:
		return "BO";
	case KFD_IMG_REC_BO_DATA:
		return "BO_DATA";
	case KFD_IMG_REC_QUEUE:
		return "QUEUE";
	case KFD_IMG_REC_QUEUE_STATE:
		return "QUEUE_STATE";
	case KFD_IMG_REC_SVM_RANGE:
		return "SVM_RANGE";
	case KFD_IMG_REC_COUNTS:
		return "COUNTS";
	case KFD_IMG_REC_TRAP_HANDLER:
		return "TRAP_HANDLER";
	}
	return "unknown";
}

/* Appends to the description of the current mutation. */
__printf(2, 3)
static void describe(struct kfd_img_mutator *m, const char *fmt, ...)
{
	size_t used = strlen(m->desc);
	va_list ap;

	if (used + 1 >= sizeof(m->desc))
		return;
	va_start(ap, fmt);
	vsnprintf(m->desc + used, sizeof(m->desc) - used, fmt, ap);
	va_end(ap);
}

/*
 * The stream being mutated: the caller's buffer, its length and capacity,
 * and its framing, refreshed by reframe() after every structural change.
 */
struct stream {
	uint8_t *data;
	size_t len;
	size_t cap;
	size_t nrecs;
};

static void reframe(struct kfd_img_mutator *m, struct stream *s)
{
	s->nrecs = kfd_img_frame(s->data, s->len, m->recs, m->max_recs);
}

/* A random complete record, or NO_RECORD. */
static size_t pick_record(struct kfd_img_mutator *m, const struct stream *s)
{
	size_t i, start;

	if (!s->nrecs)
		return NO_RECORD;
	start = rand_below(m, s->nrecs);
	for (i = 0; i < s->nrecs; i++)
		if (m->recs[(start + i) % s->nrecs].complete)
			return (start + i) % s->nrecs;
	return NO_RECORD;
}

static size_t record_size(const struct kfd_img_record *rec)
{
	return KFD_IMG_REC_OVERHEAD + rec->length;
}

static uint8_t *payload(const struct stream *s, const struct kfd_img_record *rec)
{
	return s->data + rec->off + KFD_IMG_REC_HEADER_SIZE;
}

static void mutate_bitflip(struct kfd_img_mutator *m, struct stream *s)
{
	unsigned int flips = 1 + rand_below(m, 4), i;
	size_t pos;

	describe(m, "bitflip");
	for (i = 0; i < flips && s->len; i++) {
		pos = rand_below(m, s->len);
		s->data[pos] ^= 1U << rand_below(m, 8);
		describe(m, " @%zu", pos);
	}
}

static void mutate_bytes(struct kfd_img_mutator *m, struct stream *s)
{
	static const uint8_t values[] = { 0x00, 0x01, 0x7f, 0x80, 0xff };
	size_t r = pick_record(m, s), n, pos, i;
	struct kfd_img_record *rec;

	if (r == NO_RECORD || !m->recs[r].length)
		return mutate_bitflip(m, s);
	rec = &m->recs[r];
	n = 1 + rand_below(m, 8);
	pos = rand_below(m, rec->length);
	describe(m, "bytes %s#%zu+%zu", record_name(rec->type), r, pos);
	for (i = 0; i < n && pos + i < rec->length; i++)
		payload(s, rec)[pos + i] = one_in(m, 2) ?
			values[rand_below(m, ARRAY_SIZE(values))] :
			(uint8_t)kfd_img_rand(m);
}

static const struct kfd_img_field *fields_of(uint32_t type, size_t *n)
{
	switch (type) {
	case KFD_IMG_REC_END:
		*n = ARRAY_SIZE(end_fields);
		return end_fields;
	case KFD_IMG_REC_COMPAT:
		*n = ARRAY_SIZE(compat_fields);
		return compat_fields;
	case KFD_IMG_REC_PROCESS:
		*n = ARRAY_SIZE(process_fields);
		return process_fields;
	case KFD_IMG_REC_EVENT:
		*n = ARRAY_SIZE(event_fields);
		return event_fields;
	case KFD_IMG_REC_GPU:
		*n = ARRAY_SIZE(gpu_fields);
		return gpu_fields;
	case KFD_IMG_REC_BO:
		*n = ARRAY_SIZE(bo_fields);
		return bo_fields;
	case KFD_IMG_REC_BO_DATA:
		*n = ARRAY_SIZE(bo_data_fields);
		return bo_data_fields;
	case KFD_IMG_REC_QUEUE:
		*n = ARRAY_SIZE(queue_fields);
		return queue_fields;
	case KFD_IMG_REC_QUEUE_STATE:
		*n = ARRAY_SIZE(queue_state_fields);
		return queue_state_fields;
	case KFD_IMG_REC_SVM_RANGE:
		*n = ARRAY_SIZE(svm_fields);
		return svm_fields;
	case KFD_IMG_REC_COUNTS:
		*n = ARRAY_SIZE(counts_fields);
		return counts_fields;
	}
	*n = 0;
	return NULL;
}

/* Number of EVENT records, for boundary values of counts. */
static uint32_t count_events(struct kfd_img_mutator *m, const struct stream *s)
{
	uint32_t n = 0;
	size_t i;

	for (i = 0; i < s->nrecs; i++)
		n += m->recs[i].type == KFD_IMG_REC_EVENT;
	return n;
}

/* The id of some other EVENT record, to make duplicates and descents. */
static uint32_t other_event_id(struct kfd_img_mutator *m,
			       const struct stream *s, uint32_t fallback)
{
	size_t i, start = rand_below(m, s->nrecs ? s->nrecs : 1), r;

	for (i = 0; i < s->nrecs; i++) {
		r = (start + i) % s->nrecs;
		if (m->recs[r].type == KFD_IMG_REC_EVENT && m->recs[r].complete &&
		    m->recs[r].length >= 4)
			return kfd_img_get32(payload(s, &m->recs[r]));
	}
	return fallback;
}

static uint32_t pick_value32(struct kfd_img_mutator *m, const struct stream *s,
			     const struct kfd_img_field *f, uint32_t cur)
{
	uint32_t events;

	switch (rand_below(m, 8)) {
	case 0:
		return cur + 1;
	case 1:
		return cur - 1;
	case 2:
		return cur ^ 1U << rand_below(m, 32);
	case 3:
		if (!strcmp(f->name, "event_id"))
			return other_event_id(m, s, cur);
		if (!strcmp(f->name, "num_events") || !strcmp(f->name, "records")) {
			events = count_events(m, s);
			return events + (uint32_t)rand_below(m, 3) - 1;
		}
		break;
	}
	return interesting32[rand_below(m, ARRAY_SIZE(interesting32))];
}

static uint64_t pick_value64(struct kfd_img_mutator *m, uint64_t cur)
{
	switch (rand_below(m, 4)) {
	case 0:
		return cur + 1;
	case 1:
		return cur - 1;
	}
	return interesting64[rand_below(m, ARRAY_SIZE(interesting64))];
}

static void set_field(struct kfd_img_mutator *m, const struct stream *s,
		      uint8_t *base, const struct kfd_img_field *f)
{
	uint64_t v64;
	uint32_t v32;

	if (f->size == 8) {
		v64 = pick_value64(m, kfd_img_get64(base + f->off));
		kfd_img_put64(base + f->off, v64);
		describe(m, ".%s=%#llx", f->name, (unsigned long long)v64);
	} else {
		v32 = pick_value32(m, s, f, kfd_img_get32(base + f->off));
		kfd_img_put32(base + f->off, v32);
		describe(m, ".%s=%#x", f->name, v32);
	}
}

/* A signal page slot: empty, unsignaled or a random value. */
static void set_slot(struct kfd_img_mutator *m, const struct stream *s,
		     const struct kfd_img_record *rec)
{
	size_t slot = rand_below(m, rec->length / 8);
	uint64_t v = one_in(m, 2) ? ~0ULL : kfd_img_rand(m);

	kfd_img_put64(payload(s, rec) + slot * 8, v);
	describe(m, ".slot[%zu]=%#llx", slot, (unsigned long long)v);
}

static void mutate_field(struct kfd_img_mutator *m, struct stream *s)
{
	size_t r = pick_record(m, s), n;
	const struct kfd_img_field *fields;
	struct kfd_img_record *rec;

	if (r == NO_RECORD)
		return mutate_bitflip(m, s);
	rec = &m->recs[r];
	fields = fields_of(rec->type, &n);
	describe(m, "field %s#%zu", record_name(rec->type), r);
	if (one_in(m, 8)) {
		set_field(m, s, s->data + rec->off,
			  &record_header_fields[rand_below(m, 2)]);
		return;
	}
	if (rec->type == KFD_IMG_REC_SIGNAL_PAGE && rec->length >= 8)
		return set_slot(m, s, rec);
	if (!fields || rec->length < fields[n - 1].off + fields[n - 1].size)
		return set_field(m, s, s->data + rec->off,
				 &record_header_fields[rand_below(m, 2)]);
	if (rec->type == KFD_IMG_REC_END)
		m->fixed_end = false;	/* the target itself */
	set_field(m, s, payload(s, rec), &fields[rand_below(m, n)]);
}

static void mutate_header(struct kfd_img_mutator *m, struct stream *s)
{
	const struct kfd_img_field *f;

	if (s->len < KFD_IMG_HEADER_SIZE)
		return mutate_bitflip(m, s);
	f = &header_fields[rand_below(m, ARRAY_SIZE(header_fields))];
	describe(m, "header");
	if (!strcmp(f->name, "crc"))
		m->fixed_crc = false;
	if (!strcmp(f->name, "release_tail") && one_in(m, 2)) {
		/* non-NUL padding after the terminator, or no terminator */
		s->data[KFD_IMG_RELEASE_OFF + KFD_IMG_RELEASE_LEN - 1 -
			rand_below(m, 8)] = 'x';
		describe(m, ".release_padding");
		return;
	}
	set_field(m, s, s->data, f);
}

/* A run of bytes for rebuild(); a NULL @src stands for zeros. */
struct piece {
	const uint8_t *src;
	size_t len;
};

/*
 * Concatenates @pieces in the scratch buffer and copies the result over
 * the stream. Returns false, leaving the stream as it was, when the result
 * would not fit.
 */
static bool rebuild(struct kfd_img_mutator *m, struct stream *s,
		    const struct piece *pieces, size_t n)
{
	size_t pos = 0, i;

	for (i = 0; i < n; i++) {
		if (pieces[i].len > s->cap - pos)
			return false;
		if (pieces[i].src)
			memcpy(m->scratch + pos, pieces[i].src, pieces[i].len);
		else
			memset(m->scratch + pos, 0, pieces[i].len);
		pos += pieces[i].len;
	}
	memcpy(s->data, m->scratch, pos);
	s->len = pos;
	reframe(m, s);
	return true;
}

/* Inserts a copy of @len bytes at @src_off in front of offset @at. */
static bool copy_record(struct kfd_img_mutator *m, struct stream *s,
			size_t src_off, size_t len, size_t at)
{
	struct piece p[3] = {
		{ s->data, at },
		{ s->data + src_off, len },
		{ s->data + at, s->len - at },
	};

	return rebuild(m, s, p, 3);
}

/* Offset at which a record can be placed: a record start or the end. */
static size_t pick_slot_offset(struct kfd_img_mutator *m, const struct stream *s)
{
	size_t i = rand_below(m, s->nrecs + 1);
	const struct kfd_img_record *last;

	if (i < s->nrecs)
		return m->recs[i].off;
	if (!s->nrecs)
		return s->len < KFD_IMG_HEADER_SIZE ? s->len : KFD_IMG_HEADER_SIZE;
	last = &m->recs[s->nrecs - 1];
	return last->complete ? last->off + record_size(last) : s->len;
}

static void mutate_swap(struct kfd_img_mutator *m, struct stream *s)
{
	size_t a = pick_record(m, s), b = pick_record(m, s), t;
	struct kfd_img_record ra, rb;
	struct piece p[5];
	size_t a_end, b_end;

	if (a == NO_RECORD || a == b)
		return mutate_bitflip(m, s);
	if (a > b) {
		t = a;
		a = b;
		b = t;
	}
	ra = m->recs[a];
	rb = m->recs[b];
	a_end = ra.off + record_size(&ra);
	b_end = rb.off + record_size(&rb);
	describe(m, "swap %s#%zu %s#%zu", record_name(ra.type), a,
		 record_name(rb.type), b);
	p[0] = (struct piece){ s->data, ra.off };
	p[1] = (struct piece){ s->data + rb.off, record_size(&rb) };
	p[2] = (struct piece){ s->data + a_end, rb.off - a_end };
	p[3] = (struct piece){ s->data + ra.off, record_size(&ra) };
	p[4] = (struct piece){ s->data + b_end, s->len - b_end };
	rebuild(m, s, p, 5);
}

static void mutate_duplicate(struct kfd_img_mutator *m, struct stream *s)
{
	size_t r = pick_record(m, s), at;
	struct kfd_img_record rec;

	if (r == NO_RECORD)
		return mutate_bitflip(m, s);
	rec = m->recs[r];
	at = pick_slot_offset(m, s);
	describe(m, "duplicate %s#%zu @%zu", record_name(rec.type), r, at);
	if (!copy_record(m, s, rec.off, record_size(&rec), at))
		describe(m, " (no room)");
}

static void mutate_drop(struct kfd_img_mutator *m, struct stream *s)
{
	size_t r = pick_record(m, s);
	struct kfd_img_record rec;
	struct piece p[2];

	if (r == NO_RECORD)
		return mutate_bitflip(m, s);
	rec = m->recs[r];
	describe(m, "drop %s#%zu", record_name(rec.type), r);
	p[0] = (struct piece){ s->data, rec.off };
	p[1] = (struct piece){ s->data + rec.off + record_size(&rec),
			       s->len - rec.off - record_size(&rec) };
	rebuild(m, s, p, 2);
}

/* Payload length for an inserted record of @type. */
static uint32_t insert_length(struct kfd_img_mutator *m, uint32_t type)
{
	static const uint32_t small[] = { 0, 1, 8, 16, 100, 256, 257, 1000 };

	if (one_in(m, 4))
		return small[rand_below(m, ARRAY_SIZE(small))];
	switch (type) {
	case KFD_IMG_REC_END:
		return KFD_IMG_END_SIZE;
	case KFD_IMG_REC_COMPAT:
		return KFD_IMG_COMPAT_SIZE;
	case KFD_IMG_REC_PROCESS:
		return KFD_IMG_PROCESS_SIZE;
	case KFD_IMG_REC_SIGNAL_PAGE:
		return 8 * (1 + rand_below(m, 16));
	case KFD_IMG_REC_EVENT:
		return KFD_IMG_EVENT_SIZE;
	}
	return small[rand_below(m, ARRAY_SIZE(small))];
}

/* Fills a new payload: a copy of a record of the same type, or noise. */
static void insert_payload(struct kfd_img_mutator *m, const struct stream *s,
			   uint32_t type, uint8_t *out, uint32_t len)
{
	size_t i, r = pick_record(m, s);
	const struct kfd_img_record *src = r == NO_RECORD ? NULL : &m->recs[r];

	if (src && src->type == type && src->length >= len) {
		memcpy(out, payload(s, src), len);
		return;
	}
	for (i = 0; i < len; i++)
		out[i] = one_in(m, 2) ? 0 : (uint8_t)kfd_img_rand(m);
}

static void mutate_insert(struct kfd_img_mutator *m, struct stream *s)
{
	uint32_t type = insert_types[rand_below(m, ARRAY_SIZE(insert_types))];
	uint32_t flags = insert_flags[rand_below(m, ARRAY_SIZE(insert_flags))];
	uint32_t len = insert_length(m, type);
	size_t at = pick_slot_offset(m, s), size = KFD_IMG_REC_OVERHEAD + len;
	uint8_t *rec;
	struct piece p[3];

	describe(m, "insert type %#x flags %#x len %u @%zu", type, flags, len, at);
	if (size > s->cap - s->len || at > s->len)
		return;
	rec = malloc(size);
	if (!rec)
		return;
	kfd_img_put32(rec, type);
	kfd_img_put32(rec + 4, flags);
	kfd_img_put32(rec + 8, len);
	insert_payload(m, s, type, rec + KFD_IMG_REC_HEADER_SIZE, len);
	kfd_img_put32(rec + KFD_IMG_REC_HEADER_SIZE + len,
		      kfd_img_crc32c(0, rec, KFD_IMG_REC_HEADER_SIZE + len));
	p[0] = (struct piece){ s->data, at };
	p[1] = (struct piece){ rec, size };
	p[2] = (struct piece){ s->data + at, s->len - at };
	rebuild(m, s, p, 3);
	free(rec);
}

/* Changes the length field only: the reader then misframes the stream. */
static void set_length_only(struct kfd_img_mutator *m, struct stream *s,
			    const struct kfd_img_record *rec, uint32_t len)
{
	kfd_img_put32(s->data + rec->off + 8, len);
	describe(m, " header only");
}

static void mutate_length(struct kfd_img_mutator *m, struct stream *s)
{
	size_t r = pick_record(m, s);
	struct kfd_img_record rec;
	struct piece p[4];
	uint32_t len;
	size_t keep;

	if (r == NO_RECORD)
		return mutate_bitflip(m, s);
	rec = m->recs[r];
	len = one_in(m, 3) ? rec.length + (uint32_t)rand_below(m, 17) - 8 :
	      lengths[rand_below(m, ARRAY_SIZE(lengths))];
	describe(m, "length %s#%zu %u->%u", record_name(rec.type), r,
		 rec.length, len);
	if (one_in(m, 3) || len > KFD_IMG_MAX_RECORD_LEN + 1)
		return set_length_only(m, s, &rec, len);

	/* Resize the payload too, so the stream stays framed */
	kfd_img_put32(s->data + rec.off + 8, len);
	keep = len < rec.length ? len : rec.length;
	p[0] = (struct piece){ s->data, rec.off + KFD_IMG_REC_HEADER_SIZE + keep };
	p[1] = (struct piece){ NULL, len - keep };
	p[2] = (struct piece){ s->data + rec.off + KFD_IMG_REC_HEADER_SIZE +
			       rec.length, 4 };
	p[3] = (struct piece){ s->data + rec.off + record_size(&rec),
			       s->len - rec.off - record_size(&rec) };
	if (!rebuild(m, s, p, 4))
		describe(m, " (no room)");
}

static void mutate_truncate(struct kfd_img_mutator *m, struct stream *s)
{
	static const long deltas[] = { -16, -12, -4, -1, 0, 1, 4, 12 };
	size_t cut;
	long d;

	if (one_in(m, 4) || !s->nrecs) {
		cut = rand_below(m, s->len);
	} else {
		cut = m->recs[rand_below(m, s->nrecs)].off;
		d = deltas[rand_below(m, ARRAY_SIZE(deltas))];
		if (d < 0 && (size_t)-d > cut)
			d = 0;
		cut += d;
	}
	if (cut > s->len)
		cut = s->len;
	describe(m, "truncate %zu->%zu", s->len, cut);
	s->len = cut;
	m->fixed_end = false;
	m->fixed_crc = false;
}

static void mutate_one(struct kfd_img_mutator *m, struct stream *s,
		       enum kfd_img_mutation kind)
{
	switch (kind) {
	case KFD_IMG_MUT_BITFLIP:
		return mutate_bitflip(m, s);
	case KFD_IMG_MUT_BYTES:
		return mutate_bytes(m, s);
	case KFD_IMG_MUT_FIELD:
		return mutate_field(m, s);
	case KFD_IMG_MUT_LENGTH:
		return mutate_length(m, s);
	case KFD_IMG_MUT_TRUNCATE:
		return mutate_truncate(m, s);
	case KFD_IMG_MUT_SWAP:
		return mutate_swap(m, s);
	case KFD_IMG_MUT_DUPLICATE:
		return mutate_duplicate(m, s);
	case KFD_IMG_MUT_DROP:
		return mutate_drop(m, s);
	case KFD_IMG_MUT_INSERT:
		return mutate_insert(m, s);
	case KFD_IMG_MUT_HEADER:
		return mutate_header(m, s);
	case KFD_IMG_MUT_NR:
		break;
	}
}

static enum kfd_img_mutation pick_kind(struct kfd_img_mutator *m)
{
	unsigned int total = 0, i, x;

	for (i = 0; i < KFD_IMG_MUT_NR; i++)
		total += mutation_weights[i];
	x = rand_below(m, total);
	for (i = 0; i < KFD_IMG_MUT_NR; i++) {
		if (x < mutation_weights[i])
			break;
		x -= mutation_weights[i];
	}
	return (enum kfd_img_mutation)i;
}

/**
 * kfd_img_mutate() - apply one structure-aware mutation
 * @m: the mutator, initialized with a capacity of at least @cap
 * @data: the stream, changed in place
 * @len: its length
 * @cap: bytes available at @data
 * @kind: an &enum kfd_img_mutation, or -1 to pick one at random
 *
 * After the mutation, the END counts are recomputed with probability 7/8
 * and the CRCs with probability 15/16, except where the mutation targeted
 * them; @m->desc says what was done.
 *
 * Return: the new length, at most @cap.
 */
size_t kfd_img_mutate(struct kfd_img_mutator *m, uint8_t *data, size_t len,
		      size_t cap, int kind)
{
	struct stream s = { .data = data, .len = len,
			    .cap = cap < m->cap ? cap : m->cap };
	bool stacked;

	if (s.len > s.cap)
		s.len = s.cap;
	m->desc[0] = '\0';
	m->kind = kind >= 0 && kind < KFD_IMG_MUT_NR ?
		  (enum kfd_img_mutation)kind : pick_kind(m);
	m->fixed_end = !one_in(m, 8);
	m->fixed_crc = !one_in(m, 16);
	stacked = one_in(m, 6);
	reframe(m, &s);
	mutate_one(m, &s, m->kind);
	if (stacked) {
		describe(m, " + ");
		reframe(m, &s);
		mutate_one(m, &s, pick_kind(m));
	}
	if (m->fixed_end)
		kfd_img_fix_end(s.data, s.len, m->recs, m->max_recs);
	if (m->fixed_crc)
		kfd_img_fix_crcs(s.data, s.len, m->recs, m->max_recs);
	describe(m, "%s%s", m->fixed_end ? "" : " (END stale)",
		 m->fixed_crc ? "" : " (CRC stale)");
	return s.len;
}

/*
 * The range table: what RESTORE accepts in each field, the "Accepted
 * values" section of Documentation/gpu/amdgpu/amdkfd-criu.rst in C.
 */

#define U32_ALL		0xffffffffULL
#define U64_ALL		UINT64_MAX
#define VA_END		(1ULL << 48)
#define EV(t)		(1U << (t))
/* Event types, KFD_IOC_EVENT_*: those with a signal slot and the rest */
#define EV_SLOT		(EV(0) | EV(5))
#define EV_NOSLOT	(EV_ALL & ~EV_SLOT)
#define EV_HW		EV(3)
#define EV_MEM		EV(8)
#define EV_ALL		0x1ffU
#define CTX		KFD_IMG_RANGE_CTX
#define BITS		KFD_IMG_RANGE_BITS
#define POW2		KFD_IMG_RANGE_POW2

/* The fields of the memory and hardware exception data of an event */
#define EV_EXCEPTION(name, off, size, types, hi)			\
	{ KFD_IMG_REC_EVENT, name, off, size, 0, 0, types, 0, hi, 0 },	\
	{ KFD_IMG_REC_EVENT, name, off, size, 0, 0, EV_ALL & ~(types), 0, 0, 0 }

const struct kfd_img_range kfd_img_ranges[] = {
	{ 0, "version", 8, 4, 0, 0, 0, 1, 1, 0 },
	{ 0, "flags", 12, 4, 0, 0, 0, 0, 0, 0 },
	{ 0, "header_size", 16, 4, 0, 0, 0, 88, 88, 0 },

	{ KFD_IMG_REC_COMPAT, "num_gpus", 0, 4, CTX, 0, 0, 0, 64, 0 },
	{ KFD_IMG_REC_COMPAT, "reserved", 4, 4, 0, 0, 0, 0, 0, 0 },

	{ KFD_IMG_REC_PROCESS, "xnack_enabled", 0, 4, 0, 0, 0, 0, 1, 0 },
	{ KFD_IMG_REC_PROCESS, "runtime_state", 4, 4, 0, 0, 0, 0, 1, 0 },
	{ KFD_IMG_REC_PROCESS, "r_debug", 8, 8, CTX, 0, 0, 0, U64_ALL, 0 },
	{ KFD_IMG_REC_PROCESS, "ttmp_setup", 16, 4, CTX, 0, 0, 0, 1, 0 },
	{ KFD_IMG_REC_PROCESS, "num_events", 20, 4, CTX, 0, 0, 0, 65536, 0 },
	{ KFD_IMG_REC_PROCESS, "signal_page_size", 24, 4, CTX, 8, 0, 0, 32768,
	  2048 },
	{ KFD_IMG_REC_PROCESS, "num_bos", 28, 4, CTX, 0, 0, 0, 262144, 0 },

	{ KFD_IMG_REC_SIGNAL_PAGE, "slot[0]", 0, 8, 0, 0, 0, 0, U64_ALL, 0 },
	{ KFD_IMG_REC_SIGNAL_PAGE, "slot[1]", 8, 8, 0, 0, 0, 0, U64_ALL, 0 },

	{ KFD_IMG_REC_EVENT, "event_id", 0, 4, CTX, 0, EV_SLOT, 1, 4095, 256 },
	{ KFD_IMG_REC_EVENT, "event_id", 0, 4, CTX, 0, EV_NOSLOT, 0x40000000,
	  0x7ffffffe, 0 },
	{ KFD_IMG_REC_EVENT, "type", 4, 4, 0, 0, 0, 0, 8, 0 },
	{ KFD_IMG_REC_EVENT, "auto_reset", 8, 4, 0, 0, 0, 0, 1, 0 },
	{ KFD_IMG_REC_EVENT, "signaled", 12, 4, 0, 0, 0, 0, 1, 0 },
	{ KFD_IMG_REC_EVENT, "event_age", 16, 8, 0, 0, 0, 0, 1ULL << 62, 0 },
	EV_EXCEPTION("mem_va", 24, 8, EV_MEM, U64_ALL),
	EV_EXCEPTION("mem_gpu_id", 32, 4, EV_MEM, U32_ALL),
	EV_EXCEPTION("mem_error_type", 36, 4, EV_MEM, 3),
	EV_EXCEPTION("mem_not_present", 40, 4, EV_MEM, 1),
	EV_EXCEPTION("mem_read_only", 44, 4, EV_MEM, 1),
	EV_EXCEPTION("mem_no_execute", 48, 4, EV_MEM, 1),
	EV_EXCEPTION("mem_imprecise", 52, 4, EV_MEM, 1),
	EV_EXCEPTION("hw_reset_type", 56, 4, EV_HW, 1),
	EV_EXCEPTION("hw_reset_cause", 60, 4, EV_HW, 1),
	EV_EXCEPTION("hw_memory_lost", 64, 4, EV_HW, 1),
	EV_EXCEPTION("hw_gpu_id", 68, 4, EV_HW, U32_ALL),
	{ KFD_IMG_REC_EVENT, "reserved", 72, 4, 0, 0, 0, 0, 0, 0 },
	{ KFD_IMG_REC_EVENT, "reserved2", 76, 4, 0, 0, 0, 0, 0, 0 },

	{ KFD_IMG_REC_GPU, "gpu_id", 0, 4, CTX, 0, 0, 1, U32_ALL, 0 },
	{ KFD_IMG_REC_GPU, "num_xcc", 16, 4, CTX, 0, 0, 1, 16, 0 },
	{ KFD_IMG_REC_GPU, "flags", 48, 4, BITS, 0, 0, 0, 1, 0 },
	{ KFD_IMG_REC_GPU, "scratch_backing_va", 52, 4, 0, 0, 0, 0, U32_ALL,
	  0 },

	{ KFD_IMG_REC_TRAP_HANDLER, "gpu_index", 0, 4, CTX, 0, 0, 0, 63, 0 },
	{ KFD_IMG_REC_TRAP_HANDLER, "reserved", 4, 4, 0, 0, 0, 0, 0, 0 },
	{ KFD_IMG_REC_TRAP_HANDLER, "tba_addr", 8, 8, CTX, 4, 0, 0, VA_END - 1, 0 },
	{ KFD_IMG_REC_TRAP_HANDLER, "tma_addr", 16, 8, CTX, 0, 0, 0, VA_END - 1, 0 },

	{ KFD_IMG_REC_BO, "va", 0, 8, CTX, 4096, 0, 0, VA_END - 4096, 0 },
	{ KFD_IMG_REC_BO, "size", 8, 8, CTX, 4096, 0, 4096, VA_END, 0 },
	{ KFD_IMG_REC_BO, "userptr", 16, 8, CTX, 4096, 0, 0, U64_ALL, 0 },
	{ KFD_IMG_REC_BO, "mmap_offset", 24, 8, 0, 4096, 0, 0, U64_ALL, 0 },
	{ KFD_IMG_REC_BO, "mapped_gpus", 32, 8, CTX, 0, 0, 0, U64_ALL, 0 },
	{ KFD_IMG_REC_BO, "alloc_flags", 40, 4, BITS | CTX, 0, 0, 0,
	  0xff80001f, 0 },
	{ KFD_IMG_REC_BO, "handle", 44, 4, CTX, 0, 0, 0, 0x7ffffffe, 0 },
	{ KFD_IMG_REC_BO, "gpu_index", 48, 4, CTX, 0, 0, 0, 63, 0 },
	{ KFD_IMG_REC_BO, "flags", 52, 4, BITS | CTX, 0, 0, 0, 1, 0 },

	{ KFD_IMG_REC_BO_DATA, "bo_index", 0, 4, CTX, 0, 0, 0, 262143, 0 },
	{ KFD_IMG_REC_BO_DATA, "reserved", 4, 4, 0, 0, 0, 0, 0, 0 },
	{ KFD_IMG_REC_BO_DATA, "offset", 8, 8, CTX, 1U << 19, 0, 0,
	  VA_END - 1, 0 },

	{ KFD_IMG_REC_COUNTS, "num_queues", 0, 4, CTX, 0, 0, 0, 1024, 0 },
	{ KFD_IMG_REC_COUNTS, "num_svm_ranges", 4, 4, CTX, 0, 0, 0, 262144, 0 },
	{ KFD_IMG_REC_COUNTS, "reserved", 8, 4, 0, 0, 0, 0, 0, 0 },
	{ KFD_IMG_REC_COUNTS, "reserved2", 12, 4, 0, 0, 0, 0, 0, 0 },

	{ KFD_IMG_REC_QUEUE, "ring_base", 0, 8, CTX, 256, 0, 256, VA_END - 1024,
	  0 },
	{ KFD_IMG_REC_QUEUE, "read_ptr_addr", 8, 8, 0, 4, 0, 4, VA_END - 8, 0 },
	{ KFD_IMG_REC_QUEUE, "write_ptr_addr", 16, 8, 0, 4, 0, 4, VA_END - 8, 0 },
	{ KFD_IMG_REC_QUEUE, "eop_base", 24, 8, CTX, 256, 0, 0, VA_END - 1, 0 },
	{ KFD_IMG_REC_QUEUE, "ctx_save_restore_base", 32, 8, CTX, 4096, 0, 0,
	  VA_END - 1, 0 },
	{ KFD_IMG_REC_QUEUE, "queue_id", 40, 4, CTX, 0, 0, 0, 1023, 0 },
	{ KFD_IMG_REC_QUEUE, "gpu_index", 44, 4, CTX, 0, 0, 0, 63, 0 },
	{ KFD_IMG_REC_QUEUE, "type", 48, 4, 0, 0, 0, 0, 3, 0 },
	{ KFD_IMG_REC_QUEUE, "format", 52, 4, CTX, 0, 0, 0, 1, 0 },
	{ KFD_IMG_REC_QUEUE, "priority", 56, 4, 0, 0, 0, 0, 15, 0 },
	{ KFD_IMG_REC_QUEUE, "queue_percent", 60, 4, 0, 0, 0, 0, 100, 0 },
	{ KFD_IMG_REC_QUEUE, "pm4_target_xcc", 64, 4, CTX, 0, 0, 0, 15, 0 },
	{ KFD_IMG_REC_QUEUE, "ring_size", 68, 4, POW2, 0, 0, 1024, 0x80000000,
	  0 },
	{ KFD_IMG_REC_QUEUE, "eop_size", 72, 4, CTX, 4, 0, 0, 1U << 20, 0 },
	{ KFD_IMG_REC_QUEUE, "ctx_save_restore_size", 76, 4, CTX, 0, 0, 0,
	  U32_ALL, 0 },
	{ KFD_IMG_REC_QUEUE, "ctl_stack_size", 80, 4, CTX, 4, 0, 0, 1U << 18, 0 },
	{ KFD_IMG_REC_QUEUE, "doorbell_offset", 84, 4, CTX, 0, 0, 0, 1023, 0 },
	{ KFD_IMG_REC_QUEUE, "sdma_engine_id", 88, 4, CTX, 0, 0, 0, 15, 0 },
	{ KFD_IMG_REC_QUEUE, "gws", 92, 4, CTX, 0, 0, 0, 1, 0 },
	{ KFD_IMG_REC_QUEUE, "num_cu_mask", 96, 4, CTX, 32, 0, 0, 1024, 0 },
	{ KFD_IMG_REC_QUEUE, "num_xcc", 100, 4, CTX, 0, 0, 1, 16, 0 },
	{ KFD_IMG_REC_QUEUE, "reserved", 104, 4, 0, 0, 0, 0, 0, 0 },
	{ KFD_IMG_REC_QUEUE, "reserved2", 108, 4, 0, 0, 0, 0, 0, 0 },

	{ KFD_IMG_REC_QUEUE_STATE, "queue_index", 0, 4, CTX, 0, 0, 0, 1023, 0 },
	{ KFD_IMG_REC_QUEUE_STATE, "xcc", 4, 4, CTX, 0, 0, 0, 15, 0 },
	{ KFD_IMG_REC_QUEUE_STATE, "reserved", 8, 4, 0, 0, 0, 0, 0, 0 },
	{ KFD_IMG_REC_QUEUE_STATE, "data_len", 12, 4, CTX, 0, 0, 0, 1U << 18,
	  0 },
	{ KFD_IMG_REC_QUEUE_STATE, "cntl_stack_offset", 32, 4, CTX, 4, 0, 0,
	  1U << 18, 0 },

	{ KFD_IMG_REC_SVM_RANGE, "start", 0, 8, CTX, 4096, 0, 0, VA_END - 4096,
	  0 },
	{ KFD_IMG_REC_SVM_RANGE, "size", 8, 8, CTX, 4096, 0, 4096, VA_END, 0 },
	{ KFD_IMG_REC_SVM_RANGE, "access", 16, 8, CTX, 0, 0, 0, U64_ALL, 0 },
	{ KFD_IMG_REC_SVM_RANGE, "access_in_place", 24, 8, CTX, 0, 0, 0,
	  U64_ALL, 0 },
	{ KFD_IMG_REC_SVM_RANGE, "no_access", 32, 8, CTX, 0, 0, 0, U64_ALL, 0 },
	{ KFD_IMG_REC_SVM_RANGE, "preferred_loc", 40, 4, CTX, 0, 0, 0, U32_ALL,
	  0 },
	{ KFD_IMG_REC_SVM_RANGE, "prefetch_loc", 44, 4, CTX, 0, 0, 0, U32_ALL,
	  0 },
	{ KFD_IMG_REC_SVM_RANGE, "flags", 48, 4, BITS, 0, 0, 0, 0xff, 0 },
	{ KFD_IMG_REC_SVM_RANGE, "granularity", 52, 4, 0, 0, 0, 0, 0x3f, 0 },
	{ KFD_IMG_REC_SVM_RANGE, "reserved", 56, 4, 0, 0, 0, 0, 0, 0 },
	{ KFD_IMG_REC_SVM_RANGE, "reserved2", 60, 4, 0, 0, 0, 0, 0, 0 },

	{ KFD_IMG_REC_END, "records", 0, 4, CTX, 0, 0, 0, U32_ALL, 0 },
	{ KFD_IMG_REC_END, "reserved", 4, 4, 0, 0, 0, 0, 0, 0 },
	{ KFD_IMG_REC_END, "payload_bytes", 8, 8, CTX, 0, 0, 0, U64_ALL, 0 },
};

const size_t kfd_img_num_ranges = ARRAY_SIZE(kfd_img_ranges);

static uint64_t range_get(const struct kfd_img_range *r, const uint8_t *base)
{
	return r->size == 8 ? kfd_img_get64(base + r->off) :
			      kfd_img_get32(base + r->off);
}

/**
 * kfd_img_range_applies() - whether a row of kfd_img_ranges[] covers a
 *	record
 * @r: the row
 * @type: the record's type, 0 for the stream header
 * @base: its payload (the header for @type 0)
 * @len: bytes at @base
 *
 * Return: true when @r is a row of @type whose field lies in @len and,
 * for an EVENT row of some event types only, the event is of one of them.
 */
bool kfd_img_range_applies(const struct kfd_img_range *r, uint32_t type,
			   const uint8_t *base, uint32_t len)
{
	uint32_t ev_type;

	if (r->type != type || len < (uint32_t)r->off + r->size)
		return false;
	if (!r->ev_types)
		return true;
	ev_type = len >= KFD_IMG_EV_TYPE + 4 ? kfd_img_get32(base + KFD_IMG_EV_TYPE) :
					       32;
	return ev_type < 32 && (r->ev_types & 1U << ev_type);
}

/**
 * kfd_img_in_range() - whether a value is one a row accepts
 * @r: the row
 * @v: the value
 *
 * Return: true when @v is in [@r->lo, @r->hi] (a subset of the bits @r->hi
 * for %KFD_IMG_RANGE_BITS), a multiple of @r->align and, for
 * %KFD_IMG_RANGE_POW2, a power of two. Bounds through other records
 * (%KFD_IMG_RANGE_CTX) are not checked here.
 */
bool kfd_img_in_range(const struct kfd_img_range *r, uint64_t v)
{
	if (r->flags & KFD_IMG_RANGE_BITS) {
		if (v & ~r->hi)
			return false;
	} else if (v < r->lo || v > r->hi) {
		return false;
	}
	if (r->align > 1 && v % r->align)
		return false;
	return !(r->flags & KFD_IMG_RANGE_POW2) || !(v & (v - 1));
}

static bool check_one(uint32_t type, const uint8_t *base, uint32_t len,
		      size_t index, char *why, size_t why_len)
{
	const struct kfd_img_range *r;
	uint64_t v;
	size_t i;

	for (i = 0; i < kfd_img_num_ranges; i++) {
		r = &kfd_img_ranges[i];
		if (!kfd_img_range_applies(r, type, base, len))
			continue;
		v = range_get(r, base);
		if (kfd_img_in_range(r, v))
			continue;
		snprintf(why, why_len, "%s#%zu.%s=%#llx outside [%#llx, %#llx]",
			 type ? record_name(type) : "header", index, r->name,
			 (unsigned long long)v, (unsigned long long)r->lo,
			 (unsigned long long)r->hi);
		return false;
	}
	return true;
}

/**
 * kfd_img_check_ranges() - check every field of an image against the table
 * @data: an image RESTORE accepted
 * @len: its length
 * @recs: scratch for the framing
 * @max_recs: entries at @recs
 * @why: receives the first field out of range
 * @why_len: bytes at @why
 *
 * Return: true when every field of the header and of every record up to
 * END is within its row of kfd_img_ranges[].
 */
bool kfd_img_check_ranges(const uint8_t *data, size_t len,
			  struct kfd_img_record *recs, size_t max_recs,
			  char *why, size_t why_len)
{
	size_t n = kfd_img_frame(data, len, recs, max_recs), i;

	if (len >= KFD_IMG_HEADER_SIZE &&
	    !check_one(0, data, KFD_IMG_HEADER_SIZE, 0, why, why_len))
		return false;
	for (i = 0; i < n; i++)
		if (recs[i].complete && recs[i].type &&
		    !check_one(recs[i].type,
			       data + recs[i].off + KFD_IMG_REC_HEADER_SIZE,
			       recs[i].length, i, why, why_len))
			return false;
	return true;
}

/*
 * The sweep
 */

#define MAX_SWEEP_VALUES	16

static void add_value(uint64_t *vals, size_t *n, uint64_t v, uint64_t cur)
{
	size_t i;

	if (v == cur || *n == MAX_SWEEP_VALUES)
		return;
	for (i = 0; i < *n; i++)
		if (vals[i] == v)
			return;
	vals[(*n)++] = v;
}

/*
 * The boundaries of a row: its ends and the values just outside them, the
 * ends of the field's type, a misaligned value, the row's extra boundary
 * and, for a field other records bound, the neighbours of its value.
 */
static size_t range_values(const struct kfd_img_range *r, uint64_t cur,
			   uint64_t *vals)
{
	uint64_t tmax = r->size == 8 ? U64_ALL : U32_ALL, out;
	size_t n = 0;

	add_value(vals, &n, 0, cur);
	add_value(vals, &n, tmax, cur);
	if (r->flags & KFD_IMG_RANGE_BITS) {
		out = ~r->hi & tmax;
		add_value(vals, &n, r->hi, cur);
		add_value(vals, &n, out & -out, cur);
		return n;
	}
	add_value(vals, &n, r->lo, cur);
	add_value(vals, &n, r->hi, cur);
	if (r->lo)
		add_value(vals, &n, r->lo - 1, cur);
	if (r->hi < tmax)
		add_value(vals, &n, r->hi + 1, cur);
	if (r->align > 1)
		add_value(vals, &n, r->hi - r->align / 2, cur);
	if (r->extra) {
		add_value(vals, &n, r->extra - 1, cur);
		add_value(vals, &n, r->extra, cur);
	}
	if (r->flags & KFD_IMG_RANGE_CTX) {
		add_value(vals, &n, (cur - 1) & tmax, cur);
		add_value(vals, &n, (cur + 1) & tmax, cur);
	}
	return n;
}

/* Whether an earlier record has the same type (and event type). */
static bool sweep_seen(const uint8_t *data, const struct kfd_img_record *recs,
		       size_t r)
{
	const uint8_t *p = data + recs[r].off + KFD_IMG_REC_HEADER_SIZE, *q;
	size_t i;

	for (i = 0; i < r; i++) {
		if (recs[i].type != recs[r].type || !recs[i].complete)
			continue;
		if (recs[r].type != KFD_IMG_REC_EVENT)
			return true;
		q = data + recs[i].off + KFD_IMG_REC_HEADER_SIZE;
		if (recs[i].length >= 8 && recs[r].length >= 8 &&
		    kfd_img_get32(q + KFD_IMG_EV_TYPE) ==
		    kfd_img_get32(p + KFD_IMG_EV_TYPE))
			return true;
	}
	return false;
}

/* Applies step @step of one record, or counts its steps off @step. */
static bool sweep_record(struct kfd_img_mutator *m, uint8_t *data, size_t len,
			 size_t r, unsigned int *step)
{
	uint32_t type = r == NO_RECORD ? 0 : m->recs[r].type;
	size_t off = r == NO_RECORD ? 0 : m->recs[r].off + KFD_IMG_REC_HEADER_SIZE;
	uint32_t plen = r == NO_RECORD ? KFD_IMG_HEADER_SIZE : m->recs[r].length;
	const struct kfd_img_range *row;
	uint64_t vals[MAX_SWEEP_VALUES];
	size_t i, n;

	for (i = 0; i < kfd_img_num_ranges; i++) {
		row = &kfd_img_ranges[i];
		if (!kfd_img_range_applies(row, type, data + off, plen))
			continue;
		n = range_values(row, range_get(row, data + off), vals);
		if (*step >= n) {
			*step -= n;
			continue;
		}
		describe(m, "sweep %s#%zu.%s=%#llx",
			 type ? record_name(type) : "header",
			 r == NO_RECORD ? 0 : r, row->name,
			 (unsigned long long)vals[*step]);
		if (row->size == 8)
			kfd_img_put64(data + off + row->off, vals[*step]);
		else
			kfd_img_put32(data + off + row->off, (uint32_t)vals[*step]);
		if (type != KFD_IMG_REC_END)
			kfd_img_fix_end(data, len, m->recs, m->max_recs);
		kfd_img_fix_crcs(data, len, m->recs, m->max_recs);
		return true;
	}
	return false;
}

/**
 * kfd_img_sweep() - set one field to one boundary value, systematically
 * @m: the mutator
 * @data: a valid image, changed in place
 * @len: its length
 * @step: which field and value, from 0 up
 *
 * Step by step, every field of the stream header and of the records of
 * the image takes every boundary of its row in kfd_img_ranges[]: the ends
 * of the accepted range, the values just outside, the ends of its type, a
 * misaligned value and, where other records bound it, its neighbours. Of
 * records of one type only the first is swept, except that EVENT records
 * are swept once per event type, since the event type decides which row
 * applies. END counts and CRCs are then recomputed unless END itself is
 * the target. Unlike kfd_img_mutate(), this reaches each boundary of each
 * field in a bounded number of images.
 *
 * Return: false when @step is past the last field.
 */
bool kfd_img_sweep(struct kfd_img_mutator *m, uint8_t *data, size_t len,
		   unsigned int step)
{
	size_t n = kfd_img_frame(data, len, m->recs, m->max_recs), r;

	m->desc[0] = '\0';
	m->kind = KFD_IMG_MUT_FIELD;
	if (len >= KFD_IMG_HEADER_SIZE &&
	    sweep_record(m, data, len, NO_RECORD, &step))
		return true;
	for (r = 0; r < n; r++) {
		/* Type 0 is an unknown record, not the header's rows */
		if (!m->recs[r].complete || !m->recs[r].type ||
		    sweep_seen(data, m->recs, r))
			continue;
		if (sweep_record(m, data, len, r, &step))
			return true;
	}
	return false;
}
