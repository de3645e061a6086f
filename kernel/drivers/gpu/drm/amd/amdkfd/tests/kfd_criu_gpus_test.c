// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * KUnit tests of the GPU part of CRIU image mode on fake GPUs: the real
 * snapshot describes fake nodes (a real-sized amdgpu_device, topology
 * properties, partitions, firmware), the records go through the stream,
 * and the real placement, VM acquisition and unwind run on processes of
 * the test. The calls that need a topology entry, a render node, a VM or
 * runtime PM go to the fakes here through KUnit static stubs; the fakes
 * count what they hold, so that a test can check that an unwind, or a
 * failure at any step, gives back everything. One case runs the VM setup
 * that image mode shares with AMDKFD_IOC_ACQUIRE_VM,
 * kfd_process_device_init_vm(), on a fake render node: only amdgpu's
 * calls that need a real VM are faked, and its release of the process
 * info is real. #included at the bottom of kfd_criu_gpus.c.
 */

#include <drm/drm_drv.h>
#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/idr.h>
#include <linux/mman.h>
#include <linux/vmalloc.h>

#include "amdgpu_drv.h"
#include "kfd_criu_test_stream.h"

#define GT_MAX_NODES	8
/* The render node descriptor of fake node i */
#define GT_FD_BASE	100
/* More calls than a restore of the test makes */
#define GT_MAX_POINTS	16

/**
 * struct gt_desc - what a fake GPU reports
 * @gfx: gfx target version
 * @device: PCI device id
 * @rev: PCI revision id
 * @xccs: XCCs of its partition
 * @mode: partition mode, or -1 for a GPU without a partition manager
 * @vram: bytes of VRAM
 * @cwsr: CWSR area bytes
 * @ctl_stack: control stack bytes
 * @mec: MEC firmware version
 * @sdma: SDMA firmware version
 * @no_cwsr: the driver runs it without CWSR
 */
struct gt_desc {
	u32 gfx;
	u32 device;
	u32 rev;
	u32 xccs;
	int mode;
	u64 vram;
	u32 cwsr;
	u32 ctl_stack;
	u32 mec;
	u32 sdma;
	bool no_cwsr;
};

/* An MI300 partition, an RX 7900 without CWSR, an MI210 */
static const struct gt_desc gt_descs[] = {
	{ .gfx = 90402, .device = 0x74a1, .rev = 1, .xccs = 2,
	  .mode = AMDGPU_DPX_PARTITION_MODE, .vram = 96ULL << 30,
	  .cwsr = 0x1d3000, .ctl_stack = 0x7000, .mec = 151, .sdma = 19 },
	{ .gfx = 110000, .device = 0x744c, .rev = 0xc8, .xccs = 1, .mode = -1,
	  .vram = 24ULL << 30, .cwsr = 0x5c5000, .ctl_stack = 0x4000,
	  .mec = 2200, .sdma = 21, .no_cwsr = true },
	{ .gfx = 90010, .device = 0x740f, .rev = 2, .xccs = 1, .mode = -1,
	  .vram = 64ULL << 30, .cwsr = 0x1a6000, .ctl_stack = 0x6000,
	  .mec = 79, .sdma = 9 },
};

/**
 * struct gt_fake - the fake GPUs of the running test
 * @test: the running test
 * @nodes: the fake nodes
 * @props: their topology properties
 * @hidden: the topology does not know the node
 * @num_nodes: entries in @nodes
 * @file_key: what a fake VM's per-GPU data holds as its DRM file
 * @calls: VM acquisitions and runtime PM binds made
 * @fail_at: the call (by number) that fails with -EIO, or %UINT_MAX
 * @vms: fake VMs acquired and not released
 * @refs: runtime PM references held
 * @doorbells_freed: process doorbells freed
 */
struct gt_fake {
	struct kunit *test;
	struct kfd_node *nodes[GT_MAX_NODES];
	struct kfd_node_properties props[GT_MAX_NODES];
	bool hidden[GT_MAX_NODES];
	u32 num_nodes;
	struct file *file_key;
	unsigned int calls;
	unsigned int fail_at;
	unsigned int vms;
	unsigned int refs;
	unsigned int doorbells_freed;
};

/**
 * struct gt_proc - a process of the test
 * @p: the process
 * @info: what amdgpu creates with its first VM and frees with its last;
 *	p->kgd_process_info points to it while the process has a VM
 */
struct gt_proc {
	struct kfd_process p;
	struct amdkfd_process_info info;
};

/* The stubs run in the test's thread: the fakes are its private data. */
static struct gt_fake *gt_get(void)
{
	return kunit_get_current_test()->priv;
}

static int gt_node_index(const struct kfd_node *node)
{
	struct gt_fake *gt_fake = gt_get();
	u32 i;

	for (i = 0; i < gt_fake->num_nodes; i++)
		if (gt_fake->nodes[i] == node)
			return i;
	return -1;
}

static int gt_step(void)
{
	struct gt_fake *gt_fake = gt_get();

	return gt_fake->calls++ == gt_fake->fail_at ? -EIO : 0;
}

static const struct kfd_node_properties *gt_node_props(struct kfd_node *node)
{
	struct gt_fake *gt_fake = gt_get();
	int i = gt_node_index(node);

	return i < 0 || gt_fake->hidden[i] ? NULL : &gt_fake->props[i];
}

static bool gt_has_vm(struct kfd_process *p)
{
	u32 i;

	for (i = 0; i < p->n_pdds; i++)
		if (p->pdds[i]->drm_file)
			return true;
	return false;
}

/*
 * As amdgpu: only the GPU's own render node is taken; the first VM of a
 * process creates its process info, with MMU notifications unblocked; a
 * failure leaves nothing behind.
 */
static int gt_init_vm(struct kfd_process *p, struct kfd_process_device *pdd,
		      int drm_fd)
{
	struct gt_proc *gp = container_of(p, struct gt_proc, p);
	struct gt_fake *gt_fake = gt_get();
	int ret = gt_step();

	if (!ret && drm_fd != GT_FD_BASE + gt_node_index(pdd->dev))
		ret = -EINVAL;
	if (ret)
		return ret;
	if (!p->kgd_process_info) {
		gp->info.block_mmu_notifications = false;
		p->kgd_process_info = &gp->info;
	}
	pdd->drm_file = gt_fake->file_key;
	gt_fake->vms++;
	return 0;
}

/* As amdgpu: a GPU without a VM is left alone; the last VM takes the info */
static void gt_release_vm(struct kfd_process *p,
			  struct kfd_process_device *pdd)
{
	struct gt_fake *gt_fake = gt_get();

