#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "collect.h"
#include "group.h"
#include "text_log.h"
#include "record.h"
#include "symbolizer.h"
#include "../preload/base/suppressions.h"

void collection_init(struct collection *c)
{
	memset(c, 0, sizeof(*c));
	c->last_run = (size_t)-1;
}

void collection_note(struct collection *c, const char *path, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *what;
	if (vasprintf(&what, fmt, ap) < 0)
		what = NULL;
	va_end(ap);
	grow(&c->notes, &c->notes_cap, c->nnotes + 1, sizeof(*c->notes));
	c->notes[c->nnotes++] = xasprintf("%s: %s", path, what ? what : fmt);
	free(what);
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xstrndup(path, (size_t)(slash - path));
}

static size_t run_of(struct collection *c, const char *file)
{
	char *dir = dir_of(file);
	/* Files of one directory come one after the other: try the last run first. */
	if (c->last_run < c->nruns && !strcmp(c->runs[c->last_run].dir, dir)) {
		free(dir);
		return c->last_run;
	}
	for (size_t i = 0; i < c->nruns; i++)
		if (!strcmp(c->runs[i].dir, dir)) {
			free(dir);
			return c->last_run = i;
		}
	grow(&c->runs, &c->runs_cap, c->nruns + 1, sizeof(*c->runs));
	memset(&c->runs[c->nruns], 0, sizeof(c->runs[0]));
	c->runs[c->nruns].dir = dir;
	return c->last_run = c->nruns++;
}

/* The records of one log, waiting for their text. */
struct pending {
	struct splat s;
	int done;                 /* paired with its text (or added without) */
};

struct scan_ctx {
	struct collection *c;
	const char *file;
	size_t run;
	size_t bad;
	size_t tracer_lines;
	size_t *seen;                   /* messages already counted for this log */
	size_t nseen, seen_cap;
	struct pending *pending;        /* the log's records, in order */
	size_t npending, pending_cap, next_pending;
	size_t bad_records;             /* records that are not one (no kind, title...) */
};

#define MAX_MODULE_PATHS 4096

static void remember_module(struct collection *c, const struct frame *f)
{
	if (!f->module_path || c->nmodule_paths == MAX_MODULE_PATHS)
		return;
	for (size_t i = c->nmodule_paths; i-- > 0;)
		if (!strcmp(c->module_paths[i], f->module_path))
			return;
	grow(&c->module_paths, &c->module_paths_cap, c->nmodule_paths + 1, sizeof(*c->module_paths));
	c->module_paths[c->nmodule_paths++] = xstrdup(f->module_path);
}

static void remember_modules(struct collection *c, const struct splat *s)
{
	size_t n;
	struct frame **frames = splat_frames(s, &n);
	for (size_t i = 0; i < n; i++)
		remember_module(c, frames[i]);
	free(frames);
}

static void on_record(const json_t *v, void *ctx)
{
	struct scan_ctx *x = ctx;
	const char *kind = json_string_value(json_object_get(v, "kind"));   /* a string in every record */
	if (!strcmp(kind, "lock_stat")) {
		x->bad_records += lock_stats_add(&x->c->lock_stats, v, x->file) != 0;
		return;
	}
	if (!json_is_string(json_object_get(v, "title"))) {
		/* a report without its title is damaged; another kind of record
		 * (of a later tracer) is none of this version's business */
		x->bad_records += splat_is_report_kind(kind);
		return;
	}
	grow(&x->pending, &x->pending_cap, x->npending + 1, sizeof(*x->pending));
	struct pending *p = &x->pending[x->npending];
	if (record_read_report(v, &p->s)) {
		x->bad_records++;
		return;
	}
	p->done = 0;
	x->npending++;
	remember_modules(x->c, &p->s);
}

static void add_splat(struct scan_ctx *x, struct splat *s)
{
	if (x->run == (size_t)-1)
		x->run = run_of(x->c, x->file);
	x->c->from_records += s->from_record;
	group_add(&x->c->groups, bug_key(s), s, x->file, x->run, s->pid);
	x->c->splats++;
}

/* The record of a report's text: the one of the same process and number
 * ("pid 123, report 3" in its header, "seq":3 in the record), the first
 * not paired yet (a process that exec()s numbers its reports again under
 * the same pid, in the same order as its records). A text without a number
 * (a tracer before them) takes the next record of its process and title:
 * records and texts are written in the same order. */
