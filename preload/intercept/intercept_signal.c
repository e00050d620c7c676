/* Interposed signal handling: every handler the program installs runs
 * inside a wrapper that records "in the handler of signal S" in the
 * thread's signal context (signal_state.h), and the calls that change the
 * blocked mask forget the cached one. What the program sees is unchanged:
 * sigaction() and signal() return its own handler and flags as the old
 * action, SIG_IGN and SIG_DFL are installed as given, every flag
 * (SA_RESTART, SA_NODEFER, SA_RESETHAND, SA_ONSTACK) and sa_mask reach the
 * kernel as given, errno is as the interrupted code left it when the
 * handler starts and as the handler left it when it returns, and every
 * call returns what the real one returned.
 *
 * The wrapper is async-signal-safe: a few TLS stores around the call, no
 * allocation, no lock, no stdio. glibc's internal signals (SIGCANCEL and
 * SIGSETXID, 32 and 33) cannot be installed by a program: glibc refuses
 * them, and so do we, with its own errno. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <ucontext.h>
#include "runtime/real_functions.h"
#include "runtime/signal_state.h"
#include "rcu/urcu_calls.h"
#include "checks/rcu_tracking.h"
#include "checks/check_signal_usage.h"

INTERPOSE(sigaction);
__sighandler_t bsd_signal(int signo, __sighandler_t handler);   /* not declared under _GNU_SOURCE */
INTERPOSE(signal);
INTERPOSE(sysv_signal);
INTERPOSE(bsd_signal);
INTERPOSE(pthread_sigmask);
INTERPOSE(sigprocmask);
INTERPOSE(siglongjmp);
INTERPOSE(longjmp);
extern void __longjmp_chk(sigjmp_buf env, int val) __attribute__((noreturn));
INTERPOSE(__longjmp_chk);

/* The program's handler of each signal: the function, with bit 63 set
 * when it takes SA_SIGINFO's three arguments. One 64-bit word, so a
 * handler running on another thread never sees half an update. */
#define PROGRAM_SIGINFO (1ull << 63)
static uint64_t program_handlers[NSIG];

static void signal_handler_wrapper(int signo, siginfo_t *info, void *context);

static int is_wrapper(const struct sigaction *sa)
{
	return sa->sa_sigaction == signal_handler_wrapper;
}

/* What sigaction() reports to the program: its own handler, and SA_SIGINFO
 * only if it asked for it. Everything else is what the kernel holds. */
static void program_view(struct sigaction *old, uint64_t entry)
{
	if (!is_wrapper(old))
		return;
	old->sa_sigaction = (void (*)(int, siginfo_t *, void *))(uintptr_t)(entry & ~PROGRAM_SIGINFO);
	if (!(entry & PROGRAM_SIGINFO))
		old->sa_flags &= ~SA_SIGINFO;
}

/* liburcu-signal's own SIGUSR1 handler (a memory barrier and a flag; every
 * grace period signals every reader thread) takes no lock: it is left as
 * liburcu made it, and its signal does not count for the usage checks.
 * Recognized by the library it is in, with dladdr(), which is not
 * async-signal-safe: a handler installed from a handler is wrapped. */
static int is_liburcu_handler(const struct sigaction *act)
{
	return !signal_context()->depth && is_urcu_code((uintptr_t)act->sa_handler);
}

static int installs_a_handler(int signo, const struct sigaction *act)
{
	return act && signo > 0 && signo < NSIG && signo != SIGKILL && signo != SIGSTOP &&
	       act->sa_handler != SIG_IGN && act->sa_handler != SIG_DFL && !is_wrapper(act) &&
	       !is_liburcu_handler(act);
}

static void handled(int signo)
{
	__atomic_fetch_or(&handled_signals, signal_bit(signo), __ATOMIC_RELAXED);
	signal_usage_enable();
}

