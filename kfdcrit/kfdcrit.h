/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright 2026 The amdkfd-criu authors
 */

#ifndef KFDCRIT_H_INCLUDED
#define KFDCRIT_H_INCLUDED

#include <linux/types.h>

#include <stdbool.h>
#include <stdio.h>

#include "kfd_criu_image.h"

/**
 * DOC: kfdcrit - read, check and compare KFD CRIU images
 *
 * The tool is built from the kernel's own codec (kfd_criu_image.c with the
 * host shims of host/include), so it reads a stream exactly as the kernel
 * does: kc_stream_read() runs the codec's reader over a file held in
 * memory, kc_check() runs on what it read the checks RESTORE runs on the
 * metadata (the collectors of kfd_criu.c and of each state family, and
 * the codec's validators), and compat places the image's GPUs with the
 * codec's kfd_criu_map_gpus().
 */

/** KC_SCHEMA_VERSION - version of the JSON that "decode --format json" prints */
#define KC_SCHEMA_VERSION	1

/** KC_EXIT_USAGE - exit status for a command line kfdcrit does not understand */
#define KC_EXIT_USAGE		64

/**
 * struct kc_record - one record of a stream, as read
 * @offset: offset of its header in the file
 * @type: record type
 * @flags: record flags
 * @length: payload bytes
 * @payload: the payload, inside the file's bytes
 * @crc: the CRC32C trailer
 * @skipped: an unknown optional record the reader skipped
 */
struct kc_record {
	u64 offset;
	u32 type;
	u32 flags;
	u32 length;
	const u8 *payload;
	u32 crc;
	bool skipped;
};

/**
 * struct kc_diag - why a stream is refused
 * @err: negative errno, 0 when nothing is wrong
 * @offset: offset of the offending record, or of the header
 * @type: its record type; 0 for the header or when unknown
 * @in_header: the error is in the stream header
 * @reason: what is wrong, for a person
 */
struct kc_diag {
	int err;
	u64 offset;
	u32 type;
	bool in_header;
	char reason[256];
};

/**
 * struct kc_stream - a stream file read by the codec
 * @name: the file name, for messages
 * @data: the file's bytes
 * @size: bytes at @data
 * @hdr: the stream header, valid when @header_ok
 * @header_ok: the header was read and passed the codec's checks
 * @recs: the records read, in stream order, skipped ones included
 * @nrecs: entries at @recs
 * @ended: END was read
 * @consumed: bytes the reader consumed
 * @diag: the reader's error, if any, with its place
 */
struct kc_stream {
	const char *name;
	u8 *data;
	size_t size;
	struct kfd_criu_image_header hdr;
	bool header_ok;
	struct kc_record *recs;
	size_t nrecs;
	bool ended;
	size_t consumed;
	struct kc_diag diag;
};

