/* Interposed pthread rwlocks. A read and a write hold are different kinds
 * of entry, so relocking rules and the later lock-order rules can tell a
 * recursive read (harmless) from a read behind a write (deadlock). */
#define _GNU_SOURCE
#include <pthread.h>
#include <errno.h>
#include <time.h>
#include "checks/lock_tracking.h"
#include "runtime/real_functions.h"

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

/* glibc's rwlock (nptl/pthread_rwlock_common.c): bit 0 of __readers is
 * the write phase. */
#define GLIBC_RWLOCK_WRPHASE 1u

/* The first try of a blocking read lock, for the hang checks: a
 * reader-preferring rwlock (glibc's default) in its read phase takes a
 * reader at once, so the real rdlock is called (one atomic add), not
 * tryrdlock (a compare-and-swap loop that four readers sharing the lock
 * keep failing: 1.33x instead of 1.03x for a forwarding preload on
 * rwlock_read_mostly). A writer taking the lock between the look and the
 * add makes that one wait unannounced: the hang checks miss it, nothing
 * else changes. */
static inline int rdlock_try_first(pthread_rwlock_t *rw, int relock_blocks)
{
	if (!relock_blocks && !(__atomic_load_n(&rw->__data.__readers, __ATOMIC_RELAXED) & GLIBC_RWLOCK_WRPHASE))
		return REAL(pthread_rwlock_rdlock)(rw);
	return REAL(pthread_rwlock_tryrdlock)(rw);
}

static inline int wrlock_try_first(pthread_rwlock_t *rw, int relock_blocks)
{
	(void)relock_blocks;
	return REAL(pthread_rwlock_trywrlock)(rw);
}

/* Before the wrapper reads the lock: the line fetched for writing, or the
 * look (and the flags) would fetch it shared and the real call's atomic
 * add fetch it again, exclusive: four readers bounce it between cores. */
static inline void rdlock_prepare(pthread_rwlock_t *rw)
{
	__asm__ volatile("prefetchw %0" ::"m"(rw->__data.__readers));
}

static inline void wrlock_prepare(pthread_rwlock_t *rw)
{
	(void)rw;
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
			lock_acquired(ts, rw, kind, ip, class_id, attr(relock_blocks));       \
		return ret;                                                                   \
	}                                                                                     \
	static __attribute__((noinline)) int rwlock_##side##_checked(pthread_rwlock_t *rw, uintptr_t ip, \
								     struct acquire_miss miss)     \
	{                                                                                     \
		struct thread_state *ts = thread_state();                                     \
		if (ts->depth)                                                                \
			acquire_prefetch(ts, rw, kind);                                       \
		uint32_t class_id = lock_before_blocking_after(ts, rw, kind, ip, relock_blocks, &miss); \
		int ret;                                                                      \
		if (likely(lock_slow_paths)) {                                                \
			ret = side##_try_first(rw, relock_blocks);                            \
			if (unlikely(ret == EBUSY))                                           \
				return rwlock_##side##_contended(rw, ip, class_id);           \
		} else {                                                                      \
			ret = REAL(pthread_rwlock_##side)(rw);                                \
		}                                                                             \
		if (likely(ret == 0))                                                         \
			lock_acquired(ts, rw, kind, ip, class_id, attr(relock_blocks));       \
		return ret;                                                                   \
	}                                                                                     \
	int pthread_rwlock_##side(pthread_rwlock_t *rw)                                       \
	{                                                                                     \
		struct thread_state *ts = thread_state();                                     \
		uintptr_t ip = CALLER_IP();                                                   \
		if (unlikely(ts->in_tracer | ts->in_urcu))                                    \
			return REAL(pthread_rwlock_##side)(rw);                               \
		/* The lock's line is read once, before the real call: read \
		 * again after it, it may have gone to another core meanwhile. */      \
		side##_prepare(rw);                                                           \
		const int relock_ = (relock_blocks);                                          \
		uint32_t class_id;                                                            \
		struct acquire_miss miss;                                                     \
		if (unlikely(!ACQUIRE_FAST(ts, rw, acquire_how(kind, relock_), &class_id, 1, &miss))) \
			return rwlock_##side##_checked(rw, ip, miss);                         \
		int ret;                                                                      \
		if (likely(lock_slow_paths)) {                                                \
			ret = side##_try_first(rw, relock_);                                  \
			if (unlikely(ret == EBUSY))                                           \
				return rwlock_##side##_contended(rw, ip, class_id);           \
		} else {                                                                      \
			ret = REAL(pthread_rwlock_##side)(rw);                                \
		}                                                                             \
		if (likely(ret == 0))                                                         \
			lock_acquired_first(ts, rw, kind, ip, class_id, attr(relock_));      \
		return ret;                                                                   \
	}

static inline uint8_t rdlock_attr(int relock_blocks)
{
	return relock_blocks ? 0 : HELD_ATTR_READ_RECURSIVE;
}

RWLOCK_FAST(rdlock, HELD_RWLOCK_READ, read_relock_blocks(rw), rdlock_attr)

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
			LOCK_TIMED_CALL(ts, rw, ip, 1,
					clock_supported(clock) ? REAL(pthread_rwlock_tryrdlock)(rw)
							       : REAL(pthread_rwlock_clockrdlock)(rw, clock, t),
					EBUSY, REAL(pthread_rwlock_clockrdlock)(rw, clock, t)));
}

int pthread_rwlock_tryrdlock(pthread_rwlock_t *rw)
{
	RWLOCK_TRY(HELD_RWLOCK_READ, REAL(pthread_rwlock_tryrdlock)(rw));
}

static inline uint8_t wrlock_attr(int relock_blocks)
{
	(void)relock_blocks;
	return 0;
}

RWLOCK_FAST(wrlock, HELD_RWLOCK_WRITE, 1, wrlock_attr)

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
			LOCK_TIMED_CALL(ts, rw, ip, 0,
					clock_supported(clock) ? REAL(pthread_rwlock_trywrlock)(rw)
							       : REAL(pthread_rwlock_clockwrlock)(rw, clock, t),
					EBUSY, REAL(pthread_rwlock_clockwrlock)(rw, clock, t)));
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
