// SPDX-License-Identifier: GPL-2.0 OR MIT

/**
 * DOC: KUnit tests of the pipelined BO contents transfers
 *
 * Included at the end of kfd_criu_xfer.c. Suite kfd_criu_xfer runs dumps
 * and restores through a fake copy engine: its BOs are kernel memory cut
 * into fragments of uneven sizes (as VRAM resources are), its bounce
 * buffers count the bytes they hold per fake device, and its copies run
 * on a workqueue and signal their fences from there. A copy is held back
 * until the next one starts or someone waits for it, so a transfer that
 * starts copy k+1 before it waits for copy k is seen doing so while copy
 * k is still in flight ('O' in the log), and one that waits first is
 * not. A copy can be made to fail (its fence carries an error), and a
 * start can send the test's thread a SIGKILL.
 * A buffer freed with a copy pending is freed by the fake only after the
 * copy, as TTM's delayed destroy does. Every case checks the bytes that
 * arrive, and that no bounce buffer is freed while a copy to or from it
 * is pending.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#define KFD_XFER_TEST_MAX_BOS	4
#define KFD_XFER_TEST_MAX_EVENTS	256
/* The bounce size of the cases about order and errors, to keep them fast */
#define KFD_XFER_TEST_PIECE	(4 * PAGE_SIZE)

/* A fake device: bytes its bounce buffers hold now and at most */
struct kfd_xfer_fake_dev {
	u64 bytes;
	u64 peak;
	unsigned int freed_busy;
	struct list_head deferred;
};

#define KFD_XFER_FAKE_DEV(d)	{ .deferred = LIST_HEAD_INIT((d).deferred) }

struct kfd_xfer_fake_bounce {
	struct kfd_xfer_fake_dev *dev;
	u8 *mem;
	u32 size;
	bool busy;
	struct dma_fence *pending;
	struct list_head deferred;
};

/* A BO in fragments: page counts 3, 1, 5, 2, 3, 1, 5, 2, ... */
struct kfd_xfer_fake_bo {
	struct kfd_xfer_fake_dev *dev;
	u64 size;
	unsigned int nfrags;
	u8 **frag;
	u64 *frag_len;
};

/**
 * struct kfd_xfer_fake - the fake copy engine and the caller
 * @test: the running test
 * @wq: where the copies run
 * @context: the fences' context
 * @bos: the BOs, by record index
 * @num_bos: entries at @bos
 * @out: the bytes a dump handed to ->consume, per BO
 * @next_index: the BO ->consume expects next
 * @next_offset: the offset it expects next
 * @starts: copies started
 * @fail_copy: the copy (by start number) whose fence carries -EIO, or -1
 * @kill_at: the start (by number) that sends SIGKILL, or -1
 * @fail_start: the start (by number) that submits its copy and then
 *	fails, as a copy split in several jobs can, or -1
 * @events: 'S' (start), 'W' (first wait), 'O' (copy in flight when the
 *	next one started) or 'C' (consume) and a number, in the order they ran
 * @num_events: entries at @events
 * @last: the copy started last, referenced, or NULL
 * @held: copies whose work may wait for their release
 * @held_lock: protects @held
 */
struct kfd_xfer_fake {
	struct kunit *test;
	struct workqueue_struct *wq;
	u64 context;
	struct kfd_xfer_fake_bo *bos[KFD_XFER_TEST_MAX_BOS];
	unsigned int num_bos;
	u8 *out[KFD_XFER_TEST_MAX_BOS];
	u32 next_index;
	u64 next_offset;
	int starts;
	int fail_copy;
	int kill_at;
	int fail_start;
	struct {
		char kind;
		int seq;
	} events[KFD_XFER_TEST_MAX_EVENTS];
	unsigned int num_events;
	struct kfd_xfer_fake_fence *last;
	struct list_head held;
	spinlock_t held_lock;	/* protects held */
};

struct kfd_xfer_fake_fence {
	struct dma_fence base;
	spinlock_t lock;	/* the fence's lock */
	struct work_struct work;
	struct completion release;
	struct list_head link;
	struct kfd_xfer_fake *fake;
	struct kfd_xfer_fake_bounce *bounce;
	struct kfd_criu_xfer_req req;
	bool to_bo;
	bool fail;
	int seq;
};

static void kfd_xfer_log(struct kfd_xfer_fake *fake, char kind, int seq)
{
	if (fake->num_events < KFD_XFER_TEST_MAX_EVENTS) {
		fake->events[fake->num_events].kind = kind;
		fake->events[fake->num_events].seq = seq;
		fake->num_events++;
	}
}

