// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: a process with /dev/kfd and the thunk's files in /dev/shm
 *
 * Does with /dev/shm what ROCm's thunk (libhsakmt) does: opens
 * hsakmt_shared_mem, sizes it, writes a magic and maps it shared, and maps
 * the named semaphore hsakmt_semaphore. (It opens the semaphore a second
 * time after creating it, so that its mapping has the file's final name,
 * as in every ROCm process of a boot but the first; with --first it keeps
 * the mapping sem_open() created the semaphore with, under a temporary
 * name that glibc has deleted since, as the first one does.) Then it
 * counts, under the semaphore, into the shared file and into COUNTER_FILE,
 * until killed.
 * A restore whose /dev/shm lacks the files must bring them back, with the
 * semaphore posted, or the count stops.
 */
#include <errno.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/kfd_ioctl.h>

#define SHM_NAME	"/hsakmt_shared_mem"
#define SEM_NAME	"/hsakmt_semaphore"
#define SHM_SIZE	4096
#define SHM_MAGIC	0x4b464443u	/* any: the restore must keep it */

static uint32_t *map_shared_mem(void)
{
	uint32_t *mem;
	int fd = shm_open(SHM_NAME, O_CREAT | O_RDWR, 0666);

	if (fd < 0 || fchmod(fd, 0666) || ftruncate(fd, SHM_SIZE))
		return NULL;
	mem = mmap(NULL, SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (mem == MAP_FAILED)
		return NULL;
	mem[0] = SHM_MAGIC;
	return mem;
}

static sem_t *map_semaphore(bool first)
{
	sem_t *sem = sem_open(SEM_NAME, O_CREAT, 0666, 1);

	if (sem == SEM_FAILED)
		return NULL;
	if (first)
		return sem;
	sem_close(sem);
	sem = sem_open(SEM_NAME, 0);
	return sem == SEM_FAILED ? NULL : sem;
}

static int count(const char *path, uint32_t *mem, sem_t *sem)
{
	FILE *f;

	for (;;) {
		if (sem_wait(sem))
			return -errno;
		if (mem[0] != SHM_MAGIC) {
			fprintf(stderr, "the shared file lost its magic\n");
			return -EBADMSG;
		}
		mem[1]++;
		f = fopen(path, "w");
		if (f)
			fprintf(f, "%u\n", mem[1]);
		if (!f || fclose(f))
			return -errno;
		if (sem_post(sem))
			return -errno;
		usleep(100000);
	}
}

int main(int argc, char **argv)
{
	struct kfd_ioctl_create_event_args event = {
		.event_type = KFD_IOC_EVENT_SIGNAL,
	};
	bool first = argc == 3 && !strcmp(argv[1], "--first");
	uint32_t *mem;
	sem_t *sem;
	int kfd, ret;

	if (argc != 2 && !first) {
		fprintf(stderr, "usage: %s [--first] COUNTER_FILE\n", argv[0]);
		return 2;
	}
	kfd = open("/dev/kfd", O_RDWR);
	if (kfd < 0 || ioctl(kfd, AMDKFD_IOC_CREATE_EVENT, &event)) {
		fprintf(stderr, "/dev/kfd: %s\n", strerror(errno));
		return 1;
	}
	umask(0);
	mem = map_shared_mem();
	sem = mem ? map_semaphore(first) : NULL;
	if (!sem) {
		fprintf(stderr, "/dev/shm: %s\n", strerror(errno));
		return 1;
	}
	ret = count(argv[argc - 1], mem, sem);
	fprintf(stderr, "%s: %s\n", argv[argc - 1], strerror(-ret));
	return 1;
}
