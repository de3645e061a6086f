// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: a stand-in for CRIU's amdgpu_plugin.so
 *
 * Debian does not ship CRIU's amdgpu plugin. This one has its name and
 * claims /dev/kfd as it does, so that kfd_criu can be tested beside it: a
 * /dev/kfd mapping or file is taken (no image is written: a dump through
 * it would be a silent, empty one), anything else declined.
 */
#include <errno.h>
#include <stddef.h>
#include <sys/stat.h>

#include "criu-plugin.h"

static bool is_kfd(const struct stat *st)
{
	struct stat kfd;

	return S_ISCHR(st->st_mode) && !stat("/dev/kfd", &kfd) && kfd.st_rdev == st->st_rdev;
}

static int standin_dump_file(int fd, int id __attribute__((unused)))
{
	struct stat st;

	return !fstat(fd, &st) && is_kfd(&st) ? 0 : -ENOTSUP;
}

static int standin_handle_device_vma(int fd __attribute__((unused)), const struct stat *st)
{
	return is_kfd(st) ? 0 : -ENOTSUP;
}

CR_PLUGIN_REGISTER("amdgpu_plugin", NULL, NULL)
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__DUMP_EXT_FILE, standin_dump_file)
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__HANDLE_DEVICE_VMA, standin_handle_device_vma)
