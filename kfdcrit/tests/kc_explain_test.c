// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/*
 * What "kfdcrit check" says for each refusal of a record validator. For
 * every validator that judges one record, a record the codec accepts is
 * broken in one field at a time; the codec must refuse each, and the
 * explanation kfdcrit gives must name the field it tripped on. Prints one
 * line per validator, "PASS|what" or "FAIL|what", with "# " lines
 * before a failure saying which field; tests/run-tests.sh makes TAP of
 * them.
 */

#include <linux/array_size.h>
#include <linux/kfd_ioctl.h>
#include <asm/byteorder.h>

#include <stddef.h>
#include <string.h>

#include "../kfdcrit.h"

/**
 * struct kc_break - one field of a record set to a value the codec refuses
 * @off: offset of the field in the record
 * @size: its size, 4 or 8 bytes
 * @value: what to write there
 * @base: the good record to break (index into the validator's bases)
 * @num_gpus: GPU records of the image, for the validators that take it
 * @says: what the explanation must contain: the field's name
 */
struct kc_break {
	size_t off;
	size_t size;
	u64 value;
	unsigned int base;
	u32 num_gpus;
	const char *says;
};

#define BREAK(type, field, v, b, g, s)					\
	{ offsetof(type, field), sizeof(((type *)0)->field), v, b, g, s }

/* Judges @rec with the codec's validator; its refusal explained in @why */
typedef int (*kc_judge_fn)(const void *rec, u32 num_gpus, const char **why);

static void kc_put(u8 *rec, const struct kc_break *b)
{
	size_t i;

	for (i = 0; i < b->size; i++)
		rec[b->off + i] = b->value >> (8 * i);
}

/* Breaks each base @size-byte record of @bases as @breaks say; failures */
static int kc_run(const char *what, kc_judge_fn judge, const void *bases,
		  size_t nbases, size_t size, const struct kc_break *breaks,
		  size_t n)
{
	const char *why;
	int failed = 0;
	u8 rec[512];
	size_t i;

	for (i = 0; i < nbases; i++)
		if (judge((const u8 *)bases + i * size, 1, &why)) {
			printf("# %s: base record %zu refused: %s\n", what, i, why);
			failed++;
		}
	for (i = 0; i < n; i++) {
		memcpy(rec, (const u8 *)bases + breaks[i].base * size, size);
		kc_put(rec, &breaks[i]);
		why = NULL;
		if (!judge(rec, breaks[i].num_gpus, &why)) {
			printf("# %s: %s = 0x%llx accepted\n", what, breaks[i].says,
			       (unsigned long long)breaks[i].value);
			failed++;
		} else if (!strstr(why, breaks[i].says)) {
			printf("# %s: %s = 0x%llx explained as \"%s\"\n", what,
			       breaks[i].says, (unsigned long long)breaks[i].value, why);
			failed++;
		}
	}
	printf("%s|%s: each refusal names its field\n", failed ? "FAIL" : "PASS", what);
	return failed;
}

#define RUN(what, judge, bases, breaks)					\
	kc_run(what, judge, bases, ARRAY_SIZE(bases), sizeof(bases[0]),	\
	       breaks, ARRAY_SIZE(breaks))

static int kc_judge_compat(const void *rec,
			   u32 num_gpus __attribute__((unused)),
			   const char **why)
{
	int ret = kfd_criu_validate_compat(rec);

	*why = ret ? kc_explain_compat(rec) : NULL;
	return ret;
}

static int kc_judge_process(const void *rec,
			    u32 num_gpus __attribute__((unused)),
			    const char **why)
{
	int ret = kfd_criu_validate_process(rec);

	*why = ret ? kc_explain_process(rec) : NULL;
	return ret;
}

static int kc_judge_event(const void *rec,
			  u32 num_gpus __attribute__((unused)),
			  const char **why)
{
	int ret = kfd_criu_validate_event(rec);

	*why = ret ? kc_explain_event(rec) : NULL;
	return ret;
}

