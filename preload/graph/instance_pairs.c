/* The same-class instance-pair cache (instance_pairs.h). */
#include "graph/instance_pairs.h"

struct instance_pair_slot instance_pair_table[INSTANCE_PAIR_BUCKETS][INSTANCE_PAIR_SLOTS_PER_BUCKET]
	__attribute__((aligned(64)));

void instance_pairs_clear(void)
{
	for (uint32_t b = 0; b < INSTANCE_PAIR_BUCKETS; b++)
		for (int i = 0; i < INSTANCE_PAIR_SLOTS_PER_BUCKET; i++) {
			__atomic_store_n(&instance_pair_table[b][i].key, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&instance_pair_table[b][i].where, 0, __ATOMIC_RELAXED);
		}
}
