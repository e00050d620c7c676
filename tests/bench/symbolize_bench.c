/* symbolize_bench.c - the symbolizer's costs, as quoted in preload/symbolize/symbolize.h:
 * first lookup in libc (listing, mapping libc and its libc6-dbg debug file,
 * symbols, inflating and decoding the line tables), later lookups, memory
 * kept per module, and the deepest stack any of it used on a painted stack.
 * Built -O2 like the preload. Run: build/bench/symbolize_bench */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "symbolize/module_list.h"
#include "symbolize/symbolize.h"

enum { STACK_SIZE = 1 << 20, PAINT = 0xa5, LOOKUPS = 200000, ADDRESSES = 1024 };

/* Thread CPU time, system time (page faults) included: other processes on
 * a busy machine do not count. */
static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void *idle(void *arg)
{
	return arg;
}

/* Runs fn on a thread whose 1 MiB stack was painted first; returns the
 * bytes of stack it touched, less those a thread doing nothing touches. */
static size_t stack_used_by(void *(*fn)(void *), void *arg)
{
	size_t used[2];
	for (int pass = 0; pass < 2; pass++) {
		unsigned char *stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE,
					    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (stack == MAP_FAILED)
			exit(1);
		memset(stack, PAINT, STACK_SIZE);
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		pthread_attr_setstack(&attr, stack, STACK_SIZE);
		pthread_t thread;
		/* pass 0: a thread that returns at once, the baseline */
		if (pthread_create(&thread, &attr, pass ? fn : idle, arg) != 0)
			exit(1);
		pthread_join(thread, NULL);
		size_t untouched = 0;
		while (untouched < STACK_SIZE && stack[untouched] == PAINT)
			untouched++;
		used[pass] = STACK_SIZE - untouched;
		munmap(stack, STACK_SIZE);
	}
	return used[1] > used[0] ? used[1] - used[0] : 0;
}

static uintptr_t libc_addresses[ADDRESSES];
static char line[1024];

/* The first lookups: listing the modules, the program's own function, then
 * libc with file:line. */
static void *first_lookups(void *arg)
{
	double *times = arg;
	double t0 = now_us();
	symbolize_warm_up();
	double t1 = now_us();
	symbolize_code((uintptr_t)&stack_used_by + 1, line, sizeof line);
	double t2 = now_us();
	symbolize_code(libc_addresses[0], line, sizeof line);
	double t3 = now_us();
	times[0] = t1 - t0, times[1] = t2 - t1, times[2] = t3 - t2;
	return NULL;
}

static void *steady_lookups(void *arg)
{
	(void)arg;
	for (int i = 0; i < ADDRESSES; i++)
		symbolize_code(libc_addresses[i], line, sizeof line);
	return NULL;
}

int main(void)
{
	/* code addresses spread over libc's functions */
	struct module *libc = module_containing((uintptr_t)&pthread_mutex_lock);
	if (libc == NULL)
		return 1;
	uintptr_t start = libc->low + 0x28000, span = 0x140000; /* its .text */
	for (int i = 0; i < ADDRESSES; i++)
		libc_addresses[i] = start + (uintptr_t)i * (span / ADDRESSES) + 1;
	libc_addresses[0] = (uintptr_t)&pthread_mutex_lock + 8;
	/* forget what module_containing() just listed: measure from nothing */
	symbolize_forget_range(0, UINTPTR_MAX);

	double times[3];
	size_t first_stack = stack_used_by(first_lookups, times);
	printf("first lookups (thread CPU time): listing the modules %.0f us, a function of this\n"
	       "  program with file:line %.0f us, then libc with file:line (maps libc and its\n"
	       "  debug file, inflates and decodes) %.1f ms\n",
	       times[0], times[1], times[2] / 1e3);
	printf("  %s\n", line);
	libc = module_containing((uintptr_t)&pthread_mutex_lock);
	printf("libc module memory: %zu KiB mapped (symbols %zu, line sequences %zu, files %zu)\n",
	       libc->arena.mapped / 1024, libc->symbols.count, libc->lines.sequence_count,
	       libc->lines.file_count);

	size_t steady_stack = stack_used_by(steady_lookups, NULL);
	char buf[512];
	double best[3] = { 1e30, 1e30, 1e30 };
	for (int round = 0; round < 5; round++) {
		double t0 = now_us();
		for (int i = 0; i < LOOKUPS; i++)
			symbolize_code(libc_addresses[i % ADDRESSES], buf, sizeof buf);
		double t1 = now_us();
		for (int i = 0; i < LOOKUPS; i++)
			symbolize_function(libc_addresses[i % ADDRESSES], buf, sizeof buf);
		double t2 = now_us();
		for (int i = 0; i < LOOKUPS; i++)
			symbolize_data((uintptr_t)&line + (uintptr_t)(i % 64), buf, sizeof buf);
		double t3 = now_us();
		double took[3] = { t1 - t0, t2 - t1, t3 - t2 };
		for (int k = 0; k < 3; k++)
			best[k] = took[k] < best[k] ? took[k] : best[k];
	}
	printf("later lookups (best of 5 rounds, %d addresses over libc): symbolize_code "
	       "(function + file:line) %.0f ns, symbolize_function %.0f ns, symbolize_data %.0f ns\n",
	       ADDRESSES, best[0] * 1e3 / LOOKUPS, best[1] * 1e3 / LOOKUPS, best[2] * 1e3 / LOOKUPS);
	printf("stack: first lookups %zu bytes, later lookups %zu bytes\n", first_stack, steady_stack);
	return 0;
}
