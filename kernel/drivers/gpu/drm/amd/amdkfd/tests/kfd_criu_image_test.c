// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: KUnit tests for the KFD CRIU image codec
 *
 * Included at the end of kfd_criu_image.c, so the tests reach its static
 * helpers. Streams live in memory: &struct test_stream is both the sink
 * and the source. The same file also runs in userspace (host/ of the
 * project) through a small KUnit-compatible shim, so it sticks to the
 * common part of the KUnit API.
 */

#include <kunit/test.h>
#include <linux/slab.h>

#define TEST_STREAM_SIZE	(64 * 1024)
#define TEST_BUF_SIZE		KFD_CRIU_SIGNAL_PAGE_MAX
#define TEST_SIGNAL_PAGE_SIZE	64
#define TEST_NUM_EVENTS		4
#define TEST_TYPE_UNKNOWN	100
#define TEST_UNKNOWN_LEN	1000
#define TEST_NO_FIELD		((size_t)-1)

/* Extra records test_emit_image() puts after the PROCESS record. */
#define TEST_WITH_OPTIONAL	BIT(0)
#define TEST_WITH_MANDATORY	BIT(1)

static const char test_release[] = "6.12.0-kunit";

struct test_image {
	struct kfd_criu_compat_rec compat;
	struct kfd_criu_process_rec process;
	u8 signal_page[TEST_SIGNAL_PAGE_SIZE];
	struct kfd_criu_event_rec events[TEST_NUM_EVENTS];
	unsigned int num_events;
};

struct test_stream {
	struct kfd_criu_image_io io;
	u8 *data;
	size_t limit;	/* a write that goes past it fails with -ENOSPC */
	size_t len;	/* bytes written, which is what a reader can read */
	size_t pos;	/* next byte a reader gets */
	u8 *buf;	/* record payloads for the reader, TEST_BUF_SIZE */
};

static int test_stream_write(void *ctx, const void *buf, size_t len)
{
	struct test_stream *s = ctx;

	if (len > s->limit - s->len)
		return -ENOSPC;
	memcpy(s->data + s->len, buf, len);
	s->len += len;
	return 0;
}

static int test_stream_read(void *ctx, void *buf, size_t len)
{
	struct test_stream *s = ctx;

	if (len > s->len - s->pos) {
		s->pos = s->len;
		return -ENODATA;
	}
	memcpy(buf, s->data + s->pos, len);
	s->pos += len;
	return 0;
}

static void test_stream_reset(struct test_stream *s)
{
	s->limit = TEST_STREAM_SIZE;
	s->len = 0;
	s->pos = 0;
}

static int test_init(struct kunit *test)
{
	struct test_stream *s;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	s->data = kunit_kzalloc(test, TEST_STREAM_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s->data);
	s->buf = kunit_kzalloc(test, TEST_BUF_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s->buf);
	s->io.write = test_stream_write;
	s->io.read = test_stream_read;
	s->io.ctx = s;
	test_stream_reset(s);
	test->priv = s;
	return 0;
}

static void test_fill_events(struct kfd_criu_event_rec *ev)
{
	ev[0].event_id = cpu_to_le32(1);
	ev[0].type = cpu_to_le32(KFD_IOC_EVENT_SIGNAL);
	ev[0].auto_reset = cpu_to_le32(1);
	ev[0].event_age = cpu_to_le64(3);

	ev[1].event_id = cpu_to_le32(5);
	ev[1].type = cpu_to_le32(KFD_IOC_EVENT_DEBUG_EVENT);
	ev[1].signaled = cpu_to_le32(1);
	ev[1].event_age = cpu_to_le64(0x100000002ULL);

	ev[2].event_id = cpu_to_le32(KFD_CRIU_FIRST_NONSIGNAL_EVENT_ID);
	ev[2].type = cpu_to_le32(KFD_IOC_EVENT_MEMORY);
	ev[2].signaled = cpu_to_le32(1);
	ev[2].mem_va = cpu_to_le64(0x7f1234567000ULL);
	ev[2].mem_gpu_id = cpu_to_le32(0x4242);
	ev[2].mem_error_type = cpu_to_le32(KFD_MEM_ERR_SRAM_ECC);
	ev[2].mem_not_present = cpu_to_le32(1);
	ev[2].mem_imprecise = cpu_to_le32(1);

	ev[3].event_id = cpu_to_le32(KFD_CRIU_FIRST_NONSIGNAL_EVENT_ID + 1);
	ev[3].type = cpu_to_le32(KFD_IOC_EVENT_HW_EXCEPTION);
	ev[3].auto_reset = cpu_to_le32(1);
	ev[3].hw_reset_type = cpu_to_le32(KFD_HW_EXCEPTION_PER_ENGINE_RESET);
	ev[3].hw_reset_cause = cpu_to_le32(KFD_HW_EXCEPTION_ECC);
	ev[3].hw_memory_lost = cpu_to_le32(1);
	ev[3].hw_gpu_id = cpu_to_le32(0x4242);
}

static void test_fill_process(struct kfd_criu_process_rec *proc)
{
	memset(proc, 0, sizeof(*proc));
	proc->xnack_enabled = cpu_to_le32(1);
	proc->runtime_state = cpu_to_le32(DEBUG_RUNTIME_STATE_ENABLED);
	proc->r_debug = cpu_to_le64(0x7f0012345678ULL);
	proc->ttmp_setup = cpu_to_le32(1);
	proc->num_events = cpu_to_le32(TEST_NUM_EVENTS);
	proc->signal_page_size = cpu_to_le32(TEST_SIGNAL_PAGE_SIZE);
}

static void test_fill_image(struct test_image *img)
{
	unsigned int i;

	memset(img, 0, sizeof(*img));
	test_fill_process(&img->process);
	for (i = 0; i < TEST_SIGNAL_PAGE_SIZE; i++)
		img->signal_page[i] = (u8)(i * 7 + 1);
	test_fill_events(img->events);
	img->num_events = TEST_NUM_EVENTS;
}

/* Streams an unknown record in odd-sized pieces. */
static void test_emit_unknown(struct kfd_criu_image_writer *w, u32 flags,
			      u32 len)
{
	static const u8 pattern[37] = { 0xa5, 0x5a, 0x01, 0xfe };
	u32 piece;

	kfd_criu_image_begin_record(w, TEST_TYPE_UNKNOWN, flags, len);
	while (len) {
		piece = min_t(u32, len, sizeof(pattern));
		kfd_criu_image_write_data(w, pattern, piece);
		len -= piece;
	}
	kfd_criu_image_finish_record(w);
}

/*
 * Writes a whole image without looking at intermediate results: the
 * writer's error is sticky, so write_end() reports the first failure.
 */
static int test_emit_image(struct kfd_criu_image_writer *w,
			   const struct test_image *img, unsigned int extra)
{
	const u32 m = KFD_CRIU_RECORD_MANDATORY;
	unsigned int i;

	kfd_criu_image_write_header(w, test_release);
	kfd_criu_image_write_record(w, KFD_CRIU_REC_COMPAT, m, &img->compat,
				    sizeof(img->compat));
	kfd_criu_image_write_record(w, KFD_CRIU_REC_PROCESS, m, &img->process,
				    sizeof(img->process));
	if (extra & TEST_WITH_OPTIONAL) {
		test_emit_unknown(w, 0, TEST_UNKNOWN_LEN);
		test_emit_unknown(w, 0, 0);
	}
	if (extra & TEST_WITH_MANDATORY)
		test_emit_unknown(w, m, 16);
	kfd_criu_image_write_record(w, KFD_CRIU_REC_SIGNAL_PAGE, m,
				    img->signal_page, sizeof(img->signal_page));
	for (i = 0; i < img->num_events; i++)
		kfd_criu_image_write_record(w, KFD_CRIU_REC_EVENT, m,
					    &img->events[i],
					    sizeof(img->events[i]));
	return kfd_criu_image_write_end(w);
}

static void test_write_image(struct kunit *test, struct test_stream *s,
			     const struct test_image *img, unsigned int extra)
{
	struct kfd_criu_image_writer w;

	test_stream_reset(s);
	kfd_criu_image_writer_init(&w, &s->io);
	KUNIT_ASSERT_EQ(test, test_emit_image(&w, img, extra), 0);
}

static void test_write_valid(struct kunit *test, struct test_stream *s,
			     unsigned int extra)
{
	struct test_image *img;

	img = kunit_kzalloc(test, sizeof(*img), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, img);
	test_fill_image(img);
	test_write_image(test, s, img, extra);
}

