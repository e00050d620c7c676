/* perturb=1: seeded, reproducible delays and yields at lock acquisition,
 * lock release and read-side unlock, to widen race windows the way
 * rcutorture does (lockdep-rcu stress --perturb). Off: one load and a
 * predicted branch. */
#ifndef LOCKDEP_RCU_PERTURB_H
#define LOCKDEP_RCU_PERTURB_H

#include "runtime/thread_state.h"
#include "base/options.h"

void perturb_slow(struct thread_state *ts);

static inline void perturb_point(struct thread_state *ts)
{
	if (__builtin_expect(tracer_options.perturb, 0))
		perturb_slow(ts);
}

#endif
