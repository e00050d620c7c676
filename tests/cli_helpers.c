/* Helpers of the tests that run the lockdep-rcu command (and of others
 * that need a scratch directory or a file's text): see cli_helpers.h. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli_helpers.h"
#include "../tools/json.h"

const char *cli_tool(void)
{
	static char path[4096];
	snprintf(path, sizeof(path), "%s", build_path("tests/lockdep-rcu-asan"));
	return path;
}

/* build/targets/<name>, in a buffer of its own (up to 8 live at once). */
const char *cli_target(const char *name)
{
	static char paths[8][4096];
	static int next;
	char *p = paths[next++ % 8];
	char rel[512];
	snprintf(rel, sizeof(rel), "targets/%s", name);
	snprintf(p, 4096, "%s", build_path(rel));
	return p;
}

void cli_expect_sanitizer_clean(const struct run *r)
{
	cr_expect_null(strstr(r->err, "runtime error:"), "UBSan:\n%s", r->err);
	cr_expect_null(strstr(r->err, "AddressSanitizer"), "ASan:\n%s", r->err);
	cr_expect_null(strstr(r->err, "LeakSanitizer"), "LSan:\n%s", r->err);
}

/* Runs the tool with the arguments (NULL-terminated), env a NULL-terminated
 * list of "K=V" for it (through env(1)) or NULL. */
struct run cli_env(double timeout, const char *const *env, const char *arg, ...)
{
	/* No debuginfod server but one a test names in env (test_cli_debuginfod.c):
	 * a user's DEBUGINFOD_URLS (Debian's profile can set one) would make
	 * reports of stripped programs depend on the network. */
	unsetenv("DEBUGINFOD_URLS");
	const char *argv[128];
	int n = 0;
	if (env) {
		argv[n++] = "/usr/bin/env";
		for (; *env; env++)
			argv[n++] = *env;
	}
	argv[n++] = cli_tool();
	va_list ap;
	va_start(ap, arg);
	for (const char *a = arg; a && n < 127; a = va_arg(ap, const char *))
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	struct run_options o = { .timeout = timeout };
	struct run r = run_program((char *const *)argv, &o);
	cli_expect_sanitizer_clean(&r);
	cr_expect_not(r.timed_out, "the tool itself hung: %s %s", argv[n > 1 ? 1 : 0], r.err);
	return r;
}

char *cli_temp_dir(void)
{
	char *dir = strdup("/tmp/lockdep-rcu-cli.XXXXXX");
	cr_assert(mkdtemp(dir));
	return dir;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void cli_remove_dir(char *dir)
{
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

/* The whole file, NUL-terminated (malloc'd), or NULL. */
char *cli_read(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)size + 1);
	size_t n = fread(buf, 1, (size_t)size, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

void cli_write(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "wb");
	cr_assert(f, "%s", path);
	cr_assert_eq(fwrite(text, 1, len, f), len);
	fclose(f);
}

int cli_ends_with(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);
	return n >= k && !strcmp(name + n - k, suffix);
}

/* Files in dir whose names start with prefix. */
int cli_count_files(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

int cli_json_valid(const char *text)
{
	json_t *v = json_loadb(text, strlen(text), JSON_READ_FLAGS, NULL);
	json_decref(v);
	return v != NULL;
}

char *cli_path_in(const char *dir, const char *name)
{
	char *path;
	cr_assert(asprintf(&path, "%s/%s", dir, name) > 0);
	return path;
}

int cli_number_after(const char *text, const char *prefix)
{
	const char *p = strstr(text, prefix);
	return p ? atoi(p + strlen(prefix)) : -1;
}
