/* Splats grouped by key (bug_key.h), with where each group occurred.
 * Pure logic: a table of groups, each owning one representative
 * splat (the first seen) and the (run, pid) of every occurrence. */
#ifndef LOCKDEP_RCU_GROUP_H
#define LOCKDEP_RCU_GROUP_H

#include <stddef.h>
#include "splat.h"

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
/* "demo.c:19" (a source line, by the file's basename: addr2line and the
 * tracer print different directories), "route_stats [demo]" (a function
 * without line information), "demo+0x126d" (an address not named), "?". */
void frame_where(const struct frame *f, struct strbuf *out);

/* The grouping key of a report (a new string). */
char *bug_key(const struct splat *s);

struct occurrence {
	size_t run;           /* index of the run (a log directory) */
	int pid;              /* process, from the splat's header line */
};

/* qsort() order of occurrences: by run, then pid. */
int occurrence_cmp(const void *a, const void *b);

struct group {
	char *key;
	struct splat rep;     /* the representative: the first one seen */
	char *rep_file;       /* the log it came from */
	size_t rep_run;       /* and its run */
	size_t order;         /* when it was first seen, for stable output */
	size_t count;         /* reports */
	struct occurrence *occ;   /* where they occurred (repeats in a row kept once) */
	size_t nocc, occ_cap;
	size_t runs, processes;   /* distinct, set by group_table_finish() */
	int suppressed;
};

/* The group's fingerprint (report --json, --sarif, --baseline): FNV-1a of
 * its key, 16 hex digits. */
void group_fingerprint(const char *key, char hex[17]);

struct group_table {
	struct group **v;
	size_t n, cap;
	void *index;          /* the groups by key: tsearch() */
	size_t next_order;
};

/* Adds an occurrence of the splat under key (both taken over: the splat
 * becomes the representative of a new group, or is freed). */
struct group *group_add(struct group_table *t, char *key, struct splat *s, const char *file,
			size_t run, int pid);

/* Recomputes every key with key_of() and merges groups that now agree
 * (after symbolization, a "demo+0x127a" frame becomes "route_stats [demo]"
 * and joins the logs that were symbolized by the tracer). */
void group_table_rekey(struct group_table *t, char *(*key_of)(const struct splat *));

/* Counts distinct runs and processes and sorts: most runs first, then
 * processes, then reports, then first seen. */
void group_table_finish(struct group_table *t);

void group_table_free(struct group_table *t);

#endif
