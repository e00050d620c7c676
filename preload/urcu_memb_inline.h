/* urcu_memb_inline.h - liburcu's memb read side, done by the wrappers
 * themselves, exactly as liburcu's _LGPL_SOURCE headers do it inline in a
 * program (urcu/static/urcu-memb.h, liburcu 0.13): the same loads and
 * stores of the thread's urcu_memb_reader.ctr and of urcu_memb_gp, the
 * same barriers, the same futex wake of an updater that went to sleep.
 *
 * Why: liburcu's exported urcu_memb_read_lock() and _unlock() reach the
 * thread's urcu_memb_reader through __tls_get_addr() (liburcu is a shared
 * library, its TLS global-dynamic), which was half of a plain program's
 * read-side time; the tracer knows the variable's offset from the thread
 * pointer (urcu_reader_state.c), so its read side is a few instructions.
 * Mixing the two is what liburcu supports anyway: inlined and exported read
 * sides of one program work on the same per-thread state. This is that
 * state's ABI, which every _LGPL_SOURCE program depends on as much.
 *
 * Only when liburcu-memb was loaded at startup (its TLS in the static
 * block) and its urcu_memb_gp and urcu_memb_has_sys_membarrier were found;
 * else, and with inline_read_side=0, liburcu's own functions are called.
 * The other flavors always call liburcu's. */
#ifndef LOCKDEP_RCU_URCU_MEMB_INLINE_H
#define LOCKDEP_RCU_URCU_MEMB_INLINE_H

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <urcu/static/urcu-common.h>
#include "urcu_reader_state.h"

/* Set by urcu_reader_state_init() (and cleared by inline_read_side=0):
 * liburcu-memb's grace-period state and its sys_membarrier flag. */
extern struct urcu_gp *urcu_memb_inline_gp;
extern int *urcu_memb_inline_membarrier;

static inline int urcu_memb_inline_ready(void)
{
	return __atomic_load_n(&urcu_memb_inline_gp, __ATOMIC_RELAXED) != NULL;
}

static inline volatile unsigned long *urcu_memb_inline_ctr(void)
{
	return (volatile unsigned long *)((char *)__builtin_thread_pointer() + urcu_reader_tp_offset[FLAVOR_memb]);
}

/* urcu_memb_smp_mb_slave(): with sys_membarrier the updater's membarrier
 * orders the reader, which needs only a compiler barrier. */
static inline void urcu_memb_inline_mb_slave(void)
{
	if (__builtin_expect(*(volatile int *)urcu_memb_inline_membarrier, 1))
		__asm__ volatile("" ::: "memory");
	else
		__asm__ volatile("mfence" ::: "memory");   /* cmm_smp_mb() */
}

/* _urcu_memb_read_lock() */
static inline void urcu_memb_inline_read_lock(void)
{
	volatile unsigned long *ctr = urcu_memb_inline_ctr();
	__asm__ volatile("" ::: "memory");
	unsigned long tmp = *ctr;
	if (__builtin_expect(!(tmp & URCU_GP_CTR_NEST_MASK), 1)) {
		*ctr = *(volatile unsigned long *)&urcu_memb_inline_gp->ctr;
		urcu_memb_inline_mb_slave();
	} else {
		*ctr = tmp + URCU_GP_COUNT;
	}
}

/* _urcu_memb_read_unlock(), with urcu_common_wake_up_gp() */
static inline void urcu_memb_inline_read_unlock(void)
{
	volatile unsigned long *ctr = urcu_memb_inline_ctr();
	unsigned long tmp = *ctr;
	if (__builtin_expect((tmp & URCU_GP_CTR_NEST_MASK) == URCU_GP_COUNT, 1)) {
		urcu_memb_inline_mb_slave();
		*ctr = tmp - URCU_GP_COUNT;
		urcu_memb_inline_mb_slave();
		volatile int32_t *futex = &urcu_memb_inline_gp->futex;
		if (__builtin_expect(*futex == -1, 0)) {
			int saved = errno;
			*futex = 0;
			syscall(SYS_futex, futex, FUTEX_WAKE, 1, NULL, NULL, 0);
			errno = saved;
		}
	} else {
		*ctr = tmp - URCU_GP_COUNT;
	}
	__asm__ volatile("" ::: "memory");
}

#endif