static void test_store_record(struct test_image *out,
			      const struct kfd_criu_record *rec, const u8 *buf)
{
	switch (rec->type) {
	case KFD_CRIU_REC_COMPAT:
		memcpy(&out->compat, buf, sizeof(out->compat));
		break;
	case KFD_CRIU_REC_PROCESS:
		memcpy(&out->process, buf, sizeof(out->process));
		break;
	case KFD_CRIU_REC_SIGNAL_PAGE:
		memcpy(out->signal_page, buf,
		       min_t(u32, rec->length, sizeof(out->signal_page)));
		break;
	case KFD_CRIU_REC_EVENT:
		if (out->num_events < TEST_NUM_EVENTS)
			memcpy(&out->events[out->num_events++], buf,
			       sizeof(out->events[0]));
		break;
	}
}

/* Reads a whole stream as restore would; returns the first error. */
static int test_read_image(struct test_stream *s,
			   struct kfd_criu_image_reader *r,
			   struct test_image *out)
{
	struct kfd_criu_image_header hdr;
	struct kfd_criu_record rec;
	int ret;

	s->pos = 0;
	kfd_criu_image_reader_init(r, &s->io, kfd_criu_v1_records,
				   kfd_criu_v1_num_records);
	ret = kfd_criu_image_read_header(r, &hdr);
	if (ret)
		return ret;
	do {
		ret = kfd_criu_image_read_record(r, &rec, s->buf,
						 TEST_BUF_SIZE);
		if (ret)
			return ret;
		if (out)
			test_store_record(out, &rec, s->buf);
	} while (rec.type != KFD_CRIU_REC_END);
	return kfd_criu_image_expect_eof(r);
}

static u32 test_get_le32(const struct test_stream *s, size_t off)
{
	__le32 v;

	memcpy(&v, s->data + off, sizeof(v));
	return le32_to_cpu(v);
}

static void test_put_le32(struct test_stream *s, size_t off, u32 val)
{
	__le32 v = cpu_to_le32(val);

	memcpy(s->data + off, &v, sizeof(v));
}

static void test_fix_header_crc(struct test_stream *s)
{
	size_t off = offsetof(struct kfd_criu_image_header, crc);

	test_put_le32(s, off, kfd_criu_crc32c(0, s->data, off));
}

#define TEST_REC_FLAGS		offsetof(struct kfd_criu_record_header, flags)
#define TEST_REC_LENGTH		offsetof(struct kfd_criu_record_header, length)
#define TEST_REC_PAYLOAD	sizeof(struct kfd_criu_record_header)

/* Offset of the @nth record of @type, found by walking the stream. */
static size_t test_find(struct kunit *test, const struct test_stream *s,
			u32 type, unsigned int nth)
{
	size_t off = sizeof(struct kfd_criu_image_header);

	while (off + TEST_REC_PAYLOAD <= s->len) {
		if (test_get_le32(s, off) == type && !nth--)
			return off;
		off += KFD_CRIU_RECORD_OVERHEAD +
		       test_get_le32(s, off + TEST_REC_LENGTH);
	}
	KUNIT_ASSERT_TRUE_MSG(test, false, "no record of type %u", type);
	return 0;
}

/* Recomputes the CRC trailer of the record at @off after a patch. */
static void test_fix_record_crc(struct test_stream *s, size_t off)
{
	size_t end = off + TEST_REC_PAYLOAD +
		     test_get_le32(s, off + TEST_REC_LENGTH);

	test_put_le32(s, end, kfd_criu_crc32c(0, s->data + off, end - off));
}

static void test_patch_record(struct kunit *test, struct test_stream *s,
			      u32 type, size_t field, u32 val)
{
	size_t off = test_find(test, s, type, 0);

	test_put_le32(s, off + field, val);
	test_fix_record_crc(s, off);
}

static void test_patch_header(struct test_stream *s, size_t field, u32 val)
{
	test_put_le32(s, field, val);
	test_fix_header_crc(s);
}

static void test_append_copy(struct test_stream *s, size_t from, size_t len)
{
	memcpy(s->data + s->len, s->data + from, len);
	s->len += len;
}

/*
 * Basics
 */

static void test_crc32c(struct kunit *test)
{
	static const char check[] = "123456789";
	static const u8 zeros[32];
	u8 ones[32];

	memset(ones, 0xff, sizeof(ones));
	KUNIT_EXPECT_EQ(test, kfd_criu_crc32c(0, check, 9), 0xe3069283U);
	KUNIT_EXPECT_EQ(test, kfd_criu_crc32c(kfd_criu_crc32c(0, check, 4),
					      check + 4, 5), 0xe3069283U);
	KUNIT_EXPECT_EQ(test, kfd_criu_crc32c(0, check, 0), 0U);
	/* RFC 3720, B.4 */
	KUNIT_EXPECT_EQ(test, kfd_criu_crc32c(0, zeros, 32), 0x8a9136aaU);
	KUNIT_EXPECT_EQ(test, kfd_criu_crc32c(0, ones, 32), 0x62a8ab43U);
}

/* The byte layout is ABI: check it against bytes written out by hand. */
static void test_layout(struct kunit *test)
{
	static const u8 header_start[] = {
		'K', 'F', 'D', 'C', 'R', 'I', 'U', 0,	/* magic */
		1, 0, 0, 0,				/* version */
		0, 0, 0, 0,				/* flags */
		88, 0, 0, 0,				/* header_size */
	};
	static const u8 compat_header[] = {
		KFD_CRIU_REC_COMPAT, 0, 0, 0,
		KFD_CRIU_RECORD_MANDATORY, 0, 0, 0,
		8, 0, 0, 0,
	};
	struct test_stream *s = test->priv;
	size_t rec = sizeof(struct kfd_criu_image_header);

	test_write_valid(test, s, 0);
	KUNIT_EXPECT_MEMEQ(test, s->data, header_start, sizeof(header_start));
	KUNIT_EXPECT_STREQ(test, (const char *)s->data + 20, test_release);
	KUNIT_EXPECT_EQ(test, test_get_le32(s, 84),
			kfd_criu_crc32c(0, s->data, 84));
	KUNIT_EXPECT_MEMEQ(test, s->data + rec, compat_header,
			   sizeof(compat_header));
	KUNIT_EXPECT_EQ(test, test_get_le32(s, rec + 20),
			kfd_criu_crc32c(0, s->data + rec, 20));
}

static void test_release_string(struct kunit *test)
{
	static const char long_release[] =
		"0123456789012345678901234567890123456789012345678901234567890123456789";
	struct kfd_criu_image_reader r;
	struct kfd_criu_image_writer w;
	struct kfd_criu_image_header hdr;
	struct test_stream *s = test->priv;

	kfd_criu_image_writer_init(&w, &s->io);
	KUNIT_ASSERT_EQ(test, kfd_criu_image_write_header(&w, long_release), 0);
	kfd_criu_image_reader_init(&r, &s->io, NULL, 0);
	KUNIT_ASSERT_EQ(test, kfd_criu_image_read_header(&r, &hdr), 0);
	KUNIT_EXPECT_EQ(test, strnlen((const char *)hdr.release,
				      KFD_CRIU_RELEASE_LEN),
			(size_t)KFD_CRIU_RELEASE_LEN - 1);
	KUNIT_EXPECT_MEMEQ(test, hdr.release, long_release,
			   KFD_CRIU_RELEASE_LEN - 1);

	test_stream_reset(s);
	kfd_criu_image_writer_init(&w, &s->io);
	KUNIT_ASSERT_EQ(test, kfd_criu_image_write_header(&w, NULL), 0);
	kfd_criu_image_reader_init(&r, &s->io, NULL, 0);
	KUNIT_ASSERT_EQ(test, kfd_criu_image_read_header(&r, &hdr), 0);
	KUNIT_EXPECT_EQ(test, hdr.release[0], 0);
}

/*
 * Round trips
 */

static void test_expect_same_image(struct kunit *test,
				   const struct test_image *in,
				   const struct test_image *out)
{
	KUNIT_EXPECT_MEMEQ(test, &out->compat, &in->compat,
			   sizeof(in->compat));
	KUNIT_EXPECT_MEMEQ(test, &out->process, &in->process,
			   sizeof(in->process));
	KUNIT_EXPECT_MEMEQ(test, out->signal_page, in->signal_page,
			   sizeof(in->signal_page));
	KUNIT_ASSERT_EQ(test, out->num_events, in->num_events);
	KUNIT_EXPECT_MEMEQ(test, out->events, in->events,
			   sizeof(in->events[0]) * in->num_events);
}

