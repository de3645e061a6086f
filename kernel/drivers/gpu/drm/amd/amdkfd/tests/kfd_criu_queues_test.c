// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 *
 * KUnit tests of the queue part of CRIU image mode that need no GPU: the
 * mapping of a queue's properties to its QUEUE record and back, the
 * collection and validation of QUEUE and QUEUE_STATE records, their
 * stream round trip, the MQD field helpers of the get_dyn_state() and
 * set_dyn_state() ops on zeroed MQD structures, and those ops themselves
 * as each family's MQD manager (v9 with one and two XCCs, v10, v11, v12)
 * provides them, on MQD memory of the test. #included at the bottom of
 * kfd_criu_queues.c, so it reaches its static functions.
 */

#include <kunit/test.h>
#include <linux/unaligned.h>

#include "v9_structs.h"
#include "v10_structs.h"
#include "v11_structs.h"
#include "v12_structs.h"

#define QT_GFX		90402	/* GFX9: the control stack is in the MQD */
#define QT_XCC		2
#define QT_CWSR		0x9000U
#define QT_CTL		0x4000U
#define QT_RING		0x1000U
#define QT_EOP		0x1000U
#define QT_VA		0x7f0000000000ULL
#define QT_SDMA_VA	0x7f0001000000ULL
#define QT_CNTL_OFF	0x3000U
#define QT_STATES	(QT_XCC + 1)
#define QT_BUF_SIZE	(2 * SZ_64K)

static void qt_gpu(struct kfd_criu_gpu_rec *gpu)
{
	memset(gpu, 0, sizeof(*gpu));
	gpu->gpu_id = cpu_to_le32(0x1234);
	gpu->gfx_target_version = cpu_to_le32(QT_GFX);
	gpu->device_id = cpu_to_le32(0x74a1);
	gpu->num_xcc = cpu_to_le32(QT_XCC);
	gpu->vram_size = cpu_to_le64(SZ_1G);
	gpu->cwsr_size = cpu_to_le32(QT_CWSR);
	gpu->ctl_stack_size = cpu_to_le32(QT_CTL);
}

/* An AQL compute queue with EOP buffer, CWSR area, GWS and a CU mask. */
static void qt_compute_queue(struct queue *q, u32 *cu_mask)
{
	struct queue_properties *qp = &q->properties;

	memset(q, 0, sizeof(*q));
	qp->type = KFD_QUEUE_TYPE_COMPUTE;
	qp->format = KFD_QUEUE_FORMAT_AQL;
	qp->queue_id = 1;
	qp->queue_address = QT_VA;
	qp->queue_size = QT_RING;
	qp->priority = 7;
	qp->queue_percent = 100;
	qp->read_ptr = (void __user *)(uintptr_t)(QT_VA + 0x100000);
	qp->write_ptr = (void __user *)(uintptr_t)(QT_VA + 0x100008);
	qp->pm4_target_xcc = 1;
	qp->eop_ring_buffer_address = QT_VA + 0x200000;
	qp->eop_ring_buffer_size = QT_EOP;
	qp->ctx_save_restore_area_address = QT_VA + 0x400000;
	qp->ctx_save_restore_area_size = QT_CWSR;
	qp->ctl_stack_size = QT_CTL;
	q->doorbell_id = 1;
	q->gws = q;
	cu_mask[0] = 0xffff00ff;
	cu_mask[1] = 0x0000ffff;
	q->cu_mask = cu_mask;
	q->cu_mask_count = 64;
}

/* An SDMA queue whose properties carry compute fields it does not use. */
static void qt_sdma_queue(struct queue *q)
{
	struct queue_properties *qp = &q->properties;

	memset(q, 0, sizeof(*q));
	qp->type = KFD_QUEUE_TYPE_SDMA;
	qp->queue_id = 3;
	qp->queue_address = QT_SDMA_VA;
	qp->queue_size = QT_RING;
	qp->read_ptr = (void __user *)(uintptr_t)(QT_SDMA_VA + 0x100000);
	qp->write_ptr = (void __user *)(uintptr_t)(QT_SDMA_VA + 0x100008);
	qp->sdma_engine_id = 1;
	qp->eop_ring_buffer_address = QT_SDMA_VA + 0x200000;
	qp->eop_ring_buffer_size = QT_EOP;
	qp->ctl_stack_size = QT_CTL;
	q->doorbell_id = 0x100;
}

