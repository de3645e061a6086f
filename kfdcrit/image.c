// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: reading a stream file with the kernel's codec
 *
 * The whole file is read into memory and handed to the codec's reader
 * (kfd_criu_image_read_header(), kfd_criu_image_read_record()) through a
 * memory source, with the reader table RESTORE uses
 * (kfd_criu_v1_records[]) and a buffer as large as the kernel's. The
 * source knows its position, so every record is known by its offset, and
 * a record's payload is found again in the file's own bytes.
 */

#include <linux/errno.h>
#include <asm/byteorder.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kfdcrit.h"
#include "kfd_criu_mem_source.h"

/* The kernel reads every record into a buffer this large (kfd_criu.c) */
#define KC_READ_BUF	(sizeof(struct kfd_criu_bo_data_hdr) + KFD_CRIU_BO_CHUNK)

/**
 * kc_read_file() - read a whole file into memory
 * @path: the file
 * @data: receives a malloc()ed copy of its bytes
 * @size: receives their count
 *
 * Return: 0 or a negative errno.
 */
int kc_read_file(const char *path, u8 **data, size_t *size)
{
	struct stat st;
	size_t done = 0;
	ssize_t n;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto out_close;
	}
	*data = malloc(st.st_size ? st.st_size : 1);
	if (!*data) {
		ret = -ENOMEM;
		goto out_close;
	}
	while (done < (size_t)st.st_size) {
		n = read(fd, *data + done, st.st_size - done);
		if (n <= 0) {
			ret = n ? -errno : -EIO;
			free(*data);
			*data = NULL;
			goto out_close;
		}
		done += n;
	}
	*size = done;
out_close:
	close(fd);
	return ret;
}

static int kc_add_record(struct kc_stream *s, u64 offset, bool skipped)
{
	struct kfd_criu_record_header hdr;
	struct kc_record *bigger, *rec;
	__le32 crc;

	bigger = realloc(s->recs, (s->nrecs + 1) * sizeof(*s->recs));
	if (!bigger)
		return -ENOMEM;
	s->recs = bigger;
	rec = &s->recs[s->nrecs++];
	memcpy(&hdr, s->data + offset, sizeof(hdr));
	rec->offset = offset;
	rec->type = le32_to_cpu(hdr.type);
	rec->flags = le32_to_cpu(hdr.flags);
	rec->length = le32_to_cpu(hdr.length);
	rec->payload = s->data + offset + sizeof(hdr);
	memcpy(&crc, rec->payload + rec->length, sizeof(crc));
	rec->crc = le32_to_cpu(crc);
	rec->skipped = skipped;
	return 0;
}

/*
 * The reader skips unknown optional records on its own; they lie between
 * where the call started and the record it returned, and all passed their
 * CRC, so they are framed again from the file.
 */
static int kc_add_skipped(struct kc_stream *s, u64 from, u64 to)
{
	struct kfd_criu_record_header hdr;
	int ret;

	while (from < to) {
		ret = kc_add_record(s, from, true);
		if (ret)
			return ret;
		memcpy(&hdr, s->data + from, sizeof(hdr));
		from += KFD_CRIU_RECORD_OVERHEAD + le32_to_cpu(hdr.length);
	}
	return 0;
}

static int kc_read_records(struct kc_stream *s, struct kfd_criu_image_reader *r,
			   struct kfd_criu_mem_source *src, void *buf)
{
	struct kfd_criu_record rec;
	u32 skipped;
	u64 start, at;
	int ret;

	while (!r->ended) {
		start = src->pos;
		skipped = r->skipped;
		ret = kfd_criu_image_read_record(r, &rec, buf, KC_READ_BUF);
		if (ret) {
			s->diag.err = ret;
			s->diag.offset = start;
			return 0;
		}
		at = src->pos - KFD_CRIU_RECORD_OVERHEAD - rec.length;
		if (r->skipped != skipped) {
			ret = kc_add_skipped(s, start, at);
			if (ret)
				return ret;
		}
		ret = kc_add_record(s, at, false);
		if (ret)
			return ret;
	}
	s->ended = true;
	return 0;
}

static int kc_stream_parse(struct kc_stream *s)
{
	struct kfd_criu_mem_source src = { .data = s->data, .len = s->size };
	const struct kfd_criu_image_io io = { .read = kfd_criu_mem_source_read,
					      .ctx = &src };
	struct kfd_criu_image_reader r;
	void *buf;
	int ret;

	buf = malloc(KC_READ_BUF);
	if (!buf)
		return -ENOMEM;
	kfd_criu_image_reader_init(&r, &io, kfd_criu_v1_records,
				   kfd_criu_v1_num_records);
	ret = kfd_criu_image_read_header(&r, &s->hdr);
	if (ret) {
		s->diag.err = ret;
		s->diag.in_header = true;
		ret = 0;
	} else {
		s->header_ok = true;
		ret = kc_read_records(s, &r, &src, buf);
	}
	s->consumed = src.pos;
	if (s->diag.err)
		kc_explain_reader(s, &s->diag);
	free(buf);
	return ret;
}

/*
 * A stream holds the contents of every VRAM and GTT BO, so it can be as
 * large as the process's GPU memory: it is mapped, never copied.
 */
