#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dot_graph.h"
#include "../preload/base/graph_format.h"

/* ---- attributes ------------------------------------------------------------ */

const char *dot_attr(const struct dot_attrs *a, const char *key)
{
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->v[i].key, key))
			return a->v[i].value;
	return NULL;
}

static void attr_set(struct dot_attrs *a, const char *key, const char *value, int quoted)
{
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->v[i].key, key)) {
			free(a->v[i].value);
			a->v[i].value = xstrdup(value);
			a->v[i].quoted = quoted;
			return;
		}
	grow(&a->v, &a->cap, a->n + 1, sizeof(*a->v));
	a->v[a->n++] = (struct dot_attr){ xstrdup(key), xstrdup(value), quoted };
}

static void attrs_free(struct dot_attrs *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->v[i].key);
		free(a->v[i].value);
	}
	free(a->v);
	memset(a, 0, sizeof(*a));
}

static void attrs_copy(struct dot_attrs *to, const struct dot_attrs *from)
{
	for (size_t i = 0; i < from->n; i++)
		attr_set(to, from->v[i].key, from->v[i].value, from->v[i].quoted);
}

/* ---- reading one line ---------------------------------------------------------- */

struct cursor {
	const char *p;
	const char *error;    /* what went wrong, a literal */
};

static void skip_blanks(struct cursor *c)
{
	while (*c->p == ' ' || *c->p == '\t')
		c->p++;
}

static int expect(struct cursor *c, const char *token, const char *error)
{
	skip_blanks(c);
	size_t n = strlen(token);
	if (strncmp(c->p, token, n)) {
		c->error = error;
		return -1;
	}
	c->p += n;
	return 0;
}

/* "..." with \" and \\ escaped: a new string, or NULL. */
static char *quoted(struct cursor *c)
{
	skip_blanks(c);
	if (*c->p != '"') {
		c->error = "expected a quoted name";
		return NULL;
	}
	struct strbuf b = { 0 };
	sb_puts(&b, "");
	for (c->p++; *c->p != '"'; c->p++) {
		if (!*c->p) {
			c->error = "a quoted string does not end on its line";
			goto bad;
		}
		if (*c->p == GRAPH_ESCAPE) {
			c->p++;
			if (!graph_escaped(*c->p)) {
				c->error = "only \\\" and \\\\ are escaped in lockdep-rcu's graphs";
				goto bad;
			}
		}
		sb_putc(&b, *c->p);
	}
	c->p++;
	return sb_detach(&b);
bad:
	sb_free(&b);
	return NULL;
}

static int is_word_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
	       ch == '.' || ch == '-';
}

/* A bare number or identifier: a new string, or NULL. */
static char *bare(struct cursor *c)
{
	skip_blanks(c);
	const char *start = c->p;
	while (is_word_char(*c->p))
		c->p++;
	if (c->p == start) {
		c->error = "expected a quoted string, a number or an identifier";
		return NULL;
	}
	return xstrndup(start, (size_t)(c->p - start));
}

/* Whether key is an attribute of the tracer's graphs. */
static int known_attribute(const char *key)
{
#define ATTRIBUTE(name) name,
	static const char *const known[] = { GRAPH_ATTRIBUTES(ATTRIBUTE) };
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(key, known[i]))
			return 1;
	return 0;
}

