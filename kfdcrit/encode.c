// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: kfdcrit encode
 *
 * The inverse of "decode --format json --data": a schema 1 document back
 * to the stream, written by the kernel's own writer
 * (kfd_criu_image_write_header(), kfd_criu_image_write_record(),
 * kfd_criu_image_write_end()), which frames every record and computes
 * every CRC32C and END's counts as CHECKPOINT does.
 *
 * Taken from the JSON: the header's release and, per record, its type_id,
 * flags, fields (by decode's tables, kc_fields_of()) and data. What decode
 * derived (offsets, lengths, CRCs, the data's size and hash, the file's
 * name and size) must be of the right type and range but is not compared:
 * the writer recomputes it, so a document edited by hand needs no
 * arithmetic. What the writer decides itself and the JSON states as well
 * (the header's version, flags and size; END's fields) must agree with it.
 *
 * The whole document is checked and encoded in memory before a byte goes
 * out: on an error the output is not touched. Errors name the line and
 * column, the record and the field, and return a specific errno (see the
 * table in kfdcrit(1)).
 */

#include <linux/errno.h>
#include <linux/limits.h>
#include <linux/minmax.h>
#include <asm/byteorder.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kfdcrit.h"

#define KC_KIND(k)	(1U << (k))
#define KC_NUM		KC_KIND(KC_JSON_NUMBER)
#define KC_STR		KC_KIND(KC_JSON_STRING)
#define KC_OBJ		KC_KIND(KC_JSON_OBJECT)
#define KC_ARR		KC_KIND(KC_JSON_ARRAY)
#define KC_NUL		KC_KIND(KC_JSON_NULL)
#define KC_BOOL		(KC_KIND(KC_JSON_TRUE) | KC_KIND(KC_JSON_FALSE))

/**
 * struct kc_key - a key the schema allows in an object
 * @name: the key
 * @kinds: the JSON types its value may have, KC_KIND() bits
 * @required: an object without it is refused
 * @max: for a number, the largest value
 */
struct kc_key {
	const char *name;
	u32 kinds;
	bool required;
	u64 max;
};

static const struct kc_key kc_doc_keys[] = {
	{ "schema", KC_NUM, true, U32_MAX },
	{ "file", KC_STR, false, 0 },
	{ "size", KC_NUM, false, U64_MAX },
	{ "header", KC_OBJ | KC_NUL, true, 0 },
	{ "records", KC_ARR, true, 0 },
	{ "complete", KC_BOOL, false, 0 },
	{ "trailing_bytes", KC_NUM, false, U64_MAX },
	{ "error", KC_OBJ | KC_NUL, false, 0 },
	{ }
};

static const struct kc_key kc_header_keys[] = {
	{ "version", KC_NUM, true, U32_MAX },
	{ "flags", KC_NUM, true, U32_MAX },
	{ "header_size", KC_NUM, true, U32_MAX },
	{ "release", KC_STR, true, 0 },
	{ "crc32c", KC_NUM, false, U32_MAX },
	{ }
};

static const struct kc_key kc_record_keys[] = {
	{ "offset", KC_NUM, false, U64_MAX },
	{ "type", KC_STR, true, 0 },
	{ "type_id", KC_NUM, true, U32_MAX },
	{ "flags", KC_NUM, true, U32_MAX },
	{ "length", KC_NUM, false, U32_MAX },
	{ "crc32c", KC_NUM, false, U32_MAX },
	{ "skipped", KC_BOOL, true, 0 },
	{ "fields", KC_OBJ, true, 0 },
	{ "data", KC_OBJ | KC_NUL, true, 0 },
	{ }
};

/* "hex" is required too, with a message of its own */
static const struct kc_key kc_data_keys[] = {
	{ "bytes", KC_NUM, false, U32_MAX },
	{ "fnv1a64", KC_STR, false, 0 },
	{ "hex", KC_STR, false, 0 },
	{ }
};

/**
 * struct kc_buf - the stream, as the writer produces it
 * @data: the bytes
 * @len: bytes written
 * @cap: bytes allocated
 */
struct kc_buf {
	u8 *data;
	size_t len;
	size_t cap;
};

/**
 * struct kc_enc - an encoding in progress
 * @name: the JSON file's name, for messages
 * @where: the part being encoded, for messages ("records[3] (EVENT)")
 * @w: the codec's writer
 * @io: its sink, which appends to @out
 * @out: the stream
 * @payload: a record's payload, %KFD_CRIU_MAX_RECORD_LEN bytes
 * @ended: END was written
 */
struct kc_enc {
	const char *name;
	char where[64];
	struct kfd_criu_image_writer w;
	struct kfd_criu_image_io io;
	struct kc_buf out;
	u8 *payload;
	bool ended;
};

static int kc_buf_write(void *ctx, const void *buf, size_t len)
{
	struct kc_buf *b = ctx;
	size_t cap = b->cap ? b->cap : 65536;
	u8 *bigger;

	if (len > b->cap - b->len) {
		while (len > cap - b->len)
			cap *= 2;
		bigger = realloc(b->data, cap);
		if (!bigger)
			return -ENOMEM;
		b->data = bigger;
		b->cap = cap;
	}
	memcpy(b->data + b->len, buf, len);
	b->len += len;
	return 0;
}

/* Prints "kfdcrit: encode: FILE:LINE:COL: WHERE: what: ERRNO"; returns @err */
static __attribute__((format(printf, 4, 5)))
int kc_enc_fail(const struct kc_enc *e, const struct kc_json *n, int err,
		const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "kfdcrit: encode: %s:%u:%u: ", e->name, n->line, n->col);
	if (e->where[0])
		fprintf(stderr, "%s: ", e->where);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", kc_errno_name(err));
	return err;
}

