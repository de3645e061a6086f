// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: kfd_criu_seedgen - write valid KFD CRIU images for the fuzzer
 *
 * Usage: kfd_criu_seedgen DIR
 *
 * Writes the seed corpus: images made by the kernel's own writer
 * (kfd_criu_image.c, built with the host shims) from the process and event
 * state that the selftests, the e2e worker and the mutation campaign
 * create in the VM, plus images at the edges of what the format allows:
 * signaled exception events with their data, the highest ids and ages,
 * the smallest signal page, an unknown optional record, and GPU state:
 * GPU records, BOs of every kind and the contents of the VRAM and GTT
 * ones, user-mode queues of each type the format carries with their
 * preempted state per XCC, and SVM ranges. Records are filled exactly
 * as kfd_criu_events.c fills them, so "empty", "selftest", "types" and
 * "many" are, byte for byte, the images the VM kernel (the release of
 * KSRC, which fuzz/Makefile passes as SEED_RELEASE) writes for the base processes of e2e/kfd_mutate_test.c, which prints
 * their FNV-1a hashes. Each image is read back and validated before it is
 * written.
 */

#include <linux/array_size.h>
#include <linux/build_bug.h>
#include <linux/errno.h>
#include <linux/kfd_ioctl.h>
#include <linux/stddef.h>
#include <linux/types.h>
#include <asm/byteorder.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kfd_criu_image.h"

#ifndef SEED_RELEASE
#error "SEED_RELEASE: the kernel release the VM runs (fuzz/Makefile)"
#endif
#define UNSIGNALED		(~0ULL)
#define SEED_MAX_IMAGE		(1024 * 1024)
#define SEED_MAX_EVENTS		512
#define OPTIONAL_TYPE		0x1000
#define OPTIONAL_LEN		40
#define SEED_MAX_GPUS		4
#define SEED_MAX_BOS		12
#define SEED_MAX_BO_SIZE	(8 * 4096)
#define SEED_MAX_QUEUES		4
#define SEED_MAX_SVM		4
#define SEED_STATE_FIXED	(sizeof(struct kfd_criu_queue_state_hdr) + \
				 sizeof(struct kfd_criu_queue_dyn))
#define SEED_STATES_SIZE	(64 * 1024)

/**
 * struct seed_queue - a QUEUE payload: the record, then its CU mask
 * @rec: the fixed part
 * @cu_mask: rec.num_cu_mask / 32 words of it are used
 */
struct seed_queue {
	struct kfd_criu_queue_rec rec;
	__le32 cu_mask[KFD_CRIU_MAX_CU_MASK_BITS / 32];
};

static_assert(offsetof(struct seed_queue, cu_mask) ==
	      sizeof(struct kfd_criu_queue_rec));

/**
 * struct seed - the state one seed image carries
 * @process: the PROCESS record
 * @page: signal page slots, @page_size bytes of it used
 * @page_size: 0 for no SIGNAL_PAGE record
 * @events: EVENT records, ascending ids
 * @num_events: entries at @events
 * @optional: insert an unknown optional record after PROCESS
 * @gpus: GPU records
 * @num_gpus: entries at @gpus
 * @bos: BO records, sorted by (gpu_index, handle)
 * @num_bos: entries at @bos
 * @contents: the bytes of each VRAM and GTT BO, at most %SEED_MAX_BO_SIZE
 * @queues: QUEUE records, each the fixed part and then its CU mask words
 * @num_queues: entries at @queues
 * @states: the QUEUE_STATE payloads, in order, each @state_len bytes
 * @state_len: length of each QUEUE_STATE payload
 * @num_states: payloads at @states
 * @states_used: bytes used at @states
 * @svm: SVM_RANGE records, sorted by start
 * @num_svm: entries at @svm
 */
struct seed {
	struct kfd_criu_process_rec process;
	__le64 page[KFD_SIGNAL_EVENT_LIMIT];
	u32 page_size;
	struct kfd_criu_event_rec events[SEED_MAX_EVENTS];
	u32 num_events;
	bool optional;
	struct kfd_criu_gpu_rec gpus[SEED_MAX_GPUS];
	u32 num_gpus;
	struct kfd_criu_bo_rec bos[SEED_MAX_BOS];
	u32 num_bos;
	u8 contents[SEED_MAX_BOS][SEED_MAX_BO_SIZE];
	struct seed_queue queues[SEED_MAX_QUEUES];
	u32 num_queues;
	u8 states[SEED_STATES_SIZE];
	u32 state_len[SEED_MAX_QUEUES * 16];
	u32 num_states;
	u32 states_used;
	struct kfd_criu_svm_rec svm[SEED_MAX_SVM];
	u32 num_svm;
};

/**
 * struct mem_io - a memory buffer as source and sink
 * @buf: the bytes
 * @len: bytes written, or the end when reading
 * @pos: read position
 */
struct mem_io {
	u8 buf[SEED_MAX_IMAGE];
	size_t len;
	size_t pos;
};

static struct seed seed;
static struct mem_io out;

static int mem_write(void *ctx, const void *buf, size_t len)
{
	struct mem_io *m = ctx;

	if (len > sizeof(m->buf) - m->len)
		return -ENOSPC;
	memcpy(m->buf + m->len, buf, len);
	m->len += len;
	return 0;
}

