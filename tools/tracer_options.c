#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "launch.h"
#include "../preload/base/options.h"

enum option_type { OPTION_INT, OPTION_STR };

static const struct tracer_option {
	const char *name;
	enum option_type type;
	size_t max_len;           /* STR: what fits the tracer's buffer */
} tracer_option_table[] = {
#define OPTION_ROW_INT(name) { #name, OPTION_INT, 0 }
#define OPTION_ROW_STR(name) { #name, OPTION_STR, sizeof(((struct tracer_options *)0)->name) - 1 }
#define OPTION_ROW(name, type, def, desc) OPTION_ROW_##type(name),
	TRACER_OPTIONS(OPTION_ROW)
#undef OPTION_ROW
#undef OPTION_ROW_STR
#undef OPTION_ROW_INT
};

#define NR_TRACER_OPTIONS (sizeof(tracer_option_table) / sizeof(tracer_option_table[0]))

/* As preload/base/options.c parse_int(): strtol() base 0, the whole value, an
 * int, shorter than 32 bytes. */
static int is_int(const char *value, size_t len)
{
	char tmp[32], *end;
	if (len == 0 || len >= sizeof(tmp))
		return 0;
	memcpy(tmp, value, len);
	tmp[len] = 0;
	long v = strtol(tmp, &end, 0);
	return !*end && v >= INT_MIN && v <= INT_MAX;
}

static int check_one(const struct option_field *f, struct strbuf *err)
{
	const char *kv = f->key, *value = f->value;
	size_t key_len = f->key_len, value_len = f->value_len;
	for (size_t i = 0; i < NR_TRACER_OPTIONS; i++) {
		const struct tracer_option *o = &tracer_option_table[i];
		if (strlen(o->name) != key_len || memcmp(o->name, kv, key_len))
			continue;
		if (o->type == OPTION_INT && !is_int(value, value_len)) {
			sb_printf(err, "tracer option '%s' takes an integer, got '%.*s'", o->name, (int)value_len, value);
			return -1;
		}
		if (o->type == OPTION_STR && value_len > o->max_len) {
			sb_printf(err, "tracer option '%s' takes at most %zu bytes, got %zu", o->name, o->max_len,
				  value_len);
			return -1;
		}
		return 0;
	}
	sb_printf(err, "unknown tracer option '%.*s' (the tracer's options:", (int)key_len, kv);
	for (size_t i = 0; i < NR_TRACER_OPTIONS; i++)
		sb_printf(err, "%s %s", i ? "," : "", tracer_option_table[i].name);
	sb_putc(err, ')');
	return -1;
}

/* Split as the tracer splits them (options_next()). */
int tracer_options_check(const char *options, struct strbuf *err)
{
	struct option_field f;
	int got;
	while ((got = options_next(&options, &f)) != 0) {
		if (got < 0) {
			sb_printf(err, "--option needs KEY=VALUE, got '%.*s'", (int)f.key_len, f.key);
			return -1;
		}
		if (check_one(&f, err))
			return -1;
	}
	return 0;
}
