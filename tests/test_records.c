/* The machine-readable records the tracer writes beside its log: one per
 * human report, in the same order, saying the same thing (title, pid, tid,
 * the Call Trace's functions, the locks), every line one JSON object, and a
 * bug hash that is the same across runs of the same bug and differs between
 * bugs. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>
#include "harness.h"
#include "cli_helpers.h"
#include "records.h"

struct logged {
	char *dir;
	char *log;       /* the human log */
	char *records;   /* <log>.jsonl */
	struct run run;
};

static struct logged run_logged(const char *target, const char *scenario)
{
	struct logged l = { .dir = cli_temp_dir() };
	char options[4300], path[4200];
	snprintf(options, sizeof(options), "log_path=%s/log", l.dir);
	/* some of the bugs are real deadlocks: what matters is written before */
	struct run_options o = { .preload = 1, .options = options, .timeout = 3 };
	l.run = run_target(target, "memb", scenario, &o);
	snprintf(path, sizeof(path), "%s/log", l.dir);
	l.log = cli_read(path);
	snprintf(path, sizeof(path), "%s/log.jsonl", l.dir);
	l.records = cli_read(path);
	return l;
}

static void logged_free(struct logged *l)
{
	free(l->log);
	free(l->records);
	run_free(&l->run);
	cli_remove_dir(l->dir);
}

/* The string value of "key" in a record from `from` on, malloc'd, or NULL. */
static char *field(const char *from, const char *end, const char *key)
{
	char quoted[64];
	snprintf(quoted, sizeof(quoted), "\"%s\":", key);
	const char *p = strstr(from, quoted);
	if (!p || (end && p >= end))
		return NULL;
	p += strlen(quoted);
	if (*p != '"') {
		size_t n = strcspn(p, ",}");
		return strndup(p, n);
	}
	p++;
	size_t n = 0;
	while (p[n] && p[n] != '"')
		n += p[n] == '\\' ? 2 : 1;
	return strndup(p, n);
}

/* Line n (from 0) of text, malloc'd. */
static char *line_of(const char *text, int n)
{
	for (; n > 0 && text; n--) {
		text = strchr(text, '\n');
		if (text)
			text++;
	}
	if (!text || !*text)
		return NULL;
	return strndup(text, strcspn(text, "\n"));
}

/* The title of the n-th report of a human log (from 0). */
static char *human_title(const char *log, int n)
{
	const char *p = log;
	for (int i = 0; i <= n; i++) {
		p = strstr(p, "\n=====");
		if (!p)
			return NULL;
		p++;
	}
	return line_of(p, 1);
}

/* The human report n (from 0): from its ===== line to the next one. */
static char *human_report(const char *log, int n)
{
	const char *p = log;
	for (int i = 0; i <= n; i++) {
		p = strstr(p, "\n=====");
		if (!p)
			return NULL;
		p++;
	}
	const char *end = strstr(p, "\n=====");
	return strndup(p, end ? (size_t)(end - p) : strlen(p));
}

/* "f1 f2 f3": the functions of a report's Call Trace. */
static void human_trace(const char *report, char *out, size_t size)
{
	out[0] = 0;
	const char *p = strstr(report, "Call Trace:\n");
	cr_assert(p, "%s", report);
	p += strlen("Call Trace:\n");
	while (*p == ' ') {
		size_t n = strcspn(p + 1, "+ \n");
		size_t used = strlen(out);
		snprintf(out + used, size - used, "%s%.*s", used ? " " : "", (int)n, p + 1);
		p = strchr(p, '\n');
		if (!p)
			break;
		p++;
	}
}

/* The same, from a record's frames. */
static void record_trace(const char *record, char *out, size_t size)
{
	out[0] = 0;
	const char *p = strstr(record, "\"frames\":[");
	cr_assert(p, "%s", record);
	const char *end = strstr(p, "],\"bug\"");
	while ((p = strstr(p, "{\"pc\":")) && p < end) {
		const char *next = strstr(p + 1, "{\"pc\":");
		if (!next || next > end)
			next = end;
		char *function = field(p, next, "function");
		size_t used = strlen(out);
		snprintf(out + used, size - used, "%s%s", used ? " " : "", function ? function : "?");
		free(function);
		p = next;
	}
}

