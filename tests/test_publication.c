/* Checked publication: two threads that publish to one RCU-protected
 * pointer holding no lock in common are reported once, at the second
 * updater's rcu_assign_pointer(), naming the other updater's publication
 * and locks; one lock for both, one updater, a start-up publication, work
 * handed to a thread after the first updater ended, and the atomic
 * exchanges are silent. Unmodified programs (liburcu's exported
 * rcu_set_pointer_sym()) and _LGPL_SOURCE ones (the header), every flavor,
 * and at -O2. Asserted on the records. */
#include <criterion/criterion.h>
#include "harness.h"
#include "records.h"

static const char *const builds[] = { "memb", "mb", "signal", "qsbr", "bp", "memb.lgpl", "qsbr.lgpl", "bp.lgpl",
				      "memb.o2", "qsbr.o2", "memb.lgpl.o2", "bp.lgpl.o2", NULL };

#define MESSAGE "rcu_assign_pointer() by concurrent updaters that share no lock!"

static struct run_records publication_run(const char *build, const char *scenario)
{
	return run_target_records("publication", build, scenario,
				  &(struct run_options){ .preload = 1, .timeout = 60 });
}

/* One report at the second updater's publication (the scenario's second
 * site), whose "published" entry names the pointer and the first updater's
 * publication (the first site); the first updater's locks are recorded as
 * role "updater". */
static void expect_reported(const char *scenario, const char *own_lock, const char *other_lock)
{
	for (const char *const *b = builds; *b; b++) {
		struct run_records rr = publication_run(*b, scenario);
		int first = target_site_line(&rr.run, 1), second = target_site_line(&rr.run, 2);
		expect_records(&rr, NULL, 1);
		const struct record *r = expect_record_at(&rr, "suspicious_rcu", NULL, "publication.c", second);
		cr_expect(r && record_message_ends(r, MESSAGE), "[%s %s]\n%s", *b, scenario, rr.context);
		const struct record_lock *p = r ? record_lock(r, "published", "current_config") : NULL;
		cr_expect(p && p->has_acquired_at && frame_matches(&p->acquired_at, NULL, "publication.c", first),
			  "[%s %s] the other updater's publication, at line %d\n%s", *b, scenario, first, rr.context);
		cr_expect_eq(r ? record_lock_count(r, "updater") : -1, other_lock ? 1 : 0, "[%s %s]\n%s", *b, scenario,
			     rr.context);
		if (other_lock)
			expect_lock(&rr, r, "updater", other_lock, "mutex");
		if (own_lock)
			expect_lock(&rr, r, "held", own_lock, "mutex");
		cr_expect_eq(rr.run.exit_code, 66, "[%s %s]\n%s", *b, scenario, rr.context);
		cr_expect(strstr(rr.run.out, "generation 2\n"), "[%s %s] both published\n%s", *b, scenario, rr.context);
		run_records_free(&rr);
	}
}

static void expect_silent(const char *scenario, const char *result)
{
	for (const char *const *b = builds; *b; b++) {
		struct run_records rr = publication_run(*b, scenario);
		expect_records(&rr, NULL, 0);
		cr_expect_eq(rr.run.exit_code, 0, "[%s %s]\n%s", *b, scenario, rr.context);
		cr_expect(strstr(rr.run.out, result), "[%s %s] expected %s\n%s", *b, scenario, result, rr.context);
		run_records_free(&rr);
	}
}

Test(publication, updaters_with_locks_of_their_own_are_reported_with_both_sides, .timeout = 240)
{
	expect_reported("own-locks", "lock_b", "lock_a");
	expect_silent("one-lock", "generation 2\n");
}

Test(publication, updaters_with_no_lock_or_a_read_lock_are_reported, .timeout = 240)
{
	expect_reported("no-locks", NULL, NULL);
	expect_reported("read-locks", NULL, NULL);
}

Test(publication, one_updater_start_up_and_hand_over_and_exchanges_are_silent, .timeout = 240)
{
	expect_silent("single-updater", "generation 7\n");
	expect_silent("handed-over", "generation 2\n");
	expect_silent("exchanges", "generation 2\n");
}
