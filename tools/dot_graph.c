/* The tracer's lock dependency graphs read line by line, each line as one of
 * the statements graph_format.h prints, merged, and written back with the
 * same formats. Names, sites and labels stay escaped as they were written:
 * they are written back as read, and two are equal when their escaped texts
 * are (escaping is one to one, and adds nothing inside the ": " and
 * " (pid " that labels are split at). */
#define _GNU_SOURCE
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dot_graph.h"
#include "../preload/base/graph_format.h"

#define NODE_KIND_NAME(name, kind, style) kind,
#define NODE_KIND_STYLE(name, kind, style) style,
#define EDGE_MARK_TEXT(name, attr, text) text,
static const char *const node_kinds[] = { GRAPH_NODE_KINDS(NODE_KIND_NAME) };
static const char *const node_styles[] = { GRAPH_NODE_KINDS(NODE_KIND_STYLE) };
static const char *const edge_marks[] = { GRAPH_EDGE_MARKS(EDGE_MARK_TEXT) };
#define NKINDS (sizeof(node_kinds) / sizeof(node_kinds[0]))
#define NMARKS (sizeof(edge_marks) / sizeof(edge_marks[0]))

struct dot_node {
	char *name;
	enum graph_node_kind kind;
};

struct dot_edge {
	const struct dot_node *from, *to;
	char *site, *label;
	unsigned marks;              /* 1 << enum graph_edge_mark */
};

/* ---- the graph: nodes by name, edges by their ends (tsearch trees) ------ */

static int node_order(const void *a, const void *b)
{
	return strcmp(((const struct dot_node *)a)->name, ((const struct dot_node *)b)->name);
}

static int edge_order(const void *a, const void *b)
{
	const struct dot_edge *x = a, *y = b;
	int by_from = strcmp(x->from->name, y->from->name);
	return by_from ? by_from : strcmp(x->to->name, y->to->name);
}

/* Where key is in the tree, or where it was put if new. */
static void *tree_slot(const void *key, void **tree, int (*order)(const void *, const void *))
{
	void *slot = tsearch(key, tree, order);
	if (!slot) {
		fputs("lockdep-rcu: out of memory\n", stderr);
		exit(2);
	}
	return slot;
}

static struct dot_node *find_node(struct dot_graph *g, char *name)
{
	struct dot_node key = { name, 0 };
	void *slot = tfind(&key, &g->node_tree, node_order);
	return slot ? *(struct dot_node **)slot : NULL;
}

/* The first node of a name wins. Takes name. */
static void add_node(struct dot_graph *g, char *name, enum graph_node_kind kind)
{
	struct dot_node key = { name, kind }, **slot = tree_slot(&key, &g->node_tree, node_order);
	if (*slot != &key) {
		free(name);
		return;
	}
	*slot = xmalloc(sizeof(**slot));
	**slot = key;
	grow(&g->nodes, &g->nodes_cap, g->nnodes + 1, sizeof(*g->nodes));
	g->nodes[g->nnodes++] = *slot;
}

/* The first edge between two nodes wins, and it is part of a cycle when
 * any is: a cycle in any merged graph is one in the union. Takes e's
 * strings. */
static void add_edge(struct dot_graph *g, const struct dot_edge *e)
{
	struct dot_edge **slot = tree_slot(e, &g->edge_tree, edge_order);
	if (*slot != e) {
		(*slot)->marks |= e->marks & 1u << GRAPH_MARK_CYCLE;
		free(e->site);
		free(e->label);
		return;
	}
	*slot = xmalloc(sizeof(**slot));
	**slot = *e;
	grow(&g->edges, &g->edges_cap, g->nedges + 1, sizeof(*g->edges));
	g->edges[g->nedges++] = *slot;
}

/* ---- reading a statement ------------------------------------------------- */

struct line {
	const char *p;               /* how far it reads as the statement */
	const char *error;           /* why not further; or NULL and... */
	const char *expected;        /* ...the format's text expected at p */
};

