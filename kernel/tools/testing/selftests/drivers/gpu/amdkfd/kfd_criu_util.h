/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DOC: helpers shared by the amdkfd CRIU selftests
 *
 * KFD ioctl wrappers for image mode and for GPU memory, fd passing over
 * SCM_RIGHTS, process synchronisation, the GPU nodes of the KFD topology
 * and their properties, and the dump-then-restore scaffolding of the GPU
 * tests: a child that is dumped as CRIU does it and a fresh child that
 * restores the image and is resumed. Every function is static inline:
 * each test program includes this header once.
 */
#ifndef KFD_CRIU_UTIL_H
#define KFD_CRIU_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/kfd_ioctl.h>
#include <linux/kfd_sysfs.h>

#define KFD_TOPOLOGY_NODES	"/sys/class/kfd/kfd/topology/nodes"
/* The most GPUs a test looks at */
#define KFD_TEST_MAX_GPUS	8

/* A failed check in a child process ends it with a message. */
#define CHILD_CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: child check failed: %s (%s)\n",	\
			__FILE__, __LINE__, #cond, strerror(errno));	\
		_exit(1);						\
	}								\
} while (0)

/**
 * struct kfd_test_gpu - a GPU node of the KFD topology
 * @gpu_id: its gpu_id
 * @render_minor: the minor of its render node, /dev/dri/renderD<minor>
 * @node: its node number in the topology
 */
struct kfd_test_gpu {
	__u32 gpu_id;
	int render_minor;
	int node;
};

static inline bool have_kfd(void)
{
	return access("/dev/kfd", F_OK) == 0;
}

static inline int kfd_open(void)
{
	return open("/dev/kfd", O_RDWR | O_CLOEXEC);
}

static inline int kfd_ioctl(int fd, unsigned long cmd, void *args)
{
	return ioctl(fd, cmd, args) ? -errno : 0;
}

/*
 * Why this machine cannot run a KFD test, or NULL. Since 7.0 opening
 * /dev/kfd without a GPU makes no KFD process and fails with EINVAL.
 * Opened in a child: an open makes the caller a KFD process for good.
 * Asked once per process (the harness forks one per test).
 */
static inline const char *kfd_unusable(void)
{
	static const char *why;
	static bool asked;
	int status, fd;
	pid_t pid;

	if (asked)
		return why;
	asked = true;
	if (!have_kfd())
		return why = "no /dev/kfd";
	pid = fork();
	if (pid < 0)
		return NULL;
	if (pid == 0) {
		fd = kfd_open();
		_exit(fd < 0 && errno == EINVAL);
	}
	if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 1)
		why = "this kernel makes no KFD process without a GPU";
	return why;
}

/*
 * Why this machine cannot run a test of signal events, or NULL. Up to 6.x
 * KFD allocated a signal page of its own; since 7.0 the first signal event
 * must pass the event page, a buffer in GPU memory, which these tests do
 * not make. Asked once, in a child, whose KFD process goes with it, so
 * the caller's process stays without events.
 */
static inline const char *kfd_no_signal_events(void)
{
	struct kfd_ioctl_create_event_args args = {
		.event_type = KFD_IOC_EVENT_SIGNAL,
	};
	static const char *why;
	static bool asked;
	int status, fd;
	pid_t pid;

	if (asked)
		return why;
	asked = true;
	if (kfd_unusable())
		return why = kfd_unusable();
	pid = fork();
	if (pid < 0)
		return NULL;
	if (pid == 0) {
		fd = kfd_open();
		_exit(fd >= 0 && kfd_ioctl(fd, AMDKFD_IOC_CREATE_EVENT, &args) == -ENOMEM);
	}
	if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 1)
		why = "signal events need an event page BO here, which this test does not make";
	return why;
}

/* Sets the XNACK mode of the process of @fd to @mode, or reads it (-1) */
static inline int kfd_xnack_mode(int fd, int mode)
{
	struct kfd_ioctl_set_xnack_mode_args args = { .xnack_enabled = mode };
	int ret = kfd_ioctl(fd, AMDKFD_IOC_SET_XNACK_MODE, &args);

	return ret ? ret : args.xnack_enabled;
}

/*
 * The XNACK mode of a fresh process, from a /dev/kfd file of the caller,
 * which must hold none yet: call it before a test forks. Without
 * CONFIG_HSA_AMD_SVM the kernel keeps a mode too (the GPUs' retry setting
 * follows it, and image mode restores it) but userspace can neither read
 * nor set it: SET_XNACK_MODE fails with -EPERM, a query too. Returns -1
 * then (or without /dev/kfd), and tests neither set nor check the mode;
 * 1 on another error, so that their checks fail on it.
 */
