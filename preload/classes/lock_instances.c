/* The instance map and its presence bitmaps. Readers never lock; writers
 * take `instances`, a leaf lock. Tables replaced by a bigger one are not
 * unmapped (a reader may still be probing one): the memory kept is at most
 * what the current table takes. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>
#include "classes/lock_instances.h"
#include "classes/orphaned_locks.h"
#include "runtime/thread_state.h"
#include "runtime/tracer_arena.h"
#include "runtime/tracer_lock.h"
#include "runtime/log_output.h"

struct instance_table *lock_instance_table;   /* lock_instances.h */
struct lock_instances_head lock_instances_head = {
	TRACER_LOCK_INITIALIZER(TRACER_LOCK_INSTANCES, "lock instances"), 0
};
#define instances lock_instances_head.lock

/* After a change: the threads' acquisition caches drop what they knew
 * (release: paired with the acquire load of the epoch in lock_tracking.h,
 * made before the class lookup whose result a cache keeps). */
/* Under the instances lock, which serializes every advance: a plain
 * increment, no locked instruction. */
static void epoch_advance(void)
{
	__atomic_store_n(&lock_instance_epoch, __atomic_load_n(&lock_instance_epoch, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELEASE);
}

void lock_instance_epoch_advance(void)
{
	if (!tracer_lock_acquire(&instances, thread_state())) {
		/* this thread holds the lock already (a signal handler
		 * interrupted its update): advance without it */
		__atomic_add_fetch(&lock_instance_epoch, 1, __ATOMIC_RELEASE);
		return;
	}
	epoch_advance();
	tracer_lock_release(&instances);
}
static uint32_t next_generation = 1;

/* ---- presence bitmaps ------------------------------------------------------
 * Level 1: a bit per 2 MiB region of the 47-bit user address space (8 MiB,
 * reserved on first use; untouched pages cost nothing). Level 2: per
 * marked region, a bit per 16-byte granule (16 KiB), found through a small
 * open-addressing directory. */

#define REGIONS_BITS (47 - INSTANCE_REGION_SHIFT)
#define GRANULES_PER_REGION (1u << (INSTANCE_REGION_SHIFT - INSTANCE_GRANULE_SHIFT))
#define GRANULE_WORDS (GRANULES_PER_REGION / 64)

uint64_t *lock_instance_regions;         /* level 1; NULL until the first lock */
#define region_bits lock_instance_regions

struct region_entry {
	uintptr_t region;                /* region number + 1; 0: free entry */
	uint64_t *granules;              /* GRANULE_WORDS words */
};
static struct region_entry *regions;     /* MAX_INSTANCE_REGIONS entries */

static size_t region_hash(uintptr_t region)
{
	return (size_t)((region * 0x9E3779B97F4A7C15ull) >> 40) & (MAX_INSTANCE_REGIONS - 1);
}

/* The granule bitmap of a region, or NULL. Lock-free. */
static uint64_t *region_granules(uintptr_t region)
{
	struct region_entry *dir = __atomic_load_n(&regions, __ATOMIC_ACQUIRE);
	if (!dir)
		return NULL;
	size_t h = region_hash(region);
	for (size_t probe = 0; probe < MAX_INSTANCE_REGIONS; probe++) {
		struct region_entry *e = &dir[(h + probe) & (MAX_INSTANCE_REGIONS - 1)];
		uintptr_t r = __atomic_load_n(&e->region, __ATOMIC_ACQUIRE);
		if (r == region + 1)
			return __atomic_load_n(&e->granules, __ATOMIC_ACQUIRE);
		if (!r)
			return NULL;
	}
	return NULL;
}

/* Under the lock: the granule bitmap of a region, made if needed. */
static uint64_t *region_granules_make(uintptr_t region)
{
	if (!region_bits) {
		void *p = tracer_pages_map((size_t)1 << (REGIONS_BITS - 3));
		void *d = tracer_pages_map(MAX_INSTANCE_REGIONS * sizeof(struct region_entry));
		if (!p || !d)
			return NULL;
		__atomic_store_n(&regions, (struct region_entry *)d, __ATOMIC_RELEASE);
		__atomic_store_n(&region_bits, (uint64_t *)p, __ATOMIC_RELEASE);
	}
	size_t h = region_hash(region);
	for (size_t probe = 0; probe < MAX_INSTANCE_REGIONS; probe++) {
		struct region_entry *e = &regions[(h + probe) & (MAX_INSTANCE_REGIONS - 1)];
		if (e->region == region + 1)
			return e->granules;
		if (!e->region) {
			uint64_t *g = tracer_pages_map(GRANULE_WORDS * sizeof(uint64_t));
			if (!g)
				return NULL;
			__atomic_store_n(&e->granules, g, __ATOMIC_RELEASE);
			__atomic_store_n(&e->region, region + 1, __ATOMIC_RELEASE);
			__atomic_or_fetch(&region_bits[region / 64], 1ull << (region % 64), __ATOMIC_RELEASE);
			return g;
		}
	}
	log_output_limit_once("MAX_INSTANCE_REGIONS too low!",
			  "locks in more memory regions than the tracer maps: freeing their memory does not "
			  "forget them");
	return NULL;
}

static void mark_granule(uintptr_t addr)
{
	uintptr_t region = addr >> INSTANCE_REGION_SHIFT;
	uint64_t *g = region_granules_make(region);
	if (!g)
		return;
	size_t granule = (addr & ((1ul << INSTANCE_REGION_SHIFT) - 1)) >> INSTANCE_GRANULE_SHIFT;
	__atomic_or_fetch(&g[granule / 64], 1ull << (granule % 64), __ATOMIC_RELEASE);
}

int lock_instances_maybe_in(uintptr_t lo, uintptr_t hi)
{
	const uint64_t *bits = __atomic_load_n(&region_bits, __ATOMIC_ACQUIRE);
	if (!bits || hi <= lo)
		return 0;
	uintptr_t first = lo >> INSTANCE_REGION_SHIFT, last = (hi - 1) >> INSTANCE_REGION_SHIFT;
	if (last >= (1ul << REGIONS_BITS))
		last = (1ul << REGIONS_BITS) - 1;
	for (uintptr_t r = first; r <= last; r++) {
		if (!(__atomic_load_n(&bits[r / 64], __ATOMIC_RELAXED) & (1ull << (r % 64)))) {
			/* skip a whole word of unmarked regions at once */
			if (!(r % 64) && !__atomic_load_n(&bits[r / 64], __ATOMIC_RELAXED))
				r += 63;
			continue;
		}
		const uint64_t *g = region_granules(r);
		if (!g)
			continue;
		uintptr_t base = r << INSTANCE_REGION_SHIFT;
		uintptr_t from = (r == first ? lo - base : 0) >> INSTANCE_GRANULE_SHIFT;
		uintptr_t to = (r == last ? hi - 1 - base : (1ul << INSTANCE_REGION_SHIFT) - 1) >> INSTANCE_GRANULE_SHIFT;
		for (uintptr_t i = from; i <= to; i++) {
			uint64_t word = __atomic_load_n(&g[i / 64], __ATOMIC_RELAXED);
			if (!word) {
				i |= 63;
				continue;
			}
			if (word & (1ull << (i % 64)))
				return 1;
		}
	}
	return 0;
}

/* ---- the hash table ---------------------------------------------------------- */

static struct instance_table *table_new(size_t slots)
{
	struct instance_table *t = tracer_pages_map(sizeof(*t) + slots * sizeof(struct instance_slot));
	if (t) {
		t->mask = slots - 1;
		t->used = 0;
		t->live = 0;
	}
	return t;
}

/* Under the lock: the slot of key, or NULL. */
static struct instance_slot *table_find(struct instance_table *t, uintptr_t key)
{
	for (size_t i = lock_instance_slot_hash(key), n = 0; n <= t->mask; i++, n++) {
		struct instance_slot *s = &t->slots[i & t->mask];
		if (s->key == key)
			return s;
		if (s->key == INSTANCE_EMPTY_KEY)
			return NULL;
	}
	return NULL;
}

/* Under the lock, with room guaranteed: inserts a key known to be absent. */
static struct instance_slot *table_insert(struct instance_table *t, uintptr_t key, uint64_t value)
{
	for (size_t i = lock_instance_slot_hash(key);; i++) {
		struct instance_slot *s = &t->slots[i & t->mask];
		if (s->key == INSTANCE_EMPTY_KEY || s->key == INSTANCE_TOMBSTONE_KEY) {
			if (s->key == INSTANCE_EMPTY_KEY)
				t->used++;
			t->live++;
			/* Value first: a reader that sees the key sees its value. */
			__atomic_store_n(&s->value, value, __ATOMIC_RELAXED);
			__atomic_store_n(&s->key, key, __ATOMIC_RELEASE);
			return s;
		}
	}
}

/* Under the lock: a table with room for one more, rebuilt without its
 * tombstones (and bigger if half of it is live) when it is half used. */
static struct instance_table *table_with_room(void)
{
	struct instance_table *t = lock_instance_table;
	if (t && (t->used + 1) * 2 <= t->mask + 1)
		return t;
	size_t slots = t ? t->mask + 1 : INSTANCE_TABLE_MIN;
	while (t && (t->live + 1) * 4 > slots)
		slots *= 2;
	struct instance_table *fresh = table_new(slots);
	if (!fresh) {
		log_output_limit_once("the lock instance table cannot grow (out of memory)!",
				  "locks at new addresses are not followed");
		return NULL;
	}
	for (size_t i = 0; t && i <= t->mask; i++)
		if (t->slots[i].key > INSTANCE_TOMBSTONE_KEY)
			table_insert(fresh, t->slots[i].key, t->slots[i].value);
	__atomic_store_n(&lock_instance_table, fresh, __ATOMIC_RELEASE);
	return fresh;
}

void lock_instances_prefetch(const void *a, const void *b)
{
	const struct instance_table *t = __atomic_load_n(&lock_instance_table, __ATOMIC_RELAXED);
	if (!t)
		return;
	__builtin_prefetch(&t->slots[lock_instance_slot_hash((uintptr_t)a) & t->mask]);
	if (b)
		__builtin_prefetch(&t->slots[lock_instance_slot_hash((uintptr_t)b) & t->mask]);
}

static uint64_t new_value(uint32_t class_id)
{
	uint32_t gen = next_generation++;
	if (next_generation >= 1u << 31)   /* bit 63 of a value is INSTANCE_TAGGED */
		next_generation = 1;
	return (uint64_t)gen << 32 | class_id;
}

static uint32_t set_locked(const void *lock, uint32_t class_id, int only_if_new)
{
	uintptr_t key = (uintptr_t)lock;
	struct instance_slot *s = lock_instance_table ? table_find(lock_instance_table, key) : NULL;
	if (s) {
		if (only_if_new)
			return (uint32_t)s->value;
		__atomic_store_n(&s->value, new_value(class_id), __ATOMIC_RELEASE);
		epoch_advance();
		return class_id;
	}
	struct instance_table *t = table_with_room();
	if (!t)
		return 0;
	table_insert(t, key, new_value(class_id));
	mark_granule(key);
	epoch_advance();
	return class_id;
}

void lock_instance_mark_tagged(const void *lock, uint32_t generation)
{
	/* Lock-free: a compare-and-swap from the value of exactly this
	 * generation (generations are not reused while the counter does not
	 * wrap), so a slot given to another lock meanwhile is left alone. A
	 * mark made in a table just replaced by a bigger one is lost: the
	 * instance is then as if never tagged (a rewrite of it goes unseen). */
	struct instance_table *t = __atomic_load_n(&lock_instance_table, __ATOMIC_ACQUIRE);
	if (!t || !lock)
		return;
	uintptr_t key = (uintptr_t)lock;
	for (size_t i = lock_instance_slot_hash(key), n = 0; n <= t->mask; i++, n++) {
		struct instance_slot *s = &t->slots[i & t->mask];
		uintptr_t k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
		if (k == key) {
			uint64_t v = __atomic_load_n(&s->value, __ATOMIC_RELAXED);
			if (!(v & INSTANCE_TAGGED) && (uint32_t)(v >> 32) == generation)
				__atomic_compare_exchange_n(&s->value, &v, v | INSTANCE_TAGGED, 0, __ATOMIC_RELEASE,
							    __ATOMIC_RELAXED);
			return;
		}
		if (k == INSTANCE_EMPTY_KEY)
			return;
	}
}

int lock_instance_set(const void *lock, uint32_t class_id)
{
	if (!lock || !tracer_lock_acquire(&instances, thread_state()))
		return 0;
	uint32_t set = set_locked(lock, class_id, 0);
	tracer_lock_release(&instances);
	return set == class_id;
}

uint32_t lock_instance_set_if_new(const void *lock, uint32_t class_id)
{
	if (!lock || !tracer_lock_acquire(&instances, thread_state()))
		return class_id;
	uint32_t set = set_locked(lock, class_id, 1);
	tracer_lock_release(&instances);
	return set;
}

static int forget_locked(uintptr_t key)
{
	struct instance_slot *s = lock_instance_table ? table_find(lock_instance_table, key) : NULL;
	if (!s)
		return 0;
	__atomic_store_n(&s->key, INSTANCE_TOMBSTONE_KEY, __ATOMIC_RELEASE);
	lock_instance_table->live--;
	epoch_advance();
	orphaned_lock_forget((const void *)key);
	return 1;
}

void lock_instance_forget(const void *lock)
{
	uint32_t class_id;
	if (!lock_instance_get(lock, &class_id, NULL) || !tracer_lock_acquire(&instances, thread_state()))
		return;
	forget_locked((uintptr_t)lock);
	tracer_lock_release(&instances);
}

/* Under the lock: forgets the instances of one granule inside [lo, hi);
 * clears the granule's bit when none is left in it. */
static size_t forget_granule(uint64_t *g, size_t granule, uintptr_t base, uintptr_t lo, uintptr_t hi)
{
	size_t n = 0;
	int left = 0;
	uintptr_t start = base + (granule << INSTANCE_GRANULE_SHIFT);
	/* pthread_spinlock_t is 4-byte aligned; everything else more */
	for (uintptr_t a = start; a < start + (1u << INSTANCE_GRANULE_SHIFT); a += 4) {
		if (!lock_instance_table || !table_find(lock_instance_table, a))
			continue;
		if (a >= lo && a < hi)
			n += forget_locked(a);
		else
			left = 1;
	}
	if (!left)
		__atomic_and_fetch(&g[granule / 64], ~(1ull << (granule % 64)), __ATOMIC_RELEASE);
	return n;
}

size_t lock_instances_forget_range(uintptr_t lo, uintptr_t hi)
{
	if (!lock_instances_maybe_in(lo, hi) || !tracer_lock_acquire(&instances, thread_state()))
		return 0;
	size_t n = 0;
	uintptr_t first = lo >> INSTANCE_REGION_SHIFT, last = (hi - 1) >> INSTANCE_REGION_SHIFT;
	for (uintptr_t r = first; r <= last && r < (1ul << REGIONS_BITS); r++) {
		if (!(region_bits[r / 64] & (1ull << (r % 64))))
			continue;
		uint64_t *g = region_granules(r);
		if (!g)
			continue;
		uintptr_t base = r << INSTANCE_REGION_SHIFT;
		uintptr_t from = (r == first ? lo - base : 0) >> INSTANCE_GRANULE_SHIFT;
		uintptr_t to = (r == last ? hi - 1 - base : (1ul << INSTANCE_REGION_SHIFT) - 1) >> INSTANCE_GRANULE_SHIFT;
		for (uintptr_t i = from; i <= to; i++) {
			if (!g[i / 64]) {
				i |= 63;
				continue;
			}
			if (g[i / 64] & (1ull << (i % 64)))
				n += forget_granule(g, i, base, lo, hi);
		}
	}
	tracer_lock_release(&instances);
	return n;
}

size_t lock_instances_live(void)
{
	const struct instance_table *t = __atomic_load_n(&lock_instance_table, __ATOMIC_ACQUIRE);
	return t ? t->live : 0;
}

size_t lock_instances_capacity(void)
{
	const struct instance_table *t = __atomic_load_n(&lock_instance_table, __ATOMIC_ACQUIRE);
	return t ? t->mask + 1 : 0;
}

void lock_instances_fork_prepare(struct thread_state *self)
{
	tracer_lock_fork_prepare(&instances, self);
}

void lock_instances_fork_parent(void)
{
	tracer_lock_fork_parent(&instances);
}

/* Entries are published whole (value before key), so the table stays
 * readable whatever a vanished thread was doing. */
void lock_instances_fork_child(struct thread_state *self)
{
	tracer_lock_fork_child(&instances, self);
}
