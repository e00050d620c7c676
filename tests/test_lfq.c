/* liburcu's RCU lock-free queue and stack in unmodified programs: each call
 * their headers ask to be made in a read-side critical section (the
 * queue's flavor; for the stack, any; QSBR: online) is reported once, at
 * the program's line, when it is not; the same calls in a read side are
 * silent, and so is a push, which needs none. Every flavor, at -O2, and
 * with _LGPL_SOURCE, where the queue and stack are inlined from liburcu's
 * static headers and nothing of theirs is seen. */
#include <criterion/criterion.h>
#include "harness.h"
#include "records.h"

#define SUSPICIOUS_KIND "suspicious_rcu"
#define CALL_RCU_OFFLINE "call_rcu() by a QSBR thread that is offline!"

/* Builds whose program calls liburcu-cds's exported functions. */
static const char *const exported_builds[] = { "memb", "mb", "signal", "qsbr", "bp",
					       "memb.o2", "qsbr.o2", "bp.o2", NULL };
/* Builds with _LGPL_SOURCE: the queue and stack inlined. */
static const char *const lgpl_builds[] = { "memb.lgpl", "qsbr.lgpl", "bp.lgpl", "memb.lgpl.o2", "qsbr.lgpl.o2", NULL };

static struct run_records lfq_run(const char *build, const char *scenario)
{
	return run_target_records("lfq_rules", build, scenario,
				  &(struct run_options){ .preload = 1, .timeout = 60 });
}

static int is_qsbr(const char *build)
{
	return !strncmp(build, "qsbr", 4);
}

/* At -O2 the scenario's helpers are inlined: the site's function is not
 * theirs. */
static const char *site_function(const char *build, const char *function)
{
	return strstr(build, "o2") ? NULL : function;
}

/* The record at the run's n-th site saying "<call> outside an RCU
 * read-side critical section!". */
static void expect_call_reported_at_site(struct run_records *rr, const char *build, int n, const char *function,
					 const char *call)
{
	int line = target_site_line(&rr->run, n);
	const struct record *r =
		expect_record_at(rr, SUSPICIOUS_KIND, site_function(build, function), "lfq_rules.c", line);
	char message[128];
	snprintf(message, sizeof(message), "%s outside an RCU read-side critical section!", call);
	cr_expect(r && record_message_ends(r, message), "[%s] %s at line %d\n%s", build, message, line, rr->context);
}

/* One report, for call at the scenario's first site, in function. */
static void expect_call_reported(const char *scenario, const char *function, const char *call)
{
	for (const char *const *b = exported_builds; *b; b++) {
		struct run_records rr = lfq_run(*b, scenario);
		cr_expect(strstr(rr.run.out, "done\n"), "[%s %s]\n%s", *b, scenario, rr.context);
		expect_call_reported_at_site(&rr, *b, 1, function, call);
		expect_records(&rr, NULL, 1);
		run_records_free(&rr);
	}
}

static void expect_silent_in(const char *const *builds, const char *scenario)
{
	for (const char *const *b = builds; *b; b++) {
		struct run_records rr = lfq_run(*b, scenario);
		cr_expect(strstr(rr.run.out, "done\n"), "[%s %s]\n%s", *b, scenario, rr.context);
		cr_expect_eq(rr.run.exit_code, 0, "[%s %s]\n%s", *b, scenario, rr.context);
		expect_records(&rr, NULL, 0);
		run_records_free(&rr);
	}
}

static void expect_silent(const char *scenario)
{
	expect_silent_in(exported_builds, scenario);
	expect_silent_in(lgpl_builds, scenario);
}

Test(lfq, enqueue_dequeue_and_pop_outside_a_read_side_are_reported_at_the_programs_call, .timeout = 300)
{
	expect_call_reported("bug-enqueue-outside-reader", "call_in", "cds_lfq_enqueue_rcu()");
	expect_call_reported("bug-dequeue-outside-reader", "call_in", "cds_lfq_dequeue_rcu()");
	expect_call_reported("bug-pop-outside-reader", "call_in", "cds_lfs_pop_rcu()");
	expect_silent("ok-enqueue-in-reader");
	expect_silent("ok-dequeue-in-reader");
	expect_silent("ok-pop-in-reader");
}

/* urcu/rculfstack.h: a push is ABA-free and needs no read side. */
Test(lfq, a_push_outside_a_read_side_is_silent, .timeout = 120)
{
	expect_silent("ok-push-outside-reader");
}

/* A program alone (its other threads joined, liburcu's call_rcu workers
 * aside) has no concurrent caller for the read side to guard against:
 * draining a queue and a stack so, as liburcu's own benchmarks end, is
 * silent. */
Test(lfq, a_program_alone_drains_without_a_read_side, .timeout = 120)
{
	expect_silent("ok-drain-alone-after-join");
}

/* Reported once per call site, as every suspicious RCU usage is. */
Test(lfq, a_thousand_unprotected_dequeues_from_one_line_are_one_report, .timeout = 120)
{
	expect_call_reported("bug-many-dequeues-outside-reader", "bug_many_dequeues_outside_reader",
			     "cds_lfq_dequeue_rcu()");
}

/* A dequeue holding a lock is the update side's (the article's rule 2):
 * not reported. The dequeue hands liburcu's call_rcu() the dummy node it
 * passed, and call_rcu() from an offline QSBR thread is a misuse of its
 * own (liburcu's call_rcu() reads its per-CPU data under the thread's read
 * side), reported at the program's dequeue, with or without _LGPL_SOURCE. */