static u8 kfd_xfer_pattern(u32 index, u64 offset)
{
	return (u8)(offset * 131 + (offset >> 12) * 17 + index * 59 + 1);
}

static struct kfd_xfer_fake_bo *
kfd_xfer_fake_bo(struct kunit *test, struct kfd_xfer_fake_dev *dev,
		 u32 index, u64 size, bool fill)
{
	static const unsigned int pages[] = { 3, 1, 5, 2 };
	struct kfd_xfer_fake_bo *bo;
	u64 done = 0, len, i;
	unsigned int n = 0;

	bo = kunit_kzalloc(test, sizeof(*bo), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bo);
	bo->dev = dev;
	bo->size = size;
	bo->frag = kunit_kcalloc(test, size / PAGE_SIZE + 1, sizeof(*bo->frag),
				 GFP_KERNEL);
	bo->frag_len = kunit_kcalloc(test, size / PAGE_SIZE + 1,
				     sizeof(*bo->frag_len), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bo->frag);
	KUNIT_ASSERT_NOT_NULL(test, bo->frag_len);
	while (done < size) {
		len = min_t(u64, pages[n % ARRAY_SIZE(pages)] * PAGE_SIZE,
			    size - done);
		bo->frag[n] = kunit_kzalloc(test, len, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, bo->frag[n]);
		for (i = 0; fill && i < len; i++)
			bo->frag[n][i] = kfd_xfer_pattern(index, done + i);
		bo->frag_len[n] = len;
		done += len;
		n++;
	}
	bo->nfrags = n;
	return bo;
}

/* Copies between a fragmented BO and a flat buffer, as a cursor walk. */
static void kfd_xfer_fake_bo_copy(struct kfd_xfer_fake_bo *bo, u64 offset,
				  u8 *buf, u64 len, bool to_bo)
{
	unsigned int f = 0;
	u64 n;

	while (f < bo->nfrags && offset >= bo->frag_len[f])
		offset -= bo->frag_len[f++];
	for (; len && f < bo->nfrags; f++, offset = 0) {
		n = min(len, bo->frag_len[f] - offset);
		if (to_bo)
			memcpy(bo->frag[f] + offset, buf, n);
		else
			memcpy(buf, bo->frag[f] + offset, n);
		buf += n;
		len -= n;
	}
}

static const char *kfd_xfer_fence_name(struct dma_fence *f)
{
	return "kfd_criu_xfer_test";
}

/* Someone waits: log it once and let the copy run. */
static bool kfd_xfer_fence_enable(struct dma_fence *f)
{
	struct kfd_xfer_fake_fence *ff = container_of(f, typeof(*ff), base);

	kfd_xfer_log(ff->fake, 'W', ff->seq);
	complete(&ff->release);
	return true;
}

static const struct dma_fence_ops kfd_xfer_fence_ops = {
	.get_driver_name = kfd_xfer_fence_name,
	.get_timeline_name = kfd_xfer_fence_name,
	.enable_signaling = kfd_xfer_fence_enable,
};

static void kfd_xfer_fake_copy(struct work_struct *work)
{
	struct kfd_xfer_fake_fence *ff = container_of(work, typeof(*ff), work);
	struct kfd_xfer_fake_bo *bo = ff->fake->bos[ff->req.index];
	struct kfd_xfer_fake *fake = ff->fake;

	wait_for_completion(&ff->release);
	spin_lock(&fake->held_lock);
	list_del(&ff->link);
	spin_unlock(&fake->held_lock);
	kfd_xfer_fake_bo_copy(bo, ff->req.offset, ff->bounce->mem,
			      ff->req.len, ff->to_bo);
	if (ff->fail)
		dma_fence_set_error(&ff->base, -EIO);
	WRITE_ONCE(ff->bounce->busy, false);
	dma_fence_signal(&ff->base);
	dma_fence_put(&ff->base);
}

