/* instance_pairs.h - which instances of one lock class were taken nested,
 * and in which order: the part of lock-order validation that classes
 * cannot do (two accounts of one class, locked in address order, are
 * correct; the same two in both orders deadlock).
 *
 * A lossy cache, not a set: 64-byte buckets of four sets of two slots.
 * Both orders of a pair live in the same set, its bucket chosen by the two
 * addresses alone (so it can be prefetched as soon as the new lock is
 * known, before the generations that the stored key also holds are looked
 * up), its set by the key: two loads answer "seen in this order?" and "seen
 * in the other?", and a new pair goes in first and pushes the set's older
 * one out (the newest two stay). Recording is a few instructions and never
 * a scan: pairs among many locks rarely repeat, so most records are new.
 * Forgetting costs at most a missed inversion whose first order was evicted
 * before the second came (never a false one); the cache never stops
 * recording, however many pairs a program makes. */
#ifndef LOCKDEP_RCU_INSTANCE_PAIRS_H
#define LOCKDEP_RCU_INSTANCE_PAIRS_H

#include <stdint.h>

#define INSTANCE_PAIR_SLOTS_PER_BUCKET 8              /* one cache line */
#define INSTANCE_PAIR_BUCKETS (1u << 13)              /* power of two: 2^16 pairs, 512 KiB */

extern uint64_t instance_pair_table[INSTANCE_PAIR_BUCKETS][INSTANCE_PAIR_SLOTS_PER_BUCKET];

/* The bucket of the pair {a, b}, either order. */
static inline uint32_t instance_pair_bucket(const void *a, const void *b)
{
	uint64_t x = (uint64_t)(uintptr_t)a, y = (uint64_t)(uintptr_t)b;
	uint64_t h = ((x < y ? x : y) * 0x9E3779B97F4A7C15ull) ^ (x < y ? y : x);
	h *= 0xC2B2AE3D27D4EB4Full;
	return (uint32_t)(h >> 40) & (INSTANCE_PAIR_BUCKETS - 1);
}

/* Start loading the bucket of {a, b}: called before the lookups whose
 * results the key needs, so the misses overlap. */
static inline void instance_pairs_prefetch(const void *a, const void *b)
{
	__builtin_prefetch(instance_pair_table[instance_pair_bucket(a, b)], 0);
}

/* Records "`held` (instance generation gen_held) was held while `lock`
 * (gen_lock) was taken". Returns 1 when the other order of the same two
 * instances is recorded (an inversion), else 0. Lock-free; any thread, a
 * signal handler included. */
int instance_pairs_record(const void *held, uint32_t gen_held, const void *lock, uint32_t gen_lock);

/* Empties the cache (tests). */
void instance_pairs_clear(void);

#endif
