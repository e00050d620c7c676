/* JSON output: string escaping that yields valid JSON from any bytes (logs
 * may hold garbage), and a tiny writer that tracks commas. Pure logic. */
#ifndef LOCKDEP_RCU_JSON_H
#define LOCKDEP_RCU_JSON_H

#include <stddef.h>
#include "util.h"

/* A writer: objects and arrays nest, members and elements get their
 * commas. Keys are plain ASCII literals. A string value is written valid
 * whatever its bytes: ", \ and control characters escaped, valid UTF-8
 * kept, each invalid byte replaced by U+FFFD. */
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

/* ---- reading (json_read.c) --------------------------------------------------- */

/* Reading JSON: one document into a tree. Made for the tracer's records
 * (preload/report/report_record.h), one small object per line, which may come cut
 * short or damaged from a crashed process: strict RFC 8259, so anything
 * that is not one whole valid document is refused, never half-read. Pure
 * logic, linear in its input, with a bounded nesting depth (no stack
 * exhaustion on "[[[[..."). */
/* Deeper documents are refused: a record nests four levels. */
#define JSON_MAX_DEPTH 32

enum json_type { JSON_NULL, JSON_FALSE, JSON_TRUE, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json_member;

struct json_value {
	enum json_type type;
	double number;                /* JSON_NUMBER */
	char *string;                 /* JSON_STRING: decoded UTF-8, NUL-terminated
				       * (a "\u0000" escape is refused) */
	struct json_value *items;     /* JSON_ARRAY */
	struct json_member *members;  /* JSON_OBJECT, in document order */
	size_t count;                 /* items or members */
};

struct json_member {
	char *key;
	struct json_value value;
};

/* Parses text[0..len) as one JSON value with nothing but white space
 * around it. 0, or -1 with *error_at set to the offset where it went wrong
 * (*out is then empty). */
int json_parse(const char *text, size_t len, struct json_value *out, size_t *error_at);
void json_value_free(struct json_value *v);

/* The member key of an object (the first one of that name), or NULL when
 * v is not an object or has no such member. */
const struct json_value *json_member(const struct json_value *v, const char *key);
/* Its string, or NULL when absent or not a string. */
const char *json_member_string(const struct json_value *v, const char *key);
/* Its number in *out: 0, or -1 when absent or not a number. */
int json_member_number(const struct json_value *v, const char *key, double *out);

#endif
