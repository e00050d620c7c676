#include <stdlib.h>
#include <string.h>
#include "collect.h"
#include "util.h"

static const char magic[] = "lockdep-rcu run record";

int run_record_parse(const char *text, struct run_record *r)
{
	memset(r, 0, sizeof(*r));
	if (strncmp(text, magic, sizeof(magic) - 1) || (text[sizeof(magic) - 1] != '\n' && text[sizeof(magic) - 1]))
		return -1;
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char *l = xstrndup(line, len);
		char *end;
		if (!strncmp(l, "program ", 8) && !r->program) {
			r->program = xstrdup(l + 8);
		} else if (!strncmp(l, "seed ", 5)) {
			unsigned long v = strtoul(l + 5, &end, 10);
			if (!*end && end != l + 5) {
				r->seed = v;
				r->has_seed = 1;
			}
		} else if (!strncmp(l, "result ", 7)) {
			static const struct { const char *word; enum run_result result; } results[] = {
				{ "exit ", RESULT_EXIT }, { "signal ", RESULT_SIGNAL }, { "timeout-ms ", RESULT_TIMEOUT },
			};
			for (size_t i = 0; i < sizeof(results) / sizeof(results[0]); i++) {
				size_t n = strlen(results[i].word);
				if (strncmp(l + 7, results[i].word, n))
					continue;
				long v = strtol(l + 7 + n, &end, 10);
				if (!*end && end != l + 7 + n) {
					r->result = results[i].result;
					r->value = v;
				}
			}
		}
		free(l);
		line = nl ? nl + 1 : NULL;
	}
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
	static const char *const words[] = { NULL, "exit", "signal", "timeout-ms" };
	if (r->result != RESULT_UNKNOWN)
		sb_printf(&b, "result %s %ld\n", words[r->result], r->value);
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
