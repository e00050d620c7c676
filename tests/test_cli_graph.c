/* lockdep-rcu graph: merging the tracer's lock dependency graphs (the union
 * of classes and dependencies, a cycle highlighted when any input has it),
 * refusing what is not the tracer's DOT with its file and line, and drawing
 * with Graphviz's dot, or saying it is missing and writing the DOT. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdlib.h>
#include <unistd.h>
#include "harness.h"
#include "cli_helpers.h"

static const char graph_a[] =
	"digraph lockdep {\n"
	"\tgraph [label=\"lockdep-rcu 0.1: lock_order.memb (pid 17313)\"];\n"
	"\tnode [shape=box, fontname=\"monospace\"];\n"
	"\t\"A\" [kind=\"lock\"];\n"
	"\t\"B\" [kind=\"lock\"];\n"
	"\t\"rcu_read_lock_memb\" [kind=\"rcu\", shape=ellipse, style=filled, fillcolor=\"#cfe2ff\"];\n"
	"\t\"A\" -> \"B\" [site=\"nest tests/targets/lock_order.c:18\", label=\"lock_order.c:18\"];\n"
	"\t\"B\" -> \"A\" [site=\"nest tests/targets/lock_order.c:18\", label=\"lock_order.c:18\", color=\"red\", "
	"penwidth=2, cycle=1];\n"
	"\t\"config_lock\" [kind=\"lock\"];\n"
	"\t\"config_lock\" -> \"rcu_read_lock_memb\" [site=\"update tests/u.c:7\", label=\"u.c:7\", style=dashed, "
	"sync=1];\n"
	"}\n";

/* Another process: A -> B again (another site, part of a cycle there),
 * new classes, a name that needs escaping. */
static const char graph_b[] =
	"digraph lockdep {\n"
	"\tgraph [label=\"lockdep-rcu 0.1: lock_order.memb (pid 17400)\"];\n"
	"\tnode [shape=box, fontname=\"monospace\"];\n"
	"\t\"A\" [kind=\"lock\"];\n"
	"\t\"B\" [kind=\"lock\"];\n"
	"\t\"srcu:domain_a\" [kind=\"srcu\", shape=hexagon, style=filled, fillcolor=\"#fff3cd\"];\n"
	"\t\"odd \\\"name\\\" \\\\ here\" [kind=\"lock\"];\n"
	"\n"
	"\t\"A\" -> \"B\" [site=\"other tests/o.c:99\", label=\"o.c:99\", color=\"red\", penwidth=2, cycle=1];\n"
	"\t\"B\" -> \"srcu:domain_a\" [site=\"sync tests/s.c:3\", label=\"s.c:3\"];\n"
	"\t\"odd \\\"name\\\" \\\\ here\" -> \"A\" [site=\"odd tests/d.c:4\", label=\"d.c:4\"];\n"
	"}\n";

static char *write_in(const char *dir, const char *name, const char *text)
{
	char *path;
	cr_assert(asprintf(&path, "%s/%s", dir, name) > 0);
	cli_write(path, text, strlen(text));
	return path;
}

/* The lines of text that start with a tab and a quote: its nodes and edges. */
static int has_line(const char *text, const char *line)
{
	char *needle;
	cr_assert(asprintf(&needle, "\n%s\n", line) > 0);
	int found = strstr(text, needle) != NULL;
	free(needle);
	return found;
}

static int statements(const char *text)
{
	return count_of(text, "\n\t\"");
}

