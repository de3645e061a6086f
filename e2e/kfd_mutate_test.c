// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: kfd_mutate_test - mutated images through the real RESTORE
 *
 * Usage: kfd_mutate_test [-n IMAGES] [-s SEED] [-x INDEX]
 *
 * A mutation campaign against the kernel's image reader. Child processes
 * build real KFD state (events of every type, some signaled, the event
 * page mapped and written, the runtime enabled), and the test dumps each
 * the way CRIU does (SCM_RIGHTS, PTRACE_SEIZE, PROCESS_INFO, CHECKPOINT
 * into a memfd, UNPAUSE). Those real images are the base of IMAGES
 * mutated ones (../fuzz/kfd_image_mutator.c): first a sweep that gives
 * every field of every record type of the "types" image (an event of
 * every type) and of the "selftest" image (runtime enabled, full event
 * page) each boundary of its row in the range table kfd_img_ranges[],
 * EVENT records once per event type, then random structure-aware
 * mutations (bit flips, truncations, boundary values in lengths, counts
 * and fields, records reordered, duplicated, dropped and inserted). END counts and CRCs are recomputed, so that most mutations
 * reach the validators behind them. A worker process feeds the images to
 * RESTORE one by one and checks every outcome:
 *
 * - refused: the errno is one the uAPI documents for a bad image, and the
 *   process still has no KFD state: PROCESS_INFO estimates an empty image,
 *   the event page cannot be mapped, the XNACK mode and the runtime are
 *   untouched; the worker then takes the next image;
 * - accepted: every field of the image is inside its row of the range
 *   table, and the process holds exactly what the image says (the bytes
 *   RESTORE read, the size estimate, every event's signaled state, age and
 *   exception data, the event page, XNACK, the runtime); RESUME works.
 *   Then the worker does what a real process does next, and reads the
 *   kernel log after every operation: SET_EVENT and WAIT_EVENTS on every
 *   event, round after round, each wait's result and reported age as the
 *   kernel must give them, RESET_EVENT, GET_PROCESS_APERTURES_NEW,
 *   CREATE_EVENT, DESTROY_EVENT of every event and new events with the
 *   ids an empty process gets, the runtime disabled. A splat there is
 *   reported with the operation that caused it. The worker exits and a
 *   fresh one takes over.
 *
 * After each worker the test reads the kernel log (/dev/kmsg) for splats,
 * and at the end it runs a kmemleak scan and counts unreferenced objects
 * allocated by amdkfd. It prints
 * "mutation: N tried, N rejected, N accepted, N splats, N leaks" and TAP.
 *
 * IMAGES and SEED default to kfdcriu.mutate_images= and
 * kfdcriu.mutate_seed= on the kernel command line (make mutate), else to
 * 800 and 1. -x INDEX writes the mutated image INDEX to stdout and
 * exits, to reproduce a failure outside the campaign.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
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
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/kfd_ioctl.h>

#include "../kernel/tools/testing/selftests/drivers/gpu/amdkfd/kfd_criu_util.h"

#include "../fuzz/kfd_image_mutator.c"

#define EVENT_PAGE_OFFSET	(2ULL << 62)
#define EVENT_PAGE_SIZE		(KFD_SIGNAL_EVENT_LIMIT * 8)
#define UNSIGNALED		(~0ULL)
#define IMAGE_CAP		(256 * 1024)
#define DEFAULT_IMAGES		800
/* Kind of the systematic images, next to &enum kfd_img_mutation */
#define KIND_SWEEP		KFD_IMG_MUT_NR
#define MAX_MODEL_EVENTS	1024
/* What PROCESS_INFO estimates for a process without KFD state */
#define EMPTY_IMAGE_SIZE	(KFD_IMG_HEADER_SIZE + 3 * KFD_IMG_REC_OVERHEAD + \
				 KFD_IMG_COMPAT_SIZE + KFD_IMG_PROCESS_SIZE + \
				 KFD_IMG_END_SIZE)
#define MAX_REPORTED		20

/**
 * enum verdict - the outcome of one mutated image
 * @REJECTED: RESTORE failed with a documented errno, the process is clean
 * @ACCEPTED: RESTORE succeeded and the process matches the image
 * @BAD_ERRNO: RESTORE failed with an errno not documented for bad images
 * @STATE_LEFT: RESTORE failed but the process has KFD state
 * @INCONSISTENT: RESTORE succeeded but the process does not match
 * @CRASHED: the worker died on this image
 * @SPLAT: the kernel logged a splat while the worker used what it restored
 * @NR_VERDICTS: number of verdicts
 */
enum verdict {
	REJECTED,
	ACCEPTED,
	BAD_ERRNO,
	STATE_LEFT,
	INCONSISTENT,
	CRASHED,
	SPLAT,
	NR_VERDICTS
};

static const char * const verdict_names[NR_VERDICTS] = {
	"rejected", "accepted", "undocumented errno", "state left behind",
	"inconsistent restore", "worker died", "kernel splat",
};

/**
 * struct result - what a worker reports for one image, through a pipe
 * @index: the image
 * @verdict: &enum verdict
 * @kind: &enum kfd_img_mutation of the first mutation, or KIND_SWEEP
 * @err: positive errno of RESTORE, 0 if it succeeded
 * @desc: the mutation
 * @why: what a check found, for failures
 */
struct result {
	uint32_t index;
	uint8_t verdict;
	uint8_t kind;
	int32_t err;
	char desc[160];
	char why[160];
};

/**
 * struct base_image - a real image the mutations start from
 * @name: what state it holds
 * @data: the stream
 * @len: its length
 * @weight: how often it is picked, relative
 */
struct base_image {
	const char *name;
	uint8_t *data;
	size_t len;
	unsigned int weight;
};

/**
 * struct model_event - an EVENT record as RESTORE must apply it
 * @id: event id
 * @type: KFD_IOC_EVENT_*
 * @auto_reset: 0 or 1
 * @signaled: 0 or 1
 * @age: event age
 * @rec: the whole payload, for the exception data
 */
struct model_event {
	uint32_t id;
	uint32_t type;
	uint32_t auto_reset;
	uint32_t signaled;
	uint64_t age;
	const uint8_t *rec;
};

/**
 * struct model - what an accepted image holds, read from its bytes
 * @consumed: bytes up to and including END
 * @process: the PROCESS payload
 * @page: the SIGNAL_PAGE payload or NULL
 * @page_size: its length
 * @events: the events
 * @num_events: entries at @events
 */
