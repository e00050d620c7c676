/* Process start and end. Nothing here is needed for correctness of the
 * wrappers (they work before this constructor runs); it registers the fork
 * handlers, moves slow first-time work out of reports, and sums up at the
 * end. The exit status is set by the exit()
 * wrapper (intercept_process.c): the exit sequence is never cut short. */
#define _GNU_SOURCE
#include <unistd.h>
#include "checks/checks.h"
#include "runtime/log_output.h"
#include "base/options.h"
#include "report/report.h"
#include "unwind/backtrace.h"
#include "runtime/thread_registry.h"
#include "rcu/urcu_reader_state.h"
#include "report/lock_stat.h"
#include "graph/graph_dump.h"
#include "watchdog/watchdog.h"
#include "checks/lock_tracking.h"
#include "classes/mutex_class_tag.h"
#include "runtime/sandbox.h"

void tracer_register_fork_handlers(void);
void signal_intercepts_init(void);
void thread_stack_note_main(void);
void process_exit_resolve(void);

__attribute__((constructor)) static void tracer_init(void)
{
	log_output_note_stderr();
	process_note_ours();
	tracer_register_fork_handlers();
	process_exit_resolve();
	signal_intercepts_init();
	thread_registry_add(thread_state());
	thread_stack_note_main();
	options_init(log_output_write);
	report_load_suppressions();
	lock_class_keys_load_rules();
	mutex_class_tags_init(tracer_options.class_cache);
	lock_stat_setup();
	watchdog_setup();
	lock_tracking_setup();
	graph_dump_setup();
	backtrace_warm_up();
	urcu_reader_state_init();
}

/* Runs among the destructors of the loaded objects: the reports other
 * threads are still writing, then the deferred check of the exiting thread
 * (a read side of a thread that never registered), the lock statistics
 * and the graph when asked for, then the summary. The
 * exiting thread's held locks are not reported: a daemon that takes its
 * shutdown lock and calls exit() is not ending a thread with locks held. */
__attribute__((destructor)) static void tracer_fini(void)
{
	struct thread_state *ts = thread_state();
	report_wait_in_flight();
	if (!ts->in_tracer && !ts->thread_ended)
		check_never_registered_reader(ts);
	lock_stat_print();
	graph_dump_write();
	report_print_summary();
	log_output_close_at_exit();
}
