/* The tracer's own unwinder (preload/unwind/cfi_unwind.c) against libgcc's, on
 * real reports: every frame of every stack the same with fast_unwind=1
 * (the default) as with fast_unwind=0, on the main thread (a realigned
 * main() included), on threads, in signal handlers (where the fast one
 * hands over to libgcc), on inlined read sides and on small stacks. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"

/* Every symbolized frame of a run's reports, in order, one per line: from
 * the "function+0x1a/0x40 [module] file:line" part of each line that has
 * one to its end (what varies from run to run, pids and data addresses, is
 * before it or in other lines). */
static char *frame_lines(const char *err)
{
	size_t cap = strlen(err) + 2, n = 0;
	char *out = calloc(1, cap);
	for (const char *line = err; *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		const char *off = memmem(line, len, "+0x", 3);
		if (off) {
			const char *start = off;
			while (start > line && start[-1] != ' ')
				start--;
			size_t part = (size_t)(line + len - start);
			memcpy(out + n, start, part);
			n += part;
			out[n++] = '\n';
		}
		line += len + (end != NULL);
	}
	return out;
}

static void expect_same_stacks(const char *target, const char *flavor, const char *scenario, int min_frames)
{
	struct run_options slow = { .preload = 1, .options = "fast_unwind=0", .timeout = 30 };
	struct run_options fast = { .preload = 1, .options = "fast_unwind=1", .timeout = 30 };
	struct run a = run_target(target, flavor, scenario, &slow);
	struct run b = run_target(target, flavor, scenario, &fast);
	char *fa = frame_lines(a.err), *fb = frame_lines(b.err);
	int frames = 0;
	for (const char *p = fb; (p = strchr(p, '\n')); p++)
		frames++;
	cr_expect_geq(frames, min_frames, "[%s %s] %d frame lines:\n%s", target, scenario, frames, b.err);
	cr_expect_str_eq(fb, fa, "[%s %s] fast unwinder:\n%s\nlibgcc's:\n%s", target, scenario, fb, fa);
	cr_expect_eq(a.exit_code, b.exit_code, "[%s %s]", target, scenario);
	free(fa);
	free(fb);
	run_free(&a);
	run_free(&b);
}

Test(unwind, main_thread_stacks_as_libgcc)
{
	expect_same_stacks("lock_order", "memb", "abba", 10);
	expect_same_stacks("lock_classes", "memb", "bug-generic-constructor-real-inversion", 6);
}

Test(unwind, thread_stacks_as_libgcc)
{
	expect_same_stacks("thread_end", "memb", "bug-return-locked", 3);
	expect_same_stacks("rcu_free_while_held", "memb", "bug-free-after-assign", 6);
}

Test(unwind, signal_handler_stacks_as_libgcc)
{
	expect_same_stacks("signal_handlers", "memb", "bug-in-handler-after-unblocked-use", 6);
	expect_same_stacks("signal_handlers", "memb", "bug-unblocked-use-after-handler", 6);
}

Test(unwind, inlined_read_side_and_qsbr_stacks_as_libgcc)
{
	expect_same_stacks("sync_in_reader", "qsbr", "bug-synchronize", 3);
	expect_same_stacks("sync_in_reader", "memb", "bug-barrier", 3);
}
