#define _GNU_SOURCE
#include <string.h>
#include "logparse.h"
#include "util.h"

struct line {
	const char *s;
	size_t len;        /* without the newline */
	int terminated;    /* ends with '\n' (else: the end of the buffer) */
	size_t next;       /* offset of the following line */
};

static int line_at(const char *buf, size_t len, size_t pos, struct line *l)
{
	if (pos >= len)
		return 0;
	const char *nl = memchr(buf + pos, '\n', len - pos);
	l->s = buf + pos;
	l->len = nl ? (size_t)(nl - l->s) : len - pos;
	l->terminated = nl != NULL;
	l->next = pos + l->len + (nl ? 1 : 0);
	return 1;
}

static int starts_with(const struct line *l, const char *prefix)
{
	size_t n = strlen(prefix);
	return l->len >= n && !memcmp(l->s, prefix, n);
}

/* A rule: at least three c, nothing else (a '\r' from a CRLF copy is fine). */
static int is_rule(const struct line *l, char c)
{
	size_t n = l->len;
	if (n && l->s[n - 1] == '\r')
		n--;
	if (n < 3)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (l->s[i] != c)
			return 0;
	return 1;
}

static int is_header_line(const struct line *l)
{
	return starts_with(l, "lockdep-rcu ") && memmem(l->s, l->len, ", pid ", 6) != NULL;
}

/* Could l be the beginning of what is expected, cut by the end of the file? */
static int prefix_of_rule(const struct line *l, char c)
{
	for (size_t i = 0; i < l->len; i++)
		if (l->s[i] != c)
			return 0;
	return 1;
}

static int prefix_of_header(const struct line *l)
{
	static const char head[] = "lockdep-rcu ";
	size_t n = l->len < sizeof(head) - 1 ? l->len : sizeof(head) - 1;
	return !memcmp(l->s, head, n);
}

/* "WARNING: ...", "BUG: ...": an upper-case word and a colon. Checked only
 * to tell a report cut short from text that merely starts with a rule. */
static int looks_like_title(const struct line *l)
{
	size_t i = 0;
	while (i < l->len && l->s[i] >= 'A' && l->s[i] <= 'Z')
		i++;
	return i > 0 && i < l->len && l->s[i] == ':';
}

static int could_start_a_title(const struct line *l)
{
	size_t i = 0;
	while (i < l->len && l->s[i] >= 'A' && l->s[i] <= 'Z')
		i++;
	return i == l->len || (i > 0 && l->s[i] == ':');
}

enum header { HEADER_NO, HEADER_YES, HEADER_CUT, HEADER_MORE };

/* Does a splat start at pos? HEADER_CUT: its first lines are there but the
 * log ends before the header is complete; HEADER_MORE: the same when more
 * input follows (not final): the answer needs it. *body is the offset
 * after the '-' rule. */
static enum header header_at(const char *buf, size_t len, size_t pos, int final, size_t *body)
{
	struct line l[4];
	int have = 0;
	for (size_t p = pos; have < 4 && line_at(buf, len, p, &l[have]); p = l[have - 1].next) {
		have++;
		if (!l[have - 1].terminated)
			break;
	}
	if (have == 0 || l[0].len < 3 || l[0].s[0] != '=')
		return HEADER_NO;   /* the common case, decided on the first byte */
	for (int i = 0; i < have; i++) {
		int full = l[i].terminated;
		int ok;
		switch (i) {
		case 0: ok = full ? is_rule(&l[0], '=') : prefix_of_rule(&l[0], '='); break;
		case 1: ok = full ? looks_like_title(&l[1]) : could_start_a_title(&l[1]); break;
		case 2: ok = full ? is_header_line(&l[2]) : prefix_of_header(&l[2]); break;
		default: ok = full ? is_rule(&l[3], '-') : prefix_of_rule(&l[3], '-'); break;
		}
		if (!ok)
			return HEADER_NO;
	}
	if (have == 4 && l[3].terminated) {
		*body = l[3].next;
		return HEADER_YES;
	}
	if (!final)
		return HEADER_MORE;
	/* A rule alone at the very end is more likely the program's own output
	 * than a report cut inside or right after its first line. */
	if (have == 1)
		return HEADER_NO;
	return HEADER_CUT;
}

static unsigned long summary_suppressed(const struct line *l)
{
	/* "...; 3 suppressed" */
	const char *p = memmem(l->s, l->len, " suppressed", 11);
	if (!p)
		return 0;
	const char *d = p;
	while (d > l->s && d[-1] >= '0' && d[-1] <= '9')
		d--;
	unsigned long n = 0;
	for (; d < p && n < 1000000000ul; d++)
		n = n * 10 + (unsigned long)(*d - '0');
	return n;
}

