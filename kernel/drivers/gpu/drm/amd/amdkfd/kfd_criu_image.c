// SPDX-License-Identifier: GPL-2.0 OR MIT

/**
 * DOC: KFD CRIU image stream codec
 *
 * The writer, the reader and the record validators of the image stream
 * declared in kfd_criu_image.h. The codec knows nothing of amdgpu, files or
 * processes: bytes come and go through &struct kfd_criu_image_io, and the
 * callers own every buffer, so the codec does not allocate, with two
 * exceptions: kfd_criu_check_bos() needs a sort index as large as the BO
 * set, and kfd_criu_check_queues() one of the queues' buffers. It
 * includes only generic headers, so that the same file also builds in
 * userspace, for unit tests and fuzzing.
 *
 * Both sides keep a sticky error: after the first failure the stream
 * position is unknown, so every later call returns that error again.
 *
 * The reader validates each record before it returns it: flags, length
 * against the record type, CRC, and for END the counts. Unknown optional
 * records are consumed in small pieces, CRC-checked and counted, so a
 * stream written by a newer kernel still reads as long as everything it
 * added is optional.
 */

#include <linux/array_size.h>
#include <linux/bitops.h>
#include <linux/build_bug.h>
#include <linux/crc32c.h>
#include <linux/errno.h>
#include <linux/kfd_ioctl.h>
#include <linux/limits.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/types.h>
#include <asm/byteorder.h>

#include "kfd_criu_image.h"

/* Payload bytes of a QUEUE record with the largest CU mask. */
#define KFD_CRIU_QUEUE_MAX_LEN	(sizeof(struct kfd_criu_queue_rec) +	\
				 KFD_CRIU_MAX_CU_MASK_BITS / 8)
/* Payload bytes of a QUEUE_STATE record before its control stack. */
#define KFD_CRIU_QUEUE_STATE_FIXED (sizeof(struct kfd_criu_queue_state_hdr) + \
				    sizeof(struct kfd_criu_queue_dyn))

/* Bytes of an unknown record the reader consumes at a time, on the stack. */
#define KFD_CRIU_SKIP_CHUNK	256
/*
 * Payload bytes copied and then checksummed at a time, so that the CRC
 * reads what the copy has just brought into the CPU's cache: with the
 * CRC first and whole 512 KiB chunks, the codec built in userspace took
 * 1.90 to 2.14 times a memcpy of the same bytes; with 64 KiB pieces, copy
 * first, 1.67 to 1.89, within 0.02 of the CRC's own cost. Multi-piece
 * payloads run in every BO_DATA record of the BO tests.
 */
#define KFD_CRIU_CRC_PIECE	SZ_64K

/*
 * Most XCCs a GPU record may name. amdgpu in 6.12 knows at most 8 GC
 * instances per device (AMDGPU_MAX_GC_INSTANCES); twice that leaves room
 * for a larger part without a format change while still refusing garbage.
 */
#define KFD_CRIU_MAX_XCC	16

/* The memory domain flags of a BO; a valid BO has exactly one. */
#define KFD_CRIU_BO_DOMAINS	(KFD_IOC_ALLOC_MEM_FLAGS_VRAM |		\
				 KFD_IOC_ALLOC_MEM_FLAGS_GTT |		\
				 KFD_IOC_ALLOC_MEM_FLAGS_USERPTR |	\
				 KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL |	\
				 KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP)

/* Every allocation flag the 6.12 uAPI defines. */
#define KFD_CRIU_BO_FLAGS_KNOWN	(KFD_CRIU_BO_DOMAINS |			\
				 KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE |	\
				 KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE |	\
				 KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC |	\
				 KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE | \
				 KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM | \
				 KFD_IOC_ALLOC_MEM_FLAGS_COHERENT |	\
				 KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED |	\
				 KFD_IOC_ALLOC_MEM_FLAGS_EXT_COHERENT | \
				 KFD_IOC_ALLOC_MEM_FLAGS_CONTIGUOUS)

/* The layout is ABI: catch any change the compiler or an edit makes. */
static_assert(sizeof(struct kfd_criu_image_header) == 88);
static_assert(offsetof(struct kfd_criu_image_header, crc) == 84);
static_assert(sizeof(struct kfd_criu_record_header) == 12);
static_assert(KFD_CRIU_RECORD_OVERHEAD ==
	      sizeof(struct kfd_criu_record_header) + sizeof(__le32));
static_assert(sizeof(struct kfd_criu_end_rec) == 16);
static_assert(sizeof(struct kfd_criu_compat_rec) == 8);
static_assert(sizeof(struct kfd_criu_process_rec) == 32);
static_assert(sizeof(struct kfd_criu_event_rec) == 80);
static_assert(KFD_SIGNAL_EVENT_LIMIT * 8 == KFD_CRIU_SIGNAL_PAGE_MAX);
static_assert(KFD_CRIU_SIGNAL_PAGE_MAX <= KFD_CRIU_MAX_RECORD_LEN);
static_assert(sizeof(struct kfd_criu_gpu_rec) == 56);
static_assert(sizeof(struct kfd_criu_bo_rec) == 56);
static_assert(sizeof(struct kfd_criu_bo_data_hdr) == 16);
static_assert(sizeof(struct kfd_criu_bo_data_hdr) + KFD_CRIU_BO_CHUNK <=
	      KFD_CRIU_MAX_RECORD_LEN);
static_assert(sizeof(struct kfd_criu_gpu_map) == 16);
static_assert(KFD_CRIU_MAX_GPUS <= 64);	/* mapped_gpus is a u64 mask */
static_assert(KFD_CRIU_BO_CHUNK % KFD_CRIU_BO_ALIGN == 0);
static_assert(sizeof(struct kfd_criu_counts_rec) == 16);
static_assert(sizeof(struct kfd_criu_queue_rec) == 112);
static_assert(sizeof(struct kfd_criu_queue_state_hdr) == 16);
static_assert(sizeof(struct kfd_criu_queue_dyn) == 32);
static_assert(sizeof(struct kfd_criu_svm_rec) == 64);
static_assert(KFD_CRIU_QUEUE_STATE_FIXED + KFD_CRIU_MAX_CTL_STACK_SIZE <=
	      KFD_CRIU_MAX_RECORD_LEN);
static_assert(KFD_CRIU_MAX_CU_MASK_BITS % 32 == 0);
static_assert(KFD_CRIU_MIN_RING_SIZE == KFD_MIN_QUEUE_RING_SIZE);
/* The whitelist keeps classes and limits in u8 fields. */
static_assert(KFD_CRIU_QC_SDMA <= U8_MAX);
static_assert(KFD_CRIU_LIM_RPTR_RING <= U8_MAX);

/**
 * kfd_criu_crc32c() - CRC32C as the image stream uses it
 * @crc: 0 to start, or the result of a previous call to continue
 * @buf: bytes to add
 * @len: number of bytes
 *
 * Uses the common convention (all-ones seed, inverted result), so
 * kfd_criu_crc32c(0, "123456789", 9) is 0xe3069283 and a CRC over a
 * buffer equals the CRC continued over its pieces. crc32c() is the
 * crypto API's, which picks the CPU's CRC32C instruction where there is
 * one; it takes the raw register, without inversion.
 *
 * Return: the CRC32C of everything fed in so far.
 */
u32 kfd_criu_crc32c(u32 crc, const void *buf, size_t len)
{
	const u8 *p = buf;
	unsigned int chunk;

	crc = ~crc;
	/* crc32c() counts in unsigned int */
	while (len) {
		chunk = min_t(size_t, len, SZ_1G);
		crc = crc32c(crc, p, chunk);
		p += chunk;
		len -= chunk;
	}
	return ~crc;
}

/*
 * The writer
 */

static int kfd_criu_writer_fail(struct kfd_criu_image_writer *w, int err)
{
	if (!w->error)
		w->error = err;
	return w->error;
}

static int kfd_criu_writer_put(struct kfd_criu_image_writer *w,
			       const void *buf, size_t len)
{
	int ret;

	if (!len)
		return 0;
	ret = w->io->write(w->io->ctx, buf, len);
	if (ret > 0)
		ret = -EIO;	/* the sink broke its contract */
	if (ret)
		return kfd_criu_writer_fail(w, ret);
	return 0;
}

/**
 * kfd_criu_image_writer_init() - prepare a writer
 * @w: writer state
 * @io: the sink; must outlive @w
 */
void kfd_criu_image_writer_init(struct kfd_criu_image_writer *w,
				const struct kfd_criu_image_io *io)
{
	memset(w, 0, sizeof(*w));
	w->io = io;
}

/**
 * kfd_criu_image_write_header() - write the stream header
 * @w: writer state
 * @release: producing kernel's release string, or NULL; truncated to
 *	%KFD_CRIU_RELEASE_LEN - 1 bytes and NUL padded
 *
 * Must be the first call after kfd_criu_image_writer_init().
 *
 * Return: 0, -EINVAL if the header was already written, the sink's error,
 * or an earlier error.
 */
int kfd_criu_image_write_header(struct kfd_criu_image_writer *w,
				const char *release)
{
	struct kfd_criu_image_header hdr;
	u32 crc;

	if (w->error)
		return w->error;
	if (w->header_written)
		return kfd_criu_writer_fail(w, -EINVAL);

	memset(&hdr, 0, sizeof(hdr));
	memcpy(hdr.magic, KFD_CRIU_IMAGE_MAGIC, KFD_CRIU_IMAGE_MAGIC_LEN);
	hdr.version = cpu_to_le32(KFD_CRIU_IMAGE_VERSION);
	hdr.header_size = cpu_to_le32(sizeof(hdr));
	if (release)
		memcpy(hdr.release, release,
		       strnlen(release, KFD_CRIU_RELEASE_LEN - 1));
	crc = kfd_criu_crc32c(0, &hdr, offsetof(typeof(hdr), crc));
	hdr.crc = cpu_to_le32(crc);

	w->header_written = true;
	return kfd_criu_writer_put(w, &hdr, sizeof(hdr));
}

/* Opens a record of any type; END goes through here only from write_end. */
static int kfd_criu_writer_open(struct kfd_criu_image_writer *w, u32 type,
				u32 flags, u32 len)
{
	struct kfd_criu_record_header rh;

	if (w->error)
		return w->error;
	if (!w->header_written || w->ended || w->in_record)
		return kfd_criu_writer_fail(w, -EINVAL);
	if ((flags & ~KFD_CRIU_RECORD_FLAGS_KNOWN) ||
	    len > KFD_CRIU_MAX_RECORD_LEN)
		return kfd_criu_writer_fail(w, -EINVAL);

	rh.type = cpu_to_le32(type);
	rh.flags = cpu_to_le32(flags);
	rh.length = cpu_to_le32(len);
	w->rec_crc = kfd_criu_crc32c(0, &rh, sizeof(rh));
	w->rec_remaining = len;
	w->in_record = true;
	return kfd_criu_writer_put(w, &rh, sizeof(rh));
}

static int kfd_criu_writer_data(struct kfd_criu_image_writer *w,
				const void *buf, u32 len)
{
	const u8 *p = buf;
	u32 piece;
	int ret;

	if (w->error)
		return w->error;
	if (!w->in_record)
		return kfd_criu_writer_fail(w, -EINVAL);
	if (len > w->rec_remaining)
		return kfd_criu_writer_fail(w, -EMSGSIZE);

	w->rec_remaining -= len;
	while (len) {
		piece = min_t(u32, len, KFD_CRIU_CRC_PIECE);
		ret = kfd_criu_writer_put(w, p, piece);
		if (ret)
			return ret;
		w->rec_crc = kfd_criu_crc32c(w->rec_crc, p, piece);
		p += piece;
		len -= piece;
	}
	return 0;
}

static int kfd_criu_writer_close(struct kfd_criu_image_writer *w)
{
	__le32 trailer;

	if (w->error)
		return w->error;
	if (!w->in_record)
		return kfd_criu_writer_fail(w, -EINVAL);
	if (w->rec_remaining)
		return kfd_criu_writer_fail(w, -ENODATA);

	w->in_record = false;
	trailer = cpu_to_le32(w->rec_crc);
	return kfd_criu_writer_put(w, &trailer, sizeof(trailer));
}

/**
 * kfd_criu_image_begin_record() - start a record whose payload follows
 * @w: writer state
 * @type: record type; not %KFD_CRIU_REC_END, see kfd_criu_image_write_end()
 * @flags: %KFD_CRIU_RECORD_MANDATORY or 0
 * @len: exact payload length, at most %KFD_CRIU_MAX_RECORD_LEN
 *
 * Writes the record header. The payload then goes out through any number
 * of kfd_criu_image_write_data() calls, and kfd_criu_image_finish_record()
 * closes the record, so a payload never needs to be in memory as a whole.
 *
 * Return: 0, -EINVAL for END, unknown flags, a length over the limit, a
 * record already open, no header yet or a finished stream, the sink's
 * error, or an earlier error.
 */
int kfd_criu_image_begin_record(struct kfd_criu_image_writer *w, u32 type,
				u32 flags, u32 len)
{
	if (w->error)
		return w->error;
	if (type == KFD_CRIU_REC_END)
		return kfd_criu_writer_fail(w, -EINVAL);
	return kfd_criu_writer_open(w, type, flags, len);
}

/**
 * kfd_criu_image_write_data() - write a piece of the open record's payload
 * @w: writer state
 * @buf: the bytes
 * @len: number of bytes; together with earlier pieces at most the length
 *	given to kfd_criu_image_begin_record()
 *
 * Return: 0, -EINVAL if no record is open, -EMSGSIZE if @len goes past the
 * declared length (nothing is written), the sink's error, or an earlier
 * error.
 */
