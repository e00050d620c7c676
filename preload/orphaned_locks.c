/* Orphaned locks: see orphaned_locks.h. A slot's `state` says who owns it:
 * 0 free, 1 being written or read by one thread, 2 published. */
#include "orphaned_locks.h"

struct orphan_slot {
	int state;
	uint32_t generation;
	const void *lock;
};

static struct orphan_slot slots[MAX_ORPHANED_LOCKS];

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
		__atomic_store_n(&slots[i].state, 2, __ATOMIC_RELEASE);
		return 1;
	}
	return 0;
}

int orphaned_lock_take(const void *lock, uint32_t generation)
{
	int found = 0;
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
		/* This instance's, or an older one's at the address: stale,
		 * dropped as well. */
		found |= slots[i].generation == generation;
		__atomic_store_n(&slots[i].state, 0, __ATOMIC_RELEASE);
	}
	return found;
}
