/* The kernel's "possible recursive locking": acquiring again a lock this
 * thread already holds, in a way that blocks forever. The buggy scenarios
 * really deadlock (or spin) after the report; the tests kill them. The
 * correct twins relock mutexes made for it (recursive, error-checking) and
 * must stay silent. */
#include "target.h"
#include <errno.h>
#include <threads.h>

#define SITE(stmt) do { printf("site %d\n", __LINE__); stmt; } while (0)

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t route_lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t ring_spin;
static mtx_t journal_mtx;
static pthread_mutex_t nested_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t checked_lock = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
static mtx_t recursive_mtx;

/* ---- bugs: each blocks forever after its report -------------------------- */

SCENARIO mutex_relock(void)
{
	pthread_mutex_lock(&cache_lock);
	SITE(pthread_mutex_lock(&cache_lock));
	printf("not reached\n");
}

SCENARIO rwlock_write_behind_own_read(void)
{
	pthread_rwlock_rdlock(&route_lock);
	SITE(pthread_rwlock_wrlock(&route_lock));
	printf("not reached\n");
}

SCENARIO spin_relock(void)
{
	pthread_spin_lock(&ring_spin);
	SITE(pthread_spin_lock(&ring_spin));
	printf("not reached\n");
}

SCENARIO mtx_relock(void)
{
	mtx_lock(&journal_mtx);
	SITE(mtx_lock(&journal_mtx));
	printf("not reached\n");
}

/* ---- correct twins ------------------------------------------------------- */

SCENARIO recursive_mutex_relock(void)
{
	int a = pthread_mutex_lock(&nested_lock);
	int b = pthread_mutex_lock(&nested_lock);
	int c = pthread_mutex_unlock(&nested_lock);
	int d = pthread_mutex_unlock(&nested_lock);
	printf("recursive %d %d %d %d\n", a, b, c, d);
}

/* An error-checking mutex refuses the relock instead of deadlocking. */
SCENARIO errorcheck_mutex_relock(void)
{
	int a = pthread_mutex_lock(&checked_lock);
	int b = pthread_mutex_lock(&checked_lock);
	int c = pthread_mutex_unlock(&checked_lock);
	printf("errorcheck %d %d %d EDEADLK=%d\n", a, b, c, b == EDEADLK);
}

SCENARIO recursive_mtx_relock(void)
{
	int a = mtx_lock(&recursive_mtx);
	int b = mtx_lock(&recursive_mtx);
	int c = mtx_unlock(&recursive_mtx);
	int d = mtx_unlock(&recursive_mtx);
	printf("mtx recursive %d %d %d %d success=%d\n", a, b, c, d, thrd_success);
}

int main(int argc, char **argv)
{
	pthread_spin_init(&ring_spin, PTHREAD_PROCESS_PRIVATE);
	mtx_init(&journal_mtx, mtx_plain);
	mtx_init(&recursive_mtx, mtx_plain | mtx_recursive);
	static const struct scenario scenarios[] = {
		{ "bug-mutex", mutex_relock },
		{ "bug-rwlock-write-after-read", rwlock_write_behind_own_read },
		{ "bug-spin", spin_relock },
		{ "bug-mtx", mtx_relock },
		{ "ok-recursive-mutex", recursive_mutex_relock },
		{ "ok-errorcheck-mutex", errorcheck_mutex_relock },
		{ "ok-recursive-mtx", recursive_mtx_relock },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
