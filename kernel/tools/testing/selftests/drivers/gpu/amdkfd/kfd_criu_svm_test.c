// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: SVM ranges through CRIU image mode
 *
 * Needs an AMD GPU that supports the SVM API (GFX9 or later, a kernel with
 * CONFIG_HSA_AMD_SVM). Without a GPU in the KFD topology the program is
 * skipped (kselftest exit code 4) with the reason "no GPU in the KFD
 * topology"; without SVM support the test is skipped and says how it
 * found out (the topology's capability bit, or the errno of SET_ATTR).
 *
 * A child process acquires the GPU VM on every GPU it uses, maps
 * anonymous memory at an address the test reserved, writes a pattern into
 * it and gives three ranges of it (four with two GPUs) different SVM
 * attributes: preferred and prefetch location in system memory or in
 * VRAM, ACCESS, ACCESS_IN_PLACE or NO_ACCESS per GPU, flags to set and to
 * clear, and the migration granularity. It reads them back with GET_ATTR
 * and the test dumps it as CRIU does.
 *
 * A fresh process restores the image and, as CRIU's memory restore does,
 * maps anonymous memory at the same address and writes the pattern into
 * it: one variant before RESTORE, the other after it, which is the order
 * under CRIU (the process's VMAs come back after the plugin's RESTORE and
 * before RESUME). Once resumed, GET_ATTR over each range must return what
 * it returned in the dumped process, and the memory must still hold the
 * pattern.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/kfd_ioctl.h>
#include <linux/kfd_sysfs.h>

#include "../../../kselftest_harness.h"
#include "kfd_criu_util.h"

/* The kernel-internal "not supported" errno (524) some KFD paths leak */
#define KERNEL_NOTSUPP		524

#define NO_GPU_REASON		"no GPU in the KFD topology"
#define RANGE_SIZE		(2UL << 20)
#define MAX_RANGES		4
#define MAX_GPUS		2
/* Attributes a range sets, and that GET_ATTR asks for */
#define MAX_SET_ATTRS		8
#define MAX_GET_ATTRS		(5 + MAX_GPUS)
#define SVM_SEED		0x5c1a0000U

/**
 * struct svm_range - one SVM range of the dumped process
 * @start: its first byte
 * @size: its size in bytes
 * @nset: entries of @set
 * @set: the attributes the dumpee gives it
 * @nget: entries of @got
 * @got: what GET_ATTR returned for it in the dumpee
 */
struct svm_range {
	__u64 start;
	__u64 size;
	__u32 nset;
	struct kfd_ioctl_svm_attribute set[MAX_SET_ATTRS];
	__u32 nget;
	struct kfd_ioctl_svm_attribute got[MAX_GET_ATTRS];
};

/**
 * struct svm_plan - what the dumpee sets up, as the test sees it
 * @gpus: the GPUs it acquires VMs on
 * @nr_gpus: entries of @gpus
 * @base: start of the reserved address span of the ranges
 * @nr_ranges: entries of @ranges
 * @ranges: the ranges, in address order, back to back from @base
 * @unsupported: 0, or the positive errno with which the dumpee's first
 *	SET_ATTR said that SVM is not available
 */
struct svm_plan {
	struct kfd_test_gpu gpus[MAX_GPUS];
	int nr_gpus;
	__u64 base;
	int nr_ranges;
	struct svm_range ranges[MAX_RANGES];
	int unsupported;
};

/**
 * struct restore_ctx - what the restoree gets from the test
 * @plan: the dumped ranges
 * @image: the image, at its start
 * @map_before_restore: map the memory before RESTORE rather than after
 */
struct restore_ctx {
	const struct svm_plan *plan;
	int image;
	bool map_before_restore;
};

static __u64 pattern(__u64 addr)
{
	return (addr * 0x9e3779b97f4a7c15ULL) ^ SVM_SEED;
}

static void write_pattern(const struct svm_plan *plan)
{
	__u64 *p = (__u64 *)(uintptr_t)plan->base;
	size_t i, n = plan->nr_ranges * RANGE_SIZE / 8;

	for (i = 0; i < n; i++)
		p[i] = pattern((uintptr_t)&p[i]);
}

/* Address of the first word that lost its pattern, or 0 */
static __u64 check_pattern(const struct svm_plan *plan)
{
	const __u64 *p = (const __u64 *)(uintptr_t)plan->base;
	size_t i, n = plan->nr_ranges * RANGE_SIZE / 8;

	for (i = 0; i < n; i++)
		if (p[i] != pattern((uintptr_t)&p[i]))
			return (uintptr_t)&p[i];
	return 0;
}

/* AMDKFD_IOC_SVM: its size field covers the @n attributes that follow */
static int svm_op(int kfd, __u32 op, const struct svm_range *range,
		  struct kfd_ioctl_svm_attribute *attrs, __u32 n)
{
	struct {
		struct kfd_ioctl_svm_args args;
		struct kfd_ioctl_svm_attribute attrs[MAX_SET_ATTRS +
						     MAX_GET_ATTRS];
	} buf;
	size_t size = sizeof(buf.args) + n * sizeof(*attrs);
	int ret;

	memset(&buf, 0, sizeof(buf));
	buf.args.start_addr = range->start;
	buf.args.size = range->size;
	buf.args.op = op;
	buf.args.nattr = n;
	memcpy(buf.attrs, attrs, n * sizeof(*attrs));
	ret = kfd_ioctl(kfd, _IOC(_IOC_READ | _IOC_WRITE,
				  _IOC_TYPE(AMDKFD_IOC_SVM),
				  _IOC_NR(AMDKFD_IOC_SVM), size), &buf);
	memcpy(attrs, buf.attrs, n * sizeof(*attrs));
	return ret;
}

static void add_attr(struct svm_range *r, __u32 type, __u32 value)
{
	r->set[r->nset].type = type;
	r->set[r->nset++].value = value;
}

/* The attributes GET_ATTR asks for: every kind, ACCESS for every GPU */
static void plan_get_attrs(const struct svm_plan *plan, struct svm_range *r)
{
	static const __u32 kinds[] = {
		KFD_IOCTL_SVM_ATTR_PREFERRED_LOC,
		KFD_IOCTL_SVM_ATTR_PREFETCH_LOC,
		KFD_IOCTL_SVM_ATTR_SET_FLAGS,
		KFD_IOCTL_SVM_ATTR_CLR_FLAGS,
		KFD_IOCTL_SVM_ATTR_GRANULARITY,
	};
	unsigned int i;

	r->nget = 0;
	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		r->got[r->nget].type = kinds[i];
		r->got[r->nget++].value = 0;
	}
	for (i = 0; i < (unsigned int)plan->nr_gpus; i++) {
		r->got[r->nget].type = KFD_IOCTL_SVM_ATTR_ACCESS;
		r->got[r->nget++].value = plan->gpus[i].gpu_id;
	}
}

