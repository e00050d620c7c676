/* Lock classes on the patterns of real programs (tests/targets/lock_classes.c):
 * generic constructors split by their callers, inlined constructors one
 * class by their source line, heap locks never initialized by a call
 * followed, memory reuse and library reloads forgotten, tables that never
 * stop checking, and the class rules that override the depth. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <unistd.h>
#include "harness.h"

#define CIRCULAR "WARNING: possible circular locking dependency detected"

static struct run classes(const char *scenario, const char *options)
{
	struct run_options o = { .preload = 1, .options = options, .timeout = 60 };
	setenv("PLUGIN_DIR", build_path("targets"), 1);
	return run_target("lock_classes", "memb", scenario, &o);
}

static void expect_silent(const char *scenario, const char *options, const char *out)
{
	struct run r = classes(scenario, options);
	cr_expect_str_empty(r.err, "[%s %s]\n%s", scenario, options ? options : "", r.err);
	cr_expect_eq(r.exit_code, 0, "[%s]", scenario);
	cr_expect(strstr(r.out, out), "[%s] '%s' in:\n%s", scenario, out, r.out);
	run_free(&r);
}

static void expect_cycle(const char *scenario, const char *options, const char *lock_name)
{
	struct run r = classes(scenario, options);
	cr_expect_eq(count_of(r.err, CIRCULAR), 1, "[%s %s]\n%s", scenario, options ? options : "", r.err);
	if (lock_name)
		cr_expect(strstr(r.err, lock_name), "[%s] '%s' in:\n%s", scenario, lock_name, r.err);
	cr_expect_eq(r.exit_code, 66, "[%s]", scenario);
	run_free(&r);
}

static void write_temp(char *path_template, const char *text)
{
	int fd = mkstemp(path_template);
	cr_assert(fd >= 0);
	cr_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
}

Test(lock_classes, generic_constructor_makes_one_class_per_user)
{
	expect_silent("ok-generic-constructor", NULL, "done\n");
	expect_cycle("bug-generic-constructor-real-inversion", NULL, "(table_create+0x");
}

Test(lock_classes, inlined_constructor_is_one_class)
{
	/* two inlined copies of conn_new(): the class follows the source line */
	expect_cycle("bug-inlined-constructor", NULL, "(bug_inlined_constructor+0x");
}

Test(lock_classes, heap_locks_never_initialized_by_a_call_are_followed)
{
	expect_cycle("bug-uninitialized-heap-locks", NULL, "(transfer+0x");
	expect_silent("ok-uninitialized-heap-locks", NULL, "done\n");
}

Test(lock_classes, memory_reused_after_free_is_a_new_lock)
{
	expect_silent("ok-memory-reused-after-free", NULL, "reused yes\n");
	expect_silent("ok-memory-reused-after-realloc", NULL, "done\n");
}

Test(lock_classes, library_reloaded_at_the_same_address_has_new_locks)
{
	struct run r = classes("ok-library-reloaded-at-same-address", NULL);
	cr_expect_str_empty(r.err, "%s", r.err);
	if (!strstr(r.out, "same address yes"))
		cr_log_warn("the second library did not land at the first one's address: %s", r.out);
	run_free(&r);
}

Test(lock_classes, real_abba_found_after_300000_locks, .timeout = 120)
{
	struct run r = classes("bug-abba-after-300000-locks", NULL);
	cr_expect_eq(count_of(r.err, CIRCULAR), 1, "%s", r.err);
	cr_expect(strstr(r.err, "(order_a)") && strstr(r.err, "(order_b)"), "%s", r.err);
	cr_expect_not(strstr(r.err, "too low!"), "no table filled up:\n%s", r.err);
	run_free(&r);
}

/* Same-class instance pairs are remembered however many a program makes:
 * the newest are kept, so a real inversion after half a million pairs is
 * found, and its correct twin stays silent. */
Test(lock_classes, same_class_inversion_found_after_500000_pairs, .timeout = 120)
{
	struct run r = classes("bug-account-inversion-after-500000-pairs", NULL);
	cr_expect_eq(count_of(r.err, CIRCULAR), 1, "%s", r.err);
	cr_expect(strstr(r.err, "were taken in the opposite order before"), "%s", r.err);
	cr_expect(strstr(r.err, "move_money+0x"), "names the program's function:\n%s", r.err);
	cr_expect_not(strstr(r.err, "too low!"), "no table filled up:\n%s", r.err);
	run_free(&r);
	expect_silent("ok-account-order-after-500000-pairs", NULL, "done\n");
}