static int kfd_xfer_fake_alloc(void *dev, u32 size, void **bounce, void **cpu)
{
	struct kfd_xfer_fake_dev *fdev = dev;
	struct kfd_xfer_fake_bounce *b;

	b = kzalloc_obj(*b, GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	b->mem = kvzalloc(size, GFP_KERNEL);
	if (!b->mem) {
		kfree(b);
		return -ENOMEM;
	}
	b->dev = fdev;
	b->size = size;
	fdev->bytes += size;
	fdev->peak = max(fdev->peak, fdev->bytes);
	*bounce = b;
	*cpu = b->mem;
	return 0;
}

static void kfd_xfer_fake_release(struct kfd_xfer_fake_bounce *b)
{
	/* Freed while the engine may still write it */
	if (READ_ONCE(b->busy))
		b->dev->freed_busy++;
	b->dev->bytes -= b->size;
	kvfree(b->mem);
	kfree(b);
}

/* A buffer with a copy pending is freed after it, as by delayed destroy. */
static void kfd_xfer_fake_free(void *bounce, struct dma_fence *pending)
{
	struct kfd_xfer_fake_bounce *b = bounce;

	if (pending && !dma_fence_is_signaled(pending)) {
		b->pending = dma_fence_get(pending);
		list_add_tail(&b->deferred, &b->dev->deferred);
		return;
	}
	kfd_xfer_fake_release(b);
}

/* Completes the deferred frees of @dev: what TTM's delayed destroy does. */
static void kfd_xfer_fake_settle(struct kfd_xfer_fake_dev *dev)
{
	struct kfd_xfer_fake_bounce *b, *tmp;

	list_for_each_entry_safe(b, tmp, &dev->deferred, deferred) {
		dma_fence_wait(b->pending, false);
		dma_fence_put(b->pending);
		list_del(&b->deferred);
		kfd_xfer_fake_release(b);
	}
}

static int kfd_xfer_fake_start(void *priv, const struct kfd_criu_xfer_req *req,
			       void *bounce, void *cpu, bool to_bo,
			       struct dma_fence **fence)
{
	struct kfd_xfer_fake *fake = priv;
	struct kfd_xfer_fake_bounce *b = bounce;
	struct kfd_xfer_fake_fence *ff;

	if (req->index >= fake->num_bos || b->dev != req->dev ||
	    req->len > b->size || cpu != b->mem ||
	    req->offset + req->len > fake->bos[req->index]->size)
		return -EINVAL;
	ff = kzalloc_obj(*ff, GFP_KERNEL);
	if (!ff)
		return -ENOMEM;
	spin_lock_init(&ff->lock);
	ff->seq = fake->starts++;
	dma_fence_init(&ff->base, &kfd_xfer_fence_ops, &ff->lock,
		       fake->context, ff->seq + 1);
	INIT_WORK(&ff->work, kfd_xfer_fake_copy);
	init_completion(&ff->release);
	ff->fake = fake;
	ff->bounce = b;
	ff->req = *req;
	ff->to_bo = to_bo;
	ff->fail = ff->seq == fake->fail_copy;
	kfd_xfer_log(fake, 'S', ff->seq);
	if (fake->last) {
		if (!dma_fence_is_signaled(&fake->last->base))
			kfd_xfer_log(fake, 'O', fake->last->seq);
		complete(&fake->last->release);
		dma_fence_put(&fake->last->base);
	}
	fake->last = ff;
	dma_fence_get(&ff->base);
	spin_lock(&fake->held_lock);
	list_add_tail(&ff->link, &fake->held);
	spin_unlock(&fake->held_lock);
	if (ff->seq == fake->kill_at)
		send_sig(SIGKILL, current, 1);
	WRITE_ONCE(b->busy, true);
	*fence = dma_fence_get(&ff->base);
	queue_work(fake->wq, &ff->work);
	return ff->seq == fake->fail_start ? -EIO : 0;
}

static int kfd_xfer_fake_consume(void *priv,
				 const struct kfd_criu_xfer_req *req,
				 const void *cpu)
{
	struct kfd_xfer_fake *fake = priv;

	kfd_xfer_log(fake, 'C', req->index);
	if (req->index != fake->next_index || req->offset != fake->next_offset)
		return -EPROTO;
	memcpy(fake->out[req->index] + req->offset, cpu, req->len);
	fake->next_offset += req->len;
	if (fake->next_offset == fake->bos[req->index]->size) {
		fake->next_index++;
		fake->next_offset = 0;
	}
	return 0;
}

static const struct kfd_criu_xfer_ops kfd_xfer_fake_ops = {
	.bounce_alloc = kfd_xfer_fake_alloc,
	.bounce_free = kfd_xfer_fake_free,
	.start = kfd_xfer_fake_start,
	.consume = kfd_xfer_fake_consume,
};

/* Lets every held copy run and waits for them all. */
static void kfd_xfer_fake_quiesce(void *data)
{
	struct kfd_xfer_fake *fake = data;
	struct kfd_xfer_fake_fence *ff;

	spin_lock(&fake->held_lock);
	list_for_each_entry(ff, &fake->held, link)
		complete(&ff->release);
	spin_unlock(&fake->held_lock);
	flush_workqueue(fake->wq);
	if (fake->last)
		dma_fence_put(&fake->last->base);
	fake->last = NULL;
}

static void kfd_xfer_fake_destroy(void *data)
{
	struct kfd_xfer_fake *fake = data;

	kfd_xfer_fake_quiesce(fake);
	destroy_workqueue(fake->wq);
}

static void kfd_xfer_kvfree(void *data)
{
	kvfree(data);
}

static struct kfd_xfer_fake *kfd_xfer_fake_new(struct kunit *test)
{
	struct kfd_xfer_fake *fake;

	fake = kunit_kzalloc(test, sizeof(*fake), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fake);
	fake->test = test;
	fake->fail_copy = -1;
	fake->kill_at = -1;
	fake->fail_start = -1;
	fake->context = dma_fence_context_alloc(1);
	INIT_LIST_HEAD(&fake->held);
	spin_lock_init(&fake->held_lock);
	fake->wq = alloc_workqueue("kfd_xfer_test", WQ_UNBOUND, 2);
	KUNIT_ASSERT_NOT_NULL(test, fake->wq);
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, kfd_xfer_fake_destroy,
						  fake), 0);
	return fake;
}