/*
 * The ranges: host-coherent system memory the GPU may access; memory
 * preferred and prefetched in VRAM that the GPU accesses in place, read
 * only; memory no GPU may access; with a second GPU, memory one GPU
 * accesses and the other in place, executable.
 */
static void plan_ranges(struct svm_plan *plan)
{
	__u32 a = plan->gpus[0].gpu_id, b = plan->gpus[1].gpu_id;
	struct svm_range *r = plan->ranges;
	int i;

	add_attr(&r[0], KFD_IOCTL_SVM_ATTR_PREFERRED_LOC,
		 KFD_IOCTL_SVM_LOCATION_SYSMEM);
	add_attr(&r[0], KFD_IOCTL_SVM_ATTR_PREFETCH_LOC,
		 KFD_IOCTL_SVM_LOCATION_SYSMEM);
	add_attr(&r[0], KFD_IOCTL_SVM_ATTR_ACCESS, a);
	add_attr(&r[0], KFD_IOCTL_SVM_ATTR_SET_FLAGS,
		 KFD_IOCTL_SVM_FLAG_HOST_ACCESS | KFD_IOCTL_SVM_FLAG_COHERENT);
	add_attr(&r[0], KFD_IOCTL_SVM_ATTR_GRANULARITY, 9);

	add_attr(&r[1], KFD_IOCTL_SVM_ATTR_PREFERRED_LOC, a);
	add_attr(&r[1], KFD_IOCTL_SVM_ATTR_PREFETCH_LOC, a);
	add_attr(&r[1], KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE, a);
	add_attr(&r[1], KFD_IOCTL_SVM_ATTR_SET_FLAGS,
		 KFD_IOCTL_SVM_FLAG_GPU_RO);
	add_attr(&r[1], KFD_IOCTL_SVM_ATTR_CLR_FLAGS,
		 KFD_IOCTL_SVM_FLAG_COHERENT);
	add_attr(&r[1], KFD_IOCTL_SVM_ATTR_GRANULARITY, 4);

	add_attr(&r[2], KFD_IOCTL_SVM_ATTR_NO_ACCESS, a);
	if (plan->nr_gpus > 1)
		add_attr(&r[2], KFD_IOCTL_SVM_ATTR_NO_ACCESS, b);
	add_attr(&r[2], KFD_IOCTL_SVM_ATTR_SET_FLAGS,
		 KFD_IOCTL_SVM_FLAG_GPU_READ_MOSTLY);
	add_attr(&r[2], KFD_IOCTL_SVM_ATTR_GRANULARITY, 0);
	plan->nr_ranges = 3;

	if (plan->nr_gpus > 1) {
		add_attr(&r[3], KFD_IOCTL_SVM_ATTR_PREFERRED_LOC,
			 KFD_IOCTL_SVM_LOCATION_SYSMEM);
		add_attr(&r[3], KFD_IOCTL_SVM_ATTR_ACCESS, a);
		add_attr(&r[3], KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE, b);
		add_attr(&r[3], KFD_IOCTL_SVM_ATTR_SET_FLAGS,
			 KFD_IOCTL_SVM_FLAG_GPU_EXEC);
		add_attr(&r[3], KFD_IOCTL_SVM_ATTR_GRANULARITY, 6);
		plan->nr_ranges = 4;
	}
	for (i = 0; i < plan->nr_ranges; i++) {
		r[i].start = plan->base + i * RANGE_SIZE;
		r[i].size = RANGE_SIZE;
		plan_get_attrs(plan, &r[i]);
	}
}

