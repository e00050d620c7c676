#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "render.h"
#include "json.h"
#include "lock_stat_render.h"
#include "version.h"
#include "../preload/base/report_kinds.h"

#define MAX_LISTED_RUNS 10   /* hung or crashed runs listed by name in the text */

static const char *plural(size_t n)
{
	return n == 1 ? "" : "s";
}

void render_signal(int sig, struct strbuf *out)
{
	const char *name = sigdescr_np(sig);
	sb_printf(out, "%d (%s)", sig, name ? name : "unknown signal");
}

static size_t runs_with_findings(const struct collection *c)
{
	size_t n = 0;
	for (size_t i = 0; i < c->nruns; i++) {
		const struct run_info *r = &c->runs[i];
		n += r->reported || (r->has_record && (r->record.result == RESULT_TIMEOUT ||
						       r->record.result == RESULT_SIGNAL));
	}
	return n;
}

static void run_label(const struct run_info *r, struct strbuf *out)
{
	sb_puts(out, r->dir);
	if (r->has_record && r->record.has_seed)
		sb_printf(out, " (seed %lu)", r->record.seed);
}

static int by_dir(const void *a, const void *b, void *ctx)
{
	const struct collection *c = ctx;
	return strcmp(c->runs[*(const size_t *)a].dir, c->runs[*(const size_t *)b].dir);
}

/* The runs that ended so, by name (stress finishes them out of order). */
/* "; its log explains it: #2 (INFO: task ...)": the bugs (numbered as listed)
 * reported in a hung run, the watchdog's hung-task and stall reports first. */
static void explained_by(const struct collection *c, size_t run, struct strbuf *out)
{
	int listed = 0;
	for (int pass = 0; pass < 2; pass++) {
		size_t index = 0;
		for (size_t g = 0; g < c->groups.n; g++) {
			const struct group *gr = c->groups.v[g];
			if (gr->suppressed)
				continue;
			index++;
			enum report_kind kind = report_kind_of_title(gr->rep.title);
			int hang_report = kind == REPORT_RCU_STALL || kind == REPORT_HUNG_TASK;
			if (hang_report != (pass == 0))
				continue;
			int here = 0;
			for (size_t o = 0; o < gr->nocc && !here; o++)
				here = gr->occ[o].run == run;
			if (!here)
				continue;
			sb_printf(out, "%s#%zu", listed ? ", " : "; its log explains it: ", index);
			if (hang_report)
				sb_printf(out, " (%s)", gr->rep.title);
			listed++;
		}
	}
}

static void list_runs(const struct collection *c, enum run_result which, struct strbuf *out)
{
	size_t *order = xcalloc(c->nruns, sizeof(*order)), n = 0;
	for (size_t i = 0; i < c->nruns; i++)
		if (c->runs[i].has_record && c->runs[i].record.result == which)
			order[n++] = i;
	if (n > 1)
		qsort_r(order, n, sizeof(*order), by_dir, (void *)c);
	for (size_t k = 0; k < n && k < MAX_LISTED_RUNS; k++) {
		const struct run_info *r = &c->runs[order[k]];
		sb_puts(out, "   ");
		run_label(r, out);
		if (which == RESULT_TIMEOUT) {
			sb_printf(out, ": killed after %g s", (double)r->record.value / 1000);
			explained_by(c, order[k], out);
			sb_putc(out, '\n');
		} else {
			sb_puts(out, ": killed by signal ");
			render_signal((int)r->record.value, out);
			sb_putc(out, '\n');
		}
	}
	if (n > MAX_LISTED_RUNS)
		sb_printf(out, "   ... and %zu more\n", n - MAX_LISTED_RUNS);
	free(order);
}

void render_text(const struct collection *c, struct strbuf *out)
{
	size_t bugs = collection_bugs(c), hangs = collection_hangs(c), crashes = collection_crashes(c);
	size_t suppressed = c->suppressed + c->tracer_suppressed;
	sb_puts(out, "lockdep-rcu report: ");
	if (!bugs && !hangs && !crashes)
		sb_printf(out, "nothing found in %zu log%s of %zu run%s", c->logs, plural(c->logs), c->nruns,
			  plural(c->nruns));
	else if (!bugs)
		sb_printf(out, "no reports in %zu log%s of %zu run%s", c->logs, plural(c->logs), c->nruns,
			  plural(c->nruns));
	else
		sb_printf(out, "%zu bug%s (%zu report%s) in %zu of %zu run%s, %zu process%s, %zu log%s",
			  bugs, plural(bugs), collection_reports(c), plural(collection_reports(c)),
			  runs_with_findings(c), c->nruns, plural(c->nruns), collection_processes(c),
			  collection_processes(c) == 1 ? "" : "es", c->logs, plural(c->logs));
	if (hangs)
		sb_printf(out, "; %zu hang%s", hangs, plural(hangs));
	if (crashes)
		sb_printf(out, "; %zu crash%s", crashes, crashes == 1 ? "" : "es");
	if (suppressed)
		sb_printf(out, "; %zu suppressed", suppressed);
	sb_putc(out, '\n');
	size_t index = 0;
	for (size_t g = 0; g < c->groups.n; g++) {
		const struct group *gr = c->groups.v[g];
		if (gr->suppressed)
			continue;
		const struct splat *s = &gr->rep;
		sb_printf(out, "\n#%zu %s\n   ", ++index, s->title);
		splat_summary_render(s, out);
		sb_printf(out, "\n   %zu report%s in %zu of %zu run%s, %zu process%s; example from %s",
			  gr->count, plural(gr->count), gr->runs, c->nruns, plural(c->nruns), gr->processes,
			  gr->processes == 1 ? "" : "es", gr->rep_file);
		const struct run_info *first = &c->runs[gr->rep_run];
		if (first->has_record && first->record.has_seed)
			sb_printf(out, " (seed %lu)", first->record.seed);
		sb_puts(out, "\n\n");
		splat_render(s, out);
	}
	if (c->lock_stats.n)
		render_lock_stats_text(&c->lock_stats, out);
	if (hangs) {
		sb_printf(out, "\n%zu run%s hung (killed after the timeout; %s):\n", hangs, plural(hangs),
			  hangs == 1 ? "the reports in its log explain it" : "the reports in their logs explain them");
		list_runs(c, RESULT_TIMEOUT, out);
	}
	if (crashes) {
		sb_printf(out, "\n%zu run%s crashed:\n", crashes, plural(crashes));
		list_runs(c, RESULT_SIGNAL, out);
	}
	if (c->nmessages) {
		sb_puts(out, "\nthe tracer said:\n");
		for (size_t i = 0; i < c->nmessages; i++)
			sb_printf(out, "   %s (in %zu log%s)\n", c->messages[i].line, c->messages[i].logs,
				  plural(c->messages[i].logs));
	}
}

