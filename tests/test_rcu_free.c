/* The bug RCU exists to prevent, caught at the free(): an object freed while
 * another thread, inside its read-side critical section, holds a pointer it
 * dereferenced there (tests/targets/rcu_free_while_held.c), in every flavor
 * through liburcu's exported rcu_dereference_sym() and with _LGPL_SOURCE
 * through the header; its correct twins are silent; the command groups,
 * suppresses and records it; stress --perturb finds the racy version. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdlib.h>
#include <unistd.h>
#include "harness.h"
#include "records.h"
#include "cli_helpers.h"

#define TITLE "BUG: RCU-protected object freed while a reader holds it!"
#define TARGET "rcu_free_while_held"
#define FILE_NAME "rcu_free_while_held.c"

static const char *const builds[] = { "memb", "mb", "signal", "qsbr", "bp",
				      "memb.lgpl", "mb.lgpl", "signal.lgpl", "qsbr.lgpl", "bp.lgpl", NULL };

#define KIND "rcu_use_after_free"

static struct run_records run_build(const char *build, const char *scenario)
{
	struct run_options o = { .preload = 1, .timeout = 30 };
	return run_target_records(TARGET, build, scenario, &o);
}

/* "rcu_free_while_held.c:<line of the n-th site>" in the log: what only the
 * text has (the dereference's line). */
static int names_site(const struct run_records *rr, int n)
{
	char where[64];
	snprintf(where, sizeof(where), FILE_NAME ":%d", target_site_line(&rr->run, n));
	return strstr(rr->log, where) != NULL;
}

/* The one record of the run, of KIND, and no other; NULL when not so. */
static const struct record *the_report(const struct run_records *rr, const char *build, const char *scenario)
{
	expect_records(rr, KIND, 1);
	expect_records(rr, NULL, 1);
	const struct record *r = record_nth(rr, KIND, 0);
	if (r)
		cr_expect_str_eq(r->title ? r->title : "", TITLE, "[%s %s]\n%s", build, scenario, rr->context);
	return r;
}

/* The reader's section, of lock `name`, began in function at line (0: any). */
static void expect_reader(const struct run_records *rr, const struct record *r, const char *name,
			  const char *function, int line)
{
	expect_lock(rr, r, "reader", name, "rcu");
	const struct record_lock *l = r ? record_lock(r, "reader", name) : NULL;
	if (l)
		cr_expect(l->has_acquired_at && frame_matches(&l->acquired_at, function, FILE_NAME, line),
			  "the section of %s began in %s at line %d\n%s", name, RECORDS_STR(function), line,
			  rr->context);
}

/* The scenario's reader holds the object the updater (function `updater`)
 * frees: one report, at the free's line (site 3) in the updater, the block
 * freed and the reader's section in its flavor, begun where it began (site
 * 1; a QSBR reader without sections is an online thread, and says so); the
 * text names the reader thread and where it dereferenced the object (site
 * 2), which the record does not carry. */
static void expect_reported(const char *build, const char *scenario, const char *updater)
{
	struct run_records rr = run_build(build, scenario);
	const struct record *r = the_report(&rr, build, scenario);
	cr_expect_eq(rr.run.exit_code, 66, "[%s %s] %d", build, scenario, rr.run.exit_code);
	cr_expect(strstr(rr.run.out, "done\n"), "[%s %s] %s", build, scenario, rr.run.out);
	cr_expect(expect_record_at(&rr, KIND, updater, FILE_NAME, target_site_line(&rr.run, 3)),
		  "[%s %s] the free's line in the updater %s", build, scenario, updater);
	expect_frame_at(&rr, r, updater, FILE_NAME, target_site_line(&rr.run, 3));
	expect_message_ends(&rr, r, " of an RCU-protected object a reader still holds!");
	char flavor[32], list[128];
	snprintf(flavor, sizeof(flavor), "rcu_read_lock_%.*s", (int)strcspn(build, "."), build);
	snprintf(list, sizeof(list), "freed:RCU-protected object{memory} reader:%s{rcu}", flavor);
	expect_lock_list(&rr, r, list);
	const struct record_lock *freed = r ? record_lock(r, "freed", NULL) : NULL;
	cr_expect(freed && freed->address && strtoul(freed->address, NULL, 16), "[%s %s] the block's address\n%s",
		  build, scenario, rr.context);
	if (!strcmp(build, "qsbr")) {
		expect_reader(&rr, r, flavor, "reader_holds_config", 0);
		cr_expect(strstr(rr.log, "online since its last quiescent state"), "[%s %s]\n%s", build, scenario,
			  rr.context);
	} else {
		expect_reader(&rr, r, flavor, "reader_holds_config", target_site_line(&rr.run, 1));
	}
	cr_expect(names_site(&rr, 2), "[%s %s] the dereference's line:\n%s", build, scenario, rr.context);
	cr_expect(strstr(rr.log, " reader/"), "[%s %s] the reader thread:\n%s", build, scenario, rr.context);
	cr_expect(strstr(rr.log, "SUMMARY: lockdep-rcu: 1 report: 1 RCU object freed under a reader\n"),
		  "[%s %s]\n%s", build, scenario, rr.context);
	run_records_free(&rr);
}

