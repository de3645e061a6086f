// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: kc_mkimage - images for the kfdcrit tests, made by the kernel's writer
 *
 * Usage: kc_mkimage CASE FILE, or kc_mkimage --list
 *
 * Each case is a valid image, with events only or with a GPU, its BOs
 * and their contents, written by the codec's writer
 * (kfd_criu_image_write_header(), _write_record(), _write_end()), then
 * given one defect: a field set to a value RESTORE refuses, a record
 * dropped, repeated or moved, or, after writing, a byte flipped, the
 * stream cut, bytes appended, or the header or END changed with its CRC
 * made to match again. tests/run-tests.sh knows what check must say of
 * each.
 */

#include <linux/array_size.h>
#include <linux/errno.h>
#include <linux/kfd_ioctl.h>
#include <asm/byteorder.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kfd_criu_image.h"

#define MK_MAX_RECS	32
#define MK_MAX_PAYLOAD	8208
#define MK_MAX_IMAGE	(256 * 1024)
#define MK_PAGE_SIZE	64	/* a signal page of 8 slots */

/**
 * struct mk_rec - a record to write
 * @type: record type
 * @flags: record flags
 * @len: payload bytes
 * @payload: the payload
 */
struct mk_rec {
	u32 type;
	u32 flags;
	u32 len;
	u8 payload[MK_MAX_PAYLOAD] __attribute__((aligned(8)));
};

static struct mk_rec recs[MK_MAX_RECS];
static u32 nrecs;
static u8 image[MK_MAX_IMAGE] __attribute__((aligned(8)));
static size_t image_len;

static void *add(u32 type, u32 len)
{
	struct mk_rec *r = &recs[nrecs++];

	memset(r, 0, sizeof(*r));
	r->type = type;
	r->flags = KFD_CRIU_RECORD_MANDATORY;
	r->len = len;
	return r->payload;
}

static void del(u32 i)
{
	memmove(&recs[i], &recs[i + 1], (--nrecs - i) * sizeof(recs[0]));
}

static u32 find(u32 type, u32 nth)
{
	u32 i;

	for (i = 0; i < nrecs; i++)
		if (recs[i].type == type && !nth--)
			return i;
	fprintf(stderr, "kc_mkimage: no record %u of type %u\n", nth, type);
	exit(1);
}

static void *payload(u32 type, u32 nth)
{
	return recs[find(type, nth)].payload;
}

static void add_compat(u32 num_gpus)
{
	struct kfd_criu_compat_rec *c = add(KFD_CRIU_REC_COMPAT, sizeof(*c));

	c->num_gpus = cpu_to_le32(num_gpus);
}

static void add_process(u32 num_events, u32 num_bos)
{
	struct kfd_criu_process_rec *p = add(KFD_CRIU_REC_PROCESS, sizeof(*p));

	p->xnack_enabled = cpu_to_le32(1);
	p->num_events = cpu_to_le32(num_events);
	p->signal_page_size = cpu_to_le32(MK_PAGE_SIZE);
	p->num_bos = cpu_to_le32(num_bos);
	memset(add(KFD_CRIU_REC_SIGNAL_PAGE, MK_PAGE_SIZE), 0xff, MK_PAGE_SIZE);
}

static struct kfd_criu_event_rec *add_event(u32 id, u32 type, bool signaled)
{
	struct kfd_criu_event_rec *e = add(KFD_CRIU_REC_EVENT, sizeof(*e));

	e->event_id = cpu_to_le32(id);
	e->type = cpu_to_le32(type);
	e->signaled = cpu_to_le32(signaled);
	e->event_age = cpu_to_le64(1 + signaled);
	return e;
}

/* Events only: two signal events, one signaled, and a node-change event */
static void base_events(void)
{
	nrecs = 0;
	add_compat(0);
	add_process(3, 0);
	add_event(1, KFD_IOC_EVENT_SIGNAL, true);
	add_event(2, KFD_IOC_EVENT_SIGNAL, false);
	add_event(KFD_CRIU_FIRST_NONSIGNAL_EVENT_ID, KFD_IOC_EVENT_NODECHANGE,
		  false);
}

