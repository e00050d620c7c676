/* Process-wide events: fork (all internal locks taken in one order around
 * it, through pthread_atfork so that glibc's own forks, daemon() among
 * them, are covered too), _Fork, and the end of the process. The exit
 * sequence is the program's: destructors and atexit handlers all run;
 * the tracer only waits for reports still being written and changes the
 * status passed to exit(). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "checks/lock_tracking.h"
#include "runtime/log_output.h"
#include "base/options.h"
#include "runtime/real_functions.h"
#include "report/report.h"
#include "unwind/stack_depot.h"
#include "runtime/thread_registry.h"
#include "graph/graph_dump.h"
#include "watchdog/watchdog.h"
#include "rcu/rcu_deref_set.h"
#include "runtime/sandbox.h"

/* ---- fork ------------------------------------------------------------------
 * Lock order (outermost first; never taken in another order anywhere):
 *   report lock (also the symbolizer's), report-sites lock   (report.c)
 *   lock graph                      (lock_graph.c)
 *   lock classes, lock instances    (lock_classes.c, lock_instances.c)
 *   stack depot                     (stack_depot.c)
 *   thread registry                 (thread_registry.c)
 * A report body takes the graph (to find a cycle's path again) and names
 * classes; nothing that holds the graph lock names anything.
 * The handlers are registered first thing in the constructor, so our
 * prepare runs after the program's own (theirs may take locks, which we
 * track) and our child handler before theirs (which may release them). */

static void fork_prepare(void)
{
	struct thread_state *ts = thread_state();
	report_fork_prepare(ts);
	lock_graph_fork_prepare(ts);
	stack_depot_fork_prepare(ts);
	thread_registry_fork_prepare(ts);
}

static void fork_parent(void)
{
	thread_registry_fork_parent();
	stack_depot_fork_parent();
	lock_graph_fork_parent();
	report_fork_parent();
}

/* The child has one thread, the one that forked: what it holds it
 * inherited, and is not its own doing if it is still held at the child's
 * exit (a worker forked while the parent held a lock). */
static void mark_held_locks_inherited(struct thread_state *ts)
{
	for (unsigned i = 0; i < ts->depth; i++)
		if (ts->held[i].kind != HELD_NONE && ts->held[i].kind != HELD_RCU_READ)
			ts->held[i].attr |= HELD_ATTR_INHERITED;
}

static void fork_child(void)
{
	struct thread_state *ts = thread_state();
	thread_registry_fork_child(ts);
	stack_depot_fork_child(ts);
	lock_graph_fork_child(ts);
	report_fork_child(ts);
	lock_stat_fork_child();
	watchdog_fork_child();
	rcu_deref_sets_fork_child(ts);
	mark_held_locks_inherited(ts);
}

void tracer_register_fork_handlers(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* _Fork() runs no atfork handler: whatever another thread held is held
 * forever in the child. The child's handler frees it (and turns off what
 * a vanished thread may have left half-updated). */
pid_t _Fork(void);
INTERPOSE(_Fork);

pid_t _Fork(void)
{
	pid_t pid = REAL(_Fork)();
	if (pid == 0)
		fork_child();
	return pid;
}

/* ---- the end of the process ---------------------------------------------- */

/* The status the process ends with: the program's, or exitcode when
 * anything was reported. Decided when exit() is called, after the reports
 * other threads were writing are out. */
static int final_status(int status)
{
	/* The thread calling exit() ends here: its deferred report (a read
	 * side entered without ever registering) counts in the status. Not its
	 * held locks: a daemon that takes its shutdown lock and exits is not
	 * ending a thread with locks held. */
	struct thread_state *ts = thread_state();
	if (!ts->in_tracer && !ts->thread_ended)
		check_never_registered_reader(ts);
	report_wait_in_flight();
	if (report_count() && tracer_options.exitcode)
		return tracer_options.exitcode;
	return status;
}

INTERPOSE(exit);

void exit(int status)
{
	REAL(exit)(final_status(status));
	__builtin_unreachable();
}

/* main() returns to __libc_start_main, which calls exit() from inside
 * libc, where no wrapper sees it: main is wrapped instead. */
typedef int (*main_fn)(int, char **, char **);
static main_fn program_main;

static int main_wrapper(int argc, char **argv, char **envp)
{
	exit(program_main(argc, argv, envp));
}

int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
		      void (*rtld_fini)(void), void *stack_end);
INTERPOSE(__libc_start_main);

int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
		      void (*rtld_fini)(void), void *stack_end)
{
	program_main = main;
	return REAL(__libc_start_main)(main_wrapper, argc, argv, init, fini, rtld_fini, stack_end);
}

/* _exit() skips the exit sequence and keeps its status (a vfork child's
 * _exit(127) must stay 127); the reports in flight still come out, and a
 * log this process left empty is removed. Async-signal-safe. */
INTERPOSE(_exit);

void _exit(int status)
{
	if (process_is_ours()) {
		report_wait_in_flight();
		lock_stat_print();
		graph_dump_write();
		report_print_summary();
		log_output_close_at_exit();
	}
	REAL(_exit)(status);
	__builtin_unreachable();
}

void _Exit(int status)
{
	_exit(status);
}

/* The constructor resolves _exit() once, where dlsym() is safe: left to
 * the first call, each forked child that ends with _exit() would look it
 * up on its own, writing (and so copying) a dozen pages of the loader's,
 * and a child forked from a signal handler would call dlsym() there. */
void process_exit_resolve(void)
{
	(void)REAL(_exit);
}

/* abort(): the report another thread is writing (maybe the one this thread
 * lost the race for) comes out before the process dies. */
INTERPOSE(abort);

void abort(void)
{
	report_wait_in_flight();
	report_print_summary();
	REAL(abort)();
	__builtin_unreachable();
}
