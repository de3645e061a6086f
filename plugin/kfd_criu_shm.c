// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: kfd_criu_shm - the thunk's files in /dev/shm
 *
 * ROCm's thunk (libhsakmt) opens and maps two files in /dev/shm, its
 * shared memory and its semaphore. CRIU restores them by path, and a fresh
 * host has neither: a /dev/kfd file's metadata carries their size, first
 * bytes, owner and mode, and the names under which CRIU maps a semaphore
 * whose first name was deleted, and the restore makes them again before
 * RESTORE.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kfd_criu.h"

/* The thunk's files are a page or two; an image asking for more is bad */
#define SHM_SIZE_MAX		(1 << 20)
#define SHM_SEMAPHORE		"sem.hsakmt_semaphore"
/* CRIU's name for a hard link to a file mapped under a deleted name */
#define LINK_REMAP_FMT		"link_remap.%u%c"
#define LINK_REMAPS_MAX		8

/* Files in /dev/shm that ROCm's thunk (libhsakmt) opens and maps */
static const char *const thunk_shm_files[THUNK_SHM_FILES] = {
	"hsakmt_shared_mem", SHM_SEMAPHORE,
};

/**
 * find_thunk_shm() - note the thunk's files of a dumped process
 * @pid: the process, whose /dev/shm they are looked up in
 * @shm: where the notes go
 * @meta: the metadata of its /dev/kfd file, which then points at @shm
 *
 * CRIU restores them by path, and a fresh host has none.
 */
void find_thunk_shm(pid_t pid, struct thunk_shm *shm, KfdCriuMeta *meta)
{
	unsigned int i, n = 0;
	char path[512];
	struct stat st;
	ssize_t len;
	int fd;

	for (i = 0; i < ARRAY_SIZE(thunk_shm_files); i++) {
		snprintf(path, sizeof(path), "%s/proc/%d/root/dev/shm/%s", kfd_criu_root, pid,
			 thunk_shm_files[i]);
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		len = fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) ? -1 :
		      pread(fd, shm->heads[n], SHM_HEAD_MAX, 0);
		if (fd >= 0)
			close(fd);
		if (len < 0)
			continue;
		kfd_criu_shm_file__init(&shm->files[n]);
		shm->files[n].name = (char *)thunk_shm_files[i];
		shm->files[n].size = st.st_size;
		shm->files[n].mode = st.st_mode & 07777;
		shm->files[n].uid = st.st_uid;
		shm->files[n].gid = st.st_gid;
		shm->files[n].head.len = len;
		shm->files[n].head.data = shm->heads[n];
		shm->ptrs[n] = &shm->files[n];
		n++;
	}
	meta->n_shm_files = n;
	meta->shm_files = shm->ptrs;
}

/*
 * The names in task @pid's /dev/shm that CRIU made for the thunk's
 * semaphore, into @names: hard links to it named link_remap.<id>.
 */
static unsigned int find_link_remaps(pid_t pid, char names[][NAME_MAX + 1])
{
	char path[PATH_MAX], end;
	struct stat sem, st;
	unsigned int n = 0, num;
	struct dirent *e;
	DIR *dir = NULL;
	int dfd;

	snprintf(path, sizeof(path), "%s/proc/%d/root/dev/shm", kfd_criu_root, pid);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0 && !fstatat(dfd, SHM_SEMAPHORE, &sem, AT_SYMLINK_NOFOLLOW))
		dir = fdopendir(dfd);
	if (!dir) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	while (n < LINK_REMAPS_MAX && (e = readdir(dir)))
		if (sscanf(e->d_name, LINK_REMAP_FMT, &num, &end) == 1 &&
		    !fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
		    st.st_ino == sem.st_ino && st.st_dev == sem.st_dev)
			snprintf(names[n++], NAME_MAX + 1, "%s", e->d_name);
	closedir(dir);
	return n;
}

/**
 * note_link_remaps() - note the names CRIU maps the thunk's semaphore by
 * @f: a /dev/kfd file of this dump
 *
 * The first ROCm process of a boot maps the thunk's semaphore under the
 * temporary name that sem_open() created it as, deleted once the file had
 * its final name. CRIU dumps such a mapping through a hard link that it
 * makes beside it, link_remap.<id> (create_link_remap(),
 * criu/files-reg.c, with --link-remap), and needs that link at restore: a
 * fresh host has neither it nor the semaphore. At the end of a successful
 * dump, when the links are there (CRIU 4.0 and later remove them before
 * this when the tasks are left running), their names go into dumped file
 * @f's metadata, for the restore to make them again.
 */
