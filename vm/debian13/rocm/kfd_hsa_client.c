// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: kfd_hsa_client - a ROCr application, dumped and restored mid-flight
 *
 * Uses Debian 13's HSA runtime (libhsa-runtime64 6.1.2, ROCr) as
 * applications do: hsa_init(), the agents and each agent's memory pools
 * iterated and recorded, a buffer from a pool, signals created with
 * hsa_signal_create() and two threads that ping-pong through them (one
 * waits, the other stores), an async handler on a third signal (ROCr's
 * own event thread waits for it), a beat every round. Twice a second the
 * main thread prints the beat count.
 *
 * ROCr backs these signals with KFD events: hsa_signal_create() with no
 * consumers makes an InterruptSignal, whose event comes from
 * hsaKmtCreateEvent(HSA_EVENTTYPE_SIGNAL), its id and mailbox in the
 * signal's amd_signal_t (ROCR-Runtime rocm-6.1.2, hsa.cpp
 * hsa_signal_create, hsa_ext_amd.cpp hsa_amd_signal_create,
 * interrupt_signal.cpp InterruptSignal::InterruptSignal). A store sets the
 * event (InterruptSignal::StoreRelease -> SetEvent); a blocked wait spins
 * 200 us and then sleeps in hsaKmtWaitOnEvent_Ext, i.e.
 * AMDKFD_IOC_WAIT_EVENTS (InterruptSignal::WaitRelaxed). The handle of a
 * signal is the address of its amd_signal_t (core/inc/signal.h,
 * Signal::Convert).
 *
 * SIGUSR1 asks for a self-check, printed as "verdict N: PASS ..." or
 * "verdict N: FAIL: why". It holds only if the process still reaches
 * its KFD state: the same agents and pools as at start, the /dev/kfd
 * descriptor still open and answering GET_VERSION, each signal's event
 * mailbox inside a /dev/kfd mapping, the signal values where the beats
 * left them, the signal kept for these checks since the start and a new
 * one each waking a waiter, by a store from another thread, while it
 * slept in the kernel (its CPU time a fraction of the wait: a lost event
 * makes hsaKmtWaitOnEvent fail at once and ROCr's wait loop spin), and
 * the beats going on.
 *
 * With no GPU the KFD topology has one CPU node: ROCr then sees only the
 * CPU agent and makes no GPU state (Runtime::BindErrorHandlers returns
 * early with no GPU agent, runtime.cpp), which the start says.
 *
 * It runs until it is killed. Exit status: 1 when a beat or the setup
 * fails, 4 when hsa_init() fails (printed with the runtime's status
 * string, for the test to say why it skips).
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

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <hsa/amd_hsa_signal.h>

#include "kfd_rocm_lib.h"

#define MAX_AGENTS 8
#define MAX_POOLS 8
#define BUF_SIZE (64 * 1024)
#define WAIT_MS 5000

struct pool_rec {
	uint32_t segment;
	uint32_t flags;
	size_t size;
	bool alloc;
};

struct agent_rec {
	hsa_agent_t agent;
	char name[64];
	hsa_device_type_t type;
	uint32_t node;
	uint32_t npools;
	struct pool_rec pools[MAX_POOLS];
	hsa_amd_memory_pool_t alloc_pool;
	bool has_alloc_pool;
};

struct census {
	uint32_t nagents;
	struct agent_rec agents[MAX_AGENTS];
};

static struct census start;
static hsa_signal_t ping, pong, tick, probe;
static uint32_t ping_event, pong_event;
static uint64_t ticks_per_ms;
static atomic_long beats, async_calls;
static atomic_int failed;
static int kfd_fd;
static unsigned char *buf;

static const char *status_str(hsa_status_t st)
{
	const char *s = NULL;

	if (hsa_status_string(st, &s) != HSA_STATUS_SUCCESS || !s)
		return "unknown status";
	return s;
}

static hsa_status_t record_pool(hsa_amd_memory_pool_t pool, void *data)
{
	struct agent_rec *a = data;
	struct pool_rec *p;

	if (a->npools == MAX_POOLS)
		return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
	p = &a->pools[a->npools++];
	if (hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &p->segment) ||
	    hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SIZE, &p->size) ||
	    hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED,
					 &p->alloc))
		return HSA_STATUS_ERROR;
	p->flags = 0;
	if (p->segment == HSA_AMD_SEGMENT_GLOBAL &&
	    hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &p->flags))
		return HSA_STATUS_ERROR;
	if (p->alloc && !a->has_alloc_pool) {
		a->alloc_pool = pool;
		a->has_alloc_pool = true;
	}
	return HSA_STATUS_SUCCESS;
}

