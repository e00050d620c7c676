/* liburcu's own per-thread reader state, read by the tracer. A program
 * built with _LGPL_SOURCE inlines rcu_read_lock(), rcu_read_unlock() and
 * QSBR's online/offline, so no wrapper sees them; but the inlined code
 * updates an exported TLS variable per flavor (urcu_memb_reader, ...,
 * urcu_bp_reader as a pointer): the read-side nesting in the low half of
 * its ctr, QSBR's ctr 0 when offline. The tracer reads it at every event
 * it does see (lock acquisitions, grace-period waits, call_rcu(),
 * registration, thread end).
 *
 * Only a liburcu loaded when the process starts is read this way: its TLS
 * is then in the static block, at one offset from the thread pointer in
 * every thread (found once, in the constructor). A liburcu dlopen()ed later
 * is followed through its exported functions only. */
#ifndef LOCKDEP_RCU_URCU_READER_STATE_H
#define LOCKDEP_RCU_URCU_READER_STATE_H

#include <stdint.h>
#include "base/flavors.h"

struct thread_state;

/* Bit per liburcu flavor whose reader state can be read. */
extern unsigned urcu_readable_flavors;
/* Set by urcu_reader_state_init() unless inline_read_side=0, for the
 * inline read side (urcu_inline_read.h): each flavor's grace-period state
 * (NULL: call liburcu), and memb's sys_membarrier flag. */
struct urcu_gp;
extern struct urcu_gp *urcu_inline_gp[NR_URCU_FLAVORS];
extern int *urcu_inline_memb_membarrier;
extern int urcu_inline_qsbr;

extern intptr_t urcu_reader_tp_offset[NR_URCU_FLAVORS];

/* Finds the flavors' TLS variables (the constructor). */
void urcu_reader_state_init(void);

static inline unsigned long urcu_reader_ctr(enum rcu_flavor f)
{
	char *tp = (char *)__builtin_thread_pointer();
	if (f == FLAVOR_bp) {
		/* urcu_bp_reader is a pointer, NULL until the thread first reads */
		const unsigned long *reader = *(const unsigned long *const *)(tp + urcu_reader_tp_offset[f]);
		return reader ? __atomic_load_n(reader, __ATOMIC_RELAXED) : 0;
	}
	return __atomic_load_n((const unsigned long *)(tp + urcu_reader_tp_offset[f]), __ATOMIC_RELAXED);
}

/* The read-side nesting liburcu counts for this thread (0 for QSBR, whose
 * read side is being online). */
static inline unsigned urcu_inline_nesting(enum rcu_flavor f)
{
	if (!(urcu_readable_flavors & (1u << f)) || f == FLAVOR_qsbr)
		return 0;
	/* URCU_GP_CTR_NEST_MASK / URCU_BP_GP_CTR_NEST_MASK: the low half. An
	 * unlock without a lock wraps it around (a bug reported by the read
	 * unlock wrapper when it sees it): not a read side. */
	unsigned nesting = (unsigned)(urcu_reader_ctr(f) & ((1ul << (sizeof(unsigned long) * 4)) - 1));
	return nesting < (1u << 30) ? nesting : 0;
}

/* QSBR: -1 unknown, 1 online, 0 offline (ctr 0). */
static inline int urcu_qsbr_online_state(void)
{
	if (!(urcu_readable_flavors & (1u << FLAVOR_qsbr)))
		return -1;
	return urcu_reader_ctr(FLAVOR_qsbr) != 0;
}

/* For the watchdog: another thread's reader ctr (0 when unreadable; the
 * thread must stay listed meanwhile), the flavor's grace-period counter
 * (looked up once; 0 unknown), and liburcu's own rule: whether a reader
 * with this ctr holds up the grace period in progress (a read side begun
 * before it; QSBR: online and no quiescent state since it began). */
unsigned long urcu_reader_ctr_of(const struct thread_state *other, enum rcu_flavor f);
unsigned long urcu_gp_ctr(enum rcu_flavor f);
int urcu_reader_blocks_grace_period(unsigned long ctr, unsigned long gp, enum rcu_flavor f);

/* Whether liburcu itself says the thread is registered with f (-1:
 * unknown). Slow path. */
int urcu_registered_state(enum rcu_flavor f);

#include "runtime/thread_state.h"

/* Registered with QSBR (through rcu_register_thread(), which is never
 * inlined) and online: liburcu's own ctr when it can be read, else what the
 * exported online/offline calls told us. */
static inline int qsbr_thread_is_reader(const struct thread_state *ts)
{
	if (ts->registered[FLAVOR_qsbr] != 1)   /* URCU_REGISTERED */
		return 0;
	int online = urcu_qsbr_online_state();
	return online >= 0 ? online : !ts->qsbr_offline;
}

/* The flavors (a bit each) in whose read side liburcu says this thread is,
 * beyond the sections the tracer saw begin: inlined read sides. */
static inline unsigned inline_readers(const struct thread_state *ts)
{
	unsigned found = 0;
	for (unsigned left = urcu_readable_flavors & ~(1u << FLAVOR_qsbr); left; left &= left - 1) {
		enum rcu_flavor f = (enum rcu_flavor)__builtin_ctz(left);
		if (urcu_inline_nesting(f) > ts->nesting[f])
			found |= 1u << f;
	}
	return found;
}

/* Where this thread registered with each flavor (the register call's
 * site), for reports about its read sides. */
extern __thread uintptr_t registered_ip[NR_URCU_FLAVORS] __attribute__((tls_model("initial-exec")));

#endif
