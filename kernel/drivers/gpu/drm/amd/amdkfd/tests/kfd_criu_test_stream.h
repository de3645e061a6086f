/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/*
 * An image stream in kernel memory for the KUnit tests: the codec writes
 * into it and reads back from it. It grows as it is written, so a test
 * can stream BO contents of several MiB.
 */

#ifndef KFD_CRIU_TEST_STREAM_H_INCLUDED
#define KFD_CRIU_TEST_STREAM_H_INCLUDED

#include <kunit/test.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>

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

#endif
