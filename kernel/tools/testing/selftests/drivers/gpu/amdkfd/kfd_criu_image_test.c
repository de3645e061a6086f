// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: CRIU image mode of AMDKFD_IOC_CRIU_OP
 *
 * Runs as root on a kernel with amdkfd; needs no GPU. A process creates
 * events, signals some, maps the event page and writes into it; its /dev/kfd
 * file goes to the test over SCM_RIGHTS, and the test, as its ptrace
 * parent, dumps it into a memfd. Fresh processes restore that image on their
 * own /dev/kfd and check ids, signaled states, ages, the event page, the
 * XNACK mode and the runtime state. Further tests cover the legacy
 * interface with the old argument size, the op ordering errors, bad images
 * (each must leave the process without any KFD state), the largest event
 * age an image may carry, streams through pipes, images at an offset of
 * a file and a file opened for appending, arguments on a read-only page
 * and image files that fail (each op must change nothing),
 * privileges (RESUME only by the target or its tracer), RESTORE through
 * the file of an owner that exited, and a legacy op that waited for the
 * process's lock while image mode paused it.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/kfd_ioctl.h>
#include <linux/userfaultfd.h>

#include "../../../kselftest_harness.h"
#include "kfd_criu_util.h"
#include "kfd_criu_events_plan.h"

TEST(round_trip_across_processes)
{
	struct image img;
	int memfd, sock;
	pid_t pid;

	if (kfd_no_signal_events())
		SKIP(return, "%s", kfd_no_signal_events());
	dump_child(_metadata, &img);
	EXPECT_EQ(1U, img.plan.id[AUTO_SET2]);
	EXPECT_EQ(FIRST_NONSIGNAL_ID, img.plan.id[MEMORY]);

	memfd = memfd_from(img.data, img.len);
	ASSERT_LE(0, memfd);
	pid = start_restoree(_metadata, &sock, memfd, &img);
	ASSERT_LT(0, pid);
	resume_restoree(_metadata, pid, sock);
	close(memfd);
	free(img.data);
}

/* The image goes through a regular file, reopened read-only by path. */
TEST(round_trip_through_a_file)
{
	char path[] = "/tmp/kfd-criu-image-XXXXXX";
	struct image img;
	int fd, sock;
	pid_t pid;

	if (kfd_no_signal_events())
		SKIP(return, "%s", kfd_no_signal_events());
	dump_child(_metadata, &img);
	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)img.len, write(fd, img.data, img.len));
	ASSERT_EQ(0, close(fd));

	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	pid = start_restoree(_metadata, &sock, fd, &img);
	ASSERT_LT(0, pid);
	resume_restoree(_metadata, pid, sock);
	close(fd);
	unlink(path);
	free(img.data);
}

/* Streams through pipes: the dump writes to one, the restore reads one. */
TEST(round_trip_through_pipes)
{
	struct kfd_ioctl_criu_args args;
	unsigned char *buf;
	struct image img;
	int dump_pipe[2], load_pipe[2], sock;
	pid_t pid;

	if (kfd_no_signal_events())
		SKIP(return, "%s", kfd_no_signal_events());
	dump_child(_metadata, &img);

	/* The test process dumps itself: no ptrace needed for its own file */
	{
		int kfd = kfd_open();
		struct events_plan self = { 0 };
		ssize_t got;

		ASSERT_LE(0, kfd);
		populate_events(kfd, &self);
		ASSERT_EQ(0, pipe2(dump_pipe, O_CLOEXEC));
		ASSERT_EQ(0, criu_image_op(kfd, KFD_CRIU_OP_PROCESS_INFO, -1, &args));
		ASSERT_EQ(0, criu_image_op(kfd, KFD_CRIU_OP_CHECKPOINT,
					   dump_pipe[1], &args));
		EXPECT_EQ(img.len, args.image_size);
		close(dump_pipe[1]);
		buf = malloc(args.image_size + 1);
		ASSERT_NE(NULL, buf);
		got = read(dump_pipe[0], buf, args.image_size + 1);
		EXPECT_EQ((ssize_t)args.image_size, got);
		/* Same state, same kernel: the same image up to nothing */
		EXPECT_EQ(0, memcmp(buf, img.data, img.len));
		ASSERT_EQ(0, criu_image_op(kfd, KFD_CRIU_OP_UNPAUSE, -1, &args));
		close(dump_pipe[0]);
		close(kfd);
		free(buf);
	}

	ASSERT_EQ(0, pipe2(load_pipe, O_CLOEXEC));
	ASSERT_EQ((ssize_t)img.len, write(load_pipe[1], img.data, img.len));
	close(load_pipe[1]);
	pid = start_restoree(_metadata, &sock, load_pipe[0], &img);
	ASSERT_LT(0, pid);
	resume_restoree(_metadata, pid, sock);
	close(load_pipe[0]);
	free(img.data);
}

