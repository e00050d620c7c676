/* record_test.c - the command's reading of the tracer's records
 * (jansson with tools/json.h's flags, tools/record.c) and of the text of
 * the same reports (tools/text_log.c): strict JSON, every prefix of a
 * record refused or read whole, damaged lines counted and skipped, fields
 * of the wrong type left out, and a report's text and its record giving
 * the same bug key.
 * The reports below are real ones (lock_order abba, cli_misc
 * leak-cache-under-table, lock_unlock_balance bug-mutex-other-thread). */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../../tools/group.h"
#include "../../tools/json.h"
#include "../../tools/record.h"
#include "../../tools/text_log.h"

static const char abba_text[] =
	"======================================================\n"
	"WARNING: possible circular locking dependency detected\n"
	"lockdep-rcu 0.1, pid 22444\n"
	"------------------------------------------------------\n"
	"lock_order.memb/22444 is trying to acquire lock:\n"
	"00005639a8e822e0 (A), at: nest+0x26/0x58 [lock_order.memb] tests/targets/lock_order.c:18\n"
	"\n"
	"but task is already holding lock:\n"
	"00005639a8e822a0 (B), at: nest+0x26/0x58 [lock_order.memb] tests/targets/lock_order.c:18\n"
	"\n"
	"which lock already depends on the new lock.\n"
	"\n"
	"\n"
	"the existing dependency chain (in reverse order) is:\n"
	"\n"
	"-> #1 (B){lock}:\n"
	"       nest+0x26/0x58 [lock_order.memb] tests/targets/lock_order.c:18\n"
	"       abba+0x2f/0x4e [lock_order.memb] tests/targets/lock_order.c:24\n"
	"       main+0xb3/0xb5 [lock_order.memb] tests/targets/target.h:51\n"
	"       __libc_start_call_main+0x7a/0xac [libc.so.6] ../sysdeps/nptl/libc_start_call_main.h:58\n"
	"       __libc_start_main+0x85/0x141 [libc.so.6] ../csu/libc-start.c:360\n"
	"       _start+0x21/0x22 [lock_order.memb]\n"
	"\n"
	"-> #0 (A){lock}:\n"
	"       nest+0x26/0x58 [lock_order.memb] tests/targets/lock_order.c:18\n"
	"       abba+0x45/0x4e [lock_order.memb] tests/targets/lock_order.c:24\n"
	"       main+0xb3/0xb5 [lock_order.memb] tests/targets/target.h:51\n"
	"       __libc_start_call_main+0x7a/0xac [libc.so.6] ../sysdeps/nptl/libc_start_call_main.h:58\n"
	"       __libc_start_main+0x85/0x141 [libc.so.6] ../csu/libc-start.c:360\n"
	"       _start+0x21/0x22 [lock_order.memb]\n"
	"\n"
	"other info that might help us debug this:\n"
	"\n"
	" Possible unsafe locking scenario:\n"
	"\n"
	"       CPU0                    CPU1\n"
	"       ----                    ----\n"
	"  lock(B);\n"
	"                               lock(A);\n"
	"                               lock(B);\n"
	"  lock(A);\n"
	"\n"
	" *** DEADLOCK ***\n"
	"\n"
	"1 lock held by lock_order.memb/22444:\n"
	" #0: 00005639a8e822a0 (B){mutex}, at: nest+0x26/0x58 [lock_order.memb] tests/targets/lock_order.c:18\n"
	"\n"
	"stack backtrace:\n"
	"CPU: 1 PID: 22444 TID: 22444 Comm: lock_order.memb\n"
	"Call Trace:\n"
	" nest+0x26/0x58 [lock_order.memb] tests/targets/lock_order.c:18\n"
	" abba+0x45/0x4e [lock_order.memb] tests/targets/lock_order.c:24\n"
	" main+0xb3/0xb5 [lock_order.memb] tests/targets/target.h:51\n"
	" __libc_start_call_main+0x7a/0xac [libc.so.6] ../sysdeps/nptl/libc_start_call_main.h:58\n"
	" __libc_start_main+0x85/0x141 [libc.so.6] ../csu/libc-start.c:360\n"
	" _start+0x21/0x22 [lock_order.memb]\n";
