// SPDX-License-Identifier: GPL-2.0 OR MIT

/**
 * DOC: KUnit tests of the BO dump and restore, on fake GPUs
 *
 * Included at the end of kfd_criu_bos.c. Suite kfd_criu_bos runs the real
 * BO code of image mode - snapshot, BO records, contents through the
 * bounce-buffer pipeline, collection and validation, placement checks,
 * creation, mapping, contents written back, the offset map and the
 * unwind - on processes whose GPUs and BOs are the fakes of
 * kfd_criu_fake_gpu.h. Only the calls into amdgpu are faked.
 *
 * The unwind case first restores an image cleanly and counts every call
 * the restore made into the fakes, per kind; then it restores the image
 * again once per counted call, failing that one call, and checks that the
 * process is left without BOs, mappings, VRAM usage or bounce buffers.
 * A step the restore gains is counted and failed without a new case.
 * Another case fails each step in turn for a signal it sends the test's
 * task, SIGKILL and then SIGUSR1, so that the unwind starts with the
 * signal pending: the fake unmap and free then fail as amdgpu's
 * interruptible reservations do, and a BO freed twice fails the test.
 * A third fails the unwind's first unmap instead: that BO stays, the GPU
 * part of the unwind keeps the VMs, and the process, which runs on, must
 * get its MMU notifications back and be able to unmap and free the BO.
 *
 * The hostile-records case is the GPU half of the mutation campaign: it
 * sets each field of BO and BO_DATA records to boundary values, with
 * good CRCs, and restores each image on the fakes; a refusal must use a
 * documented errno and leave nothing, an acceptance must restore what
 * the records say. The BOs of an accepted image, and those of the round
 * trips, then go through what a process does next with them, with the
 * real MAP, UNMAP and FREE ioctl handlers: each BO is unmapped, mapped
 * again, unmapped and freed, after which no BO, handle or VRAM usage may
 * be left. A second restore of an accepted image checks its unwind.
 *
 * The runtime case restores and unwinds the XNACK mode and an enabled
 * runtime, which a restore sets before its BOs.
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/moduleparam.h>
#include <linux/unaligned.h>

#include "kfd_criu_fake_gpu.h"
#include "kfd_criu_test_stream.h"

/*
 * The random images each hostile-record sweep on the fake GPUs tries per
 * record, besides the boundary values, and their seed (see
 * kfd_criu_test_sweep_random()). Defined with the first sweep; the
 * queue, SVM and GPU sweeps use them too. A longer campaign sets them on
 * the kernel command line.
 */
unsigned int kfd_criu_test_random_images = 16;
module_param_named(kfd_criu_test_random, kfd_criu_test_random_images, uint,
		   0444);
MODULE_PARM_DESC(kfd_criu_test_random,
		 "Random hostile images per record of the CRIU KUnit sweeps (default 16)");

unsigned long long kfd_criu_test_random_seed = 1;
module_param_named(kfd_criu_test_seed, kfd_criu_test_random_seed, ullong,
		   0444);
MODULE_PARM_DESC(kfd_criu_test_seed,
		 "Seed of those random images (default 1)");

/* A BO_DATA payload, the largest record the test reads */
#define KFD_CRIU_BO_DATA_BUF	(sizeof(struct kfd_criu_bo_data_hdr) + \
				 KFD_CRIU_BO_CHUNK)

/* Two GPUs; the BOs and what they are mapped on. */
#define BT_GPU0		0x1001
#define BT_VRAM		(KFD_IOC_ALLOC_MEM_FLAGS_VRAM | \
			 KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE)
#define BT_GTT		(KFD_IOC_ALLOC_MEM_FLAGS_GTT | \
			 KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE)
#define BT_USERPTR	(KFD_IOC_ALLOC_MEM_FLAGS_USERPTR | \
			 KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE)
#define BT_AQL		(BT_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM)
/* The VRAM an AQL queue's BO of @va bytes of VA takes: half, in pages */
#define BT_AQL_VRAM(va)	PAGE_ALIGN((va) / 2)

/* The size of the BO amdgpu makes for @va bytes of VA and @flags */
static u64 bt_bo_size(u32 flags, u64 va)
{
	if (flags & KFD_IOC_ALLOC_MEM_FLAGS_AQL_QUEUE_MEM)
		return BT_AQL_VRAM(va);
	return PAGE_ALIGN(va);
}

/**
 * struct bt_bo - a BO of the test process
 * @gpu: index of the GPU that owns it
 * @handle: its idr handle
 * @va: its VA
 * @size: bytes of VA
 * @flags: allocation flags
 * @mapped: BIT(i) for each GPU it is mapped on
 * @userptr: a userptr BO's address
 */
struct bt_bo {
	u32 gpu;
	int handle;
	u64 va;
	u64 size;
	u32 flags;
	u64 mapped;
	u64 userptr;
};

static const struct bt_bo bt_bos[] = {
	{ 0, 1, 0x10000000, 3 * KFD_CRIU_BO_CHUNK + PAGE_SIZE, BT_VRAM, 0x3 },
	{ 0, 2, 0x20000000, PAGE_SIZE, BT_GTT, 0x1 },
	{ 0, 5, 0x30000000, 2 * PAGE_SIZE, BT_USERPTR, 0x1, 0x7f0000000000 },
	{ 1, 1, 0x40000000, 4 * PAGE_SIZE, BT_AQL, 0x2 },
	{ 1, 3, 0x50000000, KFD_CRIU_BO_CHUNK, BT_GTT, 0x3 },
};

static void bt_stub(struct kunit *test)
{
	kunit_activate_static_stub(test, kfd_criu_bo_on_vm, kfd_fake_on_vm);
	kunit_activate_static_stub(test, kfd_criu_bo_userptr, kfd_fake_userptr);
	kunit_activate_static_stub(test, kfd_criu_bo_gem_offset,
				   kfd_fake_gem_offset);
	kunit_activate_static_stub(test, kfd_criu_bo_alloc, kfd_fake_alloc);
	kunit_activate_static_stub(test, kfd_criu_bo_vm_map, kfd_fake_vm_map);
	kunit_activate_static_stub(test, kfd_criu_bo_vm_sync, kfd_fake_vm_sync);
	kunit_activate_static_stub(test, kfd_criu_bo_tlb_flush,
				   kfd_fake_tlb_flush);
	kunit_activate_static_stub(test, kfd_criu_bo_vm_unmap,
				   kfd_fake_vm_unmap);
	kunit_activate_static_stub(test, kfd_criu_bo_release, kfd_fake_release);
	kunit_activate_static_stub(test, kfd_criu_bo_fence, kfd_fake_fence);
	kunit_activate_static_stub(test, kfd_criu_bo_bounce_alloc,
				   kfd_fake_bounce_alloc);
	kunit_activate_static_stub(test, kfd_criu_bo_bounce_free,
				   kfd_fake_bounce_free);
	kunit_activate_static_stub(test, kfd_criu_bo_vram_epoch,
				   kfd_fake_vram_epoch);
	kunit_activate_static_stub(test, kfd_criu_bo_copy, kfd_fake_copy);
	kfd_fake_stub_ioctls(test);
	kfd_fake_user_page_new(test);
}

/* The process to dump: two GPUs with the BOs of bt_bos[]. */
static struct kfd_process *bt_source(struct kunit *test)
{
	struct kfd_process *p = kfd_fake_process(test, 2, BT_GPU0);
	const struct bt_bo *b;
	struct kfd_fake_bo *fb;
	u64 off, mapped;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(bt_bos); i++) {
		b = &bt_bos[i];
		fb = kfd_fake_bo_new(p->pdds[b->gpu], b->handle, b->va, b->size,
				     b->flags);
		KUNIT_ASSERT_NOT_NULL(test, fb);
		fb->userptr = b->userptr;
		for (off = 0; off < fb->bo.tbo.base.size; off++)
			fb->data[off] = kfd_fake_pattern(i, off);
		for (mapped = b->mapped; mapped; mapped &= mapped - 1)
			fb->mapped_on[__ffs64(mapped)] =
				p->pdds[__ffs64(mapped)]->drm_priv;
	}
	return p;
}