static void put_le32(unsigned char *p, __u32 v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

/* Offset of the first record of @type, or 0. */
static size_t find_record(const unsigned char *data, size_t len, __u32 type)
{
	size_t off = IMAGE_HEADER_SIZE;

	while (off + RECORD_OVERHEAD <= len) {
		if (criu_img_le32(data + off) == type)
			return off;
		off += RECORD_OVERHEAD + criu_img_le32(data + off + 8);
	}
	return 0;
}

static void fix_record_crc(unsigned char *data, size_t off)
{
	__u32 len = criu_img_le32(data + off + 8);

	put_le32(data + off + RECORD_HEADER_SIZE + len,
		 criu_img_crc32c(data + off, RECORD_HEADER_SIZE + len));
}

/**
 * struct bad_image - a way to break an image and the errno RESTORE gives
 * @name: for the log
 * @errno_expected: positive errno
 * @cut: truncate the image by this many bytes
 * @flip: offset from the end of a byte to flip, 0 for none
 * @version: header version to write with a matching CRC, 0 to keep
 * @header_crc: break the header CRC
 * @num_events: PROCESS num_events to write with a matching CRC, 0 to keep
 * @mandatory_type: give the SIGNAL_PAGE record this unknown type
 * @event_age: age to write into the first EVENT record, 0 to keep
 */
struct bad_image {
	const char *name;
	int errno_expected;
	size_t cut;
	size_t flip;
	__u32 version;
	bool header_crc;
	__u32 num_events;
	__u32 mandatory_type;
	__u64 event_age;
};

static const struct bad_image bad_images[] = {
	{ .name = "payload byte flipped", .errno_expected = EBADMSG,
	  .flip = END_RECORD_SIZE + 4 + 20 },
	{ .name = "END payload byte flipped", .errno_expected = EBADMSG,
	  .flip = 10 },
	{ .name = "header CRC", .errno_expected = EBADMSG, .header_crc = true },
	{ .name = "format version 2", .errno_expected = EPROTO, .version = 2 },
	{ .name = "cut in END", .errno_expected = ENODATA, .cut = 1 },
	{ .name = "END missing", .errno_expected = ENODATA, .cut = END_RECORD_SIZE },
	{ .name = "cut in header", .errno_expected = ENODATA, .cut = SIZE_MAX },
	{ .name = "oversized event count", .errno_expected = EINVAL,
	  .num_events = 0x7fffffff },
	{ .name = "event count off by one", .errno_expected = EINVAL,
	  .num_events = 1 },
	{ .name = "unknown mandatory record", .errno_expected = EOPNOTSUPP,
	  .mandatory_type = 0x7777 },
	/* SET_EVENT would wrap it and warn */
	{ .name = "event age at the wrap", .errno_expected = EINVAL,
	  .event_age = UINT64_MAX },
	{ .name = "event age past the bound", .errno_expected = EINVAL,
	  .event_age = MAX_EVENT_AGE + 1 },
};

/* Sets the age of the first EVENT record and its CRC. */
static void set_first_event_age(unsigned char *data, size_t len, __u64 age)
{
	size_t off = find_record(data, len, REC_EVENT);
	int i;

	if (!off)
		return;
	for (i = 0; i < 8; i++)
		data[off + RECORD_HEADER_SIZE + EVENT_AGE_OFF + i] = age >> (8 * i);
	fix_record_crc(data, off);
}

static size_t break_image(const struct bad_image *bad, unsigned char *data,
			  size_t len)
{
	size_t off;

	if (bad->cut == SIZE_MAX)
		return IMAGE_HEADER_SIZE / 2;
	if (bad->flip)
		data[len - bad->flip] ^= 0x10;
	if (bad->version) {
		put_le32(data + IMAGE_VERSION_OFF, bad->version);
		put_le32(data + IMAGE_HEADER_CRC_OFF,
			 criu_img_crc32c(data, IMAGE_HEADER_CRC_OFF));
	}
	if (bad->header_crc)
		data[IMAGE_HEADER_CRC_OFF] ^= 0xff;
	off = find_record(data, len, REC_PROCESS);
	if (bad->num_events && off) {
		put_le32(data + off + RECORD_HEADER_SIZE + PROCESS_NUM_EVENTS_OFF,
			 bad->num_events == 1 ?
			 criu_img_le32(data + off + RECORD_HEADER_SIZE +
				  PROCESS_NUM_EVENTS_OFF) + 1 : bad->num_events);
		fix_record_crc(data, off);
	}
	off = find_record(data, len, REC_SIGNAL_PAGE);
	if (bad->mandatory_type && off) {
		put_le32(data + off, bad->mandatory_type);
		put_le32(data + off + 4, RECORD_MANDATORY);
		fix_record_crc(data, off);
	}
	if (bad->event_age)
		set_first_event_age(data, len, bad->event_age);
	return len - bad->cut;
}

/* Refuses @bad_fd with @err, is unchanged, then restores @good_fd. */
static void bad_restoree_main(int bad_fd, int good_fd, int err)
{
	struct kfd_ioctl_criu_args args;
	int fd = kfd_open();

	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(criu_image_op(fd, KFD_CRIU_OP_RESTORE, bad_fd, &args) == -err);
	errno = 0;
	CHILD_CHECK(!map_event_page(fd) && errno == EINVAL);
	CHILD_CHECK(event_op(fd, AMDKFD_IOC_SET_EVENT, 1) == -EINVAL);
	CHILD_CHECK(xnack_is(fd, xnack_fresh));
	CHILD_CHECK(!runtime_enable(fd, 0));	/* the runtime stayed off */
	CHILD_CHECK(!kfd_ioctl(fd, AMDKFD_IOC_RUNTIME_ENABLE,
			       &(struct kfd_ioctl_runtime_enable_args){ 0 }));
	CHILD_CHECK(!criu_image_op(fd, KFD_CRIU_OP_RESTORE, good_fd, &args));
	_exit(0);
}

TEST(bad_images_leave_no_state)
{
	unsigned char *copy;
	struct image img;
	unsigned int i;
	int good, bad;
	size_t len;
	pid_t pid;

	if (kfd_no_signal_events())
		SKIP(return, "%s", kfd_no_signal_events());
	dump_child(_metadata, &img);
	good = memfd_from(img.data, img.len);
	ASSERT_LE(0, good);
	copy = malloc(img.len);
	ASSERT_NE(NULL, copy);

	for (i = 0; i < ARRAY_SIZE(bad_images); i++) {
		memcpy(copy, img.data, img.len);
		len = break_image(&bad_images[i], copy, img.len);
		bad = memfd_from(copy, len);
		ASSERT_LE(0, bad);
		ASSERT_EQ(0, lseek(good, 0, SEEK_SET));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			bad_restoree_main(bad, good, bad_images[i].errno_expected);
		EXPECT_EQ(0, wait_child(pid)) TH_LOG("%s", bad_images[i].name);
		close(bad);
	}
	free(copy);
	close(good);
	free(img.data);
}

/* After a failed restore the process is as fresh as before. */
TEST(failed_restore_then_fresh_ids)
{
	unsigned char *copy;
	struct image img;
	int bad;
	pid_t pid;

	if (kfd_no_signal_events())
		SKIP(return, "%s", kfd_no_signal_events());
	dump_child(_metadata, &img);
	copy = malloc(img.len);
	ASSERT_NE(NULL, copy);
	memcpy(copy, img.data, img.len);
	break_image(&bad_images[0], copy, img.len);
	bad = memfd_from(copy, img.len);
	ASSERT_LE(0, bad);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct kfd_ioctl_criu_args args;
		int fd = kfd_open();

		CHILD_CHECK(fd >= 0);
		CHILD_CHECK(criu_image_op(fd, KFD_CRIU_OP_RESTORE, bad, &args) ==
			    -EBADMSG);
		check_pristine(fd);
		_exit(0);
	}
	EXPECT_EQ(0, wait_child(pid));
	close(bad);
	free(copy);
	free(img.data);
}

static __u64 get_le64(const unsigned char *p)
{
	return criu_img_le32(p) | (__u64)criu_img_le32(p + 4) << 32;
}

static void put_le64(unsigned char *p, __u64 v)
{
	put_le32(p, v);
	put_le32(p + 4, v >> 32);
}

/*
 * Copies image @in (@len bytes, no GPUs) to @out with a GPU: COMPAT's
 * num_gpus set to 1, a well-formed GPU record for @gpu_id right after
 * COMPAT, the CRCs and END's counts fixed. @out has room for
 * GPU_REC_SIZE + RECORD_OVERHEAD more bytes. Returns the new length, 0 if
 * @in lacks a record this needs.
 */
static size_t insert_gpu_record(const unsigned char *in, size_t len,
				unsigned char *out, __u32 gpu_id)
{
	size_t compat = find_record(in, len, REC_COMPAT), gpu, end;
	unsigned char *p;

	if (!compat || !find_record(in, len, REC_END))
		return 0;
	gpu = compat + RECORD_OVERHEAD + criu_img_le32(in + compat + 8);
	memcpy(out, in, gpu);
	memcpy(out + gpu + RECORD_OVERHEAD + GPU_REC_SIZE, in + gpu, len - gpu);
	len += RECORD_OVERHEAD + GPU_REC_SIZE;

	put_le32(out + compat + RECORD_HEADER_SIZE, 1);	/* num_gpus */
	fix_record_crc(out, compat);

	put_le32(out + gpu, REC_GPU);
	put_le32(out + gpu + 4, RECORD_MANDATORY);
	put_le32(out + gpu + 8, GPU_REC_SIZE);
	p = out + gpu + RECORD_HEADER_SIZE;
	memset(p, 0, GPU_REC_SIZE);
	put_le32(p, gpu_id);
	put_le32(p + GPU_GFX_VERSION_OFF, 90402);	/* gfx942 */
	put_le32(p + GPU_DEVICE_ID_OFF, 0x74a1);
	put_le32(p + GPU_NUM_XCC_OFF, 1);
	put_le64(p + GPU_VRAM_SIZE_OFF, 16ULL << 30);
	put_le32(p + GPU_CWSR_SIZE_OFF, 0x41000);
	put_le32(p + GPU_CTL_STACK_SIZE_OFF, 0x1000);
	put_le32(p + GPU_MEC_FW_OFF, 155);
	put_le32(p + GPU_SDMA_FW_OFF, 19);
	fix_record_crc(out, gpu);

	end = find_record(out, len, REC_END);
	p = out + end + RECORD_HEADER_SIZE;
	put_le32(p, criu_img_le32(p) + 1);
	put_le64(p + END_PAYLOAD_BYTES_OFF,
		 get_le64(p + END_PAYLOAD_BYTES_OFF) + GPU_REC_SIZE);
	fix_record_crc(out, end);
	return len;
}

/* The process of @fd has no KFD state, and has not enabled the runtime */
static void check_no_state(int fd)
{
	errno = 0;
	CHILD_CHECK(!map_event_page(fd) && errno == EINVAL);
	CHILD_CHECK(event_op(fd, AMDKFD_IOC_SET_EVENT, 1) == -EINVAL);
	CHILD_CHECK(xnack_is(fd, xnack_fresh));
}

/*
 * Refuses @bad_fd, the same image with the GPU record also invalid, with
 * -EINVAL: an invalid record is malformed whatever GPUs this machine has,
 * as kfdcrit check says. Refuses @gpu_fd, an image naming a GPU this
 * machine lacks, with -ENODEV,
 * having read no more than @most bytes of it, and @good_fd with a
 * malformed GPU map with -EINVAL; stays without KFD state; then restores
 * @good_fd, resumes itself and has @plan's events.
 */
