/* Building and emitting splats: kernel layout, once per call site, each one
 * a single write(2) so racing threads never interleave and a crash right
 * after loses nothing. */
#ifndef LOCKDEP_RCU_REPORT_H
#define LOCKDEP_RCU_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include "thread_state.h"

#define LOCKDEP_RCU_VERSION "0.1"

enum report_kind {
	REPORT_SUSPICIOUS_RCU,
	REPORT_BAD_UNLOCK,
	REPORT_RECURSIVE_LOCKING,
	REPORT_HELD_LOCK_FREED,
	REPORT_LOCKS_HELD_AT_EXIT,
	REPORT_CIRCULAR_DEPENDENCY,
	REPORT_WARNING,          /* lockdep_assert_held() and friends */
	NR_REPORT_KINDS,
};

/* True for the first caller with this (kind, site) pair, even when many
 * threads race: the kernel's WARN_ON_ONCE, per call site. */
int report_site_once(enum report_kind kind, uintptr_t site);

/* A report is built between report_begin() and report_end(), which hold the
 * report lock and the thread's reentrancy guard. */
void report_begin(struct thread_state *ts, const char *title);
void report_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "function+0xoff/0xsize [module] file:line" of a return address. */
void report_symbolized_ip(uintptr_t ip);
/* " #i: <address> (<name>){<kind>}, at: <where taken>" */
void report_held_lock(int index, const struct held_lock *h);
/* "N locks held by comm/tid:" and one line each, or "no locks held by ...". */
void report_held_locks(const struct thread_state *ts);
/* "stack backtrace:" and the frames of the caller, tracer frames skipped. */
void report_backtrace(void);
/* The same for a stack captured earlier by backtrace_capture(). */
void report_backtrace_frames(const uintptr_t *frames, size_t nr_frames);
void report_end(struct thread_state *ts, enum report_kind kind);

/* "comm/tid" of the calling thread. */
const char *report_task_name(void);

/* Writes bytes to the report destination now, under no lock (option errors). */
void report_raw_write(const char *buf, size_t len);
/* One line, printed once per message, when a bounded table is full. */
void report_limit_once(const char *title, const char *detail);
/* At exit: the summary line; returns the number of reports. */
unsigned long report_count(void);
void report_print_summary(void);
/* fork: the child must not inherit a report lock held by a vanished thread. */
void report_fork_prepare(void);
void report_fork_parent(void);
void report_fork_child(void);

#endif
