/* The RCU rows of the core checks in unmodified binaries: grace-period
 * waits inside readers, unregistered readers, QSBR quiescent states inside
 * readers, unbalanced rcu_read_unlock(), late dlopen of liburcu. Each buggy
 * program beside its correct twin, in every flavor the check applies to. */
#include <criterion/criterion.h>
#include "harness.h"
#include "records.h"

static const struct run_options preloaded = { .preload = 1 };
static const struct run_options preloaded_hang = { .preload = 1, .timeout = 4 };

#define SUSPICIOUS "suspicious_rcu"

static void expect_silent(const char *target, const char *flavor, const char *scenario)
{
	struct run_records rr = run_target_records(target, flavor, scenario, &preloaded);
	cr_expect_eq(rr.count, 0, "[%s.%s %s] expected no report\n%s", target, flavor, scenario, rr.context);
	cr_expect_str_empty(rr.log, "[%s.%s %s] expected no report\n%s", target, flavor, scenario, rr.context);
	cr_expect_str_empty(rr.run.err, "[%s.%s %s] expected nothing on stderr\n%s", target, flavor, scenario,
			    rr.context);
	cr_expect_eq(rr.run.exit_code, 0, "[%s.%s %s] exit %d\n%s", target, flavor, scenario, rr.run.exit_code,
		     rr.context);
	run_records_free(&rr);
}

Test(rcu_checks, synchronize_rcu_in_reader_reported_before_the_deadlock)
{
	for (const char *const *f = all_flavors; *f; f++) {
		struct run_records rr = run_target_records("sync_in_reader", *f, "bug-synchronize", &preloaded_hang);
		const struct record *r = expect_site_message(&rr, SUSPICIOUS, "sync_in_reader.c",
				"Illegal synchronize_rcu() in RCU read-side critical section");
		expect_frame(&rr, r, "synchronize_inside_reader");
		char reader[64];
		snprintf(reader, sizeof(reader), "rcu_read_lock_%s", *f);
		expect_lock(&rr, r, "held", reader, "rcu");   /* the reader is listed */
		expect_records(&rr, NULL, 1);
		/* QSBR's debug read side does not block grace periods: no hang there */
		if (strcmp(*f, "qsbr"))
			cr_expect(rr.run.timed_out, "[%s] liburcu deadlocks here", *f);
		run_records_free(&rr);
	}
}

Test(rcu_checks, rcu_barrier_in_reader_reported)
{
	for (const char *const *f = all_flavors; *f; f++) {
		struct run_records rr = run_target_records("sync_in_reader", *f, "bug-barrier", &preloaded_hang);
		expect_site_message(&rr, SUSPICIOUS, "sync_in_reader.c",
				    "Illegal rcu_barrier() in RCU read-side critical section");
		expect_records(&rr, NULL, 1);
		run_records_free(&rr);
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
		struct run_records rr = run_target_records("unregistered_reader", *f, "bug", &preloaded);
		char msg[256];
		snprintf(msg, sizeof(msg),
			 "rcu_read_lock() by a thread that never called rcu_register_thread() (liburcu flavor %s)", *f);
		const struct record *r = expect_site_message(&rr, SUSPICIOUS, "unregistered_reader.c", msg);
		expect_frame(&rr, r, "never_registers");
		expect_records(&rr, NULL, 1);
		cr_expect_eq(rr.run.exit_code, 66, "[%s]\n%s", *f, rr.context);
		run_records_free(&rr);
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
	struct run_records rr = run_target_records("unregistered_reader", "memb", "late", &strict);
	expect_record_saying(&rr, SUSPICIOUS, "by a thread that never called rcu_register_thread()");
	expect_record_saying(&rr, SUSPICIOUS, "by a thread that called rcu_unregister_thread()");
	expect_records(&rr, NULL, 2);
	run_records_free(&rr);
}

Test(rcu_checks, offline_qsbr_reader_is_reported)
{
	struct run_records rr = run_target_records("unregistered_reader", "qsbr", "bug-offline", &preloaded);
	expect_site_message(&rr, SUSPICIOUS, "unregistered_reader.c", "rcu_read_lock() by a QSBR thread that is offline");
	expect_records(&rr, NULL, 1);
	run_records_free(&rr);
}

Test(rcu_checks, qsbr_quiescent_state_or_offline_in_reader)
{
	struct run_records rr = run_target_records("qsbr_quiescent_in_reader", "qsbr", "bug-quiescent", &preloaded);
	expect_site_message(&rr, SUSPICIOUS, "qsbr_quiescent_in_reader.c",
			    "rcu_quiescent_state() in RCU read-side critical section");
	expect_records(&rr, NULL, 1);
	run_records_free(&rr);
	rr = run_target_records("qsbr_quiescent_in_reader", "qsbr", "bug-offline", &preloaded);
	expect_site_message(&rr, SUSPICIOUS, "qsbr_quiescent_in_reader.c",
			    "rcu_thread_offline() in RCU read-side critical section");
	expect_records(&rr, NULL, 1);
	run_records_free(&rr);
	/* includes synchronize_rcu() from an online thread: liburcu's own
	 * offline/online calls inside it are not the program's */
	expect_silent("qsbr_quiescent_in_reader", "qsbr", "ok");
}

Test(rcu_checks, rcu_read_unlock_at_nesting_zero)
{
	for (const char *const *f = all_flavors; *f; f++) {
		struct run_records rr = run_target_records("rcu_unlock_balance", *f, "bug", &preloaded);
		char lock[64], message[128];
		snprintf(lock, sizeof(lock), "rcu_read_lock_%s", *f);
		snprintf(message, sizeof(message), "is trying to release lock (%s) at:", lock);
		const struct record *r = expect_record_at(&rr, "bad_unlock", "unlock_without_lock", NULL, 0);
		if (r)
			cr_expect_str_eq(r->title, "WARNING: bad unlock balance detected!", "[%s]\n%s", *f, rr.context);
		expect_message_ends(&rr, r, message);
		expect_lock(&rr, r, "released", lock, NULL);
		cr_expect(strstr(rr.log, "but there are no more locks to release!"), "[%s]\n%s", *f, rr.context);
		expect_records(&rr, NULL, 1);
		run_records_free(&rr);
		expect_silent("rcu_unlock_balance", *f, "ok");
	}
}

Test(rcu_checks, liburcu_dlopened_after_start)
{
	struct run_records rr = run_target_records("late_dlopen", "memb", "bug", &preloaded);
	expect_site_message(&rr, SUSPICIOUS, "late_dlopen.c", "suspicious rcu_dereference() usage");
	cr_expect(strstr(rr.run.out, "value 7"), "%s", rr.context);
	run_records_free(&rr);
	expect_silent("late_dlopen", "memb", "ok");
}