static void test_round_trip(struct kunit *test)
{
	const u64 payload = sizeof(struct kfd_criu_compat_rec) +
			    sizeof(struct kfd_criu_process_rec) +
			    TEST_SIGNAL_PAGE_SIZE +
			    TEST_NUM_EVENTS * sizeof(struct kfd_criu_event_rec);
	struct test_stream *s = test->priv;
	struct kfd_criu_image_reader r;
	struct test_image *in, *out;
	unsigned int i;

	in = kunit_kzalloc(test, sizeof(*in), GFP_KERNEL);
	out = kunit_kzalloc(test, sizeof(*out), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, in);
	KUNIT_ASSERT_NOT_NULL(test, out);
	test_fill_image(in);
	test_write_image(test, s, in, 0);
	KUNIT_EXPECT_EQ(test, s->len, sizeof(struct kfd_criu_image_header) +
			8 * KFD_CRIU_RECORD_OVERHEAD +
			sizeof(struct kfd_criu_end_rec) + payload);

	KUNIT_ASSERT_EQ(test, test_read_image(s, &r, out), 0);
	test_expect_same_image(test, in, out);
	KUNIT_EXPECT_TRUE(test, r.ended);
	KUNIT_EXPECT_EQ(test, r.records, 3U + TEST_NUM_EVENTS);
	KUNIT_EXPECT_EQ(test, r.payload_bytes, payload);
	KUNIT_EXPECT_EQ(test, r.skipped, 0U);

	KUNIT_EXPECT_EQ(test, kfd_criu_validate_compat(&out->compat), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_process(&out->process), 0);
	for (i = 0; i < out->num_events; i++) {
		KUNIT_EXPECT_EQ(test, kfd_criu_validate_event(&out->events[i]), 0);
		KUNIT_EXPECT_EQ(test, kfd_criu_validate_event_slot(&out->process,
								   &out->events[i]), 0);
	}
	KUNIT_EXPECT_EQ(test, kfd_criu_check_event_ids(out->events,
						       out->num_events), 0);
}

static void test_write_page(struct kunit *test, struct test_stream *s,
			    const u8 *page, bool in_pieces)
{
	static const u32 pieces[] = { 1, 7, 0, 256, 1000, 4096 };
	const u32 m = KFD_CRIU_RECORD_MANDATORY;
	struct kfd_criu_image_writer w;
	u32 done = 0, n;
	unsigned int i;
	int ret;

	test_stream_reset(s);
	kfd_criu_image_writer_init(&w, &s->io);
	KUNIT_ASSERT_EQ(test, kfd_criu_image_write_header(&w, test_release), 0);
	if (!in_pieces) {
		ret = kfd_criu_image_write_record(&w, KFD_CRIU_REC_SIGNAL_PAGE,
						  m, page,
						  KFD_CRIU_SIGNAL_PAGE_MAX);
		KUNIT_ASSERT_EQ(test, ret, 0);
		KUNIT_ASSERT_EQ(test, kfd_criu_image_write_end(&w), 0);
		return;
	}
	ret = kfd_criu_image_begin_record(&w, KFD_CRIU_REC_SIGNAL_PAGE, m,
					  KFD_CRIU_SIGNAL_PAGE_MAX);
	KUNIT_ASSERT_EQ(test, ret, 0);
	for (i = 0; done < KFD_CRIU_SIGNAL_PAGE_MAX; i++) {
		n = min_t(u32, pieces[i % ARRAY_SIZE(pieces)],
			  KFD_CRIU_SIGNAL_PAGE_MAX - done);
		ret = kfd_criu_image_write_data(&w, page + done, n);
		KUNIT_ASSERT_EQ(test, ret, 0);
		done += n;
	}
	KUNIT_ASSERT_EQ(test, kfd_criu_image_finish_record(&w), 0);
	KUNIT_EXPECT_EQ(test, w.records, 1U);
	KUNIT_EXPECT_EQ(test, w.payload_bytes, (u64)KFD_CRIU_SIGNAL_PAGE_MAX);
	KUNIT_ASSERT_EQ(test, kfd_criu_image_write_end(&w), 0);
}

static void test_streamed_payload(struct kunit *test)
{
	struct test_stream *s = test->priv;
	struct kfd_criu_image_reader r;
	struct kfd_criu_image_header hdr;
	struct kfd_criu_record rec;
	u8 *page, *whole;
	size_t whole_len;
	unsigned int i;

	page = kunit_kzalloc(test, KFD_CRIU_SIGNAL_PAGE_MAX, GFP_KERNEL);
	whole = kunit_kzalloc(test, TEST_STREAM_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	KUNIT_ASSERT_NOT_NULL(test, whole);
	for (i = 0; i < KFD_CRIU_SIGNAL_PAGE_MAX; i++)
		page[i] = (u8)(i ^ (i >> 8));

	test_write_page(test, s, page, false);
	memcpy(whole, s->data, s->len);
	whole_len = s->len;
	test_write_page(test, s, page, true);
	KUNIT_ASSERT_EQ(test, s->len, whole_len);
	KUNIT_EXPECT_MEMEQ(test, s->data, whole, whole_len);

	kfd_criu_image_reader_init(&r, &s->io, kfd_criu_v1_records,
				   kfd_criu_v1_num_records);
	KUNIT_ASSERT_EQ(test, kfd_criu_image_read_header(&r, &hdr), 0);
	KUNIT_ASSERT_EQ(test, kfd_criu_image_read_record(&r, &rec, s->buf,
							 TEST_BUF_SIZE), 0);
	KUNIT_EXPECT_EQ(test, rec.type, (u32)KFD_CRIU_REC_SIGNAL_PAGE);
	KUNIT_EXPECT_EQ(test, rec.flags, KFD_CRIU_RECORD_MANDATORY);
	KUNIT_ASSERT_EQ(test, rec.length, (u32)KFD_CRIU_SIGNAL_PAGE_MAX);
	KUNIT_EXPECT_MEMEQ(test, s->buf, page, KFD_CRIU_SIGNAL_PAGE_MAX);
	KUNIT_ASSERT_EQ(test, kfd_criu_image_read_record(&r, &rec, s->buf,
							 TEST_BUF_SIZE), 0);
	KUNIT_EXPECT_EQ(test, rec.type, (u32)KFD_CRIU_REC_END);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_expect_eof(&r), 0);
}

static void test_unknown_optional_skipped(struct kunit *test)
{
	const struct kfd_criu_record_desc knows_unknown[] = {
		{ KFD_CRIU_REC_COMPAT, sizeof(struct kfd_criu_compat_rec),
		  sizeof(struct kfd_criu_compat_rec) },
		{ KFD_CRIU_REC_PROCESS, sizeof(struct kfd_criu_process_rec),
		  sizeof(struct kfd_criu_process_rec) },
		{ TEST_TYPE_UNKNOWN, 0, TEST_UNKNOWN_LEN },
	};
	struct test_stream *s = test->priv;
	struct kfd_criu_image_reader r;
	struct kfd_criu_image_header hdr;
	struct kfd_criu_record rec;
	struct test_image *in, *out;
	int ret;

	in = kunit_kzalloc(test, sizeof(*in), GFP_KERNEL);
	out = kunit_kzalloc(test, sizeof(*out), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, in);
	KUNIT_ASSERT_NOT_NULL(test, out);
	test_fill_image(in);
	test_write_image(test, s, in, TEST_WITH_OPTIONAL);

	KUNIT_ASSERT_EQ(test, test_read_image(s, &r, out), 0);
	test_expect_same_image(test, in, out);
	KUNIT_EXPECT_EQ(test, r.skipped, 2U);
	KUNIT_EXPECT_EQ(test, r.records, 5U + TEST_NUM_EVENTS);

	/* A reader whose table has the type gets it instead. */
	s->pos = 0;
	kfd_criu_image_reader_init(&r, &s->io, knows_unknown,
				   ARRAY_SIZE(knows_unknown));
	KUNIT_ASSERT_EQ(test, kfd_criu_image_read_header(&r, &hdr), 0);
	do {
		ret = kfd_criu_image_read_record(&r, &rec, s->buf,
						 TEST_BUF_SIZE);
		KUNIT_ASSERT_EQ(test, ret, 0);
	} while (rec.type != TEST_TYPE_UNKNOWN);
	KUNIT_EXPECT_EQ(test, rec.length, (u32)TEST_UNKNOWN_LEN);
	KUNIT_EXPECT_EQ(test, s->buf[0], 0xa5);
	KUNIT_EXPECT_EQ(test, s->buf[37 + 1], 0x5a);
	KUNIT_EXPECT_EQ(test, r.records, 3U);
	KUNIT_EXPECT_EQ(test, r.skipped, 0U);
}

