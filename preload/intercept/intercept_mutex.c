/* Interposed pthread mutexes and spinlocks. Each wrapper returns what the
 * real call returned and leaves errno as it left it; only a call that took
 * the lock changes the held-lock state (EOWNERDEAD from a robust mutex
 * whose owner died does take it). A recursive mutex taken again by its
 * owner counts on its entry. */
#define _GNU_SOURCE
#include <pthread.h>
#include <errno.h>
#include <time.h>
#include "checks/lock_tracking.h"
#include "runtime/real_functions.h"
#include "checks/lock_order_report.h"

INTERPOSE(pthread_mutex_lock);
INTERPOSE(pthread_mutex_trylock);
INTERPOSE(pthread_mutex_timedlock);
INTERPOSE(pthread_mutex_clocklock);
INTERPOSE(pthread_mutex_unlock);
INTERPOSE(pthread_mutex_init);
INTERPOSE(pthread_mutex_destroy);
INTERPOSE(pthread_spin_lock);
INTERPOSE(pthread_spin_trylock);
INTERPOSE(pthread_spin_unlock);
INTERPOSE(pthread_spin_init);
INTERPOSE(pthread_spin_destroy);

static inline int mutex_taken(int ret)
{
	return likely(ret == 0) || ret == EOWNERDEAD;
}

/* Whether a blocking acquisition may be the real trylock first (the hang
 * checks' way to know a wait): not for a robust mutex, whose trylock in
 * glibc 2.36 leaves a not-recoverable one with its lock word set to the
 * caller, so that every later lock blocks forever (plain, each returns
 * ENOTRECOVERABLE at once). */
static inline int mutex_try_first(const pthread_mutex_t *m)
{
	return likely(lock_slow_paths) && !(m->__data.__kind & 16);   /* glibc: robust */
}

/* One body for the three blocking variants: `call` is the real call,
 * `tracked` the same through lock_wait.h. Holding nothing, an acquisition
 * is the real call and the push. */
#define MUTEX_BLOCKING(call, tracked)                                            \
	struct thread_state *ts = thread_state();                                \
	if (unlikely(ts->in_tracer | ts->in_urcu))                               \
		return call;                                                     \
	uintptr_t ip = CALLER_IP();                                              \
	uint32_t class_id = 0;                                                   \
	if (unlikely(acquire_checks_needed(ts))) {                               \
		struct held_lock *again = recursive_relock(ts, m);               \
		if (unlikely(again != 0)) {                                      \
			int ret = call;                                          \
			if (ret == 0)                                            \
				add_reference(ts, again);                        \
			return ret;                                              \
		}                                                                \
		class_id = lock_before_blocking(ts, m, HELD_MUTEX, ip, mutex_relock_would_block(m)); \
	}                                                                        \
	int ret = tracked;                                                       \
	if (mutex_taken(ret))                                                    \
		lock_acquired(ts, m, HELD_MUTEX, ip, class_id, 0);               \
	return ret

/* pthread_mutex_lock(), in three parts: the fast path holds nothing and
 * finds the lock free (the real trylock, when the hang checks or lock_stat
 * want one, else the real lock) and pushes the entry; the checks and the
 * wait for a taken lock are out of line, so the fast path keeps a small
 * frame. */
static __attribute__((noinline)) int mutex_lock_contended(pthread_mutex_t *m, uintptr_t ip, uint32_t class_id)
{
	struct thread_state *ts = thread_state();
	int ret = LOCK_CONTENDED_CALL(ts, m, HELD_MUTEX, ip, 0, REAL(pthread_mutex_timedlock)(m, &deadline_),
				      ETIMEDOUT, REAL(pthread_mutex_lock)(m));
	if (mutex_taken(ret))
		lock_acquired(ts, m, HELD_MUTEX, ip, class_id, 0);
	return ret;
}

