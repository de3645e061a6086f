// SPDX-License-Identifier: GPL-2.0 OR MIT

/**
 * DOC: KUnit tests for the KFD CRIU image codec
 *
 * Included at the end of kfd_criu_image.c, so the tests reach its static
 * helpers. Streams live in memory: &struct test_stream is both the sink
 * and the source. The same file also runs in userspace through a small
 * KUnit-compatible shim, so it sticks to the common part of the KUnit
 * API.
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
	{ "age 0", EV_SIGNAL, EV_FIELD(event_age), 0, 0 },
	{ "age low word ~0", EV_SIGNAL, EV_FIELD(event_age), ~0U, 0 },
	{ "age below the bound", EV_SIGNAL, EV_FIELD(event_age) + 4,
	  0x3fffffff, 0 },
	/* The base age is 3: these add 2^62 and all ones in the high word */
	{ "age 2^62 + 3", EV_SIGNAL, EV_FIELD(event_age) + 4,
	  0x40000000, -EINVAL },
	{ "age high word ~0", EV_SIGNAL, EV_FIELD(event_age) + 4, ~0U, -EINVAL },
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

/* The exact edge of the age bound, which the 32-bit field table cannot set */
static void test_validate_event_age_bound(struct kunit *test)
{
	struct kfd_criu_event_rec ev;

	test_event_base(&ev, EV_SIGNAL);
	ev.event_age = cpu_to_le64(KFD_CRIU_MAX_EVENT_AGE);
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_event(&ev), 0);
	ev.event_age = cpu_to_le64(KFD_CRIU_MAX_EVENT_AGE + 1);
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_event(&ev), -EINVAL);
	ev.event_age = cpu_to_le64(U64_MAX);
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_event(&ev), -EINVAL);
	/* A dump carries the age a restored event reached, past the bound */
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_event_state(&ev), 0);
	ev.type = cpu_to_le32(KFD_IOC_EVENT_MEMORY + 1);
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_event_state(&ev), -EINVAL);
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

/*
 * GPUs
 */

#define TEST_GFX_VERSION	90402
#define TEST_VRAM		(192ULL << 30)
#define TEST_MEC_FW		155
#define TEST_SDMA_FW		19
#define TEST_GPU_A		0x1001
#define TEST_GPU_B		0x2002
#define TEST_GPU_C		0x3003
#define TEST_GPU_NONE		0x9999

/* A GPU record of the model the tests use, with @gpu_id. */
static void test_fill_gpu(struct kfd_criu_gpu_rec *gpu, u32 gpu_id)
{
	memset(gpu, 0, sizeof(*gpu));
	gpu->gpu_id = cpu_to_le32(gpu_id);
	gpu->gfx_target_version = cpu_to_le32(TEST_GFX_VERSION);
	gpu->device_id = cpu_to_le32(0x74a1);
	gpu->revision_id = cpu_to_le32(0);
	gpu->num_xcc = cpu_to_le32(8);
	gpu->partition_mode = cpu_to_le32(1);
	gpu->vram_size = cpu_to_le64(TEST_VRAM);
	gpu->cwsr_size = cpu_to_le32(0x9000);
	gpu->ctl_stack_size = cpu_to_le32(0x4000);
	gpu->mec_fw_version = cpu_to_le32(TEST_MEC_FW);
	gpu->sdma_fw_version = cpu_to_le32(TEST_SDMA_FW);
}

#define GPU_FIELD(f)	offsetof(struct kfd_criu_gpu_rec, f)

static const struct test_field_case test_gpu_cases[] = {
	{ "valid", 0, TEST_NO_FIELD, 0, 0 },
	{ "gpu_id 0", 0, GPU_FIELD(gpu_id), 0, -EINVAL },
	{ "gpu_id ~0", 0, GPU_FIELD(gpu_id), ~0U, 0 },
	{ "no XCC", 0, GPU_FIELD(num_xcc), 0, -EINVAL },
	{ "one XCC", 0, GPU_FIELD(num_xcc), 1, 0 },
	{ "most XCCs", 0, GPU_FIELD(num_xcc), KFD_CRIU_MAX_XCC, 0 },
	{ "too many XCCs", 0, GPU_FIELD(num_xcc), KFD_CRIU_MAX_XCC + 1,
	  -EINVAL },
	{ "~0 XCCs", 0, GPU_FIELD(num_xcc), ~0U, -EINVAL },
	{ "no VRAM", 0, GPU_FIELD(vram_size), 0, 0 },
	{ "no CWSR", 0, GPU_FIELD(flags), KFD_CRIU_GPU_NO_CWSR, 0 },
	{ "unknown flag", 0, GPU_FIELD(flags), KFD_CRIU_GPU_NO_CWSR << 1,
	  -EINVAL },
	{ "top flag", 0, GPU_FIELD(flags), 0x80000000 | KFD_CRIU_GPU_NO_CWSR,
	  -EINVAL },
	{ "scratch backing VA set", 0, GPU_FIELD(scratch_backing_va),
	  0x80000000, 0 },
};

KUNIT_ARRAY_PARAM_DESC(test_gpu, test_gpu_cases, desc);

static void test_validate_gpu(struct kunit *test)
{
	const struct test_field_case *p = test->param_value;
	struct kfd_criu_gpu_rec gpu;

	test_fill_gpu(&gpu, TEST_GPU_A);
	if (p->field != TEST_NO_FIELD) {
		__le32 v = cpu_to_le32(p->value);

		memcpy((u8 *)&gpu + p->field, &v, sizeof(v));
	}
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_gpu(&gpu), p->err);
}

/* A trap handler record that differs from a valid one in one field. */
struct test_trap_case {
	const char *desc;
	u32 gpu_index;
	u32 reserved;
	u64 tba;
	u64 tma;
	int err;
};

static const struct test_trap_case test_trap_cases[] = {
	{ "valid", 1, 0, 0x7f0000001000ULL, 0x7f0000002000ULL, 0 },
	{ "code only", 0, 0, 0x1000, 0, 0 },
	{ "memory only", 0, 0, 0, 0x1000, 0 },
	{ "neither", 0, 0, 0, 0, -EINVAL },
	{ "last GPU", 2, 0, 0x1000, 0x2000, 0 },
	{ "GPU out of range", 3, 0, 0x1000, 0x2000, -EINVAL },
	{ "reserved set", 0, 1, 0x1000, 0x2000, -EINVAL },
	{ "code unaligned", 0, 0, 0x1002, 0x2000, -EINVAL },
	{ "memory unaligned", 0, 0, 0x1000, 0x2001, 0 },
	{ "code at the VA limit", 0, 0, KFD_CRIU_MAX_VA, 0x2000, -EINVAL },
	{ "memory at the VA limit", 0, 0, 0x1000, KFD_CRIU_MAX_VA, -EINVAL },
	{ "code below the VA limit", 0, 0, KFD_CRIU_MAX_VA - 4, 0, 0 },
};

KUNIT_ARRAY_PARAM_DESC(test_trap, test_trap_cases, desc);

static void test_fill_trap(struct kfd_criu_trap_rec *rec,
			   const struct test_trap_case *p)
{
	rec->gpu_index = cpu_to_le32(p->gpu_index);
	rec->reserved = cpu_to_le32(p->reserved);
	rec->tba_addr = cpu_to_le64(p->tba);
	rec->tma_addr = cpu_to_le64(p->tma);
}

static void test_validate_trap(struct kunit *test)
{
	const struct test_trap_case *p = test->param_value;
	struct kfd_criu_trap_rec rec;

	test_fill_trap(&rec, p);
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_trap(&rec, 3), p->err);
	/* Alone, a valid record is a valid set */
	KUNIT_EXPECT_EQ(test, kfd_criu_check_traps(&rec, 1, 3), p->err);
}

