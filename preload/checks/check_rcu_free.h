/* The bug RCU exists to prevent: memory freed while another thread, inside
 * its read-side critical section, holds a pointer it dereferenced there
 * (an updater that skipped the grace period). Checked at free(), realloc()
 * and munmap() against every reader's dereference set (rcu_deref_set.h),
 * whether or not the reader touches the memory again. */
#ifndef LOCKDEP_RCU_CHECK_RCU_FREE_H
#define LOCKDEP_RCU_CHECK_RCU_FREE_H

#include <stddef.h>
#include <stdint.h>
#include "rcu/rcu_deref_set.h"

struct rcu_free_check {
	const char *what;      /* "free", "realloc", "munmap" */
	uintptr_t lo;
	size_t size;           /* 0: not known (an allocator without a size function) */
	unsigned nr;           /* readers holding it */
	struct rcu_holder holders[MAX_HOLDERS_REPORTED];
};

/* Whether a free by this thread may be checked at all: with any set
 * advertised (one load and a branch otherwise), and never for the tracer's
 * own memory, inside liburcu's calls (defer_rcu() and rcu_defer_barrier()
 * run callbacks after a grace period) or on liburcu's own threads (the
 * call_rcu() workers): those frees come after a grace period by
 * construction. */
static inline int rcu_free_check_wanted(const struct thread_state *ts)
{
	return rcu_deref_sets_may_be_open() && !(ts->in_tracer | ts->in_urcu | ts->urcu_worker);
}

/* Finds the readers holding [p, p + size) into c; non-zero if any. Before
 * the memory is released: once it is, another thread may reuse the address
 * and a reader dereference the new object. */
int check_rcu_free(struct thread_state *ts, const char *what, const void *p, size_t size,
		   struct rcu_free_check *c);

/* "BUG: RCU-protected object freed while a reader holds it!", once per
 * freeing site (ip: the return address of the free() call). */
void print_rcu_object_freed(struct thread_state *ts, uintptr_t ip, const struct rcu_free_check *c);

#endif
