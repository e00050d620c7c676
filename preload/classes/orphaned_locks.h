/* orphaned_locks.h - locks a thread ended holding, of a class whose locks
 * are handed between threads (a mutex used as a semaphore: xfs_repair's
 * prefetch threads lock buffers that the main thread releases, sometimes
 * after they are gone). Such a lock is not reported as leaked when its
 * taker ends: it is kept here, so that its later release by another thread
 * is known for the same idiom (told once for the class), and a release of
 * a lock nobody took is still told apart.
 *
 * A fixed table of slots claimed by compare-and-swap: thread ends and
 * releases of unheld locks are rare, and never on a fast path. A full
 * table refuses (the caller then reports the thread's end as before). */
#ifndef LOCKDEP_RCU_ORPHANED_LOCKS_H
#define LOCKDEP_RCU_ORPHANED_LOCKS_H

#include <stdint.h>

#define MAX_ORPHANED_LOCKS 256

/* Keeps the lock (instance generation `generation`, lock_instances.h); 0
 * when the table is full. */
int orphaned_lock_add(const void *lock, uint32_t generation);

/* Takes out the orphan of this lock instance, if there is one: 1, else 0.
 * An orphan of an older instance at the same address (the memory was made
 * a lock again since) is dropped. */
int orphaned_lock_take(const void *lock, uint32_t generation);

/* The lock's instance ends (destroyed, initialized again, its memory freed
 * or unmapped: lock_instances.c): an orphan of it can never be released. */
void orphaned_lock_forget(const void *lock);

#endif
