#include <stdlib.h>
#include <string.h>
#include "collect.h"
#include "util.h"

static const char magic[] = "lockdep-rcu run record";
/* "result WORD VALUE" */
static const char *const result_words[] = { [RESULT_EXIT] = "exit", [RESULT_SIGNAL] = "signal",
					     [RESULT_TIMEOUT] = "timeout-ms" };

int run_record_parse(const char *text, struct run_record *r)
{
	memset(r, 0, sizeof(*r));
	size_t n = strlen(magic);
	if (strncmp(text, magic, n) || (text[n] != '\n' && text[n]))
		return -1;
	char *copy = xstrdup(text), *save = NULL, *end;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (starts_with(l, "program ") && !r->program) {
			r->program = xstrdup(l + 8);
		} else if (starts_with(l, "seed ")) {
			unsigned long v = strtoul(l + 5, &end, 10);
			if (!*end && end != l + 5) {
				r->seed = v;
				r->has_seed = 1;
			}
		} else if (starts_with(l, "result ")) {
			for (enum run_result i = RESULT_EXIT; i <= RESULT_TIMEOUT; i++) {
				const char *value = l + 7 + strlen(result_words[i]);
				if (strncmp(l + 7, result_words[i], strlen(result_words[i])) || *value != ' ')
					continue;
				long v = strtol(value + 1, &end, 10);
				if (!*end && end != value + 1) {
					r->result = i;
					r->value = v;
				}
			}
		}
	}
	free(copy);
	return 0;
}

int run_record_write(const char *dir, const struct run_record *r)
{
	struct strbuf b = { 0 };
	sb_printf(&b, "%s\n", magic);
	if (r->program)
		sb_printf(&b, "program %s\n", r->program);
	if (r->has_seed)
		sb_printf(&b, "seed %lu\n", r->seed);
	if (r->result != RESULT_UNKNOWN)
		sb_printf(&b, "result %s %ld\n", result_words[r->result], r->value);
	char *path = path_join(dir, RUN_RECORD_NAME);
	int ret = write_file(path, b.s);
	free(path);
	sb_free(&b);
	return ret;
}

void run_record_free(struct run_record *r)
{
	free(r->program);
	memset(r, 0, sizeof(*r));
}
