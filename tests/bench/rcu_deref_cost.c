/*
 * rcu_deref_cost.c - what remembering a reader's dereferences costs, and
 * what checking free() against them costs (the "RCU-protected object freed
 * while a reader holds it" check).
 *
 * memb flavor through liburcu's exported symbols (no _LGPL_SOURCE), so the
 * preloaded tracer sees every rcu_read_lock(), rcu_dereference() and
 * rcu_read_unlock(). Always two threads alive (the second one's role
 * depends on the workload), as in a real program:
 *
 *   section1   rcu_read_lock(); rcu_dereference() x1; rcu_read_unlock()
 *   section4   the same with four dereferences of four pointers
 *   free-idle  malloc(32) + free() while the other thread, a reader that
 *              dereferenced earlier, sits outside any section
 *   free-busy  malloc(32) + free() while the other thread runs section1 in
 *              a loop: some reader is always in a section with a dereference
 *
 * Usage: rcu_deref_cost WORKLOAD [N]. Prints "WORKLOAD ns/op" and exits 0.
 * tests/bench/run-deref-bench.sh runs it plain and preloaded.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <urcu.h>

struct node {
	unsigned long value;
};

static struct node *gp[4];
static atomic_int stop;
static sem_t other_ready;
static volatile unsigned long sink;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void section1(void)
{
	rcu_read_lock();
	sink += rcu_dereference(gp[0])->value;
	rcu_read_unlock();
}

static void section4(void)
{
	rcu_read_lock();
	sink += rcu_dereference(gp[0])->value + rcu_dereference(gp[1])->value +
		rcu_dereference(gp[2])->value + rcu_dereference(gp[3])->value;
	rcu_read_unlock();
}

/* The second thread: a reader that read once and now idles, or one that
 * reads all the time. */
static void *other_thread(void *arg)
{
	int busy = *(int *)arg;
	rcu_register_thread();
	section1();
	sem_post(&other_ready);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (busy) {
			section1();
		} else {
			struct timespec t = { 0, 1000000 };
			nanosleep(&t, NULL);
		}
	}
	rcu_unregister_thread();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s section1|section4|free-idle|free-busy [N]\n", argv[0]);
		return 2;
	}
	const char *w = argv[1];
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 10) : 10000000UL;
	for (int i = 0; i < 4; i++) {
		gp[i] = malloc(sizeof(*gp[i]));
		gp[i]->value = (unsigned long)i;
	}
	int busy = !strcmp(w, "free-busy");
	pthread_t t;
	sem_init(&other_ready, 0, 0);
	if (pthread_create(&t, NULL, other_thread, &busy))
		return 1;
	sem_wait(&other_ready);
	rcu_register_thread();
	/* Warm up: the thread's first dereference takes its set. */
	section1();
	double start = now();
	if (!strcmp(w, "section1")) {
		for (unsigned long i = 0; i < n; i++)
			section1();
	} else if (!strcmp(w, "section4")) {
		for (unsigned long i = 0; i < n; i++)
			section4();
	} else if (!strcmp(w, "free-idle") || busy) {
		for (unsigned long i = 0; i < n; i++) {
			void *p = malloc(32);
			__asm__ volatile("" : : "r"(p) : "memory");
			free(p);
		}
	} else {
		fprintf(stderr, "unknown workload %s\n", w);
		return 2;
	}
	double elapsed = now() - start;
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	rcu_unregister_thread();
	printf("%s %.1f\n", w, elapsed * 1e9 / (double)n);
	return 0;
}