static __attribute__((noinline)) int mutex_lock_checked(pthread_mutex_t *m, uintptr_t ip, struct acquire_miss miss)
{
	struct thread_state *ts = thread_state();
	if (ts->depth)
		acquire_prefetch(ts, m, HELD_MUTEX);
	struct held_lock *again = recursive_relock(ts, m);
	if (unlikely(again != 0)) {
		int ret = REAL(pthread_mutex_lock)(m);
		if (ret == 0)
			add_reference(ts, again);
		return ret;
	}
	int relock_blocks = mutex_relock_would_block(m);
	if (!relock_blocks)
		miss.key = 0;   /* probed as a mutex that blocks when relocked */
	int ret;
	if (likely(!lock_slow_hooks) && mutex_try_first(m)) {
		/* Tried first: a lock taken at once cannot hang, so the checks
		 * may follow the real call (the held entries are still those
		 * before it, and a report says the same), and the lock's own
		 * miss overlaps the lookups prefetched above. Taken or not, the
		 * checks come before the entry is pushed or the thread waits. */
		ret = REAL(pthread_mutex_trylock)(m);
		uint32_t class_id = lock_before_blocking_after(ts, m, HELD_MUTEX, ip, relock_blocks, &miss);
		if (unlikely(ret == EBUSY))
			return mutex_lock_contended(m, ip, class_id);
		if (likely(mutex_taken(ret)))
			lock_acquired(ts, m, HELD_MUTEX, ip, class_id, 0);
		return ret;
	}
	uint32_t class_id = lock_before_blocking_after(ts, m, HELD_MUTEX, ip, relock_blocks, &miss);
	if (mutex_try_first(m)) {
		ret = REAL(pthread_mutex_trylock)(m);
		if (unlikely(ret == EBUSY))
			return mutex_lock_contended(m, ip, class_id);
	} else {
		ret = REAL(pthread_mutex_lock)(m);
	}
	if (likely(mutex_taken(ret)))
		lock_acquired(ts, m, HELD_MUTEX, ip, class_id, 0);
	return ret;
}

static int mutex_lock_on_one(pthread_mutex_t *m, uintptr_t ip, struct acquire_miss miss, const void *frame);

/* pthread_mutex_lock() past the tracer's own calls. */
static inline __attribute__((always_inline)) int mutex_lock_tracked(struct thread_state *ts, pthread_mutex_t *m,
								    uintptr_t ip)
{
	uint32_t class_id;
	struct acquire_miss miss;
	/* The cache is asked for a mutex that blocks when relocked (the
	 * default type), before the mutex itself is read: a mutex of many is
	 * then loaded while the checked path works. A recursive or
	 * error-checking one goes to the checked path, which counts a
	 * recursive relock and asks the cache with the type. A miss with one
	 * mutex held goes to mutex_lock_on_one(). */
	if (unlikely(!ACQUIRE_FAST(ts, m, acquire_how(HELD_MUTEX, 1), &class_id, mutex_relock_would_block(m), &miss)))
		return miss.key && ts->nr_locks == 1 && ts->depth == 1
			? mutex_lock_on_one(m, ip, miss, __builtin_frame_address(0))
			: mutex_lock_checked(m, ip, miss);
	int ret;
	if (mutex_try_first(m)) {   /* hang checks on: the default */
		ret = REAL(pthread_mutex_trylock)(m);
		if (unlikely(ret == EBUSY))
			return mutex_lock_contended(m, ip, class_id);
	} else {
		ret = REAL(pthread_mutex_lock)(m);
	}
	if (likely(mutex_taken(ret)))
		lock_acquired_first(ts, m, HELD_MUTEX, ip, class_id, 0);
	return ret;
}

/* A mutex taken on top of exactly one held mutex, nothing unusual going
 * on (liburcu may be loaded, signal handlers installed), that the
 * acquisition cache did not answer: the commonest nesting,
 * and with many locks a common miss (pairs of addresses rarely repeat).
 * Both classes come from the mutexes' own tags (mutex_class_tag.h), the
 * chain from this thread's last one or the validated set, and two
 * instances of one class are recorded as a pair: what
 * lock_before_blocking_slow() does for this case, without its generality.
 * Anything else (a chain never validated, a relock) goes the general way. */
