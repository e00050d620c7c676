/* Signal context of each thread (signal_state.h): the blocked mask read
 * from the kernel on demand, and stale handler frames dropped. Everything
 * here is async-signal-safe: it runs in lock wrappers a handler may call. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "runtime/signal_state.h"
#include "base/raw_syscall.h"

__thread struct signal_context tracer_signal_context __attribute__((tls_model("initial-exec")));
uint64_t handled_signals;
int signal_usage_tracked;

uint64_t signal_blocked_mask(struct signal_context *sc)
{
	if (sc->blocked_valid)
		return sc->blocked;
	/* The kernel's sigset is 8 bytes on x86-64. A query never fails, so
	 * errno is untouched. */
	uint64_t set = 0;
	raw_syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &set, sizeof(set));
	sc->blocked = set;
	signal_fence();   /* a handler interrupting here saves and restores both */
	sc->blocked_valid = 1;
	return set;
}

/* Whether the handler of frame f is over, for code running at `sp`. A
 * frame on the thread's own stack is over when sp is above it; one on the
 * alternate signal stack when sp is off that stack or above it. A frame on
 * the thread's own stack cannot be judged from an sp on an alternate stack
 * (their addresses are unrelated): it is kept. */
static int frame_left(const struct signal_frame *f, uintptr_t sp, uintptr_t *alt_lo, uintptr_t *alt_hi)
{
	if (f->altstack_hi) {
		*alt_lo = f->altstack_lo;
		*alt_hi = f->altstack_hi;
		return sp < f->altstack_lo || sp >= f->altstack_hi || sp > f->sp;
	}
	if (*alt_hi && sp >= *alt_lo && sp < *alt_hi)
		return 0;
	return sp > f->sp;
}

void signal_frames_prune(struct signal_context *sc, uintptr_t sp)
{
	unsigned d = sc->depth;
	uintptr_t alt_lo = 0, alt_hi = 0;
	while (d > 0) {
		/* Frames past MAX_SIGNAL_NESTING are not recorded: they end
		 * with the innermost recorded one. */
		unsigned top = d > MAX_SIGNAL_NESTING ? MAX_SIGNAL_NESTING - 1 : d - 1;
		if (!frame_left(&sc->frames[top], sp, &alt_lo, &alt_hi))
			break;
		d = top;
	}
	if (d != sc->depth) {
		sc->depth = d;
		/* siglongjmp() restored a mask the tracer did not see */
		sc->blocked_valid = 0;
	}
}

int signal_handler_running(void)
{
	struct signal_context *sc = signal_context();
	if (!sc->depth)
		return 0;
	signal_frames_prune(sc, (uintptr_t)__builtin_frame_address(0));
	return signal_current_handler(sc);
}
