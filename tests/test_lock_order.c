/* The lock-order validator: every inversion is reported once, in the
 * kernel's layout, and every correct order stays silent. */
#include <criterion/criterion.h>
#include "harness.h"
#include "cli_helpers.h"
#include "records.h"

#define CIRCULAR "WARNING: possible circular locking dependency detected"

static struct run order(const char *flavor, const char *scenario, double timeout)
{
	struct run_options o = { .preload = 1, .timeout = timeout };
	return run_target("lock_order", flavor, scenario, &o);
}

#define CIRCULAR_KIND "circular_dependency"

/* n circular-dependency reports and nothing else, in the kernel's layout,
 * exit status 66; returned for its records to be read (run_records_free). */
static struct run_records circular_n(const char *scenario, int n)
{
	struct run_options o = { .preload = 1, .timeout = 10 };
	struct run_records rr = run_target_records("lock_order", "memb", scenario, &o);
	expect_records(&rr, CIRCULAR_KIND, n);
	expect_records(&rr, NULL, n);
	cr_expect_eq(count_of(rr.log, CIRCULAR), n, "[%s]\n%s", scenario, rr.context);
	cr_expect(strstr(rr.log, "the existing dependency chain (in reverse order) is:"), "[%s]\n%s", scenario,
		  rr.context);
	cr_expect(strstr(rr.log, " Possible unsafe locking scenario:"), "[%s]\n%s", scenario, rr.context);
	cr_expect(strstr(rr.log, " *** DEADLOCK ***"), "[%s]\n%s", scenario, rr.context);
	cr_expect_eq(rr.run.exit_code, 66, "[%s]\n%s", scenario, rr.context);
	return rr;
}

static struct run_records circular(const char *scenario)
{
	return circular_n(scenario, 1);
}

/* The first record of the run (what a one-report run is about). */
static const struct record *first(const struct run_records *rr)
{
	return record_nth(rr, CIRCULAR_KIND, 0);
}

/* Some record of the run names a lock of that role and name. */
static int any_record_has_lock(const struct run_records *rr, const char *role, const char *name)
{
	for (size_t i = 0; i < rr->count; i++)
		if (record_lock(&rr->records[i], role, name))
			return 1;
	return 0;
}

static void expect_silent(const char *flavor, const char *scenario)
{
	struct run_options o = { .preload = 1, .timeout = 20 };
	struct run_records rr = run_target_records("lock_order", flavor, scenario, &o);
	cr_expect_eq(rr.count, 0, "[%s %s] expected no report\n%s", flavor, scenario, rr.context);
	cr_expect_str_empty(rr.log, "[%s %s]\n%s", flavor, scenario, rr.context);
	cr_expect_str_empty(rr.run.err, "[%s %s]\n%s", flavor, scenario, rr.context);
	cr_expect_eq(rr.run.exit_code, 0, "[%s %s]\n%s", flavor, scenario, rr.context);
	run_records_free(&rr);
}

Test(lock_order, abba_one_thread)
{
	struct run_records rr = circular("abba");
	const struct record *r = expect_record_at(&rr, CIRCULAR_KIND, "nest", "lock_order.c", 0);
	expect_lock_list(&rr, r, "acquiring:A{lock} holding:B{lock} chain:A{lock} chain:B{lock} held:B{mutex}");
	expect_frame(&rr, r, "abba");
	/* the scenario's layout */
	const char *scenario = "  lock(B);\n                               lock(A);\n"
			       "                               lock(B);\n  lock(A);";
	cr_expect(strstr(rr.log, scenario), "expected '%s'\n%s", scenario, rr.context);
	run_records_free(&rr);
}

Test(lock_order, abba_after_the_first_order_was_taken_many_times)
{
	struct run_records rr = circular("abba-after-many-ab");
	expect_lock(&rr, first(&rr), "acquiring", "A", "lock");
	expect_lock(&rr, first(&rr), "holding", "B", "lock");
	expect_lock(&rr, first(&rr), "chain", "B", "lock");
	run_records_free(&rr);
	expect_silent("memb", "ab-many");
}

Test(lock_order, abba_two_threads)
{
	struct run_records rr = circular("abba-two-threads");
	expect_lock(&rr, first(&rr), "acquiring", "A", "lock");
	expect_lock(&rr, first(&rr), "holding", "B", "lock");
	/* where the other thread took the first order: the chain's stack,
	 * which the record does not carry */
	cr_expect(strstr(rr.log, " ab_thread+0x"), "%s", rr.context);
	run_records_free(&rr);
}

