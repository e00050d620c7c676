/* Splats grouped by key (bug_key.h), with where each group occurred.
 * Pure logic: a hash table of groups, each owning one representative
 * splat (the first seen) and the (run, pid) of every occurrence. */
#ifndef LOCKDEP_RCU_GROUP_H
#define LOCKDEP_RCU_GROUP_H

#include <stddef.h>
#include "splat.h"

struct occurrence {
	size_t run;           /* index of the run (a log directory) */
	int pid;              /* process, from the splat's header line */
};

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

struct group_table {
	struct group **v;
	size_t n, cap;
	size_t *slots;        /* open addressing: index + 1 into v, 0 free */
	size_t nslots;
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
