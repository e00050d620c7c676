/* When are two reports the same bug? What the tracer's records call "bug":
 * the same kind, the same site, and the same locks in the same roles, each
 * where it was taken; addresses, pids, threads and the stack's outer
 * frames do not count (the tracer reports a site once per process, and
 * which caller got there first can change from run to run).
 *
 * The key is computed here, from the report model, for records and for the
 * text of logs without records alike, and not taken from the record's own
 * "bug" hash, for three reasons:
 *  - a frame the tracer could not name and the report names (addr2line)
 *    must give the key of the same frame named by the tracer, so that a
 *    stripped program's logs and an unstripped one's agree;
 *  - a lock's name is not stable everywhere: in a stripped program a
 *    static lock was "lock@55d1afc420c0", its address, in the logs of
 *    tracers before "lock@module+0xoffset", so a lock that has an
 *    acquisition site counts by that site, not by its name;
 *  - a thread that ends holding locks is one bug per innermost lock (the
 *    tracer, too, reports a thread end once per innermost acquisition
 *    site): the outer locks depend on the path that led there.
 * Pure logic. */
#ifndef LOCKDEP_RCU_BUG_KEY_H
#define LOCKDEP_RCU_BUG_KEY_H

#include "splat.h"

/* "demo.c:19" (a source line, by the file's basename: addr2line and the
 * tracer print different directories), "route_stats [demo]" (a function
 * without line information), "demo+0x126d" (an address not named), "?". */
void frame_where(const struct frame *f, struct strbuf *out);

/* The grouping key of a report (a new string). */
char *bug_key(const struct splat *s);

#endif
