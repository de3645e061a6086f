// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Copyright 2026 The amdkfd-criu authors
 */

/**
 * DOC: CRIU image mode
 *
 * With %KFD_CRIU_FLAG_IMAGE, AMDKFD_IOC_CRIU_OP lands here instead of in
 * the legacy code in kfd_chardev.c. This file runs the five ops:
 *
 * - PROCESS_INFO pauses the process that owns the /dev/kfd file (its
 *   queues are evicted when it has GPUs) and estimates the image size.
 * - CHECKPOINT snapshots the paused process and streams the image to the
 *   caller's file descriptor. A failure leaves the process paused and
 *   unchanged, so the dump can be retried or abandoned with UNPAUSE.
 * - UNPAUSE resumes a paused process.
 * - RESTORE reads a whole image into kernel memory, validates it, and only
 *   then fills the process, all or nothing.
 * - RESUME starts a restored process, found by pid; the caller must be
 *   allowed to ptrace it.
 *
 * Each process carries an &enum kfd_criu_state, stepped by one pure
 * function, kfd_criu_next_state(), under p->mutex. An op that is not valid
 * in the current state fails with -EBADFD, a RESTORE into a process that
 * is paused or restored already with -EBUSY.
 *
 * The kfd ioctl dispatcher has already checked CAP_CHECKPOINT_RESTORE or
 * CAP_SYS_ADMIN and that the caller owns the file or is the ptrace parent
 * of its owner. State the image cannot carry yet is listed once, in
 * kfd_criu_features[]: CHECKPOINT refuses it with -EOPNOTSUPP, and RESTORE
 * refuses a target that already has state with -EBUSY.
 *
 * Stream I/O goes through the caller's file at its file position, in
 * chunks, and stops with -EINTR when a fatal signal is pending. A restart
 * would replay a stream that is already partly written or read, so a
 * restartable interruption is reported as -EINTR too. RESTORE stops right
 * after END, so an image can be embedded in a larger stream.
 */

#include <linux/bits.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/lockdep.h>
#include <linux/minmax.h>
#include <linux/pid.h>
#include <linux/ptrace.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/utsname.h>

#include "kfd_criu.h"
#include "kfd_priv.h"

/* Most bytes handed to the VFS at once, so fatal signals are seen */
#define KFD_CRIU_IO_CHUNK	SZ_64K

/* Largest payload RESTORE accepts: the signal page record */
#define KFD_CRIU_READ_BUF_SIZE	KFD_CRIU_SIGNAL_PAGE_MAX

/**
 * kfd_criu_next_state - the image-mode state machine
 * @cur: the process's current state
 * @op: the requested KFD_CRIU_OP_*
 * @next: receives the state after a successful @op
 *
 * Pure: the caller performs the side effects of the arc and stores @next
 * only when they succeed.
 *
 * Return: 0 for an allowed arc, -EBUSY for RESTORE into a process that is
 * paused or restored, -EBADFD for any other op not allowed in @cur, or
 * -EINVAL (with a warning) for a state or op out of range.
 */
static int kfd_criu_next_state(enum kfd_criu_state cur, u32 op,
			       enum kfd_criu_state *next)
{
	if (cur == KFD_CRIU_STATE_RUNNING && op == KFD_CRIU_OP_PROCESS_INFO) {
		*next = KFD_CRIU_STATE_PAUSED;
		return 0;
	}
	if (cur == KFD_CRIU_STATE_PAUSED && op == KFD_CRIU_OP_PROCESS_INFO) {
		*next = KFD_CRIU_STATE_PAUSED;
		return 0;
	}
	if (cur == KFD_CRIU_STATE_PAUSED && op == KFD_CRIU_OP_CHECKPOINT) {
		*next = KFD_CRIU_STATE_PAUSED;
		return 0;
	}
	if (cur == KFD_CRIU_STATE_PAUSED && op == KFD_CRIU_OP_UNPAUSE) {
		*next = KFD_CRIU_STATE_RUNNING;
		return 0;
	}
	if (cur == KFD_CRIU_STATE_RUNNING && op == KFD_CRIU_OP_RESTORE) {
		*next = KFD_CRIU_STATE_RESTORED;
		return 0;
	}
	if (cur == KFD_CRIU_STATE_RESTORED && op == KFD_CRIU_OP_RESUME) {
		*next = KFD_CRIU_STATE_RUNNING;
		return 0;
	}

