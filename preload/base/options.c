/* Parsing LOCKDEP_RCU_OPTIONS without allocating: the tracer may need its
 * options before the C library is fully up (a report from a constructor). */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>
#include <limits.h>
#include "base/options.h"
#include "base/class_rules.h"

static const struct tracer_options default_options = {
#define OPTION_INIT(name, type, def, desc) .name = def,
	TRACER_OPTIONS(OPTION_INIT)
#undef OPTION_INIT
};

struct tracer_options tracer_options = {
#define OPTION_INIT(name, type, def, desc) .name = def,
	TRACER_OPTIONS(OPTION_INIT)
#undef OPTION_INIT
};

/* 0: not parsed, 1: a thread is parsing, 2: parsed */
static int options_state;
/* The parsing thread itself reports bad options, which asks for the
 * options again: it must not wait for itself. */
static __thread int parsing_here;
/* Where the parse in progress sends complaints and help=1's listing: the
 * caller's writer (the log, which itself asks for the options), so this
 * file writes nothing itself. */
static void (*print)(const char *text, size_t len);

static void print_text(const char *text, size_t len)
{
	if (print)
		print(text, len);
}

static int parse_int(const char *value, size_t len, int *out)
{
	char tmp[32];
	char *end;
	if (len == 0 || len >= sizeof(tmp))
		return -1;
	memcpy(tmp, value, len);
	tmp[len] = 0;
	long v = strtol(tmp, &end, 0);
	if (*end || v < INT_MIN || v > INT_MAX)
		return -1;
	*out = (int)v;
	return 0;
}

static int option_valid(const struct tracer_options *o, const char **why)
{
	if (o->max_frames < 1 || o->max_frames > 128) {
		*why = "max_frames must be between 1 and 128";
		return 0;
	}
	if (o->pair_frames < 1 || o->pair_frames > PAIR_FRAMES_MAX) {
		*why = "pair_frames must be between 1 and 32";
		return 0;
	}
	if (o->class_depth < 0 || o->class_depth > CLASS_RULES_MAX_DEPTH) {
		*why = "class_depth must be between 0 and 8";
		return 0;
	}
	if (o->stall_timeout < 0 || o->hung_task_timeout < 0) {
		*why = "timeouts are seconds, 0 or more";
		return 0;
	}
	if (o->exitcode < 0 || o->exitcode > 255) {
		*why = "exitcode must be between 0 and 255";
		return 0;
	}
	return 1;
}

/* "lockdep-rcu: ignoring option 'KEY' in LOCKDEP_RCU_OPTIONS: WHY (VALUE)":
 * the value as given, so that a typo shows. */
static void bad_option(const char *key, size_t key_len, const char *value, size_t value_len, const char *why)
{
	char line[512];
	int n;
	if (value)
		n = snprintf(line, sizeof(line),
			     "lockdep-rcu: ignoring option '%.*s' in LOCKDEP_RCU_OPTIONS: %s, got '%.*s'\n",
			     (int)key_len, key, why, (int)(value_len > 200 ? 200 : value_len), value);
	else
		n = snprintf(line, sizeof(line), "lockdep-rcu: ignoring option '%.*s' in LOCKDEP_RCU_OPTIONS: %s\n",
			     (int)key_len, key, why);
	print_text(line, n < 0 ? 0 : (size_t)n > sizeof(line) - 1 ? sizeof(line) - 1 : (size_t)n);
}

