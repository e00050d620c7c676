/* The watchdog: a thread of the tracer's own that looks at the waits the
 * program's threads announced (wait_state.h) and reports the ones that
 * last too long: RCU stalls and hung tasks (hang_reports.c).
 *
 * It exists only in a process where something blocked: it is started by
 * the first announced wait (a lock acquisition that waited a second, or a
 * grace-period wait), never before. The program can see it as one more
 * thread (named lockdep-watch) in /proc/self/task; nothing else: it blocks
 * every signal (a process-directed signal never lands on it), it is not
 * listed with the program's threads, takes none of the program's locks
 * (all its own calls run as the tracer's), and a forked child starts its
 * own when it needs one.
 *
 * Starting a thread allocates (its stack, glibc's TLS vector): never from
 * a wait inside the allocator. When the waiting thread holds a lock taken
 * in the module that provides malloc (jemalloc's arenas, a program
 * linking its allocator statically), or waits for one there, the start is
 * left to the next wait announced elsewhere.
 *
 * When nothing waits it sleeps on a futex without timeout; the first
 * announced wait wakes it (the only syscall on the announcing path, and
 * only when it sleeps). While waits are announced it looks every second
 * (a quarter of the smallest timeout when that is shorter).
 *
 * A call that the kernel refuses in a process of more than one thread
 * (a user namespace, another mount namespace joined) stops it first
 * (watchdog_stop(), intercept_namespaces.c): the next announced wait
 * starts it again. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include "runtime/sandbox.h"
#include "watchdog/watchdog.h"
#include "unwind/backtrace.h"
#include "watchdog/hang_reports.h"
#include "report/lock_stat.h"
#include "base/options.h"
#include "runtime/real_functions.h"
#include "unwind/stack_depot.h"
#include "runtime/thread_registry.h"
#include "base/raw_syscall.h"

int hung_task_checks, stall_checks;

/* The waiting call's stack, kept for the report. */
#define WAIT_FRAMES 16

static int waiters;            /* announced waits in progress */
static int wake_word;          /* futex: bumped when waits appear */
static int sleeping;           /* the watchdog waits on wake_word */
static int started;            /* 0 no, 1 being started, 2 running, 3 being stopped */
static int stop_word;          /* futex: 1 asks the watchdog to end */
static pthread_t watchdog_thread;
static pid_t watchdog_tid;
static struct hang_watch *watch;   /* kept across a stop and a new start */

/* The module providing malloc: [lo, hi) of its mapped segments. */
static uintptr_t allocator_lo, allocator_hi;

static int find_allocator(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	uintptr_t target = (uintptr_t)arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (start < lo)
			lo = start;
		if (start + ph->p_memsz > hi)
			hi = start + ph->p_memsz;
	}
	if (target >= lo && target < hi) {
		allocator_lo = lo;
		allocator_hi = hi;
		return 1;
	}
	return 0;
}

void watchdog_setup(void)
{
	hung_task_checks = tracer_options.hung_task_timeout > 0;
	stall_checks = tracer_options.stall_timeout > 0;
	if (hung_task_checks || stall_checks)
		dl_iterate_phdr(find_allocator, (void *)(uintptr_t)next_malloc());
}

static int in_allocator(uintptr_t ip)
{
	return ip >= allocator_lo && ip < allocator_hi;
}

static long futex(int *word, int op, int value)
{
	return raw_syscall(SYS_futex, word, op, value);
}

/* ---- the thread ----------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Sleeps ns, or less when asked to end (watchdog_stop()). */
static void sleep_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;
	for (uint64_t now = now_ns(); now < end && !__atomic_load_n(&stop_word, __ATOMIC_SEQ_CST); now = now_ns()) {
		struct timespec t = { (time_t)((end - now) / 1000000000u), (long)((end - now) % 1000000000u) };
		raw_futex_wait(&stop_word, 0, &t);
	}
}

/* How much later than asked the watchdog may wake before the time is
 * taken as the process's not running (a loaded machine is late by
 * milliseconds; a stopped process by as long as it was stopped). */
#define PAUSE_SLACK_NS 1000000000ull

/* How often to look while waits are announced. */
static uint64_t poll_interval(void)
{
	uint64_t smallest = UINT64_MAX;
	if (hung_task_checks)
		smallest = (uint64_t)tracer_options.hung_task_timeout * 1000000000u;
	if (stall_checks && (uint64_t)tracer_options.stall_timeout * 1000000000u < smallest)
		smallest = (uint64_t)tracer_options.stall_timeout * 1000000000u;
	uint64_t interval = smallest / 4;
	return interval < 1000000000u ? (interval > 50000000u ? interval : 50000000u) : 1000000000u;
}

static void *watchdog_main(void *arg)
{
	(void)arg;
	struct thread_state *ts = thread_state();
	ts->in_tracer = 1;   /* for good: nothing it does is the program's */
	__atomic_store_n(&watchdog_tid, raw_gettid(), __ATOMIC_RELEASE);
	raw_syscall(SYS_prctl, PR_SET_NAME, "lockdep-watch");
	if (!watch)
		watch = hang_watch_new();
	while (!__atomic_load_n(&stop_word, __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&sleeping, 1, __ATOMIC_SEQ_CST);
		int word = __atomic_load_n(&wake_word, __ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&waiters, __ATOMIC_SEQ_CST) && !__atomic_load_n(&stop_word, __ATOMIC_SEQ_CST))
			futex(&wake_word, FUTEX_WAIT_PRIVATE, word);
		__atomic_store_n(&sleeping, 0, __ATOMIC_SEQ_CST);
		uint64_t interval = poll_interval(), before = now_ns();
		sleep_ns(interval);
		uint64_t after = now_ns();
		/* Woken a second or more later than asked: the process was
		 * stopped (SIGSTOP, a debugger) or not given a processor; its
		 * threads waited for nothing meanwhile. */
		if (watch && after - before > interval + PAUSE_SLACK_NS)
			hang_watch_note_pause(watch, after, after - before - interval);
		if (watch && !__atomic_load_n(&stop_word, __ATOMIC_SEQ_CST))
			hang_watch_scan(watch, ts, after);
	}
	return NULL;
}

