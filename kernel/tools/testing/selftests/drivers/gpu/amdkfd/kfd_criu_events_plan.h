/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DOC: the events process of the CRIU image-mode selftest
 *
 * What kfd_criu_image_test dumps and restores: a process that creates
 * events of each kind, signals some, maps the event page and writes into
 * it (populate_events()); the checks a restored process runs on what it
 * got back; the image layout the test edits to build bad images; and the
 * scaffolding that dumps such a process as CRIU does and restores its
 * image into a fresh one. Include after kselftest_harness.h and
 * kfd_criu_util.h.
 */
#ifndef KFD_CRIU_EVENTS_PLAN_H
#define KFD_CRIU_EVENTS_PLAN_H

/* What CREATE_EVENT returns as the mmap offset of the event page */
#define EVENT_PAGE_OFFSET	(2ULL << 62)
#define EVENT_PAGE_SIZE		(KFD_SIGNAL_EVENT_LIMIT * 8)
#define UNSIGNALED		UINT64_MAX
#define FIRST_NONSIGNAL_ID	0x40000000U

/* The image stream format (kfd_criu_image.h), for the corruption tests */
#define IMAGE_HEADER_SIZE	88
#define IMAGE_HEADER_CRC_OFF	84
#define IMAGE_VERSION_OFF	8
#define RECORD_HEADER_SIZE	12
#define RECORD_OVERHEAD		16
#define REC_END			1
#define REC_COMPAT		2
#define REC_PROCESS		3
#define REC_SIGNAL_PAGE		4
#define REC_EVENT		5
#define REC_GPU			6
#define RECORD_MANDATORY	1
#define PROCESS_NUM_EVENTS_OFF	20
#define EVENT_AGE_OFF		16
/* KFD_CRIU_MAX_EVENT_AGE: the largest event age an image may carry */
#define MAX_EVENT_AGE		0x4000000000000000ULL
#define END_RECORD_SIZE		(RECORD_OVERHEAD + 16)
#define END_PAYLOAD_BYTES_OFF	8
/* struct kfd_criu_gpu_rec: its size and the offsets of its fields */
#define GPU_REC_SIZE		56
#define GPU_GFX_VERSION_OFF	4
#define GPU_DEVICE_ID_OFF	8
#define GPU_NUM_XCC_OFF		16
#define GPU_VRAM_SIZE_OFF	24
#define GPU_CWSR_SIZE_OFF	32
#define GPU_CTL_STACK_SIZE_OFF	36
#define GPU_MEC_FW_OFF		40
#define GPU_SDMA_FW_OFF		44
/* A gpu_id no GPU of the test VM has */
#define ABSENT_GPU_ID		0x1234

/* struct kfd_ioctl_criu_args as binaries built without image mode know it */
struct criu_args_v1_17 {
	__u64 devices;
	__u64 bos;
	__u64 priv_data;
	__u64 priv_data_size;
	__u32 num_devices;
	__u32 num_bos;
	__u32 num_objects;
	__u32 pid;
	__u32 op;
	__u32 tail_padding;
};

#define AMDKFD_IOC_CRIU_OP_V1_17 AMDKFD_IOWR(0x22, struct criu_args_v1_17)

/**
 * struct events_plan - the events a dumped process holds
 * @id: event ids, in creation order; @id[GAP] was destroyed again
 * @page_slots: slot indices the process wrote into its event page
 * @xnack: the process's XNACK mode, -1 where userspace has no say in it
 */
struct events_plan {
	__u32 id[7];
	__u32 page_slots[4];
	__s32 xnack;
};

enum {
	AUTO_SET2,
	MANUAL_SET,
	MANUAL_RESET,
	AUTO_IDLE,
	GAP,
	MANUAL_IDLE,
	MEMORY,
};

