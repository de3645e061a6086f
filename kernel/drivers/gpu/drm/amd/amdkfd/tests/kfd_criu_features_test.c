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
	{ "dump with KFD contexts", KFD_CRIU_FEAT(CONTEXTS), false, -EOPNOTSUPP,
	  "KFD contexts beside the primary one" },
	{ "restore into KFD contexts", KFD_CRIU_FEAT(CONTEXTS), true, -EBUSY,
	  "KFD contexts beside the primary one" },
	{ "dump with SIGBUS delay", KFD_CRIU_FEAT(SIGBUS_DELAY), false,
	  -EOPNOTSUPP, "a SIGBUS delay for poison" },
	{ "restore into SIGBUS delay", KFD_CRIU_FEAT(SIGBUS_DELAY), true, 0,
	  NULL },
	{ "dump after GPU page fault", KFD_CRIU_FEAT(GPU_PAGE_FAULT), false,
	  -EOPNOTSUPP, "a GPU page fault" },
	{ "dump with PTL disabled", KFD_CRIU_FEAT(PTL), false, -EOPNOTSUPP,
	  "PTL kept disabled" },
	{ "dump with profiler", KFD_CRIU_FEAT(PROFILER), false, -EBUSY,
	  "a GPU's profiler" },
	{ "restore into profiler", KFD_CRIU_FEAT(PROFILER), true, -EBUSY,
	  "a GPU's profiler" },
	{ "dump with metadata ring", KFD_CRIU_FEAT(METADATA_RING), false,
	  -EOPNOTSUPP, "a queue with a metadata ring" },
	{ "dump with MFMA precision", KFD_CRIU_FEAT(MFMA_PRECISION), false,
	  -EOPNOTSUPP, "the MFMA high-precision mode" },
	{ "restore into MFMA precision", KFD_CRIU_FEAT(MFMA_PRECISION), true,
	  -EBUSY, "the MFMA high-precision mode" },
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

/*
 * A process with a second KFD context (AMDKFD_IOC_CREATE_PROCESS gives the
 * mm one more kfd_process, whose id the primary's id_table holds) is
 * refused by name, by both ops, and so is the secondary itself; without
 * it the same process passes.
 */
/* The primary KFD process of its mm, with nothing else */
static struct kfd_process *ft_process(struct kunit *test)
{
	struct kfd_process *p;

	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	mutex_init(&p->mutex);
	mutex_init(&p->event_mutex);
	idr_init(&p->event_idr);
	mutex_init(&p->svms.lock);
	INIT_LIST_HEAD(&p->svms.list);
	INIT_LIST_HEAD(&p->pqm.queues);
	p->context_id = KFD_CONTEXT_ID_PRIMARY;
	ida_init(&p->id_table);
	/* For the log line that names the process */
	p->lead_thread = current;
	return p;
}

static void kfd_criu_test_secondary_context(struct kunit *test)
{
	struct kfd_process *p = ft_process(test);
	int id;

	mutex_lock(&p->mutex);
	KUNIT_EXPECT_EQ(test, kfd_criu_dump_supported_locked(p), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_restore_target_clean_locked(p), 0);

	id = ida_alloc_range(&p->id_table, KFD_CONTEXT_ID_MIN,
			     KFD_CONTEXT_ID_PRIMARY - 1, GFP_KERNEL);
	if (id >= 0) {
		KUNIT_EXPECT_EQ(test, kfd_criu_dump_supported_locked(p),
				-EOPNOTSUPP);
		KUNIT_EXPECT_EQ(test, kfd_criu_restore_target_clean_locked(p),
				-EBUSY);
		ida_free(&p->id_table, id);
	}
	KUNIT_EXPECT_GE(test, id, 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_dump_supported_locked(p), 0);

	p->context_id = KFD_CONTEXT_ID_MIN;
	KUNIT_EXPECT_EQ(test, kfd_criu_dump_supported_locked(p), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, kfd_criu_restore_target_clean_locked(p), -EBUSY);
	p->context_id = KFD_CONTEXT_ID_PRIMARY;
	mutex_unlock(&p->mutex);
}

/* What CHECKPOINT says of @p, under p->mutex as the op takes it */
static int ft_dump(struct kfd_process *p)
{
	int ret;

	mutex_lock(&p->mutex);
	ret = kfd_criu_dump_supported_locked(p);
	mutex_unlock(&p->mutex);
	return ret;
}

/*
 * The process state 7.3 added that the image does not carry is found
 * where 7.3 keeps it, and refused by name: a SIGBUS delay, a GPU page
 * fault, PTL kept disabled and a queue's metadata ring with
 * -EOPNOTSUPP, a held profiler with -EBUSY until it is released.
 */
