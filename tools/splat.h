/* One splat taken apart: title, kind, pid, the site line, the frames of its
 * Call Trace and of its held-lock lines. Pure logic: strings in, owned
 * strings out. Frames are kept so the report can symbolize them and print
 * the splat again with the names filled in. */
#ifndef LOCKDEP_RCU_SPLAT_H
#define LOCKDEP_RCU_SPLAT_H

#include <stddef.h>
#include "util.h"

/* A frame as the tracer prints it:
 *   "route_stats+0x10/0x17 [demo] tests/demo.c:19"    symbolized
 *   "0x55e5bcd89afa [knotd+0x1dafa]"                  module+offset, no symbol
 *   "0x55e5bcd89afa"                                  symbolize=0, or no module */
struct frame {
	char *text;           /* as printed */
	char *function;       /* NULL when not known */
	char *module;         /* basename of the object, NULL when not known */
	unsigned long offset; /* module+offset frames: the file address printed */
	int has_offset;
	char *source;         /* "file:line", NULL when not known */
	/* Filled in by the report's symbolizer (addr2line): */
	char *inlined;        /* functions inlined at the site, innermost first */
	int symbolized;
};

/* A line naming a lock and where it was taken ("..., at: FRAME"): the held
 * locks, and the lock being acquired in a recursive-locking report. */
struct held_line {
	size_t line;          /* index in splat.lines */
	size_t at;            /* offset of the frame text in that line */
	char *lock;           /* "(update_lock){mutex}" */
	struct frame frame;
};

struct splat {
	char **lines;         /* the splat, one string per line, no newlines */
	size_t nlines;
	char *title;
	const char *kind;     /* a suppression kind (suppressions.h), or "unknown" */
	int pid;              /* from "lockdep-rcu X, pid N", 0 if absent */
	size_t site_line;     /* index of the first body line, or 0 when none */
	int site_has_frame;   /* the site line starts with a frame ("0x... [m+0x..]") */
	struct frame site;    /* that frame */
	char *site_message;   /* the rest of the site line (whole line otherwise) */
	struct frame *trace;  /* the Call Trace */
	size_t ntrace;
	size_t trace_line;    /* index of the first frame line */
	struct held_line *held;
	size_t nheld, held_cap;
};

/* Parses a splat as passed on by log_scan_part(). 0, or -1 when it is not one. */
int splat_parse(const char *text, size_t len, struct splat *s);
void splat_free(struct splat *s);

/* Parses one frame (leading spaces skipped). Never fails: unknown forms keep
 * only the text. */
void frame_parse(const char *text, size_t len, struct frame *f);
void frame_free(struct frame *f);
/* The frame as the report prints it: symbolized frames get
 * "function [module+0xoff] file:line (inlined: f < g)". */
void frame_render(const struct frame *f, struct strbuf *out);

/* The splat with the symbolized frames, one line each, with newlines. */
void splat_render(const struct splat *s, struct strbuf *out);
/* The site line as the report prints it. */
void splat_site_render(const struct splat *s, struct strbuf *out);
/* One line saying where the bug is, for the report's list: the site line
 * (with the line after it when it ends with ':'), or for a thread that
 * ended holding locks, the innermost lock and where it was taken (its site
 * line only counts locks). */
void splat_summary_render(const struct splat *s, struct strbuf *out);

/* The suppression kind of a title: "suspicious_rcu", ..., or "unknown". */
const char *splat_kind_of_title(const char *title);

#endif
