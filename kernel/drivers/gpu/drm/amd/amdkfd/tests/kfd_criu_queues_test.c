// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * KUnit tests of the queue part of CRIU image mode that need no GPU: the
 * mapping of a queue's properties to its QUEUE record and back, the
 * collection and validation of QUEUE and QUEUE_STATE records, their
 * stream round trip, the MQD field helpers of the get_dyn_state() and
 * set_dyn_state() ops on zeroed MQD structures, and those ops themselves
 * as each family's MQD manager (v9 with one and two XCCs, v10, v11, v12,
 * v12_1 with two XCCs) provides them, on MQD memory of the test.
 * #included at the bottom of kfd_criu_queues.c, so it reaches its static
 * functions.
 */

#include <kunit/test-bug.h>
#include <kunit/test.h>
#include <linux/unaligned.h>

#include "kfd_criu_test_stream.h"
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
	};
	u32 i, ioc;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		ioc = kfd_criu_queue_ioc_type(cases[i].type, cases[i].format);
		KUNIT_EXPECT_EQ_MSG(test, kfd_criu_queue_type_carried(ioc),
				    cases[i].carried, "case %u", i);
		KUNIT_EXPECT_STRNEQ(test, kfd_criu_queue_type_name(cases[i].type),
				    "unknown");
	}
	KUNIT_EXPECT_EQ(test, kfd_criu_queue_ioc_type(KFD_QUEUE_TYPE_COMPUTE,
						      KFD_QUEUE_FORMAT_AQL),
			KFD_IOC_QUEUE_TYPE_COMPUTE_AQL);
	/*
	 * Created by engine id (ROCm's copy queues on MI200 and MI300), it
	 * has the type of the engine it got and is carried as that
	 */
	for (i = 0; i < 2; i++) {
		ioc = kfd_criu_queue_ioc_type(i ? KFD_QUEUE_TYPE_SDMA_XGMI :
					      KFD_QUEUE_TYPE_SDMA,
					      KFD_QUEUE_FORMAT_PM4);
		KUNIT_EXPECT_EQ(test, ioc, i ? KFD_IOC_QUEUE_TYPE_SDMA_XGMI :
					   KFD_IOC_QUEUE_TYPE_SDMA);
		KUNIT_EXPECT_EQ(test, kfd_criu_queue_type_carried(ioc), 0);
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

/* Reads the stream of @io into @out as RESTORE's collector would. */
static int qt_read_back(struct kfd_criu_image_io *io,
			const struct kfd_criu_gpus_image *gpus, u32 num_queues,
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
	kfd_criu_image_reader_init(&r, io, kfd_criu_v1_records,
				   kfd_criu_v1_num_records);
	ret = kfd_criu_image_read_header(&r, &hdr);
	*records = 0;
	while (!ret) {
		ret = kfd_criu_image_read_record(&r, &rec, buf, QT_BUF_SIZE);
		if (ret || rec.type == KFD_CRIU_REC_END)
			break;
		(*records)++;
		ret = kfd_criu_queues_collect(out, num_queues, gpus, &rec, buf);
	}
	kfree(buf);
	return ret ? ret : kfd_criu_queues_validate(out, num_queues, gpus);
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

	KUNIT_ASSERT_EQ(test, qt_read_back(&b->io, &t->gpus, 2, &out, &records),
			0);
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

/* Indices in qt_families[] */
enum qt_family_id {
	QT_GFX942,
	QT_GFX943,
	QT_GFX10,
	QT_GFX11,
	QT_GFX12,
	QT_GFX121,
};

static const struct qt_family qt_families[] = {
	[QT_GFX942] = {
		"v9 gfx9.4.2", mqd_manager_init_v9, IP_VERSION(9, 4, 2), 1,
		sizeof(struct v9_mqd), sizeof(struct v9_sdma_mqd),
		QT_CP_OFFSETS(struct v9_mqd),
		QT_SDMA_OFFSETS(struct v9_sdma_mqd), true
	},
	[QT_GFX943] = {
		"v9 gfx9.4.3 two XCCs", mqd_manager_init_v9, IP_VERSION(9, 4, 3), 2,
		sizeof(struct v9_mqd), sizeof(struct v9_sdma_mqd),
		QT_CP_OFFSETS(struct v9_mqd),
		QT_SDMA_OFFSETS(struct v9_sdma_mqd), true
	},
	[QT_GFX10] = {
		"v10 gfx10.3.0", mqd_manager_init_v10, IP_VERSION(10, 3, 0), 1,
		sizeof(struct v10_compute_mqd), sizeof(struct v10_sdma_mqd),
		QT_CP_OFFSETS(struct v10_compute_mqd),
		QT_SDMA_OFFSETS(struct v10_sdma_mqd), false
	},
	[QT_GFX11] = {
		"v11 gfx11.0.0", mqd_manager_init_v11, IP_VERSION(11, 0, 0), 1,
		sizeof(struct v11_compute_mqd), sizeof(struct v11_sdma_mqd),
		QT_CP_OFFSETS(struct v11_compute_mqd),
		QT_SDMA_OFFSETS(struct v11_sdma_mqd), false
	},
	[QT_GFX12] = {
		"v12 gfx12.0.0", mqd_manager_init_v12, IP_VERSION(12, 0, 0), 1,
		sizeof(struct v12_compute_mqd), sizeof(struct v12_sdma_mqd),
		QT_CP_OFFSETS(struct v12_compute_mqd),
		QT_SDMA_OFFSETS(struct v12_sdma_mqd), false
	},
	[QT_GFX121] = {
		"v12_1 gfx12.1.0 two XCCs", mqd_manager_init_v12_1,
		IP_VERSION(12, 1, 0), 2,
		sizeof(struct v12_1_compute_mqd), sizeof(struct v12_sdma_mqd),
		QT_CP_OFFSETS(struct v12_1_compute_mqd),
		QT_SDMA_OFFSETS(struct v12_sdma_mqd), false
	},
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
	adev = kvzalloc_obj(*adev, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, adev);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, qt_free_adev,
							adev), 0);
	adev->ip_versions[GC_HWIP][0] = f->gc_version;
	node->adev = adev;
	node->kfd->cwsr_enabled = true;
	node->xcc_mask = GENMASK(f->num_xcc - 1, 0);
	return node;
}

static struct mqd_manager *qt_family_mm_on(struct kunit *test,
					   const struct qt_family *f,
					   enum KFD_MQD_TYPE type,
					   struct kfd_node *node)
{
	struct mqd_manager *mm = f->init(type, node);

	KUNIT_ASSERT_NOT_NULL(test, mm);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, qt_free_mm, mm),
			0);
	KUNIT_ASSERT_NOT_NULL(test, mm->get_dyn_state);
	KUNIT_ASSERT_NOT_NULL(test, mm->set_dyn_state);
	return mm;
}