static void expect_silent(const char *build, const char *scenario)
{
	struct run_records rr = run_build(build, scenario);
	expect_no_reports(&rr);
	cr_expect(strstr(rr.run.out, "done\n"), "[%s %s] %s", build, scenario, rr.run.out);
	run_records_free(&rr);
}

/* ---- the bug, in every flavor --------------------------------------------- */

Test(rcu_free, free_after_rcu_assign_pointer_while_a_reader_holds_it)
{
	for (const char *const *b = builds; *b; b++)
		expect_reported(*b, "bug-free-after-assign", "update_without_grace_period");
}

Test(rcu_free, free_after_rcu_xchg_pointer_while_a_reader_holds_it)
{
	for (const char *const *b = builds; *b; b++)
		expect_reported(*b, "bug-free-after-xchg", "replace_without_grace_period");
}

Test(rcu_free, realloc_that_moves_and_munmap_free_it_too)
{
	static const char *const some[] = { "memb", "qsbr", "bp", "memb.lgpl", NULL };
	for (const char *const *b = some; *b; b++) {
		expect_reported(*b, "bug-realloc", "grow_without_grace_period");
		expect_reported(*b, "bug-munmap", "unmap_without_grace_period");
	}
	/* the block freed: its address (the record's) and size (the text's) */
	struct run_records rr = run_build("memb", "bug-free-after-assign");
	const struct record *r = the_report(&rr, "memb", "bug-free-after-assign");
	expect_message_ends(&rr, r, "free() of an RCU-protected object a reader still holds!");
	const struct record_lock *freed = r ? record_lock(r, "freed", NULL) : NULL;
	char want[128];
	snprintf(want, sizeof(want), " is freeing memory %016lx-",
		 freed && freed->address ? strtoul(freed->address, NULL, 16) : 0);
	cr_expect(strstr(rr.log, want), "'%s'\n%s", want, rr.context);
	cr_expect(strstr(rr.log, " bytes)"), "%s", rr.context);
	run_records_free(&rr);
	rr = run_build("memb", "bug-munmap");
	r = the_report(&rr, "memb", "bug-munmap");
	expect_message_ends(&rr, r, "munmap() of an RCU-protected object a reader still holds!");
	freed = r ? record_lock(r, "freed", NULL) : NULL;
	cr_expect(freed && freed->address && !(strtoul(freed->address, NULL, 16) & 4095), "a page\n%s", rr.context);
	cr_expect(strstr(rr.log, "(4096 bytes)"), "%s", rr.context);
	run_records_free(&rr);
}

/* Nothing of it is on the reader's stack. */
Test(rcu_free, a_reader_on_the_smallest_stack)
{
	static const char *const some[] = { "memb", "qsbr", "memb.lgpl", NULL };
	for (const char *const *b = some; *b; b++)
		expect_reported(*b, "bug-small-stack-reader", "update_without_grace_period");
}

/* Past 64 dereferences in a section the oldest are forgotten: the last
 * object's free is reported and says so, the first one's is missed. */
Test(rcu_free, past_the_last_64_dereferences_the_oldest_are_forgotten)
{
	static const char *const some[] = { "memb", "qsbr", "bp.lgpl", NULL };
	for (const char *const *b = some; *b; b++) {
		struct run_records rr = run_build(*b, "bug-many-dereferences");
		const struct record *r = the_report(&rr, *b, "bug-many-dereferences");
		expect_record_at(&rr, KIND, "free_the_last", FILE_NAME, target_site_line(&rr.run, 1));
		cr_expect(r && !record_has_frame(r, "free_the_first"), "[%s]\n%s", *b, rr.context);
		cr_expect(strstr(rr.log, "(and 36 earlier dereferences of its section, not remembered: the last 64 are)"),
			  "[%s]\n%s", *b, rr.context);
		run_records_free(&rr);
	}
}

