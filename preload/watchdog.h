/* The watchdog thread (see watchdog.c); wait_begin() and wait_end() of
 * wait_state.h are its entry points for the waiting threads. */
#ifndef LOCKDEP_RCU_WATCHDOG_H
#define LOCKDEP_RCU_WATCHDOG_H

#include <pthread.h>
#include <stdlib.h>
#include "wait_state.h"

/* Ends the watchdog thread and waits until it is gone from the process
 * (before a call that wants the process single-threaded); the next
 * announced wait starts a new one. Returns 1 when it was running. */
int watchdog_stop(void);

/* A forked child has no watchdog (yet) and no waits. */
void watchdog_fork_child(void);

/* The real pthread_create() (intercept_thread.c): the watchdog is not one
 * of the program's threads. */
int tracer_thread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start_routine)(void *), void *arg);

/* The allocator the program really calls (its address decides which
 * module is the allocator). */
static inline void *next_malloc(void)
{
	return (void *)&malloc;
}

#endif