static bool is_access(__u32 type)
{
	return type == KFD_IOCTL_SVM_ATTR_ACCESS ||
	       type == KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE ||
	       type == KFD_IOCTL_SVM_ATTR_NO_ACCESS;
}

/* Whether GET_ATTR's @got reflects the attribute @set */
static bool reflects(const struct svm_range *r,
		     const struct kfd_ioctl_svm_attribute *set)
{
	const struct kfd_ioctl_svm_attribute *got;
	__u32 i;

	for (i = 0; i < r->nget; i++) {
		got = &r->got[i];
		if (is_access(set->type)) {
			/* GET_ATTR turns ACCESS into the GPU's access type */
			if (is_access(got->type) && got->value == set->value)
				return got->type == set->type;
			continue;
		}
		if (got->type != set->type)
			continue;
		if (set->type == KFD_IOCTL_SVM_ATTR_SET_FLAGS ||
		    set->type == KFD_IOCTL_SVM_ATTR_CLR_FLAGS)
			return (got->value & set->value) == set->value;
		return got->value == set->value;
	}
	return false;
}

/* Sets and reads back the attributes of range @i; 0 or -errno */
static int apply_range(int kfd, struct svm_plan *plan, int i)
{
	struct svm_range *r = &plan->ranges[i];
	__u32 k;
	int ret;

	ret = svm_op(kfd, KFD_IOCTL_SVM_OP_SET_ATTR, r, r->set, r->nset);
	if (ret) {
		fprintf(stderr, "# SET_ATTR of range %d: %s\n", i,
			strerror(-ret));
		return ret;
	}
	ret = svm_op(kfd, KFD_IOCTL_SVM_OP_GET_ATTR, r, r->got, r->nget);
	if (ret) {
		fprintf(stderr, "# GET_ATTR of range %d: %s\n", i,
			strerror(-ret));
		return ret;
	}
	for (k = 0; k < r->nset; k++) {
		if (!reflects(r, &r->set[k])) {
			fprintf(stderr,
				"# range %d: GET_ATTR does not show attribute %u = %#x\n",
				i, r->set[k].type, r->set[k].value);
			return -EBADMSG;
		}
	}
	return 0;
}

/* Whether a SET_ATTR error says that there is no SVM to test */
static bool svm_unsupported(int ret)
{
	return ret == -EPERM || ret == -KERNEL_NOTSUPP || ret == -EOPNOTSUPP;
}

static const char *unsupported_reason(int err)
{
	switch (err) {
	case EPERM:
		return "SVM SET_ATTR fails with EPERM: no CONFIG_HSA_AMD_SVM";
	case KERNEL_NOTSUPP:
		return "SVM SET_ATTR fails with errno 524 (kernel-internal)";
	default:
		return "SVM SET_ATTR fails with EOPNOTSUPP";
	}
}

/*
 * The process to be dumped: VMs, the memory and its pattern, the ranges;
 * then its /dev/kfd goes to the test and it waits for the dump.
 */
