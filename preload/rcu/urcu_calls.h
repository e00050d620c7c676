/* What the liburcu wrappers share: whose call this is, whether the thread
 * is in a read side of a flavor (seen by the wrappers, or inlined), and
 * the program's call site for a report. */
#ifndef LOCKDEP_RCU_URCU_CALLS_H
#define LOCKDEP_RCU_URCU_CALLS_H

#include "runtime/thread_state.h"
#include "rcu/urcu_reader_state.h"

/* The library's own calls (QSBR synchronize_rcu -> thread_offline,
 * defer_rcu -> synchronize_rcu, ...) and the header's proxied calls are
 * part of the call that made them, not the program's. */
static inline int urcu_call_is_ours(const struct thread_state *ts)
{
	return !(ts->in_tracer | ts->in_urcu | ts->in_proxy);
}

/* In a read side whose protection comes from liburcu flavor f: one the
 * wrappers saw begin (or a header flavor built on f), or an inlined one. */
static inline int urcu_in_read_side(const struct thread_state *ts, enum rcu_flavor f)
{
	return (ts->nr_readers && held_reader_on(ts, f)) || urcu_inline_nesting(f) > 0;
}

/* Registered with f as liburcu wants a caller of call_rcu() and friends:
 * registered, and for QSBR online. */
static inline int urcu_registered_reader(const struct thread_state *ts, enum rcu_flavor f)
{
	/* The flavor table itself, not flavor_needs_registration[]: a
	 * wrapper's flavor is a constant, and this folds away. */
	int needs = 0;
	switch (f) {
#define FLAVOR_REGISTRATION_CASE(name, reg) case FLAVOR_##name: needs = reg; break;
	URCU_FLAVORS(FLAVOR_REGISTRATION_CASE)
#undef FLAVOR_REGISTRATION_CASE
	default: break;
	}
	if (!needs)
		return 1;
	if (ts->registered[f] != URCU_REGISTERED)
		return 0;
	return f != FLAVOR_qsbr || qsbr_thread_is_reader(ts);
}

/* Runs the real call as liburcu's own: what it calls back into the
 * wrappers is part of it. */
#define URCU_INNER(ts, call) do { (ts)->in_urcu++; call; (ts)->in_urcu--; } while (0)

/* The program's call for a report made at ip: ip itself, or, when ip is
 * inside a liburcu library (the lock-free hash table calls the flavor
 * through pointers that lead to the wrappers), the first frame of the
 * current stack outside liburcu's libraries. Slow path. */
uintptr_t urcu_program_site(uintptr_t ip);

/* Whether the code at addr belongs to a liburcu library. */
int is_urcu_code(uintptr_t addr);

#endif