int kfd_criu_image_write_data(struct kfd_criu_image_writer *w,
			      const void *buf, u32 len)
{
	u64 total;
	int ret;

	ret = kfd_criu_writer_data(w, buf, len);
	if (ret)
		return ret;
	if (check_add_overflow(w->payload_bytes, (u64)len, &total))
		return kfd_criu_writer_fail(w, -EOVERFLOW);
	w->payload_bytes = total;
	return 0;
}

/**
 * kfd_criu_image_finish_record() - close the open record
 * @w: writer state
 *
 * Writes the CRC trailer once the whole declared payload was written.
 *
 * Return: 0, -EINVAL if no record is open, -ENODATA if payload bytes are
 * missing, -EOVERFLOW after 2^32 - 1 records, the sink's error, or an
 * earlier error.
 */
int kfd_criu_image_finish_record(struct kfd_criu_image_writer *w)
{
	u32 records;
	int ret;

	ret = kfd_criu_writer_close(w);
	if (ret)
		return ret;
	if (check_add_overflow(w->records, 1U, &records))
		return kfd_criu_writer_fail(w, -EOVERFLOW);
	w->records = records;
	return 0;
}

/**
 * kfd_criu_image_write_record() - write a record whose payload is in memory
 * @w: writer state
 * @type: record type; not %KFD_CRIU_REC_END
 * @flags: %KFD_CRIU_RECORD_MANDATORY or 0
 * @payload: the payload; may be NULL when @len is 0
 * @len: payload length
 *
 * Return: as kfd_criu_image_begin_record(), kfd_criu_image_write_data()
 * and kfd_criu_image_finish_record().
 */
int kfd_criu_image_write_record(struct kfd_criu_image_writer *w, u32 type,
				u32 flags, const void *payload, u32 len)
{
	int ret;

	ret = kfd_criu_image_begin_record(w, type, flags, len);
	if (!ret)
		ret = kfd_criu_image_write_data(w, payload, len);
	if (!ret)
		ret = kfd_criu_image_finish_record(w);
	return ret;
}

/**
 * kfd_criu_image_write_end() - write the END record
 * @w: writer state
 *
 * END carries the number of records and payload bytes written before it,
 * so a reader detects a stream cut at a record boundary. No record can
 * follow it.
 *
 * Return: 0, -EINVAL if a record is still open, there is no header or
 * END was already written, the sink's error, or an earlier error.
 */
int kfd_criu_image_write_end(struct kfd_criu_image_writer *w)
{
	struct kfd_criu_end_rec end = {
		.records = cpu_to_le32(w->records),
		.payload_bytes = cpu_to_le64(w->payload_bytes),
	};
	int ret;

	ret = kfd_criu_writer_open(w, KFD_CRIU_REC_END,
				   KFD_CRIU_RECORD_MANDATORY, sizeof(end));
	if (!ret)
		ret = kfd_criu_writer_data(w, &end, sizeof(end));
	if (!ret)
		ret = kfd_criu_writer_close(w);
	if (!ret)
		w->ended = true;
	return ret;
}

/*
 * The reader
 */

static const struct kfd_criu_record_desc kfd_criu_end_desc = {
	.type = KFD_CRIU_REC_END,
	.min_len = sizeof(struct kfd_criu_end_rec),
	.max_len = sizeof(struct kfd_criu_end_rec),
};

static int kfd_criu_reader_fail(struct kfd_criu_image_reader *r, int err)
{
	if (!r->error)
		r->error = err;
	return r->error;
}

static int kfd_criu_reader_get(struct kfd_criu_image_reader *r, void *buf,
			       size_t len)
{
	int ret;

	if (!len)
		return 0;
	ret = r->io->read(r->io->ctx, buf, len);
	return ret > 0 ? -EIO : ret;	/* > 0: the source broke its contract */
}

/**
 * kfd_criu_image_reader_init() - prepare a reader
 * @r: reader state
 * @io: the source; must outlive @r
 * @known: record types the caller understands, usually
 *	%kfd_criu_v1_records; must outlive @r
 * @num_known: entries in @known
 */
void kfd_criu_image_reader_init(struct kfd_criu_image_reader *r,
				const struct kfd_criu_image_io *io,
				const struct kfd_criu_record_desc *known,
				size_t num_known)
{
	memset(r, 0, sizeof(*r));
	r->io = io;
	r->known = known;
	r->num_known = num_known;
}

static bool kfd_criu_release_ok(const u8 *release)
{
	size_t i = strnlen((const char *)release, KFD_CRIU_RELEASE_LEN);

	if (i == KFD_CRIU_RELEASE_LEN)
		return false;	/* not NUL terminated */
	for (; i < KFD_CRIU_RELEASE_LEN; i++)
		if (release[i])
			return false;	/* not NUL padded */
	return true;
}

/*
 * The version is checked before the CRC: a header of another version may
 * have another layout, so its CRC cannot be checked here, and -EPROTO says
 * more than -EBADMSG.
 */
static int kfd_criu_check_header(const struct kfd_criu_image_header *hdr)
{
	u32 crc = kfd_criu_crc32c(0, hdr, offsetof(typeof(*hdr), crc));

	if (memcmp(hdr->magic, KFD_CRIU_IMAGE_MAGIC, KFD_CRIU_IMAGE_MAGIC_LEN))
		return -EINVAL;
	if (le32_to_cpu(hdr->version) != KFD_CRIU_IMAGE_VERSION)
		return -EPROTO;
	if (le32_to_cpu(hdr->crc) != crc)
		return -EBADMSG;
	if (le32_to_cpu(hdr->flags))
		return -EPROTO;
	if (le32_to_cpu(hdr->header_size) != sizeof(*hdr) ||
	    !kfd_criu_release_ok(hdr->release))
		return -EINVAL;
	return 0;
}

/**
 * kfd_criu_image_read_header() - read and validate the stream header
 * @r: reader state
 * @hdr: receives the header, for the release string in diagnostics
 *
 * Return: 0, -ENODATA if the stream is shorter than a header, -EINVAL for
 * a bad magic, header size or release string or a second call, -EPROTO
 * for another format version or non-zero flags, -EBADMSG for a CRC
 * mismatch, the source's error, or an earlier error.
 */
int kfd_criu_image_read_header(struct kfd_criu_image_reader *r,
			       struct kfd_criu_image_header *hdr)
{
	int ret;

	if (r->error)
		return r->error;
	if (r->header_read)
		return kfd_criu_reader_fail(r, -EINVAL);

	ret = kfd_criu_reader_get(r, hdr, sizeof(*hdr));
	if (!ret)
		ret = kfd_criu_check_header(hdr);
	if (ret)
		return kfd_criu_reader_fail(r, ret);
	r->header_read = true;
	return 0;
}

static const struct kfd_criu_record_desc *
kfd_criu_find_desc(const struct kfd_criu_image_reader *r, u32 type)
{
	size_t i;

	if (type == KFD_CRIU_REC_END)
		return &kfd_criu_end_desc;
	for (i = 0; i < r->num_known; i++)
		if (r->known[i].type == type)
			return &r->known[i];
	return NULL;
}

/* Everything about a record that can be checked before its payload. */
static int kfd_criu_check_record(const struct kfd_criu_record *rec,
				 const struct kfd_criu_record_desc *desc,
				 u32 buf_size)
{
	if (rec->flags & ~KFD_CRIU_RECORD_FLAGS_KNOWN)
		return -EINVAL;
	if (rec->length > KFD_CRIU_MAX_RECORD_LEN)
		return -EINVAL;
	if (!desc)
		return rec->flags & KFD_CRIU_RECORD_MANDATORY ? -EOPNOTSUPP : 0;
	if (rec->length < desc->min_len || rec->length > desc->max_len)
		return -EINVAL;
	if (rec->length > buf_size)
		return -EOVERFLOW;
	return 0;
}

static int kfd_criu_read_trailer(struct kfd_criu_image_reader *r, u32 crc)
{
	__le32 trailer;
	int ret;

	ret = kfd_criu_reader_get(r, &trailer, sizeof(trailer));
	if (ret)
		return ret;
	return le32_to_cpu(trailer) == crc ? 0 : -EBADMSG;
}

static int kfd_criu_read_payload(struct kfd_criu_image_reader *r, u32 crc,
				 void *buf, u32 len)
{
	u8 *p = buf;
	u32 piece;
	int ret;

	while (len) {
		piece = min_t(u32, len, KFD_CRIU_CRC_PIECE);
		ret = kfd_criu_reader_get(r, p, piece);
		if (ret)
			return ret;
		crc = kfd_criu_crc32c(crc, p, piece);
		p += piece;
		len -= piece;
	}
	return kfd_criu_read_trailer(r, crc);
}

static int kfd_criu_skip_payload(struct kfd_criu_image_reader *r, u32 crc,
				 u32 len)
{
	u8 scratch[KFD_CRIU_SKIP_CHUNK];
	u32 chunk;
	int ret;

	while (len) {
		chunk = min_t(u32, len, sizeof(scratch));
		ret = kfd_criu_reader_get(r, scratch, chunk);
		if (ret)
			return ret;
		crc = kfd_criu_crc32c(crc, scratch, chunk);
		len -= chunk;
	}
	return kfd_criu_read_trailer(r, crc);
}

static int kfd_criu_reader_count(struct kfd_criu_image_reader *r, u32 len)
{
	u64 payload_bytes;
	u32 records;

	if (check_add_overflow(r->records, 1U, &records) ||
	    check_add_overflow(r->payload_bytes, (u64)len, &payload_bytes))
		return -EINVAL;	/* no END can match this */
	r->records = records;
	r->payload_bytes = payload_bytes;
	return 0;
}

static int kfd_criu_check_end(const struct kfd_criu_image_reader *r,
			      const void *buf)
{
	struct kfd_criu_end_rec end;

	memcpy(&end, buf, sizeof(end));	/* @buf may be unaligned */
	if (le32_to_cpu(end.records) != r->records ||
	    le64_to_cpu(end.payload_bytes) != r->payload_bytes ||
	    le32_to_cpu(end.reserved))
		return -EINVAL;
	return 0;
}

/*
 * Reads one record. Returns 1 after skipping an unknown optional record,
 * 0 when @rec and @buf hold a known record, or a negative errno.
 */
static int kfd_criu_read_one(struct kfd_criu_image_reader *r,
			     struct kfd_criu_record *rec, void *buf,
			     u32 buf_size)
{
	const struct kfd_criu_record_desc *desc;
	struct kfd_criu_record_header rh;
	u32 crc;
	int ret;

	ret = kfd_criu_reader_get(r, &rh, sizeof(rh));
	if (ret)
		return ret;
	rec->type = le32_to_cpu(rh.type);
	rec->flags = le32_to_cpu(rh.flags);
	rec->length = le32_to_cpu(rh.length);
	desc = kfd_criu_find_desc(r, rec->type);
	ret = kfd_criu_check_record(rec, desc, buf_size);
	if (ret)
		return ret;

	crc = kfd_criu_crc32c(0, &rh, sizeof(rh));
	if (!desc) {
		ret = kfd_criu_skip_payload(r, crc, rec->length);
		r->skipped += !ret;
	} else {
		ret = kfd_criu_read_payload(r, crc, buf, rec->length);
	}
	if (ret || rec->type == KFD_CRIU_REC_END)
		return ret;
	ret = kfd_criu_reader_count(r, rec->length);
	if (ret)
		return ret;
	return desc ? 0 : 1;
}

/**
 * kfd_criu_image_read_record() - read and validate the next known record
 * @r: reader state, after kfd_criu_image_read_header()
 * @rec: receives type, flags and payload length
 * @buf: receives the payload
 * @buf_size: size of @buf; must fit the largest record in the reader's
 *	table, -EOVERFLOW otherwise
 *
 * Unknown optional records on the way are consumed, CRC-checked and
 * counted, and not returned. A returned record has passed its type's
 * length bounds and its CRC; its contents still need the matching
 * validator. When @rec->type is %KFD_CRIU_REC_END its counts have been
 * checked against the stream, and the stream is complete.
 *
 * Return: 0, -ENODATA if the stream ends early, -EINVAL for unknown
 * record flags, a length out of bounds, END counts that do not match, or
 * a call after END or before the header, -EOPNOTSUPP for an unknown
 * mandatory record, -EBADMSG for a CRC mismatch, -EOVERFLOW if @buf is
 * too small, the source's error, or an earlier error.
 */
int kfd_criu_image_read_record(struct kfd_criu_image_reader *r,
			       struct kfd_criu_record *rec,
			       void *buf, u32 buf_size)
{
	int ret;

	if (r->error)
		return r->error;
	if (!r->header_read || r->ended)
		return kfd_criu_reader_fail(r, -EINVAL);

	do {
		ret = kfd_criu_read_one(r, rec, buf, buf_size);
	} while (ret == 1);
	if (!ret && rec->type == KFD_CRIU_REC_END) {
		ret = kfd_criu_check_end(r, buf);
		r->ended = !ret;
	}
	if (ret)
		return kfd_criu_reader_fail(r, ret);
	return 0;
}

/**
 * kfd_criu_image_expect_eof() - check that nothing follows END
 * @r: reader state, after END was returned
 *
 * Tries to read one more byte. On a pipe or socket this waits until the
 * writer closes its end.
 *
 * Return: 0 at the end of the stream, -EINVAL if bytes follow END or END
 * was not read yet, the source's error, or an earlier error.
 */
int kfd_criu_image_expect_eof(struct kfd_criu_image_reader *r)
{
	u8 byte;
	int ret;

	if (r->error)
		return r->error;
	if (!r->ended)
		return kfd_criu_reader_fail(r, -EINVAL);

	ret = kfd_criu_reader_get(r, &byte, sizeof(byte));
	if (ret == -ENODATA)
		return 0;
	return kfd_criu_reader_fail(r, ret ?: -EINVAL);
}

