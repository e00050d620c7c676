/* instance_pairs.h - which instances of one lock class were taken nested,
 * and in which order: the part of lock-order validation that classes
 * cannot do (two accounts of one class, locked in address order, are
 * correct; the same two in both orders deadlock).
 *
 * A lossy cache, not a set: sets of two slots, two sets to a 64-byte line.
 * Both orders of a pair live in the same set, its line chosen by the two
 * addresses alone (prefetched before the generations are known), its place
 * in the line by the key they share:
 * two loads answer "seen in this order?" and "seen in the other?", and a
 * new pair goes in first and pushes the set's older one out (the newest
 * two stay). Each order keeps where its second lock was taken, for the
 * report of its inverse (the kernel's "-> #1" entry). Recording is a few
 * instructions and never a scan: pairs among many locks rarely repeat, so
 * most records are new.
 * Forgetting costs at most a missed inversion whose first order was evicted
 * before the second came (never a false one); the cache never stops
 * recording, however many pairs a program makes. */
#ifndef LOCKDEP_RCU_INSTANCE_PAIRS_H
#define LOCKDEP_RCU_INSTANCE_PAIRS_H

#include <stdint.h>

#define INSTANCE_PAIR_SLOTS_PER_BUCKET 4              /* one cache line */
#define INSTANCE_PAIR_BUCKET_BITS 13
#define INSTANCE_PAIR_BUCKETS (1u << INSTANCE_PAIR_BUCKET_BITS)  /* 2^15 pairs, 512 KiB */

/* One order of a pair: its key, and where its second lock was taken (the
 * caller of the lock call) folded with the key, so that a slot read while
 * another thread rewrites it names no site rather than a wrong one. */
struct instance_pair_slot {
	uint64_t key;
	uint64_t where;
};

extern struct instance_pair_slot instance_pair_table[INSTANCE_PAIR_BUCKETS][INSTANCE_PAIR_SLOTS_PER_BUCKET];

static inline uint64_t instance_pair_mix(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x9E3779B97F4A7C15ull;
	return h ^ (h >> 31);
}

/* The stored form of one order: a hash of the two instances (addresses
 * and generations, so memory reused for new locks is new instances) with
 * bit 1 saying which of them came first, and bit 0 set (0 is a free slot).
 * The two orders of a pair differ in bit 1 alone. */
static inline uint64_t instance_pair_order_key(const void *first, uint32_t gen_first, const void *second,
					       uint32_t gen_second)
{
	uint64_t x = (uint64_t)(uintptr_t)first ^ (uint64_t)gen_first << 48;
	uint64_t y = (uint64_t)(uintptr_t)second ^ (uint64_t)gen_second << 48;
	uint64_t k = instance_pair_mix(instance_pair_mix(0x6c6f636b, x < y ? x : y), x < y ? y : x);
	return (k & ~3ull) | (uint64_t)(x > y) << 1 | 1;
}

/* The line a pair of instances is recorded in, from their addresses alone
 * (both orders alike): known as soon as the new lock is, so it can be
 * prefetched before the generations are read from the locks' memory. */
static inline struct instance_pair_slot *instance_pair_bucket(const void *a, const void *b)
{
	uint64_t x = (uint64_t)(uintptr_t)a ^ (uint64_t)(uintptr_t)b;
	return instance_pair_table[(x * 0x9E3779B97F4A7C15ull) >> (64 - INSTANCE_PAIR_BUCKET_BITS)];
}

/* The site a slot holds for its key, or 0 (torn by a concurrent rewrite:
 * user-space code addresses have their top 16 bits clear). */
static inline uintptr_t instance_pair_site(uint64_t key, uint64_t where)
{
	uint64_t ip = where ^ key;
	return ip >> 48 ? 0 : (uintptr_t)ip;
}

/* Records "`held` (instance generation gen_held) was held while `lock`
 * (gen_lock) was taken at ip". Returns 1 when the other order of the same
 * two instances is recorded (an inversion), with where its second lock
 * was taken in *other_ip (0 when not known), else 0. Lock-free; any
 * thread, a signal handler included. */
static inline int instance_pairs_record(const void *held, uint32_t gen_held, const void *lock, uint32_t gen_lock,
					uintptr_t ip, uintptr_t *other_ip)
{
	uint64_t forward = instance_pair_order_key(held, gen_held, lock, gen_lock);
	/* The pair's two slots: chosen by the key, which both orders share
	 * (bit 1 aside). */
	struct instance_pair_slot *set = &instance_pair_bucket(held, lock)[(forward >> 62) & 2];
	uint64_t newer = __atomic_load_n(&set[0].key, __ATOMIC_RELAXED);
	uint64_t older = __atomic_load_n(&set[1].key, __ATOMIC_RELAXED);
	uint64_t newer_where = __atomic_load_n(&set[0].where, __ATOMIC_RELAXED);
	if (__builtin_expect((newer | 2) == (forward | 2) || (older | 2) == (forward | 2), 0)) {
		if (newer == forward || older == forward)
			return 0;   /* this order again: reported, if ever, when it first came */
		/* The other order is there: an inversion. Both orders stay. */
		uint64_t other_where = newer == (forward ^ 2) ? newer_where
							      : __atomic_load_n(&set[1].where, __ATOMIC_RELAXED);
		*other_ip = instance_pair_site(forward ^ 2, other_where);
		__atomic_store_n(&set[1].key, forward ^ 2, __ATOMIC_RELAXED);
		__atomic_store_n(&set[1].where, other_where, __ATOMIC_RELAXED);
		__atomic_store_n(&set[0].key, forward, __ATOMIC_RELAXED);
		__atomic_store_n(&set[0].where, (uint64_t)ip ^ forward, __ATOMIC_RELAXED);
		return 1;
	}
	/* The newest two of the set: the newer one moves down, the older one
	 * goes (two threads inserting at once may lose a pair: a cache). */
	__atomic_store_n(&set[1].key, newer, __ATOMIC_RELAXED);
	__atomic_store_n(&set[1].where, newer_where, __ATOMIC_RELAXED);
	__atomic_store_n(&set[0].key, forward, __ATOMIC_RELAXED);
	__atomic_store_n(&set[0].where, (uint64_t)ip ^ forward, __ATOMIC_RELAXED);
	return 0;
}

/* Empties the cache (tests). */
void instance_pairs_clear(void);

#endif
