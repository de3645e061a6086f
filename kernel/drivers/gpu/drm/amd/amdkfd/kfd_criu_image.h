/* SPDX-License-Identifier: GPL-2.0 OR MIT */

#ifndef KFD_CRIU_IMAGE_H_INCLUDED
#define KFD_CRIU_IMAGE_H_INCLUDED

#include <linux/bits.h>
#include <linux/sizes.h>
#include <linux/types.h>

/**
 * DOC: KFD CRIU image stream format
 *
 * In image mode, CHECKPOINT writes a process's KFD state to a file
 * descriptor as one self-describing stream and RESTORE reads it back. The
 * stream is hostile input on restore, so its format is declared here once,
 * with fixed-width little-endian fields and no implicit padding, and every
 * field is checked before use.
 *
 * The stream is a &struct kfd_criu_image_header followed by records. Each
 * record is a &struct kfd_criu_record_header, then @length bytes of payload,
 * then a little-endian CRC32C trailer computed over the record header and
 * the payload. A trailer (rather than a CRC field in the header) lets the
 * writer stream a payload it never holds in memory as a whole.
 *
 * Records carry KFD_CRIU_RECORD_MANDATORY or not. A reader skips an
 * unknown record without that flag and refuses an unknown mandatory record
 * with -EOPNOTSUPP. The last record is KFD_CRIU_REC_END, which counts the
 * records before it, so a truncated stream is always detected.
 *
 * Record order: COMPAT first (restore checks compatibility before it
 * touches anything), then one GPU record for each of COMPAT's num_gpus,
 * then a TRAP_HANDLER record for each GPU on which the process installed
 * a trap handler, in ascending gpu_index order, then PROCESS, then
 * COUNTS when the process has user-mode queues or SVM ranges, then
 * SIGNAL_PAGE if the process has one, then the EVENT
 * records in strictly ascending event_id order (the order
 * idr_for_each_entry() walks them), then PROCESS's num_bos BO records,
 * sorted by (gpu_index, handle), then COUNTS's num_queues QUEUE records
 * sorted by queue_id, then one QUEUE_STATE record per queue and XCC
 * (queue by queue in QUEUE order, XCC 0 first), then COUNTS's
 * num_svm_ranges SVM_RANGE records sorted by address, then the BO_DATA
 * records carrying the contents of the VRAM and GTT BOs, BO by BO and
 * chunk by chunk, then END:
 *
 *	COMPAT, GPU x num_gpus, [TRAP_HANDLER ...], PROCESS, [COUNTS],
 *	[SIGNAL_PAGE],
 *	EVENT x num_events, BO x num_bos, QUEUE x num_queues,
 *	QUEUE_STATE x (sum of the queues' num_xcc),
 *	SVM_RANGE x num_svm_ranges, BO_DATA ..., END
 *
 * All metadata precedes bulk data, so restore has placed every GPU and
 * checked every BO, queue and SVM range before it copies a byte of
 * contents. The codec checks each record on its own and offers the checks
 * that span records (kfd_criu_check_event_ids(), kfd_criu_check_bos(),
 * kfd_criu_check_queues(), kfd_criu_check_svm_ranges(), the cursors of
 * kfd_criu_queue_state_check() and kfd_criu_bo_data_check()); the restore
 * code enforces the order.
 *
 * The counts of queues and SVM ranges are in their own record, COUNTS,
 * because PROCESS and COMPAT are fixed-size records that images without
 * queues already carry: an image without COUNTS has no queues and no SVM
 * ranges, and stays valid byte for byte. A writer emits COUNTS only when
 * one of its counts is non-zero, and a reader refuses a COUNTS whose
 * counts are all zero, so every image has exactly one encoding.
 *
 * Queues (QUEUE, QUEUE_STATE) never carry a raw MQD. RESTORE builds each
 * MQD through the normal init path from the queue's properties and then
 * writes only the fields of the MQD dynamic-field whitelist
 * (kfd_criu_mqd_whitelist[]), each validated by
 * kfd_criu_validate_queue_state(): the ring and EOP pointers, the control
 * stack and work-group state offsets; and on GFX9, whose control stack
 * lives in the MQD buffer, the live part of the control stack, of which
 * only the length is checked. A queue
 * of a type the format cannot carry (kfd_criu_queue_type_carried())
 * makes CHECKPOINT fail with -EOPNOTSUPP. Restore prefers the hardware
 * slot ids the dump had; kfd_criu_pick_slot() decides what to do when
 * one is taken.
 *
 * Errors the reader returns: -EINVAL for a malformed stream (bad magic,
 * unknown record flags, length out of range for the record type, END
 * counts that do not match, anything after END), -EPROTO for a format
 * version or header flags this kernel does not know, -EBADMSG for a CRC
 * mismatch, -EOPNOTSUPP for an unknown mandatory record, -ENODATA for a
 * stream that ends early, and -EOVERFLOW when the caller's buffer is too
 * small for a valid record. The validators add -EEXIST for a duplicate
 * event id, BO handle, queue id or doorbell, -EOPNOTSUPP for state this
 * kernel cannot restore, and -ENODEV when an image GPU has no compatible
 * local GPU to go to (kfd_criu_map_gpus()). kfd_criu_pick_slot() returns
 * -EBUSY when a slot id the process can see is taken on the target.
 */

/** KFD_CRIU_IMAGE_MAGIC - first eight bytes of every image stream */
#define KFD_CRIU_IMAGE_MAGIC		"KFDCRIU\0"
/** KFD_CRIU_IMAGE_MAGIC_LEN - length of %KFD_CRIU_IMAGE_MAGIC */
#define KFD_CRIU_IMAGE_MAGIC_LEN	8
/** KFD_CRIU_IMAGE_VERSION - the stream format version this code writes */
#define KFD_CRIU_IMAGE_VERSION		1
/** KFD_CRIU_RELEASE_LEN - bytes reserved for the producer's release string */
#define KFD_CRIU_RELEASE_LEN		64
/** KFD_CRIU_MAX_RECORD_LEN - largest record payload a reader accepts */
#define KFD_CRIU_MAX_RECORD_LEN		SZ_1M
/** KFD_CRIU_MAX_EVENTS - most event records one image may carry */
#define KFD_CRIU_MAX_EVENTS		65536
/**
 * KFD_CRIU_MAX_EVENT_AGE - largest event age an image may carry
 *
 * A new event has age 1 and every signal adds one; set_event() warns when
 * the counter wraps. 2^62 signals are more than a process makes in a
 * century at a billion a second, so a larger age is not a real process's
 * and would bring the restored event closer to that wrap.
 */