/* The real calls, not the tracer's own wrappers: the watchdog is no thread
 * of the program's (pthread_sigmask(), unlike a raw rt_sigprocmask, keeps
 * glibc's internal signals unblocked, which setuid() needs). */
INTERPOSE(pthread_create)
INTERPOSE(pthread_sigmask)

/* Starts the thread with every signal blocked (it inherits the mask). */
static void start_watchdog(void)
{
	int expected = 0;
	if (!__atomic_compare_exchange_n(&started, &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	sigset_t all, saved;
	sigfillset(&all);
	REAL(pthread_sigmask)(SIG_SETMASK, &all, &saved);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	__atomic_store_n(&watchdog_tid, 0, __ATOMIC_RELAXED);
	/* Joinable: watchdog_stop() waits for its end. */
	int ret = REAL(pthread_create)(&watchdog_thread, &attr, watchdog_main, NULL);
	pthread_attr_destroy(&attr);
	REAL(pthread_sigmask)(SIG_SETMASK, &saved, NULL);
	__atomic_store_n(&started, ret == 0 ? 2 : 0, __ATOMIC_RELEASE);
}

/* Whether this thread may allocate now: it waits for no lock of the
 * allocator's, and holds none. */
static int may_allocate(const struct thread_state *ts, uintptr_t ip)
{
	if (in_allocator(ip))
		return 0;
	for (unsigned i = 0; i < ts->depth; i++)
		if (ts->held[i].kind != HELD_NONE && ts->held[i].kind != HELD_RCU_READ &&
		    in_allocator(ts->held[i].acquire_ip))
			return 0;
	return 1;
}

void wait_begin(struct thread_state *ts, enum wait_kind kind, const void *object, uint8_t lock_kind,
		uint8_t flavor, int barrier, uintptr_t ip, uint64_t since)
{
	tracer_enter(ts);
	uintptr_t frames[WAIT_FRAMES];
	size_t n = backtrace_capture(frames, WAIT_FRAMES);
	struct wait_state *w = &ts->wait;
	__atomic_store_n(&w->seq, w->seq + 1, __ATOMIC_RELAXED);
	w->lock_kind = lock_kind;
	w->flavor = flavor;
	w->barrier = (uint8_t)barrier;
	w->object = object;
	w->ip = ip;
	w->since = since;
	w->stack = stack_depot_save(frames, n);
	__atomic_store_n(&w->kind, (uint8_t)kind, __ATOMIC_RELEASE);
	if (__atomic_fetch_add(&waiters, 1, __ATOMIC_SEQ_CST) == 0) {
		__atomic_fetch_add(&wake_word, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&sleeping, __ATOMIC_SEQ_CST))
			futex(&wake_word, FUTEX_WAKE_PRIVATE, 1);
	}
	/* Not from inside a seccomp sandbox: starting a thread there may be
	 * what kills the process (sandbox.h). One started before watches on,
	 * outside it. */
	if (__atomic_load_n(&started, __ATOMIC_ACQUIRE) == 0 && !in_sandbox() && may_allocate(ts, ip))
		start_watchdog();
	tracer_leave(ts);
}

void wait_end(struct thread_state *ts)
{
	__atomic_store_n(&ts->wait.kind, WAIT_NONE, __ATOMIC_RELEASE);
	__atomic_fetch_sub(&waiters, 1, __ATOMIC_SEQ_CST);
}

int watchdog_stop(void)
{
	/* Not inside a seccomp sandbox: the stop's own calls (futex, tgkill,
	 * sched_yield) may be what its filter kills for. */
	int expected = 2;
	if (in_sandbox() ||
	    !__atomic_compare_exchange_n(&started, &expected, 3, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 0;
	struct thread_state *ts = thread_state();
	tracer_enter(ts);
	int saved_errno = errno;
	__atomic_store_n(&stop_word, 1, __ATOMIC_SEQ_CST);
	futex(&stop_word, FUTEX_WAKE_PRIVATE, 1);
	__atomic_fetch_add(&wake_word, 1, __ATOMIC_SEQ_CST);
	futex(&wake_word, FUTEX_WAKE_PRIVATE, 1);
	pthread_join(watchdog_thread, NULL);
	/* The kernel clears the thread's id (what the join waits for) before
	 * it takes the thread out of the process: wait for that too, or the
	 * call the program makes next still sees two threads. */
	pid_t pid = getpid(), tid = __atomic_load_n(&watchdog_tid, __ATOMIC_ACQUIRE);
	for (int i = 0; tid && i < 1000000 && raw_syscall(SYS_tgkill, pid, tid, 0) == 0; i++)
		sched_yield();
	__atomic_store_n(&stop_word, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&started, 0, __ATOMIC_RELEASE);
	errno = saved_errno;
	tracer_leave(ts);
	return 1;
}

void watchdog_fork_child(void)
{
	/* The watchdog did not come along; the forking thread waits for
	 * nothing. */
	__atomic_store_n(&started, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&waiters, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&sleeping, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&stop_word, 0, __ATOMIC_RELAXED);
	watch = NULL;   /* the parent's threads' waits: a new one */
	thread_state()->wait.kind = WAIT_NONE;
}
