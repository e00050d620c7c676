/* The report's exact text, one report of each main kind: a target's stderr
 * with what changes from run to run or from build to build filtered out
 * (addresses, pids and tids, CPU numbers, symbol offsets and sizes, the
 * tracer's version, the C library's own frames), compared line by line with
 * tests/golden/<name>.txt. The record fields say what a report is about;
 * these say how it reads, down to the blank lines.
 *
 * After a deliberate change of the layout, rewrite the files with
 *   LOCKDEP_RCU_GOLDEN_UPDATE=1 build/tests/suite --filter 'golden/[a-z]*'
 * and read the diff. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <regex.h>
#include <stdlib.h>
#include "harness.h"
#include "cli_helpers.h"

struct substitution {
	const char *pattern;   /* POSIX extended */
	const char *replacement;
};

/* In order: offsets before addresses (an offset is hex too). */
static const struct substitution substitutions[] = {
	/* symbol+offset/size, class names symbol+offset: compiler-dependent */
	{ "\\+0x[0-9a-f]+(/0x[0-9a-f]+)?", "+OFF" },
	{ "0x[0-9a-f]+", "0xADDR" },
	/* lock addresses as the kernel prints them; twice, for a range a-b
	 * (the first match takes the '-' the second needs) */
	{ "(^|[^0-9a-zA-Z_])[0-9a-f]{12,16}([^0-9a-zA-Z_]|$)", "\\1ADDR\\2" },
	{ "(^|[^0-9a-zA-Z_])[0-9a-f]{12,16}([^0-9a-zA-Z_]|$)", "\\1ADDR\\2" },
	{ "lockdep-rcu [0-9]+\\.[0-9]+(\\.[0-9]+)?, pid [0-9]+", "lockdep-rcu VERSION, pid PID" },
	{ "CPU: [0-9]+ PID: [0-9]+ TID: [0-9]+", "CPU: N PID: PID TID: TID" },
	/* comm/tid */
	{ "([A-Za-z0-9_.-])/[0-9]+(\\.?$|[^0-9A-Za-z_./])", "\\1/TID\\2" },
};

/* One substitution over a line, every match; returns a new string. */
static char *substitute(const char *line, const regex_t *re, const char *replacement)
{
	size_t cap = strlen(line) * 2 + 64, len = 0;
	char *out = malloc(cap);
	cr_assert(out);
	const char *p = line;
	regmatch_t m[4];
	int flags = 0;
	while (*p && !regexec(re, p, 4, m, flags)) {
		size_t need = len + (size_t)m[0].rm_so + strlen(replacement) + 64;
		for (int i = 1; i < 4; i++)
			if (m[i].rm_so >= 0)
				need += (size_t)(m[i].rm_eo - m[i].rm_so);
		if (need > cap) {
			cap = need * 2;
			out = realloc(out, cap);
			cr_assert(out);
		}
		memcpy(out + len, p, (size_t)m[0].rm_so);
		len += (size_t)m[0].rm_so;
		for (const char *r = replacement; *r; r++) {
			if (r[0] == '\\' && r[1] >= '1' && r[1] <= '3') {
				int g = r[1] - '0';
				if (m[g].rm_so >= 0) {
					memcpy(out + len, p + m[g].rm_so, (size_t)(m[g].rm_eo - m[g].rm_so));
					len += (size_t)(m[g].rm_eo - m[g].rm_so);
				}
				r++;
			} else {
				out[len++] = *r;
			}
		}
		if (m[0].rm_eo == 0) {   /* an empty match: move on by one */
			out[len++] = *p;
			p++;
		} else {
			p += m[0].rm_eo;
		}
		flags = REG_NOTBOL;
	}
	size_t rest = strlen(p);
	if (len + rest + 1 > cap) {
		cap = len + rest + 1;
		out = realloc(out, cap);
		cr_assert(out);
	}
	memcpy(out + len, p, rest + 1);
	return out;
}

static int rule_of(const char *line, char c)
{
	if (!*line)
		return 0;
	for (; *line; line++)
		if (*line != c)
			return 0;
	return 1;
}

/* A frame of the C library (its lines and inner functions vary with its
 * version): " __libc_start_main+OFF [libc.so.6] ../csu/libc-start.c:360". */
static int libc_frame(const char *line)
{
	return line[0] == ' ' && strstr(line, " [libc.so.6]");
}

/* The text filtered, malloc'd. A rule of '=' or '-' under or over a title
 * must be as long as the title (checked here, on the unfiltered text, since
 * a pid in the title changes its length); it becomes "=====" / "-----". Runs
 * of C library frames become one line "[libc.so.6 frames]", indented as
 * they were. */