/*
 * CHECKPOINT's part for the BOs: records, then contents unless
 * @no_contents, then END.
 */
static int bt_dump_as(struct kfd_process *p, struct kfd_criu_test_stream *s,
		      bool no_contents)
{
	struct kfd_criu_bos_image img;
	struct kfd_criu_image_writer w;
	int ret;

	mutex_lock(&p->mutex);
	ret = kfd_criu_bos_snapshot(p, &img);
	mutex_unlock(&p->mutex);
	if (ret)
		return ret;
	kfd_criu_image_writer_init(&w, &s->io);
	ret = kfd_criu_image_write_header(&w, "kunit");
	if (!ret)
		ret = kfd_criu_bos_write(&w, &img);
	if (!ret && !no_contents)
		ret = kfd_criu_bos_dump_contents(&w, p, &img);
	if (!ret)
		ret = kfd_criu_image_write_end(&w);
	kfd_criu_bos_image_free(&img);
	return ret;
}

static int bt_dump(struct kfd_process *p, struct kfd_criu_test_stream *s)
{
	return bt_dump_as(p, s, false);
}

/* Reads the BO records up to the first BO_DATA or END into @img. */
static int bt_read_records(struct kfd_criu_image_reader *r,
			   struct kfd_criu_bos_image *img, u32 num_bos,
			   struct kfd_criu_record *rec, void *buf)
{
	struct kfd_criu_image_header hdr;
	int ret;

	ret = kfd_criu_image_read_header(r, &hdr);
	if (!ret)
		ret = kfd_criu_bos_prepare(img, num_bos);
	while (!ret) {
		ret = kfd_criu_image_read_record(r, rec, buf,
						 KFD_CRIU_BO_DATA_BUF);
		if (ret || rec->type != KFD_CRIU_REC_BO)
			break;
		ret = kfd_criu_bos_collect(img, rec, buf);
	}
	return ret ? ret : kfd_criu_bos_validate(img, 2);
}

/* The contents records, in the order RESTORE takes them. */
static int bt_write_contents(struct kfd_process *q,
			     struct kfd_criu_image_reader *r,
			     struct kfd_criu_bos_image *img,
			     struct kfd_criu_record *rec, void *buf)
{
	int ret = 0;

	while (!ret && rec->type == KFD_CRIU_REC_BO_DATA) {
		ret = kfd_criu_bos_write_contents(q, img, buf, rec->length);
		if (!ret)
			ret = kfd_criu_image_read_record(r, rec, buf,
							 KFD_CRIU_BO_DATA_BUF);
	}
	if (!ret && rec->type != KFD_CRIU_REC_END)
		ret = -EINVAL;
	return ret ? ret : kfd_criu_bos_finish_contents(q, img);
}

/*
 * RESTORE's part for the BOs into @q, the image GPUs on q's GPUs in
 * order, or the other way round with @swap. All or nothing; on success
 * @img keeps the BOs for the caller.
 */
static int bt_restore(struct kfd_process *q, struct kfd_criu_test_stream *s,
		      struct kfd_criu_bos_image *img,
		      struct kfd_criu_gpus_restore *st, bool swap)
{
	struct kfd_criu_image_reader r;
	struct kfd_criu_record rec;
	void *buf;
	int ret;

	buf = kvmalloc(KFD_CRIU_BO_DATA_BUF, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	memset(img, 0, sizeof(*img));
	memset(st, 0, sizeof(*st));
	st->target[0] = swap;
	st->target[1] = !swap;
	/* As kfd_criu_gpus_restore() does: the process sees the image ids */
	q->pdds[st->target[0]]->user_gpu_id = BT_GPU0;
	q->pdds[st->target[1]]->user_gpu_id = BT_GPU0 + 1;
	s->pos = 0;
	kfd_criu_image_reader_init(&r, &s->io, kfd_criu_v1_records,
				   kfd_criu_v1_num_records);
	ret = bt_read_records(&r, img, ARRAY_SIZE(bt_bos), &rec, buf);
	mutex_lock(&q->mutex);
	if (!ret)
		ret = kfd_criu_bos_check_target(q, img, st);
	if (!ret)
		ret = kfd_criu_bos_restore(q, img, st);
	if (!ret) {
		ret = bt_write_contents(q, &r, img, &rec, buf);
		if (ret)
			kfd_criu_bos_unwind(q, img, st);
	}
	mutex_unlock(&q->mutex);
	kvfree(buf);
	if (ret)
		kfd_criu_bos_image_free(img);
	return ret;
}

/*
 * The byte at @off of the BO restored from record @i, @va_size bytes of
 * VA: the last contents byte written there. The image holds bt_bos[i]'s
 * contents for each byte of VA, its BO's bytes over and over for an AQL
 * queue's BO, and a restore writes them in VA order. An AQL queue's BO
 * takes its VA twice, so that byte comes from the last VA offset that
 * lands on @off; a record the sweep made AQL thus restores a BO whose
 * halves differ.
 */
static u8 bt_expected_byte(u32 i, u64 off, u64 va_size, u64 bo_size)
{
	u64 src = bt_bo_size(bt_bos[i].flags, bt_bos[i].size);
	u64 va;

	if (off >= va_size)
		return 0;
	va = off + (va_size - 1 - off) / bo_size * bo_size;
	return kfd_fake_pattern(i, va % src);
}

static void bt_expect_contents(struct kunit *test, struct kfd_fake_bo *fb,
			       u32 i, u64 va_size, const char *what)
{
	u64 off, size = fb->bo.tbo.base.size, bad = U64_MAX;

	for (off = 0; off < size && bad == U64_MAX; off++)
		if (fb->data[off] != bt_expected_byte(i, off, va_size, size))
			bad = off;
	KUNIT_EXPECT_EQ_MSG(test, bad, U64_MAX,
			    "%s: BO %u contents differ at this offset", what, i);
}

/* The BO of bt_bos[@i] in @q, its GPUs swapped or not, or NULL. */
static struct kfd_fake_bo *bt_find_on(struct kfd_process *q, u32 i, bool swap)
{
	struct kgd_mem *mem;

	mem = idr_find(&q->pdds[bt_bos[i].gpu ^ swap]->alloc_idr,
		       bt_bos[i].handle);
	return mem ? kfd_fake_bo_of(mem) : NULL;
}

static struct kfd_fake_bo *bt_find(struct kfd_process *q, u32 i)
{
	return bt_find_on(q, i, false);
}

static void bt_expect_restored(struct kunit *test, struct kfd_process *q,
			       bool swap)
{
	const struct bt_bo *b;
	struct kfd_fake_bo *fb;
	u32 i, g;

	for (i = 0; i < ARRAY_SIZE(bt_bos); i++) {
		b = &bt_bos[i];
		fb = bt_find_on(q, i, swap);
		KUNIT_ASSERT_NOT_NULL_MSG(test, fb, "BO %u", i);
		KUNIT_EXPECT_EQ(test, fb->mem.va, b->va);
		KUNIT_EXPECT_EQ(test, fb->mem.alloc_flags, b->flags);
		KUNIT_EXPECT_EQ(test, fb->userptr, b->userptr);
		for (g = 0; g < 2; g++)
			KUNIT_EXPECT_EQ_MSG(test,
					    kfd_fake_on_vm(q->pdds[g ^ swap]->drm_priv,
							   &fb->mem),
					    !!(b->mapped & BIT(g)),
					    "BO %u on GPU %u", i, g);
		if (kfd_criu_bo_has_contents(b->flags))
			bt_expect_contents(test, fb, i, b->size, "round trip");
	}
}

/* Below, with the hostile records it also judges */
static void bt_check_accepted(struct kunit *test, struct kfd_process *q,
			      struct kfd_criu_bos_image *img,
			      struct kfd_criu_gpus_restore *st,
			      const char *what);

static void test_bos_round_trip(struct kunit *test)
{
	struct kfd_criu_test_stream *s = kfd_criu_test_stream_new(test);
	struct kfd_fake_gpus *fake = kfd_fake_gpus_new(test);
	struct kfd_criu_offset_map map[8] = {};
	struct kfd_process *p, *q;
	struct kfd_criu_gpus_restore *st;
	struct kfd_criu_bos_image img;
	u32 n, i;

	st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, st);
	bt_stub(test);
	p = bt_source(test);
	q = kfd_fake_process(test, 2, BT_GPU0);
	KUNIT_ASSERT_EQ(test, bt_dump(p, s), 0);
	KUNIT_EXPECT_EQ(test, fake->bounce_bytes, 0);

