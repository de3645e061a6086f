// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: kfdcrit show
 *
 * A summary for a person: of one stream, or of CRIU's images directory
 * (each kfdcriu-<id>.img of the plugin and the stream it names). Only
 * records the codec's reader returned are summarized, so every fixed-size
 * record has exactly its struct's size; the last line is the verdict of
 * kc_check().
 */

#include <linux/errno.h>
#include <linux/kfd_ioctl.h>
#include <asm/byteorder.h>

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kfdcrit.h"

/**
 * struct kc_summary - what show counts in one stream
 * @count: records per type
 * @bytes: stream bytes per type, record overhead included
 * @events: EVENT records
 * @signaled: of which signaled
 * @ev_types: events per KFD_IOC_EVENT_* type
 * @bos: BO records
 * @bo_bytes: BO bytes per domain (VRAM, GTT, USERPTR, DOORBELL, MMIO)
 * @bo_count: BOs per domain
 * @largest: size of the largest BO
 * @queues: queues per class (PM4, AQL, SDMA, SDMA_XGMI)
 * @svm_bytes: bytes of all SVM ranges
 */
struct kc_summary {
	u32 count[KFD_CRIU_REC_NR + 1];
	u64 bytes[KFD_CRIU_REC_NR + 1];
	u32 events;
	u32 signaled;
	u32 ev_types[KFD_IOC_EVENT_MEMORY + 2];
	u32 bos;
	u64 bo_bytes[5];
	u32 bo_count[5];
	u64 largest;
	u32 queues[4];
	u64 svm_bytes;
};

static const char *const kc_domains[5] = {
	"VRAM", "GTT", "USERPTR", "DOORBELL", "MMIO_REMAP"
};

static const char *const kc_event_types[KFD_IOC_EVENT_MEMORY + 2] = {
	"signal", "nodechange", "device_state_change", "hw_exception",
	"system", "debug", "profile", "queue", "memory", "unknown"
};

static int kc_domain(u32 flags)
{
	static const u32 bits[5] = {
		KFD_IOC_ALLOC_MEM_FLAGS_VRAM, KFD_IOC_ALLOC_MEM_FLAGS_GTT,
		KFD_IOC_ALLOC_MEM_FLAGS_USERPTR, KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL,
		KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP,
	};
	int i;

	for (i = 0; i < 5; i++)
		if (flags & bits[i])
			return i;
	return -1;
}

static void kc_count_bo(struct kc_summary *sum, const struct kc_record *r)
{
	struct kfd_criu_bo_rec bo;
	u64 size;
	int d;

	memcpy(&bo, r->payload, sizeof(bo));
	size = le64_to_cpu(bo.size);
	sum->bos++;
	d = kc_domain(le32_to_cpu(bo.alloc_flags));
	if (d >= 0) {
		sum->bo_count[d]++;
		sum->bo_bytes[d] += size;
	}
	if (size > sum->largest)
		sum->largest = size;
}

static void kc_count_queue(struct kc_summary *sum, const struct kc_record *r)
{
	struct kfd_criu_queue_rec q;
	u32 type;

	memcpy(&q, r->payload, sizeof(q));
	type = le32_to_cpu(q.type);
	if (type == KFD_IOC_QUEUE_TYPE_COMPUTE)
		sum->queues[le32_to_cpu(q.format) ? 1 : 0]++;
	else if (type == KFD_IOC_QUEUE_TYPE_SDMA)
		sum->queues[2]++;
	else
		sum->queues[3]++;
}

static void kc_count(struct kc_summary *sum, const struct kc_record *r)
{
	u32 t = r->skipped || r->type >= KFD_CRIU_REC_NR ? KFD_CRIU_REC_NR : r->type;
	struct kfd_criu_event_rec ev;
	struct kfd_criu_svm_rec svm;
	u32 et;

	sum->count[t]++;
	sum->bytes[t] += r->length + KFD_CRIU_RECORD_OVERHEAD;
	if (t == KFD_CRIU_REC_EVENT) {
		memcpy(&ev, r->payload, sizeof(ev));
		et = le32_to_cpu(ev.type);
		sum->ev_types[et > KFD_IOC_EVENT_MEMORY ? KFD_IOC_EVENT_MEMORY + 1 : et]++;
		sum->events++;
		sum->signaled += ev.signaled != 0;
	} else if (t == KFD_CRIU_REC_BO) {
		kc_count_bo(sum, r);
	} else if (t == KFD_CRIU_REC_QUEUE) {
		kc_count_queue(sum, r);
	} else if (t == KFD_CRIU_REC_SVM_RANGE) {
		memcpy(&svm, r->payload, sizeof(svm));
		sum->svm_bytes += le64_to_cpu(svm.size);
	}
}

