/* Interposed pthread rwlocks. A read and a write hold are different kinds
 * of entry, so relocking rules and the later lock-order rules can tell a
 * recursive read (harmless) from a read behind a write (deadlock). */
#define _GNU_SOURCE
#include <pthread.h>
#include <errno.h>
#include <time.h>
#include "lock_tracking.h"
#include "real_functions.h"

INTERPOSE(pthread_rwlock_rdlock);
INTERPOSE(pthread_rwlock_tryrdlock);
INTERPOSE(pthread_rwlock_timedrdlock);
INTERPOSE(pthread_rwlock_clockrdlock);
INTERPOSE(pthread_rwlock_wrlock);
INTERPOSE(pthread_rwlock_trywrlock);
INTERPOSE(pthread_rwlock_timedwrlock);
INTERPOSE(pthread_rwlock_clockwrlock);
INTERPOSE(pthread_rwlock_unlock);
INTERPOSE(pthread_rwlock_init);
INTERPOSE(pthread_rwlock_destroy);

/* A second read hold blocks behind a waiting writer only when the rwlock
 * prefers writers (glibc keeps the kind in __flags). */
static inline int read_relock_blocks(const pthread_rwlock_t *rw)
{
	return rw->__data.__flags == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP;
}

/* One body for the four blocking variants of each side. */
#define RWLOCK_BLOCKING(kind, relock_blocks, call, tracked)                      \
	struct thread_state *ts = thread_state();                                \
	if (unlikely(ts->in_tracer | ts->in_urcu))                                             \
		return call;                                                     \
	uintptr_t ip = CALLER_IP();                                              \
	uint32_t class_id = unlikely(acquire_checks_needed(ts))                   \
		? lock_before_blocking(ts, rw, kind, ip, relock_blocks) : 0;      \
	int ret = tracked;                                                       \
	if (likely(ret == 0))                                                    \
		lock_acquired(ts, rw, kind, ip, class_id,                        \
			      kind == HELD_RWLOCK_READ && !(relock_blocks) ? HELD_ATTR_READ_RECURSIVE : 0); \
	return ret

#define RWLOCK_TRY(kind, call)                                                   \
	struct thread_state *ts = thread_state();                                \
	if (unlikely(ts->in_tracer | ts->in_urcu))                                             \
		return call;                                                     \
	int ret = call;                                                          \
	if (ret == 0)                                                            \
		lock_acquired_by_trylock(ts, rw, kind, CALLER_IP(),              \
					 kind == HELD_RWLOCK_READ && !read_relock_blocks(rw) \
					 ? HELD_ATTR_READ_RECURSIVE : 0);                \
	return ret

/* rdlock and wrlock as pthread_mutex_lock(): a fast path holding nothing
 * that finds the lock free, the rest out of line. */
