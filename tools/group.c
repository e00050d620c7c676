#define _GNU_SOURCE
#include <search.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "group.h"

static void free_nothing(void *group)
{
	(void)group;   /* the groups are v's */
}

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct group *)a)->key, ((const struct group *)b)->key);
}

static void append(struct group_table *t, struct group *g)
{
	grow(&t->v, &t->cap, t->n + 1, sizeof(*t->v));
	t->v[t->n++] = g;
	if (!tsearch(g, &t->index, by_key))
		out_of_memory();
}

static struct group *find(struct group_table *t, const char *key)
{
	struct group probe = { .key = (char *)key };
	struct group **hit = tfind(&probe, &t->index, by_key);
	return hit ? *hit : NULL;
}

/* The index points to the groups, not into v: only a rekey rebuilds it. */
static void forget_index(struct group_table *t)
{
	tdestroy(t->index, free_nothing);
	t->index = NULL;
}

static void add_occurrence(struct group *g, size_t run, int pid)
{
	/* The reports of one process come one after the other: one entry for
	 * them all keeps memory bounded by processes, not by reports. */
	if (g->nocc && g->occ[g->nocc - 1].run == run && g->occ[g->nocc - 1].pid == pid)
		return;
	grow(&g->occ, &g->occ_cap, g->nocc + 1, sizeof(*g->occ));
	g->occ[g->nocc++] = (struct occurrence){ run, pid };
}

struct group *group_add(struct group_table *t, char *key, struct splat *s, const char *file,
			size_t run, int pid)
{
	struct group *g = find(t, key);
	if (g) {
		free(key);
		splat_free(s);
	} else {
		g = xcalloc(1, sizeof(*g));
		g->key = key;
		g->rep = *s;
		memset(s, 0, sizeof(*s));
		g->rep_file = xstrdup(file);
		g->rep_run = run;
		g->order = t->next_order++;
		append(t, g);
	}
	g->count++;
	add_occurrence(g, run, pid);
	return g;
}

static void group_free(struct group *g)
{
	free(g->key);
	splat_free(&g->rep);
	free(g->rep_file);
	free(g->occ);
	free(g);
}

static int by_order(const void *a, const void *b)
{
	const struct group *x = *(struct group *const *)a, *y = *(struct group *const *)b;
	return x->order < y->order ? -1 : x->order > y->order;
}

void group_table_rekey(struct group_table *t, char *(*key_of)(const struct splat *))
{
	/* Earliest groups first, so a merged group keeps the first representative. */
	sort(t->v, t->n, sizeof(*t->v), by_order);
	struct group **old = t->v;
	size_t n = t->n;
	t->v = NULL;
	t->cap = t->n = 0;
	forget_index(t);
	for (size_t i = 0; i < n; i++) {
		struct group *g = old[i];
		free(g->key);
		g->key = key_of(&g->rep);
		struct group *into = find(t, g->key);
		if (into) {
			for (size_t o = 0; o < g->nocc; o++)
				add_occurrence(into, g->occ[o].run, g->occ[o].pid);
			into->count += g->count;
			group_free(g);
			continue;
		}
		append(t, g);
	}
	free(old);
}

int occurrence_cmp(const void *a, const void *b)
{
	const struct occurrence *x = a, *y = b;
	if (x->run != y->run)
		return x->run < y->run ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int by_frequency(const void *a, const void *b)
{
	const struct group *x = *(struct group *const *)a, *y = *(struct group *const *)b;
	if (x->runs != y->runs)
		return x->runs > y->runs ? -1 : 1;
	if (x->processes != y->processes)
		return x->processes > y->processes ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

void group_table_finish(struct group_table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		struct group *g = t->v[i];
		sort(g->occ, g->nocc, sizeof(*g->occ), occurrence_cmp);
		g->runs = g->processes = 0;
		for (size_t o = 0; o < g->nocc; o++) {
			if (o == 0 || g->occ[o].run != g->occ[o - 1].run) {
				g->runs++;
				g->processes++;
			} else if (g->occ[o].pid != g->occ[o - 1].pid) {
				g->processes++;
			}
		}
	}
	sort(t->v, t->n, sizeof(*t->v), by_frequency);
}

void group_table_free(struct group_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		group_free(t->v[i]);
	free(t->v);
	forget_index(t);
	memset(t, 0, sizeof(*t));
}

/* ---- the key ---------------------------------------------------------------- */

/* A group's fingerprint: FNV-1a of its grouping key (group.h), which is
 * made of the kind, file:line or function names and the locks' sites,
 * never of addresses, pids or threads: the same bug, the same value across
 * runs, processes and builds that do not move its code. */
void group_fingerprint(const char *key, char hex[17])
{
	unsigned long long h = 0xcbf29ce484222325ull;
	for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
		h ^= *p;
		h *= 0x100000001b3ull;
	}
	snprintf(hex, 17, "%016llx", h);
}

void frame_where(const struct frame *f, struct strbuf *out)
{
	if (f->source)
		sb_puts(out, path_basename(f->source));
	else if (f->function)
		sb_printf(out, "%s [%s]", f->function, f->module ? f->module : "?");
	else if (f->module && f->has_offset)
		sb_printf(out, "%s+0x%lx", f->module, f->offset);
	else
		sb_putc(out, '?');
}

/* A lock's name without the address a stripped program names it by:
 * "lock@55d1afc420c0" -> "lock@?". */
static void lock_name(const char *name, struct strbuf *out)
{
	const char *at = strchr(name, '@');
	if (at && at[1] && strspn(at + 1, "0123456789abcdef") == strlen(at + 1)) {
		sb_add(out, name, (size_t)(at - name));
		sb_puts(out, "@?");
		return;
	}
	sb_puts(out, name);
}

static void lock_key(const struct splat_lock *l, struct strbuf *out)
{
	sb_printf(out, "\n%s ", l->role);
	if (l->has_at)
		frame_where(&l->at, out);
	else
		lock_name(l->name, out);
}

/* Locks a report lists around its bug, not the bug (report_record.h's
 * roles): what else was held, the readers that held a freed object (one
 * or two, the free is the same bug), the other updater's locks. */
static int lock_is_context(const struct splat_lock *l)
{
	return !strcmp(l->role, "held") || !strcmp(l->role, "reader") || !strcmp(l->role, "updater");
}

char *bug_key(const struct splat *s)
{
	struct strbuf key = { 0 };
	sb_printf(&key, "%s\n", s->kind);
	if (!strcmp(s->kind, "locks_held_at_exit")) {
		/* The innermost lock the thread took, where it took it: that is
		 * the site too. Inlined read sides have no site and no record
		 * of their own (the text lists them): they do not count. */
		for (size_t i = s->nlocks; i-- > 0;)
			if (!strcmp(s->locks[i].role, "leaked") && s->locks[i].has_at) {
				lock_key(&s->locks[i], &key);
				break;
			}
		return sb_detach(&key);
	}
	if (s->has_site)
		frame_where(&s->site, &key);
	for (size_t i = 0; i < s->nlocks; i++)
		if (!lock_is_context(&s->locks[i]))
			lock_key(&s->locks[i], &key);
	return sb_detach(&key);
}