static struct mqd_manager *qt_family_mm(struct kunit *test,
					const struct qt_family *f,
					enum KFD_MQD_TYPE type)
{
	return qt_family_mm_on(test, f, type, qt_family_node(test, f));
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

/*
 * Bytes of @buf that differ from @ref (from QT_FILL without one) outside
 * @off and [@lo, @hi)
 */
static unsigned int qt_stray_from(const u8 *buf, const u8 *ref, size_t size,
				  const size_t *off, unsigned int n,
				  size_t lo, size_t hi)
{
	unsigned int stray = 0;
	size_t i;

	for (i = 0; i < size; i++)
		if (buf[i] != (ref ? ref[i] : QT_FILL) &&
		    !qt_in_fields(i, off, n) && (i < lo || i >= hi))
			stray++;
	return stray;
}

static unsigned int qt_stray_bytes(const u8 *buf, size_t size,
				   const size_t *off, unsigned int n,
				   size_t lo, size_t hi)
{
	return qt_stray_from(buf, NULL, size, off, n, lo, hi);
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

/**
 * struct qt_hdp - what the HDP flushes and invalidations of a test saw
 * @flushes: flushes made
 * @invalidates: read cache invalidations made
 * @stale: flushes made before the MQD held the new state
 * @mqd: the MQD being set
 * @off: offset of a register the state sets
 * @want: the value it gets
 */
struct qt_hdp {
	int flushes;
	int invalidates;
	int stale;
	const u8 *mqd;
	size_t off;
	u32 want;
};

static struct qt_hdp qt_hdp;

static void qt_flush_hdp(struct amdgpu_device *adev, struct amdgpu_ring *ring)
{
	qt_hdp.flushes++;
	if (qt_reg(qt_hdp.mqd, qt_hdp.off) != qt_hdp.want)
		qt_hdp.stale++;
}

static void qt_invalidate_hdp(struct amdgpu_device *adev,
			      struct amdgpu_ring *ring)
{
	qt_hdp.invalidates++;
}

static const struct amdgpu_hdp_funcs qt_hdp_funcs = {
	.flush_hdp = qt_flush_hdp,
	.invalidate_hdp = qt_invalidate_hdp,
};

/*
 * The GC versions whose MQDs 7.3 puts in VRAM (mqd_on_vram()). GC 12.1
 * is not one: its MQD manager takes its MQDs from the GTT sub-allocator.
 */
static bool qt_mqd_in_vram(const struct qt_family *f)
{
	switch (f->gc_version) {
	case IP_VERSION(9, 4, 2):
	case IP_VERSION(9, 4, 3):
	case IP_VERSION(9, 4, 4):
	case IP_VERSION(9, 5, 0):
		return true;
	default:
		return false;
	}
}

/*
 * A compute MQD in VRAM is written through the BAR, behind the HDP:
 * set_dyn_state() flushes it once the state is in, as init_mqd() and
 * restore_mqd() do there, so the CP never reads a stale MQD, and
 * get_dyn_state() invalidates the HDP's read cache before it reads what
 * the CP saved. An MQD in GTT, and one of an APU that keeps its MQDs in
 * GTT, needs neither.
 */
static void qt_test_vram_mqd_flushed(struct kunit *test)
{
	const struct qt_family *f = test->param_value;
	struct kfd_node *node = qt_family_node(test, f);
	struct mqd_manager *mm = qt_family_mm_on(test, f, KFD_MQD_TYPE_CP, node);
	u32 ctl_len = f->ctl_in_mqd ? QT_DYN_CTL - QT_DYN_OFF : 0;
	struct kfd_criu_queue_dyn dyn;
	struct queue *q;
	u8 *mqd, *ctl;
	u32 mask[2], len;

	q = kunit_kzalloc(test, sizeof(*q), GFP_KERNEL);
	ctl = kunit_kzalloc(test, QT_DYN_CTL, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, q);
	KUNIT_ASSERT_NOT_NULL(test, ctl);
	qt_compute_queue(q, mask);
	q->properties.ctl_stack_size = QT_DYN_CTL;
	mqd = kunit_kmalloc(test, mm->mqd_stride(mm, &q->properties) * f->num_xcc,
			    GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mqd);
	memset(mqd, QT_FILL, mm->mqd_stride(mm, &q->properties) * f->num_xcc);
	node->adev->hdp.funcs = &qt_hdp_funcs;

	qt_family_dyn(&dyn, 0);
	qt_hdp = (struct qt_hdp){
		.mqd = mqd,
		.off = f->cp_off[QT_WG_STATE_OFFSET],
		.want = le32_to_cpu(dyn.wg_state_offset),
	};
	KUNIT_ASSERT_EQ(test, mm->set_dyn_state(mm, mqd, &q->properties, 0,
						&dyn, ctl, ctl_len), 0);
	KUNIT_EXPECT_EQ(test, qt_hdp.flushes, qt_mqd_in_vram(f) ? 1 : 0);
	KUNIT_EXPECT_EQ(test, qt_hdp.stale, 0);
	KUNIT_EXPECT_EQ(test, qt_hdp.invalidates, 0);
	KUNIT_ASSERT_EQ(test, mm->get_dyn_state(mm, mqd, &q->properties, 0,
						&dyn, NULL, &len), 0);
	KUNIT_EXPECT_EQ(test, qt_hdp.invalidates, qt_mqd_in_vram(f) ? 1 : 0);
	KUNIT_EXPECT_EQ(test, qt_hdp.flushes, qt_mqd_in_vram(f) ? 1 : 0);

	/* An APU that prefers GTT keeps its MQDs there */
	node->adev->apu_prefer_gtt = true;
	qt_hdp.flushes = 0;
	qt_hdp.invalidates = 0;
	KUNIT_ASSERT_EQ(test, mm->set_dyn_state(mm, mqd, &q->properties, 0,
						&dyn, ctl, ctl_len), 0);
	KUNIT_ASSERT_EQ(test, mm->get_dyn_state(mm, mqd, &q->properties, 0,
						&dyn, NULL, &len), 0);
	KUNIT_EXPECT_EQ(test, qt_hdp.flushes, 0);
	KUNIT_EXPECT_EQ(test, qt_hdp.invalidates, 0);
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

/*
 * A fake queue manager under the snapshot and the restore. The calls that
 * need a GPU's VM, doorbells and hardware queues (the seams at the top of
 * kfd_criu_queues.c) go to the fakes below, which keep a queue as the
 * queue managers do: on its process's queue list, its queue id and
 * doorbell taken, with MQD memory that init_mqd() would have filled
 * (QT_FILL here). Everything else is the real code: kfd_criu_queues.c,
 * pqm_update_mqd() and kfd_dqm_sdma_id_by_doorbell() of the queue
 * managers, pqm_set_gws() and each family's MQD ops on that memory, for
 * two fake GPUs: a GFX 9.4.3 with two XCCs and a GFX11 with MES; for the
 * round trip, the second is in turn a GFX10, a GFX11 and a GFX12. The
 * DQM's update_queue(), which the CU mask and GWS end in, runs the
 * family's update_mqd() on the queue's MQD as the real one does, without
 * the unmap and map around it. The fakes take the buffers as
 * they are: the size checks of kfd_queue_acquire_buffers() against the
 * GPU's topology are not made.
 */
enum qf_step {
	QF_ACQUIRE,
	QF_CREATE,
	QF_UPDATE,
	QF_SET_DYN,
	QF_STEPS,
};

static const char * const qf_step_name[QF_STEPS] = {
	"acquire buffers", "create", "update queue", "set dynamic state",
};

#define QF_GPUS		2
#define QF_GPU_ID	0x4100

/* The family's own set_dyn_state(), which the fake's wraps */
typedef int (*qf_set_dyn_fn)(struct mqd_manager *mm, void *mqd,
			     struct queue_properties *q, u32 xcc,
			     const struct kfd_criu_queue_dyn *dyn,
			     const void *ctl_stack, u32 ctl_stack_len);

/**
 * struct qf_fake - the fake queue manager
 * @calls: calls made, per &enum qf_step
 * @fail_step: the step to fail, or %QF_STEPS for none
 * @fail_at: which call of that step fails (0 for the first)
 * @fail_signal: the signal the failing call sends the calling task
 *	before it fails with -EINTR, or 0 for a call that fails with
 *	@fail_errno
 * @fail_errno: what the failing call returns without a signal, 0 for -EIO
 * @held: holds on queue buffers taken and not given back
 * @live: fake queues alive, of every process
 * @guard_order: update_queue fails the test for a queue whose dynamic
 *	state is installed already. An ordering guard, not a model of the
 *	hardware: the restore must install the state after every update it
 *	makes through the DQM, as update_mqd() may rewrite the MQD (none of
 *	v9-v12 writes the whitelisted registers today, so only this guard
 *	sees the order). Off for what a process does after its restore.
 * @set_dyn: the family's set_dyn_state() of each fake GPU's CP and SDMA
 *	MQD managers, which the fake's calls after counting the step
 * @gpu1: the family of the second fake GPU
 * @cwsr_svm_left: queues created without the SVM range of their CWSR area
 * @cwsr_svm_taken: of those, the ones whose range RESUME took since
 * @max_queues_per_device: the queues each fake GPU may have, of every
 *	process, as the module parameter max_num_of_queues_per_device
 *	limits them
 * @hqds_free: HQDs left for compute queues on fake GPUs without HWS
 */
struct qf_fake {
	unsigned int calls[QF_STEPS];
	enum qf_step fail_step;
	unsigned int fail_at;
	int fail_signal;
	int fail_errno;
	int held;
	unsigned int live;
	bool guard_order;
	qf_set_dyn_fn set_dyn[QF_GPUS][KFD_MQD_TYPE_MAX];
	enum qt_family_id gpu1;
	unsigned int cwsr_svm_left;
	unsigned int cwsr_svm_taken;
	int max_queues_per_device;
	unsigned int hqds_free;
};

static struct qf_fake *qf;

/**
 * struct qf_queue - a queue of the fake queue manager
 * @pqn: its node on its process's queue list
 * @q: the queue
 * @pdd: its GPU
 * @holds: it holds its buffers, which destroying it gives back
 * @hqd: it holds an HQD of its GPU without HWS
 */
struct qf_queue {
	struct process_queue_node pqn;
	struct queue q;
	struct kfd_process_device *pdd;
	bool holds;
	bool hqd;
};

static int qf_step(enum qf_step step)
{
	unsigned int n = qf->calls[step]++;

	if (step != qf->fail_step || n != qf->fail_at)
		return 0;
	if (!qf->fail_signal)
		return qf->fail_errno ?: -EIO;
	send_sig(qf->fail_signal, current, 1);
	return -EINTR;
}

/* A queue of @pdd, its MQDs filled with @fill, its ids taken. */
static struct qf_queue *qf_queue_new(struct kfd_process *p,
				     struct kfd_process_device *pdd,
				     const struct queue_properties *qp,
				     u32 qid, u32 doorbell, u8 fill)
{
	struct mqd_manager *mm = kfd_criu_mqd_mgr(pdd->dev, qp->type);
	struct qf_queue *fq;
	size_t size;

	fq = kzalloc_obj(*fq, GFP_KERNEL);
	if (!fq)
		return NULL;
	fq->q.properties = *qp;
	fq->q.properties.queue_id = qid;
	fq->q.device = pdd->dev;
	fq->q.process = p;
	fq->q.doorbell_id = doorbell;
	size = mm->mqd_stride(mm, &fq->q.properties) *
	       kfd_criu_queue_num_xcc(&fq->q);
	fq->q.mqd = kvmalloc(size, GFP_KERNEL);
	if (!fq->q.mqd) {
		kfree(fq);
		return NULL;
	}
	memset(fq->q.mqd, fill, size);
	fq->pdd = pdd;
	fq->pqn.q = &fq->q;
	list_add_tail(&fq->pqn.process_queue_list, &p->pqm.queues);
	set_bit(qid, p->pqm.queue_slot_bitmap);
	if (!kfd_criu_queue_is_sdma(qp->type))
		set_bit(doorbell, pdd->qpd.doorbell_bitmap);
	pdd->dev->dqm->total_queue_count++;
	qf->live++;
	return fq;
}

static void qf_queue_free(struct kfd_process *p, struct qf_queue *fq)
{
	list_del(&fq->pqn.process_queue_list);
	clear_bit(fq->q.properties.queue_id, p->pqm.queue_slot_bitmap);
	if (!kfd_criu_queue_is_sdma(fq->q.properties.type))
		clear_bit(fq->q.doorbell_id, fq->pdd->qpd.doorbell_bitmap);
	fq->pdd->dev->dqm->total_queue_count--;
	if (fq->hqd)
		qf->hqds_free++;
	if (fq->holds)
		qf->held--;
	kfree(fq->q.cu_mask);
	kvfree(fq->q.mqd);
	kfree(fq);
	qf->live--;
}

static int qf_acquire_buffers(struct kfd_process_device *pdd,
			      struct queue_properties *qp, bool cwsr_svm)
{
	int ret = qf_step(QF_ACQUIRE);

	if (!ret)
		qf->held++;
	if (!ret && cwsr_svm)
		qf->cwsr_svm_left++;
	return ret;
}

/* What kfd_queue_acquire_cwsr_svm() takes once RESUME applied the ranges */
static int qf_acquire_cwsr_svm(struct kfd_process_device *pdd,
			       struct queue_properties *qp)
{
	if (!qf->cwsr_svm_left)
		return -EINVAL;
	qf->cwsr_svm_left--;
	qf->cwsr_svm_taken++;
	return 0;
}

/*
 * As kfd_queue_unref_bo_vas(): the hold goes under the VM's reservation,
 * which amdgpu takes interruptibly; with a signal pending the hold stays.
 */
static void qf_release_buffers(struct kfd_process_device *pdd,
			       struct queue_properties *qp)
{
	if (!signal_pending(current))
		qf->held--;
}

/*
 * What the DQM's create_queue() refuses for want of room: a GPU with the
 * most queues the module parameter allows (-EPERM), and without HWS, a
 * compute queue when no HQD is left (-EBUSY, from allocate_hqd()).
 */
static int qf_room(struct kfd_node *dev, const struct queue_properties *qp)
{
	if (dev->dqm->total_queue_count >= qf->max_queues_per_device)
		return -EPERM;
	if (dev->dqm->sched_policy == KFD_SCHED_POLICY_NO_HWS &&
	    qp->type == KFD_QUEUE_TYPE_COMPUTE && !qf->hqds_free)
		return -EBUSY;
	return 0;
}

/*
 * As allocate_sdma_queue() with a given slot: -ENOMEM when no slot of the
 * type is left, -EBUSY when the slot is taken. The fake takes no slot.
 */
static int qf_sdma_slot(struct device_queue_manager *dqm,
			enum kfd_queue_type type, u32 sdma_id)
{
	const unsigned long *map = type == KFD_QUEUE_TYPE_SDMA_XGMI ?
				   dqm->xgmi_sdma_bitmap : dqm->sdma_bitmap;

	if (bitmap_empty(map, KFD_MAX_SDMA_QUEUES))
		return -ENOMEM;
	return test_bit(sdma_id, map) ? 0 : -EBUSY;
}

/* As pqm_create_queue() with given ids: the queue holds its buffers. */
static int qf_create(struct kfd_process *p, struct kfd_process_device *pdd,
		     struct queue_properties *qp,
		     const struct kfd_criu_queue_priv_data *ids)
{
	struct qf_queue *fq;
	int ret;

	ret = qf_step(QF_CREATE);
	if (ret)
		return ret;
	/* As assign_queue_slot_by_qid() and allocate_doorbell() refuse */
	if (ids->q_id >= KFD_MAX_NUM_OF_QUEUES_PER_PROCESS)
		return -EINVAL;
	if (test_bit(ids->q_id, p->pqm.queue_slot_bitmap))
		return -ENOSPC;
	if (!kfd_criu_queue_is_sdma(qp->type) &&
	    (ids->doorbell_id >= KFD_MAX_NUM_OF_QUEUES_PER_PROCESS ||
	     test_bit(ids->doorbell_id, pdd->qpd.doorbell_bitmap)))
		return -EINVAL;
	ret = qf_room(pdd->dev, qp);
	if (!ret && kfd_criu_queue_is_sdma(qp->type))
		ret = qf_sdma_slot(pdd->dev->dqm, qp->type, ids->sdma_id);
	if (ret)
		return ret;
	fq = qf_queue_new(p, pdd, qp, ids->q_id, ids->doorbell_id, QT_FILL);
	if (!fq)
		return -ENOMEM;
	fq->hqd = pdd->dev->dqm->sched_policy == KFD_SCHED_POLICY_NO_HWS &&
		  qp->type == KFD_QUEUE_TYPE_COMPUTE;
	qf->hqds_free -= fq->hqd;
	fq->q.sdma_id = ids->sdma_id;
	/* As the DQM's create_queue(): a queue of an evicted process waits */
	fq->q.properties.is_evicted = !!pdd->qpd.evicted;
	fq->q.properties.is_active = !pdd->qpd.evicted;
	fq->holds = true;
	return 0;
}

/*
 * As pqm_destroy_queue(): it gives back the buffers under the VM's
 * reservation, which amdgpu takes interruptibly. With a signal pending
 * the fake always fails, before it changed anything: the worst case.
 */
static int qf_destroy(struct kfd_process *p, u32 qid)
{
	struct queue *q = pqm_get_user_queue(&p->pqm, qid);

	if (!q)
		return -EINVAL;
	if (signal_pending(current))
		return -ERESTARTSYS;
	/* As pqm_destroy_queue() gives up the process's GWS */
	if (q->gws)
		container_of(q, struct qf_queue, q)->pdd->qpd.num_gws = 0;
	qf_queue_free(p, container_of(q, struct qf_queue, q));
	return 0;
}

static void qf_fake_new(struct kunit *test, enum qt_family_id gpu1)
{
	qf = kunit_kzalloc(test, sizeof(*qf), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, qf);
	qf->fail_step = QF_STEPS;
	qf->guard_order = true;
	qf->gpu1 = gpu1;
	qf->max_queues_per_device = max_num_of_queues_per_device;
	qf->hqds_free = UINT_MAX;
	kunit_activate_static_stub(test, kfd_criu_queue_acquire_buffers,
				   qf_acquire_buffers);
	kunit_activate_static_stub(test, kfd_criu_queue_acquire_cwsr_svm,
				   qf_acquire_cwsr_svm);
	kunit_activate_static_stub(test, kfd_criu_queue_release_buffers,
				   qf_release_buffers);
	kunit_activate_static_stub(test, kfd_criu_queue_pqm_create, qf_create);
	kunit_activate_static_stub(test, kfd_criu_queue_pqm_destroy,
				   qf_destroy);
}

#define QF_SDMA_DB	0x100U	/* doorbell of SDMA engine 0, queue 0 */
#define QF_SDMA_STEP	0x20U	/* doorbells between two engines */
#define QF_ENGINES	4	/* two PCIe, two XGMI */

/* The GFX9 with two XCCs, and the family of the second GPU */
static const struct qt_family *qf_family(u32 gpu)
{
	return &qt_families[gpu ? qf->gpu1 : QT_GFX943];
}

/*
 * A gfx_target_version for the family's GC version: major, minor and
 * stepping (the topology gives GC 9.4.3 other values; only the family
 * matters to the restore).
 */
static u32 qf_gfx_target(u32 gpu)
{
	u32 v = qf_family(gpu)->gc_version;

	return IP_VERSION_MAJ(v) * 10000 + IP_VERSION_MIN(v) * 100 +
	       IP_VERSION_REV(v);
}

/*
 * Whether any whitelisted register of @q's MQDs holds something else than
 * init_mqd()'s memory (QT_FILL): its dynamic state is installed.
 */
static bool qf_dyn_installed(struct queue *q)
{
	const struct qt_family *f = qf_family(q->device->id - QF_GPU_ID);
	struct mqd_manager *mm = kfd_criu_mqd_mgr(q->device,
						  q->properties.type);
	size_t stride = mm->mqd_stride(mm, &q->properties);
	u32 i, xcc, nxcc = kfd_criu_queue_num_xcc(q);

	if (kfd_criu_queue_is_sdma(q->properties.type)) {
		for (i = 0; i < QT_SDMA_FIELDS; i++)
			if (qt_reg(q->mqd, f->sdma_off[i]) != QT_FILL32)
				return true;
		return false;
	}
	for (xcc = 0; xcc < nxcc; xcc++)
		for (i = 0; i < QT_CP_FIELDS; i++)
			if (qt_reg(q->mqd + stride * xcc, f->cp_off[i]) !=
			    QT_FILL32)
				return true;
	return false;
}

/*
 * The DQM's update_queue(), which pqm_update_mqd() calls for a CU mask,
 * pqm_set_gws() for GWS and pqm_update_queue_properties() for a new ring:
 * the family's update_mqd() rewrites the MQD from the queue's properties,
 * then the GWS flag follows the queue's GWS as update_queue() keeps it
 * (the restored queues are inactive, so no counter moves). During a
 * restore, a queue whose state is installed already fails the test.
 */
static int qf_update_queue(struct device_queue_manager *dqm, struct queue *q,
			   struct mqd_update_info *minfo)
{
	struct mqd_manager *mm = kfd_criu_mqd_mgr(q->device,
						  q->properties.type);
	struct kunit *test = kunit_get_current_test();
	int ret = qf_step(QF_UPDATE);

	if (ret)
		return ret;
	/* No CP to unmap it from: the fake has only inactive queues */
	if (q->properties.is_active) {
		if (test)
			KUNIT_FAIL(test, "queue %u is active before RESUME",
				   q->properties.queue_id);
		return -EINVAL;
	}
	if (qf->guard_order && qf_dyn_installed(q)) {
		if (test)
			KUNIT_FAIL(test, "queue %u: updated after its state was installed",
				   q->properties.queue_id);
		return -EINVAL;
	}
	mm->update_mqd(mm, q->mqd, &q->properties, minfo);
	q->properties.is_gws = !!q->gws;
	return 0;
}

/*
 * The family's own set_dyn_state() of @mm, as a step of the fake that
 * can fail: it then fails before it wrote anything.
 */
static int qf_set_dyn_state(struct mqd_manager *mm, void *mqd,
			    struct queue_properties *qp, u32 xcc,
			    const struct kfd_criu_queue_dyn *dyn,
			    const void *ctl_stack, u32 ctl_stack_len)
{
	struct device_queue_manager *dqm = mm->dev->dqm;
	enum KFD_MQD_TYPE type;
	int ret = qf_step(QF_SET_DYN);

	if (ret)
		return ret;
	type = mm == dqm->mqd_mgrs[KFD_MQD_TYPE_SDMA] ? KFD_MQD_TYPE_SDMA :
							KFD_MQD_TYPE_CP;
	return qf->set_dyn[mm->dev->id - QF_GPU_ID][type](mm, mqd, qp, xcc, dyn,
							 ctl_stack,
							 ctl_stack_len);
}

/* Makes the set_dyn_state() of @gpu's MQD manager of @type the fake's. */
static void qf_wrap_set_dyn(struct device_queue_manager *dqm, u32 gpu,
			    enum KFD_MQD_TYPE type)
{
	qf->set_dyn[gpu][type] = dqm->mqd_mgrs[type]->set_dyn_state;
	dqm->mqd_mgrs[type]->set_dyn_state = qf_set_dyn_state;
}

/* A node of @gpu's family with a device queue manager and SDMA engines */
static struct kfd_node *qf_node(struct kunit *test, u32 gpu)
{
	const struct qt_family *f = qf_family(gpu);
	struct device_queue_manager *dqm;
	struct kfd_node *node;
	u32 i, *db;

	node = qt_family_node(test, f);
	dqm = kunit_kzalloc(test, sizeof(*dqm), GFP_KERNEL);
	db = kunit_kcalloc(test, QF_ENGINES, sizeof(*db), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, dqm);
	KUNIT_ASSERT_NOT_NULL(test, db);
	node->id = QF_GPU_ID + gpu;
	node->dqm = dqm;
	/* GFX11 and later schedule with MES, where GWS is a flag on a queue */
	node->kfd->shared_resources.enable_mes =
		f->gc_version >= IP_VERSION(11, 0, 0);
	/*
	 * GWS only where pqm_set_gws() needs no amdgpu memory object: with
	 * MES and on GFX 9.4.3. The key is never dereferenced.
	 */
	if (node->kfd->shared_resources.enable_mes ||
	    f->gc_version == IP_VERSION(9, 4, 3))
		node->gws = node;
	node->kfd->num_nodes = 1;
	node->kfd->device_info.num_sdma_queues_per_engine = 8;
	node->adev->gmc.xgmi.supported = true;
	node->adev->gds.gws_size = 64;
	node->adev->sdma.num_instances = QF_ENGINES;
	for (i = 0; i < QF_ENGINES; i++)
		db[i] = QF_SDMA_DB + QF_SDMA_STEP * i;
	node->kfd->shared_resources.sdma_doorbell_idx = db;
	mutex_init(&dqm->lock_hidden);
	/* Every SDMA slot free: two engines of each kind, eight queues each */
	bitmap_set(dqm->sdma_bitmap, 0, QF_ENGINES / 2 * 8);
	bitmap_set(dqm->xgmi_sdma_bitmap, 0, QF_ENGINES / 2 * 8);
	dqm->dev = node;
	dqm->sched_policy = KFD_SCHED_POLICY_HWS;
	dqm->ops.update_queue = qf_update_queue;
	dqm->mqd_mgrs[KFD_MQD_TYPE_CP] =
		qt_family_mm_on(test, f, KFD_MQD_TYPE_CP, node);
	dqm->mqd_mgrs[KFD_MQD_TYPE_SDMA] =
		qt_family_mm_on(test, f, KFD_MQD_TYPE_SDMA, node);
	qf_wrap_set_dyn(dqm, gpu, KFD_MQD_TYPE_CP);
	qf_wrap_set_dyn(dqm, gpu, KFD_MQD_TYPE_SDMA);
	return node;
}

static void qf_process_release(void *data)
{
	struct kfd_process *p = data;
	struct process_queue_node *pqn, *tmp;

	list_for_each_entry_safe(pqn, tmp, &p->pqm.queues, process_queue_list)
		qf_queue_free(p, container_of(pqn, struct qf_queue, pqn));
}

static unsigned long *qf_bitmap(struct kunit *test)
{
	unsigned long *map;

	map = kunit_kzalloc(test, BITS_TO_LONGS(KFD_MAX_NUM_OF_QUEUES_PER_PROCESS) *
			    sizeof(long), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, map);
	return map;
}

/*
 * A process on @nodes whose doorbell pages exist, without queues, and
 * evicted, as CHECKPOINT leaves a process and RESTORE finds it.
 */
static struct kfd_process *qf_process(struct kunit *test,
				      struct kfd_node **nodes)
{
	struct kfd_process_device *pdd;
	struct kfd_process *p;
	u32 i;

	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	mutex_init(&p->mutex);
	/* The primary KFD process of its mm, with no other context */
	p->context_id = KFD_CONTEXT_ID_PRIMARY;
	ida_init(&p->id_table);
	INIT_LIST_HEAD(&p->pqm.queues);
	p->pqm.process = p;
	p->pqm.queue_slot_bitmap = qf_bitmap(test);
	for (i = 0; i < QF_GPUS; i++) {
		pdd = kunit_kzalloc(test, sizeof(*pdd), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, pdd);
		pdd->dev = nodes[i];
		pdd->process = p;
		pdd->user_gpu_id = nodes[i]->id;
		pdd->drm_priv = pdd;	/* a key, never dereferenced */
		mutex_init(&pdd->doorbell_mutex);
		/* kfd_alloc_process_doorbells() keeps what is there */
		pdd->qpd.proc_doorbells = (struct amdgpu_bo *)pdd;
		pdd->qpd.doorbell_bitmap = qf_bitmap(test);
		pdd->qpd.evicted = 1;
		p->pdds[i] = pdd;
		p->n_pdds = i + 1;
	}
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							qf_process_release, p),
			0);
	return p;
}

/**
 * struct qf_spec - a queue of the process the tests dump
 * @gpu: index of its GPU
 * @type: its type
 * @format: its format
 * @qid: its queue id
 * @doorbell: its doorbell slot
 * @sdma_id: the SDMA slot with that doorbell (SDMA queues)
 * @engine: the SDMA engine of that slot
 * @cwsr: a compute queue with a CWSR area
 * @gws: it uses GWS
 * @cu_mask: user mode set a CU mask
 */
struct qf_spec {
	u32 gpu;
	enum kfd_queue_type type;
	enum kfd_queue_format format;
	u32 qid;
	u32 doorbell;
	u32 sdma_id;
	u32 engine;
	bool cwsr;
	bool gws;
	bool cu_mask;
};

/*
 * Every class of queue: AQL on two XCCs with GWS and a CU mask, PM4
 * without CWSR, AQL with CWSR on a GPU that keeps the control stack in
 * the CWSR area, SDMA slot 3 (engine 1, the second queue: the mirror
 * doorbell), SDMA-XGMI slot 1 (XGMI engine 3).
 */
static const struct qf_spec qf_specs[] = {
	{ .gpu = 0, .type = KFD_QUEUE_TYPE_COMPUTE,
	  .format = KFD_QUEUE_FORMAT_AQL, .qid = 1, .doorbell = 8,
	  .cwsr = true, .gws = true, .cu_mask = true },
	{ .gpu = 1, .type = KFD_QUEUE_TYPE_COMPUTE,
	  .format = KFD_QUEUE_FORMAT_PM4, .qid = 2, .doorbell = 9 },
	{ .gpu = 1, .type = KFD_QUEUE_TYPE_COMPUTE,
	  .format = KFD_QUEUE_FORMAT_AQL, .qid = 5, .doorbell = 10,
	  .cwsr = true, .cu_mask = true },
	{ .gpu = 0, .type = KFD_QUEUE_TYPE_SDMA,
	  .format = KFD_QUEUE_FORMAT_PM4, .qid = 3,
	  .doorbell = QF_SDMA_DB + QF_SDMA_STEP +
		      KFD_QUEUE_DOORBELL_MIRROR_OFFSET,
	  .sdma_id = 3, .engine = 1 },
	{ .gpu = 1, .type = KFD_QUEUE_TYPE_SDMA_XGMI,
	  .format = KFD_QUEUE_FORMAT_PM4, .qid = 4,
	  .doorbell = QF_SDMA_DB + 3 * QF_SDMA_STEP, .sdma_id = 1,
	  .engine = 3 },
};

static const u32 qf_cu_mask[2] = { 0xffff00ff, 0x0000ffff };

static void qf_props(const struct qf_spec *sp, u32 num_xcc,
		     struct queue_properties *qp)
{
	u64 va = QT_VA + (u64)sp->qid * SZ_16M;

