/* The tracer's text read back (text_log.h): finding reports in a log,
 * reading a report's structure and frames from its text, pairing a text
 * with its record, and a text made from a record whose report the log
 * lost. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include "text_log.h"

/* ---- finding reports in a log ------------------------------------------------ */

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

static int line_starts_with(const struct line *l, const char *prefix)
{
	size_t n = strlen(prefix);
	return l->len >= n && !memcmp(l->s, prefix, n);
}

/* Whether l is, or (cut by the end of the input: not terminated) could
 * begin, what the header expects. */

/* A rule: at least three c, nothing else (a '\r' from a CRLF copy is fine). */
static int is_rule(const struct line *l, char c)
{
	size_t n = l->len;
	if (l->terminated && n && l->s[n - 1] == '\r')
		n--;
	for (size_t i = 0; i < n; i++)
		if (l->s[i] != c)
			return 0;
	return n >= 3 || !l->terminated;
}

/* "WARNING: ...", "BUG: ...": an upper-case word and a colon. Checked only
 * to tell a report cut short from text that merely starts with a rule. */
static int is_title(const struct line *l)
{
	size_t i = 0;
	while (i < l->len && l->s[i] >= 'A' && l->s[i] <= 'Z')
		i++;
	return i == l->len ? !l->terminated : i > 0 && l->s[i] == ':';
}

