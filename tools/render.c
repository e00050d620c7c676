#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json.h"
#include "cli.h"
#include "text_log.h"
#include "../preload/base/report_kinds.h"

/* ---- one report -------------------------------------------------------------- */

/* Printing a report: its text as the tracer wrote it, with every frame the
 * report named (addr2line), or its record names, written in where the
 * text has only the address, "0x55.. [demo+0x126d]" or "0x55..". The same
 * for records and for text-only logs: the structure says which frames are
 * named, the text is what is printed. */
/* A frame printed as an address, and what to print instead. */
struct substitution {
	char raw[320];            /* "0x55.. [demo+0x126d]", or "0x55.." alone
				   * (module names are at most 255 bytes) */
	const struct frame *frame;
};

struct substitutions {
	struct substitution v[512];
	size_t n;
};

/* Named here (addr2line), or named by its record while the text has only
 * its address (the tracer's text with symbolize=0, or no symbol in the
 * tracer's own reading while the record's source line was found). */
static int named(const struct splat *s, const struct frame *f)
{
	return f->symbolized || (s->from_record && (f->function || f->source));
}

static void add(struct substitutions *subs, const char *raw, const struct frame *f)
{
	if (subs->n == sizeof(subs->v) / sizeof(subs->v[0]))
		return;
	for (size_t i = 0; i < subs->n; i++)
		if (!strcmp(subs->v[i].raw, raw))
			return;
	snprintf(subs->v[subs->n].raw, sizeof(subs->v[0].raw), "%.319s", raw);
	subs->v[subs->n++].frame = f;
}

/* The forms the tracer prints an address in, longest first. */
static size_t raw_forms(const struct frame *f, char forms[2][320])
{
	size_t n = 0;
	if (f->has_pc && f->module && f->has_offset)
		snprintf(forms[n++], sizeof(forms[0]), "0x%lx [%.280s+0x%lx]", f->pc, f->module, f->offset);
	if (f->has_pc)
		snprintf(forms[n++], sizeof(forms[0]), "0x%lx", f->pc);
	return n;
}

static void want(struct substitutions *subs, const struct splat *s, const struct frame *f)
{
	if (!named(s, f))
		return;
	char forms[2][320];
	size_t n = raw_forms(f, forms);
	for (size_t i = 0; i < n; i++)
		add(subs, forms[i], f);
}

static void collect(const struct splat *s, struct substitutions *subs)
{
	size_t n;
	struct frame **frames = splat_frames(s, &n);
	subs->n = 0;
	for (size_t i = 0; i < n; i++)
		want(subs, s, frames[i]);
	free(frames);
}

/* The substitution whose raw form starts line[pos], a whole token. */
static const struct substitution *match(const struct substitutions *subs, const char *line, size_t len, size_t pos)
{
	if (line[pos] != '0' || (pos && isxdigit((unsigned char)line[pos - 1])))
		return NULL;
	for (size_t i = 0; i < subs->n; i++) {
		size_t n = strlen(subs->v[i].raw);
		if (n <= len - pos && !strncmp(line + pos, subs->v[i].raw, n) &&
		    (pos + n == len || !isxdigit((unsigned char)line[pos + n])))
			return &subs->v[i];
	}
	return NULL;
}

static void replacement(const struct frame *f, struct strbuf *out)
{
	if (f->symbolized)
		frame_render(f, out);
	else
		sb_puts(out, f->text);   /* the record's rendering */
}

/* One line (without its newline), frames named. */
static void render_line(const char *line, size_t len, int site_line, const struct splat *s,
			const struct substitutions *subs, struct strbuf *out)
{
	/* "0x55.. [demo+0x126d] message" reads "demo.c:19 message" once named,
	 * as the tracer prints a site it could name */
	const struct substitution *site = site_line && s->has_site && s->site.source ? match(subs, line, len, 0) : NULL;
	if (site && site->frame == &s->site && len > strlen(site->raw) && line[strlen(site->raw)] == ' ') {
		sb_puts(out, s->site.source);
		line += strlen(site->raw);
		len -= strlen(site->raw);
	}
	for (size_t pos = 0; pos < len;) {
		const struct substitution *hit = match(subs, line, len, pos);
		if (hit) {
			replacement(hit->frame, out);
			pos += strlen(hit->raw);
		} else {
			sb_putc(out, line[pos++]);
		}
	}
}