static inline int kfd_xnack_fresh_mode(void)
{
	int fd = kfd_open(), mode;

	if (fd < 0)
		return -1;
	mode = kfd_xnack_mode(fd, -1);
	close(fd);
	if (mode == -EPERM)
		return -1;
	return mode < 0 ? 1 : mode;
}

/* The image-mode op of legacy op @op, KFD_CRIU_OP_<op> */
#define IMAGE_OP(op)	(KFD_CRIU_OP_IMAGE_PROCESS_INFO + (op))

/*
 * The image-mode version of CRIU op @op (a legacy KFD_CRIU_OP_*) with no
 * GPU or offset map; clears @args first.
 */
static inline int criu_image_op(int fd, __u32 op, int image_fd,
				struct kfd_ioctl_criu_args *args)
{
	memset(args, 0, sizeof(*args));
	args->op = IMAGE_OP(op);
	args->image_fd = image_fd;
	return kfd_ioctl(fd, AMDKFD_IOC_CRIU_OP, args);
}

/*
 * criu_image_op() with the image at @offset of @image_fd, as pwrite(2) and
 * pread(2) take theirs.
 */
static inline int criu_image_op_at(int fd, __u32 op, int image_fd,
				   __u64 offset,
				   struct kfd_ioctl_criu_args *args)
{
	memset(args, 0, sizeof(*args));
	args->op = IMAGE_OP(op);
	args->image_fd = image_fd;
	args->image_offset = offset;
	return kfd_ioctl(fd, AMDKFD_IOC_CRIU_OP, args);
}

/*
 * Image-mode RESTORE from @image_fd with @num_map entries of GPU map at
 * @map and room for @num_offsets entries of offset map at @offsets.
 */
static inline int criu_restore_mapped(int fd, int image_fd,
				      const struct kfd_criu_gpu_map *map,
				      __u32 num_map,
				      struct kfd_criu_offset_map *offsets,
				      __u32 num_offsets,
				      struct kfd_ioctl_criu_args *args)
{
	memset(args, 0, sizeof(*args));
	args->op = KFD_CRIU_OP_IMAGE_RESTORE;
	args->image_fd = image_fd;
	args->gpu_map_ptr = (uintptr_t)map;
	args->num_gpu_map = num_map;
	args->offset_map_ptr = (uintptr_t)offsets;
	args->num_offset_map = num_offsets;
	return kfd_ioctl(fd, AMDKFD_IOC_CRIU_OP, args);
}

static inline int criu_resume(int fd, pid_t pid)
{
	struct kfd_ioctl_criu_args args;

	memset(&args, 0, sizeof(args));
	args.op = KFD_CRIU_OP_IMAGE_RESUME;
	args.pid = pid;
	return kfd_ioctl(fd, AMDKFD_IOC_CRIU_OP, &args);
}

/*
 * RESUMEs @pid as CRIU does, as its tracer: seizes it, RESUMEs it and
 * detaches again (the tracee is stopped for the detach). Returns RESUME's
 * result, or -errno of the ptrace step that failed.
 */
static inline int criu_resume_traced(int fd, pid_t pid)
{
	int ret, status;

	if (ptrace(PTRACE_SEIZE, pid, 0, 0))
		return -errno;
	ret = criu_resume(fd, pid);
	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) ||
	    waitpid(pid, &status, __WALL) != pid || !WIFSTOPPED(status) ||
	    ptrace(PTRACE_DETACH, pid, 0, 0))
		return ret ? ret : -ECHILD;
	return ret;
}

/* Sends @fd and @len bytes at @data over the unix socket @sock */
static inline int send_fd(int sock, int fd, const void *data, size_t len)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);

	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	cmsg->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == (ssize_t)len ? 0 : -1;
}

/* Receives what send_fd() sent: the fd, or -1 */
static inline int recv_fd(int sock, void *data, size_t len)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = data, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cmsg;
	int fd;

	if (recvmsg(sock, &msg, MSG_WAITALL) != (ssize_t)len)
		return -1;
	cmsg = CMSG_FIRSTHDR(&msg);
	if (!cmsg || cmsg->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
	return fd;
}

static inline void sync_send(int sock)
{
	char c = 0;

	CHILD_CHECK(write(sock, &c, 1) == 1);
}

static inline void sync_wait(int sock)
{
	char c;

	CHILD_CHECK(read(sock, &c, 1) == 1);
}

/*
 * The exit status of child @pid, 128 + the signal that ended it, or -1.
 * __WALL: a child may be a thread-group leader that is also traced.
 */
static inline int wait_child(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, __WALL) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static inline off_t fd_size(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? -1 : st.st_size;
}

