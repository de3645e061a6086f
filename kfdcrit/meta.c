// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: the plugin's kfdcriu-<id>.img
 *
 * A kfd_criu_meta message (plugin/kfd_criu_plugin.proto) in protobuf's
 * wire format. Every field is a varint, so a few lines decode it and the
 * tool needs neither protobuf-c nor the plugin's generated code. Fields
 * of other wire types, or unknown numbers, are skipped as protobuf does.
 */

#include <linux/errno.h>

#include <string.h>

#include "kfdcrit.h"

static int kc_varint(const u8 *buf, size_t len, size_t *pos, u64 *v)
{
	unsigned int shift = 0;
	u8 b;

	*v = 0;
	do {
		if (*pos >= len || shift > 63)
			return -EINVAL;
		b = buf[(*pos)++];
		*v |= (u64)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	return 0;
}

static int kc_skip_field(const u8 *buf, size_t len, size_t *pos, u32 wire)
{
	u64 n;

	switch (wire) {
	case 0:
		return kc_varint(buf, len, pos, &n);
	case 1:
		n = 8;
		break;
	case 5:
		n = 4;
		break;
	case 2:
		if (kc_varint(buf, len, pos, &n))
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (n > len - *pos)
		return -EINVAL;
	*pos += n;
	return 0;
}

static void kc_meta_set(struct kc_meta *m, u32 field, u64 v, u32 *seen)
{
	*seen |= 1U << field;
	switch (field) {
	case 1:
		m->format_version = v;
		break;
	case 2:
		m->file_id = v;
		break;
	case 3:
		m->stream_size = v;
		break;
	case 5:
		m->alias_of = v;
		m->has_alias = true;
		break;
	case 6:
		m->render_gpu_id = v;
		m->has_render = true;
		break;
	case 7:
		m->open_flags = v;
		break;
	case 10:
		m->unused_gpu_id = v;
		m->has_unused = true;
		break;
	}
}

/**
 * kc_meta_parse() - decode a kfdcriu-<id>.img
 * @buf: the file's bytes
 * @len: their count
 * @m: receives the fields
 *
 * Return: 0, or -EINVAL for a malformed message or one without its
 * required fields (format_version, file_id, stream_size).
 */
int kc_meta_parse(const u8 *buf, size_t len, struct kc_meta *m)
{
	const u32 required = BIT(1) | BIT(2) | BIT(3);
	size_t pos = 0;
	u32 seen = 0;
	u64 key, v;

	memset(m, 0, sizeof(*m));
	while (pos < len) {
		if (kc_varint(buf, len, &pos, &key))
			return -EINVAL;
		if ((key & 7) || (key >> 3) < 1 || (key >> 3) > 10) {
			if (kc_skip_field(buf, len, &pos, key & 7))
				return -EINVAL;
			continue;
		}
		if (kc_varint(buf, len, &pos, &v))
			return -EINVAL;
		kc_meta_set(m, key >> 3, v, &seen);
	}
	return (seen & required) == required ? 0 : -EINVAL;
}
