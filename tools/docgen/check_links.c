/* check_links - every relative link of the given Markdown files must lead
 * somewhere: the file (or directory) it names exists, and a #anchor names a
 * heading of the Markdown file it points into, spelled as GitHub makes
 * heading anchors. Web links are not followed (the check runs offline).
 * Prints one line per broken link, FILE:LINE: target: why; exits 1 when
 * there was one, 2 when a file cannot be read. `make check-docs` runs it
 * over README.md and docs/, so a page moved or a heading renamed without
 * its links fails the suite instead of a reader. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, len = 0;
	char *text = malloc(cap);
	size_t n;
	while (text && (n = fread(text + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (len + 1 == cap)
			text = realloc(text, cap *= 2);
	}
	fclose(f);
	if (text)
		text[len] = '\0';
	return text;
}

/* A fence line opens or closes a code block, whose text is no Markdown. */
static int is_fence(const char *line)
{
	while (*line == ' ')
		line++;
	return strncmp(line, "```", 3) == 0;
}

/* GitHub's anchor of a heading: lower case, every character but letters,
 * digits, '-', '_', spaces and non-ASCII bytes dropped, spaces made '-'. */
static void heading_slug(const char *title, size_t len, char *slug, size_t size)
{
	size_t o = 0;
	for (size_t i = 0; i < len && o + 1 < size; i++) {
		unsigned char c = (unsigned char)title[i];
		if (c == ' ')
			slug[o++] = '-';
		else if (isalnum(c) || c == '-' || c == '_' || c >= 0x80)
			slug[o++] = (char)tolower(c);
	}
	slug[o] = '\0';
}

/* Whether the Markdown file at path has a heading whose anchor is anchor;
 * a repeated heading's anchors are slug, slug-1, slug-2, ... as on GitHub.
 * -1 when the file cannot be read. */
static int has_anchor(const char *path, const char *anchor)
{
	char *text = read_file(path);
	if (!text)
		return -1;
	char **seen = NULL;
	size_t nseen = 0;
	int found = 0, fenced = 0;
	for (char *line = text; line && *line && !found;) {
		char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		if (is_fence(line))
			fenced = !fenced;
		else if (!fenced && line[0] == '#') {
			size_t level = 0;
			while (level < len && line[level] == '#')
				level++;
			if (level <= 6 && level < len && line[level] == ' ') {
				char slug[1024];
				heading_slug(line + level + 1, len - level - 1, slug, sizeof(slug));
				size_t repeats = 0;
				for (size_t i = 0; i < nseen; i++)
					repeats += strcmp(seen[i], slug) == 0;
				seen = realloc(seen, (nseen + 1) * sizeof(*seen));
				seen[nseen++] = strdup(slug);
				char numbered[1100];
				if (repeats)
					snprintf(numbered, sizeof(numbered), "%s-%zu", slug, repeats);
				found = strcmp(repeats ? numbered : slug, anchor) == 0;
			}
		}
		line = end ? end + 1 : NULL;
	}
	for (size_t i = 0; i < nseen; i++)
		free(seen[i]);
	free(seen);
	free(text);
	return found;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Checks one link target written in file at line; returns 1 when broken. */
static int check_target(const char *file, int line_no, const char *target)
{
	if (strncmp(target, "http://", 7) == 0 || strncmp(target, "https://", 8) == 0 ||
	    strncmp(target, "mailto:", 7) == 0)
		return 0;
	const char *hash = strchr(target, '#');
	size_t path_len = hash ? (size_t)(hash - target) : strlen(target);
	char path[4096];
	if (path_len == 0) {
		snprintf(path, sizeof(path), "%s", file);
	} else {
		const char *slash = strrchr(file, '/');
		int dir_len = slash ? (int)(slash - file + 1) : 0;
		snprintf(path, sizeof(path), "%.*s%.*s", dir_len, file, (int)path_len, target);
	}
	struct stat st;
	if (stat(path, &st) != 0) {
		printf("%s:%d: %s: %s does not exist\n", file, line_no, target, path);
		return 1;
	}
	if (!hash || !hash[1])
		return 0;
	if (!ends_with(path, ".md")) {
		printf("%s:%d: %s: an anchor into a file that is not Markdown\n", file, line_no, target);
		return 1;
	}
	int found = has_anchor(path, hash + 1);
	if (found == 1)
		return 0;
	printf("%s:%d: %s: %s has no heading #%s\n", file, line_no, target, path, hash + 1);
	return 1;
}

/* Every [text](target) and ![alt](target) outside code blocks and inline
 * code of one file; returns the number of broken links, -1 if unreadable. */
static int check_file(const char *file)
{
	char *text = read_file(file);
	if (!text) {
		fprintf(stderr, "check_links: %s: %s\n", file, strerror(errno));
		return -1;
	}
	int broken = 0, fenced = 0, line_no = 0;
	for (char *line = text; line && *line;) {
		char *end = strchr(line, '\n');
		if (end)
			*end = '\0';
		line_no++;
		if (is_fence(line)) {
			fenced = !fenced;
		} else if (!fenced) {
			int in_code = 0;
			for (char *p = line; *p; p++) {
				if (*p == '`')
					in_code = !in_code;
				if (in_code || p[0] != ']' || p[1] != '(')
					continue;
				char *start = p + 2, *close = strchr(start, ')');
				if (!close)
					continue;
				char target[4096];
				size_t len = (size_t)(close - start);
				char *space = memchr(start, ' ', len); /* a "title" after the target */
				if (space)
					len = (size_t)(space - start);
				snprintf(target, sizeof(target), "%.*s", (int)len, start);
				broken += check_target(file, line_no, target);
				p = close;
			}
		}
		line = end ? end + 1 : NULL;
	}
	free(text);
	return broken;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: check_links FILE.md...\n");
		return 2;
	}
	int broken = 0, unreadable = 0;
	for (int i = 1; i < argc; i++) {
		int n = check_file(argv[i]);
		if (n < 0)
			unreadable = 1;
		else
			broken += n;
	}
	if (broken)
		printf("check_links: %d broken link%s\n", broken, broken == 1 ? "" : "s");
	return unreadable ? 2 : broken ? 1 : 0;
}
