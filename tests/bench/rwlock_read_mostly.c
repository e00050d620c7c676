/*
 * rwlock_read_mostly.c - a read-mostly table behind one pthread_rwlock_t:
 * four reader threads, one writer.
 *
 * Readers (4): each loops N times over
 *
 *     rdlock(table); read one entry and check it; [every STATS_EVERY-th
 *     read: lock(stats); count; unlock(stats)]; unlock(table);
 *
 * so a mutex is taken under the read lock now and then (a read side that
 * updates statistics), which gives a lock-order checker one dependency,
 * table (read) -> stats, to check over and over.  Reader 0 kicks the writer
 * every K of its reads through a semaphore.
 *
 * Writer (1): for each kick, wrlock(table), writes a new version into every
 * entry, unlock.  It stops once the readers are done.  Driving the writes
 * from reader 0's count (not from a timer) makes the work the same in every
 * run, about N/K writes, so the time ratio between two runs is an overhead
 * ratio.
 *
 * Every entry keeps check == ~value, and versions only grow: a reader that
 * saw a half-written entry (the rwlock not excluding the writer) or an older
 * version after a newer one fails the run.  The stats count must equal the
 * reads that took the mutex.  The rwlock is glibc's default kind
 * (reader-preferring): reads are recursive reads for a lock-order checker,
 * and nothing here may be reported.
 *
 * Timed phase: from the start barrier (all five threads exist) until every
 * thread is done.  One op is one read-side critical section; the writes are
 * in the time but not in the ops.  Five threads on two cores: the readers
 * preempt each other, as read-mostly servers with more threads than cores do.
 *
 * Usage: rwlock_read_mostly [N [K]]   (N reads per reader, K reads/write)
 * Prints its phase line (bench.h) and exits 0; on error prints to stderr,
 * exits 1.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* Tuned for a plain run of about 0.3 s on the project's 2-core machine,
 * with a write about every millisecond. */
#define DEFAULT_READS		2000000UL
#define DEFAULT_READS_PER_WRITE	10000UL
#define READERS			4
#define ENTRIES			16
#define STATS_EVERY		64

struct entry {
	unsigned long value;
	unsigned long check;		/* ~value */
};

static pthread_rwlock_t table_lock;
static struct entry table[ENTRIES];	/* under table_lock */

static pthread_mutex_t stats_lock;
static unsigned long stats_reads;	/* under stats_lock */

static unsigned long n_reads = DEFAULT_READS;
static unsigned long reads_per_write = DEFAULT_READS_PER_WRITE;

static pthread_barrier_t start_barrier;
static sem_t kick;			/* reader 0 -> writer: "write now" */
static atomic_bool readers_done;
static unsigned long writes;		/* written by the writer only */

struct reader {
	pthread_t thread;
	int index;
	unsigned long done;
	int err;
	const char *err_what;
} __attribute__((aligned(128)));

static int barrier_wait(pthread_barrier_t *b)
{
	int rc = pthread_barrier_wait(b);

	return rc == PTHREAD_BARRIER_SERIAL_THREAD ? 0 : rc;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	unsigned long i, last = 0, since_kick = 0;
	int rc;

	if ((rc = barrier_wait(&start_barrier)) != 0) {
		r->err = rc;
		r->err_what = "pthread_barrier_wait";
		return NULL;
	}
	for (i = 0; i < n_reads; i++) {
		const struct entry *e = &table[(i + (unsigned long)r->index) % ENTRIES];
		unsigned long v, c;

		if ((rc = pthread_rwlock_rdlock(&table_lock)) != 0) {
			r->err_what = "pthread_rwlock_rdlock";
			break;
		}
		v = e->value;
		c = e->check;
		if (i % STATS_EVERY == 0) {
			if ((rc = pthread_mutex_lock(&stats_lock)) != 0) {
				pthread_rwlock_unlock(&table_lock);
				r->err_what = "pthread_mutex_lock(stats)";
				break;
			}
			stats_reads++;
			pthread_mutex_unlock(&stats_lock);
		}
		if ((rc = pthread_rwlock_unlock(&table_lock)) != 0) {
			r->err_what = "pthread_rwlock_unlock";
			break;
		}
		/* Entries are written in index order under the write lock, and
		 * each read sees a whole version: never older than the last. */
		if (c != ~v || v < last) {
			fprintf(stderr, "rwlock_read_mostly: reader %d read a bad entry: value %lu "
				"check %#lx, previous %lu\n", r->index, v, c, last);
			r->err = -1;
			r->done = i;
			return NULL;
		}
		last = v;
		if (r->index == 0 && ++since_kick == reads_per_write) {
			since_kick = 0;
			if (sem_post(&kick) != 0) {
				rc = errno;
				r->err_what = "sem_post";
				break;
			}
		}
	}
	r->err = rc;
	r->done = i;
	return NULL;
}

