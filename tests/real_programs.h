/* Running the real-program harnesses (tests/<prog>/run-<prog>.sh) from the
 * Criterion suite: once without the preload (what the program does on its
 * own) and once with it, then comparing the two and reading what the tracer
 * wrote into the harness's WORKDIR. */
#ifndef REAL_PROGRAMS_H
#define REAL_PROGRAMS_H

#include "harness.h"

struct real_run {
	struct run r;             /* the script's exit status, stdout (summary), stderr */
	char dir[64];             /* mkdtemp()ed parent, removed by real_free() */
	char workdir[128];        /* dir/w: the script's WORKDIR */
};

/* A harness's exit status when its program is not installed (automake's
 * "skipped"): the real programs are an install tier of their own
 * (bash tools/install-deps.sh servers), and their tests are skipped. */
#define REAL_SKIPPED 77

/* Runs tests/<prog>/run-<prog>.sh [--preload build/liblockdep-rcu.so]
 * [extra args...] WORKDIR, with LOCKDEP_RCU_OPTIONS=options (NULL: unset).
 * extra is NULL-terminated, or NULL. Skips the test when the harness says
 * its program is not installed. */
struct real_run real_run(const char *prog, int preload, const char *options,
			 const char *const extra[], double timeout);

/* The value of key= in the summary, a static buffer ("" when absent). */
const char *real_value(const struct real_run *rr, const char *key);

/* The file WORKDIR/rel, malloc()ed, NULL if it cannot be read. */
char *real_file(const struct real_run *rr, const char *rel);

/* Everything the tracer wrote: each WORKDIR/tracer/lockdep-rcu.*.log, then
 * each WORKDIR file named in stderr_files (NULL-terminated), each preceded
 * by a "--- name ---" line when not empty.  malloc()ed, never NULL. */
char *real_tracer_output(const struct real_run *rr, const char *const stderr_files[]);

/* Reports (lines opening with "WARNING: " or "BUG: ") in text. */
int real_report_count(const char *text);

/* Frees the run and removes its directory, unless LOCKDEP_RCU_KEEP_REAL is
 * set in the suite's environment (to read the logs of a failed test). */
void real_free(struct real_run *rr);

/* Criterion expectations shared by the real-program tests: the plain run
 * passed (cr_assert: without it nothing can be compared); the preloaded run
 * passed too; each of keys (NULL-terminated: exit statuses, answer counts,
 * descriptor digests) has the same value in both summaries. */
void real_expect_same(const struct real_run *plain, const struct real_run *traced,
		      const char *const keys[]);

/* The tracer printed nothing at all (no report, no tracer message): the
 * text is shown when it did. */
void real_expect_silent(const struct real_run *traced, const char *tracer_text);
#endif
