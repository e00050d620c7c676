/* Stacks are records in one reserved region (mmap'd MAP_NORESERVE once, so
 * only what is used is committed), chained from a hash table of buckets.
 * Writers take the depot lock; readers follow published indices only. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>
#include "unwind/stack_depot.h"
#include "runtime/thread_state.h"
#include "runtime/tracer_arena.h"
#include "runtime/tracer_lock.h"
#include "base/raw_syscall.h"
#include "runtime/log_output.h"
#include "runtime/self_check.h"

struct stack_record {
	uint32_t next;          /* offset of the next record in the bucket; 0 ends */
	uint32_t hash;
	uint32_t nr_frames;
	uint32_t pad;
	uintptr_t frames[];
};

#define DEPOT_BUCKETS (1u << 16)
static uint32_t buckets[DEPOT_BUCKETS];   /* record offsets, 0: empty */
static char *region;                      /* offset 0 is never a record */
static size_t region_bytes;               /* STACK_DEPOT_BYTES, or less under RLIMIT_AS */
#define DEPOT_MIN_BYTES ((size_t)256 << 10)
static uint32_t used = 16;
static struct tracer_lock depot_lock = TRACER_LOCK_INITIALIZER(TRACER_LOCK_DEPOT, "stack depot");

static uint32_t stack_hash(const uintptr_t *frames, size_t n)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
	for (size_t i = 0; i < n; i++) {
		h ^= frames[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 33;
	}
	return (uint32_t)h | 1;
}

static const struct stack_record *record_at(uint32_t offset)
{
	return (const struct stack_record *)(region + offset);
}

static uint32_t find(uint32_t head, uint32_t hash, const uintptr_t *frames, size_t n)
{
	for (uint32_t off = head; off; off = record_at(off)->next) {
		const struct stack_record *r = record_at(off);
		if (r->hash == hash && r->nr_frames == n && !memcmp(r->frames, frames, n * sizeof(frames[0])))
			return off;
	}
	return 0;
}

/* Under the depot lock: the region, mapped on first use (64 MiB of
 * address space that most programs never touch; under a tight RLIMIT_AS
 * what tracer_reservation_size() allows, and less if even that fails: a
 * smaller depot, not none). */
static void map_region(void)
{
	if (region)
		return;
	for (size_t size = tracer_reservation_size(STACK_DEPOT_BYTES); size >= DEPOT_MIN_BYTES; size /= 2) {
		void *p = raw_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p != MAP_FAILED) {
			region_bytes = size;
			__atomic_store_n(&region, p, __ATOMIC_RELEASE);
			return;
		}
	}
}

void stack_depot_reserve(void)
{
	if (__atomic_load_n(&region, __ATOMIC_ACQUIRE) || !tracer_lock_acquire(&depot_lock, thread_state()))
		return;
	map_region();
	tracer_lock_release(&depot_lock);
}

uint32_t stack_depot_save(const uintptr_t *frames, size_t n)
{
	if (!n)
		return 0;
	if (n > STACK_DEPOT_MAX_FRAMES)
		n = STACK_DEPOT_MAX_FRAMES;
	uint32_t hash = stack_hash(frames, n);
	uint32_t *bucket = &buckets[hash & (DEPOT_BUCKETS - 1)];
	/* Paired with the release store that publishes a record. */
	uint32_t head = __atomic_load_n(bucket, __ATOMIC_ACQUIRE);
	if (region) {
		uint32_t found = find(head, hash, frames, n);
		if (found)
			return found;
	}
	struct thread_state *ts = thread_state();
	if (!tracer_lock_acquire(&depot_lock, ts))
		return 0;   /* a signal handler interrupted our own save */
	uint32_t id = 0;
	map_region();
	size_t size = sizeof(struct stack_record) + n * sizeof(frames[0]);
	head = __atomic_load_n(bucket, __ATOMIC_ACQUIRE);
	if (region && !(id = find(head, hash, frames, n)) && used + size <= region_bytes) {
		struct stack_record *r = (struct stack_record *)(region + used);
		r->next = head;
		r->hash = hash;
		r->nr_frames = (uint32_t)n;
		memcpy(r->frames, frames, n * sizeof(frames[0]));
		id = used;
		__atomic_store_n(&used, used + (uint32_t)((size + 15) & ~(size_t)15), __ATOMIC_RELAXED);
		__atomic_store_n(bucket, id, __ATOMIC_RELEASE);
	}
	tracer_lock_release(&depot_lock);
	if (!id && region)
		log_output_limit_once("STACK_DEPOT_BYTES too low!",
				  "the stack depot is full: new dependencies are kept without their stacks");
	return id;
}

size_t stack_depot_fetch(uint32_t id, const uintptr_t **frames)
{
	/* An id is the offset of a record handed out, 16-byte aligned, below
	 * what is used. */
	if (!id || !region ||
	    TRACER_WARN_ON(id % 16 || id >= __atomic_load_n(&used, __ATOMIC_ACQUIRE))) {
		*frames = NULL;
		return 0;
	}
	const struct stack_record *r = record_at(id);
	*frames = r->frames;
	return r->nr_frames;
}

void stack_depot_fork_prepare(struct thread_state *self)
{
	tracer_lock_fork_prepare(&depot_lock, self);
}

void stack_depot_fork_parent(void)
{
	tracer_lock_fork_parent(&depot_lock);
}

/* A record half-written by a vanished thread is not yet published: the
 * depot stays usable in the child whatever happened. */
void stack_depot_fork_child(struct thread_state *self)
{
	tracer_lock_fork_child(&depot_lock, self);
}
