/* JSON output: string escaping that yields valid JSON from any bytes (logs
 * may hold garbage), and a tiny writer that tracks commas. Pure logic.
 * Reading is jansson's, with the flags below. */
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

/* ---- reading: jansson --------------------------------------------------------- */

#include <jansson.h>

/* The flags every JSON document is read with (json_loadb): the tracer's
 * records (preload/report/report_record.h), one small object per line,
 * which may come cut short or damaged from a crashed process, so anything
 * that is not one whole valid document is refused, never half-read.
 * jansson refuses by itself what follows the value, "\u0000" and NUL
 * bytes, invalid UTF-8 (the tracer writes none since records became strict
 * UTF-8) and nesting deeper than 2048. On top of that: any value at the top
 * ("[1]" is whole JSON, just no record); every number a double, as the
 * tracer's counters are read, so no integer is too big; a member name twice
 * refused, as the tracer never writes one: such a line is damage. */
#define JSON_READ_FLAGS (JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL | JSON_REJECT_DUPLICATES)

#endif
