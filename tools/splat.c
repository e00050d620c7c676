/* The report model: frames, locks, freeing, and reading one printed frame. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "splat.h"
#include "../preload/base/report_kinds.h"

void frame_free(struct frame *f)
{
	free(f->text);
	free(f->function);
	free(f->module);
	free(f->module_path);
	free(f->source);
	free(f->inlined);
	memset(f, 0, sizeof(*f));
}

void splat_free(struct splat *s)
{
	free(s->text);
	free(s->title);
	free(s->kind);
	free(s->message);
	frame_free(&s->site);
	for (size_t i = 0; i < s->nlocks; i++) {
		free(s->locks[i].role);
		free(s->locks[i].name);
		free(s->locks[i].kind);
		frame_free(&s->locks[i].at);
	}
	free(s->locks);
	for (size_t i = 0; i < s->ntrace; i++)
		frame_free(&s->trace[i]);
	free(s->trace);
	memset(s, 0, sizeof(*s));
}

struct splat_lock *splat_add_lock(struct splat *s, const char *role, const char *name)
{
	grow(&s->locks, &s->locks_cap, s->nlocks + 1, sizeof(*s->locks));
	struct splat_lock *l = &s->locks[s->nlocks++];
	memset(l, 0, sizeof(*l));
	l->role = xstrdup(role);
	l->name = xstrdup(name);
	return l;
}

const char *path_basename(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static int is_hex(const char *s, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') || (s[i] >= 'A' && s[i] <= 'F')))
			return 0;
	return 1;
}

/* "0x" followed by hex digits, exactly n bytes. */
static int is_hex_number(const char *s, size_t n)
{
	return n > 2 && s[0] == '0' && s[1] == 'x' && is_hex(s + 2, n - 2);
}

static unsigned long hex_value(const char *s, size_t n)
{
	unsigned long v = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		v = v * 16 + (unsigned long)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	return v;
}

void frame_parse(const char *text, size_t len, struct frame *f)
{
	memset(f, 0, sizeof(*f));
	while (len && *text == ' ') {
		text++;
		len--;
	}
	while (len && (text[len - 1] == '\r' || text[len - 1] == ' '))
		len--;
	f->text = xstrndup(text, len);
	const char *t = f->text;
	const char *open = strstr(t, " [");
	const char *close = open ? strchr(open + 2, ']') : NULL;
	if (!open || !close) {
		/* "0xADDR" alone: nothing to resolve it with (no module) */
		if (is_hex_number(t, strlen(t))) {
			f->pc = hex_value(t + 2, strlen(t) - 2);
			f->has_pc = 1;
		}
		return;
	}
	size_t head = (size_t)(open - t);
	const char *bracket = open + 2;
	size_t blen = (size_t)(close - bracket);
	const char *rest = close + 1;
	while (*rest == ' ')
		rest++;
	if (*rest)
		f->source = xstrdup(rest);
	const char *plus = NULL;
	for (const char *p = bracket; p + 2 < close; p++)
		if (p[0] == '+' && p[1] == '0' && p[2] == 'x')
			plus = p;
	if (is_hex_number(t, head) && plus && is_hex(plus + 3, (size_t)(close - plus - 3))) {
		/* "0xPC [module+0xoffset]" */
		f->pc = hex_value(t + 2, head - 2);
		f->has_pc = 1;
		f->module = xstrndup(bracket, (size_t)(plus - bracket));
		f->offset = hex_value(plus + 3, (size_t)(close - plus - 3));
		f->has_offset = 1;
	} else if (head > 0) {
		/* "name+0xoff/0xsize [module]" */
		const char *fplus = NULL;
		for (const char *p = t; p + 2 < t + head; p++)
			if (p[0] == '+' && p[1] == '0' && p[2] == 'x')
				fplus = p;
		f->function = xstrndup(t, fplus ? (size_t)(fplus - t) : head);
		if (blen)
			f->module = xstrndup(bracket, blen);
	}
}

void frame_render(const struct frame *f, struct strbuf *out)
{
	if (!f->symbolized) {
		sb_puts(out, f->text ? f->text : "?");
		return;
	}
	sb_printf(out, "%s [%s+0x%lx]", f->function ? f->function : "??", f->module, f->offset);
	if (f->source)
		sb_printf(out, " %s", f->source);
	if (f->inlined)
		sb_printf(out, " (inlined: %s)", f->inlined);
}

/* The kinds and titles are the tracer's own list (base/report_kinds.h). */
int splat_is_report_kind(const char *kind)
{
	return kind && report_kind_of_record(kind, strlen(kind)) < NR_REPORT_KINDS;
}

const char *splat_kind_of_title(const char *title)
{
	enum report_kind kind = report_kind_of_title(title);
	return kind < NR_REPORT_KINDS ? report_record_kind[kind] : "unknown";
}
