/* graph_format.h - the lock dependency graph's DOT: what the tracer writes
 * at exit (graph_path=FILE, graph/graph_dump.c) and `lockdep-rcu graph`
 * reads, merges and writes back (tools/dot_graph.c). Both compile this
 * header: the reader takes exactly the statements, attributes and escapes
 * defined here. One statement per line:
 *
 *   digraph lockdep {                                      GRAPH_HEAD
 *   	graph [label="lockdep-rcu 0.1: prog (pid 123)"];     GRAPH_LABEL_ATTR
 *   	node [shape=box, fontname="monospace"];              GRAPH_NODE_DEFAULTS
 *   	"A" [kind="lock"];                                   a class: GRAPH_NODE_KINDS
 *   	"rcu_read_lock_memb" [kind="rcu", shape=ellipse, style=filled, fillcolor="#cfe2ff"];
 *   	"srcu:domain" [kind="srcu", shape=hexagon, style=filled, fillcolor="#fff3cd"];
 *   	"A" -> "B" [site="nest tests/targets/lock_order.c:18", label="lock_order.c:18"];
 *   	"B" -> "A" [site="...", label="...", color="red", penwidth=2, cycle=1];
 *   	"L" -> "rcu_read_lock_memb" [site="...", label="...", style=dashed, sync=1];
 *   }                                                      GRAPH_TAIL
 *
 * Nodes are lock classes as reports name them, edges "held -> acquired"
 * with the site of their first acquisition (GRAPH_EDGE_ATTRS), then the
 * marks that apply (GRAPH_EDGE_MARKS). A name or a quoted value has '"'
 * and '\' escaped with a '\' (graph_escaped()), nothing else: the writer
 * turns control characters into spaces. A bare value is a number or an
 * identifier. Includes nothing: both sides use it. */
#ifndef LOCKDEP_RCU_GRAPH_FORMAT_H
#define LOCKDEP_RCU_GRAPH_FORMAT_H

#define GRAPH_HEAD "digraph lockdep {\n"
#define GRAPH_TAIL "}\n"
/* The graph statement's one attribute: which program and pid it is. */
#define GRAPH_LABEL_STATEMENT "graph"
#define GRAPH_LABEL_ATTR "label"
/* The node defaults, written once after the label. */
#define GRAPH_NODE_DEFAULTS "\tnode [shape=box, fontname=\"monospace\"];\n"

/* X(NAME, its "kind" value, the style written after it) */
#define GRAPH_NODE_KIND_ATTR "kind"
#define GRAPH_NODE_KINDS(X)                                                      \
	X(LOCK, "lock", "")                                                      \
	X(RCU, "rcu", ", shape=ellipse, style=filled, fillcolor=\"#cfe2ff\"")    \
	X(SRCU, "srcu", ", shape=hexagon, style=filled, fillcolor=\"#fff3cd\"")
enum graph_node_kind {
#define GRAPH_NODE_KIND_ENUM(name, kind, style) GRAPH_NODE_##name,
	GRAPH_NODE_KINDS(GRAPH_NODE_KIND_ENUM)
#undef GRAPH_NODE_KIND_ENUM
};

/* Every edge: "function file:line" of the first acquisition and what the
 * drawing shows of it, "file:line" (basename). */
#define GRAPH_EDGE_SITE_ATTR "site"
#define GRAPH_EDGE_LABEL_ATTR "label"
/* X(NAME, the attribute that says it, the attributes written): an edge of
 * a reported cycle (red), a grace-period wait (dashed), acquisitions only
 * ever for read (empty arrowhead), made only by liburcu's own threads
 * (dotted grey). */
#define GRAPH_EDGE_CYCLE_ATTR "cycle"
#define GRAPH_EDGE_MARKS(X)                                                      \
	X(CYCLE, GRAPH_EDGE_CYCLE_ATTR, ", color=\"red\", penwidth=2, cycle=1")  \
	X(SYNC, "sync", ", style=dashed, sync=1")                                \
	X(READ, "read", ", arrowhead=empty, read=1")                             \
	X(URCU, "urcu", ", style=dotted, color=\"grey\", urcu=1")
enum graph_edge_mark {
#define GRAPH_EDGE_MARK_ENUM(name, attr, text) GRAPH_MARK_##name,
	GRAPH_EDGE_MARKS(GRAPH_EDGE_MARK_ENUM)
#undef GRAPH_EDGE_MARK_ENUM
};
/* A node's and an edge's statement as printf formats: the node's name, its
 * kind and that kind's style (GRAPH_NODE_KINDS); the edge's ends, site,
 * label, then each of GRAPH_EDGE_MARKS' texts in order, or "". Every %s in
 * quotes is escaped. The graph's label statement, its label escaped. */
#define GRAPH_NODE_LINE "\t\"%s\" [" GRAPH_NODE_KIND_ATTR "=\"%s\"%s];\n"
#define GRAPH_EDGE_LINE                                                          \
	"\t\"%s\" -> \"%s\" [" GRAPH_EDGE_SITE_ATTR "=\"%s\", " GRAPH_EDGE_LABEL_ATTR "=\"%s\"%s%s%s%s];\n"
#define GRAPH_LABEL_LINE "\t" GRAPH_LABEL_STATEMENT " [" GRAPH_LABEL_ATTR "=\"%s\"];\n"

/* Escaped inside quotes, with GRAPH_ESCAPE before it. */
#define GRAPH_ESCAPE '\\'
static inline int graph_escaped(char c)
{
	return c == '"' || c == GRAPH_ESCAPE;
}

#endif