	if (pdd->drm_file) {
		KUNIT_EXPECT_PTR_EQ(gt_fake->test, pdd->drm_file,
				    gt_fake->file_key);
		pdd->drm_file = NULL;
		gt_fake->vms--;
	}
	if (!gt_has_vm(p))
		p->kgd_process_info = NULL;
}

static int gt_bind_gpu(struct kfd_process *p, struct kfd_process_device *pdd)
{
	int ret = gt_step();

	if (ret)
		return ret;
	if (!pdd->runtime_inuse) {
		pdd->runtime_inuse = true;
		gt_get()->refs++;
	}
	return 0;
}

static void gt_put_gpu(struct kfd_process_device *pdd, bool doorbells,
		       bool runtime_pm)
{
	struct gt_fake *gt_fake = gt_get();

	if (doorbells) {
		pdd->qpd.proc_doorbells = NULL;
		gt_fake->doorbells_freed++;
	}
	if (runtime_pm) {
		KUNIT_EXPECT_TRUE(gt_fake->test, pdd->runtime_inuse);
		pdd->runtime_inuse = false;
		gt_fake->refs--;
	}
}

static struct gt_fake *gt_fake_new(struct kunit *test)
{
	struct gt_fake *fake;

	fake = kunit_kzalloc(test, sizeof(*fake), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fake);
	fake->test = test;
	fake->fail_at = UINT_MAX;
	fake->file_key = kunit_kzalloc(test, sizeof(struct file), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fake->file_key);
	test->priv = fake;
	kunit_activate_static_stub(test, kfd_criu_node_props, gt_node_props);
	kunit_activate_static_stub(test, kfd_criu_init_vm, gt_init_vm);
	kunit_activate_static_stub(test, kfd_criu_release_vm, gt_release_vm);
	kunit_activate_static_stub(test, kfd_criu_bind_gpu, gt_bind_gpu);
	kunit_activate_static_stub(test, kfd_criu_put_gpu, gt_put_gpu);
	return fake;
}

static void gt_free_adev(void *adev)
{
	vfree(adev);
}

/* A fake node with id @id that reports @d; returns its index. */
static u32 gt_node_new(struct kunit *test, u32 id, const struct gt_desc *d)
{
	struct kfd_node_properties *props;
	struct amdgpu_device *adev;
	struct gt_fake *gt_fake = test->priv;
	struct kfd_node *node;
	u32 i = gt_fake->num_nodes;

	KUNIT_ASSERT_LT(test, i, GT_MAX_NODES);
	node = kunit_kzalloc(test, sizeof(*node), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, node);
	node->kfd = kunit_kzalloc(test, sizeof(*node->kfd), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, node->kfd);
	adev = vzalloc(sizeof(*adev));
	KUNIT_ASSERT_NOT_NULL(test, adev);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, gt_free_adev,
							adev), 0);
	if (d->mode >= 0) {
		adev->xcp_mgr = kunit_kzalloc(test, sizeof(*adev->xcp_mgr),
					      GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, adev->xcp_mgr);
		adev->xcp_mgr->mode = d->mode;
	}
	adev->rev_id = d->rev;
	node->adev = adev;
	node->id = id;
	node->xcc_mask = GENMASK(d->xccs - 1, 0);
	node->local_mem_info.local_mem_size_private = d->vram / 4;
	node->local_mem_info.local_mem_size_public = d->vram - d->vram / 4;
	node->kfd->mec_fw_version = d->mec;
	node->kfd->sdma_fw_version = d->sdma;
	node->kfd->cwsr_enabled = !d->no_cwsr;

	props = &gt_fake->props[i];
	props->gfx_target_version = d->gfx;
	props->device_id = d->device;
	props->cwsr_size = d->cwsr;
	props->ctl_stack_size = d->ctl_stack;
	gt_fake->nodes[i] = node;
	gt_fake->num_nodes++;
	return i;
}

static void gt_process_release(void *data)
{
	struct kfd_process *p = data;
	u32 i;

	for (i = 0; i < p->n_pdds; i++)
		idr_destroy(&p->pdds[i]->alloc_idr);
}

/* A process with per-GPU data on fake nodes @nodes[0..@n), in that order. */
static struct kfd_process *gt_process(struct kunit *test, const u32 *nodes,
				      u32 n)
{
	struct gt_fake *gt_fake = test->priv;
	struct kfd_process_device *pdd;
	struct kfd_process *p;
	struct gt_proc *gp;
	u32 i;

	gp = kunit_kzalloc(test, sizeof(*gp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, gp);
	p = &gp->p;
	mutex_init(&p->mutex);
	/* The primary KFD process of its mm, with no other context */
	p->context_id = KFD_CONTEXT_ID_PRIMARY;
	ida_init(&p->id_table);
	mutex_init(&gp->info.lock);
	for (i = 0; i < n; i++) {
		pdd = kunit_kzalloc(test, sizeof(*pdd), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, pdd);
		pdd->dev = gt_fake->nodes[nodes[i]];
		pdd->process = p;
		pdd->user_gpu_id = pdd->dev->id;
		idr_init(&pdd->alloc_idr);
		p->pdds[i] = pdd;
		p->n_pdds = i + 1;
	}
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							gt_process_release, p),
			0);
	return p;
}

static bool gt_mmu_blocked(struct kfd_process *p)
{
	struct amdkfd_process_info *info = p->kgd_process_info;

	return info && READ_ONCE(info->block_mmu_notifications);
}

/* The record a GPU reporting @d and known to its process as @id gives. */
static void gt_expect_rec(struct kunit *test, const struct kfd_criu_gpu_rec *r,
			  u32 id, const struct gt_desc *d)
{
	KUNIT_EXPECT_EQ(test, le32_to_cpu(r->gpu_id), id);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(r->gfx_target_version), d->gfx);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(r->device_id), d->device);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(r->revision_id), d->rev);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(r->num_xcc), d->xccs);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(r->partition_mode),
			d->mode < 0 ? AMDGPU_SPX_PARTITION_MODE : d->mode);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(r->vram_size), d->vram);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(r->cwsr_size), d->cwsr);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(r->ctl_stack_size), d->ctl_stack);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(r->mec_fw_version), d->mec);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(r->sdma_fw_version), d->sdma);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(r->flags),
			d->no_cwsr ? KFD_CRIU_GPU_NO_CWSR : 0);
}

static int gt_snapshot(struct kfd_process *p, struct kfd_criu_gpus_image *img)
{
	int ret;

	mutex_lock(&p->mutex);
	ret = kfd_criu_gpus_snapshot(p, img);
	mutex_unlock(&p->mutex);
	return ret;
}

/*
 * Each GPU is described as its node and the topology report it, under the
 * gpu_id its process knows it by, which after a restore with a map is not
 * the topology's. A GPU the topology does not know and one no restore
 * could take fail the dump, with nothing kept.
 */
