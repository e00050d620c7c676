/* Apache httpd (Debian's apache2, event MPM: 2 forked children of 16
 * threads that drop privileges to www-data) under the preload: static
 * files, mod_proxy to a second virtual host, mod_cache_socache and mod_ssl's
 * session cache in shmcb, process-shared pthread mutexes for every "Mutex"
 * (proc_mutex_pthread_create()), ab on each.  It must serve and exit exactly
 * as without the preload, with the same descriptors in the parent and in a
 * child, and the tracer must stay silent: these mutexes are taken in no
 * deadlocking order.
 *
 * Failed on the first release (passes since the fixes the findings list): (1)
 * each child reports a "possible circular locking dependency" between the
 * class of every apr_thread_mutex_create() mutex and the class of every
 * process-shared mutex made inside libapr: the request's invoke mutex held
 * while mod_cache_socache takes its socache mutex, and mod_proxy's global
 * mutex held while an allocator mutex is taken at child init: four different
 * locks, two generic constructors.  (2) the tracer's libunwind pipe takes
 * descriptors 3 and 4 in the parent and the children, and after a report a
 * child keeps 8 more open (ELF files opened for symbolization, and the log).
 * See docs/real-programs.md. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include "real_programs.h"

Test(real_apache2, serves_and_exits_as_without_preload_silently, .timeout = 150)
{
	const char *const extra[] = { "--load", "1000", NULL };
	struct real_run plain = real_run("apache2", 0, NULL, extra, 70);
	struct real_run traced = real_run("apache2", 1, NULL, extra, 70);
	const char *const keys[] = { "result", "checks", "checks_wrong", "ab_requests", "ab_failed", "ab_non2xx",
				     "tls_reused", "children", "apache2_exit", "apache2_stop", "fds", "child_files",
				     NULL };
	real_expect_same(&plain, &traced, keys);
	cr_expect_eq(atoi(real_value(&traced, "tracer_logs")), 0, "%s", traced.r.out);
	const char *const stderr_files[] = { "apache2.stderr", NULL };
	char *text = real_tracer_output(&traced, stderr_files);
	real_expect_silent(&traced, text);
	free(text);
	real_free(&plain);
	real_free(&traced);
}
