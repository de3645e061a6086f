/* SPDX-License-Identifier: GPL-2.0 OR MIT */

/*
 * An image stream in kernel memory for the KUnit tests: the codec writes
 * into it and reads back from it. It grows as it is written, so a test
 * can stream BO contents of several MiB. The hostile-record sweeps set a
 * field of a record in it to a boundary value and make the record's CRC
 * good again, then set random fields to random values, and judge a
 * refusal by the errnos RESTORE documents.
 */

#ifndef KFD_CRIU_TEST_STREAM_H_INCLUDED
#define KFD_CRIU_TEST_STREAM_H_INCLUDED

#include <kunit/test.h>
#include <linux/overflow.h>
#include <linux/prandom.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/unaligned.h>

#include "../kfd_criu_image.h"

/**
 * struct kfd_criu_test_stream - a stream in memory
 * @io: the codec's view of it
 * @data: the bytes, @cap of them allocated
 * @cap: bytes at @data
 * @len: bytes written
 * @pos: bytes read
 */
struct kfd_criu_test_stream {
	struct kfd_criu_image_io io;
	u8 *data;
	size_t cap;
	size_t len;
	size_t pos;
};

static int kfd_criu_test_stream_write(void *ctx, const void *buf, size_t len)
{
	struct kfd_criu_test_stream *s = ctx;
	size_t need, cap;
	u8 *data;

	if (check_add_overflow(s->len, len, &need))
		return -EFBIG;
	if (need > s->cap) {
		cap = max(need, 2 * s->cap);
		data = kvrealloc(s->data, cap, GFP_KERNEL);
		if (!data)
			return -ENOMEM;
		s->data = data;
		s->cap = cap;
	}
	memcpy(s->data + s->len, buf, len);
	s->len = need;
	return 0;
}

static int kfd_criu_test_stream_read(void *ctx, void *buf, size_t len)
{
	struct kfd_criu_test_stream *s = ctx;

	if (len > s->len - s->pos)
		return -ENODATA;
	memcpy(buf, s->data + s->pos, len);
	s->pos += len;
	return 0;
}

static void kfd_criu_test_stream_free(void *ctx)
{
	struct kfd_criu_test_stream *s = ctx;

	kvfree(s->data);
}

/* An empty stream, freed when the test ends. */
static struct kfd_criu_test_stream *
kfd_criu_test_stream_new(struct kunit *test)
{
	struct kfd_criu_test_stream *s;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	s->io.write = kfd_criu_test_stream_write;
	s->io.read = kfd_criu_test_stream_read;
	s->io.ctx = s;
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, kfd_criu_test_stream_free, s),
			0);
	return s;
}

/* Starts an image at the end of @s: @w writes it, its header written. */
static inline int kfd_criu_test_begin_image(struct kfd_criu_test_stream *s,
					    struct kfd_criu_image_writer *w)
{
	kfd_criu_image_writer_init(w, &s->io);
	return kfd_criu_image_write_header(w, "test");
}

/* Reads @s again from its start: @r reads it, its header read. */
static inline int kfd_criu_test_open_image(struct kfd_criu_test_stream *s,
					   struct kfd_criu_image_reader *r)
{
	struct kfd_criu_image_header hdr;

	s->pos = 0;
	kfd_criu_image_reader_init(r, &s->io, kfd_criu_v1_records,
				   kfd_criu_v1_num_records);
	return kfd_criu_image_read_header(r, &hdr);
}

/*
 * Reads the next record of @r into @rec and @buf, @size bytes: 1 for a
 * record, 0 at END, or the reader's error.
 */
static inline int kfd_criu_test_next_record(struct kfd_criu_image_reader *r,
					    struct kfd_criu_record *rec,
					    void *buf, u32 size)
{
	int ret = kfd_criu_image_read_record(r, rec, buf, size);

	return ret ? ret : rec->type != KFD_CRIU_REC_END;
}

/**
 * struct kfd_criu_test_field - a field of a record payload a sweep sets
 * @name: for messages
 * @off: its offset in the payload
 * @size: 4 or 8 bytes
 */
struct kfd_criu_test_field {
	const char *name;
	u32 off;
	u32 size;
};

#define KFD_CRIU_TEST_BOUNDARIES	5

/*
 * Boundary value @k of a @size-byte field that holds @orig: 0, the
 * maximum, one and a page more, the top bit flipped.
 */