static void gt_test_snapshot(struct kunit *test)
{
	static const u32 nodes[] = { 0, 1, 2 };
	struct kfd_criu_gpus_image img;
	struct gt_fake *gt_fake;
	struct kfd_process *p;
	u32 i;

	gt_fake = gt_fake_new(test);
	for (i = 0; i < ARRAY_SIZE(gt_descs); i++)
		gt_node_new(test, 0x1000 + i, &gt_descs[i]);
	p = gt_process(test, nodes, ARRAY_SIZE(nodes));
	p->pdds[1]->user_gpu_id = 0x7777;
	/* As AMDKFD_IOC_SET_SCRATCH_BACKING_VA leaves it */
	p->pdds[1]->qpd.sh_hidden_private_base = 0x5a5a0;

	KUNIT_ASSERT_EQ(test, gt_snapshot(p, &img), 0);
	KUNIT_ASSERT_EQ(test, img.num_gpus, 3);
	KUNIT_EXPECT_EQ(test, img.gpus_read, 3);
	gt_expect_rec(test, &img.gpus[0], 0x1000, &gt_descs[0]);
	gt_expect_rec(test, &img.gpus[1], 0x7777, &gt_descs[1]);
	gt_expect_rec(test, &img.gpus[2], 0x1002, &gt_descs[2]);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(img.gpus[0].scratch_backing_va), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(img.gpus[1].scratch_backing_va),
			0x5a5a0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(img.gpus[2].scratch_backing_va), 0);
	kfd_criu_gpus_image_free(&img);

	gt_fake->hidden[2] = true;
	KUNIT_EXPECT_EQ(test, gt_snapshot(p, &img), -ENODEV);
	KUNIT_EXPECT_NULL(test, img.gpus);
	KUNIT_EXPECT_EQ(test, img.num_gpus, 0);
	gt_fake->hidden[2] = false;

	/* No XCC: a record no restore would take */
	gt_fake->nodes[1]->xcc_mask = 0;
	KUNIT_EXPECT_EQ(test, gt_snapshot(p, &img), -EOPNOTSUPP);
	KUNIT_EXPECT_NULL(test, img.gpus);

	p = gt_process(test, NULL, 0);
	KUNIT_EXPECT_EQ(test, gt_snapshot(p, &img), 0);
	KUNIT_EXPECT_EQ(test, img.num_gpus, 0);
}

/* Writes the GPU records of @img to @s, between a header and END. */
static int gt_write(struct kfd_criu_test_stream *s,
		    const struct kfd_criu_gpus_image *img)
{
	struct kfd_criu_image_writer w;
	int ret;

	ret = kfd_criu_test_begin_image(s, &w);
	if (!ret)
		ret = kfd_criu_gpus_write(&w, img);
	if (!ret)
		ret = kfd_criu_image_write_end(&w);
	return ret;
}

/* Reads @s back as RESTORE does: collected, then validated as a set. */
static int gt_read_back(struct kfd_criu_test_stream *s, u32 num_gpus,
			struct kfd_criu_gpus_image *out)
{
	struct kfd_criu_image_reader r;
	struct kfd_criu_gpu_rec buf;
	struct kfd_criu_record rec;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = kfd_criu_test_open_image(s, &r);
	if (!ret)
		ret = kfd_criu_gpus_prepare(out, num_gpus);
	while (!ret &&
	       (ret = kfd_criu_test_next_record(&r, &rec, &buf, sizeof(buf))) > 0)
		ret = kfd_criu_gpus_collect(out, &rec, &buf);
	if (!ret)
		ret = kfd_criu_gpus_validate(out);
	return ret;
}

/**
 * struct gt_env - a dumped process and the machine it is restored on
 * @src: the dumped process: fake nodes 0, 1, 2 (ids 0x1000 up)
 * @img: its GPU records, read back from the stream
 * @dst: the target, on nodes 3 (as 2, id 0x2000), 4 (as 0, id 0x2001),
 *	5 (as 1, id 0x1001) and 6 (as 0, id 0x1002, which the image gives
 *	to another GPU)
 * @map: image GPU 0 to 0x2001 and 2 to 0x2000, with their render nodes;
 *	image GPU 1 goes to 0x1001 by its id
 * @old_ids: the gpu_ids of @dst before a restore
 */
struct gt_env {
	struct kfd_process *src;
	struct kfd_criu_gpus_image img;
	struct kfd_process *dst;
	struct kfd_criu_gpu_map map[2];
	u32 old_ids[4];
};

static void gt_env_release(void *data)
{
	struct gt_env *e = data;

	kfd_criu_gpus_image_free(&e->img);
}

static struct gt_env *gt_env_new(struct kunit *test)
{
	static const u32 src_nodes[] = { 0, 1, 2 };
	static const u32 dst_nodes[] = { 3, 4, 5, 6 };
	struct kfd_criu_test_stream *s = kfd_criu_test_stream_new(test);
	struct kfd_criu_gpus_image img;
	struct gt_env *e;
	u32 i;

	e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, gt_env_release,
							e), 0);
	gt_fake_new(test);
	for (i = 0; i < ARRAY_SIZE(gt_descs); i++)
		gt_node_new(test, 0x1000 + i, &gt_descs[i]);
	gt_node_new(test, 0x2000, &gt_descs[2]);
	gt_node_new(test, 0x2001, &gt_descs[0]);
	gt_node_new(test, 0x1001, &gt_descs[1]);
	gt_node_new(test, 0x1002, &gt_descs[0]);

	e->src = gt_process(test, src_nodes, ARRAY_SIZE(src_nodes));
	e->src->pdds[0]->qpd.sh_hidden_private_base = 0x10000;
	e->src->pdds[2]->qpd.sh_hidden_private_base = 0x30000;
	KUNIT_ASSERT_EQ(test, gt_snapshot(e->src, &img), 0);
	KUNIT_ASSERT_EQ(test, gt_write(s, &img), 0);
	kfd_criu_gpus_image_free(&img);
	KUNIT_ASSERT_EQ(test, gt_read_back(s, 3, &e->img), 0);

	e->dst = gt_process(test, dst_nodes, ARRAY_SIZE(dst_nodes));
	for (i = 0; i < ARRAY_SIZE(e->old_ids); i++)
		e->old_ids[i] = e->dst->pdds[i]->user_gpu_id;
	e->map[0] = (struct kfd_criu_gpu_map){ .image_gpu_id = 0x1000,
		.local_gpu_id = 0x2001, .drm_fd = GT_FD_BASE + 4 };
	e->map[1] = (struct kfd_criu_gpu_map){ .image_gpu_id = 0x1002,
		.local_gpu_id = 0x2000, .drm_fd = GT_FD_BASE + 3 };
	return e;
}

