// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: kfd_worker - a process with live KFD state, for CRIU e2e tests
 *
 * Usage: kfd_worker DIR
 *
 * Opens /dev/kfd and builds the state a checkpoint must carry: signal
 * events, manual and auto-reset, some signaled, with a gap in their ids
 * (one is destroyed at once); the event page mapped, with a pattern in the
 * slots that no event uses; a thread blocked in WAIT_EVENTS. Then it works
 * in a loop: each round it sets, waits on and resets a heartbeat event and
 * writes the round count to DIR/counter. The counter file stays open and
 * has a fixed width, so that CRIU's size check of open files holds after a
 * dump with --leave-running.
 *
 * When DIR/trigger appears, or on SIGUSR1, it checks that state through the
 * KFD ioctls and writes "PASS ..." or "FAIL ...: reasons" to DIR/result
 * (atomically, by rename). The checks leave the state as they found it, so
 * they can run again after each of several dump/restore cycles. They also
 * probe the process's own state in the CRIU image-mode state machine, which
 * must be "running": not left paused by a dump, resumed after a restore.
 * That takes CAP_CHECKPOINT_RESTORE; the e2e tests run as root.
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
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/kfd_ioctl.h>

/* The event page: one 64-bit slot per signal event id */
#define EVENT_SLOTS		4096
#define EVENT_PAGE_SIZE		(EVENT_SLOTS * 8)
#define SLOT_UNSIGNALED		(~0ULL)
/* Slots from here on carry a pattern, as data a GPU could have left */
#define PATTERN_FIRST_SLOT	3968
#define SLOT_PATTERN(i)		(0x6b666463ULL << 32 | (i))
#define WAIT_INFINITE		0xffffffffU
#define COUNTER_WIDTH		20
#define REASONS_MAX		2048

enum worker_event {
	EV_MANUAL_SIGNALED,
	EV_MANUAL_CLEAR,
	EV_GAP,
	EV_AUTO_SIGNALED,
	EV_AUTO_CLEAR,
	EV_HEARTBEAT,
	EV_WAITER,
	EV_NR
};

static const bool ev_auto_reset[EV_NR] = {
	[EV_AUTO_SIGNALED] = true,
	[EV_AUTO_CLEAR] = true,
	[EV_WAITER] = true,
};

static const char * const ev_name[EV_NR] = {
	[EV_MANUAL_SIGNALED] = "signaled manual-reset event",
	[EV_MANUAL_CLEAR] = "unsignaled manual-reset event",
	[EV_GAP] = "destroyed event",
	[EV_AUTO_SIGNALED] = "signaled auto-reset event",
	[EV_AUTO_CLEAR] = "unsignaled auto-reset event",
	[EV_HEARTBEAT] = "heartbeat event",
	[EV_WAITER] = "event of the waiting thread",
};

/**
 * struct worker - the KFD state the worker builds, and its checks' results
 * @kfd: the /dev/kfd file
 * @counter_fd: DIR/counter, open for the whole run
 * @ids: event ids, by &enum worker_event
 * @page: the mapped event page
 * @rounds: rounds of the work loop so far
 * @heartbeat_errors: rounds whose heartbeat did not behave
 * @wakeups: completed waits of the waiting thread (atomic)
 * @waiter_errors: failed waits of the waiting thread (atomic)
 * @checks: checks made by the current verification
 * @failures: checks that failed
 * @reasons: what failed, "; "-separated
 * @trigger: path of DIR/trigger
 * @result: path of DIR/result
 */
static struct worker {
	int kfd;
	int counter_fd;
	__u32 ids[EV_NR];
	__u64 *page;
	unsigned long rounds;
	unsigned long heartbeat_errors;
	unsigned long wakeups;
	unsigned long waiter_errors;
	unsigned int checks;
	unsigned int failures;
	char reasons[REASONS_MAX];
	char trigger[4096];
	char result[4096];
} w;

/* set by SIGUSR1; atomic, which makes it safe in a signal handler */
static int check_requested;

/* The kernel and a GPU share the event page: access it once per read */
static __u64 slot_read(unsigned int i)
{
	return __atomic_load_n(&w.page[i], __ATOMIC_RELAXED);
}