struct model {
	size_t consumed;
	const uint8_t *process;
	const uint8_t *page;
	uint32_t page_size;
	struct model_event events[MAX_MODEL_EVENTS];
	uint32_t num_events;
};

/**
 * struct campaign - counts of the whole run
 * @tried: images fed to RESTORE
 * @verdicts: images per &enum verdict
 * @kinds: accepted/refused images per mutation kind, then the sweep
 * @errnos: refusals per errno (index capped at 255)
 * @splats: kernel log records that report a bug or a warning
 * @leaks: unreferenced amdkfd objects kmemleak reports, -1 if unavailable
 * @failures: results reported as failures so far
 */
struct campaign {
	unsigned int tried;
	unsigned int verdicts[NR_VERDICTS];
	unsigned int kinds[KFD_IMG_MUT_NR + 1][2];
	unsigned int errnos[256];
	unsigned int splats;
	int leaks;
	unsigned int failures;
};

static struct base_image bases[4];
static unsigned int num_bases;
/*
 * The bases the sweep visits, by index in bases[]: "types" has an event
 * of every type, "selftest" the enabled runtime and the full event page.
 */
static const unsigned int sweep_bases[] = { 1, 0 };
static uint32_t sweep_steps[ARRAY_SIZE(sweep_bases)];
static uint32_t sweep_total;
static bool extracting;
static uint64_t campaign_seed = 1;
static struct campaign stats;
static int kmsg_fd = -1;
static int worker_kmsg_fd = -1;
static bool worker_splat;

static bool splat_line(const char *msg);
static bool kmsg_clean(char *why, const char *op, uint32_t id);

