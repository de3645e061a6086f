/* SPDX-License-Identifier: GPL-2.0 OR MIT */

#ifndef KFD_CRIU_XFER_H_INCLUDED
#define KFD_CRIU_XFER_H_INCLUDED

#include <linux/sizes.h>
#include <linux/types.h>

struct dma_fence;

/** KFD_CRIU_XFER_SLOTS - bounce buffers of one transfer, in flight at once */
#define KFD_CRIU_XFER_SLOTS	2

/**
 * KFD_CRIU_XFER_BOUNCE_SIZE - bytes of each bounce buffer of an operation
 *
 * A whole number of BO_DATA chunks; 8 MiB of GTT per operation for both.
 * Fixed until measurements on hardware show a better size.
 */
#define KFD_CRIU_XFER_BOUNCE_SIZE	SZ_4M

/**
 * struct kfd_criu_xfer_req - one contiguous piece of a BO's contents
 * @index: the BO's record index in the image
 * @offset: byte offset in the BO's VA range
 * @len: bytes, at most the bounce size
 * @dev: the device that owns the BO; its bounce buffer must be on it
 */
struct kfd_criu_xfer_req {
	u32 index;
	u64 offset;
	u32 len;
	void *dev;
};

/**
 * struct kfd_criu_xfer_ops - what a transfer needs of the device and caller
 * @bounce_alloc: allocate a bounce buffer of @size bytes on @dev that the
 *	copy engine can reach and the CPU has mapped at *@cpu
 * @bounce_free: free a bounce buffer, or have it freed once @pending, a
 *	copy that may still use it, signaled; @pending may be NULL
 * @start: start copying @req between its BO and the bounce buffer (into
 *	the BO when @to_bo). Sets *@fence to the copy's fence, or to NULL
 *	when the copy is already complete; on failure, to what was
 *	submitted before it
 * @consume: take the bytes of a completed dump copy out of the bounce
 *	buffer (write them to the image); not used by a restore
 */
struct kfd_criu_xfer_ops {
	int (*bounce_alloc)(void *dev, u32 size, void **bounce, void **cpu);
	void (*bounce_free)(void *bounce, struct dma_fence *pending);
	int (*start)(void *priv, const struct kfd_criu_xfer_req *req,
		     void *bounce, void *cpu, bool to_bo,
		     struct dma_fence **fence);
	int (*consume)(void *priv, const struct kfd_criu_xfer_req *req,
		       const void *cpu);
};

/**
 * enum kfd_criu_slot_state - where a bounce buffer is in the pipeline
 * @KFD_CRIU_SLOT_FREE: holds nothing anyone needs
 * @KFD_CRIU_SLOT_FILLING: restore only: the CPU is filling it
 * @KFD_CRIU_SLOT_BUSY: a copy was started; its fence is pending or unread
 */
enum kfd_criu_slot_state {
	KFD_CRIU_SLOT_FREE,
	KFD_CRIU_SLOT_FILLING,
	KFD_CRIU_SLOT_BUSY,
};

/**
 * struct kfd_criu_xfer_slot - one bounce buffer
 * @req: the piece it holds or is being copied
 * @dev: the device the bounce buffer is on, NULL before the first use
 * @bounce: the ops' handle of the buffer
 * @cpu: its kernel mapping
 * @fence: the copy in flight, or NULL
 * @state: see &enum kfd_criu_slot_state
 */
struct kfd_criu_xfer_slot {
	struct kfd_criu_xfer_req req;
	void *dev;
	void *bounce;
	void *cpu;
	struct dma_fence *fence;
	enum kfd_criu_slot_state state;
};

/**
 * struct kfd_criu_xfer - the bounce buffers of one CHECKPOINT or RESTORE
 * @ops: device and caller operations
 * @priv: the caller's argument to @ops->start and @ops->consume
 * @bounce_size: bytes of each bounce buffer, a multiple of the BO chunk
 * @to_bo: a restore (image to BOs) rather than a dump
 * @next: the slot used next; on a dump, also the oldest one in flight
 * @error: the first error; every later call returns it
 * @slot: the bounce buffers
 */
struct kfd_criu_xfer {
	const struct kfd_criu_xfer_ops *ops;
	void *priv;
	u32 bounce_size;
	bool to_bo;
	unsigned int next;
	int error;
	struct kfd_criu_xfer_slot slot[KFD_CRIU_XFER_SLOTS];
};

void kfd_criu_xfer_init(struct kfd_criu_xfer *x,
			const struct kfd_criu_xfer_ops *ops, void *priv,
			u32 bounce_size, bool to_bo);
int kfd_criu_xfer_read(struct kfd_criu_xfer *x,
		       const struct kfd_criu_xfer_req *req);
int kfd_criu_xfer_write(struct kfd_criu_xfer *x,
			const struct kfd_criu_xfer_req *req, const void *data);
int kfd_criu_xfer_flush(struct kfd_criu_xfer *x);
int kfd_criu_fence_wait_killable(struct dma_fence *fence);
void kfd_criu_xfer_fini(struct kfd_criu_xfer *x);

#endif