static int kc_judge_gpu(const void *rec,
			u32 num_gpus __attribute__((unused)),
			const char **why)
{
	int ret = kfd_criu_validate_gpu(rec);

	*why = ret ? kc_explain_gpu(rec) : NULL;
	return ret;
}

static int kc_judge_trap(const void *rec, u32 num_gpus, const char **why)
{
	int ret = kfd_criu_validate_trap(rec, num_gpus);

	*why = ret ? kc_explain_trap(rec, num_gpus) : NULL;
	return ret;
}

static int kc_judge_bo(const void *rec, u32 num_gpus, const char **why)
{
	int ret = kfd_criu_validate_bo(rec, num_gpus);

	*why = ret ? kc_explain_bo(rec, num_gpus) : NULL;
	return ret;
}

static int kc_judge_counts(const void *rec, u32 num_gpus, const char **why)
{
	int ret = kfd_criu_validate_counts(rec, num_gpus);

	*why = ret ? kc_explain_counts(rec, num_gpus) : NULL;
	return ret;
}

typedef struct kfd_criu_compat_rec compat_t;
typedef struct kfd_criu_process_rec process_t;
typedef struct kfd_criu_event_rec event_t;
typedef struct kfd_criu_gpu_rec gpu_t;
typedef struct kfd_criu_trap_rec trap_t;
typedef struct kfd_criu_bo_rec bo_t;
typedef struct kfd_criu_counts_rec counts_t;

static const compat_t compats[] = { { .num_gpus = cpu_to_le32(1) } };
static const struct kc_break compat_breaks[] = {
	BREAK(compat_t, reserved, 1, 0, 1, "reserved"),
	BREAK(compat_t, num_gpus, KFD_CRIU_MAX_GPUS + 1, 0, 1, "num_gpus"),
};

static const process_t processes[] = { { 0 } };
static const struct kc_break process_breaks[] = {
	BREAK(process_t, xnack_enabled, 2, 0, 1, "xnack_enabled"),
	BREAK(process_t, ttmp_setup, 2, 0, 1, "ttmp_setup"),
	BREAK(process_t, runtime_state, 99, 0, 1, "runtime_state"),
	BREAK(process_t, num_events, KFD_CRIU_MAX_EVENTS + 1, 0, 1, "num_events"),
	BREAK(process_t, signal_page_size, 12, 0, 1, "signal_page_size"),
	BREAK(process_t, signal_page_size, KFD_CRIU_SIGNAL_PAGE_MAX + 8, 0, 1,
	      "signal_page_size"),
	BREAK(process_t, num_bos, KFD_CRIU_MAX_BOS + 1, 0, 1, "num_bos"),
};