static int create_event(int fd, uint32_t type, bool auto_reset, uint32_t *id)
{
	struct kfd_ioctl_create_event_args args = {
		.event_type = type,
		.auto_reset = auto_reset,
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

/* Waits for @data->event_id without blocking; returns the wait result. */
static int wait_once(int fd, struct kfd_event_data *data, uint32_t *result)
{
	struct kfd_ioctl_wait_events_args args = {
		.events_ptr = (uintptr_t)data,
		.num_events = 1,
	};
	int ret = kfd_ioctl(fd, AMDKFD_IOC_WAIT_EVENTS, &args);

	*result = args.wait_result;
	return ret;
}

static int runtime_enable(int fd, uint64_t r_debug, bool enable)
{
	struct kfd_ioctl_runtime_enable_args args = {
		.r_debug = r_debug,
		.mode_mask = enable ? KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK : 0,
	};

	return kfd_ioctl(fd, AMDKFD_IOC_RUNTIME_ENABLE, &args);
}

static uint64_t *map_event_page(int fd)
{
	void *page = mmap(NULL, EVENT_PAGE_SIZE, PROT_READ | PROT_WRITE,
			  MAP_SHARED, fd, (off_t)EVENT_PAGE_OFFSET);

	return page == MAP_FAILED ? NULL : page;
}

/*
 * Fork and dump
 */

/* The events and page of the selftests' dumped process (seed selftest.img) */
static int build_selftest_state(int fd)
{
	static const uint32_t slots[] = { 4, 100, 1000, KFD_SIGNAL_EVENT_LIMIT - 1 };
	uint32_t id[7];
	uint64_t *page;
	int ret = 0;
	unsigned int i;

	ret |= create_event(fd, KFD_IOC_EVENT_SIGNAL, true, &id[0]);
	ret |= create_event(fd, KFD_IOC_EVENT_SIGNAL, false, &id[1]);
	ret |= create_event(fd, KFD_IOC_EVENT_SIGNAL, false, &id[2]);
	ret |= create_event(fd, KFD_IOC_EVENT_SIGNAL, true, &id[3]);
	ret |= create_event(fd, KFD_IOC_EVENT_SIGNAL, false, &id[4]);
	ret |= create_event(fd, KFD_IOC_EVENT_SIGNAL, false, &id[5]);
	ret |= create_event(fd, KFD_IOC_EVENT_MEMORY, false, &id[6]);
	ret |= event_op(fd, AMDKFD_IOC_DESTROY_EVENT, id[4]);
	ret |= event_op(fd, AMDKFD_IOC_SET_EVENT, id[0]);
	ret |= event_op(fd, AMDKFD_IOC_SET_EVENT, id[0]);
	ret |= event_op(fd, AMDKFD_IOC_SET_EVENT, id[1]);
	ret |= event_op(fd, AMDKFD_IOC_SET_EVENT, id[2]);
	ret |= event_op(fd, AMDKFD_IOC_RESET_EVENT, id[2]);
	ret |= kfd_xnack_mode(fd, 0);
	ret |= runtime_enable(fd, 0x7f0012345000ULL, true);
	page = map_event_page(fd);
	if (ret || !page)
		return -1;
	for (i = 0; i < 4; i++)
		page[slots[i]] = 0x5a5a000000000000ULL | slots[i];
	return munmap(page, EVENT_PAGE_SIZE);
}

/* One event of every type, half of them auto-reset, the page unmapped. */
static int build_types_state(int fd)
{
	uint32_t type, id, first = 0;
	int ret = 0;

	for (type = KFD_IOC_EVENT_SIGNAL; type <= KFD_IOC_EVENT_MEMORY; type++) {
		ret |= create_event(fd, type, type & 1, &id);
		if (type == KFD_IOC_EVENT_SIGNAL)
			first = id;
	}
	ret |= event_op(fd, AMDKFD_IOC_SET_EVENT, first);
	return ret;
}

/*
 * 300 signal events, a third signaled, the page written. Only 256 slots
 * are usable until the page is mapped at its full size.
 */
static int build_many_state(int fd)
{
	uint64_t *page = NULL;
	uint32_t i, id;
	int ret = 0;

	for (i = 1; i <= 300 && !ret; i++) {
		ret = create_event(fd, KFD_IOC_EVENT_SIGNAL, i & 1, &id);
		if (!ret && i % 3 == 0)
			ret = event_op(fd, AMDKFD_IOC_SET_EVENT, id);
		if (!ret && i == 1)
			page = map_event_page(fd);
	}
	if (ret || !page)
		return -1;
	for (i = 7; i < KFD_SIGNAL_EVENT_LIMIT; i += 7)
		page[i] = i;
	return munmap(page, EVENT_PAGE_SIZE);
}

static int build_empty_state(int fd)
{
	(void)fd;
	return 0;
}

/* The dumped process: builds a state, hands its kfd file out, waits. */
static void dumpee_main(int sock, int (*build)(int fd))
{
	int fd = kfd_open();
	char byte;

	if (fd < 0 || build(fd) || send_fd(sock, fd, "", 1))
		_exit(1);
	if (read(sock, &byte, 1) != 1)	/* until the dump is done */
		_exit(1);
	_exit(0);
}

/* PROCESS_INFO, CHECKPOINT into a memfd, UNPAUSE; reads the image back. */
static int checkpoint_fd(int kfd, struct base_image *img)
{
	struct kfd_ioctl_criu_args args;
	int memfd = memfd_create("kfd-base-image", MFD_CLOEXEC);
	int ret = memfd < 0 ? -errno : 0;

	if (!ret)
		ret = criu_image_op(kfd, KFD_CRIU_OP_PROCESS_INFO, -1, &args);
	if (!ret)
		ret = criu_image_op(kfd, KFD_CRIU_OP_CHECKPOINT, memfd, &args);
	if (!ret)
		ret = criu_image_op(kfd, KFD_CRIU_OP_UNPAUSE, -1, &args);
	if (!ret) {
		img->len = lseek(memfd, 0, SEEK_END);
		img->data = malloc(img->len);
		if (!img->data || pread(memfd, img->data, img->len, 0) !=
		    (ssize_t)img->len)
			ret = -EIO;
	}
	if (memfd >= 0)
		close(memfd);
	return ret;
}

/*
 * Identifies an image in the log. Not its CRC32C: the CRC of a stream of
 * records that each end in their own CRC depends on little but the length.
 */
static uint64_t fnv1a64(const uint8_t *data, size_t len)
{
	uint64_t hash = 0xcbf29ce484222325ULL;

	while (len--)
		hash = (hash ^ *data++) * 0x100000001b3ULL;
	return hash;
}

static int dump_base(const char *name, int (*build)(int fd), unsigned int weight)
{
	struct base_image *img = &bases[num_bases];
	int sv[2], kfd = -1, ret = -1;
	char byte;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		dumpee_main(sv[1], build);
	}
	close(sv[1]);
	if (pid > 0)
		kfd = recv_fd(sv[0], &byte, 1);
	if (kfd >= 0 && !ptrace(PTRACE_SEIZE, pid, 0, 0))
		ret = checkpoint_fd(kfd, img);
	if (kfd >= 0)
		close(kfd);
	if (send(sv[0], "x", 1, MSG_NOSIGNAL) != 1)
		ret = -1;
	close(sv[0]);
	if (pid > 0 && wait_child(pid))
		ret = -1;
	if (ret)
		return ret;
	img->name = name;
	img->weight = weight;
	num_bases++;
	/* stdout carries the image itself with -x */
	fprintf(extracting ? stderr : stdout,
		"# base image %s: %zu bytes, fnv1a64 %016llx\n", name, img->len,
		(unsigned long long)fnv1a64(img->data, img->len));
	return 0;
}

/*
 * The model of an accepted image
 */

/* Frames an image that RESTORE accepted; false if it makes no sense. */
static bool model_read(struct model *mdl, const uint8_t *data, size_t len)
{
	static struct kfd_img_record recs[MAX_MODEL_EVENTS + 8];
	const struct kfd_img_record *rec;
	struct model_event *ev;
	const uint8_t *p;
	size_t n, i;

	memset(mdl, 0, sizeof(*mdl));
	n = kfd_img_frame(data, len, recs, MAX_MODEL_EVENTS + 8);
	if (!n || recs[n - 1].type != KFD_IMG_REC_END || !recs[n - 1].complete)
		return false;
	mdl->consumed = recs[n - 1].off + KFD_IMG_REC_OVERHEAD + recs[n - 1].length;
	for (i = 0; i + 1 < n; i++) {
		rec = &recs[i];
		p = data + rec->off + KFD_IMG_REC_HEADER_SIZE;
		if (rec->type == KFD_IMG_REC_PROCESS) {
			mdl->process = p;
		} else if (rec->type == KFD_IMG_REC_SIGNAL_PAGE) {
			mdl->page = p;
			mdl->page_size = rec->length;
		} else if (rec->type == KFD_IMG_REC_EVENT) {
			if (mdl->num_events == MAX_MODEL_EVENTS)
				return false;
			ev = &mdl->events[mdl->num_events++];
			ev->rec = p;
			ev->id = kfd_img_get32(p + KFD_IMG_EV_ID);
			ev->type = kfd_img_get32(p + KFD_IMG_EV_TYPE);
			ev->auto_reset = kfd_img_get32(p + KFD_IMG_EV_AUTO_RESET);
			ev->signaled = kfd_img_get32(p + KFD_IMG_EV_SIGNALED);
			ev->age = kfd_img_get64(p + KFD_IMG_EV_AGE);
		}
	}
	return mdl->process != NULL;
}

static bool model_has_id(const struct model *mdl, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < mdl->num_events; i++)
		if (mdl->events[i].id == id)
			return true;
	return false;
}

/* The id CREATE_EVENT gives next: the lowest free one of its range. */
static uint32_t model_next_id(const struct model *mdl, bool signal)
{
	uint32_t id = signal ? 1 : KFD_IMG_FIRST_NONSIGNAL_ID;

	while (model_has_id(mdl, id))
		id++;
	return id;
}

static uint64_t model_estimate(const struct model *mdl)
{
	uint64_t size = EMPTY_IMAGE_SIZE;

	if (mdl->page)
		size += KFD_IMG_REC_OVERHEAD + mdl->page_size;
	return size + (uint64_t)mdl->num_events *
		      (KFD_IMG_REC_OVERHEAD + KFD_IMG_EVENT_SIZE);
}

/*
 * The checks
 */

/* Records the first failed check of an image in @why. */
static bool fail(char *why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(((struct result *)0)->why), fmt, ap);
	va_end(ap);
	return false;
}

static bool documented_errno(int err)
{
	switch (err) {
	case EINVAL:
	case EPROTO:
	case EBADMSG:
	case EOPNOTSUPP:
	case ENODATA:
	case EEXIST:
	case ENODEV:
		return true;
	}
	return false;
}

