/*
 * lfht_lookup.c - a lookup-heavy liburcu hash table: four reader threads,
 * one updater, as a DNS server's zone lookups are.
 *
 * Readers (4): each loops N times over
 *
 *     rcu_read_lock(); cds_lfht_lookup(key); check the node; rcu_read_unlock();
 *
 * with keys spread over the table. Reader 0 kicks the updater every K of its
 * lookups through a semaphore.
 *
 * Updater (1): for each kick, under its mutex and in a read side, replaces
 * one entry with a new copy (cds_lfht_add_replace()) and frees the old one
 * after a grace period (call_rcu()). The work is the same in every run, about
 * N/K replacements, so the ratio of two runs' times is an overhead ratio.
 *
 * Built against liburcu's exported functions (no _LGPL_SOURCE): the calls a
 * preloaded checker sees in an unmodified binary, cds_lfht_lookup() among
 * them. Every node keeps check == ~key, and a lookup must find its key: a
 * failed one fails the run. Nothing here may be reported.
 *
 * Timed phase: from the start barrier until every reader is done. One op is
 * one read side with one lookup.
 *
 * Usage: lfht_lookup [N [K]]   (N lookups per reader, K lookups per update)
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu.h>
#include <urcu/rculfhash.h>

#include "bench.h"

/* Tuned for a plain run of about 0.3 s on the project's 2-core machine. */
#define DEFAULT_LOOKUPS		2000000UL
#define DEFAULT_LOOKUPS_PER_UPDATE	5000UL
#define READERS			4
#define KEYS			1024

struct item {
	unsigned long key;
	unsigned long check;		/* ~key */
	struct cds_lfht_node node;
	struct rcu_head rcu;
};

static struct cds_lfht *table;
static pthread_mutex_t update_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long n_lookups = DEFAULT_LOOKUPS;
static unsigned long lookups_per_update = DEFAULT_LOOKUPS_PER_UPDATE;
static pthread_barrier_t start_barrier;
static sem_t kick;
static atomic_bool readers_done;

struct reader {
	pthread_t thread;
	int index;
	unsigned long done;
	int failed;
} __attribute__((aligned(128)));

static unsigned long hash_of(unsigned long key)
{
	return key * 0x9E3779B97F4A7C15ul;
}

static int match(struct cds_lfht_node *node, const void *key)
{
	return caa_container_of(node, struct item, node)->key == *(const unsigned long *)key;
}

static struct item *item_new(unsigned long key)
{
	struct item *it = malloc(sizeof(*it));
	if (!it) {
		perror("lfht_lookup: malloc");
		exit(1);
	}
	it->key = key;
	it->check = ~key;
	cds_lfht_node_init(&it->node);
	return it;
}

static void item_free(struct rcu_head *head)
{
	free(caa_container_of(head, struct item, rcu));
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	unsigned long since_kick = 0;

	rcu_register_thread();
	pthread_barrier_wait(&start_barrier);
	for (unsigned long i = 0; i < n_lookups; i++) {
		unsigned long key = (i * 7 + (unsigned long)r->index * 131) % KEYS;
		struct cds_lfht_iter iter;
		struct cds_lfht_node *node;
		int ok;

		rcu_read_lock();
		cds_lfht_lookup(table, hash_of(key), match, &key, &iter);
		node = cds_lfht_iter_get_node(&iter);
		ok = node && caa_container_of(node, struct item, node)->check == ~key;
		rcu_read_unlock();
		if (!ok) {
			fprintf(stderr, "lfht_lookup: reader %d did not find key %lu\n", r->index, key);
			r->failed = 1;
			break;
		}
		r->done++;
		if (r->index == 0 && ++since_kick == lookups_per_update) {
			since_kick = 0;
			sem_post(&kick);
		}
	}
	rcu_unregister_thread();
	return NULL;
}

static void *updater_main(void *arg)
{
	unsigned long *updates = arg;

	rcu_register_thread();
	pthread_barrier_wait(&start_barrier);
	for (;;) {
		if (sem_wait(&kick) != 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (atomic_load_explicit(&readers_done, memory_order_acquire))
			break;
		unsigned long key = (*updates * 37) % KEYS;
		struct item *fresh = item_new(key);
		pthread_mutex_lock(&update_lock);
		rcu_read_lock();
		struct cds_lfht_node *old = cds_lfht_add_replace(table, hash_of(key), match, &key, &fresh->node);
		rcu_read_unlock();
		pthread_mutex_unlock(&update_lock);
		if (old)
			call_rcu(&caa_container_of(old, struct item, node)->rcu, item_free);
		(*updates)++;
	}
	rcu_unregister_thread();
	return NULL;
}

int main(int argc, char **argv)
{
	struct reader r[READERS];
	pthread_t updater;
	unsigned long updates = 0, total = 0;
	int failed = 0;

	if (argc > 3 || (argc >= 2 && bench_parse_count(argv[1], &n_lookups) != 0) ||
	    (argc >= 3 && bench_parse_count(argv[2], &lookups_per_update) != 0)) {
		fprintf(stderr, "usage: %s [LOOKUPS_PER_READER>0 [LOOKUPS_PER_UPDATE>0]]\n", argv[0]);
		return 2;
	}
	rcu_register_thread();
	table = cds_lfht_new(KEYS, KEYS, 0, 0, NULL);
	if (!table) {
		fprintf(stderr, "lfht_lookup: cds_lfht_new failed\n");
		return 1;
	}
	rcu_read_lock();
	for (unsigned long key = 0; key < KEYS; key++) {
		struct item *it = item_new(key);
		cds_lfht_add(table, hash_of(key), &it->node);
	}
	rcu_read_unlock();
	pthread_barrier_init(&start_barrier, NULL, READERS + 2);
	sem_init(&kick, 0, 0);
	memset(r, 0, sizeof(r));
	for (int i = 0; i < READERS; i++) {
		r[i].index = i;
		if (pthread_create(&r[i].thread, NULL, reader_main, &r[i]) != 0) {
			fprintf(stderr, "lfht_lookup: pthread_create failed\n");
			return 1;
		}
	}
	if (pthread_create(&updater, NULL, updater_main, &updates) != 0) {
		fprintf(stderr, "lfht_lookup: pthread_create failed\n");
		return 1;
	}
	pthread_barrier_wait(&start_barrier);
	double t0 = bench_now();
	for (int i = 0; i < READERS; i++) {
		pthread_join(r[i].thread, NULL);
		total += r[i].done;
		failed |= r[i].failed;
	}
	double t1 = bench_now();
	atomic_store_explicit(&readers_done, 1, memory_order_release);
	sem_post(&kick);
	pthread_join(updater, NULL);
	rcu_barrier();
	rcu_unregister_thread();
	if (failed)
		return 1;
	bench_print_phase("lookup", total, t1 - t0);
	return 0;
}