/* Applies one key=value; on error leaves the option at its previous value. */
static void apply_option(const char *key, size_t key_len, const char *value, size_t value_len)
{
	struct tracer_options saved = tracer_options;
#define OPTION_APPLY_INT(name)                                                    \
	if (parse_int(value, value_len, &tracer_options.name) < 0) {             \
		bad_option(key, key_len, value, value_len, "expected an integer");                   \
		return;                                                            \
	}
#define OPTION_APPLY_STR(name)                                                    \
	if (value_len >= sizeof(tracer_options.name)) {                           \
		bad_option(key, key_len, NULL, 0, "value too long");                        \
		return;                                                            \
	}                                                                          \
	memcpy(tracer_options.name, value, value_len);                            \
	tracer_options.name[value_len] = 0;
#define OPTION_APPLY(name, type, def, desc)                                       \
	if (key_len == sizeof(#name) - 1 && !memcmp(key, #name, key_len)) {        \
		OPTION_APPLY_##type(name)                                          \
		goto validate;                                                     \
	}
	TRACER_OPTIONS(OPTION_APPLY)
#undef OPTION_APPLY
#undef OPTION_APPLY_INT
#undef OPTION_APPLY_STR
	bad_option(key, key_len, NULL, 0, "unknown option (help=1 lists them)");
	return;
validate:;
	const char *why;
	if (!option_valid(&tracer_options, &why)) {
		tracer_options = saved;
		bad_option(key, key_len, value, value_len, why);
	}
}

/* One line per option, each written as it is made: the whole listing is
 * longer than a buffer the program's stack should lend (it once stopped
 * halfway through a 2 KiB one). */
static void print_help(void)
{
	static const char head[] = "lockdep-rcu: options (LOCKDEP_RCU_OPTIONS=key=value:key=value):\n";
	print_text(head, sizeof(head) - 1);
	char line[LOG_PATH_MAX + 512];
	int len;
#define OPTION_HELP_INT(name) "%d", tracer_options.name
#define OPTION_HELP_STR(name) "\"%s\"", tracer_options.name
#define OPTION_HELP(name, type, def, desc)                                                 \
	len = snprintf(line, sizeof(line), "  %-14s - %s (now ", #name, desc);            \
	if (len > 0 && (size_t)len < sizeof(line))                                          \
		len += snprintf(line + len, sizeof(line) - (size_t)len, OPTION_HELP_##type(name)); \
	if (len > 0 && (size_t)len < sizeof(line) - 2) {                                   \
		line[len++] = ')';                                                           \
		line[len++] = '\n';                                                          \
		print_text(line, (size_t)len);                                               \
	}
	TRACER_OPTIONS(OPTION_HELP)
#undef OPTION_HELP
#undef OPTION_HELP_INT
#undef OPTION_HELP_STR
}

void options_reset(void)
{
	tracer_options = default_options;
}

int options_separator(char c)
{
	return c == ':' || c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int options_next(const char **text, struct option_field *f)
{
	const char *p = *text;
	while (p && options_separator(*p))
		p++;   /* empty fields, "a=1::b=2", "a=1, b=2" */
	if (!p || !*p)
		return 0;
	f->key = p;
	while (*p && *p != '=' && !options_separator(*p))
		p++;
	f->key_len = (size_t)(p - f->key);
	f->value = NULL;
	f->value_len = 0;
	if (*p != '=') {
		*text = p;
		return -1;
	}
	p++;
	/* A value may be quoted, ' or ", to hold separators (a path with a
	 * comma or a space), as the sanitizers allow. */
	const char *close = (*p == '\'' || *p == '"') ? strchr(p + 1, *p) : NULL;
	if (close) {
		f->value = p + 1;
		f->value_len = (size_t)(close - f->value);
		p = close + 1;
	} else {
		f->value = p;
		while (*p && !options_separator(*p))
			p++;
		f->value_len = (size_t)(p - f->value);
	}
	*text = p;
	return 1;
}

void options_parse(const char *text, void (*printer)(const char *text, size_t len))
{
	print = printer;
	struct option_field f;
	int got;
	while ((got = options_next(&text, &f)) != 0) {
		if (got < 0)
			bad_option(f.key, f.key_len, NULL, 0, "expected key=value");
		else
			apply_option(f.key, f.key_len, f.value, f.value_len);
	}
}

void options_init(void (*printer)(const char *text, size_t len))
{
	if (parsing_here)
		return;
	int expected = 0;
	if (!__atomic_compare_exchange_n(&options_state, &expected, 1, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		/* Another thread is parsing: wait for it, it takes microseconds. */
		while (__atomic_load_n(&options_state, __ATOMIC_ACQUIRE) != 2)
			__builtin_ia32_pause();
		return;
	}
	parsing_here = 1;
	options_parse(getenv("LOCKDEP_RCU_OPTIONS"), printer);
	if (tracer_options.help)
		print_help();
	parsing_here = 0;
	__atomic_store_n(&options_state, 2, __ATOMIC_RELEASE);
}