/* A process that has no KFD state, checked without giving it any. */
static bool pristine(int fd, int xnack, char *why)
{
	struct kfd_ioctl_criu_args args;
	int ret;

	ret = criu_image_op(fd, KFD_CRIU_OP_PROCESS_INFO, -1, &args);
	if (ret)
		return fail(why, "PROCESS_INFO: %d", ret);
	if (args.image_size != EMPTY_IMAGE_SIZE)
		return fail(why, "estimate %llu: events or a signal page exist",
			    (unsigned long long)args.image_size);
	ret = criu_image_op(fd, KFD_CRIU_OP_UNPAUSE, -1, &args);
	if (ret)
		return fail(why, "UNPAUSE: %d", ret);
	errno = 0;
	if (map_event_page(fd) || errno != EINVAL)
		return fail(why, "event page mappable (errno %d)", errno);
	ret = kfd_xnack_mode(fd, -1);
	if (ret != xnack)
		return fail(why, "XNACK mode %d, was %d", ret, xnack);
	ret = runtime_enable(fd, 0, true);
	if (ret)
		return fail(why, "runtime enable: %d (left enabled?)", ret);
	ret = runtime_enable(fd, 0, false);
	if (ret)
		return fail(why, "runtime disable: %d", ret);
	return true;
}

static bool check_page(int fd, const struct model *mdl, char *why)
{
	uint64_t *page;
	uint64_t want;
	uint32_t i;

	errno = 0;
	page = map_event_page(fd);
	if (!mdl->page)
		return page ? fail(why, "event page without a SIGNAL_PAGE record") :
			      true;
	if (!page)
		return fail(why, "event page: errno %d", errno);
	for (i = 0; i < KFD_SIGNAL_EVENT_LIMIT; i++) {
		want = i * 8 < mdl->page_size ? kfd_img_get64(mdl->page + i * 8) :
						UNSIGNALED;
		if (page[i] != want) {
			munmap(page, EVENT_PAGE_SIZE);
			return fail(why, "slot %u: %#llx, image %#llx", i,
				    (unsigned long long)page[i],
				    (unsigned long long)want);
		}
	}
	munmap(page, EVENT_PAGE_SIZE);
	return true;
}

/* The exception data a completed wait copies out must be the image's. */
static bool check_exception(const struct model_event *ev,
			    const struct kfd_event_data *data, char *why)
{
	const struct kfd_hsa_memory_exception_data *mem = &data->memory_exception_data;
	const struct kfd_hsa_hw_exception_data *hw = &data->hw_exception_data;
	const uint8_t *r = ev->rec;

	if (ev->type == KFD_IOC_EVENT_MEMORY &&
	    (mem->va != kfd_img_get64(r + KFD_IMG_EV_MEM_VA) ||
	     mem->gpu_id != kfd_img_get32(r + KFD_IMG_EV_MEM_GPU_ID) ||
	     mem->ErrorType != kfd_img_get32(r + KFD_IMG_EV_MEM_ERROR_TYPE) ||
	     mem->failure.NotPresent != kfd_img_get32(r + KFD_IMG_EV_MEM_NOT_PRESENT) ||
	     mem->failure.ReadOnly != kfd_img_get32(r + KFD_IMG_EV_MEM_READ_ONLY) ||
	     mem->failure.NoExecute != kfd_img_get32(r + KFD_IMG_EV_MEM_NO_EXECUTE) ||
	     mem->failure.imprecise != kfd_img_get32(r + KFD_IMG_EV_MEM_IMPRECISE)))
		return fail(why, "event %#x: memory exception data differs", ev->id);
	if (ev->type == KFD_IOC_EVENT_HW_EXCEPTION &&
	    (hw->reset_type != kfd_img_get32(r + KFD_IMG_EV_HW_RESET_TYPE) ||
	     hw->reset_cause != kfd_img_get32(r + KFD_IMG_EV_HW_RESET_CAUSE) ||
	     hw->memory_lost != kfd_img_get32(r + KFD_IMG_EV_HW_MEMORY_LOST) ||
	     hw->gpu_id != kfd_img_get32(r + KFD_IMG_EV_HW_GPU_ID)))
		return fail(why, "event %#x: hardware exception data differs", ev->id);
	return true;
}

/* Signaled state, exception data and age, in that order: waits consume. */
static bool check_event(int fd, const struct model_event *ev, char *why)
{
	struct kfd_event_data data = { .event_id = ev->id };
	uint32_t result;
	int ret;

	ret = wait_once(fd, &data, &result);
	if (ret)
		return fail(why, "event %#x: wait %d", ev->id, ret);
	if (result != (ev->signaled ? KFD_IOC_WAIT_RESULT_COMPLETE :
				      KFD_IOC_WAIT_RESULT_TIMEOUT))
		return fail(why, "event %#x: wait result %u, signaled %u", ev->id,
			    result, ev->signaled);
	if (ev->signaled && !check_exception(ev, &data, why))
		return false;
	if (ev->type != KFD_IOC_EVENT_SIGNAL)
		return true;

	/* A different age completes the wait at once and returns the age */
	memset(&data, 0, sizeof(data));
	data.event_id = ev->id;
	data.signal_event_data.last_event_age = ev->age == 1 ? 2 : 1;
	ret = wait_once(fd, &data, &result);
	if (ret || result != KFD_IOC_WAIT_RESULT_COMPLETE ||
	    data.signal_event_data.last_event_age != ev->age)
		return fail(why, "event %#x: age %llu, image %llu (wait %d/%u)",
			    ev->id,
			    (unsigned long long)data.signal_event_data.last_event_age,
			    (unsigned long long)ev->age, ret, result);
	return true;
}

/*
 * SET_EVENT on every event, then one new event of each kind, whose ids
 * go to @created (UINT32_MAX for none).
 */
static bool check_event_use(int fd, const struct model *mdl, uint32_t *created,
			    char *why)
{
	const struct model_event *ev;
	uint32_t i, id, want;
	int ret;

	created[0] = UINT32_MAX;
	created[1] = UINT32_MAX;

	for (i = 0; i < mdl->num_events; i++) {
		ev = &mdl->events[i];
		ret = event_op(fd, AMDKFD_IOC_SET_EVENT, ev->id);
		if (ret != (ev->type == KFD_IOC_EVENT_SIGNAL ? 0 : -EINVAL))
			return fail(why, "SET_EVENT %#x: %d", ev->id, ret);
		if (!kmsg_clean(why, "first SET_EVENT", ev->id))
			return false;
	}
	/* The page is mapped at full size now: 4096 slots */
	want = model_next_id(mdl, true);
	ret = create_event(fd, KFD_IOC_EVENT_SIGNAL, false, &id);
	if (!ret)
		created[0] = id;
	if (want < KFD_SIGNAL_EVENT_LIMIT && (ret || id != want))
		return fail(why, "CREATE_EVENT signal: %d id %#x, want %#x", ret,
			    id, want);
	want = model_next_id(mdl, false);
	ret = create_event(fd, KFD_IOC_EVENT_NODECHANGE, false, &id);
	if (!ret)
		created[1] = id;
	if (ret || id != want)
		return fail(why, "CREATE_EVENT other: %d id %#x, want %#x", ret,
			    id, want);
	return kmsg_clean(why, "CREATE_EVENT", id);
}

