/* Time a process spends stopped (SIGSTOP: Ctrl-Z, a debugger) is no wait:
 * a grace period that waits for a reader across a stop longer than
 * stall_timeout is no stall once the process continues. Its twin holds the
 * reader as long while running, and is reported. */
#include <criterion/criterion.h>
#include "harness.h"
#include "records.h"

#define STALL_KIND "rcu_stall"

static struct run_records stopped_run(const char *flavor, const char *scenario)
{
	/* The reader's section lasts 4 s, stopped or running; the stall
	 * warning is due after 2 s of waiting. */
	return run_target_records("stopped_process", flavor, scenario,
				  &(struct run_options){ .preload = 1, .options = "stall_timeout=2", .timeout = 60 });
}

Test(stopped_process, a_reader_held_across_the_stall_timeout_is_reported)
{
	const char *const flavors[] = { "memb", "qsbr", NULL };
	for (const char *const *f = flavors; *f; f++) {
		struct run_records rr = stopped_run(*f, "held-in-read-side");
		cr_expect(strstr(rr.run.out, "done"), "[%s]\n%s", *f, rr.context);
		cr_expect_geq(records_of_kind(&rr, STALL_KIND), 1, "[%s]\n%s", *f, rr.context);
		expect_records(&rr, NULL, records_of_kind(&rr, STALL_KIND));
		run_records_free(&rr);
	}
}

Test(stopped_process, time_stopped_in_a_read_side_is_no_stall)
{
	const char *const flavors[] = { "memb", "qsbr", NULL };
	for (const char *const *f = flavors; *f; f++) {
		struct run_records rr = stopped_run(*f, "stopped-in-read-side");
		cr_expect(strstr(rr.run.out, "done"), "[%s]\n%s", *f, rr.context);
		cr_expect_eq(rr.run.exit_code, 0, "[%s]\n%s", *f, rr.context);
		expect_records(&rr, NULL, 0);
		run_records_free(&rr);
	}
}
