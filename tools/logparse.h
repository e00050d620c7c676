/* Finding splats in a log: pure logic over a buffer, no I/O, no allocation.
 *
 * A splat, as the tracer writes it (each one a single write(2)):
 *
 *   <blank line>
 *   =============================         a rule of '='
 *   WARNING: suspicious RCU usage         the title
 *   lockdep-rcu 0.1, pid 21321            the header line: version and pid
 *   -----------------------------         a rule of '-'
 *   ...body...
 *   stack backtrace:
 *   CPU: 0 PID: 21321 TID: 21321 Comm: demo
 *   Call Trace:
 *    frame                                 frames start with a space
 *
 * A splat ends after its last frame line. One that ends (end of file, the
 * next splat, the SUMMARY line) before its "Call Trace:" line is counted as
 * truncated and not passed on: a process killed mid-report, or a log cut. */
#ifndef LOCKDEP_RCU_LOGPARSE_H
#define LOCKDEP_RCU_LOGPARSE_H

#include <stddef.h>

struct log_callbacks {
	/* A complete splat: from its '=' rule to the end of its last frame line
	 * (newline included). */
	void (*splat)(const char *text, size_t len, void *ctx);
	/* A line of the tracer's own outside any splat ("lockdep-rcu: ignoring
	 * option ..."), without its newline; SUMMARY lines are not passed. */
	void (*tracer_line)(const char *line, size_t len, void *ctx);
};

struct log_scan {
	size_t splats;            /* complete splats passed on */
	size_t truncated;         /* splats cut short, skipped */
	size_t summaries;         /* "SUMMARY: lockdep-rcu:" lines */
	unsigned long suppressed; /* "N suppressed" counted in SUMMARY lines */
	int last_line_cut;        /* the file ends inside a splat without a newline */
};

/* Scans buf[0..len) (need not be NUL-terminated). Linear in len. */
void log_scan(const char *buf, size_t len, const struct log_callbacks *cb, void *ctx,
	      struct log_scan *out);

/* Non-zero when buf holds a NUL byte or mostly control characters: not a
 * log (the tracer writes text only). */
int log_looks_binary(const char *buf, size_t len);

#endif
