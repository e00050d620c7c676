/*
 * many_locks.c - many live locks of one class, taken in address-ordered
 * pairs: what a lock-order checker pays when the program's locks do not fit
 * in any cache of its own (per-object locks: connections, accounts, inodes).
 *
 * Creation phase (timed): main allocates LOCKS objects, each by its own
 * malloc() and each with a mutex initialized by pthread_mutex_init() at one
 * call site (object_new), so they are one lock class.  One op is one object.
 *
 * Lock phases (timed): two threads each take PAIRS random pairs of distinct
 * objects, always the lower address first (the correct way to nest two locks
 * of one class, as in a transfer between two accounts), and count one on
 * each object under both locks:
 *
 *     lock(lo); lock(hi); lo->count++; hi->count++; unlock(hi); unlock(lo);
 *
 * One op is one pair.  The "lock-2k" phase runs first, when only the first
 * 2,000 objects exist, over those; the "lock" phase runs after the rest are
 * made, over all of them: what a lock op costs with 200,000 live locks
 * against what it costs with 2,000 (for the tracer: its tables, for
 * everyone: the caches).  Collisions between the two threads are rare (two
 * random pairs among LOCKS objects), so this measures the cost of the calls
 * and of the cache misses of objects spread over a large heap, not waiting.
 * At the end every count must add up to 2 x the pairs taken: a lost update
 * would mean a pair was not mutually excluded.  A lock-order checker must
 * report nothing: no two instances are ever taken in both orders.
 *
 * The workers exist (blocked on a barrier) during the creation phase, so
 * the process is multi-threaded throughout.  Teardown (destroy, free) is not
 * timed.
 *
 * Usage: many_locks [PAIRS [LOCKS]]   (PAIRS per thread and phase, LOCKS
 * objects)
 * Prints its three phase lines (bench.h): create, lock-2k, lock; exits 0.  On
 * error prints to stderr and exits 1.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* Tuned for a plain lock phase of about 0.3 s on the project's 2-core
 * machine (each pair misses the caches twice). */
#define DEFAULT_PAIRS	1500000UL
#define DEFAULT_LOCKS	200000UL
#define SMALL_LOCKS	2000UL		/* the lock-2k phase's */
#define THREADS		2
#define ROUNDS		2		/* lock-2k, then lock */

struct object {
	pthread_mutex_t lock;
	unsigned long count;		/* under lock */
};

struct worker {
	pthread_t thread;
	uint64_t seed;
	unsigned long pairs;
	unsigned long done;
	int err;
	const char *err_what;
} __attribute__((aligned(128)));

static struct object **objects;
static unsigned long n_objects, n_round_objects[ROUNDS];
static pthread_barrier_t start_barrier[ROUNDS], end_barrier[ROUNDS];

/* The one init site of every lock of the class. */
static __attribute__((noinline)) struct object *object_new(void)
{
	struct object *o = malloc(sizeof(*o));

	if (o == NULL)
		return NULL;
	if (pthread_mutex_init(&o->lock, NULL) != 0) {
		free(o);
		return NULL;
	}
	o->count = 0;
	return o;
}

static int barrier_wait(pthread_barrier_t *b)
{
	int rc = pthread_barrier_wait(b);

	return rc == PTHREAD_BARRIER_SERIAL_THREAD ? 0 : rc;
}

/* One round: PAIRS address-ordered pairs among the first n objects.
 * Returns 0, or the error of the call named in w->err_what. */
static int take_pairs(struct worker *w, unsigned long n)
{
	for (unsigned long i = 0; i < w->pairs; i++) {
		uint64_t r = bench_random(&w->seed);
		unsigned long a = (unsigned long)(r % n);
		unsigned long b = (unsigned long)((r >> 32) % n);
		struct object *lo, *hi;
		int rc;

		if (b == a)
			b = (b + 1) % n;
		lo = objects[a];
		hi = objects[b];
		if ((uintptr_t)hi < (uintptr_t)lo) {
			struct object *t = lo;

			lo = hi;
			hi = t;
		}
		if ((rc = pthread_mutex_lock(&lo->lock)) != 0) {
			w->err_what = "pthread_mutex_lock(lower)";
			return rc;
		}
		if ((rc = pthread_mutex_lock(&hi->lock)) != 0) {
			pthread_mutex_unlock(&lo->lock);
			w->err_what = "pthread_mutex_lock(higher)";
			return rc;
		}
		lo->count++;
		hi->count++;
		if ((rc = pthread_mutex_unlock(&hi->lock)) != 0 ||
		    (rc = pthread_mutex_unlock(&lo->lock)) != 0) {
			w->err_what = "pthread_mutex_unlock";
			return rc;
		}
		w->done++;
	}
	return 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int rc;

	for (int round = 0; round < ROUNDS; round++) {
		/* Wait for the objects (created by main meanwhile). */
		if ((rc = barrier_wait(&start_barrier[round])) != 0) {
			w->err = rc;
			w->err_what = "pthread_barrier_wait";
			return NULL;
		}
		if (w->err == 0)
			w->err = take_pairs(w, n_round_objects[round]);
		/* Main stops the clock here, before any thread goes on. */
		if ((rc = barrier_wait(&end_barrier[round])) != 0 && w->err == 0) {
			w->err = rc;
			w->err_what = "pthread_barrier_wait";
		}
	}
	return NULL;
}

