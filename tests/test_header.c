/* include/lockdep-rcu.h: the article's quick reference, checked site by
 * site, with and without the preload, in PIE, -no-pie and _LGPL_SOURCE
 * builds. */
#include <criterion/criterion.h>
#include <stdio.h>
#include "harness.h"
#include "records.h"

static const struct run_options preloaded = { .preload = 1 };
static const struct run_options plain = { .preload = 0 };

/* Asserts exactly one report, for the first site, with this message. */
static void expect_one_report(const char *build, const char *scenario, const char *message)
{
	struct run r = run_target("header_checks", build, scenario, &preloaded);
	char expected[512];
	snprintf(expected, sizeof(expected), "header_checks.c:%d %s!", target_site_line(&r, 1), message);
	cr_expect_eq(splat_count(r.err), 1, "[%s %s] one report:\n%s", build, scenario, r.err);
	cr_expect(strstr(r.err, expected), "[%s %s] expected '%s' in:\n%s", build, scenario, expected, r.err);
	cr_expect_eq(r.exit_code, 66, "[%s %s] exit code %d", build, scenario, r.exit_code);
	run_free(&r);
}

static void expect_silent(const char *build, const char *scenario)
{
	struct run r = run_target("header_checks", build, scenario, &preloaded);
	cr_expect_str_empty(r.err, "[%s %s] expected no report:\n%s", build, scenario, r.err);
	cr_expect_eq(r.exit_code, 0, "[%s %s] exit code %d", build, scenario, r.exit_code);
	cr_expect(strstr(r.out, "site "), "[%s %s] the scenario ran", build, scenario);
	run_free(&r);
}

#define CHECK_FAILED "suspicious rcu_dereference_check() usage"

Test(header, files_fdtable_single_owner_outside_everything_is_silent)
{
	expect_silent("memb", "fdtable-single-owner");
}

Test(header, files_fdtable_shared_and_unprotected_warns_once)
{
	expect_one_report("memb", "fdtable-shared-unprotected", CHECK_FAILED);
}

Test(header, files_fdtable_under_its_lock_or_in_reader_is_silent)
{
	expect_silent("memb", "fdtable-shared-under-lock");
	expect_silent("memb", "fdtable-shared-in-reader");
}

Test(header, rcu_dereference_checks_vanilla_reader_in_every_flavor)
{
	for (const char *const *f = all_flavors; *f; f++) {
		expect_silent(*f, "deref-in-reader");
		if (strcmp(*f, "qsbr"))   /* an online QSBR thread is a reader */
			expect_one_report(*f, "deref-outside-reader", CHECK_FAILED);
	}
}

Test(header, rcu_dereference_in_bh_reader_warns_as_in_the_article)
{
	expect_one_report("memb", "deref-in-bh-reader", CHECK_FAILED);
}

Test(header, bh_and_sched_flavors)
{
	expect_silent("memb", "deref-bh-in-bh-reader");
	expect_one_report("memb", "deref-bh-in-vanilla-reader", CHECK_FAILED);
	expect_silent("memb", "deref-sched-in-sched-reader");
	expect_one_report("memb", "deref-sched-outside", CHECK_FAILED);
}

Test(header, srcu_dereference_distinguishes_domains)
{
	expect_silent("memb", "srcu-same-domain");
	expect_one_report("memb", "srcu-other-domain", CHECK_FAILED);
}

Test(header, quick_quiz_2)
{
	expect_silent("memb", "quiz2-each-protection");
	expect_one_report("memb", "quiz2-unprotected", CHECK_FAILED);
}

Test(header, raw_never_warns)
{
	expect_silent("memb", "raw-outside");
}

Test(header, rcu_dereference_protected)
{
	expect_silent("memb", "protected-under-lock");
	expect_one_report("memb", "protected-without-lock", "suspicious rcu_dereference_protected() usage");
}

Test(header, lockdep_assert_held)
{
	expect_silent("memb", "assert-held-ok");
	struct run r = run_target("header_checks", "memb", "assert-held-bug", &preloaded);
	char expected[256];
	snprintf(expected, sizeof(expected), " at tests/targets/header_checks.c:%d\n", target_site_line(&r, 1));
	cr_expect(strstr(r.err, "WARNING: "), "%s", r.err);
	cr_expect(strstr(r.err, expected), "expected '%s' in:\n%s", expected, r.err);
	cr_expect(strstr(r.err, "lockdep_assert_held(&mylock) failed"), "%s", r.err);
	cr_expect(strstr(r.err, " assert_held_bug+0x"), "%s", r.err);
	cr_expect_eq(splat_count(r.err), 1, "%s", r.err);
	run_free(&r);
}

Test(header, rcu_lockdep_warn_fires_when_condition_true_only)
{
	expect_one_report("memb", "lockdep-warn", "config read outside of RCU");
}

