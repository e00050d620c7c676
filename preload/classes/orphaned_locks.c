/* Orphaned locks: see orphaned_locks.h. A slot's `state` says who owns it:
 * 0 free, 1 being written or read by one thread, 2 published. `live`
 * counts the published ones, so that forgetting a lock costs one load
 * when there are none (the usual case). */
#include "classes/orphaned_locks.h"

struct orphan_slot {
	int state;
	uint32_t generation;
	const void *lock;
};

static struct orphan_slot slots[MAX_ORPHANED_LOCKS];
static int live;

int orphaned_lock_add(const void *lock, uint32_t generation)
{
	for (unsigned i = 0; i < MAX_ORPHANED_LOCKS; i++) {
		int expected = 0;
		if (__atomic_load_n(&slots[i].state, __ATOMIC_RELAXED) != 0 ||
		    !__atomic_compare_exchange_n(&slots[i].state, &expected, 1, 0, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		slots[i].lock = lock;
		slots[i].generation = generation;
		__atomic_fetch_add(&live, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&slots[i].state, 2, __ATOMIC_RELEASE);
		return 1;
	}
	return 0;
}

/* Drops every orphan of `lock`; returns whether one had this generation
 * (any_generation: whether there was one at all). */
static int drop(const void *lock, uint32_t generation, int any_generation)
{
	int found = 0;
	if (!__atomic_load_n(&live, __ATOMIC_RELAXED))
		return 0;
	for (unsigned i = 0; i < MAX_ORPHANED_LOCKS; i++) {
		int expected = 2;
		/* A look without claiming first: most slots are free or
		 * another lock's. */
		if (__atomic_load_n(&slots[i].state, __ATOMIC_ACQUIRE) != 2 || slots[i].lock != lock ||
		    !__atomic_compare_exchange_n(&slots[i].state, &expected, 1, 0, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		if (slots[i].lock != lock) {   /* replaced in between */
			__atomic_store_n(&slots[i].state, 2, __ATOMIC_RELEASE);
			continue;
		}
		found |= any_generation || slots[i].generation == generation;
		__atomic_fetch_sub(&live, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&slots[i].state, 0, __ATOMIC_RELEASE);
	}
	return found;
}

int orphaned_lock_take(const void *lock, uint32_t generation)
{
	/* An orphan of an older instance at this address is stale: dropped
	 * as well. */
	return drop(lock, generation, 0);
}

void orphaned_lock_forget(const void *lock)
{
	drop(lock, 0, 1);
}