#define KFD_CRIU_MAX_EVENT_AGE		BIT_ULL(62)
/** KFD_CRIU_SIGNAL_PAGE_MAX - largest signal page payload (4096 slots) */
#define KFD_CRIU_SIGNAL_PAGE_MAX	(4096 * 8)
/** KFD_CRIU_RECORD_OVERHEAD - stream bytes of a record beyond its payload */
#define KFD_CRIU_RECORD_OVERHEAD	16
/*
 * Event ids of events without a signal slot, as kfd_events.h allocates
 * them. Signal and debug events use their slot index, 1 to
 * KFD_SIGNAL_EVENT_LIMIT - 1 (slot 0 is reserved).
 *
 * INT_MAX, the top of the driver's range, is refused: the driver walks
 * the event idr with idr_for_each_entry(), whose int id wraps after an
 * entry at INT_MAX, so every later walk (the event count, process exit)
 * would WARN in idr_get_next(). Reaching it takes 2^30 events, so no
 * process that was dumped has it.
 */
/** KFD_CRIU_FIRST_NONSIGNAL_EVENT_ID - lowest id of a non-signal event */
#define KFD_CRIU_FIRST_NONSIGNAL_EVENT_ID	0x40000000U
/** KFD_CRIU_LAST_NONSIGNAL_EVENT_ID - highest id of a non-signal event */
#define KFD_CRIU_LAST_NONSIGNAL_EVENT_ID	0x7ffffffeU

/**
 * struct kfd_criu_image_header - start of an image stream
 * @magic: %KFD_CRIU_IMAGE_MAGIC
 * @version: format version, %KFD_CRIU_IMAGE_VERSION
 * @flags: must be zero in version 1; a reader refuses unknown flags
 * @header_size: sizeof(struct kfd_criu_image_header), for diagnostics
 * @release: producing kernel's utsname release, NUL padded, diagnostic only
 * @crc: CRC32C of the header up to, not including, this field
 */
struct kfd_criu_image_header {
	__u8 magic[KFD_CRIU_IMAGE_MAGIC_LEN];
	__le32 version;
	__le32 flags;
	__le32 header_size;
	__u8 release[KFD_CRIU_RELEASE_LEN];
	__le32 crc;
};

/**
 * enum kfd_criu_record_type - record types of the image stream
 * @KFD_CRIU_REC_END: last record, payload &struct kfd_criu_end_rec
 * @KFD_CRIU_REC_COMPAT: compatibility record, &struct kfd_criu_compat_rec
 * @KFD_CRIU_REC_PROCESS: process state, &struct kfd_criu_process_rec
 * @KFD_CRIU_REC_SIGNAL_PAGE: contents of the event signal page (raw bytes,
 *	a multiple of 8, at most %KFD_CRIU_SIGNAL_PAGE_MAX)
 * @KFD_CRIU_REC_EVENT: one event, &struct kfd_criu_event_rec
 * @KFD_CRIU_REC_GPU: one GPU the process uses, &struct kfd_criu_gpu_rec
 * @KFD_CRIU_REC_BO: one buffer object, &struct kfd_criu_bo_rec
 * @KFD_CRIU_REC_BO_DATA: one chunk of a buffer object's contents,
 *	&struct kfd_criu_bo_data_hdr and then the bytes
 * @KFD_CRIU_REC_QUEUE: one user-mode queue, &struct kfd_criu_queue_rec and
 *	then its CU mask, num_cu_mask / 32 __le32 words
 * @KFD_CRIU_REC_QUEUE_STATE: preempted state of one queue on one XCC,
 *	&struct kfd_criu_queue_state_hdr, &struct kfd_criu_queue_dyn and
 *	then data_len bytes of control stack
 * @KFD_CRIU_REC_SVM_RANGE: one SVM range, &struct kfd_criu_svm_rec
 * @KFD_CRIU_REC_COUNTS: counts of queues and SVM ranges,
 *	&struct kfd_criu_counts_rec
 * @KFD_CRIU_REC_TRAP_HANDLER: the second-level trap handler of the process
 *	on one GPU, &struct kfd_criu_trap_rec
 * @KFD_CRIU_REC_NR: number of known types; not a record type
 */
enum kfd_criu_record_type {
	KFD_CRIU_REC_END = 1,
	KFD_CRIU_REC_COMPAT = 2,
	KFD_CRIU_REC_PROCESS = 3,
	KFD_CRIU_REC_SIGNAL_PAGE = 4,
	KFD_CRIU_REC_EVENT = 5,
	KFD_CRIU_REC_GPU = 6,
	KFD_CRIU_REC_BO = 7,
	KFD_CRIU_REC_BO_DATA = 8,
	KFD_CRIU_REC_QUEUE = 9,
	KFD_CRIU_REC_QUEUE_STATE = 10,
	KFD_CRIU_REC_SVM_RANGE = 11,
	KFD_CRIU_REC_COUNTS = 12,
	KFD_CRIU_REC_TRAP_HANDLER = 13,
	KFD_CRIU_REC_NR
};

/** KFD_CRIU_RECORD_MANDATORY - a reader that does not know the type fails */
#define KFD_CRIU_RECORD_MANDATORY	BIT(0)
/** KFD_CRIU_RECORD_FLAGS_KNOWN - all record flags this version defines */
#define KFD_CRIU_RECORD_FLAGS_KNOWN	KFD_CRIU_RECORD_MANDATORY

