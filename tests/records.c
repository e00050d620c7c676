/* Reading a run's records back: see records.h. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "records.h"
#include "cli_helpers.h"

static const char *string_of(const json_t *v, const char *key)
{
	return json_string_value(json_object_get(v, key));
}

static void frame_of(const json_t *v, struct record_frame *f)
{
	memset(f, 0, sizeof(*f));
	f->function = string_of(v, "function");
	f->file = string_of(v, "file");
	f->module = string_of(v, "module");
	f->line = (int)json_number_value(json_object_get(v, "line"));
}

/* One line of the records file into r: 0, or -1 when it is not a record. */
static int record_parse(const char *line, size_t len, struct record *r)
{
	memset(r, 0, sizeof(*r));
	const json_t *v = r->json = json_loadb(line, len, JSON_READ_FLAGS, NULL);
	if (!json_is_object(v)) {
		json_decref(r->json);
		return -1;
	}
	r->kind = string_of(v, "kind");
	r->title = string_of(v, "title");
	r->message = string_of(v, "message");
	r->bug = string_of(v, "bug");
	r->comm = string_of(v, "comm");
	/* json_number_value(): 0 when absent or not a number */
	r->pid = (long)json_number_value(json_object_get(v, "pid"));
	r->tid = (long)json_number_value(json_object_get(v, "tid"));
	r->seq = (long)json_number_value(json_object_get(v, "seq"));
	frame_of(json_object_get(v, "site"), &r->site);
	const json_t *locks = json_object_get(v, "locks"), *frames = json_object_get(v, "frames"), *item;
	size_t i;
	r->locks = calloc(json_array_size(locks) + 1, sizeof(*r->locks));
	r->frames = calloc(json_array_size(frames) + 1, sizeof(*r->frames));
	cr_assert(r->locks && r->frames);
	json_array_foreach(locks, i, item) {
		struct record_lock *out = &r->locks[r->lock_count++];
		out->role = string_of(item, "role");
		out->name = string_of(item, "name");
		out->kind = string_of(item, "kind");
		out->address = string_of(item, "address");
		const json_t *at = json_object_get(item, "acquired_at");
		out->has_acquired_at = at != NULL;
		frame_of(at, &out->acquired_at);
	}
	json_array_foreach(frames, i, item)
		frame_of(item, &r->frames[r->frame_count++]);
	return 0;
}

static void record_free(struct record *r)
{
	free(r->locks);
	free(r->frames);
	json_decref(r->json);
}

static void append(char **buf, size_t *len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char **buf, size_t *len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *piece;
	int n = vasprintf(&piece, fmt, ap);
	va_end(ap);
	cr_assert(n >= 0);
	*buf = realloc(*buf, *len + (size_t)n + 1);
	cr_assert(*buf);
	memcpy(*buf + *len, piece, (size_t)n + 1);
	*len += (size_t)n;
	free(piece);
}

static void frame_text(char **buf, size_t *len, const struct record_frame *f)
{
	append(buf, len, "%s %s:%d", f->function ? f->function : "?", f->file ? f->file : "?", f->line);
}

/* The records in short, then everything the program wrote. */
static void make_context(struct run_records *rr)
{
	char *buf = NULL;
	size_t len = 0;
	append(&buf, &len, "---- %zu record%s%s\n", rr->count, rr->count == 1 ? "" : "s",
	       rr->damaged ? " (and lines that are not records)" : "");
	for (size_t i = 0; i < rr->count; i++) {
		const struct record *r = &rr->records[i];
		append(&buf, &len, "[%zu] %s at ", i, r->kind ? r->kind : "?");
		frame_text(&buf, &len, &r->site);
		char list[2048];
		append(&buf, &len, "\n    \"%s\"\n    locks: %s\n    frames:", r->message ? r->message : "",
		       r->lock_count ? record_lock_list(r, list, sizeof(list)) : "(none)");
		for (size_t f = 0; f < r->frame_count; f++)
			append(&buf, &len, " %s", r->frames[f].function ? r->frames[f].function : "?");
		append(&buf, &len, "\n");
	}
	append(&buf, &len, "---- log\n%s---- stderr\n%s---- stdout\n%s---- exit code %d%s\n", rr->log, rr->run.err,
	       rr->run.out, rr->run.exit_code, rr->run.timed_out ? " (timed out)" : "");
	rr->context = buf;
}

static struct run_records run_with_log(char *const argv[], const struct run_options *o)
{
	struct run_records rr = { .dir = cli_temp_dir() };
	char *log = cli_path_in(rr.dir, "log"), *jsonl = cli_path_in(rr.dir, "log.jsonl");
	struct run_options with_log = *o;
	with_log.log_path = log;
	rr.run = run_program(argv, &with_log);
	rr.log = cli_read(log);
	if (!rr.log)
		rr.log = strdup("");
	rr.jsonl = cli_read(jsonl);
	if (!rr.jsonl)
		rr.jsonl = strdup("");
	free(log);
	free(jsonl);
	size_t lines = (size_t)count_of(rr.jsonl, "\n") + 1;
	rr.records = calloc(lines, sizeof(*rr.records));
	cr_assert(rr.records);
	for (const char *p = rr.jsonl; *p;) {
		size_t n = strcspn(p, "\n");
		if (n && !record_parse(p, n, &rr.records[rr.count]))
			rr.count++;
		else if (n)
			rr.damaged++;
		p += n + (p[n] == '\n');
	}
	make_context(&rr);
	return rr;
}

