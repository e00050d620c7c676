/* Tracer options from LOCKDEP_RCU_OPTIONS: key=value pairs split by ':',
 * ',' or white space, a value quoted with ' or " when it holds one (the
 * sanitizers' convention). One table drives parsing, validation and the
 * help=1 listing, so the documentation cannot drift from the code. */
#ifndef LOCKDEP_RCU_OPTIONS_H
#define LOCKDEP_RCU_OPTIONS_H

#include <stddef.h>

#define LOG_PATH_MAX 512

/* X(name, type, default, description); type is INT or STR. */
#define TRACER_OPTIONS(X)                                                              \
	X(log_path, STR, "", "write reports to this file instead of stderr; %p becomes the pid") \
	X(records_path, STR, "", "write each report's record (one JSON object per line, what lockdep-rcu report reads) to this file, wherever the reports go; %p becomes the pid (default: beside log_path, as LOG.jsonl; none when reports go to stderr)") \
	X(exitcode, INT, 66, "exit status of a process that printed a report; 0 keeps the program's own") \
	X(halt_on_error, INT, 0, "exit with exitcode right after the first report")    \
	X(abort_on_error, INT, 0, "abort() right after the first report: a core dump, or a debugger stops there") \
	X(max_frames, INT, 32, "frames in each stack backtrace (1-128)")              \
	X(pair_frames, INT, 1, "frames kept for each order two locks of one class are taken in, for the report of its inverse (1-32; 1: the lock call's caller, without unwinding)") \
	X(print_summary, INT, 1, "print one summary line at exit when anything was reported") \
	X(symbolize, INT, 1, "name functions and file:line in backtraces (ELF/DWARF)") \
	X(inline_read_side, INT, 1, "do liburcu's memb, mb and signal read sides in the wrappers as liburcu's inline headers do (0: call liburcu's exported functions)") \
	X(fast_unwind, INT, 1, "unwind stacks with the tracer's cached .eh_frame rules (0: libgcc's unwinder for every frame)") \
	X(fast_paths, INT, 1, "answer repeated acquisitions from each thread's acquisition cache and a mutex taken on one other from its own path (0: every acquisition with a lock held goes the general checked way; the same reports, slower)") \
	X(class_cache, INT, 1, "keep each pthread mutex's class in the mutex's robust-list bytes, which glibc leaves unused for other mutexes (0: look it up in the tracer's map every time)") \
	X(strict_registration, INT, 0, "report every read side of an unregistered thread at once, also before it registers or after it unregisters") \
	X(suppressions, STR, "", "suppressions file: kind:pattern rules; matching reports are only counted") \
	X(perturb, INT, 0, "inject seeded delays and yields at lock acquire/release and read-side unlock") \
	X(seed, INT, 0, "seed of perturb: the same seed, the same delays") \
	X(class_depth, INT, 3, "calling functions that tell apart the locks one init site makes (generic lock constructors); 0: the site alone") \
	X(class_rules, STR, "", "class rules file: split:FUNCTION:DEPTH and merge:FUNCTION lines override class_depth for init sites in FUNCTION") \
	X(stall_timeout, INT, 21, "seconds a grace period may wait for readers before the RCU stall warning; 0: off") \
	X(hung_task_timeout, INT, 120, "seconds a lock acquisition may block before the hung-task report; 0: off") \
	X(lock_stat, INT, 0, "lock statistics per class (the kernel's /proc/lock_stat table), printed at exit") \
	X(graph_path, STR, "", "write the lock dependency graph (Graphviz DOT) to this file at exit; %p becomes the pid") \
	X(self_check_fault, INT, 0, "for the tracer's own tests: the Nth new lock dependency fails the graph's internal check, as a corrupted graph would, which turns the checks off (0: never)") \
	X(help, INT, 0, "print the options and their values at startup")

/* The most frames pair_frames may ask for (the instance pairs' stack). */
#define PAIR_FRAMES_MAX 32

struct tracer_options {
#define OPTION_FIELD_INT(name) int name;
#define OPTION_FIELD_STR(name) char name[LOG_PATH_MAX];
#define OPTION_FIELD(name, type, def, desc) OPTION_FIELD_##type(name)
	TRACER_OPTIONS(OPTION_FIELD)
#undef OPTION_FIELD
#undef OPTION_FIELD_INT
#undef OPTION_FIELD_STR
};

extern struct tracer_options tracer_options;

/* Parses LOCKDEP_RCU_OPTIONS once; cheap and idempotent, safe before
 * constructors. Bad options get one error line each, written with
 * `print` (as is help=1's listing), and keep defaults. */
void options_init(void (*print)(const char *text, size_t len));

/* The fields of an options string, one at a time, for the tracer and the
 * command line alike: ':' ',' and white space separate, a value quoted
 * with ' or " (a closing quote follows) may hold them. Returns 1 with
 * *f set and *text advanced; -1 for a field without '=' (f->key set);
 * 0 at the end. */
struct option_field {
	const char *key, *value;
	size_t key_len, value_len;
};
int options_next(const char **text, struct option_field *f);
/* Whether c separates options. */
int options_separator(char c);

/* The parser itself, for options_init() and the unit tests: applies text
 * onto tracer_options; options_reset() restores the defaults. */
void options_parse(const char *text, void (*print)(const char *text, size_t len));
void options_reset(void);

#endif