	memset(qp, 0, sizeof(*qp));
	qp->type = sp->type;
	qp->format = sp->format;
	qp->queue_address = va;
	qp->queue_size = QT_RING;
	qp->read_ptr = (void __user *)(uintptr_t)(va + 0x100000);
	qp->write_ptr = (void __user *)(uintptr_t)(va + 0x100008);
	qp->priority = 7;
	qp->queue_percent = 100;
	if (kfd_criu_queue_is_sdma(sp->type)) {
		qp->sdma_engine_id = sp->engine;
		return;
	}
	qp->pm4_target_xcc = num_xcc - 1;
	qp->eop_ring_buffer_address = va + 0x200000;
	qp->eop_ring_buffer_size = QT_EOP;
	qp->ctl_stack_size = QT_DYN_CTL;
	if (sp->cwsr) {
		qp->ctx_save_restore_area_address = va + 0x400000;
		qp->ctx_save_restore_area_size = QT_CWSR;
	}
}

/* The preempted state of XCC @xcc of @sp's queue */
static void qf_dyn(const struct qf_spec *sp, u32 xcc,
		   struct kfd_criu_queue_dyn *dyn)
{
	memset(dyn, 0, sizeof(*dyn));
	if (kfd_criu_queue_is_sdma(sp->type)) {
		dyn->rptr = cpu_to_le64(0x100000100ULL + sp->qid * 0x40);
		dyn->wptr = cpu_to_le64(0x100000300ULL + sp->qid * 0x40);
		return;
	}
	dyn->rptr = cpu_to_le64(0x40 + 16 * xcc);
	dyn->wptr = cpu_to_le64(0x123400000ULL + 0x40 * sp->qid + 16 * xcc);
	dyn->eop_rptr = cpu_to_le32(0x100 + xcc);
	dyn->eop_wptr = cpu_to_le32(0x180 + xcc);
	if (!sp->cwsr)
		return;
	dyn->cntl_stack_offset = cpu_to_le32(QT_DYN_OFF);
	dyn->wg_state_offset = cpu_to_le32(0x5000 + 8 * xcc);
}

/* Bytes of live control stack a queue's MQD keeps per XCC */
static u32 qf_ctl_len(const struct qf_spec *sp)
{
	return sp->cwsr && qf_family(sp->gpu)->ctl_in_mqd ?
	       QT_DYN_CTL - QT_DYN_OFF : 0;
}

/* A queue as CHECKPOINT finds it: preempted, its MQDs written back. */
static void qf_add_dumped(struct kunit *test, struct kfd_process *p,
			  const struct qf_spec *sp)
{
	struct kfd_process_device *pdd = p->pdds[sp->gpu];
	u32 num_xcc = NUM_XCC(pdd->dev->xcc_mask);
	struct kfd_criu_queue_dyn dyn;
	struct queue_properties qp;
	struct mqd_manager *mm;
	struct qf_queue *fq;
	u32 xcc;
	u8 *ctl;

	ctl = kunit_kmalloc(test, QT_DYN_CTL, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctl);
	qf_props(sp, num_xcc, &qp);
	fq = qf_queue_new(p, pdd, &qp, sp->qid, sp->doorbell, 0x5a);
	KUNIT_ASSERT_NOT_NULL(test, fq);
	fq->q.sdma_id = sp->sdma_id;
	if (sp->gws)
		fq->q.gws = pdd->dev->gws;
	if (sp->cu_mask) {
		fq->q.cu_mask = kmemdup(qf_cu_mask, sizeof(qf_cu_mask),
					GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, fq->q.cu_mask);
		fq->q.cu_mask_count = 64;
	}
	mm = kfd_criu_mqd_mgr(pdd->dev, qp.type);
	for (xcc = 0; xcc < kfd_criu_queue_num_xcc(&fq->q); xcc++) {
		qf_dyn(sp, xcc, &dyn);
		memset(ctl, 0x60 + sp->qid + xcc, QT_DYN_CTL);
		KUNIT_ASSERT_EQ(test, mm->set_dyn_state(mm, fq->q.mqd,
							&fq->q.properties, xcc,
							&dyn, ctl,
							qf_ctl_len(sp)), 0);
	}
}

/**
 * struct qf_env - what the queue restore tests share
 * @nodes: the fake GPUs
 * @src: the process dumped, with a queue of each of qf_specs[]
 * @s: its image
 * @gpus: the GPU records of its image
 * @gpu_recs: backing of @gpus
 * @img: its queues, as RESTORE collects them from @s
 * @st: the image GPUs placed on the same GPUs of the target
 */
struct qf_env {
	struct kfd_node *nodes[QF_GPUS];
	struct kfd_process *src;
	struct kfd_criu_test_stream *s;
	struct kfd_criu_gpus_image gpus;
	struct kfd_criu_gpu_rec gpu_recs[QF_GPUS];
	struct kfd_criu_queues_image img;
	struct kfd_criu_gpus_restore st;
};

static void qf_env_release(void *data)
{
	struct qf_env *e = data;

	kfd_criu_queues_image_free(&e->img);
}

/*
 * Dumps the source process, on a GFX 9.4.3 and a GPU of family @gpu1, and
 * reads its queues back from the stream.
 */
static struct qf_env *qf_env_new_on(struct kunit *test,
				    enum qt_family_id gpu1)
{
	struct kfd_criu_queues_image dumped;
	struct kfd_criu_image_writer w;
	u32 i, records, states = 0;
	struct qf_env *e;
	int ret;

