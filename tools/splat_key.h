/* When are two splats the same bug? Same title and same site frames,
 * whatever the addresses, pids and thread names: the key below is the splat
 * with everything run-specific taken out. A thread that ended holding
 * locks is keyed on its innermost lock and where it was taken instead.
 * Pure logic. */
#ifndef LOCKDEP_RCU_SPLAT_KEY_H
#define LOCKDEP_RCU_SPLAT_KEY_H

#include "splat.h"

/* Frames of the Call Trace that make up the key. The tracer reports each
 * call site once per process, so which caller reaches a buggy site first
 * (and gets its stack printed) can change from run to run: the frames
 * nearest the site identify the bug, the outer ones only the path to it.
 * syzbot dedups kernel splats on their top frames for the same reason. */
#define KEY_FRAMES 4

/* Rewrites run-specific tokens: "comm/1234" (a task) becomes "<task>",
 * "0x7f..." addresses "0x?", long bare hex words (lock addresses) "?".
 * Offsets inside a module ("+0x1a2b") stay: they are the same in every run. */
void normalize_text(const char *in, struct strbuf *out);

/* "route_stats [demo]", "demo+0x127a", or "?" for a bare address. */
void frame_key(const struct frame *f, struct strbuf *out);

/* The grouping key of a splat (a new string). */
char *splat_key(const struct splat *s);

#endif