static void kfd_xfer_add_bo(struct kunit *test, struct kfd_xfer_fake *fake,
			    struct kfd_xfer_fake_dev *dev, u64 size, bool fill)
{
	u32 i = fake->num_bos++;

	KUNIT_ASSERT_LT(test, i, KFD_XFER_TEST_MAX_BOS);
	fake->bos[i] = kfd_xfer_fake_bo(test, dev, i, size, fill);
	fake->out[i] = kvzalloc(size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fake->out[i]);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, kfd_xfer_kvfree,
							fake->out[i]), 0);
	/* Runs before the BO's memory goes, should a case stop half way */
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							kfd_xfer_fake_quiesce,
							fake), 0);
}

/* The deferred frees of every device of @fake's BOs. */
static void kfd_xfer_settle_all(struct kfd_xfer_fake *fake)
{
	u32 i;

	for (i = 0; i < fake->num_bos; i++)
		kfd_xfer_fake_settle(fake->bos[i]->dev);
}

/* Reads the next piece of every BO in turn; 0 when all were read. */
static int kfd_xfer_read_piece(struct kfd_criu_xfer *x,
			       struct kfd_xfer_fake *fake, u32 *index,
			       u64 *offset)
{
	struct kfd_criu_xfer_req req;

	if (*index == fake->num_bos)
		return 1;
	req.index = *index;
	req.offset = *offset;
	req.len = min_t(u64, x->bounce_size,
			fake->bos[*index]->size - *offset);
	req.dev = fake->bos[*index]->dev;
	*offset += req.len;
	if (*offset == fake->bos[*index]->size) {
		(*index)++;
		*offset = 0;
	}
	return kfd_criu_xfer_read(x, &req);
}

/* A whole dump of @fake's BOs; returns the first error. */
static int kfd_xfer_dump(struct kfd_xfer_fake *fake, u32 bounce_size)
{
	struct kfd_criu_xfer x;
	u32 index = 0;
	u64 offset = 0;
	int ret;

	kfd_criu_xfer_init(&x, &kfd_xfer_fake_ops, fake, bounce_size, false);
	do {
		ret = kfd_xfer_read_piece(&x, fake, &index, &offset);
	} while (!ret);
	if (ret > 0)
		ret = kfd_criu_xfer_flush(&x);
	kfd_criu_xfer_fini(&x);
	kfd_xfer_settle_all(fake);
	return ret;
}

