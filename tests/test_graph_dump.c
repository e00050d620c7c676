/* graph_path=FILE: the dependency graph as DOT at exit, exactly the edges
 * the program made, the reported cycle's in red, grace-period waits dashed,
 * RCU flavors and SRCU domains shaped apart. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdlib.h>
#include <unistd.h>
#include "harness.h"
#include "cli_helpers.h"

/* Runs target scenario with graph_path=<dir>/graph.dot; returns the DOT. */
static char *graph_of(const char *target, const char *scenario, char **dir_out)
{
	char *dir = cli_temp_dir(), options[4200], path[4200];
	snprintf(options, sizeof(options), "graph_path=%s/graph.dot", dir);
	struct run_options o = { .preload = 1, .options = options, .timeout = 10 };
	struct run r = run_target(target, "memb", scenario, &o);
	run_free(&r);
	snprintf(path, sizeof(path), "%s/graph.dot", dir);
	*dir_out = dir;
	return cli_read(path);
}

/* The edge lines ("\t\"A\" -> \"B\" [...]"), as "A->B" sorted by appearance. */
static void edges_of(const char *dot, char *out, size_t size)
{
	out[0] = 0;
	for (const char *p = dot; (p = strstr(p, "\" -> \"")); p++) {
		const char *start = p;
		while (start > dot && start[-1] != '\n')
			start--;
		const char *to = p + 6, *to_end = strchr(to, '"');
		size_t used = strlen(out);
		snprintf(out + used, size - used, "%s%.*s->%.*s", used ? " " : "", (int)(p - start - 2), start + 2,
			 (int)(to_end - to), to);
	}
}

/* The attributes of the edge from -> to. */
static char *edge_attrs(const char *dot, const char *from, const char *to)
{
	char edge[256];
	snprintf(edge, sizeof(edge), "\t\"%s\" -> \"%s\" [", from, to);
	const char *p = strstr(dot, edge);
	if (!p)
		return NULL;
	p += strlen(edge);
	return strndup(p, strcspn(p, "\n"));
}

Test(graph_dump, abba_has_exactly_its_two_edges_and_the_cycle_in_red)
{
	char *dir;
	char *dot = graph_of("lock_order", "abba", &dir);
	cr_assert(dot, "no graph written");
	cr_expect(!strncmp(dot, "digraph lockdep {\n", 18), "%s", dot);
	cr_expect(strstr(dot, "\tgraph [label=\"lockdep-rcu 0.1: lock_order.memb (pid "), "%s", dot);
	cr_expect(strstr(dot, "\t\"A\" [kind=\"lock\"];\n"), "%s", dot);
	cr_expect(strstr(dot, "\t\"B\" [kind=\"lock\"];\n"), "%s", dot);
	char edges[1024];
	edges_of(dot, edges, sizeof(edges));
	cr_expect_str_eq(edges, "A->B B->A", "%s", dot);
	char *ab = edge_attrs(dot, "A", "B"), *ba = edge_attrs(dot, "B", "A");
	cr_assert(ab && ba, "%s", dot);
	cr_expect(strstr(ab, "site=\"nest tests/targets/lock_order.c:18\", label=\"lock_order.c:18\""), "%s", ab);
	cr_expect(strstr(ab, "cycle=1") && strstr(ba, "cycle=1"), "both edges of the cycle:\n%s", dot);
	cr_expect(strstr(ba, "color=\"red\""), "%s", ba);
	cr_expect(!strcmp(dot + strlen(dot) - 2, "}\n"), "%s", dot);
	free(ab), free(ba), free(dot);
	cli_remove_dir(dir);
}

Test(graph_dump, consistent_order_is_not_red)
{
	char *dir;
	char *dot = graph_of("lock_order", "rcu-grace-period-ok", &dir);
	cr_assert(dot);
	cr_expect(!strstr(dot, "cycle=1"), "%s", dot);
	free(dot);
	cli_remove_dir(dir);
}

Test(graph_dump, grace_period_waits_dashed_and_rcu_flavors_shaped)
{
	char *dir;
	char *dot = graph_of("lock_order", "rcu-grace-period-deadlock", &dir);
	cr_assert(dot);
	cr_expect(strstr(dot, "\t\"rcu_read_lock_memb\" [kind=\"rcu\", shape=ellipse"), "%s", dot);
	char edges[1024];
	edges_of(dot, edges, sizeof(edges));
	cr_expect_str_eq(edges, "rcu_read_lock_memb->config_lock config_lock->rcu_read_lock_memb",
			 "a read side is no edge into itself:\n%s", dot);
	char *sync = edge_attrs(dot, "config_lock", "rcu_read_lock_memb");
	cr_assert(sync, "%s", dot);
	cr_expect(strstr(sync, "style=dashed, sync=1"), "%s", sync);
	cr_expect(strstr(sync, "cycle=1"), "%s", sync);
	char *read = edge_attrs(dot, "rcu_read_lock_memb", "config_lock");
	cr_assert(read, "%s", dot);
	cr_expect(strstr(read, "cycle=1"), "%s", read);
	free(sync), free(read), free(dot);
	cli_remove_dir(dir);

	dot = graph_of("header_checks", "srcu-grace-period-deadlock", &dir);
	cr_assert(dot);
	cr_expect(strstr(dot, "\t\"srcu:domain_a\" [kind=\"srcu\", shape=hexagon"), "%s", dot);
	free(dot);
	cli_remove_dir(dir);
}

