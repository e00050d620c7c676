/*
 * rcu_read_heavy.c - liburcu read-side micro-benchmark for lockdep-rcu.
 *
 * Uses the default ("memb", sys_membarrier) liburcu flavor through its
 * EXPORTED symbols: _LGPL_SOURCE is deliberately NOT defined, so
 * rcu_read_lock()/rcu_read_unlock() are calls to urcu_memb_read_lock()/
 * urcu_memb_read_unlock(), rcu_dereference() calls rcu_dereference_sym() and
 * rcu_assign_pointer() calls rcu_set_pointer_sym().  Those are the calls an
 * LD_PRELOAD checker can interpose; the inlined _LGPL_SOURCE versions would
 * be invisible to it.
 *
 * Threads:
 *  - reader  (registered): loops N times over
 *        rcu_read_lock(); p = rcu_dereference(gp); read p; rcu_read_unlock();
 *    and checks every snapshot it read (see struct node).  Every K
 *    iterations it kicks the updater through a semaphore.
 *  - updater (registered): for each kick, publishes a fresh node with
 *    rcu_assign_pointer(), waits for a grace period with synchronize_rcu(),
 *    poisons and frees the old node.  It stops once the reader is done.
 *
 * Driving the updates from the reader's iteration count (rather than from a
 * timer) makes the amount of work identical in a plain and in a preloaded
 * run (about N/K grace periods each), so the time ratio between the two is a
 * pure overhead ratio.  K defaults to roughly 1 ms worth of plain reader
 * iterations, i.e. a few hundred grace periods per run, which also keeps
 * synchronize_rcu() and the grace-period machinery exercised while the read
 * side dominates the cost.
 *
 * The timed phase is the reader's loop, from its first read to its last
 * (the updater's grace periods run concurrently); one op is one read-side
 * critical section.
 *
 * Usage: rcu_read_heavy [N [K]]   (N reader iterations, K iterations/update)
 * Prints its phase line (bench.h) and exits 0; on error prints to stderr,
 * exits 1.
 *
 * Build: cc -Wall -Wextra -O2 -pthread -o rcu_read_heavy rcu_read_heavy.c \
 *            -lurcu -lurcu-common
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <urcu.h>	/* default flavor = memb; no _LGPL_SOURCE on purpose */

#include "bench.h"

/*
 * Defaults, tuned so that a plain run takes roughly 0.4 s on the project's
 * 2-core CI machine, with about one update per millisecond.
 */
#define DEFAULT_ITERS		20000000UL
#define DEFAULT_UPDATE_EVERY	50000UL

/* Written into a node just before it is freed. */
#define POISON			0x5a5a5a5a5a5a5a5aUL

/*
 * The RCU-protected object.  Invariant for a live node: check == ~value.
 * value grows by one with every update, so a reader must see it never
 * decrease.  A reader that saw a freed (poisoned or reused) node would find
 * the invariant broken.  This is a sanity check, not a proof: the reader's
 * window between fetching the pointer and reading the node is only a few
 * nanoseconds, so a broken grace period (say, a synchronize_rcu() that does
 * not wait) is caught only by chance.
 */
struct node {
	unsigned long value;
	unsigned long check;
};

static struct node *gp;			/* the RCU-protected pointer */

static unsigned long n_iters = DEFAULT_ITERS;
static unsigned long update_every = DEFAULT_UPDATE_EVERY;

static sem_t kick;			/* reader -> updater: "update now" */
static atomic_bool reader_done;

/* Results, each written by one thread and read by main after the joins. */
static unsigned long reader_last;	/* last value the reader saw */
static unsigned long reader_changes;	/* how often it saw a new value */
static int reader_failed;
static double reader_seconds;		/* the reader's loop, wall time */
static unsigned long updates;		/* grace periods completed */
static int updater_failed;

static struct node *node_new(unsigned long value)
{
	struct node *n = malloc(sizeof(*n));

	if (n != NULL) {
		n->value = value;
		n->check = ~value;
	}
	return n;
}

