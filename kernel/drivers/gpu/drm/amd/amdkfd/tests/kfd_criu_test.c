// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: KUnit tests of the CRIU image mode ops
 *
 * Included at the end of kfd_criu.c, so the static helpers are reachable.
 * Suite kfd_criu_state steps the state machine through every (state, op)
 * pair. Suite kfd_criu_ops covers the rest of the pure logic: argument
 * checks, the feature table, errno mapping of the stream I/O, the
 * collection and set validation of restore records, and a write/read round
 * trip of an events image through a memory buffer. None of it needs a GPU
 * or a KFD process.
 */

#include <kunit/test.h>

/**
 * struct kfd_criu_state_case - one arc of the state machine
 * @cur: state before the op
 * @op: KFD_CRIU_OP_*
 * @ret: expected return
 * @next: expected state after a successful op
 * @desc: case name
 */
struct kfd_criu_state_case {
	enum kfd_criu_state cur;
	u32 op;
	int ret;
	enum kfd_criu_state next;
	const char *desc;
};

#define KFD_CRIU_ARC(c, o, r, n) {					\
	.cur = KFD_CRIU_STATE_##c, .op = KFD_CRIU_OP_##o, .ret = r,	\
	.next = KFD_CRIU_STATE_##n, .desc = #c " + " #o,		\
}

static const struct kfd_criu_state_case kfd_criu_state_cases[] = {
	KFD_CRIU_ARC(RUNNING, PROCESS_INFO, 0, PAUSED),
	KFD_CRIU_ARC(RUNNING, CHECKPOINT, -EBADFD, RUNNING),
	KFD_CRIU_ARC(RUNNING, UNPAUSE, -EBADFD, RUNNING),
	KFD_CRIU_ARC(RUNNING, RESTORE, 0, RESTORED),
	KFD_CRIU_ARC(RUNNING, RESUME, -EBADFD, RUNNING),
	KFD_CRIU_ARC(PAUSED, PROCESS_INFO, 0, PAUSED),
	KFD_CRIU_ARC(PAUSED, CHECKPOINT, 0, PAUSED),
	KFD_CRIU_ARC(PAUSED, UNPAUSE, 0, RUNNING),
	KFD_CRIU_ARC(PAUSED, RESTORE, -EBUSY, PAUSED),
	KFD_CRIU_ARC(PAUSED, RESUME, -EBADFD, PAUSED),
	KFD_CRIU_ARC(RESTORED, PROCESS_INFO, -EBADFD, RESTORED),
	KFD_CRIU_ARC(RESTORED, CHECKPOINT, -EBADFD, RESTORED),
	KFD_CRIU_ARC(RESTORED, UNPAUSE, -EBADFD, RESTORED),
	KFD_CRIU_ARC(RESTORED, RESTORE, -EBUSY, RESTORED),
	KFD_CRIU_ARC(RESTORED, RESUME, 0, RUNNING),
};

static void kfd_criu_state_case_desc(const struct kfd_criu_state_case *c,
				     char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(kfd_criu_state, kfd_criu_state_cases, kfd_criu_state_case_desc);

static void kfd_criu_test_state_arc(struct kunit *test)
{
	const struct kfd_criu_state_case *c = test->param_value;
	enum kfd_criu_state next = c->cur;

	KUNIT_EXPECT_EQ(test, kfd_criu_next_state(c->cur, c->op, &next), c->ret);
	/* A refused op leaves the state alone */
	KUNIT_EXPECT_EQ(test, next, c->ret ? c->cur : c->next);
}

/* Every pair is in the table exactly once, so no arc goes untested. */
static void kfd_criu_test_state_table_complete(struct kunit *test)
{
	unsigned int seen[KFD_CRIU_STATE_RESTORED + 1][KFD_CRIU_OP_RESUME + 1] = {};
	const struct kfd_criu_state_case *c;
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(kfd_criu_state_cases); i++) {
		c = &kfd_criu_state_cases[i];
		seen[c->cur][c->op]++;
	}
	for (i = 0; i <= KFD_CRIU_STATE_RESTORED; i++)
		for (j = 0; j <= KFD_CRIU_OP_RESUME; j++)
			KUNIT_EXPECT_EQ_MSG(test, seen[i][j], 1, "state %u op %u", i, j);
}

