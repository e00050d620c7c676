/* The record schema: the field names of the JSON records the tracer writes
 * (`<log>.jsonl`, one object per line) and the command line reads back.
 * Both sides compile this header, so a field cannot be spelled one way
 * when written and another when read. What each field means is said where
 * it is written (report/report_record.h, report/lock_stat.h).
 *
 * A name is a string literal, so it pastes into a format:
 *   put("," RECORD_KEY(RECORD_PID) "%d", pid)   writes  ,"pid":123 */
#ifndef LOCKDEP_RCU_RECORD_SCHEMA_H
#define LOCKDEP_RCU_RECORD_SCHEMA_H

/* "v": the schema version. A reader skips records of another version. */
#define RECORD_SCHEMA_VERSION 1

/* "name": with its quotes and the colon, ready to paste into JSON. */
#define RECORD_KEY(name) "\"" name "\":"

/* ---- every record -------------------------------------------------------- */
#define RECORD_V         "v"
#define RECORD_KIND      "kind"      /* a report kind (base/report_kinds.h) or "lock_stat" */
#define RECORD_PID       "pid"
#define RECORD_COMM      "comm"

/* ---- a report ------------------------------------------------------------ */
#define RECORD_TITLE     "title"     /* the kernel's title, as printed */
#define RECORD_SEQ       "seq"       /* the report's number in its process, as printed in its header */
#define RECORD_TID       "tid"
#define RECORD_TIME      "time"      /* seconds since the epoch; absent without a clock */
#define RECORD_MESSAGE   "message"   /* the first line of the body */
#define RECORD_SITE      "site"      /* a frame */
#define RECORD_FRAMES    "frames"    /* the call trace, innermost first */
#define RECORD_LOCKS     "locks"     /* lock objects */
#define RECORD_BUG       "bug"       /* 16 hex digits, stable across runs */

/* ---- a frame ------------------------------------------------------------- */
#define RECORD_FRAME_PC              "pc"
#define RECORD_FRAME_MODULE          "module"
#define RECORD_FRAME_OFFSET          "offset"
#define RECORD_FRAME_FUNCTION        "function"
#define RECORD_FRAME_FUNCTION_OFFSET "function_offset"
#define RECORD_FRAME_FILE            "file"
#define RECORD_FRAME_LINE            "line"

/* ---- a lock in a report -------------------------------------------------- */
#define RECORD_LOCK_ROLE        "role"
#define RECORD_LOCK_ADDRESS     "address"
#define RECORD_LOCK_NAME        "name"
#define RECORD_LOCK_KIND        "kind"
#define RECORD_LOCK_ACQUIRED_AT "acquired_at"

/* ---- a lock class's statistics (kind "lock_stat") ------------------------ */
#define RECORD_LOCK_STAT_KIND         "lock_stat"
#define RECORD_STAT_CLASS             "class"
#define RECORD_STAT_LOCK_KIND         "lock_kind"
#define RECORD_STAT_CON_BOUNCES       "con_bounces"
#define RECORD_STAT_CONTENTIONS       "contentions"
#define RECORD_STAT_ACQ_BOUNCES       "acq_bounces"
#define RECORD_STAT_ACQUISITIONS      "acquisitions"
#define RECORD_STAT_WAITTIME          "waittime"   /* then _min, _max, _total: microseconds */
#define RECORD_STAT_HOLDTIME          "holdtime"
#define RECORD_STAT_CONTENTION_POINTS "contention_points"
#define RECORD_STAT_CONTENDING_POINTS "contending_points"
#define RECORD_STAT_COUNT             "count"
#define RECORD_STAT_SITE              "site"

#endif