/* Expected signaled state and age, per entry of &struct events_plan */
static const int plan_signaled[] = { 1, 1, 0, 0, -1, 0, -1 };
static const __u64 plan_age[] = { 3, 2, 2, 1, 0, 1, 0 };

static int create_event(int fd, __u32 type, bool auto_reset, __u32 *id)
{
	struct kfd_ioctl_create_event_args args = {
		.event_type = type,
		.auto_reset = auto_reset,
	};
	int ret;

	ret = kfd_ioctl(fd, AMDKFD_IOC_CREATE_EVENT, &args);
	*id = args.event_id;
	if (!ret && type == KFD_IOC_EVENT_SIGNAL &&
	    args.event_page_offset != EVENT_PAGE_OFFSET)
		return -EPROTO;
	return ret;
}

static int event_op(int fd, unsigned long cmd, __u32 id)
{
	struct kfd_ioctl_set_event_args args = { .event_id = id };

	return kfd_ioctl(fd, cmd, &args);
}

/*
 * Waits for one event without blocking. With @age non-zero the kernel
 * completes the wait when the event's age differs and returns the age.
 */
static int wait_event(int fd, __u32 id, __u64 *age, __u32 *result)
{
	struct kfd_event_data data = { .event_id = id };
	struct kfd_ioctl_wait_events_args args = {
		.events_ptr = (uintptr_t)&data,
		.num_events = 1,
		.timeout = 0,
	};
	int ret;

	if (age)
		data.signal_event_data.last_event_age = *age;
	ret = kfd_ioctl(fd, AMDKFD_IOC_WAIT_EVENTS, &args);
	*result = args.wait_result;
	if (age)
		*age = data.signal_event_data.last_event_age;
	return ret;
}

/* The XNACK mode of a fresh process, -1 where userspace has no say in it */
static int xnack_fresh = -1;

/*
 * Probed once, before any test forks, in the test program's own process:
 * a later -EPERM where the kernel had answered is a failure, not taken
 * for a kernel without SVM.
 */
__attribute__((constructor)) static void xnack_probe(void)
{
	xnack_fresh = kfd_xnack_fresh_mode();
	if (xnack_fresh < 0)
		fprintf(stderr, "# no XNACK control (no CONFIG_HSA_AMD_SVM): not checked\n");
}

/* The process of @fd is in XNACK mode @mode, or the mode is -1 (no say) */
static bool xnack_is(int fd, int mode)
{
	return mode < 0 || xnack_fresh < 0 || kfd_xnack_mode(fd, -1) == mode;
}

/*
 * Puts the process of @fd in the XNACK mode a fresh process lacks, where
 * its GPUs allow it (enabling XNACK on GPUs that cannot retry fails with
 * -EPERM: the mode stays), so that a restore that lost it shows.
 * Returns the mode, or -1 where userspace has no say in it.
 */
static int xnack_pick(int fd)
{
	int want = !xnack_fresh;

	if (xnack_fresh < 0)
		return -1;
	if (kfd_xnack_mode(fd, want) == want)
		return want;
	return kfd_xnack_mode(fd, -1);
}

static int runtime_enable(int fd, __u64 r_debug)
{
	struct kfd_ioctl_runtime_enable_args args = {
		.r_debug = r_debug,
		.mode_mask = KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK,
	};

	return kfd_ioctl(fd, AMDKFD_IOC_RUNTIME_ENABLE, &args);
}

static __u64 *map_event_page(int fd)
{
	void *page = mmap(NULL, EVENT_PAGE_SIZE, PROT_READ | PROT_WRITE,
			  MAP_SHARED, fd, (off_t)EVENT_PAGE_OFFSET);

	return page == MAP_FAILED ? NULL : page;
}

static __u64 slot_pattern(__u32 slot)
{
	return 0x5a5a000000000000ULL | slot;
}

/* What the event page of a restored process must hold. */
static __u64 expected_slot(const struct events_plan *plan, __u32 slot)
{
	unsigned int i;

	for (i = 0; i < 4; i++)
		if (plan->page_slots[i] == slot)
			return slot_pattern(slot);
	return UNSIGNALED;
}

