/* Printing a report: its text as the tracer wrote it, with every frame the
 * report named (addr2line), or its record names, written in where the
 * text has only the address, "0x55.. [demo+0x126d]" or "0x55..". The same
 * for records and for text-only logs: the structure says which frames are
 * named, the text is what is printed. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "text_log.h"

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
	subs->n = 0;
	if (s->has_site)
		want(subs, s, &s->site);
	for (size_t i = 0; i < s->ntrace; i++)
		want(subs, s, &s->trace[i]);
	for (size_t i = 0; i < s->nlocks; i++)
		if (s->locks[i].has_at)
			want(subs, s, &s->locks[i].at);
}

static int is_hex_digit(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* The substitution whose raw form starts line[pos], a whole token. */
static const struct substitution *match(const struct substitutions *subs, const char *line, size_t len, size_t pos)
{
	if (line[pos] != '0' || (pos && is_hex_digit(line[pos - 1])))
		return NULL;
	for (size_t i = 0; i < subs->n; i++) {
		size_t n = strlen(subs->v[i].raw);
		if (n <= len - pos && !strncmp(line + pos, subs->v[i].raw, n) &&
		    (pos + n == len || !is_hex_digit(line[pos + n])))
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