Test(lock_order, longer_cycles)
{
	struct run_records rr = circular("abbcca");
	expect_lock_list(&rr, first(&rr), "acquiring:A{lock} holding:C{lock} chain:A{lock} chain:B{lock} chain:C{lock} "
					  "held:C{mutex}");
	cr_expect(strstr(rr.log, "Chain exists of:\n  A --> B --> C"), "%s", rr.context);
	run_records_free(&rr);
	rr = circular("abbccdda");
	const struct record *r = first(&rr);
	if (r)
		cr_expect_eq(record_lock_count(r, "chain"), 4, "A B C D\n%s", rr.context);
	cr_expect(strstr(rr.log, "Chain exists of:"), "%s", rr.context);
	run_records_free(&rr);
	/* B C D A after A B C D: three pairs taken in both orders */
	rr = circular_n("abcdbcda", 3);
	run_records_free(&rr);
	rr = circular("abcdbdda");
	run_records_free(&rr);
}

Test(lock_order, every_independent_cycle_of_one_acquisition_is_reported)
{
	struct run_records rr = circular_n("two-independent-cycles", 2);
	cr_expect(any_record_has_lock(&rr, "holding", "B"), "%s", rr.context);
	cr_expect(any_record_has_lock(&rr, "holding", "C"), "%s", rr.context);
	for (int i = 0; i < 2; i++)
		expect_lock(&rr, record_nth(&rr, CIRCULAR_KIND, i), "acquiring", "A", "lock");
	run_records_free(&rr);
	/* CPU0 holds B, CPU1 takes A */
	rr = circular("overlapping-cycles");
	expect_lock(&rr, first(&rr), "holding", "B", "lock");
	expect_lock(&rr, first(&rr), "acquiring", "A", "lock");
	run_records_free(&rr);
}

Test(lock_order, consistent_orders_are_silent)
{
	expect_silent("memb", "abcabc");
	expect_silent("memb", "trylock-reversal");
}

Test(lock_order, rwlocks)
{
	struct run_records rr = circular("rw-write-read-inversion");
	expect_lock(&rr, first(&rr), "acquiring", "X", "rlock");
	cr_expect(strstr(rr.log, "rlock("), "%s", rr.context);
	run_records_free(&rr);
	rr = circular("rw-write-write");
	run_records_free(&rr);
	expect_silent("memb", "rw-recursive-reads");
}

Test(lock_order, condition_wait_retakes_the_mutex)
{
	struct run_records rr = circular("condvar-inversion");
	expect_record_at(&rr, CIRCULAR_KIND, "condvar_inversion", "lock_order.c", 0);
	run_records_free(&rr);
}

Test(lock_order, same_class_instances)
{
	expect_silent("memb", "address-ordered-same-class");
	struct run_records rr = circular("same-class-inversion");
	cr_expect(strstr(rr.log, "were taken in the opposite order before"), "%s", rr.context);
	run_records_free(&rr);
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
	struct run_records rr = run_target_records("lock_order", "memb", "same-class-orders-one-without-the-gate",
						   &(struct run_options){ .preload = 1, .timeout = 10 });
	expect_records(&rr, CIRCULAR_KIND, 1);
	cr_expect(strstr(rr.log, "were taken in the opposite order before"), "%s", rr.context);
	run_records_free(&rr);
}

/* Two classes the same way: a cycle all of whose edges were only ever taken
 * under one gate lock is not a deadlock (QEMU's AioContext locks under the
 * Big QEMU Lock); one edge without the gate, and it is. */