/* A signal event, a memory event and a hardware exception event */
static const event_t events[] = {
	{ .event_id = cpu_to_le32(1), .type = cpu_to_le32(KFD_IOC_EVENT_SIGNAL) },
	{ .event_id = cpu_to_le32(KFD_CRIU_FIRST_NONSIGNAL_EVENT_ID),
	  .type = cpu_to_le32(KFD_IOC_EVENT_MEMORY) },
	{ .event_id = cpu_to_le32(KFD_CRIU_FIRST_NONSIGNAL_EVENT_ID),
	  .type = cpu_to_le32(KFD_IOC_EVENT_HW_EXCEPTION) },
};
static const struct kc_break event_breaks[] = {
	BREAK(event_t, auto_reset, 2, 0, 1, "auto_reset"),
	BREAK(event_t, signaled, 2, 0, 1, "signaled"),
	BREAK(event_t, reserved, 1, 0, 1, "reserved"),
	BREAK(event_t, reserved2, 1, 0, 1, "reserved"),
	BREAK(event_t, event_age, KFD_CRIU_MAX_EVENT_AGE + 1, 0, 1, "event_age"),
	BREAK(event_t, event_age, ~0ULL, 0, 1, "event_age"),
	BREAK(event_t, event_id, 0, 0, 1, "event id"),
	BREAK(event_t, event_id, KFD_SIGNAL_EVENT_LIMIT, 0, 1, "event id"),
	BREAK(event_t, event_id, 1, 1, 1, "event id"),
	BREAK(event_t, type, KFD_IOC_EVENT_MEMORY + 1, 0, 1, "event type"),
	BREAK(event_t, mem_va, 0x1000, 0, 1, "mem_va"),
	BREAK(event_t, mem_gpu_id, 1, 0, 1, "mem_gpu_id"),
	BREAK(event_t, mem_error_type, 1, 2, 1, "mem_error_type"),
	BREAK(event_t, mem_not_present, 1, 0, 1, "mem_not_present"),
	BREAK(event_t, mem_read_only, 1, 2, 1, "mem_read_only"),
	BREAK(event_t, mem_no_execute, 1, 0, 1, "mem_no_execute"),
	BREAK(event_t, mem_imprecise, 1, 0, 1, "mem_imprecise"),
	BREAK(event_t, mem_not_present, 2, 1, 1, "mem_not_present"),
	BREAK(event_t, mem_read_only, 2, 1, 1, "mem_read_only"),
	BREAK(event_t, mem_no_execute, 2, 1, 1, "mem_no_execute"),
	BREAK(event_t, mem_imprecise, 2, 1, 1, "mem_imprecise"),
	BREAK(event_t, mem_error_type, 99, 1, 1, "mem_error_type"),
	BREAK(event_t, hw_reset_type, 1, 0, 1, "hw_reset_type"),
	BREAK(event_t, hw_reset_cause, 1, 1, 1, "hw_reset_cause"),
	BREAK(event_t, hw_memory_lost, 1, 0, 1, "hw_memory_lost"),
	BREAK(event_t, hw_gpu_id, 1, 1, 1, "hw_gpu_id"),
	BREAK(event_t, hw_reset_type, 99, 2, 1, "hw_reset_type"),
	BREAK(event_t, hw_reset_cause, 99, 2, 1, "hw_reset_cause"),
	BREAK(event_t, hw_memory_lost, 2, 2, 1, "hw_memory_lost"),
};

static const gpu_t gpus[] = {
	{ .gpu_id = cpu_to_le32(0x1234), .num_xcc = cpu_to_le32(1) },
};
static const struct kc_break gpu_breaks[] = {
	BREAK(gpu_t, gpu_id, 0, 0, 1, "gpu_id"),
	BREAK(gpu_t, num_xcc, 0, 0, 1, "num_xcc"),
	BREAK(gpu_t, num_xcc, 17, 0, 1, "num_xcc"),
	BREAK(gpu_t, flags, 0x80000000U, 0, 1, "flags"),
};

static const trap_t traps[] = {
	{ .tba_addr = cpu_to_le64(0x10000), .tma_addr = cpu_to_le64(0x20000) },
};
static const struct kc_break trap_breaks[] = {
	BREAK(trap_t, gpu_index, 1, 0, 1, "gpu_index"),
	BREAK(trap_t, reserved, 1, 0, 1, "reserved"),
	BREAK(trap_t, tba_addr, KFD_CRIU_MAX_VA, 0, 1, "tba_addr"),
	BREAK(trap_t, tba_addr, 0x10002, 0, 1, "tba_addr"),
	BREAK(trap_t, tma_addr, KFD_CRIU_MAX_VA, 0, 1, "tma_addr"),
};