/*
 * Records of format version 1
 */

/*
 * The reader table for a version 1 restore. The fixed-size records must
 * match their struct exactly; a later revision that grows one adds a new
 * record type instead.
 */
const struct kfd_criu_record_desc kfd_criu_v1_records[] = {
	{ KFD_CRIU_REC_END, sizeof(struct kfd_criu_end_rec),
	  sizeof(struct kfd_criu_end_rec) },
	{ KFD_CRIU_REC_COMPAT, sizeof(struct kfd_criu_compat_rec),
	  sizeof(struct kfd_criu_compat_rec) },
	{ KFD_CRIU_REC_PROCESS, sizeof(struct kfd_criu_process_rec),
	  sizeof(struct kfd_criu_process_rec) },
	{ KFD_CRIU_REC_SIGNAL_PAGE, sizeof(u64), KFD_CRIU_SIGNAL_PAGE_MAX },
	{ KFD_CRIU_REC_EVENT, sizeof(struct kfd_criu_event_rec),
	  sizeof(struct kfd_criu_event_rec) },
	{ KFD_CRIU_REC_GPU, sizeof(struct kfd_criu_gpu_rec),
	  sizeof(struct kfd_criu_gpu_rec) },
	{ KFD_CRIU_REC_BO, sizeof(struct kfd_criu_bo_rec),
	  sizeof(struct kfd_criu_bo_rec) },
	{ KFD_CRIU_REC_BO_DATA, sizeof(struct kfd_criu_bo_data_hdr) + 1,
	  sizeof(struct kfd_criu_bo_data_hdr) + KFD_CRIU_BO_CHUNK },
	{ KFD_CRIU_REC_COUNTS, sizeof(struct kfd_criu_counts_rec),
	  sizeof(struct kfd_criu_counts_rec) },
	{ KFD_CRIU_REC_QUEUE, sizeof(struct kfd_criu_queue_rec),
	  KFD_CRIU_QUEUE_MAX_LEN },
	{ KFD_CRIU_REC_QUEUE_STATE, KFD_CRIU_QUEUE_STATE_FIXED,
	  KFD_CRIU_QUEUE_STATE_FIXED + KFD_CRIU_MAX_CTL_STACK_SIZE },
	{ KFD_CRIU_REC_SVM_RANGE, sizeof(struct kfd_criu_svm_rec),
	  sizeof(struct kfd_criu_svm_rec) },
	{ KFD_CRIU_REC_TRAP_HANDLER, sizeof(struct kfd_criu_trap_rec),
	  sizeof(struct kfd_criu_trap_rec) },
};

const size_t kfd_criu_v1_num_records = ARRAY_SIZE(kfd_criu_v1_records);

static bool kfd_criu_is_bool(__le32 value)
{
	return le32_to_cpu(value) <= 1;
}

/**
 * kfd_criu_validate_compat() - check a %KFD_CRIU_REC_COMPAT payload
 * @rec: the record
 *
 * Return: 0, or -EINVAL if a reserved field is set or the image claims
 * more than %KFD_CRIU_MAX_GPUS GPUs.
 */
int kfd_criu_validate_compat(const struct kfd_criu_compat_rec *rec)
{
	if (le32_to_cpu(rec->reserved))
		return -EINVAL;
	if (le32_to_cpu(rec->num_gpus) > KFD_CRIU_MAX_GPUS)
		return -EINVAL;
	return 0;
}

/**
 * kfd_criu_validate_process() - check a %KFD_CRIU_REC_PROCESS payload
 * @rec: the record
 *
 * @r_debug is a user address the runtime gave the kernel; it is restored
 * as it was and never dereferenced by the kernel, so any value passes.
 *
 * Images written before BOs were recorded have 0 in @num_bos, which
 * stays valid. Whether the BO count fits the GPU count is the restore
 * code's check (kfd_criu_validate_bo() refuses a BO of a missing GPU).
 *
 * Return: 0, or -EINVAL for a boolean that is not 0 or 1, an unknown
 * runtime state, more than %KFD_CRIU_MAX_EVENTS events, a signal page
 * size that is not a multiple of 8 up to %KFD_CRIU_SIGNAL_PAGE_MAX, or
 * more than %KFD_CRIU_MAX_BOS BOs.
 */
int kfd_criu_validate_process(const struct kfd_criu_process_rec *rec)
{
	u32 page_size = le32_to_cpu(rec->signal_page_size);

	if (!kfd_criu_is_bool(rec->xnack_enabled) ||
	    !kfd_criu_is_bool(rec->ttmp_setup))
		return -EINVAL;
	if (le32_to_cpu(rec->runtime_state) > DEBUG_RUNTIME_STATE_ENABLED_ERROR)
		return -EINVAL;
	if (le32_to_cpu(rec->num_events) > KFD_CRIU_MAX_EVENTS)
		return -EINVAL;
	if (page_size % sizeof(u64) || page_size > KFD_CRIU_SIGNAL_PAGE_MAX)
		return -EINVAL;
	if (le32_to_cpu(rec->num_bos) > KFD_CRIU_MAX_BOS)
		return -EINVAL;
	return 0;
}

static bool kfd_criu_event_has_slot(u32 type)
{
	return type == KFD_IOC_EVENT_SIGNAL || type == KFD_IOC_EVENT_DEBUG_EVENT;
}

/* The id ranges kfd_events.c allocates from for each event type. */
static int kfd_criu_check_event_id(u32 type, u32 id)
{
	if (type > KFD_IOC_EVENT_MEMORY)
		return -EINVAL;
	if (kfd_criu_event_has_slot(type))
		return id >= 1 && id < KFD_SIGNAL_EVENT_LIMIT ? 0 : -EINVAL;
	if (id < KFD_CRIU_FIRST_NONSIGNAL_EVENT_ID ||
	    id > KFD_CRIU_LAST_NONSIGNAL_EVENT_ID)
		return -EINVAL;
	return 0;
}

static int kfd_criu_check_mem_exception(const struct kfd_criu_event_rec *rec,
					bool used)
{
	if (!used)
		return rec->mem_va || rec->mem_gpu_id || rec->mem_error_type ||
		       rec->mem_not_present || rec->mem_read_only ||
		       rec->mem_no_execute || rec->mem_imprecise ? -EINVAL : 0;

	if (!kfd_criu_is_bool(rec->mem_not_present) ||
	    !kfd_criu_is_bool(rec->mem_read_only) ||
	    !kfd_criu_is_bool(rec->mem_no_execute) ||
	    !kfd_criu_is_bool(rec->mem_imprecise))
		return -EINVAL;
	if (le32_to_cpu(rec->mem_error_type) > KFD_MEM_ERR_GPU_HANG)
		return -EINVAL;
	return 0;
}

static int kfd_criu_check_hw_exception(const struct kfd_criu_event_rec *rec,
				       bool used)
{
	if (!used)
		return rec->hw_reset_type || rec->hw_reset_cause ||
		       rec->hw_memory_lost || rec->hw_gpu_id ? -EINVAL : 0;

	if (le32_to_cpu(rec->hw_reset_type) > KFD_HW_EXCEPTION_PER_ENGINE_RESET ||
	    le32_to_cpu(rec->hw_reset_cause) > KFD_HW_EXCEPTION_ECC ||
	    !kfd_criu_is_bool(rec->hw_memory_lost))
		return -EINVAL;
	return 0;
}

/**
 * kfd_criu_validate_event_state() - check a %KFD_CRIU_REC_EVENT payload
 *	but for its age
 * @rec: the record
 *
 * Signal and debug events must use a signal slot id, 1 to
 * %KFD_SIGNAL_EVENT_LIMIT - 1; every other type an id from
 * %KFD_CRIU_FIRST_NONSIGNAL_EVENT_ID to %KFD_CRIU_LAST_NONSIGNAL_EVENT_ID.
 * Memory exception fields may only be set for %KFD_IOC_EVENT_MEMORY and
 * hardware exception fields only for %KFD_IOC_EVENT_HW_EXCEPTION, each
 * within the values the uAPI defines.
 *
 * A dump checks its events with this alone: an age is the kernel's own
 * count, which every signal raises, also past %KFD_CRIU_MAX_EVENT_AGE in a
 * process restored near it, so CHECKPOINT carries whatever age RESTORE
 * let the process reach.
 *
 * Return: 0, or -EINVAL for an unknown type, an id outside its type's
 * range, a boolean that is not 0 or 1, an exception field that is out of
 * range or set for the wrong type, or a reserved field that is set.
 */
int kfd_criu_validate_event_state(const struct kfd_criu_event_rec *rec)
{
	u32 type = le32_to_cpu(rec->type);
	int ret;

	if (!kfd_criu_is_bool(rec->auto_reset) ||
	    !kfd_criu_is_bool(rec->signaled) ||
	    le32_to_cpu(rec->reserved) || le32_to_cpu(rec->reserved2))
		return -EINVAL;
	ret = kfd_criu_check_event_id(type, le32_to_cpu(rec->event_id));
	if (ret)
		return ret;
	ret = kfd_criu_check_mem_exception(rec, type == KFD_IOC_EVENT_MEMORY);
	if (ret)
		return ret;
	return kfd_criu_check_hw_exception(rec,
					   type == KFD_IOC_EVENT_HW_EXCEPTION);
}

/**
 * kfd_criu_validate_event() - check a %KFD_CRIU_REC_EVENT payload
 * @rec: the record
 *
 * As kfd_criu_validate_event_state(), and @event_age is at most
 * %KFD_CRIU_MAX_EVENT_AGE, far from the wrap set_event() warns about: the
 * check of an image that is read.
 *
 * Return: 0, or -EINVAL for an event age above %KFD_CRIU_MAX_EVENT_AGE or
 * what kfd_criu_validate_event_state() refuses.
 */
int kfd_criu_validate_event(const struct kfd_criu_event_rec *rec)
{
	if (le64_to_cpu(rec->event_age) > KFD_CRIU_MAX_EVENT_AGE)
		return -EINVAL;
	return kfd_criu_validate_event_state(rec);
}

/**
 * kfd_criu_check_event_ids() - check that event ids are unique
 * @events: the event records, in stream order
 * @num_events: entries in @events
 *
 * The writer emits events in the order idr_for_each_entry() walks them,
 * which is strictly ascending by id, so uniqueness is checked in one pass:
 * equal neighbours are a duplicate, a descent is a malformed image.
 *
 * Return: 0, -EEXIST for a duplicate id, -EINVAL for ids out of order or
 * more than %KFD_CRIU_MAX_EVENTS events.
 */
int kfd_criu_check_event_ids(const struct kfd_criu_event_rec *events,
			     u32 num_events)
{
	u32 i, prev, id;

	if (num_events > KFD_CRIU_MAX_EVENTS)
		return -EINVAL;
	for (i = 1; i < num_events; i++) {
		prev = le32_to_cpu(events[i - 1].event_id);
		id = le32_to_cpu(events[i].event_id);
		if (id == prev)
			return -EEXIST;
		if (id < prev)
			return -EINVAL;
	}
	return 0;
}

/**
 * kfd_criu_validate_event_slot() - check an event against the signal page
 * @proc: the process record, already validated
 * @rec: the event record, already validated
 *
 * The SIGNAL_PAGE record holds the process's mapped signal slots
 * (@proc->signal_page_size bytes). An event with a signal slot needs that
 * page, and its slot must lie inside it.
 *
 * Return: 0, or -EINVAL if the event's slot is outside the signal page.
 */
int kfd_criu_validate_event_slot(const struct kfd_criu_process_rec *proc,
				 const struct kfd_criu_event_rec *rec)
{
	u32 slots = le32_to_cpu(proc->signal_page_size) / sizeof(u64);

	if (!kfd_criu_event_has_slot(le32_to_cpu(rec->type)))
		return 0;
	return le32_to_cpu(rec->event_id) < slots ? 0 : -EINVAL;
}

/*
 * GPUs
 */

/**
 * kfd_criu_validate_gpu() - check a %KFD_CRIU_REC_GPU payload
 * @rec: the record
 *
 * Only what is wrong in any image is refused here; whether a local GPU
 * can take the image GPU's place is kfd_criu_gpu_incompatible()'s call.
 * @num_xcc may be 1 to 16: twice the XCC count of the largest part amdgpu
 * in 6.12 knows, so a new part does not need a new format.
 *
 * Return: 0, or -EINVAL for a zero gpu_id, an XCC count out of range or
 * a reserved field that is set.
 */
int kfd_criu_validate_gpu(const struct kfd_criu_gpu_rec *rec)
{
	u32 num_xcc = le32_to_cpu(rec->num_xcc);

	if (!le32_to_cpu(rec->gpu_id))
		return -EINVAL;
	if (num_xcc < 1 || num_xcc > KFD_CRIU_MAX_XCC)
		return -EINVAL;
	if (le32_to_cpu(rec->flags) & ~KFD_CRIU_GPU_FLAGS)
		return -EINVAL;
	return 0;
}

/**
 * kfd_criu_validate_trap() - check a %KFD_CRIU_REC_TRAP_HANDLER payload
 * @rec: the record
 * @num_gpus: GPU records of the image
 *
 * Return: 0, or -EINVAL for a GPU index out of range, a reserved field
 * that is set, no address at all, an address beyond %KFD_CRIU_MAX_VA or
 * code that is not 4-byte aligned.
 */
