/* gdnsd (liburcu QSBR built with _LGPL_SOURCE: inlined read side, zone data
 * replaced on reload and freed after a grace period) under the preload:
 * kdig on every RRset, dnsperf, gdnsdctl reload-zones (the moved and the new
 * name must answer), dnsperf on the reloaded data, status, stats, stop.  It
 * must answer and exit exactly as without the preload, with the same
 * descriptors, and the tracer must stay silent.
 *
 * Failed on the first release (passes since the fixes the findings list): the
 * tracer's libunwind pipe: two more descriptors in gdnsd. See
 * docs/real-programs.md. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include "real_programs.h"

Test(real_gdnsd, answers_reloads_and_exits_as_without_preload_silently, .timeout = 120)
{
	const char *const extra[] = { "--load", "2000", NULL };
	struct real_run plain = real_run("gdnsd", 0, NULL, extra, 60);
	struct real_run traced = real_run("gdnsd", 1, NULL, extra, 60);
	const char *const keys[] = { "result", "kdig_checked", "kdig_wrong", "dnsperf_completed", "dnsperf_lost",
				     "dnsperf_noerror", "reloaded_dnsperf_ok", "ctl_ok", "ctl_failed", "gdnsd_exit",
				     "gdnsd_stop", "fds", NULL };
	real_expect_same(&plain, &traced, keys);
	const char *const stderr_files[] = { NULL };
	char *text = real_tracer_output(&traced, stderr_files);
	real_expect_silent(&traced, text);
	/* gdnsd logs to its stderr: only gdnsd's own lines may be there. */
	char *err = real_file(&traced, "gdnsd.stderr");
	cr_expect(err && !strstr(err, "lockdep-rcu"), "the tracer wrote on gdnsd's stderr:\n%s", err ? err : "");
	free(err);
	free(text);
	real_free(&plain);
	real_free(&traced);
}
