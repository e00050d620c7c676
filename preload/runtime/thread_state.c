/* The out-of-line parts of the held-lock stack; the fast paths are inline
 * in thread_state.h. */
#include <pthread.h>
#include "runtime/thread_state.h"

__thread struct thread_state tracer_thread __attribute__((tls_model("initial-exec")));
unsigned acquire_unusual_globals;

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
		if (ts->hold_stamps) {   /* lock_stat's stamps move with their entries */
			ts->hold_stamps[j] = ts->hold_stamps[j + 1];
			ts->hold_stamps[j + 1] = 0;
		}
	}
}

int held_reader_on(const struct thread_state *ts, enum rcu_flavor underlying)
{
	for (int i = (int)ts->depth - 1; i >= 0; i--)
		if (ts->held[i].kind == HELD_RCU_READ && held_underlying(&ts->held[i]) == underlying)
			return 1;
	return 0;
}

/* The releasing thread posted the addresses (and set foreign_pending)
 * before its real unlock, so this runs before any re-acquisition of them
 * by this thread can be recorded. When the mailbox was full (pending is 2),
 * every held mutex is checked against the owner glibc records instead. */
void foreign_releases_apply(struct thread_state *ts)
{
	int pending = __atomic_exchange_n(&ts->foreign_pending, 0, __ATOMIC_ACQ_REL);
	if (pending == 2) {
		for (int i = (int)ts->depth - 1; i >= 0; i--) {
			const struct held_lock *h = &ts->held[i];
			if (h->kind == HELD_MUTEX && ((const pthread_mutex_t *)h->lock)->__data.__owner != ts->tid)
				held_lock_remove(ts, i);
		}
	}
	for (unsigned s = 0; s < sizeof(ts->foreign_released) / sizeof(ts->foreign_released[0]); s++) {
		const void *lock = __atomic_exchange_n(&ts->foreign_released[s], NULL, __ATOMIC_ACQ_REL);
		if (!lock)
			continue;
		int i = held_lock_find(ts, lock, KIND_ANY_LOCK);
		if (i >= 0)
			held_lock_remove(ts, i);
	}
}