int kfd_criu_validate_trap(const struct kfd_criu_trap_rec *rec, u32 num_gpus)
{
	u64 tba = le64_to_cpu(rec->tba_addr);
	u64 tma = le64_to_cpu(rec->tma_addr);

	if (le32_to_cpu(rec->gpu_index) >= num_gpus ||
	    le32_to_cpu(rec->reserved))
		return -EINVAL;
	if (!tba && !tma)
		return -EINVAL;
	if (tba >= KFD_CRIU_MAX_VA || tma >= KFD_CRIU_MAX_VA ||
	    (tba & 3))
		return -EINVAL;
	return 0;
}

/**
 * kfd_criu_check_traps() - check the TRAP_HANDLER records as a set
 * @traps: the records, in stream order
 * @n: entries in @traps
 * @num_gpus: GPU records of the image
 *
 * Each record must be valid, and the GPU indices strictly ascending: one
 * trap handler per GPU, in one encoding.
 *
 * Return: 0 or -EINVAL.
 */
int kfd_criu_check_traps(const struct kfd_criu_trap_rec *traps, u32 n,
			 u32 num_gpus)
{
	u32 i;

	if (n > num_gpus)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (kfd_criu_validate_trap(&traps[i], num_gpus))
			return -EINVAL;
		if (i && le32_to_cpu(traps[i].gpu_index) <=
			 le32_to_cpu(traps[i - 1].gpu_index))
			return -EINVAL;
	}
	return 0;
}

/*
 * gfx_target_version values kgd2kfd_probe() has given one GPU in different
 * kernels, one set per row. A GC 9.4.3 of ASIC revision 0 was 90400 (APU)
 * or 90401 until upstream commit daafa303d19f ("drm/amdkfd: Drop
 * workaround for GC v9.4.3 revID 0") made every GC 9.4.3 and 9.4.4 90402.
 * The value also names the ISA that ROCm picks code objects for, so only
 * a renumbering known to describe the same silicon is accepted, never a
 * rule on the digits.
 */
static const u32 kfd_criu_gfx_renumbered[][3] = {
	{ 90400, 90401, 90402 },
};

static bool kfd_criu_gfx_in_row(const u32 *row, u32 n, u32 gfx)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (row[i] == gfx)
			return true;
	return false;
}

/* The same gfx target, or two numbers one kernel change gave one GPU */
static bool kfd_criu_same_gfx_target(__le32 image, __le32 local)
{
	u32 a = le32_to_cpu(image), b = le32_to_cpu(local);
	u32 r, n = ARRAY_SIZE(kfd_criu_gfx_renumbered[0]);

	if (a == b)
		return true;
	for (r = 0; r < ARRAY_SIZE(kfd_criu_gfx_renumbered); r++)
		if (kfd_criu_gfx_in_row(kfd_criu_gfx_renumbered[r], n, a) &&
		    kfd_criu_gfx_in_row(kfd_criu_gfx_renumbered[r], n, b))
			return true;
	return false;
}

/**
 * kfd_criu_gpu_incompatible() - why a local GPU cannot replace an image GPU
 * @image: the GPU as the image records it
 * @local: a GPU of this machine, described in the same record format
 *
 * The queues, their save areas and the firmware interfaces of a process
 * are only valid on the same silicon in the same partition mode, so the
 * gfx target version, the PCI device id, the ASIC revision, the XCC
 * count, the partition mode, the CWSR and control stack sizes and the
 * CWSR setting must match. The gfx target version may differ only where
 * the kernel is known to have renumbered one GPU (GC 9.4.3: 90400, 90401
 * and 90402), the device id and revision still being equal. The local
 * GPU may have more VRAM and newer firmware, never less or older. The
 * gpu_id is not compared: the restored process keeps the image's ids.
 *
 * Return: NULL when @local is compatible, else the name of the first field
 * that differs: "gfx_target_version", "device_id", "revision_id",
 * "num_xcc", "partition_mode", "cwsr_size", "ctl_stack_size",
 * "cwsr_enable" (%KFD_CRIU_GPU_NO_CWSR, either way), "vram_size",
 * "mec_fw_version" or "sdma_fw_version".
 */
const char *kfd_criu_gpu_incompatible(const struct kfd_criu_gpu_rec *image,
				      const struct kfd_criu_gpu_rec *local)
{
	if (!kfd_criu_same_gfx_target(image->gfx_target_version,
				      local->gfx_target_version))
		return "gfx_target_version";
	if (image->device_id != local->device_id)
		return "device_id";
	if (image->revision_id != local->revision_id)
		return "revision_id";
	if (image->num_xcc != local->num_xcc)
		return "num_xcc";
	if (image->partition_mode != local->partition_mode)
		return "partition_mode";
	if (image->cwsr_size != local->cwsr_size)
		return "cwsr_size";
	if (image->ctl_stack_size != local->ctl_stack_size)
		return "ctl_stack_size";
	if ((image->flags ^ local->flags) & cpu_to_le32(KFD_CRIU_GPU_NO_CWSR))
		return "cwsr_enable";
	if (le64_to_cpu(local->vram_size) < le64_to_cpu(image->vram_size))
		return "vram_size";
	if (le32_to_cpu(local->mec_fw_version) <
	    le32_to_cpu(image->mec_fw_version))
		return "mec_fw_version";
	if (le32_to_cpu(local->sdma_fw_version) <
	    le32_to_cpu(image->sdma_fw_version))
		return "sdma_fw_version";
	return NULL;
}

/* An entry's ids must not repeat in the entries before it. */
static int kfd_criu_check_map_entry(const struct kfd_criu_gpu_map *map,
				    u32 i)
{
	u32 j;

	if (map[i].reserved || !map[i].local_gpu_id || map[i].drm_fd < -1)
		return -EINVAL;
	for (j = 0; j < i; j++) {
		if (map[j].local_gpu_id == map[i].local_gpu_id)
			return -EINVAL;
		if (map[i].image_gpu_id &&
		    map[j].image_gpu_id == map[i].image_gpu_id)
			return -EINVAL;
	}
	return 0;
}

/**
 * kfd_criu_validate_gpu_map() - check the GPU map RESTORE was given
 * @map: the entries, copied from userspace; may be NULL when @num_map is 0
 * @num_map: entries in @map
 *
 * Each entry names one local GPU, once, with its render node descriptor
 * or -1; a non-zero @image_gpu_id may appear in one entry only. Whether
 * the ids exist is checked when the GPUs are mapped.
 *
 * Return: 0, or -EINVAL for more than %KFD_CRIU_MAX_GPUS entries, a
 * reserved field that is set, a zero local gpu_id, a descriptor below -1,
 * or a local gpu_id or non-zero image gpu_id that repeats.
 */
int kfd_criu_validate_gpu_map(const struct kfd_criu_gpu_map *map,
			      u32 num_map)
{
	u32 i;
	int ret;

	if (num_map > KFD_CRIU_MAX_GPUS)
		return -EINVAL;
	for (i = 0; i < num_map; i++) {
		ret = kfd_criu_check_map_entry(map, i);
		if (ret)
			return ret;
	}
	return 0;
}

static int kfd_criu_gpu_mismatch(struct kfd_criu_gpu_mismatch *why,
				 u32 image_gpu_id, u32 local_gpu_id,
				 const char *field)
{
	if (why) {
		why->image_gpu_id = image_gpu_id;
		why->local_gpu_id = local_gpu_id;
		why->field = field;
	}
	return -ENODEV;
}

static u32 kfd_criu_find_gpu(const struct kfd_criu_gpu_rec *gpus, u32 num,
			     u32 gpu_id)
{
	u32 i;

	for (i = 0; i < num; i++)
		if (le32_to_cpu(gpus[i].gpu_id) == gpu_id)
			return i;
	return U32_MAX;
}

static const struct kfd_criu_gpu_map *
kfd_criu_find_map(const struct kfd_criu_gpu_map *map, u32 num_map,
		  u32 image_gpu_id)
{
	u32 i;

	for (i = 0; i < num_map; i++)
		if (map[i].image_gpu_id && map[i].image_gpu_id == image_gpu_id)
			return &map[i];
	return NULL;
}

static bool kfd_criu_local_taken(const u32 *target, u32 num_image, u32 local)
{
	u32 i;

	for (i = 0; i < num_image; i++)
		if (target[i] == local)
			return true;
	return false;
}

/* Places image GPU @i on the local GPU with id @local_id, if it fits. */
static int kfd_criu_place_gpu(const struct kfd_criu_gpu_rec *image,
			      u32 num_image, u32 i,
			      const struct kfd_criu_gpu_rec *local,
			      u32 num_local, u32 local_id, u32 *target,
			      struct kfd_criu_gpu_mismatch *why)
{
	u32 image_id = le32_to_cpu(image[i].gpu_id);
	u32 l = kfd_criu_find_gpu(local, num_local, local_id);
	const char *field;

	if (l == U32_MAX)
		return kfd_criu_gpu_mismatch(why, image_id, 0, "no such GPU");
	if (kfd_criu_local_taken(target, num_image, l))
		return kfd_criu_gpu_mismatch(why, image_id, local_id,
					     "already used");
	field = kfd_criu_gpu_incompatible(&image[i], &local[l]);
	if (field)
		return kfd_criu_gpu_mismatch(why, image_id, local_id, field);
	target[i] = l;
	return 0;
}

/* Places the image GPUs the map names, or only the others. */
static int kfd_criu_place_gpus(const struct kfd_criu_gpu_rec *image,
			       u32 num_image,
			       const struct kfd_criu_gpu_rec *local,
			       u32 num_local,
			       const struct kfd_criu_gpu_map *map, u32 num_map,
			       bool explicit, u32 *target,
			       struct kfd_criu_gpu_mismatch *why)
{
	const struct kfd_criu_gpu_map *entry;
	u32 i, image_id, local_id;
	int ret;