static void emit(const char *buf, size_t start, size_t end, const struct log_callbacks *cb, void *ctx,
		 struct log_scan *out)
{
	cb->splat(buf + start, end - start, ctx);
	out->splats++;
}

/* At the end of the buffer: "Call Trace:" with no frame after it is a
 * report cut right there (followed by anything else, it was complete: the
 * tracer writes a report at once, and the unwinder found no frame). */
static void emit_or_cut(const char *buf, size_t start, size_t end, size_t trace_start,
			const struct log_callbacks *cb, void *ctx, struct log_scan *out)
{
	if (end == trace_start) {
		out->truncated++;
		return;
	}
	emit(buf, start, end, cb, ctx, out);
}

size_t log_scan_part(const char *buf, size_t len, int final, const struct log_callbacks *cb, void *ctx,
		     struct log_scan *out, int *in_report)
{
	enum { OUTSIDE, BODY, TRACE } state = OUTSIDE;
	size_t start = 0, end = 0;   /* the current splat */
	size_t trace_start = 0;      /* its first frame */
	size_t pos = 0;
	struct line l;
	*in_report = 0;
	while (line_at(buf, len, pos, &l)) {
		if (!final && !l.terminated)
			goto more;   /* the rest of the line is still to come */
		size_t body;
		enum header h = header_at(buf, len, pos, final, &body);
		if (h == HEADER_MORE)
			goto more;
		if (h != HEADER_NO) {
			if (state == TRACE)
				emit(buf, start, end, cb, ctx, out);
			else if (state == BODY)
				out->truncated++;
			if (h == HEADER_CUT) {
				out->truncated++;
				return len;
			}
			state = BODY;
			start = pos;
			pos = body;
			continue;
		}
		if (state == BODY) {
			if (!l.terminated) {
				out->truncated++;
				return len;
			}
			if (starts_with(&l, "SUMMARY: lockdep-rcu:")) {
				out->truncated++;
				state = OUTSIDE;
				continue;   /* read again as a line outside splats */
			}
			if (l.len == 11 && !memcmp(l.s, "Call Trace:", 11)) {
				state = TRACE;
				end = trace_start = l.next;
			}
			pos = l.next;
			continue;
		}
		if (state == TRACE) {
			if (l.len > 0 && l.s[0] == ' ') {
				if (!l.terminated) {
					/* a frame cut short: the stack is incomplete, and
					 * keying the splat on it would make a bogus group */
					out->truncated++;
					return len;
				}
				end = l.next;
				pos = l.next;
				continue;
			}
			emit(buf, start, end, cb, ctx, out);
			state = OUTSIDE;
			continue;   /* this line is not part of the splat: read it again outside */
		}
		/* outside any splat */
		if (l.terminated && starts_with(&l, "SUMMARY: lockdep-rcu:")) {
			out->summaries++;
			out->suppressed += summary_suppressed(&l);
		} else if (l.terminated && starts_with(&l, "lockdep-rcu: ") && cb->tracer_line) {
			cb->tracer_line(l.s, l.len, ctx);
		}
		pos = l.next;
	}
	if (!final && state != OUTSIDE)
		goto more;   /* more frames may follow */
	if (state == TRACE)
		emit_or_cut(buf, start, end, trace_start, cb, ctx, out);
	else if (state == BODY)
		out->truncated++;
	return len;
more:
	/* Nothing from here on was passed on: the next call reads it again,
	 * starting outside any splat. */
	if (state != OUTSIDE) {
		*in_report = 1;
		return start;
	}
	return pos;
}

void text_sample_add(struct text_sample *s, const char *buf, size_t len)
{
	if (len > TEXT_SAMPLE_BYTES - s->bytes)
		len = TEXT_SAMPLE_BYTES - s->bytes;
	const unsigned char *b = (const unsigned char *)buf;
	for (size_t i = 0; i < len;) {
		unsigned char c = b[i];
		if ((c < 0x20 && c != '\n' && c != '\t' && c != '\r' && c != 0x1b) || c == 0x7f) {
			s->odd++;
			i++;
		} else {
			/* a sequence cut by the end of buf counts as odd: rare enough */
			size_t n = utf8_sequence(b + i, len - i);
			s->odd += n == 0;
			i += n ? n : 1;
		}
	}
	s->bytes += len;
}

int text_sample_is_binary(const struct text_sample *s)
{
	return s->odd * 8 > s->bytes;
}