/* Places and restores @e's image on its target; @st keeps the state. */
static int gt_restore(struct gt_env *e, u64 needed,
		      struct kfd_criu_gpus_restore *st)
{
	int ret;

	memset(st, 0, sizeof(*st));
	st->map = e->map;
	st->num_map = ARRAY_SIZE(e->map);
	mutex_lock(&e->dst->mutex);
	ret = kfd_criu_gpus_map(e->dst, &e->img, st);
	if (!ret)
		ret = kfd_criu_gpus_restore(e->dst, &e->img, needed, st);
	mutex_unlock(&e->dst->mutex);
	return ret;
}

static void gt_unwind(struct kfd_process *p, struct kfd_criu_gpus_restore *st)
{
	mutex_lock(&p->mutex);
	kfd_criu_gpus_unwind(p, st);
	mutex_unlock(&p->mutex);
}

/*
 * The target as it was: its ids, no VM, no reference, nothing blocked, no
 * scratch backing VA.
 */
static void gt_expect_untouched(struct kunit *test, struct gt_env *e)
{
	struct gt_fake *gt_fake = test->priv;
	u32 i;

	for (i = 0; i < e->dst->n_pdds; i++) {
		KUNIT_EXPECT_EQ(test, e->dst->pdds[i]->user_gpu_id,
				e->old_ids[i]);
		KUNIT_EXPECT_NULL(test, e->dst->pdds[i]->drm_file);
		KUNIT_EXPECT_FALSE(test, e->dst->pdds[i]->runtime_inuse);
		KUNIT_EXPECT_EQ(test,
				e->dst->pdds[i]->qpd.sh_hidden_private_base, 0);
	}
	KUNIT_EXPECT_EQ(test, gt_fake->vms, 0);
	KUNIT_EXPECT_EQ(test, gt_fake->refs, 0);
	KUNIT_EXPECT_NULL(test, e->dst->kgd_process_info);
}

/*
 * The image GPUs go where the map and their ids say; the two the BOs
 * need get their VMs on the render nodes given, with a runtime PM
 * reference each, and the MMU notifications are blocked. Every GPU shows
 * the image's id, and the GPU whose own id the image gives away takes
 * the id a placed GPU gave up. The unwind gives it all back, and frees
 * only the doorbells the restore made.
 */
static void gt_test_restore_and_unwind(struct kunit *test)
{
	struct kfd_criu_gpus_restore *st;
	struct gt_env *e = gt_env_new(test);
	struct gt_fake *gt_fake = test->priv;
	struct kfd_process *p = e->dst;
	void *bell = p;	/* a key, never dereferenced */

	st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, st);
	p->pdds[0]->qpd.proc_doorbells = bell;

	KUNIT_ASSERT_EQ(test, gt_restore(e, BIT(0) | BIT(2), st), 0);
	KUNIT_EXPECT_EQ(test, st->target[0], 1);
	KUNIT_EXPECT_EQ(test, st->target[1], 2);
	KUNIT_EXPECT_EQ(test, st->target[2], 0);
	KUNIT_EXPECT_EQ(test, st->acquired, BIT_ULL(0) | BIT_ULL(1));
	KUNIT_EXPECT_EQ(test, st->bound, BIT_ULL(0) | BIT_ULL(1));
	KUNIT_EXPECT_TRUE(test, st->mmu_blocked);
	KUNIT_EXPECT_TRUE(test, gt_mmu_blocked(p));
	KUNIT_EXPECT_EQ(test, gt_fake->vms, 2);
	KUNIT_EXPECT_EQ(test, gt_fake->refs, 2);
	KUNIT_EXPECT_NULL(test, p->pdds[2]->drm_file);
	KUNIT_EXPECT_EQ(test, p->pdds[0]->user_gpu_id, 0x1002);
	KUNIT_EXPECT_EQ(test, p->pdds[1]->user_gpu_id, 0x1000);
	KUNIT_EXPECT_EQ(test, p->pdds[2]->user_gpu_id, 0x1001);
	KUNIT_EXPECT_EQ(test, p->pdds[3]->user_gpu_id, 0x2001);
	KUNIT_EXPECT_PTR_EQ(test, kfd_criu_gpus_pdd(p, st, 0), p->pdds[1]);
	/* Each placed GPU has the scratch backing VA of its image GPU */
	KUNIT_EXPECT_EQ(test, p->pdds[0]->qpd.sh_hidden_private_base, 0x30000);
	KUNIT_EXPECT_EQ(test, p->pdds[1]->qpd.sh_hidden_private_base, 0x10000);
	KUNIT_EXPECT_EQ(test, p->pdds[2]->qpd.sh_hidden_private_base, 0);
	KUNIT_EXPECT_EQ(test, p->pdds[3]->qpd.sh_hidden_private_base, 0);

	/* As a restored queue would: doorbells on a GPU that had none */
	p->pdds[1]->qpd.proc_doorbells = bell;
	gt_unwind(p, st);
	KUNIT_EXPECT_EQ(test, gt_fake->doorbells_freed, 1);
	KUNIT_EXPECT_NULL(test, p->pdds[1]->qpd.proc_doorbells);
	KUNIT_EXPECT_PTR_EQ(test, p->pdds[0]->qpd.proc_doorbells, bell);
	KUNIT_EXPECT_EQ(test, st->acquired, 0);
	KUNIT_EXPECT_FALSE(test, st->mmu_blocked);
	p->pdds[0]->qpd.proc_doorbells = NULL;
	gt_expect_untouched(test, e);

	/* A GPU that already had its runtime reference keeps it */
	p->pdds[1]->runtime_inuse = true;
	KUNIT_ASSERT_EQ(test, gt_restore(e, BIT(0), st), 0);
	KUNIT_EXPECT_EQ(test, st->bound, BIT_ULL(0));
	gt_unwind(p, st);
	KUNIT_EXPECT_TRUE(test, p->pdds[1]->runtime_inuse);
	KUNIT_EXPECT_EQ(test, gt_fake->vms, 0);
	KUNIT_EXPECT_EQ(test, gt_fake->refs, 0);
}

/*
 * A BO the BO unwind could not free still uses its GPU's VM: the unwind
 * keeps every VM then, still gives the ids back, and unblocks the MMU
 * notifications the restore blocked.
 */
