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

static int check_one(const char *kv, size_t len, struct strbuf *err)
{
	const char *eq = memchr(kv, '=', len);
	if (!eq) {
		sb_printf(err, "--option needs KEY=VALUE, got '%.*s'", (int)len, kv);
		return -1;
	}
	size_t key_len = (size_t)(eq - kv), value_len = len - key_len - 1;
	const char *value = eq + 1;
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

int tracer_options_check(const char *options, struct strbuf *err)
{
	for (const char *p = options; *p;) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		if (len && check_one(p, len, err))   /* an empty field is nothing, as for the tracer */
			return -1;
		p += len + (colon != NULL);
	}
	return 0;
}