static struct kunit_case kfd_criu_state_test_cases[] = {
	KUNIT_CASE_PARAM(kfd_criu_test_state_arc, kfd_criu_state_gen_params),
	KUNIT_CASE(kfd_criu_test_state_table_complete),
	{}
};

static struct kunit_suite kfd_criu_state_suite = {
	.name = "kfd_criu_state",
	.test_cases = kfd_criu_state_test_cases,
};

/**
 * struct kfd_criu_args_case - an ioctl argument block and its fate
 * @desc: case name
 * @mutate: turns a zeroed argument block into the case
 * @requested: expected kfd_criu_image_requested()
 * @ret: expected kfd_criu_check_args() when @requested
 */
struct kfd_criu_args_case {
	const char *desc;
	void (*mutate)(struct kfd_ioctl_criu_args *args);
	bool requested;
	int ret;
};

static void kfd_criu_args_none(struct kfd_ioctl_criu_args *args)
{
}

static void kfd_criu_args_pad(struct kfd_ioctl_criu_args *args)
{
	args->legacy_pad = 0xdeadbeef;
}

static void kfd_criu_args_outputs(struct kfd_ioctl_criu_args *args)
{
	args->image_size = 1234;
	args->format_version = 1;
	args->image_fd = 3;
}

static void kfd_criu_args_image(struct kfd_ioctl_criu_args *args)
{
	args->flags = KFD_CRIU_FLAG_IMAGE;
	args->legacy_pad = 0xdeadbeef;
	args->op = KFD_CRIU_OP_RESUME;
}

static void kfd_criu_args_unknown_flag(struct kfd_ioctl_criu_args *args)
{
	args->flags = KFD_CRIU_FLAG_IMAGE | BIT(31);
}

static void kfd_criu_args_no_image_flag(struct kfd_ioctl_criu_args *args)
{
	args->flags = BIT(1);
}

static void kfd_criu_args_reserved(struct kfd_ioctl_criu_args *args)
{
	args->reserved[3] = 1;
}

static void kfd_criu_args_gpu_map(struct kfd_ioctl_criu_args *args)
{
	args->flags = KFD_CRIU_FLAG_IMAGE;
	args->gpu_map_ptr = 0x1000;
	args->num_gpu_map = 1;
}

static void kfd_criu_args_num_gpu_map(struct kfd_ioctl_criu_args *args)
{
	args->num_gpu_map = 1;
}

static void kfd_criu_args_legacy_field(struct kfd_ioctl_criu_args *args)
{
	args->flags = KFD_CRIU_FLAG_IMAGE;
	args->priv_data = 0x1000;
}

static void kfd_criu_args_bad_op(struct kfd_ioctl_criu_args *args)
{
	args->flags = KFD_CRIU_FLAG_IMAGE;
	args->op = KFD_CRIU_OP_RESUME + 1;
}

static const struct kfd_criu_args_case kfd_criu_args_cases[] = {
	{ "zero-filled old struct", kfd_criu_args_none, false, 0 },
	{ "garbage in old tail padding", kfd_criu_args_pad, false, 0 },
	{ "stale outputs and image_fd", kfd_criu_args_outputs, false, 0 },
	{ "image mode", kfd_criu_args_image, true, 0 },
	{ "unknown flag", kfd_criu_args_unknown_flag, true, -EINVAL },
	{ "flags without image", kfd_criu_args_no_image_flag, true, -EINVAL },
	{ "reserved set", kfd_criu_args_reserved, true, -EINVAL },
	{ "gpu map", kfd_criu_args_gpu_map, true, -EINVAL },
	{ "gpu map count only", kfd_criu_args_num_gpu_map, true, -EINVAL },
	{ "legacy field in image mode", kfd_criu_args_legacy_field, true, -EINVAL },
	{ "unknown op", kfd_criu_args_bad_op, true, -EINVAL },
};