Test(cli_graph, merging_two_graphs_gives_their_union)
{
	char *dir = cli_temp_dir();
	char *a = write_in(dir, "a.dot", graph_a), *b = write_in(dir, "b.dot", graph_b);
	struct run r = cli_env(0, NULL, "graph", a, b, NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_empty(r.err);
	const char *expected[] = {
		"digraph lockdep {",
		"\tgraph [label=\"lockdep-rcu 0.1: lock_order.memb (pids 17313, 17400)\"];",
		"\t\"A\" [kind=\"lock\"];",
		"\t\"B\" [kind=\"lock\"];",
		"\t\"rcu_read_lock_memb\" [kind=\"rcu\", shape=ellipse, style=filled, fillcolor=\"#cfe2ff\"];",
		"\t\"config_lock\" [kind=\"lock\"];",
		"\t\"srcu:domain_a\" [kind=\"srcu\", shape=hexagon, style=filled, fillcolor=\"#fff3cd\"];",
		"\t\"odd \\\"name\\\" \\\\ here\" [kind=\"lock\"];",
		/* the first site seen, highlighted because b has it in a cycle */
		"\t\"A\" -> \"B\" [site=\"nest tests/targets/lock_order.c:18\", label=\"lock_order.c:18\", color=\"red\", "
		"penwidth=2, cycle=1];",
		"\t\"B\" -> \"A\" [site=\"nest tests/targets/lock_order.c:18\", label=\"lock_order.c:18\", color=\"red\", "
		"penwidth=2, cycle=1];",
		"\t\"config_lock\" -> \"rcu_read_lock_memb\" [site=\"update tests/u.c:7\", label=\"u.c:7\", style=dashed, "
		"sync=1];",
		"\t\"B\" -> \"srcu:domain_a\" [site=\"sync tests/s.c:3\", label=\"s.c:3\"];",
		"\t\"odd \\\"name\\\" \\\\ here\" -> \"A\" [site=\"odd tests/d.c:4\", label=\"d.c:4\"];",
		"}",
	};
	char *out = NULL;
	cr_assert(asprintf(&out, "\n%s", r.out) > 0);
	for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++)
		cr_expect(has_line(out, expected[i]), "missing: %s\nin:\n%s", expected[i], r.out);
	cr_expect_eq(statements(out), 11, "6 classes and 5 dependencies, nothing more:\n%s", r.out);
	/* read back: the tool reads what it writes, and it is a fixed point */
	char *merged = write_in(dir, "merged.dot", r.out);
	struct run again = cli_env(0, NULL, "graph", merged, NULL);
	cr_expect_eq(again.exit_code, 0, "%s", again.err);
	cr_expect_str_eq(again.out, r.out);
	run_free(&again);
	/* merged with an input again: nothing new */
	again = cli_env(0, NULL, "graph", "-o", "/dev/stdout", merged, a, NULL);
	cr_expect_eq(again.exit_code, 2, "-o needs .svg or .dot: %s", again.err);
	run_free(&again);
	char *twice = NULL;
	cr_assert(asprintf(&twice, "%s/twice.dot", dir) > 0);
	again = cli_env(0, NULL, "graph", "-o", twice, merged, b, NULL);
	cr_expect_eq(again.exit_code, 0, "%s", again.err);
	char *written = cli_read(twice);
	cr_assert(written);
	cr_expect_eq(statements(written), 11, "%s", written);
	free(written);
	run_free(&again);
	free(twice);
	free(merged);
	free(out);
	run_free(&r);
	free(a);
	free(b);
	cli_remove_dir(dir);
}

Test(cli_graph, what_is_not_the_tracers_dot_is_refused_with_file_and_line)
{
	static const struct { const char *text; int line; const char *why; } cases[] = {
		{ "graph lockdep {\n}\n", 1, "expected \"digraph lockdep {\"" },
		{ "digraph lockdep {\n\t\"A\" [kind=\"lock\"];\n", 2, "the graph does not end" },
		{ "digraph lockdep {\n\t\"A\" [kind=\"lock\"]; \"B\";\n}\n", 2, "one statement per line" },
		{ "digraph lockdep {\n\tA [kind=\"lock\"];\n}\n", 2, "expected a quoted name" },
		{ "digraph lockdep {\n\t\"A\" -- \"B\";\n}\n", 2, "expected '> \"', not '- \"B\";'" },
		{ "digraph lockdep {\n\t\"A\\n\" [kind=\"lock\"];\n}\n", 2, "only \\\" and \\\\ are escaped" },
		{ "digraph lockdep {\n\t\"A\" [kind=lock\"];\n}\n", 2, "expected '\"', not 'lock\"];'" },
		{ "digraph lockdep {\n\t\"A\" [kind=\"lock\", weight=3];\n}\n", 2, "expected '];', not ', weight=3];'" },
		{ "digraph lockdep {\n\t\"A\" [kind=\"mutex\"];\n}\n", 2, "a kind of node lockdep-rcu's graphs do not have" },
		{ "digraph lockdep {\n\t\"A\" [kind=\"lock\"];\n\t\"A\" -> \"C\" [site=\"s\", label=\"l\"];\n}\n", 3,
		  "an edge from or to a node not declared before it" },
		{ "digraph lockdep {\n\t\"A\" [kind=\"lock\"\n];\n}\n", 2, "expected '];' before the end of the line" },
		{ "digraph lockdep {\n\t\"A\" [kind=\"lock];\n}\n", 2, "does not end on its line" },
		{ "digraph lockdep {\n}\n\"A\";\n", 3, "text after the graph's closing }" },
		{ "\n\n", 2, "no graph in it" },
		{ "digraph lockdep {\n\tsubgraph x { };\n}\n", 2, "expected a quoted name" },
	};
	char *dir = cli_temp_dir();
	char *good = write_in(dir, "good.dot", graph_a);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char name[32];
		snprintf(name, sizeof(name), "bad%zu.dot", i);
		char *bad = write_in(dir, name, cases[i].text);
		struct run r = cli_env(0, NULL, "graph", good, bad, NULL);
		char expected[4400];
		snprintf(expected, sizeof(expected), "lockdep-rcu graph: %s:%d: ", bad, cases[i].line);
		cr_expect_eq(r.exit_code, 2, "%s", cases[i].text);
		cr_expect(!strncmp(r.err, expected, strlen(expected)), "expected '%s' in:\n%s", expected, r.err);
		cr_expect(strstr(r.err, cases[i].why), "expected '%s' in:\n%s", cases[i].why, r.err);
		cr_expect_str_empty(r.out, "nothing written from part of the input");
		run_free(&r);
		free(bad);
	}
	struct run r = cli_env(0, NULL, "graph", "/dev/zero", NULL);
	cr_expect_eq(r.exit_code, 2, "exit status %d, expected %d:\n%s%s", r.exit_code, 2, r.out, r.err);
	cr_expect(strstr(r.err, "/dev/zero: cannot read: a character device"), "%s", r.err);
	run_free(&r);
	free(good);
	cli_remove_dir(dir);
}