static const char abba_record[] =
	"{\"v\":1,\"kind\":\"circular_dependency\",\"title\":\"WARNING: possible circular locking dependency detected\",\"pid\":22444,\"tid\":22444,\"comm\":\"lock_order.memb\",\"time\":1796322592.901,\"site\":{\"pc\":\"0x5639a8e7f339\",\"module\":\"/work/wt-records/build/targets/lock_order.memb\",\"offset\":\"0x2339\",\"function\":\"nest\",\"function_offset\":\"0x26\",\"file\":\"tests/targets/lock_order.c\",\"line\":18},\"message\":\"lock_order.memb/22444 is trying to acquire lock:\",\"locks\":[{\"role\":\"acquiring\",\"address\":\"0x5639a8e822e0\",\"name\":\"A\",\"kind\":\"lock\"},{\"role\":\"holding\",\"address\":\"0x5639a8e822a0\",\"name\":\"B\",\"kind\":\"lock\",\"acquired_at\":{\"pc\":\"0x5639a8e7f339\",\"module\":\"/work/wt-records/build/targets/lock_order.memb\",\"offset\":\"0x2339\",\"function\":\"nest\",\"function_offset\":\"0x26\",\"file\":\"tests/targets/lock_order.c\",\"line\":18}},{\"role\":\"chain\",\"name\":\"A\",\"kind\":\"lock\"},{\"role\":\"chain\",\"name\":\"B\",\"kind\":\"lock\"},{\"role\":\"held\",\"address\":\"0x5639a8e822a0\",\"name\":\"B\",\"kind\":\"mutex\",\"acquired_at\":{\"pc\":\"0x5639a8e7f339\",\"module\":\"/work/wt-records/build/targets/lock_order.memb\",\"offset\":\"0x2339\",\"function\":\"nest\",\"function_offset\":\"0x26\",\"file\":\"tests/targets/lock_order.c\",\"line\":18}}],\"frames\":[{\"pc\":\"0x5639a8e7f339\",\"module\":\"/work/wt-records/build/targets/lock_order.memb\",\"offset\":\"0x2339\",\"function\":\"nest\",\"function_offset\":\"0x26\",\"file\":\"tests/targets/lock_order.c\",\"line\":18},{\"pc\":\"0x5639a8e7f702\",\"module\":\"/work/wt-records/build/targets/lock_order.memb\",\"offset\":\"0x2702\",\"function\":\"abba\",\"function_offset\":\"0x45\",\"file\":\"tests/targets/lock_order.c\",\"line\":24},{\"pc\":\"0x5639a8e7fe21\",\"module\":\"/work/wt-records/build/targets/lock_order.memb\",\"offset\":\"0x2e21\",\"function\":\"main\",\"function_offset\":\"0xb3\",\"file\":\"tests/targets/target.h\",\"line\":51},{\"pc\":\"0x7f2728a4524a\",\"module\":\"/lib/x86_64-linux-gnu/libc.so.6\",\"offset\":\"0x2724a\",\"function\":\"__libc_start_call_main\",\"function_offset\":\"0x7a\",\"file\":\"../sysdeps/nptl/libc_start_call_main.h\",\"line\":58},{\"pc\":\"0x7f2728a45305\",\"module\":\"/lib/x86_64-linux-gnu/libc.so.6\",\"offset\":\"0x27305\",\"function\":\"__libc_start_main\",\"function_offset\":\"0x85\",\"file\":\"../csu/libc-start.c\",\"line\":360},{\"pc\":\"0x5639a8e7f201\",\"module\":\"/work/wt-records/build/targets/lock_order.memb\",\"offset\":\"0x2201\",\"function\":\"_start\",\"function_offset\":\"0x21\"}],\"bug\":\"cc620e2af13f6bf9\"}";

static const char leak_two_text[] =
	"==============================================\n"
	"BUG: cli_misc.memb/22411 still has locks held!\n"
	"lockdep-rcu 0.1, pid 22410\n"
	"----------------------------------------------\n"
	"2 locks held by cli_misc.memb/22411:\n"
	" #0: 0000563de4efc160 (table_lock){mutex}, at: cache_worker+0x15/0x1a [cli_misc.memb] tests/targets/cli_misc.c:122\n"
	" #1: 0000563de4efb120 (cache_lock){mutex}, at: refill_cache_or_give_up+0x10/0x1a [cli_misc.memb] tests/targets/cli_misc.c:115\n"
	"\n"
	"stack backtrace:\n"
	"CPU: 0 PID: 22410 TID: 22411 Comm: cli_misc.memb\n"
	"Call Trace:\n"
	" start_thread+0x305/0x48e [libc.so.6] pthread_create.c:442\n"
	" clone3+0x2c/0x47 [libc.so.6] ../sysdeps/unix/sysv/linux/x86_64/clone3.S:81\n";
