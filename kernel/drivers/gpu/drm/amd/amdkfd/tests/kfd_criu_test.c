// SPDX-License-Identifier: GPL-2.0 OR MIT

/**
 * DOC: KUnit tests of the CRIU image mode ops
 *
 * Included at the end of kfd_criu.c, so the static helpers are reachable.
 * Suite kfd_criu_state steps the state machine through every (state, op)
 * pair. Suite kfd_criu_ops covers the rest of the pure logic: argument
 * checks, the collection and set validation of restore records, and a
 * write/read round trip of an events image through a memory buffer.
 * Suite kfd_criu_gpu
 * covers the record order of a restore stream, the gpu_ids a restored
 * process sees, the size of BO contents in the stream, the offset map
 * capacity and a round trip of GPU and BO records. None of it needs a GPU
 * or a KFD process.
 */

#include <kunit/test.h>

#include "kfd_criu_test_events.h"
#include "kfd_criu_test_stream.h"

/*
 * What validation says of a well-formed test image. The shared image keeps
 * its signal slots in a kernel signal page, which this kernel does not
 * have: validation passes it as far as its last check, which refuses it
 * as unsupported rather than as malformed.
 */
#define KFD_CRIU_TEST_WELL_FORMED	(-EOPNOTSUPP)

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

/* Image mode's @op: the legacy op plus 0x80 */
static u32 kfd_criu_image_op(u32 op)
{
	return KFD_CRIU_OP_IMAGE_PROCESS_INFO + op;
}

static void kfd_criu_args_image(struct kfd_ioctl_criu_args *args)
{
	args->legacy_pad = 0xdeadbeef;
	args->op = kfd_criu_image_op(KFD_CRIU_OP_RESUME);
}

static void kfd_criu_args_image_flag(struct kfd_ioctl_criu_args *args)
{
	args->op = kfd_criu_image_op(KFD_CRIU_OP_PROCESS_INFO);
	args->flags = BIT(31);
}

/* What selected image mode before its uAPI was final: a flag, now refused */
static void kfd_criu_args_flag_on_legacy_op(struct kfd_ioctl_criu_args *args)
{
	args->op = KFD_CRIU_OP_PROCESS_INFO;
	args->flags = BIT(0);
}

static void kfd_criu_args_reserved(struct kfd_ioctl_criu_args *args)
{
	args->reserved = 1;
}

static void kfd_criu_args_gpu_map(struct kfd_ioctl_criu_args *args)
{
	args->gpu_map_ptr = 0x1000;
	args->num_gpu_map = 1;
}

static void kfd_criu_args_gpu_map_on_dump(struct kfd_ioctl_criu_args *args)
{
	kfd_criu_args_gpu_map(args);
	args->op = kfd_criu_image_op(KFD_CRIU_OP_CHECKPOINT);
}

static void kfd_criu_args_gpu_map_on_info(struct kfd_ioctl_criu_args *args)
{
	kfd_criu_args_gpu_map(args);
	args->op = kfd_criu_image_op(KFD_CRIU_OP_PROCESS_INFO);
}

/* PROCESS_INFO's device buckets receive each GPU's two gpu_ids */
static void kfd_criu_args_pairing(struct kfd_ioctl_criu_args *args)
{
	args->op = kfd_criu_image_op(KFD_CRIU_OP_PROCESS_INFO);
	args->devices = 0x3000;
	args->num_devices = KFD_CRIU_MAX_GPUS;
}

static void kfd_criu_args_pairing_too_long(struct kfd_ioctl_criu_args *args)
{
	kfd_criu_args_pairing(args);
	args->num_devices = KFD_CRIU_MAX_GPUS + 1;
}

static void kfd_criu_args_pairing_no_ptr(struct kfd_ioctl_criu_args *args)
{
	kfd_criu_args_pairing(args);
	args->devices = 0;
}

static void kfd_criu_args_devices_on_dump(struct kfd_ioctl_criu_args *args)
{
	kfd_criu_args_pairing(args);
	args->op = kfd_criu_image_op(KFD_CRIU_OP_CHECKPOINT);
}

static void kfd_criu_args_num_gpu_map(struct kfd_ioctl_criu_args *args)
{
	args->num_gpu_map = 1;
}

static void kfd_criu_args_restore_maps(struct kfd_ioctl_criu_args *args)
{
	args->op = kfd_criu_image_op(KFD_CRIU_OP_RESTORE);
	args->gpu_map_ptr = 0x1000;
	args->num_gpu_map = KFD_CRIU_MAX_GPUS;
	args->offset_map_ptr = 0x2000;
	args->num_offset_map = 3;
}

static void kfd_criu_args_too_many_gpus(struct kfd_ioctl_criu_args *args)
{
	kfd_criu_args_restore_maps(args);
	args->num_gpu_map = KFD_CRIU_MAX_GPUS + 1;
}

static void kfd_criu_args_map_without_ptr(struct kfd_ioctl_criu_args *args)
{
	kfd_criu_args_restore_maps(args);
	args->gpu_map_ptr = 0;
}

static void kfd_criu_args_offsets_without_ptr(struct kfd_ioctl_criu_args *args)
{
	kfd_criu_args_restore_maps(args);
	args->offset_map_ptr = 0;
}

static void kfd_criu_args_offset_ptr_only(struct kfd_ioctl_criu_args *args)
{
	kfd_criu_args_restore_maps(args);
	args->num_offset_map = 0;
}

/* The image's offset in image_fd: CHECKPOINT's and RESTORE's only */
static void kfd_criu_args_offset_on_dump(struct kfd_ioctl_criu_args *args)
{
	args->op = kfd_criu_image_op(KFD_CRIU_OP_CHECKPOINT);
	args->image_offset = 4096;
}

static void kfd_criu_args_offset_on_restore(struct kfd_ioctl_criu_args *args)
{
	args->op = kfd_criu_image_op(KFD_CRIU_OP_RESTORE);
	args->image_offset = 1;
}

static void kfd_criu_args_offset_on_info(struct kfd_ioctl_criu_args *args)
{
	args->op = kfd_criu_image_op(KFD_CRIU_OP_PROCESS_INFO);
	args->image_offset = 4096;
}

static void kfd_criu_args_offset_on_legacy(struct kfd_ioctl_criu_args *args)
{
	args->op = KFD_CRIU_OP_CHECKPOINT;
	args->image_offset = 4096;
}

static void kfd_criu_args_offsets_on_info(struct kfd_ioctl_criu_args *args)
{
	args->op = kfd_criu_image_op(KFD_CRIU_OP_PROCESS_INFO);
	args->offset_map_ptr = 0x2000;
	args->num_offset_map = 1;
}