/* A memfd holding @len bytes at @data, its position at 0, or -1 */
static inline int memfd_from(const void *data, size_t len)
{
	int fd = memfd_create("kfd-criu-image", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (write(fd, data, len) != (ssize_t)len || lseek(fd, 0, SEEK_SET)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Reads @path into @buf as a string; 0 or -1 */
static inline int read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, size - 1);

	if (fd >= 0)
		close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return n < 0 ? -1 : 0;
}

/*
 * Fills @gpus with the GPU nodes (gpu_id not 0) of the KFD topology, at
 * most @max; their render minor is -1 when the node names none. Returns
 * how many there are; 0 without a topology.
 */
static inline int kfd_topology_gpus(struct kfd_test_gpu *gpus, int max)
{
	char path[128], buf[4096];
	const char *minor;
	int node, n = 0;
	__u32 gpu_id;

	for (node = 0; n < max; node++) {
		snprintf(path, sizeof(path), KFD_TOPOLOGY_NODES "/%d/gpu_id",
			 node);
		if (read_text(path, buf, sizeof(buf)))
			break;
		gpu_id = strtoul(buf, NULL, 10);
		if (!gpu_id)
			continue;
		snprintf(path, sizeof(path), KFD_TOPOLOGY_NODES "/%d/properties",
			 node);
		read_text(path, buf, sizeof(buf));
		minor = strstr(buf, "drm_render_minor ");
		gpus[n].gpu_id = gpu_id;
		gpus[n].node = node;
		gpus[n++].render_minor = minor ? atoi(minor + 17) : -1;
	}
	return n;
}

/* Opens the render node of @gpu, or returns -1 */
static inline int open_render_node(const struct kfd_test_gpu *gpu)
{
	char path[64];

	if (gpu->render_minor < 0)
		return -1;
	snprintf(path, sizeof(path), "/dev/dri/renderD%d", gpu->render_minor);
	return open(path, O_RDWR | O_CLOEXEC);
}

/*
 * Reads the property @name of the topology properties file @path, lines
 * of "name value", into @val; 0, or -1 when the file does not list it.
 */
static inline int kfd_sysfs_prop(const char *path, const char *name,
				 __u64 *val)
{
	char buf[4096], *line, *save = NULL;
	size_t len = strlen(name);

	if (read_text(path, buf, sizeof(buf)))
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, name, len) && line[len] == ' ') {
			*val = strtoull(line + len + 1, NULL, 10);
			return 0;
		}
	}
	return -1;
}

/*
 * Reads the property @name of @gpu's topology node into @val; 0, or -1
 * when the node does not list it.
 */
static inline int kfd_gpu_prop(const struct kfd_test_gpu *gpu,
			       const char *name, __u64 *val)
{
	char path[128];

	snprintf(path, sizeof(path), KFD_TOPOLOGY_NODES "/%d/properties",
		 gpu->node);
	return kfd_sysfs_prop(path, name, val);
}

/* The property @name of @gpu's node, or @absent when it lists none */
static inline __u64 kfd_gpu_prop_or(const struct kfd_test_gpu *gpu,
				    const char *name, __u64 absent)
{
	__u64 val;

	return kfd_gpu_prop(gpu, name, &val) ? absent : val;
}

/*
 * Whether the CPU can see all of @gpu's VRAM through its BAR (a large
 * BAR), which ALLOC_MEMORY_OF_GPU wants for VRAM with
 * KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC (6.12 refuses it with -EINVAL otherwise,
 * kfd_dev_is_large_bar()). The topology says it in the heap type of the
 * node's frame buffer bank (linux/kfd_sysfs.h): 6.12 reports the VRAM as
 * one FB_PUBLIC heap when none of it lies outside the BAR, and as one
 * FB_PRIVATE heap of all of it otherwise (kfd_crat.c). An APU that 6.12
 * treats as large-BAR without public memory reads as small here, which
 * costs a test only its PUBLIC case. Returns 1 or 0, or -ENODEV when the
 * node lists no frame buffer heap.
 */
static inline int kfd_gpu_vram_public(const struct kfd_test_gpu *gpu)
{
	__u64 heap, size;
	char path[128];
	int bank;

	for (bank = 0;; bank++) {
		snprintf(path, sizeof(path),
			 KFD_TOPOLOGY_NODES "/%d/mem_banks/%d/properties",
			 gpu->node, bank);
		if (kfd_sysfs_prop(path, "heap_type", &heap))
			return -ENODEV;
		if (kfd_sysfs_prop(path, "size_in_bytes", &size) || !size)
			continue;
		if (heap == HSA_MEM_HEAP_TYPE_FB_PUBLIC)
			return 1;
		if (heap == HSA_MEM_HEAP_TYPE_FB_PRIVATE)
			return 0;
	}
}

