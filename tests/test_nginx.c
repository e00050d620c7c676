/* nginx (a master and 2 workers as www-data, file reads in a 4-thread pool
 * with "aio threads") under the preload: static files, ab, graceful stop.
 * It must serve and exit exactly as without the preload, with the same
 * descriptors in the master and a worker, and the tracer must stay silent.
 *
 * Failed on the first release (passes since the fixes the findings list): the
 * tracer's libunwind pipe: two more descriptors in the master and in each
 * worker.  See docs/real-programs.md. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include "real_programs.h"

Test(real_nginx, serves_and_exits_as_without_preload_silently, .timeout = 120)
{
	const char *const extra[] = { "--load", "2000", NULL };
	struct real_run plain = real_run("nginx", 0, NULL, extra, 60);
	struct real_run traced = real_run("nginx", 1, NULL, extra, 60);
	const char *const keys[] = { "result", "checks", "checks_wrong", "ab_requests", "ab_failed", "ab_non2xx",
				     "workers", "worker_threads", "nginx_exit", "nginx_stop", "fds", "worker_fds",
				     NULL };
	real_expect_same(&plain, &traced, keys);
	const char *const stderr_files[] = { "nginx.stderr", NULL };
	char *text = real_tracer_output(&traced, stderr_files);
	real_expect_silent(&traced, text);
	free(text);
	real_free(&plain);
	real_free(&traced);
}
