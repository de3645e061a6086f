// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: kfdcrit compat
 *
 * Which local GPUs each image GPU could be restored on, and a
 * KFD_CRIU_GPU_MAP value that places them all. The local GPUs come from
 * the KFD topology in sysfs, described in the image's own GPU record
 * format as kfd_criu_gpus.c describes them:
 *
 * - nodes/N/gpu_id (0 for a CPU node, skipped) and nodes/N/properties:
 *   gfx_target_version, device_id, num_xcc, cwsr_size, ctl_stack_size,
 *   fw_version (the MEC firmware), sdma_fw_version, drm_render_minor;
 * - nodes/N/mem_banks/M/properties: size_in_bytes of the banks whose
 *   heap_type is HSA_MEM_HEAP_TYPE_FB_PUBLIC or _FB_PRIVATE, summed: VRAM;
 * - class/drm/renderD<minor>/device/revision and
 *   .../current_compute_partition (SPX, DPX, ...);
 * - module/amdgpu/parameters/cwsr_enable (0: the GPU has
 *   KFD_CRIU_GPU_NO_CWSR).
 *
 * A field the topology does not give is reported as not verified and
 * taken to match. Compatibility is kfd_criu_gpu_incompatible(), and a
 * placement is only offered after kfd_criu_map_gpus(), the function
 * RESTORE itself calls, accepted it.
 */

#include <linux/array_size.h>
#include <linux/errno.h>
#include <linux/kfd_ioctl.h>
#include <linux/kfd_sysfs.h>
#include <asm/byteorder.h>

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "kfdcrit.h"

#define KC_ENV_SYSFS	"KFDCRIT_SYSFS"
#define KC_ENV_MAP	"KFD_CRIU_GPU_MAP"

/* Fields of &struct kfd_criu_gpu_rec a topology may lack */
enum {
	KC_HAVE_REVISION = BIT(0),
	KC_HAVE_PARTITION = BIT(1),
	KC_HAVE_CWSR = BIT(2),
	KC_HAVE_VRAM = BIT(3),
};

/**
 * struct kc_local - one GPU of the topology
 * @rec: described as the kernel describes it for a restore
 * @have: KC_HAVE_* fields that the topology gave
 * @node: its topology node number
 */
struct kc_local {
	struct kfd_criu_gpu_rec rec;
	u32 have;
	u32 node;
};

/**
 * struct kc_compat - what compat works on
 * @image: the image's GPU records
 * @num_image: entries at @image
 * @local: the local GPUs
 * @num_local: entries at @local
 * @cwsr_known: @cwsr_off is known
 * @cwsr_off: amdgpu.cwsr_enable=0
 */
struct kc_compat {
	struct kfd_criu_gpu_rec image[KFD_CRIU_MAX_GPUS];
	u32 num_image;
	struct kc_local local[KFD_CRIU_MAX_GPUS];
	u32 num_local;
	bool cwsr_known;
	bool cwsr_off;
};

/* Reads one number from a file: decimal, or hex with 0x */
static int kc_read_number(const char *path, u64 *v)
{
	char buf[64], *end;
	size_t n;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	*v = strtoull(buf, &end, 0);
	return end == buf ? -EINVAL : 0;
}

static int kc_read_line(const char *path, char *buf, size_t size)
{
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, size, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* "name value" lines of a topology properties file */
static int kc_property(const char *path, const char *name, u64 *v)
{
	char line[256], key[128];
	unsigned long long val;
	int ret = -ENOENT;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %llu", key, &val) == 2 &&
		    !strcmp(key, name)) {
			*v = val;
			ret = 0;
			break;
		}
	fclose(f);
	return ret;
}

static void kc_local_vram(struct kc_local *l, const char *node_dir)
{
	char path[4096 + 512];
	u64 heap, size, total = 0;
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "%s/mem_banks", node_dir);
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/mem_banks/%s/properties",
			 node_dir, e->d_name);
		if (kc_property(path, "heap_type", &heap) ||
		    kc_property(path, "size_in_bytes", &size))
			continue;
		if (heap == HSA_MEM_HEAP_TYPE_FB_PUBLIC ||
		    heap == HSA_MEM_HEAP_TYPE_FB_PRIVATE) {
			total += size;
			l->have |= KC_HAVE_VRAM;
		}
	}
	closedir(d);
	l->rec.vram_size = cpu_to_le64(total);
}

