/* Lockdep's interrupt-safety checks, with signal handlers for interrupt
 * handlers. Per lock class and per handled signal S, the usage states of
 * signal_usage.h: taken in S's handler (IN-SIGNAL-W/R), taken with S not
 * blocked (SIGNAL-ON-W/R), each with the stack of its first occurrence.
 * A new usage is checked as mark_lock_irq() checks it:
 *  - against the class's own usages: in S's handler and elsewhere with S
 *    deliverable is "WARNING: inconsistent lock state";
 *  - through the dependency graph: a lock taken in S's handler (S-safe)
 *    that was held while taking, directly or through other locks, a lock
 *    taken with S deliverable (S-unsafe) is "WARNING: possible irq lock
 *    inversion dependency detected": the handler, landing while the
 *    unsafe lock is held, waits for the safe one, whose holder waits for
 *    the unsafe one. Found when the safe lock becomes safe (searching
 *    forwards from it) or the unsafe one unsafe (from every safe lock).
 * Each usage is new once per class and signal, so each bug is reported
 * once. Only signals the program installed a handler for count
 * (signal_state.h: handled_signals). */
#ifndef LOCKDEP_RCU_CHECK_SIGNAL_USAGE_H
#define LOCKDEP_RCU_CHECK_SIGNAL_USAGE_H

#include <stdint.h>
#include "runtime/thread_state.h"

/* Lock classes that became safe for some signal, searched from when a
 * class becomes unsafe: locks taken in handlers are few. */
#define MAX_SIGNAL_SAFE_CLASSES 1024
/* First stacks of each (class, signal, usage). */
#define MAX_SIGNAL_USAGE_TRACES (1u << 14)   /* power of two */

/* A blocking acquisition of `lock` (class_id, `kind`, for a recursive read
 * iff read) at ip, before the call: records the thread's signal context
 * as the class's usage and checks what is new. Called by the lock
 * wrappers only once the program installed a handler (signal_usage_tracked). */
void signal_usage_acquire(struct thread_state *ts, const void *lock, uint32_t class_id,
			  enum held_kind kind, int read, uintptr_t ip);

/* A trylock took `lock` (class_id 0: not looked up yet): only its
 * SIGNAL-ON usage counts. Held, it blocks a handler that waits for it; a
 * trylock in a handler never waits, so it makes no IN-SIGNAL usage. */
void signal_usage_trylocked(struct thread_state *ts, const void *lock, uint32_t class_id,
			    enum held_kind kind, int read, uintptr_t ip);

/* The program installed a handler: from now on the lock wrappers record
 * signal usages (signal_usage_tracked) and new dependencies are checked. */
void signal_usage_enable(void);

/* New dependencies into class_id (the acquisition of `lock` at ip) were
 * just added to the graph: a signal-safe lock that now reaches a
 * signal-unsafe one through them is the kernel's "SIGNAL-safe ->
 * SIGNAL-unsafe lock order detected" (the inversion, found when the
 * dependency is made rather than when a usage is). */
void check_signal_safe_dependency(struct thread_state *ts, const void *lock, uint32_t class_id, uintptr_t ip);

#endif
