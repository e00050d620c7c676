/* lockdep-rcu report's "lock statistics" section: the tracer's lock_stat
 * records (lock_stat=1) summed over processes and runs by class name, the
 * most contended classes first, the kernel's columns, the call site that
 * waited most under each. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "harness.h"
#include "cli_helpers.h"

/* One lock_stat record as the tracer writes it. */
static char *lock_stat_record(int pid, const char *class, unsigned long contentions, double wait_min, double wait_max,
			      double wait_total, unsigned long acquisitions, double hold_total, const char *points)
{
	char *r;
	cr_assert(asprintf(&r,
			   "{\"v\":1,\"kind\":\"lock_stat\",\"pid\":%d,\"comm\":\"prog\",\"time\":1796322000.5,"
			   "\"class\":\"%s\",\"lock_kind\":\"lock\",\"con_bounces\":%lu,\"contentions\":%lu,"
			   "\"waittime_min\":%.2f,\"waittime_max\":%.2f,\"waittime_total\":%.2f,\"acq_bounces\":1,"
			   "\"acquisitions\":%lu,\"holdtime_min\":0.10,\"holdtime_max\":9.00,\"holdtime_total\":%.2f,"
			   "\"contention_points\":[%s],\"contending_points\":[]}\n",
			   pid, class, contentions / 2, contentions, wait_min, wait_max, wait_total, acquisitions,
			   hold_total, points) > 0);
	return r;
}

static char *point(unsigned long count, const char *function, int line)
{
	char *p;
	cr_assert(asprintf(&p,
			   "{\"count\":%lu,\"site\":{\"pc\":\"0x55550000%04x\",\"module\":\"/usr/lib/prog\","
			   "\"offset\":\"0x%04x\",\"function\":\"%s\",\"function_offset\":\"0x10\","
			   "\"file\":\"src/stats.c\",\"line\":%d}}",
			   count, line, line, function, line) > 0);
	return p;
}

/* A run directory: a log (the human table) and its records. */
static void write_run(const char *dir, const char *run, int pid, char **records, size_t n)
{
	char path[4400];
	snprintf(path, sizeof(path), "%s/%s", dir, run);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/lockdep-rcu.%d.log", dir, run, pid);
	static const char table[] = "lock_stat version 0.4\n(the table)\n";
	cli_write(path, table, sizeof(table) - 1);
	strcat(path, ".jsonl");
	FILE *f = fopen(path, "wb");
	cr_assert(f);
	for (size_t i = 0; i < n; i++) {
		fputs(records[i], f);
		free(records[i]);
	}
	fclose(f);
}

static const char *line_with(const char *text, const char *needle)
{
	const char *p = strstr(text, needle);
	return p ? p : "";
}

Test(cli_lock_stat, report_sums_classes_over_processes_most_contended_first)
{
	char *dir = cli_temp_dir();
	char *a = point(30, "update_stats", 42), *b = point(5, "reset_stats", 77), *c = point(20, "update_stats", 42);
	char *both_a, *both_b;
	cr_assert(asprintf(&both_a, "%s,%s", a, b) > 0);
	cr_assert(asprintf(&both_b, "%s", c) > 0);
	/* stats_lock fought over in two processes; 12 classes in all, some never contended */
	char *run1[13], *run2[2];
	size_t n1 = 0;
	run1[n1++] = lock_stat_record(100, "stats_lock", 35, 0.5, 90.25, 400, 1000, 300, both_a);
	run1[n1++] = lock_stat_record(100, "private_lock", 0, 0, 0, 0, 500, 50, "");
	for (int i = 0; i < 10; i++) {
		char name[32];
		snprintf(name, sizeof(name), "bucket_lock_%02d", i);
		/* equal contentions: the wait decides */
		run1[n1++] = lock_stat_record(100, name, i < 5 ? 3 : 0, 1, 2, 10.0 + i, 10, 1, "");
	}
	size_t n2 = 0;
	run2[n2++] = lock_stat_record(200, "stats_lock", 20, 0.25, 50, 100, 3000, 600, both_b);
	run2[n2++] = lock_stat_record(200, "queue_lock", 50, 2, 3, 150, 60, 6, "");
	write_run(dir, "run1", 100, run1, n1);
	write_run(dir, "run2", 200, run2, n2);
	free(a), free(b), free(c), free(both_a), free(both_b);

	struct run r = cli_env(0, NULL, "report", dir, NULL);
	cr_expect_eq(r.exit_code, 0, "statistics are no bug:\n%s", r.out);
	cr_expect_str_empty(r.err, "%s", r.err);
	cr_expect(strstr(r.out, "lockdep-rcu report: nothing found in 2 logs of 2 runs\n"), "%s", r.out);
	cr_expect(strstr(r.out, "\nlock statistics: 10 of 13 lock classes in 2 processes, most contended first"),
		  "%s", r.out);
	cr_expect(strstr(r.out, "class name    contentions waittime-total   waittime-avg   waittime-max   acquisitions "
			 "holdtime-total   holdtime-avg\n"), "the kernel's columns:\n%s", r.out);
	/* summed: 55 contentions, 500 us waited (avg 9.09), max 90.25; 4000
	 * acquisitions held 900 us (avg 0.23) */
	cr_expect(strstr(r.out, "                              stats_lock             55         500.00           9.09"
			 "          90.25           4000         900.00           0.23\n"), "%s", r.out);
	/* its top contention point, counted in both processes: 50 */
	cr_expect(strstr(r.out, "                              stats_lock             50 update_stats+0x10 [prog] "
			 "src/stats.c:42\n"), "%s", r.out);
	const char *stats = line_with(r.out, "  stats_lock "), *queue = line_with(r.out, "  queue_lock ");
	cr_expect(*stats && *queue && stats < queue, "55 contentions before 50:\n%s", r.out);
	const char *b4 = line_with(r.out, "bucket_lock_04 "), *b0 = line_with(r.out, "bucket_lock_00 ");
	cr_expect(*b4 && *b0 && b4 < b0, "same contentions: more wait first:\n%s", r.out);
	cr_expect_null(strstr(r.out, "private_lock"), "the top 10 only:\n%s", r.out);
	run_free(&r);

	r = cli_env(0, NULL, "report", "--json", dir, NULL);
	cr_expect(cli_json_valid(r.out), "%s", r.out);
	const char *js = strstr(r.out, "\"name\": \"stats_lock\"");
	cr_assert(js, "%s", r.out);
	cr_expect(strstr(js, "\"processes\": 2,\n        \"con_bounces\": 27,\n        \"contentions\": 55,\n"
			 "        \"waittime_min\": 0.25,\n        \"waittime_max\": 90.25,\n"
			 "        \"waittime_total\": 500.00,\n        \"waittime_avg\": 9.09,"), "%s", js);
	cr_expect(strstr(js, "\"top_contention_point\": {\n          \"count\": 50,"), "%s", js);
	cr_expect(strstr(r.out, "\"lock_statistics\": {\n    \"classes\": 13,\n    \"processes\": 2,"), "%s", r.out);
	run_free(&r);
	cli_remove_dir(dir);
}

