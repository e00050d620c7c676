/* Stack capture: return addresses of the calling thread, innermost first. */
#ifndef LOCKDEP_RCU_BACKTRACE_H
#define LOCKDEP_RCU_BACKTRACE_H
#include <stddef.h>
#include <stdint.h>

/* Bytes of stack a capture needs below the caller's frame (libgcc's
 * unwinder used 1.6 KiB in measurements; this leaves room for the wrapper
 * frames and a signal frame). */
#define BACKTRACE_STACK_NEEDED (8 * 1024)

/* Bytes of stack the lock checks need (validation, usage marking, the
 * signal-safety hook's title: 4.7 KiB measured from a handler's frame to
 * the deepest call on an 8 KiB alternate stack, which the old 4 KiB let
 * run into its end). */
#define LOCK_CHECKS_STACK_NEEDED (6 * 1024)

/* Whether the calling thread is known to have less than `need` bytes of
 * stack left where it runs (its own stack, or the alternate signal stack
 * a handler runs on). */
int stack_short(size_t need);

/* The return addresses of the calling thread, innermost first, the tracer's
 * own frames skipped. Returns 0 frames when it cannot run safely: before
 * the unwinder was loaded (loading it allocates), or with less than
 * BACKTRACE_STACK_NEEDED of stack left. Never allocates, never takes a
 * lock, keeps no descriptor: safe inside any interposed call. */
size_t backtrace_capture(uintptr_t *frames, size_t max);
/* The same from a wrapper's own frame (its __builtin_frame_address(0),
 * the preload keeping frame pointers): the program's frames from the
 * wrapper's caller on, with none of the tracer's to step through. */
size_t backtrace_capture_from(const uintptr_t *fp, uintptr_t *frames, size_t max);
/* The stack of another thread of this process now, when it is blocked in
 * the kernel (a system call, a sleep, a lock wait): its stack and
 * instruction pointers from /proc/self/task/<tid>/syscall, then the call
 * frame rules. Returns the frames found; 0 with *why saying why not (the
 * thread is running: its stack cannot be read without stopping it). */
size_t backtrace_of_blocked_thread(int tid, uintptr_t *frames, size_t max, const char **why);

/* Why the last capture on this thread returned nothing, or NULL. */
const char *backtrace_unavailable_reason(void);
/* Loads the unwinder (glibc's backtrace() dlopen()s libgcc_s once, which
 * allocates): done in the constructor, where allocating is safe. */
void backtrace_warm_up(void);
#endif