	for (i = 0; i < num_image; i++) {
		image_id = le32_to_cpu(image[i].gpu_id);
		entry = kfd_criu_find_map(map, num_map, image_id);
		if (!entry != !explicit)
			continue;
		local_id = entry ? entry->local_gpu_id : image_id;
		ret = kfd_criu_place_gpu(image, num_image, i, local, num_local,
					 local_id, target, why);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * kfd_criu_map_gpus() - choose the local GPU each image GPU is restored on
 * @image: the image's GPU records, validated, in stream order
 * @num_image: entries in @image
 * @local: this machine's GPUs, in the same record format
 * @num_local: entries in @local
 * @map: the caller's GPU map, already passed kfd_criu_validate_gpu_map();
 *	may be NULL when @num_map is 0
 * @num_map: entries in @map
 * @target: receives, for each image GPU i, the index into @local of the
 *	GPU it goes to; @num_image entries
 * @why: receives the image GPU that could not be placed and the reason on
 *	-ENODEV; may be NULL
 *
 * An image GPU that a map entry names goes to that entry's local GPU.
 * Every other image GPU goes to the local GPU with the same gpu_id. There
 * is no other fallback: a restore onto other hardware must say where each
 * GPU goes. The explicit entries are placed first, so they win over a
 * default that wants the same local GPU; each local GPU takes at most one
 * image GPU, and it must be compatible (kfd_criu_gpu_incompatible()).
 * Image gpu_ids must be unique, as the process looks its GPUs up by them.
 *
 * Return: 0, -EINVAL for more than %KFD_CRIU_MAX_GPUS image GPUs, a
 * gpu_id that repeats among them, or a map entry naming an image GPU the
 * image does not have, -ENODEV when an image GPU's local GPU does not
 * exist, is taken, or is incompatible. @target is undefined on error.
 */
int kfd_criu_map_gpus(const struct kfd_criu_gpu_rec *image, u32 num_image,
		      const struct kfd_criu_gpu_rec *local, u32 num_local,
		      const struct kfd_criu_gpu_map *map, u32 num_map,
		      u32 *target, struct kfd_criu_gpu_mismatch *why)
{
	u32 i;
	int ret;

	if (num_image > KFD_CRIU_MAX_GPUS)
		return -EINVAL;
	for (i = 0; i < num_image; i++) {
		if (kfd_criu_find_gpu(image, i, le32_to_cpu(image[i].gpu_id)) !=
		    U32_MAX)
			return -EINVAL;
		target[i] = U32_MAX;
	}
	for (i = 0; i < num_map; i++)
		if (map[i].image_gpu_id &&
		    kfd_criu_find_gpu(image, num_image, map[i].image_gpu_id) ==
		    U32_MAX)
			return -EINVAL;

	ret = kfd_criu_place_gpus(image, num_image, local, num_local, map,
				  num_map, true, target, why);
	if (ret)
		return ret;
	return kfd_criu_place_gpus(image, num_image, local, num_local, map,
				   num_map, false, target, why);
}

/*
 * Buffer objects
 */

/*
 * The uAPI spells the top flag (1 << 31), which UBSan reports wherever it
 * is evaluated at run time; a static initializer is folded at build time.
 */
static const u32 kfd_criu_bo_flags_known = KFD_CRIU_BO_FLAGS_KNOWN;

static u32 kfd_criu_bo_domain(u32 alloc_flags)
{
	return alloc_flags & KFD_CRIU_BO_DOMAINS;
}

/**
 * kfd_criu_bo_has_contents() - whether a BO's contents are in the image
 * @alloc_flags: the BO's KFD_IOC_ALLOC_MEM_FLAGS_*
 *
 * VRAM and GTT BOs are saved. A userptr BO's memory is the process's own,
 * which CRIU saves with the rest of it; doorbell and MMIO remap BOs map
 * hardware registers, which have nothing to save.
 *
 * Return: true for a VRAM or GTT BO.
 */
bool kfd_criu_bo_has_contents(u32 alloc_flags)
{
	u32 domain = kfd_criu_bo_domain(alloc_flags);

	return domain == KFD_IOC_ALLOC_MEM_FLAGS_VRAM ||
	       domain == KFD_IOC_ALLOC_MEM_FLAGS_GTT;
}

/* The mapped_gpus bits of an image with @num_gpus GPUs. */
static u64 kfd_criu_gpu_mask(u32 num_gpus)
{
	return num_gpus >= 64 ? U64_MAX : BIT_ULL(num_gpus) - 1;
}

static bool kfd_criu_bo_aligned(u64 value)
{
	return !(value & (KFD_CRIU_BO_ALIGN - 1));
}

/* VA range and alignment of a BO record. */
static int kfd_criu_check_bo_range(const struct kfd_criu_bo_rec *rec)
{
	u64 va = le64_to_cpu(rec->va);
	u64 size = le64_to_cpu(rec->size);
	u64 end;

	if (!size || !kfd_criu_bo_aligned(va) || !kfd_criu_bo_aligned(size) ||
	    !kfd_criu_bo_aligned(le64_to_cpu(rec->mmap_offset)))
		return -EINVAL;
	if (check_add_overflow(va, size, &end) || end > KFD_CRIU_MAX_VA)
		return -EINVAL;
	return 0;
}

/* Allocation flags and the userptr that goes with them. */
static int kfd_criu_check_bo_flags(const struct kfd_criu_bo_rec *rec)
{
	u32 flags = le32_to_cpu(rec->alloc_flags);
	u32 domain = kfd_criu_bo_domain(flags);
	u64 userptr = le64_to_cpu(rec->userptr);

	if (flags & ~kfd_criu_bo_flags_known)
		return -EINVAL;
	if (!domain || (domain & (domain - 1)))
		return -EINVAL;
	if (domain == KFD_IOC_ALLOC_MEM_FLAGS_USERPTR)
		return userptr && kfd_criu_bo_aligned(userptr) ? 0 : -EINVAL;
	return userptr ? -EINVAL : 0;
}

/* The event page is a GTT BO the size of the whole signal page. */
static int kfd_criu_check_bo_event_page(const struct kfd_criu_bo_rec *rec)
{
	u32 flags = le32_to_cpu(rec->flags);

	if (flags & ~KFD_CRIU_BO_FLAGS)
		return -EINVAL;
	if (!(flags & KFD_CRIU_BO_EVENT_PAGE))
		return 0;
	/* An AQL queue BO is mapped twice: its VA size is twice its size */
	if (kfd_criu_bo_domain(le32_to_cpu(rec->alloc_flags)) !=
	    KFD_IOC_ALLOC_MEM_FLAGS_GTT ||
	    (le32_to_cpu(rec->alloc_flags) &
	     KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM) ||
	    le64_to_cpu(rec->size) != KFD_CRIU_SIGNAL_PAGE_MAX)
		return -EINVAL;
	return 0;
}

/**
 * kfd_criu_validate_bo() - check a %KFD_CRIU_REC_BO payload
 * @rec: the record
 * @num_gpus: GPU records of the image, at most %KFD_CRIU_MAX_GPUS
 *
 * The VA range must lie below %KFD_CRIU_MAX_VA and, with the size and the
 * mmap offset, be %KFD_CRIU_BO_ALIGN aligned. The allocation flags must be
 * ones the 6.12 uAPI defines, with exactly one memory domain; a userptr
 * BO, and only that, has an aligned non-zero @userptr. The owner and every
 * GPU it is mapped on must be GPU records of the image, and the handle an
 * id the driver's buffer idr can hand out. The event page is a GTT BO of
 * %KFD_CRIU_SIGNAL_PAGE_MAX bytes.
 *
 * Return: 0, or -EINVAL for any of the above that does not hold, or an
 * unknown flag.
 */
int kfd_criu_validate_bo(const struct kfd_criu_bo_rec *rec, u32 num_gpus)
{
	int ret;

	if (num_gpus > KFD_CRIU_MAX_GPUS)
		return -EINVAL;
	ret = kfd_criu_check_bo_range(rec);
	if (ret)
		return ret;
	ret = kfd_criu_check_bo_flags(rec);
	if (!ret)
		ret = kfd_criu_check_bo_event_page(rec);
	if (ret)
		return ret;
	if (le32_to_cpu(rec->handle) >= INT_MAX ||
	    le32_to_cpu(rec->gpu_index) >= num_gpus)
		return -EINVAL;
	if (le64_to_cpu(rec->mapped_gpus) & ~kfd_criu_gpu_mask(num_gpus))
		return -EINVAL;
	return 0;
}

/* -EEXIST for an equal (gpu_index, handle) pair, -EINVAL for a descent. */
static int kfd_criu_check_bo_order(const struct kfd_criu_bo_rec *prev,
				   const struct kfd_criu_bo_rec *rec)
{
	u32 prev_gpu = le32_to_cpu(prev->gpu_index);
	u32 gpu = le32_to_cpu(rec->gpu_index);
	u32 prev_handle = le32_to_cpu(prev->handle);
	u32 handle = le32_to_cpu(rec->handle);

	if (gpu == prev_gpu && handle == prev_handle)
		return -EEXIST;
	if (gpu < prev_gpu || (gpu == prev_gpu && handle < prev_handle))
		return -EINVAL;
	return 0;
}

static int kfd_criu_cmp_bo_va(const void *a, const void *b, const void *priv)
{
	const struct kfd_criu_bo_rec *bos = priv;
	u32 ia = *(const u32 *)a, ib = *(const u32 *)b;
	u64 va_a = le64_to_cpu(bos[ia].va), va_b = le64_to_cpu(bos[ib].va);

	if (va_a != va_b)
		return va_a < va_b ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
}

/* The GPU VMs a BO lives in: its owner's and those it is mapped on. */
static u64 kfd_criu_bo_vms(const struct kfd_criu_bo_rec *rec)
{
	return le64_to_cpu(rec->mapped_gpus) |
	       BIT_ULL(le32_to_cpu(rec->gpu_index));
}

/*
 * Walks the BOs by ascending VA. A BO overlaps an earlier one of a VM iff
 * it starts below the highest end seen in that VM so far, so one pass
 * with one running end per VM finds every overlap.
 */
static int kfd_criu_check_bo_overlap(const struct kfd_criu_bo_rec *bos,
				     const u32 *by_va, u32 num_bos)
{
	u64 vm_end[KFD_CRIU_MAX_GPUS] = { };
	u64 va, end, vms;
	unsigned int g;
	u32 i;

	for (i = 0; i < num_bos; i++) {
		va = le64_to_cpu(bos[by_va[i]].va);
		end = va + le64_to_cpu(bos[by_va[i]].size);
		for (vms = kfd_criu_bo_vms(&bos[by_va[i]]); vms;
		     vms &= vms - 1) {
			g = __ffs64(vms);
			if (va < vm_end[g])
				return -EINVAL;
			vm_end[g] = end;
		}
	}
	return 0;
}

/**
 * kfd_criu_check_bos() - check the BO records of an image as a set
 * @bos: the BO records, in stream order
 * @num_bos: entries in @bos
 * @num_gpus: GPU records of the image
 *
 * Validates each record, then what only the set shows. The writer walks
 * each GPU's buffer idr in turn, so the records are strictly ascending by
 * (gpu_index, handle). At most one BO is the event page. No two BOs may
 * overlap in a GPU's VM, which holds
 * the BOs that GPU owns and those mapped on it; BOs of different VMs may
 * share a VA, as two GPUs' userptr BOs of the same memory do.
 *
 * Sorts an index of the BOs by VA, O(n log n), and then needs one pass
 * with one running end per GPU, so 262144 BOs on 64 GPUs stay cheap.
 *
 * Return: 0, -EINVAL for an invalid record, more than %KFD_CRIU_MAX_BOS
 * records, records out of order, a second event page or an overlap,
 * -EEXIST for a (gpu_index, handle) pair that repeats, -ENOMEM if the
 * sort index cannot be allocated.
 */
int kfd_criu_check_bos(const struct kfd_criu_bo_rec *bos, u32 num_bos,
		       u32 num_gpus)
{
	u32 *by_va, event_pages = 0;
	u32 i;
	int ret;

	if (num_bos > KFD_CRIU_MAX_BOS)
		return -EINVAL;
	for (i = 0; i < num_bos; i++) {
		ret = kfd_criu_validate_bo(&bos[i], num_gpus);
		if (!ret && i)
			ret = kfd_criu_check_bo_order(&bos[i - 1], &bos[i]);
		if (ret)
			return ret;
		if (le32_to_cpu(bos[i].flags) & KFD_CRIU_BO_EVENT_PAGE &&
		    event_pages++)
			return -EINVAL;
	}
	if (num_bos < 2)
		return 0;

	by_va = kvmalloc_array(num_bos, sizeof(*by_va), GFP_KERNEL_ACCOUNT);
	if (!by_va)
		return -ENOMEM;
	for (i = 0; i < num_bos; i++)
		by_va[i] = i;
	sort_r(by_va, num_bos, sizeof(*by_va), kfd_criu_cmp_bo_va, NULL, bos);
	ret = kfd_criu_check_bo_overlap(bos, by_va, num_bos);
	kvfree(by_va);
	return ret;
}

/*
 * BO contents
 */

/**
 * kfd_criu_chunk_count() - how many chunks a BO's contents take
 * @size: bytes of contents
 * @chunk: bytes per chunk, only the last may be shorter
 * @count: receives ceil(@size / @chunk)
 *
 * Safe for any @size, U64_MAX included.
 *
 * Return: 0, or -EINVAL for a zero @chunk.
 */
int kfd_criu_chunk_count(u64 size, u32 chunk, u64 *count)
{
	if (!chunk)
		return -EINVAL;
	*count = size / chunk + !!(size % chunk);
	return 0;
}

/**
 * kfd_criu_chunk_len() - bytes of the chunk at an offset
 * @size: bytes of contents
 * @offset: where the chunk starts
 * @chunk: bytes per chunk
 *
 * Return: min(@chunk, @size - @offset), or 0 when @offset is at or past
 * @size.
 */
u32 kfd_criu_chunk_len(u64 size, u64 offset, u32 chunk)
{
	if (offset >= size)
		return 0;
	return min_t(u64, chunk, size - offset);
}

/* The first BO at or after @from whose contents the image carries. */
static u32 kfd_criu_next_bo_with_contents(const struct kfd_criu_bo_rec *bos,
					  u32 num_bos, u32 from)
{
	u32 i;

	for (i = from; i < num_bos; i++)
		if (kfd_criu_bo_has_contents(le32_to_cpu(bos[i].alloc_flags)))
			return i;
	return num_bos;
}

/**
 * kfd_criu_bo_cursor_init() - expect the first BO_DATA record
 * @cur: the cursor
 * @bos: the BO records, already passed kfd_criu_check_bos()
 * @num_bos: entries in @bos
 *
 * Points @cur at offset 0 of the first BO with contents, or past the last
 * BO (@bo_index == @num_bos) when no BO_DATA record is expected at all.
 */
void kfd_criu_bo_cursor_init(struct kfd_criu_bo_cursor *cur,
			     const struct kfd_criu_bo_rec *bos, u32 num_bos)
{
	cur->bo_index = kfd_criu_next_bo_with_contents(bos, num_bos, 0);
	cur->offset = 0;
}

/**
 * kfd_criu_bo_data_check() - check a BO_DATA record against the cursor
 * @cur: the cursor, from kfd_criu_bo_cursor_init()
 * @bos: the BO records the cursor was set up with
 * @num_bos: entries in @bos
 * @hdr: the header at the start of the record's payload
 * @len: the whole payload length, header included
 *
 * The contents come BO by BO in record order, each in chunks of
 * %KFD_CRIU_BO_CHUNK bytes from offset 0, only the last one shorter, so
 * each record has exactly one valid header and length. On success @cur
 * moves to the next chunk of the BO or to the next BO with contents; once
 * @cur->bo_index is @num_bos every expected record was seen.
 *
 * Return: 0, or -EINVAL for a reserved field that is set, a record when
 * none is expected, another BO or offset than expected, or a length that
 * does not match the chunk. @cur is unchanged on error.
 */
int kfd_criu_bo_data_check(struct kfd_criu_bo_cursor *cur,
			   const struct kfd_criu_bo_rec *bos, u32 num_bos,
			   const struct kfd_criu_bo_data_hdr *hdr, u32 len)
{
	u32 index = cur->bo_index;
	u64 size;
	u32 want;

	if (le32_to_cpu(hdr->reserved) || index >= num_bos ||
	    le32_to_cpu(hdr->bo_index) != index ||
	    le64_to_cpu(hdr->offset) != cur->offset)
		return -EINVAL;
	size = le64_to_cpu(bos[index].size);
	want = kfd_criu_chunk_len(size, cur->offset, KFD_CRIU_BO_CHUNK);
	if (!want || len < sizeof(*hdr) || len - sizeof(*hdr) != want)
		return -EINVAL;

	cur->offset += want;
	if (cur->offset < size)
		return 0;
	cur->bo_index = kfd_criu_next_bo_with_contents(bos, num_bos, index + 1);
	cur->offset = 0;
	return 0;
}

/*
 * Queues and SVM ranges
 */

/* Whether a queue's uAPI type is one of the SDMA types the image carries. */
static bool kfd_criu_queue_is_sdma(u32 type)
{
	return type == KFD_IOC_QUEUE_TYPE_SDMA ||
	       type == KFD_IOC_QUEUE_TYPE_SDMA_XGMI;
}

/**
 * kfd_criu_validate_counts() - check a %KFD_CRIU_REC_COUNTS payload
 * @rec: the record
 * @num_gpus: GPU records of the image
 *
 * Queues and SVM ranges belong to GPUs, so an image without GPUs has
 * none. A COUNTS record with both counts zero is refused: the writer
 * leaves the record out then, which keeps the encoding unique.
 *
 * Return: 0, or -EINVAL for a count above its limit, two zero counts,
 * queues or SVM ranges without GPUs, or a reserved field that is set.
 */
int kfd_criu_validate_counts(const struct kfd_criu_counts_rec *rec,
			     u32 num_gpus)
{
	u32 queues = le32_to_cpu(rec->num_queues);
	u32 ranges = le32_to_cpu(rec->num_svm_ranges);

	if (le32_to_cpu(rec->reserved) || le32_to_cpu(rec->reserved2))
		return -EINVAL;
	if (queues > KFD_CRIU_MAX_QUEUES || ranges > KFD_CRIU_MAX_SVM_RANGES)
		return -EINVAL;
	if (!queues && !ranges)
		return -EINVAL;
	return num_gpus ? 0 : -EINVAL;
}

/**
 * kfd_criu_queue_type_carried() - whether the image can carry a queue type
 * @ioc_type: the KFD_IOC_QUEUE_TYPE_* the queue was created with
 *
 * CHECKPOINT calls this for every queue before it writes anything. The
 * format carries compute queues (PM4 and AQL) and SDMA and SDMA-XGMI
 * queues. A queue user mode created by SDMA engine id
 * (KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID) became an SDMA or SDMA-XGMI queue
 * on that engine when the hardware scheduler created it, and is carried
 * as one; without HWS it keeps the type, which is not carried.
 *
 * Return: 0, or -EOPNOTSUPP for any other type.
 */
int kfd_criu_queue_type_carried(u32 ioc_type)
{
	switch (ioc_type) {
	case KFD_IOC_QUEUE_TYPE_COMPUTE:
	case KFD_IOC_QUEUE_TYPE_COMPUTE_AQL:
	case KFD_IOC_QUEUE_TYPE_SDMA:
	case KFD_IOC_QUEUE_TYPE_SDMA_XGMI:
		return 0;
	}
	return -EOPNOTSUPP;
}

/* The record's type and format, and what depends on the type alone. */
static int kfd_criu_check_queue_kind(const struct kfd_criu_queue_rec *rec)
{
	u32 type = le32_to_cpu(rec->type);
	u32 format = le32_to_cpu(rec->format);

	if (type == KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID)
		return -EOPNOTSUPP;
	if (type != KFD_IOC_QUEUE_TYPE_COMPUTE && !kfd_criu_queue_is_sdma(type))
		return -EINVAL;
	if (format != KFD_CRIU_QUEUE_FORMAT_PM4 &&
	    (format != KFD_CRIU_QUEUE_FORMAT_AQL ||
	     type != KFD_IOC_QUEUE_TYPE_COMPUTE))
		return -EINVAL;
	if (le32_to_cpu(rec->priority) > KFD_MAX_QUEUE_PRIORITY ||
	    le32_to_cpu(rec->queue_percent) > KFD_MAX_QUEUE_PERCENTAGE)
		return -EINVAL;
	return 0;
}

/* [@base, @base + @size) lies in the VA space, @base aligned to @align. */
static bool kfd_criu_va_ok(u64 base, u64 size, u64 align)
{
	u64 end;

	if (!base || (base & (align - 1)))
		return false;
	return !check_add_overflow(base, size, &end) && end <= KFD_CRIU_MAX_VA;
}

/* The ring and the pointers every queue has. */
static int kfd_criu_check_queue_ring(const struct kfd_criu_queue_rec *rec)
{
	u32 size = le32_to_cpu(rec->ring_size);

	if (size < KFD_CRIU_MIN_RING_SIZE || size > KFD_CRIU_MAX_RING_SIZE ||
	    (size & (size - 1)))
		return -EINVAL;
	if (!kfd_criu_va_ok(le64_to_cpu(rec->ring_base), size, 256) ||
	    !kfd_criu_va_ok(le64_to_cpu(rec->read_ptr_addr), 8, 4) ||
	    !kfd_criu_va_ok(le64_to_cpu(rec->write_ptr_addr), 8, 4))
		return -EINVAL;
	if (le32_to_cpu(rec->doorbell_offset) >= KFD_CRIU_MAX_DOORBELLS)
		return -EINVAL;
	return 0;
}

/* Bytes of a queue's CWSR areas, one per XCC. */
static u64 kfd_criu_queue_cwsr_bytes(const struct kfd_criu_queue_rec *rec)
{
	return (u64)le32_to_cpu(rec->ctx_save_restore_size) *
	       le32_to_cpu(rec->num_xcc);
}

/* EOP buffer and CWSR area of a compute queue, against its GPU. */
static int kfd_criu_check_queue_buffers(const struct kfd_criu_queue_rec *rec,
					const struct kfd_criu_gpu_rec *gpu)
{
	u64 eop = le64_to_cpu(rec->eop_base);
	u32 eop_size = le32_to_cpu(rec->eop_size);
	u64 cwsr = le64_to_cpu(rec->ctx_save_restore_base);
	u32 cwsr_size = le32_to_cpu(rec->ctx_save_restore_size);
	u32 ctl = le32_to_cpu(rec->ctl_stack_size);

	if (!eop != !eop_size || !cwsr != !cwsr_size)
		return -EINVAL;
	if (eop && (eop_size % 4 || eop_size > KFD_CRIU_MAX_EOP_SIZE ||
		    !kfd_criu_va_ok(eop, eop_size, 256)))
		return -EINVAL;
	if (ctl != le32_to_cpu(gpu->ctl_stack_size) ||
	    ctl > KFD_CRIU_MAX_CTL_STACK_SIZE || ctl % 4)
		return -EINVAL;
	if (!cwsr)
		return 0;
	if (cwsr_size < le32_to_cpu(gpu->cwsr_size) || cwsr_size <= ctl ||
	    !kfd_criu_va_ok(cwsr, kfd_criu_queue_cwsr_bytes(rec), 4096))
		return -EINVAL;
	return 0;
}

/* What a compute queue has and an SDMA queue must leave zero. */
static int kfd_criu_check_queue_engine(const struct kfd_criu_queue_rec *rec,
				       const struct kfd_criu_gpu_rec *gpu)
{
	u32 num_xcc = le32_to_cpu(rec->num_xcc);
	u32 cu_bits = le32_to_cpu(rec->num_cu_mask);

	if (kfd_criu_queue_is_sdma(le32_to_cpu(rec->type))) {
		if (rec->eop_base || rec->eop_size ||
		    rec->ctx_save_restore_base || rec->ctx_save_restore_size ||
		    rec->ctl_stack_size || rec->gws || rec->num_cu_mask ||
		    rec->pm4_target_xcc || num_xcc != 1)
			return -EINVAL;
		return le32_to_cpu(rec->sdma_engine_id) <
		       KFD_CRIU_MAX_SDMA_ENGINES ? 0 : -EINVAL;
	}
	if (rec->sdma_engine_id || le32_to_cpu(rec->gws) > 1 ||
	    num_xcc != le32_to_cpu(gpu->num_xcc) ||
	    le32_to_cpu(rec->pm4_target_xcc) >= num_xcc)
		return -EINVAL;
	if (cu_bits % 32 || cu_bits > KFD_CRIU_MAX_CU_MASK_BITS)
		return -EINVAL;
	return kfd_criu_check_queue_buffers(rec, gpu);
}

/**
 * kfd_criu_validate_queue() - check the fixed part of a QUEUE record
 * @rec: the record
 * @gpus: the image's GPU records, already validated
 * @num_gpus: entries in @gpus
 *
 * Checks every field against the limits of the 6.12 queue ioctls and the
 * GPU the queue belongs to: type and format, priority and percentage, a
 * power-of-two ring of a size the uAPI allows, aligned addresses inside
 * the VA space, a doorbell slot of the process's doorbell page, an SDMA
 * engine only for SDMA queues, and for compute queues an EOP buffer and
 * a CWSR area as kfd_queue_acquire_buffers() wants them (the GPU's
 * ctl_stack_size exactly, at least its cwsr_size), one MQD per XCC of the
 * GPU and a CU mask of whole words. The payload length follows from the
 * record: kfd_criu_queue_len().
 *
 * Return: 0, -EOPNOTSUPP for an SDMA queue by engine id, or -EINVAL for
 * anything else that does not hold, a reserved field included.
 */
int kfd_criu_validate_queue(const struct kfd_criu_queue_rec *rec,
			    const struct kfd_criu_gpu_rec *gpus, u32 num_gpus)
{
	u32 gpu = le32_to_cpu(rec->gpu_index);
	int ret;

	if (rec->reserved || rec->reserved2 || num_gpus > KFD_CRIU_MAX_GPUS ||
	    gpu >= num_gpus ||
	    le32_to_cpu(rec->queue_id) >= KFD_CRIU_MAX_QUEUES)
		return -EINVAL;
	ret = kfd_criu_check_queue_kind(rec);
	if (!ret)
		ret = kfd_criu_check_queue_ring(rec);
	if (!ret)
		ret = kfd_criu_check_queue_engine(rec, &gpus[gpu]);
	return ret;
}

/**
 * kfd_criu_queue_len() - payload length of a QUEUE record
 * @rec: the fixed part of the record
 *
 * Return: sizeof(*@rec) plus one __le32 per 32 bits of CU mask, for any
 * @num_cu_mask; a record of another length is invalid.
 */
u32 kfd_criu_queue_len(const struct kfd_criu_queue_rec *rec)
{
	u32 words = min_t(u32, le32_to_cpu(rec->num_cu_mask),
			  KFD_CRIU_MAX_CU_MASK_BITS + 32) / 32;

	return sizeof(*rec) + words * sizeof(__le32);
}

/**
 * struct kfd_criu_span - a buffer of a queue, for the overlap check
 * @start: first byte
 * @end: first byte after it
 * @gpu: the GPU whose VM holds it
 */
struct kfd_criu_span {
	u64 start;
	u64 end;
	u32 gpu;
};

/* Indexes into the span array @priv, by start; ties by index. */
static int kfd_criu_cmp_span(const void *a, const void *b, const void *priv)
{
	const struct kfd_criu_span *spans = priv;
	u32 ia = *(const u32 *)a, ib = *(const u32 *)b;

	if (spans[ia].start != spans[ib].start)
		return spans[ia].start < spans[ib].start ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
}

static u32 kfd_criu_add_span(struct kfd_criu_span *spans, u32 n, u64 start,
			     u64 size, u32 gpu)
{
	if (!start)
		return n;
	spans[n].start = start;
	spans[n].end = start + size;
	spans[n].gpu = gpu;
	return n + 1;
}

/*
 * Walks the buffers by ascending start with one running end per GPU, as
 * kfd_criu_check_bo_overlap() does for BOs.
 */
static int kfd_criu_walk_spans(const struct kfd_criu_span *spans,
			       const u32 *order, u32 num)
{
	u64 vm_end[KFD_CRIU_MAX_GPUS] = { };
	const struct kfd_criu_span *sp;
	u32 i;

	for (i = 0; i < num; i++) {
		sp = &spans[order[i]];
		if (sp->start < vm_end[sp->gpu])
			return -EINVAL;
		vm_end[sp->gpu] = max_t(u64, vm_end[sp->gpu], sp->end);
	}
	return 0;
}

/* Ring, EOP buffer and CWSR area of no two queues of a GPU overlap. */
static int kfd_criu_check_queue_overlap(const struct kfd_criu_queue_rec *q,
					u32 n)
{
	struct kfd_criu_span *spans;
	u32 *order;
	u32 i, num = 0, g;
	int ret = -ENOMEM;

	spans = kvmalloc_array(n, 3 * sizeof(*spans), GFP_KERNEL_ACCOUNT);
	order = kvmalloc_array(n, 3 * sizeof(*order), GFP_KERNEL_ACCOUNT);
	if (!spans || !order)
		goto out;
	for (i = 0; i < n; i++) {
		g = le32_to_cpu(q[i].gpu_index);
		num = kfd_criu_add_span(spans, num, le64_to_cpu(q[i].ring_base),
					le32_to_cpu(q[i].ring_size), g);
		num = kfd_criu_add_span(spans, num, le64_to_cpu(q[i].eop_base),
					le32_to_cpu(q[i].eop_size), g);
		num = kfd_criu_add_span(spans, num,
					le64_to_cpu(q[i].ctx_save_restore_base),
					kfd_criu_queue_cwsr_bytes(&q[i]), g);
	}
	for (i = 0; i < num; i++)
		order[i] = i;
	sort_r(order, num, sizeof(*order), kfd_criu_cmp_span, NULL, spans);
	ret = kfd_criu_walk_spans(spans, order, num);
out:
	kvfree(order);
	kvfree(spans);
	return ret;
}

/* Two queues of one GPU cannot share a doorbell slot. */
static int kfd_criu_check_doorbells(const struct kfd_criu_queue_rec *q,
				    u32 n)
{
	u32 i, j;

	/* n is at most KFD_CRIU_MAX_QUEUES: a quadratic scan stays cheap */
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (q[i].gpu_index == q[j].gpu_index &&
			    q[i].doorbell_offset == q[j].doorbell_offset)
				return -EEXIST;
	return 0;
}

/*
 * pqm_set_gws() gives GWS to one queue per process and GPU and refuses a
 * second with -EBUSY, so no dumped process has two such queues on a GPU.
 */
static int kfd_criu_check_gws(const struct kfd_criu_queue_rec *q, u32 n)
{
	u64 used = 0, bit;
	u32 i;

	for (i = 0; i < n; i++) {
		if (!q[i].gws)
			continue;
		bit = BIT_ULL(le32_to_cpu(q[i].gpu_index));
		if (used & bit)
			return -EINVAL;
		used |= bit;
	}
	return 0;
}

/**
 * kfd_criu_check_queues() - check the QUEUE records of an image as a set
 * @queues: the fixed parts of the QUEUE records, in stream order
 * @n: entries in @queues
 * @gpus: the image's GPU records, already validated
 * @num_gpus: entries in @gpus
 *
 * Validates each record with kfd_criu_validate_queue(), then what only
 * the set shows: the records are sorted by strictly ascending queue_id
 * (the writer walks the process's queue list by id), at most one queue of
 * a GPU uses GWS, no two queues of a
 * GPU share a doorbell slot, and no ring, EOP buffer or CWSR area of a
 * GPU's queues overlaps another. Read and write pointer locations may be
 * shared: user mode often packs them into one page.
 *
 * Return: 0, -EINVAL for an invalid record, more than
 * %KFD_CRIU_MAX_QUEUES records, a descending queue id, a second GWS
 * queue on a GPU or an overlap,
 * -EEXIST for a queue id or doorbell slot that repeats, -EOPNOTSUPP from
 * kfd_criu_validate_queue(), -ENOMEM if the overlap check cannot allocate.
 */
int kfd_criu_check_queues(const struct kfd_criu_queue_rec *queues, u32 n,
			  const struct kfd_criu_gpu_rec *gpus, u32 num_gpus)
{
	u32 i, prev = 0, id;
	int ret;

	if (n > KFD_CRIU_MAX_QUEUES)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		ret = kfd_criu_validate_queue(&queues[i], gpus, num_gpus);
		if (ret)
			return ret;
		id = le32_to_cpu(queues[i].queue_id);
		if (i && id == prev)
			return -EEXIST;
		if (i && id < prev)
			return -EINVAL;
		prev = id;
	}
	if (!n)
		return 0;
	ret = kfd_criu_check_gws(queues, n);
	if (ret)
		return ret;
	ret = kfd_criu_check_doorbells(queues, n);
	if (ret)
		return ret;
	return kfd_criu_check_queue_overlap(queues, n);
}

#define DYN_OFF(f)	offsetof(struct kfd_criu_queue_dyn, f)
#define DYN_SIZE(f)	sizeof_field(struct kfd_criu_queue_dyn, f)

/**
 * DOC: MQD dynamic-field whitelist
 *
 * kfd_criu_mqd_whitelist[] names every MQD field RESTORE may write.
 *
 * RESTORE initializes a queue's MQD from its properties, as queue creation
 * does, and then writes these fields, each after
 * kfd_criu_validate_queue_state() accepted it, and on GFX9 the live part
 * of the control stack behind the MQD; nothing else. The 6.12 MQD managers'
 * checkpoint_mqd() copy the whole MQD; these fields are the ones that say
 * where a preempted queue stands in its ring, its EOP buffer and its
 * control stack. The addresses, sizes, VMID, doorbell, priorities and CU
 * mask follow from the queue record or from the target machine. The CP
 * also keeps the state of work in flight in fields not listed here (the
 * indirect buffer position, the dispatch id, EOP done events), which a
 * restored queue gets from init_mqd(): a queue evicted with such work is
 * not known to resume. None of this has run on hardware. Of the GFX9
 * control stack, kfd_criu_validate_queue_state() checks the length only:
 * the kernel does not parse it, and the CP firmware reads it as given.
 *
 * A field may appear once per queue class with different bounds. Bytes
 * of &struct kfd_criu_queue_dyn no entry covers for a queue must be zero.
 */
const struct kfd_criu_mqd_field kfd_criu_mqd_whitelist[] = {
	{ "rptr", DYN_OFF(rptr), DYN_SIZE(rptr), KFD_CRIU_QC_COMPUTE,
	  KFD_CRIU_LIM_ZERO, KFD_CRIU_LIM_RING_DWORDS, KFD_CRIU_MQD_ALIGN_AQL,
	  "cp_hqd_pq_rptr" },
	{ "wptr", DYN_OFF(wptr), DYN_SIZE(wptr), KFD_CRIU_QC_COMPUTE,
	  KFD_CRIU_LIM_ZERO, KFD_CRIU_LIM_MAX, KFD_CRIU_MQD_ALIGN_AQL,
	  "cp_hqd_pq_wptr_lo, cp_hqd_pq_wptr_hi" },
	{ "rptr", DYN_OFF(rptr), DYN_SIZE(rptr), KFD_CRIU_QC_SDMA,
	  KFD_CRIU_LIM_ZERO, KFD_CRIU_LIM_MAX, 4,
	  "sdmax_rlcx_rb_rptr, sdmax_rlcx_rb_rptr_hi" },
	{ "wptr", DYN_OFF(wptr), DYN_SIZE(wptr), KFD_CRIU_QC_SDMA,
	  KFD_CRIU_LIM_RPTR, KFD_CRIU_LIM_RPTR_RING, 4,
	  "sdmax_rlcx_rb_wptr, sdmax_rlcx_rb_wptr_hi" },
	{ "cntl_stack_offset", DYN_OFF(cntl_stack_offset),
	  DYN_SIZE(cntl_stack_offset), KFD_CRIU_QC_CWSR,
	  KFD_CRIU_LIM_ZERO, KFD_CRIU_LIM_CTL_STACK, 4,
	  "cp_hqd_cntl_stack_offset" },
	{ "wg_state_offset", DYN_OFF(wg_state_offset),
	  DYN_SIZE(wg_state_offset), KFD_CRIU_QC_CWSR,
	  KFD_CRIU_LIM_CTL_STACK, KFD_CRIU_LIM_CWSR, 4,
	  "cp_hqd_wg_state_offset" },
	{ "eop_rptr", DYN_OFF(eop_rptr), DYN_SIZE(eop_rptr), KFD_CRIU_QC_EOP,
	  KFD_CRIU_LIM_ZERO, KFD_CRIU_LIM_EOP_DWORDS, 1,
	  "cp_hqd_eop_rptr.RPTR" },
	{ "eop_wptr", DYN_OFF(eop_wptr), DYN_SIZE(eop_wptr), KFD_CRIU_QC_EOP,
	  KFD_CRIU_LIM_ZERO, KFD_CRIU_LIM_EOP_DWORDS, 1,
	  "cp_hqd_eop_wptr.WPTR" },
};

const size_t kfd_criu_mqd_whitelist_len = ARRAY_SIZE(kfd_criu_mqd_whitelist);

#undef DYN_SIZE
#undef DYN_OFF

/* The &enum kfd_criu_queue_class bits of a valid queue. */
static u32 kfd_criu_queue_classes(const struct kfd_criu_queue_rec *q)
{
	u32 classes;

	if (kfd_criu_queue_is_sdma(le32_to_cpu(q->type)))
		return KFD_CRIU_QC_SDMA;
	classes = KFD_CRIU_QC_COMPUTE;
	if (q->ctx_save_restore_size)
		classes |= KFD_CRIU_QC_CWSR;
	if (q->eop_size)
		classes |= KFD_CRIU_QC_EOP;
	return classes;
}

static u64 kfd_criu_dyn_get(const struct kfd_criu_queue_dyn *dyn,
			    const struct kfd_criu_mqd_field *f)
{
	const u8 *p = (const u8 *)dyn + f->offset;
	__le64 v64;
	__le32 v32;

	if (f->size == sizeof(v64)) {
		memcpy(&v64, p, sizeof(v64));
		return le64_to_cpu(v64);
	}
	memcpy(&v32, p, sizeof(v32));
	return le32_to_cpu(v32);
}

/* The value of limit @lim for queue @q in state @dyn. */
static u64 kfd_criu_mqd_limit(u8 lim, const struct kfd_criu_queue_rec *q,
			      const struct kfd_criu_queue_dyn *dyn)
{
	u64 rptr = le64_to_cpu(dyn->rptr), end;

	switch (lim) {
	case KFD_CRIU_LIM_ZERO:
		return 0;
	case KFD_CRIU_LIM_RING_DWORDS:
		return le32_to_cpu(q->ring_size) / 4 - 1;
	case KFD_CRIU_LIM_EOP_DWORDS:
		return le32_to_cpu(q->eop_size) / 4 - 1;
	case KFD_CRIU_LIM_CTL_STACK:
		return le32_to_cpu(q->ctl_stack_size);
	case KFD_CRIU_LIM_CWSR:
		return le32_to_cpu(q->ctx_save_restore_size);
	case KFD_CRIU_LIM_RPTR:
		return rptr;
	case KFD_CRIU_LIM_RPTR_RING:
		if (check_add_overflow(rptr, (u64)le32_to_cpu(q->ring_size),
				       &end))
			return U64_MAX;
		return end;
	}
	return U64_MAX;
}

static int kfd_criu_check_mqd_field(const struct kfd_criu_mqd_field *f,
				    const struct kfd_criu_queue_rec *q,
				    const struct kfd_criu_queue_dyn *dyn)
{
	u64 value = kfd_criu_dyn_get(dyn, f);
	u64 align = f->align;

	if (align == KFD_CRIU_MQD_ALIGN_AQL)
		align = le32_to_cpu(q->format) == KFD_CRIU_QUEUE_FORMAT_AQL ?
			16 : 1;
	if (value % align)
		return -EINVAL;
	if (value < kfd_criu_mqd_limit(f->min, q, dyn) ||
	    value > kfd_criu_mqd_limit(f->max, q, dyn))
		return -EINVAL;
	return 0;
}

/*
 * Runs the whitelist entries that apply to @q and requires every byte of
 * @dyn that none of them covers to be zero.
 */
static int kfd_criu_check_dyn(const struct kfd_criu_queue_rec *q,
			      const struct kfd_criu_queue_dyn *dyn)
{
	u8 covered[sizeof(*dyn)] = { };
	u32 classes = kfd_criu_queue_classes(q);
	const struct kfd_criu_mqd_field *f;
	size_t i;
	int ret;

	for (i = 0; i < kfd_criu_mqd_whitelist_len; i++) {
		f = &kfd_criu_mqd_whitelist[i];
		if (!(f->classes & classes))
			continue;
		ret = kfd_criu_check_mqd_field(f, q, dyn);
		if (ret)
			return ret;
		memset(covered + f->offset, 1, f->size);
	}
	for (i = 0; i < sizeof(*dyn); i++)
		if (!covered[i] && ((const u8 *)dyn)[i])
			return -EINVAL;
	return 0;
}

/**
 * kfd_criu_ctl_stack_in_mqd() - whether a queue's state carries its
 *	control stack
 * @queue: a valid queue record
 * @gpu: its GPU record
 *
 * On GFX9 (gfx_target_version 90000 to 99999) the control stack of a
 * compute queue with CWSR lives in the page after its MQD, in KFD's MQD
 * buffer (allocate_mqd() of kfd_mqd_manager_v9.c), so it is kernel state
 * the image must carry. On other generations it is in the user's CWSR
 * area, which CRIU saves with the process memory.
 *
 * Return: true when QUEUE_STATE records of @queue carry control stack.
 */
bool kfd_criu_ctl_stack_in_mqd(const struct kfd_criu_queue_rec *queue,
			       const struct kfd_criu_gpu_rec *gpu)
{
	u32 gfx = le32_to_cpu(gpu->gfx_target_version);

	return (kfd_criu_queue_classes(queue) & KFD_CRIU_QC_CWSR) &&
	       gfx >= 90000 && gfx < 100000;
}

/**
 * kfd_criu_validate_queue_state() - check the preempted state of a queue
 * @queue: the queue's record, already passed kfd_criu_check_queues()
 * @gpu: the queue's GPU record
 * @hdr: the QUEUE_STATE header
 * @dyn: the dynamic MQD fields that follow it
 *
 * Accepts only what kfd_criu_mqd_whitelist[] allows for the queue's
 * class, with every value inside its bounds: compute ring read offset
 * inside the ring, AQL pointers on packet boundaries, SDMA write pointer
 * at most one ring ahead of the read pointer, control stack offset inside
 * the control stack, work-group state offset between the end of the
 * control stack and the end of the CWSR area, EOP offsets inside the EOP
 * buffer; every other byte zero. The control stack bytes that follow
 * (@hdr->data_len) are the live part, from cntl_stack_offset to the end
 * of the control stack, when kfd_criu_ctl_stack_in_mqd(), and none
 * otherwise; so they never exceed the queue's ctl_stack_size, which is
 * the GPU's.
 *
 * Return: 0, or -EINVAL for an XCC the queue does not have, a reserved
 * field that is set, a field outside the whitelist or its bounds, or a
 * control stack of the wrong length.
 */
int kfd_criu_validate_queue_state(const struct kfd_criu_queue_rec *queue,
				  const struct kfd_criu_gpu_rec *gpu,
				  const struct kfd_criu_queue_state_hdr *hdr,
				  const struct kfd_criu_queue_dyn *dyn)
{
	u32 data_len = le32_to_cpu(hdr->data_len);
	u32 want = 0;
	int ret;

	if (hdr->reserved ||
	    le32_to_cpu(hdr->xcc) >= le32_to_cpu(queue->num_xcc))
		return -EINVAL;
	ret = kfd_criu_check_dyn(queue, dyn);
	if (ret)
		return ret;
	if (kfd_criu_ctl_stack_in_mqd(queue, gpu))
		want = le32_to_cpu(queue->ctl_stack_size) -
		       le32_to_cpu(dyn->cntl_stack_offset);
	if (data_len != want || data_len > le32_to_cpu(gpu->ctl_stack_size))
		return -EINVAL;
	return 0;
}

/**
 * kfd_criu_queue_cursor_init() - expect the first QUEUE_STATE record
 * @cur: the cursor
 */
void kfd_criu_queue_cursor_init(struct kfd_criu_queue_cursor *cur)
{
	cur->queue_index = 0;
	cur->xcc = 0;
}

/**
 * kfd_criu_queue_state_check() - check a QUEUE_STATE record against the
 *	cursor
 * @cur: the cursor, from kfd_criu_queue_cursor_init()
 * @queues: the QUEUE records, already passed kfd_criu_check_queues()
 * @num_queues: entries in @queues
 * @gpus: the GPU records they name
 * @hdr: the header at the start of the record's payload
 * @dyn: the dynamic fields after it
 * @len: the whole payload length
 *
 * Every queue has one state per XCC, queue by queue in record order, XCC
 * 0 first, so each record has exactly one valid place. On success @cur
 * moves on; once @cur->queue_index is @num_queues every state was seen.
 *
 * Return: 0, or -EINVAL for a record when none is expected, another queue
 * or XCC than expected, a length that does not match @hdr->data_len, or
 * what kfd_criu_validate_queue_state() refuses. @cur is unchanged on
 * error.
 */
int kfd_criu_queue_state_check(struct kfd_criu_queue_cursor *cur,
			       const struct kfd_criu_queue_rec *queues,
			       u32 num_queues,
			       const struct kfd_criu_gpu_rec *gpus,
			       const struct kfd_criu_queue_state_hdr *hdr,
			       const struct kfd_criu_queue_dyn *dyn, u32 len)
{
	const struct kfd_criu_queue_rec *q;
	u32 fixed = sizeof(*hdr) + sizeof(*dyn);
	int ret;

	if (cur->queue_index >= num_queues ||
	    le32_to_cpu(hdr->queue_index) != cur->queue_index ||
	    le32_to_cpu(hdr->xcc) != cur->xcc)
		return -EINVAL;
	if (len < fixed || len - fixed != le32_to_cpu(hdr->data_len))
		return -EINVAL;
	q = &queues[cur->queue_index];
	ret = kfd_criu_validate_queue_state(q, &gpus[le32_to_cpu(q->gpu_index)],
					    hdr, dyn);
	if (ret)
		return ret;
	if (++cur->xcc == le32_to_cpu(q->num_xcc)) {
		cur->queue_index++;
		cur->xcc = 0;
	}
	return 0;
}

/**
 * kfd_criu_slot_user_visible() - whether user mode sees a slot id
 * @kind: the kind of id
 * @sdma_static_doorbells: the GPU derives SDMA doorbells from the SDMA
 *	slot (SOC15 and later, allocate_doorbell() in
 *	kfd_device_queue_manager.c)
 *
 * The queue id is user mode's name for the queue, and the doorbell slot
 * is where in its doorbell page user mode writes, so neither can change
 * under a restored process. The hardware queue slot is the kernel's
 * alone. The SDMA slot is too, unless the GPU derives the queue's
 * doorbell from it: then moving the queue moves its doorbell.
 *
 * Return: true when the id cannot change without user mode noticing.
 */
bool kfd_criu_slot_user_visible(enum kfd_criu_slot_kind kind,
				bool sdma_static_doorbells)
{
	switch (kind) {
	case KFD_CRIU_SLOT_QUEUE_ID:
	case KFD_CRIU_SLOT_DOORBELL:
		return true;
	case KFD_CRIU_SLOT_SDMA:
		return sdma_static_doorbells;
	case KFD_CRIU_SLOT_HQD:
	default:
		return false;
	}
}

/**
 * kfd_criu_slot_name() - a slot kind's name, for the message of an -EBUSY
 * @kind: the kind of id
 *
 * Return: "queue id", "doorbell", "HQD slot", "SDMA slot" or "slot".
 */
const char *kfd_criu_slot_name(enum kfd_criu_slot_kind kind)
{
	switch (kind) {
	case KFD_CRIU_SLOT_QUEUE_ID:
		return "queue id";
	case KFD_CRIU_SLOT_DOORBELL:
		return "doorbell";
	case KFD_CRIU_SLOT_HQD:
		return "HQD slot";
	case KFD_CRIU_SLOT_SDMA:
		return "SDMA slot";
	default:
		return "slot";
	}
}

static bool kfd_criu_slot_taken(const unsigned long *taken, u32 bit)
{
	const u32 bits = 8 * sizeof(*taken);

	return (taken[bit / bits] >> (bit % bits)) & 1;
}

/**
 * kfd_criu_pick_slot() - which slot a restored queue takes
 * @wanted: the slot the image's queue had
 * @taken: bitmap of the slots already in use on the target, @nbits long
 * @nbits: slots there are
 * @flags: %KFD_CRIU_SLOT_USER_VISIBLE when user mode sees the id
 *	(kfd_criu_slot_user_visible())
 *
 * The same slot when it is free. Otherwise a slot user mode does not see
 * moves to the lowest free one; one it sees cannot move, and the restore
 * has to fail with -EBUSY, naming the kind (kfd_criu_slot_name()).
 *
 * Return: the slot, -EINVAL for @wanted outside the @nbits slots or an
 * unknown flag, -EBUSY when @wanted is taken and cannot move or no slot
 * is free.
 */
int kfd_criu_pick_slot(u32 wanted, const unsigned long *taken, u32 nbits,
		       u32 flags)
{
	u32 i;

	if (wanted >= nbits || nbits > INT_MAX ||
	    (flags & ~KFD_CRIU_SLOT_USER_VISIBLE))
		return -EINVAL;
	if (!kfd_criu_slot_taken(taken, wanted))
		return wanted;
	if (flags & KFD_CRIU_SLOT_USER_VISIBLE)
		return -EBUSY;
	for (i = 0; i < nbits; i++)
		if (!kfd_criu_slot_taken(taken, i))
			return i;
	return -EBUSY;
}

/**
 * kfd_criu_svm_ranges_cover() - whether SVM ranges hold an area that a
 *	queue needs always mapped
 * @ranges: SVM range records that passed kfd_criu_check_svm_ranges(),
 *	sorted by start and disjoint
 * @num_ranges: entries in @ranges
 * @start: first byte of the area
 * @len: bytes of the area
 * @gpu: index of the GPU record the queue is on
 *
 * ROCm registers each compute queue's CWSR area as an SVM range with
 * KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED and access for the queue's GPU
 * (ROCT queues.c, register_svm_range()); kfd_queue_acquire_buffers()
 * takes such ranges for the queue.
 *
 * Return: true when ranges without a gap cover the whole area, each
 * with that flag and with access or access in place for @gpu.
 */
bool kfd_criu_svm_ranges_cover(const struct kfd_criu_svm_rec *ranges,
			       u32 num_ranges, u64 start, u64 len, u32 gpu)
{
	const struct kfd_criu_svm_rec *r;
	u64 end, r_start, access;
	u32 i;

	if (!len || gpu >= KFD_CRIU_MAX_GPUS ||
	    check_add_overflow(start, len, &end))
		return false;
	for (i = 0; i < num_ranges && start < end; i++) {
		r = &ranges[i];
		r_start = le64_to_cpu(r->start);
		if (r_start + le64_to_cpu(r->size) <= start)
			continue;
		access = le64_to_cpu(r->access) |
			 le64_to_cpu(r->access_in_place);
		if (r_start > start ||
		    !(le32_to_cpu(r->flags) &
		      KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED) ||
		    !(access & BIT_ULL(gpu)))
			return false;
		start = r_start + le64_to_cpu(r->size);
	}
	return start >= end;
}

/*
 * The uAPI spells KFD_IOCTL_SVM_FLAG_* as plain constants; the set 6.12
 * defines, folded once.
 */
#define KFD_CRIU_SVM_FLAGS_KNOWN (KFD_IOCTL_SVM_FLAG_HOST_ACCESS |	\
				  KFD_IOCTL_SVM_FLAG_COHERENT |		\
				  KFD_IOCTL_SVM_FLAG_HIVE_LOCAL |	\
				  KFD_IOCTL_SVM_FLAG_GPU_RO |		\
				  KFD_IOCTL_SVM_FLAG_GPU_EXEC |		\
				  KFD_IOCTL_SVM_FLAG_GPU_READ_MOSTLY |	\
				  KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED | \
				  KFD_IOCTL_SVM_FLAG_EXT_COHERENT)

