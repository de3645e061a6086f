// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: drm_reattach_maps - the mappings of reattached render nodes
 *
 * A dump lists, once per render node, the minors whose mappings it took
 * in kfdcriu-drm.img, and CRIU records those mappings without their
 * contents. A restored task's mappings of a listed minor get a memfd of
 * that name instead of the device, at their old offsets: shared memory of
 * the same size and protection that reads as zeros. criu then says, per
 * task and render node, how many bytes that is.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "drm_reattach.h"

#define MAPPINGS_IMAGE		"kfdcriu-drm.img"
#define MAPPINGS_IMAGE_MAX	(NR_RENDER_MINORS * 6 + 16)
#define ZERO_FILL_NAME		"drm_reattach:renderD"	/* /memfd:drm_reattach:renderD128 */
/*
 * How far past a mapping's offset its memfd reaches. CRIU gives a run of
 * mappings of one file the fd of the first, and UPDATE_VMA_MAP is not told
 * a mapping's length: the memfd covers more than any GEM object, which
 * costs nothing until touched.
 */
#define ZERO_FILL_SPAN		(1ULL << 40)

/* Linux 6.3; glibc's <sys/mman.h> of Debian 12 lacks it */
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL		0x0008U
#endif

/*
 * The render minors whose mappings the dump took for a reattach: collected
 * while dumping, read from the images once when restoring. -1: not known.
 */
static uint32_t mapped_minors[NR_RENDER_MINORS];
static int nr_mapped_minors = -1;

/**
 * struct zero_fill - the memory a restored task's mappings of one render
 * node get instead of the device
 * @minor: the dumped render minor
 * @fd: a memfd, kept open just above CRIU's service fds
 * @size: its size, past every mapping's offset so far
 */
static struct zero_fill {
	unsigned int minor;
	int fd;
	uint64_t size;
} zero_fills[NR_RENDER_MINORS];
static unsigned int nr_zero_fills;

/* Writes the render minors of the mappings this dump took into the images */
static int write_mapped_minors(void)
{
	KfdCriuDrmMappings mappings = KFD_CRIU_DRM_MAPPINGS__INIT;
	uint8_t buf[MAPPINGS_IMAGE_MAX];
	size_t len;

	mappings.n_minors = nr_mapped_minors;
	mappings.minors = mapped_minors;
	len = kfd_criu_drm_mappings__get_packed_size(&mappings);
	if (len > sizeof(buf))
		return -EMSGSIZE;
	kfd_criu_drm_mappings__pack(&mappings, buf);
	return kfd_criu_write_image(MAPPINGS_IMAGE, buf, len);
}

/* Whether the dump took the mappings of render minor @minor */
static bool minor_mapped(unsigned int minor)
{
	int i;

	for (i = 0; i < nr_mapped_minors && mapped_minors[i] != minor; i++)
		;
	return i < nr_mapped_minors;
}

/**
 * take_mappings() - note, once per render node, that the dump took its mappings
 * @minor: the render node's minor
 *
 * Return: 0, or -errno, logged: the mapping is then not taken.
 */
int take_mappings(unsigned int minor)
{
	char name[NODE_NAME_MAX];
	int ret;

	if (nr_mapped_minors < 0)
		nr_mapped_minors = 0;
	if (minor_mapped(minor))
		return 0;
	if (kfd_criu_images_streamed()) {
		pr_err("a mapping of %s: criu --stream is not supported: the plugin's image files would miss the streamer; dump to a directory\n",
		       node_name(minor, name));
		return -EINVAL;
	}
	if (nr_mapped_minors == NR_RENDER_MINORS) {
		pr_err("a mapping of %s: more than %d render nodes mapped\n",
		       node_name(minor, name), NR_RENDER_MINORS);
		return -ENOSPC;
	}
	mapped_minors[nr_mapped_minors++] = minor;
	ret = write_mapped_minors();
	if (ret) {
		nr_mapped_minors--;
		return ret == -ENOTSUP ? -EIO : ret;
	}
	pr_info("mappings of %s, no KFD GPU's render node: their contents are not dumped; restored as zero-filled memory\n",
		node_name(minor, name));
	return 0;
}