static bool check_process(int fd, const struct model *mdl, char *why)
{
	uint32_t runtime = kfd_img_get32(mdl->process + KFD_IMG_PROC_RUNTIME_STATE);
	int xnack = kfd_img_get32(mdl->process + KFD_IMG_PROC_XNACK);
	int ret;

	ret = kfd_xnack_mode(fd, -1);
	if (ret != xnack)
		return fail(why, "XNACK %d, image %d", ret, xnack);
	ret = runtime_enable(fd, 0, true);
	if (ret != (runtime == DEBUG_RUNTIME_STATE_ENABLED ? -EBUSY : 0))
		return fail(why, "runtime enable: %d, image state %u", ret, runtime);
	return true;
}

/*
 * The exercise: what a real process does next with what it got back,
 * with the kernel log read after every operation
 */

#define EXERCISE_ROUNDS		8
#define MAX_APERTURES		16

/**
 * struct live_event - an event between two operations, as the kernel
 *	must hold it
 * @id: event id
 * @type: KFD_IOC_EVENT_*
 * @auto_reset: a wait consumes the signaled state
 * @signaled: SET_EVENT ran and no wait consumed it since
 * @age: the age counter; SET_EVENT adds one
 */
struct live_event {
	uint32_t id;
	uint32_t type;
	bool auto_reset;
	bool signaled;
	uint64_t age;
};

/*
 * Reads the kernel log records the last operation added. False, with the
 * splat and the operation in @why, when one reports a bug or a warning.
 */