/**
 * struct kfd_criu_record_header - header of every record
 * @type: &enum kfd_criu_record_type
 * @flags: %KFD_CRIU_RECORD_MANDATORY or 0
 * @length: payload length in bytes, at most %KFD_CRIU_MAX_RECORD_LEN
 *
 * The payload follows, then a __le32 CRC32C of header and payload.
 */
struct kfd_criu_record_header {
	__le32 type;
	__le32 flags;
	__le32 length;
};

/**
 * struct kfd_criu_end_rec - payload of %KFD_CRIU_REC_END
 * @records: number of records before END, skipped optional ones included
 * @reserved: must be zero
 * @payload_bytes: sum of the payload lengths of those records
 */
struct kfd_criu_end_rec {
	__le32 records;
	__le32 reserved;
	__le64 payload_bytes;
};

/**
 * struct kfd_criu_compat_rec - payload of %KFD_CRIU_REC_COMPAT
 * @num_gpus: GPUs the process uses, at most %KFD_CRIU_MAX_GPUS; that many
 *	%KFD_CRIU_REC_GPU records follow COMPAT directly
 * @reserved: must be zero
 */
struct kfd_criu_compat_rec {
	__le32 num_gpus;
	__le32 reserved;
};

/**
 * struct kfd_criu_process_rec - payload of %KFD_CRIU_REC_PROCESS
 * @xnack_enabled: 0 or 1
 * @runtime_state: &enum kfd_dbg_runtime_state from the uAPI header
 * @r_debug: user address of the runtime's r_debug structure
 * @ttmp_setup: 0 or 1, trap temporaries set up by the runtime
 * @num_events: number of %KFD_CRIU_REC_EVENT records that follow
 * @signal_page_size: bytes of the signal page record, 0 when there is none
 * @num_bos: number of %KFD_CRIU_REC_BO records that follow the events, at
 *	most %KFD_CRIU_MAX_BOS; zero when the image has no GPUs
 */
struct kfd_criu_process_rec {
	__le32 xnack_enabled;
	__le32 runtime_state;
	__le64 r_debug;
	__le32 ttmp_setup;
	__le32 num_events;
	__le32 signal_page_size;
	__le32 num_bos;
};

/**
 * struct kfd_criu_event_rec - payload of %KFD_CRIU_REC_EVENT
 * @event_id: the id userspace knows the event by
 * @type: KFD_IOC_EVENT_* from the uAPI header
 * @auto_reset: 0 or 1
 * @signaled: 0 or 1
 * @event_age: the event's age counter, for waits that pass an age; 0 (an
 *	event the legacy interface restored) to %KFD_CRIU_MAX_EVENT_AGE
 * @mem_va: memory exception: faulting address
 * @mem_gpu_id: memory exception: gpu_id
 * @mem_error_type: memory exception: RAS error type
 * @mem_not_present: memory exception failure bit
 * @mem_read_only: memory exception failure bit
 * @mem_no_execute: memory exception failure bit
 * @mem_imprecise: memory exception failure bit
 * @hw_reset_type: hardware exception: reset type
 * @hw_reset_cause: hardware exception: reset cause
 * @hw_memory_lost: hardware exception: memory lost
 * @hw_gpu_id: hardware exception: gpu_id
 * @reserved: must be zero
 * @reserved2: must be zero
 *
 * The exception fields are only meaningful for events of the matching
 * type and must be zero otherwise.
 */
struct kfd_criu_event_rec {
	__le32 event_id;
	__le32 type;
	__le32 auto_reset;
	__le32 signaled;
	__le64 event_age;
	__le64 mem_va;
	__le32 mem_gpu_id;
	__le32 mem_error_type;
	__le32 mem_not_present;
	__le32 mem_read_only;
	__le32 mem_no_execute;
	__le32 mem_imprecise;
	__le32 hw_reset_type;
	__le32 hw_reset_cause;
	__le32 hw_memory_lost;
	__le32 hw_gpu_id;
	__le32 reserved;
	__le32 reserved2;
};

/** KFD_CRIU_MAX_GPUS - most GPU records one image may carry */
#define KFD_CRIU_MAX_GPUS		64
/** KFD_CRIU_MAX_BOS - most buffer object records one image may carry */
#define KFD_CRIU_MAX_BOS		262144
/** KFD_CRIU_BO_CHUNK - contents bytes in every BO_DATA record but a BO's last */
#define KFD_CRIU_BO_CHUNK		SZ_512K
/** KFD_CRIU_BO_ALIGN - alignment of a BO's VA, size and mmap offset */
#define KFD_CRIU_BO_ALIGN		4096
/** KFD_CRIU_MAX_VA - end of the GPU virtual address space an image may use */
#define KFD_CRIU_MAX_VA			BIT_ULL(48)

/**
 * struct kfd_criu_gpu_rec - payload of %KFD_CRIU_REC_GPU
 * @gpu_id: the gpu_id the process knows this GPU by; kept on restore
 * @gfx_target_version: gfx target version, as the topology reports it:
 *	major * 10000 + minor * 100 + stepping
 * @device_id: PCI device id
 * @revision_id: ASIC revision, as amdgpu reads it from the chip
 *	(adev->rev_id; not the PCI revision)
 * @num_xcc: XCCs of the GPU's partition, at least 1
 * @partition_mode: compute partition mode (AMDGPU_*_PARTITION_MODE)
 * @vram_size: bytes of VRAM of the partition
 * @cwsr_size: bytes of the CWSR (context save) area per queue
 * @ctl_stack_size: bytes of the control stack per queue
 * @mec_fw_version: MEC firmware version
 * @sdma_fw_version: SDMA firmware version
 * @flags: %KFD_CRIU_GPU_NO_CWSR or 0; other bits must be zero
 * @scratch_backing_va: what the process last set with
 *	AMDKFD_IOC_SET_SCRATCH_BACKING_VA on this GPU, as the driver keeps
 *	it (32 bits), 0 for nothing; ROCm sets it on every GPU. Restore
 *	gives it back before any queue exists; only GFX7 and GFX8 program
 *	it into the GPU
 *
 * GPU records follow COMPAT, in the order the process's per-GPU data is
 * kept; other records name a GPU by its index in that order. A local GPU
 * is compatible when every field but @gpu_id and @scratch_backing_va
 * (process state, not the GPU's) matches, except that it may have more
 * VRAM and newer firmware than the image's, and another
 * @gfx_target_version where a kernel is known to have renumbered the same
 * GPU (kfd_criu_gpu_incompatible()).
 */
