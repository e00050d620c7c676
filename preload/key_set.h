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

static inline int key_set_contains(const uint64_t *set, uint32_t size, uint64_t key)
{
	uint32_t h = key_set_home(key, size);
	for (uint32_t probe = 0; probe < KEY_SET_PROBES; probe++) {
		uint64_t cur = __atomic_load_n(&set[(h + probe) & (size - 1)], __ATOMIC_ACQUIRE);
		if (cur == key)
			return 1;
		if (!cur)
			return 0;
	}
	return 0;
}

/* 2 when this call put the key in, 1 when it was there already, 0 when
 * there was no room. */
int key_set_insert(uint64_t *set, uint32_t size, uint64_t key);

/* A cache rather than a set: when there is no room, the whole set is
 * emptied and the key inserted into it (what it forgets is found again
 * later, at a cost). Never fails. */
void key_cache_insert(uint64_t *set, uint32_t size, uint64_t key);

/* A lossy set: when there is no room, the key replaces the one at its home
 * slot (what is forgotten is never reported wrongly: a lost pair is a
 * missed inversion, not a false one). */
void key_lossy_insert(uint64_t *set, uint32_t size, uint64_t key);

#endif
