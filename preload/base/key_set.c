/* Inserting into the key sets; lookups are inline in key_set.h. */
#include "base/key_set.h"

int key_set_insert_within(uint64_t *set, uint32_t size, uint64_t key, uint32_t probes)
{
	uint32_t h = key_set_home(key, size);
	for (uint32_t probe = 0; probe < probes; probe++) {
		uint64_t *slot = &set[(h + probe) & (size - 1)];
		uint64_t expected = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
		if (expected == key)
			return 1;
		if (expected)
			continue;   /* another key's: no locked instruction */
		if (__atomic_compare_exchange_n(slot, &expected, key, 0, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
			return 2;
		if (expected == key)
			return 1;   /* a racing insert of the same key */
	}
	return 0;
}

void key_cache_insert(uint64_t *set, uint32_t size, uint64_t key)
{
	if (key_set_insert(set, size, key))
		return;
	/* Racing inserts may lose their keys: they are validated again. */
	for (uint32_t i = 0; i < size; i++)
		__atomic_store_n(&set[i], 0, __ATOMIC_RELAXED);
	key_set_insert(set, size, key);
}
