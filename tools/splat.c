#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "splat.h"

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
	if (open && close) {
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
			f->module = xstrndup(bracket, (size_t)(plus - bracket));
			f->offset = hex_value(plus + 3, (size_t)(close - plus - 3));
			f->has_offset = 1;
		} else if (head > 0) {
			/* "name+0xoff/0xsize" */
			const char *fplus = NULL;
			for (const char *p = t; p + 2 < t + head; p++)
				if (p[0] == '+' && p[1] == '0' && p[2] == 'x')
					fplus = p;
			f->function = xstrndup(t, fplus ? (size_t)(fplus - t) : head);
			if (blen)
				f->module = xstrndup(bracket, blen);
		}
	}
	/* "0xADDR" alone: nothing to resolve it with (no module). */
}

void frame_free(struct frame *f)
{
	free(f->text);
	free(f->function);
	free(f->module);
	free(f->source);
	free(f->inlined);
	memset(f, 0, sizeof(*f));
}

void frame_render(const struct frame *f, struct strbuf *out)
{
	if (!f->symbolized) {
		sb_puts(out, f->text);
		return;
	}
	sb_printf(out, "%s [%s+0x%lx]", f->function ? f->function : "??", f->module, f->offset);
	if (f->source)
		sb_printf(out, " %s", f->source);
	if (f->inlined)
		sb_printf(out, " (inlined: %s)", f->inlined);
}

const char *splat_kind_of_title(const char *title)
{
	static const struct { const char *prefix, *suffix, *kind; } kinds[] = {
		{ "WARNING: suspicious RCU usage", "", "suspicious_rcu" },
		{ "WARNING: bad unlock balance detected", "", "bad_unlock" },
		{ "WARNING: possible recursive locking detected", "", "recursive_locking" },
		{ "BUG: held lock freed", "", "held_lock_freed" },
		{ "BUG: RCU-protected object freed while a reader holds it", "", "rcu_use_after_free" },
		{ "BUG: ", " still has locks held!", "locks_held_at_exit" },
		{ "WARNING: possible circular locking dependency", "", "circular_dependency" },
		{ "WARNING: ", "", "lockdep_assertion" },   /* "WARNING: comm/tid at file:line" */
	};
	size_t tlen = strlen(title);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t p = strlen(kinds[i].prefix), s = strlen(kinds[i].suffix);
		if (tlen < p + s || strncmp(title, kinds[i].prefix, p) ||
		    strcmp(title + tlen - s, kinds[i].suffix))
			continue;
		if (!strcmp(kinds[i].kind, "lockdep_assertion") && !strstr(title, " at "))
			continue;
		return kinds[i].kind;
	}
	return "unknown";
}

static void parse_site(struct splat *s)
{
	const char *line = s->lines[s->site_line];
	/* "0xADDR [module+0xoff] message": the tracer could not name the site */
	const char *close = NULL;
	if (line[0] == '0' && line[1] == 'x' && (close = strstr(line, "] ")) != NULL &&
	    strstr(line, " [") && strstr(line, " [") < close) {
		frame_parse(line, (size_t)(close + 1 - line), &s->site);
		if (s->site.has_offset) {
			s->site_has_frame = 1;
			s->site_message = xstrdup(close + 2);
			return;
		}
		frame_free(&s->site);
	}
	s->site_message = xstrdup(line);
}

/* A lock line: " #0: 000055e4ae1b50c0 (update_lock){mutex}, at: FRAME" for a
 * held lock (" (trylock)" may follow), or "000055e4ae1b50c0 (table_lock),
 * at: FRAME" for the lock being acquired in a recursive-locking report. */
static void parse_held(struct splat *s, size_t i)
{
	const char *line = s->lines[i];
	const char *at = strstr(line, ", at: ");
	const char *open = strchr(line, '(');
	if (!at || !open || open > at)
		return;
	grow(&s->held, &s->held_cap, s->nheld + 1, sizeof(*s->held));
	struct held_line *h = &s->held[s->nheld++];
	memset(h, 0, sizeof(*h));
	h->line = i;
	h->at = (size_t)(at + 6 - line);
	h->lock = xstrndup(open, (size_t)(at - open));
	const char *frame = at + 6;
	size_t flen = strlen(frame);
	static const char trylock[] = " (trylock)";
	if (flen >= sizeof(trylock) - 1 && !strcmp(frame + flen - (sizeof(trylock) - 1), trylock))
		flen -= sizeof(trylock) - 1;
	frame_parse(frame, flen, &h->frame);
}