Test(header, held_queries_with_and_without_preload)
{
	struct run r = run_target("header_checks", "memb", "held-values", &preloaded);
	cr_expect(strstr(r.out, "held 0 0 0 0 0"), "%s", r.out);
	run_free(&r);
	r = run_target("header_checks", "qsbr", "held-values", &preloaded);
	cr_expect(strstr(r.out, "held 1 0 0 0 0"), "online QSBR thread is a reader: %s", r.out);
	run_free(&r);
	r = run_target("header_checks", "memb", "held-values", &plain);
	cr_expect(strstr(r.out, "held 1 1 1 1 1"), "!CONFIG_PROVE_RCU: %s", r.out);
	run_free(&r);
}

Test(header, without_preload_condition_is_not_evaluated_and_nothing_warns)
{
	struct run r = run_target("header_checks", "memb", "condition-evaluation", &plain);
	cr_expect(strstr(r.out, "evaluations 0"), "%s", r.out);
	run_free(&r);
	r = run_target("header_checks", "memb", "condition-evaluation", &preloaded);
	cr_expect(strstr(r.out, "evaluations 1"), "%s", r.out);
	run_free(&r);
	const char *buggy[] = { "fdtable-shared-unprotected", "deref-outside-reader", "assert-held-bug",
				"lockdep-warn", "srcu-other-domain", NULL };
	for (const char **s = buggy; *s; s++) {
		r = run_target("header_checks", "memb", *s, &plain);
		cr_expect_str_empty(r.err, "[%s] %s", *s, r.err);
		cr_expect_eq(r.exit_code, 0, "[%s]", *s);
		run_free(&r);
	}
}

Test(header, synchronize_srcu_in_own_reader_is_reported_before_the_hang)
{
	struct run_options o = { .preload = 1, .timeout = 3 };
	struct run r = run_target("header_checks", "memb", "synchronize-srcu-in-reader", &o);
	char expected[256];
	snprintf(expected, sizeof(expected),
		 "header_checks.c:%d Illegal synchronize_srcu() in same-type SRCU (or in RCU) read-side critical section!",
		 target_site_line(&r, 1));
	cr_expect(r.timed_out, "liburcu really deadlocks here");
	cr_expect(strstr(r.err, expected), "expected '%s' in:\n%s", expected, r.err);
	run_free(&r);
	expect_silent("memb", "synchronize-srcu-outside");
}

Test(header, synchronize_sched_inside_a_reader_of_the_same_liburcu_flavor)
{
	struct run_options o = { .preload = 1, .timeout = 3 };
	struct run r = run_target("header_checks", "memb", "synchronize-sched-in-bh-reader", &o);
	cr_expect(r.timed_out, "liburcu really deadlocks here");
	cr_expect(has_site_message(&r, "header_checks.c",
				   "Illegal synchronize_sched() in RCU read-side critical section"), "%s", r.err);
	cr_expect_eq(splat_count(r.err), 1, "%s", r.err);
	run_free(&r);
	expect_silent("memb", "synchronize-sched-outside");
}

Test(header, unbalanced_header_flavor_unlock)
{
	struct run r = run_target("header_checks", "memb", "unbalanced-bh-unlock", &preloaded);
	cr_expect(strstr(r.err, "WARNING: bad unlock balance detected!"), "%s", r.err);
	cr_expect(strstr(r.err, "(rcu_read_lock_bh) at:"), "%s", r.err);
	run_free(&r);
}

Test(header, no_pie_and_lgpl_builds)
{
	expect_one_report("memb.nopie", "fdtable-shared-unprotected", CHECK_FAILED);
	expect_silent("memb.nopie", "fdtable-single-owner");
	expect_one_report("memb.lgpl", "deref-outside-reader", CHECK_FAILED);
	expect_silent("memb.lgpl", "deref-in-reader");
	expect_silent("qsbr.lgpl", "deref-in-reader");
	expect_one_report("memb.lgpl", "deref-bh-in-vanilla-reader", CHECK_FAILED);
}

/* cds_list_for_each_entry_rcu() checked as the kernel's
 * list_for_each_entry_rcu(): once per traversal (two entries, one
 * report), legal in a read side or under the condition given as its last
 * argument; a lock held but not named does not count. */
Test(header, rcu_list_traversal_is_checked_once_with_an_optional_condition)
{
	const char *const builds[] = { "memb", "bp", "memb.lgpl", "memb.nopie", NULL };
	for (const char *const *b = builds; *b; b++) {
		expect_one_report(*b, "list-outside-reader", "RCU-list traversed in non-reader section!");
		expect_one_report(*b, "list-under-lock-without-condition", "RCU-list traversed in non-reader section!");
		expect_silent(*b, "list-in-reader");
		expect_silent(*b, "list-under-lock-with-condition");
	}
	/* an online QSBR thread is a reader */
	expect_silent("qsbr", "list-outside-reader");
	/* without the preload: liburcu's own traversal, nothing checked */
	struct run r = run_target("header_checks", "memb", "list-outside-reader", &plain);
	cr_expect_str_empty(r.err, "%s", r.err);
	cr_expect(strstr(r.out, "sum 3\n"), "%s", r.out);
	cr_expect_eq(r.exit_code, 0, "exit status %d, expected %d:\n%s%s", r.exit_code, 0, r.out, r.err);
	run_free(&r);
}

