/* One report (a "splat"), as the report command works with it: what the
 * tracer said in its record (record.h), or, for a log without records,
 * what its text says (text_log.h); and the human text itself, which the
 * report prints. Pure logic: strings in, owned strings out. */
#ifndef LOCKDEP_RCU_SPLAT_H
#define LOCKDEP_RCU_SPLAT_H

#include <stddef.h>
#include "util.h"

/* A code address and what is known about it. The tracer prints it as
 *   "route_stats+0x10/0x17 [demo] tests/demo.c:19"    named
 *   "0x55e5bcd89afa [knotd+0x1dafa]"                  module+offset, no symbol
 *   "0x55e5bcd89afa"                                  symbolize=0, or no module */
struct frame {
	char *text;           /* as the tracer printed it */
	unsigned long pc;     /* the address in the process, when known */
	int has_pc;
	char *function;       /* NULL when not known */
	char *module;         /* basename of the object, NULL when not known */
	char *module_path;    /* the object as the process had it mapped (records only) */
	unsigned long offset; /* the ELF file address in the module */
	int has_offset;
	char *source;         /* "file:line", NULL when not known */
	/* Filled in by the report's symbolizer (addr2line): */
	char *inlined;        /* functions inlined at the site, innermost first */
	int symbolized;
};

/* A lock the report names, in its role (preload/report/report_record.h):
 * "acquiring", "holding", "chain", "released", "freed", "leaked" are the
 * bug itself; "held" locks are only its context. */
struct splat_lock {
	char *role;
	char *name;           /* the class as printed: "update_lock", "conn_new+0x2a" */
	char *kind;           /* as printed in {}: "mutex", "rcu", "lock"...; NULL if not */
	struct frame at;      /* where it was taken */
	int has_at;
};

struct splat {
	char *text;           /* the human report, from its '=' rule to its last
			       * frame line, each line ending in '\n' */
	char *title;
	char *kind;           /* a suppression kind (suppressions.h), or "unknown" */
	int pid, tid;         /* 0 when not known */
	unsigned long seq;    /* its number in its process ("report 3"), 0 when
			       * not known (a tracer before the numbers) */
	char *message;        /* the first line after the header: what happened */
	struct frame site;    /* the call site the report is about */
	int has_site;
	struct splat_lock *locks;
	size_t nlocks, locks_cap;
	struct frame *trace;  /* the Call Trace, innermost first */
	size_t ntrace;
	int from_record;      /* the structure came from a record, not the text */
};

void splat_free(struct splat *s);
void frame_free(struct frame *f);
/* Adds a lock named name[0..name_len). */
struct splat_lock *splat_add_lock(struct splat *s, const char *role, const char *name, size_t name_len);
/* The frames the report names: its site, its Call Trace, where each lock
 * was taken (a new array of *n, the caller frees it). Like strchr(), it
 * gives a const report's frames to a caller that owns them. */
struct frame **splat_frames(const struct splat *s, size_t *n);

/* The frame as the report prints it: the tracer's text, or for a frame
 * named here "function [module+0xoff] file:line (inlined: f < g)". */
void frame_render(const struct frame *f, struct strbuf *out);
/* The module's basename in a path ("/usr/lib/libc.so.6" -> "libc.so.6"). */
const char *path_basename(const char *path);

/* The suppression kind of a title: "suspicious_rcu", ..., or "unknown". */
const char *splat_kind_of_title(const char *title);
/* Whether kind is one of those (a record of a report, not of statistics). */
int splat_is_report_kind(const char *kind);

/* ---- printing (render.c) -------------------------------------------- */

/* The report's text with the frames named here filled in. */
void splat_render(const struct splat *s, struct strbuf *out);
/* One line saying where the bug is, for the report's list: the site line
 * (with the line after it when it ends with ':'); for a thread that ended
 * holding locks, the innermost lock and where it was taken. */
void splat_summary_render(const struct splat *s, struct strbuf *out);

#endif
