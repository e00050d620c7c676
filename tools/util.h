/* Small helpers shared by the subcommands: allocation that cannot fail
 * silently, a growable string, bounded file reading, paths. No global state. */
#ifndef LOCKDEP_RCU_TOOL_UTIL_H
#define LOCKDEP_RCU_TOOL_UTIL_H

#include "../preload/base/utf8.h"
#include <stdarg.h>
#include <stddef.h>

/* Out of memory is not a condition a command-line tool can report usefully:
 * these print one line and exit(2). */
void out_of_memory(void) __attribute__((noreturn));
void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* qsort() that accepts an empty (NULL) array, which qsort() itself may not. */
void sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* Grows a vector *v of *cap elements of size elem so it can hold need. */
void grow(void *v, size_t *cap, size_t need, size_t elem);

struct strbuf {
	char *s;          /* always NUL-terminated once anything was added */
	size_t len, cap;
};
void sb_add(struct strbuf *b, const char *p, size_t n);
void sb_puts(struct strbuf *b, const char *s);
void sb_putc(struct strbuf *b, char c);
void sb_printf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Returns the string (never NULL) and leaves b empty; the caller frees it. */
char *sb_detach(struct strbuf *b);
void sb_free(struct strbuf *b);

int starts_with(const char *s, const char *prefix);
int ends_with(const char *s, const char *suffix);


/* Reads at most max bytes of path into a new NUL-terminated buffer.
 * Returns 0, or -1 with errno set. *truncated is set when the file is
 * longer than max. */
int read_file(const char *path, size_t max, char **out, size_t *len, int *truncated);

/* Writes the whole string to path (created or truncated). 0 or -1. */
int write_file(const char *path, const char *text);

/* "dir/name", without doubling a trailing slash. */
char *path_join(const char *dir, const char *name);
/* An absolute version of path (not resolving symlinks), or a copy. */
char *path_absolute(const char *path);
/* mkdir -p; 0 or -1 with errno set. */
int mkdir_p(const char *path);
/* rm -r of a directory tree we created; errors are ignored. */
void remove_tree(const char *path);

/* Parses a whole decimal (or 0x) number within [min, max]; 0 or -1. */
int parse_long(const char *s, long min, long max, long *out);
/* Parses seconds as a positive decimal number ("0.5", "10"); 0 or -1. */
int parse_seconds(const char *s, double *out);

double monotonic_seconds(void);

#endif