	qf_fake_new(test, gpu1);
	e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e);
	e->s = kfd_criu_test_stream_new(test);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, qf_env_release,
							e), 0);
	for (i = 0; i < QF_GPUS; i++) {
		e->nodes[i] = qf_node(test, i);
		qt_gpu(&e->gpu_recs[i]);
		e->gpu_recs[i].gpu_id = cpu_to_le32(e->nodes[i]->id);
		e->gpu_recs[i].gfx_target_version =
			cpu_to_le32(qf_gfx_target(i));
		e->gpu_recs[i].num_xcc =
			cpu_to_le32(NUM_XCC(e->nodes[i]->xcc_mask));
		e->gpu_recs[i].ctl_stack_size = cpu_to_le32(QT_DYN_CTL);
		e->st.target[i] = i;
	}
	e->gpus.gpus = e->gpu_recs;
	e->gpus.num_gpus = QF_GPUS;
	e->gpus.gpus_read = QF_GPUS;
	e->src = qf_process(test, e->nodes);
	for (i = 0; i < ARRAY_SIZE(qf_specs); i++) {
		qf_add_dumped(test, e->src, &qf_specs[i]);
		/* One state per MQD: per XCC for compute, one for SDMA */
		states += kfd_criu_queue_is_sdma(qf_specs[i].type) ? 1 :
			  NUM_XCC(e->nodes[qf_specs[i].gpu]->xcc_mask);
	}

	mutex_lock(&e->src->mutex);
	ret = kfd_criu_queues_snapshot(e->src, &e->gpus, &dumped);
	mutex_unlock(&e->src->mutex);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, dumped.num_queues, ARRAY_SIZE(qf_specs));
	kfd_criu_image_writer_init(&w, &e->s->io);
	ret = kfd_criu_image_write_header(&w, "test");
	if (!ret)
		ret = kfd_criu_queues_write(&w, &dumped);
	if (!ret)
		ret = kfd_criu_image_write_end(&w);
	kfd_criu_queues_image_free(&dumped);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_EQ(test, qt_read_back(&e->s->io, &e->gpus,
					   ARRAY_SIZE(qf_specs), &e->img,
					   &records), 0);
	KUNIT_EXPECT_EQ(test, e->img.num_states, states);
	return e;
}

/* The environment of most cases: a GFX 9.4.3 and a GFX11 */
static struct qf_env *qf_env_new(struct kunit *test)
{
	return qf_env_new_on(test, QT_GFX11);
}

static int qf_restore_img(struct kfd_process *p,
			  struct kfd_criu_queues_image *img,
			  const struct kfd_criu_gpus_restore *st)
{
	int ret;

	mutex_lock(&p->mutex);
	ret = kfd_criu_queues_restore(p, img, NULL, 0, st);
	mutex_unlock(&p->mutex);
	return ret;
}

static int qf_restore(struct qf_env *e, struct kfd_process *p)
{
	return qf_restore_img(p, &e->img, &e->st);
}

/* The state of XCC @xcc of @q through its family's get_dyn_state() */
static void qf_get_dyn(struct kunit *test, struct queue *q, u32 xcc,
		       struct kfd_criu_queue_dyn *dyn, u8 *ctl, u32 *len)
{
	struct mqd_manager *mm = kfd_criu_mqd_mgr(q->device,
						  q->properties.type);

	memset(ctl, 0, QT_DYN_CTL);
	KUNIT_ASSERT_EQ(test, mm->get_dyn_state(mm, q->mqd, &q->properties,
						xcc, dyn, ctl, len), 0);
}

/**
 * struct qf_replay - the updates a restored queue's MQD went through
 * @qp: the queue's properties after its restore
 * @cu_mask: the CU mask its restore set, or NULL
 * @cu_mask_count: bits in @cu_mask
 * @gws: its restore gave it GWS
 * @next: it then took qf_next_ops()
 */
struct qf_replay {
	struct queue_properties qp;
	const u32 *cu_mask;
	u32 cu_mask_count;
	bool gws;
	bool next;
};

/* How @q's MQD came to be, as a restore left it */
static void qf_replay_of(struct queue *q, struct qf_replay *r)
{
	memset(r, 0, sizeof(*r));
	r->qp = q->properties;
	r->cu_mask = q->cu_mask;
	r->cu_mask_count = q->cu_mask_count;
	r->gws = q->gws;
}

/* A CU mask a process sets next: CUs in pairs, as WGP GPUs want them */
static const u32 qf_next_cu_mask[2] = { 0x0000ffff, 0xffff0000 };

/*
 * The MQD a queue that was never dumped has after the updates of @r: the
 * memory of init_mqd() (QT_FILL) with the updates the restore made
 * through the DQM replayed on it, the CU mask and then GWS, as
 * kfd_criu_queues_restore() makes them, and then those of qf_next_ops().
 */
static u8 *qf_reference_mqd(struct kunit *test, struct queue *q,
			    const struct qf_replay *r, size_t size)
{
	struct mqd_manager *mm = kfd_criu_mqd_mgr(q->device,
						  q->properties.type);
	struct queue_properties qp = r->qp;
	struct mqd_update_info minfo = {};
	u32 cu[ARRAY_SIZE(qf_next_cu_mask)];
	u8 *ref = kunit_kmalloc(test, size, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ref);
	memset(ref, QT_FILL, size);
	if (r->cu_mask) {
		minfo.cu_mask.ptr = (u32 *)r->cu_mask;
		minfo.cu_mask.count = r->cu_mask_count;
		mm->update_mqd(mm, ref, &qp, &minfo);
	}
	if (r->gws) {
		memset(&minfo, 0, sizeof(minfo));
		minfo.update_flag = UPDATE_FLAG_IS_GWS;
		mm->update_mqd(mm, ref, &qp, &minfo);
	}
	if (!r->next)
		return ref;
	if (qp.type == KFD_QUEUE_TYPE_COMPUTE) {
		memcpy(cu, qf_next_cu_mask, sizeof(cu));
		memset(&minfo, 0, sizeof(minfo));
		minfo.cu_mask.ptr = cu;
		minfo.cu_mask.count = 32 * ARRAY_SIZE(cu);
		mm->update_mqd(mm, ref, &qp, &minfo);
	}
	qp.queue_address = 0;
	qp.queue_size = 0;
	mm->update_mqd(mm, ref, &qp, NULL);
	return ref;
}

