// SPDX-License-Identifier: GPL-2.0 OR MIT

/**
 * DOC: CRIU image stream on the caller's file
 *
 * CHECKPOINT writes and RESTORE reads the image through the file
 * descriptor the caller passes, in chunks, and stops with -EINTR when a
 * fatal signal is pending. Like pwrite(2) and pread(2), the ops take the
 * image's offset in the file from the caller and keep their own position:
 * the file's f_pos and its lock belong to the VFS and to the caller's
 * read(2), write(2) and lseek(2), and are never touched. A file without
 * positional I/O (a pipe, a socket) is a stream, used in order from
 * offset 0 only.
 *
 * A restart would replay a stream that is already partly written or
 * read, so a restartable interruption is reported as -EINTR too. The
 * file's own errors that can only mean the image file pass through; any
 * other becomes -EIO, so that it cannot be mistaken for an answer of the
 * op.
 */

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/limits.h>
#include <linux/minmax.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include "kfd_criu.h"

/* Most bytes handed to the VFS at once, so fatal signals are seen */
#define KFD_CRIU_IO_CHUNK	SZ_64K

/*
 * The bytes of the next chunk: none past LLONG_MAX, where rw_verify_area()
 * would refuse the whole chunk. 0 when the stream is at LLONG_MAX.
 */
static size_t kfd_criu_file_chunk(const struct kfd_criu_file_io *fio,
				  size_t len)
{
	size_t n = min_t(size_t, len, KFD_CRIU_IO_CHUNK);

	if (fio->ppos && n > (u64)(LLONG_MAX - *fio->ppos))
		n = LLONG_MAX - *fio->ppos;
	return n;
}

/**
 * kfd_criu_io_errno - the errno of a stream op for a read or write result
 * @ret: what kernel_read(), kernel_write() or an op returned, not positive
 * @at_zero: the errno when @ret is 0 (end of file, or nothing written)
 *
 * A restart would replay an op whose stream is partly consumed, so every
 * interruption is final: the restart errnos become -EINTR.
 *
 * Return: @at_zero, -EINTR, or @ret.
 */
int kfd_criu_io_errno(ssize_t ret, int at_zero)
{
	if (!ret)
		return at_zero;
	if (ret == -ERESTARTSYS || ret == -ERESTARTNOINTR ||
	    ret == -ERESTARTNOHAND || ret == -ERESTART_RESTARTBLOCK)
		return -EINTR;
	return ret;
}

/* Errors that can only mean the image file, whichever op returns them */
static bool kfd_criu_file_own_errno(int err, bool writing)
{
	switch (err) {
	case -EINTR:
	case -EIO:
	case -ENOTCONN:
	case -ECONNRESET:
	case -ECONNABORTED:
	case -ETIMEDOUT:
		return true;
	case -EPIPE:
	case -ENOSPC:
	case -EDQUOT:
	case -EFBIG:
		return writing;
	default:
		return false;
	}
}

/*
 * -EAGAIN would invite the caller to repeat a call whose stream is partly
 * consumed; the file gets it from a socket timeout (SO_RCVTIMEO,
 * SO_SNDTIMEO) or from O_NONBLOCK set by another holder after
 * kfd_criu_file_check(). Any other error that the ops give a meaning of
 * their own (a RESTORE -ENOSPC says a GPU has no room for a queue) is
 * -EIO.
 */
static int kfd_criu_file_errno(ssize_t ret, int at_zero, bool writing)
{
	int err;

	if (ret == -EAGAIN)
		return -ETIMEDOUT;
	err = kfd_criu_io_errno(ret, at_zero);
	if (err == at_zero || kfd_criu_file_own_errno(err, writing))
		return err;
	return -EIO;
}

static int kfd_criu_file_write(void *ctx, const void *buf, size_t len)
{
	struct kfd_criu_file_io *fio = ctx;
	ssize_t ret;
	size_t n;

	while (len) {
		if (fatal_signal_pending(current))
			return -EINTR;
		n = kfd_criu_file_chunk(fio, len);
		if (!n)
			return -EFBIG;
		ret = kernel_write(fio->file, buf, n, fio->ppos);
		if (ret <= 0)
			return kfd_criu_file_errno(ret, -EIO, true);
		buf += ret;
		len -= ret;
		fio->bytes += ret;
	}
	return 0;
}

static int kfd_criu_file_read(void *ctx, void *buf, size_t len)
{
	struct kfd_criu_file_io *fio = ctx;
	ssize_t ret;
	size_t n;

	while (len) {
		if (fatal_signal_pending(current))
			return -EINTR;
		n = kfd_criu_file_chunk(fio, len);
		if (!n)
			return -ENODATA;
		ret = kernel_read(fio->file, buf, n, fio->ppos);
		if (ret <= 0)
			return kfd_criu_file_errno(ret, -ENODATA, false);
		buf += ret;
		len -= ret;
		fio->bytes += ret;
	}
	return 0;
}