/*
 * The render minors whose mappings the dump took, from the images, once.
 * Images without the list (a dump that took none) have none.
 */
static int read_mapped_minors(void)
{
	KfdCriuDrmMappings *mappings;
	char buf[MAPPINGS_IMAGE_MAX + 2];
	ssize_t len;

	if (nr_mapped_minors >= 0)
		return 0;
	len = kfd_criu_read_file(criu_get_image_dir(), MAPPINGS_IMAGE, buf, sizeof(buf));
	nr_mapped_minors = len == -ENOENT ? 0 : -1;
	if (len == -ENOENT)
		return 0;
	mappings = len < 0 || len > MAPPINGS_IMAGE_MAX ? NULL :
		   kfd_criu_drm_mappings__unpack(NULL, len, (uint8_t *)buf);
	if (!mappings || mappings->n_minors > NR_RENDER_MINORS) {
		len = len < 0 ? len : -EBADMSG;
		pr_err("cannot read " MAPPINGS_IMAGE ": %s\n", strerror(-len));
		goto out;
	}
	memcpy(mapped_minors, mappings->minors, mappings->n_minors * sizeof(*mapped_minors));
	nr_mapped_minors = mappings->n_minors;
	len = 0;
out:
	if (mappings)
		kfd_criu_drm_mappings__free_unpacked(mappings, NULL);
	return len;
}

/* A new memfd for the mappings of dumped render minor @minor */
static int new_zero_fill(unsigned int minor, struct zero_fill **fill)
{
	char name[NODE_NAME_MAX];
	int fd, hidden, ret;

	snprintf(name, sizeof(name), ZERO_FILL_NAME "%u", minor);
	/* Never executable; kernels before 6.3 do not know the seal */
	fd = memfd_create(name, MFD_CLOEXEC | MFD_NOEXEC_SEAL);
	if (fd < 0 && errno == EINVAL)
		fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	hidden = fcntl(fd, F_DUPFD_CLOEXEC, kfd_criu_fd_base());
	ret = hidden < 0 ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	*fill = &zero_fills[nr_zero_fills++];
	**fill = (struct zero_fill){ .minor = minor, .fd = hidden };
	return 0;
}

/*
 * The memfd that dumped render minor @minor's mappings get, large enough
 * for one at offset @pgoff. One memfd per render node: two mappings of one
 * buffer share memory again, those of two buffers (their offsets differ)
 * do not.
 */
static int zero_fill_fd(unsigned int minor, uint64_t pgoff, int *fd)
{
	struct zero_fill *fill = NULL;
	unsigned int i;
	int ret;

	if (pgoff > (uint64_t)INT64_MAX - ZERO_FILL_SPAN)
		return -EOVERFLOW;
	for (i = 0; i < nr_zero_fills && !fill; i++)
		if (zero_fills[i].minor == minor)
			fill = &zero_fills[i];
	if (!fill) {
		ret = nr_zero_fills < NR_RENDER_MINORS ? new_zero_fill(minor, &fill) : -ENOSPC;
		if (ret)
			return ret;
	}
	if (fill->size < pgoff + ZERO_FILL_SPAN) {
		if (ftruncate(fill->fd, pgoff + ZERO_FILL_SPAN))
			return -errno;
		fill->size = pgoff + ZERO_FILL_SPAN;
	}
	*fd = fill->fd;
	return 0;
}

/**
 * kfd_drm_update_vma_map() - UPDATE_VMA_MAP of a mapping that the dump took
 * for a stateless reattach
 * @path: the mapped file's path in the dump
 * @addr: the mapping's address
 * @pgoff: its offset in the file, in bytes
 * @new_pgoff: the offset to map at: @pgoff, in the memfd
 * @plugin_fd: the fd CRIU maps through, by kfd_criu_vma_fd()
 *
 * Runs in the restored task, which gets zero-filled memory of the
 * mapping's size and protection in place of the device's.
 *
 * Return: 1 (which CRIU needs to take @new_pgoff), also for a mapping
 * that is refused (kfd_criu_refuse_vma()); -ENOTSUP for a mapping the dump
 * did not take.
 */
