/* A correct, lock-heavy multi-threaded program: 4 threads taking nested
 * mutexes always in the same order, rwlocks on both sides, spinlocks, a
 * recursive mutex, trylock loops that back off, and heap locks made and
 * destroyed on the way. Under the preload it must stay silent and exit 0,
 * with the same result as without. */
#include "target.h"
#include <errno.h>
#include <sched.h>
#include <threads.h>

#define THREADS 4
#define ROUNDS 3000

static pthread_mutex_t outer_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t middle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t inner_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t nest_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t stat_spin;
static mtx_t c11_lock;

static long outer_count, middle_count, inner_count, table[16], stat_count, nest_count, c11_count;

static void nested_update(int depth)
{
	pthread_mutex_lock(&nest_lock);
	nest_count++;
	if (depth > 0)
		nested_update(depth - 1);
	pthread_mutex_unlock(&nest_lock);
}

/* Takes outer then inner with trylock on inner, backing off completely
 * when inner is busy: the classic way to avoid blocking in the wrong order. */
static void trylock_loop(void)
{
	for (;;) {
		pthread_mutex_lock(&outer_lock);
		if (pthread_mutex_trylock(&inner_lock) == 0)
			break;
		pthread_mutex_unlock(&outer_lock);
		sched_yield();
	}
	outer_count++;
	inner_count++;
	pthread_mutex_unlock(&inner_lock);
	pthread_mutex_unlock(&outer_lock);
}

static void *worker(void *arg)
{
	long id = (long)arg;
	long seen = 0;
	for (int i = 0; i < ROUNDS; i++) {
		switch ((i + id) % 7) {
		case 0:   /* nested, always outer -> middle -> inner */
			pthread_mutex_lock(&outer_lock);
			pthread_mutex_lock(&middle_lock);
			pthread_mutex_lock(&inner_lock);
			outer_count++;
			middle_count++;
			inner_count++;
			pthread_mutex_unlock(&inner_lock);
			pthread_mutex_unlock(&middle_lock);
			pthread_mutex_unlock(&outer_lock);
			break;
		case 1:   /* readers, then a spinlock inside the read side */
			pthread_rwlock_rdlock(&table_lock);
			seen += table[i % 16];
			pthread_spin_lock(&stat_spin);
			stat_count++;
			pthread_spin_unlock(&stat_spin);
			pthread_rwlock_unlock(&table_lock);
			break;
		case 2:   /* writer under the middle mutex */
			pthread_mutex_lock(&middle_lock);
			pthread_rwlock_wrlock(&table_lock);
			table[i % 16]++;
			middle_count++;
			pthread_rwlock_unlock(&table_lock);
			pthread_mutex_unlock(&middle_lock);
			break;
		case 3:
			trylock_loop();
			break;
		case 4:   /* spin trylock loop, rwlock trylock loop */
			while (pthread_spin_trylock(&stat_spin) == EBUSY)
				sched_yield();
			stat_count++;
			pthread_spin_unlock(&stat_spin);
			while (pthread_rwlock_trywrlock(&table_lock) == EBUSY)
				sched_yield();
			table[(i + 1) % 16]++;
			pthread_rwlock_unlock(&table_lock);
			break;
		case 5: { /* a heap lock of our own, and the recursive one */
			pthread_mutex_t *m = malloc(sizeof(*m));
			pthread_mutex_init(m, NULL);
			pthread_mutex_lock(m);
			nested_update(3);
			pthread_mutex_unlock(m);
			pthread_mutex_destroy(m);
			free(m);
			break;
		}
		default:  /* C11 mutex with a timed lock, and recursive reads */
			if (mtx_timedlock(&c11_lock, &(struct timespec){ .tv_sec = 0x7fffffff }) == thrd_success) {
				c11_count++;
				mtx_unlock(&c11_lock);
			}
			pthread_rwlock_rdlock(&table_lock);
			pthread_rwlock_rdlock(&table_lock);
			seen += table[0];
			pthread_rwlock_unlock(&table_lock);
			pthread_rwlock_unlock(&table_lock);
			break;
		}
	}
	return (void *)(uintptr_t)(seen >= 0);
}

SCENARIO lock_heavy(void)
{
	pthread_t t[THREADS];
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	int ok = 1;
	for (int i = 0; i < THREADS; i++) {
		void *res;
		pthread_join(t[i], &res);
		ok &= res != NULL;
	}
	long table_sum = 0;
	for (int i = 0; i < 16; i++)
		table_sum += table[i];
	printf("outer %ld middle %ld inner %ld table %ld stat %ld nest %ld c11 %ld ok %d\n",
	       outer_count, middle_count, inner_count, table_sum, stat_count, nest_count,
	       c11_count, ok);
}

int main(int argc, char **argv)
{
	pthread_spin_init(&stat_spin, PTHREAD_PROCESS_PRIVATE);
	mtx_init(&c11_lock, mtx_timed);
	static const struct scenario scenarios[] = {
		{ "ok", lock_heavy },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