static __attribute__((noinline)) int mutex_lock_on_one(pthread_mutex_t *m, uintptr_t ip, struct acquire_miss miss,
							const void *frame)
{
	struct thread_state *ts = thread_state();
	struct held_lock *h = &ts->held[0];
	/* The pair's line of the pair cache, written by every thread (often
	 * last by another core): asked for now, it arrives while the tags
	 * and the real lock are worked on (-4 ns of ~70 per many_locks pair). */
	__builtin_prefetch(instance_pair_bucket(h->lock, m), 1);
	/* miss.usual: the wrapper found nothing unusual (acquire_unusual()).
	 * Else liburcu loaded is fine outside the read sides no wrapper sees
	 * (they would be in the chain), and a signal handler installed (the
	 * usage is recorded below); anything else is not. */
	if (unlikely(!miss.usual) &&
	    (acquire_has_work(ts) || implicit_readers(ts)))
		return mutex_lock_checked(m, ip, miss);
	if (unlikely(!lock_fast_paths || !mutex_try_first(m) || !lock_graph_enabled || h->kind != HELD_MUTEX || h->lock == m ||
		     !mutex_relock_would_block(m) || lock_graph_watching))
		return mutex_lock_checked(m, ip, miss);
	/* Class 0: a lock not followed (made on its maker's stack), nothing
	 * to validate (as in lock_graph_acquire_instance()). */
	uint32_t gen_new, gen_held;
	uint32_t class_new = mutex_class_and_generation(m, ip, &gen_new);
	uint32_t class_held = mutex_class_and_generation(h->lock, h->acquire_ip, &gen_held);
	uint32_t held_id = h->class_id ? h->class_id : class_held;
	uint64_t chain_classes = (uint64_t)held_id << 33 | (uint64_t)held_is_trylock(h) << 32 | class_new;
	if (class_new && chain_classes != ts->on_one_validated) {
		uint64_t chain = chain_key_end(chain_key_add_held(chain_key_begin(0, 0, ts->urcu_worker), h, held_id),
					       class_new, ACQUIRE_LOCK);
		if (unlikely(!chain_is_validated(chain)))
			return mutex_lock_checked(m, ip, miss);
		ts->on_one_validated = chain_classes;
	}
	h->class_id = held_id;
	/* As lock_before_blocking_slow() does, before the wait (a chain
	 * validated adds no dependency: the usage alone is new). */
	if (unlikely(signal_usage_tracked))
		signal_usage_acquire(ts, m, class_new, HELD_MUTEX, 0, ip);
	int ret = REAL(pthread_mutex_trylock)(m);
	/* Two instances of one class are checked every time (never cached:
	 * the pair cache keeps the newest pairs). */
	if (held_id != class_new || !class_new)
		acquire_cache_fill(ts, miss.key, miss.epoch, class_new);
	else {
		struct instance_pair_probe probe;
		uint64_t other_where;
		enum instance_pair_seen seen = instance_pairs_probe(h->lock, gen_held, m, gen_new, &probe, &other_where);
		if (likely(seen == PAIR_NEW))
			instance_pairs_insert(&probe, seen, instance_pair_capture(frame, ip));
		else if (unlikely(seen == PAIR_INVERTED))
			lock_graph_report_instance_inversion(ts, h, gen_held, m, gen_new, class_new, ip, &probe,
							     other_where, frame, &lock_order_reports);
	}
	if (unlikely(ret == EBUSY))
		return mutex_lock_contended(m, ip, class_new);
	if (likely(mutex_taken(ret)))
		lock_acquired_first(ts, m, HELD_MUTEX, ip, class_new, 0);
	return ret;
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
	struct thread_state *ts = thread_state();
	uintptr_t ip = CALLER_IP();
	if (unlikely(ts->in_tracer | ts->in_urcu))
		return REAL(pthread_mutex_lock)(m);
	return mutex_lock_tracked(ts, m, ip);
}
int pthread_mutex_timedlock(pthread_mutex_t *restrict m, const struct timespec *restrict abstime)
{
	MUTEX_BLOCKING(REAL(pthread_mutex_timedlock)(m, abstime),
		       LOCK_TIMED_CALL(ts, m, ip, 0,
				       mutex_try_first(m) ? REAL(pthread_mutex_trylock)(m)
							  : REAL(pthread_mutex_timedlock)(m, abstime),
				       EBUSY, REAL(pthread_mutex_timedlock)(m, abstime)));
}

int pthread_mutex_clocklock(pthread_mutex_t *restrict m, clockid_t clock,
			    const struct timespec *restrict abstime)
{
	MUTEX_BLOCKING(REAL(pthread_mutex_clocklock)(m, clock, abstime),
		       LOCK_TIMED_CALL(ts, m, ip, 0,
				       mutex_try_first(m) && clock_supported(clock)
					       ? REAL(pthread_mutex_trylock)(m)
					       : REAL(pthread_mutex_clocklock)(m, clock, abstime),
				       EBUSY, REAL(pthread_mutex_clocklock)(m, clock, abstime)));
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
	struct thread_state *ts = thread_state();
	if (unlikely(ts->in_tracer | ts->in_urcu))
		return REAL(pthread_mutex_trylock)(m);
	struct held_lock *again = recursive_relock(ts, m);
	int ret = REAL(pthread_mutex_trylock)(m);
	if (unlikely(again != 0)) {
		if (ret == 0)
			add_reference(ts, again);
	} else if (mutex_taken(ret)) {
		lock_acquired_by_trylock(ts, m, HELD_MUTEX, CALLER_IP(), 0);
	}
	return ret;
}

/* The release that is not the fast path's: in the tracer, perturb or lock_stat on, or
 * not the innermost entry taken once. */
