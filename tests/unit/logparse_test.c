/* The command's log scanner (tools/text_log.c) as pure logic under
 * ASan/UBSan: a log fed in pieces, as `report` reads a big one, gives the
 * same reports, notes and counts as the whole log scanned at once, wherever
 * the pieces are cut, and for every prefix of it (a log cut anywhere). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "../../tools/text_log.h"

struct seen {
	char text[65536];     /* every splat and tracer line passed on, tagged */
	size_t len;
};

static void add(struct seen *s, const char *tag, const char *text, size_t len)
{
	cr_assert_lt(s->len + strlen(tag) + len + 2, sizeof(s->text));
	memcpy(s->text + s->len, tag, strlen(tag));
	s->len += strlen(tag);
	memcpy(s->text + s->len, text, len);
	s->len += len;
	s->text[s->len++] = '|';
	s->text[s->len] = 0;
}

static void on_splat(const char *text, size_t len, void *ctx)
{
	add(ctx, "splat:", text, len);
}

static void on_tracer_line(const char *line, size_t len, void *ctx)
{
	add(ctx, "tracer:", line, len);
}

static const struct log_callbacks callbacks = { on_splat, on_tracer_line };

static void whole(const char *log, size_t len, struct seen *seen, struct log_scan *scan)
{
	int in_report;
	memset(scan, 0, sizeof(*scan));
	seen->len = 0;
	cr_assert_eq(log_scan_part(log, len, 1, &callbacks, seen, scan, &in_report), len);
}

/* As the reader does: append a piece, scan what can be decided, keep the rest. */
static void in_pieces(const char *log, size_t len, size_t piece, struct seen *seen, struct log_scan *scan)
{
	static char window[65536];
	size_t kept = 0;
	memset(scan, 0, sizeof(*scan));
	seen->len = 0;
	for (size_t at = 0; at < len; at += piece) {
		size_t n = len - at < piece ? len - at : piece;
		cr_assert_lt(kept + n, sizeof(window));
		memcpy(window + kept, log + at, n);
		kept += n;
		int in_report;
		size_t done = log_scan_part(window, kept, 0, &callbacks, seen, scan, &in_report);
		cr_assert_leq(done, kept);
		if (in_report)
			cr_assert_eq(window[done], '=', "a report starts where the scan stopped: %.20s", window + done);
		memmove(window, window + done, kept - done);
		kept -= done;
	}
	int in_report;
	cr_assert_eq(log_scan_part(window, kept, 1, &callbacks, seen, scan, &in_report), kept);
}

static const char log_text[] =
	"program output\n"
	"lockdep-rcu: ignoring option 'bogus' in LOCKDEP_RCU_OPTIONS: unknown option (help=1 lists them)\n"
	"\n"
	"=============================\n"
	"WARNING: suspicious RCU usage\n"
	"lockdep-rcu 0.1, pid 21321\n"
	"-----------------------------\n"
	"demo.c:19 suspicious rcu_dereference() usage!\n"
	"\n"
	"other info that might help us debug this:\n"
	"\n"
	"rcu_dereference() outside any RCU read-side critical section and with no lock held\n"
	"\n"
	"stack backtrace:\n"
	"CPU: 0 PID: 21321 TID: 21321 Comm: demo\n"
	"Call Trace:\n"
	" route_stats+0x10/0x17 [demo] demo.c:19\n"
	" main+0xbb/0x10c [demo] demo.c:86\n"
	"more program output\n"
	"==============================\n"   /* a rule that starts no report */
	"not a title\n"
	"\n"
	"================================================\n"
	"BUG: demo/21325 still has locks held!\n"
	"lockdep-rcu 0.1, pid 21321\n"
	"------------------------------------------------\n"
	"1 lock held by demo/21325:\n"
	" #0: 000055a6d7ddf0c0 (update_lock){mutex}, at: failing_updater+0x10/0x34 [demo] demo.c:67\n"
	"\n"
	"stack backtrace:\n"
	"CPU: 0 PID: 21321 TID: 21325 Comm: demo\n"
	"Call Trace:\n"
	" start_thread+0x305/0x48e [libc.so.6] pthread_create.c:442\n"
	"\n"
	"=====\n"
	"WARNING: a report cut by the next one\n"
	"lockdep-rcu 0.1, pid 21321\n"
	"-----\n"
	"body\n"
	"\n"
	"=====\n"
	"WARNING: possible recursive locking detected\n"
	"lockdep-rcu 0.1, pid 21321\n"
	"-----\n"
	"body\n"
	"Call Trace:\n"
	" f+0x1/0x2 [m] a.c:1\n"
	"SUMMARY: lockdep-rcu: 3 reports: 2 suspicious RCU usage, 1 locks held at thread end; 2 suppressed\n";

