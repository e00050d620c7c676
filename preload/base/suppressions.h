/* Suppressions: the sanitizers' convention, one "kind:pattern" rule per line.
 *
 *   # comments and blank lines are allowed
 *   suspicious_rcu:route_stats        a glob (* and ?) matched against the
 *   bad_unlock:legacy_*               whole function name of each frame
 *   *:third_party_init                * as the kind matches every report kind
 *
 * Kinds: the record kinds of base/report_kinds.h (suspicious_rcu,
 * circular_dependency, ...), and *.
 *
 * Self-contained (no other preload file, no stdio FILE*, no malloc): the
 * tracer loads the file once at startup with open()/read() into a static
 * buffer, and the lockdep-rcu command links the same file to validate it
 * and to filter logs. The rule table is static: load it before threads may
 * call suppressions_match(), which only reads it. */
#ifndef LOCKDEP_RCU_SUPPRESSIONS_H
#define LOCKDEP_RCU_SUPPRESSIONS_H

#include <stddef.h>

#define SUPPRESSIONS_MAX_RULES 256
#define SUPPRESSIONS_MAX_PATTERN 256      /* bytes of a pattern, NUL included */
#define SUPPRESSIONS_MAX_FILE (64 * 1024) /* bytes of a suppressions file */

/* Replaces the rules with those of the file at path. Returns the number of
 * rules, or -1 with a one-line error in err (no newline), naming the file
 * and, for a malformed line, its number: "FILE:LINE: unknown kind 'x'";
 * -2 when the file cannot be opened or read. On error no rule is active. */
int suppressions_load(const char *path, char *err, size_t err_size);

/* The same from text in memory; name is used in error messages. */
int suppressions_parse(const char *text, size_t len, const char *name, char *err, size_t err_size);

/* Non-zero if a rule of this kind (or of kind *) matches one of the
 * function names (NULL or "" entries never match a pattern). */
int suppressions_match(const char *kind, const char *const *function_names, size_t nr);

/* Number of active rules. */
int suppressions_count(void);

/* Non-zero if kind is one of the report kinds above (not "*"). */
int suppressions_kind_known(const char *kind);

/* Glob matching of a whole string: '*' any run of characters, '?' one. */
int suppressions_glob(const char *pattern, const char *name);

#endif
