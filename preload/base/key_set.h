/* Lock-free sets of 64-bit keys (0 is never a key), open addressing with
 * linear probing: the validated lock chains, the instance pairs, the
 * cycles reported. Lookups stop at the first free slot, so a long probe
 * limit costs nothing in the common case; inserts may give up after
 * KEY_SET_PROBES (linear probing clusters: at a fifth full, runs of 8+
 * taken slots exist in a 64K table). Sizes are powers of two. */
#ifndef LOCKDEP_RCU_KEY_SET_H
#define LOCKDEP_RCU_KEY_SET_H

#include <stdint.h>

#define KEY_SET_PROBES 64

static inline uint32_t key_set_home(uint64_t key, uint32_t size)
{
	return (uint32_t)(key >> 40) & (size - 1);
}

/* Lookups and inserts with a probe bound of their own (a set whose inserts
 * never go further than `probes` slots from home need not look further). */
static inline int key_set_contains_within(const uint64_t *set, uint32_t size, uint64_t key, uint32_t probes)
{
	uint32_t h = key_set_home(key, size);
	for (uint32_t probe = 0; probe < probes; probe++) {
		uint64_t cur = __atomic_load_n(&set[(h + probe) & (size - 1)], __ATOMIC_ACQUIRE);
		if (cur == key)
			return 1;
		if (!cur)
			return 0;
	}
	return 0;
}

static inline int key_set_contains(const uint64_t *set, uint32_t size, uint64_t key)
{
	return key_set_contains_within(set, size, key, KEY_SET_PROBES);
}

/* 2 when this call put the key in, 1 when it was there already, 0 when
 * there was no room within `probes` slots. A slot is read before it is
 * compare-and-swapped: a full run costs loads, not locked instructions. */
int key_set_insert_within(uint64_t *set, uint32_t size, uint64_t key, uint32_t probes);

static inline int key_set_insert(uint64_t *set, uint32_t size, uint64_t key)
{
	return key_set_insert_within(set, size, key, KEY_SET_PROBES);
}

/* A cache rather than a set: when there is no room, the whole set is
 * emptied and the key inserted into it (what it forgets is found again
 * later, at a cost). Never fails. */
void key_cache_insert(uint64_t *set, uint32_t size, uint64_t key);

#endif
