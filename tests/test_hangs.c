/* Hangs explained: the RCU stall warning, the hung-task report with every
 * thread's locks, and silence for long waits that are correct. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>
#include "harness.h"
#include "records.h"
#include "cli_helpers.h"

#define STALL_KIND "rcu_stall"
#define HUNG_KIND "hung_task"

/* hangs.<flavor> <scenario> [seconds], its reports to a log and its
 * records read back. */
static struct run_records run_hangs(const char *flavor, const char *scenario, const char *seconds,
				    const char *options, double timeout)
{
	struct run_options o = { .preload = 1, .options = options, .timeout = timeout };
	char path[4096];
	snprintf(path, sizeof(path), "%s", build_path("targets/hangs."));
	strncat(path, flavor, sizeof(path) - strlen(path) - 1);
	char *argv[] = { path, (char *)scenario, (char *)seconds, NULL };
	return run_program_records(argv, &o);
}

/* The record's message starts with prefix. */
static int message_starts(const struct record *r, const char *prefix)
{
	return r && r->message && !strncmp(r->message, prefix, strlen(prefix));
}

/* The record's message contains text. */
static int message_has(const struct record *r, const char *text)
{
	return r && r->message && strstr(r->message, text);
}

/* The reader stays in its read side for stall_timeout + 2.5 s: the warning
 * comes out while it is there, names it and where it entered, and is
 * about the updater waiting at its synchronize_rcu(). */
static void expect_stall(const char *flavor)
{
	struct run_records rr = run_hangs(flavor, "reader-stalls-grace-period", "5", "stall_timeout=2", 20);
	cr_assert_eq(rr.run.exit_code, 66, "%s: %s", flavor, rr.context);
	cr_expect(strstr(rr.run.out, "done\n"), "the program finished: %s", rr.run.out);
	/* one warning (the next is due at 4x), and no other report */
	expect_records(&rr, STALL_KIND, 1);
	expect_records(&rr, NULL, 1);
	const struct record *r = expect_record_at(&rr, STALL_KIND, "reader_stalls_grace_period", "hangs.c", 0);
	char title[64], lock[64], list[160];
	snprintf(title, sizeof(title), "INFO: rcu_%s detected stalls on tasks:", flavor);
	if (r)
		cr_expect_str_eq(r->title ? r->title : "", title, "%s", rr.context);
	snprintf(lock, sizeof(lock), "rcu_read_lock_%s", flavor);
	cr_expect(message_starts(r, "\tstuck_reader/"), "%s: the stalling thread\n%s", flavor, rr.context);
	if (!strcmp(flavor, "qsbr")) {
		/* where its protection began: its last quiescent state */
		int qs = target_site_line(&rr.run, 2);
		char last[128];
		cr_expect(message_has(r, ": online, no quiescent state for at least 2."), "%s", rr.context);
		cr_expect(message_has(r, ", last seen: rcu_quiescent_state() at stuck_reader+"), "%s", rr.context);
		snprintf(last, sizeof(last), "tests/targets/hangs.c:%d", qs);
		expect_message_ends(&rr, r, last);
		snprintf(list, sizeof(list), "stalling:%s{rcu}", lock);
		expect_lock_list(&rr, r, list);
		cr_expect(r && r->lock_count && r->locks[0].has_acquired_at &&
				  frame_matches(&r->locks[0].acquired_at, "stuck_reader", "hangs.c", qs),
			  "the stalling section began at the quiescent state, hangs.c:%d\n%s", qs, rr.context);
	} else {
		int site = target_site_line(&rr.run, 1);
		char entered[128];
		cr_expect(message_has(r, ": in a read-side critical section for at least 2."), "%s", rr.context);
		cr_expect(message_has(r, ", entered at stuck_reader+"), "%s", rr.context);
		snprintf(entered, sizeof(entered), "tests/targets/hangs.c:%d", site);
		expect_message_ends(&rr, r, entered);
		/* the section stalling, and the one lock stuck_reader holds */
		snprintf(list, sizeof(list), "stalling:%s{rcu} held:%s{rcu}", lock, lock);
		expect_lock_list(&rr, r, list);
		for (size_t i = 0; r && i < r->lock_count; i++)
			cr_expect(r->locks[i].has_acquired_at &&
					  frame_matches(&r->locks[i].acquired_at, "stuck_reader", "hangs.c", site),
				  "%s: the %s section entered at stuck_reader hangs.c:%d\n%s", flavor, r->locks[i].role,
				  site, rr.context);
	}
	/* the waiting thread's stack, and the record is about it (not the
	 * watchdog that saw it); who detected it only the text says */
	cr_expect(r && r->frame_count && frame_matches(&r->frames[0], "reader_stalls_grace_period", "hangs.c", 0),
		  "the waiting thread's stack\n%s", rr.context);
	cr_expect(r && r->comm && !strcmp(r->comm, "updater") && r->tid == r->pid,
		  "the record's thread: the updater (the main thread)\n%s", rr.context);
	cr_expect(strstr(rr.log, "(detected by updater/"), "%s", rr.context);
	cr_expect(strstr(rr.log, "Comm: updater\nCall Trace:\n reader_stalls_grace_period+"), "%s", rr.context);
	cr_expect(strstr(rr.log, "SUMMARY: lockdep-rcu: 1 report: 1 RCU stall"), "%s", rr.context);
	/* the stalled reader's stack as it is now, taken from it on demand:
	 * asleep in its read side, inside sleep_fully() called from
	 * stuck_reader() (the kernel dumps the stalled task too) */
	const char *now = strstr(rr.log, "'s stack now:\n");
	const char *sleeping = now ? strstr(now, "\n       sleep_fully+") : NULL;
	cr_expect(now && sleeping && strstr(sleeping, "\n       stuck_reader+") &&
			  (!strstr(now, "\nstack backtrace:") || sleeping < strstr(now, "\nstack backtrace:")),
		  "%s: the stalled reader's stack now\n%s", flavor, rr.context);
	run_records_free(&rr);
}

