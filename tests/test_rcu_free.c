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
#include "cli_helpers.h"

#define TITLE "BUG: RCU-protected object freed while a reader holds it!"
#define TARGET "rcu_free_while_held"
#define FILE_NAME "rcu_free_while_held.c"

static const char *const builds[] = { "memb", "mb", "signal", "qsbr", "bp",
				      "memb.lgpl", "mb.lgpl", "signal.lgpl", "qsbr.lgpl", "bp.lgpl", NULL };

static struct run run_build(const char *build, const char *scenario)
{
	struct run_options o = { .preload = 1, .timeout = 30 };
	return run_target(TARGET, build, scenario, &o);
}

/* "rcu_free_while_held.c:<line of the n-th site>" */
static int names_site(const struct run *r, int n)
{
	char where[64];
	snprintf(where, sizeof(where), FILE_NAME ":%d", target_site_line(r, n));
	return strstr(r->err, where) != NULL;
}

/* The scenario's reader holds the object the updater (function `updater`)
 * frees: one report, at the free's line (site 3), naming the updater, the
 * reader thread, its flavor, where it dereferenced the object (site 2) and
 * where its section began (site 1; a QSBR reader without sections is an
 * online thread, and says so). */
static void expect_reported(const char *build, const char *scenario, const char *updater)
{
	struct run r = run_build(build, scenario);
	cr_expect_eq(count_of(r.err, TITLE), 1, "[%s %s]\n%s", build, scenario, r.err);
	cr_expect_eq(splat_count(r.err), 1, "[%s %s]\n%s", build, scenario, r.err);
	cr_expect_eq(r.exit_code, 66, "[%s %s] %d", build, scenario, r.exit_code);
	cr_expect(strstr(r.out, "done\n"), "[%s %s] %s", build, scenario, r.out);
	cr_expect(strstr(r.err, updater), "[%s %s] names the updater %s:\n%s", build, scenario, updater, r.err);
	cr_expect(names_site(&r, 3), "[%s %s] the free's line:\n%s\n%s", build, scenario, r.out, r.err);
	cr_expect(names_site(&r, 2), "[%s %s] the dereference's line:\n%s\n%s", build, scenario, r.out, r.err);
	cr_expect(strstr(r.err, " reader/"), "[%s %s] the reader thread:\n%s", build, scenario, r.err);
	char flavor[32];
	snprintf(flavor, sizeof(flavor), "(rcu_read_lock_%.*s){rcu}", (int)strcspn(build, "."), build);
	cr_expect(strstr(r.err, flavor), "[%s %s] the flavor %s:\n%s", build, scenario, flavor, r.err);
	if (!strcmp(build, "qsbr"))
		cr_expect(strstr(r.err, "online since its last quiescent state"), "[%s %s]\n%s", build, scenario,
			  r.err);
	else
		cr_expect(names_site(&r, 1), "[%s %s] where the section began:\n%s\n%s", build, scenario, r.out,
			  r.err);
	cr_expect(strstr(r.err, "SUMMARY: lockdep-rcu: 1 report: 1 RCU object freed under a reader\n"),
		  "[%s %s]\n%s", build, scenario, r.err);
	run_free(&r);
}

static void expect_silent(const char *build, const char *scenario)
{
	struct run r = run_build(build, scenario);
	cr_expect_str_empty(r.err, "[%s %s]\n%s", build, scenario, r.err);
	cr_expect_eq(r.exit_code, 0, "[%s %s]", build, scenario);
	cr_expect(strstr(r.out, "done\n"), "[%s %s] %s", build, scenario, r.out);
	run_free(&r);
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
	/* the block freed: its address and size */
	struct run r = run_build("memb", "bug-free-after-assign");
	cr_expect(strstr(r.err, " is freeing memory "), "%s", r.err);
	cr_expect(strstr(r.err, " bytes)"), "%s", r.err);
	run_free(&r);
	r = run_build("memb", "bug-munmap");
	cr_expect(strstr(r.err, "(4096 bytes)"), "%s", r.err);
	run_free(&r);
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
		struct run r = run_build(*b, "bug-many-dereferences");
		cr_expect_eq(count_of(r.err, TITLE), 1, "[%s]\n%s", *b, r.err);
		cr_expect(strstr(r.err, "free_the_last"), "[%s]\n%s", *b, r.err);
		cr_expect_null(strstr(r.err, "free_the_first"), "[%s]\n%s", *b, r.err);
		cr_expect(names_site(&r, 1), "[%s]\n%s\n%s", *b, r.out, r.err);
		cr_expect(strstr(r.err, "(and 36 earlier dereferences of its section, not remembered: the last 64 are)"),
			  "[%s]\n%s", *b, r.err);
		run_free(&r);
	}
}

/* The header's flavors built on the program's liburcu flavor. */
Test(rcu_free, srcu_and_sched_readers_through_the_header)
{
	static const char *const some[] = { "memb.lgpl", "qsbr.lgpl", "bp.lgpl", NULL };
	for (const char *const *b = some; *b; b++) {
		struct run r = run_build(*b, "bug-srcu");
		cr_expect_eq(count_of(r.err, TITLE), 1, "[%s]\n%s", *b, r.err);
		cr_expect(strstr(r.err, "(srcu_read_lock){rcu}"), "[%s]\n%s", *b, r.err);
		cr_expect(names_site(&r, 1) && names_site(&r, 2), "[%s]\n%s\n%s", *b, r.out, r.err);
		run_free(&r);
		r = run_build(*b, "bug-sched");
		cr_expect_eq(count_of(r.err, TITLE), 1, "[%s]\n%s", *b, r.err);
		cr_expect(strstr(r.err, "(rcu_read_lock_sched){rcu}"), "[%s]\n%s", *b, r.err);
		cr_expect(names_site(&r, 1) && names_site(&r, 2), "[%s]\n%s\n%s", *b, r.out, r.err);
		run_free(&r);
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
			struct run r = run_target(TARGET, *b, "ok-busy-correct", &o);
			cr_expect_str_empty(r.err, "[%s %s]\n%s", *b, options, r.err);
			cr_expect_eq(r.exit_code, 0, "[%s %s]", *b, options);
			cr_expect(strstr(r.out, "done\n"), "[%s %s] %s", *b, options, r.out);
			run_free(&r);
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
	char options[4300], path[4300];
	snprintf(options, sizeof(options), "log_path=%s/log", dir);
	struct run_options o = { .preload = 1, .options = options, .timeout = 30 };
	r = run_target(TARGET, "memb", "bug-free-after-assign", &o);
	run_free(&r);
	snprintf(path, sizeof(path), "%s/log.jsonl", dir);
	char *records = cli_read(path);
	cr_assert(records, "no records in %s", path);
	cr_expect(cli_json_valid(records), "%s", records);
	cr_expect(strstr(records, "\"kind\":\"rcu_use_after_free\""), "%s", records);
	cr_expect(strstr(records, "\"role\":\"freed\""), "%s", records);
	cr_expect(strstr(records, "\"role\":\"reader\",\"name\":\"rcu_read_lock_memb\""), "%s", records);
	free(records);
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