void splat_render(const struct splat *s, struct strbuf *out)
{
	struct substitutions *subs = xmalloc(sizeof(*subs));
	collect(s, subs);
	const char *text = s->text ? s->text : "";
	size_t index = 0;
	for (const char *p = text; *p; index++) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		render_line(p, n, index == 4, s, subs, out);
		sb_putc(out, '\n');
		p += n + (nl ? 1 : 0);
	}
	free(subs);
}

void splat_summary_render(const struct splat *s, struct strbuf *out)
{
	struct strbuf rendered = { 0 };
	splat_render(s, &rendered);
	const char *text = rendered.s ? rendered.s : "";
	if (!strcmp(s->kind, "locks_held_at_exit") && splat_text_innermost_lock(text, out)) {
		sb_free(&rendered);
		return;
	}
	char *site = splat_text_line(text, 4), *next = splat_text_line(text, 5);
	if (site) {
		sb_puts(out, site);
		/* "comm/tid is trying to acquire lock:" says what follows */
		size_t n = strlen(site);
		if (n && site[n - 1] == ':' && next && next[0])
			sb_printf(out, " %s", next + strspn(next, " "));
	}
	free(site);
	free(next);
	sb_free(&rendered);
}

/* ---- the collection ------------------------------------------------------------ */

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

/* The runs that ended so, by name (stress finishes them out of order). */
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
		} else {
			sb_puts(out, ": killed by signal ");
			render_signal((int)r->record.value, out);
		}
		sb_putc(out, '\n');
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
	if (c->has_baseline)
		sb_printf(out, "; %zu known bug%s (%zu report%s) in the baseline, not shown", c->known_bugs,
			  plural(c->known_bugs), c->known, plural(c->known));
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

/* "file" and line of a frame's source, or 0. */
static int frame_file_line(const struct frame *f, char **file, long *line)
{
	const char *colon = f->source ? strrchr(f->source, ':') : NULL;
	if (!colon || !colon[1])
		return 0;
	*file = xstrndup(f->source, (size_t)(colon - f->source));
	*line = atol(colon + 1);
	return 1;
}

/* The site as fields: "file" and "line" when the source is known,
 * "function" when named. */