	if (WARN_ON(cur > KFD_CRIU_STATE_RESTORED || op > KFD_CRIU_OP_RESUME))
		return -EINVAL;
	return op == KFD_CRIU_OP_RESTORE ? -EBUSY : -EBADFD;
}

/**
 * kfd_criu_image_requested - whether an ioctl uses the 1.18 fields
 * @args: the arguments, zero-filled beyond what userspace passed
 *
 * Non-zero flags, GPU map or reserved fields select image mode, or are
 * garbage that image mode then refuses. image_fd, the output fields and
 * the old tail padding never select it.
 *
 * Return: true if kfd_criu_image_ioctl() must handle @args.
 */
bool kfd_criu_image_requested(const struct kfd_ioctl_criu_args *args)
{
	return args->flags || args->num_gpu_map || args->gpu_map_ptr ||
	       memchr_inv(args->reserved, 0, sizeof(args->reserved));
}

static int kfd_criu_check_args(const struct kfd_ioctl_criu_args *args)
{
	if (args->flags != KFD_CRIU_FLAG_IMAGE)
		return -EINVAL;
	if (args->num_gpu_map || args->gpu_map_ptr ||
	    memchr_inv(args->reserved, 0, sizeof(args->reserved)))
		return -EINVAL;
	if (args->devices || args->bos || args->priv_data ||
	    args->priv_data_size || args->num_devices || args->num_bos ||
	    args->num_objects)
		return -EINVAL;
	return args->op > KFD_CRIU_OP_RESUME ? -EINVAL : 0;
}

/**
 * enum kfd_criu_feature - process state that dump or restore must know of
 * @KFD_CRIU_FEAT_GPU_VM: a GPU VM was acquired
 * @KFD_CRIU_FEAT_BOS: buffer objects
 * @KFD_CRIU_FEAT_QUEUES: user queues
 * @KFD_CRIU_FEAT_SVM_RANGES: SVM ranges
 * @KFD_CRIU_FEAT_GPU_EVENT_PAGE: the event page is a GPU buffer
 * @KFD_CRIU_FEAT_DEBUGGER: a debugger is attached
 * @KFD_CRIU_FEAT_RUNTIME_PENDING: runtime enable is mid-way or reports an
 *	error to a debugger
 * @KFD_CRIU_FEAT_RUNTIME_ENABLED: the runtime is enabled
 * @KFD_CRIU_FEAT_EVENTS: events
 * @KFD_CRIU_FEAT_SIGNAL_PAGE: a signal page
 * @KFD_CRIU_FEAT_LEGACY_PAUSE: the legacy PROCESS_INFO paused the process
 * @KFD_CRIU_FEAT_NR: number of features
 */
enum kfd_criu_feature {
	KFD_CRIU_FEAT_GPU_VM,
	KFD_CRIU_FEAT_BOS,
	KFD_CRIU_FEAT_QUEUES,
	KFD_CRIU_FEAT_SVM_RANGES,
	KFD_CRIU_FEAT_GPU_EVENT_PAGE,
	KFD_CRIU_FEAT_DEBUGGER,
	KFD_CRIU_FEAT_RUNTIME_PENDING,
	KFD_CRIU_FEAT_RUNTIME_ENABLED,
	KFD_CRIU_FEAT_EVENTS,
	KFD_CRIU_FEAT_SIGNAL_PAGE,
	KFD_CRIU_FEAT_LEGACY_PAUSE,
	KFD_CRIU_FEAT_NR
};

/**
 * struct kfd_criu_feature_desc - how dump and restore treat a feature
 * @name: for the log
 * @dump_unsupported: CHECKPOINT cannot carry it yet
 * @restore_busy: RESTORE refuses a target that has it
 */
