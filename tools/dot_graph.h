/* The lock-class dependency graphs the tracer writes at exit (option
 * graph_path), read, merged and written back. Only the tracer's own DOT is
 * read, as preload/base/graph_format.h defines it (one statement per line,
 * its attributes, its escapes); anything else is refused with its file and
 * line: this is a reader of one program's output, not of DOT. Pure logic. */
#ifndef LOCKDEP_RCU_DOT_GRAPH_H
#define LOCKDEP_RCU_DOT_GRAPH_H

#include <stddef.h>
#include "util.h"

struct dot_attr {
	char *key;
	char *value;          /* unescaped */
	int quoted;
};

struct dot_attrs {
	struct dot_attr *v;
	size_t n, cap;
};

struct dot_node {
	char *name;
	struct dot_attrs attrs;
};

struct dot_edge {
	char *from, *to;
	struct dot_attrs attrs;
};

struct dot_index {
	size_t *slots;        /* index + 1 into nodes or edges, 0 free */
	size_t nslots;
};

/* A graph, or several merged: nodes by name and edges by (from, to) in the
 * order first seen. */
struct dot_graph {
	char **labels;        /* the inputs' graph labels, in order */
	size_t nlabels, labels_cap;
	struct dot_node *nodes;
	size_t nnodes, nodes_cap;
	struct dot_edge *edges;
	size_t nedges, edges_cap;
	struct dot_index node_index, edge_index;
};

/* Adds the graph in text (from file, for messages) to g: new nodes and
 * edges are appended, a node or edge seen before keeps what it had; an
 * edge highlighted as part of a cycle in any input is highlighted. 0, or
 * -1 with *error set to "file:line: what" (a new string; g unchanged). */
int dot_graph_merge(struct dot_graph *g, const char *file, const char *text, char **error);

/* Writes g in the tracer's DOT, its label naming the programs and pids
 * merged. */
void dot_graph_write(const struct dot_graph *g, struct strbuf *out);

/* An attribute's value, NULL when absent. */
const char *dot_attr(const struct dot_attrs *a, const char *key);

void dot_graph_free(struct dot_graph *g);

#endif
