// SPDX-License-Identifier: GPL-2.0 OR MIT

/**
 * DOC: KUnit tests of the CRIU image-mode SVM glue
 *
 * Included at the end of kfd_criu_svm.c, so the static helpers are
 * reachable. Suite kfd_criu_svm covers the pure logic with synthetic
 * inputs: the access bitmaps of a range to the masks of its record, image
 * GPU masks to per-GPU data indices, the SET_ATTR list that recreates a
 * kept range, the GPUs the ranges need a VM on, record collection, a
 * round trip from bitmaps through a record to the attribute list, and
 * which ranges a retried RESUME may find in place.
 *
 * It also runs the real dump, RESTORE and RESUME of ranges on a process
 * of the test: the ranges are struct svm_range in the process's interval
 * tree, SET_ATTR is a fake behind a KUnit static stub, and the VMAs that
 * RESUME checks are the test's own (kunit_vm_mmap()). None of it needs
 * a GPU.
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/mman.h>

#include "kfd_criu_test_stream.h"

#define KFD_CRIU_SVM_UNDEF	KFD_IOCTL_SVM_LOCATION_UNDEFINED
#define KFD_CRIU_SVM_SYSMEM	KFD_IOCTL_SVM_LOCATION_SYSMEM

/**
 * struct kfd_criu_svm_access_case - access bitmaps and their record
 * @desc: case name
 * @access: the range's ACCESS bitmap
 * @aip: the range's ACCESS_IN_PLACE bitmap
 * @supported: the GPUs with SVM support
 * @num_gpus: GPUs of the process
 * @ret: expected return
 * @rec_access: expected access mask, when @ret is 0
 * @rec_aip: expected access_in_place mask
 * @rec_none: expected no_access mask
 */
struct kfd_criu_svm_access_case {
	const char *desc;
	u64 access;
	u64 aip;
	u64 supported;
	u32 num_gpus;
	int ret;
	u64 rec_access;
	u64 rec_aip;
	u64 rec_none;
};

static const struct kfd_criu_svm_access_case kfd_criu_svm_access_cases[] = {
	{ "XNACK off default: no access is explicit", 0, 0, 0x3, 2,
	  0, 0, 0, 0x3 },
	{ "XNACK on default: access for all", 0x3, 0, 0x3, 2,
	  0, 0x3, 0, 0 },
	{ "one of each", 0x1, 0x2, 0x7, 3, 0, 0x1, 0x2, 0x4 },
	{ "GPU without SVM support is in no mask", 0x1, 0, 0x5, 3,
	  0, 0x1, 0, 0x4 },
	{ "supported bits beyond the GPUs are ignored", 0, 0x1, ~0ULL, 2,
	  0, 0, 0x1, 0x2 },
	{ "no GPUs", 0, 0, 0, 0, 0, 0, 0, 0 },
	{ "64 GPUs", ~0ULL, 0, ~0ULL, 64, 0, ~0ULL, 0, 0 },
	{ "more than 64 GPUs", 0, 0, ~0ULL, 65, -EOPNOTSUPP },
	{ "GPU in both bitmaps", 0x1, 0x1, 0x1, 1, -EOPNOTSUPP },
	{ "access beyond the GPUs", 0x4, 0, 0x7, 2, -EOPNOTSUPP },
	{ "access in place beyond the GPUs", 0, 0x4, 0x7, 2, -EOPNOTSUPP },
	{ "unsupported GPU with access", 0x2, 0, 0x1, 2, -EOPNOTSUPP },
	{ "unsupported GPU with access in place", 0, 0x2, 0x1, 2,
	  -EOPNOTSUPP },
};