	KUNIT_ASSERT_EQ(test, bt_restore(q, s, &img, st, false), 0);
	bt_expect_restored(test, q, false);
	KUNIT_EXPECT_EQ(test, kfd_fake_bos_of(q), ARRAY_SIZE(bt_bos));
	KUNIT_EXPECT_EQ(test, atomic64_read(&q->pdds[0]->vram_usage),
			bt_bos[0].size);
	KUNIT_EXPECT_EQ(test, atomic64_read(&q->pdds[1]->vram_usage),
			BT_AQL_VRAM(bt_bos[3].size));
	KUNIT_EXPECT_EQ(test, fake->bounce_bytes, 0);
	KUNIT_EXPECT_GT(test, fake->tlb_flushes, 0);

	/* Every BO got a new GEM offset: each old one maps to its new one */
	mutex_lock(&q->mutex);
	n = kfd_criu_bos_offsets(q, &img, st, map, ARRAY_SIZE(map));
	mutex_unlock(&q->mutex);
	KUNIT_EXPECT_EQ(test, n, ARRAY_SIZE(bt_bos));
	for (i = 0; i < n && i < ARRAY_SIZE(bt_bos); i++) {
		KUNIT_EXPECT_EQ(test, map[i].old_offset,
				kfd_fake_gem_offset(idr_find(&p->pdds[bt_bos[i].gpu]->alloc_idr,
							     bt_bos[i].handle)));
		KUNIT_EXPECT_EQ(test, map[i].new_offset,
				bt_find(q, i)->gem_offset);
		/* The image's gpu_id of the BO's GPU */
		KUNIT_EXPECT_EQ(test, map[i].gpu_id, BT_GPU0 + bt_bos[i].gpu);
		KUNIT_EXPECT_EQ(test, map[i].reserved, 0);
	}
	bt_check_accepted(test, q, &img, st, "round trip");
}

/* Image GPU 0 placed on local GPU 1 and the other way round. */
/*
 * Dumping the restored process again: PROCESS_INFO's pairing must take
 * each offset map gpu_id (the process's) to the topology gpu_id of the
 * GPU the BO really is on, whose render node maps it.
 */
static void bt_expect_pairing(struct kunit *test, struct kfd_process *q,
			      const struct kfd_criu_offset_map *map, u32 n)
{
	struct kfd_criu_device_bucket pairs[2];
	u32 i, j;

	memset(pairs, 0x5a, sizeof(pairs));
	mutex_lock(&q->mutex);
	KUNIT_ASSERT_EQ(test, kfd_criu_gpus_pairing(q, pairs, 2), 2);
	mutex_unlock(&q->mutex);
	for (i = 0; i < n && i < ARRAY_SIZE(bt_bos); i++) {
		for (j = 0; j < 2 && pairs[j].user_gpu_id != map[i].gpu_id; j++)
			;
		KUNIT_ASSERT_LT_MSG(test, j, 2, "gpu_id 0x%x not paired",
				    map[i].gpu_id);
		KUNIT_EXPECT_EQ(test, pairs[j].actual_gpu_id,
				q->pdds[bt_bos[i].gpu ^ 1]->dev->id);
		KUNIT_EXPECT_EQ(test, pairs[j].drm_fd, 0);
		KUNIT_EXPECT_EQ(test, pairs[j].pad, 0);
	}
}

static void test_bos_round_trip_swapped_gpus(struct kunit *test)
{
	struct kfd_criu_test_stream *s = kfd_criu_test_stream_new(test);
	struct kfd_criu_offset_map map[8] = {};
	struct kfd_criu_gpus_restore *st;
	u32 n, i;
	struct kfd_criu_bos_image img;
	struct kfd_process *p, *q;

	kfd_fake_gpus_new(test);
	st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, st);
	bt_stub(test);
	p = bt_source(test);
	q = kfd_fake_process(test, 2, BT_GPU0);
	KUNIT_ASSERT_EQ(test, bt_dump(p, s), 0);
	KUNIT_ASSERT_EQ(test, bt_restore(q, s, &img, st, true), 0);
	bt_expect_restored(test, q, true);
	mutex_lock(&q->mutex);
	n = kfd_criu_bos_offsets(q, &img, st, map, ARRAY_SIZE(map));
	mutex_unlock(&q->mutex);
	KUNIT_EXPECT_EQ(test, n, ARRAY_SIZE(bt_bos));
	for (i = 0; i < n && i < ARRAY_SIZE(bt_bos); i++)
		KUNIT_EXPECT_EQ(test, map[i].gpu_id, BT_GPU0 + bt_bos[i].gpu);
	KUNIT_EXPECT_EQ(test, atomic64_read(&q->pdds[1]->vram_usage),
			bt_bos[0].size);
	KUNIT_EXPECT_EQ(test, atomic64_read(&q->pdds[0]->vram_usage),
			BT_AQL_VRAM(bt_bos[3].size));
	bt_expect_pairing(test, q, map, n);
	bt_check_accepted(test, q, &img, st, "swapped GPUs");
}

/* Too little room for the pairing writes nothing and says so */
static void test_bos_pairing_needs_room(struct kunit *test)
{
	struct kfd_criu_device_bucket pairs[2];
	struct kfd_process *p;

	kfd_fake_gpus_new(test);
	p = kfd_fake_process(test, 2, BT_GPU0);
	memset(pairs, 0x5a, sizeof(pairs));
	mutex_lock(&p->mutex);
	KUNIT_EXPECT_EQ(test, kfd_criu_gpus_pairing(p, pairs, 1), -ENOSPC);
	mutex_unlock(&p->mutex);
	KUNIT_EXPECT_EQ(test, pairs[0].user_gpu_id, 0x5a5a5a5a);
}

/* Nothing of the restore may be left: BOs, mappings, VRAM, buffers. */
static void bt_expect_nothing_left(struct kunit *test, struct kfd_process *q,
				   enum kfd_fake_step step, unsigned int at)
{
	u32 g;

	KUNIT_EXPECT_EQ_MSG(test, kfd_fake_bos_of(q), 0,
			    "BOs left after a failed %s %u",
			    kfd_fake_step_name[step], at);
	for (g = 0; g < 2; g++) {
		KUNIT_EXPECT_TRUE_MSG(test, idr_is_empty(&q->pdds[g]->alloc_idr),
				      "handles left after a failed %s %u",
				      kfd_fake_step_name[step], at);
		KUNIT_EXPECT_EQ_MSG(test,
				    atomic64_read(&q->pdds[g]->vram_usage), 0,
				    "VRAM usage left after a failed %s %u",
				    kfd_fake_step_name[step], at);
	}
	KUNIT_EXPECT_EQ_MSG(test, kfd_fake->bounce_bytes, 0,
			    "bounce buffers left after a failed %s %u",
			    kfd_fake_step_name[step], at);
}