static int mem_read(void *ctx, void *buf, size_t len)
{
	struct mem_io *m = ctx;

	if (len > m->len - m->pos)
		return -ENODATA;
	memcpy(buf, m->buf + m->pos, len);
	m->pos += len;
	return 0;
}

static void seed_reset(u32 page_size)
{
	u32 i;

	memset(&seed, 0, sizeof(seed));
	seed.process.xnack_enabled = cpu_to_le32(1);
	seed.page_size = page_size;
	for (i = 0; i < KFD_SIGNAL_EVENT_LIMIT; i++)
		seed.page[i] = cpu_to_le64(UNSIGNALED);
}

static void seed_runtime(u64 r_debug)
{
	seed.process.runtime_state = cpu_to_le32(DEBUG_RUNTIME_STATE_ENABLED);
	seed.process.r_debug = cpu_to_le64(r_debug);
}

static struct kfd_criu_event_rec *seed_event(u32 id, u32 type, bool auto_reset,
					     bool signaled, u64 age)
{
	struct kfd_criu_event_rec *ev = &seed.events[seed.num_events++];

	memset(ev, 0, sizeof(*ev));
	ev->event_id = cpu_to_le32(id);
	ev->type = cpu_to_le32(type);
	ev->auto_reset = cpu_to_le32(auto_reset);
	ev->signaled = cpu_to_le32(signaled);
	ev->event_age = cpu_to_le64(age);
	return ev;
}

static struct kfd_criu_gpu_rec *seed_gpu(u32 gpu_id, u32 gfx_version)
{
	struct kfd_criu_gpu_rec *gpu = &seed.gpus[seed.num_gpus++];

	memset(gpu, 0, sizeof(*gpu));
	gpu->gpu_id = cpu_to_le32(gpu_id);
	gpu->gfx_target_version = cpu_to_le32(gfx_version);
	gpu->device_id = cpu_to_le32(0x744c);
	gpu->num_xcc = cpu_to_le32(1);
	gpu->vram_size = cpu_to_le64(24ULL << 30);
	gpu->cwsr_size = cpu_to_le32(0x5e000);
	gpu->ctl_stack_size = cpu_to_le32(0x3000);
	gpu->mec_fw_version = cpu_to_le32(2280);
	gpu->sdma_fw_version = cpu_to_le32(22);
	return gpu;
}

/* A BO; the bytes of one with contents follow a pattern of its index. */
static struct kfd_criu_bo_rec *seed_bo(u32 gpu_index, u32 handle, u64 va,
				       u64 size, u32 flags, u64 mapped_gpus)
{
	u32 index = seed.num_bos++;
	struct kfd_criu_bo_rec *bo = &seed.bos[index];
	u32 i;

	memset(bo, 0, sizeof(*bo));
	bo->va = cpu_to_le64(va);
	bo->size = cpu_to_le64(size);
	bo->mapped_gpus = cpu_to_le64(mapped_gpus);
	bo->alloc_flags = cpu_to_le32(flags);
	bo->handle = cpu_to_le32(handle);
	bo->gpu_index = cpu_to_le32(gpu_index);
	if (flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR)
		bo->userptr = cpu_to_le64(va);
	else
		bo->mmap_offset = cpu_to_le64(((u64)handle << 12) |
					      ((u64)gpu_index << 48));
	for (i = 0; i < SEED_MAX_BO_SIZE; i++)
		seed.contents[index][i] = (u8)(index * 0x35 + i * 3);
	return bo;
}

static int write_bo_data(struct kfd_criu_image_writer *w, u32 index)
{
	struct kfd_criu_bo_data_hdr hdr = { .bo_index = cpu_to_le32(index) };
	u64 size = le64_to_cpu(seed.bos[index].size);
	u32 len = kfd_criu_chunk_len(size, 0, KFD_CRIU_BO_CHUNK);
	int ret;

	if (size > SEED_MAX_BO_SIZE)
		return -E2BIG;
	ret = kfd_criu_image_begin_record(w, KFD_CRIU_REC_BO_DATA,
					  KFD_CRIU_RECORD_MANDATORY,
					  sizeof(hdr) + len);
	if (!ret)
		ret = kfd_criu_image_write_data(w, &hdr, sizeof(hdr));
	if (!ret)
		ret = kfd_criu_image_write_data(w, seed.contents[index], len);
	if (!ret)
		ret = kfd_criu_image_finish_record(w);
	return ret;
}

static struct kfd_criu_queue_rec *seed_queue_rec(u32 i)
{
	return &seed.queues[i].rec;
}

/* The QUEUE, QUEUE_STATE and SVM_RANGE records, as RESTORE reads them. */
static int write_queues_svm(struct kfd_criu_image_writer *w)
{
	u32 i, off = 0;
	int ret = 0;

	for (i = 0; !ret && i < seed.num_queues; i++)
		ret = kfd_criu_image_write_record(w, KFD_CRIU_REC_QUEUE,
						  KFD_CRIU_RECORD_MANDATORY,
						  &seed.queues[i],
						  kfd_criu_queue_len(seed_queue_rec(i)));
	for (i = 0; !ret && i < seed.num_states; i++) {
		ret = kfd_criu_image_write_record(w, KFD_CRIU_REC_QUEUE_STATE,
						  KFD_CRIU_RECORD_MANDATORY,
						  seed.states + off,
						  seed.state_len[i]);
		off += seed.state_len[i];
	}
	for (i = 0; !ret && i < seed.num_svm; i++)
		ret = kfd_criu_image_write_record(w, KFD_CRIU_REC_SVM_RANGE,
						  KFD_CRIU_RECORD_MANDATORY,
						  &seed.svm[i], sizeof(seed.svm[i]));
	return ret;
}