static int is_header_line(const struct line *l)
{
	static const char head[] = "lockdep-rcu ";
	if (!l->terminated)
		return !memcmp(l->s, head, l->len < sizeof(head) - 1 ? l->len : sizeof(head) - 1);
	return line_starts_with(l, head) && memmem(l->s, l->len, ", pid ", 6) != NULL;
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
		int ok = i == 0 ? is_rule(&l[0], '=') : i == 1 ? is_title(&l[1]) :
			 i == 2 ? is_header_line(&l[2]) : is_rule(&l[3], '-');
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
			if (line_starts_with(&l, "SUMMARY: lockdep-rcu:")) {
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
		if (l.terminated && line_starts_with(&l, "SUMMARY: lockdep-rcu:")) {
			out->summaries++;
			out->suppressed += summary_suppressed(&l);
		} else if (l.terminated && line_starts_with(&l, "lockdep-rcu: ") && cb->tracer_line) {
			cb->tracer_line(l.s, l.len, ctx);
		}
		pos = l.next;
	}
	if (!final && state != OUTSIDE)
		goto more;   /* more frames may follow */
	/* At the end of the buffer, "Call Trace:" with no frame after it is a
	 * report cut right there (followed by anything else, it was complete:
	 * the tracer writes a report at once, and the unwinder found no frame). */
	if (state == TRACE && end > trace_start)
		emit(buf, start, end, cb, ctx, out);
	else if (state != OUTSIDE)
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

/* ---- one frame --------------------------------------------------------------- */

/* "0x" and hex digits, exactly n bytes: the byte after them is no hex digit. */
static int is_hex_number(const char *s, size_t n)
{
	return n > 2 && !strncmp(s, "0x", 2) && strspn(s + 2, "0123456789abcdefABCDEF") == n - 2;
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
			f->pc = strtoul(t, NULL, 16);
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
	if (is_hex_number(t, head) && plus && is_hex_number(plus + 1, (size_t)(close - plus - 1))) {
		/* "0xPC [module+0xoffset]" */
		f->pc = strtoul(t, NULL, 16);
		f->has_pc = 1;
		f->module = xstrndup(bracket, (size_t)(plus - bracket));
		f->offset = strtoul(plus + 1, NULL, 16);
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


/* ---- one report ------------------------------------------------------------- */

/* What the fallback reads is what a record
 * says, so both give the same bug (bug_key.c):
 *
 *   =====                                       line 0
 *   TITLE                                       line 1
 *   lockdep-rcu 0.1, pid 21321                  line 2
 *   -----                                       line 3
 *   MESSAGE                                     line 4: names the site, one of
 *     "0x55.. [demo+0x126d] suspicious ..."       a frame the tracer could not name
 *     "tests/demo.c:19 suspicious ..."            a source line
 *     "comm/12 is trying to acquire lock:"        the frame on the next line
 *   ...
 *   ADDR (NAME), at: FRAME                      after "trying to acquire lock:" (acquiring)
 *                                               and "already holding lock:" (holding)
 *   -> #1 (NAME){lock}:                         the dependency chain
 *    #0: ADDR (NAME){mutex}, at: FRAME          a held lock (leaked at thread end,
 *                                               freed before "N locks held by")
 *   Call Trace:
 *    FRAME ...                                  the stack */
struct lines {
	char **v;
	size_t n;
};

static void lines_split(const char *text, size_t len, struct lines *l)
{
	size_t cap = 0;
	memset(l, 0, sizeof(*l));
	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - text - pos) : len - pos;
		grow(&l->v, &cap, l->n + 1, sizeof(char *));
		l->v[l->n++] = xstrndup(text + pos, n);
		pos += n + 1;
	}
}

static void lines_free(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

/* Where the Call Trace's frames start: the line after "Call Trace:", or 0. */
static size_t trace_start(const struct lines *l)
{
	size_t at = 0;
	for (size_t i = 4; i < l->n; i++)
		if (!strcmp(l->v[i], "Call Trace:"))
			at = i + 1;
	return at;
}

/* A lock line: "[ #0: ][ADDR ](NAME)[{KIND}], at: FRAME[ (trylock)...]".
 * Adds the lock in role; NULL when the line is not one. */
static struct splat_lock *parse_lock_line(struct splat *s, const char *line, const char *role)
{
	const char *at = strstr(line, ", at: ");
	const char *open = strchr(line, '(');
	if (!at || !open || open > at)
		return NULL;
	const char *brace = memchr(open, '{', (size_t)(at - open));
	const char *close = brace ? brace : at;
	if (close[-1] != ')' || close - 1 <= open)
		return NULL;
	struct splat_lock *lock = splat_add_lock(s, role, open + 1, (size_t)(close - 1 - open - 1));
	if (brace && at[-1] == '}')
		lock->kind = xstrndup(brace + 1, (size_t)(at - 1 - brace - 1));
	const char *frame = at + 6;
	size_t flen = strlen(frame);
	/* what the tracer appends after the frame */
	static const char *const notes[] = { " (inherited over fork)", " (trylock)" };
	for (size_t i = 0; i < sizeof(notes) / sizeof(notes[0]); i++)
		if (flen >= strlen(notes[i]) && !strncmp(frame + flen - strlen(notes[i]), notes[i], strlen(notes[i])))
			flen -= strlen(notes[i]);
	const char *more = strstr(frame, " (and ");
	if (!more)
		more = strstr(frame, " (taken ");
	if (more && (size_t)(more - frame) < flen)
		flen = (size_t)(more - frame);
	if (frame[0] != '(') {   /* "(an inlined read side ...)": no frame */
		frame_parse(frame, flen, &lock->at);
		lock->has_at = 1;
	}
	return lock;
}

/* "path/to/file.c:19 message": the site as a source line alone. */
static int source_site(const char *message, struct frame *f)
{
	size_t n = strcspn(message, " ");
	const char *colon = memrchr(message, ':', n);
	if (!colon || colon == message || colon + 1 == message + n)
		return 0;
	for (const char *p = colon + 1; p < message + n; p++)
		if (*p < '0' || *p > '9')
			return 0;
	memset(f, 0, sizeof(*f));
	f->text = xstrndup(message, n);
	f->source = xstrndup(message, n);
	return 1;
}

/* "0x55.. [demo+0x126d] message": the site is a frame the tracer could not name. */
static int raw_frame_site(const char *message, struct frame *f)
{
	const char *close = strstr(message, "] ");
	if (strncmp(message, "0x", 2) || !close || !strstr(message, " [") || strstr(message, " [") > close)
		return 0;
	frame_parse(message, (size_t)(close + 1 - message), f);
	if (f->has_offset)
		return 1;
	frame_free(f);
	return 0;
}

static void copy_frame(struct frame *to, const struct frame *from)
{
	frame_parse(from->text, strlen(from->text), to);
	if (from->source && !to->source)
		to->source = xstrdup(from->source);
}

/* Adds the lock named in text from its first '(' to its last ')'; NULL
 * when there is none (or no text). */
static struct splat_lock *add_parenthesized(struct splat *s, const char *role, const char *text)
{
	const char *open = text ? strchr(text, '(') : NULL;
	const char *close = open ? strrchr(open, ')') : NULL;
	return close ? splat_add_lock(s, role, open + 1, (size_t)(close - open - 1)) : NULL;
}

/* The chain's locks in the record's order: "-> #0" first. */
static void parse_chain(struct splat *s, const struct lines *l, size_t end)
{
	long top = -1;
	for (size_t i = 4; i < end; i++)
		if (starts_with(l->v[i], "-> #")) {
			long k = atol(l->v[i] + 4);
			if (k > top)
				top = k;
		}
	for (long k = 0; k <= top; k++)
		for (size_t i = 4; i < end; i++) {
			const char *line = l->v[i];
			if (!starts_with(line, "-> #") || atol(line + 4) != k)
				continue;
			const char *open = strchr(line, '(');
			const char *close = open ? strstr(open, "){") : NULL;
			if (!close)
				close = open ? strrchr(open, ')') : NULL;
			if (!open || !close)
				continue;
			struct splat_lock *lock = splat_add_lock(s, "chain", open + 1, (size_t)(close - open - 1));
			if (close[1] == '{' && strchr(close, '}'))
				lock->kind = xstrndup(close + 2, (size_t)(strchr(close, '}') - close - 2));
			break;
		}
}

static void parse_locks(struct splat *s, const struct lines *l, size_t end)
{
	int thread_end = !strcmp(s->kind, "locks_held_at_exit");
	int freeing = !strcmp(s->kind, "held_lock_freed");
	const char *message = l->n > 4 ? l->v[4] : "";
	if (!strcmp(s->kind, "bad_unlock")) {
		/* "comm/12 is trying to release lock (NAME) at:" */
		struct splat_lock *lock = add_parenthesized(s, "released", strstr(message, "release lock ("));
		for (size_t i = 4; lock && i + 1 < end; i++)
			if (ends_with(l->v[i], "which took it at:")) {
				frame_parse(l->v[i + 1], strlen(l->v[i + 1]), &lock->at);
				lock->has_at = 1;
			}
	}
	for (size_t i = 4; i + 1 < end; i++) {
		if (ends_with(l->v[i], "is trying to acquire lock:") || ends_with(l->v[i], " is trying to acquire:") ||
		    ends_with(l->v[i], "] takes:") || ends_with(l->v[i], " just changed the state of lock:")) {
			struct splat_lock *lock = parse_lock_line(s, l->v[i + 1], "acquiring");
			if (lock && lock->has_at) {
				/* where it is being taken is the site, not where it was taken */
				frame_free(&lock->at);
				lock->has_at = 0;
			}
		} else if (!strcmp(l->v[i], "but task is already holding lock:") ||
			   !strcmp(l->v[i], "and this task is already holding:")) {
			parse_lock_line(s, l->v[i + 1], "holding");
		} else if (ends_with(l->v[i], " state was registered at:") && s->nlocks) {
			/* inconsistent lock state: the other usage of the lock
			 * being acquired, where it was first seen */
			const char *name = s->locks[s->nlocks - 1].name;
			struct splat_lock *lock = splat_add_lock(s, "usage", name, strlen(name));
			frame_parse(l->v[i + 1], strlen(l->v[i + 1]), &lock->at);
			lock->has_at = 1;
		} else if (ends_with(l->v[i], " lock in the past:") ||
			   (starts_with(l->v[i], "but this new dependency connects a ") && ends_with(l->v[i], "-safe lock:")) ||
			   (starts_with(l->v[i], "to a ") && ends_with(l->v[i], "-unsafe lock:"))) {
			/* the locks at the two ends of a signal-safe -> unsafe
			 * dependency: " (NAME)" */
			add_parenthesized(s, "chain", l->v[i + 1]);
		}
	}
	parse_chain(s, l, end);
	int in_held_list = 0;
	for (size_t i = 4; i < end; i++) {
		const char *line = l->v[i];
		if (strstr(line, " held by ") && ends_with(line, ":"))
			in_held_list = 1;   /* "N locks held by comm/12:" */
		if (!starts_with(line, " #"))
			continue;
		const char *role = thread_end ? "leaked" : freeing && !in_held_list ? "freed" : "held";
		parse_lock_line(s, line, role);
	}
}

/* The site, as the record names it: see the top of this file. */
static void parse_site(struct splat *s, const struct lines *l)
{
	const char *message = l->n > 4 ? l->v[4] : "";
	if (raw_frame_site(message, &s->site) || source_site(message, &s->site)) {
		s->has_site = 1;
		return;
	}
	if (!strcmp(s->kind, "locks_held_at_exit")) {
		/* the innermost lock the thread took: the last one listed */
		for (size_t i = s->nlocks; i-- > 0;)
			if (!strcmp(s->locks[i].role, "leaked") && s->locks[i].has_at) {
				copy_frame(&s->site, &s->locks[i].at);
				s->has_site = 1;
				return;
			}
		return;
	}
	if (ends_with(message, ":") && l->n > 5 && l->v[5][0]) {
		const char *next = l->v[5];
		const char *at = strstr(next, ", at: ");
		const char *frame = at ? at + 6 : next;
		frame_parse(frame, strlen(frame), &s->site);
		s->has_site = 1;
		return;
	}
	if (s->ntrace) {
		copy_frame(&s->site, &s->trace[0]);
		s->has_site = 1;
	}
}

/* "lockdep-rcu 0.1, pid 21321, report 3": the pid and the number (0 when
 * the header has none). */
static void header_identity(const char *header, int *pid, unsigned long *seq)
{
	const char *p = strstr(header, ", pid ");
	*pid = p ? atoi(p + 6) : 0;
	const char *r = p ? strstr(p, ", report ") : NULL;
	*seq = r ? strtoul(r + 9, NULL, 10) : 0;
}

int splat_parse(const char *text, size_t len, struct splat *s)
{
	memset(s, 0, sizeof(*s));
	struct lines l;
	lines_split(text, len, &l);
	if (l.n < 4) {
		lines_free(&l);
		return -1;
	}
	s->text = xstrndup(text, len);
	s->title = xstrdup(l.v[1]);
	s->kind = xstrdup(splat_kind_of_title(s->title));
	s->message = xstrdup(l.n > 4 ? l.v[4] : "");
	header_identity(l.v[2], &s->pid, &s->seq);
	size_t trace = trace_start(&l);
	size_t body_end = trace ? trace : l.n;
	for (size_t i = 4; i < body_end; i++) {
		const char *tid = starts_with(l.v[i], "CPU: ") ? strstr(l.v[i], " TID: ") : NULL;
		if (tid)
			s->tid = atoi(tid + 6);
	}
	if (trace) {
		s->ntrace = l.n - trace;
		s->trace = xcalloc(s->ntrace, sizeof(*s->trace));
		for (size_t i = 0; i < s->ntrace; i++)
			frame_parse(l.v[trace + i], strlen(l.v[trace + i]), &s->trace[i]);
	}
	parse_locks(s, &l, body_end);
	parse_site(s, &l);
	lines_free(&l);
	return 0;
}

int splat_text_identity(const char *text, size_t len, char **title, int *pid, unsigned long *seq)
{
	const char *line1 = memchr(text, '\n', len);
	const char *line2 = line1 ? memchr(line1 + 1, '\n', len - (size_t)(line1 + 1 - text)) : NULL;
	const char *line3 = line2 ? memchr(line2 + 1, '\n', len - (size_t)(line2 + 1 - text)) : NULL;
	if (!line3)
		return -1;
	char *header = xstrndup(line2 + 1, (size_t)(line3 - line2 - 1));
	header_identity(header, pid, seq);
	free(header);
	*title = xstrndup(line1 + 1, (size_t)(line2 - line1 - 1));
	return 0;
}

void splat_attach_text(struct splat *s, const char *text, size_t len)
{
	free(s->text);
	s->text = xstrndup(text, len);
	/* The frames' texts as printed (the record's own rendering has no
	 * function size), when the Call Trace has one line per frame and the
	 * line names the function the record names (with symbolize=0 the
	 * text has addresses only: the record's rendering stays). */
	struct lines l;
	lines_split(text, len, &l);
	size_t trace = trace_start(&l);
	if (trace && l.n - trace == s->ntrace)
		for (size_t i = 0; i < s->ntrace; i++) {
			struct frame *f = &s->trace[i];
			const char *line = l.v[trace + i] + strspn(l.v[trace + i], " ");
			size_t n = f->function ? strlen(f->function) : 0;
			if (!n || strncmp(line, f->function, n) || line[n] != '+')
				continue;
			free(f->text);
			f->text = xstrdup(line);
		}
	lines_free(&l);
}

static void rule(struct strbuf *b, char c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sb_putc(b, c);
	sb_putc(b, '\n');
}

void splat_make_text(struct splat *s)
{
	struct strbuf b = { 0 };
	size_t width = strlen(s->title);
	rule(&b, '=', width);
	sb_printf(&b, "%s\nlockdep-rcu, pid %d (from its record: the log lost this report)\n", s->title, s->pid);
	rule(&b, '-', width);
	sb_printf(&b, "%s\n", s->message ? s->message : "");
	int index = 0;
	for (size_t i = 0; i < s->nlocks; i++) {
		/* held lines as the tracer prints them; the other roles named */
		const struct splat_lock *lock = &s->locks[i];
		int listed = !strcmp(lock->role, "held") || !strcmp(lock->role, "leaked") || !strcmp(lock->role, "freed");
		if (listed)
			sb_printf(&b, " #%d: (%s)", index++, lock->name);
		else
			sb_printf(&b, "%s lock: (%s)", lock->role, lock->name);
		if (lock->kind)
			sb_printf(&b, "{%s}", lock->kind);
		if (lock->has_at) {
			sb_puts(&b, ", at: ");
			sb_puts(&b, lock->at.text);
		}
		sb_putc(&b, '\n');
	}
	sb_printf(&b, "\nstack backtrace:\nCPU: ? PID: %d TID: %d\nCall Trace:\n", s->pid, s->tid);
	for (size_t i = 0; i < s->ntrace; i++)
		sb_printf(&b, " %s\n", s->trace[i].text);
	free(s->text);
	s->text = sb_detach(&b);
}

/* ---- reading a rendered text ------------------------------------------------ */

char *splat_text_line(const char *text, size_t index)
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
int splat_text_innermost_lock(const char *rendered, struct strbuf *out)
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