/* A location: system memory, none, or a GPU of the image by gpu_id. */
static int kfd_criu_check_svm_loc(u32 loc, const struct kfd_criu_gpu_rec *gpus,
				  u32 num_gpus)
{
	u32 i;

	if (loc == KFD_IOCTL_SVM_LOCATION_SYSMEM ||
	    loc == KFD_IOCTL_SVM_LOCATION_UNDEFINED)
		return 0;
	for (i = 0; i < num_gpus; i++)
		if (le32_to_cpu(gpus[i].gpu_id) == loc)
			return 0;
	return -EINVAL;
}

/**
 * kfd_criu_validate_svm_range() - check a %KFD_CRIU_REC_SVM_RANGE payload
 * @rec: the record
 * @gpus: the image's GPU records
 * @num_gpus: entries in @gpus
 *
 * The range is page aligned, non-empty and inside the VA space. Its
 * locations are system memory, undefined or a GPU of the image, by the
 * gpu_id the process knows (restore maps it with the GPUs). Its flags are
 * ones the 6.12 uAPI defines, its granularity at most what
 * svm_range_apply_attrs() keeps (0x3f). Each GPU of the image has at most
 * one of ACCESS, ACCESS_IN_PLACE and NO_ACCESS; no other GPU has any.
 *
 * Return: 0, or -EINVAL for anything that does not hold, a reserved field
 * included.
 */
