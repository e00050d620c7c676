/* lockdep-rcu report reading the tracer's records (`<log>.jsonl`): the same
 * grouping from records as from the text of the same logs, records cut
 * short or damaged, logs cut short beside whole records, frames named from
 * the module path a process had mapped, and thread ends grouped by their
 * innermost lock from records too. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "harness.h"
#include "cli_helpers.h"

/* target.memb scenario under the preload, its log at dir/name (records at
 * dir/name.jsonl). */
static void log_target_options(const char *dir, const char *name, const char *target, const char *scenario,
			       const char *more)
{
	mkdir(dir, 0755);
	char options[4400];
	snprintf(options, sizeof(options), "log_path=%s/%s%s", dir, name, more);
	struct run_options o = { .preload = 1, .options = options, .timeout = 5 };
	struct run r = run_target(target, "memb", scenario, &o);
	char *log = cli_path_in(dir, name);
	cr_assert_eq(access(log, R_OK), 0, "%s %s wrote no log: %s", target, scenario ? scenario : "", r.err);
	free(log);
	run_free(&r);
}

static void log_target(const char *dir, const char *name, const char *target, const char *scenario)
{
	log_target_options(dir, name, target, scenario, "");
}

/* Removes every *.jsonl under dir (one level of subdirectories). */
static void remove_records(const char *dir)
{
	char *command;
	cr_assert(asprintf(&command, "find '%s' -name '*.jsonl' -delete", dir) > 0);
	cr_assert_eq(system(command), 0);
	free(command);
}

/* The lines of a JSON report that say what the groups are. */
static char *group_lines(const char *json)
{
	size_t len = 0;
	char *out = calloc(1, strlen(json) + 1);
	for (const char *l = json; *l; l += strcspn(l, "\n"), l += *l == '\n') {
		size_t n = strcspn(l, "\n");
		const char *t = l + strspn(l, " ");
		if (!strncmp(t, "\"title\":", 8) || !strncmp(t, "\"kind\":", 7) || !strncmp(t, "\"site\":", 7) ||
		    !strncmp(t, "\"reports\":", 10) || !strncmp(t, "\"runs\":", 7) || !strncmp(t, "\"processes\":", 12) ||
		    !strncmp(t, "\"fingerprint\":", 14) || !strncmp(t, "\"file\":", 7) || !strncmp(t, "\"line\":", 7) ||
		    !strncmp(t, "\"role\":", 7) || !strncmp(t, "\"name\":", 7) || !strncmp(t, "\"at\":", 5)) {
			memcpy(out + len, l, n);
			len += n;
			out[len++] = '\n';
		}
	}
	return out;
}

/* ---- (a) the same grouping from records and from text --------------------- */

