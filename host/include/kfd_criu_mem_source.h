/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * DOC: an image in memory as the codec's byte source
 *
 * The userspace readers of image streams (the fuzzer, kfdcrit) hand the
 * kernel's codec a buffer. This is that &struct kfd_criu_image_io source,
 * one copy for all of them.
 */
#ifndef KFD_CRIU_MEM_SOURCE_H
#define KFD_CRIU_MEM_SOURCE_H

#include <linux/errno.h>
#include <linux/types.h>

#include <string.h>

/**
 * struct kfd_criu_mem_source - a stream in memory
 * @data: the bytes
 * @len: bytes at @data
 * @pos: bytes consumed
 */
struct kfd_criu_mem_source {
	const u8 *data;
	size_t len;
	size_t pos;
};

/**
 * kfd_criu_mem_source_read() - &kfd_criu_image_io.read over a buffer
 * @ctx: the &struct kfd_criu_mem_source
 * @buf: receives @len bytes
 * @len: bytes wanted
 *
 * A stream that ends early is a file that ends early: what there is is
 * consumed, and the read fails.
 *
 * Return: 0, or -ENODATA past the end.
 */
static inline int kfd_criu_mem_source_read(void *ctx, void *buf, size_t len)
{
	struct kfd_criu_mem_source *src = ctx;

	if (len > src->len - src->pos) {
		src->pos = src->len;
		return -ENODATA;
	}
	memcpy(buf, src->data + src->pos, len);
	src->pos += len;
	return 0;
}

#endif /* KFD_CRIU_MEM_SOURCE_H */
