// SPDX-License-Identifier: GPL-2.0 OR MIT

/**
 * DOC: KUnit tests of the CRIU image stream's errnos
 *
 * Included at the end of kfd_criu_file.c, so its static helpers are
 * reachable. Suite kfd_criu_file checks what the ops return for each
 * result of a read or write of the caller's file: end of file, a
 * restartable interruption, and the file's own errors, which pass
 * through only where they can mean nothing but the image file; and where
 * the stream starts, by the caller's offset, in files of each kind.
 */

#include <kunit/test.h>

static void kfd_criu_test_io_errno(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, kfd_criu_io_errno(0, -ENODATA), -ENODATA);
	KUNIT_EXPECT_EQ(test, kfd_criu_io_errno(0, -EIO), -EIO);
	KUNIT_EXPECT_EQ(test, kfd_criu_io_errno(-ERESTARTSYS, -EIO), -EINTR);
	KUNIT_EXPECT_EQ(test, kfd_criu_io_errno(-ERESTARTNOINTR, -EIO), -EINTR);
	KUNIT_EXPECT_EQ(test, kfd_criu_io_errno(-ERESTARTNOHAND, -EIO), -EINTR);
	KUNIT_EXPECT_EQ(test, kfd_criu_io_errno(-ERESTART_RESTARTBLOCK, -EIO), -EINTR);
	KUNIT_EXPECT_EQ(test, kfd_criu_io_errno(-EAGAIN, -EIO), -EAGAIN);
	KUNIT_EXPECT_EQ(test, kfd_criu_io_errno(-EPIPE, -EIO), -EPIPE);
}

static void kfd_criu_test_file_errno(struct kunit *test)
{
	/* End of file: the op's own errno */
	KUNIT_EXPECT_EQ(test, kfd_criu_file_errno(0, -ENODATA, false), -ENODATA);
	KUNIT_EXPECT_EQ(test, kfd_criu_file_errno(0, -EIO, true), -EIO);
	/* Never -EAGAIN: the call cannot be repeated on a consumed stream */
	KUNIT_EXPECT_EQ(test, kfd_criu_file_errno(-EAGAIN, -EIO, true), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, kfd_criu_file_errno(-EAGAIN, -ENODATA, false),
			-ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, kfd_criu_file_errno(-ERESTARTSYS, -EIO, true), -EINTR);
	KUNIT_EXPECT_EQ(test, kfd_criu_file_errno(-ENOTCONN, -ENODATA, false),
			-ENOTCONN);
	/* A full disk is the file's only on a write */
	KUNIT_EXPECT_EQ(test, kfd_criu_file_errno(-ENOSPC, -EIO, true), -ENOSPC);
	KUNIT_EXPECT_EQ(test, kfd_criu_file_errno(-ENOSPC, -ENODATA, false), -EIO);
	KUNIT_EXPECT_EQ(test, kfd_criu_file_errno(-EPIPE, -EIO, true), -EPIPE);
	KUNIT_EXPECT_EQ(test, kfd_criu_file_errno(-EPIPE, -ENODATA, false), -EIO);
	/* Errnos the ops give meanings of their own */
	KUNIT_EXPECT_EQ(test, kfd_criu_file_errno(-EBUSY, -EIO, true), -EIO);
	KUNIT_EXPECT_EQ(test, kfd_criu_file_errno(-EINVAL, -ENODATA, false), -EIO);
}

/* Only the f_mode bits matter to kfd_criu_file_start() */
static int kfd_criu_test_start(struct kfd_criu_file_io *fio, struct file *file,
			       fmode_t f_mode, fmode_t mode, u64 offset)
{
	memset(fio, 0, sizeof(*fio));
	file->f_mode = f_mode;
	file->f_pos = 7;
	fio->file = file;
	return kfd_criu_file_start(fio, mode, offset);
}

static void kfd_criu_test_file_start(struct kunit *test)
{
	const fmode_t regular = FMODE_READ | FMODE_WRITE | FMODE_LSEEK |
				FMODE_PREAD | FMODE_PWRITE | FMODE_ATOMIC_POS;
	struct kfd_criu_file_io fio;
	struct file *file;

	file = kunit_kzalloc(test, sizeof(*file), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, file);

	/* A regular file: at the offset, whatever its position */
	KUNIT_EXPECT_EQ(test, kfd_criu_test_start(&fio, file, regular,
						  FMODE_WRITE, 4096), 0);
	KUNIT_EXPECT_EQ(test, fio.pos, 4096);
	KUNIT_EXPECT_PTR_EQ(test, fio.ppos, &fio.pos);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_start(&fio, file, regular,
						  FMODE_READ, 0), 0);
	KUNIT_EXPECT_EQ(test, fio.pos, 0);
	KUNIT_EXPECT_EQ(test, file->f_pos, 7);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_start(&fio, file, regular,
						  FMODE_READ, (u64)LLONG_MAX + 1),
			-EINVAL);
	/* Positional for the op's direction only */
	KUNIT_EXPECT_EQ(test, kfd_criu_test_start(&fio, file, FMODE_PREAD,
						  FMODE_WRITE, 1), -ESPIPE);

	/* A pipe: no position, offset 0 only */
	KUNIT_EXPECT_EQ(test, kfd_criu_test_start(&fio, file, FMODE_STREAM,
						  FMODE_WRITE, 0), 0);
	KUNIT_EXPECT_NULL(test, fio.ppos);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_start(&fio, file, FMODE_STREAM,
						  FMODE_READ, 1), -ESPIPE);

	/* A socket: neither, a position of the op's own from 0 */
	KUNIT_EXPECT_EQ(test, kfd_criu_test_start(&fio, file, 0, FMODE_READ, 0),
			0);
	KUNIT_EXPECT_PTR_EQ(test, fio.ppos, &fio.pos);
	KUNIT_EXPECT_EQ(test, fio.pos, 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_start(&fio, file, 0, FMODE_WRITE,
						  SZ_4K), -ESPIPE);
}

static struct kunit_case kfd_criu_file_test_cases[] = {
	KUNIT_CASE(kfd_criu_test_io_errno),
	KUNIT_CASE(kfd_criu_test_file_errno),
	KUNIT_CASE(kfd_criu_test_file_start),
	{}
};

static struct kunit_suite kfd_criu_file_suite = {
	.name = "kfd_criu_file",
	.test_cases = kfd_criu_file_test_cases,
};

kunit_test_suite(kfd_criu_file_suite);
