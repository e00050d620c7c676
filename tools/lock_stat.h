/* Lock statistics from the tracer's lock_stat records (option lock_stat=1:
 * one record per lock class at exit, beside the kernel-style table of the
 * human log), summed over every process and run of the report's input by
 * class name, as the kernel's /proc/lock_stat counts them:
 *
 *   {"v":1,"kind":"lock_stat","pid":N,"comm":"prog","time":T,
 *    "class":"stats_lock","lock_kind":"lock",    (or "write" and "read": the two
 *                                                 sides of a class taken both ways,
 *                                                 each counted apart, as the kernel's
 *                                                 "stats_lock-W" and "stats_lock-R")
 *    "con_bounces":N,"contentions":N,"waittime_min":F,"waittime_max":F,
 *    "waittime_total":F,"acq_bounces":N,"acquisitions":N,"holdtime_min":F,
 *    "holdtime_max":F,"holdtime_total":F,
 *    "contention_points":[{"count":N,"site":FRAME},...],
 *    "contending_points":[{"count":N,"site":FRAME},...]}
 *
 * Times are microseconds; averages are total/count, computed by readers.
 * Pure logic. */
#ifndef LOCKDEP_RCU_LOCK_STAT_H
#define LOCKDEP_RCU_LOCK_STAT_H

#include <stddef.h>
#include "json.h"
#include "splat.h"

/* The classes the report lists, most contended first. */
#define LOCK_STAT_TOP_CLASSES 10

/* A call site and how often it waited for the lock (contention point) or
 * held it while another thread waited (contending point). */
struct lock_stat_point {
	unsigned long long count;
	struct frame site;
	char *where;              /* frame_where() of site: what merges points */
};

struct lock_stat_class {
	char *name;               /* as the kernel's table names it: "table_lock-W" */
	char *class_name;         /* "table_lock" */
	char *lock_kind;          /* "lock", "write", "read"; NULL when absent */
	size_t records;           /* processes that reported this class */
	unsigned long long con_bounces, contentions, acq_bounces, acquisitions;
	double waittime_min, waittime_max, waittime_total;   /* min: over contended records */
	double holdtime_min, holdtime_max, holdtime_total;
	struct lock_stat_point *contention_points, *contending_points;
	size_t ncontention_points, ncontending_points, contention_cap, contending_cap;
};

struct lock_stats {
	struct lock_stat_class *v;
	size_t n, cap;
	size_t records;           /* lock_stat records read */
	size_t processes;         /* distinct processes they came from */
	char **process_ids;       /* "log\npid" of each */
	size_t process_ids_cap;
};

/* Adds one lock_stat record, written by process pid into log. 0, or -1
 * when it lacks a class or a count. */
int lock_stats_add(struct lock_stats *t, const json_t *record, const char *log);
/* Sorts classes (contentions, then waittime-total, descending; then by
 * name) and each class's points (count descending). */
void lock_stats_finish(struct lock_stats *t);
void lock_stats_free(struct lock_stats *t);

#endif