static void dumpee_main(int sock, void *arg)
{
	struct svm_plan *plan = arg;
	void *mem;
	int kfd = kfd_open(), drm, i, ret;

	CHILD_CHECK(kfd >= 0);
	for (i = 0; i < plan->nr_gpus; i++) {
		drm = open_render_node(&plan->gpus[i]);
		CHILD_CHECK(drm >= 0);
		CHILD_CHECK(!kfd_acquire_vm(kfd, drm, plan->gpus[i].gpu_id));
		CHILD_CHECK(kfd_in_gpuvm_aperture(kfd, plan->gpus[i].gpu_id,
						  plan->base,
						  MAX_RANGES * RANGE_SIZE));
	}
	mem = mmap((void *)(uintptr_t)plan->base, MAX_RANGES * RANGE_SIZE,
		   PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	CHILD_CHECK(mem != MAP_FAILED);
	write_pattern(plan);
	for (i = 0; i < plan->nr_ranges; i++) {
		ret = apply_range(kfd, plan, i);
		if (!i && svm_unsupported(ret)) {
			plan->unsupported = -ret;
			break;
		}
		CHILD_CHECK(!ret);
	}
	CHILD_CHECK(plan->unsupported || !check_pattern(plan));
	CHILD_CHECK(!send_fd(sock, kfd, plan, sizeof(*plan)));
	sync_wait(sock);	/* until the dump is over */
	_exit(0);
}

/* The memory at the ranges, as CRIU's memory restore brings it back */
static void restore_memory(const struct svm_plan *plan)
{
	void *mem = mmap((void *)(uintptr_t)plan->base,
			 MAX_RANGES * RANGE_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			 -1, 0);

	CHILD_CHECK(mem == (void *)(uintptr_t)plan->base);
	write_pattern(plan);
}

/* GET_ATTR over every range must return what the dumpee saw */
static int compare_ranges(int kfd, const struct svm_plan *plan)
{
	struct kfd_ioctl_svm_attribute got[MAX_GET_ATTRS];
	const struct svm_range *r;
	int i, ret, bad = 0;
	__u32 k;

	for (i = 0; i < plan->nr_ranges; i++) {
		r = &plan->ranges[i];
		memcpy(got, r->got, sizeof(got));
		/* The query is what the dumpee asked: ACCESS per GPU */
		for (k = 0; k < r->nget; k++)
			if (is_access(got[k].type))
				got[k].type = KFD_IOCTL_SVM_ATTR_ACCESS;
		ret = svm_op(kfd, KFD_IOCTL_SVM_OP_GET_ATTR, r, got, r->nget);
		if (ret) {
			fprintf(stderr, "# GET_ATTR of restored range %d: %s\n",
				i, strerror(-ret));
			return ret;
		}
		for (k = 0; k < r->nget; k++) {
			if (got[k].type == r->got[k].type &&
			    got[k].value == r->got[k].value)
				continue;
			fprintf(stderr,
				"# range %d, attribute %u: restored %u = %#x, dumped %u = %#x\n",
				i, k, got[k].type, got[k].value,
				r->got[k].type, r->got[k].value);
			bad = -EBADMSG;
		}
	}
	return bad;
}

/*
 * Restores the image with a GPU map of every GPU, brings the memory back
 * before or after RESTORE, waits for RESUME and compares.
 */
static void restoree_main(int sock, void *arg)
{
	const struct restore_ctx *ctx = arg;
	const struct svm_plan *plan = ctx->plan;
	struct kfd_criu_gpu_map map[MAX_GPUS] = { 0 };
	struct kfd_criu_offset_map offsets[4];
	struct kfd_ioctl_criu_args args;
	int kfd = kfd_open(), i, ret;
	__u64 bad;

	CHILD_CHECK(kfd >= 0);
	for (i = 0; i < plan->nr_gpus; i++) {
		map[i].local_gpu_id = plan->gpus[i].gpu_id;
		map[i].drm_fd = open_render_node(&plan->gpus[i]);
		CHILD_CHECK(map[i].drm_fd >= 0);
	}
	/* The test's reservation is not the process's memory: drop it */
	CHILD_CHECK(!munmap((void *)(uintptr_t)plan->base,
			    MAX_RANGES * RANGE_SIZE));
	if (ctx->map_before_restore)
		restore_memory(plan);
	ret = criu_restore_mapped(kfd, ctx->image, map, plan->nr_gpus,
				  offsets, 4, &args);
	if (ret) {
		fprintf(stderr, "# RESTORE: %s\n", strerror(-ret));
		_exit(1);
	}
	if (!ctx->map_before_restore)
		restore_memory(plan);
	sync_send(sock);
	sync_wait(sock);	/* resumed */
	CHILD_CHECK(!compare_ranges(kfd, plan));
	bad = check_pattern(plan);
	if (bad) {
		fprintf(stderr, "# the pattern is lost at %#llx\n",
			(unsigned long long)bad);
		_exit(1);
	}
	_exit(0);
}

/*
 * Dumps a dumpee of @plan into a memfd, which it returns at its start,
 * or -1 when the dumpee found no SVM support (the test is then skipped).
 */
static int dump_svm(struct __test_metadata *_metadata, struct svm_plan *plan)
{
	struct kfd_ioctl_criu_args args;
	struct kfd_dumpee d;
	const char *op = "";
	__u64 size = 0;
	pid_t pid = 0;
	int image, ret;

	image = memfd_create("kfd-criu-svm-image", MFD_CLOEXEC);
	ASSERT_LE(0, image);
	if (kfd_dumpee_start(&d, dumpee_main, plan, plan, sizeof(*plan))) {
		ret = kfd_dumpee_finish(&d);
		ASSERT_EQ(0, ret) TH_LOG("the dumpee failed to set up its ranges");
		ASSERT_TRUE(false) TH_LOG("no file from the dumpee, or no seize");
	}
	if (plan->unsupported) {
		EXPECT_EQ(0, kfd_dumpee_finish(&d));
		close(image);
		return -1;
	}
	ret = criu_dump(d.kfd, image, &pid, &size, &op);
	EXPECT_EQ(0, criu_image_op(d.kfd, KFD_CRIU_OP_UNPAUSE, -1, &args));
	EXPECT_EQ(0, kfd_dumpee_finish(&d));
	ASSERT_EQ(0, ret) TH_LOG("%s: %s", op, strerror(-ret));
	EXPECT_EQ(d.pid, pid);
	EXPECT_EQ((off_t)size, fd_size(image));
	EXPECT_EQ(0, lseek(image, 0, SEEK_SET));
	return image;
}

FIXTURE(svm) {
	struct svm_plan plan;
};

FIXTURE_VARIANT(svm) {
	bool map_before_restore;
};

/* The memory is back before RESTORE, as a simpler restore tool may do */
FIXTURE_VARIANT_ADD(svm, memory_before_restore) {
	.map_before_restore = true,
};

/* As CRIU does: RESTORE, then the VMAs, then RESUME */
FIXTURE_VARIANT_ADD(svm, memory_after_restore) {
	.map_before_restore = false,
};

FIXTURE_SETUP(svm)
{
	__u64 cap = 0;
	char *base;
	int i;

	memset(&self->plan, 0, sizeof(self->plan));
	self->plan.nr_gpus = have_kfd() ?
		kfd_topology_gpus(self->plan.gpus, MAX_GPUS) : 0;
	if (!self->plan.nr_gpus)
		SKIP(return, NO_GPU_REASON);
	for (i = 0; i < self->plan.nr_gpus; i++) {
		if (kfd_gpu_prop(&self->plan.gpus[i], "capability", &cap))
			cap = 0;
		if (!(cap & HSA_CAP_SVMAPI_SUPPORTED))
			SKIP(return,
			     "GPU %u does not support the SVM API (topology capability)",
			     self->plan.gpus[i].gpu_id);
	}
	/* An address span that the dumpee and the restoree both have free */
	base = mmap(NULL, (MAX_RANGES + 1) * RANGE_SIZE, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, base);
	self->plan.base = ((uintptr_t)base + RANGE_SIZE - 1) &
			  ~(RANGE_SIZE - 1);
	plan_ranges(&self->plan);
}

FIXTURE_TEARDOWN(svm)
{
}

/* Every range comes back with its attributes, the memory with its data. */
TEST_F_TIMEOUT(svm, ranges_survive_restore, 120)
{
	struct restore_ctx ctx = {
		.plan = &self->plan,
		.map_before_restore = variant->map_before_restore,
	};
	int resumed, status;

	ctx.image = dump_svm(_metadata, &self->plan);
	/* A SKIP would hide a check that failed on the way */
	if (ctx.image < 0 && _metadata->exit_code == KSFT_FAIL)
		return;
	if (ctx.image < 0)
		SKIP(return, "%s", unsupported_reason(self->plan.unsupported));
	status = kfd_restoree_run(restoree_main, &ctx, &resumed);
	EXPECT_EQ(0, resumed) TH_LOG("RESUME: %s", resumed == 1 ?
				     "not reached, the restore failed" :
				     strerror(-resumed));
	EXPECT_EQ(0, status) TH_LOG("the restored process failed");
	close(ctx.image);
}

/* Without a GPU the whole program is skipped: exit 4, the reason on TAP. */
int main(int argc, char **argv)
{
	struct kfd_test_gpu gpu;

	if (!have_kfd() || !kfd_topology_gpus(&gpu, 1)) {
		ksft_print_header();
		ksft_exit_skip(NO_GPU_REASON "\n");
	}
	return test_harness_run(argc, argv);
}