Test(lock_classes, class_rules_split_and_merge_without_recompiling)
{
	char split[] = "/tmp/lockdep-rcu-rules.XXXXXX", merge[] = "/tmp/lockdep-rcu-rules.XXXXXX";
	write_temp(split, "# bins of every cache are made by one chain 3 deep\nsplit:bin_init:4\n");
	write_temp(merge, "merge:conn_make\n");
	char opt[128];
	/* default depth: the bins of two caches look like one class */
	expect_cycle("deep-generic-constructor", NULL, "(bin_init+0x");
	snprintf(opt, sizeof(opt), "class_rules=%s", split);
	expect_silent("deep-generic-constructor", opt, "done\n");
	/* default: one constructor's locks split by caller, no report */
	expect_silent("merged-constructor", NULL, "done\n");
	snprintf(opt, sizeof(opt), "class_rules=%s", merge);
	expect_cycle("merged-constructor", opt, "(conn_make+0x");
	/* depth 0 by option: the site alone */
	expect_cycle("ok-generic-constructor", "class_depth=0", "(table_create+0x");
	unlink(split);
	unlink(merge);
}

Test(lock_classes, bad_class_rules_file_is_named)
{
	char bad[] = "/tmp/lockdep-rcu-rules.XXXXXX";
	write_temp(bad, "split:bin_init\n");
	char opt[128];
	snprintf(opt, sizeof(opt), "class_rules=%s", bad);
	struct run r = classes("ok-generic-constructor", opt);
	cr_expect(strstr(r.err, "lockdep-rcu: ignoring option 'class_rules' in LOCKDEP_RCU_OPTIONS: "), "%s", r.err);
	cr_expect(strstr(r.err, ":1: split needs a depth"), "%s", r.err);
	cr_expect(strstr(r.out, "done\n"));
	unlink(bad);
	run_free(&r);
}

/* A generic constructor in a stripped library, called by two static
 * functions (OpenSSL's CRYPTO_THREAD_lock_new()): two classes, named apart
 * by where their callers are, not alike for want of symbols. */
Test(lock_classes, classes_of_unnamed_callers_are_named_apart)
{
	char host[4096];
	snprintf(host, sizeof(host), "%s", build_path("targets/stripped_host"));
	char *argv[] = { host, NULL };
	struct run_options o = { .preload = 1, .timeout = 20 };
	struct run r = run_program(argv, &o);
	cr_expect_eq(count_of(r.err, "WARNING: possible circular locking dependency detected"), 1, "%s", r.err);
	const char *acquiring = strstr(r.err, "is trying to acquire lock:\n");
	const char *holding = strstr(r.err, "but task is already holding lock:\n");
	cr_assert(acquiring && holding, "%s", r.err);
	char a[256] = "", h[256] = "";
	sscanf(strchr(acquiring, '(') ? strchr(acquiring, '(') : "", "(%255[^)])", a);
	sscanf(strchr(holding, '(') ? strchr(holding, '(') : "", "(%255[^)])", h);
	cr_expect(strstr(a, " from [libstripped_constructor.so+0x"), "'%s'\n%s", a, r.err);
	cr_expect(strcmp(a, h), "two classes, two names: '%s'", a);
	run_free(&r);
}

/* Locks that are fields of one static variable, each made at a site of its
 * own, are named by their offsets in it: a report that reads "lock(demux)
 * ... lock(demux)" names nothing (GStreamer's element struct, round 5). */
Test(lock_classes, fields_of_one_static_variable_are_named_apart)
{
	struct run r = classes("bug-static-struct-fields-inverted", NULL);
	cr_expect_eq(count_of(r.err, CIRCULAR), 1, "%s", r.err);
	cr_expect(strstr(r.err, "(server+0x28)"), "the stats lock by its offset:\n%s", r.err);
	cr_expect(strstr(r.err, "(server+0x50)"), "the log lock by its offset:\n%s", r.err);
	run_free(&r);
}
