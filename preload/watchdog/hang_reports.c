/* RCU stall warnings and hung-task reports, from the watchdog's looks at
 * the threads' announced waits (see watchdog.c and wait_state.h).
 *
 * Each look copies every thread's held locks and wait under the registry
 * lock (thread_registry_snapshot()), then decides and prints from the
 * copy: nothing of another thread is read once the lock is dropped.
 *
 * A hung task is reported once per blocked acquisition. A stall is
 * reported when the grace period has waited stall_timeout, then again
 * after three times that, nine times, ... (the kernel's back-off), and
 * never once it is over. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include "unwind/backtrace.h"
#include "watchdog/hang_reports.h"
#include "classes/lock_classes.h"
#include "base/options.h"
#include "report/report.h"
#include "unwind/stack_depot.h"
#include "runtime/thread_registry.h"
#include "rcu/urcu_reader_state.h"
#include "runtime/wait_state.h"
#include "base/raw_syscall.h"

/* A wait already reported, known by its thread and sequence number. */
struct watched_wait {
	const struct thread_state *ts;
	uint32_t seq;
	uint8_t seen;            /* still waiting at the last look */
	uint64_t next_report;    /* stalls: CLOCK_MONOTONIC ns */
	uint64_t interval;
};

#define MAX_WATCHED_WAITS 1024

/* Times the process was stopped, oldest first. When the log is full the
 * two oldest become one (resumed at the later): a wait that began between
 * them is then credited with both, so a stall is reported late, never
 * one that was not. */
#define MAX_PAUSES 16
struct pause {
	uint64_t resumed_at, length;
};

struct hang_watch {
	struct watched_wait waits[MAX_WATCHED_WAITS];
	struct thread_snapshot *threads;
	size_t capacity;
	struct pause pauses[MAX_PAUSES];
	unsigned nr_pauses;
};