struct kfd_criu_feature_desc {
	const char *name;
	bool dump_unsupported;
	bool restore_busy;
};

static const struct kfd_criu_feature_desc kfd_criu_features[KFD_CRIU_FEAT_NR] = {
	[KFD_CRIU_FEAT_GPU_VM] = { "an acquired GPU VM", true, true },
	[KFD_CRIU_FEAT_BOS] = { "buffer objects", true, true },
	[KFD_CRIU_FEAT_QUEUES] = { "user queues", true, true },
	[KFD_CRIU_FEAT_SVM_RANGES] = { "SVM ranges", true, true },
	[KFD_CRIU_FEAT_GPU_EVENT_PAGE] = { "an event page in GPU memory", true, true },
	[KFD_CRIU_FEAT_DEBUGGER] = { "an attached debugger", true, true },
	[KFD_CRIU_FEAT_RUNTIME_PENDING] = { "a pending runtime enable", true, true },
	[KFD_CRIU_FEAT_RUNTIME_ENABLED] = { "an enabled runtime", false, true },
	[KFD_CRIU_FEAT_EVENTS] = { "events", false, true },
	[KFD_CRIU_FEAT_SIGNAL_PAGE] = { "a signal page", false, true },
	[KFD_CRIU_FEAT_LEGACY_PAUSE] = { "a legacy CRIU pause", false, true },
};

/**
 * kfd_criu_check_features - refuse what an op cannot handle
 * @present: BIT(&enum kfd_criu_feature) of what the process has
 * @restore: check for RESTORE rather than for CHECKPOINT
 * @name: receives the name of the first refused feature
 *
 * Return: 0, -EOPNOTSUPP for CHECKPOINT or -EBUSY for RESTORE.
 */
static int kfd_criu_check_features(u32 present, bool restore,
				   const char **name)
{
	const struct kfd_criu_feature_desc *desc;
	unsigned int i;

	for (i = 0; i < KFD_CRIU_FEAT_NR; i++) {
		desc = &kfd_criu_features[i];
		if (!(present & BIT(i)))
			continue;
		if (restore ? desc->restore_busy : desc->dump_unsupported) {
			*name = desc->name;
			return restore ? -EBUSY : -EOPNOTSUPP;
		}
	}
	return 0;
}

static bool kfd_criu_has_svm_ranges(struct kfd_process *p)
{
	bool ret;

	if (!IS_ENABLED(CONFIG_HSA_AMD_SVM))
		return false;
	mutex_lock(&p->svms.lock);
	ret = !list_empty(&p->svms.list);
	mutex_unlock(&p->svms.lock);
	return ret;
}

static u32 kfd_criu_device_features_locked(struct kfd_process *p)
{
	struct kfd_process_device *pdd;
	u32 present = 0;
	u32 i;

	lockdep_assert_held(&p->mutex);

	/*
	 * Every process has per-GPU data from open on a machine with GPUs;
	 * only what it acquires through them needs carrying. The GPU VM:
	 * SVM ranges need it; it is only created under p->mutex.
	 */
	if (p->kgd_process_info)
		present |= BIT(KFD_CRIU_FEAT_GPU_VM);
	for (i = 0; i < p->n_pdds; i++) {
		pdd = p->pdds[i];
		if (pdd->drm_priv)
			present |= BIT(KFD_CRIU_FEAT_GPU_VM);
		if (!idr_is_empty(&pdd->alloc_idr))
			present |= BIT(KFD_CRIU_FEAT_BOS);
	}
	if (!list_empty(&p->pqm.queues))
		present |= BIT(KFD_CRIU_FEAT_QUEUES);
	if (kfd_criu_has_svm_ranges(p))
		present |= BIT(KFD_CRIU_FEAT_SVM_RANGES);
	if (p->signal_handle)
		present |= BIT(KFD_CRIU_FEAT_GPU_EVENT_PAGE);
	return present;
}

