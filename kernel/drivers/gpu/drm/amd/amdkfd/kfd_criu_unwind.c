// SPDX-License-Identifier: GPL-2.0 OR MIT

/**
 * DOC: CRIU restore undo where no signal reaches
 *
 * A RESTORE usually fails because a fatal signal ended its stream, and
 * amdgpu waits interruptibly for the reservations it takes to unmap and
 * free a BO or to drop a queue's hold on its buffers. So the undo steps
 * that free through amdgpu run in a worker, which no signal reaches,
 * while the caller waits for them uninterruptibly with p->mutex held.
 */

#include <linux/kthread.h>
#include <linux/lockdep.h>
#include <linux/sched.h>
#include <linux/workqueue.h>

#include <kunit/test-bug.h>

#include "kfd_criu.h"
#include "kfd_priv.h"

/**
 * struct kfd_criu_unwind_work - an undo step run on behalf of a RESTORE
 * @work: on system_unbound_wq
 * @fn: the step
 * @data: its argument
 * @mm: the caller's address space, or NULL
 * @test: the KUnit test the RESTORE runs in, or NULL
 */
struct kfd_criu_unwind_work {
	struct work_struct work;
	void (*fn)(void *data);
	void *data;
	struct mm_struct *mm;
	struct kunit *test;
};

/*
 * KUnit's static stubs find the running test through current; the worker
 * runs its step as a part of the caller's test, with the same fakes. Only
 * a kernel built with the CRIU KUnit tests has stubs to find; the kworker
 * gets back whatever it had.
 */
static struct kunit *kfd_criu_unwind_set_test(struct kunit *test)
{
	struct kunit *old = NULL;

#if IS_BUILTIN(CONFIG_HSA_AMD_CRIU_KUNIT_TEST)
	old = current->kunit_test;
	current->kunit_test = test;
#endif
	return old;
}

static void kfd_criu_unwind_work_fn(struct work_struct *work)
{
	struct kfd_criu_unwind_work *uw =
		container_of(work, struct kfd_criu_unwind_work, work);
	struct kunit *old;

	if (uw->mm)
		kthread_use_mm(uw->mm);
	old = kfd_criu_unwind_set_test(uw->test);
	uw->fn(uw->data);
	kfd_criu_unwind_set_test(old);
	if (uw->mm)
		kthread_unuse_mm(uw->mm);
}

/**
 * kfd_criu_run_unwind - run an undo step of a RESTORE where no signal reaches
 * @p: the process being restored
 * @fn: the step
 * @data: its argument
 *
 * amdgpu reserves BOs and VMs with interruptible waits when it unmaps and
 * frees them, and a RESTORE is mostly undone in a task with a fatal
 * signal pending: there such a step fails whenever it has to wait, and
 * leaves behind what it did not undo, a BO that amdgpu already took off
 * its lists even beyond any later free. A kworker never has a signal
 * pending, and its small allocations are not expected to fail as an OOM
 * victim's may, so the step runs in one while the caller waits
 * uninterruptibly. The
 * steps are bounded: they undo what this RESTORE created, without
 * waiting for the GPU.
 *
 * The caller holds p->mutex for @fn throughout: @fn acts on @p as the
 * caller would, but lockdep knows only the caller as the mutex's owner,
 * so @fn must neither assert, take nor release it. flush_work() of a
 * work item that has not finished tells lockdep that the caller waits for
 * @fn with p->mutex held, so the locks @fn takes are then checked against
 * p->mutex. @fn also runs in the
 * caller's address space, which stays while the caller waits: destroying
 * an SDMA queue reads its counter from user memory.
 *
 * Context: p->mutex held; sleeps.
 */
void kfd_criu_run_unwind(struct kfd_process *p, void (*fn)(void *data),
			 void *data)
{
	struct kfd_criu_unwind_work uw = {
		.fn = fn,
		.data = data,
		.mm = current->mm,
		.test = kunit_get_current_test(),
	};

	lockdep_assert_held(&p->mutex);

	INIT_WORK_ONSTACK(&uw.work, kfd_criu_unwind_work_fn);
	queue_work(system_unbound_wq, &uw.work);
	flush_work(&uw.work);
	destroy_work_on_stack(&uw.work);
}
