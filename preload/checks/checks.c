/* Report printers for the core checks (lockdep-RCU and lock balance). The
 * kernel's titles and wording are kept verbatim so that users' eyes and
 * log-grepping scripts carry over. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include "checks/checks.h"
#include "report/report.h"
#include "checks/signal_usage.h"
#include "symbolize/symbolize.h"
#include "base/options.h"
#include "unwind/backtrace.h"
#include "classes/lock_classes.h"
#include "runtime/thread_registry.h"
#include "classes/orphaned_locks.h"
#include "runtime/sandbox.h"
#include "classes/lock_instances.h"
#include <unistd.h>


/* "file:line" of the call site, the first word of the kernel's message
 * line: from the header's __FILE__/__LINE__, else from debug info, else the
 * symbolized address. */
void report_site(uintptr_t ip, const char *file, int line)
{
	report_record_site(ip, file, line);
	if (file) {
		report_printf("%s:%d", file, line);
		return;
	}
	char where[512];
	if (tracer_options.symbolize && symbolize_code(ip, where, sizeof(where))) {
		/* "function+0x1/0x2 [module] file:line": keep file:line if any */
		const char *source = strstr(where, "] ");
		report_printf("%s", source && source[2] ? source + 2 : where);
		return;
	}
	report_printf("0x%lx", (unsigned long)ip);
}

/* The RCU state of the thread, as the kernel prints rcu_scheduler_active. */
static void report_rcu_state(struct thread_state *ts)
{
	report_printf("\nrcu read-side nesting:");
	int any = 0;
	for (int f = 0; f < NR_FLAVORS; f++)
		if (ts->nesting[f]) {
			report_printf(" %s=%u", flavor_name[f], ts->nesting[f]);
			any = 1;
		}
	if (!any)
		report_printf(" none");
	report_printf(", registered with:");
	any = 0;
	for (int f = 0; f < NR_URCU_FLAVORS; f++)
		if (ts->registered[f] == URCU_REGISTERED) {
			report_printf(" %s%s", flavor_name[f],
				      f == FLAVOR_qsbr ? (ts->qsbr_offline ? " (offline)" : " (online)") : "");
			any = 1;
		}
	if (!any)
		report_printf(" none");
	report_printf("\n");
}

struct suspicious {
	uintptr_t site_ip;
	const char *site_file;
	int site_line;
	const char *message;
	const char *detail;
	const uintptr_t *frames;   /* a stack captured earlier, or NULL for now's */
	size_t nr_frames;
};

static void print_suspicious_body(struct thread_state *ts, void *arg)
{
	const struct suspicious *s = arg;
	report_site(s->site_ip, s->site_file, s->site_line);
	report_printf(" %s!\n", s->message);
	report_printf("\nother info that might help us debug this:\n\n");
	if (s->detail)
		report_printf("%s\n", s->detail);
	if (s->frames) {
		report_printf("\n(reported when the thread ended; the stack is the one at the site)\n");
		report_backtrace_frames(s->frames, s->nr_frames);
	} else {
		report_rcu_state(ts);
		report_held_locks(ts);
		report_backtrace();
	}
}

static void print_suspicious(struct thread_state *ts, uintptr_t site_ip, const char *site_file,
			     int site_line, const char *message, const char *detail,
			     const uintptr_t *frames, size_t nr_frames)
{
	if (site_ip && !report_site_once(REPORT_SUSPICIOUS_RCU, site_ip))
		return;
	struct suspicious s = { site_ip, site_file, site_line, message, detail, frames, nr_frames };
	report_emit(ts, REPORT_SUSPICIOUS_RCU, site_ip, report_title_format[REPORT_TITLE_SUSPICIOUS_RCU],
		    print_suspicious_body, &s);
}

void print_suspicious_rcu(struct thread_state *ts, uintptr_t site_ip, const char *site_file,
			  int site_line, const char *message)
{
	print_suspicious(ts, site_ip, site_file, site_line, message, NULL, NULL, 0);
}

void print_suspicious_rcu_detail(struct thread_state *ts, uintptr_t site_ip, const char *message,
				 const char *detail)
{
	print_suspicious(ts, site_ip, NULL, 0, message, detail, NULL, 0);
}

