/* Publications to RCU-protected pointers and the locks their updaters
 * held; see check_publication.h for the rules. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include "checks/check_publication.h"
#include "checks/checks.h"
#include "base/options.h"
#include "base/report_kinds.h"
#include "report/report.h"
#include "runtime/log_output.h"
#include "runtime/thread_registry.h"
#include "symbolize/symbolize.h"
#include "unwind/backtrace.h"
#include "unwind/stack_depot.h"

/* Locks kept of each publication: an updater holding more for writing is
 * marked, and its publication never empties a lockset (no false report). */
#define UPDATER_LOCKS 4
/* Frames kept of each publication, for the report of a later one. */
#define UPDATER_FRAMES 12

struct update {
	int tid;                 /* 0: none */
	uint32_t seq;            /* thread_start_seq_now() when it was made */
	uintptr_t ip;            /* the program's call */
	uint32_t stack;          /* stack depot id, 0 when none */
	uint8_t nr_locks;
	uint8_t untracked;       /* it held more locks than kept */
	struct held_lock locks[UPDATER_LOCKS];   /* held for writing */
};

struct published {
	uintptr_t addr;          /* 0: a free slot; never freed once taken */
	int busy;                /* taken with an exchange, never waited for */
	uint8_t shared;          /* two threads publish here: the lockset applies */
	uint8_t nr_common;
	uint8_t common_unknown;  /* both sides held more locks than kept */
	const void *value;       /* what the last publication stored */
	const void *common[UPDATER_LOCKS];   /* the lockset */
	struct update last;      /* the last publication */
	struct update other;     /* the last one by a thread other than last's */
};

static struct published table[MAX_PUBLISHED_POINTERS];

static struct published *slot_of(uintptr_t addr)
{
	uint64_t h = (uint64_t)(addr >> 3) * 0x9E3779B97F4A7C15ull;
	size_t s = (size_t)(h >> 40) & (MAX_PUBLISHED_POINTERS - 1);
	for (size_t i = 0; i < MAX_PUBLISHED_POINTERS; i++, s = (s + 1) & (MAX_PUBLISHED_POINTERS - 1)) {
		uintptr_t cur = __atomic_load_n(&table[s].addr, __ATOMIC_ACQUIRE);
		if (cur == 0 && __atomic_compare_exchange_n(&table[s].addr, &cur, addr, 0, __ATOMIC_ACQ_REL,
							     __ATOMIC_ACQUIRE))
			return &table[s];
		if (cur == addr)
			return &table[s];
	}
	log_output_limit_once("MAX_PUBLISHED_POINTERS too low!",
			      "publications to further RCU-protected pointers are not checked");
	return NULL;
}

static int held_for_writing(const struct held_lock *h)
{
	return h->kind == HELD_MUTEX || h->kind == HELD_RWLOCK_WRITE || h->kind == HELD_SPIN;
}

static void note_update(struct update *u, const struct thread_state *ts, uintptr_t ip, uint32_t stack)
{
	u->tid = ts->tid;
	u->seq = thread_start_seq_now();
	u->ip = ip;
	u->stack = stack;
	u->nr_locks = 0;
	u->untracked = ts->untracked != 0;
	for (unsigned i = 0; i < ts->depth && i < MAX_LOCK_DEPTH; i++) {
		const struct held_lock *h = &ts->held[i];
		if (!held_for_writing(h))
			continue;
		if (u->nr_locks == UPDATER_LOCKS)
			u->untracked = 1;
		else
			u->locks[u->nr_locks++] = *h;
	}
}

static int update_holds(const struct update *u, const void *lock)
{
	for (unsigned i = 0; i < u->nr_locks; i++)
		if (u->locks[i].lock == lock)
			return 1;
	return 0;
}

/* The lockset of a pointer that two threads now publish to: the locks both
 * held, or, when one held more than was kept, the other's (a superset of
 * the common ones: never emptier than the truth). */
static void lockset_start(struct published *p, const struct update *a, const struct update *b)
{
	p->nr_common = 0;
	p->common_unknown = a->untracked && b->untracked;
	if (a->untracked) {
		const struct update *t = a;
		a = b;
		b = t;
	}
	for (unsigned i = 0; i < a->nr_locks; i++)
		if (b->untracked || update_holds(b, a->locks[i].lock))
			p->common[p->nr_common++] = a->locks[i].lock;
}

/* Keeps the locks this publication's updater holds too. */
static void lockset_refine(struct published *p, const struct update *u)
{
	if (u->untracked || p->common_unknown)
		return;
	unsigned kept = 0;
	for (unsigned i = 0; i < p->nr_common; i++)
		if (update_holds(u, p->common[i]))
			p->common[kept++] = p->common[i];
	p->nr_common = (uint8_t)kept;
}