static void kfd_criu_args_case_desc(const struct kfd_criu_args_case *c,
				    char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(kfd_criu_args, kfd_criu_args_cases, kfd_criu_args_case_desc);

static void kfd_criu_test_args(struct kunit *test)
{
	const struct kfd_criu_args_case *c = test->param_value;
	struct kfd_ioctl_criu_args args = {};

	c->mutate(&args);
	KUNIT_EXPECT_EQ(test, kfd_criu_image_requested(&args), c->requested);
	if (c->requested)
		KUNIT_EXPECT_EQ(test, kfd_criu_check_args(&args), c->ret);
}

/* The layout is ABI: new fields start at the old struct's size. */
static void kfd_criu_test_args_layout(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, offsetof(struct kfd_ioctl_criu_args, legacy_pad), 52);
	KUNIT_EXPECT_EQ(test, offsetof(struct kfd_ioctl_criu_args, flags), 56);
	KUNIT_EXPECT_EQ(test, offsetof(struct kfd_ioctl_criu_args, image_fd), 60);
	KUNIT_EXPECT_EQ(test, offsetof(struct kfd_ioctl_criu_args, image_size), 64);
	KUNIT_EXPECT_EQ(test, offsetof(struct kfd_ioctl_criu_args, format_version), 72);
	KUNIT_EXPECT_EQ(test, offsetof(struct kfd_ioctl_criu_args, num_gpu_map), 76);
	KUNIT_EXPECT_EQ(test, offsetof(struct kfd_ioctl_criu_args, gpu_map_ptr), 80);
	KUNIT_EXPECT_EQ(test, offsetof(struct kfd_ioctl_criu_args, reserved), 88);
	KUNIT_EXPECT_EQ(test, sizeof(struct kfd_ioctl_criu_args), 120);
}

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
	{ "dump with a GPU VM", KFD_CRIU_FEAT(GPU_VM), false, -EOPNOTSUPP,
	  "an acquired GPU VM" },
	{ "dump with BOs", KFD_CRIU_FEAT(BOS), false, -EOPNOTSUPP, "buffer objects" },
	{ "dump with queues", KFD_CRIU_FEAT(QUEUES), false, -EOPNOTSUPP, "user queues" },
	{ "dump with SVM", KFD_CRIU_FEAT(SVM_RANGES), false, -EOPNOTSUPP, "SVM ranges" },
	{ "dump with debugger", KFD_CRIU_FEAT(DEBUGGER), false, -EOPNOTSUPP,
	  "an attached debugger" },
	{ "dump with events", KFD_CRIU_FEAT(EVENTS) | KFD_CRIU_FEAT(SIGNAL_PAGE) |
	  KFD_CRIU_FEAT(RUNTIME_ENABLED) | KFD_CRIU_FEAT(LEGACY_PAUSE), false, 0, NULL },
	{ "restore into events", KFD_CRIU_FEAT(EVENTS), true, -EBUSY, "events" },
	{ "restore into signal page", KFD_CRIU_FEAT(SIGNAL_PAGE), true, -EBUSY,
	  "a signal page" },
	{ "restore into enabled runtime", KFD_CRIU_FEAT(RUNTIME_ENABLED), true, -EBUSY,
	  "an enabled runtime" },
	{ "restore into legacy pause", KFD_CRIU_FEAT(LEGACY_PAUSE), true, -EBUSY,
	  "a legacy CRIU pause" },
	{ "first refused feature wins", KFD_CRIU_FEAT(QUEUES) | KFD_CRIU_FEAT(BOS),
	  false, -EOPNOTSUPP, "buffer objects" },
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
		KUNIT_EXPECT_TRUE_MSG(test, desc->dump_unsupported || desc->restore_busy,
				      "feature %u", i);
	}
}

static void kfd_criu_test_io_errno(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, kfd_criu_io_errno(0, -ENODATA), -ENODATA);
	KUNIT_EXPECT_EQ(test, kfd_criu_io_errno(0, -EIO), -EIO);
	KUNIT_EXPECT_EQ(test, kfd_criu_io_errno(-ERESTARTSYS, -EIO), -EINTR);
	KUNIT_EXPECT_EQ(test, kfd_criu_io_errno(-ERESTARTNOINTR, -EIO), -EINTR);
	KUNIT_EXPECT_EQ(test, kfd_criu_io_errno(-ERESTARTNOHAND, -EIO), -EINTR);
	KUNIT_EXPECT_EQ(test, kfd_criu_io_errno(-ERESTART_RESTARTBLOCK, -EIO), -EINTR);
	KUNIT_EXPECT_EQ(test, kfd_criu_io_errno(-EAGAIN, -EIO), -EAGAIN);
	KUNIT_EXPECT_EQ(test, kfd_criu_io_errno(-EPIPE, -EIO), -EPIPE);
}