static void *writer_main(void *arg)
{
	int *failed = arg;
	unsigned long version = 0;

	if (barrier_wait(&start_barrier) != 0) {
		*failed = 1;
		return NULL;
	}
	for (;;) {
		if (sem_wait(&kick) != 0) {
			if (errno == EINTR)
				continue;
			perror("rwlock_read_mostly: sem_wait");
			*failed = 1;
			break;
		}
		if (atomic_load_explicit(&readers_done, memory_order_acquire))
			break;
		if (pthread_rwlock_wrlock(&table_lock) != 0) {
			fprintf(stderr, "rwlock_read_mostly: pthread_rwlock_wrlock failed\n");
			*failed = 1;
			break;
		}
		version++;
		for (int k = 0; k < ENTRIES; k++) {
			table[k].value = version;
			table[k].check = ~version;
		}
		pthread_rwlock_unlock(&table_lock);
		writes++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct reader r[READERS];
	pthread_t writer;
	int writer_failed = 0, rc, i, status = 0;
	double t0, t1;

	if (argc > 3 || (argc >= 2 && bench_parse_count(argv[1], &n_reads) != 0) ||
	    (argc >= 3 && bench_parse_count(argv[2], &reads_per_write) != 0)) {
		fprintf(stderr, "usage: %s [READS_PER_READER>0 [READS_PER_WRITE>0]]\n", argv[0]);
		return 2;
	}
	for (i = 0; i < ENTRIES; i++)
		table[i].check = ~0UL;
	if ((rc = pthread_rwlock_init(&table_lock, NULL)) != 0 ||
	    (rc = pthread_mutex_init(&stats_lock, NULL)) != 0 ||
	    (rc = pthread_barrier_init(&start_barrier, NULL, READERS + 2)) != 0) {
		fprintf(stderr, "rwlock_read_mostly: init: %s\n", strerror(rc));
		return 1;
	}
	if (sem_init(&kick, 0, 0) != 0) {
		perror("rwlock_read_mostly: sem_init");
		return 1;
	}
	if ((rc = pthread_create(&writer, NULL, writer_main, &writer_failed)) != 0) {
		fprintf(stderr, "rwlock_read_mostly: pthread_create: %s\n", strerror(rc));
		return 1;
	}
	for (i = 0; i < READERS; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].index = i;
		if ((rc = pthread_create(&r[i].thread, NULL, reader_main, &r[i])) != 0) {
			fprintf(stderr, "rwlock_read_mostly: pthread_create: %s\n", strerror(rc));
			return 1;	/* the others wait on the barrier: just go */
		}
	}

	if ((rc = barrier_wait(&start_barrier)) != 0) {
		fprintf(stderr, "rwlock_read_mostly: pthread_barrier_wait: %s\n", strerror(rc));
		return 1;
	}
	t0 = bench_now();
	for (i = 0; i < READERS; i++) {
		if ((rc = pthread_join(r[i].thread, NULL)) != 0) {
			fprintf(stderr, "rwlock_read_mostly: pthread_join: %s\n", strerror(rc));
			return 1;
		}
	}
	/* Stop the writer, and wake it if it is waiting. */
	atomic_store_explicit(&readers_done, 1, memory_order_release);
	if (sem_post(&kick) != 0) {
		perror("rwlock_read_mostly: sem_post");
		return 1;
	}
	if ((rc = pthread_join(writer, NULL)) != 0) {
		fprintf(stderr, "rwlock_read_mostly: pthread_join: %s\n", strerror(rc));
		return 1;
	}
	t1 = bench_now();

	for (i = 0; i < READERS; i++) {
		if (r[i].err == 0 && r[i].done == n_reads)
			continue;
		if (r[i].err > 0)
			fprintf(stderr, "rwlock_read_mostly: reader %d: %s: %s\n", i, r[i].err_what,
				strerror(r[i].err));
		else if (r[i].err == 0)
			fprintf(stderr, "rwlock_read_mostly: reader %d did %lu of %lu reads\n", i,
				r[i].done, n_reads);
		/* else -1: the bad entry is printed already */
		status = 1;
	}
	if (writer_failed)
		status = 1;
	if (status == 0 && (stats_reads != READERS * ((n_reads + STATS_EVERY - 1) / STATS_EVERY) ||
			    writes > n_reads / reads_per_write)) {
		fprintf(stderr, "rwlock_read_mostly: inconsistent result: %lu counted reads "
			"(expected %lu), %lu writes (at most %lu requested)\n", stats_reads,
			READERS * ((n_reads + STATS_EVERY - 1) / STATS_EVERY), writes,
			n_reads / reads_per_write);
		status = 1;
	}
	if (status == 0)
		bench_print_phase("read", READERS * n_reads, t1 - t0);

	pthread_rwlock_destroy(&table_lock);
	pthread_mutex_destroy(&stats_lock);
	pthread_barrier_destroy(&start_barrier);
	sem_destroy(&kick);
	return status;
}
