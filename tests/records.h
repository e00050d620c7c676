/* What a run reported, as fields: a target run with its reports going to a
 * log file, so the tracer writes beside it the machine-readable twin,
 * <log>.jsonl (one JSON record per report; the fields are described at the
 * top of preload/report/report_record.h), read back here. Tests ask the records
 * what a report is about (its kind, the function and file:line of its site,
 * the locks in their roles) instead of searching the text for it; the text
 * stays at hand (log) for what only the text says, its layout.
 *
 * Every expect_* macro below fails with what was expected, what the run
 * recorded instead, and the program's log, stderr and stdout. */
#ifndef RECORDS_H
#define RECORDS_H

#include <criterion/criterion.h>
#include <stddef.h>
#include "harness.h"
#include "../tools/json.h"

struct record_frame {
	const char *function;   /* NULL when not known */
	const char *file;       /* as the debug info names it: tests/targets/x.c */
	int line;               /* 0 when not known */
	const char *module;     /* the object's path, NULL when not known */
};

struct record_lock {
	const char *role;       /* acquiring, holding, chain, held, released,
				 * freed, leaked, reader, usage, stalling */
	const char *name;
	const char *kind;       /* mutex, rwlock-read, rcu, ...; in a dependency
				 * lock, read, sync */
	const char *address;    /* "0x...", NULL when not recorded */
	int has_acquired_at;
	struct record_frame acquired_at;
};

struct record {
	const char *kind;       /* suspicious_rcu, circular_dependency, ... */
	const char *title;      /* the report's header line */
	const char *message;    /* its first line after the header */
	const char *bug;        /* the bug hash */
	long pid, tid;
	const char *comm;       /* the thread's name, NULL when not recorded */
	long seq;               /* the report's number in its process, 0 if absent */
	struct record_frame site;
	struct record_lock *locks;
	size_t lock_count;
	struct record_frame *frames;   /* the Call Trace, innermost first */
	size_t frame_count;
	json_t *json;                  /* the parsed line, which the strings point into */
};

struct run_records {
	struct run run;         /* exit code, stdout, stderr (no reports: they
				 * went to the log) */
	char *log;              /* the human log, "" when none was written */
	char *jsonl;            /* the records file as written, "" when none */
	struct record *records;
	size_t count;
	size_t damaged;         /* lines that are not one whole JSON object */
	char *context;          /* what failure messages show: the records in
				 * short, the log, stderr, stdout */
	char *dir;
};

/* build/targets/<target>.<flavor> <scenario>, as run_target does, with its
 * reports to a log in a new directory and the records read back (o's other
 * options kept, its log_path replaced). */
struct run_records run_target_records(const char *target, const char *flavor, const char *scenario,
				      const struct run_options *o);
struct run_records run_program_records(char *const argv[], const struct run_options *o);
void run_records_free(struct run_records *rr);

/* Records of that kind (NULL: any). */
int records_of_kind(const struct run_records *rr, const char *kind);
/* The n-th (from 0) record of that kind (NULL: any), or NULL. */
const struct record *record_nth(const struct run_records *rr, const char *kind, int n);
/* The first record of that kind whose site is function at file:line; NULL
 * kind or function, a NULL file or a line <= 0 match any. A file matches
 * the recorded path whole or as its last components ("x.c" matches
 * "tests/targets/x.c"). */
const struct record *record_at(const struct run_records *rr, const char *kind, const char *function,
			       const char *file, int line);
int frame_matches(const struct record_frame *f, const char *function, const char *file, int line);

/* The first lock of that role (NULL: any) and name (NULL: any; ending in
 * '*': a name starting with the rest), or NULL. */
const struct record_lock *record_lock(const struct record *r, const char *role, const char *name);
int record_lock_count(const struct record *r, const char *role);
/* "role:name{kind} ..." of every lock in order, into buf; returns buf. */
const char *record_lock_list(const struct record *r, char *buf, size_t size);
/* The Call Trace has a frame in function. */
int record_has_frame(const struct record *r, const char *function);
/* The index (from 0, innermost first) of the first Call Trace frame that is
 * function at file:line (as frame_matches), or -1. */
int record_frame_at(const struct record *r, const char *function, const char *file, int line);
/* The message ends with suffix. */
int record_message_ends(const struct record *r, const char *suffix);
/* The first record of kind (NULL: any) whose message contains text, or NULL. */
const struct record *record_saying(const struct run_records *rr, const char *kind, const char *text);

#define RECORDS_STR(s) ((s) ? (s) : "(any)")

/* n records of kind (NULL: any). */
#define expect_records(rr, kind, n)                                                                        \
	do {                                                                                               \
		int expected_ = (n), got_ = records_of_kind((rr), (kind));                                 \
		cr_expect_eq(got_, expected_, "records of kind %s: expected %d, got %d\n%s", RECORDS_STR(kind), \
			     expected_, got_, (rr)->context);                                              \
	} while (0)

/* The record of kind at function file:line (see record_at), failing the test
 * when there is none; evaluates to it or NULL. */