static void gt_test_unwind_keeps_vms_of_bos(struct kunit *test)
{
	struct kfd_criu_gpus_restore *st;
	struct gt_env *e = gt_env_new(test);
	struct gt_fake *gt_fake = test->priv;
	struct kfd_process *p = e->dst;
	int handle;

	st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, st);
	KUNIT_ASSERT_EQ(test, gt_restore(e, 0, st), 0);
	handle = idr_alloc(&p->pdds[1]->alloc_idr, p, 0, 0, GFP_KERNEL);
	KUNIT_ASSERT_GE(test, handle, 0);
	gt_unwind(p, st);
	KUNIT_EXPECT_EQ(test, gt_fake->vms, 2);
	KUNIT_EXPECT_EQ(test, gt_fake->refs, 2);
	KUNIT_EXPECT_TRUE(test, p->pdds[0]->runtime_inuse);
	KUNIT_EXPECT_TRUE(test, p->pdds[1]->runtime_inuse);
	KUNIT_EXPECT_NOT_NULL(test, p->kgd_process_info);
	/* The process runs on with the VMs: its userptrs follow the CPU */
	KUNIT_EXPECT_FALSE(test, gt_mmu_blocked(p));
	KUNIT_EXPECT_EQ(test, p->pdds[1]->user_gpu_id, e->old_ids[1]);
	KUNIT_EXPECT_EQ(test, p->pdds[3]->user_gpu_id, e->old_ids[3]);

	/*
	 * Process teardown releases what stayed, through its own paths;
	 * here the unwind does, once the BO is gone.
	 */
	idr_remove(&p->pdds[1]->alloc_idr, handle);
	st->acquired = BIT_ULL(0) | BIT_ULL(1);
	st->bound = st->acquired;
	gt_unwind(p, st);
	gt_expect_untouched(test, e);
}

/*
 * Every VM acquisition and runtime PM bind of a restore fails in turn: the
 * restore fails with its error and the target is left as it was. A taken
 * VM, a GPU the BOs need without a descriptor and the descriptor of
 * another GPU are refused before anything is acquired.
 */
static void gt_test_restore_unwinds(struct kunit *test)
{
	struct kfd_criu_gpus_restore *st;
	struct gt_env *e = gt_env_new(test);
	struct gt_fake *gt_fake = test->priv;
	struct kfd_process *p = e->dst;
	unsigned int points;
	int ret;

	st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, st);
	for (points = 0; points < GT_MAX_POINTS; points++) {
		gt_fake->calls = 0;
		gt_fake->fail_at = points;
		ret = gt_restore(e, BIT(0) | BIT(2), st);
		if (!ret)
			break;
		KUNIT_EXPECT_EQ_MSG(test, ret, -EIO, "call %u", points);
		gt_expect_untouched(test, e);
	}
	KUNIT_ASSERT_EQ(test, ret, 0);
	gt_unwind(p, st);
	gt_fake->fail_at = UINT_MAX;
	KUNIT_EXPECT_EQ(test, points, 4);
	kunit_info(test, "%u failure points, each unwound\n", points);

	p->pdds[1]->drm_file = gt_fake->file_key;
	KUNIT_EXPECT_EQ(test, gt_restore(e, BIT(0), st), -EBUSY);
	KUNIT_EXPECT_EQ(test, gt_fake->vms, 0);
	KUNIT_EXPECT_PTR_EQ(test, p->pdds[1]->drm_file, gt_fake->file_key);
	p->pdds[1]->drm_file = NULL;
	gt_expect_untouched(test, e);

	/* Image GPU 1 has no descriptor */
	KUNIT_EXPECT_EQ(test, gt_restore(e, BIT(1), st), -EINVAL);
	gt_expect_untouched(test, e);

	e->map[1].drm_fd = GT_FD_BASE + 4;
	KUNIT_EXPECT_EQ(test, gt_restore(e, 0, st), -EINVAL);
	gt_expect_untouched(test, e);
}

/**
 * struct gt_vm - a render node whose VM the real kfd_process_device_init_vm()
 *	sets up for the only GPU of a process
 * @p: the process
 * @pdd: its per-GPU data
 * @fpriv: the render node's amdgpu file data, with the VM
 * @file: the render node's file
 * @created: process infos the fake acquisition created
 * @info: the last of them, freed or not
 * @given: the process info the last acquisition was given
 * @fail_pasid: the VM has no PASID, so the setup fails at its last step
 *	with -EINVAL
 */
struct gt_vm {
	struct kfd_process *p;
	struct kfd_process_device *pdd;
	struct amdgpu_fpriv *fpriv;
	struct file *file;
	unsigned int created;
	struct amdkfd_process_info *info;
	struct amdkfd_process_info *given;
	bool fail_pasid;
};

static void gt_vm_idle_work(struct work_struct *work)
{
}

/* A process info as amdgpu creates it with the first VM of a process */
static struct amdkfd_process_info *gt_vm_info_new(void)
{
	struct amdkfd_process_info *info;

	info = kzalloc_obj(*info, GFP_KERNEL);
	if (!info)
		return NULL;
	info->eviction_fence =
		amdgpu_amdkfd_fence_create(dma_fence_context_alloc(1),
					   current->mm, KFD_CONTEXT_ID_PRIMARY);
	if (!info->eviction_fence) {
		kfree(info);
		return NULL;
	}
	mutex_init(&info->lock);
	mutex_init(&info->notifier_lock);
	INIT_LIST_HEAD(&info->vm_list_head);
	INIT_LIST_HEAD(&info->kfd_bo_list);
	INIT_LIST_HEAD(&info->userptr_valid_list);
	INIT_LIST_HEAD(&info->userptr_inval_list);
	INIT_DELAYED_WORK(&info->restore_userptr_work, gt_vm_idle_work);
	info->pid = get_task_pid(current->group_leader, PIDTYPE_PID);
	return info;
}

/*
 * As amdgpu, but for the page directory: the first VM of a process
 * creates its process info, whose eviction fence the process gets; a
 * later VM joins, under its lock, the process info it is given, so a
 * freed one would be used here just as amdgpu uses it.
 */
static int gt_vm_acquire(struct amdgpu_device *adev, struct amdgpu_vm *avm,
			 void **process_info, struct dma_fence **ef)
{
	struct gt_vm *vm = kunit_get_current_test()->priv;
	struct amdkfd_process_info *info = *process_info;

	vm->given = info;
	if (avm->process_info)
		return -EINVAL;
	if (!info) {
		info = gt_vm_info_new();
		if (!info)
			return -ENOMEM;
		vm->info = info;
		vm->created++;
		*process_info = info;
	}
	mutex_lock(&info->lock);
	list_add_tail(&avm->vm_list_node, &info->vm_list_head);
	info->n_vms++;
	if (ef)
		*ef = dma_fence_get(&info->eviction_fence->base);
	mutex_unlock(&info->lock);
	avm->process_info = info;
	return 0;
}