static u32 kfd_criu_runtime_features_locked(struct kfd_process *p)
{
	u32 state = p->runtime_info.runtime_state;
	u32 present = 0;

	lockdep_assert_held(&p->mutex);

	if (p->debug_trap_enabled)
		present |= BIT(KFD_CRIU_FEAT_DEBUGGER);
	if (p->is_runtime_retry || (state != DEBUG_RUNTIME_STATE_DISABLED &&
				    state != DEBUG_RUNTIME_STATE_ENABLED))
		present |= BIT(KFD_CRIU_FEAT_RUNTIME_PENDING);
	if (state != DEBUG_RUNTIME_STATE_DISABLED)
		present |= BIT(KFD_CRIU_FEAT_RUNTIME_ENABLED);
	if (p->queues_paused)
		present |= BIT(KFD_CRIU_FEAT_LEGACY_PAUSE);
	return present;
}

static u32 kfd_criu_process_features_locked(struct kfd_process *p)
{
	u32 num_events, signal_page_size;
	u32 present;

	present = kfd_criu_device_features_locked(p) |
		  kfd_criu_runtime_features_locked(p);
	kfd_criu_events_count(p, &num_events, &signal_page_size);
	if (num_events)
		present |= BIT(KFD_CRIU_FEAT_EVENTS);
	if (signal_page_size)
		present |= BIT(KFD_CRIU_FEAT_SIGNAL_PAGE);
	return present;
}

static int kfd_criu_dump_supported_locked(struct kfd_process *p)
{
	const char *name;
	int ret;

	ret = kfd_criu_check_features(kfd_criu_process_features_locked(p),
				      false, &name);
	if (ret)
		pr_warn_ratelimited("CRIU image: pid %d has %s, which the image cannot carry yet\n",
				    task_pid_nr(p->lead_thread), name);
	return ret;
}

static int kfd_criu_restore_allowed_locked(struct kfd_process *p,
					   enum kfd_criu_state *next)
{
	const char *name;
	int ret;

	ret = kfd_criu_next_state(p->criu_state, KFD_CRIU_OP_RESTORE, next);
	if (ret)
		return ret;
	ret = kfd_criu_check_features(kfd_criu_process_features_locked(p),
				      true, &name);
	if (ret)
		pr_debug("CRIU image: restore target has %s\n", name);
	return ret;
}

/**
 * struct kfd_criu_file_io - &struct kfd_criu_image_io on a user's file
 * @io: what the codec calls
 * @file: the file, referenced
 * @pos: file position, unused for stream files
 * @bytes: bytes moved so far
 * @pos_locked: @file's f_pos_lock is held
 */
struct kfd_criu_file_io {
	struct kfd_criu_image_io io;
	struct file *file;
	loff_t pos;
	u64 bytes;
	bool pos_locked;
};

/*
 * A restart would replay an op whose stream is partly consumed, so every
 * interruption is final.
 */
