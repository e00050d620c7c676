/* The class cache kept in pthread mutexes (preload/classes/mutex_class_tag.h): a
 * cached class never outlives what it describes (a mutex moved by copying,
 * a mutex given a class of its own), the validator still finds the real
 * cycles next to them, and only the mutexes glibc leaves those bytes alone
 * for are written (none with class_cache=0). */
#include <criterion/criterion.h>
#include "harness.h"

#define CIRCULAR "WARNING: possible circular locking dependency detected"

static struct run tags(const char *scenario, const char *options)
{
	struct run_options o = { .preload = 1, .options = options };
	return run_target("class_tags", "memb", scenario, &o);
}

static void expect_silent(const char *scenario)
{
	struct run r = tags(scenario, NULL);
	cr_expect_eq(r.exit_code, 0, "%s: exit %d\n%s", scenario, r.exit_code, r.err);
	cr_expect_eq(splat_count(r.err), 0, "%s: a false report:\n%s", scenario, r.err);
	cr_expect_str_eq(r.out, "done\n", "%s", scenario);
	run_free(&r);
}

static struct run expect_cycle(const char *scenario)
{
	struct run r = tags(scenario, NULL);
	cr_expect_eq(count_of(r.err, CIRCULAR), 1, "%s:\n%s", scenario, r.err);
	cr_expect_eq(splat_count(r.err), 1, "%s:\n%s", scenario, r.err);
	cr_expect_str_eq(r.out, "done\n", "%s", scenario);
	return r;
}

Test(class_tags, a_mutex_moved_by_copying_is_a_new_instance)
{
	expect_silent("ok-moved-mutex");
	struct run r = expect_cycle("bug-bucket-then-table");
	cr_expect(strstr(r.err, "buckets_new+0x"), "the bucket class is named:\n%s", r.err);
	cr_expect(strstr(r.err, "table_new+0x"), "the table class is named:\n%s", r.err);
	run_free(&r);
}

Test(class_tags, a_mutex_given_a_class_of_its_own_is_judged_by_it)
{
	expect_silent("ok-renamed-mutex");
	struct run r = expect_cycle("bug-renamed-mutex-inverted");
	cr_expect(strstr(r.err, "(journal_lock)"), "the new class is named:\n%s", r.err);
	run_free(&r);
}

Test(class_tags, only_mutexes_glibc_never_lists_are_written)
{
	struct run_options plain_options = { .preload = 0 };
	struct run plain = run_target("class_tags", "memb", "list-bytes", &plain_options);
	cr_assert_eq(plain.exit_code, 0, "%s", plain.err);
	cr_expect(strstr(plain.out, "default: zero\n"), "%s", plain.out);

	struct run r = tags("list-bytes", NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_eq(splat_count(r.err), 0, "%s", r.err);
	cr_expect(strstr(r.out, "default: written\n"), "the class is cached in default mutexes:\n%s", r.out);
	/* Process-shared and robust mutexes: as glibc alone leaves them. */
	const char *tail = strstr(plain.out, "process-shared:");
	cr_assert(tail, "%s", plain.out);
	cr_expect(strstr(r.out, tail), "plain:\n%s\npreloaded:\n%s", plain.out, r.out);
	run_free(&r);

	r = tags("list-bytes", "class_cache=0");
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_eq(r.out, plain.out, "class_cache=0 writes nothing:\n%s", r.out);
	run_free(&r);
	run_free(&plain);
}

/* A mapping put over memory with mmap(MAP_FIXED) ends the locks that were
 * there, as munmap() does. */
Test(class_tags, a_mapping_replaced_in_place_ends_its_locks)
{
	expect_silent("ok-page-replaced");
	struct run r = expect_cycle("bug-page-kept");
	cr_expect(strstr(r.err, "buckets_new+0x"), "%s", r.err);
	run_free(&r);
}

/* A mutex made anew by zeroing it (memset, PTHREAD_MUTEX_INITIALIZER
 * assigned: what a program's own allocator or pool does, with no init and
 * no free the tracer sees) is a new lock, classed where it is first taken,
 * not by the role the old one had at that address: a pool whose objects
 * swap roles between lives gave a false cycle. The same locks taken in
 * both orders, never made anew, are still the inversion they are. */
Test(class_tags, a_mutex_made_anew_by_zeroing_is_a_new_lock)
{
	expect_silent("ok-pool-made-anew-by-memset");
	expect_silent("ok-pool-made-anew-by-initializer");
	struct run r = expect_cycle("bug-pool-roles-swapped-same-locks");
	cr_expect(strstr(r.err, "pool_visit+0x"), "%s", r.err);
	run_free(&r);
}

/* What the program shares with files or other processes is never
 * written: a default mutex in a file mapped shared, or in a System V
 * segment, stays as glibc leaves it. */
Test(class_tags, nothing_is_written_into_shared_mappings)
{
	struct run r = tags("shared-memory-bytes", NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_eq(splat_count(r.err), 0, "%s", r.err);
	cr_expect_str_eq(r.out, "file: zero\nshm: zero\n", "%s", r.out);
	run_free(&r);
}