#define RWLOCK_FAST(side, kind, relock_blocks, attr)                                          \
	static __attribute__((noinline)) int rwlock_##side##_contended(pthread_rwlock_t *rw, uintptr_t ip, \
								       uint32_t class_id)           \
	{                                                                                     \
		struct thread_state *ts = thread_state();                                     \
		int ret = LOCK_CONTENDED_CALL(ts, rw, kind, ip, kind == HELD_RWLOCK_READ,      \
					      REAL(pthread_rwlock_timed##side)(rw, &deadline_), \
					      ETIMEDOUT, REAL(pthread_rwlock_##side)(rw));     \
		if (likely(ret == 0))                                                         \
			lock_acquired(ts, rw, kind, ip, class_id, attr);                      \
		return ret;                                                                   \
	}                                                                                     \
	static __attribute__((noinline)) int rwlock_##side##_checked(pthread_rwlock_t *rw, uintptr_t ip, \
								     struct acquire_miss miss)     \
	{                                                                                     \
		struct thread_state *ts = thread_state();                                     \
		if (ts->depth)                                                                \
			acquire_prefetch(ts, rw);                                             \
		uint32_t class_id = lock_before_blocking_after(ts, rw, kind, ip, relock_blocks, &miss); \
		int ret;                                                                      \
		if (likely(lock_slow_paths)) {                                                \
			ret = REAL(pthread_rwlock_try##side)(rw);                             \
			if (unlikely(ret == EBUSY))                                           \
				return rwlock_##side##_contended(rw, ip, class_id);           \
		} else {                                                                      \
			ret = REAL(pthread_rwlock_##side)(rw);                                \
		}                                                                             \
		if (likely(ret == 0))                                                         \
			lock_acquired(ts, rw, kind, ip, class_id, attr);                      \
		return ret;                                                                   \
	}                                                                                     \
	int pthread_rwlock_##side(pthread_rwlock_t *rw)                                       \
	{                                                                                     \
		struct thread_state *ts = thread_state();                                     \
		uintptr_t ip = CALLER_IP();                                                   \
		if (unlikely(ts->in_tracer | ts->in_urcu))                                    \
			return REAL(pthread_rwlock_##side)(rw);                               \
		uint32_t class_id;                                                            \
		struct acquire_miss miss;                                                     \
		if (unlikely(!ACQUIRE_FAST(ts, rw, acquire_how(kind, relock_blocks), &class_id, 1, &miss))) \
			return rwlock_##side##_checked(rw, ip, miss);                         \
		int ret;                                                                      \
		if (likely(lock_slow_paths)) {                                                \
			ret = REAL(pthread_rwlock_try##side)(rw);                             \
			if (unlikely(ret == EBUSY))                                           \
				return rwlock_##side##_contended(rw, ip, class_id);           \
		} else {                                                                      \
			ret = REAL(pthread_rwlock_##side)(rw);                                \
		}                                                                             \
		if (likely(ret == 0))                                                         \
			lock_acquired_first(ts, rw, kind, ip, class_id, attr);                \
		return ret;                                                                   \
	}

RWLOCK_FAST(rdlock, HELD_RWLOCK_READ, read_relock_blocks(rw),
	    read_relock_blocks(rw) ? 0 : HELD_ATTR_READ_RECURSIVE)

int pthread_rwlock_timedrdlock(pthread_rwlock_t *restrict rw, const struct timespec *restrict t)
{
	RWLOCK_BLOCKING(HELD_RWLOCK_READ, read_relock_blocks(rw), REAL(pthread_rwlock_timedrdlock)(rw, t),
			LOCK_TIMED_CALL(ts, rw, ip, 1, REAL(pthread_rwlock_tryrdlock)(rw), EBUSY,
					REAL(pthread_rwlock_timedrdlock)(rw, t)));
}

int pthread_rwlock_clockrdlock(pthread_rwlock_t *restrict rw, clockid_t clock,
			       const struct timespec *restrict t)
{
	RWLOCK_BLOCKING(HELD_RWLOCK_READ, read_relock_blocks(rw), REAL(pthread_rwlock_clockrdlock)(rw, clock, t),
			LOCK_TIMED_CALL(ts, rw, ip, 1, REAL(pthread_rwlock_tryrdlock)(rw), EBUSY,
					REAL(pthread_rwlock_clockrdlock)(rw, clock, t)));
}

int pthread_rwlock_tryrdlock(pthread_rwlock_t *rw)
{
	RWLOCK_TRY(HELD_RWLOCK_READ, REAL(pthread_rwlock_tryrdlock)(rw));
}

RWLOCK_FAST(wrlock, HELD_RWLOCK_WRITE, 1, 0)

int pthread_rwlock_timedwrlock(pthread_rwlock_t *restrict rw, const struct timespec *restrict t)
{
	RWLOCK_BLOCKING(HELD_RWLOCK_WRITE, 1, REAL(pthread_rwlock_timedwrlock)(rw, t),
			LOCK_TIMED_CALL(ts, rw, ip, 0, REAL(pthread_rwlock_trywrlock)(rw), EBUSY,
					REAL(pthread_rwlock_timedwrlock)(rw, t)));
}

int pthread_rwlock_clockwrlock(pthread_rwlock_t *restrict rw, clockid_t clock,
			       const struct timespec *restrict t)
{
	RWLOCK_BLOCKING(HELD_RWLOCK_WRITE, 1, REAL(pthread_rwlock_clockwrlock)(rw, clock, t),
			LOCK_TIMED_CALL(ts, rw, ip, 0, REAL(pthread_rwlock_trywrlock)(rw), EBUSY,
					REAL(pthread_rwlock_clockwrlock)(rw, clock, t)));
}

int pthread_rwlock_trywrlock(pthread_rwlock_t *rw)
{
	RWLOCK_TRY(HELD_RWLOCK_WRITE, REAL(pthread_rwlock_trywrlock)(rw));
}

static __attribute__((noinline)) int rwlock_unlock_slow(pthread_rwlock_t *rw, uintptr_t ip)
{
	struct thread_state *ts = thread_state();
	if (unlikely(ts->in_tracer | ts->in_urcu))
		return REAL(pthread_rwlock_unlock)(rw);
	lock_released(ts, rw, KIND_BIT(HELD_RWLOCK_READ) | KIND_BIT(HELD_RWLOCK_WRITE), ip, "pthread_rwlock_t");
	int ret = REAL(pthread_rwlock_unlock)(rw);
	perturb_point(ts);
	return ret;
}

int pthread_rwlock_unlock(pthread_rwlock_t *rw)
{
	struct thread_state *ts = thread_state();
	/* Only tail calls here, as in pthread_mutex_unlock(). */
	int (*real)(pthread_rwlock_t *) = __atomic_load_n(&real_pthread_rwlock_unlock, __ATOMIC_RELAXED);
	if (likely(real != NULL) && likely(!(ts->in_tracer | ts->in_urcu | lock_slow_hooks)) &&
	    likely(lock_release_innermost(ts, rw, KIND_BIT(HELD_RWLOCK_READ) | KIND_BIT(HELD_RWLOCK_WRITE))))
		return real(rw);
	return rwlock_unlock_slow(rw, CALLER_IP());
}

int pthread_rwlock_init(pthread_rwlock_t *restrict rw, const pthread_rwlockattr_t *restrict attr)
{
	int ret = REAL(pthread_rwlock_init)(rw, attr);
	lock_initialized(rw, ret, CALLER_IP());
	return ret;
}

int pthread_rwlock_destroy(pthread_rwlock_t *rw)
{
	struct thread_state *ts = thread_state();
	if (unlikely(ts->in_tracer | ts->in_urcu))
		return REAL(pthread_rwlock_destroy)(rw);
	int i = lock_before_destroy(ts, rw, KIND_BIT(HELD_RWLOCK_READ) | KIND_BIT(HELD_RWLOCK_WRITE), sizeof(*rw), CALLER_IP());
	int ret = REAL(pthread_rwlock_destroy)(rw);
	lock_after_destroy(ts, rw, i, ret);
	return ret;
}
