/* Entering a seccomp sandbox (prctl(PR_SET_SECCOMP), or the seccomp system
 * call through syscall(), as libseccomp makes it): afterwards the process
 * may be killed for a system call the plain program never makes, so the
 * tracer makes now what it would make later on first use: the log file,
 * the stack depot's mapping, this thread's dereference set. Nothing else
 * changes: the call, its result and errno are the program's.
 *
 * Both wrappers make the system call themselves, as glibc's syscall() and
 * prctl() do (the raw instruction, a result in [-4095, -1] is an errno):
 * nothing to resolve, so they are safe wherever they are called from, the
 * tracer's own futex waits and signal-handler code included (which call
 * syscall() and so reach these wrappers too).
 *
 * Inside, reports make no system call but write() (sandbox.h).
 *
 * syscall() is interposed for that; the program's raw mmap and munmap go
 * through it too and are told to the memory wrappers (memory_calls.h), and
 * its raw unshare and setns stop the watchdog first (namespaces.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "report/lock_stat.h"
#include "runtime/log_output.h"
#include "intercept/memory_calls.h"
#include "intercept/namespaces.h"
#include "rcu/rcu_deref_set.h"
#include "report/report.h"
#include "runtime/sandbox.h"
#include "unwind/stack_depot.h"
#include "symbolize/symbolize.h"
#include "runtime/tracer_arena.h"
#include "runtime/thread_state.h"
#include "symbolize/symbolizer_lock.h"

#if !defined(__x86_64__)
#error "intercept_sandbox.c makes x86-64 system calls"
#endif

static inline long raw_syscall6(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

/* The C library's convention for a system call's result. */
static inline long syscall_result(long ret)
{
	if ((unsigned long)ret > -4096UL) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}

static void list_modules(void *unused)
{
	(void)unused;
	symbolize_warm_up();
}

static void before_sandbox(void)
{
	struct thread_state *ts = thread_state();
	if (ts->in_tracer)
		return;
	int saved_errno = errno;
	log_output_open_now();
	stack_depot_reserve();
	tracer_pages_reserve();
	if (!ts->deref_set)
		rcu_deref_set_claim(ts);
	sandbox_prepare(ts);
	lock_stat_prepare_thread(ts);
	/* The loaded objects listed now: inside, a frame is named by its
	 * module with no file opened (and the tracer's stack is mapped by
	 * this first use). */
	symbolizer_run(ts, list_modules, NULL);
	errno = saved_errno;
}

/* The call entered a sandbox (its result is the program's). */
static long after_sandbox(long ret, int strict)
{
	if ((unsigned long)ret <= -4096UL)
		sandbox_entered(strict ? SANDBOX_STRICT : SANDBOX_FILTER);
	return ret;
}

/* Whether a call can install a filter or strict mode: libseccomp's feature
 * probes (a NULL filter, answered EFAULT when the flag is known; an action
 * or notification query) enter no sandbox, and are not prepared for (QEMU
 * makes them at start-up: the log's three descriptors were then kept open
 * from there on). */
static int seccomp_may_enter(long op, long filter)
{
	return op == SECCOMP_SET_MODE_STRICT || (op == SECCOMP_SET_MODE_FILTER && filter != 0);
}

int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	long a2 = va_arg(ap, long), a3 = va_arg(ap, long), a4 = va_arg(ap, long), a5 = va_arg(ap, long);
	va_end(ap);
	if (option != PR_SET_SECCOMP || !seccomp_may_enter(a2 == SECCOMP_MODE_STRICT ? SECCOMP_SET_MODE_STRICT
									      : SECCOMP_SET_MODE_FILTER,
							  a2 == SECCOMP_MODE_STRICT ? 0 : a3))
		return (int)syscall_result(raw_syscall6(SYS_prctl, option, a2, a3, a4, a5, 0));
	before_sandbox();
	return (int)syscall_result(after_sandbox(raw_syscall6(SYS_prctl, option, a2, a3, a4, a5, 0),
						 a2 == SECCOMP_MODE_STRICT));
}

long syscall(long number, ...)
{
	va_list ap;
	va_start(ap, number);
	long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long);
	long a4 = va_arg(ap, long), a5 = va_arg(ap, long), a6 = va_arg(ap, long);
	va_end(ap);
	if (number == SYS_mmap || number == SYS_munmap) {
		/* the memory calls the tracer follows, made raw: a shared
		 * mapping is one its class tags must never be written into */
		long ret = raw_syscall6(number, a1, a2, a3, a4, a5, a6);
		if (number == SYS_mmap)
			memory_mapped_by_syscall(ret, (size_t)a2, (int)a4);
		else
			memory_unmapped_by_syscall(ret, (void *)a1, (size_t)a2);
		return syscall_result(ret);
	}
	if (number == SYS_unshare)
		namespaces_before_unshare(a1);
	else if (number == SYS_setns)
		namespaces_before_setns(a2);
	if (number != SYS_seccomp || !seccomp_may_enter(a1, a3))
		return syscall_result(raw_syscall6(number, a1, a2, a3, a4, a5, a6));
	before_sandbox();
	return syscall_result(after_sandbox(raw_syscall6(number, a1, a2, a3, a4, a5, a6),
					    a1 == SECCOMP_SET_MODE_STRICT));
}