static void *reader_main(void *arg)
{
	unsigned long i, since_kick = 0, last = 0, changes = 0;

	double t0;

	(void)arg;
	rcu_register_thread();

	t0 = bench_now();
	for (i = 0; i < n_iters; i++) {
		struct node *p;
		unsigned long v, c;

		rcu_read_lock();
		p = rcu_dereference(gp);
		v = p->value;
		c = p->check;
		rcu_read_unlock();

		if (c != ~v || v < last) {
			fprintf(stderr,
				"rcu_read_heavy: reader saw a bad node at "
				"iteration %lu: value %#lx check %#lx "
				"(previous value %#lx)\n", i, v, c, last);
			reader_failed = 1;
			break;
		}
		changes += (v != last);
		last = v;

		if (++since_kick == update_every) {
			since_kick = 0;
			if (sem_post(&kick) != 0) {
				perror("rcu_read_heavy: sem_post");
				reader_failed = 1;
				break;
			}
		}
	}

	reader_seconds = bench_now() - t0;
	reader_last = last;
	reader_changes = changes;

	/* Tell the updater to stop, and wake it if it is waiting. */
	atomic_store_explicit(&reader_done, 1, memory_order_release);
	if (sem_post(&kick) != 0) {
		perror("rcu_read_heavy: sem_post");
		reader_failed = 1;
	}

	rcu_unregister_thread();
	return NULL;
}

static void *updater_main(void *arg)
{
	/* Only this thread writes gp, so it may use its own copy of it. */
	struct node *cur = arg;
	unsigned long seq = cur->value;

	rcu_register_thread();

	for (;;) {
		struct node *n, *seen;

		if (sem_wait(&kick) != 0) {
			if (errno == EINTR)
				continue;
			perror("rcu_read_heavy: sem_wait");
			updater_failed = 1;
			break;
		}
		if (atomic_load_explicit(&reader_done, memory_order_acquire))
			break;

		n = node_new(++seq);
		if (n == NULL) {
			fprintf(stderr, "rcu_read_heavy: out of memory\n");
			updater_failed = 1;
			break;
		}
		rcu_assign_pointer(gp, n);

		/* Read it back as a reader would: must be the new node. */
		rcu_read_lock();
		seen = rcu_dereference(gp);
		rcu_read_unlock();
		if (seen != n) {
			fprintf(stderr, "rcu_read_heavy: updater read back "
				"%p, expected %p\n", (void *)seen, (void *)n);
			updater_failed = 1;
			/* Keep going: the old node must still be reclaimed. */
		}

		/* Wait until no reader can still hold the old node... */
		synchronize_rcu();
		/* ...then poison it (to catch late readers) and free it. */
		cur->value = POISON;
		cur->check = POISON;
		free(cur);
		cur = n;
		updates++;
	}

	rcu_unregister_thread();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t reader, updater;
	struct node *first;
	int rc, status = 0;

	if (argc > 3 ||
	    (argc >= 2 && bench_parse_count(argv[1], &n_iters) != 0) ||
	    (argc >= 3 && bench_parse_count(argv[2], &update_every) != 0)) {
		fprintf(stderr, "usage: %s [ITERATIONS>0 [ITERATIONS_PER_UPDATE>0]]\n",
			argv[0]);
		return 2;
	}

	first = node_new(0);
	if (first == NULL) {
		fprintf(stderr, "rcu_read_heavy: out of memory\n");
		return 1;
	}
	rcu_assign_pointer(gp, first);	/* published before any thread runs */

	if (sem_init(&kick, 0, 0) != 0) {
		perror("rcu_read_heavy: sem_init");
		return 1;
	}

	rc = pthread_create(&updater, NULL, updater_main, first);
	if (rc != 0) {
		fprintf(stderr, "rcu_read_heavy: pthread_create: %s\n",
			strerror(rc));
		return 1;
	}
	rc = pthread_create(&reader, NULL, reader_main, NULL);
	if (rc != 0) {
		fprintf(stderr, "rcu_read_heavy: pthread_create: %s\n",
			strerror(rc));
		return 1;	/* the updater is blocked in sem_wait */
	}

	if ((rc = pthread_join(reader, NULL)) != 0 ||
	    (rc = pthread_join(updater, NULL)) != 0) {
		fprintf(stderr, "rcu_read_heavy: pthread_join: %s\n",
			strerror(rc));
		return 1;
	}

	if (reader_failed || updater_failed)
		status = 1;

	/*
	 * Cross-checks once both threads are gone: the reader cannot have
	 * seen a value that was never published, nor more distinct values
	 * than there were publications; and the updater cannot have done
	 * more updates than the reader asked for.
	 */
	if (reader_last > updates || reader_changes > updates ||
	    updates > n_iters / update_every) {
		fprintf(stderr, "rcu_read_heavy: inconsistent result: "
			"reader last value %lu, %lu changes seen, %lu updates "
			"(at most %lu requested)\n", reader_last,
			reader_changes, updates, n_iters / update_every);
		status = 1;
	}

	if (status == 0)
		bench_print_phase("read", n_iters, reader_seconds);

	free(gp);	/* the last published node; no reader is left */
	sem_destroy(&kick);
	return status;
}