void check_suspicious_dereference(struct thread_state *ts, uintptr_t ip)
{
	const char *msg;
	if (ts->registered[FLAVOR_qsbr] == URCU_REGISTERED)
		msg = "rcu_dereference() by an offline QSBR thread, outside any read-side "
		      "critical section and with no lock held";
	else
		msg = "rcu_dereference() outside any RCU read-side critical section and with no "
		      "lock held";
	print_suspicious_rcu_detail(ts, ip, "suspicious rcu_dereference() usage", msg);
}

/* A read side in a thread that is not registered with the flavor. Reported
 * at once for an offline QSBR thread, or for any unregistered reader with
 * strict_registration=1. By default only a thread that never registers
 * with the flavor in its whole life is reported: daemons (Knot DNS) read
 * their own configuration, which only that thread ever replaces, on the
 * main thread before registering it and again after unregistering it, and
 * that is safe. So the first such read is remembered with its stack, and
 * reported when the thread ends if it never registered. */
struct unregistered_read {
	int armed;
	enum rcu_flavor flavor;
	uintptr_t site;
	const char *what;
	size_t nr_frames;
	uintptr_t frames[16];
};
static __thread struct unregistered_read first_unregistered_read;

static void print_unregistered_reader(struct thread_state *ts, enum rcu_flavor flavor, uintptr_t ip,
				      const char *what, const uintptr_t *frames, size_t nr_frames)
{
	char msg[256];
	if (ts->registered[flavor] == URCU_UNREGISTERED)
		snprintf(msg, sizeof(msg),
			 "%s by a thread that called rcu_unregister_thread() (liburcu flavor %s)",
			 what, flavor_name[flavor]);
	else if (flavor == FLAVOR_qsbr && ts->registered[flavor] == URCU_REGISTERED)
		snprintf(msg, sizeof(msg), "%s by a QSBR thread that is offline", what);
	else
		snprintf(msg, sizeof(msg),
			 "%s by a thread that never called rcu_register_thread() (liburcu flavor %s)",
			 what, flavor_name[flavor]);
	print_suspicious(ts, ip, NULL, 0, msg,
			 "grace periods do not wait for read-side critical sections of threads that are "
			 "not registered (and online): the data read may be freed under the reader",
			 frames, nr_frames);
}

void check_unregistered_reader(struct thread_state *ts, enum rcu_flavor flavor, uintptr_t ip,
			       const char *what)
{
	if (tracer_options.strict_registration || ts->registered[flavor] == URCU_REGISTERED) {
		/* registered yet not a reader: an offline QSBR thread */
		print_unregistered_reader(ts, flavor, ip, what, NULL, 0);
		return;
	}
	if (ts->registered[flavor] == URCU_UNREGISTERED)
		return;
	struct unregistered_read *r = &first_unregistered_read;
	if (r->armed)
		return;
	r->armed = 1;
	r->flavor = flavor;
	r->site = ip;
	r->what = what;
	r->nr_frames = backtrace_capture(r->frames, sizeof(r->frames) / sizeof(r->frames[0]));
}

void check_inline_readers(struct thread_state *ts, uintptr_t ip)
{
	for (unsigned inl = inline_readers(ts); inl; inl &= inl - 1) {
		enum rcu_flavor f = (enum rcu_flavor)__builtin_ctz(inl);
		if (flavor_needs_registration[f] && ts->registered[f] != URCU_REGISTERED)
			check_unregistered_reader(ts, f, ip, "rcu_read_lock() (inlined)");
	}
}

void forget_unregistered_reads(enum rcu_flavor flavor)
{
	if (first_unregistered_read.armed && first_unregistered_read.flavor == flavor)
		first_unregistered_read.armed = 0;
}

void check_never_registered_reader(struct thread_state *ts)
{
	struct unregistered_read *r = &first_unregistered_read;
	if (!r->armed || ts->registered[r->flavor] != URCU_NEVER_REGISTERED)
		return;
	r->armed = 0;
	print_unregistered_reader(ts, r->flavor, r->site, r->what, r->frames, r->nr_frames);
}