Test(cli_records, report_groups_alike_from_records_and_from_text, .timeout = 90)
{
	char *dir = cli_temp_dir();
	char *run1 = cli_path_in(dir, "run1"), *run2 = cli_path_in(dir, "run2");
	/* deadlocks: they end right after their report (halt_on_error) */
	static const struct { const char *target, *scenario; int deadlocks; } every_kind[] = {
		{ "demo_buggy_cache", NULL, 0 },
		{ "lock_order", "abba", 0 },
		{ "lock_order", "two-independent-cycles", 0 },
		{ "lock_order", "rcu-grace-period-deadlock", 0 },
		{ "lock_unlock_balance", "bug-mutex-never-locked", 0 },
		{ "lock_unlock_balance", "bug-mutex-other-thread", 0 },
		{ "rcu_unlock_balance", "bug", 0 },
		{ "lock_recursive", "bug-mutex", 1 },
		{ "lock_destroy_held", "bug-heap-mutex", 0 },
		{ "thread_end", "bug-return-locked", 0 },
		{ "cli_misc", "leak-cache", 0 },
		{ "cli_misc", "leak-cache-under-table", 0 },
		{ "cli_misc", "leak-table", 0 },
		{ "sync_in_reader", "bug-synchronize", 1 },
		{ "header_checks", "assert-held-bug", 0 },
		{ "header_checks", "deref-outside-reader", 0 },
		{ "signal_handlers", "bug-in-handler-after-unblocked-use", 0 },
		{ "signal_handlers", "bug-unblocked-use-after-handler", 0 },
		{ "signal_handlers", "bug-safe-lock-takes-unsafe-lock", 0 },
		{ "signal_handlers", "bug-unsafe-use-of-lock-a-safe-lock-takes", 0 },
		{ "signal_handlers", "bug-dependency-joins-safe-and-unsafe-locks", 0 },
	};
	for (size_t i = 0; i < sizeof(every_kind) / sizeof(every_kind[0]); i++) {
		char name[64];
		snprintf(name, sizeof(name), "log.%zu", i);
		log_target_options(run1, name, every_kind[i].target, every_kind[i].scenario,
				   every_kind[i].deadlocks ? ":halt_on_error=1" : "");
	}
	/* a second run of some: counts above one */
	log_target(run2, "log.0", "demo_buggy_cache", NULL);
	log_target(run2, "log.1", "lock_order", "abba");
	log_target(run2, "log.2", "cli_misc", "leak-cache-under-table");
	log_target(run2, "log.3", "signal_handlers", "bug-in-handler-after-unblocked-use");
	log_target(run2, "log.4", "signal_handlers", "bug-safe-lock-takes-unsafe-lock");

	struct run text = cli_env(0, NULL, "report", dir, NULL), json = cli_env(0, NULL, "report", "--json", dir, NULL);
	cr_expect_eq(text.exit_code, 1, "%s", text.err);
	cr_expect_str_empty(text.err, "no notes about whole logs: %s", text.err);
	cr_assert(cli_json_valid(json.out), "%s", json.out);
	int reports = cli_number_after(json.out, "\"reports\": ");
	cr_expect_geq(reports, 20, "%s", text.out);
	cr_expect_eq(cli_number_after(json.out, "\"from_records\": "), reports, "every report told by its record:\n%s",
		     json.out);
	cr_expect_geq(cli_number_after(json.out, "\"bugs\": "), 15, "%s", text.out);
	for (const char *kind = "suspicious_rcu\0bad_unlock\0recursive_locking\0held_lock_freed\0"
				"locks_held_at_exit\0circular_dependency\0lockdep_assertion\0"
				"inconsistent_lock_state\0irq_lock_inversion\0";
	     *kind; kind += strlen(kind) + 1) {
		char member[96];
		snprintf(member, sizeof(member), "\"kind\": \"%s\"", kind);
		cr_expect(strstr(json.out, member), "a bug of kind %s:\n%s", kind, text.out);
	}

	remove_records(dir);
	struct run text_only = cli_env(0, NULL, "report", dir, NULL);
	struct run json_only = cli_env(0, NULL, "report", "--json", dir, NULL);
	cr_expect_eq(cli_number_after(json_only.out, "\"from_records\": "), 0, "%s", json_only.out);
	cr_expect_str_eq(text_only.out, text.out, "the same report from the text alone");
	char *groups = group_lines(json.out), *groups_only = group_lines(json_only.out);
	cr_expect_str_eq(groups_only, groups, "the same groups, counts and order in JSON");
	free(groups);
	free(groups_only);
	run_free(&text);
	run_free(&json);
	run_free(&text_only);
	run_free(&json_only);
	free(run1);
	free(run2);
	cli_remove_dir(dir);
}

/* ---- (iii) a thread end is one bug per innermost lock, from records too --- */

