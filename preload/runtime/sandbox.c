/* The sandboxed process's identity, read before the sandbox (sandbox.h).
 * Plain libc only: the symbolizer and the unit tests link it alone. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include "runtime/sandbox.h"
#include "runtime/thread_state.h"
#include "base/raw_syscall.h"

int tracer_sandboxed;
static pid_t sandbox_pid;        /* read before the sandbox; 0: ask */
static char sandbox_comm[17];    /* the entering thread's name */

/* Where glibc keeps a thread's id in its descriptor (struct pthread's
 * tid, written by the kernel at clone(): what pthread_self() points to),
 * in ints; glibc does not export it. Found as the one word equal to the
 * first thread's gettid(), then confirmed by every thread that starts
 * outside a sandbox; -2: not found, or once contradicted. */
#define TID_SCAN_WORDS 256   /* 1 KiB: well inside the descriptor */
static int tid_word = -1;

void sandbox_learn_tid(pid_t tid)
{
	const int *words = (const int *)(uintptr_t)pthread_self();
	int known = __atomic_load_n(&tid_word, __ATOMIC_RELAXED);
	if (known >= 0) {
		if (words[known] != tid)
			__atomic_store_n(&tid_word, -2, __ATOMIC_RELAXED);
		return;
	}
	if (known == -2)
		return;
	int found = -1;
	for (int i = 0; i < TID_SCAN_WORDS; i++)
		if (words[i] == tid) {
			if (found >= 0)
				return;   /* ambiguous: the next thread may tell */
			found = i;
		}
	if (found >= 0)
		__atomic_store_n(&tid_word, found, __ATOMIC_RELAXED);
}

pid_t thread_tid(void)
{
	if (!in_sandbox())
		return gettid();
	int known = __atomic_load_n(&tid_word, __ATOMIC_RELAXED);
	return known >= 0 ? ((const int *)(uintptr_t)pthread_self())[known] : 0;
}

void sandbox_prepare(struct thread_state *ts)
{
	sandbox_pid = getpid();
	raw_thread_name(sandbox_comm);
	if (!ts->tid)
		ts->tid = gettid();
	sandbox_learn_tid(ts->tid);
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
	return in_sandbox() && ts->tid ? ts->tid : thread_tid();
}

void report_comm(char comm[17])
{
	memset(comm, 0, 17);
	if (in_sandbox())
		memcpy(comm, sandbox_comm, 16);
	else
		raw_thread_name(comm);
}

/* fork() was allowed in the sandbox: the forking thread is the child's
 * only one, its id the child's pid (glibc has written it in the
 * descriptor). */
/* The process whose reports these are: set by the constructor and in each
 * forked child (0 before the constructor: the process that loaded us). A
 * vfork() child runs no fork handler and shares this memory: its pid is
 * not this one, so its _exit() prints no summary in its parent's name (it
 * printed the parent's, and the parent's own never came). */
static pid_t tracer_pid;

void sandbox_fork_child(struct thread_state *ts)
{
	if (in_sandbox()) {
		ts->tid = thread_tid();
		sandbox_pid = ts->tid;   /* 0: unknown, report_pid() asks */
	}
	tracer_pid = report_pid();   /* the child is a process of its own */
}

void process_note_ours(void)
{
	__atomic_store_n(&tracer_pid, getpid(), __ATOMIC_RELAXED);
}

int process_is_ours(void)
{
	pid_t owner = __atomic_load_n(&tracer_pid, __ATOMIC_RELAXED);
	return !owner || owner == report_pid();
}