static int kfd_ioctl(unsigned long cmd, void *args)
{
	return ioctl(w.kfd, cmd, args) ? -errno : 0;
}

static int create_event(bool auto_reset, __u32 *id, __u64 *page_offset)
{
	struct kfd_ioctl_create_event_args args = {
		.event_type = KFD_IOC_EVENT_SIGNAL,
		.auto_reset = auto_reset,
	};
	int ret;

	ret = kfd_ioctl(AMDKFD_IOC_CREATE_EVENT, &args);
	*id = args.event_id;
	*page_offset = args.event_page_offset;
	return ret;
}

static int destroy_event(__u32 id)
{
	struct kfd_ioctl_destroy_event_args args = { .event_id = id };

	return kfd_ioctl(AMDKFD_IOC_DESTROY_EVENT, &args);
}

static int set_event(__u32 id)
{
	struct kfd_ioctl_set_event_args args = { .event_id = id };

	return kfd_ioctl(AMDKFD_IOC_SET_EVENT, &args);
}

static int reset_event(__u32 id)
{
	struct kfd_ioctl_reset_event_args args = { .event_id = id };

	return kfd_ioctl(AMDKFD_IOC_RESET_EVENT, &args);
}

/* WAIT_EVENTS on one event: a KFD_IOC_WAIT_RESULT_* or -errno */
static int wait_event(__u32 id, __u32 timeout_ms)
{
	struct kfd_event_data data = { .event_id = id };
	struct kfd_ioctl_wait_events_args args = {
		.events_ptr = (__u64)(uintptr_t)&data,
		.num_events = 1,
		.timeout = timeout_ms,
	};
	int ret;

	do {
		ret = kfd_ioctl(AMDKFD_IOC_WAIT_EVENTS, &args);
	} while (ret == -EINTR);
	return ret ? ret : (int)args.wait_result;
}

static void *waiter_main(void *arg)
{
	sigset_t usr1;

	(void)arg;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	for (;;) {
		if (wait_event(w.ids[EV_WAITER], WAIT_INFINITE) ==
		    KFD_IOC_WAIT_RESULT_COMPLETE) {
			__atomic_add_fetch(&w.wakeups, 1, __ATOMIC_SEQ_CST);
		} else {
			__atomic_add_fetch(&w.waiter_errors, 1, __ATOMIC_SEQ_CST);
			sleep(1);
		}
	}
	return NULL;
}

static int setup_events(void)
{
	__u64 offset = 0;
	int i, ret;

	for (i = 0; i < EV_NR; i++) {
		ret = create_event(ev_auto_reset[i], &w.ids[i], &offset);
		if (ret)
			return ret;
		if (w.ids[i] >= PATTERN_FIRST_SLOT)
			return -ERANGE;
	}
	ret = destroy_event(w.ids[EV_GAP]);
	if (!ret)
		ret = set_event(w.ids[EV_MANUAL_SIGNALED]);
	if (!ret)
		ret = set_event(w.ids[EV_AUTO_SIGNALED]);
	if (ret)
		return ret;
	w.page = mmap(NULL, EVENT_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		      w.kfd, offset);
	if (w.page == MAP_FAILED)
		return -errno;
	for (i = PATTERN_FIRST_SLOT; i < EVENT_SLOTS; i++)
		__atomic_store_n(&w.page[i], SLOT_PATTERN(i), __ATOMIC_RELAXED);
	return 0;
}

#define __printf(a, b)	__attribute__((format(printf, a, b)))

static __printf(2, 3) void check(bool pass, const char *fmt, ...)
{
	size_t len = strlen(w.reasons);
	char reason[256];
	va_list ap;

	w.checks++;
	if (pass)
		return;
	w.failures++;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	snprintf(w.reasons + len, sizeof(w.reasons) - len, "; %s", reason);
}

static void expect_signaled(enum worker_event ev, bool signaled,
			    const char *when)
{
	int ret = wait_event(w.ids[ev], 0);

	check(ret == (signaled ? KFD_IOC_WAIT_RESULT_COMPLETE :
		      KFD_IOC_WAIT_RESULT_TIMEOUT),
	      "%s %u %s: WAIT with timeout 0 gave %d, expected it %ssignaled",
	      ev_name[ev], w.ids[ev], when, ret, signaled ? "" : "not ");
}

