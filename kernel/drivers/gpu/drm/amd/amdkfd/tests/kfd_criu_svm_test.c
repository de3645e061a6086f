// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: KUnit tests of the CRIU image-mode SVM glue
 *
 * Included at the end of kfd_criu_svm.c, so the static helpers are
 * reachable. Suite kfd_criu_svm covers the pure logic with synthetic
 * inputs: the access bitmaps of a range to the masks of its record, image
 * GPU masks to per-GPU data indices, the SET_ATTR list that recreates a
 * kept range, the GPUs the ranges need a VM on, record collection, a
 * round trip from bitmaps through a record to the attribute list, and
 * which ranges a retried RESUME may find in place. None of
 * it needs a GPU, a KFD process or an address space.
 */

#include <kunit/test.h>

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
	{}
};

static struct kunit_suite kfd_criu_svm_suite = {
	.name = "kfd_criu_svm",
	.test_cases = kfd_criu_svm_test_cases,
};

kunit_test_suites(&kfd_criu_svm_suite);
