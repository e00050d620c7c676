/* liburcu's lock-free hash table in unmodified programs: each call its
 * documentation asks to be made in a read-side critical section of the
 * table's flavor (QSBR: online) is reported once, at the program's line,
 * when it is not; the same calls in a read side are silent. Every flavor,
 * and with _LGPL_SOURCE (the read side inlined, seen only in liburcu's
 * own state). */
#include <criterion/criterion.h>
#include "harness.h"
#include "records.h"

#define SUSPICIOUS_KIND "suspicious_rcu"

static const char *const builds[] = { "memb", "mb", "signal", "qsbr", "bp", "memb.lgpl", "qsbr.lgpl", "bp.lgpl",
				      "memb.o2", "qsbr.o2", "bp.o2", "memb.lgpl.o2", "qsbr.lgpl.o2", NULL };

static struct run_records lfht_run(const char *build, const char *scenario)
{
	return run_target_records("lfht_rules", build, scenario,
				  &(struct run_options){ .preload = 1, .timeout = 60 });
}

/* One report per call named in calls[], at the scenario's n-th site, in
 * function, saying "<call> outside an RCU read-side critical section!". */
static void expect_calls_reported(const char *scenario, const char *function, const char *const *calls)
{
	for (const char *const *b = builds; *b; b++) {
		struct run_records rr = lfht_run(*b, scenario);
		cr_expect(strstr(rr.run.out, "done\n"), "[%s %s]\n%s", *b, scenario, rr.context);
		int n = 0;
		for (; calls[n]; n++) {
			int line = target_site_line(&rr.run, n + 1);
			/* at -O2 the helper is inlined: its caller is the frame */
			const char *in = strstr(*b, "o2") ? NULL : function;
			const struct record *r = expect_record_at(&rr, SUSPICIOUS_KIND, in, "lfht_rules.c", line);
			char message[128];
			snprintf(message, sizeof(message), "%s outside an RCU read-side critical section!", calls[n]);
			cr_expect(r && record_message_ends(r, message), "[%s] %s at line %d\n%s", *b, message, line,
				  rr.context);
		}
		expect_records(&rr, NULL, n);
		run_records_free(&rr);
	}
}

static void expect_silent(const char *scenario)
{
	for (const char *const *b = builds; *b; b++) {
		struct run_records rr = lfht_run(*b, scenario);
		cr_expect(strstr(rr.run.out, "done\n"), "[%s %s]\n%s", *b, scenario, rr.context);
		cr_expect_eq(rr.run.exit_code, 0, "[%s %s]\n%s", *b, scenario, rr.context);
		expect_records(&rr, NULL, 0);
		run_records_free(&rr);
	}
}

Test(lfht, a_lookup_outside_a_read_side_is_reported_at_the_programs_call, .timeout = 240)
{
	static const char *const calls[] = { "cds_lfht_lookup()", NULL };
	expect_calls_reported("bug-lookup-outside-reader", "lookup_in", calls);
	expect_silent("ok-lookup-in-reader");
	expect_silent("ok-lookup-under-lock");
}

/* cds_lfht_for_each_entry() goes through cds_lfht_first() and
 * cds_lfht_next(): one report for the loop, at its first call. */
Test(lfht, an_iteration_outside_a_read_side_is_one_report, .timeout = 240)
{
	static const char *const calls[] = { "cds_lfht_first()", NULL };
	expect_calls_reported("bug-for-each-outside-reader", "for_each_in", calls);
	expect_silent("ok-for-each-in-reader");
}

Test(lfht, additions_and_removals_outside_a_read_side_are_reported, .timeout = 240)
{
	static const char *const calls[] = { "cds_lfht_add()", "cds_lfht_del()", NULL };
	expect_calls_reported("bug-add-del-outside-reader", "add_and_del_in", calls);
	expect_silent("ok-add-del-in-reader");
}

/* cds_lfht_del() and free() at once, while another thread holds the entry
 * it looked up: the entry the lookup handed the reader counts as
 * dereferenced in its read side, so the free is reported where it is made.
 * Not with the read side inlined (_LGPL_SOURCE), nor for QSBR, whose
 * protection ends at quiescent states _LGPL_SOURCE inlines: an end the
 * tracer may not see, so what the reader holds is not kept. */
Test(lfht, a_removed_entry_freed_while_a_reader_holds_it_is_reported, .timeout = 240)
{
	static const char *const held_builds[] = { "memb", "mb", "signal", "bp", "memb.o2", "bp.o2", NULL };
	for (const char *const *b = held_builds; *b; b++) {
		struct run_records rr = lfht_run(*b, "bug-del-then-free-while-held");
		cr_expect(strstr(rr.run.out, "done\n") && strstr(rr.run.out, "reader holds 1\n"), "[%s]\n%s", *b,
			  rr.context);
		expect_records(&rr, "rcu_use_after_free", 1);
		expect_records(&rr, NULL, 1);
		int line = target_site_line(&rr.run, 2);
		expect_record_at(&rr, "rcu_use_after_free", strstr(*b, "o2") ? NULL : "remove_while_held", "lfht_rules.c",
				 line);
		run_records_free(&rr);

		rr = lfht_run(*b, "ok-del-then-call-rcu");
		cr_expect(strstr(rr.run.out, "done\n"), "[%s]\n%s", *b, rr.context);
		cr_expect_eq(rr.run.exit_code, 0, "[%s]\n%s", *b, rr.context);
		expect_records(&rr, NULL, 0);
		run_records_free(&rr);
	}
}