static void json_site_fields(struct json *j, const struct splat *s)
{
	char *file;
	long line;
	if (!s->has_site)
		return;
	if (frame_file_line(&s->site, &file, &line)) {
		json_str(j, "file", file);
		json_num(j, "line", line);
		free(file);
	}
	if (s->site.function && strcmp(s->site.function, "??"))
		json_str(j, "function", s->site.function);
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
	if (c->has_baseline) {
		json_num(&j, "baseline_bugs", (long long)c->known_bugs);
		json_num(&j, "baseline_reports", (long long)c->known);
	}
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
		char hex[17];
		group_fingerprint(gr->key, hex);
		json_str(&j, "fingerprint", hex);
		struct strbuf site = { 0 }, text = { 0 };
		splat_summary_render(s, &site);
		json_str(&j, "site", site.s ? site.s : "");
		json_site_fields(&j, s);
		json_begin_array(&j, "locks");
		for (size_t i = 0; i < s->nlocks; i++) {
			const struct splat_lock *l = &s->locks[i];
			json_begin_object(&j, NULL);
			/* no "kind": a record names an acquiring lock by its C
			 * type where the text says {mutex}; the same bug must
			 * read the same from either */
			json_str(&j, "role", l->role);
			json_str(&j, "name", l->name);
			if (l->has_at) {
				struct strbuf at = { 0 };
				frame_where(&l->at, &at);
				json_str(&j, "at", at.s ? at.s : "");
				sb_free(&at);
			}
			json_end_object(&j);
		}
		json_end_array(&j);
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

/* ---- SARIF and compiler-style lines ------------------------------------------ */

static void sarif_location(struct json *j, const struct frame *f, const char *message)
{
	char *file;
	long line;
	json_begin_object(j, NULL);
	if (frame_file_line(f, &file, &line)) {
		json_begin_object(j, "physicalLocation");
		json_begin_object(j, "artifactLocation");
		json_str(j, "uri", file);
		json_end_object(j);
		json_begin_object(j, "region");
		json_num(j, "startLine", line);
		json_end_object(j);
		json_end_object(j);
		free(file);
	}
	if (f->function && strcmp(f->function, "??")) {
		json_begin_array(j, "logicalLocations");
		json_begin_object(j, NULL);
		json_str(j, "name", f->function);
		json_str(j, "kind", "function");
		json_end_object(j);
		json_end_array(j);
	}
	if (message) {
		json_begin_object(j, "message");
		json_str(j, "text", message);
		json_end_object(j);
	}
	json_end_object(j);
}

void render_sarif(const struct collection *c, struct strbuf *out)
{
	struct json j = { .out = out };
	json_begin_object(&j, NULL);
	json_str(&j, "$schema", "https://json.schemastore.org/sarif-2.1.0.json");
	json_str(&j, "version", "2.1.0");
	json_begin_array(&j, "runs");
	json_begin_object(&j, NULL);
	json_begin_object(&j, "tool");
	json_begin_object(&j, "driver");
	json_str(&j, "name", "lockdep-rcu");
	json_str(&j, "version", LOCKDEP_RCU_TOOL_VERSION);
	/* one rule per report kind, in the table's order */
	json_begin_array(&j, "rules");
	for (int k = 0; k < NR_REPORT_KINDS; k++) {
		json_begin_object(&j, NULL);
		json_str(&j, "id", report_record_kind[k]);
		json_str(&j, "name", report_kind_name[k]);
		json_begin_object(&j, "shortDescription");
		json_str(&j, "text", report_kind_name[k]);
		json_end_object(&j);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_end_object(&j);
	json_end_object(&j);
	json_begin_array(&j, "results");
	for (size_t g = 0; g < c->groups.n; g++) {
		const struct group *gr = c->groups.v[g];
		if (gr->suppressed)
			continue;
		const struct splat *s = &gr->rep;
		struct strbuf site = { 0 };
		splat_summary_render(s, &site);
		json_begin_object(&j, NULL);
		json_str(&j, "ruleId", s->kind);
		json_str(&j, "level", "error");
		json_begin_object(&j, "message");
		json_str(&j, "text", site.s ? site.s : s->title);
		json_end_object(&j);
		json_begin_array(&j, "locations");
		if (s->has_site)
			sarif_location(&j, &s->site, NULL);
		json_end_array(&j);
		/* the other places the report names: where each lock was taken */
		json_begin_array(&j, "relatedLocations");
		for (size_t i = 0; i < s->nlocks; i++)
			if (s->locks[i].has_at) {
				struct strbuf what = { 0 };
				sb_printf(&what, "%s: %s", s->locks[i].role, s->locks[i].name);
				sarif_location(&j, &s->locks[i].at, what.s);
				sb_free(&what);
			}
		json_end_array(&j);
		char hex[17];
		group_fingerprint(gr->key, hex);
		json_begin_object(&j, "partialFingerprints");
		json_str(&j, "lockdepRcuBug/v1", hex);
		json_end_object(&j);
		json_begin_object(&j, "properties");
		json_str(&j, "title", s->title);
		json_num(&j, "reports", (long long)gr->count);
		json_num(&j, "runs", (long long)gr->runs);
		json_end_object(&j);
		json_end_object(&j);
		sb_free(&site);
	}
	json_end_array(&j);
	json_end_object(&j);
	json_end_array(&j);
	json_end_object(&j);
	sb_putc(out, '\n');
}

void render_gcc(const struct collection *c, struct strbuf *out)
{
	for (size_t g = 0; g < c->groups.n; g++) {
		const struct group *gr = c->groups.v[g];
		if (gr->suppressed)
			continue;
		const struct splat *s = &gr->rep;
		char *file = NULL;
		long line = 0;
		if (s->has_site && frame_file_line(&s->site, &file, &line))
			sb_printf(out, "%s:%ld: ", file, line);
		else
			sb_puts(out, "lockdep-rcu: ");
		sb_printf(out, "warning: %s [%s]\n", s->title, s->kind);
		free(file);
	}
}
