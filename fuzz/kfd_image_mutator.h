/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright 2026 The amdkfd-criu authors
 */

#ifndef KFD_IMAGE_MUTATOR_H
#define KFD_IMAGE_MUTATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * DOC: structure-aware mutations of KFD CRIU image streams
 *
 * Random bytes rarely get past the CRC of a record, so a fuzzer or a
 * mutation campaign that only flips bits tests the CRC check and little
 * else. This mutator knows the stream layout: it frames the records the
 * way the kernel's reader does, changes fields to boundary values, changes
 * lengths and counts, truncates, reorders, duplicates, drops and inserts
 * records, and then (usually) recomputes the END counts and every CRC, so
 * that the mutated image reaches the validators behind them.
 *
 * Plain C99 with no kernel headers: the libFuzzer target on the host
 * (fuzz/) and the mutation campaign in the test VM (e2e/) both build it.
 * The layout constants are repeated here; the fuzzer checks them against
 * kfd_criu_image.h at compile time.
 *
 * Every choice comes from a seeded generator, so (seed, image) names a
 * mutation exactly and a failure reproduces.
 */

/* Stream layout, as kfd_criu_image.h declares it */
#define KFD_IMG_MAGIC			"KFDCRIU\0"
#define KFD_IMG_MAGIC_LEN		8
#define KFD_IMG_HEADER_SIZE		88
#define KFD_IMG_HEADER_CRC_OFF		84
#define KFD_IMG_VERSION_OFF		8
#define KFD_IMG_RELEASE_OFF		20
#define KFD_IMG_RELEASE_LEN		64
#define KFD_IMG_REC_HEADER_SIZE		12
#define KFD_IMG_REC_OVERHEAD		16
#define KFD_IMG_MANDATORY		1U
#define KFD_IMG_MAX_RECORD_LEN		(1U << 20)
#define KFD_IMG_MAX_EVENTS		65536U
#define KFD_IMG_SIGNAL_PAGE_MAX		32768U
#define KFD_IMG_FIRST_NONSIGNAL_ID	0x40000000U

#define KFD_IMG_REC_END			1U
#define KFD_IMG_REC_COMPAT		2U
#define KFD_IMG_REC_PROCESS		3U
#define KFD_IMG_REC_SIGNAL_PAGE		4U
#define KFD_IMG_REC_EVENT		5U
#define KFD_IMG_REC_GPU			6U
#define KFD_IMG_REC_BO			7U
#define KFD_IMG_REC_BO_DATA		8U
#define KFD_IMG_REC_QUEUE		9U
#define KFD_IMG_REC_QUEUE_STATE		10U
#define KFD_IMG_REC_SVM_RANGE		11U
#define KFD_IMG_REC_COUNTS		12U
#define KFD_IMG_REC_TRAP_HANDLER	13U

#define KFD_IMG_END_SIZE		16
#define KFD_IMG_COMPAT_SIZE		8
#define KFD_IMG_PROCESS_SIZE		32
#define KFD_IMG_EVENT_SIZE		80
#define KFD_IMG_GPU_SIZE		56
#define KFD_IMG_BO_SIZE			56
#define KFD_IMG_BO_DATA_HDR_SIZE	16
#define KFD_IMG_QUEUE_SIZE		112
#define KFD_IMG_QUEUE_STATE_FIXED	48
#define KFD_IMG_SVM_SIZE		64
#define KFD_IMG_COUNTS_SIZE		16

/* Field offsets in the payloads that the campaign's model reads */
#define KFD_IMG_PROC_XNACK		0
#define KFD_IMG_PROC_RUNTIME_STATE	4
#define KFD_IMG_PROC_R_DEBUG		8
#define KFD_IMG_PROC_TTMP_SETUP		16
#define KFD_IMG_PROC_NUM_EVENTS		20
#define KFD_IMG_PROC_SIGNAL_PAGE_SIZE	24
#define KFD_IMG_EV_ID			0
#define KFD_IMG_EV_TYPE			4
#define KFD_IMG_EV_AUTO_RESET		8
#define KFD_IMG_EV_SIGNALED		12
#define KFD_IMG_EV_AGE			16
#define KFD_IMG_EV_MEM_VA		24
#define KFD_IMG_EV_MEM_GPU_ID		32
#define KFD_IMG_EV_MEM_ERROR_TYPE	36
#define KFD_IMG_EV_MEM_NOT_PRESENT	40
#define KFD_IMG_EV_MEM_READ_ONLY	44
#define KFD_IMG_EV_MEM_NO_EXECUTE	48
#define KFD_IMG_EV_MEM_IMPRECISE	52
#define KFD_IMG_EV_HW_RESET_TYPE	56
#define KFD_IMG_EV_HW_RESET_CAUSE	60
#define KFD_IMG_EV_HW_MEMORY_LOST	64
#define KFD_IMG_EV_HW_GPU_ID		68

/**
 * enum kfd_img_mutation - kinds of mutation
 * @KFD_IMG_MUT_BITFLIP: flip one to four bits anywhere
 * @KFD_IMG_MUT_BYTES: overwrite a few bytes of a payload with random ones
 * @KFD_IMG_MUT_FIELD: set a field of a known record to a boundary value
 * @KFD_IMG_MUT_LENGTH: change a record's length, with or without its payload
 * @KFD_IMG_MUT_TRUNCATE: cut the stream, mostly near a record boundary
 * @KFD_IMG_MUT_SWAP: exchange two records
 * @KFD_IMG_MUT_DUPLICATE: insert a copy of a record somewhere
 * @KFD_IMG_MUT_DROP: remove a record
 * @KFD_IMG_MUT_INSERT: insert a new record of a known or unknown type
 * @KFD_IMG_MUT_HEADER: change a field of the stream header
 * @KFD_IMG_MUT_NR: number of kinds
 */