static void kfd_criu_args_reserved32(struct kfd_ioctl_criu_args *args)
{
	args->reserved32 = 1;
}

static void kfd_criu_args_legacy_field(struct kfd_ioctl_criu_args *args)
{
	args->op = kfd_criu_image_op(KFD_CRIU_OP_CHECKPOINT);
	args->priv_data = 0x1000;
}

/* Past the image ops, and between them and the legacy ones: legacy's */
static void kfd_criu_args_past_image_ops(struct kfd_ioctl_criu_args *args)
{
	args->op = kfd_criu_image_op(KFD_CRIU_OP_RESUME) + 1;
}

static void kfd_criu_args_between_ops(struct kfd_ioctl_criu_args *args)
{
	args->op = KFD_CRIU_OP_RESUME + 1;
}

static const struct kfd_criu_args_case kfd_criu_args_cases[] = {
	{ "zero-filled old struct", kfd_criu_args_none, false, 0 },
	{ "garbage in old tail padding", kfd_criu_args_pad, false, 0 },
	{ "stale outputs and image_fd", kfd_criu_args_outputs, false, 0 },
	{ "image op", kfd_criu_args_image, true, 0 },
	{ "image op with a flag", kfd_criu_args_image_flag, true, -EINVAL },
	{ "flag on a legacy op", kfd_criu_args_flag_on_legacy_op, true, -EINVAL },
	{ "reserved set", kfd_criu_args_reserved, true, -EINVAL },
	{ "gpu map on a legacy op", kfd_criu_args_gpu_map, true, -EINVAL },
	{ "gpu map on dump", kfd_criu_args_gpu_map_on_dump, true, -EINVAL },
	{ "gpu map on process info", kfd_criu_args_gpu_map_on_info, true,
	  -EINVAL },
	{ "device buckets of process info", kfd_criu_args_pairing, true, 0 },
	{ "too many device buckets", kfd_criu_args_pairing_too_long, true,
	  -EINVAL },
	{ "device buckets without pointer", kfd_criu_args_pairing_no_ptr, true,
	  -EINVAL },
	{ "device buckets on dump", kfd_criu_args_devices_on_dump, true,
	  -EINVAL },
	{ "gpu map count only", kfd_criu_args_num_gpu_map, true, -EINVAL },
	{ "restore with both maps", kfd_criu_args_restore_maps, true, 0 },
	{ "gpu map too long", kfd_criu_args_too_many_gpus, true, -EINVAL },
	{ "gpu map without pointer", kfd_criu_args_map_without_ptr, true, -EINVAL },
	{ "offset map without pointer", kfd_criu_args_offsets_without_ptr, true,
	  -EINVAL },
	{ "offset map of capacity 0", kfd_criu_args_offset_ptr_only, true, 0 },
	{ "offset map on process info", kfd_criu_args_offsets_on_info, true,
	  -EINVAL },
	{ "reserved32 set", kfd_criu_args_reserved32, true, -EINVAL },
	{ "image offset on dump", kfd_criu_args_offset_on_dump, true, 0 },
	{ "image offset on restore", kfd_criu_args_offset_on_restore, true, 0 },
	{ "image offset on process info", kfd_criu_args_offset_on_info, true,
	  -EINVAL },
	{ "image offset on a legacy op", kfd_criu_args_offset_on_legacy, true,
	  -EINVAL },
	{ "legacy field in image mode", kfd_criu_args_legacy_field, true, -EINVAL },
	{ "op past the image ops", kfd_criu_args_past_image_ops, false, 0 },
	{ "op between legacy and image ops", kfd_criu_args_between_ops, false, 0 },
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
		KUNIT_EXPECT_EQ(test, kfd_criu_check_args(&args, args.op -
					KFD_CRIU_OP_IMAGE_PROCESS_INFO), c->ret);
}

/* The layout is ABI: new fields start at the old struct's size. */
static void kfd_criu_test_args_layout(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, offsetof(struct kfd_ioctl_criu_args, legacy_pad), 52);
	KUNIT_EXPECT_EQ(test, offsetof(struct kfd_ioctl_criu_args, flags), 56);
	KUNIT_EXPECT_EQ(test, offsetof(struct kfd_ioctl_criu_args, image_fd), 60);
	KUNIT_EXPECT_EQ(test, offsetof(struct kfd_ioctl_criu_args, image_size), 64);
	KUNIT_EXPECT_EQ(test, offsetof(struct kfd_ioctl_criu_args, image_offset), 72);
	KUNIT_EXPECT_EQ(test, offsetof(struct kfd_ioctl_criu_args, format_version), 80);
	KUNIT_EXPECT_EQ(test, offsetof(struct kfd_ioctl_criu_args, num_gpu_map), 84);
	KUNIT_EXPECT_EQ(test, offsetof(struct kfd_ioctl_criu_args, gpu_map_ptr), 88);
	KUNIT_EXPECT_EQ(test, offsetof(struct kfd_ioctl_criu_args, offset_map_ptr), 96);
	KUNIT_EXPECT_EQ(test, offsetof(struct kfd_ioctl_criu_args, num_offset_map), 104);
	KUNIT_EXPECT_EQ(test, offsetof(struct kfd_ioctl_criu_args, reserved32), 108);
	KUNIT_EXPECT_EQ(test, offsetof(struct kfd_ioctl_criu_args, reserved), 112);
	KUNIT_EXPECT_EQ(test, sizeof(struct kfd_ioctl_criu_args), 120);
	/* An offset map entry has no implicit padding either */
	KUNIT_EXPECT_EQ(test, offsetof(struct kfd_criu_offset_map, gpu_id), 16);
	KUNIT_EXPECT_EQ(test, offsetof(struct kfd_criu_offset_map, reserved), 20);
	KUNIT_EXPECT_EQ(test, sizeof(struct kfd_criu_offset_map), 24);
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

	return kfd_criu_events_collect(img, &rec, payload, 1);
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