struct run_records run_program_records(char *const argv[], const struct run_options *o)
{
	return run_with_log(argv, o);
}

struct run_records run_target_records(const char *target, const char *flavor, const char *scenario,
				      const struct run_options *o)
{
	char rel[512];
	snprintf(rel, sizeof(rel), "targets/%s.%s", target, flavor);
	char path[4096];
	snprintf(path, sizeof(path), "%s", build_path(rel));
	char *argv[] = { path, (char *)scenario, NULL };
	return run_with_log(argv, o);
}

void run_records_free(struct run_records *rr)
{
	for (size_t i = 0; i < rr->count; i++)
		record_free(&rr->records[i]);
	free(rr->records);
	free(rr->log);
	free(rr->jsonl);
	free(rr->context);
	run_free(&rr->run);
	cli_remove_dir(rr->dir);
	memset(rr, 0, sizeof(*rr));
}

static int kind_is(const struct record *r, const char *kind)
{
	return !kind || (r->kind && !strcmp(r->kind, kind));
}

int records_of_kind(const struct run_records *rr, const char *kind)
{
	int n = 0;
	for (size_t i = 0; i < rr->count; i++)
		n += kind_is(&rr->records[i], kind);
	return n;
}

const struct record *record_nth(const struct run_records *rr, const char *kind, int n)
{
	for (size_t i = 0; i < rr->count; i++)
		if (kind_is(&rr->records[i], kind) && n-- == 0)
			return &rr->records[i];
	return NULL;
}

/* path is file, or ends with "/" file. */
static int file_matches(const char *path, const char *file)
{
	if (!path)
		return 0;
	size_t p = strlen(path), f = strlen(file);
	if (p == f)
		return !strcmp(path, file);
	return p > f && path[p - f - 1] == '/' && !strcmp(path + p - f, file);
}

int frame_matches(const struct record_frame *f, const char *function, const char *file, int line)
{
	if (function && (!f->function || strcmp(f->function, function)))
		return 0;
	if (file && !file_matches(f->file, file))
		return 0;
	return line <= 0 || f->line == line;
}

const struct record *record_at(const struct run_records *rr, const char *kind, const char *function,
			       const char *file, int line)
{
	for (size_t i = 0; i < rr->count; i++)
		if (kind_is(&rr->records[i], kind) && frame_matches(&rr->records[i].site, function, file, line))
			return &rr->records[i];
	return NULL;
}

/* name, or a prefix of it when pattern ends with '*' ("Account::Account+*":
 * a class named by where it was initialized, whatever the offset). */
static int name_matches(const char *name, const char *pattern)
{
	if (!name)
		return 0;
	size_t n = strlen(pattern);
	if (n && pattern[n - 1] == '*')
		return !strncmp(name, pattern, n - 1);
	return !strcmp(name, pattern);
}

const struct record_lock *record_lock(const struct record *r, const char *role, const char *name)
{
	for (size_t i = 0; i < r->lock_count; i++) {
		const struct record_lock *l = &r->locks[i];
		if ((!role || (l->role && !strcmp(l->role, role))) && (!name || name_matches(l->name, name)))
			return l;
	}
	return NULL;
}

int record_lock_count(const struct record *r, const char *role)
{
	int n = 0;
	for (size_t i = 0; i < r->lock_count; i++)
		n += !role || (r->locks[i].role && !strcmp(r->locks[i].role, role));
	return n;
}

const char *record_lock_list(const struct record *r, char *buf, size_t size)
{
	size_t used = 0;
	buf[0] = 0;
	for (size_t i = 0; i < r->lock_count && used < size; i++) {
		const struct record_lock *l = &r->locks[i];
		int n = snprintf(buf + used, size - used, "%s%s:%s{%s}", i ? " " : "", l->role ? l->role : "?",
				 l->name ? l->name : "?", l->kind ? l->kind : "?");
		if (n < 0)
			break;
		used += (size_t)n;
	}
	return buf;
}

int record_has_frame(const struct record *r, const char *function)
{
	for (size_t i = 0; i < r->frame_count; i++)
		if (r->frames[i].function && !strcmp(r->frames[i].function, function))
			return 1;
	return 0;
}

int record_frame_at(const struct record *r, const char *function, const char *file, int line)
{
	for (size_t i = 0; i < r->frame_count; i++)
		if (frame_matches(&r->frames[i], function, file, line))
			return (int)i;
	return -1;
}

int record_message_ends(const struct record *r, const char *suffix)
{
	if (!r->message)
		return 0;
	size_t m = strlen(r->message), s = strlen(suffix);
	return m >= s && !strcmp(r->message + m - s, suffix);
}

const struct record *record_saying(const struct run_records *rr, const char *kind, const char *text)
{
	for (size_t i = 0; i < rr->count; i++)
		if (kind_is(&rr->records[i], kind) && rr->records[i].message && strstr(rr->records[i].message, text))
			return &rr->records[i];
	return NULL;
}
