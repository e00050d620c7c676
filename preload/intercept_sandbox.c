/* Entering a seccomp sandbox (prctl(PR_SET_SECCOMP), or the seccomp system
 * call through syscall(), as libseccomp makes it): afterwards the process
 * may be killed for a system call the plain program never makes, so the
 * tracer makes now what it would make later on first use: the log file,
 * the stack depot's mapping, this thread's dereference set. Nothing else
 * changes: the real call, its result and errno are the program's.
 *
 * What a report needs is not all here (it reads /proc, names the thread
 * with prctl(), opens ELF files): README, Limits. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "log_output.h"
#include "rcu_deref_set.h"
#include "real_functions.h"
#include "stack_depot.h"
#include "thread_state.h"

INTERPOSE(prctl);
INTERPOSE(syscall);

static void before_sandbox(void)
{
	struct thread_state *ts = thread_state();
	if (ts->in_tracer)
		return;
	int saved_errno = errno;
	log_output_prepare(-1, -1);
	stack_depot_reserve();
	if (!ts->deref_set)
		rcu_deref_set_claim(ts);
	errno = saved_errno;
}

int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long);
	unsigned long a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_SET_SECCOMP)
		before_sandbox();
	return REAL(prctl)(option, a2, a3, a4, a5);
}

long syscall(long number, ...)
{
	va_list ap;
	va_start(ap, number);
	long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long);
	long a4 = va_arg(ap, long), a5 = va_arg(ap, long), a6 = va_arg(ap, long);
	va_end(ap);
	if (number == SYS_seccomp)
		before_sandbox();
	return REAL(syscall)(number, a1, a2, a3, a4, a5, a6);
}