static void kfd_criu_svm_access_desc(const struct kfd_criu_svm_access_case *c,
				     char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(kfd_criu_svm_access, kfd_criu_svm_access_cases,
		  kfd_criu_svm_access_desc);

static void kfd_criu_test_svm_access(struct kunit *test)
{
	const struct kfd_criu_svm_access_case *c = test->param_value;
	struct kfd_criu_svm_rec rec;
	u64 a, aip, none;

	memset(&rec, 0xa5, sizeof(rec));
	KUNIT_ASSERT_EQ(test, kfd_criu_svm_access_to_rec(c->access, c->aip,
							 c->supported,
							 c->num_gpus, &rec),
			c->ret);
	if (c->ret)
		return;
	a = le64_to_cpu(rec.access);
	aip = le64_to_cpu(rec.access_in_place);
	none = le64_to_cpu(rec.no_access);
	KUNIT_EXPECT_EQ(test, a, c->rec_access);
	KUNIT_EXPECT_EQ(test, aip, c->rec_aip);
	KUNIT_EXPECT_EQ(test, none, c->rec_none);
	/* What kfd_criu_validate_svm_range() insists on */
	KUNIT_EXPECT_EQ(test, a & aip, 0);
	KUNIT_EXPECT_EQ(test, a & none, 0);
	KUNIT_EXPECT_EQ(test, aip & none, 0);
}

/**
 * struct kfd_criu_svm_remap_case - an image GPU mask and where it goes
 * @desc: case name
 * @mask: BIT(image GPU index)
 * @target: the per-GPU data index of each image GPU
 * @num_gpus: entries in @target
 * @want: expected BIT(per-GPU data index)
 */
struct kfd_criu_svm_remap_case {
	const char *desc;
	u64 mask;
	u32 target[4];
	u32 num_gpus;
	u64 want;
};

static const struct kfd_criu_svm_remap_case kfd_criu_svm_remap_cases[] = {
	{ "identity", 0x5, { 0, 1, 2 }, 3, 0x5 },
	{ "swapped", 0x1, { 1, 0 }, 2, 0x2 },
	{ "onto a process with more GPUs", 0x3, { 3, 1 }, 2, 0xa },
	{ "empty", 0, { 2, 0, 1 }, 3, 0 },
	{ "bits beyond the GPUs are dropped", 0x6, { 1 }, 1, 0 },
	{ "reversed", 0xe, { 3, 2, 1, 0 }, 4, 0x7 },
};

static void kfd_criu_svm_remap_desc(const struct kfd_criu_svm_remap_case *c,
				    char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(kfd_criu_svm_remap, kfd_criu_svm_remap_cases,
		  kfd_criu_svm_remap_desc);

static void kfd_criu_test_svm_remap(struct kunit *test)
{
	const struct kfd_criu_svm_remap_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, kfd_criu_svm_remap_mask(c->mask, c->target,
						      c->num_gpus),
			c->want);
}

/* Most attributes a case expects */
#define KFD_CRIU_SVM_TEST_ATTRS	8

/**
 * struct kfd_criu_svm_attrs_case - a kept range and its SET_ATTR list
 * @desc: case name
 * @range: the kept range
 * @num_pdds: GPUs of the process; their gpu_ids are 0x1000 + index
 * @nattr: expected number of attributes
 * @attrs: expected attributes, in order
 */
struct kfd_criu_svm_attrs_case {
	const char *desc;
	struct kfd_criu_svm_range range;
	u32 num_pdds;
	u32 nattr;
	struct kfd_ioctl_svm_attribute attrs[KFD_CRIU_SVM_TEST_ATTRS];
};

#define KFD_CRIU_SVM_A(t, v) { .type = KFD_IOCTL_SVM_ATTR_##t, .value = (v) }

static const struct kfd_criu_svm_attrs_case kfd_criu_svm_attrs_cases[] = {
	{
		.desc = "defaults, one GPU without access",
		.range = { .start = 0x10000, .size = 0x2000, .no_access = 0x1,
			   .preferred_loc = KFD_CRIU_SVM_UNDEF,
			   .prefetch_loc = KFD_CRIU_SVM_UNDEF,
			   .flags = KFD_IOCTL_SVM_FLAG_HOST_ACCESS |
				    KFD_IOCTL_SVM_FLAG_COHERENT,
			   .granularity = 9 },
		.num_pdds = 1,
		.nattr = 5,
		.attrs = {
			KFD_CRIU_SVM_A(PREFERRED_LOC, KFD_CRIU_SVM_UNDEF),
			KFD_CRIU_SVM_A(SET_FLAGS, 0x3),
			KFD_CRIU_SVM_A(CLR_FLAGS, ~0x3U),
			KFD_CRIU_SVM_A(GRANULARITY, 9),
			KFD_CRIU_SVM_A(NO_ACCESS, 0x1000),
		},
	},
	{
		.desc = "prefetch to a GPU, each access kind",
		.range = { .start = 0x20000, .size = 0x1000, .access = 0x4,
			   .access_in_place = 0x1, .no_access = 0x2,
			   .preferred_loc = 0x1002, .prefetch_loc = 0x1000,
			   .flags = KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED,
			   .granularity = 0 },
		.num_pdds = 3,
		.nattr = 8,
		.attrs = {
			KFD_CRIU_SVM_A(PREFERRED_LOC, 0x1002),
			KFD_CRIU_SVM_A(PREFETCH_LOC, 0x1000),
			KFD_CRIU_SVM_A(SET_FLAGS,
				       KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED),
			KFD_CRIU_SVM_A(CLR_FLAGS,
				       ~KFD_IOCTL_SVM_FLAG_GPU_ALWAYS_MAPPED),
			KFD_CRIU_SVM_A(GRANULARITY, 0),
			KFD_CRIU_SVM_A(ACCESS_IN_PLACE, 0x1000),
			KFD_CRIU_SVM_A(NO_ACCESS, 0x1001),
			KFD_CRIU_SVM_A(ACCESS, 0x1002),
		},
	},
	{
		.desc = "system memory, no flags, GPU in no mask",
		.range = { .start = 0x30000, .size = 0x1000, .access = 0x2,
			   .preferred_loc = KFD_CRIU_SVM_SYSMEM,
			   .prefetch_loc = KFD_CRIU_SVM_SYSMEM,
			   .granularity = 0x3f },
		.num_pdds = 2,
		.nattr = 6,
		.attrs = {
			KFD_CRIU_SVM_A(PREFERRED_LOC, KFD_CRIU_SVM_SYSMEM),
			KFD_CRIU_SVM_A(PREFETCH_LOC, KFD_CRIU_SVM_SYSMEM),
			KFD_CRIU_SVM_A(SET_FLAGS, 0),
			KFD_CRIU_SVM_A(CLR_FLAGS, ~0U),
			KFD_CRIU_SVM_A(GRANULARITY, 0x3f),
			KFD_CRIU_SVM_A(ACCESS, 0x1001),
		},
	},
	{
		.desc = "no GPUs",
		.range = { .start = 0x40000, .size = 0x1000,
			   .preferred_loc = KFD_CRIU_SVM_UNDEF,
			   .prefetch_loc = KFD_CRIU_SVM_UNDEF },
		.num_pdds = 0,
		.nattr = 4,
		.attrs = {
			KFD_CRIU_SVM_A(PREFERRED_LOC, KFD_CRIU_SVM_UNDEF),
			KFD_CRIU_SVM_A(SET_FLAGS, 0),
			KFD_CRIU_SVM_A(CLR_FLAGS, ~0U),
			KFD_CRIU_SVM_A(GRANULARITY, 0),
		},
	},
};

static void kfd_criu_svm_attrs_desc(const struct kfd_criu_svm_attrs_case *c,
				    char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(kfd_criu_svm_attrs, kfd_criu_svm_attrs_cases,
		  kfd_criu_svm_attrs_desc);

/* A list with room for @room attributes, poisoned, and the gpu_ids */
static struct kfd_ioctl_svm_attribute *
kfd_criu_svm_test_alloc(struct kunit *test, u32 room, u32 **gpu_ids)
{
	struct kfd_ioctl_svm_attribute *attrs;
	u32 i;

	attrs = kunit_kcalloc(test, room, sizeof(*attrs), GFP_KERNEL);
	*gpu_ids = kunit_kcalloc(test, KFD_CRIU_MAX_GPUS, sizeof(**gpu_ids),
				 GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, attrs);
	KUNIT_ASSERT_NOT_NULL(test, *gpu_ids);
	memset(attrs, 0xa5, room * sizeof(*attrs));
	for (i = 0; i < KFD_CRIU_MAX_GPUS; i++)
		(*gpu_ids)[i] = 0x1000 + i;
	return attrs;
}

static void kfd_criu_test_svm_attrs(struct kunit *test)
{
	const struct kfd_criu_svm_attrs_case *c = test->param_value;
	struct kfd_ioctl_svm_attribute *attrs;
	u32 *gpu_ids;
	u32 i, n;

	attrs = kfd_criu_svm_test_alloc(test, KFD_CRIU_SVM_MAX_ATTRS,
					&gpu_ids);
	n = kfd_criu_svm_build_attrs(&c->range, gpu_ids, c->num_pdds, attrs);
	KUNIT_ASSERT_EQ(test, n, c->nattr);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ_MSG(test, attrs[i].type, c->attrs[i].type,
				    "attribute %u", i);
		KUNIT_EXPECT_EQ_MSG(test, attrs[i].value, c->attrs[i].value,
				    "attribute %u", i);
	}
}

/* Every GPU of a full process in a mask: the list has room for all. */
static void kfd_criu_test_svm_attrs_max(struct kunit *test)
{
	struct kfd_criu_svm_range r = {
		.start = 0x1000, .size = 0x1000, .access = ~0ULL,
		.preferred_loc = 0x1000, .prefetch_loc = 0x1000,
	};
	struct kfd_ioctl_svm_attribute *attrs;
	u32 *gpu_ids;
	u32 i, n;

	attrs = kfd_criu_svm_test_alloc(test, KFD_CRIU_SVM_MAX_ATTRS + 1,
					&gpu_ids);
	n = kfd_criu_svm_build_attrs(&r, gpu_ids, KFD_CRIU_MAX_GPUS, attrs);
	KUNIT_EXPECT_EQ(test, n, KFD_CRIU_SVM_MAX_ATTRS);
	/* Nothing written past the list's room */
	KUNIT_EXPECT_EQ(test, attrs[KFD_CRIU_SVM_MAX_ATTRS].type, 0xa5a5a5a5);
	for (i = 0; i < KFD_CRIU_MAX_GPUS; i++)
		KUNIT_EXPECT_EQ(test, attrs[5 + i].value, 0x1000 + i);
}

static void kfd_criu_svm_test_gpus(struct kfd_criu_gpus_image *gpus,
				   struct kfd_criu_gpu_rec *recs, u32 n)
{
	u32 i;

	memset(recs, 0, n * sizeof(*recs));
	for (i = 0; i < n; i++) {
		recs[i].gpu_id = cpu_to_le32(0x2000 + i);
		recs[i].num_xcc = cpu_to_le32(1);
	}
	gpus->gpus = recs;
	gpus->num_gpus = n;
	gpus->gpus_read = n;
}

static void kfd_criu_svm_test_rec(struct kfd_criu_svm_rec *rec, u64 start,
				  u64 access, u64 aip, u64 none, u32 pref,
				  u32 prefetch)
{
	memset(rec, 0, sizeof(*rec));
	rec->start = cpu_to_le64(start);
	rec->size = cpu_to_le64(PAGE_SIZE);
	rec->access = cpu_to_le64(access);
	rec->access_in_place = cpu_to_le64(aip);
	rec->no_access = cpu_to_le64(none);
	rec->preferred_loc = cpu_to_le32(pref);
	rec->prefetch_loc = cpu_to_le32(prefetch);
}

static void kfd_criu_test_svm_needed(struct kunit *test)
{
	struct kfd_criu_svm_image img = {};
	struct kfd_criu_gpus_image gpus;
	struct kfd_criu_gpu_rec recs[6];
	struct kfd_criu_svm_rec ranges[3];

	kfd_criu_svm_test_gpus(&gpus, recs, ARRAY_SIZE(recs));
	img.ranges = ranges;
	img.num_ranges = 0;
	KUNIT_EXPECT_EQ(test, kfd_criu_svm_needed_gpus(&img, &gpus), 0);

	/* No access needs no VM; system memory names no GPU */
	kfd_criu_svm_test_rec(&ranges[0], PAGE_SIZE, 0, 0, 0x3f,
			      KFD_CRIU_SVM_SYSMEM, KFD_CRIU_SVM_UNDEF);
	img.num_ranges = 1;
	KUNIT_EXPECT_EQ(test, kfd_criu_svm_needed_gpus(&img, &gpus), 0);

	kfd_criu_svm_test_rec(&ranges[1], 4 * PAGE_SIZE, 0x1, 0x2, 0,
			      0x2003, KFD_CRIU_SVM_UNDEF);
	kfd_criu_svm_test_rec(&ranges[2], 8 * PAGE_SIZE, 0, 0, 0,
			      KFD_CRIU_SVM_UNDEF, 0x2005);
	img.num_ranges = 3;
	KUNIT_EXPECT_EQ(test, kfd_criu_svm_needed_gpus(&img, &gpus), 0x2b);
}

static void kfd_criu_test_svm_collect(struct kunit *test)
{
	struct kfd_criu_record rec = {
		.type = KFD_CRIU_REC_SVM_RANGE,
		.length = sizeof(struct kfd_criu_svm_rec),
	};
	struct kfd_criu_svm_image img = {};
	struct kfd_criu_bos_image bos = {};
	struct kfd_criu_gpus_image gpus;
	struct kfd_criu_gpu_rec recs[2];
	struct kfd_criu_svm_rec r[2];

	kfd_criu_svm_test_gpus(&gpus, recs, ARRAY_SIZE(recs));
	kfd_criu_svm_test_rec(&r[0], 0x10000, 0x1, 0, 0x2, 0x2001,
			      KFD_CRIU_SVM_UNDEF);
	kfd_criu_svm_test_rec(&r[1], 0x20000, 0, 0x2, 0x1,
			      KFD_CRIU_SVM_SYSMEM, 0x2000);

	KUNIT_EXPECT_EQ(test, kfd_criu_svm_prepare(&img,
						   KFD_CRIU_MAX_SVM_RANGES + 1),
			-EINVAL);
	KUNIT_ASSERT_EQ(test, kfd_criu_svm_prepare(&img, 2), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_svm_prepare(&img, 2), -EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_svm_validate(&img, &gpus, &bos),
			-EINVAL);

	rec.length--;
	KUNIT_EXPECT_EQ(test, kfd_criu_svm_collect(&img, &rec, &r[0]),
			-EINVAL);
	rec.length++;
	rec.type = KFD_CRIU_REC_BO;
	KUNIT_EXPECT_EQ(test, kfd_criu_svm_collect(&img, &rec, &r[0]),
			-EINVAL);
	rec.type = KFD_CRIU_REC_SVM_RANGE;

	/* Out of order: collected, then refused as a set */
	KUNIT_EXPECT_EQ(test, kfd_criu_svm_collect(&img, &rec, &r[1]), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_svm_collect(&img, &rec, &r[0]), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_svm_collect(&img, &rec, &r[0]),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_svm_validate(&img, &gpus, &bos),
			-EINVAL);

	memcpy(img.ranges, r, sizeof(r));
	KUNIT_EXPECT_EQ(test, kfd_criu_svm_validate(&img, &gpus, &bos), 0);
	kfd_criu_svm_image_free(&img);
	KUNIT_EXPECT_NULL(test, img.ranges);
	KUNIT_EXPECT_EQ(test, img.num_ranges, 0);
}

/* The attribute a list gives @gpu_id, or 0 for none */
static u32 kfd_criu_svm_test_access_of(const struct kfd_ioctl_svm_attribute *a,
				       u32 n, u32 gpu_id)
{
	u32 i, type = 0;

	for (i = 0; i < n; i++) {
		switch (a[i].type) {
		case KFD_IOCTL_SVM_ATTR_ACCESS:
		case KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE:
		case KFD_IOCTL_SVM_ATTR_NO_ACCESS:
			if (a[i].value == gpu_id)
				type = a[i].type;
			break;
		}
	}
	return type;
}

/*
 * Dump on a process with GPUs 0x2000..0x2002, restore onto a process with
 * four GPUs where image GPU i went to per-GPU data 3 - i: each GPU keeps
 * the access the dump saw, the GPU the image does not have gets none.
 */
static void kfd_criu_test_svm_round_trip(struct kunit *test)
{
	static const u32 want[3] = {
		KFD_IOCTL_SVM_ATTR_ACCESS, KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE,
		KFD_IOCTL_SVM_ATTR_NO_ACCESS,
	};
	struct kfd_criu_gpus_restore *st;
	struct kfd_criu_gpus_image gpus;
	struct kfd_criu_gpu_rec recs[3];
	struct kfd_criu_svm_range range;
	struct kfd_ioctl_svm_attribute *attrs;
	struct kfd_criu_svm_rec rec;
	u64 named = 0;
	u32 *gpu_ids;
	u32 i, n;

	st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, st);
	attrs = kfd_criu_svm_test_alloc(test, KFD_CRIU_SVM_MAX_ATTRS,
					&gpu_ids);
	kfd_criu_svm_test_gpus(&gpus, recs, ARRAY_SIZE(recs));
	for (i = 0; i < 3; i++)
		st->target[i] = 3 - i;
	for (i = 0; i < 4; i++) {
		st->user_gpu_id[i] = i ? 0x2000 + 3 - i : 0x5000;
		gpu_ids[i] = st->user_gpu_id[i];
	}

	kfd_criu_svm_test_rec(&rec, 0x7000000, 0, 0, 0, 0x2002,
			      KFD_CRIU_SVM_UNDEF);
	KUNIT_ASSERT_EQ(test, kfd_criu_svm_access_to_rec(0x1, 0x2, 0x7, 3,
							 &rec), 0);
	KUNIT_ASSERT_EQ(test, kfd_criu_validate_svm_range(&rec, recs, 3), 0);
	KUNIT_ASSERT_EQ(test, kfd_criu_svm_rec_to_range(&rec, &gpus, st,
							&range, &named), 0);
	KUNIT_EXPECT_EQ(test, named, 0xe);
	KUNIT_EXPECT_EQ(test, range.preferred_loc, 0x2002);
	KUNIT_EXPECT_EQ(test, range.start, 0x7000000);
	KUNIT_EXPECT_EQ(test, range.size, PAGE_SIZE);

	n = kfd_criu_svm_build_attrs(&range, gpu_ids, 4, attrs);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ_MSG(test,
				    kfd_criu_svm_test_access_of(attrs, n,
								0x2000 + i),
				    want[i], "image GPU %u", i);
	KUNIT_EXPECT_EQ(test, kfd_criu_svm_test_access_of(attrs, n, 0x5000), 0);
}