/* One record per GPU, ascending; never more records than GPUs. */
static void test_check_traps(struct kunit *test)
{
	struct kfd_criu_trap_rec traps[3];
	u32 i;

	for (i = 0; i < 3; i++)
		test_fill_trap(&traps[i], &(struct test_trap_case){
			.gpu_index = i, .tba = 0x1000 * (i + 1) });
	KUNIT_EXPECT_EQ(test, kfd_criu_check_traps(traps, 3, 3), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_check_traps(traps, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_check_traps(traps, 3, 2), -EINVAL);
	traps[2].gpu_index = cpu_to_le32(1);
	KUNIT_EXPECT_EQ(test, kfd_criu_check_traps(traps, 3, 3), -EINVAL);
	traps[2].gpu_index = cpu_to_le32(0);
	KUNIT_EXPECT_EQ(test, kfd_criu_check_traps(traps, 3, 3), -EINVAL);
	/* Skipping a GPU is fine */
	traps[1].gpu_index = cpu_to_le32(2);
	KUNIT_EXPECT_EQ(test, kfd_criu_check_traps(traps, 2, 3), 0);
	traps[1].tma_addr = cpu_to_le64(KFD_CRIU_MAX_VA);
	KUNIT_EXPECT_EQ(test, kfd_criu_check_traps(traps, 2, 3), -EINVAL);
}

/* The local GPU differs from the image's in one field, by @delta. */
struct test_compatible_case {
	const char *desc;
	size_t field;
	size_t size;
	s64 delta;
	const char *why;
};

static const struct test_compatible_case test_compatible_cases[] = {
	{ "same GPU", TEST_NO_FIELD, 0, 0, NULL },
	{ "other gpu_id", GPU_FIELD(gpu_id), 4, 1, NULL },
	{ "other gfx minor version", GPU_FIELD(gfx_target_version), 4, 100,
	  "gfx_target_version" },
	{ "older gfx minor version", GPU_FIELD(gfx_target_version), 4, -100,
	  "gfx_target_version" },
	{ "other gfx major version", GPU_FIELD(gfx_target_version), 4, 10000,
	  "gfx_target_version" },
	/*
	 * 90401 and 90400: the numbers of a GC 9.4.3 (90402 here) before
	 * upstream commit daafa303d19f; another stepping is another target.
	 */
	{ "GC 9.4.3 renumbered, dGPU", GPU_FIELD(gfx_target_version), 4, -1,
	  NULL },
	{ "GC 9.4.3 renumbered, APU", GPU_FIELD(gfx_target_version), 4, -2,
	  NULL },
	{ "other gfx stepping", GPU_FIELD(gfx_target_version), 4, 1,
	  "gfx_target_version" },
	{ "other device", GPU_FIELD(device_id), 4, 1, "device_id" },
	{ "other revision", GPU_FIELD(revision_id), 4, 1, "revision_id" },
	{ "more XCCs", GPU_FIELD(num_xcc), 4, 1, "num_xcc" },
	{ "other partition mode", GPU_FIELD(partition_mode), 4, 1,
	  "partition_mode" },
	{ "larger CWSR area", GPU_FIELD(cwsr_size), 4, 0x1000, "cwsr_size" },
	{ "smaller control stack", GPU_FIELD(ctl_stack_size), 4, -0x1000,
	  "ctl_stack_size" },
	{ "more VRAM", GPU_FIELD(vram_size), 8, 1, NULL },
	{ "less VRAM", GPU_FIELD(vram_size), 8, -1, "vram_size" },
	{ "newer MEC firmware", GPU_FIELD(mec_fw_version), 4, 1, NULL },
	{ "older MEC firmware", GPU_FIELD(mec_fw_version), 4, -1,
	  "mec_fw_version" },
	{ "newer SDMA firmware", GPU_FIELD(sdma_fw_version), 4, 1, NULL },
	{ "older SDMA firmware", GPU_FIELD(sdma_fw_version), 4, -1,
	  "sdma_fw_version" },
	{ "CWSR only in the image", GPU_FIELD(flags), 4, KFD_CRIU_GPU_NO_CWSR,
	  "cwsr_enable" },
	{ "scratch backing VA differs", GPU_FIELD(scratch_backing_va), 4, 1,
	  NULL },
};

KUNIT_ARRAY_PARAM_DESC(test_compatible, test_compatible_cases, desc);

static void test_change_field(void *rec, size_t field, size_t size,
			      s64 delta)
{
	__le64 v64;
	__le32 v32;

	if (size == 8) {
		memcpy(&v64, (u8 *)rec + field, 8);
		v64 = cpu_to_le64(le64_to_cpu(v64) + (u64)delta);
		memcpy((u8 *)rec + field, &v64, 8);
	} else {
		memcpy(&v32, (u8 *)rec + field, 4);
		v32 = cpu_to_le32(le32_to_cpu(v32) + (u32)delta);
		memcpy((u8 *)rec + field, &v32, 4);
	}
}

static void test_gpu_incompatible(struct kunit *test)
{
	const struct test_compatible_case *p = test->param_value;
	struct kfd_criu_gpu_rec image, local;
	const char *why;

	test_fill_gpu(&image, TEST_GPU_A);
	local = image;
	if (p->field != TEST_NO_FIELD)
		test_change_field(&local, p->field, p->size, p->delta);
	why = kfd_criu_gpu_incompatible(&image, &local);
	if (!p->why) {
		KUNIT_EXPECT_TRUE_MSG(test, !why, "refused for %s", why);
		return;
	}
	KUNIT_ASSERT_NOT_NULL(test, why);
	KUNIT_EXPECT_STREQ(test, why, p->why);
}

/* Saved without CWSR: only a GPU without CWSR takes the image. */
static void test_gpu_incompatible_no_cwsr_image(struct kunit *test)
{
	struct kfd_criu_gpu_rec image, local;
	const char *why;

	test_fill_gpu(&image, TEST_GPU_A);
	image.flags = cpu_to_le32(KFD_CRIU_GPU_NO_CWSR);
	local = image;
	KUNIT_EXPECT_TRUE(test, !kfd_criu_gpu_incompatible(&image, &local));
	local.flags = 0;
	why = kfd_criu_gpu_incompatible(&image, &local);
	KUNIT_ASSERT_NOT_NULL(test, why);
	KUNIT_EXPECT_STREQ(test, why, "cwsr_enable");
}

/*
 * Local GPU models: the image's, one field worse, or the image's with
 * the gfx target version another kernel gives it.
 */
enum test_model {
	TEST_SAME,
	TEST_LESS_VRAM,
	TEST_OLD_FW,
	TEST_OTHER_GFX,
	TEST_OTHER_STEPPING,
};

#define TEST_MAX_MAP	4

struct test_map_gpus_case {
	const char *desc;
	u32 image[TEST_MAX_MAP];
	u32 num_image;
	u32 local[TEST_MAX_MAP];
	enum test_model model[TEST_MAX_MAP];
	u32 num_local;
	struct kfd_criu_gpu_map map[TEST_MAX_MAP];
	u32 num_map;
	int err;
	u32 target[TEST_MAX_MAP];
	struct kfd_criu_gpu_mismatch why;
};

#define MAP(image, local, fd)	\
	{ .image_gpu_id = (image), .local_gpu_id = (local), .drm_fd = (fd) }
#define MISMATCH(image, local, why)	\
	{ .image_gpu_id = (image), .local_gpu_id = (local), .field = (why) }
#define A	TEST_GPU_A
#define B	TEST_GPU_B
#define C	TEST_GPU_C

static const struct test_map_gpus_case test_map_gpus_cases[] = {
	{ .desc = "same GPU",
	  .image = { A }, .num_image = 1,
	  .local = { A }, .num_local = 1,
	  .target = { 0 } },
	{ .desc = "same GPU, drm_fd only entry",
	  .image = { A }, .num_image = 1,
	  .local = { A }, .num_local = 1,
	  .map = { MAP(0, A, 3) }, .num_map = 1,
	  .target = { 0 } },
	{ .desc = "other gpu_id through the map",
	  .image = { A }, .num_image = 1,
	  .local = { B }, .num_local = 1,
	  .map = { MAP(A, B, 3) }, .num_map = 1,
	  .target = { 0 } },
	{ .desc = "other gpu_id without a map",
	  .image = { A }, .num_image = 1,
	  .local = { B }, .num_local = 1,
	  .err = -ENODEV, .why = MISMATCH(A, 0, "no such GPU") },
	{ .desc = "default by gpu_id, other order",
	  .image = { A, B }, .num_image = 2,
	  .local = { C, B, A }, .num_local = 3,
	  .target = { 2, 1 } },
	{ .desc = "map swaps two GPUs",
	  .image = { A, B }, .num_image = 2,
	  .local = { A, B }, .num_local = 2,
	  .map = { MAP(A, B, 3), MAP(B, A, 4) }, .num_map = 2,
	  .target = { 1, 0 } },
	{ .desc = "map and default mixed",
	  .image = { A, B }, .num_image = 2,
	  .local = { B, C }, .num_local = 2,
	  .map = { MAP(A, C, 3) }, .num_map = 1,
	  .target = { 1, 0 } },
	{ .desc = "smaller VRAM",
	  .image = { A }, .num_image = 1,
	  .local = { A }, .model = { TEST_LESS_VRAM }, .num_local = 1,
	  .err = -ENODEV, .why = MISMATCH(A, A, "vram_size") },
	{ .desc = "older firmware",
	  .image = { A }, .num_image = 1,
	  .local = { A }, .model = { TEST_OLD_FW }, .num_local = 1,
	  .err = -ENODEV, .why = MISMATCH(A, A, "mec_fw_version") },
	{ .desc = "other gfx version through the map",
	  .image = { A }, .num_image = 1,
	  .local = { B }, .model = { TEST_OTHER_GFX }, .num_local = 1,
	  .map = { MAP(A, B, 3) }, .num_map = 1,
	  .err = -ENODEV, .why = MISMATCH(A, B, "gfx_target_version") },
	{ .desc = "renumbered gfx target through the map",
	  .image = { A }, .num_image = 1,
	  .local = { B }, .model = { TEST_OTHER_STEPPING }, .num_local = 1,
	  .map = { MAP(A, B, 3) }, .num_map = 1,
	  .target = { 0 } },
	{ .desc = "map to a missing GPU",
	  .image = { A }, .num_image = 1,
	  .local = { A }, .num_local = 1,
	  .map = { MAP(A, TEST_GPU_NONE, 3) }, .num_map = 1,
	  .err = -ENODEV, .why = MISMATCH(A, 0, "no such GPU") },
	{ .desc = "map names an unknown image GPU",
	  .image = { A }, .num_image = 1,
	  .local = { A, B }, .num_local = 2,
	  .map = { MAP(TEST_GPU_NONE, B, 3) }, .num_map = 1,
	  .err = -EINVAL },
	{ .desc = "two image GPUs to one local",
	  .image = { A, B }, .num_image = 2,
	  .local = { A }, .num_local = 1,
	  .map = { MAP(B, A, 3) }, .num_map = 1,
	  .err = -ENODEV, .why = MISMATCH(A, A, "already used") },
	{ .desc = "two image GPUs, one local",
	  .image = { A, B }, .num_image = 2,
	  .local = { A }, .num_local = 1,
	  .err = -ENODEV, .why = MISMATCH(B, 0, "no such GPU") },
	{ .desc = "zero image GPUs",
	  .local = { A }, .num_local = 1,
	  .map = { MAP(0, A, 3) }, .num_map = 1 },
	{ .desc = "zero image GPUs, a map entry for one",
	  .local = { A }, .num_local = 1,
	  .map = { MAP(A, A, 3) }, .num_map = 1,
	  .err = -EINVAL },
	{ .desc = "zero image and local GPUs" },
	{ .desc = "repeated image gpu_id",
	  .image = { A, A }, .num_image = 2,
	  .local = { A, B }, .num_local = 2,
	  .err = -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(test_map_gpus, test_map_gpus_cases, desc);

static void test_fill_local(struct kfd_criu_gpu_rec *gpu, u32 gpu_id,
			    enum test_model model)
{
	test_fill_gpu(gpu, gpu_id);
	switch (model) {
	case TEST_SAME:
		break;
	case TEST_LESS_VRAM:
		gpu->vram_size = cpu_to_le64(TEST_VRAM - SZ_1M);
		break;
	case TEST_OLD_FW:
		gpu->mec_fw_version = cpu_to_le32(TEST_MEC_FW - 1);
		break;
	case TEST_OTHER_GFX:
		/* GC 9.5.0, a later GFX9 */
		gpu->gfx_target_version = cpu_to_le32(90500);
		break;
	case TEST_OTHER_STEPPING:
		/* A GC 9.4.3 dGPU of revision 0 before daafa303d19f */
		gpu->gfx_target_version = cpu_to_le32(90401);
		break;
	}
}

static void test_expect_mismatch(struct kunit *test,
				 const struct kfd_criu_gpu_mismatch *got,
				 const struct kfd_criu_gpu_mismatch *want)
{
	KUNIT_EXPECT_EQ(test, got->image_gpu_id, want->image_gpu_id);
	KUNIT_EXPECT_EQ(test, got->local_gpu_id, want->local_gpu_id);
	KUNIT_ASSERT_NOT_NULL(test, got->field);
	KUNIT_EXPECT_STREQ(test, got->field, want->field);
}

static void test_map_gpus(struct kunit *test)
{
	const struct test_map_gpus_case *p = test->param_value;
	struct kfd_criu_gpu_rec image[TEST_MAX_MAP], local[TEST_MAX_MAP];
	struct kfd_criu_gpu_mismatch why = { };
	u32 target[TEST_MAX_MAP];
	u32 i;

	for (i = 0; i < p->num_image; i++)
		test_fill_gpu(&image[i], p->image[i]);
	for (i = 0; i < p->num_local; i++)
		test_fill_local(&local[i], p->local[i], p->model[i]);
	memset(target, 0xa5, sizeof(target));

	KUNIT_ASSERT_EQ(test, kfd_criu_validate_gpu_map(p->map, p->num_map), 0);
	KUNIT_ASSERT_EQ(test, kfd_criu_map_gpus(image, p->num_image, local,
						p->num_local, p->map,
						p->num_map, target, &why),
			p->err);
	if (p->err == -ENODEV)
		test_expect_mismatch(test, &why, &p->why);
	if (p->err)
		return;
	for (i = 0; i < p->num_image; i++)
		KUNIT_EXPECT_EQ(test, target[i], p->target[i]);
	if (p->num_image < TEST_MAX_MAP)
		KUNIT_EXPECT_EQ(test, target[p->num_image], 0xa5a5a5a5U);
	/* NULL for why is allowed, and the decision stays the same. */
	KUNIT_EXPECT_EQ(test, kfd_criu_map_gpus(image, p->num_image, local,
						p->num_local, p->map,
						p->num_map, target, NULL), 0);
}

/* An -ENODEV without a place for the reason still says -ENODEV. */
static void test_map_gpus_no_why(struct kunit *test)
{
	struct kfd_criu_gpu_rec image, local;
	u32 target;

	test_fill_gpu(&image, TEST_GPU_A);
	test_fill_local(&local, TEST_GPU_A, TEST_OLD_FW);
	KUNIT_EXPECT_EQ(test, kfd_criu_map_gpus(&image, 1, &local, 1, NULL, 0,
						&target, NULL), -ENODEV);
	KUNIT_EXPECT_EQ(test, kfd_criu_map_gpus(&image, KFD_CRIU_MAX_GPUS + 1,
						&local, 1, NULL, 0, &target,
						NULL), -EINVAL);
}

struct test_gpu_map_case {
	const char *desc;
	struct kfd_criu_gpu_map map[TEST_MAX_MAP];
	u32 num;
	int err;
};

#define MAP_RESERVED(image, local, fd, r)				\
	{ .image_gpu_id = (image), .local_gpu_id = (local), .drm_fd = (fd), \
	  .reserved = (r) }

static const struct test_gpu_map_case test_gpu_map_cases[] = {
	{ "empty", { }, 0, 0 },
	{ "one GPU", { MAP(A, B, 3) }, 1, 0 },
	{ "descriptors only", { MAP(0, A, 3), MAP(0, B, 4) }, 2, 0 },
	{ "unused GPU without a descriptor", { MAP(0, A, -1) }, 1, 0 },
	{ "descriptor 0", { MAP(0, A, 0) }, 1, 0 },
	{ "descriptor -2", { MAP(0, A, -2) }, 1, -EINVAL },
	{ "descriptor INT_MIN", { MAP(0, A, INT_MIN) }, 1, -EINVAL },
	{ "reserved set", { MAP_RESERVED(A, A, 3, 1) }, 1, -EINVAL },
	{ "local gpu_id 0", { MAP(A, 0, 3) }, 1, -EINVAL },
	{ "local GPU twice", { MAP(A, C, 3), MAP(B, C, 4) }, 2, -EINVAL },
	{ "local GPU twice, last entries",
	  { MAP(0, A, 3), MAP(0, B, 4), MAP(0, C, 5), MAP(0, B, 6) }, 4,
	  -EINVAL },
	{ "image GPU twice", { MAP(A, B, 3), MAP(A, C, 4) }, 2, -EINVAL },
	{ "image GPU swapped with local", { MAP(A, B, 3), MAP(B, A, 4) }, 2,
	  0 },
	{ "bad entry past num", { MAP(0, A, 3), MAP_RESERVED(0, 0, -5, 1) },
	  1, 0 },
};

KUNIT_ARRAY_PARAM_DESC(test_gpu_map, test_gpu_map_cases, desc);

#undef A
#undef B
#undef C

static void test_validate_gpu_map(struct kunit *test)
{
	const struct test_gpu_map_case *p = test->param_value;

	KUNIT_EXPECT_EQ(test, kfd_criu_validate_gpu_map(p->map, p->num),
			p->err);
}

static void test_gpu_map_most(struct kunit *test)
{
	const u32 n = KFD_CRIU_MAX_GPUS + 1;
	struct kfd_criu_gpu_map *map;
	u32 i;

	map = kunit_kcalloc(test, n, sizeof(*map), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, map);
	for (i = 0; i < n; i++) {
		map[i].local_gpu_id = i + 1;
		map[i].drm_fd = -1;
	}
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_gpu_map(map, n - 1), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_gpu_map(map, n), -EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_gpu_map(NULL, 0), 0);
}

/*
 * Buffer objects
 */

#define BO_VRAM		KFD_IOC_ALLOC_MEM_FLAGS_VRAM
#define BO_GTT		KFD_IOC_ALLOC_MEM_FLAGS_GTT
#define BO_USERPTR	KFD_IOC_ALLOC_MEM_FLAGS_USERPTR
#define BO_DOORBELL	KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL
#define BO_MMIO		KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP

/* Folded at build time, see kfd_criu_bo_flags_known. */
static const u32 test_bo_rw = KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE |
			      KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE;

#define BO_B_VRAM	0
#define BO_B_GTT	1
#define BO_B_USERPTR	2
#define BO_B_DOORBELL	3
#define BO_B_MMIO	4
#define BO_B_EVENT	5

/*
 * A valid BO of the domain @base names, owned by GPU 1 of two; the last
 * base is an event page.
 */
static void test_fill_bo(struct kfd_criu_bo_rec *bo, unsigned int base)
{
	static const u32 domains[] = {
		BO_VRAM, BO_GTT, BO_USERPTR, BO_DOORBELL, BO_MMIO, BO_GTT,
	};

	memset(bo, 0, sizeof(*bo));
	bo->va = cpu_to_le64(0x7f0000200000ULL);
	bo->size = cpu_to_le64(0x200000);
	bo->mmap_offset = cpu_to_le64(0x100000000ULL);
	bo->mapped_gpus = cpu_to_le64(BIT_ULL(0) | BIT_ULL(1));
	bo->alloc_flags = cpu_to_le32(domains[base] | test_bo_rw);
	bo->handle = cpu_to_le32(3);
	bo->gpu_index = cpu_to_le32(1);
	if (domains[base] == BO_USERPTR) {
		bo->userptr = cpu_to_le64(0x7f5500000000ULL);
		bo->mmap_offset = 0;
	}
	if (base == BO_B_EVENT) {
		bo->size = cpu_to_le64(KFD_CRIU_SIGNAL_PAGE_MAX);
		bo->flags = cpu_to_le32(KFD_CRIU_BO_EVENT_PAGE);
	}
}

/* One field of a valid BO set to @value; @num_gpus GPUs in the image. */
struct test_bo_case {
	const char *desc;
	unsigned int base;
	size_t field;
	u64 value;
	u32 num_gpus;
	int err;
};

#define BO_FIELD(f)	offsetof(struct kfd_criu_bo_rec, f)
#define BO_NONE		TEST_NO_FIELD

static const struct test_bo_case test_bo_cases[] = {
	{ "VRAM", BO_B_VRAM, BO_NONE, 0, 2, 0 },
	{ "GTT", BO_B_GTT, BO_NONE, 0, 2, 0 },
	{ "userptr", BO_B_USERPTR, BO_NONE, 0, 2, 0 },
	{ "doorbell", BO_B_DOORBELL, BO_NONE, 0, 2, 0 },
	{ "MMIO remap", BO_B_MMIO, BO_NONE, 0, 2, 0 },
	{ "every known flag", BO_B_VRAM, BO_FIELD(alloc_flags),
	  KFD_CRIU_BO_FLAGS_KNOWN & ~(BO_GTT | BO_USERPTR | BO_DOORBELL |
				      BO_MMIO), 2, 0 },
	{ "VA 0", BO_B_VRAM, BO_FIELD(va), 0, 2, 0 },
	{ "ends at the VA limit", BO_B_VRAM, BO_FIELD(va),
	  KFD_CRIU_MAX_VA - 0x200000, 2, 0 },
	{ "one page", BO_B_GTT, BO_FIELD(size), 4096, 2, 0 },
	{ "no mmap offset", BO_B_VRAM, BO_FIELD(mmap_offset), 0, 2, 0 },
	{ "not mapped anywhere", BO_B_VRAM, BO_FIELD(mapped_gpus), 0, 2, 0 },
	{ "largest handle", BO_B_VRAM, BO_FIELD(handle), INT_MAX - 1, 2, 0 },
	{ "handle 0", BO_B_VRAM, BO_FIELD(handle), 0, 2, 0 },
	{ "mapped on GPU 63 of 64", BO_B_VRAM, BO_FIELD(mapped_gpus),
	  BIT_ULL(63), KFD_CRIU_MAX_GPUS, 0 },
	{ "size 0", BO_B_VRAM, BO_FIELD(size), 0, 2, -EINVAL },
	{ "size not aligned", BO_B_VRAM, BO_FIELD(size), 0x200800, 2,
	  -EINVAL },
	{ "size 1", BO_B_GTT, BO_FIELD(size), 1, 2, -EINVAL },
	{ "VA not aligned", BO_B_VRAM, BO_FIELD(va), 0x7f0000200200ULL, 2,
	  -EINVAL },
	{ "mmap offset not aligned", BO_B_VRAM, BO_FIELD(mmap_offset),
	  0x100000010ULL, 2, -EINVAL },
	{ "past the VA limit", BO_B_VRAM, BO_FIELD(va),
	  KFD_CRIU_MAX_VA - 0x1000, 2, -EINVAL },
	{ "starts at the VA limit", BO_B_VRAM, BO_FIELD(va), KFD_CRIU_MAX_VA,
	  2, -EINVAL },
	{ "VA + size wraps", BO_B_VRAM, BO_FIELD(va), 0xffffffffffe00000ULL,
	  2, -EINVAL },
	{ "size wraps the VA", BO_B_VRAM, BO_FIELD(size),
	  0xfffffffffffff000ULL, 2, -EINVAL },
	{ "unknown flag bit 5", BO_B_VRAM, BO_FIELD(alloc_flags),
	  BO_VRAM | BIT(5), 2, -EINVAL },
	{ "unknown flag bit 22", BO_B_GTT, BO_FIELD(alloc_flags),
	  BO_GTT | BIT(22), 2, -EINVAL },
	{ "no domain", BO_B_VRAM, BO_FIELD(alloc_flags),
	  KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE, 2, -EINVAL },
	{ "VRAM and GTT", BO_B_VRAM, BO_FIELD(alloc_flags),
	  BO_VRAM | BO_GTT, 2, -EINVAL },
	{ "GTT and userptr", BO_B_USERPTR, BO_FIELD(alloc_flags),
	  BO_GTT | BO_USERPTR, 2, -EINVAL },
	{ "doorbell and MMIO", BO_B_DOORBELL, BO_FIELD(alloc_flags),
	  BO_DOORBELL | BO_MMIO, 2, -EINVAL },
	{ "VRAM with a userptr", BO_B_VRAM, BO_FIELD(userptr),
	  0x7f5500000000ULL, 2, -EINVAL },
	{ "doorbell with a userptr", BO_B_DOORBELL, BO_FIELD(userptr), 0x1000,
	  2, -EINVAL },
	{ "userptr 0", BO_B_USERPTR, BO_FIELD(userptr), 0, 2, -EINVAL },
	{ "userptr not aligned", BO_B_USERPTR, BO_FIELD(userptr),
	  0x7f5500000008ULL, 2, -EINVAL },
	{ "handle INT_MAX", BO_B_VRAM, BO_FIELD(handle), INT_MAX, 2,
	  -EINVAL },
	{ "handle ~0", BO_B_VRAM, BO_FIELD(handle), ~0U, 2, -EINVAL },
	{ "owner past the GPUs", BO_B_VRAM, BO_FIELD(gpu_index), 2, 2,
	  -EINVAL },
	{ "owner ~0", BO_B_VRAM, BO_FIELD(gpu_index), ~0U, 2, -EINVAL },
	{ "owner of an image without GPUs", BO_B_VRAM, BO_FIELD(gpu_index), 0,
	  0, -EINVAL },
	{ "mapped past the GPUs", BO_B_VRAM, BO_FIELD(mapped_gpus),
	  BIT_ULL(0) | BIT_ULL(2), 2, -EINVAL },
	{ "mapped on GPU 63 of 2", BO_B_VRAM, BO_FIELD(mapped_gpus),
	  BIT_ULL(63), 2, -EINVAL },
	{ "more GPUs than an image has", BO_B_VRAM, BO_NONE, 0,
	  KFD_CRIU_MAX_GPUS + 1, -EINVAL },
	{ "unknown flag", BO_B_GTT, BO_FIELD(flags), 2, 2, -EINVAL },
	/* ROCm's event page: libhsakmt events.c, hsaKmtCreateEvent() */
	{ "event page", BO_B_EVENT, BO_NONE, 0, 2, 0 },
	{ "event page in VRAM", BO_B_EVENT, BO_FIELD(alloc_flags), BO_VRAM, 2,
	  -EINVAL },
	{ "event page of 64 KiB", BO_B_EVENT, BO_FIELD(size), SZ_64K, 2,
	  -EINVAL },
	{ "event page as AQL queue memory", BO_B_EVENT, BO_FIELD(alloc_flags),
	  BO_GTT | KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM, 2, -EINVAL },
	{ "event page of 4 KiB", BO_B_EVENT, BO_FIELD(size), SZ_4K, 2,
	  -EINVAL },
	{ "event page flag on 2 MiB of GTT", BO_B_GTT, BO_FIELD(flags),
	  KFD_CRIU_BO_EVENT_PAGE, 2, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(test_bo, test_bo_cases, desc);

/* The fields before alloc_flags are __le64, the others __le32. */
static void test_set_bo_field(struct kfd_criu_bo_rec *rec, size_t field,
			      u64 value)
{
	__le64 v64 = cpu_to_le64(value);
	__le32 v32 = cpu_to_le32((u32)value);

	if (field < BO_FIELD(alloc_flags))
		memcpy((u8 *)rec + field, &v64, 8);
	else
		memcpy((u8 *)rec + field, &v32, 4);
}

static void test_validate_bo(struct kunit *test)
{
	const struct test_bo_case *p = test->param_value;
	struct kfd_criu_bo_rec bo;

	test_fill_bo(&bo, p->base);
	if (p->field != TEST_NO_FIELD)
		test_set_bo_field(&bo, p->field, p->value);
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_bo(&bo, p->num_gpus), p->err);
}

static void test_bo_has_contents(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, kfd_criu_bo_has_contents(BO_VRAM));
	KUNIT_EXPECT_TRUE(test, kfd_criu_bo_has_contents(BO_VRAM | test_bo_rw));
	KUNIT_EXPECT_TRUE(test, kfd_criu_bo_has_contents(BO_GTT));
	KUNIT_EXPECT_TRUE(test, kfd_criu_bo_has_contents(BO_GTT | test_bo_rw));
	KUNIT_EXPECT_FALSE(test, kfd_criu_bo_has_contents(BO_USERPTR));
	KUNIT_EXPECT_FALSE(test, kfd_criu_bo_has_contents(BO_DOORBELL));
	KUNIT_EXPECT_FALSE(test, kfd_criu_bo_has_contents(BO_MMIO | test_bo_rw));
	KUNIT_EXPECT_FALSE(test, kfd_criu_bo_has_contents(test_bo_rw));
	KUNIT_EXPECT_FALSE(test, kfd_criu_bo_has_contents(0));
}

/* A BO of a set, in the units the set tables use: pages. */
struct test_set_bo {
	u32 gpu;
	u32 handle;
	u32 va;
	u32 pages;
	u64 mapped;
	u32 domain;
};

#define TEST_MAX_SET	5
/* Not an allocation flag: marks the event page in the set tables */
#define BO_EVENT_BIT	BIT(7)
#define BO_EVENT	(BO_GTT | BO_EVENT_BIT)

struct test_bos_case {
	const char *desc;
	struct test_set_bo bos[TEST_MAX_SET];
	u32 num;
	u32 num_gpus;
	int err;
};

static const struct test_bos_case test_bos_cases[] = {
	{ "no BOs", { }, 0, 2, 0 },
	{ "one BO", { { 0, 1, 16, 1, 1, BO_VRAM } }, 1, 2, 0 },
	{ "ascending", { { 0, 1, 16, 1, 1, BO_VRAM },
			 { 0, 2, 32, 1, 1, BO_GTT },
			 { 1, 1, 48, 1, 2, BO_VRAM },
			 { 1, 7, 64, 1, 2, BO_DOORBELL } }, 4, 2, 0 },
	{ "handles descend", { { 0, 2, 16, 1, 1, BO_VRAM },
			       { 0, 1, 32, 1, 1, BO_VRAM } }, 2, 2, -EINVAL },
	{ "GPUs descend", { { 1, 1, 16, 1, 2, BO_VRAM },
			    { 0, 2, 32, 1, 1, BO_VRAM } }, 2, 2, -EINVAL },
	{ "duplicate", { { 0, 1, 16, 1, 1, BO_VRAM },
			 { 0, 2, 32, 1, 1, BO_VRAM },
			 { 0, 2, 48, 1, 1, BO_GTT } }, 3, 2, -EEXIST },
	{ "same handle on two GPUs", { { 0, 5, 16, 1, 1, BO_VRAM },
				       { 1, 5, 32, 1, 2, BO_VRAM } }, 2, 2,
	  0 },
	{ "an invalid record", { { 0, 1, 16, 1, 1, BO_VRAM },
				 { 0, 2, 32, 0, 1, BO_VRAM } }, 2, 2,
	  -EINVAL },
	{ "overlap in one VM", { { 0, 1, 16, 4, 1, BO_VRAM },
				 { 0, 2, 19, 1, 1, BO_GTT } }, 2, 2,
	  -EINVAL },
	{ "same VA in one VM", { { 0, 1, 16, 1, 0, BO_VRAM },
				 { 0, 2, 16, 1, 0, BO_GTT } }, 2, 2,
	  -EINVAL },
	{ "adjacent in one VM", { { 0, 1, 16, 4, 1, BO_VRAM },
				  { 0, 2, 20, 1, 1, BO_GTT },
				  { 0, 3, 12, 4, 1, BO_GTT } }, 3, 2, 0 },
	{ "later BO below an earlier", { { 0, 1, 32, 4, 1, BO_VRAM },
					 { 0, 2, 30, 3, 1, BO_GTT } }, 2, 2,
	  -EINVAL },
	{ "contained, other VM between", { { 0, 1, 16, 64, 1, BO_VRAM },
					   { 1, 1, 20, 4, 2, BO_VRAM },
					   { 1, 2, 40, 1, 3, BO_GTT } },
	  3, 2, -EINVAL },
	{ "same VA on two GPUs", { { 0, 1, 16, 4, 1, BO_VRAM },
				   { 1, 1, 16, 4, 2, BO_VRAM } }, 2, 2, 0 },
	{ "userptr at the same VA on two GPUs",
	  { { 0, 1, 16, 4, 1, BO_USERPTR }, { 1, 1, 16, 4, 2, BO_USERPTR } },
	  2, 2, 0 },
	{ "overlap through mapped_gpus", { { 0, 1, 16, 4, 3, BO_VRAM },
					   { 1, 1, 18, 4, 2, BO_VRAM } },
	  2, 2, -EINVAL },
	{ "overlap through an unmapped owner", { { 0, 1, 16, 4, 2, BO_VRAM },
						 { 1, 1, 18, 4, 0, BO_VRAM } },
	  2, 2, -EINVAL },
	{ "mapped elsewhere, no overlap", { { 0, 1, 16, 4, 5, BO_VRAM },
					    { 1, 1, 18, 4, 2, BO_VRAM } },
	  2, 3, 0 },
	{ "overlap on the third GPU only", { { 0, 1, 16, 4, 5, BO_VRAM },
					     { 1, 1, 18, 4, 6, BO_VRAM } },
	  2, 3, -EINVAL },
	{ "one event page", { { 0, 1, 16, 8, 3, BO_EVENT },
			      { 1, 1, 32, 8, 2, BO_GTT } }, 2, 2, 0 },
	{ "two event pages", { { 0, 1, 16, 8, 3, BO_EVENT },
			       { 1, 1, 32, 8, 2, BO_EVENT } }, 2, 2, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(test_bos, test_bos_cases, desc);

static void test_make_bo(struct kfd_criu_bo_rec *bo,
			 const struct test_set_bo *s)
{
	memset(bo, 0, sizeof(*bo));
	bo->va = cpu_to_le64((u64)s->va * KFD_CRIU_BO_ALIGN);
	bo->size = cpu_to_le64((u64)s->pages * KFD_CRIU_BO_ALIGN);
	bo->mapped_gpus = cpu_to_le64(s->mapped);
	bo->alloc_flags = cpu_to_le32((s->domain & ~BO_EVENT_BIT) | test_bo_rw);
	bo->handle = cpu_to_le32(s->handle);
	bo->gpu_index = cpu_to_le32(s->gpu);
	if (s->domain == BO_USERPTR)
		bo->userptr = cpu_to_le64(0x7f5500000000ULL);
	if (s->domain & BO_EVENT_BIT)
		bo->flags = cpu_to_le32(KFD_CRIU_BO_EVENT_PAGE);
}

static void test_check_bos(struct kunit *test)
{
	const struct test_bos_case *p = test->param_value;
	struct kfd_criu_bo_rec bos[TEST_MAX_SET] = { };
	u32 i;

	for (i = 0; i < p->num; i++)
		test_make_bo(&bos[i], &p->bos[i]);
	KUNIT_EXPECT_EQ(test, kfd_criu_check_bos(bos, p->num, p->num_gpus),
			p->err);
}

static void test_free_bos(void *bos)
{
	kvfree(bos);
}

/*
 * The most BOs an image may carry, each mapped on all 64 GPUs: the case
 * that must stay O(n log n). The VAs are handed out in a scrambled order
 * so the sort has work to do. Marked slow: half a minute under KASAN and
 * QEMU TCG, a second natively.
 */
static void test_check_bos_most(struct kunit *test)
{
	const u32 n = KFD_CRIU_MAX_BOS;
	struct kfd_criu_bo_rec *bos;
	u32 i, slot;

	bos = kvcalloc(n + 1, sizeof(*bos), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bos);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, test_free_bos,
							bos), 0);
	for (i = 0; i <= n; i++) {
		/* 40503 is odd, so this is a permutation of 0 .. 2^19 - 1 */
		slot = (i * 40503U) & (BIT(19) - 1);
		bos[i].va = cpu_to_le64((u64)slot * 2 * KFD_CRIU_BO_ALIGN);
		bos[i].size = cpu_to_le64(KFD_CRIU_BO_ALIGN);
		bos[i].mapped_gpus = cpu_to_le64(U64_MAX);
		bos[i].alloc_flags = cpu_to_le32(BO_VRAM);
		bos[i].gpu_index = cpu_to_le32(i * KFD_CRIU_MAX_GPUS / n);
		bos[i].handle = cpu_to_le32(i);
	}
	bos[n].gpu_index = cpu_to_le32(KFD_CRIU_MAX_GPUS - 1);

	KUNIT_EXPECT_EQ(test, kfd_criu_check_bos(bos, n, KFD_CRIU_MAX_GPUS), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_check_bos(bos, n + 1, KFD_CRIU_MAX_GPUS),
			-EINVAL);
	/* Into the free page after it: still no overlap. */
	bos[n - 1].size = cpu_to_le64(2 * KFD_CRIU_BO_ALIGN);
	KUNIT_EXPECT_EQ(test, kfd_criu_check_bos(bos, n, KFD_CRIU_MAX_GPUS), 0);
	/* Onto a BO of another GPU, in every VM since both are everywhere. */
	bos[n - 1].va = cpu_to_le64(le64_to_cpu(bos[n / 2].va) +
				    KFD_CRIU_BO_ALIGN);
	bos[n - 1].size = cpu_to_le64(KFD_CRIU_BO_ALIGN);
	KUNIT_EXPECT_EQ(test, kfd_criu_check_bos(bos, n, KFD_CRIU_MAX_GPUS), 0);
	bos[n - 1].va = bos[n / 2].va;
	KUNIT_EXPECT_EQ(test, kfd_criu_check_bos(bos, n, KFD_CRIU_MAX_GPUS),
			-EINVAL);
}

/*
 * BO contents
 */

#define TEST_CHUNK	KFD_CRIU_BO_CHUNK

struct test_chunk_case {
	const char *desc;
	u64 size;
	u32 chunk;
	int err;
	u64 count;
};

static const struct test_chunk_case test_chunk_cases[] = {
	{ "0 bytes", 0, TEST_CHUNK, 0, 0 },
	{ "1 byte", 1, TEST_CHUNK, 0, 1 },
	{ "chunk - 1", TEST_CHUNK - 1, TEST_CHUNK, 0, 1 },
	{ "chunk", TEST_CHUNK, TEST_CHUNK, 0, 1 },
	{ "chunk + 1", TEST_CHUNK + 1, TEST_CHUNK, 0, 2 },
	{ "U64_MAX - 1", U64_MAX - 1, TEST_CHUNK, 0, 1ULL << 45 },
	{ "U64_MAX", U64_MAX, TEST_CHUNK, 0, 1ULL << 45 },
	{ "U64_MAX in bytes", U64_MAX, 1, 0, U64_MAX },
	{ "U64_MAX in U32_MAX chunks", U64_MAX, U32_MAX, 0,
	  (1ULL << 32) + 1 },
	{ "U64_MAX - 1 in U32_MAX chunks", U64_MAX - 1, U32_MAX, 0,
	  (1ULL << 32) + 1 },
	{ "2^63 in 2^31 chunks", 1ULL << 63, 1U << 31, 0, 1ULL << 32 },
	{ "chunk 0", 4096, 0, -EINVAL, 0 },
	{ "nothing in chunk 0", 0, 0, -EINVAL, 0 },
};

KUNIT_ARRAY_PARAM_DESC(test_chunk, test_chunk_cases, desc);

static void test_chunk_count(struct kunit *test)
{
	const struct test_chunk_case *p = test->param_value;
	u64 count = 0xdeadbeef;

	KUNIT_ASSERT_EQ(test, kfd_criu_chunk_count(p->size, p->chunk, &count),
			p->err);
	if (!p->err)
		KUNIT_EXPECT_EQ(test, count, p->count);
	else
		KUNIT_EXPECT_EQ(test, count, 0xdeadbeefULL);
}

struct test_chunk_len_case {
	const char *desc;
	u64 size;
	u64 offset;
	u32 len;
};

static const struct test_chunk_len_case test_chunk_len_cases[] = {
	{ "empty BO", 0, 0, 0 },
	{ "1 byte", 1, 0, 1 },
	{ "past 1 byte", 1, 1, 0 },
	{ "chunk - 1", TEST_CHUNK - 1, 0, TEST_CHUNK - 1 },
	{ "chunk", TEST_CHUNK, 0, TEST_CHUNK },
	{ "after chunk", TEST_CHUNK, TEST_CHUNK, 0 },
	{ "chunk + 1", TEST_CHUNK + 1, 0, TEST_CHUNK },
	{ "tail of chunk + 1", TEST_CHUNK + 1, TEST_CHUNK, 1 },
	{ "past chunk + 1", TEST_CHUNK + 1, TEST_CHUNK + 1, 0 },
	{ "mid chunk", 3 * TEST_CHUNK, TEST_CHUNK / 2, TEST_CHUNK },
	{ "U64_MAX from 0", U64_MAX, 0, TEST_CHUNK },
	{ "U64_MAX, last full chunk", U64_MAX, U64_MAX - TEST_CHUNK,
	  TEST_CHUNK },
	{ "U64_MAX, short tail", U64_MAX, U64_MAX - TEST_CHUNK + 1,
	  TEST_CHUNK - 1 },
	{ "U64_MAX, last byte", U64_MAX, U64_MAX - 1, 1 },
	{ "U64_MAX at the end", U64_MAX, U64_MAX, 0 },
	{ "U64_MAX - 1 past the end", U64_MAX - 1, U64_MAX, 0 },
};

KUNIT_ARRAY_PARAM_DESC(test_chunk_len, test_chunk_len_cases, desc);

static void test_chunk_len(struct kunit *test)
{
	const struct test_chunk_len_case *p = test->param_value;

	KUNIT_EXPECT_EQ(test, kfd_criu_chunk_len(p->size, p->offset,
						 TEST_CHUNK), p->len);
}

/* Sizes in bytes; BOs without contents are in between. */
static const struct test_set_bo test_cursor_bos[] = {
	{ 0, 1, 0x100, 2 * (TEST_CHUNK / 4096) + 1, 1, BO_VRAM },
	{ 0, 2, 0x800, 16, 1, BO_USERPTR },
	{ 0, 3, 0x900, 1, 1, BO_DOORBELL },
	{ 1, 1, 0x100, 1, 2, BO_GTT },
	{ 1, 2, 0x200, 1, 2, BO_MMIO },
	{ 1, 3, 0x300, TEST_CHUNK / 4096, 2, BO_VRAM },
	{ 1, 4, 0x800, 2, 2, BO_USERPTR },
};

/* The BO_DATA records the set above needs, in order. */
static const struct {
	u32 bo;
	u64 offset;
	u32 len;
} test_cursor_walk[] = {
	{ 0, 0, TEST_CHUNK },
	{ 0, TEST_CHUNK, TEST_CHUNK },
	{ 0, 2 * TEST_CHUNK, 4096 },
	{ 3, 0, 4096 },
	{ 5, 0, TEST_CHUNK },
};

static void test_make_bos(struct kfd_criu_bo_rec *bos,
			  const struct test_set_bo *set, u32 num)
{
	u32 i;

	for (i = 0; i < num; i++)
		test_make_bo(&bos[i], &set[i]);
}

static int test_data_check(struct kfd_criu_bo_cursor *cur,
			   const struct kfd_criu_bo_rec *bos, u32 num_bos,
			   u32 bo, u64 offset, u32 reserved, u32 len)
{
	struct kfd_criu_bo_data_hdr hdr = {
		.bo_index = cpu_to_le32(bo),
		.reserved = cpu_to_le32(reserved),
		.offset = cpu_to_le64(offset),
	};

	return kfd_criu_bo_data_check(cur, bos, num_bos, &hdr,
				      sizeof(hdr) + len);
}

/* Every wrong record at this point is refused and leaves @cur as it is. */
static void test_expect_refused(struct kunit *test,
				struct kfd_criu_bo_cursor *cur,
				const struct kfd_criu_bo_rec *bos, u32 n,
				u32 bo, u64 offset, u32 len)
{
	const struct kfd_criu_bo_cursor before = *cur;
	u32 step = cur->bo_index;

	KUNIT_EXPECT_EQ_MSG(test, test_data_check(cur, bos, n, bo + 1, offset,
						  0, len), -EINVAL,
			    "next BO at BO %u", step);
	KUNIT_EXPECT_EQ(test, test_data_check(cur, bos, n, bo - 1, offset, 0,
					      len), -EINVAL);
	KUNIT_EXPECT_EQ(test, test_data_check(cur, bos, n, bo,
					      offset + TEST_CHUNK, 0, len),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, test_data_check(cur, bos, n, bo, offset + 4096,
					      0, len), -EINVAL);
	KUNIT_EXPECT_EQ(test, test_data_check(cur, bos, n, bo, offset, 0,
					      len - 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, test_data_check(cur, bos, n, bo, offset, 0,
					      len + 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, test_data_check(cur, bos, n, bo, offset, 1,
					      len), -EINVAL);
	KUNIT_EXPECT_EQ(test, cur->bo_index, before.bo_index);
	KUNIT_EXPECT_EQ(test, cur->offset, before.offset);
}

static void test_bo_cursor_walk(struct kunit *test)
{
	const u32 n = ARRAY_SIZE(test_cursor_bos);
	struct kfd_criu_bo_rec bos[ARRAY_SIZE(test_cursor_bos)];
	struct kfd_criu_bo_data_hdr hdr = { };
	struct kfd_criu_bo_cursor cur;
	unsigned int i;

	test_make_bos(bos, test_cursor_bos, n);
	KUNIT_ASSERT_EQ(test, kfd_criu_check_bos(bos, n, 2), 0);
	kfd_criu_bo_cursor_init(&cur, bos, n);

	for (i = 0; i < ARRAY_SIZE(test_cursor_walk); i++) {
		u32 bo = test_cursor_walk[i].bo;
		u64 off = test_cursor_walk[i].offset;
		u32 len = test_cursor_walk[i].len;

		KUNIT_ASSERT_EQ(test, cur.bo_index, bo);
		KUNIT_ASSERT_EQ(test, cur.offset, off);
		test_expect_refused(test, &cur, bos, n, bo, off, len);
		KUNIT_ASSERT_EQ_MSG(test, test_data_check(&cur, bos, n, bo, off,
							  0, len), 0,
				    "record %u", i);
	}
	KUNIT_EXPECT_EQ(test, cur.bo_index, n);
	KUNIT_EXPECT_EQ(test, cur.offset, 0ULL);
	/* Nothing more is expected: no BO, not even one past the end. */
	KUNIT_EXPECT_EQ(test, test_data_check(&cur, bos, n, n, 0, 0, 4096),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, test_data_check(&cur, bos, n, 5, TEST_CHUNK, 0,
					      4096), -EINVAL);
	/* A payload shorter than its header, or only a header, never fits. */
	cur.bo_index = 3;
	hdr.bo_index = cpu_to_le32(3);
	KUNIT_EXPECT_EQ(test, kfd_criu_bo_data_check(&cur, bos, n, &hdr,
						     sizeof(hdr) - 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_bo_data_check(&cur, bos, n, &hdr,
						     sizeof(hdr)), -EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_bo_data_check(&cur, bos, n, &hdr, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_bo_data_check(&cur, bos, n, &hdr,
						     sizeof(hdr) + 4096), 0);
	KUNIT_EXPECT_EQ(test, cur.bo_index, 5U);
}

static void test_bo_cursor_nothing(struct kunit *test)
{
	struct kfd_criu_bo_rec bos[ARRAY_SIZE(test_cursor_bos)];
	struct kfd_criu_bo_cursor cur = { .bo_index = 7, .offset = 9 };

	kfd_criu_bo_cursor_init(&cur, NULL, 0);
	KUNIT_EXPECT_EQ(test, cur.bo_index, 0U);
	KUNIT_EXPECT_EQ(test, cur.offset, 0ULL);
	KUNIT_EXPECT_EQ(test, test_data_check(&cur, NULL, 0, 0, 0, 0, 4096),
			-EINVAL);

	/* Only the userptr, doorbell and MMIO BOs: no contents at all. */
	test_make_bo(&bos[0], &test_cursor_bos[1]);
	test_make_bo(&bos[1], &test_cursor_bos[2]);
	test_make_bo(&bos[2], &test_cursor_bos[4]);
	cur.offset = 9;
	kfd_criu_bo_cursor_init(&cur, bos, 3);
	KUNIT_EXPECT_EQ(test, cur.bo_index, 3U);
	KUNIT_EXPECT_EQ(test, cur.offset, 0ULL);
	KUNIT_EXPECT_EQ(test, test_data_check(&cur, bos, 3, 0, 0, 0, 4096),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, test_data_check(&cur, bos, 3, 3, 0, 0, 4096),
			-EINVAL);
}

/*
 * Images with GPUs, BOs and their contents
 */

#define TEST_RT_GPUS	2
#define TEST_RT_BOS	4

/* Two GPUs, a VRAM BO of two pages, a userptr BO, a GTT BO, a doorbell. */
static const struct test_set_bo test_rt_bos[TEST_RT_BOS] = {
	{ 0, 1, 0x100, 2, 1, BO_VRAM },
	{ 0, 2, 0x200, 4, 3, BO_USERPTR },
	{ 1, 1, 0x100, 1, 2, BO_GTT },
	{ 1, 2, 0x300, 1, 2, BO_DOORBELL },
};

struct test_gpu_image {
	struct kfd_criu_compat_rec compat;
	struct kfd_criu_gpu_rec gpus[TEST_RT_GPUS];
	struct kfd_criu_process_rec process;
	struct kfd_criu_bo_rec bos[TEST_RT_BOS];
	u8 contents[TEST_RT_BOS][2 * 4096];
	u32 num_gpus;
	u32 num_bos;
	u32 num_data;
};

static void test_fill_gpu_image(struct test_gpu_image *img)
{
	u32 i, j;

	memset(img, 0, sizeof(*img));
	img->compat.num_gpus = cpu_to_le32(TEST_RT_GPUS);
	test_fill_gpu(&img->gpus[0], TEST_GPU_A);
	test_fill_gpu(&img->gpus[1], TEST_GPU_B);
	img->gpus[1].vram_size = cpu_to_le64(TEST_VRAM / 2);
	test_fill_process(&img->process);
	img->process.num_events = 0;
	img->process.signal_page_size = 0;
	img->process.num_bos = cpu_to_le32(TEST_RT_BOS);
	test_make_bos(img->bos, test_rt_bos, TEST_RT_BOS);
	for (i = 0; i < TEST_RT_BOS; i++)
		for (j = 0; j < sizeof(img->contents[i]); j++)
			img->contents[i][j] = (u8)(i * 31 + j * 7 + 1);
}

static void test_emit_bo_data(struct kfd_criu_image_writer *w,
			      const struct test_gpu_image *img, u32 bo)
{
	u64 size = le64_to_cpu(img->bos[bo].size);
	struct kfd_criu_bo_data_hdr hdr = { .bo_index = cpu_to_le32(bo) };
	u32 len = kfd_criu_chunk_len(size, 0, KFD_CRIU_BO_CHUNK);

	kfd_criu_image_begin_record(w, KFD_CRIU_REC_BO_DATA,
				    KFD_CRIU_RECORD_MANDATORY,
				    sizeof(hdr) + len);
	kfd_criu_image_write_data(w, &hdr, sizeof(hdr));
	kfd_criu_image_write_data(w, img->contents[bo], len);
	kfd_criu_image_finish_record(w);
}

/* In the record order of the DOC block; BOs fit one chunk here. */
static int test_emit_gpu_image(struct kfd_criu_image_writer *w,
			       const struct test_gpu_image *img)
{
	const u32 m = KFD_CRIU_RECORD_MANDATORY;
	u32 i;

	kfd_criu_image_write_header(w, test_release);
	kfd_criu_image_write_record(w, KFD_CRIU_REC_COMPAT, m, &img->compat,
				    sizeof(img->compat));
	for (i = 0; i < TEST_RT_GPUS; i++)
		kfd_criu_image_write_record(w, KFD_CRIU_REC_GPU, m,
					    &img->gpus[i],
					    sizeof(img->gpus[i]));
	kfd_criu_image_write_record(w, KFD_CRIU_REC_PROCESS, m, &img->process,
				    sizeof(img->process));
	for (i = 0; i < TEST_RT_BOS; i++)
		kfd_criu_image_write_record(w, KFD_CRIU_REC_BO, m,
					    &img->bos[i], sizeof(img->bos[i]));
	for (i = 0; i < TEST_RT_BOS; i++)
		if (kfd_criu_bo_has_contents(le32_to_cpu(img->bos[i].alloc_flags)))
			test_emit_bo_data(w, img, i);
	return kfd_criu_image_write_end(w);
}

/* Stores a record as restore would, checking the contents on the way. */
static int test_store_gpu_record(struct test_gpu_image *out,
				 struct kfd_criu_bo_cursor *cur,
				 const struct kfd_criu_record *rec,
				 const u8 *buf)
{
	struct kfd_criu_bo_data_hdr hdr;
	int ret;

	switch (rec->type) {
	case KFD_CRIU_REC_COMPAT:
		memcpy(&out->compat, buf, sizeof(out->compat));
		return kfd_criu_validate_compat(&out->compat);
	case KFD_CRIU_REC_GPU:
		if (out->num_gpus == TEST_RT_GPUS)
			return -E2BIG;
		memcpy(&out->gpus[out->num_gpus], buf, sizeof(out->gpus[0]));
		return kfd_criu_validate_gpu(&out->gpus[out->num_gpus++]);
	case KFD_CRIU_REC_PROCESS:
		memcpy(&out->process, buf, sizeof(out->process));
		return kfd_criu_validate_process(&out->process);
	case KFD_CRIU_REC_BO:
		if (out->num_bos == TEST_RT_BOS)
			return -E2BIG;
		memcpy(&out->bos[out->num_bos++], buf, sizeof(out->bos[0]));
		if (out->num_bos < TEST_RT_BOS)
			return 0;
		ret = kfd_criu_check_bos(out->bos, out->num_bos,
					 out->num_gpus);
		kfd_criu_bo_cursor_init(cur, out->bos, out->num_bos);
		return ret;
	case KFD_CRIU_REC_BO_DATA:
		memcpy(&hdr, buf, sizeof(hdr));
		ret = kfd_criu_bo_data_check(cur, out->bos, out->num_bos, &hdr,
					     rec->length);
		if (ret)
			return ret;
		memcpy(out->contents[le32_to_cpu(hdr.bo_index)] +
		       le64_to_cpu(hdr.offset), buf + sizeof(hdr),
		       rec->length - sizeof(hdr));
		out->num_data++;
		return 0;
	}
	return 0;
}

static void test_gpu_round_trip(struct kunit *test)
{
	struct test_stream *s = test->priv;
	struct kfd_criu_image_writer w;
	struct kfd_criu_image_reader r;
	struct kfd_criu_image_header hdr;
	struct kfd_criu_bo_cursor cur = { };
	struct test_gpu_image *in, *out;
	struct kfd_criu_record rec;
	u32 target[TEST_RT_GPUS];
	u32 i;

	in = kunit_kzalloc(test, sizeof(*in), GFP_KERNEL);
	out = kunit_kzalloc(test, sizeof(*out), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, in);
	KUNIT_ASSERT_NOT_NULL(test, out);
	test_fill_gpu_image(in);
	kfd_criu_image_writer_init(&w, &s->io);
	KUNIT_ASSERT_EQ(test, test_emit_gpu_image(&w, in), 0);

	kfd_criu_image_reader_init(&r, &s->io, kfd_criu_v1_records,
				   kfd_criu_v1_num_records);
	KUNIT_ASSERT_EQ(test, kfd_criu_image_read_header(&r, &hdr), 0);
	do {
		KUNIT_ASSERT_EQ(test, kfd_criu_image_read_record(&r, &rec,
								 s->buf,
								 TEST_BUF_SIZE),
				0);
		KUNIT_ASSERT_EQ_MSG(test, test_store_gpu_record(out, &cur, &rec,
								s->buf), 0,
				    "record type %u", rec.type);
	} while (rec.type != KFD_CRIU_REC_END);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_expect_eof(&r), 0);
	KUNIT_EXPECT_EQ(test, r.records, 1U + TEST_RT_GPUS + 1 + TEST_RT_BOS +
			2);

	KUNIT_EXPECT_MEMEQ(test, &out->compat, &in->compat,
			   sizeof(in->compat));
	KUNIT_ASSERT_EQ(test, out->num_gpus, (u32)TEST_RT_GPUS);
	KUNIT_EXPECT_MEMEQ(test, out->gpus, in->gpus, sizeof(in->gpus));
	KUNIT_EXPECT_MEMEQ(test, &out->process, &in->process,
			   sizeof(in->process));
	KUNIT_ASSERT_EQ(test, out->num_bos, (u32)TEST_RT_BOS);
	KUNIT_EXPECT_MEMEQ(test, out->bos, in->bos, sizeof(in->bos));
	KUNIT_EXPECT_EQ(test, out->num_data, 2U);
	KUNIT_EXPECT_EQ(test, cur.bo_index, (u32)TEST_RT_BOS);
	KUNIT_EXPECT_MEMEQ(test, out->contents[0], in->contents[0], 2 * 4096);
	KUNIT_EXPECT_MEMEQ(test, out->contents[2], in->contents[2], 4096);

	/* Restored on the same machine, each GPU goes back to itself. */
	KUNIT_ASSERT_EQ(test, kfd_criu_map_gpus(out->gpus, out->num_gpus,
						in->gpus, TEST_RT_GPUS, NULL,
						0, target, NULL), 0);
	for (i = 0; i < TEST_RT_GPUS; i++)
		KUNIT_EXPECT_EQ(test, target[i], i);
}

/* Record lengths of the new types, at and around their bounds. */
struct test_len_case {
	const char *desc;
	u32 type;
	u32 len;
	int err;
};

#define GPU_LEN		sizeof(struct kfd_criu_gpu_rec)
#define BO_LEN		sizeof(struct kfd_criu_bo_rec)
#define DATA_HDR_LEN	sizeof(struct kfd_criu_bo_data_hdr)
#define COUNTS_LEN	sizeof(struct kfd_criu_counts_rec)
#define QUEUE_LEN	sizeof(struct kfd_criu_queue_rec)
#define STATE_LEN	(sizeof(struct kfd_criu_queue_state_hdr) + \
			 sizeof(struct kfd_criu_queue_dyn))
#define SVM_LEN		sizeof(struct kfd_criu_svm_rec)
#define TRAP_LEN	sizeof(struct kfd_criu_trap_rec)

static const struct test_len_case test_len_cases[] = {
	{ "GPU", KFD_CRIU_REC_GPU, GPU_LEN, 0 },
	{ "GPU short", KFD_CRIU_REC_GPU, GPU_LEN - 1, -EINVAL },
	{ "GPU long", KFD_CRIU_REC_GPU, GPU_LEN + 1, -EINVAL },
	{ "GPU empty", KFD_CRIU_REC_GPU, 0, -EINVAL },
	{ "BO", KFD_CRIU_REC_BO, BO_LEN, 0 },
	{ "BO short", KFD_CRIU_REC_BO, BO_LEN - 8, -EINVAL },
	{ "BO long", KFD_CRIU_REC_BO, BO_LEN + 8, -EINVAL },
	{ "BO_DATA of one byte", KFD_CRIU_REC_BO_DATA, DATA_HDR_LEN + 1, 0 },
	{ "BO_DATA of a chunk", KFD_CRIU_REC_BO_DATA,
	  DATA_HDR_LEN + KFD_CRIU_BO_CHUNK, 0 },
	{ "BO_DATA header only", KFD_CRIU_REC_BO_DATA, DATA_HDR_LEN,
	  -EINVAL },
	{ "BO_DATA short header", KFD_CRIU_REC_BO_DATA, DATA_HDR_LEN - 1,
	  -EINVAL },
	{ "BO_DATA over a chunk", KFD_CRIU_REC_BO_DATA,
	  DATA_HDR_LEN + KFD_CRIU_BO_CHUNK + 1, -EINVAL },
	{ "BO_DATA of the record limit", KFD_CRIU_REC_BO_DATA,
	  KFD_CRIU_MAX_RECORD_LEN, -EINVAL },
	{ "COUNTS", KFD_CRIU_REC_COUNTS, COUNTS_LEN, 0 },
	{ "COUNTS short", KFD_CRIU_REC_COUNTS, COUNTS_LEN - 4, -EINVAL },
	{ "COUNTS long", KFD_CRIU_REC_COUNTS, COUNTS_LEN + 4, -EINVAL },
	{ "QUEUE without CU mask", KFD_CRIU_REC_QUEUE, QUEUE_LEN, 0 },
	{ "QUEUE with the largest CU mask", KFD_CRIU_REC_QUEUE,
	  QUEUE_LEN + KFD_CRIU_MAX_CU_MASK_BITS / 8, 0 },
	{ "QUEUE short", KFD_CRIU_REC_QUEUE, QUEUE_LEN - 4, -EINVAL },
	{ "QUEUE over the largest CU mask", KFD_CRIU_REC_QUEUE,
	  QUEUE_LEN + KFD_CRIU_MAX_CU_MASK_BITS / 8 + 4, -EINVAL },
	{ "QUEUE_STATE without control stack", KFD_CRIU_REC_QUEUE_STATE,
	  STATE_LEN, 0 },
	{ "QUEUE_STATE with the largest control stack",
	  KFD_CRIU_REC_QUEUE_STATE, STATE_LEN + KFD_CRIU_MAX_CTL_STACK_SIZE,
	  0 },
	{ "QUEUE_STATE short", KFD_CRIU_REC_QUEUE_STATE, STATE_LEN - 1,
	  -EINVAL },
	{ "QUEUE_STATE over the largest control stack",
	  KFD_CRIU_REC_QUEUE_STATE,
	  STATE_LEN + KFD_CRIU_MAX_CTL_STACK_SIZE + 1, -EINVAL },
	{ "SVM_RANGE", KFD_CRIU_REC_SVM_RANGE, SVM_LEN, 0 },
	{ "SVM_RANGE short", KFD_CRIU_REC_SVM_RANGE, SVM_LEN - 8, -EINVAL },
	{ "SVM_RANGE long", KFD_CRIU_REC_SVM_RANGE, SVM_LEN + 8, -EINVAL },
	{ "TRAP_HANDLER", KFD_CRIU_REC_TRAP_HANDLER, TRAP_LEN, 0 },
	{ "TRAP_HANDLER short", KFD_CRIU_REC_TRAP_HANDLER, TRAP_LEN - 8,
	  -EINVAL },
	{ "TRAP_HANDLER long", KFD_CRIU_REC_TRAP_HANDLER, TRAP_LEN + 8,
	  -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(test_len, test_len_cases, desc);

#define TEST_BIG_BUF	(DATA_HDR_LEN + KFD_CRIU_BO_CHUNK)
#define TEST_BIG_STREAM	(2 * KFD_CRIU_MAX_RECORD_LEN)

static void test_record_length(struct kunit *test)
{
	const struct test_len_case *p = test->param_value;
	struct test_stream *s = test->priv;
	struct kfd_criu_image_writer w;
	struct kfd_criu_image_reader r;
	struct kfd_criu_image_header hdr;
	struct kfd_criu_record rec;
	u8 *zeros, *buf;

	zeros = kunit_kzalloc(test, KFD_CRIU_MAX_RECORD_LEN, GFP_KERNEL);
	buf = kunit_kzalloc(test, TEST_BIG_BUF, GFP_KERNEL);
	s->data = kunit_kzalloc(test, TEST_BIG_STREAM, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, zeros);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_NOT_NULL(test, s->data);
	s->limit = TEST_BIG_STREAM;

	kfd_criu_image_writer_init(&w, &s->io);
	kfd_criu_image_write_header(&w, test_release);
	kfd_criu_image_write_record(&w, p->type, KFD_CRIU_RECORD_MANDATORY,
				    zeros, p->len);
	KUNIT_ASSERT_EQ(test, kfd_criu_image_write_end(&w), 0);

	kfd_criu_image_reader_init(&r, &s->io, kfd_criu_v1_records,
				   kfd_criu_v1_num_records);
	KUNIT_ASSERT_EQ(test, kfd_criu_image_read_header(&r, &hdr), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_read_record(&r, &rec, buf,
							 TEST_BIG_BUF),
			p->err);
	if (p->err)
		return;
	KUNIT_EXPECT_EQ(test, rec.type, p->type);
	KUNIT_EXPECT_EQ(test, rec.length, p->len);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_read_record(&r, &rec, buf,
							 TEST_BIG_BUF), 0);
	KUNIT_EXPECT_EQ(test, rec.type, (u32)KFD_CRIU_REC_END);
}

/*
 * Queues
 */

#define Q_COMPUTE	0	/* AQL, CWSR and EOP, on GPU 0 (GFX9, 8 XCCs) */
#define Q_PM4		1	/* PM4 without CWSR or EOP, on GPU 1 */
#define Q_SDMA		2
#define Q_XGMI		3
#define Q_GFX11		4	/* AQL with CWSR and EOP on a GFX11 GPU */

#define TEST_Q_GPUS	3
#define TEST_Q_RING	0x1000U
#define TEST_Q_EOP	0x1000U
#define TEST_Q_CWSR	0x9000U	/* the test GPU's cwsr_size */
#define TEST_Q_CTL	0x4000U	/* the test GPU's ctl_stack_size */

/* GPU 0 and 1 are the GFX9 test model, GPU 2 a one-XCC GFX11 part. */
static void test_fill_queue_gpus(struct kfd_criu_gpu_rec *gpus)
{
	test_fill_gpu(&gpus[0], TEST_GPU_A);
	test_fill_gpu(&gpus[1], TEST_GPU_B);
	test_fill_gpu(&gpus[2], TEST_GPU_C);
	gpus[2].gfx_target_version = cpu_to_le32(110000);
	gpus[2].num_xcc = cpu_to_le32(1);
}

/* A valid queue of kind @kind, with id @id and its buffers at @va. */
static void test_fill_queue(struct kfd_criu_queue_rec *q, unsigned int kind,
			    u32 id, u64 va)
{
	bool sdma = kind == Q_SDMA || kind == Q_XGMI;

	memset(q, 0, sizeof(*q));
	q->queue_id = cpu_to_le32(id);
	q->doorbell_offset = cpu_to_le32(id);
	q->ring_base = cpu_to_le64(va);
	q->ring_size = cpu_to_le32(TEST_Q_RING);
	q->read_ptr_addr = cpu_to_le64(va + 0x100000);
	q->write_ptr_addr = cpu_to_le64(va + 0x100008);
	q->priority = cpu_to_le32(7);
	q->queue_percent = cpu_to_le32(100);
	q->num_xcc = cpu_to_le32(1);
	if (sdma) {
		q->type = cpu_to_le32(kind == Q_SDMA ? KFD_IOC_QUEUE_TYPE_SDMA :
				      KFD_IOC_QUEUE_TYPE_SDMA_XGMI);
		q->sdma_engine_id = cpu_to_le32(3);
		return;
	}
	q->type = cpu_to_le32(KFD_IOC_QUEUE_TYPE_COMPUTE);
	q->ctl_stack_size = cpu_to_le32(TEST_Q_CTL);
	if (kind == Q_PM4) {
		q->gpu_index = cpu_to_le32(1);
		q->num_xcc = cpu_to_le32(8);
		return;
	}
	q->format = cpu_to_le32(KFD_CRIU_QUEUE_FORMAT_AQL);
	q->eop_base = cpu_to_le64(va + 0x200000);
	q->eop_size = cpu_to_le32(TEST_Q_EOP);
	q->ctx_save_restore_base = cpu_to_le64(va + 0x400000);
	q->ctx_save_restore_size = cpu_to_le32(TEST_Q_CWSR);
	q->gws = cpu_to_le32(1);
	q->num_cu_mask = cpu_to_le32(64);
	if (kind == Q_GFX11) {
		q->gpu_index = cpu_to_le32(2);
		return;
	}
	q->num_xcc = cpu_to_le32(8);
	q->pm4_target_xcc = cpu_to_le32(7);
}

struct test_queue_case {
	const char *desc;
	unsigned int kind;
	size_t field;
	u64 value;
	u32 num_gpus;
	int err;
};

#define Q_FIELD(f)	offsetof(struct kfd_criu_queue_rec, f)
#define Q_NONE		TEST_NO_FIELD
#define Q_VA		0x7f0000000000ULL

static const struct test_queue_case test_queue_cases[] = {
	{ "compute AQL", Q_COMPUTE, Q_NONE, 0, TEST_Q_GPUS, 0 },
	{ "compute PM4", Q_PM4, Q_NONE, 0, TEST_Q_GPUS, 0 },
	{ "SDMA", Q_SDMA, Q_NONE, 0, TEST_Q_GPUS, 0 },
	{ "SDMA-XGMI", Q_XGMI, Q_NONE, 0, TEST_Q_GPUS, 0 },
	{ "GFX11 compute", Q_GFX11, Q_NONE, 0, TEST_Q_GPUS, 0 },
	{ "largest queue id", Q_COMPUTE, Q_FIELD(queue_id),
	  KFD_CRIU_MAX_QUEUES - 1, TEST_Q_GPUS, 0 },
	{ "largest ring", Q_SDMA, Q_FIELD(ring_size), KFD_CRIU_MAX_RING_SIZE,
	  TEST_Q_GPUS, 0 },
	{ "smallest ring", Q_COMPUTE, Q_FIELD(ring_size),
	  KFD_CRIU_MIN_RING_SIZE, TEST_Q_GPUS, 0 },
	{ "priority 15", Q_COMPUTE, Q_FIELD(priority), 15, TEST_Q_GPUS, 0 },
	{ "largest CU mask", Q_COMPUTE, Q_FIELD(num_cu_mask),
	  KFD_CRIU_MAX_CU_MASK_BITS, TEST_Q_GPUS, 0 },
	{ "last doorbell", Q_SDMA, Q_FIELD(doorbell_offset),
	  KFD_CRIU_MAX_DOORBELLS - 1, TEST_Q_GPUS, 0 },
	{ "last SDMA engine", Q_XGMI, Q_FIELD(sdma_engine_id),
	  KFD_CRIU_MAX_SDMA_ENGINES - 1, TEST_Q_GPUS, 0 },
	{ "larger CWSR area", Q_COMPUTE, Q_FIELD(ctx_save_restore_size),
	  TEST_Q_CWSR + 0x1000, TEST_Q_GPUS, 0 },
	{ "queue id 1024", Q_COMPUTE, Q_FIELD(queue_id), KFD_CRIU_MAX_QUEUES,
	  TEST_Q_GPUS, -EINVAL },
	{ "GPU past the GPUs", Q_COMPUTE, Q_FIELD(gpu_index), TEST_Q_GPUS,
	  TEST_Q_GPUS, -EINVAL },
	{ "no GPUs", Q_COMPUTE, Q_NONE, 0, 0, -EINVAL },
	{ "more GPUs than an image has", Q_COMPUTE, Q_NONE, 0,
	  KFD_CRIU_MAX_GPUS + 1, -EINVAL },
	{ "type COMPUTE_AQL", Q_COMPUTE, Q_FIELD(type),
	  KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, TEST_Q_GPUS, -EINVAL },
	{ "type SDMA_BY_ENG_ID", Q_SDMA, Q_FIELD(type),
	  KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID, TEST_Q_GPUS, -EOPNOTSUPP },
	{ "type 5", Q_SDMA, Q_FIELD(type), 5, TEST_Q_GPUS, -EINVAL },
	{ "format 2", Q_COMPUTE, Q_FIELD(format), 2, TEST_Q_GPUS, -EINVAL },
	{ "AQL SDMA", Q_SDMA, Q_FIELD(format), KFD_CRIU_QUEUE_FORMAT_AQL,
	  TEST_Q_GPUS, -EINVAL },
	{ "priority 16", Q_COMPUTE, Q_FIELD(priority), 16, TEST_Q_GPUS,
	  -EINVAL },
	{ "percent 101", Q_COMPUTE, Q_FIELD(queue_percent), 101, TEST_Q_GPUS,
	  -EINVAL },
	{ "PM4 target XCC 8 of 8", Q_COMPUTE, Q_FIELD(pm4_target_xcc), 8,
	  TEST_Q_GPUS, -EINVAL },
	{ "PM4 target XCC on SDMA", Q_SDMA, Q_FIELD(pm4_target_xcc), 1,
	  TEST_Q_GPUS, -EINVAL },
	{ "ring size 0", Q_COMPUTE, Q_FIELD(ring_size), 0, TEST_Q_GPUS,
	  -EINVAL },
	{ "ring below the minimum", Q_COMPUTE, Q_FIELD(ring_size), 512,
	  TEST_Q_GPUS, -EINVAL },
	{ "ring not a power of two", Q_COMPUTE, Q_FIELD(ring_size), 0x1800,
	  TEST_Q_GPUS, -EINVAL },
	{ "ring of 3 GiB", Q_COMPUTE, Q_FIELD(ring_size), 0xc0000000,
	  TEST_Q_GPUS, -EINVAL },
	{ "ring at 0", Q_COMPUTE, Q_FIELD(ring_base), 0, TEST_Q_GPUS,
	  -EINVAL },
	{ "ring not 256-byte aligned", Q_COMPUTE, Q_FIELD(ring_base),
	  Q_VA + 0x80, TEST_Q_GPUS, -EINVAL },
	{ "ring past the VA limit", Q_SDMA, Q_FIELD(ring_base),
	  KFD_CRIU_MAX_VA - 0x800, TEST_Q_GPUS, -EINVAL },
	{ "read pointer at 0", Q_COMPUTE, Q_FIELD(read_ptr_addr), 0,
	  TEST_Q_GPUS, -EINVAL },
	{ "read pointer not aligned", Q_COMPUTE, Q_FIELD(read_ptr_addr),
	  Q_VA + 2, TEST_Q_GPUS, -EINVAL },
	{ "write pointer past the VA limit", Q_SDMA, Q_FIELD(write_ptr_addr),
	  KFD_CRIU_MAX_VA, TEST_Q_GPUS, -EINVAL },
	{ "EOP size without a buffer", Q_COMPUTE, Q_FIELD(eop_base), 0,
	  TEST_Q_GPUS, -EINVAL },
	{ "EOP buffer without a size", Q_COMPUTE, Q_FIELD(eop_size), 0,
	  TEST_Q_GPUS, -EINVAL },
	{ "EOP size not in dwords", Q_COMPUTE, Q_FIELD(eop_size), 0x1002,
	  TEST_Q_GPUS, -EINVAL },
	{ "EOP size above the maximum", Q_COMPUTE, Q_FIELD(eop_size),
	  KFD_CRIU_MAX_EOP_SIZE + 4, TEST_Q_GPUS, -EINVAL },
	{ "EOP not 256-byte aligned", Q_COMPUTE, Q_FIELD(eop_base),
	  Q_VA + 0x200010, TEST_Q_GPUS, -EINVAL },
	{ "CWSR size without an area", Q_COMPUTE,
	  Q_FIELD(ctx_save_restore_base), 0, TEST_Q_GPUS, -EINVAL },
	{ "CWSR area without a size", Q_COMPUTE,
	  Q_FIELD(ctx_save_restore_size), 0, TEST_Q_GPUS, -EINVAL },
	{ "CWSR smaller than the GPU's", Q_COMPUTE,
	  Q_FIELD(ctx_save_restore_size), TEST_Q_CWSR - 0x1000, TEST_Q_GPUS,
	  -EINVAL },
	{ "CWSR areas past the VA limit", Q_COMPUTE,
	  Q_FIELD(ctx_save_restore_base), KFD_CRIU_MAX_VA - 0x40000,
	  TEST_Q_GPUS, -EINVAL },
	{ "CWSR not page aligned", Q_COMPUTE, Q_FIELD(ctx_save_restore_base),
	  Q_VA + 0x400800, TEST_Q_GPUS, -EINVAL },
	{ "control stack not the GPU's", Q_COMPUTE, Q_FIELD(ctl_stack_size),
	  TEST_Q_CTL - 0x1000, TEST_Q_GPUS, -EINVAL },
	{ "PM4 control stack not the GPU's", Q_PM4, Q_FIELD(ctl_stack_size),
	  0, TEST_Q_GPUS, -EINVAL },
	{ "doorbell 1024", Q_COMPUTE, Q_FIELD(doorbell_offset),
	  KFD_CRIU_MAX_DOORBELLS, TEST_Q_GPUS, -EINVAL },
	{ "SDMA engine on compute", Q_COMPUTE, Q_FIELD(sdma_engine_id), 1,
	  TEST_Q_GPUS, -EINVAL },
	{ "SDMA engine 16", Q_SDMA, Q_FIELD(sdma_engine_id),
	  KFD_CRIU_MAX_SDMA_ENGINES, TEST_Q_GPUS, -EINVAL },
	{ "GWS 2", Q_COMPUTE, Q_FIELD(gws), 2, TEST_Q_GPUS, -EINVAL },
	{ "GWS on SDMA", Q_SDMA, Q_FIELD(gws), 1, TEST_Q_GPUS, -EINVAL },
	{ "CU mask of 33 bits", Q_COMPUTE, Q_FIELD(num_cu_mask), 33,
	  TEST_Q_GPUS, -EINVAL },
	{ "CU mask above the maximum", Q_COMPUTE, Q_FIELD(num_cu_mask),
	  KFD_CRIU_MAX_CU_MASK_BITS + 32, TEST_Q_GPUS, -EINVAL },
	{ "CU mask on SDMA", Q_SDMA, Q_FIELD(num_cu_mask), 32, TEST_Q_GPUS,
	  -EINVAL },
	{ "one XCC of eight", Q_COMPUTE, Q_FIELD(num_xcc), 1, TEST_Q_GPUS,
	  -EINVAL },
	{ "no XCC", Q_GFX11, Q_FIELD(num_xcc), 0, TEST_Q_GPUS, -EINVAL },
	{ "SDMA on eight XCCs", Q_SDMA, Q_FIELD(num_xcc), 8, TEST_Q_GPUS,
	  -EINVAL },
	{ "SDMA with an EOP buffer", Q_SDMA, Q_FIELD(eop_size), 0x1000,
	  TEST_Q_GPUS, -EINVAL },
	{ "SDMA with a control stack", Q_XGMI, Q_FIELD(ctl_stack_size),
	  TEST_Q_CTL, TEST_Q_GPUS, -EINVAL },
	{ "SDMA with a CWSR area", Q_SDMA, Q_FIELD(ctx_save_restore_base),
	  Q_VA + 0x400000, TEST_Q_GPUS, -EINVAL },
	{ "reserved set", Q_COMPUTE, Q_FIELD(reserved), 1, TEST_Q_GPUS,
	  -EINVAL },
	{ "reserved2 set", Q_SDMA, Q_FIELD(reserved2), 1, TEST_Q_GPUS,
	  -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(test_queue, test_queue_cases, desc);

/* The fields before queue_id are __le64, the others __le32. */
static void test_set_queue_field(struct kfd_criu_queue_rec *q, size_t field,
				 u64 value)
{
	__le64 v64 = cpu_to_le64(value);
	__le32 v32 = cpu_to_le32((u32)value);

	if (field < Q_FIELD(queue_id))
		memcpy((u8 *)q + field, &v64, 8);
	else
		memcpy((u8 *)q + field, &v32, 4);
}

static void test_validate_queue(struct kunit *test)
{
	const struct test_queue_case *p = test->param_value;
	struct kfd_criu_gpu_rec gpus[TEST_Q_GPUS];
	struct kfd_criu_queue_rec q;

	test_fill_queue_gpus(gpus);
	test_fill_queue(&q, p->kind, 1, Q_VA);
	if (p->field != TEST_NO_FIELD)
		test_set_queue_field(&q, p->field, p->value);
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_queue(&q, gpus, p->num_gpus),
			p->err);
}

/* The unsupported-feature table: which queue types CHECKPOINT refuses. */
struct test_carried_case {
	const char *desc;
	u32 type;
	int err;
};

static const struct test_carried_case test_carried_cases[] = {
	{ "compute", KFD_IOC_QUEUE_TYPE_COMPUTE, 0 },
	{ "compute AQL", KFD_IOC_QUEUE_TYPE_COMPUTE_AQL, 0 },
	{ "SDMA", KFD_IOC_QUEUE_TYPE_SDMA, 0 },
	{ "SDMA-XGMI", KFD_IOC_QUEUE_TYPE_SDMA_XGMI, 0 },
	{ "SDMA by engine id", KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID, -EOPNOTSUPP },
	{ "type 5", 5, -EOPNOTSUPP },
	{ "type ~0", ~0U, -EOPNOTSUPP },
};

KUNIT_ARRAY_PARAM_DESC(test_carried, test_carried_cases, desc);

static void test_queue_type_carried(struct kunit *test)
{
	const struct test_carried_case *p = test->param_value;

	KUNIT_EXPECT_EQ(test, kfd_criu_queue_type_carried(p->type), p->err);
}

static void test_queue_len(struct kunit *test)
{
	struct kfd_criu_queue_rec q = { };
	const u32 base = sizeof(q);

	KUNIT_EXPECT_EQ(test, kfd_criu_queue_len(&q), base);
	q.num_cu_mask = cpu_to_le32(32);
	KUNIT_EXPECT_EQ(test, kfd_criu_queue_len(&q), base + 4);
	q.num_cu_mask = cpu_to_le32(KFD_CRIU_MAX_CU_MASK_BITS);
	KUNIT_EXPECT_EQ(test, kfd_criu_queue_len(&q), base + 128);
	/* Out of range counts still give a length, never a wrapped one. */
	q.num_cu_mask = cpu_to_le32(~0U);
	KUNIT_EXPECT_EQ(test, kfd_criu_queue_len(&q), base + 132);
}

/* A queue of a set: kind, id, doorbell and where its buffers are, in MB. */
struct test_set_queue {
	unsigned int kind;
	u32 id;
	u32 doorbell;
	u32 ring_mb;
	u32 eop_mb;
	u32 cwsr_mb;
};

struct test_queues_case {
	const char *desc;
	struct test_set_queue q[TEST_MAX_SET];
	u32 num;
	int err;
};

static const struct test_queues_case test_queues_cases[] = {
	{ "no queues", { }, 0, 0 },
	{ "one of each", { { Q_COMPUTE, 1, 1, 16, 17, 18 },
			   { Q_PM4, 2, 2, 32, 0, 0 },
			   { Q_SDMA, 3, 3, 48, 0, 0 },
			   { Q_XGMI, 4, 4, 64, 0, 0 },
			   { Q_GFX11, 5, 5, 80, 81, 82 } }, 5, 0 },
	{ "ids descend", { { Q_COMPUTE, 2, 1, 16, 17, 18 },
			   { Q_SDMA, 1, 2, 48, 0, 0 } }, 2, -EINVAL },
	{ "id repeats", { { Q_COMPUTE, 1, 1, 16, 17, 18 },
			  { Q_SDMA, 1, 2, 48, 0, 0 } }, 2, -EEXIST },
	{ "doorbell repeats on a GPU", { { Q_COMPUTE, 1, 9, 16, 17, 18 },
					 { Q_SDMA, 2, 9, 48, 0, 0 } }, 2,
	  -EEXIST },
	{ "doorbell repeats on two GPUs", { { Q_COMPUTE, 1, 9, 16, 17, 18 },
					    { Q_PM4, 2, 9, 48, 0, 0 } }, 2,
	  0 },
	{ "rings overlap", { { Q_SDMA, 1, 1, 16, 0, 0 },
			     { Q_XGMI, 2, 2, 16, 0, 0 } }, 2, -EINVAL },
	{ "ring in a CWSR area", { { Q_COMPUTE, 1, 1, 16, 17, 18 },
				   { Q_SDMA, 2, 2, 18, 0, 0 } }, 2, -EINVAL },
	{ "EOP buffer on a ring", { { Q_SDMA, 1, 1, 20, 0, 0 },
				    { Q_COMPUTE, 2, 2, 16, 20, 24 } }, 2,
	  -EINVAL },
	{ "own ring in own CWSR area", { { Q_COMPUTE, 1, 1, 18, 17, 18 } }, 1,
	  -EINVAL },
	{ "GWS on two queues of a GPU", { { Q_COMPUTE, 1, 1, 16, 17, 18 },
					  { Q_COMPUTE, 2, 2, 32, 33, 34 } }, 2,
	  -EINVAL },
	{ "GWS on one queue of each GPU", { { Q_COMPUTE, 1, 1, 16, 17, 18 },
					    { Q_GFX11, 2, 2, 32, 33, 34 } }, 2,
	  0 },
	{ "same ring on two GPUs", { { Q_COMPUTE, 1, 1, 16, 17, 18 },
				     { Q_PM4, 2, 2, 16, 0, 0 } }, 2, 0 },
	{ "an invalid record", { { Q_COMPUTE, 1, 1, 16, 17, 18 },
				 { Q_SDMA, 2, 2, 0, 0, 0 } }, 2, -EINVAL },
	{ "an unsupported record", { { Q_COMPUTE, 1, 1, 16, 17, 18 },
				     { Q_XGMI + 10, 2, 2, 48, 0, 0 } }, 2,
	  -EOPNOTSUPP },
};

KUNIT_ARRAY_PARAM_DESC(test_queues, test_queues_cases, desc);

static void test_make_queue(struct kfd_criu_queue_rec *q,
			    const struct test_set_queue *s)
{
	const u64 mb = 0x100000, base = Q_VA;

	test_fill_queue(q, s->kind > Q_GFX11 ? Q_SDMA : s->kind, s->id,
			base + s->ring_mb * mb);
	if (s->kind > Q_GFX11)
		q->type = cpu_to_le32(KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID);
	if (!s->ring_mb)
		q->ring_base = 0;
	q->doorbell_offset = cpu_to_le32(s->doorbell);
	q->read_ptr_addr = cpu_to_le64(base - mb);
	q->write_ptr_addr = cpu_to_le64(base - mb + 8);
	if (q->eop_base)
		q->eop_base = cpu_to_le64(base + s->eop_mb * mb);
	if (q->ctx_save_restore_base)
		q->ctx_save_restore_base = cpu_to_le64(base + s->cwsr_mb * mb);
}

static void test_check_queues(struct kunit *test)
{
	const struct test_queues_case *p = test->param_value;
	struct kfd_criu_gpu_rec gpus[TEST_Q_GPUS];
	struct kfd_criu_queue_rec *q;
	u32 i;

	q = kunit_kzalloc(test, TEST_MAX_SET * sizeof(*q), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, q);
	test_fill_queue_gpus(gpus);
	for (i = 0; i < p->num; i++)
		test_make_queue(&q[i], &p->q[i]);
	KUNIT_EXPECT_EQ(test, kfd_criu_check_queues(q, p->num, gpus,
						    TEST_Q_GPUS), p->err);
}

/* The eighth CWSR area of a queue ends 8 * cwsr_size after its base. */
static void test_check_queues_xcc_span(struct kunit *test)
{
	struct kfd_criu_gpu_rec gpus[TEST_Q_GPUS];
	struct kfd_criu_queue_rec q[2];
	u64 cwsr;

	test_fill_queue_gpus(gpus);
	test_fill_queue(&q[0], Q_COMPUTE, 1, Q_VA);
	test_fill_queue(&q[1], Q_SDMA, 2, Q_VA + 0x10000000);
	q[1].doorbell_offset = cpu_to_le32(2);
	cwsr = le64_to_cpu(q[0].ctx_save_restore_base);
	q[1].ring_base = cpu_to_le64(cwsr + 8 * TEST_Q_CWSR - TEST_Q_RING);
	KUNIT_EXPECT_EQ(test, kfd_criu_check_queues(q, 2, gpus, TEST_Q_GPUS),
			-EINVAL);
	q[1].ring_base = cpu_to_le64(cwsr + 8 * TEST_Q_CWSR);
	KUNIT_EXPECT_EQ(test, kfd_criu_check_queues(q, 2, gpus, TEST_Q_GPUS),
			0);
	KUNIT_EXPECT_EQ(test, kfd_criu_check_queues(q, KFD_CRIU_MAX_QUEUES + 1,
						    gpus, TEST_Q_GPUS),
			-EINVAL);
}

/*
 * The MQD whitelist: each case sets one field of a valid state. Every
 * whitelist entry needs a refused case on a queue it applies to
 * (test_mqd_whitelist_covered()).
 */
struct test_state_case {
	const char *desc;
	unsigned int kind;
	const char *name;	/* the dynamic field, or another check */
	size_t field;
	u64 value;
	int err;
};

#define DYN_FIELD(f)	offsetof(struct kfd_criu_queue_dyn, f)
#define HDR_BASE	0x100
#define HDR_FIELD(f)	(HDR_BASE + offsetof(struct kfd_criu_queue_state_hdr, f))
#define S_NONE		TEST_NO_FIELD

static const struct test_state_case test_state_cases[] = {
	{ "compute AQL", Q_COMPUTE, "", S_NONE, 0, 0 },
	{ "compute PM4", Q_PM4, "", S_NONE, 0, 0 },
	{ "SDMA", Q_SDMA, "", S_NONE, 0, 0 },
	{ "SDMA-XGMI", Q_XGMI, "", S_NONE, 0, 0 },
	{ "GFX11 compute", Q_GFX11, "", S_NONE, 0, 0 },
	{ "PM4 rptr on the last dword", Q_PM4, "rptr", DYN_FIELD(rptr),
	  TEST_Q_RING / 4 - 1, 0 },
	{ "PM4 rptr past the ring", Q_PM4, "rptr", DYN_FIELD(rptr),
	  TEST_Q_RING / 4, -EINVAL },
	{ "AQL rptr past the ring", Q_COMPUTE, "rptr", DYN_FIELD(rptr),
	  TEST_Q_RING / 4, -EINVAL },
	{ "AQL rptr inside a packet", Q_COMPUTE, "rptr", DYN_FIELD(rptr),
	  0x48, -EINVAL },
	{ "AQL wptr inside a packet", Q_COMPUTE, "wptr", DYN_FIELD(wptr),
	  0x1044, -EINVAL },
	{ "PM4 wptr anywhere", Q_PM4, "wptr", DYN_FIELD(wptr), U64_MAX, 0 },
	{ "SDMA rptr not in dwords", Q_SDMA, "rptr", DYN_FIELD(rptr), 0x102,
	  -EINVAL },
	{ "SDMA rptr past wptr", Q_SDMA, "rptr", DYN_FIELD(rptr), 0x204,
	  -EINVAL },
	{ "SDMA wptr below rptr", Q_SDMA, "wptr", DYN_FIELD(wptr), 0xfc,
	  -EINVAL },
	{ "SDMA wptr a ring ahead", Q_SDMA, "wptr", DYN_FIELD(wptr),
	  0x100 + TEST_Q_RING, 0 },
	{ "SDMA wptr over a ring ahead", Q_XGMI, "wptr", DYN_FIELD(wptr),
	  0x104 + TEST_Q_RING, -EINVAL },
	{ "SDMA wptr not in dwords", Q_SDMA, "wptr", DYN_FIELD(wptr), 0x201,
	  -EINVAL },
	{ "control stack empty", Q_COMPUTE, "cntl_stack_offset",
	  DYN_FIELD(cntl_stack_offset), TEST_Q_CTL, 0 },
	{ "control stack offset past its end", Q_COMPUTE, "cntl_stack_offset",
	  DYN_FIELD(cntl_stack_offset), TEST_Q_CTL + 4, -EINVAL },
	{ "control stack offset not in dwords", Q_GFX11, "cntl_stack_offset",
	  DYN_FIELD(cntl_stack_offset), 0x3002, -EINVAL },
	{ "control stack offset without CWSR", Q_PM4, "cntl_stack_offset",
	  DYN_FIELD(cntl_stack_offset), 4, -EINVAL },
	{ "work-group state at the CWSR end", Q_COMPUTE, "wg_state_offset",
	  DYN_FIELD(wg_state_offset), TEST_Q_CWSR, 0 },
	{ "work-group state past the CWSR end", Q_COMPUTE, "wg_state_offset",
	  DYN_FIELD(wg_state_offset), TEST_Q_CWSR + 4, -EINVAL },
	{ "work-group state in the control stack", Q_GFX11,
	  "wg_state_offset", DYN_FIELD(wg_state_offset), TEST_Q_CTL - 4,
	  -EINVAL },
	{ "work-group state on SDMA", Q_SDMA, "wg_state_offset",
	  DYN_FIELD(wg_state_offset), TEST_Q_CTL, -EINVAL },
	{ "EOP rptr on the last dword", Q_COMPUTE, "eop_rptr",
	  DYN_FIELD(eop_rptr), TEST_Q_EOP / 4 - 1, 0 },
	{ "EOP rptr past the buffer", Q_COMPUTE, "eop_rptr",
	  DYN_FIELD(eop_rptr), TEST_Q_EOP / 4, -EINVAL },
	{ "EOP wptr past the buffer", Q_GFX11, "eop_wptr",
	  DYN_FIELD(eop_wptr), TEST_Q_EOP / 4, -EINVAL },
	{ "EOP wptr with no buffer", Q_PM4, "eop_wptr", DYN_FIELD(eop_wptr), 1,
	  -EINVAL },
	{ "EOP rptr on SDMA", Q_XGMI, "eop_rptr", DYN_FIELD(eop_rptr), 1,
	  -EINVAL },
	{ "control stack longer than live", Q_COMPUTE, "data_len",
	  HDR_FIELD(data_len), 0x1004, -EINVAL },
	{ "control stack shorter than live", Q_COMPUTE, "data_len",
	  HDR_FIELD(data_len), 0xffc, -EINVAL },
	{ "control stack on GFX11", Q_GFX11, "data_len", HDR_FIELD(data_len),
	  0x1000, -EINVAL },
	{ "control stack on SDMA", Q_SDMA, "data_len", HDR_FIELD(data_len), 4,
	  -EINVAL },
	{ "last XCC", Q_COMPUTE, "xcc", HDR_FIELD(xcc), 7, 0 },
	{ "XCC 8 of 8", Q_COMPUTE, "xcc", HDR_FIELD(xcc), 8, -EINVAL },
	{ "XCC 1 of SDMA", Q_SDMA, "xcc", HDR_FIELD(xcc), 1, -EINVAL },
	{ "reserved set", Q_PM4, "reserved", HDR_FIELD(reserved), 1,
	  -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(test_state, test_state_cases, desc);

/* A valid preempted state of a queue of kind @kind. */
static void test_fill_state(struct kfd_criu_queue_state_hdr *hdr,
			    struct kfd_criu_queue_dyn *dyn, unsigned int kind)
{
	memset(hdr, 0, sizeof(*hdr));
	memset(dyn, 0, sizeof(*dyn));
	switch (kind) {
	case Q_SDMA:
	case Q_XGMI:
		dyn->rptr = cpu_to_le64(0x100);
		dyn->wptr = cpu_to_le64(0x200);
		return;
	case Q_PM4:
		dyn->rptr = cpu_to_le64(5);
		dyn->wptr = cpu_to_le64(0x10007);
		return;
	}
	dyn->rptr = cpu_to_le64(0x40);
	dyn->wptr = cpu_to_le64(0x1040);
	dyn->cntl_stack_offset = cpu_to_le32(0x3000);
	dyn->wg_state_offset = cpu_to_le32(0x5000);
	dyn->eop_rptr = cpu_to_le32(2);
	dyn->eop_wptr = cpu_to_le32(4);
	if (kind == Q_COMPUTE)
		hdr->data_len = cpu_to_le32(TEST_Q_CTL - 0x3000);
}

static void test_set_state_field(struct kfd_criu_queue_state_hdr *hdr,
				 struct kfd_criu_queue_dyn *dyn, size_t field,
				 u64 value)
{
	__le64 v64 = cpu_to_le64(value);
	__le32 v32 = cpu_to_le32((u32)value);

	if (field >= HDR_BASE)
		memcpy((u8 *)hdr + field - HDR_BASE, &v32, 4);
	else if (field < DYN_FIELD(cntl_stack_offset))
		memcpy((u8 *)dyn + field, &v64, 8);
	else
		memcpy((u8 *)dyn + field, &v32, 4);
}

static void test_validate_queue_state(struct kunit *test)
{
	const struct test_state_case *p = test->param_value;
	struct kfd_criu_gpu_rec gpus[TEST_Q_GPUS];
	struct kfd_criu_queue_state_hdr hdr;
	const struct kfd_criu_gpu_rec *gpu;
	struct kfd_criu_queue_dyn dyn;
	struct kfd_criu_queue_rec q;

	test_fill_queue_gpus(gpus);
	test_fill_queue(&q, p->kind, 1, Q_VA);
	KUNIT_ASSERT_EQ(test, kfd_criu_validate_queue(&q, gpus, TEST_Q_GPUS), 0);
	test_fill_state(&hdr, &dyn, p->kind);
	if (p->field != TEST_NO_FIELD)
		test_set_state_field(&hdr, &dyn, p->field, p->value);
	/* A cntl_stack_offset change moves the live control stack. */
	if (p->field == DYN_FIELD(cntl_stack_offset) && !p->err &&
	    p->kind == Q_COMPUTE)
		hdr.data_len = cpu_to_le32(TEST_Q_CTL - (u32)p->value);
	gpu = &gpus[le32_to_cpu(q.gpu_index)];
	KUNIT_EXPECT_EQ(test,
			kfd_criu_validate_queue_state(&q, gpu, &hdr, &dyn),
			p->err);
}

/* The kind of queue each case kind is, in whitelist classes. */
static u32 test_kind_classes(unsigned int kind)
{
	struct kfd_criu_queue_rec q;

	test_fill_queue(&q, kind, 1, Q_VA);
	return kfd_criu_queue_classes(&q);
}

static void test_mqd_whitelist_covered(struct kunit *test)
{
	const struct kfd_criu_mqd_field *f;
	const struct test_state_case *c;
	size_t i, j;
	bool found;

	KUNIT_EXPECT_GT(test, kfd_criu_mqd_whitelist_len, 0);
	for (i = 0; i < kfd_criu_mqd_whitelist_len; i++) {
		f = &kfd_criu_mqd_whitelist[i];
		found = false;
		for (j = 0; j < ARRAY_SIZE(test_state_cases) && !found; j++) {
			c = &test_state_cases[j];
			found = c->err && !strcmp(c->name, f->name) &&
				c->field == f->offset &&
				(test_kind_classes(c->kind) & f->classes);
		}
		if (!found)
			KUNIT_FAIL(test, "whitelist entry %zu (%s) has no refused case",
				   i, f->name);
		KUNIT_EXPECT_TRUE(test, f->size == 4 || f->size == 8);
		KUNIT_EXPECT_LE(test, (size_t)f->offset + f->size,
				sizeof(struct kfd_criu_queue_dyn));
	}
}

/* Every byte of the dynamic struct is some whitelist entry's. */
static void test_mqd_whitelist_complete(struct kunit *test)
{
	u8 covered[sizeof(struct kfd_criu_queue_dyn)] = { };
	size_t i;

	for (i = 0; i < kfd_criu_mqd_whitelist_len; i++)
		memset(covered + kfd_criu_mqd_whitelist[i].offset, 1,
		       kfd_criu_mqd_whitelist[i].size);
	for (i = 0; i < sizeof(covered); i++)
		KUNIT_EXPECT_EQ(test, covered[i], 1);
}

/* The walk's two queues, their GPUs, and the cursor. */
struct test_walk {
	struct kfd_criu_gpu_rec gpus[TEST_Q_GPUS];
	struct kfd_criu_queue_rec q[2];
	struct kfd_criu_queue_cursor cur;
};

static int test_walk_state(struct test_walk *w,
			   const struct kfd_criu_queue_state_hdr *hdr,
			   const struct kfd_criu_queue_dyn *dyn, u32 len)
{
	return kfd_criu_queue_state_check(&w->cur, w->q, 2, w->gpus, hdr, dyn,
					  len);
}

/* Walks the states of a GFX9 compute queue (8 XCCs) and an SDMA queue. */
static void test_queue_state_walk(struct kunit *test)
{
	const u32 fixed = sizeof(struct kfd_criu_queue_state_hdr) +
			  sizeof(struct kfd_criu_queue_dyn);
	struct kfd_criu_queue_state_hdr hdr, sdma_hdr;
	struct kfd_criu_queue_dyn dyn, sdma_dyn;
	struct test_walk *w;
	u32 len, xcc;

	w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, w);
	test_fill_queue_gpus(w->gpus);
	test_fill_queue(&w->q[0], Q_COMPUTE, 1, Q_VA);
	test_fill_queue(&w->q[1], Q_SDMA, 2, Q_VA + 0x10000000);
	w->q[1].doorbell_offset = cpu_to_le32(2);
	KUNIT_ASSERT_EQ(test, kfd_criu_check_queues(w->q, 2, w->gpus,
						    TEST_Q_GPUS), 0);
	test_fill_state(&hdr, &dyn, Q_COMPUTE);
	test_fill_state(&sdma_hdr, &sdma_dyn, Q_SDMA);
	sdma_hdr.queue_index = cpu_to_le32(1);
	len = fixed + le32_to_cpu(hdr.data_len);

	kfd_criu_queue_cursor_init(&w->cur);
	/* The SDMA queue's state first, XCC 1 before 0: both refused. */
	KUNIT_EXPECT_EQ(test, test_walk_state(w, &sdma_hdr, &sdma_dyn, fixed),
			-EINVAL);
	hdr.xcc = cpu_to_le32(1);
	KUNIT_EXPECT_EQ(test, test_walk_state(w, &hdr, &dyn, len), -EINVAL);
	for (xcc = 0; xcc < 8; xcc++) {
		hdr.xcc = cpu_to_le32(xcc);
		/* A length that disagrees with data_len, then the right one */
		KUNIT_EXPECT_EQ(test, test_walk_state(w, &hdr, &dyn, len + 1),
				-EINVAL);
		KUNIT_EXPECT_EQ(test, test_walk_state(w, &hdr, &dyn, len), 0);
	}
	KUNIT_EXPECT_EQ(test, w->cur.queue_index, 1);
	KUNIT_EXPECT_EQ(test, w->cur.xcc, 0);
	KUNIT_EXPECT_EQ(test,
			test_walk_state(w, &sdma_hdr, &sdma_dyn, fixed - 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, test_walk_state(w, &sdma_hdr, &sdma_dyn, fixed),
			0);
	KUNIT_EXPECT_EQ(test, w->cur.queue_index, 2);
	/* Nothing more is expected. */
	KUNIT_EXPECT_EQ(test, test_walk_state(w, &sdma_hdr, &sdma_dyn, fixed),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, w->cur.queue_index, 2);
}

/*
 * Slot ids
 */

struct test_pick_case {
	const char *desc;
	u32 wanted;
	u64 taken_lo;
	u64 taken_hi;
	u32 nbits;
	u32 flags;
	int expect;
};

#define VISIBLE	KFD_CRIU_SLOT_USER_VISIBLE

static const struct test_pick_case test_pick_cases[] = {
	{ "free, internal", 5, 0, 0, 32, 0, 5 },
	{ "free, visible", 5, 0x1f, 0, 32, VISIBLE, 5 },
	{ "taken, internal: lowest free", 5, 0x2f, 0, 32, 0, 4 },
	{ "taken, visible: busy", 5, 0x20, 0, 32, VISIBLE, -EBUSY },
	{ "all taken, internal: busy", 3, 0xf, 0, 4, 0, -EBUSY },
	{ "free bit past nbits is not free", 3, 0xff, 0, 8, 0, -EBUSY },
	{ "lowest free in the second word", 0, ~0ULL, 0x4, 128, 0, 64 },
	{ "wanted in the second word", 70, ~0ULL, 0, 128, VISIBLE, 70 },
	{ "taken in the second word", 70, 0, 0x40, 128, VISIBLE, -EBUSY },
	{ "last slot", 127, 0, 0, 128, VISIBLE, 127 },
	{ "wanted past nbits", 8, 0, 0, 8, 0, -EINVAL },
	{ "no slots", 0, 0, 0, 0, 0, -EINVAL },
	{ "unknown flag", 1, 0, 0, 8, BIT(1), -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(test_pick, test_pick_cases, desc);

static void test_pick_slot(struct kunit *test)
{
	const struct test_pick_case *p = test->param_value;
	const u32 bits = 8 * sizeof(unsigned long);
	unsigned long taken[128 / (8 * sizeof(unsigned long))] = { };
	u32 i;

	for (i = 0; i < 128; i++)
		if ((i < 64 ? p->taken_lo >> i : p->taken_hi >> (i - 64)) & 1)
			taken[i / bits] |= 1UL << (i % bits);
	KUNIT_EXPECT_EQ(test, kfd_criu_pick_slot(p->wanted, taken, p->nbits,
						 p->flags), p->expect);
}

/* Which ids user mode sees, and the decision restore takes for each. */
static void test_slot_visible(struct kunit *test)
{
	unsigned long taken[1] = { 0x1 };
	u32 flags;
	bool vis;
	int kind, sdma_static;

	KUNIT_EXPECT_TRUE(test, kfd_criu_slot_user_visible(KFD_CRIU_SLOT_QUEUE_ID,
							   false));
	KUNIT_EXPECT_TRUE(test, kfd_criu_slot_user_visible(KFD_CRIU_SLOT_DOORBELL,
							   false));
	KUNIT_EXPECT_FALSE(test, kfd_criu_slot_user_visible(KFD_CRIU_SLOT_HQD,
							    true));
	KUNIT_EXPECT_TRUE(test, kfd_criu_slot_user_visible(KFD_CRIU_SLOT_SDMA,
							   true));
	KUNIT_EXPECT_FALSE(test, kfd_criu_slot_user_visible(KFD_CRIU_SLOT_SDMA,
							    false));
	for (kind = 0; kind < KFD_CRIU_SLOT_NR; kind++) {
		for (sdma_static = 0; sdma_static < 2; sdma_static++) {
			vis = kfd_criu_slot_user_visible(kind, sdma_static);
			flags = vis ? VISIBLE : 0;
			KUNIT_EXPECT_EQ(test,
					kfd_criu_pick_slot(0, taken, 4, flags),
					vis ? -EBUSY : 1);
		}
	}
	KUNIT_EXPECT_STREQ(test, kfd_criu_slot_name(KFD_CRIU_SLOT_DOORBELL),
			   "doorbell");
	KUNIT_EXPECT_STREQ(test, kfd_criu_slot_name(KFD_CRIU_SLOT_QUEUE_ID),
			   "queue id");
	KUNIT_EXPECT_STREQ(test, kfd_criu_slot_name(KFD_CRIU_SLOT_HQD),
			   "HQD slot");
	KUNIT_EXPECT_STREQ(test, kfd_criu_slot_name(KFD_CRIU_SLOT_SDMA),
			   "SDMA slot");
	KUNIT_EXPECT_STREQ(test, kfd_criu_slot_name(KFD_CRIU_SLOT_NR), "slot");
}

/*
 * Counts and SVM ranges
 */

struct test_counts_case {
	const char *desc;
	u32 queues;
	u32 ranges;
	u32 reserved;
	u32 reserved2;
	u32 num_gpus;
	int err;
};

static const struct test_counts_case test_counts_cases[] = {
	{ "queues", 3, 0, 0, 0, 1, 0 },
	{ "ranges", 0, 3, 0, 0, 1, 0 },
	{ "most of both", KFD_CRIU_MAX_QUEUES, KFD_CRIU_MAX_SVM_RANGES, 0, 0,
	  2, 0 },
	{ "both zero", 0, 0, 0, 0, 1, -EINVAL },
	{ "too many queues", KFD_CRIU_MAX_QUEUES + 1, 0, 0, 0, 1, -EINVAL },
	{ "too many ranges", 0, KFD_CRIU_MAX_SVM_RANGES + 1, 0, 0, 1,
	  -EINVAL },
	{ "queues without GPUs", 1, 0, 0, 0, 0, -EINVAL },
	{ "ranges without GPUs", 0, 1, 0, 0, 0, -EINVAL },
	{ "reserved set", 1, 0, 1, 0, 1, -EINVAL },
	{ "reserved2 set", 1, 0, 0, 1, 1, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(test_counts, test_counts_cases, desc);

static void test_validate_counts(struct kunit *test)
{
	const struct test_counts_case *p = test->param_value;
	struct kfd_criu_counts_rec rec = {
		.num_queues = cpu_to_le32(p->queues),
		.num_svm_ranges = cpu_to_le32(p->ranges),
		.reserved = cpu_to_le32(p->reserved),
		.reserved2 = cpu_to_le32(p->reserved2),
	};

	KUNIT_EXPECT_EQ(test, kfd_criu_validate_counts(&rec, p->num_gpus),
			p->err);
}

#define SVM_FIELD(f)	offsetof(struct kfd_criu_svm_rec, f)
#define SVM_START	0x7f1000000000ULL

static void test_fill_svm(struct kfd_criu_svm_rec *r, u64 start, u64 size)
{
	memset(r, 0, sizeof(*r));
	r->start = cpu_to_le64(start);
	r->size = cpu_to_le64(size);
	r->access = cpu_to_le64(BIT_ULL(0));
	r->access_in_place = cpu_to_le64(BIT_ULL(1));
	r->preferred_loc = cpu_to_le32(TEST_GPU_A);
	r->prefetch_loc = cpu_to_le32(KFD_IOCTL_SVM_LOCATION_SYSMEM);
	r->flags = cpu_to_le32(KFD_IOCTL_SVM_FLAG_HOST_ACCESS |
			       KFD_IOCTL_SVM_FLAG_COHERENT);
	r->granularity = cpu_to_le32(9);
}

struct test_svm_case {
	const char *desc;
	size_t field;
	u64 value;
	u32 num_gpus;
	int err;
};

static const struct test_svm_case test_svm_cases[] = {
	{ "valid", TEST_NO_FIELD, 0, 2, 0 },
	{ "prefetch to GPU B", SVM_FIELD(prefetch_loc), TEST_GPU_B, 2, 0 },
	{ "preferred undefined", SVM_FIELD(preferred_loc),
	  KFD_IOCTL_SVM_LOCATION_UNDEFINED, 2, 0 },
	{ "preferred system memory", SVM_FIELD(preferred_loc),
	  KFD_IOCTL_SVM_LOCATION_SYSMEM, 2, 0 },
	{ "every known flag", SVM_FIELD(flags), 0xff, 2, 0 },
	{ "largest granularity", SVM_FIELD(granularity), 0x3f, 2, 0 },
	{ "ends at the VA limit", SVM_FIELD(start), KFD_CRIU_MAX_VA - 0x200000,
	  2, 0 },
	{ "no access set", SVM_FIELD(access_in_place), 0, 2, 0 },
	{ "size 0", SVM_FIELD(size), 0, 2, -EINVAL },
	{ "size not page aligned", SVM_FIELD(size), 0x200800, 2, -EINVAL },
	{ "start not page aligned", SVM_FIELD(start), SVM_START + 8, 2,
	  -EINVAL },
	{ "past the VA limit", SVM_FIELD(start), KFD_CRIU_MAX_VA - 0x1000, 2,
	  -EINVAL },
	{ "start + size wraps", SVM_FIELD(start), 0xffffffffffe00000ULL, 2,
	  -EINVAL },
	{ "preferred on an unknown GPU", SVM_FIELD(preferred_loc),
	  TEST_GPU_NONE, 2, -EINVAL },
	{ "prefetch to an unknown GPU", SVM_FIELD(prefetch_loc), TEST_GPU_C,
	  2, -EINVAL },
	{ "unknown flag", SVM_FIELD(flags), 0x100, 2, -EINVAL },
	{ "granularity 0x40", SVM_FIELD(granularity), 0x40, 2, -EINVAL },
	{ "access for GPU 2 of 2", SVM_FIELD(access), BIT_ULL(2), 2, -EINVAL },
	{ "no access for GPU 63 of 2", SVM_FIELD(no_access), BIT_ULL(63), 2,
	  -EINVAL },
	{ "access and in place", SVM_FIELD(access), BIT_ULL(1), 2, -EINVAL },
	{ "access and no access", SVM_FIELD(no_access), BIT_ULL(0), 2,
	  -EINVAL },
	{ "in place and no access", SVM_FIELD(no_access), BIT_ULL(1), 2,
	  -EINVAL },
	{ "reserved set", SVM_FIELD(reserved), 1, 2, -EINVAL },
	{ "reserved2 set", SVM_FIELD(reserved2), 1, 2, -EINVAL },
	{ "more GPUs than an image has", TEST_NO_FIELD, 0,
	  KFD_CRIU_MAX_GPUS + 1, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(test_svm, test_svm_cases, desc);

static void test_validate_svm(struct kunit *test)
{
	const struct test_svm_case *p = test->param_value;
	const u32 num = KFD_CRIU_MAX_GPUS + 1;
	struct kfd_criu_gpu_rec *gpus;
	struct kfd_criu_svm_rec r;
	__le64 v64 = cpu_to_le64(p->value);
	__le32 v32 = cpu_to_le32((u32)p->value);
	u32 i;

	gpus = kunit_kzalloc(test, num * sizeof(*gpus), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, gpus);
	for (i = 0; i < num; i++)
		test_fill_gpu(&gpus[i], i ? TEST_GPU_B + i - 1 : TEST_GPU_A);
	test_fill_svm(&r, SVM_START, 0x200000);
	if (p->field < SVM_FIELD(preferred_loc))
		memcpy((u8 *)&r + p->field, &v64, 8);
	else if (p->field != TEST_NO_FIELD)
		memcpy((u8 *)&r + p->field, &v32, 4);
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_svm_range(&r, gpus,
							  p->num_gpus),
			p->err);
}

/* An SVM range of a set, in pages from SVM_START. */
struct test_set_svm {
	u32 page;
	u32 pages;
};

struct test_svms_case {
	const char *desc;
	struct test_set_svm r[TEST_MAX_SET];
	u32 num;
	struct test_set_bo bos[TEST_MAX_SET];
	u32 num_bos;
	int err;
};

/* BO VAs of the set tables are u32 pages from 0: ranges start at 4 GiB. */
#define SVM_SET_START	0x100000000ULL
#define SP		((u32)(SVM_SET_START / KFD_CRIU_BO_ALIGN))

static const struct test_svms_case test_svms_cases[] = {
	{ "no ranges", { }, 0, { }, 0, 0 },
	{ "sorted, apart", { { 0, 4 }, { 8, 4 }, { 16, 1 } }, 3, { }, 0, 0 },
	{ "adjacent", { { 0, 4 }, { 4, 4 } }, 2, { }, 0, 0 },
	{ "overlapping", { { 0, 4 }, { 3, 4 } }, 2, { }, 0, -EINVAL },
	{ "same start", { { 0, 4 }, { 0, 1 } }, 2, { }, 0, -EINVAL },
	{ "descending", { { 8, 4 }, { 0, 4 } }, 2, { }, 0, -EINVAL },
	{ "an invalid range", { { 0, 4 }, { 8, 0 } }, 2, { }, 0, -EINVAL },
	{ "BOs beside the ranges", { { 4, 4 }, { 12, 4 } }, 2,
	  { { 0, 1, SP, 4, 1, BO_VRAM }, { 0, 2, SP + 8, 4, 1, BO_GTT },
	    { 1, 1, SP + 16, 4, 2, BO_VRAM } }, 3, 0 },
	{ "BO over a range's end", { { 4, 4 }, { 12, 4 } }, 2,
	  { { 0, 1, SP + 7, 2, 1, BO_VRAM } }, 1, -EINVAL },
	{ "BO inside a range", { { 4, 4 }, { 12, 4 } }, 2,
	  { { 0, 1, SP + 13, 1, 1, BO_GTT } }, 1, -EINVAL },
	{ "range inside a BO", { { 4, 4 }, { 12, 4 } }, 2,
	  { { 0, 1, SP + 10, 8, 1, BO_VRAM } }, 1, -EINVAL },
	{ "BO of the second GPU only", { { 4, 4 } }, 1,
	  { { 1, 1, SP + 4, 1, 0, BO_USERPTR } }, 1, -EINVAL },
	{ "BO below the first range", { { 4, 4 } }, 1,
	  { { 0, 1, SP + 2, 2, 1, BO_VRAM } }, 1, 0 },
};

KUNIT_ARRAY_PARAM_DESC(test_svms, test_svms_cases, desc);

static void test_check_svm_ranges(struct kunit *test)
{
	const struct test_svms_case *p = test->param_value;
	struct kfd_criu_svm_rec r[TEST_MAX_SET];
	struct kfd_criu_gpu_rec gpus[2];
	struct kfd_criu_bo_rec *bos;
	u32 i;

	bos = kunit_kzalloc(test, TEST_MAX_SET * sizeof(*bos), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bos);
	test_fill_gpu(&gpus[0], TEST_GPU_A);
	test_fill_gpu(&gpus[1], TEST_GPU_B);
	for (i = 0; i < p->num; i++)
		test_fill_svm(&r[i], SVM_SET_START + (u64)p->r[i].page * 4096,
			      (u64)p->r[i].pages * 4096);
	for (i = 0; i < p->num_bos; i++)
		test_make_bo(&bos[i], &p->bos[i]);
	KUNIT_ASSERT_EQ(test, kfd_criu_check_bos(bos, p->num_bos, 2), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_check_svm_ranges(r, p->num, gpus, 2,
							bos, p->num_bos),
			p->err);
}

/* A range at @start pages of @pages pages, accessible to GPU mask @access */
static void test_cover_range(struct kfd_criu_svm_rec *r, u64 start, u64 pages,
			     u64 access, u32 flags)
{
	memset(r, 0, sizeof(*r));
	r->start = cpu_to_le64(start * SZ_4K);
	r->size = cpu_to_le64(pages * SZ_4K);
	r->access = cpu_to_le64(access);
	r->flags = cpu_to_le32(flags);
}

/*
 * A CWSR area as ROCm registers it (ROCT queues.c, register_svm_range():
 * GPU_ALWAYS_MAPPED, access for the queue's GPU), in one range or in
 * adjacent ones; a gap, a range without the flag or without access for
 * the GPU, or an area past the last range is not covered.
 */
static void test_svm_ranges_cover(struct kunit *test)
{
	const u32 am = KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED |
		       KFD_IOCTL_SVM_FLAG_HOST_ACCESS;
	struct kfd_criu_svm_rec r[3];

	test_cover_range(&r[0], 16, 4, BIT(1), am);
	test_cover_range(&r[1], 20, 6, BIT(1), am);
	test_cover_range(&r[2], 32, 8, BIT(0), am);
	/* One range, two adjacent ones, the first page only */
	KUNIT_EXPECT_TRUE(test, kfd_criu_svm_ranges_cover(r, 3, 16 * SZ_4K,
							  4 * SZ_4K, 1));
	KUNIT_EXPECT_TRUE(test, kfd_criu_svm_ranges_cover(r, 3, 17 * SZ_4K,
							  8 * SZ_4K, 1));
	KUNIT_EXPECT_TRUE(test, kfd_criu_svm_ranges_cover(r, 3, 32 * SZ_4K,
							  SZ_4K, 0));
	/* Into the gap, another GPU, before the first, past the last */
	KUNIT_EXPECT_FALSE(test, kfd_criu_svm_ranges_cover(r, 3, 24 * SZ_4K,
							   4 * SZ_4K, 1));
	KUNIT_EXPECT_FALSE(test, kfd_criu_svm_ranges_cover(r, 3, 16 * SZ_4K,
							   4 * SZ_4K, 0));
	KUNIT_EXPECT_FALSE(test, kfd_criu_svm_ranges_cover(r, 3, 15 * SZ_4K,
							   2 * SZ_4K, 1));
	KUNIT_EXPECT_FALSE(test, kfd_criu_svm_ranges_cover(r, 3, 36 * SZ_4K,
							   8 * SZ_4K, 0));
	/* Nothing, and an empty area, are never covered */
	KUNIT_EXPECT_FALSE(test, kfd_criu_svm_ranges_cover(r, 0, 16 * SZ_4K,
							   SZ_4K, 1));
	KUNIT_EXPECT_FALSE(test, kfd_criu_svm_ranges_cover(r, 3, 16 * SZ_4K,
							   0, 1));
	KUNIT_EXPECT_FALSE(test, kfd_criu_svm_ranges_cover(r, 3, U64_MAX,
							   SZ_4K, 1));
	/* Access in place counts; a range that is not always mapped not */
	r[1].access = 0;
	r[1].access_in_place = cpu_to_le64(BIT(1));
	KUNIT_EXPECT_TRUE(test, kfd_criu_svm_ranges_cover(r, 3, 17 * SZ_4K,
							  8 * SZ_4K, 1));
	r[1].flags = cpu_to_le32(KFD_IOCTL_SVM_FLAG_HOST_ACCESS);
	KUNIT_EXPECT_FALSE(test, kfd_criu_svm_ranges_cover(r, 3, 17 * SZ_4K,
							   8 * SZ_4K, 1));
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
	KUNIT_CASE(test_validate_event_age_bound),
	KUNIT_CASE_PARAM(test_validate_event_slot, test_slot_gen_params),
	KUNIT_CASE_PARAM(test_event_ids, test_ids_gen_params),
	KUNIT_CASE(test_event_ids_most),
	KUNIT_CASE_PARAM(test_validate_gpu, test_gpu_gen_params),
	KUNIT_CASE_PARAM(test_validate_trap, test_trap_gen_params),
	KUNIT_CASE(test_check_traps),
	KUNIT_CASE_PARAM(test_gpu_incompatible, test_compatible_gen_params),
	KUNIT_CASE(test_gpu_incompatible_no_cwsr_image),
	KUNIT_CASE_PARAM(test_map_gpus, test_map_gpus_gen_params),
	KUNIT_CASE(test_map_gpus_no_why),
	KUNIT_CASE_PARAM(test_validate_gpu_map, test_gpu_map_gen_params),
	KUNIT_CASE(test_gpu_map_most),
	KUNIT_CASE_PARAM(test_validate_bo, test_bo_gen_params),
	KUNIT_CASE(test_bo_has_contents),
	KUNIT_CASE_PARAM(test_check_bos, test_bos_gen_params),
	KUNIT_CASE_SLOW(test_check_bos_most),
	KUNIT_CASE_PARAM(test_chunk_count, test_chunk_gen_params),
	KUNIT_CASE_PARAM(test_chunk_len, test_chunk_len_gen_params),
	KUNIT_CASE(test_bo_cursor_walk),
	KUNIT_CASE(test_bo_cursor_nothing),
	KUNIT_CASE(test_gpu_round_trip),
	KUNIT_CASE_PARAM(test_record_length, test_len_gen_params),
	KUNIT_CASE_PARAM(test_validate_queue, test_queue_gen_params),
	KUNIT_CASE_PARAM(test_queue_type_carried, test_carried_gen_params),
	KUNIT_CASE(test_queue_len),
	KUNIT_CASE_PARAM(test_check_queues, test_queues_gen_params),
	KUNIT_CASE(test_check_queues_xcc_span),
	KUNIT_CASE_PARAM(test_validate_queue_state, test_state_gen_params),
	KUNIT_CASE(test_mqd_whitelist_covered),
	KUNIT_CASE(test_mqd_whitelist_complete),
	KUNIT_CASE(test_queue_state_walk),
	KUNIT_CASE_PARAM(test_pick_slot, test_pick_gen_params),
	KUNIT_CASE(test_slot_visible),
	KUNIT_CASE_PARAM(test_validate_counts, test_counts_gen_params),
	KUNIT_CASE_PARAM(test_validate_svm, test_svm_gen_params),
	KUNIT_CASE_PARAM(test_check_svm_ranges, test_svms_gen_params),
	KUNIT_CASE(test_svm_ranges_cover),
	{}
};

static struct kunit_suite kfd_criu_image_suite = {
	.name = "kfd_criu_image",
	.init = test_init,
	.test_cases = kfd_criu_image_cases,
};

kunit_test_suite(kfd_criu_image_suite);