static int write_gpu_state(struct kfd_criu_image_writer *w)
{
	u32 i;
	int ret = 0;

	for (i = 0; !ret && i < seed.num_bos; i++)
		ret = kfd_criu_image_write_record(w, KFD_CRIU_REC_BO,
						  KFD_CRIU_RECORD_MANDATORY,
						  &seed.bos[i], sizeof(seed.bos[i]));
	if (!ret)
		ret = write_queues_svm(w);
	for (i = 0; !ret && i < seed.num_bos; i++)
		if (kfd_criu_bo_has_contents(le32_to_cpu(seed.bos[i].alloc_flags)))
			ret = write_bo_data(w, i);
	return ret;
}

static int write_image(void)
{
	const struct kfd_criu_image_io io = { .write = mem_write, .ctx = &out };
	struct kfd_criu_compat_rec compat = {
		.num_gpus = cpu_to_le32(seed.num_gpus),
	};
	struct kfd_criu_counts_rec counts = {
		.num_queues = cpu_to_le32(seed.num_queues),
		.num_svm_ranges = cpu_to_le32(seed.num_svm),
	};
	struct kfd_criu_image_writer w;
	u8 optional[OPTIONAL_LEN];
	u32 i;
	int ret;

	seed.process.num_events = cpu_to_le32(seed.num_events);
	seed.process.signal_page_size = cpu_to_le32(seed.page_size);
	seed.process.num_bos = cpu_to_le32(seed.num_bos);
	memset(optional, 0xa5, sizeof(optional));
	out.len = 0;
	kfd_criu_image_writer_init(&w, &io);
	ret = kfd_criu_image_write_header(&w, SEED_RELEASE);
	if (!ret)
		ret = kfd_criu_image_write_record(&w, KFD_CRIU_REC_COMPAT,
						  KFD_CRIU_RECORD_MANDATORY,
						  &compat, sizeof(compat));
	for (i = 0; !ret && i < seed.num_gpus; i++)
		ret = kfd_criu_image_write_record(&w, KFD_CRIU_REC_GPU,
						  KFD_CRIU_RECORD_MANDATORY,
						  &seed.gpus[i], sizeof(seed.gpus[i]));
	if (!ret)
		ret = kfd_criu_image_write_record(&w, KFD_CRIU_REC_PROCESS,
						  KFD_CRIU_RECORD_MANDATORY,
						  &seed.process, sizeof(seed.process));
	if (!ret && (seed.num_queues || seed.num_svm))
		ret = kfd_criu_image_write_record(&w, KFD_CRIU_REC_COUNTS,
						  KFD_CRIU_RECORD_MANDATORY,
						  &counts, sizeof(counts));
	if (!ret && seed.optional)
		ret = kfd_criu_image_write_record(&w, OPTIONAL_TYPE, 0, optional,
						  sizeof(optional));
	if (!ret && seed.page_size)
		ret = kfd_criu_image_write_record(&w, KFD_CRIU_REC_SIGNAL_PAGE,
						  KFD_CRIU_RECORD_MANDATORY,
						  seed.page, seed.page_size);
	for (i = 0; !ret && i < seed.num_events; i++)
		ret = kfd_criu_image_write_record(&w, KFD_CRIU_REC_EVENT,
						  KFD_CRIU_RECORD_MANDATORY,
						  &seed.events[i], sizeof(seed.events[i]));
	if (!ret)
		ret = write_gpu_state(&w);
	if (!ret)
		ret = kfd_criu_image_write_end(&w);
	return ret;
}

/* Each BO_DATA record must be the chunk the cursor expects, with its bytes */
static int check_bo_data(struct kfd_criu_bo_cursor *cur,
			 const struct kfd_criu_record *rec, const u8 *buf)
{
	struct kfd_criu_bo_data_hdr hdr;
	u32 index;
	int ret;

	if (rec->type != KFD_CRIU_REC_BO_DATA)
		return 0;
	memcpy(&hdr, buf, sizeof(hdr));
	ret = kfd_criu_bo_data_check(cur, seed.bos, seed.num_bos, &hdr,
				     rec->length);
	if (ret)
		return ret;
	index = le32_to_cpu(hdr.bo_index);
	return memcmp(buf + sizeof(hdr),
		      seed.contents[index] + le64_to_cpu(hdr.offset),
		      rec->length - sizeof(hdr)) ? -EBADMSG : 0;
}

/* Each QUEUE_STATE record must be the state the cursor expects */
static int check_queue_state(struct kfd_criu_queue_cursor *cur,
			     const struct kfd_criu_queue_rec *queues,
			     const struct kfd_criu_record *rec, const u8 *buf)
{
	struct kfd_criu_queue_state_hdr hdr;
	struct kfd_criu_queue_dyn dyn;

	if (rec->type != KFD_CRIU_REC_QUEUE_STATE)
		return 0;
	memcpy(&hdr, buf, sizeof(hdr));
	memcpy(&dyn, buf + sizeof(hdr), sizeof(dyn));
	return kfd_criu_queue_state_check(cur, queues, seed.num_queues,
					  seed.gpus, &hdr, &dyn, rec->length);
}