/* Ranges that SET_ATTR or kfd_ioctl_svm() would refuse fail the restore. */
static void kfd_criu_test_svm_rec_refused(struct kunit *test)
{
	struct kfd_criu_gpus_restore *st;
	struct kfd_criu_gpus_image gpus;
	struct kfd_criu_gpu_rec recs[1];
	struct kfd_criu_svm_range range;
	struct kfd_criu_svm_rec rec;
	u64 named = 0;

	st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, st);
	kfd_criu_svm_test_gpus(&gpus, recs, ARRAY_SIZE(recs));

	kfd_criu_svm_test_rec(&rec, 0, 0x1, 0, 0, KFD_CRIU_SVM_UNDEF,
			      KFD_CRIU_SVM_UNDEF);
	KUNIT_EXPECT_EQ(test, kfd_criu_svm_rec_to_range(&rec, &gpus, st,
							&range, &named),
			-EINVAL);
	if (PAGE_SIZE > 4096) {
		rec.start = cpu_to_le64(4096);
		KUNIT_EXPECT_EQ(test, kfd_criu_svm_rec_to_range(&rec, &gpus,
								st, &range,
								&named),
				-EINVAL);
	}
	rec.start = cpu_to_le64(PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, kfd_criu_svm_rec_to_range(&rec, &gpus, st,
							&range, &named), 0);
	KUNIT_EXPECT_EQ(test, named, 0x1);
}

