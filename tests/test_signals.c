/* Signal handlers, lockdep's interrupt-safety checks for signals
 * (tests/targets/signal_handlers.c): a lock taken in a handler and
 * elsewhere with the signal deliverable ("inconsistent lock state", both
 * orders, read variants), a signal-safe lock that takes a signal-unsafe one
 * (the "irq lock inversion", both ways through the dependency graph),
 * grace periods waited for in a handler; every correct twin silent; and
 * what the program sees of its handlers unchanged by the preload
 * (tests/targets/signal_semantics.c, run with and without it). */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdlib.h>
#include <unistd.h>
#include "harness.h"
#include "cli_helpers.h"

#define TARGET "signal_handlers"
#define FILE_NAME "tests/targets/signal_handlers.c"
#define INCONSISTENT "WARNING: inconsistent lock state\n"
#define INVERSION "WARNING: possible irq lock inversion dependency detected\n"

static struct run run_signals(const char *flavor, const char *scenario)
{
	struct run_options o = { .preload = 1, .timeout = 20 };
	return run_target(TARGET, flavor, scenario, &o);
}

/* "signal_handlers.c:<line of the n-th site>" followed by `after` */
static int names_site(const struct run *r, int n, const char *after)
{
	char where[128];
	snprintf(where, sizeof(where), FILE_NAME ":%d%s", target_site_line(r, n), after);
	return strstr(r->err, where) != NULL;
}

static void expect_one_report(const struct run *r, const char *title, const char *summary)
{
	cr_expect_eq(count_of(r->err, title), 1, "%s", r->err);
	cr_expect_eq(splat_count(r->err), 1, "%s", r->err);
	cr_expect_eq(r->exit_code, 66, "%d\n%s", r->exit_code, r->err);
	cr_expect(strstr(r->out, "done\n"), "the program went on: %s", r->out);
	cr_expect(strstr(r->err, summary), "%s", r->err);
}

static void expect_silent(const char *flavor, const char *scenario)
{
	struct run r = run_signals(flavor, scenario);
	cr_expect_str_empty(r.err, "[%s %s]\n%s", flavor, scenario, r.err);
	cr_expect_eq(r.exit_code, 0, "[%s %s] %d", flavor, scenario, r.exit_code);
	cr_expect(strstr(r.out, "done\n"), "[%s %s] %s", flavor, scenario, r.out);
	run_free(&r);
}

/* ---- inconsistent lock state ----------------------------------------------- */

static const char scenario_table[] = " Possible unsafe locking scenario:\n\n"
				     "       CPU0\n"
				     "       ----\n"
				     "  lock(table_lock);\n"
				     "  <Interrupt: SIGALRM>\n"
				     "    lock(table_lock);\n\n"
				     " *** DEADLOCK ***\n";

Test(signals, lock_in_handler_after_use_with_the_signal_deliverable)
{
	struct run r = run_signals("memb", "bug-in-handler-after-unblocked-use");
	expect_one_report(&r, INCONSISTENT, "SUMMARY: lockdep-rcu: 1 report: 1 inconsistent lock state\n");
	cr_expect(strstr(r.err, "\ninconsistent {SIGNAL-ON-W} -> {IN-SIGNAL-W} usage.\n"), "%s", r.err);
	cr_expect(strstr(r.err, " [in the handler of SIGALRM] takes:\n"), "%s", r.err);
	/* the acquisition in the handler (site 2), the first unblocked use (site 1) */
	cr_expect(strstr(r.err, " (table_lock){mutex}, at: alarm_takes_table_lock+"), "%s", r.err);
	cr_expect(names_site(&r, 2, "\n{SIGNAL-ON-W} state was registered at:\n"), "%s\n%s", r.out, r.err);
	cr_expect(strstr(r.err, "{SIGNAL-ON-W} state was registered at:\n  bug_in_handler_after_unblocked_use+"),
		  "%s", r.err);
	cr_expect(names_site(&r, 1, "\n"), "%s\n%s", r.out, r.err);
	cr_expect(strstr(r.err, scenario_table), "%s", r.err);
	/* the handler's stack: where the signal came, named as gdb does */
	cr_expect(strstr(r.err, "Call Trace:\n alarm_takes_table_lock+"), "%s", r.err);
	cr_expect(strstr(r.err, "\n <signal handler called>\n __pthread_kill_implementation+"), "%s", r.err);
	run_free(&r);
}

