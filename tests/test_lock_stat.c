/* lock_stat=1: the kernel's /proc/lock_stat table at exit, per class, with
 * contention points; a record per class beside a log; nothing at all when
 * the option is off. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdlib.h>
#include "harness.h"
#include "cli_helpers.h"

struct stat_row {
	unsigned long con_bounces, contentions, acq_bounces, acquisitions;
	double wait_min, wait_max, wait_total, wait_avg, hold_min, hold_max, hold_total, hold_avg;
};

/* The row "<name>:" of the table; 0 when there is none. */
static int stat_row(const char *text, const char *name, struct stat_row *r)
{
	char label[128];
	snprintf(label, sizeof(label), " %s:", name);
	const char *p = strstr(text, label);
	if (!p)
		return 0;
	return sscanf(p + strlen(label), "%lu %lu %lf %lf %lf %lf %lu %lu %lf %lf %lf %lf", &r->con_bounces,
		      &r->contentions, &r->wait_min, &r->wait_max, &r->wait_total, &r->wait_avg, &r->acq_bounces,
		      &r->acquisitions, &r->hold_min, &r->hold_max, &r->hold_total, &r->hold_avg) == 12;
}

static struct run run_contention(const char *scenario, const char *options)
{
	struct run_options o = { .preload = 1, .options = options, .timeout = 30 };
	return run_target("lock_contention", "memb", scenario, &o);
}

Test(lock_stat, two_threads_fighting_for_one_mutex_and_a_private_one)
{
	struct run r = run_contention("two-threads-one-mutex", "lock_stat=1");
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "shared 4000 private 2000"), "%s", r.out);
	cr_expect(strstr(r.err, "lock_stat version 0.4\n"), "%s", r.err);
	cr_expect(strstr(r.err, "                              class name    con-bounces    contentions   "
				"waittime-min   waittime-max waittime-total   waittime-avg    acq-bounces   "
				"acquisitions   holdtime-min   holdtime-max holdtime-total   holdtime-avg\n"),
		  "the kernel's header: %s", r.err);
	struct stat_row shared, private;
	cr_assert(stat_row(r.err, "shared_lock", &shared), "%s", r.err);
	cr_assert(stat_row(r.err, "private_lock", &private), "%s", r.err);
	cr_expect_eq(shared.acquisitions, 4000);
	cr_expect_gt(shared.contentions, 0, "two threads fought for it:\n%s", r.err);
	cr_expect_geq(shared.wait_total, shared.wait_max);
	cr_expect_geq(shared.wait_max, shared.wait_min);
	cr_expect_gt(shared.wait_min, 0);
	/* held 20 us each time */
	cr_expect_geq(shared.hold_min, 19.0, "%s", r.err);
	cr_expect_geq(shared.hold_total, 4000 * 19.0, "%s", r.err);
	cr_expect_eq(private.acquisitions, 2000);
	cr_expect_eq(private.contentions, 0, "nobody else takes it:\n%s", r.err);
	cr_expect_eq(private.wait_total, 0);
	/* the contention point: where the waiters called pthread_mutex_lock */
	cr_expect(strstr(r.err, "                             shared_lock "), "%s", r.err);
	cr_expect(strstr(r.err, "] take_shared+"), "contention point named:\n%s", r.err);
	cr_expect(strstr(r.err, "tests/targets/lock_contention.c:29"), "%s", r.err);
	/* most contended first */
	cr_expect_lt(strstr(r.err, " shared_lock:"), strstr(r.err, " private_lock:"));
	run_free(&r);
}

Test(lock_stat, reader_and_writer_sides_apart)
{
	struct run r = run_contention("readers-and-a-writer", "lock_stat=1");
	cr_assert_eq(r.exit_code, 0, "%s", r.err);
	struct stat_row w, rd;
	cr_assert(stat_row(r.err, "table_lock-W", &w), "%s", r.err);
	cr_assert(stat_row(r.err, "table_lock-R", &rd), "%s", r.err);
	cr_expect_eq(w.acquisitions, 200);
	cr_expect_eq(rd.acquisitions, 4000);
	cr_expect_geq(w.hold_min, 19.0, "%s", r.err);
	run_free(&r);
}

Test(lock_stat, one_thread_alone_never_contends)
{
	struct run r = run_contention("alone", "lock_stat=1");
	struct stat_row shared;
	cr_assert(stat_row(r.err, "shared_lock", &shared), "%s", r.err);
	cr_expect_eq(shared.acquisitions, 2000);
	cr_expect_eq(shared.contentions, 0);
	cr_expect_eq(shared.con_bounces, 0);
	cr_expect(!strstr(r.err, "[<"), "no contention points: %s", r.err);
	run_free(&r);
}

Test(lock_stat, off_by_default)
{
	struct run r = run_contention("two-threads-one-mutex", NULL);
	cr_expect_eq(r.exit_code, 0, "exit status %d, expected %d:\n%s%s", r.exit_code, 0, r.out, r.err);
	cr_expect_str_empty(r.err, "%s", r.err);
	run_free(&r);
}

/* With log_path the table goes to the log and each class gets a record
 * saying the same numbers. */
Test(lock_stat, to_the_log_with_a_record_per_class)
{
	char *dir = cli_temp_dir(), options[4200], path[4200];
	snprintf(options, sizeof(options), "lock_stat=1:log_path=%s/log", dir);
	struct run r = run_contention("two-threads-one-mutex", options);
	cr_expect_str_empty(r.err, "%s", r.err);
	snprintf(path, sizeof(path), "%s/log", dir);
	char *log = cli_read(path);
	snprintf(path, sizeof(path), "%s/log.jsonl", dir);
	char *records = cli_read(path);
	cr_assert(log && records, "log and records in %s", dir);
	struct stat_row shared;
	cr_assert(stat_row(log, "shared_lock", &shared), "%s", log);
	const char *rec = strstr(records, "\"class\":\"shared_lock\"");
	cr_assert(rec, "%s", records);
	char expect[128];
	snprintf(expect, sizeof(expect), "\"contentions\":%lu,", shared.contentions);
	cr_expect(strstr(rec, expect), "%s in %s", expect, rec);
	cr_expect(strstr(rec, "\"acquisitions\":4000,"), "%s", rec);
	cr_expect(strstr(rec, "\"contention_points\":[{\"count\":"), "%s", rec);
	cr_expect(strstr(rec, "\"function\":\"take_shared\""), "%s", rec);
	cr_expect(strstr(records, "\"class\":\"private_lock\""), "%s", records);
	cr_expect(strstr(records, "{\"v\":1,\"kind\":\"lock_stat\",\"pid\":"), "%s", records);
	free(log);
	free(records);
	run_free(&r);
	cli_remove_dir(dir);
}
