#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "util.h"

void out_of_memory(void)
{
	static const char msg[] = "lockdep-rcu: out of memory\n";
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	exit(2);
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);
	if (!p)
		out_of_memory();
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (!p)
		out_of_memory();
	return p;
}

void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p)
		out_of_memory();
	return p;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s;
	if (vasprintf(&s, fmt, ap) < 0)
		out_of_memory();
	va_end(ap);
	return s;
}

void sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

void grow(void *v, size_t *cap, size_t need, size_t elem)
{
	void **vec = v;
	if (need <= *cap)
		return;
	size_t n = *cap ? *cap * 2 : 8;
	while (n < need)
		n *= 2;
	*vec = xrealloc(*vec, n * elem);
	*cap = n;
}

void sb_add(struct strbuf *b, const char *p, size_t n)
{
	grow(&b->s, &b->cap, b->len + n + 1, 1);
	memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = 0;
}

void sb_puts(struct strbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

void sb_putc(struct strbuf *b, char c)
{
	sb_add(b, &c, 1);
}

void sb_printf(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s;
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		out_of_memory();
	sb_add(b, s, (size_t)n);
	free(s);
}

char *sb_detach(struct strbuf *b)
{
	char *s = b->s ? b->s : xstrdup("");
	b->s = NULL;
	b->len = b->cap = 0;
	return s;
}

void sb_free(struct strbuf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}

int starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && !strcmp(s + n - m, suffix);
}

int read_file(const char *path, size_t max, char **out, size_t *len, int *truncated)
{
	/* O_NONBLOCK: a FIFO given by mistake must not hang the reader. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	struct stat st;
	int e = fstat(fd, &st) < 0 ? errno : S_ISREG(st.st_mode) ? 0 : S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
	if (e) {
		close(fd);
		errno = e;
		return -1;
	}
	struct strbuf b = { 0 };
	char chunk[65536];
	ssize_t got = 1;
	while (got && b.len <= max) {
		got = read(fd, chunk, sizeof(chunk));
		if (got > 0)
			sb_add(&b, chunk, (size_t)got);
		else if (got < 0 && errno != EINTR)
			break;
	}
	e = errno;
	close(fd);
	if (got < 0) {
		sb_free(&b);
		errno = e;
		return -1;
	}
	*truncated = b.len > max;
	*len = *truncated ? max : b.len;
	*out = sb_detach(&b);
	(*out)[*len] = 0;
	return 0;
}

int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	int failed = dprintf(fd, "%s", text) < 0;
	return close(fd) < 0 || failed ? -1 : 0;
}

char *path_join(const char *dir, const char *name)
{
	size_t n = strlen(dir);
	return xasprintf("%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name);
}

char *path_absolute(const char *path)
{
	if (path[0] == '/')
		return xstrdup(path);
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		return xstrdup(path);
	while (path[0] == '.' && path[1] == '/')
		path += 2;
	if (!strcmp(path, "."))
		return xstrdup(cwd);
	return path_join(cwd, path);
}

int mkdir_p(const char *path)
{
	/* each parent, then path itself (free() keeps errno) */
	char *p = xstrdup(path);
	int failed = 0;
	for (char *s = p + 1; !failed; s++) {
		if (*s && *s != '/')
			continue;
		char c = *s;
		*s = 0;
		failed = mkdir(p, 0755) < 0 && errno != EEXIST;
		*s = c;
		if (!c)
			break;
	}
	free(p);
	struct stat st;
	if (failed || (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
		return failed ? -1 : 0;
	errno = ENOTDIR;
	return -1;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	remove(path);
	return 0;
}

void remove_tree(const char *path)
{
	/* depth first, symbolic links removed, not followed */
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	if (!s || !*s)
		return -1;
	errno = 0;
	long v = strtol(s, &end, 0);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int parse_seconds(const char *s, double *out)
{
	char *end;
	if (!s || !*s)
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || !(v > 0) || v > 1e6)
		return -1;
	*out = v;
	return 0;
}

double monotonic_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
