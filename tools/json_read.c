#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "json.h"
#include "util.h"

struct reader {
	const char *s;
	size_t len, pos;
};

static void skip_space(struct reader *r)
{
	while (r->pos < r->len && (r->s[r->pos] == ' ' || r->s[r->pos] == '\t' || r->s[r->pos] == '\n' ||
				   r->s[r->pos] == '\r'))
		r->pos++;
}

static int peek(const struct reader *r)
{
	return r->pos < r->len ? (unsigned char)r->s[r->pos] : -1;
}

static int literal(struct reader *r, const char *word)
{
	size_t n = strlen(word);
	if (r->len - r->pos < n || memcmp(r->s + r->pos, word, n))
		return -1;
	r->pos += n;
	return 0;
}

static int hex4(struct reader *r, unsigned *out)
{
	if (r->len - r->pos < 4)
		return -1;
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = r->s[r->pos++];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			v |= (unsigned)((c | 0x20) - 'a' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static void put_utf8(struct strbuf *b, unsigned cp)
{
	char u[4];
	size_t n;
	if (cp < 0x80) {
		u[0] = (char)cp, n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6)), u[1] = (char)(0x80 | (cp & 0x3f)), n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | (cp >> 12)), u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f)), n = 3;
	} else {
		u[0] = (char)(0xf0 | (cp >> 18)), u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f)), u[3] = (char)(0x80 | (cp & 0x3f)), n = 4;
	}
	sb_add(b, u, n);
}

/* An escape after its backslash: "\n", "\u00e9", a surrogate pair. */
static int escape(struct reader *r, struct strbuf *b)
{
	if (r->pos >= r->len)
		return -1;
	char c = r->s[r->pos++];
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *p = c ? strchr(from, c) : NULL;
	if (p) {
		sb_putc(b, to[p - from]);
		return 0;
	}
	unsigned cp;
	if (c != 'u' || hex4(r, &cp) || cp == 0)
		return -1;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return -1;   /* a low surrogate alone */
	if (cp >= 0xd800 && cp <= 0xdbff) {
		unsigned low;
		if (literal(r, "\\u") || hex4(r, &low) || low < 0xdc00 || low > 0xdfff)
			return -1;
		cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
	}
	put_utf8(b, cp);
	return 0;
}

static int string(struct reader *r, char **out)
{
	if (peek(r) != '"')
		return -1;
	r->pos++;
	struct strbuf b = { 0 };
	sb_puts(&b, "");
	for (;;) {
		if (r->pos >= r->len)
			goto bad;
		unsigned char c = (unsigned char)r->s[r->pos];
		if (c == '"') {
			r->pos++;
			*out = sb_detach(&b);
			return 0;
		}
		if (c < 0x20)
			goto bad;   /* control characters must be escaped */
		if (c == '\\') {
			r->pos++;
			if (escape(r, &b))
				goto bad;
			continue;
		}
		/* copy a run of plain bytes at once */
		size_t start = r->pos;
		while (r->pos < r->len && r->s[r->pos] != '"' && r->s[r->pos] != '\\' &&
		       (unsigned char)r->s[r->pos] >= 0x20)
			r->pos++;
		sb_add(&b, r->s + start, r->pos - start);
	}
bad:
	sb_free(&b);
	return -1;
}

