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
 * two stay). Each order keeps the stack its second lock was taken with,
 * for the report of its inverse (the kernel's "-> #1" entry). Recording is
 * a few instructions and never a scan, and an order seen before is not
 * written again; a new one costs a capture of a few frames (pairs among
 * many locks rarely repeat, so most records are new).
 * Forgetting costs at most a missed inversion whose first order was evicted
 * before the second came (never a false one); the cache never stops
 * recording, however many pairs a program makes. */
#ifndef LOCKDEP_RCU_INSTANCE_PAIRS_H
#define LOCKDEP_RCU_INSTANCE_PAIRS_H

#include <stddef.h>
#include <stdint.h>
#include "base/options.h"

#define INSTANCE_PAIR_SLOTS_PER_BUCKET 4              /* one cache line */
#define INSTANCE_PAIR_BUCKET_BITS 13
#define INSTANCE_PAIR_BUCKETS (1u << INSTANCE_PAIR_BUCKET_BITS)  /* 2^15 pairs, 512 KiB */

/* One order of a pair: its key, and where its second lock was taken
 * (instance_pair_where()) folded with the key, so that a slot read while
 * another thread rewrites it gives nothing rather than a wrong place. */
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
 * prefetched before the generations are read from the locks' memory.
 * Each address is hashed before the two are combined: combined raw (a ^ b),
 * the locks of one array share line after line (pool[0]^pool[1] ==
 * pool[2]^pool[3]), and with two sets to a line, a program with seven locks
 * lost the first order of a pair to another pair's and missed its inversion. */
static inline struct instance_pair_slot *instance_pair_bucket(const void *a, const void *b)
{
	uint64_t x = ((uint64_t)(uintptr_t)a * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)(uintptr_t)b * 0x9E3779B97F4A7C15ull);
	return instance_pair_table[(x ^ x >> 29) & (INSTANCE_PAIR_BUCKETS - 1)];
}

/* Where an order took its second lock: the lock call's caller (pair_frames
 * 1, no unwinding: PAIR_WHERE_IP and the address), or a stack depot id of
 * pair_frames frames (below 2^32); 0: not known. */
#define PAIR_WHERE_IP (1ull << 62)
#define PAIR_WHERE_ADDRESS_MASK ((1ull << 48) - 1)

/* Beside where, in bits 48-61 of the stored word: the order's gate, a
 * hash of the outermost lock its thread held exclusively besides the two
 * (instance_pair_gate() in lock_graph.c), 0 for none. Two orders under
 * one gate never overlap: not a deadlock. */
#define PAIR_GATE_SHIFT 48
#define PAIR_GATE_MASK (0x3fffull << PAIR_GATE_SHIFT)

/* A slot's where for its key, without its gate, or 0 when torn by a
 * concurrent rewrite (neither form: code addresses fit in 48 bits, depot
 * ids in 32). */
static inline uint64_t instance_pair_where(uint64_t key, uint64_t folded)
{
	uint64_t where = (folded ^ key) & ~PAIR_GATE_MASK;
	if ((where & ~PAIR_WHERE_ADDRESS_MASK) == PAIR_WHERE_IP || !(where >> 32))
		return where;
	return 0;
}

/* The gate a slot's order was recorded under (0: none, or torn). */
static inline uint32_t instance_pair_stored_gate(uint64_t key, uint64_t folded)
{
	return instance_pair_where(key, folded) ? (uint32_t)(((folded ^ key) & PAIR_GATE_MASK) >> PAIR_GATE_SHIFT) : 0;
}

/* What instance_pairs_probe() found, for the insert that follows. */
enum instance_pair_seen { PAIR_SEEN, PAIR_NEW, PAIR_INVERTED };

struct instance_pair_probe {
	struct instance_pair_slot *set;
	uint64_t forward;       /* this order's key */
	uint64_t newer;         /* the set's newer slot as read */
	uint64_t newer_where;
	uint64_t other_where;   /* PAIR_INVERTED: the other order's, folded */
	uint32_t other_gate;    /* PAIR_INVERTED: the gate it was taken under */
};