/* "a number", "true or false", "an object or null" */
static const char *kc_kinds_name(u32 kinds, char *buf, size_t len)
{
	enum kc_json_kind k;
	size_t at = 0;

	buf[0] = 0;
	for (k = KC_JSON_NULL; k <= KC_JSON_OBJECT; k++)
		if (kinds & KC_KIND(k) && at < len)
			at += snprintf(buf + at, len - at, "%s%s", at ? " or " : "",
				       kc_json_kind_name(k));
	return buf;
}

/* A number member as an integer of at most @max; @what prefixes its key */
static int kc_enc_number(const struct kc_enc *e, const struct kc_json *n,
			 const char *what, const char *key, u64 max, u64 *v)
{
	int len = min_t(size_t, n->len, 40);
	int ret;

	ret = kc_json_u64(n, max, v);
	if (ret == -EINVAL)
		return kc_enc_fail(e, n, ret, "\"%s%s\" is %.*s, not an integer",
				   what, key, len, n->text);
	if (ret)
		return kc_enc_fail(e, n, ret, "\"%s%s\" %.*s out of range (0..%llu)",
				   what, key, len, n->text, (unsigned long long)max);
	return 0;
}

/* A member of an object kc_enc_keys() accepted, as its number */
static u64 kc_enc_value(const struct kc_json *obj, const char *key)
{
	const struct kc_json *n = kc_json_member(obj, key);
	u64 v = 0;

	if (n && n->kind == KC_JSON_NUMBER && kc_json_u64(n, U64_MAX, &v))
		v = 0;
	return v;
}

static int kc_enc_member(const struct kc_enc *e, const struct kc_json *m,
			 const char *what, const struct kc_key *k)
{
	char want[64];
	u64 v;

	if (!k->name)
		return kc_enc_fail(e, m, -EINVAL, "unknown key \"%s%.*s\"", what,
				   (int)min_t(size_t, m->key_len, 64), m->key);
	if (!(k->kinds & KC_KIND(m->kind)))
		return kc_enc_fail(e, m, -EINVAL, "\"%s%s\" is %s, not %s", what,
				   k->name, kc_json_kind_name(m->kind),
				   kc_kinds_name(k->kinds, want, sizeof(want)));
	if (m->kind == KC_JSON_NUMBER)
		return kc_enc_number(e, m, what, k->name, k->max, &v);
	return 0;
}