static bool kmsg_clean(char *why, const char *op, uint32_t id)
{
	char rec[8192], *nl;
	const char *msg;
	ssize_t n;

	if (worker_kmsg_fd < 0)
		return true;
	for (;;) {
		n = read(worker_kmsg_fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* records were overwritten */
		if (n <= 0)
			return true;
		rec[n] = '\0';
		msg = strchr(rec, ';');
		msg = msg ? msg + 1 : rec;
		if (!splat_line(msg))
			continue;
		nl = strchr(msg, '\n');
		if (nl)
			*nl = '\0';
		worker_splat = true;
		return fail(why, "after %s %#x: %s", op, id, msg);
	}
}

static bool cpu_signaled(const struct live_event *ev)
{
	return ev->type == KFD_IOC_EVENT_SIGNAL;
}

static bool live_set(int fd, struct live_event *ev, char *why)
{
	int ret = event_op(fd, AMDKFD_IOC_SET_EVENT, ev->id);

	if (ret != (cpu_signaled(ev) ? 0 : -EINVAL))
		return fail(why, "SET_EVENT %#x: %d", ev->id, ret);
	if (!ret) {
		ev->signaled = true;
		ev->age++;
	}
	return kmsg_clean(why, "SET_EVENT", ev->id);
}

static bool live_reset(int fd, struct live_event *ev, char *why)
{
	int ret = event_op(fd, AMDKFD_IOC_RESET_EVENT, ev->id);

	if (ret != (cpu_signaled(ev) ? 0 : -EINVAL))
		return fail(why, "RESET_EVENT %#x: %d", ev->id, ret);
	if (!ret)
		ev->signaled = false;
	return kmsg_clean(why, "RESET_EVENT", ev->id);
}

/*
 * A wait that does not block. With a non-zero @age (signal events only)
 * it completes when the event's age differs and reports the age.
 */
static bool live_wait(int fd, struct live_event *ev, uint64_t age, char *why)
{
	struct kfd_event_data data = { .event_id = ev->id };
	bool aged = cpu_signaled(ev) && age;
	uint32_t result, want;
	int ret;

	data.signal_event_data.last_event_age = age;
	ret = wait_once(fd, &data, &result);
	want = ev->signaled || (aged && ev->age != age) ?
	       KFD_IOC_WAIT_RESULT_COMPLETE : KFD_IOC_WAIT_RESULT_TIMEOUT;
	if (ret || result != want)
		return fail(why, "event %#x: wait (age %llu): %d, result %u, want %u",
			    ev->id, (unsigned long long)age, ret, result, want);
	if (aged && data.signal_event_data.last_event_age != ev->age)
		return fail(why, "event %#x: age %llu after SET_EVENT, want %llu",
			    ev->id,
			    (unsigned long long)data.signal_event_data.last_event_age,
			    (unsigned long long)ev->age);
	if (ev->auto_reset)
		ev->signaled = false;
	return kmsg_clean(why, "WAIT_EVENTS", ev->id);
}

/* Signal and wait, round after round, then RESET_EVENT. */
static bool live_exercise(int fd, struct live_event *ev, char *why)
{
	uint64_t before;
	int round;

	for (round = 0; round < EXERCISE_ROUNDS; round++) {
		before = ev->age;
		if (!live_set(fd, ev, why) ||
		    !live_wait(fd, ev, before ? before : 1, why) ||
		    !live_wait(fd, ev, 0, why))
			return false;
	}
	return live_reset(fd, ev, why) && live_wait(fd, ev, 0, why);
}

static bool live_destroy(int fd, uint32_t id, char *why)
{
	struct kfd_event_data data = { .event_id = id };
	uint32_t result;
	int ret = event_op(fd, AMDKFD_IOC_DESTROY_EVENT, id);

	if (ret)
		return fail(why, "DESTROY_EVENT %#x: %d", id, ret);
	if (!kmsg_clean(why, "DESTROY_EVENT", id))
		return false;
	ret = wait_once(fd, &data, &result);
	if (ret != -EINVAL)
		return fail(why, "wait on destroyed event %#x: %d", id, ret);
	return true;
}

/* A new event: its id, and then the exercise. */
static bool live_create(int fd, uint32_t type, uint32_t want, char *why)
{
	struct live_event ev = { .type = type, .auto_reset = true, .age = 1 };
	int ret = create_event(fd, type, true, &ev.id);

	if (ret || ev.id != want)
		return fail(why, "CREATE_EVENT type %u: %d id %#x, want %#x", type,
			    ret, ev.id, want);
	return kmsg_clean(why, "CREATE_EVENT", ev.id) &&
	       live_exercise(fd, &ev, why) && live_destroy(fd, ev.id, why);
}

static bool check_apertures(int fd, char *why)
{
	static struct kfd_process_device_apertures ap[MAX_APERTURES];
	struct kfd_ioctl_get_process_apertures_new_args args = { 0 };
	int ret = kfd_ioctl(fd, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &args);
	uint32_t nodes;

	if (ret || args.num_of_nodes > MAX_APERTURES)
		return fail(why, "GET_PROCESS_APERTURES_NEW count: %d, %u nodes",
			    ret, args.num_of_nodes);
	/* As the thunk does: as many entries as the count said, if any */
	nodes = args.num_of_nodes;
	if (nodes) {
		args.kfd_process_device_apertures_ptr = (uintptr_t)ap;
		ret = kfd_ioctl(fd, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &args);
		if (ret || args.num_of_nodes != nodes)
			return fail(why, "GET_PROCESS_APERTURES_NEW: %d, %u of %u nodes",
				    ret, args.num_of_nodes, nodes);
	}
	return kmsg_clean(why, "GET_PROCESS_APERTURES_NEW", nodes);
}

/* What the checks before left of an image event. */
static void live_from_model(struct live_event *live, const struct model_event *ev)
{
	live->id = ev->id;
	live->type = ev->type;
	live->auto_reset = ev->auto_reset;
	live->age = ev->age;
	live->signaled = ev->signaled && !ev->auto_reset;
	if (cpu_signaled(live)) {
		live->age++;
		live->signaled = true;
	}
}

/*
 * Every restored event signaled and waited on again and again, reset,
 * the apertures, new events, every event destroyed, new events again
 * with the ids an empty process gets, the runtime disabled.
 */
static bool check_exercise(int fd, const struct model *mdl,
			   const uint32_t *created, char *why)
{
	struct live_event live;
	uint32_t i;
	int ret;

	for (i = 0; i < mdl->num_events; i++) {
		live_from_model(&live, &mdl->events[i]);
		if (!live_exercise(fd, &live, why))
			return false;
	}
	if (!check_apertures(fd, why))
		return false;
	for (i = 0; i < mdl->num_events; i++)
		if (!live_destroy(fd, mdl->events[i].id, why))
			return false;
	for (i = 0; i < 2; i++)
		if (created[i] != UINT32_MAX && !live_destroy(fd, created[i], why))
			return false;
	if (!live_create(fd, KFD_IOC_EVENT_SIGNAL, 1, why) ||
	    !live_create(fd, KFD_IOC_EVENT_MEMORY, KFD_IMG_FIRST_NONSIGNAL_ID,
			 why))
		return false;
	ret = runtime_enable(fd, 0, false);
	if (ret)
		return fail(why, "runtime disable: %d", ret);
	return kmsg_clean(why, "RUNTIME_ENABLE(disable)", 0);
}

/* The state machine after RESTORE, then RESUME and the size estimate. */
static bool check_resume(int fd, const struct model *mdl, char *why)
{
	struct kfd_ioctl_criu_args args;
	int ret;

	ret = criu_image_op(fd, KFD_CRIU_OP_PROCESS_INFO, -1, &args);
	if (ret != -EBADFD)
		return fail(why, "PROCESS_INFO before RESUME: %d", ret);
	ret = criu_image_op(fd, KFD_CRIU_OP_RESTORE, -1, &args);
	if (ret != -EBUSY)
		return fail(why, "second RESTORE: %d", ret);
	ret = criu_resume(fd, getpid());
	if (ret)
		return fail(why, "RESUME: %d", ret);
	ret = criu_image_op(fd, KFD_CRIU_OP_PROCESS_INFO, -1, &args);
	if (ret || args.image_size != model_estimate(mdl))
		return fail(why, "PROCESS_INFO: %d, estimate %llu, model %llu", ret,
			    (unsigned long long)args.image_size,
			    (unsigned long long)model_estimate(mdl));
	ret = criu_image_op(fd, KFD_CRIU_OP_UNPAUSE, -1, &args);
	return ret ? fail(why, "UNPAUSE: %d", ret) : true;
}

static bool check_restored(int fd, const uint8_t *data, size_t len,
			   const struct kfd_ioctl_criu_args *args, char *why)
{
	static struct kfd_img_record recs[MAX_MODEL_EVENTS + 8];
	static struct model mdl;
	uint32_t i, created[2];
	char field[120];

	if (!model_read(&mdl, data, len))
		return fail(why, "accepted an image without END or PROCESS");
	if (!kfd_img_check_ranges(data, len, recs, ARRAY_SIZE(recs), field,
				  sizeof(field)))
		return fail(why, "accepted %s", field);
	if (args->image_size != mdl.consumed || args->format_version != 1)
		return fail(why, "RESTORE read %llu bytes, END ends at %zu",
			    (unsigned long long)args->image_size, mdl.consumed);
	if (!kmsg_clean(why, "RESTORE", 0) || !check_resume(fd, &mdl, why) ||
	    !kmsg_clean(why, "RESUME", 0) || !check_page(fd, &mdl, why))
		return false;
	for (i = 0; i < mdl.num_events; i++)
		if (!check_event(fd, &mdl.events[i], why) ||
		    !kmsg_clean(why, "first WAIT_EVENTS", mdl.events[i].id))
			return false;
	return check_event_use(fd, &mdl, created, why) &&
	       check_process(fd, &mdl, why) &&
	       check_exercise(fd, &mdl, created, why);
}

/*
 * The worker
 */

static const struct base_image *pick_base(struct kfd_img_mutator *m)
{
	unsigned int total = 0, i, x;

	for (i = 0; i < num_bases; i++)
		total += bases[i].weight;
	x = kfd_img_rand(m) % total;
	for (i = 0; i + 1 < num_bases && x >= bases[i].weight; i++)
		x -= bases[i].weight;
	return &bases[i];
}

/* Steps of kfd_img_sweep() on each base of sweep_bases[]. */
static void count_sweep_steps(struct kfd_img_mutator *m, uint8_t *buf)
{
	const struct base_image *base;
	uint32_t step;
	unsigned int i;

	sweep_total = 0;
	for (i = 0; i < ARRAY_SIZE(sweep_bases); i++) {
		base = &bases[sweep_bases[i]];
		step = 0;
		do
			memcpy(buf, base->data, base->len);
		while (kfd_img_sweep(m, buf, base->len, step++));
		sweep_steps[i] = step - 1;
		sweep_total += sweep_steps[i];
	}
}

/*
 * Builds image @index into @buf and returns its length: first each step of
 * the sweep over each base of sweep_bases[], then random mutations of any
 * base.
 */
static size_t make_image(struct kfd_img_mutator *m, uint32_t index,
			 uint8_t *buf, unsigned int *kind)
{
	const struct base_image *base;
	uint32_t first = 0;
	unsigned int i;
	size_t len;

	for (i = 0; i < ARRAY_SIZE(sweep_bases); first += sweep_steps[i++]) {
		if (index >= first + sweep_steps[i])
			continue;
		base = &bases[sweep_bases[i]];
		memcpy(buf, base->data, base->len);
		kfd_img_sweep(m, buf, base->len, index - first);
		*kind = KIND_SWEEP;
		return base->len;
	}
	kfd_img_mutator_seed(m, campaign_seed * 0x100000001b3ULL + index);
	base = pick_base(m);
	memcpy(buf, base->data, base->len);
	len = kfd_img_mutate(m, buf, base->len, IMAGE_CAP, -1);
	*kind = m->kind;
	return len;
}

static int load_memfd(int memfd, const uint8_t *buf, size_t len)
{
	if (ftruncate(memfd, 0) || pwrite(memfd, buf, len, 0) != (ssize_t)len ||
	    lseek(memfd, 0, SEEK_SET))
		return -1;
	return 0;
}

/* Restores one image and judges the outcome; true if the worker goes on. */
static bool try_image(int fd, int memfd, int xnack, struct kfd_img_mutator *m,
		      uint8_t *buf, struct result *res)
{
	struct kfd_ioctl_criu_args args;
	unsigned int kind;
	size_t len;
	int ret;

	len = make_image(m, res->index, buf, &kind);
	res->kind = kind;
	snprintf(res->desc, sizeof(res->desc), "%s", m->desc);
	if (load_memfd(memfd, buf, len)) {
		res->verdict = CRASHED;
		snprintf(res->why, sizeof(res->why), "memfd: %s", strerror(errno));
		return false;
	}
	ret = criu_image_op(fd, KFD_CRIU_OP_RESTORE, memfd, &args);
	res->err = -ret;
	if (!ret) {
		worker_splat = false;
		res->verdict = check_restored(fd, buf, len, &args, res->why) ?
			       ACCEPTED : worker_splat ? SPLAT : INCONSISTENT;
		return false;
	}
	if (!documented_errno(-ret))
		res->verdict = BAD_ERRNO;
	else
		res->verdict = pristine(fd, xnack, res->why) ? REJECTED : STATE_LEFT;
	return res->verdict == REJECTED;
}

/* Restores images @first.. until one is accepted or fails a check. */
static void worker_main(int out, uint32_t first, uint32_t last)
{
	struct kfd_img_mutator m;
	struct result res;
	uint8_t *buf = malloc(IMAGE_CAP);
	int fd = kfd_open();
	int memfd = memfd_create("kfd-mutated-image", MFD_CLOEXEC);
	int xnack = fd >= 0 ? kfd_xnack_mode(fd, -1) : -1;
	bool more = true;
	uint32_t i;

	if (!buf || fd < 0 || memfd < 0 || xnack < 0 ||
	    kfd_img_mutator_init(&m, IMAGE_CAP))
		_exit(2);
	worker_kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (worker_kmsg_fd >= 0)
		lseek(worker_kmsg_fd, 0, SEEK_END);
	for (i = first; i < last && more; i++) {
		memset(&res, 0, sizeof(res));
		res.index = i;
		more = try_image(fd, memfd, xnack, &m, buf, &res);
		if (write(out, &res, sizeof(res)) != sizeof(res))
			_exit(3);
	}
	_exit(0);
}

/*
 * The campaign
 */

static bool splat_line(const char *msg)
{
	static const char * const marks[] = {
		"BUG:", "WARNING:", "Oops", "general protection fault", "UBSAN:",
		"KASAN", "Kernel panic", "possible recursive locking",
		"suspicious RCU usage", "INFO: task", "kmemleak:",
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(marks); i++)
		if (strstr(msg, marks[i]))
			return true;
	return false;
}

/* Counts new kernel log records that report a splat; prints them. */
static unsigned int read_kmsg(uint32_t first, uint32_t last)
{
	char rec[8192];
	unsigned int splats = 0;
	const char *msg;
	ssize_t n;

	if (kmsg_fd < 0)
		return 0;
	for (;;) {
		n = read(kmsg_fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* records were overwritten */
		if (n <= 0)
			break;
		rec[n] = '\0';
		msg = strchr(rec, ';');
		msg = msg ? msg + 1 : rec;
		if (!splat_line(msg))
			continue;
		splats++;
		printf("# kernel splat during images %u-%u: %s", first, last, msg);
	}
	return splats;
}

static void report(const struct result *res)
{
	stats.tried++;
	stats.verdicts[res->verdict]++;
	if (res->verdict <= ACCEPTED)
		stats.kinds[res->kind][res->verdict]++;
	if (res->err > 0 && res->err < 256)
		stats.errnos[res->err]++;
	if (res->verdict <= ACCEPTED)
		return;
	if (++stats.failures <= MAX_REPORTED)
		printf("# image %u (seed %llu): %s: %s; errno %d; %s\n",
		       res->index, (unsigned long long)campaign_seed,
		       verdict_names[res->verdict], res->desc, res->err, res->why);
}

/* Runs one worker from image @first; returns the next image to try. */
static uint32_t run_worker(uint32_t first, uint32_t last)
{
	struct result res;
	uint32_t next = first;
	int pipefd[2], status = 0;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC))
		return last;
	pid = fork();
	if (pid == 0) {
		close(pipefd[0]);
		worker_main(pipefd[1], first, last);
	}
	close(pipefd[1]);
	while (read(pipefd[0], &res, sizeof(res)) == sizeof(res)) {
		report(&res);
		next = res.index + 1;
	}
	close(pipefd[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid ||
	    !WIFEXITED(status) || WEXITSTATUS(status)) {
		memset(&res, 0, sizeof(res));
		res.index = next;
		res.verdict = CRASHED;
		snprintf(res.why, sizeof(res.why), "wait status %#x", status);
		report(&res);
		next++;
	}
	stats.splats += read_kmsg(first, next - 1);
	return next;
}

/* Unreferenced objects kmemleak attributes to amdkfd; -1 without it. */
static int kmemleak_count(void)
{
	const char *path = "/sys/kernel/debug/kmemleak";
	char line[512];
	bool in_object = false, counted = false;
	int leaks = 0;
	FILE *f;

	sleep(6);	/* kmemleak ignores objects younger than 5 s */
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs("scan", f);
	if (fclose(f))
		return -1;
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "unreferenced object")) {
			in_object = true;
			counted = false;
		}
		if (in_object && !counted &&
		    (strstr(line, "kfd") || strstr(line, "amdgpu"))) {
			leaks++;
			counted = true;
			printf("# kmemleak: %s", line);
		}
	}
	fclose(f);
	return leaks;
}