static void qt_test_fill_rec_compute(struct kunit *test)
{
	struct kfd_criu_queue_rec rec;
	struct queue_properties back;
	__le32 cu[KFD_CRIU_CU_MASK_WORDS] = {};
	struct kfd_criu_gpu_rec gpu;
	struct queue *qbuf;
	u32 mask[2];

	qbuf = kunit_kzalloc(test, sizeof(*qbuf), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, qbuf);
	qt_gpu(&gpu);
	qt_compute_queue(qbuf, mask);
	kfd_criu_queue_fill_rec(qbuf, 0, QT_XCC, &rec, cu);

	KUNIT_EXPECT_EQ(test, le32_to_cpu(rec.type), KFD_IOC_QUEUE_TYPE_COMPUTE);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(rec.format), KFD_CRIU_QUEUE_FORMAT_AQL);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(rec.queue_id), 1);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(rec.doorbell_offset), 1);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(rec.gws), 1);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(rec.num_cu_mask), 64);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cu[0]), 0xffff00ff);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cu[1]), 0x0000ffff);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(cu[2]), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(rec.num_xcc), QT_XCC);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(rec.pm4_target_xcc), 1);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(rec.read_ptr_addr), QT_VA + 0x100000);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(rec.sdma_engine_id), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_queue_len(&rec), sizeof(rec) + 8);
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_queue(&rec, &gpu, 1), 0);

	/* Back to what creation takes */
	kfd_criu_queue_props(&rec, &back);
	KUNIT_EXPECT_EQ(test, back.type, qbuf->properties.type);
	KUNIT_EXPECT_EQ(test, back.format, qbuf->properties.format);
	KUNIT_EXPECT_EQ(test, back.queue_address, qbuf->properties.queue_address);
	KUNIT_EXPECT_EQ(test, back.queue_size, qbuf->properties.queue_size);
	KUNIT_EXPECT_EQ(test, back.priority, qbuf->properties.priority);
	KUNIT_EXPECT_EQ(test, back.queue_percent, qbuf->properties.queue_percent);
	KUNIT_EXPECT_EQ(test, back.pm4_target_xcc, qbuf->properties.pm4_target_xcc);
	KUNIT_EXPECT_EQ(test, (uintptr_t)back.read_ptr,
			(uintptr_t)qbuf->properties.read_ptr);
	KUNIT_EXPECT_EQ(test, (uintptr_t)back.write_ptr,
			(uintptr_t)qbuf->properties.write_ptr);
	KUNIT_EXPECT_EQ(test, back.eop_ring_buffer_address,
			qbuf->properties.eop_ring_buffer_address);
	KUNIT_EXPECT_EQ(test, back.eop_ring_buffer_size,
			qbuf->properties.eop_ring_buffer_size);
	KUNIT_EXPECT_EQ(test, back.ctx_save_restore_area_address,
			qbuf->properties.ctx_save_restore_area_address);
	KUNIT_EXPECT_EQ(test, back.ctx_save_restore_area_size,
			qbuf->properties.ctx_save_restore_area_size);
	KUNIT_EXPECT_EQ(test, back.ctl_stack_size, qbuf->properties.ctl_stack_size);

	/* A PM4 queue without mask or GWS */
	qbuf->properties.format = KFD_QUEUE_FORMAT_PM4;
	qbuf->gws = NULL;
	qbuf->cu_mask = NULL;
	kfd_criu_queue_fill_rec(qbuf, 0, QT_XCC, &rec, cu);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(rec.format), KFD_CRIU_QUEUE_FORMAT_PM4);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(rec.gws), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(rec.num_cu_mask), 0);
	kfd_criu_queue_props(&rec, &back);
	KUNIT_EXPECT_EQ(test, back.format, KFD_QUEUE_FORMAT_PM4);

	/* A ring the record cannot hold is refused, not truncated */
	qbuf->properties.queue_size = SZ_4G;
	kfd_criu_queue_fill_rec(qbuf, 0, QT_XCC, &rec, cu);
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_queue(&rec, &gpu, 1), -EINVAL);
}

static void qt_test_fill_rec_sdma(struct kunit *test)
{
	__le32 cu[KFD_CRIU_CU_MASK_WORDS] = {};
	struct kfd_criu_queue_rec rec;
	struct queue_properties back;
	struct kfd_criu_gpu_rec gpu;
	struct queue *qbuf;

	qbuf = kunit_kzalloc(test, sizeof(*qbuf), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, qbuf);
	qt_gpu(&gpu);
	qt_sdma_queue(qbuf);
	kfd_criu_queue_fill_rec(qbuf, 0, 1, &rec, cu);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(rec.type), KFD_IOC_QUEUE_TYPE_SDMA);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(rec.sdma_engine_id), 1);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(rec.doorbell_offset), 0x100);
	/* Compute fields of an SDMA queue's properties stay out */
	KUNIT_EXPECT_EQ(test, le64_to_cpu(rec.eop_base), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(rec.eop_size), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(rec.ctl_stack_size), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_queue(&rec, &gpu, 1), 0);
	kfd_criu_queue_props(&rec, &back);
	KUNIT_EXPECT_EQ(test, back.type, KFD_QUEUE_TYPE_SDMA);
	KUNIT_EXPECT_EQ(test, back.sdma_engine_id, 1);

	qbuf->properties.type = KFD_QUEUE_TYPE_SDMA_XGMI;
	kfd_criu_queue_fill_rec(qbuf, 0, 1, &rec, cu);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(rec.type),
			KFD_IOC_QUEUE_TYPE_SDMA_XGMI);
	kfd_criu_queue_props(&rec, &back);
	KUNIT_EXPECT_EQ(test, back.type, KFD_QUEUE_TYPE_SDMA_XGMI);
}

/* The types the image carries, by the driver's queue type. */
static void qt_test_types(struct kunit *test)
{
	static const struct {
		enum kfd_queue_type type;
		enum kfd_queue_format format;
		int carried;
	} cases[] = {
		{ KFD_QUEUE_TYPE_COMPUTE, KFD_QUEUE_FORMAT_PM4, 0 },
		{ KFD_QUEUE_TYPE_COMPUTE, KFD_QUEUE_FORMAT_AQL, 0 },
		{ KFD_QUEUE_TYPE_SDMA, KFD_QUEUE_FORMAT_PM4, 0 },
		{ KFD_QUEUE_TYPE_SDMA_XGMI, KFD_QUEUE_FORMAT_PM4, 0 },
		{ KFD_QUEUE_TYPE_SDMA_BY_ENG_ID, KFD_QUEUE_FORMAT_PM4,
		  -EOPNOTSUPP },
		{ KFD_QUEUE_TYPE_HIQ, KFD_QUEUE_FORMAT_PM4, -EOPNOTSUPP },
		{ KFD_QUEUE_TYPE_DIQ, KFD_QUEUE_FORMAT_PM4, -EOPNOTSUPP },
	};
	u32 i, ioc;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		ioc = kfd_criu_queue_ioc_type(cases[i].type, cases[i].format,
					      false);
		KUNIT_EXPECT_EQ_MSG(test, kfd_criu_queue_type_carried(ioc),
				    cases[i].carried, "case %u", i);
		KUNIT_EXPECT_STRNEQ(test, kfd_criu_queue_type_name(cases[i].type),
				    "unknown");
	}
	KUNIT_EXPECT_EQ(test, kfd_criu_queue_ioc_type(KFD_QUEUE_TYPE_COMPUTE,
						      KFD_QUEUE_FORMAT_AQL,
						      false),
			KFD_IOC_QUEUE_TYPE_COMPUTE_AQL);
	/* Created by engine id, it has the type of the engine it got */
	for (i = 0; i < 2; i++) {
		ioc = kfd_criu_queue_ioc_type(i ? KFD_QUEUE_TYPE_SDMA_XGMI :
					      KFD_QUEUE_TYPE_SDMA,
					      KFD_QUEUE_FORMAT_PM4, true);
		KUNIT_EXPECT_EQ(test, kfd_criu_queue_type_carried(ioc),
				-EOPNOTSUPP);
	}
}

/**
 * struct qt_image - a valid queue image: a two-XCC compute queue and an
 *	SDMA queue, with their states
 * @gpus: the GPU records: @gpu
 * @gpu: the GPU they are on
 * @img: the records, as a snapshot leaves them
 * @queues: backing of @img.queues
 * @cu_masks: backing of @img.cu_masks
 * @states: backing of @img.states
 */