static void *map_pages(size_t size)
{
	void *p = raw_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

struct hang_watch *hang_watch_new(void)
{
	return map_pages(sizeof(struct hang_watch));
}

static struct watched_wait *watched(struct hang_watch *w, const struct thread_snapshot *s, int add)
{
	struct watched_wait *free_slot = NULL;
	for (size_t i = 0; i < MAX_WATCHED_WAITS; i++) {
		struct watched_wait *e = &w->waits[i];
		if (e->ts == s->ts && e->seq == s->wait.seq && e->ts)
			return e;
		if (!e->ts && !free_slot)
			free_slot = e;
	}
	if (!add || !free_slot)
		return NULL;
	free_slot->ts = s->ts;
	free_slot->seq = s->wait.seq;
	return free_slot;
}

/* ---- what the threads copies say ------------------------------------------ */

static const char *lock_kind_name(uint8_t kind)
{
	switch (kind) {
	case HELD_MUTEX: return "mutex";
	case HELD_RWLOCK_READ: return "rwlock-read";
	case HELD_RWLOCK_WRITE: return "rwlock-write";
	case HELD_SPIN: return "spinlock";
	default: return "lock";
	}
}

static const char *lock_type_name(uint8_t kind)
{
	switch (kind) {
	case HELD_MUTEX: return "pthread_mutex_t";
	case HELD_SPIN: return "pthread_spinlock_t";
	default: return "pthread_rwlock_t";
	}
}

/* The read sides liburcu counts beyond the ones the wrappers saw. */
static void inline_nesting_of(const struct thread_snapshot *s, unsigned *nesting)
{
	for (int f = 0; f < NR_URCU_FLAVORS; f++) {
		nesting[f] = 0;
		if (!(urcu_readable_flavors & (1u << f)) || f == FLAVOR_qsbr)
			continue;
		unsigned counted = (unsigned)(s->urcu_ctr[f] & ((1ul << (sizeof(unsigned long) * 4)) - 1));
		if (counted < (1u << 30) && counted > s->nesting[f])
			nesting[f] = counted - s->nesting[f];
	}
}

static int holds_anything(const struct thread_snapshot *s)
{
	unsigned nesting[NR_URCU_FLAVORS];
	inline_nesting_of(s, nesting);
	for (int f = 0; f < NR_URCU_FLAVORS; f++)
		if (nesting[f])
			return 1;
	for (unsigned i = 0; i < s->depth; i++)
		if (s->held[i].kind != HELD_NONE)
			return 1;
	return s->untracked != 0;
}

static void task_of(const struct thread_snapshot *s, char *buf, size_t size)
{
	char comm[REPORT_COMM_MAX];
	report_thread_comm(s->tid, comm, sizeof(comm));
	snprintf(buf, size, "%s/%d", comm, s->tid);
}

static void print_held_locks_of(const struct thread_snapshot *s)
{
	char task[REPORT_TASK_MAX];
	unsigned nesting[NR_URCU_FLAVORS];
	task_of(s, task, sizeof(task));
	inline_nesting_of(s, nesting);
	report_held_locks_of(task, s->held, s->depth, s->untracked, nesting);
}

static void print_stack_of(const struct thread_snapshot *s)
{
	char comm[REPORT_COMM_MAX];
	report_thread_comm(s->tid, comm, sizeof(comm));
	const uintptr_t *frames = NULL;
	size_t n = s->wait.stack ? stack_depot_fetch(s->wait.stack, &frames) : 0;
	report_backtrace_of(s->tid, comm, frames, n);
}

/* Where a stalled reader is now, as the kernel's stall warning dumps the
 * stalled task: taken from the thread on demand, when it is blocked in the
 * kernel (which is where a reader that holds up a grace period for seconds
 * usually is: asleep, waiting for a lock or for I/O). */
static void print_stack_now(const struct thread_snapshot *s)
{
	char task[REPORT_TASK_MAX];
	task_of(s, task, sizeof(task));
	uintptr_t frames[32];
	const char *why;
	size_t n = backtrace_of_blocked_thread(s->tid, frames, sizeof(frames) / sizeof(frames[0]), &why);
	if (!n) {
		report_printf("%s's stack now: not known (%s)\n", task, why);
		return;
	}
	if (n > (size_t)tracer_options.max_frames)
		n = (size_t)tracer_options.max_frames;
	report_printf("%s's stack now:\n", task);
	for (size_t i = 0; i < n; i++) {
		report_printf("       ");
		report_symbolized_ip(frames[i]);
		report_printf("\n");
	}
}

/* The kernel's debug_show_all_locks(). */
static void show_all_locks(const struct thread_snapshot *all, size_t n)
{
	report_printf("\nShowing all locks held in the system:\n");
	for (size_t i = 0; i < n; i++)
		if (holds_anything(&all[i]))
			print_held_locks_of(&all[i]);
	report_printf("\n=============================================\n");
}

static const struct thread_snapshot *by_tid(const struct thread_snapshot *all, size_t n, int tid)
{
	for (size_t i = 0; tid > 0 && i < n; i++)
		if (all[i].tid == tid)
			return &all[i];
	return NULL;
}

static double seconds(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* ---- hung tasks -------------------------------------------------------------- */

struct hang_job {
	const struct thread_snapshot *all;
	size_t n;
	const struct thread_snapshot *subject;
	uint64_t now;
};

/* glibc records who holds a mutex, and which thread write-holds an rwlock. */
static int lock_owner(const struct wait_state *w)
{
	if (w->lock_kind == HELD_MUTEX)
		return __atomic_load_n(&((const pthread_mutex_t *)w->object)->__data.__owner, __ATOMIC_RELAXED) &
		       0x3fffffff;   /* FUTEX_TID_MASK */
	if (w->lock_kind == HELD_RWLOCK_READ || w->lock_kind == HELD_RWLOCK_WRITE)
		return (int)__atomic_load_n(&((const pthread_rwlock_t *)w->object)->__data.__cur_writer,
					    __ATOMIC_RELAXED);
	return 0;
}

/* Following each blocked thread to the holder of what it waits for: back
 * at the subject, the threads wait for each other for good. */
static void print_wait_cycle(const struct hang_job *job)
{
	const struct thread_snapshot *chain[16];
	size_t n = 0;
	const struct thread_snapshot *t = job->subject;
	while (t && t->wait.kind == WAIT_LOCK && n < sizeof(chain) / sizeof(chain[0])) {
		chain[n++] = t;
		t = by_tid(job->all, job->n, lock_owner(&t->wait));
		if (t == job->subject)
			break;
	}
	if (t != job->subject || n < 2)
		return;
	report_printf("the threads wait for each other:\n ");
	for (size_t i = 0; i <= n; i++) {
		char task[REPORT_TASK_MAX];
		task_of(chain[i % n], task, sizeof(task));
		report_printf("%s%s", i ? " -> " : "", task);
	}
	report_printf("\n *** DEADLOCK ***\n\n");
}

static void print_hung_task(struct thread_state *ts, void *arg)
{
	(void)ts;
	const struct hang_job *job = arg;
	const struct thread_snapshot *s = job->subject;
	const struct wait_state *w = &s->wait;
	char task[REPORT_TASK_MAX], name[256];
	task_of(s, task, sizeof(task));
	report_lock_name(w->object, lock_class_peek(w->object), lock_type_name(w->lock_kind), name, sizeof(name));
	report_record_site(w->ip, NULL, 0);
	report_record_lock("acquiring", w->object, name, lock_kind_name(w->lock_kind), 0);
	report_printf("%s is blocked acquiring lock:\n", task);
	report_printf("%016lx (%s){%s}, at: ", (unsigned long)w->object, name, lock_kind_name(w->lock_kind));
	report_symbolized_ip(w->ip);
	report_printf("\nfor %.1f s.\n\n", seconds(job->now - w->since));

	int owner_tid = lock_owner(w);
	const struct thread_snapshot *owner = by_tid(job->all, job->n, owner_tid);
	if (owner) {
		char owner_task[REPORT_TASK_MAX];
		task_of(owner, owner_task, sizeof(owner_task));
		const struct held_lock *held = NULL;
		for (unsigned i = 0; i < owner->depth && !held; i++)
			if (owner->held[i].lock == w->object && owner->held[i].kind != HELD_NONE)
				held = &owner->held[i];
		report_printf("which is held by %s", owner_task);
		if (held) {
			report_printf(", taken at: ");
			report_symbolized_ip(held->acquire_ip);
			report_record_lock("holding", w->object, name, lock_kind_name(held->kind), held->acquire_ip);
		}
		report_printf("\n");
		if (owner->wait.kind == WAIT_LOCK) {
			char other[256];
			report_lock_name(owner->wait.object, lock_class_peek(owner->wait.object),
					 lock_type_name(owner->wait.lock_kind), other, sizeof(other));
			report_printf("which is itself blocked acquiring %016lx (%s), for %.1f s\n",
				      (unsigned long)owner->wait.object, other, seconds(job->now - owner->wait.since));
		}
		report_printf("\n");
		print_held_locks_of(owner);
		report_printf("\n");
	} else if (owner_tid > 0) {
		report_printf("which is held by thread %d, which the tracer does not follow\n\n", owner_tid);
	} else {
		report_printf("whose holder is not known (a %s records none%s)\n\n", lock_type_name(w->lock_kind),
			      w->lock_kind == HELD_RWLOCK_READ || w->lock_kind == HELD_RWLOCK_WRITE ? " but a writer" : "");
	}
	print_wait_cycle(job);
	print_held_locks_of(s);
	/* the stack last, as in every report (the readers of logs rely on it) */
	show_all_locks(job->all, job->n);
	print_stack_of(s);
}

static void report_hung_task(struct thread_state *ts, const struct thread_snapshot *all, size_t n,
			     const struct thread_snapshot *s, uint64_t now)
{
	char comm[REPORT_COMM_MAX], title[160];
	report_thread_comm(s->tid, comm, sizeof(comm));
	snprintf(title, sizeof(title), report_title_format[REPORT_TITLE_HUNG_TASK], comm, s->tid,
		 tracer_options.hung_task_timeout);
	struct hang_job job = { all, n, s, now };
	report_next_about(s->tid);
	report_emit(ts, REPORT_HUNG_TASK, 0, title, print_hung_task, &job);
}

/* ---- RCU stalls ---------------------------------------------------------------- */

/* Whether s holds up a grace period of liburcu flavor f; *entered is the
 * outermost read side it was seen to begin (NULL: not seen, inlined). */
static int stalls(const struct thread_snapshot *s, enum rcu_flavor f, unsigned long gp,
		  const struct held_lock **entered)
{
	*entered = NULL;
	for (unsigned i = 0; i < s->depth && !*entered; i++)
		if (s->held[i].kind == HELD_RCU_READ && held_underlying(&s->held[i]) == f)
			*entered = &s->held[i];
	if ((urcu_readable_flavors & (1u << f)) && gp)
		return urcu_reader_blocks_grace_period(s->urcu_ctr[f], gp, f);
	/* liburcu's state unknown (a liburcu loaded late): the sections seen */
	return *entered != NULL || (f == FLAVOR_qsbr && s->registered[f] == 1);
}

static void print_stall(struct thread_state *ts, void *arg)
{
	(void)ts;
	const struct hang_job *job = arg;
	const struct thread_snapshot *waiter = job->subject;
	enum rcu_flavor f = (enum rcu_flavor)waiter->wait.flavor;
	unsigned long gp = urcu_gp_ctr(f);
	double waited = seconds(job->now - waiter->wait.since);
	const struct thread_snapshot *stalled[64];
	size_t nr_stalled = 0;
	report_record_site(waiter->wait.ip, NULL, 0);
	for (size_t i = 0; i < job->n; i++) {
		const struct thread_snapshot *s = &job->all[i];
		const struct held_lock *entered;
		if (s == waiter || !stalls(s, f, gp, &entered))
			continue;
		char task[REPORT_TASK_MAX];
		task_of(s, task, sizeof(task));
		uintptr_t began = entered ? entered->acquire_ip : 0;
		if (f == FLAVOR_qsbr) {
			/* Where its protection began: the last of these the
			 * tracer saw (one inlined by _LGPL_SOURCE it does not) */
			static const char *const since[] = {
				[QSBR_SINCE_REGISTERED] = "rcu_register_thread()",
				[QSBR_SINCE_ONLINE] = "rcu_thread_online()",
				[QSBR_SINCE_QUIESCENT] = "rcu_quiescent_state()",
			};
			report_printf("\t%s: online, no quiescent state for at least %.1f s", task, waited);
			if (s->qsbr_since_ip && s->qsbr_since_what && s->qsbr_since_what <= QSBR_SINCE_QUIESCENT) {
				report_printf(", last seen: %s at ", since[s->qsbr_since_what]);
				report_symbolized_ip(s->qsbr_since_ip);
				began = s->qsbr_since_ip;
			}
			report_printf("\n");
		} else {
			report_printf("\t%s: in a read-side critical section for at least %.1f s, entered at ", task,
				      waited);
			if (entered) {
				report_symbolized_ip(entered->acquire_ip);
				if (held_flavor(entered) != f)
					report_printf(" (%s)", flavor_lock_name[held_flavor(entered)]);
			} else {
				report_printf("(an inlined read side: where it began is not known)");
			}
			report_printf("\n");
		}
		report_record_lock("stalling", NULL, flavor_lock_name[f], "rcu", began);
		if (nr_stalled < sizeof(stalled) / sizeof(stalled[0]))
			stalled[nr_stalled++] = s;
	}
	if (!nr_stalled)
		report_printf("\t(no reader found in a read-side critical section begun before the grace period)\n");
	char waiter_task[REPORT_TASK_MAX];
	task_of(waiter, waiter_task, sizeof(waiter_task));
	report_printf("(detected by %s, t=%.1f s waiting for a grace period started %.1f s ago, in ", waiter_task,
		      waited, waited);
	report_symbolized_ip(waiter->wait.ip);
	report_printf(")\n");
	for (size_t i = 0; i < nr_stalled; i++) {
		report_printf("\n");
		print_held_locks_of(stalled[i]);
		print_stack_now(stalled[i]);
	}
	print_stack_of(waiter);
}

static void report_stall(struct thread_state *ts, const struct thread_snapshot *all, size_t n,
			 const struct thread_snapshot *waiter, uint64_t now)
{
	char title[96];
	snprintf(title, sizeof(title), report_title_format[REPORT_TITLE_RCU_STALL], flavor_name[waiter->wait.flavor]);
	struct hang_job job = { all, n, waiter, now };
	report_next_about(waiter->tid);
	report_emit(ts, REPORT_RCU_STALL, 0, title, print_stall, &job);
}

/* liburcu's reader ctr of each flavor, read while the thread is still
 * listed (its TLS valid). */
static void snapshot_urcu_ctr(const struct thread_state *t, struct thread_snapshot *s)
{
	for (int f = 0; f < NR_URCU_FLAVORS; f++)
		s->urcu_ctr[f] = urcu_reader_ctr_of(t, (enum rcu_flavor)f);
}

/* ---- a look ---------------------------------------------------------------------- */

static int copy_threads(struct hang_watch *w, struct thread_state *self, size_t *n)
{
	size_t want = thread_registry_count() + 16;
	if (want > w->capacity) {
		if (w->threads)
			raw_munmap(w->threads, w->capacity * sizeof(*w->threads));
		w->capacity = want * 2;
		w->threads = map_pages(w->capacity * sizeof(*w->threads));
		if (!w->threads) {
			w->capacity = 0;
			return 0;
		}
	}
	*n = thread_registry_snapshot(self, w->threads, w->capacity, snapshot_urcu_ctr);
	return 1;
}

void hang_watch_note_pause(struct hang_watch *w, uint64_t resumed_at, uint64_t length)
{
	if (w->nr_pauses == MAX_PAUSES) {
		w->pauses[1].length += w->pauses[0].length;
		memmove(&w->pauses[0], &w->pauses[1], (MAX_PAUSES - 1) * sizeof(w->pauses[0]));
		w->nr_pauses--;
	}
	w->pauses[w->nr_pauses++] = (struct pause){ resumed_at, length };
	/* A stall reported already is due again as much later. */
	for (size_t i = 0; i < MAX_WATCHED_WAITS; i++)
		if (w->waits[i].ts)
			w->waits[i].next_report += length;
}

/* The time since `since` the process was stopped. */
static uint64_t paused_after(const struct hang_watch *w, uint64_t since)
{
	uint64_t total = 0;
	for (unsigned i = 0; i < w->nr_pauses; i++)
		if (w->pauses[i].resumed_at > since)
			total += w->pauses[i].length;
	return total;
}

void hang_watch_scan(struct hang_watch *w, struct thread_state *self, uint64_t now)
{
	size_t n;
	if (!copy_threads(w, self, &n))
		return;
	/* A wait begins, in the copies, later by the time the process spent
	 * stopped since: the reports say how long it waited while running. */
	for (size_t i = 0; i < n; i++)
		if (w->threads[i].wait.kind != WAIT_NONE)
			w->threads[i].wait.since += paused_after(w, w->threads[i].wait.since);
	for (size_t i = 0; i < MAX_WATCHED_WAITS; i++)
		w->waits[i].seen = 0;
	/* 0: not watched (the timeout option is 0) */
	uint64_t hung_after = (uint64_t)tracer_options.hung_task_timeout * 1000000000u;
	uint64_t stall_after = (uint64_t)tracer_options.stall_timeout * 1000000000u;
	for (size_t i = 0; i < n; i++) {
		const struct thread_snapshot *s = &w->threads[i];
		if (s->wait.kind == WAIT_NONE || now < s->wait.since)
			continue;
		uint64_t waited = now - s->wait.since;
		struct watched_wait *e = watched(w, s, 0);
		if (e)
			e->seen = 1;
		if (s->wait.kind == WAIT_LOCK && hung_after && waited >= hung_after && !e) {
			/* once per blocked acquisition: never more often than
			 * it can be remembered */
			if ((e = watched(w, s, 1))) {
				e->seen = 1;
				report_hung_task(self, w->threads, n, s, now);
			}
		} else if (s->wait.kind == WAIT_GRACE_PERIOD && stall_after && waited >= stall_after &&
			   (!e || now >= e->next_report)) {
			if (!e && (e = watched(w, s, 1))) {
				e->seen = 1;
				e->interval = stall_after;
				e->next_report = s->wait.since + stall_after;
			}
			if (e) {
				/* the kernel's back-off: 3x the last interval */
				e->interval *= 3;
				e->next_report += e->interval;
				report_stall(self, w->threads, n, s, now);
			}
		}
	}
	/* Waits that ended are forgotten. */
	for (size_t i = 0; i < MAX_WATCHED_WAITS; i++)
		if (!w->waits[i].seen)
			w->waits[i].ts = NULL;
}
