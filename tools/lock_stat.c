#include <stdlib.h>
#include <string.h>
#include "group.h"
#include "lock_stat.h"
#include "record.h"

/* A member absent or not a number counts 0 (json_number_value()), as does a negative one. */
static unsigned long long count_of(const json_t *v, const char *key)
{
	double n = json_number_value(json_object_get(v, key));
	return n > 0 ? (unsigned long long)n : 0;
}

static double time_of(const json_t *v, const char *key)
{
	double t = json_number_value(json_object_get(v, key));
	return t < 0 ? 0 : t;
}

/* A class, or one side of it: the kernel's "-W" and "-R" rows. */
static struct lock_stat_class *class_named(struct lock_stats *t, const char *class_name, const char *kind)
{
	const char *side = !kind ? "" : !strcmp(kind, "write") ? "-W" : !strcmp(kind, "read") ? "-R" : "";
	char *name = xasprintf("%s%s", class_name, side);
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].name, name)) {
			free(name);
			return &t->v[i];
		}
	grow(&t->v, &t->cap, t->n + 1, sizeof(*t->v));
	struct lock_stat_class *c = &t->v[t->n++];
	memset(c, 0, sizeof(*c));
	c->name = name;
	c->class_name = xstrdup(class_name);
	c->lock_kind = kind ? xstrdup(kind) : NULL;
	return c;
}

/* Points of one site (by frame_where) in all processes are one point. */
static void add_points(struct lock_stat_point **points, size_t *n, size_t *cap, const json_t *list)
{
	size_t i;
	const json_t *p;
	json_array_foreach(list, i, p) {
		const json_t *site = json_object_get(p, "site");
		if (!json_is_object(site))
			continue;
		struct frame f;
		record_read_frame(site, &f);
		struct strbuf where = { 0 };
		frame_where(&f, &where);
		struct lock_stat_point *into = NULL;
		for (size_t k = 0; k < *n && !into; k++)
			if (!strcmp((*points)[k].where, where.s))
				into = &(*points)[k];
		if (into) {
			frame_free(&f);
			sb_free(&where);
		} else {
			grow(points, cap, *n + 1, sizeof(**points));
			into = &(*points)[(*n)++];
			into->count = 0;
			into->site = f;
			into->where = sb_detach(&where);
		}
		into->count += count_of(p, "count");
	}
}

static void merge_min(double *into, double value, int first)
{
	if (first || value < *into)
		*into = value;
}

static void count_process(struct lock_stats *t, const char *log, double pid)
{
	char *id = xasprintf("%s\n%.0f", log, pid);
	for (size_t i = t->processes; i-- > 0;)
		if (!strcmp(t->process_ids[i], id)) {
			free(id);
			return;
		}
	grow(&t->process_ids, &t->process_ids_cap, t->processes + 1, sizeof(*t->process_ids));
	t->process_ids[t->processes++] = id;
}

int lock_stats_add(struct lock_stats *t, const json_t *r, const char *log)
{
	const char *name = json_string_value(json_object_get(r, "class"));
	const json_t *pid = json_object_get(r, "pid");
	if (!name || !json_is_number(json_object_get(r, "contentions")) ||
	    !json_is_number(json_object_get(r, "acquisitions")) || !json_is_number(pid))
		return -1;
	count_process(t, log, json_number_value(pid));
	struct lock_stat_class *c = class_named(t, name, json_string_value(json_object_get(r, "lock_kind")));
	t->records++;
	c->records++;
	unsigned long long contentions = count_of(r, "contentions"), acquisitions = count_of(r, "acquisitions");
	/* a minimum of a process that never waited (or never held) is no minimum */
	if (contentions) {
		merge_min(&c->waittime_min, time_of(r, "waittime_min"), c->contentions == 0);
		if (time_of(r, "waittime_max") > c->waittime_max)
			c->waittime_max = time_of(r, "waittime_max");
	}
	if (acquisitions) {
		merge_min(&c->holdtime_min, time_of(r, "holdtime_min"), c->acquisitions == 0);
		if (time_of(r, "holdtime_max") > c->holdtime_max)
			c->holdtime_max = time_of(r, "holdtime_max");
	}
	c->contentions += contentions;
	c->acquisitions += acquisitions;
	c->con_bounces += count_of(r, "con_bounces");
	c->acq_bounces += count_of(r, "acq_bounces");
	c->waittime_total += time_of(r, "waittime_total");
	c->holdtime_total += time_of(r, "holdtime_total");
	add_points(&c->contention_points, &c->ncontention_points, &c->contention_cap,
		   json_object_get(r, "contention_points"));
	add_points(&c->contending_points, &c->ncontending_points, &c->contending_cap,
		   json_object_get(r, "contending_points"));
	return 0;
}

static int by_contention(const void *a, const void *b)
{
	const struct lock_stat_class *x = a, *y = b;
	if (x->contentions != y->contentions)
		return x->contentions > y->contentions ? -1 : 1;
	if (x->waittime_total != y->waittime_total)
		return x->waittime_total > y->waittime_total ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int by_count(const void *a, const void *b)
{
	const struct lock_stat_point *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->where, y->where);
}

void lock_stats_finish(struct lock_stats *t)
{
	sort(t->v, t->n, sizeof(*t->v), by_contention);
	for (size_t i = 0; i < t->n; i++) {
		struct lock_stat_class *c = &t->v[i];
		sort(c->contention_points, c->ncontention_points, sizeof(*c->contention_points), by_count);
		sort(c->contending_points, c->ncontending_points, sizeof(*c->contending_points), by_count);
	}
}

static void free_points(struct lock_stat_point *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		frame_free(&p[i].site);
		free(p[i].where);
	}
	free(p);
}

void lock_stats_free(struct lock_stats *t)
{
	for (size_t i = 0; i < t->n; i++) {
		struct lock_stat_class *c = &t->v[i];
		free(c->name);
		free(c->class_name);
		free(c->lock_kind);
		free_points(c->contention_points, c->ncontention_points);
		free_points(c->contending_points, c->ncontending_points);
	}
	free(t->v);
	for (size_t i = 0; i < t->processes; i++)
		free(t->process_ids[i]);
	free(t->process_ids);
	memset(t, 0, sizeof(*t));
}