/* COUNTS comes directly after PROCESS, once, with valid counts. */
static void kfd_criu_test_collect_counts(struct kunit *test)
{
	struct kfd_criu_test_image *t = kfd_criu_test_image(test);
	struct kfd_criu_counts_rec counts = {
		.num_queues = cpu_to_le32(2),
		.num_svm_ranges = cpu_to_le32(3),
	};
	struct kfd_criu_counts_rec zero = {};
	struct kfd_criu_events_image img = {};
	struct kfd_criu_record rec = {
		.type = KFD_CRIU_REC_COUNTS,
		.flags = KFD_CRIU_RECORD_MANDATORY,
		.length = sizeof(counts),
	};

	/* Before PROCESS */
	KUNIT_EXPECT_EQ(test, kfd_criu_events_collect(&img, &rec, &counts, 1),
			-EINVAL);
	KUNIT_ASSERT_EQ(test, kfd_criu_test_collect(&img, KFD_CRIU_REC_PROCESS,
						    &t->img.process,
						    sizeof(t->img.process)), 0);
	/* Short, both counts zero, no GPU for the queues */
	rec.length = sizeof(counts) - 4;
	KUNIT_EXPECT_EQ(test, kfd_criu_events_collect(&img, &rec, &counts, 1),
			-EINVAL);
	rec.length = sizeof(counts);
	img.have_counts = false;
	KUNIT_EXPECT_EQ(test, kfd_criu_events_collect(&img, &rec, &zero, 1),
			-EINVAL);
	img.have_counts = false;
	KUNIT_EXPECT_EQ(test, kfd_criu_events_collect(&img, &rec, &counts, 0),
			-EINVAL);
	img.have_counts = false;
	KUNIT_EXPECT_EQ(test, kfd_criu_events_collect(&img, &rec, &counts, 1),
			0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(img.counts.num_svm_ranges), 3);
	KUNIT_EXPECT_TRUE(test, kfd_criu_counts_present(&img.counts));
	/* A second one */
	KUNIT_EXPECT_EQ(test, kfd_criu_events_collect(&img, &rec, &counts, 1),
			-EINVAL);
	/* After SIGNAL_PAGE */
	img.have_counts = false;
	KUNIT_ASSERT_EQ(test, kfd_criu_test_collect(&img, KFD_CRIU_REC_SIGNAL_PAGE,
						    t->page, sizeof(t->page)), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_events_collect(&img, &rec, &counts, 1),
			-EINVAL);
	kfd_criu_events_image_free(&img);
}

/* An image of @t's events and no GPUs, pointing into @t */
static void kfd_criu_test_proc_image(struct kfd_criu_test_image *t,
				     struct kfd_criu_proc_image *img)
{
	memset(img, 0, sizeof(*img));
	img->events = t->img;
}

/* Reads an image that ends with its metadata, as one without BOs does. */
static int kfd_criu_test_read(struct kunit *test,
			      struct kfd_criu_test_stream *s,
			      struct kfd_criu_proc_image *img, u32 *version)
{
	struct kfd_criu_image_reader r;
	struct kfd_criu_record rec;
	enum kfd_criu_section sec;
	void *buf;
	int ret;

	buf = kunit_kmalloc(test, KFD_CRIU_READ_BUF_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	kfd_criu_image_reader_init(&r, &s->io, kfd_criu_v1_records,
				   kfd_criu_v1_num_records);
	ret = kfd_criu_read_metadata(&r, img, buf, &rec, &sec, version, NULL);
	if (!ret && sec != KFD_CRIU_SEC_END)
		ret = -EINVAL;
	kunit_kfree(test, buf);
	return ret;
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
	struct kfd_criu_test_stream *s = kfd_criu_test_stream_new(test);
	struct kfd_criu_proc_image out, img = {};
	u32 version = 0;
	int ret;

	kfd_criu_test_proc_image(t, &out);
	KUNIT_ASSERT_EQ(test, kfd_criu_write_image(&s->io, NULL, &out), 0);
	KUNIT_EXPECT_EQ(test, s->len,
			kfd_criu_image_size_estimate(0, 0, KFD_CRIU_TEST_EVENTS,
						     KFD_CRIU_TEST_PAGE_SIZE, 0,
						     &out.events.counts, 0));

	ret = kfd_criu_test_read(test, s, &img, &version);
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, version, KFD_CRIU_IMAGE_VERSION);
	KUNIT_EXPECT_EQ(test, s->pos, s->len);
	if (!ret) {
		KUNIT_EXPECT_EQ(test, kfd_criu_validate_image(&img, KFD_CRIU_SEC_END),
				KFD_CRIU_TEST_WELL_FORMED);
		kfd_criu_test_expect_same(test, &t->img, &img.events);
	}
	kfd_criu_proc_image_free(&img);
}

/* A stream cut anywhere fails, and leaves nothing allocated behind. */
static void kfd_criu_test_truncated(struct kunit *test)
{
	struct kfd_criu_test_image *t = kfd_criu_test_image(test);
	struct kfd_criu_test_stream *s = kfd_criu_test_stream_new(test);
	struct kfd_criu_proc_image out, img;
	size_t full, cut;
	u32 version;

	kfd_criu_test_proc_image(t, &out);
	KUNIT_ASSERT_EQ(test, kfd_criu_write_image(&s->io, NULL, &out), 0);
	full = s->len;
	for (cut = 0; cut < full; cut += 7) {
		memset(&img, 0, sizeof(img));
		s->len = cut;
		s->pos = 0;
		KUNIT_EXPECT_EQ_MSG(test, kfd_criu_test_read(test, s, &img, &version),
				    -ENODATA, "cut at %zu", cut);
		kfd_criu_proc_image_free(&img);
	}
}

/* A flipped payload byte is a checksum error before anything is used. */
static void kfd_criu_test_corrupted(struct kunit *test)
{
	struct kfd_criu_test_image *t = kfd_criu_test_image(test);
	struct kfd_criu_test_stream *s = kfd_criu_test_stream_new(test);
	struct kfd_criu_proc_image out, img = {};
	u32 version;

	kfd_criu_test_proc_image(t, &out);
	KUNIT_ASSERT_EQ(test, kfd_criu_write_image(&s->io, NULL, &out), 0);
	/* Inside the last EVENT payload, before its CRC and the END record */
	s->data[s->len - KFD_CRIU_RECORD_OVERHEAD -
		sizeof(struct kfd_criu_end_rec) - sizeof(__le32) - 20] ^= 0x01;
	KUNIT_EXPECT_EQ(test, kfd_criu_test_read(test, s, &img, &version),
			-EBADMSG);
	kfd_criu_proc_image_free(&img);
}

static struct kunit_case kfd_criu_ops_test_cases[] = {
	KUNIT_CASE_PARAM(kfd_criu_test_args, kfd_criu_args_gen_params),
	KUNIT_CASE(kfd_criu_test_args_layout),
	KUNIT_CASE_PARAM(kfd_criu_test_validate, kfd_criu_validate_gen_params),
	KUNIT_CASE(kfd_criu_test_collect_order),
	KUNIT_CASE(kfd_criu_test_collect_counts),
	KUNIT_CASE(kfd_criu_test_round_trip),
	KUNIT_CASE(kfd_criu_test_truncated),
	KUNIT_CASE(kfd_criu_test_corrupted),
	{}
};