struct kfd_criu_gpu_rec {
	__le32 gpu_id;
	__le32 gfx_target_version;
	__le32 device_id;
	__le32 revision_id;
	__le32 num_xcc;
	__le32 partition_mode;
	__le64 vram_size;
	__le32 cwsr_size;
	__le32 ctl_stack_size;
	__le32 mec_fw_version;
	__le32 sdma_fw_version;
	__le32 flags;
	__le32 scratch_backing_va;
};

/**
 * KFD_CRIU_GPU_NO_CWSR - &struct kfd_criu_gpu_rec flag: the driver does
 * not save the waves of a preempted queue to its CWSR area
 * (amdgpu.cwsr_enable=0; clear, the default, when it does). Queue state
 * only resumes on a GPU with the same setting: saved with CWSR it carries
 * control-stack and work-group offsets that a GPU without it ignores, and
 * saved without CWSR it carries none, which a GPU with it would take as
 * offsets into a full control stack.
 */
#define KFD_CRIU_GPU_NO_CWSR		BIT(0)
/** KFD_CRIU_GPU_FLAGS - every &struct kfd_criu_gpu_rec flag */
#define KFD_CRIU_GPU_FLAGS		KFD_CRIU_GPU_NO_CWSR

/**
 * struct kfd_criu_trap_rec - payload of %KFD_CRIU_REC_TRAP_HANDLER
 * @gpu_index: index of the GPU record it belongs to
 * @reserved: must be zero
 * @tba_addr: GPU VA of the trap handler code, 4-byte aligned
 * @tma_addr: GPU VA of the trap handler's memory
 *
 * What AMDKFD_IOC_SET_TRAP_HANDLER installed on that GPU. At least one of
 * the addresses is non-zero; both are below %KFD_CRIU_MAX_VA.
 */
struct kfd_criu_trap_rec {
	__le32 gpu_index;
	__le32 reserved;
	__le64 tba_addr;
	__le64 tma_addr;
};

/**
 * struct kfd_criu_bo_rec - payload of %KFD_CRIU_REC_BO
 * @va: GPU virtual address, %KFD_CRIU_BO_ALIGN aligned
 * @size: bytes, non-zero, %KFD_CRIU_BO_ALIGN aligned
 * @userptr: CPU address of a userptr BO, 0 for any other
 * @mmap_offset: offset the process mmaps the BO at, 0 when it has none
 * @mapped_gpus: bit i set: the BO is mapped on the GPU of GPU record i
 * @alloc_flags: KFD_IOC_ALLOC_MEM_FLAGS_* it was allocated with
 * @handle: its id in the owning GPU's buffer idr, below INT_MAX
 * @gpu_index: index of the owning GPU's record
 * @flags: %KFD_CRIU_BO_EVENT_PAGE or 0; other bits must be zero
 *
 * BO records follow the events, sorted by (@gpu_index, @handle). Exactly
 * one of the VRAM, GTT, USERPTR, DOORBELL and MMIO_REMAP flags is set.
 * VRAM and GTT BOs carry contents in BO_DATA records; the others carry
 * none (userptr memory is in the process's ordinary memory).
 */
struct kfd_criu_bo_rec {
	__le64 va;
	__le64 size;
	__le64 userptr;
	__le64 mmap_offset;
	__le64 mapped_gpus;
	__le32 alloc_flags;
	__le32 handle;
	__le32 gpu_index;
	__le32 flags;
};

/**
 * KFD_CRIU_BO_EVENT_PAGE - &struct kfd_criu_bo_rec flag: the BO is the
 * process's event page, the one it passed in event_page_offset of
 * AMDKFD_IOC_CREATE_EVENT, as ROCm does on every GPU. At most one BO has
 * it: a GTT BO of %KFD_CRIU_SIGNAL_PAGE_MAX bytes, and the image's
 * SIGNAL_PAGE record, as large, carries its slots. Restore makes the BO
 * the event page again once its contents are back, and then writes the
 * slots (making it the event page resets them). An image without it
 * has a kernel signal page, or none.
 */
#define KFD_CRIU_BO_EVENT_PAGE		BIT(0)
/** KFD_CRIU_BO_FLAGS - every &struct kfd_criu_bo_rec flag */
#define KFD_CRIU_BO_FLAGS		KFD_CRIU_BO_EVENT_PAGE

/**
 * struct kfd_criu_bo_data_hdr - start of a %KFD_CRIU_REC_BO_DATA payload
 * @bo_index: index of the BO's record among the BO records
 * @reserved: must be zero
 * @offset: where in the BO the bytes after this header go
 *
 * The contents of every BO with contents follow all BO records, BO by BO
 * in record order, each in consecutive chunks of %KFD_CRIU_BO_CHUNK bytes
 * from offset 0; only a BO's last chunk may be shorter.
 */
struct kfd_criu_bo_data_hdr {
	__le32 bo_index;
	__le32 reserved;
	__le64 offset;
};

/*
 * Limits of the queue records. Each says where 6.12 sets the number.
 */