/**
 * struct kfd_cwsr_layout - the EOP buffer and CWSR area that CREATE_QUEUE
 *	wants for a compute queue of a GPU
 * @num_xcc: XCCs of the GPU's partition; the queue gets an MQD on each,
 *	and a save area per XCC, back to back in one buffer
 * @cwsr_size: ctx_save_restore_size: the topology's cwsr_size, which is
 *	per XCC
 * @ctl_stack_size: the topology's ctl_stack_size, per XCC
 * @debug_size: bytes per XCC that the buffer holds beyond @cwsr_size for
 *	the debugger
 * @area_size: bytes of the CWSR buffer: (@cwsr_size + @debug_size) times
 *	@num_xcc, page aligned. Exactly: kfd_queue_acquire_buffers() finds
 *	the buffer by its GPU mapping and wants a mapping of that size.
 * @eop_size: bytes of the EOP buffer
 */
struct kfd_cwsr_layout {
	__u32 num_xcc;
	__u32 cwsr_size;
	__u32 ctl_stack_size;
	__u32 debug_size;
	__u64 area_size;
	__u32 eop_size;
};

/* The EOP buffer CREATE_QUEUE asks for on GFX9 and later */
#define KFD_EOP_SIZE		4096U
/* The bytes a save area spends on its header and end marker */
#define KFD_CWSR_CTL_OVERHEAD	48U
/* A GFX10 control stack is at most this long (a hardware limit) */
#define KFD_GFX10_CTL_STACK_MAX	0x7000U
#define KFD_DEBUG_BYTES_PER_WAVE	32U
#define KFD_DEBUG_BYTES_ALIGN	64U

static inline __u64 kfd_align(__u64 x, __u64 a)
{
	return (x + a - 1) / a * a;
}

/*
 * The wave slots of one XCC of @gpu that a save area has room for:
 * 64 per CU on GFX 12.1 (gfx_target_version 120500 and 120501), 32 per CU
 * from GFX10.1 to 12.0; before, 40 per CU but at most 512 per shader
 * engine. From documented topology properties: simd_count and array_count
 * count the whole partition, so they are divided by its @num_xcc.
 */
static inline __u64 kfd_gpu_wave_slots(const struct kfd_test_gpu *gpu,
				       __u32 num_xcc)
{
	__u64 gfx = kfd_gpu_prop_or(gpu, "gfx_target_version", 0);
	__u64 per_cu = kfd_gpu_prop_or(gpu, "simd_per_cu", 0);
	__u64 per_engine = kfd_gpu_prop_or(gpu, "simd_arrays_per_engine", 0);
	__u64 cus, arrays;

	if (!per_cu || !per_engine)
		return 0;
	cus = kfd_gpu_prop_or(gpu, "simd_count", 0) / per_cu / num_xcc;
	if (gfx >= 120500)
		return cus * 64;
	if (gfx >= 100100)
		return cus * 32;
	arrays = kfd_gpu_prop_or(gpu, "array_count", 0) / num_xcc;
	return cus * 40 < arrays / per_engine * 512 ?
	       cus * 40 : arrays / per_engine * 512;
}

/*
 * The control stack a GPU of gfx target @gfx needs for @waves wave slots:
 * a header, 8 bytes a wave before GFX10.1 and 12 after, page aligned.
 */
static inline __u64 kfd_ctl_stack_for(__u64 gfx, __u64 waves, __u64 page)
{
	__u64 size = KFD_CWSR_CTL_OVERHEAD + waves * (gfx >= 100100 ? 12 : 8);

	size = kfd_align(size, page);
	if (gfx / 10000 == 10 && size > KFD_GFX10_CTL_STACK_MAX)
		size = KFD_GFX10_CTL_STACK_MAX;
	return size;
}

/*
 * Fills @l for a compute queue of @gpu. The kernel reports the save area and
 * control stack sizes in the topology, but not the debugger's share of
 * the buffer (node_props.debug_memory_size stays inside the kernel), so
 * user mode computes that itself: 32 bytes per wave slot, 64-byte
 * aligned. The wave slots come from topology properties (see
 * kfd_gpu_wave_slots()); as that repeats a rule of the kernel's, the count
 * is checked against ctl_stack_size, which the kernel derives from the
 * same count, so that a kernel with another rule fails here with a
 * message rather than in CREATE_QUEUE with a bare -EINVAL.
 *
 * Returns 0; -ENODATA when the topology reports no save area (a GPU
 * without CWSR, or a kernel before 6.12); -ERANGE when the wave slots
 * disagree with ctl_stack_size.
 */