/* A retried RESUME skips the overlap check only where it applied before. */
static void kfd_criu_test_svm_may_exist(struct kunit *test)
{
	struct kfd_criu_svm_resume *kept;

	kept = kunit_kzalloc(test, struct_size(kept, ranges, 4), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, kept);
	kept->num_ranges = 4;

	/* First RESUME: nothing may exist */
	KUNIT_EXPECT_FALSE(test, kfd_criu_svm_may_exist(kept, 0));
	KUNIT_EXPECT_FALSE(test, kfd_criu_svm_may_exist(kept, 3));

	/* Range 2 failed before SET_ATTR changed anything, say */
	kept->applied = 2;
	KUNIT_EXPECT_TRUE(test, kfd_criu_svm_may_exist(kept, 0));
	KUNIT_EXPECT_TRUE(test, kfd_criu_svm_may_exist(kept, 1));
	KUNIT_EXPECT_FALSE(test, kfd_criu_svm_may_exist(kept, 2));
	KUNIT_EXPECT_FALSE(test, kfd_criu_svm_may_exist(kept, 3));

	/* Range 2 failed in SET_ATTR: it may be there in part */
	kept->partial = true;
	KUNIT_EXPECT_TRUE(test, kfd_criu_svm_may_exist(kept, 2));
	KUNIT_EXPECT_FALSE(test, kfd_criu_svm_may_exist(kept, 3));
}

/*
 * SVM ranges of a process of the test: struct svm_range in the process's
 * interval tree and list, as SET_ATTR leaves them, and a fake
 * SET_ATTR (through the stub in kfd_criu_svm.c) that records what RESUME
 * asks for, makes a copy of the argument checks of the real one
 * (kfd_ioctl_svm(), svm_range_set_attr_mm(), svm_range_check_attr()),
 * inserts the range as the real one does, and fails one chosen call. The
 * VMAs RESUME checks are real: the test maps them in an address space of
 * its own (kunit_vm_mmap()).
 */
#define SV_GPUS		3
#define SV_MAX_CALLS	8

/**
 * struct sv_call - a SET_ATTR call the fake saw
 * @start: the range's start
 * @size: its size
 * @n: attributes in @attrs
 * @attrs: the attributes
 */
struct sv_call {
	u64 start;
	u64 size;
	u32 n;
	struct kfd_ioctl_svm_attribute attrs[KFD_CRIU_SVM_MAX_ATTRS];
};

/**
 * struct sv_fake - the fake SET_ATTR of the running test
 * @test: the running test
 * @calls: the calls made, @num_calls of them
 * @num_calls: entries in @calls
 * @fail_at: the call (by number) that fails with -EIO, after it inserted
 *	its range, or %UINT_MAX
 * @refused: calls the real SET_ATTR would have refused
 */
struct sv_fake {
	struct kunit *test;
	struct sv_call calls[SV_MAX_CALLS];
	u32 num_calls;
	u32 fail_at;
	u32 refused;
};

/* The stub runs in the test's thread: the fake is its private data. */
static struct sv_fake *sv_get(void)
{
	return kunit_get_current_test()->priv;
}

/* A range of @p as SET_ATTR inserts it; freed with the process. */
static struct svm_range *sv_insert(struct kfd_process *p, u64 start, u64 size)
{
	struct svm_range *prange;

	prange = kzalloc_obj(*prange, GFP_KERNEL);
	if (!prange)
		return NULL;
	prange->start = start >> PAGE_SHIFT;
	prange->last = ((start + size) >> PAGE_SHIFT) - 1;
	prange->npages = size >> PAGE_SHIFT;
	prange->it_node.start = prange->start;
	prange->it_node.last = prange->last;
	prange->preferred_loc = KFD_IOCTL_SVM_LOCATION_UNDEFINED;
	prange->prefetch_loc = KFD_IOCTL_SVM_LOCATION_UNDEFINED;
	interval_tree_insert(&prange->it_node, &p->svms.objects);
	list_add_tail(&prange->list, &p->svms.list);
	return prange;
}

/* A GPU SET_ATTR takes: one of @p's, with SVM support */
static bool sv_gpu_ok(struct kfd_process *p, u32 gpu_id)
{
	int i = kfd_process_gpuidx_from_gpuid(p, gpu_id);

	return i >= 0 && test_bit(i, p->svms.bitmap_supported);
}

