/* A stack the tracer owns, for its slow work (formatting reports,
 * symbolizing): the program's thread may have 16 KiB of stack in all, and
 * reading DWARF or formatting a long splat must never run it down. Used by
 * one thread at a time: the caller holds the report lock. */
#ifndef LOCKDEP_RCU_TRACER_STACK_H
#define LOCKDEP_RCU_TRACER_STACK_H

#define TRACER_STACK_SIZE (1u << 20)

/* Calls fn(arg) on the tracer's stack, or right here when this thread is
 * already on it or the stack could not be mapped. */
void run_on_tracer_stack(void (*fn)(void *), void *arg);

#endif