enum kfd_img_mutation {
	KFD_IMG_MUT_BITFLIP,
	KFD_IMG_MUT_BYTES,
	KFD_IMG_MUT_FIELD,
	KFD_IMG_MUT_LENGTH,
	KFD_IMG_MUT_TRUNCATE,
	KFD_IMG_MUT_SWAP,
	KFD_IMG_MUT_DUPLICATE,
	KFD_IMG_MUT_DROP,
	KFD_IMG_MUT_INSERT,
	KFD_IMG_MUT_HEADER,
	KFD_IMG_MUT_NR
};

/**
 * struct kfd_img_record - one record as framed in a buffer
 * @off: offset of the record header
 * @type: record type
 * @flags: record flags
 * @length: payload length the header claims
 * @complete: header, payload and CRC trailer all lie inside the buffer
 */
struct kfd_img_record {
	size_t off;
	uint32_t type;
	uint32_t flags;
	uint32_t length;
	bool complete;
};

/**
 * struct kfd_img_mutator - state of a mutator
 * @rng: xorshift state, never zero
 * @scratch: buffer of @cap bytes for rebuilding a stream
 * @cap: largest stream the mutator produces
 * @recs: framing of the stream being mutated
 * @max_recs: entries at @recs
 * @kind: kind of the last mutation
 * @desc: what the last mutation did, for logs and reproduction
 * @fixed_end: the last mutation recomputed the END counts
 * @fixed_crc: the last mutation recomputed the CRCs
 */
struct kfd_img_mutator {
	uint64_t rng;
	uint8_t *scratch;
	size_t cap;
	struct kfd_img_record *recs;
	size_t max_recs;
	enum kfd_img_mutation kind;
	char desc[160];
	bool fixed_end;
	bool fixed_crc;
};

/**
 * struct kfd_img_range - the values RESTORE accepts in one field
 * @type: record type, 0 for the stream header
 * @name: the field
 * @off: its offset in the payload (in the header for @type 0)
 * @size: 4 or 8 bytes
 * @flags: %KFD_IMG_RANGE_CTX, %KFD_IMG_RANGE_BITS, %KFD_IMG_RANGE_POW2
 * @align: the value is a multiple of this; 0 or 1 for any
 * @ev_types: EVENT rows only: bit t set when the row is for events of
 *	type t (KFD_IOC_EVENT_*); 0 when it is for every record of @type
 * @lo: smallest value
 * @hi: largest value; with %KFD_IMG_RANGE_BITS the bits that may be set
 * @extra: one more boundary inside the range for a sweep, 0 for none
 *
 * kfd_img_ranges[] is the table of the documentation's "Accepted values"
 * section. A field may have several rows, each for some event types.
 */
struct kfd_img_range {
	uint32_t type;
	const char *name;
	uint16_t off;
	uint8_t size;
	uint8_t flags;
	uint32_t align;
	uint32_t ev_types;
	uint64_t lo;
	uint64_t hi;
	uint64_t extra;
};

/* Other records bound the field further (counts, ids, GPU indices) */
#define KFD_IMG_RANGE_CTX		1U
/* @hi is the set of bits the field may have */
#define KFD_IMG_RANGE_BITS		2U
/* The value is a power of two */
#define KFD_IMG_RANGE_POW2		4U

extern const struct kfd_img_range kfd_img_ranges[];
extern const size_t kfd_img_num_ranges;

bool kfd_img_range_applies(const struct kfd_img_range *r, uint32_t type,
			   const uint8_t *base, uint32_t len);
bool kfd_img_in_range(const struct kfd_img_range *r, uint64_t v);
bool kfd_img_check_ranges(const uint8_t *data, size_t len,
			  struct kfd_img_record *recs, size_t max_recs,
			  char *why, size_t why_len);

int kfd_img_mutator_init(struct kfd_img_mutator *m, size_t cap);
void kfd_img_mutator_free(struct kfd_img_mutator *m);
void kfd_img_mutator_seed(struct kfd_img_mutator *m, uint64_t seed);
uint64_t kfd_img_rand(struct kfd_img_mutator *m);
size_t kfd_img_mutate(struct kfd_img_mutator *m, uint8_t *data, size_t len,
		      size_t cap, int kind);
const char *kfd_img_mutation_name(enum kfd_img_mutation kind);
bool kfd_img_sweep(struct kfd_img_mutator *m, uint8_t *data, size_t len,
		   unsigned int step);

uint32_t kfd_img_crc32c(uint32_t crc, const void *buf, size_t len);
size_t kfd_img_frame(const uint8_t *data, size_t len,
		     struct kfd_img_record *recs, size_t max_recs);
void kfd_img_fix_end(uint8_t *data, size_t len, struct kfd_img_record *recs,
		     size_t max_recs);
void kfd_img_fix_crcs(uint8_t *data, size_t len, struct kfd_img_record *recs,
		      size_t max_recs);
uint32_t kfd_img_get32(const uint8_t *p);
uint64_t kfd_img_get64(const uint8_t *p);
void kfd_img_put32(uint8_t *p, uint32_t v);
void kfd_img_put64(uint8_t *p, uint64_t v);

#endif /* KFD_IMAGE_MUTATOR_H */
