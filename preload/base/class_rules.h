/* Class rules: how many calling functions key the classes of the locks made
 * at an init site, per function, overriding the class_depth option without
 * recompiling the program (a file in the style of suppressions):
 *
 *   # APR makes every mutex of apache in apr_thread_mutex_create():
 *   # tell them apart by three callers
 *   split:apr_thread_mutex_create:3
 *   # one class for all connection locks, whoever makes the connection
 *   merge:conn_new
 *
 * The pattern is a glob matched against the name of the function that
 * calls the init (or, for a lock never initialized by a call, the first
 * acquisition). merge is split with depth 0. The first matching rule wins.
 * Self-contained like suppressions.c: read once with open()/read(), no
 * malloc, shared with the lockdep-rcu command to check files. */
#ifndef LOCKDEP_RCU_CLASS_RULES_H
#define LOCKDEP_RCU_CLASS_RULES_H

#include <stddef.h>

#define CLASS_RULES_MAX 128
#define CLASS_RULES_MAX_DEPTH 8

/* Loads rules from the file at path; returns their number, or -1 with a
 * one-line error naming the file and line (-2: the file cannot be opened). */
int class_rules_load(const char *path, char *err, size_t err_size);
int class_rules_parse(const char *text, size_t len, const char *name, char *err, size_t err_size);
/* The depth for an init site in `function`, or -1 when no rule matches. */
int class_rules_depth(const char *function);
int class_rules_count(void);

#endif