static hsa_status_t record_agent(hsa_agent_t agent, void *data)
{
	struct census *c = data;
	struct agent_rec *a;

	if (c->nagents == MAX_AGENTS)
		return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
	a = &c->agents[c->nagents++];
	memset(a, 0, sizeof(*a));
	a->agent = agent;
	if (hsa_agent_get_info(agent, HSA_AGENT_INFO_NAME, a->name) ||
	    hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &a->type) ||
	    hsa_agent_get_info(agent, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_DRIVER_NODE_ID,
			       &a->node))
		return HSA_STATUS_ERROR;
	return hsa_amd_agent_iterate_memory_pools(agent, record_pool, a);
}

static hsa_status_t take_census(struct census *c)
{
	memset(c, 0, sizeof(*c));
	return hsa_iterate_agents(record_agent, c);
}

static const char *type_name(hsa_device_type_t type)
{
	switch (type) {
	case HSA_DEVICE_TYPE_CPU:
		return "CPU";
	case HSA_DEVICE_TYPE_GPU:
		return "GPU";
	default:
		return "DSP";
	}
}

static void print_census(const struct census *c)
{
	uint32_t i, j, gpus = 0;

	for (i = 0; i < c->nagents; i++) {
		const struct agent_rec *a = &c->agents[i];

		gpus += a->type == HSA_DEVICE_TYPE_GPU;
		printf("agent %u: %s '%s' node %u, %u pools\n", i, type_name(a->type),
		       a->name, a->node, a->npools);
		for (j = 0; j < a->npools; j++)
			printf("  pool %u: segment %u flags 0x%x size %zu alloc %d\n", j,
			       a->pools[j].segment, a->pools[j].flags, a->pools[j].size,
			       a->pools[j].alloc);
	}
	if (!gpus)
		printf("no GPU agent: this machine's KFD topology has no GPU node, ROCr sees only the CPU agent\n");
}

/* The same agents, in the same order, with the same pools. */
static const char *census_differs(const struct census *a, const struct census *b)
{
	uint32_t i;

	if (a->nagents != b->nagents)
		return "the number of agents changed";
	for (i = 0; i < a->nagents; i++) {
		const struct agent_rec *x = &a->agents[i], *y = &b->agents[i];

		if (x->agent.handle != y->agent.handle || strcmp(x->name, y->name) ||
		    x->type != y->type || x->node != y->node)
			return "an agent changed";
		if (x->npools != y->npools ||
		    memcmp(x->pools, y->pools, x->npools * sizeof(x->pools[0])))
			return "an agent's memory pools changed";
	}
	return NULL;
}

static amd_signal_t *amd_signal(hsa_signal_t s)
{
	return (amd_signal_t *)(uintptr_t)s.handle;
}

static bool wait_for(hsa_signal_t s, long value)
{
	return hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_GTE, value,
					 WAIT_MS * ticks_per_ms, HSA_WAIT_STATE_BLOCKED) >= value;
}

static void beat_failed(const char *what, long n)
{
	printf("FAILED: beat %ld: %s\n", n, what);
	atomic_store(&failed, 1);
}

/* The waiting half of the ping-pong: wake on ping N, answer on pong. */
static void *waiter(void *arg)
{
	long n;

	(void)arg;
	for (n = 1; !atomic_load(&failed); n++) {
		if (!wait_for(ping, n)) {
			beat_failed("no ping within 5 s", n);
			break;
		}
		hsa_signal_store_screlease(pong, n);
	}
	return NULL;
}

/* The storing half: ping N, wait for pong N, count the beat, tick. */
static void *signaler(void *arg)
{
	long n;

	(void)arg;
	for (n = 1; !atomic_load(&failed); n++) {
		hsa_signal_store_screlease(ping, n);
		if (!wait_for(pong, n)) {
			beat_failed("no pong within 5 s", n);
			break;
		}
		atomic_store(&beats, n);
		hsa_signal_store_screlease(tick, 1);
		sleep_ms(100);
	}
	return NULL;
}

/* Run by ROCr's async events thread when tick is set. */
static bool on_tick(hsa_signal_value_t value, void *arg)
{
	(void)value;
	(void)arg;
	atomic_fetch_add(&async_calls, 1);
	hsa_signal_store_screlease(tick, 0);
	return true;
}