int splat_parse(const char *text, size_t len, struct splat *s)
{
	memset(s, 0, sizeof(*s));
	size_t cap = 0;
	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - text - pos) : len - pos;
		grow(&s->lines, &cap, s->nlines + 1, sizeof(char *));
		s->lines[s->nlines++] = xstrndup(text + pos, n);
		pos += n + 1;
	}
	if (s->nlines < 4) {
		splat_free(s);
		return -1;
	}
	s->title = xstrdup(s->lines[1]);
	s->kind = splat_kind_of_title(s->title);
	const char *pid = strstr(s->lines[2], ", pid ");
	s->pid = pid ? atoi(pid + 6) : 0;
	if (s->nlines > 4) {
		s->site_line = 4;
		parse_site(s);
	} else {
		s->site_message = xstrdup("");
	}
	size_t trace = 0;
	for (size_t i = 4; i < s->nlines; i++)
		if (!strcmp(s->lines[i], "Call Trace:"))
			trace = i + 1;
	/* held-lock lines are in the body, before the backtrace */
	for (size_t i = 4; i < (trace ? trace : s->nlines); i++)
		parse_held(s, i);
	if (trace) {
		s->trace_line = trace;
		s->ntrace = s->nlines - trace;
		s->trace = xcalloc(s->ntrace, sizeof(*s->trace));
		for (size_t i = 0; i < s->ntrace; i++)
			frame_parse(s->lines[trace + i], strlen(s->lines[trace + i]), &s->trace[i]);
	}
	return 0;
}

void splat_free(struct splat *s)
{
	for (size_t i = 0; i < s->nlines; i++)
		free(s->lines[i]);
	free(s->lines);
	free(s->title);
	frame_free(&s->site);
	free(s->site_message);
	for (size_t i = 0; i < s->ntrace; i++)
		frame_free(&s->trace[i]);
	free(s->trace);
	for (size_t i = 0; i < s->nheld; i++) {
		free(s->held[i].lock);
		frame_free(&s->held[i].frame);
	}
	free(s->held);
	memset(s, 0, sizeof(*s));
}

void splat_site_render(const struct splat *s, struct strbuf *out)
{
	if (s->site_has_frame && s->site.symbolized && s->site.source)
		sb_printf(out, "%s %s", s->site.source, s->site_message);
	else if (s->site_line)
		sb_puts(out, s->lines[s->site_line]);
}

void splat_summary_render(const struct splat *s, struct strbuf *out)
{
	if (!strcmp(s->kind, "locks_held_at_exit") && s->nheld) {
		/* the innermost lock: what the group is keyed on (splat_key.c) */
		const struct held_line *h = &s->held[s->nheld - 1];
		sb_printf(out, "%s held, taken at ", h->lock);
		frame_render(&h->frame, out);
		if (s->nheld > 1)
			sb_printf(out, " (the innermost of %zu locks held)", s->nheld);
		return;
	}
	splat_site_render(s, out);
	/* "comm/tid is trying to acquire lock:" says what follows */
	size_t n = s->site_line ? strlen(s->lines[s->site_line]) : 0;
	size_t next = s->site_line + 1;
	if (!n || s->lines[s->site_line][n - 1] != ':' || next >= s->nlines || !s->lines[next][0])
		return;
	sb_putc(out, ' ');
	const char *line = s->lines[next];
	while (*line == ' ')
		line++;
	for (size_t h = 0; h < s->nheld; h++)
		if (s->held[h].line == next) {
			sb_add(out, line, s->held[h].at - (size_t)(line - s->lines[next]));
			frame_render(&s->held[h].frame, out);
			return;
		}
	sb_puts(out, line);
}

void splat_render(const struct splat *s, struct strbuf *out)
{
	size_t held = 0;
	for (size_t i = 0; i < s->nlines; i++) {
		while (held < s->nheld && s->held[held].line < i)
			held++;
		if (i == s->site_line && i) {
			splat_site_render(s, out);
		} else if (s->ntrace && i >= s->trace_line) {
			sb_putc(out, ' ');
			frame_render(&s->trace[i - s->trace_line], out);
		} else if (held < s->nheld && s->held[held].line == i) {
			sb_add(out, s->lines[i], s->held[held].at);
			frame_render(&s->held[held].frame, out);
			const char *line = s->lines[i];
			size_t n = strlen(line);
			if (n >= 10 && !strcmp(line + n - 10, " (trylock)"))
				sb_puts(out, " (trylock)");
		} else {
			sb_puts(out, s->lines[i]);
		}
		sb_putc(out, '\n');
	}
}
