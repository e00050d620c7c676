/* The kernel's "bad unlock balance": releasing a lock this thread does not
 * hold, for each kind of lock the tracer knows (pthread mutex, rwlock,
 * spinlock, C11 mtx_t), next to balanced twins that must stay silent.
 * Each buggy call sits in SITE(), which prints "site <line>" first so the
 * tests read the expected file:line from stdout. */
#include "target.h"
#include <errno.h>
#include <threads.h>

#define SITE(stmt) do { printf("site %d\n", __LINE__); stmt; } while (0)
/* The buggy call, with errno set before it and read right after: a report
 * must leave the program's errno alone. */
#define SENTINEL 4242
#define CALL(call) (errno = SENTINEL, ret = (call), err = errno)

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t owner_lock = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
static pthread_mutex_t recursive_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t counter_spin;
static mtx_t queue_mtx;
static pthread_mutex_t first_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t second_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- bugs ---------------------------------------------------------------- */

SCENARIO mutex_never_locked(void)
{
	int ret, err;
	SITE(CALL(pthread_mutex_unlock(&stats_lock)));
	printf("unlock %d errno %d\n", ret, err);
}

/* Another thread holds owner_lock; an error-checking mutex refuses the
 * foreign unlock (EPERM), so the owner can still release it afterwards. */
static pthread_mutex_t handoff = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t handoff_cond = PTHREAD_COND_INITIALIZER;
static int owner_state;   /* 1: owner holds owner_lock, 2: main is done */

static void *owner_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&owner_lock);
	pthread_mutex_lock(&handoff);
	owner_state = 1;
	pthread_cond_broadcast(&handoff_cond);
	while (owner_state != 2)
		pthread_cond_wait(&handoff_cond, &handoff);
	pthread_mutex_unlock(&handoff);
	pthread_mutex_unlock(&owner_lock);
	return NULL;
}

SCENARIO mutex_held_by_other_thread(void)
{
	pthread_t t;
	pthread_create(&t, NULL, owner_thread, NULL);
	pthread_mutex_lock(&handoff);
	while (owner_state != 1)
		pthread_cond_wait(&handoff_cond, &handoff);
	pthread_mutex_unlock(&handoff);
	int ret, err;
	SITE(CALL(pthread_mutex_unlock(&owner_lock)));
	printf("unlock %d EPERM=%d errno %d\n", ret, ret == EPERM, err);
	pthread_mutex_lock(&handoff);
	owner_state = 2;
	pthread_cond_broadcast(&handoff_cond);
	pthread_mutex_unlock(&handoff);
	pthread_join(t, NULL);
}

SCENARIO rwlock_not_held(void)
{
	int ret, err;
	SITE(CALL(pthread_rwlock_unlock(&table_lock)));
	printf("unlock %d errno %d\n", ret, err);
}

SCENARIO spin_not_held(void)
{
	int ret, err;
	SITE(CALL(pthread_spin_unlock(&counter_spin)));
	printf("unlock %d errno %d\n", ret, err);
}

SCENARIO mtx_not_held(void)
{
	int ret, err;
	SITE(CALL(mtx_unlock(&queue_mtx)));
	printf("unlock %d errno %d\n", ret == thrd_success ? 0 : ret, err);
}

/* The same buggy site a hundred times: one report. */
SCENARIO same_site_hundred_times(void)
{
	printf("site %d\n", __LINE__ + 2);
	for (int i = 0; i < 100; i++)
		pthread_mutex_unlock(&stats_lock);
	printf("done\n");
}

/* Two different buggy sites: two reports. */
SCENARIO two_sites(void)
{
	SITE(pthread_mutex_unlock(&first_lock));
	SITE(pthread_mutex_unlock(&second_lock));
	printf("done\n");
}

/* ---- correct twins ------------------------------------------------------- */

SCENARIO balanced_each_kind(void)
{
	int r[12], n = 0;
	r[n++] = pthread_mutex_lock(&stats_lock);
	r[n++] = pthread_mutex_unlock(&stats_lock);
	r[n++] = pthread_rwlock_wrlock(&table_lock);
	r[n++] = pthread_rwlock_unlock(&table_lock);
	r[n++] = pthread_rwlock_rdlock(&table_lock);
	r[n++] = pthread_rwlock_unlock(&table_lock);
	r[n++] = pthread_spin_lock(&counter_spin);
	r[n++] = pthread_spin_unlock(&counter_spin);
	r[n++] = mtx_lock(&queue_mtx);
	r[n++] = mtx_unlock(&queue_mtx);
	r[n++] = pthread_mutex_lock(&owner_lock);
	r[n++] = pthread_mutex_unlock(&owner_lock);
	printf("balanced");
	for (int i = 0; i < n; i++)
		printf(" %d", r[i]);
	printf("\n");
}

SCENARIO recursive_mutex_twice(void)
{
	int a = pthread_mutex_lock(&recursive_lock);
	int b = pthread_mutex_lock(&recursive_lock);
	int c = pthread_mutex_unlock(&recursive_lock);
	int d = pthread_mutex_unlock(&recursive_lock);
	printf("recursive %d %d %d %d\n", a, b, c, d);
}

SCENARIO rwlock_read_twice(void)
{
	int a = pthread_rwlock_rdlock(&table_lock);
	int b = pthread_rwlock_rdlock(&table_lock);
	int c = pthread_rwlock_unlock(&table_lock);
	int d = pthread_rwlock_unlock(&table_lock);
	printf("read twice %d %d %d %d\n", a, b, c, d);
}

/* Lock in one thread, unlock in the same thread, many threads at once. */
static void *balanced_worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&stats_lock);
		pthread_mutex_unlock(&stats_lock);
		pthread_spin_lock(&counter_spin);
		pthread_spin_unlock(&counter_spin);
	}
	return NULL;
}

SCENARIO balanced_threads(void)
{
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, balanced_worker, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("done\n");
}

int main(int argc, char **argv)
{
	pthread_spin_init(&counter_spin, PTHREAD_PROCESS_PRIVATE);
	mtx_init(&queue_mtx, mtx_plain);
	static const struct scenario scenarios[] = {
		{ "bug-mutex-never-locked", mutex_never_locked },
		{ "bug-mutex-other-thread", mutex_held_by_other_thread },
		{ "bug-rwlock", rwlock_not_held },
		{ "bug-spin", spin_not_held },
		{ "bug-mtx", mtx_not_held },
		{ "bug-same-site-100", same_site_hundred_times },
		{ "bug-two-sites", two_sites },
		{ "ok-each-kind", balanced_each_kind },
		{ "ok-recursive-mutex", recursive_mutex_twice },
		{ "ok-rwlock-read-twice", rwlock_read_twice },
		{ "ok-threads", balanced_threads },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