static void ft_kvfree(void *ptr)
{
	kvfree(ptr);
}

/*
 * The MFMA high-precision mode: set_cache_memory_policy_v9() sets the bit
 * on GC 9.5.0 alone, for a process with the GPU's VM, and it counts there
 * alone.
 */
static void ft_mfma_precision(struct kunit *test, struct kfd_process *p,
			      struct kfd_process_device *pdd)
{
	struct amdgpu_device *adev;

	adev = kvzalloc_obj(*adev, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, adev);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, ft_kvfree, adev), 0);
	adev->ip_versions[GC_HWIP][0] = IP_VERSION(9, 5, 0);
	pdd->dev->adev = adev;
	pdd->drm_priv = adev;
	KUNIT_EXPECT_EQ(test, ft_dump(p), 0);

	pdd->qpd.sh_mem_config = SH_MEM_CONFIG__PRECISION_MODE_MASK;
	KUNIT_EXPECT_EQ(test, ft_dump(p), -EOPNOTSUPP);

	adev->ip_versions[GC_HWIP][0] = IP_VERSION(9, 4, 3);
	KUNIT_EXPECT_EQ(test, ft_dump(p), 0);
	adev->ip_versions[GC_HWIP][0] = IP_VERSION(9, 5, 0);
	pdd->drm_priv = NULL;
	KUNIT_EXPECT_EQ(test, ft_dump(p), 0);
	pdd->qpd.sh_mem_config = 0;
	pdd->dev->adev = NULL;
}

static void kfd_criu_test_new_state(struct kunit *test)
{
	struct kfd_process *p = ft_process(test);
	struct process_queue_node *pqn;
	struct kfd_process_device *pdd;
	struct kfd_node *node;

	pdd = kunit_kzalloc(test, sizeof(*pdd), GFP_KERNEL);
	node = kunit_kzalloc(test, sizeof(*node), GFP_KERNEL);
	pqn = kunit_kzalloc(test, sizeof(*pqn), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pdd);
	KUNIT_ASSERT_NOT_NULL(test, node);
	KUNIT_ASSERT_NOT_NULL(test, pqn);
	node->kfd = kunit_kzalloc(test, sizeof(*node->kfd), GFP_KERNEL);
	pqn->q = kunit_kzalloc(test, sizeof(*pqn->q), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, node->kfd);
	KUNIT_ASSERT_NOT_NULL(test, pqn->q);
	idr_init(&pdd->alloc_idr);
	pdd->dev = node;
	pdd->process = p;
	p->pdds[0] = pdd;
	p->n_pdds = 1;
	KUNIT_EXPECT_EQ(test, ft_dump(p), 0);

	atomic_set(&p->kfd_sigbus_delay_ms, 100);
	KUNIT_EXPECT_EQ(test, ft_dump(p), -EOPNOTSUPP);
	atomic_set(&p->kfd_sigbus_delay_ms, 0);

	p->gpu_page_fault = true;
	KUNIT_EXPECT_EQ(test, ft_dump(p), -EOPNOTSUPP);
	p->gpu_page_fault = false;

	pdd->ptl_disable_req = true;
	KUNIT_EXPECT_EQ(test, ft_dump(p), -EOPNOTSUPP);
	pdd->ptl_disable_req = false;

	node->kfd->profiler_process = p;
	KUNIT_EXPECT_EQ(test, ft_dump(p), -EBUSY);
	node->kfd->profiler_process = NULL;

	/* A queue is carried; its metadata ring is not */
	list_add(&pqn->process_queue_list, &p->pqm.queues);
	KUNIT_EXPECT_EQ(test, ft_dump(p), 0);
	pqn->q->properties.metadata_queue_size = SZ_4K;
	KUNIT_EXPECT_EQ(test, ft_dump(p), -EOPNOTSUPP);
	list_del(&pqn->process_queue_list);

	KUNIT_EXPECT_EQ(test, ft_dump(p), 0);
	ft_mfma_precision(test, p, pdd);
	idr_destroy(&pdd->alloc_idr);
}

static struct kunit_case kfd_criu_features_test_cases[] = {
	KUNIT_CASE_PARAM(kfd_criu_test_features, kfd_criu_feature_gen_params),
	KUNIT_CASE(kfd_criu_test_feature_table),
	KUNIT_CASE(kfd_criu_test_secondary_context),
	KUNIT_CASE(kfd_criu_test_new_state),
	{}
};

static struct kunit_suite kfd_criu_features_suite = {
	.name = "kfd_criu_features",
	.test_cases = kfd_criu_features_test_cases,
};

kunit_test_suite(kfd_criu_features_suite);