static inline int kfd_gpu_cwsr_layout(const struct kfd_test_gpu *gpu,
				      struct kfd_cwsr_layout *l)
{
	__u64 gfx = kfd_gpu_prop_or(gpu, "gfx_target_version", 0);
	__u64 page = sysconf(_SC_PAGESIZE), waves;

	memset(l, 0, sizeof(*l));
	/* Kernels before multi-XCC support do not list num_xcc */
	l->num_xcc = kfd_gpu_prop_or(gpu, "num_xcc", 1) ?: 1;
	l->cwsr_size = kfd_gpu_prop_or(gpu, "cwsr_size", 0);
	l->ctl_stack_size = kfd_gpu_prop_or(gpu, "ctl_stack_size", 0);
	if (!l->cwsr_size || !l->ctl_stack_size)
		return -ENODATA;
	waves = kfd_gpu_wave_slots(gpu, l->num_xcc);
	if (!waves || kfd_ctl_stack_for(gfx, waves, page) != l->ctl_stack_size)
		return -ERANGE;
	l->debug_size = kfd_align(waves * KFD_DEBUG_BYTES_PER_WAVE,
				  KFD_DEBUG_BYTES_ALIGN);
	l->area_size = kfd_align((__u64)l->num_xcc *
				 (l->cwsr_size + l->debug_size), page);
	l->eop_size = KFD_EOP_SIZE;
	return 0;
}

static inline int kfd_acquire_vm(int kfd, int drm_fd, __u32 gpu_id)
{
	struct kfd_ioctl_acquire_vm_args args = {
		.drm_fd = drm_fd, .gpu_id = gpu_id,
	};

	return kfd_ioctl(kfd, AMDKFD_IOC_ACQUIRE_VM, &args);
}

/* Whether [@va, @va + @size) lies in @gpu_id's GPUVM aperture */
static inline bool kfd_in_gpuvm_aperture(int kfd, __u32 gpu_id, __u64 va,
					 __u64 size)
{
	struct kfd_process_device_apertures ap[KFD_TEST_MAX_GPUS];
	struct kfd_ioctl_get_process_apertures_new_args args = {
		.kfd_process_device_apertures_ptr = (uintptr_t)ap,
		.num_of_nodes = KFD_TEST_MAX_GPUS,
	};
	__u32 i;

	if (kfd_ioctl(kfd, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &args))
		return false;
	for (i = 0; i < args.num_of_nodes && i < KFD_TEST_MAX_GPUS; i++)
		if (ap[i].gpu_id == gpu_id)
			return va >= ap[i].gpuvm_base &&
			       va + size - 1 <= ap[i].gpuvm_limit;
	return false;
}

/*
 * ALLOC_MEMORY_OF_GPU of @size bytes at @va with @flags; @userptr is the
 * CPU address of a userptr BO, else 0. Sets *@handle and *@mmap_offset.
 */
static inline int kfd_alloc_memory(int kfd, __u32 gpu_id, __u32 flags,
				   __u64 va, __u64 size, __u64 userptr,
				   __u64 *handle, __u64 *mmap_offset)
{
	struct kfd_ioctl_alloc_memory_of_gpu_args args = {
		.va_addr = va, .size = size, .mmap_offset = userptr,
		.gpu_id = gpu_id, .flags = flags,
	};
	int ret;

	ret = kfd_ioctl(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &args);
	*handle = args.handle;
	*mmap_offset = args.mmap_offset;
	return ret;
}

static inline int kfd_free_memory(int kfd, __u64 handle)
{
	struct kfd_ioctl_free_memory_of_gpu_args args = { .handle = handle };

	return kfd_ioctl(kfd, AMDKFD_IOC_FREE_MEMORY_OF_GPU, &args);
}

/*
 * MAP_MEMORY_TO_GPU (@map) or UNMAP_MEMORY_FROM_GPU of @handle on the @n
 * GPUs at @gpu_ids; -EIO when not all of them took it.
 */
static inline int kfd_map_memory(int kfd, bool map, __u64 handle,
				 const __u32 *gpu_ids, __u32 n)
{
	struct kfd_ioctl_map_memory_to_gpu_args args = {
		.handle = handle, .device_ids_array_ptr = (uintptr_t)gpu_ids,
		.n_devices = n,
	};
	int ret;

	/* The unmap args have the same layout */
	ret = kfd_ioctl(kfd, map ? AMDKFD_IOC_MAP_MEMORY_TO_GPU :
			AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &args);
	return ret ? ret : args.n_success == n ? 0 : -EIO;
}

/*
 * Where RESTORE moved mmap offset @old of a buffer of GPU @gpu_id (the
 * image's gpu_id), by its offset map; else @old. Offsets are per device.
 */
