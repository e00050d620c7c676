/* Correct multi-threaded programs stay silent under the preload, and the
 * preload does not change what they do: same output, same exit status. */
#include <criterion/criterion.h>
#include "harness.h"

Test(correct_programs, readers_updaters_call_rcu_condvars_fork_in_every_flavor, .timeout = 120)
{
	for (const char *const *f = all_flavors; *f; f++) {
		struct run_options pre = { .preload = 1, .timeout = 30 }, plain = { .preload = 0, .timeout = 30 };
		struct run with = run_target("correct_program", *f, "", &pre);
		struct run without = run_target("correct_program", *f, "", &plain);
		cr_expect_str_empty(with.err, "[%s] reports on a correct program:\n%s", *f, with.err);
		cr_expect_eq(with.exit_code, 0, "[%s] exit %d", *f, with.exit_code);
		cr_expect(strstr(with.out, "reads 60000 taken 100 last 199 child 0"), "[%s] %s", *f, with.out);
		cr_expect_str_eq(with.out, without.out, "[%s] output differs", *f);
		cr_expect_eq(with.exit_code, without.exit_code, "[%s]", *f);
		run_free(&with);
		run_free(&without);
	}
}

Test(correct_programs, demo_is_silent_without_preload_and_reports_with_it)
{
	struct run_options pre = { .preload = 1 }, plain = { .preload = 0 };
	char *argv[] = { (char *)build_path("targets/demo_buggy_cache.memb"), NULL };
	struct run without = run_program(argv, &plain);
	cr_expect_str_empty(without.err);
	cr_expect_eq(without.exit_code, 0, "exit status %d, expected %d:\n%s%s", without.exit_code, 0, without.out, without.err);
	run_free(&without);
	char path[4096];
	snprintf(path, sizeof(path), "%s", build_path("targets/demo_buggy_cache.memb"));
	char *argv2[] = { path, NULL };
	struct run with = run_program(argv2, &pre);
	cr_expect_eq(splat_count(with.err), 3, "%s", with.err);
	cr_expect(strstr(with.err, "demo_buggy_cache.c:19 suspicious rcu_dereference() usage!"), "%s", with.err);
	cr_expect(strstr(with.err, "never called rcu_register_thread()"), "%s", with.err);
	cr_expect(strstr(with.err, "still has locks held!"), "%s", with.err);
	cr_expect(strstr(with.err, "SUMMARY: lockdep-rcu: 3 reports: 2 suspicious RCU usage, 1 locks held at thread end"),
		  "%s", with.err);
	cr_expect_eq(with.exit_code, 66, "exit status %d, expected %d:\n%s%s", with.exit_code, 66, with.out, with.err);
	run_free(&with);
}