/* As process teardown: the VM goes, and the process info with the last */
static void gt_vm_release(void *data)
{
	struct gt_vm *vm = data;
	struct kfd_process *p = vm->p;

	amdgpu_amdkfd_gpuvm_destroy_cb(vm->pdd->dev->adev, &vm->fpriv->vm);
	p->kgd_process_info = NULL;
	dma_fence_put(rcu_replace_pointer(p->ef, NULL, true));
	amdgpu_vm_put_task_info(vm->fpriv->vm.task_info);
}

static struct gt_vm *gt_vm_new(struct kunit *test)
{
	struct kfd_process_device *pdd;
	struct drm_file *drm_file;
	struct kfd_node *node;
	unsigned long addr;
	struct gt_vm *vm;

	/* The eviction fence takes the address space of its process */
	addr = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(addr));
	KUNIT_ASSERT_NOT_NULL(test, current->mm);
	vm = kunit_kzalloc(test, sizeof(*vm), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, vm);
	vm->fpriv = kunit_kzalloc(test, sizeof(*vm->fpriv), GFP_KERNEL);
	vm->file = kunit_kzalloc(test, sizeof(*vm->file), GFP_KERNEL);
	drm_file = kunit_kzalloc(test, sizeof(*drm_file), GFP_KERNEL);
	vm->p = kunit_kzalloc(test, sizeof(*vm->p), GFP_KERNEL);
	pdd = kunit_kzalloc(test, sizeof(*pdd), GFP_KERNEL);
	node = kunit_kzalloc(test, sizeof(*node), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, vm->fpriv);
	KUNIT_ASSERT_NOT_NULL(test, vm->file);
	KUNIT_ASSERT_NOT_NULL(test, drm_file);
	KUNIT_ASSERT_NOT_NULL(test, vm->p);
	KUNIT_ASSERT_NOT_NULL(test, pdd);
	KUNIT_ASSERT_NOT_NULL(test, node);
	node->kfd = kunit_kzalloc(test, sizeof(*node->kfd), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, node->kfd);
	node->adev = vzalloc(sizeof(*node->adev));
	KUNIT_ASSERT_NOT_NULL(test, node->adev);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, gt_free_adev,
							node->adev), 0);

	/* The SMI process events of the VM setup read both */
	INIT_LIST_HEAD(&node->smi_clients);
	vm->fpriv->vm.task_info = kzalloc_obj(*vm->fpriv->vm.task_info,
					      GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, vm->fpriv->vm.task_info);
	kref_init(&vm->fpriv->vm.task_info->refcount);

	/* A render node of amdgpu, as amdgpu_file_to_fpriv() checks */
	drm_file->driver_priv = vm->fpriv;
	vm->file->f_op = amdgpu_partition_driver.fops;
	vm->file->private_data = drm_file;
	mutex_init(&vm->p->mutex);
	INIT_DELAYED_WORK(&vm->p->eviction_work, gt_vm_idle_work);
	INIT_DELAYED_WORK(&vm->p->restore_work, gt_vm_idle_work);
	pdd->dev = node;
	pdd->process = vm->p;
	vm->p->pdds[0] = pdd;
	vm->p->n_pdds = 1;
	vm->pdd = pdd;

	test->priv = vm;
	kunit_activate_static_stub(test, amdgpu_amdkfd_gpuvm_acquire_process_vm,
				   gt_vm_acquire);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, gt_vm_release,
							vm), 0);
	return vm;
}

static int gt_vm_init(struct gt_vm *vm)
{
	int ret;

	/* The last check of the setup, after the IB and CWSR memory */
	vm->fpriv->vm.pasid = vm->fail_pasid ? 0 : 0x8001;
	mutex_lock(&vm->p->mutex);
	ret = kfd_process_device_init_vm(vm->pdd, vm->file);
	mutex_unlock(&vm->p->mutex);
	return ret;
}

/*
 * The setup of the first VM of a process fails after amdgpu created the
 * process info for it, at the last step: its error path frees that
 * process info, as the VM was its only one, and the process must forget
 * it and its eviction fence. A retry then creates a process info of its
 * own, and the process takes its eviction fence, rather than joining the
 * freed one (which KASAN would report in gt_vm_acquire()).
 */
static void gt_test_failed_first_vm_forgets_process_info(struct kunit *test)
{
	struct gt_vm *vm = gt_vm_new(test);
	struct kfd_process *p = vm->p;
	struct dma_fence *ef;

	vm->fail_pasid = true;
	KUNIT_ASSERT_EQ(test, gt_vm_init(vm), -EINVAL);
	KUNIT_ASSERT_EQ(test, vm->created, 1);
	KUNIT_ASSERT_NULL_MSG(test, p->kgd_process_info,
			      "the process still points to the process info its failed setup freed");
	ef = rcu_access_pointer(p->ef);
	KUNIT_ASSERT_NULL_MSG(test, ef,
			      "the process still holds the eviction fence of the process info its failed setup freed");
	KUNIT_EXPECT_NULL(test, vm->pdd->drm_priv);
	KUNIT_EXPECT_NULL(test, vm->pdd->drm_file);
	KUNIT_EXPECT_NULL(test, vm->fpriv->vm.process_info);

	vm->fail_pasid = false;
	KUNIT_ASSERT_EQ(test, gt_vm_init(vm), 0);
	KUNIT_EXPECT_NULL(test, vm->given);
	KUNIT_EXPECT_EQ(test, vm->created, 2);
	KUNIT_EXPECT_PTR_EQ(test, p->kgd_process_info, (void *)vm->info);
	ef = rcu_access_pointer(p->ef);
	KUNIT_EXPECT_PTR_EQ(test, ef, &vm->info->eviction_fence->base);
	KUNIT_EXPECT_PTR_EQ(test, vm->pdd->drm_file, vm->file);
}

/**
 * struct gt_change - a change of an image GPU record
 * @name: for messages
 * @off: offset of the field
 * @size: 4 or 8 bytes
 * @delta: added to the field
 * @ret: what the placement returns for the changed record
 */
struct gt_change {
	const char *name;
	u32 off;
	u32 size;
	s64 delta;
	int ret;
};

#define GT_REC(f)	offsetof(struct kfd_criu_gpu_rec, f)

