/* The program's shared memory ranges (shared_mappings.h). */
#include "classes/shared_mappings.h"

struct shared_range {
	uintptr_t lo;   /* 0: free, or being filled */
	uintptr_t hi;   /* 0: free; set first, by the claim */
};

static struct shared_range ranges[MAX_SHARED_MAPPINGS];
static unsigned used;       /* high-water mark of the slots ever claimed */
static int overflowed;

void shared_mappings_add(uintptr_t lo, uintptr_t hi)
{
	if (lo >= hi)
		return;
	for (unsigned i = 0; i < MAX_SHARED_MAPPINGS; i++) {
		uintptr_t free_hi = 0;
		if (!__atomic_compare_exchange_n(&ranges[i].hi, &free_hi, hi, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_RELAXED))
			continue;
		__atomic_store_n(&ranges[i].lo, lo, __ATOMIC_RELEASE);
		unsigned seen = __atomic_load_n(&used, __ATOMIC_RELAXED);
		while (seen < i + 1 &&
		       !__atomic_compare_exchange_n(&used, &seen, i + 1, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			;
		return;
	}
	__atomic_store_n(&overflowed, 1, __ATOMIC_RELEASE);
}

static void release_slot(struct shared_range *r)
{
	__atomic_store_n(&r->lo, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&r->hi, 0, __ATOMIC_RELEASE);
}

void shared_mappings_remove(uintptr_t lo, uintptr_t hi)
{
	for (unsigned i = 0, n = __atomic_load_n(&used, __ATOMIC_ACQUIRE); i < n; i++) {
		uintptr_t r_lo = __atomic_load_n(&ranges[i].lo, __ATOMIC_ACQUIRE);
		uintptr_t r_hi = __atomic_load_n(&ranges[i].hi, __ATOMIC_ACQUIRE);
		if (r_lo && r_lo >= lo && r_hi <= hi)
			release_slot(&ranges[i]);
	}
}

void shared_mappings_remove_at(uintptr_t lo)
{
	for (unsigned i = 0, n = __atomic_load_n(&used, __ATOMIC_ACQUIRE); i < n; i++)
		if (lo && __atomic_load_n(&ranges[i].lo, __ATOMIC_ACQUIRE) == lo)
			release_slot(&ranges[i]);
}

int shared_mappings_overlap(uintptr_t lo, uintptr_t hi)
{
	if (__atomic_load_n(&overflowed, __ATOMIC_ACQUIRE))
		return 1;
	for (unsigned i = 0, n = __atomic_load_n(&used, __ATOMIC_ACQUIRE); i < n; i++) {
		uintptr_t r_lo = __atomic_load_n(&ranges[i].lo, __ATOMIC_ACQUIRE);
		uintptr_t r_hi = __atomic_load_n(&ranges[i].hi, __ATOMIC_ACQUIRE);
		if (r_lo && lo < r_hi && r_lo < hi)
			return 1;
	}
	return 0;
}
