/* lockdep-rcu report: grouping across runs and processes, symbolization of
 * module+offset frames, JSON, suppressions, and logs that are not logs. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "harness.h"
#include "cli_helpers.h"
#include "../tools/json.h"

/* `lockdep-rcu run -o dir/name -- program args...`, expected to report. */
static void run_into(const char *dir, const char *name, const char *program, const char *arg)
{
	char out[4200];
	snprintf(out, sizeof(out), "%s/%s", dir, name);
	struct run r = cli_env(0, NULL, "run", "-o", out, "--", program, arg, NULL);
	cr_assert_eq(r.exit_code, 66, "%s", r.err);
	run_free(&r);
}

Test(cli, report_groups_the_same_bug_across_runs_and_processes)
{
	char *dir = cli_temp_dir();
	for (int i = 0; i < 3; i++) {
		char name[16];
		snprintf(name, sizeof(name), "run%d", i);
		run_into(dir, name, cli_target("demo_buggy_cache.memb"), NULL);
	}
	struct run r = cli_env(0, NULL, "report", dir, NULL);
	cr_expect_eq(r.exit_code, 1, "%s", r.err);
	cr_expect(strstr(r.out, "lockdep-rcu report: 3 bugs (9 reports) in 3 of 3 runs, 3 processes, 3 logs\n"),
		  "%s", r.out);
	cr_expect_eq(splat_count(r.out), 3, "one full representative per bug:\n%s", r.out);
	cr_expect_eq(count_of(r.out, "3 reports in 3 of 3 runs, 3 processes"), 3, "%s", r.out);
	/* different pids and thread ids, the thread-end report's title included */
	cr_expect_eq(count_of(r.out, "still has locks held!\n   (update_lock){mutex} held, taken at failing_updater"), 1,
		     "%s", r.out);
	cr_expect(strstr(r.out, "demo_buggy_cache.c:19 suspicious rcu_dereference() usage!"), "%s", r.out);
	cr_expect_str_empty(r.err, "no notes about good logs: %s", r.err);
	run_free(&r);

	/* the same logs named one by one (run = the log's directory) */
	char log_glob[4200], cmd[9000];
	snprintf(log_glob, sizeof(log_glob), "%s/run*/lockdep-rcu.*.log", dir);
	snprintf(cmd, sizeof(cmd), "ls %s > %s/list", log_glob, dir);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/list", dir);
	char *list = cli_read(cmd);
	char *logs[3] = { strtok(list, "\n"), strtok(NULL, "\n"), strtok(NULL, "\n") };
	cr_assert(logs[2]);
	r = cli_env(0, NULL, "report", logs[0], logs[1], logs[2], NULL);
	cr_expect(strstr(r.out, "3 bugs (9 reports) in 3 of 3 runs"), "%s", r.out);
	run_free(&r);
	free(list);
	cli_remove_dir(dir);
}

Test(cli, report_most_frequent_first)
{
	char *dir = cli_temp_dir();
	run_into(dir, "a", cli_target("cli_misc.memb"), "bug");
	run_into(dir, "b", cli_target("cli_misc.memb"), "bug");
	run_into(dir, "c", cli_target("demo_buggy_cache.memb"), NULL);
	struct run r = cli_env(0, NULL, "report", dir, NULL);
	const char *first = strstr(r.out, "\n#1 "), *second = strstr(r.out, "\n#2 ");
	cr_assert(first && second, "%s", r.out);
	char *block = strndup(first, (size_t)(second - first));
	cr_expect(strstr(block, "2 reports in 2 of 3 runs, 2 processes"), "the bug of two runs comes first:\n%s", r.out);
	cr_expect(strstr(block, "Call Trace:\n read_unprotected+"), "%s", block);
	free(block);
	cr_expect_eq(count_of(r.out, "1 report in 1 of 3 runs"), 3, "%s", r.out);
	run_free(&r);
	cli_remove_dir(dir);
}

