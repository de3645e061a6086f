// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: kfd_hsakmt_client - a libhsakmt application, dumped and restored
 *
 * Uses Debian 13's libhsakmt (6.2.4, the thunk ROCr sits on) directly:
 * hsaKmtOpenKFD(), hsaKmtGetVersion(), hsaKmtAcquireSystemProperties()
 * and each node's properties, recorded; two signal events made by
 * hsaKmtCreateEvent() (auto-reset, as ROCr's event pool makes them) and
 * two threads that ping-pong through them with hsaKmtSetEvent() and
 * hsaKmtWaitOnEvent(), a beat every round, printed by the main thread.
 *
 * libhsakmt keeps no event state of its own but the id and the mailbox
 * address: hsaKmtSetEvent is AMDKFD_IOC_SET_EVENT on the id, and
 * hsaKmtWaitOnEvent is AMDKFD_IOC_WAIT_EVENTS with a timeout in ms
 * (ROCT-Thunk-Interface rocm-6.2.4, src/events.c). With no GPU,
 * libhsakmt is not in dGPU mode (topology_setup_is_dgpu_param, no GPU
 * node) and maps the kernel's event page from /dev/kfd on the first
 * event, each event's HWData2 a slot in it (hsaKmtCreateEvent). Its
 * ioctls are retried on EINTR (kmtIoctl, src/libhsakmt.c), so a wait
 * that CRIU interrupts goes on.
 *
 * SIGUSR1 asks for a self-check, printed as "verdict N: PASS ..." or
 * "verdict N: FAIL: why". It holds only if the KFD state came back: the
 * /dev/kfd descriptor still open and answering GET_VERSION with the
 * version hsaKmtGetVersion recorded, the topology read again (release
 * and acquire, as ROCr's BuildTopology does) giving the same nodes, both
 * events' mailboxes inside the /dev/kfd mapping, a new event's wait
 * timing out after its timeout (the kernel waited) and then woken by
 * hsaKmtSetEvent from another thread, and the beats going on. A lost
 * event fails SET_EVENT and WAIT_EVENTS (-EINVAL), which the beats
 * report as FAILED.
 *
 * It runs until it is killed. Exit status: 1 when the setup or a beat
 * fails.
 */

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * hsakmt.h 6.2 names struct kfd_ioctl_dbg_trap_args but includes no
 * header that declares it: the uAPI header comes first.
 */
#include <linux/kfd_ioctl.h>
#include <hsakmt/hsakmt.h>

#include "kfd_rocm_lib.h"

#define MAX_NODES 8
#define WAIT_MS 5000

/* What of a node's properties the check compares: none of them moves */
struct node_rec {
	HSAuint32 cpu_cores;
	HSAuint32 fcompute_cores;
	HSAuint32 mem_banks;
	HSAuint32 io_links;
	HSAuint32 gpu_id;
	HSAuint32 vendor;
	HSAuint32 device;
};

struct topo {
	HsaSystemProperties sys;
	struct node_rec nodes[MAX_NODES];
};

static struct topo start;
static HsaVersionInfo version;
static HsaEvent *ping, *pong;
static atomic_long beats;
static atomic_int failed;
static int kfd_fd;

static HSAKMT_STATUS read_topology(struct topo *t)
{
	HsaNodeProperties p;
	HSAKMT_STATUS st;
	HSAuint32 i;

	memset(t, 0, sizeof(*t));
	st = hsaKmtAcquireSystemProperties(&t->sys);
	if (st)
		return st;
	if (t->sys.NumNodes > MAX_NODES)
		return HSAKMT_STATUS_NO_MEMORY;
	for (i = 0; i < t->sys.NumNodes; i++) {
		st = hsaKmtGetNodeProperties(i, &p);
		if (st)
			return st;
		t->nodes[i] = (struct node_rec) {
			.cpu_cores = p.NumCPUCores, .fcompute_cores = p.NumFComputeCores,
			.mem_banks = p.NumMemoryBanks, .io_links = p.NumIOLinks,
			.gpu_id = p.KFDGpuID, .vendor = p.VendorId, .device = p.DeviceId,
		};
	}
	return HSAKMT_STATUS_SUCCESS;
}

static void print_topology(const struct topo *t)
{
	HSAuint32 i, gpus = 0;

	for (i = 0; i < t->sys.NumNodes; i++) {
		const struct node_rec *n = &t->nodes[i];

		gpus += n->fcompute_cores != 0;
		printf("node %u: %u CPU cores, %u GPU cores, %u memory banks, %u io links, gpu_id %u\n",
		       i, n->cpu_cores, n->fcompute_cores, n->mem_banks, n->io_links, n->gpu_id);
	}
	if (!gpus)
		printf("no GPU node: this machine's KFD topology has only CPU nodes\n");
}

static HsaEvent *make_event(void)
{
	HsaEventDescriptor desc = {
		.EventType = HSA_EVENTTYPE_SIGNAL,
		.NodeId = 0,
		.SyncVar.SyncVarSize = sizeof(HSAuint64),
	};
	HsaEvent *e = NULL;

	if (hsaKmtCreateEvent(&desc, false, false, &e))
		return NULL;
	return e;
}

static void beat_failed(const char *what, long n, HSAKMT_STATUS st)
{
	printf("FAILED: beat %ld: %s (status %d)\n", n, what, st);
	atomic_store(&failed, 1);
}

/* The waiting half of the ping-pong: wake on ping, answer on pong. */
static void *waiter(void *arg)
{
	HSAKMT_STATUS st;
	long n;

	(void)arg;
	for (n = 1; !atomic_load(&failed); n++) {
		st = hsaKmtWaitOnEvent(ping, WAIT_MS);
		if (!st)
			st = hsaKmtSetEvent(pong);
		if (st) {
			beat_failed("waiting for ping or setting pong", n, st);
			break;
		}
	}
	return NULL;
}

/* The setting half: set ping, wait for pong, count the beat. */
static void *signaler(void *arg)
{
	HSAKMT_STATUS st;
	long n;

	(void)arg;
	for (n = 1; !atomic_load(&failed); n++) {
		st = hsaKmtSetEvent(ping);
		if (!st)
			st = hsaKmtWaitOnEvent(pong, WAIT_MS);
		if (st) {
			beat_failed("setting ping or waiting for pong", n, st);
			break;
		}
		atomic_store(&beats, n);
		sleep_ms(100);
	}
	return NULL;
}

static const char *check_topology(void)
{
	struct topo now;

	if (hsaKmtReleaseSystemProperties() || read_topology(&now))
		return "reading the topology again failed";
	if (now.sys.NumNodes != start.sys.NumNodes ||
	    memcmp(now.nodes, start.nodes, sizeof(now.nodes)))
		return "the topology changed";
	return NULL;
}

static const char *check_kfd(void)
{
	uint32_t major, minor;
	const char *why = kfd_check_fd(kfd_fd, &major, &minor);

	if (why)
		return why;
	if (major != version.KernelInterfaceMajorVersion ||
	    minor != version.KernelInterfaceMinorVersion)
		return "the kernel's KFD version is not the one hsaKmtGetVersion recorded";
	if (!kfd_page_mapped(ping->EventData.HWData2) || !kfd_page_mapped(pong->EventData.HWData2))
		return "an event's mailbox is not in a /dev/kfd mapping";
	return NULL;
}

struct wake {
	HsaEvent *e;
	atomic_int waiting;
	HSAKMT_STATUS st;
	uint64_t wall_ns;
};

static void *wake_waiter(void *arg)
{
	struct wake *w = arg;
	uint64_t wall = clock_ns(CLOCK_MONOTONIC);

	atomic_store(&w->waiting, 1);
	w->st = hsaKmtWaitOnEvent(w->e, 10000);
	w->wall_ns = clock_ns(CLOCK_MONOTONIC) - wall;
	return NULL;
}

/* Unset, the wait times out after its timeout: the kernel waited. */
static const char *check_timeout(HsaEvent *e, char *info, size_t len)
{
	uint64_t t = clock_ns(CLOCK_MONOTONIC);
	HSAKMT_STATUS st = hsaKmtWaitOnEvent(e, 200);

	t = clock_ns(CLOCK_MONOTONIC) - t;
	snprintf(info, len, "unset wait %llu ms", (unsigned long long)t / 1000000);
	if (st != HSAKMT_STATUS_WAIT_TIMEOUT)
		return "a wait on an unset new event did not time out";
	if (t < 150000000ull)
		return "a wait on an unset new event returned before its timeout";
	return NULL;
}

/*
 * A new event of the restored process: its wait times out when nobody
 * sets it, and a set from this thread 300 ms later wakes its waiter.
 */
static const char *check_wake(char *info, size_t len)
{
	struct wake w = { 0 };
	const char *why;
	size_t used;
	pthread_t t;

	w.e = make_event();
	if (!w.e)
		return "hsaKmtCreateEvent failed";
	why = kfd_page_mapped(w.e->EventData.HWData2) ? NULL :
	      "a new event's mailbox is not in a /dev/kfd mapping";
	if (!why)
		why = check_timeout(w.e, info, len);
	if (!why && pthread_create(&t, NULL, wake_waiter, &w))
		why = "pthread_create failed";
	if (why)
		goto out;
	while (!atomic_load(&w.waiting))
		sleep_ms(1);
	sleep_ms(300);
	if (hsaKmtSetEvent(w.e))
		why = "hsaKmtSetEvent on a new event failed";
	pthread_join(t, NULL);
	used = strlen(info);
	snprintf(info + used, len - used, ", woken after %llu ms",
		 (unsigned long long)w.wall_ns / 1000000);
	if (!why && w.st != HSAKMT_STATUS_SUCCESS)
		why = "the set did not wake the waiter";
	else if (!why && w.wall_ns < 250000000ull)
		why = "the waiter returned before the set";
out:
	hsaKmtDestroyEvent(w.e);
	return why;
}

/* The beats go on: 3 more within 5 s. */
static const char *check_beating(void)
{
	long b = atomic_load(&beats);
	int i;

	for (i = 0; i < 50 && atomic_load(&beats) < b + 3; i++)
		sleep_ms(100);
	return atomic_load(&beats) < b + 3 ? "the beats stopped" : NULL;
}

static void self_check(int n)
{
	char info[96] = "";
	const char *why;

	why = check_kfd();
	if (!why)
		why = check_topology();
	if (!why)
		why = check_wake(info, sizeof(info));
	if (!why)
		why = check_beating();
	if (atomic_load(&failed))
		why = "a beat failed";
	if (why)
		printf("verdict %d: FAIL: %s%s%s\n", n, why, info[0] ? "; " : "", info);
	else
		printf("verdict %d: PASS: KFD %u.%u, %u nodes as at start, kfd fd %d, events %u and %u in the /dev/kfd page, %s, beat %ld\n",
		       n, version.KernelInterfaceMajorVersion, version.KernelInterfaceMinorVersion,
		       start.sys.NumNodes, kfd_fd, ping->EventId, pong->EventId, info,
		       atomic_load(&beats));
}

static int setup(void)
{
	HSAKMT_STATUS st;

	st = hsaKmtOpenKFD();
	if (!st)
		st = hsaKmtGetVersion(&version);
	if (!st)
		st = read_topology(&start);
	if (st) {
		printf("opening KFD or reading its topology failed: status %d\n", st);
		return 1;
	}
	printf("KFD %u.%u, %u nodes\n", version.KernelInterfaceMajorVersion,
	       version.KernelInterfaceMinorVersion, start.sys.NumNodes);
	print_topology(&start);
	kfd_fd = kfd_find_fd();
	ping = make_event();
	pong = make_event();
	if (kfd_fd < 0 || !ping || !pong) {
		printf("setup failed: kfd fd %d, events %p %p\n", kfd_fd, (void *)ping, (void *)pong);
		return 1;
	}
	printf("kfd fd %d, events: ping %u, pong %u\n", kfd_fd, ping->EventId, pong->EventId);
	if (!kfd_page_mapped(ping->EventData.HWData2)) {
		printf("setup failed: the event mailbox 0x%llx is not in a /dev/kfd mapping\n",
		       (unsigned long long)ping->EventData.HWData2);
		return 1;
	}
	return 0;
}

int main(void)
{
	struct timespec half = { 0, 500000000 };
	pthread_t threads[2];
	long shown = -1;
	int checks = 0;
	sigset_t usr1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Blocked in every thread: main takes it below */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	if (setup())
		return 1;
	printf("pid %d: beating\n", getpid());
	if (pthread_create(&threads[0], NULL, waiter, NULL) ||
	    pthread_create(&threads[1], NULL, signaler, NULL))
		return 1;
	while (!atomic_load(&failed)) {
		if (sigtimedwait(&usr1, NULL, &half) == SIGUSR1)
			self_check(++checks);
		if (atomic_load(&beats) != shown) {
			shown = atomic_load(&beats);
			printf("beat %ld\n", shown);
		}
	}
	return 1;
}
