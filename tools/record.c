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

static int hex_string(const json_t *v, const char *key, unsigned long *out)
{
	const char *s = json_string_value(json_object_get(v, key));
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

static char *optional_string(const json_t *v, const char *key)
{
	const char *s = json_string_value(json_object_get(v, key));
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

void record_read_frame(const json_t *v, struct frame *f)
{
	memset(f, 0, sizeof(*f));
	f->has_pc = hex_string(v, "pc", &f->pc) == 0;
	const char *module = json_string_value(json_object_get(v, "module"));
	if (module && *module) {
		f->module_path = xstrdup(module);
		f->module = xstrdup(path_basename(module));
		f->has_offset = hex_string(v, "offset", &f->offset) == 0;
	}
	f->function = optional_string(v, "function");
	const char *file = json_string_value(json_object_get(v, "file"));
	double line = json_number_value(json_object_get(v, "line"));   /* 0 when absent */
	if (file && *file && line > 0)
		f->source = xasprintf("%s:%.0f", file, line);
	unsigned long function_offset = 0;
	int has_function_offset = hex_string(v, "function_offset", &function_offset) == 0;
	f->text = frame_text(f, function_offset, has_function_offset);
}

int record_read_report(const json_t *v, struct splat *s)
{
	memset(s, 0, sizeof(*s));
	/* json_number_value() is 0 for a member absent or not a number */
	const char *kind = json_string_value(json_object_get(v, "kind"));
	const char *title = json_string_value(json_object_get(v, "title"));
	const char *message = json_string_value(json_object_get(v, "message"));
	const json_t *pid = json_object_get(v, "pid");
	if (json_number_value(json_object_get(v, "v")) != 1 || !kind || !title || !json_is_number(pid))
		return -1;
	s->from_record = 1;
	s->kind = xstrdup(kind);
	s->title = xstrdup(title);
	s->pid = (int)json_number_value(pid);
	s->tid = (int)json_number_value(json_object_get(v, "tid"));
	double seq = json_number_value(json_object_get(v, "seq"));
	s->seq = seq > 0 ? (unsigned long)seq : 0;
	s->message = xstrdup(message ? message : "");
	const json_t *site = json_object_get(v, "site");
	if (json_is_object(site)) {
		record_read_frame(site, &s->site);
		s->has_site = 1;
	}
	size_t i;
	const json_t *item, *locks = json_object_get(v, "locks");
	json_array_foreach(locks, i, item) {
		const char *role = json_string_value(json_object_get(item, "role"));
		const char *name = json_string_value(json_object_get(item, "name"));
		if (!role || !name)
			continue;
		struct splat_lock *lock = splat_add_lock(s, role, name, strlen(name));
		lock->kind = optional_string(item, "kind");
		const json_t *at = json_object_get(item, "acquired_at");
		if (json_is_object(at)) {
			record_read_frame(at, &lock->at);
			lock->has_at = 1;
		}
	}
	const json_t *frames = json_object_get(v, "frames");
	if (json_array_size(frames))
		s->trace = xcalloc(json_array_size(frames), sizeof(*s->trace));
	json_array_foreach(frames, i, item)
		if (json_is_object(item))
			record_read_frame(item, &s->trace[s->ntrace++]);
	return 0;
}

/* ---- the file ------------------------------------------------------------ */

struct line_reader {
	void (*on_record)(const json_t *v, void *ctx);
	void *ctx;
	struct records_scan *out;
};

static void read_line(struct line_reader *r, const char *line, size_t len, int terminated)
{
	if (!len && terminated)
		return;   /* an empty line says nothing */
	json_t *v = json_loadb(line, len, JSON_READ_FLAGS, NULL);   /* NUL bytes refused too */
	if (!v) {
		/* The last line without its newline: the tracer writes a record
		 * and its newline at once, so it was cut by a crash mid-write. */
		if (terminated)
			r->out->garbage++;
		else
			r->out->cut++;
		return;
	}
	if (!json_is_object(v) || json_number_value(json_object_get(v, "v")) != 1 ||
	    !json_is_string(json_object_get(v, "kind"))) {
		r->out->garbage++;
	} else {
		r->out->records++;
		r->on_record(v, r->ctx);
	}
	json_decref(v);
}

int records_file_read(const char *path, void (*on_record)(const json_t *v, void *ctx), void *ctx,
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