/* A whole restore from BO_DATA-sized records of the pattern. */
static int kfd_xfer_restore(struct kfd_xfer_fake *fake, u32 bounce_size)
{
	/* Records as the stream has them, or smaller for small buffers */
	u32 rec_len = min_t(u32, KFD_CRIU_BO_CHUNK, bounce_size);
	struct kfd_criu_xfer_req req;
	struct kfd_criu_xfer x;
	u8 *rec;
	u64 off;
	u32 i, j;
	int ret = 0;

	rec = kvmalloc(rec_len, GFP_KERNEL);
	if (!rec)
		return -ENOMEM;
	kfd_criu_xfer_init(&x, &kfd_xfer_fake_ops, fake, bounce_size, true);
	for (i = 0; !ret && i < fake->num_bos; i++) {
		for (off = 0; !ret && off < fake->bos[i]->size; off += req.len) {
			req.index = i;
			req.offset = off;
			req.len = min_t(u64, rec_len, fake->bos[i]->size - off);
			req.dev = fake->bos[i]->dev;
			for (j = 0; j < req.len; j++)
				rec[j] = kfd_xfer_pattern(i, off + j);
			ret = kfd_criu_xfer_write(&x, &req, rec);
		}
	}
	if (!ret)
		ret = kfd_criu_xfer_flush(&x);
	kfd_criu_xfer_fini(&x);
	kfd_xfer_settle_all(fake);
	kvfree(rec);
	return ret;
}

/* The first offset of BO @i whose dumped byte is wrong, or -1. */
static s64 kfd_xfer_dump_mismatch(struct kfd_xfer_fake *fake, u32 i)
{
	u64 off;

	for (off = 0; off < fake->bos[i]->size; off++)
		if (fake->out[i][off] != kfd_xfer_pattern(i, off))
			return off;
	return -1;
}

static s64 kfd_xfer_restore_mismatch(struct kfd_xfer_fake *fake, u32 i)
{
	/* Flat copy first: a walk per byte is quadratic in the fragments */
	kfd_xfer_fake_bo_copy(fake->bos[i], 0, fake->out[i],
			      fake->bos[i]->size, false);
	return kfd_xfer_dump_mismatch(fake, i);
}

/* The position of event @kind number @seq in the log, or -1. */
static int kfd_xfer_event_at(struct kfd_xfer_fake *fake, char kind, int seq)
{
	unsigned int i;

	for (i = 0; i < fake->num_events; i++)
		if (fake->events[i].kind == kind && fake->events[i].seq == seq)
			return i;
	return -1;
}

/* Copy k+1 started while copy k was in flight, for every k. */
static void kfd_xfer_expect_overlap(struct kunit *test,
				    struct kfd_xfer_fake *fake)
{
	int k;

	KUNIT_EXPECT_GE(test, fake->starts, 2);
	for (k = 0; k + 1 < fake->starts; k++)
		KUNIT_EXPECT_GE_MSG(test, kfd_xfer_event_at(fake, 'O', k), 0,
				    "copy %d started after copy %d completed",
				    k + 1, k);
}

/**
 * struct kfd_xfer_size_case - one BO size and bounce size
 * @desc: case name
 * @size: BO bytes
 * @bounce: bounce buffer bytes
 */
struct kfd_xfer_size_case {
	const char *desc;
	u64 size;
	u32 bounce;
};

static const struct kfd_xfer_size_case kfd_xfer_size_cases[] = {
	{ "one page", PAGE_SIZE, KFD_CRIU_BO_CHUNK },
	{ "one chunk less a page", KFD_CRIU_BO_CHUNK - PAGE_SIZE,
	  KFD_CRIU_BO_CHUNK },
	{ "one chunk", KFD_CRIU_BO_CHUNK, KFD_CRIU_BO_CHUNK },
	{ "one chunk and a page", KFD_CRIU_BO_CHUNK + PAGE_SIZE,
	  KFD_CRIU_BO_CHUNK },
	{ "5 chunks and a page, 2-chunk bounce",
	  5 * KFD_CRIU_BO_CHUNK + PAGE_SIZE, 2 * KFD_CRIU_BO_CHUNK },
	{ "37 pieces and a page", 37 * KFD_XFER_TEST_PIECE + PAGE_SIZE,
	  KFD_XFER_TEST_PIECE },
};