struct qt_image {
	struct kfd_criu_gpus_image gpus;
	struct kfd_criu_gpu_rec gpu;
	struct kfd_criu_queues_image img;
	struct kfd_criu_queue_rec queues[2];
	__le32 cu_masks[2 * KFD_CRIU_CU_MASK_WORDS];
	struct kfd_criu_queue_state states[QT_STATES];
};

static void *qt_state(struct kunit *test, u32 queue, u32 xcc, bool compute)
{
	struct kfd_criu_queue_state_hdr *hdr;
	struct kfd_criu_queue_dyn *dyn;
	u32 len = compute ? QT_CTL - QT_CNTL_OFF : 0;
	u8 *data;
	u32 i;

	hdr = kunit_kzalloc(test, KFD_CRIU_QUEUE_STATE_FIXED + len, GFP_KERNEL);
	if (!hdr)
		return NULL;
	dyn = (void *)(hdr + 1);
	hdr->queue_index = cpu_to_le32(queue);
	hdr->xcc = cpu_to_le32(xcc);
	hdr->data_len = cpu_to_le32(len);
	if (compute) {
		dyn->rptr = cpu_to_le64(0x40);
		dyn->wptr = cpu_to_le64(0x1040 + xcc * 16);
		dyn->cntl_stack_offset = cpu_to_le32(QT_CNTL_OFF);
		dyn->wg_state_offset = cpu_to_le32(0x5000);
		dyn->eop_rptr = cpu_to_le32(2);
		dyn->eop_wptr = cpu_to_le32(4);
	} else {
		dyn->rptr = cpu_to_le64(0x100);
		dyn->wptr = cpu_to_le64(0x200);
	}
	data = (u8 *)(dyn + 1);
	for (i = 0; i < len; i++)
		data[i] = (u8)(i * 7 + xcc);
	return hdr;
}

static void qt_image(struct kunit *test, struct qt_image *t)
{
	u32 mask[2], xcc;
	struct queue *q;

	memset(t, 0, sizeof(*t));
	q = kunit_kzalloc(test, sizeof(*q), GFP_KERNEL);
	if (!q)
		return;
	qt_gpu(&t->gpu);
	t->gpus.gpus = &t->gpu;
	t->gpus.num_gpus = 1;
	t->gpus.gpus_read = 1;
	qt_compute_queue(q, mask);
	kfd_criu_queue_fill_rec(q, 0, QT_XCC, &t->queues[0], t->cu_masks);
	qt_sdma_queue(q);
	kfd_criu_queue_fill_rec(q, 0, 1, &t->queues[1],
				t->cu_masks + KFD_CRIU_CU_MASK_WORDS);
	for (xcc = 0; xcc < QT_XCC; xcc++) {
		t->states[xcc].payload = qt_state(test, 0, xcc, true);
		t->states[xcc].len = KFD_CRIU_QUEUE_STATE_FIXED + QT_CTL -
				     QT_CNTL_OFF;
	}
	t->states[QT_XCC].payload = qt_state(test, 1, 0, false);
	t->states[QT_XCC].len = KFD_CRIU_QUEUE_STATE_FIXED;
	t->img.queues = t->queues;
	t->img.cu_masks = t->cu_masks;
	t->img.num_queues = 2;
	t->img.queues_read = 2;
	t->img.states = t->states;
	t->img.num_states = QT_STATES;
	t->img.states_read = QT_STATES;
}

/**
 * struct qt_buf - an image stream in memory
 * @io: the codec's view of it
 * @data: the bytes
 * @len: bytes written
 * @pos: bytes read
 */
struct qt_buf {
	struct kfd_criu_image_io io;
	u8 data[QT_BUF_SIZE];
	size_t len;
	size_t pos;
};

static int qt_buf_write(void *ctx, const void *buf, size_t len)
{
	struct qt_buf *b = ctx;

	if (len > sizeof(b->data) - b->len)
		return -ENOSPC;
	memcpy(b->data + b->len, buf, len);
	b->len += len;
	return 0;
}

static int qt_buf_read(void *ctx, void *buf, size_t len)
{
	struct qt_buf *b = ctx;

	if (len > b->len - b->pos)
		return -ENODATA;
	memcpy(buf, b->data + b->pos, len);
	b->pos += len;
	return 0;
}

/* Reads the stream in @b into @out as RESTORE's collector would. */
static int qt_read_back(struct qt_buf *b, const struct qt_image *t,
			struct kfd_criu_queues_image *out, u32 *records)
{
	struct kfd_criu_image_header hdr;
	struct kfd_criu_image_reader r;
	struct kfd_criu_record rec;
	void *buf;
	int ret;

