/* The tracer's checks of itself. An internal invariant that does not hold
 * is the tracer's bug, never the program's: as the kernel's
 * DEBUG_LOCKS_WARN_ON() with debug_locks_off(), the first failure prints
 * one line naming the invariant and where, and turns the checking off for
 * the rest of the process (no more validation, no new report). The
 * wrappers go on calling the real functions, so the program runs on as it
 * would without the tracer; nothing aborts.
 *
 *	if (TRACER_WARN_ON(to >= lock_classes_count()))
 *		return NULL;
 *
 * TRACER_WARN_ON(cond) is cond, so the caller can leave the broken state
 * alone; it costs a predicted branch where cond holds not. */
#ifndef LOCKDEP_RCU_SELF_CHECK_H
#define LOCKDEP_RCU_SELF_CHECK_H

/* Set once, never cleared (a forked child inherits it, as it inherits the
 * state that failed). */
extern int tracer_checks_off;

static inline int tracer_checking(void)
{
	return !__builtin_expect(__atomic_load_n(&tracer_checks_off, __ATOMIC_RELAXED), 0);
}

/* Prints the failure (the first one only) and turns the checks off;
 * returns 1. errno is preserved. */
int self_check_failed(const char *invariant, const char *file, int line) __attribute__((cold));

#define TRACER_WARN_ON(cond) \
	(__builtin_expect(!!(cond), 0) ? self_check_failed(#cond, __FILE__, __LINE__) : 0)

/* For the tracer's own tests (option self_check_fault=N): true at the Nth
 * call, which the caller puts inside one of its invariants, as a
 * corrupted state would make it fail. Called on a slow path only (a new
 * lock dependency). */
int self_check_fault(void);

#endif