/*
 * Malformed streams
 */

static void mk_valid(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
}

static void mk_valid_optional(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, TEST_WITH_OPTIONAL);
}

static void mk_empty(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	s->len = 0;
}

static void mk_cut_header(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	s->len = sizeof(struct kfd_criu_image_header) - 1;
}

static void mk_cut_record_header(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	s->len = test_find(test, s, KFD_CRIU_REC_PROCESS, 0) + 5;
}

static void mk_cut_payload(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	s->len = test_find(test, s, KFD_CRIU_REC_SIGNAL_PAGE, 0) +
		 TEST_REC_PAYLOAD + 10;
}

static void mk_cut_trailer(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	s->len = test_find(test, s, KFD_CRIU_REC_SIGNAL_PAGE, 0) +
		 TEST_REC_PAYLOAD + TEST_SIGNAL_PAGE_SIZE + 2;
}

static void mk_cut_skipped(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, TEST_WITH_OPTIONAL);
	s->len = test_find(test, s, TEST_TYPE_UNKNOWN, 0) +
		 TEST_REC_PAYLOAD + 300;
}

static void mk_no_end(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	s->len = test_find(test, s, KFD_CRIU_REC_END, 0);
}

static void mk_bad_magic(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	s->data[3] ^= 0x20;
}

static void mk_version_0(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	test_patch_header(s, offsetof(struct kfd_criu_image_header, version), 0);
}

static void mk_version_2(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	test_patch_header(s, offsetof(struct kfd_criu_image_header, version), 2);
}

static void mk_version_2_old_crc(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	test_put_le32(s, offsetof(struct kfd_criu_image_header, version), 2);
}

static void mk_header_flags(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	test_patch_header(s, offsetof(struct kfd_criu_image_header, flags), 1);
}

static void mk_header_size(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	test_patch_header(s, offsetof(struct kfd_criu_image_header, header_size),
			  sizeof(struct kfd_criu_image_header) + 4);
}

static void mk_release_unterminated(struct kunit *test, struct test_stream *s)
{
	size_t off = offsetof(struct kfd_criu_image_header, release);

	test_write_valid(test, s, 0);
	memset(s->data + off, 'x', KFD_CRIU_RELEASE_LEN);
	test_fix_header_crc(s);
}

static void mk_release_unpadded(struct kunit *test, struct test_stream *s)
{
	size_t off = offsetof(struct kfd_criu_image_header, release);

	test_write_valid(test, s, 0);
	s->data[off + KFD_CRIU_RELEASE_LEN - 2] = 'x';
	test_fix_header_crc(s);
}

static void mk_header_crc_data(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	s->data[offsetof(struct kfd_criu_image_header, release)] ^= 0x01;
}

static void mk_header_crc_field(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	s->data[offsetof(struct kfd_criu_image_header, crc) + 3] ^= 0x80;
}

static void mk_record_crc_payload(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	s->data[test_find(test, s, KFD_CRIU_REC_PROCESS, 0) +
		TEST_REC_PAYLOAD + 8] ^= 0x80;
}

static void mk_record_crc_trailer(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	s->data[test_find(test, s, KFD_CRIU_REC_EVENT, 3) + TEST_REC_PAYLOAD +
		sizeof(struct kfd_criu_event_rec)] ^= 0x01;
}

/* Clearing MANDATORY leaves a valid header: only the CRC can tell. */
static void mk_record_crc_header(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	test_put_le32(s, test_find(test, s, KFD_CRIU_REC_COMPAT, 0) +
		      TEST_REC_FLAGS, 0);
}

static void mk_skipped_crc(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, TEST_WITH_OPTIONAL);
	s->data[test_find(test, s, TEST_TYPE_UNKNOWN, 0) + TEST_REC_PAYLOAD +
		TEST_UNKNOWN_LEN - 1] ^= 0x04;
}

static void mk_unknown_mandatory(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, TEST_WITH_MANDATORY);
}

static void mk_unknown_flags(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	test_patch_record(test, s, KFD_CRIU_REC_COMPAT, TEST_REC_FLAGS,
			  KFD_CRIU_RECORD_MANDATORY | BIT(1));
}

static void mk_unknown_flags_optional(struct kunit *test,
				      struct test_stream *s)
{
	test_write_valid(test, s, TEST_WITH_OPTIONAL);
	test_patch_record(test, s, TEST_TYPE_UNKNOWN, TEST_REC_FLAGS, BIT(31));
}

static void mk_len_over_max(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	test_put_le32(s, test_find(test, s, KFD_CRIU_REC_SIGNAL_PAGE, 0) +
		      TEST_REC_LENGTH, KFD_CRIU_MAX_RECORD_LEN + 1);
}

/* An unknown record must not make the reader skip 4 GiB. */
static void mk_len_huge_optional(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, TEST_WITH_OPTIONAL);
	test_put_le32(s, test_find(test, s, TEST_TYPE_UNKNOWN, 0) +
		      TEST_REC_LENGTH, 0xffffffff);
}

static void mk_process_short(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	test_put_le32(s, test_find(test, s, KFD_CRIU_REC_PROCESS, 0) +
		      TEST_REC_LENGTH, sizeof(struct kfd_criu_process_rec) - 1);
}

static void mk_process_long(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	test_put_le32(s, test_find(test, s, KFD_CRIU_REC_PROCESS, 0) +
		      TEST_REC_LENGTH, sizeof(struct kfd_criu_process_rec) + 1);
}

static void mk_page_short(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	test_put_le32(s, test_find(test, s, KFD_CRIU_REC_SIGNAL_PAGE, 0) +
		      TEST_REC_LENGTH, 4);
}

static void mk_page_long(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	test_put_le32(s, test_find(test, s, KFD_CRIU_REC_SIGNAL_PAGE, 0) +
		      TEST_REC_LENGTH, KFD_CRIU_SIGNAL_PAGE_MAX + 8);
}

static void mk_event_empty(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	test_put_le32(s, test_find(test, s, KFD_CRIU_REC_EVENT, 0) +
		      TEST_REC_LENGTH, 0);
}

static void mk_end_short(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	test_put_le32(s, test_find(test, s, KFD_CRIU_REC_END, 0) +
		      TEST_REC_LENGTH, 8);
}

static void test_patch_end(struct kunit *test, struct test_stream *s,
			   size_t field, s32 delta)
{
	size_t off = test_find(test, s, KFD_CRIU_REC_END, 0) +
		     TEST_REC_PAYLOAD + field;

	test_put_le32(s, off, test_get_le32(s, off) + (u32)delta);
	test_fix_record_crc(s, test_find(test, s, KFD_CRIU_REC_END, 0));
}

static void mk_end_more_records(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	test_patch_end(test, s, offsetof(struct kfd_criu_end_rec, records), 1);
}

static void mk_end_fewer_records(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	test_patch_end(test, s, offsetof(struct kfd_criu_end_rec, records), -1);
}

static void mk_end_bytes(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	test_patch_end(test, s,
		       offsetof(struct kfd_criu_end_rec, payload_bytes), -1);
}

static void mk_end_bytes_high(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	test_patch_end(test, s,
		       offsetof(struct kfd_criu_end_rec, payload_bytes) + 4, 1);
}

static void mk_end_reserved(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	test_patch_end(test, s, offsetof(struct kfd_criu_end_rec, reserved), 1);
}

/* END must count skipped records too. */
static void mk_end_without_skipped(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, TEST_WITH_OPTIONAL);
	test_patch_end(test, s, offsetof(struct kfd_criu_end_rec, records), -2);
	test_patch_end(test, s,
		       offsetof(struct kfd_criu_end_rec, payload_bytes),
		       -TEST_UNKNOWN_LEN);
}

static void mk_trailing_byte(struct kunit *test, struct test_stream *s)
{
	test_write_valid(test, s, 0);
	s->data[s->len++] = 0;
}

static void mk_record_after_end(struct kunit *test, struct test_stream *s)
{
	size_t off;

	test_write_valid(test, s, 0);
	off = test_find(test, s, KFD_CRIU_REC_COMPAT, 0);
	test_append_copy(s, off, KFD_CRIU_RECORD_OVERHEAD +
			 sizeof(struct kfd_criu_compat_rec));
}

