/* redis-server (jemalloc, I/O threads, bio threads, a forked BGSAVE child)
 * under the preload: redis-cli checks, redis-benchmark, BGSAVE with a valid
 * dump, SHUTDOWN.  It must answer and exit exactly as without the preload:
 * its own exit status 0 after SHUTDOWN, the same descriptors, and the tracer
 * must stay silent.
 *
 * Failed on the first release (passes since the fixes the findings list): (1)
 * SHUTDOWN calls exit() on the main thread while it holds the module GIL
 * (held by design whenever the main thread runs commands) and an
 * io_threads_mutex (held by design to park the I/O threads): the tracer
 * prints "still has locks held!" at exit and turns redis's exit status 0 into
 * 66 (idiom: exit() holding locks, harmless since the process ends). (2) the
 * tracer's libunwind pipe (two more descriptors) and its open log. See
 * docs/real-programs.md. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include "real_programs.h"

Test(real_redis, serves_saves_and_shuts_down_as_without_preload_silently, .timeout = 120)
{
	const char *const extra[] = { "--load", "5000", NULL };
	struct real_run plain = real_run("redis", 0, NULL, extra, 60);
	struct real_run traced = real_run("redis", 1, NULL, extra, 60);
	const char *const keys[] = { "result", "checks", "checks_wrong", "benchmark_ok", "bgsave_status", "rdb_ok",
				     "redis_exit", "redis_stop", "fds", NULL };
	real_expect_same(&plain, &traced, keys);
	const char *const stderr_files[] = { "redis-server.stderr", NULL };
	char *text = real_tracer_output(&traced, stderr_files);
	real_expect_silent(&traced, text);
	free(text);
	real_free(&plain);
	real_free(&traced);
}
