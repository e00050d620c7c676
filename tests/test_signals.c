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
#include "records.h"
#include "cli_helpers.h"

#define TARGET "signal_handlers"
#define FILE_NAME "tests/targets/signal_handlers.c"
#define INCONSISTENT "WARNING: inconsistent lock state\n"
#define INVERSION "WARNING: possible irq lock inversion dependency detected\n"

#define INCONSISTENT_KIND "inconsistent_lock_state"
#define INCONSISTENT_TITLE "WARNING: inconsistent lock state"
#define INVERSION_KIND "irq_lock_inversion"
#define INVERSION_TITLE "WARNING: possible irq lock inversion dependency detected"
#define INCONSISTENT_SUMMARY "SUMMARY: lockdep-rcu: 1 report: 1 inconsistent lock state\n"
#define INVERSION_SUMMARY "SUMMARY: lockdep-rcu: 1 report: 1 irq lock inversion dependency\n"

static struct run_records run_signals(const char *flavor, const char *scenario)
{
	struct run_options o = { .preload = 1, .timeout = 20 };
	return run_target_records(TARGET, flavor, scenario, &o);
}

/* "signal_handlers.c:<line of the n-th site>" followed by `after`, in the
 * log: for what only the text has. */
static int names_site(const struct run_records *rr, int n, const char *after)
{
	char where[256];
	snprintf(where, sizeof(where), FILE_NAME ":%d%s", target_site_line(&rr->run, n), after);
	return strstr(rr->log, where) != NULL;
}

/* One report, of kind and title, and no other; the program went on, exit
 * 66, the summary (the text's) says so; returns the record. */
static const struct record *expect_one_report(const struct run_records *rr, const char *kind, const char *title,
					      const char *summary)
{
	expect_records(rr, kind, 1);
	expect_records(rr, NULL, 1);
	const struct record *r = record_nth(rr, kind, 0);
	if (r)
		cr_expect_str_eq(r->title ? r->title : "", title, "%s", rr->context);
	cr_expect_eq(rr->run.exit_code, 66, "%d\n%s", rr->run.exit_code, rr->context);
	cr_expect(strstr(rr->run.out, "done\n"), "the program went on: %s", rr->run.out);
	cr_expect(strstr(rr->log, summary), "%s", rr->context);
	return r;
}

/* An inconsistent lock state of lock, "inconsistent {from} -> {to} usage.":
 * the acquisition (its usage `to`) at the report's site, function at
 * file:line, and the {from} usage the lock had, registered in usage_function
 * at file:usage_line. */
static void expect_inconsistent(const struct run_records *rr, const struct record *r, const char *from, const char *to,
				const char *lock, const char *function, const char *file, int line,
				const char *usage_function, int usage_line)
{
	if (!r)
		return;
	char want[256];
	snprintf(want, sizeof(want), "inconsistent {%s} -> {%s} usage.", from, to);
	cr_expect_str_eq(r->message ? r->message : "", want, "%s", rr->context);
	cr_expect(frame_matches(&r->site, function, file, line), "the acquisition at %s %s:%d\n%s", function, file,
		  line, rr->context);
	expect_lock(rr, r, "acquiring", lock, to);
	expect_lock(rr, r, "usage", lock, from);
	const struct record_lock *usage = record_lock(r, "usage", lock);
	cr_expect(usage && usage->has_acquired_at && frame_matches(&usage->acquired_at, usage_function, file, usage_line),
		  "{%s} registered at %s %s:%d\n%s", from, usage_function, file, usage_line, rr->context);
}

/* The Call Trace runs from function in the handler through the signal
 * frame (no function) into the thread's pthread_kill(). */
static void expect_handler_stack(const struct run_records *rr, const struct record *r, const char *function)
{
	cr_expect(r && r->frame_count > 2 && frame_matches(&r->frames[0], function, FILE_NAME, 0) &&
			  !r->frames[1].function && frame_matches(&r->frames[2], "__pthread_kill_implementation", NULL, 0),
		  "the handler's stack from %s through the signal\n%s", function, rr->context);
}

