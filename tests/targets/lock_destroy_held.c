/* The kernel's "held lock freed": destroying a lock this thread still
 * holds. The first "site" line of each buggy scenario is where the lock was
 * taken, the second the destroy. Every scenario prints what the destroy returned, so the tests can
 * check the preload returns the same as the plain C library (glibc refuses
 * to destroy a locked mutex with EBUSY, and then the mutex stays held). */
#include "target.h"
#include <errno.h>
#include <malloc.h>
#include <sys/mman.h>
#include <threads.h>

#define SITE(stmt) do { printf("site %d\n", __LINE__); stmt; } while (0)
/* The buggy call, with errno set before it and read right after: a report
 * must leave the program's errno alone. */
#define SENTINEL 4242
#define CALL(call) (errno = SENTINEL, ret = (call), err = errno)

static pthread_mutex_t session_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t index_lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t slot_spin;
static mtx_t pool_mtx;

/* ---- bugs ---------------------------------------------------------------- */

SCENARIO destroy_held_mutex(void)
{
	SITE(pthread_mutex_lock(&session_lock));
	int ret, err;
	SITE(CALL(pthread_mutex_destroy(&session_lock)));
	printf("destroy %d EBUSY=%d errno %d\n", ret, ret == EBUSY, err);
	/* The destroy failed: the mutex is still ours, release it properly. */
	if (ret == EBUSY) {
		int u = pthread_mutex_unlock(&session_lock);
		int d = pthread_mutex_destroy(&session_lock);
		printf("unlock %d destroy %d\n", u, d);
	}
}

SCENARIO destroy_held_rwlock(void)
{
	SITE(pthread_rwlock_wrlock(&index_lock));
	int ret, err;
	SITE(CALL(pthread_rwlock_destroy(&index_lock)));
	printf("destroy %d errno %d\n", ret, err);
}

SCENARIO destroy_read_held_rwlock(void)
{
	SITE(pthread_rwlock_rdlock(&index_lock));
	int ret, err;
	SITE(CALL(pthread_rwlock_destroy(&index_lock)));
	printf("destroy %d errno %d\n", ret, err);
}

SCENARIO destroy_held_spin(void)
{
	SITE(pthread_spin_lock(&slot_spin));
	int ret, err;
	SITE(CALL(pthread_spin_destroy(&slot_spin)));
	printf("destroy %d errno %d\n", ret, err);
}

SCENARIO destroy_held_mtx(void)
{
	SITE(mtx_lock(&pool_mtx));
	int err;
	SITE((errno = SENTINEL, mtx_destroy(&pool_mtx), err = errno));
	printf("destroyed errno %d\n", err);
}

/* A heap-allocated lock freed while held: the lock has no symbol. */
SCENARIO destroy_held_heap_mutex(void)
{
	pthread_mutex_t *m = malloc(sizeof(*m));
	pthread_mutex_init(m, NULL);
	SITE(pthread_mutex_lock(m));
	int ret, err;
	SITE(CALL(pthread_mutex_destroy(m)));
	printf("destroy %d errno %d\n", ret, err);
	if (ret == EBUSY) {
		pthread_mutex_unlock(m);
		pthread_mutex_destroy(m);
	}
	free(m);
}

/* The memory of a held lock given back without a destroy: unmapped, or
 * freed. Then the thread takes another lock, as it goes on (the tracer
 * read the gone lock's memory there: SIGSEGV after the munmap). */
static pthread_mutex_t after_lock = PTHREAD_MUTEX_INITIALIZER;

static void lock_after(void)
{
	pthread_mutex_lock(&after_lock);
	pthread_mutex_lock(&session_lock);
	pthread_mutex_unlock(&session_lock);
	pthread_mutex_unlock(&after_lock);
}

SCENARIO munmap_held_mutex(void)
{
	pthread_mutex_t *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_mutex_init(m, NULL);
	SITE(pthread_mutex_lock(m));
	int ret, err;
	SITE(CALL(munmap(m, 4096)));
	printf("munmap %d errno %d\n", ret, err);
	lock_after();
}

SCENARIO free_held_mutex(void)
{
	pthread_mutex_t *m = malloc(sizeof(*m));
	pthread_mutex_init(m, NULL);
	SITE(pthread_mutex_lock(m));
	SITE((errno = SENTINEL, free(m)));
	printf("freed errno %d\n", errno);
	lock_after();
}

/* ---- correct twins: unlock, then destroy --------------------------------- */

SCENARIO unlock_then_destroy(void)
{
	int r[12], n = 0;
	r[n++] = pthread_mutex_lock(&session_lock);
	r[n++] = pthread_mutex_unlock(&session_lock);
	r[n++] = pthread_mutex_destroy(&session_lock);
	r[n++] = pthread_rwlock_wrlock(&index_lock);
	r[n++] = pthread_rwlock_unlock(&index_lock);
	r[n++] = pthread_rwlock_destroy(&index_lock);
	r[n++] = pthread_spin_lock(&slot_spin);
	r[n++] = pthread_spin_unlock(&slot_spin);
	r[n++] = pthread_spin_destroy(&slot_spin);
	r[n++] = mtx_lock(&pool_mtx);
	r[n++] = mtx_unlock(&pool_mtx);
	mtx_destroy(&pool_mtx);
	printf("destroy");
	for (int i = 0; i < n; i++)
		printf(" %d", r[i]);
	printf("\n");
}

/* A heap lock unlocked before its destroy and free. */
SCENARIO heap_unlock_then_destroy(void)
{
	pthread_mutex_t *m = malloc(sizeof(*m));
	pthread_mutex_init(m, NULL);
	pthread_mutex_lock(m);
	pthread_mutex_unlock(m);
	printf("destroy %d\n", pthread_mutex_destroy(m));
	free(m);
}

/* The memory of locks released first, then unmapped or freed (no
 * destroy, which glibc does not need): nothing to report. */
SCENARIO unlock_then_munmap_or_free(void)
{
	pthread_mutex_t *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_mutex_init(m, NULL);
	pthread_mutex_lock(m);
	pthread_mutex_unlock(m);
	int unmapped = munmap(m, 4096);
	pthread_mutex_t *h = malloc(sizeof(*h));
	pthread_mutex_init(h, NULL);
	pthread_mutex_lock(h);
	pthread_mutex_unlock(h);
	free(h);
	lock_after();
	printf("munmap %d\n", unmapped);
}

int main(int argc, char **argv)
{
	pthread_spin_init(&slot_spin, PTHREAD_PROCESS_PRIVATE);
	mtx_init(&pool_mtx, mtx_plain);
	static const struct scenario scenarios[] = {
		{ "bug-mutex", destroy_held_mutex },
		{ "bug-rwlock", destroy_held_rwlock },
		{ "bug-rwlock-read", destroy_read_held_rwlock },
		{ "bug-spin", destroy_held_spin },
		{ "bug-mtx", destroy_held_mtx },
		{ "bug-heap-mutex", destroy_held_heap_mutex },
		{ "bug-munmap-mutex", munmap_held_mutex },
		{ "bug-free-mutex", free_held_mutex },
		{ "ok", unlock_then_destroy },
		{ "ok-heap", heap_unlock_then_destroy },
		{ "ok-munmap-free", unlock_then_munmap_or_free },
		{ NULL, NULL },
	};
	return run_scenario(argc, argv, scenarios);
}