/* What kfd_ioctl_svm() and svm_range_check_attr() refuse */
static bool sv_attr_ok(struct kfd_process *p,
		       const struct kfd_ioctl_svm_attribute *a)
{
	switch (a->type) {
	case KFD_IOCTL_SVM_ATTR_PREFERRED_LOC:
		return a->value == KFD_IOCTL_SVM_LOCATION_SYSMEM ||
		       a->value == KFD_IOCTL_SVM_LOCATION_UNDEFINED ||
		       sv_gpu_ok(p, a->value);
	case KFD_IOCTL_SVM_ATTR_PREFETCH_LOC:
		return a->value == KFD_IOCTL_SVM_LOCATION_SYSMEM ||
		       sv_gpu_ok(p, a->value);
	case KFD_IOCTL_SVM_ATTR_ACCESS:
	case KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE:
	case KFD_IOCTL_SVM_ATTR_NO_ACCESS:
		return sv_gpu_ok(p, a->value);
	case KFD_IOCTL_SVM_ATTR_SET_FLAGS:
	case KFD_IOCTL_SVM_ATTR_CLR_FLAGS:
	case KFD_IOCTL_SVM_ATTR_GRANULARITY:
		return true;
	default:
		return false;
	}
}

/*
 * What svm_range_set_attr_mm() and, below it, svm_range_set_attr() check
 * before they change anything, but for the VMAs, which RESUME checks
 * itself: the address space is the process's, it has a GPU VM.
 */
static bool sv_call_ok(struct kfd_process *p, struct mm_struct *mm,
		       const struct sv_call *c)
{
	u32 i;

	if (mm != p->mm || !p->kgd_process_info)
		return false;
	if (!c->start || !c->size || !PAGE_ALIGNED(c->start) ||
	    !PAGE_ALIGNED(c->size))
		return false;
	for (i = 0; i < c->n; i++)
		if (!sv_attr_ok(p, &c->attrs[i]))
			return false;
	return true;
}

static int sv_set_attr(struct kfd_process *p, struct mm_struct *mm,
		       const struct kfd_criu_svm_range *r, u32 n,
		       struct kfd_ioctl_svm_attribute *attrs)
{
	struct sv_fake *sv_fake = sv_get();
	u32 call = sv_fake->num_calls;
	struct sv_call *c;

	if (call >= SV_MAX_CALLS || n > KFD_CRIU_SVM_MAX_ATTRS)
		return -E2BIG;
	c = &sv_fake->calls[sv_fake->num_calls++];
	c->start = r->start;
	c->size = r->size;
	c->n = n;
	memcpy(c->attrs, attrs, n * sizeof(*attrs));
	if (!sv_call_ok(p, mm, c)) {
		sv_fake->refused++;
		return -EINVAL;
	}
	mutex_lock(&p->svms.lock);
	if (!interval_tree_iter_first(&p->svms.objects, r->start >> PAGE_SHIFT,
				      (r->start + r->size - 1) >> PAGE_SHIFT) &&
	    !sv_insert(p, r->start, r->size)) {
		mutex_unlock(&p->svms.lock);
		return -ENOMEM;
	}
	mutex_unlock(&p->svms.lock);
	return call == sv_fake->fail_at ? -EIO : 0;
}

static void sv_deferred_work(struct work_struct *work)
{
}

/* Takes every range and the kept ranges off @p. */
static void sv_process_clear(struct kfd_process *p)
{
	struct svm_range *prange, *tmp;

	list_for_each_entry_safe(prange, tmp, &p->svms.list, list) {
		interval_tree_remove(&prange->it_node, &p->svms.objects);
		list_del(&prange->list);
		kfree(prange);
	}
	kvfree(p->criu_svm);
	p->criu_svm = NULL;
}

static void sv_process_release(void *data)
{
	sv_process_clear(data);
}

/* A process with SV_GPUS GPUs, gpu_ids 0x2000 up, SVM on the first two */
static struct kfd_process *sv_process(struct kunit *test)
{
	struct kfd_process_device *pdd;
	struct kfd_process *p;
	u32 i;

	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	mutex_init(&p->mutex);
	mutex_init(&p->svms.lock);
	p->svms.objects = RB_ROOT_CACHED;
	INIT_LIST_HEAD(&p->svms.list);
	INIT_LIST_HEAD(&p->svms.deferred_range_list);
	INIT_WORK(&p->svms.deferred_list_work, sv_deferred_work);
	spin_lock_init(&p->svms.deferred_list_lock);
	p->lead_thread = current;
	/* A process with a GPU VM */
	p->kgd_process_info = kunit_kzalloc(test,
					    sizeof(struct amdkfd_process_info),
					    GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p->kgd_process_info);
	for (i = 0; i < SV_GPUS; i++) {
		pdd = kunit_kzalloc(test, sizeof(*pdd), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, pdd);
		pdd->dev = kunit_kzalloc(test, sizeof(*pdd->dev), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, pdd->dev);
		/* The topology's id; the process knows the GPU by another */
		pdd->dev->id = 0x3000 + i;
		pdd->process = p;
		pdd->user_gpu_id = 0x2000 + i;
		p->pdds[i] = pdd;
		p->n_pdds = i + 1;
	}
	bitmap_set(p->svms.bitmap_supported, 0, 2);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							sv_process_release, p),
			0);
	return p;
}

static struct svm_range *sv_range(struct kunit *test, struct kfd_process *p,
				  u64 start, u64 pages, u64 access, u64 aip)
{
	struct svm_range *prange;

	mutex_lock(&p->svms.lock);
	prange = sv_insert(p, start, pages << PAGE_SHIFT);
	mutex_unlock(&p->svms.lock);
	KUNIT_ASSERT_NOT_NULL(test, prange);
	bitmap_from_arr64(prange->bitmap_access, &access, MAX_GPU_INSTANCE);
	bitmap_from_arr64(prange->bitmap_aip, &aip, MAX_GPU_INSTANCE);
	return prange;
}

static int sv_snapshot(struct kfd_process *p,
		       const struct kfd_criu_gpus_image *gpus,
		       const struct kfd_criu_bos_image *bos,
		       struct kfd_criu_svm_image *img)
{
	int ret;

	mutex_lock(&p->mutex);
	ret = kfd_criu_svm_snapshot(p, gpus, bos, img);
	mutex_unlock(&p->mutex);
	return ret;
}

/*
 * The ranges of a process are written in address order whatever order
 * SET_ATTR inserted them in, with their attributes, every GPU with SVM
 * support in exactly one access mask, and their locations as the
 * process's gpu_ids. What a record cannot say, a range over a BO, and an
 * unmap still in flight fail the dump with nothing kept.
 */
