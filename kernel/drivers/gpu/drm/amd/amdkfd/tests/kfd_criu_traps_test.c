// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * KUnit tests of the trap handler part of CRIU image mode, on processes
 * of the test: a handler is read where the SET_TRAP_HANDLER ioctl put it
 * (the second-level slots of the CWSR trap page when the GPU has one,
 * the first-level registers otherwise), goes through the stream, and is
 * put back on the GPU each image GPU was placed on, and taken off again
 * by the unwind. Nothing here needs a GPU. #included at the bottom of
 * kfd_criu_traps.c.
 */

#include <kunit/test.h>

#include "kfd_criu_test_stream.h"

#define TT_GPUS		3
#define TT_TBA0		0x7f0000010000ULL
#define TT_TMA0		0x7f0000020000ULL
#define TT_TBA1		0x7f0000030000ULL
#define TT_TMA1		0x7f0000040000ULL

/* A process whose GPU i has a CWSR trap page when bit i of @cwsr is set */
static struct kfd_process *tt_process(struct kunit *test, u32 cwsr)
{
	struct kfd_process_device *pdd;
	struct kfd_process *p;
	u32 i;

	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	mutex_init(&p->mutex);
	for (i = 0; i < TT_GPUS; i++) {
		pdd = kunit_kzalloc(test, sizeof(*pdd), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, pdd);
		pdd->process = p;
		pdd->user_gpu_id = 0x100 + i;
		if (cwsr & BIT(i)) {
			void *area = kunit_kzalloc(test, 2 * PAGE_SIZE,
						   GFP_KERNEL);

			KUNIT_ASSERT_NOT_NULL(test, area);
			iosys_map_set_vaddr(&pdd->qpd.cwsr_map, area);
		}
		p->pdds[i] = pdd;
		p->n_pdds = i + 1;
	}
	return p;
}

static void tt_expect_trap(struct kunit *test, struct kfd_process_device *pdd,
			   u64 tba, u64 tma)
{
	u64 got_tba, got_tma;

	kfd_criu_read_trap(pdd, &got_tba, &got_tma);
	KUNIT_EXPECT_EQ(test, got_tba, tba);
	KUNIT_EXPECT_EQ(test, got_tma, tma);
}

/* Writes @img to @s and collects it back into @out. */
static int tt_round_trip(struct kfd_criu_test_stream *s,
			 const struct kfd_criu_traps_image *img,
			 struct kfd_criu_traps_image *out)
{
	struct kfd_criu_image_writer w;
	struct kfd_criu_image_reader r;
	struct kfd_criu_trap_rec buf;
	struct kfd_criu_record rec;
	int ret;

	ret = kfd_criu_test_begin_image(s, &w);
	if (!ret)
		ret = kfd_criu_traps_write(&w, img);
	if (!ret)
		ret = kfd_criu_image_write_end(&w);
	if (!ret)
		ret = kfd_criu_test_open_image(s, &r);
	while (!ret &&
	       (ret = kfd_criu_test_next_record(&r, &rec, &buf, sizeof(buf))) > 0)
		ret = kfd_criu_traps_collect(out, &rec, &buf, TT_GPUS);
	return ret;
}

/*
 * A handler on a GPU with a CWSR trap page and one on a GPU without are
 * dumped, go through the stream, and come back on the GPUs the image
 * GPUs were placed on, each where that GPU keeps it; the unwind takes
 * them off again, and the handler the third GPU had stays.
 */