/* One record of a suspicious RCU usage at the scenario's site, saying
 * message: what the tracer recorded, not its text. */
static void expect_one_record(const char *build, const char *scenario, const char *message)
{
	struct run_records rr = run_target_records("header_checks", build, scenario, &preloaded);
	int line = target_site_line(&rr.run, 1);
	expect_records(&rr, NULL, 1);
	const struct record *r = expect_record_at(&rr, "suspicious_rcu", NULL, "header_checks.c", line);
	cr_expect(r && record_message_ends(r, message), "[%s %s] expected '%s' at line %d\n%s", build, scenario,
		  message, line, rr.context);
	cr_expect_eq(rr.run.exit_code, 66, "[%s %s]\n%s", build, scenario, rr.context);
	run_records_free(&rr);
}

static void expect_no_record(const char *build, const char *scenario)
{
	struct run_records rr = run_target_records("header_checks", build, scenario, &preloaded);
	expect_records(&rr, NULL, 0);
	cr_expect_eq(rr.run.exit_code, 0, "[%s %s]\n%s", build, scenario, rr.context);
	cr_expect(strstr(rr.run.out, "site "), "[%s %s] the scenario ran", build, scenario);
	run_records_free(&rr);
}

#define LIST_OUTSIDE "RCU-list traversed in non-reader section!!"

/* The hlist traversals and liburcu's cursor form of the list one: checked
 * once per traversal like cds_list_for_each_entry_rcu() (the macros'
 * loads are not each an rcu_dereference() report), with the optional
 * condition. */
Test(header, hlist_and_list_cursor_traversals_are_checked_once_with_an_optional_condition)
{
	const char *const builds[] = { "memb", "bp", "memb.lgpl", "memb.o2", "bp.o2", "memb.lgpl.o2", NULL };
	for (const char *const *b = builds; *b; b++) {
		expect_one_record(*b, "hlist-outside-reader", LIST_OUTSIDE);
		expect_one_record(*b, "hlist4-outside-reader", LIST_OUTSIDE);
		expect_one_record(*b, "list-cursor-outside-reader", LIST_OUTSIDE);
		expect_no_record(*b, "hlist-in-reader");
		expect_no_record(*b, "hlist-under-lock-with-condition");
	}
	/* QSBR: an online thread is a reader, an offline one is not */
	const char *const qsbr_builds[] = { "qsbr", "qsbr.lgpl", "qsbr.o2", "qsbr.lgpl.o2", NULL };
	for (const char *const *b = qsbr_builds; *b; b++) {
		expect_no_record(*b, "hlist-outside-reader");
		expect_one_record(*b, "hlist-offline", LIST_OUTSIDE);
	}
}

/* The hash table's traversal macros: the call that starts one is checked
 * against the table's flavor (the preload's cds_lfht wrappers), once, at
 * the loop's line; a condition given as the last argument that holds makes
 * it legal, one that does not hold changes nothing. */
Test(header, lfht_traversals_take_an_optional_condition)
{
	const char *const builds[] = { "memb", "signal", "bp", "memb.lgpl", "memb.o2", "bp.lgpl.o2", NULL };
	for (const char *const *b = builds; *b; b++) {
		expect_one_record(*b, "lfht-outside-reader", "cds_lfht_first() outside an RCU read-side critical section!");
		expect_one_record(*b, "lfht-with-false-condition",
				  "cds_lfht_first() outside an RCU read-side critical section!");
		expect_one_record(*b, "lfht-duplicates-outside-reader",
				  "cds_lfht_lookup() outside an RCU read-side critical section!");
		expect_no_record(*b, "lfht-in-reader");
		expect_no_record(*b, "lfht-with-condition");
		expect_no_record(*b, "lfht-duplicates-with-condition");
	}
	const char *const qsbr_builds[] = { "qsbr", "qsbr.lgpl", "qsbr.o2", NULL };
	for (const char *const *b = qsbr_builds; *b; b++) {
		expect_no_record(*b, "lfht-outside-reader");
		expect_no_record(*b, "lfht-with-condition");
		expect_one_record(*b, "lfht-offline", "cds_lfht_first() outside an RCU read-side critical section!");
	}
	/* without the preload: liburcu's own traversal, the condition unused */
	struct run r = run_target("header_checks", "memb", "lfht-with-condition", &plain);
	cr_expect_str_empty(r.err, "%s", r.err);
	cr_expect(strstr(r.out, "sum 3\n"), "%s", r.out);
	run_free(&r);
}