static unsigned long cmdline_value(const char *key, unsigned long fallback)
{
	char buf[4096], *p;
	FILE *f = fopen("/proc/cmdline", "r");
	size_t n;

	if (!f)
		return fallback;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strstr(buf, key);
	return p ? strtoul(p + strlen(key), NULL, 0) : fallback;
}

static int dump_bases(void)
{
	if (dump_base("selftest", build_selftest_state, 40) ||
	    dump_base("types", build_types_state, 25) ||
	    dump_base("many", build_many_state, 15) ||
	    dump_base("empty", build_empty_state, 20))
		return -1;
	return 0;
}

static void print_breakdown(void)
{
	unsigned int i;

	for (i = 0; i <= KFD_IMG_MUT_NR; i++)
		printf("# %-9s %5u rejected, %4u accepted\n",
		       i == KIND_SWEEP ? "sweep" : kfd_img_mutation_name(i),
		       stats.kinds[i][REJECTED], stats.kinds[i][ACCEPTED]);
	printf("# refused with:");
	for (i = 0; i < 256; i++)
		if (stats.errnos[i])
			printf(" %s %u", strerrorname_np(i) ?: "?", stats.errnos[i]);
	printf("\n");
}

/* -x: writes one mutated image to stdout. */
static int extract(uint32_t index)
{
	struct kfd_img_mutator m;
	uint8_t *buf = malloc(IMAGE_CAP);
	unsigned int kind;
	size_t len;

	extracting = true;
	if (!buf || kfd_img_mutator_init(&m, IMAGE_CAP) || dump_bases())
		return 1;
	count_sweep_steps(&m, buf);
	len = make_image(&m, index, buf, &kind);
	fprintf(stderr, "image %u: %s\n", index, m.desc);
	return fwrite(buf, 1, len, stdout) == len ? 0 : 1;
}