static struct kunit_suite kfd_criu_ops_suite = {
	.name = "kfd_criu_ops",
	.test_cases = kfd_criu_ops_test_cases,
};

/**
 * struct kfd_criu_section_case - a record arriving in a stream section
 * @desc: case name
 * @cur: the section the stream is in
 * @type: the record type
 * @ret: expected kfd_criu_next_section()
 * @next: expected section after it, when @ret is 0
 */
struct kfd_criu_section_case {
	const char *desc;
	enum kfd_criu_section cur;
	u32 type;
	int ret;
	enum kfd_criu_section next;
};

#define KFD_CRIU_SEC(c, t, r, n) {					\
	.desc = #c " + " #t, .cur = KFD_CRIU_SEC_##c,			\
	.type = KFD_CRIU_REC_##t, .ret = r, .next = KFD_CRIU_SEC_##n,	\
}

static const struct kfd_criu_section_case kfd_criu_section_cases[] = {
	KFD_CRIU_SEC(GPUS, GPU, 0, GPUS),
	KFD_CRIU_SEC(GPUS, TRAP_HANDLER, 0, GPUS),
	KFD_CRIU_SEC(PROCESS, TRAP_HANDLER, -EINVAL, GPUS),
	KFD_CRIU_SEC(GPUS, PROCESS, 0, PROCESS),
	KFD_CRIU_SEC(GPUS, COMPAT, -EINVAL, GPUS),
	KFD_CRIU_SEC(GPUS, END, 0, END),
	KFD_CRIU_SEC(PROCESS, GPU, -EINVAL, GPUS),
	KFD_CRIU_SEC(PROCESS, SIGNAL_PAGE, 0, PROCESS),
	KFD_CRIU_SEC(PROCESS, EVENT, 0, PROCESS),
	KFD_CRIU_SEC(PROCESS, COUNTS, 0, PROCESS),
	KFD_CRIU_SEC(BOS, COUNTS, -EINVAL, GPUS),
	KFD_CRIU_SEC(PROCESS, QUEUE, 0, QUEUES),
	KFD_CRIU_SEC(BOS, QUEUE, 0, QUEUES),
	KFD_CRIU_SEC(QUEUES, QUEUE_STATE, 0, QUEUE_STATES),
	KFD_CRIU_SEC(QUEUE_STATES, QUEUE, -EINVAL, GPUS),
	KFD_CRIU_SEC(QUEUES, SVM_RANGE, 0, SVM),
	KFD_CRIU_SEC(SVM, QUEUE_STATE, -EINVAL, GPUS),
	KFD_CRIU_SEC(SVM, BO_DATA, 0, DATA),
	KFD_CRIU_SEC(DATA, SVM_RANGE, -EINVAL, GPUS),
	KFD_CRIU_SEC(PROCESS, BO, 0, BOS),
	KFD_CRIU_SEC(PROCESS, BO_DATA, 0, DATA),
	KFD_CRIU_SEC(BOS, EVENT, -EINVAL, GPUS),
	KFD_CRIU_SEC(BOS, BO, 0, BOS),
	KFD_CRIU_SEC(BOS, BO_DATA, 0, DATA),
	KFD_CRIU_SEC(BOS, END, 0, END),
	KFD_CRIU_SEC(DATA, BO, -EINVAL, GPUS),
	KFD_CRIU_SEC(DATA, BO_DATA, 0, DATA),
	KFD_CRIU_SEC(DATA, END, 0, END),
	KFD_CRIU_SEC(END, BO_DATA, -EINVAL, GPUS),
	KFD_CRIU_SEC(END, END, 0, END),
	KFD_CRIU_SEC(PROCESS, NR, -EINVAL, GPUS),
};