void print_illegal_sync(struct thread_state *ts, uintptr_t ip, const char *what)
{
	char msg[160];
	snprintf(msg, sizeof(msg), "Illegal %s in RCU read-side critical section", what);
	print_suspicious_rcu(ts, ip, NULL, 0, msg);
}

/* A grace period waited for in a signal handler: it waits for readers,
 * and the reader may be the code the handler interrupted (its own
 * thread: it never ends its read side until the handler returns), or a
 * thread waiting for a lock that code holds. liburcu's signal flavor adds
 * that its grace periods signal every reader and wait for their answer. */
void print_illegal_sync_in_handler(struct thread_state *ts, uintptr_t ip, const char *what, int signo)
{
	char msg[160], sig[32];
	snprintf(msg, sizeof(msg), "Illegal %s in a signal handler (%s)", what, signal_name(signo, sig, sizeof(sig)));
	print_suspicious_rcu_detail(ts, ip, msg,
				    "a grace period waits for every reader: a handler that interrupted a read side "
				    "(on its own thread, or one another thread waits for) waits for itself; "
				    "defer the work to a thread (call_rcu(), or a flag the program polls)");
}

struct lock_event {
	uintptr_t ip;
	const void *lock;
	const char *type_name;
	int held_index;
	unsigned long size;
	enum held_kind kind;
	int holder_tid;           /* bad unlock: the thread holding it, or 0 */
	uintptr_t holder_ip;      /* where that thread took it */
	int holder_released;      /* the C library lets the release happen */
};

static void print_bad_unlock_body(struct thread_state *ts, void *arg)
{
	const struct lock_event *e = arg;
	char name[256];
	report_lock_name(e->lock, e->lock ? lock_class_peek(e->lock) : 0, e->type_name, name, sizeof(name));
	report_record_lock("released", e->lock, name, e->type_name, e->holder_ip);
	report_printf("%s is trying to release lock (%s) at:\n", report_task_name(), name);
	report_symbolized_ip(e->ip);
	report_printf("\nbut there are no more locks to release!\n");
	if (e->holder_tid) {
		char comm[REPORT_COMM_MAX];
		report_thread_comm(e->holder_tid, comm, sizeof(comm));
		report_printf("\nThe lock is held by another thread, %s/%d, which took it at:\n",
			      comm, e->holder_tid);
		report_symbolized_ip(e->holder_ip);
		if (e->holder_released)
			report_printf("\nA lock released by a thread that does not hold it (a mutex used as a\n"
				      "semaphore) is undefined behaviour for POSIX; glibc lets this one go,\n"
				      "so it no longer counts as held by %s/%d.\n", comm, e->holder_tid);
		else
			report_printf("\nThe C library refuses this release (EPERM): %s/%d still holds it.\n",
				      comm, e->holder_tid);
	}
	report_printf("\nother info that might help us debug this:\n");
	report_held_locks(ts);
	report_backtrace();
}

static void print_bad_unlock(struct thread_state *ts, struct lock_event *e)
{
	/* A lock released by another thread than its taker, as the C library
	 * lets it be: the class's locks are used as semaphores, one design
	 * choice, told once per class (at whichever site comes first); a
	 * release of a lock nobody holds, once per site. A class id (below
	 * 65536) is never the address of code, so the two keys never meet. */
	uint32_t class_id = e->holder_tid && e->holder_released ? lock_class_peek(e->lock) : 0;
	uintptr_t once_key = class_id ? class_id : e->ip;
	if (!report_site_once(REPORT_BAD_UNLOCK, once_key))
		return;
	report_emit_keyed(ts, REPORT_BAD_UNLOCK, e->ip, once_key, report_title_format[REPORT_TITLE_BAD_UNLOCK],
			  print_bad_unlock_body, e);
}

void print_bad_unlock_balance(struct thread_state *ts, uintptr_t ip, const void *lock,
			      const char *lock_name)
{
	struct lock_event e = { .ip = ip, .lock = lock, .type_name = lock_name };
	print_bad_unlock(ts, &e);
}

/* Whether this thread owns the lock as the C library records it (for the
 * kinds where it does): a lock taken past MAX_LOCK_DEPTH. */