/* Many uses with the signal blocked (answered from the acquisition cache
 * after the first), then one with it deliverable: that one is recorded. */
Test(signals, a_deliverable_use_after_many_blocked_ones_is_recorded)
{
	struct run r = run_signals("memb", "bug-deliverable-use-after-many-blocked-ones");
	expect_one_report(&r, INCONSISTENT, "SUMMARY: lockdep-rcu: 1 report: 1 inconsistent lock state\n");
	cr_expect(strstr(r.err, "\ninconsistent {SIGNAL-ON-W} -> {IN-SIGNAL-W} usage.\n"), "%s", r.err);
	cr_expect(strstr(r.err, "{SIGNAL-ON-W} state was registered at:\n  bug_deliverable_use_after_many_blocked_ones+"),
		  "%s", r.err);
	cr_expect(names_site(&r, 1, "\n"), "the deliverable use is the one named: %s\n%s", r.out, r.err);
	run_free(&r);
}

/* The same in a program without liburcu, whose lock wrappers answer from
 * the acquisition cache inline; and its twin without the deliverable use. */
Test(signals, a_deliverable_use_after_cached_blocked_ones_is_recorded_without_liburcu)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s", build_path("targets/signal_cache_main"));
	struct run_options o = { .preload = 1, .timeout = 20 };
	char *bug[] = { path, NULL }, *ok[] = { path, "ok", NULL };
	struct run r = run_program(bug, &o);
	cr_expect_eq(count_of(r.err, INCONSISTENT), 1, "%s", r.err);
	cr_expect(strstr(r.err, "\ninconsistent {SIGNAL-ON-W} -> {IN-SIGNAL-W} usage.\n"), "%s", r.err);
	char site[96];
	snprintf(site, sizeof(site), "signal_cache_main.c:%d\n", target_site_line(&r, 1));
	cr_expect(strstr(r.err, site), "the deliverable use (%s) is named:\n%s", site, r.err);
	cr_expect(strstr(r.out, "done\n"), "%s", r.out);
	run_free(&r);
	r = run_program(ok, &o);
	cr_expect_str_empty(r.err, "%s", r.err);
	cr_expect_eq(r.exit_code, 0);
	run_free(&r);
}

Test(signals, lock_with_the_signal_deliverable_after_use_in_handler)
{
	struct run r = run_signals("memb", "bug-unblocked-use-after-handler");
	expect_one_report(&r, INCONSISTENT, "SUMMARY: lockdep-rcu: 1 report: 1 inconsistent lock state\n");
	cr_expect(strstr(r.err, "\ninconsistent {IN-SIGNAL-W} -> {SIGNAL-ON-W} usage.\n"), "%s", r.err);
	cr_expect(strstr(r.err, " [SIGALRM not blocked] takes:\n"), "%s", r.err);
	cr_expect(strstr(r.err, " (table_lock){mutex}, at: bug_unblocked_use_after_handler+"), "%s", r.err);
	cr_expect(names_site(&r, 2, "\n{IN-SIGNAL-W} state was registered at:\n  alarm_takes_table_lock+"),
		  "%s\n%s", r.out, r.err);
	cr_expect(strstr(r.err, "\n  <signal handler called>\n  __pthread_kill_implementation+"),
		  "the usage's stack goes through the signal: %s", r.err);
	cr_expect(names_site(&r, 1, "\n"), "handler's site: %s\n%s", r.out, r.err);
	cr_expect(strstr(r.err, scenario_table), "%s", r.err);
	run_free(&r);
}