#define expect_record_at(rr, kind, function, file, line)                                                   \
	({                                                                                                 \
		const struct record *found_ = record_at((rr), (kind), (function), (file), (line));       \
		cr_expect(found_, "expected a record of kind %s at %s %s:%d; the run recorded:\n%s",      \
			  RECORDS_STR(kind), RECORDS_STR(function), RECORDS_STR(file), (int)(line),        \
			  (rr)->context);                                                                  \
		found_;                                                                                    \
	})

/* The record names a lock of role (NULL: any) and name, of kind (NULL: any). */
#define expect_lock(rr, rec, role_, name_, kind_)                                                             \
	do {                                                                                               \
		const struct record *rec_ = (rec);                                                         \
		if (!rec_)                                                                                 \
			break;                                                                             \
		const struct record_lock *lock_ = record_lock(rec_, (role_), (name_));                      \
		char list_[2048];                                                                          \
		cr_expect(lock_ && (!(kind_) || !strcmp(lock_->kind ? lock_->kind : "", (kind_) ? (kind_) : "")), \
			  "expected lock %s:%s{%s}, the record has: %s\n%s", RECORDS_STR(role_), (name_),       \
			  RECORDS_STR(kind_), record_lock_list(rec_, list_, sizeof(list_)), (rr)->context);  \
	} while (0)

/* The record's locks, all of them in order, are exactly the list given. */
#define expect_lock_list(rr, rec, expected)                                                                \
	do {                                                                                               \
		const struct record *rec_ = (rec);                                                         \
		if (!rec_)                                                                                 \
			break;                                                                             \
		char list_[2048];                                                                          \
		record_lock_list(rec_, list_, sizeof(list_));                                              \
		cr_expect_str_eq(list_, (expected), "locks: expected %s, got %s\n%s", (expected), list_,  \
				 (rr)->context);                                                           \
	} while (0)

/* The record's Call Trace has a frame in function. */
#define expect_frame(rr, rec, function)                                                                    \
	do {                                                                                               \
		const struct record *rec_ = (rec);                                                         \
		if (!rec_)                                                                                 \
			break;                                                                             \
		cr_expect(record_has_frame(rec_, (function)), "expected a frame in %s in the Call Trace\n%s", \
			  (function), (rr)->context);                                                      \
	} while (0)

/* The record's Call Trace has a frame in function at file:line (see
 * frame_matches). */
#define expect_frame_at(rr, rec, function, file, line)                                                     \
	do {                                                                                               \
		const struct record *rec_ = (rec);                                                         \
		if (!rec_)                                                                                 \
			break;                                                                             \
		cr_expect(record_frame_at(rec_, (function), (file), (line)) >= 0,                         \
			  "expected a frame in %s at %s:%d in the Call Trace\n%s", RECORDS_STR(function),      \
			  RECORDS_STR(file), (int)(line), (rr)->context);                                  \
	} while (0)

/* The record's message ends with suffix. */
#define expect_message_ends(rr, rec, suffix)                                                               \
	do {                                                                                               \
		const struct record *rec_ = (rec);                                                         \
		if (!rec_)                                                                                 \
			break;                                                                             \
		cr_expect(record_message_ends(rec_, (suffix)), "message: expected ...%s, got %s\n%s",     \
			  (suffix), rec_->message ? rec_->message : "(none)", (rr)->context);             \
	} while (0)

/* The record of kind (NULL: any) whose message contains text, failing the
 * test when there is none; evaluates to it or NULL. */
#define expect_record_saying(rr, kind, text)                                                               \
	({                                                                                                 \
		const struct record *saying_ = record_saying((rr), (kind), (text));                       \
		cr_expect(saying_, "expected a record of kind %s saying %s; the run recorded:\n%s",       \
			  RECORDS_STR(kind), (text), (rr)->context);                                       \
		saying_;                                                                                   \
	})

/* has_site_message() in fields: the record of kind whose site is file at the
 * line the target printed ("site <line>" on stdout, the first), its message
 * ending "<file>:<line> <message>!"; evaluates to it or NULL. */
#define expect_site_message(rr, kind, file, message)                                                       \
	({                                                                                                 \
		int line_ = target_site_line(&(rr)->run, 1);                                               \
		const struct record *at_ = record_at((rr), (kind), NULL, (file), line_);                   \
		char suffix_[1024];                                                                        \
		snprintf(suffix_, sizeof(suffix_), "%s:%d %s!", (file), line_, (message));                 \
		cr_expect(at_ && record_message_ends(at_, suffix_),                                       \
			  "expected a record of kind %s at %s:%d saying ...%s\n%s", RECORDS_STR(kind), (file), \
			  line_, suffix_, (rr)->context);                                                  \
		at_;                                                                                       \
	})

/* The run reported nothing at all (no record, nothing in the log or on
 * stderr), and exited 0. */
#define expect_no_reports(rr)                                                                              \
	do {                                                                                               \
		cr_expect_eq((rr)->count, 0, "expected no report, got %zu\n%s", (rr)->count, (rr)->context); \
		cr_expect_str_empty((rr)->log, "expected an empty log\n%s", (rr)->context);               \
		cr_expect_str_empty((rr)->run.err, "expected nothing on stderr\n%s", (rr)->context);     \
		cr_expect_eq((rr)->run.exit_code, 0, "exit code: expected 0, got %d\n%s", (rr)->run.exit_code, \
			     (rr)->context);                                                               \
	} while (0)

#endif