Test(cli_records, thread_ends_group_by_innermost_lock_from_records)
{
	char *dir = cli_temp_dir();
	char *one = cli_path_in(dir, "one"), *two = cli_path_in(dir, "two"), *other = cli_path_in(dir, "other");
	log_target(one, "log", "cli_misc", "leak-cache");
	log_target(two, "log", "cli_misc", "leak-cache-under-table");
	log_target(other, "log", "cli_misc", "leak-table");
	/* one bug, whatever else is held under it: the tracer hashes only the
	 * innermost leaked lock, so the two leaks of cache_lock hash the same */
	char *records_one = cli_path_in(one, "log.jsonl"), *records_two = cli_path_in(two, "log.jsonl");
	char *a = cli_read(records_one), *b = cli_read(records_two);
	cr_assert(a && b);
	const char *ha = strstr(a, "\"bug\":\""), *hb = strstr(b, "\"bug\":\"");
	cr_assert(ha && hb);
	cr_expect(!strncmp(ha, hb, 24), "the tracer's hashes are one: %.24s %.24s", ha, hb);
	char *records_other = cli_path_in(other, "log.jsonl"), *c = cli_read(records_other);
	const char *hc = c ? strstr(c, "\"bug\":\"") : NULL;
	cr_assert(hc);
	cr_expect(strncmp(ha, hc, 24), "another innermost lock, another bug: %.24s %.24s", ha, hc);
	free(c), free(records_other);
	for (int with_records = 1; with_records >= 0; with_records--) {
		if (!with_records)
			remove_records(dir);
		struct run r = cli_env(0, NULL, "report", "--json", dir, NULL);
		cr_expect_eq(cli_number_after(r.out, "\"bugs\": "), 2, "%s", r.out);
		cr_expect_eq(cli_number_after(r.out, "\"from_records\": "), with_records ? 3 : 0, "%s", r.out);
		const char *cache = strstr(r.out, "(cache_lock){mutex} held, taken at refill_cache_or_give_up+");
		cr_assert(cache, "%s", r.out);
		cr_expect_eq(cli_number_after(cache, "\"reports\": "), 2, "one bug, two reports:\n%s", r.out);
		run_free(&r);
	}
	free(a), free(b), free(records_one), free(records_two);
	free(one), free(two), free(other);
	cli_remove_dir(dir);
}

/* ---- (b) records and logs cut short ------------------------------------------ */

/* The offsets of the line starts of text (0 and after each newline). */
static size_t line_starts(const char *text, size_t *starts, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; text[i] && n < max; i++)
		if (i == 0 || text[i - 1] == '\n')
			starts[n++] = i;
	return n;
}

/* A crash mid-write leaves the last record cut: each cut at many byte
 * positions (around every line boundary, and all through the records)
 * still gives every report, the whole records told by them and the rest
 * read from the log's text, and says a record was cut. */
Test(cli_records, records_cut_at_any_byte_still_give_every_report, .timeout = 90)
{
	char *dir = cli_temp_dir();
	char *source = cli_path_in(dir, "source");
	log_target(source, "log", "demo_buggy_cache", NULL);
	char *log_path = cli_path_in(source, "log"), *records_path = cli_path_in(source, "log.jsonl");
	char *log = cli_read(log_path), *records = cli_read(records_path);
	cr_assert(log && records);
	size_t len = strlen(records);
	size_t starts[16];
	size_t lines = line_starts(records, starts, 16);
	cr_assert_eq(lines, 3, "three records:\n%s", records);
	size_t cuts[64], ncuts = 0;
	for (size_t i = 1; i < lines; i++) {   /* around each boundary */
		cuts[ncuts++] = starts[i] - 1;
		cuts[ncuts++] = starts[i];
		cuts[ncuts++] = starts[i] + 1;
	}
	for (size_t k = 1; k < 40; k++)     /* all through */
		cuts[ncuts++] = len * k / 40;
	cuts[ncuts++] = 0;
	cuts[ncuts++] = 1;
	cuts[ncuts++] = len - 1;
	size_t mid_line = 0, whole_records = 0;
	char *cut_dir = cli_path_in(dir, "cut");
	mkdir(cut_dir, 0755);
	for (size_t i = 0; i < ncuts; i++) {
		char name[64];
		snprintf(name, sizeof(name), "log.%02zu", i);
		char *copy = cli_path_in(cut_dir, name), *copy_records;
		cli_write(copy, log, strlen(log));
		cr_assert(asprintf(&copy_records, "%s.jsonl", copy) > 0);
		cli_write(copy_records, records, cuts[i]);
		/* cut right before a newline, the record is whole: read, no note */
		int at_boundary = cuts[i] == 0 || records[cuts[i] - 1] == '\n' || records[cuts[i]] == '\n';
		mid_line += !at_boundary;
		for (size_t l = 1; l <= lines; l++)
			whole_records += (l < lines ? starts[l] : len) - 1 <= cuts[i];
		free(copy);
		free(copy_records);
	}
	struct run r = cli_env(60, NULL, "report", "--json", cut_dir, NULL);
	cr_assert(cli_json_valid(r.out), "%s", r.out);
	cr_expect_eq(cli_number_after(r.out, "\"reports\": "), (int)(3 * ncuts), "every report of every log:\n%.3000s",
		     r.out);
	cr_expect_eq(cli_number_after(r.out, "\"bugs\": "), 3, "%.3000s", r.out);
	cr_expect_eq(cli_number_after(r.out, "\"from_records\": "), (int)whole_records,
		     "each whole record tells its report:\n%.3000s", r.out);
	cr_expect_eq((size_t)count_of(r.err, "a record cut short (a process killed while writing it?), skipped"), mid_line,
		     "a note for each record cut mid-line:\n%s", r.err);
	run_free(&r);
	free(cut_dir);

	/* The log cut (inside the second report, inside the first, empty)
	 * beside whole records: every report, told by its record; the note
	 * says so. */
	const char *second = strstr(log + 1, "\n====");
	cr_assert(second, "%s", log);
	size_t log_cuts[] = { (size_t)(second - log) + 40, 60, 0 };
	for (size_t i = 0; i < sizeof(log_cuts) / sizeof(log_cuts[0]); i++) {
		char *one = cli_path_in(dir, "logcut");
		mkdir(one, 0755);
		char *copy = cli_path_in(one, "log"), *copy_records = cli_path_in(one, "log.jsonl");
		cli_write(copy, log, log_cuts[i]);
		cli_write(copy_records, records, len);
		r = cli_env(0, NULL, "report", "--json", one, NULL);
		cr_expect_eq(cli_number_after(r.out, "\"reports\": "), 3, "log cut at %zu:\n%s%s", log_cuts[i], r.out, r.err);
		cr_expect_eq(cli_number_after(r.out, "\"from_records\": "), 3, "%s", r.out);
		cr_expect(strstr(r.err, "in the log: read from their record"), "log cut at %zu: %s", log_cuts[i], r.err);
		cr_expect_null(strstr(r.err, "skipped;"), "nothing lost: %s", r.err);
		run_free(&r);
		/* the text view still names the bug and where */
		r = cli_env(0, NULL, "report", one, NULL);
		cr_expect(strstr(r.out, "(update_lock){mutex} held, taken at failing_updater+"), "%s", r.out);
		cr_expect(strstr(r.out, "demo_buggy_cache.c:19 suspicious rcu_dereference() usage!"), "%s", r.out);
		run_free(&r);
		free(copy);
		free(copy_records);
		cli_remove_dir(one);
	}
	free(log), free(records), free(log_path), free(records_path), free(source);
	cli_remove_dir(dir);
}

