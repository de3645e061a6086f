// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * KUnit tests of the event restore of CRIU image mode on a process of the
 * test: the events of an image are installed with their ids, states and
 * slot contents, and a restore that fails partway is undone, event page
 * and all. The call that adds an event (kfd_criu_event_add()) fails on
 * request, and the event page BO's kernel mapping is a page of the test,
 * through KUnit static stubs; everything else is the real code of
 * kfd_events.c. #included at the bottom of kfd_criu_events.c, so it
 * reaches its static functions.
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>

#include "kfd_criu_test_events.h"

/**
 * struct et_fake - which call of kfd_criu_event_add() fails
 * @calls: calls made
 * @fail_at: the call that fails, -1 for none
 * @page: what the event page BO's kernel mapping would be
 * @maps: event pages mapped and not unmapped
 */
struct et_fake {
	int calls;
	int fail_at;
	u64 *page;
	int maps;
};

/* The image's event page BO: idr handle 1 on gpu_id 1 */
#define ET_EVENT_PAGE	MAKE_HANDLE(1, 1)

static struct et_fake *et;

static int et_event_add(struct file *devkfd, struct kfd_process *p,
			struct kfd_event *ev, u32 id)
{
	if (et->calls++ == et->fail_at)
		return -ENOMEM;
	return kfd_event_add_with_id_locked(devkfd, p, ev, id);
}

/*
 * Signal slots live in an event page BO (there is no kernel signal page);
 * the stubs stand for its kernel mapping, as kfd_kmap_event_page() and
 * its undo set and clear it.
 */
static int et_event_page_map(struct kfd_process *p, u64 handle)
{
	if (p->signal_page)
		return -EBUSY;
	memset(et->page, 0xff, KFD_SIGNAL_EVENT_LIMIT * 8);
	p->signal_page = et->page;
	p->signal_mapped_size = KFD_SIGNAL_EVENT_LIMIT * 8;
	p->signal_handle = handle;
	et->maps++;
	return 0;
}

static void et_event_page_unmap(struct kfd_process *p, u64 handle)
{
	kfd_event_signal_page_free_locked(p);
	et->maps--;
}

/* The shared events image, checked as RESTORE checks it first */
static struct kfd_criu_test_image *et_image(struct kunit *test)
{
	struct kfd_criu_test_image *t = kfd_criu_test_image(test);

	KUNIT_ASSERT_EQ(test, kfd_criu_events_validate(&t->img), 0);
	return t;
}

static void et_process_free(void *data)
{
	kfd_event_free_process(data);
}

/* A process without GPUs, events or signal page. */
static struct kfd_process *et_process(struct kunit *test)
{
	struct kfd_process *p;

	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	mutex_init(&p->mutex);
	/* The primary KFD process of its mm, with no other context */
	p->context_id = KFD_CONTEXT_ID_PRIMARY;
	ida_init(&p->id_table);
	mutex_init(&p->event_mutex);
	idr_init(&p->event_idr);
	mutex_init(&p->svms.lock);
	INIT_LIST_HEAD(&p->svms.list);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, et_process_free,
							p), 0);
	return p;
}

/* The fake of one case. */
static void et_setup(struct kunit *test)
{
	et = kunit_kzalloc(test, sizeof(*et), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, et);
	et->fail_at = -1;
	et->page = kunit_kzalloc(test, KFD_SIGNAL_EVENT_LIMIT * 8, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, et->page);
	kunit_activate_static_stub(test, kfd_criu_event_add, et_event_add);
	kunit_activate_static_stub(test, kfd_criu_event_page_map_locked,
				   et_event_page_map);
	kunit_activate_static_stub(test, kfd_criu_event_page_unmap_locked,
				   et_event_page_unmap);
}

static int et_restore(struct kfd_process *p,
		      const struct kfd_criu_test_image *t)
{
	int ret;

	mutex_lock(&p->mutex);
	ret = kfd_criu_events_restore(NULL, p, &t->img,
				      t->img.signal_page ? ET_EVENT_PAGE : 0);
	mutex_unlock(&p->mutex);
	return ret;
}

/*
 * @p has exactly the events and the signal slots of @t. Expectations
 * only: an assertion would end the test with p->event_mutex held.
 */