static struct pending *record_of(struct scan_ctx *x, const char *text, size_t len)
{
	char *title;
	int pid;
	unsigned long seq;
	if (x->next_pending >= x->npending || splat_text_identity(text, len, &title, &pid, &seq))
		return NULL;
	struct pending *found = NULL;
	for (size_t i = x->next_pending; i < x->npending && !found; i++) {
		struct pending *p = &x->pending[i];
		if (!p->done && p->s.pid == pid && (seq ? p->s.seq == seq : !strcmp(p->s.title, title)))
			found = p;
	}
	free(title);
	return found;
}

static void on_splat(const char *text, size_t len, void *ctx)
{
	struct scan_ctx *x = ctx;
	struct pending *p = record_of(x, text, len);
	if (p) {
		p->done = 1;
		splat_attach_text(&p->s, text, len);
		add_splat(x, &p->s);
		while (x->next_pending < x->npending && x->pending[x->next_pending].done)
			x->next_pending++;
		return;
	}
	struct splat s;
	if (splat_parse(text, len, &s)) {
		x->bad++;
		return;
	}
	add_splat(x, &s);
}

#define MAX_TRACER_MESSAGES 64

static void on_tracer_line(const char *line, size_t len, void *ctx)
{
	struct scan_ctx *x = ctx;
	struct collection *c = x->c;
	x->tracer_lines++;
	if (len > 512)
		len = 512;
	struct tracer_message *m = NULL;
	for (size_t i = 0; i < c->nmessages; i++)
		if (strlen(c->messages[i].line) == len && !memcmp(c->messages[i].line, line, len))
			m = &c->messages[i];
	if (!m) {
		if (c->nmessages == MAX_TRACER_MESSAGES)
			return;
		grow(&c->messages, &c->messages_cap, c->nmessages + 1, sizeof(*c->messages));
		m = &c->messages[c->nmessages++];
		m->line = xstrndup(line, len);
		m->logs = 0;
	}
	size_t index = (size_t)(m - c->messages);
	for (size_t i = 0; i < x->nseen; i++)
		if (x->seen[i] == index)
			return;
	grow(&x->seen, &x->seen_cap, x->nseen + 1, sizeof(*x->seen));
	x->seen[x->nseen++] = index;
	m->logs++;
}

/* "skipped 4096 bytes of garbage (NUL bytes) at offset 98304", or where
 * the first runs were when there are several. */
static void note_garbage(struct collection *c, const char *path, const struct log_file *log)
{
	struct strbuf what = { 0 };
	sb_printf(&what, "skipped %llu bytes of garbage (NUL bytes)", log->garbage);
	if (log->garbage_runs == 1) {
		sb_printf(&what, " at offset %llu", log->places[0].offset);
	} else {
		sb_printf(&what, " in %zu places:", log->garbage_runs);
		for (size_t i = 0; i < log->garbage_runs && i < MAX_GARBAGE_PLACES; i++)
			sb_printf(&what, "%s %llu at offset %llu", i ? "," : "", log->places[i].bytes,
				  log->places[i].offset);
		if (log->garbage_runs > MAX_GARBAGE_PLACES)
			sb_printf(&what, " and %zu more", log->garbage_runs - MAX_GARBAGE_PLACES);
	}
	collection_note(c, path, "%s", what.s);
	sb_free(&what);
}

/* Opens a log or records file not read yet (a log and its records named
 * both, or one named twice, are read once): the descriptor, or -1 and
 * *status to return. A file that cannot be read, found by walking a
 * directory, gets a note; named on the command line (explicit), it is the
 * caller's error: -1 and *why. */
static int open_unread(struct collection *c, const char *path, int explicit, const char **why, int *status)
{
	const char *open_why;
	int fd = log_file_open(path, explicit, &open_why);
	*status = 0;
	if (fd < 0) {
		if (explicit) {
			*why = open_why;
			*status = -1;
		} else {
			collection_note(c, path, "cannot read: %s, skipped", open_why);
		}
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) < 0)
		return fd;
	for (size_t i = 0; i < c->nread; i++)
		if (c->read[i].dev == st.st_dev && c->read[i].ino == st.st_ino) {
			close(fd);
			return -1;
		}
	grow(&c->read, &c->read_cap, c->nread + 1, sizeof(*c->read));
	c->read[c->nread++] = (struct file_id){ st.st_dev, st.st_ino };
	return fd;
}