/* A quoted string's text, still escaped; l at its closing quote. */
static char *quoted(struct line *l)
{
	const char *start = l->p;
	for (; *l->p != '"'; l->p++) {
		if (!*l->p) {
			l->error = "a quoted string does not end on its line";
			return NULL;
		}
		if (*l->p == GRAPH_ESCAPE && !graph_escaped(*++l->p)) {
			l->error = "only \\\" and \\\\ are escaped in lockdep-rcu's graphs";
			return NULL;
		}
	}
	return xstrndup(start, (size_t)(l->p - start));
}

/* Past any of texts that l goes on with, in any order (the previous
 * version appended the cycle's mark when merging), each once. */
static void choose(struct line *l, const char *const *texts, size_t ntexts, unsigned *chosen)
{
	for (size_t k = 0; k < ntexts; k++) {
		size_t len = strlen(texts[k]);
		if (len && !(*chosen & 1u << k) && !strncmp(l->p, texts[k], len)) {
			l->p += len;
			*chosen |= 1u << k;
			k = (size_t)-1;   /* and again from the first */
		}
	}
}

/* Reads l as format (a statement of graph_format.h, its tab aside) prints
 * it: its text exactly; each %s in quotes a string, into *strings++; each
 * %s outside quotes any of texts, their bits into *chosen. 0, or -1 with l
 * where it stops and why. */
static int scan(struct line *l, const char *format, char **strings, const char *const *texts, size_t ntexts,
		unsigned *chosen)
{
	int in_quotes = 0;
	for (format += *format == '\t'; *format != '\n';) {
		if (!strncmp(format, "%s", 2)) {
			if (in_quotes && !(*strings++ = quoted(l)))
				return -1;
			if (!in_quotes)
				choose(l, texts, ntexts, chosen);
			format += 2;
		} else if (*l->p == *format) {
			in_quotes ^= *format == '"';
			l->p++;
			format++;
		} else {
			l->expected = format;
			return -1;
		}
	}
	if (*l->p)
		l->error = "more after the statement (one statement per line)";
	return *l->p ? -1 : 0;
}

static int read_label(struct line *l, struct dot_graph *g)
{
	char *label = NULL;
	if (scan(l, GRAPH_LABEL_LINE, &label, NULL, 0, NULL)) {
		free(label);
		return -1;
	}
	grow(&g->labels, &g->labels_cap, g->nlabels + 1, sizeof(*g->labels));
	g->labels[g->nlabels++] = label;
	return 0;
}

static int read_node_defaults(struct line *l, struct dot_graph *g)
{
	(void)g;   /* written as the tracer writes them */
	return scan(l, GRAPH_NODE_DEFAULTS, NULL, NULL, 0, NULL);
}

static int read_node(struct line *l, struct dot_graph *g)
{
	char *s[2] = { NULL, NULL };   /* name, kind */
	unsigned styles = 0;
	size_t kind = 0;
	int status = scan(l, GRAPH_NODE_LINE, s, node_styles, NKINDS, &styles);
	while (!status && kind < NKINDS && strcmp(s[1], node_kinds[kind]))
		kind++;
	if (!status && kind == NKINDS)
		l->error = "a kind of node lockdep-rcu's graphs do not have";
	else if (!status && styles != (*node_styles[kind] ? 1u << kind : 0))
		l->error = "not the shape and style of its kind of node";
	if (status || l->error) {
		free(s[0]);
		status = -1;
	} else {
		add_node(g, s[0], (enum graph_node_kind)kind);
	}
	free(s[1]);
	return status;
}

static int read_edge(struct line *l, struct dot_graph *g)
{
	char *s[4] = { NULL, NULL, NULL, NULL };   /* from, to, site, label */
	struct dot_edge e = { 0 };
	int status = scan(l, GRAPH_EDGE_LINE, s, edge_marks, NMARKS, &e.marks);
	if (!status && (!(e.from = find_node(g, s[0])) || !(e.to = find_node(g, s[1])))) {
		l->error = "an edge from or to a node not declared before it";
		status = -1;
	}
	if (!status) {
		e.site = s[2];
		e.label = s[3];
		s[2] = s[3] = NULL;
		add_edge(g, &e);
	}
	for (size_t i = 0; i < 4; i++)
		free(s[i]);
	return status;
}