static void missing_gpu_restoree_main(int bad_fd, int gpu_fd, int good_fd,
				      size_t most,
				      const struct events_plan *plan)
{
	struct kfd_criu_gpu_map bad_map = {
		.local_gpu_id = ABSENT_GPU_ID, .drm_fd = -1, .reserved = 1,
	};
	struct kfd_criu_offset_map offsets[4];
	struct kfd_ioctl_criu_args args;
	int fd = kfd_open();

	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(criu_restore_mapped(fd, bad_fd, NULL, 0, offsets, 4,
					&args) == -EINVAL);
	check_no_state(fd);
	CHILD_CHECK(criu_restore_mapped(fd, gpu_fd, NULL, 0, offsets, 4,
					&args) == -ENODEV);
	/* Placed as soon as the GPU records are in, before the rest is held */
	CHILD_CHECK(args.image_size > 0 && args.image_size <= most);
	check_no_state(fd);
	CHILD_CHECK(criu_restore_mapped(fd, good_fd, &bad_map, 1, offsets, 4,
					&args) == -EINVAL);
	check_no_state(fd);
	CHILD_CHECK(!lseek(good_fd, 0, SEEK_SET));
	CHILD_CHECK(!criu_restore_mapped(fd, good_fd, NULL, 0, offsets, 4,
					 &args));
	CHILD_CHECK(args.num_offset_map == 0);
	CHILD_CHECK(!criu_resume(fd, getpid()));
	check_restored(fd, plan);
	_exit(0);
}

/*
 * An image whose GPU record names a GPU this machine lacks fails RESTORE
 * with -ENODEV and leaves the process as it was: the original image of
 * the same process, without GPUs, then restores into it. RESTORE reads no
 * further than the record after the GPU's: it places the GPUs before it
 * keeps any record their sizes bound (issue: an image claiming big GPUs
 * made RESTORE hold all its queue states before it found them missing).
 */
TEST(image_with_missing_gpu)
{
	size_t len, next, most, rec;
	unsigned char *copy;
	struct image img;
	int good, gpu, bad;
	pid_t pid;

	if (kfd_no_signal_events())
		SKIP(return, "%s", kfd_no_signal_events());
	dump_child(_metadata, &img);
	copy = malloc(img.len + RECORD_OVERHEAD + GPU_REC_SIZE);
	ASSERT_NE(NULL, copy);
	len = insert_gpu_record(img.data, img.len, copy, ABSENT_GPU_ID);
	ASSERT_EQ(img.len + RECORD_OVERHEAD + GPU_REC_SIZE, len);
	next = find_record(copy, len, REC_GPU) + RECORD_OVERHEAD + GPU_REC_SIZE;
	most = next + RECORD_OVERHEAD + criu_img_le32(copy + next + 8);
	ASSERT_LT(most, len);
	gpu = memfd_from(copy, len);
	ASSERT_LE(0, gpu);
	good = memfd_from(img.data, img.len);
	ASSERT_LE(0, good);
	/* The same GPU record with no XCC: invalid in any image */
	rec = find_record(copy, len, REC_GPU);
	put_le32(copy + rec + RECORD_HEADER_SIZE + GPU_NUM_XCC_OFF, 0);
	fix_record_crc(copy, rec);
	bad = memfd_from(copy, len);
	ASSERT_LE(0, bad);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		missing_gpu_restoree_main(bad, gpu, good, most, &img.plan);
	EXPECT_EQ(0, wait_child(pid));
	close(bad);
	close(good);
	close(gpu);
	free(copy);
	free(img.data);
}

TEST(restore_into_process_with_events)
{
	struct image img;
	int good;
	pid_t pid;

	if (kfd_no_signal_events())
		SKIP(return, "%s", kfd_no_signal_events());
	dump_child(_metadata, &img);
	good = memfd_from(img.data, img.len);
	ASSERT_LE(0, good);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct kfd_ioctl_criu_args args;
		int fd = kfd_open();
		__u32 id;

		CHILD_CHECK(fd >= 0);
		CHILD_CHECK(!create_event(fd, KFD_IOC_EVENT_SIGNAL, false, &id));
		CHILD_CHECK(criu_image_op(fd, KFD_CRIU_OP_RESTORE, good, &args) ==
			    -EBUSY);
		CHILD_CHECK(event_op(fd, AMDKFD_IOC_SET_EVENT, id) == 0);
		_exit(0);
	}
	EXPECT_EQ(0, wait_child(pid));
	close(good);
	free(img.data);
}

FIXTURE(kfd) {
	int fd;
};

FIXTURE_SETUP(kfd)
{
	self->fd = -1;
	if (kfd_unusable())
		SKIP(return, "%s", kfd_unusable());
	self->fd = kfd_open();
	ASSERT_LE(0, self->fd) TH_LOG("open /dev/kfd: %s", strerror(errno));
}

FIXTURE_TEARDOWN(kfd)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* Binaries built without image mode get the legacy ioctl, padding and all. */
TEST_F(kfd, legacy_old_struct_size)
{
	struct criu_args_v1_17 old;

	memset(&old, 0, sizeof(old));
	old.tail_padding = 0xdeadbeef;	/* may be garbage in old binaries */
	old.op = KFD_CRIU_OP_PROCESS_INFO;
	EXPECT_EQ(-ENODEV, kfd_ioctl(self->fd, AMDKFD_IOC_CRIU_OP_V1_17, &old));
	old.op = KFD_CRIU_OP_CHECKPOINT;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->fd, AMDKFD_IOC_CRIU_OP_V1_17, &old));
	old.op = KFD_CRIU_OP_UNPAUSE;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->fd, AMDKFD_IOC_CRIU_OP_V1_17, &old));
	old.op = KFD_CRIU_OP_RESTORE;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->fd, AMDKFD_IOC_CRIU_OP_V1_17, &old));
	old.op = 99;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->fd, AMDKFD_IOC_CRIU_OP_V1_17, &old));
}

/*
 * A legacy RESUME of a process that never acquired a GPU VM: this one,
 * on a machine with or without GPUs. There is nothing to resume, and
 * -ESRCH is what the CRIU plugin takes for "no KFD state here". Before
 * the fix the kernel dereferenced the missing process info.
 */
TEST_F(kfd, legacy_resume_without_vm)
{
	struct criu_args_v1_17 old;

	memset(&old, 0, sizeof(old));
	old.op = KFD_CRIU_OP_RESUME;
	old.pid = getpid();
	EXPECT_EQ(-ESRCH, kfd_ioctl(self->fd, AMDKFD_IOC_CRIU_OP_V1_17, &old));
}

/* The new struct with flags 0 is the legacy interface too. */
TEST_F(kfd, legacy_new_struct_size)
{
	struct kfd_ioctl_criu_args args;

	memset(&args, 0, sizeof(args));
	args.legacy_pad = 0xdeadbeef;
	args.image_fd = 1234;	/* ignored by legacy ops */
	args.op = KFD_CRIU_OP_PROCESS_INFO;
	EXPECT_EQ(-ENODEV, kfd_ioctl(self->fd, AMDKFD_IOC_CRIU_OP, &args));
	args.reserved = 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->fd, AMDKFD_IOC_CRIU_OP, &args));
	/* A flag never turns a legacy op into image mode: refused instead */
	args.reserved = 0;
	args.flags = 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->fd, AMDKFD_IOC_CRIU_OP, &args));
}

TEST_F(kfd, bad_arguments)
{
	struct kfd_ioctl_criu_args args;

	memset(&args, 0, sizeof(args));
	args.op = KFD_CRIU_OP_IMAGE_CHECKPOINT;	/* a GPU map is not its */
	args.gpu_map_ptr = (uintptr_t)&args;
	args.num_gpu_map = 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->fd, AMDKFD_IOC_CRIU_OP, &args));
	args.op = KFD_CRIU_OP_IMAGE_PROCESS_INFO;	/* nor PROCESS_INFO's */
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->fd, AMDKFD_IOC_CRIU_OP, &args));
	args.num_gpu_map = 0;
	args.gpu_map_ptr = 0;
	args.devices = (uintptr_t)&args;
	args.num_devices = 65;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->fd, AMDKFD_IOC_CRIU_OP, &args));
	args.num_devices = 1;
	args.devices = 0;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->fd, AMDKFD_IOC_CRIU_OP, &args));
	args.num_devices = 0;
	args.offset_map_ptr = (uintptr_t)&args;	/* RESTORE's only */
	args.num_offset_map = 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->fd, AMDKFD_IOC_CRIU_OP, &args));
	args.offset_map_ptr = 0;
	args.num_offset_map = 0;
	args.flags = 1U << 31;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->fd, AMDKFD_IOC_CRIU_OP, &args));
	args.flags = 0;
	args.priv_data_size = 8;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->fd, AMDKFD_IOC_CRIU_OP, &args));
	args.priv_data_size = 0;
	args.op = KFD_CRIU_OP_IMAGE_RESUME + 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->fd, AMDKFD_IOC_CRIU_OP, &args));
	args.op = KFD_CRIU_OP_RESUME + 1;
	EXPECT_EQ(-EINVAL, kfd_ioctl(self->fd, AMDKFD_IOC_CRIU_OP, &args));
	/* None of it paused the process */
	EXPECT_EQ(-EBADFD, criu_image_op(self->fd, KFD_CRIU_OP_UNPAUSE, -1, &args));
}