Test(lfq, a_dequeue_holding_a_lock_is_the_update_sides, .timeout = 240)
{
	const char *const *lists[] = { exported_builds, lgpl_builds, NULL };
	for (const char *const **list = lists; *list; list++)
		for (const char *const *b = *list; *b; b++) {
			struct run_records rr = lfq_run(*b, "ok-dequeue-under-lock");
			cr_expect(strstr(rr.run.out, "done\n"), "[%s]\n%s", *b, rr.context);
			expect_records(&rr, NULL, is_qsbr(*b) ? 1 : 0);
			if (is_qsbr(*b)) {
				const struct record *r = record_nth(&rr, SUSPICIOUS_KIND, 0);
				cr_expect(r && record_message_ends(r, CALL_RCU_OFFLINE), "[%s]\n%s", *b, rr.context);
			}
			run_records_free(&rr);
		}
}

/* A queue handed the program's own call_rcu has no flavor the tracer
 * knows: a read side of any flavor is asked for. For QSBR, the program's
 * call_rcu, which the dequeue calls for its dummy node, is called offline
 * too: a second report, at that function. */
Test(lfq, a_queue_of_unknown_flavor_asks_for_a_read_side_of_any_flavor, .timeout = 240)
{
	for (const char *const *b = exported_builds; *b; b++) {
		struct run_records rr = lfq_run(*b, "bug-unknown-flavor-dequeue-outside-reader");
		cr_expect(strstr(rr.run.out, "done\n"), "[%s]\n%s", *b, rr.context);
		expect_call_reported_at_site(&rr, *b, 1, "call_in", "cds_lfq_dequeue_rcu()");
		if (is_qsbr(*b)) {
			const struct record *r = record_saying(&rr, SUSPICIOUS_KIND, "call_rcu()");
			cr_expect(r && record_message_ends(r, CALL_RCU_OFFLINE) &&
					  frame_matches(&r->site, site_function(*b, "program_call_rcu"), "lfq_rules.c", 0),
				  "[%s]\n%s", *b, rr.context);
		}
		expect_records(&rr, NULL, is_qsbr(*b) ? 2 : 1);
		run_records_free(&rr);
	}
	expect_silent("ok-unknown-flavor-dequeue-in-reader");
}

/* A worker takes a node off the queue or the stack in its read side; the
 * main thread frees it at once: the node counts as dereferenced in the
 * worker's section, so the free is reported where it is made. Not with the
 * read side inlined (_LGPL_SOURCE), nor for QSBR, as for the hash table's
 * nodes. A node freed by call_rcu(), or after synchronize_rcu(), is
 * silent in every build. */
Test(lfq, a_taken_node_freed_while_its_reader_holds_it_is_reported, .timeout = 300)
{
	static const char *const held_builds[] = { "memb", "mb", "signal", "bp", "memb.o2", "bp.o2", NULL };
	static const char *const bugs[] = { "bug-dequeue-then-free-while-held", "bug-pop-then-free-while-held", NULL };
	for (const char *const *bug = bugs; *bug; bug++)
		for (const char *const *b = held_builds; *b; b++) {
			struct run_records rr = lfq_run(*b, *bug);
			cr_expect(strstr(rr.run.out, "done\n") && strstr(rr.run.out, "worker holds an item\n"), "[%s %s]\n%s",
				  *b, *bug, rr.context);
			expect_records(&rr, "rcu_use_after_free", 1);
			expect_records(&rr, NULL, 1);
			expect_record_at(&rr, "rcu_use_after_free", site_function(*b, "free_while_held"), "lfq_rules.c",
					 target_site_line(&rr.run, 2));
			run_records_free(&rr);
		}
	expect_silent("ok-dequeue-then-call-rcu-while-held");
	expect_silent("ok-pop-then-call-rcu-while-held");
	expect_silent("ok-dequeue-then-synchronize-rcu-then-free");
	expect_silent("ok-dequeue-then-call-rcu");
}

/* With _LGPL_SOURCE the queue and the stack are the static headers'
 * inline functions: no call reaches liburcu-cds, and nothing about them is
 * reported (a documented limit). What is seen is true: the call_rcu() an
 * inlined dequeue makes from an offline QSBR thread. */
Test(lfq, with_lgpl_source_the_inlined_queue_and_stack_are_not_seen, .timeout = 300)
{
	static const char *const bugs[] = { "bug-enqueue-outside-reader", "bug-dequeue-outside-reader",
					    "bug-pop-outside-reader", "bug-many-dequeues-outside-reader",
					    "bug-dequeue-then-free-while-held", NULL };
	for (const char *const *bug = bugs; *bug; bug++)
		for (const char *const *b = lgpl_builds; *b; b++) {
			struct run_records rr = lfq_run(*b, *bug);
			cr_expect(strstr(rr.run.out, "done\n"), "[%s %s]\n%s", *b, *bug, rr.context);
			cr_expect_null(record_saying(&rr, NULL, "cds_lf"), "[%s %s]\n%s", *b, *bug, rr.context);
			int call_rcu_offline = 0;
			for (size_t i = 0; i < rr.count; i++)
				call_rcu_offline += record_message_ends(&rr.records[i], CALL_RCU_OFFLINE);
			cr_expect(is_qsbr(*b) || call_rcu_offline == 0, "[%s %s]\n%s", *b, *bug, rr.context);
			expect_records(&rr, NULL, call_rcu_offline);
			run_records_free(&rr);
		}
}