struct wake {
	hsa_signal_t sig;
	hsa_signal_value_t want, got;
	atomic_int waiting;
	uint64_t wall_ns, cpu_ns;
};

static void *wake_waiter(void *arg)
{
	struct wake *w = arg;
	uint64_t wall, cpu;

	wall = clock_ns(CLOCK_MONOTONIC);
	cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	atomic_store(&w->waiting, 1);
	w->got = hsa_signal_wait_scacquire(w->sig, HSA_SIGNAL_CONDITION_EQ, w->want,
					   10000 * ticks_per_ms, HSA_WAIT_STATE_BLOCKED);
	w->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
	w->wall_ns = clock_ns(CLOCK_MONOTONIC) - wall;
	return NULL;
}

/*
 * @sig wakes a waiter that slept in the kernel: stored with @want 300 ms
 * after the waiter began, it must wake it with that value after about
 * that long, the waiter having used a small part of it on a CPU. ROCr
 * spins 200 us before it sleeps in AMDKFD_IOC_WAIT_EVENTS; if the event
 * is gone, the ioctl fails at once and ROCr's loop spins the whole time.
 */
static const char *wake_on(const char *what, hsa_signal_t sig, hsa_signal_value_t want,
			   char *info, size_t len)
{
	struct wake w = { .sig = sig, .want = want };
	size_t used = strlen(info);
	pthread_t t;

	if (!amd_signal(sig)->event_id || !kfd_page_mapped(amd_signal(sig)->event_mailbox_ptr))
		return "a signal has no KFD event in a /dev/kfd mapping";
	if (pthread_create(&t, NULL, wake_waiter, &w))
		return "pthread_create failed";
	while (!atomic_load(&w.waiting))
		sleep_ms(1);
	sleep_ms(300);
	hsa_signal_store_screlease(sig, want);
	pthread_join(t, NULL);
	snprintf(info + used, len - used, "%s%s woken after %llu ms, %llu ms on a CPU",
		 used ? ", " : "", what, (unsigned long long)w.wall_ns / 1000000,
		 (unsigned long long)w.cpu_ns / 1000000);
	if (w.got != want)
		return "the waiter was not woken by the store (timed out)";
	if (w.wall_ns < 250000000ull)
		return "the waiter returned before the store";
	if (w.cpu_ns * 4 > w.wall_ns)
		return "the waiter spun instead of sleeping on its KFD event";
	return NULL;
}

/*
 * The signal made for these checks at start (its event carried by the
 * dump) and a new one (a new KFD event of the restored process, or one
 * from ROCr's event pool) each wake a sleeping waiter.
 */
static const char *check_wake(int n, char *info, size_t len)
{
	hsa_signal_t fresh;
	const char *why;

	why = wake_on("old", probe, n, info, len);
	if (why)
		return why;
	if (hsa_signal_create(0, 0, NULL, &fresh))
		return "hsa_signal_create failed";
	why = wake_on("new", fresh, 1, info, len);
	hsa_signal_destroy(fresh);
	return why;
}

static const char *check_kfd(void)
{
	uint32_t major, minor;
	const char *why = kfd_check_fd(kfd_fd, &major, &minor);

	if (why)
		return why;
	if (major != 1)
		return "the kernel's KFD interface is not version 1";
	if (amd_signal(ping)->event_id != ping_event || amd_signal(pong)->event_id != pong_event)
		return "a signal's KFD event id changed";
	if (!kfd_page_mapped(amd_signal(ping)->event_mailbox_ptr) ||
	    !kfd_page_mapped(amd_signal(pong)->event_mailbox_ptr))
		return "a signal's event mailbox is not in a /dev/kfd mapping";
	return NULL;
}

static const char *check_values(void)
{
	long n = atomic_load(&beats);
	long p = hsa_signal_load_scacquire(ping), q = hsa_signal_load_scacquire(pong);
	uint32_t i;

	/* The signaler counts a beat after pong N, then pings N + 1 */
	if (q < n || q > n + 1 || p < q || p > q + 1)
		return "the signal values are not where the beats left them";
	for (i = 0; i < BUF_SIZE; i++)
		if (buf[i] != (unsigned char)(i * 7))
			return "the pool buffer's contents changed";
	return NULL;
}

/* The beats and the async handler go on: 3 more beats within 5 s. */
static const char *check_beating(void)
{
	long b = atomic_load(&beats), a = atomic_load(&async_calls);
	int i;

	for (i = 0; i < 50 && atomic_load(&beats) < b + 3; i++)
		sleep_ms(100);
	if (atomic_load(&beats) < b + 3)
		return "the beats stopped";
	if (atomic_load(&async_calls) <= a)
		return "the async handler is no longer called";
	return NULL;
}