/* One statement inside the braces into g. -1 with l at the error of the
 * statement it reads furthest as. */
static int statement(struct line *l, struct dot_graph *g)
{
	static int (*const readers[])(struct line *, struct dot_graph *) = { read_label, read_node_defaults,
									     read_node, read_edge };
	struct line furthest = { l->p, "expected a quoted name, graph [...] or node [...]", NULL };
	for (size_t i = 0; i < sizeof(readers) / sizeof(readers[0]); i++) {
		struct line tried = *l;
		if (!readers[i](&tried, g))
			return 0;
		if (tried.p > furthest.p)
			furthest = tried;
	}
	*l = furthest;
	return -1;
}

/* "file:line: what", what is expected saying what is there instead. */
static char *message(const char *file, size_t number, const struct line *l)
{
	if (!l->expected)
		return xasprintf("%s:%zu: %s", file, number, l->error);
	int expected = (int)strcspn(l->expected, "%\n"), found = (int)strlen(l->p);
	if (!found)
		return xasprintf("%s:%zu: expected '%.*s' before the end of the line", file, number, expected,
				 l->expected);
	return xasprintf("%s:%zu: expected '%.*s', not '%.*s%s'", file, number, expected, l->expected,
			 found > 24 ? 24 : found, l->p, found > 24 ? "..." : "");
}

int dot_graph_merge(struct dot_graph *g, const char *file, const char *text, char **error)
{
	enum { BEFORE, INSIDE, AFTER } state = BEFORE;
	size_t number = 0;
	char *line = NULL;
	struct line l;
	int failed = 0;
	for (const char *at = text; *at && !failed;) {
		const char *start = at;
		size_t len = strcspn(at, "\n");
		at += len + (at[len] == '\n');
		number++;
		while (len && (*start == ' ' || *start == '\t'))
			start++, len--;
		while (len && strchr(" \t\r", start[len - 1]))
			len--;
		if (!len)
			continue;   /* blank lines are nothing */
		free(line);
		line = xstrndup(start, len);
		l = (struct line){ line, NULL, NULL };
		if (state == BEFORE) {
			failed = scan(&l, GRAPH_HEAD, NULL, NULL, 0, NULL);
			if (failed)
				l = (struct line){ line, "expected \"digraph lockdep {\" on a line of its own", NULL };
			state = INSIDE;
		} else if (state == INSIDE && *line == '}') {
			failed = scan(&l, GRAPH_TAIL, NULL, NULL, 0, NULL);
			state = AFTER;
		} else if (state == INSIDE) {
			failed = statement(&l, g);
		} else {
			failed = 1;
			l.error = "text after the graph's closing }";
		}
	}
	if (failed)
		*error = message(file, number, &l);
	else if (state != AFTER)
		*error = xasprintf("%s:%zu: %s", file, number,
				   state == BEFORE ? "no graph in it" : "the graph does not end (no closing })");
	free(line);
	return failed || state != AFTER ? -1 : 0;
}

/* ---- writing --------------------------------------------------------------- */

/* Programs and pids merged, at most this many of each by name. */
#define LABEL_PROGRAMS 4
#define LABEL_PIDS 3

/* Of labels "PREFIX: PROGRAM (pid N)": the first prefix, then the programs
 * in the order first seen, each with its pids, as in
 * "lockdep-rcu 0.1: lock_order.memb (pids 17313, 17320), demo (pid 5)". */
