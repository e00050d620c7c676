/* The suppressions parser and matcher (preload/base/suppressions.c) as pure
 * logic under ASan/UBSan: rules, globs, kinds, and every malformed line
 * named with its line number. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/suppressions.h"

static char err[512];

static int parse(const char *text)
{
	err[0] = 0;
	return suppressions_parse(text, strlen(text), "supp.txt", err, sizeof(err));
}

static int match1(const char *kind, const char *name)
{
	const char *names[] = { name };
	return suppressions_match(kind, names, 1);
}

Test(suppressions, rules_comments_and_blank_lines)
{
	cr_assert_eq(parse("# a comment\n\nsuspicious_rcu:route_stats\n   \n  bad_unlock : legacy_*  \r\n*:third_party_init"), 3,
		     "%s", err);
	cr_expect_eq(suppressions_count(), 3);
	cr_expect(match1("suspicious_rcu", "route_stats"));
	cr_expect(match1("bad_unlock", "legacy_unlock_all"));
	cr_expect(match1("held_lock_freed", "third_party_init"), "* matches every kind");
	cr_expect_not(match1("bad_unlock", "route_stats"), "a rule applies to its kind only");
	cr_expect_not(match1("suspicious_rcu", "route_stats_v2"), "patterns match whole names");
}

Test(suppressions, every_kind_is_known)
{
	const char *kinds[] = { "suspicious_rcu", "bad_unlock", "recursive_locking", "held_lock_freed",
				"locks_held_at_exit", "circular_dependency", "lockdep_assertion", "rcu_stall", "hung_task",
				"rcu_use_after_free", "inconsistent_lock_state", "irq_lock_inversion" };
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		char rule[128];
		snprintf(rule, sizeof(rule), "%s:f", kinds[i]);
		cr_expect_eq(parse(rule), 1, "%s: %s", kinds[i], err);
		cr_expect(match1(kinds[i], "f"), "%s", kinds[i]);
		cr_expect(suppressions_kind_known(kinds[i]));
	}
	cr_expect_not(suppressions_kind_known("*"));
	cr_expect_not(suppressions_kind_known("race"));
	cr_expect_not(suppressions_kind_known(NULL));
}

Test(suppressions, globs)
{
	cr_expect(suppressions_glob("*", ""));
	cr_expect(suppressions_glob("*", "anything"));
	cr_expect(suppressions_glob("route_*", "route_stats"));
	cr_expect(suppressions_glob("*_stats", "route_stats"));
	cr_expect(suppressions_glob("r?ute_*s", "route_stats"));
	cr_expect(suppressions_glob("*ute*at*", "route_stats"));
	cr_expect(suppressions_glob("a**b", "ab"));
	cr_expect_not(suppressions_glob("route", "route_stats"));
	cr_expect_not(suppressions_glob("?", ""));
	cr_expect_not(suppressions_glob("route_?", "route_"));
	cr_expect_not(suppressions_glob("*x", "route_stats"));
	cr_expect(suppressions_glob("", ""));
	cr_expect_not(suppressions_glob("", "a"));
}

Test(suppressions, pathological_glob_stays_fast, .timeout = 5)
{
	char name[4097];
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	cr_expect_not(suppressions_glob("*a*a*a*a*a*a*a*a*a*a*b", name));
	cr_expect(suppressions_glob("*a*a*a*a*a*a*a*a*a*a*", name));
}

Test(suppressions, any_frame_may_match_and_empty_names_never_do)
{
	cr_assert_eq(parse("suspicious_rcu:caller_*"), 1);
	const char *frames[] = { NULL, "", "peek", "caller_of_peek", "start_thread" };
	cr_expect(suppressions_match("suspicious_rcu", frames, 5));
	cr_expect_not(suppressions_match("suspicious_rcu", frames, 3));
	cr_assert_eq(parse("*:*"), 1);
	const char *unknown[] = { NULL, "" };
	cr_expect_not(suppressions_match("bad_unlock", unknown, 2), "frames without a name match nothing");
	cr_expect(match1("no_such_kind", "f"), "* rules match kinds this version does not know");
	cr_assert_eq(parse("bad_unlock:f"), 1);
	cr_expect_not(match1("no_such_kind", "f"));
	cr_expect_not(match1(NULL, "f"));
}

static void expect_error(const char *text, const char *expected)
{
	cr_expect_eq(parse(text), -1, "accepted: %s", text);
	cr_expect(strstr(err, expected), "'%s' not in '%s'", expected, err);
	cr_expect_null(strchr(err, '\n'), "one line: %s", err);
	cr_expect_eq(suppressions_count(), 0, "no rule stays active after an error");
}

Test(suppressions, malformed_lines_are_named_with_their_number)
{
	expect_error("suspicious_rcu:a\nroute_stats\n", "supp.txt:2: expected kind:pattern");
	expect_error("# c\n\nrace:foo\n", "supp.txt:3: unknown kind");
	expect_error("race:foo\n", "'race'");
	expect_error("bad_unlock:   \n", "supp.txt:1: empty pattern");
	expect_error(":foo\n", "supp.txt:1: unknown kind");
	char nul[] = "bad_unlock:a\nbad_unlock:b\0c\n";
	cr_expect_eq(suppressions_parse(nul, sizeof(nul) - 1, "n.txt", err, sizeof(err)), -1);
	cr_expect(strstr(err, "n.txt:2:"), "%s", err);
}

Test(suppressions, bounded_table_and_pattern)
{
	static char text[SUPPRESSIONS_MAX_RULES * 32 + 64];
	size_t n = 0;
	for (int i = 0; i < SUPPRESSIONS_MAX_RULES; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "bad_unlock:f%d\n", i);
	cr_expect_eq(parse(text), SUPPRESSIONS_MAX_RULES, "%s", err);
	cr_expect(match1("bad_unlock", "f255"));
	snprintf(text + n, sizeof(text) - n, "bad_unlock:one_too_many\n");
	expect_error(text, "supp.txt:257: more rules than");

	char rule[SUPPRESSIONS_MAX_PATTERN + 32] = "bad_unlock:";
	memset(rule + 11, 'x', SUPPRESSIONS_MAX_PATTERN - 1);
	rule[11 + SUPPRESSIONS_MAX_PATTERN - 1] = 0;
	cr_expect_eq(parse(rule), 1, "the longest pattern fits: %s", err);
	rule[11 + SUPPRESSIONS_MAX_PATTERN - 1] = 'x';
	rule[11 + SUPPRESSIONS_MAX_PATTERN] = 0;
	expect_error(rule, "supp.txt:1: pattern longer than");
}

Test(suppressions, error_buffer_is_never_overrun)
{
	char small[8];
	memset(small, 'z', sizeof(small));
	cr_expect_eq(suppressions_parse("race:x", 6, "a-long-file-name.txt", small, sizeof(small)), -1);
	cr_expect_eq(small[sizeof(small) - 1], 0);
	cr_expect_eq(suppressions_parse("race:x", 6, "f", NULL, 0), -1, "no error buffer is fine");
}

static char *temp_file(const char *content, size_t len)
{
	static char path[64];
	snprintf(path, sizeof(path), "/tmp/lockdep-rcu-supp.XXXXXX");
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, content, len), (ssize_t)len);
	close(fd);
	return path;
}

Test(suppressions, load_from_a_file)
{
	static const char text[] = "# file\nlocks_held_at_exit:failing_updater\nrecursive_locking:hang\n";
	char *path = temp_file(text, sizeof(text) - 1);
	cr_expect_eq(suppressions_load(path, err, sizeof(err)), 2, "%s", err);
	cr_expect(match1("locks_held_at_exit", "failing_updater"));
	unlink(path);

	static const char bad[] = "bad_unlock:ok\nnot a rule\n";
	path = temp_file(bad, sizeof(bad) - 1);
	cr_expect_eq(suppressions_load(path, err, sizeof(err)), -1);
	char expected[128];
	snprintf(expected, sizeof(expected), "%s:2:", path);
	cr_expect(strstr(err, expected), "%s", err);
	unlink(path);
}

Test(suppressions, missing_and_oversized_files)
{
	cr_expect_eq(suppressions_load("/nonexistent/supp.txt", err, sizeof(err)), -2, "cannot be read: -2");
	cr_expect(strstr(err, "/nonexistent/supp.txt: cannot open suppressions file"), "%s", err);

	size_t len = SUPPRESSIONS_MAX_FILE;
	char *big = malloc(len + 1);
	memset(big, '#', len);   /* a comment exactly as large as allowed */
	char *path = temp_file(big, len);
	cr_expect_eq(suppressions_load(path, err, sizeof(err)), 0, "%s", err);
	unlink(path);
	big[len] = '\n';
	path = temp_file(big, len + 1);
	cr_expect_eq(suppressions_load(path, err, sizeof(err)), -1);
	cr_expect(strstr(err, "larger than"), "%s", err);
	unlink(path);
	free(big);
}