static inline u64 kfd_criu_test_boundary(u32 size, u64 orig, unsigned int k)
{
	u64 max = size == 8 ? U64_MAX : U32_MAX;

	switch (k) {
	case 0:
		return 0;
	case 1:
		return max;
	case 2:
		return (orig + 1) & max;
	case 3:
		return (orig + PAGE_SIZE) & max;
	default:
		return orig ^ BIT_ULL(size * 8 - 1);
	}
}

/*
 * A random value for a @size-byte field that holds @orig: a boundary, one
 * bit flipped, a small step either way, or any value.
 */
static inline u64 kfd_criu_test_random_value(struct rnd_state *rnd, u32 size,
					     u64 orig)
{
	u64 max = size == 8 ? U64_MAX : U32_MAX;
	u64 bits;

	/* Two statements: the order of the draws must not be the compiler's */
	bits = (u64)prandom_u32_state(rnd) << 32;
	bits |= prandom_u32_state(rnd);

	switch (prandom_u32_state(rnd) % 4) {
	case 0:
		return kfd_criu_test_boundary(size, orig,
					      bits % KFD_CRIU_TEST_BOUNDARIES);
	case 1:
		return orig ^ BIT_ULL(bits % (size * 8));
	case 2:
		return (orig + (s8)bits) & max;
	default:
		return bits & max;
	}
}

/* Where the payload of the @n-th record of @type starts in @s, or 0 */
static inline size_t
kfd_criu_test_record_at(const struct kfd_criu_test_stream *s, u32 type, u32 n)
{
	size_t pos = sizeof(struct kfd_criu_image_header);
	struct kfd_criu_record_header rh;

	while (pos + sizeof(rh) <= s->len) {
		memcpy(&rh, s->data + pos, sizeof(rh));
		if (le32_to_cpu(rh.type) == type && !n--)
			return pos + sizeof(rh);
		pos += sizeof(rh) + le32_to_cpu(rh.length) + sizeof(__le32);
	}
	return 0;
}

static inline u64 kfd_criu_test_peek(const struct kfd_criu_test_stream *s,
				     size_t at,
				     const struct kfd_criu_test_field *f)
{
	const u8 *field = s->data + at + f->off;

	return f->size == 8 ? get_unaligned_le64(field) :
	       get_unaligned_le32(field);
}

/* Sets @f of the payload at @at to @val and makes the record's CRC good */
static inline void kfd_criu_test_poke(struct kfd_criu_test_stream *s,
				      size_t at,
				      const struct kfd_criu_test_field *f,
				      u64 val)
{
	struct kfd_criu_record_header rh;
	u8 *field = s->data + at + f->off;
	u32 len;

	memcpy(&rh, s->data + at - sizeof(rh), sizeof(rh));
	len = le32_to_cpu(rh.length);
	if (f->size == 8)
		put_unaligned_le64(val, field);
	else
		put_unaligned_le32(val, field);
	put_unaligned_le32(kfd_criu_crc32c(kfd_criu_crc32c(0, &rh, sizeof(rh)),
					   s->data + at, len),
			   s->data + at + len);
}

/*
 * The errors RESTORE documents for a malformed or unplaceable image. Not
 * -EBUSY: RESTORE documents it for a target that is not fresh (a queue
 * id, doorbell or SDMA slot taken, events of its own), and the sweeps
 * restore into fresh processes. Not -ENOMEM: the sweeps run with memory
 * to spare, so it would come from an allocation sized by a field that
 * was not checked first.
 */
static inline bool kfd_criu_test_documented(int ret)
{
	switch (ret) {
	case -EINVAL: case -EOPNOTSUPP: case -EBADMSG: case -EPROTO:
	case -ENODATA: case -EEXIST: case -ENODEV: case -ENOSPC: case -E2BIG:
	case -EADDRINUSE:
		return true;
	default:
		return false;
	}
}

/**
 * struct kfd_criu_test_sweep - a sweep of hostile records through a restore
 * @s: the stream of a good image; each hostile image is made in place
 * @try_image: restores @s and judges the outcome: a refusal must use an
 *	errno RESTORE documents and leave nothing, an acceptance must
 *	restore what the records say and unwind to nothing; returns whether
 *	the image was accepted
 * @ctx: for @try_image
 * @tried: images tried
 * @accepted: images accepted
 */
struct kfd_criu_test_sweep {
	struct kfd_criu_test_stream *s;
	bool (*try_image)(struct kunit *test, void *ctx, const char *what);
	void *ctx;
	unsigned int tried;
	unsigned int accepted;
};

