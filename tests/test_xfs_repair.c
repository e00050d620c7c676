/* xfs_repair (xfsprogs 6.1: a mutex per buffer of its cache, prefetch
 * threads, a worker per allocation group) repairing a clean image made by
 * mkfs.xfs: the same seven phases and the same words with and without the
 * preload (exitcode=0: the reports below must not change its status), and
 * exactly its two real lock bugs reported, as Helgrind finds them too
 * ("unlocked a not-locked lock", "unlocked lock currently held by thread"):
 *
 * - an uncached buffer (made by pthread_mutex_init(), never locked) is
 *   released by libxfs_buf_relse(), which unlocks it: "no more locks to
 *   release", no holder;
 * - buffers locked by a prefetch thread are released by the main thread, a
 *   mutex used as a semaphore (undefined for POSIX, let through by glibc):
 *   one report for the class, naming the taker, and no "still has locks
 *   held!" for the prefetch threads that end holding buffers the main
 *   thread releases after them.
 *
 * Nothing else: Helgrind's lock-order report on it comes from a trylock,
 * which cannot deadlock. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include "real_programs.h"

Test(real_xfs_repair, repairs_alike_and_reports_exactly_its_two_unlock_bugs, .timeout = 120)
{
	const char *const extra[] = { "--load", "1000", NULL };
	struct real_run plain = real_run("xfs_repair", 0, "exitcode=0", extra, 60);
	struct real_run traced = real_run("xfs_repair", 1, "exitcode=0", extra, 60);
	const char *const keys[] = { "result", "repair_exit", "phases", "output_sha", NULL };
	real_expect_same(&plain, &traced, keys);
	const char *const stderr_files[] = { "repair.err", NULL };
	char *text = real_tracer_output(&traced, stderr_files);
	cr_expect_eq(real_report_count(text), 2, "%s", text);
	cr_expect_eq(count_of(text, "\nWARNING: bad unlock balance detected!\n"), 2, "%s", text);
	cr_expect_eq(count_of(text, "\nThe lock is held by another thread, xfs_repair/"), 1,
		     "the hand-off, naming its taker:\n%s", text);
	cr_expect_eq(count_of(text, "\nbut there are no more locks to release!\n"), 2, "%s", text);
	cr_expect_eq(count_of(text, "still has locks held"), 0, "%s", text);
	cr_expect_eq(count_of(text, "circular locking"), 0, "%s", text);
	free(text);
	real_free(&plain);
	real_free(&traced);
}