	buf = kmalloc(QT_BUF_SIZE, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	kfd_criu_image_reader_init(&r, &b->io, kfd_criu_v1_records,
				   kfd_criu_v1_num_records);
	ret = kfd_criu_image_read_header(&r, &hdr);
	*records = 0;
	while (!ret) {
		ret = kfd_criu_image_read_record(&r, &rec, buf, QT_BUF_SIZE);
		if (ret || rec.type == KFD_CRIU_REC_END)
			break;
		(*records)++;
		ret = kfd_criu_queues_collect(out, 2, &t->gpus, &rec, buf);
	}
	kfree(buf);
	return ret ? ret : kfd_criu_queues_validate(out, 2, &t->gpus);
}

/* What CHECKPOINT writes, RESTORE collects unchanged; the size is exact. */
static void qt_test_round_trip(struct kunit *test)
{
	struct kfd_criu_queues_image out = {};
	struct kfd_criu_image_writer w;
	struct qt_image *t;
	struct qt_buf *b;
	u64 bytes;
	u32 i, records;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_NOT_NULL(test, b);
	qt_image(test, t);
	KUNIT_ASSERT_EQ(test, kfd_criu_queues_check(&t->img, &t->gpus), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_queues_needed_gpus(&t->img), 1);

	b->io = (struct kfd_criu_image_io){ qt_buf_write, qt_buf_read, b };
	kfd_criu_image_writer_init(&w, &b->io);
	KUNIT_ASSERT_EQ(test, kfd_criu_image_write_header(&w, "test"), 0);
	KUNIT_ASSERT_EQ(test, kfd_criu_queues_write(&w, &t->img), 0);
	/* What kfd_criu_queues_count() adds up for these queues */
	bytes = 2 * (KFD_CRIU_RECORD_OVERHEAD + sizeof(t->queues[0])) +
		2 * sizeof(__le32) +
		QT_STATES * (KFD_CRIU_RECORD_OVERHEAD +
			     KFD_CRIU_QUEUE_STATE_FIXED) +
		QT_XCC * (QT_CTL - QT_CNTL_OFF);
	KUNIT_EXPECT_EQ(test, b->len,
			sizeof(struct kfd_criu_image_header) + bytes);
	KUNIT_ASSERT_EQ(test, kfd_criu_image_write_end(&w), 0);

	KUNIT_ASSERT_EQ(test, qt_read_back(b, t, &out, &records), 0);
	KUNIT_EXPECT_EQ(test, records, 2 + QT_STATES);
	KUNIT_ASSERT_EQ(test, out.num_queues, 2);
	KUNIT_EXPECT_MEMEQ(test, out.queues, t->queues, sizeof(t->queues));
	KUNIT_EXPECT_MEMEQ(test, out.cu_masks, t->cu_masks,
			   sizeof(t->cu_masks));
	KUNIT_ASSERT_EQ(test, out.num_states, QT_STATES);
	for (i = 0; i < QT_STATES; i++) {
		KUNIT_ASSERT_EQ(test, out.states[i].len, t->states[i].len);
		KUNIT_EXPECT_MEMEQ(test, out.states[i].payload,
				   t->states[i].payload, t->states[i].len);
	}
	kfd_criu_queues_image_free(&out);
}

/* A record fed to the collector, with the image's GPU. */
static int qt_collect(struct kfd_criu_queues_image *img,
		      const struct qt_image *t, u32 num_queues, u32 type,
		      const void *payload, u32 len)
{
	struct kfd_criu_record rec = { .type = type, .length = len };

	return kfd_criu_queues_collect(img, num_queues, &t->gpus, &rec,
				       payload);
}

static void qt_test_collect_errors(struct kunit *test)
{
	struct kfd_criu_queues_image img = {};
	struct {
		struct kfd_criu_queue_rec rec;
		__le32 cu[KFD_CRIU_CU_MASK_WORDS + 1];
	} big;
	struct qt_image *t;
	u32 qlen, slen;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	qt_image(test, t);
	qlen = kfd_criu_queue_len(&t->queues[0]);
	slen = t->states[0].len;

	/* COUNTS announced no queues */
	KUNIT_EXPECT_EQ(test, qt_collect(&img, t, 0, KFD_CRIU_REC_QUEUE,
					 &t->queues[0], qlen), -EINVAL);
	kfd_criu_queues_image_free(&img);
	/* A length that does not match the CU mask */
	KUNIT_EXPECT_EQ(test, qt_collect(&img, t, 2, KFD_CRIU_REC_QUEUE,
					 &t->queues[0], qlen - 4), -EINVAL);
	KUNIT_EXPECT_EQ(test, qt_collect(&img, t, 2, KFD_CRIU_REC_QUEUE,
					 &t->queues[0], 8), -EINVAL);
	/* A CU mask longer than the uAPI allows */
	big.rec = t->queues[0];
	big.rec.num_cu_mask = cpu_to_le32(KFD_CRIU_MAX_CU_MASK_BITS + 32);
	KUNIT_EXPECT_EQ(test, qt_collect(&img, t, 2, KFD_CRIU_REC_QUEUE, &big,
					 sizeof(big)), -EINVAL);
	kfd_criu_queues_image_free(&img);

	/* A state before all queues are in */
	KUNIT_EXPECT_EQ(test, qt_collect(&img, t, 2, KFD_CRIU_REC_QUEUE,
					 &t->queues[0], qlen), 0);
	KUNIT_EXPECT_EQ(test, qt_collect(&img, t, 2, KFD_CRIU_REC_QUEUE_STATE,
					 t->states[0].payload, slen), -EINVAL);
	KUNIT_EXPECT_EQ(test, qt_collect(&img, t, 2, KFD_CRIU_REC_QUEUE,
					 &t->queues[1],
					 kfd_criu_queue_len(&t->queues[1])), 0);
	/* A third queue */
	KUNIT_EXPECT_EQ(test, qt_collect(&img, t, 2, KFD_CRIU_REC_QUEUE,
					 &t->queues[1],
					 kfd_criu_queue_len(&t->queues[1])),
			-EINVAL);
	/* States out of order, then complete but for the last */
	KUNIT_EXPECT_EQ(test, qt_collect(&img, t, 2, KFD_CRIU_REC_QUEUE_STATE,
					 t->states[1].payload, slen), -EINVAL);
	KUNIT_EXPECT_EQ(test, qt_collect(&img, t, 2, KFD_CRIU_REC_QUEUE_STATE,
					 t->states[0].payload, slen - 4),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, qt_collect(&img, t, 2, KFD_CRIU_REC_QUEUE_STATE,
					 t->states[0].payload, slen), 0);
	KUNIT_EXPECT_EQ(test, qt_collect(&img, t, 2, KFD_CRIU_REC_QUEUE_STATE,
					 t->states[1].payload, slen), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_queues_validate(&img, 2, &t->gpus),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, qt_collect(&img, t, 2, KFD_CRIU_REC_QUEUE_STATE,
					 t->states[2].payload,
					 t->states[2].len), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_queues_validate(&img, 2, &t->gpus), 0);
	/* Nothing after the last state, and COUNTS must agree */
	KUNIT_EXPECT_EQ(test, qt_collect(&img, t, 2, KFD_CRIU_REC_QUEUE_STATE,
					 t->states[2].payload,
					 t->states[2].len), -EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_queues_validate(&img, 3, &t->gpus),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_queues_validate(&img, 0, &t->gpus),
			-EINVAL);
	kfd_criu_queues_image_free(&img);
	KUNIT_EXPECT_EQ(test, kfd_criu_queues_validate(&img, 0, &t->gpus), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_queues_validate(&img, 1, &t->gpus),
			-EINVAL);

	/* Two queues with one id fail as a set, at the first state */
	t->queues[1].queue_id = t->queues[0].queue_id;
	KUNIT_EXPECT_EQ(test, qt_collect(&img, t, 2, KFD_CRIU_REC_QUEUE,
					 &t->queues[0], qlen), 0);
	KUNIT_EXPECT_EQ(test, qt_collect(&img, t, 2, KFD_CRIU_REC_QUEUE,
					 &t->queues[1],
					 kfd_criu_queue_len(&t->queues[1])), 0);
	KUNIT_EXPECT_LT(test, qt_collect(&img, t, 2, KFD_CRIU_REC_QUEUE_STATE,
					 t->states[0].payload, slen), 0);
	kfd_criu_queues_image_free(&img);
}

/* A v9 compute MQD's regs, with CWSR as @cwsr says. */
static void qt_cp_regs(struct v9_mqd *m, struct kfd_mqd_cp_dyn *regs,
		       bool cwsr)
{
	regs->pq_rptr = &m->cp_hqd_pq_rptr;
	regs->pq_wptr_lo = &m->cp_hqd_pq_wptr_lo;
	regs->pq_wptr_hi = &m->cp_hqd_pq_wptr_hi;
	regs->cntl_stack_offset = &m->cp_hqd_cntl_stack_offset;
	regs->wg_state_offset = &m->cp_hqd_wg_state_offset;
	regs->eop_rptr = &m->cp_hqd_eop_rptr;
	regs->eop_wptr = &m->cp_hqd_eop_wptr;
	regs->eop_rptr_mask = 0x1fff;
	regs->eop_wptr_mask = 0x1fff;
	regs->cwsr = cwsr;
}

static void qt_test_mqd_cp_dyn(struct kunit *test)
{
	struct kfd_criu_queue_dyn dyn = {}, back;
	struct kfd_mqd_cp_dyn regs;
	struct queue *qbuf;
	struct v9_mqd *m;
	u32 mask[2];

	m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	qbuf = kunit_kzalloc(test, sizeof(*qbuf), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);
	KUNIT_ASSERT_NOT_NULL(test, qbuf);
	qt_compute_queue(qbuf, mask);
	qt_cp_regs(m, &regs, true);
	dyn.rptr = cpu_to_le64(0x40);
	dyn.wptr = cpu_to_le64(0x123456789040ULL);
	dyn.cntl_stack_offset = cpu_to_le32(QT_CNTL_OFF);
	dyn.wg_state_offset = cpu_to_le32(0x5000);
	dyn.eop_rptr = cpu_to_le32(2);
	dyn.eop_wptr = cpu_to_le32(4);
	/* Bits of the EOP registers beside the pointers stay */
	m->cp_hqd_eop_rptr = 0x40000000;
	m->cp_hqd_eop_wptr = 0x3fff8000;
	m->cp_hqd_pq_control = 0xabcd;

	kfd_mqd_set_cp_dyn(&regs, &qbuf->properties, &dyn);
	KUNIT_EXPECT_EQ(test, m->cp_hqd_pq_rptr, 0x40);
	KUNIT_EXPECT_EQ(test, m->cp_hqd_pq_wptr_lo, 0x56789040);
	KUNIT_EXPECT_EQ(test, m->cp_hqd_pq_wptr_hi, 0x1234);
	KUNIT_EXPECT_EQ(test, m->cp_hqd_cntl_stack_offset, QT_CNTL_OFF);
	KUNIT_EXPECT_EQ(test, m->cp_hqd_wg_state_offset, 0x5000);
	KUNIT_EXPECT_EQ(test, m->cp_hqd_eop_rptr, 0x40000002);
	KUNIT_EXPECT_EQ(test, m->cp_hqd_eop_wptr, 0x3fff8004);
	KUNIT_EXPECT_EQ(test, m->cp_hqd_pq_control, 0xabcd);
	kfd_mqd_get_cp_dyn(&regs, &qbuf->properties, &back);
	KUNIT_EXPECT_MEMEQ(test, &back, &dyn, sizeof(dyn));

	/* Without CWSR area and EOP buffer only the ring pointers move */
	memset(m, 0, sizeof(*m));
	m->cp_hqd_cntl_stack_offset = QT_CTL;
	qbuf->properties.eop_ring_buffer_address = 0;
	qbuf->properties.eop_ring_buffer_size = 0;
	qt_cp_regs(m, &regs, false);
	kfd_mqd_set_cp_dyn(&regs, &qbuf->properties, &dyn);
	KUNIT_EXPECT_EQ(test, m->cp_hqd_pq_rptr, 0x40);
	KUNIT_EXPECT_EQ(test, m->cp_hqd_cntl_stack_offset, QT_CTL);
	KUNIT_EXPECT_EQ(test, m->cp_hqd_wg_state_offset, 0);
	KUNIT_EXPECT_EQ(test, m->cp_hqd_eop_rptr, 0);
	kfd_mqd_get_cp_dyn(&regs, &qbuf->properties, &back);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(back.cntl_stack_offset), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(back.eop_wptr), 0);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(back.wptr), 0x123456789040ULL);
}

