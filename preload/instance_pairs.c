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
	uint64_t *bucket = instance_pair_table[instance_pair_bucket(held, lock)];
	uint64_t forward = order_key(held, gen_held, lock, gen_lock);
	uint64_t backward = forward ^ 2;
	int inverted = 0;
	/* A bucket fills from its first slot and a slot is never emptied
	 * (evicting overwrites), so the first free slot ends the pairs. */
	for (int i = 0; i < INSTANCE_PAIR_SLOTS_PER_BUCKET; i++) {
		uint64_t cur = __atomic_load_n(&bucket[i], __ATOMIC_RELAXED);
		if (!cur) {
			uint64_t expected = 0;
			if (__atomic_compare_exchange_n(&bucket[i], &expected, forward, 0, __ATOMIC_RELAXED,
							__ATOMIC_RELAXED))
				return inverted;
			cur = expected;   /* a racing insert: look at what it put there */
		}
		if ((cur | 2) == (forward | 2)) {
			if (cur == forward)
				return 0;   /* this order again: reported, if ever, when it first came */
			inverted = 1;
		}
	}
	/* Full: evict one, chosen by the key so that two pairs sharing a
	 * bucket do not keep evicting the same third one; never the other
	 * order of this pair. */
	int victim = (int)(forward >> 59) & (INSTANCE_PAIR_SLOTS_PER_BUCKET - 1);
	if (__atomic_load_n(&bucket[victim], __ATOMIC_RELAXED) == backward)
		victim = (victim + 1) & (INSTANCE_PAIR_SLOTS_PER_BUCKET - 1);
	__atomic_store_n(&bucket[victim], forward, __ATOMIC_RELAXED);
	return inverted;
}

void instance_pairs_clear(void)
{
	for (uint32_t b = 0; b < INSTANCE_PAIR_BUCKETS; b++)
		for (int i = 0; i < INSTANCE_PAIR_SLOTS_PER_BUCKET; i++)
			__atomic_store_n(&instance_pair_table[b][i], 0, __ATOMIC_RELAXED);
}