static void self_check(int n)
{
	struct census now;
	char info[160] = "";
	const char *why;

	if (take_census(&now))
		why = "iterating the agents and pools failed";
	else
		why = census_differs(&start, &now);
	if (!why)
		why = check_kfd();
	if (!why)
		why = check_values();
	if (!why)
		why = check_wake(n, info, sizeof(info));
	if (!why)
		why = check_beating();
	if (atomic_load(&failed))
		why = "a beat failed";
	if (why)
		printf("verdict %d: FAIL: %s%s%s\n", n, why, info[0] ? "; " : "", info);
	else
		printf("verdict %d: PASS: %u agents as at start, kfd fd %d, events %u and %u in the /dev/kfd page, %s, beat %ld\n",
		       n, now.nagents, kfd_fd, ping_event, pong_event, info, atomic_load(&beats));
}

static int make_signals(void)
{
	if (hsa_signal_create(0, 0, NULL, &ping) || hsa_signal_create(0, 0, NULL, &pong) ||
	    hsa_signal_create(0, 0, NULL, &tick) || hsa_signal_create(0, 0, NULL, &probe))
		return -ENOMEM;
	ping_event = amd_signal(ping)->event_id;
	pong_event = amd_signal(pong)->event_id;
	printf("signals: ping event %u, pong event %u, tick event %u (interrupt signals)\n",
	       ping_event, pong_event, amd_signal(tick)->event_id);
	if (!ping_event || !pong_event || !kfd_page_mapped(amd_signal(ping)->event_mailbox_ptr))
		return -ENOENT;
	if (hsa_amd_signal_async_handler(tick, HSA_SIGNAL_CONDITION_NE, 0, on_tick, NULL))
		return -EINVAL;
	return 0;
}

/*
 * A buffer from the first agent's first pool that allows allocation, as
 * applications take host memory. With no GPU this is hsaKmtAllocMemory
 * on the CPU node, an anonymous mapping (ROCT rocm-6.2.4 src/fmm.c,
 * fmm_allocate_host_cpu) that ROCr does not pin, there being no GPU to
 * map it to (ROCR rocm-6.1.2 amd_memory_region.cpp,
 * MemoryRegion::AllocateImpl).
 */
static int alloc_buffer(void)
{
	uint32_t i;

	if (!start.agents[0].has_alloc_pool)
		return -ENOENT;
	if (hsa_amd_memory_pool_allocate(start.agents[0].alloc_pool, BUF_SIZE, 0, (void **)&buf))
		return -ENOMEM;
	for (i = 0; i < BUF_SIZE; i++)
		buf[i] = i * 7;
	return 0;
}

static int setup(void)
{
	hsa_status_t st;
	int ret;

	st = hsa_init();
	if (st) {
		printf("hsa_init failed: %s\n", status_str(st));
		return 4;
	}
	if (hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &ticks_per_ms))
		return 1;
	ticks_per_ms /= 1000;
	st = take_census(&start);
	if (st || !start.nagents) {
		printf("iterating agents and pools failed: %s\n", status_str(st));
		return 1;
	}
	print_census(&start);
	kfd_fd = kfd_find_fd();
	printf("kfd fd %d\n", kfd_fd);
	ret = alloc_buffer();
	if (!ret)
		ret = make_signals();
	if (kfd_fd < 0 || ret) {
		printf("setup failed: kfd fd %d, %s\n", kfd_fd, strerror(-ret));
		return 1;
	}
	return 0;
}

int main(void)
{
	struct timespec half = { 0, 500000000 };
	pthread_t threads[2];
	long shown = -1;
	int checks = 0, ret;
	sigset_t usr1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Blocked in every thread, ROCr's included: main takes it below */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	ret = setup();
	if (ret)
		return ret;
	printf("pid %d: beating\n", getpid());
	if (pthread_create(&threads[0], NULL, waiter, NULL) ||
	    pthread_create(&threads[1], NULL, signaler, NULL))
		return 1;
	while (!atomic_load(&failed)) {
		if (sigtimedwait(&usr1, NULL, &half) == SIGUSR1)
			self_check(++checks);
		if (atomic_load(&beats) != shown) {
			shown = atomic_load(&beats);
			printf("beat %ld async %ld\n", shown, atomic_load(&async_calls));
		}
	}
	return 1;
}