Test(cli, report_nothing_found_exits_0)
{
	char *dir = cli_temp_dir();
	char out[4200];
	snprintf(out, sizeof(out), "%s/clean", dir);
	struct run r = cli_env(0, NULL, "run", "-o", out, "--", cli_target("cli_misc.memb"), "clean", NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	run_free(&r);
	r = cli_env(0, NULL, "report", dir, NULL);
	cr_expect_eq(r.exit_code, 0, "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "lockdep-rcu report: nothing found in 0 logs of 1 run\n"), "%s", r.out);
	run_free(&r);
	r = cli_env(0, NULL, "report", "--json", dir, NULL);
	cr_expect_eq(r.exit_code, 0, "exit status %d, expected %d:\n%s%s", r.exit_code, 0, r.out, r.err);
	cr_expect(cli_json_valid(r.out), "%s", r.out);
	cr_expect(strstr(r.out, "\"bugs\": 0,"), "%s", r.out);
	run_free(&r);
	cli_remove_dir(dir);
}

/* What CI reads from the exit status: a report cut short (a process killed
 * while writing it) is a finding, 1, even when no report is whole; inputs
 * with no lockdep-rcu log or run at all are an error, 2, never a clean 0. */
Test(cli, report_status_counts_reports_cut_short_and_refuses_inputs_without_a_log)
{
	char *dir = cli_temp_dir();
	char log[4300], cut[4300], other[4300];
	snprintf(log, sizeof(log), "%s/whole.log", dir);
	struct run r = run_target("cli_misc", "memb", "bug", &(struct run_options){ .preload = 1, .log_path = log });
	cr_expect_eq(r.exit_code, 66, "%s", r.err);
	run_free(&r);
	char *text = cli_read(log);
	cr_assert(text && strlen(text) > 300, "a whole report in %s", log);
	/* the first 300 bytes: the header and the start of the report */
	snprintf(cut, sizeof(cut), "%s/cut.log", dir);
	cli_write(cut, text, strlen(text) > 300 ? 300 : strlen(text));
	r = cli_env(0, NULL, "report", cut, NULL);
	cr_expect_eq(r.exit_code, 1, "a report cut short is a finding\n%s%s", r.out, r.err);
	cr_expect(strstr(r.err, "1 report cut short"), "%s", r.err);
	run_free(&r);

	snprintf(other, sizeof(other), "%s/notes.txt", dir);
	cli_write(other, "hello\n", 6);
	r = cli_env(0, NULL, "report", other, NULL);
	cr_expect_eq(r.exit_code, 2, "no log among the inputs\n%s%s", r.out, r.err);
	cr_expect(strstr(r.err, "lockdep-rcu report: no lockdep-rcu log or run among the inputs\n"), "%s", r.err);
	run_free(&r);
	free(text);
	cli_remove_dir(dir);
}

/* The groups' fingerprints, "fingerprint:file:line:function" per group in
 * order, of `report --json` on one log. */
static char *fingerprints_of(const char *log)
{
	struct run r = cli_env(0, NULL, "report", "--json", log, NULL);
	json_t *doc = json_loadb(r.out, strlen(r.out), JSON_READ_FLAGS, NULL);
	const json_t *groups = json_object_get(doc, "groups"), *g;
	cr_assert(json_is_array(groups), "%s", r.out);
	struct strbuf_lite {
		char s[2048];
		size_t n;
	} out = { "", 0 };
	size_t i;
	json_array_foreach(groups, i, g) {
		const char *fp = json_string_value(json_object_get(g, "fingerprint"));
		const char *file = json_string_value(json_object_get(g, "file"));
		const char *function = json_string_value(json_object_get(g, "function"));
		double line = json_number_value(json_object_get(g, "line"));
		cr_expect(fp && strlen(fp) == 16 && strspn(fp, "0123456789abcdef") == 16, "%s", r.out);
		out.n += (size_t)snprintf(out.s + out.n, sizeof(out.s) - out.n, "%s:%s:%d:%s\n", fp ? fp : "-",
					  file ? file : "-", (int)line, function ? function : "-");
	}
	json_decref(doc);
	run_free(&r);
	return strdup(out.s);
}

/* CI keys a bug by its fingerprint: the same bug gives the same value in
 * another run (another pid, another address layout), two bugs two values;
 * the site is also given as fields. */
Test(cli, report_json_sarif_and_gcc_lines_carry_a_stable_fingerprint_and_the_site)
{
	char *dir = cli_temp_dir();
	char a[4300], b[4300];
	snprintf(a, sizeof(a), "%s/a.log", dir);
	snprintf(b, sizeof(b), "%s/b.log", dir);
	for (int i = 0; i < 2; i++) {
		char path[4200];
		snprintf(path, sizeof(path), "%s", build_path("targets/demo_buggy_cache.memb"));
		char *argv[] = { path, NULL };
		struct run r = run_program(argv, &(struct run_options){ .preload = 1, .log_path = i ? b : a });
		cr_expect_eq(r.exit_code, 66, "%s", r.err);
		run_free(&r);
	}
	char *first = fingerprints_of(a), *second = fingerprints_of(b);
	cr_expect_str_eq(first, second, "the same bugs, the same fingerprints");
	cr_expect(strstr(first, ":tests/targets/demo_buggy_cache.c:19:route_stats\n"), "%s", first);
	/* three groups, three values */
	char fps[3][17] = { "", "", "" };
	int n = 0;
	for (const char *l = first; *l && n < 3; l = strchr(l, '\n') + 1)
		snprintf(fps[n++], 17, "%.16s", l);
	cr_expect_eq(n, 3, "%s", first);
	cr_expect(strcmp(fps[0], fps[1]) && strcmp(fps[0], fps[2]) && strcmp(fps[1], fps[2]), "%s", first);

	/* SARIF 2.1.0: one result per bug, its kind the rule, its file and
	 * line the location, the same fingerprint */
	struct run r = cli_env(0, NULL, "report", "--sarif", a, NULL);
	cr_expect_eq(r.exit_code, 1, "%s", r.err);
	json_t *doc = json_loadb(r.out, strlen(r.out), JSON_READ_FLAGS, NULL);
	cr_assert(doc, "%s", r.out);
	cr_expect_str_eq(json_string_value(json_object_get(doc, "version")) ?: "", "2.1.0");
	const json_t *runs = json_object_get(doc, "runs");
	cr_assert(json_array_size(runs) == 1, "%s", r.out);
	const json_t *results = json_object_get(json_array_get(runs, 0), "results"), *res;
	cr_assert(json_is_array(results), "%s", r.out);
	cr_expect_eq(json_array_size(results), 3, "%s", r.out);
	int found = 0;
	size_t i;
	json_array_foreach(results, i, res) {
		const char *value = json_string_value(json_object_get(json_object_get(res, "partialFingerprints"), "lockdepRcuBug/v1"));
		cr_expect(value && strstr(first, value), "the --json fingerprint: %s\n%s", value ? value : "(none)", first);
		/* json_object_get() of NULL is NULL: a missing level leaves line 0 and uri NULL */
		const json_t *phys = json_object_get(json_array_get(json_object_get(res, "locations"), 0), "physicalLocation");
		double line = json_number_value(json_object_get(json_object_get(phys, "region"), "startLine"));
		const char *uri = json_string_value(json_object_get(json_object_get(phys, "artifactLocation"), "uri"));
		if ((int)line == 19 && !strcmp(uri ?: "", "tests/targets/demo_buggy_cache.c") &&
		    !strcmp(json_string_value(json_object_get(res, "ruleId")) ?: "", "suspicious_rcu"))
			found = 1;
	}
	cr_expect(found, "route_stats's bug at demo_buggy_cache.c:19:\n%s", r.out);
	json_decref(doc);
	run_free(&r);

	/* lines editors parse */
	r = cli_env(0, NULL, "report", "--format=gcc", a, NULL);
	cr_expect_eq(r.exit_code, 1, "%s", r.err);
	cr_expect(strstr(r.out, "tests/targets/demo_buggy_cache.c:19: warning: WARNING: suspicious RCU usage [suspicious_rcu]\n"),
		  "%s", r.out);
	cr_expect_eq(count_of(r.out, "\n"), 3, "one line per bug:\n%s", r.out);
	run_free(&r);
	free(first);
	free(second);
	cli_remove_dir(dir);
}

/* report --baseline OLD.json: only the bugs OLD.json does not have are
 * shown and make the status 1; the known ones are counted. */
Test(cli, report_baseline_shows_only_new_bugs)
{
	char *dir = cli_temp_dir();
	char old_log[4300], new_log[4300], baseline[4300];
	snprintf(old_log, sizeof(old_log), "%s/old.log", dir);
	snprintf(new_log, sizeof(new_log), "%s/new.log", dir);
	snprintf(baseline, sizeof(baseline), "%s/baseline.json", dir);
	/* yesterday: the demo's three bugs; today: the same three and a new one */
	char demo[4200], order[4200];
	snprintf(demo, sizeof(demo), "%s", build_path("targets/demo_buggy_cache.memb"));
	snprintf(order, sizeof(order), "%s", build_path("targets/lock_order.memb"));
	char *demo_argv[] = { demo, NULL }, *order_argv[] = { order, "abba", NULL };
	struct run r = run_program(demo_argv, &(struct run_options){ .preload = 1, .log_path = old_log });
	run_free(&r);
	r = run_program(demo_argv, &(struct run_options){ .preload = 1, .log_path = new_log });
	run_free(&r);
	r = run_program(order_argv, &(struct run_options){ .preload = 1, .log_path = new_log });
	run_free(&r);
	r = cli_env(0, NULL, "report", "--json", old_log, NULL);
	cli_write(baseline, r.out, strlen(r.out));
	run_free(&r);

	r = cli_env(0, NULL, "report", "--json", "--baseline", baseline, new_log, NULL);
	cr_expect_eq(r.exit_code, 1, "a new bug\n%s%s", r.out, r.err);
	json_t *doc = json_loadb(r.out, strlen(r.out), JSON_READ_FLAGS, NULL);
	const json_t *groups = json_object_get(doc, "groups");
	cr_expect_eq(json_array_size(groups), 1, "only the new bug:\n%s", r.out);
	cr_expect_str_eq(json_string_value(json_object_get(json_array_get(groups, 0), "kind")) ?: "",
			 "circular_dependency", "%s", r.out);
	cr_expect_eq((int)json_number_value(json_object_get(doc, "baseline_bugs")), 3, "%s", r.out);
	json_decref(doc);
	run_free(&r);

	/* nothing new: status 0, the known ones said */
	r = cli_env(0, NULL, "report", "--baseline", baseline, old_log, NULL);
	cr_expect_eq(r.exit_code, 0, "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "; 3 known bugs (3 reports) in the baseline, not shown\n"), "%s", r.out);
	run_free(&r);

	/* a baseline that is not one is a usage error */
	r = cli_env(0, NULL, "report", "--baseline", old_log, old_log, NULL);
	cr_expect_eq(r.exit_code, 2, "%s%s", r.out, r.err);
	cr_expect(strstr(r.err, "not the output of lockdep-rcu report --json"), "%s", r.err);
	run_free(&r);
	cli_remove_dir(dir);
}

/* A stripped copy runs and logs "0xADDR [demo+0xoff]" frames; the report
 * names them with addr2line from the unstripped copy (--symbols), and then
 * groups them with the logs of the unstripped program. */
Test(cli, report_symbolizes_module_offset_frames)
{
	char *dir = cli_temp_dir();
	char *cmd, full[4200], stripped[4200];
	snprintf(full, sizeof(full), "%s/full", dir);
	snprintf(stripped, sizeof(stripped), "%s/stripped", dir);
	cr_assert(asprintf(&cmd, "mkdir '%s' '%s' && cp '%s' '%s/demo' && cp '%s' '%s/demo' && strip '%s/demo'",
			   full, stripped, cli_target("demo_buggy_cache.memb"), full,
			   cli_target("demo_buggy_cache.memb"), stripped, stripped) > 0);
	cr_assert_eq(system(cmd), 0);
	free(cmd);
	char program[4300];
	snprintf(program, sizeof(program), "%s/demo", stripped);
	run_into(dir, "logs-stripped", program, NULL);
	char logs[4300];
	snprintf(logs, sizeof(logs), "%s/logs-stripped", dir);

	struct run r = cli_env(0, NULL, "report", "--no-symbolize", logs, NULL);
	cr_expect(strstr(r.out, "\n 0x") && strstr(r.out, " [demo+0x"), "%s", r.out);
	cr_expect_null(strstr(r.out, "route_stats"), "%s", r.out);
	run_free(&r);

	r = cli_env(0, NULL, "report", "--symbols", full, logs, NULL);
	cr_expect_eq(r.exit_code, 1, "exit status %d, expected %d:\n%s%s", r.exit_code, 1, r.out, r.err);
	cr_expect(strstr(r.out, "\n route_stats [demo+0x"), "%s", r.out);
	cr_expect(strstr(r.out, "demo_buggy_cache.c:19\n main [demo+0x"), "%s", r.out);
	cr_expect(strstr(r.out, "\n#2 WARNING: suspicious RCU usage\n   tests/targets/demo_buggy_cache.c:19 suspicious"),
		  "the site line is named too:\n%s", r.out);
	cr_expect(strstr(r.out, "taken at failing_updater [demo+0x"), "%s", r.out);
	run_free(&r);

	program[0] = 0;
	snprintf(program, sizeof(program), "%s/demo", full);
	run_into(dir, "logs-full", program, NULL);
	r = cli_env(0, NULL, "report", "--symbols", full, dir, NULL);
	cr_expect(strstr(r.out, "lockdep-rcu report: 3 bugs (6 reports) in 2 of 2 runs"), "%s", r.out);
	cr_expect_eq(count_of(r.out, "2 reports in 2 of 2 runs"), 3,
		     "symbolized here or by the tracer, the same bug:\n%s", r.out);
	run_free(&r);

	/* without --symbols the stripped module is found (the run record names
	 * it) but has no symbols: the frames stay, and nothing breaks */
	r = cli_env(0, NULL, "report", logs, NULL);
	cr_expect_eq(r.exit_code, 1, "exit status %d, expected %d:\n%s%s", r.exit_code, 1, r.out, r.err);
	cr_expect(strstr(r.out, "[demo+0x"), "%s", r.out);
	run_free(&r);
	cli_remove_dir(dir);
}

static const char weird_splat[] =
	"\n=====\nWARNING: \"quoted\" \\ title \xff\xfe \x1b[31m tab\there\n"
	"lockdep-rcu 0.1, pid 77\n-----\nsite \xc3\xa9 \xed\xa0\x80 ok\n\nstack backtrace:\n"
	"Call Trace:\n f+0x1/0x2 [m] a.c:1\n";

Test(cli, report_json_is_one_valid_document)
{
	char *dir = cli_temp_dir();
	run_into(dir, "r1", cli_target("demo_buggy_cache.memb"), NULL);
	struct run r = cli_env(0, NULL, "report", "--json", dir, NULL);
	cr_expect_eq(r.exit_code, 1, "exit status %d, expected %d:\n%s%s", r.exit_code, 1, r.out, r.err);
	cr_expect(cli_json_valid(r.out), "%s", r.out);
	cr_expect_eq(cli_number_after(r.out, "\"bugs\": "), 3, "%s", r.out);
	cr_expect_eq(cli_number_after(r.out, "\"runs\": "), 1, "%s", r.out);
	cr_expect_eq(count_of(r.out, "\"title\": \"WARNING: suspicious RCU usage\""), 2, "%s", r.out);
	cr_expect(strstr(r.out, "\"kind\": \"locks_held_at_exit\""), "%s", r.out);
	cr_expect(strstr(r.out, "\"function\": \"route_stats\""), "%s", r.out);
	cr_expect(strstr(r.out, "\"splat\": \"\\n=") || strstr(r.out, "\"splat\": \"="), "%s", r.out);
	run_free(&r);

	/* quotes, backslashes, control characters and invalid UTF-8 in a log */
	char weird[4200];
	snprintf(weird, sizeof(weird), "%s/r1/weird.log", dir);
	cli_write(weird, weird_splat, sizeof(weird_splat) - 1);
	r = cli_env(0, NULL, "report", "--json", dir, NULL);
	cr_expect(cli_json_valid(r.out), "%s", r.out);
	cr_expect(strstr(r.out, "\\\"quoted\\\" \\\\ title \\ufffd\\ufffd \\u001b[31m tab\\there"), "%s", r.out);
	cr_expect(strstr(r.out, "site \xc3\xa9 \\ufffd\\ufffd\\ufffd ok"), "valid UTF-8 kept, a surrogate replaced:\n%s",
		  r.out);
	run_free(&r);
	cli_remove_dir(dir);
}

/* Deterministic garbage: the same bytes in every run of the test. */
static void random_bytes(char *buf, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (char)(seed >> 16);
	}
}

Test(cli, report_survives_logs_that_are_not_logs, .timeout = 60)
{
	char *dir = cli_temp_dir();
	run_into(dir, "good", cli_target("demo_buggy_cache.memb"), NULL);
	char goodlog[4300], cmd[9000];
	snprintf(cmd, sizeof(cmd), "ls %s/good/lockdep-rcu.*.log > %s/name", dir, dir);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/name", dir);
	char *name = cli_read(cmd);
	*strchr(name, '\n') = 0;
	snprintf(goodlog, sizeof(goodlog), "%s", name);
	free(name);
	char *good = cli_read(goodlog);
	size_t good_len = strlen(good);
	char bad[4300];
	snprintf(bad, sizeof(bad), "%s/bad", dir);
	mkdir(bad, 0755);
	char path[4400];
#define BAD(file) (snprintf(path, sizeof(path), "%s/%s", bad, file), path)
	cli_write(BAD("empty.log"), "", 0);
	static char noise[200000];
	random_bytes(noise, sizeof(noise), 1);
	cli_write(BAD("binary.log"), noise, sizeof(noise));
	/* cut inside the second report's backtrace: the first one is kept */
	const char *second = strstr(strstr(good, "Call Trace:") + 1, "Call Trace:");
	cli_write(BAD("cut-in-frames.log"), good, (size_t)(second - good) + 30);
	/* cut inside a header, and right after a rule */
	const char *third_title = strstr(good, "\nBUG: ");
	cli_write(BAD("cut-in-header.log"), good, (size_t)(third_title - good) + 8);
	cli_write(BAD("cut-after-call-trace.log"), good, (size_t)(second - good) + 12);
	/* text that only looks like the start of reports */
	static char rules[300000];
	for (size_t i = 0; i + 1 < sizeof(rules); i += 31)
		memcpy(rules + i, "==============================\n", 31 < sizeof(rules) - 1 - i ? 31 : sizeof(rules) - 1 - i);
	cli_write(BAD("rules.log"), rules, strlen(rules));
	static char line[3000000];
	memset(line, 'x', sizeof(line) - 1);
	cli_write(BAD("one-long-line.log"), line, sizeof(line) - 1);
	/* printable garbage mixed into a real log */
	struct { const char *name; size_t at; } mixes[] = { { "mixed1.log", 100 }, { "mixed2.log", 900 } };
	for (int i = 0; i < 2; i++) {
		char *m = malloc(good_len + 5000);
		memcpy(m, good, mixes[i].at);
		static const char pieces[] = " =-\nWARNING: Call Trace:lockdep-rcu 0.1, pid 9\n";
		for (int k = 0; k < 5000; k++)
			m[mixes[i].at + (size_t)k] = pieces[(size_t)(k * 7) % (sizeof(pieces) - 1)];
		memcpy(m + mixes[i].at + 5000, good + mixes[i].at, good_len - mixes[i].at);
		cli_write(BAD(mixes[i].name), m, good_len + 5000);
		free(m);
	}
	symlink(bad, BAD("loop"));   /* symbolic links are not followed */
	mkfifo(BAD("fifo.log"), 0644);   /* nor special files read */

	struct run r = cli_env(30, NULL, "report", bad, NULL);
	cr_expect(r.exit_code == 0 || r.exit_code == 1, "%d: %s", r.exit_code, r.err);
	cr_expect(strstr(r.err, "/bad/empty.log: empty file, skipped\n"), "%s", r.err);
	cr_expect(strstr(r.err, "/bad/binary.log: binary data, not a log: skipped\n"), "%s", r.err);
	cr_expect(strstr(r.err, "/bad/cut-in-frames.log: 1 report cut short (a process killed mid-report?), skipped; "
			 "1 complete report read\n"), "%s", r.err);
	cr_expect(strstr(r.err, "/bad/cut-in-header.log: 1 report cut short"), "%s", r.err);
	cr_expect(strstr(r.err, "/bad/cut-after-call-trace.log: 1 report cut short"), "%s", r.err);
	cr_expect_null(strstr(r.err, "rules.log"), "rules alone are not a report: %s", r.err);
	cr_expect_null(strstr(r.err, "one-long-line.log"), "%s", r.err);
	cr_expect_null(strstr(r.err, "fifo"), "%s", r.err);
	/* one line per note, each naming its file */
	for (const char *l = r.err; *l; l = strchr(l, '\n') + 1)
		cr_expect(!strncmp(l, "lockdep-rcu report: note: ", 26) && strstr(l, "/bad/"), "%.200s", l);
	/* the good parts were read: the mixed logs keep their reports */
	cr_expect(strstr(r.out, "route_stats+"), "%s", r.out);
	run_free(&r);

	/* only garbage: no log among the inputs, an error */
	static const char *const cuts[] = { "mixed1.log", "mixed2.log", "cut-in-frames.log", "cut-in-header.log",
					    "cut-after-call-trace.log" };
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
		cr_assert_eq(unlink(BAD(cuts[i])), 0, "%s", path);
	r = cli_env(30, NULL, "report", "--json", bad, NULL);
	cr_expect_eq(r.exit_code, 2, "%s", r.out);
	cr_expect(cli_json_valid(r.out), "%s", r.out);
	cr_expect(strstr(r.out, "\"notes\": ["), "%s", r.out);
	cr_expect(strstr(r.out, "empty file, skipped"), "%s", r.out);
	run_free(&r);
	free(good);
	cli_remove_dir(dir);
}

Test(cli, report_applies_suppressions)
{
	char *dir = cli_temp_dir();
	run_into(dir, "r1", cli_target("demo_buggy_cache.memb"), NULL);
	run_into(dir, "r2", cli_target("demo_buggy_cache.memb"), NULL);
	char logs[4200], supp[4200];
	snprintf(logs, sizeof(logs), "%s", dir);
	snprintf(supp, sizeof(supp), "%s/supp.txt", dir);
	/* in the walked directory, but not a log: skipped */
	static const char one[] = "# the stats helper is being rewritten\nsuspicious_rcu:route_*\n";
	cli_write(supp, one, sizeof(one) - 1);
	struct run r = cli_env(0, NULL, "report", "--suppressions", supp, logs, NULL);
	cr_expect_eq(r.exit_code, 1, "exit status %d, expected %d:\n%s%s", r.exit_code, 1, r.out, r.err);
	cr_expect(strstr(r.out, "lockdep-rcu report: 2 bugs (4 reports) in 2 of 2 runs, 2 processes, 2 logs; 2 suppressed\n"),
		  "%s", r.out);
	cr_expect_null(strstr(r.out, "route_stats"), "suppressed reports are not printed:\n%s", r.out);
	run_free(&r);

	/* every kind, by a frame of the stack or where a held lock was taken */
	static const char all[] = "suspicious_rcu:route_stats\n*:late_worker\nlocks_held_at_exit:failing_?pdater\n";
	cli_write(supp, all, sizeof(all) - 1);
	r = cli_env(0, NULL, "report", "--json", "--suppressions", supp, logs, NULL);
	cr_expect_eq(r.exit_code, 0, "all suppressed is nothing found:\n%s", r.out);
	cr_expect(cli_json_valid(r.out), "%s", r.out);
	cr_expect_eq(cli_number_after(r.out, "\"bugs\": "), 0, "%s", r.out);
	cr_expect_eq(cli_number_after(r.out, "\"suppressed\": "), 6, "%s", r.out);
	run_free(&r);

	/* a kind that does not apply suppresses nothing */
	static const char other[] = "bad_unlock:route_stats\n";
	cli_write(supp, other, sizeof(other) - 1);
	r = cli_env(0, NULL, "report", "--suppressions", supp, logs, NULL);
	cr_expect(strstr(r.out, "3 bugs (6 reports)"), "%s", r.out);
	cr_expect_null(strstr(r.out, "suppressed"), "%s", r.out);
	run_free(&r);

	static const char malformed[] = "suspicious_rcu:route_stats\n\nno colon here\n";
	cli_write(supp, malformed, sizeof(malformed) - 1);
	r = cli_env(0, NULL, "report", "--suppressions", supp, logs, NULL);
	cr_expect_eq(r.exit_code, 2, "exit status %d, expected %d:\n%s%s", r.exit_code, 2, r.out, r.err);
	char expected[4300];
	snprintf(expected, sizeof(expected), "lockdep-rcu report: %s:3: expected kind:pattern", supp);
	cr_expect(strstr(r.err, expected), "%s", r.err);
	run_free(&r);
	cli_remove_dir(dir);
}

Test(cli, report_adds_what_the_tracer_suppressed)
{
	char *dir = cli_temp_dir();
	char log[4200];
	snprintf(log, sizeof(log), "%s/tracer.log", dir);
	static const char text[] = "SUMMARY: lockdep-rcu: 1 report: 1 bad unlock balance; 4 suppressed\n";
	cli_write(log, text, sizeof(text) - 1);
	struct run r = cli_env(0, NULL, "report", dir, NULL);
	cr_expect_eq(r.exit_code, 0, "exit status %d, expected %d:\n%s%s", r.exit_code, 0, r.out, r.err);
	cr_expect(strstr(r.out, "nothing found in 1 log of 1 run; 4 suppressed"), "%s", r.out);
	run_free(&r);
	cli_remove_dir(dir);
}

/* ---- a thread that ends holding locks: the innermost lock is the bug ------- */

/* The tracer reports a thread end once per innermost acquisition site; which
 * outer locks were held on the way depends on the caller. Two runs of one bug,
 * the thread holding 1 and then 2 locks, are one bug; a lock leaked
 * elsewhere is another. */
Test(cli, report_groups_thread_end_reports_by_the_innermost_lock_site)
{
	char *dir = cli_temp_dir();
	run_into(dir, "one-lock", cli_target("cli_misc.memb"), "leak-cache");
	run_into(dir, "two-locks", cli_target("cli_misc.memb"), "leak-cache-under-table");
	run_into(dir, "other-bug", cli_target("cli_misc.memb"), "leak-table");
	struct run r = cli_env(0, NULL, "report", dir, NULL);
	cr_expect_eq(r.exit_code, 1, "%s", r.err);
	cr_expect(strstr(r.out, "lockdep-rcu report: 2 bugs (3 reports) in 3 of 3 runs, 3 processes, 3 logs\n"),
		  "%s", r.out);
	const char *cache = strstr(r.out, "(cache_lock){mutex} held, taken at refill_cache_or_give_up+");
	cr_assert(cache, "%s", r.out);
	cr_expect(strstr(cache, "\n   2 reports in 2 of 3 runs, 2 processes;"), "%s", r.out);
	cr_expect(strstr(r.out, "(table_lock){mutex} held, taken at table_worker+"), "%s", r.out);
	cr_expect_str_empty(r.err, "%s", r.err);
	run_free(&r);
	cli_remove_dir(dir);
}

/* ---- garbage in a log, unreadable inputs, big logs -------------------------- */

/* The one log a run directory holds (malloc'd path). */
static char *log_of(const char *dir)
{
	DIR *d = opendir(dir);
	cr_assert(d, "%s", dir);
	struct dirent *e;
	char *path = NULL;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "lockdep-rcu.", 12) && cli_ends_with(e->d_name, ".log"))
			cr_assert(asprintf(&path, "%s/%s", dir, e->d_name) > 0);
	closedir(d);
	cr_assert(path, "no log in %s", dir);
	return path;
}

