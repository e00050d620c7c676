/* The tracer's text, read back: the one place the command parses what the
 * tracer wrote for people. `report` reads a report's structure from its
 * record (record.h); the text is read for what only it has (the report as
 * printed, the tracer's own lines, SUMMARY lines) and, for a log without
 * records (captured stderr, a log copied by hand), for the structure too.
 * Pure logic over buffers, no I/O.
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
#ifndef LOCKDEP_RCU_TEXT_LOG_H
#define LOCKDEP_RCU_TEXT_LOG_H

#include <stddef.h>
#include "splat.h"

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
};

/* Scans buf[0..len) (need not be NUL-terminated), adding to the totals in
 * *out (zero them before the first call). Linear in len.
 *
 * final: buf ends where the log ends. Otherwise more input follows, and the
 * scan stops before what it cannot decide yet: a line without its newline,
 * a report that may go on. It returns the offset of that point, and the
 * caller scans again from there with the new input appended; *in_report
 * says whether a report starts there (nothing of it was passed on yet).
 * With final, it returns len. */
size_t log_scan_part(const char *buf, size_t len, int final, const struct log_callbacks *cb, void *ctx,
		     struct log_scan *out, int *in_report);

/* Whether a file is text at all, judged on a sample of its first bytes:
 * the tracer writes text only. NUL bytes are left out of the sample by the
 * caller: runs of them are garbage inside a log (logfile.h), not a sign of
 * a binary file. */
#define TEXT_SAMPLE_BYTES 65536
struct text_sample {
	size_t bytes;             /* sampled */
	size_t odd;               /* control characters and invalid UTF-8 among them */
};
/* Adds buf[0..len) to the sample, up to TEXT_SAMPLE_BYTES in all. */
void text_sample_add(struct text_sample *s, const char *buf, size_t len);
/* Non-zero when more than one byte in eight of the sample is odd: random
 * data, an executable, a core dump (even with text in them). */
int text_sample_is_binary(const struct text_sample *s);

/* ---- one report's text ------------------------------------------------------ */

/* Reads the structure of a report from its text, as passed on by
 * log_scan_part(): for logs without records (captured stderr, a log copied
 * by hand). 0, or -1 when it is not a report. */
int splat_parse(const char *text, size_t len, struct splat *s);
/* The title, pid and number of a report's text (its lines 2 and 3),
 * cheaply: what pairs a text with its record. 0, or -1 when they are not
 * there. */
int splat_text_identity(const char *text, size_t len, char **title, int *pid, unsigned long *seq);
/* Takes text (a report of s read from the log) as s's text, and the text of
 * its Call Trace lines as its frames' texts. */
void splat_attach_text(struct splat *s, const char *text, size_t len);
/* For a record whose report is missing from its log: a text made from it,
 * in the tracer's layout. */
void splat_make_text(struct splat *s);
/* Parses one frame as printed (leading spaces skipped). Never fails:
 * unknown forms keep only the text. */
void frame_parse(const char *text, size_t len, struct frame *f);
/* Line `index` of a report's text, without its newline (a new string), or
 * NULL. */
char *splat_text_line(const char *text, size_t index);
/* The innermost lock of a thread-end report's text: "(name){kind} held,
 * taken at FRAME", and how many locks it lists when more than one. 0 when
 * it lists none. */
int splat_text_innermost_lock(const char *text, struct strbuf *out);

/* ---- the log file (logfile.c) ------------------------------------------------ */

/* Reading one log file whole, in memory that does not grow with it: the
 * file is read a chunk at a time and scanned as it comes (text_log.h), so
 * a report is handled as soon as it has ended and only the text not
 * scanned yet is kept.
 *
 * Runs of NUL bytes are garbage, not a reason to drop the log: a process
 * that crashed leaves zeros where the file system had reserved blocks it
 * never wrote. Each run ends the text before it as the end of the file
 * would (a report it cuts is cut short), and the text after it is read
 * on. A file whose text (NUL bytes left out) looks binary is not read. */
/* Read at a time. */
#define LOG_CHUNK_BYTES (1u << 20)
/* The longest report or line kept whole. The tracer builds each report in a
 * 64 KiB buffer: a "report" longer than this never ended (counted as cut
 * short), and a longer line outside reports (a program's own output) is
 * skipped. */
#define MAX_REPORT_BYTES (1u << 20)

/* Runs of garbage whose place is kept, for the note. */
#define MAX_GARBAGE_PLACES 3

struct garbage_place {
	unsigned long long offset, bytes;
};

struct log_file {
	struct log_scan scan;          /* what the text held */
	unsigned long long bytes;      /* read */
	int binary;                    /* not text (text_sample_is_binary), or NUL
					* bytes only: not scanned */
	unsigned long long garbage;    /* NUL bytes skipped */
	size_t garbage_runs;           /* runs of them */
	struct garbage_place places[MAX_GARBAGE_PLACES];   /* the first runs */
};

/* Opens a log for reading without ever blocking: anything but a regular
 * file is refused before it is opened (a FIFO with no writer would block,
 * /dev/zero never ends, opening a device can have effects). follow: 0
 * refuses a symbolic link too. Returns the descriptor, or -1 with *why
 * saying why ("a FIFO, not a regular file", or strerror(errno)). */
int log_file_open(const char *path, int follow, const char **why);

/* Reads the log open on fd from offset `from` to its end, passing its
 * reports and tracer lines to cb. 0, or -1 with errno set when a read
 * failed (*out then holds what was read before). */
int log_file_read(int fd, unsigned long long from, const struct log_callbacks *cb, void *ctx,
		  struct log_file *out);

#endif