static const struct gt_change gt_changes[] = {
	{ "gfx_target_version", GT_REC(gfx_target_version), 4, 100, -ENODEV },
	{ "gfx stepping", GT_REC(gfx_target_version), 4, 1, -ENODEV },
	{ "device_id", GT_REC(device_id), 4, 1, -ENODEV },
	{ "revision_id", GT_REC(revision_id), 4, 1, -ENODEV },
	{ "num_xcc", GT_REC(num_xcc), 4, 1, -ENODEV },
	{ "partition_mode", GT_REC(partition_mode), 4, 1, -ENODEV },
	{ "cwsr_size", GT_REC(cwsr_size), 4, 4096, -ENODEV },
	{ "ctl_stack_size", GT_REC(ctl_stack_size), 4, 4096, -ENODEV },
	{ "flags", GT_REC(flags), 4, KFD_CRIU_GPU_NO_CWSR, -ENODEV },
	{ "more vram", GT_REC(vram_size), 8, 1, -ENODEV },
	{ "less vram", GT_REC(vram_size), 8, -1, 0 },
	{ "newer mec", GT_REC(mec_fw_version), 4, 1, -ENODEV },
	{ "older mec", GT_REC(mec_fw_version), 4, -1, 0 },
	{ "newer sdma", GT_REC(sdma_fw_version), 4, 1, -ENODEV },
	{ "older sdma", GT_REC(sdma_fw_version), 4, -1, 0 },
};

static void gt_change_field(struct kfd_criu_gpu_rec *rec,
			    const struct gt_change *c)
{
	void *field = (u8 *)rec + c->off;

	if (c->size == 8)
		put_unaligned_le64(get_unaligned_le64(field) + c->delta, field);
	else
		put_unaligned_le32(get_unaligned_le32(field) + c->delta, field);
}

/*
 * Every field of an image GPU but its id must match the GPU it goes to,
 * except that the local GPU may have more VRAM and newer firmware: a
 * mismatch fails the placement with -ENODEV and changes nothing.
 */
static void gt_test_map_refuses(struct kunit *test)
{
	struct kfd_criu_gpus_restore *st;
	struct gt_env *e = gt_env_new(test);
	const struct gt_change *c;
	struct kfd_criu_gpu_rec saved;
	u32 i;

	st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, st);
	for (i = 0; i < ARRAY_SIZE(gt_changes); i++) {
		c = &gt_changes[i];
		saved = e->img.gpus[1];
		gt_change_field(&e->img.gpus[1], c);
		KUNIT_EXPECT_EQ_MSG(test, gt_restore(e, 0, st), c->ret, "%s",
				    c->name);
		if (!c->ret)
			gt_unwind(e->dst, st);
		gt_expect_untouched(test, e);
		e->img.gpus[1] = saved;
	}

	/* A map entry for an image GPU the image does not have */
	e->map[1].image_gpu_id = 0x1003;
	KUNIT_EXPECT_EQ(test, gt_restore(e, 0, st), -EINVAL);
	gt_expect_untouched(test, e);
}

/*
 * An MI300A of ASIC revision 0 as kgd2kfd_probe() (kfd_device.c)
 * described it before upstream commit daafa303d19f ("drm/amdkfd: Drop
 * workaround for GC v9.4.3 revID 0"): a GC 9.4.3 was "adev->rev_id >= 1 ?
 * 90402 : adev->flags & AMD_IS_APU ? 90400 : 90401"; since, every GC
 * 9.4.3 and 9.4.4 is 90402 (and amdgpu_device_ip_early_init() refuses a
 * GC 9.4.3 of revision 0). The save area sizes are the same under both
 * numbers (kfd_queue.c compared "gfxv / 100 * 100" with 90400 before, and
 * "gfxv" with 90402 since). Here they are
 * kfd_queue_ctx_save_restore_size()'s for 38 CUs an XCC and 40 waves a
 * CU.
 */
static const struct gt_desc gt_mi300a_rev0 = {
	.gfx = 90400, .device = 0x74a0, .rev = 0, .xccs = 6,
	.mode = AMDGPU_SPX_PARTITION_MODE, .vram = 128ULL << 30,
	.cwsr = 0x1621000, .ctl_stack = 0x3000, .mec = 151, .sdma = 19,
};

/* Places @img on @p's GPUs through @map and acquires the VM of GPU 0. */
static int gt_place(struct kfd_process *p,
		    const struct kfd_criu_gpus_image *img,
		    struct kfd_criu_gpu_map *map,
		    struct kfd_criu_gpus_restore *st)
{
	int ret;

	memset(st, 0, sizeof(*st));
	st->map = map;
	st->num_map = 1;
	mutex_lock(&p->mutex);
	ret = kfd_criu_gpus_map(p, img, st);
	if (!ret)
		ret = kfd_criu_gpus_restore(p, img, BIT(0), st);
	mutex_unlock(&p->mutex);
	return ret;
}

/* Why the GPU of @p's per-GPU data 0 cannot take image GPU 0, or NULL */
static const char *gt_misfit(struct kunit *test, struct kfd_process *p,
			     const struct kfd_criu_gpus_image *img)
{
	struct kfd_criu_gpu_rec *local;
	const char *why;

	KUNIT_ASSERT_EQ(test, kfd_criu_local_gpus(p, &local), 0);
	why = kfd_criu_gpu_incompatible(&img->gpus[0], &local[0]);
	kfree(local);
	return why;
}

/*
 * An image survives a kernel update that renumbers its GPU. The image
 * says 90400; the same GPU, under the same gpu_id, now says 90402 (the
 * device id and revision, which identify the silicon, are the same), and
 * the image is placed on it and gets its VM. Any other gfx target
 * version, another stepping (90403) included, names another ISA: the
 * placement fails with -ENODEV, naming gfx_target_version.
 */
static void gt_test_gfx_stepping_renumbered(struct kunit *test)
{
	static const u32 nodes[] = { 0 };
	static const u32 other_gfx[] = { 90010, 90403, 90500 };
	struct kfd_criu_test_stream *s = kfd_criu_test_stream_new(test);
	struct kfd_criu_gpu_map map = { .local_gpu_id = 0x1000,
					.drm_fd = GT_FD_BASE };
	struct kfd_criu_gpus_restore *st;
	struct kfd_criu_gpus_image img;
	struct gt_fake *gt_fake;
	struct gt_env *e;
	const char *why;
	u32 i;

	e = kunit_kzalloc(test, sizeof(*e), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, gt_env_release,
							e), 0);
	st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, st);
	gt_fake = gt_fake_new(test);
	gt_node_new(test, 0x1000, &gt_mi300a_rev0);
	e->src = gt_process(test, nodes, ARRAY_SIZE(nodes));
	KUNIT_ASSERT_EQ(test, gt_snapshot(e->src, &img), 0);
	KUNIT_ASSERT_EQ(test, gt_write(s, &img), 0);
	kfd_criu_gpus_image_free(&img);
	KUNIT_ASSERT_EQ(test, gt_read_back(s, 1, &e->img), 0);
	KUNIT_ASSERT_EQ(test, le32_to_cpu(e->img.gpus[0].gfx_target_version),
			90400);

	/* The kernel update */
	gt_fake->props[0].gfx_target_version = 90402;
	e->dst = gt_process(test, nodes, ARRAY_SIZE(nodes));
	e->old_ids[0] = e->dst->pdds[0]->user_gpu_id;
	KUNIT_EXPECT_NULL(test, gt_misfit(test, e->dst, &e->img));
	KUNIT_ASSERT_EQ(test, gt_place(e->dst, &e->img, &map, st), 0);
	KUNIT_EXPECT_PTR_EQ(test, kfd_criu_gpus_pdd(e->dst, st, 0),
			    e->dst->pdds[0]);
	KUNIT_EXPECT_EQ(test, e->dst->pdds[0]->user_gpu_id, 0x1000);
	KUNIT_EXPECT_EQ(test, gt_fake->vms, 1);
	KUNIT_EXPECT_EQ(test, gt_fake->refs, 1);
	gt_unwind(e->dst, st);
	gt_expect_untouched(test, e);

	for (i = 0; i < ARRAY_SIZE(other_gfx); i++) {
		gt_fake->props[0].gfx_target_version = other_gfx[i];
		KUNIT_EXPECT_EQ_MSG(test, gt_place(e->dst, &e->img, &map, st),
				    -ENODEV, "gfx_target_version %u",
				    other_gfx[i]);
		why = gt_misfit(test, e->dst, &e->img);
		KUNIT_ASSERT_NOT_NULL(test, why);
		KUNIT_EXPECT_STREQ(test, why, "gfx_target_version");
		gt_expect_untouched(test, e);
	}
}