/* A clean restore of the image in @s counts the steps, per kind. */
static void bt_count_steps(struct kunit *test, struct kfd_criu_test_stream *s,
			   struct kfd_criu_gpus_restore *st,
			   unsigned int *counted)
{
	struct kfd_criu_bos_image img;
	struct kfd_process *q;

	memset(kfd_fake->calls, 0, sizeof(kfd_fake->calls));
	q = kfd_fake_process(test, 2, BT_GPU0);
	KUNIT_ASSERT_EQ(test, bt_restore(q, s, &img, st, false), 0);
	memcpy(counted, kfd_fake->calls, sizeof(kfd_fake->calls));
	kfd_criu_bos_image_free(&img);
	KUNIT_EXPECT_EQ(test, counted[KFD_FAKE_ALLOC], ARRAY_SIZE(bt_bos));
	KUNIT_EXPECT_GE(test, counted[KFD_FAKE_COPY], 4);
}

/*
 * The setup of the unwind cases: dumps the source process into @s and
 * counts the steps of a clean restore. Returns the source process and a
 * zeroed restore state in *@st.
 */
static struct kfd_process *bt_prepare_unwind(struct kunit *test,
					     struct kfd_criu_test_stream *s,
					     struct kfd_criu_gpus_restore **st,
					     unsigned int *counted)
{
	struct kfd_process *p;

	*st = kunit_kzalloc(test, sizeof(**st), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, *st);
	bt_stub(test);
	p = bt_source(test);
	KUNIT_ASSERT_EQ(test, bt_dump(p, s), 0);
	bt_count_steps(test, s, *st, counted);
	return p;
}

static void test_bos_restore_unwinds_every_step(struct kunit *test)
{
	struct kfd_criu_test_stream *s = kfd_criu_test_stream_new(test);
	struct kfd_fake_gpus *fake = kfd_fake_gpus_new(test);
	unsigned int counted[KFD_FAKE_NUM_STEPS], cases = 0, at;
	struct kfd_criu_gpus_restore *st;
	struct kfd_criu_bos_image img;
	enum kfd_fake_step step;
	struct kfd_process *p, *q;
	int ret;

	p = bt_prepare_unwind(test, s, &st, counted);

	for (step = 0; step < KFD_FAKE_NUM_STEPS; step++) {
		for (at = 0; at < counted[step]; at++) {
			q = kfd_fake_process(test, 2, BT_GPU0);
			memset(fake->calls, 0, sizeof(fake->calls));
			fake->fail_step = step;
			fake->fail_at = at;
			ret = bt_restore(q, s, &img, st, false);
			KUNIT_EXPECT_EQ_MSG(test, ret, -EIO, "failed %s %u",
					    kfd_fake_step_name[step], at);
			bt_expect_nothing_left(test, q, step, at);
			cases++;
		}
	}
	fake->fail_step = KFD_FAKE_NUM_STEPS;
	kunit_info(test, "%u failure points, each unwound\n", cases);
	/* The source process never changed */
	KUNIT_EXPECT_EQ(test, kfd_fake_bos_of(p), ARRAY_SIZE(bt_bos));
}

/*
 * A restore that @step's call @at fails for the signal it sends the
 * test's task. The signal is still pending when the restore returns, so
 * it was during the unwind.
 */
static void bt_restore_interrupted(struct kunit *test,
				   struct kfd_criu_test_stream *s,
				   struct kfd_criu_gpus_restore *st,
				   enum kfd_fake_step step, unsigned int at)
{
	struct kfd_criu_bos_image img;
	struct kfd_process *q;
	bool pending;
	int ret;

	q = kfd_fake_process(test, 2, BT_GPU0);
	memset(kfd_fake->calls, 0, sizeof(kfd_fake->calls));
	kfd_fake->fail_step = step;
	kfd_fake->fail_at = at;
	ret = bt_restore(q, s, &img, st, false);
	pending = signal_pending(current);
	flush_signals(current);
	KUNIT_EXPECT_EQ_MSG(test, ret, -EINTR, "signal %d at %s %u",
			    kfd_fake->fail_signal, kfd_fake_step_name[step],
			    at);
	KUNIT_EXPECT_TRUE_MSG(test, pending, "signal %d at %s %u not pending",
			      kfd_fake->fail_signal, kfd_fake_step_name[step],
			      at);
	bt_expect_nothing_left(test, q, step, at);
}

/*
 * A restore mostly fails because a fatal signal ended it, and amdgpu's
 * unmap and free fail in a task with a signal pending. Failing each step
 * in turn for a signal, nothing of the restore may be left and nothing
 * may be freed twice. SIGUSR1 interrupts amdgpu's waits just as well.
 */
static void test_bos_restore_unwinds_with_a_signal_pending(struct kunit *test)
{
	static const int signals[] = { SIGKILL, SIGUSR1 };
	struct kfd_criu_test_stream *s = kfd_criu_test_stream_new(test);
	struct kfd_fake_gpus *fake = kfd_fake_gpus_new(test);
	unsigned int counted[KFD_FAKE_NUM_STEPS], at, i;
	struct kfd_criu_gpus_restore *st;
	enum kfd_fake_step step;
	struct kfd_process *p;

	p = bt_prepare_unwind(test, s, &st, counted);

	for (i = 0; i < ARRAY_SIZE(signals); i++) {
		/* A kthread takes a signal only when it allows it */
		allow_signal(signals[i]);
		fake->fail_signal = signals[i];
		for (step = 0; step < KFD_FAKE_NUM_STEPS; step++)
			for (at = 0; at < counted[step]; at++)
				bt_restore_interrupted(test, s, st, step, at);
		disallow_signal(signals[i]);
	}
	fake->fail_signal = 0;
	fake->fail_step = KFD_FAKE_NUM_STEPS;
	KUNIT_EXPECT_EQ(test, kfd_fake_bos_of(p), ARRAY_SIZE(bt_bos));
}

/* A BO freed between the snapshot and its contents fails the dump. */
static void test_bos_dump_refuses_a_freed_bo(struct kunit *test)
{
	struct kfd_criu_test_stream *s = kfd_criu_test_stream_new(test);
	struct kfd_fake_gpus *fake = kfd_fake_gpus_new(test);
	struct kfd_criu_image_writer w;
	struct kfd_criu_bos_image img;
	struct kfd_process *p;
	struct kgd_mem *mem;

	bt_stub(test);
	p = bt_source(test);
	mutex_lock(&p->mutex);
	KUNIT_ASSERT_EQ(test, kfd_criu_bos_snapshot(p, &img), 0);
	mem = idr_remove(&p->pdds[1]->alloc_idr, 3);
	mutex_unlock(&p->mutex);
	KUNIT_ASSERT_NOT_NULL(test, mem);

	kfd_criu_image_writer_init(&w, &s->io);
	KUNIT_ASSERT_EQ(test, kfd_criu_image_write_header(&w, "kunit"), 0);
	KUNIT_ASSERT_EQ(test, kfd_criu_bos_write(&w, &img), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_bos_dump_contents(&w, p, &img), -EBUSY);
	KUNIT_EXPECT_EQ(test, fake->bounce_bytes, 0);
	kfd_criu_bos_image_free(&img);
}

static void test_bos_dump_copy_error(struct kunit *test)
{
	struct kfd_criu_test_stream *s = kfd_criu_test_stream_new(test);
	struct kfd_fake_gpus *fake = kfd_fake_gpus_new(test);
	struct kfd_process *p;

	bt_stub(test);
	p = bt_source(test);
	fake->fail_step = KFD_FAKE_COPY;
	fake->fail_at = 2;
	KUNIT_EXPECT_EQ(test, bt_dump(p, s), -EIO);
	KUNIT_EXPECT_EQ(test, fake->bounce_bytes, 0);
	KUNIT_EXPECT_EQ(test, kfd_fake_bos_of(p), ARRAY_SIZE(bt_bos));
}