static void seed_queue_fixed(struct kfd_criu_queue_rec *queues)
{
	u32 i;

	for (i = 0; i < seed.num_queues; i++)
		queues[i] = seed.queues[i].rec;
}

static int check_gpu_state(void)
{
	struct kfd_criu_queue_rec queues[SEED_MAX_QUEUES];
	struct kfd_criu_counts_rec counts = {
		.num_queues = cpu_to_le32(seed.num_queues),
		.num_svm_ranges = cpu_to_le32(seed.num_svm),
	};
	u32 target[SEED_MAX_GPUS];
	u32 i;
	int ret = 0;

	for (i = 0; !ret && i < seed.num_gpus; i++)
		ret = kfd_criu_validate_gpu(&seed.gpus[i]);
	if (!ret)
		ret = kfd_criu_map_gpus(seed.gpus, seed.num_gpus, seed.gpus,
					seed.num_gpus, NULL, 0, target, NULL);
	if (!ret)
		ret = kfd_criu_check_bos(seed.bos, seed.num_bos, seed.num_gpus);
	if (!ret && (seed.num_queues || seed.num_svm))
		ret = kfd_criu_validate_counts(&counts, seed.num_gpus);
	seed_queue_fixed(queues);
	if (!ret)
		ret = kfd_criu_check_queues(queues, seed.num_queues, seed.gpus,
					    seed.num_gpus);
	if (!ret)
		ret = kfd_criu_check_svm_ranges(seed.svm, seed.num_svm, seed.gpus,
						seed.num_gpus, seed.bos,
						seed.num_bos);
	return ret;
}

/* Reads the image back with the validators RESTORE runs. */
static int check_image(void)
{
	const struct kfd_criu_image_io io = { .read = mem_read, .ctx = &out };
	static u8 buf[sizeof(struct kfd_criu_bo_data_hdr) + KFD_CRIU_BO_CHUNK];
	struct kfd_criu_image_header hdr;
	struct kfd_criu_image_reader r;
	struct kfd_criu_queue_rec queues[SEED_MAX_QUEUES];
	struct kfd_criu_queue_cursor qcur;
	struct kfd_criu_bo_cursor cur;
	struct kfd_criu_record rec;
	u32 i;
	int ret;

	out.pos = 0;
	seed_queue_fixed(queues);
	kfd_criu_queue_cursor_init(&qcur);
	kfd_criu_image_reader_init(&r, &io, kfd_criu_v1_records,
				   kfd_criu_v1_num_records);
	ret = check_gpu_state();
	kfd_criu_bo_cursor_init(&cur, seed.bos, seed.num_bos);
	if (!ret)
		ret = kfd_criu_image_read_header(&r, &hdr);
	while (!ret && !r.ended) {
		ret = kfd_criu_image_read_record(&r, &rec, buf, sizeof(buf));
		if (!ret)
			ret = check_bo_data(&cur, &rec, buf);
		if (!ret)
			ret = check_queue_state(&qcur, queues, &rec, buf);
	}
	if (!ret && (cur.bo_index != seed.num_bos ||
		     qcur.queue_index != seed.num_queues))
		ret = -ENODATA;
	if (!ret)
		ret = kfd_criu_image_expect_eof(&r);
	if (!ret)
		ret = kfd_criu_validate_process(&seed.process);
	if (!ret)
		ret = kfd_criu_check_event_ids(seed.events, seed.num_events);
	for (i = 0; !ret && i < seed.num_events; i++) {
		ret = kfd_criu_validate_event(&seed.events[i]);
		if (!ret)
			ret = kfd_criu_validate_event_slot(&seed.process,
							   &seed.events[i]);
	}
	return ret;
}

static int save(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;
	int ret;

	ret = write_image();
	if (!ret)
		ret = check_image();
	if (ret) {
		fprintf(stderr, "seed %s: error %d\n", name, ret);
		return ret;
	}
	snprintf(path, sizeof(path), "%s/%s.img", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(out.buf, 1, out.len, f) != out.len) {
		perror(path);
		if (f)
			fclose(f);
		return -EIO;
	}
	return fclose(f) ? -EIO : 0;
}

/* A process that opened /dev/kfd and did nothing else. */
static void seed_empty(void)
{
	seed_reset(0);
}

/*
 * The dumped process of the selftests and the mutation campaign: signal
 * events 1-4 and 6 (5 was destroyed), a memory event, the event page
 * mapped at its full size with four slots written, XNACK off, the runtime
 * enabled.
 */
static void seed_selftest(void)
{
	static const u32 slots[] = { 4, 100, 1000, KFD_SIGNAL_EVENT_LIMIT - 1 };
	unsigned int i;

	seed_reset(KFD_CRIU_SIGNAL_PAGE_MAX);
	seed.process.xnack_enabled = 0;
	seed_runtime(0x7f0012345000ULL);
	seed_event(1, KFD_IOC_EVENT_SIGNAL, true, true, 3);
	seed_event(2, KFD_IOC_EVENT_SIGNAL, false, true, 2);
	seed_event(3, KFD_IOC_EVENT_SIGNAL, false, false, 2);
	seed_event(4, KFD_IOC_EVENT_SIGNAL, true, false, 1);
	seed_event(6, KFD_IOC_EVENT_SIGNAL, false, false, 1);
	seed_event(KFD_CRIU_FIRST_NONSIGNAL_EVENT_ID, KFD_IOC_EVENT_MEMORY,
		   false, false, 1);
	for (i = 0; i < 4; i++)
		seed.page[slots[i]] = cpu_to_le64(0x5a5a000000000000ULL | slots[i]);
}