#define KFD_CRIU_TEST_PAGE_SIZE	2048
#define KFD_CRIU_TEST_EVENTS	4

/**
 * struct kfd_criu_test_image - a valid events image in test memory
 * @img: the image, pointing into @page and @events
 * @page: signal page contents
 * @events: event records
 */
struct kfd_criu_test_image {
	struct kfd_criu_events_image img;
	__le64 page[KFD_CRIU_TEST_PAGE_SIZE / 8];
	struct kfd_criu_event_rec events[KFD_CRIU_TEST_EVENTS];
};

static void kfd_criu_test_event(struct kfd_criu_event_rec *rec, u32 id,
				u32 type, bool auto_reset, bool signaled, u64 age)
{
	memset(rec, 0, sizeof(*rec));
	rec->event_id = cpu_to_le32(id);
	rec->type = cpu_to_le32(type);
	rec->auto_reset = cpu_to_le32(auto_reset);
	rec->signaled = cpu_to_le32(signaled);
	rec->event_age = cpu_to_le64(age);
}

static struct kfd_criu_test_image *kfd_criu_test_image(struct kunit *test)
{
	struct kfd_criu_test_image *t;
	struct kfd_criu_process_rec *proc;
	unsigned int i;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);

	for (i = 0; i < ARRAY_SIZE(t->page); i++)
		t->page[i] = cpu_to_le64(i % 3 ? U64_MAX : 0x1000 + i);
	kfd_criu_test_event(&t->events[0], 1, KFD_IOC_EVENT_SIGNAL, true, true, 3);
	kfd_criu_test_event(&t->events[1], 7, KFD_IOC_EVENT_SIGNAL, false, false, 1);
	kfd_criu_test_event(&t->events[2], 255, KFD_IOC_EVENT_DEBUG_EVENT, false, true, 2);
	kfd_criu_test_event(&t->events[3], KFD_CRIU_FIRST_NONSIGNAL_EVENT_ID,
			    KFD_IOC_EVENT_MEMORY, false, false, 1);
	t->events[3].mem_va = cpu_to_le64(0x7f0000001000ULL);
	t->events[3].mem_gpu_id = cpu_to_le32(0x1234);
	t->events[3].mem_read_only = cpu_to_le32(1);

	proc = &t->img.process;
	proc->xnack_enabled = cpu_to_le32(1);
	proc->runtime_state = cpu_to_le32(DEBUG_RUNTIME_STATE_ENABLED);
	proc->r_debug = cpu_to_le64(0x401000);
	proc->num_events = cpu_to_le32(KFD_CRIU_TEST_EVENTS);
	proc->signal_page_size = cpu_to_le32(KFD_CRIU_TEST_PAGE_SIZE);

	t->img.have_process = true;
	t->img.signal_page = t->page;
	t->img.signal_page_size = KFD_CRIU_TEST_PAGE_SIZE;
	t->img.events = t->events;
	t->img.num_events = KFD_CRIU_TEST_EVENTS;
	t->img.events_read = KFD_CRIU_TEST_EVENTS;
	return t;
}

/**
 * struct kfd_criu_validate_case - a broken image and its errno
 * @desc: case name
 * @mutate: breaks a valid &struct kfd_criu_test_image
 * @ret: expected kfd_criu_events_validate()
 */
struct kfd_criu_validate_case {
	const char *desc;
	void (*mutate)(struct kfd_criu_test_image *t);
	int ret;
};

static void kfd_criu_break_nothing(struct kfd_criu_test_image *t)
{
}

static void kfd_criu_break_no_process(struct kfd_criu_test_image *t)
{
	t->img.have_process = false;
}

static void kfd_criu_break_missing_event(struct kfd_criu_test_image *t)
{
	t->img.events_read--;
}

static void kfd_criu_break_event_count(struct kfd_criu_test_image *t)
{
	t->img.process.num_events = cpu_to_le32(KFD_CRIU_TEST_EVENTS + 1);
}