/* Builds the plan's events and page contents in the calling process. */
static void populate_events(int fd, struct events_plan *plan)
{
	__u64 *page;
	unsigned int i;

	CHILD_CHECK(!create_event(fd, KFD_IOC_EVENT_SIGNAL, true, &plan->id[AUTO_SET2]));
	CHILD_CHECK(!create_event(fd, KFD_IOC_EVENT_SIGNAL, false, &plan->id[MANUAL_SET]));
	CHILD_CHECK(!create_event(fd, KFD_IOC_EVENT_SIGNAL, false, &plan->id[MANUAL_RESET]));
	CHILD_CHECK(!create_event(fd, KFD_IOC_EVENT_SIGNAL, true, &plan->id[AUTO_IDLE]));
	CHILD_CHECK(!create_event(fd, KFD_IOC_EVENT_SIGNAL, false, &plan->id[GAP]));
	CHILD_CHECK(!create_event(fd, KFD_IOC_EVENT_SIGNAL, false, &plan->id[MANUAL_IDLE]));
	CHILD_CHECK(!create_event(fd, KFD_IOC_EVENT_MEMORY, false, &plan->id[MEMORY]));
	CHILD_CHECK(!event_op(fd, AMDKFD_IOC_DESTROY_EVENT, plan->id[GAP]));

	CHILD_CHECK(!event_op(fd, AMDKFD_IOC_SET_EVENT, plan->id[AUTO_SET2]));
	CHILD_CHECK(!event_op(fd, AMDKFD_IOC_SET_EVENT, plan->id[AUTO_SET2]));
	CHILD_CHECK(!event_op(fd, AMDKFD_IOC_SET_EVENT, plan->id[MANUAL_SET]));
	CHILD_CHECK(!event_op(fd, AMDKFD_IOC_SET_EVENT, plan->id[MANUAL_RESET]));
	CHILD_CHECK(!event_op(fd, AMDKFD_IOC_RESET_EVENT, plan->id[MANUAL_RESET]));

	plan->xnack = xnack_pick(fd);
	CHILD_CHECK(plan->xnack >= 0 || xnack_fresh < 0);
	CHILD_CHECK(!runtime_enable(fd, 0x7f0012345000ULL));

	page = map_event_page(fd);
	CHILD_CHECK(page);
	plan->page_slots[0] = plan->id[AUTO_IDLE];
	plan->page_slots[1] = 100;
	plan->page_slots[2] = 1000;
	plan->page_slots[3] = KFD_SIGNAL_EVENT_LIMIT - 1;
	for (i = 0; i < 4; i++)
		page[plan->page_slots[i]] = slot_pattern(plan->page_slots[i]);
	CHILD_CHECK(!munmap(page, EVENT_PAGE_SIZE));
}

static void check_event_states(int fd, const struct events_plan *plan)
{
	__u32 result;
	__u64 age;
	unsigned int i;

	for (i = 0; i < 7; i++) {
		if (plan_signaled[i] < 0)
			continue;
		CHILD_CHECK(!wait_event(fd, plan->id[i], NULL, &result));
		CHILD_CHECK(result == (plan_signaled[i] ? KFD_IOC_WAIT_RESULT_COMPLETE :
				       KFD_IOC_WAIT_RESULT_TIMEOUT));
		age = UINT64_MAX;
		CHILD_CHECK(!wait_event(fd, plan->id[i], &age, &result));
		CHILD_CHECK(result == KFD_IOC_WAIT_RESULT_COMPLETE);
		CHILD_CHECK(age == plan_age[i]);
	}
}