int sigaction(int signo, const struct sigaction *restrict act, struct sigaction *restrict oldact)
{
	if (!installs_a_handler(signo, act)) {
		uint64_t entry = signo > 0 && signo < NSIG ? __atomic_load_n(&program_handlers[signo], __ATOMIC_RELAXED) : 0;
		int ret = REAL(sigaction)(signo, act, oldact);
		if (ret == 0 && oldact)
			program_view(oldact, entry);
		return ret;
	}
	/* The program's handler is in the table before the kernel can call
	 * the wrapper; put back if the kernel refuses. */
	struct sigaction wrapped = *act;
	uint64_t entry = (uint64_t)(uintptr_t)act->sa_sigaction | (act->sa_flags & SA_SIGINFO ? PROGRAM_SIGINFO : 0);
	wrapped.sa_sigaction = signal_handler_wrapper;
	wrapped.sa_flags |= SA_SIGINFO;
	uint64_t previous = __atomic_exchange_n(&program_handlers[signo], entry, __ATOMIC_RELEASE);
	int ret = REAL(sigaction)(signo, &wrapped, oldact);
	if (ret != 0) {
		__atomic_store_n(&program_handlers[signo], previous, __ATOMIC_RELEASE);
		return ret;
	}
	handled(signo);
	if (oldact)
		program_view(oldact, previous);
	return 0;
}

/* signal() and its variants install with flags the C library chooses
 * (signal(): SA_RESTART unless siginterrupt() said otherwise; sysv_signal():
 * SA_RESETHAND | SA_NODEFER). So the real call installs the program's
 * handler, and the wrapper then takes its place with exactly the flags and
 * mask the C library chose. A signal landing in between runs the program's
 * handler unwrapped: it is not tracked, nothing else. */
static void wrap_installed(int signo, __sighandler_t handler)
{
	if (handler == SIG_IGN || handler == SIG_DFL || handler == SIG_ERR || signo <= 0 || signo >= NSIG)
		return;
	int saved_errno = errno;
	struct sigaction now;
	if (REAL(sigaction)(signo, NULL, &now) == 0 && now.sa_handler == handler) {
		__atomic_store_n(&program_handlers[signo], (uint64_t)(uintptr_t)handler, __ATOMIC_RELEASE);
		now.sa_sigaction = signal_handler_wrapper;
		now.sa_flags |= SA_SIGINFO;
		if (REAL(sigaction)(signo, &now, NULL) == 0)
			handled(signo);
	}
	errno = saved_errno;
}

/* The old handler a signal()-style call returned, as the program knows it. */
static __sighandler_t program_old_handler(__sighandler_t old, uint64_t entry)
{
	if (old != (__sighandler_t)(void *)signal_handler_wrapper)
		return old;
	return (__sighandler_t)(uintptr_t)(entry & ~PROGRAM_SIGINFO);
}

#define SIGNAL_FUNCTION(name)                                                          \
	__sighandler_t name(int signo, __sighandler_t handler)                         \
	{                                                                              \
		uint64_t entry = signo > 0 && signo < NSIG                             \
			? __atomic_load_n(&program_handlers[signo], __ATOMIC_RELAXED) : 0; \
		__sighandler_t old = REAL(name)(signo, handler);                       \
		if (old == SIG_ERR)                                                    \
			return old;                                                    \
		wrap_installed(signo, handler);                                        \
		return program_old_handler(old, entry);                                \
	}

SIGNAL_FUNCTION(signal)
SIGNAL_FUNCTION(sysv_signal)
SIGNAL_FUNCTION(bsd_signal)

/* ---- the handler wrapper ------------------------------------------------ */

/* A fault the thread's own instruction raised (SIGSEGV from an access,
 * SIGFPE from a division...): its handler runs where the fault is, as the
 * kernel's page-fault handler runs in the faulting task's context, never
 * as an interrupt (kernel lockdep does not count faults as interrupt
 * contexts either). Sent by kill() or raise(), the same signal is one. */
static int raised_by_fault(int signo, const siginfo_t *info)
{
	return info && info->si_code > 0 &&
	       (signo == SIGSEGV || signo == SIGBUS || signo == SIGILL || signo == SIGFPE || signo == SIGTRAP);
}

