/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DOC: helpers shared by the amdkfd CRIU selftests
 *
 * KFD ioctl wrappers for image mode, fd passing over SCM_RIGHTS, process
 * synchronisation and the GPU nodes of the KFD topology. Every function is
 * static inline: each test program includes this header once. The
 * project's e2e tests (outside the kernel tree) include it as well.
 */
#ifndef KFD_CRIU_UTIL_H
#define KFD_CRIU_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/kfd_ioctl.h>

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
 */
struct kfd_test_gpu {
	__u32 gpu_id;
	int render_minor;
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

/* An image-mode CRIU op with no GPU or offset map; clears @args first */
static inline int criu_image_op(int fd, __u32 op, int image_fd,
				struct kfd_ioctl_criu_args *args)
{
	memset(args, 0, sizeof(*args));
	args->op = op;
	args->flags = KFD_CRIU_FLAG_IMAGE;
	args->image_fd = image_fd;
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
	args->op = KFD_CRIU_OP_RESTORE;
	args->flags = KFD_CRIU_FLAG_IMAGE;
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
	args.op = KFD_CRIU_OP_RESUME;
	args.flags = KFD_CRIU_FLAG_IMAGE;
	args.pid = pid;
	return kfd_ioctl(fd, AMDKFD_IOC_CRIU_OP, &args);
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

#endif /* KFD_CRIU_UTIL_H */
