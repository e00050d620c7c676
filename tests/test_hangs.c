/* Hangs explained: the RCU stall warning, the hung-task report with every
 * thread's locks, and silence for long waits that are correct. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>
#include "harness.h"
#include "cli_helpers.h"

static struct run run_hangs(const char *flavor, const char *scenario, const char *seconds, const char *options,
			    double timeout)
{
	struct run_options o = { .preload = 1, .options = options, .timeout = timeout };
	char path[4096];
	snprintf(path, sizeof(path), "%s", build_path("targets/hangs."));
	strncat(path, flavor, sizeof(path) - strlen(path) - 1);
	char *argv[] = { path, (char *)scenario, (char *)seconds, NULL };
	return run_program(argv, &o);
}

/* The reader stays in its read side for stall_timeout + 2.5 s: the warning
 * comes out while it is there, names it and where it entered. */
static void expect_stall(const char *flavor)
{
	struct run r = run_hangs(flavor, "reader-stalls-grace-period", "5", "stall_timeout=2", 20);
	cr_assert_eq(r.exit_code, 66, "%s: %s", flavor, r.err);
	cr_expect(strstr(r.out, "done\n"), "the program finished: %s", r.out);
	char title[64];
	snprintf(title, sizeof(title), "INFO: rcu_%s detected stalls on tasks:\n", flavor);
	cr_expect_eq(count_of(r.err, title), 1, "%s: one warning (the next is due at 4x): %s", flavor, r.err);
	int site = target_site_line(&r, 1);
	char entered[128];
	if (!strcmp(flavor, "qsbr")) {
		cr_expect(strstr(r.err, "\tstuck_reader/"), "%s", r.err);
		cr_expect(strstr(r.err, ": online, no quiescent state for at least 2."), "%s", r.err);
	} else {
		snprintf(entered, sizeof(entered), "in a read-side critical section for at least 2.");
		cr_expect(strstr(r.err, entered), "%s", r.err);
		snprintf(entered, sizeof(entered), "entered at stuck_reader+");
		cr_expect(strstr(r.err, entered), "%s", r.err);
		snprintf(entered, sizeof(entered), "tests/targets/hangs.c:%d\n", site);
		cr_expect(strstr(r.err, entered), "%s: entry site %s in %s", flavor, entered, r.err);
		cr_expect(strstr(r.err, "1 lock held by stuck_reader/"), "its held locks: %s", r.err);
	}
	cr_expect(strstr(r.err, "(detected by updater/"), "%s", r.err);
	cr_expect(strstr(r.err, "Comm: updater\nCall Trace:\n reader_stalls_grace_period+"),
		  "the waiting thread's stack: %s", r.err);
	cr_expect(strstr(r.err, "SUMMARY: lockdep-rcu: 1 report: 1 RCU stall"), "%s", r.err);
	run_free(&r);
}

Test(hangs, reader_stuck_in_read_side_gives_the_stall_warning_memb, .timeout = 30) { expect_stall("memb"); }
Test(hangs, reader_stuck_in_read_side_gives_the_stall_warning_mb, .timeout = 30) { expect_stall("mb"); }
Test(hangs, reader_stuck_in_read_side_gives_the_stall_warning_signal, .timeout = 30) { expect_stall("signal"); }
Test(hangs, reader_stuck_in_read_side_gives_the_stall_warning_bp, .timeout = 30) { expect_stall("bp"); }
Test(hangs, online_qsbr_thread_without_quiescent_state_gives_the_stall_warning, .timeout = 30) { expect_stall("qsbr"); }

/* Stalls repeat at growing intervals: 2 s, then 2 + 6 = 8 s. */
Test(hangs, stall_warnings_back_off, .timeout = 30)
{
	struct run r = run_hangs("memb", "reader-stalls-grace-period", "9", "stall_timeout=2", 25);
	cr_expect_eq(count_of(r.err, "INFO: rcu_memb detected stalls on tasks:\n"), 2, "%s", r.err);
	cr_expect(strstr(r.err, "for at least 8."), "the second after 8 s: %s", r.err);
	run_free(&r);
}

Test(hangs, stall_warning_off_with_zero)
{
	struct run r = run_hangs("memb", "reader-stalls-grace-period", "3", "stall_timeout=0", 20);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_empty(r.err, "%s", r.err);
	run_free(&r);
}

/* Two threads deadlock on locks on their own stacks, which the validator
 * does not follow: each gets the hung-task report, naming the other as
 * holder, with every thread's locks. */