static void kfd_criu_break_page_size(struct kfd_criu_test_image *t)
{
	t->img.process.signal_page_size = cpu_to_le32(KFD_CRIU_TEST_PAGE_SIZE - 8);
}

static void kfd_criu_break_no_page(struct kfd_criu_test_image *t)
{
	t->img.signal_page = NULL;
	t->img.signal_page_size = 0;
	t->img.process.signal_page_size = 0;
}

static void kfd_criu_break_slot_outside(struct kfd_criu_test_image *t)
{
	t->events[2].event_id = cpu_to_le32(KFD_CRIU_TEST_PAGE_SIZE / 8);
	t->events[2].type = cpu_to_le32(KFD_IOC_EVENT_SIGNAL);
}

static void kfd_criu_break_id_zero(struct kfd_criu_test_image *t)
{
	t->events[0].event_id = 0;
}

static void kfd_criu_break_low_memory_id(struct kfd_criu_test_image *t)
{
	t->events[3].event_id = cpu_to_le32(300);
}

static void kfd_criu_break_duplicate(struct kfd_criu_test_image *t)
{
	t->events[1].event_id = t->events[0].event_id;
}

static void kfd_criu_break_order(struct kfd_criu_test_image *t)
{
	swap(t->events[0], t->events[1]);
}

static void kfd_criu_break_age(struct kfd_criu_test_image *t)
{
	t->events[1].event_age = 0;
}

static void kfd_criu_break_type(struct kfd_criu_test_image *t)
{
	t->events[3].type = cpu_to_le32(42);
}

static void kfd_criu_break_runtime_busy(struct kfd_criu_test_image *t)
{
	t->img.process.runtime_state = cpu_to_le32(DEBUG_RUNTIME_STATE_ENABLED_BUSY);
}

static void kfd_criu_break_disabled_r_debug(struct kfd_criu_test_image *t)
{
	t->img.process.runtime_state = cpu_to_le32(DEBUG_RUNTIME_STATE_DISABLED);
}

static void kfd_criu_break_xnack(struct kfd_criu_test_image *t)
{
	t->img.process.xnack_enabled = cpu_to_le32(2);
}

static const struct kfd_criu_validate_case kfd_criu_validate_cases[] = {
	{ "valid", kfd_criu_break_nothing, 0 },
	{ "no process record", kfd_criu_break_no_process, -EINVAL },
	{ "event record missing", kfd_criu_break_missing_event, -EINVAL },
	{ "event count mismatch", kfd_criu_break_event_count, -EINVAL },
	{ "signal page size mismatch", kfd_criu_break_page_size, -EINVAL },
	{ "signal events without page", kfd_criu_break_no_page, -EINVAL },
	{ "slot outside signal page", kfd_criu_break_slot_outside, -EINVAL },
	{ "event id 0", kfd_criu_break_id_zero, -EINVAL },
	{ "memory event with slot id", kfd_criu_break_low_memory_id, -EINVAL },
	{ "duplicate id", kfd_criu_break_duplicate, -EEXIST },
	{ "ids out of order", kfd_criu_break_order, -EINVAL },
	/* Events restored by the legacy interface have age 0 */
	{ "event age 0 accepted", kfd_criu_break_age, 0 },
	{ "unknown event type", kfd_criu_break_type, -EINVAL },
	{ "runtime busy", kfd_criu_break_runtime_busy, -EINVAL },
	{ "disabled runtime with r_debug", kfd_criu_break_disabled_r_debug, -EINVAL },
	{ "xnack not boolean", kfd_criu_break_xnack, -EINVAL },
};

