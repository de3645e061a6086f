/* SPDX-License-Identifier: GPL-2.0 OR MIT */

/*
 * A valid events image in test memory, for the KUnit tests of the ops
 * (kfd_criu_test.c) and of the event restore (kfd_criu_events_test.c):
 * two signal events, a debug event and a memory exception event, and
 * the contents of a signal page.
 */

#ifndef KFD_CRIU_TEST_EVENTS_H_INCLUDED
#define KFD_CRIU_TEST_EVENTS_H_INCLUDED

#include <kunit/test.h>

#include "../kfd_criu.h"

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

#endif