/**
 * kc_enc_keys() - check an object against the keys its schema allows
 * @e: the encoding
 * @obj: the object
 * @what: prefix of its keys in messages ("data.")
 * @keys: the keys allowed, ended by one without a name
 *
 * Return: 0, -EINVAL for an unknown key or a value of the wrong type,
 * -ERANGE for a number out of range, -ENODATA for a missing key.
 */
static int kc_enc_keys(const struct kc_enc *e, const struct kc_json *obj,
		       const char *what, const struct kc_key *keys)
{
	const struct kc_json *m;
	const struct kc_key *k;
	int ret;

	for (m = obj->child; m; m = m->next) {
		for (k = keys; k->name && !kc_json_key_is(m, k->name); k++)
			;
		ret = kc_enc_member(e, m, what, k);
		if (ret)
			return ret;
	}
	for (k = keys; k->name; k++)
		if (k->required && !kc_json_member(obj, k->name))
			return kc_enc_fail(e, obj, -ENODATA, "no \"%s%s\"", what,
					   k->name);
	return 0;
}

static void kc_put_field(u8 *payload, const struct kc_field *f, u64 v)
{
	__le64 v64 = cpu_to_le64(v);
	__le32 v32 = cpu_to_le32((u32)v);

	if (f->size == 8)
		memcpy(payload + f->off, &v64, sizeof(v64));
	else
		memcpy(payload + f->off, &v32, sizeof(v32));
}

/* The fixed part of a payload, from "fields"; @fixed receives its size */
static int kc_enc_fields(struct kc_enc *e, const struct kc_json *fields,
			 u32 type, bool skipped, u32 *fixed)
{
	const struct kc_field *fl, *f;
	const struct kc_json *m;
	int ret;
	u64 v;

	fl = kc_fields_of(skipped ? 0 : type, fixed);
	for (m = fields->child; m; m = m->next) {
		for (f = fl; f->name && !kc_json_key_is(m, f->name); f++)
			;
		ret = kc_enc_member(e, m, "fields.", &(struct kc_key) {
			f->name, KC_NUM, true, f->size == 8 ? U64_MAX : U32_MAX });
		if (ret)
			return ret;
	}
	memset(e->payload, 0, *fixed);
	for (f = fl; f->name; f++) {
		m = kc_json_member(fields, f->name);
		if (!m)
			return kc_enc_fail(e, fields, -ENODATA, "no \"fields.%s\"",
					   f->name);
		kc_json_u64(m, U64_MAX, &v);	/* kc_enc_member() checked it */
		kc_put_field(e->payload, f, v);
	}
	return 0;
}

static int kc_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