static int digits(struct reader *r)
{
	size_t start = r->pos;
	while (r->pos < r->len && r->s[r->pos] >= '0' && r->s[r->pos] <= '9')
		r->pos++;
	return r->pos > start ? 0 : -1;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int number(struct reader *r, double *out)
{
	size_t start = r->pos;
	if (peek(r) == '-')
		r->pos++;
	if (peek(r) == '0')
		r->pos++;
	else if (digits(r))
		return -1;
	if (peek(r) == '.') {
		r->pos++;
		if (digits(r))
			return -1;
	}
	if (peek(r) == 'e' || peek(r) == 'E') {
		r->pos++;
		if (peek(r) == '+' || peek(r) == '-')
			r->pos++;
		if (digits(r))
			return -1;
	}
	char buf[64];
	size_t n = r->pos - start;
	if (n >= sizeof(buf))
		return -1;   /* no record has numbers this long */
	memcpy(buf, r->s + start, n);
	buf[n] = 0;
	*out = strtod(buf, NULL);
	return isfinite(*out) ? 0 : -1;
}

static int value(struct reader *r, struct json_value *v, int depth);

static int array(struct reader *r, struct json_value *v, int depth)
{
	size_t cap = 0;
	r->pos++;
	skip_space(r);
	if (peek(r) == ']') {
		r->pos++;
		return 0;
	}
	for (;;) {
		grow(&v->items, &cap, v->count + 1, sizeof(*v->items));
		/* counted before it is read: freed with the rest on failure */
		struct json_value *item = &v->items[v->count++];
		if (value(r, item, depth + 1))
			return -1;
		skip_space(r);
		int c = peek(r);
		r->pos++;
		if (c == ']')
			return 0;
		if (c != ',')
			return -1;
	}
}

static int object(struct reader *r, struct json_value *v, int depth)
{
	size_t cap = 0;
	r->pos++;
	skip_space(r);
	if (peek(r) == '}') {
		r->pos++;
		return 0;
	}
	for (;;) {
		skip_space(r);
		char *key;
		if (string(r, &key))
			return -1;
		grow(&v->members, &cap, v->count + 1, sizeof(*v->members));
		struct json_member *m = &v->members[v->count];
		memset(m, 0, sizeof(*m));
		m->key = key;
		v->count++;   /* counted now: freed with the rest on failure */
		skip_space(r);
		if (peek(r) != ':')
			return -1;
		r->pos++;
		if (value(r, &m->value, depth + 1))
			return -1;
		skip_space(r);
		int c = peek(r);
		r->pos++;
		if (c == '}')
			return 0;
		if (c != ',')
			return -1;
	}
}

static int value(struct reader *r, struct json_value *v, int depth)
{
	memset(v, 0, sizeof(*v));
	if (depth > JSON_MAX_DEPTH)
		return -1;
	skip_space(r);
	switch (peek(r)) {
	case '{':
		v->type = JSON_OBJECT;
		return object(r, v, depth);
	case '[':
		v->type = JSON_ARRAY;
		return array(r, v, depth);
	case '"':
		v->type = JSON_STRING;
		return string(r, &v->string);
	case 't':
		v->type = JSON_TRUE;
		return literal(r, "true");
	case 'f':
		v->type = JSON_FALSE;
		return literal(r, "false");
	case 'n':
		v->type = JSON_NULL;
		return literal(r, "null");
	default:
		v->type = JSON_NUMBER;
		return number(r, &v->number);
	}
}

int json_parse(const char *text, size_t len, struct json_value *out, size_t *error_at)
{
	struct reader r = { text, len, 0 };
	int failed = value(&r, out, 0);
	if (!failed) {
		skip_space(&r);
		failed = r.pos != len;
	}
	if (failed) {
		*error_at = r.pos < len ? r.pos : len;
		json_value_free(out);
		return -1;
	}
	return 0;
}

void json_value_free(struct json_value *v)
{
	for (size_t i = 0; v->type == JSON_ARRAY && i < v->count; i++)
		json_value_free(&v->items[i]);
	for (size_t i = 0; v->type == JSON_OBJECT && i < v->count; i++) {
		free(v->members[i].key);
		json_value_free(&v->members[i].value);
	}
	free(v->items);
	free(v->members);
	free(v->string);
	memset(v, 0, sizeof(*v));
}

const struct json_value *json_member(const struct json_value *v, const char *key)
{
	if (!v || v->type != JSON_OBJECT)
		return NULL;
	for (size_t i = 0; i < v->count; i++)
		if (!strcmp(v->members[i].key, key))
			return &v->members[i].value;
	return NULL;
}

const char *json_member_string(const struct json_value *v, const char *key)
{
	const struct json_value *m = json_member(v, key);
	return m && m->type == JSON_STRING ? m->string : NULL;
}

int json_member_number(const struct json_value *v, const char *key, double *out)
{
	const struct json_value *m = json_member(v, key);
	if (!m || m->type != JSON_NUMBER)
		return -1;
	*out = m->number;
	return 0;
}
