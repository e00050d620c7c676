/* The subcommands of lockdep-rcu and what they share. */
#ifndef LOCKDEP_RCU_CLI_H
#define LOCKDEP_RCU_CLI_H

#include <stdio.h>
#include "collect.h"
#include "json.h"

int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_stress(int argc, char **argv);
int cmd_graph(int argc, char **argv);

/* Exit statuses of report and stress (and of lockdep-rcu itself). */
enum { EXIT_CLEAN = 0, EXIT_FOUND = 1, EXIT_USAGE = 2 };

/* Matches argv[*i] against "--name VALUE" or "--name=VALUE" (or a short
 * "-n VALUE"). Returns 1 and sets *value (advancing *i past a separate
 * value), 0 when argv[*i] is another option, -1 when the value is missing. */
int option_value(int argc, char **argv, int *i, const char *name, const char **value);

/* Loads a suppressions file for the command named cmd; prints the error
 * and returns -1 when it is malformed. */
int load_suppressions(const char *cmd, const char *path);

/* Prints the notes (stderr) and the report (stdout, text or JSON) of a
 * finished collection; returns EXIT_FOUND when it holds unsuppressed
 * splats, hangs or crashes, else EXIT_CLEAN. */
/* How print_report() prints: the text, one JSON document, SARIF 2.1.0, or
 * "file:line: warning: TITLE [kind]" lines as compilers print them. */
enum report_format { REPORT_TEXT, REPORT_JSON, REPORT_SARIF, REPORT_GCC };
int print_report(const char *cmd, const struct collection *c, int format);

/* The version the command prints. It must equal LOCKDEP_RCU_VERSION of
 * preload/report/report.h, which the tracer prints in every splat; test_cli
 * checks that they agree (the command does not include the tracer's
 * headers, which pull in its internals). */
#define LOCKDEP_RCU_TOOL_VERSION "0.1"

/* Printing a finished collection (render.c): the text report people read
 * and the JSON document CI reads. Both carry the same facts. */
void render_text(const struct collection *c, struct strbuf *out);
void render_json(const struct collection *c, struct strbuf *out);
void render_sarif(const struct collection *c, struct strbuf *out);
void render_gcc(const struct collection *c, struct strbuf *out);
/* "11 (Segmentation fault)" */
void render_signal(int sig, struct strbuf *out);

/* The report's "lock statistics" section (lock_stat_render.c), text and
 * JSON: the classes most contended over all processes of the input, in the
 * columns of the kernel's /proc/lock_stat, each with the call site that
 * waited most; the JSON is a "lock_statistics" member of the object being
 * written. */
void render_lock_stats_text(const struct lock_stats *t, struct strbuf *out);
void render_lock_stats_json(const struct lock_stats *t, struct json *j);

#endif
