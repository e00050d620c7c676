/* The tracer's self-checks: an internal invariant that fails (here made
 * to fail by self_check_fault=N, as a corrupted lock graph would) prints
 * one line, turns every check off and leaves the program alone: its
 * output and exit status are its own, nothing more is reported. The same
 * program without the fault is reported (the twin). */
#include <criterion/criterion.h>
#include "harness.h"
#include "records.h"

#define SELF_CHECK_LINE "lockdep-rcu: BUG: self-check failed: "

static struct run_records self_check_run(const char *scenario, const char *options)
{
	return run_target_records("self_check", "memb", scenario,
				  &(struct run_options){ .preload = 1, .options = options, .timeout = 60 });
}

Test(self_check, the_program_with_its_bugs_is_reported_without_a_fault)
{
	struct run_records rr = self_check_run("bugs-after-first-dependency", NULL);
	cr_expect(strstr(rr.run.out, "done"), "%s", rr.context);
	expect_records(&rr, "circular_dependency", 1);
	expect_records(&rr, "suspicious_rcu", 1);
	expect_records(&rr, "bad_unlock", 1);
	cr_expect_eq(rr.run.exit_code, 66, "%s", rr.context);
	cr_expect_eq(count_of(rr.log, SELF_CHECK_LINE), 0, "%s", rr.context);
	run_records_free(&rr);
}

Test(self_check, a_failed_self_check_prints_once_and_turns_the_checks_off)
{
	struct run_records rr = self_check_run("bugs-after-first-dependency", "self_check_fault=1");
	cr_expect_str_eq(rr.run.out, "value 7\nunlock 0\ndone\n", "%s", rr.context);
	cr_expect_eq(rr.run.exit_code, 0, "the program's own status\n%s", rr.context);
	cr_expect_eq(count_of(rr.log, SELF_CHECK_LINE), 1, "%s", rr.context);
	/* It names the invariant and where it is checked. */
	cr_expect(strstr(rr.log, "self_check_fault() at ") && strstr(rr.log, "lock_graph.c:"), "%s", rr.context);
	cr_expect(strstr(rr.log, "the program keeps running"), "%s", rr.context);
	expect_records(&rr, NULL, 0);
	run_records_free(&rr);
}

Test(self_check, a_fault_in_one_thread_turns_the_checks_off_for_all)
{
	/* The twin first: each thread's inversion is reported. */
	struct run_records twin = self_check_run("threads-at-once", NULL);
	cr_expect(strstr(twin.run.out, "done"), "%s", twin.context);
	expect_records(&twin, "circular_dependency", 4);
	run_records_free(&twin);

	struct run_records rr = self_check_run("threads-at-once", "self_check_fault=2");
	cr_expect_str_eq(rr.run.out, "done\n", "%s", rr.context);
	cr_expect_eq(rr.run.exit_code, 0, "%s", rr.context);
	cr_expect_eq(count_of(rr.log, SELF_CHECK_LINE), 1, "%s", rr.context);
	expect_records(&rr, NULL, 0);
	run_records_free(&rr);
}