static __attribute__((noinline)) int mutex_unlock_slow(pthread_mutex_t *m, uintptr_t ip)
{
	struct thread_state *ts = thread_state();
	if (unlikely(ts->in_tracer | ts->in_urcu))
		return REAL(pthread_mutex_unlock)(m);
	lock_released(ts, m, KIND_BIT(HELD_MUTEX), ip, "pthread_mutex_t");
	int ret = REAL(pthread_mutex_unlock)(m);
	perturb_point(ts);
	return ret;
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
	struct thread_state *ts = thread_state();
	/* Only tail calls here (the pointer not yet resolved goes the slow
	 * way too), so nothing is kept across a call and no register saved. */
	int (*real)(pthread_mutex_t *) = __atomic_load_n(&real_pthread_mutex_unlock, __ATOMIC_RELAXED);
	if (likely(real != NULL) && likely(!(ts->in_tracer | ts->in_urcu | lock_slow_hooks)) &&
	    likely(lock_release_innermost(ts, m, KIND_BIT(HELD_MUTEX))))
		return real(m);
	return mutex_unlock_slow(m, CALLER_IP());
}

int pthread_mutex_init(pthread_mutex_t *restrict m, const pthread_mutexattr_t *restrict attr)
{
	int ret = REAL(pthread_mutex_init)(m, attr);
	lock_initialized(m, ret, CALLER_IP());
	mutex_class_tag_initialized(m, ret);
	return ret;
}

int pthread_mutex_destroy(pthread_mutex_t *m)
{
	struct thread_state *ts = thread_state();
	if (unlikely(ts->in_tracer | ts->in_urcu))
		return REAL(pthread_mutex_destroy)(m);
	int i = lock_before_destroy(ts, m, KIND_BIT(HELD_MUTEX), sizeof(*m), CALLER_IP());
	int ret = REAL(pthread_mutex_destroy)(m);
	lock_after_destroy(ts, m, i, ret);
	return ret;
}

/* A spinlock has no timed acquisition: spin on the trylock, reading the
 * clock now and then, until the deadline. */
static int spin_lock_until(pthread_spinlock_t *s, const struct timespec *deadline)
{
	for (unsigned spins = 1;; spins++) {
		if (REAL(pthread_spin_trylock)(s) == 0)
			return 0;
		__builtin_ia32_pause();
		if (spins % 4096 == 0) {
			struct timespec now;
			clock_gettime(CLOCK_REALTIME, &now);
			if (now.tv_sec > deadline->tv_sec ||
			    (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec))
				return ETIMEDOUT;
		}
	}
}

int pthread_spin_lock(pthread_spinlock_t *s)
{
	struct thread_state *ts = thread_state();
	if (unlikely(ts->in_tracer | ts->in_urcu))
		return REAL(pthread_spin_lock)(s);
	uintptr_t ip = CALLER_IP();
	uint32_t class_id = unlikely(acquire_checks_needed(ts)) ? lock_before_blocking(ts, (const void *)s, HELD_SPIN, ip, 1) : 0;
	int ret = LOCK_BLOCKING_CALL(ts, (const void *)s, HELD_SPIN, ip, 0, REAL(pthread_spin_trylock)(s), EBUSY,
				     spin_lock_until(s, &deadline_), ETIMEDOUT, REAL(pthread_spin_lock)(s));
	if (likely(ret == 0))
		lock_acquired(ts, (const void *)s, HELD_SPIN, ip, class_id, 0);
	return ret;
}

int pthread_spin_trylock(pthread_spinlock_t *s)
{
	struct thread_state *ts = thread_state();
	if (unlikely(ts->in_tracer | ts->in_urcu))
		return REAL(pthread_spin_trylock)(s);
	int ret = REAL(pthread_spin_trylock)(s);
	if (ret == 0)
		lock_acquired_by_trylock(ts, (const void *)s, HELD_SPIN, CALLER_IP(), 0);
	return ret;
}

int pthread_spin_unlock(pthread_spinlock_t *s)
{
	struct thread_state *ts = thread_state();
	if (unlikely(ts->in_tracer | ts->in_urcu))
		return REAL(pthread_spin_unlock)(s);
	lock_released(ts, (const void *)s, KIND_BIT(HELD_SPIN), CALLER_IP(), "pthread_spinlock_t");
	int ret = REAL(pthread_spin_unlock)(s);
	perturb_point(ts);
	return ret;
}

int pthread_spin_init(pthread_spinlock_t *s, int pshared)
{
	int ret = REAL(pthread_spin_init)(s, pshared);
	lock_initialized((const void *)s, ret, CALLER_IP());
	return ret;
}

int pthread_spin_destroy(pthread_spinlock_t *s)
{
	struct thread_state *ts = thread_state();
	if (unlikely(ts->in_tracer | ts->in_urcu))
		return REAL(pthread_spin_destroy)(s);
	int i = lock_before_destroy(ts, (const void *)s, KIND_BIT(HELD_SPIN), sizeof(*s), CALLER_IP());
	int ret = REAL(pthread_spin_destroy)(s);
	lock_after_destroy(ts, (const void *)s, i, ret);
	return ret;
}