/*
 * PROCESS_INFO with device buckets pairs each GPU of the process: the
 * gpu_id the process sees and the topology's, the same in a process that
 * was never restored. Too little room or buckets it cannot write pause
 * nothing.
 */
TEST_F(kfd, process_info_pairs_gpu_ids)
{
	struct kfd_criu_device_bucket *buckets;
	struct kfd_test_gpu gpus[64];
	struct kfd_ioctl_criu_args args;
	int n = kfd_topology_gpus(gpus, 64), i, j;
	size_t len = 64 * sizeof(*buckets);

	buckets = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, buckets);
	memset(&args, 0, sizeof(args));
	args.op = KFD_CRIU_OP_IMAGE_PROCESS_INFO;
	args.devices = (uintptr_t)buckets;
	args.num_devices = 64;
	if (n > 0) {
		EXPECT_EQ(-EFAULT, kfd_ioctl(self->fd, AMDKFD_IOC_CRIU_OP, &args));
		EXPECT_EQ(-EBADFD, criu_image_op(self->fd, KFD_CRIU_OP_UNPAUSE, -1, &args));
		args.op = KFD_CRIU_OP_IMAGE_PROCESS_INFO;
		args.devices = (uintptr_t)buckets;
		args.num_devices = n - 1 ?: 1;
	}
	ASSERT_EQ(0, mprotect(buckets, len, PROT_READ | PROT_WRITE));
	if (n > 1) {
		EXPECT_EQ(-ENOSPC, kfd_ioctl(self->fd, AMDKFD_IOC_CRIU_OP, &args));
		EXPECT_EQ((__u32)n, args.num_devices);
		EXPECT_EQ(-EBADFD, criu_image_op(self->fd, KFD_CRIU_OP_UNPAUSE, -1, &args));
		args.op = KFD_CRIU_OP_IMAGE_PROCESS_INFO;
		args.devices = (uintptr_t)buckets;
	}
	args.num_devices = 64;
	memset(buckets, 0x5a, len);
	ASSERT_EQ(0, kfd_ioctl(self->fd, AMDKFD_IOC_CRIU_OP, &args));
	TH_LOG("%d GPUs in the topology, %u paired", n, args.num_devices);
	EXPECT_EQ((__u32)(n < 0 ? 0 : n), args.num_devices);
	for (i = 0; i < (int)args.num_devices && i < 64; i++) {
		for (j = 0; j < n && gpus[j].gpu_id != buckets[i].actual_gpu_id; j++)
			;
		EXPECT_LT(j, n) TH_LOG("gpu_id 0x%x is not a topology GPU",
				       buckets[i].actual_gpu_id);
		EXPECT_EQ(buckets[i].actual_gpu_id, buckets[i].user_gpu_id);
		EXPECT_EQ(0U, buckets[i].drm_fd);
		EXPECT_EQ(0U, buckets[i].pad);
	}
	EXPECT_EQ(0x5a5a5a5aU, buckets[args.num_devices].user_gpu_id);
	EXPECT_EQ(0, criu_image_op(self->fd, KFD_CRIU_OP_UNPAUSE, -1, &args));
	munmap(buckets, len);
}

/* CHECKPOINT into a read-only reopening of @memfd. */
static int checkpoint_to_readonly_fd(int kfd, int memfd,
				     struct kfd_ioctl_criu_args *args)
{
	char path[64];
	int ro, ret;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	if (ro < 0)
		return -errno;
	ret = criu_image_op(kfd, KFD_CRIU_OP_CHECKPOINT, ro, args);
	close(ro);
	return ret;
}

TEST_F(kfd, op_order)
{
	struct kfd_ioctl_criu_args args;
	int memfd = memfd_create("kfd-criu-image", MFD_CLOEXEC);

	ASSERT_LE(0, memfd);
	EXPECT_EQ(-EBADFD, criu_image_op(self->fd, KFD_CRIU_OP_CHECKPOINT, memfd, &args));
	EXPECT_EQ(0, fd_size(memfd));
	EXPECT_EQ(-EBADFD, criu_image_op(self->fd, KFD_CRIU_OP_UNPAUSE, -1, &args));
	EXPECT_EQ(-EBADFD, criu_resume(self->fd, getpid()));
	EXPECT_EQ(-ESRCH, criu_resume(self->fd, 0x3fffffff));

	/* A process with no GPU pauses itself; a second PROCESS_INFO is fine */
	ASSERT_EQ(0, criu_image_op(self->fd, KFD_CRIU_OP_PROCESS_INFO, -1, &args));
	EXPECT_EQ(getpid(), (pid_t)args.pid);
	EXPECT_LT(0U, args.image_size);
	ASSERT_EQ(0, criu_image_op(self->fd, KFD_CRIU_OP_PROCESS_INFO, -1, &args));
	EXPECT_EQ(-EBUSY, criu_image_op(self->fd, KFD_CRIU_OP_RESTORE, memfd, &args));
	EXPECT_EQ(-EBADFD, criu_resume(self->fd, getpid()));
	EXPECT_EQ(-EBADF, criu_image_op(self->fd, KFD_CRIU_OP_CHECKPOINT, -1, &args));
	/* A read-only image fd cannot be written */
	EXPECT_EQ(-EBADF, checkpoint_to_readonly_fd(self->fd, memfd, &args));
	ASSERT_EQ(0, criu_image_op(self->fd, KFD_CRIU_OP_CHECKPOINT, memfd, &args));
	EXPECT_EQ((off_t)args.image_size, fd_size(memfd));
	ASSERT_EQ(0, criu_image_op(self->fd, KFD_CRIU_OP_UNPAUSE, -1, &args));
	EXPECT_EQ(-EBADFD, criu_image_op(self->fd, KFD_CRIU_OP_UNPAUSE, -1, &args));
	close(memfd);
}

/*
 * RESUME needs the target itself or its tracer, on top of the capability:
 * a caller that does not trace the target gets -EPERM, privileged or not.
 */
static void unprivileged_resume_main(int sock, pid_t target)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = { 0 };
	int fd = kfd_open();

	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(!prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0));
	CHILD_CHECK(!setresgid(65534, 65534, 65534));
	CHILD_CHECK(!setresuid(65534, 65534, 65534));
	data[CAP_TO_INDEX(CAP_CHECKPOINT_RESTORE)].effective =
		CAP_TO_MASK(CAP_CHECKPOINT_RESTORE);
	data[CAP_TO_INDEX(CAP_CHECKPOINT_RESTORE)].permitted =
		CAP_TO_MASK(CAP_CHECKPOINT_RESTORE);
	CHILD_CHECK(!syscall(SYS_capset, &hdr, data));
	CHILD_CHECK(criu_resume(fd, target) == -EPERM);
	sync_send(sock);
	_exit(0);
}

TEST(resume_needs_ptrace_access)
{
	struct image img;
	int memfd, sock, sv[2], kfd;
	pid_t pid, helper;
	char c;

	if (kfd_no_signal_events())
		SKIP(return, "%s", kfd_no_signal_events());
	dump_child(_metadata, &img);
	memfd = memfd_from(img.data, img.len);
	ASSERT_LE(0, memfd);
	pid = start_restoree(_metadata, &sock, memfd, &img);
	ASSERT_LT(0, pid);

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	helper = fork();
	ASSERT_LE(0, helper);
	if (!helper) {
		close(sv[0]);
		unprivileged_resume_main(sv[1], pid);
	}
	close(sv[1]);
	EXPECT_EQ(1, read(sv[0], &c, 1));
	EXPECT_EQ(0, wait_child(helper));
	close(sv[0]);

	/* Root with every capability, but not the target's tracer */
	kfd = kfd_open();
	ASSERT_LE(0, kfd);
	EXPECT_EQ(-EPERM, criu_resume(kfd, pid));
	close(kfd);

	/* The refused RESUMEs left the target restored: its tracer resumes it */
	resume_restoree(_metadata, pid, sock);
	close(memfd);
	free(img.data);
}

/*
 * A legacy RESUME of a process that image mode restored, here one without
 * GPUs and so without a GPU VM: -EBUSY, as for every legacy op on it, not
 * the -ESRCH of a process with no KFD state, which the CRIU amdgpu plugin
 * would take as nothing to resume. The process stays restored, and image
 * mode resumes it.
 */