struct test_bad_stream {
	const char *desc;
	void (*make)(struct kunit *test, struct test_stream *s);
	int err;
};

static const struct test_bad_stream test_bad_streams[] = {
	{ "valid stream", mk_valid, 0 },
	{ "valid stream with optional records", mk_valid_optional, 0 },
	{ "empty stream", mk_empty, -ENODATA },
	{ "cut in the header", mk_cut_header, -ENODATA },
	{ "cut in a record header", mk_cut_record_header, -ENODATA },
	{ "cut in a payload", mk_cut_payload, -ENODATA },
	{ "cut in a CRC trailer", mk_cut_trailer, -ENODATA },
	{ "cut in a skipped record", mk_cut_skipped, -ENODATA },
	{ "cut before END", mk_no_end, -ENODATA },
	{ "bad magic", mk_bad_magic, -EINVAL },
	{ "version 0", mk_version_0, -EPROTO },
	{ "version 2", mk_version_2, -EPROTO },
	{ "version 2 with a version 1 CRC", mk_version_2_old_crc, -EPROTO },
	{ "header flags", mk_header_flags, -EPROTO },
	{ "header size", mk_header_size, -EINVAL },
	{ "release not terminated", mk_release_unterminated, -EINVAL },
	{ "release not NUL padded", mk_release_unpadded, -EINVAL },
	{ "header CRC, data flipped", mk_header_crc_data, -EBADMSG },
	{ "header CRC, CRC flipped", mk_header_crc_field, -EBADMSG },
	{ "record CRC, payload flipped", mk_record_crc_payload, -EBADMSG },
	{ "record CRC, trailer flipped", mk_record_crc_trailer, -EBADMSG },
	{ "record CRC, header changed", mk_record_crc_header, -EBADMSG },
	{ "skipped record CRC", mk_skipped_crc, -EBADMSG },
	{ "unknown mandatory record", mk_unknown_mandatory, -EOPNOTSUPP },
	{ "unknown record flag", mk_unknown_flags, -EINVAL },
	{ "unknown flag on optional record", mk_unknown_flags_optional, -EINVAL },
	{ "length over the maximum", mk_len_over_max, -EINVAL },
	{ "optional record of 4 GiB", mk_len_huge_optional, -EINVAL },
	{ "PROCESS too short", mk_process_short, -EINVAL },
	{ "PROCESS too long", mk_process_long, -EINVAL },
	{ "SIGNAL_PAGE too short", mk_page_short, -EINVAL },
	{ "SIGNAL_PAGE too long", mk_page_long, -EINVAL },
	{ "EVENT empty", mk_event_empty, -EINVAL },
	{ "END too short", mk_end_short, -EINVAL },
	{ "END counts one record more", mk_end_more_records, -EINVAL },
	{ "END counts one record less", mk_end_fewer_records, -EINVAL },
	{ "END payload bytes", mk_end_bytes, -EINVAL },
	{ "END payload bytes, high word", mk_end_bytes_high, -EINVAL },
	{ "END reserved", mk_end_reserved, -EINVAL },
	{ "END without skipped records", mk_end_without_skipped, -EINVAL },
	{ "byte after END", mk_trailing_byte, -EINVAL },
	{ "record after END", mk_record_after_end, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(test_bad_stream, test_bad_streams, desc);

static void test_malformed_stream(struct kunit *test)
{
	const struct test_bad_stream *p = test->param_value;
	struct test_stream *s = test->priv;
	struct kfd_criu_image_reader r;
	struct kfd_criu_record rec;

	p->make(test, s);
	KUNIT_EXPECT_EQ(test, test_read_image(s, &r, NULL), p->err);
	if (!p->err)
		return;
	/* The error is sticky, whatever the caller tries next. */
	KUNIT_EXPECT_EQ(test, r.error, p->err);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_read_record(&r, &rec, s->buf,
							 TEST_BUF_SIZE), p->err);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_expect_eof(&r), p->err);
}

static void test_truncated_everywhere(struct kunit *test)
{
	struct test_stream *s = test->priv;
	struct kfd_criu_image_reader r;
	size_t full, cut;

	test_write_valid(test, s, TEST_WITH_OPTIONAL);
	full = s->len;
	for (cut = 0; cut < full; cut++) {
		s->len = cut;
		KUNIT_EXPECT_EQ_MSG(test, test_read_image(s, &r, NULL), -ENODATA,
				    "stream cut after %zu of %zu bytes",
				    cut, full);
	}
	s->len = full;
	KUNIT_EXPECT_EQ(test, test_read_image(s, &r, NULL), 0);
}

/* Every byte is covered by a check: no single bit flip goes unnoticed. */
static void test_bit_flip_everywhere(struct kunit *test)
{
	struct test_stream *s = test->priv;
	struct kfd_criu_image_reader r;
	size_t off;
	u8 bit;

	test_write_valid(test, s, TEST_WITH_OPTIONAL);
	for (off = 0; off < s->len; off++) {
		bit = 1U << (off % 8);
		s->data[off] ^= bit;
		KUNIT_EXPECT_LT_MSG(test, test_read_image(s, &r, NULL), 0,
				    "flip of bit %u at byte %zu accepted",
				    (unsigned int)(off % 8), off);
		s->data[off] ^= bit;
	}
	KUNIT_EXPECT_EQ(test, test_read_image(s, &r, NULL), 0);
}

static void test_small_buffer(struct kunit *test)
{
	struct test_stream *s = test->priv;
	struct kfd_criu_image_reader r;
	struct kfd_criu_image_header hdr;
	struct kfd_criu_record rec;
	u8 small[sizeof(struct kfd_criu_process_rec) - 1];

	test_write_valid(test, s, 0);
	kfd_criu_image_reader_init(&r, &s->io, kfd_criu_v1_records,
				   kfd_criu_v1_num_records);
	KUNIT_ASSERT_EQ(test, kfd_criu_image_read_header(&r, &hdr), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_read_record(&r, &rec, small,
							 sizeof(small)), 0);
	KUNIT_EXPECT_EQ(test, rec.type, (u32)KFD_CRIU_REC_COMPAT);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_read_record(&r, &rec, small,
							 sizeof(small)),
			-EOVERFLOW);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_read_record(&r, &rec, s->buf,
							 TEST_BUF_SIZE),
			-EOVERFLOW);
}

static void test_reader_misuse(struct kunit *test)
{
	struct test_stream *s = test->priv;
	struct kfd_criu_image_reader r;
	struct kfd_criu_image_header hdr;
	struct kfd_criu_record rec;

	test_write_valid(test, s, 0);
	kfd_criu_image_reader_init(&r, &s->io, kfd_criu_v1_records,
				   kfd_criu_v1_num_records);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_read_record(&r, &rec, s->buf,
							 TEST_BUF_SIZE), -EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_read_header(&r, &hdr), -EINVAL);

	s->pos = 0;
	kfd_criu_image_reader_init(&r, &s->io, kfd_criu_v1_records,
				   kfd_criu_v1_num_records);
	KUNIT_ASSERT_EQ(test, kfd_criu_image_read_header(&r, &hdr), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_expect_eof(&r), -EINVAL);

	s->pos = 0;
	kfd_criu_image_reader_init(&r, &s->io, kfd_criu_v1_records,
				   kfd_criu_v1_num_records);
	KUNIT_ASSERT_EQ(test, kfd_criu_image_read_header(&r, &hdr), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_read_header(&r, &hdr), -EINVAL);
}

/* After END the reader refuses to go on, even if a valid record follows. */
static void test_read_after_end(struct kunit *test)
{
	struct test_stream *s = test->priv;
	struct kfd_criu_image_reader r;
	struct kfd_criu_record rec;

	mk_record_after_end(test, s);
	KUNIT_EXPECT_EQ(test, test_read_image(s, &r, NULL), -EINVAL);
	KUNIT_EXPECT_TRUE(test, r.ended);

	s->len -= KFD_CRIU_RECORD_OVERHEAD + sizeof(struct kfd_criu_compat_rec);
	KUNIT_ASSERT_EQ(test, test_read_image(s, &r, NULL), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_read_record(&r, &rec, s->buf,
							 TEST_BUF_SIZE), -EINVAL);
}

/*
 * Writer misuse
 */