static void push_frame(struct signal_context *sc, unsigned d, int signo, const siginfo_t *info,
		       const ucontext_t *uc)
{
	if (d >= MAX_SIGNAL_NESTING)
		return;
	struct signal_frame *f = &sc->frames[d];
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	f->sp = sp;
	f->altstack_lo = f->altstack_hi = 0;
	/* On the alternate signal stack (SA_ONSTACK): the kernel reports its
	 * bounds in uc_stack. */
	if (uc && uc->uc_stack.ss_size && sp - (uintptr_t)uc->uc_stack.ss_sp < uc->uc_stack.ss_size) {
		f->altstack_lo = (uintptr_t)uc->uc_stack.ss_sp;
		f->altstack_hi = f->altstack_lo + uc->uc_stack.ss_size;
	}
	/* 0: the handler is not an interrupt context for the checks */
	f->signo = raised_by_fault(signo, info) ? 0 : signo;
}

static void signal_handler_wrapper(int signo, siginfo_t *info, void *context)
{
	int interrupted_errno = errno;
	struct signal_context *sc = signal_context();
	const ucontext_t *uc = context;
	uint64_t entry = signo > 0 && signo < NSIG ? __atomic_load_n(&program_handlers[signo], __ATOMIC_ACQUIRE) : 0;
	/* Handlers the interrupted code left by siglongjmp() are over: it runs
	 * above their frames. */
	if (sc->depth && uc)
		signal_frames_prune(sc, (uintptr_t)uc->uc_mcontext.gregs[REG_RSP]);
	unsigned depth = sc->depth;
	uint64_t saved_blocked = sc->blocked;
	uint8_t saved_valid = sc->blocked_valid;
	push_frame(sc, depth, signo, info, uc);
	sc->blocked_valid = 0;   /* the kernel added sa_mask and the signal */
	signal_fence();
	sc->depth = depth + 1;   /* published after the frame is whole */
	signal_fence();

	errno = interrupted_errno;
	if (entry & PROGRAM_SIGINFO)
		((void (*)(int, siginfo_t *, void *))(uintptr_t)(entry & ~PROGRAM_SIGINFO))(signo, info, context);
	else if (entry)
		((void (*)(int))(uintptr_t)entry)(signo);
	int handler_errno = errno;

	signal_fence();
	sc->depth = depth;
	signal_fence();
	sc->blocked = saved_blocked;
	signal_fence();
	sc->blocked_valid = saved_valid;
	errno = handler_errno;
}

/* ---- calls that change the blocked mask ------------------------------------ */

int pthread_sigmask(int how, const sigset_t *restrict set, sigset_t *restrict oldset)
{
	int ret = REAL(pthread_sigmask)(how, set, oldset);
	if (set)
		signal_context()->blocked_valid = 0;
	return ret;
}

int sigprocmask(int how, const sigset_t *restrict set, sigset_t *restrict oldset)
{
	int ret = REAL(sigprocmask)(how, set, oldset);
	if (set)
		signal_context()->blocked_valid = 0;
	return ret;
}

/* They restore the mask sigsetjmp() saved (and may leave a handler): the
 * cache is forgotten before the jump, which never returns. */
void siglongjmp(sigjmp_buf env, int val)
{
	signal_context()->blocked_valid = 0;
	REAL(siglongjmp)(env, val);
	__builtin_unreachable();
}

void longjmp(jmp_buf env, int val)
{
	signal_context()->blocked_valid = 0;
	REAL(longjmp)(env, val);
	__builtin_unreachable();
}

void __longjmp_chk(sigjmp_buf env, int val)
{
	signal_context()->blocked_valid = 0;
	REAL(__longjmp_chk)(env, val);
	__builtin_unreachable();
}

/* From the constructor: the first sigaction() or siglongjmp() may come
 * from a signal handler, where looking a symbol up is not safe. */
void signal_intercepts_init(void)
{
	(void)REAL(sigaction);
	(void)REAL(pthread_sigmask);
	(void)REAL(sigprocmask);
	(void)REAL(siglongjmp);
	(void)REAL(longjmp);
	(void)REAL(__longjmp_chk);
}