TEST(legacy_resume_of_image_mode_restore)
{
	struct criu_args_v1_17 old;
	struct image img;
	int memfd, sock, kfd;
	pid_t pid;

	if (kfd_no_signal_events())
		SKIP(return, "%s", kfd_no_signal_events());
	dump_child(_metadata, &img);
	memfd = memfd_from(img.data, img.len);
	ASSERT_LE(0, memfd);
	pid = start_restoree(_metadata, &sock, memfd, &img);
	ASSERT_LT(0, pid);

	kfd = kfd_open();
	ASSERT_LE(0, kfd);
	memset(&old, 0, sizeof(old));
	old.op = KFD_CRIU_OP_RESUME;
	old.pid = pid;
	EXPECT_EQ(-EBUSY, kfd_ioctl(kfd, AMDKFD_IOC_CRIU_OP_V1_17, &old));
	close(kfd);

	resume_restoree(_metadata, pid, sock);
	close(memfd);
	free(img.data);
}

/* The owner of a /dev/kfd file: hands it out, then exits when told. */
static void exiting_owner_main(int sock)
{
	int fd = kfd_open();

	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(!send_fd(sock, fd, "", 1));
	sync_wait(sock);
	_exit(0);
}

/*
 * RESTORE through the file of an owner that exited: its ptrace parent may
 * still use the file (the owner is a traced zombie), but the address space
 * is gone. RESTORE must say so with -ESRCH before it reads any of the
 * image, not dereference the cleared mm of the process.
 */
TEST(restore_through_a_zombie_owners_file)
{
	struct kfd_ioctl_criu_args args;
	struct image img;
	int sv[2], kfd, memfd;
	siginfo_t info;
	char byte;
	pid_t pid;

	if (kfd_no_signal_events())
		SKIP(return, "%s", kfd_no_signal_events());
	dump_child(_metadata, &img);
	memfd = memfd_from(img.data, img.len);
	ASSERT_LE(0, memfd);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(sv[0]);
		exiting_owner_main(sv[1]);
	}
	close(sv[1]);
	kfd = recv_fd(sv[0], &byte, 1);
	ASSERT_LE(0, kfd);
	ASSERT_EQ(0, ptrace(PTRACE_SEIZE, pid, 0, 0));
	sync_send(sv[0]);
	ASSERT_EQ(0, waitid(P_PID, pid, &info, WEXITED | WNOWAIT));

	EXPECT_EQ(-ESRCH, criu_image_op(kfd, KFD_CRIU_OP_RESTORE, memfd, &args));
	EXPECT_EQ(0, args.image_size);
	EXPECT_EQ(0, lseek(memfd, 0, SEEK_CUR)) TH_LOG("RESTORE read the image");

	EXPECT_EQ(0, wait_child(pid));
	close(kfd);
	close(sv[0]);
	close(memfd);
	free(img.data);
}

/* The state letter of thread @tid of this process, from its stat file. */
static char thread_state(pid_t tid)
{
	char path[64], buf[512], *end;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	if (read_text(path, buf, sizeof(buf)))
		return '?';
	end = strrchr(buf, ')');
	return end && end[1] == ' ' ? end[2] : '?';
}

/* Waits (up to 10 s) until thread @tid sleeps uninterruptibly. */
static bool thread_blocked(pid_t tid)
{
	__u64 deadline = now_ms() + 10000;

	while (thread_state(tid) != 'D') {
		if (now_ms() > deadline)
			return false;
		usleep(10000);
	}
	usleep(50000);
	return true;
}

/**
 * struct criu_caller - a thread that runs one CRIU op on a kfd file
 * @thread: the thread
 * @tid: its thread id, 0 until it runs
 * @fd: the kfd file
 * @legacy: legacy arguments (the 1.17 struct), or NULL for image mode
 * @op: the image-mode op
 * @ret: the op's result
 */
struct criu_caller {
	pthread_t thread;
	pid_t tid;
	int fd;
	struct criu_args_v1_17 *legacy;
	__u32 op;
	int ret;
};

static void *criu_caller_thread(void *arg)
{
	struct criu_caller *c = arg;
	struct kfd_ioctl_criu_args args;

	__atomic_store_n(&c->tid, gettid(), __ATOMIC_SEQ_CST);
	if (c->legacy)
		c->ret = kfd_ioctl(c->fd, AMDKFD_IOC_CRIU_OP_V1_17, c->legacy);
	else
		c->ret = criu_image_op(c->fd, c->op, -1, &args);
	return NULL;
}

static bool criu_caller_start(struct criu_caller *c)
{
	c->tid = 0;
	if (pthread_create(&c->thread, NULL, criu_caller_thread, c))
		return false;
	while (!__atomic_load_n(&c->tid, __ATOMIC_SEQ_CST))
		usleep(1000);
	return true;
}

/* A page whose first touch, even by the kernel, waits for userfaultfd. */
static void *uffd_page(int *uffd)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	void *page;

	*uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (*uffd < 0 || ioctl(*uffd, UFFDIO_API, &api))
		return NULL;
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return NULL;
	reg.range.start = (uintptr_t)page;
	reg.range.len = 4096;
	return ioctl(*uffd, UFFDIO_REGISTER, &reg) ? NULL : page;
}

/*
 * A legacy RESTORE whose private data is a userfaultfd page holds
 * p->mutex until the page arrives. Behind it wait an image-mode
 * PROCESS_INFO and then a legacy PROCESS_INFO, in that order. The
 * PROCESS_INFO pauses the process first, so the legacy op that waited
 * must find it paused and refuse with -EBUSY: checked before the lock,
 * it would run on the paused process (and fail with -ENODEV here, as
 * the process has no GPU).
 */
static void legacy_waiter_main(void)
{
	struct criu_args_v1_17 restore = { 0 }, info = { 0 };
	struct criu_caller c[3] = { 0 };
	struct kfd_ioctl_criu_args args;
	struct uffdio_zeropage zero = { 0 };
	struct uffd_msg msg;
	__u64 devices[8] = { 0 };
	int fd = kfd_open(), uffd, i;
	void *page = uffd_page(&uffd);

	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(page);
	restore.op = KFD_CRIU_OP_RESTORE;
	restore.devices = (uintptr_t)devices;
	restore.num_devices = 1;
	restore.priv_data = (uintptr_t)page;
	restore.priv_data_size = 4096;
	info.op = KFD_CRIU_OP_PROCESS_INFO;
	for (i = 0; i < 3; i++)
		c[i].fd = fd;
	c[0].legacy = &restore;
	c[1].op = KFD_CRIU_OP_PROCESS_INFO;
	c[2].legacy = &info;

	/* The RESTORE holds the lock once its fault is reported */
	CHILD_CHECK(criu_caller_start(&c[0]));
	CHILD_CHECK(read(uffd, &msg, sizeof(msg)) == sizeof(msg));
	CHILD_CHECK(msg.event == UFFD_EVENT_PAGEFAULT);
	CHILD_CHECK(criu_caller_start(&c[1]) && thread_blocked(c[1].tid));
	CHILD_CHECK(criu_caller_start(&c[2]) && thread_blocked(c[2].tid));

	zero.range.start = (uintptr_t)page;
	zero.range.len = 4096;
	CHILD_CHECK(!ioctl(uffd, UFFDIO_ZEROPAGE, &zero));
	for (i = 0; i < 3; i++)
		CHILD_CHECK(!pthread_join(c[i].thread, NULL));
	fprintf(stderr, "legacy RESTORE %d, PROCESS_INFO %d, legacy PROCESS_INFO %d\n",
		c[0].ret, c[1].ret, c[2].ret);
	/* A zero version is refused before it changes anything */
	CHILD_CHECK(c[0].ret == -EINVAL);
	CHILD_CHECK(c[1].ret == 0);
	CHILD_CHECK(c[2].ret == -EBUSY);
	CHILD_CHECK(!criu_image_op(fd, KFD_CRIU_OP_UNPAUSE, -1, &args));
	_exit(0);
}

TEST(legacy_op_that_waited_for_the_lock)
{
	pid_t pid;

	if (kfd_unusable())
		SKIP(return, "%s", kfd_unusable());
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		legacy_waiter_main();
	EXPECT_EQ(0, wait_child(pid));
}

/* Without CAP_CHECKPOINT_RESTORE and CAP_SYS_ADMIN no op runs. */
/**
 * struct pipe_dump - a CHECKPOINT into a pipe, in a thread
 * @thread: the thread
 * @tid: its thread id, 0 until it runs
 * @kfd: the /dev/kfd file of the paused process
 * @pipe_w: the pipe's write end
 * @ret: the CHECKPOINT's result
 * @done: set once the CHECKPOINT returned
 */
struct pipe_dump {
	pthread_t thread;
	pid_t tid;
	int kfd;
	int pipe_w;
	int ret;
	int done;
};

