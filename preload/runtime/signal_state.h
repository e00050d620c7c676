/* Signal context, the userspace twin of the kernel's hardirq context and
 * irqs-enabled state: which signal handlers this thread is running (a
 * stack: handlers nest), which signals it has blocked, and which signals
 * the program handles at all.
 *
 * The handler stack is written by the handler wrapper (intercept_signal.c)
 * at entry and exit; a handler left by siglongjmp() never returns, so a
 * frame whose stack pointer the thread has since climbed above is stale
 * and dropped (signal_frames_prune()), at the next handler's entry (from
 * the interrupted context's stack pointer, exactly) or at the next lock
 * acquisition that looks at the context.
 *
 * The blocked mask is not tracked call by call: it is read from the kernel
 * (one rt_sigprocmask system call) when it is needed and unknown, and
 * forgotten by every call that may change it (pthread_sigmask(),
 * sigprocmask(), siglongjmp(), a handler's entry). A handler leaves the
 * cache as it found it, so an update it interrupted is not torn.
 *
 * Lives in initial-exec TLS beside thread_state, which the lock wrappers'
 * fast paths are tuned for and which this leaves alone. */
#ifndef LOCKDEP_RCU_SIGNAL_STATE_H
#define LOCKDEP_RCU_SIGNAL_STATE_H

#include <stdint.h>
#include "runtime/thread_state.h"

/* Handlers recorded per thread; deeper ones are counted in ->depth but
 * not recorded (a lock taken there is judged against the innermost
 * recorded handler). */
#define MAX_SIGNAL_NESTING 8

struct signal_frame {
	uintptr_t sp;            /* the wrapper's stack pointer at entry */
	uintptr_t altstack_lo;   /* when the handler runs on the alternate */
	uintptr_t altstack_hi;   /* signal stack: its bounds, else 0 */
	int signo;
};

struct signal_context {
	unsigned depth;          /* handlers running on this thread */
	uint8_t blocked_valid;   /* ->blocked is the thread's current mask */
	uint64_t blocked;        /* bit signo-1: blocked */
	struct signal_frame frames[MAX_SIGNAL_NESTING];
};

extern __thread struct signal_context tracer_signal_context
	__attribute__((tls_model("initial-exec")));

static inline struct signal_context *signal_context(void)
{
	return &tracer_signal_context;
}

/* Signals the program installed a handler for (bit signo-1), through
 * sigaction(), signal(), sysv_signal() or bsd_signal(). Only these count:
 * a signal nobody handles interrupts nothing. Never cleared (the kernel's
 * usage bits are history too). */
extern uint64_t handled_signals;
/* Non-zero once any handler is installed: the one flag the lock wrappers
 * test before looking at signal context at all. */
extern int signal_usage_tracked;

static inline uint64_t signal_bit(int signo)
{
	return 1ull << (signo - 1);
}

/* For the acquisition cache (lock_tracking.h), once a handler is
 * installed: 1 and *deliverable = the handled signals this thread leaves
 * unblocked, when that is all an acquisition's signal usage depends on (no
 * handler running here, the mask known), so that an acquisition validated
 * and recorded before in the same context is answered from the cache; 0
 * when the checks must run (in a handler, or the mask to be read). */
static inline int signal_context_cacheable(uint64_t *deliverable)
{
	const struct signal_context *sc = &tracer_signal_context;
	if (sc->depth || !sc->blocked_valid)
		return 0;
	*deliverable = __atomic_load_n(&handled_signals, __ATOMIC_RELAXED) & ~sc->blocked;
	return 1;
}

/* The thread's blocked signals, from the cache or the kernel. */
uint64_t signal_blocked_mask(struct signal_context *sc);

/* Handlers this thread has left without returning (siglongjmp): a frame
 * is stale when `sp`, a stack pointer of the running code, is above it
 * on its stack (or off its alternate stack). */
void signal_frames_prune(struct signal_context *sc, uintptr_t sp);

/* The signal whose handler this thread runs (innermost), or 0. */
static inline int signal_current_handler(struct signal_context *sc)
{
	unsigned d = sc->depth;
	if (!d)
		return 0;
	return sc->frames[(d <= MAX_SIGNAL_NESTING ? d : MAX_SIGNAL_NESTING) - 1].signo;
}

/* Whether this thread runs a signal handler right now (stale frames
 * dropped first); the signal, or 0. For the RCU checks. */
int signal_handler_running(void);

#endif