/** KFD_CRIU_MAX_QUEUES - queue ids per process (KFD_MAX_NUM_OF_QUEUES_PER_PROCESS) */
#define KFD_CRIU_MAX_QUEUES		1024
/** KFD_CRIU_MAX_DOORBELLS - doorbell slots of a process's doorbell page (kfd_priv.h) */
#define KFD_CRIU_MAX_DOORBELLS		1024
/** KFD_CRIU_MIN_RING_SIZE - smallest ring, %KFD_MIN_QUEUE_RING_SIZE */
#define KFD_CRIU_MIN_RING_SIZE		1024U
/** KFD_CRIU_MAX_RING_SIZE - largest power of two the u32 ring_size argument holds */
#define KFD_CRIU_MAX_RING_SIZE		0x80000000U
/** KFD_CRIU_MAX_EOP_SIZE - 32 times the largest EOP buffer 6.12 asks for (Tonga) */
#define KFD_CRIU_MAX_EOP_SIZE		SZ_1M
/** KFD_CRIU_MAX_CTL_STACK_SIZE - bound on a queue's control stack bytes */
#define KFD_CRIU_MAX_CTL_STACK_SIZE	SZ_256K
/** KFD_CRIU_MAX_CU_MASK_BITS - max_num_cus of kfd_ioctl_set_cu_mask() */
#define KFD_CRIU_MAX_CU_MASK_BITS	1024
/** KFD_CRIU_MAX_SDMA_ENGINES - AMDGPU_MAX_SDMA_INSTANCES */
#define KFD_CRIU_MAX_SDMA_ENGINES	16
/** KFD_CRIU_MAX_SVM_RANGES - most SVM range records one image may carry */
#define KFD_CRIU_MAX_SVM_RANGES		262144
/** KFD_CRIU_MAX_SVM_GRANULARITY - largest migration granularity (log2 pages) */
#define KFD_CRIU_MAX_SVM_GRANULARITY	0x3f
/** KFD_CRIU_QUEUE_FORMAT_PM4 - a PM4 queue (KFD_QUEUE_FORMAT_PM4) */
#define KFD_CRIU_QUEUE_FORMAT_PM4	0
/** KFD_CRIU_QUEUE_FORMAT_AQL - an AQL queue (KFD_QUEUE_FORMAT_AQL) */
#define KFD_CRIU_QUEUE_FORMAT_AQL	1

/**
 * struct kfd_criu_counts_rec - payload of %KFD_CRIU_REC_COUNTS
 * @num_queues: %KFD_CRIU_REC_QUEUE records after the BOs, at most
 *	%KFD_CRIU_MAX_QUEUES
 * @num_svm_ranges: %KFD_CRIU_REC_SVM_RANGE records after the queue states,
 *	at most %KFD_CRIU_MAX_SVM_RANGES
 * @reserved: must be zero
 * @reserved2: must be zero
 *
 * Follows PROCESS directly, and only when a count is non-zero; without it
 * both counts are zero.
 */
struct kfd_criu_counts_rec {
	__le32 num_queues;
	__le32 num_svm_ranges;
	__le32 reserved;
	__le32 reserved2;
};

/**
 * struct kfd_criu_queue_rec - fixed part of a %KFD_CRIU_REC_QUEUE payload
 * @ring_base: GPU VA of the ring, 256-byte aligned (the MQD holds it >> 8)
 * @read_ptr_addr: where the hardware reports the read pointer, 4-byte
 *	aligned
 * @write_ptr_addr: where user mode writes the write pointer, 4-byte
 *	aligned
 * @eop_base: compute only: GPU VA of the EOP buffer, 256-byte aligned, 0
 *	when it has none
 * @ctx_save_restore_base: compute only: GPU VA of the CWSR area (one per
 *	XCC, back to back), 0 when the queue has none
 * @queue_id: the id user mode knows the queue by, below
 *	%KFD_CRIU_MAX_QUEUES
 * @gpu_index: index of the queue's GPU record
 * @type: KFD_IOC_QUEUE_TYPE_COMPUTE, _SDMA or _SDMA_XGMI; AQL is @format
 * @format: %KFD_CRIU_QUEUE_FORMAT_PM4 or, compute only,
 *	%KFD_CRIU_QUEUE_FORMAT_AQL
 * @priority: 0 to %KFD_MAX_QUEUE_PRIORITY
 * @queue_percent: 0 to %KFD_MAX_QUEUE_PERCENTAGE
 * @pm4_target_xcc: XCC a PM4 queue of a multi-XCC GPU runs on, below
 *	@num_xcc
 * @ring_size: bytes, a power of two from %KFD_CRIU_MIN_RING_SIZE to
 *	%KFD_CRIU_MAX_RING_SIZE
 * @eop_size: bytes of the EOP buffer, a multiple of 4 up to
 *	%KFD_CRIU_MAX_EOP_SIZE, 0 exactly when @eop_base is
 * @ctx_save_restore_size: bytes of the CWSR area per XCC, 0 exactly when
 *	@ctx_save_restore_base is, else at least the GPU's cwsr_size
 * @ctl_stack_size: compute only: bytes of control stack, the GPU's
 *	ctl_stack_size (kfd_queue_acquire_buffers() insists on equality)
 * @doorbell_offset: the queue's doorbell slot in the process's doorbell
 *	page of its GPU, below %KFD_CRIU_MAX_DOORBELLS; user mode rings it
 *	there, so restore must keep it
 * @sdma_engine_id: SDMA only: engine, below %KFD_CRIU_MAX_SDMA_ENGINES
 * @gws: compute only: 1 when the queue uses global wave sync, else 0; at
 *	most one queue of a GPU (pqm_set_gws() refuses a second)
 * @num_cu_mask: compute only: bits of CU mask that follow the record, a
 *	multiple of 32 up to %KFD_CRIU_MAX_CU_MASK_BITS; 0 for no mask
 * @num_xcc: MQDs of the queue: the GPU's num_xcc for compute, 1 for SDMA
 * @reserved: must be zero
 * @reserved2: must be zero
 */
struct kfd_criu_queue_rec {
	__le64 ring_base;
	__le64 read_ptr_addr;
	__le64 write_ptr_addr;
	__le64 eop_base;
	__le64 ctx_save_restore_base;
	__le32 queue_id;
	__le32 gpu_index;
	__le32 type;
	__le32 format;
	__le32 priority;
	__le32 queue_percent;
	__le32 pm4_target_xcc;
	__le32 ring_size;
	__le32 eop_size;
	__le32 ctx_save_restore_size;
	__le32 ctl_stack_size;
	__le32 doorbell_offset;
	__le32 sdma_engine_id;
	__le32 gws;
	__le32 num_cu_mask;
	__le32 num_xcc;
	__le32 reserved;
	__le32 reserved2;
};

