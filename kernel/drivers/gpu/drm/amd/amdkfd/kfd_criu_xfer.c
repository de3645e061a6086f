// SPDX-License-Identifier: GPL-2.0 OR MIT

/**
 * DOC: CRIU image mode - pipelined BO contents transfers
 *
 * A CHECKPOINT or RESTORE moves BO contents through its own bounce
 * buffers, %KFD_CRIU_XFER_SLOTS of them, each of
 * %KFD_CRIU_XFER_BOUNCE_SIZE bytes.
 * Nothing is shared with another operation or with a debugger's access
 * to the same device, so concurrent operations cannot see each other's
 * data, and the kernel memory an operation uses for contents does not
 * depend on how much VRAM the process has.
 *
 * The buffers take turns, so that the copy engine and the CPU work at
 * the same time:
 *
 * - A dump starts the copy of a piece into one buffer, then waits for
 *   the copy started before it and writes that piece to the image while
 *   the new one is being copied (kfd_criu_xfer_read()).
 * - A restore fills one buffer from the image and starts its copy into
 *   the BO, then fills the other buffer while that copy runs; a buffer is
 *   filled again only after its last copy completed
 *   (kfd_criu_xfer_write()).
 *
 * Fences are waited for killably (kfd_criu_fence_wait_killable()): a
 * fatal signal ends the operation with -EINTR, other signals do not. A
 * dump waits for its copies without locks; a restore waits under
 * p->mutex, which the copies do not depend on. A copy that
 * fails (its fence carries an error) fails the transfer with -EIO. A
 * buffer is never reused before its copy completed; kfd_criu_xfer_fini()
 * does not wait for copies still in flight, it hands each one to the
 * freeing of its buffer, which keeps the memory until the copy is done.
 * The first error sticks; every later call returns it.
 *
 * This file only orders the copies. The device operations (how a bounce
 * buffer is allocated, how a copy starts) come from &struct
 * kfd_criu_xfer_ops, which kfd_criu_bo_copy.c implements for amdgpu and
 * the KUnit tests implement with a fake copy engine.
 */

#include <linux/dma-fence.h>
#include <linux/errno.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/string.h>

#include "kfd_criu_image.h"
#include "kfd_criu_xfer.h"

static_assert(KFD_CRIU_XFER_BOUNCE_SIZE % KFD_CRIU_BO_CHUNK == 0);

/**
 * kfd_criu_xfer_init - set up a transfer; nothing is allocated yet
 * @x: the transfer
 * @ops: device and caller operations
 * @priv: the caller's argument to @ops
 * @bounce_size: bytes of each bounce buffer, a multiple of %KFD_CRIU_BO_CHUNK
 *	(%KFD_CRIU_XFER_BOUNCE_SIZE outside the tests)
 * @to_bo: true for a restore
 */
void kfd_criu_xfer_init(struct kfd_criu_xfer *x,
			const struct kfd_criu_xfer_ops *ops, void *priv,
			u32 bounce_size, bool to_bo)
{
	memset(x, 0, sizeof(*x));
	x->ops = ops;
	x->priv = priv;
	x->bounce_size = bounce_size;
	x->to_bo = to_bo;
}

static int kfd_criu_xfer_fail(struct kfd_criu_xfer *x, int err)
{
	if (!x->error)
		x->error = err;
	return x->error;
}

/* A bounce buffer on @dev for @s, reusing the one it has there. */
static int kfd_criu_xfer_slot_on(struct kfd_criu_xfer *x,
				 struct kfd_criu_xfer_slot *s, void *dev)
{
	int ret;

	if (s->bounce && s->dev == dev)
		return 0;
	if (s->bounce) {
		x->ops->bounce_free(s->bounce, NULL);
		s->bounce = NULL;
		s->cpu = NULL;
		s->dev = NULL;
	}
	ret = x->ops->bounce_alloc(dev, x->bounce_size, &s->bounce, &s->cpu);
	if (ret) {
		s->bounce = NULL;
		s->cpu = NULL;
		return ret;
	}
	s->dev = dev;
	return 0;
}

/**
 * struct kfd_criu_waiter - a task sleeping until a fence signals
 * @cb: on the fence
 * @task: the task
 */
struct kfd_criu_waiter {
	struct dma_fence_cb cb;
	struct task_struct *task;
};

static void kfd_criu_waiter_wake(struct dma_fence *fence,
				 struct dma_fence_cb *cb)
{
	wake_up_process(container_of(cb, struct kfd_criu_waiter, cb)->task);
}