static int kc_enc_hex(struct kc_enc *e, const struct kc_json *hex, u32 at,
		      u32 *len)
{
	size_t n = hex->len / 2, i;
	int hi, lo;

	if (hex->len % 2)
		return kc_enc_fail(e, hex, -EINVAL,
				   "\"data.hex\" has an odd number of digits");
	if (n > KFD_CRIU_MAX_RECORD_LEN - at)
		return kc_enc_fail(e, hex, -EMSGSIZE,
				   "a payload of %zu bytes, over the %u-byte limit of a record",
				   at + n, KFD_CRIU_MAX_RECORD_LEN);
	for (i = 0; i < n; i++) {
		hi = kc_hex_digit(hex->text[2 * i]);
		lo = kc_hex_digit(hex->text[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return kc_enc_fail(e, hex, -EINVAL,
					   "\"data.hex\": byte %zu is not two hex digits", i);
		e->payload[at + i] = hi << 4 | lo;
	}
	*len = at + n;
	return 0;
}

/* The variable part of a payload, from "data", after @fixed bytes */
static int kc_enc_data(struct kc_enc *e, const struct kc_json *data,
		       u32 fixed, u32 *len)
{
	const struct kc_json *hex;
	int ret;

	*len = fixed;
	if (data->kind == KC_JSON_NULL)
		return 0;
	ret = kc_enc_keys(e, data, "data.", kc_data_keys);
	if (ret)
		return ret;
	hex = kc_json_member(data, "hex");
	if (!hex)
		return kc_enc_fail(e, data, -ENODATA,
				   "no \"data.hex\": decode --data gives the bytes to encode");
	return kc_enc_hex(e, hex, fixed, len);
}

/* The type's name, type_id, flags and skipped must tell one story */
static int kc_enc_identity(const struct kc_enc *e, const struct kc_json *rec,
			   u32 type, u32 flags, bool skipped)
{
	const struct kc_json *name = kc_json_member(rec, "type");
	const char *want = kc_type_name(type);
	bool known = strcmp(want, "UNKNOWN");

	if (name->len != strlen(want) || memcmp(name->text, want, name->len))
		return kc_enc_fail(e, name, -EINVAL,
				   "\"type\" is \"%.*s\", but type_id %u is %s",
				   (int)min_t(size_t, name->len, 32), name->text,
				   type, want);
	if (flags & ~KFD_CRIU_RECORD_FLAGS_KNOWN)
		return kc_enc_fail(e, kc_json_member(rec, "flags"), -EINVAL,
				   "\"flags\" %#x: only MANDATORY (1) is defined",
				   flags);
	if (skipped && (known || flags & KFD_CRIU_RECORD_MANDATORY))
		return kc_enc_fail(e, kc_json_member(rec, "skipped"), -EINVAL,
				   "skipped, but a reader skips only records of unknown type without MANDATORY");
	return 0;
}

/* END as the writer writes it: its counts are the writer's own */
static int kc_enc_end(struct kc_enc *e, const struct kc_json *rec, u32 flags,
		      u32 len)
{
	struct kfd_criu_end_rec want = {
		.records = cpu_to_le32(e->w.records),
		.payload_bytes = cpu_to_le64(e->w.payload_bytes),
	};
	int ret;

	if (flags != KFD_CRIU_RECORD_MANDATORY || len != sizeof(want) ||
	    memcmp(e->payload, &want, sizeof(want)))
		return kc_enc_fail(e, rec, -EINVAL,
				   "END must be flags 1, records %u, reserved 0, payload_bytes %llu and no data: what the records before it add up to",
				   e->w.records,
				   (unsigned long long)e->w.payload_bytes);
	ret = kfd_criu_image_write_end(&e->w);
	if (ret)
		return kc_enc_fail(e, rec, ret, "the codec's writer refuses END");
	e->ended = true;
	return 0;
}

static int kc_enc_record(struct kc_enc *e, const struct kc_json *rec,
			 size_t i)
{
	u32 type, flags, fixed, len;
	bool skipped;
	int ret;

	snprintf(e->where, sizeof(e->where), "records[%zu]", i);
	if (rec->kind != KC_JSON_OBJECT)
		return kc_enc_fail(e, rec, -EINVAL, "%s, not an object",
				   kc_json_kind_name(rec->kind));
	if (e->ended)
		return kc_enc_fail(e, rec, -EINVAL, "a record after END");
	ret = kc_enc_keys(e, rec, "", kc_record_keys);
	if (ret)
		return ret;
	type = kc_enc_value(rec, "type_id");
	flags = kc_enc_value(rec, "flags");
	skipped = kc_json_member(rec, "skipped")->kind == KC_JSON_TRUE;
	snprintf(e->where, sizeof(e->where), "records[%zu] (%s)", i,
		 kc_type_name(type));
	ret = kc_enc_identity(e, rec, type, flags, skipped);
	if (!ret)
		ret = kc_enc_fields(e, kc_json_member(rec, "fields"), type,
				    skipped, &fixed);
	if (!ret)
		ret = kc_enc_data(e, kc_json_member(rec, "data"), fixed, &len);
	if (ret)
		return ret;
	if (type == KFD_CRIU_REC_END)
		return kc_enc_end(e, rec, flags, len);
	ret = kfd_criu_image_write_record(&e->w, type, flags, e->payload, len);
	if (ret)
		return kc_enc_fail(e, rec, ret, "the codec's writer refuses the record");
	return 0;
}

static int kc_enc_records(struct kc_enc *e, const struct kc_json *recs)
{
	const struct kc_json *rec;
	size_t i = 0;
	int ret;

	for (rec = recs->child; rec; rec = rec->next, i++) {
		ret = kc_enc_record(e, rec, i);
		if (ret)
			return ret;
	}
	e->where[0] = 0;
	if (!e->ended)
		return kc_enc_fail(e, recs, -ENODATA,
				   "no END record: a stream ends with one");
	return 0;
}

static int kc_enc_release(struct kc_enc *e, const struct kc_json *rel,
			  char *release)
{
	size_t len;
	int ret;

	ret = kc_json_bytes(rel, (u8 *)release, KFD_CRIU_RELEASE_LEN - 1, &len);
	if (ret == -ENOSPC)
		return kc_enc_fail(e, rel, -ERANGE,
				   "\"release\" is longer than %d bytes",
				   KFD_CRIU_RELEASE_LEN - 1);
	if (ret)
		return kc_enc_fail(e, rel, ret,
				   "\"release\": a \\u escape above \\u00ff is not a byte");
	if (memchr(release, 0, len))
		return kc_enc_fail(e, rel, -EINVAL,
				   "\"release\" holds a NUL byte, which would end it");
	return 0;
}

static int kc_enc_header(struct kc_enc *e, const struct kc_json *hdr)
{
	char release[KFD_CRIU_RELEASE_LEN] = { };
	int ret;

	snprintf(e->where, sizeof(e->where), "header");
	if (hdr->kind == KC_JSON_NULL)
		return kc_enc_fail(e, hdr, -ENODATA,
				   "null: decode read no header, so there is none to encode");
	ret = kc_enc_keys(e, hdr, "", kc_header_keys);
	if (ret)
		return ret;
	if (kc_enc_value(hdr, "version") != KFD_CRIU_IMAGE_VERSION)
		return kc_enc_fail(e, kc_json_member(hdr, "version"), -EPROTO,
				   "the codec writes format version %d only",
				   KFD_CRIU_IMAGE_VERSION);
	if (kc_enc_value(hdr, "flags"))
		return kc_enc_fail(e, kc_json_member(hdr, "flags"), -EPROTO,
				   "format version 1 defines no header flags");
	if (kc_enc_value(hdr, "header_size") != sizeof(struct kfd_criu_image_header))
		return kc_enc_fail(e, kc_json_member(hdr, "header_size"), -EINVAL,
				   "a version 1 header is %zu bytes",
				   sizeof(struct kfd_criu_image_header));
	ret = kc_enc_release(e, kc_json_member(hdr, "release"), release);
	if (ret)
		return ret;
	ret = kfd_criu_image_write_header(&e->w, release);
	if (ret)
		return kc_enc_fail(e, hdr, ret, "the codec's writer refuses the header");
	return 0;
}

static int kc_enc_schema(const struct kc_enc *e, const struct kc_json *doc)
{
	const struct kc_json *n;

	if (doc->kind != KC_JSON_OBJECT)
		return kc_enc_fail(e, doc, -EINVAL, "the document is %s, not an object",
				   kc_json_kind_name(doc->kind));
	n = kc_json_member(doc, "schema");
	if (n && n->kind == KC_JSON_NUMBER &&
	    kc_enc_value(doc, "schema") != KC_SCHEMA_VERSION)
		return kc_enc_fail(e, n, -EPROTO, "schema %.*s: encode reads schema %d",
				   (int)min_t(size_t, n->len, 40), n->text,
				   KC_SCHEMA_VERSION);
	return kc_enc_keys(e, doc, "", kc_doc_keys);
}

static int kc_enc_doc(struct kc_enc *e, const struct kc_json *doc)
{
	const struct kc_json *err;
	u64 trailing;
	int ret;

	ret = kc_enc_schema(e, doc);
	if (ret)
		return ret;
	err = kc_json_member(doc, "error");
	if (err && err->kind != KC_JSON_NULL)
		return kc_enc_fail(e, err, -EINVAL,
				   "\"error\" is not null: decode stopped where the reader failed, so the records are not a whole stream");
	ret = kc_enc_header(e, kc_json_member(doc, "header"));
	if (!ret)
		ret = kc_enc_records(e, kc_json_member(doc, "records"));
	if (ret)
		return ret;
	trailing = kc_enc_value(doc, "trailing_bytes");
	if (trailing)
		fprintf(stderr, "kfdcrit: encode: %s: warning: the %llu bytes after END are not in the JSON; the stream ends at END\n",
			e->name, (unsigned long long)trailing);
	return 0;
}

static int kc_read_fd(int fd, char **text, size_t *len)
{
	size_t cap = 0, done = 0;
	char *buf = NULL, *bigger;
	ssize_t n;
	int ret;

	for (;;) {
		if (done == cap) {
			cap = cap ? cap * 2 : 65536;
			bigger = realloc(buf, cap);
			if (!bigger) {
				free(buf);
				return -ENOMEM;
			}
			buf = bigger;
		}
		n = read(fd, buf + done, cap - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			free(buf);
			return ret;
		}
		if (!n)
			break;
		done += n;
	}
	/* To the byte, so that ASan sees a read past the text */
	bigger = realloc(buf, done ? done : 1);
	*text = bigger ? bigger : buf;
	*len = done;
	return 0;
}

/* Writes the stream to @path, or to stdout when NULL */
static int kc_write_out(const char *path, const struct kc_buf *b)
{
	int fd = STDOUT_FILENO, ret = 0;
	size_t done = 0;
	ssize_t n;

	if (path) {
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			return -errno;
	}
	while (done < b->len) {
		n = write(fd, b->data + done, b->len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		done += n;
	}
	if (path && close(fd) && !ret)
		ret = -errno;
	return ret;
}

static int kc_enc_run(struct kc_enc *e, const struct kc_json *root,
		      const char *out)
{
	int ret;

	e->io.write = kc_buf_write;
	e->io.ctx = &e->out;
	kfd_criu_image_writer_init(&e->w, &e->io);
	e->payload = malloc(KFD_CRIU_MAX_RECORD_LEN);
	if (!e->payload)
		return -ENOMEM;
	ret = kc_enc_doc(e, root);
	if (!ret) {
		ret = kc_write_out(out, &e->out);
		if (ret)
			fprintf(stderr, "kfdcrit: encode: %s: %s\n",
				out ? out : "<stdout>", strerror(-ret));
	}
	free(e->payload);
	free(e->out.data);
	return ret;
}

/* Encodes the JSON file @in ("-": stdin) into @out (NULL: stdout) */
static int kc_encode(const char *in, const char *out)
{
	struct kc_enc e = { .name = strcmp(in, "-") ? in : "<stdin>" };
	int fd = STDIN_FILENO, ret;
	struct kc_json_doc doc;
	char *text = NULL;
	size_t len = 0;

	if (strcmp(in, "-"))
		fd = open(in, O_RDONLY | O_CLOEXEC);
	ret = fd < 0 ? -errno : kc_read_fd(fd, &text, &len);
	if (fd > STDIN_FILENO)
		close(fd);
	if (ret) {
		fprintf(stderr, "kfdcrit: encode: %s: %s\n", e.name, strerror(-ret));
		return ret;
	}
	ret = kc_json_parse(&doc, text, len);
	if (ret)
		fprintf(stderr, "kfdcrit: encode: %s:%u:%u: %s: %s\n", e.name,
			doc.line, doc.col, doc.msg, kc_errno_name(ret));
	else
		ret = kc_enc_run(&e, doc.root, out);
	kc_json_free(&doc);
	free(text);
	return ret;
}

/**
 * kc_cmd_encode() - "kfdcrit encode [-o OUT] [JSON]"
 * @argc: arguments after "encode"
 * @argv: them
 *
 * Return: exit status: 0, or the errno of the first thing wrong with the
 * document or the files.
 */
int kc_cmd_encode(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ }
	};
	const char *out = NULL;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
		if (c != 'o')
			return KC_EXIT_USAGE;
		out = optarg;
	}
	if (optind < argc - 1)
		return KC_EXIT_USAGE;
	if (!out && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "kfdcrit: encode: a stream is binary: give -o FILE or a pipe\n");
		return KC_EXIT_USAGE;
	}
	return -kc_encode(optind < argc ? argv[optind] : "-", out);
}