static void kfd_criu_test_svm_snapshot_ranges(struct kunit *test)
{
	struct kfd_criu_gpu_rec recs[SV_GPUS];
	struct kfd_criu_gpus_image gpus;
	struct kfd_criu_bos_image bos = {};
	struct kfd_criu_bo_rec bo = {};
	struct kfd_criu_svm_image img;
	struct svm_range *r1, *r2;
	struct kfd_process *p;

	kfd_criu_svm_test_gpus(&gpus, recs, SV_GPUS);
	p = sv_process(test);
	r2 = sv_range(test, p, 0x20000000, 1, 0, 0);
	r1 = sv_range(test, p, 0x10000000, 16, BIT(0), BIT(1));
	r1->preferred_loc = 0x2001;
	r1->prefetch_loc = KFD_IOCTL_SVM_LOCATION_SYSMEM;
	r1->flags = KFD_IOCTL_SVM_FLAG_HOST_ACCESS |
		    KFD_IOCTL_SVM_FLAG_COHERENT;
	r1->granularity = 9;
	KUNIT_EXPECT_EQ(test, kfd_criu_svm_count(p), 2);

	KUNIT_ASSERT_EQ(test, sv_snapshot(p, &gpus, &bos, &img), 0);
	KUNIT_ASSERT_EQ(test, img.num_ranges, 2);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(img.ranges[0].start), 0x10000000);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(img.ranges[0].size), 16 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(img.ranges[0].access), BIT(0));
	KUNIT_EXPECT_EQ(test, le64_to_cpu(img.ranges[0].access_in_place),
			BIT(1));
	KUNIT_EXPECT_EQ(test, le64_to_cpu(img.ranges[0].no_access), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(img.ranges[0].preferred_loc), 0x2001);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(img.ranges[0].prefetch_loc),
			KFD_IOCTL_SVM_LOCATION_SYSMEM);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(img.ranges[0].flags), r1->flags);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(img.ranges[0].granularity), 9);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(img.ranges[1].start), 0x20000000);
	/* GPU 2 has no SVM support: in no mask */
	KUNIT_EXPECT_EQ(test, le64_to_cpu(img.ranges[1].no_access), 0x3);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(img.ranges[1].preferred_loc),
			KFD_IOCTL_SVM_LOCATION_UNDEFINED);
	kfd_criu_svm_image_free(&img);

	/* A BO mapped over the first range */
	bo.va = cpu_to_le64(0x10004000);
	bo.size = cpu_to_le64(PAGE_SIZE);
	bo.mapped_gpus = cpu_to_le64(BIT(0));
	bos.bos = &bo;
	bos.num_bos = 1;
	KUNIT_EXPECT_EQ(test, sv_snapshot(p, &gpus, &bos, &img), -EOPNOTSUPP);
	KUNIT_EXPECT_NULL(test, img.ranges);
	bos.num_bos = 0;

	/* A location that is no GPU of the process */
	r1->preferred_loc = 0x4242;
	KUNIT_EXPECT_EQ(test, sv_snapshot(p, &gpus, &bos, &img), -EOPNOTSUPP);
	r1->preferred_loc = 0x2001;
	/* A GPU without SVM support that has access */
	set_bit(2, r2->bitmap_access);
	KUNIT_EXPECT_EQ(test, sv_snapshot(p, &gpus, &bos, &img), -EOPNOTSUPP);
	clear_bit(2, r2->bitmap_access);
	/* A GPU in both bitmaps */
	set_bit(0, r1->bitmap_aip);
	KUNIT_EXPECT_EQ(test, sv_snapshot(p, &gpus, &bos, &img), -EOPNOTSUPP);
	clear_bit(0, r1->bitmap_aip);
	KUNIT_EXPECT_NULL(test, img.ranges);

	/* An unmap the deferred worker has not finished */
	list_add(&r2->deferred_list, &p->svms.deferred_range_list);
	KUNIT_EXPECT_EQ(test, sv_snapshot(p, &gpus, &bos, &img), -EBUSY);
	list_del(&r2->deferred_list);
	KUNIT_EXPECT_EQ(test, sv_snapshot(p, &gpus, &bos, &img), 0);
	kfd_criu_svm_image_free(&img);
}

/**
 * struct sv_env - a restored process and the ranges it keeps
 * @p: the process; image GPU i was placed on its GPU 1 - i
 * @img: the image's two ranges, at @va[0] (16 pages) and @va[1] (1 page)
 * @gpus: the image's GPU records
 * @recs: their storage
 * @st: the placement
 * @va: where the test mapped memory for the ranges
 */
struct sv_env {
	struct kfd_process *p;
	struct kfd_criu_svm_image img;
	struct kfd_criu_gpus_image gpus;
	struct kfd_criu_gpu_rec recs[2];
	struct kfd_criu_gpus_restore st;
	unsigned long va[2];
};

static void sv_env_release(void *data)
{
	struct sv_env *e = data;

	kfd_criu_svm_image_free(&e->img);
}

static struct sv_env *sv_env_new(struct kunit *test)
{
	struct sv_fake *sv_fake;
	struct sv_env *e;
	u32 i;

	e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e);
	sv_fake = kunit_kzalloc(test, sizeof(*sv_fake), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sv_fake);
	sv_fake->test = test;
	sv_fake->fail_at = UINT_MAX;
	test->priv = sv_fake;
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, sv_env_release,
							e), 0);
	kunit_activate_static_stub(test, kfd_criu_svm_set_attr, sv_set_attr);

	e->va[0] = kunit_vm_mmap(test, NULL, 0, 16 * PAGE_SIZE,
				 PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, 0);
	e->va[1] = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ,
				 MAP_PRIVATE | MAP_ANONYMOUS, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(e->va[0]) || !e->va[0]);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(e->va[1]) || !e->va[1]);
	KUNIT_ASSERT_NOT_NULL(test, current->mm);

	e->p = sv_process(test);
	/* RESUME runs in CRIU; here the test's address space is the process's */
	e->p->mm = current->mm;
	kfd_criu_svm_test_gpus(&e->gpus, e->recs, 2);
	for (i = 0; i < 2; i++) {
		e->st.target[i] = 1 - i;
		e->st.user_gpu_id[i] = e->p->pdds[i]->user_gpu_id;
	}
	e->st.user_gpu_id[2] = e->p->pdds[2]->user_gpu_id;
	KUNIT_ASSERT_EQ(test, kfd_criu_svm_prepare(&e->img, 2), 0);
	e->img.ranges_read = 2;
	/* Sorted by start, as a valid image has them */
	i = e->va[0] > e->va[1];
	kfd_criu_svm_test_rec(&e->img.ranges[i], e->va[0], 0x1, 0x2, 0,
			      0x2000, 0x2001);
	e->img.ranges[i].size = cpu_to_le64(16 * PAGE_SIZE);
	e->img.ranges[i].granularity = cpu_to_le32(4);
	kfd_criu_svm_test_rec(&e->img.ranges[!i], e->va[1], 0, 0, 0x3,
			      KFD_CRIU_SVM_SYSMEM, KFD_CRIU_SVM_UNDEF);
	e->img.ranges[!i].flags = cpu_to_le32(KFD_IOCTL_SVM_FLAG_GPU_RO);
	return e;
}

static int sv_restore(struct sv_env *e)
{
	int ret;

	mutex_lock(&e->p->mutex);
	ret = kfd_criu_svm_restore(e->p, &e->img, &e->gpus, &e->st);
	if (!ret)
		kfd_criu_svm_keep(e->p, &e->img);
	mutex_unlock(&e->p->mutex);
	return ret;
}

static int sv_resume(struct kfd_process *p, struct mm_struct *mm)
{
	int ret;

	mutex_lock(&p->mutex);
	ret = kfd_criu_svm_resume(p, mm);
	mutex_unlock(&p->mutex);
	return ret;
}