/* Bytes of MQD memory @q has, over all its XCCs */
static size_t qf_mqd_size(struct queue *q)
{
	const struct qt_family *f = qf_family(q->device->id - QF_GPU_ID);
	struct mqd_manager *mm = kfd_criu_mqd_mgr(q->device,
						  q->properties.type);

	if (kfd_criu_queue_is_sdma(q->properties.type))
		return f->sdma_size;
	return mm->mqd_stride(mm, &q->properties) * kfd_criu_queue_num_xcc(q);
}

/*
 * Bytes of @q's MQDs that differ from @ref outside the whitelisted
 * registers and, in each XCC's MQD, [@lo, @hi): where the control stack
 * went
 */
static unsigned int qf_stray_of(struct queue *q, const u8 *ref, size_t lo,
				size_t hi)
{
	const struct qt_family *f = qf_family(q->device->id - QF_GPU_ID);
	struct mqd_manager *mm = kfd_criu_mqd_mgr(q->device,
						  q->properties.type);
	u32 xcc, nxcc = kfd_criu_queue_num_xcc(q);
	unsigned int n = 0;
	size_t stride;

	if (kfd_criu_queue_is_sdma(q->properties.type))
		return qt_stray_from(q->mqd, ref, f->sdma_size, f->sdma_off,
				     QT_SDMA_FIELDS, 0, 0);
	stride = mm->mqd_stride(mm, &q->properties);
	for (xcc = 0; xcc < nxcc; xcc++)
		n += qt_stray_from(q->mqd + stride * xcc, ref + stride * xcc,
				   stride, f->cp_off, QT_CP_FIELDS, lo, hi);
	return n;
}

/*
 * Bytes of @q's MQDs from neither init_mqd(), the DQM's updates of @r nor
 * the whitelist; on a GPU that keeps the control stack after each XCC's
 * MQD, its live part too: the last bytes of ctl_stack_size, as many as
 * the longest state get_dyn_state() reads back.
 */
static unsigned int qf_stray_after(struct kunit *test, struct queue *q,
				   const struct qf_replay *r)
{
	const struct qt_family *f = qf_family(q->device->id - QF_GPU_ID);
	u32 xcc, len, live = 0, top = q->properties.ctl_stack_size;
	size_t size = qf_mqd_size(q);
	u8 *ref = qf_reference_mqd(test, q, r, size);
	struct kfd_criu_queue_dyn dyn;
	u8 *ctl;

	if (!f->ctl_in_mqd || kfd_criu_queue_is_sdma(q->properties.type))
		return qf_stray_of(q, ref, 0, 0);
	ctl = kunit_kmalloc(test, QT_DYN_CTL, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctl);
	for (xcc = 0; xcc < kfd_criu_queue_num_xcc(q); xcc++) {
		qf_get_dyn(test, q, xcc, &dyn, ctl, &len);
		live = max(live, len);
	}
	KUNIT_EXPECT_LE(test, live, top);
	return qf_stray_of(q, ref, PAGE_SIZE + top - live, PAGE_SIZE + top);
}

/*
 * Bytes of @sp's restored queue @q's MQDs that are neither whitelisted
 * nor what init_mqd() and the DQM's updates wrote; of the control stack,
 * only its live part may come from the image.
 */
static unsigned int qf_stray(struct kunit *test, const struct qf_spec *sp,
			     struct queue *q)
{
	struct qf_replay r;
	size_t lo = 0, hi = 0;

	qf_replay_of(q, &r);
	if (qf_ctl_len(sp)) {
		lo = PAGE_SIZE + QT_DYN_OFF;
		hi = PAGE_SIZE + QT_DYN_CTL;
	}
	return qf_stray_of(q, qf_reference_mqd(test, q, &r, qf_mqd_size(q)),
			   lo, hi);
}

/* What a restored queue must have of its dumped original. */
static void qf_expect_same(struct kunit *test, const struct qf_spec *sp,
			   struct queue *a, struct queue *b)
{
	const struct queue_properties *pa = &a->properties, *pb = &b->properties;
	struct kfd_criu_queue_dyn da, db;
	u8 *ca, *cb;
	u32 xcc, la, lb;

	KUNIT_EXPECT_EQ(test, pb->type, pa->type);
	KUNIT_EXPECT_EQ(test, pb->format, pa->format);
	KUNIT_EXPECT_EQ(test, pb->queue_address, pa->queue_address);
	KUNIT_EXPECT_EQ(test, pb->queue_size, pa->queue_size);
	KUNIT_EXPECT_EQ(test, (uintptr_t)pb->read_ptr, (uintptr_t)pa->read_ptr);
	KUNIT_EXPECT_EQ(test, (uintptr_t)pb->write_ptr,
			(uintptr_t)pa->write_ptr);
	KUNIT_EXPECT_EQ(test, pb->priority, pa->priority);
	KUNIT_EXPECT_EQ(test, pb->queue_percent, pa->queue_percent);
	KUNIT_EXPECT_EQ(test, pb->pm4_target_xcc, pa->pm4_target_xcc);
	KUNIT_EXPECT_EQ(test, pb->eop_ring_buffer_address,
			pa->eop_ring_buffer_address);
	KUNIT_EXPECT_EQ(test, pb->eop_ring_buffer_size,
			pa->eop_ring_buffer_size);
	KUNIT_EXPECT_EQ(test, pb->ctx_save_restore_area_address,
			pa->ctx_save_restore_area_address);
	KUNIT_EXPECT_EQ(test, pb->ctx_save_restore_area_size,
			pa->ctx_save_restore_area_size);
	KUNIT_EXPECT_EQ(test, pb->ctl_stack_size, pa->ctl_stack_size);
	KUNIT_EXPECT_EQ(test, pb->sdma_engine_id, pa->sdma_engine_id);
	KUNIT_EXPECT_EQ(test, b->doorbell_id, a->doorbell_id);
	KUNIT_EXPECT_PTR_EQ(test, b->device, a->device);
	if (kfd_criu_queue_is_sdma(sp->type))
		KUNIT_EXPECT_EQ(test, b->sdma_id, sp->sdma_id);
	/* pqm_set_gws() put its own token there */
	KUNIT_EXPECT_EQ(test, !!b->gws, !!a->gws);
	KUNIT_EXPECT_EQ(test, b->cu_mask_count, a->cu_mask_count);
	if (a->cu_mask && b->cu_mask)
		KUNIT_EXPECT_MEMEQ(test, b->cu_mask, a->cu_mask,
				   sizeof(qf_cu_mask));
	else
		KUNIT_EXPECT_PTR_EQ(test, b->cu_mask, a->cu_mask);

	ca = kunit_kmalloc(test, QT_DYN_CTL, GFP_KERNEL);
	cb = kunit_kmalloc(test, QT_DYN_CTL, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ca);
	KUNIT_ASSERT_NOT_NULL(test, cb);
	for (xcc = 0; xcc < kfd_criu_queue_num_xcc(a); xcc++) {
		qf_get_dyn(test, a, xcc, &da, ca, &la);
		qf_get_dyn(test, b, xcc, &db, cb, &lb);
		KUNIT_EXPECT_MEMEQ(test, &db, &da, sizeof(da));
		KUNIT_EXPECT_EQ(test, lb, qf_ctl_len(sp));
		KUNIT_EXPECT_EQ(test, lb, la);
		KUNIT_EXPECT_MEMEQ(test, cb, ca, la);
	}
	/* The rest of each MQD is the queue managers', nothing from the image */
	KUNIT_EXPECT_EQ(test, qf_stray(test, sp, b), 0);
}

/* The families the second fake GPU takes in turn */
static const enum qt_family_id qf_gpu1_families[] = {
	QT_GFX10, QT_GFX11, QT_GFX12, QT_GFX121,
};

static void qf_gpu1_desc(const enum qt_family_id *f, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "GPU 1 %s", qt_families[*f].name);
}

KUNIT_ARRAY_PARAM(qf_gpu1, qf_gpu1_families, qf_gpu1_desc);

/*
 * The real CHECKPOINT and RESTORE of a queue of every class on two fake
 * GPUs of different families: the restored queues keep their ids, ring,
 * buffers, CU mask and GWS, and each XCC's new MQD holds the dumped
 * dynamic state and control stack, through the family's own ops, and
 * otherwise only what init_mqd() and the DQM's updates wrote.
 */
static void qt_test_restore_on_fakes(struct kunit *test)
{
	const enum qt_family_id *gpu1 = test->param_value;
	struct qf_env *e = qf_env_new_on(test, *gpu1);
	struct kfd_process *p = qf_process(test, e->nodes);
	const struct qf_spec *sp;
	struct queue *a, *b;
	u32 i;

	/* The source's queues were set up through the same MQD ops */
	memset(qf->calls, 0, sizeof(qf->calls));
	KUNIT_ASSERT_EQ(test, qf_restore(e, p), 0);
	KUNIT_EXPECT_EQ(test, qf->live, 2 * ARRAY_SIZE(qf_specs));
	KUNIT_EXPECT_EQ(test, qf->held, ARRAY_SIZE(qf_specs));
	KUNIT_EXPECT_EQ(test, e->img.num_created, ARRAY_SIZE(qf_specs));
	for (i = 0; i < ARRAY_SIZE(qf_specs); i++) {
		sp = &qf_specs[i];
		a = pqm_get_user_queue(&e->src->pqm, sp->qid);
		b = pqm_get_user_queue(&p->pqm, sp->qid);
		KUNIT_ASSERT_NOT_NULL(test, a);
		KUNIT_ASSERT_NOT_NULL_MSG(test, b, "queue %u", sp->qid);
		qf_expect_same(test, sp, a, b);
	}
	/* Every step ran once per queue that needs it: two CU masks, a GWS */
	KUNIT_EXPECT_EQ(test, qf->calls[QF_ACQUIRE], ARRAY_SIZE(qf_specs));
	KUNIT_EXPECT_EQ(test, qf->calls[QF_CREATE], ARRAY_SIZE(qf_specs));
	KUNIT_EXPECT_EQ(test, qf->calls[QF_UPDATE], 3);
	KUNIT_EXPECT_EQ(test, qf->calls[QF_SET_DYN], e->img.num_states);
	KUNIT_EXPECT_NE(test, p->pdds[0]->qpd.num_gws, 0);
	KUNIT_EXPECT_EQ(test, p->pdds[1]->qpd.num_gws, 0);
}

/* Nothing of a failed restore of @img is left in @p; the source is intact */
static void qf_expect_nothing_left(struct kunit *test,
				   const struct kfd_criu_queues_image *img,
				   struct kfd_process *p, const char *what,
				   unsigned int at)
{
	bool empty;
	u32 i;

	KUNIT_EXPECT_TRUE_MSG(test, list_empty(&p->pqm.queues), "%s %u",
			      what, at);
	empty = bitmap_empty(p->pqm.queue_slot_bitmap,
			     KFD_MAX_NUM_OF_QUEUES_PER_PROCESS);
	KUNIT_EXPECT_TRUE_MSG(test, empty, "%s %u: queue ids", what, at);
	for (i = 0; i < QF_GPUS; i++) {
		empty = bitmap_empty(p->pdds[i]->qpd.doorbell_bitmap,
				     KFD_MAX_NUM_OF_QUEUES_PER_PROCESS);
		KUNIT_EXPECT_TRUE_MSG(test, empty, "%s %u: doorbells of GPU %u",
				      what, at, i);
		KUNIT_EXPECT_EQ_MSG(test, p->pdds[i]->qpd.num_gws, 0,
				    "%s %u: GWS of GPU %u", what, at, i);
	}
	KUNIT_EXPECT_EQ_MSG(test, qf->held, 0, "%s %u: buffers held", what,
			    at);
	KUNIT_EXPECT_EQ_MSG(test, qf->live, ARRAY_SIZE(qf_specs), "%s %u",
			    what, at);
	KUNIT_EXPECT_EQ_MSG(test, img->num_created, 0, "%s %u", what, at);
}