/* No lock_stat records, no section; a record that lacks its counts is
 * skipped with a note. */
Test(cli_lock_stat, no_section_without_records)
{
	char *dir = cli_temp_dir();
	char *none[1] = { strdup("{\"v\":1,\"kind\":\"lock_stat\",\"pid\":1,\"class\":\"x\"}\n") };
	write_run(dir, "run", 1, none, 1);
	struct run r = cli_env(0, NULL, "report", dir, NULL);
	cr_expect_null(strstr(r.out, "lock statistics"), "%s", r.out);
	cr_expect(strstr(r.err, "a line that is not a record skipped"), "%s", r.err);
	run_free(&r);
	r = cli_env(0, NULL, "report", "--json", dir, NULL);
	cr_expect_null(strstr(r.out, "lock_statistics"), "%s", r.out);
	run_free(&r);
	cli_remove_dir(dir);
}

/* The tracer's own records (lock_stat=1): two threads fight for one mutex,
 * each has a private one; two runs summed. */
Test(cli_lock_stat, real_runs_contended_mutex_first_private_one_never, .timeout = 60)
{
	char *dir = cli_temp_dir();
	for (int i = 0; i < 2; i++) {
		char out[4300];
		snprintf(out, sizeof(out), "%s/run%d", dir, i);
		struct run r = cli_env(30, NULL, "run", "-o", out, "--option", "lock_stat=1", "--",
				       cli_target("lock_contention.memb"), "two-threads-one-mutex", NULL);
		cr_assert_eq(r.exit_code, 0, "%s", r.err);
		run_free(&r);
	}
	struct run r = cli_env(0, NULL, "report", dir, NULL);
	cr_expect_eq(r.exit_code, 0, "%s", r.out);
	const char *section = strstr(r.out, "\nlock statistics: ");
	cr_assert(section, "%s", r.out);
	cr_expect(strstr(section, " in 2 processes"), "%s", section);
	unsigned long contentions = 0, acquisitions = 0;
	const char *shared = strstr(section, "shared_lock "), *private = strstr(section, "private_lock ");
	cr_assert(shared && private, "%s", section);
	cr_expect(shared < private, "the fought-over mutex first:\n%s", section);
	double total, avg, max;
	cr_assert_eq(sscanf(shared, "shared_lock %lu %lf %lf %lf %lu", &contentions, &total, &avg, &max, &acquisitions), 5,
		     "%s", section);
	cr_expect_gt(contentions, 0, "%s", section);
	cr_expect_eq(acquisitions, 2 * 4000, "both runs summed:\n%s", section);
	cr_expect(strstr(section, "shared_lock ") && strstr(strstr(section, "shared_lock ") + 1, "shared_lock "),
		  "its top contention point under it:\n%s", section);
	cr_assert_eq(sscanf(private, "private_lock %lu %lf %lf %lf %lu", &contentions, &total, &avg, &max, &acquisitions),
		     5, "%s", section);
	cr_expect_eq(contentions, 0, "nobody else takes it:\n%s", section);
	cr_expect_eq(acquisitions, 2 * 2000, "%s", section);
	run_free(&r);
	r = cli_env(0, NULL, "report", "--json", dir, NULL);
	cr_expect(cli_json_valid(r.out), "%s", r.out);
	cr_expect(strstr(r.out, "\"name\": \"shared_lock\""), "%s", r.out);
	run_free(&r);
	cli_remove_dir(dir);
}
