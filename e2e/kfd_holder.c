// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: kfd_holder - a process with live KFD state, for the e2e tier
 *
 * Opens /dev/kfd, creates a signal event, and then counts forever into a
 * file so a test can see whether it still runs. Until the CRIU plugin
 * exists it shows how CRIU treats such a process.
 *
 * Usage: kfd_holder COUNTER_FILE
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/kfd_ioctl.h>

static int create_signal_event(int kfd, __u32 *event_id)
{
	struct kfd_ioctl_create_event_args args = {
		.event_type = KFD_IOC_EVENT_SIGNAL,
	};

	if (ioctl(kfd, AMDKFD_IOC_CREATE_EVENT, &args))
		return -errno;
	*event_id = args.event_id;
	return 0;
}

static int write_counter(const char *path, unsigned long count)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fprintf(f, "%lu\n", count);
	return fclose(f) ? -errno : 0;
}

int main(int argc, char **argv)
{
	unsigned long count = 0;
	__u32 event_id;
	int kfd, ret;

	if (argc != 2) {
		fprintf(stderr, "usage: %s COUNTER_FILE\n", argv[0]);
		return 2;
	}
	kfd = open("/dev/kfd", O_RDWR);
	if (kfd < 0) {
		fprintf(stderr, "open /dev/kfd: %s\n", strerror(errno));
		return 1;
	}
	ret = create_signal_event(kfd, &event_id);
	if (ret) {
		fprintf(stderr, "CREATE_EVENT: %s\n", strerror(-ret));
		return 1;
	}
	for (;;) {
		ret = write_counter(argv[1], ++count);
		if (ret) {
			fprintf(stderr, "%s: %s\n", argv[1], strerror(-ret));
			return 1;
		}
		usleep(100000);
	}
}