static void check_restored(int fd, const struct events_plan *plan)
{
	__u64 *page;
	__u32 result, id;
	unsigned int i;

	CHILD_CHECK(xnack_is(fd, plan->xnack));
	CHILD_CHECK(runtime_enable(fd, 0x1000) == -EBUSY);

	page = map_event_page(fd);
	CHILD_CHECK(page);
	for (i = 0; i < KFD_SIGNAL_EVENT_LIMIT; i++)
		CHILD_CHECK(page[i] == expected_slot(plan, i));
	CHILD_CHECK(!munmap(page, EVENT_PAGE_SIZE));

	check_event_states(fd, plan);

	/* The destroyed id stays free, the memory event exists */
	CHILD_CHECK(event_op(fd, AMDKFD_IOC_SET_EVENT, plan->id[GAP]) == -EINVAL);
	CHILD_CHECK(event_op(fd, AMDKFD_IOC_SET_EVENT, plan->id[MEMORY]) == -EINVAL);
	CHILD_CHECK(!event_op(fd, AMDKFD_IOC_DESTROY_EVENT, plan->id[MEMORY]));
	CHILD_CHECK(event_op(fd, AMDKFD_IOC_DESTROY_EVENT, plan->id[MEMORY]) == -EINVAL);

	/* Set, wait and reset work on restored ids */
	CHILD_CHECK(!event_op(fd, AMDKFD_IOC_SET_EVENT, plan->id[AUTO_IDLE]));
	CHILD_CHECK(!wait_event(fd, plan->id[AUTO_IDLE], NULL, &result));
	CHILD_CHECK(result == KFD_IOC_WAIT_RESULT_COMPLETE);
	CHILD_CHECK(!event_op(fd, AMDKFD_IOC_RESET_EVENT, plan->id[MANUAL_SET]));
	CHILD_CHECK(!wait_event(fd, plan->id[MANUAL_SET], NULL, &result));
	CHILD_CHECK(result == KFD_IOC_WAIT_RESULT_TIMEOUT);

	/* A new event takes the lowest free id, as in the dumped process */
	CHILD_CHECK(!create_event(fd, KFD_IOC_EVENT_SIGNAL, false, &id));
	CHILD_CHECK(id == plan->id[GAP]);
}

/* A process that has no KFD state: no signal page, no events. */
static void check_pristine(int fd)
{
	__u32 id;

	errno = 0;
	CHILD_CHECK(!map_event_page(fd) && errno == EINVAL);
	CHILD_CHECK(event_op(fd, AMDKFD_IOC_SET_EVENT, 1) == -EINVAL);
	CHILD_CHECK(xnack_is(fd, xnack_fresh));
	CHILD_CHECK(!create_event(fd, KFD_IOC_EVENT_SIGNAL, false, &id));
	CHILD_CHECK(id == 1);
}

/* The process to be dumped: builds its state, hands out its kfd file. */
static void dumpee_main(int sock)
{
	struct events_plan plan = { 0 };
	int fd = kfd_open();

	CHILD_CHECK(fd >= 0);
	populate_events(fd, &plan);
	CHILD_CHECK(!send_fd(sock, fd, &plan, sizeof(plan)));
	sync_wait(sock);	/* until the dump is done */
	_exit(0);
}

/**
 * struct image - a dumped image and what it holds
 * @data: the stream
 * @len: bytes at @data
 * @plan: the dumped process's events
 */
struct image {
	unsigned char *data;
	size_t len;
	struct events_plan plan;
};

/*
 * Dumps a child the way CRIU does: receives its kfd file, ptrace-seizes it
 * and runs PROCESS_INFO, CHECKPOINT and UNPAUSE on its file.
 */