Test(hangs, deadlock_on_stack_locks_gives_hung_task_reports_naming_both, .timeout = 30)
{
	struct run r = run_hangs("memb", "stack-locks-deadlock", NULL, "hung_task_timeout=2", 6);
	cr_expect(r.timed_out, "it really deadlocks");
	cr_expect(strstr(r.out, "deadlocking\n"), "%s", r.out);
	cr_expect(strstr(r.err, "INFO: task abba_a:"), "%s", r.err);
	cr_expect(strstr(r.err, "INFO: task abba_b:"), "%s", r.err);
	cr_expect(strstr(r.err, " blocked for more than 2 seconds.\n"), "%s", r.err);
	cr_expect(strstr(r.err, "is blocked acquiring lock:\n"), "%s", r.err);
	cr_expect(strstr(r.err, "which is held by abba_b/"), "%s", r.err);
	cr_expect(strstr(r.err, "which is held by abba_a/"), "%s", r.err);
	cr_expect(strstr(r.err, "*** DEADLOCK ***"), "%s", r.err);
	cr_expect(strstr(r.err, "\nShowing all locks held in the system:\n1 lock held by abba_"), "%s", r.err);
	cr_expect(strstr(r.err, "Comm: abba_a\nCall Trace:\n abba_thread+"), "%s", r.err);
	/* the two stack locks, by address, each held by one and waited for by the other */
	const char *a = strstr(r.err, "abba_a/");
	cr_assert(a);
	cr_expect(!strstr(r.err, "WARNING: possible circular locking dependency"),
		  "locks on stacks are not classed: %s", r.err);
	run_free(&r);
}

/* A reader blocked on an rwlock a writer keeps: the hung-task report names
 * the rwlock, its writer and the reader's rdlock, and the program goes on. */
Test(hangs, reader_blocked_by_a_writer_gives_the_hung_task_report, .timeout = 30)
{
	struct run r = run_hangs("memb", "rwlock-writer-keeps-it", "4", "hung_task_timeout=2", 20);
	cr_expect_eq(r.exit_code, 66, "%s", r.err);
	cr_expect(strstr(r.out, "done\n"), "the program finished: %s", r.out);
	cr_expect_eq(count_of(r.err, "INFO: task blocked_reader:"), 1, "%s", r.err);
	cr_expect(strstr(r.err, " blocked for more than 2 seconds.\n"), "%s", r.err);
	cr_expect(strstr(r.err, "(table_lock)"), "names the rwlock: %s", r.err);
	cr_expect(strstr(r.err, "keeping_writer/"), "names the writer: %s", r.err);
	cr_expect(strstr(r.err, "Comm: blocked_reader\nCall Trace:\n blocked_reader+"), "the reader's stack: %s", r.err);
	run_free(&r);
	/* its twin: the writer keeps it for less than the timeout, not a word */
	r = run_hangs("memb", "rwlock-writer-keeps-it", "1", "hung_task_timeout=3", 20);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, "done\n");
	cr_expect_str_empty(r.err, "%s", r.err);
	run_free(&r);
}

/* A condition variable waited on longer than both timeouts, a mutex held
 * by another thread for a second: correct programs, not a word. */
Test(hangs, long_condition_wait_and_short_lock_wait_are_quiet, .timeout = 30)
{
	struct run r = run_hangs("memb", "long-condition-wait", "4", "hung_task_timeout=2:stall_timeout=2", 20);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_empty(r.err, "%s", r.err);
	run_free(&r);
	r = run_hangs("memb", "short-lock-wait", NULL, "hung_task_timeout=2", 20);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_empty(r.err, "%s", r.err);
	run_free(&r);
}

/* The watchdog is started by the first wait that lasts, never before: a
 * program that never blocks has no thread of ours. */
Test(hangs, no_watchdog_thread_unless_something_blocks, .timeout = 30)
{
	struct run r = run_hangs("memb", "threads-around-waits", NULL, NULL, 20);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "after a condition wait: hangs.memb \n"), "%s", r.out);
	cr_expect(strstr(r.out, "after a lock wait: hangs.memb lockdep-watch \n"), "%s", r.out);
	cr_expect_str_empty(r.err, "%s", r.err);
	run_free(&r);
}

/* The INFO reports are reports like the others: they set the exit status
 * (exitcode), are counted, and suppressions of kinds rcu_stall and
 * hung_task hide them by the functions on the stack they print. */