/* gfx_target_version 90010 is gfx90a: major, then minor and step in hex */
static void kc_print_gfx(u32 v)
{
	printf("gfx%u%x%x", v / 10000, (v / 100) % 100, v % 100);
}

static void kc_show_gpu(const struct kc_record *r, u32 index)
{
	static const char *const modes[] = { "SPX", "DPX", "TPX", "QPX", "CPX" };
	struct kfd_criu_gpu_rec g;
	u32 mode;

	memcpy(&g, r->payload, sizeof(g));
	mode = le32_to_cpu(g.partition_mode);
	printf("  gpu %u: gpu_id 0x%x, ", index, le32_to_cpu(g.gpu_id));
	kc_print_gfx(le32_to_cpu(g.gfx_target_version));
	printf(" (gfx_target_version %u), %u XCC%s, %s\n",
	       le32_to_cpu(g.gfx_target_version), le32_to_cpu(g.num_xcc),
	       le32_to_cpu(g.num_xcc) == 1 ? "" : "s",
	       mode < 5 ? modes[mode] : "unknown partition");
	printf("    a restore needs: device 0x%x revision 0x%x, %u XCCs in partition mode %u, cwsr_size %u, ctl_stack_size %u, CWSR %s, VRAM >= %llu MiB, MEC firmware >= %u, SDMA firmware >= %u\n",
	       le32_to_cpu(g.device_id), le32_to_cpu(g.revision_id),
	       le32_to_cpu(g.num_xcc), mode, le32_to_cpu(g.cwsr_size),
	       le32_to_cpu(g.ctl_stack_size),
	       le32_to_cpu(g.flags) & KFD_CRIU_GPU_NO_CWSR ? "off" : "on",
	       (unsigned long long)(le64_to_cpu(g.vram_size) >> 20),
	       le32_to_cpu(g.mec_fw_version), le32_to_cpu(g.sdma_fw_version));
}

static void kc_show_process(const struct kc_stream *s)
{
	struct kfd_criu_process_rec p;
	size_t i;

	for (i = 0; i < s->nrecs; i++)
		if (!s->recs[i].skipped && s->recs[i].type == KFD_CRIU_REC_PROCESS)
			break;
	if (i == s->nrecs) {
		printf("process: no PROCESS record\n");
		return;
	}
	memcpy(&p, s->recs[i].payload, sizeof(p));
	printf("process: xnack %s, runtime %s (state %u), r_debug 0x%llx, ttmp_setup %u, signal page %u bytes\n",
	       p.xnack_enabled ? "on" : "off",
	       p.runtime_state ? "enabled" : "disabled",
	       le32_to_cpu(p.runtime_state),
	       (unsigned long long)le64_to_cpu(p.r_debug),
	       le32_to_cpu(p.ttmp_setup), le32_to_cpu(p.signal_page_size));
}

static void kc_show_counts(const struct kc_summary *sum)
{
	int i;

	printf("events: %u, %u signaled", sum->events, sum->signaled);
	for (i = 0; i <= KFD_IOC_EVENT_MEMORY + 1; i++)
		if (sum->ev_types[i])
			printf(", %u %s", sum->ev_types[i], kc_event_types[i]);
	printf("\nBOs: %u", sum->bos);
	for (i = 0; i < 5; i++)
		if (sum->bo_count[i])
			printf(", %s %u (%llu bytes)", kc_domains[i],
			       sum->bo_count[i],
			       (unsigned long long)sum->bo_bytes[i]);
	if (sum->bos)
		printf(", largest %llu bytes", (unsigned long long)sum->largest);
	printf("\nqueues: %u compute PM4, %u compute AQL, %u SDMA, %u SDMA XGMI\n",
	       sum->queues[0], sum->queues[1], sum->queues[2], sum->queues[3]);
	printf("SVM ranges: %u, %llu bytes\n", sum->count[KFD_CRIU_REC_SVM_RANGE],
	       (unsigned long long)sum->svm_bytes);
	printf("trap handlers: %u\n", sum->count[KFD_CRIU_REC_TRAP_HANDLER]);
	printf("records:");
	for (i = 1; i <= KFD_CRIU_REC_NR; i++)
		if (sum->count[i])
			printf(" %s %u (%llu bytes)",
			       i == KFD_CRIU_REC_NR ? "skipped" : kc_type_name(i),
			       sum->count[i], (unsigned long long)sum->bytes[i]);
	printf("\n");
}

