/* The sandboxed process's identity, read before the sandbox (sandbox.h).
 * Plain libc only: the symbolizer and the unit tests link it alone. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "sandbox.h"
#include "thread_state.h"

int tracer_sandboxed;
static pid_t sandbox_pid;
static char sandbox_comm[17];

void sandbox_prepare(struct thread_state *ts)
{
	sandbox_pid = getpid();
	prctl(PR_GET_NAME, sandbox_comm, 0, 0, 0);
	if (!ts->tid)
		ts->tid = gettid();
}

void sandbox_entered(int mode)
{
	/* strict is the stronger: a filter added later does not lift it */
	if (mode > __atomic_load_n(&tracer_sandboxed, __ATOMIC_ACQUIRE))
		__atomic_store_n(&tracer_sandboxed, mode, __ATOMIC_RELEASE);
}

pid_t report_pid(void)
{
	return in_sandbox() && sandbox_pid ? sandbox_pid : getpid();
}

pid_t report_tid(const struct thread_state *ts)
{
	return in_sandbox() && ts->tid ? ts->tid : gettid();
}

void report_comm(char comm[17])
{
	memset(comm, 0, 17);
	if (in_sandbox())
		memcpy(comm, sandbox_comm, 16);
	else
		prctl(PR_GET_NAME, comm, 0, 0, 0);
}

/* fork() was allowed in the sandbox: the child's pid and the forking
 * thread's new id are read as the tracer reads them after every fork
 * (report_fork_child()). */
void sandbox_fork_child(struct thread_state *ts)
{
	if (in_sandbox()) {
		sandbox_pid = getpid();
		ts->tid = gettid();
	}
}
