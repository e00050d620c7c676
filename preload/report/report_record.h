/* The machine-readable twin of each report: one JSON object on one line,
 * written with one write(2) to `<log>.jsonl` beside the human log (only
 * when reports go to a log file), so `lockdep-rcu report` reads what the
 * tracer saw instead of parsing its text back. A crash mid-write leaves a
 * last line without its closing brace and newline, which readers skip.
 *
 *   {"v":1,"kind":"circular_dependency","title":"WARNING: ...",
 *    "seq":3,                           the report's number in its process,
 *                                       as its header line prints it
 *                                       ("lockdep-rcu 0.1, pid 123, report 3")
 *    "pid":123,"tid":124,"comm":"prog","time":1733240000.123 (absent in a
 *    strict seccomp sandbox, which has no clock),
 *    "message":"first line after the header",
 *    "site":FRAME,                      the call site the report is about
 *    "frames":[FRAME,...],              the Call Trace (innermost first)
 *    "locks":[{"role":ROLE,"address":"0x...","name":"conn_new+0x2a",
 *              "kind":"mutex","acquired_at":FRAME},...],
 *                                       ROLE: what the lock is to the bug:
 *                                       "acquiring", "holding" (the two ends
 *                                       of a dependency), "chain" (the
 *                                       existing dependency path, from the
 *                                       lock acquired to the one held),
 *                                       "released", "freed", "leaked"; or
 *                                       "held": merely held at the time, the
 *                                       report's context, not its identity;
 *                                       "reader": a read-side section holding
 *                                       an object being freed (context too).
 *                                       An RCU object freed under a reader is
 *                                       itself recorded as role "freed", kind
 *                                       "memory".
 *                                       kind: as the text shows it in {},
 *                                       the lock's type (mutex, rwlock-read,
 *                                       rcu...) or, in a dependency, how it
 *                                       is taken (lock, read, sync).
 *    "bug":"16 hex digits"}             stable across runs: kind, site and
 *                                       where each lock involved was taken,
 *                                       by function and file:line
 *   FRAME: {"pc":"0x...","module":"/usr/lib/x86_64-linux-gnu/libc.so.6",
 *           "offset":"0x2724a","function":"start_thread","function_offset":"0x305",
 *           "file":"pthread_create.c","line":442}
 *   (module, function, file and line absent when not known; offset is the
 *    ELF file address, what `addr2line -e module offset` takes.)
 *
 * The field names are base/record_schema.h's, shared with the command line.
 *
 * The record is built while the report body runs (under the report lock,
 * on the tracer's stack), from the same calls that print it. */
#ifndef LOCKDEP_RCU_REPORT_RECORD_H
#define LOCKDEP_RCU_REPORT_RECORD_H

#include <stddef.h>
#include <stdint.h>

#define RECORD_BUFFER_SIZE (64 * 1024)

/* seq: the report's number in its process, 0 for none. subject_tid: the
 * thread the report is about when that is not the calling thread (the
 * watchdog's reports on a waiting thread), with its name; 0: the caller. */
void record_begin(const char *kind, const char *title, unsigned long seq, int subject_tid,
		  const char *subject_comm);
/* The first line of the report's text after its header. */
void record_message(const char *text, size_t len);
void record_site(uintptr_t pc, int return_address);
void record_site_source(const char *file, int line);
void record_frame(uintptr_t pc);
void record_lock(const char *role, const void *address, const char *name, const char *kind, uintptr_t acquired_at);
/* For the other records (lock_stat.c): one FRAME object for pc (a return
 * address) into buf, NUL-terminated; and s escaped as a JSON string's
 * contents, appended at buf + *len. */
void record_frame_text(uintptr_t pc, char *buf, size_t size);
void record_json_escape(const char *s, char *buf, size_t size, size_t *len);
/* Finishes the record; returns it (a line ending in '\n') and its length. */
const char *record_end(size_t *len);

#endif
