// SPDX-License-Identifier: GPL-2.0 OR MIT

/**
 * DOC: KUnit tests of the CRIU image stream's errnos
 *
 * Included at the end of kfd_criu_file.c, so its static helpers are
 * reachable. Suite kfd_criu_file checks what the ops return for each
 * result of a read or write of the caller's file: end of file, a
 * restartable interruption, and the file's own errors, which pass
 * through only where they can mean nothing but the image file; the file
 * flags the ops refuse up front; and where the stream starts, by the
 * caller's offset, in files of each kind.
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

/* Iterators that kfd_criu_file_check() looks for and never calls */
static ssize_t kfd_criu_test_no_iter(struct kiocb *iocb, struct iov_iter *iter)
{
	return -EIO;
}

static const struct file_operations kfd_criu_test_iter_fops = {
	.read_iter = kfd_criu_test_no_iter,
	.write_iter = kfd_criu_test_no_iter,
};

static int kfd_criu_test_check(struct file *file, unsigned int f_flags,
			       fmode_t mode)
{
	file->f_flags = f_flags;
	return kfd_criu_file_check(file, mode);
}

/*
 * The file flags the stream cannot honour are refused up front: O_APPEND
 * would put a CHECKPOINT's image at the end of the file, not at the
 * caller's offset, and means nothing to RESTORE.
 */
static void kfd_criu_test_file_check(struct kunit *test)
{
	struct file *file;

	file = kunit_kzalloc(test, sizeof(*file), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, file);
	file->f_op = &kfd_criu_test_iter_fops;
	file->f_mode = FMODE_READ | FMODE_WRITE | FMODE_CAN_READ |
		       FMODE_CAN_WRITE | FMODE_PREAD | FMODE_PWRITE;

	KUNIT_EXPECT_EQ(test, kfd_criu_test_check(file, O_RDWR, FMODE_WRITE), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_check(file, O_RDWR, FMODE_READ), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_check(file, O_RDWR | O_APPEND,
						  FMODE_WRITE), -EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_check(file, O_WRONLY | O_APPEND,
						  FMODE_WRITE), -EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_check(file, O_RDWR | O_APPEND,
						  FMODE_READ), 0);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_check(file, O_RDWR | O_NONBLOCK,
						  FMODE_READ), -EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_check(file, O_RDWR | O_DIRECT,
						  FMODE_WRITE), -EINVAL);

	file->f_mode &= ~(FMODE_WRITE | FMODE_CAN_WRITE);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_check(file, O_RDONLY, FMODE_WRITE),
			-EBADF);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_check(file, O_RDONLY, FMODE_READ), 0);
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
	const fmode_t stream = FMODE_READ | FMODE_WRITE | FMODE_STREAM;
	const fmode_t tty = FMODE_READ | FMODE_WRITE;
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

	/* A pipe or a socket, which stream_open() set up: offset 0 only */
	KUNIT_EXPECT_EQ(test, kfd_criu_test_start(&fio, file, stream,
						  FMODE_WRITE, 0), 0);
	KUNIT_EXPECT_NULL(test, fio.ppos);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_start(&fio, file, stream,
						  FMODE_READ, 1), -ESPIPE);

	/*
	 * A tty, which nonseekable_open() left without positional I/O and
	 * which is no FMODE_STREAM: a position of the op's own from 0
	 */
	KUNIT_EXPECT_EQ(test, kfd_criu_test_start(&fio, file, tty, FMODE_READ,
						  0), 0);
	KUNIT_EXPECT_PTR_EQ(test, fio.ppos, &fio.pos);
	KUNIT_EXPECT_EQ(test, fio.pos, 0);
	KUNIT_EXPECT_EQ(test, file->f_pos, 7);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_start(&fio, file, tty, FMODE_WRITE,
						  SZ_4K), -ESPIPE);
}

/*
 * rw_verify_area() refuses a chunk that would pass LLONG_MAX with -EINVAL,
 * which the stream would report as -EIO: an offset less than a chunk
 * below it is refused up front, and a chunk never crosses it.
 */
static void kfd_criu_test_file_near_max(struct kunit *test)
{
	const fmode_t regular = FMODE_READ | FMODE_WRITE | FMODE_PREAD |
				FMODE_PWRITE;
	struct kfd_criu_file_io fio;
	struct file *file;

	file = kunit_kzalloc(test, sizeof(*file), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, file);

	KUNIT_EXPECT_EQ(test, kfd_criu_test_start(&fio, file, regular,
						  FMODE_WRITE,
						  LLONG_MAX - SZ_64K + 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_start(&fio, file, regular,
						  FMODE_READ, LLONG_MAX),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kfd_criu_test_start(&fio, file, regular,
						  FMODE_WRITE,
						  LLONG_MAX - SZ_64K), 0);
	KUNIT_EXPECT_EQ(test, fio.pos, LLONG_MAX - SZ_64K);

	/* Later chunks stop at LLONG_MAX; a stream has no position */
	KUNIT_EXPECT_EQ(test, kfd_criu_file_chunk(&fio, SZ_1M), SZ_64K);
	fio.pos = LLONG_MAX - 10;
	KUNIT_EXPECT_EQ(test, kfd_criu_file_chunk(&fio, SZ_1M), 10);
	KUNIT_EXPECT_EQ(test, kfd_criu_file_chunk(&fio, 4), 4);
	fio.pos = LLONG_MAX;
	KUNIT_EXPECT_EQ(test, kfd_criu_file_chunk(&fio, SZ_1M), 0);
	fio.ppos = NULL;
	KUNIT_EXPECT_EQ(test, kfd_criu_file_chunk(&fio, SZ_1M), SZ_64K);
}

static struct kunit_case kfd_criu_file_test_cases[] = {
	KUNIT_CASE(kfd_criu_test_io_errno),
	KUNIT_CASE(kfd_criu_test_file_errno),
	KUNIT_CASE(kfd_criu_test_file_check),
	KUNIT_CASE(kfd_criu_test_file_start),
	KUNIT_CASE(kfd_criu_test_file_near_max),
	{}
};

static struct kunit_suite kfd_criu_file_suite = {
	.name = "kfd_criu_file",
	.test_cases = kfd_criu_file_test_cases,
};

kunit_test_suite(kfd_criu_file_suite);