Test(lock_order, class_orders_under_one_gate_lock_are_not_a_cycle)
{
	expect_silent("memb", "class-orders-under-one-gate");
	struct run_records rr = run_target_records("lock_order", "memb", "class-orders-one-without-the-gate",
						   &(struct run_options){ .preload = 1, .timeout = 10 });
	expect_records(&rr, CIRCULAR_KIND, 1);
	const struct record *r = expect_record_at(&rr, CIRCULAR_KIND, "classes_other_order", "lock_order.c", 0);
	expect_lock(&rr, r, "acquiring", "main_context_lock", "lock");
	expect_lock(&rr, r, "holding", "io_context_lock", "lock");
	run_records_free(&rr);
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
	struct run_records rr = run_target_records("lock_order", "memb", "nested-contexts-then-inversion",
						   &(struct run_options){ .preload = 1, .timeout = 10 });
	expect_records(&rr, CIRCULAR_KIND, 1);
	expect_record_at(&rr, CIRCULAR_KIND, "nested_contexts_then_inversion", "lock_order.c", 0);
	cr_expect(strstr(rr.log, "were taken in the opposite order before"), "an inversion of instances\n%s",
		  rr.context);
	cr_expect_eq(rr.run.exit_code, 66, "%s", rr.context);
	run_records_free(&rr);
}

/* The same nesting twice per pass along a pipeline, many passes: decided
 * alike every time (GStreamer's streaming threads: a false cycle from the
 * third buffer on, when a validated chain skipped the decision). */
Test(lock_order, a_nesting_through_another_class_is_decided_alike_every_time)
{
	expect_silent("memb", "pipeline-buffers");
	struct run_records rr = run_target_records("lock_order", "memb", "pipeline-buffers-then-inversion",
						   &(struct run_options){ .preload = 1, .timeout = 10 });
	expect_records(&rr, CIRCULAR_KIND, 1);
	expect_lock(&rr, first(&rr), "acquiring", "decoder_stream_lock", "lock");
	cr_expect_eq(rr.run.exit_code, 66, "%s", rr.context);
	run_records_free(&rr);
}

/* Pads nested through another class on one path and directly on another
 * (buffers through an encoder's lock, events past it): the subclass each
 * path gives them differs, and a cycle through such subclasses is judged
 * by instances, not classes (GStreamer jpegenc ! avimux ! filesink: a false
 * cycle). A real inversion of two instances there is still reported. */
Test(lock_order, a_cycle_through_nested_subclasses_is_judged_by_instances)
{
	expect_silent("memb", "muxer-buffers-and-events");
	struct run_records rr = run_target_records("lock_order", "memb", "muxer-collect-then-pad",
						   &(struct run_options){ .preload = 1, .timeout = 10 });
	expect_records(&rr, CIRCULAR_KIND, 1);
	expect_lock(&rr, first(&rr), "holding", "muxer_collect_lock", "lock");
	cr_expect_eq(rr.run.exit_code, 66, "%s", rr.context);
	run_records_free(&rr);
}

Test(lock_order, rcu_grace_period_under_a_lock_readers_take, .timeout = 120)
{
	for (const char *const *f = all_flavors; *f; f++) {
		struct run_records rr = run_target_records("lock_order", *f, "rcu-grace-period-deadlock",
							   &(struct run_options){ .preload = 1, .timeout = 10 });
		char reader[64], rlock[96];
		snprintf(reader, sizeof(reader), "rcu_read_lock_%s", *f);
		snprintf(rlock, sizeof(rlock), "rlock(%s);", reader);
		expect_records(&rr, CIRCULAR_KIND, 1);
		const struct record *r = expect_record_at(&rr, CIRCULAR_KIND, "rcu_grace_period_deadlock",
							  "lock_order.c", 0);
		/* the grace period waited for under the lock, sync(rcu_read_lock_X) */
		expect_lock(&rr, r, "acquiring", reader, "sync");
		expect_lock(&rr, r, "holding", "config_lock", "lock");
		/* the reader's side is said by the scenario only */
		cr_expect(strstr(rr.log, rlock), "[%s] expected '%s'\n%s", *f, rlock, rr.context);
		run_records_free(&rr);
		expect_silent(*f, "rcu-grace-period-ok");
	}
}

Test(lock_order, report_comes_before_a_real_deadlock)
{
	struct run_records rr = run_target_records("lock_order", "memb", "real-deadlock",
						   &(struct run_options){ .preload = 1, .timeout = 4 });
	cr_expect(rr.run.timed_out, "the program really deadlocks\n%s", rr.context);
	expect_records(&rr, CIRCULAR_KIND, 1);
	cr_expect_null(strstr(rr.run.out, "not reached"), "%s", rr.context);
	run_records_free(&rr);
}

