/* The class-rules parser and lookup; see class_rules.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "base/class_rules.h"
#include "base/suppressions.h"

struct class_rule {
	char pattern[SUPPRESSIONS_MAX_PATTERN];
	int depth;
};

static struct class_rule rules[CLASS_RULES_MAX];
static int nr_rules;

static int fail(char *err, size_t size, const char *name, int line, const char *why, const char *what,
		size_t what_len)
{
	snprintf(err, size, "%s:%d: %s '%.*s'", name, line, why, (int)what_len, what);
	nr_rules = 0;
	return -1;
}

int class_rules_parse(const char *text, size_t len, const char *name, char *err, size_t err_size)
{
	nr_rules = 0;
	int line_no = 0;
	for (size_t at = 0; at < len;) {
		const char *line = text + at;
		const char *nl = memchr(line, '\n', len - at);
		size_t n = nl ? (size_t)(nl - line) : len - at;
		at += n + 1;
		line_no++;
		while (n && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r'))
			n--;
		while (n && (*line == ' ' || *line == '\t'))
			line++, n--;
		if (!n || *line == '#')
			continue;
		const char *colon = memchr(line, ':', n);
		if (!colon)
			return fail(err, err_size, name, line_no, "expected split:FUNCTION:DEPTH or merge:FUNCTION,",
				    line, n);
		size_t kind_len = (size_t)(colon - line);
		const char *pattern = colon + 1;
		size_t pattern_len = n - kind_len - 1;
		int depth;
		if (kind_len == 5 && !memcmp(line, "merge", 5)) {
			depth = 0;
		} else if (kind_len == 5 && !memcmp(line, "split", 5)) {
			/* the depth follows the last colon: C++ names have colons */
			const char *last = NULL;
			for (const char *c = pattern; c < pattern + pattern_len; c++)
				if (*c == ':')
					last = c;
			if (!last)
				return fail(err, err_size, name, line_no, "split needs a depth,", line, n);
			const char *digits = last + 1, *end = pattern + pattern_len;
			if (digits == end || end - digits > 2)
				return fail(err, err_size, name, line_no, "bad depth in", line, n);
			depth = 0;
			for (const char *c = digits; c < end; c++) {
				if (*c < '0' || *c > '9')
					return fail(err, err_size, name, line_no, "bad depth in", line, n);
				depth = depth * 10 + (*c - '0');
			}
			if (depth > CLASS_RULES_MAX_DEPTH)
				return fail(err, err_size, name, line_no, "depth above 8 in", line, n);
			pattern_len = (size_t)(last - pattern);
		} else {
			return fail(err, err_size, name, line_no, "unknown rule (split or merge)", line, kind_len);
		}
		if (!pattern_len || pattern_len >= SUPPRESSIONS_MAX_PATTERN)
			return fail(err, err_size, name, line_no, "bad function pattern in", line, n);
		if (nr_rules == CLASS_RULES_MAX)
			return fail(err, err_size, name, line_no, "more than 128 rules at", line, n);
		memcpy(rules[nr_rules].pattern, pattern, pattern_len);
		rules[nr_rules].pattern[pattern_len] = 0;
		rules[nr_rules].depth = depth;
		nr_rules++;
	}
	return nr_rules;
}

int class_rules_load(const char *path, char *err, size_t err_size)
{
	static char text[SUPPRESSIONS_MAX_FILE];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		return -2;
	}
	size_t len = 0;
	ssize_t got;
	while (len < sizeof(text) && (got = read(fd, text + len, sizeof(text) - len)) > 0)
		len += (size_t)got;
	close(fd);
	if (len == sizeof(text)) {
		snprintf(err, err_size, "%s: larger than %d bytes", path, SUPPRESSIONS_MAX_FILE);
		return -1;
	}
	return class_rules_parse(text, len, path, err, err_size);
}

int class_rules_depth(const char *function)
{
	if (!function || !function[0])
		return -1;
	for (int i = 0; i < nr_rules; i++)
		if (suppressions_glob(rules[i].pattern, function))
			return rules[i].depth;
	return -1;
}

int class_rules_count(void)
{
	return nr_rules;
}
