/* Process start and end. Nothing here is needed for correctness of the
 * wrappers (they work before this constructor runs); it only moves slow
 * first-time work out of reports and runs the checks at exit. */
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>
#include "checks.h"
#include "options.h"
#include "report.h"
#include "backtrace.h"

__attribute__((constructor)) static void tracer_init(void)
{
	options_init();
	backtrace_warm_up();
}

/* The thread that called exit() ends here: its locks and read-side sections
 * still held are reported. Then, when anything was reported, the summary
 * line and the sanitizers' exit status convention. */
__attribute__((destructor)) static void tracer_fini(void)
{
	struct thread_state *ts = thread_state();
	if (!ts->in_tracer && !ts->thread_ended) {
		ts->thread_ended = 1;
		check_locks_held_at_thread_end(ts);
		check_never_registered_reader(ts);
	}
	report_print_summary();
	if (!report_count())
		return;
	if (tracer_options.exitcode) {
		fflush(NULL);   /* the program's buffered output comes first */
		_exit(tracer_options.exitcode);
	}
}