/* One event of every type, auto-reset for the odd types; the first set. */
static void seed_types(void)
{
	u32 type, id = KFD_CRIU_FIRST_NONSIGNAL_EVENT_ID;

	seed_reset(256 * 8);	/* the default page, never mapped */
	seed_event(1, KFD_IOC_EVENT_SIGNAL, false, true, 2);
	seed_event(2, KFD_IOC_EVENT_DEBUG_EVENT, true, false, 1);
	for (type = KFD_IOC_EVENT_NODECHANGE; type <= KFD_IOC_EVENT_MEMORY; type++)
		if (type != KFD_IOC_EVENT_DEBUG_EVENT)
			seed_event(id++, type, type & 1, false, 1);
}

/* Signaled exception events with every field of their data set. */
static void seed_exceptions(void)
{
	struct kfd_criu_event_rec *ev;

	seed_reset(0);
	ev = seed_event(KFD_CRIU_FIRST_NONSIGNAL_EVENT_ID,
			KFD_IOC_EVENT_HW_EXCEPTION, false, true, 1);
	ev->hw_reset_type = cpu_to_le32(KFD_HW_EXCEPTION_PER_ENGINE_RESET);
	ev->hw_reset_cause = cpu_to_le32(KFD_HW_EXCEPTION_ECC);
	ev->hw_memory_lost = cpu_to_le32(1);
	ev->hw_gpu_id = cpu_to_le32(0x1234);
	ev = seed_event(KFD_CRIU_FIRST_NONSIGNAL_EVENT_ID + 1,
			KFD_IOC_EVENT_MEMORY, true, true, 1);
	ev->mem_va = cpu_to_le64(0x7f00dead0000ULL);
	ev->mem_gpu_id = cpu_to_le32(0x1234);
	ev->mem_error_type = cpu_to_le32(KFD_MEM_ERR_GPU_HANG);
	ev->mem_not_present = cpu_to_le32(1);
	ev->mem_read_only = cpu_to_le32(1);
	ev->mem_no_execute = cpu_to_le32(1);
	ev->mem_imprecise = cpu_to_le32(1);
}

/* 300 signal events, a third signaled, every seventh slot written. */
static void seed_many(void)
{
	u32 id, slot;

	seed_reset(KFD_CRIU_SIGNAL_PAGE_MAX);
	for (id = 1; id <= 300; id++)
		seed_event(id, KFD_IOC_EVENT_SIGNAL, id & 1, id % 3 == 0,
			   1 + (id % 3 == 0));
	for (slot = 7; slot < KFD_SIGNAL_EVENT_LIMIT; slot += 7)
		seed.page[slot] = cpu_to_le64(slot);
}

/* The highest ids and ages the format allows. */
static void seed_limits(void)
{
	seed_reset(KFD_CRIU_SIGNAL_PAGE_MAX);
	seed_runtime(~0ULL);
	seed.process.ttmp_setup = cpu_to_le32(1);
	seed_event(KFD_SIGNAL_EVENT_LIMIT - 1, KFD_IOC_EVENT_SIGNAL, false, true,
		   KFD_CRIU_MAX_EVENT_AGE);
	seed_event(KFD_CRIU_FIRST_NONSIGNAL_EVENT_ID, KFD_IOC_EVENT_QUEUE_EVENT,
		   true, true, 2);
	seed_event(KFD_CRIU_LAST_NONSIGNAL_EVENT_ID, KFD_IOC_EVENT_SYSTEM_EVENT,
		   false, false, 1);
}

/* A one-slot page and no signal events; an optional record to skip. */
static void seed_small_page(void)
{
	seed_reset(8);
	seed.page[0] = cpu_to_le64(0);
	seed.optional = true;
	seed_event(KFD_CRIU_FIRST_NONSIGNAL_EVENT_ID + 7,
		   KFD_IOC_EVENT_PROFILE_EVENT, false, true, 5);
}

/* Modelled on e2e/kfd_worker.c: a gap in the ids, slots from 3968 written */
static void seed_worker(void)
{
	u32 slot;

	seed_reset(KFD_CRIU_SIGNAL_PAGE_MAX);
	seed_event(1, KFD_IOC_EVENT_SIGNAL, false, true, 2);
	seed_event(2, KFD_IOC_EVENT_SIGNAL, false, false, 1);
	seed_event(4, KFD_IOC_EVENT_SIGNAL, true, true, 2);
	seed_event(5, KFD_IOC_EVENT_SIGNAL, true, false, 1);
	seed_event(6, KFD_IOC_EVENT_SIGNAL, false, false, 43);
	seed_event(7, KFD_IOC_EVENT_SIGNAL, true, false, 1);
	for (slot = 3968; slot < KFD_SIGNAL_EVENT_LIMIT; slot++)
		seed.page[slot] = cpu_to_le64(0x6b66646300000000ULL | slot);
}

/*
 * The uAPI spells WRITABLE (1 << 31), which UBSan stops at when it is
 * evaluated at run time; static initializers are folded at build time.
 */
static const u32 seed_vram = KFD_IOC_ALLOC_MEM_FLAGS_VRAM |
			     KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE |
			     KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE |
			     KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE;