/* An edge's marks are written in graph_format.h's order, the tracer's, also
 * when a cycle comes from another input; the order the previous version
 * wrote then (the cycle's mark last) is still read. */
Test(cli_graph, a_cycle_merged_into_a_marked_edge_is_written_as_the_tracer_writes_it)
{
	static const char nodes[] = "digraph lockdep {\n\t\"A\" [kind=\"lock\"];\n\t\"B\" [kind=\"lock\"];\n";
	static const char written[] = "\t\"A\" -> \"B\" [site=\"s\", label=\"l\", color=\"red\", penwidth=2, cycle=1, "
				      "style=dashed, sync=1];";
	char *dir = cli_temp_dir(), *text;
	cr_assert(asprintf(&text, "%s%s", nodes, "\t\"A\" -> \"B\" [site=\"s\", label=\"l\", style=dashed, sync=1];\n}\n") > 0);
	char *sync = write_in(dir, "sync.dot", text);
	free(text);
	cr_assert(asprintf(&text, "%s%s", nodes, "\t\"A\" -> \"B\" [site=\"t\", label=\"m\", color=\"red\", penwidth=2, cycle=1];\n}\n") > 0);
	char *cycle = write_in(dir, "cycle.dot", text);
	free(text);
	cr_assert(asprintf(&text, "%s%s", nodes,
			   "\t\"A\" -> \"B\" [site=\"s\", label=\"l\", style=dashed, sync=1, color=\"red\", penwidth=2, cycle=1];\n}\n") > 0);
	char *old_order = write_in(dir, "old_order.dot", text);
	free(text);
	struct run r = cli_env(0, NULL, "graph", sync, cycle, NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, written), "expected\n%s\nin:\n%s", written, r.out);
	run_free(&r);
	r = cli_env(0, NULL, "graph", old_order, NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, written), "expected\n%s\nin:\n%s", written, r.out);
	run_free(&r);
	free(sync);
	free(cycle);
	free(old_order);
	cli_remove_dir(dir);
}

