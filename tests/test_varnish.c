/* Varnish (varnishd: a manager that closes every inherited descriptor and
 * binds its listen socket, a forked VCL compiler, a forked cache child with
 * thread pools, jemalloc, jailed to the varnish users) in front of a small
 * backend, under the preload: pages, hits, ab, varnishadm ban.  It must
 * start, serve and exit exactly as without the preload, with the same
 * descriptors in the manager and the cache child, and the tracer must stay
 * silent.
 *
 * Failed on the first release (passes since the fixes the findings list): (1)
 * every process varnishd forks (the VCC compiler run by VSUB_run(), the cache
 * child) reports "still has locks held!" at exit(): jemalloc's fork handlers
 * lock its ~55 arena mutexes in the parent and re-initialize them in the
 * child, so the child seems to hold them; the tracer's exit status 66 then
 * makes the VCL compilation fail and varnishd exits 2 at startup.  (2) with
 * exitcode=0, the cache child cannot listen ("Socket operation on non-
 * socket"): the manager closed the tracer's libunwind pipe and bound its
 * socket on that descriptor, which libunwind then closes and replaces by a
 * pipe.  See docs/real-programs.md. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include "real_programs.h"

Test(real_varnish, starts_serves_and_exits_as_without_preload_silently, .timeout = 120)
{
	const char *const extra[] = { "--load", "1000", NULL };
	struct real_run plain = real_run("varnish", 0, NULL, extra, 60);
	struct real_run traced = real_run("varnish", 1, NULL, extra, 60);
	const char *const keys[] = { "result", "checks", "checks_wrong", "ab_requests", "ab_failed", "ab_non2xx",
				     "admin_ok", "admin_failed", "varnishd_exit", "varnishd_stop", "fds",
				     "child_fds", NULL };
	real_expect_same(&plain, &traced, keys);
	cr_expect_eq(atoi(real_value(&traced, "tracer_logs")), 0, "%s", traced.r.out);
	const char *const stderr_files[] = { "varnishd.stderr", NULL };
	char *text = real_tracer_output(&traced, stderr_files);
	cr_expect_eq(real_report_count(text), 0, "the tracer reported %d times (in %s):\n%s", real_report_count(text),
		     traced.workdir, text);
	free(text);
	real_free(&plain);
	real_free(&traced);
}
