/* The watchdog thread (see watchdog.c); wait_begin() and wait_end() are its
 * entry points for the waiting threads. */
#ifndef LOCKDEP_RCU_WATCHDOG_H
#define LOCKDEP_RCU_WATCHDOG_H

#include <pthread.h>
#include <stdlib.h>
#include "runtime/wait_state.h"

/* Whether blocked lock acquisitions are watched (hung_task_timeout), and
 * grace-period waits (stall_timeout). */
extern int hung_task_checks;
extern int stall_checks;

/* From the options, at startup. */
void watchdog_setup(void);

/* The thread starts waiting (since: CLOCK_MONOTONIC ns). Captures its
 * stack, publishes the wait and makes sure the watchdog runs. */
void wait_begin(struct thread_state *ts, enum wait_kind kind, const void *object, uint8_t lock_kind,
		uint8_t flavor, int barrier, uintptr_t ip, uint64_t since);
/* The wait is over, however it ended. */
void wait_end(struct thread_state *ts);

/* Ends the watchdog thread and waits until it is gone from the process
 * (before a call that wants the process single-threaded); the next
 * announced wait starts a new one. Returns 1 when it was running. */
int watchdog_stop(void);

/* A forked child has no watchdog (yet) and no waits. */
void watchdog_fork_child(void);

/* The allocator the program really calls (its address decides which
 * module is the allocator). */
static inline void *next_malloc(void)
{
	return (void *)&malloc;
}

#endif