static void *pipe_dump_thread(void *arg)
{
	struct pipe_dump *d = arg;
	struct kfd_ioctl_criu_args args;

	__atomic_store_n(&d->tid, gettid(), __ATOMIC_SEQ_CST);
	d->ret = criu_image_op(d->kfd, KFD_CRIU_OP_CHECKPOINT, d->pipe_w, &args);
	__atomic_store_n(&d->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * Waits (up to 10 s) until @d's CHECKPOINT has written into the pipe @r,
 * which nobody reads: the image is larger than the pipe, so from then on
 * the dump streams and cannot return until the pipe is drained (where
 * the writer sleeps, and how full the pipe's one page is then, depends
 * on how the kernel splits its writes, so neither is checked).
 */
static bool pipe_dump_blocked(struct pipe_dump *d, int r)
{
	__u64 deadline = now_ms() + 10000;
	int queued = 0;
	pid_t tid;

	for (;;) {
		tid = __atomic_load_n(&d->tid, __ATOMIC_SEQ_CST);
		if (ioctl(r, FIONREAD, &queued))
			return false;
		if (tid && queued > 0)
			return !__atomic_load_n(&d->done, __ATOMIC_SEQ_CST);
		if (now_ms() > deadline)
			return false;
		usleep(10000);
	}
}

/* Reads pipe @r until @d's CHECKPOINT returned; the bytes read */
static size_t pipe_drain(struct pipe_dump *d, int r)
{
	char buf[4096];
	size_t total = 0;
	ssize_t n;

	fcntl(r, F_SETFL, O_NONBLOCK);
	for (;;) {
		n = read(r, buf, sizeof(buf));
		if (n > 0) {
			total += n;
			continue;
		}
		if (__atomic_load_n(&d->done, __ATOMIC_SEQ_CST))
			break;
		usleep(1000);
	}
	while ((n = read(r, buf, sizeof(buf))) > 0)
		total += n;
	return total;
}

/*
 * UNPAUSE while a CHECKPOINT of the process streams its image into a
 * pipe that nobody reads: -EBUSY, and the process stays paused, since
 * the dump writes with no lock held and would otherwise copy a running
 * process. Once the pipe is drained the dump completes, and UNPAUSE
 * resumes the process. Its events make the image larger than the pipe.
 */
TEST(unpause_while_checkpoint_streams)
{
	struct kfd_ioctl_criu_args args;
	struct pipe_dump d = { 0 };
	int p[2], size, i;
	size_t total;
	__u32 id;

	if (kfd_no_signal_events())
		SKIP(return, "%s", kfd_no_signal_events());
	d.kfd = kfd_open();
	ASSERT_LE(0, d.kfd);
	for (i = 0; i < 64; i++)
		ASSERT_EQ(0, create_event(d.kfd, KFD_IOC_EVENT_SIGNAL, false, &id));
	ASSERT_EQ(0, criu_image_op(d.kfd, KFD_CRIU_OP_PROCESS_INFO, -1, &args));
	ASSERT_LT(4096U, args.image_size);
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	size = fcntl(p[1], F_SETPIPE_SZ, 4096);
	ASSERT_LE(4096, size);
	ASSERT_GT(args.image_size, (__u64)size);
	d.pipe_w = p[1];
	ASSERT_EQ(0, pthread_create(&d.thread, NULL, pipe_dump_thread, &d));

	EXPECT_TRUE(pipe_dump_blocked(&d, p[0]));
	EXPECT_EQ(-EBUSY, criu_image_op(d.kfd, KFD_CRIU_OP_UNPAUSE, -1, &args));

	total = pipe_drain(&d, p[0]);
	ASSERT_EQ(0, pthread_join(d.thread, NULL));
	EXPECT_EQ(0, d.ret);
	EXPECT_LT(4096U, total);
	EXPECT_EQ(0, criu_image_op(d.kfd, KFD_CRIU_OP_UNPAUSE, -1, &args));
	EXPECT_EQ(-EBADFD, criu_image_op(d.kfd, KFD_CRIU_OP_UNPAUSE, -1, &args));
	close(p[0]);
	close(p[1]);
	close(d.kfd);
}

TEST(ops_need_capability)
{
	pid_t pid;

	if (kfd_unusable())
		SKIP(return, "%s", kfd_unusable());
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct __user_cap_header_struct hdr = {
			.version = _LINUX_CAPABILITY_VERSION_3,
		};
		struct __user_cap_data_struct data[2] = { 0 };
		struct kfd_ioctl_criu_args args;
		struct criu_args_v1_17 old = { .op = KFD_CRIU_OP_PROCESS_INFO };
		int fd = kfd_open();

		CHILD_CHECK(fd >= 0);
		CHILD_CHECK(!syscall(SYS_capset, &hdr, data));
		CHILD_CHECK(criu_image_op(fd, KFD_CRIU_OP_PROCESS_INFO, -1, &args) ==
			    -EACCES);
		CHILD_CHECK(criu_resume(fd, getpid()) == -EACCES);
		CHILD_CHECK(kfd_ioctl(fd, AMDKFD_IOC_CRIU_OP_V1_17, &old) == -EACCES);
		_exit(0);
	}
	EXPECT_EQ(0, wait_child(pid));
}

/* Another process's kfd file is refused unless the caller traces it. */
TEST(foreign_fd_needs_ptrace)
{
	struct kfd_ioctl_criu_args args;
	struct events_plan plan;
	int sv[2], kfd;
	pid_t pid;

	if (kfd_no_signal_events())
		SKIP(return, "%s", kfd_no_signal_events());
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(sv[0]);
		dumpee_main(sv[1]);
	}
	close(sv[1]);
	kfd = recv_fd(sv[0], &plan, sizeof(plan));
	ASSERT_LE(0, kfd);
	EXPECT_EQ(-EBADF, criu_image_op(kfd, KFD_CRIU_OP_PROCESS_INFO, -1, &args));
	sync_send(sv[0]);
	EXPECT_EQ(0, wait_child(pid));
	close(kfd);
	close(sv[0]);
}

/*
 * Restores @image_fd, whose first event (auto-reset, signaled) has the
 * largest age an image may carry, resumes itself and signals the event:
 * the age goes on counting, with no wrap for set_event() to warn about.
 * A dump then carries the age past the bound: what RESTORE accepted, a
 * later CHECKPOINT of the process must not refuse.
 */
static void max_age_restoree_main(int image_fd, __u32 id)
{
	struct kfd_ioctl_criu_args args;
	__u32 result;
	__u64 age = 1;
	int fd = kfd_open(), memfd = memfd_create("kfd-criu-image", MFD_CLOEXEC);
	unsigned char *dumped;
	size_t off, size;

	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(!criu_image_op(fd, KFD_CRIU_OP_RESTORE, image_fd, &args));
	CHILD_CHECK(!criu_resume(fd, getpid()));
	CHILD_CHECK(!wait_event(fd, id, &age, &result));
	CHILD_CHECK(age == MAX_EVENT_AGE);
	CHILD_CHECK(!event_op(fd, AMDKFD_IOC_SET_EVENT, id));
	CHILD_CHECK(!wait_event(fd, id, &age, &result));
	CHILD_CHECK(age == MAX_EVENT_AGE + 1);
	CHILD_CHECK(memfd >= 0);
	CHILD_CHECK(!criu_image_op(fd, KFD_CRIU_OP_PROCESS_INFO, -1, &args));
	CHILD_CHECK(!criu_image_op(fd, KFD_CRIU_OP_CHECKPOINT, memfd, &args));
	size = args.image_size;
	CHILD_CHECK(!criu_image_op(fd, KFD_CRIU_OP_UNPAUSE, -1, &args));
	dumped = malloc(size);
	CHILD_CHECK(size && dumped);
	CHILD_CHECK(pread(memfd, dumped, size, 0) == (ssize_t)size);
	off = find_record(dumped, size, REC_EVENT);
	CHILD_CHECK(off && get_le64(dumped + off + RECORD_HEADER_SIZE +
				    EVENT_AGE_OFF) == MAX_EVENT_AGE + 1);
	_exit(0);
}

TEST(event_age_at_the_bound_keeps_counting)
{
	struct image img;
	int memfd;
	pid_t pid;

	if (kfd_no_signal_events())
		SKIP(return, "%s", kfd_no_signal_events());
	dump_child(_metadata, &img);
	set_first_event_age(img.data, img.len, MAX_EVENT_AGE);
	memfd = memfd_from(img.data, img.len);
	ASSERT_LE(0, memfd);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		max_age_restoree_main(memfd, img.plan.id[AUTO_SET2]);
	EXPECT_EQ(0, wait_child(pid));
	close(memfd);
	free(img.data);
}