static void expect_silent(const char *flavor, const char *scenario)
{
	struct run_records rr = run_signals(flavor, scenario);
	expect_no_reports(&rr);
	cr_expect(strstr(rr.run.out, "done\n"), "[%s %s] %s", flavor, scenario, rr.run.out);
	run_records_free(&rr);
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
	struct run_records rr = run_signals("memb", "bug-in-handler-after-unblocked-use");
	const struct record *r = expect_one_report(&rr, INCONSISTENT_KIND, INCONSISTENT_TITLE, INCONSISTENT_SUMMARY);
	/* the acquisition in the handler (site 2), the first unblocked use (site 1) */
	expect_inconsistent(&rr, r, "SIGNAL-ON-W", "IN-SIGNAL-W", "table_lock", "alarm_takes_table_lock", FILE_NAME,
			    target_site_line(&rr.run, 2), "bug_in_handler_after_unblocked_use", target_site_line(&rr.run, 1));
	expect_lock_list(&rr, r, "acquiring:table_lock{IN-SIGNAL-W} usage:table_lock{SIGNAL-ON-W}");
	/* the text's: in which handler, the lock's type, the layout, the scenario */
	cr_expect(strstr(rr.log, " [in the handler of SIGALRM] takes:\n"), "%s", rr.context);
	cr_expect(strstr(rr.log, " (table_lock){mutex}, at: alarm_takes_table_lock+"), "%s", rr.context);
	cr_expect(names_site(&rr, 2, "\n{SIGNAL-ON-W} state was registered at:\n  bug_in_handler_after_unblocked_use+"),
		  "%s", rr.context);
	cr_expect(strstr(rr.log, scenario_table), "%s", rr.context);
	/* the handler's stack: where the signal came, named as gdb does */
	expect_handler_stack(&rr, r, "alarm_takes_table_lock");
	cr_expect(strstr(rr.log, "Call Trace:\n alarm_takes_table_lock+"), "%s", rr.context);
	cr_expect(strstr(rr.log, "\n <signal handler called>\n __pthread_kill_implementation+"), "%s", rr.context);
	run_records_free(&rr);
}

/* Many uses with the signal blocked (answered from the acquisition cache
 * after the first), then one with it deliverable: that one is recorded. */
Test(signals, a_deliverable_use_after_many_blocked_ones_is_recorded)
{
	struct run_records rr = run_signals("memb", "bug-deliverable-use-after-many-blocked-ones");
	const struct record *r = expect_one_report(&rr, INCONSISTENT_KIND, INCONSISTENT_TITLE, INCONSISTENT_SUMMARY);
	/* the deliverable use is the one named */
	expect_inconsistent(&rr, r, "SIGNAL-ON-W", "IN-SIGNAL-W", "table_lock", "alarm_takes_table_lock", FILE_NAME,
			    target_site_line(&rr.run, 2), "bug_deliverable_use_after_many_blocked_ones",
			    target_site_line(&rr.run, 1));
	run_records_free(&rr);
}

/* The same in a program without liburcu, whose lock wrappers answer from
 * the acquisition cache inline; and its twin without the deliverable use. */
Test(signals, a_deliverable_use_after_cached_blocked_ones_is_recorded_without_liburcu)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s", build_path("targets/signal_cache_main"));
	struct run_options o = { .preload = 1, .timeout = 20 };
	char *bug[] = { path, NULL }, *ok[] = { path, "ok", NULL };
	struct run_records rr = run_program_records(bug, &o);
	expect_records(&rr, INCONSISTENT_KIND, 1);
	expect_records(&rr, NULL, 1);
	/* the deliverable use, in main, is named */
	expect_inconsistent(&rr, record_nth(&rr, INCONSISTENT_KIND, 0), "SIGNAL-ON-W", "IN-SIGNAL-W", "table_lock",
			    "alarm_takes_table_lock", "signal_cache_main.c", 0, "main", target_site_line(&rr.run, 1));
	cr_expect(strstr(rr.run.out, "done\n"), "%s", rr.run.out);
	run_records_free(&rr);
	rr = run_program_records(ok, &o);
	expect_no_reports(&rr);
	run_records_free(&rr);
}

