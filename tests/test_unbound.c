/* unbound, the DNS resolver, under the preload: a local zone and an
 * auth-zone answered through its caches (2 threads, lruhash tables whose
 * locks all come from one init site, lruhash_create()), dnsperf,
 * unbound-control stats / local_data / reload / stop.  It must answer and
 * exit exactly as without the preload, with the same descriptors, and the
 * tracer must stay silent: unbound has no lock-order bug here.
 *
 * Failed on the first release (passes since the fixes the findings list): (1)
 * a "possible circular locking dependency" at shutdown between unbound's
 * lruhash table/bin spinlocks and its hash-entry rwlocks: every cache's table
 * lock is one class (one init site), so the table lock of one cache taken
 * before an entry of another looks like a cycle (generic lock constructor);
 * the report also turns unbound's exit status 0 into 66. (2) the tracer's
 * libunwind pipe takes descriptors 3 and 4 in unbound. See
 * docs/real-programs.md. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include "real_programs.h"

Test(real_unbound, answers_and_exits_as_without_preload_silently, .timeout = 120)
{
	const char *const extra[] = { "--load", "2000", NULL };
	struct real_run plain = real_run("unbound", 0, NULL, extra, 60);
	struct real_run traced = real_run("unbound", 1, NULL, extra, 60);
	const char *const keys[] = { "result", "kdig_checked", "kdig_wrong", "dnsperf_completed", "dnsperf_lost",
				     "dnsperf_noerror", "control_ok", "control_failed", "unbound_exit",
				     "unbound_stop", "fds", NULL };
	real_expect_same(&plain, &traced, keys);
	cr_expect_eq(atoi(real_value(&traced, "tracer_logs")), 0, "%s", traced.r.out);
	const char *const stderr_files[] = { "unbound.stderr", NULL };
	char *text = real_tracer_output(&traced, stderr_files);
	real_expect_silent(&traced, text);
	free(text);
	real_free(&plain);
	real_free(&traced);
}