/* Makes objects [from, to). Returns 0, or 1 having said why. */
static int make_objects(unsigned long from, unsigned long to)
{
	for (unsigned long i = from; i < to; i++) {
		objects[i] = object_new();
		if (objects[i] == NULL) {
			fprintf(stderr, "many_locks: out of memory at object %lu\n", i);
			return 1;
		}
	}
	return 0;
}

/* Lets the workers run one round and waits for its end. */
static int run_round(int round)
{
	int rc;

	if ((rc = barrier_wait(&start_barrier[round])) != 0 || (rc = barrier_wait(&end_barrier[round])) != 0) {
		fprintf(stderr, "many_locks: pthread_barrier_wait: %s\n", strerror(rc));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct worker w[THREADS];
	unsigned long pairs = DEFAULT_PAIRS, i, sum = 0;
	double t0, t1, t2, t3, t4;
	int t, rc, status = 0;

	if (argc > 3 || (argc >= 2 && bench_parse_count(argv[1], &pairs) != 0) ||
	    (argc >= 3 && bench_parse_count(argv[2], &n_objects) != 0)) {
		fprintf(stderr, "usage: %s [PAIRS_PER_THREAD>0 [LOCKS>1]]\n", argv[0]);
		return 2;
	}
	if (argc < 3)
		n_objects = DEFAULT_LOCKS;
	if (n_objects < 2) {
		fprintf(stderr, "many_locks: LOCKS must be at least 2\n");
		return 2;
	}
	objects = calloc(n_objects, sizeof(*objects));
	if (objects == NULL) {
		fprintf(stderr, "many_locks: out of memory\n");
		return 1;
	}
	n_round_objects[0] = n_objects < SMALL_LOCKS ? n_objects : SMALL_LOCKS;
	n_round_objects[1] = n_objects;
	for (int round = 0; round < ROUNDS; round++)
		if ((rc = pthread_barrier_init(&start_barrier[round], NULL, THREADS + 1)) != 0 ||
		    (rc = pthread_barrier_init(&end_barrier[round], NULL, THREADS + 1)) != 0) {
			fprintf(stderr, "many_locks: pthread_barrier_init: %s\n", strerror(rc));
			return 1;
		}
	for (t = 0; t < THREADS; t++) {
		memset(&w[t], 0, sizeof(w[t]));
		w[t].pairs = pairs;
		w[t].seed = 0x9e3779b97f4a7c15ULL * (uint64_t)(t + 1);
		rc = pthread_create(&w[t].thread, NULL, worker_main, &w[t]);
		if (rc != 0) {
			fprintf(stderr, "many_locks: pthread_create: %s\n", strerror(rc));
			return 1;	/* a worker may be waiting: just go */
		}
	}

	/* 2,000 objects, the small round over them, the rest, the big round. */
	t0 = bench_now();
	if (make_objects(0, n_round_objects[0]) != 0)
		return 1;
	t1 = bench_now();
	if (run_round(0) != 0)
		return 1;
	t2 = bench_now();
	if (make_objects(n_round_objects[0], n_objects) != 0)
		return 1;
	t3 = bench_now();
	if (run_round(1) != 0)
		return 1;
	t4 = bench_now();

	for (t = 0; t < THREADS; t++) {
		if ((rc = pthread_join(w[t].thread, NULL)) != 0) {
			fprintf(stderr, "many_locks: pthread_join: %s\n", strerror(rc));
			return 1;
		}
		if (w[t].err != 0) {
			fprintf(stderr, "many_locks: thread %d: %s: %s\n", t, w[t].err_what,
				strerror(w[t].err));
			status = 1;
		} else if (w[t].done != ROUNDS * pairs) {
			fprintf(stderr, "many_locks: thread %d took %lu of %lu pairs\n", t,
				w[t].done, ROUNDS * pairs);
			status = 1;
		}
	}
	for (i = 0; i < n_objects; i++)
		sum += objects[i]->count;
	if (status == 0 && sum != 2 * THREADS * ROUNDS * pairs) {
		fprintf(stderr, "many_locks: counts add up to %lu, expected %lu: a pair was not "
			"mutually excluded\n", sum, 2 * THREADS * ROUNDS * pairs);
		status = 1;
	}
	if (status == 0) {
		bench_print_phase("create", n_objects, (t1 - t0) + (t3 - t2));
		bench_print_phase("lock-2k", THREADS * pairs, t2 - t1);
		bench_print_phase("lock", THREADS * pairs, t4 - t3);
	}

	for (i = 0; i < n_objects; i++) {
		pthread_mutex_destroy(&objects[i]->lock);
		free(objects[i]);
	}
	free(objects);
	for (int round = 0; round < ROUNDS; round++) {
		pthread_barrier_destroy(&start_barrier[round]);
		pthread_barrier_destroy(&end_barrier[round]);
	}
	return status;
}
