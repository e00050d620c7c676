/* Lock statistics (option lock_stat=1): the kernel's CONFIG_LOCK_STAT and
 * its /proc/lock_stat table, per lock class, printed at exit.
 *
 * What is measured, as the kernel does:
 *  - contentions: a blocking acquisition that could not take the lock at
 *    once. The wrappers try the lock first (the real trylock; mutrace does
 *    the same) and only on EBUSY time the real blocking call: waittime is
 *    that call's duration. A lock taken at once costs no clock read.
 *  - holdtime, from the acquisition to the release (acquisitions is its
 *    count: locks still held at exit are not counted);
 *  - bounces: the acquisition (or the contention) happened on another CPU
 *    than the previous acquisition of the same lock, a cache line that
 *    moved. The previous CPU is kept in a table by lock address, so two
 *    locks sharing a slot may count a bounce that was not (rare);
 *  - contention points: the call sites that had to wait, and the contending
 *    points: where the lock they waited for had been taken (its holder's
 *    acquisition, from the same table), four each per class, the first
 *    seen (the kernel's LOCKSTAT_POINTS).
 * Reader and writer sides of an rwlock class are counted apart (the
 * kernel's -R and -W lines).
 *
 * Off, it costs one predictable branch on a global per acquisition and
 * release. On, every acquisition reads the clock, looks up its class and
 * updates the class's counters with atomics; docs/performance.md gives the cost. */
#ifndef LOCKDEP_RCU_LOCK_STAT_H
#define LOCKDEP_RCU_LOCK_STAT_H

#include <errno.h>
#include <stdint.h>
#include "runtime/thread_state.h"

#define LOCKSTAT_POINTS 4

extern int lock_stat_enabled;

/* Reads the option; maps the tables when it is on. */
void lock_stat_setup(void);

uint64_t lock_stat_now(void);

/* A blocking acquisition of `lock` at ip waited `waited` ns (read: the
 * reader side of an rwlock). */
void lock_stat_contended(struct thread_state *ts, const void *lock, uintptr_t ip, int read, uint64_t waited);
/* held[index] was just pushed: the lock is held from now. */
void lock_stat_acquired(struct thread_state *ts, unsigned index);
/* held[index] is about to go: its hold time ends. */
void lock_stat_released(struct thread_state *ts, unsigned index);
/* The thread's hold stamps move with its entries (held_lock_close_gap). */
void lock_stat_moved(struct thread_state *ts, unsigned to, unsigned from);
/* The thread is gone: its stamps' page goes back. */
void lock_stat_thread_end(struct thread_state *ts);
/* A forked child starts its own statistics. */
void lock_stat_fork_child(void);

/* At exit: the table to the report destination, a record per class to the
 * records file. */
void lock_stat_print(void);

/* Maps the thread's hold stamps now, not at its first acquisition: it is
 * about to enter a seccomp sandbox (sandbox.h). */
void lock_stat_prepare_thread(struct thread_state *ts);

#endif