/* "[key=value, ...]" (or nothing), then ";" and the end of the line. */
static int attr_list(struct cursor *c, struct dot_attrs *a)
{
	skip_blanks(c);
	if (*c->p == '[') {
		c->p++;
		skip_blanks(c);
		while (*c->p != ']') {
			char *key = bare(c), *value = NULL;
			if (!key)
				return -1;
			if (!known_attribute(key)) {
				c->error = "an attribute lockdep-rcu's graphs do not have";
				free(key);
				return -1;
			}
			int is_quoted = 0;
			if (expect(c, "=", "expected = after an attribute's name") == 0) {
				skip_blanks(c);
				is_quoted = *c->p == '"';
				value = is_quoted ? quoted(c) : bare(c);
			}
			if (value)
				attr_set(a, key, value, is_quoted);
			free(key);
			free(value);
			if (!value)
				return -1;
			skip_blanks(c);
			if (*c->p == ',') {
				c->p++;
				skip_blanks(c);
			} else if (*c->p != ']') {
				c->error = "expected , or ] in an attribute list";
				return -1;
			}
		}
		c->p++;
	}
	if (expect(c, ";", "expected ; at the end of the statement"))
		return -1;
	skip_blanks(c);
	if (*c->p && *c->p != '\r') {
		c->error = "more after the statement (one statement per line)";
		return -1;
	}
	return 0;
}

/* ---- the graph --------------------------------------------------------------- */

/* Nodes and edges are found by a hash of their names (FNV-1a): merging
 * the graphs of many runs of a big program stays linear. */