static void kc_local_drm(struct kc_local *l, const char *root, u64 minor)
{
	static const char *const modes[] = { "SPX", "DPX", "TPX", "QPX", "CPX" };
	char path[4096], line[64];
	u64 v;
	u32 i;

	snprintf(path, sizeof(path), "%s/class/drm/renderD%llu/device/revision",
		 root, (unsigned long long)minor);
	if (!kc_read_number(path, &v)) {
		l->rec.revision_id = cpu_to_le32(v);
		l->have |= KC_HAVE_REVISION;
	}
	snprintf(path, sizeof(path),
		 "%s/class/drm/renderD%llu/device/current_compute_partition",
		 root, (unsigned long long)minor);
	if (kc_read_line(path, line, sizeof(line)))
		return;
	for (i = 0; i < 5; i++)
		if (!strcmp(line, modes[i])) {
			l->rec.partition_mode = cpu_to_le32(i);
			l->have |= KC_HAVE_PARTITION;
		}
}

/* The properties that kfd_criu_gpu_to_rec() takes from the topology */
static int kc_local_props(struct kc_local *l, const char *props, u64 *minor)
{
	static const struct {
		const char *name;
		size_t off;
	} map[] = {
		{ "gfx_target_version", offsetof(struct kfd_criu_gpu_rec, gfx_target_version) },
		{ "device_id", offsetof(struct kfd_criu_gpu_rec, device_id) },
		{ "num_xcc", offsetof(struct kfd_criu_gpu_rec, num_xcc) },
		{ "cwsr_size", offsetof(struct kfd_criu_gpu_rec, cwsr_size) },
		{ "ctl_stack_size", offsetof(struct kfd_criu_gpu_rec, ctl_stack_size) },
		{ "fw_version", offsetof(struct kfd_criu_gpu_rec, mec_fw_version) },
		{ "sdma_fw_version", offsetof(struct kfd_criu_gpu_rec, sdma_fw_version) },
	};
	__le32 le;
	size_t i;
	u64 v;

	for (i = 0; i < ARRAY_SIZE(map); i++) {
		if (kc_property(props, map[i].name, &v))
			return -ENOENT;
		le = cpu_to_le32(v);
		memcpy((u8 *)&l->rec + map[i].off, &le, sizeof(le));
	}
	return kc_property(props, "drm_render_minor", minor);
}

static int kc_add_local(struct kc_compat *c, const char *root,
			const char *name)
{
	char dir[4096], path[4200];
	struct kc_local *l;
	u64 id, minor;

	snprintf(dir, sizeof(dir), "%s/class/kfd/kfd/topology/nodes/%s", root, name);
	snprintf(path, sizeof(path), "%s/gpu_id", dir);
	if (kc_read_number(path, &id) || !id)
		return 0;	/* a CPU node */
	if (c->num_local == KFD_CRIU_MAX_GPUS)
		return -E2BIG;
	l = &c->local[c->num_local];
	memset(l, 0, sizeof(*l));
	l->node = strtoul(name, NULL, 10);
	l->rec.gpu_id = cpu_to_le32(id);
	snprintf(path, sizeof(path), "%s/properties", dir);
	if (kc_local_props(l, path, &minor)) {
		fprintf(stderr, "kfdcrit: %s: incomplete GPU properties\n", path);
		return -EINVAL;
	}
	kc_local_vram(l, dir);
	kc_local_drm(l, root, minor);
	if (c->cwsr_known) {
		l->have |= KC_HAVE_CWSR;
		l->rec.flags = cpu_to_le32(c->cwsr_off ? KFD_CRIU_GPU_NO_CWSR : 0);
	}
	c->num_local++;
	return 0;
}

