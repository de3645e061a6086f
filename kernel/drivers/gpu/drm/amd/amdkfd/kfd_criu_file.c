// SPDX-License-Identifier: GPL-2.0 OR MIT

/**
 * DOC: CRIU image stream on the caller's file
 *
 * CHECKPOINT writes and RESTORE reads the image through the file
 * descriptor the caller passes, at the file's position, in chunks, and
 * stops with -EINTR when a fatal signal is pending. A restart would
 * replay a stream that is already partly written or read, so a
 * restartable interruption is reported as -EINTR too. The file's own
 * errors that can only mean the image file pass through; any other
 * becomes -EIO, so that it cannot be mistaken for an answer of the op.
 */

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/minmax.h>
#include <linux/mutex.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include "kfd_criu.h"

/* Most bytes handed to the VFS at once, so fatal signals are seen */
#define KFD_CRIU_IO_CHUNK	SZ_64K

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

static loff_t *kfd_criu_file_ppos(struct kfd_criu_file_io *fio)
{
	return fio->file->f_mode & FMODE_STREAM ? NULL : &fio->pos;
}

static int kfd_criu_file_write(void *ctx, const void *buf, size_t len)
{
	struct kfd_criu_file_io *fio = ctx;
	ssize_t ret;

	while (len) {
		if (fatal_signal_pending(current))
			return -EINTR;
		ret = kernel_write(fio->file, buf, min_t(size_t, len, KFD_CRIU_IO_CHUNK),
				   kfd_criu_file_ppos(fio));
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

	while (len) {
		if (fatal_signal_pending(current))
			return -EINTR;
		ret = kernel_read(fio->file, buf, min_t(size_t, len, KFD_CRIU_IO_CHUNK),
				  kfd_criu_file_ppos(fio));
		if (ret <= 0)
			return kfd_criu_file_errno(ret, -ENODATA, false);
		buf += ret;
		len -= ret;
		fio->bytes += ret;
	}
	return 0;
}

/* The checks kernel_read() and kernel_write() would WARN or log about */
static int kfd_criu_file_check(const struct file *file, fmode_t mode)
{
	const struct file_operations *fops = file->f_op;
	bool ok;

	if (!(file->f_mode & mode))
		return -EBADF;
	/* A stream cannot stop half-way for EAGAIN or for alignment */
	if (file->f_flags & (O_NONBLOCK | O_DIRECT))
		return -EINVAL;
	if (mode == FMODE_WRITE)
		ok = (file->f_mode & FMODE_CAN_WRITE) && fops->write_iter &&
		     !fops->write;
	else
		ok = (file->f_mode & FMODE_CAN_READ) && fops->read_iter &&
		     !fops->read;
	return ok ? 0 : -EINVAL;
}

/**
 * kfd_criu_file_get - open the image stream on a caller's file descriptor
 * @fio: receives the stream; kfd_criu_file_put() releases it
 * @fd: the caller's file descriptor
 * @mode: %FMODE_WRITE for CHECKPOINT, %FMODE_READ for RESTORE
 *
 * Takes a reference on the file and, for a file with a position, its
 * f_pos_lock, as read(2) and write(2) would, for the whole op.
 *
 * Context: process context; may sleep.
 * Return: 0; -EBADF for a bad @fd or a file not open for @mode; -EINVAL
 * for a file the stream cannot use (O_NONBLOCK, O_DIRECT, no iterators);
 * -EINTR when a signal interrupted the wait for the position lock.
 */
int kfd_criu_file_get(struct kfd_criu_file_io *fio, int fd, fmode_t mode)
{
	struct file *file;
	int ret;

	file = fd >= 0 ? fget(fd) : NULL;
	if (!file)
		return -EBADF;
	ret = kfd_criu_file_check(file, mode);
	if (ret) {
		fput(file);
		return ret;
	}

	memset(fio, 0, sizeof(*fio));
	/* Serialize with read(2), write(2) and lseek(2) as fdget_pos() does */
	if ((file->f_mode & FMODE_ATOMIC_POS) && !(file->f_mode & FMODE_STREAM)) {
		if (mutex_lock_interruptible(&file->f_pos_lock)) {
			fput(file);
			return -EINTR;
		}
		fio->pos_locked = true;
	}
	fio->file = file;
	fio->pos = file->f_pos;
	fio->io.ctx = fio;
	fio->io.write = kfd_criu_file_write;
	fio->io.read = kfd_criu_file_read;
	return 0;
}

/**
 * kfd_criu_file_put - release what kfd_criu_file_get() took
 * @fio: the stream
 *
 * Like write(2) and read(2), the op advances the file position by the
 * bytes it moved.
 */
void kfd_criu_file_put(struct kfd_criu_file_io *fio)
{
	if (!(fio->file->f_mode & FMODE_STREAM))
		fio->file->f_pos = fio->pos;
	if (fio->pos_locked)
		mutex_unlock(&fio->file->f_pos_lock);
	fput(fio->file);
}

#if IS_BUILTIN(CONFIG_HSA_AMD_CRIU_KUNIT_TEST)
#include "tests/kfd_criu_file_test.c"
#endif
