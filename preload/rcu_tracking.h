/* Read-side sections as held-lock entries: what the liburcu wrappers and
 * the header's bh/sched/SRCU flavors share. */
#ifndef LOCKDEP_RCU_RCU_TRACKING_H
#define LOCKDEP_RCU_RCU_TRACKING_H

#include "lock_tracking.h"

static inline void rcu_read_acquired(struct thread_state *ts, enum rcu_flavor flavor,
				     enum rcu_flavor underlying, const void *domain, uintptr_t ip)
{
	if (held_lock_push(ts, domain, HELD_RCU_READ, ip, 0)) {
		struct held_lock *h = &ts->held[ts->depth - 1];
		h->flavor = (uint8_t)flavor;
		h->underlying = (uint8_t)underlying;
	}
	ts->nesting[flavor]++;
}

/* The innermost section of flavor (and SRCU domain) ends; at nesting 0
 * that is the kernel's bad unlock balance. */
static inline void rcu_read_released(struct thread_state *ts, enum rcu_flavor flavor,
				     const void *domain, uintptr_t ip)
{
	int i = held_reader_find(ts, flavor, domain);
	if (likely(i >= 0)) {
		held_lock_remove(ts, i);
		ts->nesting[flavor]--;
	} else if (ts->untracked && ts->nesting[flavor]) {
		ts->untracked--;
		ts->nesting[flavor]--;
	} else {
		print_bad_unlock_balance(ts, ip, domain, flavor_lock_name[flavor]);
	}
}

#endif