struct publication_report {
	const void *addr;
	uintptr_t ip;
	struct update other;
};

static void print_publication_body(struct thread_state *ts, void *arg)
{
	const struct publication_report *r = arg;
	char name[128], comm[REPORT_COMM_MAX], other_task[REPORT_TASK_MAX];
	report_site(r->ip, NULL, 0);
	report_printf(" rcu_assign_pointer() by concurrent updaters that share no lock!\n");
	report_printf("\nother info that might help us debug this:\n\n");
	if (!tracer_options.symbolize || !symbolize_data((uintptr_t)r->addr, name, sizeof(name)))
		name[0] = 0;
	report_thread_comm(r->other.tid, comm, sizeof(comm));
	snprintf(other_task, sizeof(other_task), "%s/%d", comm, r->other.tid);
	report_printf("%s publishes to the RCU-protected pointer %016lx%s%s%s,\n"
		      "which %s publishes to too, and no lock is held by both: two\n"
		      "publications at once lose one update (its new object leaks, or the old one is\n"
		      "freed twice). Publish under one lock, or with rcu_xchg_pointer() or\n"
		      "rcu_cmpxchg_pointer() and act on the old value it returns.\n\n",
		      report_task_name(), (unsigned long)r->addr, name[0] ? " (" : "", name, name[0] ? ")" : "",
		      other_task);
	report_record_lock("published", r->addr, name[0] ? name : "RCU-protected pointer", "pointer", r->other.ip);
	report_held_locks(ts);
	report_printf("\nthe other updater, %s, published to it last at:\n", other_task);
	const uintptr_t *frames = &r->other.ip;
	size_t n = r->other.stack ? stack_depot_fetch(r->other.stack, &frames) : 0;
	if (!n) {
		frames = &r->other.ip;
		n = 1;
	}
	if (n > (size_t)tracer_options.max_frames)
		n = (size_t)tracer_options.max_frames;
	for (size_t i = 0; i < n; i++) {
		report_printf("       ");
		report_symbolized_ip(frames[i]);
		report_printf("\n");
	}
	report_printf("holding:\n");
	report_held_locks_as("updater");
	report_held_locks_of(other_task, r->other.locks, r->other.nr_locks, r->other.untracked, NULL);
	report_backtrace();
}

void check_publication(struct thread_state *ts, void *const *addr, const void *value, uintptr_t ip)
{
	if ((ts->in_tracer | ts->in_urcu) || !ts->tid || !addr)
		return;
	/* No thread was ever created: one updater, nothing to compare. */
	if (!thread_start_seq_now())
		return;
	uintptr_t frames[UPDATER_FRAMES];
	uint32_t stack = stack_depot_save(frames, backtrace_capture(frames, UPDATER_FRAMES));
	struct published *p = slot_of((uintptr_t)addr);
	/* A racing publisher (or this thread's own signal handler) has the
	 * slot: this publication is not checked rather than waited for. */
	if (!p || __atomic_exchange_n(&p->busy, 1, __ATOMIC_ACQUIRE))
		return;
	struct update now;
	note_update(&now, ts, ip, stack);
	const void *current = __atomic_load_n((const void *const *)addr, __ATOMIC_RELAXED);
	int report = 0;
	if (!p->last.tid || current != p->value) {
		/* its first publication seen, or written since by other means */
		p->shared = 0;
		p->other.tid = 0;
	} else if (p->shared) {
		lockset_refine(p, &now);
		report = !p->nr_common && !p->common_unknown;
	} else if (p->last.tid != ts->tid && p->last.seq >= ts->start_seq &&
		   thread_registry_has_tid(ts, p->last.tid)) {
		/* the owner published while this thread existed, and still may */
		p->shared = 1;
		lockset_start(p, &p->last, &now);
		report = !p->nr_common && !p->common_unknown;
	} else if (p->last.tid != ts->tid) {
		p->other.tid = 0;   /* taken over: the owner's publications came before */
		p->last.tid = 0;
	}
	if (p->last.tid && p->last.tid != ts->tid)
		p->other = p->last;
	p->last = now;
	p->value = value;
	struct publication_report r = { addr, ip, p->other };
	__atomic_store_n(&p->busy, 0, __ATOMIC_RELEASE);
	if (report && r.other.tid && report_site_once(REPORT_SUSPICIOUS_RCU, ip))
		report_emit(ts, REPORT_SUSPICIOUS_RCU, ip, report_title_format[REPORT_TITLE_SUSPICIOUS_RCU],
			    print_publication_body, &r);
}
