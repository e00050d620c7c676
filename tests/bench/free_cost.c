/*
 * free_cost.c - a malloc/free-heavy loop: what a checker's free() hook costs.
 * A lock-order checker must forget the lock instances that lived in memory
 * being freed (the kernel's debug_check_no_locks_freed()), so it sees every
 * free(), most of them of blocks that never held a lock.
 *
 * Two threads, each with WINDOW live blocks of 16..256 bytes: every
 * iteration frees the oldest block, allocates a new one of a random size and
 * writes its first and last bytes.  One op is one malloc() + free().  Two
 * timed phases, each from a barrier to a barrier, both threads running:
 *
 *   nolock  no block holds a lock (nor does any other heap memory of the
 *           program): the hook's cost on memory where no lock ever lived.
 *   lock    every LOCK_EVERY-th new block is an object whose first member is
 *           a pthread_mutex_t initialized by pthread_mutex_init() at one call
 *           site, freed without pthread_mutex_destroy() (glibc allows it, and
 *           programs do it), so free() is what makes the checker forget it.
 *           The other blocks share its heap regions.  The checker's cost of
 *           pthread_mutex_init() is in this phase too.
 *
 * The nolock phase runs first, so no lock has been in that heap before it.
 * Each thread checks a stamp it wrote in each block when the block is freed:
 * a wrong stamp would mean the allocator handed out a live block.
 *
 * Usage: free_cost [N]   (N iterations per thread and phase)
 * Prints its two phase lines (bench.h): nolock, lock; exits 0.  On error
 * prints to stderr and exits 1.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* Tuned for a plain phase of about 0.25 s on the project's 2-core machine. */
#define DEFAULT_ITERS	6000000UL
#define THREADS		2
#define WINDOW		64		/* live blocks per thread */
#define MIN_SIZE	16
#define MAX_SIZE	256
#define LOCK_EVERY	8

struct locked_block {
	pthread_mutex_t lock;
	unsigned char payload[];
};

/* What every block starts with (after the mutex in a locked one). */
struct block_head {
	uint64_t stamp;
};

struct worker {
	pthread_t thread;
	uint64_t seed;
	int err;
	const char *err_what;
} __attribute__((aligned(128)));

static unsigned long n_iters = DEFAULT_ITERS;
static pthread_barrier_t phase_barrier;

static int barrier_wait(void)
{
	int rc = pthread_barrier_wait(&phase_barrier);

	return rc == PTHREAD_BARRIER_SERIAL_THREAD ? 0 : rc;
}

/* The one init site of the class of every block lock. */
static __attribute__((noinline)) void *locked_block_new(size_t size)
{
	struct locked_block *b = malloc(sizeof(*b) + size);

	if (b != NULL && pthread_mutex_init(&b->lock, NULL) != 0) {
		free(b);
		return NULL;
	}
	return b;
}

struct slot {
	unsigned char *block;
	struct block_head *head;	/* inside block */
	size_t size;			/* bytes usable after head */
};

static int slot_fill(struct slot *s, uint64_t *seed, uint64_t stamp, int with_lock)
{
	size_t size = MIN_SIZE + (size_t)(bench_random(seed) % (MAX_SIZE - MIN_SIZE + 1));
	size_t offset = with_lock ? sizeof(struct locked_block) : 0;

	s->block = with_lock ? locked_block_new(size) : malloc(size);
	if (s->block == NULL)
		return -1;
	s->head = (struct block_head *)(s->block + offset);
	s->head->stamp = stamp;
	s->size = size;
	s->block[offset + size - 1] = (unsigned char)stamp;
	return 0;
}

static int slot_free(struct slot *s, uint64_t stamp)
{
	int ok = s->head->stamp == stamp &&
		 s->block[(size_t)((unsigned char *)s->head - s->block) + s->size - 1] ==
			 (unsigned char)stamp;

	free(s->block);
	s->block = NULL;
	return ok ? 0 : -1;
}

/* One phase: n_iters frees and mallocs through the window. */
static int churn(struct slot *window, uint64_t *seed, uint64_t *stamps, int with_locks,
		 const char **what)
{
	for (unsigned long i = 0; i < n_iters; i++) {
		struct slot *s = &window[i % WINDOW];
		uint64_t stamp = bench_random(seed);

		if (slot_free(s, stamps[i % WINDOW]) != 0) {
			*what = "a block's stamp changed while it was live";
			return -1;
		}
		if (slot_fill(s, seed, stamp, with_locks && i % LOCK_EVERY == 0) != 0) {
			*what = "out of memory";
			return -1;
		}
		stamps[i % WINDOW] = stamp;
	}
	return 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct slot window[WINDOW];
	uint64_t stamps[WINDOW];
	int phase, rc;

	memset(window, 0, sizeof(window));
	for (int k = 0; k < WINDOW; k++) {
		stamps[k] = bench_random(&w->seed);
		if (slot_fill(&window[k], &w->seed, stamps[k], 0) != 0) {
			w->err_what = "out of memory";
			w->err = 1;
		}
	}
	/* Two phases, each between two barriers that main times. The barriers
	 * are waited for even after an error, so main never hangs. */
	for (phase = 0; phase < 2; phase++) {
		if ((rc = barrier_wait()) != 0) {
			w->err_what = "pthread_barrier_wait";
			w->err = 1;
			return NULL;
		}
		if (w->err == 0 && churn(window, &w->seed, stamps, phase == 1, &w->err_what) != 0)
			w->err = 1;
		if ((rc = barrier_wait()) != 0) {
			w->err_what = "pthread_barrier_wait";
			w->err = 1;
			return NULL;
		}
	}
	for (int k = 0; k < WINDOW; k++)
		if (window[k].block != NULL && slot_free(&window[k], stamps[k]) != 0 && w->err == 0) {
			w->err_what = "a block's stamp changed while it was live";
			w->err = 1;
		}
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker w[THREADS];
	double t[4];
	int i, rc, status = 0;

	if (argc > 2 || (argc == 2 && bench_parse_count(argv[1], &n_iters) != 0)) {
		fprintf(stderr, "usage: %s [ITERATIONS_PER_THREAD>0]\n", argv[0]);
		return 2;
	}
	if ((rc = pthread_barrier_init(&phase_barrier, NULL, THREADS + 1)) != 0) {
		fprintf(stderr, "free_cost: pthread_barrier_init: %s\n", strerror(rc));
		return 1;
	}
	for (i = 0; i < THREADS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].seed = 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);
		if ((rc = pthread_create(&w[i].thread, NULL, worker_main, &w[i])) != 0) {
			fprintf(stderr, "free_cost: pthread_create: %s\n", strerror(rc));
			return 1;
		}
	}
	for (i = 0; i < 4; i++) {
		if ((rc = barrier_wait()) != 0) {
			fprintf(stderr, "free_cost: pthread_barrier_wait: %s\n", strerror(rc));
			return 1;
		}
		t[i] = bench_now();
	}
	for (i = 0; i < THREADS; i++) {
		if ((rc = pthread_join(w[i].thread, NULL)) != 0) {
			fprintf(stderr, "free_cost: pthread_join: %s\n", strerror(rc));
			return 1;
		}
		if (w[i].err) {
			fprintf(stderr, "free_cost: thread %d: %s\n", i, w[i].err_what);
			status = 1;
		}
	}
	if (status == 0) {
		bench_print_phase("nolock", THREADS * n_iters, t[1] - t[0]);
		bench_print_phase("lock", THREADS * n_iters, t[3] - t[2]);
	}
	pthread_barrier_destroy(&phase_barrier);
	return status;
}
