#include <string.h>
#include "splat_key.h"

static int is_hex_digit(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int is_word(char c)
{
	return is_hex_digit(c) || (c >= 'g' && c <= 'z') || (c >= 'G' && c <= 'Z') || c == '_';
}

/* Ends a task name "comm/tid": what the tracer prints after one. */
static int ends_task(char c)
{
	return c == 0 || c == ' ' || c == ':' || c == '.' || c == '!' || c == ',' || c == ')';
}

void normalize_text(const char *in, struct strbuf *out)
{
	size_t word_start = out->len;   /* where the current space-separated word began in out */
	for (const char *p = in; *p;) {
		if (*p == ' ') {
			sb_putc(out, ' ');
			p++;
			word_start = out->len;
			continue;
		}
		if (*p == '/' && p[1] >= '0' && p[1] <= '9') {
			const char *d = p + 1;
			while (*d >= '0' && *d <= '9')
				d++;
			if (ends_task(*d) && out->len > word_start) {
				out->len = word_start;
				out->s[out->len] = 0;
				sb_puts(out, "<task>");
				p = d;
				continue;
			}
		}
		int word_boundary = p == in || !is_word(p[-1]);
		if (word_boundary && p[0] == '0' && p[1] == 'x' && is_hex_digit(p[2])) {
			const char *e = p + 2;
			while (is_hex_digit(*e))
				e++;
			if (p > in && p[-1] == '+') {
				sb_add(out, p, (size_t)(e - p));   /* an offset in a module */
			} else {
				sb_puts(out, "0x?");
			}
			p = e;
			continue;
		}
		if (word_boundary && is_hex_digit(*p)) {
			const char *e = p;
			while (is_hex_digit(*e))
				e++;
			if (e - p >= 12 && !is_word(*e)) {
				sb_putc(out, '?');   /* a lock address, "000055a6d7ddf0c0" */
				p = e;
				continue;
			}
			sb_add(out, p, (size_t)(e - p));
			p = e;
			continue;
		}
		sb_putc(out, *p++);
	}
}

void frame_key(const struct frame *f, struct strbuf *out)
{
	if (f->function && strcmp(f->function, "??"))
		sb_printf(out, "%s [%s]", f->function, f->module ? f->module : "?");
	else if (f->has_offset)
		sb_printf(out, "%s+0x%lx", f->module, f->offset);
	else if (f->text[0] == '0' && f->text[1] == 'x')
		sb_putc(out, '?');
	else
		normalize_text(f->text, out);
}

/* "path/to/file.c:19 message" keyed as "file.c:19 message": addr2line
 * prints the absolute path where the tracer printed it relative to the
 * compilation directory. */
static void site_key(const struct splat *s, struct strbuf *out)
{
	struct strbuf site = { 0 };
	splat_site_render(s, &site);
	const char *text = site.s ? site.s : "";
	const char *space = strchr(text, ' ');
	const char *colon = NULL;
	for (const char *p = text; p < (space ? space : text + strlen(text)); p++)
		if (*p == ':')
			colon = p;
	if (colon && colon[1] >= '0' && colon[1] <= '9') {
		const char *base = text;
		for (const char *p = text; p < colon; p++)
			if (*p == '/')
				base = p + 1;
		text = base;
	}
	if (s->site_has_frame && !s->site.symbolized) {
		/* "0xADDR [module+0xoff] message": the module offset is the site */
		frame_key(&s->site, out);
		sb_putc(out, ' ');
		normalize_text(s->site_message, out);
	} else {
		normalize_text(text, out);
	}
	sb_free(&site);
}

char *splat_key(const struct splat *s)
{
	struct strbuf key = { 0 };
	normalize_text(s->title, &key);
	if (!strcmp(s->kind, "locks_held_at_exit") && s->nheld) {
		/* A thread that ends holding locks: the innermost lock and where
		 * it was taken are the bug, as for the tracer, which reports a
		 * thread end once per innermost acquisition site. The site line
		 * only counts the locks, the outer ones depend on the path that
		 * led there, and the stack on how the thread ended. */
		const struct held_line *h = &s->held[s->nheld - 1];
		/* "{mutex}", not the lock's name: without symbols the tracer
		 * can only call it "(pthread_mutex_t)" */
		const char *kind = strchr(h->lock, '{');
		sb_puts(&key, "\nheld ");
		normalize_text(kind ? kind : h->lock, &key);
		sb_puts(&key, " at ");
		frame_key(&h->frame, &key);
		return sb_detach(&key);
	}
	sb_putc(&key, '\n');
	site_key(s, &key);
	for (size_t i = 0; i < s->ntrace && i < KEY_FRAMES; i++) {
		sb_putc(&key, '\n');
		frame_key(&s->trace[i], &key);
	}
	return sb_detach(&key);
}