/* Graphviz draws it: an SVG document naming every class. */
Test(cli_graph, renders_svg_with_graphviz)
{
	cr_assert_eq(system("command -v dot >/dev/null"), 0, "Graphviz is needed: bash tools/install-deps.sh");
	char *dir = cli_temp_dir();
	char *a = write_in(dir, "a.dot", graph_a), *b = write_in(dir, "b.dot", graph_b), *svg;
	cr_assert(asprintf(&svg, "%s/graph.svg", dir) > 0);
	struct run r = cli_env(30, NULL, "graph", "-o", svg, a, b, NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_str_empty(r.err);
	char *text = cli_read(svg);
	cr_assert(text, "no %s", svg);
	cr_expect(strstr(text, "<svg") && strstr(text, "</svg>"), "an SVG document:\n%.500s", text);
	const char *names[] = { "<title>A</title>", "<title>B</title>", "<title>rcu_read_lock_memb</title>",
				"<title>srcu:domain_a</title>", "<title>config_lock</title>", "<title>A&#45;&gt;B</title>" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cr_expect(strstr(text, names[i]), "%s in the SVG", names[i]);
	cr_expect(strstr(text, "stroke=\"red\""), "the cycle in red");
	free(text);
	run_free(&r);
	free(svg);
	free(a);
	free(b);
	cli_remove_dir(dir);
}

/* Without dot: said on stderr, the DOT written beside, exit status 1 (the
 * SVG asked for was not made: a script must notice). */
Test(cli_graph, without_graphviz_writes_the_dot_and_says_so)
{
	char *dir = cli_temp_dir();
	char *a = write_in(dir, "a.dot", graph_a), *svg, *dot, *path_env;
	cr_assert(asprintf(&svg, "%s/graph.svg", dir) > 0);
	cr_assert(asprintf(&dot, "%s/graph.dot", dir) > 0);
	cr_assert(asprintf(&path_env, "PATH=%s", dir) > 0);   /* no dot there */
	const char *env[] = { path_env, NULL };
	struct run r = cli_env(0, env, "graph", "-o", svg, a, NULL);
	char expected[8400];
	snprintf(expected, sizeof(expected),
		 "lockdep-rcu graph: Graphviz's dot not found (apt-get install graphviz); wrote DOT to %s\n", dot);
	cr_expect_str_eq(r.err, expected);
	cr_expect_eq(r.exit_code, 1, "exit status %d, expected %d:\n%s%s", r.exit_code, 1, r.out, r.err);
	cr_expect_neq(access(svg, F_OK), 0, "no SVG");
	char *written = cli_read(dot);
	cr_assert(written, "the DOT is written");
	struct run plain = cli_env(0, NULL, "graph", a, NULL);
	cr_expect_str_eq(written, plain.out);
	run_free(&plain);
	free(written);
	run_free(&r);
	free(path_env);
	free(svg);
	free(dot);
	free(a);
	cli_remove_dir(dir);
}

/* The tracer's own graph (graph_path) of a known program: lock_order abba
 * takes A then B, then B then A: exactly those two edges, both red. Two
 * runs merged: the same two edges, both pids in the label. */
Test(cli_graph, the_graph_of_abba_has_exactly_its_edges_with_the_cycle_highlighted)
{
	char *dir = cli_temp_dir();
	char *files[2];
	for (int i = 0; i < 2; i++) {
		char options[4400];
		snprintf(options, sizeof(options), "graph_path=%s/graph%d.dot:exitcode=0", dir, i);
		struct run_options o = { .preload = 1, .options = options };
		struct run t = run_target("lock_order", "memb", "abba", &o);
		cr_assert_eq(t.exit_code, 0, "%s", t.err);
		run_free(&t);
		cr_assert(asprintf(&files[i], "%s/graph%d.dot", dir, i) > 0);
	}
	struct run r = cli_env(0, NULL, "graph", files[0], NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_eq(count_of(r.out, " -> "), 2, "exactly two edges:\n%s", r.out);
	const char *ab = strstr(r.out, "\t\"A\" -> \"B\" ["), *ba = strstr(r.out, "\t\"B\" -> \"A\" [");
	cr_assert(ab && ba, "%s", r.out);
	cr_expect(strstr(ab, "cycle=1") && strstr(ab, "cycle=1") < strchr(ab, '\n'), "A -> B in the cycle:\n%s", r.out);
	cr_expect(strstr(ba, "cycle=1") && strstr(ba, "cycle=1") < strchr(ba, '\n'), "B -> A in the cycle:\n%s", r.out);
	cr_expect(strstr(ab, "lock_order.c:18"), "the site of A -> B:\n%s", r.out);
	run_free(&r);
	r = cli_env(0, NULL, "graph", files[0], files[1], NULL);
	cr_expect_eq(count_of(r.out, " -> "), 2, "%s", r.out);
	cr_expect(strstr(r.out, "lock_order.memb (pids "), "%s", r.out);
	run_free(&r);
	free(files[0]);
	free(files[1]);
	cli_remove_dir(dir);
}