/* A GTT BO, a USERPTR BO and the event page */
static const bo_t bos[] = {
	{ .handle = cpu_to_le32(1), .va = cpu_to_le64(0x100000),
	  .size = cpu_to_le64(0x2000),
	  .alloc_flags = cpu_to_le32(KFD_IOC_ALLOC_MEM_FLAGS_GTT) },
	{ .handle = cpu_to_le32(2), .va = cpu_to_le64(0x200000),
	  .size = cpu_to_le64(0x2000), .userptr = cpu_to_le64(0x7f0000),
	  .alloc_flags = cpu_to_le32(KFD_IOC_ALLOC_MEM_FLAGS_USERPTR) },
	{ .handle = cpu_to_le32(3), .va = cpu_to_le64(0x300000),
	  .size = cpu_to_le64(KFD_CRIU_SIGNAL_PAGE_MAX),
	  .flags = cpu_to_le32(KFD_CRIU_BO_EVENT_PAGE),
	  .alloc_flags = cpu_to_le32(KFD_IOC_ALLOC_MEM_FLAGS_GTT) },
};
static const struct kc_break bo_breaks[] = {
	BREAK(bo_t, size, 0, 0, 1, "size"),
	BREAK(bo_t, va, 0x100800, 0, 1, "va"),
	BREAK(bo_t, size, 0x2800, 0, 1, "size"),
	BREAK(bo_t, mmap_offset, 0x800, 0, 1, "mmap_offset"),
	BREAK(bo_t, va, KFD_CRIU_MAX_VA - 0x1000, 0, 1, "va"),
	BREAK(bo_t, alloc_flags, KFD_IOC_ALLOC_MEM_FLAGS_GTT | 1U << 10, 0, 1,
	      "alloc_flags"),
	BREAK(bo_t, alloc_flags, 0, 0, 1, "alloc_flags"),
	BREAK(bo_t, alloc_flags, KFD_IOC_ALLOC_MEM_FLAGS_GTT |
	      KFD_IOC_ALLOC_MEM_FLAGS_VRAM, 0, 1, "alloc_flags"),
	BREAK(bo_t, userptr, 0x7f0000, 0, 1, "userptr"),
	BREAK(bo_t, userptr, 0, 1, 1, "userptr"),
	BREAK(bo_t, userptr, 0x7f0010, 1, 1, "userptr"),
	BREAK(bo_t, flags, 2, 0, 1, "flags"),
	BREAK(bo_t, size, 0x2000, 2, 1, "EVENT_PAGE"),
	BREAK(bo_t, alloc_flags, KFD_IOC_ALLOC_MEM_FLAGS_VRAM, 2, 1, "EVENT_PAGE"),
	BREAK(bo_t, alloc_flags, KFD_IOC_ALLOC_MEM_FLAGS_GTT |
	      KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM, 2, 1, "EVENT_PAGE"),
	BREAK(bo_t, handle, 0x7fffffff, 0, 1, "handle"),
	BREAK(bo_t, gpu_index, 1, 0, 1, "gpu_index"),
	BREAK(bo_t, mapped_gpus, 2, 0, 1, "mapped_gpus"),
};

static const counts_t counts[] = { { .num_queues = cpu_to_le32(1) } };
static const struct kc_break counts_breaks[] = {
	BREAK(counts_t, reserved, 1, 0, 1, "reserved"),
	BREAK(counts_t, reserved2, 1, 0, 1, "reserved"),
	BREAK(counts_t, num_queues, KFD_CRIU_MAX_QUEUES + 1, 0, 1, "num_queues"),
	BREAK(counts_t, num_svm_ranges, KFD_CRIU_MAX_SVM_RANGES + 1, 0, 1,
	      "num_svm_ranges"),
	BREAK(counts_t, num_queues, 0, 0, 1, "both counts"),
	BREAK(counts_t, num_queues, 1, 0, 0, "without GPUs"),
};

int main(void)
{
	int failed = 0;

	failed += RUN("COMPAT (kfd_criu_validate_compat)", kc_judge_compat,
		      compats, compat_breaks);
	failed += RUN("PROCESS (kfd_criu_validate_process)", kc_judge_process,
		      processes, process_breaks);
	failed += RUN("EVENT (kfd_criu_validate_event)", kc_judge_event, events,
		      event_breaks);
	failed += RUN("GPU (kfd_criu_validate_gpu)", kc_judge_gpu, gpus,
		      gpu_breaks);
	failed += RUN("TRAP_HANDLER (kfd_criu_validate_trap)", kc_judge_trap,
		      traps, trap_breaks);
	failed += RUN("BO (kfd_criu_validate_bo)", kc_judge_bo, bos, bo_breaks);
	failed += RUN("COUNTS (kfd_criu_validate_counts)", kc_judge_counts,
		      counts, counts_breaks);
	return failed ? 1 : 0;
}