static void merged_label(const struct dot_graph *g, struct strbuf *out)
{
	if (g->nlabels == 1) {
		sb_puts(out, g->labels[0]);
		return;
	}
	struct program {
		const char *name;
		int len;
		size_t npids;
		struct strbuf pids;   /* the first LABEL_PIDS */
	} programs[LABEL_PROGRAMS];
	size_t nprograms = 0, more_programs = 0;
	const char *prefix = "lockdep-rcu";
	int prefix_len = -1;   /* all of it, until a label has one */
	for (size_t i = 0; i < g->nlabels; i++) {
		const char *label = g->labels[i], *colon = strstr(label, ": ");
		const char *name = colon ? colon + 2 : label, *end = name + strlen(name);
		const char *pid = strstr(name, " (pid ");
		if (!pid || end[-1] != ')')
			pid = end;
		if (colon && prefix_len < 0) {
			prefix = label;
			prefix_len = (int)(colon - label);
		}
		size_t k = 0;
		while (k < nprograms && (programs[k].len != pid - name || strncmp(programs[k].name, name, pid - name)))
			k++;
		if (k == LABEL_PROGRAMS) {
			more_programs++;
			continue;
		}
		if (k == nprograms)
			programs[nprograms++] = (struct program){ name, (int)(pid - name), 0, { 0 } };
		if (pid != end && ++programs[k].npids <= LABEL_PIDS)
			sb_printf(&programs[k].pids, "%s%.*s", programs[k].npids > 1 ? ", " : "",
				  (int)(end - 1 - (pid + 6)), pid + 6);
	}
	sb_printf(out, "%.*s: ", prefix_len, prefix);
	for (size_t k = 0; k < nprograms; k++) {
		sb_printf(out, "%s%.*s", k ? ", " : "", programs[k].len, programs[k].name);
		if (programs[k].npids)
			sb_printf(out, " (pid%s %s", programs[k].npids > 1 ? "s" : "", programs[k].pids.s);
		if (programs[k].npids > LABEL_PIDS)
			sb_printf(out, " and %zu more", programs[k].npids - LABEL_PIDS);
		if (programs[k].npids)
			sb_putc(out, ')');
		sb_free(&programs[k].pids);
	}
	if (more_programs)
		sb_printf(out, " and %zu more", more_programs);
}

static const char *mark(const struct dot_edge *e, enum graph_edge_mark m)
{
	return e->marks & 1u << m ? edge_marks[m] : "";
}

void dot_graph_write(const struct dot_graph *g, struct strbuf *out)
{
	sb_puts(out, GRAPH_HEAD);
	if (g->nlabels) {
		struct strbuf label = { 0 };
		merged_label(g, &label);
		sb_printf(out, GRAPH_LABEL_LINE, label.s);
		sb_free(&label);
	}
	sb_puts(out, GRAPH_NODE_DEFAULTS);
	for (size_t i = 0; i < g->nnodes; i++)
		sb_printf(out, GRAPH_NODE_LINE, g->nodes[i]->name, node_kinds[g->nodes[i]->kind],
			  node_styles[g->nodes[i]->kind]);
	for (size_t i = 0; i < g->nedges; i++) {
		const struct dot_edge *e = g->edges[i];
		sb_printf(out, GRAPH_EDGE_LINE, e->from->name, e->to->name, e->site, e->label, mark(e, GRAPH_MARK_CYCLE),
			  mark(e, GRAPH_MARK_SYNC), mark(e, GRAPH_MARK_READ), mark(e, GRAPH_MARK_URCU));
	}
	sb_puts(out, GRAPH_TAIL);
}

static void free_node(void *node)
{
	free(((struct dot_node *)node)->name);
	free(node);
}

static void free_edge(void *edge)
{
	free(((struct dot_edge *)edge)->site);
	free(((struct dot_edge *)edge)->label);
	free(edge);
}

void dot_graph_free(struct dot_graph *g)
{
	for (size_t i = 0; i < g->nlabels; i++)
		free(g->labels[i]);
	free(g->labels);
	tdestroy(g->node_tree, free_node);
	tdestroy(g->edge_tree, free_edge);
	free(g->nodes);
	free(g->edges);
	memset(g, 0, sizeof(*g));
}