Test(signals, lock_in_handler_after_trylock_with_the_signal_deliverable)
{
	struct run r = run_signals("memb", "bug-trylock-then-handler");
	expect_one_report(&r, INCONSISTENT, "SUMMARY: lockdep-rcu: 1 report: 1 inconsistent lock state\n");
	cr_expect(strstr(r.err, "\ninconsistent {SIGNAL-ON-W} -> {IN-SIGNAL-W} usage.\n"), "%s", r.err);
	cr_expect(strstr(r.err, "{SIGNAL-ON-W} state was registered at:\n  bug_trylock_then_handler+"), "%s", r.err);
	cr_expect(names_site(&r, 1, "\n"), "%s\n%s", r.out, r.err);
	run_free(&r);
}

/* A SIGSEGV handler that takes a lock, run only by the thread's own
 * faulting writes (dirty-page tracking): not an interrupt, silent (it was
 * "inconsistent lock state"). The same handler run by raise() is one. */
Test(signals, a_fault_handler_taking_a_lock_is_not_an_interrupt)
{
	expect_silent("memb", "ok-fault-handler-takes-lock");
	struct run r = run_signals("memb", "bug-raised-segv-handler-takes-lock");
	expect_one_report(&r, INCONSISTENT, "SUMMARY: lockdep-rcu: 1 report: 1 inconsistent lock state\n");
	run_free(&r);
}

Test(signals, trylock_in_handler_is_silent) { expect_silent("memb", "ok-trylock-in-handler"); }

/* The signal landing while the lock is held: the handler blocks forever on
 * its own thread's lock, and the report is out before it does. */
Test(signals, real_deadlock_in_handler_is_explained_before_it_hangs, .timeout = 20)
{
	struct run_options o = { .preload = 1, .timeout = 2 };
	struct run r = run_target(TARGET, "memb", "bug-deadlock-in-handler", &o);
	cr_expect(r.timed_out, "the program really deadlocks: %d\n%s", r.exit_code, r.err);
	cr_expect(strstr(r.err, INCONSISTENT "lockdep-rcu"), "%s", r.err);
	cr_expect(strstr(r.err, "\ninconsistent {SIGNAL-ON-W} -> {IN-SIGNAL-W} usage.\n"), "%s", r.err);
	cr_expect(strstr(r.err, "\n1 lock held by signal_handlers/"), "the interrupted code's lock: %s", r.err);
	/* the usage first, as the kernel marks it before validating; the
	 * recursion it makes after */
	const char *usage = strstr(r.err, INCONSISTENT);
	const char *recursion = strstr(r.err, "WARNING: possible recursive locking detected\n");
	cr_expect(usage && (!recursion || usage < recursion), "%s", r.err);
	run_free(&r);
}

/* Every flavor: the checks do not depend on liburcu (and liburcu-signal's
 * own SIGUSR1 handler changes nothing). */
Test(signals, inconsistent_state_in_every_flavor)
{
	for (int i = 0; all_flavors[i]; i++) {
		struct run r = run_signals(all_flavors[i], "bug-unblocked-use-after-handler");
		cr_expect_eq(count_of(r.err, INCONSISTENT), 1, "[%s] %s", all_flavors[i], r.err);
		cr_expect_eq(splat_count(r.err), 1, "[%s] %s", all_flavors[i], r.err);
		run_free(&r);
	}
}

Test(signals, write_lock_with_the_signal_deliverable_after_read_in_handler)
{
	struct run r = run_signals("memb", "bug-write-lock-after-read-in-handler");
	expect_one_report(&r, INCONSISTENT, "SUMMARY: lockdep-rcu: 1 report: 1 inconsistent lock state\n");
	cr_expect(strstr(r.err, "\ninconsistent {IN-SIGNAL-R} -> {SIGNAL-ON-W} usage.\n"), "%s", r.err);
	cr_expect(strstr(r.err, " (config_lock){rwlock-write}, at: bug_write_lock_after_read_in_handler+"), "%s",
		  r.err);
	cr_expect(strstr(r.err, "{IN-SIGNAL-R} state was registered at:\n  alarm_reads_config+"), "%s", r.err);
	cr_expect(strstr(r.err, "  lock(config_lock);\n  <Interrupt: SIGALRM>\n    rlock(config_lock);\n"), "%s",
		  r.err);
	run_free(&r);
}

/* ---- irq lock inversion ---------------------------------------------------- */

