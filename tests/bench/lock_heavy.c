/*
 * lock_heavy.c - pthread mutex micro-benchmark for lockdep-rcu.
 *
 * Two worker threads each loop N times over a nested acquisition of their
 * OWN pair of mutexes:
 *
 *     lock(A); lock(B); unlock(B); unlock(A);
 *
 * The threads share no mutex, so there is no contention: what is measured is
 * the per-call cost of pthread_mutex_lock/unlock, i.e. exactly what an
 * LD_PRELOAD interposer adds (lock-order bookkeeping, held-lock stacks, ...).
 * Both workers are started together through a barrier and stay alive for the
 * whole run, so the process is multi-threaded throughout (glibc and the
 * checker take their multi-threaded paths).  The timed phase runs from that
 * barrier to the last join; one op is one iteration of one thread.
 *
 * Every thread always takes A before B, so a lock-order checker must not
 * report anything here.
 *
 * Usage: lock_heavy [N]      (N = iterations per thread, default below)
 * Prints its phase line (bench.h) and exits 0; on error prints to stderr,
 * exits 1.
 *
 * Build: cc -Wall -Wextra -O2 -pthread -o lock_heavy lock_heavy.c
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/*
 * Default iterations per thread.  Tuned so that a plain (non-preloaded) run
 * takes roughly 0.4 s on the project's 2-core CI machine.
 */
#define DEFAULT_ITERS 8000000UL

/*
 * One per thread.  Aligned (and therefore padded) to 128 bytes so the two
 * workers' mutexes never share a cache line (or an adjacent-line prefetch
 * pair): false sharing would add cross-core traffic that the benchmark is
 * explicitly meant not to have.
 */
struct worker {
	pthread_t thread;
	pthread_mutex_t a;		/* outer lock */
	pthread_mutex_t b;		/* inner lock */
	unsigned long iters;
	unsigned long done;		/* iterations completed (sanity check) */
	int err;			/* first pthread error, 0 if none */
	const char *err_what;
} __attribute__((aligned(128)));

static pthread_barrier_t start_barrier;

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned long i;
	int rc;

	/* Wait until both workers (and main's clock) are there, so neither
	 * runs alone. */
	rc = pthread_barrier_wait(&start_barrier);
	if (rc != 0 && rc != PTHREAD_BARRIER_SERIAL_THREAD) {
		w->err = rc;
		w->err_what = "pthread_barrier_wait";
		return NULL;
	}

	for (i = 0; i < w->iters; i++) {
		/*
		 * Checking every return value costs a predictable branch and
		 * keeps the loop honest: a misbehaving interposer shows up
		 * as an error rather than as a suspiciously fast run.
		 */
		if ((rc = pthread_mutex_lock(&w->a)) != 0) {
			w->err_what = "pthread_mutex_lock(A)";
			break;
		}
		if ((rc = pthread_mutex_lock(&w->b)) != 0) {
			w->err_what = "pthread_mutex_lock(B)";
			break;
		}
		if ((rc = pthread_mutex_unlock(&w->b)) != 0) {
			w->err_what = "pthread_mutex_unlock(B)";
			break;
		}
		if ((rc = pthread_mutex_unlock(&w->a)) != 0) {
			w->err_what = "pthread_mutex_unlock(A)";
			break;
		}
	}
	w->err = rc;
	w->done = i;
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker w[2];
	unsigned long iters = DEFAULT_ITERS;
	int i, rc, status = 0;
	double t0, t1;

	if (argc > 2 || (argc == 2 && bench_parse_count(argv[1], &iters) != 0)) {
		fprintf(stderr, "usage: %s [ITERATIONS>0]\n", argv[0]);
		return 2;
	}

	rc = pthread_barrier_init(&start_barrier, NULL, 3);
	if (rc != 0) {
		fprintf(stderr, "lock_heavy: pthread_barrier_init: %s\n",
			strerror(rc));
		return 1;
	}

	for (i = 0; i < 2; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].iters = iters;
		/* Default (normal) mutexes: the common case in real code. */
		if ((rc = pthread_mutex_init(&w[i].a, NULL)) != 0 ||
		    (rc = pthread_mutex_init(&w[i].b, NULL)) != 0) {
			fprintf(stderr, "lock_heavy: pthread_mutex_init: %s\n",
				strerror(rc));
			return 1;
		}
	}

	for (i = 0; i < 2; i++) {
		rc = pthread_create(&w[i].thread, NULL, worker_main, &w[i]);
		if (rc != 0) {
			fprintf(stderr, "lock_heavy: pthread_create: %s\n",
				strerror(rc));
			/* Worker 0 (if any) is stuck in the barrier: bail out. */
			return 1;
		}
	}

	rc = pthread_barrier_wait(&start_barrier);
	if (rc != 0 && rc != PTHREAD_BARRIER_SERIAL_THREAD) {
		fprintf(stderr, "lock_heavy: pthread_barrier_wait: %s\n", strerror(rc));
		return 1;
	}
	t0 = bench_now();
	for (i = 0; i < 2; i++) {
		rc = pthread_join(w[i].thread, NULL);
		if (rc != 0) {
			fprintf(stderr, "lock_heavy: pthread_join: %s\n",
				strerror(rc));
			return 1;
		}
	}
	t1 = bench_now();

	for (i = 0; i < 2; i++) {
		if (w[i].err != 0) {
			fprintf(stderr, "lock_heavy: thread %d: %s: %s\n", i,
				w[i].err_what, strerror(w[i].err));
			status = 1;
		} else if (w[i].done != iters) {
			fprintf(stderr,
				"lock_heavy: thread %d did %lu of %lu iterations\n",
				i, w[i].done, iters);
			status = 1;
		}
	}
	if (status == 0)
		bench_print_phase("lock", 2 * iters, t1 - t0);

	for (i = 0; i < 2; i++) {
		pthread_mutex_destroy(&w[i].b);
		pthread_mutex_destroy(&w[i].a);
	}
	pthread_barrier_destroy(&start_barrier);
	return status;
}