/* ---- (c) lines that are not records ---------------------------------------- */

Test(cli_records, lines_that_are_not_records_are_skipped_with_a_note)
{
	char *dir = cli_temp_dir();
	char *source = cli_path_in(dir, "source");
	log_target(source, "log", "demo_buggy_cache", NULL);
	char *records_path = cli_path_in(source, "log.jsonl");
	char *records = cli_read(records_path);
	cr_assert(records);
	size_t starts[16];
	cr_assert_eq(line_starts(records, starts, 16), 3);
	/* garbage between the first and the second record, and at the end */
	static const char garbage[] =
		"garbage\n"
		"{\"v\":1,\"kind\":\n"                          /* not JSON */
		"[1,2,3]\n"                                     /* JSON, not an object */
		"{\"v\":2,\"kind\":\"suspicious_rcu\"}\n"     /* another version */
		"{\"kind\":\"suspicious_rcu\",\"title\":\"x\"}\n"   /* no version */
		"\"\\ud800\"\n"                                 /* a lone surrogate */
		"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n";
	size_t garbage_lines = 7;
	char nul_line[] = "{\"v\":1,\0\"kind\":\"x\"}\n";
	size_t first = starts[1];
	FILE *f = fopen(records_path, "wb");
	cr_assert(f);
	fwrite(records, 1, first, f);
	fwrite(garbage, 1, sizeof(garbage) - 1, f);
	fwrite(nul_line, 1, sizeof(nul_line) - 1, f);
	fputs(records + first, f);
	fputs("{\"v\":1,\"kind\":\"suspicious_rcu\",\"pid\":1}\n", f);   /* a report without a title */
	fclose(f);
	struct run r = cli_env(0, NULL, "report", "--json", source, NULL);
	cr_expect_eq(r.exit_code, 1, "%s", r.err);
	cr_expect_eq(cli_number_after(r.out, "\"reports\": "), 3, "%s", r.out);
	cr_expect_eq(cli_number_after(r.out, "\"from_records\": "), 3, "the good records are read:\n%s", r.out);
	char expected[128];
	snprintf(expected, sizeof(expected), "log.jsonl: %zu lines that are not records skipped\n", garbage_lines + 2);
	cr_expect(strstr(r.err, expected), "expected '%s' in:\n%s", expected, r.err);
	run_free(&r);
	free(records);
	free(records_path);
	free(source);
	cli_remove_dir(dir);
}