static inline __u64 criu_moved_offset(const struct kfd_criu_offset_map *map,
				      __u32 n, __u32 gpu_id, __u64 old)
{
	__u32 i;

	for (i = 0; i < n; i++)
		if (map[i].gpu_id == gpu_id && map[i].old_offset == old)
			return map[i].new_offset;
	return old;
}

/*
 * Dumps the process that owns @kfd as CRIU's plugin does: PROCESS_INFO,
 * then CHECKPOINT into @image_fd. The process stays paused; the caller
 * UNPAUSEs it. Returns 0 or the failing op's negative errno, and names
 * that op in *@op; *@pid is the pid PROCESS_INFO reported and *@size the
 * bytes CHECKPOINT wrote.
 */
static inline int criu_dump(int kfd, int image_fd, pid_t *pid, __u64 *size,
			    const char **op)
{
	struct kfd_ioctl_criu_args args;
	int ret;

	*op = "PROCESS_INFO";
	ret = criu_image_op(kfd, KFD_CRIU_OP_PROCESS_INFO, -1, &args);
	if (ret)
		return ret;
	*pid = args.pid;
	*op = "CHECKPOINT";
	ret = criu_image_op(kfd, KFD_CRIU_OP_CHECKPOINT, image_fd, &args);
	*size = args.image_size;
	return ret;
}

/*
 * The image stream as the kernel's kfd_criu_image.h lays it out (see the
 * "Image stream" section of amdkfd-criu.rst): a header, then records of
 * a 12-byte header (type, flags, payload length), the payload and a
 * CRC32C trailer over both, all little-endian. Offsets below are of
 * fields in a record's payload.
 */
#define CRIU_IMG_HEADER_SIZE		88
#define CRIU_IMG_REC_HEADER_SIZE	12
#define CRIU_IMG_REC_OVERHEAD		16
#define CRIU_IMG_REC_END		1
#define CRIU_IMG_REC_PROCESS		3
#define CRIU_IMG_REC_SIGNAL_PAGE	4
#define CRIU_IMG_REC_EVENT		5
#define CRIU_IMG_REC_GPU		6
#define CRIU_IMG_REC_BO			7
#define CRIU_IMG_REC_BO_DATA		8
#define CRIU_IMG_REC_QUEUE		9
#define CRIU_IMG_REC_QUEUE_STATE	10
#define CRIU_IMG_REC_SVM_RANGE		11
#define CRIU_IMG_REC_TRAP_HANDLER	13
/* Header: magic, version, flags and header size, then the release */
#define CRIU_IMG_HEADER_RELEASE		20
/* END */
#define CRIU_IMG_END_PAYLOAD_BYTES	8
/* EVENT */
#define CRIU_IMG_EVENT_ID		0
#define CRIU_IMG_EVENT_TYPE		4
#define CRIU_IMG_EVENT_AUTO_RESET	8
#define CRIU_IMG_EVENT_SIGNALED		12
#define CRIU_IMG_EVENT_AGE		16
/* PROCESS */
#define CRIU_IMG_PROC_XNACK		0
#define CRIU_IMG_PROC_RUNTIME_STATE	4
#define CRIU_IMG_PROC_R_DEBUG		8
#define CRIU_IMG_PROC_TTMP_SETUP	16
/* GPU */
#define CRIU_IMG_GPU_ID			0
/* BO: 56 bytes */
#define CRIU_IMG_BO_VA			0
#define CRIU_IMG_BO_SIZE		8
#define CRIU_IMG_BO_USERPTR		16
#define CRIU_IMG_BO_MMAP_OFFSET		24
#define CRIU_IMG_BO_MAPPED_GPUS		32
#define CRIU_IMG_BO_FLAGS		40
#define CRIU_IMG_BO_HANDLE		44
#define CRIU_IMG_BO_GPU_INDEX		48
#define CRIU_IMG_BO_LEN			56
/* BO_DATA: a 16-byte header, then the contents */
#define CRIU_IMG_BO_DATA_INDEX		0
#define CRIU_IMG_BO_DATA_OFFSET		8
#define CRIU_IMG_BO_DATA_HDR		16
/* TRAP_HANDLER */
#define CRIU_IMG_TRAP_GPU_INDEX		0
#define CRIU_IMG_TRAP_TBA		8
#define CRIU_IMG_TRAP_TMA		16
/* QUEUE: 112 bytes, then the CU mask */
#define CRIU_IMG_QUEUE_RING_BASE	0
#define CRIU_IMG_QUEUE_RPTR		8
#define CRIU_IMG_QUEUE_WPTR		16
#define CRIU_IMG_QUEUE_EOP_BASE		24
#define CRIU_IMG_QUEUE_CWSR_BASE	32
#define CRIU_IMG_QUEUE_ID		40
#define CRIU_IMG_QUEUE_GPU_INDEX	44
#define CRIU_IMG_QUEUE_TYPE		48
#define CRIU_IMG_QUEUE_FORMAT		52
#define CRIU_IMG_QUEUE_PRIORITY		56
#define CRIU_IMG_QUEUE_RING_SIZE	68
#define CRIU_IMG_QUEUE_DOORBELL		84
#define CRIU_IMG_QUEUE_SDMA_ENGINE	88
#define CRIU_IMG_QUEUE_GWS		92
#define CRIU_IMG_QUEUE_NUM_CU_MASK	96
#define CRIU_IMG_QUEUE_NUM_XCC		100
#define CRIU_IMG_QUEUE_LEN		112
/* QUEUE_STATE: queue index, XCC, reserved; then what the queue ran */
#define CRIU_IMG_QSTATE_QUEUE_INDEX	0
#define CRIU_IMG_QSTATE_XCC		4
#define CRIU_IMG_QSTATE_DATA_LEN	12
/* SVM_RANGE */
#define CRIU_IMG_SVM_START		0
#define CRIU_IMG_SVM_SIZE		8
#define CRIU_IMG_SVM_ACCESS		16
#define CRIU_IMG_SVM_FLAGS		48

