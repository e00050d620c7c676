/* bench.h - what the bench workloads share: their count arguments, the clock
 * of their timed phases, and the one line they print per phase.
 *
 * A workload prints on stdout one line per timed phase and nothing else:
 *
 *     phase=<name> ops=<N> seconds=<S> ns_per_op=<X>
 *
 * seconds is the wall time (CLOCK_MONOTONIC) of that phase alone, taken
 * inside the process once every thread exists: process start-up (the
 * loading of a preload, of Valgrind, of a sanitizer runtime), thread creation
 * and teardown are not in it. ns_per_op is seconds / ops: the wall time per
 * operation with all the workload's threads running together. An error goes
 * to stderr and makes the workload exit 1; a usage error exits 2.
 * tests/bench/run-bench.sh, run-bench-peers.sh and tests/test_bench_smoke.c
 * read these lines. */
#ifndef BENCH_H
#define BENCH_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* A positive decimal count; -1 for anything else. */
static inline int bench_parse_count(const char *s, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v == 0 || s[0] == '-')
		return -1;
	*out = v;
	return 0;
}

static inline double bench_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static inline void bench_print_phase(const char *name, unsigned long ops, double seconds)
{
	printf("phase=%s ops=%lu seconds=%.6f ns_per_op=%.2f\n", name, ops, seconds,
	       seconds * 1e9 / (double)ops);
	fflush(stdout);
}

/* xorshift64*: a thread's own random numbers, no shared state, no lock. */
static inline uint64_t bench_random(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

#endif