static const u32 seed_gtt = KFD_IOC_ALLOC_MEM_FLAGS_GTT |
			    KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE |
			    KFD_IOC_ALLOC_MEM_FLAGS_COHERENT;
static const u32 seed_userptr = KFD_IOC_ALLOC_MEM_FLAGS_USERPTR |
				KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE;
static const u32 seed_doorbell = KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL |
				 KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE |
				 KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE;
static const u32 seed_mmio = KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP |
			     KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE |
			     KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED;

/*
 * One GPU, as a runtime leaves it: a doorbell BO, a VRAM BO, a userptr BO
 * and a GTT BO, no events.
 */
static void seed_gpu_one(void)
{
	seed_reset(0);
	seed_gpu(0x8a3c, 110000);
	seed_bo(0, 1, 0x7ff000000000ULL, 8192, seed_doorbell, 1);
	seed_bo(0, 2, 0x7ff000200000ULL, 8192, seed_vram, 1);
	seed_bo(0, 3, 0x7f3300000000ULL, 3 * 4096, seed_userptr, 1);
	seed_bo(0, 4, 0x7ff000400000ULL, 4096, seed_gtt, 1);
}

/*
 * Two GPUs and every record type: events on a signal page, BOs of each
 * kind, a GTT BO mapped on both, the same userptr memory registered on
 * each GPU at the same VA, an MMIO remap BO.
 */
static void seed_gpu_two(void)
{
	seed_reset(64 * 8);
	seed_runtime(0x7f0012345000ULL);
	seed_event(1, KFD_IOC_EVENT_SIGNAL, false, true, 2);
	seed_event(2, KFD_IOC_EVENT_SIGNAL, true, false, 1);
	seed.page[1] = cpu_to_le64(7);
	seed_gpu(0x8a3c, 110000);
	seed_gpu(0x1f2e, 110000);
	seed_bo(0, 1, 0x7ff000000000ULL, 8192, seed_doorbell, 1);
	seed_bo(0, 2, 0x7ff000200000ULL, 4096, seed_vram, 1);
	seed_bo(0, 3, 0x7ff000400000ULL, 8192, seed_gtt, 3);
	seed_bo(0, 4, 0x7f3300000000ULL, 4096, seed_userptr, 1);
	seed_bo(1, 1, 0x7ff100000000ULL, 8192, seed_doorbell, 2);
	seed_bo(1, 2, 0x7ff000200000ULL, 8192, seed_vram, 2);
	seed_bo(1, 3, 0x7f3300000000ULL, 4096, seed_userptr, 2);
	seed_bo(1, 4, 0x7ff100200000ULL, 4096, seed_mmio, 2);
}

/* GPUs without any BO, of two models; gpu_ids at the ends of the range */
static void seed_gpu_no_bos(void)
{
	struct kfd_criu_gpu_rec *gpu;

	seed_reset(0);
	gpu = seed_gpu(1, 90402);
	gpu->num_xcc = cpu_to_le32(8);
	gpu->partition_mode = cpu_to_le32(1);
	gpu->vram_size = cpu_to_le64(192ULL << 30);
	seed_gpu(0xffffffff, 110000);
	seed_event(KFD_CRIU_FIRST_NONSIGNAL_EVENT_ID, KFD_IOC_EVENT_MEMORY,
		   false, false, 1);
}

/* A queue of @type on GPU @gpu, its buffers from @va on. */
static struct kfd_criu_queue_rec *seed_queue(u32 id, u32 gpu, u32 type,
					     u64 va, u32 cu_bits)
{
	struct seed_queue *sq = &seed.queues[seed.num_queues++];
	struct kfd_criu_queue_rec *q = &sq->rec;
	const struct kfd_criu_gpu_rec *g = &seed.gpus[gpu];
	u32 i;

	memset(sq, 0, sizeof(*sq));
	q->queue_id = cpu_to_le32(id);
	q->gpu_index = cpu_to_le32(gpu);
	q->type = cpu_to_le32(type);
	q->priority = cpu_to_le32(7);
	q->queue_percent = cpu_to_le32(100);
	q->ring_base = cpu_to_le64(va);
	q->ring_size = cpu_to_le32(0x10000);
	q->read_ptr_addr = cpu_to_le64(va + 0x10000 + 0x80 * id);
	q->write_ptr_addr = cpu_to_le64(va + 0x10008 + 0x80 * id);
	q->doorbell_offset = cpu_to_le32(id * 2);
	q->num_xcc = cpu_to_le32(1);
	if (type != KFD_IOC_QUEUE_TYPE_COMPUTE) {
		q->sdma_engine_id = cpu_to_le32(id % 2);
		return q;
	}
	q->format = cpu_to_le32(KFD_CRIU_QUEUE_FORMAT_AQL);
	q->eop_base = cpu_to_le64(va + 0x20000);
	q->eop_size = cpu_to_le32(4096);
	q->ctx_save_restore_base = cpu_to_le64(va + 0x100000);
	q->ctx_save_restore_size = g->cwsr_size;
	q->ctl_stack_size = g->ctl_stack_size;
	q->num_xcc = g->num_xcc;
	q->num_cu_mask = cpu_to_le32(cu_bits);
	for (i = 0; i < cu_bits / 32; i++)
		sq->cu_mask[i] = cpu_to_le32(0xffff0000U >> i);
	return q;
}