/**
 * struct kfd_criu_queue_state_hdr - start of a %KFD_CRIU_REC_QUEUE_STATE
 * @queue_index: index of the queue's record among the QUEUE records
 * @xcc: the XCC whose MQD this is, below the queue's num_xcc
 * @reserved: must be zero
 * @data_len: bytes of control stack after &struct kfd_criu_queue_dyn
 */
struct kfd_criu_queue_state_hdr {
	__le32 queue_index;
	__le32 xcc;
	__le32 reserved;
	__le32 data_len;
};

/**
 * struct kfd_criu_queue_dyn - the dynamic MQD fields of a preempted queue
 * @rptr: compute: ring read offset in dwords (cp_hqd_pq_rptr); SDMA:
 *	read pointer in bytes (sdmax_rlcx_rb_rptr, _hi)
 * @wptr: compute: write pointer in dwords (cp_hqd_pq_wptr_lo, _hi);
 *	SDMA: write pointer in bytes (sdmax_rlcx_rb_wptr, _hi)
 * @cntl_stack_offset: compute with CWSR: start of the saved control stack
 *	(cp_hqd_cntl_stack_offset); 0 otherwise
 * @wg_state_offset: compute with CWSR: end of the saved work-group state
 *	(cp_hqd_wg_state_offset); 0 otherwise
 * @eop_rptr: compute with an EOP buffer: EOP read offset in dwords (the
 *	RPTR field of cp_hqd_eop_rptr); 0 otherwise
 * @eop_wptr: compute with an EOP buffer: EOP write offset in dwords (the
 *	WPTR field of cp_hqd_eop_wptr); 0 otherwise
 *
 * These are the only fields of a preempted MQD the image carries; see
 * kfd_criu_mqd_whitelist[] for their bounds.
 */
struct kfd_criu_queue_dyn {
	__le64 rptr;
	__le64 wptr;
	__le32 cntl_stack_offset;
	__le32 wg_state_offset;
	__le32 eop_rptr;
	__le32 eop_wptr;
};

/**
 * struct kfd_criu_svm_rec - payload of %KFD_CRIU_REC_SVM_RANGE
 * @start: first byte, page aligned
 * @size: bytes, page aligned, non-zero, ending at or below
 *	%KFD_CRIU_MAX_VA
 * @access: bit i: GPU record i has KFD_IOCTL_SVM_ATTR_ACCESS
 * @access_in_place: bit i: GPU record i has
 *	KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE
 * @no_access: bit i: GPU record i has KFD_IOCTL_SVM_ATTR_NO_ACCESS
 * @preferred_loc: KFD_IOCTL_SVM_LOCATION_SYSMEM, _UNDEFINED or the
 *	gpu_id of a GPU record
 * @prefetch_loc: as @preferred_loc
 * @flags: KFD_IOCTL_SVM_FLAG_* set on the range
 * @granularity: migration granularity, log2 of pages, at most
 *	%KFD_CRIU_MAX_SVM_GRANULARITY
 * @reserved: must be zero
 * @reserved2: must be zero
 *
 * A GPU is in at most one of the three access masks; in none, it has
 * the default access. The records are sorted by @start and do not
 * overlap each other or any BO.
 */
struct kfd_criu_svm_rec {
	__le64 start;
	__le64 size;
	__le64 access;
	__le64 access_in_place;
	__le64 no_access;
	__le32 preferred_loc;
	__le32 prefetch_loc;
	__le32 flags;
	__le32 granularity;
	__le32 reserved;
	__le32 reserved2;
};

/**
 * enum kfd_criu_queue_class - what a whitelisted MQD field applies to
 * @KFD_CRIU_QC_COMPUTE: every compute queue
 * @KFD_CRIU_QC_CWSR: compute queues with a CWSR area
 * @KFD_CRIU_QC_EOP: compute queues with an EOP buffer
 * @KFD_CRIU_QC_SDMA: SDMA and SDMA-XGMI queues
 */
enum kfd_criu_queue_class {
	KFD_CRIU_QC_COMPUTE = BIT(0),
	KFD_CRIU_QC_CWSR = BIT(1),
	KFD_CRIU_QC_EOP = BIT(2),
	KFD_CRIU_QC_SDMA = BIT(3),
};

/**
 * enum kfd_criu_mqd_limit - a bound of a whitelisted field, in the terms of
 *	the queue it belongs to
 * @KFD_CRIU_LIM_ZERO: 0
 * @KFD_CRIU_LIM_MAX: the largest value of the field
 * @KFD_CRIU_LIM_RING_DWORDS: ring_size / 4 - 1, the last dword of the ring
 * @KFD_CRIU_LIM_EOP_DWORDS: eop_size / 4 - 1, the last dword of the EOP
 * @KFD_CRIU_LIM_CTL_STACK: the queue's ctl_stack_size
 * @KFD_CRIU_LIM_CWSR: the queue's ctx_save_restore_size
 * @KFD_CRIU_LIM_RPTR: the state's rptr
 * @KFD_CRIU_LIM_RPTR_RING: the state's rptr + ring_size, saturated
 */
enum kfd_criu_mqd_limit {
	KFD_CRIU_LIM_ZERO,
	KFD_CRIU_LIM_MAX,
	KFD_CRIU_LIM_RING_DWORDS,
	KFD_CRIU_LIM_EOP_DWORDS,
	KFD_CRIU_LIM_CTL_STACK,
	KFD_CRIU_LIM_CWSR,
	KFD_CRIU_LIM_RPTR,
	KFD_CRIU_LIM_RPTR_RING,
};

/**
 * struct kfd_criu_mqd_field - one field RESTORE may write into a new MQD
 * @name: the field of &struct kfd_criu_queue_dyn
 * @offset: its offset in &struct kfd_criu_queue_dyn
 * @size: its size, 4 or 8
 * @classes: &enum kfd_criu_queue_class bits of the queues it applies to
 * @min: &enum kfd_criu_mqd_limit the value may not be below
 * @max: &enum kfd_criu_mqd_limit the value may not be above
 * @align: the value must be a multiple of this, 1 for any; for AQL
 *	queues the compute ring pointers step by whole 64-byte packets
 * @mqd: the MQD field(s) of the v9, v10 and v11 managers it restores
 */