static const char leak_two_record[] =
	"{\"v\":1,\"kind\":\"locks_held_at_exit\",\"title\":\"BUG: cli_misc.memb/22411 still has locks held!\",\"pid\":22410,\"tid\":22411,\"comm\":\"cli_misc.memb\",\"time\":1796322587.788,\"site\":{\"pc\":\"0x563de4ef8368\",\"module\":\"/work/wt-records/build/targets/cli_misc.memb\",\"offset\":\"0x1368\",\"function\":\"refill_cache_or_give_up\",\"function_offset\":\"0x10\",\"file\":\"tests/targets/cli_misc.c\",\"line\":115},\"message\":\"2 locks held by cli_misc.memb/22411:\",\"locks\":[{\"role\":\"leaked\",\"address\":\"0x563de4efc160\",\"name\":\"table_lock\",\"kind\":\"mutex\",\"acquired_at\":{\"pc\":\"0x563de4ef8387\",\"module\":\"/work/wt-records/build/targets/cli_misc.memb\",\"offset\":\"0x1387\",\"function\":\"cache_worker\",\"function_offset\":\"0x15\",\"file\":\"tests/targets/cli_misc.c\",\"line\":122}},{\"role\":\"leaked\",\"address\":\"0x563de4efb120\",\"name\":\"cache_lock\",\"kind\":\"mutex\",\"acquired_at\":{\"pc\":\"0x563de4ef8368\",\"module\":\"/work/wt-records/build/targets/cli_misc.memb\",\"offset\":\"0x1368\",\"function\":\"refill_cache_or_give_up\",\"function_offset\":\"0x10\",\"file\":\"tests/targets/cli_misc.c\",\"line\":115}}],\"frames\":[{\"pc\":\"0x7f5630ca71f5\",\"module\":\"/lib/x86_64-linux-gnu/libc.so.6\",\"offset\":\"0x891f5\",\"function\":\"start_thread\",\"function_offset\":\"0x305\",\"file\":\"pthread_create.c\",\"line\":442},{\"pc\":\"0x7f5630d278ec\",\"module\":\"/lib/x86_64-linux-gnu/libc.so.6\",\"offset\":\"0x1098ec\",\"function\":\"clone3\",\"function_offset\":\"0x2c\",\"file\":\"../sysdeps/unix/sysv/linux/x86_64/clone3.S\",\"line\":81}],\"bug\":\"b703cf18d9683101\"}";

static const char unlock_other_text[] =
	"=====================================\n"
	"WARNING: bad unlock balance detected!\n"
	"lockdep-rcu 0.1, pid 23058\n"
	"-------------------------------------\n"
	"lock_unlock_bal/23058 is trying to release lock (owner_lock) at:\n"
	"mutex_held_by_other_thread+0x97/0xf1 [lock_unlock_balance.memb] tests/targets/lock_unlock_balance.c:63\n"
	"but there are no more locks to release!\n"
	"\n"
	"The lock is held by another thread, lock_unlock_bal/23060, which took it at:\n"
	"owner_thread+0x12/0x83 [lock_unlock_balance.memb] tests/targets/lock_unlock_balance.c:43\n"
	"The C library refuses this release (EPERM): lock_unlock_bal/23060 still holds it.\n"
	"\n"
	"other info that might help us debug this:\n"
	"no locks held by lock_unlock_bal/23058.\n"
	"\n"
	"stack backtrace:\n"
	"CPU: 1 PID: 23058 TID: 23058 Comm: lock_unlock_bal\n"
	"Call Trace:\n"
	" mutex_held_by_other_thread+0x97/0xf1 [lock_unlock_balance.memb] tests/targets/lock_unlock_balance.c:63\n"
	" main+0xd5/0xd7 [lock_unlock_balance.memb] tests/targets/target.h:51\n"
	" __libc_start_call_main+0x7a/0xac [libc.so.6] ../sysdeps/nptl/libc_start_call_main.h:58\n"
	" __libc_start_main+0x85/0x141 [libc.so.6] ../csu/libc-start.c:360\n"
	" _start+0x21/0x22 [lock_unlock_balance.memb]\n";