static void test_writer_start(struct kunit *test, struct test_stream *s,
			      struct kfd_criu_image_writer *w)
{
	test_stream_reset(s);
	kfd_criu_image_writer_init(w, &s->io);
	KUNIT_ASSERT_EQ(test, kfd_criu_image_write_header(w, test_release), 0);
}

/* Opens a COMPAT record, the simplest record there is. */
static int test_begin_compat(struct kfd_criu_image_writer *w)
{
	return kfd_criu_image_begin_record(w, KFD_CRIU_REC_COMPAT, 0,
					   sizeof(struct kfd_criu_compat_rec));
}

static void test_writer_no_header(struct kunit *test)
{
	struct test_stream *s = test->priv;
	struct kfd_criu_image_writer w;
	u8 payload[8] = { 0 };
	int ret;

	kfd_criu_image_writer_init(&w, &s->io);
	ret = kfd_criu_image_write_record(&w, KFD_CRIU_REC_COMPAT, 0, payload,
					  sizeof(payload));
	KUNIT_EXPECT_EQ(test, ret, -EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_write_header(&w, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, s->len, (size_t)0);

	test_writer_start(test, s, &w);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_write_header(&w, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, s->len, sizeof(struct kfd_criu_image_header));
}

static void test_writer_data_past_length(struct kunit *test)
{
	struct test_stream *s = test->priv;
	struct kfd_criu_image_writer w;
	u8 payload[16] = { 0 };
	size_t len;

	test_writer_start(test, s, &w);
	KUNIT_ASSERT_EQ(test, test_begin_compat(&w), 0);
	KUNIT_ASSERT_EQ(test, kfd_criu_image_write_data(&w, payload, 4), 0);
	len = s->len;
	KUNIT_EXPECT_EQ(test, kfd_criu_image_write_data(&w, payload, 5),
			-EMSGSIZE);
	KUNIT_EXPECT_EQ(test, s->len, len);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_write_data(&w, payload, 4),
			-EMSGSIZE);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_finish_record(&w), -EMSGSIZE);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_write_end(&w), -EMSGSIZE);
	KUNIT_EXPECT_EQ(test, s->len, len);
}

static void test_writer_finish_short(struct kunit *test)
{
	struct test_stream *s = test->priv;
	struct kfd_criu_image_writer w;
	u8 payload[8] = { 0 };

	test_writer_start(test, s, &w);
	KUNIT_ASSERT_EQ(test, test_begin_compat(&w), 0);
	KUNIT_ASSERT_EQ(test, kfd_criu_image_write_data(&w, payload, 7), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_finish_record(&w), -ENODATA);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_write_end(&w), -ENODATA);
	KUNIT_EXPECT_EQ(test, w.records, 0U);
}

static void test_writer_nesting(struct kunit *test)
{
	struct test_stream *s = test->priv;
	struct kfd_criu_image_writer w;
	u8 payload[8] = { 0 };

	test_writer_start(test, s, &w);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_write_data(&w, payload, 1),
			-EINVAL);

	test_writer_start(test, s, &w);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_finish_record(&w), -EINVAL);

	test_writer_start(test, s, &w);
	KUNIT_ASSERT_EQ(test, test_begin_compat(&w), 0);
	KUNIT_EXPECT_EQ(test, test_begin_compat(&w), -EINVAL);

	test_writer_start(test, s, &w);
	KUNIT_ASSERT_EQ(test, test_begin_compat(&w), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_write_end(&w), -EINVAL);
}

static void test_writer_bad_arguments(struct kunit *test)
{
	struct test_stream *s = test->priv;
	struct kfd_criu_image_writer w;
	u8 payload[16] = { 0 };
	int ret;

	test_writer_start(test, s, &w);
	ret = kfd_criu_image_write_record(&w, KFD_CRIU_REC_END,
					  KFD_CRIU_RECORD_MANDATORY, payload,
					  sizeof(struct kfd_criu_end_rec));
	KUNIT_EXPECT_EQ(test, ret, -EINVAL);

	test_writer_start(test, s, &w);
	ret = kfd_criu_image_write_record(&w, KFD_CRIU_REC_COMPAT, BIT(1),
					  payload, 8);
	KUNIT_EXPECT_EQ(test, ret, -EINVAL);

	test_writer_start(test, s, &w);
	ret = kfd_criu_image_begin_record(&w, KFD_CRIU_REC_SIGNAL_PAGE, 0,
					  KFD_CRIU_MAX_RECORD_LEN + 1);
	KUNIT_EXPECT_EQ(test, ret, -EINVAL);
	KUNIT_EXPECT_EQ(test, s->len, sizeof(struct kfd_criu_image_header));
}

static void test_writer_after_end(struct kunit *test)
{
	struct test_stream *s = test->priv;
	struct kfd_criu_image_writer w;
	u8 payload[8] = { 0 };
	size_t len;
	int ret;

	test_writer_start(test, s, &w);
	KUNIT_ASSERT_EQ(test, kfd_criu_image_write_end(&w), 0);
	len = s->len;
	ret = kfd_criu_image_write_record(&w, KFD_CRIU_REC_COMPAT, 0, payload,
					  sizeof(payload));
	KUNIT_EXPECT_EQ(test, ret, -EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_write_end(&w), -EINVAL);
	KUNIT_EXPECT_EQ(test, s->len, len);
}

static void test_writer_failing_sink(struct kunit *test)
{
	struct test_stream *s = test->priv;
	struct kfd_criu_image_writer w;
	struct test_image *img;
	size_t full, limit;
	int ret;

	img = kunit_kzalloc(test, sizeof(*img), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, img);
	test_fill_image(img);
	test_write_image(test, s, img, TEST_WITH_OPTIONAL);
	full = s->len;

	for (limit = 0; limit < full; limit++) {
		test_stream_reset(s);
		s->limit = limit;
		kfd_criu_image_writer_init(&w, &s->io);
		ret = test_emit_image(&w, img, TEST_WITH_OPTIONAL);
		KUNIT_EXPECT_EQ_MSG(test, ret, -ENOSPC,
				    "sink full after %zu bytes", limit);
		KUNIT_EXPECT_EQ(test, w.error, -ENOSPC);
	}
}

/*
 * Validators
 */

struct test_compat_case {
	const char *desc;
	u32 num_gpus;
	u32 reserved;
	int err;
};