/* Signaled states; each event ends as it started */
static void check_event_states(void)
{
	expect_signaled(EV_MANUAL_SIGNALED, true, "");
	expect_signaled(EV_MANUAL_SIGNALED, true, "after a wait");
	expect_signaled(EV_MANUAL_CLEAR, false, "");
	expect_signaled(EV_AUTO_SIGNALED, true, "");
	expect_signaled(EV_AUTO_SIGNALED, false, "after a wait");
	check(!set_event(w.ids[EV_AUTO_SIGNALED]), "SET of %s failed",
	      ev_name[EV_AUTO_SIGNALED]);
	expect_signaled(EV_AUTO_CLEAR, false, "");
	expect_signaled(EV_HEARTBEAT, false, "between rounds");
	check(!set_event(w.ids[EV_MANUAL_CLEAR]), "SET of %s failed",
	      ev_name[EV_MANUAL_CLEAR]);
	expect_signaled(EV_MANUAL_CLEAR, true, "after SET");
	check(!reset_event(w.ids[EV_MANUAL_CLEAR]), "RESET of %s failed",
	      ev_name[EV_MANUAL_CLEAR]);
	expect_signaled(EV_MANUAL_CLEAR, false, "after RESET");
	check(set_event(w.ids[EV_GAP]) == -EINVAL,
	      "the destroyed id %u is known again", w.ids[EV_GAP]);
}

static void check_event_page(void)
{
	unsigned int i, bad_events = 0, bad_patterns = 0;

	for (i = 0; i < EV_NR; i++)
		if (i != EV_GAP && slot_read(w.ids[i]) != SLOT_UNSIGNALED)
			bad_events++;
	for (i = PATTERN_FIRST_SLOT; i < EVENT_SLOTS; i++)
		if (slot_read(i) != SLOT_PATTERN(i))
			bad_patterns++;
	check(!bad_events, "%u event slots of the event page changed",
	      bad_events);
	check(!bad_patterns, "%u pattern slots of the event page changed",
	      bad_patterns);
}

/* The thread blocked in WAIT_EVENTS wakes exactly once when set */
static void check_waiter(void)
{
	unsigned long before, now;
	int i;

	before = __atomic_load_n(&w.wakeups, __ATOMIC_SEQ_CST);
	check(!set_event(w.ids[EV_WAITER]), "SET of %s failed",
	      ev_name[EV_WAITER]);
	for (i = 0; i < 300; i++) {
		now = __atomic_load_n(&w.wakeups, __ATOMIC_SEQ_CST);
		if (now != before)
			break;
		usleep(10000);
	}
	usleep(50000);
	now = __atomic_load_n(&w.wakeups, __ATOMIC_SEQ_CST);
	check(now == before + 1, "the waiting thread woke %lu times, not once",
	      now - before);
	check(!__atomic_load_n(&w.waiter_errors, __ATOMIC_SEQ_CST),
	      "the waiting thread saw %lu failed waits", w.waiter_errors);
}

/* The image-mode version of legacy CRIU op @op */
static int criu_op(__u32 op)
{
	struct kfd_ioctl_criu_args args = {
		.op = KFD_CRIU_OP_IMAGE_PROCESS_INFO + op,
	};

	return kfd_ioctl(AMDKFD_IOC_CRIU_OP, &args);
}

/*
 * UNPAUSE succeeds only on a paused process; PROCESS_INFO fails only on a
 * restored one that was never resumed, and its pause is undone at once.
 */
static void check_criu_state(void)
{
	int ret = criu_op(KFD_CRIU_OP_UNPAUSE);

	check(ret, "UNPAUSE succeeded: a dump had left the process paused");
	check(ret == -EBADFD || !ret, "UNPAUSE failed: %s", strerror(-ret));
	ret = criu_op(KFD_CRIU_OP_PROCESS_INFO);
	check(!ret, "PROCESS_INFO failed (not resumed after restore?): %s",
	      strerror(-ret));
	if (!ret)
		check(!criu_op(KFD_CRIU_OP_UNPAUSE),
		      "UNPAUSE after PROCESS_INFO failed");
}

