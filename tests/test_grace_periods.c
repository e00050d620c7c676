/* Grace periods still wait for readers under the preload, whose wrappers do
 * the memb, mb and signal flavors' read side themselves
 * (preload/rcu/urcu_inline_read.h): a nested reader holds a grace period until
 * its outermost unlock, and wakes an updater that went to sleep for it;
 * 2,000 grace periods under two checking readers free no node a reader
 * still sees. QSBR (whose read side the wrappers skip), bp (liburcu's own
 * read side) and inline_read_side=0 alike. */
#include <criterion/criterion.h>
#include <string.h>
#include "harness.h"

static void expect_output(const char *flavor, const char *scenario, const char *options, const char *out)
{
	struct run_options o = { .preload = 1, .options = options, .timeout = 60 };
	struct run r = run_target("grace_periods", flavor, scenario, &o);
	cr_expect(!r.timed_out, "[%s %s %s] hung (an updater never woken?)", flavor, scenario, options ? options : "");
	cr_expect_eq(r.exit_code, 0, "[%s %s] exit %d:\n%s", flavor, scenario, r.exit_code, r.err);
	cr_expect_str_eq(r.out, out, "[%s %s %s]", flavor, scenario, options ? options : "");
	cr_expect_str_empty(r.err, "[%s %s] nothing reported:\n%s", flavor, scenario, r.err);
	run_free(&r);
}

static const char *const flavors[] = { "memb", "mb", "signal", "qsbr", "bp", NULL };

Test(grace_periods, a_nested_reader_holds_the_grace_period_until_its_outermost_unlock, .timeout = 120)
{
	for (const char *const *f = flavors; *f; f++)
		expect_output(*f, "grace-period-waits-for-a-nested-reader", NULL, "waited\n");
	for (const char *const *f = flavors; *f; f++)
		expect_output(*f, "grace-period-waits-for-a-nested-reader", "inline_read_side=0", "waited\n");
}

Test(grace_periods, no_reader_sees_a_node_freed_after_a_grace_period, .timeout = 240)
{
	for (const char *const *f = flavors; *f; f++)
		expect_output(*f, "grace-periods-protect-readers", NULL, "no reader saw a freed node\n");
	expect_output("memb", "grace-periods-protect-readers", "inline_read_side=0", "no reader saw a freed node\n");
}
