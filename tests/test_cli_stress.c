/* lockdep-rcu stress: a race found in some runs only, hangs, crashes, seeds
 * for --perturb, progress on terminals only, and its logs read again. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdlib.h>
#include <unistd.h>
#include "harness.h"
#include "cli_helpers.h"

#define RACY_RUNS 20

/* cli_racy takes its buggy shortcut in roughly 4 runs out of 10 (see the
 * target): over 20 runs the report must find it, and in some runs only. */
Test(cli, stress_finds_a_race_that_shows_in_some_runs_only, .timeout = 60)
{
	char runs[16];
	snprintf(runs, sizeof(runs), "%d", RACY_RUNS);
	struct run r = cli_env(40, NULL, "stress", "-n", runs, "-j", "2", "--timeout", "20", "--",
			       cli_target("cli_racy.memb"), NULL);
	cr_expect_eq(r.exit_code, 1, "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "lockdep-rcu report: 1 bug ("), "%s", r.out);
	cr_expect(strstr(r.out, "\n#1 WARNING: suspicious RCU usage\n   tests/targets/cli_racy.c:"), "%s", r.out);
	cr_expect(strstr(r.out, "Call Trace:\n peek_unpublished+"), "%s", r.out);
	char pattern[64];
	snprintf(pattern, sizeof(pattern), " of %d runs, ", RACY_RUNS);
	const char *of = strstr(r.out, pattern);
	cr_assert(of, "%s", r.out);
	const char *in = of;
	while (in > r.out && in[-1] >= '0' && in[-1] <= '9')
		in--;
	int hit = atoi(in);
	cr_log_info("the race showed in %d of %d runs", hit, RACY_RUNS);
	cr_expect(hit >= 1 && hit < RACY_RUNS, "in some runs, not all: %d of %d", hit, RACY_RUNS);
	cr_expect_eq(count_of(r.err, "lockdep-rcu stress: run "), hit, "one line per run that reported:\n%s", r.err);
	cr_expect(strstr(r.err, "logs kept in /"), "%s", r.err);
	cr_expect_null(strchr(r.err, '\r'), "no progress line when stderr is not a terminal");
	/* remove the kept logs */
	const char *kept = strstr(r.err, "logs kept in ");
	char dir[4096];
	cr_assert(kept && sscanf(kept, "logs kept in %4095s", dir) == 1);
	cr_expect(strstr(dir, "/lockdep-rcu-stress."), "%s", dir);
	cli_remove_dir(strdup(dir));
	run_free(&r);
}

Test(cli, stress_counts_hangs_and_explains_them, .timeout = 60)
{
	char *dir = cli_temp_dir();
	char out[4200];
	snprintf(out, sizeof(out), "%s/logs", dir);
	struct run r = cli_env(30, NULL, "stress", "-n", "2", "-j", "2", "--timeout", "1", "-o", out, "--",
			       cli_target("cli_misc.memb"), "hang", NULL);
	cr_expect_eq(r.exit_code, 1, "%s", r.err);
	cr_expect(strstr(r.out, "lockdep-rcu report: 1 bug (2 reports) in 2 of 2 runs, 2 processes, 2 logs; 2 hangs\n"),
		  "%s", r.out);
	cr_expect(strstr(r.out, "WARNING: possible recursive locking detected"), "%s", r.out);
	cr_expect(strstr(r.out, "2 runs hung (killed after the timeout"), "%s", r.out);
	/* the recursive locking is what hangs it: the hung run points at it */
	cr_expect(strstr(r.out, "/run-0001: killed after 1 s; its log explains it: #1"), "%s", r.out);
	cr_expect(strstr(r.err, "run 1: 1 report, hung, killed after 1 s"), "%s", r.err);
	run_free(&r);

	/* the same from the kept logs, and as JSON */
	r = cli_env(0, NULL, "report", "--json", out, NULL);
	cr_expect_eq(r.exit_code, 1, "exit status %d, expected %d:\n%s%s", r.exit_code, 1, r.out, r.err);
	cr_expect(cli_json_valid(r.out), "%s", r.out);
	cr_expect(strstr(r.out, "\"hangs\": 2,"), "%s", r.out);
	cr_expect(strstr(r.out, "\"result\": \"hang\""), "%s", r.out);
	cr_expect(strstr(r.out, "\"timeout_ms\": 1000"), "%s", r.out);
	run_free(&r);
	cli_remove_dir(dir);
}

Test(cli, stress_counts_crashes)
{
	struct run r = cli_env(0, NULL, "stress", "-n", "2", "--", cli_target("cli_misc.memb"), "crash", NULL);
	cr_expect_eq(r.exit_code, 1, "%s", r.err);
	cr_expect(strstr(r.out, "lockdep-rcu report: no reports in 0 logs of 2 runs; 2 crashes\n"), "%s", r.out);
	cr_expect(strstr(r.out, "killed by signal 11 (Segmentation fault)"), "%s", r.out);
	const char *kept = strstr(r.err, "logs kept in ");
	char dir[4096];
	cr_assert(kept && sscanf(kept, "logs kept in %4095s", dir) == 1, "%s", r.err);
	cli_remove_dir(strdup(dir));
	run_free(&r);
}

Test(cli, stress_of_a_clean_program_exits_0_and_removes_its_logs)
{
	struct run r = cli_env(0, NULL, "stress", "-n", "4", "-j", "2", "--", cli_target("cli_misc.memb"), "clean", NULL);
	cr_expect_eq(r.exit_code, 0, "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "lockdep-rcu report: nothing found in 0 logs of 4 runs\n"), "%s", r.out);
	cr_expect(strstr(r.err, "nothing found; logs removed"), "%s", r.err);
	const char *in = strstr(r.err, "logs in ");
	char dir[4096];
	cr_assert(in && sscanf(in, "logs in %4095s", dir) == 1);
	cr_expect_neq(access(dir, F_OK), 0, "%s was removed", dir);
	run_free(&r);
}

Test(cli, stress_perturb_gives_each_run_its_seed)
{
	char *dir = cli_temp_dir();
	char out[4200];
	snprintf(out, sizeof(out), "%s/logs", dir);
	struct run r = cli_env(0, NULL, "stress", "-n", "3", "-j", "1", "--perturb", "--seed", "42", "-o", out,
			       "--option", "max_frames=7", "--", cli_target("cli_misc.memb"), "env", NULL);
	cr_expect(strstr(r.err, "perturbed: run i has seed 42+i-1 (42..44)"), "%s", r.err);
	for (int i = 1; i <= 3; i++) {
		char path[4400], expected[4400];
		snprintf(path, sizeof(path), "%s/run-%04d/output.out", out, i);
		char *output = cli_read(path);
		cr_assert(output, "%s", path);
		snprintf(expected, sizeof(expected),
			 "LOCKDEP_RCU_OPTIONS=max_frames=7:log_path=%s/run-%04d/lockdep-rcu.%%p.log:"
			 "hung_task_timeout=29:stall_timeout=21:perturb=1:seed=%d\n",
			 out, i, 41 + i);
		cr_expect(strstr(output, expected), "expected %s in %s", expected, output);
		free(output);
		snprintf(path, sizeof(path), "%s/run-%04d/lockdep-rcu.run", out, i);
		char *rec = cli_read(path);
		snprintf(expected, sizeof(expected), "seed %d\n", 41 + i);
		cr_expect(rec && strstr(rec, expected), "%s", rec ? rec : path);
		free(rec);
	}
	run_free(&r);
	cli_remove_dir(dir);
}

Test(cli, stress_names_the_seed_of_a_failing_run_its_hit_rate_and_calls_no_rerun_a_replay)
{
	struct run r = cli_env(0, NULL, "stress", "-n", "2", "-j", "1", "--perturb", "--seed", "7", "--",
			       cli_target("cli_misc.memb"), "bug", NULL);
	cr_expect_eq(r.exit_code, 1, "exit status %d, expected %d:\n%s%s", r.exit_code, 1, r.out, r.err);
	cr_expect(strstr(r.err, "run 1: 1 report (seed 7)"), "%s", r.err);
	cr_expect(strstr(r.err, "run 2: 1 report (seed 8)"), "%s", r.err);
	cr_expect(strstr(r.err, "lockdep-rcu stress: 2 of 2 runs found something (100%)\n"), "%s", r.err);
	cr_expect(strstr(r.err, "run 1's delays again (seed 7; the scheduler is not replayed, so it may pass): "
				"lockdep-rcu stress -n 1 --perturb --seed 7 -- "),
		  "%s", r.err);
	cr_expect_null(strstr(r.err, "replay run"), "a run again is no replay: %s", r.err);
	cr_expect(strstr(r.out, "example from ") && strstr(r.out, "(seed 7)"), "%s", r.out);
	const char *kept = strstr(r.err, "logs kept in ");
	char dir[4096];
	cr_assert(kept && sscanf(kept, "logs kept in %4095s", dir) == 1, "%s", r.err);
	cli_remove_dir(strdup(dir));
	run_free(&r);
}

Test(cli, stress_applies_suppressions_and_passes_them_on)
{
	char *dir = cli_temp_dir();
	char supp[4200], out[4200];
	snprintf(supp, sizeof(supp), "%s/supp.txt", dir);
	snprintf(out, sizeof(out), "%s/logs", dir);
	static const char rules[] = "suspicious_rcu:read_unprotected\n";
	cli_write(supp, rules, sizeof(rules) - 1);
	struct run r = cli_env(0, NULL, "stress", "-n", "2", "--suppressions", supp, "-o", out, "--",
			       cli_target("cli_misc.memb"), "bug", NULL);
	cr_expect_eq(r.exit_code, 0, "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "nothing found in 2 logs of 2 runs; 2 suppressed"), "%s", r.out);
	run_free(&r);
	char path[4400], expected[4400];
	snprintf(path, sizeof(path), "%s/logs2", dir);
	r = cli_env(0, NULL, "stress", "-n", "1", "--suppressions", supp, "-o", path, "--",
		    cli_target("cli_misc.memb"), "env", NULL);
	snprintf(path, sizeof(path), "%s/logs2/run-0001/output.out", dir);
	char *output = cli_read(path);
	snprintf(expected, sizeof(expected), "suppressions=%s:log_path=", supp);
	cr_expect(output && strstr(output, expected), "%s", output ? output : path);
	free(output);
	run_free(&r);
	cli_remove_dir(dir);
}

Test(cli, stress_wants_a_fresh_directory)
{
	char *dir = cli_temp_dir();
	char file[4200];
	snprintf(file, sizeof(file), "%s/old.log", dir);
	cli_write(file, "x\n", 2);
	struct run r = cli_env(0, NULL, "stress", "-n", "1", "-o", dir, "--", cli_target("cli_misc.memb"), "clean", NULL);
	cr_expect_eq(r.exit_code, 2, "exit status %d, expected %d:\n%s%s", r.exit_code, 2, r.out, r.err);
	cr_expect(strstr(r.err, "is not empty"), "%s", r.err);
	run_free(&r);
	cli_remove_dir(dir);
}

/* script(1) gives the tool a terminal: the progress line appears there, and
 * the report is the same. */
Test(cli, stress_shows_progress_on_a_terminal)
{
	if (access("/usr/bin/script", X_OK)) {
		cr_log_warn("no script(1): progress on a terminal not tested");
		return;
	}
	char cmd[9000];
	snprintf(cmd, sizeof(cmd), "'%s' stress -n 3 -j 1 -- '%s' clean", cli_tool(), cli_target("cli_misc.memb"));
	char *argv[] = { "/usr/bin/script", "-qfec", cmd, "/dev/null", NULL };
	struct run_options o = { 0 };
	struct run r = run_program(argv, &o);
	cli_expect_sanitizer_clean(&r);
	cr_expect_eq(r.exit_code, 0, "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "\r\033[Klockdep-rcu stress: "), "%s", r.out);
	cr_expect(strstr(r.out, "3/3 runs done, 0 running, 0 hangs, 0 crashes, 0 distinct bugs"), "%s", r.out);
	cr_expect(strstr(r.out, "nothing found in 0 logs of 3 runs"), "%s", r.out);
	run_free(&r);
}
