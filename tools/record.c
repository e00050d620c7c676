#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "text_log.h"
#include "record.h"

/* A record line longer than this is not one the tracer wrote (it builds
 * each in a 64 KiB buffer). */
#define MAX_RECORD_BYTES (1u << 20)

static int hex_string(const struct json_value *v, const char *key, unsigned long *out)
{
	const char *s = json_member_string(v, key);
	if (!s || strncmp(s, "0x", 2) || !s[2])
		return -1;
	char *end;
	errno = 0;
	unsigned long value = strtoul(s + 2, &end, 16);
	if (*end || errno)
		return -1;
	*out = value;
	return 0;
}

static char *optional_string(const struct json_value *v, const char *key)
{
	const char *s = json_member_string(v, key);
	return s && *s ? xstrdup(s) : NULL;
}

/* The frame as the tracer prints it, from its fields: "f+0x10 [demo]
 * demo.c:19" (the function's size is not in the record), "0x55.. [demo+0x126d]"
 * for an address it could not name, "0x55.." with no module. */
static char *frame_text(const struct frame *f, unsigned long function_offset, int has_function_offset)
{
	struct strbuf b = { 0 };
	if (f->function) {
		sb_puts(&b, f->function);
		if (has_function_offset)
			sb_printf(&b, "+0x%lx", function_offset);
		if (f->module)
			sb_printf(&b, " [%s]", f->module);
		if (f->source)
			sb_printf(&b, " %s", f->source);
	} else if (f->module && f->has_offset && f->has_pc) {
		sb_printf(&b, "0x%lx [%s+0x%lx]", f->pc, f->module, f->offset);
	} else if (f->has_pc) {
		sb_printf(&b, "0x%lx", f->pc);
	} else if (f->source) {
		sb_puts(&b, f->source);   /* a site known by its source line only */
	} else {
		sb_puts(&b, "?");
	}
	return sb_detach(&b);
}

void record_read_frame(const struct json_value *v, struct frame *f)
{
	memset(f, 0, sizeof(*f));
	f->has_pc = hex_string(v, "pc", &f->pc) == 0;
	const char *module = json_member_string(v, "module");
	if (module && *module) {
		f->module_path = xstrdup(module);
		f->module = xstrdup(path_basename(module));
		f->has_offset = hex_string(v, "offset", &f->offset) == 0;
	}
	f->function = optional_string(v, "function");
	const char *file = json_member_string(v, "file");
	double line;
	if (file && *file && json_member_number(v, "line", &line) == 0 && line > 0)
		f->source = xasprintf("%s:%.0f", file, line);
	unsigned long function_offset = 0;
	int has_function_offset = hex_string(v, "function_offset", &function_offset) == 0;
	f->text = frame_text(f, function_offset, has_function_offset);
}

int record_read_report(const struct json_value *v, struct splat *s)
{
	memset(s, 0, sizeof(*s));
	double version, pid, tid, seq;
	const char *kind = json_member_string(v, "kind"), *title = json_member_string(v, "title");
	if (json_member_number(v, "v", &version) || version != 1 || !kind || !title ||
	    json_member_number(v, "pid", &pid))
		return -1;
	s->from_record = 1;
	s->kind = xstrdup(kind);
	s->title = xstrdup(title);
	s->pid = (int)pid;
	s->tid = json_member_number(v, "tid", &tid) == 0 ? (int)tid : 0;
	s->seq = json_member_number(v, "seq", &seq) == 0 && seq > 0 ? (unsigned long)seq : 0;
	s->message = xstrdup(json_member_string(v, "message") ? json_member_string(v, "message") : "");
	const struct json_value *site = json_member(v, "site");
	if (site && site->type == JSON_OBJECT) {
		record_read_frame(site, &s->site);
		s->has_site = 1;
	}
	const struct json_value *locks = json_member(v, "locks");
	for (size_t i = 0; locks && locks->type == JSON_ARRAY && i < locks->count; i++) {
		const struct json_value *l = &locks->items[i];
		const char *role = json_member_string(l, "role"), *name = json_member_string(l, "name");
		if (!role || !name)
			continue;
		struct splat_lock *lock = splat_add_lock(s, role, name);
		lock->kind = optional_string(l, "kind");
		const struct json_value *at = json_member(l, "acquired_at");
		if (at && at->type == JSON_OBJECT) {
			record_read_frame(at, &lock->at);
			lock->has_at = 1;
		}
	}
	const struct json_value *frames = json_member(v, "frames");
	if (frames && frames->type == JSON_ARRAY && frames->count) {
		s->trace = xcalloc(frames->count, sizeof(*s->trace));
		for (size_t i = 0; i < frames->count; i++)
			if (frames->items[i].type == JSON_OBJECT)
				record_read_frame(&frames->items[i], &s->trace[s->ntrace++]);
	}
	return 0;
}

/* ---- the file ------------------------------------------------------------ */

struct line_reader {
	void (*on_record)(const struct json_value *v, void *ctx);
	void *ctx;
	struct records_scan *out;
};

static void read_line(struct line_reader *r, const char *line, size_t len, int terminated)
{
	struct json_value v;
	size_t error_at;
	if (!len && terminated)
		return;   /* an empty line says nothing */
	double version;
	if (memchr(line, 0, len) || json_parse(line, len, &v, &error_at)) {
		/* The last line without its newline: the tracer writes a record
		 * and its newline at once, so it was cut by a crash mid-write. */
		if (terminated)
			r->out->garbage++;
		else
			r->out->cut++;
		return;
	}
	if (v.type != JSON_OBJECT || json_member_number(&v, "v", &version) || version != 1 ||
	    !json_member_string(&v, "kind")) {
		r->out->garbage++;
	} else {
		r->out->records++;
		r->on_record(&v, r->ctx);
	}
	json_value_free(&v);
}

int records_file_read(const char *path, void (*on_record)(const struct json_value *v, void *ctx), void *ctx,
		      struct records_scan *out, const char **why)
{
	memset(out, 0, sizeof(*out));
	int fd = log_file_open(path, 1, why);
	if (fd < 0)
		return -1;
	struct line_reader r = { on_record, ctx, out };
	struct strbuf line = { 0 };
	int overlong = 0;   /* dropping the rest of a line past MAX_RECORD_BYTES */
	char buf[65536];
	for (;;) {
		ssize_t got = read(fd, buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;   /* a read error ends the file: what was read counts */
		out->bytes += (unsigned long long)got;
		for (const char *p = buf, *end = buf + got; p < end;) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
			if (!overlong)
				sb_add(&line, p, n);
			if (line.len > MAX_RECORD_BYTES) {
				overlong = 1;
				line.len = 0;
			}
			if (nl) {
				if (overlong)
					out->garbage++;
				else
					read_line(&r, line.s ? line.s : "", line.len, 1);
				line.len = 0;
				overlong = 0;
			}
			p += n + (nl ? 1 : 0);
		}
	}
	if (overlong)
		out->garbage++;
	else if (line.len)
		read_line(&r, line.s, line.len, 0);
	sb_free(&line);
	close(fd);
	return 0;
}