static void note_count(struct collection *c, const char *path, size_t n, const char *one, const char *many)
{
	if (!n)
		return;
	collection_note(c, path, n == 1 ? one : many, n);
}

/* Reads a records file into x->pending (and the lock statistics). 1 when
 * it was read, 0 when there is none or it cannot be read (noted). */
static int read_records(struct scan_ctx *x, const char *path)
{
	struct records_scan scan;
	const char *why;
	if (records_file_read(path, on_record, x, &scan, &why)) {
		collection_note(x->c, path, "cannot read: %s; its log is read without it", why);
		return 0;
	}
	x->c->cut_short += scan.cut;
	note_count(x->c, path, scan.cut, "a record cut short (a process killed while writing it?), skipped",
		   "%zu records cut short, skipped");
	note_count(x->c, path, scan.garbage + x->bad_records, "a line that is not a record skipped",
		   "%zu lines that are not records skipped");
	return 1;
}

/* The records whose report the log does not hold (the log cut short, or
 * lost): printed from their records. Returns how many. */
static size_t add_unpaired(struct scan_ctx *x)
{
	size_t n = 0;
	for (size_t i = 0; i < x->npending; i++) {
		struct pending *p = &x->pending[i];
		if (p->done)
			continue;
		p->done = 1;
		splat_make_text(&p->s);
		add_splat(x, &p->s);
		n++;
	}
	return n;
}

static void scan_ctx_free(struct scan_ctx *x)
{
	for (size_t i = 0; i < x->npending; i++)
		if (!x->pending[i].done)
			splat_free(&x->pending[i].s);
	free(x->pending);
	free(x->seen);
}

static int collect_log(struct collection *c, const char *path, int explicit, const char **why)
{
	int status;
	int fd = open_unread(c, path, explicit, why, &status);
	if (fd < 0)
		return status;
	struct scan_ctx x = { .c = c, .file = path, .run = (size_t)-1 };
	char *records_path = xasprintf("%s%s", path, RECORDS_SUFFIX);
	struct stat st;
	size_t lock_stats_before = c->lock_stats.records;
	int has_records = lstat(records_path, &st) == 0 && S_ISREG(st.st_mode) && read_records(&x, records_path);
	struct log_callbacks cb = { on_splat, on_tracer_line };
	struct log_file log;
	int failed = log_file_read(fd, 0, &cb, &x, &log);
	int read_errno = errno;
	close(fd);
	size_t from_records_only = add_unpaired(&x);
	scan_ctx_free(&x);
	struct log_scan scan = log.scan;
	if (failed) {
		if (explicit) {
			*why = strerror(read_errno);
			status = -1;
			goto out;
		}
		collection_note(c, path, "cannot read past byte %llu: %s; the rest skipped", log.bytes,
				       strerror(read_errno));
	}
	int recorded = from_records_only || c->lock_stats.records > lock_stats_before;
	if (log.binary && !recorded) {
		collection_note(c, path, "binary data, not a log: skipped");
		goto out;
	}
	if (log.bytes == 0 && !failed && !recorded) {
		collection_note(c, path, "empty file, skipped");
		goto out;
	}
	if (!scan.splats && !scan.truncated && !scan.summaries && !x.tracer_lines && !recorded) {
		/* Not a tracer log: the tracer creates its log when it first writes.
		 * Other files in a log directory (notes, suppressions) are skipped
		 * silently; one named on the command line deserves a word. */
		if (explicit)
			collection_note(c, path, "no lockdep-rcu output in it");
		goto out;
	}
	if (x.run == (size_t)-1)
		run_of(c, path);   /* a log with only a summary or tracer lines is a run too */
	c->logs++;
	c->tracer_suppressed += scan.suppressed;
	if (log.garbage)
		note_garbage(c, path, &log);
	/* A report cut short in the text whose record is whole is not lost. */
	size_t cut = scan.truncated + x.bad;
	size_t lost = cut > from_records_only ? cut - from_records_only : 0;
	size_t complete = scan.splats - x.bad;
	c->cut_short += lost;
	if (lost) {
		collection_note(c, path, "%zu report%s cut short (a process killed mid-report?), skipped; "
				       "%zu complete report%s read",
				       lost, lost == 1 ? "" : "s", complete, complete == 1 ? "" : "s");
	}
	if (has_records)
		note_count(c, path, from_records_only,
			   "a report cut short or missing in the log: read from its record",
			   "%zu reports cut short or missing in the log: read from their records");
out:
	free(records_path);
	return status;
}

