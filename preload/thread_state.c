/* The out-of-line parts of the held-lock stack; the fast paths are inline
 * in thread_state.h. */
#include "thread_state.h"
#include "report.h"

__thread struct thread_state tracer_thread __attribute__((tls_model("initial-exec")));

void held_lock_overflow(struct thread_state *ts, const void *lock, uintptr_t ip)
{
	ts->untracked++;
	report_depth_limit(ts, lock, ip);
}

void held_lock_close_gap(struct thread_state *ts, unsigned i)
{
	unsigned last = ts->depth - 1;
	for (unsigned j = i; j < last; j++) {
		struct held_lock *to = &ts->held[j];
		const struct held_lock *from = &ts->held[j + 1];
		to->kind = HELD_NONE;
		signal_fence();
		to->lock = from->lock;
		to->acquire_ip = from->acquire_ip;
		to->class_id = from->class_id;
		to->references = from->references;
		to->attr = from->attr;
		signal_fence();
		to->kind = from->kind;
		signal_fence();
	}
}

int held_reader_on(const struct thread_state *ts, enum rcu_flavor underlying)
{
	for (int i = (int)ts->depth - 1; i >= 0; i--)
		if (ts->held[i].kind == HELD_RCU_READ && held_underlying(&ts->held[i]) == underlying)
			return 1;
	return 0;
}