static void add_gpu(u32 gpu_id)
{
	struct kfd_criu_gpu_rec *g = add(KFD_CRIU_REC_GPU, sizeof(*g));

	g->gpu_id = cpu_to_le32(gpu_id);
	g->gfx_target_version = cpu_to_le32(110000);
	g->device_id = cpu_to_le32(0x744c);
	g->num_xcc = cpu_to_le32(1);
	g->vram_size = cpu_to_le64(24ULL << 30);
	g->cwsr_size = cpu_to_le32(0x5e000);
	g->ctl_stack_size = cpu_to_le32(0x3000);
	g->mec_fw_version = cpu_to_le32(2280);
	g->sdma_fw_version = cpu_to_le32(22);
}

static void add_bo(u32 handle, u64 va, u64 size, u32 domain)
{
	struct kfd_criu_bo_rec *b = add(KFD_CRIU_REC_BO, sizeof(*b));

	b->va = cpu_to_le64(va);
	b->size = cpu_to_le64(size);
	b->mmap_offset = cpu_to_le64((u64)handle << 12);
	b->mapped_gpus = cpu_to_le64(1);
	b->alloc_flags = cpu_to_le32(domain);
	b->handle = cpu_to_le32(handle);
}

static void add_bo_data(u32 index, u64 offset, u32 len)
{
	struct kfd_criu_bo_data_hdr *h = add(KFD_CRIU_REC_BO_DATA,
					     sizeof(*h) + len);
	u32 i;

	h->bo_index = cpu_to_le32(index);
	h->offset = cpu_to_le64(offset);
	for (i = 0; i < len; i++)
		((u8 *)(h + 1))[i] = (u8)(index * 7 + i);
}

/* One GPU, one event, a VRAM and a GTT BO with their contents */
static void base_gpu(void)
{
	nrecs = 0;
	add_compat(1);
	add_gpu(0x8a3c);
	add_process(1, 2);
	add_event(1, KFD_IOC_EVENT_SIGNAL, true);
	add_bo(1, 0x7ff000000000ULL, 0x2000, KFD_IOC_ALLOC_MEM_FLAGS_VRAM);
	add_bo(2, 0x7ff000200000ULL, 0x1000, KFD_IOC_ALLOC_MEM_FLAGS_GTT);
	add_bo_data(0, 0, 0x2000);
	add_bo_data(1, 0, 0x1000);
}

static int mem_write(void *ctx, const void *buf, size_t len)
{
	(void)ctx;
	if (len > sizeof(image) - image_len)
		return -ENOSPC;
	memcpy(image + image_len, buf, len);
	image_len += len;
	return 0;
}

static int write_image(bool end)
{
	const struct kfd_criu_image_io io = { .write = mem_write };
	struct kfd_criu_image_writer w;
	u32 i;
	int ret;

	image_len = 0;
	kfd_criu_image_writer_init(&w, &io);
	ret = kfd_criu_image_write_header(&w, "6.12.117");
	for (i = 0; !ret && i < nrecs; i++)
		ret = kfd_criu_image_write_record(&w, recs[i].type, recs[i].flags,
						  recs[i].payload, recs[i].len);
	if (!ret && end)
		ret = kfd_criu_image_write_end(&w);
	return ret;
}

/* Offset of record @i (END is nrecs) in the written image */
static size_t rec_offset(u32 i)
{
	size_t off = sizeof(struct kfd_criu_image_header);
	u32 j;

	for (j = 0; j < i; j++)
		off += KFD_CRIU_RECORD_OVERHEAD + recs[j].len;
	return off;
}

/* Recomputes the CRC trailer of the record at @off */
static void fix_crc(size_t off)
{
	struct kfd_criu_record_header h;
	__le32 crc;
	u32 len;

	memcpy(&h, image + off, sizeof(h));
	len = le32_to_cpu(h.length);
	crc = cpu_to_le32(kfd_criu_crc32c(0, image + off, sizeof(h) + len));
	memcpy(image + off + sizeof(h) + len, &crc, sizeof(crc));
}

static void fix_header_crc(void)
{
	struct kfd_criu_image_header *h = (void *)image;

	h->crc = cpu_to_le32(kfd_criu_crc32c(0, h, offsetof(typeof(*h), crc)));
}