/* A records file whose log is gone: its reports are printed from their
 * records. */
static int collect_records_alone(struct collection *c, const char *path, int explicit, const char **why)
{
	int status;
	int fd = open_unread(c, path, explicit, why, &status);
	if (fd < 0)
		return status;
	close(fd);
	struct scan_ctx x = { .c = c, .file = path, .run = (size_t)-1 };
	size_t lock_stats_before = c->lock_stats.records;
	if (read_records(&x, path)) {
		size_t n = add_unpaired(&x);
		if (n || c->lock_stats.records > lock_stats_before) {
			run_of(c, path);
			c->logs++;
			note_count(c, path, n, "its log is missing: a report read from its record",
				   "its log is missing: %zu reports read from their records");
		}
	}
	scan_ctx_free(&x);
	return 0;
}

static int collect_record(struct collection *c, const char *path, int explicit, const char **why)
{
	char *buf;
	size_t len;
	int truncated;
	if (read_file(path, 1 << 16, &buf, &len, &truncated)) {
		if (explicit) {
			*why = strerror(errno);
			return -1;
		}
		collection_note(c, path, "cannot read the run record, skipped");
		return 0;
	}
	struct run_record r;
	if (memchr(buf, 0, len) || run_record_parse(buf, &r)) {
		collection_note(c, path, "not a run record, skipped");
		free(buf);
		return 0;
	}
	free(buf);
	size_t index = run_of(c, path);   /* may move c->runs */
	struct run_info *run = &c->runs[index];
	if (run->has_record)
		run_record_free(&run->record);
	run->record = r;
	run->has_record = 1;
	return 0;
}

/* A records file is read with its log, not on its own: both name the
 * same reports. */
static int collect_records_file(struct collection *c, const char *path, int explicit, const char **why)
{
	char *log = xstrndup(path, strlen(path) - strlen(RECORDS_SUFFIX));
	struct stat st;
	int status;
	if (lstat(log, &st) == 0 && S_ISREG(st.st_mode))
		status = explicit ? collect_log(c, log, 1, why) : 0;   /* a walk meets the log itself */
	else
		status = collect_records_alone(c, path, explicit, why);
	free(log);
	return status;
}

/* A run record, a records file or a log. */
static int collect_file(struct collection *c, const char *path, int explicit, const char **why)
{
	if (!strcmp(path_basename(path), RUN_RECORD_NAME))
		return collect_record(c, path, explicit, why);
	if (ends_with(path, RECORDS_SUFFIX))
		return collect_records_file(c, path, explicit, why);
	return collect_log(c, path, explicit, why);
}

/* depth 0: the directory named on the command line. */
static int walk(struct collection *c, const char *dir, int depth, const char **why)
{
	if (depth > MAX_WALK_DEPTH) {
		collection_note(c, dir, "too deep, not walked");
		return 0;
	}
	struct dirent **names;
	/* alphasort: strcoll(), byte order in the C locale (the command sets no other) */
	int n = scandir(dir, &names, NULL, alphasort);
	if (n < 0) {
		if (depth == 0) {
			*why = strerror(errno);
			return -1;
		}
		collection_note(c, dir, "cannot read the directory: %s", strerror(errno));
		return 0;
	}
	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		if (strcmp(name, ".") && strcmp(name, "..")) {
			char *path = path_join(dir, name);
			struct stat st;
			/* lstat: symbolic links and special files are skipped: no cycles, no FIFOs */
			if (lstat(path, &st) == 0) {
				if (S_ISDIR(st.st_mode))
					walk(c, path, depth + 1, why);
				else if (S_ISREG(st.st_mode) && !ends_with(name, ".out"))
					collect_file(c, path, 0, why);   /* .out: program output kept by stress */
			}
			free(path);
		}
		free(names[i]);
	}
	free(names);
	return 0;
}

int collect_check_path(const char *path, const char **why)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		*why = strerror(errno);
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		if (!d) {
			*why = strerror(errno);
			return -1;
		}
		closedir(d);
		return 0;
	}
	int fd = log_file_open(path, 1, why);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

int collect_path(struct collection *c, const char *path, const char **why)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		*why = strerror(errno);
		return -1;
	}
	return S_ISDIR(st.st_mode) ? walk(c, path, 0, why) : collect_file(c, path, 1, why);
}

