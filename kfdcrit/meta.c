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

/*
 * Field 11, a kfd_criu_drm_node message of @len bytes at @buf: its driver
 * (field 1, a string) and render minor (field 2); others are skipped.
 */
static int kc_drm_node_parse(const u8 *buf, size_t len, struct kc_meta *m)
{
	size_t pos = 0, n;
	u64 key, v;

	m->has_drm = true;
	while (pos < len) {
		if (kc_varint(buf, len, &pos, &key))
			return -EINVAL;
		if (key == (2 << 3)) {
			if (kc_varint(buf, len, &pos, &v))
				return -EINVAL;
			m->drm_minor = v;
		} else if (key == ((1 << 3) | 2)) {
			if (kc_varint(buf, len, &pos, &v) || v > len - pos)
				return -EINVAL;
			n = v < sizeof(m->drm_driver) ? v : sizeof(m->drm_driver) - 1;
			memcpy(m->drm_driver, buf + pos, n);
			m->drm_driver[n] = '\0';
			pos += v;
		} else if (kc_skip_field(buf, len, &pos, key & 7)) {
			return -EINVAL;
		}
	}
	return 0;
}

/* Field 11 at @pos, length-delimited: the node of a reattached render node */
static int kc_meta_drm_node(const u8 *buf, size_t len, size_t *pos, struct kc_meta *m)
{
	u64 n;

	if (kc_varint(buf, len, pos, &n) || n > len - *pos ||
	    kc_drm_node_parse(buf + *pos, n, m))
		return -EINVAL;
	*pos += n;
	return 0;
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
		if (key == ((11 << 3) | 2)) {
			if (kc_meta_drm_node(buf, len, &pos, m))
				return -EINVAL;
			continue;
		}
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

/**
 * kc_drm_mappings_parse() - decode the plugin's kfdcriu-drm.img
 * @buf: the file's bytes
 * @len: their count
 * @minors: receives the render minors, at most KC_DRM_MINORS_MAX
 * @n: receives their count
 *
 * A kfd_criu_drm_mappings message: the render minors whose mappings a dump
 * with the drm_reattach plugin took (field 1, repeated, packed or not).
 *
 * Return: 0, or -EINVAL for a malformed message or too many minors.
 */
int kc_drm_mappings_parse(const u8 *buf, size_t len, u32 *minors, unsigned int *n)
{
	size_t pos = 0, end;
	u64 key, v;

	*n = 0;
	while (pos < len) {
		if (kc_varint(buf, len, &pos, &key))
			return -EINVAL;
		if (key != (1 << 3) && key != ((1 << 3) | 2)) {
			if (kc_skip_field(buf, len, &pos, key & 7))
				return -EINVAL;
			continue;
		}
		if (!(key & 7)) {
			if (*n == KC_DRM_MINORS_MAX || kc_varint(buf, len, &pos, &v))
				return -EINVAL;
			minors[(*n)++] = v;
			continue;
		}
		/* Packed: varints up to the field's end */
		if (kc_varint(buf, len, &pos, &v) || v > len - pos)
			return -EINVAL;
		for (end = pos + v; pos < end;) {
			if (*n == KC_DRM_MINORS_MAX || kc_varint(buf, end, &pos, &v))
				return -EINVAL;
			minors[(*n)++] = v;
		}
	}
	return 0;
}