static void expect_records_match(const char *target, const char *scenario, int reports)
{
	struct logged l = run_logged(target, scenario);
	cr_assert(l.log, "%s %s: no log; stderr: %s", target, scenario, l.run.err);
	cr_assert(l.records, "%s %s: no records beside the log", target, scenario);
	cr_expect_eq(splat_count(l.log), reports, "%s", l.log);
	cr_expect_eq(count_of(l.records, "\n"), reports, "one record per report:\n%s", l.records);
	for (int i = 0; i < reports; i++) {
		char *record = line_of(l.records, i);
		cr_assert(record, "record %d of %s %s", i, target, scenario);
		cr_expect(cli_json_valid(record), "one JSON object: %s", record);
		char *title = field(record, NULL, "title"), *expected = human_title(l.log, i);
		cr_expect_str_eq(title, expected, "%s %s report %d", target, scenario, i);
		char *pid = field(record, NULL, "pid"), pid_line[64];
		snprintf(pid_line, sizeof(pid_line), "pid %s, report %d\n", pid, i + 1);
		char *report = human_report(l.log, i);
		cr_expect(strstr(report, pid_line), "pid %s:\n%s", pid, report);
		char *tid = field(record, NULL, "tid"), tid_text[64];
		snprintf(tid_text, sizeof(tid_text), "TID: %s ", tid);
		cr_expect(strstr(report, tid_text), "tid %s:\n%s", tid, report);
		char human[2048], machine[2048];
		human_trace(report, human, sizeof(human));
		record_trace(record, machine, sizeof(machine));
		cr_expect_str_eq(machine, human, "the same Call Trace\n%s\n%s", record, report);
		char *message = field(record, NULL, "message");
		cr_expect(message && *message && strstr(report, message), "message %s in\n%s", message, report);
		char *bug = field(record, NULL, "bug");
		cr_expect(bug && strlen(bug) == 16, "a bug hash: %s", record);
		free(record), free(title), free(expected), free(pid), free(tid), free(report), free(message), free(bug);
	}
	logged_free(&l);
}

Test(records, each_report_has_its_record_saying_the_same)
{
	expect_records_match("deref_outside_reader", "bug", 1);
	expect_records_match("lock_order", "abba", 1);
	expect_records_match("lock_order", "two-independent-cycles", 2);
	expect_records_match("lock_order", "rcu-grace-period-deadlock", 1);
	expect_records_match("lock_unlock_balance", "bug-mutex-never-locked", 1);
	expect_records_match("lock_unlock_balance", "bug-mutex-other-thread", 1);
	expect_records_match("lock_recursive", "bug-mutex", 1);
	expect_records_match("lock_destroy_held", "bug-heap-mutex", 1);
	expect_records_match("thread_end", "bug-return-locked", 1);
	expect_records_match("sync_in_reader", "bug-synchronize", 1);
	expect_records_match("rcu_unlock_balance", "bug", 1);
}

/* The locks a record names, as "role:name" in order. */
static void record_locks(const char *record, char *out, size_t size)
{
	out[0] = 0;
	const char *p = strstr(record, "\"locks\":[");
	if (!p)
		return;
	while ((p = strstr(p, "{\"role\":"))) {
		char *role = field(p, NULL, "role"), *name = field(p, NULL, "name");
		size_t used = strlen(out);
		snprintf(out + used, size - used, "%s%s:%s", used ? " " : "", role, name);
		free(role), free(name);
		p++;
	}
}

Test(records, name_the_locks_of_the_report_in_their_roles)
{
	struct logged l = run_logged("lock_order", "abba");
	char locks[1024];
	record_locks(l.records, locks, sizeof(locks));
	cr_expect_str_eq(locks, "acquiring:A holding:B chain:A chain:B held:B", "%s", l.records);
	cr_expect(strstr(l.records, "\"acquired_at\":{\"pc\":"), "where B was taken: %s", l.records);
	logged_free(&l);

	l = run_logged("thread_end", "bug-return-locked");
	record_locks(l.records, locks, sizeof(locks));
	cr_expect(!strncmp(locks, "leaked:", 7), "%s", l.records);
	logged_free(&l);

	l = run_logged("lock_destroy_held", "bug-heap-mutex");
	record_locks(l.records, locks, sizeof(locks));
	cr_expect(strstr(locks, "freed:"), "%s", l.records);
	logged_free(&l);
}

/* Each frame names its module by the path the process mapped and its ELF
 * offset, what addr2line takes. */