static void check_new_event(void)
{
	__u64 offset;
	__u32 id;
	int i, ret;

	ret = create_event(false, &id, &offset);
	check(!ret, "CREATE_EVENT failed: %s", strerror(-ret));
	if (ret)
		return;
	for (i = 0; i < EV_NR; i++)
		check(i == EV_GAP || id != w.ids[i],
		      "a new event got the id %u of the %s", id, ev_name[i]);
	check(!destroy_event(id), "DESTROY_EVENT of a new event failed");
}

static void write_result(void)
{
	char tmp[sizeof(w.result) + 8];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", w.result);
	f = fopen(tmp, "w");
	if (!f)
		return;
	if (w.failures)
		fprintf(f, "FAIL %u of %u checks%s\n", w.failures, w.checks,
			w.reasons);
	else
		fprintf(f, "PASS %u checks, round %lu, %lu wakeups\n",
			w.checks, w.rounds, w.wakeups);
	if (!fclose(f))
		rename(tmp, w.result);
}

static void verify(void)
{
	w.checks = 0;
	w.failures = 0;
	w.reasons[0] = '\0';
	check_criu_state();
	check_event_states();
	check_event_page();
	check_waiter();
	check_new_event();
	check(!w.heartbeat_errors, "%lu heartbeat rounds failed",
	      w.heartbeat_errors);
	write_result();
}

static void heartbeat(void)
{
	__u32 id = w.ids[EV_HEARTBEAT];

	if (set_event(id) ||
	    wait_event(id, 0) != KFD_IOC_WAIT_RESULT_COMPLETE ||
	    reset_event(id) ||
	    wait_event(id, 0) != KFD_IOC_WAIT_RESULT_TIMEOUT)
		w.heartbeat_errors++;
}

static void write_counter(void)
{
	char buf[COUNTER_WIDTH + 2];
	int len;

	len = snprintf(buf, sizeof(buf), "%*lu\n", COUNTER_WIDTH, w.rounds);
	if (pwrite(w.counter_fd, buf, len, 0) != len)
		w.heartbeat_errors++;
}

static void on_sigusr1(int sig)
{
	(void)sig;
	__atomic_store_n(&check_requested, 1, __ATOMIC_SEQ_CST);
}

static int start(const char *dir)
{
	struct sigaction sa = { .sa_handler = on_sigusr1, .sa_flags = SA_RESTART };
	char path[4096];
	pthread_t waiter;
	int ret;

	snprintf(w.trigger, sizeof(w.trigger), "%s/trigger", dir);
	snprintf(w.result, sizeof(w.result), "%s/result", dir);
	snprintf(path, sizeof(path), "%s/counter", dir);
	w.counter_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			    0644);
	if (w.counter_fd < 0) {
		fprintf(stderr, "kfd_worker: %s: %s\n", path, strerror(errno));
		return 1;
	}
	w.kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	ret = w.kfd < 0 ? -errno : setup_events();
	if (ret) {
		fprintf(stderr, "kfd_worker: KFD setup: %s\n", strerror(-ret));
		return 1;
	}
	ret = pthread_create(&waiter, NULL, waiter_main, NULL);
	if (ret || sigaction(SIGUSR1, &sa, NULL)) {
		fprintf(stderr, "kfd_worker: thread or signal setup: %s\n",
			strerror(ret ? ret : errno));
		return 1;
	}
	printf("kfd_worker %d: events %u..%u, event page at %p\n", getpid(),
	       w.ids[0], w.ids[EV_NR - 1], (void *)w.page);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	if (start(argv[1]))
		return 1;
	for (;;) {
		heartbeat();
		w.rounds++;
		write_counter();
		if (__atomic_exchange_n(&check_requested, 0, __ATOMIC_SEQ_CST) ||
		    !access(w.trigger, F_OK)) {
			unlink(w.trigger);
			verify();
		}
		usleep(100000);
	}
}