static const char inversion_table[] = " Possible interrupt unsafe locking scenario:\n\n"
				      "       CPU0                    CPU1\n"
				      "       ----                    ----\n"
				      "  lock(table_lock);\n"
				      "                               block(SIGALRM);\n"
				      "                               lock(stats_lock);\n"
				      "                               lock(table_lock);\n"
				      "  <Interrupt: SIGALRM>\n"
				      "    lock(stats_lock);\n\n"
				      " *** DEADLOCK ***\n";

Test(signals, signal_safe_lock_that_took_a_signal_unsafe_lock)
{
	struct run r = run_signals("memb", "bug-safe-lock-takes-unsafe-lock");
	expect_one_report(&r, INVERSION, "SUMMARY: lockdep-rcu: 1 report: 1 irq lock inversion dependency\n");
	cr_expect(strstr(r.err, " just changed the state of lock:\n"), "%s", r.err);
	cr_expect(strstr(r.err, " (stats_lock){mutex}, at: alarm_takes_stats_lock+"), "%s", r.err);
	cr_expect(names_site(&r, 2, "\nbut this lock took another, SIGALRM-unsafe lock in the past:\n (table_lock)\n\n"
				    "and interrupts could create inverse lock ordering between them.\n"),
		  "%s\n%s", r.out, r.err);
	cr_expect(strstr(r.err, inversion_table), "%s", r.err);
	/* the dependency and where it was made (site 1), the unsafe use */
	cr_expect(strstr(r.err, "\nthe shortest dependencies between 2nd lock and 1st lock:\n"), "%s", r.err);
	cr_expect(names_site(&r, 1, "\n"), "%s\n%s", r.out, r.err);
	cr_expect(strstr(r.err, "SIGNAL-ON-W at:\n"), "%s", r.err);
	run_free(&r);
}

Test(signals, signal_unsafe_use_of_a_lock_a_signal_safe_lock_took)
{
	struct run r = run_signals("memb", "bug-unsafe-use-of-lock-a-safe-lock-takes");
	expect_one_report(&r, INVERSION, "SUMMARY: lockdep-rcu: 1 report: 1 irq lock inversion dependency\n");
	cr_expect(strstr(r.err, " (table_lock){mutex}, at: bug_unsafe_use_of_lock_a_safe_lock_takes+"), "%s",
		  r.err);
	cr_expect(names_site(&r, 1, "\nbut this lock was taken by another, SIGALRM-safe lock in the past:\n"
				    " (stats_lock)\n"),
		  "%s\n%s", r.out, r.err);
	cr_expect(strstr(r.err, inversion_table), "%s", r.err);
	cr_expect(strstr(r.err, "IN-SIGNAL-W at:\n"), "%s", r.err);
	run_free(&r);
}

/* Both usages first, the dependency last: the kernel's check_irq_usage()
 * at the new dependency, its own title. */
Test(signals, new_dependency_from_a_signal_safe_to_a_signal_unsafe_lock)
{
	struct run r = run_signals("memb", "bug-dependency-joins-safe-and-unsafe-locks");
	expect_one_report(&r, "WARNING: SIGALRM-safe -> SIGALRM-unsafe lock order detected\n",
			  "SUMMARY: lockdep-rcu: 1 report: 1 irq lock inversion dependency\n");
	cr_expect(names_site(&r, 1, "\n\nand this task is already holding:\n"), "%s\n%s", r.out, r.err);
	cr_expect(strstr(r.err, " (stats_lock), at: bug_dependency_joins_safe_and_unsafe_locks+"), "%s", r.err);
	cr_expect(strstr(r.err, "which would create a new lock dependency:\n (stats_lock) -> (table_lock)\n\n"
				"but this new dependency connects a SIGALRM-safe lock:\n (stats_lock)\n"
				"... which became SIGALRM-safe at:\n  alarm_takes_stats_lock+"),
		  "%s", r.err);
	cr_expect(strstr(r.err, "\nto a SIGALRM-unsafe lock:\n (table_lock)\n... which became SIGALRM-unsafe at:\n"
				"  lock_and_unlock+"),
		  "%s", r.err);
	cr_expect(strstr(r.err, inversion_table), "%s", r.err);
	run_free(&r);
}