static const char unlock_other_record[] =
	"{\"v\":1,\"kind\":\"bad_unlock\",\"title\":\"WARNING: bad unlock balance detected!\",\"pid\":23058,\"tid\":23058,\"comm\":\"lock_unlock_bal\",\"time\":1796322648.370,\"site\":{\"pc\":\"0x55d427f0174c\",\"module\":\"/work/wt-records/build/targets/lock_unlock_balance.memb\",\"offset\":\"0x174c\",\"function\":\"mutex_held_by_other_thread\",\"function_offset\":\"0x97\",\"file\":\"tests/targets/lock_unlock_balance.c\",\"line\":63},\"message\":\"lock_unlock_bal/23058 is trying to release lock (owner_lock) at:\",\"locks\":[{\"role\":\"released\",\"address\":\"0x55d427f04120\",\"name\":\"owner_lock\",\"kind\":\"pthread_mutex_t\",\"acquired_at\":{\"pc\":\"0x55d427f017b8\",\"module\":\"/work/wt-records/build/targets/lock_unlock_balance.memb\",\"offset\":\"0x17b8\",\"function\":\"owner_thread\",\"function_offset\":\"0x12\",\"file\":\"tests/targets/lock_unlock_balance.c\",\"line\":43}}],\"frames\":[{\"pc\":\"0x55d427f0174c\",\"module\":\"/work/wt-records/build/targets/lock_unlock_balance.memb\",\"offset\":\"0x174c\",\"function\":\"mutex_held_by_other_thread\",\"function_offset\":\"0x97\",\"file\":\"tests/targets/lock_unlock_balance.c\",\"line\":63},{\"pc\":\"0x55d427f018fe\",\"module\":\"/work/wt-records/build/targets/lock_unlock_balance.memb\",\"offset\":\"0x18fe\",\"function\":\"main\",\"function_offset\":\"0xd5\",\"file\":\"tests/targets/target.h\",\"line\":51},{\"pc\":\"0x7f22cd64524a\",\"module\":\"/lib/x86_64-linux-gnu/libc.so.6\",\"offset\":\"0x2724a\",\"function\":\"__libc_start_call_main\",\"function_offset\":\"0x7a\",\"file\":\"../sysdeps/nptl/libc_start_call_main.h\",\"line\":58},{\"pc\":\"0x7f22cd645305\",\"module\":\"/lib/x86_64-linux-gnu/libc.so.6\",\"offset\":\"0x27305\",\"function\":\"__libc_start_main\",\"function_offset\":\"0x85\",\"file\":\"../csu/libc-start.c\",\"line\":360},{\"pc\":\"0x55d427f011c1\",\"module\":\"/work/wt-records/build/targets/lock_unlock_balance.memb\",\"offset\":\"0x11c1\",\"function\":\"_start\",\"function_offset\":\"0x21\"}],\"bug\":\"a09d4e5c5504a8c1\"}";

static json_t *parsed(const char *text, size_t len)
{
	return json_loadb(text, len, JSON_READ_FLAGS, NULL);
}

static struct splat record_of(const char *record)
{
	json_t *v = parsed(record, strlen(record));
	cr_assert(v, "%s", record);
	struct splat s;
	cr_assert_eq(record_read_report(v, &s), 0);
	json_decref(v);
	return s;
}

/* A crash mid-write cuts the last record anywhere: no prefix of a record
 * is read as JSON, and reading one never goes wrong (ASan watches). */
Test(json_read, no_prefix_of_a_record_is_read)
{
	const char *records[] = { abba_record, leak_two_record, unlock_other_record };
	for (size_t r = 0; r < 3; r++) {
		size_t len = strlen(records[r]);
		for (size_t cut = 0; cut < len; cut++)
			cr_assert_null(parsed(records[r], cut), "record %zu cut at %zu parsed", r, cut);
		json_t *whole = parsed(records[r], len);
		cr_expect(json_is_object(whole));
		json_decref(whole);
	}
}

static FILE *records_file(char *path)
{
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	FILE *f = fdopen(fd, "wb");
	cr_assert(f);
	return f;
}

static void count_record(const json_t *v, void *ctx)
{
	cr_expect(json_is_object(v));
	++*(size_t *)ctx;
}

/* The same cuts, through the file reader: the whole records before the
 * cut are read, the cut one is counted as cut, nothing else. */