static void dump_child(struct __test_metadata *_metadata, struct image *img)
{
	struct kfd_ioctl_criu_args args;
	int sv[2], kfd, memfd;
	__u64 estimate;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(sv[0]);
		dumpee_main(sv[1]);
	}
	close(sv[1]);
	kfd = recv_fd(sv[0], &img->plan, sizeof(img->plan));
	ASSERT_LE(0, kfd);
	ASSERT_EQ(0, ptrace(PTRACE_SEIZE, pid, 0, 0));
	memfd = memfd_create("kfd-criu-image", MFD_CLOEXEC);
	ASSERT_LE(0, memfd);

	EXPECT_EQ(-EBADFD, criu_image_op(kfd, KFD_CRIU_OP_CHECKPOINT, memfd, &args));
	ASSERT_EQ(0, criu_image_op(kfd, KFD_CRIU_OP_PROCESS_INFO, -1, &args));
	EXPECT_EQ(pid, (pid_t)args.pid);
	EXPECT_EQ(1U, args.format_version);
	estimate = args.image_size;
	ASSERT_EQ(0, criu_image_op(kfd, KFD_CRIU_OP_CHECKPOINT, memfd, &args));
	EXPECT_EQ(estimate, args.image_size);
	/* Written at image_offset 0, as pwrite(2) writes: no position moved */
	EXPECT_EQ(0, lseek(memfd, 0, SEEK_CUR));
	ASSERT_EQ(0, criu_image_op(kfd, KFD_CRIU_OP_UNPAUSE, -1, &args));
	EXPECT_EQ(-EBADFD, criu_image_op(kfd, KFD_CRIU_OP_UNPAUSE, -1, &args));

	img->len = fd_size(memfd);
	img->data = malloc(img->len);
	ASSERT_NE(NULL, img->data);
	ASSERT_EQ((ssize_t)img->len, pread(memfd, img->data, img->len, 0));

	sync_send(sv[0]);
	ASSERT_EQ(0, wait_child(pid));
	close(memfd);
	close(kfd);
	close(sv[0]);
}

/*
 * Restores @image_fd (a memfd or a pipe holding @len bytes) into a fresh
 * process, then waits for RESUME and checks what it got.
 */
static void restoree_main(int sock, int image_fd, size_t len,
			  const struct events_plan *plan)
{
	struct kfd_ioctl_criu_args args;
	int fd = kfd_open();

	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(!criu_image_op(fd, KFD_CRIU_OP_RESTORE, image_fd, &args));
	CHILD_CHECK(args.image_size == len && args.format_version == 1);
	/* Refused on the state alone, before anything is read */
	CHILD_CHECK(criu_image_op(fd, KFD_CRIU_OP_RESTORE, image_fd, &args) == -EBUSY);
	CHILD_CHECK(criu_image_op(fd, KFD_CRIU_OP_PROCESS_INFO, -1, &args) == -EBADFD);
	CHILD_CHECK(criu_image_op(fd, KFD_CRIU_OP_UNPAUSE, -1, &args) == -EBADFD);
	sync_send(sock);
	sync_wait(sock);	/* resumed */
	check_restored(fd, plan);
	_exit(0);
}

static pid_t start_restoree(struct __test_metadata *_metadata, int *sock,
			    int image_fd, const struct image *img)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -1;
	pid = fork();
	if (!pid) {
		close(sv[0]);
		restoree_main(sv[1], image_fd, img->len, &img->plan);
	}
	close(sv[1]);
	*sock = sv[0];
	if (pid > 0) {
		char c;

		EXPECT_EQ(1, read(sv[0], &c, 1)) TH_LOG("restoree did not restore");
	}
	return pid;
}

static void resume_restoree(struct __test_metadata *_metadata, pid_t pid,
			    int sock)
{
	char c = 0;
	int kfd = kfd_open();

	ASSERT_LE(0, kfd);
	ASSERT_EQ(0, criu_resume_traced(kfd, pid));
	EXPECT_EQ(-EBADFD, criu_resume_traced(kfd, pid));
	ASSERT_EQ(1, write(sock, &c, 1));
	EXPECT_EQ(0, wait_child(pid));
	close(kfd);
	close(sock);
}

#endif /* KFD_CRIU_EVENTS_PLAN_H */