/* ---- nesting, SA_RESETHAND, siglongjmp -------------------------------------------- */

Test(signals, nested_handler_is_named_and_unwound)
{
	struct run r = run_signals("memb", "bug-nested-handler");
	expect_one_report(&r, INCONSISTENT, "SUMMARY: lockdep-rcu: 1 report: 1 inconsistent lock state\n");
	cr_expect(strstr(r.err, "\ninconsistent {SIGNAL-ON-W} -> {IN-SIGNAL-W} usage.\n"), "%s", r.err);
	cr_expect(strstr(r.err, " [in the handler of SIGALRM] takes:\n"), "%s", r.err);
	cr_expect(!strstr(r.err, "SIGUSR2"), "%s", r.err);
	run_free(&r);
}

Test(signals, reset_hand_runs_once_and_is_silent) { expect_silent("memb", "ok-reset-hand"); }

Test(signals, siglongjmp_out_of_a_handler_leaves_it) { expect_silent("memb", "ok-siglongjmp-out-of-handler"); }

Test(signals, siglongjmp_out_of_an_altstack_handler_leaves_it)
{
	expect_silent("memb", "ok-siglongjmp-out-of-altstack-handler");
}

/* SA_NODEFER: taken in the handler with its own signal deliverable. */
Test(signals, nodefer_handler_that_locks)
{
	struct run r = run_signals("memb", "bug-nodefer-handler-takes-lock");
	expect_one_report(&r, INCONSISTENT, "SUMMARY: lockdep-rcu: 1 report: 1 inconsistent lock state\n");
	cr_expect(strstr(r.err, "\ninconsistent {IN-SIGNAL-W} -> {SIGNAL-ON-W} usage.\n"), "%s", r.err);
	cr_expect(strstr(r.err, " [in the handler of SIGALRM, SIGALRM not blocked] takes:\n"), "%s", r.err);
	cr_expect(names_site(&r, 1, "\n{IN-SIGNAL-W} state was registered at:\n  alarm_takes_table_lock+"), "%s\n%s",
		  r.out, r.err);
	run_free(&r);
}

/* A library's constructor installs the handler before the tracer's
 * constructor ran (tests/targets/plugins/early_handler.c). */
Test(signals, handler_installed_before_the_tracer_constructor)
{
	struct run_options o = { .preload = 1, .timeout = 20 };
	char path[4096];
	snprintf(path, sizeof(path), "%s", build_path("targets/early_handler_main"));
	char *argv[] = { path, NULL };
	struct run r = run_program(argv, &o);
	expect_one_report(&r, INCONSISTENT, "SUMMARY: lockdep-rcu: 1 report: 1 inconsistent lock state\n");
	cr_expect(strstr(r.err, "\ninconsistent {IN-SIGNAL-W} -> {SIGNAL-ON-W} usage.\n"), "%s", r.err);
	cr_expect(strstr(r.err, "(early_lock){mutex}, at: early_lock_use+"), "%s", r.err);
	cr_expect(strstr(r.err, "{IN-SIGNAL-W} state was registered at:\n  early_handler+"), "%s", r.err);
	run_free(&r);
}

/* ---- RCU in handlers ---------------------------------------------------------- */

static void expect_illegal_wait(const char *flavor, const char *scenario, const char *what)
{
	struct run r = run_signals(flavor, scenario);
	expect_one_report(&r, "WARNING: suspicious RCU usage\n", "SUMMARY: lockdep-rcu: 1 report: 1 suspicious RCU usage\n");
	char message[160];
	snprintf(message, sizeof(message), " Illegal %s in a signal handler (SIGALRM)!\n", what);
	cr_expect(names_site(&r, 1, message), "[%s] %s\n%s", flavor, r.out, r.err);
	run_free(&r);
}

Test(signals, synchronize_rcu_in_handler)
{
	for (int i = 0; registering_flavors[i]; i++)
		expect_illegal_wait(registering_flavors[i], "bug-synchronize-rcu-in-handler", "synchronize_rcu()");
}

