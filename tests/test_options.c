/* LOCKDEP_RCU_OPTIONS on real runs: where reports go, what the exit status
 * becomes, halting and aborting, backtrace depth, the summary line, bad
 * options that never stop the program, and files named there that cannot
 * be read, which do. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include "harness.h"
#include "../preload/base/options.h"

static struct run run_demo(const char *options)
{
	struct run_options o = { .preload = 1, .options = options };
	char path[4096];
	snprintf(path, sizeof(path), "%s", build_path("targets/demo_buggy_cache.memb"));
	char *argv[] = { path, NULL };
	return run_program(argv, &o);
}

Test(options, log_path_with_pid_gets_the_reports_and_stderr_stays_clean)
{
	char dir[] = "/tmp/lockdep-rcu-log.XXXXXX";
	cr_assert(mkdtemp(dir));
	char options[256];
	snprintf(options, sizeof(options), "log_path=%s/report.%%p.log", dir);
	struct run r = run_demo(options);
	cr_expect_str_empty(r.err, "%s", r.err);
	cr_expect_eq(r.exit_code, 66, "exit status %d, expected %d:\n%s%s", r.exit_code, 66, r.out, r.err);
	DIR *d = opendir(dir);
	struct dirent *e;
	int logs = 0, records = 0;
	char name[512] = "";
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len > 6 && !strcmp(e->d_name + len - 6, ".jsonl"))
			records++;
		else if (!strncmp(e->d_name, "report.", 7)) {
			logs++;
			snprintf(name, sizeof(name), "%s/%s", dir, e->d_name);
		}
	}
	closedir(d);
	cr_expect_eq(logs, 1, "one log per process");
	cr_expect_eq(records, 1, "its records beside it");
	FILE *f = fopen(name, "r");
	cr_assert(f, "%s", name);
	static char log[1 << 16];
	size_t n = fread(log, 1, sizeof(log) - 1, f);
	log[n] = 0;
	fclose(f);
	cr_expect_eq(splat_count(log), 3, "%s", log);
	cr_expect(strstr(log, "SUMMARY: lockdep-rcu: 3 reports"), "%s", log);
	char expected_suffix[64];
	cr_expect(sscanf(strrchr(name, '/') + 1, "report.%63[0-9].log", expected_suffix) == 1, "%s", name);
	run_free(&r);
	char rm[600];
	snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
	cr_expect_eq(system(rm), 0);
}

Test(options, exitcode)
{
	struct run r = run_demo("exitcode=0");
	cr_expect_eq(r.exit_code, 0, "exitcode=0 keeps the program's own status");
	cr_expect_eq(splat_count(r.err), 3);
	run_free(&r);
	r = run_demo("exitcode=9");
	cr_expect_eq(r.exit_code, 9, "exit status %d, expected %d:\n%s%s", r.exit_code, 9, r.out, r.err);
	cr_expect(strstr(r.out, "done"), "buffered output is flushed before the exit: %s", r.out);
	run_free(&r);
}

Test(options, halt_on_error_stops_at_the_first_report)
{
	struct run r = run_demo("halt_on_error=1");
	cr_expect_eq(splat_count(r.err), 1, "%s", r.err);
	cr_expect_eq(r.exit_code, 66, "exit status %d, expected %d:\n%s%s", r.exit_code, 66, r.out, r.err);
	cr_expect_null(strstr(r.out, "done"), "%s", r.out);
	run_free(&r);
}

Test(options, max_frames_bounds_the_backtrace)
{
	struct run r = run_demo("max_frames=1:halt_on_error=1");
	const char *trace = strstr(r.err, "Call Trace:\n");
	cr_assert(trace, "%s", r.err);
	trace += strlen("Call Trace:\n");
	int frames = 0;
	while (*trace == ' ') {
		frames++;
		trace = strchr(trace, '\n');
		if (!trace)
			break;
		trace++;
	}
	cr_expect_eq(frames, 1, "%s", r.err);
	run_free(&r);
}

Test(options, summary_can_be_turned_off)
{
	struct run r = run_demo("print_summary=0");
	cr_expect_null(strstr(r.err, "SUMMARY"), "%s", r.err);
	cr_expect_eq(splat_count(r.err), 3);
	run_free(&r);
}

Test(options, bad_options_are_named_and_the_tracer_carries_on)
{
	struct run r = run_demo("exitcode=abc:frobnicate=1:max_frames=500");
	cr_expect(strstr(r.err, "lockdep-rcu: ignoring option 'exitcode'"), "%s", r.err);
	cr_expect(strstr(r.err, "lockdep-rcu: ignoring option 'frobnicate'"), "%s", r.err);
	cr_expect(strstr(r.err, "lockdep-rcu: ignoring option 'max_frames'"), "%s", r.err);
	cr_expect_eq(splat_count(r.err), 3, "%s", r.err);
	cr_expect_eq(r.exit_code, 66, "defaults kept");
	cr_expect(strstr(r.out, "done"));
	run_free(&r);
}

/* Every option of the table, each on a line of its own that ends with its
 * value now: the listing once stopped partway, in a buffer too small. */
Test(options, help_lists_every_option)
{
	struct run_options o = { .preload = 1, .options = "help=1" };
	struct run r = run_target("deref_outside_reader", "memb", "ok", &o);
#define OPTION_NAME(name, type, def, desc) #name,
	const char *names[] = { TRACER_OPTIONS(OPTION_NAME) NULL };
#undef OPTION_NAME
	for (const char **n = names; *n; n++) {
		char line[64];
		snprintf(line, sizeof(line), "\n  %s ", *n);
		const char *at = strstr(r.err, line);
		const char *end = at ? strchr(at + 1, '\n') : NULL;
		cr_expect(at && end && end[-1] == ')' && memmem(at, (size_t)(end - at), "(now ", 5),
			  "%s missing or cut short in:\n%s", *n, r.err);
	}
	cr_expect_eq(r.exit_code, 0, "exit status %d, expected %d:\n%s%s", r.exit_code, 0, r.out, r.err);
	run_free(&r);
}