static int owned_per_libc(const void *lock, unsigned kind_mask)
{
	pid_t self = report_tid(thread_state());
	if (kind_mask & KIND_BIT(HELD_MUTEX))
		return ((const pthread_mutex_t *)lock)->__data.__owner == self;
	if (kind_mask & KIND_BIT(HELD_RWLOCK_WRITE))
		return ((const pthread_rwlock_t *)lock)->__data.__cur_writer == self;
	return -1;   /* unknown */
}

/* A release by another thread that the C library carries out (it refuses
 * it for error-checking, recursive and robust mutexes: EPERM). */
static int foreign_release_succeeds(const void *lock, unsigned kind_mask)
{
	if (!(kind_mask & KIND_BIT(HELD_MUTEX)))
		return 1;
	const pthread_mutex_t *m = lock;
	int kind = m->__data.__kind;
	return !(kind & 0x10) && ((kind & 3) == PTHREAD_MUTEX_NORMAL || (kind & 3) == PTHREAD_MUTEX_ADAPTIVE_NP);
}

struct holder_search {
	const void *lock;
	unsigned kind_mask;
	int post;              /* the release will happen: drop it from the holder */
	int tid;
	uintptr_t ip;
};

/* Posts the release to the holder's mailbox before the real unlock, so
 * the holder drops its entry before it can take the lock again. */