/* ---- finishing: symbolize, regroup, suppress ------------------------------ */

struct frame_ref {
	struct frame *frame;
	const char *path;             /* the module as mapped, when known */
	struct sym_request *req;
};

static void note_cb(const char *message, void *ctx)
{
	collection_note(ctx, "symbolization", "%s", message);
}

/* Frames of one object: by its path when known, else by its name. */
static int by_module_offset(const void *a, const void *b)
{
	const struct frame_ref *x = a, *y = b;
	int m = strcmp(x->path ? x->path : x->frame->module, y->path ? y->path : y->frame->module);
	if (m)
		return m;
	return x->frame->offset < y->frame->offset ? -1 : x->frame->offset > y->frame->offset;
}

/* Where the process had the frame's module: its record says; for a frame
 * of a text-only log, a record of another process that mapped an object
 * of that name. */
static const char *module_path_of(const struct collection *c, const struct frame *f)
{
	if (f->module_path)
		return f->module_path;
	for (size_t i = 0; i < c->nmodule_paths; i++)
		if (!strcmp(path_basename(c->module_paths[i]), f->module))
			return c->module_paths[i];
	return NULL;
}

static void want(const struct collection *c, struct frame_ref **refs, size_t *n, size_t *cap, struct frame *f)
{
	if (!f->has_offset || f->function || !f->module || !f->offset)
		return;
	grow(refs, cap, *n + 1, sizeof(**refs));
	(*refs)[(*n)++] = (struct frame_ref){ f, module_path_of(c, f), NULL };
}

static void symbolize_groups(struct collection *c, const struct collect_options *o)
{
	struct frame_ref *refs = NULL;
	size_t n = 0, cap = 0;
	for (size_t g = 0; g < c->groups.n; g++) {
		size_t nframes;
		struct frame **frames = splat_frames(&c->groups.v[g]->rep, &nframes);
		for (size_t i = 0; i < nframes; i++)
			want(c, &refs, &n, &cap, frames[i]);
		free(frames);
	}
	if (!n)
		return;
	/* one request per distinct (module, offset), those of one module together */
	sort(refs, n, sizeof(*refs), by_module_offset);
	struct sym_request *reqs = xcalloc(n, sizeof(*reqs));
	size_t nreq = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || by_module_offset(&refs[i - 1], &refs[i])) {
			reqs[nreq].module = refs[i].frame->module;
			reqs[nreq].path = refs[i].path;
			/* frames are return addresses: the call is the byte before */
			reqs[nreq].address = refs[i].frame->offset - 1;
			nreq++;
		}
		refs[i].req = &reqs[nreq - 1];
	}
	struct symbolizer sym;
	symbolizer_init(&sym, note_cb, c);
	for (size_t i = 0; i < o->nsymbol_dirs; i++)
		symbolizer_add_dir(&sym, o->symbol_dirs[i]);
	sym.ndirs_first = sym.ndirs;
	for (size_t r = 0; r < c->nruns; r++)
		if (c->runs[r].has_record && c->runs[r].record.program) {
			char *dir = dir_of(c->runs[r].record.program);
			symbolizer_add_dir(&sym, dir);
			free(dir);
		}
	symbolizer_add_default_dirs(&sym);
	symbolize_requests(&sym, reqs, nreq);
	for (size_t i = 0; i < n; i++) {
		struct sym_request *r = refs[i].req;
		struct frame *f = refs[i].frame;
		if (!r->resolved)
			continue;
		f->symbolized = 1;
		f->function = r->function ? xstrdup(r->function) : NULL;
		if (r->source) {
			free(f->source);
			f->source = xstrdup(r->source);
		}
		f->inlined = r->inlined ? xstrdup(r->inlined) : NULL;
	}
	for (size_t i = 0; i < nreq; i++)
		sym_request_free(&reqs[i]);
	free(reqs);
	free(refs);
	symbolizer_free(&sym);
}

/* Whether a suppression pattern matches a function the frame names
 * (functions inlined there too). */
static int frame_suppressed(const char *kind, const struct frame *f)
{
	const char *name = f->function;
	int match = suppressions_match(kind, &name, 1);
	if (match || !f->inlined)
		return match;
	char *copy = xstrdup(f->inlined), *save = NULL;
	for (name = strtok_r(copy, " <", &save); name && !match; name = strtok_r(NULL, " <", &save))
		match = suppressions_match(kind, &name, 1);
	free(copy);
	return match;
}

