/* Printing a report: its text as the tracer wrote it, with every frame the
 * report named (addr2line) written in where the tracer had to leave the
 * address, "0x55.. [demo+0x126d]". The same for records and for text-only
 * logs: the structure says which frames were named, the text is printed. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "splat.h"

struct substitution {
	const char *raw;          /* the tracer's text for an address it could not name */
	const struct frame *frame;
};

struct substitutions {
	struct substitution v[512];
	size_t n;
};

static void want(struct substitutions *subs, const struct frame *f)
{
	if (!f->symbolized || !f->text || !f->has_offset || subs->n == sizeof(subs->v) / sizeof(subs->v[0]))
		return;
	for (size_t i = 0; i < subs->n; i++)
		if (!strcmp(subs->v[i].raw, f->text))
			return;
	subs->v[subs->n++] = (struct substitution){ f->text, f };
}

static void collect(const struct splat *s, struct substitutions *subs)
{
	subs->n = 0;
	if (s->has_site)
		want(subs, &s->site);
	for (size_t i = 0; i < s->ntrace; i++)
		want(subs, &s->trace[i]);
	for (size_t i = 0; i < s->nlocks; i++)
		if (s->locks[i].has_at)
			want(subs, &s->locks[i].at);
}

/* One line (without its newline), frames named. */
static void render_line(const char *line, size_t len, int site_line, const struct splat *s,
			const struct substitutions *subs, struct strbuf *out)
{
	/* "0x55.. [demo+0x126d] message" reads "demo.c:19 message" once named,
	 * as the tracer prints a site it could name */
	if (site_line && s->has_site && s->site.symbolized && s->site.source) {
		size_t raw = strlen(s->site.text);
		if (len > raw && !strncmp(line, s->site.text, raw) && line[raw] == ' ') {
			sb_puts(out, s->site.source);
			line += raw;
			len -= raw;
		}
	}
	for (size_t pos = 0; pos < len;) {
		const struct substitution *hit = NULL;
		if (line[pos] == '0')
			for (size_t i = 0; i < subs->n && !hit; i++) {
				size_t n = strlen(subs->v[i].raw);
				if (n <= len - pos && !strncmp(line + pos, subs->v[i].raw, n))
					hit = &subs->v[i];
			}
		if (hit) {
			frame_render(hit->frame, out);
			pos += strlen(hit->raw);
		} else {
			sb_putc(out, line[pos++]);
		}
	}
}

void splat_render(const struct splat *s, struct strbuf *out)
{
	struct substitutions subs;
	collect(s, &subs);
	const char *text = s->text ? s->text : "";
	size_t index = 0;
	for (const char *p = text; *p; index++) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		render_line(p, n, index == 4, s, &subs, out);
		sb_putc(out, '\n');
		p += n + (nl ? 1 : 0);
	}
}

/* Line `index` of a rendered text, without its newline (a new string), or NULL. */
static char *line_of(const char *text, size_t index)
{
	for (; index && text; index--) {
		text = strchr(text, '\n');
		if (text)
			text++;
	}
	if (!text || !*text)
		return NULL;
	return xstrndup(text, strcspn(text, "\n"));
}

/* The innermost lock of a thread-end report, from its text: the last
 * " #N: ADDR (name){kind}, at: FRAME" line, "(name){kind} held, taken at FRAME". */
static int innermost_lock(const char *rendered, struct strbuf *out)
{
	const char *last = NULL;
	size_t locks = 0;
	for (const char *p = rendered; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, "stack backtrace:", 16))
			break;
		size_t n = strcspn(p, "\n");
		const char *at = memmem(p, n, ", at: ", 6);
		if (!strncmp(p, " #", 2) && at && memchr(p, '(', (size_t)(at - p))) {
			last = p;
			locks++;
		}
	}
	if (!last)
		return 0;
	size_t n = strcspn(last, "\n");
	const char *at = memmem(last, n, ", at: ", 6);
	const char *open = memchr(last, '(', (size_t)(at - last));
	sb_add(out, open, (size_t)(at - open));
	sb_puts(out, " held, taken at ");
	const char *frame = at + 6;
	size_t flen = (size_t)(last + n - frame);
	if (flen >= 10 && !strncmp(frame + flen - 10, " (trylock)", 10))
		flen -= 10;
	sb_add(out, frame, flen);
	if (locks > 1)
		sb_printf(out, " (the innermost of %zu locks held)", locks);
	return 1;
}

void splat_summary_render(const struct splat *s, struct strbuf *out)
{
	struct strbuf rendered = { 0 };
	splat_render(s, &rendered);
	const char *text = rendered.s ? rendered.s : "";
	if (!strcmp(s->kind, "locks_held_at_exit") && innermost_lock(text, out)) {
		sb_free(&rendered);
		return;
	}
	char *site = line_of(text, 4), *next = line_of(text, 5);
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