static const struct kfd_criu_test_field gt_fields[] = {
	{ "gpu_id", GT_REC(gpu_id), 4 },
	{ "gfx_target_version", GT_REC(gfx_target_version), 4 },
	{ "device_id", GT_REC(device_id), 4 },
	{ "revision_id", GT_REC(revision_id), 4 },
	{ "num_xcc", GT_REC(num_xcc), 4 },
	{ "partition_mode", GT_REC(partition_mode), 4 },
	{ "vram_size", GT_REC(vram_size), 8 },
	{ "cwsr_size", GT_REC(cwsr_size), 4 },
	{ "ctl_stack_size", GT_REC(ctl_stack_size), 4 },
	{ "mec_fw_version", GT_REC(mec_fw_version), 4 },
	{ "sdma_fw_version", GT_REC(sdma_fw_version), 4 },
	{ "flags", GT_REC(flags), 4 },
	{ "scratch_backing_va", GT_REC(scratch_backing_va), 4 },
};

/* An accepted image: every GPU shows the id of the image GPU on it. */
static void gt_expect_placed(struct kunit *test, struct gt_env *e,
			     const struct kfd_criu_gpus_image *img,
			     const struct kfd_criu_gpus_restore *st)
{
	u32 i;

	for (i = 0; i < img->num_gpus; i++)
		KUNIT_EXPECT_EQ(test,
				kfd_criu_gpus_pdd(e->dst, st, i)->user_gpu_id,
				le32_to_cpu(img->gpus[i].gpu_id));
}

/**
 * struct gt_sweep - what each hostile GPU image is restored with
 * @e: the target
 * @s: the stream
 * @st: the placement state a restore fills
 */
struct gt_sweep {
	struct gt_env *e;
	struct kfd_criu_test_stream *s;
	struct kfd_criu_gpus_restore *st;
};

/*
 * Reads the hostile image and restores it on the target. Refused, it must
 * be with a documented errno; accepted, it must be placed as its records
 * say and unwind. Either way the target is left as it was.
 */
static bool gt_try_image(struct kunit *test, void *ctx, const char *what)
{
	struct gt_sweep *g = ctx;
	struct kfd_criu_gpus_image img;
	struct gt_env *e = g->e;
	int ret;

	ret = gt_read_back(g->s, e->img.num_gpus, &img);
	if (!ret) {
		swap(img, e->img);
		ret = gt_restore(e, BIT(0) | BIT(2), g->st);
		swap(img, e->img);
	}
	if (!ret) {
		gt_expect_placed(test, e, &img, g->st);
		gt_unwind(e->dst, g->st);
	}
	KUNIT_EXPECT_TRUE_MSG(test, !ret || kfd_criu_test_documented(ret),
			      "%s: undocumented error %d", what, ret);
	kfd_criu_gpus_image_free(&img);
	gt_expect_untouched(test, e);
	return !ret;
}

/*
 * Issue 22's sweep for GPU records: each field of each GPU record of an
 * image is set to each boundary value, with a good CRC, and the image
 * goes through the real collection, validation, placement and restore.
 */
static void gt_test_hostile_gpu_records(struct kunit *test)
{
	struct kfd_criu_test_stream *s = kfd_criu_test_stream_new(test);
	struct gt_env *e = gt_env_new(test);
	struct kfd_criu_test_sweep sw;
	struct gt_sweep g;
	u32 n;

	g = (struct gt_sweep){ .e = e, .s = s };
	g.st = kunit_kzalloc(test, sizeof(*g.st), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, g.st);
	KUNIT_ASSERT_EQ(test, gt_write(s, &e->img), 0);
	sw = (struct kfd_criu_test_sweep){ .s = s, .try_image = gt_try_image,
					   .ctx = &g };
	for (n = 0; n < e->img.num_gpus; n++)
		kfd_criu_test_sweep_record(test, &sw, KFD_CRIU_REC_GPU, n,
					   gt_fields, ARRAY_SIZE(gt_fields));
	kfd_criu_test_sweep_report(test, &sw);
}

static struct kunit_case kfd_criu_placement_test_cases[] = {
	KUNIT_CASE(gt_test_snapshot),
	KUNIT_CASE(gt_test_restore_and_unwind),
	KUNIT_CASE(gt_test_unwind_keeps_vms_of_bos),
	KUNIT_CASE(gt_test_restore_unwinds),
	KUNIT_CASE(gt_test_failed_first_vm_forgets_process_info),
	KUNIT_CASE(gt_test_map_refuses),
	KUNIT_CASE(gt_test_gfx_stepping_renumbered),
	KUNIT_CASE(gt_test_hostile_gpu_records),
	{}
};

static struct kunit_suite kfd_criu_placement_suite = {
	.name = "kfd_criu_placement",
	.test_cases = kfd_criu_placement_test_cases,
};

kunit_test_suite(kfd_criu_placement_suite);

/* The seams of kfd_criu_gpus.c, for the ops-level tests of kfd_criu.c */
#include "kfd_criu_test_seams.h"

const struct kfd_criu_gpus_seams kfd_criu_gpus_seams = {
	.node_props = kfd_criu_node_props,
	.release_vm = kfd_criu_release_vm,
	.init_vm = kfd_criu_init_vm,
	.bind_gpu = kfd_criu_bind_gpu,
	.put_gpu = kfd_criu_put_gpu,
};