/*
 * Each call of each step of the restore fails in turn, as itself (-EIO)
 * and for a fatal signal it sends (-EINTR, the signal still pending while
 * the restore unwinds): the restore returns that error and leaves no
 * queue, no queue id, no doorbell and no hold on a buffer. With a signal
 * pending the queue managers cannot give buffers back, so this also
 * checks that the unwind runs where no signal reaches.
 */
static void qt_test_restore_unwinds_on_fakes(struct kunit *test)
{
	static const int signals[] = { 0, SIGKILL, SIGUSR1 };
	struct qf_env *e = qf_env_new(test);
	unsigned int counted[QF_STEPS], at, cases = 0;
	struct kfd_process *p;
	enum qf_step step;
	bool pending;
	u32 i;
	int ret;

	p = qf_process(test, e->nodes);
	memset(qf->calls, 0, sizeof(qf->calls));
	KUNIT_ASSERT_EQ(test, qf_restore(e, p), 0);
	memcpy(counted, qf->calls, sizeof(counted));
	qf_process_release(p);
	e->img.num_created = 0;

	for (i = 0; i < ARRAY_SIZE(signals); i++) {
		if (signals[i])
			allow_signal(signals[i]);
		qf->fail_signal = signals[i];
		for (step = 0; step < QF_STEPS; step++) {
			for (at = 0; at < counted[step]; at++) {
				p = qf_process(test, e->nodes);
				memset(qf->calls, 0, sizeof(qf->calls));
				qf->fail_step = step;
				qf->fail_at = at;
				ret = qf_restore(e, p);
				pending = signal_pending(current);
				flush_signals(current);
				KUNIT_EXPECT_EQ_MSG(test, ret,
						    signals[i] ? -EINTR : -EIO,
						    "%s %u, signal %d",
						    qf_step_name[step], at,
						    signals[i]);
				KUNIT_EXPECT_EQ(test, pending, !!signals[i]);
				qf_expect_nothing_left(test, &e->img, p,
						       qf_step_name[step], at);
				cases++;
			}
		}
		if (signals[i])
			disallow_signal(signals[i]);
	}
	qf->fail_step = QF_STEPS;
	qf->fail_signal = 0;
	kunit_info(test, "%u failure points, each unwound\n", cases);
}

/*
 * What the target cannot take fails the restore before any queue exists:
 * a queue id or a doorbell slot already taken, a GPU without GWS or VM,
 * an SDMA doorbell that is no slot of the GPU here.
 */
static void qt_test_restore_checks_target(struct kunit *test)
{
	struct qf_env *e = qf_env_new(test);
	struct queue_properties qp;
	struct kfd_process *p;
	u32 *db;

	/* Queue id 2 taken by a queue of another id's doorbell */
	p = qf_process(test, e->nodes);
	qf_props(&qf_specs[1], 1, &qp);
	KUNIT_ASSERT_NOT_NULL(test, qf_queue_new(p, p->pdds[1], &qp, 2, 40,
						 QT_FILL));
	KUNIT_EXPECT_EQ(test, qf_restore(e, p), -EBUSY);
	KUNIT_EXPECT_EQ(test, qf->calls[QF_CREATE], 0);
	qf_process_release(p);

	/* Doorbell 9 of GPU 1 taken by queue 40 */
	KUNIT_ASSERT_NOT_NULL(test, qf_queue_new(p, p->pdds[1], &qp, 40, 9,
						 QT_FILL));
	KUNIT_EXPECT_EQ(test, qf_restore(e, p), -EBUSY);
	KUNIT_EXPECT_EQ(test, qf->calls[QF_CREATE], 0);
	qf_process_release(p);

	e->nodes[0]->gws = NULL;
	KUNIT_EXPECT_EQ(test, qf_restore(e, p), -ENODEV);
	e->nodes[0]->gws = e->nodes[0];
	e->nodes[0]->dqm->sched_policy = KFD_SCHED_POLICY_NO_HWS;
	KUNIT_EXPECT_EQ(test, qf_restore(e, p), -ENODEV);
	e->nodes[0]->dqm->sched_policy = KFD_SCHED_POLICY_HWS;

	p->pdds[1]->drm_priv = NULL;
	KUNIT_EXPECT_EQ(test, qf_restore(e, p), -EINVAL);
	p->pdds[1]->drm_priv = p->pdds[1];

	/* The SDMA engines' doorbells lie elsewhere on this GPU */
	db = e->nodes[0]->kfd->shared_resources.sdma_doorbell_idx;
	db[1] += 4;
	KUNIT_EXPECT_EQ(test, qf_restore(e, p), -EINVAL);
	db[1] -= 4;

	KUNIT_EXPECT_EQ(test, qf->calls[QF_CREATE], 0);
	qf_expect_nothing_left(test, &e->img, p, "target check", 0);
	/* With everything back in place the same process takes the image */
	KUNIT_EXPECT_EQ(test, qf_restore(e, p), 0);
	KUNIT_EXPECT_EQ(test, qf->calls[QF_CREATE], ARRAY_SIZE(qf_specs));
}

/*
 * A GPU without room for an image queue fails the restore with -ENOSPC,
 * whichever way its queue manager says so: the device's queue limit
 * (-EPERM from create_queue()) and, without HWS, no HQD left for a
 * compute queue (-EBUSY from allocate_hqd()). The queues created before
 * are gone again, and with room the same process takes the image. An
 * -EBUSY that means a taken slot stays -EBUSY.
 */
static void qt_test_restore_without_room(struct kunit *test)
{
	/* A GFX10 beside the GFX 9.4.3: no MES, which needs HWS */
	struct qf_env *e = qf_env_new_on(test, QT_GFX10);
	struct device_queue_manager *dqm = e->nodes[1]->dqm;
	struct kfd_process *p = qf_process(test, e->nodes);

	/* Room on GPU 1 for the first of the image's three queues there */
	KUNIT_ASSERT_EQ(test, dqm->total_queue_count, 3);
	qf->max_queues_per_device = dqm->total_queue_count + 1;
	memset(qf->calls, 0, sizeof(qf->calls));
	KUNIT_EXPECT_EQ(test, qf_restore(e, p), -ENOSPC);
	KUNIT_EXPECT_EQ(test, qf->calls[QF_CREATE], 4);
	qf_expect_nothing_left(test, &e->img, p, "device queue limit", 0);
	qf->max_queues_per_device = max_num_of_queues_per_device;

	/* GPU 1 without HWS: one HQD for its two compute queues */
	dqm->sched_policy = KFD_SCHED_POLICY_NO_HWS;
	qf->hqds_free = 1;
	memset(qf->calls, 0, sizeof(qf->calls));
	KUNIT_EXPECT_EQ(test, qf_restore(e, p), -ENOSPC);
	KUNIT_EXPECT_EQ(test, qf->calls[QF_CREATE], ARRAY_SIZE(qf_specs));
	KUNIT_EXPECT_EQ(test, qf->hqds_free, 1);
	qf_expect_nothing_left(test, &e->img, p, "no HQD left", 0);
	qf->hqds_free = 2;
	KUNIT_EXPECT_EQ(test, qf_restore(e, p), 0);
	KUNIT_EXPECT_EQ(test, qf->hqds_free, 0);
	/* A fresh process: the GWS of this one stays taken */
	qf_process_release(p);
	e->img.num_created = 0;
	p = qf_process(test, e->nodes);

	/* The SDMA-XGMI queue's slot on GPU 1, still without HWS, is taken */
	qf->fail_step = QF_CREATE;
	qf->fail_at = 3;
	qf->fail_errno = -EBUSY;
	memset(qf->calls, 0, sizeof(qf->calls));
	KUNIT_EXPECT_EQ(test, qf_restore(e, p), -EBUSY);
	qf_expect_nothing_left(test, &e->img, p, "SDMA slot taken", 0);
	/* With HWS, no HQD is allocated: a compute queue's -EBUSY stays */
	dqm->sched_policy = KFD_SCHED_POLICY_HWS;
	qf->fail_at = 1;
	memset(qf->calls, 0, sizeof(qf->calls));
	KUNIT_EXPECT_EQ(test, qf_restore(e, p), -EBUSY);
	qf_expect_nothing_left(test, &e->img, p, "compute -EBUSY with HWS", 0);
	qf->fail_step = QF_STEPS;
}

/*
 * The SDMA slots of the whole GPU, which other processes' queues take:
 * none left of the queue's kind is a GPU without room (-ENOSPC, where
 * allocate_sdma_queue() says -ENOMEM), the pinned slot alone taken is
 * -EBUSY. Both fail before any queue exists. Should the slots go between
 * that check and the creation, the creation's -ENOMEM is -ENOSPC too.
 */
static void qt_test_restore_without_sdma_slot(struct kunit *test)
{
	struct qf_env *e = qf_env_new(test);
	struct device_queue_manager *dqm0 = e->nodes[0]->dqm;
	struct device_queue_manager *dqm1 = e->nodes[1]->dqm;
	struct kfd_process *p = qf_process(test, e->nodes);
	DECLARE_BITMAP(saved, KFD_MAX_SDMA_QUEUES);

	/* GPU 0: no PCIe SDMA slot left for queue 3 */
	bitmap_copy(saved, dqm0->sdma_bitmap, KFD_MAX_SDMA_QUEUES);
	bitmap_zero(dqm0->sdma_bitmap, KFD_MAX_SDMA_QUEUES);
	memset(qf->calls, 0, sizeof(qf->calls));
	KUNIT_EXPECT_EQ(test, qf_restore(e, p), -ENOSPC);
	KUNIT_EXPECT_EQ(test, qf->calls[QF_CREATE], 0);
	qf_expect_nothing_left(test, &e->img, p, "no SDMA slot", 0);

	/* Other slots free, but not slot 3 */
	bitmap_copy(dqm0->sdma_bitmap, saved, KFD_MAX_SDMA_QUEUES);
	clear_bit(qf_specs[3].sdma_id, dqm0->sdma_bitmap);
	KUNIT_EXPECT_EQ(test, qf_restore(e, p), -EBUSY);
	KUNIT_EXPECT_EQ(test, qf->calls[QF_CREATE], 0);
	qf_expect_nothing_left(test, &e->img, p, "SDMA slot 3 taken", 0);
	bitmap_copy(dqm0->sdma_bitmap, saved, KFD_MAX_SDMA_QUEUES);

	/* GPU 1: no XGMI SDMA slot left for queue 4 */
	bitmap_copy(saved, dqm1->xgmi_sdma_bitmap, KFD_MAX_SDMA_QUEUES);
	bitmap_zero(dqm1->xgmi_sdma_bitmap, KFD_MAX_SDMA_QUEUES);
	KUNIT_EXPECT_EQ(test, qf_restore(e, p), -ENOSPC);
	KUNIT_EXPECT_EQ(test, qf->calls[QF_CREATE], 0);
	qf_expect_nothing_left(test, &e->img, p, "no XGMI SDMA slot", 0);
	bitmap_copy(dqm1->xgmi_sdma_bitmap, saved, KFD_MAX_SDMA_QUEUES);

	/* The slots go after the check: allocate_sdma_queue()'s -ENOMEM */
	bitmap_zero(dqm0->sdma_bitmap, KFD_MAX_SDMA_QUEUES);
	KUNIT_EXPECT_EQ(test, kfd_criu_queue_create_errno(e->nodes[0], 3,
							  KFD_QUEUE_TYPE_SDMA,
							  3, -ENOMEM), -ENOSPC);
	bitmap_copy(dqm0->sdma_bitmap, saved, KFD_MAX_SDMA_QUEUES);
	/* With slots left, an -ENOMEM is kernel memory */
	KUNIT_EXPECT_EQ(test, kfd_criu_queue_create_errno(e->nodes[0], 3,
							  KFD_QUEUE_TYPE_SDMA,
							  3, -ENOMEM), -ENOMEM);

	/* With the slots back the same process takes the image */
	memset(qf->calls, 0, sizeof(qf->calls));
	KUNIT_EXPECT_EQ(test, qf_restore(e, p), 0);
	KUNIT_EXPECT_EQ(test, qf->calls[QF_CREATE], ARRAY_SIZE(qf_specs));
}

