/* The same-class instance-pair cache (instance_pairs.h). */
#include "instance_pairs.h"

uint64_t instance_pair_table[INSTANCE_PAIR_BUCKETS][INSTANCE_PAIR_SLOTS_PER_BUCKET] __attribute__((aligned(64)));

void instance_pairs_clear(void)
{
	for (uint32_t b = 0; b < INSTANCE_PAIR_BUCKETS; b++)
		for (int i = 0; i < INSTANCE_PAIR_SLOTS_PER_BUCKET; i++)
			__atomic_store_n(&instance_pair_table[b][i], 0, __ATOMIC_RELAXED);
}