Test(options, suppressions_file_hides_matching_reports_and_counts_them)
{
	char path[] = "/tmp/lockdep-rcu-supp.XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	const char rules[] = "# reviewed\nsuspicious_rcu:route_stats\nlocks_held_at_exit:failing_*\n";
	cr_assert(write(fd, rules, sizeof(rules) - 1) == (ssize_t)(sizeof(rules) - 1));
	close(fd);
	char options[128];
	snprintf(options, sizeof(options), "suppressions=%s", path);
	struct run r = run_demo(options);
	cr_expect_eq(splat_count(r.err), 1, "%s", r.err);
	cr_expect(strstr(r.err, "never called rcu_register_thread()"), "%s", r.err);
	cr_expect(strstr(r.err, "SUMMARY: lockdep-rcu: 1 report: 1 suspicious RCU usage; 2 suppressed"), "%s", r.err);
	run_free(&r);
	unlink(path);
}

Test(options, bad_suppressions_file_is_named_with_its_line)
{
	char path[] = "/tmp/lockdep-rcu-supp.XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	const char rules[] = "# reviewed\nsuspicious_rcu:route_stats\nno_such_kind:main\n";
	cr_assert(write(fd, rules, sizeof(rules) - 1) == (ssize_t)(sizeof(rules) - 1));
	close(fd);
	char options[128];
	snprintf(options, sizeof(options), "suppressions=%s", path);
	struct run r = run_demo(options);
	cr_expect(strstr(r.err, "lockdep-rcu: ignoring option 'suppressions'"), "%s", r.err);
	char line[160];
	snprintf(line, sizeof(line), "%s:3:", path);
	cr_expect(strstr(r.err, line), "the file and line named\n%s", r.err);
	cr_expect_eq(splat_count(r.err), 3, "nothing suppressed, the run goes on\n%s", r.err);
	run_free(&r);
	unlink(path);
}

Test(options, perturb_keeps_a_correct_program_correct, .timeout = 120)
{
	struct run_options o = { .preload = 1, .options = "perturb=1:seed=42", .timeout = 60 };
	struct run r = run_target("correct_program", "memb", "", &o);
	cr_expect_str_empty(r.err, "%s", r.err);
	cr_expect(strstr(r.out, "reads 60000 taken 100 last 199 child 0"), "%s", r.out);
	cr_expect_eq(r.exit_code, 0, "exit status %d, expected %d:\n%s%s", r.exit_code, 0, r.out, r.err);
	run_free(&r);
}

Test(options, commas_and_spaces_separate_options)
{
	struct run r = run_demo("max_frames=1, halt_on_error=1");
	cr_expect_null(strstr(r.err, "ignoring option"), "%s", r.err);
	cr_expect_eq(splat_count(r.err), 1, "%s", r.err);
	const char *trace = strstr(r.err, "Call Trace:\n");
	cr_assert(trace, "%s", r.err);
	trace += strlen("Call Trace:\n");
	cr_expect(trace[0] == ' ' && strchr(trace, '\n') && strchr(trace, '\n')[1] != ' ', "one frame:\n%s", r.err);
	cr_expect_eq(r.exit_code, 66, "exit status %d, expected %d:\n%s%s", r.exit_code, 66, r.out, r.err);
	run_free(&r);
}

Test(options, abort_on_error_aborts_at_the_first_report)
{
	struct run r = run_demo("abort_on_error=1");
	cr_expect_eq(r.signal, SIGABRT, "signal %d, exit %d\n%s", r.signal, r.exit_code, r.err);
	cr_expect_eq(splat_count(r.err), 1, "%s", r.err);
	cr_expect(strstr(r.err, "lockdep-rcu: abort_on_error=1, aborting\n"), "%s", r.err);
	cr_expect_null(strstr(r.out, "done"), "%s", r.out);
	run_free(&r);
}

/* ThreadSanitizer's rule: a suppressions (or class rules) file that cannot
 * be read stops the program before it runs, since it would run with
 * nothing suppressed. A malformed one is named and the run goes on
 * (bad_class_rules_file_is_named in test_lock_classes.c). */
Test(options, a_file_named_in_the_options_that_cannot_be_read_stops_the_program)
{
	static const struct {
		const char *options, *what;
		int status;
	} cases[] = {
		{ "suppressions=/nonexistent/lockdep-rcu.supp", "suppressions", 66 },
		{ "class_rules=/nonexistent/lockdep-rcu.rules", "class rules", 66 },
		{ "exitcode=0:suppressions=/nonexistent/lockdep-rcu.supp", "suppressions", 1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct run r = run_demo(cases[i].options);
		char expected[160];
		snprintf(expected, sizeof(expected), "lockdep-rcu: ERROR: cannot read the %s file of LOCKDEP_RCU_OPTIONS: ",
			 cases[i].what);
		cr_expect(strstr(r.err, expected), "[%s]\n%s", cases[i].options, r.err);
		cr_expect(strstr(r.err, "/nonexistent/lockdep-rcu."), "the path named\n%s", r.err);
		cr_expect_eq(r.exit_code, cases[i].status, "[%s]\n%s", cases[i].options, r.err);
		cr_expect_str_empty(r.out, "the program never ran:\n%s", r.out);
		cr_expect_eq(splat_count(r.err), 0, "%s", r.err);
		run_free(&r);
	}
}