Test(records, frames_carry_module_path_and_file_offset)
{
	struct logged l = run_logged("deref_outside_reader", "bug");
	char *site = strstr(l.records, "\"site\":");
	cr_assert(site, "%s", l.records);
	char *module = field(site, NULL, "module"), *offset = field(site, NULL, "offset");
	cr_assert(module && offset, "%s", l.records);
	char *program = realpath(build_path("targets/deref_outside_reader.memb"), NULL);
	cr_expect_str_eq(module, program);
	free(program);
	char command[8500];
	snprintf(command, sizeof(command), "addr2line -f -e %s %s", module, offset);
	FILE *p = popen(command, "r");
	char function[256] = "";
	cr_assert(fgets(function, sizeof(function), p));
	pclose(p);
	char *record_function = field(site, NULL, "function");
	cr_expect(!strncmp(function, record_function, strlen(record_function)), "%s vs %s", function,
		  record_function);
	free(module), free(offset), free(record_function);
	logged_free(&l);
}

Test(records, bug_hash_is_the_same_bug_across_runs_and_differs_between_bugs)
{
	struct logged a = run_logged("lock_order", "abba");
	struct logged b = run_logged("lock_order", "abba");
	struct logged c = run_logged("lock_order", "abbcca");
	struct logged d = run_logged("deref_outside_reader", "bug");
	char *ha = field(a.records, NULL, "bug"), *hb = field(b.records, NULL, "bug");
	char *hc = field(c.records, NULL, "bug"), *hd = field(d.records, NULL, "bug");
	cr_assert(ha && hb && hc && hd);
	cr_expect_str_eq(ha, hb, "two runs (two address layouts) of one bug");
	cr_expect_str_neq(ha, hc);
	cr_expect_str_neq(ha, hd);
	free(ha), free(hb), free(hc), free(hd);
	logged_free(&a), logged_free(&b), logged_free(&c), logged_free(&d);
}

/* On stderr (no log_path) there is no records file to write, and the text
 * is unchanged: records never leak into the human output. */
Test(records, only_beside_a_log_file_never_in_the_text)
{
	struct logged l = run_logged("lock_order", "abba");
	cr_expect(!strstr(l.log, "{\"v\":"), "%s", l.log);
	logged_free(&l);
	struct run_options o = { .preload = 1 };
	struct run r = run_target("lock_order", "memb", "abba", &o);
	cr_expect(!strstr(r.err, "{\"v\":"), "%s", r.err);
	run_free(&r);
}

/* records_path: the records in a file of their own wherever the reports go
 * (stderr here), one per process with %p, made at the first record only. */
Test(records, records_path_keeps_them_apart_from_the_text)
{
	char *dir = cli_temp_dir(), options[4300];
	snprintf(options, sizeof(options), "records_path=%s/rec.%%p.jsonl", dir);
	struct run_options o = { .preload = 1, .options = options };
	/* three processes, one report each: the program, a forked child, and
	 * a forked child that executes the program again */
	struct run r = run_target("cli_misc", "memb", "family", &o);
	cr_expect_eq(splat_count(r.err), 3, "the reports stay on stderr:\n%s", r.err);
	cr_expect_eq(cli_count_files(dir, "rec."), 3, "one records file per process:\n%s", r.err);
	DIR *d = opendir(dir);
	struct dirent *e;
	int records = 0;
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, "rec.", 4))
			continue;
		char *path = cli_path_in(dir, e->d_name), pid[32];
		char *text = cli_read(path);
		char *kind = text ? field(text, NULL, "kind") : NULL;
		cr_expect(kind && !strcmp(kind, "suspicious_rcu"), "%s: %s", e->d_name, text ? text : "(none)");
		char *recorded_pid = text ? field(text, NULL, "pid") : NULL;
		snprintf(pid, sizeof(pid), "rec.%s.jsonl", recorded_pid ? recorded_pid : "?");
		cr_expect_str_eq(e->d_name, pid, "the file of the process that wrote it");
		records += text && strchr(text, '\n') && !strchr(strchr(text, '\n') + 1, '\n');
		free(kind);
		free(recorded_pid);
		free(text);
		free(path);
	}
	if (d)
		closedir(d);
	cr_expect_eq(records, 3, "one record in each file");
	run_free(&r);
	/* a quiet program leaves no file */
	r = run_target("lock_order", "memb", "ab-many", &o);
	cr_expect_eq(r.exit_code, 0, "%s", r.err);
	cr_expect_eq(cli_count_files(dir, "rec."), 3, "no records file for a quiet process");
	run_free(&r);
	/* with a log too, the records go to records_path and not beside the log */
	snprintf(options, sizeof(options), "log_path=%s/log:records_path=%s/apart.jsonl", dir, dir);
	r = run_target("lock_order", "memb", "abba", &o);
	cr_expect_eq(cli_count_files(dir, "log.jsonl"), 0, "nothing beside the log");
	cr_expect_eq(cli_count_files(dir, "apart.jsonl"), 1, "%s", r.err);
	run_free(&r);
	cli_remove_dir(dir);
}