static int kfd_criu_io_errno(ssize_t ret, int at_zero)
{
	if (!ret)
		return at_zero;
	if (ret == -ERESTARTSYS || ret == -ERESTARTNOINTR ||
	    ret == -ERESTARTNOHAND || ret == -ERESTART_RESTARTBLOCK)
		return -EINTR;
	return ret;
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
			return kfd_criu_io_errno(ret, -EIO);
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
			return kfd_criu_io_errno(ret, -ENODATA);
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

static int kfd_criu_file_get(struct kfd_criu_file_io *fio, int fd,
			     fmode_t mode)
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

/* Like write(2) and read(2), the op advances the file position. */
static void kfd_criu_file_put(struct kfd_criu_file_io *fio)
{
	if (!(fio->file->f_mode & FMODE_STREAM))
		fio->file->f_pos = fio->pos;
	if (fio->pos_locked)
		mutex_unlock(&fio->file->f_pos_lock);
	fput(fio->file);
}

/**
 * kfd_criu_image_size_estimate - stream bytes of an image
 * @num_events: events in the image
 * @signal_page_size: bytes of the signal page record, 0 for none
 *
 * Return: the exact size of an image with this content.
 */
static u64 kfd_criu_image_size_estimate(u32 num_events, u32 signal_page_size)
{
	u64 size = sizeof(struct kfd_criu_image_header);

	size += KFD_CRIU_RECORD_OVERHEAD + sizeof(struct kfd_criu_compat_rec);
	size += KFD_CRIU_RECORD_OVERHEAD + sizeof(struct kfd_criu_process_rec);
	if (signal_page_size)
		size += KFD_CRIU_RECORD_OVERHEAD + signal_page_size;
	size += (u64)num_events *
		(KFD_CRIU_RECORD_OVERHEAD + sizeof(struct kfd_criu_event_rec));
	size += KFD_CRIU_RECORD_OVERHEAD + sizeof(struct kfd_criu_end_rec);
	return size;
}

static int kfd_criu_write_image(const struct kfd_criu_image_io *io,
				const struct kfd_criu_events_image *img)
{
	struct kfd_criu_compat_rec compat = {};	/* no GPUs */
	struct kfd_criu_image_writer w;
	int ret;

	kfd_criu_image_writer_init(&w, io);
	ret = kfd_criu_image_write_header(&w, init_utsname()->release);
	if (!ret)
		ret = kfd_criu_image_write_record(&w, KFD_CRIU_REC_COMPAT,
						  KFD_CRIU_RECORD_MANDATORY,
						  &compat, sizeof(compat));
	if (!ret)
		ret = kfd_criu_events_write(&w, img);
	if (!ret)
		ret = kfd_criu_image_write_end(&w);
	return ret;
}

static int kfd_criu_read_compat(struct kfd_criu_image_reader *r, void *buf)
{
	struct kfd_criu_compat_rec compat;
	struct kfd_criu_record rec;
	int ret;

	ret = kfd_criu_image_read_record(r, &rec, buf, KFD_CRIU_READ_BUF_SIZE);
	if (ret)
		return ret;
	/* Compatibility is checked before anything else is read */
	if (rec.type != KFD_CRIU_REC_COMPAT || rec.length != sizeof(compat))
		return -EINVAL;
	memcpy(&compat, buf, sizeof(compat));
	return kfd_criu_validate_compat(&compat);
}

/*
 * Reads the whole image into @img. Only record bounds and order are checked
 * here; kfd_criu_events_validate() checks the contents as a set.
 */
static int kfd_criu_read_image(const struct kfd_criu_image_io *io,
			       struct kfd_criu_events_image *img, u32 *version)
{
	struct kfd_criu_image_header hdr;
	struct kfd_criu_image_reader r;
	struct kfd_criu_record rec;
	void *buf;
	int ret;

	buf = kvmalloc(KFD_CRIU_READ_BUF_SIZE, GFP_KERNEL_ACCOUNT);
	if (!buf)
		return -ENOMEM;

	kfd_criu_image_reader_init(&r, io, kfd_criu_v1_records,
				   kfd_criu_v1_num_records);
	ret = kfd_criu_image_read_header(&r, &hdr);
	if (ret)
		goto out_free_buf;
	*version = le32_to_cpu(hdr.version);

	ret = kfd_criu_read_compat(&r, buf);
	while (!ret) {
		ret = kfd_criu_image_read_record(&r, &rec, buf,
						 KFD_CRIU_READ_BUF_SIZE);
		if (ret || rec.type == KFD_CRIU_REC_END)
			break;
		ret = kfd_criu_events_collect(img, &rec, buf);
	}

out_free_buf:
	kvfree(buf);
	return ret;
}

static int kfd_criu_op_process_info(struct kfd_process *p,
				    struct kfd_ioctl_criu_args *args)
{
	u32 num_events, signal_page_size;
	enum kfd_criu_state next;
	int ret;

	mutex_lock(&p->mutex);
	ret = kfd_criu_next_state(p->criu_state, KFD_CRIU_OP_PROCESS_INFO,
				  &next);
	if (ret)
		goto out_unlock;

	/* A second PROCESS_INFO must not evict again: UNPAUSE restores once */
	if (p->criu_state != next && p->n_pdds) {
		ret = kfd_process_evict_queues(p, KFD_QUEUE_EVICTION_CRIU_CHECKPOINT);
		if (ret)
			goto out_unlock;
	}
	p->criu_state = next;

	kfd_criu_events_count(p, &num_events, &signal_page_size);
	args->image_size = kfd_criu_image_size_estimate(num_events,
							signal_page_size);
	args->format_version = KFD_CRIU_IMAGE_VERSION;
	args->pid = task_tgid_vnr(p->lead_thread);

out_unlock:
	mutex_unlock(&p->mutex);
	return ret;
}

static int kfd_criu_op_checkpoint(struct kfd_process *p,
				  struct kfd_ioctl_criu_args *args)
{
	struct kfd_criu_events_image img;
	struct kfd_criu_file_io fio;
	enum kfd_criu_state next;
	int ret;

	mutex_lock(&p->mutex);
	ret = kfd_criu_next_state(p->criu_state, KFD_CRIU_OP_CHECKPOINT, &next);
	if (!ret)
		ret = kfd_criu_dump_supported_locked(p);
	if (!ret)
		ret = kfd_criu_events_snapshot(p, &img);
	mutex_unlock(&p->mutex);
	if (ret)
		return ret;

	/* The process stays paused: streaming needs no lock */
	ret = kfd_criu_file_get(&fio, args->image_fd, FMODE_WRITE);
	if (ret)
		goto out_free_img;
	ret = kfd_criu_write_image(&fio.io, &img);
	args->image_size = fio.bytes;
	args->format_version = KFD_CRIU_IMAGE_VERSION;
	kfd_criu_file_put(&fio);

out_free_img:
	kfd_criu_events_image_free(&img);
	return ret;
}

static int kfd_criu_op_unpause(struct kfd_process *p)
{
	enum kfd_criu_state next;
	int ret;

	mutex_lock(&p->mutex);
	ret = kfd_criu_next_state(p->criu_state, KFD_CRIU_OP_UNPAUSE, &next);
	if (ret)
		goto out_unlock;
	/*
	 * kfd_process_restore_queues() tries every GPU and reports the first
	 * error. A retry would restore the GPUs that succeeded a second time,
	 * so the process leaves the paused state either way.
	 */
	if (p->n_pdds)
		ret = kfd_process_restore_queues(p);
	if (ret)
		pr_err("CRIU image: pid %d: restoring queues failed: %d\n",
		       p->lead_thread->pid, ret);
	p->criu_state = next;
out_unlock:
	mutex_unlock(&p->mutex);
	return ret;
}

static int kfd_criu_restore_locked(struct file *filep, struct kfd_process *p,
				   struct mm_struct *mm,
				   const struct kfd_criu_events_image *img)
{
	enum kfd_criu_state next;
	int ret;

	lockdep_assert_held(&p->mutex);

	ret = kfd_criu_restore_allowed_locked(p, &next);
	if (ret)
		return ret;

	/* Nothing the process creates runs before RESUME */
	if (p->n_pdds) {
		ret = kfd_process_evict_queues(p, KFD_QUEUE_EVICTION_CRIU_RESTORE);
		if (ret)
			return ret;
	}
	ret = kfd_criu_events_restore(filep, p, mm, img);
	if (ret) {
		if (p->n_pdds && kfd_process_restore_queues(p))
			pr_err("CRIU image: failed to undo the restore eviction\n");
		return ret;
	}
	p->criu_state = next;
	return 0;
}

/* Refuses a busy target before reading a whole image for nothing. */
static int kfd_criu_restore_allowed(struct kfd_process *p)
{
	enum kfd_criu_state next;
	int ret;

	mutex_lock(&p->mutex);
	ret = kfd_criu_restore_allowed_locked(p, &next);
	mutex_unlock(&p->mutex);
	return ret;
}

static int kfd_criu_load_image(struct kfd_ioctl_criu_args *args,
			       struct kfd_criu_events_image *img, u32 *version)
{
	struct kfd_criu_file_io fio;
	int ret;

	ret = kfd_criu_file_get(&fio, args->image_fd, FMODE_READ);
	if (ret)
		return ret;
	ret = kfd_criu_read_image(&fio.io, img, version);
	args->image_size = fio.bytes;
	kfd_criu_file_put(&fio);
	if (ret)
		return ret;
	return kfd_criu_events_validate(img);
}

static int kfd_criu_op_restore(struct file *filep, struct kfd_process *p,
			       struct kfd_ioctl_criu_args *args)
{
	struct kfd_criu_events_image img = {};
	struct mm_struct *mm;
	u32 version = 0;
	int ret;

	ret = kfd_criu_restore_allowed(p);
	if (ret)
		return ret;
	ret = kfd_criu_load_image(args, &img, &version);
	if (ret)
		goto out_free_img;
	args->format_version = version;

	/*
	 * mmput() may tear down the address space: not under p->mutex. The
	 * leader may have exited while other threads live on.
	 */
	mm = mmget_not_zero(p->mm) ? p->mm : NULL;
	if (!mm) {
		ret = -ESRCH;
		goto out_free_img;
	}
	mutex_lock(&p->mutex);
	ret = kfd_criu_restore_locked(filep, p, mm, &img);
	mutex_unlock(&p->mutex);
	mmput(mm);

out_free_img:
	kfd_criu_events_image_free(&img);
	return ret;
}

static int kfd_criu_may_resume(struct pid *pid)
{
	struct task_struct *task;
	bool allowed;

	task = get_pid_task(pid, PIDTYPE_PID);
	if (!task)
		return -ESRCH;
	allowed = ptrace_may_access(task, PTRACE_MODE_ATTACH_REALCREDS);
	put_task_struct(task);
	return allowed ? 0 : -EPERM;
}

static int kfd_criu_op_resume(struct kfd_ioctl_criu_args *args)
{
	struct kfd_process *target;
	enum kfd_criu_state next;
	struct pid *pid;
	int ret;

	pid = find_get_pid(args->pid);
	if (!pid)
		return -ESRCH;
	ret = kfd_criu_may_resume(pid);
	if (ret)
		goto out_put_pid;
	target = kfd_lookup_process_by_pid(pid);
	if (!target) {
		ret = -ESRCH;
		goto out_put_pid;
	}

	mutex_lock(&target->mutex);
	ret = kfd_criu_next_state(target->criu_state, KFD_CRIU_OP_RESUME, &next);
	if (!ret && target->n_pdds)
		ret = kfd_process_restore_queues(target);
	if (!ret)
		target->criu_state = next;
	mutex_unlock(&target->mutex);
	kfd_unref_process(target);

out_put_pid:
	put_pid(pid);
	return ret;
}

/**
 * kfd_criu_image_ioctl - AMDKFD_IOC_CRIU_OP in image mode
 * @filep: the /dev/kfd file the ioctl came through
 * @p: the process that owns @filep
 * @args: the arguments; kfd_criu_image_requested() was true
 *
 * Return: 0 or a negative errno, as &struct kfd_ioctl_criu_args documents.
 */
int kfd_criu_image_ioctl(struct file *filep, struct kfd_process *p,
			 struct kfd_ioctl_criu_args *args)
{
	int ret;

	ret = kfd_criu_check_args(args);
	if (ret)
		return ret;

	switch (args->op) {
	case KFD_CRIU_OP_PROCESS_INFO:
		ret = kfd_criu_op_process_info(p, args);
		break;
	case KFD_CRIU_OP_CHECKPOINT:
		ret = kfd_criu_op_checkpoint(p, args);
		break;
	case KFD_CRIU_OP_UNPAUSE:
		ret = kfd_criu_op_unpause(p);
		break;
	case KFD_CRIU_OP_RESTORE:
		ret = kfd_criu_op_restore(filep, p, args);
		break;
	case KFD_CRIU_OP_RESUME:
		ret = kfd_criu_op_resume(args);
		break;
	default:
		ret = -EINVAL;
		break;
	}
	pr_debug("CRIU image: op %u returns %d\n", args->op, ret);
	return ret;
}

#if IS_BUILTIN(CONFIG_HSA_AMD_CRIU_KUNIT_TEST)
#include "tests/kfd_criu_test.c"
#endif