Test(json_read, records_file_cut_anywhere)
{
	char path[] = "/tmp/record_test.XXXXXX";
	fclose(records_file(path));
	char *file;
	cr_assert(asprintf(&file, "%s\n%s\n", abba_record, leak_two_record) > 0);
	size_t len = strlen(file), first_end = strlen(abba_record);
	for (size_t cut = 0; cut <= len; cut += 7) {
		FILE *f = fopen(path, "wb");
		fwrite(file, 1, cut, f);
		fclose(f);
		struct records_scan scan;
		const char *why;
		size_t seen = 0;
		cr_assert_eq(records_file_read(path, count_record, &seen, &scan, &why), 0);
		cr_expect_eq(seen, scan.records);
		size_t whole = (cut >= first_end) + (cut >= len - 1);
		cr_expect_eq(scan.records, whole, "cut at %zu", cut);
		int mid = cut && file[cut - 1] != '\n' && cut != first_end && cut != len - 1;
		cr_expect_eq(scan.cut, (size_t)mid, "cut at %zu", cut);
		cr_expect_eq(scan.garbage, 0, "cut at %zu", cut);
	}
	unlink(path);
	free(file);
}

static void kinds_of(const json_t *v, void *ctx)
{
	struct strbuf *kinds = ctx;
	sb_printf(kinds, "%s ", json_string_value(json_object_get(v, "kind")));
}

/* What a damaged line may be, between whole records: each is counted as
 * garbage and never passed on; a record is an object with "v":1 and a
 * string "kind", its numbers any size. */
Test(json_read, damaged_lines_are_counted_and_skipped)
{
	static const char damaged[] =
		"garbage\n"
		"{\"v\":1,\"kind\":\"bad_unlock\",\"title\":\n"    /* cut, then written after */
		"{\"v\":1,\"kind\":\"x\"} {}\n"                      /* more than one value */
		"[1,2]\n"                                           /* JSON, not an object */
		"{\"v\":\"1\",\"kind\":\"x\"}\n"                     /* a version that is no number */
		"{\"v\":1,\"kind\":7}\n"                             /* a kind that is no string */
		"{\"kind\":\"x\"}\n"                                 /* no version */
		"{\"v\":1,\"kind\":\"x\",\"kind\":\"y\"}\n"          /* a member twice */
		"{\"v\":1,\"kind\":\"x\xff\"}\n"                     /* not UTF-8 */
		"{\"v\":1,\"kind\":\"x\\u0000\"}\n"                  /* an escaped NUL */
		"{\"v\":1,\"kind\":\"x\\ud800\"}\n"                  /* a lone surrogate */
		"{\"v\":1,\"kind\":\"x\"}\0\n"                       /* a NUL byte */
		"\n"                                                /* empty: not counted */
		"{\"v\":1,\"kind\":\"lock_stat\",\"n\":18446744073709551616}\n";
	char path[] = "/tmp/record_test.XXXXXX";
	FILE *f = records_file(path);
	fprintf(f, "%s\n", abba_record);
	fwrite(damaged, 1, sizeof(damaged) - 1, f);
	fprintf(f, "%s\n%.100s", leak_two_record, unlock_other_record);
	fclose(f);
	struct records_scan scan;
	const char *why;
	struct strbuf kinds = { 0 };
	cr_assert_eq(records_file_read(path, kinds_of, &kinds, &scan, &why), 0);
	cr_expect_str_eq(kinds.s, "circular_dependency lock_stat locks_held_at_exit ");
	cr_expect_eq(scan.records, 3);
	cr_expect_eq(scan.garbage, 12);
	cr_expect_eq(scan.cut, 1, "the last line, without its newline");
	sb_free(&kinds);
	unlink(path);
}

/* A record whose fields have the wrong type: the required ones refuse it,
 * the others are left out. */