/* Looks up "`held` (instance generation gen_held) held while `lock`
 * (gen_lock) is taken": PAIR_SEEN when this order is recorded (nothing to
 * do: reported, if ever, when it first came), PAIR_INVERTED when the other
 * order is (an inversion: *other_where is where that order took its
 * second lock, instance_pair_where()'s form), else PAIR_NEW. Then, unless
 * PAIR_SEEN, instance_pairs_insert() records this order: where it was
 * taken is worked out only for an order not seen before. Lock-free; any
 * thread, a signal handler included. */
static inline enum instance_pair_seen instance_pairs_probe(const void *held, uint32_t gen_held, const void *lock,
							   uint32_t gen_lock, struct instance_pair_probe *p,
							   uint64_t *other_where)
{
	uint64_t forward = instance_pair_order_key(held, gen_held, lock, gen_lock);
	/* The pair's two slots: chosen by the key, which both orders share
	 * (bit 1 aside). */
	struct instance_pair_slot *set = &instance_pair_bucket(held, lock)[(forward >> 62) & 2];
	uint64_t newer = __atomic_load_n(&set[0].key, __ATOMIC_RELAXED);
	uint64_t older = __atomic_load_n(&set[1].key, __ATOMIC_RELAXED);
	p->set = set;
	p->forward = forward;
	p->newer = newer;
	p->newer_where = __atomic_load_n(&set[0].where, __ATOMIC_RELAXED);
	if (__builtin_expect((newer | 2) == (forward | 2) || (older | 2) == (forward | 2), 0)) {
		if (newer == forward || older == forward)
			return PAIR_SEEN;
		p->other_where = newer == (forward ^ 2) ? p->newer_where : __atomic_load_n(&set[1].where, __ATOMIC_RELAXED);
		*other_where = instance_pair_where(forward ^ 2, p->other_where);
		p->other_gate = instance_pair_stored_gate(forward ^ 2, p->other_where);
		return PAIR_INVERTED;
	}
	return PAIR_NEW;
}

/* Records the probed order, taken at `where`. A new one goes first and
 * pushes the set's older one out (the newest two stay; two threads
 * inserting at once may lose a pair: a cache); after an inversion both
 * orders stay. */
static inline void instance_pairs_insert(const struct instance_pair_probe *p, enum instance_pair_seen seen,
					 uint64_t where)
{
	struct instance_pair_slot *set = p->set;
	if (seen == PAIR_INVERTED) {
		__atomic_store_n(&set[1].key, p->forward ^ 2, __ATOMIC_RELAXED);
		__atomic_store_n(&set[1].where, p->other_where, __ATOMIC_RELAXED);
	} else {
		__atomic_store_n(&set[1].key, p->newer, __ATOMIC_RELAXED);
		__atomic_store_n(&set[1].where, p->newer_where, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&set[0].key, p->forward, __ATOMIC_RELAXED);
	__atomic_store_n(&set[0].where, where ^ p->forward, __ATOMIC_RELAXED);
}

/* Where a new order is recorded as taken: the caller ip of the lock call
 * (pair_frames=1, the default: a few instructions), else a stack of
 * pair_frames of the program's frames in the stack depot, unwound from the
 * lock wrapper's frame when the caller has it (else NULL). Pairs among many
 * locks are nearly all new: a stack each costs an unwinding at every
 * nesting (+19 ns of ~66 per many_locks pair with 4 frames). Out of line. */
#define INSTANCE_PAIR_FRAMES_MAX PAIR_FRAMES_MAX   /* options.h */
uint64_t instance_pair_capture(const void *wrapper_frame, uintptr_t ip);
/* The same, always a stack (max frames): for the report's own order. */
uint64_t instance_pair_capture_stack(size_t max);

/* Empties the cache (tests). */
void instance_pairs_clear(void);

#endif
