/* The lock-class dependency graphs the tracer writes at exit (option
 * graph_path), read, merged and written back. Only the tracer's own DOT is
 * read, as preload/base/graph_format.h defines it (one statement per line,
 * its attributes, its escapes); anything else is refused with its file and
 * line: this is a reader of one program's output, not of DOT. Pure logic. */
#ifndef LOCKDEP_RCU_DOT_GRAPH_H
#define LOCKDEP_RCU_DOT_GRAPH_H

#include <stddef.h>
#include "util.h"

/* A graph, or several merged: nodes by name and edges by (from, to) in the
 * order first seen. */
struct dot_graph {
	char **labels;        /* the inputs' graph labels, in order */
	size_t nlabels, labels_cap;
	struct dot_node **nodes;
	size_t nnodes, nodes_cap;
	struct dot_edge **edges;
	size_t nedges, edges_cap;
	void *node_tree, *edge_tree;   /* tsearch(3): nodes by name, edges by their ends */
};

/* Adds the graph in text (from file, for messages) to g: new nodes and
 * edges are appended, a node or edge seen before keeps what it had; an
 * edge highlighted as part of a cycle in any input is highlighted. 0, or
 * -1 with *error set to "file:line: what" (a new string), g then holding
 * the statements before that line: callers stop there. */
int dot_graph_merge(struct dot_graph *g, const char *file, const char *text, char **error);

/* Writes g in the tracer's DOT, its label naming the programs and pids
 * merged. */
void dot_graph_write(const struct dot_graph *g, struct strbuf *out);

void dot_graph_free(struct dot_graph *g);

#endif