/* The preempted state of every XCC of the last queue. */
static void seed_queue_states(u64 rptr, u64 wptr, u32 ctl_offset)
{
	u32 index = seed.num_queues - 1;
	const struct kfd_criu_queue_rec *q = seed_queue_rec(index);
	const struct kfd_criu_gpu_rec *g = &seed.gpus[le32_to_cpu(q->gpu_index)];
	struct kfd_criu_queue_state_hdr hdr = { .queue_index = cpu_to_le32(index) };
	struct kfd_criu_queue_dyn dyn = {
		.rptr = cpu_to_le64(rptr),
		.wptr = cpu_to_le64(wptr),
	};
	u32 xcc, len, i;
	u8 *p;

	if (q->ctx_save_restore_size) {
		dyn.cntl_stack_offset = cpu_to_le32(ctl_offset);
		dyn.wg_state_offset = cpu_to_le32(ctl_offset + 0x8000);
		dyn.eop_rptr = cpu_to_le32(8);
		dyn.eop_wptr = cpu_to_le32(8);
	}
	if (kfd_criu_ctl_stack_in_mqd(q, g))
		hdr.data_len = cpu_to_le32(le32_to_cpu(q->ctl_stack_size) -
					   ctl_offset);
	len = SEED_STATE_FIXED + le32_to_cpu(hdr.data_len);
	for (xcc = 0; xcc < le32_to_cpu(q->num_xcc); xcc++) {
		hdr.xcc = cpu_to_le32(xcc);
		p = seed.states + seed.states_used;
		memcpy(p, &hdr, sizeof(hdr));
		memcpy(p + sizeof(hdr), &dyn, sizeof(dyn));
		for (i = SEED_STATE_FIXED; i < len; i++)
			p[i] = (u8)(xcc * 7 + i);
		seed.state_len[seed.num_states++] = len;
		seed.states_used += len;
	}
}

static struct kfd_criu_svm_rec *seed_svm(u64 start, u64 size, u32 preferred,
					 u64 access, u64 in_place)
{
	struct kfd_criu_svm_rec *r = &seed.svm[seed.num_svm++];

	memset(r, 0, sizeof(*r));
	r->start = cpu_to_le64(start);
	r->size = cpu_to_le64(size);
	r->preferred_loc = cpu_to_le32(preferred);
	r->prefetch_loc = cpu_to_le32(KFD_IOCTL_SVM_LOCATION_UNDEFINED);
	r->access = cpu_to_le64(access);
	r->access_in_place = cpu_to_le64(in_place);
	r->flags = cpu_to_le32(KFD_IOCTL_SVM_FLAG_HOST_ACCESS |
			       KFD_IOCTL_SVM_FLAG_COHERENT);
	r->granularity = cpu_to_le32(9);
	return r;
}

/*
 * One GFX11 GPU with the queues a runtime makes: an AQL compute queue with
 * its CWSR area, EOP buffer and a CU mask, and an SDMA queue, both in GTT
 * BOs; and an SVM range the GPU may access.
 */
static void seed_queues_one(void)
{
	seed_reset(0);
	seed_gpu(0x8a3c, 110000);
	seed_bo(0, 1, 0x7ff000000000ULL, 8192, seed_doorbell, 1);
	seed_bo(0, 2, 0x7ff000200000ULL, 8192, seed_gtt, 1);
	seed_queue(0, 0, KFD_IOC_QUEUE_TYPE_COMPUTE, 0x7fe000000000ULL, 64);
	seed_queue_states(0x400, 0x1400, 0x2000);
	seed_queue(1, 0, KFD_IOC_QUEUE_TYPE_SDMA, 0x7fe100000000ULL, 0);
	seed_queue_states(0x3000, 0x3100, 0);
	seed_svm(0x7f5000000000ULL, 0x200000, 0x8a3c, 1, 0);
}

/*
 * An MI300 partition (GFX9, eight XCCs: one state per XCC, each with the
 * live control stack) and a second GPU: a compute queue, an SDMA-XGMI
 * queue on the second GPU, and two SVM ranges with per-GPU access.
 */
static void seed_queues_mi300(void)
{
	struct kfd_criu_gpu_rec *gpu;

	seed_reset(0);
	gpu = seed_gpu(0x4d2, 90402);
	gpu->num_xcc = cpu_to_le32(8);
	gpu->partition_mode = cpu_to_le32(1);
	gpu->cwsr_size = cpu_to_le32(0x12000);
	gpu->ctl_stack_size = cpu_to_le32(0x4000);
	seed_gpu(0x4d3, 90402);
	seed_bo(0, 1, 0x7ff000000000ULL, 4096, seed_vram, 1);
	seed_queue(3, 0, KFD_IOC_QUEUE_TYPE_COMPUTE, 0x7fe000000000ULL, 0);
	seed_queue_states(0x80, 0x100, 0x3f00);
	seed_queue(5, 1, KFD_IOC_QUEUE_TYPE_SDMA_XGMI, 0x7fe100000000ULL, 0);
	seed_queue_states(0x100, 0x200, 0);
	seed_svm(0x7f5000000000ULL, 0x200000, KFD_IOCTL_SVM_LOCATION_SYSMEM,
		 1, 2);
	seed_svm(0x7f5000200000ULL, 0x1000, 0x4d3, 0, 3);
}

