#include <stdio.h>
#include <string.h>
#include "cli.h"

static double average(double total, unsigned long long count)
{
	return count ? total / (double)count : 0;
}

static size_t listed(const struct lock_stats *t)
{
	return t->n < LOCK_STAT_TOP_CLASSES ? t->n : LOCK_STAT_TOP_CLASSES;
}

void render_lock_stats_text(const struct lock_stats *t, struct strbuf *out)
{
	sb_printf(out, "\nlock statistics: %zu of %zu lock class%s in %zu process%s, most contended first "
		  "(times in microseconds)\n", listed(t), t->n, t->n == 1 ? "" : "es", t->processes,
		  t->processes == 1 ? "" : "es");
	sb_printf(out, "%40s %14s %14s %14s %14s %14s %14s %14s\n", "class name", "contentions", "waittime-total",
		  "waittime-avg", "waittime-max", "acquisitions", "holdtime-total", "holdtime-avg");
	for (size_t i = 0; i < listed(t); i++) {
		const struct lock_stat_class *c = &t->v[i];
		sb_printf(out, "%40s %14llu %14.2f %14.2f %14.2f %14llu %14.2f %14.2f\n", c->name, c->contentions,
			  c->waittime_total, average(c->waittime_total, c->contentions), c->waittime_max,
			  c->acquisitions, c->holdtime_total, average(c->holdtime_total, c->acquisitions));
		/* The kernel's layout: the class again, the count, the site. The
		 * points are the class's, both sides': under the side that waited. */
		if (c->ncontention_points && c->contentions) {
			const struct lock_stat_point *p = &c->contention_points[0];
			sb_printf(out, "%40s %14llu ", c->class_name, p->count);
			frame_render(&p->site, out);
			sb_putc(out, '\n');
		}
	}
}

static void json_point(struct json *j, const char *key, const struct lock_stat_point *p)
{
	json_begin_object(j, key);
	json_num(j, "count", (long long)p->count);
	json_str(j, "site", p->site.text);
	json_str(j, "function", p->site.function);
	json_str(j, "module", p->site.module);
	json_str(j, "source", p->site.source);
	json_end_object(j);
}

/* Times as JSON numbers with the table's precision. */
static void json_time(struct json *j, const char *key, double us)
{
	char text[64];
	snprintf(text, sizeof(text), "%.2f", us);
	json_raw_number(j, key, text);
}

void render_lock_stats_json(const struct lock_stats *t, struct json *j)
{
	json_begin_object(j, "lock_statistics");
	json_num(j, "classes", (long long)t->n);
	json_num(j, "processes", (long long)t->processes);
	json_begin_array(j, "top");
	for (size_t i = 0; i < listed(t); i++) {
		const struct lock_stat_class *c = &t->v[i];
		json_begin_object(j, NULL);
		json_str(j, "name", c->name);
		json_str(j, "class", c->class_name);
		json_str(j, "lock_kind", c->lock_kind);
		json_num(j, "processes", (long long)c->records);
		json_num(j, "con_bounces", (long long)c->con_bounces);
		json_num(j, "contentions", (long long)c->contentions);
		json_time(j, "waittime_min", c->waittime_min);
		json_time(j, "waittime_max", c->waittime_max);
		json_time(j, "waittime_total", c->waittime_total);
		json_time(j, "waittime_avg", average(c->waittime_total, c->contentions));
		json_num(j, "acq_bounces", (long long)c->acq_bounces);
		json_num(j, "acquisitions", (long long)c->acquisitions);
		json_time(j, "holdtime_min", c->holdtime_min);
		json_time(j, "holdtime_max", c->holdtime_max);
		json_time(j, "holdtime_total", c->holdtime_total);
		json_time(j, "holdtime_avg", average(c->holdtime_total, c->acquisitions));
		if (c->ncontention_points)
			json_point(j, "top_contention_point", &c->contention_points[0]);
		if (c->ncontending_points)
			json_point(j, "top_contending_point", &c->contending_points[0]);
		json_end_object(j);
	}
	json_end_array(j);
	json_end_object(j);
}