/* A GPU that loses its VRAM during the contents fails dump and restore. */
static void test_bos_vram_lost(struct kunit *test)
{
	struct kfd_criu_test_stream *s = kfd_criu_test_stream_new(test);
	struct kfd_fake_gpus *fake = kfd_fake_gpus_new(test);
	struct kfd_criu_test_stream *lost = kfd_criu_test_stream_new(test);
	struct kfd_criu_gpus_restore *st;
	struct kfd_criu_bos_image img;
	struct kfd_process *p, *q;

	st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, st);
	bt_stub(test);
	p = bt_source(test);
	fake->lose_vram_at = 1;
	KUNIT_EXPECT_EQ(test, bt_dump(p, lost), -EIO);
	KUNIT_EXPECT_EQ(test, fake->bounce_bytes, 0);

	fake->lose_vram_at = -1;
	KUNIT_ASSERT_EQ(test, bt_dump(p, s), 0);
	q = kfd_fake_process(test, 2, BT_GPU0);
	memset(fake->calls, 0, sizeof(fake->calls));
	fake->lose_vram_at = 2;
	KUNIT_EXPECT_EQ(test, bt_restore(q, s, &img, st, false), -EIO);
	bt_expect_nothing_left(test, q, KFD_FAKE_COPY, 2);
}

/*
 * An image that ends before the contents of its BOs is refused with
 * -EINVAL, and the BOs it created are gone again.
 */
static void test_bos_contents_missing(struct kunit *test)
{
	struct kfd_criu_test_stream *s = kfd_criu_test_stream_new(test);
	struct kfd_fake_gpus *fake = kfd_fake_gpus_new(test);
	struct kfd_criu_gpus_restore *st;
	struct kfd_criu_bos_image img;
	struct kfd_process *q;
	u32 g;

	st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, st);
	bt_stub(test);
	KUNIT_ASSERT_EQ(test, bt_dump_as(bt_source(test), s, true), 0);
	q = kfd_fake_process(test, 2, BT_GPU0);
	KUNIT_EXPECT_EQ(test, bt_restore(q, s, &img, st, false), -EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_fake_bos_of(q), 0);
	for (g = 0; g < 2; g++)
		KUNIT_EXPECT_EQ(test, atomic64_read(&q->pdds[g]->vram_usage), 0);
	KUNIT_EXPECT_EQ(test, fake->bounce_bytes, 0);
}

/* What an image cannot carry is refused at the snapshot. */
static void test_bos_snapshot_refuses_imported(struct kunit *test)
{
	struct kfd_criu_bos_image img;
	struct kfd_process *p;

	kfd_fake_gpus_new(test);
	bt_stub(test);
	p = bt_source(test);
	bt_find(p, 1)->mem.is_imported = true;
	mutex_lock(&p->mutex);
	KUNIT_EXPECT_EQ(test, kfd_criu_bos_snapshot(p, &img), -EOPNOTSUPP);
	mutex_unlock(&p->mutex);
	KUNIT_EXPECT_NULL(test, img.bos);

	/* Encrypted (TMZ) BOs, which KFD never creates */
	bt_find(p, 1)->mem.is_imported = false;
	bt_find(p, 4)->bo.flags |= AMDGPU_GEM_CREATE_ENCRYPTED;
	mutex_lock(&p->mutex);
	KUNIT_EXPECT_EQ(test, kfd_criu_bos_snapshot(p, &img), -EOPNOTSUPP);
	mutex_unlock(&p->mutex);
	KUNIT_EXPECT_NULL(test, img.bos);
	bt_find(p, 4)->bo.flags &= ~AMDGPU_GEM_CREATE_ENCRYPTED;

	/*
	 * An event page no BO record can be: a handle no BO has, and a GTT
	 * BO smaller than the 32 KiB of a signal page
	 */
	mutex_lock(&p->mutex);
	p->signal_handle = MAKE_HANDLE(BT_GPU0, 9);
	KUNIT_EXPECT_EQ(test, kfd_criu_bos_snapshot(p, &img), -EOPNOTSUPP);
	p->signal_handle = MAKE_HANDLE(BT_GPU0, 2);
	KUNIT_EXPECT_EQ(test, kfd_criu_bos_snapshot(p, &img), -EOPNOTSUPP);
	p->signal_handle = 0;
	KUNIT_EXPECT_EQ(test, kfd_criu_bos_snapshot(p, &img), 0);
	mutex_unlock(&p->mutex);
	kfd_criu_bos_image_free(&img);
}

static const struct kfd_criu_test_field bt_bo_fields[] = {
	{ "va", offsetof(struct kfd_criu_bo_rec, va), 8 },
	{ "size", offsetof(struct kfd_criu_bo_rec, size), 8 },
	{ "userptr", offsetof(struct kfd_criu_bo_rec, userptr), 8 },
	{ "mmap_offset", offsetof(struct kfd_criu_bo_rec, mmap_offset), 8 },
	{ "mapped_gpus", offsetof(struct kfd_criu_bo_rec, mapped_gpus), 8 },
	{ "alloc_flags", offsetof(struct kfd_criu_bo_rec, alloc_flags), 4 },
	{ "handle", offsetof(struct kfd_criu_bo_rec, handle), 4 },
	{ "gpu_index", offsetof(struct kfd_criu_bo_rec, gpu_index), 4 },
	{ "flags", offsetof(struct kfd_criu_bo_rec, flags), 4 },
};

static const struct kfd_criu_test_field bt_data_fields[] = {
	{ "bo_index", offsetof(struct kfd_criu_bo_data_hdr, bo_index), 4 },
	{ "reserved", offsetof(struct kfd_criu_bo_data_hdr, reserved), 4 },
	{ "offset", offsetof(struct kfd_criu_bo_data_hdr, offset), 8 },
};

/*
 * The contents of accepted BO @i: the sweep changes no content byte, and
 * RESTORE takes BO records only in (gpu_index, handle) order and contents
 * only in (bo_index, offset) order, so they are those of bt_bos[@i],
 * whose record is the image's record @i.
 */
/*
 * The mmap offsets RESTORE reports for the BOs of @img that had one: the
 * offset in the record, now the one the fake gave the new BO, of the
 * image GPU the BO's record names. BOs at the fixed doorbell and MMIO
 * offsets are left out. RESTORE leaves out a BO whose offset did not
 * change; the fake never gives an offset twice, so every BO changes.
 */
static void bt_expect_offsets(struct kunit *test, struct kfd_process *q,
			      struct kfd_criu_bos_image *img,
			      struct kfd_criu_gpus_restore *st,
			      struct kgd_mem **mems, const char *what)
{
	const u32 fixed = KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL |
			  KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP;
	const struct kfd_criu_bo_rec *rec;
	struct kfd_criu_offset_map *map;
	u32 i, k, n, found;
	u64 old;

	map = kunit_kcalloc(test, img->num_bos, sizeof(*map), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, map);
	mutex_lock(&q->mutex);
	n = kfd_criu_bos_offsets(q, img, st, map, img->num_bos);
	mutex_unlock(&q->mutex);
	KUNIT_EXPECT_LE_MSG(test, n, img->num_bos, "%s: offset map entries",
			    what);
	n = min(n, img->num_bos);
	for (i = 0, found = 0; i < img->num_bos; i++) {
		rec = &img->bos[i];
		old = le64_to_cpu(rec->mmap_offset);
		if (!mems[i] || !old || le32_to_cpu(rec->alloc_flags) & fixed)
			continue;
		for (k = 0; k < n && map[k].old_offset != old; k++)
			;
		KUNIT_EXPECT_LT_MSG(test, k, n, "%s: BO %u: no new mmap offset",
				    what, i);
		if (k == n)
			continue;
		KUNIT_EXPECT_EQ_MSG(test, map[k].new_offset,
				    kfd_fake_bo_of(mems[i])->gem_offset,
				    "%s: BO %u: new mmap offset", what, i);
		KUNIT_EXPECT_EQ_MSG(test, map[k].gpu_id,
				    BT_GPU0 + le32_to_cpu(rec->gpu_index),
				    "%s: BO %u: GPU of its mmap offset", what, i);
		found++;
	}
	KUNIT_EXPECT_EQ_MSG(test, found, n, "%s: mmap offsets of no BO", what);
}