static void et_expect_image(struct kunit *test, struct kfd_process *p,
			    const struct kfd_criu_test_image *t)
{
	const struct kfd_criu_event_rec *rec;
	struct kfd_event *ev;
	u64 *slots;
	u32 i;

	mutex_lock(&p->event_mutex);
	KUNIT_EXPECT_EQ(test, kfd_get_num_events(p), KFD_CRIU_TEST_EVENTS);
	for (i = 0; i < KFD_CRIU_TEST_EVENTS; i++) {
		rec = &t->events[i];
		ev = idr_find(&p->event_idr, le32_to_cpu(rec->event_id));
		KUNIT_EXPECT_NOT_NULL_MSG(test, ev, "event %u",
					  le32_to_cpu(rec->event_id));
		if (!ev)
			continue;
		KUNIT_EXPECT_EQ(test, ev->event_id, le32_to_cpu(rec->event_id));
		KUNIT_EXPECT_EQ(test, ev->type, le32_to_cpu(rec->type));
		KUNIT_EXPECT_EQ(test, ev->auto_reset,
				!!le32_to_cpu(rec->auto_reset));
		KUNIT_EXPECT_EQ(test, ev->signaled, !!le32_to_cpu(rec->signaled));
		KUNIT_EXPECT_EQ(test, ev->event_age,
				le64_to_cpu(rec->event_age));
	}
	ev = idr_find(&p->event_idr, KFD_CRIU_FIRST_NONSIGNAL_EVENT_ID);
	KUNIT_EXPECT_NOT_NULL(test, ev);
	if (ev) {
		KUNIT_EXPECT_EQ(test, ev->memory_exception_data.va,
				0x7f0000001000ULL);
		KUNIT_EXPECT_EQ(test,
				ev->memory_exception_data.failure.ReadOnly, 1);
	}
	/* Two signal events and the debug event use slots */
	KUNIT_EXPECT_EQ(test, p->signal_event_count, 3);
	/* The event page BO's size, as kfd_kmap_event_page() sets it */
	KUNIT_EXPECT_EQ(test, p->signal_mapped_size, KFD_SIGNAL_EVENT_LIMIT * 8);
	slots = kfd_event_signal_slots_locked(p);
	KUNIT_EXPECT_NOT_NULL(test, slots);
	for (i = 0; slots && i < KFD_CRIU_TEST_PAGE_SIZE / 8; i++)
		KUNIT_EXPECT_EQ_MSG(test, slots[i], le64_to_cpu(t->page[i]),
				    "slot %u", i);
	mutex_unlock(&p->event_mutex);
}

/* @p has no event, no signal page and counts no signal event. */
static void et_expect_empty(struct kunit *test, struct kfd_process *p,
			    int at)
{
	mutex_lock(&p->event_mutex);
	KUNIT_EXPECT_EQ_MSG(test, kfd_get_num_events(p), 0, "failed add %d",
			    at);
	KUNIT_EXPECT_NULL_MSG(test, kfd_event_signal_slots_locked(p),
			      "failed add %d", at);
	KUNIT_EXPECT_EQ_MSG(test, p->signal_event_count, 0, "failed add %d",
			    at);
	KUNIT_EXPECT_EQ_MSG(test, p->signal_mapped_size, 0, "failed add %d",
			    at);
	mutex_unlock(&p->event_mutex);
}

/* The events of an image, their states and the signal slots come back. */
static void et_test_restore(struct kunit *test)
{
	struct kfd_criu_test_image *t = et_image(test);
	struct kfd_process *p = et_process(test);

	et_setup(test);
	KUNIT_ASSERT_EQ(test, et_restore(p, t), 0);
	KUNIT_EXPECT_EQ(test, et->calls, KFD_CRIU_TEST_EVENTS);
	et_expect_image(test, p, t);
}

/*
 * Each event add of a restore fails in turn: the events added before it
 * are destroyed, the event page is unmapped, and the same process then
 * takes the image whole.
 */
static void et_test_restore_unwinds(struct kunit *test)
{
	struct kfd_criu_test_image *t = et_image(test);
	struct kfd_process *p;
	int at;

	et_setup(test);
	for (at = 0; at < KFD_CRIU_TEST_EVENTS; at++) {
		p = et_process(test);
		et->calls = 0;
		et->maps = 0;
		et->fail_at = at;
		KUNIT_EXPECT_EQ_MSG(test, et_restore(p, t), -ENOMEM,
				    "failed add %d", at);
		KUNIT_EXPECT_EQ(test, et->calls, at + 1);
		/* The event page BO's mapping went with the events */
		KUNIT_EXPECT_EQ(test, et->maps, 0);
		et_expect_empty(test, p, at);
		et->fail_at = -1;
		KUNIT_ASSERT_EQ(test, et_restore(p, t), 0);
		et_expect_image(test, p, t);
	}
}

/* A process with an event or a signal page of its own is refused as is. */
static void et_test_restore_refuses_busy(struct kunit *test)
{
	struct kfd_criu_test_image *t = et_image(test);
	struct kfd_process *p = et_process(test);
	u64 *page = kunit_kzalloc(test, KFD_SIGNAL_EVENT_LIMIT * 8, GFP_KERNEL);

	et_setup(test);
	KUNIT_ASSERT_NOT_NULL(test, page);
	/* An event page of its own, as kfd_kmap_event_page() leaves it */
	mutex_lock(&p->event_mutex);
	p->signal_page = page;
	p->signal_mapped_size = KFD_SIGNAL_EVENT_LIMIT * 8;
	mutex_unlock(&p->event_mutex);
	KUNIT_EXPECT_EQ(test, et_restore(p, t), -EBUSY);
	KUNIT_EXPECT_EQ(test, et->calls, 0);
	mutex_lock(&p->event_mutex);
	KUNIT_EXPECT_NOT_NULL(test, kfd_event_signal_slots_locked(p));
	KUNIT_EXPECT_EQ(test, kfd_get_num_events(p), 0);
	mutex_unlock(&p->event_mutex);
}

static struct kunit_case kfd_criu_events_test_cases[] = {
	KUNIT_CASE(et_test_restore),
	KUNIT_CASE(et_test_restore_unwinds),
	KUNIT_CASE(et_test_restore_refuses_busy),
	{}
};

static struct kunit_suite kfd_criu_events_suite = {
	.name = "kfd_criu_events",
	.test_cases = kfd_criu_events_test_cases,
};

kunit_test_suite(kfd_criu_events_suite);

/* The seams of kfd_criu_events.c, for the ops-level tests of kfd_criu.c */
#include "kfd_criu_test_seams.h"

const struct kfd_criu_events_seams kfd_criu_events_seams = {
	.event_add = kfd_criu_event_add,
};