static void kfd_criu_section_case_desc(const struct kfd_criu_section_case *c,
				       char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(kfd_criu_section, kfd_criu_section_cases,
		  kfd_criu_section_case_desc);

static void kfd_criu_test_section(struct kunit *test)
{
	const struct kfd_criu_section_case *c = test->param_value;
	enum kfd_criu_section next = KFD_CRIU_SEC_GPUS;

	KUNIT_EXPECT_EQ(test, kfd_criu_next_section(c->cur, c->type, &next),
			c->ret);
	KUNIT_EXPECT_EQ(test, next, c->ret ? KFD_CRIU_SEC_GPUS : c->next);
}

static void kfd_criu_test_gpu(struct kfd_criu_gpu_rec *rec, u32 gpu_id)
{
	memset(rec, 0, sizeof(*rec));
	rec->gpu_id = cpu_to_le32(gpu_id);
	rec->gfx_target_version = cpu_to_le32(90402);
	rec->device_id = cpu_to_le32(0x74a1);
	rec->num_xcc = cpu_to_le32(1);
	rec->vram_size = cpu_to_le64(SZ_1G);
	rec->cwsr_size = cpu_to_le32(0x1000);
	rec->ctl_stack_size = cpu_to_le32(0x100);
}

static void kfd_criu_test_bo(struct kfd_criu_bo_rec *rec, u32 gpu_index,
			     u32 handle, u32 flags, u64 va, u64 size)
{
	memset(rec, 0, sizeof(*rec));
	rec->gpu_index = cpu_to_le32(gpu_index);
	rec->handle = cpu_to_le32(handle);
	rec->alloc_flags = cpu_to_le32(flags);
	rec->va = cpu_to_le64(va);
	rec->size = cpu_to_le64(size);
}

static int kfd_criu_test_collect_rec(struct kfd_criu_proc_image *img,
				     enum kfd_criu_section *sec, u32 type,
				     const void *payload, u32 length)
{
	struct kfd_criu_record rec = {
		.type = type,
		.flags = KFD_CRIU_RECORD_MANDATORY,
		.length = length,
	};

	return kfd_criu_collect_record(img, sec, &rec, payload);
}

/* A section ends only when COMPAT's GPUs and PROCESS are complete. */
static void kfd_criu_test_collect_sections(struct kunit *test)
{
	struct kfd_criu_test_image *t = kfd_criu_test_image(test);
	struct kfd_criu_proc_image img = {};
	enum kfd_criu_section sec = KFD_CRIU_SEC_GPUS;
	struct kfd_criu_trap_rec trap = { .tba_addr = cpu_to_le64(SZ_1M) };
	struct kfd_criu_gpu_rec gpu;
	struct kfd_criu_bo_rec bo;

	kfd_criu_test_gpu(&gpu, 0x1234);
	kfd_criu_test_bo(&bo, 0, 1, KFD_IOC_ALLOC_MEM_FLAGS_GTT, SZ_1M, SZ_64K);
	KUNIT_ASSERT_EQ(test, kfd_criu_gpus_prepare(&img.gpus, 2), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_collect_rec(&img, &sec, KFD_CRIU_REC_GPU,
							&gpu, sizeof(gpu)), 0);
	/* A trap handler before the last GPU record */
	KUNIT_EXPECT_EQ(test, kfd_criu_test_collect_rec(&img, &sec,
							KFD_CRIU_REC_TRAP_HANDLER,
							&trap, sizeof(trap)), -EINVAL);
	/* One GPU short */
	KUNIT_EXPECT_EQ(test, kfd_criu_test_collect_rec(&img, &sec,
							KFD_CRIU_REC_PROCESS,
							&t->img.process,
							sizeof(t->img.process)),
			-EINVAL);
	sec = KFD_CRIU_SEC_GPUS;
	KUNIT_EXPECT_EQ(test, kfd_criu_test_collect_rec(&img, &sec, KFD_CRIU_REC_GPU,
							&gpu, sizeof(gpu)), 0);
	/* One GPU too many */
	KUNIT_EXPECT_EQ(test, kfd_criu_test_collect_rec(&img, &sec, KFD_CRIU_REC_GPU,
							&gpu, sizeof(gpu)), -EINVAL);
	/* A trap handler for a GPU with a record */
	KUNIT_EXPECT_EQ(test, kfd_criu_test_collect_rec(&img, &sec,
							KFD_CRIU_REC_TRAP_HANDLER,
							&trap, sizeof(trap)), 0);
	KUNIT_EXPECT_EQ(test, img.traps.num_traps, 1);
	/* No GPU record after it, and no more handlers than GPUs */
	KUNIT_EXPECT_EQ(test, kfd_criu_test_collect_rec(&img, &sec, KFD_CRIU_REC_GPU,
							&gpu, sizeof(gpu)), -EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_collect_rec(&img, &sec,
							KFD_CRIU_REC_TRAP_HANDLER,
							&trap, sizeof(trap)), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_collect_rec(&img, &sec,
							KFD_CRIU_REC_TRAP_HANDLER,
							&trap, sizeof(trap)), -EINVAL);
	/* A BO before PROCESS */
	KUNIT_EXPECT_EQ(test, kfd_criu_test_collect_rec(&img, &sec, KFD_CRIU_REC_BO,
							&bo, sizeof(bo)), -EINVAL);
	sec = KFD_CRIU_SEC_GPUS;
	t->img.process.num_events = 0;
	t->img.process.num_bos = cpu_to_le32(1);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_collect_rec(&img, &sec,
							KFD_CRIU_REC_PROCESS,
							&t->img.process,
							sizeof(t->img.process)), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_collect_rec(&img, &sec, KFD_CRIU_REC_BO,
							&bo, sizeof(bo)), 0);
	KUNIT_EXPECT_EQ(test, img.bos.bos_read, 1);
	/* One BO too many, and a GPU after the BOs */
	KUNIT_EXPECT_EQ(test, kfd_criu_test_collect_rec(&img, &sec, KFD_CRIU_REC_BO,
							&bo, sizeof(bo)), -EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_collect_rec(&img, &sec, KFD_CRIU_REC_GPU,
							&gpu, sizeof(gpu)), -EINVAL);
	kfd_criu_proc_image_free(&img);
}

/**
 * struct kfd_criu_ids_case - GPUs of a process, placed image GPUs, new ids
 * @desc: case name
 * @num_pdds: GPUs of the process
 * @old_ids: their gpu_ids before the restore
 * @num_image: image GPUs
 * @image_ids: their gpu_ids
 * @target: the process GPU each image GPU was placed on
 * @ret: expected kfd_criu_assign_user_gpu_ids()
 * @new_ids: expected gpu_ids after the restore, when @ret is 0
 */
struct kfd_criu_ids_case {
	const char *desc;
	u32 num_pdds;
	u32 old_ids[4];
	u32 num_image;
	u32 image_ids[4];
	u32 target[4];
	int ret;
	u32 new_ids[4];
};

static const struct kfd_criu_ids_case kfd_criu_ids_cases[] = {
	{ "no image GPUs", 2, { 0x10, 0x20 }, 0, {}, {}, 0, { 0x10, 0x20 } },
	{ "same ids", 2, { 0x10, 0x20 }, 2, { 0x10, 0x20 }, { 0, 1 }, 0,
	  { 0x10, 0x20 } },
	{ "swapped", 2, { 0x10, 0x20 }, 2, { 0x20, 0x10 }, { 0, 1 }, 0,
	  { 0x20, 0x10 } },
	{ "foreign id", 3, { 0x10, 0x20, 0x30 }, 1, { 0x99 }, { 1 }, 0,
	  { 0x10, 0x99, 0x30 } },
	{ "id of an unused GPU", 2, { 0x10, 0x20 }, 1, { 0x20 }, { 0 }, 0,
	  { 0x20, 0x10 } },
	{ "foreign id and a taken one", 3, { 0x10, 0x20, 0x30 }, 2,
	  { 0x99, 0x10 }, { 1, 2 }, 0, { 0x20, 0x99, 0x10 } },
	{ "target out of range", 2, { 0x10, 0x20 }, 1, { 0x10 }, { 2 },
	  -EINVAL, {} },
	{ "two image GPUs on one", 2, { 0x10, 0x20 }, 2, { 0x10, 0x20 },
	  { 1, 1 }, -EINVAL, {} },
	{ "image ids repeat", 2, { 0x10, 0x20 }, 2, { 0x10, 0x10 }, { 0, 1 },
	  -EINVAL, {} },
	{ "process ids repeat", 2, { 0x10, 0x10 }, 1, { 0x30 }, { 0 },
	  -EINVAL, {} },
};