/* The attribute of @type in call @c, or ~0 for none */
static u32 sv_attr(const struct sv_call *c, u32 type)
{
	u32 i;

	for (i = 0; i < c->n; i++)
		if (c->attrs[i].type == type)
			return c->attrs[i].value;
	return ~0U;
}

/*
 * RESTORE translates the ranges to the restored process and keeps them;
 * RESUME applies them in address order through SET_ATTR, with the access
 * and locations moved to the GPUs the image GPUs were placed on, and then
 * frees them. A SET_ATTR that fails leaves the ranges kept and RESUME
 * retryable: the retry goes on from the range that failed.
 */
static void kfd_criu_test_svm_resume_ranges(struct kunit *test)
{
	struct sv_env *e = sv_env_new(test);
	struct sv_fake *sv_fake = test->priv;
	struct kfd_process *p = e->p;
	u32 first = e->va[0] > e->va[1];
	const struct sv_call *c;

	KUNIT_ASSERT_EQ(test, sv_restore(e), 0);
	KUNIT_ASSERT_NOT_NULL(test, p->criu_svm);
	KUNIT_EXPECT_NULL(test, e->img.kept);
	KUNIT_EXPECT_EQ(test, p->criu_svm->ranges[first].access, BIT(1));
	KUNIT_EXPECT_EQ(test, p->criu_svm->ranges[first].access_in_place,
			BIT(0));
	KUNIT_EXPECT_EQ(test, p->criu_svm->ranges[first].preferred_loc, 0x2001);
	KUNIT_EXPECT_EQ(test, p->criu_svm->ranges[first].prefetch_loc, 0x2000);

	/* The second range fails in SET_ATTR, after it was inserted */
	sv_fake->fail_at = 1;
	KUNIT_EXPECT_EQ(test, sv_resume(p, current->mm), -EIO);
	KUNIT_ASSERT_NOT_NULL(test, p->criu_svm);
	KUNIT_EXPECT_EQ(test, p->criu_svm->applied, 1);
	KUNIT_EXPECT_TRUE(test, p->criu_svm->partial);
	sv_fake->fail_at = UINT_MAX;
	KUNIT_EXPECT_EQ(test, sv_resume(p, current->mm), 0);
	KUNIT_EXPECT_NULL(test, p->criu_svm);
	KUNIT_ASSERT_EQ(test, sv_fake->num_calls, 3);
	KUNIT_EXPECT_EQ(test, sv_fake->calls[2].start, sv_fake->calls[1].start);
	KUNIT_EXPECT_LT(test, sv_fake->calls[0].start, sv_fake->calls[1].start);
	KUNIT_EXPECT_EQ(test, kfd_criu_svm_count(p), 2);

	c = &sv_fake->calls[first ? 1 : 0];
	KUNIT_EXPECT_EQ(test, c->start, e->va[0]);
	KUNIT_EXPECT_EQ(test, c->size, 16 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, sv_attr(c, KFD_IOCTL_SVM_ATTR_ACCESS), 0x2001);
	KUNIT_EXPECT_EQ(test, sv_attr(c, KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE),
			0x2000);
	KUNIT_EXPECT_EQ(test, sv_attr(c, KFD_IOCTL_SVM_ATTR_PREFERRED_LOC),
			0x2001);
	KUNIT_EXPECT_EQ(test, sv_attr(c, KFD_IOCTL_SVM_ATTR_PREFETCH_LOC),
			0x2000);
	KUNIT_EXPECT_EQ(test, sv_attr(c, KFD_IOCTL_SVM_ATTR_GRANULARITY), 4);
	c = &sv_fake->calls[first ? 0 : 1];
	KUNIT_EXPECT_EQ(test, c->start, e->va[1]);
	KUNIT_EXPECT_EQ(test, kfd_criu_svm_test_access_of(c->attrs, c->n,
							  0x2000),
			KFD_IOCTL_SVM_ATTR_NO_ACCESS);
	KUNIT_EXPECT_EQ(test, kfd_criu_svm_test_access_of(c->attrs, c->n,
							  0x2001),
			KFD_IOCTL_SVM_ATTR_NO_ACCESS);
	KUNIT_EXPECT_EQ(test, kfd_criu_svm_test_access_of(c->attrs, c->n,
							  0x2002), 0);
	KUNIT_EXPECT_EQ(test, sv_attr(c, KFD_IOCTL_SVM_ATTR_PREFETCH_LOC), ~0U);
	KUNIT_EXPECT_EQ(test, sv_attr(c, KFD_IOCTL_SVM_ATTR_SET_FLAGS),
			KFD_IOCTL_SVM_FLAG_GPU_RO);

	/* Nothing kept: RESUME has nothing to do */
	KUNIT_EXPECT_EQ(test, sv_resume(p, NULL), 0);
}

/*
 * RESUME checks every range before it applies any: memory the process
 * does not have, or an SVM range there already, fails it with nothing
 * applied and the ranges kept. RESTORE refuses a range on a GPU without
 * SVM support here and ranges for a process without a GPU VM, and keeps
 * nothing then.
 */
static void kfd_criu_test_svm_resume_refuses(struct kunit *test)
{
	struct sv_env *e = sv_env_new(test);
	struct sv_fake *sv_fake = test->priv;
	struct kfd_process *p = e->p;
	u64 saved;

	KUNIT_ASSERT_EQ(test, sv_restore(e), 0);
	KUNIT_EXPECT_EQ(test, sv_resume(p, NULL), -ESRCH);

	saved = p->criu_svm->ranges[1].start;
	p->criu_svm->ranges[1].start = PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, sv_resume(p, current->mm), -EFAULT);
	p->criu_svm->ranges[1].start = saved;

	sv_range(test, p, e->va[1], 1, 0, 0);
	KUNIT_EXPECT_EQ(test, sv_resume(p, current->mm), -EEXIST);
	KUNIT_EXPECT_EQ(test, sv_fake->num_calls, 0);
	KUNIT_EXPECT_NOT_NULL(test, p->criu_svm);
	KUNIT_EXPECT_EQ(test, p->criu_svm->applied, 0);

	mutex_lock(&p->mutex);
	kvfree(p->criu_svm);
	p->criu_svm = NULL;
	mutex_unlock(&p->mutex);

	/* Image GPU 0 went to GPU 2, which has no SVM support here */
	e->st.target[0] = 2;
	KUNIT_EXPECT_EQ(test, sv_restore(e), -EOPNOTSUPP);
	KUNIT_EXPECT_NULL(test, e->img.kept);
	KUNIT_EXPECT_NULL(test, p->criu_svm);
	e->st.target[0] = 1;
	p->kgd_process_info = NULL;
	KUNIT_EXPECT_EQ(test, sv_restore(e), -EINVAL);
	KUNIT_EXPECT_NULL(test, p->criu_svm);
}

/* Writes the SVM records of @img to @s, between a header and END. */
static int sv_write(struct kfd_criu_test_stream *s,
		    const struct kfd_criu_svm_image *img)
{
	struct kfd_criu_image_writer w;
	int ret;

	ret = kfd_criu_test_begin_image(s, &w);
	if (!ret)
		ret = kfd_criu_svm_write(&w, img);
	if (!ret)
		ret = kfd_criu_image_write_end(&w);
	return ret;
}