Test(hangs, reader_stuck_in_read_side_gives_the_stall_warning_memb, .timeout = 30) { expect_stall("memb"); }
Test(hangs, reader_stuck_in_read_side_gives_the_stall_warning_mb, .timeout = 30) { expect_stall("mb"); }
Test(hangs, reader_stuck_in_read_side_gives_the_stall_warning_signal, .timeout = 30) { expect_stall("signal"); }
Test(hangs, reader_stuck_in_read_side_gives_the_stall_warning_bp, .timeout = 30) { expect_stall("bp"); }
Test(hangs, online_qsbr_thread_without_quiescent_state_gives_the_stall_warning, .timeout = 30) { expect_stall("qsbr"); }

/* Stalls repeat at growing intervals: 2 s, then 2 + 6 = 8 s. */
Test(hangs, stall_warnings_back_off, .timeout = 30)
{
	struct run_records rr = run_hangs("memb", "reader-stalls-grace-period", "9", "stall_timeout=2", 25);
	expect_records(&rr, STALL_KIND, 2);
	expect_records(&rr, NULL, 2);
	cr_expect(message_has(record_nth(&rr, STALL_KIND, 0), " for at least 2."), "the first after 2 s: %s",
		  rr.context);
	cr_expect(message_has(record_nth(&rr, STALL_KIND, 1), " for at least 8."), "the second after 8 s: %s",
		  rr.context);
	run_records_free(&rr);
}

Test(hangs, stall_warning_off_with_zero)
{
	struct run_records rr = run_hangs("memb", "reader-stalls-grace-period", "3", "stall_timeout=0", 20);
	expect_no_reports(&rr);
	run_records_free(&rr);
}

/* The hung-task record of the task whose message starts with "<task>/". */
static const struct record *hung_task_of(const struct run_records *rr, const char *task)
{
	char prefix[64];
	snprintf(prefix, sizeof(prefix), "%s/", task);
	for (int i = 0; record_nth(rr, HUNG_KIND, i); i++)
		if (message_starts(record_nth(rr, HUNG_KIND, i), prefix))
			return record_nth(rr, HUNG_KIND, i);
	return NULL;
}

/* The hung-task record of `task`: its title, "<task>/<tid> is blocked
 * acquiring lock:", at `function` in hangs.c, the innermost frame there;
 * the lock it waits for (of name and kind) and the same lock held, by a
 * thread that took it in `holder_function`. */