/*
 * What ROCm builds (ROCM-PROCESS.md; the KUnit twin kfd_criu_rocm): a
 * GFX 9.4.3 with two XCCs and a GFX10.3, each with its MMIO remap page,
 * doorbell page and a scratch backing VA; the event page, a 32 KiB GTT BO
 * mapped on both GPUs and marked, whose slots are the SIGNAL_PAGE
 * record; an SDMA queue pinned to engine 1 in a userptr ring with its
 * GTT rptr/wptr page; an AQL queue with userptr ring and pointers, a VRAM
 * EOP buffer and its CWSR area in an SVM range always mapped on its GPU.
 */
static void seed_rocm(void)
{
	struct kfd_criu_queue_rec *q;
	struct kfd_criu_gpu_rec *gpu;
	struct kfd_criu_svm_rec *r;

	seed_reset(KFD_CRIU_SIGNAL_PAGE_MAX);
	seed_runtime(0x200000040000ULL);
	seed_event(1, KFD_IOC_EVENT_SIGNAL, true, false, 1);
	seed_event(2, KFD_IOC_EVENT_SIGNAL, true, false, 3);
	seed.page[2] = cpu_to_le64(0x1234);
	seed_event(KFD_CRIU_FIRST_NONSIGNAL_EVENT_ID, KFD_IOC_EVENT_MEMORY,
		   false, false, 1);
	seed_event(KFD_CRIU_FIRST_NONSIGNAL_EVENT_ID + 1,
		   KFD_IOC_EVENT_HW_EXCEPTION, false, false, 1);
	gpu = seed_gpu(0x4100, 90403);
	gpu->num_xcc = cpu_to_le32(2);
	gpu->scratch_backing_va = cpu_to_le32(0x220000000000ULL >> 16);
	gpu = seed_gpu(0x4101, 100300);
	gpu->scratch_backing_va = cpu_to_le32(0x220100000000ULL >> 16);
	seed_bo(0, 1, 0x200000000000ULL, 4096, seed_mmio, 1);
	seed_bo(0, 3, 0x200000010000ULL, KFD_CRIU_SIGNAL_PAGE_MAX, seed_gtt,
		3)->flags = cpu_to_le32(KFD_CRIU_BO_EVENT_PAGE);
	seed_bo(0, 6, 0x200000100000ULL, 8192, seed_doorbell, 1);
	seed_bo(0, 7, 0x200000200000ULL, 0x10000, seed_userptr, 3);
	seed_bo(0, 8, 0x200000300000ULL, 4096, seed_gtt, 1);
	seed_bo(1, 1, 0x200000400000ULL, 4096, seed_mmio, 2);
	seed_bo(1, 3, 0x200000500000ULL, 8192, seed_doorbell, 2);
	seed_bo(1, 4, 0x200000800000ULL, 4096, seed_userptr, 3);
	seed_bo(1, 5, 0x200000810000ULL, 0x10000, seed_userptr, 3);
	seed_bo(1, 7, 0x210000200000ULL, 4096, seed_vram, 2);

	q = seed_queue(0, 1, KFD_IOC_QUEUE_TYPE_COMPUTE, 0x200000810000ULL, 0);
	q->read_ptr_addr = cpu_to_le64(0x200000800080ULL);
	q->write_ptr_addr = cpu_to_le64(0x200000800038ULL);
	q->eop_base = cpu_to_le64(0x210000200000ULL);
	q->ctx_save_restore_base = cpu_to_le64(0x7f6000000000ULL);
	q->doorbell_offset = 0;
	seed_queue_states(0x40, 0x80, 0x2000);
	q = seed_queue(2, 0, KFD_IOC_QUEUE_TYPE_SDMA, 0x200000200000ULL, 0);
	q->read_ptr_addr = cpu_to_le64(0x200000300100ULL);
	q->write_ptr_addr = cpu_to_le64(0x200000300108ULL);
	q->sdma_engine_id = cpu_to_le32(1);
	q->doorbell_offset = cpu_to_le32(0x120);
	seed_queue_states(0xc0, 0x180, 0);

	r = seed_svm(0x7f6000000000ULL, 0x60000, KFD_IOCTL_SVM_LOCATION_SYSMEM,
		     2, 0);
	r->prefetch_loc = cpu_to_le32(0x4101);
	r->flags = cpu_to_le32(KFD_IOCTL_SVM_FLAG_HOST_ACCESS |
			       KFD_IOCTL_SVM_FLAG_GPU_EXEC |
			       KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED);
	r->granularity = cpu_to_le32(0x3f);
}

static const struct {
	const char *name;
	void (*build)(void);
} seeds[] = {
	{ "empty", seed_empty },
	{ "selftest", seed_selftest },
	{ "types", seed_types },
	{ "exceptions", seed_exceptions },
	{ "many", seed_many },
	{ "limits", seed_limits },
	{ "small-page", seed_small_page },
	{ "worker", seed_worker },
	{ "gpu-one", seed_gpu_one },
	{ "gpu-two", seed_gpu_two },
	{ "gpu-no-bos", seed_gpu_no_bos },
	{ "queues-one", seed_queues_one },
	{ "queues-mi300", seed_queues_mi300 },
	{ "rocm", seed_rocm },
};

int main(int argc, char **argv)
{
	unsigned int i;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	for (i = 0; i < ARRAY_SIZE(seeds); i++) {
		seeds[i].build();
		if (save(argv[1], seeds[i].name))
			return 1;
	}
	return 0;
}