static void json_frame(struct json *j, const struct frame *f)
{
	json_begin_object(j, NULL);
	json_str(j, "text", f->text);
	json_str(j, "function", f->function && strcmp(f->function, "??") ? f->function : NULL);
	json_str(j, "module", f->module);
	if (f->module_path)
		json_str(j, "module_path", f->module_path);
	if (f->has_offset) {
		char off[32];
		snprintf(off, sizeof(off), "0x%lx", f->offset);
		json_str(j, "offset", off);
	}
	json_str(j, "source", f->source);
	if (f->inlined)
		json_str(j, "inlined", f->inlined);
	json_bool(j, "symbolized_here", f->symbolized);
	json_end_object(j);
}

void render_json(const struct collection *c, struct strbuf *out)
{
	struct json j = { .out = out };
	json_begin_object(&j, NULL);
	json_str(&j, "tool", "lockdep-rcu report");
	json_str(&j, "version", LOCKDEP_RCU_TOOL_VERSION);
	json_num(&j, "bugs", (long long)collection_bugs(c));
	json_num(&j, "reports", (long long)collection_reports(c));
	json_num(&j, "suppressed", (long long)(c->suppressed + c->tracer_suppressed));
	json_num(&j, "runs", (long long)c->nruns);
	json_num(&j, "runs_with_findings", (long long)runs_with_findings(c));
	json_num(&j, "processes", (long long)collection_processes(c));
	json_num(&j, "logs", (long long)c->logs);
	json_num(&j, "hangs", (long long)collection_hangs(c));
	json_num(&j, "crashes", (long long)collection_crashes(c));
	json_num(&j, "from_records", (long long)c->from_records);
	json_begin_array(&j, "groups");
	for (size_t g = 0; g < c->groups.n; g++) {
		const struct group *gr = c->groups.v[g];
		if (gr->suppressed)
			continue;
		const struct splat *s = &gr->rep;
		json_begin_object(&j, NULL);
		json_str(&j, "title", s->title);
		json_str(&j, "kind", s->kind);
		struct strbuf site = { 0 }, text = { 0 };
		splat_summary_render(s, &site);
		json_str(&j, "site", site.s ? site.s : "");
		json_num(&j, "reports", (long long)gr->count);
		json_num(&j, "runs", (long long)gr->runs);
		json_num(&j, "processes", (long long)gr->processes);
		json_str(&j, "example_log", gr->rep_file);
		if (c->runs[gr->rep_run].has_record && c->runs[gr->rep_run].record.has_seed)
			json_num(&j, "example_seed", (long long)c->runs[gr->rep_run].record.seed);
		json_begin_array(&j, "frames");
		for (size_t i = 0; i < s->ntrace; i++)
			json_frame(&j, &s->trace[i]);
		json_end_array(&j);
		splat_render(s, &text);
		json_str(&j, "splat", text.s ? text.s : "");
		sb_free(&site);
		sb_free(&text);
		json_end_object(&j);
	}
	json_end_array(&j);
	if (c->lock_stats.n)
		render_lock_stats_json(&c->lock_stats, &j);
	json_begin_array(&j, "failed_runs");
	for (size_t i = 0; i < c->nruns; i++) {
		const struct run_info *r = &c->runs[i];
		if (!r->has_record || (r->record.result != RESULT_TIMEOUT && r->record.result != RESULT_SIGNAL))
			continue;
		json_begin_object(&j, NULL);
		json_str(&j, "run", r->dir);
		json_str(&j, "result", r->record.result == RESULT_TIMEOUT ? "hang" : "crash");
		json_num(&j, r->record.result == RESULT_TIMEOUT ? "timeout_ms" : "signal", r->record.value);
		if (r->record.has_seed)
			json_num(&j, "seed", (long long)r->record.seed);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_begin_array(&j, "tracer_messages");
	for (size_t i = 0; i < c->nmessages; i++) {
		json_begin_object(&j, NULL);
		json_str(&j, "message", c->messages[i].line);
		json_num(&j, "logs", (long long)c->messages[i].logs);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_begin_array(&j, "notes");
	for (size_t i = 0; i < c->nnotes; i++)
		json_str(&j, NULL, c->notes[i]);
	json_end_array(&j);
	json_end_object(&j);
}