static void set_le32(void *p, u32 v)
{
	__le32 le = cpu_to_le32(v);

	memcpy(p, &le, sizeof(le));
}

/* Defects in the records, before writing */
static void event_intmax(void)
{
	base_events();
	set_le32(&((struct kfd_criu_event_rec *)payload(KFD_CRIU_REC_EVENT, 2))->event_id,
		 0x7fffffff);
}

static void event_dup(void)
{
	base_events();
	set_le32(&((struct kfd_criu_event_rec *)payload(KFD_CRIU_REC_EVENT, 1))->event_id, 1);
}

static void event_order(void)
{
	base_events();
	set_le32(&((struct kfd_criu_event_rec *)payload(KFD_CRIU_REC_EVENT, 0))->event_id, 3);
}

static void event_slot(void)
{
	base_events();
	set_le32(&((struct kfd_criu_event_rec *)payload(KFD_CRIU_REC_EVENT, 1))->event_id,
		 MK_PAGE_SIZE / 8 + 1);
}

static void events_extra(void)
{
	base_events();
	set_le32(&((struct kfd_criu_process_rec *)payload(KFD_CRIU_REC_PROCESS, 0))->num_events, 2);
}

static void events_missing(void)
{
	base_events();
	set_le32(&((struct kfd_criu_process_rec *)payload(KFD_CRIU_REC_PROCESS, 0))->num_events, 4);
}

static void process_bool(void)
{
	base_events();
	set_le32(&((struct kfd_criu_process_rec *)payload(KFD_CRIU_REC_PROCESS, 0))->xnack_enabled, 2);
}

static void compat_not_first(void)
{
	base_events();
	del(0);
}

static void unknown_record(u32 flags)
{
	base_events();
	memmove(&recs[3], &recs[2], (nrecs - 2) * sizeof(recs[0]));
	nrecs++;
	recs[2].type = 0x1000;
	recs[2].flags = flags;
	recs[2].len = 24;
	memset(recs[2].payload, 0x5a, 24);
}

static void unknown_mandatory(void)
{
	unknown_record(KFD_CRIU_RECORD_MANDATORY);
}

static void unknown_optional(void)
{
	unknown_record(0);
}

static void gpu_missing(void)
{
	base_gpu();
	set_le32(payload(KFD_CRIU_REC_COMPAT, 0), 2);
}

static void gpu_bad(void)
{
	base_gpu();
	set_le32(&((struct kfd_criu_gpu_rec *)payload(KFD_CRIU_REC_GPU, 0))->num_xcc, 0);
}

static void bo_overlap(void)
{
	base_gpu();
	((struct kfd_criu_bo_rec *)payload(KFD_CRIU_REC_BO, 1))->va =
		cpu_to_le64(0x7ff000001000ULL);
}

static void bo_dup(void)
{
	base_gpu();
	set_le32(&((struct kfd_criu_bo_rec *)payload(KFD_CRIU_REC_BO, 1))->handle, 1);
}

static void bo_data_offset(void)
{
	base_gpu();
	((struct kfd_criu_bo_data_hdr *)payload(KFD_CRIU_REC_BO_DATA, 1))->offset =
		cpu_to_le64(0x1000);
}

static void bo_data_missing(void)
{
	base_gpu();
	del(find(KFD_CRIU_REC_BO_DATA, 1));
}

static void event_after_bo(void)
{
	struct mk_rec ev;
	u32 i;

	base_gpu();
	i = find(KFD_CRIU_REC_EVENT, 0);
	ev = recs[i];
	del(i);
	i = find(KFD_CRIU_REC_BO, 0) + 1;
	memmove(&recs[i + 1], &recs[i], (nrecs - i) * sizeof(recs[0]));
	recs[i] = ev;
	nrecs++;
}

static void counts_zero(void)
{
	u32 i;

	base_gpu();
	i = find(KFD_CRIU_REC_PROCESS, 0) + 1;
	memmove(&recs[i + 1], &recs[i], (nrecs - i) * sizeof(recs[0]));
	nrecs++;
	memset(&recs[i], 0, sizeof(recs[i]));
	recs[i].type = KFD_CRIU_REC_COUNTS;
	recs[i].flags = KFD_CRIU_RECORD_MANDATORY;
	recs[i].len = sizeof(struct kfd_criu_counts_rec);
}