static void qt_test_mqd_sdma_dyn(struct kunit *test)
{
	struct kfd_criu_queue_dyn dyn = {}, back;
	struct kfd_mqd_sdma_dyn regs;
	struct v10_sdma_mqd *m;

	m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);
	regs.rb_rptr = &m->sdmax_rlcx_rb_rptr;
	regs.rb_rptr_hi = &m->sdmax_rlcx_rb_rptr_hi;
	regs.rb_wptr = &m->sdmax_rlcx_rb_wptr;
	regs.rb_wptr_hi = &m->sdmax_rlcx_rb_wptr_hi;
	dyn.rptr = cpu_to_le64(0x100000100ULL);
	dyn.wptr = cpu_to_le64(0x100000200ULL);
	m->sdmax_rlcx_rb_cntl = 0x55;

	kfd_mqd_set_sdma_dyn(&regs, &dyn);
	KUNIT_EXPECT_EQ(test, m->sdmax_rlcx_rb_rptr, 0x100);
	KUNIT_EXPECT_EQ(test, m->sdmax_rlcx_rb_rptr_hi, 1);
	KUNIT_EXPECT_EQ(test, m->sdmax_rlcx_rb_wptr, 0x200);
	KUNIT_EXPECT_EQ(test, m->sdmax_rlcx_rb_wptr_hi, 1);
	KUNIT_EXPECT_EQ(test, m->sdmax_rlcx_rb_cntl, 0x55);
	kfd_mqd_get_sdma_dyn(&regs, &back);
	KUNIT_EXPECT_MEMEQ(test, &back, &dyn, sizeof(dyn));
}