/* The header's flavors built on the program's liburcu flavor: the reader's
 * section begun at site 1, its dereference (the text's) at site 2. */
Test(rcu_free, srcu_and_sched_readers_through_the_header)
{
	static const char *const some[] = { "memb.lgpl", "qsbr.lgpl", "bp.lgpl", NULL };
	for (const char *const *b = some; *b; b++) {
		struct run_records rr = run_build(*b, "bug-srcu");
		const struct record *r = the_report(&rr, *b, "bug-srcu");
		expect_lock_list(&rr, r, "freed:RCU-protected object{memory} reader:srcu_read_lock{rcu}");
		expect_reader(&rr, r, "srcu_read_lock", "srcu_reader", target_site_line(&rr.run, 1));
		cr_expect(names_site(&rr, 2), "[%s]\n%s", *b, rr.context);
		run_records_free(&rr);
		rr = run_build(*b, "bug-sched");
		r = the_report(&rr, *b, "bug-sched");
		expect_lock_list(&rr, r, "freed:RCU-protected object{memory} reader:rcu_read_lock_sched{rcu}");
		expect_reader(&rr, r, "rcu_read_lock_sched", "sched_reader", target_site_line(&rr.run, 1));
		cr_expect(names_site(&rr, 2), "[%s]\n%s", *b, rr.context);
		run_records_free(&rr);
	}
}

/* ---- correct twins ------------------------------------------------------------- */

Test(rcu_free, free_after_a_grace_period_is_silent)
{
	for (const char *const *b = builds; *b; b++)
		expect_silent(*b, "ok-synchronize-rcu");
}

Test(rcu_free, call_rcu_and_defer_rcu_callbacks_are_silent)
{
	for (const char *const *b = builds; *b; b++) {
		expect_silent(*b, "ok-call-rcu");
		expect_silent(*b, "ok-defer-rcu");
	}
}

Test(rcu_free, a_reader_of_an_earlier_finished_section_is_not_a_holder)
{
	for (const char *const *b = builds; *b; b++)
		expect_silent(*b, "ok-earlier-section");
}

Test(rcu_free, memory_no_reader_dereferenced_is_silent)
{
	for (const char *const *b = builds; *b; b++) {
		expect_silent(*b, "ok-not-dereferenced");
		expect_silent(*b, "ok-own-dereference");
	}
}

/* A forked child's memory is its own: the parent's readers are not in it. */
Test(rcu_free, a_forked_child_has_no_readers)
{
	for (const char *const *b = builds; *b; b++)
		expect_silent(*b, "ok-fork-child");
}

/* Readers' sets go back to the pool when they end and are taken again. */
Test(rcu_free, readers_that_ended_hold_nothing)
{
	for (const char *const *b = builds; *b; b++)
		expect_silent(*b, "ok-readers-gone");
}

/* Readers, updaters waiting for grace periods and unrelated frees racing,
 * with perturb widening every window: a racing scan may miss, never invent. */
Test(rcu_free, correct_rcu_under_load_is_silent, .timeout = 120)
{
	static const char *const some[] = { "memb", "qsbr", "bp", "memb.lgpl", NULL };
	for (const char *const *b = some; *b; b++)
		for (int seed = 1; seed <= 2; seed++) {
			char options[64];
			snprintf(options, sizeof(options), "perturb=%d:seed=%d", seed > 1, seed);
			struct run_options o = { .preload = 1, .options = options, .timeout = 60 };
			struct run_records rr = run_target_records(TARGET, *b, "ok-busy-correct", &o);
			expect_no_reports(&rr);
			cr_expect(strstr(rr.run.out, "done\n"), "[%s %s] %s", *b, options, rr.run.out);
			run_records_free(&rr);
		}
}

/* Rule 2: a dereference under a lock may be protected by the lock, whose
 * updater may free without a grace period. */
Test(rcu_free, a_dereference_under_a_lock_is_not_a_hold)
{
	for (const char *const *b = builds; *b; b++)
		expect_silent(*b, "ok-dereference-under-lock");
}

/* ---- the command: grouping, suppression, records ---------------------------- */

