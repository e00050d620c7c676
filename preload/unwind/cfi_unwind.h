/* cfi_unwind.h - the tracer's own stack unwinder: the loaded objects' call
 * frame information (.eh_frame, found through .eh_frame_hdr with
 * _dl_find_object()), reduced per return address to the three rules x86-64
 * code needs (where the frame's CFA is, where the return address is, where
 * the caller's %rbp was saved) and cached, so a stack of a few frames costs
 * a few cache lookups and loads instead of libgcc's search, CIE and FDE
 * parsing and CFA program run for every frame (about 350 ns each here).
 *
 * Anything the reduced rules cannot express (a CFA computed by a DWARF
 * expression, registers saved in other registers, signal frames, a 64-bit
 * .eh_frame, a search table in another encoding) makes the capture return
 * -1, and the caller unwinds with libgcc instead: the same frames, slower.
 * Lock-free, allocation-free and async-signal-safe: _dl_find_object()
 * takes no lock, the cache is a fixed array updated with atomics. */
#ifndef LOCKDEP_RCU_CFI_UNWIND_H
#define LOCKDEP_RCU_CFI_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#define CFI_RULE_CACHE_SLOTS 8192   /* power of two: return addresses remembered */

/* The return addresses of the calling thread, innermost first, at most
 * max, leaving out those in [skip_lo, skip_hi) (the tracer's own code).
 * Returns how many, or -1 when a frame on the way cannot be unwound by
 * these rules. */
long cfi_unwind_capture(uintptr_t *frames, size_t max, uintptr_t skip_lo, uintptr_t skip_hi);

/* The same from the frame at fp, a frame-pointer frame of the tracer's
 * whose caller is the program (a wrapper's own
 * __builtin_frame_address(0)): its return address first, and no frame of
 * the tracer's to step through. */
long cfi_unwind_capture_from(const uintptr_t *fp, uintptr_t *frames, size_t max);

/* Where a walk may read the stack without asking: [lo, hi), the stack it
 * starts on up to that stack's top. A word elsewhere is asked of the
 * kernel first (process_vm_readv: EFAULT, not SIGSEGV), and not read
 * inside a seccomp sandbox; a word that cannot be read ends the walk.
 * no_fallback: the walk starts on a stack the tracer does not know (a
 * coroutine's): one that cannot go on returns the frames it found, never
 * -1 (libgcc's unwinder would read the same memory unchecked). */
struct cfi_bounds {
	uintptr_t lo, hi;
	int no_fallback;
};

/* The same from the frame at fp (NULL: the caller's), leaving out the
 * return addresses in [skip_lo, skip_hi), reading within bounds (NULL:
 * anywhere, as the other captures do). For a capture made on another
 * stack than the one whose frames it wants (tracer_stack.h), fp being the
 * last frame on that one. */
long cfi_unwind_capture_at(const uintptr_t *fp, uintptr_t *frames, size_t max, uintptr_t skip_lo, uintptr_t skip_hi,
			   const struct cfi_bounds *bounds);

/* Another thread's stack, from its instruction pointer pc, its stack
 * pointer sp and its %rbp (0: not known), every word read through the
 * kernel (process_vm_readv: a stack that changes under the walk ends it,
 * it never faults). The frames found until a rule needs what is not known
 * (a %rbp never saved on the way), leaving out those in [skip_lo, skip_hi). */
long cfi_unwind_capture_regs(uintptr_t pc, uintptr_t sp, uintptr_t rbp, uintptr_t *frames, size_t max,
			     uintptr_t skip_lo, uintptr_t skip_hi);

/* Where a makecontext() coroutine's first function returns to (glibc's
 * __start_context, whose call frame information does not describe it as
 * an outermost frame): the walk ends there. Once, at start-up. */
void cfi_unwind_set_context_start(uintptr_t pc);

/* Whether return address pc is the kernel's signal return trampoline
 * (glibc's __restore_rt, its CIE marked 'S'): where a signal handler was
 * called. Reports print it as gdb does. */
int cfi_unwind_is_signal_frame(uintptr_t pc);

/* Forgets the rules of return addresses in [lo, hi): code unloaded
 * (dlclose()), whose addresses a later object may reuse. */
void cfi_unwind_forget_range(uintptr_t lo, uintptr_t hi);

#endif