Test(signals, lock_with_the_signal_deliverable_after_use_in_handler)
{
	struct run_records rr = run_signals("memb", "bug-unblocked-use-after-handler");
	const struct record *r = expect_one_report(&rr, INCONSISTENT_KIND, INCONSISTENT_TITLE, INCONSISTENT_SUMMARY);
	/* the unblocked acquisition (site 2), the handler's use (site 1) */
	expect_inconsistent(&rr, r, "IN-SIGNAL-W", "SIGNAL-ON-W", "table_lock", "bug_unblocked_use_after_handler",
			    FILE_NAME, target_site_line(&rr.run, 2), "alarm_takes_table_lock", target_site_line(&rr.run, 1));
	expect_lock_list(&rr, r, "acquiring:table_lock{SIGNAL-ON-W} usage:table_lock{IN-SIGNAL-W}");
	expect_frame_at(&rr, r, "bug_unblocked_use_after_handler", FILE_NAME, target_site_line(&rr.run, 2));
	cr_expect(strstr(rr.log, " [SIGALRM not blocked] takes:\n"), "%s", rr.context);
	cr_expect(strstr(rr.log, " (table_lock){mutex}, at: bug_unblocked_use_after_handler+"), "%s", rr.context);
	cr_expect(names_site(&rr, 2, "\n{IN-SIGNAL-W} state was registered at:\n  alarm_takes_table_lock+"), "%s",
		  rr.context);
	/* the usage's stack, which only the text has, goes through the signal */
	cr_expect(strstr(rr.log, "\n  <signal handler called>\n  __pthread_kill_implementation+"),
		  "the usage's stack goes through the signal: %s", rr.context);
	cr_expect(strstr(rr.log, scenario_table), "%s", rr.context);
	run_records_free(&rr);
}

Test(signals, lock_in_handler_after_trylock_with_the_signal_deliverable)
{
	struct run_records rr = run_signals("memb", "bug-trylock-then-handler");
	const struct record *r = expect_one_report(&rr, INCONSISTENT_KIND, INCONSISTENT_TITLE, INCONSISTENT_SUMMARY);
	expect_inconsistent(&rr, r, "SIGNAL-ON-W", "IN-SIGNAL-W", "table_lock", "alarm_takes_table_lock", FILE_NAME,
			    target_site_line(&rr.run, 2), "bug_trylock_then_handler", target_site_line(&rr.run, 1));
	run_records_free(&rr);
}

/* A SIGSEGV handler that takes a lock, run only by the thread's own
 * faulting writes (dirty-page tracking): not an interrupt, silent (it was
 * "inconsistent lock state"). The same handler run by raise() is one. */
Test(signals, a_fault_handler_taking_a_lock_is_not_an_interrupt)
{
	expect_silent("memb", "ok-fault-handler-takes-lock");
	struct run_records rr = run_signals("memb", "bug-raised-segv-handler-takes-lock");
	const struct record *r = expect_one_report(&rr, INCONSISTENT_KIND, INCONSISTENT_TITLE, INCONSISTENT_SUMMARY);
	expect_inconsistent(&rr, r, "SIGNAL-ON-W", "IN-SIGNAL-W", "dirty_lock", "on_write_fault", FILE_NAME, 0,
			    "track_pages", 0);
	expect_handler_stack(&rr, r, "on_write_fault");
	run_records_free(&rr);
}

Test(signals, trylock_in_handler_is_silent) { expect_silent("memb", "ok-trylock-in-handler"); }

/* The signal landing while the lock is held: the handler blocks forever on
 * its own thread's lock, and the report is out before it does. */
Test(signals, real_deadlock_in_handler_is_explained_before_it_hangs, .timeout = 20)
{
	struct run_options o = { .preload = 1, .timeout = 2 };
	struct run_records rr = run_target_records(TARGET, "memb", "bug-deadlock-in-handler", &o);
	cr_expect(rr.run.timed_out, "the program really deadlocks: %d\n%s", rr.run.exit_code, rr.context);
	/* the usage first, as the kernel marks it before validating; the
	 * recursion it makes after, if any, and nothing else */
	const struct record *r = record_nth(&rr, NULL, 0);
	cr_expect(r && r->kind && !strcmp(r->kind, INCONSISTENT_KIND), "the first report\n%s", rr.context);
	expect_records(&rr, INCONSISTENT_KIND, 1);
	expect_records(&rr, NULL, 1 + records_of_kind(&rr, "recursive_locking"));
	if (r && r->kind && !strcmp(r->kind, INCONSISTENT_KIND)) {
		cr_expect_str_eq(r->title ? r->title : "", INCONSISTENT_TITLE, "%s", rr.context);
		cr_expect_str_eq(r->message ? r->message : "", "inconsistent {SIGNAL-ON-W} -> {IN-SIGNAL-W} usage.", "%s",
				 rr.context);
		/* the interrupted code's lock */
		cr_expect_eq(record_lock_count(r, "held"), 1, "%s", rr.context);
		expect_lock(&rr, r, "held", "table_lock", "mutex");
	}
	/* the report's title line, then its header */
	cr_expect(strstr(rr.log, INCONSISTENT "lockdep-rcu"), "%s", rr.context);
	run_records_free(&rr);
}