/*
 * CHECKPOINT refuses what the image cannot carry, with nothing to free:
 * a queue that is not preempted, an SDMA queue created by engine id that
 * kept that type (only without HWS: create_queue_nocpsch() does not
 * convert it), a queue on a GPU whose MQD manager lacks the op.
 */
static void qt_test_snapshot_refusals(struct kunit *test)
{
	struct qf_env *e = qf_env_new(test);
	struct kfd_criu_queues_image img;
	struct mqd_manager *mm;
	struct queue *q, *sdma;
	int ret;

	sdma = pqm_get_user_queue(&e->src->pqm, qf_specs[3].qid);
	q = pqm_get_user_queue(&e->src->pqm, qf_specs[0].qid);
	KUNIT_ASSERT_NOT_NULL(test, q);
	KUNIT_ASSERT_NOT_NULL(test, sdma);
	mutex_lock(&e->src->mutex);
	q->properties.is_active = true;
	ret = kfd_criu_queues_snapshot(e->src, &e->gpus, &img);
	KUNIT_EXPECT_EQ(test, ret, -EBUSY);
	KUNIT_EXPECT_NULL(test, img.queues);
	q->properties.is_active = false;

	sdma->properties.type = KFD_QUEUE_TYPE_SDMA_BY_ENG_ID;
	KUNIT_EXPECT_EQ(test, kfd_criu_queues_snapshot(e->src, &e->gpus, &img),
			-EOPNOTSUPP);
	sdma->properties.type = KFD_QUEUE_TYPE_SDMA;

	mm = e->nodes[1]->dqm->mqd_mgrs[KFD_MQD_TYPE_CP];
	mm->get_dyn_state = NULL;
	KUNIT_EXPECT_EQ(test, kfd_criu_queues_snapshot(e->src, &e->gpus, &img),
			-EOPNOTSUPP);
	mutex_unlock(&e->src->mutex);
}

/* Offsets of the fields in a QUEUE and a QUEUE_STATE payload */
#define QF_REC(f)	offsetof(struct kfd_criu_queue_rec, f)
#define QF_HDR(f)	offsetof(struct kfd_criu_queue_state_hdr, f)
#define QF_DYN(f)	(sizeof(struct kfd_criu_queue_state_hdr) + \
			 offsetof(struct kfd_criu_queue_dyn, f))

static const struct kfd_criu_test_field qf_queue_fields[] = {
	{ "ring_base", QF_REC(ring_base), 8 },
	{ "read_ptr_addr", QF_REC(read_ptr_addr), 8 },
	{ "write_ptr_addr", QF_REC(write_ptr_addr), 8 },
	{ "eop_base", QF_REC(eop_base), 8 },
	{ "ctx_save_restore_base", QF_REC(ctx_save_restore_base), 8 },
	{ "queue_id", QF_REC(queue_id), 4 },
	{ "gpu_index", QF_REC(gpu_index), 4 },
	{ "type", QF_REC(type), 4 },
	{ "format", QF_REC(format), 4 },
	{ "priority", QF_REC(priority), 4 },
	{ "queue_percent", QF_REC(queue_percent), 4 },
	{ "pm4_target_xcc", QF_REC(pm4_target_xcc), 4 },
	{ "ring_size", QF_REC(ring_size), 4 },
	{ "eop_size", QF_REC(eop_size), 4 },
	{ "ctx_save_restore_size", QF_REC(ctx_save_restore_size), 4 },
	{ "ctl_stack_size", QF_REC(ctl_stack_size), 4 },
	{ "doorbell_offset", QF_REC(doorbell_offset), 4 },
	{ "sdma_engine_id", QF_REC(sdma_engine_id), 4 },
	{ "gws", QF_REC(gws), 4 },
	{ "num_cu_mask", QF_REC(num_cu_mask), 4 },
	{ "num_xcc", QF_REC(num_xcc), 4 },
	{ "reserved", QF_REC(reserved), 4 },
	{ "reserved2", QF_REC(reserved2), 4 },
};

static const struct kfd_criu_test_field qf_state_fields[] = {
	{ "queue_index", QF_HDR(queue_index), 4 },
	{ "xcc", QF_HDR(xcc), 4 },
	{ "reserved", QF_HDR(reserved), 4 },
	{ "data_len", QF_HDR(data_len), 4 },
	{ "rptr", QF_DYN(rptr), 8 },
	{ "wptr", QF_DYN(wptr), 8 },
	{ "cntl_stack_offset", QF_DYN(cntl_stack_offset), 4 },
	{ "wg_state_offset", QF_DYN(wg_state_offset), 4 },
	{ "eop_rptr", QF_DYN(eop_rptr), 4 },
	{ "eop_wptr", QF_DYN(eop_wptr), 4 },
};

/*
 * The queue type of a record's KFD_IOC_QUEUE_TYPE_*, decoded here rather
 * than by the code under test; -1 for one RESTORE must refuse.
 */
static int qf_rec_type(const struct kfd_criu_queue_rec *rec)
{
	switch (le32_to_cpu(rec->type)) {
	case KFD_IOC_QUEUE_TYPE_COMPUTE:
		return KFD_QUEUE_TYPE_COMPUTE;
	case KFD_IOC_QUEUE_TYPE_SDMA:
		return KFD_QUEUE_TYPE_SDMA;
	case KFD_IOC_QUEUE_TYPE_SDMA_XGMI:
		return KFD_QUEUE_TYPE_SDMA_XGMI;
	}
	return -1;
}

/* The queue format of a record's format; -1 for one RESTORE must refuse */
static int qf_rec_format(const struct kfd_criu_queue_rec *rec)
{
	switch (le32_to_cpu(rec->format)) {
	case KFD_CRIU_QUEUE_FORMAT_PM4:
		return KFD_QUEUE_FORMAT_PM4;
	case KFD_CRIU_QUEUE_FORMAT_AQL:
		return KFD_QUEUE_FORMAT_AQL;
	}
	return -1;
}

#define QF_EXPECT_REC(test, got, want, what, i, field)			\
	KUNIT_EXPECT_EQ_MSG(test, (u64)(got), (u64)(want),		\
			    "%s: queue %u: %s", what, i, field)

/* The properties of restored queue @q are those record @rec gives. */
static void qf_expect_rec(struct kunit *test, const struct queue *q,
			  const struct kfd_criu_queue_rec *rec,
			  const char *what, u32 i)
{
	const struct queue_properties *qp = &q->properties;

	QF_EXPECT_REC(test, qp->type, qf_rec_type(rec), what, i, "type");
	QF_EXPECT_REC(test, qp->format, qf_rec_format(rec), what, i, "format");
	QF_EXPECT_REC(test, qp->queue_address, le64_to_cpu(rec->ring_base),
		      what, i, "ring");
	QF_EXPECT_REC(test, qp->queue_size, le32_to_cpu(rec->ring_size),
		      what, i, "ring size");
	QF_EXPECT_REC(test, (uintptr_t)qp->read_ptr,
		      le64_to_cpu(rec->read_ptr_addr), what, i, "read pointer");
	QF_EXPECT_REC(test, (uintptr_t)qp->write_ptr,
		      le64_to_cpu(rec->write_ptr_addr), what, i,
		      "write pointer");
	QF_EXPECT_REC(test, qp->priority, le32_to_cpu(rec->priority), what, i,
		      "priority");
	QF_EXPECT_REC(test, qp->queue_percent, le32_to_cpu(rec->queue_percent),
		      what, i, "queue percent");
	QF_EXPECT_REC(test, qp->pm4_target_xcc,
		      le32_to_cpu(rec->pm4_target_xcc), what, i, "target XCC");
	QF_EXPECT_REC(test, qp->eop_ring_buffer_address,
		      le64_to_cpu(rec->eop_base), what, i, "EOP buffer");
	QF_EXPECT_REC(test, qp->eop_ring_buffer_size,
		      le32_to_cpu(rec->eop_size), what, i, "EOP size");
	QF_EXPECT_REC(test, qp->ctx_save_restore_area_address,
		      le64_to_cpu(rec->ctx_save_restore_base), what, i,
		      "CWSR area");
	QF_EXPECT_REC(test, qp->ctx_save_restore_area_size,
		      le32_to_cpu(rec->ctx_save_restore_size), what, i,
		      "CWSR size");
	QF_EXPECT_REC(test, qp->ctl_stack_size, le32_to_cpu(rec->ctl_stack_size),
		      what, i, "control stack size");
	if (qf_rec_type(rec) != KFD_QUEUE_TYPE_COMPUTE)
		QF_EXPECT_REC(test, qp->sdma_engine_id,
			      le32_to_cpu(rec->sdma_engine_id), what, i,
			      "SDMA engine");
	QF_EXPECT_REC(test, q->doorbell_id, le32_to_cpu(rec->doorbell_offset),
		      what, i, "doorbell");
	QF_EXPECT_REC(test, !!q->gws, !!rec->gws, what, i, "GWS");
	QF_EXPECT_REC(test, qp->is_gws, !!rec->gws, what, i, "is_gws");
	QF_EXPECT_REC(test, q->cu_mask_count, le32_to_cpu(rec->num_cu_mask),
		      what, i, "CU mask bits");
}

/*
 * The states of XCC @xcc of restored queue @q, which record @i and
 * QUEUE_STATE payload @hdr give: dynamic fields and control stack bytes,
 * read back through the family's get_dyn_state().
 */
static void qf_expect_state(struct kunit *test, struct queue *q, u32 xcc,
			    const struct kfd_criu_queue_state_hdr *hdr,
			    u8 *ctl, const char *what, u32 i)
{
	struct mqd_manager *mm = kfd_criu_mqd_mgr(q->device,
						  q->properties.type);
	const u8 *data = (const u8 *)(hdr + 1) + sizeof(struct kfd_criu_queue_dyn);
	struct kfd_criu_queue_dyn dyn;
	u32 len;
	int ret;

	KUNIT_EXPECT_EQ_MSG(test, le32_to_cpu(hdr->queue_index), i,
			    "%s: queue %u XCC %u: state of another queue", what,
			    i, xcc);
	KUNIT_EXPECT_EQ_MSG(test, le32_to_cpu(hdr->xcc), xcc,
			    "%s: queue %u XCC %u: state of another XCC", what,
			    i, xcc);
	ret = mm->get_dyn_state(mm, q->mqd, &q->properties, xcc, &dyn, ctl,
				&len);
	KUNIT_EXPECT_EQ_MSG(test, ret, 0, "%s: queue %u XCC %u", what, i, xcc);
	if (ret)
		return;
	KUNIT_EXPECT_MEMEQ_MSG(test, &dyn, hdr + 1, sizeof(dyn),
			       "%s: queue %u XCC %u", what, i, xcc);
	KUNIT_EXPECT_EQ_MSG(test, len, le32_to_cpu(hdr->data_len),
			    "%s: queue %u XCC %u", what, i, xcc);
	KUNIT_EXPECT_MEMEQ_MSG(test, ctl, data,
			       min(len, le32_to_cpu(hdr->data_len)),
			       "%s: queue %u XCC %u: control stack", what, i,
			       xcc);
}

/* The CU mask of restored queue @q is the words record @i carried. */
static void qf_expect_cu_mask(struct kunit *test, const struct queue *q,
			      const struct kfd_criu_queues_image *img,
			      const char *what, u32 i)
{
	const __le32 *cu = img->cu_masks + i * KFD_CRIU_CU_MASK_WORDS;
	u32 w, words = le32_to_cpu(img->queues[i].num_cu_mask) / 32;

	if (!words)
		return;
	KUNIT_EXPECT_NOT_NULL_MSG(test, q->cu_mask, "%s: queue %u", what, i);
	for (w = 0; q->cu_mask && w < words; w++)
		KUNIT_EXPECT_EQ_MSG(test, q->cu_mask[w], le32_to_cpu(cu[w]),
				    "%s: queue %u: CU mask word %u", what, i,
				    w);
}