static int kc_map_file(const char *path, u8 **data, size_t *size)
{
	static u8 empty[1];
	struct stat st;
	void *p;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
	} else if (!S_ISREG(st.st_mode)) {
		ret = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	} else if (!st.st_size) {
		*data = empty;
		*size = 0;
	} else {
		p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			ret = -errno;
		} else {
			*data = p;
			*size = st.st_size;
		}
	}
	close(fd);
	return ret;
}

/**
 * kc_stream_load() - read a stream file with the codec
 * @s: receives the stream; free it with kc_stream_free()
 * @path: the file
 *
 * A malformed stream is not an error of this function: @s->diag says what
 * the reader refused and where, and @s->recs holds the records before it.
 *
 * Return: 0, or a negative errno when the file cannot be read.
 */
int kc_stream_load(struct kc_stream *s, const char *path)
{
	int ret;

	memset(s, 0, sizeof(*s));
	s->name = path;
	ret = kc_map_file(path, &s->data, &s->size);
	if (!ret)
		ret = kc_stream_parse(s);
	if (ret)
		kc_stream_free(s);
	return ret;
}

/**
 * kc_stream_free() - free what kc_stream_load() allocated
 * @s: the stream
 */
void kc_stream_free(struct kc_stream *s)
{
	if (s->size)
		munmap(s->data, s->size);
	free(s->recs);
	s->data = NULL;
	s->recs = NULL;
	s->nrecs = 0;
}

static const char *const kc_type_names[KFD_CRIU_REC_NR] = {
	[KFD_CRIU_REC_END] = "END",
	[KFD_CRIU_REC_COMPAT] = "COMPAT",
	[KFD_CRIU_REC_PROCESS] = "PROCESS",
	[KFD_CRIU_REC_SIGNAL_PAGE] = "SIGNAL_PAGE",
	[KFD_CRIU_REC_EVENT] = "EVENT",
	[KFD_CRIU_REC_GPU] = "GPU",
	[KFD_CRIU_REC_BO] = "BO",
	[KFD_CRIU_REC_BO_DATA] = "BO_DATA",
	[KFD_CRIU_REC_QUEUE] = "QUEUE",
	[KFD_CRIU_REC_QUEUE_STATE] = "QUEUE_STATE",
	[KFD_CRIU_REC_SVM_RANGE] = "SVM_RANGE",
	[KFD_CRIU_REC_COUNTS] = "COUNTS",
	[KFD_CRIU_REC_TRAP_HANDLER] = "TRAP_HANDLER",
};

/**
 * kc_type_name() - the name of a record type
 * @type: the type
 *
 * Return: "EVENT" and so on, or "UNKNOWN" for a type format version 1
 * does not define.
 */
const char *kc_type_name(u32 type)
{
	if (type < KFD_CRIU_REC_NR && kc_type_names[type])
		return kc_type_names[type];
	return "UNKNOWN";
}

/**
 * kc_errno_name() - the symbolic name of an errno
 * @err: a negative or positive errno
 *
 * Return: "EINVAL" and so on, or "E?" for one RESTORE never returns.
 */
const char *kc_errno_name(int err)
{
	switch (err < 0 ? -err : err) {
	case 0: return "OK";
	case EINVAL: return "EINVAL";
	case EPROTO: return "EPROTO";
	case EBADMSG: return "EBADMSG";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENODATA: return "ENODATA";
	case EEXIST: return "EEXIST";
	case ENODEV: return "ENODEV";
	case ENOMEM: return "ENOMEM";
	case EOVERFLOW: return "EOVERFLOW";
	case ENOENT: return "ENOENT";
	case EISDIR: return "EISDIR";
	case EIO: return "EIO";
	case EACCES: return "EACCES";
	case ERANGE: return "ERANGE";
	case EMSGSIZE: return "EMSGSIZE";
	}
	return "E?";
}

/**
 * kc_fnv1a64() - FNV-1a 64-bit hash of a buffer
 * @buf: the bytes
 * @len: their count
 *
 * The hash the e2e mutation campaign prints for its images; the summary
 * of a blob in "decode" output.
 *
 * Return: the hash.
 */
u64 kc_fnv1a64(const void *buf, size_t len)
{
	const u8 *p = buf;
	u64 h = 0xcbf29ce484222325ULL;

	while (len--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/**
 * kc_diag_set() - record an error and its place
 * @d: the diagnosis
 * @err: negative errno
 * @rec: the offending record, or NULL for the header
 * @fmt: printf format of the reason
 */
void kc_diag_set(struct kc_diag *d, int err, const struct kc_record *rec,
		 const char *fmt, ...)
{
	va_list ap;

	d->err = err;
	d->in_header = !rec;
	d->offset = rec ? rec->offset : 0;
	d->type = rec ? rec->type : 0;
	va_start(ap, fmt);
	vsnprintf(d->reason, sizeof(d->reason), fmt, ap);
	va_end(ap);
}

/**
 * kc_diag_print() - print "FILE: offset N: TYPE record: reason: EINVAL"
 * @f: where to
 * @name: the file name
 * @d: the diagnosis
 */
void kc_diag_print(FILE *f, const char *name, const struct kc_diag *d)
{
	const char *slash = strrchr(name, '/');

	fprintf(f, "%s: offset %llu: ", slash ? slash + 1 : name,
		(unsigned long long)d->offset);
	if (d->in_header)
		fprintf(f, "header: ");
	else if (d->type)
		fprintf(f, "%s record: ", kc_type_name(d->type));
	fprintf(f, "%s: %s\n", d->reason, kc_errno_name(d->err));
}