/* A process that crashed leaves its whole reports followed by zeros: the
 * file system had reserved the blocks but not written them. */
Test(cli, report_reads_a_log_around_nul_garbage, .timeout = 60)
{
	char *dir = cli_temp_dir();
	run_into(dir, "good", cli_target("demo_buggy_cache.memb"), NULL);
	char *good_dir = cli_path_in(dir, "good");
	char *good_path = log_of(good_dir);
	char *good = cli_read(good_path);
	size_t good_len = strlen(good);
	cr_assert_eq(splat_count(good), 3, "%s", good);
	/* 65 whole reports: 21 copies of the log and two reports of another */
	const char *third = strstr(good, "\n====");   /* the first report starts the log */
	for (int i = 0; i < 2 && third; i++)
		third = strstr(third + 1, "\n====");
	cr_assert(third, "%s", good);
	size_t two = (size_t)(third - good);
	static char zeros[4096];
	size_t crash_len = 21 * good_len + two;
	char *crash = malloc(crash_len + sizeof(zeros));
	for (int i = 0; i < 21; i++)
		memcpy(crash + (size_t)i * good_len, good, good_len);
	memcpy(crash + 21 * good_len, good, two);
	memcpy(crash + crash_len, zeros, sizeof(zeros));
	char *bad_dir = cli_path_in(dir, "bad");
	mkdir(bad_dir, 0755);
	char *crash_log = cli_path_in(bad_dir, "crash.log");
	cli_write(crash_log, crash, crash_len + sizeof(zeros));

	struct run r = cli_env(30, NULL, "report", crash_log, NULL);
	cr_expect_eq(r.exit_code, 1, "reports were found:\n%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "lockdep-rcu report: 3 bugs (65 reports) in 1 of 1 run, 1 process, 1 log\n"), "%s",
		  r.out);
	char expected[8400];
	snprintf(expected, sizeof(expected),
		 "lockdep-rcu report: note: %s: skipped 4096 bytes of garbage (NUL bytes) at offset %zu\n", crash_log,
		 crash_len);
	cr_expect_str_eq(r.err, expected, "one note line, how much garbage and where");
	run_free(&r);

	/* garbage in the middle, in two places: the text on each side is read;
	 * a report the garbage cuts is counted as cut short */
	char *middle = malloc(2 * good_len + 3 * sizeof(zeros));
	size_t at = 0;
	memcpy(middle + at, good, good_len), at += good_len;
	memcpy(middle + at, zeros, sizeof(zeros)), at += sizeof(zeros);
	size_t cut = (size_t)(strstr(good, "Call Trace:") - good);   /* inside the first report */
	memcpy(middle + at, good, cut), at += cut;
	memcpy(middle + at, zeros, 100), at += 100;
	memcpy(middle + at, good + cut, good_len - cut), at += good_len - cut;
	char *middle_log = cli_path_in(bad_dir, "middle.log");
	cli_write(middle_log, middle, at);
	r = cli_env(30, NULL, "report", middle_log, NULL);
	cr_expect_eq(r.exit_code, 1, "exit status %d, expected %d:\n%s%s", r.exit_code, 1, r.out, r.err);
	cr_expect(strstr(r.out, "3 bugs (5 reports)"), "%s", r.out);
	snprintf(expected, sizeof(expected),
		 "%s: skipped 4196 bytes of garbage (NUL bytes) in 2 places: 4096 at offset %zu, 100 at offset %zu\n",
		 middle_log, good_len, good_len + sizeof(zeros) + cut);
	cr_expect(strstr(r.err, expected), "expected %s in:\n%s", expected, r.err);
	cr_expect(strstr(r.err, "middle.log: 1 report cut short"), "%s", r.err);
	run_free(&r);

	/* a log that is entirely binary is still skipped, and then no log
	 * was given at all: an error, not a clean run */
	char *all_zeros = cli_path_in(bad_dir, "zeros.log");
	cli_write(all_zeros, zeros, sizeof(zeros));
	r = cli_env(30, NULL, "report", all_zeros, NULL);
	cr_expect_eq(r.exit_code, 2, "exit status %d, expected %d:\n%s%s", r.exit_code, 2, r.out, r.err);
	snprintf(expected, sizeof(expected),
		 "lockdep-rcu report: note: %s: binary data, not a log: skipped\n"
		 "lockdep-rcu report: no lockdep-rcu log or run among the inputs\n",
		 all_zeros);
	cr_expect_str_eq(r.err, expected);
	run_free(&r);

	free(all_zeros);
	free(middle_log);
	free(middle);
	free(crash_log);
	free(bad_dir);
	free(crash);
	free(good);
	free(good_path);
	free(good_dir);
	cli_remove_dir(dir);
}