/* Every flavor: the checks do not depend on liburcu (and liburcu-signal's
 * own SIGUSR1 handler changes nothing). */
Test(signals, inconsistent_state_in_every_flavor)
{
	for (int i = 0; all_flavors[i]; i++) {
		struct run_records rr = run_signals(all_flavors[i], "bug-unblocked-use-after-handler");
		expect_records(&rr, INCONSISTENT_KIND, 1);
		expect_records(&rr, NULL, 1);
		expect_inconsistent(&rr, record_nth(&rr, INCONSISTENT_KIND, 0), "IN-SIGNAL-W", "SIGNAL-ON-W", "table_lock",
				    "bug_unblocked_use_after_handler", FILE_NAME, target_site_line(&rr.run, 2),
				    "alarm_takes_table_lock", target_site_line(&rr.run, 1));
		run_records_free(&rr);
	}
}

Test(signals, write_lock_with_the_signal_deliverable_after_read_in_handler)
{
	struct run_records rr = run_signals("memb", "bug-write-lock-after-read-in-handler");
	const struct record *r = expect_one_report(&rr, INCONSISTENT_KIND, INCONSISTENT_TITLE, INCONSISTENT_SUMMARY);
	expect_inconsistent(&rr, r, "IN-SIGNAL-R", "SIGNAL-ON-W", "config_lock", "bug_write_lock_after_read_in_handler",
			    FILE_NAME, target_site_line(&rr.run, 2), "alarm_reads_config", target_site_line(&rr.run, 1));
	expect_lock_list(&rr, r, "acquiring:config_lock{SIGNAL-ON-W} usage:config_lock{IN-SIGNAL-R}");
	cr_expect(strstr(rr.log, " (config_lock){rwlock-write}, at: bug_write_lock_after_read_in_handler+"), "%s",
		  rr.context);
	cr_expect(strstr(rr.log, "{IN-SIGNAL-R} state was registered at:\n  alarm_reads_config+"), "%s", rr.context);
	cr_expect(strstr(rr.log, "  lock(config_lock);\n  <Interrupt: SIGALRM>\n    rlock(config_lock);\n"), "%s",
		  rr.context);
	run_records_free(&rr);
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

/* "<comm>/<pid> just changed the state of lock:", by the main thread. */
static void expect_changed_state(const struct run_records *rr, const struct record *r)
{
	if (!r)
		return;
	char want[128];
	snprintf(want, sizeof(want), "%s/%ld just changed the state of lock:", r->comm ? r->comm : "?", r->pid);
	cr_expect_str_eq(r->message ? r->message : "", want, "%s", rr->context);
	cr_expect_str_eq(r->comm ? r->comm : "", "signal_handlers", "%s", rr->context);
	cr_expect_eq(r->tid, r->pid, "%s", rr->context);
}

Test(signals, signal_safe_lock_that_took_a_signal_unsafe_lock)
{
	struct run_records rr = run_signals("memb", "bug-safe-lock-takes-unsafe-lock");
	const struct record *r = expect_one_report(&rr, INVERSION_KIND, INVERSION_TITLE, INVERSION_SUMMARY);
	/* stats_lock taken in the handler (site 2) took table_lock, unsafe, before */
	cr_expect(expect_record_at(&rr, INVERSION_KIND, "alarm_takes_stats_lock", FILE_NAME, target_site_line(&rr.run, 2)),
		  "%s", rr.context);
	expect_changed_state(&rr, r);
	expect_lock_list(&rr, r, "acquiring:stats_lock{IN-SIGNAL-W} chain:table_lock{signal-unsafe}");
	expect_handler_stack(&rr, r, "alarm_takes_stats_lock");
	cr_expect(strstr(rr.log, " (stats_lock){mutex}, at: alarm_takes_stats_lock+"), "%s", rr.context);
	cr_expect(names_site(&rr, 2, "\nbut this lock took another, SIGALRM-unsafe lock in the past:\n (table_lock)\n\n"
				     "and interrupts could create inverse lock ordering between them.\n"),
		  "%s", rr.context);
	cr_expect(strstr(rr.log, inversion_table), "%s", rr.context);
	/* the dependency and where it was made (site 1), the unsafe use: the
	 * text's */
	cr_expect(strstr(rr.log, "\nthe shortest dependencies between 2nd lock and 1st lock:\n"), "%s", rr.context);
	cr_expect(names_site(&rr, 1, "\n"), "%s", rr.context);
	cr_expect(strstr(rr.log, "SIGNAL-ON-W at:\n"), "%s", rr.context);
	run_records_free(&rr);
}

Test(signals, signal_unsafe_use_of_a_lock_a_signal_safe_lock_took)
{
	struct run_records rr = run_signals("memb", "bug-unsafe-use-of-lock-a-safe-lock-takes");
	const struct record *r = expect_one_report(&rr, INVERSION_KIND, INVERSION_TITLE, INVERSION_SUMMARY);
	/* table_lock used with SIGALRM deliverable (site 1), which stats_lock,
	 * signal-safe, took before */
	cr_expect(expect_record_at(&rr, INVERSION_KIND, "bug_unsafe_use_of_lock_a_safe_lock_takes", FILE_NAME,
				   target_site_line(&rr.run, 1)),
		  "%s", rr.context);
	expect_changed_state(&rr, r);
	expect_lock_list(&rr, r, "acquiring:table_lock{SIGNAL-ON-W} chain:stats_lock{signal-safe}");
	expect_frame_at(&rr, r, "bug_unsafe_use_of_lock_a_safe_lock_takes", FILE_NAME, target_site_line(&rr.run, 1));
	cr_expect(strstr(rr.log, " (table_lock){mutex}, at: bug_unsafe_use_of_lock_a_safe_lock_takes+"), "%s",
		  rr.context);
	cr_expect(names_site(&rr, 1, "\nbut this lock was taken by another, SIGALRM-safe lock in the past:\n"
				     " (stats_lock)\n"),
		  "%s", rr.context);
	cr_expect(strstr(rr.log, inversion_table), "%s", rr.context);
	cr_expect(strstr(rr.log, "IN-SIGNAL-W at:\n"), "%s", rr.context);
	run_records_free(&rr);
}

/* Both usages first, the dependency last: the kernel's check_irq_usage()
 * at the new dependency, its own title. */
Test(signals, new_dependency_from_a_signal_safe_to_a_signal_unsafe_lock)
{
	struct run_records rr = run_signals("memb", "bug-dependency-joins-safe-and-unsafe-locks");
	const struct record *r = expect_one_report(&rr, INVERSION_KIND,
						   "WARNING: SIGALRM-safe -> SIGALRM-unsafe lock order detected",
						   INVERSION_SUMMARY);
	int line = target_site_line(&rr.run, 1);
	/* taking table_lock (site 1) holding stats_lock, taken the line before */
	cr_expect(expect_record_at(&rr, INVERSION_KIND, "bug_dependency_joins_safe_and_unsafe_locks", FILE_NAME, line),
		  "%s", rr.context);
	expect_lock_list(&rr, r, "acquiring:table_lock{lock} holding:stats_lock{lock} chain:stats_lock{signal-safe} "
				 "chain:table_lock{signal-unsafe} held:stats_lock{mutex}");
	const struct record_lock *holding = r ? record_lock(r, "holding", "stats_lock") : NULL;
	cr_expect(holding && holding->has_acquired_at &&
			  frame_matches(&holding->acquired_at, "bug_dependency_joins_safe_and_unsafe_locks", FILE_NAME,
					line - 1),
		  "%s", rr.context);
	cr_expect(names_site(&rr, 1, "\n\nand this task is already holding:\n"), "%s", rr.context);
	cr_expect(strstr(rr.log, " (stats_lock), at: bug_dependency_joins_safe_and_unsafe_locks+"), "%s", rr.context);
	/* where each became safe and unsafe: the text's */
	cr_expect(strstr(rr.log, "which would create a new lock dependency:\n (stats_lock) -> (table_lock)\n\n"
				 "but this new dependency connects a SIGALRM-safe lock:\n (stats_lock)\n"
				 "... which became SIGALRM-safe at:\n  alarm_takes_stats_lock+"),
		  "%s", rr.context);
	cr_expect(strstr(rr.log, "\nto a SIGALRM-unsafe lock:\n (table_lock)\n... which became SIGALRM-unsafe at:\n"
				 "  lock_and_unlock+"),
		  "%s", rr.context);
	cr_expect(strstr(rr.log, inversion_table), "%s", rr.context);
	run_records_free(&rr);
}

/* ---- nesting, SA_RESETHAND, siglongjmp -------------------------------------------- */

Test(signals, nested_handler_is_named_and_unwound)
{
	struct run_records rr = run_signals("memb", "bug-nested-handler");
	const struct record *r = expect_one_report(&rr, INCONSISTENT_KIND, INCONSISTENT_TITLE, INCONSISTENT_SUMMARY);
	expect_inconsistent(&rr, r, "SIGNAL-ON-W", "IN-SIGNAL-W", "table_lock", "alarm_takes_table_lock", FILE_NAME,
			    target_site_line(&rr.run, 1), "lock_and_unlock", 0);
	/* unwound through both handlers */
	expect_handler_stack(&rr, r, "alarm_takes_table_lock");
	expect_frame(&rr, r, "usr2_raises_alarm");
	expect_frame(&rr, r, "bug_nested_handler");
	cr_expect(strstr(rr.log, " [in the handler of SIGALRM] takes:\n"), "%s", rr.context);
	cr_expect(!strstr(rr.log, "SIGUSR2"), "%s", rr.context);
	run_records_free(&rr);
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
	struct run_records rr = run_signals("memb", "bug-nodefer-handler-takes-lock");
	const struct record *r = expect_one_report(&rr, INCONSISTENT_KIND, INCONSISTENT_TITLE, INCONSISTENT_SUMMARY);
	int line = target_site_line(&rr.run, 1);
	expect_inconsistent(&rr, r, "IN-SIGNAL-W", "SIGNAL-ON-W", "table_lock", "alarm_takes_table_lock", FILE_NAME,
			    line, "alarm_takes_table_lock", line);
	cr_expect(strstr(rr.log, " [in the handler of SIGALRM, SIGALRM not blocked] takes:\n"), "%s", rr.context);
	cr_expect(names_site(&rr, 1, "\n{IN-SIGNAL-W} state was registered at:\n  alarm_takes_table_lock+"), "%s",
		  rr.context);
	run_records_free(&rr);
}

/* A library's constructor installs the handler before the tracer's
 * constructor ran (tests/targets/plugins/early_handler.c). */
Test(signals, handler_installed_before_the_tracer_constructor)
{
	struct run_options o = { .preload = 1, .timeout = 20 };
	char path[4096];
	snprintf(path, sizeof(path), "%s", build_path("targets/early_handler_main"));
	char *argv[] = { path, NULL };
	struct run_records rr = run_program_records(argv, &o);
	const struct record *r = expect_one_report(&rr, INCONSISTENT_KIND, INCONSISTENT_TITLE, INCONSISTENT_SUMMARY);
	expect_inconsistent(&rr, r, "IN-SIGNAL-W", "SIGNAL-ON-W", "early_lock", "early_lock_use", "early_handler.c", 0,
			    "early_handler", 0);
	cr_expect(strstr(rr.log, "(early_lock){mutex}, at: early_lock_use+"), "%s", rr.context);
	cr_expect(strstr(rr.log, "{IN-SIGNAL-W} state was registered at:\n  early_handler+"), "%s", rr.context);
	run_records_free(&rr);
}

/* ---- RCU in handlers ---------------------------------------------------------- */

static void expect_illegal_wait(const char *flavor, const char *scenario, const char *what)
{
	struct run_records rr = run_signals(flavor, scenario);
	expect_one_report(&rr, "suspicious_rcu", "WARNING: suspicious RCU usage",
			  "SUMMARY: lockdep-rcu: 1 report: 1 suspicious RCU usage\n");
	char message[160];
	snprintf(message, sizeof(message), "Illegal %s in a signal handler (SIGALRM)", what);
	expect_site_message(&rr, "suspicious_rcu", FILE_NAME, message);
	run_records_free(&rr);
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
	struct run_records rr = run_signals("memb", "bug-in-handler-after-unblocked-use");
	cr_expect(cli_json_valid(rr.jsonl), "%s", rr.context);
	cr_expect_eq(rr.damaged, 0, "%s", rr.context);
	expect_records(&rr, INCONSISTENT_KIND, 1);
	const struct record *rec = record_nth(&rr, INCONSISTENT_KIND, 0);
	const struct record_lock *acquiring = rec ? record_lock(rec, "acquiring", "table_lock") : NULL;
	cr_expect(acquiring && acquiring->address, "the lock acquired, by address\n%s", rr.context);
	expect_lock_list(&rr, rec, "acquiring:table_lock{IN-SIGNAL-W} usage:table_lock{SIGNAL-ON-W}");
	run_records_free(&rr);
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