Test(signals, rcu_barrier_in_handler) { expect_illegal_wait("memb", "bug-rcu-barrier-in-handler", "rcu_barrier()"); }

/* ---- correct twins ------------------------------------------------------------------ */

static void expect_silent_everywhere(const char *scenario)
{
	for (int i = 0; all_flavors[i]; i++)
		expect_silent(all_flavors[i], scenario);
}

Test(signals, lock_always_blocked_outside_handler_is_silent) { expect_silent_everywhere("ok-blocked-around-the-lock"); }
Test(signals, reads_in_and_out_of_handler_are_silent) { expect_silent("memb", "ok-reads-in-and-out-of-handler"); }
Test(signals, safe_lock_taking_safe_lock_is_silent) { expect_silent("memb", "ok-safe-lock-takes-safe-lock"); }
Test(signals, async_signal_safe_handler_is_silent) { expect_silent_everywhere("ok-async-signal-safe-handler"); }
Test(signals, sigwait_thread_is_silent) { expect_silent("memb", "ok-sigwait-thread"); }
Test(signals, read_side_in_handler_is_silent) { expect_silent_everywhere("ok-read-side-in-handler"); }
Test(signals, liburcu_signal_handler_under_locks_is_silent, .timeout = 60)
{
	expect_silent_everywhere("ok-urcu-grace-periods-under-locks");
}

/* ---- what the program sees -------------------------------------------------------- */

static void expect_same_semantics(const char *scenario)
{
	for (int preload = 0; preload < 2; preload++) {
		struct run_options o = { .preload = preload, .timeout = 20 };
		struct run r = run_target("signal_semantics", "memb", scenario, &o);
		cr_expect_eq(r.exit_code, 0, "[%s preload=%d] %s%s", scenario, preload, r.out, r.err);
		cr_expect(strstr(r.out, "done\n"), "[%s preload=%d] %s", scenario, preload, r.out);
		cr_expect_str_empty(r.err, "[%s preload=%d] %s", scenario, preload, r.err);
		run_free(&r);
	}
}

Test(signals, sigaction_old_action_ign_dfl_and_refusals_unchanged) { expect_same_semantics("round-trip"); }
Test(signals, errno_around_the_handler_unchanged) { expect_same_semantics("errno"); }
Test(signals, sa_restart_unchanged) { expect_same_semantics("restart"); }
Test(signals, mask_inside_handler_unchanged) { expect_same_semantics("mask-in-handler"); }
Test(signals, sigsuspend_and_old_masks_unchanged) { expect_same_semantics("sigsuspend"); }

/* ---- the command: grouped, suppressed, recorded ------------------------------------ */