/*
 * The checks kernel_read() and kernel_write() would WARN or log about,
 * and O_APPEND for a write: with it, every write goes to the end of the
 * file, whatever position it is given, so the image would not be at the
 * caller's offset although image_size says it is. It is refused on every
 * file, a stream too, as it asks for what the op does not do.
 *
 * The flags are read once, here, without a lock, as fcntl(F_SETFL) writes
 * them under the file's f_lock only: another holder of the file can set
 * O_NONBLOCK or O_APPEND with fcntl(F_SETFL) while the op runs. O_NONBLOCK
 * then ends the op with -ETIMEDOUT (kfd_criu_file_errno()). After
 * O_APPEND, the chunks still to be written land at the end of the file:
 * the op succeeds and the image at the offset is incomplete, as it would
 * be had that holder written over it.
 */
static int kfd_criu_file_check(const struct file *file, fmode_t mode)
{
	const struct file_operations *fops = file->f_op;
	unsigned int flags = READ_ONCE(file->f_flags);
	bool ok;

	if (!(file->f_mode & mode))
		return -EBADF;
	/* A stream cannot stop half-way for EAGAIN or for alignment */
	if (flags & (O_NONBLOCK | O_DIRECT))
		return -EINVAL;
	if (mode == FMODE_WRITE && (flags & O_APPEND))
		return -EINVAL;
	if (mode == FMODE_WRITE)
		ok = (file->f_mode & FMODE_CAN_WRITE) && fops->write_iter &&
		     !fops->write;
	else
		ok = (file->f_mode & FMODE_CAN_READ) && fops->read_iter &&
		     !fops->read;
	return ok ? 0 : -EINVAL;
}

/*
 * Where the stream starts, as pwrite(2) and pread(2) decide: at @offset
 * on a file with positional I/O for @mode, else only at 0. Pipes and
 * sockets are FMODE_STREAM and get no position. A file that is neither
 * positional nor FMODE_STREAM, one its driver opened with
 * nonseekable_open() (a tty, a FUSE file with FOPEN_NONSEEKABLE), gets a
 * position that starts at 0 and is the op's own, as read(2) would pass
 * it its f_pos. An offset less than a chunk below LLONG_MAX is refused, as
 * rw_verify_area() would refuse its first chunk; an image that reaches
 * LLONG_MAX later fails with -EFBIG (CHECKPOINT) or -ENODATA (RESTORE).
 */
static int kfd_criu_file_start(struct kfd_criu_file_io *fio, fmode_t mode,
			       u64 offset)
{
	fmode_t positional = mode == FMODE_WRITE ? FMODE_PWRITE : FMODE_PREAD;
	struct file *file = fio->file;

	if (file->f_mode & positional) {
		if (offset > LLONG_MAX - KFD_CRIU_IO_CHUNK)
			return -EINVAL;
		fio->pos = offset;
		fio->ppos = &fio->pos;
		return 0;
	}
	if (offset)
		return -ESPIPE;
	fio->pos = 0;
	fio->ppos = file->f_mode & FMODE_STREAM ? NULL : &fio->pos;
	return 0;
}

/**
 * kfd_criu_file_get - open the image stream on a caller's file descriptor
 * @fio: receives the stream; kfd_criu_file_put() releases it
 * @fd: the caller's file descriptor
 * @mode: %FMODE_WRITE for CHECKPOINT, %FMODE_READ for RESTORE
 * @offset: where in the file the image starts, the caller's image_offset
 *
 * Takes a reference on the file for the whole op. The stream starts at
 * @offset, and its position is the op's own: the file's f_pos is neither
 * read nor written, so no f_pos_lock is taken.
 *
 * Context: process context; may sleep.
 * Return: 0; -EBADF for a bad @fd or a file not open for @mode; -EINVAL
 * for a file the stream cannot use (O_NONBLOCK, O_DIRECT, O_APPEND for
 * %FMODE_WRITE, no iterators) or an @offset less than 64 KiB below the
 * largest file offset (LLONG_MAX), or beyond it; -ESPIPE for a non-zero
 * @offset on a file without positional I/O.
 */
int kfd_criu_file_get(struct kfd_criu_file_io *fio, int fd, fmode_t mode,
		      u64 offset)
{
	struct file *file;
	int ret;

	file = fd >= 0 ? fget(fd) : NULL;
	if (!file)
		return -EBADF;
	memset(fio, 0, sizeof(*fio));
	fio->file = file;
	ret = kfd_criu_file_check(file, mode);
	if (!ret)
		ret = kfd_criu_file_start(fio, mode, offset);
	if (ret) {
		fput(file);
		return ret;
	}
	fio->io.ctx = fio;
	fio->io.write = kfd_criu_file_write;
	fio->io.read = kfd_criu_file_read;
	return 0;
}

/**
 * kfd_criu_file_put - release what kfd_criu_file_get() took
 * @fio: the stream
 *
 * Like pwrite(2) and pread(2), the op leaves the file position where it
 * was: the caller learns the bytes moved from image_size.
 */
void kfd_criu_file_put(struct kfd_criu_file_io *fio)
{
	fput(fio->file);
}

#if IS_BUILTIN(CONFIG_HSA_AMD_CRIU_KUNIT_TEST)
#include "tests/kfd_criu_file_test.c"
#endif