static void kfd_xfer_size_desc(const struct kfd_xfer_size_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(kfd_xfer_size, kfd_xfer_size_cases, kfd_xfer_size_desc);

static void test_xfer_dump_every_byte_in_order(struct kunit *test)
{
	const struct kfd_xfer_size_case *c = test->param_value;
	struct kfd_xfer_fake_dev dev = KFD_XFER_FAKE_DEV(dev);
	struct kfd_xfer_fake *fake = kfd_xfer_fake_new(test);

	kfd_xfer_add_bo(test, fake, &dev, c->size, true);
	kfd_xfer_add_bo(test, fake, &dev, PAGE_SIZE, true);
	KUNIT_ASSERT_EQ(test, kfd_xfer_dump(fake, c->bounce), 0);
	KUNIT_EXPECT_EQ(test, kfd_xfer_dump_mismatch(fake, 0), -1);
	KUNIT_EXPECT_EQ(test, kfd_xfer_dump_mismatch(fake, 1), -1);
	KUNIT_EXPECT_EQ(test, fake->next_index, 2);
	KUNIT_EXPECT_LE(test, dev.peak, (u64)KFD_CRIU_XFER_SLOTS * c->bounce);
	KUNIT_EXPECT_EQ(test, dev.bytes, 0);
	KUNIT_EXPECT_EQ(test, dev.freed_busy, 0);
	kfd_xfer_expect_overlap(test, fake);
}

static void test_xfer_restore_every_byte_in_place(struct kunit *test)
{
	const struct kfd_xfer_size_case *c = test->param_value;
	struct kfd_xfer_fake_dev dev = KFD_XFER_FAKE_DEV(dev);
	struct kfd_xfer_fake *fake = kfd_xfer_fake_new(test);

	kfd_xfer_add_bo(test, fake, &dev, c->size, false);
	kfd_xfer_add_bo(test, fake, &dev, PAGE_SIZE, false);
	KUNIT_ASSERT_EQ(test, kfd_xfer_restore(fake, c->bounce), 0);
	KUNIT_EXPECT_EQ(test, kfd_xfer_restore_mismatch(fake, 0), -1);
	KUNIT_EXPECT_EQ(test, kfd_xfer_restore_mismatch(fake, 1), -1);
	KUNIT_EXPECT_LE(test, dev.peak, (u64)KFD_CRIU_XFER_SLOTS * c->bounce);
	KUNIT_EXPECT_EQ(test, dev.bytes, 0);
	KUNIT_EXPECT_EQ(test, dev.freed_busy, 0);
	kfd_xfer_expect_overlap(test, fake);
}

/* 1.5 MiB of BOs through two 32 KiB buffers, on two devices. */
static void test_xfer_bounce_memory_is_bounded(struct kunit *test)
{
	struct kfd_xfer_fake_dev dev[2] = {
		KFD_XFER_FAKE_DEV(dev[0]), KFD_XFER_FAKE_DEV(dev[1]),
	};
	struct kfd_xfer_fake *fake = kfd_xfer_fake_new(test);

	kfd_xfer_add_bo(test, fake, &dev[0], SZ_512K, true);
	kfd_xfer_add_bo(test, fake, &dev[1], SZ_512K, true);
	kfd_xfer_add_bo(test, fake, &dev[0], SZ_512K, true);
	KUNIT_ASSERT_EQ(test, kfd_xfer_dump(fake, SZ_32K), 0);
	KUNIT_EXPECT_EQ(test, kfd_xfer_dump_mismatch(fake, 0), -1);
	KUNIT_EXPECT_EQ(test, kfd_xfer_dump_mismatch(fake, 1), -1);
	KUNIT_EXPECT_EQ(test, kfd_xfer_dump_mismatch(fake, 2), -1);
	KUNIT_EXPECT_LE(test, dev[0].peak, (u64)KFD_CRIU_XFER_SLOTS * SZ_32K);
	KUNIT_EXPECT_LE(test, dev[1].peak, (u64)KFD_CRIU_XFER_SLOTS * SZ_32K);
	KUNIT_EXPECT_EQ(test, dev[0].bytes + dev[1].bytes, 0);
	KUNIT_EXPECT_EQ(test, dev[0].freed_busy + dev[1].freed_busy, 0);
	KUNIT_EXPECT_EQ(test, fake->starts, 48);
}

static void test_xfer_failed_copy_stops_the_dump(struct kunit *test)
{
	struct kfd_xfer_fake_dev dev = KFD_XFER_FAKE_DEV(dev);
	struct kfd_xfer_fake *fake = kfd_xfer_fake_new(test);

	kfd_xfer_add_bo(test, fake, &dev, 8 * KFD_XFER_TEST_PIECE, true);
	fake->fail_copy = 3;
	KUNIT_EXPECT_EQ(test, kfd_xfer_dump(fake, KFD_XFER_TEST_PIECE), -EIO);
	/* Pieces 0 to 2 were written; nothing after the failed one */
	KUNIT_EXPECT_EQ(test, fake->next_offset, 3 * KFD_XFER_TEST_PIECE);
	KUNIT_EXPECT_LE(test, fake->starts, 5);
	KUNIT_EXPECT_EQ(test, dev.bytes, 0);
	KUNIT_EXPECT_EQ(test, dev.freed_busy, 0);
}

static void test_xfer_failed_copy_stops_the_restore(struct kunit *test)
{
	struct kfd_xfer_fake_dev dev = KFD_XFER_FAKE_DEV(dev);
	struct kfd_xfer_fake *fake = kfd_xfer_fake_new(test);

	kfd_xfer_add_bo(test, fake, &dev, 8 * KFD_XFER_TEST_PIECE, false);
	fake->fail_copy = 1;
	KUNIT_EXPECT_EQ(test, kfd_xfer_restore(fake, KFD_XFER_TEST_PIECE),
			-EIO);
	KUNIT_EXPECT_LE(test, fake->starts, 3);
	KUNIT_EXPECT_EQ(test, dev.bytes, 0);
	KUNIT_EXPECT_EQ(test, dev.freed_busy, 0);
}

/* A start that fails after submitting: its buffer outlives the copy. */
static void test_xfer_failed_start_keeps_the_buffer(struct kunit *test)
{
	struct kfd_xfer_fake_dev dev = KFD_XFER_FAKE_DEV(dev);
	struct kfd_xfer_fake *fake = kfd_xfer_fake_new(test);

	kfd_xfer_add_bo(test, fake, &dev, 8 * KFD_XFER_TEST_PIECE, true);
	fake->fail_start = 2;
	KUNIT_EXPECT_EQ(test, kfd_xfer_dump(fake, KFD_XFER_TEST_PIECE), -EIO);
	KUNIT_EXPECT_EQ(test, fake->starts, 3);
	KUNIT_EXPECT_EQ(test, dev.bytes, 0);
	KUNIT_EXPECT_EQ(test, dev.freed_busy, 0);
}

/* A fatal signal ends it with -EINTR; the buffers outlive the copies. */
static void test_xfer_fatal_signal(struct kunit *test)
{
	struct kfd_xfer_fake_dev dev = KFD_XFER_FAKE_DEV(dev);
	struct kfd_xfer_fake *fake = kfd_xfer_fake_new(test);
	int ret;

	/* A kthread takes a SIGKILL only when it allows it */
	allow_signal(SIGKILL);
	kfd_xfer_add_bo(test, fake, &dev, 8 * KFD_XFER_TEST_PIECE, true);
	fake->kill_at = 3;
	ret = kfd_xfer_dump(fake, KFD_XFER_TEST_PIECE);
	flush_signals(current);
	KUNIT_EXPECT_EQ(test, ret, -EINTR);
	KUNIT_EXPECT_EQ(test, fake->next_offset, 2 * KFD_XFER_TEST_PIECE);

	fake = kfd_xfer_fake_new(test);
	kfd_xfer_add_bo(test, fake, &dev, 8 * KFD_XFER_TEST_PIECE, false);
	fake->kill_at = 1;
	ret = kfd_xfer_restore(fake, KFD_XFER_TEST_PIECE);
	flush_signals(current);
	disallow_signal(SIGKILL);
	KUNIT_EXPECT_EQ(test, ret, -EINTR);
	KUNIT_EXPECT_EQ(test, fake->starts, 2);
	kfd_xfer_fake_settle(&dev);
	KUNIT_EXPECT_EQ(test, dev.bytes, 0);
	KUNIT_EXPECT_EQ(test, dev.freed_busy, 0);
}

/* Other signals do not end a transfer. */
static void test_xfer_other_signal(struct kunit *test)
{
	struct kfd_xfer_fake_dev dev = KFD_XFER_FAKE_DEV(dev);
	struct kfd_xfer_fake *fake = kfd_xfer_fake_new(test);
	int ret;

	allow_signal(SIGCHLD);
	send_sig(SIGCHLD, current, 1);
	kfd_xfer_add_bo(test, fake, &dev, 8 * KFD_XFER_TEST_PIECE, true);
	ret = kfd_xfer_dump(fake, KFD_XFER_TEST_PIECE);
	KUNIT_EXPECT_TRUE(test, signal_pending(current));
	flush_signals(current);
	disallow_signal(SIGCHLD);
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, kfd_xfer_dump_mismatch(fake, 0), -1);
}