int kfd_criu_validate_svm_range(const struct kfd_criu_svm_rec *rec,
				const struct kfd_criu_gpu_rec *gpus,
				u32 num_gpus)
{
	u64 start = le64_to_cpu(rec->start), size = le64_to_cpu(rec->size);
	u64 a = le64_to_cpu(rec->access);
	u64 aip = le64_to_cpu(rec->access_in_place);
	u64 none = le64_to_cpu(rec->no_access);
	u64 end;

	if (rec->reserved || rec->reserved2 || num_gpus > KFD_CRIU_MAX_GPUS)
		return -EINVAL;
	if (!size || !kfd_criu_bo_aligned(start) || !kfd_criu_bo_aligned(size) ||
	    check_add_overflow(start, size, &end) || end > KFD_CRIU_MAX_VA)
		return -EINVAL;
	if (kfd_criu_check_svm_loc(le32_to_cpu(rec->preferred_loc), gpus,
				   num_gpus) ||
	    kfd_criu_check_svm_loc(le32_to_cpu(rec->prefetch_loc), gpus,
				   num_gpus))
		return -EINVAL;
	if (le32_to_cpu(rec->flags) & ~KFD_CRIU_SVM_FLAGS_KNOWN ||
	    le32_to_cpu(rec->granularity) > KFD_CRIU_MAX_SVM_GRANULARITY)
		return -EINVAL;
	if ((a | aip | none) & ~kfd_criu_gpu_mask(num_gpus))
		return -EINVAL;
	if ((a & aip) || (a & none) || (aip & none))
		return -EINVAL;
	return 0;
}

