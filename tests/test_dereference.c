/* Uninstrumented rcu_dereference() (liburcu's rcu_dereference_sym) in
 * unmodified binaries: warns outside read-side sections with no lock held,
 * in every flavor; silent in a reader, under a lock, in an online QSBR
 * thread. */
#include <criterion/criterion.h>
#include "harness.h"

static const struct run_options preloaded = { .preload = 1 };

Test(dereference, outside_reader_warns_in_every_flavor)
{
	for (const char *const *f = all_flavors; *f; f++) {
		struct run r = run_target("deref_outside_reader", *f, "bug", &preloaded);
		cr_expect_eq(splat_count(r.err), 1, "[%s] one report expected:\n%s", *f, r.err);
		cr_expect(strstr(r.err, "WARNING: suspicious RCU usage"), "[%s] title:\n%s", *f, r.err);
		cr_expect(strstr(r.err, "deref_outside_reader.c:20 suspicious rcu_dereference() usage!"),
			  "[%s] site file:line and message:\n%s", *f, r.err);
		cr_expect(strstr(r.err, " read_config_unprotected+0x"), "[%s] site function in backtrace:\n%s",
			  *f, r.err);
		cr_expect(strstr(r.err, "stack backtrace:"), "[%s]", *f);
		cr_expect(strstr(r.err, "no locks held by "), "[%s] held locks:\n%s", *f, r.err);
		cr_expect_eq(r.exit_code, 66, "[%s] exit code %d", *f, r.exit_code);
		cr_expect(strstr(r.out, "value 42"), "[%s] the program still ran", *f);
		run_free(&r);
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
		struct run r = run_target("deref_outside_reader", *f, "ok", &preloaded);
		cr_expect_str_empty(r.err, "[%s] stderr:\n%s", *f, r.err);
		cr_expect_eq(r.exit_code, 0, "[%s]", *f);
		cr_expect(strstr(r.out, "value 42"), "[%s]", *f);
		run_free(&r);
	}
}

Test(dereference, under_update_side_lock_is_silent)
{
	for (const char *const *f = all_flavors; *f; f++) {
		struct run r = run_target("deref_outside_reader", *f, "ok-locked", &preloaded);
		cr_expect_str_empty(r.err, "[%s] stderr:\n%s", *f, r.err);
		cr_expect_eq(r.exit_code, 0, "[%s]", *f);
		run_free(&r);
	}
}

Test(dereference, racing_threads_on_one_site_report_once)
{
	struct run r = run_target("deref_outside_reader", "memb", "bug-many-threads", &preloaded);
	cr_expect_eq(splat_count(r.err), 1, "%s", r.err);
	cr_expect_eq(count_of(r.err, "SUMMARY: lockdep-rcu: 1 report: 1 suspicious RCU usage"), 1, "%s", r.err);
	cr_expect(strstr(r.err, " racing_reader+0x"), "%s", r.err);
	run_free(&r);
}

Test(dereference, without_preload_nothing_is_printed)
{
	struct run_options plain = { .preload = 0 };
	struct run r = run_target("deref_outside_reader", "memb", "bug", &plain);
	cr_expect_str_empty(r.err);
	cr_expect_eq(r.exit_code, 0);
	run_free(&r);
}
