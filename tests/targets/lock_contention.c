/* Lock statistics (lock_stat=1): two threads fight for one mutex, each
 * also takes a mutex nobody else takes; readers and a writer share an
 * rwlock. The counts the program prints are what the table must show. */
#include "target.h"
#include <time.h>
#include <unistd.h>

#define ROUNDS 2000

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t private_lock = PTHREAD_MUTEX_INITIALIZER;   /* only fighter 0 */
static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t start;
static volatile unsigned long counter;

/* Holds a lock for a few microseconds: long enough that the other thread
 * finds it taken. */
static void busy_for_us(long us)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000 + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

static __attribute__((noinline)) void take_shared(void)
{
	pthread_mutex_lock(&shared_lock);
	counter++;
	busy_for_us(20);
	pthread_mutex_unlock(&shared_lock);
	busy_for_us(2);
}

static void *fighter(void *arg)
{
	int id = (int)(long)arg;
	pthread_barrier_wait(&start);
	for (int i = 0; i < ROUNDS; i++) {
		take_shared();
		if (id == 0) {
			pthread_mutex_lock(&private_lock);
			counter++;
			pthread_mutex_unlock(&private_lock);
		}
	}
	return NULL;
}

SCENARIO two_threads_one_mutex(void)
{
	pthread_t t[2];
	pthread_barrier_init(&start, NULL, 2);
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, fighter, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("shared %d private %d\n", 2 * ROUNDS, ROUNDS);
}

static void *reader(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start);
	for (int i = 0; i < ROUNDS; i++) {
		pthread_rwlock_rdlock(&table_lock);
		busy_for_us(2);
		pthread_rwlock_unlock(&table_lock);
	}
	return NULL;
}

static void *writer(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&start);
	for (int i = 0; i < ROUNDS / 10; i++) {
		pthread_rwlock_wrlock(&table_lock);
		busy_for_us(20);
		pthread_rwlock_unlock(&table_lock);
		usleep(100);
	}
	return NULL;
}

SCENARIO readers_and_a_writer(void)
{
	pthread_t t[3];
	pthread_barrier_init(&start, NULL, 3);
	pthread_create(&t[0], NULL, reader, NULL);
	pthread_create(&t[1], NULL, reader, NULL);
	pthread_create(&t[2], NULL, writer, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("reads %d writes %d\n", 2 * ROUNDS, ROUNDS / 10);
}

/* Nothing contended: one thread, locks taken in turn. */
SCENARIO alone(void)
{
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&shared_lock);
		pthread_mutex_unlock(&shared_lock);
	}
	printf("shared %d\n", ROUNDS);
}

int main(int argc, char **argv)
{
	static const struct scenario scenarios[] = {
		{ "two-threads-one-mutex", two_threads_one_mutex },
		{ "readers-and-a-writer", readers_and_a_writer },
		{ "alone", alone },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
