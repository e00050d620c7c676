/* Running target programs under the preload and reading what they printed.
 * The Criterion runner itself is never preloaded: only the child gets
 * LD_PRELOAD, in its own environment. */
#ifndef HARNESS_H
#define HARNESS_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct run_options {
	int preload;              /* set LD_PRELOAD=build/liblockdep-rcu.so */
	const char *options;      /* LOCKDEP_RCU_OPTIONS, or NULL for none */
	double timeout;           /* seconds before SIGKILL; 0 means 20 */
	const char *log_path;     /* reports to this file (and its records to
				   * <log_path>.jsonl): log_path= put before
				   * options; NULL: reports go to stderr */
};

struct run {
	int exit_code;            /* -1 when killed by a signal */
	int signal;               /* the terminating signal, or 0 */
	int timed_out;            /* killed by the harness after the timeout */
	char *out;                /* stdout, NUL-terminated */
	char *err;                /* stderr, NUL-terminated */
};

/* build/<relative>, honouring LOCKDEP_RCU_BUILD. */
const char *build_path(const char *relative);

/* Runs argv[0] (a path) with argv; never fails, a failed exec shows up as
 * exit code 127 with the reason on err. */
struct run run_program(char *const argv[], const struct run_options *o);

/* build/targets/<target>.<flavor> <scenario> */
struct run run_target(const char *target, const char *flavor, const char *scenario,
		      const struct run_options *o);

void run_free(struct run *r);

/* Non-overlapping occurrences of needle in haystack. */
int count_of(const char *haystack, const char *needle);

/* Number of reports (any title) in a log: lines starting a splat. */
int splat_count(const char *log);

/* The liburcu flavors every flavored target is built for. */
extern const char *const all_flavors[];
/* The flavors that need rcu_register_thread(). */
extern const char *const registering_flavors[];



/* The line number a target printed as "site <line>" (n-th, from 1), or -1. */
int target_site_line(const struct run *r, int n);

/* "<file>:<site line> <message>!" appears in the report. */
int has_site_message(const struct run *r, const char *file, const char *message);
#endif
