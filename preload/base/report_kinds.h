/* report_kinds.h - every kind of report, in one list: the tracer's enum, the
 * summary's name, the suppression (and record) kind, the documentation
 * page, and the kernel's titles, each spelled here once. The tracer and
 * the lockdep-rcu command are both built with it (the command reads a title
 * back to its kind with report_kind_of_title()), so the two cannot drift.
 * Includes nothing of the tracer: every layer may use it. */
#ifndef LOCKDEP_RCU_REPORT_KINDS_H
#define LOCKDEP_RCU_REPORT_KINDS_H

#include <stddef.h>

/* X(KIND, record kind = suppression kind, name in the summary, doc anchor);
 * the anchor names the kind's page, docs/reports/ANCHOR.md (make check-docs
 * fails when one is missing). */
#define REPORT_KINDS(X)                                                                     \
	X(SUSPICIOUS_RCU, "suspicious_rcu", "suspicious RCU usage", "suspicious-rcu-usage")  \
	X(BAD_UNLOCK, "bad_unlock", "bad unlock balance", "bad-unlock-balance")              \
	X(RECURSIVE_LOCKING, "recursive_locking", "possible recursive locking", "recursive-locking") \
	X(HELD_LOCK_FREED, "held_lock_freed", "held lock freed", "held-lock-freed")          \
	X(LOCKS_HELD_AT_EXIT, "locks_held_at_exit", "locks held at thread end", "locks-held-at-thread-end") \
	X(CIRCULAR_DEPENDENCY, "circular_dependency", "possible circular locking dependency", "circular-locking-dependency") \
	X(WARNING, "lockdep_assertion", "lockdep assertion", "lockdep-assertion")            \
	X(RCU_STALL, "rcu_stall", "RCU stall", "rcu-stall")                                  \
	X(HUNG_TASK, "hung_task", "hung task", "hung-task")                                  \
	X(RCU_USE_AFTER_FREE, "rcu_use_after_free", "RCU object freed under a reader", "rcu-use-after-free") \
	X(INCONSISTENT_LOCK_STATE, "inconsistent_lock_state", "inconsistent lock state", "inconsistent-lock-state") \
	X(IRQ_LOCK_INVERSION, "irq_lock_inversion", "irq lock inversion dependency", "irq-lock-inversion")

enum report_kind {
#define REPORT_KIND_ENUM(kind, record, name, anchor) REPORT_##kind,
	REPORT_KINDS(REPORT_KIND_ENUM)
#undef REPORT_KIND_ENUM
	NR_REPORT_KINDS,
	/* the tracer's own limits: not a bug of the program; counted nowhere */
	REPORT_NOTICE = NR_REPORT_KINDS,
};

/* The record kind of a notice. */
#define REPORT_NOTICE_RECORD_KIND "notice"

/* X(TITLE, KIND, the kernel's title as a printf format). A kind may have
 * more than one title; printf conversions stand for what varies. */
#define REPORT_TITLES(X)                                                                     \
	X(TITLE_SUSPICIOUS_RCU, SUSPICIOUS_RCU, "WARNING: suspicious RCU usage")             \
	X(TITLE_BAD_UNLOCK, BAD_UNLOCK, "WARNING: bad unlock balance detected!")            \
	X(TITLE_RECURSIVE_LOCKING, RECURSIVE_LOCKING, "WARNING: possible recursive locking detected") \
	X(TITLE_HELD_LOCK_FREED, HELD_LOCK_FREED, "BUG: held lock freed!")                  \
	X(TITLE_LOCKS_HELD_AT_EXIT, LOCKS_HELD_AT_EXIT, "BUG: %s still has locks held!")    \
	X(TITLE_CIRCULAR_DEPENDENCY, CIRCULAR_DEPENDENCY, "WARNING: possible circular locking dependency detected") \
	X(TITLE_ASSERTION, WARNING, "WARNING: %s at %s:%d")                                   \
	X(TITLE_RCU_STALL, RCU_STALL, "INFO: rcu_%s detected stalls on tasks:")             \
	X(TITLE_HUNG_TASK, HUNG_TASK, "INFO: task %s:%d blocked for more than %d seconds.") \
	X(TITLE_RCU_USE_AFTER_FREE, RCU_USE_AFTER_FREE, "BUG: RCU-protected object freed while a reader holds it!") \
	X(TITLE_INCONSISTENT_LOCK_STATE, INCONSISTENT_LOCK_STATE, "WARNING: inconsistent lock state") \
	X(TITLE_IRQ_LOCK_INVERSION, IRQ_LOCK_INVERSION, "WARNING: possible irq lock inversion dependency detected") \
	X(TITLE_SIGNAL_LOCK_ORDER, IRQ_LOCK_INVERSION, "WARNING: %s-safe -> %s-unsafe lock order detected")

enum report_title {
#define REPORT_TITLE_ENUM(title, kind, format) REPORT_##title,
	REPORT_TITLES(REPORT_TITLE_ENUM)
#undef REPORT_TITLE_ENUM
	NR_REPORT_TITLES,
};

/* The title's text (a printf format where it varies). */
extern const char *const report_title_format[NR_REPORT_TITLES];
/* Per kind: its record and suppression kind, its summary name, the name of
 * its page docs/reports/ANCHOR.md. */
extern const char *const report_record_kind[NR_REPORT_KINDS];
extern const char *const report_kind_name[NR_REPORT_KINDS];
extern const char *const report_kind_anchor[NR_REPORT_KINDS];

/* The kind of a report from its title as printed: the title format that
 * matches it (a conversion matches any text), the most specific one when
 * several do. NR_REPORT_KINDS when none does. */
enum report_kind report_kind_of_title(const char *title);
/* The kind whose record kind is `record` (length len), or NR_REPORT_KINDS. */
enum report_kind report_kind_of_record(const char *record, size_t len);

#endif