/*
 * The MQD managers of each family, built by their real constructors, and
 * the offsets of the fields their get_dyn_state()/set_dyn_state() ops
 * must use, named here from the register each field stands for. A wrong
 * mapping in a family's get_dyn_regs() shows as a field of the wrong
 * name changing.
 */
enum qt_cp_field {
	QT_PQ_RPTR,
	QT_PQ_WPTR_LO,
	QT_PQ_WPTR_HI,
	QT_CNTL_STACK_OFFSET,
	QT_WG_STATE_OFFSET,
	QT_EOP_RPTR,
	QT_EOP_WPTR,
	QT_CP_FIELDS,
};

enum qt_sdma_field {
	QT_RB_RPTR,
	QT_RB_RPTR_HI,
	QT_RB_WPTR,
	QT_RB_WPTR_HI,
	QT_SDMA_FIELDS,
};

#define QT_CP_OFFSETS(type) {						\
	offsetof(type, cp_hqd_pq_rptr),					\
	offsetof(type, cp_hqd_pq_wptr_lo),				\
	offsetof(type, cp_hqd_pq_wptr_hi),				\
	offsetof(type, cp_hqd_cntl_stack_offset),			\
	offsetof(type, cp_hqd_wg_state_offset),				\
	offsetof(type, cp_hqd_eop_rptr),				\
	offsetof(type, cp_hqd_eop_wptr) }

#define QT_SDMA_OFFSETS(type) {						\
	offsetof(type, sdmax_rlcx_rb_rptr),				\
	offsetof(type, sdmax_rlcx_rb_rptr_hi),				\
	offsetof(type, sdmax_rlcx_rb_wptr),				\
	offsetof(type, sdmax_rlcx_rb_wptr_hi) }

/**
 * struct qt_family - one MQD family as image mode meets it
 * @name: for the case's name
 * @init: the family's MQD manager constructor
 * @gc_version: the GC IP version the fake node reports
 * @num_xcc: XCCs of the fake node
 * @cp_size: bytes of the family's compute MQD
 * @sdma_size: bytes of its SDMA MQD
 * @cp_off: offsets of the compute fields, by &enum qt_cp_field
 * @sdma_off: offsets of the SDMA fields, by &enum qt_sdma_field
 * @ctl_in_mqd: the control stack follows each XCC's MQD (GFX9)
 */
struct qt_family {
	const char *name;
	struct mqd_manager *(*init)(enum KFD_MQD_TYPE type,
				    struct kfd_node *dev);
	u32 gc_version;
	u32 num_xcc;
	size_t cp_size;
	size_t sdma_size;
	size_t cp_off[QT_CP_FIELDS];
	size_t sdma_off[QT_SDMA_FIELDS];
	bool ctl_in_mqd;
};

static const struct qt_family qt_families[] = {
	{ "v9 gfx9.4.2", mqd_manager_init_v9, IP_VERSION(9, 4, 2), 1,
	  sizeof(struct v9_mqd), sizeof(struct v9_sdma_mqd),
	  QT_CP_OFFSETS(struct v9_mqd), QT_SDMA_OFFSETS(struct v9_sdma_mqd),
	  true },
	{ "v9 gfx9.4.3 two XCCs", mqd_manager_init_v9, IP_VERSION(9, 4, 3), 2,
	  sizeof(struct v9_mqd), sizeof(struct v9_sdma_mqd),
	  QT_CP_OFFSETS(struct v9_mqd), QT_SDMA_OFFSETS(struct v9_sdma_mqd),
	  true },
	{ "v10 gfx10.3.0", mqd_manager_init_v10, IP_VERSION(10, 3, 0), 1,
	  sizeof(struct v10_compute_mqd), sizeof(struct v10_sdma_mqd),
	  QT_CP_OFFSETS(struct v10_compute_mqd),
	  QT_SDMA_OFFSETS(struct v10_sdma_mqd), false },
	{ "v11 gfx11.0.0", mqd_manager_init_v11, IP_VERSION(11, 0, 0), 1,
	  sizeof(struct v11_compute_mqd), sizeof(struct v11_sdma_mqd),
	  QT_CP_OFFSETS(struct v11_compute_mqd),
	  QT_SDMA_OFFSETS(struct v11_sdma_mqd), false },
	{ "v12 gfx12.0.0", mqd_manager_init_v12, IP_VERSION(12, 0, 0), 1,
	  sizeof(struct v12_compute_mqd), sizeof(struct v12_sdma_mqd),
	  QT_CP_OFFSETS(struct v12_compute_mqd),
	  QT_SDMA_OFFSETS(struct v12_sdma_mqd), false },
};

static void qt_family_desc(const struct qt_family *f, char *desc)
{
	strscpy(desc, f->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(qt_family, qt_families, qt_family_desc);

#define QT_FILL		0xa5	/* what init_mqd() left, for the test */
#define QT_DYN_CTL	0x2000U	/* the queue's control stack size */
#define QT_DYN_OFF	0x1800U	/* where its live part starts */

static void qt_free_adev(void *adev)
{
	kvfree(adev);
}

static void qt_free_mm(void *mm)
{
	kfree(mm);
}

/* A node of @f's family with CWSR on; only what the MQD managers read */
static struct kfd_node *qt_family_node(struct kunit *test,
				       const struct qt_family *f)
{
	struct amdgpu_device *adev;
	struct kfd_node *node;

	node = kunit_kzalloc(test, sizeof(*node), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, node);
	node->kfd = kunit_kzalloc(test, sizeof(*node->kfd), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, node->kfd);
	adev = kvzalloc(sizeof(*adev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, adev);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, qt_free_adev,
							adev), 0);
	adev->ip_versions[GC_HWIP][0] = f->gc_version;
	node->adev = adev;
	node->kfd->cwsr_enabled = true;
	node->xcc_mask = GENMASK(f->num_xcc - 1, 0);
	return node;
}

static struct mqd_manager *qt_family_mm(struct kunit *test,
					const struct qt_family *f,
					enum KFD_MQD_TYPE type)
{
	struct mqd_manager *mm = f->init(type, qt_family_node(test, f));

	KUNIT_ASSERT_NOT_NULL(test, mm);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, qt_free_mm, mm),
			0);
	KUNIT_ASSERT_NOT_NULL(test, mm->get_dyn_state);
	KUNIT_ASSERT_NOT_NULL(test, mm->set_dyn_state);
	return mm;
}

