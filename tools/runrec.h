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
#ifndef LOCKDEP_RCU_RUNREC_H
#define LOCKDEP_RCU_RUNREC_H

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

#endif
