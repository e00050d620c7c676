/* Thread-end checks: locks and read-side sections still held when a thread
 * returns, calls pthread_exit() or exit(); liburcu registrations left
 * behind. */
#include <criterion/criterion.h>
#include "harness.h"

static const struct run_options preloaded = { .preload = 1 };

/* " #0: ... (<lock>)..., at: <function>+0x... <file>:<site line>" */
static void expect_locks_held(const char *flavor, const char *scenario, const char *lock,
			      const char *function)
{
	struct run r = run_target("thread_end", flavor, scenario, &preloaded);
	char where[256];
	snprintf(where, sizeof(where), "%s, at: %s+0x", lock, function);
	char line[128];
	snprintf(line, sizeof(line), "thread_end.c:%d\n", target_site_line(&r, 1));
	cr_expect(strstr(r.err, " still has locks held!"), "[%s %s]\n%s", flavor, scenario, r.err);
	cr_expect(strstr(r.err, "BUG: thread_end."), "[%s %s] comm/tid in the title\n%s", flavor, scenario, r.err);
	cr_expect(strstr(r.err, "1 lock held by "), "[%s %s]\n%s", flavor, scenario, r.err);
	cr_expect(strstr(r.err, where), "[%s %s] expected '%s'\n%s", flavor, scenario, where, r.err);
	cr_expect(strstr(r.err, line), "[%s %s] expected '%s'\n%s", flavor, scenario, line, r.err);
	cr_expect_eq(r.exit_code, 66, "[%s %s]", flavor, scenario);
	cr_expect(strstr(r.out, "done"), "[%s %s]", flavor, scenario);
	run_free(&r);
}

Test(thread_end, return_holding_a_mutex)
{
	for (const char *const *f = all_flavors; *f; f++)
		expect_locks_held(*f, "bug-return-locked", "(table_lock){mutex}", "returns_holding_mutex");
}

Test(thread_end, pthread_exit_holding_a_mutex)
{
	expect_locks_held("memb", "bug-pthread-exit-locked", "(table_lock){mutex}", "exits_holding_mutex");
}

/* C11 threads start inside glibc (thrd_create() calls its own
 * pthread_create): checked at their end all the same, and their int result
 * comes back through thrd_join() as without the preload. */
Test(thread_end, c11_threads_holding_a_mutex_at_their_end)
{
	expect_locks_held("memb", "bug-c11-return-locked", "(table_lock){mutex}", "c11_returns_holding_mutex");
	expect_locks_held("memb", "bug-c11-exit-locked", "(table_lock){mutex}", "c11_exits_holding_mutex");
	struct run r = run_target("thread_end", "memb", "bug-c11-return-locked", &preloaded);
	cr_expect(strstr(r.out, "thread result 7\n"), "%s", r.out);
	run_free(&r);
	r = run_target("thread_end", "memb", "bug-c11-exit-locked", &preloaded);
	cr_expect(strstr(r.out, "thread result 8\n"), "%s", r.out);
	run_free(&r);
	r = run_target("thread_end", "memb", "ok-c11", &preloaded);
	cr_expect_str_empty(r.err, "%s", r.err);
	cr_expect_str_eq(r.out, "thread result 42\ndone\n", "%s", r.err);
	cr_expect_eq(r.exit_code, 0, "exit status %d, expected %d:\n%s%s", r.exit_code, 0, r.out, r.err);
	run_free(&r);
}

Test(thread_end, exit_holding_a_shutdown_lock_is_not_reported)
{
	struct run r = run_target("thread_end", "memb", "ok-exit-locked", &preloaded);
	cr_expect_str_empty(r.err, "%s", r.err);
	cr_expect_eq(r.exit_code, 15, "the program's own status");
	cr_expect(strstr(r.out, "done\n"));
	run_free(&r);
}

Test(thread_end, exit_holding_a_lock_an_atexit_handler_takes_again)
{
	struct run_options o = { .preload = 1, .timeout = 5 };
	struct run r = run_target("thread_end", "memb", "bug-exit-locked-relocked-at-exit", &o);
	cr_expect(strstr(r.err, "WARNING: possible recursive locking detected"), "%s", r.err);
	cr_expect(strstr(r.err, "cleanup_taking_table_lock+0x"), "%s", r.err);
	cr_expect_not(strstr(r.err, "still has locks held"), "%s", r.err);
	cr_expect(r.timed_out, "it really deadlocks after the report");
	run_free(&r);
}

Test(thread_end, return_inside_a_read_side_section)
{
	expect_locks_held("memb", "bug-return-in-reader", "(rcu_read_lock_memb){rcu}", "returns_inside_reader");
	expect_locks_held("bp", "bug-return-in-reader", "(rcu_read_lock_bp){rcu}", "returns_inside_reader");
}

Test(thread_end, still_registered_with_liburcu)
{
	for (const char *const *f = registering_flavors; *f; f++) {
		struct run r = run_target("thread_end", *f, "bug-still-registered", &preloaded);
		char msg[160];
		snprintf(msg, sizeof(msg), "ends still registered with liburcu flavor %s", *f);
		cr_expect(strstr(r.err, "WARNING: suspicious RCU usage"), "[%s]\n%s", *f, r.err);
		cr_expect(strstr(r.err, msg), "[%s]\n%s", *f, r.err);
		cr_expect(strstr(r.err, "call rcu_unregister_thread() before the thread ends"), "[%s]\n%s", *f, r.err);
		char site[64];
		snprintf(site, sizeof(site), "thread_end.c:%d thread ", target_site_line(&r, 1));
		cr_expect(strstr(r.err, site), "[%s] the registration site\n%s", *f, r.err);
		cr_expect_eq(splat_count(r.err), 1, "[%s]\n%s", *f, r.err);
		run_free(&r);
	}
	struct run r = run_target("thread_end", "bp", "bug-still-registered", &preloaded);
	cr_expect_str_empty(r.err, "bp unregisters by itself:\n%s", r.err);
	run_free(&r);
}

Test(thread_end, clean_threads_key_destructors_and_cancellation_are_silent)
{
	for (const char *const *f = all_flavors; *f; f++) {
		struct run r = run_target("thread_end", *f, "ok", &preloaded);
		cr_expect_str_empty(r.err, "[%s]\n%s", *f, r.err);
		cr_expect_eq(r.exit_code, 0, "[%s]", *f);
		cr_expect(strstr(r.out, "done"), "[%s]", *f);
		run_free(&r);
	}
}
