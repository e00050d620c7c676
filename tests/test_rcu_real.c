/* The RCU checks where real programs are: read sides inlined by
 * _LGPL_SOURCE (tests/targets/lgpl_inline.c), liburcu's documented rules
 * for deferred reclamation (urcu_rules.c), and liburcu's lock-free hash
 * table (lfht_resize.c), in every flavor where each applies. */
#include <criterion/criterion.h>
#include "harness.h"

#define SUSPICIOUS "WARNING: suspicious RCU usage"
#define CIRCULAR "WARNING: possible circular locking dependency detected"

static struct run run_flavored(const char *target, const char *flavor, const char *scenario, double timeout)
{
	struct run_options o = { .preload = 1, .timeout = timeout };
	return run_target(target, flavor, scenario, &o);
}

/* "<file>:<site line> <message>!" */
static int reports_site(const struct run *r, const char *file, const char *message)
{
	return has_site_message(r, file, message);
}

static void expect_silent(const char *target, const char *flavor, const char *scenario)
{
	struct run r = run_flavored(target, flavor, scenario, 60);
	cr_expect_str_empty(r.err, "[%s %s %s]\n%s", target, flavor, scenario, r.err);
	cr_expect_eq(r.exit_code, 0, "[%s %s %s]", target, flavor, scenario);
	cr_expect(strstr(r.out, "done\n"), "[%s %s %s] %s", target, flavor, scenario, r.out);
	run_free(&r);
}

static const char *const lgpl[] = { "memb.lgpl", "mb.lgpl", "signal.lgpl", "qsbr.lgpl", "bp.lgpl", NULL };
static const char *const lgpl_nesting[] = { "memb.lgpl", "mb.lgpl", "signal.lgpl", "bp.lgpl", NULL };
static const char *const lgpl_registering[] = { "memb.lgpl", "mb.lgpl", "signal.lgpl", NULL };

/* ---- inlined read sides -------------------------------------------------- */

Test(rcu_real, inlined_read_side_then_grace_period_wait_is_illegal)
{
	for (const char *const *f = lgpl_nesting; *f; f++) {
		/* the wait never returns: the report comes before it */
		struct run r = run_flavored("lgpl_inline", *f, "bug-sync-in-reader", 4);
		cr_expect(reports_site(&r, "lgpl_inline.c", "Illegal synchronize_rcu() in RCU read-side critical section"),
			  "[%s]\n%s", *f, r.err);
		cr_expect(strstr(r.err, "(an inlined read side, nesting 1"), "[%s]\n%s", *f, r.err);
		run_free(&r);
		r = run_flavored("lgpl_inline", *f, "bug-barrier-in-reader", 4);
		cr_expect(reports_site(&r, "lgpl_inline.c", "Illegal rcu_barrier() in RCU read-side critical section"),
			  "[%s]\n%s", *f, r.err);
		run_free(&r);
	}
}

Test(rcu_real, lock_inside_inlined_read_side_held_across_grace_period)
{
	for (const char *const *f = lgpl; *f; f++) {
		struct run r = run_flavored("lgpl_inline", *f, "bug-grace-period-deadlock", 20);
		cr_expect_eq(count_of(r.err, CIRCULAR), 1, "[%s]\n%s", *f, r.err);
		cr_expect(strstr(r.err, "rlock(rcu_read_lock_"), "[%s]\n%s", *f, r.err);
		cr_expect(strstr(r.err, "sync(rcu_read_lock_"), "[%s]\n%s", *f, r.err);
		run_free(&r);
	}
}

Test(rcu_real, thread_ending_inside_inlined_read_side)
{
	for (const char *const *f = lgpl_nesting; *f; f++) {
		struct run r = run_flavored("lgpl_inline", *f, "bug-thread-ends-in-reader", 20);
		cr_expect(strstr(r.err, " still has locks held!"), "[%s]\n%s", *f, r.err);
		cr_expect(strstr(r.err, "{rcu}, at: (an inlined read side"), "[%s]\n%s", *f, r.err);
		run_free(&r);
	}
	/* QSBR: a thread that ends online is a thread that ends registered */
	struct run r = run_flavored("lgpl_inline", "qsbr.lgpl", "bug-thread-ends-in-reader", 20);
	cr_expect(strstr(r.err, "ends still registered with liburcu flavor qsbr"), "%s", r.err);
	run_free(&r);
}

Test(rcu_real, unregister_inside_inlined_read_side)
{
	for (const char *const *f = lgpl_registering; *f; f++) {
		struct run r = run_flavored("lgpl_inline", *f, "bug-unregister-in-reader", 20);
		cr_expect(reports_site(&r, "lgpl_inline.c", "rcu_unregister_thread() in RCU read-side critical section"),
			  "[%s]\n%s", *f, r.err);
		run_free(&r);
	}
}

Test(rcu_real, inlined_read_side_of_a_thread_that_never_registered)
{
	for (const char *const *f = lgpl_registering; *f; f++) {
		struct run r = run_flavored("lgpl_inline", *f, "bug-never-registered", 20);
		cr_expect(strstr(r.err, "rcu_read_lock() (inlined) by a thread that never called rcu_register_thread()"),
			  "[%s]\n%s", *f, r.err);
		cr_expect_eq(splat_count(r.err), 1, "[%s]\n%s", *f, r.err);
		run_free(&r);
	}
}

