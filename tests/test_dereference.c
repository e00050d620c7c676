/* Uninstrumented rcu_dereference() (liburcu's rcu_dereference_sym) in
 * unmodified binaries: warns outside read-side sections with no lock held,
 * in every flavor; silent in a reader, under a lock, in an online QSBR
 * thread. */
#include <criterion/criterion.h>
#include "harness.h"
#include "records.h"

static const struct run_options preloaded = { .preload = 1 };

Test(dereference, outside_reader_warns_in_every_flavor)
{
	for (const char *const *f = all_flavors; *f; f++) {
		struct run_records rr = run_target_records("deref_outside_reader", *f, "bug", &preloaded);
		expect_records(&rr, NULL, 1);
		const struct record *r = expect_record_at(&rr, "suspicious_rcu", "read_config_unprotected",
							  "deref_outside_reader.c", 20);
		if (r) {
			cr_expect_str_eq(r->title, "WARNING: suspicious RCU usage", "[%s]\n%s", *f, rr.context);
			expect_message_ends(&rr, r, "deref_outside_reader.c:20 suspicious rcu_dereference() usage!");
			expect_frame(&rr, r, "read_config_unprotected");
			expect_lock_list(&rr, r, "");
		}
		cr_expect(strstr(rr.log, "stack backtrace:"), "[%s]\n%s", *f, rr.context);
		cr_expect_eq(rr.run.exit_code, 66, "[%s] exit code %d", *f, rr.run.exit_code);
		cr_expect(strstr(rr.run.out, "value 42"), "[%s] the program still ran\n%s", *f, rr.context);
		run_records_free(&rr);
	}
}

Test(dereference, qsbr_offline_thread_message_says_offline)
{
	struct run r = run_target("deref_outside_reader", "qsbr", "bug", &preloaded);
	cr_expect(strstr(r.err, "registered with: qsbr (offline)"), "%s", r.err);
	run_free(&r);
}

Test(dereference, inside_reader_is_silent)
{
	for (const char *const *f = all_flavors; *f; f++) {
		struct run_records rr = run_target_records("deref_outside_reader", *f, "ok", &preloaded);
		expect_no_reports(&rr);
		cr_expect(strstr(rr.run.out, "value 42"), "[%s]\n%s", *f, rr.context);
		run_records_free(&rr);
	}
}

Test(dereference, under_update_side_lock_is_silent)
{
	for (const char *const *f = all_flavors; *f; f++) {
		struct run_records rr = run_target_records("deref_outside_reader", *f, "ok-locked", &preloaded);
		expect_no_reports(&rr);
		run_records_free(&rr);
	}
}

Test(dereference, racing_threads_on_one_site_report_once)
{
	struct run_records rr = run_target_records("deref_outside_reader", "memb", "bug-many-threads", &preloaded);
	expect_records(&rr, "suspicious_rcu", 1);
	expect_records(&rr, NULL, 1);
	expect_frame(&rr, record_nth(&rr, NULL, 0), "racing_reader");
	cr_expect_eq(count_of(rr.log, "SUMMARY: lockdep-rcu: 1 report: 1 suspicious RCU usage"), 1, "%s", rr.context);
	run_records_free(&rr);
}

Test(dereference, without_preload_nothing_is_printed)
{
	struct run_options plain = { .preload = 0 };
	struct run r = run_target("deref_outside_reader", "memb", "bug", &plain);
	cr_expect_str_empty(r.err);
	cr_expect_eq(r.exit_code, 0, "exit status %d, expected %d:\n%s%s", r.exit_code, 0, r.out, r.err);
	run_free(&r);
}
