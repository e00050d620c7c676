/* The RCU rows of the core checks in unmodified binaries: grace-period
 * waits inside readers, unregistered readers, QSBR quiescent states inside
 * readers, unbalanced rcu_read_unlock(), late dlopen of liburcu. Each buggy
 * program beside its correct twin, in every flavor the check applies to. */
#include <criterion/criterion.h>
#include "harness.h"

static const struct run_options preloaded = { .preload = 1 };
static const struct run_options preloaded_hang = { .preload = 1, .timeout = 4 };

static void expect_silent(const char *target, const char *flavor, const char *scenario)
{
	struct run r = run_target(target, flavor, scenario, &preloaded);
	cr_expect_str_empty(r.err, "[%s.%s %s] expected no report:\n%s", target, flavor, scenario, r.err);
	cr_expect_eq(r.exit_code, 0, "[%s.%s %s] exit %d", target, flavor, scenario, r.exit_code);
	run_free(&r);
}

Test(rcu_checks, synchronize_rcu_in_reader_reported_before_the_deadlock)
{
	for (const char *const *f = all_flavors; *f; f++) {
		struct run r = run_target("sync_in_reader", *f, "bug-synchronize", &preloaded_hang);
		cr_expect(has_site_message(&r, "sync_in_reader.c",
					   "Illegal synchronize_rcu() in RCU read-side critical section"),
			  "[%s]\n%s", *f, r.err);
		cr_expect(strstr(r.err, " synchronize_inside_reader+0x"), "[%s]\n%s", *f, r.err);
		cr_expect(strstr(r.err, "(rcu_read_lock_"), "[%s] the reader is listed\n%s", *f, r.err);
		cr_expect_eq(splat_count(r.err), 1, "[%s]\n%s", *f, r.err);
		/* QSBR's debug read side does not block grace periods: no hang there */
		if (strcmp(*f, "qsbr"))
			cr_expect(r.timed_out, "[%s] liburcu deadlocks here", *f);
		run_free(&r);
	}
}

Test(rcu_checks, rcu_barrier_in_reader_reported)
{
	for (const char *const *f = all_flavors; *f; f++) {
		struct run r = run_target("sync_in_reader", *f, "bug-barrier", &preloaded_hang);
		cr_expect(has_site_message(&r, "sync_in_reader.c",
					   "Illegal rcu_barrier() in RCU read-side critical section"),
			  "[%s]\n%s", *f, r.err);
		cr_expect_eq(splat_count(r.err), 1, "[%s]\n%s", *f, r.err);
		run_free(&r);
	}
}

Test(rcu_checks, grace_period_waits_outside_readers_are_silent)
{
	for (const char *const *f = all_flavors; *f; f++) {
		expect_silent("sync_in_reader", *f, "ok");
		expect_silent("sync_in_reader", *f, "ok-unregistered-updater");
	}
}

Test(rcu_checks, reader_that_never_registers_is_reported)
{
	for (const char *const *f = registering_flavors; *f; f++) {
		struct run r = run_target("unregistered_reader", *f, "bug", &preloaded);
		char msg[256];
		snprintf(msg, sizeof(msg),
			 "rcu_read_lock() by a thread that never called rcu_register_thread() (liburcu flavor %s)", *f);
		cr_expect(has_site_message(&r, "unregistered_reader.c", msg), "[%s]\n%s", *f, r.err);
		cr_expect(strstr(r.err, " never_registers+0x"), "[%s]\n%s", *f, r.err);
		cr_expect_eq(splat_count(r.err), 1, "[%s]\n%s", *f, r.err);
		cr_expect_eq(r.exit_code, 66, "[%s]", *f);
		run_free(&r);
		expect_silent("unregistered_reader", *f, "ok");
	}
}

Test(rcu_checks, bp_registers_by_itself)
{
	expect_silent("unregistered_reader", "bp", "bug");
}

Test(rcu_checks, reads_before_registering_are_reported_only_when_strict)
{
	expect_silent("unregistered_reader", "memb", "late");
	struct run_options strict = { .preload = 1, .options = "strict_registration=1" };
	struct run r = run_target("unregistered_reader", "memb", "late", &strict);
	cr_expect(strstr(r.err, "by a thread that never called rcu_register_thread()"), "%s", r.err);
	cr_expect(strstr(r.err, "by a thread that called rcu_unregister_thread()"), "%s", r.err);
	cr_expect_eq(splat_count(r.err), 2, "%s", r.err);
	run_free(&r);
}

Test(rcu_checks, offline_qsbr_reader_is_reported)
{
	struct run r = run_target("unregistered_reader", "qsbr", "bug-offline", &preloaded);
	cr_expect(has_site_message(&r, "unregistered_reader.c", "rcu_read_lock() by a QSBR thread that is offline"),
		  "%s", r.err);
	cr_expect_eq(splat_count(r.err), 1, "%s", r.err);
	run_free(&r);
}

Test(rcu_checks, qsbr_quiescent_state_or_offline_in_reader)
{
	struct run r = run_target("qsbr_quiescent_in_reader", "qsbr", "bug-quiescent", &preloaded);
	cr_expect(has_site_message(&r, "qsbr_quiescent_in_reader.c",
				   "rcu_quiescent_state() in RCU read-side critical section"), "%s", r.err);
	cr_expect_eq(splat_count(r.err), 1, "%s", r.err);
	run_free(&r);
	r = run_target("qsbr_quiescent_in_reader", "qsbr", "bug-offline", &preloaded);
	cr_expect(has_site_message(&r, "qsbr_quiescent_in_reader.c",
				   "rcu_thread_offline() in RCU read-side critical section"), "%s", r.err);
	cr_expect_eq(splat_count(r.err), 1, "%s", r.err);
	run_free(&r);
	/* includes synchronize_rcu() from an online thread: liburcu's own
	 * offline/online calls inside it are not the program's */
	expect_silent("qsbr_quiescent_in_reader", "qsbr", "ok");
}

Test(rcu_checks, rcu_read_unlock_at_nesting_zero)
{
	for (const char *const *f = all_flavors; *f; f++) {
		struct run r = run_target("rcu_unlock_balance", *f, "bug", &preloaded);
		char lock[64];
		snprintf(lock, sizeof(lock), "is trying to release lock (rcu_read_lock_%s) at:", *f);
		cr_expect(strstr(r.err, "WARNING: bad unlock balance detected!"), "[%s]\n%s", *f, r.err);
		cr_expect(strstr(r.err, lock), "[%s]\n%s", *f, r.err);
		cr_expect(strstr(r.err, "but there are no more locks to release!"), "[%s]\n%s", *f, r.err);
		cr_expect(strstr(r.err, " unlock_without_lock+0x"), "[%s]\n%s", *f, r.err);
		cr_expect_eq(splat_count(r.err), 1, "[%s]\n%s", *f, r.err);
		run_free(&r);
		expect_silent("rcu_unlock_balance", *f, "ok");
	}
}

Test(rcu_checks, liburcu_dlopened_after_start)
{
	struct run r = run_target("late_dlopen", "memb", "bug", &preloaded);
	cr_expect(has_site_message(&r, "late_dlopen.c", "suspicious rcu_dereference() usage"), "%s", r.err);
	cr_expect(strstr(r.out, "value 7"), "%s", r.out);
	run_free(&r);
	expect_silent("late_dlopen", "memb", "ok");
}