/* The frames a suppression pattern is matched against: every frame of the
 * Call Trace, the site and, since a thread-end report's stack is only
 * start_thread, where each lock was taken. */
static int suppressed(const struct splat *s)
{
	size_t n;
	struct frame **frames = splat_frames(s, &n);
	int match = 0;
	for (size_t i = 0; i < n && !match; i++)
		match = frame_suppressed(s->kind, frames[i]);
	free(frames);
	return match;
}

/* Whether the group's fingerprint is one of the baseline's. */
static int in_baseline(const struct group *gr, const struct collect_options *o)
{
	char hex[17];
	if (!o->nbaseline)
		return 0;
	group_fingerprint(gr->key, hex);
	for (size_t i = 0; i < o->nbaseline; i++)
		if (!strcmp(o->baseline[i], hex))
			return 1;
	return 0;
}

void collection_finish(struct collection *c, const struct collect_options *o)
{
	if (o->symbolize) {
		symbolize_groups(c, o);
		group_table_rekey(&c->groups, bug_key);
	}
	group_table_finish(&c->groups);
	lock_stats_finish(&c->lock_stats);
	c->suppressed = 0;
	c->has_baseline = o->has_baseline;
	for (size_t g = 0; g < c->groups.n; g++) {
		struct group *gr = c->groups.v[g];
		gr->suppressed = o->use_suppressions && suppressed(&gr->rep);
		if (gr->suppressed) {
			c->suppressed += gr->count;
			continue;
		}
		if (in_baseline(gr, o)) {
			/* known: left out as a suppressed one is, counted apart */
			gr->suppressed = 1;
			c->known += gr->count;
			c->known_bugs++;
			continue;
		}
		for (size_t i = 0; i < gr->nocc; i++)
			c->runs[gr->occ[i].run].reported = 1;
	}
}

static size_t runs_ended(const struct collection *c, enum run_result result)
{
	size_t n = 0;
	for (size_t i = 0; i < c->nruns; i++)
		n += c->runs[i].has_record && c->runs[i].record.result == result;
	return n;
}

size_t collection_hangs(const struct collection *c)
{
	return runs_ended(c, RESULT_TIMEOUT);
}

size_t collection_crashes(const struct collection *c)
{
	return runs_ended(c, RESULT_SIGNAL);
}

size_t collection_bugs(const struct collection *c)
{
	size_t n = 0;
	for (size_t g = 0; g < c->groups.n; g++)
		n += !c->groups.v[g]->suppressed;
	return n;
}

size_t collection_reports(const struct collection *c)
{
	size_t n = 0;
	for (size_t g = 0; g < c->groups.n; g++)
		if (!c->groups.v[g]->suppressed)
			n += c->groups.v[g]->count;
	return n;
}

size_t collection_processes(const struct collection *c)
{
	size_t n = 0, cap = 0, distinct = 0;
	struct occurrence *all = NULL;
	for (size_t g = 0; g < c->groups.n; g++) {
		const struct group *gr = c->groups.v[g];
		if (gr->suppressed)
			continue;
		grow(&all, &cap, n + gr->nocc, sizeof(*all));
		memcpy(all + n, gr->occ, gr->nocc * sizeof(*all));
		n += gr->nocc;
	}
	sort(all, n, sizeof(*all), occurrence_cmp);
	for (size_t i = 0; i < n; i++)
		distinct += i == 0 || occurrence_cmp(&all[i - 1], &all[i]) != 0;
	free(all);
	return distinct;
}

void collection_free(struct collection *c)
{
	group_table_free(&c->groups);
	for (size_t i = 0; i < c->nruns; i++) {
		free(c->runs[i].dir);
		if (c->runs[i].has_record)
			run_record_free(&c->runs[i].record);
	}
	free(c->runs);
	for (size_t i = 0; i < c->nnotes; i++)
		free(c->notes[i]);
	free(c->notes);
	for (size_t i = 0; i < c->nmessages; i++)
		free(c->messages[i].line);
	free(c->messages);
	lock_stats_free(&c->lock_stats);
	free(c->read);
	for (size_t i = 0; i < c->nmodule_paths; i++)
		free(c->module_paths[i]);
	free(c->module_paths);
	memset(c, 0, sizeof(*c));
}
