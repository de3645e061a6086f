// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: kfd_faults_test - faults and races around CRIU image mode
 *
 * Usage: kfd_faults_test, or the same program as kfd_failnth_test
 *
 * Runs as root in the test VM; needs no GPU. A child process (the dumpee)
 * builds KFD state: manual-reset signal events, two of them signaled, the
 * event page mapped with a pattern in four slots, XNACK off. It hands its
 * /dev/kfd file to the test over SCM_RIGHTS and then answers commands on a
 * socket: check your state, UNPAUSE yourself, exit. The test dumps it as
 * CRIU does (PTRACE_SEIZE, PROCESS_INFO, CHECKPOINT, UNPAUSE) while things
 * go wrong:
 *
 * - the dumpee exits between PROCESS_INFO and CHECKPOINT (still a traced
 *   zombie, then reaped), or is killed while CHECKPOINT streams;
 * - the dumper is killed in the middle of CHECKPOINT;
 * - the image goes to a pipe whose reader closes mid-stream (EPIPE), to a
 *   full tmpfs (ENOSPC) and to /dev/full (EINVAL: no write_iter);
 * - two CHECKPOINTs race on one process, and CHECKPOINT races UNPAUSE;
 *   UNPAUSE comes while a CHECKPOINT is blocked on a full pipe (EBUSY);
 * - two RESTOREs race in one process, and RESTORE races CREATE_EVENT;
 * - threads of the dumpee storm SET_EVENT and RESET_EVENT during the dump,
 *   stopped first as CRIU stops them, and not stopped;
 * - a signal interrupts a CHECKPOINT or a RESTORE blocked on a pipe, with
 *   and without SA_RESTART, and SIGKILL ends a blocked RESTORE.
 *
 * After a failure the dumped process must be intact and its paused state
 * recoverable (a later CHECKPOINT writes the same image, UNPAUSE works), a
 * restoring process must be left without KFD state, and the kernel log
 * must show no splat. Every test is one TAP result.
 *
 * As kfd_failnth_test (debug kernel only: fault injection), it fails each
 * allocation of RESTORE and of CHECKPOINT in turn, through
 * /proc/thread-self/fail-nth and failslab, until the op passes them all:
 * every failure must be ENOMEM and leave the process as it was (no KFD
 * state after a RESTORE, which then works; the dumpee intact and paused
 * after a CHECKPOINT, which then writes the same image).
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/kfd_ioctl.h>

#include "../kernel/tools/testing/selftests/drivers/gpu/amdkfd/kfd_criu_util.h"

#include "../fuzz/kfd_image_mutator.c"

#define EVENT_PAGE_OFFSET	(2ULL << 62)
#define EVENT_PAGE_SIZE		(KFD_SIGNAL_EVENT_LIMIT * 8)
#define PLAIN_EVENTS		5
#define PATTERN(slot)		(0x6661756c74000000ULL | (slot))
#define PATTERN_SLOT0		100
#define STORM_THREADS		3
#define STORM_EVENTS		20
#define STORM_CYCLES		5
#define RACE_ROUNDS		30
#define SMALL_TMPFS		"/tmp/kfd-faults-small"
/* Memory the test shares with other threads and processes */
#define LOAD(x)			__atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define STORE(x, v)		__atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)
#define EMPTY_IMAGE_SIZE	(KFD_IMG_HEADER_SIZE + 3 * KFD_IMG_REC_OVERHEAD + \
				 KFD_IMG_COMPAT_SIZE + KFD_IMG_PROCESS_SIZE + \
				 KFD_IMG_END_SIZE)

/**
 * struct storm - what the dumpee's threads share with the test
 * @stop: set by the test to end the storm
 * @tids: thread ids of the storm threads
 * @ready: storm threads that are running
 * @started: per thread, operations begun (written before the ioctl)
 * @done: per thread, operations completed (written after it returned)
 * @ids: per thread, the ids of its events
 * @race_done: set by the test when its side of a race is over
 * @unpause_busy: UNPAUSEs the dumpee's race thread saw refused with EBUSY
 *
 * Operation k of a thread acts on its event k % STORM_EVENTS and is a
 * SET_EVENT when k / STORM_EVENTS is even, a RESET_EVENT when it is odd,
 * so the state of every event after any number of operations is known.
 */
struct storm {
	int stop;
	pid_t tids[STORM_THREADS];
	int ready;
	uint64_t started[STORM_THREADS];
	uint64_t done[STORM_THREADS];
	uint32_t ids[STORM_THREADS][STORM_EVENTS];
	int race_done;
	int unpause_busy;
};

/**
 * struct dumpee - a child process with KFD state, as the test sees it
 * @pid: its pid
 * @sock: command socket
 * @kfd: its /dev/kfd file, received over SCM_RIGHTS
 */
struct dumpee {
	pid_t pid;
	int sock;
	int kfd;
};

/**
 * struct image - an image in memory
 * @data: the stream
 * @len: its length
 */
struct image {
	uint8_t *data;
	size_t len;
};

static int tap_count;
static int tap_failed;
static int kmsg_fd = -1;
static struct storm *storm;
static struct image reference;
static volatile sig_atomic_t alarms;
static int dumpee_fd;	/* in the dumpee: its /dev/kfd file */

/*
 * TAP and diagnostics
 */

static void tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", ok ? "" : "not ", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	tap_failed |= !ok;
}

/* Prints why a check failed and fails it. */
static bool diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return false;
}

#define CHECK(cond) ((cond) ? true : diag("%s:%d: %s (errno %d)", __func__, \
					  __LINE__, #cond, errno))