/*
 * An image-mode op whose arguments lie on a read-only page. The kernel
 * can read them but not return its results.
 */
static int criu_op_readonly(int fd, __u32 op, int image_fd, pid_t pid)
{
	long page = sysconf(_SC_PAGESIZE);
	struct kfd_ioctl_criu_args *args;
	int ret;

	args = mmap(NULL, page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (args == MAP_FAILED)
		abort();	/* not an answer of the kernel's */
	args->op = IMAGE_OP(op);
	args->image_fd = image_fd;
	args->pid = pid;
	if (mprotect(args, page, PROT_READ))
		abort();
	ret = kfd_ioctl(fd, AMDKFD_IOC_CRIU_OP, args);
	munmap(args, page);
	return ret;
}

/* RESTORE and RESUME with read-only arguments, in a fresh process. */
static void readonly_restoree_main(int image_fd)
{
	struct kfd_ioctl_criu_args args;
	int fd = kfd_open();

	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(criu_op_readonly(fd, KFD_CRIU_OP_RESTORE, image_fd, 0) == -EFAULT);
	/* Nothing restored, not a byte of the image read */
	check_no_state(fd);
	CHILD_CHECK(lseek(image_fd, 0, SEEK_CUR) == 0);
	CHILD_CHECK(!criu_image_op(fd, KFD_CRIU_OP_RESTORE, image_fd, &args));
	CHILD_CHECK(criu_op_readonly(fd, KFD_CRIU_OP_RESUME, -1, getpid()) == -EFAULT);
	/* Still restored and not resumed */
	CHILD_CHECK(!criu_resume(fd, getpid()));
	_exit(0);
}

/* A failed copy of the results means that the op did nothing. */
TEST_F(kfd, readonly_args_change_nothing)
{
	struct kfd_ioctl_criu_args args;
	int memfd = memfd_create("kfd-criu-image", MFD_CLOEXEC);
	__u32 id;
	pid_t pid;

	if (kfd_no_signal_events())
		SKIP(return, "%s", kfd_no_signal_events());

	ASSERT_LE(0, memfd);
	ASSERT_EQ(0, create_event(self->fd, KFD_IOC_EVENT_SIGNAL, true, &id));
	EXPECT_EQ(-EFAULT, criu_op_readonly(self->fd, KFD_CRIU_OP_PROCESS_INFO, -1, 0));
	/* Not paused */
	EXPECT_EQ(-EBADFD, criu_image_op(self->fd, KFD_CRIU_OP_UNPAUSE, -1, &args));

	ASSERT_EQ(0, criu_image_op(self->fd, KFD_CRIU_OP_PROCESS_INFO, -1, &args));
	EXPECT_EQ(-EFAULT, criu_op_readonly(self->fd, KFD_CRIU_OP_CHECKPOINT, memfd, 0));
	EXPECT_EQ(0, fd_size(memfd));
	EXPECT_EQ(-EFAULT, criu_op_readonly(self->fd, KFD_CRIU_OP_UNPAUSE, -1, 0));
	/* Still paused: CHECKPOINT needs that */
	ASSERT_EQ(0, criu_image_op(self->fd, KFD_CRIU_OP_CHECKPOINT, memfd, &args));
	EXPECT_EQ((off_t)args.image_size, fd_size(memfd));
	ASSERT_EQ(0, criu_image_op(self->fd, KFD_CRIU_OP_UNPAUSE, -1, &args));

	ASSERT_EQ(0, lseek(memfd, 0, SEEK_SET));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		readonly_restoree_main(memfd);
	EXPECT_EQ(0, wait_child(pid));
	close(memfd);
}

/* Restores from @image_fd, which fails with @err and leaves no state. */
static void failing_restoree_main(int image_fd, int err)
{
	struct kfd_ioctl_criu_args args;
	int fd = kfd_open();
	int ret;

	CHILD_CHECK(fd >= 0);
	ret = criu_image_op(fd, KFD_CRIU_OP_RESTORE, image_fd, &args);
	if (ret != -err) {
		fprintf(stderr, "RESTORE returned %d, expected %d\n", ret, -err);
		_exit(1);
	}
	check_no_state(fd);
	_exit(0);
}

static int restore_in_child(int image_fd, int err)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid)
		failing_restoree_main(image_fd, err);
	return wait_child(pid);
}