Test(rcu_real, correct_inlined_read_sides_are_silent)
{
	for (const char *const *f = lgpl; *f; f++)
		expect_silent("lgpl_inline", *f, "ok");
}

/* ---- liburcu's rules for deferred reclamation ------------------------------- */

static void expect_rule(const char *flavor, const char *scenario, const char *message, double timeout)
{
	struct run r = run_flavored("urcu_rules", flavor, scenario, timeout);
	cr_expect(reports_site(&r, "urcu_rules.c", message), "[%s %s] expected '%s'\n%s", flavor, scenario, message,
		  r.err);
	cr_expect_eq(count_of(r.err, SUSPICIOUS), 1, "[%s %s] one report, liburcu's inner calls are part of it\n%s",
		     flavor, scenario, r.err);
	run_free(&r);
}

Test(rcu_real, call_rcu_from_an_unregistered_or_offline_thread)
{
	for (const char *const *f = registering_flavors; *f; f++) {
		char msg[160];
		snprintf(msg, sizeof(msg), "call_rcu() by a thread that is not registered with liburcu flavor %s", *f);
		expect_rule(*f, "bug-call-rcu-unregistered", msg, 20);
	}
	expect_rule("qsbr", "bug-call-rcu-offline", "call_rcu() by a QSBR thread that is offline", 20);
	for (const char *const *f = all_flavors; *f; f++)
		expect_silent("urcu_rules", *f, "ok-call-rcu");
	expect_silent("urcu_rules", "bp", "bug-call-rcu-unregistered");   /* bp needs no registration */
}

Test(rcu_real, defer_rcu_in_a_read_side_or_unregistered)
{
	const char *const nesting[] = { "memb", "mb", "signal", "bp", NULL };
	for (const char *const *f = nesting; *f; f++)
		expect_rule(*f, "bug-defer-in-reader", "Illegal defer_rcu() in RCU read-side critical section", 20);
	for (const char *const *f = all_flavors; *f; f++) {
		/* liburcu may crash after the report: it is made before the call */
		expect_rule(*f, "bug-defer-unregistered",
			    "defer_rcu() by a thread that did not call rcu_defer_register_thread()", 20);
		expect_silent("urcu_rules", *f, "ok-defer");
	}
}

Test(rcu_real, rcu_barrier_from_a_call_rcu_callback)
{
	for (const char *const *f = all_flavors; *f; f++)
		expect_rule(*f, "bug-barrier-in-callback", "rcu_barrier() from a call_rcu() worker thread", 5);
}

Test(rcu_real, call_rcu_data_outside_the_conditions_liburcu_states)
{
	const char *const nesting[] = { "memb", "mb", "signal", "bp", NULL };
	for (const char *const *f = nesting; *f; f++) {
		expect_rule(*f, "bug-get-cpu-call-rcu-data-outside-reader",
			    "get_cpu_call_rcu_data() outside an RCU read-side critical section", 20);
		expect_silent("urcu_rules", *f, "ok-get-cpu-call-rcu-data");
	}
	/* liburcu reading its own per-CPU table, under its own lock. */
	for (const char *const *f = all_flavors; *f; f++)
		expect_silent("urcu_rules", *f, "ok-create-all-cpu-call-rcu-data");
	for (const char *const *f = registering_flavors; *f; f++) {
		char msg[160];
		snprintf(msg, sizeof(msg), "get_call_rcu_data() by a thread that is not registered with liburcu flavor %s", *f);
		expect_rule(*f, "bug-get-call-rcu-data-unregistered", msg, 20);
		expect_silent("urcu_rules", *f, "ok-get-call-rcu-data");
	}
}

/* ---- the lock-free hash table ------------------------------------------------- */

Test(rcu_real, hash_table_resizing_itself_is_silent, .timeout = 240)
{
	const char *const builds[] = { "memb", "qsbr", "memb.lgpl", "qsbr.lgpl", NULL };
	for (const char *const *b = builds; *b; b++)
		expect_silent("lfht_resize", *b, "ok-auto-resize");
}

Test(rcu_real, hash_table_resize_from_a_read_side_is_reported_at_the_programs_call, .timeout = 120)
{
	const char *const builds[] = { "memb", "qsbr", "qsbr.lgpl", NULL };
	for (const char *const *b = builds; *b; b++) {
		/* it deadlocks for real: the report comes first */
		struct run r = run_flavored("lfht_resize", *b, "bug-resize-from-reader", 10);
		cr_expect_geq(count_of(r.err, CIRCULAR), 1, "[%s]\n%s", *b, r.err);
		char site[128];
		snprintf(site, sizeof(site), "(_cds_lfht_new+0x");
		cr_expect(strstr(r.err, site), "[%s] liburcu's resize mutex\n%s", *b, r.err);
		snprintf(site, sizeof(site), "at: bug_resize_from_reader+0x");
		cr_expect(strstr(r.err, site), "[%s] the program's call, not liburcu-cds's\n%s", *b, r.err);
		run_free(&r);
	}
}
