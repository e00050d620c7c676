/* The lock-order validator: every inversion is reported once, in the
 * kernel's layout, and every correct order stays silent. */
#include <criterion/criterion.h>
#include "harness.h"
#include "cli_helpers.h"

#define CIRCULAR "WARNING: possible circular locking dependency detected"

static struct run order(const char *flavor, const char *scenario, double timeout)
{
	struct run_options o = { .preload = 1, .timeout = timeout };
	return run_target("lock_order", flavor, scenario, &o);
}

static void expect_circular_n(const char *scenario, int n, const char *expect1, const char *expect2)
{
	struct run r = order("memb", scenario, 10);
	cr_expect_eq(count_of(r.err, CIRCULAR), n, "[%s]\n%s", scenario, r.err);
	cr_expect_eq(splat_count(r.err), n, "[%s]\n%s", scenario, r.err);
	cr_expect(strstr(r.err, "the existing dependency chain (in reverse order) is:"), "[%s]", scenario);
	cr_expect(strstr(r.err, " Possible unsafe locking scenario:"), "[%s]", scenario);
	cr_expect(strstr(r.err, " *** DEADLOCK ***"), "[%s]", scenario);
	if (expect1)
		cr_expect(strstr(r.err, expect1), "[%s] expected '%s'\n%s", scenario, expect1, r.err);
	if (expect2)
		cr_expect(strstr(r.err, expect2), "[%s] expected '%s'\n%s", scenario, expect2, r.err);
	cr_expect_eq(r.exit_code, 66, "[%s]", scenario);
	run_free(&r);
}

static void expect_circular(const char *scenario, const char *expect1, const char *expect2)
{
	expect_circular_n(scenario, 1, expect1, expect2);
}

static void expect_silent(const char *flavor, const char *scenario)
{
	struct run r = order(flavor, scenario, 20);
	cr_expect_str_empty(r.err, "[%s %s]\n%s", flavor, scenario, r.err);
	cr_expect_eq(r.exit_code, 0, "[%s %s]", flavor, scenario);
	run_free(&r);
}

Test(lock_order, abba_one_thread)
{
	expect_circular("abba", "  lock(B);\n                               lock(A);\n                               lock(B);\n  lock(A);",
			"-> #1 (B){lock}:");
}

Test(lock_order, abba_after_the_first_order_was_taken_many_times)
{
	expect_circular("abba-after-many-ab", "-> #1 (B){lock}:", NULL);
	expect_silent("memb", "ab-many");
}

Test(lock_order, abba_two_threads)
{
	expect_circular("abba-two-threads", " ab_thread+0x", NULL);
}

Test(lock_order, longer_cycles)
{
	expect_circular("abbcca", "Chain exists of:\n  A --> B --> C", NULL);
	expect_circular("abbccdda", "Chain exists of:", NULL);
	/* B C D A after A B C D: three pairs taken in both orders */
	expect_circular_n("abcdbcda", 3, NULL, NULL);
	expect_circular("abcdbdda", NULL, NULL);
}

Test(lock_order, every_independent_cycle_of_one_acquisition_is_reported)
{
	expect_circular_n("two-independent-cycles", 2, "(B), at:", "(C), at:");
	expect_circular_n("overlapping-cycles", 1, "  lock(B);\n                               lock(A);", NULL);
}

Test(lock_order, consistent_orders_are_silent)
{
	expect_silent("memb", "abcabc");
	expect_silent("memb", "trylock-reversal");
}

Test(lock_order, rwlocks)
{
	expect_circular("rw-write-read-inversion", "rlock(", NULL);
	expect_circular("rw-write-write", NULL, NULL);
	expect_silent("memb", "rw-recursive-reads");
}

Test(lock_order, condition_wait_retakes_the_mutex)
{
	expect_circular("condvar-inversion", NULL, NULL);
}

Test(lock_order, same_class_instances)
{
	expect_silent("memb", "address-ordered-same-class");
	expect_circular("same-class-inversion", "were taken in the opposite order before", NULL);
}

/* Where the first order was taken is the half of the bug a reader cannot
 * find alone: the report's chain gives it under "-> #1", as the kernel's
 * does. By default the caller of the lock call (pairs among many locks are
 * nearly all new: a stack each would be an unwinding per nesting), with
 * the option that keeps more; with pair_frames, a stack that reaches past
 * the program's own lock function. */
static const char *chain_entry(const char *err, const char *entry)
{
	const char *chain = strstr(err, "the existing dependency chain (in reverse order) is:");
	return chain ? strstr(chain, entry) : NULL;
}

static int in_entry(const char *err, const char *entry, const char *next, const char *text)
{
	const char *from = chain_entry(err, entry), *to = chain_entry(err, next);
	const char *at = from ? strstr(from, text) : NULL;
	return at && to && at < to;
}