static inline __u32 criu_img_le32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (__u32)p[3] << 24;
}

static inline __u64 criu_img_le64(const unsigned char *p)
{
	return criu_img_le32(p) | (__u64)criu_img_le32(p + 4) << 32;
}

/**
 * struct criu_img_rec - a record of an image in memory
 * @off: where its header starts in the image
 * @type: its type
 * @length: bytes of payload
 * @payload: the payload
 */
struct criu_img_rec {
	size_t off;
	__u32 type;
	__u32 length;
	unsigned char *payload;
};

/*
 * Fills @rec with the record at @off of the @len bytes at @img; false
 * when no whole record starts there.
 */
static inline bool criu_img_rec_at(unsigned char *img, size_t len,
				   size_t off, struct criu_img_rec *rec)
{
	if (off < CRIU_IMG_HEADER_SIZE || off > len ||
	    len - off < CRIU_IMG_REC_OVERHEAD)
		return false;
	rec->length = criu_img_le32(img + off + 8);
	if (rec->length > len - off - CRIU_IMG_REC_OVERHEAD)
		return false;
	rec->off = off;
	rec->type = criu_img_le32(img + off);
	rec->payload = img + off + CRIU_IMG_REC_HEADER_SIZE;
	return true;
}

static inline bool criu_img_first(unsigned char *img, size_t len,
				  struct criu_img_rec *rec)
{
	/* The offsets here are version 1's: refuse anything else loudly */
	if (len < CRIU_IMG_HEADER_SIZE || memcmp(img, "KFDCRIU", 8) ||
	    criu_img_le32(img + 8) != 1 ||
	    criu_img_le32(img + 16) != CRIU_IMG_HEADER_SIZE) {
		fprintf(stderr, "# not a version 1 image with an %d-byte header\n",
			CRIU_IMG_HEADER_SIZE);
		return false;
	}
	return criu_img_rec_at(img, len, CRIU_IMG_HEADER_SIZE, rec);
}

/* Steps @rec to the record after it; false at the end of the image */
static inline bool criu_img_next(unsigned char *img, size_t len,
				 struct criu_img_rec *rec)
{
	return criu_img_rec_at(img, len, rec->off + CRIU_IMG_REC_OVERHEAD +
			       rec->length, rec);
}

/*
 * Finds record @n (from 0) of @type, or with @n -1 the last one; false
 * when the image has no such record.
 */
static inline bool criu_img_find(unsigned char *img, size_t len, __u32 type,
				 int n, struct criu_img_rec *rec)
{
	struct criu_img_rec cur;
	bool found = false, ok;
	int seen = 0;

	for (ok = criu_img_first(img, len, &cur); ok;
	     ok = criu_img_next(img, len, &cur)) {
		if (cur.type != type)
			continue;
		*rec = cur;
		found = true;
		if (seen++ == n)
			return true;
	}
	return found && n < 0;
}

/*
 * The gpu_id the process knew the GPU of GPU record @index of @img by,
 * which other records name by that index; 0 when there is no such record
 */
static inline __u32 criu_img_gpu_id(unsigned char *img, size_t len,
				    __u32 index)
{
	struct criu_img_rec rec;

	if (index > INT32_MAX ||
	    !criu_img_find(img, len, CRIU_IMG_REC_GPU, index, &rec) ||
	    rec.length < CRIU_IMG_GPU_ID + 4)
		return 0;
	return criu_img_le32(rec.payload + CRIU_IMG_GPU_ID);
}

