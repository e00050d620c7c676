/* tracer_arena.c - bump allocation over anonymous mmap()s: each chunk starts
 * with its header, the newest chunk is the one allocations bump in. */
#define _GNU_SOURCE
#include "runtime/tracer_arena.h"
#include "runtime/sandbox.h"
#include "base/raw_syscall.h"

#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

/* A chunk is one mapping: this header, then the blocks. Invariant: the
 * newest chunk (arena->chunks) holds the arena's most recent block. */
struct arena_chunk {
	struct arena_chunk *next;
	size_t size; /* of the mapping, header included */
	size_t used; /* bytes from the chunk start in use, header included */
};

/* New chunks grow with the arena, so a module with a small program's
 * symbols maps 64 KiB and libc's tables take a few large chunks. */
enum {
	CHUNK_MIN = 64 * 1024,
	CHUNK_MAX = 1024 * 1024,
	/* shrinking returns pages only when at least this much comes free */
	SHRINK_UNMAP_MIN = 64 * 1024,
};

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) & ~(to - 1);
}

static size_t page_size(void)
{
	static size_t cached;
	if (cached == 0) {
		long size = sysconf(_SC_PAGESIZE);
		cached = size > 0 ? (size_t)size : 4096;
	}
	return cached;
}

static size_t header_size(void)
{
	return round_up(sizeof(struct arena_chunk), TRACER_ARENA_ALIGN);
}

size_t tracer_reservation_size(size_t wanted)
{
	struct rlimit limit;
	if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
		return wanted;
	size_t cap = round_up((size_t)(limit.rlim_cur / 16), page_size());
	if (cap < ((size_t)1 << 20))
		cap = (size_t)1 << 20;
	return wanted < cap ? wanted : cap;
}

/* Inside a seccomp sandbox (sandbox.h) pages come from a reserve mapped
 * before it, handed out once each (never returned: munmap is a call too),
 * so the tables that grow (lock instances, classes, dereference sets) go
 * on growing. Address space only until touched (MAP_NORESERVE). */
#define SANDBOX_RESERVE ((size_t)128 << 20)
static char *reserve;
static size_t reserve_size;   /* SANDBOX_RESERVE, or less under RLIMIT_AS */
static size_t reserve_used;

void tracer_pages_reserve(void)
{
	if (__atomic_load_n(&reserve, __ATOMIC_ACQUIRE))
		return;
	size_t size = tracer_reservation_size(SANDBOX_RESERVE);
	void *p = raw_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return;
	void *none = NULL;
	__atomic_store_n(&reserve_size, size, __ATOMIC_RELAXED);
	if (!__atomic_compare_exchange_n(&reserve, &none, p, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		raw_munmap(p, size);
}

static void *reserve_take(size_t size)
{
	char *base = __atomic_load_n(&reserve, __ATOMIC_ACQUIRE);
	if (!base)
		return NULL;
	size_t limit = __atomic_load_n(&reserve_size, __ATOMIC_RELAXED);
	size_t at = __atomic_fetch_add(&reserve_used, size, __ATOMIC_RELAXED);
	return size <= limit && at <= limit - size ? base + at : NULL;
}

static int in_reserve(const void *pages)
{
	const char *base = __atomic_load_n(&reserve, __ATOMIC_ACQUIRE);
	return base && (const char *)pages >= base &&
	       (const char *)pages < base + __atomic_load_n(&reserve_size, __ATOMIC_RELAXED);
}

void *tracer_pages_map(size_t size)
{
	if (size == 0 || size > SIZE_MAX / 4)
		return NULL;
	if (in_sandbox())
		return reserve_take(round_up(size, page_size()));
	void *pages = raw_mmap(NULL, round_up(size, page_size()), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return pages == MAP_FAILED ? NULL : pages;
}

void tracer_pages_unmap(void *pages, size_t size)
{
	if (in_sandbox() || in_reserve(pages))
		return;
	if (pages != NULL && size != 0)
		raw_munmap(pages, round_up(size, page_size()));
}

static struct arena_chunk *new_chunk(struct tracer_arena *arena, size_t block_size)
{
	size_t size = arena->mapped / 4;
	size = size < CHUNK_MIN ? CHUNK_MIN : size > CHUNK_MAX ? CHUNK_MAX : size;
	size_t needed = header_size() + block_size;
	if (needed > size)
		size = needed;
	size = round_up(size, page_size());
	struct arena_chunk *chunk = tracer_pages_map(size);
	if (chunk == NULL)
		return NULL;
	chunk->next = arena->chunks;
	chunk->size = size;
	chunk->used = header_size();
	arena->chunks = chunk;
	arena->mapped += size;
	return chunk;
}

void *tracer_arena_alloc(struct tracer_arena *arena, size_t size)
{
	if (size > SIZE_MAX / 4)
		return NULL;
	size_t rounded = round_up(size ? size : 1, TRACER_ARENA_ALIGN);
	struct arena_chunk *chunk = arena->chunks;
	if (chunk == NULL || chunk->size - chunk->used < rounded) {
		chunk = new_chunk(arena, rounded);
		if (chunk == NULL)
			return NULL;
	}
	void *block = (char *)chunk + chunk->used;
	chunk->used += rounded;
	return block;
}

void tracer_arena_shrink(struct tracer_arena *arena, void *block, size_t old_size,
			 size_t new_size)
{
	struct arena_chunk *chunk = arena->chunks;
	if (chunk == NULL || block == NULL || new_size >= old_size)
		return;
	size_t offset = (size_t)((char *)block - (char *)chunk);
	size_t old_end = offset + round_up(old_size ? old_size : 1, TRACER_ARENA_ALIGN);
	if ((char *)block < (char *)chunk || offset >= chunk->size || old_end != chunk->used)
		return; /* not the most recent block */
	chunk->used = offset + round_up(new_size ? new_size : 1, TRACER_ARENA_ALIGN);
	size_t keep = round_up(chunk->used, page_size());
	if (chunk->size - keep >= SHRINK_UNMAP_MIN) {
		raw_munmap((char *)chunk + keep, chunk->size - keep);
		arena->mapped -= chunk->size - keep;
		chunk->size = keep;
	}
}

void tracer_arena_release(struct tracer_arena *arena)
{
	struct arena_chunk *chunk = arena->chunks;
	while (chunk != NULL) {
		struct arena_chunk *next = chunk->next;
		raw_munmap(chunk, chunk->size);
		chunk = next;
	}
	arena->chunks = NULL;
	arena->mapped = 0;
}
