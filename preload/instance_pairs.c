/* The same-class instance-pair cache (instance_pairs.h). */
#include "instance_pairs.h"

uint64_t instance_pair_table[INSTANCE_PAIR_BUCKETS][INSTANCE_PAIR_SLOTS_PER_BUCKET] __attribute__((aligned(64)));

static uint64_t mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x9E3779B97F4A7C15ull;
	return h ^ (h >> 31);
}

/* The stored form of one order: a hash of the two instances (addresses
 * and generations, so memory reused for new locks is new instances) with
 * bit 1 saying which of them came first, and bit 0 set (0 is a free slot).
 * The two orders of a pair differ in bit 1 alone. */
static uint64_t order_key(const void *first, uint32_t gen_first, const void *second, uint32_t gen_second)
{
	uint64_t x = (uint64_t)(uintptr_t)first ^ (uint64_t)gen_first << 48;
	uint64_t y = (uint64_t)(uintptr_t)second ^ (uint64_t)gen_second << 48;
	uint64_t k = mix(mix(0x6c6f636b, x < y ? x : y), x < y ? y : x);
	return (k & ~3ull) | (uint64_t)(x > y) << 1 | 1;
}

int instance_pairs_record(const void *held, uint32_t gen_held, const void *lock, uint32_t gen_lock)
{
	uint64_t forward = order_key(held, gen_held, lock, gen_lock);
	/* The pair's two slots: chosen by the key, which both orders share
	 * (bit 1 aside), in the bucket the addresses chose. */
	uint64_t *set = &instance_pair_table[instance_pair_bucket(held, lock)][(forward >> 58) & 6];
	uint64_t newer = __atomic_load_n(&set[0], __ATOMIC_RELAXED);
	uint64_t older = __atomic_load_n(&set[1], __ATOMIC_RELAXED);
	if (__builtin_expect((newer | 2) == (forward | 2) || (older | 2) == (forward | 2), 0)) {
		if (newer == forward || older == forward)
			return 0;   /* this order again: reported, if ever, when it first came */
		/* The other order is there: an inversion. Both orders stay. */
		__atomic_store_n(&set[1], forward ^ 2, __ATOMIC_RELAXED);
		__atomic_store_n(&set[0], forward, __ATOMIC_RELAXED);
		return 1;
	}
	/* The newest two of the set: the newer one moves down, the older one
	 * goes (two threads inserting at once may lose a pair: a cache). */
	__atomic_store_n(&set[1], newer, __ATOMIC_RELAXED);
	__atomic_store_n(&set[0], forward, __ATOMIC_RELAXED);
	return 0;
}

void instance_pairs_clear(void)
{
	for (uint32_t b = 0; b < INSTANCE_PAIR_BUCKETS; b++)
		for (int i = 0; i < INSTANCE_PAIR_SLOTS_PER_BUCKET; i++)
			__atomic_store_n(&instance_pair_table[b][i], 0, __ATOMIC_RELAXED);
}