/* CRC32C as the stream uses it: all-ones seed, inverted result */
static inline __u32 criu_img_crc32c(const unsigned char *p, size_t len)
{
	__u32 crc = ~0U;
	int bit;

	while (len--) {
		crc ^= *p++;
		for (bit = 0; bit < 8; bit++)
			crc = (crc >> 1) ^ (0x82f63b78U & -(crc & 1));
	}
	return ~crc;
}

/* Rewrites the CRC trailer of @rec after a change of its payload */
static inline void criu_img_fix_crc(unsigned char *img,
				    const struct criu_img_rec *rec)
{
	size_t n = CRIU_IMG_REC_HEADER_SIZE + rec->length;
	__u32 crc = criu_img_crc32c(img + rec->off, n);
	unsigned char *p = img + rec->off + n;

	p[0] = crc;
	p[1] = crc >> 8;
	p[2] = crc >> 16;
	p[3] = crc >> 24;
}

/*
 * Reads the whole image file @fd from its start into a malloc()ed buffer,
 * its length in *@len; NULL on error.
 */
static inline unsigned char *criu_img_load(int fd, size_t *len)
{
	off_t size = fd_size(fd);
	unsigned char *img;

	if (size <= 0)
		return NULL;
	img = malloc(size);
	if (img && pread(fd, img, size, 0) != size) {
		free(img);
		img = NULL;
	}
	*len = size;
	return img;
}

/* Monotonic milliseconds, for bounded waits */
static inline __u64 now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/**
 * struct kfd_dumpee - a child process a test dumps, as CRIU would
 * @pid: its pid
 * @sock: the test's end of the socket pair to it
 * @kfd: its /dev/kfd file, which it passed to the test
 */
struct kfd_dumpee {
	pid_t pid;
	int sock;
	int kfd;
};

/*
 * Forks a child that runs @fn(sock, @ctx): it sets up KFD state, hands
 * its /dev/kfd file and @len bytes at @data to the test with send_fd()
 * and sync_wait()s until the dump is done. Receives both into @d and
 * @data and seizes the child with ptrace, so that the test may dump it.
 * Returns 0, or -1 when the child ended instead (it said why).
 */
static inline int kfd_dumpee_start(struct kfd_dumpee *d,
				   void (*fn)(int sock, void *ctx), void *ctx,
				   void *data, size_t len)
{
	int sv[2];

	d->pid = -1;
	d->sock = -1;
	d->kfd = -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -1;
	d->pid = fork();
	if (d->pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (!d->pid) {
		close(sv[0]);
		fn(sv[1], ctx);
		_exit(0);
	}
	close(sv[1]);
	d->sock = sv[0];
	d->kfd = recv_fd(d->sock, data, len);
	if (d->kfd < 0 || ptrace(PTRACE_SEIZE, d->pid, 0, 0))
		return -1;
	return 0;
}

/*
 * Lets the dumpee go on from its sync_wait(), or kills it when it never
 * handed over its file; returns its exit status, or -1.
 */
static inline int kfd_dumpee_finish(struct kfd_dumpee *d)
{
	char c = 0;
	int ret;

	if (d->pid < 0)
		return -1;
	if (d->kfd < 0 || write(d->sock, &c, 1) != 1)
		kill(d->pid, SIGKILL);
	ret = wait_child(d->pid);
	if (d->kfd >= 0)
		close(d->kfd);
	close(d->sock);
	return ret;
}

/*
 * Runs @fn(sock, @ctx) in a fresh child that restores an image: it
 * sync_send()s once its RESTORE succeeded and then sync_wait()s, while
 * this function RESUMEs it as its tracer through a /dev/kfd file of the
 * test's. Returns
 * the child's exit status, or -1; *@resume_ret is RESUME's result, or 1
 * when the child ended before it asked for RESUME.
 */
static inline int kfd_restoree_run(void (*fn)(int sock, void *ctx),
				   void *ctx, int *resume_ret)
{
	int sv[2], kfd;
	pid_t pid;
	char c = 0;

	*resume_ret = 1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (!pid) {
		close(sv[0]);
		fn(sv[1], ctx);
		_exit(0);
	}
	close(sv[1]);
	if (read(sv[0], &c, 1) == 1) {
		kfd = kfd_open();
		*resume_ret = kfd < 0 ? -errno : criu_resume_traced(kfd, pid);
		if (*resume_ret || write(sv[0], &c, 1) != 1)
			kill(pid, SIGKILL);
		if (kfd >= 0)
			close(kfd);
	}
	close(sv[0]);
	return wait_child(pid);
}

#endif /* KFD_CRIU_UTIL_H */