static void kfd_criu_validate_case_desc(const struct kfd_criu_validate_case *c,
					char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(kfd_criu_validate, kfd_criu_validate_cases,
		  kfd_criu_validate_case_desc);

static void kfd_criu_test_validate(struct kunit *test)
{
	const struct kfd_criu_validate_case *c = test->param_value;
	struct kfd_criu_test_image *t = kfd_criu_test_image(test);

	c->mutate(t);
	KUNIT_EXPECT_EQ(test, kfd_criu_events_validate(&t->img), c->ret);
}

static int kfd_criu_test_collect(struct kfd_criu_events_image *img, u32 type,
				 const void *payload, u32 length)
{
	struct kfd_criu_record rec = {
		.type = type,
		.flags = KFD_CRIU_RECORD_MANDATORY,
		.length = length,
	};

	return kfd_criu_events_collect(img, &rec, payload);
}

/* Records out of order or beyond what PROCESS announced are refused. */
static void kfd_criu_test_collect_order(struct kunit *test)
{
	struct kfd_criu_test_image *t = kfd_criu_test_image(test);
	struct kfd_criu_events_image img = {};
	struct kfd_criu_process_rec huge;

	KUNIT_EXPECT_EQ(test, kfd_criu_test_collect(&img, KFD_CRIU_REC_EVENT,
						    &t->events[0], sizeof(t->events[0])),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_collect(&img, KFD_CRIU_REC_SIGNAL_PAGE,
						    t->page, sizeof(t->page)),
			-EINVAL);

	huge = t->img.process;
	huge.num_events = cpu_to_le32(KFD_CRIU_MAX_EVENTS + 1);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_collect(&img, KFD_CRIU_REC_PROCESS,
						    &huge, sizeof(huge)),
			-EINVAL);
	kfd_criu_events_image_free(&img);

	t->img.process.num_events = cpu_to_le32(1);
	KUNIT_ASSERT_EQ(test, kfd_criu_test_collect(&img, KFD_CRIU_REC_PROCESS,
						    &t->img.process,
						    sizeof(t->img.process)), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_collect(&img, KFD_CRIU_REC_PROCESS,
						    &t->img.process,
						    sizeof(t->img.process)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_collect(&img, KFD_CRIU_REC_SIGNAL_PAGE,
						    t->page, sizeof(t->page) - 8),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_collect(&img, KFD_CRIU_REC_EVENT,
						    &t->events[0], sizeof(t->events[0])),
			0);
	/* SIGNAL_PAGE after an EVENT, one EVENT too many, a stray COMPAT */
	KUNIT_EXPECT_EQ(test, kfd_criu_test_collect(&img, KFD_CRIU_REC_SIGNAL_PAGE,
						    t->page, sizeof(t->page)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_collect(&img, KFD_CRIU_REC_EVENT,
						    &t->events[1], sizeof(t->events[1])),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_collect(&img, KFD_CRIU_REC_COMPAT,
						    t->page, 8),
			-EINVAL);
	kfd_criu_events_image_free(&img);
}

/**
 * struct kfd_criu_test_stream - an image stream in memory
 * @data: the bytes
 * @size: capacity of @data
 * @len: bytes written
 * @pos: read position
 * @io: callbacks on this stream
 */
struct kfd_criu_test_stream {
	u8 *data;
	size_t size;
	size_t len;
	size_t pos;
	struct kfd_criu_image_io io;
};

static int kfd_criu_test_stream_write(void *ctx, const void *buf, size_t len)
{
	struct kfd_criu_test_stream *s = ctx;

	if (len > s->size - s->len)
		return -ENOSPC;
	memcpy(s->data + s->len, buf, len);
	s->len += len;
	return 0;
}

static int kfd_criu_test_stream_read(void *ctx, void *buf, size_t len)
{
	struct kfd_criu_test_stream *s = ctx;

	if (len > s->len - s->pos)
		return -ENODATA;
	memcpy(buf, s->data + s->pos, len);
	s->pos += len;
	return 0;
}

static struct kfd_criu_test_stream *kfd_criu_test_stream(struct kunit *test)
{
	struct kfd_criu_test_stream *s;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	s->size = SZ_64K;
	s->data = kunit_kzalloc(test, s->size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s->data);
	s->io.write = kfd_criu_test_stream_write;
	s->io.read = kfd_criu_test_stream_read;
	s->io.ctx = s;
	return s;
}

static void kfd_criu_test_expect_same(struct kunit *test,
				      const struct kfd_criu_events_image *a,
				      const struct kfd_criu_events_image *b)
{
	KUNIT_EXPECT_MEMEQ(test, &a->process, &b->process, sizeof(a->process));
	KUNIT_ASSERT_EQ(test, a->signal_page_size, b->signal_page_size);
	KUNIT_EXPECT_MEMEQ(test, a->signal_page, b->signal_page,
			   a->signal_page_size);
	KUNIT_ASSERT_EQ(test, a->num_events, b->num_events);
	KUNIT_EXPECT_EQ(test, a->events_read, b->events_read);
	KUNIT_EXPECT_MEMEQ(test, a->events, b->events,
			   a->num_events * sizeof(*a->events));
}

/* What dump writes, restore reads back unchanged; the estimate is exact. */
static void kfd_criu_test_round_trip(struct kunit *test)
{
	struct kfd_criu_test_image *t = kfd_criu_test_image(test);
	struct kfd_criu_test_stream *s = kfd_criu_test_stream(test);
	struct kfd_criu_events_image img = {};
	u32 version = 0;
	int ret;

	KUNIT_ASSERT_EQ(test, kfd_criu_write_image(&s->io, &t->img), 0);
	KUNIT_EXPECT_EQ(test, s->len,
			kfd_criu_image_size_estimate(KFD_CRIU_TEST_EVENTS,
						     KFD_CRIU_TEST_PAGE_SIZE));

	ret = kfd_criu_read_image(&s->io, &img, &version);
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, version, KFD_CRIU_IMAGE_VERSION);
	KUNIT_EXPECT_EQ(test, s->pos, s->len);
	if (!ret) {
		KUNIT_EXPECT_EQ(test, kfd_criu_events_validate(&img), 0);
		kfd_criu_test_expect_same(test, &t->img, &img);
	}
	kfd_criu_events_image_free(&img);
}

/* A stream cut anywhere fails, and leaves nothing allocated behind. */
static void kfd_criu_test_truncated(struct kunit *test)
{
	struct kfd_criu_test_image *t = kfd_criu_test_image(test);
	struct kfd_criu_test_stream *s = kfd_criu_test_stream(test);
	struct kfd_criu_events_image img;
	size_t full, cut;
	u32 version;

	KUNIT_ASSERT_EQ(test, kfd_criu_write_image(&s->io, &t->img), 0);
	full = s->len;
	for (cut = 0; cut < full; cut += 7) {
		memset(&img, 0, sizeof(img));
		s->len = cut;
		s->pos = 0;
		KUNIT_EXPECT_EQ_MSG(test, kfd_criu_read_image(&s->io, &img, &version),
				    -ENODATA, "cut at %zu", cut);
		kfd_criu_events_image_free(&img);
	}
}

/* A flipped payload byte is a checksum error before anything is used. */
static void kfd_criu_test_corrupted(struct kunit *test)
{
	struct kfd_criu_test_image *t = kfd_criu_test_image(test);
	struct kfd_criu_test_stream *s = kfd_criu_test_stream(test);
	struct kfd_criu_events_image img = {};
	u32 version;

	KUNIT_ASSERT_EQ(test, kfd_criu_write_image(&s->io, &t->img), 0);
	/* Inside the last EVENT payload, before its CRC and the END record */
	s->data[s->len - KFD_CRIU_RECORD_OVERHEAD -
		sizeof(struct kfd_criu_end_rec) - sizeof(__le32) - 20] ^= 0x01;
	KUNIT_EXPECT_EQ(test, kfd_criu_read_image(&s->io, &img, &version),
			-EBADMSG);
	kfd_criu_events_image_free(&img);
}

static struct kunit_case kfd_criu_ops_test_cases[] = {
	KUNIT_CASE_PARAM(kfd_criu_test_args, kfd_criu_args_gen_params),
	KUNIT_CASE(kfd_criu_test_args_layout),
	KUNIT_CASE_PARAM(kfd_criu_test_features, kfd_criu_feature_gen_params),
	KUNIT_CASE(kfd_criu_test_feature_table),
	KUNIT_CASE(kfd_criu_test_io_errno),
	KUNIT_CASE_PARAM(kfd_criu_test_validate, kfd_criu_validate_gen_params),
	KUNIT_CASE(kfd_criu_test_collect_order),
	KUNIT_CASE(kfd_criu_test_round_trip),
	KUNIT_CASE(kfd_criu_test_truncated),
	KUNIT_CASE(kfd_criu_test_corrupted),
	{}
};

static struct kunit_suite kfd_criu_ops_suite = {
	.name = "kfd_criu_ops",
	.test_cases = kfd_criu_ops_test_cases,
};

kunit_test_suites(&kfd_criu_state_suite, &kfd_criu_ops_suite);