/* A path named on the command line that cannot be read is an error (2),
 * said in one line naming it, before anything is read; special files are
 * refused, never read (a FIFO with no writer would block, /dev/zero never
 * ends). The tests run as root, who may read any file: these fail for root
 * too. */
Test(cli, report_refuses_unreadable_paths_on_the_command_line, .timeout = 60)
{
	char *dir = cli_temp_dir();
	run_into(dir, "good", cli_target("cli_misc.memb"), "bug");
	char *good = cli_path_in(dir, "good");
	char *fifo = cli_path_in(dir, "fifo.log");
	cr_assert_eq(mkfifo(fifo, 0644), 0);
	char *socket_path = cli_path_in(dir, "socket.log");
	int sock = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", socket_path);
	cr_assert_eq(bind(sock, (struct sockaddr *)&addr, sizeof(addr)), 0, "%s", socket_path);
	char *file = cli_path_in(dir, "file.log");
	cli_write(file, "x\n", 2);
	char *under_file = cli_path_in(dir, "file.log/lockdep-rcu.1.log");
	struct { const char *path, *reason; } cases[] = {
		{ fifo, "a FIFO, not a regular file" },
		{ "/dev/zero", "a character device, not a regular file" },
		{ socket_path, "a socket, not a regular file" },
		{ under_file, "Not a directory" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct run r = cli_env(10, NULL, "report", good, cases[i].path, NULL);
		char expected[8400];
		snprintf(expected, sizeof(expected), "lockdep-rcu report: %s: cannot read: %s\n", cases[i].path,
			 cases[i].reason);
		cr_expect_eq(r.exit_code, 2, "%s: %d", cases[i].path, r.exit_code);
		cr_expect_str_eq(r.err, expected, "%s", cases[i].path);
		cr_expect_str_empty(r.out, "no report from part of the input: %s", r.out);
		run_free(&r);
	}
	/* in a directory that is walked, special files are skipped silently */
	struct run r = cli_env(10, NULL, "report", dir, NULL);
	cr_expect_eq(r.exit_code, 1, "%s", r.err);
	cr_expect_null(strstr(r.err, "fifo"), "%s", r.err);
	cr_expect_null(strstr(r.err, "socket"), "%s", r.err);
	run_free(&r);
	close(sock);
	free(under_file);
	free(file);
	free(socket_path);
	free(fifo);
	free(good);
	cli_remove_dir(dir);
}

/* A log larger than 64 MiB is read whole, in bounded memory: a daemon's
 * output with a report every few MiB, and other reports at its end. */
Test(cli, report_reads_a_log_of_70_mib_whole_in_bounded_memory, .timeout = 60)
{
	char *dir = cli_temp_dir();
	run_into(dir, "misc", cli_target("cli_misc.memb"), "bug");
	run_into(dir, "demo", cli_target("demo_buggy_cache.memb"), NULL);
	char *misc_dir = cli_path_in(dir, "misc"), *demo_dir = cli_path_in(dir, "demo");
	char *misc_path = log_of(misc_dir), *demo_path = log_of(demo_dir);
	char *misc = cli_read(misc_path), *demo = cli_read(demo_path);
	/* 1 MiB of the program's own output */
	size_t block_len = 1 << 20;
	char *block = malloc(block_len);
	for (size_t i = 0; i < block_len; i += 64) {
		char line[64];
		int n = snprintf(line, sizeof(line), "worker %02zu: request %08zu served in 0.%03zu ms", i % 17, i / 64,
				 i % 1000);
		memset(line + n, ' ', sizeof(line) - (size_t)n);
		line[63] = '\n';
		memcpy(block + i, line, sizeof(line));
	}
	char *big_dir = cli_path_in(dir, "big");
	mkdir(big_dir, 0755);
	char *big = cli_path_in(big_dir, "daemon.log");
	FILE *f = fopen(big, "wb");
	cr_assert(f);
	/* 70 MiB of output; every 5 MiB a report that spans a MiB boundary (the
	 * command reads 1 MiB at a time) */
	size_t written = 0;
	for (size_t mib = 1; mib <= 70; mib++) {
		size_t target = mib << 20, fill = target - written - (mib % 5 == 1 ? 300 : 0);
		cr_assert_eq(fwrite(block, 1, fill, f), fill);
		written += fill;
		if (mib % 5 == 1) {
			fputs(misc, f);
			written += strlen(misc);
		}
	}
	fputs(demo, f);   /* past 64 MiB */
	cr_assert_eq(fclose(f), 0);
	struct stat st;
	cr_assert_eq(stat(big, &st), 0);
	cr_assert_gt(st.st_size, 70 << 20);

	struct run r = cli_env(30, NULL, "report", big, NULL);
	cr_expect_eq(r.exit_code, 1, "exit status %d, expected %d:\n%s%s", r.exit_code, 1, r.out, r.err);
	cr_expect(strstr(r.out, "lockdep-rcu report: 4 bugs (17 reports) in 1 of 1 run, 2 processes, 1 log\n"),
		  "the reports past 64 MiB too:\n%.2000s", r.out);
	cr_expect(strstr(r.out, "\n   14 reports in 1 of 1 run, 1 process; "), "%.2000s", r.out);
	cr_expect_str_empty(r.err, "nothing skipped: %s", r.err);
	struct rusage ru;
	cr_assert_eq(getrusage(RUSAGE_CHILDREN, &ru), 0);
	cr_log_info("largest child: %ld KiB", ru.ru_maxrss);
	cr_expect_lt(ru.ru_maxrss, 40 * 1024, "memory bounded, not the log's size: %ld KiB", ru.ru_maxrss);
	run_free(&r);
	unlink(big);
	free(big);
	free(big_dir);
	free(block);
	free(misc);
	free(demo);
	free(misc_path);
	free(demo_path);
	free(misc_dir);
	free(demo_dir);
	cli_remove_dir(dir);
}

/* ---- a stripped program: a symbol names only the addresses inside it ------- */

/* The first line of a command's output (malloc'd), "" when none. */
static char *first_line_of(const char *command)
{
	FILE *p = popen(command, "r");
	cr_assert(p, "%s", command);
	char line[4096] = "";
	if (!fgets(line, sizeof(line), p))
		line[0] = 0;
	pclose(p);
	line[strcspn(line, "\n")] = 0;
	return strdup(line);
}

#define STRIPPED "symbolize_target_stripped"

/* A report whose frames are offsets in build/tests/symbolize_target_stripped
 * (stripped of .symtab and DWARF, linked -rdynamic: .dynsym has main and
 * its size), as a text log and, with records, naming the module's path. */
static void write_stripped_report(const char *dir, const char *module, unsigned long inside,
				  unsigned long outside, int with_records)
{
	char *text, *path;
	cr_assert(asprintf(&text,
			   "\n=============================\nWARNING: suspicious RCU usage\nlockdep-rcu 0.1, pid 4242\n"
			   "-----------------------------\n0x55550000%lx [" STRIPPED "+0x%lx] suspicious rcu_dereference() usage!\n\n"
			   "stack backtrace:\nCPU: 0 PID: 4242 TID: 4242 Comm: stripped\nCall Trace:\n"
			   " 0x55550000%lx [" STRIPPED "+0x%lx]\n 0x55550000%lx [" STRIPPED "+0x%lx]\n",
			   outside, outside, outside, outside, inside, inside) > 0);
	cr_assert(asprintf(&path, "%s/lockdep-rcu.4242.log", dir) > 0);
	cli_write(path, text, strlen(text));
	free(text);
	if (with_records) {
		char *record, *records_path;
		cr_assert(asprintf(&record,
				   "{\"v\":1,\"kind\":\"suspicious_rcu\",\"title\":\"WARNING: suspicious RCU usage\","
				   "\"pid\":4242,\"tid\":4242,\"comm\":\"stripped\",\"time\":1.0,"
				   "\"site\":{\"pc\":\"0x55550000%lx\",\"module\":\"%s\",\"offset\":\"0x%lx\"},"
				   "\"message\":\"0x55550000%lx [" STRIPPED "+0x%lx] suspicious rcu_dereference() usage!\","
				   "\"frames\":[{\"pc\":\"0x55550000%lx\",\"module\":\"%s\",\"offset\":\"0x%lx\"},"
				   "{\"pc\":\"0x55550000%lx\",\"module\":\"%s\",\"offset\":\"0x%lx\"}],"
				   "\"bug\":\"0123456789abcdef\"}\n",
				   outside, module, outside, outside, outside, outside, module, outside, inside, module,
				   inside) > 0);
		cr_assert(asprintf(&records_path, "%s.jsonl", path) > 0);
		cli_write(records_path, record, strlen(record));
		free(record);
		free(records_path);
	}
	free(path);
}

/* addr2line names any address after the nearest symbol before it: in a
 * stripped program, an exported function kilobytes away. The report keeps
 * such an address raw; one inside the function is named. */
Test(cli, report_names_an_address_only_inside_its_symbol)
{
	char module[4096];
	cr_assert(realpath(build_path("tests/symbolize_target_stripped"), module), "build it with make");
	char *command;
	cr_assert(asprintf(&command, "nm -D -S --defined-only '%s' | awk '$4 == \"main\" { print $1, $2 }'", module) > 0);
	char *extent = first_line_of(command);
	free(command);
	unsigned long start = 0, size = 0;
	cr_assert_eq(sscanf(extent, "%lx %lx", &start, &size), 2, "main in .dynsym: '%s'", extent);
	free(extent);
	/* return addresses: the report looks up the byte before */
	unsigned long inside = start + 0x11, outside = start + size + 0x41;
	cr_assert(asprintf(&command, "addr2line -f -e '%s' 0x%lx", module, outside - 1) > 0);
	char *named = first_line_of(command);
	free(command);
	cr_assert_str_eq(named, "main", "the trap the report must not fall into: addr2line calls 0x%lx main", outside - 1);
	free(named);

	for (int with_records = 0; with_records < 2; with_records++) {
		char *dir = cli_temp_dir();
		write_stripped_report(dir, module, inside, outside, with_records);
		char symbols[4096];
		snprintf(symbols, sizeof(symbols), "%s", build_path("tests"));
		struct run r = cli_env(0, NULL, "report", "--symbols", symbols, dir, NULL);
		cr_expect_eq(r.exit_code, 1, "%s", r.err);
		char raw[256], in_main[256];
		snprintf(raw, sizeof(raw), "\n 0x55550000%lx [symbolize_target_stripped+0x%lx]\n", outside, outside);
		snprintf(in_main, sizeof(in_main), "\n main [symbolize_target_stripped+0x%lx]\n", inside);
		cr_expect(strstr(r.out, raw), "%s: the address past main stays raw:\n%s",
			  with_records ? "records" : "text", r.out);
		cr_expect(strstr(r.out, in_main), "%s: the address inside main is named:\n%s",
			  with_records ? "records" : "text", r.out);
		cr_expect_eq(count_of(r.out, "main ["), 1, "main names no other frame:\n%s", r.out);
		run_free(&r);
		cli_remove_dir(dir);
	}
}

/* The same in a real run: the demo built -rdynamic and stripped, so .dynsym
 * holds main and _start and the static functions before main have no
 * symbol. The tracer's records and the report leave them raw (addr2line
 * would call them _start); main is named. */
Test(cli, stripped_program_static_functions_stay_raw_in_records_and_report)
{
	char *dir = cli_temp_dir(), *command;
	cr_assert(asprintf(&command,
			   "cc -O1 -g -pthread -Iinclude -Itests/targets -rdynamic tests/targets/demo_buggy_cache.c "
			   "-o '%s/demo' -lurcu-memb -lurcu-common && strip '%s/demo'", dir, dir) > 0);
	cr_assert_eq(system(command), 0, "%s", command);
	free(command);
	char program[4200];
	snprintf(program, sizeof(program), "%s/demo", dir);
	run_into(dir, "logs", program, NULL);
	char logs[4300];
	snprintf(logs, sizeof(logs), "%s/logs", dir);
	char *log = log_of(logs), *records_path;
	cr_assert(asprintf(&records_path, "%s.jsonl", log) > 0);
	char *records = cli_read(records_path);
	cr_assert(records, "%s", records_path);
	/* the deref site: a static function, "0x... [demo+0xOFF]" */
	struct run r = cli_env(0, NULL, "report", logs, NULL);
	const char *site = strstr(r.out, "\n#2 WARNING: suspicious RCU usage\n   0x");
	if (!site)
		site = strstr(r.out, "\n#1 WARNING: suspicious RCU usage\n   0x");
	cr_assert(site, "the site stays raw:\n%s", r.out);
	unsigned long offset = 0;
	const char *plus = strstr(site, "[demo+0x");
	cr_assert(plus && sscanf(plus, "[demo+0x%lx]", &offset) == 1, "%s", r.out);
	cr_assert(asprintf(&command, "addr2line -f -e '%s' 0x%lx", program, offset - 1) > 0);
	char *named = first_line_of(command);
	free(command);
	cr_expect_str_neq(named, "??", "precondition: addr2line names it from .dynsym (%s)", named);
	char *wrong;
	cr_assert(asprintf(&wrong, "%s [demo+0x", named) > 0);
	cr_expect_null(strstr(r.out, wrong), "the report does not call it %s:\n%s", named, r.out);
	cr_expect(strstr(r.out, "\n main+0x"), "main, in .dynsym, is named:\n%s", r.out);
	char frame[128];
	snprintf(frame, sizeof(frame), "\"offset\":\"0x%lx\"}", offset);
	cr_expect(strstr(records, frame), "the record's frame has no function: %s", records);
	cr_expect(strstr(records, "\"function\":\"main\""), "%s", records);
	free(wrong);
	free(named);
	run_free(&r);
	free(records);
	free(records_path);
	free(log);
	cli_remove_dir(dir);
}
