/* The held-lock stack: push, find, remove. Callers are the wrappers, on the
 * fast path, so these touch only this thread's TLS. */
#include "thread_state.h"
#include "report.h"

__thread struct thread_state tracer_thread __attribute__((tls_model("initial-exec")));

int held_lock_push(struct thread_state *ts, const void *lock, enum held_kind kind,
		   uintptr_t ip, int trylock)
{
	if (__builtin_expect(ts->depth >= MAX_LOCK_DEPTH, 0)) {
		ts->untracked++;
		report_limit_once("MAX_LOCK_DEPTH too low!",
				  "lock depth limit reached: deeper locks of this thread are not tracked");
		return 0;
	}
	struct held_lock *h = &ts->held[ts->depth++];
	h->lock = lock;
	h->acquire_ip = ip;
	h->kind = (uint8_t)kind;
	h->flavor = FLAVOR_NONE;
	h->underlying = FLAVOR_NONE;
	h->trylock = (uint8_t)trylock;
	if (kind == HELD_RCU_READ)
		ts->nr_readers++;
	else
		ts->nr_locks++;
	return 1;
}

int held_lock_find(const struct thread_state *ts, const void *lock, unsigned kind_mask)
{
	for (int i = (int)ts->depth - 1; i >= 0; i--)
		if (ts->held[i].lock == lock && (kind_mask & KIND_BIT(ts->held[i].kind)))
			return i;
	return -1;
}

int held_reader_find(const struct thread_state *ts, enum rcu_flavor flavor, const void *domain)
{
	for (int i = (int)ts->depth - 1; i >= 0; i--) {
		const struct held_lock *h = &ts->held[i];
		if (h->kind == HELD_RCU_READ && h->flavor == flavor &&
		    (flavor != FLAVOR_srcu || h->lock == domain))
			return i;
	}
	return -1;
}

int held_reader_on(const struct thread_state *ts, enum rcu_flavor underlying)
{
	for (int i = (int)ts->depth - 1; i >= 0; i--)
		if (ts->held[i].kind == HELD_RCU_READ && ts->held[i].underlying == underlying)
			return 1;
	return 0;
}

void held_lock_remove(struct thread_state *ts, int i)
{
	if (ts->held[i].kind == HELD_RCU_READ)
		ts->nr_readers--;
	else
		ts->nr_locks--;
	for (unsigned j = (unsigned)i + 1; j < ts->depth; j++)
		ts->held[j - 1] = ts->held[j];
	ts->depth--;
}