/* Sizes the sweep, which the workers then share through fork(). */
static int count_sweep(uint32_t images)
{
	struct kfd_img_mutator m;
	uint8_t *buf = malloc(IMAGE_CAP);

	if (!buf || kfd_img_mutator_init(&m, IMAGE_CAP))
		return -1;
	count_sweep_steps(&m, buf);
	printf("# %u images: a sweep of %u boundary values over every field of every record type (%u of base %s, %u of base %s), then random mutations\n",
	       images, sweep_total, sweep_steps[0], bases[sweep_bases[0]].name,
	       sweep_steps[1], bases[sweep_bases[1]].name);
	kfd_img_mutator_free(&m);
	free(buf);
	return 0;
}

static int run_campaign(uint32_t images)
{
	struct timespec t0, t1;
	uint32_t next = 0, reported = 0;
	bool ok;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (next < images) {
		next = run_worker(next, images);
		/* A run cut short by its timeout still says how far it got */
		if (next / 1000 != reported / 1000) {
			printf("# %u of %u images done, %u splats so far\n", next,
			       images, stats.splats);
			fflush(stdout);
			reported = next;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	stats.leaks = kmemleak_count();
	print_breakdown();
	printf("# %u images in %ld s, seed %llu\n", stats.tried,
	       (long)(t1.tv_sec - t0.tv_sec), (unsigned long long)campaign_seed);

	ok = stats.tried >= images &&
	     stats.verdicts[REJECTED] + stats.verdicts[ACCEPTED] == stats.tried;
	printf("%sok 2 - %u mutated images: each refused with a documented errno or restored exactly\n",
	       ok ? "" : "not ", stats.tried);
	printf("%sok 3 - every refused RESTORE left the process without KFD state\n",
	       stats.verdicts[STATE_LEFT] ? "not " : "");
	printf("%sok 4 - no kernel splat during the campaign\n",
	       stats.splats ? "not " : "");
	if (stats.leaks < 0)
		printf("ok 5 - kmemleak # SKIP not available\n");
	else
		printf("%sok 5 - kmemleak: no unreferenced amdkfd object\n",
		       stats.leaks ? "not " : "");
	printf("mutation: %u tried, %u rejected, %u accepted, %u splats, %d leaks\n",
	       stats.tried, stats.verdicts[REJECTED], stats.verdicts[ACCEPTED],
	       stats.splats, stats.leaks < 0 ? 0 : stats.leaks);
	return ok && !stats.verdicts[STATE_LEFT] && !stats.splats && stats.leaks <= 0 ?
	       0 : 1;
}

int main(int argc, char **argv)
{
	uint32_t images = cmdline_value("kfdcriu.mutate_images=", DEFAULT_IMAGES);
	long extract_index = -1;
	int opt;

	campaign_seed = cmdline_value("kfdcriu.mutate_seed=", 1);
	while ((opt = getopt(argc, argv, "n:s:x:")) != -1) {
		switch (opt) {
		case 'n':
			images = strtoul(optarg, NULL, 0);
			break;
		case 's':
			campaign_seed = strtoull(optarg, NULL, 0);
			break;
		case 'x':
			extract_index = strtol(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: %s [-n IMAGES] [-s SEED] [-x INDEX]\n",
				argv[0]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (access("/dev/kfd", F_OK)) {
		printf("1..0 # SKIP no /dev/kfd\n");
		return 4;
	}
	if (extract_index >= 0)
		return extract(extract_index);

	printf("1..5\n");
	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (kmsg_fd >= 0)
		lseek(kmsg_fd, 0, SEEK_END);
	if (dump_bases()) {
		printf("not ok 1 - dump the base images: %s\n", strerror(errno));
		return 1;
	}
	printf("ok 1 - %u real images dumped from live processes\n", num_bases);
	if (count_sweep(images))
		return 1;
	return run_campaign(images);
}