struct kfd_criu_mqd_field {
	const char *name;
	u8 offset;
	u8 size;
	u8 classes;
	u8 min;
	u8 max;
	u8 align;
	const char *mqd;
};

/** KFD_CRIU_MQD_ALIGN_AQL - @align marker: 16 dwords for AQL, else 1 */
#define KFD_CRIU_MQD_ALIGN_AQL		0

/**
 * enum kfd_criu_slot_kind - a hardware or software id a queue holds
 * @KFD_CRIU_SLOT_QUEUE_ID: the queue id user mode passes to queue ioctls
 * @KFD_CRIU_SLOT_DOORBELL: the doorbell slot in the process's doorbell
 *	page, which user mode writes
 * @KFD_CRIU_SLOT_HQD: the (pipe, queue) hardware queue descriptor slot of
 *	a queue without HWS
 * @KFD_CRIU_SLOT_SDMA: the SDMA queue slot (engine, queue)
 * @KFD_CRIU_SLOT_NR: number of kinds; not a kind
 */
enum kfd_criu_slot_kind {
	KFD_CRIU_SLOT_QUEUE_ID,
	KFD_CRIU_SLOT_DOORBELL,
	KFD_CRIU_SLOT_HQD,
	KFD_CRIU_SLOT_SDMA,
	KFD_CRIU_SLOT_NR
};

/** KFD_CRIU_SLOT_USER_VISIBLE - kfd_criu_pick_slot(): user mode sees the id */
#define KFD_CRIU_SLOT_USER_VISIBLE	BIT(0)

/**
 * struct kfd_criu_queue_cursor - the next QUEUE_STATE record a reader
 *	expects
 * @queue_index: queue the next state belongs to; num_queues when all
 *	are read
 * @xcc: XCC of the next state
 */
struct kfd_criu_queue_cursor {
	u32 queue_index;
	u32 xcc;
};

/**
 * struct kfd_criu_gpu_mismatch - why an image GPU has no local GPU
 * @image_gpu_id: the image GPU that could not be placed
 * @local_gpu_id: the local GPU it was compared with, 0 when none exists
 * @field: the first field that differs, or a short reason
 */
struct kfd_criu_gpu_mismatch {
	u32 image_gpu_id;
	u32 local_gpu_id;
	const char *field;
};

/**
 * struct kfd_criu_bo_cursor - the next BO_DATA record a reader expects
 * @bo_index: BO the next chunk belongs to; num_bos when all are read
 * @offset: offset of the next chunk in that BO
 */
struct kfd_criu_bo_cursor {
	u32 bo_index;
	u64 offset;
};

/**
 * struct kfd_criu_image_io - where a stream goes to or comes from
 * @write: write exactly @len bytes or return a negative errno
 * @read: read exactly @len bytes; return -ENODATA when the stream ends
 *	first, or another negative errno
 * @ctx: passed to @write and @read
 *
 * Both return 0 on success; the codec never calls them with a zero @len.
 *
 * The codec never touches files itself, which keeps it free of amdgpu and
 * VFS dependencies: the kernel passes an adapter for a &struct file, tests
 * and the userspace tools pass memory buffers.
 */
struct kfd_criu_image_io {
	int (*write)(void *ctx, const void *buf, size_t len);
	int (*read)(void *ctx, void *buf, size_t len);
	void *ctx;
};

/**
 * struct kfd_criu_image_writer - state of a stream being written
 * @io: the sink
 * @records: records written so far, END excluded
 * @payload_bytes: payload bytes written so far
 * @rec_remaining: payload bytes the open record still expects
 * @rec_crc: running CRC32C of the open record
 * @in_record: a record was begun and not finished
 * @error: first error seen; every later call returns it
 * @header_written: the stream header was written
 * @ended: END was written; the stream is complete
 */
struct kfd_criu_image_writer {
	const struct kfd_criu_image_io *io;
	u32 records;
	u64 payload_bytes;
	u32 rec_remaining;
	u32 rec_crc;
	bool in_record;
	int error;
	bool header_written;
	bool ended;
};

/**
 * struct kfd_criu_record_desc - what a reader knows about a record type
 * @type: the record type
 * @min_len: smallest valid payload
 * @max_len: largest valid payload
 */
struct kfd_criu_record_desc {
	u32 type;
	u32 min_len;
	u32 max_len;
};

/**
 * struct kfd_criu_image_reader - state of a stream being read
 * @io: the source
 * @known: record types this reader understands; END needs no entry, the
 *	reader always knows it
 * @num_known: entries in @known
 * @records: records read so far, skipped ones included
 * @payload_bytes: payload bytes read so far, skipped ones included
 * @ended: END was read and validated
 * @skipped: unknown optional records skipped so far
 * @header_read: the stream header was read and validated
 * @error: first error seen; every later call returns it, because the
 *	stream position is unknown after a failure
 */
struct kfd_criu_image_reader {
	const struct kfd_criu_image_io *io;
	const struct kfd_criu_record_desc *known;
	size_t num_known;
	u32 records;
	u64 payload_bytes;
	bool ended;
	u32 skipped;
	bool header_read;
	int error;
};

/**
 * struct kfd_criu_record - a record as the reader returns it
 * @type: record type
 * @flags: record flags
 * @length: payload length, already copied into the caller's buffer
 */
struct kfd_criu_record {
	u32 type;
	u32 flags;
	u32 length;
};

u32 kfd_criu_crc32c(u32 crc, const void *buf, size_t len);

void kfd_criu_image_writer_init(struct kfd_criu_image_writer *w,
				const struct kfd_criu_image_io *io);
int kfd_criu_image_write_header(struct kfd_criu_image_writer *w,
				const char *release);
int kfd_criu_image_write_record(struct kfd_criu_image_writer *w, u32 type,
				u32 flags, const void *payload, u32 len);
int kfd_criu_image_begin_record(struct kfd_criu_image_writer *w, u32 type,
				u32 flags, u32 len);