static u32 qt_reg(const void *mqd, size_t off)
{
	u32 v;

	memcpy(&v, mqd + off, sizeof(v));
	return v;
}

/* Whether byte @i of a @size-byte MQD lies in one of its @n fields */
static bool qt_in_fields(size_t i, const size_t *off, unsigned int n)
{
	unsigned int f;

	for (f = 0; f < n; f++)
		if (i >= off[f] && i < off[f] + sizeof(u32))
			return true;
	return false;
}

/* Bytes of @buf that differ from QT_FILL outside @off and [@lo, @hi) */
static unsigned int qt_stray_bytes(const u8 *buf, size_t size,
				   const size_t *off, unsigned int n,
				   size_t lo, size_t hi)
{
	unsigned int stray = 0;
	size_t i;

	for (i = 0; i < size; i++)
		if (buf[i] != QT_FILL && !qt_in_fields(i, off, n) &&
		    (i < lo || i >= hi))
			stray++;
	return stray;
}

static void qt_family_dyn(struct kfd_criu_queue_dyn *dyn, u32 xcc)
{
	memset(dyn, 0, sizeof(*dyn));
	dyn->rptr = cpu_to_le64(0x40 + xcc);
	dyn->wptr = cpu_to_le64(0x123456789040ULL + xcc * 16);
	dyn->cntl_stack_offset = cpu_to_le32(QT_DYN_OFF);
	dyn->wg_state_offset = cpu_to_le32(0x5000 + xcc * 8);
	dyn->eop_rptr = cpu_to_le32(0x1abc + xcc);
	dyn->eop_wptr = cpu_to_le32(0x1cba + xcc);
}

/* The pointer field of the EOP registers in every family (13 bits) */
#define QT_EOP_MASK	0x1fffU
#define QT_FILL32	0xa5a5a5a5U

/* Checks the fields of one XCC's MQD at @m after set_dyn_state(@dyn) */
static void qt_check_cp_fields(struct kunit *test, const struct qt_family *f,
			       const void *m,
			       const struct kfd_criu_queue_dyn *dyn)
{
	const size_t *off = f->cp_off;
	u64 wptr = le64_to_cpu(dyn->wptr);

	KUNIT_EXPECT_EQ(test, qt_reg(m, off[QT_PQ_RPTR]),
			lower_32_bits(le64_to_cpu(dyn->rptr)));
	KUNIT_EXPECT_EQ(test, qt_reg(m, off[QT_PQ_WPTR_LO]),
			lower_32_bits(wptr));
	KUNIT_EXPECT_EQ(test, qt_reg(m, off[QT_PQ_WPTR_HI]),
			upper_32_bits(wptr));
	KUNIT_EXPECT_EQ(test, qt_reg(m, off[QT_CNTL_STACK_OFFSET]),
			le32_to_cpu(dyn->cntl_stack_offset));
	KUNIT_EXPECT_EQ(test, qt_reg(m, off[QT_WG_STATE_OFFSET]),
			le32_to_cpu(dyn->wg_state_offset));
	/* The pointer field only; the register's other fields stay */
	KUNIT_EXPECT_EQ(test, qt_reg(m, off[QT_EOP_RPTR]),
			(QT_FILL32 & ~QT_EOP_MASK) |
			(le32_to_cpu(dyn->eop_rptr) & QT_EOP_MASK));
	KUNIT_EXPECT_EQ(test, qt_reg(m, off[QT_EOP_WPTR]),
			(QT_FILL32 & ~QT_EOP_MASK) |
			(le32_to_cpu(dyn->eop_wptr) & QT_EOP_MASK));
}

/*
 * A compute queue's MQD of each family through the real ops: each XCC's
 * MQD takes exactly the whitelisted fields and, on GFX9, the live part of
 * its control stack; get_dyn_state() reads back what set_dyn_state()
 * wrote; an XCC the node lacks and a control stack that does not fit
 * are refused before anything is written.
 */