/* Each report is numbered in its process, in its header line and in its
 * record: the n-th record and the n-th report of the log pair exactly. */
Test(records, reports_are_numbered_in_header_and_record)
{
	struct run_options o = { .preload = 1 };
	struct run_records rr = run_target_records("lock_order", "memb", "two-independent-cycles", &o);
	expect_records(&rr, "circular_dependency", 2);
	for (size_t i = 0; i < rr.count; i++) {
		const struct record *r = &rr.records[i];
		cr_expect_eq(r->seq, (long)i + 1, "record %zu has seq %ld\n%s", i, r->seq, rr.context);
		char header[128];
		snprintf(header, sizeof(header), "%s\nlockdep-rcu ", r->title);
		const char *at = rr.log;
		for (size_t k = 0; k <= i && at; k++)
			if ((at = strstr(at, header)))
				at += strlen(header);
		cr_assert(at, "report %zu's header in the log\n%s", i + 1, rr.context);
		char expected[64];
		snprintf(expected, sizeof(expected), ", pid %ld, report %zu\n", r->pid, i + 1);
		const char *eol = strchr(at, '\n');
		cr_expect(eol && strstr(at, expected) == eol - strlen(expected) + 1,
			  "header of report %zu ends with \"%s\"\n%s", i + 1, expected, rr.context);
	}
	run_records_free(&rr);
}

/* Whether buf holds only whole, shortest-form UTF-8 sequences (no
 * surrogates, nothing above U+10FFFF): what a strict JSON parser takes. */
static int valid_utf8(const char *buf)
{
	const unsigned char *s = (const unsigned char *)buf;
	while (*s) {
		unsigned c = *s, n, cp, min;
		if (c < 0x80) {
			s++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			n = 2, cp = c & 0x1f, min = 0x80;
		else if ((c & 0xf0) == 0xe0)
			n = 3, cp = c & 0x0f, min = 0x800;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 4, cp = c & 0x07, min = 0x10000;
		else
			return 0;
		for (unsigned i = 1; i < n; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		s += n;
	}
	return 1;
}

/* Lines of text that start with prefix. */
static int lines_starting(const char *text, const char *prefix)
{
	int n = 0;
	size_t len = strlen(prefix);
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		n += !strncmp(l, prefix, len);
	return n;
}

/* A thread name is the program's to choose, any bytes but NUL. The record
 * stays strict UTF-8 JSON (what is not UTF-8 is U+FFFD), and no name can
 * put a line of its own into the text log: control characters are shown
 * escaped (\x0a), so a title in a name is no title. */
Test(records, thread_names_that_are_not_utf8_or_hold_a_newline_stay_one_valid_line)
{
	struct run_records plain = run_target_records("thread_names", "memb", "plain",
						      &(struct run_options){ .preload = 1, .timeout = 30 });
	expect_records(&plain, "suspicious_rcu", 1);
	const struct record *r = record_nth(&plain, "suspicious_rcu", 0);
	cr_expect(r && !strcmp(r->comm ?: "", "reader-1"), "%s", plain.context);
	run_records_free(&plain);

	struct run_records bytes = run_target_records("thread_names", "memb", "not-utf8",
						      &(struct run_options){ .preload = 1, .timeout = 30 });
	expect_records(&bytes, "suspicious_rcu", 1);
	cr_expect(valid_utf8(bytes.jsonl), "the records are not UTF-8:\n%s", bytes.jsonl);
	r = record_nth(&bytes, "suspicious_rcu", 0);
	cr_expect(r && !strcmp(r->comm ?: "", "r\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd(x\xef\xbf\xbd\xef\xbf\xbd"),
		  "every byte that is not UTF-8 one U+FFFD\n%s", bytes.context);
	run_records_free(&bytes);

	struct run_records title = run_target_records("thread_names", "memb", "newline-and-title",
						      &(struct run_options){ .preload = 1, .timeout = 30 });
	expect_records(&title, "suspicious_rcu", 1);
	r = record_nth(&title, "suspicious_rcu", 0);
	cr_expect(r && !strcmp(r->comm ?: "", "r\nBUG: fake"), "the record keeps the name\n%s",
		  title.context);
	cr_expect_eq(lines_starting(title.log, "BUG:"), 0, "a name made a title line:\n%s", title.log);
	cr_expect_eq(lines_starting(title.log, "WARNING:"), 1, "%s", title.log);
	cr_expect(strstr(title.log, "Comm: r\\x0aBUG: fake\n"), "the name, escaped:\n%s", title.log);
	run_records_free(&title);
}
