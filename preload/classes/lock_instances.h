/* Lock instances: which class each lock address belongs to, and until when.
 * A lock's identity ends with its memory, as in the kernel (which drops the
 * instances of freed memory on every kfree): destroying a lock, freeing,
 * reallocating or unmapping the memory it lives in, or unloading the
 * library it is a static of, forgets it, so the next lock made at that
 * address is a new instance and inherits nothing.
 *
 * The map is an open-addressing hash table of (address -> class, generation)
 * that grows (and drops its tombstones) when it fills: no fixed number of
 * lock addresses over a process's life. Lookups are lock-free; changes take
 * the instances lock. So that free() can afford to ask "is there a lock in
 * this block?", the addresses that hold instances are also marked in a
 * two-level bitmap: one bit per 2 MiB region of the address space, then
 * one bit per 16-byte granule of the regions that have any. */
#ifndef LOCKDEP_RCU_LOCK_INSTANCES_H
#define LOCKDEP_RCU_LOCK_INSTANCES_H

#include <stddef.h>
#include <stdint.h>
#include "runtime/tracer_lock.h"

#define INSTANCE_TABLE_MIN (1u << 16)     /* slots of the first table */
#define INSTANCE_REGION_SHIFT 21          /* 2 MiB regions */
#define INSTANCE_GRANULE_SHIFT 4          /* 16-byte granules */
#define MAX_INSTANCE_REGIONS (1u << 16)   /* regions holding locks at once */

struct thread_state;

/* The epoch advances at every change of the map (a class set, an instance
 * forgotten) and at every unload: what a thread cached about lock
 * addresses holds while it stays the same (lock_tracking.h, the
 * acquisition cache). It shares the instances lock's cache line: every
 * change takes the lock and advances the epoch, so a program that makes and
 * frees locks all the time (free_cost lock) moves one line between its
 * threads, not two. */
struct lock_instances_head {
	struct tracer_lock lock;     /* taken by every change of the map */
	uint32_t epoch;
} __attribute__((aligned(64)));
extern struct lock_instances_head lock_instances_head;
#define lock_instance_epoch (lock_instances_head.epoch)
void lock_instance_epoch_advance(void);

/* The map itself, here so that the lookup is inline: every nested
 * acquisition the acquisition cache cannot answer makes two. */
#define INSTANCE_EMPTY_KEY 0
#define INSTANCE_TOMBSTONE_KEY 1   /* no lock lives at address 1 */

struct instance_slot {
	uintptr_t key;          /* the lock's address, EMPTY_KEY or TOMBSTONE_KEY */
	uint64_t value;         /* class id | generation << 32 | INSTANCE_TAGGED */
};

/* In a slot's value: the mutex carries a tag of this generation
 * (mutex_class_tag.h). Not part of the generation. */
#define INSTANCE_TAGGED (1ull << 63)

struct instance_table {
	size_t mask;            /* slots - 1 */
	size_t used;            /* slots that are not EMPTY (live and tombstones) */
	size_t live;
	struct instance_slot slots[];
};

/* Published with release stores; a replaced table is kept, never unmapped
 * (a reader may still be probing it). */
extern struct instance_table *lock_instance_table;

static inline size_t lock_instance_slot_hash(uintptr_t key)
{
	uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
	return (size_t)(h ^ (h >> 29));
}

/* The class and generation of the instance at `lock`. Returns 0 when the
 * address holds no known instance, 2 when it is a mutex that was given its
 * tag (lock_instance_mark_tagged()), else 1. Lock-free. */
static inline int lock_instance_get(const void *lock, uint32_t *class_id, uint32_t *generation)
{
	const struct instance_table *t = __atomic_load_n(&lock_instance_table, __ATOMIC_ACQUIRE);
	if (!t)
		return 0;
	uintptr_t key = (uintptr_t)lock;
	for (size_t i = lock_instance_slot_hash(key), n = 0; n <= t->mask; i++, n++) {
		const struct instance_slot *s = &t->slots[i & t->mask];
		uintptr_t k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
		if (k == key) {
			uint64_t v = __atomic_load_n(&s->value, __ATOMIC_RELAXED);
			*class_id = (uint32_t)v;
			if (generation)
				*generation = (uint32_t)((v & ~INSTANCE_TAGGED) >> 32);
			return 1 + !!(v & INSTANCE_TAGGED);
		}
		if (k == INSTANCE_EMPTY_KEY)
			return 0;
	}
	return 0;
}

/* Starts loading the slots of `a` and `b` (may be NULL): an acquisition
 * that will look both up has them miss the caches at once, not in turn. */
void lock_instances_prefetch(const void *a, const void *b);

/* Records (or changes) the class of the instance at `lock`, starting a new
 * generation. Returns 0 when the instances lock is this thread's already (a
 * signal handler interrupted an update) or memory ran out. */
int lock_instance_set(const void *lock, uint32_t class_id);

/* Sets the class only if the address has no instance yet (a lock seen for
 * the first time by a lookup): returns the class it has then. */
uint32_t lock_instance_set_if_new(const void *lock, uint32_t class_id);

/* The mutex at `lock`, of instance generation `generation`, was given its
 * tag: a tag found wiped later means its bytes were rewritten (memset, an
 * assignment of PTHREAD_MUTEX_INITIALIZER). */
void lock_instance_mark_tagged(const void *lock, uint32_t generation);

/* Forgets one instance (a destroyed lock). */
void lock_instance_forget(const void *lock);

/* Whether the 2 MiB region of addr holds any instance: the fast test of
 * free(), one load and a bit test. */
static inline int lock_instances_region_marked(const void *addr)
{
	extern uint64_t *lock_instance_regions;
	const uint64_t *bits = __atomic_load_n(&lock_instance_regions, __ATOMIC_RELAXED);
	uintptr_t r = (uintptr_t)addr >> INSTANCE_REGION_SHIFT;
	return bits && r < (1ul << (47 - INSTANCE_REGION_SHIFT)) &&
	       (__atomic_load_n(&bits[r / 64], __ATOMIC_RELAXED) >> (r % 64) & 1);
}

/* Whether [lo, hi) may hold an instance: a load and a bit test when the
 * region holds none. Lock-free; may say yes wrongly, never no wrongly
 * (except for changes racing with it). */
int lock_instances_maybe_in(uintptr_t lo, uintptr_t hi);

/* Forgets every instance in [lo, hi) (freed, unmapped or unloaded memory).
 * Returns how many. */
size_t lock_instances_forget_range(uintptr_t lo, uintptr_t hi);

/* For the statistics and the tests. */
size_t lock_instances_live(void);
size_t lock_instances_capacity(void);

void lock_instances_fork_prepare(struct thread_state *self);
void lock_instances_fork_parent(void);
void lock_instances_fork_child(struct thread_state *self);

#endif