static const struct record *expect_hung_task(const struct run_records *rr, const char *task, const char *function,
					     const char *lock, const char *kind, const char *holder_kind,
					     const char *holder_function)
{
	const struct record *r = hung_task_of(rr, task);
	cr_expect(r, "a hung-task report of %s\n%s", task, rr->context);
	if (!r)
		return NULL;
	long tid = -1;
	char want[256];
	snprintf(want, sizeof(want), "%s/%%ld is blocked acquiring lock:", task);
	cr_expect_eq(sscanf(r->message, want, &tid), 1, "%s", rr->context);
	snprintf(want, sizeof(want), "%s/%ld is blocked acquiring lock:", task, tid);
	cr_expect_str_eq(r->message, want, "%s", rr->context);
	snprintf(want, sizeof(want), "INFO: task %s:%ld blocked for more than 2 seconds.", task, tid);
	cr_expect_str_eq(r->title ? r->title : "", want, "%s", rr->context);
	/* the record is about the blocked task, not the watchdog that saw it */
	cr_expect(r->tid == tid && r->comm && !strcmp(r->comm, task), "the record's thread: %ld %s, expected %ld %s\n%s",
		  r->tid, r->comm ? r->comm : "(none)", tid, task, rr->context);
	cr_expect(frame_matches(&r->site, function, "hangs.c", 0), "%s blocked in %s\n%s", task, function, rr->context);
	cr_expect(r->frame_count && frame_matches(&r->frames[0], function, "hangs.c", 0), "%s's stack\n%s", task,
		  rr->context);
	const struct record_lock *acquiring = record_lock(r, "acquiring", lock);
	const struct record_lock *holding = record_lock(r, "holding", lock);
	cr_expect(acquiring && acquiring->kind && !strcmp(acquiring->kind, kind), "%s waits for %s{%s}\n%s", task,
		  lock, kind, rr->context);
	cr_expect(holding && holding->kind && !strcmp(holding->kind, holder_kind) && holding->has_acquired_at &&
			  frame_matches(&holding->acquired_at, holder_function, "hangs.c", 0),
		  "%s{%s} held, taken in %s\n%s", lock, holder_kind, holder_function, rr->context);
	cr_expect(acquiring && holding && acquiring->address && holding->address &&
			  !strcmp(acquiring->address, holding->address),
		  "the lock waited for is the one held\n%s", rr->context);
	cr_expect_eq(record_lock_count(r, "acquiring"), 1, "%s", rr->context);
	cr_expect_eq(record_lock_count(r, "holding"), 1, "%s", rr->context);
	return r;
}

/* Two threads deadlock on locks on their own stacks, which the validator
 * does not follow: each gets the hung-task report, naming the other as
 * holder, with every thread's locks. */
Test(hangs, deadlock_on_stack_locks_gives_hung_task_reports_naming_both, .timeout = 30)
{
	struct run_records rr = run_hangs("memb", "stack-locks-deadlock", NULL, "hung_task_timeout=2", 6);
	cr_expect(rr.run.timed_out, "it really deadlocks");
	cr_expect(strstr(rr.run.out, "deadlocking\n"), "%s", rr.run.out);
	/* hung-task reports only: locks on stacks are not classed, no
	 * circular dependency */
	cr_expect_geq(records_of_kind(&rr, HUNG_KIND), 2, "%s", rr.context);
	expect_records(&rr, NULL, records_of_kind(&rr, HUNG_KIND));
	const struct record *a = expect_hung_task(&rr, "abba_a", "abba_thread", "pthread_mutex_t", "mutex", "mutex",
						  "abba_thread");
	const struct record *b = expect_hung_task(&rr, "abba_b", "abba_thread", "pthread_mutex_t", "mutex", "mutex",
						  "abba_thread");
	/* the two stack locks, by address, each held by one and waited for by
	 * the other; both held ("Showing all locks held in the system") */
	const struct record_lock *la = a ? record_lock(a, "acquiring", NULL) : NULL;
	const struct record_lock *lb = b ? record_lock(b, "acquiring", NULL) : NULL;
	cr_expect(la && lb && la->address && lb->address && strcmp(la->address, lb->address),
		  "two locks\n%s", rr.context);
	for (const struct record *r = a; r && la && lb; r = r == a ? b : NULL) {
		int held_a = 0, held_b = 0;
		for (size_t i = 0; i < r->lock_count; i++)
			if (r->locks[i].role && !strcmp(r->locks[i].role, "held") && r->locks[i].address) {
				held_a |= !strcmp(r->locks[i].address, la->address);
				held_b |= !strcmp(r->locks[i].address, lb->address);
			}
		cr_expect(held_a && held_b, "both locks held\n%s", rr.context);
	}
	/* who holds it, and the system's locks, only the text says */
	cr_expect(strstr(rr.log, "which is held by abba_b/"), "%s", rr.context);
	cr_expect(strstr(rr.log, "which is held by abba_a/"), "%s", rr.context);
	cr_expect(strstr(rr.log, "*** DEADLOCK ***"), "%s", rr.context);
	cr_expect(strstr(rr.log, "\nShowing all locks held in the system:\n1 lock held by abba_"), "%s", rr.context);
	cr_expect(strstr(rr.log, "Comm: abba_a\nCall Trace:\n abba_thread+"), "%s", rr.context);
	run_records_free(&rr);
}

/* A reader blocked on an rwlock a writer keeps: the hung-task report names
 * the rwlock, its writer and the reader's rdlock, and the program goes on. */