static void post_foreign_release(struct thread_state *holder, const void *lock)
{
	int pending = 2;
	for (unsigned s = 0; s < sizeof(holder->foreign_released) / sizeof(holder->foreign_released[0]); s++) {
		const void *expected = NULL;
		if (__atomic_compare_exchange_n(&holder->foreign_released[s], &expected, lock, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
			pending = 1;
			break;
		}
	}
	int old = __atomic_load_n(&holder->foreign_pending, __ATOMIC_RELAXED);
	if (old < pending)
		__atomic_store_n(&holder->foreign_pending, pending, __ATOMIC_RELEASE);
}

static int holds_lock(struct thread_state *other, void *arg)
{
	struct holder_search *s = arg;
	int i = held_lock_find(other, s->lock, s->kind_mask);
	if (i < 0)
		return 0;
	s->tid = other->tid;
	s->ip = other->held[i].acquire_ip;
	if (s->post)
		post_foreign_release(other, s->lock);
	return 1;
}

void lock_release_unheld(struct thread_state *ts, const void *lock, unsigned kind_mask, uintptr_t ip,
			 const char *type_name)
{
	if (ts->nr_aggregates && held_aggregate_release(ts, lock, kind_mask))
		return;
	if (ts->untracked) {
		/* Taken past MAX_LOCK_DEPTH, or not? The C library knows for
		 * mutexes and write-held rwlocks; for the rest, trust the count. */
		int owned = owned_per_libc(lock, kind_mask);
		if (owned != 0) {
			ts->untracked--;
			return;
		}
	}
	struct holder_search s = { lock, kind_mask, foreign_release_succeeds(lock, kind_mask), 0, 0 };
	tracer_enter(ts);
	thread_registry_find(ts, holds_lock, &s);
	/* A lock its taker ended holding, of a class already told to be used
	 * as a semaphore (orphaned_locks.h): that same idiom again, whose
	 * report was made for the class. (With a live holder, an orphan of
	 * the lock from before is old news: dropped alike.) */
	int orphaned = orphaned_lock_take(lock, lock_instance_generation(lock)) && !s.tid;
	if (s.tid && s.post) {
		/* Its class's locks are handed between threads: a taker that
		 * ends holding one leaves it to another. */
		uint32_t class_id = lock_class_of(lock, s.ip);
		if (class_id)
			__atomic_store_n(&lock_classes[class_id].handed_off, 1, __ATOMIC_RELAXED);
	}
	tracer_leave(ts);
	if (orphaned)
		return;
	struct lock_event e = { .ip = ip, .lock = lock, .type_name = type_name, .holder_tid = s.tid,
				.holder_ip = s.ip, .holder_released = s.post };
	print_bad_unlock(ts, &e);
}

static const char *lock_type_name(enum held_kind kind)
{
	switch (kind) {
	case HELD_MUTEX: return "pthread_mutex_t";
	case HELD_SPIN: return "pthread_spinlock_t";
	default: return "pthread_rwlock_t";
	}
}

static void print_recursive_locking_body(struct thread_state *ts, void *arg)
{
	const struct lock_event *e = arg;
	struct held_lock *held = &ts->held[e->held_index];
	char name[256];
	report_lock_name(e->lock, held_class(held), lock_type_name(e->kind), name, sizeof(name));
	report_record_lock("acquiring", e->lock, name, lock_type_name(e->kind), 0);
	report_record_lock("holding", e->lock, name, lock_type_name(e->kind), held->acquire_ip);
	report_printf("%s is trying to acquire lock:\n", report_task_name());
	report_printf("%016lx (%s), at: ", (unsigned long)e->lock, name);
	report_symbolized_ip(e->ip);
	report_printf("\n\nbut task is already holding lock:\n");
	report_printf("%016lx (%s), at: ", (unsigned long)e->lock, name);
	report_symbolized_ip(held->acquire_ip);
	report_printf("\n\nother info that might help us debug this:\n");
	report_printf(" Possible unsafe locking scenario:\n\n");
	report_printf("       CPU0\n       ----\n");
	report_printf("  lock(%s);\n  lock(%s);\n\n *** DEADLOCK ***\n\n", name, name);
	report_printf(" May be due to missing lock nesting notation\n\n");
	report_held_locks(ts);
	report_backtrace();
}

void print_recursive_locking(struct thread_state *ts, uintptr_t ip, const void *lock,
			     enum held_kind kind, int held_index)
{
	if (!report_site_once(REPORT_RECURSIVE_LOCKING, ip))
		return;
	struct lock_event e = { .ip = ip, .lock = lock, .held_index = held_index, .kind = kind };
	report_emit(ts, REPORT_RECURSIVE_LOCKING, ip, report_title_format[REPORT_TITLE_RECURSIVE_LOCKING],
		    print_recursive_locking_body, &e);
}

static void print_held_lock_freed_body(struct thread_state *ts, void *arg)
{
	const struct lock_event *e = arg;
	report_printf("%s is freeing memory %016lx-%016lx, with a lock still held there!\n",
		      report_task_name(), (unsigned long)e->lock, (unsigned long)e->lock + e->size - 1);
	report_held_locks_as("freed");
	report_held_lock(e->held_index, &ts->held[e->held_index]);
	report_held_locks_as("held");
	report_held_locks(ts);
	report_backtrace();
}

void print_held_lock_freed(struct thread_state *ts, uintptr_t ip, const void *lock,
			   unsigned long size, int held_index)
{
	if (!report_site_once(REPORT_HELD_LOCK_FREED, ip))
		return;
	struct lock_event e = { .ip = ip, .lock = lock, .held_index = held_index, .size = size };
	report_emit(ts, REPORT_HELD_LOCK_FREED, ip, report_title_format[REPORT_TITLE_HELD_LOCK_FREED], print_held_lock_freed_body, &e);
}

static void print_locks_held_body(struct thread_state *ts, void *arg)
{
	(void)arg;
	report_held_locks_as("leaked");
	report_held_locks(ts);
	report_backtrace();
}

/* A lock this thread took and ends holding that another thread may
 * release: its class's locks have been handed between threads, and the C
 * library lets a thread that did not take it release it. Kept as an
 * orphan (orphaned_locks.h) instead of being reported; 0 when it is not
 * such a lock, or the orphan table is full. */
static int leave_to_another_thread(struct thread_state *ts, struct held_lock *h)
{
	if (h->kind == HELD_NONE || h->kind == HELD_RCU_READ ||
	    !foreign_release_succeeds(h->lock, KIND_BIT(h->kind)))
		return 0;
	tracer_enter(ts);
	uint32_t class_id = held_class(h);
	int kept = 0;
	if (class_id && __atomic_load_n(&lock_classes[class_id].handed_off, __ATOMIC_RELAXED))
		kept = orphaned_lock_add(h->lock, lock_instance_generation(h->lock));
	tracer_leave(ts);
	return kept;
}

/* The innermost entry that this thread took itself (not inherited) and
 * leaves unreleased: locks of the semaphore idiom are left to the thread
 * that releases them. */
static int innermost_own_entry(struct thread_state *ts)
{
	int innermost = -1;
	for (int i = (int)ts->depth - 1; i >= 0; i--) {
		if (ts->held[i].kind == HELD_NONE || held_is_inherited(&ts->held[i]))
			continue;
		if (leave_to_another_thread(ts, &ts->held[i]))
			continue;
		if (innermost < 0)
			innermost = i;
	}
	return innermost;
}

void check_locks_held_at_thread_end(struct thread_state *ts)
{
	int innermost = innermost_own_entry(ts);
	unsigned inlined = urcu_readable_flavors ? inline_readers(ts) : 0;
	if (innermost < 0 && !inlined)
		return;
	/* Once per innermost acquisition site: a thread pool whose workers all
	 * leak the same lock is one bug. An inlined read side has no site:
	 * where the thread registered stands for it. */
	uintptr_t site = innermost >= 0 ? ts->held[innermost].acquire_ip
					: registered_ip[__builtin_ctz(inlined)] + 1 + (uintptr_t)__builtin_ctz(inlined);
	if (!report_site_once(REPORT_LOCKS_HELD_AT_EXIT, site))
		return;
	char title[96];
	snprintf(title, sizeof(title), report_title_format[REPORT_TITLE_LOCKS_HELD_AT_EXIT], report_task_name());
	report_emit(ts, REPORT_LOCKS_HELD_AT_EXIT, site, title, print_locks_held_body, NULL);
}

void check_registered_at_thread_end(struct thread_state *ts)
{
	check_never_registered_reader(ts);
	for (int f = 0; f < NR_URCU_FLAVORS; f++) {
		if (!flavor_needs_registration[f] || ts->registered[f] != URCU_REGISTERED)
			continue;
		char msg[256];
		snprintf(msg, sizeof(msg),
			 "thread %s ends still registered with liburcu flavor %s (registered here): "
			 "call rcu_unregister_thread() before the thread ends, or the registry keeps "
			 "a pointer to its freed memory", report_task_name(), flavor_name[f]);
		print_suspicious_rcu(ts, registered_ip[f], NULL, 0, msg);
	}
}

struct assertion {
	uintptr_t ip;
	const char *file;
	int line;
	const char *message;
};

static void print_assertion_body(struct thread_state *ts, void *arg)
{
	const struct assertion *a = arg;
	report_record_site(a->ip, a->file, a->line);
	report_printf("%s:%d %s\n", a->file, a->line, a->message);
	report_printf("\nother info that might help us debug this:\n");
	report_held_locks(ts);
	report_backtrace();
}

void print_assertion(struct thread_state *ts, uintptr_t ip, const char *file, int line,
		     const char *message)
{
	if (!report_site_once(REPORT_WARNING, ip))
		return;
	char title[512];
	snprintf(title, sizeof(title), report_title_format[REPORT_TITLE_ASSERTION], report_task_name(), file, line);
	struct assertion a = { ip, file, line, message };
	report_emit(ts, REPORT_WARNING, ip, title, print_assertion_body, &a);
}

void held_lock_overflow(struct thread_state *ts, const void *lock, enum held_kind kind, uintptr_t ip)
{
	uint32_t class_id = ts->in_tracer ? 0 : lock_class_of(lock, ip);
	for (unsigned i = 0; class_id && i < ts->depth; i++) {
		struct held_lock *h = &ts->held[i];
		if (h->kind != kind || held_class_lookup(h) != class_id)
			continue;
		if (!(h->attr & HELD_ATTR_AGGREGATE)) {
			h->attr |= HELD_ATTR_AGGREGATE;
			ts->nr_aggregates++;
		}
		if (h->references < UINT16_MAX) {
			h->references++;
			return;
		}
	}
	ts->untracked++;
	report_depth_limit(ts, lock, ip);
}

int held_aggregate_release(struct thread_state *ts, const void *lock, unsigned kind_mask)
{
	uint32_t class_id = lock_class_peek(lock);
	for (int i = (int)ts->depth - 1; class_id && i >= 0; i--) {
		struct held_lock *h = &ts->held[i];
		if (!held_is_aggregate(h) || !(kind_mask & KIND_BIT(h->kind)) || h->class_id != class_id)
			continue;
		if (h->references > 1)
			h->references--;
		else
			held_lock_remove(ts, i);
		return 1;
	}
	return 0;
}
