// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: kfd_heartbeat - the demo's patient
 *
 * A program whose heartbeat is a KFD event: twice a second it signals an
 * auto-reset event and waits for it, and prints the beat. The event lives
 * in the kernel's KFD state, so after a checkpoint and restore the beats
 * only go on if that state came back: a lost event makes SET_EVENT or the
 * wait fail, and the program says so and stops.
 *
 * Usage: kfd_heartbeat [--no-kfd]  (prints to stdout, one line per beat)
 *
 * --no-kfd beats through an eventfd instead, so a benchmark can compare
 * CRIU's work on the same program with and without KFD state.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/kfd_ioctl.h>

static int create_heartbeat_event(int kfd, __u32 *id)
{
	struct kfd_ioctl_create_event_args args = {
		.event_type = KFD_IOC_EVENT_SIGNAL,
		.auto_reset = 1,
	};

	if (ioctl(kfd, AMDKFD_IOC_CREATE_EVENT, &args))
		return -errno;
	*id = args.event_id;
	return 0;
}

/* Signal the event, then wait for it: a beat needs the event to exist. */
static int beat(int kfd, __u32 id)
{
	struct kfd_ioctl_set_event_args set = { .event_id = id };
	struct kfd_event_data data = { .event_id = id };
	struct kfd_ioctl_wait_events_args wait = {
		.events_ptr = (__u64)(unsigned long)&data,
		.num_events = 1,
		.wait_for_all = 1,
		.timeout = 1000,
	};

	if (ioctl(kfd, AMDKFD_IOC_SET_EVENT, &set))
		return -errno;
	if (ioctl(kfd, AMDKFD_IOC_WAIT_EVENTS, &wait))
		return -errno;
	return wait.wait_result == KFD_IOC_WAIT_RESULT_COMPLETE ? 0 : -ETIME;
}

/* The same beat without KFD: write an eventfd, then read it back. */
static int beat_without_kfd(int efd)
{
	eventfd_t value;

	if (eventfd_write(efd, 1) || eventfd_read(efd, &value))
		return -errno;
	return value == 1 ? 0 : -EIO;
}

static int run_without_kfd(void)
{
	unsigned long beats = 0;
	int efd = eventfd(0, EFD_CLOEXEC);

	if (efd < 0) {
		printf("cannot create an eventfd: %s\n", strerror(errno));
		return 1;
	}
	printf("pid %d: my heart is an eventfd\n", getpid());
	for (;;) {
		if (beat_without_kfd(efd)) {
			printf("beat %lu FAILED\n", beats + 1);
			return 1;
		}
		printf("beat %lu (eventfd)\n", ++beats);
		usleep(500000);
	}
}

int main(int argc, char **argv)
{
	unsigned long beats = 0;
	__u32 id = 0;
	int kfd, ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "--no-kfd"))
		return run_without_kfd();
	kfd = open("/dev/kfd", O_RDWR);
	if (kfd < 0) {
		printf("cannot open /dev/kfd: %s\n", strerror(errno));
		return 1;
	}
	ret = create_heartbeat_event(kfd, &id);
	if (ret) {
		printf("cannot create the heartbeat event: %s\n", strerror(-ret));
		return 1;
	}
	printf("pid %d: my heart is KFD event %u\n", getpid(), id);
	for (;;) {
		ret = beat(kfd, id);
		if (ret) {
			printf("beat %lu FAILED: %s (KFD state lost)\n",
			       beats + 1, strerror(-ret));
			return 1;
		}
		printf("beat %lu (event %u fired)\n", ++beats, id);
		usleep(500000);
	}
}
