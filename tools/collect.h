/* The report engine shared by `report` and `stress`: reads log files, the
 * records beside them and run records, groups the splats, then symbolizes
 * and applies suppressions. A log's records (`<log>.jsonl`, record.h) say
 * what each report is about; the log's text is what is printed. A log
 * without records (captured stderr) is read from its text alone.
 * Runs: every directory holding logs or a run record is one run (what
 * `run -o DIR` and each `stress` run write); processes: the pids of the
 * reports, per run. Nothing here prints: problems with files become
 * notes, which the commands print. */
#ifndef LOCKDEP_RCU_COLLECT_H
#define LOCKDEP_RCU_COLLECT_H

#include <stddef.h>
#include <sys/types.h>
#include "group.h"
#include "lock_stat.h"

/* The run record: one small text file, "lockdep-rcu.run", that `run -o DIR`
 * and `stress` leave in each run's log directory. It is what lets `report`
 * count the runs that reported nothing (the tracer creates no log then),
 * count hangs and crashes, print seeds, and find the program's binary to
 * symbolize its frames. Format, one "key value" per line:
 *
 *   lockdep-rcu run record
 *   program /abs/path/to/program
 *   seed 1007                     (stress --perturb only)
 *   result exit 0 | result signal 11 | result timeout-ms 10000 */
#define RUN_RECORD_NAME "lockdep-rcu.run"

enum run_result { RESULT_UNKNOWN, RESULT_EXIT, RESULT_SIGNAL, RESULT_TIMEOUT };

struct run_record {
	char *program;            /* NULL when absent */
	int has_seed;
	unsigned long seed;
	enum run_result result;
	long value;               /* exit status, signal, or the timeout in milliseconds */
};

/* Parses text (NUL-terminated); unknown lines are ignored. 0, or -1 when
 * the first line is not the record's. */
int run_record_parse(const char *text, struct run_record *r);
/* Writes the record to dir/RUN_RECORD_NAME; 0 or -1. */
int run_record_write(const char *dir, const struct run_record *r);
void run_record_free(struct run_record *r);

/* How deep directories are walked. */
#define MAX_WALK_DEPTH 16

struct run_info {
	char *dir;
	int has_record;
	struct run_record record;
	int reported;             /* an unsuppressed splat occurred (set by collection_finish) */
};

struct tracer_message {
	char *line;               /* "lockdep-rcu: ignoring option ..." */
	size_t logs;              /* in how many logs */
};

struct file_id {
	dev_t dev;
	ino_t ino;
};

struct collection {
	struct group_table groups;
	struct lock_stats lock_stats;   /* from lock_stat records */
	struct run_info *runs;
	size_t nruns, runs_cap, last_run;
	size_t logs;              /* log files read */
	size_t splats;            /* complete splats read */
	size_t cut_short;         /* reports (or records) cut short and lost:
				   * findings all the same (a process killed
				   * while writing one) */
	size_t from_records;      /* of them, told by their records */
	struct file_id *read;     /* logs read: a log and its records named
				   * both, or twice, are read once */
	size_t nread, read_cap;
	char **module_paths;      /* objects as the processes had them mapped
				   * (records' frames): where to find the
				   * modules of text-only frames too */
	size_t nmodule_paths, module_paths_cap;
	unsigned long tracer_suppressed;   /* counted by the tracer in SUMMARY lines */
	size_t suppressed;        /* splats suppressed here (set by collection_finish) */
	int has_baseline;         /* report --baseline was given */
	size_t known, known_bugs; /* reports and bugs in it: not shown */
	char **notes;             /* one line each, about a file */
	size_t nnotes, notes_cap;
	struct tracer_message *messages;
	size_t nmessages, messages_cap;
};

void collection_init(struct collection *c);
/* A log file (with its records), a records file (the same as its log), a
 * run record, or a directory (walked), named on the command line. Returns 0, or -1 with *why when path itself cannot be read: missing,
 * not permitted, or not a regular file or directory (a FIFO, a device, a
 * socket: never opened, never read). Files in a walked directory that
 * cannot be read get a note; special files there are skipped silently. */
int collect_path(struct collection *c, const char *path, const char **why);
/* Whether collect_path() can read path, without reading it: 0, or -1 with
 * *why. Lets a command refuse a bad path before reading the good ones. */
int collect_check_path(const char *path, const char **why);
/* A note "path: what", what a printf format. */
void collection_note(struct collection *c, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

struct collect_options {
	int symbolize;            /* resolve module+offset frames with addr2line */
	char **symbol_dirs;       /* --symbols DIR, searched first */
	size_t nsymbol_dirs;
	int use_suppressions;     /* suppressions_match() with the loaded rules */
	char **baseline;          /* report --baseline: fingerprints of known bugs */
	size_t nbaseline;
	int has_baseline;
};
/* Symbolizes, regroups, marks suppressed groups, counts and sorts. */
void collection_finish(struct collection *c, const struct collect_options *o);

/* Totals over runs: from run records. */
size_t collection_hangs(const struct collection *c);
size_t collection_crashes(const struct collection *c);
/* Groups not suppressed. */
size_t collection_bugs(const struct collection *c);
size_t collection_reports(const struct collection *c);   /* unsuppressed splats */
/* Distinct processes (run, pid) with an unsuppressed splat. */
size_t collection_processes(const struct collection *c);

void collection_free(struct collection *c);

#endif