Test(signals, report_groups_suppresses_and_records_the_new_kinds, .timeout = 60)
{
	char *dir = cli_temp_dir();
	for (int i = 0; i < 2; i++) {
		char out[4200];
		snprintf(out, sizeof(out), "%s/run%d", dir, i);
		struct run r = cli_env(0, NULL, "run", "-o", out, "--", cli_target(TARGET ".memb"),
				       i ? "bug-safe-lock-takes-unsafe-lock" : "bug-in-handler-after-unblocked-use", NULL);
		cr_expect_eq(r.exit_code, 66, "%s", r.err);
		run_free(&r);
	}
	char out[4200];
	snprintf(out, sizeof(out), "%s/run2", dir);
	struct run r = cli_env(0, NULL, "run", "-o", out, "--", cli_target(TARGET ".memb"),
			       "bug-in-handler-after-unblocked-use", NULL);
	run_free(&r);
	r = cli_env(0, NULL, "report", dir, NULL);
	cr_expect_eq(r.exit_code, 1, "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "lockdep-rcu report: 2 bugs (3 reports) in 3 of 3 runs"), "%s", r.out);
	cr_expect(strstr(r.out, "\n#1 WARNING: inconsistent lock state\n"), "%s", r.out);
	cr_expect(strstr(r.out, "2 reports in 2 of 3 runs"), "%s", r.out);
	cr_expect(strstr(r.out, "\n#2 WARNING: possible irq lock inversion dependency detected\n"), "%s", r.out);
	run_free(&r);

	r = cli_env(0, NULL, "report", "--json", dir, NULL);
	cr_expect(cli_json_valid(r.out), "%s", r.out);
	cr_expect(strstr(r.out, "\"kind\": \"inconsistent_lock_state\""), "%s", r.out);
	cr_expect(strstr(r.out, "\"kind\": \"irq_lock_inversion\""), "%s", r.out);
	run_free(&r);

	char supp[4200];
	snprintf(supp, sizeof(supp), "%s/supp.txt", dir);
	static const char rules[] = "# reviewed\ninconsistent_lock_state:alarm_takes_table_lock\n"
				    "irq_lock_inversion:alarm_takes_stats_lock\n";
	cli_write(supp, rules, sizeof(rules) - 1);
	r = cli_env(0, NULL, "report", "--suppressions", supp, dir, NULL);
	cr_expect_eq(r.exit_code, 0, "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "; 3 suppressed"), "%s", r.out);
	run_free(&r);
	/* the tracer applies the same rules itself */
	const char *scenarios[] = { "bug-in-handler-after-unblocked-use", "bug-safe-lock-takes-unsafe-lock" };
	for (int i = 0; i < 2; i++) {
		snprintf(out, sizeof(out), "%s/suppressed%d", dir, i);
		r = cli_env(0, NULL, "run", "--suppressions", supp, "-o", out, "--", cli_target(TARGET ".memb"),
			    scenarios[i], NULL);
		cr_expect_eq(r.exit_code, 0, "%s %s", scenarios[i], r.err);
		run_free(&r);
	}

	/* the records: kind, the lock and the usage it conflicts with */
	char options[4300], path[4300];
	snprintf(options, sizeof(options), "log_path=%s/log", dir);
	struct run_options o = { .preload = 1, .options = options, .timeout = 20 };
	r = run_target(TARGET, "memb", "bug-in-handler-after-unblocked-use", &o);
	run_free(&r);
	snprintf(path, sizeof(path), "%s/log.jsonl", dir);
	char *records = cli_read(path);
	cr_assert(records, "no records in %s", path);
	cr_expect(cli_json_valid(records), "%s", records);
	cr_expect(strstr(records, "\"kind\":\"inconsistent_lock_state\""), "%s", records);
	cr_expect(strstr(records, "\"role\":\"acquiring\",\"address\":"), "%s", records);
	cr_expect(strstr(records, "\"name\":\"table_lock\",\"kind\":\"IN-SIGNAL-W\""), "%s", records);
	cr_expect(strstr(records, "\"role\":\"usage\",\"name\":\"table_lock\",\"kind\":\"SIGNAL-ON-W\""), "%s",
		  records);
	free(records);
	cli_remove_dir(dir);
}

/* A log whose records were lost (captured stderr, a copied log) is read
 * from its text, into the same bug as the same report told by its record. */
Test(signals, report_groups_text_and_records_of_one_bug_together, .timeout = 60)
{
	static const char *const scenarios[] = { "bug-unblocked-use-after-handler", "bug-safe-lock-takes-unsafe-lock",
						 "bug-unsafe-use-of-lock-a-safe-lock-takes",
						 "bug-dependency-joins-safe-and-unsafe-locks" };
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
		char *dir = cli_temp_dir();
		char out[4200], records[4300];
		for (int run = 0; run < 2; run++) {
			snprintf(out, sizeof(out), "%s/run%d", dir, run);
			struct run r = cli_env(0, NULL, "run", "-o", out, "--", cli_target(TARGET ".memb"), scenarios[i],
					       NULL);
			cr_expect_eq(r.exit_code, 66, "%s", r.err);
			run_free(&r);
		}
		snprintf(records, sizeof(records), "find '%s/run1' -name '*.jsonl' -delete", dir);
		cr_assert_eq(system(records), 0);
		struct run r = cli_env(0, NULL, "report", dir, NULL);
		cr_expect(strstr(r.out, "lockdep-rcu report: 1 bug (2 reports) in 2 of 2 runs"), "[%s]\n%s%s", scenarios[i],
			  r.out, r.err);
		run_free(&r);
		cli_remove_dir(dir);
	}
}