static void kfd_criu_ids_case_desc(const struct kfd_criu_ids_case *c,
				   char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(kfd_criu_ids, kfd_criu_ids_cases, kfd_criu_ids_case_desc);

static void kfd_criu_test_user_gpu_ids(struct kunit *test)
{
	const struct kfd_criu_ids_case *c = test->param_value;
	u32 new_ids[4];
	u32 i, j;
	int ret;

	ret = kfd_criu_assign_user_gpu_ids(c->old_ids, c->num_pdds, c->image_ids,
					   c->target, c->num_image, new_ids);
	KUNIT_ASSERT_EQ(test, ret, c->ret);
	if (ret)
		return;
	KUNIT_EXPECT_MEMEQ(test, new_ids, c->new_ids,
			   c->num_pdds * sizeof(*new_ids));
	/* Whatever the table says: unique, and every image GPU keeps its id */
	for (i = 0; i < c->num_pdds; i++)
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_NE(test, new_ids[i], new_ids[j]);
	for (i = 0; i < c->num_image; i++)
		KUNIT_EXPECT_EQ(test, new_ids[c->target[i]], c->image_ids[i]);
}

#define KFD_CRIU_TEST_DATA_OVERHEAD	\
	(KFD_CRIU_RECORD_OVERHEAD + sizeof(struct kfd_criu_bo_data_hdr))

static void kfd_criu_test_bo_stream_bytes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test,
			kfd_criu_bo_stream_bytes(SZ_4K, KFD_IOC_ALLOC_MEM_FLAGS_VRAM),
			SZ_4K + KFD_CRIU_TEST_DATA_OVERHEAD);
	KUNIT_EXPECT_EQ(test,
			kfd_criu_bo_stream_bytes(KFD_CRIU_BO_CHUNK,
						 KFD_IOC_ALLOC_MEM_FLAGS_GTT),
			KFD_CRIU_BO_CHUNK + KFD_CRIU_TEST_DATA_OVERHEAD);
	KUNIT_EXPECT_EQ(test,
			kfd_criu_bo_stream_bytes(KFD_CRIU_BO_CHUNK + SZ_4K,
						 KFD_IOC_ALLOC_MEM_FLAGS_GTT),
			KFD_CRIU_BO_CHUNK + SZ_4K + 2 * KFD_CRIU_TEST_DATA_OVERHEAD);
	KUNIT_EXPECT_EQ(test,
			kfd_criu_bo_stream_bytes(SZ_1M, KFD_IOC_ALLOC_MEM_FLAGS_USERPTR),
			0);
	KUNIT_EXPECT_EQ(test,
			kfd_criu_bo_stream_bytes(SZ_8K, KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL),
			0);
}

/* Register BOs keep their offset on the same GPU; GEM BOs never know. */
static void kfd_criu_test_offsets_needed(struct kunit *test)
{
	struct kfd_criu_bo_rec bos[4];
	struct kfd_criu_bos_image img = { .bos = bos, .num_bos = 4 };
	u32 same[2] = { 0x10, 0x20 }, moved[2] = { 0x30, 0x20 };
	u32 doorbell = KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL;
	u32 mmio = KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP;

	kfd_criu_test_bo(&bos[0], 0, 0, doorbell, SZ_1M, SZ_8K);
	bos[0].mmap_offset = cpu_to_le64(kfd_criu_bo_fixed_offset(doorbell, 0x10));
	kfd_criu_test_bo(&bos[1], 1, 0, mmio, SZ_2M, SZ_4K);
	bos[1].mmap_offset = cpu_to_le64(kfd_criu_bo_fixed_offset(mmio, 0x20));
	kfd_criu_test_bo(&bos[2], 1, 1, KFD_IOC_ALLOC_MEM_FLAGS_VRAM, SZ_4M,
			 SZ_64K);
	bos[2].mmap_offset = cpu_to_le64(0x100000);
	kfd_criu_test_bo(&bos[3], 1, 2, KFD_IOC_ALLOC_MEM_FLAGS_GTT, SZ_8M,
			 SZ_64K);

	KUNIT_EXPECT_NE(test, kfd_criu_bo_fixed_offset(doorbell, 0x10),
			kfd_criu_bo_fixed_offset(doorbell, 0x30));
	KUNIT_EXPECT_EQ(test, kfd_criu_bo_fixed_offset(KFD_IOC_ALLOC_MEM_FLAGS_VRAM,
						       0x10), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_bos_offsets_needed(&img, same), 1);
	KUNIT_EXPECT_EQ(test, kfd_criu_bos_offsets_needed(&img, moved), 2);
	img.num_bos = 0;
	KUNIT_EXPECT_EQ(test, kfd_criu_bos_offsets_needed(&img, moved), 0);
}

/* GPU and BO records survive a round trip; a BO without its contents not. */
static void kfd_criu_test_gpu_round_trip(struct kunit *test)
{
	struct kfd_criu_test_image *t = kfd_criu_test_image(test);
	struct kfd_criu_test_stream *s = kfd_criu_test_stream_new(test);
	/* Two process images do not fit the test's stack frame */
	struct kfd_criu_proc_image *out, img = {};
	struct kfd_criu_trap_rec trap = {
		.gpu_index = cpu_to_le32(1),
		.tba_addr = cpu_to_le64(0x7f0000100000ULL),
		.tma_addr = cpu_to_le64(0x7f0000101000ULL),
	};
	struct kfd_criu_gpu_rec *gpus;
	struct kfd_criu_bo_rec bos[2];
	u32 version;
	int ret;

	out = kunit_kzalloc(test, sizeof(*out), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, out);
	kfd_criu_test_proc_image(t, out);
	out->traps = (struct kfd_criu_traps_image){ &trap, 1 };
	gpus = kunit_kcalloc(test, 2, sizeof(*gpus), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, gpus);
	kfd_criu_test_gpu(&gpus[0], 0x1111);
	kfd_criu_test_gpu(&gpus[1], 0x2222);
	kfd_criu_test_bo(&bos[0], 0, 1, KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL, SZ_1M,
			 SZ_8K);
	kfd_criu_test_bo(&bos[1], 1, 0, KFD_IOC_ALLOC_MEM_FLAGS_USERPTR, SZ_2M,
			 SZ_64K);
	bos[1].userptr = cpu_to_le64(0x7f0000000000ULL);
	bos[1].mapped_gpus = cpu_to_le64(3);
	out->gpus = (struct kfd_criu_gpus_image){ gpus, 2, 2 };
	out->bos.bos = bos;
	out->bos.num_bos = 2;
	out->bos.bos_read = 2;
	out->events.process.num_bos = cpu_to_le32(2);

	KUNIT_ASSERT_EQ(test, kfd_criu_write_image(&s->io, NULL, out), 0);
	KUNIT_EXPECT_EQ(test, s->len,
			kfd_criu_image_size_estimate(2, 1, KFD_CRIU_TEST_EVENTS,
						     KFD_CRIU_TEST_PAGE_SIZE,
						     2 * (KFD_CRIU_RECORD_OVERHEAD +
							  sizeof(bos[0])),
						     &out->events.counts, 0));
	ret = kfd_criu_test_read(test, s, &img, &version);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_image(&img, KFD_CRIU_SEC_END),
			KFD_CRIU_TEST_WELL_FORMED);
	KUNIT_ASSERT_EQ(test, img.gpus.num_gpus, 2);
	KUNIT_EXPECT_MEMEQ(test, img.gpus.gpus, gpus, 2 * sizeof(*gpus));
	KUNIT_ASSERT_EQ(test, img.traps.num_traps, 1);
	KUNIT_EXPECT_MEMEQ(test, img.traps.traps, &trap, sizeof(trap));
	KUNIT_EXPECT_EQ(test, kfd_criu_traps_needed_gpus(&img.traps), 2);
	KUNIT_ASSERT_EQ(test, img.bos.num_bos, 2);
	KUNIT_EXPECT_MEMEQ(test, img.bos.bos, bos, sizeof(bos));
	KUNIT_EXPECT_EQ(test, kfd_criu_bos_needed_gpus(&img.bos), 3);

	/* A GTT BO has contents, and the stream ended without them */
	img.bos.bos[0].alloc_flags = cpu_to_le32(KFD_IOC_ALLOC_MEM_FLAGS_GTT);
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_image(&img, KFD_CRIU_SEC_END),
			-EINVAL);
	kfd_criu_proc_image_free(&img);
}

