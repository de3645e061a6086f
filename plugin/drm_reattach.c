// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: drm_reattach - CRIU plugin: stateless reattach of render nodes
 *
 * A plugin of its own, for any vendor's render nodes; installed beside
 * kfd_criu, it leaves KFD GPUs' render nodes to it. Opt-in, with the
 * option enable=1 for the criu that dumps (DRM_REATTACH_ENABLE=1 in its
 * environment, or kfd_criu_options.c's other channels; the older
 * KFD_CRIU_DRM_REATTACH=1 still counts). A render node file of a DRM
 * device that is no KFD GPU's (an Intel
 * iGPU that encodes video, vgem) is dumped as the device it was open on:
 * the driver's name, the PCI address of the device if it has one, the
 * minor, and the file's status flags. Nothing of the device's state is
 * read, so the process loses its GEM objects, handles and contexts: the
 * restore opens a render node of the same device (or of the same driver)
 * as a fresh DRM file, and the kernel then answers the process's old
 * handles with ENOENT or EINVAL, as after a lost device.
 *
 * The file's mappings cannot come back either. Each becomes shared memory
 * of the same size and protection that reads as zeros: a memfd per dumped
 * render node in each restored task, at the mapping's old offset, which
 * UPDATE_VMA_MAP hands CRIU instead of the device. The process then does
 * not fault on its old pointers; what it reads there is not its data.
 *
 * Which plugin takes what, in either load order (CRIU asks plugins in the
 * order it loaded them, the readdir() order of its plugin directory, and
 * the first that does not answer -ENOTSUP takes a file or mapping):
 *
 * - /dev/kfd, and render nodes of KFD GPUs, are never drm_reattach's: a
 *   render node counts as no KFD GPU's only if a KFD topology read now
 *   shows no GPU of that minor and hides none (kfd_criu takes those of
 *   tasks that hold /dev/kfd, with their state, as part of the KFD
 *   process's GPU map; others stay refused);
 * - a render node of no KFD GPU is never kfd_criu's;
 * - at restore, a kfdcriu-<id>.img with a drm_node is drm_reattach's, any
 *   other kfd_criu's; kfdcriu-drm.img, the mapped minors, is drm_reattach's
 *   alone, and no KFD GPU had those minors at dump, which the /dev/kfd
 *   file's own list of render minors says to kfd_criu.
 *
 * DRM card (KMS) nodes and dma-bufs stay refused: their state is shared
 * with the display or with other processes. This file holds the hooks and
 * the files; drm_reattach_maps.c the mappings.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <drm/drm.h>
#include <linux/magic.h>

#include "drm_reattach.h"

#define DRIVER_NAME_MAX		64	/* "i915", "vgem": DRM's names are short */
#define PCI_SLOT_MAX		32	/* "0000:00:02.0" */

enum drm_file_kind { DRM_FILE_NONE, DRM_FILE_RENDER, DRM_FILE_CARD, DRM_FILE_DMA_BUF };

static bool bad_option_told;
/* This dump listed the plugin in CRIU's inventory (4.1 and later) */
static bool reattach_in_inventory;

enum reattach_opt { REATTACH_OPT_ENABLE, REATTACH_OPT_MAX };

static const char *const reattach_option_names[REATTACH_OPT_MAX] = {
	[REATTACH_OPT_ENABLE] = "enable",
};

/* Its name when the reattach was part of kfd_criu */
static const char *const reattach_old_env[REATTACH_OPT_MAX] = {
	[REATTACH_OPT_ENABLE] = "KFD_CRIU_DRM_REATTACH",
};

/* --plugin-option drm_reattach.enable, DRM_REATTACH_ENABLE, drm_reattach.conf */
static struct plugin_options reattach_options = {
	.plugin = "drm_reattach",
	.env_prefix = "DRM_REATTACH_",
	.names = reattach_option_names,
	.old_env = reattach_old_env,
	.nr = REATTACH_OPT_MAX,
};

/*
 * Whether the stateless reattach is on: enable=1. Dropping
 * a device's state is never a default, so any other value is off; a value
 * that is neither 0 nor 1 is said once.
 */
bool reattach_wanted(void)
{
	const char *value = kfd_criu_option(&reattach_options, REATTACH_OPT_ENABLE);

	if (!value || !*value || !strcmp(value, "0"))
		return false;
	if (!strcmp(value, "1"))
		return true;
	if (!bad_option_told)
		pr_warn(REATTACH_ENV "=\"%s\": neither 0 nor 1, taken as 0\n", value);
	bad_option_told = true;
	return false;
}

/* A minor that a dumped render node may have had */
static bool dumped_render_minor_valid(unsigned int minor)
{
	return minor >= DRM_RENDER_MINOR_FIRST && minor <= DRM_MINOR_MAX;
}

/* renderD<minor>, card<minor>, or the device number of another DRM node */
const char *node_name(unsigned int minor, char name[NODE_NAME_MAX])
{
	if (kfd_criu_render_minor(minor))
		snprintf(name, NODE_NAME_MAX, "renderD%u", minor);
	else if (minor < 64 || minor > DRM_RENDER_MINOR_LAST)
		snprintf(name, NODE_NAME_MAX, "card%u", minor);
	else
		snprintf(name, NODE_NAME_MAX, "%u:%u", DRM_MAJOR, minor);
	return name;
}

/* Render node, card node, dma-buf or none of these, by its stat */
static enum drm_file_kind drm_file_kind(int fd, const struct stat *st)
{
	struct statfs fs;

	if (S_ISCHR(st->st_mode) && major(st->st_rdev) == DRM_MAJOR)
		return kfd_criu_render_minor(minor(st->st_rdev)) ? DRM_FILE_RENDER : DRM_FILE_CARD;
	/* A dma-buf is a file of its own pseudo file system, of no type */
	if (fd >= 0 && !S_ISCHR(st->st_mode) && !fstatfs(fd, &fs) && fs.f_type == DMA_BUF_MAGIC)
		return DRM_FILE_DMA_BUF;
	return DRM_FILE_NONE;
}

/*
 * The name of the DRM driver of file @fd. DRM_IOCTL_VERSION is allowed on
 * render nodes and reads no state of the file.
 */
static int drm_driver_name(int fd, char name[DRIVER_NAME_MAX])
{
	struct drm_version version = { .name_len = DRIVER_NAME_MAX - 1, .name = name };

	memset(name, 0, DRIVER_NAME_MAX);
	if (ioctl(fd, DRM_IOCTL_VERSION, &version))
		return -errno;
	if (version.name_len >= DRIVER_NAME_MAX)
		return -ENAMETOOLONG;
	return name[0] ? 0 : -ENODATA;
}

/* The last component of sysfs link @link */
static const char *link_base(const char *link)
{
	const char *slash = strrchr(link, '/');

	return slash ? slash + 1 : link;
}

/* Reads sysfs link @what of render minor @minor's device into @link */
static int read_device_link(unsigned int minor, const char *what, char link[PATH_MAX])
{
	char path[PATH_MAX];
	ssize_t len;

	snprintf(path, sizeof(path), "%s/sys/dev/char/%u:%u/%s", kfd_criu_root,
		 DRM_MAJOR, minor, what);
	len = readlink(path, link, PATH_MAX - 1);
	if (len < 0)
		return -errno;
	link[len] = '\0';
	return 0;
}

/*
 * The PCI address of render minor @minor's device, "" if it is on no PCI
 * bus (vgem is a platform device) or sysfs does not show it.
 */
static int drm_pci_slot(unsigned int minor, char slot[PCI_SLOT_MAX])
{
	char link[PATH_MAX];
	int ret;

	slot[0] = '\0';
	ret = read_device_link(minor, "device/subsystem", link);
	if (ret == -ENOENT)
		return 0;
	if (ret || strcmp(link_base(link), "pci"))
		return ret;
	ret = read_device_link(minor, "device", link);
	if (ret)
		return ret;
	if (strlen(link_base(link)) >= PCI_SLOT_MAX)
		return -ENAMETOOLONG;
	strcpy(slot, link_base(link));
	return 0;
}

/* A render node file that the option is off for: refused, naming it */
static int refuse_render_file(int fd, unsigned int id, unsigned int minor)
{
	char driver[DRIVER_NAME_MAX], name[NODE_NAME_MAX];

	if (drm_driver_name(fd, driver))
		strcpy(driver, "driver unknown");
	pr_warn("file %u: %s (%s) is no KFD GPU's render node: not dumped; "
	       REATTACH_ENV "=1 reattaches it at restore as a fresh DRM file, without its state\n",
	       id, node_name(minor, name), driver);
	return -ENOTSUP;
}

/*
 * Card nodes, named when the option is on, and dma-bufs (which ROCm
 * processes share buffers by): refused, as warnings, since another plugin
 * may take them.
 */
static int refuse_drm_file(unsigned int id, enum drm_file_kind kind, unsigned int minor)
{
	char name[NODE_NAME_MAX];

	if (kind == DRM_FILE_DMA_BUF)
		pr_warn("file %u: a dma-buf: never dumped, its memory may be shared with other processes and devices%s\n",
			id, reattach_wanted() ? "; " REATTACH_ENV " reattaches render nodes only" : "");
	else if (reattach_wanted())
		pr_warn("file %u: /dev/dri/%s is a DRM card (display) node: never dumped; "
			REATTACH_ENV " reattaches render nodes only\n", id, node_name(minor, name));
	return -ENOTSUP;
}

/* Fills @node with the identity of render node file @fd of minor @minor */
static int read_identity(int fd, unsigned int minor, KfdCriuDrmNode *node,
			 char driver[DRIVER_NAME_MAX], char slot[PCI_SLOT_MAX])
{
	int ret = drm_driver_name(fd, driver) ?: drm_pci_slot(minor, slot);

	if (ret)
		return ret;
	node->driver = driver;
	node->minor = minor;
	node->pci_slot = slot[0] ? slot : NULL;
	return 0;
}

/*
 * Render node file @fd, no KFD GPU's: its identity and status flags into
 * kfdcriu-<id>.img. The images then need drm_reattach to restore.
 */
static int dump_reattached_file(int fd, unsigned int id, unsigned int minor)
{
	KfdCriuDrmNode node = KFD_CRIU_DRM_NODE__INIT;
	KfdCriuMeta meta = KFD_CRIU_META__INIT;
	char driver[DRIVER_NAME_MAX], slot[PCI_SLOT_MAX], name[NODE_NAME_MAX];
	int flags = fcntl(fd, F_GETFL), ret;

	ret = flags < 0 ? -errno : read_identity(fd, minor, &node, driver, slot);
	if (ret) {
		pr_err("file %u: cannot tell the device of %s: %s\n", id,
		       node_name(minor, name), strerror(-ret));
		return ret == -ENOTSUP ? -EIO : ret;
	}
	meta.file_id = id;
	meta.drm_node = &node;
	meta.has_open_flags = true;
	meta.open_flags = flags;
	ret = kfd_criu_write_meta(id, &meta);
	if (ret)
		return ret == -ENOTSUP ? -EIO : ret;
	kfd_criu_register_in_inventory(CR_PLUGIN_DESC.name, &reattach_in_inventory);
	pr_info("file %u: %s (%s%s%s): dumped for a reattach as a fresh DRM file; its GEM objects, handles and contexts are not dumped\n",
		id, node_name(minor, name), driver, slot[0] ? " at " : "", slot);
	return 0;
}

/**
 * kfd_drm_dump_file() - DUMP_EXT_FILE of a file that is no KFD file
 * @fd: criu's copy of the task's file
 * @id: CRIU's id of the file
 * @st: its stat
 *
 * Takes a render node file for a stateless reattach when the option is on.
 * Without it, and for DRM card nodes and dma-bufs, says why the file is
 * not dumped.
 *
 * Return: 0 when dumped; -ENOTSUP when not the plugin's, so that CRIU
 * refuses it unless another plugin takes it; or another -errno.
 */
static int kfd_drm_dump_file(int fd, unsigned int id, const struct stat *st)
{
	enum drm_file_kind kind = drm_file_kind(fd, st);
	unsigned int minor = minor(st->st_rdev);

	if (kind == DRM_FILE_NONE)
		return -ENOTSUP;
	if (kind != DRM_FILE_RENDER)
		return refuse_drm_file(id, kind, minor);
	if (!kfd_criu_no_kfd_gpu_of_minor(minor)) {
		pr_debug("file %u: renderD%u may be a KFD GPU's: kfd_criu's\n", id, minor);
		return -ENOTSUP;
	}
	if (!reattach_wanted())
		return refuse_render_file(fd, id, minor);
	if (kfd_criu_images_streamed()) {
		pr_err("file %u: criu --stream is not supported: the plugin's image files would miss the streamer; dump to a directory\n",
		       id);
		return -EINVAL;
	}
	return dump_reattached_file(fd, id, minor);
}

/**
 * kfd_drm_handle_device_vma() - HANDLE_DEVICE_VMA of a mapping of no KFD file
 * @st: the stat of the mapped file
 *
 * With the option on, takes a mapping of a render node: CRIU then records
 * it without its contents. Without it, and for card nodes, says why the
 * mapping is not dumped. (CRIU refuses dma-buf mappings before it asks
 * plugins: it cannot open them through map_files.)
 *
 * Return: 0 when taken, -ENOTSUP when not the plugin's, or another -errno.
 */
static int kfd_drm_handle_device_vma(const struct stat *st)
{
	enum drm_file_kind kind = drm_file_kind(-1, st);
	unsigned int minor = minor(st->st_rdev);
	char name[NODE_NAME_MAX];

	if (kind == DRM_FILE_NONE)
		return -ENOTSUP;
	if (kind == DRM_FILE_CARD) {
		if (reattach_wanted())
			pr_warn("a mapping of /dev/dri/%s, a DRM card (display) node: never dumped; "
				REATTACH_ENV " reattaches render nodes only\n", node_name(minor, name));
		return -ENOTSUP;
	}
	if (!kfd_criu_no_kfd_gpu_of_minor(minor))
		return -ENOTSUP;	/* kfd_criu's */
	if (reattach_wanted())
		return take_mappings(minor);
	pr_warn("a mapping of %s, no KFD GPU's render node: not dumped; "
		REATTACH_ENV "=1 restores such mappings as zero-filled memory\n",
		node_name(minor, name));
	return -ENOTSUP;
}

/*
 * How well render minor @minor here stands for dumped node @node: 0 not
 * (another driver, or it does not open), 1 the same driver, 2 also the
 * same PCI device, or both on no PCI bus. The node stays open in *@fd,
 * with access mode @mode, unless it is 0.
 */
static int match_render_node(const KfdCriuDrmNode *node, unsigned int minor, int mode, int *fd)
{
	char path[PATH_MAX], driver[DRIVER_NAME_MAX], slot[PCI_SLOT_MAX];

	snprintf(path, sizeof(path), "%s/dev/dri/renderD%u", kfd_criu_root, minor);
	*fd = open(path, mode | O_CLOEXEC | O_NOCTTY);
	if (*fd < 0)
		return 0;
	if (drm_driver_name(*fd, driver) || strcmp(driver, node->driver) ||
	    drm_pci_slot(minor, slot)) {
		close(*fd);
		*fd = -1;
		return 0;
	}
	return strcmp(slot, node->pci_slot ?: "") ? 1 : 2;
}

/*
 * A new open of the render node here that best stands for dumped node
 * @node: the dumped minor if it matches fully, else the one that matches
 * best, the dumped minor or else the lowest among equals; *@found is its
 * minor. -ENODEV if no render node has
 * its driver.
 */
static int open_render_node(const KfdCriuDrmNode *node, int mode, unsigned int *found)
{
	char path[PATH_MAX], dumped[NODE_NAME_MAX + 16];
	int best_fd, fd, best, score, minor;
	struct dirent *e;
	DIR *dir;

	best = match_render_node(node, node->minor, mode, &best_fd);
	*found = node->minor;
	snprintf(path, sizeof(path), "%s/dev/dri", kfd_criu_root);
	dir = best < 2 ? opendir(path) : NULL;
	while (dir && best < 2 && (e = readdir(dir))) {
		snprintf(dumped, sizeof(dumped), "/dev/dri/%.*s", NODE_NAME_MAX, e->d_name);
		minor = kfd_criu_render_minor_of_path(dumped);
		if (minor < 0 || (unsigned int)minor == node->minor)
			continue;
		score = match_render_node(node, minor, mode, &fd);
		/* /dev/dri lists in any order: the dumped minor, then the lowest */
		if (score < best || (score == best && (!score || *found == node->minor ||
						       *found < (unsigned int)minor))) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (best_fd >= 0)
			close(best_fd);
		best_fd = fd;
		best = score;
		*found = minor;
	}
	if (dir)
		closedir(dir);
	return best ? best_fd : -ENODEV;
}

/* Whether the metadata of a reattached file is whole and in range */
static bool drm_meta_valid(const KfdCriuMeta *meta)
{
	const KfdCriuDrmNode *node = meta->drm_node;

	return meta->has_open_flags && node->driver[0] &&
	       strlen(node->driver) < DRIVER_NAME_MAX && dumped_render_minor_valid(node->minor) &&
	       (!node->pci_slot || strlen(node->pci_slot) < PCI_SLOT_MAX);
}

/**
 * kfd_drm_restore_file() - RESTORE_EXT_FILE of a render node file that was
 * dumped for a stateless reattach
 * @meta: its metadata, with drm_node set
 *
 * Opens the dumped render node if it is still the dumped device, else
 * the render node of the same PCI device, else one of the same driver,
 * and sets the dumped status flags on it. A fresh DRM file: nothing of
 * the dumped one comes back.
 *
 * Return: the new fd, or -errno (-ENODEV: no render node of the driver).
 */
static int kfd_drm_restore_file(const KfdCriuMeta *meta)
{
	const KfdCriuDrmNode *node = meta->drm_node;
	unsigned int minor;
	int fd, ret;

	if (!drm_meta_valid(meta)) {
		pr_err("file %u: bad metadata of a reattached render node\n", meta->file_id);
		return -EBADMSG;
	}
	fd = open_render_node(node, meta->open_flags & O_ACCMODE, &minor);
	if (fd < 0) {
		pr_err("file %u: no render node of DRM driver %s on this machine (dumped: renderD%u%s%s)\n",
		       meta->file_id, node->driver, node->minor, node->pci_slot ? " at " : "",
		       node->pci_slot ?: "");
		return fd;
	}
	if (fcntl(fd, F_SETFL, meta->open_flags)) {
		ret = -errno;
		close(fd);
		pr_err("file %u: renderD%u: cannot set its flags: %s\n", meta->file_id, minor,
		       strerror(-ret));
		return ret;
	}
	if (minor != node->minor)
		pr_info("file %u: renderD%u (%s) of the dump is renderD%u here\n",
			meta->file_id, node->minor, node->driver, minor);
	pr_info("file %u: renderD%u (%s) reattached as a fresh DRM file, without the dumped file's state\n",
		meta->file_id, minor, node->driver);
	return fd;
}

/**
 * kfd_drm_fini() - end of a CRIU stage: forget it
 */
static void kfd_drm_fini(void)
{
	drm_maps_fini();
	bad_option_told = false;
}

/* DUMP_EXT_FILE: render nodes of no KFD GPU; the other DRM files are said */
static int reattach_dump_file(int fd, int id)
{
	struct stat st;

	if (fstat(fd, &st))
		return -ENOTSUP;
	return kfd_drm_dump_file(fd, id, &st);
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__DUMP_EXT_FILE, reattach_dump_file)

/* HANDLE_DEVICE_VMA: mappings of render nodes of no KFD GPU */
static int reattach_handle_device_vma(int fd __attribute__((unused)), const struct stat *st)
{
	return kfd_drm_handle_device_vma(st);
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__HANDLE_DEVICE_VMA, reattach_handle_device_vma)

/*
 * RESTORE_EXT_FILE of file @id: an fd if its kfdcriu-<id>.img is a
 * reattached render node's; -ENOTSUP for no image or kfd_criu's.
 */
static int reattach_restore_file(int id)
{
	KfdCriuMeta *meta;
	int ret = kfd_criu_read_meta(id, &meta);

	if (ret)
		return ret == -ENOENT ? -ENOTSUP : ret;
	if (!meta->drm_node) {
		ret = -ENOTSUP;
	} else if (kfd_criu_images_streamed()) {
		pr_err("file %u: criu --stream is not supported\n", id);
		ret = -EINVAL;
	} else {
		ret = kfd_drm_restore_file(meta);
		ret = ret == -ENOTSUP ? -EIO : ret;
	}
	kfd_criu_meta__free_unpacked(meta, NULL);
	return ret;
}

#ifdef KFD_CRIU_RESTORE_RETRY
static CR_PLUGIN_HOOK__RESTORE_EXT_FILE_t reattach_restore_ext_file;
#else
static CR_PLUGIN_HOOK__RESTORE_EXT_FILE_t reattach_restore_without_retry;
#endif

/* With the retry flag: the plugin never retries */
static int reattach_restore_ext_file(int id, bool *retry_needed)
{
	*retry_needed = false;
	return reattach_restore_file(id);
}

/* Without it, for CRIU before 4.3: nothing past @id is read or written */
static int reattach_restore_without_retry(int id)
{
	return reattach_restore_file(id);
}

/* At load, as the header says; init asks the criu that loaded the plugin */
static void __attribute__((constructor)) reattach_register_restore_of_header(void)
{
	kfd_criu_register_restore_ext_file(&CR_PLUGIN_DESC, false, reattach_restore_ext_file,
					   reattach_restore_without_retry);
}

/* UPDATE_VMA_MAP: mappings of the minors the dump took */
static int reattach_update_vma_map(const char *path, const uint64_t addr,
				   const uint64_t old_pgoff, uint64_t *new_pgoff, int *plugin_fd)
{
	return kfd_drm_update_vma_map(path, addr, old_pgoff, new_pgoff, plugin_fd);
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__UPDATE_VMA_MAP, reattach_update_vma_map)

/*
 * RESUME_DEVICES_LATE: says what a task's mappings lost, and leaves the
 * task to the other plugins: never the plugin's. CRIU stops at the first
 * plugin that takes a task, so when kfd_criu was loaded first and resumed
 * the task, this line is not printed (the mapping's own line is, at debug
 * level, in the task).
 */
static int reattach_resume_devices_late(int pid)
{
	kfd_drm_log_zero_filled(pid);
	return -ENOTSUP;
}
CR_PLUGIN_REGISTER_HOOK(CR_PLUGIN_HOOK__RESUME_DEVICES_LATE, reattach_resume_devices_late)

/*
 * Refuses to share a criu with CRIU's amdgpu plugin, which takes every
 * render node too; registers the RESTORE_EXT_FILE that the criu calls;
 * takes the plugin off a 4.x restore's list of the plugins the images need.
 */
static int reattach_init(int stage)
{
	criu_plugin_get_options_t *get_options = kfd_criu_probe_criu();
	static char stock[PATH_MAX];

	kfd_criu_options_load(&reattach_options, get_options);
	if (kfd_criu_stock_plugin_present(&CR_PLUGIN_DESC, stock)) {
		pr_err("CRIU's amdgpu plugin %s is installed too: both take render nodes and the first found wins; give each its own plugin directory (CRIU's libdir) or remove one\n",
		       stock);
		return -EEXIST;
	}
	/* Only now: a refused init must leave the images as they are */
	drm_maps_init(stage);
	kfd_criu_register_restore_ext_file(&CR_PLUGIN_DESC, get_options, reattach_restore_ext_file,
					   reattach_restore_without_retry);
	if (stage == CR_PLUGIN_STAGE__RESTORE)
		kfd_criu_take_off_inventory(CR_PLUGIN_DESC.name);
	return 0;
}

/* The end of a stage: forget it */
static void reattach_fini(int stage __attribute__((unused)), int ret __attribute__((unused)))
{
	kfd_drm_fini();
	reattach_in_inventory = false;
	kfd_criu_options_forget(&reattach_options);
}

CR_PLUGIN_REGISTER("drm_reattach", reattach_init, reattach_fini)