/* Two instances taken in both orders, each order under the same global
 * lock (a gate: the orders never overlap): no deadlock, no report (QEMU's
 * AioContext locks under the Big QEMU Lock). One order without the gate is
 * the inversion it is. */
Test(lock_order, same_class_orders_under_one_gate_lock_are_not_an_inversion)
{
	expect_silent("memb", "same-class-orders-under-one-gate");
	struct run r = order("memb", "same-class-orders-one-without-the-gate", 10);
	cr_expect_eq(count_of(r.err, CIRCULAR), 1, "%s", r.err);
	cr_expect(strstr(r.err, "were taken in the opposite order before"), "%s", r.err);
	run_free(&r);
}

/* Two classes the same way: a cycle all of whose edges were only ever taken
 * under one gate lock is not a deadlock (QEMU's AioContext locks under the
 * Big QEMU Lock); one edge without the gate, and it is. */
Test(lock_order, class_orders_under_one_gate_lock_are_not_a_cycle)
{
	expect_silent("memb", "class-orders-under-one-gate");
	struct run r = order("memb", "class-orders-one-without-the-gate", 10);
	cr_expect_eq(count_of(r.err, CIRCULAR), 1, "%s", r.err);
	cr_expect(strstr(r.err, "main_context_lock"), "%s", r.err);
	run_free(&r);
}

Test(lock_order, a_same_class_inversion_names_where_the_other_order_was_taken)
{
	struct run r = order("memb", "same-class-inversion", 10);
	cr_expect(in_entry(r.err, "\n-> #1 (", "\n-> #0 (", " account_lock+0x"), "the lock call's caller\n%s", r.err);
	cr_expect(in_entry(r.err, "\n-> #1 (", "\n-> #0 (", "pair_frames=8 in LOCKDEP_RCU_OPTIONS keeps 8 frames"),
		  "and how to keep more\n%s", r.err);
	cr_expect(in_entry(r.err, "\n-> #0 (", "other info", " same_class_inversion+0x"), "this order\n%s", r.err);
	run_free(&r);

	struct run_options o = { .preload = 1, .timeout = 10, .options = "pair_frames=4" };
	r = run_target("lock_order", "memb", "same-class-inversion", &o);
	cr_expect_eq(count_of(r.err, CIRCULAR), 1, "%s", r.err);
	cr_expect(in_entry(r.err, "\n-> #1 (", "\n-> #0 (", " account_lock+0x"), "%s", r.err);
	cr_expect(in_entry(r.err, "\n-> #1 (", "\n-> #0 (", " lock_x_then_y+0x"), "past the lock function\n%s",
		  r.err);
	cr_expect_not(strstr(r.err, "keeps 8 frames"), "%s", r.err);
	run_free(&r);
}

/* An instance hierarchy of one class with another class between (OpenSSL
 * 3's parent and child provider stores, when the legacy provider loads):
 * the inner instance is taken as nested, as the kernel's annotation would
 * have it, and nothing is reported; the child's own two locks taken the
 * other way round are still an inversion, of instances. */
Test(lock_order, a_class_nested_in_itself_through_another_is_not_a_cycle)
{
	expect_silent("memb", "nested-contexts");
	struct run r = order("memb", "nested-contexts-then-inversion", 10);
	cr_expect_eq(count_of(r.err, CIRCULAR), 1, "%s", r.err);
	cr_expect(strstr(r.err, "were taken in the opposite order before"), "an inversion of instances\n%s", r.err);
	cr_expect_eq(r.exit_code, 66);
	run_free(&r);
}

/* The same nesting twice per pass along a pipeline, many passes: decided
 * alike every time (GStreamer's streaming threads: a false cycle from the
 * third buffer on, when a validated chain skipped the decision). */
Test(lock_order, a_nesting_through_another_class_is_decided_alike_every_time)
{
	expect_silent("memb", "pipeline-buffers");
	struct run r = order("memb", "pipeline-buffers-then-inversion", 10);
	cr_expect_eq(count_of(r.err, CIRCULAR), 1, "%s", r.err);
	cr_expect(strstr(r.err, "decoder_stream_lock"), "%s", r.err);
	cr_expect_eq(r.exit_code, 66);
	run_free(&r);
}

/* Pads nested through another class on one path and directly on another
 * (buffers through an encoder's lock, events past it): the subclass each
 * path gives them differs, and a cycle through such subclasses is judged
 * by instances, not classes (GStreamer jpegenc ! avimux ! filesink: a false
 * cycle). A real inversion of two instances there is still reported. */
