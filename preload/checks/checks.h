/* The checks, each named after the bug it finds, with its report printer
 * beside it. Wrappers detect a bug with a few TLS loads and call these only
 * when something is wrong, so everything here is off the fast path. */
#ifndef LOCKDEP_RCU_CHECKS_H
#define LOCKDEP_RCU_CHECKS_H

#include <stdint.h>
#include "runtime/thread_state.h"
#include "rcu/urcu_reader_state.h"

/* Whether a dereference here is legal: in any read-side section, holding
 * any lock (the article's rule 2), or an online registered QSBR thread. */
static inline int dereference_is_protected(const struct thread_state *ts)
{
	return ts->nr_readers || ts->nr_locks || qsbr_thread_is_reader(ts) ||
	       (urcu_readable_flavors && inline_readers(ts));
}

/* At an event the tracer sees (here, an acquisition at ip): an inlined read
 * side of a flavor this thread never registered with is the unregistered
 * reader of check_unregistered_reader(). */
void check_inline_readers(struct thread_state *ts, uintptr_t ip);

/* In a report body: "file:line" of a call site (the first word of the
 * kernel's message line), from the header's file/line or debug info. */
void report_site(uintptr_t ip, const char *file, int line);

/* "WARNING: suspicious RCU usage" with "<site> <message>!" and the held
 * locks. site_file/site_line come from the header's call sites; NULL means
 * "symbolize site_ip". Once per (site_ip) unless site_ip is 0. */
void print_suspicious_rcu(struct thread_state *ts, uintptr_t site_ip, const char *site_file,
			  int site_line, const char *message);

/* Same, with a line of explanation under "other info". */
void print_suspicious_rcu_detail(struct thread_state *ts, uintptr_t site_ip, const char *message,
				 const char *detail);

void check_suspicious_dereference(struct thread_state *ts, uintptr_t ip);
void check_unregistered_reader(struct thread_state *ts, enum rcu_flavor flavor, uintptr_t ip,
			       const char *what);
/* The thread registered with flavor: its earlier reads are forgiven. */
void forget_unregistered_reads(enum rcu_flavor flavor);
void print_illegal_sync(struct thread_state *ts, uintptr_t ip, const char *what);
/* synchronize_rcu() / rcu_barrier() called from the handler of signo. */
void print_illegal_sync_in_handler(struct thread_state *ts, uintptr_t ip, const char *what, int signo);
/* An unlock of a lock this thread has no entry for: one taken past
 * MAX_LOCK_DEPTH (the C library's owner field tells, where it has one),
 * or the kernel's bad unlock balance. */
void lock_release_unheld(struct thread_state *ts, const void *lock, unsigned kind_mask, uintptr_t ip,
			 const char *type_name);
void print_bad_unlock_balance(struct thread_state *ts, uintptr_t ip, const void *lock,
			      const char *lock_name);
void print_recursive_locking(struct thread_state *ts, uintptr_t ip, const void *lock,
			     enum held_kind kind, int held_index);
void print_held_lock_freed(struct thread_state *ts, uintptr_t ip, const void *lock,
			   unsigned long size, int held_index);
/* A thread ends: reports read-side sections and locks still held. */
void check_locks_held_at_thread_end(struct thread_state *ts);
/* A thread ends: reports liburcu flavors it is still registered with, and
 * read sides it entered without ever registering. */
void check_registered_at_thread_end(struct thread_state *ts);
/* A thread (or the process) ends: the deferred report of read sides it
 * entered without ever registering with their flavor. */
void check_never_registered_reader(struct thread_state *ts);
/* lockdep_assert_held() and friends: the kernel's plain WARNING. */
void print_assertion(struct thread_state *ts, uintptr_t ip, const char *file, int line,
		     const char *message);

/* held[] is full. An allocator's fork handler takes every arena lock at
 * once (jemalloc: 4 per CPU): the acquisition joins an entry of the same
 * class and kind as one more reference ("count, don't push"); when there
 * is none, it is counted in ->untracked and the limit is printed once.
 * Out of line: rare. */
void held_lock_overflow(struct thread_state *ts, const void *lock, enum held_kind kind, uintptr_t ip);

/* A release of a lock folded into an aggregate entry of its class:
 * one reference less. Returns 0 when there is no such entry. */
int held_aggregate_release(struct thread_state *ts, const void *lock, unsigned kind_mask);

#endif
