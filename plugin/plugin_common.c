// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: plugin_common - what both plugins need of CRIU, the images and sysfs
 *
 * Built into kfd_criu and into drm_reattach, each with its own copy:
 * reading and writing image files (kfdcriu-<id>.img, whose <id> is the
 * file's, written only by the plugin that took the file), telling render
 * nodes by minor and by dumped path, the KFD topology (drm_reattach reads
 * it to leave every KFD GPU's render node alone), what the criu that
 * loaded a plugin is (its UPDATE_VMA_MAP and RESTORE_EXT_FILE
 * conventions, its inventory, --stream), and CRIU's own amdgpu plugin,
 * beside which neither plugin loads.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "plugin_common.h"

#define TOPOLOGY		"/sys/class/kfd/kfd/topology/nodes"
#define STOCK_PLUGIN		"amdgpu_plugin.so"	/* CRIU's own */
#define NO_PLUGIN_NAME		"kfd_criu/none"		/* a name no plugin has */
/* CRIU's service fds count down from a base: its log, then images dir */
#define IMG_FD_BELOW_BASE	2

char io_buf[1 << 16];
const char *kfd_criu_root = "";
/* CRIU before 3.19 dup()s the UPDATE_VMA_MAP fd; later ones close it */
static bool criu_dups_vma_fd;

/*
 * CRIU 4.1 and later list a dump's plugins in its inventory. The criu
 * binary exports these, but no criu-plugin.h declares them (3.17 up to
 * criu-dev): weak, they are NULL in a criu without them, whichever CRIU's
 * headers the plugin was built against.
 */
int add_inventory_plugin(const char *name) __attribute__((weak));
bool check_and_remove_inventory_plugin(const char *name, size_t n) __attribute__((weak));

/**
 * kfd_criu_read_file() - read a small file whole
 * @dirfd: the directory @path is relative to, or AT_FDCWD
 * @path: the file
 * @buf: where its bytes go, NUL-terminated
 * @size: @buf's size: at most @size - 1 bytes are read
 *
 * Return: the bytes read, or -errno (then @buf is empty).
 */
ssize_t kfd_criu_read_file(int dirfd, const char *path, char *buf, size_t size)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	ssize_t n = 0, len = 0;

	while (fd >= 0 && (size_t)len < size - 1 && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	len = fd < 0 || n < 0 ? -errno : len;
	if (fd >= 0)
		close(fd);
	buf[len < 0 ? 0 : len] = '\0';
	return len;
}

/**
 * kfd_criu_render_minor() - whether DRM minor @minor is a render node's here
 * @minor: a minor of DRM's major
 *
 * Minors 128 to 191 are render nodes'. Past 191 a minor may be a render or
 * a card node's (DRM_EXTENDED_MINOR_LIMIT in drivers/gpu/drm/drm_drv.c):
 * the device's name in sysfs, renderD<minor>, tells.
 *
 * Return: true for a render node.
 */
bool kfd_criu_render_minor(unsigned int minor)
{
	char path[PATH_MAX], link[PATH_MAX], name[32];
	size_t len;
	ssize_t n;

	if (minor >= DRM_RENDER_MINOR_FIRST && minor <= DRM_RENDER_MINOR_LAST)
		return true;
	if (minor <= DRM_RENDER_MINOR_LAST || minor > DRM_MINOR_MAX)
		return false;
	snprintf(path, sizeof(path), "%s/sys/dev/char/%u:%u", kfd_criu_root, DRM_MAJOR, minor);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	len = snprintf(name, sizeof(name), "/renderD%u", minor);
	return (size_t)n >= len && !strcmp(link + n - len, name);
}

/**
 * kfd_criu_render_minor_of_path() - the render minor a dumped path names
 * @path: a path as CRIU hands it to UPDATE_VMA_MAP
 *
 * CRIU hands over some paths with a doubled leading slash,
 * "//dev/dri/renderD128" (CRIU's amdgpu plugin says so and normalizes
 * them, plugins/amdgpu/amdgpu_plugin.c): leading slashes count as one.
 *
 * Return: the minor of /dev/dri/renderD<minor>, or -1 for another path.
 */
int kfd_criu_render_minor_of_path(const char *path)
{
	unsigned int minor;
	char end;

	while (path[0] == '/' && path[1] == '/')
		path++;
	if (sscanf(path, "/dev/dri/renderD%u%c", &minor, &end) != 1 ||
	    minor < DRM_RENDER_MINOR_FIRST || minor > DRM_MINOR_MAX)
		return -1;
	return minor;
}

/**
 * kfd_criu_write_image() - write a file into CRIU's images directory
 * @name: its name there
 * @buf: its contents
 * @len: their length
 *
 * A failure is logged.
 *
 * Return: 0 or -errno.
 */
int kfd_criu_write_image(const char *name, const void *buf, size_t len)
{
	int fd, ret;

	fd = openat(criu_get_image_dir(), name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ret = fd < 0 ? -errno : 0;
	errno = ENOSPC;		/* what a short write means */
	if (fd >= 0 && write(fd, buf, len) != (ssize_t)len)
		ret = -errno;
	if (fd >= 0 && close(fd) && !ret)
		ret = -errno;
	if (ret)
		pr_err("cannot write %s: %s\n", name, strerror(-ret));
	return ret;
}

/**
 * kfd_criu_write_meta() - write a dumped file's metadata image
 * @id: CRIU's id of the file: the image is kfdcriu-<id>.img
 * @meta: the metadata
 *
 * Return: 0 or -errno, logged.
 */
int kfd_criu_write_meta(unsigned int id, const KfdCriuMeta *meta)
{
	size_t len = kfd_criu_meta__get_packed_size(meta);
	uint8_t buf[META_MAX_SIZE];
	char name[IMAGE_NAME_MAX];

	if (len > sizeof(buf))	/* integers and short names: far less */
		return -EMSGSIZE;
	kfd_criu_meta__pack(meta, buf);
	image_name(name, id, "img");
	return kfd_criu_write_image(name, buf, len);
}

/**
 * kfd_criu_read_meta() - read a dumped file's metadata image
 * @id: CRIU's id of the file
 * @meta: the unpacked kfdcriu-<id>.img, for kfd_criu_meta__free_unpacked()
 *
 * Return: 0, -ENOENT (not logged: no such image, the file is no plugin's),
 * or another -errno, logged.
 */
int kfd_criu_read_meta(unsigned int id, KfdCriuMeta **meta)
{
	char buf[META_MAX_SIZE + 2], name[IMAGE_NAME_MAX];
	ssize_t len;

	image_name(name, id, "img");
	len = kfd_criu_read_file(criu_get_image_dir(), name, buf, sizeof(buf));
	if (len > META_MAX_SIZE)
		len = -EFBIG;
	*meta = len < 0 ? NULL : kfd_criu_meta__unpack(NULL, len, (uint8_t *)buf);
	len = len < 0 ? len : *meta ? 0 : -EBADMSG;
	if (len && len != -ENOENT)
		pr_err("cannot read %s: %s\n", name, strerror(-len));
	return len;
}

/* A topology file of a GPU this task may not use: a device cgroup denies it */
static bool hidden_gpu(ssize_t ret)
{
	return ret == -EPERM || ret == -EACCES;
}

/* Reads topology node @node's gpu_id (0: a CPU) and render minor (-1: none) */
static ssize_t read_topology_node(unsigned int node, unsigned int *id, int *minor)
{
	char path[512], *prop;
	ssize_t ret;

	snprintf(path, sizeof(path), "%s" TOPOLOGY "/%u/gpu_id", kfd_criu_root, node);
	ret = kfd_criu_read_file(AT_FDCWD, path, io_buf, sizeof(io_buf));
	*id = ret < 0 ? 0 : strtoul(io_buf, NULL, 10);
	if (!*id)
		return ret;
	snprintf(path, sizeof(path), "%s" TOPOLOGY "/%u/properties", kfd_criu_root, node);
	ret = kfd_criu_read_file(AT_FDCWD, path, io_buf, sizeof(io_buf));
	prop = ret < 0 ? NULL : strstr(io_buf, "drm_render_minor ");
	*minor = prop ? atoi(prop + 17) : -1;
	return hidden_gpu(ret) ? ret : 0;
}

/**
 * kfd_criu_read_topology() - read this machine's KFD GPUs
 * @t: the first 64 GPUs of the KFD topology that this task may use; the
 *     others it skips, saying so
 *
 * Return: 0 (also without KFD: no GPU), or -errno, logged.
 */
int kfd_criu_read_topology(struct kfd_topology *t)
{
	unsigned int node, id;
	ssize_t ret = 0;
	int minor;

	t->hidden = false;
	for (node = 0, t->nr = 0; ret != -ENOENT && t->nr < MAX_GPU_MAP; node++) {
		ret = read_topology_node(node, &id, &minor);
		if (hidden_gpu(ret)) {
			t->hidden = true;
			pr_info("KFD topology node %u: %s: a GPU hidden from this task, skipped\n",
				node, strerror(-ret));
			continue;
		}
		if (ret < 0 && ret != -ENOENT)
			break;
		if (ret >= 0 && id) {
			t->gpu_id[t->nr] = id;
			t->minor[t->nr++] = minor;
		}
	}
	if (ret >= 0 || ret == -ENOENT)
		return 0;
	pr_err("cannot read the KFD topology in %s" TOPOLOGY ": %s\n", kfd_criu_root,
	       strerror(-ret));
	return ret;
}

/**
 * kfd_criu_no_kfd_gpu_of_minor() - whether a render node is certainly no
 * KFD GPU's
 * @minor: its minor
 *
 * Only when a topology read now (none without KFD) has no GPU of that
 * minor, hides none from this task and is not cut at the 64 GPUs it reads.
 * Only such a render node may be reattached without its state.
 *
 * Return: true if no KFD GPU has render minor @minor.
 */
bool kfd_criu_no_kfd_gpu_of_minor(int minor)
{
	struct kfd_topology t;
	unsigned int i;

	if (kfd_criu_read_topology(&t) || t.hidden || t.nr >= MAX_GPU_MAP)
		return false;
	for (i = 0; i < t.nr && t.minor[i] != minor; i++)
		;
	return i == t.nr;
}

/**
 * kfd_criu_fd_base() - where the plugin's own fds go in a restored task
 *
 * CRIU puts its service fds just below the top of the fd table that the
 * task's own fds need, so fds above them neither collide with a restored
 * fd nor grow the table much.
 *
 * Return: the first fd above CRIU's service fds in this task.
 */
int kfd_criu_fd_base(void)
{
	int img = criu_get_image_dir();

	return img < 0 ? 0 : img + IMG_FD_BELOW_BASE;
}

/* Finds CRIU's amdgpu plugin among the objects loaded into this criu */
static int find_stock_plugin(struct dl_phdr_info *info, size_t size __attribute__((unused)),
			     void *path)
{
	const char *name = strrchr(info->dlpi_name, '/');

	if (!name || strcmp(name + 1, STOCK_PLUGIN))
		return 0;
	snprintf(path, PATH_MAX, "%s", info->dlpi_name);
	return 1;
}

/**
 * kfd_criu_stock_plugin_present() - find CRIU's amdgpu plugin
 * @addr: an address in the calling plugin: its CR_PLUGIN_DESC
 * @path: where it is found
 *
 * CRIU's amdgpu plugin takes /dev/kfd and every render node too, and CRIU
 * runs the first plugin, in readdir() order, that does not decline a file:
 * with both, which one dumps or restores a process is chance. Finds it
 * loaded (before the caller) or beside the caller (to be loaded after it).
 *
 * Return: true if it is there.
 */
bool kfd_criu_stock_plugin_present(const void *addr, char path[PATH_MAX])
{
	char self[PATH_MAX];
	Dl_info info;

	if (dl_iterate_phdr(find_stock_plugin, path))
		return true;
	if (!dladdr(addr, &info) || !info.dli_fname)
		return false;
	snprintf(self, sizeof(self), "%s", info.dli_fname);
	snprintf(path, PATH_MAX, "%s/" STOCK_PLUGIN, dirname(self));
	return !access(path, F_OK);
}

/**
 * kfd_criu_take_off_inventory() - take a plugin off a restore's list
 * @name: the plugin's name
 *
 * A 4.1 or later restore lists the plugins its images need, and fails
 * unless each takes itself off. CRIU compares the first n bytes: with the
 * NUL, only the whole name matches, not one that it begins.
 *
 * Return: whether @name was listed; false for a criu without the list.
 */
bool kfd_criu_take_off_inventory(const char *name)
{
	if (!check_and_remove_inventory_plugin)
		return false;
	return check_and_remove_inventory_plugin(name, strlen(name) + 1);
}

/**
 * kfd_criu_stock_plugin_in_inventory() - whether CRIU's amdgpu plugin wrote
 * the images being restored
 *
 * By their inventory (CRIU 4.1 and later). CRIU answers only by taking the
 * name off its list, which is harmless: the restore is then refused. For
 * images of an older CRIU, without a list, it answers yes to every name: a
 * name that no plugin has tells those apart.
 *
 * Return: true if the images list it.
 */
bool kfd_criu_stock_plugin_in_inventory(void)
{
	if (!check_and_remove_inventory_plugin || kfd_criu_take_off_inventory(NO_PLUGIN_NAME))
		return false;
	return kfd_criu_take_off_inventory(STOCK_PLUGIN_NAME);
}

/* Whether @fd is a socket connected to criu-image-streamer's */
static bool streamer_socket(int fd)
{
	struct sockaddr_un peer;
	socklen_t len = sizeof(peer);
	const char *name;

	memset(&peer, 0, sizeof(peer));
	if (getpeername(fd, (struct sockaddr *)&peer, &len) || peer.sun_family != AF_UNIX ||
	    len <= offsetof(struct sockaddr_un, sun_path) || !peer.sun_path[0])
		return false;
	peer.sun_path[sizeof(peer.sun_path) - 1] = '\0';
	name = strrchr(peer.sun_path, '/');
	name = name ? name + 1 : peer.sun_path;
	return !strcmp(name, "streamer-capture.sock") || !strcmp(name, "streamer-serve.sock");
}

/**
 * kfd_criu_images_streamed() - whether criu --stream is in use
 *
 * The plugin's files, which it writes into the images directory itself,
 * would miss the stream. With --stream, criu keeps a socket connected to
 * the one criu-image-streamer listens on in the images directory
 * (img_streamer_init(), criu/img-streamer.c) until its images are done;
 * this process (criu at dump, a task forked from it at restore) has it.
 * A socket file alone is no sign: one that a streamer left behind does not
 * make a dump a streamed one. (criu's exported img_streamer_open() is no
 * sign either: every criu has it, and called without --stream at dump it
 * hits a BUG_ON on the streamer's mode.)
 *
 * Return: true if images go through criu-image-streamer.
 */
bool kfd_criu_images_streamed(void)
{
	struct dirent *e;
	bool found = false;
	DIR *dir;
	int fd;

	dir = opendir("/proc/self/fd");
	while (dir && !found && (e = readdir(dir)))
		found = sscanf(e->d_name, "%d", &fd) == 1 && fd != dirfd(dir) && streamer_socket(fd);
	if (dir)
		closedir(dir);
	return found;
}

/**
 * kfd_criu_register_in_inventory() - say that a dump's images need a plugin
 * @name: the plugin's name
 * @listed: whether this dump listed it already; set when it does
 *
 * Lists the plugin in the inventory of a CRIU 4.1 or later dump, once, so
 * that a restore without it fails in CRIU. Older CRIUs have no list.
 */
void kfd_criu_register_in_inventory(const char *name, bool *listed)
{
	if (*listed || !add_inventory_plugin)
		return;
	*listed = !add_inventory_plugin(name);
	if (!*listed)
		pr_warn("cannot list %s in the images' inventory\n", name);
}

/**
 * kfd_criu_probe_criu() - what the criu that loaded the plugin does
 *
 * Notes its UPDATE_VMA_MAP convention: a function of criu 3.17 and 3.18
 * that 3.19 removed tells those that dup() the fd.
 *
 * Return: its criu_plugin_get_options(), a function that 4.3 added (4.3
 * passes RESTORE_EXT_FILE a retry flag); NULL before 4.3.
 */
criu_plugin_get_options_t *kfd_criu_probe_criu(void)
{
	criu_dups_vma_fd = dlsym(RTLD_DEFAULT, "prepare_task_cgroup");
	return dlsym(RTLD_DEFAULT, "criu_plugin_get_options");
}

/**
 * kfd_criu_register_restore_ext_file() - register the RESTORE_EXT_FILE
 * that takes what criu passes
 * @desc: the plugin's CR_PLUGIN_DESC
 * @criu_4_3: criu 4.3 or later loaded the plugin, whatever its header (one
 *	      built against an older one loads there too)
 * @with_flag: the plugin's hook with the retry flag, which it clears
 * @without: the same without it, for CRIU before 4.3: nothing past the id
 *	     is read or written
 *
 * The one with the flag if the header has it (a plugin built for a criu
 * that passes it) or if @criu_4_3.
 */
void kfd_criu_register_restore_ext_file(cr_plugin_desc_t *desc, bool criu_4_3,
					restore_ext_file_retry_t *with_flag,
					restore_ext_file_plain_t *without)
{
	bool retry_flag = HEADER_RETRY_FLAG || criu_4_3;

	desc->hooks[CR_PLUGIN_HOOK__RESTORE_EXT_FILE] =
		retry_flag ? (void *)with_flag : (void *)without;
}

/**
 * kfd_criu_vma_fd() - hand CRIU the file a device mapping is mmapped through
 * @fd: the plugin's own fd of that file, which it keeps open
 * @plugin_fd: UPDATE_VMA_MAP's fd for CRIU
 *
 * CRIU before 3.19 dup()s @plugin_fd: it gets @fd itself. Later ones close
 * it: they get a new fd of the file. CRIU drops (and leaves open) the new
 * fd of a mapping it maps through the fd of the one before, so those go
 * above its service fds too, out of the way of the task's own.
 *
 * Return: 0 or -errno.
 */
int kfd_criu_vma_fd(int fd, int *plugin_fd)
{
	*plugin_fd = criu_dups_vma_fd ? fd : fcntl(fd, F_DUPFD_CLOEXEC, kfd_criu_fd_base());
	return *plugin_fd < 0 ? -errno : 0;
}

/**
 * kfd_criu_refuse_vma() - make the restore fail at a mapping the plugin
 * cannot place
 * @path: the mapped file's dumped path
 * @addr: the mapping's address
 * @new_pgoff: UPDATE_VMA_MAP's offset for CRIU
 * @plugin_fd: UPDATE_VMA_MAP's fd for CRIU
 *
 * No CRIU acts on an error from UPDATE_VMA_MAP: from 3.17.1 to 4.3,
 * open_filemap() (criu/files-reg.c) takes the offset only on a return of
 * 1 and otherwise maps the dumped path at the dumped offset, a stale
 * doorbell or MMIO page of /dev/kfd, or in a run of mappings of one file
 * goes through the fd of the mapping before. Refusing earlier, in
 * RESTORE_EXT_FILE, would need to know which offsets which mappings use.
 * So the mapping gets an offset that is not page-aligned, which every
 * mmap() refuses whatever file CRIU uses: the restorer fails, and with it
 * the restore. The caller has logged why.
 *
 * Return: 1, without which CRIU would not take @new_pgoff.
 */
int kfd_criu_refuse_vma(const char *path, uint64_t addr, uint64_t *new_pgoff, int *plugin_fd)
{
	pr_err("mapping at %#" PRIx64 " of %s: refused: its mmap fails, and so does the restore\n",
	       addr, path);
	*new_pgoff = KFD_CRIU_REFUSED_PGOFF;
	*plugin_fd = -1;
	return 1;
}