static int kc_read_topology(struct kc_compat *c, const char *root)
{
	char path[4096];
	struct dirent **names;
	int n, i, ret = 0;
	u64 v;

	snprintf(path, sizeof(path), "%s/module/amdgpu/parameters/cwsr_enable", root);
	if (!kc_read_number(path, &v)) {
		c->cwsr_known = true;
		c->cwsr_off = !v;
	}
	snprintf(path, sizeof(path), "%s/class/kfd/kfd/topology/nodes", root);
	n = scandir(path, &names, NULL, versionsort);
	if (n < 0) {
		fprintf(stderr, "kfdcrit: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	for (i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.' && !ret)
			ret = kc_add_local(c, root, names[i]->d_name);
		free(names[i]);
	}
	free(names);
	return ret;
}

/* The local GPU @l as the image GPU @img is compared with it */
static struct kfd_criu_gpu_rec kc_as_seen(const struct kc_local *l,
					  const struct kfd_criu_gpu_rec *img)
{
	struct kfd_criu_gpu_rec r = l->rec;

	if (!(l->have & KC_HAVE_REVISION))
		r.revision_id = img->revision_id;
	if (!(l->have & KC_HAVE_PARTITION))
		r.partition_mode = img->partition_mode;
	if (!(l->have & KC_HAVE_CWSR))
		r.flags = img->flags;
	if (!(l->have & KC_HAVE_VRAM))
		r.vram_size = img->vram_size;
	return r;
}

static const char *kc_misfit(const struct kc_compat *c, u32 i, u32 j)
{
	struct kfd_criu_gpu_rec r = kc_as_seen(&c->local[j], &c->image[i]);

	return kfd_criu_gpu_incompatible(&c->image[i], &r);
}

/* Kuhn's augmenting path: place image GPU @i, moving others if need be */
static bool kc_augment(const struct kc_compat *c, u32 i, u32 *owner,
		       bool *seen)
{
	u32 j;

	for (j = 0; j < c->num_local; j++) {
		if (seen[j] || kc_misfit(c, i, j))
			continue;
		seen[j] = true;
		if (owner[j] == U32_MAX || kc_augment(c, owner[j], owner, seen)) {
			owner[j] = i;
			return true;
		}
	}
	return false;
}

/* A placement of every image GPU, same gpu_id first; false when none */
static bool kc_match(const struct kc_compat *c, u32 *owner)
{
	bool seen[KFD_CRIU_MAX_GPUS];
	u32 i, j;

	for (j = 0; j < c->num_local; j++)
		owner[j] = U32_MAX;
	for (i = 0; i < c->num_image; i++)
		for (j = 0; j < c->num_local; j++)
			if (c->image[i].gpu_id == c->local[j].rec.gpu_id &&
			    !kc_misfit(c, i, j))
				owner[j] = i;
	for (i = 0; i < c->num_image; i++) {
		for (j = 0; j < c->num_local && owner[j] != i; j++)
			;
		if (j < c->num_local)
			continue;
		memset(seen, 0, sizeof(seen));
		if (!kc_augment(c, i, owner, seen))
			return false;
	}
	return true;
}

/* Runs the kernel's placement with the local GPUs as @owner sees them */
static int kc_kernel_map(const struct kc_compat *c, const u32 *owner,
			 const struct kfd_criu_gpu_map *map, u32 num_map,
			 struct kfd_criu_gpu_mismatch *why)
{
	struct kfd_criu_gpu_rec local[KFD_CRIU_MAX_GPUS];
	u32 target[KFD_CRIU_MAX_GPUS];
	u32 j, i;

	for (j = 0; j < c->num_local; j++) {
		i = owner ? owner[j] : U32_MAX;
		local[j] = c->local[j].rec;
		if (i != U32_MAX)
			local[j] = kc_as_seen(&c->local[j], &c->image[i]);
	}
	return kfd_criu_map_gpus(c->image, c->num_image, local, c->num_local,
				 map, num_map, target, why);
}

/* "IMG=LOCAL[,IMG=LOCAL...]", as the plugin reads KFD_CRIU_GPU_MAP */
static int kc_parse_map(const char *s, struct kfd_criu_gpu_map *map, u32 *n)
{
	char *end;

	*n = 0;
	while (*s) {
		if (*n == KFD_CRIU_MAX_GPUS)
			return -EINVAL;
		memset(&map[*n], 0, sizeof(map[0]));
		map[*n].image_gpu_id = strtoul(s, &end, 0);
		if (end == s || *end != '=')
			return -EINVAL;
		s = end + 1;
		map[*n].local_gpu_id = strtoul(s, &end, 0);
		if (end == s || (*end && *end != ','))
			return -EINVAL;
		map[(*n)++].drm_fd = -1;
		s = *end ? end + 1 : end;
	}
	return kfd_criu_validate_gpu_map(map, *n);
}

static void kc_print_fits(const struct kc_compat *c, u32 i)
{
	const struct kc_local *l;
	const char *why;
	u32 j;

	printf("image GPU 0x%x:", le32_to_cpu(c->image[i].gpu_id));
	if (!c->num_local)
		printf(" no local GPU");
	for (j = 0; j < c->num_local; j++) {
		l = &c->local[j];
		why = kc_misfit(c, i, j);
		printf(" local 0x%x (node %u) %s%s", le32_to_cpu(l->rec.gpu_id),
		       l->node, why ? "differs in " : "fits", why ? why : "");
		if (!why && (l->have & (KC_HAVE_REVISION | KC_HAVE_PARTITION |
					KC_HAVE_CWSR | KC_HAVE_VRAM)) !=
			    (KC_HAVE_REVISION | KC_HAVE_PARTITION | KC_HAVE_CWSR |
			     KC_HAVE_VRAM))
			printf(" (not verified:%s%s%s%s)",
			       l->have & KC_HAVE_REVISION ? "" : " revision_id",
			       l->have & KC_HAVE_PARTITION ? "" : " partition_mode",
			       l->have & KC_HAVE_CWSR ? "" : " cwsr_enable",
			       l->have & KC_HAVE_VRAM ? "" : " vram_size");
		printf(j + 1 < c->num_local ? ";" : "");
	}
	printf("\n");
}

static int kc_report_map(const struct kc_compat *c)
{
	struct kfd_criu_gpu_map map[KFD_CRIU_MAX_GPUS];
	struct kfd_criu_gpu_mismatch why = { };
	u32 owner[KFD_CRIU_MAX_GPUS];
	u32 j, n = 0;
	int ret;

	if (!kc_match(c, owner)) {
		printf("no placement: the image GPUs cannot all go to distinct local GPUs\n");
		return -ENODEV;
	}
	for (j = 0; j < c->num_local; j++) {
		if (owner[j] == U32_MAX)
			continue;
		memset(&map[n], 0, sizeof(map[0]));
		map[n].image_gpu_id = le32_to_cpu(c->image[owner[j]].gpu_id);
		map[n].local_gpu_id = le32_to_cpu(c->local[j].rec.gpu_id);
		map[n++].drm_fd = -1;
	}
	ret = kc_kernel_map(c, owner, map, n, &why);
	if (ret) {
		printf("kfd_criu_map_gpus() refused the placement: image GPU 0x%x, local 0x%x: %s\n",
		       why.image_gpu_id, why.local_gpu_id, why.field ? why.field : "?");
		return ret;
	}
	printf("KFD_CRIU_GPU_MAP=");
	for (j = 0; j < n; j++)
		printf("%s0x%x=0x%x", j ? "," : "", map[j].image_gpu_id,
		       map[j].local_gpu_id);
	printf("\n");
	return 0;
}

/* The placement RESTORE makes with the map the environment gives */
static int kc_report_given(const struct kc_compat *c, const char *value)
{
	struct kfd_criu_gpu_map map[KFD_CRIU_MAX_GPUS];
	struct kfd_criu_gpu_mismatch why = { };
	u32 owner[KFD_CRIU_MAX_GPUS], n;
	int ret;

	ret = kc_parse_map(value, map, &n);
	if (ret) {
		printf("%s=%s is malformed\n", KC_ENV_MAP, value);
		return ret;
	}
	ret = kc_kernel_map(c, kc_match(c, owner) ? owner : NULL, map, n, &why);
	if (ret)
		printf("with %s=%s RESTORE fails: image GPU 0x%x, local 0x%x: %s: %s\n",
		       KC_ENV_MAP, value, why.image_gpu_id, why.local_gpu_id,
		       why.field ? why.field : "invalid map", kc_errno_name(ret));
	else
		printf("with %s=%s every image GPU is placed\n", KC_ENV_MAP, value);
	return ret;
}

static int kc_image_gpus(struct kc_compat *c, const char *path)
{
	struct kc_stream s;
	size_t i;
	int ret;

	ret = kc_stream_load(&s, path);
	if (ret) {
		fprintf(stderr, "kfdcrit: %s: %s\n", path, strerror(-ret));
		return ret;
	}
	for (i = 0; i < s.nrecs && c->num_image < KFD_CRIU_MAX_GPUS; i++)
		if (!s.recs[i].skipped && s.recs[i].type == KFD_CRIU_REC_GPU)
			memcpy(&c->image[c->num_image++], s.recs[i].payload,
			       sizeof(c->image[0]));
	if (s.diag.err)
		kc_diag_print(stderr, path, &s.diag);
	kc_stream_free(&s);
	return 0;
}

static int kc_compat_stream(const char *path, const char *root)
{
	struct kc_compat *c;
	const char *given = getenv(KC_ENV_MAP);
	u32 i;
	int ret;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	ret = kc_image_gpus(c, path);
	if (!ret)
		ret = kc_read_topology(c, root);
	if (ret)
		goto out_free;
	printf("%s: %u image GPUs, %u local GPUs in %s\n", path, c->num_image,
	       c->num_local, root);
	if (!c->num_image) {
		printf("no GPU state: restores on any machine\n");
		goto out_free;
	}
	for (i = 0; i < c->num_image; i++)
		kc_print_fits(c, i);
	if (given && *given)
		ret = kc_report_given(c, given);
	else
		ret = kc_report_map(c);
out_free:
	free(c);
	return ret;
}

/**
 * kc_cmd_compat() - "kfdcrit compat [--sysfs ROOT] FILE"
 * @argc: arguments after "compat"
 * @argv: them
 *
 * Return: exit status: 0 when every image GPU has a place, ENODEV when
 * not, EINVAL for a malformed KFD_CRIU_GPU_MAP, or the errno of reading
 * the image or the topology.
 */
int kc_cmd_compat(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "sysfs", required_argument, NULL, 's' },
		{ }
	};
	const char *root = getenv(KC_ENV_SYSFS);
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "s:", longopts, NULL)) != -1) {
		if (c != 's')
			return KC_EXIT_USAGE;
		root = optarg;
	}
	if (optind != argc - 1)
		return KC_EXIT_USAGE;
	return -kc_compat_stream(argv[optind], root && *root ? root : "/sys");
}