/* COUNTS round-trips; announced records that never come are refused. */
static void kfd_criu_test_counts_without_records(struct kunit *test)
{
	struct kfd_criu_test_image *t = kfd_criu_test_image(test);
	struct kfd_criu_test_stream *s = kfd_criu_test_stream_new(test);
	struct kfd_criu_proc_image out, img = {};
	struct kfd_criu_gpu_rec gpu;
	u32 version;

	/* Without SVM, COUNTS with SVM ranges is refused as it arrives */
	if (!IS_ENABLED(CONFIG_HSA_AMD_SVM))
		kunit_skip(test, "needs CONFIG_HSA_AMD_SVM");
	kfd_criu_test_proc_image(t, &out);
	kfd_criu_test_gpu(&gpu, 0x1111);
	out.gpus = (struct kfd_criu_gpus_image){ &gpu, 1, 1 };
	out.events.counts.num_svm_ranges = cpu_to_le32(1);
	KUNIT_ASSERT_EQ(test, kfd_criu_write_image(&s->io, NULL, &out), 0);
	KUNIT_ASSERT_EQ(test, kfd_criu_test_read(test, s, &img, &version), 0);
	KUNIT_EXPECT_TRUE(test, img.events.have_counts);
	KUNIT_EXPECT_MEMEQ(test, &img.events.counts, &out.events.counts,
			   sizeof(out.events.counts));
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_image(&img, KFD_CRIU_SEC_END),
			-EINVAL);
	kfd_criu_proc_image_free(&img);

	/* Queues announced that never come */
	s->len = 0;
	s->pos = 0;
	out.events.counts.num_svm_ranges = 0;
	out.events.counts.num_queues = cpu_to_le32(1);
	KUNIT_ASSERT_EQ(test, kfd_criu_write_image(&s->io, NULL, &out), 0);
	KUNIT_EXPECT_EQ(test, s->len,
			kfd_criu_image_size_estimate(1, 0, KFD_CRIU_TEST_EVENTS,
						     KFD_CRIU_TEST_PAGE_SIZE, 0,
						     &out.events.counts, 0));
	KUNIT_ASSERT_EQ(test, kfd_criu_test_read(test, s, &img, &version), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_image(&img, KFD_CRIU_SEC_END),
			-EINVAL);
	kfd_criu_proc_image_free(&img);

	/* Without a GPU record the counts are refused as they arrive */
	s->len = 0;
	s->pos = 0;
	out.gpus = (struct kfd_criu_gpus_image){};
	KUNIT_ASSERT_EQ(test, kfd_criu_write_image(&s->io, NULL, &out), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_read(test, s, &img, &version),
			-EINVAL);
	kfd_criu_proc_image_free(&img);
}

static void kfd_criu_test_svm_range(struct kfd_criu_svm_rec *rec, u64 start,
				    u64 size, u64 access, u64 no_access,
				    u32 preferred_loc)
{
	memset(rec, 0, sizeof(*rec));
	rec->start = cpu_to_le64(start);
	rec->size = cpu_to_le64(size);
	rec->access = cpu_to_le64(access);
	rec->no_access = cpu_to_le64(no_access);
	rec->preferred_loc = cpu_to_le32(preferred_loc);
	rec->prefetch_loc = cpu_to_le32(KFD_IOCTL_SVM_LOCATION_UNDEFINED);
	rec->flags = cpu_to_le32(KFD_IOCTL_SVM_FLAG_HOST_ACCESS);
	rec->granularity = cpu_to_le32(9);
}

/*
 * SVM ranges go between the BO records and the contents and come back
 * unchanged; the estimate counts them and COUNTS; a range over a BO is
 * refused as a set.
 */