/* Reads @s back as RESTORE does: collected, then validated as a set. */
static int sv_read_back(struct kfd_criu_test_stream *s, u32 num_ranges,
			const struct kfd_criu_gpus_image *gpus,
			struct kfd_criu_svm_image *out)
{
	struct kfd_criu_bos_image bos = {};
	struct kfd_criu_image_reader r;
	struct kfd_criu_svm_rec buf;
	struct kfd_criu_record rec;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = kfd_criu_test_open_image(s, &r);
	if (!ret)
		ret = kfd_criu_svm_prepare(out, num_ranges);
	while (!ret &&
	       (ret = kfd_criu_test_next_record(&r, &rec, &buf, sizeof(buf))) > 0)
		ret = kfd_criu_svm_collect(out, &rec, &buf);
	if (!ret)
		ret = kfd_criu_svm_validate(out, gpus, &bos);
	return ret;
}

/**
 * struct sv_sweep - what each hostile SVM image is restored into
 * @e: the process and its placement
 * @s: the stream
 * @reached: accepted images whose RESUME called SET_ATTR
 */
struct sv_sweep {
	struct sv_env *e;
	struct kfd_criu_test_stream *s;
	unsigned int reached;
};

/*
 * Restores the hostile image into the process and resumes it. Refused,
 * it must be with a documented errno and keep nothing. Accepted, RESUME
 * may fail only as it documents for the process's memory, and SET_ATTR
 * must not be asked for anything the real one refuses. The process is
 * cleared after.
 */
static bool sv_try_image(struct kunit *test, void *ctx, const char *what)
{
	struct sv_fake *sv_fake = test->priv;
	struct sv_sweep *v = ctx;
	struct kfd_criu_svm_image img;
	struct sv_env *e = v->e;
	int ret, resumed;

	ret = sv_read_back(v->s, e->img.num_ranges, &e->gpus, &img);
	if (!ret) {
		swap(img, e->img);
		ret = sv_restore(e);
		swap(img, e->img);
	}
	/* Handed to the process, or freed by the failed RESTORE */
	KUNIT_EXPECT_NULL(test, img.kept);
	kfd_criu_svm_image_free(&img);
	if (ret) {
		KUNIT_EXPECT_TRUE_MSG(test, kfd_criu_test_documented(ret),
				      "%s: undocumented error %d", what, ret);
		KUNIT_EXPECT_NULL_MSG(test, e->p->criu_svm, "%s", what);
		return false;
	}
	resumed = sv_resume(e->p, current->mm);
	KUNIT_EXPECT_TRUE_MSG(test, !resumed || resumed == -EFAULT ||
			      resumed == -EEXIST, "%s: RESUME %d", what,
			      resumed);
	KUNIT_EXPECT_EQ_MSG(test, sv_fake->refused, 0,
			    "%s: SET_ATTR would refuse it", what);
	v->reached += !!sv_fake->num_calls;
	sv_fake->refused = 0;
	sv_fake->num_calls = 0;
	mutex_lock(&e->p->mutex);
	sv_process_clear(e->p);
	mutex_unlock(&e->p->mutex);
	return true;
}

#define SV_REC(f)	offsetof(struct kfd_criu_svm_rec, f)

static const struct kfd_criu_test_field sv_fields[] = {
	{ "start", SV_REC(start), 8 },
	{ "size", SV_REC(size), 8 },
	{ "access", SV_REC(access), 8 },
	{ "access_in_place", SV_REC(access_in_place), 8 },
	{ "no_access", SV_REC(no_access), 8 },
	{ "preferred_loc", SV_REC(preferred_loc), 4 },
	{ "prefetch_loc", SV_REC(prefetch_loc), 4 },
	{ "flags", SV_REC(flags), 4 },
	{ "granularity", SV_REC(granularity), 4 },
	{ "reserved", SV_REC(reserved), 4 },
	{ "reserved2", SV_REC(reserved2), 4 },
};

/*
 * Issue 22's sweep for SVM_RANGE records: each field of each record is
 * set to each boundary value, with a good CRC, and the image goes
 * through the real collection, validation, RESTORE and RESUME. A refusal
 * must use a documented errno and keep nothing; every range an accepted
 * image gives SET_ATTR must pass the fake's copy of the argument checks
 * of the real SET_ATTR, and some must get that far.
 */
static void kfd_criu_test_svm_hostile_records(struct kunit *test)
{
	struct kfd_criu_test_stream *s = kfd_criu_test_stream_new(test);
	struct sv_env *e = sv_env_new(test);
	struct kfd_criu_test_sweep sw;
	struct sv_sweep v;
	u32 n;

	KUNIT_ASSERT_EQ(test, sv_write(s, &e->img), 0);
	v = (struct sv_sweep){ .e = e, .s = s };
	sw = (struct kfd_criu_test_sweep){ .s = s, .try_image = sv_try_image,
					   .ctx = &v };
	for (n = 0; n < e->img.num_ranges; n++)
		kfd_criu_test_sweep_record(test, &sw, KFD_CRIU_REC_SVM_RANGE, n,
					   sv_fields, ARRAY_SIZE(sv_fields));
	kfd_criu_test_sweep_report(test, &sw);
	kunit_info(test, "%u accepted images reached SET_ATTR\n", v.reached);
	KUNIT_EXPECT_GT(test, v.reached, 0);
}

static struct kunit_case kfd_criu_svm_test_cases[] = {
	KUNIT_CASE_PARAM(kfd_criu_test_svm_access,
			 kfd_criu_svm_access_gen_params),
	KUNIT_CASE_PARAM(kfd_criu_test_svm_remap,
			 kfd_criu_svm_remap_gen_params),
	KUNIT_CASE_PARAM(kfd_criu_test_svm_attrs,
			 kfd_criu_svm_attrs_gen_params),
	KUNIT_CASE(kfd_criu_test_svm_attrs_max),
	KUNIT_CASE(kfd_criu_test_svm_needed),
	KUNIT_CASE(kfd_criu_test_svm_collect),
	KUNIT_CASE(kfd_criu_test_svm_round_trip),
	KUNIT_CASE(kfd_criu_test_svm_rec_refused),
	KUNIT_CASE(kfd_criu_test_svm_may_exist),
	KUNIT_CASE(kfd_criu_test_svm_snapshot_ranges),
	KUNIT_CASE(kfd_criu_test_svm_resume_ranges),
	KUNIT_CASE(kfd_criu_test_svm_resume_refuses),
	KUNIT_CASE(kfd_criu_test_svm_hostile_records),
	{}
};

static struct kunit_suite kfd_criu_svm_suite = {
	.name = "kfd_criu_svm",
	.test_cases = kfd_criu_svm_test_cases,
};

kunit_test_suites(&kfd_criu_svm_suite);

/* The seam of kfd_criu_svm.c, for the ops-level tests of kfd_criu.c */
#include "kfd_criu_test_seams.h"

const struct kfd_criu_svm_seams kfd_criu_svm_seams = {
	.set_attr = kfd_criu_svm_set_attr,
};
