/* Idioms of real programs that look like lock bugs and are not (each was a
 * false report on a real program), beside the bugs they must not hide:
 * tests/targets/lock_idioms.c. */
#include <criterion/criterion.h>
#include "harness.h"

static struct run idiom(const char *scenario)
{
	struct run_options o = { .preload = 1, .timeout = 30 };
	return run_target("lock_idioms", "memb", scenario, &o);
}

static void expect_silent(const char *scenario, const char *out)
{
	struct run r = idiom(scenario);
	cr_expect_str_empty(r.err, "[%s]\n%s", scenario, r.err);
	cr_expect_eq(r.exit_code, 0, "[%s]", scenario);
	cr_expect(strstr(r.out, out), "[%s] expected '%s' in:\n%s", scenario, out, r.out);
	run_free(&r);
}

Test(lock_idioms, fork_child_inherits_the_forking_threads_locks)
{
	expect_silent("ok-fork-child-inherits", "child serves\nchild exit 3\nchild pthread_exit 0\n");
}

Test(lock_idioms, pthread_exit_with_a_cleanup_handler_that_unlocks)
{
	expect_silent("ok-cleanup-handler-unlocks", "done\n");
}

Test(lock_idioms, recursive_mutex_relocked_sixty_deep_is_one_held_lock)
{
	expect_silent("ok-recursive-descent", "done\n");
}

Test(lock_idioms, recursive_mutex_unlocked_once_too_often)
{
	struct run r = idiom("bug-recursive-extra-unlock");
	char site[128];
	snprintf(site, sizeof(site), "lock_idioms.c:%d\n", target_site_line(&r, 1));
	cr_expect_eq(count_of(r.err, "WARNING: bad unlock balance detected!"), 1, "%s", r.err);
	cr_expect(strstr(r.err, site), "%s", r.err);
	cr_expect(strstr(r.out, "extra unlock 1\n"), "glibc's EPERM is returned: %s", r.out);
	cr_expect_eq(r.exit_code, 66, "exit status %d, expected %d:\n%s%s", r.exit_code, 66, r.out, r.err);
	run_free(&r);
}

Test(lock_idioms, allocator_atfork_handlers_taking_44_arena_locks)
{
	expect_silent("ok-allocator-atfork", "child 0\nchild 0\nchild 0\n");
}

Test(lock_idioms, allocator_atfork_handlers_taking_256_locks_of_one_class)
{
	expect_silent("ok-allocator-atfork-many-arenas", "child 0\nchild 0\nchild 0\n");
}

Test(lock_idioms, reinitializing_a_held_lock_releases_it)
{
	expect_silent("ok-reinit-held-lock", "done\n");
}

Test(lock_idioms, deeper_than_max_lock_depth_says_where_and_still_sees_bad_unlocks)
{
	struct run r = idiom("bug-deeper-than-the-limit");
	cr_expect_eq(count_of(r.err, "MAX_LOCK_DEPTH too low!"), 1, "one notice:\n%s", r.err);
	cr_expect(strstr(r.err, "but it already holds 48 locks"), "%s", r.err);
	cr_expect(strstr(r.err, " bug_deeper_than_the_limit+0x"), "where, with a stack:\n%s", r.err);
	/* the 4 untracked releases of each round are not bad unlocks, the
	 * genuine one afterwards is */
	cr_expect_eq(count_of(r.err, "WARNING: bad unlock balance detected!"), 1, "%s", r.err);
	char site[128];
	snprintf(site, sizeof(site), "(never_locked) at:\nbug_deeper_than_the_limit+");
	cr_expect(strstr(r.err, site), "%s", r.err);
	cr_expect(strstr(r.err, "SUMMARY: lockdep-rcu: 1 report: 1 bad unlock balance"), "the notice is no report:\n%s", r.err);
	run_free(&r);
}

Test(lock_idioms, mutex_used_as_a_semaphore_is_one_report_naming_both_threads)
{
	struct run r = idiom("bug-mutex-as-semaphore");
	cr_expect_eq(splat_count(r.err), 1, "one report, no cascade:\n%s", r.err);
	cr_expect_eq(count_of(r.err, "WARNING: bad unlock balance detected!"), 1, "%s", r.err);
	char site[128];
	snprintf(site, sizeof(site), "lock_idioms.c:%d\n", target_site_line(&r, 1));
	cr_expect(strstr(r.err, site), "the releasing site %s:\n%s", site, r.err);
	cr_expect(strstr(r.err, "The lock is held by another thread, "), "%s", r.err);
	cr_expect(strstr(r.err, "so it no longer counts as held by "), "%s", r.err);
	cr_expect(strstr(r.err, "which took it at:\nbuffer_reader+0x"), "where the holder took it:\n%s", r.err);
	cr_expect_not(strstr(r.err, "still has locks held"), "%s", r.err);
	cr_expect_not(strstr(r.err, "recursive locking"), "%s", r.err);
	cr_expect(strstr(r.out, "done\n"));
	run_free(&r);
}

/* xfs_repair's prefetch threads end holding buffers they locked, which the
 * main thread releases after they are gone: the same idiom, told once for
 * the lock's class, at whichever release came first; the taker's end is no
 * leak and the late release no second report. */
Test(lock_idioms, a_semaphore_whose_taker_ends_holding_it_is_still_one_report)
{
	struct run r = idiom("bug-mutex-as-semaphore-taker-ends");
	cr_expect_eq(splat_count(r.err), 1, "one report:\n%s", r.err);
	cr_expect(strstr(r.err, "The lock is held by another thread, "), "%s", r.err);
	cr_expect_not(strstr(r.err, "still has locks held"), "%s", r.err);
	cr_expect(strstr(r.out, "done\n"));
	run_free(&r);
}

/* Twins: what the hand-offs must not hide. A lock of another class that a
 * thread ends holding and nobody releases is a leak; a release of the
 * handed-off lock when nobody holds it is a bad unlock. */
Test(lock_idioms, handoffs_hide_neither_a_leak_of_another_class_nor_an_unheld_release)
{
	struct run r = idiom("bug-leak-after-handoffs");
	cr_expect_eq(splat_count(r.err), 2, "%s", r.err);
	cr_expect_eq(count_of(r.err, "still has locks held!"), 1, "%s", r.err);
	cr_expect(strstr(r.err, "(config_lock){mutex}"), "the leaked lock:\n%s", r.err);
	run_free(&r);

	r = idiom("bug-unheld-release-after-handoffs");
	cr_expect_eq(splat_count(r.err), 2, "%s", r.err);
	cr_expect_eq(count_of(r.err, "WARNING: bad unlock balance detected!"), 2, "%s", r.err);
	char site[128];
	snprintf(site, sizeof(site), "lock_idioms.c:%d\nbut there are no more locks to release!",
		 target_site_line(&r, 2));
	cr_expect(strstr(r.err, site), "the unheld release, %s:\n%s", site, r.err);
	run_free(&r);
}
