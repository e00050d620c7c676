/* The lockdep-rcu command: --help and usage errors of every subcommand, and
 * `run`. The tool under test is its ASan/UBSan build; every run of it is
 * checked for sanitizer reports (the helpers are in cli_helpers.h). */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "harness.h"
#include "cli_helpers.h"

/* ---- --help and usage errors -------------------------------------------------- */

Test(cli, help_for_every_subcommand)
{
	struct run r = cli_env(0, NULL, "--help", NULL);
	cr_expect_eq(r.exit_code, 0, "exit status %d, expected %d:\n%s%s", r.exit_code, 0, r.out, r.err);
	cr_expect(strstr(r.out, "usage: lockdep-rcu COMMAND"), "%s", r.out);
	run_free(&r);
	const char *cmds[] = { "run", "report", "stress", "graph" };
	for (int i = 0; i < 4; i++) {
		r = cli_env(0, NULL, cmds[i], "--help", NULL);
		char expected[64];
		snprintf(expected, sizeof(expected), "usage: lockdep-rcu %s", cmds[i]);
		cr_expect_eq(r.exit_code, 0, "%s --help", cmds[i]);
		cr_expect(strstr(r.out, expected), "%s", r.out);
		cr_expect(strstr(r.out, "Exit status"), "%s --help documents the exit status", cmds[i]);
		run_free(&r);
	}
}

