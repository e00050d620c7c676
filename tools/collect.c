#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "collect.h"
#include "logfile.h"
#include "splat_key.h"
#include "symbolizer.h"
#include "../preload/suppressions.h"

void collection_init(struct collection *c)
{
	memset(c, 0, sizeof(*c));
	c->last_run = (size_t)-1;
}

void collection_note(struct collection *c, const char *path, const char *what)
{
	grow(&c->notes, &c->notes_cap, c->nnotes + 1, sizeof(*c->notes));
	c->notes[c->nnotes++] = xasprintf("%s: %s", path, what);
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

struct scan_ctx {
	struct collection *c;
	const char *file;
	size_t run;
	size_t bad;
	size_t tracer_lines;
	size_t *seen;                   /* messages already counted for this log */
	size_t nseen, seen_cap;
};

static void on_splat(const char *text, size_t len, void *ctx)
{
	struct scan_ctx *x = ctx;
	struct splat s;
	if (x->run == (size_t)-1)
		x->run = run_of(x->c, x->file);
	if (splat_parse(text, len, &s)) {
		x->bad++;
		return;
	}
	int pid = s.pid;
	char *key = splat_key(&s);
	group_add(&x->c->groups, key, &s, x->file, x->run, pid);
	x->c->splats++;
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
	collection_note(c, path, what.s);
	sb_free(&what);
}

/* Found by walking a directory, a file that cannot be read gets a note;
 * named on the command line (explicit), it is the caller's error: -1 and
 * *why. */
static int cannot_read(struct collection *c, const char *path, int explicit, const char *why, const char **out)
{
	if (explicit) {
		*out = why;
		return -1;
	}
	char *what = xasprintf("cannot read: %s, skipped", why);
	collection_note(c, path, what);
	free(what);
	return 0;
}

static int collect_log(struct collection *c, const char *path, int explicit, const char **why)
{
	const char *open_why;
	int fd = log_file_open(path, explicit, &open_why);
	if (fd < 0)
		return cannot_read(c, path, explicit, open_why, why);
	struct scan_ctx x = { .c = c, .file = path, .run = (size_t)-1 };
	struct log_callbacks cb = { on_splat, on_tracer_line };
	struct log_file log;
	int failed = log_file_read(fd, 0, &cb, &x, &log);
	int read_errno = errno;
	close(fd);
	free(x.seen);
	struct log_scan scan = log.scan;
	if (failed) {
		if (explicit) {
			*why = strerror(read_errno);
			return -1;
		}
		char *what = xasprintf("cannot read past byte %llu: %s; the rest skipped", log.bytes,
				       strerror(read_errno));
		collection_note(c, path, what);
		free(what);
	}
	if (log.binary) {
		collection_note(c, path, "binary data, not a log: skipped");
		return 0;
	}
	if (log.bytes == 0 && !failed) {
		collection_note(c, path, "empty file, skipped");
		return 0;
	}
	if (!scan.splats && !scan.truncated && !scan.summaries && !x.tracer_lines) {
		/* Not a tracer log: the tracer creates its log when it first writes.
		 * Other files in a log directory (notes, suppressions) are skipped
		 * silently; one named on the command line deserves a word. */
		if (explicit)
			collection_note(c, path, "no lockdep-rcu output in it");
		return 0;
	}
	if (x.run == (size_t)-1)
		run_of(c, path);   /* a log with only a summary or tracer lines is a run too */
	c->logs++;
	c->tracer_suppressed += scan.suppressed;
	if (log.garbage)
		note_garbage(c, path, &log);
	size_t cut = scan.truncated + x.bad;
	if (cut) {
		char *what = xasprintf("%zu report%s cut short (a process killed mid-report?), skipped; "
				       "%zu complete report%s read",
				       cut, cut == 1 ? "" : "s", scan.splats - x.bad, scan.splats - x.bad == 1 ? "" : "s");
		collection_note(c, path, what);
		free(what);
	}
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

static int is_record(const char *name)
{
	const char *base = strrchr(name, '/');
	return !strcmp(base ? base + 1 : name, RUN_RECORD_NAME);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* depth 0: the directory named on the command line. */
static int walk(struct collection *c, const char *dir, int depth, const char **why)
{
	if (depth > MAX_WALK_DEPTH) {
		collection_note(c, dir, "too deep, not walked");
		return 0;
	}
	struct dirent **names;
	int n = scandir(dir, &names, NULL, by_name);
	if (n < 0) {
		if (depth == 0) {
			*why = strerror(errno);
			return -1;
		}
		char *what = xasprintf("cannot read the directory: %s", strerror(errno));
		collection_note(c, dir, what);
		free(what);
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
				else if (S_ISREG(st.st_mode) && is_record(name))
					collect_record(c, path, 0, why);
				else if (S_ISREG(st.st_mode) && !ends_with(name, ".out"))
					collect_log(c, path, 0, why);   /* .out: program output kept by stress */
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
	if (S_ISDIR(st.st_mode))
		return walk(c, path, 0, why);
	if (is_record(path))
		return collect_record(c, path, 1, why);
	return collect_log(c, path, 1, why);
}

/* ---- finishing: symbolize, regroup, suppress ------------------------------ */

struct frame_ref {
	struct frame *frame;
	struct sym_request *req;
};

static void note_cb(const char *message, void *ctx)
{
	collection_note(ctx, "symbolization", message);
}

static int by_module_offset(const void *a, const void *b)
{
	const struct frame *x = ((const struct frame_ref *)a)->frame, *y = ((const struct frame_ref *)b)->frame;
	int m = strcmp(x->module, y->module);
	if (m)
		return m;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static void want(struct frame_ref **refs, size_t *n, size_t *cap, struct frame *f)
{
	if (!f->has_offset || f->function || !f->module || !f->offset)
		return;
	grow(refs, cap, *n + 1, sizeof(**refs));
	(*refs)[(*n)++] = (struct frame_ref){ f, NULL };
}

static void symbolize_groups(struct collection *c, const struct collect_options *o)
{
	struct frame_ref *refs = NULL;
	size_t n = 0, cap = 0;
	for (size_t g = 0; g < c->groups.n; g++) {
		struct splat *s = &c->groups.v[g]->rep;
		if (s->site_has_frame)
			want(&refs, &n, &cap, &s->site);
		for (size_t i = 0; i < s->ntrace; i++)
			want(&refs, &n, &cap, &s->trace[i]);
		for (size_t i = 0; i < s->nheld; i++)
			want(&refs, &n, &cap, &s->held[i].frame);
	}
	if (!n)
		return;
	sort(refs, n, sizeof(*refs), by_module_offset);
	/* one request per distinct (module, offset) */
	struct sym_request *reqs = xcalloc(n, sizeof(*reqs));
	struct sym_request **ptrs = xcalloc(n, sizeof(*ptrs));
	size_t nreq = 0;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || by_module_offset(&refs[i - 1], &refs[i])) {
			reqs[nreq].module = refs[i].frame->module;
			/* frames are return addresses: the call is the byte before */
			reqs[nreq].address = refs[i].frame->offset - 1;
			ptrs[nreq] = &reqs[nreq];
			nreq++;
		}
		refs[i].req = &reqs[nreq - 1];
	}
	struct symbolizer sym;
	symbolizer_init(&sym, note_cb, c);
	for (size_t i = 0; i < o->nsymbol_dirs; i++)
		symbolizer_add_dir(&sym, o->symbol_dirs[i]);
	for (size_t r = 0; r < c->nruns; r++)
		if (c->runs[r].has_record && c->runs[r].record.program) {
			char *dir = dir_of(c->runs[r].record.program);
			symbolizer_add_dir(&sym, dir);
			free(dir);
		}
	symbolizer_add_default_dirs(&sym);
	symbolize_requests(&sym, ptrs, nreq);
	for (size_t i = 0; i < n; i++) {
		struct sym_request *r = refs[i].req;
		struct frame *f = refs[i].frame;
		if (!r->resolved)
			continue;
		f->symbolized = 1;
		f->function = r->function ? xstrdup(r->function) : NULL;
		free(f->source);
		f->source = r->source ? xstrdup(r->source) : NULL;
		f->inlined = r->inlined ? xstrdup(r->inlined) : NULL;
	}
	for (size_t i = 0; i < nreq; i++)
		sym_request_free(&reqs[i]);
	free(reqs);
	free(ptrs);
	free(refs);
	symbolizer_free(&sym);
}

static void add_name(const char ***names, size_t *n, size_t *cap, const char *name)
{
	if (!name)
		return;
	grow(names, cap, *n + 1, sizeof(**names));
	(*names)[(*n)++] = name;
}

/* The function names a suppression pattern is matched against: every frame
 * of the Call Trace (inlined functions too) and, since a thread-end report's
 * stack is only start_thread, where each held lock was taken. */
static int suppressed(const struct splat *s)
{
	const char **names = NULL;
	size_t n = 0, cap = 0;
	char **split = NULL;
	size_t nsplit = 0, split_cap = 0;
	for (size_t i = 0; i <= s->ntrace + s->nheld; i++) {
		const struct frame *f = i < s->ntrace ? &s->trace[i] : i < s->ntrace + s->nheld ?
			&s->held[i - s->ntrace].frame : (s->site_has_frame ? &s->site : NULL);
		if (!f)
			continue;
		add_name(&names, &n, &cap, f->function);
		if (f->inlined) {
			char *copy = xstrdup(f->inlined), *save = NULL;
			grow(&split, &split_cap, nsplit + 1, sizeof(*split));
			split[nsplit++] = copy;
			for (char *t = strtok_r(copy, " <", &save); t; t = strtok_r(NULL, " <", &save))
				add_name(&names, &n, &cap, t);
		}
	}
	int match = suppressions_match(s->kind, names, n);
	for (size_t i = 0; i < nsplit; i++)
		free(split[i]);
	free(split);
	free(names);
	return match;
}

void collection_finish(struct collection *c, const struct collect_options *o)
{
	if (o->symbolize) {
		symbolize_groups(c, o);
		group_table_rekey(&c->groups, splat_key);
	}
	group_table_finish(&c->groups);
	c->suppressed = 0;
	for (size_t g = 0; g < c->groups.n; g++) {
		struct group *gr = c->groups.v[g];
		gr->suppressed = o->use_suppressions && suppressed(&gr->rep);
		if (gr->suppressed) {
			c->suppressed += gr->count;
			continue;
		}
		for (size_t i = 0; i < gr->nocc; i++)
			c->runs[gr->occ[i].run].reported = 1;
	}
}

size_t collection_hangs(const struct collection *c)
{
	size_t n = 0;
	for (size_t i = 0; i < c->nruns; i++)
		n += c->runs[i].has_record && c->runs[i].record.result == RESULT_TIMEOUT;
	return n;
}

size_t collection_crashes(const struct collection *c)
{
	size_t n = 0;
	for (size_t i = 0; i < c->nruns; i++)
		n += c->runs[i].has_record && c->runs[i].record.result == RESULT_SIGNAL;
	return n;
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

static int by_run_pid(const void *a, const void *b)
{
	const struct occurrence *x = a, *y = b;
	if (x->run != y->run)
		return x->run < y->run ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
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
	sort(all, n, sizeof(*all), by_run_pid);
	for (size_t i = 0; i < n; i++)
		distinct += i == 0 || by_run_pid(&all[i - 1], &all[i]) != 0;
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
	memset(c, 0, sizeof(*c));
}