/* A restored queue is what its record and its states say. */
static void qf_check_restored(struct kunit *test, struct kfd_process *p,
			      const struct kfd_criu_queues_image *img,
			      const struct kfd_criu_gpus_restore *st,
			      const char *what)
{
	const struct kfd_criu_queue_rec *rec;
	u32 i, xcc, first = 0;
	struct qf_replay r;
	struct queue *q;
	u8 *ctl;

	ctl = kunit_kmalloc(test, QT_DYN_CTL, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctl);
	for (i = 0; i < img->num_queues; first += le32_to_cpu(rec->num_xcc),
	     i++) {
		rec = &img->queues[i];
		q = pqm_get_user_queue(&p->pqm, le32_to_cpu(rec->queue_id));
		KUNIT_EXPECT_NOT_NULL_MSG(test, q, "%s: queue %u missing", what,
					  i);
		if (!q)
			continue;
		KUNIT_EXPECT_PTR_EQ_MSG(test, q->device,
					p->pdds[st->target[le32_to_cpu(rec->gpu_index)]]->dev,
					"%s: queue %u", what, i);
		/* Created evicted: nothing runs before RESUME */
		KUNIT_EXPECT_FALSE_MSG(test, q->properties.is_active,
				       "%s: queue %u", what, i);
		qf_expect_rec(test, q, rec, what, i);
		qf_expect_cu_mask(test, q, img, what, i);
		qf_replay_of(q, &r);
		KUNIT_EXPECT_EQ_MSG(test, qf_stray_after(test, q, &r), 0,
				    "%s: queue %u: MQD bytes from the image outside the whitelist",
				    what, i);
		for (xcc = 0; xcc < le32_to_cpu(rec->num_xcc); xcc++)
			qf_expect_state(test, q, xcc,
					img->states[first + xcc].payload, ctl,
					what, i);
	}
}

/* Gives @q the next CU mask, as SET_CU_MASK does. */
static int qf_set_next_cu_mask(struct kfd_process *p, u32 qid)
{
	struct mqd_update_info minfo = {};
	u32 cu[ARRAY_SIZE(qf_next_cu_mask)];

	memcpy(cu, qf_next_cu_mask, sizeof(cu));
	minfo.cu_mask.ptr = cu;
	minfo.cu_mask.count = 32 * ARRAY_SIZE(cu);
	return pqm_update_mqd(&p->pqm, qid, &minfo);
}

/* Takes @q's ring away, as UPDATE_QUEUE does with a ring address of 0. */
static int qf_stop_queue(struct kfd_process *p, struct queue *q, u32 qid)
{
	struct queue_properties qp = q->properties;

	qp.queue_address = 0;
	qp.queue_size = 0;
	return pqm_update_queue_properties(&p->pqm, qid, &qp);
}

/* The dynamic state of each of @q's XCCs; QT_DYN_CTL bytes of @ctl each */
static struct kfd_criu_queue_dyn *qf_dyn_all(struct kunit *test,
					     struct queue *q, u8 *ctl,
					     u32 *len)
{
	u32 xcc, nxcc = kfd_criu_queue_num_xcc(q);
	struct kfd_criu_queue_dyn *dyn;

	dyn = kunit_kcalloc(test, nxcc, sizeof(*dyn), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, dyn);
	for (xcc = 0; xcc < nxcc; xcc++)
		qf_get_dyn(test, q, xcc, &dyn[xcc], ctl + xcc * QT_DYN_CTL,
			   &len[xcc]);
	return dyn;
}

/*
 * What a process does next with a queue an image gave it, through the
 * real queue manager down to its family's update_mqd() on the restored
 * MQDs: a new CU mask on a compute queue, then the queue without its
 * ring, as UPDATE_QUEUE stops a queue (a new ring would need the GPU's
 * VM). Each must work as on a queue that was never dumped: the MQD is
 * then what the same updates make of one (outside the whitelist), and
 * the dynamic state the image put there is kept.
 */
static void qf_next_ops_on(struct kunit *test, struct kfd_process *p,
			   u32 qid, const char *what)
{
	struct queue *q = pqm_get_user_queue(&p->pqm, qid);
	u32 nxcc = kfd_criu_queue_num_xcc(q), len[2], len_after[2];
	struct kfd_criu_queue_dyn *dyn, *dyn_after;
	u8 *ctl, *ctl_after;
	struct qf_replay r;
	u32 xcc;
	int ret;

	KUNIT_ASSERT_LE(test, nxcc, ARRAY_SIZE(len));
	ctl = kunit_kcalloc(test, nxcc, QT_DYN_CTL, GFP_KERNEL);
	ctl_after = kunit_kcalloc(test, nxcc, QT_DYN_CTL, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctl);
	KUNIT_ASSERT_NOT_NULL(test, ctl_after);
	qf_replay_of(q, &r);
	if (r.cu_mask) {
		r.cu_mask = kunit_kmalloc_array(test, r.cu_mask_count / 32,
						sizeof(u32), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, r.cu_mask);
		memcpy((u32 *)r.cu_mask, q->cu_mask,
		       r.cu_mask_count / 32 * sizeof(u32));
	}
	r.next = true;
	dyn = qf_dyn_all(test, q, ctl, len);

	/* p->mutex as the ioctls hold it, and no assertion under it */
	if (q->properties.type == KFD_QUEUE_TYPE_COMPUTE) {
		mutex_lock(&p->mutex);
		ret = qf_set_next_cu_mask(p, qid);
		mutex_unlock(&p->mutex);
		KUNIT_EXPECT_EQ_MSG(test, ret, 0, "%s: queue %u", what, qid);
		KUNIT_EXPECT_EQ_MSG(test, q->cu_mask_count,
				    32 * ARRAY_SIZE(qf_next_cu_mask),
				    "%s: queue %u", what, qid);
	}
	mutex_lock(&p->mutex);
	ret = qf_stop_queue(p, q, qid);
	mutex_unlock(&p->mutex);
	KUNIT_EXPECT_EQ_MSG(test, ret, 0, "%s: queue %u", what, qid);
	KUNIT_EXPECT_EQ_MSG(test, q->properties.queue_address, 0,
			    "%s: queue %u", what, qid);
	KUNIT_EXPECT_FALSE_MSG(test, q->properties.is_active,
			       "%s: queue %u", what, qid);
	KUNIT_EXPECT_EQ_MSG(test, qf_stray_after(test, q, &r), 0,
			    "%s: queue %u: its MQD differs from a never-dumped queue's after the same updates",
			    what, qid);

	dyn_after = qf_dyn_all(test, q, ctl_after, len_after);
	for (xcc = 0; xcc < nxcc; xcc++) {
		KUNIT_EXPECT_MEMEQ_MSG(test, &dyn_after[xcc], &dyn[xcc],
				       sizeof(*dyn),
				       "%s: queue %u XCC %u: state lost",
				       what, qid, xcc);
		KUNIT_EXPECT_EQ(test, len_after[xcc], len[xcc]);
		KUNIT_EXPECT_MEMEQ(test, ctl_after + xcc * QT_DYN_CTL,
				   ctl + xcc * QT_DYN_CTL, len[xcc]);
	}
}

/* qf_next_ops_on() for every queue of @img, with the ordering guard off */
static void qf_next_ops(struct kunit *test, struct kfd_process *p,
			const struct kfd_criu_queues_image *img,
			const char *what)
{
	u32 i, qid;

	qf->guard_order = false;
	for (i = 0; i < img->num_queues; i++) {
		qid = le32_to_cpu(img->queues[i].queue_id);
		/* A missing queue: qf_check_restored() said so */
		if (pqm_get_user_queue(&p->pqm, qid))
			qf_next_ops_on(test, p, qid, what);
	}
	qf->guard_order = true;
}

/* Restores @e's stream, as it is now, into a fresh process; judges it. */
static bool qf_try_hostile(struct kunit *test, struct qf_env *e,
			   const char *what)
{
	struct kfd_criu_queues_image img = {};
	struct kfd_process *p = qf_process(test, e->nodes);
	u32 records;
	int ret;

	e->s->pos = 0;
	ret = qt_read_back(&e->s->io, &e->gpus, ARRAY_SIZE(qf_specs), &img,
			   &records);
	if (!ret)
		ret = qf_restore_img(p, &img, &e->st);
	if (!ret) {
		qf_check_restored(test, p, &img, &e->st, what);
		qf_next_ops(test, p, &img, what);
		mutex_lock(&p->mutex);
		kfd_criu_queues_unwind(p, &img);
		mutex_unlock(&p->mutex);
	} else {
		KUNIT_EXPECT_TRUE_MSG(test, kfd_criu_test_documented(ret),
				      "%s: undocumented error %d", what, ret);
	}
	qf_expect_nothing_left(test, &img, p, what, 0);
	kfd_criu_queues_image_free(&img);
	return !ret;
}

static bool qf_try_swept(struct kunit *test, void *e, const char *what)
{
	return qf_try_hostile(test, e, what);
}

/*
 * Hostile queue records through the real collection, validation and
 * restore on the fake GPUs: each field of the QUEUE records of the
 * two-XCC AQL queue, the SDMA queue and the GFX11 AQL queue, and of the
 * QUEUE_STATE records of the first XCC of the AQL queue and of the SDMA
 * queue, is set in turn to its boundary values with a good CRC. A
 * refused image must fail with an errno RESTORE documents and leave no
 * queue, id, doorbell or buffer hold; an accepted one must have created
 * each queue as its record says with the state its records carry, and
 * unwind to nothing.
 */
static void qt_test_hostile_queue_records(struct kunit *test)
{
	struct qf_env *e = qf_env_new(test);
	struct kfd_criu_test_sweep sw = {
		.s = e->s, .try_image = qf_try_swept, .ctx = e,
	};

	kfd_criu_test_sweep_record(test, &sw, KFD_CRIU_REC_QUEUE, 0,
				   qf_queue_fields, ARRAY_SIZE(qf_queue_fields));
	kfd_criu_test_sweep_record(test, &sw, KFD_CRIU_REC_QUEUE, 2,
				   qf_queue_fields, ARRAY_SIZE(qf_queue_fields));
	kfd_criu_test_sweep_record(test, &sw, KFD_CRIU_REC_QUEUE, 4,
				   qf_queue_fields, ARRAY_SIZE(qf_queue_fields));
	kfd_criu_test_sweep_record(test, &sw, KFD_CRIU_REC_QUEUE_STATE, 0,
				   qf_state_fields, ARRAY_SIZE(qf_state_fields));
	kfd_criu_test_sweep_record(test, &sw, KFD_CRIU_REC_QUEUE_STATE, 3,
				   qf_state_fields, ARRAY_SIZE(qf_state_fields));
	kfd_criu_test_sweep_report(test, &sw);

	/* The image itself is intact again and restores */
	KUNIT_EXPECT_TRUE(test, qf_try_hostile(test, e, "intact"));
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
	KUNIT_CASE_PARAM(qt_test_vram_mqd_flushed, qt_family_gen_params),
	KUNIT_CASE_PARAM(qt_test_restore_on_fakes, qf_gpu1_gen_params),
	KUNIT_CASE(qt_test_restore_unwinds_on_fakes),
	KUNIT_CASE(qt_test_restore_checks_target),
	KUNIT_CASE(qt_test_restore_without_room),
	KUNIT_CASE(qt_test_restore_without_sdma_slot),
	KUNIT_CASE(qt_test_snapshot_refusals),
	KUNIT_CASE(qt_test_hostile_queue_records),
	{}
};

static struct kunit_suite kfd_criu_queues_suite = {
	.name = "kfd_criu_queues",
	.test_cases = kfd_criu_queues_test_cases,
};

kunit_test_suite(kfd_criu_queues_suite);

/* The fake queue manager, for the ops-level tests of kfd_criu.c */
#include "kfd_criu_test_seams.h"

static void qf_fake_new_gfx10(struct kunit *test)
{
	qf_fake_new(test, QT_GFX10);
}

static unsigned int qf_cwsr_svm_taken(void)
{
	return qf->cwsr_svm_taken;
}

static void qf_fail_create(int err)
{
	qf->fail_step = QF_CREATE;
	qf->fail_at = qf->calls[QF_CREATE];
	qf->fail_errno = err;
}

const struct kfd_criu_queues_fakes kfd_criu_queues_fakes = {
	.fake_new = qf_fake_new_gfx10,
	.cwsr_svm_taken = qf_cwsr_svm_taken,
	.node = qf_node,
	.create = qf_create,
	.destroy = qf_destroy,
	.fail_create = qf_fail_create,
};