/* image.c */
int kc_stream_load(struct kc_stream *s, const char *path);
void kc_stream_free(struct kc_stream *s);
const char *kc_type_name(u32 type);
const char *kc_errno_name(int err);
u64 kc_fnv1a64(const void *buf, size_t len);
void kc_diag_set(struct kc_diag *d, int err, const struct kc_record *rec,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void kc_diag_print(FILE *f, const char *name, const struct kc_diag *d);

/* check.c */
int kc_check(const struct kc_stream *s, struct kc_diag *d);

/* explain.c */
void kc_explain_reader(const struct kc_stream *s, struct kc_diag *d);
const char *kc_explain_compat(const struct kfd_criu_compat_rec *c);
const char *kc_explain_event(const struct kfd_criu_event_rec *ev);
const char *kc_explain_process(const struct kfd_criu_process_rec *p);
const char *kc_explain_gpu(const struct kfd_criu_gpu_rec *g);
const char *kc_explain_trap(const struct kfd_criu_trap_rec *t, u32 num_gpus);
const char *kc_explain_bo(const struct kfd_criu_bo_rec *bo, u32 num_gpus);
const char *kc_explain_counts(const struct kfd_criu_counts_rec *c,
			      u32 num_gpus);

/* meta.c */
/**
 * struct kc_meta - the plugin's kfdcriu-<id>.img (a kfd_criu_meta message)
 * @format_version: field 1
 * @file_id: field 2
 * @stream_size: field 3
 * @alias_of: field 5, 0 when absent
 * @render_gpu_id: field 6, 0 when absent
 * @open_flags: field 7
 * @unused_gpu_id: field 10, 0 when absent: a render node file of a GPU the
 *	process did not use, by the topology's gpu_id
 * @drm_driver: field 11's driver: a render node of no KFD GPU, reattached
 *	without its state (drm_reattach); NUL-terminated, cut short
 * @drm_minor: field 11's render minor
 * @has_alias: @alias_of was present
 * @has_render: @render_gpu_id was present
 * @has_unused: @unused_gpu_id was present
 * @has_drm: field 11 was present
 */
struct kc_meta {
	u32 format_version;
	u32 file_id;
	u64 stream_size;
	u32 alias_of;
	u32 render_gpu_id;
	u32 open_flags;
	u32 unused_gpu_id;
	char drm_driver[32];
	u32 drm_minor;
	bool has_alias;
	bool has_render;
	bool has_unused;
	bool has_drm;
};

/* The most render minors kfdcriu-drm.img lists: one per render node */
#define KC_DRM_MINORS_MAX	64

int kc_meta_parse(const u8 *buf, size_t len, struct kc_meta *m);
int kc_drm_mappings_parse(const u8 *buf, size_t len, u32 *minors, unsigned int *n);
int kc_read_file(const char *path, u8 **data, size_t *size);

/* decode.c */
/**
 * struct kc_field - one fixed-width little-endian field of a record
 * @name: its name in the kernel header, and in the output
 * @off: offset in the payload
 * @size: 4 or 8
 * @hex: shown in hex in the text output (addresses, masks, ids)
 */
struct kc_field {
	const char *name;
	u16 off;
	u8 size;
	bool hex;
};

const struct kc_field *kc_fields_of(u32 type, u32 *fixed);
u64 kc_field_value(const struct kc_field *f, const u8 *payload);

/* json.c */
/**
 * enum kc_json_kind - the type of a JSON value
 * @KC_JSON_NULL: null
 * @KC_JSON_FALSE: false
 * @KC_JSON_TRUE: true
 * @KC_JSON_NUMBER: a number, kept as its token
 * @KC_JSON_STRING: a string, kept with its escapes
 * @KC_JSON_ARRAY: an array
 * @KC_JSON_OBJECT: an object
 */
enum kc_json_kind {
	KC_JSON_NULL,
	KC_JSON_FALSE,
	KC_JSON_TRUE,
	KC_JSON_NUMBER,
	KC_JSON_STRING,
	KC_JSON_ARRAY,
	KC_JSON_OBJECT,
};

/**
 * struct kc_json - one value of a JSON text
 * @kind: its type
 * @line: line of its first character, from 1
 * @col: column of that character, from 1
 * @text: a number's token, or a string's inside between its quotes
 * @len: bytes at @text
 * @key: as a member of an object, its key (inside the quotes)
 * @key_len: bytes at @key
 * @child: an array's first element, an object's first member
 * @next: the next element or member of the same parent
 * @count: elements or members
 */
struct kc_json {
	enum kc_json_kind kind;
	u32 line;
	u32 col;
	const char *text;
	size_t len;
	const char *key;
	size_t key_len;
	struct kc_json *child;
	struct kc_json *next;
	size_t count;
};

struct kc_json_block;

/**
 * struct kc_json_doc - a JSON text read by kc_json_parse()
 * @root: the value
 * @blocks: the nodes' memory
 * @err: why the text was refused, a negative errno
 * @line: where: line, from 1
 * @col: and column, from 1
 * @msg: what is wrong, for a person
 */
struct kc_json_doc {
	struct kc_json *root;
	struct kc_json_block *blocks;
	int err;
	u32 line;
	u32 col;
	char msg[160];
};

int kc_json_parse(struct kc_json_doc *doc, const char *text, size_t len);
void kc_json_free(struct kc_json_doc *doc);
const char *kc_json_kind_name(enum kc_json_kind kind);
bool kc_json_key_is(const struct kc_json *n, const char *key);
const struct kc_json *kc_json_member(const struct kc_json *obj,
				     const char *key);
int kc_json_u64(const struct kc_json *n, u64 max, u64 *v);
int kc_json_bytes(const struct kc_json *n, u8 *out, size_t max, size_t *len);

/* show.c, decode.c, encode.c, compat.c, diff.c */
int kc_cmd_show(int argc, char **argv);
int kc_cmd_decode(int argc, char **argv);
int kc_cmd_encode(int argc, char **argv);
int kc_cmd_check(int argc, char **argv);
int kc_cmd_compat(int argc, char **argv);
int kc_cmd_diff(int argc, char **argv);

/* main.c */
/* Called on each stream file; returns 0 or an exit status */
typedef int (*kc_stream_fn)(const char *stream, void *ctx);

int kc_for_each_stream(const char *path, kc_stream_fn fn, void *ctx);

#endif /* KFDCRIT_H_INCLUDED */
