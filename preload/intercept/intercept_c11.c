/* C11 <threads.h> mutexes and condition variables: glibc implements them on
 * its internal pthread functions, bypassing our pthread wrappers, so they
 * are interposed on their own. mtx_t has pthread_mutex_t's layout. */
#define _GNU_SOURCE
#include <threads.h>
#include "checks/lock_tracking.h"
#include "runtime/real_functions.h"

INTERPOSE(mtx_lock);
INTERPOSE(mtx_trylock);
INTERPOSE(mtx_timedlock);
INTERPOSE(mtx_unlock);
INTERPOSE(mtx_init);
INTERPOSE(mtx_destroy);
INTERPOSE(cnd_wait);
INTERPOSE(cnd_timedwait);

static inline int mtx_relock_would_block(mtx_t *m)
{
	return mutex_relock_would_block((const pthread_mutex_t *)(void *)m);
}

static inline const pthread_mutex_t *as_pthread(const mtx_t *m)
{
	return (const pthread_mutex_t *)(const void *)m;
}

/* One body for mtx_lock and mtx_timedlock (mtx_recursive relocks count
 * on their entry, as for pthread mutexes). */
#define MTX_BLOCKING(call, tracked)                                              \
	struct thread_state *ts = thread_state();                                \
	if (unlikely(ts->in_tracer | ts->in_urcu))                                             \
		return call;                                                     \
	struct held_lock *again = recursive_relock(ts, as_pthread(m));           \
	if (unlikely(again != 0)) {                                              \
		int ret = call;                                                  \
		if (ret == thrd_success)                                         \
			add_reference(ts, again);                                \
		return ret;                                                      \
	}                                                                        \
	uintptr_t ip = CALLER_IP();                                              \
	uint32_t class_id = lock_before_blocking(ts, m, HELD_MUTEX, ip, mtx_relock_would_block(m)); \
	int ret = tracked;                                                       \
	if (ret == thrd_success)                                                 \
		lock_acquired(ts, m, HELD_MUTEX, ip, class_id, 0);               \
	return ret

int mtx_lock(mtx_t *m)
{
	MTX_BLOCKING(REAL(mtx_lock)(m),
		     LOCK_BLOCKING_CALL(ts, m, HELD_MUTEX, ip, 0, REAL(mtx_trylock)(m), thrd_busy,
					REAL(mtx_timedlock)(m, &deadline_), thrd_timedout, REAL(mtx_lock)(m)));
}

int mtx_timedlock(mtx_t *restrict m, const struct timespec *restrict t)
{
	MTX_BLOCKING(REAL(mtx_timedlock)(m, t),
		     LOCK_TIMED_CALL(ts, m, ip, 0, REAL(mtx_trylock)(m), thrd_busy, REAL(mtx_timedlock)(m, t)));
}

int mtx_trylock(mtx_t *m)
{
	struct thread_state *ts = thread_state();
	if (unlikely(ts->in_tracer | ts->in_urcu))
		return REAL(mtx_trylock)(m);
	struct held_lock *again = recursive_relock(ts, as_pthread(m));
	int ret = REAL(mtx_trylock)(m);
	if (unlikely(again != 0)) {
		if (ret == thrd_success)
			add_reference(ts, again);
	} else if (ret == thrd_success) {
		lock_acquired_by_trylock(ts, m, HELD_MUTEX, CALLER_IP(), 0);
	}
	return ret;
}

int mtx_unlock(mtx_t *m)
{
	struct thread_state *ts = thread_state();
	if (unlikely(ts->in_tracer | ts->in_urcu))
		return REAL(mtx_unlock)(m);
	lock_released(ts, m, KIND_BIT(HELD_MUTEX), CALLER_IP(), "mtx_t");
	int ret = REAL(mtx_unlock)(m);
	perturb_point(ts);
	return ret;
}

int mtx_init(mtx_t *m, int type)
{
	int ret = REAL(mtx_init)(m, type);
	lock_initialized(m, ret == thrd_success ? 0 : ret, CALLER_IP());
	return ret;
}

void mtx_destroy(mtx_t *m)
{
	struct thread_state *ts = thread_state();
	if (unlikely(ts->in_tracer | ts->in_urcu)) {
		REAL(mtx_destroy)(m);
		return;
	}
	int i = lock_before_destroy(ts, m, KIND_BIT(HELD_MUTEX), sizeof(*m), CALLER_IP());
	REAL(mtx_destroy)(m);
	lock_after_destroy(ts, m, i, 0);
}

/* cnd_wait releases and retakes the mutex like pthread_cond_wait. */
int cnd_wait(cnd_t *c, mtx_t *m)
{
	MUTEX_WAIT(REAL(cnd_wait)(c, m));
}

int cnd_timedwait(cnd_t *restrict c, mtx_t *restrict m, const struct timespec *restrict t)
{
	MUTEX_WAIT(REAL(cnd_timedwait)(c, m, t));
}
