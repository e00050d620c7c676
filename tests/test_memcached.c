/* memcached (4 libevent worker threads, item locks, LRU maintainer and
 * crawler, slab rebalancer; drops privileges to nobody) under the preload:
 * 8 clients of set/get/incr/delete round trips, stats, SIGTERM.  It must
 * answer and exit exactly as without the preload, with the same
 * descriptors, and the tracer must stay silent.
 *
 * Failed on the first release (passes since the fixes the findings list): the
 * tracer's libunwind pipe: two more descriptors. See
 * docs/real-programs.md. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include "real_programs.h"

Test(real_memcached, answers_and_exits_as_without_preload_silently, .timeout = 120)
{
	const char *const extra[] = { "--load", "2000", NULL };
	struct real_run plain = real_run("memcached", 0, NULL, extra, 60);
	struct real_run traced = real_run("memcached", 1, NULL, extra, 60);
	const char *const keys[] = { "result", "mc_ops", "mc_wrong", "mc_errors", "threads", "memcached_exit",
				     "memcached_stop", "fds", NULL };
	real_expect_same(&plain, &traced, keys);
	const char *const stderr_files[] = { "memcached.stderr", NULL };
	char *text = real_tracer_output(&traced, stderr_files);
	real_expect_silent(&traced, text);
	free(text);
	real_free(&plain);
	real_free(&traced);
}
