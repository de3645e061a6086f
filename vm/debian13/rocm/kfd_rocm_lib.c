// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: kfd_rocm_lib - /dev/kfd as the process holds it
 *
 * The ROCm libraries keep their /dev/kfd descriptor to themselves
 * (libhsakmt's kfd_fd is static). These helpers look at the process from
 * outside the libraries: which descriptor is /dev/kfd, whether an address
 * (an event's mailbox) lies in a mapping of /dev/kfd, and whether the
 * kernel still answers an ioctl on that descriptor.
 */

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/kfd_ioctl.h>

#include "kfd_rocm_lib.h"

static bool fd_is_kfd(DIR *dir, const char *name)
{
	char target[64];
	ssize_t n;

	n = readlinkat(dirfd(dir), name, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	return !strcmp(target, "/dev/kfd");
}

/**
 * kfd_find_fd() - the lowest descriptor of this process open on /dev/kfd
 *
 * Return: the descriptor, -ENOENT when none is, or -errno of opendir.
 */
int kfd_find_fd(void)
{
	struct dirent *d;
	int fd = -ENOENT;
	DIR *dir;

	dir = opendir("/proc/self/fd");
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.' || !fd_is_kfd(dir, d->d_name))
			continue;
		if (fd < 0 || atoi(d->d_name) < fd)
			fd = atoi(d->d_name);
	}
	closedir(dir);
	return fd;
}

/**
 * kfd_page_mapped() - whether @addr lies in a mapping of /dev/kfd
 * @addr: a user address, e.g. a KFD event's mailbox slot
 *
 * With no GPU, libhsakmt maps the kernel's event page from /dev/kfd and
 * an event's mailbox is a slot in it (ROCT-Thunk-Interface rocm-6.2.4,
 * src/events.c, hsaKmtCreateEvent: the mmap of kfd_fd at the returned
 * event_page_offset, HWData2 = &events_page[event_slot_index]).
 *
 * Return: true when a line of /proc/self/maps naming /dev/kfd covers it.
 */
bool kfd_page_mapped(uint64_t addr)
{
	unsigned long long start, end;
	char line[512];
	bool found = false;
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (!strstr(line, " /dev/kfd"))
			continue;
		if (sscanf(line, "%llx-%llx", &start, &end) == 2)
			found = addr >= start && addr < end;
	}
	fclose(f);
	return found;
}

/**
 * kfd_get_version() - AMDKFD_IOC_GET_VERSION on @fd
 * @fd: a descriptor open on /dev/kfd
 * @major: the kernel interface's major version
 * @minor: and its minor version
 *
 * Return: 0, or -errno of the ioctl.
 */
int kfd_get_version(int fd, uint32_t *major, uint32_t *minor)
{
	struct kfd_ioctl_get_version_args args = { 0 };

	if (ioctl(fd, AMDKFD_IOC_GET_VERSION, &args))
		return -errno;
	*major = args.major_version;
	*minor = args.minor_version;
	return 0;
}

/**
 * kfd_check_fd() - the process still holds /dev/kfd where it did, live
 * @expected: the descriptor it held /dev/kfd on before the dump
 * @major: receives the kernel interface's major version
 * @minor: and its minor version
 *
 * Return: NULL, or why the check failed.
 */
const char *kfd_check_fd(int expected, uint32_t *major, uint32_t *minor)
{
	int fd = kfd_find_fd();

	if (fd < 0)
		return "no descriptor of this process is open on /dev/kfd";
	if (fd != expected)
		return "/dev/kfd is open on another descriptor than before";
	if (kfd_get_version(fd, major, minor))
		return "GET_VERSION on the /dev/kfd descriptor failed";
	return NULL;
}

/**
 * clock_ns() - a clock's reading in nanoseconds
 * @clock: CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID, ...
 *
 * Return: the reading, 0 if the clock cannot be read.
 */
uint64_t clock_ns(int clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/**
 * sleep_ms() - sleep @ms milliseconds, signals or not
 * @ms: how long
 */
void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000l };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}
