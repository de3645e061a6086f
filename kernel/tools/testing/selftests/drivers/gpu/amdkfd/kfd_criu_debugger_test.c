// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: CRIU image mode and an attached debugger
 *
 * Runs as root on a kernel with amdkfd; needs no GPU. A child creates an
 * event and hands its /dev/kfd file to the test. The test seizes the child
 * with ptrace and, as ROCgdb does, enables the KFD debug trap on it from
 * its own /dev/kfd. An image-mode dump of the child then fails with EBUSY
 * without writing a byte, and leaves the child running: UNPAUSE works and
 * the child's event still does. Once the debugger disables the trap, the
 * same dump succeeds. A debugger enabling the trap on its own process is
 * refused the same way.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/kfd_ioctl.h>

#include "../../../kselftest_harness.h"
#include "kfd_criu_util.h"

/* Enables (@enable) or disables the KFD debug trap of @pid through @fd */
static int debug_trap(int fd, pid_t pid, bool enable, int event_fd)
{
	struct kfd_runtime_info rinfo;
	struct kfd_ioctl_dbg_trap_args args;

	memset(&args, 0, sizeof(args));
	args.pid = pid;
	if (enable) {
		args.op = KFD_IOC_DBG_TRAP_ENABLE;
		args.enable.rinfo_ptr = (uintptr_t)&rinfo;
		args.enable.rinfo_size = sizeof(rinfo);
		args.enable.dbg_fd = event_fd;
	} else {
		args.op = KFD_IOC_DBG_TRAP_DISABLE;
	}
	return kfd_ioctl(fd, AMDKFD_IOC_DBG_TRAP, &args);
}

static int create_signal_event(int fd, __u32 *id)
{
	struct kfd_ioctl_create_event_args args = {
		.event_type = KFD_IOC_EVENT_SIGNAL,
	};
	int ret = kfd_ioctl(fd, AMDKFD_IOC_CREATE_EVENT, &args);

	*id = args.event_id;
	return ret;
}

/* Sets event @id and waits for it: the process's KFD state still works */
static int signal_and_wait(int fd, __u32 id)
{
	struct kfd_ioctl_set_event_args set = { .event_id = id };
	struct kfd_event_data data = { .event_id = id };
	struct kfd_ioctl_wait_events_args wait = {
		.events_ptr = (uintptr_t)&data,
		.num_events = 1,
		.wait_for_all = 1,
		.timeout = 1000,
	};
	int ret;

	ret = kfd_ioctl(fd, AMDKFD_IOC_SET_EVENT, &set);
	if (!ret)
		ret = kfd_ioctl(fd, AMDKFD_IOC_WAIT_EVENTS, &wait);
	if (!ret && wait.wait_result != KFD_IOC_WAIT_RESULT_COMPLETE)
		ret = -ETIMEDOUT;
	return ret;
}

/* The debuggee: sends its kfd file, then uses its event after the dumps */
static void debuggee_main(int sock, void *ctx)
{
	int fd = kfd_open();
	__u32 id;

	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(!create_signal_event(fd, &id));
	CHILD_CHECK(!send_fd(sock, fd, &id, sizeof(id)));
	sync_wait(sock);	/* until the dumps are done */
	CHILD_CHECK(!signal_and_wait(fd, id));
	_exit(0);
}

/* Runs PROCESS_INFO, CHECKPOINT and UNPAUSE; returns CHECKPOINT's result */
static int dump_once(struct __test_metadata *_metadata, int kfd, int memfd)
{
	struct kfd_ioctl_criu_args args;
	int ret;

	EXPECT_EQ(0, criu_image_op(kfd, KFD_CRIU_OP_PROCESS_INFO, -1, &args));
	ret = criu_image_op(kfd, KFD_CRIU_OP_CHECKPOINT, memfd, &args);
	EXPECT_EQ(0, criu_image_op(kfd, KFD_CRIU_OP_UNPAUSE, -1, &args));
	return ret;
}

TEST(dump_with_debugger_is_busy)
{
	int dbg, memfd, events[2];
	struct kfd_dumpee d;
	__u32 id;

	if (kfd_unusable())
		SKIP(return, "%s", kfd_unusable());
	ASSERT_EQ(0, kfd_dumpee_start(&d, debuggee_main, NULL, &id, sizeof(id)));
	dbg = kfd_open();
	ASSERT_LE(0, dbg);
	ASSERT_EQ(0, pipe2(events, O_CLOEXEC | O_NONBLOCK));
	memfd = memfd_create("kfd-criu-image", MFD_CLOEXEC);
	ASSERT_LE(0, memfd);

	ASSERT_EQ(0, debug_trap(dbg, d.pid, true, events[1]));
	EXPECT_EQ(-EBUSY, dump_once(_metadata, d.kfd, memfd));
	EXPECT_EQ(0, fd_size(memfd)) TH_LOG("a refused dump wrote to the image");

	/* Detached, the same process dumps */
	ASSERT_EQ(0, debug_trap(dbg, d.pid, false, -1));
	EXPECT_EQ(0, dump_once(_metadata, d.kfd, memfd));
	EXPECT_LT(0, fd_size(memfd));

	EXPECT_EQ(0, kfd_dumpee_finish(&d)) TH_LOG("the debuggee's event broke");
	close(memfd);
	close(events[0]);
	close(events[1]);
	close(dbg);
}

/* A process that debugs itself has a debugger attached, too. */
TEST(dump_of_self_debugging_process_is_busy)
{
	int fd, memfd, events[2];
	__u32 id;

	if (kfd_no_signal_events())
		SKIP(return, "%s", kfd_no_signal_events());
	fd = kfd_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, create_signal_event(fd, &id));
	ASSERT_EQ(0, pipe2(events, O_CLOEXEC | O_NONBLOCK));
	memfd = memfd_create("kfd-criu-image", MFD_CLOEXEC);
	ASSERT_LE(0, memfd);

	ASSERT_EQ(0, debug_trap(fd, getpid(), true, events[1]));
	EXPECT_EQ(-EBUSY, dump_once(_metadata, fd, memfd));
	EXPECT_EQ(0, fd_size(memfd));
	EXPECT_EQ(0, signal_and_wait(fd, id));
	ASSERT_EQ(0, debug_trap(fd, getpid(), false, -1));
	EXPECT_EQ(0, dump_once(_metadata, fd, memfd));
	EXPECT_LT(0, fd_size(memfd));

	close(memfd);
	close(events[0]);
	close(events[1]);
	close(fd);
}

TEST_HARNESS_MAIN