void note_link_remaps(const struct kfd_dumped_file *f)
{
	char names[LINK_REMAPS_MAX][NAME_MAX + 1], *ptrs[LINK_REMAPS_MAX];
	unsigned int n = find_link_remaps(f->pid, names), i;
	KfdCriuShmFile *sem = NULL;
	KfdCriuMeta *meta;
	int ret;

	if (!n || kfd_criu_read_meta(f->id, &meta))
		return;
	for (i = 0; i < meta->n_shm_files; i++)
		if (!strcmp(meta->shm_files[i]->name, SHM_SEMAPHORE))
			sem = meta->shm_files[i];
	for (i = 0; i < n; i++)
		ptrs[i] = names[i];
	if (sem) {
		sem->n_link_remaps = n;
		sem->link_remaps = ptrs;
	}
	ret = sem ? kfd_criu_write_meta(f->id, meta) : -ENOENT;
	if (sem) {
		sem->n_link_remaps = 0;
		sem->link_remaps = NULL;
	}
	if (ret)
		pr_err("file %u: cannot note that CRIU maps %s by %s: a restore on a host without it fails\n",
		       f->id, SHM_SEMAPHORE, names[0]);
	else
		pr_info("file %u: CRIU maps %s by %s%s, noted for a fresh host\n",
			f->id, SHM_SEMAPHORE, names[0], n > 1 ? " and others" : "");
	kfd_criu_meta__free_unpacked(meta, NULL);
}

/*
 * Re-creates thunk file @f of /dev/kfd file @id if this task's /dev/shm
 * lacks it, with the dumped size, first bytes, owner and mode (CRIU checks
 * size and mode when it opens it).
 */
static int recreate_shm_file(unsigned int id, const KfdCriuShmFile *f)
{
	char path[512];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/dev/shm/%s", kfd_criu_root, f->name);
	if (strchr(f->name, '/') || f->head.len > f->size || f->size > SHM_SIZE_MAX) {
		pr_err("file %u: %s: bad metadata\n", id, path);
		return -EBADMSG;
	}
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST)
		return 0;
	errno = EIO;	/* what a short write means */
	if (fd < 0 || ftruncate(fd, f->size) ||
	    pwrite(fd, f->head.data, f->head.len, 0) != (ssize_t)f->head.len ||
	    fchown(fd, f->uid, f->gid) || fchmod(fd, f->mode & 0777))
		ret = -errno;
	if (fd >= 0)
		close(fd);
	if (ret && fd >= 0)
		unlink(path);
	if (ret)
		pr_err("file %u: cannot re-create %s: %s\n", id, path, strerror(-ret));
	else
		pr_info("file %u: %s was missing: re-created as dumped, %" PRIu64
			" bytes, mode %o\n", id, path, f->size, f->mode & 0777);
	return ret;
}

/*
 * Links the names CRIU dumped thunk file @f's mappings under, when it was
 * mapped under a deleted name, to @f where this task's /dev/shm lacks them:
 * CRIU links each back to that deleted name when it maps it (rfi_remap(),
 * criu/files-reg.c), after the task's files are restored.
 */
static int link_remaps(unsigned int id, const KfdCriuShmFile *f)
{
	char path[PATH_MAX], remap[PATH_MAX], end;
	unsigned int i, n;

	snprintf(path, sizeof(path), "%s/dev/shm/%s", kfd_criu_root, f->name);
	for (i = 0; i < f->n_link_remaps; i++) {
		snprintf(remap, sizeof(remap), "%s/dev/shm/%s", kfd_criu_root, f->link_remaps[i]);
		if (strchr(f->link_remaps[i], '/') ||
		    sscanf(f->link_remaps[i], LINK_REMAP_FMT, &n, &end) != 1) {
			pr_err("file %u: %s: bad metadata\n", id, remap);
			return -EBADMSG;
		}
		if (!link(path, remap)) {
			pr_info("file %u: %s was missing: linked to %s, for CRIU to map it by\n",
				id, remap, path);
		} else if (errno != EEXIST) {
			pr_err("file %u: cannot link %s to %s: %s\n", id, remap, path,
			       strerror(errno));
			return -errno;
		}
	}
	return 0;
}

/**
 * recreate_thunk_shm() - make the thunk's files that this task's /dev/shm lacks
 * @meta: the metadata of a /dev/kfd file
 *
 * Before RESTORE, so before CRIU opens or maps them in this task.
 *
 * Return: 0 or -errno, logged.
 */
int recreate_thunk_shm(const KfdCriuMeta *meta)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; !ret && i < meta->n_shm_files; i++)
		ret = recreate_shm_file(meta->file_id, meta->shm_files[i]) ?:
		      link_remaps(meta->file_id, meta->shm_files[i]);
	return ret;
}