/* A records file met in a walk or named is not a log of its own: its log
 * is read once, with it; alone (its log gone), it is read for itself. */
Test(cli_records, a_records_file_is_the_twin_of_its_log)
{
	char *dir = cli_temp_dir();
	log_target(dir, "log", "demo_buggy_cache", NULL);
	char *log = cli_path_in(dir, "log"), *records = cli_path_in(dir, "log.jsonl");
	struct run r = cli_env(0, NULL, "report", "--json", dir, log, records, NULL);
	cr_expect_eq(cli_number_after(r.out, "\"reports\": "), 3, "read once:\n%s", r.out);
	cr_expect_eq(cli_number_after(r.out, "\"logs\": "), 1, "%s", r.out);
	cr_expect_str_empty(r.err, "%s", r.err);
	run_free(&r);
	cr_assert_eq(unlink(log), 0);
	r = cli_env(0, NULL, "report", dir, NULL);
	cr_expect(strstr(r.out, "3 bugs (3 reports) in 1 of 1 run, 1 process, 1 log\n"), "%s", r.out);
	cr_expect(strstr(r.err, "its log is missing: 3 reports read from their records"), "%s", r.err);
	cr_expect(strstr(r.out, "(update_lock){mutex} held, taken at failing_updater+"), "%s", r.out);
	run_free(&r);
	free(log);
	free(records);
	cli_remove_dir(dir);
}

/* ---- (ii) a program deep in a directory no search covers ------------------- */

/* A stripped program in DIR/usr/lib/x86_64-linux-gnu/foo/libexec/, not on
 * PATH, run directly under the preload (no run record names it); its debug
 * file, next to it, came after the run (a -dbg package installed later):
 * the tracer could name nothing, addr2line can, given where the program
 * is. Its records say where: the path the process had it mapped at. */
Test(cli_records, report_finds_a_program_by_the_path_the_process_mapped, .timeout = 60)
{
	char *dir = cli_temp_dir(), *command;
	char *libexec = cli_path_in(dir, "usr/lib/x86_64-linux-gnu/foo/libexec");
	char *program = cli_path_in(libexec, "food"), *logs = cli_path_in(dir, "logs");
	cr_assert(asprintf(&command,
			   "mkdir -p '%s' && cp '%s' '%s' && cd '%s' && objcopy --only-keep-debug food food.debug && "
			   "strip food && objcopy --add-gnu-debuglink=food.debug food && mv food.debug '%s/'",
			   libexec, cli_target("demo_buggy_cache.memb"), program, libexec, dir) > 0);
	cr_assert_eq(system(command), 0, "%s", command);
	free(command);
	char options[4400];
	snprintf(options, sizeof(options), "LOCKDEP_RCU_OPTIONS=log_path=%s/log.%%p", logs);
	char preload[4400], tracer[4096];
	cr_assert(realpath(build_path("liblockdep-rcu.so"), tracer));
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", tracer);
	mkdir(logs, 0755);
	char *argv[] = { "/usr/bin/env", preload, options, program, NULL };
	struct run_options o = { .timeout = 10 };
	struct run ran = run_program(argv, &o);
	cr_assert_eq(ran.exit_code, 66, "%s", ran.err);
	run_free(&ran);
	/* the debug file arrives */
	cr_assert(asprintf(&command, "mv '%s/food.debug' '%s/'", dir, libexec) > 0);
	cr_assert_eq(system(command), 0);
	free(command);

	struct run r = cli_env(0, NULL, "report", logs, NULL);
	cr_expect_eq(r.exit_code, 1, "%s", r.err);
	cr_expect(strstr(r.out, "\n route_stats [food+0x"), "named from the mapped path:\n%s\n%s", r.out, r.err);
	cr_expect(strstr(r.out, "\n#2 WARNING: suspicious RCU usage\n   tests/targets/demo_buggy_cache.c:19 suspicious"),
		  "the site too:\n%s", r.out);
	cr_expect(strstr(r.out, "taken at failing_updater [food+0x"), "%s", r.out);
	cr_expect_null(strstr(r.err, "not found"), "%s", r.err);
	run_free(&r);

	/* Text alone: the run record names the program (run -o); the debug
	 * file again only after the run */
	char *run_logs = cli_path_in(dir, "run-logs");
	cr_assert(asprintf(&command, "mv '%s/food.debug' '%s/'", libexec, dir) > 0);
	cr_assert_eq(system(command), 0);
	free(command);
	r = cli_env(0, NULL, "run", "-o", run_logs, "--", program, NULL);
	cr_assert_eq(r.exit_code, 66, "%s", r.err);
	run_free(&r);
	cr_assert(asprintf(&command, "mv '%s/food.debug' '%s/'", dir, libexec) > 0);
	cr_assert_eq(system(command), 0);
	free(command);
	remove_records(run_logs);
	r = cli_env(0, NULL, "report", run_logs, NULL);
	cr_expect(strstr(r.out, "\n route_stats [food+0x"), "named from the run record's program:\n%s\n%s", r.out, r.err);
	run_free(&r);
	free(run_logs);
	free(libexec);
	free(program);
	free(logs);
	cli_remove_dir(dir);
}

