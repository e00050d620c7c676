/* The tracer's own unwinder against glibc's backtrace() (libgcc's), on
 * stacks of every shape the rules cover, and the shapes it must refuse
 * rather than get wrong. Under ASan/UBSan. */
#define _GNU_SOURCE
#include <alloca.h>
#include <criterion/criterion.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include "unwind/cfi_unwind.h"

#define MAX 64

struct capture {
	long fast;
	uintptr_t frames[MAX];
	int slow;
	void *slow_frames[MAX];
};

/* Both unwinders from the same frame: each one's first return address is
 * its own call site in capture_here() (libgcc's may come after frames of
 * a sanitizer's backtrace() interceptor), so they are compared from
 * capture_here()'s caller on, to the outermost frame. */
static __attribute__((noinline)) void capture_here(struct capture *c)
{
	c->fast = cfi_unwind_capture(c->frames, MAX, 0, 0);
	c->slow = backtrace(c->slow_frames, MAX);
	__asm__ volatile("" ::: "memory");
}

static void expect_same(const struct capture *c, const char *what)
{
	cr_assert_geq(c->fast, 2, "%s: the fast unwinder gave up (%ld)", what, c->fast);
	int j = 0;
	while (j < c->slow && (uintptr_t)c->slow_frames[j] != c->frames[1])
		j++;
	cr_assert_lt(j, c->slow, "%s: capture_here()'s caller %#lx is not in libgcc's stack", what,
		     (unsigned long)c->frames[1]);
	cr_expect_eq(c->fast - 1, c->slow - j, "%s: %ld frames from the caller, libgcc %d", what, c->fast - 1,
		     c->slow - j);
	for (long i = 1; i < c->fast && j + i - 1 < c->slow; i++)
		cr_expect_eq(c->frames[i], (uintptr_t)c->slow_frames[j + i - 1], "%s: frame %ld: %#lx, libgcc %#lx",
			     what, i, (unsigned long)c->frames[i], (unsigned long)c->slow_frames[j + i - 1]);
}

static __attribute__((noinline)) int recurse(struct capture *c, int depth)
{
	if (depth == 0) {
		capture_here(c);
		return 0;
	}
	int r = recurse(c, depth - 1);
	__asm__ volatile("" ::: "memory");
	return r + 1;
}

Test(cfi_unwind, plain_frames_as_libgcc)
{
	struct capture c;
	recurse(&c, 10);
	expect_same(&c, "recursion");
}

/* alloca(): the frame's CFA is %rbp-based. */
static __attribute__((noinline)) void with_alloca(struct capture *c, size_t n)
{
	char *buf = alloca(n);
	memset(buf, 1, n);
	__asm__ volatile("" ::"r"(buf) : "memory");
	recurse(c, 2);
	__asm__ volatile("" ::"r"(buf) : "memory");
}

Test(cfi_unwind, frames_with_alloca_as_libgcc)
{
	struct capture c;
	with_alloca(&c, 4096);
	expect_same(&c, "alloca");
}

/* An over-aligned local: gcc realigns the stack and its CFA becomes a
 * DWARF expression through %rbp (as in many programs' main()). */
static __attribute__((noinline)) void realigned(struct capture *c)
{
	char aligned[64] __attribute__((aligned(64)));
	memset(aligned, 2, sizeof(aligned));
	__asm__ volatile("" ::"r"(aligned) : "memory");
	recurse(c, 1);
	__asm__ volatile("" ::"r"(aligned) : "memory");
}

/* Realigned and with a dynamic allocation: gcc keeps a pointer to the
 * incoming frame (DRAP) and the CFA is read through it (DW_OP_breg6 off;
 * DW_OP_deref), as in many programs' main(). */
static __attribute__((noinline)) void realigned_with_alloca(struct capture *c, size_t n)
{
	char aligned[64] __attribute__((aligned(64)));
	char *dynamic = alloca(n);
	memset(aligned, 3, sizeof(aligned));
	memset(dynamic, 4, n);
	__asm__ volatile("" ::"r"(aligned), "r"(dynamic) : "memory");
	recurse(c, 1);
	__asm__ volatile("" ::"r"(aligned), "r"(dynamic) : "memory");
}

Test(cfi_unwind, realigned_frames_as_libgcc)
{
	struct capture c;
	realigned(&c);
	expect_same(&c, "realigned");
	realigned_with_alloca(&c, 100);
	expect_same(&c, "realigned, with alloca");
}

static void *thread_main(void *arg)
{
	recurse(arg, 3);
	return NULL;
}

Test(cfi_unwind, a_thread_down_to_its_start_as_libgcc)
{
	struct capture c;
	pthread_t t;
	cr_assert_eq(pthread_create(&t, NULL, thread_main, &c), 0);
	pthread_join(t, NULL);
	expect_same(&c, "thread");
}

static struct capture in_handler;
static void handler(int sig)
{
	(void)sig;
	capture_here(&in_handler);
}

/* A signal frame is not one of the rules: the fast unwinder gives up (its
 * caller then uses libgcc), it never returns wrong frames. */
Test(cfi_unwind, a_signal_frame_makes_it_give_up)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigaction(SIGUSR2, &sa, NULL);
	raise(SIGUSR2);
	cr_expect_eq(in_handler.fast, -1, "%ld frames through a signal frame", in_handler.fast);
	signal(SIGUSR2, SIG_DFL);
}

Test(cfi_unwind, max_frames_and_skipped_range)
{
	uintptr_t frames[MAX];
	cr_expect_eq(cfi_unwind_capture(frames, 3, 0, 0), 3, "stops at max");
	cr_expect_eq(cfi_unwind_capture(frames, MAX, 0, UINTPTR_MAX), 0, "every frame skipped");
}