/*
 * MAP or UNMAP (@map false) of the BO at @handle on the GPUs of @gpus
 * (image indexes), through the ioctl handler, as a process calls it.
 */
static int bt_ioctl_map(struct kunit *test, struct kfd_process *q, u64 handle,
			u64 gpus, bool map)
{
	struct kfd_ioctl_unmap_memory_from_gpu_args unmap = {};
	struct kfd_ioctl_map_memory_to_gpu_args args = {};
	u32 ids[2], n = 0, done, g;
	int ret;

	for (g = 0; g < 2; g++)
		if (gpus & BIT_ULL(g))
			ids[n++] = BT_GPU0 + g;
	args.handle = handle;
	args.device_ids_array_ptr = kfd_fake_user_ids(test, ids, n);
	args.n_devices = n;
	if (map) {
		ret = kfd_ioctl_map_memory_to_gpu(NULL, q, &args);
		done = args.n_success;
	} else {
		unmap.handle = args.handle;
		unmap.device_ids_array_ptr = args.device_ids_array_ptr;
		unmap.n_devices = n;
		ret = kfd_ioctl_unmap_memory_from_gpu(NULL, q, &unmap);
		done = unmap.n_success;
	}
	/* All GPUs on success, none when the first one failed */
	if (done != (ret ? 0 : n))
		return -EPROTO;
	return ret;
}

/* The GPUs (image indexes) @mem is mapped on */
static u64 bt_mapped_on(struct kfd_process *q, struct kfd_criu_gpus_restore *st,
			struct kgd_mem *mem)
{
	u64 mapped = 0;
	u32 g;

	for (g = 0; g < 2; g++)
		if (kfd_fake_on_vm(q->pdds[st->target[g]]->drm_priv, mem))
			mapped |= BIT_ULL(g);
	return mapped;
}

/* FREE of the BO at @handle, through the ioctl handler */
static int bt_ioctl_free(struct kfd_process *q, u64 handle)
{
	struct kfd_ioctl_free_memory_of_gpu_args args = { .handle = handle };

	return kfd_ioctl_free_memory_of_gpu(NULL, q, &args);
}

/* Whether @pdd's handle @handle still names a BO */
static bool bt_has_handle(struct kfd_process *q,
			  struct kfd_process_device *pdd, u32 handle)
{
	bool found;

	mutex_lock(&q->mutex);
	found = kfd_process_device_translate_handle(pdd, handle);
	mutex_unlock(&q->mutex);
	return found;
}

/*
 * The calls a process makes on a mapped BO before it frees it, and what
 * each must do: FREE refuses a mapped BO and changes nothing, UNMAP
 * unmaps it from every GPU and a second UNMAP fails, MAP maps it on
 * exactly those GPUs again and a second MAP changes nothing. Leaves the
 * BO unmapped.
 */
static void bt_next_ops_mapped(struct kunit *test, struct kfd_process *q,
			       struct kfd_criu_gpus_restore *st,
			       struct kgd_mem *mem, u64 handle, u64 mapped,
			       struct kfd_process_device *pdd, u32 i,
			       const char *what)
{
	s64 vram = atomic64_read(&pdd->vram_usage);

	KUNIT_EXPECT_EQ_MSG(test, bt_ioctl_free(q, handle), -EBUSY,
			    "%s: BO %u: FREE while mapped", what, i);
	KUNIT_EXPECT_TRUE_MSG(test, bt_has_handle(q, pdd, (u32)handle),
			      "%s: BO %u: handle gone after a refused FREE",
			      what, i);
	KUNIT_EXPECT_EQ_MSG(test, atomic64_read(&pdd->vram_usage), vram,
			    "%s: BO %u: VRAM usage after a refused FREE",
			    what, i);
	KUNIT_EXPECT_EQ_MSG(test, bt_ioctl_map(test, q, handle, mapped, false),
			    0, "%s: BO %u: UNMAP", what, i);
	KUNIT_EXPECT_EQ_MSG(test, bt_mapped_on(q, st, mem), 0,
			    "%s: BO %u: mapped after UNMAP", what, i);
	KUNIT_EXPECT_EQ_MSG(test, bt_ioctl_map(test, q, handle, mapped, false),
			    -EINVAL, "%s: BO %u: second UNMAP", what, i);
	KUNIT_EXPECT_EQ_MSG(test, bt_ioctl_map(test, q, handle, mapped, true),
			    0, "%s: BO %u: MAP", what, i);
	KUNIT_EXPECT_EQ_MSG(test, bt_ioctl_map(test, q, handle, mapped, true),
			    0, "%s: BO %u: second MAP", what, i);
	KUNIT_EXPECT_EQ_MSG(test, bt_mapped_on(q, st, mem), mapped,
			    "%s: BO %u: GPUs after MAP", what, i);
	KUNIT_EXPECT_EQ_MSG(test, bt_ioctl_map(test, q, handle, mapped, false),
			    0, "%s: BO %u: UNMAP after MAP", what, i);
}

/*
 * What a process does next with the BOs a restore gave it, through the
 * ioctl handlers it calls (bt_next_ops_mapped() for a mapped BO), then
 * FREE of each, which must succeed and take its handle. Then nothing may
 * be left: no BO, no handle, and no VRAM usage, so that FREE gave back
 * what the restore charged: the restore counts with kfd_vram_usage_of(),
 * the fake free gives back the BO's size as amdgpu does. Frees @img.
 */
static void bt_next_ops(struct kunit *test, struct kfd_process *q,
			struct kfd_criu_bos_image *img,
			struct kfd_criu_gpus_restore *st, struct kgd_mem **mems,
			const char *what)
{
	const struct kfd_criu_bo_rec *rec;
	struct kfd_process_device *pdd;
	u64 mapped, handle;
	u32 i, g, gpu;

	for (i = 0; i < img->num_bos; i++) {
		if (!mems[i])
			continue;
		rec = &img->bos[i];
		mapped = le64_to_cpu(rec->mapped_gpus);
		gpu = le32_to_cpu(rec->gpu_index);
		pdd = q->pdds[st->target[gpu]];
		handle = MAKE_HANDLE(BT_GPU0 + gpu, le32_to_cpu(rec->handle));
		if (mapped)
			bt_next_ops_mapped(test, q, st, mems[i], handle, mapped,
					   pdd, i, what);
		KUNIT_EXPECT_EQ_MSG(test, bt_ioctl_free(q, handle), 0,
				    "%s: BO %u: FREE", what, i);
		KUNIT_EXPECT_FALSE_MSG(test,
				       bt_has_handle(q, pdd, (u32)handle),
				       "%s: BO %u: handle left after FREE",
				       what, i);
	}
	kfd_criu_bos_image_free(img);
	KUNIT_EXPECT_EQ_MSG(test, kfd_fake_bos_of(q), 0,
			    "%s: BOs left after FREE", what);
	for (g = 0; g < 2; g++) {
		KUNIT_EXPECT_TRUE_MSG(test, idr_is_empty(&q->pdds[g]->alloc_idr),
				      "%s: handles left after FREE", what);
		KUNIT_EXPECT_EQ_MSG(test, atomic64_read(&q->pdds[g]->vram_usage),
				    0, "%s: VRAM usage of GPU %u after FREE",
				    what, g);
	}
}

/* The unwind of an accepted image leaves nothing. Frees @img. */
static void bt_check_unwind(struct kunit *test, struct kfd_process *q,
			    struct kfd_criu_bos_image *img,
			    struct kfd_criu_gpus_restore *st, const char *what)
{
	u32 g;

