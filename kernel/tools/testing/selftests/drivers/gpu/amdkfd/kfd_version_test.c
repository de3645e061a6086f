// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: KFD ioctl version
 *
 * The image mode of AMDKFD_IOC_CRIU_OP leaves the KFD ioctl version as
 * the base kernel has it: upstream gives minor versions out in merge
 * order, and userspace finds image mode with a probe. The running kernel
 * must still report exactly the version its uAPI header declares.
 */

#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/kfd_ioctl.h>

#include "../../../kselftest_harness.h"

FIXTURE(kfd) {
	int fd;
};

FIXTURE_SETUP(kfd)
{
	self->fd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	if (self->fd < 0 && errno == ENOENT)
		SKIP(return, "/dev/kfd does not exist (no amdkfd in this kernel)");
	/* Since 7.0 an open without a GPU makes no KFD process */
	if (self->fd < 0 && errno == EINVAL)
		SKIP(return, "this kernel makes no KFD process without a GPU");
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/kfd: %s", strerror(errno));
}

FIXTURE_TEARDOWN(kfd)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(kfd, reports_declared_version)
{
	struct kfd_ioctl_get_version_args args = { 0 };

	ASSERT_EQ(0, ioctl(self->fd, AMDKFD_IOC_GET_VERSION, &args))
		TH_LOG("GET_VERSION: %s", strerror(errno));
	EXPECT_EQ((__u32)KFD_IOCTL_MAJOR_VERSION, args.major_version);
	EXPECT_EQ((__u32)KFD_IOCTL_MINOR_VERSION, args.minor_version);
}

TEST_F(kfd, rejects_unknown_ioctl)
{
	/* One past the last command the uAPI declares. */
	unsigned long cmd = _IOWR(AMDKFD_IOCTL_BASE, AMDKFD_COMMAND_END,
				  struct kfd_ioctl_get_version_args);
	struct kfd_ioctl_get_version_args args = { 0 };

	EXPECT_EQ(-1, ioctl(self->fd, cmd, &args));
	EXPECT_EQ(ENOTTY, errno);
}

TEST_HARNESS_MAIN