/*
 * The random images of each swept record, and their seed: set on the test
 * kernel's command line as amdgpu.kfd_criu_test_random= and
 * amdgpu.kfd_criu_test_seed=; defined in tests/kfd_criu_bos_test.c.
 */
extern unsigned int kfd_criu_test_random_images;
extern unsigned long long kfd_criu_test_random_seed;

/* Fields a random image changes at most */
#define KFD_CRIU_TEST_RANDOM_FIELDS	3

/*
 * Tries kfd_criu_test_random_images images of the record at @at, each with
 * one to three of @fields set to random values (a field may be drawn
 * twice), and puts the record back after each. The draws depend only on
 * the seed, @type and @n, so a failure names the image that reproduces it.
 */
static inline void
kfd_criu_test_sweep_random(struct kunit *test, struct kfd_criu_test_sweep *sw,
			   u32 type, u32 n, size_t at,
			   const struct kfd_criu_test_field *fields,
			   unsigned int nfields)
{
	unsigned int pick[KFD_CRIU_TEST_RANDOM_FIELDS], i, j, nf;
	u64 orig[KFD_CRIU_TEST_RANDOM_FIELDS];
	const struct kfd_criu_test_field *f;
	struct rnd_state rnd;
	char what[96];

	prandom_seed_state(&rnd, kfd_criu_test_random_seed ^
				 ((u64)type << 48 | (u64)n << 32));
	for (i = 0; i < kfd_criu_test_random_images; i++) {
		nf = 1 + prandom_u32_state(&rnd) % KFD_CRIU_TEST_RANDOM_FIELDS;
		for (j = 0; j < nf; j++) {
			pick[j] = prandom_u32_state(&rnd) % nfields;
			f = &fields[pick[j]];
			orig[j] = kfd_criu_test_peek(sw->s, at, f);
			kfd_criu_test_poke(sw->s, at, f,
					   kfd_criu_test_random_value(&rnd,
								      f->size,
								      orig[j]));
		}
		snprintf(what, sizeof(what),
			 "record %u/%u random image %u of seed %llu (%u fields from %s)",
			 type, n, i, kfd_criu_test_random_seed, nf,
			 fields[pick[0]].name);
		sw->accepted += sw->try_image(test, sw->ctx, what);
		sw->tried++;
		while (j--)
			kfd_criu_test_poke(sw->s, at, &fields[pick[j]], orig[j]);
	}
}

/*
 * Sets each of @fields of the @n-th record of @type to each boundary
 * value in turn, with a good CRC, tries each image, and puts the field
 * back; then tries the random images of the record.
 */
static inline void
kfd_criu_test_sweep_record(struct kunit *test, struct kfd_criu_test_sweep *sw,
			   u32 type, u32 n,
			   const struct kfd_criu_test_field *fields,
			   unsigned int nfields)
{
	size_t at = kfd_criu_test_record_at(sw->s, type, n);
	unsigned int f, k;
	char what[64];
	u64 orig, val;

	KUNIT_ASSERT_NE(test, at, 0);
	for (f = 0; f < nfields; f++) {
		orig = kfd_criu_test_peek(sw->s, at, &fields[f]);
		for (k = 0; k < KFD_CRIU_TEST_BOUNDARIES; k++) {
			val = kfd_criu_test_boundary(fields[f].size, orig, k);
			kfd_criu_test_poke(sw->s, at, &fields[f], val);
			snprintf(what, sizeof(what), "record %u/%u %s=%#llx",
				 type, n, fields[f].name, val);
			sw->accepted += sw->try_image(test, sw->ctx, what);
			sw->tried++;
		}
		kfd_criu_test_poke(sw->s, at, &fields[f], orig);
	}
	kfd_criu_test_sweep_random(test, sw, type, n, at, fields, nfields);
}

/* Prints the sweep's figures; it must have refused some and taken some. */
static inline void kfd_criu_test_sweep_report(struct kunit *test,
					      const struct kfd_criu_test_sweep *sw)
{
	kunit_info(test, "%u hostile images: %u refused, %u accepted\n",
		   sw->tried, sw->tried - sw->accepted, sw->accepted);
	KUNIT_EXPECT_GT(test, sw->tried - sw->accepted, 0);
	KUNIT_EXPECT_GT(test, sw->accepted, 0);
}

#endif