	mutex_lock(&q->mutex);
	kfd_criu_bos_unwind(q, img, st);
	mutex_unlock(&q->mutex);
	kfd_criu_bos_image_free(img);
	KUNIT_EXPECT_EQ_MSG(test, kfd_fake_bos_of(q), 0,
			    "%s: BOs left after the unwind", what);
	for (g = 0; g < 2; g++)
		KUNIT_EXPECT_EQ_MSG(test, atomic64_read(&q->pdds[g]->vram_usage),
				    0, "%s: VRAM usage of GPU %u after the unwind",
				    what, g);
}

/*
 * An accepted image: its BOs as the records say, and then what a process
 * does next with them works. Frees @img.
 */
static void bt_check_accepted(struct kunit *test, struct kfd_process *q,
			      struct kfd_criu_bos_image *img,
			      struct kfd_criu_gpus_restore *st,
			      const char *what)
{
	const struct kfd_criu_bo_rec *rec;
	struct kfd_process_device *pdd;
	struct kgd_mem *mem, **mems;
	u64 mapped, size, vram[2] = {};
	struct kfd_fake_bo *fb;
	u32 i, g, flags;

	mems = kunit_kcalloc(test, img->num_bos, sizeof(*mems), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mems);
	for (i = 0; i < img->num_bos; i++) {
		rec = &img->bos[i];
		pdd = q->pdds[st->target[le32_to_cpu(rec->gpu_index)]];
		/* The lookup MAP, UNMAP and FREE make of a handle, as they do */
		mutex_lock(&q->mutex);
		mem = kfd_process_device_translate_handle(pdd,
							  le32_to_cpu(rec->handle));
		mutex_unlock(&q->mutex);
		KUNIT_EXPECT_NOT_NULL_MSG(test, mem, "%s: BO %u missing", what, i);
		if (!mem)
			continue;
		mems[i] = mem;
		fb = kfd_fake_bo_of(mem);
		flags = le32_to_cpu(rec->alloc_flags);
		size = le64_to_cpu(rec->size);
		KUNIT_EXPECT_EQ_MSG(test, mem->va, le64_to_cpu(rec->va),
				    "%s: BO %u", what, i);
		KUNIT_EXPECT_EQ_MSG(test, mem->alloc_flags, flags,
				    "%s: BO %u", what, i);
		/* amdgpu backs an AQL queue's VA with half as much, twice */
		KUNIT_EXPECT_EQ_MSG(test, fb->bo.tbo.base.size,
				    bt_bo_size(flags, size), "%s: BO %u size",
				    what, i);
		KUNIT_EXPECT_EQ_MSG(test, fb->userptr, le64_to_cpu(rec->userptr),
				    "%s: BO %u userptr", what, i);
		if (flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM)
			vram[pdd == q->pdds[1]] += bt_bo_size(flags, size);
		if (kfd_criu_bo_has_contents(flags))
			bt_expect_contents(test, fb, i, size, what);
		/* Mapped on exactly the GPUs its record names */
		mapped = le64_to_cpu(rec->mapped_gpus);
		for (g = 0; g < 2; g++)
			KUNIT_EXPECT_EQ_MSG(test,
					    kfd_fake_on_vm(q->pdds[st->target[g]]->drm_priv,
							   mem),
					    !!(mapped & BIT_ULL(g)),
					    "%s: BO %u on GPU %u", what, i, g);
	}
	/*
	 * As the allocation ioctl counts, and kfd_criu_restore_memory_of_gpu()
	 * with it (the fake's allocation counts the same way): an AQL
	 * queue's BO takes half its VA size.
	 */
	for (g = 0; g < 2; g++)
		KUNIT_EXPECT_EQ_MSG(test, atomic64_read(&q->pdds[g]->vram_usage),
				    vram[g], "%s: VRAM usage of GPU %u", what, g);
	bt_expect_offsets(test, q, img, st, mems, what);
	bt_next_ops(test, q, img, st, mems, what);
}

/*
 * Restores @s into a fresh process and judges the outcome. An accepted
 * image is restored twice: once to go on with its BOs, once to unwind.
 */
static bool bt_try_hostile(struct kunit *test, struct kfd_criu_test_stream *s,
			   struct kfd_criu_gpus_restore *st, const char *what)
{
	struct kfd_process *q = kfd_fake_process(test, 2, BT_GPU0);
	struct kfd_criu_bos_image img;
	int ret;

	u32 g;

	ret = bt_restore(q, s, &img, st, false);
	if (!ret) {
		bt_check_accepted(test, q, &img, st, what);
		q = kfd_fake_process(test, 2, BT_GPU0);
		ret = bt_restore(q, s, &img, st, false);
		KUNIT_EXPECT_EQ_MSG(test, ret, 0, "%s: second restore", what);
		if (!ret)
			bt_check_unwind(test, q, &img, st, what);
		return true;
	}
	KUNIT_EXPECT_TRUE_MSG(test, kfd_criu_test_documented(ret),
			      "%s: undocumented error %d", what, ret);
	KUNIT_EXPECT_EQ_MSG(test, kfd_fake_bos_of(q), 0, "%s: BOs left", what);
	for (g = 0; g < 2; g++)
		KUNIT_EXPECT_EQ_MSG(test,
				    atomic64_read(&q->pdds[g]->vram_usage), 0,
				    "%s: VRAM usage left", what);
	KUNIT_EXPECT_EQ_MSG(test, kfd_fake->bounce_bytes, 0,
			    "%s: bounce buffers left", what);
	return false;
}

/**
 * struct bt_sweep - what each hostile BO image is restored with
 * @s: the stream
 * @st: the placement state a restore fills
 */
struct bt_sweep {
	struct kfd_criu_test_stream *s;
	struct kfd_criu_gpus_restore *st;
};

static bool bt_try_swept(struct kunit *test, void *ctx, const char *what)
{
	struct bt_sweep *b = ctx;

	return bt_try_hostile(test, b->s, b->st, what);
}

/*
 * Hostile BO records, the GPU half of the mutation campaign: each field
 * of the records of a VRAM BO over several chunks mapped on both GPUs, of
 * a userptr BO and of the first contents header is set in turn to its
 * boundary values (0, the maximum, one and a page more, the top bit
 * flipped), the record's CRC made good again, and the image restored
 * into a fresh process on the fake GPUs. A refused image must fail with
 * an errno RESTORE documents and leave nothing behind; an accepted one
 * must have created each BO at the VA and with the flags its record
 * says, take MAP, UNMAP and FREE as a process's own BOs do, and, restored
 * again, unwind to nothing.
 */
static void test_bos_hostile_records(struct kunit *test)
{
	struct kfd_criu_test_stream *s = kfd_criu_test_stream_new(test);
	struct kfd_fake_gpus *fake = kfd_fake_gpus_new(test);
	struct kfd_criu_gpus_restore *st;
	struct kfd_criu_test_sweep sw;
	struct bt_sweep b;
	struct kfd_process *p;

	st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, st);
	bt_stub(test);
	p = bt_source(test);
	KUNIT_ASSERT_EQ(test, bt_dump(p, s), 0);
	b = (struct bt_sweep){ .s = s, .st = st };
	sw = (struct kfd_criu_test_sweep){ .s = s, .try_image = bt_try_swept,
					   .ctx = &b };
	kfd_criu_test_sweep_record(test, &sw, KFD_CRIU_REC_BO, 0, bt_bo_fields,
				   ARRAY_SIZE(bt_bo_fields));
	kfd_criu_test_sweep_record(test, &sw, KFD_CRIU_REC_BO, 2, bt_bo_fields,
				   ARRAY_SIZE(bt_bo_fields));
	kfd_criu_test_sweep_record(test, &sw, KFD_CRIU_REC_BO_DATA, 0,
				   bt_data_fields, ARRAY_SIZE(bt_data_fields));
	kfd_criu_test_sweep_report(test, &sw);
	KUNIT_EXPECT_EQ(test, fake->bounce_bytes, 0);

	/* The image itself is intact again and restores */
	KUNIT_EXPECT_TRUE(test, bt_try_hostile(test, s, st, "intact"));
}