int kfd_criu_image_write_data(struct kfd_criu_image_writer *w,
			      const void *buf, u32 len);
int kfd_criu_image_finish_record(struct kfd_criu_image_writer *w);
int kfd_criu_image_write_end(struct kfd_criu_image_writer *w);

void kfd_criu_image_reader_init(struct kfd_criu_image_reader *r,
				const struct kfd_criu_image_io *io,
				const struct kfd_criu_record_desc *known,
				size_t num_known);
int kfd_criu_image_read_header(struct kfd_criu_image_reader *r,
			       struct kfd_criu_image_header *hdr);
int kfd_criu_image_read_record(struct kfd_criu_image_reader *r,
			       struct kfd_criu_record *rec,
			       void *buf, u32 buf_size);
int kfd_criu_image_expect_eof(struct kfd_criu_image_reader *r);

extern const struct kfd_criu_record_desc kfd_criu_v1_records[];
extern const size_t kfd_criu_v1_num_records;

int kfd_criu_validate_compat(const struct kfd_criu_compat_rec *rec);
int kfd_criu_validate_process(const struct kfd_criu_process_rec *rec);
int kfd_criu_validate_event_state(const struct kfd_criu_event_rec *rec);
int kfd_criu_validate_event(const struct kfd_criu_event_rec *rec);
int kfd_criu_check_event_ids(const struct kfd_criu_event_rec *events,
			     u32 num_events);
int kfd_criu_validate_event_slot(const struct kfd_criu_process_rec *proc,
				 const struct kfd_criu_event_rec *rec);

struct kfd_criu_gpu_map;

int kfd_criu_validate_gpu(const struct kfd_criu_gpu_rec *rec);
const char *kfd_criu_gpu_incompatible(const struct kfd_criu_gpu_rec *image,
				      const struct kfd_criu_gpu_rec *local);
int kfd_criu_validate_gpu_map(const struct kfd_criu_gpu_map *map,
			      u32 num_map);
int kfd_criu_validate_trap(const struct kfd_criu_trap_rec *rec, u32 num_gpus);
int kfd_criu_check_traps(const struct kfd_criu_trap_rec *traps, u32 n,
			 u32 num_gpus);
int kfd_criu_map_gpus(const struct kfd_criu_gpu_rec *image, u32 num_image,
		      const struct kfd_criu_gpu_rec *local, u32 num_local,
		      const struct kfd_criu_gpu_map *map, u32 num_map,
		      u32 *target, struct kfd_criu_gpu_mismatch *why);

bool kfd_criu_bo_has_contents(u32 alloc_flags);
int kfd_criu_validate_bo(const struct kfd_criu_bo_rec *rec, u32 num_gpus);
int kfd_criu_check_bos(const struct kfd_criu_bo_rec *bos, u32 num_bos,
		       u32 num_gpus);
int kfd_criu_chunk_count(u64 size, u32 chunk, u64 *count);
u32 kfd_criu_chunk_len(u64 size, u64 offset, u32 chunk);
void kfd_criu_bo_cursor_init(struct kfd_criu_bo_cursor *cur,
			     const struct kfd_criu_bo_rec *bos, u32 num_bos);
int kfd_criu_bo_data_check(struct kfd_criu_bo_cursor *cur,
			   const struct kfd_criu_bo_rec *bos, u32 num_bos,
			   const struct kfd_criu_bo_data_hdr *hdr, u32 len);

int kfd_criu_validate_counts(const struct kfd_criu_counts_rec *rec,
			     u32 num_gpus);
int kfd_criu_queue_type_carried(u32 ioc_type);
int kfd_criu_validate_queue(const struct kfd_criu_queue_rec *rec,
			    const struct kfd_criu_gpu_rec *gpus, u32 num_gpus);
u32 kfd_criu_queue_len(const struct kfd_criu_queue_rec *rec);
int kfd_criu_check_queues(const struct kfd_criu_queue_rec *queues, u32 n,
			  const struct kfd_criu_gpu_rec *gpus, u32 num_gpus);

extern const struct kfd_criu_mqd_field kfd_criu_mqd_whitelist[];
extern const size_t kfd_criu_mqd_whitelist_len;

bool kfd_criu_ctl_stack_in_mqd(const struct kfd_criu_queue_rec *queue,
			       const struct kfd_criu_gpu_rec *gpu);
int kfd_criu_validate_queue_state(const struct kfd_criu_queue_rec *queue,
				  const struct kfd_criu_gpu_rec *gpu,
				  const struct kfd_criu_queue_state_hdr *hdr,
				  const struct kfd_criu_queue_dyn *dyn);
void kfd_criu_queue_cursor_init(struct kfd_criu_queue_cursor *cur);
int kfd_criu_queue_state_check(struct kfd_criu_queue_cursor *cur,
			       const struct kfd_criu_queue_rec *queues,
			       u32 num_queues,
			       const struct kfd_criu_gpu_rec *gpus,
			       const struct kfd_criu_queue_state_hdr *hdr,
			       const struct kfd_criu_queue_dyn *dyn, u32 len);

bool kfd_criu_slot_user_visible(enum kfd_criu_slot_kind kind,
				bool sdma_static_doorbells);
const char *kfd_criu_slot_name(enum kfd_criu_slot_kind kind);
bool kfd_criu_svm_ranges_cover(const struct kfd_criu_svm_rec *ranges,
			       u32 num_ranges, u64 start, u64 len, u32 gpu);
int kfd_criu_pick_slot(u32 wanted, const unsigned long *taken, u32 nbits,
		       u32 flags);

int kfd_criu_validate_svm_range(const struct kfd_criu_svm_rec *rec,
				const struct kfd_criu_gpu_rec *gpus,
				u32 num_gpus);
int kfd_criu_check_svm_ranges(const struct kfd_criu_svm_rec *ranges, u32 n,
			      const struct kfd_criu_gpu_rec *gpus,
			      u32 num_gpus,
			      const struct kfd_criu_bo_rec *bos, u32 num_bos);

#endif /* KFD_CRIU_IMAGE_H_INCLUDED */
