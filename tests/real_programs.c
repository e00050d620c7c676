/* See real_programs.h. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "real_programs.h"

struct real_run real_run(const char *prog, int preload, const char *options,
			 const char *const extra[], double timeout)
{
	struct real_run rr;
	memset(&rr, 0, sizeof(rr));
	snprintf(rr.dir, sizeof(rr.dir), "/tmp/lockdep-rcu-%s.XXXXXX", prog);
	if (!mkdtemp(rr.dir)) {
		rr.r.exit_code = 2;
		rr.r.out = strdup("");
		rr.r.err = strdup("mkdtemp failed\n");
		return rr;
	}
	/* Programs that drop privileges (apache's children) write their
	 * reports below it. */
	chmod(rr.dir, 0755);
	snprintf(rr.workdir, sizeof(rr.workdir), "%s/w", rr.dir);

	char script[256], so[4096], cwd[2048];
	snprintf(script, sizeof(script), "tests/%s/run-%s.sh", prog, prog);
	const char *rel = build_path("liblockdep-rcu.so");
	if (rel[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		snprintf(so, sizeof(so), "%s", rel);
	else
		snprintf(so, sizeof(so), "%s/%s", cwd, rel);

	const char *argv[64];
	int n = 0;
	argv[n++] = "/bin/bash";
	argv[n++] = script;
	argv[n++] = "--preload";
	argv[n++] = preload ? so : "";
	for (int i = 0; extra && extra[i] && n < 60; i++)
		argv[n++] = extra[i];
	argv[n++] = rr.workdir;
	argv[n] = NULL;
	/* The script itself is never preloaded; it preloads the server. */
	struct run_options o = { .preload = 0, .options = options, .timeout = timeout };
	rr.r = run_program((char *const *)argv, &o);
	if (rr.r.exit_code == REAL_SKIPPED) {
		/* its program is not installed: a tier of its own */
		char why[512];
		snprintf(why, sizeof(why), "%s", rr.r.err);
		real_free(&rr);
		fprintf(stderr, "[SKIP] %s", why);   /* said without --verbose too */
		cr_skip_test("%s", why);
	}
	return rr;
}

const char *real_value(const struct real_run *rr, const char *key)
{
	static __thread char value[4096];
	value[0] = 0;
	size_t klen = strlen(key);
	for (const char *p = rr->r.out; p && *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		if (len > klen && !strncmp(p, key, klen) && p[klen] == '=') {
			size_t vlen = len - klen - 1;
			if (vlen >= sizeof(value))
				vlen = sizeof(value) - 1;
			memcpy(value, p + klen + 1, vlen);
			value[vlen] = 0;
		}
		p = eol ? eol + 1 : NULL;
	}
	return value;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	size_t got;
	while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += got;
		if (cap - len < 4096) {
			cap *= 2;
			buf = realloc(buf, cap);
		}
	}
	fclose(f);
	if (buf)
		buf[len] = 0;
	return buf;
}

char *real_file(const struct real_run *rr, const char *rel)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", rr->workdir, rel);
	return slurp(path);
}

static void append(char **out, size_t *len, const char *name, const char *text)
{
	if (!text || !text[0])
		return;
	size_t add = strlen(name) + strlen(text) + 16;
	*out = realloc(*out, *len + add + 1);
	*len += (size_t)sprintf(*out + *len, "--- %s ---\n%s", name, text);
}

static int log_name(const struct dirent *d)
{
	return !strncmp(d->d_name, "lockdep-rcu.", 12);
}

char *real_tracer_output(const struct real_run *rr, const char *const stderr_files[])
{
	char *out = calloc(1, 1);
	size_t len = 0;
	char dir[256];
	snprintf(dir, sizeof(dir), "%s/tracer", rr->workdir);
	struct dirent **names;
	int n = scandir(dir, &names, log_name, alphasort);
	for (int i = 0; i < n; i++) {
		char path[600];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		char *text = slurp(path);
		append(&out, &len, names[i]->d_name, text);
		free(text);
		free(names[i]);
	}
	if (n > 0)
		free(names);
	for (int i = 0; stderr_files && stderr_files[i]; i++) {
		char *text = real_file(rr, stderr_files[i]);
		append(&out, &len, stderr_files[i], text);
		free(text);
	}
	return out;
}

int real_report_count(const char *text)
{
	int n = 0;
	for (const char *p = text; p && *p;) {
		if (!strncmp(p, "WARNING: ", 9) || !strncmp(p, "BUG: ", 5))
			n++;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return n;
}

void real_free(struct real_run *rr)
{
	run_free(&rr->r);
	if (rr->dir[0] && !getenv("LOCKDEP_RCU_KEEP_REAL")) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", rr->dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", rr->dir);
	}
}

#include <criterion/criterion.h>

void real_expect_same(const struct real_run *plain, const struct real_run *traced,
		      const char *const keys[])
{
	cr_assert_eq(plain->r.exit_code, 0, "the program misbehaves even without the preload (%d):\n%s\n%s",
		     plain->r.exit_code, plain->r.out, plain->r.err);
	cr_expect_eq(traced->r.exit_code, 0, "the program misbehaved under the preload (harness exit %d):\n%s\n%s",
		     traced->r.exit_code, traced->r.out, traced->r.err);
	cr_expect(traced->r.signal == 0 && !traced->r.timed_out, "harness killed (signal %d, timed out %d)",
		  traced->r.signal, traced->r.timed_out);
	for (int i = 0; keys[i]; i++) {
		char want[4096];
		snprintf(want, sizeof(want), "%s", real_value(plain, keys[i]));
		const char *got = real_value(traced, keys[i]);
		cr_expect_str_eq(got, want, "%s differs under the preload:\n  plain:   %s\n  traced:  %s", keys[i],
				 want, got);
	}
}

void real_expect_silent(const struct real_run *traced, const char *tracer_text)
{
	cr_expect_eq(real_report_count(tracer_text), 0, "the tracer reported %d times (in %s):\n%s",
		     real_report_count(tracer_text), traced->workdir, tracer_text);
	cr_expect(tracer_text[0] == 0, "the tracer wrote (in %s):\n%s", traced->workdir, tracer_text);
}