/* ---- (d) each text with the record of its number ---------------------------- */

/* A report's text is told by the record of its process and number ("pid
 * 123, report 2" in its header line, "seq":2 in its record), not by the
 * next record of its title: two reports of one title in one process, their
 * records swapped or the first one lost, still give each bug its own
 * report, as the whole records do. */
Test(cli_records, each_text_is_paired_with_the_record_of_its_number, .timeout = 60)
{
	char *dir = cli_temp_dir();
	char *source = cli_path_in(dir, "source");
	log_target(source, "log", "lock_order", "two-independent-cycles");
	char *log_path = cli_path_in(source, "log"), *records_path = cli_path_in(source, "log.jsonl");
	char *log = cli_read(log_path), *records = cli_read(records_path);
	cr_assert(log && records);
	size_t starts[16];
	cr_assert_eq(line_starts(records, starts, 16), 2, "two records:\n%s", records);
	cr_assert_eq(count_of(records, "\"kind\":\"circular_dependency\""), 2, "of one title:\n%s", records);
	cr_assert(strstr(log, ", report 2\n"), "numbered in the header line:\n%s", log);
	size_t len = strlen(records);
	char *one = cli_path_in(dir, "one");
	mkdir(one, 0755);
	char *copy = cli_path_in(one, "log"), *copy_records = cli_path_in(one, "log.jsonl");
	cli_write(copy, log, strlen(log));
	cli_write(copy_records, records, len);
	struct run whole = cli_env(0, NULL, "report", one, NULL), whole_json = cli_env(0, NULL, "report", "--json", one, NULL);
	cr_assert(strstr(whole.out, "2 bugs (2 reports) in 1 of 1 run, 1 process, 1 log\n"), "%s", whole.out);
	/* the second record first, then the first; the second alone */
	char *swapped = malloc(len + 1);
	cr_assert(swapped);
	memcpy(swapped, records + starts[1], len - starts[1]);
	memcpy(swapped + len - starts[1], records, starts[1]);
	swapped[len] = 0;
	static const char *const what[] = { "records swapped", "the first record lost" };
	for (int i = 0; i < 2; i++) {
		if (i == 0)
			cli_write(copy_records, swapped, len);
		else
			cli_write(copy_records, records + starts[1], len - starts[1]);
		struct run r = cli_env(0, NULL, "report", one, NULL);
		cr_expect_str_eq(r.out, whole.out, "%s: the same report", what[i]);
		run_free(&r);
		r = cli_env(0, NULL, "report", "--json", one, NULL);
		if (i == 0)   /* each group's frames are its own report's */
			cr_expect_str_eq(r.out, whole_json.out, "%s: the same JSON", what[i]);
		cr_expect_eq(cli_number_after(r.out, "\"bugs\": "), 2, "%s:\n%s", what[i], r.out);
		cr_expect_eq(cli_number_after(r.out, "\"from_records\": "), 2 - i, "%s:\n%s", what[i], r.out);
		run_free(&r);
	}
	run_free(&whole);
	run_free(&whole_json);
	free(swapped), free(copy), free(copy_records), free(one);
	free(log), free(records), free(log_path), free(records_path), free(source);
	cli_remove_dir(dir);
}