/* The index of the last range starting below @va, or @n for none. */
static u32 kfd_criu_svm_before(const struct kfd_criu_svm_rec *ranges, u32 n,
			       u64 va)
{
	u32 lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (le64_to_cpu(ranges[mid].start) < va)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : n;
}

/* No BO, of any GPU's VM, overlaps a range of the sorted @ranges. */
static int kfd_criu_check_svm_bos(const struct kfd_criu_svm_rec *ranges,
				  u32 n, const struct kfd_criu_bo_rec *bos,
				  u32 num_bos)
{
	const struct kfd_criu_svm_rec *r;
	u64 va, end;
	u32 i, k;

	for (i = 0; i < num_bos; i++) {
		va = le64_to_cpu(bos[i].va);
		end = va + le64_to_cpu(bos[i].size);
		k = kfd_criu_svm_before(ranges, n, end);
		if (k == n)
			continue;
		r = &ranges[k];
		if (le64_to_cpu(r->start) + le64_to_cpu(r->size) > va)
			return -EINVAL;
	}
	return 0;
}

/**
 * kfd_criu_check_svm_ranges() - check the SVM_RANGE records as a set
 * @ranges: the records, in stream order
 * @n: entries in @ranges
 * @gpus: the image's GPU records
 * @num_gpus: entries in @gpus
 * @bos: the BO records, already passed kfd_criu_check_bos()
 * @num_bos: entries in @bos
 *
 * Validates each range, then requires them sorted by start and disjoint,
 * as the process's SVM interval tree holds them, and disjoint from every
 * BO of every GPU's VM: 6.12 refuses an SVM range over a BO mapping
 * (svm_range_check_vm()). Each BO takes a binary search, so the check is
 * O(num_bos log n).
 *
 * Return: 0, or -EINVAL for an invalid range, more than
 * %KFD_CRIU_MAX_SVM_RANGES, ranges out of order or overlapping, or a
 * range over a BO.
 */
int kfd_criu_check_svm_ranges(const struct kfd_criu_svm_rec *ranges, u32 n,
			      const struct kfd_criu_gpu_rec *gpus,
			      u32 num_gpus,
			      const struct kfd_criu_bo_rec *bos, u32 num_bos)
{
	u64 prev_end = 0;
	u32 i;
	int ret;

	if (n > KFD_CRIU_MAX_SVM_RANGES)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		ret = kfd_criu_validate_svm_range(&ranges[i], gpus, num_gpus);
		if (ret)
			return ret;
		if (le64_to_cpu(ranges[i].start) < prev_end)
			return -EINVAL;
		prev_end = le64_to_cpu(ranges[i].start) +
			   le64_to_cpu(ranges[i].size);
	}
	return kfd_criu_check_svm_bos(ranges, n, bos, num_bos);
}

#if IS_BUILTIN(CONFIG_HSA_AMD_CRIU_KUNIT_TEST)
#include "tests/kfd_criu_image_test.c"
#endif
