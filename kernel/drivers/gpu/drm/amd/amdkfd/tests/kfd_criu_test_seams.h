/* SPDX-License-Identifier: GPL-2.0 OR MIT */

/*
 * The KUnit seams of image mode, for a test in another file. Each seam is
 * a static function of its file with a static stub redirect; a test
 * activates a stub by the function's address, which only its own file
 * knows. The test file of each of those files (#included at its bottom)
 * publishes the addresses here, and the fakes behind them that are its
 * own: the ops-level test of kfd_criu.c runs the whole CHECKPOINT,
 * RESTORE and RESUME through all of them.
 */

#ifndef KFD_CRIU_TEST_SEAMS_H_INCLUDED
#define KFD_CRIU_TEST_SEAMS_H_INCLUDED

#include <kunit/test.h>

#include "../kfd_criu.h"
#include "../kfd_priv.h"

/* Declared by the parts later in the series than the first user */
struct kfd_criu_svm_range;
struct kfd_event;
struct kfd_node_properties;

/**
 * struct kfd_criu_bos_seams - the seams of kfd_criu_bos.c
 * @on_vm: whether a BO is mapped in a VM
 * @userptr: a userptr BO's address
 * @gem_offset: a BO's mmap offset through its render node
 * @alloc: creates a BO at its VA and handle
 * @vm_map: maps a BO in a GPU's VM
 * @vm_sync: waits for a BO's page table updates
 * @tlb_flush: flushes a GPU's TLB
 * @vm_unmap: unmaps a BO from a GPU's VM
 * @release: frees a BO
 * @fence: gives a BO the eviction fence of its process
 */
struct kfd_criu_bos_seams {
	bool (*on_vm)(void *drm_priv, struct kgd_mem *mem);
	int (*userptr)(struct kgd_mem *mem, u64 *addr);
	u64 (*gem_offset)(struct kgd_mem *mem);
	int (*alloc)(struct kfd_process_device *pdd,
		     struct kfd_criu_bo_bucket *bucket,
		     struct kfd_criu_bo_priv_data *priv, struct kgd_mem **mem);
	int (*vm_map)(struct kfd_process_device *pdd, struct kgd_mem *mem);
	int (*vm_sync)(struct kgd_mem *mem);
	void (*tlb_flush)(struct kfd_process_device *pdd);
	int (*vm_unmap)(struct kfd_process_device *pdd, struct kgd_mem *mem);
	int (*release)(struct kfd_process_device *pdd, struct kgd_mem *mem);
	int (*fence)(struct kgd_mem *mem);
};

/**
 * struct kfd_criu_gpus_seams - the seams of kfd_criu_gpus.c
 * @node_props: the topology entry of a GPU
 * @release_vm: releases a GPU's VM
 * @init_vm: acquires a GPU's VM on a render node
 * @bind_gpu: takes the runtime PM reference of a GPU
 * @put_gpu: gives back a GPU's doorbells and runtime PM reference
 */
struct kfd_criu_gpus_seams {
	const struct kfd_node_properties *(*node_props)(struct kfd_node *node);
	void (*release_vm)(struct kfd_process *p,
			   struct kfd_process_device *pdd);
	int (*init_vm)(struct kfd_process *p, struct kfd_process_device *pdd,
		       int drm_fd);
	int (*bind_gpu)(struct kfd_process *p, struct kfd_process_device *pdd);
	void (*put_gpu)(struct kfd_process_device *pdd, bool doorbells,
			bool runtime_pm);
};

/**
 * struct kfd_criu_svm_seams - the seams of kfd_criu_svm.c
 * @set_attr: AMDKFD_IOC_SVM's SET_ATTR of a kept range
 */
struct kfd_criu_svm_seams {
	int (*set_attr)(struct kfd_process *p, struct mm_struct *mm,
			const struct kfd_criu_svm_range *r, u32 n,
			struct kfd_ioctl_svm_attribute *attrs);
};

/**
 * struct kfd_criu_queues_fakes - the fake queue manager of
 *	kfd_criu_queues_test.c, behind the seams of kfd_criu_queues.c
 * @fake_new: activates the fake queue manager for the running test; the
 *	second fake GPU is a GFX10.3 (the first a GFX 9.4.3 with two XCCs)
 * @cwsr_svm_taken: how many CWSR areas in SVM ranges RESUME took for
 *	the queues a restore created without them
 * @node: fake GPU @gpu (0 or 1): a node with a device queue manager, the
 *	family's MQD managers and four SDMA engines, gpu_id 0x4100 + @gpu
 * @create: creates a queue with given ids, as pqm_create_queue() does
 *	for a restore; it starts evicted when its GPU's process is
 * @destroy: destroys a queue, as pqm_destroy_queue() does
 * @fail_create: makes the next queue creation of the running test fail
 *	with @err, as pqm_create_queue() does without a queue slot or VMID
 */
struct kfd_criu_queues_fakes {
	void (*fake_new)(struct kunit *test);
	unsigned int (*cwsr_svm_taken)(void);
	struct kfd_node *(*node)(struct kunit *test, u32 gpu);
	int (*create)(struct kfd_process *p, struct kfd_process_device *pdd,
		      struct queue_properties *qp,
		      const struct kfd_criu_queue_priv_data *ids);
	int (*destroy)(struct kfd_process *p, u32 qid);
	void (*fail_create)(int err);
};

/**
 * struct kfd_criu_events_seams - the seams of kfd_criu_events.c
 * @event_add: adds one restored event under its id
 */
struct kfd_criu_events_seams {
	int (*event_add)(struct file *devkfd, struct kfd_process *p,
			 struct kfd_event *ev, u32 id);
};

extern const struct kfd_criu_bos_seams kfd_criu_bos_seams;
extern const struct kfd_criu_events_seams kfd_criu_events_seams;
extern const struct kfd_criu_gpus_seams kfd_criu_gpus_seams;
extern const struct kfd_criu_svm_seams kfd_criu_svm_seams;
extern const struct kfd_criu_queues_fakes kfd_criu_queues_fakes;

#endif