/* Two dumps on one device at once never see each other's bytes. */
static void test_xfer_two_dumps_on_one_device(struct kunit *test)
{
	struct kfd_xfer_fake_dev dev = KFD_XFER_FAKE_DEV(dev);
	struct kfd_xfer_fake *a = kfd_xfer_fake_new(test);
	struct kfd_xfer_fake *b = kfd_xfer_fake_new(test);
	struct kfd_criu_xfer xa, xb;
	u32 ia = 0, ib = 0;
	u64 oa = 0, ob = 0;
	int ra = 0, rb = 0;

	kfd_xfer_add_bo(test, a, &dev, 6 * KFD_XFER_TEST_PIECE, true);
	/* b's BO has the pattern of another index: other bytes */
	kfd_xfer_add_bo(test, b, &dev, PAGE_SIZE, false);
	kfd_xfer_add_bo(test, b, &dev, 6 * KFD_XFER_TEST_PIECE, true);
	b->next_index = 1;
	kfd_criu_xfer_init(&xa, &kfd_xfer_fake_ops, a, KFD_XFER_TEST_PIECE,
			   false);
	kfd_criu_xfer_init(&xb, &kfd_xfer_fake_ops, b, KFD_XFER_TEST_PIECE,
			   false);
	ib = 1;
	while (!ra || !rb) {
		if (!ra)
			ra = kfd_xfer_read_piece(&xa, a, &ia, &oa);
		if (!rb)
			rb = kfd_xfer_read_piece(&xb, b, &ib, &ob);
	}
	KUNIT_EXPECT_EQ(test, ra, 1);
	KUNIT_EXPECT_EQ(test, rb, 1);
	KUNIT_EXPECT_EQ(test, kfd_criu_xfer_flush(&xa), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_xfer_flush(&xb), 0);
	kfd_criu_xfer_fini(&xa);
	kfd_criu_xfer_fini(&xb);
	kfd_xfer_fake_settle(&dev);
	KUNIT_EXPECT_EQ(test, kfd_xfer_dump_mismatch(a, 0), -1);
	KUNIT_EXPECT_EQ(test, kfd_xfer_dump_mismatch(b, 1), -1);
	KUNIT_EXPECT_EQ(test, dev.bytes, 0);
	KUNIT_EXPECT_EQ(test, dev.freed_busy, 0);
}

