/* urcu_inline_read.h - liburcu's read side for the memb, mb and signal
 * flavors, done by the wrappers themselves, exactly as liburcu's
 * _LGPL_SOURCE headers do it inline in a program (urcu/static/urcu-memb.h,
 * urcu-mb.h, urcu-signal.h, liburcu 0.13): the same loads and stores of the
 * thread's urcu_<flavor>_reader.ctr and of urcu_<flavor>_gp, the same
 * barriers, the same futex wake of an updater that went to sleep. The three
 * differ only in the reader's barrier (urcu_<flavor>_smp_mb_slave()): memb
 * a compiler barrier when sys_membarrier is there (the updater's membarrier
 * orders the reader), else a full fence; mb always a full fence; signal a
 * compiler barrier (the updater's signals order the reader).
 *
 * Why: liburcu's exported read_lock() and read_unlock() reach the thread's
 * reader state through __tls_get_addr() (liburcu is a shared library, its
 * TLS global-dynamic), which was half of a plain program's read-side time;
 * the tracer knows the variable's offset from the thread pointer
 * (urcu_reader_state.c), so its read side is a few instructions. Mixing
 * the two is what liburcu supports anyway: inlined and exported read sides
 * of one program work on the same per-thread state, whose layout is the ABI
 * every _LGPL_SOURCE program depends on as much.
 *
 * Only for a flavor library loaded at startup (its TLS in the static block)
 * whose urcu_<flavor>_gp (and for memb urcu_memb_has_sys_membarrier) were
 * found; else, and with inline_read_side=0, liburcu's own functions are
 * called. QSBR's read side is nothing to do (liburcu's functions only
 * assert in debug builds): with inline_read_side, not called at all. bp
 * keeps its reader behind a pointer liburcu allocates: always liburcu's. */
#ifndef LOCKDEP_RCU_URCU_INLINE_READ_H
#define LOCKDEP_RCU_URCU_INLINE_READ_H

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <urcu/static/urcu-common.h>
#include "rcu/urcu_reader_state.h"
#include "base/raw_syscall.h"

static inline int urcu_inline_ready(enum rcu_flavor f)
{
	if (f == FLAVOR_qsbr)
		return __atomic_load_n(&urcu_inline_qsbr, __ATOMIC_RELAXED);
	return (f == FLAVOR_memb || f == FLAVOR_mb || f == FLAVOR_signal) &&
	       __atomic_load_n(&urcu_inline_gp[f], __ATOMIC_RELAXED) != NULL;
}

static inline volatile unsigned long *urcu_inline_ctr(enum rcu_flavor f)
{
	return (volatile unsigned long *)((char *)__builtin_thread_pointer() + urcu_reader_tp_offset[f]);
}

/* urcu_<flavor>_smp_mb_slave() */
static inline void urcu_inline_mb_slave(enum rcu_flavor f)
{
	if (f == FLAVOR_signal ||
	    (f == FLAVOR_memb && __builtin_expect(*(volatile int *)urcu_inline_memb_membarrier, 1)))
		__asm__ volatile("" ::: "memory");      /* cmm_barrier() */
	else
		__asm__ volatile("mfence" ::: "memory");   /* cmm_smp_mb() */
}

/* _urcu_<flavor>_read_lock() */
static inline void urcu_inline_read_lock(enum rcu_flavor f)
{
	if (f == FLAVOR_qsbr)
		return;   /* _urcu_qsbr_read_lock(): an assertion in debug builds */
	volatile unsigned long *ctr = urcu_inline_ctr(f);
	__asm__ volatile("" ::: "memory");
	unsigned long tmp = *ctr;
	if (__builtin_expect(!(tmp & URCU_GP_CTR_NEST_MASK), 1)) {
		*ctr = *(volatile unsigned long *)&urcu_inline_gp[f]->ctr;
		urcu_inline_mb_slave(f);
	} else {
		*ctr = tmp + URCU_GP_COUNT;
	}
}

/* _urcu_<flavor>_read_unlock(), with urcu_common_wake_up_gp() */
static inline void urcu_inline_read_unlock(enum rcu_flavor f)
{
	if (f == FLAVOR_qsbr)
		return;   /* _urcu_qsbr_read_unlock(): the same */
	volatile unsigned long *ctr = urcu_inline_ctr(f);
	unsigned long tmp = *ctr;
	if (__builtin_expect((tmp & URCU_GP_CTR_NEST_MASK) == URCU_GP_COUNT, 1)) {
		urcu_inline_mb_slave(f);
		*ctr = tmp - URCU_GP_COUNT;
		urcu_inline_mb_slave(f);
		volatile int32_t *futex = &urcu_inline_gp[f]->futex;
		if (__builtin_expect(*futex == -1, 0)) {
			int saved = errno;
			*futex = 0;
			raw_syscall(SYS_futex, futex, FUTEX_WAKE, 1);
			errno = saved;
		}
	} else {
		*ctr = tmp - URCU_GP_COUNT;
	}
	__asm__ volatile("" ::: "memory");
}

#endif
