/* The stack depot (as the sanitizers have it): every stack the tracer keeps
 * (the acquisition of each dependency edge) is stored once and named by a
 * 32-bit id. Saving is done outside every other internal lock; reading an
 * id is lock-free, since stored stacks never change or move. */
#ifndef LOCKDEP_RCU_STACK_DEPOT_H
#define LOCKDEP_RCU_STACK_DEPOT_H
#include <stddef.h>
#include <stdint.h>

#define STACK_DEPOT_MAX_FRAMES 32
#define STACK_DEPOT_BYTES (64u << 20)   /* storage reserved (not committed) */

/* The id of this stack, storing it the first time; 0 when the depot is
 * full (a one-time line says so) or the stack is empty. */
uint32_t stack_depot_save(const uintptr_t *frames, size_t nr_frames);

/* Maps the depot now if it is not yet (it is mapped on first use): before
 * the program enters a sandbox that may forbid mmap(). */
void stack_depot_reserve(void);
/* The frames of id; returns their number (0 for id 0). */
size_t stack_depot_fetch(uint32_t id, const uintptr_t **frames);

struct thread_state;
void stack_depot_fork_prepare(struct thread_state *self);
void stack_depot_fork_parent(void);
void stack_depot_fork_child(struct thread_state *self);
#endif