Test(record_read, fields_of_the_wrong_type)
{
	static const char *const refused[] = {
		"{\"v\":1,\"kind\":\"bad_unlock\",\"title\":\"t\",\"pid\":\"1\"}",
		"{\"v\":1,\"kind\":\"bad_unlock\",\"title\":5,\"pid\":1}",
		"{\"v\":1,\"kind\":\"bad_unlock\",\"pid\":1}",
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		json_t *v = parsed(refused[i], strlen(refused[i]));
		struct splat s;
		cr_expect_neq(record_read_report(v, &s), 0, "%s", refused[i]);
		json_decref(v);
	}
	struct splat s = record_of(
		"{\"v\":1,\"kind\":\"bad_unlock\",\"title\":\"t\",\"pid\":7,\"tid\":\"8\",\"seq\":-1,\"message\":[],"
		"\"site\":\"main\",\"locks\":{\"role\":\"held\",\"name\":\"A\"},"
		"\"frames\":[3,{\"function\":\"f\",\"file\":\"f.c\",\"line\":\"9\",\"pc\":12},{\"pc\":\"0x10\"}]}");
	cr_expect_eq(s.pid, 7);
	cr_expect_eq(s.tid, 0);
	cr_expect_eq(s.seq, 0);
	cr_expect_str_eq(s.message, "");
	cr_expect_eq(s.has_site, 0);
	cr_expect_eq(s.nlocks, 0);
	cr_assert_eq(s.ntrace, 2, "the frame that is not an object is left out");
	cr_expect_str_eq(s.trace[0].text, "f", "no file:line without a line number, no pc from a number");
	cr_expect_eq(s.trace[0].has_pc, 0);
	cr_expect_str_eq(s.trace[1].text, "0x10");
	splat_free(&s);
}

static void expect_same_key(const char *text, const char *record, const char *expected_key)
{
	struct splat from_text, from_record = record_of(record);
	cr_assert_eq(splat_parse(text, strlen(text), &from_text), 0);
	char *a = bug_key(&from_text), *b = bug_key(&from_record);
	cr_expect_str_eq(a, b, "the text and the record of one report are one bug");
	cr_expect_str_eq(b, expected_key);
	free(a);
	free(b);
	splat_free(&from_text);
	splat_free(&from_record);
}

Test(bug_key, a_report_text_and_its_record_give_the_same_key)
{
	expect_same_key(abba_text, abba_record,
			"circular_dependency\nlock_order.c:18\nacquiring A\nholding lock_order.c:18\nchain A\nchain B");
	expect_same_key(leak_two_text, leak_two_record, "locks_held_at_exit\n\nleaked cli_misc.c:115");
	expect_same_key(unlock_other_text, unlock_other_record,
			"bad_unlock\nlock_unlock_balance.c:63\nreleased lock_unlock_balance.c:43");
}

/* A lock named by its address (a static lock of a stripped program) counts
 * by name without it; a frame not named by where it is in its module. */
Test(bug_key, addresses_do_not_count)
{
	struct splat s = { 0 };
	s.kind = "circular_dependency";
	struct splat_lock locks[1] = { { .role = "acquiring", .name = "lock@55d1afc420c0" } };
	s.locks = locks;
	s.nlocks = 1;
	s.has_site = 1;
	s.site = (struct frame){ .text = "0x55d1afc3f27a [demo+0x127a]", .module = "demo", .offset = 0x127a,
				 .has_offset = 1 };
	char *key = bug_key(&s);
	cr_expect_str_eq(key, "circular_dependency\ndemo+0x127a\nacquiring lock@?");
	free(key);
}

/* One bug is one group whatever the context around it: a use-after-free
 * the updater made while one reader held the object, or two, is the same
 * free; the other updater's locks are context of a publication report. */
Test(bug_key, how_many_readers_hold_the_object_does_not_count)
{
	struct splat one = { 0 }, two = { 0 };
	one.kind = two.kind = "rcu_use_after_free";
	one.has_site = two.has_site = 1;
	one.site = two.site = (struct frame){ .text = "updater", .source = "tests/targets/x.c:40" };
	struct splat_lock a[2] = { { .role = "freed", .name = "RCU-protected object" },
				   { .role = "reader", .name = "rcu_read_lock", .has_at = 1,
				     .at = { .text = "r1", .source = "tests/targets/x.c:10" } } };
	struct splat_lock b[3] = { a[0], a[1],
				   { .role = "reader", .name = "rcu_read_lock", .has_at = 1,
				     .at = { .text = "r2", .source = "tests/targets/x.c:20" } } };
	one.locks = a;
	one.nlocks = 2;
	two.locks = b;
	two.nlocks = 3;
	char *k1 = bug_key(&one), *k2 = bug_key(&two);
	cr_expect_str_eq(k1, k2, "one reader or two: one bug");
	cr_expect(strstr(k1, "freed"), "the freed object is the bug: %s", k1);
	free(k1);
	free(k2);
}
