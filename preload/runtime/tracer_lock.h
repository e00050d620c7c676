/* The tracer's one internal lock type (sanitizer_common's BlockingMutex
 * plus ScopedErrorReportLock's owner check). Every table of the tracer that
 * needs mutual exclusion uses it:
 *  - futex-based: a waiter sleeps in the kernel, so a thread that holds the
 *    lock is never starved by spinning waiters (no sched_yield loops that
 *    livelock SCHED_FIFO threads);
 *  - each thread knows which of them it holds or is taking (a bit per lock
 *    in its tracer state, set before the first attempt), so a second
 *    acquisition by the same thread (a signal handler interrupting the
 *    tracer, even between the atomic exchange and the bookkeeping) is
 *    refused instead of deadlocking: the caller degrades (skips the class,
 *    the edge or the report) and says so where it matters;
 *  - it never calls into anything the tracer interposes.
 *
 * A forked child's thread keeps its TLS, so the bits stay right there. */
#ifndef LOCKDEP_RCU_TRACER_LOCK_H
#define LOCKDEP_RCU_TRACER_LOCK_H

#include <stdint.h>
#include "runtime/thread_state.h"

/* The internal locks, in the order they nest (see intercept_process.c). */
enum tracer_lock_id {
	TRACER_LOCK_REPORT,
	TRACER_LOCK_REPORT_SITES,
	TRACER_LOCK_GRAPH,
	TRACER_LOCK_CLASSES,
	TRACER_LOCK_INSTANCES,
	TRACER_LOCK_DEPOT,
	TRACER_LOCK_THREADS,
	NR_TRACER_LOCKS,
};

struct tracer_lock {
	int word;              /* 0 free, else the holder's thread id | a waiters bit */
	uint32_t bit;          /* 1 << enum tracer_lock_id */
	const char *name;      /* for messages */
	/* Whether the last fork preparation took it: kept here, in the page
	 * the acquisition writes anyway, rather than in a variable of the
	 * caller's, which would be one more page written after each fork
	 * (a copy-on-write fault in the parent or the child). */
	int taken_for_fork;
};

#define TRACER_LOCK_INITIALIZER(id, n) { 0, 1u << (id), n, 0 }

/* Takes the lock for `self`. Returns 1 when taken, 0 when `self` already
 * holds it (re-entry from a signal handler): then nothing was taken and the
 * caller must not unlock. Also 0 when its holder is gone from the process
 * without releasing it: the child of a raw clone() (no fork handlers ran)
 * made while another thread held it. The data it guards may be
 * half-updated, so the calling thread then stops tracing for good
 * (in_tracer stays raised: every wrapper is the real call) instead of
 * waiting forever. */
int tracer_lock_acquire(struct tracer_lock *l, struct thread_state *self);
/* Like acquire, but gives up after timeout_ms (fork preparation must not
 * wait forever for a thread stuck in the host's allocator). Returns 1 when
 * taken, 0 on re-entry or timeout. */
int tracer_lock_acquire_timeout(struct tracer_lock *l, struct thread_state *self, int timeout_ms);
/* Takes it only if free: 1 taken, 0 not. */
int tracer_lock_try(struct tracer_lock *l, struct thread_state *self);
void tracer_lock_release(struct tracer_lock *l);
/* Whether `self` holds it (or is taking it). */
int tracer_lock_held_by(const struct tracer_lock *l, const struct thread_state *self);
/* In a forked child, where the threads that may have held it are gone:
 * free again whatever its state. */
void tracer_lock_reset(struct tracer_lock *l);

/* fork(): prepare takes the lock (waiting at most 5 s, so a thread stuck
 * in the host's allocator cannot hang the fork) and notes in the lock
 * whether it did; the parent releases what prepare took; the child frees
 * what prepare took or what a vanished thread held, and returns 1 when the
 * data the lock protects may be half-updated (held by a thread that is
 * gone), so the caller can stop using it in the child. A lock this thread
 * held when it forked (fork() from a signal handler) stays with the code it
 * interrupted. None of them writes a page it does not have to: after fork
 * every written page costs a copy-on-write fault. */
void tracer_lock_fork_prepare(struct tracer_lock *l, struct thread_state *self);
void tracer_lock_fork_parent(struct tracer_lock *l);
int tracer_lock_fork_child(struct tracer_lock *l, struct thread_state *self);

/* Futex helpers on a 32-bit word, for the few other waits of the tracer
 * (a report in flight). Raw syscalls: no cancellation point, no wrapper. */
void tracer_futex_wait(int *word, int expected, int timeout_ms);
/* CLOCK_MONOTONIC in ms; in a strict sandbox (no clock), the time this
 * thread spent waiting in tracer_futex_wait(), which is all a deadline
 * needs. */
long tracer_monotonic_ms(void);
void tracer_futex_wake_all(int *word);

#endif
