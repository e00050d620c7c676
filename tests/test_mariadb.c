/* MariaDB's server (InnoDB, a thread per connection, hundreds of mutexes
 * and rwlocks of dozens of classes; drops privileges to nobody) under the
 * preload: sysbench OLTP read-write transactions from 4 threads, the tables
 * counted and checked, SIGTERM.  It must commit, keep its data and exit
 * exactly as without the preload, with the same descriptors; the tracer
 * must stay silent having judged real nested locks (its dependency graph
 * has edges), and its graph must name every class apart. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include "real_programs.h"

Test(real_mariadb, commits_and_exits_as_without_preload_silently, .timeout = 180)
{
	const char *const extra[] = { "--load", "3000", NULL };
	struct real_run plain = real_run("mariadb", 0, NULL, extra, 120);
	struct real_run traced = real_run("mariadb", 1, NULL, extra, 120);
	const char *const keys[] = { "result", "sb_transactions", "rows", "tables_ok", "mariadbd_exit",
				     "mariadbd_stop", "fds", NULL };
	real_expect_same(&plain, &traced, keys);
	cr_expect(atoi(real_value(&traced, "graph_edges")) >= 20,
		  "the tracer saw %s lock dependencies in mariadbd: too few for its silence to mean anything",
		  real_value(&traced, "graph_edges"));
	cr_expect_str_eq(real_value(&traced, "graph_duplicate_nodes"), "0", "a class drawn twice in the graph");
	const char *const stderr_files[] = { "mariadbd.stderr", NULL };
	char *text = real_tracer_output(&traced, stderr_files);
	real_expect_silent(&traced, text);
	free(text);
	real_free(&plain);
	real_free(&traced);
}