int kfd_drm_update_vma_map(const char *path, uint64_t addr, uint64_t pgoff,
			   uint64_t *new_pgoff, int *plugin_fd)
{
	int minor = kfd_criu_render_minor_of_path(path), fd = -1, ret;

	if (minor < 0)
		return -ENOTSUP;
	if (read_mapped_minors())
		return kfd_criu_refuse_vma(path, addr, new_pgoff, plugin_fd);
	if (!minor_mapped(minor))
		return -ENOTSUP;
	ret = zero_fill_fd(minor, pgoff, &fd) ?: kfd_criu_vma_fd(fd, plugin_fd);
	if (ret) {
		pr_err("mapping at %#" PRIx64 " of %s: no zero-filled memory for it: %s\n",
		       addr, path, strerror(-ret));
		return kfd_criu_refuse_vma(path, addr, new_pgoff, plugin_fd);
	}
	*new_pgoff = pgoff;
	pr_debug("mapping at %#" PRIx64 " of %s: zero-filled memory at offset %#" PRIx64 "\n",
		 addr, path, pgoff);
	return 1;
}

/*
 * Adds the mapping of /proc/<pid>/maps line @line to @bytes and @count, by
 * the index of its render node in the dump's list, if it is zero-filled
 * memory of one.
 */
static void count_zero_filled(const char *line, uint64_t *bytes, unsigned int *count)
{
	unsigned long long start, end;
	unsigned int minor;
	int path = 0, i;

	if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &start, &end, &path) < 2 || !path)
		return;
	if (sscanf(line + path, "/memfd:" ZERO_FILL_NAME "%u", &minor) != 1 || end < start)
		return;
	for (i = 0; i < nr_mapped_minors && mapped_minors[i] != minor; i++)
		;
	if (i == nr_mapped_minors)
		return;
	bytes[i] += end - start;
	count[i]++;
}

/**
 * kfd_drm_log_zero_filled() - say what a restored task's mappings lost
 * @pid: the task, in criu's PID namespace
 *
 * Runs in criu once the task's memory is in place (RESUME_DEVICES_LATE):
 * per dumped render node, how many bytes of its mappings are zero-filled
 * memory now. CRIU records mappings by path, so the count is per render
 * node of the task, whichever of its files of that node mapped them.
 */
void kfd_drm_log_zero_filled(int pid)
{
	uint64_t bytes[NR_RENDER_MINORS] = { 0 };
	unsigned int count[NR_RENDER_MINORS] = { 0 };
	char path[PATH_MAX], *line = NULL;
	size_t size = 0;
	unsigned int i;
	FILE *maps;

	if (read_mapped_minors() || !nr_mapped_minors)
		return;
	snprintf(path, sizeof(path), "%s/proc/%d/maps", kfd_criu_root, pid);
	maps = fopen(path, "re");
	if (!maps)
		return;
	while (getline(&line, &size, maps) > 0)
		count_zero_filled(line, bytes, count);
	free(line);
	fclose(maps);
	for (i = 0; i < NR_RENDER_MINORS; i++)
		if (count[i])
			pr_warn("pid %d: renderD%u: %" PRIu64 " bytes in %u mapping(s) are zero-filled memory now: their device contents were not dumped ("
				REATTACH_ENV ")\n", pid, mapped_minors[i], bytes[i], count[i]);
}

/**
 * drm_maps_init() - start of a CRIU stage
 * @stage: the stage
 *
 * A dump into a directory that holds an older dump's list of taken
 * mappings must not leave it for the restore: it is removed.
 */
void drm_maps_init(int stage)
{
	if (stage != CR_PLUGIN_STAGE__DUMP && stage != CR_PLUGIN_STAGE__PRE_DUMP)
		return;
	if (unlinkat(criu_get_image_dir(), MAPPINGS_IMAGE, 0) && errno != ENOENT)
		pr_warn("cannot remove the older " MAPPINGS_IMAGE ": %s\n", strerror(errno));
}

/**
 * drm_maps_fini() - end of a CRIU stage: forget its mappings and memfds
 */
void drm_maps_fini(void)
{
	unsigned int i;

	for (i = 0; i < nr_zero_fills; i++)
		close(zero_fills[i].fd);
	nr_zero_fills = 0;
	nr_mapped_minors = -1;
}