/* True if the kernel logged no splat since the last call. */
static bool no_new_splats(void)
{
	static const char * const marks[] = {
		"BUG:", "WARNING:", "Oops", "general protection fault", "UBSAN:",
		"KASAN", "possible recursive locking", "suspicious RCU usage",
		"INFO: task",
	};
	char rec[8192];
	bool clean = true;
	unsigned int i;
	ssize_t n;

	while (kmsg_fd >= 0) {
		n = read(kmsg_fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;
		if (n <= 0)
			break;
		rec[n] = '\0';
		for (i = 0; i < ARRAY_SIZE(marks); i++)
			if (strstr(rec, marks[i]))
				clean = diag("kernel: %s", strchr(rec, ';') ?: rec);
	}
	return clean;
}

/*
 * KFD ioctls
 */

static int criu_op(int fd, uint32_t op, int image_fd, uint64_t *size)
{
	struct kfd_ioctl_criu_args args;
	int ret = criu_image_op(fd, op, image_fd, &args);

	if (size)
		*size = args.image_size;
	return ret;
}

static int create_event(int fd, uint32_t *id)
{
	struct kfd_ioctl_create_event_args args = {
		.event_type = KFD_IOC_EVENT_SIGNAL,
	};
	int ret = kfd_ioctl(fd, AMDKFD_IOC_CREATE_EVENT, &args);

	*id = args.event_id;
	return ret;
}

static int event_op(int fd, unsigned long cmd, uint32_t id)
{
	struct kfd_ioctl_set_event_args args = { .event_id = id };

	return kfd_ioctl(fd, cmd, &args);
}

/* Wait result for @id without blocking; with @age, the event's age. */
static int poll_event(int fd, uint32_t id, uint64_t *age)
{
	struct kfd_event_data data = { .event_id = id };
	struct kfd_ioctl_wait_events_args args = {
		.events_ptr = (uintptr_t)&data,
		.num_events = 1,
	};
	int ret;

	if (age)
		data.signal_event_data.last_event_age = *age == 1 ? 2 : 1;
	ret = kfd_ioctl(fd, AMDKFD_IOC_WAIT_EVENTS, &args);
	if (age)
		*age = data.signal_event_data.last_event_age;
	return ret ? ret : (int)args.wait_result;
}

static uint64_t *map_event_page(int fd)
{
	void *page = mmap(NULL, EVENT_PAGE_SIZE, PROT_READ | PROT_WRITE,
			  MAP_SHARED, fd, (off_t)EVENT_PAGE_OFFSET);

	return page == MAP_FAILED ? NULL : page;
}

/*
 * The XNACK mode of a fresh process, probed before anything forks; -1
 * where userspace has no say in it (no CONFIG_HSA_AMD_SVM: Debian's
 * kernel, the distro lane), and the mode is not checked.
 */
static int xnack_fresh = -1;

__attribute__((constructor)) static void xnack_probe(void)
{
	xnack_fresh = kfd_xnack_fresh_mode();
}

/*
 * Whether the process of @fd is in XNACK mode @mode, after setting it
 * when @set; always where userspace has no say in the mode.
 */
static bool xnack_in_mode(int fd, int mode, bool set)
{
	if (xnack_fresh < 0)
		return true;
	return kfd_xnack_mode(fd, set ? mode : -1) == mode;
}

/*
 * Images
 */

static int memfd_with(const struct image *img)
{
	int fd = memfd_create("kfd-faults-image", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (pwrite(fd, img->data, img->len, 0) != (ssize_t)img->len) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool read_fd_image(int fd, struct image *img)
{
	struct stat st;

	if (fstat(fd, &st))
		return false;
	img->len = st.st_size;
	img->data = malloc(img->len ? img->len : 1);
	return img->data && pread(fd, img->data, img->len, 0) == (ssize_t)img->len;
}

/* CHECKPOINT into a fresh memfd and read the image back. */
static int checkpoint_image(int kfd, struct image *img)
{
	int fd = memfd_create("kfd-faults-image", MFD_CLOEXEC);
	int ret = fd < 0 ? -errno : criu_op(kfd, KFD_CRIU_OP_CHECKPOINT, fd, NULL);

	if (!ret && !read_fd_image(fd, img))
		ret = -EIO;
	if (fd >= 0)
		close(fd);
	return ret;
}

static bool same_image(const struct image *a, const struct image *b)
{
	return a->len == b->len && !memcmp(a->data, b->data, a->len);
}

/* CHECKPOINT once more: the image must be the reference, byte for byte. */
static bool checkpoint_matches(int kfd)
{
	struct image img = { 0 };
	int ret = checkpoint_image(kfd, &img);
	bool ok = CHECK(ret == 0) && CHECK(same_image(&img, &reference));

	free(img.data);
	return ok;
}

/*
 * The dumpee
 */

/* Events 1-5, manual reset, 2 and 4 set; the page mapped and written. */
static int build_plain_state(int fd)
{
	uint64_t *page;
	uint32_t id, i;
	int ret = 0;

	for (i = 1; i <= PLAIN_EVENTS && !ret; i++) {
		ret = create_event(fd, &id);
		if (!ret && id != i)
			ret = -EPROTO;
		if (!ret && i % 2 == 0)
			ret = event_op(fd, AMDKFD_IOC_SET_EVENT, id);
	}
	if (!ret && !xnack_in_mode(fd, 0, true))
		ret = -EPROTO;
	page = map_event_page(fd);
	if (ret || !page)
		return -1;
	for (i = 0; i < 4; i++)
		page[PATTERN_SLOT0 + i] = PATTERN(PATTERN_SLOT0 + i);
	return munmap(page, EVENT_PAGE_SIZE);
}

/* The dumpee's own check of its state; returns 0 or the failed line. */
static int check_plain_state(int fd)
{
	uint64_t *page, age;
	uint32_t i;

	for (i = 1; i <= PLAIN_EVENTS; i++) {
		age = 1 + (i % 2 == 0);
		if (poll_event(fd, i, NULL) != (i % 2 == 0 ?
		    KFD_IOC_WAIT_RESULT_COMPLETE : KFD_IOC_WAIT_RESULT_TIMEOUT))
			return __LINE__;
		if (poll_event(fd, i, &age) != KFD_IOC_WAIT_RESULT_COMPLETE ||
		    age != 1 + (i % 2 == 0))
			return __LINE__;
	}
	if (!xnack_in_mode(fd, 0, false))
		return __LINE__;
	page = map_event_page(fd);
	if (!page)
		return __LINE__;
	for (i = 0; i < 4; i++)
		if (page[PATTERN_SLOT0 + i] != PATTERN(PATTERN_SLOT0 + i))
			return __LINE__;
	return munmap(page, EVENT_PAGE_SIZE) ? __LINE__ : 0;
}

/* Storm thread: SET_EVENT and RESET_EVENT on its events, round and round. */
static void *storm_thread(void *arg)
{
	unsigned int t = (uintptr_t)arg;
	uint64_t k = 0;
	uint32_t id;

	STORE(storm->tids[t], (pid_t)syscall(SYS_gettid));
	__atomic_add_fetch(&storm->ready, 1, __ATOMIC_SEQ_CST);
	while (!LOAD(storm->stop)) {
		id = storm->ids[t][k % STORM_EVENTS];
		STORE(storm->started[t], k + 1);
		event_op(dumpee_fd, (k / STORM_EVENTS) % 2 ? AMDKFD_IOC_RESET_EVENT :
			 AMDKFD_IOC_SET_EVENT, id);
		STORE(storm->done[t], ++k);
	}
	return NULL;
}

static int start_storm(int fd)
{
	pthread_t thread;
	unsigned int t, e;

	for (t = 0; t < STORM_THREADS; t++)
		for (e = 0; e < STORM_EVENTS; e++)
			if (create_event(fd, &storm->ids[t][e]))
				return -1;
	for (t = 0; t < STORM_THREADS; t++)
		if (pthread_create(&thread, NULL, storm_thread, (void *)(uintptr_t)t))
			return -1;
	while (LOAD(storm->ready) < STORM_THREADS)
		usleep(1000);
	return 0;
}

/*
 * Races on one process's CRIU state need two callers that may both use
 * its file: the thread that seized it, and the process itself. The dumpee
 * runs its side in threads of its own, on commands 'r' and 'U'.
 */

/* Dumpee thread: CHECKPOINTs of itself; returns the bad ones. */
static void *self_checkpoint_thread(void *arg)
{
	struct image img;
	uintptr_t bad = 0;
	int ret;

	(void)arg;
	while (!LOAD(storm->race_done)) {
		memset(&img, 0, sizeof(img));
		ret = checkpoint_image(dumpee_fd, &img);
		bad += ret || !same_image(&img, &reference);
		free(img.data);
	}
	return (void *)bad;
}

/*
 * Dumpee thread: UNPAUSE and PROCESS_INFO of itself; returns failures.
 * UNPAUSE must wait for no CHECKPOINT: while one streams it is refused.
 */
static void *self_unpause_thread(void *arg)
{
	uintptr_t bad = 0;
	int ret;

	(void)arg;
	while (!LOAD(storm->race_done)) {
		ret = criu_op(dumpee_fd, KFD_CRIU_OP_UNPAUSE, -1, NULL);
		if (ret == -EBUSY)
			__atomic_add_fetch(&storm->unpause_busy, 1, __ATOMIC_SEQ_CST);
		bad += ret && ret != -EBUSY;
		bad += !!criu_op(dumpee_fd, KFD_CRIU_OP_PROCESS_INFO, -1, NULL);
	}
	return (void *)bad;
}

/* In the dumpee: two threads race the test; the reply counts failures. */
static int dumpee_race(bool against_unpause)
{
	pthread_t t[2];
	void *bad;
	int i, n = against_unpause ? 1 : 2, total = 0;

	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, against_unpause ?
				   self_unpause_thread : self_checkpoint_thread, NULL))
			return -1;
	for (i = 0; i < n; i++) {
		pthread_join(t[i], &bad);
		total += (uintptr_t)bad;
	}
	return total;
}

/* The dumpee: builds its state, hands out its file, serves commands. */
static void dumpee_main(int sock, bool with_storm)
{
	struct kfd_ioctl_criu_args args;
	int fd = kfd_open(), reply;
	char cmd;

	dumpee_fd = fd;
	if (fd < 0 || build_plain_state(fd) || (with_storm && start_storm(fd)) ||
	    send_fd(sock, fd, "", 1))
		_exit(1);
	while (read(sock, &cmd, 1) == 1) {
		switch (cmd) {
		case 'c':
			reply = check_plain_state(fd);
			break;
		case 'r':
		case 'U':
			reply = dumpee_race(cmd == 'U');
			break;
		case 'u':
			memset(&args, 0, sizeof(args));
			args.op = KFD_CRIU_OP_IMAGE_UNPAUSE;
			reply = kfd_ioctl(fd, AMDKFD_IOC_CRIU_OP, &args);
			break;
		default:
			_exit(0);
		}
		if (write(sock, &reply, sizeof(reply)) != sizeof(reply))
			_exit(1);
	}
	_exit(0);
}

/* Starts a dumpee; with @seize the test becomes its ptrace parent. */
static bool dumpee_start(struct dumpee *d, bool seize, bool with_storm)
{
	char byte;
	int sv[2];

	memset(d, 0, sizeof(*d));
	d->kfd = -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return diag("socketpair: %s", strerror(errno));
	d->pid = fork();
	if (d->pid == 0) {
		close(sv[0]);
		dumpee_main(sv[1], with_storm);
	}
	close(sv[1]);
	d->sock = sv[0];
	if (d->pid > 0)
		d->kfd = recv_fd(d->sock, &byte, 1);
	if (d->kfd < 0)
		return diag("the dumpee did not start");
	if (seize && ptrace(PTRACE_SEIZE, d->pid, 0, 0))
		return diag("PTRACE_SEIZE: %s", strerror(errno));
	return true;
}

/* The dumpee's reply to a command, or -0x7fffffff if it is gone. */
static int dumpee_reply(struct dumpee *d)
{
	int reply;

	if (recv(d->sock, &reply, sizeof(reply), MSG_WAITALL) != sizeof(reply))
		return -0x7fffffff;
	return reply;
}

/* Sends a command and returns the reply. */
static int dumpee_cmd(struct dumpee *d, char cmd)
{
	if (send(d->sock, &cmd, 1, MSG_NOSIGNAL) != 1)
		return -0x7fffffff;
	return dumpee_reply(d);
}

static void dumpee_stop(struct dumpee *d)
{
	if (d->pid > 0) {
		send(d->sock, "x", 1, MSG_NOSIGNAL);
		kill(d->pid, SIGKILL);
		wait_child(d->pid);
	}
	if (d->kfd >= 0)
		close(d->kfd);
	close(d->sock);
	d->pid = 0;
}

/* Intact: the dumpee's own check passes and it is paused, UNPAUSE works. */
static bool dumpee_intact_paused(struct dumpee *d)
{
	return CHECK(dumpee_cmd(d, 'c') == 0) && CHECK(dumpee_cmd(d, 'u') == 0) &&
	       CHECK(dumpee_cmd(d, 'u') == -EBADFD);
}

/*
 * Restoring processes
 */

/* The events of an image, checked in the calling (restored) process. */
static int check_image_events(int fd, const struct image *img)
{
	struct kfd_img_record recs[256];
	const uint8_t *p;
	uint64_t age;
	size_t n, i;
	int want;

	n = kfd_img_frame(img->data, img->len, recs, 256);
	for (i = 0; i < n; i++) {
		if (recs[i].type != KFD_IMG_REC_EVENT)
			continue;
		p = img->data + recs[i].off + KFD_IMG_REC_HEADER_SIZE;
		want = kfd_img_get32(p + KFD_IMG_EV_SIGNALED) ?
		       KFD_IOC_WAIT_RESULT_COMPLETE : KFD_IOC_WAIT_RESULT_TIMEOUT;
		if (kfd_img_get32(p + KFD_IMG_EV_AUTO_RESET))
			return __LINE__;	/* a wait would change it */
		if (poll_event(fd, kfd_img_get32(p), NULL) != want)
			return __LINE__;
		age = kfd_img_get64(p + KFD_IMG_EV_AGE);
		if (poll_event(fd, kfd_img_get32(p), &age) !=
		    KFD_IOC_WAIT_RESULT_COMPLETE ||
		    age != kfd_img_get64(p + KFD_IMG_EV_AGE))
			return __LINE__;
	}
	return 0;
}

/* Restores @img in a fresh process, resumes it, checks its events. */
static bool restore_matches(const struct image *img)
{
	pid_t pid = fork();
	int fd, memfd;

	if (pid == 0) {
		fd = kfd_open();
		memfd = memfd_with(img);
		if (fd < 0 || memfd < 0 ||
		    criu_op(fd, KFD_CRIU_OP_RESTORE, memfd, NULL) ||
		    criu_resume(fd, getpid()))
			_exit(100);
		_exit(check_image_events(fd, img) ? 101 : 0);
	}
	return CHECK(pid > 0) && CHECK(wait_child(pid) == 0);
}

/* A process with no KFD state, checked without creating any. */
static int pristine(int fd)
{
	uint64_t size = 0;

	if (criu_op(fd, KFD_CRIU_OP_PROCESS_INFO, -1, &size) ||
	    size != EMPTY_IMAGE_SIZE)
		return __LINE__;
	if (criu_op(fd, KFD_CRIU_OP_UNPAUSE, -1, NULL))
		return __LINE__;
	errno = 0;
	if (map_event_page(fd) || errno != EINVAL)
		return __LINE__;
	return xnack_in_mode(fd, xnack_fresh, false) ? 0 : __LINE__;
}

/*
 * Helpers of the tests
 */

/* A pipe of one page: a CHECKPOINT into it blocks after 4 KiB. */
static bool small_pipe(int p[2])
{
	if (pipe2(p, O_CLOEXEC))
		return diag("pipe: %s", strerror(errno));
	if (fcntl(p[1], F_SETPIPE_SZ, 4096) < 0)
		return diag("F_SETPIPE_SZ: %s", strerror(errno));
	return true;
}

/* Closes the ends of @p that are still open (-1 marks a closed end). */
static void close_pipe(int p[2])
{
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
}

/* Waits (up to ~10 s) until @fd, a pipe's read end, holds @bytes. */
static bool pipe_filled(int fd, int bytes)
{
	int avail = 0, i;

	for (i = 0; i < 1000; i++) {
		if (!ioctl(fd, FIONREAD, &avail) && avail >= bytes)
			return true;
		usleep(10000);
	}
	return diag("the pipe holds %d bytes, not %d", avail, bytes);
}

/**
 * struct pipe_reader - the reading side of a CHECKPOINT into a pipe
 * @thread: the thread that reads
 * @fd: the pipe's read end
 * @kill_pid: a process to SIGKILL once the writer blocks, or 0
 * @unpause: a dumpee to tell to UNPAUSE itself once the writer blocks, or NULL
 * @unpause_ret: the dumpee's UNPAUSE result
 * @close_early: read a little once the writer blocks, then close the pipe
 * @finished: set when CHECKPOINT returned
 * @img: what was read
 * @ok: the writer blocked and reading worked
 *
 * Only the thread that seized the dumpee may run CHECKPOINT on its file
 * (the kfd ioctl checks ptrace_parent() == current), so the test's main
 * thread writes and this thread reads.
 */
struct pipe_reader {
	pthread_t thread;
	int fd;
	pid_t kill_pid;
	struct dumpee *unpause;
	int unpause_ret;
	bool close_early;
	int finished;
	struct image img;
	bool ok;
};

/* Reads the pipe until CHECKPOINT returned and nothing is left. */
static bool drain_pipe(struct pipe_reader *r)
{
	size_t cap = 1 << 20;
	bool last = false;
	ssize_t n;

	r->img.data = malloc(cap);
	r->img.len = 0;
	if (!r->img.data || fcntl(r->fd, F_SETFL, O_NONBLOCK))
		return false;
	for (;;) {
		n = read(r->fd, r->img.data + r->img.len, cap - r->img.len);
		if (n > 0) {
			r->img.len += n;
			continue;
		}
		if (last)
			return true;
		/* One more read after it returned picks up the rest */
		last = LOAD(r->finished);
		if (!last)
			usleep(1000);
	}
}

static void *pipe_reader_thread(void *arg)
{
	struct pipe_reader *r = arg;
	char buf[1000];

	/* The first bytes are in: the writer blocks on the one-page pipe */
	r->ok = pipe_filled(r->fd, 1);
	usleep(200000);
	if (r->kill_pid)
		kill(r->kill_pid, SIGKILL);
	if (r->unpause)
		r->unpause_ret = dumpee_cmd(r->unpause, 'u');
	if (r->close_early) {
		r->ok = read(r->fd, buf, sizeof(buf)) > 0 && r->ok;
		close(r->fd);
		return NULL;
	}
	r->ok = drain_pipe(r) && r->ok;
	return NULL;
}

/* CHECKPOINT into the pipe @p while @r reads it; returns CHECKPOINT's result. */
static int checkpoint_to_reader(int kfd, int p[2], struct pipe_reader *r)
{
	int ret;

	r->fd = p[0];
	r->finished = 0;
	r->ok = false;
	if (pthread_create(&r->thread, NULL, pipe_reader_thread, r))
		return -EAGAIN;
	ret = criu_op(kfd, KFD_CRIU_OP_CHECKPOINT, p[1], NULL);
	STORE(r->finished, 1);
	pthread_join(r->thread, NULL);
	return ret;
}

/*
 * The tests
 */

/* The reference image; also proves dump and restore work at all. */
static bool test_reference(void)
{
	struct dumpee d;
	uint64_t est;
	bool ok;

	ok = dumpee_start(&d, true, false) &&
	     CHECK(criu_op(d.kfd, KFD_CRIU_OP_PROCESS_INFO, -1, &est) == 0) &&
	     CHECK(checkpoint_image(d.kfd, &reference) == 0) &&
	     CHECK(reference.len == est) && dumpee_intact_paused(&d) &&
	     restore_matches(&reference);
	dumpee_stop(&d);
	return ok;
}

static bool test_exit_before_checkpoint(void)
{
	struct image img = { 0 };
	siginfo_t info;
	struct dumpee d;
	bool ok;
	int ret;

	ok = dumpee_start(&d, true, false) &&
	     CHECK(criu_op(d.kfd, KFD_CRIU_OP_PROCESS_INFO, -1, NULL) == 0);
	send(d.sock, "x", 1, MSG_NOSIGNAL);
	/* A traced zombie: its mm is gone, its KFD process is not */
	ok = ok && CHECK(!waitid(P_PID, d.pid, &info, WEXITED | WNOWAIT));
	ret = ok ? checkpoint_image(d.kfd, &img) : -1;
	if (ok && ret)
		ok = CHECK(ret == -EBADF || ret == -ESRCH);
	else if (ok)
		ok = CHECK(same_image(&img, &reference)) && restore_matches(&img);
	printf("# CHECKPOINT of a traced zombie: %d\n", ret);
	free(img.data);

	/* Reaped: the file no longer belongs to a tracee of ours */
	ok = ok && CHECK(wait_child(d.pid) == 0) &&
	     CHECK(criu_op(d.kfd, KFD_CRIU_OP_CHECKPOINT, 1, NULL) == -EBADF) &&
	     CHECK(criu_op(d.kfd, KFD_CRIU_OP_UNPAUSE, -1, NULL) == -EBADF);
	d.pid = 0;
	dumpee_stop(&d);
	return ok;
}

static bool test_killed_during_checkpoint(void)
{
	struct pipe_reader r = { 0 };
	struct dumpee d;
	int p[2] = { -1, -1 }, ret;
	bool ok;

	ok = dumpee_start(&d, true, false) && small_pipe(p) &&
	     CHECK(criu_op(d.kfd, KFD_CRIU_OP_PROCESS_INFO, -1, NULL) == 0);
	if (ok) {
		r.kill_pid = d.pid;
		ret = checkpoint_to_reader(d.kfd, p, &r);
		/* The snapshot was taken before the kill: the stream completes */
		ok = CHECK(r.ok) && CHECK(ret == 0) &&
		     CHECK(same_image(&r.img, &reference));
	}
	free(r.img.data);
	close_pipe(p);
	dumpee_stop(&d);
	return ok;
}

/* The dumper: seizes the dumpee, starts CHECKPOINT into a pipe, hangs. */
static void dumper_main(struct dumpee *d, int image_fd)
{
	if (ptrace(PTRACE_SEIZE, d->pid, 0, 0) ||
	    criu_op(d->kfd, KFD_CRIU_OP_PROCESS_INFO, -1, NULL))
		_exit(1);
	criu_op(d->kfd, KFD_CRIU_OP_CHECKPOINT, image_fd, NULL);
	_exit(2);	/* not reached: nobody reads the pipe */
}

static bool test_dumper_killed(void)
{
	struct dumpee d;
	int p[2] = { -1, -1 }, status;
	pid_t dumper;
	bool ok;

	ok = dumpee_start(&d, false, false) && small_pipe(p);
	if (!ok)
		goto out;
	dumper = fork();
	if (dumper == 0)
		dumper_main(&d, p[1]);
	ok = CHECK(dumper > 0) && pipe_filled(p[0], 1);
	usleep(200000);		/* into the blocked write */
	kill(dumper, SIGKILL);
	status = wait_child(dumper);
	ok = CHECK(status == 128 + SIGKILL) && ok;
	/* The dumpee stays paused until it or a new dumper unpauses it */
	ok = ok && dumpee_intact_paused(&d);
out:
	close_pipe(p);
	dumpee_stop(&d);
	return ok;
}

static bool test_reader_closes(void)
{
	struct pipe_reader r = { .close_early = true };
	struct dumpee d;
	int p[2] = { -1, -1 };
	bool ok;

	ok = dumpee_start(&d, true, false) && small_pipe(p) &&
	     CHECK(criu_op(d.kfd, KFD_CRIU_OP_PROCESS_INFO, -1, NULL) == 0);
	if (ok) {
		ok = CHECK(checkpoint_to_reader(d.kfd, p, &r) == -EPIPE) &&
		     CHECK(r.ok);
		p[0] = -1;	/* the reader closed it */
	}
	ok = ok && checkpoint_matches(d.kfd) && dumpee_intact_paused(&d);
	close_pipe(p);
	dumpee_stop(&d);
	return ok;
}

static bool test_enospc(void)
{
	struct dumpee d;
	struct stat st;
	int fd = -1, full;
	bool ok;

	mkdir(SMALL_TMPFS, 0700);
	if (mount("tmpfs", SMALL_TMPFS, "tmpfs", 0, "size=16k"))
		return diag("mount tmpfs: %s", strerror(errno));
	ok = dumpee_start(&d, true, false) &&
	     CHECK(criu_op(d.kfd, KFD_CRIU_OP_PROCESS_INFO, -1, NULL) == 0);
	if (ok)
		fd = open(SMALL_TMPFS "/image", O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	ok = ok && CHECK(fd >= 0) &&
	     CHECK(criu_op(d.kfd, KFD_CRIU_OP_CHECKPOINT, fd, NULL) == -ENOSPC) &&
	     CHECK(!fstat(fd, &st)) && CHECK((size_t)st.st_size < reference.len);
	/* A file without write_iter, which kernel_write() cannot write */
	full = open("/dev/full", O_WRONLY | O_CLOEXEC);
	ok = ok && CHECK(full >= 0) &&
	     CHECK(criu_op(d.kfd, KFD_CRIU_OP_CHECKPOINT, full, NULL) == -EINVAL);
	ok = ok && checkpoint_matches(d.kfd) && dumpee_intact_paused(&d);
	if (full >= 0)
		close(full);
	if (fd >= 0)
		close(fd);
	dumpee_stop(&d);
	umount(SMALL_TMPFS);
	rmdir(SMALL_TMPFS);
	return ok;
}

/* The test's side: CHECKPOINTs; counts written (the reference) and refused. */
static void tracer_checkpoints(int kfd, int *written, int *refused, int *bad)
{
	struct image img;
	int i, ret;

	*written = *refused = *bad = 0;
	for (i = 0; i < RACE_ROUNDS; i++) {
		memset(&img, 0, sizeof(img));
		ret = checkpoint_image(kfd, &img);
		if (!ret && same_image(&img, &reference))
			(*written)++;
		else if (ret == -EBADFD)
			(*refused)++;
		else
			(*bad)++;
		free(img.data);
	}
}

static bool test_checkpoint_races(void)
{
	int written, refused, bad, reply;
	struct dumpee d;
	bool ok;

	/* Three CHECKPOINTs at once: the tracer and two dumpee threads */
	STORE(storm->race_done, 0);
	ok = dumpee_start(&d, true, false) &&
	     CHECK(criu_op(d.kfd, KFD_CRIU_OP_PROCESS_INFO, -1, NULL) == 0) &&
	     CHECK(send(d.sock, "r", 1, MSG_NOSIGNAL) == 1);
	if (!ok)
		goto out;
	tracer_checkpoints(d.kfd, &written, &refused, &bad);
	STORE(storm->race_done, 1);
	reply = dumpee_reply(&d);
	ok = CHECK(written == RACE_ROUNDS) && CHECK(reply == 0);

	/* Against UNPAUSE: CHECKPOINT of a running process is refused */
	STORE(storm->race_done, 0);
	STORE(storm->unpause_busy, 0);
	ok = ok && CHECK(send(d.sock, "U", 1, MSG_NOSIGNAL) == 1);
	if (!ok)
		goto out;
	tracer_checkpoints(d.kfd, &written, &refused, &bad);
	STORE(storm->race_done, 1);
	reply = dumpee_reply(&d);
	printf("# CHECKPOINT vs UNPAUSE: %d written, %d refused, %d UNPAUSEs busy\n",
	       written, refused, LOAD(storm->unpause_busy));
	ok = CHECK(bad == 0) && CHECK(reply == 0) && dumpee_intact_paused(&d);
out:
	dumpee_stop(&d);
	return ok;
}

/*
 * UNPAUSE while CHECKPOINT blocks on a full pipe, with no lock held: the
 * process must stay paused until the stream is written, so the dumpee's
 * own UNPAUSE is refused with EBUSY, the image is the reference, and
 * UNPAUSE works once the dump is over.
 */
static bool test_unpause_during_checkpoint(void)
{
	struct pipe_reader r = { 0 };
	struct dumpee d;
	int p[2] = { -1, -1 }, ret;
	bool ok;

	ok = dumpee_start(&d, true, false) && small_pipe(p) &&
	     CHECK(criu_op(d.kfd, KFD_CRIU_OP_PROCESS_INFO, -1, NULL) == 0);
	if (ok) {
		r.unpause = &d;
		ret = checkpoint_to_reader(d.kfd, p, &r);
		printf("# UNPAUSE during CHECKPOINT: %d; CHECKPOINT: %d\n",
		       r.unpause_ret, ret);
		ok = CHECK(r.ok) && CHECK(ret == 0) &&
		     CHECK(r.unpause_ret == -EBUSY) &&
		     CHECK(same_image(&r.img, &reference));
	}
	ok = ok && dumpee_intact_paused(&d);
	free(r.img.data);
	close_pipe(p);
	dumpee_stop(&d);
	return ok;
}

/**
 * struct restore_racer - one of two threads that restore at once
 * @thread: the thread
 * @fd: the process's /dev/kfd file
 * @image_fd: the image
 * @create: CREATE_EVENT instead of RESTORE
 * @go: both threads spin on it, for a close start
 * @ret: the op's result
 * @id: the event CREATE_EVENT made
 */
struct restore_racer {
	pthread_t thread;
	int fd;
	int image_fd;
	bool create;
	int *go;
	int ret;
	uint32_t id;
};

static void *restore_racer_thread(void *arg)
{
	struct restore_racer *r = arg;

	while (!LOAD(*r->go))
		;
	if (r->create)
		r->ret = create_event(r->fd, &r->id);
	else
		r->ret = criu_op(r->fd, KFD_CRIU_OP_RESTORE, r->image_fd, NULL);
	return NULL;
}

/* In a fresh process: RESTORE against RESTORE or CREATE_EVENT. */
static int restore_race_child(bool against_create)
{
	struct restore_racer r[2] = { 0 };
	int go = 0;
	int fd = kfd_open(), i;

	for (i = 0; i < 2; i++) {
		r[i].fd = fd;
		r[i].image_fd = memfd_with(&reference);
		r[i].create = against_create && i == 1;
		r[i].go = &go;
		if (fd < 0 || r[i].image_fd < 0 ||
		    pthread_create(&r[i].thread, NULL, restore_racer_thread, &r[i]))
			return __LINE__;
	}
	STORE(go, 1);
	pthread_join(r[0].thread, NULL);
	pthread_join(r[1].thread, NULL);
	if (against_create) {
		/* CREATE_EVENT first makes RESTORE busy; after it, a free id */
		if (r[1].ret || (r[0].ret && r[0].ret != -EBUSY))
			return __LINE__;
		if (!r[0].ret && r[1].id <= PLAIN_EVENTS)
			return __LINE__;
		return 0;
	}
	if (!!r[0].ret + !!r[1].ret != 1 || r[0].ret + r[1].ret != -EBUSY)
		return __LINE__;
	return criu_resume(fd, getpid()) || check_image_events(fd, &reference) ?
	       __LINE__ : 0;
}

static bool test_restore_races(void)
{
	bool ok = true;
	int i, status;
	pid_t pid;

	for (i = 0; i < 2 * RACE_ROUNDS / 3 && ok; i++) {
		pid = fork();
		if (pid == 0)
			_exit(restore_race_child(i % 2));
		status = wait_child(pid);
		if (status)
			ok = diag("round %d: child failed at line %d", i, status);
	}
	return ok;
}

/* Operations a storm thread completed in @count steps, on event @e. */
static uint64_t storm_ops_on(uint64_t count, unsigned int e)
{
	return count > e ? (count - 1 - e) / STORM_EVENTS + 1 : 0;
}

/* Does event @e of a storm thread look as after @count operations? */
static bool storm_state_is(const uint8_t *rec, unsigned int e, uint64_t count)
{
	uint64_t ops = storm_ops_on(count, e);

	return kfd_img_get32(rec + KFD_IMG_EV_SIGNALED) == (ops & 1) &&
	       kfd_img_get64(rec + KFD_IMG_EV_AGE) == 1 + (ops + 1) / 2;
}

/* The EVENT record of @id in @img, or NULL. */
static const uint8_t *image_event(const struct image *img, uint32_t id)
{
	static struct kfd_img_record recs[512];
	const uint8_t *p;
	size_t n, i;

	n = kfd_img_frame(img->data, img->len, recs, 512);
	for (i = 0; i < n; i++) {
		p = img->data + recs[i].off + KFD_IMG_REC_HEADER_SIZE;
		if (recs[i].type == KFD_IMG_REC_EVENT && kfd_img_get32(p) == id)
			return p;
	}
	return NULL;
}

/*
 * The image holds each storm event as after some number of operations of
 * its thread in [@from, @to]; with @one_cut, one number for all events of
 * a thread (the threads were stopped during the dump).
 */
static bool storm_image_ok(const struct image *img, const uint64_t *from,
			   const uint64_t *to, bool one_cut)
{
	const uint8_t *rec[STORM_EVENTS];
	unsigned int t, e, matched;
	uint64_t c;

	for (t = 0; t < STORM_THREADS; t++) {
		for (e = 0; e < STORM_EVENTS; e++) {
			rec[e] = image_event(img, storm->ids[t][e]);
			if (!rec[e])
				return diag("storm event %u missing", storm->ids[t][e]);
		}
		for (e = 0; e < STORM_EVENTS; e++) {
			matched = 0;
			for (c = from[t]; c <= to[t] && !matched; c++)
				matched = storm_state_is(rec[e], e, c);
			if (!matched)
				return diag("thread %u event %u: no state of ops %llu-%llu",
					    t, e, (unsigned long long)from[t],
					    (unsigned long long)to[t]);
		}
		if (!one_cut)
			continue;
		for (c = from[t]; c <= to[t]; c++) {
			for (e = 0; e < STORM_EVENTS && storm_state_is(rec[e], e, c); e++)
				;
			if (e == STORM_EVENTS)
				break;
		}
		if (c > to[t])
			return diag("thread %u: no single cut in ops %llu-%llu", t,
				    (unsigned long long)from[t],
				    (unsigned long long)to[t]);
	}
	return true;
}

/* Stops every thread of the dumpee as CRIU does: seize and interrupt. */
static bool freeze(struct dumpee *d, bool stop)
{
	pid_t tids[STORM_THREADS + 1];
	unsigned int i;
	int status;

	tids[0] = d->pid;
	for (i = 0; i < STORM_THREADS; i++)
		tids[i + 1] = LOAD(storm->tids[i]);
	for (i = 0; i <= STORM_THREADS; i++) {
		if (!stop) {
			if (ptrace(PTRACE_DETACH, tids[i], 0, 0))
				return diag("PTRACE_DETACH %d: %s", tids[i], strerror(errno));
			continue;
		}
		if (ptrace(PTRACE_SEIZE, tids[i], 0, 0) ||
		    ptrace(PTRACE_INTERRUPT, tids[i], 0, 0) ||
		    waitpid(tids[i], &status, __WALL) != tids[i])
			return diag("stopping thread %d: %s", tids[i], strerror(errno));
	}
	return true;
}

static bool storm_cycle(struct dumpee *d, bool stopped)
{
	uint64_t from[STORM_THREADS], to[STORM_THREADS];
	struct image img = { 0 };
	unsigned int t;
	bool ok;

	if (stopped && !freeze(d, true))
		return false;
	for (t = 0; t < STORM_THREADS; t++)
		from[t] = LOAD(storm->done[t]);
	ok = CHECK(criu_op(d->kfd, KFD_CRIU_OP_PROCESS_INFO, -1, NULL) == 0) &&
	     CHECK(checkpoint_image(d->kfd, &img) == 0);
	for (t = 0; t < STORM_THREADS; t++)
		to[t] = LOAD(storm->started[t]);
	ok = ok && CHECK(criu_op(d->kfd, KFD_CRIU_OP_UNPAUSE, -1, NULL) == 0);
	if (stopped)
		ok = freeze(d, false) && ok;
	ok = ok && storm_image_ok(&img, from, to, stopped) && restore_matches(&img);
	free(img.data);
	return ok;
}

static bool test_storm(bool stopped)
{
	uint64_t ops = 0;
	struct dumpee d;
	unsigned int i, t;
	bool ok;

	memset(storm, 0, sizeof(*storm));
	ok = dumpee_start(&d, !stopped, true);
	for (i = 0; i < STORM_CYCLES && ok; i++)
		ok = storm_cycle(&d, stopped);
	for (t = 0; t < STORM_THREADS; t++)
		ops += LOAD(storm->done[t]);
	printf("# %u dumps during %llu SET/RESET_EVENT calls\n", i,
	       (unsigned long long)ops);
	STORE(storm->stop, 1);
	dumpee_stop(&d);
	return ok && CHECK(ops > 0);
}

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

/* SIGALRM in @ms milliseconds, through a handler with or without SA_RESTART. */
static void arm_alarm(int ms, bool restart)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { .it_value = { 0, ms * 1000 } };

	sa.sa_flags = restart ? SA_RESTART : 0;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

static bool test_signal_checkpoint(bool restart)
{
	struct dumpee d;
	int p[2] = { -1, -1 }, before = alarms;
	bool ok;

	ok = dumpee_start(&d, true, false) && small_pipe(p) &&
	     CHECK(criu_op(d.kfd, KFD_CRIU_OP_PROCESS_INFO, -1, NULL) == 0);
	if (ok) {
		arm_alarm(300, restart);
		/* Nobody reads: the write blocks until the signal comes */
		ok = CHECK(criu_op(d.kfd, KFD_CRIU_OP_CHECKPOINT, p[1], NULL) == -EINTR) &&
		     CHECK(alarms == before + 1);
	}
	ok = ok && checkpoint_matches(d.kfd) && dumpee_intact_paused(&d);
	close_pipe(p);
	dumpee_stop(&d);
	return ok;
}

/* In a fresh process: RESTORE from a pipe holding half an image. */
static int interrupted_restore_child(bool restart, bool wait_for_kill)
{
	int fd = kfd_open(), p[2], memfd, before = alarms;

	if (fd < 0 || pipe2(p, O_CLOEXEC) ||
	    write(p[1], reference.data, reference.len / 2) !=
	    (ssize_t)(reference.len / 2))
		return __LINE__;
	if (wait_for_kill) {
		criu_op(fd, KFD_CRIU_OP_RESTORE, p[0], NULL);
		return __LINE__;	/* the test kills us before it returns */
	}
	arm_alarm(300, restart);
	if (criu_op(fd, KFD_CRIU_OP_RESTORE, p[0], NULL) != -EINTR ||
	    alarms != before + 1)
		return __LINE__;
	if (pristine(fd))
		return __LINE__;
	memfd = memfd_with(&reference);
	if (memfd < 0 || criu_op(fd, KFD_CRIU_OP_RESTORE, memfd, NULL))
		return __LINE__;
	return criu_resume(fd, getpid()) || check_image_events(fd, &reference) ?
	       __LINE__ : 0;
}

static bool test_signal_restore(bool restart)
{
	pid_t pid = fork();
	int status;

	if (pid == 0)
		_exit(interrupted_restore_child(restart, false));
	status = wait_child(pid);
	return status ? diag("child failed at line %d", status) : true;
}

static bool test_kill_restore(void)
{
	pid_t pid = fork();
	int status;

	if (pid == 0)
		_exit(interrupted_restore_child(false, true));
	usleep(500000);		/* into the blocked read */
	kill(pid, SIGKILL);
	status = wait_child(pid);
	return CHECK(status == 128 + SIGKILL);
}

/*
 * Every allocation of an op failed in turn (kfd_failnth_test)
 */

#define FAILSLAB		"/sys/kernel/debug/failslab"
/* Far more injection points than an op of the reference image passes */
#define FAILNTH_MAX		5000

/* What one op did with its n-th injection point failing */
enum failnth_result {
	FAILNTH_FAILED,		/* it failed, the fault was injected */
	FAILNTH_COPED,		/* it succeeded all the same */
	FAILNTH_PAST,		/* it passed fewer than n points: the last n */
};

static bool write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : write(fd, text, strlen(text));

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(text) ||
	       diag("%s: %s", path, strerror(errno));
}

/*
 * failslab with GFP_KERNEL allocations too, and quiet: a failure it
 * forces is not a splat. Only fail-nth makes it fail anything.
 */
static bool failslab_setup(void)
{
	return write_text(FAILSLAB "/ignore-gfp-wait", "N") &&
	       write_text(FAILSLAB "/verbose", "0") &&
	       write_text(FAILSLAB "/probability", "0");
}

/*
 * Runs @op on @kfd with the calling thread's @n-th fault-injection point
 * failing. The fail-nth file is opened before, so that only the op
 * passes injection points; reading it back tells whether one failed.
 */
static int criu_op_failing(int kfd, uint32_t op, int image_fd,
			   unsigned int n, enum failnth_result *res)
{
	int nth = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	char num[16];
	ssize_t len;
	int ret;

	*res = FAILNTH_FAILED;	/* an error of its own fails the check */
	if (nth < 0)
		return -errno;
	len = snprintf(num, sizeof(num), "%u", n);
	if (pwrite(nth, num, len, 0) != len) {
		close(nth);
		return -EIO;
	}
	ret = criu_op(kfd, op, image_fd, NULL);
	len = pread(nth, num, sizeof(num) - 1, 0);
	if (pwrite(nth, "0", 1, 0) != 1 || len <= 0) {
		close(nth);
		return -EIO;
	}
	num[len] = '\0';
	close(nth);
	if (strtoul(num, NULL, 10))
		*res = FAILNTH_PAST;
	else
		*res = ret ? FAILNTH_FAILED : FAILNTH_COPED;
	return ret;
}

/* Says which check of allocation @n failed; the child's exit status. */
static int failnth_bad(unsigned int n, int line)
{
	printf("# allocation %u: check at line %d failed (errno %d)\n", n, line,
	       errno);
	return 10;
}

/*
 * In a fresh process: RESTORE of the reference image with its @n-th
 * injection point failing. A failure must be ENOMEM and leave the process
 * without KFD state, and then the restore must work; a success must give
 * the image's state. Returns FAILNTH_* + 1 for the parent, or 10 after a
 * failed check.
 */
static int failnth_restore_child(unsigned int n)
{
	int fd = kfd_open(), memfd = memfd_with(&reference), ret;
	enum failnth_result res;

	if (fd < 0 || memfd < 0)
		return failnth_bad(n, __LINE__);
	ret = criu_op_failing(fd, KFD_CRIU_OP_RESTORE, memfd, n, &res);
	if (res == FAILNTH_FAILED) {
		if (ret != -ENOMEM) {
			printf("# allocation %u: RESTORE failed with %d\n", n, ret);
			return failnth_bad(n, __LINE__);
		}
		ret = pristine(fd);
		if (ret)
			return failnth_bad(n, ret);
		/* The failed RESTORE read part of the stream */
		if (lseek(memfd, 0, SEEK_SET) ||
		    criu_op(fd, KFD_CRIU_OP_RESTORE, memfd, NULL))
			return failnth_bad(n, __LINE__);
	} else if (ret) {
		return failnth_bad(n, __LINE__);
	}
	if (criu_resume(fd, getpid()))
		return failnth_bad(n, __LINE__);
	ret = check_image_events(fd, &reference);
	return ret ? failnth_bad(n, ret) : (int)res + 1;
}

static bool test_failnth_restore(void)
{
	unsigned int n, failed = 0;
	int status = 0;
	pid_t pid;

	for (n = 1; n <= FAILNTH_MAX; n++) {
		fflush(stdout);
		pid = fork();
		if (pid == 0)
			_exit(failnth_restore_child(n));
		status = wait_child(pid);
		if (status == FAILNTH_FAILED + 1)
			failed++;
		else if (status != FAILNTH_COPED + 1)
			break;
	}
	if (status != FAILNTH_PAST + 1)
		return diag("allocation %u: child status %d", n, status);
	printf("# RESTORE: %u allocations, %u failed it, each unwound\n",
	       n - 1, failed);
	return CHECK(failed > 0);
}

/*
 * CHECKPOINT of the paused dumpee with its @n-th injection point failing:
 * a failure must be ENOMEM and leave the dumpee intact and paused (the
 * next CHECKPOINT writes the reference, UNPAUSE works); a success writes
 * the reference.
 */
static bool failnth_checkpoint(struct dumpee *d, unsigned int n,
			       enum failnth_result *res)
{
	int fd = memfd_create("kfd-faults-image", MFD_CLOEXEC), ret;
	struct image img = { 0 };
	bool ok;

	if (!CHECK(fd >= 0) ||
	    !CHECK(criu_op(d->kfd, KFD_CRIU_OP_PROCESS_INFO, -1, NULL) == 0))
		return false;
	ret = criu_op_failing(d->kfd, KFD_CRIU_OP_CHECKPOINT, fd, n, res);
	if (*res == FAILNTH_FAILED)
		ok = CHECK(ret == -ENOMEM) && checkpoint_matches(d->kfd);
	else
		ok = CHECK(ret == 0) && CHECK(read_fd_image(fd, &img)) &&
		     CHECK(same_image(&img, &reference));
	close(fd);
	free(img.data);
	if (!ok)
		diag("allocation %u: CHECKPOINT returned %d", n, ret);
	return ok && dumpee_intact_paused(d);
}

static bool test_failnth_checkpoint(void)
{
	enum failnth_result res = FAILNTH_FAILED;
	unsigned int n, failed = 0;
	struct dumpee d;
	bool ok;

	ok = dumpee_start(&d, true, false);
	for (n = 1; ok && n <= FAILNTH_MAX; n++) {
		ok = failnth_checkpoint(&d, n, &res);
		failed += res == FAILNTH_FAILED;
		if (res == FAILNTH_PAST)
			break;
	}
	dumpee_stop(&d);
	if (!ok)
		return false;
	if (res != FAILNTH_PAST)
		return diag("still failing after %u allocations", n - 1);
	printf("# CHECKPOINT: %u allocations, %u failed it, each unwound\n",
	       n - 1, failed);
	return CHECK(failed > 0);
}

/*
 * The first test of both programs: the reference image, which every later
 * test compares with. Without it there is nothing to run.
 */
static bool reference_tap(const char *desc)
{
	tap(test_reference() && no_new_splats(), "%s", desc);
	if (!reference.len)
		printf("Bail out! no reference image\n");
	return reference.len;
}

/*
 * kfd_failnth_test: the same program under another name, in the debug
 * lane only (the stock kernel has no fault injection).
 */
static int failnth_main(void)
{
	if (access("/proc/thread-self/fail-nth", F_OK)) {
		printf("1..0 # SKIP kernel without CONFIG_FAULT_INJECTION\n");
		return 4;
	}
	printf("1..4\n");
	if (!reference_tap("dump and restore of the dumpee (the reference image)"))
		return 1;
	if (!failslab_setup()) {
		printf("Bail out! failslab cannot be set up\n");
		return 1;
	}
	tap(test_failnth_restore() && no_new_splats(),
	    "RESTORE with each of its allocations failed in turn: ENOMEM, no state left, restore works");
	tap(test_failnth_checkpoint() && no_new_splats(),
	    "CHECKPOINT with each of its allocations failed in turn: ENOMEM, dumpee intact and paused");
	tap(no_new_splats(), "no kernel splat at the end");
	return tap_failed;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (access("/dev/kfd", F_OK)) {
		printf("1..0 # SKIP no /dev/kfd\n");
		return 4;
	}
	signal(SIGPIPE, SIG_IGN);	/* EPIPE must come back as an errno */
	storm = mmap(NULL, sizeof(*storm), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (storm == MAP_FAILED)
		return 1;
	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (kmsg_fd >= 0)
		lseek(kmsg_fd, 0, SEEK_END);
	if (!strcmp(program_invocation_short_name, "kfd_failnth_test"))
		return failnth_main();

	printf("1..17\n");
	if (!reference_tap("dump, retry, UNPAUSE and restore of the dumpee (the reference image)"))
		return 1;
	tap(test_exit_before_checkpoint() && no_new_splats(),
	    "dumpee exits between PROCESS_INFO and CHECKPOINT: zombie dumps, reaped refused");
	tap(test_killed_during_checkpoint() && no_new_splats(),
	    "dumpee killed during CHECKPOINT: the stream still completes");
	tap(test_dumper_killed() && no_new_splats(),
	    "dumper killed during CHECKPOINT: dumpee intact, paused, UNPAUSE recovers");
	tap(test_reader_closes() && no_new_splats(),
	    "pipe reader closes mid-stream: EPIPE, dumpee intact, dump again, UNPAUSE");
	tap(test_enospc() && no_new_splats(),
	    "full tmpfs: ENOSPC; /dev/full: EINVAL; dumpee intact, dump again, UNPAUSE");
	tap(test_checkpoint_races() && no_new_splats(),
	    "two CHECKPOINTs race, CHECKPOINT races UNPAUSE: same image or EBADFD");
	tap(test_unpause_during_checkpoint() && no_new_splats(),
	    "UNPAUSE while CHECKPOINT streams: EBUSY, same image, still paused");
	tap(test_restore_races() && no_new_splats(),
	    "RESTORE races RESTORE (one wins, one EBUSY) and CREATE_EVENT");
	tap(test_storm(true) && no_new_splats(),
	    "SET_EVENT storm, threads stopped as CRIU does: image is the state at the stop");
	tap(test_storm(false) && no_new_splats(),
	    "SET_EVENT storm, threads running: each event consistent, restores exactly");
	tap(test_signal_checkpoint(false) && no_new_splats(),
	    "SIGALRM interrupts CHECKPOINT on a full pipe: EINTR, dumpee intact");
	tap(test_signal_checkpoint(true) && no_new_splats(),
	    "SIGALRM with SA_RESTART: EINTR all the same, never a replayed stream");
	tap(test_signal_restore(false) && no_new_splats(),
	    "SIGALRM interrupts RESTORE on a half-written pipe: EINTR, no state, restore works");
	tap(test_signal_restore(true) && no_new_splats(),
	    "SIGALRM with SA_RESTART interrupts RESTORE: EINTR, no state");
	tap(test_kill_restore() && no_new_splats(),
	    "SIGKILL ends a RESTORE blocked on a pipe");
	tap(no_new_splats(), "no kernel splat at the end");
	return tap_failed;
}