Test(cli, usage_errors)
{
	struct { int status; const char *args[8]; const char *message; } cases[] = {
		{ 2, { "frobnicate" }, "unknown command" },
		{ 2, { "report", "--bogus", "x" }, "unknown option --bogus" },
		{ 2, { "report" }, "no log or directory given" },
		{ 2, { "report", "/nonexistent/logs" }, "/nonexistent/logs" },
		{ 2, { "report", "--symbols" }, "needs a value" },
		{ 2, { "stress", "-n", "0", "--", "/bin/true" }, "-n needs" },
		{ 2, { "stress", "-j", "many", "--", "/bin/true" }, "-j needs" },
		{ 2, { "stress", "--timeout", "-1", "--", "/bin/true" }, "--timeout needs" },
		{ 2, { "stress", "--seed", "x", "--", "/bin/true" }, "--seed needs" },
		{ 2, { "stress", "--seed", "2147483647", "-n", "2", "--", "/bin/true" }, "goes past 2147483647" },
		{ 2, { "stress", "-n", "2" }, "no program given" },
		{ 2, { "stress", "--", "/nonexistent/prog" }, "No such file" },
		{ 125, { "run", "--bogus", "--", "/bin/true" }, "unknown option --bogus" },
		{ 125, { "run" }, "no program given" },
		{ 125, { "run", "--option", "novalue", "--", "/bin/true" }, "KEY=VALUE" },
		/* --option is checked against the tracer's own option table */
		{ 125, { "run", "--option", "bogus=1", "--", "/bin/true" }, "unknown tracer option 'bogus'" },
		{ 125, { "run", "--option", "exitcode=1:bogus=2", "--", "/bin/true" }, "unknown tracer option 'bogus'" },
		{ 125, { "run", "--option", "exitcode=many", "--", "/bin/true" },
		  "tracer option 'exitcode' takes an integer, got 'many'" },
		{ 2, { "stress", "--option", "bogus=1", "--", "/bin/true" }, "unknown tracer option 'bogus'" },
		{ 2, { "stress", "--option", "seed=0x", "--", "/bin/true" }, "tracer option 'seed' takes an integer" },
		{ 2, { "graph" }, "no graph file given" },
		{ 2, { "graph", "--bogus", "x.dot" }, "unknown option --bogus" },
		{ 2, { "graph", "-o" }, "-o needs a value" },
		{ 2, { "graph", "-o", "x.png", "x.dot" }, "the output must end in .svg or .dot" },
		{ 2, { "graph", "/nonexistent/graph.dot" }, "/nonexistent/graph.dot: cannot read: No such file" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char **a = cases[i].args;
		struct run r = cli_env(0, NULL, a[0], a[1], a[2], a[3], a[4], a[5], a[6], NULL);
		cr_expect_eq(r.exit_code, cases[i].status, "%s %s: %d\n%s", a[0], a[1] ? a[1] : "", r.exit_code, r.err);
		cr_expect(strstr(r.err, cases[i].message), "%s %s: '%s' not in:\n%s", a[0], a[1] ? a[1] : "",
			  cases[i].message, r.err);
		run_free(&r);
	}
}

/* Every option the tracer lists (help=1) is one run --option accepts: the
 * command checks names against the tracer's own table, not a copy. */
Test(cli, run_accepts_every_tracer_option)
{
	struct run_options o = { .preload = 1, .options = "help=1" };
	struct run t = run_target("cli_misc", "memb", "clean", &o);
	const char *p = strstr(t.err, "lockdep-rcu: options ");
	cr_assert(p, "%s", t.err);
	int names = 0;
	/* "0" for a path would make a file "0" wherever the suite runs
	 * (graph_path writes at every exit): paths go to a directory of ours */
	char *dir = cli_temp_dir();
	for (p = strchr(p, '\n'); p && p[1] == ' '; p = strchr(p + 1, '\n')) {
		char name[64], kv[4200];
		cr_assert_eq(sscanf(p + 1, " %63s", name), 1);
		if (cli_ends_with(name, "_path")) {
			snprintf(kv, sizeof(kv), "%s=%s/0", name, dir);
		} else if (!strcmp(name, "suppressions") || !strcmp(name, "class_rules")) {
			/* files to read: one that cannot be read stops the program */
			snprintf(kv, sizeof(kv), "%s/empty", dir);
			cli_write(kv, "", 0);
			snprintf(kv, sizeof(kv), "%s=%s/empty", name, dir);
		} else
			snprintf(kv, sizeof(kv), "%s=0", name);
		struct run r = cli_env(0, NULL, "run", "--option", kv, "--", "/bin/true", NULL);
		cr_expect_eq(r.exit_code, 0, "%s: %s", kv, r.err);
		run_free(&r);
		names++;
	}
	cr_expect_geq(names, 10, "%s", t.err);
	cli_remove_dir(dir);
	run_free(&t);
	/* a string option's value must fit the tracer's buffer */
	char long_path[700] = "log_path=";
	memset(long_path + 9, 'x', sizeof(long_path) - 10);
	struct run r = cli_env(0, NULL, "run", "--option", long_path, "--", "/bin/true", NULL);
	cr_expect_eq(r.exit_code, 125, "exit status %d, expected %d:\n%s%s", r.exit_code, 125, r.out, r.err);
	cr_expect(strstr(r.err, "tracer option 'log_path' takes at most 511 bytes"), "%s", r.err);
	run_free(&r);
}

Test(cli, version_is_the_tracers)
{
	struct run v = cli_env(0, NULL, "--version", NULL);
	struct run_options o = { .preload = 1 };
	struct run t = run_target("cli_misc", "memb", "bug", &o);
	char version[32] = "";
	const char *line = strstr(t.err, "\nlockdep-rcu ");
	cr_assert(line, "%s", t.err);
	sscanf(line + 1, "lockdep-rcu %31[^,]", version);
	char expected[64];
	snprintf(expected, sizeof(expected), "lockdep-rcu %s\n", version);
	cr_expect_str_eq(v.out, expected, "tools/cli.h and preload/report/report.h disagree");
	run_free(&v);
	run_free(&t);
}

/* ---- run ----------------------------------------------------------------------- */

/* Options as the tracer splits them (',' and spaces too), and an output
 * directory whose path holds separators: the command quotes it for the
 * tracer. */
Test(cli, run_takes_options_and_paths_as_the_tracer_splits_them)
{
	char *base = cli_temp_dir();
	char dir[4200];
	snprintf(dir, sizeof(dir), "%s/logs, with: separators", base);
	struct run r = cli_env(0, NULL, "run", "-o", dir, "--option", "max_frames=2, print_summary=0", "--",
			       cli_target("cli_misc.memb"), "bug", NULL);
	cr_expect_eq(r.exit_code, 66, "%s", r.err);
	cr_expect_null(strstr(r.err, "ignoring option"), "%s", r.err);
	cr_expect_eq(cli_count_files(dir, "lockdep-rcu."), 3, "the log, its records and the run record in '%s'\n%s",
		     dir, r.err);
	run_free(&r);
	r = cli_env(0, NULL, "run", "--option", "max_frames=2,bogus=1", "--", "/bin/true", NULL);
	cr_expect_eq(r.exit_code, 125, "%s", r.err);
	cr_expect(strstr(r.err, "unknown tracer option 'bogus'"), "%s", r.err);
	run_free(&r);
	cli_remove_dir(base);
}

Test(cli, run_logs_one_file_per_process_children_included)
{
	char *dir = cli_temp_dir();
	struct run r = cli_env(0, NULL, "run", "-o", dir, "--", cli_target("cli_misc.memb"), "family", NULL);
	cr_expect_eq(r.exit_code, 66, "%s", r.err);
	cr_expect(strstr(r.out, "child 42") && strstr(r.out, "after exec 42") && strstr(r.out, "parent 42"),
		  "%s", r.out);
	cr_expect(strstr(r.err, "3 reports in 3 logs"), "%s", r.err);
	cr_expect_eq(cli_count_files(dir, "lockdep-rcu."), 7, "3 logs, their 3 records and the run record");
	DIR *d = opendir(dir);
	struct dirent *e;
	const char *sites[] = { "read_unprotected+", "read_unprotected_in_child+", "read_unprotected_after_exec+" };
	int found[3] = { 0 };
	while ((e = readdir(d))) {
		if (!cli_ends_with(e->d_name, ".log"))
			continue;
		char path[4200];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		char *log = cli_read(path);
		cr_expect_eq(splat_count(log), 1, "one report per process:\n%s", log);
		char pid_line[64];
		snprintf(pid_line, sizeof(pid_line), "pid %d, report 1\n", atoi(strchr(e->d_name, '.') + 1));
		cr_expect(strstr(log, pid_line), "the log of pid %s holds its own report, numbered 1 in its process", e->d_name);
		for (int i = 0; i < 3; i++) {
			char top[128];
			snprintf(top, sizeof(top), "Call Trace:\n %s", sites[i]);
			found[i] += strstr(log, top) != NULL;
		}
		free(log);
	}
	closedir(d);
	for (int i = 0; i < 3; i++)
		cr_expect_eq(found[i], 1, "%s: parent, forked child, and executed child each log", sites[i]);
	char record[4200];
	snprintf(record, sizeof(record), "%s/lockdep-rcu.run", dir);
	char *rec = cli_read(record);
	cr_assert(rec);
	cr_expect(strstr(rec, "program /") && strstr(rec, "cli_misc.memb\n"), "%s", rec);
	cr_expect(strstr(rec, "result exit 66\n"), "%s", rec);
	free(rec);
	run_free(&r);
	cli_remove_dir(dir);
}

Test(cli, run_exit_status)
{
	struct { const char *scenario; const char *option; int status; } cases[] = {
		{ "exit3", NULL, 3 },                  /* the program's own */
		{ "clean", NULL, 0 },
		{ "bug", NULL, 66 },                   /* the tracer's exitcode */
		{ "bug", "exitcode=9", 9 },
		{ "bug", "exitcode=0", 0 },            /* 0 keeps the program's own */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct run r = cases[i].option ?
			cli_env(0, NULL, "run", "--option", cases[i].option, "--", cli_target("cli_misc.memb"),
				cases[i].scenario, NULL) :
			cli_env(0, NULL, "run", "--", cli_target("cli_misc.memb"), cases[i].scenario, NULL);
		cr_expect_eq(r.exit_code, cases[i].status, "%s %s:\n%s", cases[i].scenario,
			     cases[i].option ? cases[i].option : "", r.err);
		run_free(&r);
	}
}

/* Every run writes records, with -o or without: a report made only by a
 * child process sets the status either way, and without -o the records'
 * private directory is gone when run returns. */
Test(cli, run_a_report_in_a_child_process_sets_the_status)
{
	char *tmp = cli_temp_dir();
	char tmpdir[4200];
	snprintf(tmpdir, sizeof(tmpdir), "TMPDIR=%s", tmp);
	const char *env[] = { tmpdir, NULL };
	struct run r = cli_env(0, env, "run", "--", cli_target("cli_misc.memb"), "child-only", NULL);
	cr_expect_eq(r.exit_code, 66, "the child's record counts without -o too:\n%s", r.err);
	cr_expect_eq(splat_count(r.err), 1, "%s", r.err);
	cr_expect(strstr(r.out, "parent clean"), "%s", r.out);
	cr_expect_eq(cli_count_files(tmp, ""), 2, "run leaves nothing in TMPDIR but . and ..");
	run_free(&r);
	/* the user's own records_path is kept, and then nothing is counted from it */
	char *records = cli_path_in(tmp, "mine.%p.jsonl"), option[4300];
	snprintf(option, sizeof(option), "records_path=%s", records);
	r = cli_env(0, env, "run", "--option", option, "--", cli_target("cli_misc.memb"), "child-only", NULL);
	cr_expect_eq(cli_count_files(tmp, "mine."), 1, "the child's records, where the user asked:\n%s", r.err);
	run_free(&r);
	free(records);
	cli_remove_dir(tmp);
	char *dir = cli_temp_dir();
	r = cli_env(0, NULL, "run", "-o", dir, "--", cli_target("cli_misc.memb"), "child-only", NULL);
	cr_expect_eq(r.exit_code, 66, "the child's log counts:\n%s", r.err);
	cr_expect(strstr(r.out, "parent clean"), "%s", r.out);
	run_free(&r);
	cli_remove_dir(dir);
}

Test(cli, run_a_program_killed_by_a_signal)
{
	char *dir = cli_temp_dir();
	struct run r = cli_env(0, NULL, "run", "-o", dir, "--", cli_target("cli_misc.memb"), "crash", NULL);
	cr_expect_eq(r.exit_code, 128 + 11, "%s", r.err);
	cr_expect(strstr(r.err, "was killed by signal 11 (Segmentation fault)"), "%s", r.err);
	char record[4200];
	snprintf(record, sizeof(record), "%s/lockdep-rcu.run", dir);
	char *rec = cli_read(record);
	cr_expect(rec && strstr(rec, "result signal 11\n"), "%s", rec ? rec : "(none)");
	free(rec);
	run_free(&r);
	cli_remove_dir(dir);
}

Test(cli, run_passes_options_and_keeps_ld_preload)
{
	char *dir = cli_temp_dir();
	char supp[4200], expected[8400];
	snprintf(supp, sizeof(supp), "%s/supp.txt", dir);
	cli_write(supp, "bad_unlock:f\n", 13);
	/* ASan wants to come first in LD_PRELOAD: the tool itself is not preloaded */
	const char *env[] = { "LD_PRELOAD=libm.so.6", "ASAN_OPTIONS=verify_asan_link_order=0",
			      "LOCKDEP_RCU_OPTIONS=max_frames=5", NULL };
	struct run r = cli_env(0, env, "run", "--option", "exitcode=0", "--suppressions", supp, "--",
			       cli_target("cli_misc.memb"), "env", NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	char tracer[4096];
	cr_assert(realpath(build_path("liblockdep-rcu.so"), tracer));
	snprintf(expected, sizeof(expected), "LD_PRELOAD=%s:libm.so.6\n", tracer);
	cr_expect(strstr(r.out, expected), "expected %s in:\n%s", expected, r.out);
	/* and last, the records' private directory (run counts every process's
	 * reports from it) */
	snprintf(expected, sizeof(expected), "LOCKDEP_RCU_OPTIONS=max_frames=5:exitcode=0:suppressions=%s:records_path=",
		 supp);
	cr_expect(strstr(r.out, expected), "the user's options first, ours after:\nexpected %s in:\n%s", expected,
		  r.out);
	run_free(&r);
	cli_remove_dir(dir);
}

Test(cli, run_program_not_found_or_not_executable)
{
	struct run r = cli_env(0, NULL, "run", "--", "/nonexistent/prog", NULL);
	cr_expect_eq(r.exit_code, 127, "exit status %d, expected %d:\n%s%s", r.exit_code, 127, r.out, r.err);
	cr_expect(strstr(r.err, "lockdep-rcu run: /nonexistent/prog: No such file or directory"), "%s", r.err);
	run_free(&r);
	r = cli_env(0, NULL, "run", "--", "no-such-command-lockdep-rcu", NULL);
	cr_expect_eq(r.exit_code, 127, "exit status %d, expected %d:\n%s%s", r.exit_code, 127, r.out, r.err);
	cr_expect(strstr(r.err, "no-such-command-lockdep-rcu: command not found"), "%s", r.err);
	run_free(&r);
	r = cli_env(0, NULL, "run", "--", "tests/harness.h", NULL);
	cr_expect_eq(r.exit_code, 126, "exit status %d, expected %d:\n%s%s", r.exit_code, 126, r.out, r.err);
	cr_expect(strstr(r.err, "not executable"), "%s", r.err);
	run_free(&r);
}

Test(cli, run_refuses_a_statically_linked_program)
{
	char *dir = cli_temp_dir();
	char src[4200], bin[4200], pie[4200], *cmd;
	snprintf(src, sizeof(src), "%s/s.c", dir);
	snprintf(bin, sizeof(bin), "%s/static-prog", dir);
	snprintf(pie, sizeof(pie), "%s/static-pie-prog", dir);
	static const char text[] = "#include <stdio.h>\nint main(void) { puts(\"ran\"); return 0; }\n";
	cli_write(src, text, sizeof(text) - 1);
	cr_assert(asprintf(&cmd, "cc -static -o '%s' '%s' && cc -static-pie -o '%s' '%s'", bin, src, pie, src) > 0);
	cr_assert_eq(system(cmd), 0, "a static libc is needed for this test");
	free(cmd);
	const char *progs[] = { bin, pie };
	for (int i = 0; i < 2; i++) {
		struct run r = cli_env(0, NULL, "run", "--", progs[i], NULL);
		cr_expect_eq(r.exit_code, 125, "%s", r.err);
		cr_expect(strstr(r.err, "is statically linked"), "%s", r.err);
		cr_expect(strstr(r.err, "LD_PRELOAD cannot work there"), "%s", r.err);
		cr_expect_str_empty(r.out, "refused before it runs: %s", r.out);
		run_free(&r);
	}
	struct run r = cli_env(0, NULL, "stress", "-n", "1", "--", bin, NULL);
	cr_expect_eq(r.exit_code, 2, "%s", r.err);
	cr_expect(strstr(r.err, "is statically linked"), "%s", r.err);
	run_free(&r);
	cli_remove_dir(dir);
}

Test(cli, run_without_the_tracer_library)
{
	const char *env[] = { "LOCKDEP_RCU_PRELOAD=/nonexistent/liblockdep-rcu.so", NULL };
	struct run r = cli_env(0, env, "run", "--", "/bin/true", NULL);
	cr_expect_eq(r.exit_code, 125, "exit status %d, expected %d:\n%s%s", r.exit_code, 125, r.out, r.err);
	cr_expect(strstr(r.err, "LOCKDEP_RCU_PRELOAD=/nonexistent/liblockdep-rcu.so cannot be read"), "%s", r.err);
	run_free(&r);

	/* The installed layout with nothing installed: a copy of the command
	 * alone in a directory. */
	if (access("/usr/local/lib/lockdep-rcu/liblockdep-rcu.so", F_OK) == 0) {
		cr_log_warn("lockdep-rcu is installed in /usr/local: the copy would find it");
		return;
	}
	char *dir = cli_temp_dir();
	char copy[4200], cmd[9000];
	snprintf(copy, sizeof(copy), "%s/lockdep-rcu", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", build_path("lockdep-rcu"), copy);
	cr_assert_eq(system(cmd), 0);
	char *argv[] = { copy, "run", "--", "/bin/true", NULL };
	struct run_options o = { 0 };
	r = run_program(argv, &o);
	cr_expect_eq(r.exit_code, 125, "exit status %d, expected %d:\n%s%s", r.exit_code, 125, r.out, r.err);
	cr_expect(strstr(r.err, "cannot find the tracer library liblockdep-rcu.so"), "%s", r.err);
	cr_expect(strstr(r.err, "LOCKDEP_RCU_PRELOAD"), "the message says how to fix it: %s", r.err);
	run_free(&r);
	cli_remove_dir(dir);
}

Test(cli, run_checks_the_suppressions_file_first)
{
	char *dir = cli_temp_dir();
	char supp[4200];
	snprintf(supp, sizeof(supp), "%s/supp.txt", dir);
	static const char text[] = "# ok\nsuspicious_rcu:read_*\nrace:foo\n";
	cli_write(supp, text, sizeof(text) - 1);
	struct run r = cli_env(0, NULL, "run", "--suppressions", supp, "--", cli_target("cli_misc.memb"), "bug", NULL);
	char expected[4300];
	snprintf(expected, sizeof(expected), "lockdep-rcu run: %s:3: unknown kind", supp);
	cr_expect_eq(r.exit_code, 125, "exit status %d, expected %d:\n%s%s", r.exit_code, 125, r.out, r.err);
	cr_expect(strstr(r.err, expected), "%s", r.err);
	cr_expect_str_empty(r.out, "the program did not run");
	run_free(&r);
	cli_remove_dir(dir);
}