static int kc_show_stream(const char *path, void *ctx)
{
	struct kc_summary sum = { };
	struct kc_stream s;
	struct kc_diag d;
	size_t i;
	u32 gpu = 0;
	int ret;

	(void)ctx;
	ret = kc_stream_load(&s, path);
	if (ret) {
		fprintf(stderr, "kfdcrit: %s: %s\n", path, strerror(-ret));
		return -ret;
	}
	printf("%s: %zu bytes, ", path, s.size);
	if (s.header_ok)
		printf("format version %u, written by Linux %.*s\n",
		       le32_to_cpu(s.hdr.version), KFD_CRIU_RELEASE_LEN,
		       (const char *)s.hdr.release);
	else
		printf("no valid header\n");
	for (i = 0; i < s.nrecs; i++)
		kc_count(&sum, &s.recs[i]);
	kc_show_process(&s);
	kc_show_counts(&sum);
	printf("GPUs: %u\n", sum.count[KFD_CRIU_REC_GPU]);
	for (i = 0; i < s.nrecs; i++)
		if (!s.recs[i].skipped && s.recs[i].type == KFD_CRIU_REC_GPU)
			kc_show_gpu(&s.recs[i], gpu++);
	ret = kc_check(&s, &d);
	printf("check: ");
	if (ret)
		kc_diag_print(stdout, path, &d);
	else
		printf("ok\n");
	kc_stream_free(&s);
	return 0;
}

static int kc_show_meta(const char *path)
{
	struct kc_meta m;
	size_t size;
	u8 *data;
	int ret;

	ret = kc_read_file(path, &data, &size);
	if (!ret)
		ret = kc_meta_parse(data, size, &m);
	if (ret) {
		printf("%s: not a kfd_criu_meta message: %s\n", path, strerror(-ret));
		return ret == -EINVAL ? 0 : ret;
	}
	free(data);
	printf("%s: file id %u, ", path, m.file_id);
	if (m.has_drm)
		printf("render node renderD%u of DRM driver %s, reattached without its state (drm_reattach), open flags 0%o\n",
		       m.drm_minor, m.drm_driver, m.open_flags);
	else if (m.has_render)
		printf("render node of GPU 0x%x, open flags 0%o\n",
		       m.render_gpu_id, m.open_flags);
	else if (m.has_unused)
		printf("render node of topology GPU 0x%x, which the process did not use, open flags 0%o\n",
		       m.unused_gpu_id, m.open_flags);
	else if (m.has_alias)
		printf("another /dev/kfd of the process of file %u\n", m.alias_of);
	else
		printf("/dev/kfd, stream format version %u, %llu bytes in kfdcriu-%u.stream\n",
		       m.format_version, (unsigned long long)m.stream_size,
		       m.file_id);
	return 0;
}

/* kfdcriu-drm.img: the render nodes whose mappings come back as zeros */
static int kc_show_drm_mappings(const char *path)
{
	u32 minors[KC_DRM_MINORS_MAX];
	unsigned int n, i;
	size_t size;
	u8 *data;
	int ret;

	ret = kc_read_file(path, &data, &size);
	if (ret)
		return ret;
	ret = kc_drm_mappings_parse(data, size, minors, &n);
	free(data);
	if (ret) {
		printf("%s: not a kfd_criu_drm_mappings message: %s\n", path, strerror(-ret));
		return 0;
	}
	printf("%s: mappings of", path);
	for (i = 0; i < n; i++)
		printf("%s renderD%u", i ? "," : "", minors[i]);
	printf("%s: restored as zero-filled memory (drm_reattach)\n", n ? "" : " no render node");
	return 0;
}

static int kc_show_dir(const char *dir)
{
	struct dirent **names;
	char path[4096];
	int n, i, ret = 0;
	size_t len;

	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		len = strlen(names[i]->d_name);
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (!strcmp(names[i]->d_name, "kfdcriu-drm.img") && !ret)
			ret = kc_show_drm_mappings(path);
		else if (!strncmp(names[i]->d_name, "kfdcriu-", 8) && len > 12 &&
			 !strcmp(names[i]->d_name + len - 4, ".img") && !ret)
			ret = kc_show_meta(path);
		free(names[i]);
	}
	free(names);
	/* A directory without streams was shown, and said so */
	if (!ret && kc_for_each_stream(dir, kc_show_stream, NULL) == ENOENT)
		return 0;
	return ret;
}

/**
 * kc_cmd_show() - "kfdcrit show DIR|FILE"
 * @argc: arguments after "show"
 * @argv: them
 *
 * Return: exit status: 0, or the errno of a file that cannot be read.
 */
int kc_cmd_show(int argc, char **argv)
{
	struct stat st;
	int ret;

	if (argc != 2)
		return KC_EXIT_USAGE;
	if (stat(argv[1], &st)) {
		perror(argv[1]);
		return errno;
	}
	if (!S_ISDIR(st.st_mode))
		return kc_show_stream(argv[1], NULL);
	ret = kc_show_dir(argv[1]);
	if (ret < 0)
		fprintf(stderr, "kfdcrit: %s: %s\n", argv[1], strerror(-ret));
	return ret < 0 ? -ret : ret;
}
