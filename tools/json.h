/* JSON output: string escaping that yields valid JSON from any bytes (logs
 * may hold garbage), and a tiny writer that tracks commas. Pure logic. */
#ifndef LOCKDEP_RCU_JSON_H
#define LOCKDEP_RCU_JSON_H

#include <stddef.h>
#include "util.h"

/* Appends s[0..len) as a quoted JSON string: ", \ and control characters
 * escaped, valid UTF-8 kept, each invalid byte replaced by U+FFFD. */
void json_string(struct strbuf *out, const char *s, size_t len);

/* A writer: objects and arrays nest, members and elements get their
 * commas. Keys are plain ASCII literals. */
struct json {
	struct strbuf *out;
	int depth;
	int first[32];        /* no element written yet at this depth */
};
void json_begin_object(struct json *j, const char *key);   /* key NULL in arrays and at the top */
void json_end_object(struct json *j);
void json_begin_array(struct json *j, const char *key);
void json_end_array(struct json *j);
void json_str(struct json *j, const char *key, const char *value);   /* NULL value: null */
void json_num(struct json *j, const char *key, long long value);
void json_bool(struct json *j, const char *key, int value);
/* A number already formatted ("12.50"): the caller vouches it is valid JSON. */
void json_raw_number(struct json *j, const char *key, const char *number);

#endif