/* Two classes with one name are two nodes (DOT identifies a node by its
 * name: one node would draw conn_lock -> cache_lock -> conn_lock, a cycle
 * that is not one). The later class is "conn_lock#2", as kernel lockdep
 * numbers classes that share a name. */
Test(graph_dump, classes_sharing_a_name_stay_apart)
{
	char *dir;
	char *dot = graph_of("lock_annotations", "same-name-two-classes", &dir);
	cr_assert(dot, "no graph written");
	cr_expect(strstr(dot, "\t\"conn_lock\" [kind=\"lock\"];\n"), "%s", dot);
	cr_expect(strstr(dot, "\t\"conn_lock#2\" [kind=\"lock\"];\n"), "%s", dot);
	char edges[1024];
	edges_of(dot, edges, sizeof(edges));
	cr_expect_str_eq(edges, "conn_lock->cache_lock cache_lock->conn_lock#2", "%s", dot);
	cr_expect(!strstr(dot, "cycle=1"), "%s", dot);
	free(dot);
	cli_remove_dir(dir);
}

/* The node lines of a DOT file, in order. */
static void node_lines(const char *dot, char *out, size_t size)
{
	out[0] = 0;
	for (const char *p = dot; (p = strstr(p, "\t\"")); p++) {
		const char *eol = strchr(p, '\n');
		if (!eol)
			break;
		if (memmem(p, (size_t)(eol - p), " [kind=", 7)) {
			size_t used = strlen(out);
			snprintf(out + used, size - used, "%.*s\n", (int)(eol - p), p);
		}
		p = eol;
	}
}

/* In a stripped program a static lock has no symbol to be named by: it is
 * named by its module and offset, as frames print it, the same in every
 * run (its address moves with ASLR: two runs' graphs, merged by `graph`,
 * would hold every such class twice). */
Test(graph_dump, unnamed_locks_have_the_same_names_in_every_run)
{
	char *dir = cli_temp_dir(), program[4200], cmd[8600];
	snprintf(program, sizeof(program), "%s/lo", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s && strip --strip-all %s", cli_target("lock_order.memb"), program, program);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	char nodes[2][4096];
	for (int run = 0; run < 2; run++) {
		char options[4200], path[4200];
		snprintf(options, sizeof(options), "graph_path=%s/g%d.dot", dir, run);
		char *argv[] = { program, "abba", NULL };
		struct run_options o = { .preload = 1, .options = options, .timeout = 10 };
		struct run r = run_program(argv, &o);
		run_free(&r);
		snprintf(path, sizeof(path), "%s/g%d.dot", dir, run);
		char *dot = cli_read(path);
		cr_assert(dot, "no graph from run %d", run);
		node_lines(dot, nodes[run], sizeof(nodes[run]));
		free(dot);
	}
	cr_expect_str_eq(nodes[0], nodes[1], "the same classes, the same names");
	cr_expect(strstr(nodes[0], "\t\"lock@lo+0x"), "named by module and offset:\n%s", nodes[0]);
	cli_remove_dir(dir);
}

/* A program with no nested locks writes an empty graph, still valid DOT;
 * without the option nothing is written. */
Test(graph_dump, empty_graph_and_off_by_default)
{
	char *dir;
	char *dot = graph_of("lock_contention", "alone", &dir);
	cr_assert(dot);
	cr_expect(!strstr(dot, "->"), "%s", dot);
	cr_expect(!strcmp(dot + strlen(dot) - 2, "}\n"), "%s", dot);
	free(dot);
	cli_remove_dir(dir);
}

/* %p: one file per process, a forked child's its own. */
Test(graph_dump, per_process_with_pid)
{
	char *dir = cli_temp_dir(), options[4200];
	snprintf(options, sizeof(options), "graph_path=%s/graph.%%p.dot", dir);
	struct run_options o = { .preload = 1, .options = options, .timeout = 10 };
	struct run r = run_target("cli_misc", "memb", "family", &o);
	char command[4400];
	snprintf(command, sizeof(command), "ls %s | grep -c '^graph\\.[0-9]*\\.dot$'", dir);
	FILE *p = popen(command, "r");
	int n = 0;
	cr_assert(fscanf(p, "%d", &n) == 1);
	pclose(p);
	cr_expect_geq(n, 2, "a file per process (parent, child): %d", n);
	run_free(&r);
	cli_remove_dir(dir);
}