static const struct test_compat_case test_compat_cases[] = {
	{ "no GPUs", 0, 0, 0 },
	{ "one GPU", 1, 0, 0 },
	{ "most GPUs", KFD_CRIU_MAX_GPUS, 0, 0 },
	{ "too many GPUs", KFD_CRIU_MAX_GPUS + 1, 0, -EINVAL },
	{ "~0 GPUs", ~0U, 0, -EINVAL },
	{ "reserved set", 0, 1, -EINVAL },
	{ "GPUs and reserved set", 2, 0x80000000, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(test_compat, test_compat_cases, desc);

static void test_validate_compat(struct kunit *test)
{
	const struct test_compat_case *p = test->param_value;
	struct kfd_criu_compat_rec rec = {
		.num_gpus = cpu_to_le32(p->num_gpus),
		.reserved = cpu_to_le32(p->reserved),
	};

	KUNIT_EXPECT_EQ(test, kfd_criu_validate_compat(&rec), p->err);
}

/* One __le32 (or the low half of a __le64) changed in a valid record. */
struct test_field_case {
	const char *desc;
	unsigned int base;
	size_t field;
	u32 value;
	int err;
};

#define PROC_FIELD(f)	offsetof(struct kfd_criu_process_rec, f)

static const struct test_field_case test_process_cases[] = {
	{ "valid", 0, TEST_NO_FIELD, 0, 0 },
	{ "xnack off", 0, PROC_FIELD(xnack_enabled), 0, 0 },
	{ "xnack 2", 0, PROC_FIELD(xnack_enabled), 2, -EINVAL },
	{ "runtime disabled", 0, PROC_FIELD(runtime_state),
	  DEBUG_RUNTIME_STATE_DISABLED, 0 },
	{ "runtime busy", 0, PROC_FIELD(runtime_state),
	  DEBUG_RUNTIME_STATE_ENABLED_BUSY, 0 },
	{ "runtime error", 0, PROC_FIELD(runtime_state),
	  DEBUG_RUNTIME_STATE_ENABLED_ERROR, 0 },
	{ "runtime state 4", 0, PROC_FIELD(runtime_state), 4, -EINVAL },
	{ "runtime state ~0", 0, PROC_FIELD(runtime_state), ~0U, -EINVAL },
	{ "r_debug any value", 0, PROC_FIELD(r_debug), ~0U, 0 },
	{ "ttmp off", 0, PROC_FIELD(ttmp_setup), 0, 0 },
	{ "ttmp 2", 0, PROC_FIELD(ttmp_setup), 2, -EINVAL },
	{ "no events", 0, PROC_FIELD(num_events), 0, 0 },
	{ "most events", 0, PROC_FIELD(num_events), KFD_CRIU_MAX_EVENTS, 0 },
	{ "too many events", 0, PROC_FIELD(num_events),
	  KFD_CRIU_MAX_EVENTS + 1, -EINVAL },
	{ "~0 events", 0, PROC_FIELD(num_events), ~0U, -EINVAL },
	{ "no signal page", 0, PROC_FIELD(signal_page_size), 0, 0 },
	{ "one slot", 0, PROC_FIELD(signal_page_size), 8, 0 },
	{ "largest page", 0, PROC_FIELD(signal_page_size),
	  KFD_CRIU_SIGNAL_PAGE_MAX, 0 },
	{ "page of 4 bytes", 0, PROC_FIELD(signal_page_size), 4, -EINVAL },
	{ "page of 12 bytes", 0, PROC_FIELD(signal_page_size), 12, -EINVAL },
	{ "page too large", 0, PROC_FIELD(signal_page_size),
	  KFD_CRIU_SIGNAL_PAGE_MAX + 8, -EINVAL },
	{ "page of 2 GiB", 0, PROC_FIELD(signal_page_size), 0x80000000,
	  -EINVAL },
	{ "no BOs", 0, PROC_FIELD(num_bos), 0, 0 },
	{ "one BO", 0, PROC_FIELD(num_bos), 1, 0 },
	{ "most BOs", 0, PROC_FIELD(num_bos), KFD_CRIU_MAX_BOS, 0 },
	{ "too many BOs", 0, PROC_FIELD(num_bos), KFD_CRIU_MAX_BOS + 1,
	  -EINVAL },
	{ "~0 BOs", 0, PROC_FIELD(num_bos), ~0U, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(test_process, test_process_cases, desc);

static void test_validate_process(struct kunit *test)
{
	const struct test_field_case *p = test->param_value;
	struct kfd_criu_process_rec proc;

	test_fill_process(&proc);
	if (p->field != TEST_NO_FIELD) {
		__le32 v = cpu_to_le32(p->value);

		memcpy((u8 *)&proc + p->field, &v, sizeof(v));
	}
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_process(&proc), p->err);
}

/* Bases: the events of test_fill_events(), then one of another type. */
#define EV_SIGNAL	0
#define EV_DEBUG	1
#define EV_MEMORY	2
#define EV_HW		3
#define EV_OTHER	4
#define EV_FIELD(f)	offsetof(struct kfd_criu_event_rec, f)
#define EV_FIRST	KFD_CRIU_FIRST_NONSIGNAL_EVENT_ID
#define EV_LAST		KFD_CRIU_LAST_NONSIGNAL_EVENT_ID

static const struct test_field_case test_event_cases[] = {
	{ "signal", EV_SIGNAL, TEST_NO_FIELD, 0, 0 },
	{ "debug", EV_DEBUG, TEST_NO_FIELD, 0, 0 },
	{ "memory", EV_MEMORY, TEST_NO_FIELD, 0, 0 },
	{ "hw exception", EV_HW, TEST_NO_FIELD, 0, 0 },
	{ "node change", EV_OTHER, TEST_NO_FIELD, 0, 0 },
	{ "device state change", EV_OTHER, EV_FIELD(type),
	  KFD_IOC_EVENT_DEVICESTATECHANGE, 0 },
	{ "system event", EV_OTHER, EV_FIELD(type),
	  KFD_IOC_EVENT_SYSTEM_EVENT, 0 },
	{ "profile event", EV_OTHER, EV_FIELD(type),
	  KFD_IOC_EVENT_PROFILE_EVENT, 0 },
	{ "queue event", EV_OTHER, EV_FIELD(type), KFD_IOC_EVENT_QUEUE_EVENT, 0 },
	{ "type 9", EV_OTHER, EV_FIELD(type), KFD_IOC_EVENT_MEMORY + 1, -EINVAL },
	{ "type ~0", EV_OTHER, EV_FIELD(type), ~0U, -EINVAL },
	{ "signal type with a non-signal id", EV_OTHER, EV_FIELD(type),
	  KFD_IOC_EVENT_SIGNAL, -EINVAL },
	{ "signal id 0", EV_SIGNAL, EV_FIELD(event_id), 0, -EINVAL },
	{ "signal id 4095", EV_SIGNAL, EV_FIELD(event_id), 4095, 0 },
	{ "signal id 4096", EV_SIGNAL, EV_FIELD(event_id), 4096, -EINVAL },
	{ "signal id non-signal", EV_SIGNAL, EV_FIELD(event_id), EV_FIRST,
	  -EINVAL },
	{ "debug id 0", EV_DEBUG, EV_FIELD(event_id), 0, -EINVAL },
	{ "debug id 4096", EV_DEBUG, EV_FIELD(event_id), 4096, -EINVAL },
	{ "memory id 1", EV_MEMORY, EV_FIELD(event_id), 1, -EINVAL },
	{ "memory id below range", EV_MEMORY, EV_FIELD(event_id), EV_FIRST - 1,
	  -EINVAL },
	{ "memory id last", EV_MEMORY, EV_FIELD(event_id), EV_LAST, 0 },
	{ "memory id above range", EV_MEMORY, EV_FIELD(event_id), EV_LAST + 1,
	  -EINVAL },
	{ "hw id ~0", EV_HW, EV_FIELD(event_id), ~0U, -EINVAL },
	{ "auto reset 2", EV_SIGNAL, EV_FIELD(auto_reset), 2, -EINVAL },
	{ "signaled 2", EV_SIGNAL, EV_FIELD(signaled), 2, -EINVAL },
	{ "any age", EV_SIGNAL, EV_FIELD(event_age), ~0U, 0 },
	{ "reserved", EV_SIGNAL, EV_FIELD(reserved), 1, -EINVAL },
	{ "reserved2", EV_MEMORY, EV_FIELD(reserved2), 1, -EINVAL },
	{ "signal with mem_va", EV_SIGNAL, EV_FIELD(mem_va), 1, -EINVAL },
	{ "signal with mem_va high", EV_SIGNAL, EV_FIELD(mem_va) + 4, 1,
	  -EINVAL },
	{ "signal with mem_gpu_id", EV_SIGNAL, EV_FIELD(mem_gpu_id), 1, -EINVAL },
	{ "signal with mem_error_type", EV_SIGNAL, EV_FIELD(mem_error_type), 1,
	  -EINVAL },
	{ "signal with mem_not_present", EV_SIGNAL, EV_FIELD(mem_not_present),
	  1, -EINVAL },
	{ "signal with mem_read_only", EV_SIGNAL, EV_FIELD(mem_read_only), 1,
	  -EINVAL },
	{ "signal with mem_no_execute", EV_SIGNAL, EV_FIELD(mem_no_execute), 1,
	  -EINVAL },
	{ "signal with mem_imprecise", EV_SIGNAL, EV_FIELD(mem_imprecise), 1,
	  -EINVAL },
	{ "signal with hw_reset_type", EV_SIGNAL, EV_FIELD(hw_reset_type), 1,
	  -EINVAL },
	{ "signal with hw_reset_cause", EV_SIGNAL, EV_FIELD(hw_reset_cause), 1,
	  -EINVAL },
	{ "signal with hw_memory_lost", EV_SIGNAL, EV_FIELD(hw_memory_lost), 1,
	  -EINVAL },
	{ "signal with hw_gpu_id", EV_SIGNAL, EV_FIELD(hw_gpu_id), 1, -EINVAL },
	{ "other with mem_va", EV_OTHER, EV_FIELD(mem_va), 1, -EINVAL },
	{ "other with hw_gpu_id", EV_OTHER, EV_FIELD(hw_gpu_id), 1, -EINVAL },
	{ "memory with hw_gpu_id", EV_MEMORY, EV_FIELD(hw_gpu_id), 1, -EINVAL },
	{ "memory with hw_memory_lost", EV_MEMORY, EV_FIELD(hw_memory_lost), 1,
	  -EINVAL },
	{ "hw with mem_va", EV_HW, EV_FIELD(mem_va), 1, -EINVAL },
	{ "hw with mem_gpu_id", EV_HW, EV_FIELD(mem_gpu_id), 1, -EINVAL },
	{ "memory any gpu_id", EV_MEMORY, EV_FIELD(mem_gpu_id), ~0U, 0 },
	{ "memory error gpu hang", EV_MEMORY, EV_FIELD(mem_error_type),
	  KFD_MEM_ERR_GPU_HANG, 0 },
	{ "memory error type 4", EV_MEMORY, EV_FIELD(mem_error_type),
	  KFD_MEM_ERR_GPU_HANG + 1, -EINVAL },
	{ "memory not_present 2", EV_MEMORY, EV_FIELD(mem_not_present), 2,
	  -EINVAL },
	{ "memory read_only 2", EV_MEMORY, EV_FIELD(mem_read_only), 2, -EINVAL },
	{ "memory no_execute 2", EV_MEMORY, EV_FIELD(mem_no_execute), 2,
	  -EINVAL },
	{ "memory imprecise 2", EV_MEMORY, EV_FIELD(mem_imprecise), 2, -EINVAL },
	{ "hw whole gpu reset", EV_HW, EV_FIELD(hw_reset_type),
	  KFD_HW_EXCEPTION_WHOLE_GPU_RESET, 0 },
	{ "hw reset type 2", EV_HW, EV_FIELD(hw_reset_type), 2, -EINVAL },
	{ "hw reset cause hang", EV_HW, EV_FIELD(hw_reset_cause),
	  KFD_HW_EXCEPTION_GPU_HANG, 0 },
	{ "hw reset cause 2", EV_HW, EV_FIELD(hw_reset_cause), 2, -EINVAL },
	{ "hw memory lost 2", EV_HW, EV_FIELD(hw_memory_lost), 2, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(test_event, test_event_cases, desc);

static void test_event_base(struct kfd_criu_event_rec *ev, unsigned int base)
{
	struct kfd_criu_event_rec all[TEST_NUM_EVENTS] = { };

	memset(ev, 0, sizeof(*ev));
	if (base < TEST_NUM_EVENTS) {
		test_fill_events(all);
		*ev = all[base];
		return;
	}
	ev->event_id = cpu_to_le32(KFD_CRIU_LAST_NONSIGNAL_EVENT_ID);
	ev->type = cpu_to_le32(KFD_IOC_EVENT_NODECHANGE);
}

static void test_validate_event(struct kunit *test)
{
	const struct test_field_case *p = test->param_value;
	struct kfd_criu_event_rec ev;

	test_event_base(&ev, p->base);
	if (p->field != TEST_NO_FIELD) {
		__le32 v = cpu_to_le32(p->value);

		memcpy((u8 *)&ev + p->field, &v, sizeof(v));
	}
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_event(&ev), p->err);
}

struct test_slot_case {
	const char *desc;
	u32 page_size;
	u32 type;
	u32 id;
	int err;
};

static const struct test_slot_case test_slot_cases[] = {
	{ "slot inside the page", 64, KFD_IOC_EVENT_SIGNAL, 7, 0 },
	{ "slot past the page", 64, KFD_IOC_EVENT_SIGNAL, 8, -EINVAL },
	{ "debug slot past the page", 64, KFD_IOC_EVENT_DEBUG_EVENT, 8, -EINVAL },
	{ "signal without a page", 0, KFD_IOC_EVENT_SIGNAL, 1, -EINVAL },
	{ "memory without a page", 0, KFD_IOC_EVENT_MEMORY, EV_FIRST, 0 },
	{ "last slot of the largest page", KFD_CRIU_SIGNAL_PAGE_MAX,
	  KFD_IOC_EVENT_SIGNAL, KFD_SIGNAL_EVENT_LIMIT - 1, 0 },
};

KUNIT_ARRAY_PARAM_DESC(test_slot, test_slot_cases, desc);

static void test_validate_event_slot(struct kunit *test)
{
	const struct test_slot_case *p = test->param_value;
	struct kfd_criu_process_rec proc = {
		.signal_page_size = cpu_to_le32(p->page_size),
	};
	struct kfd_criu_event_rec ev = {
		.event_id = cpu_to_le32(p->id),
		.type = cpu_to_le32(p->type),
	};

	KUNIT_EXPECT_EQ(test, kfd_criu_validate_event_slot(&proc, &ev), p->err);
}

struct test_ids_case {
	const char *desc;
	u32 ids[6];
	u32 num;
	int err;
};

static const struct test_ids_case test_ids_cases[] = {
	{ "no events", { 0 }, 0, 0 },
	{ "one event", { 1 }, 1, 0 },
	{ "ascending", { 1, 2, 7, EV_FIRST, EV_FIRST + 5, EV_LAST }, 6, 0 },
	{ "duplicate signal id", { 1, 2, 2, 3 }, 4, -EEXIST },
	{ "duplicate last id", { 1, EV_FIRST, EV_LAST, EV_LAST }, 4, -EEXIST },
	{ "descending", { 2, 1 }, 2, -EINVAL },
	{ "duplicate, not neighbours", { 1, 5, 1 }, 3, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(test_ids, test_ids_cases, desc);

static void test_event_ids(struct kunit *test)
{
	const struct test_ids_case *p = test->param_value;
	struct kfd_criu_event_rec *ev;
	u32 i;

	ev = kunit_kcalloc(test, ARRAY_SIZE(p->ids), sizeof(*ev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ev);
	for (i = 0; i < p->num; i++)
		ev[i].event_id = cpu_to_le32(p->ids[i]);
	KUNIT_EXPECT_EQ(test, kfd_criu_check_event_ids(ev, p->num), p->err);
}

static void test_free_events(void *events)
{
	kvfree(events);
}

/* The most events an image may carry, checked in one linear pass. */
static void test_event_ids_most(struct kunit *test)
{
	const u32 n = KFD_CRIU_MAX_EVENTS;
	struct kfd_criu_event_rec *ev;
	u32 i;

	ev = kvcalloc(n + 1, sizeof(*ev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ev);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, test_free_events,
							ev), 0);
	for (i = 0; i <= n; i++)
		ev[i].event_id = cpu_to_le32(EV_FIRST + i);

	KUNIT_EXPECT_EQ(test, kfd_criu_check_event_ids(ev, n), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_check_event_ids(ev, n + 1), -EINVAL);
	ev[n - 1].event_id = ev[n - 2].event_id;
	KUNIT_EXPECT_EQ(test, kfd_criu_check_event_ids(ev, n), -EEXIST);
	ev[n / 2].event_id = cpu_to_le32(EV_FIRST);
	KUNIT_EXPECT_EQ(test, kfd_criu_check_event_ids(ev, n), -EINVAL);
}

static struct kunit_case kfd_criu_image_cases[] = {
	KUNIT_CASE(test_crc32c),
	KUNIT_CASE(test_layout),
	KUNIT_CASE(test_release_string),
	KUNIT_CASE(test_round_trip),
	KUNIT_CASE(test_streamed_payload),
	KUNIT_CASE(test_unknown_optional_skipped),
	KUNIT_CASE_PARAM(test_malformed_stream, test_bad_stream_gen_params),
	KUNIT_CASE(test_truncated_everywhere),
	KUNIT_CASE(test_bit_flip_everywhere),
	KUNIT_CASE(test_small_buffer),
	KUNIT_CASE(test_reader_misuse),
	KUNIT_CASE(test_read_after_end),
	KUNIT_CASE(test_writer_no_header),
	KUNIT_CASE(test_writer_data_past_length),
	KUNIT_CASE(test_writer_finish_short),
	KUNIT_CASE(test_writer_nesting),
	KUNIT_CASE(test_writer_bad_arguments),
	KUNIT_CASE(test_writer_after_end),
	KUNIT_CASE(test_writer_failing_sink),
	KUNIT_CASE_PARAM(test_validate_compat, test_compat_gen_params),
	KUNIT_CASE_PARAM(test_validate_process, test_process_gen_params),
	KUNIT_CASE_PARAM(test_validate_event, test_event_gen_params),
	KUNIT_CASE_PARAM(test_validate_event_slot, test_slot_gen_params),
	KUNIT_CASE_PARAM(test_event_ids, test_ids_gen_params),
	KUNIT_CASE(test_event_ids_most),
	{}
};

static struct kunit_suite kfd_criu_image_suite = {
	.name = "kfd_criu_image",
	.init = test_init,
	.test_cases = kfd_criu_image_cases,
};

kunit_test_suite(kfd_criu_image_suite);
