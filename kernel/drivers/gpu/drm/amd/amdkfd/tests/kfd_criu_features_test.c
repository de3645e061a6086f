// SPDX-License-Identifier: GPL-2.0 OR MIT

/**
 * DOC: KUnit tests of the CRIU image-mode feature table
 *
 * Included at the end of kfd_criu_features.c, so the table and its static
 * helpers are reachable. Suite kfd_criu_features checks the verdict of
 * each op for sets of features, table-driven, and that every row of the
 * table has a name and matters to dump or restore.
 */

#include <kunit/test.h>

/**
 * struct kfd_criu_feature_case - a process's features and the verdict
 * @desc: case name
 * @present: BIT(&enum kfd_criu_feature) mask
 * @restore: checked for RESTORE rather than CHECKPOINT
 * @ret: expected return
 * @name: expected name of the refused feature, or NULL
 */
struct kfd_criu_feature_case {
	const char *desc;
	u32 present;
	bool restore;
	int ret;
	const char *name;
};

#define KFD_CRIU_FEAT(f) BIT(KFD_CRIU_FEAT_##f)

static const struct kfd_criu_feature_case kfd_criu_feature_cases[] = {
	{ "dump of nothing", 0, false, 0, NULL },
	{ "restore into nothing", 0, true, 0, NULL },
	{ "dump with a GPU VM", KFD_CRIU_FEAT(GPU_VM), false, 0, NULL },
	{ "dump with BOs", KFD_CRIU_FEAT(BOS), false, 0, NULL },
	{ "restore into a GPU VM", KFD_CRIU_FEAT(GPU_VM), true, -EBUSY,
	  "an acquired GPU VM" },
	{ "restore into BOs", KFD_CRIU_FEAT(BOS), true, -EBUSY, "buffer objects" },
	{ "dump with queues", KFD_CRIU_FEAT(QUEUES), false, 0, NULL },
	{ "restore into queues", KFD_CRIU_FEAT(QUEUES), true, -EBUSY,
	  "user queues" },
	{ "dump with SVM", KFD_CRIU_FEAT(SVM_RANGES), false, 0, NULL },
	{ "restore into SVM", KFD_CRIU_FEAT(SVM_RANGES), true, -EBUSY, "SVM ranges" },
	{ "dump with debugger", KFD_CRIU_FEAT(DEBUGGER), false, -EBUSY,
	  "an attached debugger" },
	{ "dump with pending runtime", KFD_CRIU_FEAT(RUNTIME_PENDING), false,
	  -EBUSY, "a pending runtime enable" },
	/* Every ROCm process has these two from hsa_init() on */
	{ "dump with GPU event page", KFD_CRIU_FEAT(GPU_EVENT_PAGE), false, 0,
	  NULL },
	{ "restore into GPU event page", KFD_CRIU_FEAT(GPU_EVENT_PAGE), true,
	  -EBUSY, "an event page in GPU memory" },
	{ "dump with scratch backing", KFD_CRIU_FEAT(SCRATCH_BACKING), false, 0,
	  NULL },
	{ "restore into scratch backing", KFD_CRIU_FEAT(SCRATCH_BACKING), true,
	  -EBUSY, "a scratch backing VA" },
	{ "dump on GFX8", KFD_CRIU_FEAT(PRE_GFX9), false, -EOPNOTSUPP,
	  "a GPU older than GFX9" },
	{ "restore on GFX8", KFD_CRIU_FEAT(PRE_GFX9), true, 0, NULL },
	{ "dump after queue reset", KFD_CRIU_FEAT(RESET_QUEUE), false,
	  -EOPNOTSUPP, "a queue the driver reset" },
	{ "dump after poison", KFD_CRIU_FEAT(POISON), false, -EOPNOTSUPP,
	  "consumed GPU memory poison" },
	{ "restore after poison", KFD_CRIU_FEAT(POISON), true, -EBUSY,
	  "consumed GPU memory poison" },
	{ "debugger before queue reset", KFD_CRIU_FEAT(RESET_QUEUE) |
	  KFD_CRIU_FEAT(DEBUGGER), false, -EBUSY, "an attached debugger" },
	{ "dump with events", KFD_CRIU_FEAT(EVENTS) | KFD_CRIU_FEAT(SIGNAL_PAGE) |
	  KFD_CRIU_FEAT(RUNTIME_ENABLED) | KFD_CRIU_FEAT(LEGACY_PAUSE), false, 0, NULL },
	{ "restore into events", KFD_CRIU_FEAT(EVENTS), true, -EBUSY, "events" },
	{ "restore into signal page", KFD_CRIU_FEAT(SIGNAL_PAGE), true, -EBUSY,
	  "a signal page" },
	{ "restore into enabled runtime", KFD_CRIU_FEAT(RUNTIME_ENABLED), true, -EBUSY,
	  "an enabled runtime" },
	{ "restore into legacy pause", KFD_CRIU_FEAT(LEGACY_PAUSE), true, -EBUSY,
	  "a legacy CRIU pause" },
	{ "first refused feature wins", KFD_CRIU_FEAT(SVM_RANGES) |
	  KFD_CRIU_FEAT(QUEUES) | KFD_CRIU_FEAT(POISON) |
	  KFD_CRIU_FEAT(GPU_EVENT_PAGE) | KFD_CRIU_FEAT(RESET_QUEUE) |
	  KFD_CRIU_FEAT(BOS), false, -EOPNOTSUPP, "a queue the driver reset" },
	{ "first refused restore feature wins", KFD_CRIU_FEAT(SVM_RANGES) |
	  KFD_CRIU_FEAT(QUEUES) | KFD_CRIU_FEAT(BOS), true, -EBUSY,
	  "buffer objects" },
};

static void kfd_criu_feature_case_desc(const struct kfd_criu_feature_case *c,
				       char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(kfd_criu_feature, kfd_criu_feature_cases,
		  kfd_criu_feature_case_desc);

static void kfd_criu_test_features(struct kunit *test)
{
	const struct kfd_criu_feature_case *c = test->param_value;
	const char *name = NULL;

	KUNIT_EXPECT_EQ(test, kfd_criu_check_features(c->present, c->restore, &name),
			c->ret);
	if (c->name)
		KUNIT_EXPECT_STREQ(test, name, c->name);
	else
		KUNIT_EXPECT_NULL(test, name);
}

/* Each feature has a name and matters to dump or restore. */
static void kfd_criu_test_feature_table(struct kunit *test)
{
	const struct kfd_criu_feature_desc *desc;
	unsigned int i;

	for (i = 0; i < KFD_CRIU_FEAT_NR; i++) {
		desc = &kfd_criu_features[i];
		KUNIT_EXPECT_NOT_NULL_MSG(test, desc->name, "feature %u", i);
		KUNIT_EXPECT_TRUE_MSG(test, desc->dump_err || desc->restore_busy,
				      "feature %u", i);
		KUNIT_EXPECT_TRUE_MSG(test, !desc->dump_err ||
				      desc->dump_err == -EOPNOTSUPP ||
				      desc->dump_err == -EBUSY,
				      "feature %u", i);
	}
}

static struct kunit_case kfd_criu_features_test_cases[] = {
	KUNIT_CASE_PARAM(kfd_criu_test_features, kfd_criu_feature_gen_params),
	KUNIT_CASE(kfd_criu_test_feature_table),
	{}
};

static struct kunit_suite kfd_criu_features_suite = {
	.name = "kfd_criu_features",
	.test_cases = kfd_criu_features_test_cases,
};

kunit_test_suite(kfd_criu_features_suite);
