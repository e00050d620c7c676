/* Every thread's tracer state, for the checks that look at other threads:
 * who holds a lock another thread releases (a mutex used as a semaphore),
 * and later the hung-task dump of all locks held. A thread is listed from
 * its start (the trampoline; the main thread from the constructor) to its
 * last destructor round, so its TLS is valid while it is listed. Other
 * threads' held-lock stacks are read without their cooperation, as the
 * kernel's debug_show_all_locks() does: a racing update shows an entry
 * one way or the other, never a freed one. */
#ifndef LOCKDEP_RCU_THREAD_REGISTRY_H
#define LOCKDEP_RCU_THREAD_REGISTRY_H

#include <stddef.h>
#include "runtime/thread_state.h"

#define MAX_REGISTERED_THREADS 16384

void thread_registry_add(struct thread_state *ts);
void thread_registry_remove(struct thread_state *ts);

/* Calls fn for every listed thread but `self` until it returns non-zero;
 * returns that value. The registry lock is held meanwhile: fn must not
 * take another internal lock. Returns -1 when the registry lock is this
 * thread's already (a signal handler). */
int thread_registry_find(struct thread_state *self,
			 int (*fn)(struct thread_state *other, void *arg), void *arg);

/* A copy of what another thread holds and waits for, taken under the
 * registry lock (so its TLS is valid while read), to be printed after. */
struct thread_snapshot {
	const struct thread_state *ts;   /* identity only: never dereferenced later */
	int tid;
	unsigned depth, untracked;
	struct held_lock held[MAX_LOCK_DEPTH];
	uint16_t nesting[NR_FLAVORS];
	uint8_t registered[NR_URCU_FLAVORS];
	unsigned long urcu_ctr[NR_URCU_FLAVORS];   /* liburcu's reader ctr, 0 unknown */
	uintptr_t qsbr_since_ip;   /* QSBR: where its protection began, and how */
	uint8_t qsbr_since_what;
	struct wait_state wait;
};

/* Copies every listed thread (self included when listed), at most max;
 * returns how many, or 0 when the registry lock is this thread's. `more`
 * (may be NULL) adds what a layer above keeps of a thread (liburcu's reader
 * ctr), still under the registry lock. */
size_t thread_registry_snapshot(struct thread_state *self, struct thread_snapshot *out, size_t max,
				void (*more)(const struct thread_state *t, struct thread_snapshot *s));
/* The number of listed threads now. */
size_t thread_registry_count(void);
/* Whether a thread of this tid is listed now (a thread that ended is not). */
int thread_registry_has_tid(struct thread_state *self, int tid);

/* Threads in the order of their creation: pthread_create() takes the next
 * number for the thread it creates (thread_state.start_seq), so that an
 * event stamped with thread_start_seq_now() is known to have happened
 * before every thread numbered after it existed. */
uint32_t thread_start_seq_next(void);
uint32_t thread_start_seq_now(void);

void thread_registry_fork_prepare(struct thread_state *self);
void thread_registry_fork_parent(void);
void thread_registry_fork_child(struct thread_state *self);

#endif