static char *golden_filter(const char *text)
{
	regex_t res[sizeof(substitutions) / sizeof(substitutions[0])];
	for (size_t i = 0; i < sizeof(res) / sizeof(res[0]); i++)
		cr_assert_eq(regcomp(&res[i], substitutions[i].pattern, REG_EXTENDED | REG_NEWLINE), 0, "%s",
			     substitutions[i].pattern);
	size_t cap = strlen(text) + 64, len = 0;
	char *out = malloc(cap);
	cr_assert(out);
	out[0] = 0;
	int in_libc = 0;
	char *copy = strdup(text), *save = NULL;
	const char *title = NULL;   /* the line after the last '=' rule */
	/* strtok_r would drop the empty lines: split by hand */
	for (char *line = copy; line; line = save) {
		char *nl = strchr(line, '\n');
		save = nl ? nl + 1 : NULL;
		if (nl)
			*nl = 0;
		else if (!*line)
			break;
		char *filtered;
		if (rule_of(line, '=') || rule_of(line, '-')) {
			/* the title is the line after the '=' rule; the '-' rule
			 * under the version line is as long too */
			if (line[0] == '=')
				title = save;
			size_t title_len = title ? strcspn(title, "\n") : 0;
			cr_expect_eq(strlen(line), title_len, "a rule as long as its title:\n%s\n%.*s", line,
				     (int)title_len, title ? title : "");
			filtered = strdup(line[0] == '=' ? "=====" : "-----");
			in_libc = 0;
		} else if (libc_frame(line)) {
			if (in_libc)
				continue;
			in_libc = 1;
			if (asprintf(&filtered, "%.*s[libc.so.6 frames]", (int)strspn(line, " "), line) < 0)
				cr_assert_fail();
		} else {
			in_libc = 0;
			filtered = strdup(line);
			for (size_t i = 0; i < sizeof(res) / sizeof(res[0]); i++) {
				char *next = substitute(filtered, &res[i], substitutions[i].replacement);
				free(filtered);
				filtered = next;
			}
		}
		size_t n = strlen(filtered);
		if (len + n + 2 > cap) {
			cap = (len + n + 2) * 2;
			out = realloc(out, cap);
			cr_assert(out);
		}
		memcpy(out + len, filtered, n);
		len += n;
		out[len++] = '\n';
		out[len] = 0;
		free(filtered);
	}
	free(copy);
	for (size_t i = 0; i < sizeof(res) / sizeof(res[0]); i++)
		regfree(&res[i]);
	return out;
}

/* Line n (from 1) of text, into buf. */
static const char *nth_line(const char *text, int n, char *buf, size_t size)
{
	for (int i = 1; i < n && text; i++) {
		text = strchr(text, '\n');
		if (text)
			text++;
	}
	if (!text || !*text)
		return "(end of text)";
	snprintf(buf, size, "%.*s", (int)strcspn(text, "\n"), text);
	return buf;
}

static int first_difference(const char *a, const char *b)
{
	int line = 1;
	for (; *a && *a == *b; a++, b++)
		line += *a == '\n';
	return *a == *b ? 0 : line;
}

static void expect_golden(const char *name, const char *target, const char *scenario, double timeout)
{
	struct run_options o = { .preload = 1, .timeout = timeout };
	struct run r = run_target(target, "memb", scenario, &o);
	char *actual = golden_filter(r.err);
	char path[512];
	snprintf(path, sizeof(path), "tests/golden/%s.txt", name);
	if (getenv("LOCKDEP_RCU_GOLDEN_UPDATE")) {
		cli_write(path, actual, strlen(actual));
		cr_log_warn("rewrote %s", path);
	}
	char *expected = cli_read(path);
	cr_assert(expected, "no %s (LOCKDEP_RCU_GOLDEN_UPDATE=1 writes it); the filtered output:\n%s", path, actual);
	int line = first_difference(expected, actual);
	char want[1024], got[1024];
	cr_expect_eq(line, 0,
		     "%s differs from %s %s at line %d:\n  expected: %s\n  actual:   %s\n"
		     "---- expected\n%s---- actual (filtered)\n%s---- stderr as written\n%s---- stdout\n%s",
		     path, target, scenario, line, nth_line(expected, line, want, sizeof(want)),
		     nth_line(actual, line, got, sizeof(got)), expected, actual, r.err, r.out);
	free(expected);
	free(actual);
	run_free(&r);
}

/* The filter itself: what it must hide, and what it must keep. */
Test(golden, filter_hides_what_varies_and_keeps_the_rest)
{
	char *f = golden_filter("\n============\nBUG: p/12345\nlockdep-rcu 0.1, pid 77\n------------\n"
				" #0: 000056546d876180 (account_new+0x20){mutex}, at: f+0x26/0x30 [p.memb] "
				"tests/targets/p.c:14\n"
				"CPU: 1 PID: 77 TID: 78 Comm: p.memb\n"
				" start_thread+0x305/0x48e [libc.so.6] pthread_create.c:442\n"
				" clone3+0x2c/0x47 [libc.so.6] ../sysdeps/unix/sysv/linux/x86_64/clone3.S:81\n"
				"lock(B); tests/targets/lock_order.c:18 at 0x7f00aa\n"
				"p/1 frees 000055842a163c80-000055842a163ca7, held by p/2.\n");
	cr_expect_str_eq(f, "\n=====\nBUG: p/TID\nlockdep-rcu VERSION, pid PID\n-----\n"
			    " #0: ADDR (account_new+OFF){mutex}, at: f+OFF [p.memb] tests/targets/p.c:14\n"
			    "CPU: N PID: PID TID: TID Comm: p.memb\n"
			    " [libc.so.6 frames]\n"
			    "lock(B); tests/targets/lock_order.c:18 at 0xADDR\n"
			    "p/TID frees ADDR-ADDR, held by p/TID.\n", "%s", f);
	free(f);
}

Test(golden, suspicious_rcu_usage)
{
	expect_golden("suspicious_rcu_usage", "deref_outside_reader", "bug", 20);
}

Test(golden, circular_locking_dependency)
{
	expect_golden("circular_locking_dependency", "lock_order", "abba", 20);
}

Test(golden, locks_held_at_thread_end)
{
	expect_golden("locks_held_at_thread_end", "thread_end", "bug-return-locked", 20);
}

Test(golden, bad_unlock_balance)
{
	expect_golden("bad_unlock_balance", "rcu_unlock_balance", "bug", 20);
}

Test(golden, held_lock_freed)
{
	expect_golden("held_lock_freed", "lock_destroy_held", "bug-heap-mutex", 20);
}
