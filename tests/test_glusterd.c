/* The GlusterFS management daemon (glusterd -N: event threads, synctask
 * threads, liburcu inlined for its peer list) under the preload, driven by
 * the gluster CLI through its own socket: volume info, peer status, pool
 * list, cluster-wide option transactions, then SIGTERM.  Every command must
 * answer as without the preload, glusterd must exit with its own status
 * (15, from cleanup_and_exit(SIGTERM)) and the same descriptors, and the
 * tracer must stay silent.
 *
 * Failed on the first release (passes since the fixes the findings list): (1)
 * glusterd's signal thread handles SIGTERM in cleanup_and_exit(), which takes
 * the context's cleanup lock and calls exit() with it held, so that no second
 * thread runs the cleanup: the tracer prints "still has locks held!" and
 * turns the status 15 into 66 (idiom: exit() holding a lock).  (2) the
 * tracer's libunwind pipe: two more descriptors.  See
 * docs/real-programs.md. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include "real_programs.h"

Test(real_glusterd, answers_and_exits_with_its_own_status_silently, .timeout = 120)
{
	const char *const extra[] = { "--load", "1", NULL };
	struct real_run plain = real_run("glusterd", 0, NULL, extra, 60);
	struct real_run traced = real_run("glusterd", 1, NULL, extra, 60);
	const char *const keys[] = { "result", "cli_ok", "cli_failed", "checks", "checks_wrong", "glusterd_exit",
				     "glusterd_stop", "fds", NULL };
	real_expect_same(&plain, &traced, keys);
	cr_expect_str_eq(real_value(&traced, "glusterd_exit"), "15", "%s", traced.r.out);
	const char *const stderr_files[] = { "glusterd.stderr", NULL };
	char *text = real_tracer_output(&traced, stderr_files);
	real_expect_silent(&traced, text);
	free(text);
	real_free(&plain);
	real_free(&traced);
}
