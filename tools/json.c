#include <string.h>
#include "json.h"

/* str[0..len) as a quoted JSON string (see struct json). Not jansson's
 * json_dumps: it refuses invalid UTF-8 rather than replacing it, and lays
 * numbers and members out otherwise than the output the tests compare. */
static void quote(struct strbuf *out, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	sb_putc(out, '"');
	for (size_t i = 0; i < len;) {
		unsigned char c = s[i];
		if (c == '"' || c == '\\') {
			sb_putc(out, '\\');
			sb_putc(out, (char)c);
			i++;
		} else if (c == '\n') {
			sb_puts(out, "\\n");
			i++;
		} else if (c == '\t') {
			sb_puts(out, "\\t");
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			sb_printf(out, "\\u%04x", c);
			i++;
		} else {
			size_t n = utf8_sequence(s + i, len - i);
			if (n == 0) {
				sb_puts(out, "\\ufffd");
				i++;
			} else {
				sb_add(out, str + i, n);
				i += n;
			}
		}
	}
	sb_putc(out, '"');
}

static void member(struct json *j, const char *key)
{
	if (j->depth > 0) {
		if (!j->first[j->depth])
			sb_putc(j->out, ',');
		j->first[j->depth] = 0;
		sb_printf(j->out, "\n%*s", 2 * j->depth, "");
	}
	if (key) {
		quote(j->out, key, strlen(key));
		sb_puts(j->out, ": ");
	}
}

static void open_(struct json *j, const char *key, char c)
{
	member(j, key);
	sb_putc(j->out, c);
	if (j->depth < (int)(sizeof(j->first) / sizeof(j->first[0])) - 1)
		j->depth++;
	j->first[j->depth] = 1;
}

static void close_(struct json *j, char c)
{
	int empty = j->first[j->depth];
	if (j->depth > 0)
		j->depth--;
	if (!empty)
		sb_printf(j->out, "\n%*s", 2 * j->depth, "");
	sb_putc(j->out, c);
	if (j->depth == 0)
		sb_putc(j->out, '\n');
}

void json_begin_object(struct json *j, const char *key) { open_(j, key, '{'); }
void json_end_object(struct json *j) { close_(j, '}'); }
void json_begin_array(struct json *j, const char *key) { open_(j, key, '['); }
void json_end_array(struct json *j) { close_(j, ']'); }

void json_str(struct json *j, const char *key, const char *value)
{
	member(j, key);
	if (value)
		quote(j->out, value, strlen(value));
	else
		sb_puts(j->out, "null");
}

void json_num(struct json *j, const char *key, long long value)
{
	member(j, key);
	sb_printf(j->out, "%lld", value);
}

void json_bool(struct json *j, const char *key, int value)
{
	member(j, key);
	sb_puts(j->out, value ? "true" : "false");
}

void json_raw_number(struct json *j, const char *key, const char *number)
{
	member(j, key);
	sb_puts(j->out, number);
}
