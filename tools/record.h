/* The tracer's records (preload/report/report_record.h): one JSON object per
 * line of `<log>.jsonl`, one per report, saying in fields what the report
 * says in words. Reading one into the report model, and reading a records
 * file line by line, skipping what a crash or damage left: a last line cut
 * short, lines that are not JSON objects, objects that are not records. */
#ifndef LOCKDEP_RCU_RECORD_H
#define LOCKDEP_RCU_RECORD_H

#include <stddef.h>
#include "json.h"
#include "splat.h"

#define RECORDS_SUFFIX ".jsonl"

/* A report's record into s (its text is left NULL: the log has it).
 * 0, or -1 when v is not a report record. */
int record_read_report(const json_t *v, struct splat *s);

/* One frame object ("pc", "module", "offset", "function", ...) into f. */
void record_read_frame(const json_t *v, struct frame *f);

struct records_scan {
	size_t records;        /* lines that were records */
	size_t cut;            /* a last line cut short (no newline, not JSON) */
	size_t garbage;        /* other lines that are not records */
};

/* Reads path (a records file, opened without blocking: log_file_open())
 * and passes each record to on_record, in order. A record line is a JSON
 * object with "v":1 and a "kind". 0, or -1 with *why when path cannot be
 * read at all. Memory: one line at a time (a line longer than the tracer
 * ever writes is garbage). */
int records_file_read(const char *path, void (*on_record)(const json_t *v, void *ctx), void *ctx,
		      struct records_scan *out, const char **why);

#endif
