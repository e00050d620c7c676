/* The out-of-line parts of the held-lock stack; the fast paths are inline
 * in thread_state.h. */
#include "thread_state.h"
#include "report.h"

__thread struct thread_state tracer_thread __attribute__((tls_model("initial-exec")));

void held_lock_overflow(struct thread_state *ts)
{
	ts->untracked++;
	report_limit_once("MAX_LOCK_DEPTH too low!",
			  "lock depth limit reached: deeper locks of this thread are not tracked");
}

int held_reader_on(const struct thread_state *ts, enum rcu_flavor underlying)
{
	for (int i = (int)ts->depth - 1; i >= 0; i--)
		if (ts->held[i].kind == HELD_RCU_READ && ts->held[i].underlying == underlying)
			return 1;
	return 0;
}