static size_t hash(const char *a, const char *b)
{
	size_t h = 1469598103934665603ull;
	for (const char *s = a; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	h = (h ^ 0xff) * 1099511628211ull;
	for (const char *s = b ? b : ""; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static size_t node_hash(const struct dot_graph *g, size_t i)
{
	return hash(g->nodes[i].name, NULL);
}

static size_t edge_hash(const struct dot_graph *g, size_t i)
{
	return hash(g->edges[i].from, g->edges[i].to);
}

/* Keeps index (index + 1 per slot, 0 free) at most half full of n items. */
static void reindex(const struct dot_graph *g, struct dot_index *index, size_t n,
		    size_t (*hash_of)(const struct dot_graph *, size_t))
{
	if (index->nslots >= 2 * n + 2)
		return;
	free(index->slots);
	index->nslots = 64;
	while (index->nslots < 4 * n + 4)
		index->nslots *= 2;
	index->slots = xcalloc(index->nslots, sizeof(*index->slots));
	for (size_t i = 0; i < n; i++) {
		size_t h = hash_of(g, i) & (index->nslots - 1);
		while (index->slots[h])
			h = (h + 1) & (index->nslots - 1);
		index->slots[h] = i + 1;
	}
}

static void index_add(struct dot_index *index, size_t h, size_t i)
{
	h &= index->nslots - 1;
	while (index->slots[h])
		h = (h + 1) & (index->nslots - 1);
	index->slots[h] = i + 1;
}

static struct dot_node *find_node(struct dot_graph *g, const char *name)
{
	if (!g->node_index.nslots)
		return NULL;
	for (size_t h = hash(name, NULL) & (g->node_index.nslots - 1); g->node_index.slots[h];
	     h = (h + 1) & (g->node_index.nslots - 1))
		if (!strcmp(g->nodes[g->node_index.slots[h] - 1].name, name))
			return &g->nodes[g->node_index.slots[h] - 1];
	return NULL;
}

static struct dot_node *node(struct dot_graph *g, const char *name)
{
	struct dot_node *n = find_node(g, name);
	if (n)
		return n;
	grow(&g->nodes, &g->nodes_cap, g->nnodes + 1, sizeof(*g->nodes));
	n = &g->nodes[g->nnodes++];
	memset(n, 0, sizeof(*n));
	n->name = xstrdup(name);
	reindex(g, &g->node_index, g->nnodes - 1, node_hash);
	index_add(&g->node_index, hash(name, NULL), g->nnodes - 1);
	return n;
}

static struct dot_edge *find_edge(struct dot_graph *g, const char *from, const char *to)
{
	if (!g->edge_index.nslots)
		return NULL;
	for (size_t h = hash(from, to) & (g->edge_index.nslots - 1); g->edge_index.slots[h];
	     h = (h + 1) & (g->edge_index.nslots - 1)) {
		struct dot_edge *e = &g->edges[g->edge_index.slots[h] - 1];
		if (!strcmp(e->from, from) && !strcmp(e->to, to))
			return e;
	}
	return NULL;
}

/* A new edge, its attributes copied from a. */
static struct dot_edge *add_edge(struct dot_graph *g, const char *from, const char *to, const struct dot_attrs *a)
{
	grow(&g->edges, &g->edges_cap, g->nedges + 1, sizeof(*g->edges));
	struct dot_edge *e = &g->edges[g->nedges++];
	*e = (struct dot_edge){ xstrdup(from), xstrdup(to), { 0 } };
	attrs_copy(&e->attrs, a);
	reindex(g, &g->edge_index, g->nedges - 1, edge_hash);
	index_add(&g->edge_index, hash(from, to), g->nedges - 1);
	return e;
}

static int highlighted(const struct dot_attrs *a)
{
	const char *cycle = dot_attr(a, GRAPH_EDGE_CYCLE_ATTR);
	return cycle && strcmp(cycle, "0");
}

static void highlight(struct dot_attrs *a)
{
#define SET(name, value, quoted) attr_set(a, name, value, quoted);
	GRAPH_CYCLE_ATTRS(SET)
}

/* Whether the statement starts with the word, and past it if so. */
static int keyword(struct cursor *c, const char *word)
{
	size_t n = strlen(word);
	if (strncmp(c->p, word, n) || is_word_char(c->p[n]))
		return 0;
	c->p += n;
	return 1;
}

/* One statement inside the braces, into g. */
static int statement(struct cursor *c, struct dot_graph *g)
{
	if (keyword(c, GRAPH_LABEL_STATEMENT)) {
		struct dot_attrs a = { 0 };
		int status = attr_list(c, &a);
		const char *label = dot_attr(&a, GRAPH_LABEL_ATTR);
		if (!status && label) {
			grow(&g->labels, &g->labels_cap, g->nlabels + 1, sizeof(*g->labels));
			g->labels[g->nlabels++] = xstrdup(label);
		}
		attrs_free(&a);
		return status;
	}
	if (keyword(c, GRAPH_NODE_STATEMENT)) {   /* the defaults: written as the tracer writes them */
		struct dot_attrs a = { 0 };
		int status = attr_list(c, &a);
		attrs_free(&a);
		return status;
	}
	char *from = quoted(c);
	if (!from)
		return -1;
	skip_blanks(c);
	int status = -1;
	struct dot_attrs a = { 0 };
	if (!strncmp(c->p, "->", 2)) {
		c->p += 2;
		char *to = quoted(c);
		if (to && !attr_list(c, &a)) {
			node(g, from);
			node(g, to);
			if (!find_edge(g, from, to))
				add_edge(g, from, to, &a);
			status = 0;
		}
		free(to);
	} else if (!attr_list(c, &a)) {
		struct dot_node *n = node(g, from);
		if (!n->attrs.n)
			attrs_copy(&n->attrs, &a);
		status = 0;
	}
	attrs_free(&a);
	free(from);
	return status;
}

/* Parses text into a graph of its own. */
static int parse(const char *file, const char *text, struct dot_graph *g, char **error)
{
	enum { BEFORE, INSIDE, AFTER } state = BEFORE;
	size_t number = 0;
	for (const char *line = text; *line;) {
		size_t len = strcspn(line, "\n");
		char *copy = xstrndup(line, len);
		struct cursor c = { copy, NULL };
		number++;
		skip_blanks(&c);
		int status = 0;
		if (!*c.p || *c.p == '\r') {
			/* blank lines are nothing */
		} else if (state == BEFORE) {
			static const char *const head[] = { GRAPH_HEAD_WORDS };
			for (size_t i = 0; i < sizeof(head) / sizeof(head[0]) && !status; i++)
				status = expect(&c, head[i], "expected \"digraph lockdep {\"");
			skip_blanks(&c);
			if (!status && *c.p && *c.p != '\r') {
				c.error = "more after \"digraph lockdep {\"";
				status = -1;
			}
			state = INSIDE;
		} else if (state == INSIDE && *c.p == '}') {
			c.p++;
			skip_blanks(&c);
			if (*c.p && *c.p != '\r') {
				c.error = "more after the closing }";
				status = -1;
			}
			state = AFTER;
		} else if (state == INSIDE) {
			status = statement(&c, g);
		} else {
			c.error = "text after the graph's closing }";
			status = -1;
		}
		free(copy);
		if (status) {
			*error = xasprintf("%s:%zu: %s", file, number, c.error ? c.error : "not lockdep-rcu's DOT");
			return -1;
		}
		line += len + (line[len] == '\n');
	}
	if (state != AFTER) {
		*error = xasprintf("%s:%zu: %s", file, number,
				   state == BEFORE ? "no graph in it" : "the graph does not end (no closing })");
		return -1;
	}
	return 0;
}

int dot_graph_merge(struct dot_graph *g, const char *file, const char *text, char **error)
{
	struct dot_graph one = { 0 };
	if (parse(file, text, &one, error)) {
		dot_graph_free(&one);
		return -1;
	}
	for (size_t i = 0; i < one.nlabels; i++) {
		grow(&g->labels, &g->labels_cap, g->nlabels + 1, sizeof(*g->labels));
		g->labels[g->nlabels++] = xstrdup(one.labels[i]);
	}
	for (size_t i = 0; i < one.nnodes; i++) {
		struct dot_node *n = node(g, one.nodes[i].name);
		if (!n->attrs.n)
			attrs_copy(&n->attrs, &one.nodes[i].attrs);
	}
	for (size_t i = 0; i < one.nedges; i++) {
		const struct dot_edge *in = &one.edges[i];
		struct dot_edge *e = find_edge(g, in->from, in->to);
		if (!e)
			add_edge(g, in->from, in->to, &in->attrs);
		else if (highlighted(&in->attrs) && !highlighted(&e->attrs)) {
			highlight(&e->attrs);   /* a cycle in any input is one in the union */
		}
	}
	dot_graph_free(&one);
	return 0;
}

/* ---- writing --------------------------------------------------------------- */

static void write_quoted(struct strbuf *out, const char *s)
{
	sb_putc(out, '"');
	for (; *s; s++) {
		if (graph_escaped(*s))
			sb_putc(out, GRAPH_ESCAPE);
		sb_putc(out, *s);
	}
	sb_putc(out, '"');
}

static void write_attrs(struct strbuf *out, const struct dot_attrs *a)
{
	if (!a->n)
		return;
	sb_puts(out, " [");
	for (size_t i = 0; i < a->n; i++) {
		sb_printf(out, "%s%s=", i ? ", " : "", a->v[i].key);
		if (a->v[i].quoted)
			write_quoted(out, a->v[i].value);
		else
			sb_puts(out, a->v[i].value);
	}
	sb_putc(out, ']');
}

/* Programs and pids merged, at most this many of each by name. */
#define LABEL_PROGRAMS 4
#define LABEL_PIDS 3

struct program {
	char *name;
	char *pids[LABEL_PIDS];
	size_t npids;
};

/* "lockdep-rcu 0.1: lock_order.memb (pid 17313)" -> prefix
 * "lockdep-rcu 0.1", program "lock_order.memb", pid "17313". */
static void split_label(const char *label, char **prefix, char **program, char **pid)
{
	const char *colon = strstr(label, ": ");
	const char *rest = colon ? colon + 2 : label;
	*prefix = colon ? xstrndup(label, (size_t)(colon - label)) : NULL;
	const char *open = strstr(rest, " (pid ");
	size_t n = strlen(rest);
	if (open && n && rest[n - 1] == ')') {
		*program = xstrndup(rest, (size_t)(open - rest));
		*pid = xstrndup(open + 6, (size_t)(rest + n - 1 - (open + 6)));
	} else {
		*program = xstrdup(rest);
		*pid = NULL;
	}
}

/* "lockdep-rcu 0.1: lock_order.memb (pids 17313, 17320), demo (pid 5)" */
static void merged_label(const struct dot_graph *g, struct strbuf *out)
{
	if (g->nlabels == 1) {
		sb_puts(out, g->labels[0]);
		return;
	}
	struct program programs[LABEL_PROGRAMS];
	size_t nprograms = 0, more_programs = 0;
	char *prefix = NULL;
	size_t *more_pids = xcalloc(LABEL_PROGRAMS, sizeof(*more_pids));
	for (size_t i = 0; i < g->nlabels; i++) {
		char *p, *name, *pid;
		split_label(g->labels[i], &p, &name, &pid);
		if (!prefix && p)
			prefix = xstrdup(p);
		free(p);
		size_t k = 0;
		while (k < nprograms && strcmp(programs[k].name, name))
			k++;
		if (k == nprograms && nprograms == LABEL_PROGRAMS) {
			more_programs++;
		} else {
			if (k == nprograms)
				programs[nprograms++] = (struct program){ xstrdup(name), { NULL }, 0 };
			if (pid && programs[k].npids < LABEL_PIDS)
				programs[k].pids[programs[k].npids++] = xstrdup(pid);
			else if (pid)
				more_pids[k]++;
		}
		free(name);
		free(pid);
	}
	sb_printf(out, "%s: ", prefix ? prefix : "lockdep-rcu");
	for (size_t k = 0; k < nprograms; k++) {
		sb_printf(out, "%s%s", k ? ", " : "", programs[k].name);
		if (programs[k].npids) {
			sb_printf(out, " (pid%s ", programs[k].npids + more_pids[k] > 1 ? "s" : "");
			for (size_t i = 0; i < programs[k].npids; i++)
				sb_printf(out, "%s%s", i ? ", " : "", programs[k].pids[i]);
			if (more_pids[k])
				sb_printf(out, " and %zu more", more_pids[k]);
			sb_putc(out, ')');
		}
		free(programs[k].name);
		for (size_t i = 0; i < programs[k].npids; i++)
			free(programs[k].pids[i]);
	}
	if (more_programs)
		sb_printf(out, " and %zu more", more_programs);
	free(more_pids);
	free(prefix);
}

void dot_graph_write(const struct dot_graph *g, struct strbuf *out)
{
	sb_puts(out, GRAPH_HEAD);
	if (g->nlabels) {
		struct strbuf label = { 0 };
		merged_label(g, &label);
		sb_puts(out, "\t" GRAPH_LABEL_STATEMENT " [" GRAPH_LABEL_ATTR "=");
		write_quoted(out, label.s);
		sb_puts(out, "];\n");
		sb_free(&label);
	}
	sb_puts(out, GRAPH_NODE_DEFAULTS);
	for (size_t i = 0; i < g->nnodes; i++) {
		sb_putc(out, '\t');
		write_quoted(out, g->nodes[i].name);
		write_attrs(out, &g->nodes[i].attrs);
		sb_puts(out, ";\n");
	}
	for (size_t i = 0; i < g->nedges; i++) {
		sb_putc(out, '\t');
		write_quoted(out, g->edges[i].from);
		sb_puts(out, " -> ");
		write_quoted(out, g->edges[i].to);
		write_attrs(out, &g->edges[i].attrs);
		sb_puts(out, ";\n");
	}
	sb_puts(out, GRAPH_TAIL);
}

void dot_graph_free(struct dot_graph *g)
{
	for (size_t i = 0; i < g->nlabels; i++)
		free(g->labels[i]);
	free(g->labels);
	for (size_t i = 0; i < g->nnodes; i++) {
		free(g->nodes[i].name);
		attrs_free(&g->nodes[i].attrs);
	}
	free(g->nodes);
	for (size_t i = 0; i < g->nedges; i++) {
		free(g->edges[i].from);
		free(g->edges[i].to);
		attrs_free(&g->edges[i].attrs);
	}
	free(g->edges);
	free(g->node_index.slots);
	free(g->edge_index.slots);
	memset(g, 0, sizeof(*g));
}