static void qt_test_family_cp_dyn(struct kunit *test)
{
	const struct qt_family *f = test->param_value;
	struct mqd_manager *mm = qt_family_mm(test, f, KFD_MQD_TYPE_CP);
	u32 ctl_len = f->ctl_in_mqd ? QT_DYN_CTL - QT_DYN_OFF : 0;
	struct kfd_criu_queue_dyn dyn, back;
	size_t stride, size, lo, hi;
	u32 mask[2], xcc, len;
	struct queue *q;
	u8 *mqd, *ctl;

	q = kunit_kzalloc(test, sizeof(*q), GFP_KERNEL);
	ctl = kunit_kmalloc(test, QT_DYN_CTL, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, q);
	KUNIT_ASSERT_NOT_NULL(test, ctl);
	qt_compute_queue(q, mask);
	q->properties.ctl_stack_size = QT_DYN_CTL;
	stride = mm->mqd_stride(mm, &q->properties);
	KUNIT_ASSERT_GE(test, stride, f->cp_size);
	size = stride * f->num_xcc;
	mqd = kunit_kmalloc(test, size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mqd);
	memset(mqd, QT_FILL, size);

	for (xcc = 0; xcc < f->num_xcc; xcc++) {
		qt_family_dyn(&dyn, xcc);
		memset(ctl, 0x30 + xcc, ctl_len);
		KUNIT_ASSERT_EQ(test, mm->set_dyn_state(mm, mqd, &q->properties,
							xcc, &dyn, ctl,
							ctl_len), 0);
	}
	for (xcc = 0; xcc < f->num_xcc; xcc++) {
		u8 *m = mqd + stride * xcc;

		qt_family_dyn(&dyn, xcc);
		qt_check_cp_fields(test, f, m, &dyn);
		lo = f->ctl_in_mqd ? PAGE_SIZE + QT_DYN_OFF : 0;
		hi = f->ctl_in_mqd ? PAGE_SIZE + QT_DYN_CTL : 0;
		KUNIT_EXPECT_EQ(test, qt_stray_bytes(m, stride, f->cp_off,
						     QT_CP_FIELDS, lo, hi), 0);
		memset(ctl, 0, QT_DYN_CTL);
		KUNIT_ASSERT_EQ(test, mm->get_dyn_state(mm, mqd, &q->properties,
							xcc, &back, ctl,
							&len), 0);
		KUNIT_EXPECT_MEMEQ(test, &back, &dyn, sizeof(dyn));
		KUNIT_EXPECT_EQ(test, len, ctl_len);
		if (ctl_len) {
			KUNIT_EXPECT_MEMEQ(test, ctl, m + lo, ctl_len);
			KUNIT_EXPECT_EQ(test, ctl[ctl_len - 1], 0x30 + xcc);
		}
	}

	/* An EOP pointer wider than the field is cut to it, both ways */
	memset(mqd, QT_FILL, size);
	qt_family_dyn(&dyn, 0);
	dyn.eop_rptr = cpu_to_le32(U32_MAX);
	KUNIT_ASSERT_EQ(test, mm->set_dyn_state(mm, mqd, &q->properties, 0,
						&dyn, ctl, ctl_len), 0);
	KUNIT_EXPECT_EQ(test, qt_reg(mqd, f->cp_off[QT_EOP_RPTR]), QT_FILL32 |
			QT_EOP_MASK);
	KUNIT_ASSERT_EQ(test, mm->get_dyn_state(mm, mqd, &q->properties, 0,
						&back, NULL, &len), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(back.eop_rptr), QT_EOP_MASK);

	/* Refusals write nothing */
	memset(mqd, QT_FILL, size);
	qt_family_dyn(&dyn, 0);
	KUNIT_EXPECT_EQ(test, mm->set_dyn_state(mm, mqd, &q->properties,
						f->num_xcc, &dyn, ctl, ctl_len),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mm->get_dyn_state(mm, mqd, &q->properties,
						f->num_xcc, &back, NULL, &len),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, mm->set_dyn_state(mm, mqd, &q->properties, 0,
						&dyn, ctl, ctl_len + 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, qt_stray_bytes(mqd, size, NULL, 0, 0, 0), 0);

	/*
	 * On GFX9 the control stack offset is the CP's, read back from the
	 * MQD: one past the control stack must not be copied from, and one
	 * at its end leaves nothing to copy.
	 */
	if (!f->ctl_in_mqd)
		return;
	KUNIT_EXPECT_EQ(test, mm->get_dyn_state(mm, mqd, &q->properties, 0,
						&back, ctl, &len), -EINVAL);
	put_unaligned_le32(QT_DYN_CTL, mqd + f->cp_off[QT_CNTL_STACK_OFFSET]);
	KUNIT_EXPECT_EQ(test, mm->get_dyn_state(mm, mqd, &q->properties, 0,
						&back, ctl, &len), 0);
	KUNIT_EXPECT_EQ(test, len, 0);
}

/* An SDMA queue's MQD of each family: the four ring pointers only */
static void qt_test_family_sdma_dyn(struct kunit *test)
{
	const struct qt_family *f = test->param_value;
	struct mqd_manager *mm = qt_family_mm(test, f, KFD_MQD_TYPE_SDMA);
	struct kfd_criu_queue_dyn dyn = {}, back;
	struct queue *q;
	u8 *mqd;
	u32 len;

	q = kunit_kzalloc(test, sizeof(*q), GFP_KERNEL);
	mqd = kunit_kmalloc(test, f->sdma_size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, q);
	KUNIT_ASSERT_NOT_NULL(test, mqd);
	qt_sdma_queue(q);
	memset(mqd, QT_FILL, f->sdma_size);
	dyn.rptr = cpu_to_le64(0x100000100ULL);
	dyn.wptr = cpu_to_le64(0x200000200ULL);

	KUNIT_ASSERT_EQ(test, mm->set_dyn_state(mm, mqd, &q->properties, 0,
						&dyn, NULL, 0), 0);
	KUNIT_EXPECT_EQ(test, qt_reg(mqd, f->sdma_off[QT_RB_RPTR]), 0x100);
	KUNIT_EXPECT_EQ(test, qt_reg(mqd, f->sdma_off[QT_RB_RPTR_HI]), 1);
	KUNIT_EXPECT_EQ(test, qt_reg(mqd, f->sdma_off[QT_RB_WPTR]), 0x200);
	KUNIT_EXPECT_EQ(test, qt_reg(mqd, f->sdma_off[QT_RB_WPTR_HI]), 2);
	KUNIT_EXPECT_EQ(test, qt_stray_bytes(mqd, f->sdma_size, f->sdma_off,
					     QT_SDMA_FIELDS, 0, 0), 0);
	KUNIT_ASSERT_EQ(test, mm->get_dyn_state(mm, mqd, &q->properties, 0,
						&back, NULL, &len), 0);
	KUNIT_EXPECT_MEMEQ(test, &back, &dyn, sizeof(dyn));
	KUNIT_EXPECT_EQ(test, len, 0);

	memset(mqd, QT_FILL, f->sdma_size);
	KUNIT_EXPECT_EQ(test, mm->set_dyn_state(mm, mqd, &q->properties, 1,
						&dyn, NULL, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, mm->set_dyn_state(mm, mqd, &q->properties, 0,
						&dyn, mqd, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, mm->get_dyn_state(mm, mqd, &q->properties, 1,
						&back, NULL, &len), -EINVAL);
	KUNIT_EXPECT_EQ(test, qt_stray_bytes(mqd, f->sdma_size, NULL, 0, 0, 0),
			0);
}

static struct kunit_case kfd_criu_queues_test_cases[] = {
	KUNIT_CASE(qt_test_fill_rec_compute),
	KUNIT_CASE(qt_test_fill_rec_sdma),
	KUNIT_CASE(qt_test_types),
	KUNIT_CASE(qt_test_round_trip),
	KUNIT_CASE(qt_test_collect_errors),
	KUNIT_CASE(qt_test_mqd_cp_dyn),
	KUNIT_CASE(qt_test_mqd_sdma_dyn),
	KUNIT_CASE_PARAM(qt_test_family_cp_dyn, qt_family_gen_params),
	KUNIT_CASE_PARAM(qt_test_family_sdma_dyn, qt_family_gen_params),
	{}
};

static struct kunit_suite kfd_criu_queues_suite = {
	.name = "kfd_criu_queues",
	.test_cases = kfd_criu_queues_test_cases,
};

kunit_test_suite(kfd_criu_queues_suite);
