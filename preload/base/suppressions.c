/* Suppression rules: parsing and matching without allocation, so the tracer
 * can use it from its constructor and from inside reports. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "base/report_kinds.h"
#include "base/suppressions.h"

#define KIND_ANY ((int)NR_REPORT_KINDS)

struct rule {
	int kind;                 /* enum report_kind, or KIND_ANY */
	char pattern[SUPPRESSIONS_MAX_PATTERN];
};

static struct rule rules[SUPPRESSIONS_MAX_RULES];
static int nr_rules;
static char file_buf[SUPPRESSIONS_MAX_FILE];

static int kind_index(const char *s, size_t len)
{
	if (len == 1 && s[0] == '*')
		return KIND_ANY;
	for (size_t k = 0; k < NR_REPORT_KINDS; k++)
		if (strlen(report_record_kind[k]) == len && !memcmp(report_record_kind[k], s, len))
			return (int)k;
	return -1;
}

int suppressions_kind_known(const char *kind)
{
	int k = kind ? kind_index(kind, strlen(kind)) : -1;
	return k >= 0 && k != KIND_ANY;
}

int suppressions_count(void)
{
	return nr_rules;
}

/* Iterative, with one backtracking point (the last '*'): linear in practice,
 * O(len(pattern) * len(name)) at worst, no recursion on a thread's small stack. */
int suppressions_glob(const char *pattern, const char *name)
{
	const char *p = pattern, *n = name;
	const char *star = NULL, *star_name = NULL;
	while (*n) {
		if (*p == '*') {
			star = ++p;
			star_name = n;
		} else if (*p && (*p == '?' || *p == *n)) {
			p++;
			n++;
		} else if (star) {
			p = star;
			n = ++star_name;
		} else {
			return 0;
		}
	}
	while (*p == '*')
		p++;
	return *p == 0;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static int fail(char *err, size_t err_size, const char *name, unsigned line, const char *what,
		const char *word, size_t word_len)
{
	nr_rules = 0;
	if (err && err_size) {
		if (word_len > 64)
			word_len = 64;
		if (word)
			snprintf(err, err_size, "%s:%u: %s '%.*s'", name, line, what, (int)word_len, word);
		else
			snprintf(err, err_size, "%s:%u: %s", name, line, what);
	}
	return -1;
}

int suppressions_parse(const char *text, size_t len, const char *name, char *err, size_t err_size)
{
	nr_rules = 0;
	unsigned line_no = 0;
	size_t pos = 0;
	while (pos < len) {
		line_no++;
		const char *line = text + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t line_len = nl ? (size_t)(nl - line) : len - pos;
		pos += line_len + (nl ? 1 : 0);
		/* trim */
		while (line_len && is_space(*line)) {
			line++;
			line_len--;
		}
		while (line_len && is_space(line[line_len - 1]))
			line_len--;
		if (line_len == 0 || line[0] == '#')
			continue;
		if (memchr(line, 0, line_len))
			return fail(err, err_size, name, line_no, "binary data (a NUL byte) in the line", NULL, 0);
		const char *colon = memchr(line, ':', line_len);
		if (!colon)
			return fail(err, err_size, name, line_no, "expected kind:pattern, got", line, line_len);
		size_t kind_len = (size_t)(colon - line);
		while (kind_len && is_space(line[kind_len - 1]))
			kind_len--;
		int kind = kind_index(line, kind_len);
		if (kind < 0)
			return fail(err, err_size, name, line_no,
				    "unknown kind (suspicious_rcu, bad_unlock, recursive_locking, held_lock_freed, "
				    "locks_held_at_exit, circular_dependency, lockdep_assertion, rcu_stall, hung_task, "
				    "rcu_use_after_free, inconsistent_lock_state, irq_lock_inversion or *)",
				    line, kind_len);
		const char *pattern = colon + 1;
		size_t pattern_len = (size_t)(line + line_len - pattern);
		while (pattern_len && is_space(*pattern)) {
			pattern++;
			pattern_len--;
		}
		if (pattern_len == 0)
			return fail(err, err_size, name, line_no, "empty pattern after the kind", NULL, 0);
		if (pattern_len >= SUPPRESSIONS_MAX_PATTERN)
			return fail(err, err_size, name, line_no, "pattern longer than SUPPRESSIONS_MAX_PATTERN", NULL, 0);
		if (nr_rules == SUPPRESSIONS_MAX_RULES)
			return fail(err, err_size, name, line_no, "more rules than SUPPRESSIONS_MAX_RULES (256)", NULL, 0);
		rules[nr_rules].kind = kind;
		memcpy(rules[nr_rules].pattern, pattern, pattern_len);
		rules[nr_rules].pattern[pattern_len] = 0;
		nr_rules++;
	}
	return nr_rules;
}

int suppressions_load(const char *path, char *err, size_t err_size)
{
	nr_rules = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (err && err_size)
			snprintf(err, err_size, "%s: cannot open suppressions file: %s", path, strerror(errno));
		return -2;
	}
	size_t len = 0;
	for (;;) {
		if (len == sizeof(file_buf)) {
			/* The buffer is full: the file fits only if it ends here. */
			char extra;
			ssize_t more;
			while ((more = read(fd, &extra, 1)) < 0 && errno == EINTR)
				;
			close(fd);
			if (more == 0)
				break;
			if (err && err_size)
				snprintf(err, err_size, "%s: suppressions file larger than %d bytes", path,
					 SUPPRESSIONS_MAX_FILE);
			return -1;
		}
		ssize_t n = read(fd, file_buf + len, sizeof(file_buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			if (err && err_size)
				snprintf(err, err_size, "%s: cannot read suppressions file: %s", path, strerror(errno));
			close(fd);
			return -2;
		}
		if (n == 0) {
			close(fd);
			break;
		}
		len += (size_t)n;
	}
	return suppressions_parse(file_buf, len, path, err, err_size);
}

int suppressions_match(const char *kind, const char *const *function_names, size_t nr)
{
	int k = kind ? kind_index(kind, strlen(kind)) : -1;
	for (int r = 0; r < nr_rules; r++) {
		if (rules[r].kind != KIND_ANY && rules[r].kind != k)
			continue;
		for (size_t i = 0; i < nr; i++)
			if (function_names[i] && function_names[i][0] &&
			    suppressions_glob(rules[r].pattern, function_names[i]))
				return 1;
	}
	return 0;
}