Test(hangs, reader_blocked_by_a_writer_gives_the_hung_task_report, .timeout = 30)
{
	struct run_records rr = run_hangs("memb", "rwlock-writer-keeps-it", "4", "hung_task_timeout=2", 20);
	cr_expect_eq(rr.run.exit_code, 66, "%s", rr.context);
	cr_expect(strstr(rr.run.out, "done\n"), "the program finished: %s", rr.run.out);
	expect_records(&rr, HUNG_KIND, 1);
	expect_records(&rr, NULL, 1);
	expect_hung_task(&rr, "blocked_reader", "blocked_reader", "table_lock", "rwlock-read", "rwlock-write",
			 "keeping_writer");
	/* the writer thread, and the reader's stack under its name: the text */
	cr_expect(strstr(rr.log, "which is held by keeping_writer/"), "names the writer: %s", rr.context);
	cr_expect(strstr(rr.log, "Comm: blocked_reader\nCall Trace:\n blocked_reader+"), "the reader's stack: %s",
		  rr.context);
	run_records_free(&rr);
	/* its twin: the writer keeps it for less than the timeout, not a word */
	rr = run_hangs("memb", "rwlock-writer-keeps-it", "1", "hung_task_timeout=3", 20);
	expect_no_reports(&rr);
	cr_expect_str_eq(rr.run.out, "done\n");
	run_records_free(&rr);
}

/* A condition variable waited on longer than both timeouts, a mutex held
 * by another thread for a second: correct programs, not a word. */
Test(hangs, long_condition_wait_and_short_lock_wait_are_quiet, .timeout = 30)
{
	struct run_records rr = run_hangs("memb", "long-condition-wait", "4", "hung_task_timeout=2:stall_timeout=2", 20);
	expect_no_reports(&rr);
	run_records_free(&rr);
	rr = run_hangs("memb", "short-lock-wait", NULL, "hung_task_timeout=2", 20);
	expect_no_reports(&rr);
	run_records_free(&rr);
}

/* The watchdog is started by the first wait that lasts, never before: a
 * program that never blocks has no thread of ours. */
Test(hangs, no_watchdog_thread_unless_something_blocks, .timeout = 30)
{
	struct run_records rr = run_hangs("memb", "threads-around-waits", NULL, NULL, 20);
	expect_no_reports(&rr);
	cr_expect(strstr(rr.run.out, "after a condition wait: hangs.memb \n"), "%s", rr.run.out);
	cr_expect(strstr(rr.run.out, "after a lock wait: hangs.memb lockdep-watch \n"), "%s", rr.run.out);
	run_records_free(&rr);
}

/* The INFO reports are reports like the others: they set the exit status
 * (exitcode), are counted, and suppressions of kinds rcu_stall and
 * hung_task hide them by the functions on the stack they print. */
Test(hangs, info_reports_set_the_status_and_are_suppressible, .timeout = 60)
{
	struct run_records rr = run_hangs("memb", "reader-stalls-grace-period", "3", "stall_timeout=1:exitcode=3", 20);
	cr_expect_eq(rr.run.exit_code, 3, "%s", rr.context);
	cr_expect_geq(records_of_kind(&rr, STALL_KIND), 1, "%s", rr.context);
	expect_records(&rr, NULL, records_of_kind(&rr, STALL_KIND));
	const struct record *r = record_nth(&rr, STALL_KIND, 0);
	cr_expect(r && r->title && !strcmp(r->title, "INFO: rcu_memb detected stalls on tasks:"), "%s", rr.context);
	run_records_free(&rr);

	char path[] = "/tmp/lockdep-rcu-supp.XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	const char rules[] = "rcu_stall:reader_stalls_grace_period\nhung_task:abba_thread\n";
	cr_assert(write(fd, rules, sizeof(rules) - 1) == (ssize_t)(sizeof(rules) - 1));
	close(fd);
	char options[256];
	snprintf(options, sizeof(options), "stall_timeout=1:hung_task_timeout=1:suppressions=%s", path);
	rr = run_hangs("memb", "reader-stalls-grace-period", "3", options, 20);
	cr_expect_eq(rr.run.exit_code, 0, "%s", rr.context);
	expect_records(&rr, NULL, 0);
	cr_expect(!strstr(rr.log, "INFO:") && !strstr(rr.run.err, "INFO:"), "%s", rr.context);
	/* counted in the summary, which only the text has */
	cr_expect(strstr(rr.log, "1 suppressed") || strstr(rr.run.err, "1 suppressed"), "%s", rr.context);
	run_records_free(&rr);
	rr = run_hangs("memb", "stack-locks-deadlock", NULL, options, 5);
	cr_expect(rr.run.timed_out, "it really deadlocks");
	expect_records(&rr, NULL, 0);
	cr_expect(!strstr(rr.log, "INFO: task") && !strstr(rr.run.err, "INFO: task"), "%s", rr.context);
	run_records_free(&rr);
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
	cr_expect_eq(r.exit_code, 1, "exit status %d, expected %d:\n%s%s", r.exit_code, 1, r.out, r.err);
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