/**
 * struct mk_case - one image
 * @name: what the tests call it
 * @build: makes the records
 * @after: the defect made after writing, or 0
 */
struct mk_case {
	const char *name;
	void (*build)(void);
	int after;
};

/* What to damage after writing */
enum mk_after {
	MK_NONE,
	MK_CRC,
	MK_CUT,
	MK_NO_END,
	MK_VERSION,
	MK_MAGIC,
	MK_END_COUNT,
	MK_TRAILING,
};

static const struct mk_case cases[] = {
	{ "ok-events", base_events, MK_NONE },
	{ "ok-gpu", base_gpu, MK_NONE },
	{ "unknown-optional", unknown_optional, MK_NONE },
	{ "trailing", base_events, MK_TRAILING },
	{ "event-intmax", event_intmax, MK_NONE },
	{ "event-dup", event_dup, MK_NONE },
	{ "event-order", event_order, MK_NONE },
	{ "event-slot", event_slot, MK_NONE },
	{ "events-extra", events_extra, MK_NONE },
	{ "events-missing", events_missing, MK_NONE },
	{ "process-bool", process_bool, MK_NONE },
	{ "compat-not-first", compat_not_first, MK_NONE },
	{ "unknown-mandatory", unknown_mandatory, MK_NONE },
	{ "gpu-missing", gpu_missing, MK_NONE },
	{ "gpu-bad", gpu_bad, MK_NONE },
	{ "bo-overlap", bo_overlap, MK_NONE },
	{ "bo-dup", bo_dup, MK_NONE },
	{ "bo-data-offset", bo_data_offset, MK_NONE },
	{ "bo-data-missing", bo_data_missing, MK_NONE },
	{ "event-after-bo", event_after_bo, MK_NONE },
	{ "counts-zero", counts_zero, MK_NONE },
	{ "bad-crc", base_events, MK_CRC },
	{ "truncated", base_events, MK_CUT },
	{ "no-end", base_events, MK_NO_END },
	{ "version", base_events, MK_VERSION },
	{ "magic", base_events, MK_MAGIC },
	{ "end-count", base_events, MK_END_COUNT },
};

static void damage(int after)
{
	size_t end = rec_offset(nrecs);
	struct kfd_criu_image_header *h = (void *)image;

	switch (after) {
	case MK_CRC:	/* a byte of the second event's payload */
		image[rec_offset(find(KFD_CRIU_REC_EVENT, 1)) + 12 + 8] ^= 1;
		break;
	case MK_CUT:	/* inside the last event */
		image_len = rec_offset(nrecs - 1) + 40;
		break;
	case MK_VERSION:
		h->version = cpu_to_le32(2);
		fix_header_crc();
		break;
	case MK_MAGIC:
		h->magic[0] = 'X';
		fix_header_crc();
		break;
	case MK_END_COUNT:
		set_le32(image + end + 12, nrecs + 1);
		fix_crc(end);
		break;
	case MK_TRAILING:
		memset(image + image_len, 0xee, 16);
		image_len += 16;
		break;
	}
}

static int make(const struct mk_case *c, const char *path)
{
	FILE *f;

	c->build();
	if (write_image(c->after != MK_NO_END)) {
		fprintf(stderr, "kc_mkimage: the writer refused %s\n", c->name);
		return 1;
	}
	damage(c->after);
	f = fopen(path, "wb");
	if (!f || fwrite(image, 1, image_len, f) != image_len || fclose(f)) {
		perror(path);
		return 1;
	}
	return 0;
}

/**
 * main() - see the DOC block
 * @argc: argument count
 * @argv: arguments
 *
 * Return: 0, 1 on failure, 2 for a bad command line.
 */
int main(int argc, char **argv)
{
	size_t i;

	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (i = 0; i < ARRAY_SIZE(cases); i++)
			printf("%s\n", cases[i].name);
		return 0;
	}
	for (i = 0; argc == 3 && i < ARRAY_SIZE(cases); i++)
		if (!strcmp(argv[1], cases[i].name))
			return make(&cases[i], argv[2]);
	fprintf(stderr, "usage: %s CASE FILE | --list\n", argv[0]);
	return 2;
}