Test(hangs, info_reports_set_the_status_and_are_suppressible, .timeout = 60)
{
	struct run r = run_hangs("memb", "reader-stalls-grace-period", "3", "stall_timeout=1:exitcode=3", 20);
	cr_expect_eq(r.exit_code, 3, "%s", r.err);
	cr_expect(strstr(r.err, "INFO: rcu_memb detected stalls on tasks:\n"), "%s", r.err);
	run_free(&r);

	char path[] = "/tmp/lockdep-rcu-supp.XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	const char rules[] = "rcu_stall:reader_stalls_grace_period\nhung_task:abba_thread\n";
	cr_assert(write(fd, rules, sizeof(rules) - 1) == (ssize_t)(sizeof(rules) - 1));
	close(fd);
	char options[256];
	snprintf(options, sizeof(options), "stall_timeout=1:hung_task_timeout=1:suppressions=%s", path);
	r = run_hangs("memb", "reader-stalls-grace-period", "3", options, 20);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(!strstr(r.err, "INFO:"), "%s", r.err);
	cr_expect(strstr(r.err, "1 suppressed"), "%s", r.err);
	run_free(&r);
	r = run_hangs("memb", "stack-locks-deadlock", NULL, options, 5);
	cr_expect(r.timed_out, "it really deadlocks");
	cr_expect(!strstr(r.err, "INFO: task"), "%s", r.err);
	run_free(&r);
	unlink(path);
}

/* stress kills a hung run after its timeout; it set the tracer's hang
 * timeouts below it, so the log explains the hang and report shows it. */
Test(hangs, stress_of_a_deadlocking_program_has_the_dump_in_its_log_and_report, .timeout = 60)
{
	char *dir = cli_temp_dir(), out[4200];
	snprintf(out, sizeof(out), "%s/logs", dir);
	struct run r = cli_env(40, NULL, "stress", "-n", "1", "--timeout", "6", "-o", out, "--",
			       cli_target("hangs.memb"), "stack-locks-deadlock", NULL);
	cr_expect_eq(r.exit_code, 1, "%s", r.err);
	cr_expect(strstr(r.err, "run 1: 2 reports, hung, killed after 6 s"), "%s", r.err);
	cr_expect(strstr(r.out, "#1 INFO: task abba_"), "%s", r.out);
	cr_expect(strstr(r.out, " blocked for more than 2 seconds.\n"), "hang timeouts below 6 s: %s", r.out);
	cr_expect(strstr(r.out, "Showing all locks held in the system:\n"), "%s", r.out);
	cr_expect(strstr(r.out, "*** DEADLOCK ***"), "%s", r.out);
	cr_expect(strstr(r.out, "1 run hung (killed after the timeout; the reports in its log explain it):\n"),
		  "%s", r.out);
	cr_expect(strstr(r.out, "/run-0001: killed after 6 s; its log explains it: #1 (INFO: task abba_"), "%s", r.out);
	run_free(&r);
	cli_remove_dir(dir);
}

/* run --timeout: the same, exit status 124 as timeout(1). */
Test(hangs, run_with_a_timeout_explains_the_hang_then_kills, .timeout = 60)
{
	char *dir = cli_temp_dir(), out[4200];
	snprintf(out, sizeof(out), "%s/logs", dir);
	struct run r = cli_env(40, NULL, "run", "--timeout", "6", "-o", out, "--", cli_target("hangs.memb"),
			       "stack-locks-deadlock", NULL);
	cr_expect_eq(r.exit_code, 124, "%s", r.err);
	cr_expect(strstr(r.err, "still running after 6 s: hung, killed\n"), "%s", r.err);
	cr_expect(strstr(r.err, "2 reports in 1 log"), "%s", r.err);
	run_free(&r);
	r = cli_env(0, NULL, "report", out, NULL);
	cr_expect_eq(r.exit_code, 1);
	cr_expect(strstr(r.out, "INFO: task abba_"), "%s", r.out);
	cr_expect(strstr(r.out, "1 hang"), "%s", r.out);
	run_free(&r);
	/* a user's own value stays */
	r = cli_env(40, NULL, "run", "--timeout", "4", "--option", "hung_task_timeout=0", "--",
		    cli_target("hangs.memb"), "stack-locks-deadlock", NULL);
	cr_expect_eq(r.exit_code, 124, "%s", r.err);
	cr_expect(!strstr(r.err, "INFO: task"), "hung_task_timeout=0 kept: %s", r.err);
	run_free(&r);
	cli_remove_dir(dir);
}
