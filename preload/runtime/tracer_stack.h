/* A stack the tracer owns, for its slow work (formatting reports,
 * symbolizing): the program's thread may have 16 KiB of stack in all, and
 * reading DWARF or formatting a long splat must never run it down. Used by
 * one thread at a time: the caller holds the report lock. */
#ifndef LOCKDEP_RCU_TRACER_STACK_H
#define LOCKDEP_RCU_TRACER_STACK_H

#include <stdint.h>

#define TRACER_STACK_SIZE (1u << 20)

/* Calls fn(arg) on the tracer's stack, or right here when this thread is
 * already on it or the stack could not be mapped. */
void run_on_tracer_stack(void (*fn)(void *), void *arg);

/* Whether sp is on the report stack; its lowest usable address in *floor. */
int on_report_stack(uintptr_t sp, uintptr_t *floor);

/* A stack of its own for each thread, for the lock checks on a stack
 * whose room the tracer does not know or knows too small (a coroutine's,
 * a small alternate signal stack: stack_short()): mapped at the thread's
 * first need, unmapped at its end. */
#define CHECK_STACK_SIZE (64u << 10)

struct thread_state;

/* Calls fn(arg) on this thread's check stack: 1, or 0 when it cannot (not
 * on x86-64, the stack could not be mapped, or it is in use: a handler
 * interrupted the checks that run there) and fn was not called. While fn
 * runs, ts->check_stack_caller holds the frame address it was called
 * from, where the program's frames begin for an unwinder. */
int run_on_check_stack(struct thread_state *ts, void (*fn)(void *), void *arg);

/* Whether sp is on this thread's check stack; its lowest usable address
 * in *floor. */
int on_check_stack(const struct thread_state *ts, uintptr_t sp, uintptr_t *floor);

/* At the thread's end: the stack given back. */
void check_stack_release(struct thread_state *ts);

#endif