/* A socket that times out: before the image, and half-way through it */
TEST(image_socket_timeout)
{
	struct timeval tv = { .tv_usec = 100000 };
	struct image img;
	size_t half;
	int sv[2];

	if (kfd_no_signal_events())
		SKIP(return, "%s", kfd_no_signal_events());
	dump_child(_metadata, &img);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	ASSERT_EQ(0, setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	EXPECT_EQ(0, restore_in_child(sv[0], ETIMEDOUT)) TH_LOG("no data");
	/* Less than the socket buffer takes, so the write cannot block */
	half = img.len / 2 < 4096 ? img.len / 2 : 4096;
	ASSERT_EQ((ssize_t)half, write(sv[1], img.data, half));
	EXPECT_EQ(0, restore_in_child(sv[0], ETIMEDOUT)) TH_LOG("half an image");
	close(sv[0]);
	close(sv[1]);
	free(img.data);
}

/* A TCP socket that is not connected gives the file's own error. */
TEST(image_socket_not_connected)
{
	int sock;

	if (kfd_unusable())
		SKIP(return, "%s", kfd_unusable());
	sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_LE(0, sock);
	EXPECT_EQ(0, restore_in_child(sock, ENOTCONN));
	close(sock);
}

/*
 * A file whose own error RESTORE also uses for an image: a signalfd
 * refuses the 88-byte read of the header with -EINVAL, which would read
 * as "malformed image". RESTORE returns -EIO instead.
 */
TEST(image_file_error_is_eio)
{
	sigset_t mask;
	int sfd;

	if (kfd_unusable())
		SKIP(return, "%s", kfd_unusable());
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	ASSERT_EQ(0, sigprocmask(SIG_BLOCK, &mask, NULL));
	ASSERT_EQ(0, raise(SIGUSR1));	/* a read never blocks */
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	ASSERT_LE(0, sfd);
	EXPECT_EQ(0, restore_in_child(sfd, EIO));
	close(sfd);
}

/**
 * struct nonblock_switch - what the thread that switches the pipe needs
 * @pipe: the image pipe
 * @data: 16 bytes of the image to feed it
 * @ok: the bytes were fed and the pipe switched in between
 */
struct nonblock_switch {
	int pipe[2];
	const unsigned char *data;
	bool ok;
};

/*
 * Feeds RESTORE the first 8 bytes while the pipe blocks and waits until
 * it took them, so RESTORE is past its checks of the file; then makes the
 * pipe non-blocking behind its back and feeds 8 more: the next read of
 * the stream would block.
 */
static void *nonblock_switch_thread(void *arg)
{
	struct nonblock_switch *sw = arg;
	__u64 deadline = now_ms() + 10000;
	int queued = 8;

	if (write(sw->pipe[1], sw->data, 8) != 8)
		return NULL;
	while (queued && now_ms() < deadline) {
		usleep(10000);
		if (ioctl(sw->pipe[0], FIONREAD, &queued))
			return NULL;
	}
	if (queued || fcntl(sw->pipe[0], F_SETFL, O_NONBLOCK))
		return NULL;
	sw->ok = write(sw->pipe[1], sw->data + 8, 8) == 8;
	return NULL;
}

static void nonblock_restoree_main(const unsigned char *data)
{
	struct nonblock_switch sw = { .data = data };
	struct kfd_ioctl_criu_args args;
	pthread_t thread;
	int fd = kfd_open();
	int ret;

	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(!pipe2(sw.pipe, O_CLOEXEC));
	CHILD_CHECK(!pthread_create(&thread, NULL, nonblock_switch_thread, &sw));
	ret = criu_image_op(fd, KFD_CRIU_OP_RESTORE, sw.pipe[0], &args);
	CHILD_CHECK(!pthread_join(thread, NULL));
	CHILD_CHECK(sw.ok);
	if (ret != -ETIMEDOUT) {
		fprintf(stderr, "RESTORE returned %d, expected %d\n", ret, -ETIMEDOUT);
		_exit(1);
	}
	check_no_state(fd);
	_exit(0);
}

/* Another holder of the pipe sets O_NONBLOCK while RESTORE reads it. */
TEST(image_pipe_turns_nonblocking)
{
	struct image img;
	pid_t pid;

	if (kfd_no_signal_events())
		SKIP(return, "%s", kfd_no_signal_events());
	dump_child(_metadata, &img);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		nonblock_restoree_main(img.data);
	EXPECT_EQ(0, wait_child(pid));
	free(img.data);
}

/* Where the image goes in a file that holds other bytes before it */
#define IMAGE_OFFSET	8192
/* The file position, which no op may use or move */
#define FILE_POS	100

/* A regular file of IMAGE_OFFSET bytes of @junk, at position FILE_POS */
static int junk_file(unsigned char *junk)
{
	char path[] = "/tmp/kfd-criu-offset-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0)
		return -1;
	unlink(path);
	memset(junk, 0xa5, IMAGE_OFFSET);
	if (write(fd, junk, IMAGE_OFFSET) != IMAGE_OFFSET ||
	    lseek(fd, FILE_POS, SEEK_SET) != FILE_POS) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * CHECKPOINT at image_offset of a regular file writes there, as pwrite(2)
 * would, and leaves the file position and the bytes before it alone.
 */
TEST(checkpoint_at_an_offset)
{
	unsigned char junk[IMAGE_OFFSET], before[IMAGE_OFFSET];
	struct events_plan self = { 0 };
	struct kfd_ioctl_criu_args args;
	struct stat st;
	int kfd, fd;

	if (kfd_no_signal_events())
		SKIP(return, "%s", kfd_no_signal_events());
	kfd = kfd_open();
	ASSERT_LE(0, kfd);
	populate_events(kfd, &self);
	fd = junk_file(junk);
	ASSERT_LE(0, fd);

	ASSERT_EQ(0, criu_image_op(kfd, KFD_CRIU_OP_PROCESS_INFO, -1, &args));
	EXPECT_EQ(0, criu_image_op_at(kfd, KFD_CRIU_OP_CHECKPOINT, fd,
				      IMAGE_OFFSET, &args));
	EXPECT_EQ(FILE_POS, lseek(fd, 0, SEEK_CUR))
		TH_LOG("CHECKPOINT moved the file position");
	ASSERT_EQ(0, fstat(fd, &st));
	EXPECT_EQ(IMAGE_OFFSET + args.image_size, (__u64)st.st_size)
		TH_LOG("the image of %llu bytes is not at image_offset",
		       (unsigned long long)args.image_size);
	ASSERT_EQ(IMAGE_OFFSET, pread(fd, before, IMAGE_OFFSET, 0));
	EXPECT_EQ(0, memcmp(before, junk, IMAGE_OFFSET))
		TH_LOG("CHECKPOINT wrote before image_offset");
	ASSERT_EQ(0, criu_image_op(kfd, KFD_CRIU_OP_UNPAUSE, -1, &args));
	close(fd);
	close(kfd);
}

/*
 * CHECKPOINT refuses a file opened for appending, where every write goes
 * to the end of the file whatever the offset: the image would not be at
 * image_offset. It writes nothing, and the process stays paused, so a
 * CHECKPOINT into the same file without O_APPEND then works.
 */
TEST(checkpoint_refuses_append)
{
	unsigned char junk[IMAGE_OFFSET], before[IMAGE_OFFSET];
	struct events_plan self = { 0 };
	struct kfd_ioctl_criu_args args;
	struct stat st;
	int kfd, fd;

	if (kfd_no_signal_events())
		SKIP(return, "%s", kfd_no_signal_events());
	kfd = kfd_open();
	ASSERT_LE(0, kfd);
	populate_events(kfd, &self);
	fd = junk_file(junk);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fcntl(fd, F_SETFL, O_APPEND));

	ASSERT_EQ(0, criu_image_op(kfd, KFD_CRIU_OP_PROCESS_INFO, -1, &args));
	EXPECT_EQ(-EINVAL, criu_image_op_at(kfd, KFD_CRIU_OP_CHECKPOINT, fd, 0,
					    &args));
	ASSERT_EQ(0, fstat(fd, &st));
	EXPECT_EQ(IMAGE_OFFSET, st.st_size)
		TH_LOG("CHECKPOINT appended %lld bytes",
		       (long long)st.st_size - IMAGE_OFFSET);
	ASSERT_EQ(IMAGE_OFFSET, pread(fd, before, IMAGE_OFFSET, 0));
	EXPECT_EQ(0, memcmp(before, junk, IMAGE_OFFSET))
		TH_LOG("CHECKPOINT wrote into the file");

	ASSERT_EQ(0, fcntl(fd, F_SETFL, 0));
	EXPECT_EQ(0, criu_image_op_at(kfd, KFD_CRIU_OP_CHECKPOINT, fd,
				      IMAGE_OFFSET, &args));
	ASSERT_EQ(0, fstat(fd, &st));
	EXPECT_EQ(IMAGE_OFFSET + args.image_size, (__u64)st.st_size);
	ASSERT_EQ(0, criu_image_op(kfd, KFD_CRIU_OP_UNPAUSE, -1, &args));
	close(fd);
	close(kfd);
}

/* Refuses offset 1 of a pipe's read end, then takes nothing of it */
static void stream_offset_restoree_main(int image_fd)
{
	struct kfd_ioctl_criu_args args;
	int fd = kfd_open(), queued = -1;

	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(criu_image_op_at(fd, KFD_CRIU_OP_RESTORE, image_fd, 1,
				     &args) == -ESPIPE);
	check_no_state(fd);
	CHILD_CHECK(!ioctl(image_fd, FIONREAD, &queued) && queued == 1);
	_exit(0);
}

/* A pipe has no positional I/O: image_offset must be 0 there. */
TEST(stream_takes_only_offset_zero)
{
	struct events_plan self = { 0 };
	struct kfd_ioctl_criu_args args;
	int kfd, pipefd[2], queued = -1;
	pid_t pid;

	if (kfd_no_signal_events())
		SKIP(return, "%s", kfd_no_signal_events());
	kfd = kfd_open();
	ASSERT_LE(0, kfd);
	populate_events(kfd, &self);
	ASSERT_EQ(0, pipe2(pipefd, O_CLOEXEC));
	/* Room for the whole image, should a dump ignore the offset */
	fcntl(pipefd[1], F_SETPIPE_SZ, 1 << 20);

	ASSERT_EQ(0, criu_image_op(kfd, KFD_CRIU_OP_PROCESS_INFO, -1, &args));
	EXPECT_EQ(-ESPIPE, criu_image_op_at(kfd, KFD_CRIU_OP_CHECKPOINT,
					    pipefd[1], 1, &args));
	ASSERT_EQ(0, ioctl(pipefd[0], FIONREAD, &queued));
	EXPECT_EQ(0, queued) TH_LOG("CHECKPOINT wrote %d bytes", queued);
	ASSERT_EQ(0, criu_image_op(kfd, KFD_CRIU_OP_UNPAUSE, -1, &args));

	ASSERT_EQ(1, write(pipefd[1], "x", 1));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		stream_offset_restoree_main(pipefd[0]);
	EXPECT_EQ(0, wait_child(pid));
	close(pipefd[0]);
	close(pipefd[1]);
	close(kfd);
}

/*
 * RESTOREs the image at IMAGE_OFFSET of @image_fd, whose first bytes are
 * junk, and leaves the file position alone; then waits for RESUME.
 */
static void offset_restoree_main(int sock, int image_fd, const struct image *img)
{
	struct kfd_ioctl_criu_args args;
	int fd = kfd_open();

	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(!criu_image_op_at(fd, KFD_CRIU_OP_RESTORE, image_fd,
				      IMAGE_OFFSET, &args));
	CHILD_CHECK(args.image_size == img->len);
	CHILD_CHECK(lseek(image_fd, 0, SEEK_CUR) == FILE_POS);
	sync_send(sock);
	sync_wait(sock);	/* resumed */
	check_restored(fd, &img->plan);
	_exit(0);
}

/* RESTORE at image_offset of a file that holds junk before it */
TEST(restore_at_an_offset)
{
	unsigned char junk[IMAGE_OFFSET];
	struct image img;
	int fd, sv[2];
	pid_t pid;
	char c;

	if (kfd_no_signal_events())
		SKIP(return, "%s", kfd_no_signal_events());
	dump_child(_metadata, &img);
	fd = junk_file(junk);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)img.len, pwrite(fd, img.data, img.len, IMAGE_OFFSET));

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(sv[0]);
		offset_restoree_main(sv[1], fd, &img);
	}
	close(sv[1]);
	ASSERT_EQ(1, read(sv[0], &c, 1)) TH_LOG("RESTORE at image_offset failed");
	resume_restoree(_metadata, pid, sv[0]);
	close(fd);
	free(img.data);
}

TEST_HARNESS_MAIN
