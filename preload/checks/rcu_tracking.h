/* Read-side sections as held-lock entries: what the liburcu wrappers and
 * the header's bh/sched/SRCU flavors share. */
#ifndef LOCKDEP_RCU_RCU_TRACKING_H
#define LOCKDEP_RCU_RCU_TRACKING_H

#include "checks/lock_tracking.h"
#include "rcu/rcu_deref_set.h"
#include "checks/lock_order_report.h"

/* The class of a read side: its flavor, or its SRCU domain. */
static inline uint32_t rcu_read_class(enum rcu_flavor flavor, const void *domain)
{
	if (flavor == FLAVOR_srcu)
		return lock_class_for_key((uintptr_t)domain, CLASS_SRCU, 0, NULL);
	return rcu_flavor_class(flavor);
}

/* A read side is a recursive read acquisition of its class: it never
 * waits, but what it holds afterwards orders against grace periods. */
static inline void rcu_read_acquired(struct thread_state *ts, enum rcu_flavor flavor,
				     enum rcu_flavor underlying, const void *domain, uintptr_t ip)
{
	uint32_t class_id = rcu_read_class(flavor, domain);
	/* Counted first: liburcu's own nesting already says 1 (the real call
	 * ran), and a section the wrapper saw is no inlined one of its own. */
	ts->nesting[flavor]++;
	/* The held entries gain an edge into the flavor's class. Taken for
	 * recursive read, such an edge is never on a strong path (it reaches
	 * a class only ever held for read: lock_graph.c's search never goes
	 * on from there), so it is for the graph's picture only; the read
	 * sides no wrapper saw (QSBR online, inlined) are not drawn, which
	 * keeps a section begun with nothing held at a few stores. */
	if (unlikely(ts->depth))
		lock_graph_acquire(ts, domain, class_id, ACQUIRE_RLOCK, ip, &lock_order_reports);
	held_lock_push(ts, domain, HELD_RCU_READ, ip, class_id, HELD_ATTR_RCU(flavor, underlying));
}

/* The innermost section of flavor (and SRCU domain) ends; at nesting 0
 * that is the kernel's bad unlock balance. The last one to end closes the
 * thread's dereference set. Called before the real unlock. */
static inline __attribute__((always_inline)) void rcu_read_released(struct thread_state *ts, enum rcu_flavor flavor,
				     const void *domain, uintptr_t ip)
{
	rcu_deref_perturb(ts);
	int i = held_reader_find(ts, flavor, domain);
	if (likely(i >= 0)) {
		held_lock_remove(ts, i);
		ts->nesting[flavor]--;
		if (!ts->nr_readers)
			rcu_deref_sections_ended(ts);
	} else if (ts->untracked && ts->nesting[flavor]) {
		ts->untracked--;
		ts->nesting[flavor]--;
	} else {
		print_bad_unlock_balance(ts, ip, domain, flavor_lock_name[flavor]);
	}
}

/* The release fast path of the liburcu wrappers (perturb off): the
 * innermost entry is the section that ends, and the set it closes (if
 * any) is not an online QSBR reader's; it is retired here as
 * held_lock_remove() does, with no call, so the wrapper keeps no frame to
 * speak of. Returns 0, having changed nothing, for anything else: then the
 * wrapper calls rcu_read_released(). */
static inline __attribute__((always_inline)) int rcu_read_release_innermost(struct thread_state *ts,
									    enum rcu_flavor flavor)
{
	unsigned d = ts->depth;
	if (unlikely(!d))
		return 0;
	struct held_lock *h = &ts->held[d - 1];
	struct rcu_deref_set *s = ts->deref_set;
	if (unlikely(h->kind != HELD_RCU_READ || held_flavor(h) != flavor || flavor == FLAVOR_srcu ||
		     (ts->nr_readers == 1 && s && ts->registered[FLAVOR_qsbr] == 1)))
		return 0;
	ts->nr_readers--;
	signal_fence();
	h->kind = HELD_NONE;
	signal_fence();
	ts->depth = d - 1;
	ts->nesting[flavor]--;
	if (!ts->nr_readers && s)
		rcu_deref_set_close(s);   /* the outermost section ended */
	return 1;
}

/* synchronize_rcu(), rcu_barrier(), synchronize_srcu(): a write acquisition
 * and release of the flavor's class (the kernel's lock_sync()), so a lock
 * held here that readers take inside their read side is a deadlock. */
static inline void rcu_grace_period_wait(struct thread_state *ts, enum rcu_flavor flavor,
					 const void *domain, uintptr_t ip)
{
	lock_graph_acquire(ts, domain, rcu_read_class(flavor, domain), ACQUIRE_SYNC, ip, &lock_order_reports);
}

#endif