static void tt_test_round_trip(struct kunit *test)
{
	struct kfd_criu_test_stream *s = kfd_criu_test_stream_new(test);
	struct kfd_criu_traps_image img, out = {};
	struct kfd_criu_gpus_restore *st;
	struct kfd_process *p, *q;
	int ret;

	st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, st);
	p = tt_process(test, BIT(0));
	kfd_process_set_trap_handler(&p->pdds[0]->qpd, TT_TBA0, TT_TMA0);
	kfd_process_set_trap_handler(&p->pdds[1]->qpd, TT_TBA1, TT_TMA1);
	/* The CWSR GPU keeps it in its trap page, not its registers */
	KUNIT_EXPECT_EQ(test, p->pdds[0]->qpd.tba_addr, 0);

	mutex_lock(&p->mutex);
	KUNIT_EXPECT_EQ(test, kfd_criu_traps_count(p), 2);
	ret = kfd_criu_traps_snapshot(p, &img);
	mutex_unlock(&p->mutex);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_EQ(test, img.num_traps, 2);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(img.traps[0].gpu_index), 0);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(img.traps[0].tba_addr), TT_TBA0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(img.traps[1].gpu_index), 1);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(img.traps[1].tma_addr), TT_TMA1);

	ret = tt_round_trip(s, &img, &out);
	kfd_criu_traps_image_free(&img);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_EQ(test, out.num_traps, 2);
	/* As RESTORE checks the records before it places them */
	KUNIT_ASSERT_EQ(test, kfd_criu_check_traps(out.traps, out.num_traps,
						   TT_GPUS), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_traps_needed_gpus(&out), 3);

	/*
	 * Image GPU 0 on target GPU 2 (CWSR), image GPU 1 on target GPU 0;
	 * target GPU 1 has a handler of its own, which nothing touches.
	 */
	q = tt_process(test, BIT(2));
	kfd_process_set_trap_handler(&q->pdds[1]->qpd, TT_TBA1 + SZ_64K,
				     TT_TMA1 + SZ_64K);
	st->target[0] = 2;
	st->target[1] = 0;
	mutex_lock(&q->mutex);
	kfd_criu_traps_restore(q, &out, st);
	mutex_unlock(&q->mutex);
	tt_expect_trap(test, q->pdds[2], TT_TBA0, TT_TMA0);
	KUNIT_EXPECT_EQ(test, q->pdds[2]->qpd.tba_addr, 0);
	tt_expect_trap(test, q->pdds[0], TT_TBA1, TT_TMA1);
	KUNIT_EXPECT_EQ(test, q->pdds[0]->qpd.tba_addr, TT_TBA1);
	tt_expect_trap(test, q->pdds[1], TT_TBA1 + SZ_64K, TT_TMA1 + SZ_64K);

	mutex_lock(&q->mutex);
	kfd_criu_traps_unwind(q, &out, st);
	mutex_unlock(&q->mutex);
	tt_expect_trap(test, q->pdds[2], 0, 0);
	tt_expect_trap(test, q->pdds[0], 0, 0);
	tt_expect_trap(test, q->pdds[1], TT_TBA1 + SZ_64K, TT_TMA1 + SZ_64K);
	kfd_criu_traps_image_free(&out);
}

/* A handler the image cannot carry fails the dump, with nothing kept. */
static void tt_test_snapshot_refuses(struct kunit *test)
{
	struct kfd_criu_traps_image img;
	struct kfd_process *p = tt_process(test, BIT(1));
	int ret;

	kfd_process_set_trap_handler(&p->pdds[1]->qpd, TT_TBA0 | 2, TT_TMA0);
	mutex_lock(&p->mutex);
	ret = kfd_criu_traps_snapshot(p, &img);
	mutex_unlock(&p->mutex);
	KUNIT_EXPECT_EQ(test, ret, -EOPNOTSUPP);
	KUNIT_EXPECT_NULL(test, img.traps);
	KUNIT_EXPECT_EQ(test, img.num_traps, 0);

	/* A process without GPUs has nothing to dump */
	p->n_pdds = 0;
	mutex_lock(&p->mutex);
	KUNIT_EXPECT_EQ(test, kfd_criu_traps_snapshot(p, &img), 0);
	mutex_unlock(&p->mutex);
	KUNIT_EXPECT_NULL(test, img.traps);
}

/* The collector takes one record per GPU at most, of the right size. */
static void tt_test_collect_errors(struct kunit *test)
{
	struct kfd_criu_trap_rec trap = {
		.tba_addr = cpu_to_le64(TT_TBA0),
	};
	struct kfd_criu_record rec = {
		.type = KFD_CRIU_REC_TRAP_HANDLER,
		.length = sizeof(trap),
	};
	struct kfd_criu_traps_image img = {};
	u32 i;

	rec.length--;
	KUNIT_EXPECT_EQ(test, kfd_criu_traps_collect(&img, &rec, &trap, 1),
			-EINVAL);
	rec.length++;
	rec.type = KFD_CRIU_REC_SVM_RANGE;
	KUNIT_EXPECT_EQ(test, kfd_criu_traps_collect(&img, &rec, &trap, 1),
			-EINVAL);
	rec.type = KFD_CRIU_REC_TRAP_HANDLER;
	for (i = 0; i < 2; i++)
		KUNIT_EXPECT_EQ(test, kfd_criu_traps_collect(&img, &rec, &trap,
							     2), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_traps_collect(&img, &rec, &trap, 2),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, img.num_traps, 2);
	/* Two handlers for GPU 0: the set check refuses them */
	KUNIT_EXPECT_EQ(test, kfd_criu_check_traps(img.traps, img.num_traps, 2),
			-EINVAL);
	img.traps[1].gpu_index = cpu_to_le32(1);
	KUNIT_EXPECT_EQ(test, kfd_criu_check_traps(img.traps, img.num_traps, 2),
			0);
	kfd_criu_traps_image_free(&img);
}

static struct kunit_case kfd_criu_traps_test_cases[] = {
	KUNIT_CASE(tt_test_round_trip),
	KUNIT_CASE(tt_test_snapshot_refuses),
	KUNIT_CASE(tt_test_collect_errors),
	{}
};

static struct kunit_suite kfd_criu_traps_suite = {
	.name = "kfd_criu_traps",
	.test_cases = kfd_criu_traps_test_cases,
};

kunit_test_suite(kfd_criu_traps_suite);
