/* The out-of-line parts of the held-lock stack; the fast paths are inline
 * in thread_state.h. */
#include <pthread.h>
#include "thread_state.h"
#include "report.h"
#include "lock_classes.h"
#include "lock_stat.h"

__thread struct thread_state tracer_thread __attribute__((tls_model("initial-exec")));
unsigned acquire_unusual_globals;

void held_lock_overflow(struct thread_state *ts, const void *lock, enum held_kind kind, uintptr_t ip)
{
	uint32_t class_id = ts->in_tracer ? 0 : lock_class_of(lock, ip);
	for (unsigned i = 0; class_id && i < ts->depth; i++) {
		struct held_lock *h = &ts->held[i];
		if (h->kind != kind || held_class_lookup(h) != class_id)
			continue;
		if (!(h->attr & HELD_ATTR_AGGREGATE)) {
			h->attr |= HELD_ATTR_AGGREGATE;
			ts->nr_aggregates++;
		}
		if (h->references < UINT16_MAX) {
			h->references++;
			return;
		}
	}
	ts->untracked++;
	report_depth_limit(ts, lock, ip);
}

int held_aggregate_release(struct thread_state *ts, const void *lock, unsigned kind_mask)
{
	uint32_t class_id = lock_class_peek(lock);
	for (int i = (int)ts->depth - 1; class_id && i >= 0; i--) {
		struct held_lock *h = &ts->held[i];
		if (!held_is_aggregate(h) || !(kind_mask & KIND_BIT(h->kind)) || h->class_id != class_id)
			continue;
		if (h->references > 1)
			h->references--;
		else
			held_lock_remove(ts, i);
		return 1;
	}
	return 0;
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
		if (ts->hold_stamps)
			lock_stat_moved(ts, j, j + 1);
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