static void kfd_criu_test_svm_round_trip(struct kunit *test)
{
	struct kfd_criu_test_image *t = kfd_criu_test_image(test);
	struct kfd_criu_test_stream *s = kfd_criu_test_stream_new(test);
	/* Two process images do not fit the test's stack frame */
	struct kfd_criu_proc_image *out, img = {};
	struct kfd_criu_svm_rec *ranges;
	struct kfd_criu_gpu_rec *gpus;
	struct kfd_criu_bo_rec bo;
	u32 version;

	if (!IS_ENABLED(CONFIG_HSA_AMD_SVM))
		kunit_skip(test, "needs CONFIG_HSA_AMD_SVM");
	out = kunit_kzalloc(test, sizeof(*out), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, out);
	ranges = kunit_kcalloc(test, 2, sizeof(*ranges), GFP_KERNEL);
	gpus = kunit_kcalloc(test, 2, sizeof(*gpus), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ranges);
	KUNIT_ASSERT_NOT_NULL(test, gpus);
	kfd_criu_test_proc_image(t, out);
	kfd_criu_test_gpu(&gpus[0], 0x1111);
	kfd_criu_test_gpu(&gpus[1], 0x2222);
	kfd_criu_test_bo(&bo, 1, 0, KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL, SZ_1M,
			 SZ_8K);
	kfd_criu_test_svm_range(&ranges[0], SZ_2M, SZ_64K, 0x1, 0x2, 0x2222);
	kfd_criu_test_svm_range(&ranges[1], SZ_4M, SZ_2M, 0, 0x3,
				KFD_IOCTL_SVM_LOCATION_SYSMEM);
	out->gpus = (struct kfd_criu_gpus_image){ gpus, 2, 2 };
	out->bos.bos = &bo;
	out->bos.num_bos = 1;
	out->bos.bos_read = 1;
	out->events.process.num_bos = cpu_to_le32(1);
	out->svm.ranges = ranges;
	out->svm.num_ranges = 2;
	out->svm.ranges_read = 2;
	out->events.counts.num_svm_ranges = cpu_to_le32(2);

	KUNIT_ASSERT_EQ(test, kfd_criu_write_image(&s->io, NULL, out), 0);
	KUNIT_EXPECT_EQ(test, s->len,
			kfd_criu_image_size_estimate(2, 0, KFD_CRIU_TEST_EVENTS,
						     KFD_CRIU_TEST_PAGE_SIZE,
						     KFD_CRIU_RECORD_OVERHEAD +
						     sizeof(bo),
						     &out->events.counts, 0));
	KUNIT_ASSERT_EQ(test, kfd_criu_test_read(test, s, &img, &version), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_image(&img, KFD_CRIU_SEC_END),
			KFD_CRIU_TEST_WELL_FORMED);
	KUNIT_ASSERT_EQ(test, img.svm.num_ranges, 2);
	KUNIT_EXPECT_MEMEQ(test, img.svm.ranges, ranges, 2 * sizeof(*ranges));
	/* The access and the preferred location need a VM on both GPUs */
	KUNIT_EXPECT_EQ(test, kfd_criu_svm_needed_gpus(&img.svm, &img.gpus), 3);

	img.svm.ranges[0].start = cpu_to_le64(SZ_1M);
	KUNIT_EXPECT_EQ(test, kfd_criu_validate_image(&img, KFD_CRIU_SEC_END),
			-EINVAL);
	kfd_criu_proc_image_free(&img);
}

/*
 * ROCm's event page is a 32 KiB GTT BO (libhsakmt events.c,
 * hsaKmtCreateEvent()); its slots travel in the SIGNAL_PAGE record, which
 * must be as large as the BO.
 */
static void kfd_criu_test_event_page_slots(struct kunit *test)
{
	struct kfd_criu_proc_image *img;
	struct kfd_criu_bo_rec bo = {
		.size = cpu_to_le64(KFD_CRIU_SIGNAL_PAGE_MAX),
		.alloc_flags = cpu_to_le32(KFD_IOC_ALLOC_MEM_FLAGS_GTT),
		.flags = cpu_to_le32(KFD_CRIU_BO_EVENT_PAGE),
	};

	img = kunit_kzalloc(test, sizeof(*img), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, img);
	img->bos.bos = &bo;
	img->bos.num_bos = 1;
	img->events.signal_page_size = KFD_CRIU_SIGNAL_PAGE_MAX;
	KUNIT_EXPECT_EQ(test, kfd_criu_check_event_page(img), 0);
	/* The kernel page's default size, and no SIGNAL_PAGE at all */
	img->events.signal_page_size = 2048;
	KUNIT_EXPECT_EQ(test, kfd_criu_check_event_page(img), -EINVAL);
	img->events.signal_page_size = 0;
	KUNIT_EXPECT_EQ(test, kfd_criu_check_event_page(img), -EINVAL);
	/* Without an event page BO the signal page is the kernel's */
	bo.flags = 0;
	KUNIT_EXPECT_EQ(test, kfd_criu_check_event_page(img), 0);
}

/* RESTORE refuses a first BO_DATA record out of place before it acts. */
static void kfd_criu_test_first_data(struct kunit *test)
{
	struct kfd_criu_bo_rec bo;
	struct kfd_criu_bos_image img = { .bos = &bo, .num_bos = 1 };
	struct {
		struct kfd_criu_bo_data_hdr hdr;
		u8 data[SZ_4K];
	} *rec;
	u32 len = sizeof(*rec);

	rec = kunit_kzalloc(test, sizeof(*rec), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rec);
	kfd_criu_test_bo(&bo, 0, 0, KFD_IOC_ALLOC_MEM_FLAGS_GTT, SZ_1M, SZ_4K);
	kfd_criu_bo_cursor_init(&img.cursor, &bo, 1);

	KUNIT_EXPECT_EQ(test, kfd_criu_check_first_data(&img, rec, len), 0);
	/* The check leaves the cursor for the real write */
	KUNIT_EXPECT_EQ(test, img.cursor.bo_index, 0);
	KUNIT_EXPECT_EQ(test, img.cursor.offset, 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_check_first_data(&img, rec, len - 8),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_check_first_data(&img, rec, 8), -EINVAL);
	rec->hdr.offset = cpu_to_le64(SZ_4K);
	KUNIT_EXPECT_EQ(test, kfd_criu_check_first_data(&img, rec, len), -EINVAL);
	rec->hdr.offset = 0;
	/* A BO without contents expects none */
	bo.alloc_flags = cpu_to_le32(KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL);
	kfd_criu_bo_cursor_init(&img.cursor, &bo, 1);
	KUNIT_EXPECT_EQ(test, kfd_criu_check_first_data(&img, rec, len), -EINVAL);
}

static struct kunit_case kfd_criu_gpu_test_cases[] = {
	KUNIT_CASE_PARAM(kfd_criu_test_section, kfd_criu_section_gen_params),
	KUNIT_CASE(kfd_criu_test_collect_sections),
	KUNIT_CASE_PARAM(kfd_criu_test_user_gpu_ids, kfd_criu_ids_gen_params),
	KUNIT_CASE(kfd_criu_test_bo_stream_bytes),
	KUNIT_CASE(kfd_criu_test_offsets_needed),
	KUNIT_CASE(kfd_criu_test_first_data),
	KUNIT_CASE(kfd_criu_test_gpu_round_trip),
	KUNIT_CASE(kfd_criu_test_counts_without_records),
	KUNIT_CASE(kfd_criu_test_svm_round_trip),
	KUNIT_CASE(kfd_criu_test_event_page_slots),
	{}
};

static struct kunit_suite kfd_criu_gpu_suite = {
	.name = "kfd_criu_gpu",
	.test_cases = kfd_criu_gpu_test_cases,
};

kunit_test_suites(&kfd_criu_state_suite, &kfd_criu_ops_suite,
		  &kfd_criu_gpu_suite);

#include "kfd_criu_rocm_test.c"