Test(lock_order, a_cycle_through_nested_subclasses_is_judged_by_instances)
{
	expect_silent("memb", "muxer-buffers-and-events");
	struct run r = order("memb", "muxer-collect-then-pad", 10);
	cr_expect_eq(count_of(r.err, CIRCULAR), 1, "%s", r.err);
	cr_expect(strstr(r.err, "muxer_collect_lock"), "%s", r.err);
	cr_expect_eq(r.exit_code, 66);
	run_free(&r);
}

Test(lock_order, rcu_grace_period_under_a_lock_readers_take, .timeout = 120)
{
	for (const char *const *f = all_flavors; *f; f++) {
		struct run r = order(*f, "rcu-grace-period-deadlock", 10);
		char rlock[64], sync[64];
		snprintf(rlock, sizeof(rlock), "rlock(rcu_read_lock_%s);", *f);
		snprintf(sync, sizeof(sync), "sync(rcu_read_lock_%s);", *f);
		cr_expect_eq(count_of(r.err, CIRCULAR), 1, "[%s]\n%s", *f, r.err);
		cr_expect(strstr(r.err, rlock), "[%s] expected '%s'\n%s", *f, rlock, r.err);
		cr_expect(strstr(r.err, sync), "[%s] expected '%s'\n%s", *f, sync, r.err);
		run_free(&r);
		expect_silent(*f, "rcu-grace-period-ok");
	}
}

Test(lock_order, report_comes_before_a_real_deadlock)
{
	struct run r = order("memb", "real-deadlock", 4);
	cr_expect(r.timed_out, "the program really deadlocks");
	cr_expect_eq(count_of(r.err, CIRCULAR), 1, "%s", r.err);
	cr_expect_null(strstr(r.out, "not reached"));
	run_free(&r);
}

Test(lock_order, srcu_grace_period_under_a_lock_srcu_readers_take)
{
	struct run_options o = { .preload = 1, .timeout = 10 };
	struct run r = run_target("header_checks", "memb", "srcu-grace-period-deadlock", &o);
	cr_expect_eq(count_of(r.err, CIRCULAR), 1, "%s", r.err);
	cr_expect(strstr(r.err, "rlock(srcu:domain_a);"), "%s", r.err);
	cr_expect(strstr(r.err, "sync(srcu:domain_a);"), "%s", r.err);
	run_free(&r);
	r = run_target("header_checks", "memb", "srcu-grace-period-ok", &o);
	cr_expect_str_empty(r.err, "%s", r.err);
	cr_expect_eq(r.exit_code, 0);
	run_free(&r);
}

/* A C++ program: its classes and frames are named as C++ names
 * ("shop::Account::audit"), not as their symbols ("_ZN4shop7Account5audit
 * ERNS_6LedgerE"), in the report as Helgrind and the sanitizers name them,
 * and suppressions match those names; its correct twin says nothing. */
Test(lock_order, a_cxx_program_reads_in_cxx_names)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s", build_path("targets/cxx_accounts"));
	char *argv[] = { path, "bug-abba", NULL };
	struct run_options o = { .preload = 1, .timeout = 10 };
	struct run r = run_program(argv, &o);
	cr_expect_eq(splat_count(r.err), 1, "%s", r.err);
	cr_expect(strstr(r.err, "WARNING: possible circular locking dependency detected"), "%s", r.err);
	cr_expect(strstr(r.err, "(shop::Account::Account+0x"), "the class by its constructor:\n%s", r.err);
	cr_expect(strstr(r.err, "(shop::Ledger::Ledger+0x"), "%s", r.err);
	cr_expect(strstr(r.err, " shop::Ledger::post+0x"), "the frames:\n%s", r.err);
	cr_expect_not(strstr(r.err, "_ZN"), "no mangled name:\n%s", r.err);
	run_free(&r);

	/* a suppression names the function as reports print it */
	char *dir = cli_temp_dir(), supp[4200], options[4300];
	snprintf(supp, sizeof(supp), "%s/supp.txt", dir);
	FILE *f = fopen(supp, "w");
	cr_assert(f);
	fputs("circular_dependency:shop::Account::audit\n", f);
	fclose(f);
	snprintf(options, sizeof(options), "suppressions=%s", supp);
	struct run_options so = { .preload = 1, .options = options, .timeout = 10 };
	r = run_program(argv, &so);
	cr_expect_eq(splat_count(r.err), 0, "%s", r.err);
	cr_expect(strstr(r.err, "1 suppressed"), "%s", r.err);
	run_free(&r);
	cli_remove_dir(dir);

	argv[1] = "ok";
	r = run_program(argv, &o);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_empty(r.err, "%s", r.err);
	cr_expect_str_eq(r.out, "done\n");
	run_free(&r);
}