static void test_xfer_refuses_oversized_pieces(struct kunit *test)
{
	struct kfd_xfer_fake_dev dev = KFD_XFER_FAKE_DEV(dev);
	struct kfd_xfer_fake *fake = kfd_xfer_fake_new(test);
	struct kfd_criu_xfer_req req = {
		.len = KFD_XFER_TEST_PIECE + PAGE_SIZE,
		.dev = &dev,
	};
	struct kfd_criu_xfer x;

	kfd_xfer_add_bo(test, fake, &dev, 2 * KFD_XFER_TEST_PIECE, true);
	kfd_criu_xfer_init(&x, &kfd_xfer_fake_ops, fake, KFD_XFER_TEST_PIECE,
			   false);
	KUNIT_EXPECT_EQ(test, kfd_criu_xfer_read(&x, &req), -EINVAL);
	/* The error sticks */
	req.len = PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, kfd_criu_xfer_read(&x, &req), -EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_xfer_flush(&x), -EINVAL);
	kfd_criu_xfer_fini(&x);
	KUNIT_EXPECT_EQ(test, fake->starts, 0);
	KUNIT_EXPECT_EQ(test, dev.peak, 0);
}

static struct kunit_case kfd_criu_xfer_cases[] = {
	KUNIT_CASE_PARAM(test_xfer_dump_every_byte_in_order,
			 kfd_xfer_size_gen_params),
	KUNIT_CASE_PARAM(test_xfer_restore_every_byte_in_place,
			 kfd_xfer_size_gen_params),
	KUNIT_CASE(test_xfer_bounce_memory_is_bounded),
	KUNIT_CASE(test_xfer_failed_copy_stops_the_dump),
	KUNIT_CASE(test_xfer_failed_copy_stops_the_restore),
	KUNIT_CASE(test_xfer_failed_start_keeps_the_buffer),
	KUNIT_CASE(test_xfer_fatal_signal),
	KUNIT_CASE(test_xfer_other_signal),
	KUNIT_CASE(test_xfer_two_dumps_on_one_device),
	KUNIT_CASE(test_xfer_refuses_oversized_pieces),
	{}
};

static struct kunit_suite kfd_criu_xfer_suite = {
	.name = "kfd_criu_xfer",
	.test_cases = kfd_criu_xfer_cases,
};

kunit_test_suite(kfd_criu_xfer_suite);
