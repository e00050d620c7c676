/* tracer_arena.h - memory for the tracer's slow paths without malloc: bump
 * allocation from anonymous private mmap()s, given back all at once.
 *
 * The traced program's allocator may be the very code we are reporting on (or
 * half initialized, or holding its own locks), so tracer memory never comes
 * from it. An arena belongs to one owner (e.g. one loaded module's symbols and
 * line table) and is released with it; nothing is freed one block at a time.
 * Not thread-safe: each arena's owner serializes its use. */
#ifndef LOCKDEP_RCU_TRACER_ARENA_H
#define LOCKDEP_RCU_TRACER_ARENA_H

#include <stddef.h>

struct arena_chunk;

struct tracer_arena {
	struct arena_chunk *chunks; /* newest first; NULL: nothing mapped yet */
	size_t mapped;              /* bytes currently mapped, for accounting */
};

#define TRACER_ARENA_INIT { NULL, 0 }

/* Blocks are aligned to this; enough for every type the tracer stores. */
enum { TRACER_ARENA_ALIGN = 16 };

/* size bytes from the arena, NULL when mmap fails (or size is absurd).
 * The memory is not guaranteed to be zeroed. */
void *tracer_arena_alloc(struct tracer_arena *arena, size_t size);

/* Gives back the tail of the most recent block, which was allocated with
 * old_size bytes and now needs only new_size: for arrays sized by an upper
 * bound first. A dedicated mapping returns its unused pages to the kernel.
 * Does nothing when block is not the arena's most recent block. */
void tracer_arena_shrink(struct tracer_arena *arena, void *block, size_t old_size,
			 size_t new_size);

/* Unmaps everything; the arena is empty and reusable afterwards. */
void tracer_arena_release(struct tracer_arena *arena);

/* Scratch pages outside any arena, for temporary work buffers: reserved
 * lazily (MAP_NORESERVE), so an upper-bound size costs only what is touched. */
/* How much of `wanted` bytes of address space a reservation of the
 * tracer's may take: under a finite RLIMIT_AS (the program's own budget,
 * which every mapping of the tracer's counts against), a sixteenth of the
 * limit at most (at least 1 MiB); else all of it. */
size_t tracer_reservation_size(size_t wanted);
void *tracer_pages_map(size_t size);
void tracer_pages_unmap(void *pages, size_t size);
/* Maps the reserve tracer_pages_map() takes from inside a seccomp sandbox
 * (sandbox.h): called before the program enters one. */
void tracer_pages_reserve(void);

#endif
