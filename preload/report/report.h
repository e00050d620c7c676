/* Building and emitting splats: kernel layout, once per call site, each one
 * a single write(2) so racing threads never interleave and a crash right
 * after loses nothing.
 *
 * A report is emitted by report_emit() with a body function that prints
 * it. The body runs under the report lock, on the tracer's own stack (the
 * program's thread may have 16 KiB in all), with the thread's stack
 * captured beforehand. Everything that names things (the symbolizer) runs
 * only there, so it is only ever used by one thread at a time. */
#ifndef LOCKDEP_RCU_REPORT_H
#define LOCKDEP_RCU_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include "base/report_kinds.h"
#include "runtime/thread_state.h"

#define LOCKDEP_RCU_VERSION "0.1"

/* How long a thread that lost the once-per-site race, or one that exits
 * or aborts, waits for reports in flight to be written. */
#define REPORT_WAIT_MS 10000

/* True for the first caller with this (kind, site) pair, even when many
 * threads race: the kernel's WARN_ON_ONCE, per call site. The first
 * caller must then call report_emit() with the same site, which marks the
 * site done; the others wait until it is (bounded), so none of them runs
 * ahead into abort() or exit() before the report is out. */
int report_site_once(enum report_kind kind, uintptr_t site);

/* Prints a report: header with `title`, then body(arg), then the write.
 * `site` is what report_site_once() was given (0 if none). errno and the
 * thread's reentrancy guard are handled here. A report asked for by a
 * signal handler that interrupted this thread's own report is dropped with
 * a note (the report lock is not re-entered). */
void report_emit(struct thread_state *ts, enum report_kind kind, uintptr_t site, const char *title,
		 void (*body)(struct thread_state *ts, void *arg), void *arg);

/* The same for a report told once per something else than its site (a
 * lock class): once_key is what report_site_once() was given, site still
 * the code address the report's record names. */
void report_emit_keyed(struct thread_state *ts, enum report_kind kind, uintptr_t site, uintptr_t once_key,
		       const char *title, void (*body)(struct thread_state *ts, void *arg), void *arg);


/* In a body: */
void report_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "function+0xoff/0xsize [module] file:line" of a return address. */
void report_symbolized_ip(uintptr_t ip);
/* The name of a lock for reports: its class name ("conn_new+0x2a",
 * "stats_lock") when it has one, else the symbol of its address, else
 * the type. One name per lock, the same everywhere in a report. */
void report_lock_name(const void *lock, uint32_t class_id, const char *type_name,
		      char *buf, size_t size);
/* " #i: <address> (<name>){<kind>}, at: <where taken>" */
void report_held_lock(int index, struct held_lock *h);
/* "N locks held by comm/tid:" and one line each, or "no locks held by ...". */
void report_held_locks(struct thread_state *ts);
/* The same for another thread, from a copy of its entries; inline_nesting
 * (per liburcu flavor, may be NULL) counts read sides no wrapper saw. */
void report_held_locks_of(const char *task, const struct held_lock *held, unsigned depth, unsigned untracked,
			  const unsigned *inline_nesting);
/* The held locks listed next are the bug itself (a thread ending with
 * them), not its context: so they are recorded (report_record.h). */
void report_held_locks_as(const char *role);
/* The locks a report is about, and its site, for its record. */
void report_record_lock(const char *role, const void *lock, const char *name, const char *kind,
			uintptr_t acquired_at);
void report_record_site(uintptr_t ip, const char *file, int line);
/* "stack backtrace:" and the frames captured when the report began. */
void report_backtrace(void);
/* The same for a stack captured earlier. */
void report_backtrace_frames(const uintptr_t *frames, size_t nr_frames);

/* Another thread's stack, captured earlier by that thread. */
void report_backtrace_of(int tid, const char *comm, const uintptr_t *frames, size_t nr_frames);

/* A thread's name as reports print it: at most 15 bytes, each control
 * byte shown as \xNN (4), and the NUL. */
#define REPORT_COMM_MAX 64
/* "name/tid". */
#define REPORT_TASK_MAX (REPORT_COMM_MAX + 16)

/* The next report this thread emits is about thread tid, not itself (the
 * watchdog's reports on a blocked or waiting thread): its record names
 * that thread, as its Call Trace does. */
void report_next_about(int tid);

/* "comm/tid" of the calling thread. */
const char *report_task_name(void);
/* The name of another thread of this process, as the text shows it (buf
 * of REPORT_COMM_MAX). */
void report_thread_comm(int tid, char *buf, size_t size);

/* held[] is full: a one-time notice naming the thread and where. */
void report_depth_limit(struct thread_state *ts, const void *lock, uintptr_t ip);

/* Reads the suppressions file of the options (at startup, once); a bad
 * one is named and the tracer goes on without rules. */
void report_load_suppressions(void);

/* Reports printed so far (not counting suppressed ones). */
unsigned long report_count(void);
/* Waits (bounded) until no report is being built or written. */
void report_wait_in_flight(void);
/* The summary line, once per process. */
void report_print_summary(void);

/* fork (pthread_atfork, run by the tracer's fork handlers). */
void report_fork_prepare(struct thread_state *self);
void report_fork_parent(void);
void report_fork_child(struct thread_state *self);

#endif