/*
 * A restore fails after its BOs, and its unwind cannot unmap the newest
 * one: that BO stays, with the VMs, which the GPU part of the unwind
 * then keeps, and the process runs on. The MMU notifications the restore
 * blocked must be unblocked then, or every later invalidation of the
 * process's userptr BOs would be ignored; and the process's next ioctls
 * work: it unmaps the BO that stayed from both GPUs and frees it.
 */
static void test_bos_unwind_keeping_vms_unblocks_mmu(struct kunit *test)
{
	const u32 last = ARRAY_SIZE(bt_bos) - 1;
	struct kfd_criu_test_stream *s = kfd_criu_test_stream_new(test);
	struct kfd_fake_gpus *fake = kfd_fake_gpus_new(test);
	struct amdkfd_process_info *info;
	struct kfd_criu_gpus_restore *st;
	struct kfd_criu_bos_image img;
	struct kfd_process *q;
	bool blocked;
	u64 handle;

	st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);
	info = kunit_kzalloc(test, sizeof(*info), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, st);
	KUNIT_ASSERT_NOT_NULL(test, info);
	mutex_init(&info->lock);
	bt_stub(test);
	/* Without contents, the restore fails once its BOs exist */
	KUNIT_ASSERT_EQ(test, bt_dump_as(bt_source(test), s, true), 0);
	q = kfd_fake_process(test, 2, BT_GPU0);
	/* As kfd_criu_gpus_restore() leaves the process for its BOs */
	info->block_mmu_notifications = true;
	q->kgd_process_info = info;
	memset(fake->calls, 0, sizeof(fake->calls));
	fake->fail_step = KFD_FAKE_UNMAP;
	fake->fail_at = 0;
	KUNIT_ASSERT_EQ(test, bt_restore(q, s, &img, st, false), -EINVAL);
	fake->fail_step = KFD_FAKE_NUM_STEPS;
	KUNIT_ASSERT_NOT_NULL(test, bt_find(q, last));
	KUNIT_EXPECT_EQ(test, kfd_fake_bos_of(q), 1);

	/* The GPU part of the unwind, with both VMs acquired by the restore */
	st->acquired = BIT_ULL(0) | BIT_ULL(1);
	st->mmu_blocked = true;
	mutex_lock(&q->mutex);
	kfd_criu_gpus_unwind(q, st);
	mutex_unlock(&q->mutex);
	blocked = READ_ONCE(info->block_mmu_notifications);
	KUNIT_EXPECT_PTR_EQ(test, q->kgd_process_info, (void *)info);
	KUNIT_EXPECT_FALSE_MSG(test, blocked,
			       "MMU notifications still blocked after an unwind that kept the VMs");

	handle = MAKE_HANDLE(BT_GPU0 + bt_bos[last].gpu, bt_bos[last].handle);
	KUNIT_EXPECT_EQ(test, bt_ioctl_map(test, q, handle, bt_bos[last].mapped,
					   false), 0);
	KUNIT_EXPECT_EQ(test, bt_ioctl_free(q, handle), 0);
	KUNIT_EXPECT_EQ(test, kfd_fake_bos_of(q), 0);
	q->kgd_process_info = NULL;
}

/*
 * What a restore gives the process before its BOs exist, the XNACK mode
 * and an enabled runtime, and its undo when a later step fails: the
 * process is back to its own mode, with no runtime and no trap
 * temporaries. A process without GPUs, so that only the bookkeeping
 * runs; the device programming is RUNTIME_ENABLE's own code.
 */
static void test_runtime_restore_unwinds(struct kunit *test)
{
	struct kfd_criu_process_rec rec = {};
	struct kfd_process *p = kfd_fake_process(test, 0, 0);
	bool old;

	p->xnack_enabled = true;
	rec.xnack_enabled = cpu_to_le32(0);
	rec.runtime_state = cpu_to_le32(DEBUG_RUNTIME_STATE_ENABLED);
	rec.r_debug = cpu_to_le64(0x7f0012345000ULL);
	rec.ttmp_setup = cpu_to_le32(1);
	mutex_lock(&p->mutex);
	KUNIT_EXPECT_EQ(test, kfd_criu_runtime_restore(p, &rec, &old), 0);
	KUNIT_EXPECT_TRUE(test, old);
	KUNIT_EXPECT_FALSE(test, p->xnack_enabled);
	KUNIT_EXPECT_EQ(test, p->runtime_info.runtime_state,
			DEBUG_RUNTIME_STATE_ENABLED);
	KUNIT_EXPECT_EQ(test, p->runtime_info.r_debug, 0x7f0012345000ULL);
	KUNIT_EXPECT_TRUE(test, p->runtime_info.ttmp_setup);

	kfd_criu_runtime_unwind(p, &rec, old);
	KUNIT_EXPECT_TRUE(test, p->xnack_enabled);
	KUNIT_EXPECT_EQ(test, p->runtime_info.runtime_state,
			DEBUG_RUNTIME_STATE_DISABLED);
	KUNIT_EXPECT_EQ(test, p->runtime_info.r_debug, 0);
	KUNIT_EXPECT_FALSE(test, p->runtime_info.ttmp_setup);

	/* Without a runtime in the image only the mode changes, and back */
	rec.runtime_state = cpu_to_le32(DEBUG_RUNTIME_STATE_DISABLED);
	rec.r_debug = 0;
	rec.ttmp_setup = 0;
	KUNIT_EXPECT_EQ(test, kfd_criu_runtime_restore(p, &rec, &old), 0);
	KUNIT_EXPECT_FALSE(test, p->xnack_enabled);
	KUNIT_EXPECT_EQ(test, p->runtime_info.runtime_state,
			DEBUG_RUNTIME_STATE_DISABLED);
	kfd_criu_runtime_unwind(p, &rec, old);
	KUNIT_EXPECT_TRUE(test, p->xnack_enabled);
	mutex_unlock(&p->mutex);
}

static struct kunit_case kfd_criu_bos_cases[] = {
	KUNIT_CASE(test_bos_round_trip),
	KUNIT_CASE(test_bos_round_trip_swapped_gpus),
	KUNIT_CASE(test_bos_pairing_needs_room),
	KUNIT_CASE(test_bos_restore_unwinds_every_step),
	KUNIT_CASE(test_bos_dump_refuses_a_freed_bo),
	KUNIT_CASE(test_bos_dump_copy_error),
	KUNIT_CASE(test_bos_vram_lost),
	KUNIT_CASE(test_bos_contents_missing),
	KUNIT_CASE(test_bos_snapshot_refuses_imported),
	KUNIT_CASE(test_bos_restore_unwinds_with_a_signal_pending),
	KUNIT_CASE(test_bos_unwind_keeping_vms_unblocks_mmu),
	KUNIT_CASE(test_runtime_restore_unwinds),
	KUNIT_CASE(test_bos_hostile_records),
	{}
};

static struct kunit_suite kfd_criu_bos_suite = {
	.name = "kfd_criu_bos",
	.test_cases = kfd_criu_bos_cases,
};

kunit_test_suite(kfd_criu_bos_suite);

/* The seams of kfd_criu_bos.c, for the ops-level tests of kfd_criu.c */
#include "kfd_criu_test_seams.h"

const struct kfd_criu_bos_seams kfd_criu_bos_seams = {
	.on_vm = kfd_criu_bo_on_vm,
	.userptr = kfd_criu_bo_userptr,
	.gem_offset = kfd_criu_bo_gem_offset,
	.alloc = kfd_criu_bo_alloc,
	.vm_map = kfd_criu_bo_vm_map,
	.vm_sync = kfd_criu_bo_vm_sync,
	.tlb_flush = kfd_criu_bo_tlb_flush,
	.vm_unmap = kfd_criu_bo_vm_unmap,
	.release = kfd_criu_bo_release,
	.fence = kfd_criu_bo_fence,
};
