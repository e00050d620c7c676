/* Calls the kernel refuses (EINVAL) in a process of more than one thread:
 * unshare() of a user namespace (it implies CLONE_THREAD, as do
 * CLONE_SIGHAND and CLONE_VM), and setns() into a user or mount namespace
 * (a mount namespace wants the filesystem attributes unshared, which
 * threads share) or one of a type the descriptor decides (nstype 0). A
 * program whose own threads are gone makes them, and the tracer's watchdog
 * thread (watchdog.c) must not be the second thread: it is stopped first,
 * and the next announced wait starts it again. Nothing else changes: the
 * call, its result and errno are the program's. The same calls through
 * syscall() come here from intercept_sandbox.c. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "intercept/namespaces.h"
#include "runtime/real_functions.h"
#include "watchdog/watchdog.h"

INTERPOSE(unshare);
INTERPOSE(setns);

#define SINGLE_THREAD_UNSHARE (CLONE_NEWUSER | CLONE_THREAD | CLONE_SIGHAND | CLONE_VM)

void namespaces_before_unshare(long flags)
{
	if (flags & SINGLE_THREAD_UNSHARE)
		watchdog_stop();
}

void namespaces_before_setns(long nstype)
{
	if (nstype == 0 || (nstype & (CLONE_NEWUSER | CLONE_NEWNS)))
		watchdog_stop();
}

int unshare(int flags)
{
	namespaces_before_unshare(flags);
	return REAL(unshare)(flags);
}

int setns(int fd, int nstype)
{
	namespaces_before_setns(nstype);
	return REAL(setns)(fd, nstype);
}