Test(lock_order, srcu_grace_period_under_a_lock_srcu_readers_take)
{
	struct run_options o = { .preload = 1, .timeout = 10 };
	struct run_records rr = run_target_records("header_checks", "memb", "srcu-grace-period-deadlock", &o);
	expect_records(&rr, CIRCULAR_KIND, 1);
	const struct record *r = expect_record_at(&rr, CIRCULAR_KIND, "srcu_grace_period_deadlock", "header_checks.c", 0);
	expect_lock(&rr, r, "acquiring", "srcu:domain_a", "sync");
	cr_expect(strstr(rr.log, "rlock(srcu:domain_a);"), "%s", rr.context);
	run_records_free(&rr);
	rr = run_target_records("header_checks", "memb", "srcu-grace-period-ok", &o);
	expect_no_reports(&rr);
	run_records_free(&rr);
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
	struct run_records rr = run_program_records(argv, &o);
	expect_records(&rr, NULL, 1);
	expect_records(&rr, CIRCULAR_KIND, 1);
	/* the classes by their constructors, the frames by their C++ names */
	const struct record *audit = expect_record_at(&rr, CIRCULAR_KIND, "shop::Account::audit", "cxx_accounts.cc", 0);
	expect_lock(&rr, audit, "holding", "shop::Account::Account+0x*", "lock");
	expect_lock(&rr, audit, "acquiring", "shop::Ledger::Ledger+0x*", "lock");
	/* a frame of the chain's stack, which the record does not carry */
	cr_expect(strstr(rr.log, " shop::Ledger::post+0x"), "the frames:\n%s", rr.context);
	cr_expect_not(strstr(rr.log, "_ZN"), "no mangled name:\n%s", rr.context);
	cr_expect_not(strstr(rr.jsonl, "_ZN"), "no mangled name:\n%s", rr.context);
	run_records_free(&rr);
	struct run r;

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

/* The fast paths (the per-thread acquisition cache, a mutex taken on one
 * other) are specialisations of the general checked path, which
 * fast_paths=0 runs for every acquisition: on the same sequences of
 * nestings they must report the same bugs, each at the same site with the
 * same locks in the same roles. */
static char *reports_in_short(const struct run_records *rr)
{
	size_t size = 256 * (rr->count + 1), len = 0;
	char *out = calloc(1, size);
	cr_assert(out);
	for (size_t i = 0; i < rr->count; i++) {
		const struct record *r = &rr->records[i];
		char locks[2048], message[256];
		/* the message names the thread: its tid in digits, not compared */
		size_t m = 0;
		for (const char *c = r->message ? r->message : ""; *c && m + 2 < sizeof(message); c++)
			if (*c < '0' || *c > '9')
				message[m++] = *c;
			else if (!m || message[m - 1] != '#')
				message[m++] = '#';
		message[m] = 0;
		len += (size_t)snprintf(out + len, size - len, "%s at %s:%d {%s} %s\n", r->kind,
					r->site.function ? r->site.function : "?", r->site.line,
					record_lock_list(r, locks, sizeof(locks)), message);
	}
	return out;
}

Test(lock_order, fast_paths_report_what_the_general_path_reports, .timeout = 120)
{
	/* Each scenario with the fewest inversions it must find (the ordered
	 * twin: none). */
	static const struct {
		const char *name;
		int inversions;
	} cases[] = { { "seed-1", 10 }, { "seed-2", 10 }, { "seed-3", 10 }, { "ordered", 0 },
		      { "cached-then-watched", 1 } };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *scenario = cases[i].name;
		struct run_records fast = run_target_records("nested_sequences", "memb", scenario,
							     &(struct run_options){ .preload = 1, .timeout = 30 });
		struct run_records general = run_target_records(
			"nested_sequences", "memb", scenario,
			&(struct run_options){ .preload = 1, .options = "fast_paths=0", .timeout = 30 });
		cr_expect(strstr(fast.run.out, "done") && strstr(general.run.out, "done"), "%s\n%s", fast.context,
			  general.context);
		if (cases[i].inversions)
			cr_expect_geq(records_of_kind(&fast, CIRCULAR_KIND), cases[i].inversions,
				      "%s: inversions to compare\n%s", scenario, fast.context);
		else
			expect_records(&fast, NULL, 0);
		char *a = reports_in_short(&fast), *b = reports_in_short(&general);
		cr_expect_str_eq(a, b, "%s: fast paths\n%s---- general path\n%s", scenario, a, b);
		free(a), free(b);
		run_records_free(&fast), run_records_free(&general);
	}
}