static void expect_same(const struct seen *a, const struct log_scan *sa, const struct seen *b,
			const struct log_scan *sb, const char *what, size_t n)
{
	cr_expect_str_eq(b->text, a->text, "%s %zu", what, n);
	cr_expect_eq(sb->splats, sa->splats, "%s %zu", what, n);
	cr_expect_eq(sb->truncated, sa->truncated, "%s %zu", what, n);
	cr_expect_eq(sb->summaries, sa->summaries, "%s %zu", what, n);
	cr_expect_eq(sb->suppressed, sa->suppressed, "%s %zu", what, n);
}

Test(logparse, the_whole_log)
{
	static struct seen seen;
	struct log_scan scan;
	whole(log_text, sizeof(log_text) - 1, &seen, &scan);
	cr_expect_eq(scan.splats, 3, "%s", seen.text);
	cr_expect_eq(scan.truncated, 1);
	cr_expect_eq(scan.summaries, 1);
	cr_expect_eq(scan.suppressed, 2);
	cr_expect(strstr(seen.text, "tracer:lockdep-rcu: ignoring option 'bogus'"), "%s", seen.text);
	cr_expect(strstr(seen.text, " main+0xbb/0x10c [demo] demo.c:86\n|"), "the splat ends after its last frame: %s",
		  seen.text);
}

Test(logparse, pieces_of_any_size_give_the_same_result)
{
	static struct seen a, b;
	struct log_scan sa, sb;
	size_t len = sizeof(log_text) - 1;
	whole(log_text, len, &a, &sa);
	for (size_t piece = 1; piece <= len; piece++) {
		in_pieces(log_text, len, piece, &b, &sb);
		expect_same(&a, &sa, &b, &sb, "piece", piece);
	}
}

Test(logparse, a_log_cut_anywhere_reads_the_same_in_pieces)
{
	static struct seen a, b;
	struct log_scan sa, sb;
	static const size_t pieces[] = { 1, 7, 64 };
	for (size_t cut = 0; cut <= sizeof(log_text) - 1; cut++) {
		whole(log_text, cut, &a, &sa);
		for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
			in_pieces(log_text, cut, pieces[i], &b, &sb);
			expect_same(&a, &sa, &b, &sb, "cut at", cut);
		}
	}
}

Test(logparse, binary_or_text)
{
	struct text_sample s = { 0 };
	text_sample_add(&s, log_text, sizeof(log_text) - 1);
	cr_expect_not(text_sample_is_binary(&s));
	static const char colors[] = "\x1b[31mred\x1b[0m and caf\xc3\xa9 \xe2\x9c\x93\r\n\ttab\n";
	text_sample_add(&s, colors, sizeof(colors) - 1);
	cr_expect_not(text_sample_is_binary(&s));
	struct text_sample control = { 0 };
	text_sample_add(&control, "\x01\x02\x03\x04text", 8);
	cr_expect(text_sample_is_binary(&control));
	/* random bytes, NUL bytes left out: few control characters (28 in 255)
	 * but mostly invalid UTF-8 */
	static char noise[4096];
	unsigned seed = 1;
	size_t n = 0;
	while (n < sizeof(noise)) {
		seed = seed * 1103515245u + 12345u;
		if ((char)(seed >> 16))
			noise[n++] = (char)(seed >> 16);
	}
	struct text_sample random = { 0 };
	text_sample_add(&random, noise, sizeof(noise));
	cr_expect(text_sample_is_binary(&random), "%zu odd in %zu", random.odd, random.bytes);
	/* a Latin-1 word or two in program output is still text */
	struct text_sample latin = { 0 };
	static const char dessert[] = "caf\xe9 cr\xe8me br\xfbl\xe9" "e served at table 4\n";
	text_sample_add(&latin, dessert, sizeof(dessert) - 1);
	cr_expect_not(text_sample_is_binary(&latin), "%zu odd in %zu", latin.odd, latin.bytes);
}