Test(rcu_free, the_command_groups_suppresses_and_records_it)
{
	char *dir = cli_temp_dir();
	for (int i = 0; i < 2; i++) {
		char out[4200];
		snprintf(out, sizeof(out), "%s/run%d", dir, i);
		struct run r = cli_env(0, NULL, "run", "-o", out, "--", cli_target(TARGET ".memb"),
				       "bug-free-after-assign", NULL);
		cr_expect_eq(r.exit_code, 66, "%s", r.err);
		run_free(&r);
	}
	struct run r = cli_env(0, NULL, "report", dir, NULL);
	cr_expect_eq(r.exit_code, 1, "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "lockdep-rcu report: 1 bug (2 reports) in 2 of 2 runs"), "%s", r.out);
	cr_expect(strstr(r.out, "\n#1 " TITLE "\n   tests/targets/" FILE_NAME ":"), "%s", r.out);
	run_free(&r);

	r = cli_env(0, NULL, "report", "--json", dir, NULL);
	cr_expect(cli_json_valid(r.out), "%s", r.out);
	cr_expect(strstr(r.out, "\"kind\": \"rcu_use_after_free\""), "%s", r.out);
	run_free(&r);

	char supp[4200];
	snprintf(supp, sizeof(supp), "%s/supp.txt", dir);
	static const char rules[] = "# reviewed\nrcu_use_after_free:update_without_grace_period\n";
	cli_write(supp, rules, sizeof(rules) - 1);
	r = cli_env(0, NULL, "report", "--suppressions", supp, dir, NULL);
	cr_expect_eq(r.exit_code, 0, "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "; 2 suppressed"), "%s", r.out);
	run_free(&r);
	/* the tracer applies the same rule itself */
	char out[4200];
	snprintf(out, sizeof(out), "%s/suppressed", dir);
	r = cli_env(0, NULL, "run", "--suppressions", supp, "-o", out, "--", cli_target(TARGET ".memb"),
		    "bug-free-after-assign", NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	run_free(&r);

	/* the record: its kind, the freed block, the reader */
	struct run_records rr = run_build("memb", "bug-free-after-assign");
	cr_expect(cli_json_valid(rr.jsonl), "%s", rr.context);
	cr_expect_eq(rr.damaged, 0, "%s", rr.context);
	const struct record *rec = the_report(&rr, "memb", "bug-free-after-assign");
	expect_lock(&rr, rec, "freed", "RCU-protected object", "memory");
	expect_lock(&rr, rec, "reader", "rcu_read_lock_memb", "rcu");
	run_records_free(&rr);
	cli_remove_dir(dir);
}

/* ---- stress --perturb finds the racy version ---------------------------------- */

#define PERTURB_RUNS 8

/* The racy scenario frees without a grace period 40 times while a reader
 * takes short sections between longer stretches of other work: perturb's
 * delays at read-side unlock (inside the window between the dereference and
 * the section's end) make a free land there in most runs. */
Test(rcu_free, stress_perturb_finds_the_racy_free_in_most_runs, .timeout = 120)
{
	char runs[16];
	snprintf(runs, sizeof(runs), "%d", PERTURB_RUNS);
	struct run r = cli_env(100, NULL, "stress", "-n", runs, "-j", "2", "--timeout", "30", "--perturb",
			       "--seed", "1400", "--", cli_target(TARGET ".memb"), "racy", NULL);
	cr_expect(strstr(r.out, "lockdep-rcu report: 1 bug ("), "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "\n#1 " TITLE "\n"), "%s", r.out);
	cr_expect(strstr(r.out, "reload_without_grace_period"), "%s", r.out);
	char pattern[64];
	snprintf(pattern, sizeof(pattern), " of %d runs, ", PERTURB_RUNS);
	const char *of = strstr(r.out, pattern);
	cr_assert(of, "%s", r.out);
	const char *in = of;
	while (in > r.out && in[-1] >= '0' && in[-1] <= '9')
		in--;
	int hit = atoi(in);
	cr_log_info("stress --perturb found the racy free in %d of %d runs", hit, PERTURB_RUNS);
	cr_expect(hit * 4 >= PERTURB_RUNS * 3, "in most runs: %d of %d", hit, PERTURB_RUNS);
	const char *kept = strstr(r.err, "logs kept in ");
	char dir[4096];
	if (kept && sscanf(kept, "logs kept in %4095s", dir) == 1)
		cli_remove_dir(strdup(dir));
	run_free(&r);
}