/**
 * kfd_criu_fence_wait_killable - wait for a fence until a fatal signal
 * @fence: the fence
 *
 * The task sleeps killable, so other signals neither end the wait nor
 * wake it, and the hung task detector still sees a fence that never
 * signals.
 *
 * Context: may sleep.
 * Return: 0 once @fence signaled, or -EINTR for a fatal signal, pending
 * already or arriving during the wait.
 */
int kfd_criu_fence_wait_killable(struct dma_fence *fence)
{
	struct kfd_criu_waiter w = { .task = current };
	int ret = 0;

	/* A task being killed stops here, whether the copy is done or not */
	if (fatal_signal_pending(current))
		return -EINTR;
	if (dma_fence_add_callback(fence, &w.cb, kfd_criu_waiter_wake))
		return 0;
	for (;;) {
		set_current_state(TASK_KILLABLE);
		if (dma_fence_is_signaled(fence))
			break;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	dma_fence_remove_callback(fence, &w.cb);
	return ret;
}

/* Waits for @s's copy; a dump then hands its bytes to the caller. */
static int kfd_criu_xfer_retire(struct kfd_criu_xfer *x,
				struct kfd_criu_xfer_slot *s)
{
	int ret;

	if (s->fence) {
		ret = kfd_criu_fence_wait_killable(s->fence);
		if (ret)
			return ret;
		ret = dma_fence_get_status(s->fence);
		dma_fence_put(s->fence);
		s->fence = NULL;
		/* Signaled: 1, or the error of the copy */
		if (ret < 0)
			return -EIO;
	}
	s->state = KFD_CRIU_SLOT_FREE;
	return x->to_bo ? 0 : x->ops->consume(x->priv, &s->req, s->cpu);
}

static int kfd_criu_xfer_start(struct kfd_criu_xfer *x,
			       struct kfd_criu_xfer_slot *s)
{
	int ret;

	/* A failed start may leave a fence: kfd_criu_xfer_fini() hands it on */
	ret = x->ops->start(x->priv, &s->req, s->bounce, s->cpu, x->to_bo,
			    &s->fence);
	if (ret)
		return ret;
	s->state = KFD_CRIU_SLOT_BUSY;
	x->next = (x->next + 1) % KFD_CRIU_XFER_SLOTS;
	return 0;
}

/**
 * kfd_criu_xfer_read - start copying a piece of a BO into a bounce buffer
 * @x: a dump's transfer
 * @req: the piece; @req->len at most the bounce size
 *
 * When every buffer is in use, the oldest copy is waited for and handed
 * to @x->ops->consume first, after this piece's predecessors were started.
 * Pieces reach ->consume in the order they were read.
 *
 * Context: may sleep; no lock the copy or ->consume needs may be held.
 * Return: 0, the first error of the transfer, -EINTR for a signal, or
 * the error of a copy, an allocation or ->consume.
 */
int kfd_criu_xfer_read(struct kfd_criu_xfer *x,
		       const struct kfd_criu_xfer_req *req)
{
	struct kfd_criu_xfer_slot *s = &x->slot[x->next];
	int ret;

	if (x->error)
		return x->error;
	if (x->to_bo || !req->len || req->len > x->bounce_size)
		return kfd_criu_xfer_fail(x, -EINVAL);
	if (s->state == KFD_CRIU_SLOT_BUSY) {
		ret = kfd_criu_xfer_retire(x, s);
		if (ret)
			return kfd_criu_xfer_fail(x, ret);
	}
	ret = kfd_criu_xfer_slot_on(x, s, req->dev);
	if (ret)
		return kfd_criu_xfer_fail(x, ret);
	s->req = *req;
	ret = kfd_criu_xfer_start(x, s);
	return ret ? kfd_criu_xfer_fail(x, ret) : 0;
}

/* Whether @req continues the piece @s is being filled with. */
static bool kfd_criu_xfer_continues(const struct kfd_criu_xfer *x,
				    const struct kfd_criu_xfer_slot *s,
				    const struct kfd_criu_xfer_req *req)
{
	return s->req.index == req->index && s->req.dev == req->dev &&
	       s->req.offset + s->req.len == req->offset &&
	       s->req.len + req->len <= x->bounce_size;
}

/**
 * kfd_criu_xfer_write - add image bytes to a restore's bounce buffer
 * @x: a restore's transfer
 * @req: where the bytes go; @req->len at most the bounce size
 * @data: @req->len bytes
 *
 * Bytes that continue the current piece of the same BO are appended to
 * it. Otherwise, or when the buffer is full, its copy into the BO is
 * started and the next buffer is filled once its last copy completed.
 *
 * Context: may sleep; no lock the copy needs may be held.
 * Return: 0, the first error of the transfer, -EINTR for a signal, or
 * the error of a copy or an allocation.
 */
int kfd_criu_xfer_write(struct kfd_criu_xfer *x,
			const struct kfd_criu_xfer_req *req, const void *data)
{
	struct kfd_criu_xfer_slot *s = &x->slot[x->next];
	int ret;

	if (x->error)
		return x->error;
	if (!x->to_bo || !req->len || req->len > x->bounce_size)
		return kfd_criu_xfer_fail(x, -EINVAL);
	if (s->state == KFD_CRIU_SLOT_FILLING &&
	    !kfd_criu_xfer_continues(x, s, req)) {
		ret = kfd_criu_xfer_start(x, s);
		if (ret)
			return kfd_criu_xfer_fail(x, ret);
		s = &x->slot[x->next];
	}
	if (s->state == KFD_CRIU_SLOT_BUSY) {
		ret = kfd_criu_xfer_retire(x, s);
		if (ret)
			return kfd_criu_xfer_fail(x, ret);
	}
	if (s->state == KFD_CRIU_SLOT_FREE) {
		ret = kfd_criu_xfer_slot_on(x, s, req->dev);
		if (ret)
			return kfd_criu_xfer_fail(x, ret);
		s->req = *req;
		s->req.len = 0;
		s->state = KFD_CRIU_SLOT_FILLING;
	}
	memcpy(s->cpu + s->req.len, data, req->len);
	s->req.len += req->len;
	if (s->req.len == x->bounce_size) {
		ret = kfd_criu_xfer_start(x, s);
		if (ret)
			return kfd_criu_xfer_fail(x, ret);
	}
	return 0;
}

/**
 * kfd_criu_xfer_flush - complete every piece read or written so far
 * @x: the transfer
 *
 * A restore starts the copy of its partly filled buffer; then every copy
 * in flight is waited for, oldest first, and a dump's pieces are handed
 * to ->consume.
 *
 * Context: may sleep; no lock the copy or ->consume needs may be held.
 * Return: 0 or as kfd_criu_xfer_read() and kfd_criu_xfer_write().
 */
int kfd_criu_xfer_flush(struct kfd_criu_xfer *x)
{
	struct kfd_criu_xfer_slot *s = &x->slot[x->next];
	unsigned int i;
	int ret;

	if (x->error)
		return x->error;
	if (s->state == KFD_CRIU_SLOT_FILLING) {
		ret = kfd_criu_xfer_start(x, s);
		if (ret)
			return kfd_criu_xfer_fail(x, ret);
	}
	for (i = 0; i < KFD_CRIU_XFER_SLOTS; i++) {
		s = &x->slot[(x->next + i) % KFD_CRIU_XFER_SLOTS];
		if (s->state != KFD_CRIU_SLOT_BUSY)
			continue;
		ret = kfd_criu_xfer_retire(x, s);
		if (ret)
			return kfd_criu_xfer_fail(x, ret);
	}
	return 0;
}

/**
 * kfd_criu_xfer_fini - free the buffers of a flushed or failed transfer
 * @x: the transfer
 *
 * Does not wait: a buffer a copy may still use goes with the copy's
 * fence, and a BO a copy may still use holds that fence too (see
 * &kfd_criu_xfer_ops.start). Pieces not flushed are dropped.
 *
 * Context: may sleep.
 */
void kfd_criu_xfer_fini(struct kfd_criu_xfer *x)
{
	struct kfd_criu_xfer_slot *s;
	unsigned int i;

	for (i = 0; i < KFD_CRIU_XFER_SLOTS; i++) {
		s = &x->slot[i];
		if (s->bounce)
			x->ops->bounce_free(s->bounce, s->fence);
		dma_fence_put(s->fence);
		s->fence = NULL;
		s->bounce = NULL;
		s->cpu = NULL;
		s->dev = NULL;
		s->state = KFD_CRIU_SLOT_FREE;
	}
}

#if IS_BUILTIN(CONFIG_HSA_AMD_CRIU_KUNIT_TEST)
#include "tests/kfd_criu_xfer_test.c"
#endif
